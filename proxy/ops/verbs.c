/* proxy/ops/verbs.c: the operator's part on the control map: init,
 * cutover, wait for CLEAR_TO_TEARDOWN, finish, abort, status
 * (proxy/ops/verbs.h). Below the commands: it parses no argv and may not
 * include proxy/cmd/. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gate/control.h"
#include "gate/hoptime.h"
#include "gate/timeparse.h"
#include "proxy/base/log.h"
#include "proxy/control/ctl.h"
#include "proxy/loop/proxy.h"
#include "proxy/ops/verbs.h"

/* ---- the operator's part ---------------------------------------------- */

/* How often a command reads, decides and writes again after a conflict. */
#define CLI_ATTEMPTS 5
#define AGAIN        2

static const char *get(const gp_cm_t *cm, const char *key) {
        const char *v = gp_cm_get(cm, key);
        return v && *v ? v : "-";
}

/* A heartbeat older than this is stale: the proxy writes one every
 * gate.status.interval.ms (default 1 s). */
#define STALE_MS 30000

/* What the proxy's heartbeat says: "" while it is fresh, else why it is
 * not ("no proxy has reported to this map", "stale: 42 s old"). */
static const char *liveness(const gp_cm_t *cm, char *buf, size_t len) {
        const char *hb = gp_cm_get(cm, GP_KEY_HEARTBEAT), *why;
        const char *stopped = gp_cm_get(cm, GP_KEY_STOPPED);
        int64_t t;
        if (!hb || !*hb)
                return snprintf(buf, len, "no proxy has reported to this map"), buf;
        if (stopped && *stopped)
                return snprintf(buf, len, "the proxy stopped at %s", stopped), buf;
        if (gp_time_parse(hb, strlen(hb), GP_UNIT_MS, &t, &why))
                return snprintf(buf, len, "the heartbeat '%s' is not a time: %s", hb, why),
                       buf;
        int64_t age = gp_now_ms() - t;
        if (age > STALE_MS)
                return snprintf(buf, len, "stale: %" PRId64 " s old", age / 1000), buf;
        buf[0] = '\0';
        return buf;
}

size_t gp_ops_members(const gp_cm_t *cm, int64_t now, gp_mstatus_view_t *v, FILE *list) {
        size_t n, k = 0;
        const gp_kv_t *kv = gp_cm_data(cm, &n);
        gp_mstatus_t *m = calloc(n ? n : 1, sizeof *m);
        size_t pl = strlen(GP_KEY_MEMBER_PREFIX);
        for (size_t i = 0; m && i < n; i++) {
                if (strncmp(kv[i].key, GP_KEY_MEMBER_PREFIX, pl))
                        continue;
                char err[128];
                const char *name = kv[i].key + pl;
                if (gp_mstatus_decode(kv[i].value, strlen(kv[i].value), &m[k], err,
                                      sizeof err)) {
                        if (list)
                                fprintf(list, "member      %s: unreadable: %s\n", name, err);
                        continue;
                }
                if (list) {
                        bool gone = !m[k].run || now - m[k].beat > GP_MEMBER_STALE_MS;
                        fprintf(list, "member      %s: %s%s\n", name, kv[i].value,
                                !m[k].run ? " (stopped)"
                                : gone    ? " (silent: not counted)"
                                          : "");
                }
                k++;
        }
        gp_mstatus_view(m ? m : (gp_mstatus_t[1]){{0}}, k, now, GP_MEMBER_STALE_MS, v);
        free(m);
        return k;
}

/* Loads and parses the map; prints why not and returns NULL. */
static gp_cm_t *load(const char *cmd, gp_ctl_t *ctl, gp_control_t *c) {
        gp_err_t err;
        char why[600];
        gp_cm_t *cm = gp_ctl_load(ctl, &err);
        size_t n;
        if (!cm) {
                fprintf(stderr, "gate-proxy %s: %s\n", cmd, err.msg);
                return NULL;
        }
        const gp_kv_t *kv = gp_cm_data(cm, &n);
        if (c && gp_control_parse(c, kv, n, why, sizeof(why))) {
                fprintf(stderr, "gate-proxy %s: %s: %s\n", cmd, gp_ctl_describe(ctl), why);
                gp_cm_destroy(cm);
                return NULL;
        }
        return cm;
}

