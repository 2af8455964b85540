/* gate/timeparse.h: the one strict parser for event times and integers.
 * Pure: libc only; never reads a clock. */
#ifndef GP_GATE_TIMEPARSE_H
#define GP_GATE_TIMEPARSE_H

#include <stddef.h>
#include <stdint.h>

/* How to read a bare number. */
typedef enum {
        GP_UNIT_MS = 0, /* epoch milliseconds */
        GP_UNIT_S,      /* epoch seconds (a fraction is allowed: 1.5 = 1500 ms) */
        GP_UNIT_US,     /* epoch microseconds (truncated to ms, toward -inf) */
} gp_unit_t;

/* What gp_parse_i64 found wrong: not a number as written, or a number
 * that does not fit in 64 bits (a caller can tell the user "too large"). */
enum { GP_PARSE_SYNTAX = -1, GP_PARSE_RANGE = -2 };

/* Parses a decimal integer, the whole of s[0..len): optional '-', digits,
 * nothing else (no spaces, no '+', no leading zeros beyond a lone "0").
 * 0 on success; GP_PARSE_SYNTAX or GP_PARSE_RANGE with *why set to a
 * static reason. */
int gp_parse_i64(const char *s, size_t len, int64_t *out, const char **why);

/* Parses an event time to epoch milliseconds: either a number in `unit`
 * (integer, or for GP_UNIT_S a decimal fraction) or an RFC 3339 date-time
 * "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)" ('t'/'z' and a space for
 * 'T' are accepted). Rejects trailing garbage, overflow, impossible dates
 * (Feb 30, hour 24, month 13), and leap seconds other than :60 at the end
 * of a day are refused. 0 on success; -1 with *why set to a static reason.
 * Note: the implementation refuses every leap second, :60 included (no
 * leap-second table; POSIX time has no place for it). Fractions of any
 * length are truncated to ms toward negative infinity; years 0000-9999;
 * offsets up to +-23:59. See the comment at the top of timeparse.c. */
int gp_time_parse(const char *s, size_t len, gp_unit_t unit, int64_t *out_ms,
                  const char **why);

/* Converts a number already read as an integer in `unit` to ms, checking
 * overflow. 0 on success, -1 with *why. */
int gp_time_from_int(int64_t v, gp_unit_t unit, int64_t *out_ms, const char **why);

/* Formats epoch ms as RFC 3339 UTC with milliseconds
 * ("2026-12-02T13:59:17.000Z") into buf (at least 32 bytes).
 * Returns buf. */
char *gp_time_format(int64_t ms, char *buf, size_t len);

#endif
