/* tests/unit/test_agree.c: one T for N instances (gate/agree.h,
 * docs/DESIGN.md, Scale-out: one T for N instances). Uses gate/ only.
 *
 * First each function as a table (boundaries: ts == promise, ts == T,
 * overflow, absent values). Then an exhaustive model: every interleaving
 * of a small pipeline (3 instances, 4 source partitions of which the
 * fourth appears while it runs, 7 records with an out-of-order one and an
 * idle partition) explored breadth-first with a set of visited states, for
 * six sets of faults (one or two kinds each; all at once is too many
 * states).
 * Between any two steps: an owner routes its partition's next record (or
 * holds), promises, records T, closes; an instance commits its transaction
 * (offsets and checkpoints of all its partitions), aborts it, crashes
 * (its transaction lost), is lost and lives on as a zombie (its open
 * transaction keeps the new owner's RequireStable read waiting until it is
 * fenced), joins, leaves (a revoke commits first), a partition moves (the
 * revoke commits the old owner's transaction); the map starts the
 * transition, aborts it, is hand-edited (a T, another T, none), gets the
 * computed T by compare-and-set, CLEAR_TO_TEARDOWN; the drain check
 * passes; the source grows. An owner that reaches a record it must hold
 * pauses the partition in its consumer, which keeps the pause across
 * revoke and assign and forgets it only when its process ends; the owner
 * resumes what it paused once the record has a destination, and whatever
 * it is assigned. A member may join with a copy of the map from before
 * the transition, and every member acts on the map as it last read it:
 * whether an owner gives the transition up is decided by the proxy's own
 * gate (gp_gate_step) from that copy. After an abort the map may cut over
 * again between the same colours under a new transition id: checkpoint
 * lines carry the transition they belong to, a line of the other gives
 * the current one nothing, an owner begins the new one for a partition
 * once its gate has left the old one and the census (gp_agree_settled)
 * passes over every committed line, and every record is judged by the T
 * of the transition it was routed in. Every reachable state is checked
 * against the invariants of docs/DESIGN.md, and afterwards every state
 * must still be able to finish (liveness).
 *
 * The model was made to fail on purpose, each time with a readable trace,
 * then restored:
 * - gp_agree_route sending ts >= promise to the old colour instead of
 *   holding: "committed old record ts 13 >= T 10" (invariant c);
 * - gp_agree_cutoff taking the minimum: "committed old record ts 11 >= T
 *   10";
 * - gp_agree_promise ignoring hi (floor only): "old record ts 11 >= its
 *   partition's promise 10";
 * - a late partition taking a floor like the first ones: "the committed
 *   promises give T 20 but a checkpoint holds T 15" (two T's);
 * - gp_agree_all_closed without the born-closed use (a partition that
 *   appears after CLEAR_TO_TEARDOWN routes by T): "records committed to
 *   the old colour after CLEAR_TO_TEARDOWN";
 * - gp_agree_clear ignoring the map's T: "CLEAR_TO_TEARDOWN published
 *   while the map shows T 16, the partitions routed by 15";
 * - a route that holds after an abort (holds not released): "liveness:
 *   ... cannot finish".
 * - a closed gate that does not take the abort it never read from a
 *   later transition into its colour (gate/gate.c before that rule):
 *   "liveness: ... cannot finish".
 * Three faults stay in as tests that must find them: a partition assigned
 * back to the instance that paused it and not resumed ("cannot finish");
 * maps without a transition id, where a member behind the map aborts the
 * transition on the partition it is given ("cannot finish"); lines
 * without one, where the aborted transition's T is taken for the next
 * one's ("two T's committed for one transition"). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/agree.h"
#include "gate/gate.h"

#define NONE GP_TS_NONE
#define NOTH GP_AGREE_NOTHING

/* ---- tables ------------------------------------------------------------ */

static gp_agree_basis_t basis(int64_t asked, int64_t part_wm, int64_t inst_wm, bool late) {
        return (gp_agree_basis_t){.asked = asked,
                                  .part_wm = part_wm,
                                  .inst_wm = inst_wm,
                                  .inst_hi = NONE,
                                  .now = 1000,
                                  .delay_ms = 50,
                                  .align_ms = 100,
                                  .late = late};
}

static gp_agree_basis_t inst_hi(gp_agree_basis_t b, int64_t hi) {
        b.inst_hi = hi;
        return b;
}

typedef struct {
        const char *row;
        int64_t hi;
        gp_agree_basis_t b;
        int64_t want;
} promise_row_t;

Test(agree, promise_table) {
        const promise_row_t rows[] = {
                {"partition watermark + D, rounded", 300, basis(NONE, 300, 0, false), 400},
                {"hi + 1 above the floor, rounded", 480, basis(NONE, 300, 0, false), 500},
                {"hi + 1 exactly on a multiple", 499, basis(NONE, 300, 0, false), 500},
                {"floor exactly on a multiple", 100, basis(NONE, 450, 0, false), 500},
                {"no partition watermark: the instance's W", NONE,
                 basis(NONE, NONE, 720, false), 800},
                {"nothing ever read: the wall clock", NONE, basis(NONE, NONE, NONE, false),
                 1100},
                {"no W (a new partition counts as active): the instance's highest time", NONE,
                 inst_hi(basis(NONE, NONE, NONE, false), 620), 700},
                {"the instance's W before its highest time", NONE,
                 inst_hi(basis(NONE, NONE, 530, false), 620), 600},
                {"the partition's own watermark before the instance's highest time", NONE,
                 inst_hi(basis(NONE, 130, NONE, false), 620), 200},
                {"late: the instance's highest time raises nothing", NONE,
                 inst_hi(basis(NONE, NONE, NONE, true), 620), NOTH},
                {"asked cutoff is the floor, unrounded", 300, basis(777, 300, 0, false), 777},
                {"asked cutoff below what was routed", 900, basis(777, 300, 0, false), 901},
                {"asked cutoff with nothing routed", NONE, basis(777, NONE, NONE, false), 777},
                {"late, nothing routed: nothing", NONE, basis(NONE, 300, 720, true), NOTH},
                {"late ignores the ask", NONE, basis(777, NONE, NONE, true), NOTH},
                {"late covers what it routed, rounded", 450, basis(777, 450, 720, true), 500},
                {"hi at the end of time: no promise", INT64_MAX, basis(NONE, 1, 1, false),
                 NONE},
                {"hi + 1 rounds past the end: no promise", INT64_MAX - 1,
                 basis(NONE, NONE, NONE, false), NONE},
                {"floor saturates and cannot round", NONE,
                 basis(NONE, INT64_MAX - 10, 0, false), NONE},
                {"asked at the end of time, unrounded", NONE, basis(INT64_MAX, 0, 0, false),
                 INT64_MAX},
                {"very early hi", INT64_MIN + 5, basis(NONE, NONE, NONE, true),
                 gp_align_up(INT64_MIN + 6, 100)},
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                int64_t got = gp_agree_promise(rows[i].hi, &rows[i].b);
                cr_expect_eq(got, rows[i].want, "%s: %" PRId64 ", want %" PRId64, rows[i].row,
                             got, rows[i].want);
        }
}

Test(agree, promise_exceeds_every_routed_time) {
        /* Whatever the floor, the promise is above hi: nothing routed to
         * the old colour can reach it. */
        const int64_t his[] = {NONE, INT64_MIN + 1, -1, 0, 99, 100, 101, 1 << 20};
        const int64_t floors[] = {NONE, -500, 0, 100, 150, 1 << 21};
        for (size_t i = 0; i < sizeof his / sizeof his[0]; i++)
                for (size_t j = 0; j < sizeof floors / sizeof floors[0]; j++)
                        for (int late = 0; late < 2; late++) {
                                gp_agree_basis_t b = basis(NONE, floors[j], NONE, late);
                                int64_t p = gp_agree_promise(his[i], &b);
                                cr_assert_neq(p, NONE);
                                cr_expect_gt(p, his[i], "hi %" PRId64 " promise %" PRId64,
                                             his[i], p);
                                cr_expect_gt(p, NONE);
                        }
}

typedef struct {
        const char *row;
        int64_t ts, promise, cutoff;
        gp_agree_dest_t want;
} route_row_t;

Test(agree, route_table) {
        const route_row_t rows[] = {
                {"no transition seen: old", 5000, NONE, NONE, GP_AGREE_OLD},
                {"below the promise: old", 99, 100, NONE, GP_AGREE_OLD},
                {"at the promise: hold", 100, 100, NONE, GP_AGREE_HOLD},
                {"above the promise: hold", INT64_MAX, 100, NONE, GP_AGREE_HOLD},
                {"unreadable, promise: old", NONE, 100, NONE, GP_AGREE_OLD},
                {"nothing promised, readable: hold", INT64_MIN + 1, NOTH, NONE, GP_AGREE_HOLD},
                {"nothing promised, unreadable: old", NONE, NOTH, NONE, GP_AGREE_OLD},
                {"T known, below: old", 199, 100, 200, GP_AGREE_OLD},
                {"T known, at T: new", 200, 100, 200, GP_AGREE_NEW},
                {"T known, between promise and T: old", 150, 100, 200, GP_AGREE_OLD},
                {"T known, no promise (appeared after T)", 250, NONE, 200, GP_AGREE_NEW},
                {"T known, unreadable: old", NONE, NONE, 200, GP_AGREE_OLD},
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                const route_row_t *r = &rows[i];
                gp_agree_dest_t got = gp_agree_route(r->ts, r->promise, r->cutoff);
                cr_expect_eq(got, r->want, "%s: %d, want %d", r->row, got, r->want);
        }
}

