/* Tests of the control-file backend (proxy/control/ctl_file.c, proxy/control/ctl.c):
 * change detection, last good state kept across bad documents, and the
 * compare-and-set write that is dropped when the transition moved on. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/control/ctl.h"

static char dir[64], path[128];

static void setup(void) {
        snprintf(dir, sizeof(dir), "/tmp/gp-ctl-test.XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/cm.json", dir);
}

static void teardown(void) {
        char p[160];
        unlink(path);
        snprintf(p, sizeof(p), "%s.lock", path);
        unlink(p);
        rmdir(dir);
}

static void put(const char *text) {
        char tmp[160];
        snprintf(tmp, sizeof(tmp), "%s.w", path);
        FILE *f = fopen(tmp, "w");
        fputs(text, f);
        fclose(f);
        rename(tmp, path); /* a new inode: always seen as a change */
}

#define DOC(rv, active, stage, first)                                                         \
        "{\"metadata\":{\"resourceVersion\":\"" rv "\"},\"data\":{"                           \
        "\"active-deployment-type\":\"" active "\",\"stage\":\"" stage "\","                  \
        "\"is-first-deployment\":\"" first "\"}}"

TestSuite(ctlfile, .init = setup, .fini = teardown);

Test(ctlfile, missing_file_says_how_to_create_it) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        cr_assert_eq(gp_ctl_poll(c, false), -1);
        cr_assert_null(gp_ctl_current(c));
        cr_assert(strstr(gp_ctl_error(c), "gate-proxy init"), "%s", gp_ctl_error(c));
        gp_ctl_destroy(c);
}

