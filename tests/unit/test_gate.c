/* tests/unit/test_gate.c: the gate's phases and decisions (docs/DESIGN.md,
 * Phases, Choosing T and closing): the transition table, gp_gate_step scenarios written as tables
 * of steps (map + watermark view + now -> phase, events, T, routing),
 * gp_gate_from_control, gp_gate_publication, gp_gate_watermark and
 * gp_align_up. Uses gate/ only.
 *
 * The suite "rules" holds cases read straight from the protocol's rules
 * (a map that tears OLD down during the split, an idle close counted from
 * the last record, a cutoff request after T). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/gate.h"
#include "gate/mstatus.h"

#define NONE GP_TS_NONE
#define MIN1 (INT64_MIN + 1)
#define B    GP_BLUE
#define G    GP_GREEN
#define D_B  GP_DEST_BLUE
#define D_G  GP_DEST_GREEN
#define D_Q  GP_DEST_DLQ

static const char *dest_name(gp_dest_t d) {
        return d == GP_DEST_BLUE ? "blue" : d == GP_DEST_GREEN ? "green" : "dlq";
}

/* ---- builders -------------------------------------------------------- */

static gp_control_t ctl(gp_colour_t a, gp_stage_t s, bool first, int64_t delay) {
        return (gp_control_t){.active = a,
                              .stage = s,
                              .delay_ms = delay,
                              .is_first = first,
                              .wm_stage = GP_WMS_NONE,
                              .toggle = NONE,
                              .req_cutoff = NONE,
                              .req_align_ms = 0};
}
static gp_control_t with_set(gp_control_t c, int64_t t) {
        c.wm_stage = GP_WMS_SET;
        c.toggle = t;
        return c;
}
static gp_control_t with_wait(gp_control_t c) {
        c.wm_stage = GP_WMS_WAITING;
        return c;
}
static gp_control_t with_req(gp_control_t c, int64_t t, int64_t align) {
        c.req_cutoff = t;
        c.req_align_ms = align;
        return c;
}

#define INIT  GP_STAGE_INITIALIZING
#define TRANS GP_STAGE_TRANSITIONING
#define CTT   GP_STAGE_CLEAR_TO_TEARDOWN
#define RUN   GP_STAGE_RUNNING
#define FAIL  GP_STAGE_FAILING

static gp_wm_view_t view(int64_t wm, int64_t hi_max, bool all_idle) {
        return (gp_wm_view_t){
                .wm = wm, .hi_max = hi_max, .all_idle = all_idle, .drained = true};
}
static gp_wm_view_t undrained(gp_wm_view_t v) {
        v.drained = false;
        return v;
}

static gp_gate_t mk_gate(gp_phase_t ph, gp_colour_t old_c, gp_colour_t new_c, int64_t t,
                         int64_t tw) {
        gp_gate_t g;
        gp_gate_init(&g, new_c);
        g.phase = ph;
        g.old_c = old_c;
        g.new_c = new_c;
        g.cutoff = t;
        g.cutoff_wall = tw;
        g.tid = 1; /* the map names it (run_steps) */
        return g;
}

static const gp_gate_conf_t conf0 = {.out_of_orderness_ms = 0,
                                     .idle_ms = 1000,
                                     .align_ms = 1,
                                     .lateness_ms = 100,
                                     .late_to_dlq = false,
                                     .bad_route_old = false};

/* ---- the step runner ------------------------------------------------- */

typedef struct {
        const char *what;
        gp_control_t c;
        gp_wm_view_t wv;
        int64_t now;
        /* expected */
        int changed;
        int events;
        gp_phase_t phase;
        gp_colour_t old_c, new_c;
        int64_t t;
        gp_dest_t at0, atmax; /* where ts=0 and ts=INT64_MAX go afterwards */
        const char *err;      /* substrings of out.err, '|'-separated */
} step_t;

/* For .t: the cutoff is not what the row checks. */
#define ANY_T ((int64_t)0x5eed5eed5eed5eedLL)

/* changed, events, phase, old, new, T, dest(0), dest(INT64_MAX) */
#define X(CH, EV, PH, OC, NC, TT, A0, AM)                                                     \
        .changed = (CH), .events = (EV), .phase = GP_PHASE_##PH, .old_c = (OC),               \
        .new_c = (NC), .t = (TT), .at0 = (A0), .atmax = (AM)

static void check_err(const char *scen, size_t i, const char *what, const char *err,
                      const char *want) {
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", want);
        char *save = NULL;
        for (char *s = strtok_r(buf, "|", &save); s; s = strtok_r(NULL, "|", &save))
                cr_assert(strstr(err, s), "%s step %zu '%s': err '%s' lacks '%s'", scen, i,
                          what, err, s);
}

/* The map's transition id as the proxies keep it (gp_gate_tid_due,
 * written before the loop steps): a row without one of its own gets the
 * map's, named or ended as the rows go; a row that asks for another
 * colour than the one before is a rewritten map (the operator's, at a new
 * deployment), which names none. */
static void name_map(gp_control_t *c, int64_t *tid, bool *ended, gp_colour_t *was,
                     const gp_gate_t *g, int64_t now) {
        if (c->tid)
                return;
        if (c->active != *was && gp_control_open(c))
                *ended = true;
        *was = c->active;
        c->tid = *tid;
        c->tid_ended = *ended;
        char v[32];
        if (gp_gate_tid_due(g, c, now, v, sizeof v)) {
                *ended = strstr(v, "ended") != NULL;
                *tid = strtoll(v, NULL, 10);
        }
        c->tid = *tid;
        c->tid_ended = *ended;
}

static void run_steps(const char *scen, gp_gate_t *g, gp_part_t *const *parts, size_t n,
                      const gp_gate_conf_t *conf, const step_t *st, size_t ns) {
        /* The map names the gate's transition: open while one is. */
        int64_t tid = g->tid;
        bool ended = g->phase != GP_PHASE_WAITING && g->phase != GP_PHASE_SPLIT &&
                     g->phase != GP_PHASE_CLOSED;
        gp_colour_t was = g->new_c;
        for (size_t i = 0; i < ns; i++) {
                const step_t *s = &st[i];
                gp_gate_t before = *g;
                gp_step_t out;
                gp_control_t c = s->c;
                name_map(&c, &tid, &ended, &was, g, (int64_t)i + 1);
                memset(&out, 0x5a, sizeof(out)); /* must be cleared by the step */
                int ch = gp_gate_step(g, parts, n, &c, &s->wv, conf, s->now, &out);

                cr_assert_eq(ch != 0, s->changed != 0, "%s step %zu '%s': changed=%d, want %d",
                             scen, i, s->what, ch, s->changed);
                cr_assert_eq(out.events, s->events, "%s step %zu '%s': events=0x%x, want 0x%x",
                             scen, i, s->what, (unsigned)out.events, (unsigned)s->events);
                cr_assert_eq(g->phase, s->phase, "%s step %zu '%s': phase %s, want %s", scen,
                             i, s->what, gp_phase_name(g->phase), gp_phase_name(s->phase));
                cr_assert(g->old_c == s->old_c && g->new_c == s->new_c,
                          "%s step %zu '%s': colours %s->%s, want %s->%s", scen, i, s->what,
                          gp_colour_name(g->old_c), gp_colour_name(g->new_c),
                          gp_colour_name(s->old_c), gp_colour_name(s->new_c));
                if (s->t != ANY_T)
                        cr_assert_eq(g->cutoff, s->t,
                                     "%s step %zu '%s': T=%" PRId64 ", want %" PRId64, scen, i,
                                     s->what, g->cutoff, s->t);
                /* Every hop the events report is in the table, and they
                 * lead to the phase the gate is in. */
                static const struct {
                        int ev;
                        gp_phase_t to;
                } hops[] = {{GP_EV_OWNER, GP_PHASE_STEADY},
                            {GP_EV_TRANSITION, GP_PHASE_WAITING},
                            {GP_EV_ABORTED, GP_PHASE_ABORTED},
                            {GP_EV_CUTOFF, GP_PHASE_SPLIT},
                            {GP_EV_CLOSED, GP_PHASE_CLOSED}};
                gp_phase_t cur = before.phase;
                for (size_t h = 0; h < sizeof(hops) / sizeof(hops[0]); h++) {
                        if (!(out.events & hops[h].ev))
                                continue;
                        cr_assert(gp_phase_allowed(cur, hops[h].to),
                                  "%s step %zu '%s': %s -> %s is not in the table", scen, i,
                                  s->what, gp_phase_name(cur), gp_phase_name(hops[h].to));
                        cur = hops[h].to;
                }
                cr_assert_eq(cur, g->phase, "%s step %zu '%s': events lead to %s, gate is %s",
                             scen, i, s->what, gp_phase_name(cur), gp_phase_name(g->phase));
                if (!ch)
                        cr_assert(memcmp(&before, g, sizeof(*g)) == 0,
                                  "%s step %zu '%s': unchanged, yet the gate differs", scen, i,
                                  s->what);
                if (out.events & GP_EV_CUTOFF)
                        cr_assert_eq(g->cutoff_wall, s->now,
                                     "%s step %zu '%s': cutoff_wall %" PRId64, scen, i,
                                     s->what, g->cutoff_wall);
                if (out.events & GP_EV_REFUSED) {
                        cr_assert(out.err[0], "%s step %zu '%s': refused without a reason",
                                  scen, i, s->what);
                        cr_assert(memchr(out.err, '\0', sizeof(out.err)),
                                  "%s step %zu: err not terminated", scen, i);
                        if (s->err)
                                check_err(scen, i, s->what, out.err, s->err);
                } else {
                        cr_assert_eq(out.err[0], '\0', "%s step %zu '%s': err set: %s", scen,
                                     i, s->what, out.err);
                }
                bool late;
                gp_dest_t d0 = gp_gate_dest(g, conf, 0, &late);
                gp_dest_t dm = gp_gate_dest(g, conf, INT64_MAX, &late);
                cr_assert(d0 == s->at0 && dm == s->atmax,
                          "%s step %zu '%s': ts=0 -> %s (want %s), ts=max -> %s (want %s)",
                          scen, i, s->what, dest_name(d0), dest_name(s->at0), dest_name(dm),
                          dest_name(s->atmax));
        }
}

#define RUN_STEPS(scen, g, parts, n, conf, steps)                                             \
        run_steps(scen, g, parts, n, conf, steps, sizeof(steps) / sizeof(steps[0]))

/* ---- phase table ----------------------------------------------------- */

Test(phase, allowed_table) {
        /* [from][to], what a reader of the protocol expects. */
        static const bool want[GP_PHASE__N][GP_PHASE__N] = {
                /*          STEADY WAITING SPLIT CLOSED ABORTED */
                [GP_PHASE_STEADY] = {1, 1, 0, 0, 0},  [GP_PHASE_WAITING] = {0, 1, 1, 0, 1},
                [GP_PHASE_SPLIT] = {0, 0, 1, 1, 1},   [GP_PHASE_CLOSED] = {1, 1, 0, 1, 1},
                [GP_PHASE_ABORTED] = {1, 1, 0, 0, 1},
        };
        for (int f = 0; f < GP_PHASE__N; f++)
                for (int t = 0; t < GP_PHASE__N; t++)
                        cr_assert_eq(gp_phase_allowed((gp_phase_t)f, (gp_phase_t)t),
                                     want[f][t], "%s -> %s: allowed=%d, want %d",
                                     gp_phase_name((gp_phase_t)f),
                                     gp_phase_name((gp_phase_t)t), !want[f][t], want[f][t]);
        for (int f = 0; f <= GP_PHASE__N; f++) {
                cr_assert(!gp_phase_allowed((gp_phase_t)f, GP_PHASE__N), "%d -> N", f);
                cr_assert(!gp_phase_allowed(GP_PHASE__N, (gp_phase_t)f), "N -> %d", f);
                cr_assert(!gp_phase_allowed((gp_phase_t)f, (gp_phase_t)77), "%d -> 77", f);
        }
}

