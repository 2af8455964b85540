/* tests/unit/test_timeparse.c: tables for gate/timeparse.c (integers, epoch
 * numbers in each unit, RFC 3339, formatting and round trips).
 * Depends on gate/timeparse.h and Criterion only. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "gate/timeparse.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct i64_case {
        const char *in;
        int ok; /* 1 accepted; 0 refused as written; -1 refused as out of range */
        int64_t want;
};

Test(timeparse, parse_i64) {
        static const struct i64_case cases[] = {
                {"0", 1, 0},
                {"-0", 1, 0},
                {"7", 1, 7},
                {"-42", 1, -42},
                {"1700000000123", 1, 1700000000123LL},
                {"9223372036854775807", 1, INT64_MAX},
                {"-9223372036854775808", 1, INT64_MIN},
                {"9223372036854775808", -1, 0},  /* one past INT64_MAX */
                {"-9223372036854775809", -1, 0}, /* one past INT64_MIN */
                {"99999999999999999999", -1, 0},
                {"", 0, 0},
                {"-", 0, 0},
                {"+5", 0, 0},
                {"00", 0, 0},
                {"012", 0, 0},
                {"-01", 0, 0},
                {" 1", 0, 0},
                {"1 ", 0, 0},
                {"1a", 0, 0},
                {"1.0", 0, 0},
                {"--1", 0, 0},
                {"0x10", 0, 0},
        };
        for (size_t k = 0; k < N(cases); k++) {
                const struct i64_case *c = &cases[k];
                int64_t v = 12345;
                const char *why = NULL;
                int rc = gp_parse_i64(c->in, strlen(c->in), &v, &why);
                if (c->ok == 1) {
                        cr_assert_eq(rc, 0, "\"%s\": rejected (%s)", c->in, why ? why : "?");
                        cr_assert_eq(v, c->want, "\"%s\": got %lld", c->in, (long long)v);
                } else {
                        cr_assert_eq(rc, c->ok ? GP_PARSE_RANGE : GP_PARSE_SYNTAX,
                                     "\"%s\": rc %d (accepted as %lld?)", c->in, rc,
                                     (long long)v);
                        cr_assert_not_null(why, "\"%s\": no reason", c->in);
                        cr_assert_eq(v, 12345, "\"%s\": output written on failure", c->in);
                }
        }
}

Test(timeparse, parse_i64_uses_len_not_nul) {
        int64_t v = 0;
        cr_assert_eq(gp_parse_i64("123456", 3, &v, NULL), 0);
        cr_assert_eq(v, 123);
        cr_assert_eq(gp_parse_i64("12\0"
                                  "3",
                                  4, &v, NULL),
                     -1);
}

struct tp_ok {
        const char *in;
        gp_unit_t unit;
        int64_t want;
};

