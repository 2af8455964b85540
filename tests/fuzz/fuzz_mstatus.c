/* tests/fuzz/fuzz_mstatus.c: libFuzzer target for gate/mstatus.c, the
 * parser of a member's status key (a value any writer of the map may
 * change). Depends on gate/mstatus.h and libc only. Invariants checked:
 *   - a failure always has a reason and leaves the output untouched;
 *   - a value that parses encodes into GP_MSTATUS_MAX, and that line
 *     parses to the same status;
 *   - the pipeline's view of it alone counts it live or gone, once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/mstatus.h"
#include "tests/fuzz/fuzz_check.h"

static int same(const gp_mstatus_t *a, const gp_mstatus_t *b) {
        return a->phase == b->phase && a->tid == b->tid && a->parts == b->parts &&
               a->n[0] == b->n[0] && a->n[1] == b->n[1] && a->n[2] == b->n[2] &&
               a->late == b->late && a->rd == b->rd &&
               (!a->rd || (a->rd_to == b->rd_to && a->rd_sent == b->rd_sent &&
                           a->rd_left == b->rd_left && a->rd_lost == b->rd_lost &&
                           a->rd_open == b->rd_open)) &&
               a->beat == b->beat && a->run == b->run;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *s = (const char *)data;
        gp_mstatus_t m, was, again;
        char err[200] = "", line[GP_MSTATUS_MAX];
        memset(&m, 0x5a, sizeof m);
        was = m;
        int rc = gp_mstatus_decode(s, size, &m, err, sizeof err);
        CHECK(rc == 0 || rc == -1);
        if (rc) {
                CHECK(err[0] != '\0');
                CHECK(memcmp(&m, &was, sizeof m) == 0);
                return 0;
        }
        int n = gp_mstatus_encode(&m, line, sizeof line);
        CHECK(n > 0 && (size_t)n < sizeof line);
        CHECK(gp_mstatus_decode(line, (size_t)n, &again, err, sizeof err) == 0);
        CHECK(same(&m, &again));
        gp_mstatus_view_t v;
        gp_mstatus_view(&m, 1, m.beat, 1000, &v);
        CHECK(v.live + v.gone == 1);
        CHECK(v.live == (size_t)m.run);
        return 0;
}