Test(phase, names_round_trip) {
        static const char *const names[] = {"steady", "waiting", "split", "closed", "aborted"};
        for (int p = 0; p < GP_PHASE__N; p++) {
                cr_assert_str_eq(gp_phase_name((gp_phase_t)p), names[p], "phase %d", p);
                gp_phase_t got = GP_PHASE__N;
                cr_assert_eq(gp_phase_parse(names[p], &got), 0, "parse %s", names[p]);
                cr_assert_eq(got, (gp_phase_t)p, "parse %s", names[p]);
        }
        static const char *const bad[] = {"",       "STEADY", "Split", "split ",
                                          " split", "splitx", "?",     "closed\n"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                gp_phase_t got = GP_PHASE_CLOSED;
                cr_assert_eq(gp_phase_parse(bad[i], &got), -1, "'%s' accepted", bad[i]);
                cr_assert_eq(got, GP_PHASE_CLOSED, "'%s': out written on error", bad[i]);
        }
        cr_assert_str_eq(gp_phase_name(GP_PHASE__N), "?", "name of an invalid phase");
}

/* ---- gp_gate_step scenarios ------------------------------------------ */

Test(step, first_deployment) {
        gp_gate_t g;
        gp_gate_init(&g, B);
        cr_assert(g.phase == GP_PHASE_STEADY && g.old_c == B && g.new_c == B &&
                          g.cutoff == NONE,
                  "gp_gate_init");
        step_t st[] = {
                {"operator deploys blue first", ctl(B, INIT, true, 0), view(NONE, NONE, false),
                 1, X(0, 0, STEADY, B, B, NONE, D_B, D_B)},
                {"blue transitioning, first: no T", ctl(B, TRANS, true, 5000),
                 view(100, 200, false), 2, X(0, 0, STEADY, B, B, NONE, D_B, D_B)},
                {"blue running", ctl(B, RUN, true, 0), view(100, 200, false), 3,
                 X(0, 0, STEADY, B, B, NONE, D_B, D_B)},
                {"first deployment is green: owner changes", ctl(G, RUN, true, 0),
                 view(100, 200, false), 4, X(1, GP_EV_OWNER, STEADY, G, G, NONE, D_G, D_G)},
                {"again: nothing", ctl(G, RUN, true, 0), view(100, 200, false), 5,
                 X(0, 0, STEADY, G, G, NONE, D_G, D_G)},
                {"a T in a first-deployment map is ignored",
                 with_set(ctl(G, TRANS, true, 0), 50), view(100, 200, false), 6,
                 X(0, 0, STEADY, G, G, NONE, D_G, D_G)},
                {"a request in a first-deployment map is ignored",
                 with_req(ctl(G, TRANS, true, 0), 500, 0), view(100, 200, false), 7,
                 X(0, 0, STEADY, G, G, NONE, D_G, D_G)},
        };
        RUN_STEPS("first", &g, NULL, 0, &conf0, st);
}

/* The whole hand-over BLUE -> GREEN, then the next one GREEN -> BLUE. */
Test(step, handover_blue_to_green_and_back) {
        gp_gate_t g;
        gp_gate_init(&g, B);
        gp_part_t p0, p1;
        gp_part_init(&p0, 0);
        gp_part_init(&p1, 0);
        gp_part_t *parts[] = {&p0, &p1};
        const int64_t T = 25001; /* hi_max + 1 > W + D */
        step_t st[] = {
                {"green initializing", ctl(G, INIT, false, 5000), view(NONE, NONE, false),
                 1000, X(1, GP_EV_TRANSITION, WAITING, B, G, NONE, D_B, D_B)},
                {"same map again", ctl(G, INIT, false, 5000), view(100, 200, false), 1001,
                 X(0, 0, WAITING, B, G, NONE, D_B, D_B)},
                {"transitioning, watermark unknown", ctl(G, TRANS, false, 5000),
                 view(NONE, 10000, false), 1002, X(0, 0, WAITING, B, G, NONE, D_B, D_B)},
                {"our WAITING_FOR_WATERMARK read back", with_wait(ctl(G, TRANS, false, 5000)),
                 view(NONE, 10000, false), 1003, X(0, 0, WAITING, B, G, NONE, D_B, D_B)},
                {"watermark known: T chosen", with_wait(ctl(G, TRANS, false, 5000)),
                 view(20000, 25000, false), 2000,
                 X(1, GP_EV_CUTOFF, SPLIT, B, G, T, D_B, D_G)},
                {"T read back, W = T + L - 1", with_set(ctl(G, TRANS, false, 5000), T),
                 view(T + 99, 30000, false), 2001, X(0, 0, SPLIT, B, G, T, D_B, D_G)},
                {"W = T + L but not drained", with_set(ctl(G, TRANS, false, 5000), T),
                 undrained(view(T + 100, 30000, false)), 2002,
                 X(0, 0, SPLIT, B, G, T, D_B, D_G)},
                {"W = T + L, drained: closed", with_set(ctl(G, TRANS, false, 5000), T),
                 view(T + 100, 30000, false), 2003,
                 X(1, GP_EV_CLOSED, CLOSED, B, G, T, D_G, D_G)},
                {"CLEAR_TO_TEARDOWN read back", with_set(ctl(G, CTT, false, 5000), T),
                 view(T + 200, 30000, false), 2004, X(0, 0, CLOSED, B, G, T, D_G, D_G)},
                {"operator: RUNNING", with_set(ctl(G, RUN, false, 5000), T),
                 view(T + 300, 30000, false), 2005, X(0, 0, CLOSED, B, G, T, D_G, D_G)},
                {"the next transition, to blue", ctl(B, INIT, false, 7000),
                 view(T + 400, 40000, false), 3000,
                 X(1, GP_EV_TRANSITION, WAITING, G, B, NONE, D_G, D_G)},
                {"blue transitioning: T = W + D", ctl(B, TRANS, false, 7000),
                 view(40000, 40000, false), 3001,
                 X(1, GP_EV_CUTOFF, SPLIT, G, B, 47000, D_G, D_B)},
                {"all idle long enough: closed", with_set(ctl(B, TRANS, false, 7000), 47000),
                 view(40000, 40000, true), 3001 + 1100,
                 X(1, GP_EV_CLOSED, CLOSED, G, B, 47000, D_B, D_B)},
        };
        p0.since_t[0] = 7;
        p1.since_t[1] = 9;
        RUN_STEPS("handover", &g, parts, 2, &conf0, st);
        cr_assert(p0.since_t[0] == 0 && p1.since_t[1] == 0,
                  "starting a transition resets since_t in every partition");
}

Test(step, since_t_reset_only_when_a_transition_starts) {
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        gp_part_t p;
        gp_part_init(&p, 0);
        p.since_t[0] = 3;
        p.since_t[1] = 4;
        gp_part_t *parts[] = {&p};
        step_t st[] = {
                {"same transition", with_set(ctl(G, TRANS, false, 0), 1000),
                 view(500, 999, false), 20, X(0, 0, SPLIT, B, G, 1000, D_B, D_G)},
                {"closed", with_set(ctl(G, TRANS, false, 0), 1000), view(1100, 1200, false),
                 30, X(1, GP_EV_CLOSED, CLOSED, B, G, 1000, D_G, D_G)},
        };
        RUN_STEPS("since_t", &g, parts, 1, &conf0, st);
        cr_assert(p.since_t[0] == 3 && p.since_t[1] == 4,
                  "since_t reset without a new transition");
}

Test(step, straight_to_transitioning) {
        /* The map skips INITIALIZING: the transition starts and T is chosen
         * in one step. */
        gp_gate_t g;
        gp_gate_init(&g, G);
        step_t st[] = {
                {"green->blue at TRANSITIONING", ctl(B, TRANS, false, 1000),
                 view(5000, 5500, false), 10,
                 X(1, GP_EV_TRANSITION | GP_EV_CUTOFF, SPLIT, G, B, 6000, D_G, D_B)},
        };
        RUN_STEPS("straight", &g, NULL, 0, &conf0, st);
}

/* Choosing T = max(hi_max + 1, W + D), aligned up. */
typedef struct {
        const char *row;
        int64_t wm, hi;
        bool all_idle;
        int64_t delay, conf_align, req_align, now;
        int64_t want; /* NONE: no T (waits or refused) */
        bool refused;
} cutoff_row_t;

static const cutoff_row_t cutoff_rows[] = {
        {"hi branch", 20000, 25000, 0, 5000, 1, 0, 9, 25001, 0},
        {"W+D branch", 20000, 24000, 0, 5000, 1, 0, 9, 25000, 0},
        {"tie", 20000, 24999, 0, 5000, 1, 0, 9, 25000, 0},
        {"D = 0: hi + 1", 20000, 20000, 0, 0, 1, 0, 9, 20001, 0},
        {"already aligned", 20000, 21000, 0, 5000, 1000, 0, 9, 25000, 0},
        {"aligned up", 20001, 21000, 0, 5000, 1000, 0, 9, 26000, 0},
        {"hi branch aligned up", 20000, 25000, 0, 5000, 1000, 0, 9, 26000, 0},
        {"hi + 1 already aligned", 20000, 24999, 0, 0, 1000, 0, 9, 25000, 0},
        {"negative, W+D branch", -7000, -6900, 0, 500, 1000, 0, 9, -6000, 0},
        {"negative, hi branch, aligned", -7000, -2001, 0, 0, 1000, 0, 9, -2000, 0},
        {"negative, hi branch, up", -7000, -2000, 0, 0, 1000, 0, 9, -1000, 0},
        {"negative up to zero", -5, -1, 0, 0, 1000, 0, 9, 0, 0},
        {"request align overrides conf", 20000, 0, 0, 5000, 1000, 60000, 9, 60000, 0},
        {"request align 1 overrides conf", 20001, 0, 0, 5000, 1000, 1, 9, 25001, 0},
        {"W+D saturates", INT64_MAX - 10, INT64_MAX - 20, 0, 5000, 1, 0, 9, INT64_MAX, 0},
        {"alignment overflows: refused", INT64_MAX - 10, INT64_MAX - 20, 0, 0, 1000, 0, 9,
         NONE, 1},
        {"hi_max = max: no T can exceed it", INT64_MAX - 10, INT64_MAX, 0, 0, 1, 0, 9, NONE,
         1},
        {"W near min", MIN1, MIN1, 0, 0, 1000, 0, 9,
         /* hi + 1 = min + 2, rounded up to a multiple of 1000 */
         INT64_MIN + 808, 0},
        {"watermark unknown, partitions active, no data: waits", NONE, NONE, 0, 5000, 1, 0, 9,
         NONE, 0},
        {"watermark unknown, partitions active, data: waits", NONE, 30000, 0, 5000, 1, 0, 9,
         NONE, 0},
        {"all idle, no data: now + D", NONE, NONE, 1, 5000, 1, 0, 1700000000123, 1700000005123,
         0},
        {"all idle, no data: now + D aligned", NONE, NONE, 1, 5000, 1000, 0, 1700000000123,
         1700000006000, 0},
        {"all idle with data: W + D", 30000, 30000, 1, 5000, 1, 0, 1700000000123, 35000, 0},
        {"no partitions at all: now + D", NONE, NONE, 1, 0, 1, 0, 42, 42, 0},
};

