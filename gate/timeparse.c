/* gate/timeparse.c: strict integer and event-time parsing, and the RFC 3339
 * formatter used in logs and tests. Owns the calendar arithmetic (days from
 * civil and back, proleptic Gregorian, UTC). May not depend on anything but
 * libc, and from libc not on the time functions (timegm, mktime, gmtime):
 * they read TZ and are not needed for UTC arithmetic.
 *
 * Accepted inputs, exactly:
 *   integers   -?(0|[1-9][0-9]*), fitting int64; "-0" is 0.
 *   GP_UNIT_S  an integer as above, optionally ".[0-9]+" (any number of
 *              digits; digits past the millisecond are dropped, which is
 *              truncation toward negative infinity: "-1.0005" = -1001 ms).
 *   RFC 3339   YYYY-MM-DD(T|t| )HH:MM:SS[.[0-9]+](Z|z|+HH:MM|-HH:MM),
 *              years 0000-9999, real month lengths and leap years,
 *              hour <= 23, minute <= 59, second <= 59. A leap second
 *              (:60) is refused everywhere: without a leap-second table
 *              we cannot tell a real one from a typo, and POSIX time has
 *              no place for it. Offsets up to +-23:59; "-00:00" is UTC.
 * No whitespace anywhere (the space separator above is the only one), no
 * '+' on numbers, the whole input must be consumed. */
#include "gate/timeparse.h"

#include <stdio.h>
#include <string.h>

#define MS_PER_DAY 86400000LL

static int fail(const char **why, const char *reason) {
        if (why)
                *why = reason;
        return GP_PARSE_SYNTAX;
}

static int out_of_range(const char **why) {
        if (why)
                *why = "integer overflow";
        return GP_PARSE_RANGE;
}

static inline int is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* Eight ASCII digits in a little-endian word (byte 0 the first): whether
 * they are all '0'-'9' (no byte carries into the next unless a byte
 * already failed the high-nibble test), and their value. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GP_SWAR8 1
static inline int eight_digits(uint64_t w) {
        return ((w & UINT64_C(0xF0F0F0F0F0F0F0F0)) |
                (((w + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) >> 4)) ==
               UINT64_C(0x3333333333333333);
}

static inline uint64_t eight_value(uint64_t w) {
        w = (w & UINT64_C(0x0F0F0F0F0F0F0F0F)) * 2561 >> 8;
        w = (w & UINT64_C(0x00FF00FF00FF00FF)) * 6553601 >> 16;
        return (w & UINT64_C(0x0000FFFF0000FFFF)) * UINT64_C(42949672960001) >> 32;
}
#else
#define GP_SWAR8 0
#endif

/* Reads -?(0|[1-9][0-9]*) from s[*i..len) into a magnitude check that keeps
 * int64 range; advances *i past the digits. */
static int read_int(const char *s, size_t len, size_t *i, int64_t *out, const char **why) {
        size_t p = *i;
        int neg = 0;
        if (p < len && s[p] == '-') {
                neg = 1;
                p++;
        }
        if (p >= len)
                return fail(why, "no digits");
        if (!is_digit(s[p]))
                return fail(why, "not a number");
        if (s[p] == '0' && p + 1 < len && is_digit(s[p + 1]))
                return fail(why, "leading zero");
        /* Up to 18 digits cannot overflow: no check per digit, and eight
         * at a time where a word can be read as eight bytes in order. */
        size_t lim = len - p > 18 ? p + 18 : len;
        uint64_t u = 0;
        size_t q = p;
#if GP_SWAR8
        while (lim - q >= 8) {
                uint64_t w;
                memcpy(&w, s + q, 8);
                if (!eight_digits(w))
                        break;
                u = u * 100000000 + eight_value(w);
                q += 8;
        }
#endif
        for (; q < lim && is_digit(s[q]); q++)
                u = u * 10 + (uint64_t)(s[q] - '0');
        if (q == len || !is_digit(s[q])) {
                *out = neg ? -(int64_t)u : (int64_t)u;
                *i = q;
                return 0;
        }
        /* 19 digits or more: accumulate negatively, -INT64_MIN does not
         * fit, INT64_MIN does. */
        int64_t v = 0;
        for (; p < len && is_digit(s[p]); p++) {
                int d = s[p] - '0';
                if (v < (INT64_MIN + d) / 10)
                        return out_of_range(why);
                v = v * 10 - d;
        }
        if (!neg) {
                if (v == INT64_MIN)
                        return out_of_range(why);
                v = -v;
        }
        *out = v;
        *i = p;
        return 0;
}

int gp_parse_i64(const char *s, size_t len, int64_t *out, const char **why) {
        size_t i = 0;
        int64_t v;
        if (!s || len == 0)
                return fail(why, "empty");
        int rc = read_int(s, len, &i, &v, why);
        if (rc != 0)
                return rc;
        if (i != len)
                return fail(why, "trailing characters after the number");
        if (out)
                *out = v;
        return 0;
}

static int64_t floor_div(int64_t a, int64_t b) {
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0)))
                q--;
        return q;
}

