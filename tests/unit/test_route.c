/* tests/unit/test_route.c: the routing rule (docs/DESIGN.md, Phases) as a table,
 * the partition counters kept by gp_gate_route, and two properties: the
 * split never sends ts >= T to OLD nor ts < T to NEW (invariant 3), and a
 * replay from a decoded checkpoint gives the same destinations
 * (invariant 4). Uses gate/ only. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "gate/gate.h"

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

static gp_gate_t mk_gate(gp_phase_t ph, gp_colour_t old_c, gp_colour_t new_c, int64_t t) {
        gp_gate_t g;
        gp_gate_init(&g, new_c);
        g.phase = ph;
        g.old_c = old_c;
        g.new_c = new_c;
        g.cutoff = t;
        g.cutoff_wall = t == NONE ? NONE : 1000;
        return g;
}

static gp_gate_conf_t mk_conf(bool late_dlq, bool route_old) {
        return (gp_gate_conf_t){.out_of_orderness_ms = 0,
                                .idle_ms = 10000,
                                .align_ms = 1,
                                .lateness_ms = 0,
                                .late_to_dlq = late_dlq,
                                .bad_route_old = route_old};
}

/* (phase, old, new, T, ts, policies) -> (destination, late) */
typedef struct {
        const char *row;
        gp_phase_t ph;
        gp_colour_t old_c, new_c;
        int64_t t;
        int64_t ts;
        bool late_dlq, route_old;
        gp_dest_t want;
        bool want_late;
} route_row_t;

