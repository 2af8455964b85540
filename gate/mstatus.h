/* gate/mstatus.h: one member's status in group mode, and the pipeline's
 * view over every member (docs/DESIGN.md, Scale-out: status).
 *
 * Each member of a pipeline writes its own key, gate-proxy.member.<name>
 * (GP_KEY_MEMBER_PREFIX), so no member's phase, counts or re-delivery
 * hides another's; readers (`gate-proxy status`, `gate-proxy handover
 * --abort`) sum the members that still beat. The value is one line:
 *
 *   phase=split tx=1796514817520 parts=4 n=10,3,0 late=0
 *       rd=blue,120,30,0,1 beat=1796514819784 run=1
 *
 * (tx 0: no transition known; parts the partitions it owns; n the records
 * it routed to blue, green and the DLQ over the partitions it owns now;
 * rd the re-delivery to a colour: records sent, offsets left, offsets
 * lost, partitions still reading, "-" when there is none; beat the wall
 * ms it wrote; run 0 once it stopped cleanly). Decoding is strict: an
 * unknown, missing or malformed field is an error.
 *
 * Pure: libc only. */
#ifndef GP_GATE_MSTATUS_H
#define GP_GATE_MSTATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/gate.h"

#define GP_KEY_MEMBER_PREFIX "gate-proxy.member."
#define GP_MSTATUS_MAX       256

typedef struct gp_mstatus {
        gp_phase_t phase;
        int64_t tid;
        uint64_t parts;
        uint64_t n[3];
        uint64_t late;
        bool rd; /* a re-delivery is known */
        gp_colour_t rd_to;
        uint64_t rd_sent, rd_left, rd_lost, rd_open;
        int64_t beat; /* wall ms */
        bool run;     /* false: stopped cleanly */
} gp_mstatus_t;

/* The line into buf (NUL-terminated); its length, or -1 if len is too
 * small. */
int gp_mstatus_encode(const gp_mstatus_t *m, char *buf, size_t len);
/* Parses s[0..len); 0, or -1 with the reason in err. */
int gp_mstatus_decode(const char *s, size_t len, gp_mstatus_t *m, char *err, size_t errlen);

/* The pipeline over its members' statuses. */
typedef struct gp_mstatus_view {
        size_t live;      /* members running that beat within the bound */
        size_t gone;      /* members stopped, or silent past the bound */
        size_t owning;    /* of them owning partitions */
        bool one_phase;   /* every live member owning partitions in one phase */
        gp_phase_t phase; /* that phase (the first such member's otherwise; with
                              none, the first live member's) */
        uint64_t parts;   /* partitions the live members own */
        uint64_t n[3], late;
        size_t rd_members; /* live members with a re-delivery known */
        uint64_t rd_sent, rd_left, rd_lost, rd_open;
        int64_t oldest; /* the oldest beat of a live member; GP_TS_NONE: none */
} gp_mstatus_view_t;

/* Sums the n members: a member counts as live when it runs and its beat
 * is at most stale_ms before now. The counts are of the partitions each
 * owns, so the live members' sum is the pipeline's once every partition
 * has an owner. */
void gp_mstatus_view(const gp_mstatus_t *m, size_t n, int64_t now, int64_t stale_ms,
                     gp_mstatus_view_t *out);

/* True when a member's key (value, its line) may be removed from the map:
 * it parses and its beat is more than after_ms before now (a killed
 * member's, or one whose name went with its pod). A line that does not
 * parse is not judged here. */
bool gp_mstatus_forgotten(const char *value, int64_t now, int64_t after_ms);

#endif