int gp_time_from_int(int64_t v, gp_unit_t unit, int64_t *out_ms, const char **why) {
        int64_t ms;
        switch (unit) {
        case GP_UNIT_MS:
                ms = v;
                break;
        case GP_UNIT_S:
                if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
                        return fail(why, "seconds overflow int64 milliseconds");
                ms = v * 1000;
                break;
        case GP_UNIT_US:
                ms = floor_div(v, 1000);
                break;
        default:
                return fail(why, "unknown unit");
        }
        if (out_ms)
                *out_ms = ms;
        return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil); valid for any year that fits, no overflow for
 * |y| < 2^40. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
        y -= m <= 2;
        int64_t era = floor_div(y, 400);
        unsigned yoe = (unsigned)(y - era * 400);
        unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + (int64_t)doe - 719468;
}

/* The inverse: a day number to year, month (1-12), day (1-31). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
        z += 719468;
        int64_t era = floor_div(z, 146097);
        unsigned doe = (unsigned)(z - era * 146097);
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        unsigned mp = (5 * doy + 2) / 153;
        *d = doy - (153 * mp + 2) / 5 + 1;
        *m = mp < 10 ? mp + 3 : mp - 9;
        *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static unsigned days_in_month(unsigned y, unsigned m) {
        static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
                return 29;
        return dim[m - 1];
}

/* Exactly n digits at s[i..]; the caller has checked the length. */
static int digits(const char *s, size_t i, int n, unsigned *out) {
        unsigned v = 0;
        for (int k = 0; k < n; k++) {
                if (!is_digit(s[i + k]))
                        return -1;
                v = v * 10 + (unsigned)(s[i + k] - '0');
        }
        *out = v;
        return 0;
}

static int parse_rfc3339(const char *s, size_t len, int64_t *out_ms, const char **why) {
        unsigned y, mo, d, h, mi, sec, oh = 0, om = 0;
        int64_t frac_ms = 0;
        size_t i;

        /* "YYYY-MM-DDTHH:MM:SS" is 19 bytes; the offset is checked below. */
        if (len < 19)
                return fail(why, "RFC 3339 time too short");
        if (digits(s, 0, 4, &y) || s[4] != '-' || digits(s, 5, 2, &mo) || s[7] != '-' ||
            digits(s, 8, 2, &d))
                return fail(why, "RFC 3339 date is not YYYY-MM-DD");
        if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
                return fail(why, "RFC 3339 date and time not separated by 'T'");
        if (digits(s, 11, 2, &h) || s[13] != ':' || digits(s, 14, 2, &mi) || s[16] != ':' ||
            digits(s, 17, 2, &sec))
                return fail(why, "RFC 3339 time is not HH:MM:SS");
        if (mo < 1 || mo > 12)
                return fail(why, "month out of range");
        if (d < 1 || d > days_in_month(y, mo))
                return fail(why, "day out of range for the month");
        if (h > 23)
                return fail(why, "hour out of range");
        if (mi > 59)
                return fail(why, "minute out of range");
        if (sec == 60)
                return fail(why, "leap second (:60) not supported");
        if (sec > 59)
                return fail(why, "second out of range");

        i = 19;
        if (i < len && s[i] == '.') {
                int n = 0;
                i++;
                while (i < len && is_digit(s[i])) {
                        if (n < 3)
                                frac_ms = frac_ms * 10 + (s[i] - '0');
                        n++;
                        i++;
                }
                if (n == 0)
                        return fail(why, "no digits after the decimal point");
                for (; n < 3; n++)
                        frac_ms *= 10;
        }
        if (i >= len)
                return fail(why, "missing time zone offset");

        int sign = 0;
        if (s[i] == 'Z' || s[i] == 'z') {
                i++;
        } else if (s[i] == '+' || s[i] == '-') {
                sign = s[i] == '-' ? -1 : 1;
                if (len - i < 6 || digits(s, i + 1, 2, &oh) || s[i + 3] != ':' ||
                    digits(s, i + 4, 2, &om))
                        return fail(why, "time zone offset is not +HH:MM or -HH:MM");
                if (oh > 23 || om > 59)
                        return fail(why, "time zone offset out of range");
                i += 6;
        } else {
                return fail(why, "missing time zone offset");
        }
        if (i != len)
                return fail(why, "trailing characters after the time");

        /* Bounded by the checks above: |result| < 2^58, no overflow. */
        int64_t days = days_from_civil(y, mo, d);
        int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec -
                       (int64_t)sign * (oh * 3600 + om * 60);
        if (out_ms)
                *out_ms = secs * 1000 + frac_ms;
        return 0;
}