static const route_row_t route_rows[] = {
        /* STEADY: everything to the owner (new_c), never late. */
        {"steady blue", GP_PHASE_STEADY, B, B, NONE, 5, 0, 0, D_B, 0},
        {"steady blue max", GP_PHASE_STEADY, B, B, NONE, INT64_MAX, 0, 0, D_B, 0},
        {"steady blue min+1", GP_PHASE_STEADY, B, B, NONE, MIN1, 0, 0, D_B, 0},
        {"steady green", GP_PHASE_STEADY, G, G, NONE, 5, 0, 0, D_G, 0},
        {"steady green late=dlq", GP_PHASE_STEADY, G, G, NONE, -5, 1, 0, D_G, 0},
        /* WAITING: no T yet, everything to OLD whatever ts. */
        {"waiting b->g small", GP_PHASE_WAITING, B, G, NONE, 0, 0, 0, D_B, 0},
        {"waiting b->g max", GP_PHASE_WAITING, B, G, NONE, INT64_MAX, 0, 0, D_B, 0},
        {"waiting b->g min+1", GP_PHASE_WAITING, B, G, NONE, MIN1, 0, 0, D_B, 0},
        {"waiting g->b", GP_PHASE_WAITING, G, B, NONE, 1700000000000, 0, 0, D_G, 0},
        {"waiting g->b late=dlq", GP_PHASE_WAITING, G, B, NONE, 3, 1, 0, D_G, 0},
        /* SPLIT: ts < T -> OLD, ts >= T -> NEW. */
        {"split ts==T", GP_PHASE_SPLIT, B, G, 1000, 1000, 0, 0, D_G, 0},
        {"split ts==T-1", GP_PHASE_SPLIT, B, G, 1000, 999, 0, 0, D_B, 0},
        {"split ts==T+1", GP_PHASE_SPLIT, B, G, 1000, 1001, 0, 0, D_G, 0},
        {"split ts=min+1", GP_PHASE_SPLIT, B, G, 1000, MIN1, 0, 0, D_B, 0},
        {"split ts=max", GP_PHASE_SPLIT, B, G, 1000, INT64_MAX, 0, 0, D_G, 0},
        {"split ts=0", GP_PHASE_SPLIT, B, G, 1000, 0, 0, 0, D_B, 0},
        {"split late=dlq ts<T still old", GP_PHASE_SPLIT, B, G, 1000, 999, 1, 0, D_B, 0},
        {"split g->b ts==T", GP_PHASE_SPLIT, G, B, 1000, 1000, 0, 0, D_B, 0},
        {"split g->b ts==T-1", GP_PHASE_SPLIT, G, B, 1000, 999, 0, 0, D_G, 0},
        {"split negative T, ts==T", GP_PHASE_SPLIT, B, G, -500, -500, 0, 0, D_G, 0},
        {"split negative T, ts==T-1", GP_PHASE_SPLIT, B, G, -500, -501, 0, 0, D_B, 0},
        {"split T=min+1, ts=min+1", GP_PHASE_SPLIT, B, G, MIN1, MIN1, 0, 0, D_G, 0},
        {"split T=max, ts=max", GP_PHASE_SPLIT, B, G, INT64_MAX, INT64_MAX, 0, 0, D_G, 0},
        {"split T=max, ts=max-1", GP_PHASE_SPLIT, B, G, INT64_MAX, INT64_MAX - 1, 0, 0, D_B,
         0},
        /* CLOSED: everything to NEW; ts < T is late, by policy to NEW or DLQ. */
        {"closed late=new ts<T", GP_PHASE_CLOSED, B, G, 1000, 999, 0, 0, D_G, 1},
        {"closed late=new ts=min+1", GP_PHASE_CLOSED, B, G, 1000, MIN1, 0, 0, D_G, 1},
        {"closed late=new ts==T", GP_PHASE_CLOSED, B, G, 1000, 1000, 0, 0, D_G, 0},
        {"closed late=new ts>T", GP_PHASE_CLOSED, B, G, 1000, 5000, 0, 0, D_G, 0},
        {"closed late=dlq ts<T", GP_PHASE_CLOSED, B, G, 1000, 999, 1, 0, D_Q, 1},
        {"closed late=dlq ts=min+1", GP_PHASE_CLOSED, B, G, 1000, MIN1, 1, 0, D_Q, 1},
        {"closed late=dlq ts==T", GP_PHASE_CLOSED, B, G, 1000, 1000, 1, 0, D_G, 0},
        {"closed late=dlq ts>T", GP_PHASE_CLOSED, B, G, 1000, 5000, 1, 0, D_G, 0},
        {"closed g->b late=new ts<T", GP_PHASE_CLOSED, G, B, -20, -21, 0, 0, D_B, 1},
        {"closed g->b late=dlq ts==T", GP_PHASE_CLOSED, G, B, -20, -20, 1, 0, D_B, 0},
        /* ABORTED: everything to the survivor (new_c), T may still be set. */
        {"aborted survivor blue ts<T", GP_PHASE_ABORTED, B, B, 1000, 999, 0, 0, D_B, 0},
        {"aborted survivor blue ts>=T", GP_PHASE_ABORTED, B, B, 1000, 1000, 0, 0, D_B, 0},
        {"aborted survivor blue late=dlq", GP_PHASE_ABORTED, B, B, 1000, 1, 1, 0, D_B, 0},
        {"aborted survivor green no T", GP_PHASE_ABORTED, G, G, NONE, 7, 0, 0, D_G, 0},
        {"aborted survivor green ts<T", GP_PHASE_ABORTED, G, G, 1000, 0, 1, 0, D_G, 0},
        /* Unreadable event time, bad-record=dlq: DLQ in every phase. */
        {"bad dlq steady", GP_PHASE_STEADY, B, B, NONE, NONE, 0, 0, D_Q, 0},
        {"bad dlq waiting", GP_PHASE_WAITING, B, G, NONE, NONE, 0, 0, D_Q, 0},
        {"bad dlq split", GP_PHASE_SPLIT, B, G, 1000, NONE, 0, 0, D_Q, 0},
        {"bad dlq closed late=new", GP_PHASE_CLOSED, B, G, 1000, NONE, 0, 0, D_Q, 0},
        {"bad dlq closed late=dlq", GP_PHASE_CLOSED, B, G, 1000, NONE, 1, 0, D_Q, 0},
        {"bad dlq aborted", GP_PHASE_ABORTED, G, G, 1000, NONE, 0, 0, D_Q, 0},
        /* bad-record=route-old: counts as older than any T. */
        {"bad route-old steady", GP_PHASE_STEADY, G, G, NONE, NONE, 0, 1, D_G, 0},
        {"bad route-old waiting", GP_PHASE_WAITING, B, G, NONE, NONE, 0, 1, D_B, 0},
        {"bad route-old waiting g->b", GP_PHASE_WAITING, G, B, NONE, NONE, 0, 1, D_G, 0},
        {"bad route-old split", GP_PHASE_SPLIT, B, G, 1000, NONE, 0, 1, D_B, 0},
        {"bad route-old split T=min+1", GP_PHASE_SPLIT, B, G, MIN1, NONE, 0, 1, D_B, 0},
        {"bad route-old split g->b", GP_PHASE_SPLIT, G, B, 1000, NONE, 0, 1, D_G, 0},
        {"bad route-old closed late=new", GP_PHASE_CLOSED, B, G, 1000, NONE, 0, 1, D_G, 1},
        {"bad route-old closed late=dlq", GP_PHASE_CLOSED, B, G, 1000, NONE, 1, 1, D_Q, 1},
        {"bad route-old aborted", GP_PHASE_ABORTED, B, B, 1000, NONE, 0, 1, D_B, 0},
};