Test(step, choosing_t) {
        for (size_t i = 0; i < sizeof(cutoff_rows) / sizeof(cutoff_rows[0]); i++) {
                const cutoff_row_t *r = &cutoff_rows[i];
                gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
                gp_gate_conf_t conf = conf0;
                conf.align_ms = r->conf_align;
                gp_control_t c = with_wait(ctl(G, TRANS, false, r->delay));
                c.req_align_ms = r->req_align;
                gp_wm_view_t wv = view(r->wm, r->hi, r->all_idle);
                gp_step_t out;
                int ch = gp_gate_step(&g, NULL, 0, &c, &wv, &conf, r->now, &out);
                if (r->want == NONE) {
                        cr_assert(!ch && g.phase == GP_PHASE_WAITING && g.cutoff == NONE,
                                  "row %zu '%s': T chosen (%" PRId64 ")", i, r->row, g.cutoff);
                        cr_assert_eq(!!(out.events & GP_EV_REFUSED), r->refused,
                                     "row %zu '%s': events 0x%x", i, r->row,
                                     (unsigned)out.events);
                        if (r->refused)
                                cr_assert(out.err[0], "row %zu '%s': no reason", i, r->row);
                        continue;
                }
                cr_assert(ch && out.events == GP_EV_CUTOFF,
                          "row %zu '%s': changed=%d events=0x%x err=%s", i, r->row, ch,
                          (unsigned)out.events, out.err);
                cr_assert_eq(g.phase, GP_PHASE_SPLIT, "row %zu '%s'", i, r->row);
                cr_assert_eq(g.cutoff, r->want, "row %zu '%s': T=%" PRId64 ", want %" PRId64,
                             i, r->row, g.cutoff, r->want);
                cr_assert_eq(g.cutoff_wall, r->now, "row %zu '%s': cutoff_wall", i, r->row);
                cr_assert(r->hi == NONE || g.cutoff > r->hi, "row %zu '%s': T <= hi_max", i,
                          r->row);
        }
}

/* FAILING for the colour being rolled to (not a first deployment): the
 * roll failed, the old colour survives; outside a transition it changes
 * nothing and is no error. */
Test(step, failing_map) {
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        step_t st[] = {
                {"split, green failing: abort to blue", ctl(G, FAIL, false, 0),
                 view(100, 100, false), 20,
                 X(1, GP_EV_ABORTED, ABORTED, B, B, 1000, D_B, D_B)},
        };
        RUN_STEPS("failing", &g, NULL, 0, &conf0, st);
        gp_gate_t s2 = mk_gate(GP_PHASE_STEADY, B, B, NONE, NONE), before = s2;
        gp_control_t c = ctl(G, FAIL, false, 0);
        gp_wm_view_t wv = view(100, 100, false);
        gp_step_t out;
        cr_assert_eq(gp_gate_step(&s2, NULL, 0, &c, &wv, &conf0, 30, &out), 0);
        cr_assert_eq(out.events, 0, "a failed roll is not an error: 0x%x",
                     (unsigned)out.events);
        cr_assert(memcmp(&s2, &before, sizeof(s2)) == 0, "steady gate changed");
}

Test(step, t_only_at_transitioning) {
        gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
        step_t st[] = {
                {"initializing: no T", ctl(G, INIT, false, 0), view(100, 100, false), 1,
                 X(0, 0, WAITING, B, G, NONE, D_B, D_B)},
                {"initializing with a request: still no T",
                 with_req(ctl(G, INIT, false, 0), 500, 0), view(100, 100, false), 2,
                 X(0, 0, WAITING, B, G, NONE, D_B, D_B)},
                {"running without T: refused, no T", ctl(G, RUN, false, 0),
                 view(100, 100, false), 3, X(0, GP_EV_REFUSED, WAITING, B, G, NONE, D_B, D_B)},
                {"transitioning: T", ctl(G, TRANS, false, 0), view(100, 100, false), 4,
                 X(1, GP_EV_CUTOFF, SPLIT, B, G, 101, D_B, D_G)},
        };
        RUN_STEPS("t_only", &g, NULL, 0, &conf0, st);
}

/* An explicit T, from the CLI (request key) or already in the map. */
Test(step, explicit_cutoff) {
        gp_gate_conf_t conf = conf0;
        conf.align_ms = 1000; /* an explicit T is taken as given */
        struct {
                const char *row;
                gp_control_t c;
                gp_wm_view_t wv;
                int64_t want; /* NONE: refused */
                const char *err;
        } rows[] = {
                {"request hi+1", with_req(ctl(G, TRANS, false, 0), 25001, 0),
                 view(20000, 25000, false), 25001, NULL},
                {"request == hi", with_req(ctl(G, TRANS, false, 0), 25000, 0),
                 view(20000, 25000, false), NONE, "25000"},
                {"request < hi", with_req(ctl(G, TRANS, false, 0), 100, 0),
                 view(20000, 25000, false), NONE, "100"},
                {"request negative < hi", with_req(ctl(G, TRANS, false, 0), -77, 0),
                 view(20000, 25000, false), NONE, "-77"},
                {"request, nothing routed yet", with_req(ctl(G, TRANS, false, 0), -5, 0),
                 view(NONE, NONE, false), -5, NULL},
                {"request while W unknown", with_req(ctl(G, TRANS, false, 0), 30000, 0),
                 view(NONE, 25000, false), 30000, NULL},
                {"request below W + D is fine",
                 with_req(ctl(G, TRANS, false, 99999), 25001, 0), view(25000, 25000, false),
                 25001, NULL},
                {"request not re-aligned", with_req(ctl(G, TRANS, false, 0), 25001, 60000),
                 view(20000, 25000, false), 25001, NULL},
                {"map T hi+1 adopted", with_set(ctl(G, TRANS, false, 0), 25001),
                 view(20000, 25000, false), 25001, NULL},
                {"map T == hi refused", with_set(ctl(G, TRANS, false, 0), 25000),
                 view(20000, 25000, false), NONE, "25000"},
                {"map T min+1, nothing routed", with_set(ctl(G, TRANS, false, 0), MIN1),
                 view(NONE, NONE, true), MIN1, NULL},
                {"map T while waiting for W", with_set(ctl(G, TRANS, false, 0), 25001),
                 view(NONE, 25000, false), 25001, NULL},
                {"request and map T: request wins",
                 with_req(with_set(ctl(G, TRANS, false, 0), 26000), 30000, 0),
                 view(20000, 25000, false), 30000, NULL},
                {"toggle without WATERMARK_SET is not a T",
                 (gp_control_t){.active = G,
                                .stage = TRANS,
                                .wm_stage = GP_WMS_WAITING,
                                .toggle = 12,
                                .req_cutoff = NONE},
                 view(20000, 25000, false), 26000 /* aligned to 1000 */, NULL},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
                gp_gate_t before = g;
                gp_step_t out;
                int ch = gp_gate_step(&g, NULL, 0, &rows[i].c, &rows[i].wv, &conf, 77, &out);
                if (rows[i].want == NONE) {
                        cr_assert(!ch && out.events == GP_EV_REFUSED,
                                  "row %zu '%s': changed=%d events=0x%x", i, rows[i].row, ch,
                                  (unsigned)out.events);
                        cr_assert(memcmp(&g, &before, sizeof(g)) == 0,
                                  "row %zu '%s': a refused T changed the gate", i,
                                  rows[i].row);
                        cr_assert(strstr(out.err, rows[i].err),
                                  "row %zu '%s': err '%s' does not mention %s", i, rows[i].row,
                                  out.err, rows[i].err);
                        bool late;
                        cr_assert_eq(gp_gate_dest(&g, &conf, INT64_MAX, &late), D_B,
                                     "row %zu: routing changed after a refusal", i);
                } else {
                        cr_assert(ch && out.events == GP_EV_CUTOFF,
                                  "row %zu '%s': changed=%d events=0x%x err=%s", i,
                                  rows[i].row, ch, (unsigned)out.events, out.err);
                        cr_assert_eq(g.cutoff, rows[i].want,
                                     "row %zu '%s': T=%" PRId64 ", want %" PRId64, i,
                                     rows[i].row, g.cutoff, rows[i].want);
                        cr_assert_eq(g.phase, GP_PHASE_SPLIT, "row %zu '%s'", i, rows[i].row);
                }
        }
}

Test(step, refused_request_then_withdrawn) {
        gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
        step_t st[] = {
                {"bad request", with_req(ctl(G, TRANS, false, 1000), 10, 0),
                 view(20000, 25000, false), 1,
                 X(0, GP_EV_REFUSED, WAITING, B, G, NONE, D_B, D_B), .err = "10"},
                {"still there: refused again", with_req(ctl(G, TRANS, false, 1000), 10, 0),
                 view(20000, 25000, false), 2,
                 X(0, GP_EV_REFUSED, WAITING, B, G, NONE, D_B, D_B), .err = "refused|10"},
                {"withdrawn: the proxy chooses", ctl(G, TRANS, false, 1000),
                 view(20000, 25000, false), 3,
                 X(1, GP_EV_CUTOFF, SPLIT, B, G, 25001, D_B, D_G)},
        };
        RUN_STEPS("withdrawn", &g, NULL, 0, &conf0, st);
}

/* gp_gate_close_due is false outside SPLIT, even with W far beyond T + L. */
Test(step, close_due_only_split) {
        gp_wm_view_t wv = view(INT64_MAX, INT64_MAX, false);
        gp_phase_t ph[] = {GP_PHASE_STEADY, GP_PHASE_WAITING, GP_PHASE_CLOSED,
                           GP_PHASE_ABORTED};
        for (size_t i = 0; i < sizeof(ph) / sizeof(ph[0]); i++) {
                gp_gate_t g = mk_gate(ph[i], B, G, 10000, 5000);
                cr_assert(!gp_gate_close_due(&g, &wv, &conf0, 6000), "phase %s: due",
                          gp_phase_name(ph[i]));
        }
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 10000, 5000);
        cr_assert(gp_gate_close_due(&g, &wv, &conf0, 6000));
        wv.drained = false;
        cr_assert(gp_gate_close_due(&g, &wv, &conf0, 6000), "drained must not matter");
}

/* Closing: W >= T + L (and drained), or every partition idle for the idle
 * timeout plus the lateness since T was chosen. T = 10000 chosen at 5000. */
