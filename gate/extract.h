/* gate/extract.h: reading a record's event time, as gate.event-time says.
 *
 *   kafka-timestamp   the record's Kafka timestamp
 *   json:PATH         a field of a JSON value (gate/jsonpath.h), a number
 *                     in gate.event-time.unit or a string (number or RFC 3339)
 *   header:NAME       a header's value: a number in the unit, or RFC 3339
 *   avro:a.b          a field of an Avro value (gate/avro.h): int or long
 *                     (timestamp-millis/-micros/-nanos, else in the unit) or
 *                     a string; the caller finds the value's schema (a local
 *                     .avsc, or a registry id from the Confluent framing)
 *
 * A failure yields a stable reason code (for the dead-letter header) and a
 * short text. Pure: libc only; the caller hands in the bytes. */
#ifndef GP_GATE_EXTRACT_H
#define GP_GATE_EXTRACT_H

#include "gate/avro.h"
#include "gate/jsonpath.h"
#include "gate/timeparse.h"
#include "gate/types.h"

typedef enum { GP_ET_KAFKA = 0, GP_ET_JSON, GP_ET_HEADER, GP_ET_AVRO } gp_et_kind_t;

#define GP_AVRO_MAX_NAME 128

typedef struct gp_extract {
        gp_et_kind_t kind;
        gp_unit_t unit;
        gp_jpath_t path;  /* GP_ET_JSON */
        char header[256]; /* GP_ET_HEADER */
        int avro_n;       /* GP_ET_AVRO: the field names of the path */
        char avro_path[GP_AVRO_MAX_PATH][GP_AVRO_MAX_NAME];
} gp_extract_t;

/* Why a record cannot be routed by its event time: the stable codes of the
 * dead-letter header gate-proxy.error (docs/DESIGN.md, Reading the event time), in the
 * order of gate-proxy's dead-letter metrics. The extractor gives the
 * first six and bad-avro; the caller the rest (bad-frame, unknown-schema,
 * bad-schema, registry-unavailable, too-large, future-time). */
typedef enum gp_bad_code {
        GP_BAD_NONE = 0, /* nothing wrong */
        GP_BAD_NOT_JSON,
        GP_BAD_FIELD_MISSING,
        GP_BAD_WRONG_TYPE,
        GP_BAD_BAD_TIME,
        GP_BAD_HEADER_MISSING,
        GP_BAD_NO_TIMESTAMP,
        GP_BAD_BAD_FRAME,
        GP_BAD_BAD_AVRO,
        GP_BAD_UNKNOWN_SCHEMA,
        GP_BAD_BAD_SCHEMA,
        GP_BAD_REGISTRY_UNAVAILABLE,
        GP_BAD_TOO_LARGE,
        GP_BAD_FUTURE_TIME, /* dated past gate.event-time.max-future.ms */
        GP_BAD__COUNT
} gp_bad_code_t;

/* The code's word ("not-json", ...); NULL for GP_BAD_NONE. */
const char *gp_bad_name(gp_bad_code_t code);

/* What went wrong, for the dead-letter topic. */
typedef struct gp_bad {
        gp_bad_code_t code;
        const char *why; /* a short text that outlives the record */
} gp_bad_t;

int gp_extract_compile(gp_extract_t *x, const char *spec, gp_unit_t unit, char *err,
                       size_t errlen);

/* The bytes the extractor needs from one record. */
typedef struct gp_record_view {
        const void *value;
        size_t value_len;
        int64_t kafka_ts;   /* -1 when the record has none */
        const void *header; /* the value of header x->header, or NULL */
        size_t header_len;
        const gp_avro_t *avro; /* GP_ET_AVRO: value's schema; value is the
                                * Avro body (after any framing) */
} gp_record_view_t;

/* 0 with *ts set, or -1 with *bad set. */
int gp_extract_ts(const gp_extract_t *x, const gp_record_view_t *r, int64_t *ts,
                  gp_bad_t *bad);

#endif