/* Loads the map into *c and its resourceVersion into rv. 0 or 1. */
/* warn: where to copy the proxy's gate-proxy.warning ("" without one), or
 * NULL. */
static int load_control(const char *cmd, gp_ctl_t *ctl, gp_control_t *c, char *rv,
                        size_t rvlen, char *warn, size_t warnlen) {
        gp_cm_t *cm = load(cmd, ctl, c);
        if (!cm)
                return 1;
        snprintf(rv, rvlen, "%s", gp_cm_resource_version(cm));
        const char *w = gp_cm_get(cm, GP_KEY_WARNING);
        if (warn)
                snprintf(warn, warnlen, "%s", w ? w : "");
        gp_cm_destroy(cm);
        return 0;
}

/* The proxy's watermark and liveness as the map shows them. */
static void proxy_view(gp_ctl_t *ctl, int64_t *wm, char *live, size_t len) {
        const char *why;
        *wm = GP_TS_NONE;
        live[0] = '\0';
        gp_cm_t *cm = gp_ctl_load(ctl, NULL);
        if (!cm)
                return;
        const char *w = gp_cm_get(cm, GP_KEY_WATERMARK);
        if (w && *w && gp_parse_i64(w, strlen(w), wm, &why))
                *wm = GP_TS_NONE;
        liveness(cm, live, len);
        gp_cm_destroy(cm);
}

/* Writes patch: on a backend with compare-and-set (Kubernetes) only if
 * the map is still at rv, else unconditionally (the file, as before).
 * 0 written, AGAIN (the map moved: read and decide again), 1 failed. */
static int update(const char *cmd, gp_ctl_t *ctl, const char *rv, const gp_kv_t *kv, size_t n,
                  int attempt) {
        gp_err_t err;
        gp_errcode_t rc = gp_ctl_write(ctl, gp_ctl_cli_cas(ctl) ? rv : NULL, kv, n, &err);
        if (rc == GP_OK)
                return 0;
        if (rc == GP_ERR_CONFLICT && attempt + 1 < CLI_ATTEMPTS)
                return AGAIN;
        if (rc == GP_ERR_CONFLICT)
                fprintf(stderr, "gate-proxy %s: %s: the map kept changing (%d attempts): %s\n",
                        cmd, gp_ctl_describe(ctl), CLI_ATTEMPTS, err.msg);
        else
                fprintf(stderr, "gate-proxy %s: %s\n", cmd, err.msg);
        return 1;
}

int gp_ops_ctl_init(gp_ctl_t *ctl, gp_colour_t active, int force) {
        gp_err_t err;
        /* An id ended at the start: every transition's is above it, and a
         * copy of this map is older than any of them (gate/control.h). */
        char tid[40];
        snprintf(tid, sizeof tid, "%" PRId64 " ended", gp_now_ms());
        gp_kv_t kv[] = {{GP_KEY_ACTIVE, gp_colour_upper(active)},
                        {GP_KEY_STAGE, "RUNNING"},
                        {GP_KEY_FIRST, "true"},
                        {GP_KEY_DELAY, "0"},
                        {GP_KEY_TID, tid}};
        gp_errcode_t rc = gp_ctl_create(ctl, kv, 5, force, &err);
        if (rc == GP_ERR_CONFLICT) {
                fprintf(stderr, "gate-proxy init: %s exists; use --force to overwrite it\n",
                        gp_ctl_describe(ctl));
                return 1;
        }
        if (rc != GP_OK) {
                fprintf(stderr, "gate-proxy init: %s\n", err.msg);
                return 1;
        }
        printf("%s: first deployment, every record goes to %s\n", gp_ctl_describe(ctl),
               gp_colour_name(active));
        return 0;
}

