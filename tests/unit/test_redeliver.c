/* tests/unit/test_redeliver.c: the re-delivery after an abort past T
 * (gate/redeliver.h): where each partition's routing changed, which
 * records a re-delivery sends, what retention took, the new transition
 * that waits for it. */
#include <criterion/criterion.h>

#include "gate/redeliver.h"

#define T 1000

static gp_gate_t gate(gp_phase_t ph, gp_colour_t o, gp_colour_t n, int64_t t) {
        return (gp_gate_t){.phase = ph, .old_c = o, .new_c = n, .cutoff = t, .cutoff_wall = 1};
}

static const gp_gate_conf_t conf = {
        .out_of_orderness_ms = 0, .idle_ms = 10000, .align_ms = 1, .lateness_ms = 0};

/* blue -> green split at offset 100, closed at 150, aborted to blue at 200. */
static gp_part_t through_abort(gp_gate_t *ab) {
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_gate_t w = gate(GP_PHASE_WAITING, GP_BLUE, GP_GREEN, GP_TS_NONE);
        gp_gate_t s = gate(GP_PHASE_SPLIT, GP_BLUE, GP_GREEN, T);
        gp_gate_t c = gate(GP_PHASE_CLOSED, GP_BLUE, GP_GREEN, T);
        *ab = gate(GP_PHASE_ABORTED, GP_BLUE, GP_BLUE, T);
        cr_assert(!gp_redeliver_mark(&p, &w, &w, 50, true));
        cr_assert_eq(p.sp, -1, "no split while waiting");
        cr_assert(!gp_redeliver_mark(&p, &w, &s, 100, true));
        cr_assert(!gp_redeliver_mark(&p, &s, &s, 120, true));
        cr_assert(!gp_redeliver_mark(&p, &s, &c, 150, true));
        cr_assert(!gp_redeliver_mark(&p, &c, &c, 170, true));
        cr_assert(gp_redeliver_mark(&p, &c, ab, 200, true), "the abort begins a re-delivery");
        return p;
}

Test(redeliver, marks_where_routing_changed) {
        gp_gate_t ab;
        gp_part_t p = through_abort(&ab);
        cr_assert_eq(p.sp, 100);
        cr_assert_eq(p.cp, 150);
        cr_assert_eq(p.ap, 200);
        cr_assert(p.ro);
        /* The same abort seen again (a restart's first step) marks nothing new. */
        cr_assert(!gp_redeliver_mark(&p, &ab, &ab, 120, true));
        cr_assert_eq(p.ap, 200);
}

Test(redeliver, sends_exactly_what_went_to_the_aborted_colour) {
        gp_gate_t ab;
        gp_part_t p = through_abort(&ab);
        /* split: ts >= T went to green; ts < T to blue; unreadable to the DLQ. */
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 100, T), GP_RD_SEND);
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 101, T - 1), GP_RD_SKIP);
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 102, GP_TS_NONE), GP_RD_SKIP);
        /* closed (from 150): late records went to green too (gate.late=new) ... */
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 150, T - 1), GP_RD_SEND);
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 151, T + 5), GP_RD_SEND);
        /* ... or to the DLQ (gate.late=dlq): the survivor does not get them. */
        gp_gate_conf_t dlq = conf;
        dlq.late_to_dlq = true;
        cr_assert_eq(gp_redeliver_record(&p, &ab, &dlq, 152, T - 1), GP_RD_SKIP);
        /* an unreadable time counted as older than T (gate.bad-record=old) */
        gp_gate_conf_t bad_old = conf;
        bad_old.bad_route_old = true;
        cr_assert_eq(gp_redeliver_record(&p, &ab, &bad_old, 120, GP_TS_NONE), GP_RD_SKIP);
        cr_assert_eq(gp_redeliver_record(&p, &ab, &bad_old, 160, GP_TS_NONE), GP_RD_SEND);
        cr_assert_eq(p.rd[0], 4u, "sent: %llu", (unsigned long long)p.rd[0]);
        cr_assert(p.ro);
        /* the first record at ap ends it: routed as usual */
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 200, T), GP_RD_ROUTE);
        cr_assert(!p.ro);
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 150, T), GP_RD_ROUTE,
                     "nothing is sent once it ended");
        cr_assert_eq(p.rd[0], 4u);
}

Test(redeliver, settles_at_its_end) {
        gp_gate_t ab;
        gp_part_t p = through_abort(&ab);
        cr_assert(!gp_redeliver_settle(&p, 199));
        cr_assert(p.ro);
        cr_assert(gp_redeliver_settle(&p, 200));
        cr_assert(!p.ro);
        cr_assert(!gp_redeliver_settle(&p, 200), "ends once");
}

