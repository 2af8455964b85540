/* gate/jsonpath.c: compiles "a.b[0].c" paths and finds one value in raw JSON
 * bytes in a single forward pass: no tree, no allocation, no recursion (an
 * explicit depth counter and a 64-bit object/array stack). Owns the JSON
 * grammar check used on the hot path. May not depend on anything but libc.
 *
 * What the scanner guarantees:
 *   - Every byte it reads is checked against the JSON grammar (RFC 8259):
 *     strings (escapes, \uXXXX shape, no raw control bytes), numbers,
 *     true/false/null, objects, arrays, whitespace (space, tab, CR, LF).
 *   - It reads up to the answer and stops: after the value found, it checks
 *     only that the next non-blank byte is ',' or the closing bracket; on a
 *     missing key it stops at the end of the object that lacks it. Bytes
 *     after that point are not read, so "{"a":1} junk" finds "a".
 *   - Duplicate keys: the first match wins (and if its value does not fit
 *     the rest of the path, the result is MISSING; later duplicates are not
 *     tried).
 *   - Keys are compared with the raw bytes between the quotes, escapes not
 *     decoded. UTF-8 is not validated; \u escapes are checked for shape,
 *     not for surrogate pairing.
 *   - The root must be an object or an array. Nesting deeper than
 *     GP_JSON_MAX_DEPTH containers (the root counts as 1) is
 *     GP_JSON_ERR_DEPTH.
 *   - A path segment that meets the wrong kind of value ("a.b" where a is a
 *     number, "a[0]" where a is an object) is MISSING, after that value has
 *     been validated.
 *
 * Cost, measured with callgrind (x86-64, gcc 12, -O2): finding meta.ts in
 * bench/cost.sh's 198-byte compact record (meta after four members, one
 * an object and one an array; ts after one: about 40 tokens up to the
 * answer) takes about 1,190 instructions, about 30 a token. The string
 * scan (a byte class table, unrolled by four) is about a third of it:
 * keys and short values are a few bytes each, where a 16-byte SSE2
 * compare saved under 2 % and word-at-a-time tricks measured slower.
 * Digit runs are read eight bytes a step. Checking every byte up to the
 * answer is what the cost is made of: each token costs its dispatch and
 * its bytes. */
#include "gate/jsonpath.h"

#include <stdio.h>
#include <string.h>

/* The scanner helpers below are small and sit on the hot path of every
 * record: ask for them to be inlined (a call per token costs more than the
 * token). The index-returning style (0 = error; a valid index after a token
 * is never 0) keeps the position in a register. */
#if defined(__GNUC__)
#define GP_HOT static inline __attribute__((always_inline))
#else
#define GP_HOT static inline
#endif

/* Byte classes: a constant table (read-only data, not state). */
#define C_WS   1 /* JSON whitespace */
#define C_STOP 2 /* stops the fast string scan: '"', '\\', bytes < 0x20 */
#define C_HEX  4 /* hexadecimal digit */
#define C_DIG  8 /* decimal digit */

#define S1 C_STOP
#define WS (C_WS | C_STOP)
#define HX C_HEX
#define DG (C_HEX | C_DIG)
static const unsigned char ctab[256] = {
        S1,   S1, S1, S1, S1, S1, S1, S1, S1, WS, WS, S1, S1, WS, S1, S1, /* 0x00 */
        S1,   S1, S1, S1, S1, S1, S1, S1, S1, S1, S1, S1, S1, S1, S1, S1, /* 0x10 */
        C_WS, 0,  S1, 0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* 0x20 */
        DG,   DG, DG, DG, DG, DG, DG, DG, DG, DG, 0,  0,  0,  0,  0,  0,  /* 0x30 */
        0,    HX, HX, HX, HX, HX, HX, 0,  0,  0,  0,  0,  0,  0,  0,  0,  /* 0x40 */
        0,    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  S1, 0,  0,  0,  /* 0x50 */
        0,    HX, HX, HX, HX, HX, HX, 0,  0,  0,  0,  0,  0,  0,  0,  0,  /* 0x60 */
        /* 0x70-0xff: 0 */
};
#undef S1
#undef WS
#undef HX
#undef DG

#define CLS(c) ctab[(unsigned char)(c)]

/* Advances i over whitespace. */
#define SKIP_WS(d, len, i)                                                                    \
        do {                                                                                  \
                while ((i) < (len) && (CLS((d)[i]) & C_WS))                                   \
                        (i)++;                                                                \
        } while (0)