Test(agree, cutoff_table) {
        const int64_t all[] = {400, 1200, 900};
        const int64_t one_missing[] = {400, NONE, 900};
        const int64_t with_nothing[] = {NOTH, 700, NOTH};
        const int64_t only_nothing[] = {NOTH, NOTH};
        const int64_t extreme[] = {INT64_MAX, 5};
        cr_expect_eq(gp_agree_cutoff(all, 3), 1200, "the maximum");
        cr_expect_eq(gp_agree_cutoff(all, 1), 400, "one partition");
        cr_expect_eq(gp_agree_cutoff(one_missing, 3), NONE, "waits for every partition");
        cr_expect_eq(gp_agree_cutoff(all, 0), NONE, "no partition: no T");
        cr_expect_eq(gp_agree_cutoff(with_nothing, 3), 700, "nothing cannot raise T");
        cr_expect_eq(gp_agree_cutoff(only_nothing, 2), NOTH, "all nothing: everything new");
        cr_expect_eq(gp_agree_cutoff(extreme, 2), INT64_MAX);
}

Test(agree, map_table) {
        cr_expect_eq(gp_agree_map(NONE, NONE), GP_AGREE_MAP_WAIT);
        cr_expect_eq(gp_agree_map(1500, NONE), GP_AGREE_MAP_WAIT, "a T stored early waits");
        cr_expect_eq(gp_agree_map(NONE, 1500), GP_AGREE_MAP_WRITE);
        cr_expect_eq(gp_agree_map(1500, 1500), GP_AGREE_MAP_AGREES);
        cr_expect_eq(gp_agree_map(1499, 1500), GP_AGREE_MAP_CONFLICT, "a hand edit below");
        cr_expect_eq(gp_agree_map(1501, 1500), GP_AGREE_MAP_CONFLICT, "a hand edit above");
}

Test(agree, close_table) {
        const bool all[] = {true, true, true};
        const bool one_open[] = {true, false, true};
        cr_expect(gp_agree_all_closed(all, 3));
        cr_expect_not(gp_agree_all_closed(one_open, 3));
        cr_expect_not(gp_agree_all_closed(all, 0), "no partition known: not closed");
        cr_expect(gp_agree_clear(all, 3, true, GP_AGREE_MAP_AGREES));
        cr_expect_not(gp_agree_clear(one_open, 3, true, GP_AGREE_MAP_AGREES));
        cr_expect_not(gp_agree_clear(all, 3, false, GP_AGREE_MAP_AGREES), "not drained");
        cr_expect_not(gp_agree_clear(all, 3, true, GP_AGREE_MAP_CONFLICT), "another T");
        cr_expect_not(gp_agree_clear(all, 3, true, GP_AGREE_MAP_WRITE), "T not published");
        cr_expect_not(gp_agree_clear(all, 3, true, GP_AGREE_MAP_WAIT));
        cr_expect_not(gp_agree_clear(all, 0, true, GP_AGREE_MAP_AGREES));
}

/* A partition's own close (gp_agree_part_close_due): T = 1000 chosen at
 * wall 5000, out-of-orderness 10, lateness 20, idle 100. */
Test(agree, part_close_table) {
        const gp_gate_conf_t c = {
                .out_of_orderness_ms = 10, .idle_ms = 100, .lateness_ms = 20};
        gp_part_t pt;
        gp_part_init(&pt, 5000);
        const struct {
                const char *row;
                int64_t hi, last_wall, cutoff, now;
                bool want;
        } rows[] = {
                {"watermark one short of T + lateness", 1029, 5050, 1000, 5060, false},
                {"watermark at T + lateness", 1030, 5050, 1000, 5060, true},
                {"no record yet, quiet since T not long enough", NONE, 4000, 1000, 5119,
                 false},
                {"no record, quiet idle + lateness since T", NONE, 4000, 1000, 5120, true},
                {"a record after T restarts the quiet", 900, 5100, 1000, 5219, false},
                {"quiet idle + lateness since the last record", 900, 5100, 1000, 5220, true},
                {"no T: never", 99999, 0, NONE, 99999, false},
                {"T near the top saturates: not by the watermark", INT64_MAX - 5, 5000,
                 INT64_MAX - 1, 5010, false},
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                pt.hi = rows[i].hi;
                pt.last_wall = rows[i].last_wall;
                cr_expect_eq(
                        gp_agree_part_close_due(&pt, rows[i].cutoff, 5000, &c, rows[i].now),
                        rows[i].want, "%s", rows[i].row);
        }
}

/* A partition that closed for itself while the gate splits: ts < T is late
 * (to the dead-letter topic with late_to_dlq, else to the new colour), ts
 * >= T new; an open partition of the same gate still sends ts < T old. */
Test(agree, closed_partition_routes_as_closed) {
        gp_gate_conf_t c = {.late_to_dlq = true};
        gp_gate_t g;
        gp_gate_init(&g, GP_BLUE);
        g.phase = GP_PHASE_SPLIT;
        g.old_c = GP_BLUE;
        g.new_c = GP_GREEN;
        g.cutoff = 1000;
        gp_part_t open, shut;
        gp_part_init(&open, 0);
        gp_part_init(&shut, 0);
        shut.closed = true;
        bool late;
        cr_expect_eq(gp_gate_route(&g, &c, &open, 999, 1, &late), GP_DEST_BLUE);
        cr_expect_not(late);
        cr_expect_eq(gp_gate_route(&g, &c, &shut, 999, 1, &late), GP_DEST_DLQ);
        cr_expect(late);
        cr_expect_eq(shut.late, 1);
        cr_expect_eq(gp_gate_route(&g, &c, &shut, 1000, 1, &late), GP_DEST_GREEN);
        cr_expect_not(late);
        c.late_to_dlq = false;
        cr_expect_eq(gp_gate_route(&g, &c, &shut, 5, 1, &late), GP_DEST_GREEN);
        cr_expect(late);
        /* closed means nothing outside SPLIT: WAITING routes old */
        g.phase = GP_PHASE_WAITING;
        cr_expect_eq(gp_gate_route(&g, &c, &shut, 5, 1, &late), GP_DEST_BLUE);
}

/* ---- the model ----------------------------------------------------------- */

#define NI   3 /* instances */
#define NP   4 /* source partitions; the last appears while the pipeline runs */
#define MAXR 3 /* records per partition at most */
#define GROW (NP - 1)

/* Model times are small: int8_t, two values set aside. */
#define N8    INT8_MIN       /* GP_TS_NONE */
#define NOTH8 (INT8_MIN + 1) /* GP_AGREE_NOTHING */
#define NOI   NI             /* no owner, no zombie */
#define DELAY 2              /* D */
#define ALIGN 5              /* gate.cutoff.align.ms */
#define NOW   9              /* the wall clock, the same for every instance */
#define OOO   0              /* out-of-orderness: watermark = hi */

/* Event times: an out-of-order record on p0, an idle p2, and p3 that
 * appears while the pipeline runs. */
static const int8_t recs[NP][MAXR] = {{4, 11, 7}, {6, 13, 0}, {0, 0, 0}, {5, 12, 0}};
static const uint8_t nrec[NP] = {3, 2, 0, 2};
/* What a person may put into the map by hand (N8: delete it). */
static const int8_t edit_values[] = {8, 16, N8};
#define NEDIT ((int)(sizeof edit_values / sizeof edit_values[0]))

/* How often each fault may happen on one path (the explored
 * configuration; a test sets it before exploring). */
typedef struct {
        uint8_t move, crash, lost, leave, txabort, edit, mabort, grow, join, stale, restart;
        /* Faults of the proxy itself, to show the model finds them:
         * keep_pause, a partition assigned back to the instance that paused
         * it is not resumed (librdkafka keeps an application's pause across
         * revoke and assign); no_tid, the map carries no transition id. */
        bool keep_pause, no_tid;
        bool no_pause; /* a held partition is not paused (fewer states, where the
                          set's faults cannot meet a pause) */
} budget_t;
static budget_t cfg;

/* The map's stage, and an instance's view of it; M_TRANS2 is only a view:
 * the map transitioning again after an abort (the stage is M_TRANS, hop 1). */
enum { M_STEADY, M_TRANS, M_ABORTED, M_TRANS2 };
enum { D_NONE, D_OLD, D_NEW, D_LATE, D_SURV }; /* where a record went */
enum {
        BAD_NONE,
        BAD_GAP,
        BAD_OLD_AFTER_CLEAR,
        BAD_CLEAR,
        BAD_OVERWRITE,
        BAD_RANGE,
        BAD_FENCE,
        BAD_TWO_T
};

