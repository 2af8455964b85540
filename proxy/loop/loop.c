/* proxy/loop/loop.c: the gate-proxy loop (docs/DESIGN.md, The data path).
 *
 *   between windows, the periodic tasks of one table: read the control
 *     map, compute the watermark, let the gate decide (T, the close);
 *     discover partitions; hand the status to its thread;
 *   one window: consume up to gate.commit.records records or for
 *     gate.commit.interval.ms, route each, produce it to the same
 *     partition of its colour topic, and run the table's in-window task
 *     (a new control map ends the window early); then commit it with the
 *     offsets, each carrying the gate checkpoint (proxy/loop/delivery.c).
 *     An abortable error aborts, rewinds the consumer and the gate to the
 *     last commit, and goes on; a rewind or a growth that cannot assign
 *     the partitions ends the process (a restart reads from the commit).
 *
 * The loop's only blocking calls are Kafka's: status and publication
 * (proxy/control/status.c) and the drain check (proxy/loop/drainer.c) run on threads of
 * their own and are handed results between windows; the control map is
 * read from the watch thread's copy or a local file. With
 * gate.membership=assign the consumer assigns itself every partition and
 * the group id only names where offsets and checkpoints are committed;
 * with group it is a member of that group (proxy/loop/group.c) and a
 * hand-over's T is agreed by every member (proxy/loop/hop.c). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/control.h"
#include "gate/mstatus.h"
#include "gate/timeparse.h"
#include "proxy/base/fault.h"
#include "proxy/loop/internal.h"
#include "proxy/loop/watchdog.h"
#include "proxy/base/log.h"

#define BATCH 1024
/* Longest wait for a batch to fill: a record that arrives alone is produced
 * within this, not at the end of the window (make bench's latency runs). A
 * full batch returns at once. */
#define GP_WAIT_MS 5
/* Longest wait at a stop for the last status and decisions to be written. */
#define FLUSH_MS 10000
/* ... after a refusal (the reason in gate-proxy.error). */
#define REFUSE_FLUSH_MS 3000
/* group: the longest wait, before joining, for a look at the group that
 * settles whether to join (gp_members_settled). */
#define PREJOIN_MS 5000
/* Members named in gate-proxy.members. */
#define STATUS_MEMBERS 8

/* ---- tasks between windows -------------------------------------------- */

/* gate-proxy.error: the first of a bad control map, a refused request,
 * held partitions; "" when all is well. Each source keeps its own, so one
 * clearing does not hide another. */
static const char *current_error(gp_proxy_t *p) {
        if (p->refusal[0])
                return p->refusal;
        if (p->ctl_error[0])
                return p->ctl_error;
        int64_t other = p->group && p->status ? gp_status_other_cutoff(p->status) : GP_TS_NONE;
        if (other != GP_TS_NONE) {
                snprintf(p->map_t_note, sizeof p->map_t_note,
                         "the map stores the cutoff %" PRId64 ", not the T=%" PRId64
                         " every partition routes by; not followed, not written over",
                         other, p->cgate.cutoff);
                return p->map_t_note;
        }
        if (p->last_refusal[0])
                return p->last_refusal;
        for (int i = 0; i < p->n_topics; i++)
                if (p->topics[i].held[0])
                        return p->topics[i].held;
        return "";
}

/* What a task tells the loop. */
typedef enum {
        TASK_ON,     /* go on */
        TASK_DECIDE, /* inside a window: end it, there is something to decide on */
        TASK_FATAL,  /* end the process (GP_EXIT_FATAL); the task has said why */
} task_rc_t;

/* Each partition's lag from the consumer's cached end offsets (no
 * request: librdkafka keeps them from its fetches). */
static void update_lags(gp_proxy_t *p) {
        pthread_mutex_lock(&p->lock);
        if (p->n_lags < p->n_pptrs) {
                gp_lag_t *nl = realloc(p->lags, p->n_pptrs * sizeof(*nl));
                if (!nl) {
                        pthread_mutex_unlock(&p->lock);
                        return;
                }
                p->lags = nl;
        }
        size_t n = 0;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n && n < p->n_pptrs; i++) {
                        if (!p->topics[t].parts[i].owned)
                                continue;
                        int64_t lo = -1, hi = -1, at = p->topics[t].parts[i].done.pos;
                        if (rd_kafka_get_watermark_offsets(p->cons, p->topics[t].name, i, &lo,
                                                           &hi) ||
                            hi < 0)
                                hi = at;
                        p->lags[n++] = (gp_lag_t){p->topics[t].name, i,
                                                  at >= 0 && hi > at ? hi - at : 0};
                }
        p->n_lags = n;
        pthread_mutex_unlock(&p->lock);
}

size_t gp_proxy_lags(gp_proxy_t *p, gp_lag_t *out, size_t max) {
        pthread_mutex_lock(&p->lock);
        size_t n = p->n_lags < max ? p->n_lags : max;
        if (n)
                memcpy(out, p->lags, n * sizeof(*out));
        n = p->n_lags;
        pthread_mutex_unlock(&p->lock);
        return n;
}

void gp_proxy_map_writes(gp_proxy_t *p, uint64_t out[GP_MAP_WRITES]) {
        gp_status_writes(p->status, out);
}

/* An instant or a lag as a status value: "" when there is none. */
static void set_opt(gp_status_kv_t *st, const char *key, bool have, int64_t v) {
        if (have)
                gp_status_set(st, key, "%" PRId64, v);
        else
                gp_status_set(st, key, "%s", "");
}

