/* tests/ref/ref_extract.c: the reference (tests/ref/ref_extract.h), gate/extract.c
 * as it was before the skip-scanners, renamed gp_ -> ref_. Then:
 * event-time extraction. Pure: libc only. */
#include "tests/ref/ref_extract.h"
#include <stdio.h>
#include <string.h>

#include "gate/extract.h"

/* a.b.c: Avro names, [A-Za-z_][A-Za-z0-9_]* each. */
static int avro_path(gp_extract_t *x, const char *s, char *err, size_t errlen) {
        x->kind = GP_ET_AVRO;
        for (;;) {
                size_t n = 0;
                while (s[n] == '_' || (s[n] >= 'A' && s[n] <= 'Z') ||
                       (s[n] >= 'a' && s[n] <= 'z') || (n > 0 && s[n] >= '0' && s[n] <= '9'))
                        n++;
                if (n == 0 || (s[n] && s[n] != '.')) {
                        snprintf(
                                err, errlen,
                                "avro:PATH is field names joined by '.', each a letter or '_' "
                                "then letters, digits or '_' (e.g. avro:event.ts)");
                        return -1;
                }
                if (x->avro_n == GP_AVRO_MAX_PATH || n >= GP_AVRO_MAX_NAME) {
                        snprintf(err, errlen, "avro:PATH allows %d fields of up to %d bytes",
                                 GP_AVRO_MAX_PATH, GP_AVRO_MAX_NAME - 1);
                        return -1;
                }
                memcpy(x->avro_path[x->avro_n], s, n);
                x->avro_path[x->avro_n++][n] = '\0';
                if (!s[n])
                        return 0;
                s += n + 1;
        }
}

int ref_extract_compile(gp_extract_t *x, const char *spec, gp_unit_t unit, char *err,
                        size_t errlen) {
        memset(x, 0, sizeof(*x));
        x->unit = unit;
        if (!strcmp(spec, "kafka-timestamp")) {
                x->kind = GP_ET_KAFKA;
                return 0;
        }
        if (!strncmp(spec, "json:", 5)) {
                x->kind = GP_ET_JSON;
                return ref_jpath_compile(&x->path, spec + 5, err, errlen);
        }
        if (!strncmp(spec, "header:", 7)) {
                size_t n = strlen(spec + 7);
                if (n == 0 || n >= sizeof(x->header)) {
                        snprintf(err, errlen, "header name must be 1 to %zu bytes",
                                 sizeof(x->header) - 1);
                        return -1;
                }
                x->kind = GP_ET_HEADER;
                memcpy(x->header, spec + 7, n + 1);
                return 0;
        }
        if (!strncmp(spec, "avro:", 5))
                return avro_path(x, spec + 5, err, errlen);
        snprintf(err, errlen,
                 "'%s' is not kafka-timestamp, json:PATH, header:NAME or avro:PATH", spec);
        return -1;
}

static const char *const bad_names[GP_BAD__COUNT] = {
        [GP_BAD_NOT_JSON] = "not-json",
        [GP_BAD_FIELD_MISSING] = "field-missing",
        [GP_BAD_WRONG_TYPE] = "wrong-type",
        [GP_BAD_BAD_TIME] = "bad-time",
        [GP_BAD_HEADER_MISSING] = "header-missing",
        [GP_BAD_NO_TIMESTAMP] = "no-timestamp",
        [GP_BAD_BAD_FRAME] = "bad-frame",
        [GP_BAD_BAD_AVRO] = "bad-avro",
        [GP_BAD_UNKNOWN_SCHEMA] = "unknown-schema",
        [GP_BAD_BAD_SCHEMA] = "bad-schema",
        [GP_BAD_REGISTRY_UNAVAILABLE] = "registry-unavailable",
        [GP_BAD_TOO_LARGE] = "too-large",
        [GP_BAD_FUTURE_TIME] = "future-time",
};

const char *ref_bad_name(gp_bad_code_t code) {
        return code > GP_BAD_NONE && code < GP_BAD__COUNT ? bad_names[code] : NULL;
}

