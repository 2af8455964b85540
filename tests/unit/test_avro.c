/* tests/unit/test_avro.c: the Avro event-time path end to end: the schema
 * compiler (proxy/schema/avsc.c), the binary walk (gate/avro.c), the Confluent
 * framing and the avro: extractor (gate/extract.c).
 *
 * avro-c is the independent side: it parses each schema on its own, encodes
 * every record (from a JSON description in the tables, from a seeded random
 * filler in the property test), reads hand-crafted bytes back, and says
 * what value sits at the path and where its bytes end (avro_value_sizeof);
 * our decoder must agree. Every encoding is copied into a heap buffer of
 * exactly its length, so a read past it is an AddressSanitizer report.
 * Schemas and values in the tables are JSON written with ' for ".
 * Depends on gate/, proxy/schema/avsc.h, avro-c, cJSON and Criterion. */
#include <avro.h>
#include <cjson/cJSON.h>
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

/* ---- helpers ---- */

/* s with every ' turned into " (malloc'd). */
static char *dq(const char *s) {
        char *d = strdup(s);
        cr_assert_not_null(d);
        for (char *p = d; *p; p++)
                if (*p == '\'')
                        *p = '"';
        return d;
}

typedef struct bytes {
        uint8_t *b;
        size_t len;
} bytes_t;

static void bytes_free(bytes_t *e) {
        free(e->b);
        e->b = NULL;
        e->len = 0;
}

/* Compiles "avro:<path>" and the schema (single-quoted JSON) for it. */
static gp_errcode_t compile(const char *schema_sq, const char *path, gp_unit_t unit,
                            gp_extract_t *x, gp_avro_t *av, gp_err_t *err) {
        char spec[1200], xerr[256];
        snprintf(spec, sizeof spec, "avro:%s", path);
        cr_assert_eq(gp_extract_compile(x, spec, unit, xerr, sizeof xerr), 0, "%s: %s", spec,
                     xerr);
        char *schema = dq(schema_sq);
        gp_errcode_t rc = gp_avsc_compile(schema, strlen(schema), x, av, err);
        free(schema);
        return rc;
}

static void compile_ok(const char *schema_sq, const char *path, gp_unit_t unit,
                       gp_extract_t *x, gp_avro_t *av) {
        gp_err_t err = {0};
        gp_errcode_t rc = compile(schema_sq, path, unit, x, av, &err);
        cr_assert_eq(rc, GP_OK, "%s for %s: %s", schema_sq, path, err.msg);
        cr_assert_eq(av->path_len, x->avro_n);
        cr_assert_lt(av->root, av->n_nodes);
}

/* gp_avro_find over an exact heap copy; out->s is mapped back into b. */
static gp_avro_rc_t find(const gp_avro_t *av, const uint8_t *b, size_t len,
                         gp_avro_val_t *out) {
        uint8_t *c = malloc(len ? len : 1);
        cr_assert_not_null(c);
        if (len)
                memcpy(c, b, len);
        memset(out, 0x5a, sizeof(*out));
        gp_avro_rc_t rc = gp_avro_find(av, c, len, out);
        if (rc == GP_AVRO_OK && out->kind == GP_AVF_STRING) {
                const uint8_t *s = (const uint8_t *)out->s;
                cr_assert(s >= c && out->len <= len && (size_t)(s - c) <= len - out->len,
                          "string outside the buffer");
                out->s = (const char *)b + (s - c);
        }
        free(c);
        return rc;
}

/* gp_extract_ts over an exact heap copy of the body. */
static int extract(const gp_extract_t *x, const gp_avro_t *av, const uint8_t *b, size_t len,
                   int64_t *ts, gp_bad_t *bad) {
        uint8_t *c = malloc(len ? len : 1);
        cr_assert_not_null(c);
        if (len)
                memcpy(c, b, len);
        gp_record_view_t r = {.value = c, .value_len = len, .kafka_ts = 5, .avro = av};
        bad->code = GP_BAD_NONE;
        bad->why = NULL;
        int rc = gp_extract_ts(x, &r, ts, bad);
        free(c);
        return rc;
}

/* ---- avro-c: values from JSON, encoding ---- */

typedef struct aval {
        avro_schema_t schema;
        avro_value_iface_t *cls;
        avro_value_t v;
} aval_t;

static void aval_new(aval_t *a, const char *schema_sq) {
        char *s = dq(schema_sq);
        cr_assert_eq(avro_schema_from_json_length(s, strlen(s), &a->schema), 0,
                     "avro-c refuses %s: %s", s, avro_strerror());
        free(s);
        a->cls = avro_generic_class_from_schema(a->schema);
        cr_assert_not_null(a->cls, "%s", avro_strerror());
        cr_assert_eq(avro_generic_value_new(a->cls, &a->v), 0, "%s", avro_strerror());
}

static void aval_free(aval_t *a) {
        avro_value_decref(&a->v);
        avro_value_iface_decref(a->cls);
        avro_schema_decref(a->schema);
}

static avro_schema_t unlink_schema(avro_schema_t s) {
        while (s && avro_typeof(s) == AVRO_LINK)
                s = avro_schema_link_target(s);
        return s;
}

static int64_t json_long(const cJSON *j) {
        if (cJSON_IsString(j)) {
                char *end;
                long long v = strtoll(j->valuestring, &end, 10);
                cr_assert(*end == '\0' && end != j->valuestring, "bad long \"%s\"",
                          j->valuestring);
                return (int64_t)v;
        }
        cr_assert(cJSON_IsNumber(j), "a long must be a number or a decimal string");
        cr_assert(j->valuedouble == (double)(int64_t)j->valuedouble, "inexact long");
        return (int64_t)j->valuedouble;
}

/* Sets v from j, Avro's JSON encoding: a union is null or {"branch": value}
 * (branch a type name, or #index); bytes and fixed are strings; a long may
 * be a decimal string (for values past 2^53). */
static void fill_json(avro_value_t *v, const cJSON *j) {
        avro_schema_t s = unlink_schema(avro_value_get_schema(v));
        avro_value_t c;
        switch (avro_value_get_type(v)) {
        case AVRO_NULL:
                cr_assert(cJSON_IsNull(j));
                cr_assert_eq(avro_value_set_null(v), 0);
                return;
        case AVRO_BOOLEAN:
                cr_assert(cJSON_IsBool(j));
                cr_assert_eq(avro_value_set_boolean(v, cJSON_IsTrue(j)), 0);
                return;
        case AVRO_INT32:
                cr_assert_eq(avro_value_set_int(v, (int32_t)json_long(j)), 0);
                return;
        case AVRO_INT64:
                cr_assert_eq(avro_value_set_long(v, json_long(j)), 0);
                return;
        case AVRO_FLOAT:
                cr_assert(cJSON_IsNumber(j));
                cr_assert_eq(avro_value_set_float(v, (float)j->valuedouble), 0);
                return;
        case AVRO_DOUBLE:
                cr_assert(cJSON_IsNumber(j));
                cr_assert_eq(avro_value_set_double(v, j->valuedouble), 0);
                return;
        case AVRO_STRING:
                cr_assert(cJSON_IsString(j));
                cr_assert_eq(avro_value_set_string(v, j->valuestring), 0);
                return;
        case AVRO_BYTES:
                cr_assert(cJSON_IsString(j));
                cr_assert_eq(avro_value_set_bytes(v, j->valuestring, strlen(j->valuestring)),
                             0);
                return;
        case AVRO_FIXED:
                cr_assert(cJSON_IsString(j));
                cr_assert_eq((int64_t)strlen(j->valuestring), avro_schema_fixed_size(s),
                             "fixed \"%s\" of the wrong size", j->valuestring);
                cr_assert_eq(avro_value_set_fixed(v, j->valuestring, strlen(j->valuestring)),
                             0);
                return;
        case AVRO_ENUM: {
                cr_assert(cJSON_IsString(j));
                int i = avro_schema_enum_get_by_name(s, j->valuestring);
                cr_assert_geq(i, 0, "no symbol %s", j->valuestring);
                cr_assert_eq(avro_value_set_enum(v, i), 0);
                return;
        }
        case AVRO_ARRAY: {
                const cJSON *e;
                cr_assert(cJSON_IsArray(j));
                cJSON_ArrayForEach(e, j) {
                        cr_assert_eq(avro_value_append(v, &c, NULL), 0);
                        fill_json(&c, e);
                }
                return;
        }
        case AVRO_MAP: {
                const cJSON *e;
                cr_assert(cJSON_IsObject(j));
                cJSON_ArrayForEach(e, j) {
                        cr_assert_eq(avro_value_add(v, e->string, &c, NULL, NULL), 0);
                        fill_json(&c, e);
                }
                return;
        }
        case AVRO_UNION: {
                int idx = -1;
                if (cJSON_IsNull(j)) {
                        for (size_t i = 0; i < avro_schema_union_size(s); i++)
                                if (avro_typeof(avro_schema_union_branch(s, (int)i)) ==
                                    AVRO_NULL)
                                        idx = (int)i;
                        cr_assert_geq(idx, 0, "null for a union without null");
                        cr_assert_eq(avro_value_set_branch(v, idx, &c), 0);
                        cr_assert_eq(avro_value_set_null(&c), 0);
                        return;
                }
                cr_assert(cJSON_IsObject(j) && cJSON_GetArraySize(j) == 1,
                          "a union value is null or {\"branch\": value}");
                const cJSON *e = j->child;
                if (e->string[0] == '#')
                        idx = (int)strtol(e->string + 1, NULL, 10);
                else
                        cr_assert_not_null(
                                avro_schema_union_branch_by_name(s, &idx, e->string),
                                "no branch %s", e->string);
                cr_assert_eq(avro_value_set_branch(v, idx, &c), 0);
                fill_json(&c, e);
                return;
        }
        case AVRO_RECORD: {
                size_t n;
                cr_assert(cJSON_IsObject(j));
                cr_assert_eq(avro_value_get_size(v, &n), 0);
                for (size_t i = 0; i < n; i++) {
                        const char *name;
                        cr_assert_eq(avro_value_get_by_index(v, i, &c, &name), 0);
                        const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, name);
                        cr_assert_not_null(e, "no value for field %s", name);
                        fill_json(&c, e);
                }
                return;
        }
        default:
                cr_assert_fail("unexpected avro-c type %d", (int)avro_value_get_type(v));
        }
}

static bytes_t write_value(avro_value_t *v) {
        size_t n;
        bytes_t e;
        cr_assert_eq(avro_value_sizeof(v, &n), 0, "%s", avro_strerror());
        e.b = malloc(n ? n : 1);
        e.len = n;
        cr_assert_not_null(e.b);
        avro_writer_t w = avro_writer_memory((const char *)e.b, (int64_t)n);
        cr_assert_eq(avro_value_write(w, v), 0, "%s", avro_strerror());
        cr_assert_eq(avro_writer_tell(w), (int64_t)n);
        avro_writer_free(w);
        return e;
}

