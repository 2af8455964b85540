/* tests/fuzz/fuzz_fastread.c: the differential target of the event-time
 * readers: gate/extract.c with gate/jsonpath.c, gate/avro.c (its skip
 * plans) and gate/timeparse.c, against the readers as they were before,
 * kept in tests/ref/ (ref_extract.h). The same bytes and path go to both.
 * Input: byte 0 picks the reader: below 0x80 a json: path of the list
 * below, else an Avro schema of the table below (with its path and unit);
 * byte 1 the unit of json: (low 2 bits, mod 3); the rest is the value
 * (for avro:, the body after the framing).
 * Depends on gate/, proxy/schema/avsc.h, tests/ref/ and libc.
 * What the two must agree on (docs/DESIGN.md, Reading the event time):
 *   - gp_extract_ts and ref_extract_ts: both give a time, the same one, or
 *     both refuse with the same code (not-json, field-missing, wrong-type,
 *     bad-time, bad-avro); *ts is left alone on a refusal;
 *   - json: gp_jpath_find and ref_jpath_find: the same code, and on OK the
 *     same type, bytes and escapes flag (the JSON reader checks what it
 *     reads as before; only numbers are read faster);
 *   - avro: gp_avro_find and ref_avro_find: OK with the same value, or
 *     MISSING, or both refuse the bytes: truncated data and the step
 *     budget may trade places (a plan charges the budget of what it skips
 *     before reading it), both are bad-avro to the extractor;
 *   - avro: the same with the plans and without them (the walk they
 *     replace, still used when a schema has none). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "gate/jsonpath.h"
#include "gate/types.h"
#include "proxy/schema/avsc.h"
#include "tests/ref/ref_extract.h"
#include "tests/fuzz/fuzz_check.h"

static const char *const json_specs[] = {
        "json:ts",           "json:meta.ts",         "json:[0]",       "json:a[1].ts",
        "json:$.event.time", "json:a.b.c.d.e.f.g.h", "json:a\\b",      "json:a\"b",
        "json:[2][0]",       "json:k.\\u0074s",      "json:meta.ts.x", "json:$[1].ts",
};
#define NJ (sizeof json_specs / sizeof json_specs[0])

#define NODE                                                                                  \
        "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\",\"type\":"        \
        "\"int\"},"                                                                           \
        "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}"

static const struct {
        const char *schema, *spec;
        gp_unit_t unit;
} schemas[] = {
        /* 0: flat, timestamp-millis */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"id\",\"type\":"
         "\"string\"},"
         "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}}]"
         "}",
         "avro:ts", GP_UNIT_MS},
        /* 1: every type before the field */
        {"{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a.b\",\"fields\":["
         "{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"i\",\"type\":\"int\"},"
         "{\"name\":\"l\",\"type\":\"long\"},{\"name\":\"f\",\"type\":\"float\"},"
         "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"by\",\"type\":\"bytes\"},"
         "{\"name\":\"s\",\"type\":\"string\"},"
         "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":3}},"
         "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]"
         "}},"
         "{\"name\":\"ar\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"record\","
         "\"name\":\"I\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"},"
         "{\"name\":\"y\",\"type\":\"string\"}]}}},"
         "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"string\"}},"
         "{\"name\":\"u\",\"type\":[\"null\",\"string\",\"I\"]},"
         "{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"fields\":["
         "{\"name\":\"p\",\"type\":\"double\"},"
         "{\"name\":\"q\",\"type\":{\"type\":\"array\",\"items\":\"long\"}}]}},"
         "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}}]"
         "}",
         "avro:ts", GP_UNIT_MS},
        /* 2: recursive: a linked list before the field */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"list\",\"type\":["
         "\"null\"," NODE "]},{\"name\":\"ts\",\"type\":\"long\"}]}",
         "avro:ts", GP_UNIT_S},
        /* 3: recursive: the field deep in the list */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"list\",\"type\":["
         "\"null\"," NODE "]},{\"name\":\"ts\",\"type\":\"long\"}]}",
         "avro:list.next.next.v", GP_UNIT_S},
        /* 4: union-heavy, the root a union, an optional record on the path */
        {"[\"null\",{\"type\":\"record\",\"name\":\"R\",\"fields\":["
         "{\"name\":\"u\",\"type\":[\"null\",\"int\",\"string\",{\"type\":\"array\","
         "\"items\":[\"null\",\"long\",{\"type\":\"map\",\"values\":[\"null\",\"bytes\"]}]}]},"
         "{\"name\":\"meta\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"M\","
         "\"fields\":["
         "{\"name\":\"seq\",\"type\":[\"long\",\"string\"]},"
         "{\"name\":\"ts\",\"type\":[\"null\",\"long\",\"string\",\"double\"]}]},"
         "{\"type\":\"record\",\"name\":\"M2\",\"fields\":["
         "{\"name\":\"x\",\"type\":\"int\"}]}]}]}]",
         "avro:meta.ts", GP_UNIT_US},
        /* 5: nested records, a string target */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":"
         "\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"z\",\"type\":{\"type\":\"map\","
         "\"values\":{\"type\":\"array\",\"items\":\"null\"}}},{\"name\":\"b\",\"type\":{"
         "\"type\":"
         "\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"e\",\"type\":{\"type\":\"enum\","
         "\"name\":\"E\",\"symbols\":[\"X\"]}},{\"name\":\"c\",\"type\":\"string\"}]}}]}}]}",
         "avro:a.b.c", GP_UNIT_S},
        /* 6: an int target, timestamp-nanos next to it */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"n\",\"type\":{\"type\":"
         "\"long\",\"logicalType\":\"timestamp-nanos\"}},{\"name\":\"arrs\",\"type\":{"
         "\"type\":"
         "\"array\",\"items\":{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":"
         "\"int\"}}}},{\"name\":\"ts\",\"type\":\"int\"}]}",
         "avro:ts", GP_UNIT_S},
        /* 7: the nanos long itself */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"ts\",\"type\":{\"type\":"
         "\"long\",\"logicalType\":\"timestamp-nanos\"}}]}",
         "avro:ts", GP_UNIT_MS},
        /* 8: gp-produce's Order (bench/cost.c): an array, a map, a union
         * of null and a record, a double and a record before the field */
        {"{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"gp.test\",\"fields\":["
         "{\"name\":\"id\",\"type\":\"long\"},"
         "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
         "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"
         "{\"name\":\"customer\",\"type\":[\"null\",{\"type\":\"record\",\"name\":"
         "\"Customer\",\"fields\":[{\"name\":\"name\",\"type\":\"string\"},"
         "{\"name\":\"tier\",\"type\":{\"type\":\"enum\",\"name\":\"Tier\","
         "\"symbols\":[\"FREE\",\"PRO\"]}}]}]},"
         "{\"name\":\"price\",\"type\":\"double\"},"
         "{\"name\":\"meta\",\"type\":{\"type\":\"record\",\"name\":\"Meta\",\"fields\":["
         "{\"name\":\"source\",\"type\":\"string\"},{\"name\":\"ts\",\"type\":{"
         "\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}}]}},"
         "{\"name\":\"pad\",\"type\":\"string\"}]}",
         "avro:meta.ts", GP_UNIT_MS},
        /* 9: records in records before the field, fixed, boolean, float
         * and null fields in line, a map of records */
        {"{\"type\":\"record\",\"name\":\"R\",\"fields\":["
         "{\"name\":\"a\",\"type\":{\"type\":\"record\",\"name\":\"A\",\"fields\":["
         "{\"name\":\"n\",\"type\":\"null\"},{\"name\":\"b\",\"type\":\"boolean\"},"
         "{\"name\":\"f\",\"type\":\"float\"},"
         "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"X\",\"size\":2}},"
         "{\"name\":\"c\",\"type\":{\"type\":\"record\",\"name\":\"C\",\"fields\":["
         "{\"name\":\"s\",\"type\":\"bytes\"},{\"name\":\"m\",\"type\":{\"type\":"
         "\"map\",\"values\":{\"type\":\"record\",\"name\":\"A2\",\"fields\":["
         "{\"name\":\"z\",\"type\":\"long\"}]}}}]}}]}},"
         "{\"name\":\"ts\",\"type\":[\"string\",\"null\",\"int\"]}]}",
         "avro:ts", GP_UNIT_S},
};

