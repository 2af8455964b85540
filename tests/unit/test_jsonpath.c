/* tests/unit/test_jsonpath.c: tables for gate/jsonpath.c (path compilation,
 * finds, misses, syntax errors, the depth limit).
 * Depends on gate/jsonpath.h and Criterion only. Every document is copied
 * into a heap buffer of exactly its length, so a read past `len` is an
 * AddressSanitizer report. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/jsonpath.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A heap copy without a terminating NUL. */
static char *exact_copy(const char *s, size_t len) {
        char *b = malloc(len ? len : 1);
        cr_assert_not_null(b);
        memcpy(b, s, len);
        return b;
}

static gp_json_rc_t find(const char *spec, const char *doc, size_t len, gp_jval_t *out) {
        gp_jpath_t p;
        char err[128];
        cr_assert_eq(gp_jpath_compile(&p, spec, err, sizeof err), 0, "\"%s\": %s", spec, err);
        char *b = exact_copy(doc, len);
        gp_json_rc_t rc = gp_jpath_find(&p, b, len, out);
        if (rc == GP_JSON_OK && out) {
                /* Report where in the original the value lies, then free. */
                cr_assert(out->ptr >= b && out->ptr + out->len <= b + len,
                          "\"%s\": value outside the document", spec);
                out->ptr = doc + (out->ptr - b);
        }
        free(b);
        return rc;
}

/* ---- compilation ---- */

Test(jsonpath, compile_errors) {
        static const struct {
                const char *spec;
                const char *why; /* a word the message must contain */
        } cases[] = {
                {"", "empty path"},
                {"$", "root"},
                {"a..b", "empty key"},
                {".a", "empty key"},
                {"a.", "empty key"},
                {"$..a", "empty key"},
                {"a.[0]", "empty key"},
                {"a[", "unterminated"},
                {"a[0", "unterminated"},
                {"a[x]", "not a number"},
                {"a[]", "not a number"},
                {"a[-1]", "not a number"},
                {"a[1x]", "not a number"},
                {"a[ 1]", "not a number"},
                {"a[01]", "leading zero"},
                {"a[4294967296]", "too large"},
                {"a[99999999999999999999]", "too large"},
                {"a]", "unexpected ']'"},
                {"]", "unexpected ']'"},
                {"a[0]]", "unexpected ']'"},
                {"a[0]b", "expected '.' or '['"},
                {"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q", "too many segments"}, /* 17 */
                {"a[0][1][2][3][4][5][6][7][8][9][10][11][12][13][14][15]",
                 "too many segments"},
                {"k234567890123456789012345678901234567890123456789012345678901234",
                 "key too long"}, /* 64 bytes */
        };
        for (size_t k = 0; k < N(cases); k++) {
                gp_jpath_t p;
                char err[128] = "unchanged";
                int rc = gp_jpath_compile(&p, cases[k].spec, err, sizeof err);
                cr_assert_eq(rc, -1, "\"%s\": compiled", cases[k].spec);
                cr_assert_not_null(strstr(err, cases[k].why), "\"%s\": \"%s\" lacks \"%s\"",
                                   cases[k].spec, err, cases[k].why);
                cr_assert_eq(p.nsegs, 0, "\"%s\": segments left after failure", cases[k].spec);
        }
}

Test(jsonpath, compile_null_and_tiny_err_buffer) {
        gp_jpath_t p;
        char err[4] = "xyz";
        cr_assert_eq(gp_jpath_compile(&p, NULL, err, sizeof err), -1);
        cr_assert_str_eq(err, "emp"); /* truncated, still terminated */
        cr_assert_eq(gp_jpath_compile(&p, "a..b", NULL, 0), -1);
        cr_assert_eq(gp_jpath_compile(NULL, "a", err, sizeof err), -1);
}

