/* tests/fuzz/fuzz_extract.c: libFuzzer target for gate/extract.c with the
 * kafka-timestamp, header: and json: extractors (avro: is fuzz_avro's).
 * fuzz_jsonpath covers the path scanner alone; this is the layer above it
 * that turns what was found into a time or a reason code.
 * Input: byte 0 picks the spec, byte 1 the unit (low 2 bits, mod 3) and
 * whether the record has a value (bit 7 clear) and a header (bit 6
 * clear); bytes 2-9 the Kafka timestamp (little endian); byte 10 the
 * header's length; then the header; the rest is the value.
 * Depends on gate/extract.h, gate/jsonpath.h, gate/timeparse.h and libc.
 * Invariants checked:
 *   - 0 with a ts that is not GP_TS_NONE, or -1 with a known code and a
 *     reason, *ts untouched;
 *   - the code fits the extractor (no json codes from a header, ...);
 *   - kafka-timestamp gives the timestamp when it is >= 0, else
 *     no-timestamp;
 *   - header: and json: give what gp_time_parse gives on the same text
 *     (for json:, the value gp_jpath_find finds), and the code says why
 *     when they fail;
 *   - the same call twice gives the same answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/extract.h"
#include "gate/jsonpath.h"
#include "gate/timeparse.h"
#include "gate/types.h"
#include "tests/fuzz/fuzz_check.h"

static const char *const specs[] = {
        "kafka-timestamp", "header:ts",    "json:ts",           "json:meta.ts",
        "json:[0]",        "json:a[1].ts", "json:$.event.time", "json:a.b.c.d.e.f.g.h",
};

static int is(const char *code, const char *const *set) {
        for (; *set; set++)
                if (!strcmp(code, *set))
                        return 1;
        return 0;
}

/* What the extractor should say about a text that holds a time. */
static void expect_text(const char *s, size_t n, gp_unit_t unit, int rc, int64_t ts,
                        const gp_bad_t *bad) {
        int64_t want = 0;
        const char *why = NULL;
        int prc = gp_time_parse(s, n, unit, &want, &why);
        if (prc == 0 && want != GP_TS_NONE) {
                CHECK(rc == 0 && ts == want);
        } else {
                CHECK(rc == -1 && !strcmp(gp_bad_name(bad->code), "bad-time"));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const all[] = {
                "no-timestamp",   "not-json", "field-missing", "wrong-type", "bad-time",
                "header-missing", NULL};
        if (size < 11)
                return 0;
        const char *spec = specs[data[0] % (sizeof specs / sizeof specs[0])];
        gp_unit_t unit = (gp_unit_t)((data[1] & 3) % 3);
        int has_value = !(data[1] & 0x80), has_header = !(data[1] & 0x40);
        uint64_t u = 0;
        for (int i = 0; i < 8; i++)
                u |= (uint64_t)data[2 + i] << (8 * i);
        int64_t kts = (int64_t)u;
        size_t hlen = data[10];
        const uint8_t *rest = data + 11;
        size_t left = size - 11;
        if (hlen > left)
                hlen = left;
        /* exact-size copies: ASan sees overreads */
        char *header = malloc(hlen ? hlen : 1);
        char *value = malloc(left - hlen ? left - hlen : 1);
        CHECK(header && value);
        memcpy(header, rest, hlen);
        memcpy(value, rest + hlen, left - hlen);
        size_t vlen = left - hlen;

        gp_extract_t x;
        char err[256];
        CHECK(gp_extract_compile(&x, spec, unit, err, sizeof err) == 0);
        gp_record_view_t r = {.value = has_value ? value : NULL,
                              .value_len = has_value ? vlen : 0,
                              .kafka_ts = kts,
                              .header = has_header ? header : NULL,
                              .header_len = has_header ? hlen : 0};
        int64_t ts = 0x5a5a, ts2 = 0x5a5a;
        gp_bad_t bad = {GP_BAD_NONE, NULL}, bad2 = {GP_BAD_NONE, NULL};
        int rc = gp_extract_ts(&x, &r, &ts, &bad);
        int rc2 = gp_extract_ts(&x, &r, &ts2, &bad2);
        CHECK(rc == rc2 && ts == ts2);
        if (rc == 0) {
                CHECK(ts != GP_TS_NONE);
        } else {
                CHECK(rc == -1 && bad.code && bad.why && ts == 0x5a5a);
                CHECK(is(gp_bad_name(bad.code), all) && bad.code == bad2.code);
        }

        switch (x.kind) {
        case GP_ET_KAFKA:
                if (kts >= 0)
                        CHECK(rc == 0 && ts == kts);
                else
                        CHECK(rc == -1 && !strcmp(gp_bad_name(bad.code), "no-timestamp"));
                break;
        case GP_ET_HEADER:
                if (!has_header)
                        CHECK(rc == -1 && !strcmp(gp_bad_name(bad.code), "header-missing"));
                else
                        expect_text(header, hlen, unit, rc, ts, &bad);
                break;
        case GP_ET_JSON: {
                gp_jval_t v;
                if (!has_value) {
                        CHECK(rc == -1 && !strcmp(gp_bad_name(bad.code), "not-json"));
                        break;
                }
                switch (gp_jpath_find(&x.path, value, vlen, &v)) {
                case GP_JSON_OK:
                        if (v.type == GP_JSON_NUMBER ||
                            (v.type == GP_JSON_STRING && !v.has_escapes))
                                expect_text(v.ptr, v.len, unit, rc, ts, &bad);
                        else
                                CHECK(rc == -1 &&
                                      !strcmp(gp_bad_name(bad.code), "wrong-type"));
                        break;
                case GP_JSON_ERR_MISSING:
                        CHECK(rc == -1 && !strcmp(gp_bad_name(bad.code), "field-missing"));
                        break;
                default:
                        CHECK(rc == -1 && !strcmp(gp_bad_name(bad.code), "not-json"));
                }
                break;
        }
        default:
                CHECK(0);
        }
        free(header);
        free(value);
        return 0;
}
