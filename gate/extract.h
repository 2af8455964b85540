/* gate/extract.h: reading a record's event time, as gate.event-time says.
 *
 *   kafka-timestamp   the record's Kafka timestamp
 *   json:PATH         a field of a JSON value (gate/jsonpath.h), a number
 *                     in gate.event-time.unit or a string (number or RFC 3339)
 *   header:NAME       a header's value: a number in the unit, or RFC 3339
 *
 * A failure yields a stable reason code (for the dead-letter header) and a
 * short text. Pure: libc only; the caller hands in the bytes. */
#ifndef GP_GATE_EXTRACT_H
#define GP_GATE_EXTRACT_H

#include "gate/jsonpath.h"
#include "gate/timeparse.h"
#include "gate/types.h"

typedef enum { GP_ET_KAFKA = 0, GP_ET_JSON, GP_ET_HEADER } gp_et_kind_t;

typedef struct gp_extract {
        gp_et_kind_t kind;
        gp_unit_t unit;
        gp_jpath_t path;    /* GP_ET_JSON */
        char header[256];   /* GP_ET_HEADER */
} gp_extract_t;

/* What went wrong, for the dead-letter topic. code is a stable word. */
typedef struct gp_bad {
        const char *code; /* no-timestamp, not-json, field-missing, wrong-type,
                           * bad-time, header-missing */
        const char *why;  /* a short static text */
} gp_bad_t;

int gp_extract_compile(gp_extract_t *x, const char *spec, gp_unit_t unit, char *err,
                       size_t errlen);

/* The bytes the extractor needs from one record. */
typedef struct gp_record_view {
        const void *value;
        size_t value_len;
        int64_t kafka_ts;    /* -1 when the record has none */
        const void *header;  /* the value of header x->header, or NULL */
        size_t header_len;
} gp_record_view_t;

/* 0 with *ts set, or -1 with *bad set. */
int gp_extract_ts(const gp_extract_t *x, const gp_record_view_t *r, int64_t *ts,
                  gp_bad_t *bad);

#endif