/* Seconds with an optional fraction: "-12.345678" = -12345.678 ms,
 * floored to -12346. */
static int parse_seconds(const char *s, size_t len, int64_t *out_ms, const char **why) {
        size_t i = 0;
        int64_t v, ms;
        if (read_int(s, len, &i, &v, why) != 0)
                return -1;
        if (gp_time_from_int(v, GP_UNIT_S, &ms, why) != 0)
                return -1;
        if (i == len) {
                if (out_ms)
                        *out_ms = ms;
                return 0;
        }
        if (s[i] != '.')
                return fail(why, "trailing characters after the number");
        i++;
        int n = 0, more = 0;
        int64_t frac = 0;
        for (; i < len && is_digit(s[i]); i++, n++) {
                if (n < 3)
                        frac = frac * 10 + (s[i] - '0');
                else if (s[i] != '0')
                        more = 1;
        }
        if (n == 0)
                return fail(why, "no digits after the decimal point");
        if (i != len)
                return fail(why, "trailing characters after the number");
        for (; n < 3; n++)
                frac *= 10;
        /* The sign of the number applies to the fraction too. */
        if (s[0] == '-') {
                frac = -frac - more;
                if (ms < INT64_MIN - frac)
                        return fail(why, "seconds overflow int64 milliseconds");
        } else if (ms > INT64_MAX - frac) {
                return fail(why, "seconds overflow int64 milliseconds");
        }
        if (out_ms)
                *out_ms = ms + frac;
        return 0;
}

#if GP_SWAR8
/* 8 to 16 digits, the first not 0 (an epoch count in ms, us or s: the
 * common event time): two words, the second ending at len and read with
 * the bytes it shares with the first as '0'. 0 with *v, or -1: not of
 * that shape, the general path decides. */
static int short_count(const char *s, size_t len, int64_t *v) {
        static const uint64_t pow10[9] = {1,      10,      100,      1000,     10000,
                                          100000, 1000000, 10000000, 100000000};
        uint64_t a, b;
        if (len < 8 || len > 16 || s[0] == '0')
                return -1;
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        if (!eight_digits(a) || !eight_digits(b))
                return -1;
        unsigned shared = (unsigned)(16 - len) * 8; /* bits */
        uint64_t m = shared == 64 ? ~UINT64_C(0) : (UINT64_C(1) << shared) - 1;
        b = (b & ~m) | (UINT64_C(0x3030303030303030) & m);
        *v = (int64_t)(eight_value(a) * pow10[len - 8] + eight_value(b));
        return 0;
}
#endif

int gp_time_parse(const char *s, size_t len, gp_unit_t unit, int64_t *out_ms,
                  const char **why) {
        int64_t v;
        if (!s || len == 0)
                return fail(why, "empty");
#if GP_SWAR8
        /* what parse_seconds and gp_parse_i64 make of it, without the
         * digit loop */
        if (short_count(s, len, &v) == 0)
                return gp_time_from_int(v, unit, out_ms, why);
#endif
        /* A number never has '-' at index 4 (it can only lead), a date
         * always does. */
        if (len > 4 && s[4] == '-')
                return parse_rfc3339(s, len, out_ms, why);
        if (unit == GP_UNIT_S)
                return parse_seconds(s, len, out_ms, why);
        if (gp_parse_i64(s, len, &v, why) != 0)
                return -1;
        return gp_time_from_int(v, unit, out_ms, why);
}

char *gp_time_format(int64_t ms, char *buf, size_t len) {
        /* Floor division without forming days * MS_PER_DAY, which would
         * overflow near INT64_MIN. */
        int64_t days = ms / MS_PER_DAY;
        int64_t rem = ms % MS_PER_DAY;
        int64_t y;
        unsigned m, d;
        if (!buf || len == 0)
                return buf;
        if (rem < 0) {
                rem += MS_PER_DAY; /* now 0 .. MS_PER_DAY-1 */
                days--;
        }
        civil_from_days(days, &y, &m, &d);
        unsigned msec = (unsigned)(rem % 1000);
        unsigned sec = (unsigned)(rem / 1000 % 60);
        unsigned min = (unsigned)(rem / 60000 % 60);
        unsigned hour = (unsigned)(rem / 3600000);
        /* Years outside 0000-9999 (only reachable from ms outside what
         * gp_time_parse returns for dates) get a sign, ISO 8601 style. */
        snprintf(buf, len, "%s%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", y < 0 ? "-" : "",
                 (long long)(y < 0 ? -y : y), m, d, hour, min, sec, msec);
        return buf;
}
