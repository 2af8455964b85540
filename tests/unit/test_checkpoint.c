/* tests/unit/test_checkpoint.c: the gate state <-> checkpoint line (docs/DESIGN.md,
 * The checkpoint: the truth about decisions made). Round trips
 * of many states (gp3 with a settings fingerprint, gp2 without), every
 * malformed line refused, truncation, buffer sizes, gp1 and gp2 lines read.
 * Uses gate/ only.
 *
 * (A line cut inside its last number still decodes: the format has no end
 * marker. Kafka refuses oversized commit metadata rather than truncating
 * it, so the prefixes tested are those up to the last number.) */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "gate/fingerprint.h"

#define NONE GP_TS_NONE
#define MIN1 (INT64_MIN + 1)
#define B    GP_BLUE
#define G    GP_GREEN

typedef struct {
        const char *row;
        gp_gate_t g;
        gp_part_t p;
} state_t;

static state_t st(const char *row, int64_t seq, gp_phase_t ph, gp_colour_t o, gp_colour_t n,
                  int64_t t, int64_t tw, int64_t hi, uint64_t n0, uint64_t n1, uint64_t n2,
                  uint64_t late, uint64_t s0, uint64_t s1) {
        state_t s = {.row = row};
        s.g = (gp_gate_t){.phase = ph,
                          .old_c = o,
                          .new_c = n,
                          .cutoff = t,
                          .cutoff_wall = tw,
                          .seq = seq};
        s.p = (gp_part_t){.hi = hi,
                          .last_wall = 0,
                          .n = {n0, n1, n2},
                          .late = late,
                          .since_t = {s0, s1},
                          .promise = NONE,
                          .closed = false,
                          .sp = -1,
                          .cp = -1,
                          .ap = -1};
        return s;
}

static void assert_same(const char *what, size_t i, const gp_gate_t *ga, const gp_part_t *pa,
                        const gp_gate_t *gb, const gp_part_t *pb) {
        cr_assert(ga->phase == gb->phase && ga->old_c == gb->old_c && ga->new_c == gb->new_c,
                  "%s %zu: phase/colours differ", what, i);
        cr_assert_eq(ga->cutoff, gb->cutoff, "%s %zu: T %" PRId64 " vs %" PRId64, what, i,
                     ga->cutoff, gb->cutoff);
        cr_assert_eq(ga->cutoff_wall, gb->cutoff_wall, "%s %zu: tw", what, i);
        cr_assert_eq(ga->seq, gb->seq, "%s %zu: seq", what, i);
        cr_assert_eq(pa->hi, pb->hi, "%s %zu: hi", what, i);
        for (int k = 0; k < 3; k++)
                cr_assert_eq(pa->n[k], pb->n[k], "%s %zu: n[%d]", what, i, k);
        cr_assert_eq(pa->late, pb->late, "%s %zu: late", what, i);
        cr_assert(pa->since_t[0] == pb->since_t[0] && pa->since_t[1] == pb->since_t[1],
                  "%s %zu: since_t", what, i);
        cr_assert_eq(pa->promise, pb->promise, "%s %zu: promise %" PRId64 " vs %" PRId64, what,
                     i, pa->promise, pb->promise);
        cr_assert_eq(pa->closed, pb->closed, "%s %zu: closed", what, i);
        cr_assert_eq(pa->fp, pb->fp, "%s %zu: fp %08x vs %08x", what, i, pa->fp, pb->fp);
        cr_assert(pa->sp == pb->sp && pa->cp == pb->cp && pa->ap == pb->ap, "%s %zu: sp/cp/ap",
                  what, i);
        cr_assert(pa->ro == pb->ro && pa->rd[0] == pb->rd[0] && pa->rd[1] == pb->rd[1],
                  "%s %zu: rd", what, i);
}

#define U64MAX UINT64_MAX

#define OK1_LINE                                                                              \
        "gp1 seq=42 ph=split old=blue new=green T=1700000000000 tw=1700000000123 "            \
        "hi=1699999999000 n=10,3,0 late=0 st=2,3"
#define OK2_NO_TAIL                                                                           \
        "gp2 seq=42 ph=split old=blue new=green T=1700000000000 tw=1700000000123 "            \
        "hi=1699999999000 n=10,3,0 late=0 st=2,3"
