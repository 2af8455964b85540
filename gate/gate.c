/* gate/gate.c: phases, routing, watermark and the two decisions of the
 * gate (choosing T, closing the old side).
 * Pure: libc only; time is an argument. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/gate.h"

static const char *const phase_names[GP_PHASE__N] = {
        [GP_PHASE_STEADY] = "steady",   [GP_PHASE_WAITING] = "waiting",
        [GP_PHASE_SPLIT] = "split",     [GP_PHASE_CLOSED] = "closed",
        [GP_PHASE_ABORTED] = "aborted",
};

/* Allowed changes, [from][to]. Staying is always allowed. */
static const bool phase_table[GP_PHASE__N][GP_PHASE__N] = {
        /*                  STEADY WAITING SPLIT  CLOSED ABORTED */
        [GP_PHASE_STEADY] = {1, 1, 0, 0, 0},  [GP_PHASE_WAITING] = {0, 1, 1, 0, 1},
        [GP_PHASE_SPLIT] = {0, 0, 1, 1, 1},   [GP_PHASE_CLOSED] = {1, 1, 0, 1, 1},
        [GP_PHASE_ABORTED] = {1, 1, 0, 0, 1},
};

const char *gp_phase_name(gp_phase_t p) {
        return p < GP_PHASE__N ? phase_names[p] : "?";
}

int gp_phase_parse(const char *s, gp_phase_t *out) {
        for (int i = 0; i < GP_PHASE__N; i++)
                if (!strcmp(s, phase_names[i])) {
                        *out = (gp_phase_t)i;
                        return 0;
                }
        return -1;
}

bool gp_phase_allowed(gp_phase_t from, gp_phase_t to) {
        return from < GP_PHASE__N && to < GP_PHASE__N && phase_table[from][to];
}

void gp_gate_init(gp_gate_t *g, gp_colour_t owner) {
        *g = (gp_gate_t){.phase = GP_PHASE_STEADY,
                         .old_c = owner,
                         .new_c = owner,
                         .cutoff = GP_TS_NONE,
                         .cutoff_wall = GP_TS_NONE};
}

void gp_part_init(gp_part_t *p, int64_t now) {
        *p = (gp_part_t){.hi = GP_TS_NONE,
                         .last_wall = now,
                         .promise = GP_TS_NONE,
                         .sp = -1,
                         .cp = -1,
                         .ap = -1};
}

gp_colour_t gp_gate_owner(const gp_gate_t *g) {
        return g->phase == GP_PHASE_WAITING || g->phase == GP_PHASE_SPLIT ? g->old_c
                                                                          : g->new_c;
}

void gp_gate_from_control(gp_gate_t *g, const gp_control_t *c, int64_t now) {
        gp_gate_init(g, c->active);
        if (c->is_first)
                return;
        g->tid = gp_control_tid(c);
        g->old_c = gp_colour_other(c->active);
        g->new_c = c->active;
        bool has_t = c->wm_stage == GP_WMS_SET && c->toggle != GP_TS_NONE;
        switch (c->stage) {
        case GP_STAGE_INITIALIZING:
        case GP_STAGE_TRANSITIONING:
                g->phase = has_t ? GP_PHASE_SPLIT : GP_PHASE_WAITING;
                break;
        case GP_STAGE_CLEAR_TO_TEARDOWN:
        case GP_STAGE_RUNNING:
                g->phase = has_t ? GP_PHASE_CLOSED : GP_PHASE_STEADY;
                break;
        case GP_STAGE_FAILING: /* a failed roll to active: the other colour stays */
                g->phase = GP_PHASE_STEADY;
                g->new_c = gp_colour_other(c->active);
                break;
        }
        if (g->phase == GP_PHASE_STEADY)
                g->old_c = g->new_c;
        if (has_t && g->phase != GP_PHASE_STEADY) {
                g->cutoff = c->toggle;
                g->cutoff_wall = now;
        }
}

gp_dest_t gp_gate_dest(const gp_gate_t *g, const gp_gate_conf_t *c, int64_t ts, bool *late) {
        *late = false;
        if (ts == GP_TS_NONE && !c->bad_route_old)
                return GP_DEST_DLQ; /* in every phase: a bad record is bad */
        /* From here an unreadable ts counts as older than any T. */
        switch (g->phase) {
        case GP_PHASE_WAITING:
                return (gp_dest_t)g->old_c;
        case GP_PHASE_SPLIT:
                return (gp_dest_t)(ts < g->cutoff ? g->old_c : g->new_c);
        case GP_PHASE_CLOSED:
                if (ts < g->cutoff) {
                        *late = true;
                        if (c->late_to_dlq)
                                return GP_DEST_DLQ;
                }
                return (gp_dest_t)g->new_c;
        default: /* STEADY, ABORTED */
                return (gp_dest_t)g->new_c;
        }
}