Test(jsonpath, compile_segments) {
        static const struct {
                const char *spec;
                int nsegs;
                const char *segs; /* segments as "k:name" / "i:n", '|'-joined */
        } cases[] = {
                {"a", 1, "k:a"},
                {"$.a", 1, "k:a"},
                {"$[2]", 1, "i:2"},
                {"[0].ts", 2, "i:0|k:ts"},
                {"a.b[0].c", 4, "k:a|k:b|i:0|k:c"},
                {"a[0][12]", 3, "k:a|i:0|i:12"},
                {"a[4294967295]", 2, "k:a|i:4294967295"},
                {"$x", 1, "k:$x"},
                {"$x.y", 2, "k:$x|k:y"},
                {"event time", 1, "k:event time"},
                {"a\\u0062", 1, "k:a\\u0062"},
                {"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p", 16,
                 "k:a|k:b|k:c|k:d|k:e|k:f|k:g|k:h|k:i|k:j|k:k|k:l|k:m|k:n|k:o|k:p"},
                {"k23456789012345678901234567890123456789012345678901234567890123", 1,
                 "k:k23456789012345678901234567890123456789012345678901234567890123"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                gp_jpath_t p;
                char err[128];
                char got[2048] = "";
                cr_assert_eq(gp_jpath_compile(&p, cases[k].spec, err, sizeof err), 0,
                             "\"%s\": %s", cases[k].spec, err);
                cr_assert_eq(p.nsegs, cases[k].nsegs, "\"%s\"", cases[k].spec);
                for (int s = 0; s < p.nsegs; s++) {
                        char one[96];
                        if (p.seg[s].is_index)
                                snprintf(one, sizeof one, "%si:%u", s ? "|" : "",
                                         (unsigned)p.seg[s].index);
                        else
                                snprintf(one, sizeof one, "%sk:%.*s", s ? "|" : "",
                                         (int)p.seg[s].keylen, p.seg[s].key);
                        size_t gl = strlen(got);
                        snprintf(got + gl, sizeof(got) - gl, "%s", one);
                        if (!p.seg[s].is_index)
                                cr_assert_eq(strlen(p.seg[s].key), p.seg[s].keylen);
                }
                cr_assert_str_eq(got, cases[k].segs, "\"%s\"", cases[k].spec);
        }
}

/* ---- finds ---- */

struct find_case {
        const char *path;
        const char *doc;
        gp_json_type_t type;
        const char *want; /* the raw value: string contents, number token, span */
        int has_escapes;
};

Test(jsonpath, finds) {
        static const struct find_case cases[] = {
                {"a", "{\"a\":1}", GP_JSON_NUMBER, "1", 0},
                {"$.a", "{\"a\":1}", GP_JSON_NUMBER, "1", 0},
                {"a", " \t\r\n{ \t\"a\" \r\n:\n 42 \t}\n", GP_JSON_NUMBER, "42", 0},
                {"b", "{\"a\":1,\"b\":2,\"c\":3}", GP_JSON_NUMBER, "2", 0},
                {"c", "{\"a\":1,\"b\":2,\"c\":3}", GP_JSON_NUMBER, "3", 0},
                {"a.b.c", "{\"a\":{\"x\":0,\"b\":{\"c\":\"deep\"}}}", GP_JSON_STRING, "deep",
                 0},
                {"a[0]", "{\"a\":[10,20,30]}", GP_JSON_NUMBER, "10", 0},
                {"a[2]", "{\"a\":[10,20,30]}", GP_JSON_NUMBER, "30", 0},
                {"a[1].t", "{\"a\":[{\"t\":1},{\"t\":2}]}", GP_JSON_NUMBER, "2", 0},
                {"[1].t", "[{\"t\":1},{\"t\":5}]", GP_JSON_NUMBER, "5", 0},
                {"$[0]", "[\"x\"]", GP_JSON_STRING, "x", 0},
                {"a[1][0]", "{\"a\":[[1],[2,3]]}", GP_JSON_NUMBER, "2", 0},
                /* numbers */
                {"n", "{\"n\":-1.5e+10}", GP_JSON_NUMBER, "-1.5e+10", 0},
                {"n", "{\"n\":0}", GP_JSON_NUMBER, "0", 0},
                {"n", "{\"n\":-0}", GP_JSON_NUMBER, "-0", 0},
                {"n", "{\"n\":0.5E-3}", GP_JSON_NUMBER, "0.5E-3", 0},
                {"n", "{\"n\":1e5 }", GP_JSON_NUMBER, "1e5", 0},
                {"n", "{\"n\":1700000000123}", GP_JSON_NUMBER, "1700000000123", 0},
                /* digit runs read eight bytes at a time: runs ending at every
                 * offset of a word, a byte above '9' + 6 after them */
                {"n", "{\"n\":12345678}", GP_JSON_NUMBER, "12345678", 0},
                {"n", "{\"n\":123456789012345678901234}", GP_JSON_NUMBER,
                 "123456789012345678901234", 0},
                {"n", "{\"n\":1.2345678901234567e1234567890}", GP_JSON_NUMBER,
                 "1.2345678901234567e1234567890", 0},
                {"n", "{\"x\":99999999,\"n\":2}", GP_JSON_NUMBER, "2", 0},
                {"n", "{\"x\":1234567,\"n\":123456789}", GP_JSON_NUMBER, "123456789", 0},
                /* strings */
                {"s", "{\"s\":\"\"}", GP_JSON_STRING, "", 0},
                {"s", "{\"s\":\"2026-12-02T13:59:17Z\"}", GP_JSON_STRING,
                 "2026-12-02T13:59:17Z", 0},
                {"s", "{\"s\":\"a\\\"b\\\\c\\/d\\u00e9\\n\"}", GP_JSON_STRING,
                 "a\\\"b\\\\c\\/d\\u00e9\\n", 1},
                {"s", "{\"s\":\"\\uD83D\\uDE00\"}", GP_JSON_STRING, "\\uD83D\\uDE00", 1},
                {"s", "{\"s\":\"caf\xc3\xa9 {[,:]}\"}", GP_JSON_STRING, "caf\xc3\xa9 {[,:]}",
                 0},
                /* true, false, null, containers */
                {"v", "{\"v\":true}", GP_JSON_OTHER, "true", 0},
                {"v", "{\"v\":false }", GP_JSON_OTHER, "false", 0},
                {"v", "{\"v\":null,\"w\":1}", GP_JSON_OTHER, "null", 0},
                {"v", "{\"v\":{\"x\":[1,{}]} }", GP_JSON_OTHER, "{\"x\":[1,{}]}", 0},
                {"v", "{\"v\":[]}", GP_JSON_OTHER, "[]", 0},
                /* keys are raw bytes: an escaped key matches its escaped spelling */
                {"a\\u0062", "{\"ab\":1,\"a\\u0062\":2}", GP_JSON_NUMBER, "2", 0},
                {"k\\\"q", "{\"k\\\"q\":3}", GP_JSON_NUMBER, "3", 0},
                /* duplicate keys: the first one wins */
                {"a", "{\"a\":1,\"a\":2}", GP_JSON_NUMBER, "1", 0},
                /* the scanner stops after the value: later junk is not read */
                {"a", "{\"a\":1} trailing junk", GP_JSON_NUMBER, "1", 0},
                {"a", "{\"a\":1,\"b\":tru", GP_JSON_NUMBER, "1", 0},
                /* keys that are prefixes or extensions of the wanted one */
                {"ts", "{\"t\":1,\"tss\":2,\"tS\":3,\"ts\":4}", GP_JSON_NUMBER, "4", 0},
                /* a value after complex siblings */
                {"ts",
                 "{\"skip\":[{\"s\":\"}]{[\\\"\",\"t\":[1,{\"u\":\"\\\\\\\"\"}]},"
                 "{\"v\":\"\\u005d\",\"w\":[[[]],{}]}],"
                 "\"deep\":{\"a\":{\"b\":[[],{},\"]}\",-0.0e-0,true,false,null]}},"
                 "\"str\":\"\\\"}\\\\\",\"ts\":1700000000123}",
                 GP_JSON_NUMBER, "1700000000123", 0},
                {"meta.ts",
                 "{\"payload\":{\"ts\":\"wrong level\",\"list\":[{\"ts\":0}]},"
                 "\"meta\":{\"note\":\"{\\\"ts\\\":9}\",\"ts\":\"2026-01-01T00:00:00Z\"}}",
                 GP_JSON_STRING, "2026-01-01T00:00:00Z", 0},
        };
        for (size_t k = 0; k < N(cases); k++) {
                const struct find_case *c = &cases[k];
                gp_jval_t v;
                gp_json_rc_t rc = find(c->path, c->doc, strlen(c->doc), &v);
                cr_assert_eq(rc, GP_JSON_OK, "case %zu \"%s\" in %s: rc %d", k, c->path,
                             c->doc, (int)rc);
                cr_assert_eq(v.type, c->type, "case %zu: type %d", k, (int)v.type);
                cr_assert_eq(v.len, strlen(c->want), "case %zu: len %zu (%.*s)", k, v.len,
                             (int)v.len, v.ptr);
                cr_assert(memcmp(v.ptr, c->want, v.len) == 0, "case %zu: got %.*s", k,
                          (int)v.len, v.ptr);
                cr_assert_eq(v.has_escapes, c->has_escapes, "case %zu: has_escapes", k);
                /* The pointer is into the document, not a copy. */
                cr_assert(v.ptr >= c->doc && v.ptr + v.len <= c->doc + strlen(c->doc));
        }
}

Test(jsonpath, out_may_be_null) {
        cr_assert_eq(find("a", "{\"a\":1}", 7, NULL), GP_JSON_OK);
}

/* ---- misses and errors ---- */

struct rc_case {
        const char *path;
        const char *doc;
        gp_json_rc_t want;
        const char *why;
};

Test(jsonpath, missing) {
        static const struct rc_case cases[] = {
                {"a", "{}", GP_JSON_ERR_MISSING, "empty object"},
                {"a", "{\"b\":1}", GP_JSON_ERR_MISSING, "absent key"},
                {"a", "{\"A\":1,\"aa\":2,\"\":3}", GP_JSON_ERR_MISSING, "near misses"},
                {"a.b", "{\"a\":{\"c\":1}}", GP_JSON_ERR_MISSING, "absent nested key"},
                {"b", "{\"a\":{\"b\":1}}", GP_JSON_ERR_MISSING, "key only deeper"},
                {"a[3]", "{\"a\":[1,2,3]}", GP_JSON_ERR_MISSING, "index past end"},
                {"a[0]", "{\"a\":[]}", GP_JSON_ERR_MISSING, "empty array"},
                {"a[0]", "{\"a\":[ ]}", GP_JSON_ERR_MISSING, "blank array"},
                {"a.b", "{\"a\":5}", GP_JSON_ERR_MISSING, "key into a number"},
                {"a.b", "{\"a\":\"{\\\"b\\\":1}\"}", GP_JSON_ERR_MISSING, "key into a string"},
                {"a.b", "{\"a\":[{\"b\":1}]}", GP_JSON_ERR_MISSING, "key into an array"},
                {"a[0]", "{\"a\":{\"0\":1}}", GP_JSON_ERR_MISSING, "index into an object"},
                {"a", "[{\"a\":1}]", GP_JSON_ERR_MISSING, "key on a root array"},
                {"[0]", "{\"0\":1}", GP_JSON_ERR_MISSING, "index on a root object"},
                {"a.b", "{\"a\":1,\"a\":{\"b\":2}}", GP_JSON_ERR_MISSING,
                 "first duplicate wins"},
                {"ab", "{\"a\\u0062\":1}", GP_JSON_ERR_MISSING, "escapes not decoded"},
                {"a", "{\"b\":1} {\"a\":2}", GP_JSON_ERR_MISSING, "second document"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                const struct rc_case *c = &cases[k];
                gp_jval_t v;
                gp_json_rc_t rc = find(c->path, c->doc, strlen(c->doc), &v);
                cr_assert_eq(rc, c->want, "%s: \"%s\" in %s: rc %d", c->why, c->path, c->doc,
                             (int)rc);
                cr_assert_null(v.ptr, "%s: out not cleared", c->why);
        }
}

Test(jsonpath, syntax_errors) {
        static const struct rc_case cases[] = {
                /* the root */
                {"a", "", GP_JSON_ERR_SYNTAX, "empty document"},
                {"a", " \n\t", GP_JSON_ERR_SYNTAX, "blank document"},
                {"a", "1", GP_JSON_ERR_SYNTAX, "root is a number"},
                {"a", "\"a\"", GP_JSON_ERR_SYNTAX, "root is a string"},
                {"a", "null", GP_JSON_ERR_SYNTAX, "root is null"},
                {"a", "\f{\"a\":1}", GP_JSON_ERR_SYNTAX, "form feed is not blank"},
                {"a", "\xef\xbb\xbf{\"a\":1}", GP_JSON_ERR_SYNTAX, "byte order mark"},
                {"a", "{", GP_JSON_ERR_SYNTAX, "unclosed root"},
                {"a", "{\"a\"", GP_JSON_ERR_SYNTAX, "key without colon"},
                {"a", "{\"a\":", GP_JSON_ERR_SYNTAX, "colon without value"},
                {"a[0]", "{\"a\":[", GP_JSON_ERR_SYNTAX, "unclosed array"},
                /* members before the wanted key */
                {"a", "{\"x\" 1,\"a\":1}", GP_JSON_ERR_SYNTAX, "missing colon"},
                {"a", "{x:1,\"a\":1}", GP_JSON_ERR_SYNTAX, "bare key"},
                {"a", "{'x':1,\"a\":1}", GP_JSON_ERR_SYNTAX, "single quotes"},
                {"a", "{,\"a\":1}", GP_JSON_ERR_SYNTAX, "leading comma"},
                {"a", "{\"x\":1,,\"a\":1}", GP_JSON_ERR_SYNTAX, "double comma"},
                {"a", "{\"x\":1 \"a\":1}", GP_JSON_ERR_SYNTAX, "missing comma"},
                {"a", "{\"x\":1,}", GP_JSON_ERR_SYNTAX, "trailing comma in object"},
                {"a", "{\"x\":01,\"a\":1}", GP_JSON_ERR_SYNTAX, "leading zero"},
                {"a", "{\"x\":1.,\"a\":1}", GP_JSON_ERR_SYNTAX, "no digit after point"},
                {"a", "{\"x\":.5,\"a\":1}", GP_JSON_ERR_SYNTAX, "no digit before point"},
                {"a", "{\"x\":-,\"a\":1}", GP_JSON_ERR_SYNTAX, "lone minus"},
                {"a", "{\"x\":+1,\"a\":1}", GP_JSON_ERR_SYNTAX, "plus sign"},
                {"a", "{\"x\":1e,\"a\":1}", GP_JSON_ERR_SYNTAX, "empty exponent"},
                {"a", "{\"x\":1e+,\"a\":1}", GP_JSON_ERR_SYNTAX, "signed empty exponent"},
                {"a", "{\"x\":0x1,\"a\":1}", GP_JSON_ERR_SYNTAX, "hex number"},
                /* a digit run read eight bytes at a time, ended by a byte
                 * that is not a digit (some that carry when 6 is added) */
                {"a", "{\"x\":1234567\xff\xff,\"a\":1}", GP_JSON_ERR_SYNTAX,
                 "0xff after digits"},
                {"a", "{\"x\":12345678901234\xfa:9,\"a\":1}", GP_JSON_ERR_SYNTAX,
                 "0xfa after digits"},
                {"a", "{\"x\":123456/,\"a\":2}", GP_JSON_ERR_SYNTAX, "'/' after digits"},
                {"a", "{\"x\":1234567:,\"a\":2}", GP_JSON_ERR_SYNTAX, "':' after digits"},
                {"a", "{\"x\":1.1234567a,\"a\":2}", GP_JSON_ERR_SYNTAX, "letter in fraction"},
                {"a", "{\"x\":NaN,\"a\":1}", GP_JSON_ERR_SYNTAX, "NaN"},
                {"a", "{\"x\":tru,\"a\":1}", GP_JSON_ERR_SYNTAX, "short literal"},
                {"a", "{\"x\":True,\"a\":1}", GP_JSON_ERR_SYNTAX, "capital literal"},
                {"a", "{\"x\":nulls,\"a\":1}", GP_JSON_ERR_SYNTAX, "long literal"},
                {"a", "{\"x\":\"\\q\",\"a\":1}", GP_JSON_ERR_SYNTAX, "bad escape"},
                {"a", "{\"x\":\"\\u12g4\",\"a\":1}", GP_JSON_ERR_SYNTAX, "bad \\u digit"},
                {"a", "{\"x\":\"\\u12\",\"a\":1}", GP_JSON_ERR_SYNTAX, "short \\u"},
                {"a", "{\"x\":\"tab\there\",\"a\":1}", GP_JSON_ERR_SYNTAX, "raw tab"},
                {"a", "{\"x\":\"nl\nhere\",\"a\":1}", GP_JSON_ERR_SYNTAX, "raw newline"},
                {"a", "{\"x\":\"\x01\",\"a\":1}", GP_JSON_ERR_SYNTAX, "raw 0x01"},
                {"a", "{\"x\":\"long string then \x10\",\"a\":1}", GP_JSON_ERR_SYNTAX,
                 "raw 0x10"},
                {"a", "{\"x\":\"\x1f\",\"a\":1}", GP_JSON_ERR_SYNTAX, "raw 0x1f"},
                {"a", "{\"a\":\"\x7f\x80\xff \"}", GP_JSON_OK, "DEL and high bytes pass"},
                {"a", "{\"x\":\"unterminated,\"a\":1}", GP_JSON_ERR_SYNTAX,
                 "string swallows the rest"},
                {"a", "{\"x\":[1,],\"a\":1}", GP_JSON_ERR_SYNTAX, "trailing comma in array"},
                {"a", "{\"x\":[1 2],\"a\":1}", GP_JSON_ERR_SYNTAX, "missing comma in array"},
                {"a", "{\"x\":[,1],\"a\":1}", GP_JSON_ERR_SYNTAX, "leading comma in array"},
                {"a", "{\"x\":[}],\"a\":1}", GP_JSON_ERR_SYNTAX, "wrong closer"},
                {"a", "{\"x\":[1},\"a\":1}", GP_JSON_ERR_SYNTAX, "wrong closer after item"},
                {"a", "{\"x\":{\"y\":1,},\"a\":1}", GP_JSON_ERR_SYNTAX, "trailing comma"},
                {"a", "{\"x\":{\"y\"},\"a\":1}", GP_JSON_ERR_SYNTAX, "member without value"},
                {"a", "{\"x\":{1:2},\"a\":1}", GP_JSON_ERR_SYNTAX, "number as key"},
                {"a", "{\"x\":{\"y\":1]},\"a\":1}", GP_JSON_ERR_SYNTAX, "] closes object"},
                {"a", "{\"x\":/*c*/1,\"a\":1}", GP_JSON_ERR_SYNTAX, "comment"},
                {"b", "{\"x\":1,\"c\":[}", GP_JSON_ERR_SYNTAX, "error, not missing"},
                {"a[1]", "{\"a\":[1,}", GP_JSON_ERR_SYNTAX, "bad element before index"},
                {"a[1]", "{\"a\":[1;2]}", GP_JSON_ERR_SYNTAX, "bad separator in array"},
                {"a.b", "{\"a\":5x}", GP_JSON_ERR_SYNTAX, "mismatch value invalid"},
                /* the value itself */
                {"a", "{\"a\":01}", GP_JSON_ERR_SYNTAX, "value has leading zero"},
                {"a", "{\"a\":12x}", GP_JSON_ERR_SYNTAX, "value followed by junk"},
                {"a", "{\"a\":truex}", GP_JSON_ERR_SYNTAX, "literal followed by junk"},
                {"a", "{\"a\":1 2}", GP_JSON_ERR_SYNTAX, "two values"},
                {"a", "{\"a\":1", GP_JSON_ERR_SYNTAX, "value at end of input"},
                {"a", "{\"a\":-}", GP_JSON_ERR_SYNTAX, "value is a lone minus"},
                {"a", "{\"a\":\"abc}", GP_JSON_ERR_SYNTAX, "unterminated value"},
                {"a", "{\"a\":\"abc\\", GP_JSON_ERR_SYNTAX, "dangling backslash"},
                {"a", "{\"a\":\"\\u00", GP_JSON_ERR_SYNTAX, "\\u cut by the end"},
                {"a", "{\"a\":[1,}", GP_JSON_ERR_SYNTAX, "bad array value"},
                {"a", "{\"a\":{\"b\":}}", GP_JSON_ERR_SYNTAX, "bad object value"},
                {"a", "{\"a\":}", GP_JSON_ERR_SYNTAX, "no value"},
                {"a", "{\"a\":,}", GP_JSON_ERR_SYNTAX, "comma for value"},
                {"[2]", "[1,2", GP_JSON_ERR_SYNTAX, "unclosed root array"},
                {"[0]", "[1]", GP_JSON_OK, "control: the above without the error"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                const struct rc_case *c = &cases[k];
                gp_jval_t v;
                gp_json_rc_t rc = find(c->path, c->doc, strlen(c->doc), &v);
                cr_assert_eq(rc, c->want, "%s: \"%s\" in %s: rc %d", c->why, c->path, c->doc,
                             (int)rc);
        }
}

Test(jsonpath, respects_len) {
        static const char doc[] = "{\"a\":1}";
        gp_jval_t v;
        cr_assert_eq(find("a", doc, sizeof doc - 1, &v), GP_JSON_OK);
        for (size_t n = 0; n < sizeof doc - 1; n++)
                cr_assert_eq(find("a", doc, n, &v), GP_JSON_ERR_SYNTAX, "len %zu", n);
        /* A NUL byte is not JSON anywhere. */
        cr_assert_eq(find("a", "{\"x\":\"\0\",\"a\":1}", 15, &v), GP_JSON_ERR_SYNTAX);
        cr_assert_eq(find("a", "{\0\"a\":1}", 8, &v), GP_JSON_ERR_SYNTAX);
        cr_assert_eq(gp_jpath_find(NULL, doc, sizeof doc - 1, &v), GP_JSON_ERR_MISSING);
        cr_assert_eq(gp_jpath_find(NULL, NULL, 0, &v), GP_JSON_ERR_SYNTAX);
}

/* ---- depth ---- */

/* prefix + n x open + inner + n x close + suffix, in buf. */
static size_t nest(char *buf, size_t cap, const char *prefix, int n, char open,
                   const char *inner, char close, const char *suffix) {
        size_t len = 0;
        len += (size_t)snprintf(buf + len, cap - len, "%s", prefix);
        for (int k = 0; k < n; k++)
                buf[len++] = open;
        len += (size_t)snprintf(buf + len, cap - len, "%s", inner);
        for (int k = 0; k < n; k++)
                buf[len++] = close;
        len += (size_t)snprintf(buf + len, cap - len, "%s", suffix);
        cr_assert_lt(len, cap);
        return len;
}

Test(jsonpath, depth_limit) {
        static const struct {
                const char *path;
                const char *prefix;
                int n; /* extra containers; the root counts as 1 */
                char open, close;
                const char *inner;
                const char *suffix;
                gp_json_rc_t want;
        } cases[] = {
                /* a skipped sibling, nested to exactly the limit and one past */
                {"a", "{\"x\":", GP_JSON_MAX_DEPTH - 1, '[', ']', "", ",\"a\":1}", GP_JSON_OK},
                {"a", "{\"x\":", GP_JSON_MAX_DEPTH, '[', ']', "", ",\"a\":1}",
                 GP_JSON_ERR_DEPTH},
                {"a", "{\"x\":", GP_JSON_MAX_DEPTH - 2, '[', ']', "{\"y\":1}", ",\"a\":1}",
                 GP_JSON_OK},
                {"a", "{\"x\":", GP_JSON_MAX_DEPTH - 1, '[', ']', "{\"y\":1}", ",\"a\":1}",
                 GP_JSON_ERR_DEPTH},
                /* the value found is itself deep */
                {"a", "{\"a\":", GP_JSON_MAX_DEPTH - 1, '[', ']', "", "}", GP_JSON_OK},
                {"a", "{\"a\":", GP_JSON_MAX_DEPTH, '[', ']', "", "}", GP_JSON_ERR_DEPTH},
                /* inside a deep root array: [[[...]]] with a path down it */
                {"[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]", "", GP_JSON_MAX_DEPTH,
                 '[', ']', "", "", GP_JSON_OK},
                {"[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]", "", GP_JSON_MAX_DEPTH + 1,
                 '[', ']', "", "", GP_JSON_ERR_DEPTH},
                /* too deep and never closed: depth is reported, not syntax */
                {"a", "{\"x\":", 1000, '[', ' ', "", "", GP_JSON_ERR_DEPTH},
                /* deep, then missing: the depth error wins over the miss */
                {"a", "{\"x\":", GP_JSON_MAX_DEPTH, '[', ']', "", "}", GP_JSON_ERR_DEPTH},
                {"a", "{\"x\":", GP_JSON_MAX_DEPTH - 1, '[', ']', "", "}",
                 GP_JSON_ERR_MISSING},
        };
        static char buf[8192];
        for (size_t k = 0; k < N(cases); k++) {
                size_t len = nest(buf, sizeof buf, cases[k].prefix, cases[k].n, cases[k].open,
                                  cases[k].inner, cases[k].close, cases[k].suffix);
                gp_jval_t v;
                gp_json_rc_t rc = find(cases[k].path, buf, len, &v);
                cr_assert_eq(rc, cases[k].want, "case %zu (n=%d): rc %d", k, cases[k].n,
                             (int)rc);
        }
}

Test(jsonpath, deep_value_span) {
        static char buf[512];
        size_t len =
                nest(buf, sizeof buf, "{\"a\":", GP_JSON_MAX_DEPTH - 1, '[', "", ']', "}");
        gp_jval_t v;
        cr_assert_eq(find("a", buf, len, &v), GP_JSON_OK);
        cr_assert_eq(v.type, GP_JSON_OTHER);
        cr_assert_eq(v.len, 2 * (GP_JSON_MAX_DEPTH - 1));
        cr_assert_eq(v.ptr, buf + 5);
}

/* A path object not made by gp_jpath_compile is a miss, never a crash. */
Test(jsonpath, hand_built_path) {
        static const char doc[] = "{\"a\":1}";
        gp_jpath_t p;
        gp_jval_t v;
        cr_assert_eq(gp_jpath_compile(&p, "a", NULL, 0), 0);
        cr_assert_eq(gp_jpath_find(&p, doc, sizeof doc - 1, &v), GP_JSON_OK);
        p.nsegs = 0;
        cr_assert_eq(gp_jpath_find(&p, doc, sizeof doc - 1, &v), GP_JSON_ERR_MISSING);
        p.nsegs = GP_JPATH_MAX_SEGS + 1;
        cr_assert_eq(gp_jpath_find(&p, doc, sizeof doc - 1, &v), GP_JSON_ERR_MISSING);
        p.nsegs = 1;
        p.seg[0].keylen = 200;
        cr_assert_eq(gp_jpath_find(&p, doc, sizeof doc - 1, &v), GP_JSON_ERR_MISSING);
}
