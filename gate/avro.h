/* gate/avro.h: reading one field of an Avro-encoded record without decoding
 * the rest of it.
 *
 * A schema is a table of nodes (proxy/schema/avsc.c builds it from the schema's
 * JSON). To read the event-time field at path a.b, gp_avro_find walks the
 * binary encoding from the start, skipping every value before the field,
 * descending into records and taking union branches as the bytes say, and
 * stops at the field: nothing after it is read or checked.
 *
 * The bytes are untrusted: every length, count and union index is checked
 * against the buffer and the schema, and a step budget bounds the work
 * (an array of a million nulls is three bytes long).
 *
 * Pure: libc only. Also here: the Confluent wire format framing. */
#ifndef GP_GATE_AVRO_H
#define GP_GATE_AVRO_H

#include <stddef.h>
#include <stdint.h>

#include "gate/timeparse.h"

#define GP_AVRO_MAX_PATH  8     /* fields in avro:a.b.c */
#define GP_AVRO_MAX_NODES 65536 /* nodes in one compiled schema */
#define GP_AVRO_MAX_DEPTH 64    /* nesting while skipping */

typedef enum {
        GP_AV_NULL = 0,
        GP_AV_BOOLEAN,
        GP_AV_INT,
        GP_AV_LONG,
        GP_AV_FLOAT,
        GP_AV_DOUBLE,
        GP_AV_BYTES,
        GP_AV_STRING,
        GP_AV_FIXED,
        GP_AV_ENUM,
        GP_AV_ARRAY,
        GP_AV_MAP,
        GP_AV_UNION,
        GP_AV_RECORD,
} gp_av_type_t;

/* The logical types that carry a time (on long). */
typedef enum {
        GP_AV_LT_NONE = 0,
        GP_AV_LT_MILLIS, /* timestamp-millis */
        GP_AV_LT_MICROS, /* timestamp-micros */
        GP_AV_LT_NANOS,  /* timestamp-nanos */
} gp_av_logical_t;

typedef struct gp_av_node {
        uint8_t type;    /* gp_av_type_t */
        uint8_t logical; /* gp_av_logical_t */
        /* RECORD: for each path depth k, the index of the field named
         * path[k] in this record, or -1. */
        int16_t step[GP_AVRO_MAX_PATH];
        uint32_t n;    /* FIXED: size; ENUM: symbols; RECORD: fields;
                        * UNION: branches */
        uint32_t kids; /* RECORD, UNION: first index into gp_avro_t.kids;
                        * ARRAY: the items node; MAP: the values node */
        /* RECORD with step[k] >= 0: 1 + the index in gp_avro_t.ops of the
         * skip plan of its fields before step[k] (gp_avro_plan), or 0. */
        uint32_t plan[GP_AVRO_MAX_PATH];
} gp_av_node_t;

/* One step of a skip plan: the fields a record has before the path's
 * field, flattened (nested records spelled out), so that gp_avro_find
 * steps over them without a walk of the schema per record. */
typedef struct gp_av_op {
        uint32_t arg;  /* COST: node visits to charge; FIXED: bytes; NODE: node */
        uint8_t op;    /* GP_AVOP_* (gate/avro.c) */
        uint8_t depth; /* NODE: the nesting it is skipped at */
} gp_av_op_t;

/* A compiled schema and event-time path. Built with gp_avro_add_node and
 * gp_avro_add_kids; released with gp_avro_free. */
typedef struct gp_avro {
        gp_av_node_t *nodes;
        uint32_t n_nodes, cap_nodes;
        uint32_t *kids;
        uint32_t n_kids, cap_kids;
        uint32_t root;
        int path_len;    /* 1..GP_AVRO_MAX_PATH */
        gp_av_op_t *ops; /* the skip plans, or NULL (then the walk) */
        uint32_t n_ops, cap_ops;
} gp_avro_t;

/* A new node of `type`, its steps all -1; its index, or -1 (out of memory
 * or GP_AVRO_MAX_NODES reached). */
int64_t gp_avro_add_node(gp_avro_t *av, gp_av_type_t type);

/* Room for n child indexes; the index of the first, or -1. */
int64_t gp_avro_add_kids(gp_avro_t *av, uint32_t n);

void gp_avro_free(gp_avro_t *av);

/* Once the table and path_len are complete: the skip plans of the records
 * on the path (gp_av_node_t.plan), which let gp_avro_find skip fields
 * without walking the schema. Best effort: without them (out of memory,
 * or a plan past its size cap) gp_avro_find walks the schema, with the
 * same answers. */
void gp_avro_plan(gp_avro_t *av);

/* What gp_avro_find found. */
typedef enum {
        GP_AVF_LONG = 0, /* int or long, in .i */
        GP_AVF_STRING,   /* .s, .len: the raw UTF-8 bytes */
        GP_AVF_NULL,     /* the field is there and null */
        GP_AVF_OTHER,    /* some other type */
} gp_avf_kind_t;

typedef struct gp_avro_val {
        gp_avf_kind_t kind;
        uint8_t logical; /* GP_AVF_LONG: gp_av_logical_t */
        int64_t i;
        const char *s;
        size_t len;
} gp_avro_val_t;

typedef enum {
        GP_AVRO_OK = 0,
        GP_AVRO_ERR_DATA = -1,    /* truncated, a bad varint, length or union index */
        GP_AVRO_ERR_MISSING = -2, /* a record on the path lacks the field */
        GP_AVRO_ERR_LIMIT = -3,   /* nested too deeply, or over the step budget */
} gp_avro_rc_t;

/* Finds the path's field in buf[0..len), encoded with av's schema. */
gp_avro_rc_t gp_avro_find(const gp_avro_t *av, const void *buf, size_t len,
                          gp_avro_val_t *out);

/* The Confluent wire format: byte 0 is 0, bytes 1-4 the schema id (big
 * endian), then the Avro binary. 0 with *id and *body set, or -1. */
int gp_avro_frame(const void *buf, size_t len, uint32_t *id, const uint8_t **body,
                  size_t *body_len);

/* A found value as epoch ms: a long or int by its logical type, else by
 * `unit`; a string by gp_time_parse. 0, or -1 with *why. */
int gp_avro_val_ms(const gp_avro_val_t *v, gp_unit_t unit, int64_t *ms, const char **why);

#endif
