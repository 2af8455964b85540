/* proxy/loop/hop.c: a hand-over with gate.membership=group, at every
 * boundary of the loop (docs/DESIGN.md, Scale-out: one T for N
 * instances): the owned partitions' promises, T once the agreement
 * thread (proxy/loop/agreer.c) reads it in every partition's committed
 * checkpoint, each partition's close of the old side, and the close of
 * the pipeline's. The rule is gate/agree.h's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/control.h"
#include "proxy/base/log.h"
#include "proxy/loop/internal.h"

/* The drain check on every partition of the old colour, those other
 * instances write too (their targets unknown here: the check reads each
 * to its end). */
static bool drained_all(gp_proxy_t *p) {
        gp_colour_t old = p->gate.old_c;
        size_t all = 0, n = 0;
        for (int t = 0; t < p->n_topics; t++)
                all += (size_t)p->topics[t].n;
        gp_drain_target_t *dt = calloc(all ? all : 1, sizeof(*dt));
        if (!dt)
                return false;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        dt[n++] = (gp_drain_target_t){p->topics[t].out_name[old], i,
                                                      ps->owned ? ps->done.wrote[old] : -1};
                }
        bool d = gp_drainer_ask(p->drain, old, dt, n);
        free(dt);
        return d;
}

/* /metrics: what the agreement's last read found (ag NULL: no transition
 * open), and the highest promise of an owned partition. */
static void agree_stats(gp_proxy_t *p, const gp_agreed_t *ag) {
        int64_t hi = GP_TS_NONE;
        for (size_t i = 0; ag && i < p->n_pptrs; i++)
                if (p->pptrs[i]->promise != GP_TS_NONE && p->pptrs[i]->promise > hi)
                        hi = p->pptrs[i]->promise;
        pthread_mutex_lock(&p->lock);
        p->stats.agree_parts = ag ? (int)ag->parts : 0;
        p->stats.agree_promised = ag ? (int)ag->promised : 0;
        p->stats.agree_closed = ag ? (int)ag->closed : 0;
        p->stats.agree_other = ag ? (int)ag->other : 0;
        p->stats.promise = hi;
        pthread_mutex_unlock(&p->lock);
}

/* The log, once per change: the agreement's last read found lines
 * written under other settings, which it takes nothing from. */
static void other_settings(gp_proxy_t *p, const gp_agreed_t *ag) {
        if (!ag->read_ms || ag->other == p->agree_other_said)
                return;
        p->agree_other_said = ag->other;
        if (ag->other)
                gp_warn("agreement: %zu of %zu partition(s) hold a committed line written "
                        "under other gate settings (fp %08" PRIx32
                        ", this instance's %08" PRIx32
                        "): no promise, T or close is taken from them until their owner "
                        "commits them under these settings; a live instance that writes "
                        "them so is refused (exit %d)",
                        ag->other, ag->parts, ag->other_fp, p->fp, GP_EXIT_GROUP);
        else
                gp_info("agreement: every partition's line is written under this instance's "
                        "settings again");
}

/* gate.membership=group, while the gate splits at T (docs/DESIGN.md,
 * Scale-out: one T for N instances): each owned partition closes the old
 * side for itself once its own watermark passes T + lateness, or it has
 * been quiet long enough (gp_agree_part_close_due), and the next
 * transaction commits that in its checkpoint (cl=1); from then on its
 * records with ts < T count as late. The old side of the pipeline closes
 * (CLEAR_TO_TEARDOWN follows from the status thread) once the agreement
 * thread reads every partition closed in its committed checkpoint, the
 * drain check passes on every partition of the old colour, and the map
 * shows T (gp_agree_clear). Any instance may find it; each closes its
 * own gate. */