typedef struct {
        uint8_t exists, owner, zombie; /* zombie: a lost instance's transaction is open */
        uint8_t off;                   /* committed offset */
        int8_t prom, t;                /* committed checkpoint: promise, T */
        uint8_t closed, aborted;
        uint8_t dest[MAXR]; /* below off committed, [off, pos) in flight */
        uint8_t pos;        /* the owner's transaction: next record */
        int8_t fprom, ft;
        uint8_t fclosed, faborted, dirty;
        uint8_t held;    /* the owner paused it and knows it (its state of the
                         partition, gone when the partition is assigned) */
        uint8_t tx, ftx; /* the transition (hop) the committed and the in-flight
                            promise, T, closed and aborted belong to */
        uint8_t rh;      /* records routed in hop 1, one bit each */
} part_t;

typedef struct {
        part_t p[NP];
        uint8_t member[NI], view[NI]; /* view: the stage as the instance last read it */
        uint8_t zinst;                /* the zombie instance, NOI: none */
        uint8_t stage, clear, drained;
        int8_t map_t;
        uint8_t moves, crashes, lost, leaves, txaborts, edits, maborts, joins, stales;
        uint8_t hop, restarts; /* the map's transition: TID + hop */
        int8_t tk[2];          /* the T first committed for each hop */
        uint8_t rkp[NI];       /* partitions paused in each instance's consumer, one bit
                            each: the consumer keeps a pause across revoke and
                            assign, and forgets it when its process ends */
        uint8_t bad;
} st_t;

/* ---- reading the state ---- */

static int64_t wide(int8_t v) {
        return v == N8 ? GP_TS_NONE : v == NOTH8 ? GP_AGREE_NOTHING : v;
}

/* v as a model time; out of range sets *bad. */
static int8_t narrow(int64_t v, uint8_t *bad) {
        if (v == GP_TS_NONE)
                return N8;
        if (v == GP_AGREE_NOTHING)
                return NOTH8;
        if (v < INT8_MIN + 2 || v > INT8_MAX) {
                *bad = BAD_RANGE;
                return N8;
        }
        return (int8_t)v;
}

/* The highest event time among the first n records of partition k. */
static int8_t hi_upto(int k, int n) {
        int8_t hi = N8;
        for (int r = 0; r < n; r++)
                if (recs[k][r] > hi)
                        hi = recs[k][r];
        return hi;
}

/* A committed line belongs to hop x: its transition id is x's (the
 * agreement reads a line of another id as nothing of x's). Lines without
 * ids (cfg.no_tid) belong to any. */
static bool in_hop(const part_t *p, int x) {
        return cfg.no_tid || p->tx == x;
}

/* T of hop x from the committed checkpoints, as any instance reads them: a
 * T one of them records, else the maximum of the committed promises. */
static int8_t pipeline_t_at(const st_t *s, int x) {
        int64_t pr[NP];
        size_t n = 0;
        for (int k = 0; k < NP; k++)
                if (s->p[k].exists && in_hop(&s->p[k], x) && s->p[k].t != N8)
                        return s->p[k].t;
        for (int k = 0; k < NP; k++)
                if (s->p[k].exists)
                        pr[n++] = s->p[k].aborted || !in_hop(&s->p[k], x) ? GP_TS_NONE
                                                                          : wide(s->p[k].prom);
        uint8_t ignored = 0; /* promises are model times, so is their maximum */
        return narrow(gp_agree_cutoff(pr, n), &ignored);
}

/* T of the map's transition. */
static int8_t pipeline_t(const st_t *s) {
        return pipeline_t_at(s, s->hop);
}

/* Some committed checkpoint carries hop x. */
static bool running_at(const st_t *s, int x) {
        for (int k = 0; k < NP; k++)
                if (s->p[k].exists && in_hop(&s->p[k], x) &&
                    (s->p[k].prom != N8 || s->p[k].t != N8))
                        return true;
        return false;
}

static bool running(const st_t *s) {
        return running_at(s, s->hop);
}

/* Every existing partition but skip is closed in its committed checkpoint
 * of hop x. */
static bool others_closed_at(const st_t *s, int skip, int x) {
        bool closed[NP];
        size_t n = 0;
        for (int k = 0; k < NP; k++)
                if (s->p[k].exists && k != skip)
                        closed[n++] = in_hop(&s->p[k], x) && s->p[k].closed;
        return gp_agree_all_closed(closed, n);
}

static bool others_closed(const st_t *s, int skip) {
        return others_closed_at(s, skip, s->hop);
}

/* The map's version as a member reads it. */
static int version(const st_t *s) {
        return s->stage == M_TRANS && s->hop ? M_TRANS2 : s->stage;
}

static gp_agree_map_t map_verdict(const st_t *s) {
        return gp_agree_map(wide(s->map_t), wide(pipeline_t(s)));
}

static bool owned(const st_t *s, int k) {
        const part_t *p = &s->p[k];
        return p->exists && p->owner < NI && s->member[p->owner];
}

/* Partition k is paused in its owner's consumer. */
static bool paused(const st_t *s, int k) {
        return s->p[k].owner < NI && (s->rkp[s->p[k].owner] >> k & 1);
}

/* The map as a member last read it, as the proxy parses it: the
 * transition's id is TID (TID + 1 when cut over again after an abort), the
 * one before it ended as TID - 1. */
#define TID 2
static gp_control_t control_of(int view) {
        gp_control_t c = {.toggle = GP_TS_NONE, .req_cutoff = GP_TS_NONE, .tid = TID};
        if (view == M_STEADY) {
                c.active = GP_BLUE;
                c.stage = GP_STAGE_RUNNING;
                c.tid = TID - 1;
                c.tid_ended = true;
        } else if (view == M_TRANS || view == M_TRANS2) {
                c.active = GP_GREEN;
                c.stage = GP_STAGE_TRANSITIONING;
                c.tid = view == M_TRANS2 ? TID + 1 : TID;
        } else { /* gate-proxy abort */
                c.active = GP_BLUE;
                c.stage = GP_STAGE_FAILING;
                c.is_first = true;
        }
        if (cfg.no_tid) {
                c.tid = 0;
                c.tid_ended = false;
        }
        return c;
}

/* Partition k's owner's gate: what it knows of the partition's hop
 * (p->ftx): nothing yet (STEADY), the hop begun, a promise or another
 * partition's (WAITING), T (SPLIT), the close (CLOSED), given up
 * (ABORTED: all to the old colour, blue). */
static gp_gate_t gate_of(const st_t *s, int k) {
        const part_t *p = &s->p[k];
        gp_gate_t g = {.phase = GP_PHASE_WAITING,
                       .old_c = GP_BLUE,
                       .new_c = GP_GREEN,
                       .cutoff = p->ft != N8 ? p->ft : GP_TS_NONE,
                       .cutoff_wall = GP_TS_NONE,
                       .tid = cfg.no_tid ? 0 : TID + p->ftx};
        if (p->faborted) {
                g.phase = GP_PHASE_ABORTED;
                g.new_c = GP_BLUE;
        } else if (p->ft != N8)
                g.phase = p->fclosed ? GP_PHASE_CLOSED : GP_PHASE_SPLIT;
        else if (p->ftx == 0 && p->fprom == N8 && !running_at(s, 0)) {
                g.phase = GP_PHASE_STEADY;
                g.old_c = g.new_c = GP_BLUE;
        }
        return g;
}

/* Partition k's owner has given its hop up: its own decision in flight,
 * or the one its gate (gp_gate_step, the proxy's own code) takes from the
 * map as the owner last read it. */
static bool abandoned(const st_t *s, int k) {
        const part_t *p = &s->p[k];
        int view = s->view[p->owner];
        if (p->faborted)
                return true;
        if (view == (p->ftx ? M_TRANS2 : M_TRANS))
                return false; /* the map shows the gate's own transition */
        gp_gate_t g = gate_of(s, k);
        if (g.phase == GP_PHASE_STEADY)
                return view == M_ABORTED; /* all to the survivor */
        gp_part_t pt;
        gp_part_init(&pt, NOW);
        pt.closed = p->fclosed;
        gp_part_t *parts[] = {&pt};
        gp_control_t c = control_of(view);
        gp_wm_view_t wv = {.wm = GP_TS_NONE, .hi_max = GP_TS_NONE, .last_record = GP_TS_NONE};
        gp_gate_conf_t conf = {.align_ms = ALIGN, .idle_ms = 1000, .lateness_ms = 1000};
        gp_step_t out;
        gp_gate_step(&g, parts, 1, &c, &wv, &conf, NOW, &out);
        return g.phase == GP_PHASE_ABORTED;
}

/* The T partition k's owner routes by: its own, else the pipeline's. */
static int8_t known_t(const st_t *s, int k) {
        return s->p[k].ft != N8 ? s->p[k].ft : pipeline_t_at(s, s->p[k].ftx);
}

/* The instance's W: the lowest watermark of its partitions that have one. */
static int8_t inst_wm(const st_t *s, int i) {
        int8_t w = N8;
        for (int k = 0; k < NP; k++) {
                const part_t *p = &s->p[k];
                int8_t h = hi_upto(k, p->pos);
                if (p->exists && p->owner == i && h != N8 && (w == N8 || h - OOO < w))
                        w = (int8_t)(h - OOO);
        }
        return w;
}

/* ---- changing it ---- */

/* The owner's transaction starts again from the committed checkpoint. */
static void reset_flight(part_t *p) {
        for (int r = p->off; r < MAXR; r++)
                p->dest[r] = D_NONE;
        p->pos = p->off;
        p->fprom = p->prom;
        p->ft = p->t;
        p->fclosed = p->closed;
        p->faborted = p->aborted;
        p->ftx = p->tx;
        p->rh &= (uint8_t)((1u << p->off) - 1);
        p->dirty = 0;
}