Test(step, closing) {
        gp_gate_conf_t conf = conf0; /* idle 1000, lateness 100 */
        gp_control_t c = with_set(ctl(G, TRANS, false, 0), 10000);
        struct {
                const char *row;
                gp_wm_view_t wv;
                int64_t now, t, tw;
                bool closed;
        } rows[] = {
                {"W = T + L - 1", view(10099, 10500, false), 6000, 10000, 5000, 0},
                {"W = T + L", view(10100, 10500, false), 6000, 10000, 5000, 1},
                {"W far beyond", view(INT64_MAX, INT64_MAX, false), 6000, 10000, 5000, 1},
                {"W = T + L, not drained", undrained(view(10100, 10500, false)), 6000, 10000,
                 5000, 0},
                {"W unknown", view(NONE, 10500, false), 60000, 10000, 5000, 0},
                {"all idle, idle + L - 1 since T", view(20000, 20000, true), 5000 + 1099,
                 10000, 5000, 0},
                {"all idle, idle + L since T", view(20000, 20000, true), 5000 + 1100, 10000,
                 5000, 1},
                {"all idle, no data ever", view(NONE, NONE, true), 5000 + 1100, 10000, 5000,
                 1},
                {"all idle, W (max) low", view(1, 1, true), 5000 + 1100, 10000, 5000, 1},
                {"all idle long ago, not drained", undrained(view(20000, 20000, true)),
                 INT64_MAX, 10000, 5000, 0},
                {"not all idle, long ago, W low", view(9000, 10500, false), 5000 + 1000000,
                 10000, 5000, 0},
                {"clock went back", view(20000, 20000, true), 4000, 10000, 5000, 0},
                {"T near max, W = max", view(INT64_MAX, INT64_MAX, false), 6000,
                 INT64_MAX - 10, 5000, 1},
                {"T near max, W = max - 1", view(INT64_MAX - 1, INT64_MAX, false), 6000,
                 INT64_MAX - 10, 5000, 0},
                {"T min+1, W = min+101", view(MIN1 + 100, MIN1 + 100, false), 6000, MIN1, 5000,
                 1},
                {"T min+1, W = min+100", view(MIN1 + 99, MIN1 + 99, false), 6000, MIN1, 5000,
                 0},
                /* A checkpoint can hold any tw: no overflow, no early close. */
                {"tw = min+1, now max", view(20000, 20000, true), INT64_MAX, 10000, MIN1, 1},
                {"tw = max, now min+1", view(20000, 20000, true), MIN1, 10000, INT64_MAX, 0},
                {"tw unset: never closed by idle", view(20000, 20000, true), INT64_MAX, 10000,
                 NONE, 0},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, rows[i].t, rows[i].tw);
                c.toggle = rows[i].t;
                gp_step_t out;
                /* gp_gate_close_due: the watermark condition alone, whatever
                 * drained says (the proxy's drain check runs only then). */
                bool due = gp_gate_close_due(&g, &rows[i].wv, &conf, rows[i].now);
                gp_gate_t g2 = g;
                gp_wm_view_t dv = rows[i].wv;
                dv.drained = true;
                cr_assert_eq(gp_gate_step(&g2, NULL, 0, &c, &dv, &conf, rows[i].now, &out) !=
                                     0,
                             due, "row %zu '%s': close_due %d disagrees with the close", i,
                             rows[i].row, due);
                cr_assert(!rows[i].closed || due, "row %zu '%s': closed but not due", i,
                          rows[i].row);
                int ch = gp_gate_step(&g, NULL, 0, &c, &rows[i].wv, &conf, rows[i].now, &out);
                if (rows[i].closed)
                        cr_assert(ch && out.events == GP_EV_CLOSED &&
                                          g.phase == GP_PHASE_CLOSED,
                                  "row %zu '%s': not closed (events 0x%x)", i, rows[i].row,
                                  (unsigned)out.events);
                else
                        cr_assert(!ch && out.events == 0 && g.phase == GP_PHASE_SPLIT,
                                  "row %zu '%s': closed too early", i, rows[i].row);
                cr_assert_eq(g.cutoff, rows[i].t, "row %zu '%s': T moved", i, rows[i].row);
        }
        /* Lateness 0: W = T closes. */
        conf.lateness_ms = 0;
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 10000, 5000);
        c.toggle = 10000;
        gp_wm_view_t wv = view(9999, 10000, false);
        gp_step_t out;
        cr_assert(!gp_gate_step(&g, NULL, 0, &c, &wv, &conf, 6000, &out), "L=0, W=T-1 closed");
        wv.wm = 10000;
        cr_assert(gp_gate_step(&g, NULL, 0, &c, &wv, &conf, 6000, &out) &&
                          g.phase == GP_PHASE_CLOSED,
                  "L=0, W=T not closed");
}

Test(step, abort) {
        /* From WAITING, the operator's abort: {BLUE, FAILING, first}. */
        gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
        step_t a[] = {
                {"abort from waiting", ctl(B, FAIL, true, 0), view(100, 100, false), 1,
                 X(1, GP_EV_ABORTED, ABORTED, B, B, NONE, D_B, D_B)},
                {"the same map again", ctl(B, FAIL, true, 0), view(100, 100, false), 2,
                 X(0, 0, ABORTED, B, B, NONE, D_B, D_B)},
                {"operator: blue running", ctl(B, RUN, true, 0), view(100, 100, false), 3,
                 X(0, 0, ABORTED, B, B, NONE, D_B, D_B)},
                {"a new try to green", ctl(G, INIT, false, 0), view(100, 100, false), 4,
                 X(1, GP_EV_TRANSITION, WAITING, B, G, NONE, D_B, D_B)},
        };
        RUN_STEPS("abort/waiting", &g, NULL, 0, &conf0, a);

        /* From SPLIT: the survivor takes everything, ts >= T included. */
        g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        step_t b[] = {
                {"abort from split", ctl(B, FAIL, true, 0), view(100, 1500, false), 20,
                 X(1, GP_EV_ABORTED, ABORTED, B, B, 1000, D_B, D_B)},
                {"a new try to green: T reset", ctl(G, INIT, false, 0), view(100, 1500, false),
                 30, X(1, GP_EV_TRANSITION, WAITING, B, G, NONE, D_B, D_B)},
                {"T again, above everything routed", ctl(G, TRANS, false, 0),
                 view(1400, 1500, false), 40, X(1, GP_EV_CUTOFF, SPLIT, B, G, 1501, D_B, D_G)},
        };
        RUN_STEPS("abort/split", &g, NULL, 0, &conf0, b);

        /* An abort whose survivor is the new colour. */
        g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        step_t c[] = {
                {"abort, survivor green", ctl(G, FAIL, true, 0), view(100, 1500, false), 20,
                 X(1, GP_EV_ABORTED, ABORTED, G, G, 1000, D_G, D_G)},
                {"green first again: nothing", ctl(G, RUN, true, 0), view(100, 1500, false),
                 21, X(0, 0, ABORTED, G, G, 1000, D_G, D_G)},
                {"first deployment says blue: owner", ctl(B, RUN, true, 0),
                 view(100, 1500, false), 22, X(1, GP_EV_OWNER, STEADY, B, B, ANY_T, D_B, D_B)},
        };
        RUN_STEPS("abort/survivor-new", &g, NULL, 0, &conf0, c);

        /* The map rolled back to the old colour mid-transition. */
        g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        step_t d[] = {
                {"rolled back to blue", ctl(B, TRANS, false, 0), view(100, 1500, false), 20,
                 X(1, GP_EV_ABORTED, ABORTED, B, B, 1000, D_B, D_B)},
                {"blue map again", ctl(B, RUN, false, 0), view(100, 1500, false), 21,
                 X(0, 0, ABORTED, B, B, 1000, D_B, D_B)},
        };
        RUN_STEPS("abort/rollback-split", &g, NULL, 0, &conf0, d);
        g = mk_gate(GP_PHASE_WAITING, G, B, NONE, NONE);
        step_t e[] = {
                {"rolled back to green while waiting", ctl(G, INIT, false, 0),
                 view(100, 1500, false), 20,
                 X(1, GP_EV_ABORTED, ABORTED, G, G, NONE, D_G, D_G)},
        };
        RUN_STEPS("abort/rollback-waiting", &g, NULL, 0, &conf0, e);

        /* After the close. */
        g = mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10);
        step_t f[] = {
                {"green first: already the owner", ctl(G, FAIL, true, 0),
                 view(100, 1500, false), 20, X(0, 0, CLOSED, B, G, 1000, D_G, D_G)},
                {"abort to blue after the close", ctl(B, FAIL, true, 0),
                 view(100, 1500, false), 21,
                 X(1, GP_EV_ABORTED, ABORTED, B, B, 1000, D_B, D_B)},
        };
        RUN_STEPS("abort/closed", &g, NULL, 0, &conf0, f);
}

Test(step, new_transition_from_closed_and_aborted) {
        gp_gate_t g = mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10);
        step_t a[] = {
                {"green -> blue from closed", ctl(B, INIT, false, 0), view(2000, 2000, false),
                 20, X(1, GP_EV_TRANSITION, WAITING, G, B, NONE, D_G, D_G)},
        };
        RUN_STEPS("new/closed", &g, NULL, 0, &conf0, a);
        cr_assert_eq(g.cutoff_wall, NONE, "cutoff_wall kept from the old transition");

        g = mk_gate(GP_PHASE_ABORTED, G, G, 1000, 10);
        step_t b[] = {
                {"green -> blue from aborted, at TRANSITIONING", ctl(B, TRANS, false, 0),
                 view(NONE, 2000, false), 20,
                 X(1, GP_EV_TRANSITION, WAITING, G, B, NONE, D_G, D_G)},
        };
        RUN_STEPS("new/aborted", &g, NULL, 0, &conf0, b);
}

/* A map that asks for something no transition explains: refused, the last
 * good state stays (invariant 6). */
Test(step, inconsistent_map_refused) {
        struct {
                const char *row;
                gp_gate_t g;
                gp_control_t c;
        } rows[] = {
                {"steady blue, green running", mk_gate(GP_PHASE_STEADY, B, B, NONE, NONE),
                 ctl(G, RUN, false, 0)},
                {"steady blue, green clear-to-teardown",
                 mk_gate(GP_PHASE_STEADY, B, B, NONE, NONE),
                 with_set(ctl(G, CTT, false, 0), 500)},
                {"closed on green, blue running", mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10),
                 ctl(B, RUN, false, 0)},
                {"aborted to blue, green clear-to-teardown",
                 mk_gate(GP_PHASE_ABORTED, B, B, 1000, 10), ctl(G, CTT, false, 0)},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_gate_t g = rows[i].g, before = rows[i].g;
                gp_wm_view_t wv = view(5000, 5000, false);
                gp_step_t out;
                int ch = gp_gate_step(&g, NULL, 0, &rows[i].c, &wv, &conf0, 99, &out);
                cr_assert(!ch && out.events == GP_EV_REFUSED, "row %zu '%s': ch=%d ev=0x%x", i,
                          rows[i].row, ch, (unsigned)out.events);
                cr_assert(memcmp(&g, &before, sizeof(g)) == 0, "row %zu '%s': gate changed", i,
                          rows[i].row);
                const char *want_c = gp_colour_upper(rows[i].c.active);
                cr_assert(strstr(out.err, want_c) &&
                                  strstr(out.err, gp_stage_name(rows[i].c.stage)),
                          "row %zu '%s': err '%s' names neither colour nor stage", i,
                          rows[i].row, out.err);
        }
        /* A consistent map for the owner is not an error. */
        gp_gate_t g = mk_gate(GP_PHASE_STEADY, B, B, NONE, NONE);
        gp_control_t c = ctl(B, RUN, false, 0);
        gp_wm_view_t wv = view(5000, 5000, false);
        gp_step_t out;
        cr_assert(!gp_gate_step(&g, NULL, 0, &c, &wv, &conf0, 1, &out) && out.events == 0,
                  "blue running for a blue gate is not an error");
}