static void closing(gp_proxy_t *p, const gp_control_t *ctl, int64_t now) {
        size_t newly = 0;
        for (size_t i = 0; i < p->n_pptrs; i++) {
                gp_part_t *pt = p->pptrs[i];
                gp_close_rule_t r = pt->closed ? GP_CLOSE_NONE
                                               : gp_agree_part_close_rule(pt, p->gate.cutoff,
                                                                          p->gate.cutoff_wall,
                                                                          &p->gconf, now);
                if (r != GP_CLOSE_NONE) {
                        pt->closed = true;
                        p->hop_by[r]++;
                        newly++;
                }
        }
        if (newly) {
                p->need_commit = true;
                gp_debug("%zu partition(s) closed the old side by their own watermark", newly);
        }
        gp_agreed_t ag;
        gp_agreer_ask(p->agree, p->gate.old_c, p->gate.new_c, p->gate.tid, p->gate.cutoff,
                      NULL, &ag);
        agree_stats(p, &ag);
        other_settings(p, &ag);
        char note[sizeof p->close_note] = "";
        bool ok = false;
        if (ag.read_ms && !ag.all_closed) {
                snprintf(note, sizeof note, "%zu of %zu partition(s) closed", ag.closed,
                         ag.parts);
        } else if (ag.all_closed) {
                /* The hand-over's close (gate/hoptime.h): by idleness when
                 * any partition this instance owns closed so. */
                int idle = p->hop_by[GP_CLOSE_IDLE];
                gp_hoptime_closed(&p->hop, idle ? GP_CLOSE_IDLE : GP_CLOSE_WATERMARK, idle,
                                  (int)p->n_pptrs, now);
                int64_t stored = ctl->wm_stage == GP_WMS_SET ? ctl->toggle : GP_TS_NONE;
                gp_agree_map_t map = gp_agree_map(stored, p->gate.cutoff);
                bool drained = !gp_drainer_has(p->drain, p->gate.old_c) || drained_all(p);
                bool all = true;
                ok = gp_agree_clear(&all, 1, drained, map);
                if (!ok)
                        snprintf(note, sizeof note, "every partition closed; waiting for %s",
                                 map != GP_AGREE_MAP_AGREES ? "the map to show T"
                                                            : "the drain check");
        }
        if (strcmp(note, p->close_note)) {
                if (note[0])
                        gp_info("old side %s not closed yet: %s",
                                gp_colour_name(p->gate.old_c), note);
                snprintf(p->close_note, sizeof p->close_note, "%s", note);
        }
        if (!ok)
                return;
        gp_gate_t line = p->gate;
        char why[256];
        line.phase = GP_PHASE_CLOSED;
        if (gp_gate_adopt(&p->gate, &line, why, sizeof why) < 0) {
                gp_warn("closing: %s", why);
                return;
        }
        p->need_commit = true;
        p->close_note[0] = '\0';
        gp_hoptime_mark(&p->hop, &p->hop.drained, now);
        gp_agreer_idle(p->agree);
        gp_info("old side %s closed: every one of the %zu source partitions closed it in its "
                "committed checkpoint under T=%" PRId64 "%s; all records now go to %s",
                gp_colour_name(p->gate.old_c), ag.parts, p->gate.cutoff,
                gp_drainer_has(p->drain, p->gate.old_c) ? ", and the old job drained them"
                                                        : "",
                gp_colour_name(p->gate.new_c));
}

int gp_hop_agreer(gp_proxy_t *p) {
        if (p->agree)
                return 0;
        /* The agreement thread starts with the first transition this
         * instance is asked to begin, waits or splits in. */
        const char *names[p->n_topics > 0 ? p->n_topics : 1];
        gp_err_t err;
        for (int t = 0; t < p->n_topics; t++)
                names[t] = p->topics[t].name;
        if (!(p->agree = gp_agreer_new(p->conf, names, p->n_topics, p->fp, &err))) {
                gp_error("%s; exiting (code %d) for a restart", err.msg, GP_EXIT_FATAL);
                return -1;
        }
        return 0;
}

int gp_hop_census(gp_proxy_t *p, const gp_control_t *ctl, gp_wm_view_t *wv) {
        p->census = false;
        int64_t tid = gp_control_tid(ctl);
        gp_colour_t owner = gp_gate_owner(&p->gate);
        if (p->gate.phase == GP_PHASE_WAITING || p->gate.phase == GP_PHASE_SPLIT || !tid ||
            tid == p->gate.tid || ctl->active == owner ||
            (ctl->stage != GP_STAGE_INITIALIZING && ctl->stage != GP_STAGE_TRANSITIONING))
                return 0;
        if (gp_hop_agreer(p))
                return -1;
        gp_agreed_t ag;
        gp_agreer_ask(p->agree, owner, ctl->active, tid, GP_TS_NONE, &p->gate, &ag);
        wv->unsettled = ag.read_ms ? ag.unsettled : GP_UNSETTLED_UNKNOWN;
        p->census = true;
        return 0;
}

