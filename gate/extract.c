/* gate/extract.c: event-time extraction. Pure: libc only. */
#include <stdio.h>
#include <string.h>

#include "gate/extract.h"

int gp_extract_compile(gp_extract_t *x, const char *spec, gp_unit_t unit, char *err,
                       size_t errlen) {
        memset(x, 0, sizeof(*x));
        x->unit = unit;
        if (!strcmp(spec, "kafka-timestamp")) {
                x->kind = GP_ET_KAFKA;
                return 0;
        }
        if (!strncmp(spec, "json:", 5)) {
                x->kind = GP_ET_JSON;
                return gp_jpath_compile(&x->path, spec + 5, err, errlen);
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
        snprintf(err, errlen,
                 "'%s' is not kafka-timestamp, json:PATH or header:NAME", spec);
        return -1;
}

static int bad(gp_bad_t *b, const char *code, const char *why) {
        b->code = code;
        b->why = why;
        return -1;
}

/* A JSON string holding a time: escapes are not decoded (a time has none). */
static int from_text(const char *s, size_t n, gp_unit_t unit, int64_t *ts, gp_bad_t *b) {
        const char *why = NULL;
        if (gp_time_parse(s, n, unit, ts, &why))
                return bad(b, "bad-time", why ? why : "unparseable time");
        return 0;
}

int gp_extract_ts(const gp_extract_t *x, const gp_record_view_t *r, int64_t *ts,
                  gp_bad_t *b) {
        gp_jval_t v;

        switch (x->kind) {
        case GP_ET_KAFKA:
                if (r->kafka_ts < 0)
                        return bad(b, "no-timestamp", "the record has no Kafka timestamp");
                *ts = r->kafka_ts;
                return 0;
        case GP_ET_HEADER:
                if (!r->header)
                        return bad(b, "header-missing", "the event-time header is absent");
                return from_text(r->header, r->header_len, x->unit, ts, b);
        case GP_ET_JSON:
                if (!r->value)
                        return bad(b, "not-json", "the record has no value");
                switch (gp_jpath_find(&x->path, r->value, r->value_len, &v)) {
                case GP_JSON_OK:
                        break;
                case GP_JSON_ERR_MISSING:
                        return bad(b, "field-missing", "the event-time field is absent");
                case GP_JSON_ERR_DEPTH:
                        return bad(b, "not-json", "JSON nested too deeply");
                default:
                        return bad(b, "not-json", "the value is not JSON");
                }
                if (v.type == GP_JSON_NUMBER || (v.type == GP_JSON_STRING && !v.has_escapes))
                        return from_text(v.ptr, v.len, x->unit, ts, b);
                return bad(b, "wrong-type", "the event-time field is not a number or string");
        }
        return bad(b, "bad-time", "unknown extractor");
}