/* ---- gp_gate_from_control -------------------------------------------- */

Test(from_control, each_stage) {
        struct {
                const char *row;
                gp_control_t c;
                gp_phase_t ph;
                gp_colour_t old_c, new_c;
                int64_t t;
        } rows[] = {
                {"first, green initializing", ctl(G, INIT, true, 0), GP_PHASE_STEADY, G, G,
                 NONE},
                {"first, blue running", ctl(B, RUN, true, 0), GP_PHASE_STEADY, B, B, NONE},
                {"first, blue failing (abort)", with_set(ctl(B, FAIL, true, 0), 500),
                 GP_PHASE_STEADY, B, B, NONE},
                {"first with T in the map", with_set(ctl(G, TRANS, true, 0), 500),
                 GP_PHASE_STEADY, G, G, NONE},
                {"green initializing", ctl(G, INIT, false, 0), GP_PHASE_WAITING, B, G, NONE},
                {"green transitioning", ctl(G, TRANS, false, 0), GP_PHASE_WAITING, B, G, NONE},
                {"green transitioning, waiting for W", with_wait(ctl(G, TRANS, false, 0)),
                 GP_PHASE_WAITING, B, G, NONE},
                {"green transitioning, T set", with_set(ctl(G, TRANS, false, 0), 5000),
                 GP_PHASE_SPLIT, B, G, 5000},
                {"blue transitioning, negative T", with_set(ctl(B, TRANS, false, 0), -7),
                 GP_PHASE_SPLIT, G, B, -7},
                {"green clear-to-teardown", with_set(ctl(G, CTT, false, 0), 5000),
                 GP_PHASE_CLOSED, B, G, 5000},
                {"green running with T", with_set(ctl(G, RUN, false, 0), 5000),
                 GP_PHASE_CLOSED, B, G, 5000},
                {"green running, no T", ctl(G, RUN, false, 0), GP_PHASE_STEADY, G, G, NONE},
                {"blue failing (not first): green stays", ctl(B, FAIL, false, 0),
                 GP_PHASE_STEADY, G, G, NONE},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_gate_t g;
                memset(&g, 0x7f, sizeof(g));
                gp_gate_from_control(&g, &rows[i].c, 1234);
                cr_assert_eq(g.phase, rows[i].ph, "row %zu '%s': phase %s", i, rows[i].row,
                             gp_phase_name(g.phase));
                cr_assert(g.old_c == rows[i].old_c && g.new_c == rows[i].new_c,
                          "row %zu '%s': colours %s->%s", i, rows[i].row,
                          gp_colour_name(g.old_c), gp_colour_name(g.new_c));
                cr_assert_eq(g.cutoff, rows[i].t, "row %zu '%s': T=%" PRId64, i, rows[i].row,
                             g.cutoff);
                cr_assert_eq(g.cutoff_wall, rows[i].t == NONE ? NONE : 1234,
                             "row %zu '%s': cutoff_wall %" PRId64, i, rows[i].row,
                             g.cutoff_wall);
                cr_assert_eq(g.seq, 0, "row %zu '%s': seq", i, rows[i].row);
                /* A gate derived from a map and that map: nothing to do. */
                gp_gate_t before = g;
                gp_wm_view_t wv = view(NONE, NONE, false);
                gp_step_t out;
                gp_gate_step(&g, NULL, 0, &rows[i].c, &wv, &conf0, 1235, &out);
                cr_assert(memcmp(&g, &before, sizeof(g)) == 0 && out.events == 0,
                          "row %zu '%s': step on its own map changed it (events 0x%x)", i,
                          rows[i].row, (unsigned)out.events);
        }
}

/* ---- gp_gate_publication ---------------------------------------------- */

Test(publication, table) {
        struct {
                const char *row;
                gp_gate_t g;
                gp_control_t c;
                bool ret;
                gp_wm_stage_t wms;
                int64_t toggle;
                bool ctt;
        } rows[] = {
                {"waiting: WAITING_FOR_WATERMARK", mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE),
                 ctl(G, TRANS, false, 0), 1, GP_WMS_WAITING, 0, 0},
                {"waiting, already in the map", mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE),
                 with_wait(ctl(G, TRANS, false, 0)), 0, GP_WMS_NONE, 0, 0},
                {"waiting, map initializing", mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE),
                 ctl(G, INIT, false, 0), 0, GP_WMS_NONE, 0, 0},
                {"waiting, map has a (refused) T", mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE),
                 with_set(ctl(G, TRANS, false, 0), 3), 0, GP_WMS_NONE, 0, 0},
                {"split: WATERMARK_SET + T", mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                 with_wait(ctl(G, TRANS, false, 0)), 1, GP_WMS_SET, 5000, 0},
                {"split, negative T", mk_gate(GP_PHASE_SPLIT, G, B, -5000, 1),
                 with_wait(ctl(B, TRANS, false, 0)), 1, GP_WMS_SET, -5000, 0},
                {"split, map without watermark-stage: WAITING first",
                 mk_gate(GP_PHASE_SPLIT, G, B, -5000, 1), ctl(B, TRANS, false, 0), 1,
                 GP_WMS_WAITING, 0, 0},
                {"closed, map without watermark-stage: WAITING first",
                 mk_gate(GP_PHASE_CLOSED, B, G, 5000, 1), ctl(G, TRANS, false, 0), 1,
                 GP_WMS_WAITING, 0, 0},
                {"split, already in the map", mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                 with_set(ctl(G, TRANS, false, 0), 5000), 0, GP_WMS_NONE, 0, 0},
                {"split, another T in the map", mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                 with_set(ctl(G, TRANS, false, 0), 4000), 1, GP_WMS_SET, 5000, 0},
                {"split, map initializing", mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                 ctl(G, INIT, false, 0), 0, GP_WMS_NONE, 0, 0},
                {"closed: clear to teardown", mk_gate(GP_PHASE_CLOSED, B, G, 5000, 1),
                 with_set(ctl(G, TRANS, false, 0), 5000), 1, GP_WMS_NONE, 0, 1},
                {"closed, T missing too", mk_gate(GP_PHASE_CLOSED, B, G, 5000, 1),
                 with_wait(ctl(G, TRANS, false, 0)), 1, GP_WMS_SET, 5000, 1},
                {"closed, map clear-to-teardown", mk_gate(GP_PHASE_CLOSED, B, G, 5000, 1),
                 with_set(ctl(G, CTT, false, 0), 5000), 0, GP_WMS_NONE, 0, 0},
                {"closed, map running", mk_gate(GP_PHASE_CLOSED, B, G, 5000, 1),
                 with_set(ctl(G, RUN, false, 0), 5000), 0, GP_WMS_NONE, 0, 0},
                {"split, map for another transition", mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                 ctl(B, TRANS, false, 0), 0, GP_WMS_NONE, 0, 0},
                {"closed, map for another transition", mk_gate(GP_PHASE_CLOSED, B, G, 5000, 1),
                 ctl(B, TRANS, false, 0), 0, GP_WMS_NONE, 0, 0},
                {"split, map is an abort", mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                 ctl(G, TRANS, true, 0), 0, GP_WMS_NONE, 0, 0},
                {"steady", mk_gate(GP_PHASE_STEADY, G, G, NONE, NONE), ctl(G, TRANS, false, 0),
                 0, GP_WMS_NONE, 0, 0},
                {"aborted", mk_gate(GP_PHASE_ABORTED, G, G, 5000, 1), ctl(G, TRANS, false, 0),
                 0, GP_WMS_NONE, 0, 0},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_publish_t out;
                memset(&out, 0x5a, sizeof(out));
                rows[i].c.tid = rows[i].g.tid; /* the map names the gate's transition */
                bool ret = gp_gate_publication(&rows[i].g, &rows[i].c, &out);
                if (rows[i].ret) {
                        /* ... and a map naming another, or none yet, gets
                         * nothing of it. */
                        gp_control_t other = rows[i].c;
                        other.tid = rows[i].g.tid + 1;
                        cr_assert(!gp_gate_publication(&rows[i].g, &other, &out),
                                  "row %zu '%s': published into another transition", i,
                                  rows[i].row);
                        other.tid = 0;
                        cr_assert(!gp_gate_publication(&rows[i].g, &other, &out),
                                  "row %zu '%s': published into a map without the id", i,
                                  rows[i].row);
                        memset(&out, 0x5a, sizeof(out));
                        gp_gate_publication(&rows[i].g, &rows[i].c, &out);
                }
                cr_assert_eq(ret, rows[i].ret, "row %zu '%s': returned %d", i, rows[i].row,
                             ret);
                cr_assert_eq(out.wm_stage, rows[i].wms, "row %zu '%s': wm_stage %d", i,
                             rows[i].row, (int)out.wm_stage);
                if (rows[i].wms == GP_WMS_SET)
                        cr_assert_eq(out.toggle, rows[i].toggle,
                                     "row %zu '%s': toggle %" PRId64, i, rows[i].row,
                                     out.toggle);
                cr_assert_eq(out.clear_to_teardown, rows[i].ctt, "row %zu '%s': ctt", i,
                             rows[i].row);
        }
}

/* Publishing and reading back converges: after applying what publication
 * asks, it asks nothing more. */
Test(publication, converges) {
        gp_gate_t gates[] = {mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE),
                             mk_gate(GP_PHASE_SPLIT, B, G, 5000, 1),
                             mk_gate(GP_PHASE_CLOSED, G, B, -5, 1)};
        for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++) {
                gp_control_t c = ctl(gates[i].new_c, TRANS, false, 0);
                c.tid = gates[i].tid;
                gp_publish_t out;
                int rounds = 0;
                while (gp_gate_publication(&gates[i], &c, &out)) {
                        cr_assert(++rounds <= 3, "gate %zu: publication does not converge", i);
                        if (out.wm_stage != GP_WMS_NONE)
                                c.wm_stage = out.wm_stage;
                        if (out.wm_stage == GP_WMS_SET)
                                c.toggle = out.toggle;
                        if (out.clear_to_teardown)
                                c.stage = CTT;
                }
                /* WAITING_FOR_WATERMARK first, then T (with CLEAR_TO_TEARDOWN). */
                cr_assert_eq(rounds, i == 0 ? 1 : 2, "gate %zu: %d rounds", i, rounds);
        }
}

/* ---- gp_gate_watermark ------------------------------------------------ */

typedef struct {
        int64_t hi, last_wall;
} pspec_t;