Test(redeliver, only_when_the_old_colour_survives) {
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_gate_t s = gate(GP_PHASE_SPLIT, GP_BLUE, GP_GREEN, T);
        gp_gate_t to_green = gate(GP_PHASE_ABORTED, GP_GREEN, GP_GREEN, T);
        gp_gate_t to_blue = gate(GP_PHASE_ABORTED, GP_BLUE, GP_BLUE, T);
        gp_redeliver_mark(&p, &s, &s, 10, true);
        cr_assert(!gp_redeliver_mark(&p, &s, &to_green, 20, true),
                  "green survives: it has every record >= T already");
        cr_assert(!p.ro);
        gp_part_init(&p, 0);
        gp_redeliver_mark(&p, &s, &s, 10, true);
        cr_assert(!gp_redeliver_mark(&p, &s, &to_blue, 20, false),
                  "gate.abort.redeliver=false");
        cr_assert(!p.ro);
        gp_part_init(&p, 0);
        gp_redeliver_mark(&p, &s, &s, 10, true);
        cr_assert(!gp_redeliver_mark(&p, &s, &to_blue, 10, true),
                  "nothing routed since the split: nothing to read again");
        cr_assert_eq(p.ap, 10);
        cr_assert(!p.ro);
        /* An abort before T owes nothing. */
        gp_gate_t w = gate(GP_PHASE_WAITING, GP_BLUE, GP_GREEN, GP_TS_NONE);
        gp_part_init(&p, 0);
        gp_redeliver_mark(&p, &w, &w, 10, true);
        cr_assert(!gp_redeliver_mark(&p, &w, &to_blue, 20, true));
        cr_assert_eq(p.ap, -1);
}

Test(redeliver, a_partition_closed_by_its_own_watermark) {
        gp_part_t p;
        gp_part_init(&p, 0);
        gp_gate_t s = gate(GP_PHASE_SPLIT, GP_BLUE, GP_GREEN, T);
        gp_gate_t ab = gate(GP_PHASE_ABORTED, GP_BLUE, GP_BLUE, T);
        gp_redeliver_mark(&p, &s, &s, 10, true);
        p.closed = true; /* gate/agree.h: closed while the pipeline splits */
        gp_redeliver_mark(&p, &s, &s, 30, true);
        cr_assert_eq(p.cp, 30);
        cr_assert(gp_redeliver_mark(&p, &s, &ab, 40, true));
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 29, T - 1), GP_RD_SKIP);
        cr_assert_eq(gp_redeliver_record(&p, &ab, &conf, 30, T - 1), GP_RD_SEND);
}

Test(redeliver, retention_loss_is_counted) {
        gp_gate_t ab;
        gp_part_t p = through_abort(&ab);
        cr_assert_eq(gp_redeliver_from(&p, 100, 0), 100, "all there");
        cr_assert_eq(gp_redeliver_from(&p, 100, -1), 100, "unknown: read from where it is");
        cr_assert_eq(p.rd[1], 0u);
        cr_assert_eq(gp_redeliver_from(&p, 100, 130), 130);
        cr_assert_eq(p.rd[1], 30u, "offsets 100..129 lost");
        cr_assert(p.ro);
        cr_assert_eq(gp_redeliver_from(&p, 130, 500), 200, "nothing left below ap");
        cr_assert_eq(p.rd[1], 100u);
        cr_assert(!p.ro, "the re-delivery ends");
}

Test(redeliver, a_new_transition_starts_afresh) {
        gp_gate_t ab;
        gp_part_t p = through_abort(&ab);
        gp_redeliver_settle(&p, 200);
        gp_gate_t w = gate(GP_PHASE_WAITING, GP_BLUE, GP_GREEN, GP_TS_NONE);
        gp_redeliver_mark(&p, &ab, &w, 300, true);
        cr_assert(p.sp == -1 && p.cp == -1 && p.ap == -1 && !p.rd[0], "forgotten");
        gp_gate_t s2 = gate(GP_PHASE_SPLIT, GP_BLUE, GP_GREEN, 2 * T);
        gp_redeliver_mark(&p, &w, &s2, 320, true);
        cr_assert_eq(p.sp, 320);
}

/* The gate holds a new transition while a partition re-delivers. */
Test(redeliver, a_new_transition_waits_for_it) {
        gp_gate_t ab;
        gp_part_t p = through_abort(&ab);
        gp_part_t *parts[] = {&p};
        const gp_part_t *cparts[] = {&p};
        gp_control_t c = {.active = GP_GREEN,
                          .stage = GP_STAGE_TRANSITIONING,
                          .is_first = false,
                          .wm_stage = GP_WMS_NONE,
                          .toggle = GP_TS_NONE,
                          .req_cutoff = GP_TS_NONE,
                          .tid = ab.tid + 1};
        gp_wm_view_t wv;
        gp_gate_watermark(cparts, 1, &conf, 5, &wv);
        gp_step_t out;
        gp_gate_t g = ab;
        cr_assert_eq(gp_gate_step(&g, parts, 1, &c, &wv, &conf, 5, &out), 0);
        cr_assert(out.events & GP_EV_REFUSED);
        cr_assert(strstr(out.err, "re-deliver"), "%s", out.err);
        cr_assert_eq(g.phase, GP_PHASE_ABORTED);
        gp_redeliver_settle(&p, 200);
        cr_assert_neq(gp_gate_step(&g, parts, 1, &c, &wv, &conf, 5, &out), 0);
        cr_assert_eq(g.phase, GP_PHASE_WAITING);
}
