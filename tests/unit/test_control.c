/* tests/unit/test_control.c: the blue/green ConfigMap data -> gp_control_t
 * (docs/DESIGN.md, The control map). Every valid shape, every invalid one with its exact
 * error ("<key>: <reason>"), and gp_control_same_transition.
 * Uses gate/ only.
 *
 * Tests in the suite "disagreement" state a reading of the protocol that the
 * code does not follow (docs/DESIGN.md, Decisions); they are skipped unless compiled with
 * -DGP_TEST_DISAGREEMENTS=1. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/control.h"

#ifndef GP_TEST_DISAGREEMENTS
#define GP_TEST_DISAGREEMENTS 0
#endif

#define NONE  GP_TS_NONE
#define MAXKV 12

typedef struct {
        const char *row;
        gp_kv_t kv[MAXKV]; /* ends at the first NULL key */
} doc_t;

static size_t count(const gp_kv_t *kv) {
        size_t n = 0;
        while (n < MAXKV && kv[n].key)
                n++;
        return n;
}

/* The three required keys, then anything else. */
#define REQ(a, s, f)                                                                          \
        {"active-deployment-type", a}, {"stage", s}, {                                        \
                "is-first-deployment", f                                                      \
        }

/* ---- valid documents ------------------------------------------------- */

typedef struct {
        doc_t d;
        gp_control_t want;
} valid_t;

static gp_control_t W(gp_colour_t a, gp_stage_t s, bool first, int64_t delay,
                      gp_wm_stage_t wms, int64_t toggle, int64_t req, int64_t align) {
        return (gp_control_t){.active = a,
                              .stage = s,
                              .delay_ms = delay,
                              .is_first = first,
                              .wm_stage = wms,
                              .toggle = toggle,
                              .req_cutoff = req,
                              .req_align_ms = align};
}

static void check_valid(size_t i, const valid_t *v) {
        gp_control_t got;
        memset(&got, 0x5a, sizeof(got));
        char err[256] = "untouched";
        int rc = gp_control_parse(&got, v->d.kv, count(v->d.kv), err, sizeof(err));
        cr_assert_eq(rc, 0, "row %zu '%s': refused: %s", i, v->d.row, err);
        const gp_control_t *w = &v->want;
        cr_assert_eq(got.active, w->active, "row %zu '%s': active", i, v->d.row);
        cr_assert_eq(got.stage, w->stage, "row %zu '%s': stage %s", i, v->d.row,
                     gp_stage_name(got.stage));
        cr_assert_eq(got.delay_ms, w->delay_ms, "row %zu '%s': delay %" PRId64, i, v->d.row,
                     got.delay_ms);
        cr_assert_eq(got.is_first, w->is_first, "row %zu '%s': is_first", i, v->d.row);
        cr_assert_eq(got.wm_stage, w->wm_stage, "row %zu '%s': wm_stage %d", i, v->d.row,
                     (int)got.wm_stage);
        cr_assert_eq(got.toggle, w->toggle, "row %zu '%s': toggle %" PRId64, i, v->d.row,
                     got.toggle);
        cr_assert_eq(got.req_cutoff, w->req_cutoff, "row %zu '%s': req_cutoff %" PRId64, i,
                     v->d.row, got.req_cutoff);
        cr_assert_eq(got.req_align_ms, w->req_align_ms, "row %zu '%s': req_align %" PRId64, i,
                     v->d.row, got.req_align_ms);
}

#define B GP_BLUE
#define G GP_GREEN

