/* proxy/ops/handover.c: `gate-proxy handover`, the whole exact hand-over of a
 * Flink pipeline from one FlinkDeployment of the released Flink
 * Kubernetes Operator to another (docs/DESIGN.md, "The hand-over
 * command"). Its steps:
 *
 *   cutover  the proxy splits at T: records before T go to the old
 *            colour, records at or after T to the new one, where they wait
 *   clear    wait for CLEAR_TO_TEARDOWN: the old job has read all before T
 *   suspend  the old FlinkDeployment to state suspended, upgradeMode
 *            savepoint; wait for SUSPENDED, FINISHED and a new savepoint
 *   start    the new one (created suspended, never deployed) to state
 *            running from that savepoint; wait for STABLE and RUNNING
 *   finish   stage=RUNNING; delete the old FlinkDeployment
 *
 * The step is written to the map (gate-proxy.handover.*) before it is
 * taken, and every step can be taken again, so a command killed anywhere
 * and run again finishes the same hand-over with the same T and the same
 * savepoint. The operator's status is read with GETs every poll; nothing
 * here touches Kafka.
 *
 * Its options are proxy/cmd/handover.c's; the calls on the operator's
 * resources are k8s/flinkdep.h's, and this file decides on what they
 * answer, retries, waits and says why it stops; what proves the suspend's
 * savepoint, and the checkpoint asked of OLD, are proxy/ops/snapshots.c's. May use the rooms of
 * proxy/ below ops (never proxy/cmd/), k8s/ and gate/; cJSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "gate/control.h"
#include "gate/hoptime.h"
#include "gate/timeparse.h"
#include "k8s/client.h"
#include "k8s/flinkdep.h"
#include "k8s/manifest.h"
#include "os/clock.h"
#include "os/file.h"
#include "proxy/ops/handover.h"
#include "proxy/ops/handover_int.h"
#include "proxy/ops/progress.h"
#include "proxy/ops/verbs.h"
#include "proxy/control/ctl.h"
#include "proxy/base/log.h"
#include "proxy/loop/proxy.h"

#define HO_FROM          GP_KEY_HANDOVER "from"
#define HO_TO            GP_KEY_HANDOVER "to"
#define HO_STEP          GP_KEY_HANDOVER "step"
#define HO_COLOUR        GP_KEY_HANDOVER "colour" /* the new one */
#define HO_CUTOFF        GP_KEY_HANDOVER "cutoff"
#define HO_SAVEPOINT     GP_KEY_HANDOVER "savepoint"
#define HO_PREVIOUS      GP_KEY_HANDOVER "previous-savepoint"
#define HO_SUSPENDED_AT  GP_KEY_HANDOVER "suspended-at"
#define HO_RUNNING_AFTER GP_KEY_HANDOVER "new-job-running-after-ms"

#define POLL_MS         500
#define CLEAR_POLL_MS   100 /* the map, read while the proxy closes: CLEAR seen within 0.1 s */
#define GP_MANIFEST_MAX (1024 * 1024) /* --to-file */
#define API_GRACE_MS    30000         /* how long the API server may be away in a wait */
#define ATTEMPTS        5