int gp_ops_ctl_cutover(gp_ctl_t *ctl, const gp_cutover_opts_t *o) {
        char d[24], at[24], al[24], rv[64], warn[512] = "", live[128];
        int64_t wm;
        proxy_view(ctl, &wm, live, sizeof(live));
        if (o->at != GP_TS_NONE && wm != GP_TS_NONE && o->at <= wm) {
                /* The watermark never passes the highest event time routed,
                 * so the proxy would refuse this T for certain. */
                fprintf(stderr,
                        "gate-proxy cutover: --at %" PRId64 " is at or below the proxy's "
                        "watermark %" PRId64 " (gate-proxy.watermark): records at or after it "
                        "already went to the old colour, so the proxy would refuse it; ask "
                        "for a later T or leave --at out to let it choose\n",
                        o->at, wm);
                return 1;
        }
        if (o->at != GP_TS_NONE && o->at < gp_now_ms() && !o->quiet)
                fprintf(stderr,
                        "gate-proxy cutover: warning: --at %" PRId64 " is %" PRId64
                        " s in the past; the proxy refuses it if it has already routed a "
                        "record at or after it to the old colour (see `gate-proxy status`)\n",
                        o->at, (gp_now_ms() - o->at) / 1000);
        snprintf(d, sizeof(d), "%" PRId64, o->delay_ms);
        snprintf(at, sizeof(at), "%" PRId64, o->at);
        snprintf(al, sizeof(al), "%" PRId64, o->align_ms);
        for (int attempt = 0;; attempt++) {
                gp_control_t c;
                if (load_control("cutover", ctl, &c, rv, sizeof(rv), warn, sizeof(warn)))
                        return 1;
                bool mid = gp_control_open(&c);
                if (mid && c.stage == GP_STAGE_CLEAR_TO_TEARDOWN && !o->force) {
                        fprintf(stderr,
                                "gate-proxy cutover: the transition to %s is not finished "
                                "(stage CLEAR_TO_TEARDOWN): stop the old deployment, run "
                                "`gate-proxy finish`, then cut over (or use --force)\n",
                                gp_colour_name(c.active));
                        return 1;
                }
                if (mid && !o->force) {
                        fprintf(stderr,
                                "gate-proxy cutover: a transition to %s is in progress (stage "
                                "%s); wait for it, `gate-proxy abort` it, or use --force\n",
                                gp_colour_name(c.active), gp_stage_name(c.stage));
                        return 1;
                }
                if (!mid && c.active == o->to) {
                        fprintf(stderr,
                                "gate-proxy cutover: %s is already the active colour; "
                                "nothing to do\n",
                                gp_colour_name(o->to));
                        return 1;
                }
                /* The new transition's id, above the map's last one
                 * (gate/control.h). */
                char tid[24];
                snprintf(tid, sizeof tid, "%" PRId64,
                         c.tid >= gp_now_ms() ? c.tid + 1 : gp_now_ms());
                gp_kv_t kv[] = {
                        {GP_KEY_TID, tid},
                        {GP_KEY_ACTIVE, gp_colour_upper(o->to)},
                        {GP_KEY_STAGE, "TRANSITIONING"},
                        {GP_KEY_FIRST, "false"},
                        {GP_KEY_DELAY, d},
                        {GP_KEY_WM_STAGE, NULL},
                        {GP_KEY_TOGGLE, NULL},
                        {GP_KEY_REQ_CUTOFF, o->at == GP_TS_NONE ? NULL : at},
                        {GP_KEY_REQ_ALIGN, o->align_ms > 0 ? al : NULL},
                };
                int rc = update("cutover", ctl, rv, kv, sizeof(kv) / sizeof(kv[0]), attempt);
                if (rc == AGAIN)
                        continue;
                if (rc)
                        return 1;
                break;
        }
        printf("%s: transition to %s started (delay %" PRId64 " ms%s%s)\n",
               gp_ctl_describe(ctl), gp_colour_name(o->to), o->delay_ms,
               o->at == GP_TS_NONE ? "" : ", asked T=", o->at == GP_TS_NONE ? "" : at);
        /* What the proxy warns of, said where the transition is asked for. */
        if (*warn && !o->quiet)
                fprintf(stderr, "gate-proxy cutover: warning: the proxy reports %s\n", warn);
        if (*live && !o->quiet)
                fprintf(stderr,
                        "gate-proxy cutover: note: %s; the transition starts once a "
                        "proxy reads the map\n",
                        live);
        return 0;
}