Test(route, table) {
        for (size_t i = 0; i < sizeof(route_rows) / sizeof(route_rows[0]); i++) {
                const route_row_t *r = &route_rows[i];
                gp_gate_t g = mk_gate(r->ph, r->old_c, r->new_c, r->t);
                gp_gate_conf_t c = mk_conf(r->late_dlq, r->route_old);

                bool late = !r->want_late; /* must be overwritten */
                gp_dest_t d = gp_gate_dest(&g, &c, r->ts, &late);
                cr_assert_eq(d, r->want, "row %zu '%s': gp_gate_dest gave %s, want %s", i,
                             r->row, dest_name(d), dest_name(r->want));
                cr_assert_eq(late, r->want_late, "row %zu '%s': gp_gate_dest late=%d, want %d",
                             i, r->row, late, r->want_late);

                gp_part_t p;
                gp_part_init(&p, 50);
                gp_gate_t before = g;
                late = !r->want_late;
                d = gp_gate_route(&g, &c, &p, r->ts, 77, &late);
                cr_assert_eq(d, r->want, "row %zu '%s': gp_gate_route gave %s, want %s", i,
                             r->row, dest_name(d), dest_name(r->want));
                cr_assert_eq(late, r->want_late, "row %zu '%s': gp_gate_route late=%d", i,
                             r->row, late);
                cr_assert(memcmp(&before, &g, sizeof(g)) == 0,
                          "row %zu '%s': routing changed the gate", i, r->row);
                /* The counters of one routed record. */
                for (int k = 0; k < 3; k++)
                        cr_assert_eq(p.n[k], k == (int)r->want ? 1u : 0u,
                                     "row %zu '%s': n[%d]=%" PRIu64, i, r->row, k, p.n[k]);
                cr_assert_eq(p.late, r->want_late ? 1u : 0u, "row %zu '%s': late counter", i,
                             r->row);
                for (int k = 0; k < 2; k++) {
                        uint64_t want = r->t != NONE && r->want == (gp_dest_t)k ? 1 : 0;
                        cr_assert_eq(p.since_t[k], want, "row %zu '%s': since_t[%d]=%" PRIu64,
                                     i, r->row, k, p.since_t[k]);
                }
                cr_assert_eq(p.hi, r->ts, "row %zu '%s': hi=%" PRId64 ", want %" PRId64, i,
                             r->row, p.hi, r->ts);
                cr_assert_eq(p.last_wall, 77, "row %zu '%s': last_wall not updated", i,
                             r->row);
        }
}