int gp_ho_fail(const char *fmt, ...) {
        va_list ap;
        gp_progress_break();
        fputs("gate-proxy handover: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return 1;
}

/* ---- the map --------------------------------------------------------------- */

/* Writes handover keys (no precondition: only this command writes them),
 * retrying while the API server is away for up to API_GRACE_MS, as the
 * waits do. */
static int record(gp_ho_t *h, const gp_kv_t *kv, size_t n) {
        int64_t end = gp_mono_ms() + API_GRACE_MS;
        for (;;) {
                gp_err_t err;
                gp_errcode_t rc = gp_ctl_write(h->ctl, NULL, kv, n, &err);
                if (rc == GP_OK)
                        return 0;
                if (rc != GP_ERR_TRANSPORT || gp_mono_ms() > end)
                        return fail("recording the step in %s: %s%s", gp_ctl_describe(h->ctl),
                                    err.msg,
                                    rc == GP_ERR_TRANSPORT
                                            ? "; nothing is lost: run the same command again "
                                              "once the API server answers"
                                            : "");
                gp_progress_show(&h->pr, "the API server does not answer (%s); retrying",
                                 err.msg);
                gp_sleep_ms(1000);
        }
}

/* The map now; NULL (reason printed) when it cannot be read. */
static gp_cm_t *load_map(gp_ho_t *h) {
        int64_t end = gp_mono_ms() + API_GRACE_MS;
        for (;;) {
                gp_err_t err;
                gp_cm_t *cm = gp_ctl_load(h->ctl, &err);
                if (cm)
                        return cm;
                if (err.code != GP_ERR_TRANSPORT || gp_mono_ms() > end) {
                        fail("%s%s", err.msg,
                             err.code == GP_ERR_TRANSPORT
                                     ? "; nothing is lost: run the same command again once "
                                       "the API server answers"
                                     : "");
                        return NULL;
                }
                gp_progress_show(&h->pr, "the API server does not answer (%s); retrying",
                                 err.msg);
                gp_sleep_ms(1000);
        }
}

static const char *dash(const char *s) {
        return *s ? s : "-";
}

const char *gp_ho_cm_get(const gp_cm_t *cm, const char *key) {
        const char *v = gp_cm_get(cm, key);
        return v ? v : "";
}

/* The map's control; 0, or 1 with the reason printed. */
static int map_control(gp_ho_t *h, const gp_cm_t *cm, gp_control_t *c) {
        char why[600];
        size_t n;
        const gp_kv_t *kv = gp_cm_data(cm, &n);
        if (gp_control_parse(c, kv, n, why, sizeof(why)))
                return fail("%s: %s", gp_ctl_describe(h->ctl), why);
        return 0;
}

/* ---- FlinkDeployments ------------------------------------------------------ */

/* One request each is k8s/flinkdep.h's; here they are retried, decided on
 * and explained. */

/* GETs name, retrying while the API server is away for up to
 * API_GRACE_MS; prints why and returns NULL when it fails. */
static cJSON *fd_read(gp_ho_t *h, const char *name) {
        int64_t end = gp_mono_ms() + API_GRACE_MS;
        for (;;) {
                gp_err_t err;
                cJSON *fd = NULL;
                gp_errcode_t rc = gp_flinkdep_get(h->k, h->ns, name, &fd, &err);
                if (rc == GP_OK)
                        return fd;
                if (rc != GP_ERR_TRANSPORT || gp_mono_ms() > end) {
                        if (rc == GP_ERR_NOT_FOUND)
                                fail("FlinkDeployment %s/%s does not exist", h->ns, name);
                        else
                                fail("%s%s", err.msg,
                                     rc == GP_ERR_TRANSPORT
                                             ? "; nothing is lost: run the same command again "
                                               "once the API server answers"
                                             : "");
                        return NULL;
                }
                gp_progress_show(&h->pr, "the API server does not answer (%s); retrying",
                                 err.msg);
                gp_sleep_ms(1000);
        }
}

/* Sets spec.job fields of name (job taken) unless already (keep) holds
 * for the resource as it is: GETs, decides, patches with its
 * resourceVersion, and on a conflict reads and decides again. *gen gets
 * the generation of the spec to wait for. 0, or 1 with the reason
 * printed. */
static int fd_set_job(gp_ho_t *h, const char *name, cJSON *job,
                      int (*keep)(gp_ho_t *, const cJSON *), int64_t *gen) {
        for (int attempt = 0;; attempt++) {
                cJSON *fd = fd_read(h, name);
                gp_err_t err;
                if (!fd) {
                        cJSON_Delete(job);
                        return 1;
                }
                int k = keep(h, fd);
                if (k) {
                        *gen = gp_flinkdep_num(fd, "metadata", "generation", NULL);
                        cJSON_Delete(fd);
                        cJSON_Delete(job);
                        return k < 0;
                }
                char rv[64];
                snprintf(rv, sizeof(rv), "%s",
                         gp_flinkdep_str(fd, "metadata", "resourceVersion", NULL));
                cJSON_Delete(fd);
                gp_errcode_t rc = gp_flinkdep_patch_job(h->k, h->ns, name, rv,
                                                        cJSON_Duplicate(job, true), gen, &err);
                if (rc == GP_OK) {
                        cJSON_Delete(job);
                        return 0;
                }
                if ((rc == GP_ERR_CONFLICT || rc == GP_ERR_TRANSPORT) &&
                    attempt + 1 < ATTEMPTS) {
                        gp_sleep_ms(rc == GP_ERR_TRANSPORT ? 1000 : 100);
                        continue;
                }
                cJSON_Delete(job);
                return fail("%s%s", err.msg,
                            rc == GP_ERR_CONFLICT ? " (the resource kept changing)" : "");
        }
}

/* --to-file: creates NEW from a manifest, suspended, unless it exists. 0,
 * or 1 with the reason printed. */
static int apply_new(gp_ho_t *h, const char *file) {
        size_t len = 0;
        gp_err_t err;
        char *buf = gp_file_read(file, GP_MANIFEST_MAX, &len, &err);
        if (!buf)
                return errno == EFBIG ? fail("--to-file %s: larger than 1 MiB", file)
                                      : fail("--to-file %s", err.msg);
        cJSON *m = gp_k8s_manifest_parse(buf, len, &err);
        free(buf);
        if (!m)
                return fail("--to-file %s: %s", file, err.msg);
        const char *why = NULL, *name = gp_flinkdep_str(m, "metadata", "name", NULL),
                   *ns = gp_flinkdep_str(m, "metadata", "namespace", NULL);
        if (strcmp(gp_flinkdep_str(m, "kind", NULL), "FlinkDeployment") ||
            strcmp(gp_flinkdep_str(m, "apiVersion", NULL), "flink.apache.org/v1beta1"))
                why = "not a FlinkDeployment (apiVersion flink.apache.org/v1beta1)";
        else if (strcmp(name, h->to))
                why = "its metadata.name is not the --to name";
        else if (*ns && strcmp(ns, h->ns))
                why = "its metadata.namespace is not the namespace of the map";
        else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
                         cJSON_GetObjectItemCaseSensitive(m, "spec"), "job")))
                why = "it has no spec.job";
        if (why) {
                cJSON_Delete(m);
                return fail("--to-file %s: %s", file, why);
        }
        cJSON *job = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(m, "spec"), "job");
        bool was_running = !strcmp(gp_flinkdep_str(job, "state", NULL), "running");
        cJSON_DeleteItemFromObjectCaseSensitive(job, "state");
        cJSON_AddStringToObject(job, "state", "suspended");
        gp_errcode_t rc = gp_flinkdep_create(h->k, h->ns, m, &err);
        cJSON_Delete(m);
        if (rc == GP_ERR_CONFLICT) {
                gp_progress_note(&h->pr, "%s/%s exists already: taking it as it is", h->ns,
                                 h->to);
                return 0;
        }
        if (rc)
                return fail("%s", err.msg);
        gp_progress_note(&h->pr, "created %s/%s from %s, suspended%s", h->ns, h->to, file,
                         was_running ? " (the file says running: the hand-over starts it)"
                                     : "");
        return 0;
}

/* ---- the steps ------------------------------------------------------------- */

/* Checks the two resources before anything moves. 0, or 1 with the
 * reason printed. */