Test(control, valid_documents) {
        const valid_t rows[] = {
                {{"minimal", {REQ("BLUE", "RUNNING", "true")}},
                 W(B, GP_STAGE_RUNNING, true, 0, GP_WMS_NONE, NONE, NONE, 0)},
                {{"operator: rolling to green",
                  {REQ("GREEN", "INITIALIZING", "false"),
                   {"deployment-deletion-delay-ms", "5000"}}},
                 W(G, GP_STAGE_INITIALIZING, false, 5000, GP_WMS_NONE, NONE, NONE, 0)},
                {{"transitioning, waiting for the watermark",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"deployment-deletion-delay-ms", "0"},
                   {"watermark-stage", "WAITING_FOR_WATERMARK"}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_WAITING, NONE, NONE, 0)},
                {{"watermark set",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "1700000000000"}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_SET, 1700000000000, NONE, 0)},
                {{"clear to teardown",
                  {REQ("GREEN", "CLEAR_TO_TEARDOWN", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "0"}}},
                 W(G, GP_STAGE_CLEAR_TO_TEARDOWN, false, 0, GP_WMS_SET, 0, NONE, 0)},
                {{"abort", {REQ("BLUE", "FAILING", "true")}},
                 W(B, GP_STAGE_FAILING, true, 0, GP_WMS_NONE, NONE, NONE, 0)},
                {{"negative toggle",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "-5"}}},
                 W(B, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_SET, -5, NONE, 0)},
                {{"toggle min+1",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "-9223372036854775807"}}},
                 W(B, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_SET, INT64_MIN + 1, NONE, 0)},
                {{"toggle max, delay max",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"deployment-deletion-delay-ms", "9223372036854775807"},
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "9223372036854775807"}}},
                 W(B, GP_STAGE_TRANSITIONING, false, INT64_MAX, GP_WMS_SET, INT64_MAX, NONE,
                   0)},
                {{"toggle without watermark-stage",
                  {REQ("GREEN", "TRANSITIONING", "false"), {"watermark-toggle-value", "42"}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_NONE, 42, NONE, 0)},
                {{"empty watermark-stage and toggle are absent",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"watermark-stage", ""},
                   {"watermark-toggle-value", ""}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_NONE, NONE, NONE, 0)},
                {{"request keys",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.cutoff", "1700000060000"},
                   {"gate-proxy.request.align-ms", "60000"}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_NONE, NONE, 1700000060000,
                   60000)},
                {{"request: negative cutoff, align 1",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.cutoff", "-1"},
                   {"gate-proxy.request.align-ms", "1"}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_NONE, NONE, -1, 1)},
                {{"empty request keys are absent",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.cutoff", ""},
                   {"gate-proxy.request.align-ms", ""}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_NONE, NONE, NONE, 0)},
                {{"unknown keys ignored",
                  {{"gate-proxy.phase", "garbage"},
                   {"gate-proxy.watermark", "not a number"},
                   {"gate-proxy.last-error", "deployment-deletion-delay-ms: x"},
                   REQ("BLUE", "RUNNING", "false"),
                   {"Stage", "NONSENSE"},
                   {"active-deployment-type ", "PURPLE"},
                   {"", ""},
                   {"some-other-operator-key", "{\"json\": true}"}}},
                 W(B, GP_STAGE_RUNNING, false, 0, GP_WMS_NONE, NONE, NONE, 0)},
                {{"keys in any order",
                  {{"watermark-toggle-value", "7"},
                   {"is-first-deployment", "false"},
                   {"watermark-stage", "WATERMARK_SET"},
                   {"stage", "TRANSITIONING"},
                   {"active-deployment-type", "GREEN"}}},
                 W(G, GP_STAGE_TRANSITIONING, false, 0, GP_WMS_SET, 7, NONE, 0)},
                {{"a repeated key: the last wins",
                  {REQ("BLUE", "RUNNING", "true"), {"active-deployment-type", "GREEN"}}},
                 W(G, GP_STAGE_RUNNING, true, 0, GP_WMS_NONE, NONE, NONE, 0)},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                check_valid(i, &rows[i]);
}

