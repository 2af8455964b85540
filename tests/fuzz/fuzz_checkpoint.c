/* tests/fuzz/fuzz_checkpoint.c: libFuzzer target for the checkpoint line
 * (gate/checkpoint.h). Arbitrary bytes are decoded; whatever decodes must
 * encode, decode again to the same state and encode to the same text, and
 * the gate must route and step from that state without tripping a
 * sanitizer or the phase-table trap (a checkpoint can hold any value the
 * decoder lets through). Corpus: tests/fuzz/corpus/checkpoint/.
 * Uses gate/ only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "gate/gate.h"
#include "gate/redeliver.h"

#define CHECK(x)                                                                              \
        do {                                                                                  \
                if (!(x))                                                                     \
                        abort();                                                              \
        } while (0)

static int same(const gp_gate_t *a, const gp_part_t *pa, const gp_gate_t *b,
                const gp_part_t *pb) {
        return a->phase == b->phase && a->old_c == b->old_c && a->new_c == b->new_c &&
               a->cutoff == b->cutoff && a->cutoff_wall == b->cutoff_wall &&
               a->seq == b->seq && pa->hi == pb->hi && pa->n[0] == pb->n[0] &&
               pa->n[1] == pb->n[1] && pa->n[2] == pb->n[2] && pa->late == pb->late &&
               pa->since_t[0] == pb->since_t[0] && pa->since_t[1] == pb->since_t[1] &&
               pa->promise == pb->promise && pa->closed == pb->closed && pa->fp == pb->fp &&
               pa->sp == pb->sp && pa->cp == pb->cp && pa->ap == pb->ap && pa->ro == pb->ro &&
               pa->rd[0] == pb->rd[0] && pa->rd[1] == pb->rd[1];
}

/* A re-delivery from a decoded state: marks, reads and ends without
 * tripping a sanitizer, and never sends past ap. */
static void redeliver(const gp_gate_t *g0, const gp_part_t *p0, const gp_gate_conf_t *conf) {
        gp_part_t p = *p0;
        gp_gate_t ab = *g0;
        ab.phase = GP_PHASE_ABORTED;
        ab.new_c = ab.old_c;
        if (gp_redeliver_mark(&p, g0, &ab, p.ap >= 0 ? p.ap : 0, true))
                CHECK(p.ro && p.sp >= 0 && p.ap > p.sp);
        int64_t at = gp_redeliver_from(&p, p.sp >= 0 ? p.sp : 0, p.ap > 0 ? p.ap - 1 : 0);
        CHECK(!p.ro || at < p.ap);
        static const int64_t offs[] = {0, 1, INT64_MAX - 1, INT64_MAX};
        for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
                bool was = p.ro;
                gp_rd_t r = gp_redeliver_record(&p, &ab, conf, offs[i], g0->cutoff);
                CHECK(r == GP_RD_ROUTE || (was && offs[i] < p.ap));
        }
        gp_redeliver_settle(&p, INT64_MAX);
        CHECK(!p.ro);
}