static int precheck(gp_ho_t *h) {
        char buf[1024];
        cJSON *old = fd_read(h, h->from), *neu = NULL;
        int rc = 1;
        if (!old)
                return 1;
        const char *life = gp_flinkdep_str(old, "status", "lifecycleState", NULL),
                   *job = gp_flinkdep_str(old, "status", "jobStatus", "state", NULL),
                   *error = gp_flinkdep_str(old, "status", "error", NULL);
        int64_t gen = gp_flinkdep_num(old, "metadata", "generation", NULL),
                obs = gp_flinkdep_num(old, "status", "observedGeneration", NULL);
        if (strcmp(life, "STABLE") || strcmp(job, "RUNNING")) {
                fail("FlinkDeployment %s/%s is not running: status.lifecycleState=%s, "
                     "status.jobStatus.state=%s (both must be STABLE and RUNNING before a "
                     "hand-over: its job must take the savepoint)",
                     h->ns, h->from, *life ? life : "(none)", *job ? job : "(none)");
                goto out;
        }
        if (obs < gen) {
                fail("FlinkDeployment %s/%s: the operator has not reconciled its latest spec "
                     "(metadata.generation=%" PRId64 ", status.observedGeneration=%" PRId64
                     "); wait for it, then run again",
                     h->ns, h->from, gen, obs);
                goto out;
        }
        if (*error) {
                fail("FlinkDeployment %s/%s: the operator reports status.error=%s; fix that "
                     "first",
                     h->ns, h->from, error);
                goto out;
        }
        /* Everything the steps after the suspend rely on is checked here,
         * before anything changes (docs/DESIGN.md, "The hand-over command"). */
        if (!*gp_flinkdep_conf2(old, GP_FLINKDEP_SAVEPOINT_DIR, GP_FLINKDEP_SAVEPOINT_DIR_OLD,
                                buf, sizeof(buf))) {
                fail("FlinkDeployment %s/%s: spec.flinkConfiguration has no "
                     "" GP_FLINKDEP_SAVEPOINT_DIR " (or its old name "
                     "" GP_FLINKDEP_SAVEPOINT_DIR_OLD "): the operator cannot take the "
                     "savepoint the new job starts from",
                     h->ns, h->from);
                goto out;
        }
        if (!*gp_flinkdep_conf2(old, GP_FLINKDEP_CHECKPOINT_DIR,
                                GP_FLINKDEP_CHECKPOINT_DIR_OLD, buf, sizeof(buf))) {
                fail("FlinkDeployment %s/%s: spec.flinkConfiguration has no "
                     "" GP_FLINKDEP_CHECKPOINT_DIR " (or its old name "
                     "" GP_FLINKDEP_CHECKPOINT_DIR_OLD "): the operator refuses a spec change "
                     "with upgradeMode savepoint without one",
                     h->ns, h->from);
                goto out;
        }
        /* A drained final savepoint has fired every window and timer: the
         * new job would emit again what the old one already emitted for the
         * time after T. The operator's own default configuration may turn
         * drain on, which this command cannot read: only an explicit "false"
         * in the resource is safe. */
        if (strcmp(gp_flinkdep_conf(old, GP_FLINKDEP_DRAIN_KEY, buf, sizeof(buf)), "false")) {
                fail("FlinkDeployment %s/%s: spec.flinkConfiguration." GP_FLINKDEP_DRAIN_KEY
                     " is '%s', not \"false\": the suspend would drain the old job "
                     "(every window and timer fired) before its final savepoint, and the new "
                     "job would then emit again what the old one emitted for the time after "
                     "T. Nothing was changed. Set it (a kubernetes.operator.* key: no "
                     "restart), then run the same command again:\n  kubectl -n %s patch "
                     "flinkdeployment %s --type merge -p '{\"spec\":{\"flinkConfiguration\":"
                     "{\"" GP_FLINKDEP_DRAIN_KEY "\":\"false\"}}}'",
                     h->ns, h->from,
                     *buf ? buf : "(unset: the operator's default, which may be true)", h->ns,
                     h->from);
                goto out;
        }
        if (strcmp(gp_flinkdep_conf(old, GP_FLINKDEP_FALLBACK_KEY, buf, sizeof(buf)),
                   "false")) {
                fail("FlinkDeployment %s/%s: spec.flinkConfiguration." GP_FLINKDEP_FALLBACK_KEY
                     " is '%s', not \"false\": if its job is not running when it is "
                     "suspended, the operator would silently stop it from HA metadata with no "
                     "savepoint. Set "
                     "it (a kubernetes.operator.* key: no restart):\n  kubectl -n %s patch "
                     "flinkdeployment %s --type merge -p '{\"spec\":{\"flinkConfiguration\":"
                     "{\"" GP_FLINKDEP_FALLBACK_KEY "\":\"false\"}}}'",
                     h->ns, h->from, *buf ? buf : "(unset: true)", h->ns, h->from);
                goto out;
        }
        snprintf(h->prev, sizeof(h->prev), "%s",
                 gp_flinkdep_str(old, "status", "jobStatus", "upgradeSavepointPath", NULL));
        if (!(neu = fd_read(h, h->to))) {
                fprintf(stderr,
                        "  Create it first with spec.job.state: suspended (it is then "
                        "not deployed, and spec.job.initialSavepointPath still applies), "
                        "as deploy/kubernetes/handover/flinkdeployment-green.yaml is.\n");
                goto out;
        }
        if (strcmp(gp_flinkdep_str(neu, "spec", "job", "state", NULL), "suspended")) {
                fail("FlinkDeployment %s/%s: spec.job.state is '%s', not suspended: the new "
                     "job must wait for the old one's final savepoint; create it suspended",
                     h->ns, h->to, gp_flinkdep_str(neu, "spec", "job", "state", NULL));
                goto out;
        }
        if (*gp_flinkdep_str(neu, "status", "reconciliationStatus", "lastReconciledSpec",
                             NULL)) {
                fail("FlinkDeployment %s/%s has been deployed before: the operator reads "
                     "spec.job.initialSavepointPath only on a first deployment; delete it and "
                     "create it again with spec.job.state: suspended",
                     h->ns, h->to);
                goto out;
        }
        rc = 0;
out:
        cJSON_Delete(old);
        cJSON_Delete(neu);
        return rc;
}

static int step_cutover(gp_ho_t *h) {
        gp_cm_t *cm = load_map(h);
        gp_control_t c;
        if (!cm)
                return 1;
        int rc = map_control(h, cm, &c);
        gp_cm_destroy(cm);
        if (rc)
                return 1;
        bool mid = c.stage == GP_STAGE_TRANSITIONING || c.stage == GP_STAGE_CLEAR_TO_TEARDOWN;
        if (mid && c.active == h->new_colour)
                return 0; /* written before the last run stopped */
        if (c.stage != GP_STAGE_RUNNING || c.active != h->old_colour)
                return fail("%s: stage=%s with %s active, not the transition this hand-over "
                            "started (was it aborted?); see `gate-proxy status`",
                            gp_ctl_describe(h->ctl), gp_stage_name(c.stage),
                            gp_colour_name(c.active));
        gp_cutover_opts_t o = {.to = h->new_colour, .at = GP_TS_NONE, .quiet = 1};
        return gp_ops_ctl_cutover(h->ctl, &o);
}

/* The proxy's instants of this hand-over from the map (gate/hoptime.h);
 * said when the value is not valid, left unset when there is none. */
static void hop_read(gp_ho_t *h, const gp_cm_t *cm) {
        const char *v = cm_get(cm, GP_KEY_HOP);
        char err[200];
        if (*v && gp_hoptime_parse(&h->hop, v, strlen(v), err, sizeof err))
                gp_progress_note(&h->pr, "clear: the proxy's hand-over time is unreadable: %s",
                                 err);
}