gp_dest_t gp_gate_route(const gp_gate_t *g, const gp_gate_conf_t *c, gp_part_t *p, int64_t ts,
                        int64_t now, bool *late) {
        gp_gate_t closed;
        if (p->closed && g->phase == GP_PHASE_SPLIT) {
                /* This partition closed the old side for itself
                 * (gate/agree.h, gp_agree_part_close_due). */
                closed = *g;
                closed.phase = GP_PHASE_CLOSED;
                g = &closed;
        }
        gp_dest_t d = gp_gate_dest(g, c, ts, late);
        if (ts != GP_TS_NONE && ts > p->hi)
                p->hi = ts;
        p->last_wall = now;
        p->n[d]++;
        p->late += *late;
        if (d != GP_DEST_DLQ && g->cutoff != GP_TS_NONE)
                p->since_t[d]++;
        return d;
}

bool gp_gate_future(const gp_gate_conf_t *c, int64_t ts, int64_t now) {
        if (c->max_future_ms <= 0 || ts == GP_TS_NONE)
                return false;
        return now > INT64_MAX - c->max_future_ms ? false : ts > now + c->max_future_ms;
}

gp_dest_t gp_gate_reject(gp_part_t *p, int64_t now) {
        p->last_wall = now;
        p->n[GP_DEST_DLQ]++;
        return GP_DEST_DLQ;
}

/* a + b, saturating at both ends (GP_TS_NONE in, GP_TS_NONE out). */
static int64_t sat_add(int64_t a, int64_t b) {
        if (a == GP_TS_NONE)
                return GP_TS_NONE;
        if (b > 0 && a > INT64_MAX - b)
                return INT64_MAX;
        if (b < 0 && a < INT64_MIN - b)
                return INT64_MIN;
        return a + b;
}

/* a - b, saturating: wall-clock differences against times read from a
 * checkpoint (or a clock that went back) must not overflow. */
static int64_t sat_sub(int64_t a, int64_t b) {
        if (b < 0 && a > INT64_MAX + b)
                return INT64_MAX;
        if (b > 0 && a < INT64_MIN + b)
                return INT64_MIN;
        return a - b;
}

void gp_gate_watermark(const gp_part_t *const *parts, size_t n, const gp_gate_conf_t *c,
                       int64_t now, gp_wm_view_t *out) {
        int64_t wm_active = INT64_MAX, wm_any = GP_TS_NONE, hi_max = GP_TS_NONE;
        int64_t last = GP_TS_NONE;
        bool any_active = false, unknown = false;
        int idle = 0;

        for (size_t i = 0; i < n; i++) {
                const gp_part_t *p = parts[i];
                int64_t wm = GP_TS_NONE;
                if (p->hi != GP_TS_NONE) {
                        wm = sat_sub(p->hi, c->out_of_orderness_ms);
                        if (wm == GP_TS_NONE)
                                wm = GP_TS_NONE + 1; /* known, just very early */
                }
                if (p->hi > hi_max)
                        hi_max = p->hi;
                if (p->last_wall > last)
                        last = p->last_wall;
                if (wm > wm_any)
                        wm_any = wm;
                if (sat_sub(now, p->last_wall) >= c->idle_ms) {
                        idle++;
                        continue; /* idle: does not hold the watermark back */
                }
                any_active = true;
                if (wm == GP_TS_NONE)
                        unknown = true;
                else if (wm < wm_active)
                        wm_active = wm;
        }
        out->hi_max = hi_max;
        out->all_idle = !any_active;
        out->last_record = last;
        out->drained = true;
        out->idle = idle;
        out->unsettled = 0;
        if (!any_active)
                out->wm = wm_any; /* everything quiet: the furthest time seen */
        else
                out->wm = unknown ? GP_TS_NONE : wm_active;
}

int64_t gp_align_up(int64_t t, int64_t align) {
        if (align <= 1)
                return t;
        int64_t r = t % align;
        if (r < 0)
                r += align;
        if (r == 0)
                return t;
        if (t > INT64_MAX - (align - r))
                return GP_TS_NONE;
        return t + (align - r);
}