/* gate.membership=group, at every boundary (docs/DESIGN.md, Scale-out:
 * one T for N instances): while a transition waits for T, each owned
 * partition without a promise makes one (gate/agree.h), committed with
 * the next transaction; once the agreement thread finds T in the
 * committed checkpoints of every partition, the gate splits at it and
 * the held partitions go on. */
void gp_hop_step(gp_proxy_t *p, const gp_control_t *ctl, int64_t now) {
        if (p->gate.phase != GP_PHASE_WAITING) {
                for (size_t i = 0; i < p->n_pptrs; i++)
                        p->pptrs[i]->promise = GP_TS_NONE;
                if (p->agree_since >= 0) {
                        gp_record_agree_release(p, true);
                        p->agree_since = -1;
                }
                if (p->gate.phase == GP_PHASE_SPLIT)
                        closing(p, ctl, now);
                else {
                        if (!p->census)
                                gp_agreer_idle(p->agree);
                        agree_stats(p, NULL);
                }
                return;
        }
        if (p->agree_since < 0)
                p->agree_since = now;
        /* A new transition: no partition has closed it. */
        for (size_t i = 0; i < p->n_pptrs; i++)
                p->pptrs[i]->closed = false;
        gp_agreed_t ag;
        gp_agreer_ask(p->agree, p->gate.old_c, p->gate.new_c, p->gate.tid, GP_TS_NONE, NULL,
                      &ag);
        agree_stats(p, &ag);
        other_settings(p, &ag);
        if (ag.cutoff != GP_TS_NONE) {
                gp_gate_t line = p->gate;
                char why[256];
                line.phase = GP_PHASE_SPLIT;
                line.cutoff = ag.cutoff;
                line.cutoff_wall = now;
                if (gp_gate_adopt(&p->gate, &line, why, sizeof why) < 0) {
                        gp_warn("agreement: T=%" PRId64 " not taken: %s", ag.cutoff, why);
                        return;
                }
                for (size_t i = 0; i < p->n_pptrs; i++) {
                        p->pptrs[i]->since_t[0] = p->pptrs[i]->since_t[1] = 0;
                        p->pptrs[i]->promise = GP_TS_NONE;
                }
                p->need_commit = true;
                gp_info("cutoff agreed: T=%" PRId64 " from the committed promises of %zu "
                        "partition(s), %" PRId64 " ms after this instance saw the "
                        "transition %s -> %s",
                        ag.cutoff, ag.parts, now - p->agree_since,
                        gp_colour_name(p->gate.old_c), gp_colour_name(p->gate.new_c));
                gp_record_agree_release(p, true);
                p->agree_since = -1;
                return;
        }
        /* Promises wait for the first read of this transition: whether
         * another partition has a committed promise already decides
         * whether this one's is late (no floor of its own). Before it, an
         * instance that has read nothing would promise the wall clock + D,
         * far above the event time of a lagging stream. */
        if (!ag.read_ms)
                return;
        bool made = false;
        for (size_t i = 0; i < p->n_pptrs; i++) {
                gp_part_t *pt = p->pptrs[i];
                /* A re-delivery still open promises once it ends: what it
                 * sends goes to the old colour before any T is agreed. */
                if (pt->promise != GP_TS_NONE || pt->ro)
                        continue;
                gp_agree_basis_t b = {
                        .asked = ctl->req_cutoff,
                        .part_wm = pt->hi == GP_TS_NONE
                                           ? GP_TS_NONE
                                           : pt->hi - p->gconf.out_of_orderness_ms,
                        .inst_wm = p->wv.wm,
                        .inst_hi = p->wv.hi_max,
                        .now = now,
                        .delay_ms = ctl->delay_ms,
                        .align_ms =
                                ctl->req_align_ms > 0 ? ctl->req_align_ms : p->gconf.align_ms,
                        .late = ag.any,
                };
                if (b.align_ms < 1)
                        b.align_ms = 1;
                pt->promise = gp_agree_promise(pt->hi, &b);
                if (pt->promise == GP_TS_NONE)
                        gp_warn("agreement: no promise can be made (highest event time "
                                "%" PRId64 "): the partition holds",
                                pt->hi);
                else
                        made = true;
        }
        if (made) {
                p->need_commit = true;
                gp_record_agree_release(p, false);
        }
}
