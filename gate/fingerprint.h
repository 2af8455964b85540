/* gate/fingerprint.h: a short fingerprint of the settings that decide
 * where a record goes and when the gate decides, written into every
 * checkpoint line (gate/checkpoint.h, fp=), so that instances of one
 * pipeline can tell that another runs under other settings
 * (docs/DESIGN.md, Scale-out: refusals).
 *
 * The fingerprint covers gate.event-time, gate.event-time.unit, the text
 * of gate.avro.schema (or its absence: the registry's framing),
 * gate.record.max.bytes, gate.bad-record, gate.late,
 * gate.watermark.out-of-orderness.ms, gate.watermark.idle.ms,
 * gate.cutoff.align.ms, gate.lateness.ms, gate.topic.blue,
 * gate.topic.green, gate.dlq.topic, gate.drain.group.blue and
 * gate.drain.group.green. It is FNV-1a (32 bits) over one canonical text
 * of them ("gp-settings-1", then each as name=length:value), never 0, so
 * it is the same on every host and in every version that writes it.
 * Identity (pipeline, ids, instance, membership), the source topics (the
 * members' subscriptions show them), gate.source.start, the delivery mode,
 * the intervals, the control map and kafka.* are not in it.
 *
 * Pure: libc only. Time is an argument. */
#ifndef GP_GATE_FINGERPRINT_H
#define GP_GATE_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/gate.h"
#include "gate/timeparse.h"

/* No fingerprint (a gp1 or gp2 line). */
#define GP_FP_NONE 0u

/* The settings a fingerprint covers. Strings NUL-terminated; NULL for an
 * optional one that is unset. */
typedef struct gp_fp_settings {
        const char *event_time; /* gate.event-time */
        gp_unit_t unit;         /* gate.event-time.unit */
        uint32_t avro_schema;   /* gp_fp_bytes of gate.avro.schema's text; GP_FP_NONE: unset */
        int64_t record_max_bytes;
        gp_gate_conf_t gate; /* out-of-orderness, idle, align, lateness, late, bad-record */
        const char *topic_blue, *topic_green, *dlq_topic;
        const char *drain_blue, *drain_green;
} gp_fp_settings_t;

/* The fingerprint of s (never GP_FP_NONE). */
uint32_t gp_fp_of(const gp_fp_settings_t *s);

/* FNV-1a (32 bits) of n bytes (a schema's text), never GP_FP_NONE. */
uint32_t gp_fp_bytes(const void *b, size_t n);

/* May a committed line written under fingerprint line_fp count for this
 * instance (fingerprint mine)? Yes when it has none (an earlier version
 * wrote it) or the same. The agreement takes no promise, no T and no close
 * from a line that does not count: T is never computed from promises made
 * under other settings. */
bool gp_fp_counts(uint32_t mine, uint32_t line_fp);

/* One partition's committed line followed across looks at the group: who
 * owned the partition when it was first seen owned by them, and the line's
 * seq then. */
typedef struct gp_fp_track {
        uint64_t owner; /* a hash of the owner's member id; 0: nobody */
        int64_t since;  /* wall ms that owner was first seen owning it */
        int64_t seq;    /* the line's seq at that look; -1: no line */
} gp_fp_track_t;

typedef enum {
        GP_FP_SAME,    /* no fingerprint to compare, or this instance's */
        GP_FP_PENDING, /* another fingerprint, not known to be a live member's
                          own: perhaps a line an earlier owner left (a restart
                          with changed settings), which its owner rewrites at
                          its next commit; the agreement waits (gp_fp_counts) */
        GP_FP_DIFFERS, /* another live member writes the partition's line under
                          other settings: refuse */
} gp_fp_verdict_t;

/* The verdict on one partition at wall time now: its committed line has
 * fingerprint line_fp and sequence line_seq (-1: no line); owner is a hash
 * of the id of the member the group assigned it to (0: nobody), self
 * whether that member is this instance. DIFFERS when the line has another
 * fingerprint than mine, the owner is another member, and the line is that
 * owner's own: written since the owner was first seen owning it (line_seq
 * above the seq then), or the owner has held it for grace_ms (longer than
 * any owner takes to commit after an assignment). t carries what was first
 * seen; a new owner starts it again. */
gp_fp_verdict_t gp_fp_judge(gp_fp_track_t *t, uint32_t mine, uint32_t line_fp,
                            int64_t line_seq, uint64_t owner, bool self, int64_t now,
                            int64_t grace_ms);

/* FNV-1a (64 bits) of n bytes, never 0: a member id as a gp_fp_track_t
 * owner. */
uint64_t gp_fp_owner(const void *b, size_t n);

#endif