Test(watermark, table) {
        struct {
                const char *row;
                int64_t ooo, idle, now;
                size_t n;
                pspec_t p[4];
                int64_t wm, hi_max;
                bool all_idle;
        } rows[] = {
                {"min over active",
                 100,
                 1000,
                 5000,
                 2,
                 {{1000, 4900}, {2000, 4900}},
                 900,
                 2000,
                 0},
                {"idle partition excluded",
                 100,
                 1000,
                 5000,
                 2,
                 {{1000, 3000}, {2000, 4900}},
                 1900,
                 2000,
                 0},
                {"idle exactly at the timeout",
                 0,
                 1000,
                 5000,
                 2,
                 {{1000, 4000}, {2000, 4900}},
                 2000,
                 2000,
                 0},
                {"one ms before the timeout: active",
                 0,
                 1000,
                 5000,
                 2,
                 {{1000, 4001}, {2000, 4900}},
                 1000,
                 2000,
                 0},
                {"active without data: unknown",
                 0,
                 1000,
                 5000,
                 2,
                 {{NONE, 4900}, {2000, 4900}},
                 NONE,
                 2000,
                 0},
                {"idle without data: ignored",
                 0,
                 1000,
                 5000,
                 2,
                 {{NONE, 100}, {2000, 4900}},
                 2000,
                 2000,
                 0},
                {"all idle: the max",
                 100,
                 1000,
                 5000,
                 3,
                 {{1000, 10}, {2000, 20}, {NONE, 30}},
                 1900,
                 2000,
                 1},
                {"all idle, no data",
                 100,
                 1000,
                 5000,
                 2,
                 {{NONE, 10}, {NONE, 20}},
                 NONE,
                 NONE,
                 1},
                {"no partitions", 100, 1000, 5000, 0, {{0, 0}}, NONE, NONE, 1},
                {"hi_max includes idle partitions",
                 0,
                 1000,
                 5000,
                 2,
                 {{9000, 10}, {2000, 4900}},
                 2000,
                 9000,
                 0},
                {"out-of-orderness near min",
                 1000,
                 1000,
                 5000,
                 1,
                 {{MIN1, 4900}},
                 MIN1,
                 MIN1,
                 0},
                {"near min, partly",
                 1000,
                 1000,
                 5000,
                 1,
                 {{INT64_MIN + 500, 4900}},
                 MIN1,
                 INT64_MIN + 500,
                 0},
                {"near min, exact",
                 1000,
                 1000,
                 5000,
                 1,
                 {{INT64_MIN + 1001, 4900}},
                 MIN1,
                 INT64_MIN + 1001,
                 0},
                {"near min, one above",
                 1000,
                 1000,
                 5000,
                 1,
                 {{INT64_MIN + 1002, 4900}},
                 INT64_MIN + 2,
                 INT64_MIN + 1002,
                 0},
                {"huge out-of-orderness",
                 INT64_MAX,
                 1000,
                 5000,
                 2,
                 {{INT64_MAX, 4900}, {5, 4900}},
                 INT64_MIN + 6,
                 INT64_MAX,
                 0},
                {"huge out-of-orderness, hi max",
                 INT64_MAX,
                 1000,
                 5000,
                 1,
                 {{INT64_MAX, 4900}},
                 0,
                 INT64_MAX,
                 0},
                {"last_wall far in the past", 0, 1000, INT64_MAX, 1, {{7, MIN1}}, 7, 7, 1},
                {"last_wall in the future", 0, 1000, MIN1, 1, {{7, INT64_MAX}}, 7, 7, 0},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_part_t ps[4];
                const gp_part_t *pp[4];
                for (size_t k = 0; k < rows[i].n; k++) {
                        gp_part_init(&ps[k], rows[i].p[k].last_wall);
                        ps[k].hi = rows[i].p[k].hi;
                        pp[k] = &ps[k];
                }
                gp_gate_conf_t c = conf0;
                c.out_of_orderness_ms = rows[i].ooo;
                c.idle_ms = rows[i].idle;
                gp_wm_view_t out;
                memset(&out, 0, sizeof(out));
                gp_gate_watermark(pp, rows[i].n, &c, rows[i].now, &out);
                cr_assert_eq(out.wm, rows[i].wm, "row %zu '%s': wm=%" PRId64 ", want %" PRId64,
                             i, rows[i].row, out.wm, rows[i].wm);
                cr_assert_eq(out.hi_max, rows[i].hi_max, "row %zu '%s': hi_max=%" PRId64, i,
                             rows[i].row, out.hi_max);
                cr_assert_eq(out.all_idle, rows[i].all_idle, "row %zu '%s': all_idle", i,
                             rows[i].row);
                cr_assert(out.drained, "row %zu '%s': drained not set", i, rows[i].row);
        }
}

/* ---- gp_align_up -------------------------------------------------------- */

Test(align, table) {
        static const struct {
                int64_t t, a, want;
        } rows[] = {
                {0, 1000, 0},
                {1, 1000, 1000},
                {999, 1000, 1000},
                {1000, 1000, 1000},
                {1001, 1000, 2000},
                {-1, 1000, 0},
                {-999, 1000, 0},
                {-1000, 1000, -1000},
                {-1001, 1000, -1000},
                {-1500, 1000, -1000},
                {-2000, 1000, -2000},
                {12345, 1, 12345},
                {12345, 0, 12345},
                {12345, -7, 12345},
                {-12345, 1, -12345},
                {INT64_MAX, 1, INT64_MAX},
                {INT64_MAX, 1000, GP_TS_NONE},            /* 9223372036854775807 -> overflow */
                {INT64_MAX - 807, 1000, INT64_MAX - 807}, /* ...775000 is aligned */
                {INT64_MAX - 808, 1000, INT64_MAX - 807},
                {INT64_MAX - 806, 1000, GP_TS_NONE},
                {1, INT64_MAX, INT64_MAX},
                {-1, INT64_MAX, 0},
                {MIN1, 1000, INT64_MIN + 808}, /* ...807 -> ...000 */
                {INT64_MIN + 808, 1000, INT64_MIN + 808},
                {MIN1, INT64_MAX, MIN1}, /* -(2^63-1) is a multiple */
                {MIN1, 2, INT64_MIN + 2},
                {1700000000123, 60000, 1700000040000},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int64_t got = gp_align_up(rows[i].t, rows[i].a);
                cr_assert_eq(got, rows[i].want,
                             "row %zu: align_up(%" PRId64 ", %" PRId64 ") = %" PRId64
                             ", want %" PRId64,
                             i, rows[i].t, rows[i].a, got, rows[i].want);
                if (got != GP_TS_NONE && rows[i].a > 1)
                        cr_assert(got >= rows[i].t && got % rows[i].a == 0 &&
                                          got - rows[i].t < rows[i].a,
                                  "row %zu: not the next multiple", i);
        }
}

/* ---- cases read straight from the rules ------------------------------ */

/* Routing: "Closed (after the proxy wrote CLEAR_TO_TEARDOWN), and RUNNING:
 * every record goes to NEW". A gate still in SPLIT that reads RUNNING for
 * the same transition keeps sending ts < T to OLD (which the operator is
 * tearing down), and reports nothing. */
Test(rules, running_map_while_split_sends_all_to_new) {
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        gp_control_t c = with_set(ctl(G, RUN, false, 0), 1000);
        gp_wm_view_t wv = view(500, 999, false);
        gp_step_t out;
        gp_gate_step(&g, NULL, 0, &c, &wv, &conf0, 20, &out);
        bool late;
        cr_assert_eq(gp_gate_dest(&g, &conf0, 999, &late), D_G,
                     "routing: with the map at RUNNING, ts < T must go to NEW (phase %s)",
                     gp_phase_name(g.phase));
}

/* Invariant 6: invalid control input never changes routing and "the error is
 * reported". A map at CLEAR_TO_TEARDOWN / RUNNING while no T exists cannot
 * come from the protocol (only the gate writes CLEAR_TO_TEARDOWN, after T);
 * the code ignores it silently. */
Test(rules, teardown_map_while_waiting_is_reported) {
        static const gp_stage_t stages[] = {GP_STAGE_CLEAR_TO_TEARDOWN, GP_STAGE_RUNNING};
        for (size_t i = 0; i < 2; i++) {
                gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
                gp_control_t c = ctl(G, stages[i], false, 0);
                gp_wm_view_t wv = view(500, 999, false);
                gp_step_t out;
                gp_gate_step(&g, NULL, 0, &c, &wv, &conf0, 20, &out);
                cr_assert(out.events & GP_EV_REFUSED,
                          "invariant 6: %s while waiting for T must be reported",
                          gp_stage_name(stages[i]));
        }
}

/* Routing: close when "every partition has been idle that long since T was
 * set". Here a partition received a record after T was chosen and has been
 * quiet only for the idle timeout (not idle + lateness); the code closes
 * because it looks at when T was chosen, not at the partitions. */
Test(rules, idle_close_counts_from_the_last_record) {
        gp_gate_conf_t conf = conf0; /* idle 1000, lateness 100 */
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 10000, 5000);
        gp_part_t p;
        gp_part_init(&p, 0);
        bool late;
        gp_gate_route(&g, &conf, &p, 9000, 5100, &late); /* after T was chosen */
        gp_part_t *parts[] = {&p};
        const gp_part_t *cparts[] = {&p};
        int64_t now = 5100 + 1000; /* idle for the timeout only */
        gp_wm_view_t wv;
        gp_gate_watermark(cparts, 1, &conf, now, &wv);
        cr_assert(wv.all_idle, "setup: the partition is idle");
        cr_assert(now - g.cutoff_wall >= conf.idle_ms + conf.lateness_ms, "setup");
        gp_control_t c = with_set(ctl(G, TRANS, false, 0), 10000);
        gp_step_t out;
        gp_gate_step(&g, parts, 1, &c, &wv, &conf, now, &out);
        cr_assert_eq(g.phase, GP_PHASE_SPLIT,
                     "routing: closed after %" PRId64
                     " ms of quiet, idle + lateness is %" PRId64,
                     now - p.last_wall, conf.idle_ms + conf.lateness_ms);
}

/* Routing: an explicit T "is accepted only if it keeps the invariant;
 * otherwise it is refused with an error key". A request that arrives after
 * T was chosen is neither applied nor refused: it is ignored silently. */
Test(rules, request_after_t_is_refused) {
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 10000, 5000);
        gp_control_t c = with_req(with_set(ctl(G, TRANS, false, 0), 10000), 20000, 0);
        gp_wm_view_t wv = view(9000, 9500, false);
        gp_step_t out;
        gp_gate_step(&g, NULL, 0, &c, &wv, &conf0, 6000, &out);
        cr_assert_eq(g.cutoff, 10000, "T must not move during the split");
        cr_assert(out.events & GP_EV_REFUSED,
                  "routing: a cutoff request the gate does not apply must be refused with a "
                  "reason");
}

/* ---- a transition's identity (GP_KEY_TID) ---------------------------- */

/* A line of an earlier transition between the same colours (left by a
 * member that died in it, before an abort and a cutover again) gives
 * nothing to the current one: not its T, not its close. */
