/* tests/unit/test_hoptime.c: a hand-over's time (gate/hoptime.h) and the
 * close rule that fired (gp_gate_close_rule, gp_agree_part_close_rule):
 * the instants set once, the phases, the value's round trip, bad values
 * refused with their reason, the description, and a table of watermark
 * views -> rule. Uses gate/ only. */
#include <criterion/criterion.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/gate.h"
#include "gate/hoptime.h"

#define SEEN 1733150000123LL

static gp_hop_t full(void) {
        gp_hop_t h;
        gp_hoptime_start(&h, SEEN);
        cr_assert(gp_hoptime_mark(&h, &h.t, SEEN + 412));
        cr_assert(gp_hoptime_closed(&h, GP_CLOSE_WATERMARK, 0, 2, SEEN + 6612));
        cr_assert(gp_hoptime_mark(&h, &h.drained, SEEN + 10712));
        cr_assert(gp_hoptime_mark(&h, &h.clear, SEEN + 10813));
        return h;
}

Test(hoptime, instants_set_once_and_only_in_a_hop) {
        gp_hop_t h;
        gp_hoptime_init(&h);
        cr_assert_not(gp_hoptime_mark(&h, &h.t, 5), "no hop: nothing is recorded");
        cr_assert_eq(h.t, GP_TS_NONE);
        cr_assert_not(gp_hoptime_closed(&h, GP_CLOSE_IDLE, 1, 2, 5));
        gp_hoptime_start(&h, 100);
        cr_assert(gp_hoptime_mark(&h, &h.t, 150));
        cr_assert_not(gp_hoptime_mark(&h, &h.t, 170), "the first instant stays");
        cr_assert_eq(h.t, 150);
        cr_assert_not(gp_hoptime_closed(&h, GP_CLOSE_NONE, 0, 2, 200), "no rule, no close");
        cr_assert(gp_hoptime_closed(&h, GP_CLOSE_IDLE, 1, 2, 300));
        cr_assert_not(gp_hoptime_closed(&h, GP_CLOSE_FORCED, 0, 2, 400));
        cr_assert_eq(h.rule, GP_CLOSE_IDLE);
        cr_assert_eq(h.closed, 300);
        gp_hoptime_start(&h, 1000);
        cr_assert_eq(h.t, GP_TS_NONE, "a new hop starts empty");
        cr_assert_eq(h.rule, GP_CLOSE_NONE);
}

Test(hoptime, phases_sum_to_the_whole) {
        gp_hop_t h = full();
        int64_t ph[4];
        gp_hoptime_phases(&h, ph);
        cr_assert_eq(ph[0], 412);
        cr_assert_eq(ph[1], 6200);
        cr_assert_eq(ph[2], 4100);
        cr_assert_eq(ph[3], 101);
        cr_assert_eq(ph[0] + ph[1] + ph[2] + ph[3], h.clear - h.seen);
        h.t = GP_TS_NONE;
        gp_hoptime_phases(&h, ph);
        cr_assert(ph[0] == -1 && ph[1] == -1, "a missing instant leaves both sides unknown");
        cr_assert_eq(ph[2], 4100);
        h = full();
        h.t = h.closed + 5; /* written on the status thread after the close */
        gp_hoptime_phases(&h, ph);
        cr_assert_eq(ph[1], 0, "a negative span is 0");
        cr_assert_eq(ph[2], 4100 - 5, "the drain runs from T's write, the later instant");
        cr_assert_eq(ph[0] + ph[1] + ph[2] + ph[3], h.clear - h.seen,
                     "the phases still sum to the whole");
}

Test(hoptime, round_trip) {
        gp_hop_t h = full(), back;
        char v[GP_HOP_VALUE_MAX], err[200];
        gp_hoptime_format(&h, v, sizeof v);
        cr_assert_str_eq(v, "hop1 seen=1733150000123 t=412 close=6612 rule=watermark:0/2 "
                            "drain=10712 clear=10813");
        cr_assert_eq(gp_hoptime_parse(&back, v, strlen(v), err, sizeof err), 0, "%s", err);
        cr_assert_eq(memcmp(&back, &h, sizeof h), 0);

        gp_hoptime_start(&h, SEEN);
        gp_hoptime_format(&h, v, sizeof v);
        cr_assert_str_eq(v, "hop1 seen=1733150000123 t=- close=- rule=- drain=- clear=-");
        cr_assert_eq(gp_hoptime_parse(&back, v, strlen(v), err, sizeof err), 0, "%s", err);
        cr_assert_eq(back.seen, SEEN);
        cr_assert_eq(back.clear, GP_TS_NONE);

        gp_hoptime_init(&h);
        gp_hoptime_format(&h, v, sizeof v);
        cr_assert_str_eq(v, "", "no hop: an empty value");
        cr_assert_eq(gp_hoptime_parse(&back, "", 0, err, sizeof err), 0);
        cr_assert_eq(back.seen, GP_TS_NONE);

        /* The widest value fits. */
        h.seen = INT64_MIN + 1;
        h.t = h.closed = h.drained = h.clear = INT64_MAX;
        h.rule = GP_CLOSE_WATERMARK;
        h.idle = h.parts = 1000000;
        gp_hoptime_format(&h, v, sizeof v);
        cr_assert_lt(strlen(v), GP_HOP_VALUE_MAX - 1);
        cr_assert_eq(gp_hoptime_parse(&back, v, strlen(v), err, sizeof err), 0, "%s: %s", v,
                     err);
}