/* gate-proxy.members: "3: client/host=4, ..." (partitions assigned, "?"
 * while the group rebalances, "!" after a member of other topics). */
static void members_status(gp_proxy_t *p, char *b, size_t len) {
        gp_member_info_t mv[STATUS_MEMBERS];
        size_t shown;
        int n = gp_members_view(p->members, mv, STATUS_MEMBERS, &shown);
        b[0] = '\0';
        if (n < 0)
                return;
        size_t at = (size_t)snprintf(b, len, "%d%s", n, shown ? ":" : "");
        for (size_t i = 0; i < shown && at < len; i++) {
                char parts[16] = "?";
                if (mv[i].partitions >= 0)
                        snprintf(parts, sizeof parts, "%d", mv[i].partitions);
                at += (size_t)snprintf(b + at, len - at, "%s %s=%s%s", i ? "," : "",
                                       mv[i].label, parts, mv[i].foreign ? "!" : "");
        }
        if ((size_t)n > shown && at < len)
                snprintf(b + at, len - at, ", and %zu more", (size_t)n - shown);
}

/* Group mode: this member's own status key (gate/mstatus.h), beside the
 * pipeline keys the members share. */
static void member_status(gp_proxy_t *p, const gp_stats_t *s, int64_t now,
                          gp_status_kv_t *st) {
        if (!p->member_key[0]) {
                size_t at = (size_t)snprintf(p->member_key, sizeof p->member_key, "%s",
                                             GP_KEY_MEMBER_PREFIX);
                /* A ConfigMap key: letters, digits, '-', '_' and '.'. */
                for (const char *c = p->conf->instance; *c && at + 1 < sizeof p->member_key;
                     c++)
                        p->member_key[at++] = (isalnum((unsigned char)*c) || *c == '-' ||
                                               *c == '_' || *c == '.')
                                                      ? *c
                                                      : '-';
                p->member_key[at] = '\0';
        }
        gp_mstatus_t m = {
                .phase = p->cgate.phase,
                .tid = p->cgate.tid,
                .parts = p->n_pptrs,
                .n = {s->n[0], s->n[1], s->n[2]},
                .late = s->late,
                .rd = s->rd.marked && p->cgate.phase == GP_PHASE_ABORTED,
                .rd_to = p->cgate.new_c,
                .rd_sent = s->rd.sent,
                .rd_left = s->rd.left,
                .rd_lost = s->rd.lost,
                .rd_open = s->rd.open,
                .beat = now,
                .run = !p->stopped,
        };
        char line[GP_MSTATUS_MAX];
        if (gp_mstatus_encode(&m, line, sizeof line) > 0)
                gp_status_set(st, p->member_key, "%s", line);
}

/* gate-proxy.warning: a committed checkpoint whose highest event time is
 * past the future bound (routed before gate.event-time.max-future.ms
 * applied, docs/DESIGN.md, Reading the event time), which holds every
 * cutoff above it; then the drain warning. */
static void warning(gp_proxy_t *p, int64_t now, char *b, size_t len) {
        size_t n = 0;
        const char *topic = NULL;
        int part = -1;
        int64_t hi = 0;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        const gp_pslot_t *ps = &p->topics[t].parts[i];
                        if (!ps->owned || !gp_gate_future(&p->gconf, ps->done.st.hi, now))
                                continue;
                        if (!n++) {
                                topic = p->topics[t].name;
                                part = i;
                                hi = ps->done.st.hi;
                        }
                }
        if (!n) {
                snprintf(b, len, "%s", p->drain_warning);
                return;
        }
        snprintf(b, len,
                 "%zu partition(s) carry in their checkpoint a highest event time past "
                 "gate.event-time.max-future.ms (%s/%d: %" PRId64
                 "), routed before that bound: every cutoff T must be above it, so the new "
                 "colour would get nothing (docs/DESIGN.md, Reading the event time)",
                 n, topic, part, hi);
        size_t at = strlen(b), dl = strlen(p->drain_warning);
        if (dl && at + 2 + dl < len) { /* the drain warning after it, when it fits */
                memcpy(b + at, "; ", 2);
                memcpy(b + at + 2, p->drain_warning, dl + 1);
        }
}