/* Partition k is assigned to instance i: the proxy resumes it there. */
static void take(st_t *s, int k, int i) {
        s->p[k].owner = (uint8_t)i;
        s->p[k].held = 0;
        reset_flight(&s->p[k]);
        if (!cfg.keep_pause)
                s->rkp[i] &= (uint8_t) ~(1u << k);
}

/* Instance i commits its transaction: offsets and checkpoints of all its
 * partitions at once. */
static void commit(st_t *s, int i) {
        for (int k = 0; k < NP; k++) {
                part_t *p = &s->p[k];
                if (!p->exists || p->owner != i)
                        continue;
                /* read at the boundary, recorded by every partition */
                int8_t t = pipeline_t_at(s, p->ftx);
                if (!p->faborted && abandoned(s, k))
                        p->faborted = 1; /* the gate's abort, committed */
                if (t != N8 && p->ft == N8 && !p->faborted)
                        p->ft = t;
                if (p->ft != N8) {
                        if (s->tk[p->ftx] == N8)
                                s->tk[p->ftx] = p->ft;
                        else if (s->tk[p->ftx] != p->ft)
                                s->bad = BAD_TWO_T;
                }
                bool old = false;
                for (int r = p->off; r < p->pos; r++) {
                        old |= p->dest[r] == D_OLD;
                        if (p->dest[r] == D_NONE)
                                s->bad = BAD_GAP;
                }
                p->off = p->pos;
                p->prom = p->fprom;
                p->t = p->ft;
                p->closed = p->fclosed;
                p->aborted = p->faborted;
                p->tx = p->ftx;
                p->dirty = 0;
                if (old) {
                        s->drained = 0; /* the drain check's targets moved */
                        if (s->clear)
                                s->bad = BAD_OLD_AFTER_CLEAR;
                }
        }
}

static bool any_member(const st_t *s) {
        for (int i = 0; i < NI; i++)
                if (s->member[i])
                        return true;
        return false;
}

/* Instance i has something to commit: records or decisions, or a T its
 * checkpoints do not hold yet. */
static bool any_dirty(const st_t *s, int i) {
        for (int k = 0; k < NP; k++) {
                const part_t *p = &s->p[k];
                if (!p->exists || p->owner != i)
                        continue;
                int8_t t = pipeline_t_at(s, p->ftx);
                if (p->dirty || (t != N8 && p->t == N8 && !p->faborted) ||
                    (!p->aborted && abandoned(s, k)))
                        return true;
        }
        return false;
}

/* Instance i drops its transaction and, unless keep, its partitions. */
static void drop(st_t *s, int i, bool keep, bool zombie) {
        for (int k = 0; k < NP; k++) {
                part_t *p = &s->p[k];
                if (!p->exists || p->owner != i)
                        continue;
                reset_flight(p);
                if (!keep) {
                        p->owner = NOI;
                        p->zombie = zombie;
                }
        }
}

/* Where partition k's next record goes (D_NONE: the partition holds),
 * with the owner's decisions it takes on the way. */
static int route_dest(st_t *s, int k) {
        part_t *p = &s->p[k];
        int8_t ts = recs[k][p->pos];
        if (abandoned(s, k)) {
                p->faborted = 1; /* holds released: all to the survivor */
                return D_SURV;
        }
        int8_t t = known_t(s, k);
        if (t != N8 && !p->fclosed && p->prom == N8 && others_closed_at(s, k, p->ftx))
                p->fclosed = 1; /* appeared after T, everything else closed */
        if (p->fclosed) {
                p->ft = t;
                return ts < t ? D_LATE : D_NEW;
        }
        if (t == N8 && p->fprom == N8 && running_at(s, p->ftx))
                return D_NONE; /* the transition runs: promise first */
        if (t != N8)
                p->ft = t;
        switch (gp_agree_route(ts, wide(p->fprom), wide(t))) {
        case GP_AGREE_OLD:
                return D_OLD;
        case GP_AGREE_NEW:
                return D_NEW;
        default:
                return D_NONE;
        }
}

static bool act_promise(st_t *s, int k) {
        part_t *p = &s->p[k];
        int i = p->owner;
        if (!owned(s, k) || abandoned(s, k) || p->fprom != N8 || known_t(s, k) != N8)
                return false;
        bool run = running_at(s, p->ftx);
        bool asked = s->view[i] == (p->ftx ? M_TRANS2 : M_TRANS);
        if (!asked && !run)
                return false;
        /* A T in the map when the promise is made is asked for. */
        gp_agree_basis_t b = {.asked = asked && s->hop == p->ftx ? wide(s->map_t) : NONE,
                              .part_wm = wide(hi_upto(k, p->pos)),
                              .inst_wm = wide(inst_wm(s, i)),
                              .inst_hi = NONE,
                              .now = NOW,
                              .delay_ms = DELAY,
                              .align_ms = ALIGN,
                              .late = run};
        if (b.part_wm != NONE)
                b.part_wm -= OOO;
        int64_t pr = gp_agree_promise(wide(hi_upto(k, p->pos)), &b);
        if (pr == NONE)
                return false; /* holds; not reached with these times */
        p->fprom = narrow(pr, &s->bad);
        p->dirty = 1;
        return true;
}

typedef enum {
        K_START,
        K_MABORT,
        K_EDIT,
        K_READ,
        K_PUBLISH,
        K_DRAIN,
        K_CLEAR,
        K_GROW,
        K_ASSIGN,
        K_MOVE,
        K_JOIN,
        K_STALE,
        K_LEAVE,
        K_CRASH,
        K_LOST,
        K_FENCE,
        K_COMMIT,
        K_TXABORT,
        K_ROUTE,
        K_PROMISE,
        K_CLOSE,
        K_RESUME,
        K_RESTART,
        K_BEGIN,
} kind_t;

typedef struct {
        uint8_t kind, a, b;
} act_t;

/* The census (gp_agree_settled, the proxy's own rule): gate g may begin
 * hop 1 over every committed line. */
static bool census(const st_t *s, const gp_gate_t *g) {
        for (int k = 0; k < NP; k++) {
                const part_t *q = &s->p[k];
                if (!q->exists)
                        continue;
                gp_gate_t line = {.phase = GP_PHASE_WAITING,
                                  .old_c = GP_BLUE,
                                  .new_c = GP_GREEN,
                                  .cutoff = q->t != N8 ? q->t : GP_TS_NONE,
                                  .cutoff_wall = GP_TS_NONE,
                                  .tid = cfg.no_tid ? 0 : TID + q->tx};
                if (q->aborted) {
                        line.phase = GP_PHASE_ABORTED;
                        line.new_c = GP_BLUE;
                } else if (q->closed)
                        line.phase = GP_PHASE_CLOSED;
                else if (q->t != N8)
                        line.phase = GP_PHASE_SPLIT;
                else if (q->tx == 0 && q->prom == N8) {
                        line.phase = GP_PHASE_STEADY;
                        line.old_c = line.new_c = GP_BLUE;
                }
                gp_part_t lp;
                gp_part_init(&lp, NOW);
                lp.closed = q->closed;
                if (!gp_agree_settled(g, cfg.no_tid ? 0 : TID + 1, &line, &lp))
                        return false;
        }
        return true;
}

/* Applies act to *s in place; false (and *s unusable) when it is not
 * enabled. */