static int step_clear(gp_ho_t *h) {
        int64_t end = gp_mono_ms() + h->timeout_ms, away = -1;
        for (;;) {
                gp_err_t err;
                gp_cm_t *cm = gp_ctl_load(h->ctl, &err);
                if (!cm) {
                        if (away < 0)
                                away = gp_mono_ms();
                        if (gp_mono_ms() - away > API_GRACE_MS)
                                return fail("%s; nothing is lost: run the same command again "
                                            "once the map can be read",
                                            err.msg);
                        gp_progress_show(&h->pr,
                                         "clear: the map cannot be read (%s); retrying",
                                         err.msg);
                        gp_sleep_ms(1000);
                        continue;
                }
                away = -1;
                const char *stage = cm_get(cm, GP_KEY_STAGE), *t = cm_get(cm, GP_KEY_TOGGLE),
                           *active = cm_get(cm, GP_KEY_ACTIVE);
                if (strcasecmp(active, gp_colour_name(h->new_colour))) {
                        gp_cm_destroy(cm);
                        return fail("%s: active-deployment-type is %s, no longer %s: the "
                                    "transition was changed by someone else",
                                    gp_ctl_describe(h->ctl), active,
                                    gp_colour_upper(h->new_colour));
                }
                int64_t tv;
                const char *why;
                if (*t && h->t == GP_TS_NONE && !gp_parse_i64(t, strlen(t), &tv, &why)) {
                        h->t = tv;
                        gp_kv_t kv[] = {{HO_CUTOFF, t}};
                        if (record(h, kv, 1)) {
                                gp_cm_destroy(cm);
                                return 1;
                        }
                }
                const char *lag = cm_get(cm, GP_KEY_DRAIN_LAG);
                gp_progress_show(
                        &h->pr, "clear: stage=%s T=%s W=%s drain_lag=%s blue=%s green=%s%s%s",
                        stage, *t ? t : "(not yet)", dash(cm_get(cm, GP_KEY_WATERMARK)),
                        dash(lag), dash(cm_get(cm, GP_KEY_COUNT_BLUE)),
                        dash(cm_get(cm, GP_KEY_COUNT_GREEN)),
                        *cm_get(cm, GP_KEY_ERROR) ? " proxy error: " : "",
                        cm_get(cm, GP_KEY_ERROR));
                int done = !strcmp(stage, "CLEAR_TO_TEARDOWN") && h->t != GP_TS_NONE;
                if (done)
                        hop_read(h, cm);
                else
                        gp_ho_ask_checkpoint(h, cm);
                gp_cm_destroy(cm);
                if (done)
                        return 0;
                if (gp_mono_ms() > end)
                        return fail("no CLEAR_TO_TEARDOWN within %" PRId64 " s: is the proxy "
                                    "running and is the old job consuming its topic? "
                                    "(`gate-proxy status`); nothing is lost: run the same "
                                    "command again to keep waiting",
                                    h->timeout_ms / 1000);
                gp_sleep_ms(CLEAR_POLL_MS);
        }
}

/* What name shows now, into *s. 0, or 1 with the reason printed. */
static int seen_before(gp_ho_t *h, const char *name, gp_ho_seen_t *s) {
        cJSON *fd = fd_read(h, name);
        if (!fd)
                return 1;
        s->gen = -1;
        snprintf(s->err0, sizeof(s->err0), "%s", gp_flinkdep_str(fd, "status", "error", NULL));
        s->failed0 = !strcmp(gp_flinkdep_str(fd, "status", "lifecycleState", NULL), "FAILED");
        cJSON_Delete(fd);
        return 0;
}

/* Reads name every POLL_MS until check says 1 (returns 0) or -1 (1, the
 * reason printed), or the step's timeout passes (2). */
static int wait_until(gp_ho_t *h, const char *name,
                      int (*check)(gp_ho_t *, const cJSON *, const gp_ho_seen_t *),
                      const gp_ho_seen_t *s) {
        int64_t end = gp_mono_ms() + h->timeout_ms;
        for (;;) {
                cJSON *fd = fd_read(h, name);
                if (!fd)
                        return 1;
                int r = check(h, fd, s);
                cJSON_Delete(fd);
                if (r)
                        return r > 0 ? 0 : 1;
                if (gp_mono_ms() > end)
                        return 2;
                gp_sleep_ms(POLL_MS);
        }
}

/* suspend: done already when the spec says suspended with a savepoint;
 * refused when the old job is not RUNNING just before the patch, since the
 * operator then suspends it without a stop and without a savepoint. */
static int keep_suspended(gp_ho_t *h, const cJSON *fd) {
        if (!strcmp(gp_flinkdep_str(fd, "spec", "job", "state", NULL), "suspended") &&
            !strcmp(gp_flinkdep_str(fd, "spec", "job", "upgradeMode", NULL), "savepoint"))
                return 1;
        const char *job = gp_flinkdep_str(fd, "status", "jobStatus", "state", NULL);
        if (strcmp(job, "RUNNING")) {
                fail("the old job is not running just before its suspend: FlinkDeployment "
                     "%s/%s status.jobStatus.state=%s. The operator would suspend it without "
                     "a stop and without a savepoint. Nothing was changed on it and nothing "
                     "is "
                     "lost: records at or after T wait in the %s topic. Once it runs again "
                     "(the operator restarts a failed job from its last checkpoint), run the "
                     "same command again",
                     h->ns, h->from, *job ? job : "(none)", gp_colour_name(h->new_colour));
                return -1;
        }
        return 0;
}

/* Before the suspend: when it began (once), for new-job-running-after-ms. */
static int mark_suspend(gp_ho_t *h) {
        if (h->suspended_at)
                return 0;
        char at[24];
        h->suspended_at = gp_now_ms();
        snprintf(at, sizeof(at), "%" PRId64, h->suspended_at);
        gp_kv_t kv[] = {{HO_SUSPENDED_AT, at}};
        return record(h, kv, 1);
}

static int step_suspend(gp_ho_t *h) {
        gp_ho_seen_t seen;
        if (seen_before(h, h->from, &seen))
                return 1;
        cJSON *job = cJSON_CreateObject();
        cJSON_AddStringToObject(job, "state", "suspended");
        cJSON_AddStringToObject(job, "upgradeMode", "savepoint");
        if (fd_set_job(h, h->from, job, keep_suspended, &seen.gen))
                return 1;
        int r = wait_until(h, h->from, gp_ho_old_stopped, &seen);
        if (r == 2)
                return fail("%s/%s did not stop with a savepoint within %" PRId64
                            " s (last seen: %s). Nothing is lost; run the same "
                            "command again to keep waiting, with a larger --timeout "
                            "if the savepoint is large%s",
                            h->ns, h->from, h->timeout_ms / 1000, h->pr.last,
                            h->waited_snapshot
                                    ? ". The savepoint is taken, but its UPGRADE "
                                      "FlinkStateSnapshot never completed: the operator's "
                                      "snapshot controller did not reconcile it (see "
                                      "`kubectl -n NS describe flinkstatesnapshot`)"
                                    : "");
        if (r)
                return r;
        gp_kv_t kv[] = {{HO_SAVEPOINT, h->sp}};
        return record(h, kv, 1);
}

/* start: done already when the spec runs from our savepoint; refused when
 * it runs from another. */
static int keep_started(gp_ho_t *h, const cJSON *fd) {
        if (strcmp(gp_flinkdep_str(fd, "spec", "job", "state", NULL), "running"))
                return 0;
        const char *isp = gp_flinkdep_str(fd, "spec", "job", "initialSavepointPath", NULL);
        if (!strcmp(isp, h->sp))
                return 1;
        fail("FlinkDeployment %s/%s was started by someone else, from '%s', not from the "
             "savepoint %s",
             h->ns, h->to, isp, h->sp);
        return -1;
}

