/* gate/redeliver.h: the re-delivery after an abort past T (docs/DESIGN.md,
 * Abort re-delivery).
 *
 * A hand-over from OLD to NEW aborted after T with OLD surviving leaves OLD
 * without the records that went to NEW: while the gate split, those with
 * ts >= T; after the old side closed, every record the late policy sent to
 * NEW. Each partition keeps the source offsets where its routing changed
 * (gp_part_t sp, cp, ap, in its checkpoint); the proxy reads [sp, ap)
 * again and gives the survivor exactly the records that went to NEW, by the
 * same rule, then goes on from ap. The re-read's position is the committed
 * offset, so a restart anywhere in it goes on where it was.
 *
 * Pure: libc only. */
#ifndef GP_GATE_REDELIVER_H
#define GP_GATE_REDELIVER_H

#include "gate/gate.h"

/* The gate a partition routes by changed from was to now at source
 * position pos (the next offset it routes); p->closed says whether it
 * closed the old side by its own watermark. Records where the split began
 * (sp), where the old side closed (cp) and where an abort took effect (ap).
 * Returns true when a re-delivery begins: an abort after T whose survivor
 * is the transition's old colour, with redeliver (gate.abort.redeliver)
 * and records to read again; the caller then reads the partition again
 * from gp_redeliver_from(). */
bool gp_redeliver_mark(gp_part_t *p, const gp_gate_t *was, const gp_gate_t *now, int64_t pos,
                       bool redeliver);

/* Where an open re-delivery reads from, given where it would read (at) and
 * the first offset the source still holds (low; -1: unknown). Offsets
 * retention removed are counted as lost (p->rd[1]); when nothing below ap
 * is left the re-delivery ends and ap is returned. */
int64_t gp_redeliver_from(gp_part_t *p, int64_t at, int64_t low);

typedef enum {
        GP_RD_ROUTE, /* no re-delivery, or off at or past ap: route as usual */
        GP_RD_SKIP,  /* read again, the survivor has it (or the DLQ does) */
        GP_RD_SEND,  /* read again: it went to the aborted colour, send it to g->new_c */
} gp_rd_t;

/* A record at source offset off with event time ts (GP_TS_NONE:
 * unreadable), read while the partition's re-delivery is open, under the
 * aborted gate g (the survivor is g->new_c, T is g->cutoff). The first
 * record at or past ap ends the re-delivery. Counts what it sends. */
gp_rd_t gp_redeliver_record(gp_part_t *p, const gp_gate_t *g, const gp_gate_conf_t *c,
                            int64_t off, int64_t ts);

/* At a boundary, with the partition's position at pos: ends an open
 * re-delivery that reached ap (nothing but transaction markers was left
 * below it). Returns true when it ended now. */
bool gp_redeliver_settle(gp_part_t *p, int64_t pos);

/* Partitions whose re-delivery is open. */
size_t gp_redeliver_open(gp_part_t *const *parts, size_t n);

#endif