static void set_phase(gp_gate_t *g, gp_phase_t to) {
        /* Every caller checks the table first; a violation is a bug here. */
        if (!gp_phase_allowed(g->phase, to))
                __builtin_trap();
        g->phase = to;
}

static void reset_since_t(gp_part_t *const *parts, size_t n) {
        for (size_t i = 0; i < n; i++)
                parts[i]->since_t[0] = parts[i]->since_t[1] = 0;
}

/* Control-driven changes: first deployment, abort, a new transition. */
static int apply_control(gp_gate_t *g, gp_part_t *const *parts, size_t n,
                         const gp_control_t *c, const gp_wm_view_t *wv, gp_step_t *out) {
        gp_colour_t owner = gp_gate_owner(g);
        bool mid = g->phase == GP_PHASE_WAITING || g->phase == GP_PHASE_SPLIT;

        if (c->is_first) {
                if (mid) { /* the operator's abort: the survivor takes all */
                        set_phase(g, GP_PHASE_ABORTED);
                        g->new_c = c->active;
                        g->old_c = c->active;
                        out->events |= GP_EV_ABORTED;
                        return 1;
                }
                if (c->active == owner)
                        return 0;
                if (g->phase == GP_PHASE_CLOSED) { /* abort after the close */
                        set_phase(g, GP_PHASE_ABORTED);
                        out->events |= GP_EV_ABORTED;
                } else {
                        set_phase(g, GP_PHASE_STEADY);
                        g->cutoff = g->cutoff_wall = GP_TS_NONE; /* no split to count */
                        out->events |= GP_EV_OWNER;
                }
                g->old_c = g->new_c = c->active;
                return 1;
        }

        int64_t cur = gp_control_tid(c);
        if (mid) {
                bool same = c->active == g->new_c && c->stage != GP_STAGE_FAILING;
                if (same && g->tid && cur && cur != g->tid)
                        same = false; /* the map names a later transition */
                if (same && !g->tid && cur) {
                        g->tid = cur; /* the map named it after this gate began it */
                        return 1;
                }
                if (same)
                        return 0; /* the same transition goes on */
                if (g->phase == GP_PHASE_SPLIT && g->tid && cur && cur > g->tid &&
                    c->stage != GP_STAGE_FAILING) {
                        /* A later transition: this one ended without this
                         * gate (made of a dead member's lines). Where every
                         * partition closed the old side it went no other
                         * way than the close; the census (gp_agree_settled)
                         * holds the next one back should the others have
                         * aborted it after all. */
                        size_t closed = 0;
                        for (size_t i = 0; i < n; i++)
                                closed += parts[i]->closed;
                        if (n && closed == n) {
                                set_phase(g, GP_PHASE_CLOSED);
                                out->events |= GP_EV_CLOSED;
                                return 1;
                        }
                }
                /* The roll to new_c failed, or the map rolled back to the
                 * old colour before the close: abort to the old colour. */
                set_phase(g, GP_PHASE_ABORTED);
                g->new_c = g->old_c;
                out->events |= GP_EV_ABORTED;
                return 1;
        }
        if (g->phase == GP_PHASE_CLOSED && g->tid && cur > g->tid && c->active == owner &&
            (c->stage == GP_STAGE_INITIALIZING || c->stage == GP_STAGE_TRANSITIONING)) {
                /* A later transition into the colour this gate's closed
                 * one rolled to: the map went back to the old colour in
                 * between, an abort after the close that this gate did not
                 * read (its member stopped meanwhile, or its watch skipped
                 * the version). It takes that abort now, with its
                 * re-delivery, before the census lets the next begin. */
                set_phase(g, GP_PHASE_ABORTED);
                g->new_c = g->old_c;
                out->events |= GP_EV_ABORTED;
                return 1;
        }
        if (c->active == owner || c->stage == GP_STAGE_FAILING)
                return 0; /* nothing asked, or a failed roll: the owner stays */
        if (c->stage == GP_STAGE_INITIALIZING || c->stage == GP_STAGE_TRANSITIONING) {
                /* Begun only under an id (a proxy writes one into the map):
                 * every line of it carries the id, and a transition that
                 * ended here is not begun again. */
                if (!cur || cur == g->tid)
                        return 0;
                size_t open = 0;
                for (size_t i = 0; i < n; i++)
                        open += parts[i]->ro;
                if (open) {
                        /* Its records would pass the survivor's re-delivery. */
                        out->events |= GP_EV_REFUSED;
                        snprintf(out->err, sizeof(out->err),
                                 "the transition %s -> %s waits: %zu partition(s) still "
                                 "re-deliver the aborted transition's records to %s",
                                 gp_colour_upper(owner), gp_colour_upper(c->active), open,
                                 gp_colour_upper(owner));
                        return 0;
                }
                if (wv->unsettled == GP_UNSETTLED_UNKNOWN)
                        return 0; /* a read of every partition's checkpoint comes first */
                if (wv->unsettled) {
                        out->events |= GP_EV_REFUSED;
                        snprintf(out->err, sizeof(out->err),
                                 "the transition %s -> %s waits: %zu partition(s) of the "
                                 "pipeline are still in an earlier transition or re-deliver "
                                 "its records (their committed checkpoints)",
                                 gp_colour_upper(owner), gp_colour_upper(c->active),
                                 wv->unsettled);
                        return 0;
                }
                set_phase(g, GP_PHASE_WAITING);
                g->tid = cur;
                g->old_c = owner;
                g->new_c = c->active;
                g->cutoff = GP_TS_NONE;
                g->cutoff_wall = GP_TS_NONE;
                reset_since_t(parts, n);
                out->events |= GP_EV_TRANSITION;
                return 1;
        }
        out->events |= GP_EV_REFUSED;
        snprintf(out->err, sizeof(out->err),
                 "the map says %s is %s but %s owns traffic and no transition "
                 "was made; start one (stage=TRANSITIONING) or set "
                 "is-first-deployment=true",
                 gp_colour_upper(c->active), gp_stage_name(c->stage), gp_colour_upper(owner));
        return 0;
}