Test(control, every_stage_name) {
        static const char *const names[] = {"INITIALIZING", "TRANSITIONING",
                                            "CLEAR_TO_TEARDOWN", "RUNNING", "FAILING"};
        for (int s = 0; s <= GP_STAGE_FAILING; s++) {
                gp_kv_t kv[] = {REQ("GREEN", names[s], "false")};
                gp_control_t c;
                char err[128];
                cr_assert_eq(gp_control_parse(&c, kv, 3, err, sizeof(err)), 0, "%s: %s",
                             names[s], err);
                cr_assert_eq(c.stage, (gp_stage_t)s, "%s", names[s]);
                cr_assert_str_eq(gp_stage_name((gp_stage_t)s), names[s], "name of %d", s);
        }
        cr_assert_str_eq(gp_stage_name((gp_stage_t)99), "?", "invalid stage name");
        cr_assert_str_eq(gp_wm_stage_name(GP_WMS_WAITING), "WAITING_FOR_WATERMARK", "wms");
        cr_assert_str_eq(gp_wm_stage_name(GP_WMS_SET), "WATERMARK_SET", "wms");
        cr_assert_str_eq(gp_wm_stage_name(GP_WMS_NONE), "", "wms");
}

/* ---- invalid documents: exact errors --------------------------------- */

typedef struct {
        doc_t d;
        const char *err;
} invalid_t;

#define STAGES "INITIALIZING, TRANSITIONING, CLEAR_TO_TEARDOWN, RUNNING, FAILING"

