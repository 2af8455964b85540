/* tests/fuzz/fuzz_avro.c: libFuzzer target for gate/avro.c, the Avro walk
 * to one field, with the Confluent framing and the avro: branch of
 * gate/extract.c. Input: byte 0 picks one of the schemas below (with its
 * path and unit; compiled once by proxy/schema/avsc.c), the rest is an Avro body.
 * The same bytes are also read as a framed record.
 * Depends on gate/avro.h, gate/extract.h, proxy/schema/avsc.h and libc.
 * Invariants checked:
 *   - gp_avro_find returns one of its four codes, the same twice; on OK the
 *     kind is one of four and a string lies inside the buffer;
 *   - the walk reads nothing after the deciding bytes: the body with bytes
 *     appended gives the same answer (when it was OK or missing), and a cut
 *     gives truncated data, the step limit (its budget grows with the
 *     length), or the same answer;
 *   - gp_extract_ts agrees with gp_avro_find (OK long or string -> a ts or
 *     bad-time; null or missing -> field-missing; other -> wrong-type;
 *     data or limit -> bad-avro), and leaves *ts alone on failure;
 *   - a long with timestamp-millis comes back as itself (INT64_MIN aside);
 *   - gp_avro_frame accepts exactly the inputs of 5+ bytes starting with 0,
 *     the id big-endian, the body the rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "gate/types.h"
#include "proxy/schema/avsc.h"
#include "tests/fuzz/fuzz_check.h"

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
};

#define NS (sizeof schemas / sizeof schemas[0])

static gp_extract_t xs[NS];
static gp_avro_t avs[NS];
static int ready;

static void init(void) {
        gp_err_t err;
        for (size_t k = 0; k < NS; k++) {
                if (gp_extract_compile(&xs[k], schemas[k].spec, schemas[k].unit, err.msg,
                                       sizeof err.msg) ||
                    gp_avsc_compile(schemas[k].schema, strlen(schemas[k].schema), &xs[k],
                                    &avs[k], &err) != GP_OK) {
                        fprintf(stderr, "fuzz_avro: schema %zu: %s\n", k, err.msg);
                        abort();
                }
        }
        ready = 1;
}

static int same(const gp_avro_val_t *a, const uint8_t *abuf, const gp_avro_val_t *b,
                const uint8_t *bbuf) {
        if (a->kind != b->kind)
                return 0;
        if (a->kind == GP_AVF_LONG)
                return a->i == b->i && a->logical == b->logical;
        if (a->kind == GP_AVF_STRING)
                return a->len == b->len &&
                       (const uint8_t *)a->s - abuf == (const uint8_t *)b->s - bbuf;
        return 1;
}

static gp_avro_rc_t find_copy(const gp_avro_t *av, const uint8_t *data, size_t n, size_t extra,
                              gp_avro_val_t *v, uint8_t **copy) {
        *copy = malloc(n + extra ? n + extra : 1);
        CHECK(*copy);
        if (n)
                memcpy(*copy, data, n);
        memset(*copy + n, extra & 1 ? 0xff : 0x00, extra);
        return gp_avro_find(av, *copy, n + extra, v);
}

static void check_body(size_t k, const uint8_t *body, size_t n) {
        const gp_avro_t *av = &avs[k];
        gp_avro_val_t v, w;
        memset(&v, 0x5a, sizeof v);
        gp_avro_rc_t rc = gp_avro_find(av, body, n, &v);
        CHECK(rc == GP_AVRO_OK || rc == GP_AVRO_ERR_DATA || rc == GP_AVRO_ERR_MISSING ||
              rc == GP_AVRO_ERR_LIMIT);
        CHECK(gp_avro_find(av, body, n, &w) == rc);
        if (rc == GP_AVRO_OK) {
                CHECK(same(&v, body, &w, body));
                CHECK(v.kind == GP_AVF_LONG || v.kind == GP_AVF_STRING ||
                      v.kind == GP_AVF_NULL || v.kind == GP_AVF_OTHER);
                if (v.kind == GP_AVF_STRING) {
                        const uint8_t *s = (const uint8_t *)v.s;
                        CHECK(s >= body && v.len <= n && (size_t)(s - body) <= n - v.len);
                }
                if (v.kind == GP_AVF_LONG)
                        CHECK(v.logical <= GP_AV_LT_NANOS);
        }

        /* Appended bytes change nothing once the answer is known. */
        if (rc == GP_AVRO_OK || rc == GP_AVRO_ERR_MISSING) {
                uint8_t *c;
                for (size_t extra = 1; extra <= 8; extra += 7) {
                        CHECK(find_copy(av, body, n, extra, &w, &c) == rc);
                        if (rc == GP_AVRO_OK)
                                CHECK(same(&v, body, &w, c));
                        free(c);
                }
        }
        /* A cut is truncated, over the (smaller) budget, or the same. */
        size_t cuts[] = {n / 2, n ? n - 1 : 0};
        for (size_t i = 0; i < 2 && n; i++) {
                uint8_t *c;
                gp_avro_rc_t crc = find_copy(av, body, cuts[i], 0, &w, &c);
                CHECK(crc == GP_AVRO_ERR_DATA || crc == GP_AVRO_ERR_LIMIT || crc == rc);
                if (crc == rc && rc == GP_AVRO_OK)
                        CHECK(same(&v, body, &w, c));
                free(c);
        }

        /* The extractor agrees. */
        gp_record_view_t r = {.value = body, .value_len = n, .kafka_ts = 1, .avro = av};
        int64_t ts = 12345;
        gp_bad_t bad = {GP_BAD_NONE, NULL};
        int erc = gp_extract_ts(&xs[k], &r, &ts, &bad);
        if (erc == 0) {
                CHECK(rc == GP_AVRO_OK && (v.kind == GP_AVF_LONG || v.kind == GP_AVF_STRING));
                CHECK(ts != GP_TS_NONE);
                if (v.kind == GP_AVF_LONG && v.logical == GP_AV_LT_MILLIS)
                        CHECK(ts == v.i);
                if (v.kind == GP_AVF_LONG && v.logical == GP_AV_LT_NANOS)
                        CHECK(ts <= v.i / 1000000 && ts >= v.i / 1000000 - 1);
        } else {
                CHECK(erc == -1 && bad.code && bad.why && ts == 12345);
                const char *want;
                switch (rc) {
                case GP_AVRO_OK:
                        want = v.kind == GP_AVF_NULL    ? "field-missing"
                               : v.kind == GP_AVF_OTHER ? "wrong-type"
                                                        : "bad-time";
                        break;
                case GP_AVRO_ERR_MISSING:
                        want = "field-missing";
                        break;
                default:
                        want = "bad-avro";
                }
                CHECK(strcmp(gp_bad_name(bad.code), want) == 0);
                if (rc == GP_AVRO_OK && v.kind == GP_AVF_LONG && v.logical == GP_AV_LT_MILLIS)
                        CHECK(v.i == INT64_MIN);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!ready)
                init();
        if (size == 0)
                return 0;
        size_t k = data[0] % NS;
        check_body(k, data + 1, size - 1);

        /* The input as a framed record: magic byte, id, then a body. */
        uint32_t id = 7;
        const uint8_t *body = NULL;
        size_t blen = 3;
        int frc = gp_avro_frame(data, size, &id, &body, &blen);
        if (size >= 5 && data[0] == 0) {
                CHECK(frc == 0);
                CHECK(id == ((uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
                             (uint32_t)data[3] << 8 | data[4]));
                CHECK(body == data + 5 && blen == size - 5);
                check_body(id % NS, body, blen);
        } else {
                CHECK(frc == -1 && id == 7 && body == NULL && blen == 3);
        }
        return 0;
}