static int choose_cutoff(gp_gate_t *g, const gp_control_t *c, const gp_wm_view_t *wv,
                         const gp_gate_conf_t *conf, int64_t now, gp_step_t *out) {
        /* T must exceed every event time already routed to the old side. */
        int64_t floor = wv->hi_max == GP_TS_NONE ? GP_TS_NONE : sat_add(wv->hi_max, 1);
        int64_t t;

        if (wv->hi_max == INT64_MAX) { /* sat_add would give T == hi_max */
                out->events |= GP_EV_REFUSED;
                snprintf(out->err, sizeof(out->err),
                         "no cutoff exceeds event time %lld, already routed to "
                         "the old side",
                         (long long)wv->hi_max);
                return 0;
        }

        int64_t asked = c->req_cutoff;
        if (asked == GP_TS_NONE && c->wm_stage == GP_WMS_SET)
                asked = c->toggle; /* a T already in the map */
        if (asked != GP_TS_NONE) {
                if (floor != GP_TS_NONE && asked < floor) {
                        out->events |= GP_EV_REFUSED;
                        snprintf(out->err, sizeof(out->err),
                                 "cutoff %lld refused: records up to event time %lld "
                                 "were already routed to the old side; choose a "
                                 "cutoff above it or let the proxy choose",
                                 (long long)asked, (long long)wv->hi_max);
                        return 0;
                }
                t = asked;
        } else {
                int64_t w = wv->wm;
                if (w == GP_TS_NONE) {
                        if (!wv->all_idle || wv->hi_max != GP_TS_NONE)
                                return 0; /* wait for the watermark */
                        w = now;          /* nothing was ever read */
                }
                t = sat_add(w, c->delay_ms);
                if (floor != GP_TS_NONE && floor > t)
                        t = floor;
                int64_t align = c->req_align_ms > 0 ? c->req_align_ms : conf->align_ms;
                t = gp_align_up(t, align);
                if (t == GP_TS_NONE) {
                        out->events |= GP_EV_REFUSED;
                        snprintf(out->err, sizeof(out->err),
                                 "cutoff overflows at alignment %lld", (long long)align);
                        return 0;
                }
        }
        set_phase(g, GP_PHASE_SPLIT);
        g->cutoff = t;
        g->cutoff_wall = now;
        out->events |= GP_EV_CUTOFF;
        return 1;
}

static const char *const rule_names[GP_CLOSE__N] = {
        [GP_CLOSE_NONE] = "-",
        [GP_CLOSE_WATERMARK] = "watermark",
        [GP_CLOSE_IDLE] = "idle",
        [GP_CLOSE_FORCED] = "forced",
};

const char *gp_close_rule_name(gp_close_rule_t r) {
        return r < GP_CLOSE__N ? rule_names[r] : "?";
}