/* A sequence of records on one partition: every counter accumulates. */
Test(route, counters_accumulate) {
        gp_gate_t g = mk_gate(GP_PHASE_SPLIT, B, G, 100);
        gp_gate_conf_t c = mk_conf(false, false);
        gp_part_t p;
        gp_part_init(&p, 0);
        cr_assert_eq(p.hi, NONE, "a fresh partition has seen nothing");
        cr_assert_eq(p.last_wall, 0, "a fresh partition starts at its assignment time");

        static const struct {
                int64_t ts, now, hi;
                uint64_t n0, n1, n2, st0, st1;
        } seq[] = {
                {50, 10, 50, 1, 0, 0, 1, 0},
                {150, 11, 150, 1, 1, 0, 1, 1},
                {99, 12, 150, 2, 1, 0, 2, 1},
                {NONE, 13, 150, 2, 1, 1, 2, 1},
                {100, 14, 150, 2, 2, 1, 2, 2},
                {MIN1, 15, 150, 3, 2, 1, 3, 2},
                {INT64_MAX, 9, INT64_MAX, 3, 3, 1, 3, 3},
        };
        for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
                bool late;
                gp_gate_route(&g, &c, &p, seq[i].ts, seq[i].now, &late);
                cr_assert_eq(p.hi, seq[i].hi, "step %zu: hi=%" PRId64, i, p.hi);
                cr_assert_eq(p.last_wall, seq[i].now, "step %zu: last_wall", i);
                cr_assert(p.n[0] == seq[i].n0 && p.n[1] == seq[i].n1 && p.n[2] == seq[i].n2,
                          "step %zu: n=%" PRIu64 ",%" PRIu64 ",%" PRIu64, i, p.n[0], p.n[1],
                          p.n[2]);
                cr_assert(p.since_t[0] == seq[i].st0 && p.since_t[1] == seq[i].st1,
                          "step %zu: since_t=%" PRIu64 ",%" PRIu64, i, p.since_t[0],
                          p.since_t[1]);
                cr_assert_eq(p.late, 0u, "step %zu: nothing is late in the split", i);
        }
}

Test(route, counters_late_and_no_cutoff) {
        gp_gate_conf_t c = mk_conf(true, false);
        gp_part_t p;
        gp_part_init(&p, 0);
        bool late;

        /* WAITING: no T, so nothing counts "since T". */
        gp_gate_t w = mk_gate(GP_PHASE_WAITING, B, G, NONE);
        gp_gate_route(&w, &c, &p, 5, 1, &late);
        gp_gate_route(&w, &c, &p, 6, 2, &late);
        cr_assert_eq(p.n[0], 2u, "waiting: 2 records to blue");
        cr_assert(p.since_t[0] == 0 && p.since_t[1] == 0,
                  "waiting: since_t counted without T");

        /* CLOSED, late=dlq: late records count as late and as DLQ, not since_t. */
        gp_gate_t cl = mk_gate(GP_PHASE_CLOSED, B, G, 100);
        gp_gate_route(&cl, &c, &p, 99, 3, &late);
        cr_assert(late, "closed: ts < T is late");
        gp_gate_route(&cl, &c, &p, 100, 4, &late);
        cr_assert(!late, "closed: ts == T is not late");
        gp_gate_route(&cl, &c, &p, 1, 5, &late);
        cr_assert_eq(p.late, 2u, "closed: late counter %" PRIu64, p.late);
        cr_assert_eq(p.n[2], 2u, "closed: late records to the DLQ");
        cr_assert_eq(p.n[1], 1u, "closed: on-time record to green");
        cr_assert(p.since_t[0] == 0 && p.since_t[1] == 1,
                  "closed: DLQ records are not counted per colour since T");
        cr_assert_eq(p.hi, 100, "closed: hi %" PRId64, p.hi);
        cr_assert_eq(p.last_wall, 5, "last_wall follows the last record, DLQ included");
}

/* ---- properties ---------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64*: deterministic, seed per test */
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 2685821657736338717ULL;
}

static int64_t add_clamped(int64_t a, int64_t d) {
        if (d > 0 && a > INT64_MAX - d)
                return INT64_MAX;
        if (d < 0 && a < MIN1 - d)
                return MIN1;
        return a + d;
}

/* An event time, biased to the interesting places around t. */
static int64_t rnd_ts(int64_t t) {
        switch (rnd() % 8) {
        case 0:
                return MIN1;
        case 1:
                return INT64_MAX;
        case 2: {
                int64_t v = (int64_t)rnd();
                return v == NONE ? MIN1 : v;
        }
        case 3:
                return (int64_t)(rnd() % 4000000000000ULL) - 1000000000000LL;
        default:
                return add_clamped(t, (int64_t)(rnd() % 2001) - 1000);
        }
}

static int64_t rnd_cutoff(void) {
        switch (rnd() % 6) {
        case 0:
                return MIN1;
        case 1:
                return INT64_MAX;
        case 2:
                return 0;
        case 3:
                return -(int64_t)(rnd() % 1000000);
        default:
                return 1600000000000LL + (int64_t)(rnd() % 200000000000ULL);
        }
}