/* The first i' >= i with d[i'] '"', '\\' or a control byte, or len.
 * Byte by byte through the class table, unrolled by four: JSON keys and
 * values are mostly short, where this beats word-at-a-time tricks. */
GP_HOT size_t find_stop(const char *d, size_t len, size_t i) {
        while (len - i >= 4) {
                if (CLS(d[i]) & C_STOP)
                        return i;
                if (CLS(d[i + 1]) & C_STOP)
                        return i + 1;
                if (CLS(d[i + 2]) & C_STOP)
                        return i + 2;
                if (CLS(d[i + 3]) & C_STOP)
                        return i + 3;
                i += 4;
        }
        while (i < len && !(CLS(d[i]) & C_STOP))
                i++;
        return i;
}

/* The rest of a string from d[i], a byte find_stop stopped at that is not
 * the closing quote: escapes, or an error. Out of line: rare. */
static size_t scan_string_slow(const char *d, size_t len, size_t i) {
        for (;;) {
                if (i >= len)
                        return 0;
                if (d[i] == '"')
                        return i + 1;
                if (d[i] != '\\' || i + 1 >= len)
                        return 0; /* raw control byte, or a dangling '\' */
                switch (d[i + 1]) {
                case '"':
                case '\\':
                case '/':
                case 'b':
                case 'f':
                case 'n':
                case 'r':
                case 't':
                        i += 2;
                        break;
                case 'u':
                        if (len - i < 6 || !(CLS(d[i + 2]) & C_HEX) ||
                            !(CLS(d[i + 3]) & C_HEX) || !(CLS(d[i + 4]) & C_HEX) ||
                            !(CLS(d[i + 5]) & C_HEX))
                                return 0;
                        i += 6;
                        break;
                default:
                        return 0;
                }
                i = find_stop(d, len, i);
        }
}

/* d[i] is an opening quote: the index past the closing one, or 0. */
GP_HOT size_t scan_string(const char *d, size_t len, size_t i) {
        i = find_stop(d, len, i + 1);
        if (i < len && d[i] == '"')
                return i + 1;
        return scan_string_slow(d, len, i);
}

/* The first i' >= i with d[i'] not a digit, or len. Eight bytes per step
 * where eight are left: a byte is a digit when its high nibble is 3 and
 * stays 3 after adding 6; the first byte that is not one ends the run (a
 * carry from a byte into the next can only come from a byte that is not
 * a digit, so the bytes before it are read as they are). */