Test(ctlfile, keeps_last_good_state) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        put(DOC("1", "BLUE", "RUNNING", "true"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        cr_assert_eq(gp_ctl_poll(c, false), 0, "unchanged file: no re-read");
        cr_assert_eq(gp_ctl_current(c)->active, GP_BLUE);

        const char *bads[] = {"garbage", "", DOC("2", "green", "RUNNING", "true"),
                              DOC("3", "GREEN", "WARMING", "false"), "{\"data\":{"};
        for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
                put(bads[i]);
                cr_assert_eq(gp_ctl_poll(c, false), -1, "bad document %zu accepted", i);
                cr_assert_not_null(gp_ctl_current(c));
                cr_assert_eq(gp_ctl_current(c)->active, GP_BLUE, "state changed by %zu", i);
                cr_assert_eq(gp_ctl_current(c)->stage, GP_STAGE_RUNNING);
                cr_assert_neq(gp_ctl_error(c)[0], '\0');
        }
        put(DOC("4", "GREEN", "TRANSITIONING", "false"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        cr_assert_str_eq(gp_ctl_error(c), "");
        cr_assert_eq(gp_ctl_current(c)->active, GP_GREEN);
        unlink(path);
        cr_assert_eq(gp_ctl_poll(c, false), -1);
        cr_assert_eq(gp_ctl_current(c)->active, GP_GREEN, "deleted file keeps state");
        gp_ctl_destroy(c);
}

Test(ctlfile, writes_bump_resource_version) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        gp_err_t err;
        put(DOC("7", "GREEN", "TRANSITIONING", "false"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_kv_t kv[] = {{"watermark-stage", "WATERMARK_SET"},
                        {"watermark-toggle-value", "1000"}};
        gp_control_t base = *gp_ctl_current(c);
        cr_assert_eq(gp_ctl_patch(c, kv, 2, &base, &err), GP_OK, "%s", err.msg);
        cr_assert_str_eq(gp_cm_resource_version(gp_ctl_document(c)), "8");
        cr_assert_eq(gp_ctl_current(c)->toggle, 1000);
        gp_ctl_destroy(c);
}

Test(ctlfile, conflict_rereads_and_retries_same_transition) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        gp_err_t err;
        put(DOC("1", "GREEN", "TRANSITIONING", "false"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_control_t base = *gp_ctl_current(c);
        /* Another writer bumps the version without changing the transition. */
        gp_kv_t other[] = {{"gate-proxy.heartbeat", "x"}};
        cr_assert_eq(gp_ctlfile_update(path, NULL, other, 1, NULL, &err), GP_OK);
        gp_kv_t kv[] = {{"stage", "CLEAR_TO_TEARDOWN"}};
        cr_assert_eq(gp_ctl_conflicts(c), 0);
        cr_assert_eq(gp_ctl_patch(c, kv, 1, &base, &err), GP_OK, "%s", err.msg);
        cr_assert_eq(gp_ctl_conflicts(c), 1, "the conflict met on the way is counted");
        cr_assert_eq(gp_ctl_current(c)->stage, GP_STAGE_CLEAR_TO_TEARDOWN);
        cr_assert_str_eq(gp_cm_get(gp_ctl_document(c), "gate-proxy.heartbeat"), "x");
        gp_ctl_destroy(c);
}

Test(ctlfile, conflict_with_new_transition_drops_the_write) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        gp_err_t err;
        put(DOC("1", "GREEN", "TRANSITIONING", "false"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_control_t base = *gp_ctl_current(c);
        /* The operator aborts meanwhile. */
        gp_kv_t ab[] = {{"active-deployment-type", "BLUE"},
                        {"is-first-deployment", "true"},
                        {"stage", "FAILING"}};
        cr_assert_eq(gp_ctlfile_update(path, NULL, ab, 3, NULL, &err), GP_OK);
        gp_kv_t kv[] = {{"stage", "CLEAR_TO_TEARDOWN"}};
        cr_assert_eq(gp_ctl_patch(c, kv, 1, &base, &err), GP_ERR_DROPPED);
        gp_cm_t *now = gp_ctlfile_load(path, &err);
        cr_assert_str_eq(gp_cm_get(now, "stage"), "FAILING", "the abort must stand");
        gp_cm_destroy(now);
        gp_ctl_destroy(c);
}

Test(ctlfile, stale_expected_version_is_a_conflict) {
        gp_err_t err;
        put(DOC("5", "BLUE", "RUNNING", "true"));
        gp_kv_t kv[] = {{"stage", "FAILING"}};
        cr_assert_eq(gp_ctlfile_update(path, "4", kv, 1, NULL, &err), GP_ERR_CONFLICT);
        cr_assert_eq(gp_ctlfile_update(path, "5", kv, 1, NULL, &err), GP_OK);
        gp_cm_t *now = gp_ctlfile_load(path, &err);
        cr_assert_str_eq(gp_cm_resource_version(now), "6");
        gp_cm_destroy(now);
}

static char *slurp(void) {
        static char buf[4096];
        FILE *f = fopen(path, "r");
        if (!f)
                return NULL;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* A missing or unreadable map is never written: not by a status write, not
 * by a decision; the bytes stay as the other writer left them. */
Test(ctlfile, unreadable_map_is_not_written) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        char before[4096];
        gp_err_t err;
        const char *good = DOC("1", "GREEN", "TRANSITIONING", "false");
        put(good);
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_control_t base = *gp_ctl_current(c);
        char half[256];
        snprintf(half, sizeof(half), "%.*s", (int)strlen(good) / 2, good);
        const char *bads[] = {"garbage", "", half};
        gp_kv_t st[] = {{"gate-proxy.heartbeat", "x"}};
        gp_kv_t dec[] = {{"stage", "CLEAR_TO_TEARDOWN"}};
        for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
                put(bads[i]);
                cr_assert_eq(gp_ctl_poll(c, false), -1);
                snprintf(before, sizeof(before), "%s", slurp());
                cr_assert_eq(gp_ctl_patch(c, st, 1, NULL, &err), GP_ERR_INVALID,
                             "status written into bad document %zu", i);
                cr_assert_eq(gp_ctl_patch(c, dec, 1, &base, &err), GP_ERR_INVALID,
                             "decision written into bad document %zu", i);
                cr_assert_str_eq(slurp(), before, "bad document %zu changed", i);
                cr_assert_eq(gp_ctl_current(c)->stage, GP_STAGE_TRANSITIONING);
        }
        unlink(path);
        cr_assert_eq(gp_ctl_poll(c, false), -1);
        cr_assert_eq(gp_ctl_patch(c, st, 1, NULL, &err), GP_ERR_INVALID);
        cr_assert(strstr(err.msg, "not found"), "%s", err.msg);
        cr_assert_null(slurp(), "a deleted map was created again");
        gp_ctl_destroy(c);
}

/* A map that parses but holds a bad value takes status keys (so
 * gate-proxy.error can say why), compared on its own resourceVersion, and
 * keeps the bad value; a decision waits for a valid map. */
Test(ctlfile, status_goes_into_a_map_with_a_bad_value) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        gp_err_t err;
        put(DOC("1", "GREEN", "TRANSITIONING", "false"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_control_t base = *gp_ctl_current(c);
        put(DOC("2", "GREEN", "WARMING", "false"));
        cr_assert_eq(gp_ctl_poll(c, false), -1);
        gp_kv_t st[] = {{"gate-proxy.error", "bad stage"}};
        cr_assert_eq(gp_ctl_patch(c, st, 1, NULL, &err), GP_OK, "%s", err.msg);
        gp_kv_t dec[] = {{"stage", "CLEAR_TO_TEARDOWN"}};
        cr_assert_eq(gp_ctl_patch(c, dec, 1, &base, &err), GP_ERR_INVALID);
        gp_cm_t *now = gp_ctlfile_load(path, &err);
        cr_assert_str_eq(gp_cm_get(now, "stage"), "WARMING", "the bad value was replaced");
        cr_assert_str_eq(gp_cm_get(now, "gate-proxy.error"), "bad stage");
        cr_assert_str_eq(gp_cm_resource_version(now), "3");
        gp_cm_destroy(now);
        cr_assert_eq(gp_ctl_current(c)->stage, GP_STAGE_TRANSITIONING, "last good state kept");
        cr_assert_neq(gp_ctl_error(c)[0], '\0');
        gp_ctl_destroy(c);
}

#define DOC_T(rv, toggle)                                                                     \
        "{\"metadata\":{\"resourceVersion\":\"" rv "\"},\"data\":{"                           \
        "\"active-deployment-type\":\"GREEN\",\"stage\":\"TRANSITIONING\","                   \
        "\"is-first-deployment\":\"false\",\"watermark-stage\":\"WATERMARK_SET\","            \
        "\"watermark-toggle-value\":\"" toggle "\"}}"

static void assert_stored(const char *want) {
        gp_err_t err;
        gp_cm_t *now = gp_ctlfile_load(path, &err);
        cr_assert_not_null(now, "%s", err.msg);
        cr_assert_str_eq(gp_cm_get(now, "watermark-toggle-value"), want);
        gp_cm_destroy(now);
}

/* gate.membership=group: the cutoff is written by compare-and-set on "no
 * T stored"; a stored one, the same or another, is never written over,
 * also when it was stored between the read and the write. */
Test(ctlfile, cas_cutoff_never_writes_over_a_stored_cutoff) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        gp_err_t err;
        gp_ctl_cas_cutoff(c, true);
        gp_kv_t kv[] = {{"watermark-stage", "WATERMARK_SET"},
                        {"watermark-toggle-value", "7000"}};

        put(DOC_T("1", "5000"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_control_t base = *gp_ctl_current(c);
        cr_assert_eq(gp_ctl_patch(c, kv, 2, &base, &err), GP_ERR_DROPPED, "written over");
        cr_assert(strstr(err.msg, "5000"), "%s", err.msg);
        assert_stored("5000");

        /* No T stored: written. */
        put("{\"metadata\":{\"resourceVersion\":\"3\"},\"data\":{"
            "\"active-deployment-type\":\"GREEN\",\"stage\":\"TRANSITIONING\","
            "\"is-first-deployment\":\"false\",\"watermark-stage\":\"WAITING_FOR_WATERMARK\"}"
            "}");
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        base = *gp_ctl_current(c);
        cr_assert_eq(gp_ctl_patch(c, kv, 2, &base, &err), GP_OK, "%s", err.msg);
        assert_stored("7000");
        gp_kv_t kv2[] = {{"watermark-toggle-value", "9000"}};
        base = *gp_ctl_current(c);
        cr_assert_eq(gp_ctl_patch(c, kv2, 1, &base, &err), GP_ERR_DROPPED);
        assert_stored("7000");

        /* Stored by another writer between our read and our write: the
         * conditional write meets a moved version, the re-read sees the
         * T, nothing is written over. */
        put("{\"metadata\":{\"resourceVersion\":\"10\"},\"data\":{"
            "\"active-deployment-type\":\"GREEN\",\"stage\":\"TRANSITIONING\","
            "\"is-first-deployment\":\"false\",\"watermark-stage\":\"WAITING_FOR_WATERMARK\"}"
            "}");
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        base = *gp_ctl_current(c);
        gp_kv_t other[] = {{"watermark-stage", "WATERMARK_SET"},
                           {"watermark-toggle-value", "3000"}};
        cr_assert_eq(gp_ctlfile_update(path, NULL, other, 2, NULL, &err), GP_OK, "%s",
                     err.msg);
        cr_assert_eq(gp_ctl_patch(c, kv, 2, &base, &err), GP_ERR_DROPPED, "written over");
        cr_assert_geq(gp_ctl_conflicts(c), 1u, "the moved version was met");
        assert_stored("3000");

        /* Status keys still go in. */
        gp_kv_t st[] = {{"gate-proxy.heartbeat", "y"}};
        cr_assert_eq(gp_ctl_patch(c, st, 1, NULL, &err), GP_OK, "%s", err.msg);
        gp_ctl_destroy(c);
}

/* gate.membership=assign keeps writing the cutoff as before. */
Test(ctlfile, without_cas_cutoff_the_cutoff_is_written) {
        gp_ctl_t *c = gp_ctl_new_file(path);
        gp_err_t err;
        put(DOC_T("1", "5000"));
        cr_assert_eq(gp_ctl_poll(c, false), 1);
        gp_control_t base = *gp_ctl_current(c);
        gp_kv_t kv[] = {{"watermark-toggle-value", "7000"}};
        cr_assert_eq(gp_ctl_patch(c, kv, 1, &base, &err), GP_OK, "%s", err.msg);
        assert_stored("7000");
        gp_ctl_destroy(c);
}