#define OK_LINE OK2_NO_TAIL " pr=1700000000000 cl=0"
#define OK3_NO_TAIL                                                                           \
        "gp3 seq=42 ph=split old=blue new=green T=1700000000000 tw=1700000000123 "            \
        "hi=1699999999000 n=10,3,0 late=0 st=2,3 pr=1700000000000 cl=0"
#define OK3_LINE OK3_NO_TAIL " fp=5d1c39a2"
#define OK4_NO_TAIL                                                                           \
        "gp4 seq=42 ph=split old=blue new=green T=1700000000000 tw=1700000000123 "            \
        "hi=1699999999000 n=10,3,0 late=0 st=2,3 pr=1700000000000 cl=0"
#define OK4_LINE OK4_NO_TAIL " sp=- cp=- ap=- rd=0,0,0 fp=5d1c39a2"
#define OK5_NO_TAIL                                                                           \
        "gp5 seq=42 tx=0 ph=split old=blue new=green T=1700000000000 tw=1700000000123 "       \
        "hi=1699999999000 n=10,3,0 late=0 st=2,3 pr=1700000000000 cl=0"
#define OK5_LINE OK5_NO_TAIL " sp=- cp=- ap=- rd=0,0,0 fp=5d1c39a2"

static void assert_refused(const char *what, size_t i, const char *buf, size_t len,
                           const char *want_in_err);

static size_t make_states(state_t *s) {
        size_t n = 0;
        s[n++] = st("steady fresh", 0, GP_PHASE_STEADY, B, B, NONE, NONE, NONE, 0, 0, 0, 0, 0,
                    0);
        s[n++] = st("steady green counters", 7, GP_PHASE_STEADY, G, G, NONE, NONE,
                    1700000000000, 0, 123456, 3, 0, 0, 0);
        s[n++] = st("waiting", 8, GP_PHASE_WAITING, B, G, NONE, NONE, 1699999999000, 10, 0, 0,
                    0, 0, 0);
        s[n++] = st("waiting g->b, no data", 9, GP_PHASE_WAITING, G, B, NONE, NONE, NONE, 0, 0,
                    0, 0, 0, 0);
        s[n++] = st("doc example", 42, GP_PHASE_SPLIT, B, G, 1700000000000, 1700000000123,
                    1699999999000, 10, 3, 0, 0, 2, 3);
        s[n++] = st("split negative T", 1, GP_PHASE_SPLIT, G, B, -5000, -4000, -6000, 1, 2, 3,
                    0, 4, 5);
        s[n++] = st("split T min+1", 2, GP_PHASE_SPLIT, B, G, MIN1, MIN1, MIN1, 1, 0, 0, 0, 1,
                    0);
        s[n++] = st("split T max", 3, GP_PHASE_SPLIT, B, G, INT64_MAX, INT64_MAX,
                    INT64_MAX - 1, 0, 0, 0, 0, 0, 0);
        s[n++] = st("split T 0", 4, GP_PHASE_SPLIT, B, G, 0, 0, -1, 0, 0, 0, 0, 0, 0);
        s[n++] = st("closed", 100, GP_PHASE_CLOSED, B, G, 1700000000000, 1700000000123,
                    1700000100000, 50, 60, 7, 7, 20, 60);
        s[n++] = st("closed big counters", INT64_MAX, GP_PHASE_CLOSED, G, B, -1, 0, 0, U64MAX,
                    U64MAX - 1, 18446744073709551610ULL, U64MAX, 10000000000000000000ULL,
                    U64MAX);
        s[n++] = st("aborted with T", 5, GP_PHASE_ABORTED, B, B, 1000, 900, 1500, 1, 2, 0, 0,
                    1, 2);
        s[n++] = st("aborted without T", 6, GP_PHASE_ABORTED, G, G, NONE, NONE, NONE, 0, 0, 9,
                    0, 0, 0);
        s[4].p.promise = 1700000000000; /* doc example */
        s[4].g.tid = 1733150000123;
        s[4].p.fp = 0x5d1c39a2;
        s[4].p.sp = 5120;
        s[1].p.fp = 1; /* the smallest fingerprint */
        s[9].p.fp = 0xabcdef01;
        s[2].p.promise = MIN1;          /* waiting: GP_AGREE_NOTHING */
        s[9].p.promise = 1699999940000; /* closed, below T */
        s[9].p.closed = true;
        s[n++] = st("split, promise max", 10, GP_PHASE_SPLIT, B, G, INT64_MAX, 0, 0, 0, 0, 0,
                    0, 0, 0);
        s[n - 1].p.promise = INT64_MAX;
        s[n++] = st("widest line", INT64_MAX, GP_PHASE_ABORTED, G, G, MIN1, MIN1, MIN1, U64MAX,
                    U64MAX, U64MAX, U64MAX, U64MAX, U64MAX);
        s[n - 1].p.promise = MIN1;
        s[n - 1].p.closed = true;
        s[n - 1].p.fp = 0xffffffff;
        s[n - 1].p.sp = INT64_MAX - 1;
        s[n - 1].p.cp = s[n - 1].p.ap = INT64_MAX;
        s[n - 1].p.ro = true;
        s[n - 1].p.rd[0] = s[n - 1].p.rd[1] = U64MAX;
        /* An abort past T re-delivering (gate/redeliver.h). */
        s[n++] = st("aborted, re-delivering", 11, GP_PHASE_ABORTED, B, B, 1700000000000,
                    1700000000123, 1700000100000, 5, 6, 0, 0, 0, 6);
        s[n - 1].p.fp = 0x0badcafe;
        s[n - 1].p.sp = 0;
        s[n - 1].p.cp = 700;
        s[n - 1].p.ap = 1200;
        s[n - 1].p.ro = true;
        s[n - 1].p.rd[0] = 3;
        s[n++] = st("aborted, re-delivered, some lost", 12, GP_PHASE_ABORTED, G, G, 5, 4, 6, 0,
                    0, 0, 0, 0, 0);
        s[n - 1].p.fp = 0x00c0ffee;
        s[n - 1].p.sp = 10;
        s[n - 1].p.ap = 11;
        s[n - 1].p.rd[1] = 1;
        return n;
}

