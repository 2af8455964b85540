/* tests/unit/test_drain.c: the drain check's verdict on one partition
 * (gate/drain.h, docs/DESIGN.md, Choosing T and closing), as a table: what
 * the proxy wrote, the group's committed offset, the partition's offsets
 * and the answer of the read after the committed offset. Uses gate/ only. */
#include <criterion/criterion.h>

#include "gate/drain.h"

typedef struct {
        const char *row;
        gp_drain_part_t in;
        int64_t from;           /* gp_drain_from */
        gp_drain_state_t state; /* gp_drain_state */
        int64_t lag;
} row_t;

#define W(w, c)                                                                               \
        { .written = w, .committed = c, .lo = 0, .hi = 0, .found = -1 }
#define R(c, l, h, f)                                                                         \
        { .written = -1, .committed = c, .lo = l, .hi = h, .found = f }

static const row_t rows[] = {
        /* This process wrote: the committed offset against what it wrote. */
        {"wrote 100, group at 100 (Flink: after the last record)", W(100, 100), -1,
         GP_DRAIN_DONE, 0},
        {"wrote 100, group at 101 (Java: after the commit marker)", W(100, 101), -1,
         GP_DRAIN_DONE, 0},
        {"wrote 100, group at 60", W(100, 60), -1, GP_DRAIN_LAG, 40},
        {"wrote 100, group never committed", W(100, -1), -1, GP_DRAIN_LAG, 100},
        {"wrote 0 records' end at 0", W(0, -1), -1, GP_DRAIN_DONE, 0},
        /* After a restart: the partition is read. */
        {"empty partition, no commit", R(-1, 0, 0, -1), -1, GP_DRAIN_DONE, 0},
        {"group at the end", R(500, 0, 500, -1), -1, GP_DRAIN_DONE, 0},
        {"group past the end (marker)", R(501, 0, 500, -1), -1, GP_DRAIN_DONE, 0},
        {"group behind, a record found", R(400, 0, 500, 1), 400, GP_DRAIN_LAG, 100},
        {"group behind, only markers and aborted records", R(499, 0, 500, 0), 499,
         GP_DRAIN_DONE, 0},
        {"group behind, the read gave no answer", R(400, 0, 500, -1), 400, GP_DRAIN_UNKNOWN,
         0},
        {"never committed, records from 0", R(-1, 0, 50, 1), 0, GP_DRAIN_LAG, 50},
        {"never committed, log start moved to 30", R(-1, 30, 50, 1), 30, GP_DRAIN_LAG, 50},
        {"committed below the log start, nothing left", R(10, 30, 50, 0), 30, GP_DRAIN_DONE,
         0},
};

Test(drain, table) {
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const row_t *r = &rows[i];
                int64_t lag = -7;
                cr_expect_eq(gp_drain_from(&r->in), r->from, "%s: from %lld, expected %lld",
                             r->row, (long long)gp_drain_from(&r->in), (long long)r->from);
                gp_drain_state_t s = gp_drain_state(&r->in, &lag);
                cr_expect_eq(s, r->state, "%s: state %d, expected %d", r->row, s, r->state);
                cr_expect_eq(lag, r->lag, "%s: lag %lld, expected %lld", r->row,
                             (long long)lag, (long long)r->lag);
        }
}

/* A read's answer counts only where a read was asked for. */
Test(drain, found_ignored_without_a_read) {
        gp_drain_part_t p = W(100, 60);
        int64_t lag;
        p.found = 0;
        cr_expect_eq(gp_drain_state(&p, &lag), GP_DRAIN_LAG);
        p = (gp_drain_part_t)R(500, 0, 500, 1);
        cr_expect_eq(gp_drain_state(&p, &lag), GP_DRAIN_DONE);
}
