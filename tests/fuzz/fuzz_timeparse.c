/* tests/fuzz/fuzz_timeparse.c: libFuzzer target for gate/timeparse.c.
 * Depends on gate/timeparse.h and libc only. Invariants checked:
 *   - a failure always has a reason and leaves the output untouched;
 *   - gp_parse_i64 accepts only the canonical decimal spelling (printing the
 *     value gives the input back; "-0" is the one exception);
 *   - numbers: the units agree (S = 1000 * MS when there is no fraction,
 *     US = floor(MS / 1000));
 *   - RFC 3339: the result does not depend on the unit, and
 *     gp_time_format + gp_time_parse gives the same ms whenever the year is
 *     0000-9999 (and is refused otherwise);
 *   - the first 8 bytes as an int64 ms: format, then parse, round-trips in
 *     the same year range. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/timeparse.h"
#include "tests/fuzz/fuzz_check.h"

/* The span gp_time_parse can return for dates: 0000-01-01T00:00:00+23:59
 * to 9999-12-31T23:59:59.999-23:59. */
#define YEAR0_MS     (-62167219200000LL)
#define YEAR10000_MS 253402300800000LL

static const gp_unit_t units[] = {GP_UNIT_MS, GP_UNIT_S, GP_UNIT_US};

/* Formats ms, checks the shape, and parses it back. */
static void check_format_round_trip(int64_t ms) {
        char buf[32];
        int64_t again = 7;
        const char *why = NULL;
        CHECK(gp_time_format(ms, buf, sizeof buf) == buf);
        size_t n = strlen(buf);
        CHECK(n >= 24 && n < sizeof buf);
        CHECK(buf[n - 1] == 'Z' && buf[n - 5] == '.');
        int rc = gp_time_parse(buf, n, GP_UNIT_MS, &again, &why);
        if (ms >= YEAR0_MS && ms < YEAR10000_MS) {
                if (rc != 0)
                        fprintf(stderr, "%s: %s\n", buf, why);
                CHECK(rc == 0);
                CHECK(again == ms);
        } else {
                CHECK(rc == -1);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *s = (const char *)data;
        int64_t v = 7, ms[3];
        int ok[3];
        const char *why = NULL;

        /* gp_parse_i64 */
        int irc = gp_parse_i64(s, size, &v, &why);
        if (irc == 0) {
                char buf[32];
                int n = snprintf(buf, sizeof buf, "%" PRId64, v);
                CHECK((size_t)n == size ? memcmp(buf, s, size) == 0
                                        : (size == 2 && memcmp(s, "-0", 2) == 0 && v == 0));
        } else {
                CHECK((irc == GP_PARSE_SYNTAX || irc == GP_PARSE_RANGE) && why != NULL &&
                      why[0] != '\0' && v == 7);
        }

        /* gp_time_parse in each unit */
        for (int u = 0; u < 3; u++) {
                int64_t out = 7;
                why = NULL;
                int rc = gp_time_parse(s, size, units[u], &out, &why);
                CHECK(rc == 0 || rc == -1);
                ok[u] = rc == 0;
                ms[u] = out;
                if (!ok[u])
                        CHECK(why != NULL && why[0] != '\0' && out == 7);
        }

        int is_date = size > 4 && s[4] == '-';
        if (is_date) {
                CHECK(ok[0] == ok[1] && ok[0] == ok[2]);
                if (ok[0]) {
                        CHECK(ms[0] == ms[1] && ms[0] == ms[2]);
                        CHECK(ms[0] > YEAR0_MS - 86400000LL);
                        CHECK(ms[0] < YEAR10000_MS + 86400000LL);
                        check_format_round_trip(ms[0]);
                }
        } else if (irc == 0) {
                int64_t conv;
                /* An integer: MS and US always work; S unless it overflows. */
                CHECK(ok[0] && ms[0] == v);
                CHECK(ok[2] && ms[2] == v / 1000 - (v % 1000 < 0));
                CHECK(ok[1] == (gp_time_from_int(v, GP_UNIT_S, &conv, &why) == 0));
                if (ok[1])
                        CHECK(ms[1] == conv);
        } else {
                /* Not an integer: only seconds with a fraction can pass. */
                CHECK(!ok[0] && !ok[2]);
                if (ok[1])
                        CHECK(memchr(s, '.', size) != NULL);
        }
        for (int u = 0; u < 3; u++)
                if (ok[u])
                        check_format_round_trip(ms[u]);

        /* Any int64 formats; the representable years round-trip. */
        if (size >= 8) {
                int64_t raw;
                memcpy(&raw, data, 8);
                check_format_round_trip(raw);
                check_format_round_trip(raw % (YEAR10000_MS - YEAR0_MS) + YEAR0_MS / 2);
        }
        return 0;
}