Test(route_property, split_never_crosses_the_cutoff) {
        for (uint64_t seed = 1; seed <= 300; seed++) {
                rng_state = seed * 0x9E3779B97F4A7C15ULL;
                int64_t t = rnd_cutoff();
                gp_colour_t old_c = rnd() % 2 ? B : G;
                gp_gate_t g = mk_gate(GP_PHASE_SPLIT, old_c, gp_colour_other(old_c), t);
                gp_gate_conf_t c = mk_conf(rnd() % 2, rnd() % 2);
                gp_part_t p;
                gp_part_init(&p, 0);
                uint64_t n_old = 0, n_new = 0;
                for (int i = 0; i < 200; i++) {
                        int64_t ts = rnd() % 50 ? rnd_ts(t) : NONE;
                        bool l1, l2;
                        gp_dest_t d1 = gp_gate_dest(&g, &c, ts, &l1);
                        gp_dest_t d2 = gp_gate_route(&g, &c, &p, ts, i, &l2);
                        cr_assert(d1 == d2 && l1 == l2,
                                  "seed %" PRIu64 " rec %d: dest (%s) and route (%s) disagree",
                                  seed, i, dest_name(d1), dest_name(d2));
                        cr_assert(!l1, "seed %" PRIu64 " rec %d: late in the split", seed, i);
                        gp_dest_t want;
                        if (ts == NONE)
                                want = c.bad_route_old ? (gp_dest_t)old_c : GP_DEST_DLQ;
                        else
                                want = ts >= t ? (gp_dest_t)g.new_c : (gp_dest_t)old_c;
                        cr_assert_eq(d1, want,
                                     "seed %" PRIu64 " rec %d: T=%" PRId64 " ts=%" PRId64
                                     " went to %s, want %s",
                                     seed, i, t, ts, dest_name(d1), dest_name(want));
                        n_old += d1 == (gp_dest_t)old_c;
                        n_new += d1 == (gp_dest_t)g.new_c;
                }
                cr_assert(p.n[old_c] == n_old && p.n[g.new_c] == n_new,
                          "seed %" PRIu64 ": per-colour counters", seed);
                cr_assert(p.since_t[old_c] == n_old && p.since_t[g.new_c] == n_new,
                          "seed %" PRIu64 ": since_t counters", seed);
                cr_assert_eq(p.n[0] + p.n[1] + p.n[2], 200u, "seed %" PRIu64 ": total", seed);
        }
}

/* dest and route agree in every phase, for every policy. */
Test(route_property, dest_and_route_agree_everywhere) {
        rng_state = 0xC11C11C11ULL;
        for (int k = 0; k < 2000; k++) {
                gp_phase_t ph = (gp_phase_t)(rnd() % GP_PHASE__N);
                gp_colour_t old_c = rnd() % 2 ? B : G;
                gp_colour_t new_c = ph == GP_PHASE_STEADY || ph == GP_PHASE_ABORTED
                                            ? old_c
                                            : gp_colour_other(old_c);
                int64_t t = ph == GP_PHASE_SPLIT || ph == GP_PHASE_CLOSED || rnd() % 2
                                    ? rnd_cutoff()
                                    : NONE;
                gp_gate_t g = mk_gate(ph, old_c, new_c, t);
                gp_gate_conf_t c = mk_conf(rnd() % 2, rnd() % 2);
                gp_part_t p;
                gp_part_init(&p, 0);
                int64_t ts = rnd() % 10 ? rnd_ts(t == NONE ? 0 : t) : NONE;
                bool l1, l2;
                gp_dest_t d1 = gp_gate_dest(&g, &c, ts, &l1);
                gp_dest_t d2 = gp_gate_route(&g, &c, &p, ts, 1, &l2);
                cr_assert(d1 == d2 && l1 == l2,
                          "case %d phase %s T=%" PRId64 " ts=%" PRId64 ": dest/route differ",
                          k, gp_phase_name(ph), t, ts);
                /* Outside the split and WAITING, OLD never gets anything
                 * unless OLD is the owner. */
                if (ph == GP_PHASE_CLOSED)
                        cr_assert(d1 != (gp_dest_t)old_c,
                                  "case %d: closed sent ts=%" PRId64 " to OLD", k, ts);
                if (ph == GP_PHASE_WAITING)
                        cr_assert(d1 == (gp_dest_t)old_c || d1 == GP_DEST_DLQ,
                                  "case %d: waiting sent ts=%" PRId64 " to NEW", k, ts);
                if (l1)
                        cr_assert(ph == GP_PHASE_CLOSED && ts < t,
                                  "case %d: late outside CLOSED or ts >= T", k);
        }
}