/* Task: the status keys, handed to the status thread. */
static task_rc_t status_task(gp_proxy_t *p, int64_t now) {
        const gp_wm_view_t *wv = &p->wv;
        gp_status_kv_t st = {0};
        char hb[40];
        gp_stats_t s;
        update_lags(p);
        gp_proxy_stats(p, &s);
        int64_t dl = p->cgate.phase != GP_PHASE_SPLIT
                             ? -1
                             : gp_drainer_lag(p->drain, p->cgate.old_c);
        gp_time_format(now, hb, sizeof(hb));
        gp_status_set(&st, GP_KEY_PHASE, "%s", gp_phase_name(p->cgate.phase));
        gp_status_set(&st, GP_KEY_TRANSITION, "%s->%s", gp_colour_upper(p->cgate.old_c),
                      gp_colour_upper(p->cgate.new_c));
        set_opt(&st, GP_KEY_CUTOFF, p->cgate.cutoff != GP_TS_NONE, p->cgate.cutoff);
        set_opt(&st, GP_KEY_WATERMARK, wv->wm != GP_TS_NONE, wv->wm);
        gp_status_set(&st, GP_KEY_COUNT_BLUE, "%" PRIu64, s.n[0]);
        gp_status_set(&st, GP_KEY_COUNT_GREEN, "%" PRIu64, s.n[1]);
        gp_status_set(&st, GP_KEY_COUNT_DLQ, "%" PRIu64, s.n[2]);
        gp_status_set(&st, GP_KEY_COUNT_LATE, "%" PRIu64, s.late);
        gp_status_set(&st, GP_KEY_ABORTED_ROUTED, "%" PRIu64, s.aborted_routed);
        if (s.rd.marked && p->cgate.phase == GP_PHASE_ABORTED)
                gp_status_set(&st, GP_KEY_REDELIVERY,
                              "to=%s sent=%" PRIu64 " left=%" PRIu64 " lost=%" PRIu64
                              " open=%" PRIu64,
                              gp_colour_name(p->cgate.new_c), s.rd.sent, s.rd.left, s.rd.lost,
                              s.rd.open);
        else
                gp_status_set(&st, GP_KEY_REDELIVERY, "%s", "");
        gp_status_set(&st, GP_KEY_ERROR, "%s", current_error(p));
        gp_status_set(&st, GP_KEY_HEARTBEAT, "%s", hb);
        /* A stopped proxy warns of nothing; the map says when it stopped. */
        char warn[GP_STATUS_VALUE_MAX];
        warning(p, now, warn, sizeof warn);
        gp_status_set(&st, GP_KEY_WARNING, "%s", p->stopped ? "" : warn);
        gp_status_set(&st, GP_KEY_STOPPED, "%s", p->stopped ? hb : "");
        set_opt(&st, GP_KEY_DRAIN_LAG, dl >= 0, dl);
        char drain[GP_STATUS_VALUE_MAX] = "";
        if (p->cgate.phase == GP_PHASE_SPLIT)
                gp_drainer_said(p->drain, p->cgate.old_c, drain, sizeof drain);
        gp_status_set(&st, GP_KEY_DRAIN, "%s", drain);
        if (p->group)
                member_status(p, &s, now, &st);
        if (p->members) {
                /* A stopped member's view of the group is old news; a
                 * running one writes its own within the interval. */
                char mb[GP_STATUS_VALUE_MAX] = "";
                if (!p->stopped)
                        members_status(p, mb, sizeof mb);
                gp_status_set(&st, GP_KEY_MEMBERS, "%s", mb);
        }
        gp_status_post(p->status, &st);
        if (s.rd.open)
                GP_FAULT("redelivering"); /* a re-delivery open, committed and posted */
        return TASK_ON;
}

/* Is the old side drained? Asks the drain thread with what is
 * committed to the old colour now; its answer counts only for these
 * targets (proxy/loop/drainer.h). */
static bool drained(gp_proxy_t *p) {
        gp_colour_t old = p->gate.old_c;
        size_t n = 0;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        if (p->topics[t].parts[i].owned)
                                p->drain_t[n++] = (gp_drain_target_t){
                                        p->topics[t].out_name[old], i,
                                        p->topics[t].parts[i].done.wrote[old]};
        return gp_drainer_ask(p->drain, old, p->drain_t, n);
}

static void refused(gp_proxy_t *p, int reason) {
        pthread_mutex_lock(&p->lock);
        p->stats.refusals[reason]++;
        pthread_mutex_unlock(&p->lock);
}

/* The hand-over's instants (gate/hoptime.h) this boundary reached, after
 * the gate's step: a new transition starts the record, TRANSITIONING seen,
 * with assign the close rule first holding and the gate closing (the drain
 * check passed); with group, hop.c records the close. Handed to the status
 * thread, which adds T and CLEAR_TO_TEARDOWN as it writes them. */
static void hop_track(gp_proxy_t *p, const gp_gate_t *before, const gp_step_t *st,
                      int64_t now) {
        const gp_control_t *map = gp_ctl_current(p->ctl);
        bool open = p->gate.phase == GP_PHASE_WAITING || p->gate.phase == GP_PHASE_SPLIT ||
                    p->gate.phase == GP_PHASE_CLOSED;
        if (st->events & GP_EV_TRANSITION) {
                gp_hoptime_init(&p->hop);
                p->hop_posted_close = GP_TS_NONE;
                memset(p->hop_by, 0, sizeof p->hop_by);
        }
        if (open && p->hop.seen == GP_TS_NONE && map->stage == GP_STAGE_TRANSITIONING &&
            !map->is_first && map->active == p->gate.new_c && p->gate.old_c != p->gate.new_c) {
                gp_hoptime_start(&p->hop, now);
                memset(p->hop_by, 0, sizeof p->hop_by);
        }
        if (!p->group) {
                /* The gate closes at once when the rule holds and no drain
                 * check waits: then both instants are now. */
                const gp_gate_t *g = st->events & GP_EV_CLOSED ? before : &p->gate;
                gp_close_rule_t r = gp_gate_close_rule(g, &p->wv, &p->gconf, now);
                if (r != GP_CLOSE_NONE && !(st->events & GP_EV_FORCED))
                        gp_hoptime_closed(&p->hop, r, p->wv.idle, (int)p->n_pptrs, now);
        }
        if (st->events & GP_EV_FORCED)
                gp_hoptime_closed(&p->hop, GP_CLOSE_FORCED, p->wv.idle, (int)p->n_pptrs, now);
        if (st->events & GP_EV_CLOSED)
                gp_hoptime_mark(&p->hop, &p->hop.drained, now);
        if (!p->status)
                return;
        gp_status_hop(p->status, &p->hop);
        /* The close is news at once, not at the next status interval:
         * `gate-proxy handover` asks for the old job's checkpoint on it. */
        if (p->hop.closed != p->hop_posted_close) {
                p->hop_posted_close = p->hop.closed;
                if (p->hop.closed != GP_TS_NONE)
                        status_task(p, now);
        }
}