int gp_ops_ctl_wait_clear(gp_ctl_t *ctl, int64_t timeout_ms, int quiet) {
        int64_t end = gp_mono_ms() + timeout_ms;
        char last[1100] = "", drained[600] = "", live[128] = "";
        while (gp_mono_ms() < end) {
                gp_err_t err;
                gp_cm_t *cm = gp_ctl_load(ctl, &err);
                if (cm) {
                        const char *stage = get(cm, GP_KEY_STAGE);
                        char line[1100];
                        snprintf(line, sizeof(line),
                                 "stage=%s T=%s phase=%s watermark=%s blue=%s green=%s "
                                 "dlq=%s%s%s",
                                 stage, get(cm, GP_KEY_TOGGLE), get(cm, GP_KEY_PHASE),
                                 get(cm, GP_KEY_WATERMARK), get(cm, GP_KEY_COUNT_BLUE),
                                 get(cm, GP_KEY_COUNT_GREEN), get(cm, GP_KEY_COUNT_DLQ),
                                 *get(cm, GP_KEY_ERROR) != '-' ? " error=" : "",
                                 *get(cm, GP_KEY_ERROR) != '-' ? get(cm, GP_KEY_ERROR) : "");
                        int done = !strcmp(stage, "CLEAR_TO_TEARDOWN");
                        /* What CLEAR_TO_TEARDOWN waits for besides the
                         * watermark: the old job's consumer group. */
                        const char *drain = gp_cm_get(cm, GP_KEY_DRAIN);
                        snprintf(drained, sizeof(drained), "%s", drain ? drain : "");
                        liveness(cm, live, sizeof(live));
                        if (!done && drain && *drain) {
                                size_t at = strlen(line);
                                snprintf(line + at, sizeof(line) - at, "\n  %s", drain);
                        }
                        gp_cm_destroy(cm);
                        if (!quiet && strcmp(line, last)) {
                                printf("%s\n", line);
                                fflush(stdout);
                                snprintf(last, sizeof(last), "%s", line);
                        }
                        if (done) {
                                if (!quiet)
                                        printf("CLEAR_TO_TEARDOWN: the old deployment has "
                                               "everything before T and may be stopped; "
                                               "then run `gate-proxy finish`\n");
                                return 0;
                        }
                }
                gp_sleep_ms(200);
        }
        if (quiet)
                return 1;
        /* Why not, as far as the map tells. */
        if (*drained)
                fprintf(stderr,
                        "gate-proxy cutover: no CLEAR_TO_TEARDOWN within %" PRId64
                        " s; the last drain check: %s (the old job has to consume "
                        "what was routed to its colour, in the group "
                        "gate.drain.group.<colour> names)\n",
                        timeout_ms / 1000, drained);
        else if (*live)
                fprintf(stderr,
                        "gate-proxy cutover: no CLEAR_TO_TEARDOWN within %" PRId64
                        " s: %s; start the proxy (`gate-proxy run`)\n",
                        timeout_ms / 1000, live);
        else
                fprintf(stderr,
                        "gate-proxy cutover: no CLEAR_TO_TEARDOWN within %" PRId64
                        " s; the proxy runs: `gate-proxy status` shows its watermark "
                        "against T\n",
                        timeout_ms / 1000);
        return 1;
}

int gp_ops_ctl_finish(gp_ctl_t *ctl, int force) {
        gp_control_t c;
        char rv[64];
        for (int attempt = 0;; attempt++) {
                if (load_control("finish", ctl, &c, rv, sizeof(rv), NULL, 0))
                        return 1;
                if (c.stage == GP_STAGE_RUNNING && !force) {
                        fprintf(stderr,
                                "gate-proxy finish: stage is already RUNNING (%s "
                                "active): nothing to finish\n",
                                gp_colour_name(c.active));
                        return 1;
                }
                /* An abandoned transition ends here too: the survivor goes on
                 * as a first deployment. */
                if (c.stage != GP_STAGE_CLEAR_TO_TEARDOWN && c.stage != GP_STAGE_FAILING &&
                    !force) {
                        fprintf(stderr,
                                "gate-proxy finish: stage is %s, not CLEAR_TO_TEARDOWN: "
                                "the old deployment may still be owed records (use --force "
                                "to override)\n",
                                gp_stage_name(c.stage));
                        return 1;
                }
                gp_kv_t kv[] = {{GP_KEY_STAGE, "RUNNING"}};
                int rc = update("finish", ctl, rv, kv, 1, attempt);
                if (rc == AGAIN)
                        continue;
                if (rc)
                        return 1;
                break;
        }
        printf("%s: stage=RUNNING, %s is the active colour\n", gp_ctl_describe(ctl),
               gp_colour_name(c.active));
        return 0;
}