/* avro-c's encoding of value_sq (single-quoted JSON) under schema_sq. */
static bytes_t encode(const char *schema_sq, const char *value_sq) {
        aval_t a;
        aval_new(&a, schema_sq);
        char *vj = dq(value_sq);
        cJSON *j = cJSON_Parse(vj);
        cr_assert_not_null(j, "bad value JSON %s", vj);
        fill_json(&a.v, j);
        bytes_t e = write_value(&a.v);
        cJSON_Delete(j);
        free(vj);
        aval_free(&a);
        return e;
}

/* Hand-made bytes. */
typedef struct wbuf {
        uint8_t b[512];
        size_t n;
} wbuf_t;

static void put_long(wbuf_t *w, int64_t v) {
        uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
        do {
                cr_assert_lt(w->n, sizeof w->b);
                uint8_t c = u & 0x7f;
                u >>= 7;
                w->b[w->n++] = c | (u ? 0x80 : 0);
        } while (u);
}

static void put_raw(wbuf_t *w, const void *p, size_t n) {
        cr_assert_leq(w->n + n, sizeof w->b);
        memcpy(w->b + w->n, p, n);
        w->n += n;
}

static void put_str(wbuf_t *w, const char *s) {
        put_long(w, (int64_t)strlen(s));
        put_raw(w, s, strlen(s));
}

/* ---- tables: schema, path, unit, value -> code and ts ---- */

#define REC(fields)     "{'type':'record','name':'R','fields':[" fields "]}"
#define FLD(name, type) "{'name':'" name "','type':" type "}"
#define TS_MILLIS       "{'type':'long','logicalType':'timestamp-millis'}"
#define TS_MICROS       "{'type':'long','logicalType':'timestamp-micros'}"
#define TS_NANOS        "{'type':'long','logicalType':'timestamp-nanos'}"

#define S10  "0123456789"
#define S150 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10 S10

/* Every Avro type, with a value worth skipping. (Kept by hand: clang-format
 * 14 does not reach a fixed point on string macros this long.) */
// clang-format off
#define ALL_TYPES \
        FLD("b", "'boolean'") "," FLD("i", "'int'") "," FLD("l", "'long'") "," \
        FLD("f", "'float'") "," FLD("d", "'double'") "," FLD("by", "'bytes'") "," \
        FLD("s", "'string'") "," FLD("fx", "{'type':'fixed','name':'F','size':5}") "," \
        FLD("e", "{'type':'enum','name':'E','symbols':['A','B','C']}") "," \
        FLD("ar", "{'type':'array','items':{'type':'record','name':'I','fields':[" \
                  "{'name':'x','type':'int'},{'name':'y','type':'string'}]}}") "," \
        FLD("m", "{'type':'map','values':'string'}") "," FLD("u", "['null','string','I']") "," \
        FLD("n", "{'type':'record','name':'N','fields':[{'name':'p','type':'double'}," \
                 "{'name':'q','type':{'type':'array','items':'long'}}]}")
#define ALL_VALUES \
        "'b':true,'i':-123456,'l':'-9223372036854775808','f':1.5,'d':-2.25e300," \
        "'by':'raw bytes','s':'" S150 "','fx':'abcde','e':'C'," \
        "'ar':[{'x':1,'y':'a'},{'x':-300,'y':'bb'}],'m':{'k1':'v1','k2':'v22'}," \
        "'u':{'I':{'x':7,'y':'in a union'}},'n':{'p':0.5,'q':[1,-2,300000000000]}"

#define LIST_NODE \
        "{'type':'record','name':'Node','fields':[{'name':'v','type':'long'}," \
        "{'name':'next','type':['null','Node']}]}"
// clang-format on

typedef struct row {
        const char *schema, *path;
        gp_unit_t unit;
        const char *value;
        const char *code; /* NULL: ok, with ts */
        int64_t ts;
} row_t;

static const row_t rows[] = {
        /* logical types */
        {REC(FLD("id", "'string'") "," FLD("ts", TS_MILLIS)), "ts", GP_UNIT_S,
         "{'id':'x','ts':1767225600123}", NULL, 1767225600123},
        {REC(FLD("ts", TS_MILLIS)), "ts", GP_UNIT_MS, "{'ts':-1}", NULL, -1},
        {REC(FLD("ts", TS_MILLIS)), "ts", GP_UNIT_MS, "{'ts':'9223372036854775807'}", NULL,
         INT64_MAX},
        {REC(FLD("ts", TS_MILLIS)), "ts", GP_UNIT_MS, "{'ts':'-9223372036854775808'}",
         "bad-time", 0},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_S, "{'ts':1767225600123456}", NULL,
         1767225600123},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_MS, "{'ts':0}", NULL, 0},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_MS, "{'ts':-1}", NULL, -1},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_MS, "{'ts':-999}", NULL, -1},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_MS, "{'ts':-1000}", NULL, -1},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_MS, "{'ts':-1001}", NULL, -2},
        {REC(FLD("ts", TS_MICROS)), "ts", GP_UNIT_MS, "{'ts':'-9223372036854775808'}", NULL,
         -9223372036854776},
        {REC(FLD("ts", TS_NANOS)), "ts", GP_UNIT_US, "{'ts':'1767225600123456789'}", NULL,
         1767225600123},
        {REC(FLD("ts", TS_NANOS)), "ts", GP_UNIT_MS, "{'ts':-1}", NULL, -1},
        {REC(FLD("ts", TS_NANOS)), "ts", GP_UNIT_MS, "{'ts':-1000000}", NULL, -1},
        {REC(FLD("ts", TS_NANOS)), "ts", GP_UNIT_MS, "{'ts':-1000001}", NULL, -2},
        {REC(FLD("ts", TS_NANOS)), "ts", GP_UNIT_MS, "{'ts':999999}", NULL, 0},
        /* a logical type on int, or one we do not know, is ignored: the unit */
        {REC(FLD("ts", "{'type':'int','logicalType':'timestamp-millis'}")), "ts", GP_UNIT_S,
         "{'ts':1700000000}", NULL, 1700000000000},
        {REC(FLD("ts", "{'type':'long','logicalType':'local-timestamp-millis'}")), "ts",
         GP_UNIT_S, "{'ts':1700000000}", NULL, 1700000000000},
        /* plain long and int, by the unit */
        {REC(FLD("ts", "'long'")), "ts", GP_UNIT_MS, "{'ts':1700000000123}", NULL,
         1700000000123},
        {REC(FLD("ts", "'long'")), "ts", GP_UNIT_S, "{'ts':1700000000}", NULL, 1700000000000},
        {REC(FLD("ts", "'long'")), "ts", GP_UNIT_S, "{'ts':-2}", NULL, -2000},
        {REC(FLD("ts", "'long'")), "ts", GP_UNIT_US, "{'ts':1700000000123999}", NULL,
         1700000000123},
        {REC(FLD("ts", "'long'")), "ts", GP_UNIT_US, "{'ts':-1}", NULL, -1},
        {REC(FLD("ts", "'long'")), "ts", GP_UNIT_S, "{'ts':'9223372036854775807'}", "bad-time",
         0},
        {REC(FLD("ts", "{'type':'long'}")), "ts", GP_UNIT_MS, "{'ts':42}", NULL, 42},
        {REC(FLD("ts", "'int'")), "ts", GP_UNIT_S, "{'ts':1700000000}", NULL, 1700000000000},
        {REC(FLD("ts", "'int'")), "ts", GP_UNIT_MS, "{'ts':-2147483648}", NULL, -2147483648},
        {REC(FLD("ts", "'int'")), "ts", GP_UNIT_MS, "{'ts':2147483647}", NULL, 2147483647},
        /* strings */
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_MS, "{'ts':'2026-01-01T00:00:00.123Z'}",
         NULL, 1767225600123},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_MS, "{'ts':'2026-01-01T01:00:00+01:00'}",
         NULL, 1767225600000},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_S, "{'ts':'1700000000'}", NULL,
         1700000000000},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_S, "{'ts':'1700000000.5'}", NULL,
         1700000000500},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_MS, "{'ts':'1700000000123'}", NULL,
         1700000000123},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_MS, "{'ts':'yesterday'}", "bad-time", 0},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_MS, "{'ts':''}", "bad-time", 0},
        {REC(FLD("ts", "'string'")), "ts", GP_UNIT_MS, "{'ts':'2026-02-30T00:00:00Z'}",
         "bad-time", 0},
        /* nested path */
        {REC(FLD("a", "{'type':'record','name':'A','fields':[{'name':'x','type':'string'},"
                      "{'name':'b','type':{'type':'record','name':'B','fields':["
                      "{'name':'y','type':'double'},{'name':'c','type':'long'}]}}]}")),
         "a.b.c", GP_UNIT_MS, "{'a':{'x':'skip me','b':{'y':1.0,'c':77}}}", NULL, 77},
        /* every type before the field, together */
        {REC(ALL_TYPES "," FLD("ts", TS_MILLIS)), "ts", GP_UNIT_MS,
         "{" ALL_VALUES ",'ts':1767225600999}", NULL, 1767225600999},
        /* a field inside a nested record, after every type, more after it */
        {REC(ALL_TYPES "," FLD("ts", TS_MILLIS) "," FLD("after", "'string'")), "after",
         GP_UNIT_S, "{" ALL_VALUES ",'ts':5,'after':'1700000000'}", NULL, 1700000000000},
        {REC(ALL_TYPES
             "," FLD("w", "{'type':'record','name':'W','fields':["
                          "{'name':'f1','type':'F'},{'name':'e1','type':'E'},"
                          "{'name':'i1','type':'I'},{'name':'n1','type':'N'},"
                          "{'name':'m1','type':{'type':'map','values':'I'}},"
                          "{'name':'ts','type':'long'},{'name':'z','type':'int'}]}")),
         "w.ts", GP_UNIT_MS,
         "{" ALL_VALUES ",'w':{'f1':'12345','e1':'B','i1':{'x':3,'y':'yy'},"
         "'n1':{'p':2.0,'q':[5,6]},'m1':{'a':{'x':4,'y':''}},'ts':31,'z':1}}",
         NULL, 31},
        /* optional target */
        {REC(FLD("a", "'int'") "," FLD("ts", "['null','long']")), "ts", GP_UNIT_MS,
         "{'a':1,'ts':null}", "field-missing", 0},
        {REC(FLD("a", "'int'") "," FLD("ts", "['null','long']")), "ts", GP_UNIT_MS,
         "{'a':1,'ts':{'long':1700000000000}}", NULL, 1700000000000},
        {REC(FLD("ts", "['null','string','long']")), "ts", GP_UNIT_MS,
         "{'ts':{'string':'2026-01-01T00:00:00Z'}}", NULL, 1767225600000},
        {REC(FLD("ts", "['null'," TS_MICROS "]")), "ts", GP_UNIT_MS,
         "{'ts':{'long':1767225600000001}}", NULL, 1767225600000},
        {REC(FLD("ts", "['long','boolean']")), "ts", GP_UNIT_MS, "{'ts':{'boolean':true}}",
         "wrong-type", 0},
        {REC(FLD("ts", "['long','double']")), "ts", GP_UNIT_MS, "{'ts':{'double':1.0}}",
         "wrong-type", 0},
        /* optional record on the path */
        {REC(FLD("x", "'long'") "," FLD("meta", "['null',{'type':'record','name':'M',"
                                                "'fields':[{'name':'ts','type':'long'}]}]")),
         "meta.ts", GP_UNIT_MS, "{'x':1,'meta':null}", "field-missing", 0},
        {REC(FLD("x", "'long'") "," FLD("meta", "['null',{'type':'record','name':'M',"
                                                "'fields':[{'name':'ts','type':'long'}]}]")),
         "meta.ts", GP_UNIT_MS, "{'x':1,'meta':{'M':{'ts':99}}}", NULL, 99},
        /* two records in a union, only one with the field */
        {REC(FLD("u",
                 "[{'type':'record','name':'P','fields':[{'name':'ts','type':'long'}]},"
                 "{'type':'record','name':'Q','fields':[{'name':'q','type':'string'}]}]")),
         "u.ts", GP_UNIT_MS, "{'u':{'Q':{'q':'no ts here'}}}", "field-missing", 0},
        {REC(FLD("u",
                 "[{'type':'record','name':'P','fields':[{'name':'ts','type':'long'}]},"
                 "{'type':'record','name':'Q','fields':[{'name':'q','type':'string'}]}]")),
         "u.ts", GP_UNIT_MS, "{'u':{'P':{'ts':123}}}", NULL, 123},
        /* a recursive schema before the field */
        {REC(FLD("list", "['null'," LIST_NODE "]") "," FLD("ts", "'long'")), "ts", GP_UNIT_MS,
         "{'list':{'Node':{'v':1,'next':{'Node':{'v':2,'next':{'Node':{'v':3,'next':null}}}}}}"
         ","
         "'ts':4242}",
         NULL, 4242},
        {REC(FLD("list", "['null'," LIST_NODE "]") "," FLD("ts", "'long'")), "list.v",
         GP_UNIT_MS, "{'list':{'Node':{'v':11,'next':null}},'ts':1}", NULL, 11},
        {REC(FLD("list", "['null'," LIST_NODE "]") "," FLD("ts", "'long'")), "list.next.v",
         GP_UNIT_MS, "{'list':{'Node':{'v':11,'next':{'Node':{'v':12,'next':null}}}},'ts':1}",
         NULL, 12},
        {REC(FLD("list", "['null'," LIST_NODE "]") "," FLD("ts", "'long'")), "list.next.v",
         GP_UNIT_MS, "{'list':{'Node':{'v':11,'next':null}},'ts':1}", "field-missing", 0},
        /* namespaces: references by short and full name, inherited */
        {"{'type':'record','name':'R','namespace':'com.x','fields':["
         "{'name':'a','type':{'type':'record','name':'In','fields':[{'name':'v','type':'long'}"
         "]}},"
         "{'name':'b','type':'In'},{'name':'c','type':'com.x.In'},{'name':'ts','type':'long'}]"
         "}",
         "ts", GP_UNIT_MS, "{'a':{'v':1},'b':{'v':200},'c':{'v':-30000},'ts':42}", NULL, 42},
        {"{'type':'record','name':'R','namespace':'com.x','fields':["
         "{'name':'a','type':{'type':'record','name':'In','fields':[{'name':'v','type':'long'}"
         "]}},"
         "{'name':'b','type':'In'},{'name':'c','type':'com.x.In'},{'name':'ts','type':'long'}]"
         "}",
         "c.v", GP_UNIT_MS, "{'a':{'v':1},'b':{'v':200},'c':{'v':-30000},'ts':42}", NULL,
         -30000},
        /* a dotted name gives its namespace to the types inside */
        {"{'type':'record','name':'a.b.R','fields':["
         "{'name':'f','type':{'type':'fixed','name':'F','size':3}},"
         "{'name':'g','type':'a.b.F'},{'name':'h','type':'F'},{'name':'ts','type':'long'}]}",
         "ts", GP_UNIT_MS, "{'f':'xyz','g':'uvw','h':'rst','ts':7}", NULL, 7},
        /* a dotted name in a namespace; a type defined inside keeps it */
        {"{'type':'record','name':'R','namespace':'x','fields':["
         "{'name':'a','type':{'type':'record','name':'y.In','fields':["
         "{'name':'e','type':{'type':'enum','name':'E','symbols':['A','B']}}]}},"
         "{'name':'b','type':'y.E'},{'name':'ts','type':'long'}]}",
         "ts", GP_UNIT_MS, "{'a':{'e':'B'},'b':'A','ts':8}", NULL, 8},
        /* the same short name in two namespaces, of different sizes */
        {"{'type':'record','name':'R','namespace':'n1','fields':["
         "{'name':'a','type':{'type':'fixed','name':'T','size':1}},"
         "{'name':'b','type':{'type':'fixed','name':'T','namespace':'n2','size':5}},"
         "{'name':'c','type':'n2.T'},{'name':'d','type':'T'},{'name':'e','type':'n1.T'},"
         "{'name':'ts','type':'long'}]}",
         "ts", GP_UNIT_MS, "{'a':'x','b':'yyyyy','c':'zzzzz','d':'w','e':'v','ts':9}", NULL,
         9},
        /* the root is a union */
        {"['null'," REC(FLD("x", "'string'") "," FLD("ts", "'long'")) "]", "ts", GP_UNIT_MS,
         "{'R':{'x':'q','ts':12}}", NULL, 12},
        {"['null'," REC(FLD("x", "'string'") "," FLD("ts", "'long'")) "]", "ts", GP_UNIT_MS,
         "null", "field-missing", 0},
};