/* Task, at every boundary: the control map, the watermark, the gate's
 * decisions (T, the close). */
static task_rc_t control_task(gp_proxy_t *p, int64_t now) {
        gp_wm_view_t *wv = &p->wv;
        int rc = gp_ctl_poll(p->ctl, false);
        const char *cerr = gp_ctl_error(p->ctl);
        if (rc < 0 && strcmp(p->ctl_error, cerr)) {
                gp_warn("control map invalid, keeping the last good state: %s", cerr);
                gp_errcode_t code = gp_ctl_error_code(p->ctl);
                refused(p, code == GP_ERR_INVALID     ? GP_REF_INVALID
                           : code == GP_ERR_NOT_FOUND ? GP_REF_MISSING
                           : code == GP_ERR_TRANSPORT ? GP_REF_UNREACHABLE
                           : code == GP_ERR_DENIED    ? GP_REF_DENIED
                                                      : GP_REF_ERROR);
        } else if (rc >= 0 && p->ctl_error[0])
                gp_info("control map valid again");
        snprintf(p->ctl_error, sizeof(p->ctl_error), "%s", rc < 0 ? cerr : "");
        const gp_control_t *ctl = gp_ctl_current(p->ctl);

        gp_gate_watermark((const gp_part_t *const *)p->pptrs, p->n_pptrs, &p->gconf, now, wv);
        if (gp_drainer_has(p->drain, p->gate.old_c) &&
            gp_gate_close_due(&p->gate, wv, &p->gconf, now))
                wv->drained = drained(p);
        int held = 0;
        for (int i = 0; i < p->n_topics; i++)
                held += p->topics[i].held[0] != '\0';
        int conflict =
                p->group && p->status && gp_status_other_cutoff(p->status) != GP_TS_NONE;
        pthread_mutex_lock(&p->lock);
        p->stats.wm = wv->wm;
        p->stats.beat_mono = gp_mono_ms();
        p->stats.ctl_valid = rc >= 0;
        p->stats.held = held;
        p->stats.map_conflict = conflict;
        pthread_mutex_unlock(&p->lock);

        gp_control_t own;
        if (p->group) {
                /* Nothing owned: no partition to checkpoint a decision in. */
                if (!p->gate_known || !p->n_pptrs)
                        return TASK_ON;
                if (gp_hop_census(p, ctl, wv))
                        return TASK_FATAL;
                if (ctl->stage == GP_STAGE_TRANSITIONING) {
                        /* T and the close come from the agreement over
                         * every partition's committed checkpoint
                         * (proxy/loop/hop.c), never from this
                         * instance's partitions alone (docs/DESIGN.md,
                         * Scale-out). The transition itself, an abort and
                         * a forced close still apply. */
                        own = *ctl;
                        own.stage = GP_STAGE_INITIALIZING;
                        ctl = &own;
                }
        }

        gp_step_t st;
        gp_gate_t before = p->gate;
        int changed =
                gp_gate_step(&p->gate, p->pptrs, p->n_pptrs, ctl, wv, &p->gconf, now, &st);
        if (p->group) {
                if (!p->agree &&
                    (p->gate.phase == GP_PHASE_WAITING || p->gate.phase == GP_PHASE_SPLIT) &&
                    gp_hop_agreer(p))
                        return TASK_FATAL;
                if (p->agree)
                        gp_hop_step(p, gp_ctl_current(p->ctl), now);
        }
        hop_track(p, &before, &st, now);
        gp_err_t rerr;
        if (gp_redeliver_boundary(p, &before, &rerr)) {
                gp_error("%s; exiting (code %d) for a restart, which goes on from the last "
                         "commit",
                         rerr.msg, GP_EXIT_FATAL);
                return TASK_FATAL;
        }
        if (changed) {
                p->need_commit = true;
                if (st.events & GP_EV_TRANSITION)
                        gp_info("transition %s -> %s requested: routing all to %s until the "
                                "cutoff is chosen",
                                gp_colour_name(p->gate.old_c), gp_colour_name(p->gate.new_c),
                                gp_colour_name(p->gate.old_c));
                if (st.events & GP_EV_CUTOFF)
                        gp_info("cutoff chosen: T=%" PRId64 " (W=%" PRId64 ", highest routed "
                                "%" PRId64 ", delay %" PRId64 " ms)",
                                p->gate.cutoff, wv->wm == GP_TS_NONE ? -1 : wv->wm,
                                wv->hi_max == GP_TS_NONE ? -1 : wv->hi_max, ctl->delay_ms);
                bool own_closed = p->group;
                for (size_t i = 0; own_closed && i < p->n_pptrs; i++)
                        own_closed = p->pptrs[i]->closed;
                if ((st.events & GP_EV_FORCED) && own_closed)
                        /* Another instance found every partition closed
                         * first (proxy/loop/hop.c). */
                        gp_info("old side %s closed: the map says %s and every partition "
                                "this instance owns had closed it; all records now go to %s",
                                gp_colour_name(before.old_c), gp_stage_name(ctl->stage),
                                gp_colour_name(p->gate.new_c));
                else if (st.events & GP_EV_FORCED)
                        gp_warn("the map says %s before the proxy closed the old side: "
                                "closing now; records with ts < T go to %s as late",
                                gp_stage_name(ctl->stage), gp_colour_name(p->gate.new_c));
                else if (st.events & GP_EV_CLOSED)
                        gp_info("old side %s closed: W=%" PRId64 " >= T + lateness (or idle); "
                                "all records now go to %s",
                                gp_colour_name(p->gate.old_c),
                                wv->wm == GP_TS_NONE ? -1 : wv->wm,
                                gp_colour_name(p->gate.new_c));
                if (st.events & GP_EV_ABORTED)
                        gp_warn("transition %s -> %s aborted: all records go to %s",
                                gp_colour_name(before.old_c), gp_colour_name(before.new_c),
                                gp_colour_name(p->gate.new_c));
                if (st.events & GP_EV_OWNER)
                        gp_info("first deployment: all records go to %s",
                                gp_colour_name(p->gate.new_c));
        }
        if (st.events & GP_EV_REFUSED) {
                if (strcmp(p->last_refusal, st.err)) {
                        gp_warn("request refused, routing unchanged: %s", st.err);
                        refused(p, GP_REF_REQUEST);
                        snprintf(p->last_refusal, sizeof(p->last_refusal), "%s", st.err);
                }
        } else
                p->last_refusal[0] = '\0';
        return TASK_ON;
}