static bool step(st_t *s, act_t act) {
        int a = act.a, b = act.b;
        part_t *p = &s->p[a < NP ? a : 0];
        switch ((kind_t)act.kind) {
        case K_START:
                if (s->stage != M_STEADY)
                        return false;
                s->stage = M_TRANS;
                return true;
        case K_MABORT:
                if (s->stage != M_TRANS || s->maborts >= cfg.mabort)
                        return false;
                s->stage = M_ABORTED;
                s->maborts++;
                return true;
        case K_EDIT:
                if (s->edits >= cfg.edit || s->map_t == edit_values[a])
                        return false;
                s->map_t = edit_values[a];
                s->edits++;
                return true;
        case K_READ:
                if (!s->member[a] || s->view[a] == version(s))
                        return false;
                s->view[a] = (uint8_t)version(s);
                return true;
        case K_PUBLISH: {
                if (s->stage != M_TRANS || map_verdict(s) != GP_AGREE_MAP_WRITE)
                        return false;
                if (s->map_t != N8)
                        s->bad = BAD_OVERWRITE;
                s->map_t = pipeline_t(s); /* compare-and-set on "no T" */
                return true;
        }
        case K_DRAIN:
                /* The check runs once the close is due everywhere. */
                if (s->stage != M_TRANS || s->drained || !others_closed(s, -1))
                        return false;
                s->drained = 1;
                return true;
        case K_CLEAR: {
                bool closed[NP];
                size_t n = 0;
                for (int k = 0; k < NP; k++)
                        if (s->p[k].exists)
                                closed[n++] = in_hop(&s->p[k], s->hop) && s->p[k].closed;
                if (s->stage != M_TRANS || s->clear ||
                    !gp_agree_clear(closed, n, s->drained, map_verdict(s)))
                        return false;
                /* Checked here, at publication: a partition may appear later. */
                for (int k = 0; k < NP; k++)
                        if (s->p[k].exists && (!s->p[k].closed || s->p[k].tx != s->hop))
                                s->bad = BAD_CLEAR;
                if (!s->drained || s->map_t == N8 || s->map_t != pipeline_t(s))
                        s->bad = BAD_CLEAR;
                s->clear = 1;
                return true;
        }
        case K_GROW:
                if (s->p[GROW].exists || !cfg.grow)
                        return false;
                s->p[GROW].exists = 1;
                return true;
        case K_ASSIGN:
                if (!p->exists || p->owner != NOI || p->zombie || !s->member[b])
                        return false;
                take(s, a, b);
                return true;
        case K_MOVE:
                if (!owned(s, a) || p->owner == b || !s->member[b] || s->moves >= cfg.move)
                        return false;
                commit(s, p->owner); /* the revoke commits first */
                take(s, a, b);
                s->moves++;
                return true;
        case K_JOIN:
                if (s->member[a] || s->zinst == a || (s->joins >= cfg.join && any_member(s)))
                        return false;
                s->member[a] = 1;
                s->view[a] = (uint8_t)version(s);
                s->joins++;
                return true;
        case K_STALE:
                /* A member joins with a copy of the map from before the
                 * transition (a lagging watch, a cache). */
                if (s->member[a] || s->zinst == a || s->stage != M_TRANS ||
                    s->stales >= cfg.stale)
                        return false;
                s->member[a] = 1;
                s->view[a] = M_STEADY;
                s->stales++;
                return true;
        case K_LEAVE:
                if (!s->member[a] || s->leaves >= cfg.leave)
                        return false;
                commit(s, a);
                drop(s, a, false, false);
                s->member[a] = 0;
                s->rkp[a] = 0; /* the process ends */
                s->leaves++;
                return true;
        case K_CRASH:
                if (!s->member[a] || s->crashes >= cfg.crash)
                        return false;
                drop(s, a, false, false); /* the broker aborts its transaction */
                s->member[a] = 0;
                s->rkp[a] = 0;
                s->crashes++;
                return true;
        case K_LOST:
                if (!s->member[a] || s->zinst != NOI || s->lost >= cfg.lost)
                        return false;
                drop(s, a, false, true); /* still running, its transaction open */
                s->member[a] = 0;
                s->zinst = (uint8_t)a;
                s->lost++;
                return true;
        case K_FENCE: {
                /* The zombie commits: the group generation it holds is
                 * gone, so the commit is fenced and its transaction
                 * aborted; only then may the new owners read the
                 * partitions (RequireStable). */
                if (s->zinst == NOI)
                        return false;
                if (s->member[s->zinst])
                        s->bad = BAD_FENCE;
                for (int k = 0; k < NP; k++)
                        s->p[k].zombie = 0;
                s->zinst = NOI;
                return true;
        }
        case K_COMMIT:
                if (!s->member[a] || !any_dirty(s, a))
                        return false;
                commit(s, a);
                return true;
        case K_TXABORT:
                if (!s->member[a] || !any_dirty(s, a) || s->txaborts >= cfg.txabort)
                        return false;
                drop(s, a, true, false);
                s->txaborts++;
                return true;
        case K_ROUTE: {
                if (!owned(s, a) || p->pos >= nrec[a] || paused(s, a))
                        return false;
                int d = route_dest(s, a);
                if (d == D_NONE) { /* the owner pauses the partition at the record */
                        if (cfg.no_pause)
                                return false;
                        s->rkp[p->owner] |= (uint8_t)(1u << a);
                        p->held = 1;
                        return true;
                }
                if (p->ftx)
                        p->rh |= (uint8_t)(1u << p->pos);
                p->dest[p->pos++] = (uint8_t)d;
                p->dirty = 1;
                return true;
        }
        case K_PROMISE:
                return act_promise(s, a);
        case K_RESUME: {
                /* The owner resumes a partition it paused once the record
                 * it stopped at has a destination. */
                if (!owned(s, a) || !paused(s, a) || !p->held)
                        return false;
                st_t probe = *s;
                if (p->pos < nrec[a] && route_dest(&probe, a) == D_NONE)
                        return false;
                s->rkp[p->owner] &= (uint8_t) ~(1u << a);
                p->held = 0;
                return true;
        }
        case K_RESTART:
                /* `gate-proxy cutover --to green` again: a new transition id. */
                if (s->stage != M_ABORTED || s->restarts >= cfg.restart)
                        return false;
                s->stage = M_TRANS;
                s->hop = 1;
                s->map_t = N8;
                s->clear = s->drained = 0;
                s->restarts++;
                return true;
        case K_BEGIN: {
                /* p's owner, reading the new transition, begins it for p:
                 * once its gate has left hop 0 (given up, or never in it)
                 * and the census passes. */
                if (!owned(s, a) || p->ftx != 0 || s->view[p->owner] != M_TRANS2)
                        return false;
                gp_gate_t g = gate_of(s, a);
                /* An abort begins nothing before it is committed: what the
                 * hop routed by its T stays accounted to that T (the
                 * re-delivery, gate/redeliver.h, also waits for it). */
                if (!(g.phase == GP_PHASE_STEADY ||
                      (g.phase == GP_PHASE_ABORTED && p->aborted)) ||
                    !census(s, &g))
                        return false;
                p->ftx = 1;
                p->fprom = p->ft = N8;
                p->fclosed = p->faborted = 0;
                p->dirty = 1;
                return true;
        }
        case K_CLOSE: {
                int8_t t = known_t(s, a);
                if (!owned(s, a) || abandoned(s, a) || p->fclosed || t == N8 ||
                    p->pos < nrec[a])
                        return false;
                /* The watermark condition: here, once the partition has
                 * read all it has (later records come as late ones only to
                 * a partition born closed). */
                p->fclosed = 1;
                p->ft = t;
                p->dirty = 1;
                return true;
        }
        }
        return false;
}

static size_t all_actions(act_t *out) {
        size_t n = 0;
        out[n++] = (act_t){K_START, 0, 0};
        out[n++] = (act_t){K_MABORT, 0, 0};
        for (int e = 0; e < NEDIT; e++)
                out[n++] = (act_t){K_EDIT, (uint8_t)e, 0};
        out[n++] = (act_t){K_PUBLISH, 0, 0};
        out[n++] = (act_t){K_DRAIN, 0, 0};
        out[n++] = (act_t){K_CLEAR, 0, 0};
        out[n++] = (act_t){K_GROW, 0, 0};
        out[n++] = (act_t){K_FENCE, 0, 0};
        out[n++] = (act_t){K_RESTART, 0, 0};
        for (int i = 0; i < NI; i++) {
                const kind_t per_inst[] = {K_READ,  K_JOIN, K_STALE,  K_LEAVE,
                                           K_CRASH, K_LOST, K_COMMIT, K_TXABORT};
                for (size_t j = 0; j < sizeof per_inst / sizeof per_inst[0]; j++)
                        out[n++] = (act_t){(uint8_t)per_inst[j], (uint8_t)i, 0};
        }
        for (int k = 0; k < NP; k++) {
                const kind_t per_part[] = {K_ROUTE, K_PROMISE, K_CLOSE, K_RESUME, K_BEGIN};
                for (size_t j = 0; j < sizeof per_part / sizeof per_part[0]; j++)
                        out[n++] = (act_t){(uint8_t)per_part[j], (uint8_t)k, 0};
                for (int i = 0; i < NI; i++) {
                        out[n++] = (act_t){K_ASSIGN, (uint8_t)k, (uint8_t)i};
                        out[n++] = (act_t){K_MOVE, (uint8_t)k, (uint8_t)i};
                }
        }
        return n;
}
#define MAX_ACTS 96

static void initial(st_t *s) {
        memset(s, 0, sizeof *s);
        for (int k = 0; k < NP; k++) {
                part_t *p = &s->p[k];
                p->exists = k != GROW;
                p->owner = k == GROW ? NOI : k < 2 ? 0 : 1;
                p->prom = p->t = N8;
                reset_flight(p);
        }
        s->member[0] = s->member[1] = 1;
        s->map_t = N8;
        s->tk[0] = s->tk[1] = N8;
        s->zinst = NOI;
        s->stage = M_STEADY;
}

/* ---- the invariants ---- */

static const char *dest_names[] = {"-", "OLD", "NEW", "LATE", "SURV"};