/* Routing and deciding from a decoded state. */
static void exercise(const gp_gate_t *g0, const gp_part_t *p0, uint8_t salt) {
        gp_gate_conf_t conf = {.out_of_orderness_ms = (salt & 1) ? 0 : 5000,
                               .idle_ms = 1000,
                               .align_ms = (salt & 2) ? 1 : 60000,
                               .lateness_ms = 100,
                               .late_to_dlq = salt & 4,
                               .bad_route_old = salt & 8};
        redeliver(g0, p0, &conf);
        gp_part_t p = *p0;
        int64_t t = g0->cutoff;
        const int64_t ts[] = {0,
                              GP_TS_NONE,
                              INT64_MAX,
                              INT64_MIN + 1,
                              t == GP_TS_NONE ? 1 : t,
                              t == GP_TS_NONE || t == INT64_MIN + 1 ? 2 : t - 1};
        /* A partition that closed the old side by its own watermark (cl=1)
         * routes as the closed gate while the pipeline splits. */
        gp_gate_t as = *g0;
        if (p0->closed && as.phase == GP_PHASE_SPLIT)
                as.phase = GP_PHASE_CLOSED;
        for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
                bool l1, l2;
                gp_dest_t d1 = gp_gate_dest(&as, &conf, ts[i], &l1);
                gp_dest_t d2 = gp_gate_route(g0, &conf, &p, ts[i], 1700000000000, &l2);
                CHECK(d1 == d2 && l1 == l2);
                CHECK(d1 <= GP_DEST_DLQ);
        }
        const gp_part_t *cparts[] = {&p};
        gp_part_t *parts[] = {&p};
        static const int64_t nows[] = {INT64_MIN + 1, 0, 1700000000000, INT64_MAX};
        for (int k = 0; k < 8; k++) {
                gp_gate_t g = *g0;
                gp_control_t c = {.active = (k & 1) ? g.new_c : gp_colour_other(g.new_c),
                                  .stage = (gp_stage_t)(k % 5),
                                  .delay_ms = (k & 2) ? 0 : INT64_MAX,
                                  .is_first = k == 7,
                                  .wm_stage = (k & 4) ? GP_WMS_SET : GP_WMS_NONE,
                                  .toggle = (k & 4) ? g.cutoff : GP_TS_NONE,
                                  .req_cutoff = k == 5 ? INT64_MAX : GP_TS_NONE,
                                  .req_align_ms = 0};
                if (c.wm_stage == GP_WMS_SET && c.toggle == GP_TS_NONE)
                        c.wm_stage = GP_WMS_NONE;
                int64_t now = nows[(k + salt) % 4];
                gp_wm_view_t wv;
                gp_gate_watermark(cparts, 1, &conf, now, &wv);
                gp_step_t out;
                gp_gate_step(&g, parts, 1, &c, &wv, &conf, now, &out);
                CHECK(gp_phase_allowed(g0->phase, g.phase) || out.events);
                if (out.events & GP_EV_REFUSED)
                        CHECK(out.err[0] != '\0');
                gp_publish_t pub;
                gp_gate_publication(&g, &c, &pub);
                char line[GP_CKPT_MAX];
                if (g.phase != GP_PHASE_SPLIT && g.phase != GP_PHASE_CLOSED)
                        continue;
                CHECK(g.cutoff != GP_TS_NONE); /* decisions are checkpointable */
                CHECK(gp_ckpt_encode(&g, &p, line, sizeof(line)) > 0);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 4 * GP_CKPT_MAX)
                return 0;
        /* An exact-size copy, so a read past `size` is an ASan report. */
        char *buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        if (size)
                memcpy(buf, data, size);

        gp_gate_t g;
        gp_part_t p;
        gp_gate_init(&g, GP_BLUE);
        gp_part_init(&p, 1234);
        char err[256] = "";
        int rc = gp_ckpt_decode(buf, size, &g, &p, err, sizeof(err));
        free(buf);
        if (rc != 0) {
                CHECK(rc == -1 && err[0] != '\0');
                return 0;
        }
        CHECK(p.last_wall == 1234);

        char line[GP_CKPT_MAX];
        int n = gp_ckpt_encode(&g, &p, line, sizeof(line));
        CHECK(n > 0 && (size_t)n < sizeof(line));

        gp_gate_t g2;
        gp_part_t p2;
        gp_gate_init(&g2, GP_GREEN);
        gp_part_init(&p2, 1234);
        CHECK(gp_ckpt_decode(line, (size_t)n, &g2, &p2, err, sizeof(err)) == 0);
        CHECK(same(&g, &p, &g2, &p2));

        char again[GP_CKPT_MAX];
        CHECK(gp_ckpt_encode(&g2, &p2, again, sizeof(again)) == n);
        CHECK(memcmp(line, again, (size_t)n + 1) == 0);

        exercise(&g, &p, size ? data[size - 1] : 0);
        return 0;
}