#define NS (sizeof schemas / sizeof schemas[0])

static gp_extract_t xs[NS];
static gp_avro_t avs[NS], walk[NS];
static gp_extract_t jx[NJ][3];
static int ready;

static void init(void) {
        gp_err_t err;
        for (size_t k = 0; k < NS; k++) {
                if (gp_extract_compile(&xs[k], schemas[k].spec, schemas[k].unit, err.msg,
                                       sizeof err.msg) ||
                    gp_avsc_compile(schemas[k].schema, strlen(schemas[k].schema), &xs[k],
                                    &avs[k], &err) != GP_OK) {
                        fprintf(stderr, "fuzz_fastread: schema %zu: %s\n", k, err.msg);
                        abort();
                }
                /* the same table without its plans: gp_avro_find walks */
                walk[k] = avs[k];
                walk[k].ops = NULL;
                walk[k].n_ops = walk[k].cap_ops = 0;
                CHECK(avs[k].ops != NULL);
        }
        for (size_t k = 0; k < NJ; k++)
                for (int u = 0; u < 3; u++)
                        CHECK(gp_extract_compile(&jx[k][u], json_specs[k], (gp_unit_t)u,
                                                 err.msg, sizeof err.msg) == 0);
        ready = 1;
}

static void same_extract(const gp_extract_t *x, const gp_record_view_t *r) {
        int64_t a = 0x5a5a, b = 0x5a5a;
        gp_bad_t ba = {GP_BAD_NONE, NULL}, bb = {GP_BAD_NONE, NULL};
        int ra = gp_extract_ts(x, r, &a, &ba);
        int rb = ref_extract_ts(x, r, &b, &bb);
        if (ra != rb || a != b || ba.code != bb.code) {
                fprintf(stderr, "new rc=%d ts=%lld code=%d, ref rc=%d ts=%lld code=%d\n", ra,
                        (long long)a, (int)ba.code, rb, (long long)b, (int)bb.code);
                CHECK(0);
        }
        if (ra)
                CHECK(a == 0x5a5a && ba.why);
}