Test(identity, a_stale_line_is_not_the_current_transition) {
        char err[256];
        gp_gate_t g = mk_gate(GP_PHASE_WAITING, B, G, NONE, NONE);
        g.tid = 20;
        gp_gate_t stale = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        stale.tid = 10;
        stale.seq = 900;
        cr_assert_eq(gp_gate_adopt(&g, &stale, err, sizeof err), 0, "%s", err);
        cr_assert(g.phase == GP_PHASE_WAITING && g.cutoff == NONE && g.tid == 20,
                  "took %s T=%" PRId64 " tx=%" PRId64 " from a stale line",
                  gp_phase_name(g.phase), g.cutoff, g.tid);
        cr_assert_eq(g.seq, 900, "seq stays a Lamport clock");
        stale.phase = GP_PHASE_CLOSED;
        g.phase = GP_PHASE_SPLIT;
        g.cutoff = 2000;
        cr_assert_eq(gp_gate_adopt(&g, &stale, err, sizeof err), 0,
                     "two T of two transitions are no conflict: %s", err);
        cr_assert(g.phase == GP_PHASE_SPLIT && g.cutoff == 2000);
        /* A line from before transition ids (gp4: tx=0) is older too. */
        stale.tid = 0;
        cr_assert_eq(gp_gate_adopt(&g, &stale, err, sizeof err), 0, "%s", err);
        cr_assert(g.phase == GP_PHASE_SPLIT && g.cutoff == 2000);
        /* The same transition: the further phase wins, as before. */
        gp_gate_t same = mk_gate(GP_PHASE_CLOSED, B, G, 2000, 10);
        same.tid = 20;
        cr_assert_eq(gp_gate_adopt(&g, &same, err, sizeof err), 1, "%s", err);
        cr_assert_eq(g.phase, GP_PHASE_CLOSED);
}

/* A later transition's line is taken by a gate with none open; a gate
 * mid-way (or re-delivering after an abort) waits for the map to end its
 * own. A gate without an id takes the line's. */
Test(identity, a_later_line) {
        char err[256];
        gp_gate_t later = mk_gate(GP_PHASE_WAITING, G, B, NONE, NONE);
        later.tid = 30;
        static const struct {
                gp_phase_t ph;
                int changed;
        } rows[] = {{GP_PHASE_STEADY, 1},
                    {GP_PHASE_CLOSED, 1},
                    {GP_PHASE_WAITING, 0},
                    {GP_PHASE_SPLIT, 0},
                    {GP_PHASE_ABORTED, 0}};
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_gate_t g = mk_gate(
                        rows[i].ph, B, G,
                        rows[i].ph == GP_PHASE_WAITING || rows[i].ph == GP_PHASE_STEADY ? NONE
                                                                                        : 1000,
                        10);
                g.tid = 20;
                int ch = gp_gate_adopt(&g, &later, err, sizeof err);
                cr_assert_eq(ch, rows[i].changed, "%s: changed %d", gp_phase_name(rows[i].ph),
                             ch);
                cr_assert_eq(g.tid, ch ? 30 : 20, "%s", gp_phase_name(rows[i].ph));
        }
        gp_gate_t g = mk_gate(GP_PHASE_WAITING, G, B, NONE, NONE);
        g.tid = 0;
        cr_assert_eq(gp_gate_adopt(&g, &later, err, sizeof err), 1, "%s", err);
        cr_assert_eq(g.tid, 30);
}

/* A map that names an earlier transition than the gate is a copy behind
 * the checkpoints (a lagging watch): nothing is done from it, not even
 * what the same map would ask of a gate without an id. */
Test(identity, a_map_behind_the_gate_is_not_followed) {
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        g.tid = 20;
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_part_t *parts[] = {&p};
        gp_step_t out;
        const gp_wm_view_t wv500 = view(500, 500, false);
        /* the map as it was before the cutover: blue running */
        gp_control_t old = ctl(B, RUN, false, 0);
        old.tid = 10;
        old.tid_ended = true;
        gp_gate_t before = g;
        cr_assert_eq(gp_gate_step(&g, parts, 1, &old, &wv500, &conf0, 50, &out), 0);
        cr_assert(out.events == 0 && !memcmp(&g, &before, sizeof g), "stepped: events 0x%x %s",
                  (unsigned)out.events, gp_phase_name(g.phase));
        /* the same map with this transition's id ended: an abort */
        old.tid = 20;
        cr_assert_eq(gp_gate_step(&g, parts, 1, &old, &wv500, &conf0, 50, &out), 1);
        cr_assert(out.events & GP_EV_ABORTED, "events 0x%x", (unsigned)out.events);
}

/* A map open at a later id than a gate mid-way ends the gate's transition
 * (abort to its old colour); a new transition begins only under an id,
 * and never under the id of one that ended here. */
Test(identity, transitions_begin_and_end_by_id) {
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_part_t *parts[] = {&p};
        gp_step_t out;
        const gp_wm_view_t wv500 = view(500, 500, false);
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        g.tid = 20;
        gp_control_t c = ctl(G, TRANS, false, 0);
        c.tid = 20;
        gp_gate_step(&g, parts, 1, &c, &wv500, &conf0, 50, &out);
        cr_assert_eq(g.phase, GP_PHASE_SPLIT, "its own id: goes on");
        c.tid = 21;
        gp_gate_step(&g, parts, 1, &c, &wv500, &conf0, 50, &out);
        cr_assert(g.phase == GP_PHASE_ABORTED && (out.events & GP_EV_ABORTED) && g.tid == 20,
                  "a later id: %s tx=%" PRId64, gp_phase_name(g.phase), g.tid);

        g = mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10);
        g.tid = 20;
        c = ctl(B, TRANS, false, 0);
        c.tid = 0;
        gp_gate_step(&g, parts, 1, &c, &wv500, &conf0, 50, &out);
        cr_assert_eq(g.phase, GP_PHASE_CLOSED, "no id yet: waits");
        c.tid = 20;
        c.tid_ended = true;
        gp_gate_step(&g, parts, 1, &c, &wv500, &conf0, 50, &out);
        cr_assert_eq(g.phase, GP_PHASE_CLOSED, "an ended id: waits");
        c.tid_ended = false;
        gp_gate_step(&g, parts, 1, &c, &wv500, &conf0, 50, &out);
        cr_assert_eq(g.phase, GP_PHASE_CLOSED, "the id of the transition that closed here");
        c.tid = 21;
        gp_gate_step(&g, parts, 1, &c, &wv500, &conf0, 50, &out);
        cr_assert((out.events & GP_EV_TRANSITION) && g.tid == 21 && g.old_c == G &&
                          g.new_c == B,
                  "begun: %s tx=%" PRId64, gp_phase_name(g.phase), g.tid);
}

/* A gate made of a dead member's lines, still splitting an earlier
 * transition, meets a map at a later one: where every partition it owns
 * closed the old side, that transition went through its close, not an
 * abort; else it aborts as before. */
Test(identity, a_split_of_closed_lines_ended_by_its_close) {
        gp_part_t a, b;
        gp_part_init(&a, 0);
        gp_part_init(&b, 0);
        a.closed = b.closed = true;
        gp_part_t *parts[] = {&a, &b};
        gp_step_t out;
        const gp_wm_view_t wv = view(500, 500, false);
        gp_control_t c = ctl(B, TRANS, false, 0); /* the next hop, green -> blue */
        c.tid = 21;
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        g.tid = 20;
        gp_gate_step(&g, parts, 2, &c, &wv, &conf0, 50, &out);
        cr_assert(g.phase == GP_PHASE_CLOSED && !(out.events & GP_EV_ABORTED) && g.tid == 20,
                  "%s, events 0x%x", gp_phase_name(g.phase), (unsigned)out.events);
        b.closed = false;
        g = mk_gate(GP_PHASE_SPLIT, B, G, 1000, 10);
        g.tid = 20;
        gp_gate_step(&g, parts, 2, &c, &wv, &conf0, 50, &out);
        cr_assert(g.phase == GP_PHASE_ABORTED && (out.events & GP_EV_ABORTED), "%s",
                  gp_phase_name(g.phase));
}

/* A closed gate meets a later transition into the colour it rolled to:
 * the map went back to the old colour in between (an abort after the
 * close the gate did not read). The gate takes that abort, to its old
 * colour, and begins nothing yet; a later transition out of its colour,
 * or one of the map's ids it has already seen, is no abort. */
Test(identity, a_closed_gate_takes_an_abort_it_did_not_read) {
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_part_t *parts[] = {&p};
        gp_step_t out;
        const gp_wm_view_t wv = view(500, 500, false);
        gp_control_t c = ctl(G, TRANS, false, 0); /* blue -> green again */
        c.tid = 21;
        gp_gate_t g = mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10);
        g.tid = 20;
        cr_assert_eq(gp_gate_step(&g, parts, 1, &c, &wv, &conf0, 50, &out), 1);
        cr_assert(g.phase == GP_PHASE_ABORTED && (out.events & GP_EV_ABORTED) &&
                          !(out.events & GP_EV_TRANSITION) && g.tid == 20 && g.old_c == B &&
                          g.new_c == B && g.cutoff == 1000,
                  "%s tx=%" PRId64 " %s -> %s, events 0x%x", gp_phase_name(g.phase), g.tid,
                  gp_colour_name(g.old_c), gp_colour_name(g.new_c), (unsigned)out.events);
        g = mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10);
        g.tid = 20;
        c.tid = 20; /* its own transition, still open: nothing */
        gp_gate_step(&g, parts, 1, &c, &wv, &conf0, 50, &out);
        cr_assert_eq(g.phase, GP_PHASE_CLOSED);
        c.tid = 21;
        c.stage = RUN; /* not open: nothing asked */
        gp_gate_step(&g, parts, 1, &c, &wv, &conf0, 50, &out);
        cr_assert_eq(g.phase, GP_PHASE_CLOSED);
}

/* Which committed lines hold a new transition back (gp_agree_settled):
 * the gate ended transition 20 as in `g`, the map opens 21. */
Test(identity, settled_lines) {
        static const struct {
                const char *row;
                gp_phase_t gate, line;
                int64_t line_tid;
                bool ro, want;
        } rows[] = {
                {"the same end", GP_PHASE_CLOSED, GP_PHASE_CLOSED, 20, false, true},
                {"already in 21", GP_PHASE_CLOSED, GP_PHASE_WAITING, 21, false, true},
                {"a dead member's split", GP_PHASE_ABORTED, GP_PHASE_SPLIT, 20, false, false},
                {"a split of an older one", GP_PHASE_CLOSED, GP_PHASE_SPLIT, 10, false, false},
                {"a dead member's wait", GP_PHASE_STEADY, GP_PHASE_WAITING, 20, false, true},
                {"re-delivering", GP_PHASE_ABORTED, GP_PHASE_ABORTED, 20, true, false},
                {"re-delivering, in 21", GP_PHASE_ABORTED, GP_PHASE_WAITING, 21, true, false},
                {"re-delivered", GP_PHASE_ABORTED, GP_PHASE_ABORTED, 20, false, true},
                {"aborted before T there, after here", GP_PHASE_ABORTED, GP_PHASE_STEADY, 20,
                 false, true},
                {"closed, not yet aborted", GP_PHASE_ABORTED, GP_PHASE_CLOSED, 20, false,
                 false},
                {"aborted there, closed here", GP_PHASE_CLOSED, GP_PHASE_ABORTED, 20, false,
                 true},
                {"an older transition's rest", GP_PHASE_ABORTED, GP_PHASE_CLOSED, 10, false,
                 true},
                {"a member that never began 20", GP_PHASE_ABORTED, GP_PHASE_CLOSED, 10, false,
                 true},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                gp_gate_t g = mk_gate(rows[i].gate, B, G, 1000, 10), line = g;
                g.tid = 20;
                line.phase = rows[i].line;
                line.tid = rows[i].line_tid;
                gp_part_t p;
                gp_part_init(&p, 0);
                p.ro = rows[i].ro;
                cr_expect_eq(gp_agree_settled(&g, 21, &line, &p), rows[i].want, "%s",
                             rows[i].row);
        }
}