/* Writes what is wrong with s into msg; false when nothing is. */
static bool violated(const st_t *s, char *msg, size_t len) {
        static const char *const bad[] = {
                [BAD_GAP] = "(a) a committed record without destination",
                [BAD_FENCE] = "a zombie's commit was not fenced",
                [BAD_OLD_AFTER_CLEAR] = "(d) records committed to the old colour after "
                                        "CLEAR_TO_TEARDOWN",
                [BAD_CLEAR] = "(d) CLEAR_TO_TEARDOWN published with a partition open, "
                              "undrained, or the map showing another T",
                [BAD_OVERWRITE] = "the map's T written over",
                [BAD_RANGE] = "a time outside the model's range",
                [BAD_TWO_T] = "(c) two T's committed for one transition",
        };
        if (s->bad) {
                snprintf(msg, len, "%s", bad[s->bad]);
                return true;
        }
        /* Each transition has one T (s->tk, the first committed): every
         * line of it holds that one. */
        for (int k = 0; k < NP; k++) {
                const part_t *p = &s->p[k];
                if (p->exists && p->t != N8 && p->t != s->tk[p->tx]) {
                        snprintf(msg, len, "(c) two T's committed in hop %d: %d and %d (p%d)",
                                 p->tx, s->tk[p->tx], p->t, k);
                        return true;
                }
        }
        for (int k = 0; k < NP; k++) {
                const part_t *p = &s->p[k];
                for (int r = 0; p->exists && r < nrec[k]; r++) {
                        int d = p->dest[r], ts = recs[k][r], hx = p->rh >> r & 1;
                        int8_t t = s->tk[hx]; /* the T of the hop it was routed in */
                        if ((r < p->pos) != (d != D_NONE)) {
                                snprintf(msg, len,
                                         "(a)(b) p%d record %d: destination %s with %d "
                                         "committed and %d routed",
                                         k, r, dest_names[d], p->off, p->pos);
                                return true;
                        }
                        if (r >= p->off)
                                continue;
                        /* Before T reaches the checkpoint, the promise bounds
                         * the old side; after, T does (T >= every promise). */
                        if (hx == p->tx && p->prom != N8 && p->t == N8 && d == D_OLD &&
                            ts >= wide(p->prom)) {
                                snprintf(msg, len,
                                         "(c) p%d: old record ts %d >= its partition's "
                                         "promise %" PRId64,
                                         k, ts, wide(p->prom));
                                return true;
                        }
                        if ((d == D_NEW || d == D_LATE) && t == N8) {
                                snprintf(msg, len, "(c) p%d: ts %d committed %s without T", k,
                                         ts, dest_names[d]);
                                return true;
                        }
                        if (t == N8)
                                continue;
                        if ((d == D_OLD || d == D_LATE) && ts >= t) {
                                snprintf(
                                        msg, len,
                                        "(c) p%d: committed %s record ts %d >= T %d of hop %d",
                                        k, dest_names[d], ts, t, hx);
                                return true;
                        }
                        if (d == D_NEW && ts < t) {
                                snprintf(
                                        msg, len,
                                        "(c) p%d: committed new record ts %d < T %d of hop %d",
                                        k, ts, t, hx);
                                return true;
                        }
                }
        }
        /* T is a function of the committed promises of its transition. */
        int64_t pr[NP];
        size_t n = 0;
        int8_t t = s->tk[s->hop];
        for (int k = 0; k < NP; k++)
                if (s->p[k].exists)
                        pr[n++] = s->p[k].tx == s->hop ? wide(s->p[k].prom) : NONE;
        int64_t from_promises = gp_agree_cutoff(pr, n);
        if (t != N8 && from_promises != NONE && from_promises != wide(t)) {
                snprintf(msg, len,
                         "(c) the committed promises of hop %d give T %" PRId64
                         " but a checkpoint holds T %d",
                         s->hop, from_promises, t);
                return true;
        }
        return false;
}

/* Every record committed, and every partition routes by T (or the
 * transition was aborted). */
static bool finished(const st_t *s) {
        if (s->stage == M_STEADY)
                return false;
        for (int k = 0; k < NP; k++) {
                const part_t *p = &s->p[k];
                if (!p->exists)
                        continue;
                if (p->off != nrec[k] || p->dirty)
                        return false;
                if (s->stage == M_TRANS && (p->t == N8 || p->tx != s->hop))
                        return false;
        }
        return true;
}

/* CLEAR_TO_TEARDOWN is out, or the map holds a T no person can still fix
 * in this model (the conflict is reported and waits for a person). */
static bool cleared(const st_t *s) {
        return s->clear || (s->edits >= cfg.edit && map_verdict(s) == GP_AGREE_MAP_CONFLICT);
}

/* ---- the explorer ---- */

/* The visited set's key is the state itself: bytes only, no padding. */
_Static_assert(_Alignof(st_t) == 1, "st_t holds bytes only, so it has no padding");

static uint64_t hash_state(const st_t *s) {
        const unsigned char *b = (const unsigned char *)s;
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
        for (size_t i = 0; i < sizeof *s; i++)
                h = (h ^ b[i]) * 0x100000001b3ull;
        return h ^ h >> 29;
}

typedef struct {
        st_t *keys;
        uint32_t *parent;
        act_t *via;
        uint32_t *first_edge; /* edges of state i: [first_edge[i], first_edge[i + 1]) */
        uint32_t *edges;
        size_t n, cap, nedges, edge_cap;
        uint32_t *table; /* open addressing, index + 1 */
        size_t table_cap;
} graph_t;

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
        if (need <= *cap)
                return p;
        size_t c = *cap ? *cap : 1024;
        while (c < need)
                c *= 2;
        void *q = realloc(p, c * size);
        cr_assert_not_null(q, "out of memory at %zu", c);
        *cap = c;
        return q;
}

static void rehash(graph_t *g) {
        free(g->table);
        g->table_cap = g->table_cap ? g->table_cap * 2 : 1u << 16;
        g->table = calloc(g->table_cap, sizeof *g->table);
        cr_assert_not_null(g->table);
        for (size_t i = 0; i < g->n; i++) {
                size_t h = hash_state(&g->keys[i]) & (g->table_cap - 1);
                while (g->table[h])
                        h = (h + 1) & (g->table_cap - 1);
                g->table[h] = (uint32_t)i + 1;
        }
}

/* The index of key, added when new (*added). */
static uint32_t intern(graph_t *g, const st_t *key, bool *added) {
        if (2 * (g->n + 1) > g->table_cap)
                rehash(g);
        size_t h = hash_state(key) & (g->table_cap - 1);
        for (; g->table[h]; h = (h + 1) & (g->table_cap - 1))
                if (!memcmp(&g->keys[g->table[h] - 1], key, sizeof *key)) {
                        *added = false;
                        return g->table[h] - 1;
                }
        if (g->n + 2 > g->cap) { /* one capacity for the four arrays */
                size_t cap = g->cap;
                g->keys = grow(g->keys, &cap, g->n + 2, sizeof *g->keys);
                g->parent = realloc(g->parent, cap * sizeof *g->parent);
                g->via = realloc(g->via, cap * sizeof *g->via);
                g->first_edge = realloc(g->first_edge, cap * sizeof *g->first_edge);
                cr_assert(g->parent && g->via && g->first_edge, "out of memory at %zu", cap);
                g->cap = cap;
        }
        g->keys[g->n] = *key;
        g->table[h] = (uint32_t)g->n + 1;
        *added = true;
        return (uint32_t)g->n++;
}

static void describe_act(act_t a, char *buf, size_t len) {
        int x = a.a, y = a.b;
        switch ((kind_t)a.kind) {
        case K_START:
                snprintf(buf, len, "the map starts the transition");
                break;
        case K_MABORT:
                snprintf(buf, len, "the map aborts the transition");
                break;
        case K_EDIT:
                snprintf(buf, len, "a person writes T=%d into the map by hand",
                         edit_values[x]);
                break;
        case K_READ:
                snprintf(buf, len, "i%d reads the map", x);
                break;
        case K_PUBLISH:
                snprintf(buf, len, "the computed T is written to the map (compare-and-set)");
                break;
        case K_DRAIN:
                snprintf(buf, len, "the drain check passes");
                break;
        case K_CLEAR:
                snprintf(buf, len, "CLEAR_TO_TEARDOWN is published");
                break;
        case K_GROW:
                snprintf(buf, len, "the source grows: p%d appears", GROW);
                break;
        case K_ASSIGN:
                snprintf(buf, len, "p%d is assigned to i%d", x, y);
                break;
        case K_MOVE:
                snprintf(buf, len, "p%d moves to i%d (the revoke commits first)", x, y);
                break;
        case K_JOIN:
                snprintf(buf, len, "i%d joins", x);
                break;
        case K_STALE:
                snprintf(buf, len,
                         "i%d joins with a copy of the map from before the "
                         "transition",
                         x);
                break;
        case K_LEAVE:
                snprintf(buf, len, "i%d leaves (commits first)", x);
                break;
        case K_CRASH:
                snprintf(buf, len, "i%d crashes", x);
                break;
        case K_LOST:
                snprintf(buf, len, "i%d is lost from the group and lives on as a zombie", x);
                break;
        case K_FENCE:
                snprintf(buf, len, "the zombie's commit is fenced");
                break;
        case K_COMMIT:
                snprintf(buf, len, "i%d commits", x);
                break;
        case K_TXABORT:
                snprintf(buf, len, "i%d's transaction aborts", x);
                break;
        case K_ROUTE:
                snprintf(buf, len, "p%d's owner routes its next record (or pauses it there)",
                         x);
                break;
        case K_PROMISE:
                snprintf(buf, len, "p%d's owner promises", x);
                break;
        case K_CLOSE:
                snprintf(buf, len, "p%d's owner closes it", x);
                break;
        case K_RESUME:
                snprintf(buf, len, "p%d's owner resumes it", x);
                break;
        case K_RESTART:
                snprintf(buf, len, "the map is cut over to green again (a new transition id)");
                break;
        case K_BEGIN:
                snprintf(buf, len, "p%d's owner begins the new transition for it", x);
                break;
        }
}