/* Is the new job running from h->sp? 1 yes, 0 not yet, -1 failed. */
static int new_running(gp_ho_t *h, const cJSON *fd, const gp_ho_seen_t *seen) {
        const char *life = gp_flinkdep_str(fd, "status", "lifecycleState", NULL),
                   *job = gp_flinkdep_str(fd, "status", "jobStatus", "state", NULL),
                   *jm = gp_flinkdep_str(fd, "status", "jobManagerDeploymentStatus", NULL),
                   *error = gp_flinkdep_str(fd, "status", "error", NULL),
                   *path = gp_flinkdep_str(fd, "status", "jobStatus", "upgradeSavepointPath",
                                           NULL);
        int64_t obs = gp_flinkdep_num(fd, "status", "observedGeneration", NULL);
        bool failed =
                !strcmp(life, "FAILED") || !strcmp(job, "FAILED") || !strcmp(jm, "ERROR");
        if (failed && !seen->failed0)
                return fail("the new job failed to start: FlinkDeployment %s/%s "
                            "status.lifecycleState=%s, jobStatus.state=%s, "
                            "jobManagerDeploymentStatus=%s, error=%s\n  Nothing is lost: its "
                            "records at or after T wait in the %s topic, and it starts from "
                            "the savepoint %s. Fix it (`kubectl -n %s describe "
                            "flinkdeployment %s`), then run the same command again.",
                            h->ns, h->to, life, job, *jm ? jm : "-", *error ? error : "(none)",
                            gp_colour_name(h->new_colour), h->sp, h->ns, h->to),
                       -1;
        gp_progress_show(&h->pr, "start: %s lifecycleState=%s job=%s jobManager=%s%s", h->to,
                         *life ? life : "-", *job ? job : "-", *jm ? jm : "-",
                         failed ? " (failed before this run: waiting for it to be fixed)"
                                : "");
        if (obs < seen->gen || strcmp(life, "STABLE") || strcmp(job, "RUNNING"))
                return 0;
        if (strcmp(path, h->sp)) {
                /* After the new job failed, the operator records its latest
                 * checkpoint and restarts it from there once it is fixed:
                 * state that began at h->sp (spec.job.initialSavepointPath,
                 * its first deployment) and went on. */
                char dir[1024], np[1024];
                gp_flinkdep_conf2(fd, GP_FLINKDEP_CHECKPOINT_DIR,
                                  GP_FLINKDEP_CHECKPOINT_DIR_OLD, dir, sizeof(dir));
                uri_norm(dir);
                snprintf(np, sizeof(np), "%s", path);
                uri_norm(np);
                size_t dl = strlen(dir);
                bool own = dl && !strncmp(np, dir, dl) && np[dl] == '/' &&
                           !strcmp(gp_flinkdep_str(fd, "spec", "job", "initialSavepointPath",
                                                   NULL),
                                   h->sp);
                if (!own)
                        return fail("FlinkDeployment %s/%s runs, but from '%s', not from the "
                                    "savepoint "
                                    "%s (status.jobStatus.upgradeSavepointPath)",
                                    h->ns, h->to, path, h->sp),
                               -1;
                gp_progress_note(&h->pr,
                                 "start: %s runs from %s, its own checkpoint: it started "
                                 "from %s, failed, and the operator restarted it from its "
                                 "latest checkpoint",
                                 h->to, path, h->sp);
        }
        return 1;
}

static int step_start(gp_ho_t *h) {
        gp_ho_seen_t seen;
        if (seen_before(h, h->to, &seen))
                return 1;
        cJSON *job = cJSON_CreateObject();
        cJSON_AddStringToObject(job, "state", "running");
        cJSON_AddStringToObject(job, "initialSavepointPath", h->sp);
        if (fd_set_job(h, h->to, job, keep_started, &seen.gen))
                return 1;
        int r = wait_until(h, h->to, new_running, &seen);
        if (r == 2)
                return fail("%s/%s is not STABLE and RUNNING within %" PRId64 " s "
                            "(last seen: %s). Nothing is lost: its records wait in the "
                            "%s topic; run the same command again to keep waiting",
                            h->ns, h->to, h->timeout_ms / 1000, h->pr.last,
                            gp_colour_name(h->new_colour));
        if (r)
                return r;
        char ms[24];
        h->running_after = gp_now_ms() - h->suspended_at;
        snprintf(ms, sizeof(ms), "%" PRId64, h->running_after);
        gp_kv_t kv[] = {{HO_RUNNING_AFTER, ms}};
        return record(h, kv, 1);
}

static int step_finish(gp_ho_t *h) {
        for (int attempt = 0;; attempt++) {
                gp_cm_t *cm = load_map(h);
                gp_control_t c;
                gp_err_t err;
                if (!cm)
                        return 1;
                char rv[64];
                snprintf(rv, sizeof(rv), "%s", gp_cm_resource_version(cm));
                int bad = map_control(h, cm, &c);
                gp_cm_destroy(cm);
                if (bad)
                        return 1;
                if (c.stage == GP_STAGE_RUNNING && c.active == h->new_colour)
                        break;
                if (c.stage != GP_STAGE_CLEAR_TO_TEARDOWN || c.active != h->new_colour)
                        return fail("%s: stage=%s with %s active, not CLEAR_TO_TEARDOWN of "
                                    "this hand-over",
                                    gp_ctl_describe(h->ctl), gp_stage_name(c.stage),
                                    gp_colour_name(c.active));
                gp_kv_t kv[] = {{GP_KEY_STAGE, "RUNNING"}};
                gp_errcode_t rc = gp_ctl_write(h->ctl, rv, kv, 1, &err);
                if (rc == GP_OK)
                        break;
                if (rc != GP_ERR_CONFLICT || attempt + 1 >= ATTEMPTS)
                        return fail("%s", err.msg);
        }
        /* The old resource goes: its JobManager would otherwise linger for
         * the operator's shutdown TTL and, without HA, may run the job
         * again from its start if its pod restarts (FLINK-41262). */
        gp_err_t err;
        gp_errcode_t rc = gp_flinkdep_delete(h->k, h->ns, h->from, &err);
        if (rc != GP_OK && rc != GP_ERR_NOT_FOUND)
                return fail("%s; the new job runs and the proxy is finished: delete %s/%s "
                            "yourself (or run the same command again)",
                            err.msg, h->ns, h->from);
        return 0;
}

/* The lines at the end of a step. */
static void said_clear(gp_ho_t *h, double secs) {
        gp_progress_note(&h->pr, "clear: CLEAR_TO_TEARDOWN at T=%" PRId64 " (%.1f s)", h->t,
                         secs);
        if (h->hop.seen != GP_TS_NONE) {
                char d[600];
                gp_hoptime_describe(&h->hop, d, sizeof d);
                gp_progress_note(&h->pr, "clear: the proxy's time: %s", d);
        }
}

