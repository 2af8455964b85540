/* gate/drain.h: the drain check's verdict on one partition of the old
 * colour topic (docs/DESIGN.md, Choosing T and closing): has the old
 * side's consumer group consumed everything the proxy wrote there?
 *
 * The proxy gathers the facts (the group's committed offset, the
 * partition's offsets, a read_committed read after the committed offset)
 * and these functions decide. Pure: no I/O, no clock. */
#ifndef GP_GATE_DRAIN_H
#define GP_GATE_DRAIN_H

#include <stdint.h>

typedef struct gp_drain_part {
        /* One past the last record this process wrote to the partition in
         * a committed transaction (delivery reports); -1: it wrote none
         * since it started, so the partition itself must be read. */
        int64_t written;
        int64_t committed; /* the group's committed offset; < 0: none */
        /* Read only when written is -1: the low watermark and the last
         * stable offset (the end a read_committed reader sees). */
        int64_t lo, hi;
        /* The answer of a read_committed read from gp_drain_from(): 1 a
         * committed record, 0 the end (none), -1 no answer in time. */
        int found;
} gp_drain_part_t;

typedef enum {
        GP_DRAIN_DONE,    /* consumed all the proxy wrote */
        GP_DRAIN_LAG,     /* records left; *lag says how many offsets */
        GP_DRAIN_UNKNOWN, /* the read gave no answer: not drained */
} gp_drain_state_t;

/* The offset from which a read must look for a committed record the
 * group has not consumed, or -1 when the offsets alone decide. Needs
 * written, committed, lo and hi. */
int64_t gp_drain_from(const gp_drain_part_t *p);

/* The verdict; found is used only when gp_drain_from() asked for a read.
 * Consumers differ in what they commit after the last record of a
 * transaction: the offset after that record (Flink's KafkaSource) or
 * after the commit marker (the Java and librdkafka consumers); both are
 * drained. */
gp_drain_state_t gp_drain_state(const gp_drain_part_t *p, int64_t *lag);

#endif