int gp_close_rule_parse(const char *s, size_t n, gp_close_rule_t *out) {
        for (int i = 0; i < GP_CLOSE__N; i++)
                if (strlen(rule_names[i]) == n && !memcmp(s, rule_names[i], n)) {
                        *out = (gp_close_rule_t)i;
                        return 0;
                }
        return -1;
}

gp_close_rule_t gp_gate_close_rule(const gp_gate_t *g, const gp_wm_view_t *wv,
                                   const gp_gate_conf_t *conf, int64_t now) {
        if (g->phase != GP_PHASE_SPLIT || g->cutoff == GP_TS_NONE)
                return GP_CLOSE_NONE;
        int64_t need = sat_add(g->cutoff, conf->lateness_ms);
        bool by_wm = wv->wm != GP_TS_NONE && !wv->all_idle && wv->wm >= need;
        /* Every partition quiet for the idle timeout plus the lateness
         * since T was chosen: nothing is left to wait for. */
        int64_t quiet_from =
                wv->last_record > g->cutoff_wall ? wv->last_record : g->cutoff_wall;
        bool by_idle = wv->all_idle && g->cutoff_wall != GP_TS_NONE &&
                       sat_sub(now, quiet_from) >= sat_add(conf->idle_ms, conf->lateness_ms);
        if (by_wm)
                return wv->idle > 0 ? GP_CLOSE_IDLE : GP_CLOSE_WATERMARK;
        return by_idle ? GP_CLOSE_IDLE : GP_CLOSE_NONE;
}

bool gp_gate_close_due(const gp_gate_t *g, const gp_wm_view_t *wv, const gp_gate_conf_t *conf,
                       int64_t now) {
        return gp_gate_close_rule(g, wv, conf, now) != GP_CLOSE_NONE;
}

static int try_close(gp_gate_t *g, const gp_wm_view_t *wv, const gp_gate_conf_t *conf,
                     int64_t now, gp_step_t *out) {
        if (!wv->drained || !gp_gate_close_due(g, wv, conf, now))
                return 0;
        set_phase(g, GP_PHASE_CLOSED);
        out->events |= GP_EV_CLOSED;
        return 1;
}

int gp_gate_step(gp_gate_t *g, gp_part_t *const *parts, size_t n, const gp_control_t *c,
                 const gp_wm_view_t *wv, const gp_gate_conf_t *conf, int64_t now,
                 gp_step_t *out) {
        memset(out, 0, sizeof(*out));
        /* A map that names an earlier transition than this gate's is a copy
         * behind the checkpoints (a lagging watch): nothing is done from
         * it until it catches up. */
        if (g->tid && c->tid && c->tid < g->tid)
                return 0;
        int changed = apply_control(g, parts, n, c, wv, out);
        bool ours = !c->is_first && c->active == g->new_c;
        bool torn = c->stage == GP_STAGE_CLEAR_TO_TEARDOWN || c->stage == GP_STAGE_RUNNING;

        if (!ours)
                return changed;
        switch (g->phase) {
        case GP_PHASE_WAITING:
                if (c->stage == GP_STAGE_TRANSITIONING)
                        changed |= choose_cutoff(g, c, wv, conf, now, out);
                else if (torn) {
                        out->events |= GP_EV_REFUSED;
                        snprintf(out->err, sizeof(out->err),
                                 "the map says %s but no cutoff was chosen: every record "
                                 "still goes to %s; set stage=TRANSITIONING to hand over",
                                 gp_stage_name(c->stage), gp_colour_upper(g->old_c));
                }
                break;
        case GP_PHASE_SPLIT:
                if (torn) {
                        /* The old side is being torn down without us: sending
                         * ts < T there would lose it. */
                        set_phase(g, GP_PHASE_CLOSED);
                        out->events |= GP_EV_CLOSED | GP_EV_FORCED;
                        changed = 1;
                } else if (c->stage == GP_STAGE_TRANSITIONING)
                        changed |= try_close(g, wv, conf, now, out);
                /* fall through */
        case GP_PHASE_CLOSED:
                if (c->req_cutoff != GP_TS_NONE && c->req_cutoff != g->cutoff &&
                    !(out->events & GP_EV_REFUSED)) {
                        out->events |= GP_EV_REFUSED;
                        snprintf(out->err, sizeof(out->err),
                                 "cutoff %lld refused: this transition already has T=%lld; "
                                 "a new cutoff needs a new transition",
                                 (long long)c->req_cutoff, (long long)g->cutoff);
                }
                break;
        default:
                break;
        }
        return changed;
}