Test(checkpoint, round_trip) {
        state_t s[32];
        size_t n = make_states(s);
        for (size_t i = 0; i < n; i++) {
                char line[GP_CKPT_MAX];
                int len = gp_ckpt_encode(&s[i].g, &s[i].p, line, sizeof(line));
                cr_assert(len > 0 && (size_t)len == strlen(line),
                          "row %zu '%s': encode returned %d", i, s[i].row, len);
                cr_assert(len < GP_CKPT_MAX, "row %zu '%s': %d >= GP_CKPT_MAX", i, s[i].row,
                          len);

                gp_gate_t g;
                gp_part_t p;
                gp_gate_init(&g, B);
                gp_part_init(&p, 31337);
                char err[128] = "";
                cr_assert_eq(gp_ckpt_decode(line, (size_t)len, &g, &p, err, sizeof(err)), 0,
                             "row %zu '%s': '%s' refused: %s", i, s[i].row, line, err);
                cr_assert_eq(p.last_wall, 31337, "row %zu '%s': last_wall touched", i,
                             s[i].row);
                assert_same("round trip", i, &s[i].g, &s[i].p, &g, &p);

                char again[GP_CKPT_MAX];
                cr_assert_eq(gp_ckpt_encode(&g, &p, again, sizeof(again)), len, "row %zu", i);
                cr_assert_str_eq(again, line, "row %zu '%s': re-encoding differs", i,
                                 s[i].row);
        }
}

Test(checkpoint, documented_format) {
        state_t s[32];
        make_states(s);
        char line[GP_CKPT_MAX];
        gp_ckpt_encode(&s[4].g, &s[4].p, line, sizeof(line));
        cr_assert_str_eq(line,
                         "gp5 seq=42 tx=1733150000123 ph=split old=blue new=green "
                         "T=1700000000000 tw=1700000000123 hi=1699999999000 n=10,3,0 late=0 "
                         "st=2,3 pr=1700000000000 cl=0 sp=5120 cp=- ap=- rd=0,0,0 fp=5d1c39a2",
                         "the example in checkpoint.h");
        gp_ckpt_encode(&s[9].g, &s[9].p, line, sizeof(line));
        cr_assert(strstr(line, " pr=1699999940000 cl=1 sp=- cp=- ap=- rd=0,0,0 fp=abcdef01") &&
                          !strncmp(line, "gp5 ", 4) && line[strlen(line) - 1] == '1',
                  "closed row: '%s'", line);
        gp_ckpt_encode(&s[1].g, &s[1].p, line, sizeof(line));
        cr_assert(strstr(line, " fp=00000001") != NULL, "leading zeros kept: '%s'", line);
        gp_ckpt_encode(&s[0].g, &s[0].p, line, sizeof(line));
        cr_assert_str_eq(line,
                         "gp2 seq=0 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 "
                         "st=0,0 pr=- cl=0",
                         "unset times are '-'; no fingerprint: gp2");
}