Test(control, invalid_documents) {
        const invalid_t rows[] = {
                {{"empty document", {{0}}},
                 "active-deployment-type: missing (expected BLUE or GREEN)"},
                {{"missing active", {{"stage", "RUNNING"}, {"is-first-deployment", "true"}}},
                 "active-deployment-type: missing (expected BLUE or GREEN)"},
                {{"missing active and stage", {{"is-first-deployment", "true"}}},
                 "active-deployment-type: missing (expected BLUE or GREEN)"},
                {{"lower case colour", {REQ("green", "RUNNING", "true")}},
                 "active-deployment-type: 'green' is not BLUE or GREEN"},
                {{"lower case blue", {REQ("blue", "RUNNING", "true")}},
                 "active-deployment-type: 'blue' is not BLUE or GREEN"},
                {{"mixed case", {REQ("Green", "RUNNING", "true")}},
                 "active-deployment-type: 'Green' is not BLUE or GREEN"},
                {{"empty colour", {REQ("", "RUNNING", "true")}},
                 "active-deployment-type: '' is not BLUE or GREEN"},
                {{"colour with a space", {REQ("BLUE ", "RUNNING", "true")}},
                 "active-deployment-type: 'BLUE ' is not BLUE or GREEN"},
                {{"unknown colour", {REQ("RED", "RUNNING", "true")}},
                 "active-deployment-type: 'RED' is not BLUE or GREEN"},
                {{"missing stage",
                  {{"active-deployment-type", "BLUE"}, {"is-first-deployment", "true"}}},
                 "stage: missing"},
                {{"unknown stage", {REQ("BLUE", "DEPLOYING", "true")}},
                 "stage: 'DEPLOYING' is not one of " STAGES},
                {{"lower case stage", {REQ("BLUE", "running", "true")}},
                 "stage: 'running' is not one of " STAGES},
                {{"empty stage", {REQ("BLUE", "", "true")}},
                 "stage: '' is not one of " STAGES},
                {{"stage with a newline", {REQ("BLUE", "RUNNING\n", "true")}},
                 "stage: 'RUNNING\n' is not one of " STAGES},
                {{"missing is-first",
                  {{"active-deployment-type", "BLUE"}, {"stage", "RUNNING"}}},
                 "is-first-deployment: missing (expected true or false)"},
                {{"is-first TRUE", {REQ("BLUE", "RUNNING", "TRUE")}},
                 "is-first-deployment: 'TRUE' is not true or false"},
                {{"is-first 1", {REQ("BLUE", "RUNNING", "1")}},
                 "is-first-deployment: '1' is not true or false"},
                {{"is-first empty", {REQ("BLUE", "RUNNING", "")}},
                 "is-first-deployment: '' is not true or false"},
                {{"delay not a number",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", "soon"}}},
                 "deployment-deletion-delay-ms: 'soon' is not an integer"},
                {{"delay empty",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", ""}}},
                 "deployment-deletion-delay-ms: '' is not an integer"},
                {{"delay fraction",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", "1.5"}}},
                 "deployment-deletion-delay-ms: '1.5' is not an integer"},
                {{"delay with a plus",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", "+5"}}},
                 "deployment-deletion-delay-ms: '+5' is not an integer"},
                {{"delay with a space",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", " 5"}}},
                 "deployment-deletion-delay-ms: ' 5' is not an integer"},
                {{"delay leading zero",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", "05"}}},
                 "deployment-deletion-delay-ms: '05' is not an integer"},
                {{"delay overflow",
                  {REQ("BLUE", "RUNNING", "true"),
                   {"deployment-deletion-delay-ms", "9223372036854775808"}}},
                 "deployment-deletion-delay-ms: '9223372036854775808' is not an integer"},
                {{"delay negative",
                  {REQ("BLUE", "RUNNING", "true"), {"deployment-deletion-delay-ms", "-1"}}},
                 "deployment-deletion-delay-ms: '-1' is out of range"},
                {{"toggle not a number",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "noon"}}},
                 "watermark-toggle-value: 'noon' is not an integer"},
                {{"toggle RFC 3339",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "2026-01-01T00:00:00Z"}}},
                 "watermark-toggle-value: '2026-01-01T00:00:00Z' is not an integer"},
                {{"toggle not a number, no watermark-stage",
                  {REQ("BLUE", "TRANSITIONING", "false"), {"watermark-toggle-value", "x"}}},
                 "watermark-toggle-value: 'x' is not an integer"},
                {{"toggle is the 'unset' value",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", "-9223372036854775808"}}},
                 "watermark-toggle-value: '-9223372036854775808' is out of range"},
                {{"WATERMARK_SET without toggle",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"}}},
                 "watermark-toggle-value: missing while watermark-stage is WATERMARK_SET"},
                {{"WATERMARK_SET with an empty toggle",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_SET"},
                   {"watermark-toggle-value", ""}}},
                 "watermark-toggle-value: missing while watermark-stage is WATERMARK_SET"},
                {{"bad watermark-stage",
                  {REQ("BLUE", "TRANSITIONING", "false"),
                   {"watermark-stage", "WATERMARK_set"}}},
                 "watermark-stage: 'WATERMARK_set' is not WAITING_FOR_WATERMARK or "
                 "WATERMARK_SET"},
                {{"watermark-stage from FLIP-504 drafts",
                  {REQ("BLUE", "TRANSITIONING", "false"), {"watermark-stage", "DONE"}}},
                 "watermark-stage: 'DONE' is not WAITING_FOR_WATERMARK or WATERMARK_SET"},
                {{"request cutoff not a number",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.cutoff", "soon"}}},
                 "gate-proxy.request.cutoff: 'soon' is not an integer"},
                {{"request cutoff unset value",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.cutoff", "-9223372036854775808"}}},
                 "gate-proxy.request.cutoff: '-9223372036854775808' is out of range"},
                {{"request align 0",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.align-ms", "0"}}},
                 "gate-proxy.request.align-ms: '0' is out of range"},
                {{"request align negative",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.align-ms", "-60000"}}},
                 "gate-proxy.request.align-ms: '-60000' is out of range"},
                {{"request align not a number",
                  {REQ("GREEN", "TRANSITIONING", "false"),
                   {"gate-proxy.request.align-ms", "1m"}}},
                 "gate-proxy.request.align-ms: '1m' is not an integer"},
                {{"a repeated key: the last (bad) one wins",
                  {REQ("BLUE", "RUNNING", "true"), {"stage", "running"}}},
                 "stage: 'running' is not one of " STAGES},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_control_t c, before;
                memset(&c, 0x5a, sizeof(c));
                before = c;
                char err[512];
                memset(err, 'X', sizeof(err));
                int rc = gp_control_parse(&c, rows[i].d.kv, count(rows[i].d.kv), err,
                                          sizeof(err));
                cr_assert_eq(rc, -1, "row %zu '%s': accepted", i, rows[i].d.row);
                cr_assert_str_eq(err, rows[i].err, "row %zu '%s': err", i, rows[i].d.row);
                cr_assert(memcmp(&c, &before, sizeof(c)) == 0,
                          "row %zu '%s': out written on error", i, rows[i].d.row);
        }
}

Test(control, small_error_buffer) {
        gp_kv_t kv[] = {REQ("purple", "RUNNING", "true")};
        gp_control_t c;
        char err[9];
        memset(err, 'X', sizeof(err));
        cr_assert_eq(gp_control_parse(&c, kv, 3, err, 8), -1, "accepted");
        cr_assert_str_eq(err, "active-", "truncated error");
        cr_assert_eq(err[8], 'X', "wrote past errlen");
        cr_assert_eq(gp_control_parse(&c, kv, 3, err, 1), -1, "accepted");
        cr_assert_eq(err[0], '\0', "errlen 1");
        cr_assert_eq(gp_control_parse(&c, kv, 3, NULL, 0), -1, "err NULL, errlen 0");
}

Test(control, long_value_in_error) {
        char big[1000];
        memset(big, 'Z', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        gp_kv_t kv[] = {REQ(big, "RUNNING", "true")};
        gp_control_t c;
        char err[2048];
        cr_assert_eq(gp_control_parse(&c, kv, 3, err, sizeof(err)), -1, "accepted");
        cr_assert(strncmp(err, "active-deployment-type: 'ZZZ", 28) == 0, "err '%.40s'", err);
        cr_assert(strlen(err) < 300, "a long value is cut in the error (%zu)", strlen(err));
        /* A '%' in a value is data, not a format. */
        gp_kv_t kv2[] = {REQ("%s%n%s", "RUNNING", "true")};
        cr_assert_eq(gp_control_parse(&c, kv2, 3, err, sizeof(err)), -1, "accepted");
        cr_assert_str_eq(err, "active-deployment-type: '%s%n%s' is not BLUE or GREEN", "err");
}

/* ---- gp_control_same_transition --------------------------------------- */

static gp_control_t C(gp_colour_t a, gp_stage_t s, bool first) {
        return (gp_control_t){.active = a,
                              .stage = s,
                              .is_first = first,
                              .toggle = NONE,
                              .req_cutoff = NONE};
}

Test(control, same_transition_table) {
        gp_control_t set5 = C(G, GP_STAGE_TRANSITIONING, false);
        set5.wm_stage = GP_WMS_SET;
        set5.toggle = 5;
        gp_control_t other_delay = C(G, GP_STAGE_TRANSITIONING, false);
        other_delay.delay_ms = 99;
        other_delay.req_cutoff = 1234;
        struct {
                const char *row;
                gp_control_t a, b;
                bool want;
        } rows[] = {
                {"identical", C(G, GP_STAGE_TRANSITIONING, false),
                 C(G, GP_STAGE_TRANSITIONING, false), 1},
                {"another colour", C(G, GP_STAGE_TRANSITIONING, false),
                 C(B, GP_STAGE_TRANSITIONING, false), 0},
                {"is-first flipped (abort)", C(G, GP_STAGE_TRANSITIONING, false),
                 C(G, GP_STAGE_TRANSITIONING, true), 0},
                {"abort to the other colour", C(G, GP_STAGE_TRANSITIONING, false),
                 C(B, GP_STAGE_FAILING, true), 0},
                {"failing, same colour", C(G, GP_STAGE_TRANSITIONING, false),
                 C(G, GP_STAGE_FAILING, false), 0},
                {"moved on to clear-to-teardown", C(G, GP_STAGE_TRANSITIONING, false),
                 C(G, GP_STAGE_CLEAR_TO_TEARDOWN, false), 0},
                {"moved on to running", C(G, GP_STAGE_TRANSITIONING, false),
                 C(G, GP_STAGE_RUNNING, false), 0},
                {"initializing -> transitioning", C(G, GP_STAGE_INITIALIZING, false),
                 C(G, GP_STAGE_TRANSITIONING, false), 0},
                {"clear-to-teardown -> running", C(G, GP_STAGE_CLEAR_TO_TEARDOWN, false),
                 C(G, GP_STAGE_RUNNING, false), 0},
                {"our own watermark keys are not the transition",
                 C(G, GP_STAGE_TRANSITIONING, false), set5, 1},
                {"delay and requests are not the transition",
                 C(G, GP_STAGE_TRANSITIONING, false), other_delay, 1},
                {"running, same", C(B, GP_STAGE_RUNNING, true), C(B, GP_STAGE_RUNNING, true),
                 1},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                cr_assert_eq(gp_control_same_transition(&rows[i].a, &rows[i].b), rows[i].want,
                             "row %zu '%s'", i, rows[i].row);
}

/* The operator rewrites the whole map each time it starts deploying a
 * child, so a map back at INITIALIZING after TRANSITIONING (or
 * after CLEAR_TO_TEARDOWN) is a new deployment, not the transition a write
 * was planned from. gp_control_same_transition only refuses stages that
 * moved forward, so a stale WATERMARK_SET / CLEAR_TO_TEARDOWN planned from
 * the old map would be written into the new one. */
Test(disagreement, stage_going_back_is_another_transition,
     .disabled = !GP_TEST_DISAGREEMENTS) {
        gp_control_t a = C(G, GP_STAGE_TRANSITIONING, false);
        gp_control_t b = C(G, GP_STAGE_INITIALIZING, false);
        cr_assert(!gp_control_same_transition(&a, &b),
                  "TRANSITIONING -> INITIALIZING is a new deployment");
        a.stage = GP_STAGE_CLEAR_TO_TEARDOWN;
        b.stage = GP_STAGE_TRANSITIONING;
        cr_assert(!gp_control_same_transition(&a, &b),
                  "CLEAR_TO_TEARDOWN -> TRANSITIONING is a new deployment");
}

/* gate-proxy.transition-id: "N" or "N ended", N >= 1; absent is 0. A
 * value of another form makes the map invalid (the last good one stays),
 * never a guess. */
Test(control, transition_id) {
        static const struct {
                const char *v;
                int rc;
                int64_t tid;
                bool ended;
        } rows[] = {
                {"1733150000123", 0, 1733150000123, false},
                {"1733150000123 ended", 0, 1733150000123, true},
                {"1", 0, 1, false},
                {"", 0, 0, false},
                {"0", -1, 0, false},
                {"-5", -1, 0, false},
                {"12 done", -1, 0, false},
                {"12  ended", -1, 0, false},
                {"12 ended ", -1, 0, false},
                {"x", -1, 0, false},
                {" 12", -1, 0, false},
                {"ended", -1, 0, false},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_kv_t kv[] = {REQ("GREEN", "TRANSITIONING", "false"),
                                {GP_KEY_TID, rows[i].v}};
                gp_control_t c;
                char err[256] = "";
                int rc = gp_control_parse(&c, kv, sizeof(kv) / sizeof(kv[0]), err, sizeof err);
                cr_assert_eq(rc, rows[i].rc, "'%s': rc %d (%s)", rows[i].v, rc, err);
                if (rc) {
                        cr_assert(strstr(err, GP_KEY_TID ": '"), "'%s': %s", rows[i].v, err);
                        continue;
                }
                cr_assert(c.tid == rows[i].tid && c.tid_ended == rows[i].ended,
                          "'%s': tid %" PRId64 " ended %d", rows[i].v, c.tid, c.tid_ended);
                cr_assert_eq(gp_control_tid(&c), rows[i].ended ? 0 : rows[i].tid, "'%s'",
                             rows[i].v);
        }
        /* Another id is another transition; an id is current only while
         * the map is open. */
        gp_control_t a = C(G, GP_STAGE_TRANSITIONING, false), b = a;
        a.tid = 5;
        b.tid = 6;
        cr_assert(!gp_control_same_transition(&a, &b));
        b.tid = 5;
        b.tid_ended = true;
        cr_assert(!gp_control_same_transition(&a, &b));
        b.tid_ended = false;
        cr_assert(gp_control_same_transition(&a, &b));
        a.stage = GP_STAGE_RUNNING;
        cr_assert_eq(gp_control_tid(&a), 0);
        a.stage = GP_STAGE_CLEAR_TO_TEARDOWN;
        cr_assert_eq(gp_control_tid(&a), 5);
        a.is_first = true;
        cr_assert_eq(gp_control_tid(&a), 0);
}
