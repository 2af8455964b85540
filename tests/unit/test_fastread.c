/* tests/unit/test_fastread.c: the event-time readers on the inputs where a
 * fast reader goes wrong first: json: (gate/jsonpath.c, gate/timeparse.c
 * through gate/extract.c) and avro: (gate/avro.c's skip plans, and the
 * walk they replace). Each row is a path, a value and the answer: a time
 * or the refusal code of the dead-letter header. The answers are those of
 * the readers before the skip plans (tests/ref/, fuzz_fastread.c compares
 * the two on any bytes).
 * Every value is copied into a heap buffer of exactly its length, so a read
 * past it is an AddressSanitizer report.
 * Depends on gate/, proxy/schema/avsc.h and Criterion. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "gate/types.h"
#include "proxy/schema/avsc.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The answer of gp_extract_ts: a time (code GP_BAD_NONE) or a code. */
static void check(const gp_extract_t *x, const gp_record_view_t *r, gp_bad_code_t want_code,
                  int64_t want_ts, const char *what) {
        int64_t ts = 0x5a5a;
        gp_bad_t bad = {GP_BAD_NONE, NULL};
        int rc = gp_extract_ts(x, r, &ts, &bad);
        if (want_code == GP_BAD_NONE) {
                cr_expect_eq(rc, 0, "%s: refused (%s: %s), want %" PRId64, what,
                             gp_bad_name(bad.code), bad.why ? bad.why : "", want_ts);
                cr_expect_eq(ts, want_ts, "%s: %" PRId64 ", want %" PRId64, what, ts, want_ts);
        } else {
                cr_expect_eq(rc, -1, "%s: read %" PRId64 ", want %s", what, ts,
                             gp_bad_name(want_code));
                cr_expect_eq(bad.code, want_code, "%s: %s, want %s", what,
                             gp_bad_name(bad.code) ? gp_bad_name(bad.code) : "none",
                             gp_bad_name(want_code));
                cr_expect_eq(ts, 0x5a5a, "%s: *ts written on a refusal", what);
        }
}

/* ---- json: ---- */