/* gate-proxy.redelivery ("to=blue sent=N left=M lost=L open=K") as a
 * line of its own; nothing when there is none, the raw value when it does
 * not parse. */
static void redelivery_line(const char *v) {
        char to[8];
        unsigned long long sent, left, lost, open;
        if (!v || !*v)
                return;
        if (sscanf(v, "to=%7s sent=%llu left=%llu lost=%llu open=%llu", to, &sent, &left,
                   &lost, &open) != 5) {
                printf("redelivery  %s\n", v);
                return;
        }
        if (open)
                printf("redelivery  to %s: %llu records sent, %llu source offsets left to "
                       "read "
                       "again on %llu partition(s)",
                       to, sent, left, open);
        else
                printf("redelivery  to %s: done, %llu records sent", to, sent);
        if (lost)
                printf("; %llu source offsets LOST: retention removed them before they "
                       "were read again",
                       lost);
        printf("\n");
}

int gp_ops_ctl_abort(gp_ctl_t *ctl, int has_to, gp_colour_t to) {
        gp_colour_t survivor = to;
        char rv[64];
        for (int attempt = 0;; attempt++) {
                gp_control_t c;
                if (load_control("abort", ctl, &c, rv, sizeof(rv), NULL, 0))
                        return 1;
                if (c.is_first || c.stage == GP_STAGE_RUNNING) {
                        if (c.stage == GP_STAGE_FAILING)
                                fprintf(stderr,
                                        "gate-proxy abort: the transition was already "
                                        "abandoned (stage FAILING, %s active); `gate-proxy "
                                        "finish` sets stage=RUNNING\n",
                                        gp_colour_name(c.active));
                        else
                                fprintf(stderr,
                                        "gate-proxy abort: no transition in progress "
                                        "(stage %s, %s active): nothing to abort\n",
                                        gp_stage_name(c.stage), gp_colour_name(c.active));
                        return 1;
                }
                survivor = has_to ? to : gp_colour_other(c.active);
                gp_kv_t kv[] = {{GP_KEY_ACTIVE, gp_colour_upper(survivor)},
                                {GP_KEY_STAGE, "FAILING"},
                                {GP_KEY_FIRST, "true"},
                                {GP_KEY_WM_STAGE, NULL},
                                {GP_KEY_TOGGLE, NULL},
                                {GP_KEY_REQ_CUTOFF, NULL},
                                {GP_KEY_REQ_ALIGN, NULL}};
                int rc = update("abort", ctl, rv, kv, sizeof(kv) / sizeof(kv[0]), attempt);
                if (rc == AGAIN)
                        continue;
                if (rc)
                        return 1;
                break;
        }
        printf("%s: transition abandoned, every record goes to %s\n", gp_ctl_describe(ctl),
               gp_colour_name(survivor));
        return 0;
}

/* A JSON string's characters, escaped. */
static void json_chars(const char *s) {
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        printf("\\%c", *s);
                else if ((unsigned char)*s < 0x20)
                        printf("\\u%04x", *s);
                else
                        putchar(*s);
        }
}

/* gate-proxy.hop for people (gate/hoptime.h): 1 with the description in
 * b, 0 when the map has none, -1 (the reason in b) when it is not valid. */
static int hop_described(const gp_cm_t *cm, char *b, size_t len) {
        const char *v = gp_cm_get(cm, GP_KEY_HOP);
        gp_hop_t h;
        if (!v || !*v)
                return 0;
        if (gp_hoptime_parse(&h, v, strlen(v), b, len))
                return -1;
        gp_hoptime_describe(&h, b, len);
        return 1;
}