/* Task, inside a window: a new valid control map ends the window early,
 * so it applies within CTL_WATCH_MS even with a long
 * gate.commit.interval.ms. Only a new valid map ends it: a map that stays
 * invalid changes nothing here (control_task reads it at the boundary). */
static task_rc_t control_watch_task(gp_proxy_t *p, int64_t now) {
        (void)now;
        return gp_ctl_poll(p->ctl, false) == 1 ? TASK_DECIDE : TASK_ON;
}

/* Task (group): a refusal the members watch found (another pipeline's
 * member in the group, a live instance under other settings) ends the
 * loop; the open transaction is aborted, never committed (refuse_end). */
static task_rc_t members_task(gp_proxy_t *p, int64_t now) {
        (void)now;
        if (p->refused)
                return TASK_FATAL;
        if (!p->members || !gp_members_refusal(p->members, p->refusal, sizeof p->refusal))
                return TASK_ON;
        p->refused = GP_EXIT_GROUP;
        gp_error("%s", p->refusal);
        return TASK_FATAL;
}

/* Task: partitions that appeared (gate.discovery.interval.ms). */
static task_rc_t discovery_task(gp_proxy_t *p, int64_t now) {
        gp_err_t err;
        (void)now;
        if (!gp_topics_discover(p, &err))
                return TASK_ON;
        gp_error("%s; exiting (code %d) for a restart, which goes on from the last commit",
                 err.msg, GP_EXIT_FATAL);
        return TASK_FATAL;
}

/* Where a task runs: between windows, or inside one after each batch
 * (while no transactional error is pending). */
typedef enum { AT_BOUNDARY, IN_WINDOW } task_at_t;

/* What the loop runs besides records, each at most once per interval (0:
 * every time), in table order, as redis's serverCron runs its jobs. */
typedef struct task {
        task_rc_t (*run)(gp_proxy_t *p, int64_t now);
        int64_t (*interval_ms)(const gp_conf_t *conf);
        task_at_t at;
        int64_t next; /* mono ms */
} task_t;

/* How often a window looks for a new control map: a change applies
 * within this. A look is a lock and a compare, or a stat. */
#define CTL_WATCH_MS 100

static int64_t every_time(const gp_conf_t *c) {
        (void)c;
        return 0;
}
static int64_t ctl_watch_ms(const gp_conf_t *c) {
        (void)c;
        return CTL_WATCH_MS;
}
static int64_t discovery_ms(const gp_conf_t *c) {
        return c->discovery_ms;
}
static int64_t status_ms(const gp_conf_t *c) {
        return c->status_interval_ms;
}

/* Runs the due tasks of one place; the gravest verdict (a fatal one
 * stops the round). */
static task_rc_t run_tasks(gp_proxy_t *p, task_t *tasks, size_t n, task_at_t at) {
        task_rc_t rc = TASK_ON;
        for (size_t i = 0; i < n && rc != TASK_FATAL; i++) {
                int64_t mono = gp_mono_ms();
                if (tasks[i].at != at || mono < tasks[i].next)
                        continue;
                task_rc_t r = tasks[i].run(p, gp_now_ms());
                tasks[i].next = mono + tasks[i].interval_ms(p->conf);
                if (r > rc)
                        rc = r;
        }
        return rc;
}

/* ---- one window ------------------------------------------------------- */

/* m's topic slot when m is a record to route now: no error, a partition
 * this process reads, not before its position (fetched again after a
 * rewind), its partition not held for a schema. NULL: skip it. */
static gp_tslot_t *routable(gp_proxy_t *p, const rd_kafka_message_t *m) {
        gp_tslot_t *t;
        if (m->err || !(t = gp_topics_slot(p, m->rkt)) || m->partition >= t->n ||
            !t->parts[m->partition].owned || t->parts[m->partition].colourless ||
            m->offset < t->parts[m->partition].work.pos || t->parts[m->partition].hold ||
            t->parts[m->partition].ahold)
                return NULL;
        return t;
}

