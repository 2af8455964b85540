/* tests/fuzz/fuzz_hoptime.c: libFuzzer target for gate/hoptime.c, the
 * parser of gate-proxy.hop (a value any writer of the map may change).
 * Depends on gate/hoptime.h and libc only. Invariants checked:
 *   - a failure always has a reason and leaves the output untouched;
 *   - a value that parses formats again to the same bytes, unless an
 *     instant saturated (an offset past INT64_MAX from seen);
 *   - close= and rule= are set together; idle <= parts;
 *   - the phases are -1 or non-negative, and the description is a
 *     bounded string. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/hoptime.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *s = (const char *)data;
        gp_hop_t h, was;
        char err[200] = "", v[GP_HOP_VALUE_MAX], d[600];
        gp_hoptime_init(&h);
        h.seen = 7;
        was = h;
        int rc = gp_hoptime_parse(&h, s, size, err, sizeof err);
        CHECK(rc == 0 || rc == -1);
        if (rc) {
                CHECK(err[0] != '\0');
                CHECK(memcmp(&h, &was, sizeof h) == 0);
                return 0;
        }
        CHECK((h.closed == GP_TS_NONE) == (h.rule == GP_CLOSE_NONE));
        CHECK(h.idle >= 0 && h.idle <= h.parts);
        int64_t ph[4];
        gp_hoptime_phases(&h, ph);
        for (int i = 0; i < 4; i++)
                CHECK(ph[i] >= -1);
        gp_hoptime_format(&h, v, sizeof v);
        CHECK(strlen(v) < GP_HOP_VALUE_MAX);
        bool saturated = false;
        const int64_t at[] = {h.t, h.closed, h.drained, h.clear};
        for (int i = 0; i < 4; i++)
                saturated |= at[i] != GP_TS_NONE && at[i] < h.seen;
        if (!saturated)
                CHECK(strlen(v) == size && memcmp(v, s, size) == 0);
        gp_hoptime_describe(&h, d, sizeof d);
        CHECK(strlen(d) < sizeof d);
        return 0;
}