static void run_row(const row_t *r) {
        gp_extract_t x;
        gp_avro_t av;
        gp_err_t err = {0};
        gp_errcode_t crc = compile(r->schema, r->path, r->unit, &x, &av, &err);
        cr_assert_eq(crc, GP_OK, "%s for %s: %s", r->schema, r->path, err.msg);
        bytes_t e = encode(r->schema, r->value);
        int64_t ts = -77;
        gp_bad_t bad;
        int rc = extract(&x, &av, e.b, e.len, &ts, &bad);
        if (r->code) {
                cr_assert_eq(rc, -1, "%s %s: ts %" PRId64 ", wanted %s", r->path, r->value, ts,
                             r->code);
                cr_assert_str_eq(gp_bad_name(bad.code), r->code, "%s %s: %s (%s)", r->path,
                                 r->value, gp_bad_name(bad.code), bad.why);
                cr_assert_not_null(bad.why);
        } else {
                cr_assert_eq(rc, 0, "%s %s: %s (%s)", r->path, r->value, bad.code, bad.why);
                cr_assert_eq(ts, r->ts, "%s %s: %" PRId64 " != %" PRId64, r->path, r->value,
                             ts, r->ts);
        }
        /* Trailing bytes after the record are never read. */
        bytes_t more = {malloc(e.len + 3), e.len + 3};
        cr_assert_not_null(more.b);
        memcpy(more.b, e.b, e.len);
        memcpy(more.b + e.len, "\xff\xff\xff", 3);
        int64_t ts2 = -77;
        gp_bad_t bad2;
        cr_assert_eq(extract(&x, &av, more.b, more.len, &ts2, &bad2), rc);
        cr_assert_eq(ts2, rc ? -77 : ts);
        bytes_free(&more);
        bytes_free(&e);
        gp_avro_free(&av);
}

Test(avro, table) {
        for (size_t k = 0; k < N(rows); k++)
                run_row(&rows[k]);
}