/* One window: begun at its first record (at once when a decision must be
 * checkpointed); *open says whether it began, so whether it must be
 * committed: the one commit rule of both delivery modes. It ends full
 * (gate.commit.records), due (gate.commit.interval.ms), stopping, when a
 * task finds something to decide on, or at an error (GP_TX_ABORT,
 * GP_TX_FATAL). */
static gp_txres_t window(gp_proxy_t *p, task_t *tasks, size_t n_tasks,
                         rd_kafka_message_t **msgs, bool *open) {
        int64_t count = 0, deadline = gp_mono_ms() + p->conf->commit_interval_ms;
        gp_txres_t r = GP_TX_OK;
        *open = false;
        if (p->need_commit) {
                r = gp_delivery_begin(p);
                *open = r == GP_TX_OK;
        }
        while (r == GP_TX_OK) {
                int64_t left = deadline - gp_mono_ms();
                if (p->stop || count >= p->conf->commit_records || left <= 0)
                        break;
                size_t want = (size_t)(p->conf->commit_records - count);
                ssize_t got = rd_kafka_consume_batch_queue(
                        p->queue, (int)(left < GP_WAIT_MS ? left : GP_WAIT_MS), msgs,
                        want < BATCH ? want : BATCH);
                if (p->group && (p->rb_ended || p->rb_exit)) {
                        /* A rebalance inside the read committed or aborted
                         * the window (group.c), whatever it moved. */
                        if (p->rb_exit)
                                r = GP_TX_FATAL;
                        p->rb_ended = false;
                        *open = false;
                        {
                                /* The batch may hold records read before the
                                 * rebalance (past the committed positions after
                                 * an abort), and librdkafka 2.0.x may have
                                 * dropped some it had read, resuming past them
                                 * (group.c, end_window): the batch is dropped,
                                 * and every owned partition sought to its
                                 * committed position. */
                                gp_err_t err;
                                p->rb_rewound = false;
                                for (ssize_t i = 0; i < got; i++)
                                        rd_kafka_message_destroy(msgs[i]);
                                got = 0;
                                if (r == GP_TX_OK && gp_rewind(p, &err)) {
                                        gp_error("%s; exiting (code %d) for a restart, which "
                                                 "goes on from the last commit",
                                                 err.msg, GP_EXIT_FATAL);
                                        r = GP_TX_FATAL;
                                }
                        }
                        if (r == GP_TX_OK && p->need_commit) {
                                r = gp_delivery_begin(p);
                                *open = r == GP_TX_OK;
                        }
                }
                /* A consumer that failed for good (another member took
                 * its group.instance.id) reads nothing more: the process
                 * ends, its window uncommitted. */
                if (p->group && r == GP_TX_OK && gp_group_consumer_fatal(p))
                        r = GP_TX_FATAL;
                int64_t now = gp_now_ms(), bmono = gp_mono_ms();
                /* Schemas the registry's thread has fetched: their
                 * partitions go on. */
                if (p->reg && gp_record_release(p, now, bmono))
                        r = GP_TX_FATAL;
                for (ssize_t i = 0; i < got; i++) {
                        rd_kafka_message_t *m = msgs[i];
                        gp_tslot_t *t = r == GP_TX_OK ? routable(p, m) : NULL;
                        uint32_t id;
                        if (t && p->reg && gp_record_schema_unknown(p, m, bmono, &id)) {
                                /* m and the rest of its partition's batch
                                 * come again once the registry answers. */
                                gp_record_hold(p, t, m, id);
                                t = NULL;
                        }
                        if (!t) {
                                if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                        gp_log_at(GP_LOG_WARN,
                                                  m->rkt ? rd_kafka_topic_name(m->rkt) : NULL,
                                                  m->partition, "consume: %s",
                                                  rd_kafka_message_errstr(m));
                                rd_kafka_message_destroy(m);
                                continue;
                        }
                        if (!*open) {
                                r = gp_delivery_begin(p);
                                *open = r == GP_TX_OK;
                        }
                        if (r == GP_TX_OK) {
                                GP_FAULT("before-produce");
                                int hr = gp_record_handle(p, t, m, now, bmono);
                                if (hr == GP_RECORD_HELD)
                                        count--;
                                else if (hr)
                                        r = GP_TX_ABORT;
                                count++;
                        }
                        rd_kafka_message_destroy(m);
                }
                rd_kafka_poll(p->prod, 0);
                if (r == GP_TX_OK) {
                        task_rc_t tr = run_tasks(p, tasks, n_tasks, IN_WINDOW);
                        if (tr == TASK_FATAL)
                                r = GP_TX_FATAL;
                        else if (tr == TASK_DECIDE)
                                break;
                }
        }
        return r;
}

/* ---- the loop ---------------------------------------------------------- */

void gp_proxy_beat(gp_proxy_t *p) {
        pthread_mutex_lock(&p->lock);
        p->stats.beat_mono = gp_mono_ms();
        pthread_mutex_unlock(&p->lock);
}

/* kafka.bootstrap.servers (or metadata.broker.list) as configured. */
static const char *brokers(const gp_conf_t *conf) {
        for (int i = 0; i < conf->n_kafka; i++)
                if (!strcmp(conf->kafka[i].key, "bootstrap.servers") ||
                    !strcmp(conf->kafka[i].key, "metadata.broker.list"))
                        return conf->kafka[i].value;
        return "?";
}

