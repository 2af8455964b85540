/* gate/agree.c: promises, the route under a promise, T as the maximum of
 * the committed promises, the map's T and the close (gate/agree.h).
 * Pure: libc only; time is an argument. */
#include "gate/agree.h"
#include "gate/gate.h"

/* t + d for d >= 0, stopping at INT64_MAX (gp_align_up then refuses it
 * unless it is already aligned). */
static int64_t add_delay(int64_t t, int64_t d) {
        if (d > 0 && t > INT64_MAX - d)
                return INT64_MAX;
        return t + (d > 0 ? d : 0);
}

/* The floor a promise may not go below; GP_TS_NONE for a late partition. */
static int64_t floor_of(const gp_agree_basis_t *b) {
        if (b->late)
                return GP_TS_NONE; /* it must not raise a T others may already hold */
        if (b->asked != GP_TS_NONE)
                return b->asked;
        int64_t base = b->part_wm;
        if (base == GP_TS_NONE)
                base = b->inst_wm;
        if (base == GP_TS_NONE)
                base = b->inst_hi;
        if (base == GP_TS_NONE)
                base = b->now; /* nothing was ever read */
        return add_delay(base, b->delay_ms);
}

int64_t gp_agree_promise(int64_t hi, const gp_agree_basis_t *b) {
        if (hi == INT64_MAX)
                return GP_TS_NONE; /* nothing lies above what went to the old colour */
        int64_t p = floor_of(b);
        if (hi != GP_TS_NONE && hi + 1 > p)
                p = hi + 1;
        if (p == GP_TS_NONE)
                return GP_AGREE_NOTHING;
        /* An asked cutoff is taken as it is, so T can equal it. */
        bool exact = b->asked != GP_TS_NONE && !b->late;
        return gp_align_up(p, exact ? 1 : b->align_ms);
}

gp_agree_dest_t gp_agree_route(int64_t ts, int64_t promise, int64_t cutoff) {
        if (cutoff != GP_TS_NONE)
                return ts < cutoff ? GP_AGREE_OLD : GP_AGREE_NEW;
        if (promise != GP_TS_NONE)
                return ts < promise ? GP_AGREE_OLD : GP_AGREE_HOLD;
        return GP_AGREE_OLD;
}

int64_t gp_agree_cutoff(const int64_t *promises, size_t n) {
        int64_t t = GP_TS_NONE;
        for (size_t i = 0; i < n; i++) {
                if (promises[i] == GP_TS_NONE)
                        return GP_TS_NONE; /* T waits for every partition */
                if (promises[i] > t)
                        t = promises[i];
        }
        return t;
}

gp_agree_map_t gp_agree_map(int64_t stored, int64_t cutoff) {
        if (cutoff == GP_TS_NONE)
                return GP_AGREE_MAP_WAIT;
        if (stored == GP_TS_NONE)
                return GP_AGREE_MAP_WRITE;
        return stored == cutoff ? GP_AGREE_MAP_AGREES : GP_AGREE_MAP_CONFLICT;
}

bool gp_agree_all_closed(const bool *closed, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!closed[i])
                        return false;
        return n > 0;
}

bool gp_agree_clear(const bool *closed, size_t n, bool drained, gp_agree_map_t map) {
        return map == GP_AGREE_MAP_AGREES && drained && gp_agree_all_closed(closed, n);
}

bool gp_agree_settled(const gp_gate_t *g, int64_t tid, const gp_gate_t *line,
                      const gp_part_t *lp) {
        if (lp->ro)
                return false;
        if (tid && line->tid == tid)
                return true;
        /* A split its line never ended: what it owes depends on how its
         * transition ended, which only a gate of that transition knows. */
        if (line->phase == GP_PHASE_SPLIT)
                return false;
        /* Closed where this gate aborted the same transition after T: its
         * re-delivery has not begun. */
        return !(line->phase == GP_PHASE_CLOSED && g->phase == GP_PHASE_ABORTED &&
                 line->tid == g->tid && g->cutoff != GP_TS_NONE);
}

gp_close_rule_t gp_agree_part_close_rule(const gp_part_t *pt, int64_t cutoff,
                                         int64_t cutoff_wall, const gp_gate_conf_t *c,
                                         int64_t now) {
        if (cutoff == GP_TS_NONE)
                return GP_CLOSE_NONE;
        /* T + lateness, saturating: a T near the top closes by idleness. */
        int64_t need = c->lateness_ms > 0 && cutoff > INT64_MAX - c->lateness_ms
                               ? INT64_MAX
                               : cutoff + c->lateness_ms;
        if (pt->hi != GP_TS_NONE &&
            (c->out_of_orderness_ms <= 0 || pt->hi >= INT64_MIN + c->out_of_orderness_ms) &&
            pt->hi - c->out_of_orderness_ms >= need)
                return GP_CLOSE_WATERMARK;
        int64_t from = pt->last_wall > cutoff_wall ? pt->last_wall : cutoff_wall;
        int64_t quiet = c->idle_ms + c->lateness_ms;
        return from != GP_TS_NONE && now - from >= quiet ? GP_CLOSE_IDLE : GP_CLOSE_NONE;
}

bool gp_agree_part_close_due(const gp_part_t *pt, int64_t cutoff, int64_t cutoff_wall,
                             const gp_gate_conf_t *c, int64_t now) {
        return gp_agree_part_close_rule(pt, cutoff, cutoff_wall, c, now) != GP_CLOSE_NONE;
}