static void fmt_time(int8_t v, char *buf, size_t len) {
        if (v == N8)
                snprintf(buf, len, "-");
        else if (v == NOTH8)
                snprintf(buf, len, "nothing");
        else
                snprintf(buf, len, "%d", v);
}

static void describe_state(const st_t *s, FILE *f) {
        static const char *const stages[] = {"steady", "transitioning", "aborted",
                                             "transitioning again"};
        char a[16], b[16], c[16], d[16];
        fmt_time(s->map_t, a, sizeof a);
        fprintf(f, "      map %s T=%s%s%s; members", stages[version(s)], a,
                s->clear ? " CLEAR" : "", s->drained ? " drained" : "");
        for (int i = 0; i < NI; i++)
                if (s->member[i] || s->rkp[i]) {
                        fprintf(f, " i%d(%ssees %s", i, s->member[i] ? "" : "gone, ",
                                stages[s->view[i]]);
                        for (int k = 0; k < NP; k++)
                                if (s->rkp[i] >> k & 1)
                                        fprintf(f, ", p%d paused", k);
                        fprintf(f, ")");
                }
        fprintf(f, "\n");
        for (int k = 0; k < NP; k++) {
                const part_t *p = &s->p[k];
                if (!p->exists)
                        continue;
                fmt_time(p->prom, a, sizeof a);
                fmt_time(p->t, b, sizeof b);
                fmt_time(p->fprom, c, sizeof c);
                fmt_time(p->ft, d, sizeof d);
                fprintf(f,
                        "      p%d owner %s | committed off=%d hop=%d promise=%s T=%s%s%s | "
                        "in flight pos=%d hop=%d promise=%s T=%s%s%s%s |",
                        k,
                        p->owner == NOI ? "-" : (const char *[]){"i0", "i1", "i2"}[p->owner],
                        p->off, p->tx, a, b, p->closed ? " closed" : "",
                        p->aborted ? " aborted" : "", p->pos, p->ftx, c, d,
                        p->fclosed ? " closed" : "", p->faborted ? " aborted" : "",
                        p->zombie ? " zombie" : "");
                for (int r = 0; r < nrec[k]; r++)
                        fprintf(f, " %d:%s%s", recs[k][r], dest_names[p->dest[r]],
                                r < p->off   ? ""
                                : r < p->pos ? "?"
                                             : "");
                fprintf(f, "\n");
        }
}

/* Instances are interchangeable: all there is to one is which partitions
 * it owns, whether it is a member, what it has read of the map and
 * whether it is the zombie. Renaming them in the order of that signature
 * keeps one state of each class of renamings. to[i] is instance i's new
 * name. */
static void canonical(st_t *s, uint8_t to[NI]) {
        unsigned sig[NI];
        uint8_t order[NI];
        for (int i = 0; i < NI; i++) {
                unsigned owns = 0;
                for (int k = 0; k < NP; k++)
                        owns |= (unsigned)(s->p[k].exists && s->p[k].owner == i) << k;
                sig[i] = owns << 12 | (unsigned)s->rkp[i] << 8 | (unsigned)s->member[i] << 4 |
                         (unsigned)s->view[i] << 1 | (unsigned)(s->zinst == i);
                order[i] = (uint8_t)i;
        }
        for (int i = 1; i < NI; i++) /* insertion sort, highest signature first */
                for (int j = i; j > 0 && sig[order[j]] > sig[order[j - 1]]; j--) {
                        uint8_t x = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = x;
                }
        st_t was = *s;
        for (int r = 0; r < NI; r++) {
                to[order[r]] = (uint8_t)r;
                s->member[r] = was.member[order[r]];
                s->view[r] = was.view[order[r]];
                s->rkp[r] = was.rkp[order[r]];
        }
        for (int k = 0; k < NP; k++)
                if (s->p[k].owner < NI)
                        s->p[k].owner = to[s->p[k].owner];
        if (s->zinst < NI)
                s->zinst = to[s->zinst];
}

/* act, written with the canonical names, with the instances' own names
 * (from[c] is the instance named c). */
static act_t rename_act(act_t a, const uint8_t from[NI]) {
        switch ((kind_t)a.kind) {
        case K_READ:
        case K_JOIN:
        case K_STALE:
        case K_LEAVE:
        case K_CRASH:
        case K_LOST:
        case K_COMMIT:
        case K_TXABORT:
                a.a = from[a.a];
                break;
        case K_ASSIGN:
        case K_MOVE:
                a.b = from[a.b];
                break;
        default:
                break;
        }
        return a;
}

/* Prints the path from the initial state to state i, replayed with the
 * instances' own names. */
static void print_trace(const graph_t *g, uint32_t i, FILE *f) {
        uint32_t path[512];
        size_t n = 0;
        for (uint32_t at = i; n < 512; at = g->parent[at]) {
                path[n++] = at;
                if (at == 0)
                        break;
        }
        st_t s, c;
        uint8_t to[NI], from[NI];
        char what[96];
        initial(&s);
        for (size_t j = n; j-- > 0;) {
                if (path[j] == 0)
                        fprintf(f, "  start\n");
                else {
                        act_t a = rename_act(g->via[path[j]], from);
                        if (!step(&s, a))
                                fprintf(f, "  (the replay diverged)\n");
                        describe_act(a, what, sizeof what);
                        fprintf(f, "  %zu. %s\n", n - j - 1, what);
                }
                describe_state(&s, f);
                c = s;
                canonical(&c, to);
                for (int x = 0; x < NI; x++)
                        from[to[x]] = (uint8_t)x;
        }
}

/* Every state reachable from the initial one, breadth first, each checked
 * when first seen. False, with the trace printed and the reason in msg, at
 * the first violation. */
static bool explore(graph_t *g, const act_t *acts, size_t nacts, char *msg, size_t len) {
        st_t s0, s, next;
        bool added;
        uint8_t to[NI];
        initial(&s0);
        canonical(&s0, to);
        intern(g, &s0, &added);
        g->parent[0] = 0;
        for (size_t i = 0; i < g->n; i++) {
                s = g->keys[i];
                g->first_edge[i] = (uint32_t)g->nedges;
                for (size_t a = 0; a < nacts; a++) {
                        next = s;
                        if (!step(&next, acts[a]))
                                continue;
                        canonical(&next, to);
                        uint32_t j = intern(g, &next, &added);
                        g->edges =
                                grow(g->edges, &g->edge_cap, g->nedges + 1, sizeof *g->edges);
                        g->edges[g->nedges++] = j;
                        if (!added)
                                continue;
                        g->parent[j] = (uint32_t)i;
                        g->via[j] = acts[a];
                        if (violated(&next, msg, len)) {
                                fprintf(stderr, "agree model: violation: %s\n", msg);
                                print_trace(g, j, stderr);
                                return false;
                        }
                }
        }
        g->first_edge[g->n] = (uint32_t)g->nedges;
        return true;
}

/* Marks every state from which a state satisfying goal is reachable;
 * returns the first state that cannot reach one, or UINT32_MAX. */
static uint32_t unreachable(const graph_t *g, bool (*goal)(const st_t *),
                            bool (*applies)(const st_t *)) {
        size_t n = g->n;
        uint32_t *rfirst = calloc(n + 1, sizeof *rfirst);
        uint32_t *redges = malloc((g->nedges ? g->nedges : 1) * sizeof *redges);
        uint32_t *queue = malloc(n * sizeof *queue);
        bool *good = calloc(n, sizeof *good);
        cr_assert(rfirst && redges && queue && good);
        for (size_t e = 0; e < g->nedges; e++)
                rfirst[g->edges[e] + 1]++;
        for (size_t i = 0; i < n; i++)
                rfirst[i + 1] += rfirst[i];
        uint32_t *fill = malloc((n + 1) * sizeof *fill);
        cr_assert_not_null(fill);
        memcpy(fill, rfirst, (n + 1) * sizeof *fill);
        for (size_t i = 0; i < n; i++)
                for (uint32_t e = g->first_edge[i]; e < g->first_edge[i + 1]; e++)
                        redges[fill[g->edges[e]]++] = (uint32_t)i;
        size_t head = 0, tail = 0;
        st_t s;
        for (size_t i = 0; i < n; i++) {
                s = g->keys[i];
                if (goal(&s)) {
                        good[i] = true;
                        queue[tail++] = (uint32_t)i;
                }
        }
        while (head < tail) {
                uint32_t i = queue[head++];
                for (uint32_t e = rfirst[i]; e < rfirst[i + 1]; e++)
                        if (!good[redges[e]]) {
                                good[redges[e]] = true;
                                queue[tail++] = redges[e];
                        }
        }
        uint32_t stuck = UINT32_MAX;
        for (size_t i = 0; i < n && stuck == UINT32_MAX; i++) {
                if (good[i])
                        continue;
                s = g->keys[i];
                if (applies(&s))
                        stuck = (uint32_t)i;
        }
        free(rfirst);
        free(redges);
        free(queue);
        free(good);
        free(fill);
        return stuck;
}

static bool always(const st_t *s) {
        (void)s;
        return true;
}

static bool transitioning(const st_t *s) {
        return s->stage == M_TRANS;
}

static void free_graph(graph_t *g) {
        free(g->keys);
        free(g->parent);
        free(g->via);
        free(g->first_edge);
        free(g->edges);
        free(g->table);
}