/* Invariant 4: the same checkpoint, decoded, and the same records give the
 * same destinations and the same counters. */
Test(route_property, replay_from_checkpoint) {
        static const gp_phase_t phases[] = {GP_PHASE_STEADY, GP_PHASE_WAITING, GP_PHASE_SPLIT,
                                            GP_PHASE_CLOSED, GP_PHASE_ABORTED};
        for (uint64_t seed = 1; seed <= 200; seed++) {
                rng_state = seed * 0xD1B54A32D192ED03ULL;
                gp_phase_t ph = phases[seed % 5];
                gp_colour_t old_c = rnd() % 2 ? B : G;
                gp_colour_t new_c = ph == GP_PHASE_STEADY || ph == GP_PHASE_ABORTED
                                            ? old_c
                                            : gp_colour_other(old_c);
                int64_t t =
                        ph == GP_PHASE_SPLIT || ph == GP_PHASE_CLOSED ? rnd_cutoff() : NONE;
                gp_gate_t g = mk_gate(ph, old_c, new_c, t);
                g.seq = (int64_t)(rnd() % 1000);
                gp_gate_conf_t c = mk_conf(rnd() % 2, rnd() % 2);
                gp_part_t p;
                gp_part_init(&p, 5);
                p.hi = rnd() % 3 ? rnd_ts(t == NONE ? 0 : t) : NONE;
                p.n[0] = rnd() % 100;
                p.n[1] = rnd() % 100;
                p.n[2] = rnd() % 100;
                p.late = rnd() % 10;

                char line[GP_CKPT_MAX];
                int len = gp_ckpt_encode(&g, &p, line, sizeof(line));
                cr_assert(len > 0, "seed %" PRIu64 ": encode failed", seed);

                int64_t recs[100];
                for (int i = 0; i < 100; i++)
                        recs[i] = rnd() % 20 ? rnd_ts(t == NONE ? 0 : t) : NONE;

                gp_dest_t first[100];
                bool first_late[100];
                for (int i = 0; i < 100; i++)
                        first[i] = gp_gate_route(&g, &c, &p, recs[i], 100 + i, &first_late[i]);

                /* A restart: fresh structures from the checkpoint line. */
                gp_gate_t g2;
                gp_part_t p2;
                gp_gate_init(&g2, gp_colour_other(new_c));
                gp_part_init(&p2, 5);
                char err[128];
                cr_assert_eq(gp_ckpt_decode(line, (size_t)len, &g2, &p2, err, sizeof(err)), 0,
                             "seed %" PRIu64 ": decode of '%s': %s", seed, line, err);
                for (int i = 0; i < 100; i++) {
                        bool l;
                        gp_dest_t d = gp_gate_route(&g2, &c, &p2, recs[i], 100 + i, &l);
                        cr_assert(d == first[i] && l == first_late[i],
                                  "seed %" PRIu64 " rec %d ts=%" PRId64
                                  ": replay gave %s (late %d), first run %s (late %d)",
                                  seed, i, recs[i], dest_name(d), l, dest_name(first[i]),
                                  first_late[i]);
                }
                char a[GP_CKPT_MAX], b2[GP_CKPT_MAX];
                cr_assert(gp_ckpt_encode(&g, &p, a, sizeof(a)) > 0, "seed %" PRIu64, seed);
                cr_assert(gp_ckpt_encode(&g2, &p2, b2, sizeof(b2)) > 0, "seed %" PRIu64, seed);
                cr_assert_str_eq(a, b2, "seed %" PRIu64 ": state after replay differs", seed);
                cr_assert_eq(p.last_wall, p2.last_wall, "seed %" PRIu64, seed);
        }
}