static int avro_refused(gp_avro_rc_t rc) {
        return rc == GP_AVRO_ERR_DATA || rc == GP_AVRO_ERR_LIMIT;
}

static void same_avro(const gp_avro_t *av, const uint8_t *body, size_t n) {
        gp_avro_val_t a, b;
        gp_avro_rc_t ra = gp_avro_find(av, body, n, &a);
        gp_avro_rc_t rb = ref_avro_find(av, body, n, &b);
        if (avro_refused(ra) || avro_refused(rb)) {
                CHECK(avro_refused(ra) && avro_refused(rb));
                return;
        }
        CHECK(ra == rb);
        if (ra != GP_AVRO_OK)
                return;
        CHECK(a.kind == b.kind && a.logical == b.logical && a.i == b.i && a.len == b.len &&
              a.s == b.s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!ready)
                init();
        if (size < 2)
                return 0;
        /* an exact-size copy: ASan sees overreads */
        size_t n = size - 2;
        uint8_t *v = malloc(n ? n : 1);
        CHECK(v);
        memcpy(v, data + 2, n);
        if (data[0] < 0x80) {
                const gp_extract_t *x = &jx[data[0] % NJ][(data[1] & 3) % 3];
                gp_record_view_t r = {.value = v, .value_len = n, .kafka_ts = 1};
                same_extract(x, &r);
                gp_jval_t a, b;
                gp_json_rc_t ra = gp_jpath_find(&x->path, (const char *)v, n, &a);
                gp_json_rc_t rb = ref_jpath_find(&x->path, (const char *)v, n, &b);
                CHECK(ra == rb);
                if (ra == GP_JSON_OK)
                        CHECK(a.type == b.type && a.ptr == b.ptr && a.len == b.len &&
                              a.has_escapes == b.has_escapes);
        } else {
                size_t k = (size_t)(data[0] - 0x80) % NS;
                gp_record_view_t r = {
                        .value = v, .value_len = n, .kafka_ts = 1, .avro = &avs[k]};
                same_extract(&xs[k], &r);
                r.avro = &walk[k];
                same_extract(&xs[k], &r);
                same_avro(&avs[k], v, n);
                same_avro(&walk[k], v, n);
        }
        free(v);
        return 0;
}