/* After a refusal: the open transaction aborted (nothing of it is
 * committed), a last status with the reason in gate-proxy.error; the
 * consumer leaves the group when the proxy is destroyed (its rebalance
 * then only unassigns). */
static void refuse_end(gp_proxy_t *p) {
        if (p->txn_begin >= 0) {
                if (p->dv->abort(p) == GP_TX_OK)
                        gp_warn("the open transaction is aborted: nothing of it is committed");
                p->txn_begin = -1;
        }
        status_task(p, gp_now_ms());
        if (gp_status_flush(p->status, REFUSE_FLUSH_MS))
                gp_warn("the reason was not written to %s within %d s",
                        gp_ctl_describe(p->ctl), REFUSE_FLUSH_MS / 1000);
}

/* group: a look at the group before joining it (at most PREJOIN_MS): a
 * member of another pipeline, or a live instance writing under other
 * settings, is refused before this instance takes any partition. A group
 * that does not settle by then (rebalancing) is joined; the watch goes on
 * beside the loop. */
static bool join_allowed(gp_proxy_t *p) {
        int64_t end = gp_mono_ms() + PREJOIN_MS;
        while (!p->stop && gp_mono_ms() < end && !gp_members_settled(p->members, 200))
                gp_proxy_beat(p);
        if (p->stop)
                return false;
        if (!gp_members_refusal(p->members, p->refusal, sizeof p->refusal))
                return true;
        p->refused = GP_EXIT_GROUP;
        gp_error("%s", p->refusal);
        refuse_end(p);
        return false;
}

/* Waits until a broker answers, saying once per change which cannot be
 * reached; false when stopped meanwhile. */
static bool reach_brokers(gp_proxy_t *p) {
        char said[512] = "";
        while (!p->stop) {
                gp_proxy_beat(p);
                const struct rd_kafka_metadata *md = NULL;
                rd_kafka_resp_err_t e = rd_kafka_metadata(p->cons, 0, NULL, &md, 500);
                if (!e) {
                        rd_kafka_metadata_destroy(md);
                        if (said[0])
                                gp_info("Kafka brokers reachable again at %s",
                                        brokers(p->conf));
                        return true;
                }
                if (strcmp(said, rd_kafka_err2str(e))) {
                        gp_error("cannot reach the Kafka brokers at %s "
                                 "(kafka.bootstrap.servers): "
                                 "%s; retrying (SIGTERM stops)",
                                 brokers(p->conf), rd_kafka_err2str(e));
                        snprintf(said, sizeof(said), "%s", rd_kafka_err2str(e));
                }
        }
        return false;
}

/* At start, what the map says of another instance of the pipeline: a
 * heartbeat this fresh with no clean stop after it is a proxy that runs
 * (or one killed seconds ago). Said once, with what will happen. */
static void say_others(gp_proxy_t *p) {
        const gp_cm_t *cm = gp_ctl_document(p->ctl);
        const char *hb = cm ? gp_cm_get(cm, GP_KEY_HEARTBEAT) : NULL;
        const char *stopped = cm ? gp_cm_get(cm, GP_KEY_STOPPED) : NULL, *why;
        int64_t t;
        if (!hb || !*hb || (stopped && *stopped) ||
            gp_time_parse(hb, strlen(hb), GP_UNIT_MS, &t, &why))
                return;
        int64_t age = gp_now_ms() - t;
        if (age > 3 * p->conf->status_interval_ms + 5000)
                return;
        double s = (double)(age > 0 ? age : 0) / 1000.0;
        if (p->group) {
                const char *mb = gp_cm_get(cm, GP_KEY_MEMBERS);
                gp_info("%s has a heartbeat %.1f s old: instances of pipeline %s run (members "
                        "%s); this one joins group %s as one more member, and the source "
                        "partitions are shared out again among all of them",
                        gp_ctl_describe(p->ctl), s, p->conf->pipeline, mb && *mb ? mb : "?",
                        p->conf->group_id);
        } else if (!p->eos)
                gp_warn("another gate-proxy of pipeline %s seems to run (or was killed "
                        "seconds ago): %s has its heartbeat %.1f s old and no clean stop "
                        "since. Without transactions nothing "
                        "fences either: both would route every record. Stop one of them; "
                        "several instances of one pipeline share its partitions with "
                        "gate.membership=group",
                        p->conf->pipeline, gp_ctl_describe(p->ctl), s);
        else
                gp_warn("another gate-proxy of pipeline %s seems to run (or was killed "
                        "seconds ago): %s has its heartbeat %.1f s old and no clean stop "
                        "since. This one takes its place "
                        "(transactional.id %s): the other is fenced at its next commit and "
                        "exits 3. If that is not what you want, stop this one; several "
                        "instances of one pipeline share its partitions with "
                        "gate.membership=group",
                        p->conf->pipeline, gp_ctl_describe(p->ctl), s,
                        p->conf->transactional_id);
}

static int run(gp_proxy_t *p);

int gp_proxy_run(gp_proxy_t *p) {
        gp_watchdog_t *wd = gp_watchdog_start(p);
        int code = run(p);
        gp_watchdog_stop(wd);
        return code;
}