static const struct {
        const char *spec, *doc;
        gp_unit_t unit;
        gp_bad_code_t code;
        int64_t ts;
} json_rows[] = {
        /* the key at the wrong level, or inside a string */
        {"json:ts", "{\"a\":{\"ts\":1},\"ts\":2}", GP_UNIT_MS, GP_BAD_NONE, 2},
        {"json:meta.ts", "{\"meta\":{\"x\":{\"ts\":1}},\"ts\":5}", GP_UNIT_MS,
         GP_BAD_FIELD_MISSING, 0},
        {"json:meta.ts", "{\"x\":{\"meta\":{\"ts\":1}},\"meta\":{\"ts\":3}}", GP_UNIT_MS,
         GP_BAD_NONE, 3},
        {"json:ts", "{\"a\":\"\\\"ts\\\":1\",\"ts\":2}", GP_UNIT_MS, GP_BAD_NONE, 2},
        {"json:ts", "{\"a\":\"{\\\"ts\\\":1}\"}", GP_UNIT_MS, GP_BAD_FIELD_MISSING, 0},
        {"json:ts", "{\"a\":[\"ts\",{\"ts\":1}],\"b\":2}", GP_UNIT_MS, GP_BAD_FIELD_MISSING,
         0},
        /* escaped quotes and backslashes before the field */
        {"json:ts", "{\"a\\\\\":\"x\\\\\",\"b\\\"\":\"q\\\"\",\"ts\":3}", GP_UNIT_MS,
         GP_BAD_NONE, 3},
        {"json:ts", "{\"a\":\"\\\\\\\"ts\\\\\",\"ts\":4}", GP_UNIT_MS, GP_BAD_NONE, 4},
        /* keys are compared raw: an escape does not spell the key */
        {"json:ts", "{\"t\\u0073\":1}", GP_UNIT_MS, GP_BAD_FIELD_MISSING, 0},
        {"json:\\u0074s", "{\"\\u0074s\":4}", GP_UNIT_MS, GP_BAD_NONE, 4},
        {"json:a\\\"b", "{\"a\\\"b\":5}", GP_UNIT_MS, GP_BAD_NONE, 5},
        {"json:a\\\\", "{\"a\\\\\":6,\"a\\\\\\\\\":7}", GP_UNIT_MS, GP_BAD_NONE, 6},
        /* duplicate keys: the first wins, even when it does not fit */
        {"json:ts", "{\"ts\":1,\"ts\":2}", GP_UNIT_MS, GP_BAD_NONE, 1},
        {"json:m.ts", "{\"m\":1,\"m\":{\"ts\":2}}", GP_UNIT_MS, GP_BAD_FIELD_MISSING, 0},
        /* numbers */
        {"json:ts", "{\"ts\":1700000000007}", GP_UNIT_MS, GP_BAD_NONE, INT64_C(1700000000007)},
        {"json:ts", "{\"ts\":-1700000000007}", GP_UNIT_MS, GP_BAD_NONE,
         -INT64_C(1700000000007)},
        {"json:ts", "{\"ts\":12345678}", GP_UNIT_MS, GP_BAD_NONE, 12345678},
        {"json:ts", "{\"ts\":123456789012345678}", GP_UNIT_MS, GP_BAD_NONE,
         INT64_C(123456789012345678)},
        {"json:ts", "{\"ts\":9223372036854775807}", GP_UNIT_MS, GP_BAD_NONE, INT64_MAX},
        {"json:ts", "{\"ts\":9223372036854775808}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":-9223372036854775807}", GP_UNIT_MS, GP_BAD_NONE, -INT64_MAX},
        {"json:ts", "{\"ts\":-9223372036854775808}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":00000000}", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "{\"ts\":\"0123456789\"}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":\"12345678x\"}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":1.7e12}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":17e}", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "{\"ts\":1700000000.5}", GP_UNIT_S, GP_BAD_NONE, INT64_C(1700000000500)},
        {"json:ts", "{\"ts\":1700000000.5}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":1700000000123456}", GP_UNIT_US, GP_BAD_NONE,
         INT64_C(1700000000123)},
        {"json:ts", "{\"ts\":\"1700000000007\"}", GP_UNIT_MS, GP_BAD_NONE,
         INT64_C(1700000000007)},
        /* RFC 3339 strings */
        {"json:ts", "{\"ts\":\"2026-12-02T13:59:17.123Z\"}", GP_UNIT_MS, GP_BAD_NONE,
         INT64_C(1796219957123)},
        {"json:ts", "{\"ts\":\"2026-12-02T14:59:17.123+01:00\"}", GP_UNIT_MS, GP_BAD_NONE,
         INT64_C(1796219957123)},
        {"json:ts", "{\"ts\":\"2026-02-30T00:00:00Z\"}", GP_UNIT_MS, GP_BAD_BAD_TIME, 0},
        {"json:ts", "{\"ts\":\"2026-12-02T13:59:17\\u005a\"}", GP_UNIT_MS, GP_BAD_WRONG_TYPE,
         0},
        /* blanks everywhere */
        {"json:meta.ts", " \t\r\n{ \"meta\" :\n{ \"x\" : [ 1 , { } ] ,\t\"ts\" : 9 } } ",
         GP_UNIT_MS, GP_BAD_NONE, 9},
        {"json:[1]", " [ 1 ,\n 2 ] ", GP_UNIT_MS, GP_BAD_NONE, 2},
        /* truncated, or not JSON up to the field */
        {"json:meta.ts", "{\"meta\":{\"ts\":17", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:meta.ts", "{\"meta\":{\"ts\":\"2026", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:meta.ts", "{\"meta\":{\"ts\"", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:meta.ts", "{\"meta\"", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:meta.ts", "{\"a\":\"x", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "{\"a\":tru,\"ts\":1}", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "{\"a\":[1,}],\"ts\":1}", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "{\"a\":\"\x01\",\"ts\":1}", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "\"ts\"", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        /* what follows the field is not read */
        {"json:ts", "{\"ts\":1} junk", GP_UNIT_MS, GP_BAD_NONE, 1},
        {"json:ts", "{\"ts\":1,\x01", GP_UNIT_MS, GP_BAD_NONE, 1},
        /* the field, but not a time */
        {"json:ts", "{\"ts\":true}", GP_UNIT_MS, GP_BAD_WRONG_TYPE, 0},
        {"json:ts", "{\"ts\":null}", GP_UNIT_MS, GP_BAD_WRONG_TYPE, 0},
        {"json:ts", "{\"ts\":{\"a\":1}}", GP_UNIT_MS, GP_BAD_WRONG_TYPE, 0},
        {"json:ts", "{\"ts\":truex}", GP_UNIT_MS, GP_BAD_NOT_JSON, 0},
        {"json:ts", "{\"a\":1}", GP_UNIT_MS, GP_BAD_FIELD_MISSING, 0},
        {"json:ts.x", "{\"ts\":1}", GP_UNIT_MS, GP_BAD_FIELD_MISSING, 0},
};

Test(fastread, json_rows) {
        for (size_t i = 0; i < N(json_rows); i++) {
                gp_extract_t x;
                char err[256], what[512];
                cr_assert_eq(gp_extract_compile(&x, json_rows[i].spec, json_rows[i].unit, err,
                                                sizeof err),
                             0, "%s: %s", json_rows[i].spec, err);
                size_t n = strlen(json_rows[i].doc);
                char *doc = malloc(n ? n : 1);
                cr_assert_not_null(doc);
                memcpy(doc, json_rows[i].doc, n);
                gp_record_view_t r = {.value = doc, .value_len = n, .kafka_ts = 1};
                snprintf(what, sizeof what, "row %zu: %s on %s", i, json_rows[i].spec,
                         json_rows[i].doc);
                check(&x, &r, json_rows[i].code, json_rows[i].ts, what);
                free(doc);
        }
}

/* ---- avro: ---- */

/* gp-produce's Order (bench/cost.c's schema). */
static const char ORDER[] =
        "{\"type\":\"record\",\"name\":\"Order\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\"},"
        "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
        "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"
        "{\"name\":\"customer\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"Customer\","
        "\"fields\":[{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"tier\",\"type\":"
        "{\"type\":\"enum\",\"name\":\"Tier\",\"symbols\":[\"FREE\",\"PRO\"]}}]}]},"
        "{\"name\":\"price\",\"type\":\"double\"},"
        "{\"name\":\"meta\",\"type\":{\"type\":\"record\",\"name\":\"Meta\",\"fields\":["
        "{\"name\":\"source\",\"type\":\"string\"},{\"name\":\"ts\",\"type\":{\"type\":"
        "\"long\",\"logicalType\":\"timestamp-millis\"}}]}},"
        "{\"name\":\"pad\",\"type\":\"string\"}]}";

/* Every kind of field in line before the path: records in records, null,
 * boolean, float, fixed, bytes, a map of records; the field a union. */
static const char NESTED[] =
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
        "{\"name\":\"a\",\"type\":{\"type\":\"record\",\"name\":\"A\",\"fields\":["
        "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"b\",\"type\":\"boolean\"},"
        "{\"name\":\"f\",\"type\":\"float\"},"
        "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"X\",\"size\":2}},"
        "{\"name\":\"c\",\"type\":{\"type\":\"record\",\"name\":\"C\",\"fields\":["
        "{\"name\":\"s\",\"type\":\"bytes\"},{\"name\":\"m\",\"type\":{\"type\":\"map\","
        "\"values\":{\"type\":\"record\",\"name\":\"M\",\"fields\":["
        "{\"name\":\"z\",\"type\":\"long\"}]}}}]}}]}},"
        "{\"name\":\"ts\",\"type\":[\"string\",\"null\",\"int\",\"double\"]}]}";

/* A union whose branches end in fixed sizes, then a fixed size: the
 * plan must not add the one after the union to a branch's. */
static const char FIXED_AFTER[] =
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
        "{\"name\":\"u\",\"type\":[\"null\",\"double\",\"float\"]},"
        "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"ts\",\"type\":\"long\"}]}";

/* A body as words: lN a zig-zag long, s:TEXT a string, x:HEX raw bytes. */
static size_t encode(const char *words, uint8_t *out, size_t cap) {
        size_t n = 0;
        const char *p = words;
        while (*p) {
                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                const char *e = strchr(p, ' ');
                size_t wl = e ? (size_t)(e - p) : strlen(p);
                if (p[0] == 'l') {
                        char num[32];
                        cr_assert(wl - 1 < sizeof num);
                        memcpy(num, p + 1, wl - 1);
                        num[wl - 1] = '\0';
                        int64_t v = strtoll(num, NULL, 10);
                        uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
                        while (u > 0x7f) {
                                cr_assert(n < cap);
                                out[n++] = (uint8_t)(u | 0x80);
                                u >>= 7;
                        }
                        cr_assert(n < cap);
                        out[n++] = (uint8_t)u;
                } else if (p[0] == 's' && p[1] == ':') {
                        size_t sl = wl - 2;
                        uint64_t u = (uint64_t)sl << 1;
                        cr_assert(sl < 64 && n + 1 + sl <= cap);
                        out[n++] = (uint8_t)u;
                        memcpy(out + n, p + 2, sl);
                        n += sl;
                } else if (p[0] == 'x' && p[1] == ':') {
                        for (size_t j = 2; j + 1 < wl; j += 2) {
                                unsigned b;
                                cr_assert(sscanf(p + j, "%2x", &b) == 1 && n < cap);
                                out[n++] = (uint8_t)b;
                        }
                } else {
                        cr_assert_fail("bad word in %s", words);
                }
                p += wl;
        }
        return n;
}

#define ORDER_HEAD                                                                            \
        "l100001 l2 s:priority s:gift l0 l2 s:qty l3 s:weight l500 l0 l1 s:ada l1 "           \
        "x:4040404040404040 s:web "

static const struct {
        const char *schema, *path;
        gp_unit_t unit;
        const char *body;
        gp_bad_code_t code;
        int64_t ts;
} avro_rows[] = {
        {ORDER, "meta.ts", GP_UNIT_MS, ORDER_HEAD "l1700000000007 s:pad", GP_BAD_NONE,
         INT64_C(1700000000007)},
        /* negative varints: a negative time, a negative block count (then
         * its size in bytes), the union's null branch */
        {ORDER, "meta.ts", GP_UNIT_MS, ORDER_HEAD "l-5", GP_BAD_NONE, -5},
        {ORDER, "meta.ts", GP_UNIT_MS,
         "l-100001 l-2 l10 s:abcd s:efgh l0 l-1 l5 s:qty l-3 l0 l0 x:0000000000000000 s:w "
         "l42",
         GP_BAD_NONE, 42},
        {ORDER, "meta.ts", GP_UNIT_MS,
         "l1 l1 s:a l0 l1 s:b l0 l0 l0 x:0000000000000000 s: l9223372036854775807",
         GP_BAD_NONE, INT64_MAX},
        /* refused bytes */
        {ORDER, "meta.ts", GP_UNIT_MS, ORDER_HEAD "x:ffff", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, ORDER_HEAD, GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "x:ffffffffffffffffff01", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "x:ffffffffffffffffff02 l0", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "x:ffffffffffffffffffff01 l0", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "l1 l0 l0 l2", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "l1 l0 l0 l-1", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "l1 l1 l-3", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "l1 l1 x:30 s:ab", GP_BAD_BAD_AVRO, 0},
        {ORDER, "meta.ts", GP_UNIT_MS, "l1 l0 l0 l0 x:00000000000000", GP_BAD_BAD_AVRO, 0},
        /* an array of a million items of no bytes is over the step budget */
        {ORDER, "meta.ts", GP_UNIT_MS, "l1 l1000000", GP_BAD_BAD_AVRO, 0},
        /* a fixed size after a union of fixed sizes, each branch */
        {FIXED_AFTER, "ts", GP_UNIT_MS, "l0 x:0000000000000000 l5", GP_BAD_NONE, 5},
        {FIXED_AFTER, "ts", GP_UNIT_MS, "l1 x:0000000000000000 x:0000000000000000 l6",
         GP_BAD_NONE, 6},
        {FIXED_AFTER, "ts", GP_UNIT_MS, "l2 x:00000000 x:0000000000000000 l7", GP_BAD_NONE, 7},
        {FIXED_AFTER, "ts", GP_UNIT_MS, "l3 x:0000000000000000 l7", GP_BAD_BAD_AVRO, 0},
        /* records, null, boolean, float, fixed, bytes, a map of records in
         * line; the field a union */
        {NESTED, "ts", GP_UNIT_S, "x:01 x:00000000 x:7879 s:bb l1 s:k l7 l0 l0 s:1700000000",
         GP_BAD_NONE, INT64_C(1700000000000)},
        {NESTED, "ts", GP_UNIT_S, "x:01 x:00000000 x:7879 s: l-1 l3 s:k l-7 l0 l2 l1700000",
         GP_BAD_NONE, INT64_C(1700000000)},
        {NESTED, "ts", GP_UNIT_S, "x:00 x:00000000 x:7879 s: l0 l1", GP_BAD_FIELD_MISSING, 0},
        {NESTED, "ts", GP_UNIT_S, "x:00 x:00000000 x:7879 s: l0 l3 x:0000000000000000",
         GP_BAD_WRONG_TYPE, 0},
        {NESTED, "ts", GP_UNIT_S, "x:00 x:00000000 x:7879 s: l0 l0 s:yesterday",
         GP_BAD_BAD_TIME, 0},
        {NESTED, "ts", GP_UNIT_S, "x:00 x:00000000 x:78", GP_BAD_BAD_AVRO, 0},
        {NESTED, "ts", GP_UNIT_S, "x:00 x:00000000 x:7879 s: l1 s:k x:ff", GP_BAD_BAD_AVRO, 0},
        {NESTED, "ts", GP_UNIT_S, "x:00 x:00000000 x:7879 s: l0 l4", GP_BAD_BAD_AVRO, 0},
};

Test(fastread, avro_rows) {
        for (size_t i = 0; i < N(avro_rows); i++) {
                gp_extract_t x;
                gp_avro_t av;
                gp_err_t err;
                char spec[64], what[512];
                snprintf(spec, sizeof spec, "avro:%s", avro_rows[i].path);
                cr_assert_eq(gp_extract_compile(&x, spec, avro_rows[i].unit, err.msg,
                                                sizeof err.msg),
                             0);
                cr_assert_eq(gp_avsc_compile(avro_rows[i].schema, strlen(avro_rows[i].schema),
                                             &x, &av, &err),
                             GP_OK, "%s", err.msg);
                cr_assert_not_null(av.ops, "row %zu: no skip plan", i);
                uint8_t tmp[512];
                size_t n = encode(avro_rows[i].body, tmp, sizeof tmp);
                uint8_t *body = malloc(n ? n : 1);
                cr_assert_not_null(body);
                memcpy(body, tmp, n);
                gp_record_view_t r = {
                        .value = body, .value_len = n, .kafka_ts = 1, .avro = &av};
                snprintf(what, sizeof what, "row %zu (plan): %s", i, avro_rows[i].body);
                check(&x, &r, avro_rows[i].code, avro_rows[i].ts, what);
                /* the same without the plans: the schema walk */
                gp_avro_t walk = av;
                walk.ops = NULL;
                r.avro = &walk;
                snprintf(what, sizeof what, "row %zu (walk): %s", i, avro_rows[i].body);
                check(&x, &r, avro_rows[i].code, avro_rows[i].ts, what);
                free(body);
                gp_avro_free(&av);
        }
}

/* A plan is built once per record on the path, its budget charge the
 * visits the walk would make. */
Test(fastread, plan_shape) {
        gp_extract_t x;
        gp_avro_t av;
        gp_err_t err;
        cr_assert_eq(
                gp_extract_compile(&x, "avro:meta.ts", GP_UNIT_MS, err.msg, sizeof err.msg),
                0);
        cr_assert_eq(gp_avsc_compile(ORDER, strlen(ORDER), &x, &av, &err), GP_OK, "%s",
                     err.msg);
        const gp_av_node_t *root = &av.nodes[av.root];
        cr_assert_eq(root->type, GP_AV_RECORD);
        cr_assert_neq(root->plan[0], 0);
        /* id, tags, attrs, customer, price: COST, VARINT, BLOCKS (strings),
         * BLOCKS (a map of ints), UNION of 2, BRANCH, BRANCH, the null
         * branch (COST 1, JUMP), the record branch (COST 3, LEN, VARINT,
         * JUMP), FIXED 8, END. Charged in line: the five fields, the visits
         * of the array, the map and the union (8); a branch its own visit,
         * and a record's its fields (1, 3): what the walk charges. */
        const gp_av_op_t *op = &av.ops[root->plan[0] - 1];
        uint32_t at = root->plan[0] - 1;
        cr_expect_eq(op[0].arg, 8);
        cr_expect_eq(op[4].arg, 2);
        cr_expect_eq(op[5].arg, at + 7);
        cr_expect_eq(op[6].arg, at + 9);
        cr_expect_eq(op[7].arg, 1);
        cr_expect_eq(op[8].arg, at + 13);
        cr_expect_eq(op[9].arg, 3);
        cr_expect_eq(op[12].arg, at + 13);
        cr_expect_eq(op[13].arg, 8);
        const gp_av_node_t *meta = &av.nodes[av.kids[root->kids + 5]];
        cr_assert_eq(meta->type, GP_AV_RECORD);
        cr_expect_neq(meta->plan[1], 0);
        cr_expect_eq(meta->plan[0], 0);
        gp_avro_free(&av);
}