/* A gp2 line (before the fingerprint existed) still decodes, with no
 * fingerprint, and is written back the same; the same state with a
 * fingerprint is the gp4 line, and a gp3 line (before the re-delivery's
 * fields) decodes to that state. */
Test(checkpoint, reads_gp2) {
        gp_gate_t g;
        gp_part_t p;
        gp_part_init(&p, 7);
        p.fp = 0x1234; /* overwritten */
        char err[128] = "";
        cr_assert_eq(gp_ckpt_decode(OK_LINE, strlen(OK_LINE), &g, &p, err, sizeof(err)), 0,
                     "%s", err);
        cr_assert_eq(p.fp, GP_FP_NONE, "a gp2 line has no fingerprint");
        cr_assert_eq(p.promise, 1700000000000);
        char line[GP_CKPT_MAX];
        gp_ckpt_encode(&g, &p, line, sizeof(line));
        cr_assert_str_eq(line, OK_LINE);
        p.fp = 0x5d1c39a2;
        gp_ckpt_encode(&g, &p, line, sizeof(line));
        cr_assert_str_eq(line, OK5_LINE);
        gp_part_t p3;
        gp_part_init(&p3, 7);
        p3.sp = 4; /* overwritten */
        p3.ro = true;
        cr_assert_eq(gp_ckpt_decode(OK3_LINE, strlen(OK3_LINE), &g, &p3, err, sizeof(err)), 0,
                     "%s", err);
        cr_assert_eq(p3.fp, 0x5d1c39a2u);
        cr_assert(p3.sp == -1 && p3.cp == -1 && p3.ap == -1 && !p3.ro && !p3.rd[0] &&
                          !p3.rd[1],
                  "a gp3 line has no re-delivery");
        gp_ckpt_encode(&g, &p3, line, sizeof(line));
        cr_assert_str_eq(line, OK5_LINE, "a gp3 line is written back as gp5");
        /* A gp4 line (before tx) reads as no transition id, written back
         * as gp5 with tx=0. */
        gp_part_t p4;
        gp_part_init(&p4, 7);
        cr_assert_eq(gp_ckpt_decode(OK4_LINE, strlen(OK4_LINE), &g, &p4, err, sizeof(err)), 0,
                     "%s", err);
        cr_assert_eq(g.tid, 0);
        gp_ckpt_encode(&g, &p4, line, sizeof(line));
        cr_assert_str_eq(line, OK5_LINE, "a gp4 line is written back as gp5");
        /* Without a fingerprint there is no room for a transition id. */
        g.tid = 9;
        p4.fp = GP_FP_NONE;
        cr_assert_eq(gp_ckpt_encode(&g, &p4, line, sizeof(line)), -1);
        g.tid = 0;
        /* Without a fingerprint there is no room for the re-delivery. */
        p3.fp = GP_FP_NONE;
        p3.ap = 3;
        cr_assert_eq(gp_ckpt_encode(&g, &p3, line, sizeof(line)), -1);
        gp_part_init(&p3, 7);
        cr_assert_eq(p3.fp, GP_FP_NONE, "a fresh partition has no fingerprint");
}

/* A gp1 line (before the promise and the closed flag existed) still
 * decodes: no promise, not closed; it is written back as gp2. */