typedef struct {
        const char *in;
        const char *err; /* a substring of the reason */
} bad_t;

static const bad_t bads[] = {
        {"hop2 seen=1 t=- close=- rule=- drain=- clear=-", "does not start with hop1"},
        {"hop1", "seen= is missing"},
        {"hop1 seen=x t=- close=- rule=- drain=- clear=-", "seen= is not epoch ms"},
        {"hop1 seen=1 t=-5 close=- rule=- drain=- clear=-", "t= is not a number"},
        {"hop1 seen=1 t=01 close=- rule=- drain=- clear=-", "t= is not a number"},
        {"hop1 seen=1 t=-0 close=- rule=- drain=- clear=-", "t= is not a number"},
        {"hop1 seen=-0 t=- close=- rule=- drain=- clear=-", "seen= is not epoch ms"},
        {"hop1 seen=1 close=- t=- rule=- drain=- clear=-", "t= was expected"},
        {"hop1 seen=1 t=- close=- rule=- drain=- clear=- x=1", "something follows"},
        {"hop1 seen=1 t=- close=- rule=- drain=- clear=-  ", "something follows"},
        {"hop1 seen=1 t=- close=5 rule=- drain=- clear=-", "both be set"},
        {"hop1 seen=1 t=- close=- rule=idle:0/1 drain=- clear=-", "both be set"},
        {"hop1 seen=1 t=- close=5 rule=fast:0/1 drain=- clear=-", "names no close rule"},
        {"hop1 seen=1 t=- close=5 rule=idle drain=- clear=-", "RULE:IDLE/PARTS"},
        {"hop1 seen=1 t=- close=5 rule=idle:3/2 drain=- clear=-", "IDLE/PARTS counts"},
        {"hop1 seen=1 t=- close=5 rule=idle:/2 drain=- clear=-", "IDLE/PARTS counts"},
        {"hop1 seen=9223372036854775807 t=1 close=- rule=- drain=- clear=-", "too large"},
        {"hop1  seen=1 t=- close=- rule=- drain=- clear=-", "seen= was expected"},
        {"hop1 seen=1 t=- close=- rule=- drain=- clear=", "clear= is not a number"},
        {"hop1 seen=-9223372036854775808 t=- close=- rule=- drain=- clear=-", "epoch ms"},
};

Test(hoptime, bad_values_refused_with_a_reason) {
        for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
                gp_hop_t out = full(), was = out;
                char err[200] = "";
                int rc = gp_hoptime_parse(&out, bads[i].in, strlen(bads[i].in), err,
                                          sizeof err);
                cr_expect_eq(rc, -1, "accepted: %s", bads[i].in);
                cr_expect(strstr(err, bads[i].err) != NULL, "%s: '%s' does not say '%s'",
                          bads[i].in, err, bads[i].err);
                cr_expect_eq(memcmp(&out, &was, sizeof out), 0, "%s: output touched",
                             bads[i].in);
        }
        /* Bytes past n are not read; a NUL inside is refused. */
        gp_hop_t out;
        char err[200];
        const char *v = "hop1 seen=1 t=- close=- rule=- drain=- clear=-";
        char nul[64];
        memcpy(nul, v, strlen(v));
        nul[12] = '\0';
        cr_expect_eq(gp_hoptime_parse(&out, nul, strlen(v), err, sizeof err), -1);
        char big[400];
        memset(big, 'a', sizeof big);
        cr_expect_eq(gp_hoptime_parse(&out, big, sizeof big, err, sizeof err), -1);
        cr_expect(strstr(err, "longer than") != NULL, "%s", err);
}

Test(hoptime, described_for_people) {
        gp_hop_t h = full();
        char d[600];
        gp_hoptime_describe(&h, d, sizeof d);
        cr_assert_str_eq(d, "T written 0.4 s after TRANSITIONING; old side closed 6.2 s later "
                            "(watermark >= T + lateness, 2 partition(s) all active); drained "
                            "4.1 s later; clear written 0.1 s later; 10.8 s in all");
        h.rule = GP_CLOSE_IDLE;
        h.idle = 1;
        h.drained = h.clear = GP_TS_NONE;
        gp_hoptime_describe(&h, d, sizeof d);
        cr_assert_str_eq(d, "T written 0.4 s after TRANSITIONING; old side closed 6.2 s later "
                            "(idle: 1 of 2 partition(s) idle past gate.watermark.idle.ms, not "
                            "waited for); waiting: the old group to drain");
        h = full();
        h.t = GP_TS_NONE;
        gp_hoptime_describe(&h, d, sizeof d);
        cr_assert(strstr(d, "T written not seen by this proxy; old side closed 6.6 s after "
                            "TRANSITIONING") != NULL,
                  "%s", d);
        gp_hoptime_init(&h);
        gp_hoptime_describe(&h, d, sizeof d);
        cr_assert_str_eq(d, "no hand-over seen");
        char small[8];
        h = full();
        gp_hoptime_describe(&h, small, sizeof small);
        cr_assert_eq(strlen(small), 7, "cut, never past the buffer");
}