/* What a configuration must have reached, so a model that silently
 * stopped short cannot pass. */
enum {
        SAW_CLEAR = 1,
        SAW_CONFLICT = 2,
        SAW_GROWN_AFTER_T = 4,
        SAW_ABORT = 8,
        SAW_LEFT_PAUSED = 16, /* a partition paused in an instance it moved away from,
                                 with records still to read */
        SAW_LAGGING = 32,     /* a member reading the map from before the transition
                                 owns a partition the transition runs on */
        SAW_AGAIN = 64,       /* the transition cut over again has a promise committed
                                 while a line of the aborted one still holds its T;
                                 and, elsewhere, its own T */
};

/* Explores configuration b. With fails NULL every invariant must hold and
 * the states in must_see be reached; else the model must find a fault
 * whose message contains fails (a fault put into the proxy's decisions on
 * purpose: the model is able to see it). */
static void run_model_as(const char *name, budget_t b, int must_see, const char *fails) {
        act_t acts[MAX_ACTS];
        size_t nacts = all_actions(acts);
        graph_t g = {0};
        char msg[256] = "";
        clock_t t0 = clock();
        cfg = b;

        bool ok = explore(&g, acts, nacts, msg, sizeof msg);
        /* Liveness: from every state every record can still be committed
         * under one T (or the abort); and while the map transitions,
         * CLEAR_TO_TEARDOWN can still come (or a person must mend a
         * conflicting T). */
        uint32_t stuck = ok ? unreachable(&g, finished, always) : UINT32_MAX;
        if (stuck != UINT32_MAX) {
                print_trace(&g, stuck, stderr);
                snprintf(msg, sizeof msg, "liveness: state %u cannot finish", stuck);
                ok = false;
        }
        stuck = ok ? unreachable(&g, cleared, transitioning) : UINT32_MAX;
        if (stuck != UINT32_MAX) {
                print_trace(&g, stuck, stderr);
                snprintf(msg, sizeof msg,
                         "liveness: state %u can never reach CLEAR_TO_TEARDOWN", stuck);
                ok = false;
        }

        size_t with_t = 0, clear = 0, conflicts = 0, grown_after_t = 0, holds = 0, abort = 0,
               left_paused = 0, lagging = 0, again = 0, t_again = 0;
        for (size_t i = 0; ok && i < g.n; i++) {
                const st_t *s = &g.keys[i];
                with_t += pipeline_t(s) != N8;
                clear += s->clear;
                conflicts += map_verdict(s) == GP_AGREE_MAP_CONFLICT;
                abort += s->stage == M_ABORTED;
                t_again += s->hop && s->tk[1] != N8;
                if (s->hop && running_at(s, 1))
                        for (int k = 0; k < NP; k++)
                                if (s->p[k].exists && s->p[k].tx == 0 && s->p[k].t != N8) {
                                        again++;
                                        break;
                                }
                grown_after_t +=
                        s->p[GROW].exists && s->p[GROW].t != N8 && s->p[GROW].prom == N8;
                for (int k = 0; k < NP; k++) {
                        const part_t *p = &s->p[k];
                        lagging += owned(s, k) && s->stage == M_TRANS &&
                                   s->view[p->owner] == M_STEADY && running(s);
                        for (int j = 0; j < NI; j++)
                                left_paused += s->member[j] && p->owner != j &&
                                               (s->rkp[j] >> k & 1) && p->pos < nrec[k];
                        holds += p->exists && p->pos < nrec[k] && p->fprom != N8 &&
                                 p->ft == N8 && recs[k][p->pos] >= wide(p->fprom);
                }
        }
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        fprintf(stderr,
                "agree model %s: %zu states, %zu transitions, %.1f s; %zu with T, %zu with "
                "CLEAR_TO_TEARDOWN, %zu with another T in the map, %zu with the transition "
                "aborted, %zu where p%d appeared after T, %zu partitions holding, %zu "
                "paused where they no longer are, %zu owned by a member behind the map, %zu "
                "with the transition cut over again promised beside a line of the aborted "
                "one's T, %zu with its own T\n",
                name, g.n, g.nedges, secs, with_t, clear, conflicts, abort, grown_after_t,
                GROW, holds, left_paused, lagging, again, t_again);
        cr_log_info("agree model %s: %zu states, %zu transitions", name, g.n, g.nedges);
        free_graph(&g);
        if (fails) {
                cr_assert(!ok && strstr(msg, fails),
                          "agree model %s: the fault put in was not found (%s)", name,
                          ok ? "every state passed" : msg);
                fprintf(stderr, "agree model %s: found as it must be: %s\n", name, msg);
                return;
        }
        cr_assert(ok, "agree model %s: %s (trace above)", name, msg);
        cr_expect_gt(with_t, 0);
        cr_expect_gt(holds, 0);
        cr_expect(!(must_see & SAW_CLEAR) || clear > 0);
        cr_expect(!(must_see & SAW_CONFLICT) || conflicts > 0);
        cr_expect(!(must_see & SAW_GROWN_AFTER_T) || grown_after_t > 0);
        cr_expect(!(must_see & SAW_ABORT) || abort > 0);
        cr_expect(!(must_see & SAW_LEFT_PAUSED) || left_paused > 0);
        cr_expect(!(must_see & SAW_LAGGING) || lagging > 0);
        cr_expect(!(must_see & SAW_AGAIN) || (again > 0 && t_again > 0));
}

static void run_model(const char *name, budget_t b, int must_see) {
        run_model_as(name, b, must_see, NULL);
}

/* The faults of one path come in small sets: each set alone keeps the
 * model to a few million states (all of them at once would be hundreds of
 * millions), and every pair that interacts in the rule (a move or a crash
 * with a promise, a zombie with a leave, a hand edit with an abort of the
 * transaction, the transition's abort, the source growing) is one set. */
Test(agree_model, moves_and_crashes, .timeout = 240) {
        run_model("moves+crashes", (budget_t){.move = 1, .crash = 1}, SAW_CLEAR);
}

Test(agree_model, zombie_and_leave, .timeout = 240) {
        run_model("zombie+leave", (budget_t){.lost = 1, .leave = 1}, SAW_CLEAR);
}

Test(agree_model, join_and_leave, .timeout = 240) {
        run_model("join+leave", (budget_t){.join = 1, .leave = 1}, SAW_CLEAR);
}

Test(agree_model, map_edits_and_aborted_transactions, .timeout = 240) {
        run_model("edits+txabort", (budget_t){.txabort = 1, .edit = 2, .no_pause = true},
                  SAW_CLEAR | SAW_CONFLICT);
}

Test(agree_model, transition_aborted_while_partitions_move, .timeout = 240) {
        run_model("mabort+move", (budget_t){.mabort = 1, .move = 1}, SAW_CLEAR | SAW_ABORT);
}

Test(agree_model, source_grows, .timeout = 240) {
        run_model("grow", (budget_t){.grow = 1, .no_pause = true},
                  SAW_CLEAR | SAW_GROWN_AFTER_T);
}

/* A partition paused at its promise moves away and comes back to the
 * instance that paused it (two moves): the consumer kept the pause, and
 * the proxy resumes whatever it is assigned. */
Test(agree_model, pause_and_return, .timeout = 240) {
        run_model("pause+return", (budget_t){.move = 2}, SAW_CLEAR | SAW_LEFT_PAUSED);
}

/* The same without the resume on assign: the returned partition is never
 * read again. */
Test(agree_model, pause_kept_is_found, .timeout = 240) {
        run_model_as("pause kept", (budget_t){.move = 2, .keep_pause = true}, 0,
                     "cannot finish");
}

/* A member joins with a copy of the map from before the transition and is
 * given a partition of it: its gate (gp_gate_step) takes no step from a map
 * behind its checkpoints' transition. */
Test(agree_model, lagging_map, .timeout = 240) {
        run_model("lagging map", (budget_t){.stale = 1, .move = 1}, SAW_CLEAR | SAW_LAGGING);
}

/* The same with maps that carry no transition id: the lagging copy aborts
 * the transition on the partition it was given. */
Test(agree_model, lagging_map_without_ids_is_found, .timeout = 240) {
        run_model_as("lagging map, no ids", (budget_t){.stale = 1, .move = 1, .no_tid = true},
                     0, "cannot finish");
}

/* Aborted, then cut over again between the same colours (a new transition
 * id), members reading the maps in between or not: lines of the aborted
 * transition give the new one nothing (no promise, no T, no close), a
 * member that closed the old one and never read its abort takes it from
 * the new map (gp_gate_step), and the census (gp_agree_settled) holds the
 * new one's beginning back while a line still splits the old one. */
Test(agree_model, cut_over_again, .timeout = 240) {
        run_model("again", (budget_t){.mabort = 1, .restart = 1, .no_pause = true},
                  SAW_CLEAR | SAW_ABORT | SAW_AGAIN);
}

/* The same with lines and maps without transition ids: the aborted
 * transition's T is taken for the new one's. */
Test(agree_model, cut_over_again_without_ids_is_found, .timeout = 240) {
        run_model_as("again, no ids",
                     (budget_t){.mabort = 1, .restart = 1, .no_pause = true, .no_tid = true},
                     0, "(c)");
}