int gp_ops_ctl_status(gp_ctl_t *ctl, int json) {
        gp_cm_t *cm = load("status", ctl, NULL);
        size_t n;
        char hop[600];
        if (!cm)
                return 1;
        const gp_kv_t *kv = gp_cm_data(cm, &n);
        int hop_rc = hop_described(cm, hop, sizeof hop);
        if (json) {
                printf("{");
                for (size_t i = 0; i < n; i++) {
                        printf("%s\n  \"", i ? "," : "");
                        for (const char *s = kv[i].key; *s; s++)
                                printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
                        printf("\": \"");
                        json_chars(kv[i].value);
                        printf("\"");
                }
                /* The hand-over's time in words, beside its value. */
                if (hop_rc) {
                        printf("%s\n  \"hand-over\": \"", n ? "," : "");
                        json_chars(hop);
                        printf("\"");
                }
                printf("\n}\n");
                gp_cm_destroy(cm);
                return 0;
        }
        gp_control_t c;
        char err[400], tbuf[40];
        printf("control     %s (resourceVersion %s)\n", gp_ctl_describe(ctl),
               gp_cm_resource_version(cm));
        int rc = 0;
        if (gp_control_parse(&c, kv, n, err, sizeof(err))) {
                printf("INVALID     %s\n", err);
                rc = 1;
        } else
                printf("requested   active=%s stage=%s first-deployment=%s delay=%" PRId64
                       " ms transition-id=%s\n",
                       gp_colour_upper(c.active), gp_stage_name(c.stage),
                       c.is_first ? "true" : "false", c.delay_ms, get(cm, GP_KEY_TID));
        const char *t = gp_cm_get(cm, GP_KEY_TOGGLE);
        int64_t tv;
        const char *why;
        if (t && *t && !gp_parse_i64(t, strlen(t), &tv, &why))
                printf("cutoff      T=%s (%s) %s\n", t, gp_time_format(tv, tbuf, sizeof(tbuf)),
                       get(cm, GP_KEY_WM_STAGE));
        else
                printf("cutoff      none %s\n", get(cm, GP_KEY_WM_STAGE));
        const char *rq = gp_cm_get(cm, GP_KEY_REQ_CUTOFF);
        if (rq && *rq)
                printf("requested   cutoff T=%s (gate-proxy cutover --at)\n", rq);
        char live[128];
        liveness(cm, live, sizeof(live));
        /* BLUE->BLUE: no transition, one owner. */
        const char *tr = get(cm, GP_KEY_TRANSITION), *arrow = strstr(tr, "->");
        if (arrow && strlen(arrow + 2) == (size_t)(arrow - tr) &&
            !strncmp(tr, arrow + 2, (size_t)(arrow - tr)))
                tr = "-";
        printf("proxy       phase=%s transition=%s watermark=%s heartbeat=%s%s%s%s\n",
               get(cm, GP_KEY_PHASE), tr, get(cm, GP_KEY_WATERMARK), get(cm, GP_KEY_HEARTBEAT),
               *live ? " (" : "", live, *live ? ")" : "");
        /* An abandoned transition: its T, and where its records went. */
        const char *pc = gp_cm_get(cm, GP_KEY_CUTOFF);
        if (rc == 0 && !strcmp(get(cm, GP_KEY_PHASE), "aborted") && pc && *pc &&
            !gp_parse_i64(pc, strlen(pc), &tv, &why)) {
                gp_colour_t surv = c.active;
                const char *rdv = gp_cm_get(cm, GP_KEY_REDELIVERY);
                bool rd = rdv && *rdv;
                printf("aborted     T=%s (%s) abandoned: the %s records routed to %s by it "
                       "stay there%s%s; every record now goes to %s\n",
                       pc, gp_time_format(tv, tbuf, sizeof(tbuf)),
                       get(cm, GP_KEY_ABORTED_ROUTED), gp_colour_name(gp_colour_other(surv)),
                       rd ? " and are re-delivered to " : "", rd ? gp_colour_name(surv) : "",
                       gp_colour_name(surv));
                redelivery_line(rdv);
        }
        printf("counts      blue=%s green=%s dlq=%s late=%s aborted-routed=%s\n",
               get(cm, GP_KEY_COUNT_BLUE), get(cm, GP_KEY_COUNT_GREEN),
               get(cm, GP_KEY_COUNT_DLQ), get(cm, GP_KEY_COUNT_LATE),
               get(cm, GP_KEY_ABORTED_ROUTED));
        printf("error       %s\n", get(cm, GP_KEY_ERROR));
        /* gate.membership=group: each member's own status, and the
         * pipeline's sum over those that beat. */
        gp_mstatus_view_t mv;
        if (gp_ops_members(cm, gp_now_ms(), &mv, stdout)) {
                printf("pipeline    %zu member(s) reporting%s: phase=%s%s partitions=%" PRIu64
                       " blue=%" PRIu64 " green=%" PRIu64 " dlq=%" PRIu64 " late=%" PRIu64,
                       mv.live, mv.gone ? " (others silent or stopped)" : "",
                       mv.live ? gp_phase_name(mv.phase) : "-",
                       mv.one_phase ? "" : " (not all: see each member)", mv.parts, mv.n[0],
                       mv.n[1], mv.n[2], mv.late);
                if (mv.rd_members)
                        printf(" redelivery: sent=%" PRIu64 " left=%" PRIu64 " lost=%" PRIu64
                               " open=%" PRIu64,
                               mv.rd_sent, mv.rd_left, mv.rd_lost, mv.rd_open);
                printf("\n");
        }
        /* gate.membership=group: the group's members, client id/host=partitions. */
        const char *mb = gp_cm_get(cm, GP_KEY_MEMBERS);
        if (mb && *mb)
                printf("members     %s\n", mb);
        /* `gate-proxy handover` keeps its progress in the map. */
        const char *ho = gp_cm_get(cm, GP_KEY_HANDOVER "step");
        if (ho && *ho)
                printf("handover    %s -> %s step=%s T=%s savepoint=%s\n",
                       get(cm, GP_KEY_HANDOVER "from"), get(cm, GP_KEY_HANDOVER "to"), ho,
                       get(cm, GP_KEY_HANDOVER "cutoff"),
                       get(cm, GP_KEY_HANDOVER "savepoint"));
        if (*get(cm, GP_KEY_DRAIN) != '-')
                printf("drain       %s\n", get(cm, GP_KEY_DRAIN));
        if (hop_rc)
                printf("hand-over   %s%s\n", hop_rc < 0 ? "unreadable: " : "", hop);
        if (*get(cm, GP_KEY_WARNING) != '-')
                printf("warning     %s\n", get(cm, GP_KEY_WARNING));
        gp_cm_destroy(cm);
        return rc;
}