bool gp_gate_tid_due(const gp_gate_t *g, const gp_control_t *c, int64_t now, char *buf,
                     size_t len) {
        int64_t known = g ? g->tid : 0;
        bool mid = g && (g->phase == GP_PHASE_WAITING || g->phase == GP_PHASE_SPLIT);
        if (gp_control_open(c) && (!c->tid || c->tid_ended)) {
                int64_t id = now > 0 ? now : 1;
                if (known >= id && known < INT64_MAX)
                        id = known + 1;
                if (c->tid >= id && c->tid < INT64_MAX)
                        id = c->tid + 1;
                snprintf(buf, len, "%" PRId64, id);
                return true;
        }
        if (!gp_control_open(c) && c->tid && !c->tid_ended && !mid) {
                snprintf(buf, len, "%" PRId64 " ended", c->tid);
                return true;
        }
        return false;
}

bool gp_gate_publication(const gp_gate_t *g, const gp_control_t *c, gp_publish_t *out) {
        memset(out, 0, sizeof(*out));
        if (c->is_first || c->active != g->new_c || c->stage != GP_STAGE_TRANSITIONING)
                return false;
        if (g->tid && gp_control_tid(c) != g->tid)
                return false; /* the map is at another transition, or has no id yet */
        switch (g->phase) {
        case GP_PHASE_WAITING:
                if (c->wm_stage != GP_WMS_NONE)
                        return false;
                out->wm_stage = GP_WMS_WAITING;
                return true;
        case GP_PHASE_SPLIT:
        case GP_PHASE_CLOSED:
                if (c->wm_stage == GP_WMS_NONE) {
                        /* The operator expects WAITING_FOR_WATERMARK first. */
                        out->wm_stage = GP_WMS_WAITING;
                        return true;
                }
                if (c->wm_stage != GP_WMS_SET || c->toggle != g->cutoff) {
                        out->wm_stage = GP_WMS_SET;
                        out->toggle = g->cutoff;
                }
                out->clear_to_teardown = g->phase == GP_PHASE_CLOSED;
                return out->wm_stage != GP_WMS_NONE || out->clear_to_teardown;
        default:
                return false;
        }
}

/* The order of a transition's phases; -1 outside one. */
static int transition_rank(gp_phase_t p) {
        return p == GP_PHASE_WAITING  ? 0
               : p == GP_PHASE_SPLIT  ? 1
               : p == GP_PHASE_CLOSED ? 2
                                      : -1;
}

int gp_gate_adopt(gp_gate_t *g, const gp_gate_t *line, char *err, size_t errlen) {
        int rg = transition_rank(g->phase), rl = transition_rank(line->phase);
        int64_t seq = g->seq > line->seq ? g->seq : line->seq;
        int changed = 0;
        if (g->tid && line->tid != g->tid) {
                bool open = g->phase == GP_PHASE_WAITING || g->phase == GP_PHASE_SPLIT ||
                            g->phase == GP_PHASE_ABORTED;
                if (line->tid > g->tid && !open) {
                        *g = *line;
                        changed = 1;
                }
                g->seq = seq;
                return changed;
        }
        if (rg >= 0 && rl >= 0 && g->old_c == line->old_c && g->new_c == line->new_c) {
                if (g->cutoff != GP_TS_NONE && line->cutoff != GP_TS_NONE &&
                    g->cutoff != line->cutoff) {
                        snprintf(err, errlen,
                                 "two cutoffs for the transition %s -> %s: T=%lld here, "
                                 "T=%lld committed (seq %lld)",
                                 gp_colour_name(g->old_c), gp_colour_name(g->new_c),
                                 (long long)g->cutoff, (long long)line->cutoff,
                                 (long long)line->seq);
                        return -1;
                }
                if (rl > rg) {
                        g->phase = line->phase;
                        g->cutoff = line->cutoff;
                        g->cutoff_wall = line->cutoff_wall;
                        changed = 1;
                }
                if (!g->tid && line->tid) {
                        g->tid = line->tid;
                        changed = 1;
                }
        } else if (line->seq > g->seq &&
                   (g->phase != line->phase || g->old_c != line->old_c ||
                    g->new_c != line->new_c || g->cutoff != line->cutoff)) {
                *g = *line;
                changed = 1;
        }
        g->seq = seq;
        return changed;
}