static int bad(gp_bad_t *b, gp_bad_code_t code, const char *why) {
        b->code = code;
        b->why = why;
        return -1;
}

/* A JSON string holding a time: escapes are not decoded (a time has none). */
static int from_text(const char *s, size_t n, gp_unit_t unit, int64_t *ts, gp_bad_t *b) {
        const char *why = NULL;
        int64_t t;
        if (ref_time_parse(s, n, unit, &t, &why))
                return bad(b, GP_BAD_BAD_TIME, why ? why : "unparseable time");
        /* -9223372036854775808 ms parses, but is GP_TS_NONE: "no time" */
        if (t == GP_TS_NONE)
                return bad(b, GP_BAD_BAD_TIME, "out of range");
        *ts = t;
        return 0;
}

static int from_avro(const gp_extract_t *x, const gp_record_view_t *r, int64_t *ts,
                     gp_bad_t *b) {
        gp_avro_val_t v;
        const char *why = NULL;
        if (!r->avro)
                return bad(b, GP_BAD_BAD_SCHEMA, "no schema for the record");
        switch (ref_avro_find(r->avro, r->value, r->value_len, &v)) {
        case GP_AVRO_OK:
                break;
        case GP_AVRO_ERR_MISSING:
                return bad(b, GP_BAD_FIELD_MISSING, "the event-time field is absent");
        case GP_AVRO_ERR_LIMIT:
                return bad(b, GP_BAD_BAD_AVRO, "Avro nested too deeply or too many items");
        default:
                return bad(b, GP_BAD_BAD_AVRO,
                           "the value is not Avro of its schema (truncated, "
                           "or a bad length, varint or union index)");
        }
        switch (v.kind) {
        case GP_AVF_NULL:
                return bad(b, GP_BAD_FIELD_MISSING, "the event-time field is null");
        case GP_AVF_OTHER:
                return bad(b, GP_BAD_WRONG_TYPE,
                           "the event-time field is not an int, long or string");
        default:
                if (ref_avro_val_ms(&v, x->unit, ts, &why))
                        return bad(b, GP_BAD_BAD_TIME, why ? why : "unparseable time");
                return 0;
        }
}

int ref_extract_ts(const gp_extract_t *x, const gp_record_view_t *r, int64_t *ts,
                   gp_bad_t *b) {
        gp_jval_t v;

        switch (x->kind) {
        case GP_ET_KAFKA:
                if (r->kafka_ts < 0)
                        return bad(b, GP_BAD_NO_TIMESTAMP,
                                   "the record has no Kafka timestamp");
                *ts = r->kafka_ts;
                return 0;
        case GP_ET_HEADER:
                if (!r->header)
                        return bad(b, GP_BAD_HEADER_MISSING,
                                   "the event-time header is absent");
                return from_text(r->header, r->header_len, x->unit, ts, b);
        case GP_ET_JSON:
                if (!r->value)
                        return bad(b, GP_BAD_NOT_JSON, "the record has no value");
                switch (ref_jpath_find(&x->path, r->value, r->value_len, &v)) {
                case GP_JSON_OK:
                        break;
                case GP_JSON_ERR_MISSING:
                        return bad(b, GP_BAD_FIELD_MISSING, "the event-time field is absent");
                case GP_JSON_ERR_DEPTH:
                        return bad(b, GP_BAD_NOT_JSON, "JSON nested too deeply");
                default:
                        return bad(b, GP_BAD_NOT_JSON, "the value is not JSON");
                }
                if (v.type == GP_JSON_NUMBER || (v.type == GP_JSON_STRING && !v.has_escapes))
                        return from_text(v.ptr, v.len, x->unit, ts, b);
                return bad(b, GP_BAD_WRONG_TYPE,
                           "the event-time field is not a number or string");
        case GP_ET_AVRO:
                return from_avro(x, r, ts, b);
        }
        return bad(b, GP_BAD_BAD_TIME, "unknown extractor");
}