/* A transition the map opens does not begin while a partition of the
 * pipeline is unsettled, or before the checkpoints were read. */
Test(identity, waits_for_the_pipeline) {
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_part_t *parts[] = {&p};
        gp_step_t out;
        gp_wm_view_t wv = view(500, 500, false);
        gp_gate_t g = mk_gate(GP_PHASE_ABORTED, B, B, 1000, 10);
        g.tid = 20;
        gp_control_t c = ctl(G, TRANS, false, 0);
        c.tid = 21;
        wv.unsettled = GP_UNSETTLED_UNKNOWN;
        cr_assert_eq(gp_gate_step(&g, parts, 1, &c, &wv, &conf0, 50, &out), 0);
        cr_assert(g.phase == GP_PHASE_ABORTED && !(out.events & GP_EV_REFUSED),
                  "before the read: %s, events 0x%x", gp_phase_name(g.phase),
                  (unsigned)out.events);
        wv.unsettled = 2;
        cr_assert_eq(gp_gate_step(&g, parts, 1, &c, &wv, &conf0, 50, &out), 0);
        cr_assert(g.phase == GP_PHASE_ABORTED &&
                          strstr(out.err, "2 partition(s) of the pipeline"),
                  "%s: %s", gp_phase_name(g.phase), out.err);
        wv.unsettled = 0;
        gp_gate_step(&g, parts, 1, &c, &wv, &conf0, 50, &out);
        cr_assert((out.events & GP_EV_TRANSITION) && g.tid == 21, "%s tx=%" PRId64,
                  gp_phase_name(g.phase), g.tid);
}

/* What gp_gate_tid_due writes: an id above every one before, once per
 * open map; "N ended" once the gate has left the transition. */
Test(identity, tid_due) {
        char v[32];
        gp_gate_t g = mk_gate(GP_PHASE_CLOSED, B, G, 1000, 10);
        g.tid = 5000;
        gp_control_t c = ctl(B, TRANS, false, 0);
        cr_assert(gp_gate_tid_due(&g, &c, 100, v, sizeof v));
        cr_assert_str_eq(v, "5001", "above the gate's id, not the clock behind it");
        cr_assert(gp_gate_tid_due(NULL, &c, 100, v, sizeof v));
        cr_assert_str_eq(v, "100");
        c.tid = 7000;
        c.tid_ended = true;
        cr_assert(gp_gate_tid_due(&g, &c, 100, v, sizeof v));
        cr_assert_str_eq(v, "7001", "above the map's last id");
        c.tid_ended = false;
        cr_assert(!gp_gate_tid_due(&g, &c, 100, v, sizeof v), "named already: %s", v);
        c.stage = RUN;
        cr_assert(gp_gate_tid_due(&g, &c, 100, v, sizeof v));
        cr_assert_str_eq(v, "7000 ended");
        g.phase = GP_PHASE_WAITING;
        cr_assert(!gp_gate_tid_due(&g, &c, 100, v, sizeof v),
                  "a gate mid-way holds a map back at RUNNING for invalid, not ended");
        c.tid_ended = true;
        cr_assert(!gp_gate_tid_due(NULL, &c, 100, v, sizeof v), "ended already: %s", v);
}

/* ---- a member's status, and the pipeline's view (gate/mstatus.h) -------- */

Test(member_status, round_trip_and_strict) {
        gp_mstatus_t m = {.phase = GP_PHASE_ABORTED,
                          .tid = 5,
                          .parts = 2,
                          .n = {100, 40, 1},
                          .late = 3,
                          .rd = true,
                          .rd_to = B,
                          .rd_sent = 40,
                          .rd_left = 12,
                          .rd_open = 1,
                          .beat = 1796514819784,
                          .run = true},
                     got;
        char line[GP_MSTATUS_MAX], err[128];
        cr_assert_gt(gp_mstatus_encode(&m, line, sizeof line), 0);
        cr_assert_str_eq(line,
                         "phase=aborted tx=5 parts=2 n=100,40,1 late=3 rd=blue,40,12,0,1 "
                         "beat=1796514819784 run=1");
        cr_assert_eq(gp_mstatus_decode(line, strlen(line), &got, err, sizeof err), 0, "%s",
                     err);
        cr_assert(got.rd && got.rd_to == B && got.rd_open == 1 && got.n[1] == 40 &&
                  got.beat == m.beat && got.run);
        static const char *bad[] = {
                "",
                "phase=aborted",
                "phase=gone tx=5 parts=2 n=1,1,1 late=3 rd=- beat=1 run=1",
                "phase=split tx=5 parts=2 n=1,1 late=3 rd=- beat=1 run=1",
                "phase=split tx=5 parts=2 n=1,1,1,1 late=3 rd=- beat=1 run=1",
                "phase=split tx=5 parts=-2 n=1,1,1 late=3 rd=- beat=1 run=1",
                "phase=split tx=5 parts=2 n=1,1,1 late=3 rd=red,1,1,1,1 beat=1 run=1",
                "phase=split tx=5 parts=2 n=1,1,1 late=3 rd=blue,1,1,1 beat=1 run=1",
                "phase=split tx=5 parts=2 n=1,1,1 late=3 rd=- beat=1 run=2",
                "phase=split tx=5 parts=2 n=1,1,1 late=3 rd=- beat=1 run=1 more=1",
                "phase=split tx=5 parts=2 n=1,1,1 late=3 rd=- beat=1 run=1 ",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                err[0] = '\0';
                cr_expect_eq(gp_mstatus_decode(bad[i], strlen(bad[i]), &got, err, sizeof err),
                             -1, "accepted '%s'", bad[i]);
                cr_expect(err[0], "no reason for '%s'", bad[i]);
        }
}

/* The pipeline sums the members that beat; a member re-delivering is not
 * hidden by the others, whichever wrote last; one owning nothing has no
 * say in the phase. */
Test(member_status, the_pipeline_over_its_members) {
        gp_mstatus_t m[4] = {
                {.phase = GP_PHASE_ABORTED,
                 .parts = 1,
                 .n = {10, 2, 0},
                 .rd = true,
                 .rd_to = B,
                 .rd_sent = 2,
                 .beat = 1000,
                 .run = true},
                {.phase = GP_PHASE_ABORTED,
                 .parts = 1,
                 .n = {10, 5, 0},
                 .rd = true,
                 .rd_to = B,
                 .rd_sent = 1,
                 .rd_left = 30,
                 .rd_open = 1,
                 .beat = 990,
                 .run = true},
                {.phase = GP_PHASE_STEADY, .parts = 0, .beat = 1000, .run = true},
                {.phase = GP_PHASE_SPLIT,
                 .parts = 2,
                 .n = {99, 99, 0},
                 .beat = 100,
                 .run = true}, /* silent: its partitions moved on */
        };
        gp_mstatus_view_t v;
        gp_mstatus_view(m, 4, 1000, 500, &v);
        cr_assert_eq(v.live, 3);
        cr_assert_eq(v.gone, 1);
        cr_assert(v.one_phase && v.phase == GP_PHASE_ABORTED, "%s", gp_phase_name(v.phase));
        cr_assert(v.parts == 2 && v.n[0] == 20 && v.n[1] == 7);
        cr_assert(v.rd_members == 2 && v.rd_open == 1 && v.rd_left == 30 && v.rd_sent == 3);
        cr_assert_eq(v.oldest, 990);
        m[3].beat = 1000;
        gp_mstatus_view(m, 4, 1000, 500, &v);
        cr_assert_not(v.one_phase, "a member still splitting");
}

/* A member's key is forgotten once its beat is older than the bound; a
 * line that does not parse, a beat ahead of now, or no bound, never. */
Test(member_status, forgotten_after_the_bound) {
        gp_mstatus_t m = {
                .phase = GP_PHASE_CLOSED, .tid = 7, .parts = 2, .beat = 1000000, .run = true};
        char line[GP_MSTATUS_MAX];
        cr_assert_gt(gp_mstatus_encode(&m, line, sizeof line), 0);
        cr_expect_not(gp_mstatus_forgotten(line, 1000000 + 600000, 600000), "at the bound");
        cr_expect(gp_mstatus_forgotten(line, 1000000 + 600001, 600000), "past it");
        cr_expect_not(gp_mstatus_forgotten(line, 1000000 - 5, 600000), "a beat ahead");
        cr_expect_not(gp_mstatus_forgotten(line, INT64_MAX, 0), "no bound");
        cr_expect_not(gp_mstatus_forgotten("phase=closed garbage", INT64_MAX, 1),
                      "unreadable");
        cr_expect_not(gp_mstatus_forgotten(NULL, INT64_MAX, 1));
        m.run = false; /* stopped cleanly: forgotten the same way */
        cr_assert_gt(gp_mstatus_encode(&m, line, sizeof line), 0);
        cr_expect(gp_mstatus_forgotten(line, 1000000 + 600001, 600000));
}

/* ---- the future bound (gate.event-time.max-future.ms) ------------------- */

/* A record dated more than the bound past the wall clock is refused; the
 * bound itself, the past, an unreadable time and a bound of 0 are not;
 * the sum saturates instead of wrapping. A refused record raises nothing. */
Test(future, bound_table) {
        const int64_t day = 86400000, now = 1767225600000; /* 2026-01-01 */
        gp_gate_conf_t c = conf0;
        c.max_future_ms = day;
        const struct {
                int64_t ts, now, bound;
                bool refused;
        } rows[] = {
                {now, now, day, false},
                {now + day, now, day, false},
                {now + day + 1, now, day, true},
                {4102444800000, now, day, true}, /* 2100 */
                {INT64_MAX, now, day, true},
                {0, now, day, false},
                {INT64_MIN + 1, now, day, false},
                {GP_TS_NONE, now, day, false},
                {INT64_MAX, now, 0, false},               /* no bound */
                {INT64_MAX, INT64_MAX - 5, day, false},   /* now + bound saturates */
                {INT64_MAX, INT64_MAX - day, day, false}, /* ts == now + bound */
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                c.max_future_ms = rows[i].bound;
                cr_expect_eq(gp_gate_future(&c, rows[i].ts, rows[i].now), rows[i].refused,
                             "row %zu: ts %" PRId64 " now %" PRId64 " bound %" PRId64, i,
                             rows[i].ts, rows[i].now, rows[i].bound);
        }
        gp_part_t p;
        gp_part_init(&p, 0);
        p.hi = 1000;
        cr_assert_eq(gp_gate_reject(&p, now), GP_DEST_DLQ);
        cr_assert(p.hi == 1000 && p.n[GP_DEST_DLQ] == 1, "a refused record raises nothing");
}