static void said_suspend(gp_ho_t *h, double secs) {
        gp_progress_note(&h->pr, "suspend: %s stopped with savepoint %s (%.1f s)", h->from,
                         h->sp, secs);
}

static void said_start(gp_ho_t *h, double secs) {
        gp_progress_note(&h->pr, "start: %s runs from the savepoint (%.1f s)", h->to, secs);
}

/* ---- the table of steps ---------------------------------------------------- */

/* A step. take_steps() writes its name to the map, then what mark writes
 * (more of the map that must be there before it is taken), takes it, and
 * prints said's line. Each can be taken again (see the top). */
typedef struct {
        const char *name;
        int (*mark)(gp_ho_t *); /* NULL: nothing more; 0, or 1 with the reason printed */
        int (*take)(gp_ho_t *); /* 0, or 1 with the reason printed */
        void (*said)(gp_ho_t *, double secs); /* NULL: "NAME: done (N s)" */
} step_row_t;

static const step_row_t steps[] = {
        [S_CUTOVER] = {"cutover", NULL, step_cutover, NULL},
        [S_CLEAR] = {"clear", NULL, step_clear, said_clear},
        [S_SUSPEND] = {"suspend", mark_suspend, step_suspend, said_suspend},
        [S_START] = {"start", NULL, step_start, said_start},
        [S_FINISH] = {"finish", NULL, step_finish, NULL},
};
_Static_assert(sizeof(steps) / sizeof(steps[0]) == S_DONE, "a row for every step");

/* As the map holds it: the row's name, "done", or "-" for none. */
static const char *describe_step(gp_ho_step_t s) {
        return s < S_DONE ? steps[s].name : s == S_DONE ? "done" : "-";
}

static gp_ho_step_t parse_step(const char *s) {
        for (int i = 0; s && i < S_NONE; i++)
                if (!strcmp(s, describe_step((gp_ho_step_t)i)))
                        return (gp_ho_step_t)i;
        return S_NONE;
}

static int record_step(gp_ho_t *h, gp_ho_step_t s) {
        gp_kv_t kv[] = {{HO_STEP, describe_step(s)}};
        return record(h, kv, 1);
}

/* " key=MS" or " key=-". */
static void ms_field(const char *key, int64_t ms) {
        if (ms < 0)
                printf(" %s=-", key);
        else
                printf(" %s=%" PRId64, key, ms);
}

/* Where the time went: the proxy's phases (gate/hoptime.h), then this
 * command's steps in this run ("-": taken in an earlier run, or not
 * seen). */
static void time_line(const gp_ho_t *h) {
        int64_t ph[4];
        gp_hoptime_phases(&h->hop, ph);
        gp_progress_break();
        printf("handover-time:");
        ms_field("T_ms", ph[0]);
        ms_field("close_ms", ph[1]);
        printf(" rule=%s", gp_close_rule_name(h->hop.rule));
        if (h->hop.rule != GP_CLOSE_NONE)
                printf(" idle=%d/%d", h->hop.idle, h->hop.parts);
        ms_field("drain_ms", ph[2]);
        ms_field("clear_ms", ph[3]);
        ms_field("proxy_ms", h->hop.seen != GP_TS_NONE && h->hop.clear != GP_TS_NONE
                                     ? h->hop.clear - h->hop.seen
                                     : -1);
        for (int s = 0; s < S_DONE; s++) {
                char key[32];
                /* clear_ms is the proxy's phase: the step is clear_step_ms. */
                snprintf(key, sizeof key, "%s%s_ms", steps[s].name,
                         s == S_CLEAR ? "_step" : "");
                ms_field(key, h->step_ms[s]);
        }
        putchar('\n');
}

static void final_line(const gp_ho_t *h) {
        gp_progress_break();
        printf("handover: from=%s to=%s T=%" PRId64
               " savepoint=%s new_job_running_after_ms=%" PRId64 " ok\n",
               h->from, h->to, h->t, h->sp, h->running_after);
}

static int64_t num_or(const char *s, int64_t dflt) {
        int64_t v;
        const char *why;
        return s && *s && !gp_parse_i64(s, strlen(s), &v, &why) ? v : dflt;
}

/* A heartbeat this old (or none, or a clean stop after it) is no proxy
 * that runs: as `gate-proxy status` judges it. */
#define ABORT_STALE_MS 30000

/* After an abort past T: the proxy takes it (its committed phase aborted,
 * a heartbeat after the write at wrote_ms) and re-delivers to the survivor
 * what went to `to` (docs/DESIGN.md, Abort re-delivery); shown as it goes,
 * until done or --timeout. 0 when done (or nothing can be waited for: no
 * proxy runs, or it does not re-deliver, said); 1 at the timeout. */