/* Each type alone before the field, then a tell-tale ts. */
Test(avro, each_type_before_the_field) {
        static const struct {
                const char *type, *value;
        } cases[] = {
                {"'null'", "null"},
                {"'boolean'", "false"},
                {"'boolean'", "true"},
                {"'int'", "-123456"},
                {"'int'", "2147483647"},
                {"'long'", "'-9223372036854775808'"},
                {"'long'", "'9223372036854775807'"},
                {"'float'", "1.5"},
                {"'double'", "-2.25e300"},
                {"'bytes'", "''"},
                {"'bytes'", "'" S150 "'"},
                {"'string'", "'" S150 "'"},
                {"'string'", "''"},
                {"{'type':'fixed','name':'F','size':16}", "'abcdefghijklmnop'"},
                {"{'type':'fixed','name':'F','size':0}", "''"},
                {"{'type':'enum','name':'E','symbols':['A','B','C']}", "'C'"},
                {"{'type':'array','items':'long'}", "[]"},
                {"{'type':'array','items':{'type':'record','name':'I','fields':["
                 "{'name':'x','type':'int'},{'name':'y','type':'string'}]}}",
                 "[{'x':1,'y':'a'},{'x':-300,'y':'bb'},{'x':0,'y':''}]"},
                {"{'type':'array','items':{'type':'array','items':'long'}}", "[[1,2],[],[3]]"},
                {"{'type':'array','items':'null'}", "[null,null,null]"},
                {"{'type':'map','values':'string'}", "{'k1':'v1','k2':'v22','':''}"},
                {"{'type':'map','values':'string'}", "{}"},
                {"{'type':'map','values':{'type':'map','values':'double'}}",
                 "{'a':{'x':1.0},'b':{}}"},
                {"['null','string']", "null"},
                {"['null','string']", "{'string':'hi'}"},
                {"['null','long','string','bytes']", "{'bytes':'b'}"},
                {"{'type':'record','name':'N','fields':[{'name':'p','type':'double'},"
                 "{'name':'q','type':{'type':'array','items':'long'}}]}",
                 "{'p':0.5,'q':[1,-2,300000000000]}"},
                {"{'type':'record','name':'Empty','fields':[]}", "{}"},
                {"['null'," LIST_NODE "]",
                 "{'Node':{'v':1,'next':{'Node':{'v':-2,'next':null}}}}"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                char schema[1024], value[1024];
                snprintf(schema, sizeof schema,
                         "{'type':'record','name':'R','fields':[{'name':'x','type':%s},"
                         "{'name':'ts','type':'long'}]}",
                         cases[k].type);
                snprintf(value, sizeof value, "{'x':%s,'ts':-1234567890123}", cases[k].value);
                gp_extract_t x;
                gp_avro_t av;
                gp_avro_val_t v;
                compile_ok(schema, "ts", GP_UNIT_MS, &x, &av);
                bytes_t e = encode(schema, value);
                cr_assert_eq(find(&av, e.b, e.len, &v), GP_AVRO_OK, "%s", cases[k].type);
                cr_assert_eq(v.kind, GP_AVF_LONG, "%s", cases[k].type);
                cr_assert_eq(v.logical, GP_AV_LT_NONE);
                cr_assert_eq(v.i, -1234567890123, "%s: %" PRId64, cases[k].type, v.i);
                /* Every cut before the ts's last byte is truncated data. */
                for (size_t p = 0; p < e.len; p++)
                        cr_assert_eq(find(&av, e.b, p, &v), GP_AVRO_ERR_DATA, "%s cut at %zu",
                                     cases[k].type, p);
                bytes_free(&e);
                gp_avro_free(&av);
        }
}

Test(avro, string_target_points_into_the_buffer) {
        gp_extract_t x;
        gp_avro_t av;
        gp_avro_val_t v;
        const char *schema = REC(FLD("a", "'bytes'") "," FLD("ts", "'string'"));
        compile_ok(schema, "ts", GP_UNIT_MS, &x, &av);
        bytes_t e = encode(schema, "{'a':'abc','ts':'" S150 "'}");
        cr_assert_eq(find(&av, e.b, e.len, &v), GP_AVRO_OK);
        cr_assert_eq(v.kind, GP_AVF_STRING);
        cr_assert_eq(v.len, 150);
        cr_assert_eq((const uint8_t *)v.s, e.b + 1 + 3 + 2); /* len, "abc", 2-byte len */
        cr_assert_eq(memcmp(v.s, S150, 150), 0);
        bytes_free(&e);
        gp_avro_free(&av);
}

/* A short name not in the enclosing namespace falls back to no namespace
 * (as Java resolves it; avro-c refuses these, so the bytes are by hand). */
Test(avro, namespace_fallback_to_none) {
        static const struct {
                const char *schema;
                const char *bytes;
                size_t len;
        } cases[] = {
                /* G is in no namespace; 'G' from ns finds it */
                {"{'type':'record','name':'R','namespace':'ns','fields':["
                 "{'name':'a','type':{'type':'fixed','name':'G','namespace':'','size':2}},"
                 "{'name':'b','type':'G'},{'name':'ts','type':'long'}]}",
                 "xxyy\x14", 5},
                /* ns.G and G both exist: 'G' from ns is ns.G (3 bytes) */
                {"{'type':'record','name':'R','namespace':'ns','fields':["
                 "{'name':'a','type':{'type':'fixed','name':'G','namespace':'','size':2}},"
                 "{'name':'b','type':{'type':'fixed','name':'G','size':3}},"
                 "{'name':'c','type':'G'},{'name':'ts','type':'long'}]}",
                 "xxyyyzzz\x14", 9},
        };
        for (size_t k = 0; k < N(cases); k++) {
                gp_extract_t x;
                gp_avro_t av;
                gp_avro_val_t v;
                compile_ok(cases[k].schema, "ts", GP_UNIT_MS, &x, &av);
                cr_assert_eq(find(&av, (const uint8_t *)cases[k].bytes, cases[k].len, &v),
                             GP_AVRO_OK, "case %zu", k);
                cr_assert_eq(v.i, 10, "case %zu: %" PRId64, k, v.i);
                gp_avro_free(&av);
        }
}

/* "error" is a record by another name (avro-c knows only "record": it
 * encodes the same record under that name). */
Test(avro, error_is_a_record) {
        gp_extract_t x;
        gp_avro_t av;
        gp_avro_val_t v;
        compile_ok("{'type':'error','name':'Err','fields':[{'name':'z','type':'bytes'},"
                   "{'name':'ts','type':'long'}]}",
                   "ts", GP_UNIT_MS, &x, &av);
        bytes_t e =
                encode("{'type':'record','name':'Err','fields':[{'name':'z','type':'bytes'},"
                       "{'name':'ts','type':'long'}]}",
                       "{'z':'zz','ts':13}");
        cr_assert_eq(find(&av, e.b, e.len, &v), GP_AVRO_OK);
        cr_assert_eq(v.i, 13);
        bytes_free(&e);
        gp_avro_free(&av);
}

/* ---- compile errors ---- */

Test(avro, compile_path_errors) {
        static const struct {
                const char *schema, *path;
                const char *why;
        } cases[] = {
                {REC(FLD("ts", "{'type':'record','name':'T','fields':[]}")), "ts",
                 "the field ts is not an int, long or string"},
                {REC(FLD("ts", "{'type':'array','items':'long'}")), "ts",
                 "the field ts is not an int, long or string"},
                {REC(FLD("ts", "{'type':'map','values':'long'}")), "ts", "not an int, long"},
                {REC(FLD("ts", "['null','boolean']")), "ts", "not an int, long or string"},
                {REC(FLD("ts", "'double'")), "ts", "not an int, long or string"},
                {REC(FLD("ts", "'bytes'")), "ts", "not an int, long or string"},
                {REC(FLD("ts", "'null'")), "ts", "not an int, long or string"},
                {REC(FLD("ts", "{'type':'enum','name':'E','symbols':['A']}")), "ts",
                 "not an int, long or string"},
                {REC(FLD("ts", "{'type':'fixed','name':'F','size':8}")), "ts",
                 "not an int, long or string"},
                {REC(FLD("ts", "'long'")), "nope", "the schema has no field nope"},
                {REC(FLD("x", "{'type':'record','name':'X','fields':["
                              "{'name':'z','type':'long'}]}")),
                 "x.y", "the schema has no field x.y"},
                {REC(FLD("x", "'long'")), "x.y", "the schema has no field x.y"},
                {REC(FLD("x", "{'type':'array','items':{'type':'record','name':'X','fields':["
                              "{'name':'y','type':'long'}]}}")),
                 "x.y", "the schema has no field x.y"},
                {REC(FLD("x", "{'type':'map','values':'long'}")), "x.y",
                 "the schema has no field x.y"},
                {"'long'", "ts", "the schema has no field ts"},
                {"['null','long']", "ts", "the schema has no field ts"},
                {REC(FLD("a", "{'type':'record','name':'A','fields':[{'name':'b','type':"
                              "{'type':'record','name':'B','fields':["
                              "{'name':'c','type':'int'}]}}]}")),
                 "a.b.d", "the schema has no field a.b.d"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                gp_extract_t x;
                gp_avro_t av;
                gp_err_t err = {0};
                gp_errcode_t rc =
                        compile(cases[k].schema, cases[k].path, GP_UNIT_MS, &x, &av, &err);
                cr_assert_eq(rc, GP_ERR_NOT_FOUND, "%s for %s: %d (%s)", cases[k].schema,
                             cases[k].path, rc, err.msg);
                cr_assert_not_null(strstr(err.msg, cases[k].why), "%s: \"%s\" lacks \"%s\"",
                                   cases[k].path, err.msg, cases[k].why);
                cr_assert_eq(av.n_nodes, 0);
                cr_assert_null(av.nodes);
                cr_assert_null(av.kids);
        }
}

static char *deep(const char *open, const char *leaf, const char *close, int n) {
        size_t len = strlen(leaf) + (size_t)n * (strlen(open) + strlen(close)) + 1;
        char *s = malloc(len);
        cr_assert_not_null(s);
        size_t at = 0;
        for (int i = 0; i < n; i++)
                at += (size_t)snprintf(s + at, len - at, "%s", open);
        at += (size_t)snprintf(s + at, len - at, "%s", leaf);
        for (int i = 0; i < n; i++)
                at += (size_t)snprintf(s + at, len - at, "%s", close);
        return s;
}

Test(avro, compile_bad_schemas) {
        char *deep_arrays = deep("{'type':'array','items':", "'long'", "}", 70);
        char *deep_unions = deep("['null',", "'long'", "]", 70);
        char deep_rec[8192];
        {
                /* records nested 70 deep, each with its own name */
                size_t n = 0;
                for (int i = 0; i < 70; i++)
                        n += (size_t)snprintf(
                                deep_rec + n, sizeof deep_rec - n,
                                "{'type':'record','name':'X%d','fields':[{'name':'"
                                "a','type':",
                                i);
                n += (size_t)snprintf(deep_rec + n, sizeof deep_rec - n, "'long'");
                for (int i = 0; i < 70; i++)
                        n += (size_t)snprintf(deep_rec + n, sizeof deep_rec - n, "}]}");
                cr_assert_lt(n, sizeof deep_rec);
        }
        size_t wlen = strlen(deep_arrays) + 100;
        char *wrapped_arrays = malloc(wlen);
        cr_assert_not_null(wrapped_arrays);
        snprintf(wrapped_arrays, wlen, REC(FLD("ts", "'long'") ",{'name':'x','type':%s}"),
                 deep_arrays);
        const struct {
                const char *schema, *path, *why;
        } cases[] = {
                {"", "ts", "not JSON"},
                {"{'type':", "ts", "not JSON"},
                {"{'type':'record','name':'R','fields':[]} trailing", "ts", "not JSON"},
                {REC(FLD("ts", "'long'")) " " REC(FLD("ts", "'long'")), "ts", "not JSON"},
                {"'long'x", "ts", "not JSON"},
                {"42", "ts", "a type name, an object or a union"},
                {"'timestamp'", "ts", "unknown type name \"timestamp\""},
                {REC(FLD("ts", "'Long'")), "ts", "unknown type name \"Long\""},
                {REC(FLD("a", "'Later'") "," FLD(
                         "b", "{'type':'fixed','name':'Later','size':1}") "," FLD("ts",
                                                                                  "'long'")),
                 "ts", "unknown type name \"Later\""},
                {"{'type':'record','name':'R','namespace':'x','fields':["
                 "{'name':'a','type':{'type':'fixed','name':'y.F','size':1}},"
                 "{'name':'b','type':'F'},{'name':'ts','type':'long'}]}",
                 "ts", "unknown type name \"F\""},
                {"{'type':'record','name':'R'}", "ts", "needs a \"fields\" array"},
                {"{'type':'record','name':'R','fields':{}}", "ts", "needs a \"fields\" array"},
                {"{'type':'record','fields':[]}", "ts", "needs a \"name\""},
                {"{'type':'record','name':'','fields':[]}", "ts", "needs a \"name\""},
                {REC("{'name':'ts'}"), "ts", "needs a \"name\" and a \"type\""},
                {REC("{'type':'long'}"), "ts", "needs a \"name\" and a \"type\""},
                {REC(FLD("e", "{'type':'enum','name':'E'}") "," FLD("ts", "'long'")), "ts",
                 "non-empty \"symbols\""},
                {REC(FLD("e", "{'type':'enum','name':'E','symbols':[]}") "," FLD("ts",
                                                                                 "'long'")),
                 "ts", "non-empty \"symbols\""},
                {REC(FLD("f", "{'type':'fixed','name':'F'}") "," FLD("ts", "'long'")), "ts",
                 "needs a whole \"size\""},
                {REC(FLD("f", "{'type':'fixed','name':'F','size':-1}") "," FLD("ts",
                                                                               "'long'")),
                 "ts", "needs a whole \"size\""},
                {REC(FLD("f", "{'type':'fixed','name':'F','size':1.5}") "," FLD("ts",
                                                                                "'long'")),
                 "ts", "needs a whole \"size\""},
                {REC(FLD("f", "{'type':'fixed','name':'F','size':'4'}") "," FLD("ts",
                                                                                "'long'")),
                 "ts", "needs a whole \"size\""},
                {REC(FLD("f", "{'type':'fixed','name':'F','size':1e12}") "," FLD("ts",
                                                                                 "'long'")),
                 "ts", "needs a whole \"size\""},
                {REC(FLD("a", "{'type':'fixed','name':'R','size':1}") "," FLD("ts", "'long'")),
                 "ts", "type \"R\" is defined twice"},
                {REC(FLD("a", "{'type':'fixed','name':'F','size':1}") "," FLD(
                         "b", "{'type':'enum','name':'F','symbols':['A']}") "," FLD("ts",
                                                                                    "'long'")),
                 "ts", "type \"F\" is defined twice"},
                {"{'type':'record','name':'R','namespace':'n','fields':["
                 "{'name':'a','type':{'type':'fixed','name':'F','size':1}},"
                 "{'name':'b','type':{'type':'fixed','name':'n.F','size':2}},"
                 "{'name':'ts','type':'long'}]}",
                 "ts", "type \"n.F\" is defined twice"},
                {REC(FLD("a", "{'type':'array'}") "," FLD("ts", "'long'")), "ts",
                 "array needs \"items\""},
                {REC(FLD("a", "{'type':'map'}") "," FLD("ts", "'long'")), "ts",
                 "map needs \"values\""},
                {REC(FLD("a", "[]") "," FLD("ts", "'long'")), "ts", "at least one branch"},
                {REC(FLD("a", "{'logicalType':'x'}") "," FLD("ts", "'long'")), "ts",
                 "needs a \"type\""},
                {REC(FLD("a", "true") "," FLD("ts", "'long'")), "ts",
                 "a type name, an object or a union"},
                {wrapped_arrays, "ts", "nested more than 64 deep"},
                {deep_unions, "ts", "nested more than 64 deep"},
                {deep_rec, "ts", "nested more than 64 deep"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                gp_extract_t x;
                gp_avro_t av;
                gp_err_t err = {0};
                gp_errcode_t rc =
                        compile(cases[k].schema, cases[k].path, GP_UNIT_MS, &x, &av, &err);
                cr_assert_eq(rc, GP_ERR_INVALID, "case %zu %.200s: %d (%s)", k,
                             cases[k].schema, rc, err.msg);
                cr_assert_not_null(strstr(err.msg, cases[k].why),
                                   "case %zu: \"%s\" lacks \"%s\"", k, err.msg, cases[k].why);
                cr_assert_eq(av.n_nodes, 0);
                cr_assert_null(av.nodes);
                cr_assert_null(av.kids);
        }
        free(deep_arrays);
        free(deep_unions);
        free(wrapped_arrays);
}

Test(avro, compile_needs_an_avro_extractor) {
        gp_extract_t x;
        gp_avro_t av;
        gp_err_t err = {0};
        cr_assert_eq(gp_extract_compile(&x, "json:ts", GP_UNIT_MS, err.msg, sizeof err.msg),
                     0);
        cr_assert_eq(gp_avsc_compile("\"long\"", 6, &x, &av, &err), GP_ERR_INVALID);
        cr_assert_not_null(strstr(err.msg, "avro:PATH"), "%s", err.msg);
        cr_assert_eq(av.n_nodes, 0);
}

/* A schema nested 60 deep still compiles, and reads. */
Test(avro, compile_deep_but_allowed) {
        char *arrs = deep("{'type':'array','items':", "'long'", "}", 30);
        size_t slen = strlen(arrs) + 100;
        char *s = malloc(slen);
        cr_assert_not_null(s);
        snprintf(s, slen, REC(FLD("x", "%s") "," FLD("ts", "'long'")), arrs);
        gp_extract_t x;
        gp_avro_t av;
        gp_avro_val_t v;
        compile_ok(s, "ts", GP_UNIT_MS, &x, &av);
        /* x = [[[...[5]...]]]: 29 one-item blocks, the innermost holding 5 */
        wbuf_t w = {.n = 0};
        for (int i = 0; i < 30; i++)
                put_long(&w, 1);
        put_long(&w, 5);
        for (int i = 0; i < 30; i++)
                put_long(&w, 0);
        put_long(&w, 321);
        cr_assert_eq(find(&av, w.b, w.n, &v), GP_AVRO_OK);
        cr_assert_eq(v.i, 321);
        gp_avro_free(&av);
        free(s);
        free(arrs);
}

/* ---- hand-crafted bytes ---- */

typedef struct hand {
        const char *type; /* of field x, before ts (a long) */
        void (*build)(wbuf_t *w);
        gp_avro_rc_t rc;
        int64_t ts; /* when GP_AVRO_OK */
        int avroc;  /* avro-c reads the bytes back (not 2^40 nulls) */
} hand_t;

static void h_union_index_2(wbuf_t *w) {
        put_long(w, 2);
        put_long(w, 5);
}
static void h_union_index_neg(wbuf_t *w) {
        put_long(w, -1);
        put_long(w, 5);
}
static void h_union_index_huge(wbuf_t *w) {
        put_long(w, INT64_MAX);
        put_long(w, 5);
}
static void h_string_neg(wbuf_t *w) {
        put_long(w, -1);
        put_raw(w, "abcdefgh", 8);
        put_long(w, 5);
}
static void h_string_min(wbuf_t *w) {
        put_long(w, INT64_MIN);
        put_long(w, 5);
}
static void h_string_long(wbuf_t *w) {
        put_long(w, 100);
        put_raw(w, "abc", 3);
}
static void h_string_max(wbuf_t *w) {
        put_long(w, INT64_MAX);
        put_raw(w, "abc", 3);
}
static void h_varint_11(wbuf_t *w) {
        put_raw(w, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11);
        put_long(w, 5);
}
static void h_varint_10_big(wbuf_t *w) {
        put_raw(w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
        put_long(w, 5);
}
static void h_varint_10_ok(wbuf_t *w) {
        put_raw(w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10); /* INT64_MIN */
        put_long(w, 5);
}
static void h_varint_unended(wbuf_t *w) {
        put_raw(w, "\x80\x80\x80", 3);
}
static void h_nulls_2_40(wbuf_t *w) {
        put_long(w, (int64_t)1 << 40);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_nulls_neg_2_40(wbuf_t *w) {
        /* a negative count: its size says 0 bytes; fine, one block */
        put_long(w, -((int64_t)1 << 40));
        put_long(w, 0);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_nulls_100(wbuf_t *w) {
        put_long(w, 100);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_nulls_many_blocks(wbuf_t *w) {
        /* 100 blocks of 2^20 nulls, 4 bytes each */
        for (int i = 0; i < 100; i++)
                put_long(w, (int64_t)1 << 20);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_neg_blocks_longs(wbuf_t *w) {
        wbuf_t items = {.n = 0};
        put_long(&items, 1);
        put_long(&items, -300);
        put_long(&items, INT64_MAX);
        put_long(w, -3);
        put_long(w, (int64_t)items.n);
        put_raw(w, items.b, items.n);
        put_long(w, 2); /* a positive block after it */
        put_long(w, 7);
        put_long(w, 8);
        put_long(w, -1);
        put_long(w, 1);
        put_long(w, 9);
        put_long(w, 0);
        put_long(w, 1700000000000);
}
static void h_neg_blocks_map(wbuf_t *w) {
        wbuf_t items = {.n = 0};
        put_str(&items, "k1");
        put_str(&items, "value one");
        put_str(&items, "k2");
        put_str(&items, "");
        put_long(w, -2);
        put_long(w, (int64_t)items.n);
        put_raw(w, items.b, items.n);
        put_long(w, 1);
        put_str(w, "k3");
        put_str(w, "v3");
        put_long(w, 0);
        put_long(w, 1700000000001);
}
static void h_neg_block_size_past_end(wbuf_t *w) {
        put_long(w, -1);
        put_long(w, 50);
        put_long(w, 1);
}
static void h_neg_block_size_neg(wbuf_t *w) {
        put_long(w, -1);
        put_long(w, -1);
        put_long(w, 1);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_neg_block_min(wbuf_t *w) {
        put_long(w, INT64_MIN);
        put_long(w, 0);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_map_2_40(wbuf_t *w) {
        put_long(w, (int64_t)1 << 40);
        put_long(w, 0);
        put_long(w, 5);
}
static void h_bool(wbuf_t *w) {
        put_raw(w, "\x01", 1);
        put_long(w, 5);
}
static void h_empty(wbuf_t *w) {
        (void)w;
}
static void h_list(wbuf_t *w, int nodes) {
        for (int i = 0; i < nodes; i++) {
                put_long(w, 1); /* the Node branch */
                put_long(w, i);
        }
        put_long(w, 0); /* null */
        put_long(w, 77);
}
static void h_list_10(wbuf_t *w) {
        h_list(w, 10);
}
static void h_list_100(wbuf_t *w) {
        h_list(w, 100);
}

#define ARR_NULL "{'type':'array','items':'null'}"
#define ARR_LONG "{'type':'array','items':'long'}"
#define MAP_STR  "{'type':'map','values':'string'}"
#define MAP_NULL "{'type':'map','values':'null'}"

static const hand_t hands[] = {
        {"['null','long']", h_union_index_2, GP_AVRO_ERR_DATA, 0, 0},
        {"['null','long']", h_union_index_neg, GP_AVRO_ERR_DATA, 0, 0},
        {"['null','long']", h_union_index_huge, GP_AVRO_ERR_DATA, 0, 0},
        {"'string'", h_string_neg, GP_AVRO_ERR_DATA, 0, 0},
        {"'bytes'", h_string_neg, GP_AVRO_ERR_DATA, 0, 0},
        {"'string'", h_string_min, GP_AVRO_ERR_DATA, 0, 0},
        {"'string'", h_string_long, GP_AVRO_ERR_DATA, 0, 0},
        {"'bytes'", h_string_max, GP_AVRO_ERR_DATA, 0, 0},
        {"'long'", h_varint_11, GP_AVRO_ERR_DATA, 0, 0},
        {"'int'", h_varint_11, GP_AVRO_ERR_DATA, 0, 0},
        {"{'type':'enum','name':'E','symbols':['A']}", h_varint_11, GP_AVRO_ERR_DATA, 0, 0},
        {"'long'", h_varint_10_big, GP_AVRO_ERR_DATA, 0, 0},
        {"'long'", h_varint_10_ok, GP_AVRO_OK, 5, 1},
        {"'long'", h_varint_unended, GP_AVRO_ERR_DATA, 0, 0},
        {ARR_NULL, h_nulls_2_40, GP_AVRO_ERR_LIMIT, 0, 0},
        {"{'type':'array','items':{'type':'record','name':'E','fields':[]}}", h_nulls_2_40,
         GP_AVRO_ERR_LIMIT, 0, 0},
        {ARR_NULL, h_nulls_neg_2_40, GP_AVRO_OK, 5, 0},
        {ARR_NULL, h_nulls_100, GP_AVRO_OK, 5, 1},
        {ARR_NULL, h_nulls_many_blocks, GP_AVRO_ERR_LIMIT, 0, 0},
        {MAP_NULL, h_map_2_40, GP_AVRO_ERR_LIMIT, 0, 0},
        {ARR_LONG, h_neg_blocks_longs, GP_AVRO_OK, 1700000000000, 1},
        {MAP_STR, h_neg_blocks_map, GP_AVRO_OK, 1700000000001, 1},
        {ARR_LONG, h_neg_block_size_past_end, GP_AVRO_ERR_DATA, 0, 0},
        {ARR_LONG, h_neg_block_size_neg, GP_AVRO_ERR_DATA, 0, 0},
        {ARR_LONG, h_neg_block_min, GP_AVRO_ERR_DATA, 0, 0},
        {"'boolean'", h_bool, GP_AVRO_OK, 5, 1},
        {"'long'", h_empty, GP_AVRO_ERR_DATA, 0, 0},
        {"['null'," LIST_NODE "]", h_list_10, GP_AVRO_OK, 77, 1},
        {"['null'," LIST_NODE "]", h_list_100, GP_AVRO_ERR_LIMIT, 0, 0},
};

/* avro-c reads the same bytes: 0 with the ts, or -1 if it refuses them. */
static int avroc_read_ts(const char *schema_sq, const uint8_t *b, size_t len, int64_t *ts) {
        aval_t a;
        aval_new(&a, schema_sq);
        avro_reader_t r = avro_reader_memory((const char *)b, (int64_t)len);
        int rc = avro_value_read(r, &a.v);
        if (rc == 0) {
                avro_value_t f;
                cr_assert_eq(avro_value_get_by_name(&a.v, "ts", &f, NULL), 0);
                cr_assert_eq(avro_value_get_long(&f, ts), 0);
        }
        avro_reader_free(r);
        aval_free(&a);
        return rc ? -1 : 0;
}

Test(avro, hand_crafted) {
        for (size_t k = 0; k < N(hands); k++) {
                char schema[1024];
                snprintf(schema, sizeof schema,
                         "{'type':'record','name':'R','fields':[{'name':'x','type':%s},"
                         "{'name':'ts','type':'long'}]}",
                         hands[k].type);
                gp_extract_t x;
                gp_avro_t av;
                gp_avro_val_t v;
                wbuf_t w = {.n = 0};
                compile_ok(schema, "ts", GP_UNIT_MS, &x, &av);
                hands[k].build(&w);
                gp_avro_rc_t rc = find(&av, w.b, w.n, &v);
                cr_assert_eq(rc, hands[k].rc, "case %zu (%s): %d", k, hands[k].type, rc);
                if (rc == GP_AVRO_OK) {
                        cr_assert_eq(v.kind, GP_AVF_LONG);
                        cr_assert_eq(v.i, hands[k].ts, "case %zu: %" PRId64, k, v.i);
                        /* avro-c, reading the same bytes, agrees (it also reads
                         * negative block counts, which it never writes) */
                        int64_t ts = 0;
                        if (hands[k].avroc) {
                                cr_assert_eq(avroc_read_ts(schema, w.b, w.n, &ts), 0,
                                             "case %zu: avro-c: %s", k, avro_strerror());
                                cr_assert_eq(ts, hands[k].ts);
                        }
                }
                gp_avro_free(&av);
        }
}

/* The target itself malformed. */
Test(avro, bad_target_bytes) {
        static const struct {
                const char *type;
                const char *bytes;
                size_t len;
                gp_avro_rc_t rc;
        } cases[] = {
                {"'int'", "\x80\x80\x80\x80\x10", 5, GP_AVRO_ERR_DATA}, /* 2^31: too big */
                {"'int'", "\xfe\xff\xff\xff\x0f", 5, GP_AVRO_OK},       /* INT32_MAX */
                {"'int'", "\xff\xff\xff\xff\x0f", 5, GP_AVRO_OK},       /* INT32_MIN */
                {"'long'", "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11,
                 GP_AVRO_ERR_DATA},
                {"'string'", "\x01", 1, GP_AVRO_ERR_DATA}, /* length -1 */
                {"'string'",
                 "\x08"
                 "abc",
                 4, GP_AVRO_ERR_DATA}, /* 4 > 3 */
                {"'string'",
                 "\x06"
                 "abc",
                 4, GP_AVRO_OK},
                {"['null','long']", "\x04\x02", 2, GP_AVRO_ERR_DATA},
                {"['null','long']", "\x00", 1, GP_AVRO_OK},
                {"['null','long']", "", 0, GP_AVRO_ERR_DATA},
        };
        for (size_t k = 0; k < N(cases); k++) {
                char schema[256];
                snprintf(schema, sizeof schema, REC(FLD("ts", "%s")), cases[k].type);
                gp_extract_t x;
                gp_avro_t av;
                gp_avro_val_t v;
                compile_ok(schema, "ts", GP_UNIT_MS, &x, &av);
                cr_assert_eq(find(&av, (const uint8_t *)cases[k].bytes, cases[k].len, &v),
                             cases[k].rc, "case %zu", k);
                gp_avro_free(&av);
        }
        /* NULL with 0 bytes is an empty buffer */
        gp_extract_t x;
        gp_avro_t av;
        gp_avro_val_t v;
        compile_ok(REC(FLD("ts", "'long'")), "ts", GP_UNIT_MS, &x, &av);
        cr_assert_eq(gp_avro_find(&av, NULL, 0, &v), GP_AVRO_ERR_DATA);
        gp_avro_free(&av);
        compile_ok(REC(FLD("ts", "['null','long']")), "ts", GP_UNIT_MS, &x, &av);
        cr_assert_eq(gp_avro_find(&av, "\x00", 1, &v), GP_AVRO_OK);
        cr_assert_eq(v.kind, GP_AVF_NULL);
        gp_avro_free(&av);
}

/* ---- the property test: random records, avro-c as the oracle ---- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void) {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 0x2545f4914f6cdd1du;
}

static int64_t rnd_i64(void) {
        switch (rnd() % 8) {
        case 0:
                return INT64_MIN;
        case 1:
                return INT64_MAX;
        case 2:
                return 0;
        case 3:
                return -1;
        default: {
                int bits = 1 + (int)(rnd() % 63);
                int64_t v = (int64_t)(rnd() >> (64 - bits));
                return rnd() & 1 ? -v : v;
        }
        }
}

static int32_t rnd_i32(void) {
        switch (rnd() % 6) {
        case 0:
                return INT32_MIN;
        case 1:
                return INT32_MAX;
        default: {
                int bits = 1 + (int)(rnd() % 31);
                int32_t v = (int32_t)(rnd() >> (64 - bits));
                return rnd() & 1 ? -v : v;
        }
        }
}

static size_t rnd_len(void) {
        uint64_t r = rnd() % 16;
        return r < 12 ? (size_t)r : r < 15 ? (size_t)(rnd() % 40) : 64 + (size_t)(rnd() % 140);
}

#define RAND_DEPTH 7

static void fill_rand(avro_value_t *v, int depth) {
        avro_schema_t s = unlink_schema(avro_value_get_schema(v));
        avro_value_t c;
        uint8_t buf[256];
        size_t n;
        switch (avro_value_get_type(v)) {
        case AVRO_NULL:
                cr_assert_eq(avro_value_set_null(v), 0);
                return;
        case AVRO_BOOLEAN:
                cr_assert_eq(avro_value_set_boolean(v, (int)(rnd() & 1)), 0);
                return;
        case AVRO_INT32:
                cr_assert_eq(avro_value_set_int(v, rnd_i32()), 0);
                return;
        case AVRO_INT64:
                cr_assert_eq(avro_value_set_long(v, rnd_i64()), 0);
                return;
        case AVRO_FLOAT:
                cr_assert_eq(avro_value_set_float(v, (float)rnd_i32() / 7.0f), 0);
                return;
        case AVRO_DOUBLE:
                cr_assert_eq(avro_value_set_double(v, (double)rnd_i64() / 3.0), 0);
                return;
        case AVRO_STRING: {
                char str[256];
                n = rnd_len();
                for (size_t i = 0; i < n; i++)
                        str[i] = (char)(1 + rnd() % 255);
                str[n] = '\0';
                cr_assert_eq(avro_value_set_string_len(v, str, n + 1), 0);
                return;
        }
        case AVRO_BYTES:
                n = rnd_len();
                for (size_t i = 0; i < n; i++)
                        buf[i] = (uint8_t)rnd();
                cr_assert_eq(avro_value_set_bytes(v, buf, n), 0);
                return;
        case AVRO_FIXED:
                n = (size_t)avro_schema_fixed_size(s);
                cr_assert_leq(n, sizeof buf);
                for (size_t i = 0; i < n; i++)
                        buf[i] = (uint8_t)rnd();
                cr_assert_eq(avro_value_set_fixed(v, buf, n), 0);
                return;
        case AVRO_ENUM:
                cr_assert_eq(
                        avro_value_set_enum(
                                v, (int)(rnd() %
                                         (uint64_t)avro_schema_enum_number_of_symbols(s))),
                        0);
                return;
        case AVRO_ARRAY:
                n = depth > RAND_DEPTH ? 0 : rnd() % 4;
                for (size_t i = 0; i < n; i++) {
                        cr_assert_eq(avro_value_append(v, &c, NULL), 0);
                        fill_rand(&c, depth + 1);
                }
                return;
        case AVRO_MAP:
                n = depth > RAND_DEPTH ? 0 : rnd() % 4;
                for (size_t i = 0; i < n; i++) {
                        char key[32];
                        int is_new = 0;
                        snprintf(key, sizeof key, "%zu%.*s", i, (int)(rnd() % 12),
                                 "abcdefghijkl");
                        cr_assert_eq(avro_value_add(v, key, &c, NULL, &is_new), 0);
                        cr_assert(is_new);
                        fill_rand(&c, depth + 1);
                }
                return;
        case AVRO_UNION: {
                size_t nb = avro_schema_union_size(s);
                int idx = (int)(rnd() % nb);
                if (depth > RAND_DEPTH)
                        for (size_t i = 0; i < nb; i++)
                                if (avro_typeof(avro_schema_union_branch(s, (int)i)) ==
                                    AVRO_NULL)
                                        idx = (int)i;
                cr_assert_eq(avro_value_set_branch(v, idx, &c), 0);
                fill_rand(&c, depth + 1);
                return;
        }
        case AVRO_RECORD:
                cr_assert_eq(avro_value_get_size(v, &n), 0);
                for (size_t i = 0; i < n; i++) {
                        cr_assert_eq(avro_value_get_by_index(v, i, &c, NULL), 0);
                        fill_rand(&c, depth + 1);
                }
                return;
        default:
                cr_assert_fail("unexpected avro-c type %d", (int)avro_value_get_type(v));
        }
}

static size_t sizeof_value(avro_value_t *v) {
        size_t n;
        cr_assert_eq(avro_value_sizeof(v, &n), 0, "%s", avro_strerror());
        return n;
}

/* Steps into union branches; the bytes of their indexes. */
static size_t unwrap(avro_value_t *v) {
        size_t n = 0;
        while (avro_value_get_type(v) == AVRO_UNION) {
                avro_value_t b;
                size_t whole = sizeof_value(v);
                cr_assert_eq(avro_value_get_current_branch(v, &b), 0);
                n += whole - sizeof_value(&b);
                *v = b;
        }
        return n;
}

/* What avro-c holds at x's path in root: 0 with *out, or 1 when a record on
 * the path is absent; *end is the offset just past the bytes that decide
 * it (the target's, or the union index that selects null). */
static int oracle(avro_value_t *root, const gp_extract_t *x, avro_value_t *out, size_t *end) {
        avro_value_t cur = *root;
        size_t off = 0;
        for (int k = 0;; k++) {
                off += unwrap(&cur);
                if (k == x->avro_n)
                        break;
                avro_value_t child;
                size_t idx;
                if (avro_value_get_type(&cur) != AVRO_RECORD ||
                    avro_value_get_by_name(&cur, x->avro_path[k], &child, &idx) != 0) {
                        *end = off;
                        return 1;
                }
                for (size_t i = 0; i < idx; i++) {
                        avro_value_t f;
                        cr_assert_eq(avro_value_get_by_index(&cur, i, &f, NULL), 0);
                        off += sizeof_value(&f);
                }
                cur = child;
        }
        *end = off + sizeof_value(&cur);
        *out = cur;
        return 0;
}

#define PROP_SCHEMA                                                                           \
        "{'type':'record','name':'Event','namespace':'p.q','fields':["                        \
        "{'name':'b','type':'boolean'},{'name':'i','type':'int'},{'name':'l','type':'long'}," \
        "{'name':'f','type':'float'},{'name':'d','type':'double'},"                           \
        "{'name':'by','type':'bytes'},{'name':'s','type':'string'},"                          \
        "{'name':'fx','type':{'type':'fixed','name':'F4','size':4}},"                         \
        "{'name':'e','type':{'type':'enum','name':'Color','symbols':['R','G','B']}},"         \
        "{'name':'arr','type':{'type':'array','items':{'type':'record','name':'Item',"        \
        "'namespace':'p.items','fields':[{'name':'k','type':'string'},"                       \
        "{'name':'v','type':['null','long','string']},"                                       \
        "{'name':'tags','type':{'type':'array','items':'string'}}]}}},"                       \
        "{'name':'m','type':{'type':'map','values':['null','F4','Color',"                     \
        "{'type':'map','values':'double'}]}},"                                                \
        "{'name':'list','type':['null',{'type':'record','name':'Node','fields':["             \
        "{'name':'v','type':'int'},{'name':'next','type':['null','Node']}]}]},"               \
        "{'name':'u','type':['null','boolean','bytes','p.items.Item']},"                      \
        "{'name':'nested','type':{'type':'record','name':'Inner','fields':["                  \
        "{'name':'x','type':'Color'},"                                                        \
        "{'name':'arrs','type':{'type':'array','items':{'type':'array','items':'int'}}}]}},"  \
        "{'name':'meta','type':['null',{'type':'record','name':'Meta','fields':["             \
        "{'name':'seq','type':{'type':'long','logicalType':'timestamp-micros'}},"             \
        "{'name':'junk','type':{'type':'map','values':'p.items.Item'}},"                      \
        "{'name':'ts','type':['null','long','string']}]}]},"                                  \
        "{'name':'after','type':'string'}]}"

static void check_one(const gp_avro_t *av, const gp_extract_t *x, avro_value_t *root,
                      const bytes_t *e, int prefixes, int rec) {
        avro_value_t want = {0};
        size_t end = 0;
        int missing = oracle(root, x, &want, &end);
        gp_avro_val_t got;
        gp_avro_rc_t rc = find(av, e->b, e->len, &got);
        cr_assert_leq(end, e->len);
        if (missing) {
                cr_assert_eq(rc, GP_AVRO_ERR_MISSING, "record %d, %s: %d", rec,
                             x->avro_path[0], rc);
        } else {
                cr_assert_eq(rc, GP_AVRO_OK, "record %d, %s: %d", rec, x->avro_path[0], rc);
                switch (avro_value_get_type(&want)) {
                case AVRO_INT32: {
                        int32_t i;
                        cr_assert_eq(avro_value_get_int(&want, &i), 0);
                        cr_assert_eq(got.kind, GP_AVF_LONG);
                        cr_assert_eq(got.i, i, "record %d", rec);
                        break;
                }
                case AVRO_INT64: {
                        int64_t i;
                        cr_assert_eq(avro_value_get_long(&want, &i), 0);
                        cr_assert_eq(got.kind, GP_AVF_LONG);
                        cr_assert_eq(got.i, i, "record %d: %" PRId64 " != %" PRId64, rec,
                                     got.i, i);
                        break;
                }
                case AVRO_STRING: {
                        const char *s;
                        size_t n;
                        cr_assert_eq(avro_value_get_string(&want, &s, &n), 0);
                        cr_assert_eq(got.kind, GP_AVF_STRING);
                        cr_assert_eq(got.len, n - 1, "record %d", rec);
                        cr_assert_eq(memcmp(got.s, s, got.len), 0, "record %d", rec);
                        /* the string's bytes end where avro-c says */
                        cr_assert_eq((const uint8_t *)got.s + got.len, e->b + end);
                        break;
                }
                case AVRO_NULL:
                        cr_assert_eq(got.kind, GP_AVF_NULL, "record %d", rec);
                        break;
                default:
                        cr_assert_eq(got.kind, GP_AVF_OTHER, "record %d", rec);
                }
        }
        if (!prefixes)
                return;
        /* Every cut before the end of the deciding bytes is truncated data;
         * the cut at the end gives the full answer. */
        gp_avro_val_t cut;
        for (size_t p = 0; p < end; p++)
                cr_assert_eq(find(av, e->b, p, &cut), GP_AVRO_ERR_DATA,
                             "record %d, %s cut at %zu of %zu", rec, x->avro_path[0], p, end);
        cr_assert_eq(find(av, e->b, end, &cut), rc, "record %d cut at its end %zu", rec, end);
        if (rc == GP_AVRO_OK) {
                cr_assert_eq(cut.kind, got.kind);
                cr_assert_eq(cut.i, got.i);
                cr_assert_eq(cut.len, got.len);
        }
}

Test(avro, property_random_records_agree_with_avro_c, .timeout = 110) {
        static const struct {
                const char *path;
                uint8_t logical;
        } paths[] = {
                {"meta.ts", GP_AV_LT_NONE}, {"meta.seq", GP_AV_LT_MICROS},
                {"i", GP_AV_LT_NONE},       {"l", GP_AV_LT_NONE},
                {"s", GP_AV_LT_NONE},       {"after", GP_AV_LT_NONE},
                {"list.v", GP_AV_LT_NONE},  {"list.next.next.v", GP_AV_LT_NONE},
        };
        gp_extract_t xs[N(paths)];
        gp_avro_t avs[N(paths)];
        for (size_t k = 0; k < N(paths); k++)
                compile_ok(PROP_SCHEMA, paths[k].path, GP_UNIT_MS, &xs[k], &avs[k]);

        aval_t a;
        aval_new(&a, PROP_SCHEMA);
        int seen_null = 0, seen_long = 0, seen_string = 0, seen_missing = 0;
        size_t total = 0;
        for (int rec = 0; rec < 2500; rec++) {
                cr_assert_eq(avro_value_reset(&a.v), 0);
                fill_rand(&a.v, 0);
                bytes_t e = write_value(&a.v);
                total += e.len;
                for (size_t k = 0; k < N(paths); k++) {
                        check_one(&avs[k], &xs[k], &a.v, &e, (size_t)rec % N(paths) == k, rec);
                        gp_avro_val_t v;
                        gp_avro_rc_t rc = find(&avs[k], e.b, e.len, &v);
                        if (rc == GP_AVRO_OK && v.kind == GP_AVF_LONG)
                                cr_assert_eq(v.logical, paths[k].logical);
                        if (k == 0) {
                                seen_missing += rc == GP_AVRO_ERR_MISSING;
                                seen_null += rc == GP_AVRO_OK && v.kind == GP_AVF_NULL;
                                seen_long += rc == GP_AVRO_OK && v.kind == GP_AVF_LONG;
                                seen_string += rc == GP_AVRO_OK && v.kind == GP_AVF_STRING;
                        }
                }
                bytes_free(&e);
        }
        /* The filler reached every case of the target. */
        cr_assert_gt(seen_missing, 100);
        cr_assert_gt(seen_null, 100);
        cr_assert_gt(seen_long, 100);
        cr_assert_gt(seen_string, 100);
        cr_assert_gt(total / 2500, 40, "records average %zu bytes", total / 2500);
        aval_free(&a);
        for (size_t k = 0; k < N(paths); k++)
                gp_avro_free(&avs[k]);
}

/* ---- framing ---- */

Test(avro, frame) {
        uint32_t id = 7;
        const uint8_t *body = NULL;
        size_t blen = 99;
        static const uint8_t good[] = {0, 0x12, 0x34, 0x56, 0x78, 0xaa, 0xbb};
        cr_assert_eq(gp_avro_frame(good, sizeof good, &id, &body, &blen), 0);
        cr_assert_eq(id, 0x12345678u);
        cr_assert_eq(body, good + 5);
        cr_assert_eq(blen, 2);
        static const uint8_t top[] = {0, 0xff, 0xff, 0xff, 0xfe};
        cr_assert_eq(gp_avro_frame(top, sizeof top, &id, &body, &blen), 0);
        cr_assert_eq(id, 0xfffffffeu);
        cr_assert_eq(blen, 0);
        cr_assert_eq(body, top + 5);

        id = 7;
        body = NULL;
        blen = 99;
        for (size_t n = 0; n < 5; n++)
                cr_assert_eq(gp_avro_frame(good, n, &id, &body, &blen), -1, "%zu bytes", n);
        static const uint8_t magic1[] = {1, 0, 0, 0, 1, 2};
        cr_assert_eq(gp_avro_frame(magic1, sizeof magic1, &id, &body, &blen), -1);
        static const uint8_t magicff[] = {0xff, 0, 0, 0, 1};
        cr_assert_eq(gp_avro_frame(magicff, sizeof magicff, &id, &body, &blen), -1);
        cr_assert_eq(gp_avro_frame(NULL, 10, &id, &body, &blen), -1);
        cr_assert_eq(id, 7);
        cr_assert_null(body);
        cr_assert_eq(blen, 99);
}

/* ---- gp_extract_compile for avro: ---- */

Test(avro, extract_compile) {
        gp_extract_t x;
        char err[256];
        cr_assert_eq(gp_extract_compile(&x, "avro:ts", GP_UNIT_US, err, sizeof err), 0, "%s",
                     err);
        cr_assert_eq(x.kind, GP_ET_AVRO);
        cr_assert_eq(x.unit, GP_UNIT_US);
        cr_assert_eq(x.avro_n, 1);
        cr_assert_str_eq(x.avro_path[0], "ts");
        cr_assert_eq(gp_extract_compile(&x, "avro:a.b.c", GP_UNIT_MS, err, sizeof err), 0);
        cr_assert_eq(x.avro_n, 3);
        cr_assert_str_eq(x.avro_path[0], "a");
        cr_assert_str_eq(x.avro_path[1], "b");
        cr_assert_str_eq(x.avro_path[2], "c");
        cr_assert_eq(gp_extract_compile(&x, "avro:_x9.Y_1.a.b.c.d.e.f", GP_UNIT_MS, err,
                                        sizeof err),
                     0);
        cr_assert_eq(x.avro_n, 8);
        cr_assert_str_eq(x.avro_path[0], "_x9");
        cr_assert_str_eq(x.avro_path[7], "f");
        char name127[200];
        memset(name127, 'n', 127);
        name127[127] = '\0';
        char spec[300];
        snprintf(spec, sizeof spec, "avro:%s", name127);
        cr_assert_eq(gp_extract_compile(&x, spec, GP_UNIT_MS, err, sizeof err), 0, "%s", err);
        cr_assert_eq(strlen(x.avro_path[0]), 127);

        char name200[201];
        memset(name200, 'n', 200);
        name200[200] = '\0';
        char long_spec[300];
        snprintf(long_spec, sizeof long_spec, "avro:%s", name200);
        char name128[300];
        snprintf(name128, sizeof name128, "avro:a.%.128s", name200);
        static const char *const shape = "field names joined by '.'";
        const struct {
                const char *spec, *why;
        } bad[] = {
                {"avro:", shape},
                {"avro:a..b", shape},
                {"avro:1a", shape},
                {"avro:a.", shape},
                {"avro:.a", shape},
                {"avro:a.b-c", shape},
                {"avro:a b", shape},
                {"avro:a.9", shape},
                {"avro:$.a", shape},
                {"avro:a[0]", shape},
                {"avro:a.b.c.d.e.f.g.h.i", "allows 8 fields"},
                {long_spec, "of up to 127 bytes"},
                {name128, "of up to 127 bytes"},
                {"avro", "is not kafka-timestamp, json:PATH, header:NAME or avro:PATH"},
                {"Avro:ts", "or avro:PATH"},
        };
        for (size_t k = 0; k < N(bad); k++) {
                snprintf(err, sizeof err, "unchanged");
                cr_assert_eq(gp_extract_compile(&x, bad[k].spec, GP_UNIT_MS, err, sizeof err),
                             -1, "%s compiled", bad[k].spec);
                cr_assert_not_null(strstr(err, bad[k].why), "%s: \"%s\" lacks \"%s\"",
                                   bad[k].spec, err, bad[k].why);
        }
}

/* ---- gp_extract_ts with avro: end to end ---- */

Test(avro, extract_codes) {
        const char *schema =
                REC(FLD("id", "'string'") "," FLD("ts", "['null','long','string','double']"));
        gp_extract_t x;
        gp_avro_t av;
        compile_ok(schema, "ts", GP_UNIT_S, &x, &av);
        static const struct {
                const char *value; /* NULL: the raw bytes below */
                const char *raw;
                size_t rawlen;
                const char *code;
                int64_t ts;
        } cases[] = {
                {"{'id':'a','ts':{'long':1700000000}}", NULL, 0, NULL, 1700000000000},
                {"{'id':'a','ts':{'string':'2026-01-01T00:00:00Z'}}", NULL, 0, NULL,
                 1767225600000},
                {"{'id':'a','ts':{'string':'1700000000.25'}}", NULL, 0, NULL, 1700000000250},
                {"{'id':'a','ts':null}", NULL, 0, "field-missing", 0},
                {"{'id':'a','ts':{'double':1.5}}", NULL, 0, "wrong-type", 0},
                {"{'id':'a','ts':{'string':'not a time'}}", NULL, 0, "bad-time", 0},
                {"{'id':'a','ts':{'long':'9223372036854775807'}}", NULL, 0, "bad-time", 0},
                {NULL,
                 "\x02"
                 "a",
                 2, "bad-avro", 0}, /* truncated */
                {NULL,
                 "\x02"
                 "a\x08\x02",
                 4, "bad-avro", 0},               /* union index 4 */
                {NULL, "\x03", 1, "bad-avro", 0}, /* id length -2 */
                {NULL, "", 0, "bad-avro", 0},
        };
        for (size_t k = 0; k < N(cases); k++) {
                bytes_t e;
                if (cases[k].value) {
                        e = encode(schema, cases[k].value);
                } else {
                        e.len = cases[k].rawlen;
                        e.b = malloc(e.len + 1);
                        cr_assert_not_null(e.b);
                        memcpy(e.b, cases[k].raw, e.len);
                }
                int64_t ts = -5;
                gp_bad_t bad;
                int rc = extract(&x, &av, e.b, e.len, &ts, &bad);
                if (cases[k].code) {
                        cr_assert_eq(rc, -1, "case %zu", k);
                        cr_assert_str_eq(gp_bad_name(bad.code), cases[k].code,
                                         "case %zu: %s (%s)", k, gp_bad_name(bad.code),
                                         bad.why);
                        cr_assert_not_null(bad.why);
                        cr_assert_eq(ts, -5, "case %zu: ts written on failure", k);
                } else {
                        cr_assert_eq(rc, 0, "case %zu: %s (%s)", k, bad.code, bad.why);
                        cr_assert_eq(ts, cases[k].ts, "case %zu: %" PRId64, k, ts);
                }
                bytes_free(&e);
        }

        /* a framed record: the frame first, then the body */
        bytes_t e = encode(schema, "{'id':'framed','ts':{'long':1700000001}}");
        uint8_t *framed = malloc(e.len + 5);
        cr_assert_not_null(framed);
        memcpy(framed, "\x00\x00\x00\x01\x2c", 5);
        memcpy(framed + 5, e.b, e.len);
        uint32_t id;
        const uint8_t *body;
        size_t blen;
        cr_assert_eq(gp_avro_frame(framed, e.len + 5, &id, &body, &blen), 0);
        cr_assert_eq(id, 300);
        int64_t ts;
        gp_bad_t bad;
        cr_assert_eq(extract(&x, &av, body, blen, &ts, &bad), 0);
        cr_assert_eq(ts, 1700000001000);
        free(framed);

        /* no schema */
        gp_record_view_t r = {.value = e.b, .value_len = e.len, .kafka_ts = 1};
        cr_assert_eq(gp_extract_ts(&x, &r, &ts, &bad), -1);
        cr_assert_str_eq(gp_bad_name(bad.code), "bad-schema");
        bytes_free(&e);

        /* too many items: bad-avro as well */
        gp_avro_t av2;
        gp_extract_t x2;
        compile_ok(REC(FLD("a", ARR_NULL) "," FLD("ts", "'long'")), "ts", GP_UNIT_MS, &x2,
                   &av2);
        wbuf_t w = {.n = 0};
        h_nulls_2_40(&w);
        cr_assert_eq(extract(&x2, &av2, w.b, w.n, &ts, &bad), -1);
        cr_assert_str_eq(gp_bad_name(bad.code), "bad-avro");
        gp_avro_free(&av2);
        gp_avro_free(&av);
}

Test(avro, val_ms) {
        static const struct {
                gp_avro_val_t v;
                gp_unit_t unit;
                int ok;
                int64_t ms;
        } cases[] = {
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_MILLIS, .i = 5}, GP_UNIT_S, 1, 5},
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_MICROS, .i = -1}, GP_UNIT_S, 1, -1},
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_MICROS, .i = INT64_MAX},
                 GP_UNIT_S,
                 1,
                 INT64_MAX / 1000},
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_NANOS, .i = INT64_MIN},
                 GP_UNIT_S,
                 1,
                 -9223372036855},
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_NONE, .i = 2}, GP_UNIT_S, 1, 2000},
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_NONE, .i = INT64_MIN},
                 GP_UNIT_MS,
                 0,
                 0},
                {{.kind = GP_AVF_LONG, .logical = GP_AV_LT_MILLIS, .i = INT64_MIN},
                 GP_UNIT_MS,
                 0,
                 0},
                {{.kind = GP_AVF_STRING, .s = "12", .len = 1}, GP_UNIT_S, 1, 1000},
                {{.kind = GP_AVF_NULL}, GP_UNIT_MS, 0, 0},
                {{.kind = GP_AVF_OTHER}, GP_UNIT_MS, 0, 0},
        };
        for (size_t k = 0; k < N(cases); k++) {
                int64_t ms = 42;
                const char *why = NULL;
                int rc = gp_avro_val_ms(&cases[k].v, cases[k].unit, &ms, &why);
                if (cases[k].ok) {
                        cr_assert_eq(rc, 0, "case %zu: %s", k, why);
                        cr_assert_eq(ms, cases[k].ms, "case %zu: %" PRId64, k, ms);
                } else {
                        cr_assert_eq(rc, -1, "case %zu", k);
                        cr_assert_not_null(why);
                        cr_assert_eq(ms, 42);
                }
        }
}

