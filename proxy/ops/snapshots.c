/* proxy/ops/snapshots.c: the operator's snapshots in a hand-over
 * (proxy/ops/handover_int.h): at the clear, the checkpoint of OLD this
 * command asks for; at the suspend, which savepoint the operator took and
 * what proves it (an UPGRADE FlinkStateSnapshot COMPLETED, the legacy
 * savepointInfo record, or a NOOP suspend's path this command can vouch
 * for). The requests are k8s/flinkdep.h's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/control.h"
#include "gate/hoptime.h"
#include "k8s/flinkdep.h"
#include "os/clock.h"
#include "proxy/ops/handover_int.h"

/* Once the proxy has closed the old side (gate-proxy.hop close=), what
 * keeps CLEAR_TO_TEARDOWN is the old job's group committing every record
 * before T, which a Flink Kafka source does when a checkpoint completes:
 * the operator is asked for one checkpoint of OLD now (a FlinkStateSnapshot
 * of checkpoint type), rather than waiting for OLD's next periodic one.
 * Once per run; a refusal (no create on flinkstatesnapshots, no CRD) is
 * said in one line and the hand-over goes on without it. */
void gp_ho_ask_checkpoint(gp_ho_t *h, const gp_cm_t *cm) {
        gp_hop_t hop;
        char why[200], snap[256];
        const char *v = cm_get(cm, GP_KEY_HOP);
        if (h->no_checkpoint || h->asked || !*v ||
            gp_hoptime_parse(&hop, v, strlen(v), why, sizeof why) ||
            hop.closed == GP_TS_NONE || hop.drained != GP_TS_NONE)
                return;
        gp_err_t err;
        snprintf(snap, sizeof snap, "%.200s-checkpoint-handover-%" PRId64, h->from,
                 gp_now_ms());
        gp_errcode_t rc = gp_flinkdep_checkpoint(h->k, h->ns, h->from, snap, &err);
        if (rc == GP_OK || rc == GP_ERR_CONFLICT) {
                h->asked = 1;
                gp_progress_note(&h->pr,
                                 "clear: the proxy closed %s's side; asked the operator for a "
                                 "checkpoint of %s (FlinkStateSnapshot %s/%s), on which its "
                                 "Kafka source commits what it read",
                                 h->from, h->from, h->ns, snap);
                return;
        }
        h->asked = -1;
        gp_progress_note(
                &h->pr,
                "clear: no checkpoint asked of the operator (%s%s); the drain waits for "
                "%s's next checkpoint of its own",
                err.msg,
                rc == GP_ERR_DENIED      ? ": the Role lacks create on flinkstatesnapshots"
                : rc == GP_ERR_NOT_FOUND ? ": is the FlinkStateSnapshot CRD installed?"
                                         : "",
                h->from);
}

/* A path or URI as Flink writes it back: "scheme:///p" (an empty
 * authority) is "scheme:/p", as Flink's Path prints file:///x; no trailing
 * '/'. In place. */