static int await_redelivery(gp_ho_t *h, const char *from, const char *to, const char *t,
                            gp_colour_t surv, int64_t wrote_ms) {
        int64_t end = gp_mono_ms() + h->timeout_ms;
        for (;;) {
                gp_cm_t *cm = load_map(h);
                if (!cm)
                        return 1;
                const char *hb = cm_get(cm, GP_KEY_HEARTBEAT), *why;
                int64_t beat = GP_TS_NONE;
                if (*hb && gp_time_parse(hb, strlen(hb), GP_UNIT_MS, &beat, &why))
                        beat = GP_TS_NONE;
                bool runs = beat != GP_TS_NONE && !*cm_get(cm, GP_KEY_STOPPED) &&
                            gp_now_ms() - beat <= ABORT_STALE_MS;
                bool took = runs && beat >= wrote_ms &&
                            !strcmp(cm_get(cm, GP_KEY_PHASE), "aborted");
                char rd[GP_STATUS_VALUE_MAX], ab[32];
                snprintf(rd, sizeof rd, "%s", cm_get(cm, GP_KEY_REDELIVERY));
                snprintf(ab, sizeof ab, "%s", dash(cm_get(cm, GP_KEY_ABORTED_ROUTED)));
                /* Group mode: every member that beats, each from its own
                 * key, not whichever wrote the shared keys last. */
                gp_mstatus_view_t mv;
                bool group = gp_ops_members(cm, gp_now_ms(), &mv, NULL) > 0;
                gp_cm_destroy(cm);
                if (group) {
                        runs = mv.live > 0;
                        took = runs && mv.oldest >= wrote_ms && mv.one_phase &&
                               mv.phase == GP_PHASE_ABORTED;
                        rd[0] = '\0';
                        if (mv.rd_members)
                                snprintf(rd, sizeof rd,
                                         "to=%s sent=%" PRIu64 " left=%" PRIu64
                                         " lost=%" PRIu64 " open=%" PRIu64,
                                         gp_colour_name(surv), mv.rd_sent, mv.rd_left,
                                         mv.rd_lost, mv.rd_open);
                }
                if (!runs) {
                        gp_progress_break();
                        printf("handover: from=%s to=%s aborted after T=%s: no proxy reports "
                               "on "
                               "%s; once one runs it re-delivers to %s what went to %s "
                               "(`gate-proxy status` shows it)\n",
                               from, to, t, gp_ctl_describe(h->ctl), gp_colour_name(surv), to);
                        return 0;
                }
                unsigned long long sent = 0, left = 0, lost = 0, open = 1;
                char col[8];
                bool parsed = sscanf(rd, "to=%7s sent=%llu left=%llu lost=%llu open=%llu", col,
                                     &sent, &left, &lost, &open) == 5;
                if (took && !*rd) {
                        gp_progress_break();
                        printf("handover: from=%s to=%s aborted after T=%s; the proxy does "
                               "not "
                               "re-deliver (gate.abort.redeliver=false): the %s records at or "
                               "after T stay in %s's topic\n",
                               from, to, t, ab, to);
                        return 0;
                }
                if (took && parsed && !open) {
                        gp_progress_break();
                        printf("handover: from=%s to=%s aborted after T=%s: %llu records "
                               "re-delivered to %s (every record %s got from T on)%s\n",
                               from, to, t, sent, gp_colour_name(surv), to,
                               lost ? "; some source offsets were LOST to retention first: "
                                      "`gate-proxy status`"
                                    : "");
                        return 0;
                }
                if (took && parsed) /* the progress line drops repeats itself */
                        gp_progress_show(&h->pr,
                                         "abort: re-delivering to %s: %llu records sent, %llu "
                                         "source offsets left on %llu partition(s)",
                                         gp_colour_name(surv), sent, left, open);
                else if (!took)
                        gp_progress_show(&h->pr, "abort: waiting for the proxy to take it");
                if (gp_mono_ms() > end)
                        return fail(
                                "the abort is written, but the proxy %s within %" PRId64
                                " s (%s); `gate-proxy status` shows how it goes on",
                                took ? "has not re-delivered everything" : "has not taken it",
                                h->timeout_ms / 1000, *rd ? rd : "no re-delivery reported");
                gp_sleep_ms(CLEAR_POLL_MS * 2);
        }
}

/* --abort: before T, or after it while the old job runs (the proxy then
 * re-delivers to it what went to the new colour); refused once the old job
 * was suspended. */
static int do_abort(gp_ho_t *h) {
        for (int attempt = 0;; attempt++) {
                gp_cm_t *cm = load_map(h);
                gp_err_t err;
                if (!cm)
                        return 1;
                gp_ho_step_t s = parse_step(gp_cm_get(cm, HO_STEP));
                char rv[64], from[256], to[256];
                snprintf(rv, sizeof(rv), "%s", gp_cm_resource_version(cm));
                snprintf(from, sizeof(from), "%s", cm_get(cm, HO_FROM));
                snprintf(to, sizeof(to), "%s", cm_get(cm, HO_TO));
                const char *t = cm_get(cm, GP_KEY_TOGGLE);
                gp_control_t c;
                int bad = map_control(h, cm, &c);
                char tcopy[32];
                snprintf(tcopy, sizeof(tcopy), "%s", t);
                gp_cm_destroy(cm);
                if (bad)
                        return 1;
                if (s == S_NONE || s == S_DONE)
                        return fail("no hand-over in progress on %s; nothing to abort",
                                    gp_ctl_describe(h->ctl));
                if (s >= S_SUSPEND)
                        return fail(
                                "refused: %s was suspended at T=%s (step %s): its records "
                                "from T on wait in the %s topic for %s, which starts from "
                                "%s's savepoint. The way forward is on: fix %s if it failed, "
                                "then run `gate-proxy handover --from %s --to %s` again",
                                from, *tcopy ? tcopy : "(recorded)", describe_step(s),
                                gp_colour_name(c.active), to, from, to, from, to);
                gp_colour_t surv = gp_colour_other(c.active);
                int64_t wrote_ms = gp_now_ms();
                /* As `gate-proxy abort` then `finish`. */
                gp_kv_t kv[] = {{GP_KEY_ACTIVE, gp_colour_upper(gp_colour_other(c.active))},
                                {GP_KEY_STAGE, "FAILING"},
                                {GP_KEY_FIRST, "true"},
                                {GP_KEY_WM_STAGE, NULL},
                                {GP_KEY_TOGGLE, NULL},
                                {GP_KEY_REQ_CUTOFF, NULL},
                                {GP_KEY_REQ_ALIGN, NULL},
                                {HO_FROM, NULL},
                                {HO_TO, NULL},
                                {HO_STEP, NULL},
                                {HO_CUTOFF, NULL},
                                {HO_COLOUR, NULL},
                                {HO_PREVIOUS, NULL}};
                /* The precondition: the proxy may choose T meanwhile, and
                 * then the map moved and this is decided again. */
                gp_errcode_t rc =
                        gp_ctl_write(h->ctl, rv, kv, sizeof(kv) / sizeof(kv[0]), &err);
                if (rc == GP_OK) {
                        gp_kv_t fin[] = {{GP_KEY_STAGE, "RUNNING"}};
                        if (gp_ctl_write(h->ctl, NULL, fin, 1, &err) != GP_OK)
                                return fail("abandoned (stage FAILING), but stage=RUNNING was "
                                            "not written: %s; run `gate-proxy finish`",
                                            err.msg);
                        if (*tcopy)
                                return await_redelivery(h, from, to, tcopy, surv, wrote_ms);
                        printf("handover: from=%s to=%s aborted before T: every record goes "
                               "to "
                               "%s; %s was not started\n",
                               from, to, gp_colour_name(surv), to);
                        return 0;
                }
                if (rc != GP_ERR_CONFLICT || attempt + 1 >= ATTEMPTS)
                        return fail("%s", err.msg);
        }
}

/* ---- the command ------------------------------------------------------------ */

/* The API client and the map of o, into h. 0, or 1 with the reason
 * printed. */
static int ho_open(gp_ho_t *h, const gp_handover_opts_t *o) {
        gp_err_t err;
        *h = (gp_ho_t){.from = o->from,
                       .to = o->to,
                       .timeout_ms = o->timeout_ms,
                       .t = GP_TS_NONE,
                       .explicit_sp = o->savepoint,
                       .no_checkpoint = o->no_checkpoint};
        for (int s = 0; s < S_DONE; s++)
                h->step_ms[s] = -1;
        gp_hoptime_init(&h->hop);
        gp_progress_init(&h->pr);
        gp_k8s_conf_t *conf = gp_k8s_conf_load(o->kubeconfig, &err);
        if (!conf)
                return fail("kubernetes: %s", err.msg);
        snprintf(h->ns, sizeof(h->ns), "%s",
                 o->ns && *o->ns ? o->ns
                 : conf->ns      ? conf->ns
                                 : "default");
        if (!(h->k = gp_k8s_new(conf, &err)))
                return fail("kubernetes: %s", err.msg);
        if (!(h->ctl = gp_ctl_new_k8s(o->map, h->ns, o->kubeconfig, false, &err))) {
                gp_k8s_destroy(h->k);
                return fail("%s", err.msg);
        }
        return 0;
}