/* The one time every reader refuses: -2^63 ms is GP_TS_NONE ("no time"),
 * so a record carrying it is bad-time, not a record with no reason. */
Test(avro, int64_min_is_not_a_time) {
        static const struct {
                const char *spec;
                gp_unit_t unit;
                const char *text;
        } cases[] = {
                {"json:ts", GP_UNIT_MS, "{\"ts\":-9223372036854775808}"},
                {"json:ts", GP_UNIT_MS, "{\"ts\":\"-9223372036854775808\"}"},
                {"json:ts", GP_UNIT_S, "{\"ts\":-9223372036854775.808}"},
                {"header:t", GP_UNIT_MS, "-9223372036854775808"},
        };
        for (size_t k = 0; k < N(cases); k++) {
                gp_extract_t x;
                char err[128];
                cr_assert_eq(
                        gp_extract_compile(&x, cases[k].spec, cases[k].unit, err, sizeof err),
                        0);
                gp_record_view_t r = {.kafka_ts = 1};
                if (x.kind == GP_ET_HEADER) {
                        r.header = cases[k].text;
                        r.header_len = strlen(cases[k].text);
                } else {
                        r.value = cases[k].text;
                        r.value_len = strlen(cases[k].text);
                }
                int64_t ts = 3;
                gp_bad_t bad = {0};
                cr_assert_eq(gp_extract_ts(&x, &r, &ts, &bad), -1, "case %zu: ts %" PRId64, k,
                             ts);
                cr_assert_str_eq(gp_bad_name(bad.code), "bad-time");
                cr_assert_not_null(bad.why);
                cr_assert_eq(ts, 3);
                /* one more ms is a time */
                if (x.kind == GP_ET_HEADER) {
                        r.header = "-9223372036854775807";
                        r.header_len = strlen(r.header);
                        cr_assert_eq(gp_extract_ts(&x, &r, &ts, &bad), 0);
                        cr_assert_eq(ts, -INT64_MAX);
                }
        }
}