/* The commands on a control file, by path (the demo uses these). */
#define ON_FILE(call)                                                                         \
        do {                                                                                  \
                gp_ctl_t *ctl = gp_ctl_new_file(path);                                        \
                if (!ctl) {                                                                   \
                        fprintf(stderr, "gate-proxy: out of memory\n");                       \
                        return 1;                                                             \
                }                                                                             \
                int rc_ = (call);                                                             \
                gp_ctl_destroy(ctl);                                                          \
                return rc_;                                                                   \
        } while (0)

int gp_ops_init(const char *path, gp_colour_t active, int force) {
        ON_FILE(gp_ops_ctl_init(ctl, active, force));
}
int gp_ops_cutover(const char *path, const gp_cutover_opts_t *o) {
        ON_FILE(gp_ops_ctl_cutover(ctl, o));
}
int gp_ops_wait_clear(const char *path, int64_t timeout_ms, int quiet) {
        ON_FILE(gp_ops_ctl_wait_clear(ctl, timeout_ms, quiet));
}
int gp_ops_finish(const char *path, int force) {
        ON_FILE(gp_ops_ctl_finish(ctl, force));
}
int gp_ops_abort(const char *path, int has_to, gp_colour_t to) {
        ON_FILE(gp_ops_ctl_abort(ctl, has_to, to));
}
int gp_ops_status(const char *path, int json) {
        ON_FILE(gp_ops_ctl_status(ctl, json));
}