static void ho_close(gp_ho_t *h) {
        gp_ctl_destroy(h->ctl);
        gp_k8s_destroy(h->k);
}

int gp_handover_abort(const gp_handover_opts_t *o) {
        gp_ho_t h;
        if (ho_open(&h, o))
                return 1;
        int rc = do_abort(&h);
        ho_close(&h);
        return rc;
}

/* Where are we? A recorded hand-over of the same pair goes on: its T,
 * savepoints and colours into h. Its step (S_DONE when it is done), S_NONE
 * to start one, or -1 with the reason printed; *stage the map's. */
static int resume(gp_ho_t *h, gp_stage_t *stage) {
        gp_cm_t *cm = load_map(h);
        gp_control_t ctl;
        if (!cm || map_control(h, cm, &ctl)) {
                gp_cm_destroy(cm);
                return -1;
        }
        gp_ho_step_t s = parse_step(gp_cm_get(cm, HO_STEP));
        const char *rf = cm_get(cm, HO_FROM), *rt = cm_get(cm, HO_TO);
        bool same = !strcmp(rf, h->from) && !strcmp(rt, h->to);
        if (s != S_NONE && s != S_DONE && !same) {
                fail("a hand-over from %s to %s is in progress on %s (step %s): run it again "
                     "with --from %s --to %s to finish it, or --abort it",
                     rf, rt, gp_ctl_describe(h->ctl), describe_step(s), rf, rt);
                gp_cm_destroy(cm);
                return -1;
        }
        if (s != S_NONE && same) {
                h->t = num_or(gp_cm_get(cm, HO_CUTOFF), GP_TS_NONE);
                snprintf(h->sp, sizeof(h->sp), "%s", cm_get(cm, HO_SAVEPOINT));
                snprintf(h->prev, sizeof(h->prev), "%s", cm_get(cm, HO_PREVIOUS));
                h->suspended_at = num_or(gp_cm_get(cm, HO_SUSPENDED_AT), 0);
                h->running_after = num_or(gp_cm_get(cm, HO_RUNNING_AFTER), -1);
        }
        /* The colours: recorded at the start, else the other one. */
        if (s == S_NONE || !same || gp_colour_parse(cm_get(cm, HO_COLOUR), &h->new_colour))
                h->new_colour = gp_colour_other(ctl.active);
        h->old_colour = gp_colour_other(h->new_colour);
        gp_cm_destroy(cm);
        *stage = ctl.stage;
        return s == S_DONE && !same ? S_NONE : (int)s;
}

/* A new hand-over: NEW created if asked, both checked, the pair recorded
 * with step cutover. 0, or 1 with the reason printed. */
static int begin(gp_ho_t *h, const gp_handover_opts_t *o, gp_stage_t stage) {
        if (stage != GP_STAGE_RUNNING)
                return fail("%s: stage=%s: a transition is in progress that this command did "
                            "not start; finish or abort it first (`gate-proxy status`)",
                            gp_ctl_describe(h->ctl), gp_stage_name(stage));
        if (o->to_file && apply_new(h, o->to_file))
                return 1;
        if (precheck(h))
                return 1;
        gp_kv_t kv[] = {{HO_FROM, h->from},
                        {HO_TO, h->to},
                        {HO_STEP, "cutover"},
                        {HO_CUTOFF, NULL},
                        {HO_SAVEPOINT, NULL},
                        {HO_PREVIOUS, h->prev},
                        {HO_SUSPENDED_AT, NULL},
                        {HO_RUNNING_AFTER, NULL},
                        {HO_COLOUR, gp_colour_name(h->new_colour)}};
        if (record(h, kv, sizeof(kv) / sizeof(kv[0])))
                return 1;
        printf("handover: %s (%s) -> %s (%s) on %s\n", h->from, gp_colour_name(h->old_colour),
               h->to, gp_colour_name(h->new_colour), gp_ctl_describe(h->ctl));
        return 0;
}

/* The steps from s on, each recorded before it is taken, then done. 0, or
 * 1 with the reason printed. */
static int take_steps(gp_ho_t *h, gp_ho_step_t s) {
        fflush(stdout);
        for (; s < S_DONE; s++) {
                const step_row_t *row = &steps[s];
                int64_t began = gp_mono_ms();
                if (record_step(h, s) || (row->mark && row->mark(h)))
                        return 1;
                if (row->take(h)) {
                        fprintf(stderr,
                                "gate-proxy handover: stopped at step %s; `gate-proxy "
                                "handover --from %s --to %s` goes on from there\n",
                                row->name, h->from, h->to);
                        return 1;
                }
                h->step_ms[s] = gp_mono_ms() - began;
                double secs = (double)h->step_ms[s] / 1000.0;
                if (row->said)
                        row->said(h, secs);
                else
                        gp_progress_note(&h->pr, "%s: done (%.1f s)", row->name, secs);
        }
        if (record_step(h, S_DONE))
                return 1;
        if (h->hop.seen == GP_TS_NONE) {
                /* The clear was taken in an earlier run: the map still
                 * holds the proxy's instants until its next hand-over. */
                gp_cm_t *cm = load_map(h);
                if (cm)
                        hop_read(h, cm);
                gp_cm_destroy(cm);
        }
        time_line(h);
        final_line(h);
        return 0;
}

int gp_handover_run(const gp_handover_opts_t *o) {
        gp_ho_t h;
        gp_stage_t stage;
        if (ho_open(&h, o))
                return 1;
        int s = resume(&h, &stage), rc = 1;
        if (s == S_DONE) {
                printf("handover: %s -> %s was already done\n", h.from, h.to);
                final_line(&h);
                rc = 0;
        } else if (s == S_NONE) {
                if (!begin(&h, o, stage))
                        rc = take_steps(&h, S_CUTOVER);
        } else if (s >= 0) {
                printf("handover: %s (%s) -> %s (%s) on %s: going on at step %s\n", h.from,
                       gp_colour_name(h.old_colour), h.to, gp_colour_name(h.new_colour),
                       gp_ctl_describe(h.ctl), describe_step((gp_ho_step_t)s));
                rc = take_steps(&h, (gp_ho_step_t)s);
        }
        ho_close(&h);
        return rc;
}