/* ---- the rule that fired ------------------------------------------------- */

static const gp_gate_conf_t conf = {
        .out_of_orderness_ms = 0, .idle_ms = 1000, .align_ms = 1, .lateness_ms = 100};

typedef struct {
        const char *what;
        gp_wm_view_t wv;
        int64_t now;
        gp_close_rule_t rule;
} rule_row_t;

/* T = 10000 chosen at wall 50000. */
static const rule_row_t rules[] = {
        {"W below T + lateness", {.wm = 10099, .last_record = 50500}, 50600, GP_CLOSE_NONE},
        {"W at T + lateness, every partition active",
         {.wm = 10100, .last_record = 50500},
         50600,
         GP_CLOSE_WATERMARK},
        {"W at T + lateness over the active ones, one idle",
         {.wm = 10100, .last_record = 50500, .idle = 1},
         50600,
         GP_CLOSE_IDLE},
        {"all idle, not long enough since T",
         {.wm = 9000, .all_idle = true, .idle = 2, .last_record = 49000},
         51099,
         GP_CLOSE_NONE},
        {"all idle for idle + lateness since T",
         {.wm = 9000, .all_idle = true, .idle = 2, .last_record = 49000},
         51100,
         GP_CLOSE_IDLE},
        {"all idle since a record after T",
         {.wm = 9000, .all_idle = true, .idle = 2, .last_record = 50500},
         51599,
         GP_CLOSE_NONE},
        {"W unknown", {.wm = GP_TS_NONE, .last_record = 50500}, 60000, GP_CLOSE_NONE},
};

Test(hoptime, gate_close_rule) {
        gp_gate_t g;
        gp_gate_init(&g, GP_GREEN);
        g.phase = GP_PHASE_SPLIT;
        g.old_c = GP_BLUE;
        g.cutoff = 10000;
        g.cutoff_wall = 50000;
        for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
                const rule_row_t *r = &rules[i];
                gp_close_rule_t got = gp_gate_close_rule(&g, &r->wv, &conf, r->now);
                cr_expect_eq(got, r->rule, "%s: %s, not %s", r->what, gp_close_rule_name(got),
                             gp_close_rule_name(r->rule));
                cr_expect_eq(gp_gate_close_due(&g, &r->wv, &conf, r->now),
                             r->rule != GP_CLOSE_NONE, "%s: close_due disagrees", r->what);
        }
        g.phase = GP_PHASE_WAITING;
        cr_expect_eq(gp_gate_close_rule(&g, &rules[1].wv, &conf, rules[1].now), GP_CLOSE_NONE,
                     "no rule outside the split");
}

Test(hoptime, watermark_counts_idle_partitions) {
        gp_part_t a, b, c;
        gp_part_init(&a, 1000);
        gp_part_init(&b, 1000);
        gp_part_init(&c, 5000);
        a.hi = b.hi = c.hi = 20000;
        const gp_part_t *ps[] = {&a, &b, &c};
        gp_wm_view_t wv;
        gp_gate_watermark(ps, 3, &conf, 5500, &wv);
        cr_assert_eq(wv.idle, 2);
        cr_assert_not(wv.all_idle);
        gp_gate_watermark(ps, 3, &conf, 5800, &wv);
        cr_assert_eq(wv.idle, 2);
        gp_gate_watermark(ps, 3, &conf, 6000, &wv);
        cr_assert_eq(wv.idle, 3);
        cr_assert(wv.all_idle);
}

Test(hoptime, partition_close_rule) {
        gp_part_t p;
        gp_part_init(&p, 50500);
        p.hi = 10100;
        cr_expect_eq(gp_agree_part_close_rule(&p, 10000, 50000, &conf, 50600),
                     GP_CLOSE_WATERMARK);
        p.hi = 10099;
        cr_expect_eq(gp_agree_part_close_rule(&p, 10000, 50000, &conf, 51599), GP_CLOSE_NONE);
        cr_expect_eq(gp_agree_part_close_rule(&p, 10000, 50000, &conf, 51600), GP_CLOSE_IDLE);
        cr_expect_eq(gp_agree_part_close_rule(&p, GP_TS_NONE, 50000, &conf, 99999),
                     GP_CLOSE_NONE);
        cr_expect(gp_agree_part_close_due(&p, 10000, 50000, &conf, 51600));
}