static int run(gp_proxy_t *p) {
        gp_err_t err;
        int code = GP_EXIT_OK;
        int64_t next_warn = 0;
        task_t tasks[] = {
                {members_task, every_time, AT_BOUNDARY, 0},
                {control_task, every_time, AT_BOUNDARY, 0},
                {discovery_task, discovery_ms, AT_BOUNDARY,
                 gp_mono_ms() + p->conf->discovery_ms},
                {status_task, status_ms, AT_BOUNDARY, 0},
                {control_watch_task, ctl_watch_ms, IN_WINDOW, 0},
                {members_task, ctl_watch_ms, IN_WINDOW, 0},
        };
        size_t n_tasks = sizeof(tasks) / sizeof(tasks[0]);
        p->wv = (gp_wm_view_t){.wm = GP_TS_NONE};
        gp_hoptime_init(&p->hop);
        p->hop_posted_close = GP_TS_NONE;
        gp_info("gate-proxy %s (librdkafka %s): pipeline %s, brokers %s, control %s, %s, "
                "event time %s",
                GP_VERSION, rd_kafka_version_str(), p->conf->pipeline, brokers(p->conf),
                gp_ctl_describe(p->ctl), p->dv->name, p->conf->event_time);

        /* 1. A valid control map first: consume nothing without one. */
        while (!p->stop && (gp_proxy_beat(p), gp_ctl_poll(p->ctl, true) < 0)) {
                if (gp_mono_ms() >= next_warn) {
                        gp_warn("waiting for a valid control map: %s", gp_ctl_error(p->ctl));
                        next_warn = gp_mono_ms() + 5000;
                }
                rd_kafka_poll(p->prod, 200);
        }
        if (p->stop)
                return GP_EXIT_OK;
        say_others(p);

        /* 2. Brokers, topics, transactions, checkpoint, assignment. */
        if (!reach_brokers(p))
                return GP_EXIT_OK;
        if (gp_topics_setup(p, &err)) {
                gp_error("%s", err.msg);
                /* A topic missing or too small; anything else (metadata
                 * that did not come, no memory) is worth a restart. */
                return err.code == GP_ERR_NOT_FOUND || err.code == GP_ERR_INVALID
                               ? GP_EXIT_TOPICS
                               : GP_EXIT_FATAL;
        }
        if (p->eos) {
                rd_kafka_error_t *e = rd_kafka_init_transactions(p->prod, GP_KAFKA_WAIT_MS);
                if (e) {
                        gp_error("init transactions (transactional.id %s): %s",
                                 p->conf->transactional_id, rd_kafka_error_string(e));
                        rd_kafka_error_destroy(e);
                        return gp_delivery_exit_code(p) == GP_EXIT_FENCED ? GP_EXIT_FENCED
                                                                          : GP_EXIT_FATAL;
                }
        }
        if (p->group) {
                /* Partitions, offsets and decisions come with the group's
                 * assignments (group.c). */
                gp_gate_from_control(&p->gate, gp_ctl_current(p->ctl), gp_now_ms());
                p->cgate = p->gate;
                p->agree_since = -1;
                if (!join_allowed(p))
                        return p->stop ? GP_EXIT_OK : p->refused;
                if (gp_group_subscribe(p, &err)) {
                        gp_error("%s", err.msg);
                        return GP_EXIT_FATAL;
                }
                gp_members_joining(p->members);
        } else {
                if (gp_restore(p, gp_ctl_current(p->ctl), &err)) {
                        gp_error("%s", err.msg);
                        return GP_EXIT_STATE;
                }
                if (gp_assign_all(p, &err)) {
                        gp_error("%s", err.msg);
                        return GP_EXIT_FATAL;
                }
        }
        gp_delivery_committed(p);
        pthread_mutex_lock(&p->lock);
        p->stats.running = 1;
        pthread_mutex_unlock(&p->lock);
        if (p->group) {
                gp_info("joining group %s as instance %s (transactional.id %s), %d topic(s), "
                        "%s, pipeline %s, settings fp %08" PRIx32,
                        p->conf->group_id, p->conf->instance,
                        p->eos ? p->conf->transactional_id : "-", p->n_topics, p->dv->name,
                        p->conf->pipeline, p->fp);
        } else
                gp_info("routing %d topic(s), %zu partition(s), %s, pipeline %s", p->n_topics,
                        p->n_pptrs, p->dv->name, p->conf->pipeline);

        /* 3. Windows, until stopped with nothing left to checkpoint. */
        rd_kafka_message_t *msgs[BATCH];
        while (!p->stop || p->need_commit) {
                if (run_tasks(p, tasks, n_tasks, AT_BOUNDARY) == TASK_FATAL) {
                        code = p->refused ? p->refused : GP_EXIT_FATAL;
                        break;
                }
                bool open;
                gp_txres_t r = window(p, tasks, n_tasks, msgs, &open);
                if (r == GP_TX_OK && open)
                        r = gp_delivery_commit(p);
                if (r == GP_TX_ABORT)
                        r = gp_delivery_abort(p);
                if (r == GP_TX_FATAL) {
                        code = p->rb_exit   ? p->rb_exit
                               : p->refused ? p->refused
                                            : gp_delivery_exit_code(p);
                        break;
                }
        }
        if (p->refused)
                refuse_end(p);
        if (code == GP_EXIT_OK) {
                /* What the last commit decided, and a last status that
                 * says the proxy stopped. */
                p->stopped = true;
                status_task(p, gp_now_ms());
                if (gp_status_flush(p->status, FLUSH_MS))
                        gp_warn("the last status and decisions were not written to %s "
                                "within %d s",
                                gp_ctl_describe(p->ctl), FLUSH_MS / 1000);
                gp_info("stopped after %" PRIu64 " transactions", p->stats.txns);
        }
        return code;
}