Test(timeparse, valid) {
        static const struct tp_ok cases[] = {
                /* epoch milliseconds */
                {"0", GP_UNIT_MS, 0},
                {"1700000000123", GP_UNIT_MS, 1700000000123LL},
                {"-1", GP_UNIT_MS, -1},
                {"9223372036854775807", GP_UNIT_MS, INT64_MAX},
                {"-9223372036854775808", GP_UNIT_MS, INT64_MIN},
                /* 8 to 16 digits: read as two words that may overlap */
                {"12345678", GP_UNIT_MS, 12345678LL},
                {"123456789", GP_UNIT_MS, 123456789LL},
                {"9999999999999999", GP_UNIT_MS, 9999999999999999LL},
                {"1000000000000001", GP_UNIT_MS, 1000000000000001LL},
                {"1234567890123", GP_UNIT_US, 1234567890LL},
                {"12345678901", GP_UNIT_S, 12345678901000LL},
                /* epoch seconds, with and without a fraction */
                {"1700000000", GP_UNIT_S, 1700000000000LL},
                {"1.5", GP_UNIT_S, 1500},
                {"0.1", GP_UNIT_S, 100},
                {"0.001", GP_UNIT_S, 1},
                {"1.999999", GP_UNIT_S, 1999}, /* truncated, not rounded */
                {"-1.5", GP_UNIT_S, -1500},
                {"-1", GP_UNIT_S, -1000},
                {"-1.0005", GP_UNIT_S, -1001}, /* toward -inf */
                {"-0.0001", GP_UNIT_S, -1},    /* toward -inf */
                {"-0.000", GP_UNIT_S, 0},
                {"1.000000000000000000000000001", GP_UNIT_S, 1000},
                {"9223372036854775", GP_UNIT_S, 9223372036854775000LL},
                {"9223372036854775.807", GP_UNIT_S, INT64_MAX},
                {"-9223372036854775.808", GP_UNIT_S, INT64_MIN},
                /* epoch microseconds */
                {"1700000000123456", GP_UNIT_US, 1700000000123LL},
                {"999", GP_UNIT_US, 0},
                {"-1", GP_UNIT_US, -1}, /* floor, not toward zero */
                {"-1000", GP_UNIT_US, -1},
                {"-1001", GP_UNIT_US, -2},
                {"-9223372036854775808", GP_UNIT_US, -9223372036854776LL},
                /* RFC 3339; the unit does not matter for a date */
                {"1970-01-01T00:00:00Z", GP_UNIT_MS, 0},
                {"1970-01-01T00:00:00Z", GP_UNIT_S, 0},
                {"1970-01-01T00:00:00.001Z", GP_UNIT_US, 1},
                {"2026-12-02T13:59:17Z", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02T13:59:17.000Z", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02T13:59:17.1Z", GP_UNIT_MS, 1796219957100LL},
                {"2026-12-02T13:59:17.12Z", GP_UNIT_MS, 1796219957120LL},
                {"2026-12-02T13:59:17.123456789Z", GP_UNIT_MS, 1796219957123LL},
                {"2026-12-02t13:59:17z", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02 13:59:17Z", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02T15:59:17+02:00", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02T08:29:17-05:30", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02T13:59:17+00:00", GP_UNIT_MS, 1796219957000LL},
                {"2026-12-02T13:59:17-00:00", GP_UNIT_MS, 1796219957000LL},
                {"2026-01-01T00:00:00+23:59", GP_UNIT_MS, 1767139260000LL},
                {"2024-02-29T12:00:00Z", GP_UNIT_MS, 1709208000000LL},
                {"2000-02-29T00:00:00Z", GP_UNIT_MS, 951782400000LL},
                {"1969-12-31T23:59:59.999Z", GP_UNIT_MS, -1},
                {"1969-12-31T23:59:59.9999Z", GP_UNIT_MS, -1},
                {"1969-12-31T23:59:59Z", GP_UNIT_MS, -1000},
                {"1900-01-01T00:00:00Z", GP_UNIT_MS, -2208988800000LL},
                {"0001-01-01T00:00:00Z", GP_UNIT_MS, -62135596800000LL},
                {"0000-01-01T00:00:00Z", GP_UNIT_MS, -62167219200000LL},
                {"0000-01-01T00:00:00+01:00", GP_UNIT_MS, -62167222800000LL},
                {"9999-12-31T23:59:59.999Z", GP_UNIT_MS, 253402300799999LL},
        };
        for (size_t k = 0; k < N(cases); k++) {
                const struct tp_ok *c = &cases[k];
                int64_t ms = 42;
                const char *why = NULL;
                int rc = gp_time_parse(c->in, strlen(c->in), c->unit, &ms, &why);
                cr_assert_eq(rc, 0, "\"%s\" (unit %d): rejected: %s", c->in, (int)c->unit,
                             why ? why : "?");
                cr_assert_eq(ms, c->want, "\"%s\" (unit %d): got %lld, want %lld", c->in,
                             (int)c->unit, (long long)ms, (long long)c->want);
        }
}

struct tp_bad {
        const char *in;
        gp_unit_t unit;
        const char *why; /* a word the reason must contain */
};

