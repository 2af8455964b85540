/* gate/redeliver.c: where each partition's routing changed, and which
 * records a re-delivery gives the survivor (gate/redeliver.h).
 * Pure: libc only. */
#include <string.h>

#include "gate/redeliver.h"

static bool splits(gp_phase_t ph) {
        return ph == GP_PHASE_SPLIT || ph == GP_PHASE_CLOSED;
}

static bool same_transition(const gp_gate_t *a, const gp_gate_t *b) {
        return a->old_c == b->old_c && a->new_c == b->new_c && a->cutoff == b->cutoff;
}

static void forget(gp_part_t *p) {
        p->sp = p->cp = p->ap = -1;
        p->ro = false;
        p->rd[0] = p->rd[1] = 0;
}

bool gp_redeliver_mark(gp_part_t *p, const gp_gate_t *was, const gp_gate_t *now, int64_t pos,
                       bool redeliver) {
        if (splits(now->phase)) {
                if (p->sp < 0 || !splits(was->phase) || !same_transition(was, now)) {
                        forget(p);
                        p->sp = pos;
                }
                if ((now->phase == GP_PHASE_CLOSED || p->closed) && p->cp < 0)
                        p->cp = pos;
                return false;
        }
        if (now->phase == GP_PHASE_ABORTED) {
                /* Before T nothing went to the aborted colour; a mark
                 * already made stays (this abort, read again). */
                if (!splits(was->phase) || p->sp < 0 || p->ap >= 0)
                        return false;
                if (!redeliver || now->new_c != was->old_c || was->cutoff == GP_TS_NONE ||
                    now->cutoff != was->cutoff)
                        return false; /* nothing owed, or the survivor got ts >= T */
                p->ap = pos;
                p->ro = pos > p->sp;
                p->rd[0] = p->rd[1] = 0;
                return p->ro;
        }
        if (!p->ro)
                forget(p); /* steady, or a new transition waiting for T */
        return false;
}

int64_t gp_redeliver_from(gp_part_t *p, int64_t at, int64_t low) {
        if (!p->ro || low <= at)
                return at;
        int64_t gone = (low < p->ap ? low : p->ap) - at;
        p->rd[1] += (uint64_t)gone;
        if (low >= p->ap) {
                p->ro = false;
                return p->ap;
        }
        return low;
}

gp_rd_t gp_redeliver_record(gp_part_t *p, const gp_gate_t *g, const gp_gate_conf_t *c,
                            int64_t off, int64_t ts) {
        if (!p->ro)
                return GP_RD_ROUTE;
        if (off >= p->ap || g->phase != GP_PHASE_ABORTED || g->cutoff == GP_TS_NONE) {
                p->ro = false;
                return GP_RD_ROUTE;
        }
        /* The gate this record was routed by: split, or closed from cp on. */
        gp_gate_t was = {.phase =
                                 p->cp >= 0 && off >= p->cp ? GP_PHASE_CLOSED : GP_PHASE_SPLIT,
                         .old_c = g->new_c,
                         .new_c = gp_colour_other(g->new_c),
                         .cutoff = g->cutoff,
                         .cutoff_wall = g->cutoff_wall,
                         .seq = g->seq};
        bool late;
        if (gp_gate_dest(&was, c, ts, &late) != (gp_dest_t)was.new_c)
                return GP_RD_SKIP;
        p->rd[0]++;
        return GP_RD_SEND;
}

bool gp_redeliver_settle(gp_part_t *p, int64_t pos) {
        if (!p->ro || pos < p->ap)
                return false;
        p->ro = false;
        return true;
}

size_t gp_redeliver_open(gp_part_t *const *parts, size_t n) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                k += parts[i]->ro;
        return k;
}