Test(checkpoint, reads_gp1) {
        const char *old = "gp1 seq=42 ph=split old=blue new=green T=1700000000000 "
                          "tw=1700000000123 hi=1699999999000 n=10,3,0 late=0 st=2,3";
        gp_gate_t g;
        gp_part_t p;
        gp_part_init(&p, 7);
        p.promise = 5; /* overwritten */
        p.closed = true;
        char err[128] = "";
        cr_assert_eq(gp_ckpt_decode(old, strlen(old), &g, &p, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(g.seq, 42);
        cr_assert_eq(g.cutoff, 1700000000000);
        cr_assert_eq(p.hi, 1699999999000);
        cr_assert_eq(p.since_t[1], 3u);
        cr_assert_eq(p.promise, NONE, "a gp1 line has no promise");
        cr_assert(!p.closed, "a gp1 line is not closed");
        char line[GP_CKPT_MAX];
        gp_ckpt_encode(&g, &p, line, sizeof(line));
        cr_assert_str_eq(line,
                         "gp2 seq=42 ph=split old=blue new=green T=1700000000000 "
                         "tw=1700000000123 hi=1699999999000 n=10,3,0 late=0 st=2,3 pr=- cl=0");
        /* gp1 with the gp2 fields, gp2 without them: refused. */
        assert_refused("gp1+pr", 0, OK1_LINE " pr=- cl=0", strlen(OK1_LINE " pr=- cl=0"),
                       "trailing");
        assert_refused("gp2-pr", 0, OK2_NO_TAIL, strlen(OK2_NO_TAIL), "'pr'");
}

Test(checkpoint, widest_state_fits) {
        state_t s[32];
        size_t n = make_states(s);
        char line[GP_CKPT_MAX];
        int len = gp_ckpt_encode(&s[n - 1].g, &s[n - 1].p, line, sizeof(line));
        cr_assert(len > 0, "the widest state does not fit GP_CKPT_MAX (%d)", GP_CKPT_MAX);
}

/* ---- malformed lines ------------------------------------------------- */

static void assert_refused(const char *what, size_t i, const char *buf, size_t len,
                           const char *want_in_err) {
        /* An exact-size heap copy: ASan sees any read past len. */
        char *copy = malloc(len ? len : 1);
        cr_assert(copy, "oom");
        memcpy(copy, buf, len);
        gp_gate_t g, g0;
        gp_part_t p, p0;
        gp_gate_init(&g, G);
        g.seq = 99;
        gp_part_init(&p, 5);
        p.n[1] = 77;
        g0 = g;
        p0 = p;
        char err[160];
        memset(err, 0, sizeof(err));
        int rc = gp_ckpt_decode(copy, len, &g, &p, err, sizeof(err));
        free(copy);
        cr_assert_eq(rc, -1, "%s %zu: accepted '%.*s'", what, i, (int)len, buf);
        cr_assert(err[0], "%s %zu: refused without a reason", what, i);
        if (want_in_err)
                cr_assert(strstr(err, want_in_err), "%s %zu: err '%s' lacks '%s'", what, i,
                          err, want_in_err);
        cr_assert(memcmp(&g, &g0, sizeof(g)) == 0 && memcmp(&p, &p0, sizeof(p)) == 0,
                  "%s %zu: state written on error", what, i);
}

Test(checkpoint, malformed_lines) {
        static const struct {
                const char *line;
                const char *err; /* a part of the reason, or NULL */
        } rows[] = {
                {"", "gp1"},
                {"gp1", "gp1"},
                {"gp1 ", "'seq'"},
                {"gp3 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'pr'"},
                {"gp6 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "gp1"},
                {"gp5 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'tx'"},
                {"gp5 seq=42 tx=x ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 "
                 "st=0,0",
                 "'tx'"},
                {"gp5 seq=42 tx=-1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 "
                 "st=0,0",
                 "'tx'"},
                {"gp5 seq=42 tx=- ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 "
                 "st=0,0",
                 "'tx'"},
                {"gp4 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'pr'"},
                {OK4_NO_TAIL " fp=5d1c39a2", "'sp'"},
                {OK4_NO_TAIL " sp=x cp=- ap=- rd=0,0,0 fp=5d1c39a2", "'sp'"},
                {OK4_NO_TAIL " sp=-1 cp=- ap=- rd=0,0,0 fp=5d1c39a2", "'sp'"},
                {OK4_NO_TAIL " sp=01 cp=- ap=- rd=0,0,0 fp=5d1c39a2", "'sp'"},
                {OK4_NO_TAIL " sp=1 cp= ap=- rd=0,0,0 fp=5d1c39a2", "'cp'"},
                {OK4_NO_TAIL " sp=1 cp=- ap=-2 rd=0,0,0 fp=5d1c39a2", "'ap'"},
                {OK4_NO_TAIL " sp=1 cp=- ap=- rd=2,0,0 fp=5d1c39a2", "'rd'"},
                {OK4_NO_TAIL " sp=1 cp=- ap=- rd=0,0 fp=5d1c39a2", "'rd'"},
                {OK4_NO_TAIL " sp=1 cp=- ap=- rd=0,0,0,0 fp=5d1c39a2", "'rd'"},
                {OK4_NO_TAIL " sp=1 cp=- ap=- rd=0,0,0", "'fp'"},
                {OK4_NO_TAIL " cp=- sp=1 ap=- rd=0,0,0 fp=5d1c39a2", "'sp'"},
                {OK4_NO_TAIL " sp=5 cp=- ap=- rd=1,0,0 fp=5d1c39a2", "re-delivery"},
                {OK4_NO_TAIL " sp=5 cp=- ap=5 rd=1,0,0 fp=5d1c39a2", "re-delivery"},
                {OK4_NO_TAIL " sp=- cp=- ap=9 rd=1,0,0 fp=5d1c39a2", "re-delivery"},
                {OK3_LINE " sp=- cp=- ap=- rd=0,0,0", "trailing"},
                {"gp0 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "gp1"},
                {"gp3", "gp1"},
                {OK3_NO_TAIL, "'fp'"},
                {OK3_NO_TAIL " fp=", "'fp'"},
                {OK3_NO_TAIL " fp=-", "'fp'"},
                {OK3_NO_TAIL " fp=00000000", "'fp'"},
                {OK3_NO_TAIL " fp=5D1C39A2", "'fp'"},
                {OK3_NO_TAIL " fp=5d1c39a", "'fp'"},
                {OK3_NO_TAIL " fp=5d1c39a20", "'fp'"},
                {OK3_NO_TAIL " fp=5d1c39ag", "'fp'"},
                {OK3_NO_TAIL " fp=0x5d1c39", "'fp'"},
                {OK3_NO_TAIL " fp=-5d1c39a", "'fp'"},
                {OK3_NO_TAIL " fp= 5d1c39a", "'fp'"},
                {OK3_NO_TAIL " x=1 fp=5d1c39a2", "'fp'"},
                {OK3_LINE " fp=5d1c39a2", "trailing"},
                {OK3_LINE " ", "trailing"},
                {OK3_LINE "\n", "'fp'"},
                {OK_LINE " fp=5d1c39a2", "trailing"},
                {"gp2 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'pr'"},
                {"gp2", "gp1"},
                {OK2_NO_TAIL " pr=x cl=0", "'pr'"},
                {OK2_NO_TAIL " pr= cl=0", "'pr'"},
                {OK2_NO_TAIL " pr=01 cl=0", "'pr'"},
                {OK2_NO_TAIL " pr=-9223372036854775808 cl=0", "'pr'"},
                {OK2_NO_TAIL " pr=- cl=2", "'cl'"},
                {OK2_NO_TAIL " pr=- cl=-", "'cl'"},
                {OK2_NO_TAIL " pr=- cl=01", "'cl'"},
                {OK2_NO_TAIL " pr=- cl=", "'cl'"},
                {OK2_NO_TAIL " pr=-", "'cl'"},
                {OK2_NO_TAIL " cl=0 pr=-", "'pr'"},
                {OK2_NO_TAIL " pr=- cl=0 cl=0", "trailing"},
                {OK1_LINE " pr=- cl=0", "trailing"},
                {"GP1 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "gp1"},
                {" gp1 seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "gp1"},
                {"gp1  seq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1\tseq=42 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "gp1"},
                /* separators */
                {"gp1 seq=42  ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'ph'"},
                {"gp1 seq=42\tph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {OK_LINE " ", "trailing"},
                {OK_LINE "  ", NULL},
                {OK_LINE "\n", "'cl'"},
                {OK_LINE "\r\n", "'cl'"},
                {OK1_LINE "\n", "'st'"},
                {OK1_LINE " ", "trailing"},
                {OK_LINE " x=1", "trailing"},
                {OK_LINE " st=2,3", "trailing"},
                /* numbers */
                {"gp1 seq=abc ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1 seq=-1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1 seq=- ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1 seq=01 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1 seq=+1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1 seq=9223372036854775808 ph=split old=blue new=green T=1 tw=1 hi=- "
                 "n=0,0,0 late=0 st=0,0",
                 "'seq'"},
                {"gp1 seq=1 ph=split old=blue new=green T=12a tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1.5 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=007 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=-- tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=-5- tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1e3 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=0x10 tw=1 hi=- n=0,0,0 late=0 "
                 "st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=-9223372036854775808 tw=1 hi=- "
                 "n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=9223372036854775808 tw=1 hi=- "
                 "n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T= tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=x hi=- n=0,0,0 late=0 st=0,0",
                 "'tw'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=00 n=0,0,0 late=0 st=0,0",
                 "'hi'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=01,0,0 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,00,0 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=1,2 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=1,2,3,4 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=1,,3 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=,1,2 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=1,2,3, late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=-1,0,0 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=+1,0,0 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=1;2;3 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- "
                 "n=18446744073709551616,0,0 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- "
                 "n=99999999999999999999,0,0 late=0 st=0,0",
                 "'n'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=- st=0,0",
                 "'late'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=00 st=0,0",
                 "'late'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=1,2 st=0,0",
                 "'late'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,01",
                 "'st'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0",
                 "'st'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0,0",
                 "'st'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=",
                 "'st'"},
                /* words */
                {"gp1 seq=1 ph=SPLIT old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'ph'"},
                {"gp1 seq=1 ph=open old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'ph'"},
                {"gp1 seq=1 ph= old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'ph'"},
                {"gp1 seq=1 ph=splitsplitsplitsplit old=blue new=green T=1 tw=1 hi=- n=0,0,0 "
                 "late=0 st=0,0",
                 "'ph'"},
                {"gp1 seq=1 ph=split old=red new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'old'"},
                {"gp1 seq=1 ph=split old=blue new=Green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'new'"},
                /* structure */
                {"gp1 seq=1 ph=split old=blue new=green tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green tw=1 T=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T=1 T=1 tw=1 hi=- n=0,0,0 late=0 "
                 "st=0,0",
                 "'tw'"},
                {"gp1 seq=1 ph=split old=blue new=green t=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T:1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split old=blue new=green T==1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "'T'"},
                {"gp1 seq=1 ph=split x=1 old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 "
                 "st=0,0",
                 "'old'"},
                /* consistency */
                {"gp1 seq=1 ph=split old=blue new=green T=- tw=1 hi=- n=0,0,0 late=0 st=0,0",
                 "without a cutoff"},
                {"gp1 seq=1 ph=closed old=blue new=green T=- tw=- hi=- n=0,0,0 late=0 st=0,0",
                 "without a cutoff"},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                assert_refused("row", i, rows[i].line, strlen(rows[i].line), rows[i].err);
}

Test(checkpoint, embedded_nul_refused) {
        static const char *const lines[] = {
                "gp1 seq=1 ph=split\0 old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 st=0,0",
                "gp1 seq=1 ph=steady old=blue\0x new=blue T=- tw=- hi=- n=0,0,0 late=0 st=0,0",
                "gp1 seq=1 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 st=0,0\0",
                "gp1 seq=1\0 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 st=0,0",
                "gp1\0seq=1 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 st=0,0",
        };
        /* The lengths include the NUL and what follows it. */
        static const size_t lens[] = {
                sizeof("gp1 seq=1 ph=split\0 old=blue new=green T=1 tw=1 hi=- n=0,0,0 late=0 "
                       "st=0,0") -
                        1,
                sizeof("gp1 seq=1 ph=steady old=blue\0x new=blue T=- tw=- hi=- n=0,0,0 late=0 "
                       "st=0,0") -
                        1,
                sizeof("gp1 seq=1 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 "
                       "st=0,0\0") -
                        1,
                sizeof("gp1 seq=1\0 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 "
                       "st=0,0") -
                        1,
                sizeof("gp1\0seq=1 ph=steady old=blue new=blue T=- tw=- hi=- n=0,0,0 late=0 "
                       "st=0,0") -
                        1,
        };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
                assert_refused("nul", i, lines[i], lens[i], NULL);
}

/* Every field left out, every pair of neighbours swapped, every field
 * doubled: all refused. */
static void mutate(char (*words)[64], size_t nw) {
        for (size_t mode = 0; mode < 3; mode++)
                for (size_t k = (mode == 0 ? 0 : 1); k < nw; k++) {
                        if (mode == 1 && k + 1 >= nw)
                                continue;
                        char line[512] = "";
                        for (size_t j = 0; j < nw; j++) {
                                const char *w = words[j];
                                if (mode == 0 && j == k)
                                        continue; /* dropped */
                                if (mode == 1 && j == k)
                                        w = words[k + 1];
                                else if (mode == 1 && j == k + 1)
                                        w = words[k];
                                size_t l = strlen(line);
                                snprintf(line + l, sizeof(line) - l, "%s%s",
                                         line[0] ? " " : "", w);
                                l = strlen(line);
                                if (mode == 2 && j == k)
                                        snprintf(line + l, sizeof(line) - l, " %s", w);
                        }
                        char what[32];
                        snprintf(what, sizeof(what), "mode %zu word", mode);
                        assert_refused(what, k, line, strlen(line), NULL);
                }
}

/* ... of a gp2, a gp3, a gp4 and a gp5 line. */
Test(checkpoint, structural_mutations) {
        static const char *const oks[] = {OK_LINE, OK3_LINE, OK4_LINE, OK5_LINE};
        static const size_t words_of[] = {13, 14, 18, 19};
        for (size_t o = 0; o < 4; o++) {
                char words[24][64];
                size_t nw = 0;
                char tmp[GP_CKPT_MAX];
                snprintf(tmp, sizeof(tmp), "%s", oks[o]);
                char *save = NULL;
                for (char *w = strtok_r(tmp, " ", &save); w; w = strtok_r(NULL, " ", &save))
                        snprintf(words[nw++], sizeof(words[0]), "%s", w);
                cr_assert_eq(nw, words_of[o], "setup: %zu words", nw);
                mutate(words, nw);
        }
}

/* Every proper prefix of a line is refused: the line ends in cl, one
 * digit after the promise, or in fp's eight digits (and none crashes: exact-size heap copies under
 * ASan). */
Test(checkpoint, truncated_lines) {
        state_t s[32];
        size_t n = make_states(s);
        for (size_t i = 0; i < n; i++) {
                char line[GP_CKPT_MAX];
                int len = gp_ckpt_encode(&s[i].g, &s[i].p, line, sizeof(line));
                cr_assert(len > 0, "row %zu", i);
                cr_assert(s[i].p.fp ? !strncmp(line + len - 12, " fp=", 4)
                                    : !strncmp(line + len - 5, " cl=", 4),
                          "row %zu: ends '%s'", i, line);
                for (size_t cut = 0; cut < (size_t)len; cut++) {
                        char what[64];
                        snprintf(what, sizeof(what), "row %zu '%s' cut at", i, s[i].row);
                        assert_refused(what, cut, line, cut, NULL);
                }
        }
}

/* ---- buffer sizes ----------------------------------------------------- */

Test(checkpoint, buffer_too_small) {
        state_t s[32];
        size_t n = make_states(s);
        for (size_t i = 0; i < n; i++) {
                char full[GP_CKPT_MAX];
                int len = gp_ckpt_encode(&s[i].g, &s[i].p, full, sizeof(full));
                cr_assert(len > 0, "row %zu", i);
                static const int shorter[] = {0, 1, 4, -10, -1, 0};
                for (size_t k = 0; k < sizeof(shorter) / sizeof(shorter[0]); k++) {
                        size_t cap = shorter[k] < 0 ? (size_t)(len + shorter[k] + 1)
                                                    : (size_t)shorter[k];
                        if (k == sizeof(shorter) / sizeof(shorter[0]) - 1)
                                cap = (size_t)len; /* room for all but the NUL */
                        char buf[GP_CKPT_MAX + 8];
                        memset(buf, '#', sizeof(buf));
                        int r = gp_ckpt_encode(&s[i].g, &s[i].p, buf, cap);
                        cr_assert_eq(r, -1, "row %zu cap %zu: returned %d", i, cap, r);
                        for (size_t b = cap; b < sizeof(buf); b++)
                                cr_assert_eq(buf[b], '#', "row %zu cap %zu: wrote at %zu", i,
                                             cap, b);
                        if (cap)
                                cr_assert(memchr(buf, '\0', cap), "row %zu cap %zu: no NUL", i,
                                          cap);
                }
                char exact[GP_CKPT_MAX];
                cr_assert_eq(gp_ckpt_encode(&s[i].g, &s[i].p, exact, (size_t)len + 1), len,
                             "row %zu: len + 1 is enough", i);
                cr_assert_str_eq(exact, full, "row %zu", i);
        }
}

Test(checkpoint, decode_reads_only_len) {
        /* A valid line followed by garbage the length excludes. */
        const char buf[] = OK_LINE " garbage=1";
        gp_gate_t g;
        gp_part_t p;
        gp_part_init(&p, 0);
        char err[128];
        cr_assert_eq(gp_ckpt_decode(buf, strlen(OK_LINE), &g, &p, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_eq(g.seq, 42, "seq");
        /* The terminating NUL inside len is trailing data. */
        assert_refused("nul inside len", 0, OK_LINE, sizeof(OK_LINE), NULL);
        /* Small error buffers. */
        cr_assert_eq(gp_ckpt_decode("x", 1, &g, &p, err, 4), -1, "accepted");
        cr_assert_eq(strlen(err), 3u, "err truncated to its buffer");
        cr_assert_eq(gp_ckpt_decode("x", 1, &g, &p, NULL, 0), -1, "err NULL");
}