Test(timeparse, invalid) {
        static const struct tp_bad cases[] = {
                {"", GP_UNIT_MS, "empty"},
                {"123abc", GP_UNIT_MS, "trailing"},
                {"1.5", GP_UNIT_MS, "trailing"}, /* fractions only in seconds */
                {"1500.0", GP_UNIT_US, "trailing"},
                {" 123", GP_UNIT_MS, "number"},
                {"123 ", GP_UNIT_MS, "trailing"},
                {"1.5 ", GP_UNIT_S, "trailing"},
                {"+5", GP_UNIT_MS, "number"},
                {"+5", GP_UNIT_S, "number"},
                {"-", GP_UNIT_MS, "digits"},
                {"-", GP_UNIT_S, "digits"},
                {"012", GP_UNIT_MS, "leading zero"},
                {"0123456789", GP_UNIT_MS, "leading zero"},
                {"123456789x", GP_UNIT_MS, "trailing"},
                {"1234567x90", GP_UNIT_MS, "trailing"},
                {"12345678901234567x", GP_UNIT_MS, "trailing"},
                {"9999999999999999", GP_UNIT_S, "overflow"},
                {"01.5", GP_UNIT_S, "leading zero"},
                {"1.", GP_UNIT_S, "decimal point"},
                {".5", GP_UNIT_S, "number"},
                {"1.5.", GP_UNIT_S, "trailing"},
                {"1e3", GP_UNIT_S, "trailing"},
                {"1,5", GP_UNIT_S, "trailing"},
                {"9223372036854775808", GP_UNIT_MS, "overflow"},
                {"-9223372036854775809", GP_UNIT_US, "overflow"},
                {"9223372036854776", GP_UNIT_S, "overflow"},
                {"-9223372036854776", GP_UNIT_S, "overflow"},
                {"9223372036854775.808", GP_UNIT_S, "overflow"},
                {"-9223372036854775.8081", GP_UNIT_S, "overflow"},
                {"2023-02-29T00:00:00Z", GP_UNIT_MS, "day"}, /* not a leap year */
                {"1900-02-29T00:00:00Z", GP_UNIT_MS, "day"}, /* century, not leap */
                {"2024-02-30T00:00:00Z", GP_UNIT_MS, "day"},
                {"2024-04-31T00:00:00Z", GP_UNIT_MS, "day"},
                {"2024-01-00T00:00:00Z", GP_UNIT_MS, "day"},
                {"2024-01-32T00:00:00Z", GP_UNIT_MS, "day"},
                {"2024-13-01T00:00:00Z", GP_UNIT_MS, "month"},
                {"2024-00-01T00:00:00Z", GP_UNIT_MS, "month"},
                {"2024-01-01T24:00:00Z", GP_UNIT_MS, "hour"},
                {"2024-01-01T23:60:00Z", GP_UNIT_MS, "minute"},
                {"2016-12-31T23:59:60Z", GP_UNIT_MS, "leap second"}, /* a real one */
                {"2024-01-01T00:00:61Z", GP_UNIT_MS, "second"},
                {"2024-01-01T00:00:00", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00.123", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00Q", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00+24:00", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00+05:60", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00+05", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00+0500", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00+5:00", GP_UNIT_MS, "offset"},
                {"2024-01-01T00:00:00.Z", GP_UNIT_MS, "decimal point"},
                {"2024-01-01T00:00:00Z ", GP_UNIT_MS, "trailing"},
                {"2024-01-01T00:00:00ZZ", GP_UNIT_MS, "trailing"},
                {"2024-01-01T00:00:00+01:00:00", GP_UNIT_MS, "trailing"},
                {"2024-01-01", GP_UNIT_MS, "short"},
                {"2024-1-01T00:00:00.0Z", GP_UNIT_MS, "YYYY-MM-DD"},
                {"2024-01-01X00:00:00Z", GP_UNIT_MS, "'T'"},
                {"2024-01-01T00:00Z", GP_UNIT_MS, "short"},
                {"2024-01-01T0:00:00.0Z", GP_UNIT_MS, "HH:MM:SS"},
                {"2024-01-01T00.00.00Z", GP_UNIT_MS, "HH:MM:SS"},
                {"-024-01-01T00:00:00Z", GP_UNIT_MS, "YYYY-MM-DD"},
                {"+2024-01-01T00:00:00Z", GP_UNIT_MS, "number"},
                {"12024-01-01T00:00:00Z", GP_UNIT_MS, "trailing"}, /* 5-digit year */
                {" 2024-01-01T00:00:00Z", GP_UNIT_MS, "number"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                const struct tp_bad *c = &cases[k];
                int64_t ms = 42;
                const char *why = NULL;
                int rc = gp_time_parse(c->in, strlen(c->in), c->unit, &ms, &why);
                cr_assert_eq(rc, -1, "\"%s\" (unit %d): accepted as %lld", c->in, (int)c->unit,
                             (long long)ms);
                cr_assert_eq(ms, 42, "\"%s\": output written on failure", c->in);
                cr_assert_not_null(why, "\"%s\": no reason", c->in);
                cr_assert_not_null(strstr(why, c->why), "\"%s\": reason \"%s\" lacks \"%s\"",
                                   c->in, why, c->why);
        }
}

Test(timeparse, from_int) {
        static const struct {
                int64_t v;
                gp_unit_t unit;
                int ok;
                int64_t want;
        } cases[] = {
                {5, GP_UNIT_MS, 1, 5},
                {INT64_MIN, GP_UNIT_MS, 1, INT64_MIN},
                {5, GP_UNIT_S, 1, 5000},
                {-5, GP_UNIT_S, 1, -5000},
                {INT64_MAX / 1000, GP_UNIT_S, 1, INT64_MAX / 1000 * 1000},
                {INT64_MAX / 1000 + 1, GP_UNIT_S, 0, 0},
                {INT64_MIN / 1000 - 1, GP_UNIT_S, 0, 0},
                {1999, GP_UNIT_US, 1, 1},
                {-1, GP_UNIT_US, 1, -1},
                {-1000, GP_UNIT_US, 1, -1},
                {-1001, GP_UNIT_US, 1, -2},
                {INT64_MIN, GP_UNIT_US, 1, -9223372036854776LL},
                {1, (gp_unit_t)7, 0, 0},
        };
        for (size_t k = 0; k < N(cases); k++) {
                int64_t ms = 42;
                const char *why = NULL;
                int rc = gp_time_from_int(cases[k].v, cases[k].unit, &ms, &why);
                if (cases[k].ok) {
                        cr_assert_eq(rc, 0, "case %zu rejected: %s", k, why ? why : "?");
                        cr_assert_eq(ms, cases[k].want, "case %zu: got %lld", k,
                                     (long long)ms);
                } else {
                        cr_assert_eq(rc, -1, "case %zu accepted as %lld", k, (long long)ms);
                        cr_assert_not_null(why);
                }
        }
}

Test(timeparse, format) {
        static const struct {
                int64_t ms;
                const char *want;
        } cases[] = {
                {0, "1970-01-01T00:00:00.000Z"},
                {1, "1970-01-01T00:00:00.001Z"},
                {1500, "1970-01-01T00:00:01.500Z"},
                {-1, "1969-12-31T23:59:59.999Z"},
                {-1000, "1969-12-31T23:59:59.000Z"},
                {-86400000, "1969-12-31T00:00:00.000Z"},
                {-86400001, "1969-12-30T23:59:59.999Z"},
                {1796219957000LL, "2026-12-02T13:59:17.000Z"},
                {1709208000000LL, "2024-02-29T12:00:00.000Z"},
                {1709251199999LL, "2024-02-29T23:59:59.999Z"},
                {-2208988800000LL, "1900-01-01T00:00:00.000Z"},
                {-62167219200000LL, "0000-01-01T00:00:00.000Z"},
                {-62167219200001LL, "-0001-12-31T23:59:59.999Z"},
                {253402300799999LL, "9999-12-31T23:59:59.999Z"},
                {INT64_MAX, "292278994-08-17T07:12:55.807Z"},
                {INT64_MIN, "-292275055-05-16T16:47:04.192Z"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                char buf[32];
                memset(buf, 'x', sizeof buf);
                char *r = gp_time_format(cases[k].ms, buf, sizeof buf);
                cr_assert_eq(r, buf);
                cr_assert_str_eq(buf, cases[k].want, "%lld", (long long)cases[k].ms);
        }
}

Test(timeparse, format_truncates_to_buffer) {
        char buf[8];
        gp_time_format(0, buf, sizeof buf);
        cr_assert_str_eq(buf, "1970-01");
        cr_assert_null(gp_time_format(0, NULL, 0));
}

/* gp_time_format(gp_time_parse(x)) is the canonical UTC spelling of x, and
 * parsing that again gives the same ms. */
Test(timeparse, round_trip) {
        static const struct {
                const char *in;
                gp_unit_t unit;
                const char *want;
        } cases[] = {
                {"2026-12-02T13:59:17Z", GP_UNIT_MS, "2026-12-02T13:59:17.000Z"},
                {"2026-12-02T15:59:17.25+02:00", GP_UNIT_MS, "2026-12-02T13:59:17.250Z"},
                {"2026-12-02T08:29:17.123999-05:30", GP_UNIT_MS, "2026-12-02T13:59:17.123Z"},
                {"2024-03-01T00:30:00+01:00", GP_UNIT_MS, "2024-02-29T23:30:00.000Z"},
                {"2024-12-31T23:00:00-01:00", GP_UNIT_MS, "2025-01-01T00:00:00.000Z"},
                {"1969-12-31T23:59:59.9995Z", GP_UNIT_MS, "1969-12-31T23:59:59.999Z"},
                {"1960-06-15 12:00:00z", GP_UNIT_MS, "1960-06-15T12:00:00.000Z"},
                {"0000-01-01T00:00:00Z", GP_UNIT_MS, "0000-01-01T00:00:00.000Z"},
                {"9999-12-31T23:59:59.999Z", GP_UNIT_MS, "9999-12-31T23:59:59.999Z"},
                {"1700000000123", GP_UNIT_MS, "2023-11-14T22:13:20.123Z"},
                {"-1.5", GP_UNIT_S, "1969-12-31T23:59:58.500Z"},
                {"1700000000123456", GP_UNIT_US, "2023-11-14T22:13:20.123Z"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                int64_t ms, again;
                char buf[32];
                const char *why = NULL;
                cr_assert_eq(gp_time_parse(cases[k].in, strlen(cases[k].in), cases[k].unit,
                                           &ms, &why),
                             0, "\"%s\": %s", cases[k].in, why ? why : "?");
                gp_time_format(ms, buf, sizeof buf);
                cr_assert_str_eq(buf, cases[k].want, "\"%s\"", cases[k].in);
                cr_assert_eq(gp_time_parse(buf, strlen(buf), GP_UNIT_MS, &again, &why), 0,
                             "\"%s\": %s", buf, why ? why : "?");
                cr_assert_eq(again, ms, "\"%s\" -> \"%s\" -> %lld, want %lld", cases[k].in,
                             buf, (long long)again, (long long)ms);
        }
}

/* Every day of 1600-2400 formats and parses back to itself: checks the two
 * calendar directions against each other, leap rules included. */
Test(timeparse, every_day_round_trips) {
        int64_t first = -11676096000000LL; /* 1600-01-01 */
        int64_t last = 13569465600000LL;   /* 2400-01-01 */
        int64_t prev_day = 0;
        int n = 0;
        for (int64_t ms = first; ms < last; ms += 86400000LL, n++) {
                char buf[32];
                int64_t again;
                const char *why = NULL;
                int64_t t = ms + 86399999LL; /* last ms of the day */
                gp_time_format(t, buf, sizeof buf);
                cr_assert_eq(gp_time_parse(buf, strlen(buf), GP_UNIT_MS, &again, &why), 0,
                             "%s: %s", buf, why ? why : "?");
                cr_assert_eq(again, t, "%s", buf);
                int64_t day = (buf[8] - '0') * 10 + (buf[9] - '0');
                cr_assert(day == prev_day + 1 || day == 1, "%s after day %lld", buf,
                          (long long)prev_day);
                prev_day = day;
        }
        cr_assert_eq(n, 292194); /* 800 years = 2 * 146097 days */
}
