/* gate/members.h: the members of a Kafka consumer group as DescribeGroups
 * gives them (docs/DESIGN.md, Scale-out: who is in the group): each
 * member's protocol metadata (the ConsumerProtocol Subscription: the topics
 * it subscribes to) and its assignment (the ConsumerProtocol Assignment:
 * the partitions the group gave it), read from bytes another client wrote,
 * without trusting one of them.
 *
 *   Subscription: int16 version, [string topic], bytes userdata;
 *                 v1+: [string topic, [int32 partition]] owned partitions;
 *                 v2+: int32 generation; v3+: nullable string rack.
 *   Assignment:   int16 version, [string topic, [int32 partition]],
 *                 bytes userdata.
 *
 * Big-endian; an array is an int32 count, a string an int16 length,
 * bytes an int32 length (-1: null). Every count and length is checked
 * against what is left of the buffer before anything is read; a negative
 * count or partition, a null topic name or a truncated field refuses the
 * whole buffer. Bytes after the last field of the version are allowed (a
 * newer version adds fields at the end). Nothing is allocated: names and
 * partition lists point into the buffer, which must outlive the result.
 *
 * Pure: libc only. */
#ifndef GP_GATE_MEMBERS_H
#define GP_GATE_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Topics kept per subscription or assignment; the counts go on past it. */
#define GP_CP_MAX_TOPICS 128

/* A string inside the buffer (not NUL-terminated). */
typedef struct gp_cp_str {
        const char *s;
        size_t len;
} gp_cp_str_t;

typedef struct gp_cp_subscription {
        int16_t version;
        size_t n_topics;                      /* topics subscribed to */
        gp_cp_str_t topics[GP_CP_MAX_TOPICS]; /* the first GP_CP_MAX_TOPICS of them */
        int32_t userdata_len;                 /* -1: null */
        size_t n_owned;                       /* v1+: partitions it owns, all topics */
        int32_t generation;                   /* v2+; -1 before */
        bool has_rack;                        /* v3+ with a rack */
        gp_cp_str_t rack;
} gp_cp_subscription_t;

/* One topic of an assignment: n partitions, big-endian int32 at parts
 * (gp_cp_part reads them). */
typedef struct gp_cp_tparts {
        gp_cp_str_t topic;
        size_t n;
        const unsigned char *parts;
} gp_cp_tparts_t;

typedef struct gp_cp_assignment {
        int16_t version;
        size_t n_topics;                         /* topics in it */
        gp_cp_tparts_t topics[GP_CP_MAX_TOPICS]; /* the first GP_CP_MAX_TOPICS */
        size_t n_parts;                          /* partitions, all topics */
        int32_t userdata_len;                    /* -1: null */
} gp_cp_assignment_t;

/* Parses buf[0..len). 0 with out filled; -1 with the reason in err (out
 * then undefined). */
int gp_cp_subscription_parse(const void *buf, size_t len, gp_cp_subscription_t *out, char *err,
                             size_t errlen);
int gp_cp_assignment_parse(const void *buf, size_t len, gp_cp_assignment_t *out, char *err,
                           size_t errlen);

/* Partition i (< t->n) of an assignment's topic. */
int32_t gp_cp_part(const gp_cp_tparts_t *t, size_t i);

/* True when s subscribes to exactly the topics mine[0..n) (as sets: order
 * and repeats do not count). A subscription with more topics than it kept
 * is not the same. */
bool gp_cp_same_topics(const gp_cp_subscription_t *s, const char *const *mine, size_t n);

/* True when topic (NUL-terminated) is the string s. */
bool gp_cp_str_is(gp_cp_str_t s, const char *topic);

#endif