void gp_ho_uri_norm(char *s) {
        char *c = strstr(s, ":///");
        if (c && c > s &&
            strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789+.-") == (size_t)(c - s))
                memmove(c + 2, c + 4, strlen(c + 4) + 1); /* "://" "/p" -> ":/p" */
        size_t n = strlen(s);
        while (n > 1 && s[n - 1] == '/')
                s[--n] = '\0';
}

/* Is path under fd's savepoint directory (either name of the key),
 * compared as Flink writes paths back? */
static bool under_savepoint_dir(const cJSON *fd, const char *path, char *dir, size_t len) {
        char np[1024];
        gp_flinkdep_conf2(fd, GP_FLINKDEP_SAVEPOINT_DIR, GP_FLINKDEP_SAVEPOINT_DIR_OLD, dir,
                          len);
        uri_norm(dir);
        snprintf(np, sizeof(np), "%s", path);
        uri_norm(np);
        size_t dl = strlen(dir);
        return dl && !strncmp(np, dir, dl) && (np[dl] == '/' || np[dl] == '\0');
}

/* The last part of a path ("savepoint-1a2b3c-..." for a Flink savepoint,
 * "chk-42" for a checkpoint). */
static const char *basename_of(const char *path) {
        const char *e = path + strlen(path), *b;
        while (e > path && e[-1] == '/')
                e--;
        for (b = e; b > path && b[-1] != '/'; b--)
                ;
        return b;
}

/* Takes path as the savepoint NEW starts from: 1. how: NULL, or why it is
 * the suspend's without a COMPLETED snapshot (said once). */
static int accept_savepoint(gp_ho_t *h, const char *path, const char *how) {
        snprintf(h->sp, sizeof(h->sp), "%s", path);
        if (how)
                gp_progress_note(&h->pr, "suspend: %s stopped with savepoint %s, %s", h->from,
                                 path, how);
        return 1;
}

/* SUSPENDED with a new path under no snapshot and no legacy record: the
 * operator found the old job already ended when the suspend reconciled and
 * suspended it without a stop (a stop-with-savepoint that completed after
 * the operator's client timeout, a snapshot it could not create after the
 * stop, or a job that failed or was cancelled just before), recording the
 * last savepoint or checkpoint it had seen. It is the stop's savepoint, and
 * so holds the old job's state after everything before T, only if it is a
 * savepoint in the savepoint directory and the job takes no other
 * savepoints (no periodic ones); else this command cannot tell, and stops
 * with the path for the user to vouch for (--savepoint). 1 taken, -1
 * stopped (printed). */
static int noop_suspend(gp_ho_t *h, const cJSON *fd, const char *path) {
        char dir[1024], periodic[64];
        bool in_dir = under_savepoint_dir(fd, path, dir, sizeof(dir));
        bool is_sp = !strncmp(basename_of(path), "savepoint-", 10);
        gp_flinkdep_conf(fd, GP_FLINKDEP_PERIODIC_KEY, periodic, sizeof(periodic));
        bool periodic_off = !*periodic || !strcmp(periodic, "0") || !strcmp(periodic, "0 s") ||
                            !strcmp(periodic, "0s") || !strcmp(periodic, "0 ms");
        if (in_dir && is_sp && periodic_off)
                return accept_savepoint(
                        h, path,
                        "with no UPGRADE FlinkStateSnapshot: the operator found the job "
                        "already stopped when it reconciled the suspend (a stop that "
                        "completed after its timeout, or a snapshot it could not create) and "
                        "recorded that stop's savepoint, the only savepoint in the savepoint "
                        "directory since the job takes no periodic ones");
        fail("%s/%s is SUSPENDED, but the operator took no savepoint this command can prove: "
             "there is no UPGRADE FlinkStateSnapshot and no savepointInfo.lastSavepoint for "
             "status.jobStatus.upgradeSavepointPath '%s', which %s. The operator suspends a "
             "job that had already ended (it failed or was cancelled just before the "
             "suspend, or an earlier stop-with-savepoint outlived the operator's timeout) "
             "without a stop, recording the last checkpoint or savepoint it saw. Nothing is "
             "lost: records at or after T wait in the %s topic.\n  If that path is the old "
             "job's final savepoint, or a checkpoint of it completed after "
             "CLEAR_TO_TEARDOWN (the old job's group had then committed every record before "
             "T), run the same command again with --savepoint %s.\n  Otherwise resume the "
             "old deployment (spec.job.state: running), and once it runs, run the same "
             "command again: it suspends it again for a savepoint.",
             h->ns, h->from, path,
             !in_dir  ? "is not under its savepoint directory (a checkpoint)"
             : !is_sp ? "is not a Flink savepoint directory (savepoint-...)"
                      : "may be a periodic savepoint (" GP_FLINKDEP_PERIODIC_KEY " is set)",
             gp_colour_name(h->new_colour), path);
        return -1;
}

/* Is fd stopped with a new savepoint? (proxy/ops/handover_int.h) */
int gp_ho_old_stopped(gp_ho_t *h, const cJSON *fd, const gp_ho_seen_t *seen) {
        char why[600];
        const char *life = gp_flinkdep_str(fd, "status", "lifecycleState", NULL),
                   *job = gp_flinkdep_str(fd, "status", "jobStatus", "state", NULL),
                   *rec = gp_flinkdep_str(fd, "status", "reconciliationStatus", "state", NULL),
                   *error = gp_flinkdep_str(fd, "status", "error", NULL),
                   *path = gp_flinkdep_str(fd, "status", "jobStatus", "upgradeSavepointPath",
                                           NULL);
        int64_t obs = gp_flinkdep_num(fd, "status", "observedGeneration", NULL);
        if (*error && strcmp(error, seen->err0))
                return fail("the operator could not stop %s/%s with a savepoint: status.error="
                            "%s\n  Nothing is lost: the old job keeps its records before T "
                            "and "
                            "the proxy holds the new colour's in Kafka. The operator retries; "
                            "fix the cause (`kubectl -n %s describe flinkdeployment %s`), "
                            "then "
                            "run the same command again.",
                            h->ns, h->from, error, h->ns, h->from),
                       -1;
        if (!strcmp(life, "FAILED") || !strcmp(job, "FAILED"))
                return fail("the old job failed while it was being stopped: "
                            "status.lifecycleState=%s, status.jobStatus.state=%s, error=%s",
                            life, job, *error ? error : "(none)"),
                       -1;
        gp_progress_show(&h->pr,
                         "suspend: %s lifecycleState=%s job=%s observedGeneration=%" PRId64
                         "/%" PRId64 "%s%s",
                         h->from, *life ? life : "-", *job ? job : "-", obs, seen->gen,
                         *error ? " error (seen before this run): " : "", error);
        if (obs < seen->gen || strcmp(life, "SUSPENDED") || strcmp(rec, "DEPLOYED") ||
            strcmp(job, "FINISHED"))
                return 0;
        /* Stopped. --savepoint names the state NEW starts from, once OLD is
         * suspended (the user's word, after this command said why it could
         * not prove one). */
        if (h->explicit_sp) {
                snprintf(h->sp, sizeof(h->sp), "%s", h->explicit_sp);
                gp_progress_note(&h->pr,
                                 "suspend: %s is SUSPENDED; the new job starts from %s, as "
                                 "--savepoint says (the operator recorded '%s')",
                                 h->from, h->sp, *path ? path : "(none)");
                return 1;
        }
        /* The path must be one this suspend took. */
        if (!*path || !strcmp(path, GP_FLINKDEP_LAST_STATE) || !strcmp(path, h->prev))
                return fail("%s/%s is SUSPENDED but the operator took no new savepoint: "
                            "status.jobStatus.upgradeSavepointPath is '%s'%s. Refusing to "
                            "start %s from it: it does not hold the old job's state at T "
                            "(a last-state fallback, or a job that was not running). Nothing "
                            "is lost: records at or after T wait in the %s topic. Resume the "
                            "old deployment (spec.job.state: running), and once it runs, run "
                            "the same command again: it suspends it again for a savepoint.",
                            h->ns, h->from, path,
                            !strcmp(path, h->prev) ? " (the same as before the suspend)" : "",
                            h->to, gp_colour_name(h->new_colour)),
                       -1;
        const char *lrs = gp_flinkdep_str(fd, "status", "reconciliationStatus",
                                          "lastReconciledSpec", NULL);
        cJSON *spec = cJSON_Parse(lrs);
        bool mode_ok = !strcmp(gp_flinkdep_str(spec, "spec", "job", "upgradeMode", NULL),
                               "savepoint");
        cJSON_Delete(spec);
        if (!mode_ok)
                return fail("%s/%s: the operator reconciled the suspend with upgradeMode "
                            "other "
                            "than savepoint (status.reconciliationStatus.lastReconciledSpec); "
                            "refusing its path '%s'",
                            h->ns, h->from, path),
                       -1;
        /* Where the operator makes FlinkStateSnapshots, the suspend's own
         * is made before the path is recorded: it must be COMPLETED. */
        gp_flinkdep_snap_t snap;
        gp_err_t err;
        if (gp_flinkdep_upgrade_snapshot(h->k, h->ns, h->from, fd, path, &snap, why,
                                         sizeof(why), &err)) {
                snprintf(why, sizeof(why), "%.*s", (int)sizeof(why) - 1, err.msg);
                snap = GP_FLINKDEP_SNAP_PENDING;
        }
        if (snap == GP_FLINKDEP_SNAP_PENDING) {
                h->waited_snapshot = true;
                gp_progress_show(&h->pr, "suspend: %s stopped with savepoint %s; %s", h->from,
                                 path, why);
                return 0;
        }
        if (snap == GP_FLINKDEP_SNAP_COMPLETED)
                return accept_savepoint(h, path, NULL);
        /* No snapshot resource for it: the operator's legacy record (1.12+,
         * snapshot resources off for this resource or operator-wide). */
        if (gp_flinkdep_legacy_savepoint(fd, path))
                return accept_savepoint(h, path,
                                        "recorded in status.jobStatus.savepointInfo."
                                        "lastSavepoint (no FlinkStateSnapshot: snapshot "
                                        "resources are off for it, or operator-wide)");
        return noop_suspend(h, fd, path);
}