GP_HOT size_t skip_digits(const char *d, size_t len, size_t i) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (len - i >= 8) {
                uint64_t w, t;
                memcpy(&w, d + i, 8);
                /* a zero byte for each digit */
                t = ((w & UINT64_C(0xF0F0F0F0F0F0F0F0)) |
                     (((w + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) >>
                      4)) ^
                    UINT64_C(0x3333333333333333);
                if (t) {
                        /* bit 7 of each byte that is not zero */
                        t = (((t & UINT64_C(0x7F7F7F7F7F7F7F7F)) +
                              UINT64_C(0x7F7F7F7F7F7F7F7F)) |
                             t) &
                            UINT64_C(0x8080808080808080);
                        return i + ((size_t)__builtin_ctzll(t) >> 3);
                }
                i += 8;
        }
#endif
        while (i < len && (CLS(d[i]) & C_DIG))
                i++;
        return i;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from d[i] (i < len): the
 * index past it, or 0. */
GP_HOT size_t scan_number(const char *d, size_t len, size_t i) {
        if (d[i] == '-')
                i++;
        if (i >= len || !(CLS(d[i]) & C_DIG))
                return 0;
        if (d[i] == '0')
                i++;
        else
                i = skip_digits(d, len, i + 1);
        if (i < len && d[i] == '.') {
                i++;
                if (i >= len || !(CLS(d[i]) & C_DIG))
                        return 0;
                i = skip_digits(d, len, i + 1);
        }
        if (i < len && (d[i] == 'e' || d[i] == 'E')) {
                i++;
                if (i < len && (d[i] == '+' || d[i] == '-'))
                        i++;
                if (i >= len || !(CLS(d[i]) & C_DIG))
                        return 0;
                i = skip_digits(d, len, i + 1);
        }
        return i;
}

/* true, false or null at d[i] (i < len): the index past it, or 0. */
static size_t scan_literal(const char *d, size_t len, size_t i) {
        const size_t left = len - i;
        switch (d[i]) {
        case 't':
                if (left >= 4 && d[i + 1] == 'r' && d[i + 2] == 'u' && d[i + 3] == 'e')
                        return i + 4;
                return 0;
        case 'f':
                if (left >= 5 && d[i + 1] == 'a' && d[i + 2] == 'l' && d[i + 3] == 's' &&
                    d[i + 4] == 'e')
                        return i + 5;
                return 0;
        case 'n':
                if (left >= 4 && d[i + 1] == 'u' && d[i + 2] == 'l' && d[i + 3] == 'l')
                        return i + 4;
                return 0;
        default:
                return 0;
        }
}

/* Compact JSON has no blanks, so the scanner first tests for the byte it
 * expects and only skips blanks when that fails.
 * EXPECT: steps i past `ch`, blanks before it allowed; else runs `fail`. */
#define EXPECT(d, len, i, ch, fail)                                                           \
        do {                                                                                  \
                if (!((i) < (len) && (d)[i] == (ch))) {                                       \
                        SKIP_WS(d, len, i);                                                   \
                        if ((i) >= (len) || (d)[i] != (ch))                                   \
                                fail;                                                         \
                }                                                                             \
                (i)++;                                                                        \
        } while (0)

/* Validates and steps over one value starting at or after d[i] (blanks
 * allowed before it), which sits inside `depth` open containers: the index
 * past it, or 0 with *rc set. Iterative: bit k of `obj` says whether the
 * k-th container opened here is an object; n of them are open,
 * depth + n <= GP_JSON_MAX_DEPTH <= 64. */
GP_HOT size_t skip_value(const char *d, size_t len, size_t i, int depth, gp_json_rc_t *rc) {
        uint64_t obj = 0;
        int n = 0;

value:
        if (i >= len)
                goto syntax;
        if (d[i] == '"') { /* the common value first, before the switch */
                if ((i = scan_string(d, len, i)) == 0)
                        goto syntax;
                goto after;
        }
        switch (d[i]) {
        case ' ':
        case '\t':
        case '\n':
        case '\r':
                i++;
                goto value;
        case '"':
                i = scan_string(d, len, i);
                break;
        case '{':
        case '[':
                if (depth + n >= GP_JSON_MAX_DEPTH) {
                        *rc = GP_JSON_ERR_DEPTH;
                        return 0;
                }
                n++;
                obj = obj << 1 | (d[i] == '{');
                i++;
                SKIP_WS(d, len, i);
                if (i < len && d[i] == ((obj & 1) ? '}' : ']')) {
                        i++;
                        goto close;
                }
                if (obj & 1)
                        goto key;
                goto value;
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9':
                i = scan_number(d, len, i);
                break;
        default:
                i = scan_literal(d, len, i);
                break;
        }
        if (i == 0)
                goto syntax;
        goto after;

key:
        EXPECT(d, len, i, '"', goto syntax);
        if ((i = scan_string(d, len, i - 1)) == 0)
                goto syntax;
        EXPECT(d, len, i, ':', goto syntax);
        goto value;

close:
        n--;
        obj >>= 1;
after:
        if (n == 0)
                return i;
        if (!(i < len && d[i] == ',')) {
                SKIP_WS(d, len, i);
                if (i >= len)
                        goto syntax;
                if (d[i] == ((obj & 1) ? '}' : ']')) {
                        i++;
                        goto close;
                }
                if (d[i] != ',')
                        goto syntax;
        }
        i++;
        if (obj & 1)
                goto key;
        goto value;

syntax:
        *rc = GP_JSON_ERR_SYNTAX;
        return 0;
}

/* skip_value out of line, for the places that are not on every record's
 * way (a value found, a segment that does not fit). */
static size_t skip_value_cold(const char *d, size_t len, size_t i, int depth,
                              gp_json_rc_t *rc) {
        return skip_value(d, len, i, depth, rc);
}

/* Steps over the member value or element at or after d[i] that the path
 * does not want, and the ',' after it: the index past the ',', or 0 with
 * *rc set to MISSING (the container's `closer` came instead) or an error.
 * The common scalars are handled here without the general skipper. */
GP_HOT size_t skip_sibling(const char *d, size_t len, size_t i, int depth, char closer,
                           gp_json_rc_t *rc) {
        if (i < len && d[i] == '"')
                i = scan_string(d, len, i);
        else if (i < len && (CLS(d[i]) & C_DIG))
                i = scan_number(d, len, i);
        else if ((i = skip_value(d, len, i, depth, rc)) == 0)
                return 0;
        if (i == 0)
                goto syntax;
        if (!(i < len && d[i] == ',')) {
                SKIP_WS(d, len, i);
                if (i >= len)
                        goto syntax;
                if (d[i] != ',') {
                        if (d[i] != closer)
                                goto syntax;
                        *rc = GP_JSON_ERR_MISSING;
                        return 0;
                }
        }
        return i + 1;
syntax:
        *rc = GP_JSON_ERR_SYNTAX;
        return 0;
}

/* The value at the end of the path starts at d[i] (i < len, not blank),
 * inside `depth` containers, the innermost closed by `closer`. */
static gp_json_rc_t take_value(const char *d, size_t len, size_t i, int depth, char closer,
                               gp_jval_t *out) {
        size_t start = i;
        gp_jval_t v = {0};
        gp_json_rc_t rc;
        char c = d[i];

        if (c == '"') {
                if ((i = scan_string(d, len, i)) == 0)
                        return GP_JSON_ERR_SYNTAX;
                v.type = GP_JSON_STRING;
                v.ptr = d + start + 1;
                v.len = i - start - 2;
                v.has_escapes = memchr(v.ptr, '\\', v.len) != NULL;
        } else if (c == '-' || (CLS(c) & C_DIG)) {
                if ((i = scan_number(d, len, i)) == 0)
                        return GP_JSON_ERR_SYNTAX;
                v.type = GP_JSON_NUMBER;
                v.ptr = d + start;
                v.len = i - start;
        } else {
                if ((i = skip_value_cold(d, len, i, depth, &rc)) == 0)
                        return rc;
                v.type = GP_JSON_OTHER;
                v.ptr = d + start;
                v.len = i - start;
        }
        /* The value must end where the grammar says it does: "12x" or
         * "truex" are not a 12 or a true. */
        SKIP_WS(d, len, i);
        if (i >= len || (d[i] != ',' && d[i] != closer))
                return GP_JSON_ERR_SYNTAX;
        if (out)
                *out = v;
        return GP_JSON_OK;
}

/* Raw key bytes against a path key; keys are short, a loop beats a call. */
GP_HOT int key_eq(const char *a, const char *b, size_t n) {
        for (size_t j = 0; j < n; j++)
                if (a[j] != b[j])
                        return 0;
        return 1;
}

gp_json_rc_t gp_jpath_find(const gp_jpath_t *p, const char *doc, size_t len, gp_jval_t *out) {
        size_t i = 0;
        int k = 0;
        char closer = 0;
        gp_json_rc_t rc = GP_JSON_ERR_SYNTAX;

        if (out)
                memset(out, 0, sizeof *out);
        if (!doc)
                return GP_JSON_ERR_SYNTAX;
        SKIP_WS(doc, len, i);
        if (i >= len || (doc[i] != '{' && doc[i] != '['))
                return GP_JSON_ERR_SYNTAX;
        if (!p || p->nsegs < 1 || p->nsegs > GP_JPATH_MAX_SEGS)
                return GP_JSON_ERR_MISSING;

        /* Invariant: the value reached by the first k segments starts at
         * d[i] after blanks, inside k containers (k < 16, far from
         * GP_JSON_MAX_DEPTH). */
        for (;;) {
                SKIP_WS(doc, len, i);
                if (i >= len)
                        return GP_JSON_ERR_SYNTAX;
                if (k == p->nsegs)
                        return take_value(doc, len, i, k, closer, out);
                if (doc[i] == '{' && !p->seg[k].is_index) {
                        const char *key = p->seg[k].key;
                        const size_t keylen = p->seg[k].keylen;
                        if (keylen >= GP_JPATH_MAX_KEY) /* not from gp_jpath_compile */
                                return GP_JSON_ERR_MISSING;
                        i++;
                        SKIP_WS(doc, len, i);
                        if (i < len && doc[i] == '}')
                                return GP_JSON_ERR_MISSING;
                        for (;;) {
                                EXPECT(doc, len, i, '"', return GP_JSON_ERR_SYNTAX);
                                size_t ks = i;
                                if ((i = scan_string(doc, len, i - 1)) == 0)
                                        return GP_JSON_ERR_SYNTAX;
                                size_t kl = i - ks - 1;
                                EXPECT(doc, len, i, ':', return GP_JSON_ERR_SYNTAX);
                                if (kl == keylen && key_eq(doc + ks, key, kl))
                                        break;
                                if ((i = skip_sibling(doc, len, i, k + 1, '}', &rc)) == 0)
                                        return rc;
                        }
                        closer = '}';
                } else if (doc[i] == '[' && p->seg[k].is_index) {
                        const uint32_t want = p->seg[k].index;
                        i++;
                        SKIP_WS(doc, len, i);
                        if (i < len && doc[i] == ']')
                                return GP_JSON_ERR_MISSING;
                        for (uint32_t n = 0; n != want; n++)
                                if ((i = skip_sibling(doc, len, i, k + 1, ']', &rc)) == 0)
                                        return rc;
                        closer = ']';
                } else {
                        /* Not the container this segment needs (or not a
                         * container): validate it and its end, as for a
                         * value found, then report a miss. */
                        if ((i = skip_value_cold(doc, len, i, k, &rc)) == 0)
                                return rc;
                        if (k > 0) {
                                SKIP_WS(doc, len, i);
                                if (i >= len || (doc[i] != ',' && doc[i] != closer))
                                        return GP_JSON_ERR_SYNTAX;
                        }
                        return GP_JSON_ERR_MISSING;
                }
                k++;
        }
}

static int compile_fail(gp_jpath_t *p, char *err, size_t errlen, const char *what, size_t at) {
        p->nsegs = 0;
        if (err && errlen)
                snprintf(err, errlen, "%s (at offset %zu)", what, at);
        return -1;
}

int gp_jpath_compile(gp_jpath_t *p, const char *spec, char *err, size_t errlen) {
        size_t i = 0;

        if (err && errlen)
                err[0] = '\0';
        if (!p) {
                if (err && errlen)
                        snprintf(err, errlen, "no path object");
                return -1;
        }
        memset(p, 0, sizeof *p);
        if (!spec || !spec[0])
                return compile_fail(p, err, errlen, "empty path", 0);
        /* "$." or "$[" names the root; a '$' followed by anything else is
         * an ordinary key byte. "$" alone would select the root itself,
         * which is never a usable value (the root is an object or array). */
        if (spec[0] == '$') {
                if (spec[1] == '\0')
                        return compile_fail(p, err, errlen, "path names only the root", 0);
                if (spec[1] == '.')
                        i = 2;
                else if (spec[1] == '[')
                        i = 1;
        }

        int want_key = spec[i] != '['; /* a key must come next */
        for (;;) {
                if (p->nsegs == GP_JPATH_MAX_SEGS)
                        return compile_fail(p, err, errlen, "too many segments", i);
                if (want_key) {
                        size_t ks = i;
                        while (spec[i] && !strchr(".[]", spec[i]))
                                i++;
                        if (i == ks)
                                return compile_fail(
                                        p, err, errlen,
                                        spec[i] == ']' ? "unexpected ']'" : "empty key", i);
                        if (i - ks > GP_JPATH_MAX_KEY - 1)
                                return compile_fail(p, err, errlen, "key too long", ks);
                        p->seg[p->nsegs].is_index = 0;
                        p->seg[p->nsegs].keylen = (uint8_t)(i - ks);
                        memcpy(p->seg[p->nsegs].key, spec + ks, i - ks);
                        p->seg[p->nsegs].key[i - ks] = '\0';
                } else {
                        /* spec[i] == '[' */
                        size_t is = ++i;
                        uint64_t v = 0;
                        if (spec[i] == '\0')
                                return compile_fail(p, err, errlen, "unterminated '['", i);
                        while (spec[i] >= '0' && spec[i] <= '9') {
                                v = v * 10 + (uint64_t)(spec[i] - '0');
                                if (v > UINT32_MAX)
                                        return compile_fail(p, err, errlen, "index too large",
                                                            is);
                                i++;
                        }
                        if (i == is || (spec[i] != ']' && spec[i] != '\0'))
                                return compile_fail(p, err, errlen, "index is not a number",
                                                    is);
                        if (spec[i] == '\0')
                                return compile_fail(p, err, errlen, "unterminated '['", i);
                        if (spec[is] == '0' && i - is > 1)
                                return compile_fail(p, err, errlen, "index has a leading zero",
                                                    is);
                        i++; /* ']' */
                        p->seg[p->nsegs].is_index = 1;
                        p->seg[p->nsegs].index = (uint32_t)v;
                }
                p->nsegs++;

                if (spec[i] == '\0')
                        return 0;
                if (spec[i] == '.') {
                        i++;
                        want_key = 1;
                } else if (spec[i] == '[') {
                        want_key = 0;
                } else if (spec[i] == ']') {
                        return compile_fail(p, err, errlen, "unexpected ']'", i);
                } else {
                        return compile_fail(p, err, errlen, "expected '.' or '[' after ']'",
                                            i);
                }
        }
}
