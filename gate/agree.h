/* gate/agree.h: one cutoff T for N instances of one pipeline
 * (docs/DESIGN.md, Scale-out: one T for N instances).
 *
 * The source partitions are spread over the instances of one consumer
 * group and move between them at any moment; no instance leads. When the
 * map asks for a transition, the owner of each partition promises: from
 * then on it routes ts < promise to the old colour and holds the partition
 * at the first record at or above the promise, and it commits the promise
 * in the partition's checkpoint. A committed promise is never changed (a
 * new owner keeps it); an uncommitted one was never seen by anybody, so
 * the next owner makes a new one from the committed state.
 *
 * Once every partition has a committed promise, T is their maximum: every
 * record sent to the old colour is below its own partition's promise, so
 * below T, and every record at or above T is still held. T depends on
 * committed checkpoints only, never on the map, so every instance that
 * reads them finds the same T. The map's T is publication for the
 * operator: written once (compare-and-set on "no T stored"), never written
 * over, never followed.
 *
 * Pure: libc only. Time is an argument. */
#ifndef GP_GATE_AGREE_H
#define GP_GATE_AGREE_H

#include "gate/gate.h"
#include "gate/types.h"

/* The promise of a late partition that sent nothing to the old colour:
 * it holds every readable record until T is known and cannot raise T.
 * Above GP_TS_NONE, so an unreadable event time (counted as older than
 * any T) still goes to the old colour. */
#define GP_AGREE_NOTHING (GP_TS_NONE + 1)

/* What a promise rests on besides the partition's own highest event time. */
typedef struct gp_agree_basis {
        int64_t asked;    /* a cutoff the map asks for (the request key, or a T
                             already stored when the promise is made); GP_TS_NONE */
        int64_t part_wm;  /* the partition's watermark; GP_TS_NONE: none */
        int64_t inst_wm;  /* the instance's W; GP_TS_NONE: unknown */
        int64_t inst_hi;  /* the highest event time the instance has read on any
                             partition; GP_TS_NONE: none */
        int64_t now;      /* wall-clock ms, standing in when nothing was read */
        int64_t delay_ms; /* D, the deployment-deletion delay */
        int64_t align_ms; /* gate.cutoff.align.ms (or the map's request), >= 1 */
        bool late;        /* the partition has no committed promise while another
                             partition already has one for this transition (a
                             slow owner, or the source grew during it) */
} gp_agree_basis_t;

/* The promise of a partition whose highest routed event time is hi
 * (GP_TS_NONE: none): max(hi + 1, floor) rounded up to align_ms, where
 * the floor is b->asked when a cutoff is asked (then unrounded, so T is
 * exactly the ask when no partition routed past it), else the partition's
 * watermark + D, else the instance's W + D, else the highest event time
 * the instance has read + D (W is unknown while a partition that has
 * sent nothing yet, e.g. one just added, counts as active), else now + D:
 * wall-clock time only when the instance has read nothing at all, since
 * event time may lag it by any amount. A late partition
 * takes no floor: another promise already carries one, and a T computed
 * from the committed promises before this partition existed must stay the
 * maximum. Its promise covers only what it routed (GP_AGREE_NOTHING when
 * that is nothing); once a promise of the transition is committed
 * anywhere, a partition without its own routes nothing before making it.
 * GP_TS_NONE when no promise can be made (hi is INT64_MAX, or the rounding
 * overflows): the partition holds and the caller reports it. */
int64_t gp_agree_promise(int64_t hi, const gp_agree_basis_t *b);

/* Where one record of a partition goes, or that the partition holds. */
typedef enum {
        GP_AGREE_OLD,  /* to the old colour */
        GP_AGREE_NEW,  /* to the new colour */
        GP_AGREE_HOLD, /* neither, not yet: the partition stops at this record
                          (never skipped) until T is known */
} gp_agree_dest_t;

/* The destination of event time ts (GP_TS_NONE counts as older than any
 * T): with T known (cutoff), ts < T old and ts >= T new, as the gate's
 * split; else with a promise, ts < promise old and the rest held; else
 * (no transition seen yet) old, the owner. */
gp_agree_dest_t gp_agree_route(int64_t ts, int64_t promise, int64_t cutoff);

/* T from the committed promises of every partition of the pipeline (the
 * partitions listed after the checkpoints were read, so a partition that
 * appeared meanwhile counts): their maximum, GP_TS_NONE while any is
 * GP_TS_NONE (missing) or n is 0. No rounding here: promises are rounded
 * when made, so T depends on nothing an instance could see differently. */
int64_t gp_agree_cutoff(const int64_t *promises, size_t n);

/* What to do with the T stored in the map against the computed one. */
typedef enum {
        GP_AGREE_MAP_WAIT,     /* no T computed yet: nothing to write or compare */
        GP_AGREE_MAP_WRITE,    /* no T stored: write T, compare-and-set on "none" */
        GP_AGREE_MAP_AGREES,   /* the map shows T */
        GP_AGREE_MAP_CONFLICT, /* another T stored (a hand edit): report it; keep
                                  routing by the computed T, never write over it */
} gp_agree_map_t;

/* The verdict for the map's stored T (GP_TS_NONE: none) and the computed
 * cutoff (GP_TS_NONE: not yet). */
gp_agree_map_t gp_agree_map(int64_t stored, int64_t cutoff);

/* True when partition pt, under T = cutoff chosen at wall time
 * cutoff_wall, may close the old side for itself at wall time now: its
 * own watermark (highest event time - c->out_of_orderness_ms) has reached
 * T + c->lateness_ms, or it has had no record for c->idle_ms +
 * c->lateness_ms since T or since its last record, whichever came later.
 * The per-partition form of gp_gate_close_due: from then on the
 * partition's records with ts < T count as late (gp_gate_route with
 * pt->closed), and the old colour gets nothing more of it once the close
 * is committed. False without a T. */
bool gp_agree_part_close_due(const gp_part_t *pt, int64_t cutoff, int64_t cutoff_wall,
                             const gp_gate_conf_t *c, int64_t now);
/* ... and by which rule: GP_CLOSE_WATERMARK (its own watermark),
 * GP_CLOSE_IDLE (quiet), GP_CLOSE_NONE (not due). */
gp_close_rule_t gp_agree_part_close_rule(const gp_part_t *pt, int64_t cutoff,
                                         int64_t cutoff_wall, const gp_gate_conf_t *c,
                                         int64_t now);

/* True when n > 0 and every partition is closed in its committed
 * checkpoint. A partition with nothing of this transition committed (no
 * promise, no T: it appeared after T) starts closed when all the others
 * are: CLEAR_TO_TEARDOWN may already be out, and the old colour must get
 * nothing more. */
bool gp_agree_all_closed(const bool *closed, size_t n);

/* True when CLEAR_TO_TEARDOWN may be published: every partition of the
 * pipeline closed in its committed checkpoint (the list read after the
 * checkpoints), the drain check passed on the targets of those commits,
 * and the map shows the T every partition routed by (map is
 * GP_AGREE_MAP_AGREES): a map with another T would tell the operator of a
 * split that did not happen. */
bool gp_agree_clear(const bool *closed, size_t n, bool drained, gp_agree_map_t map);

/* True when a partition's committed checkpoint (line, lp) lets gate g
 * begin transition tid. A transition begins over the whole pipeline only
 * once no partition still owes the survivor of an earlier one: a line
 * still splitting in another transition (its owner died before it saw the
 * end, or has not applied it yet), a re-delivery still open, or a line
 * closed where g aborted the same transition after T. Such a partition
 * would otherwise land, with its debt, in a gate that has moved on. Lines
 * at rest (steady, closed, aborted with nothing open), waiting ones (they
 * routed everything to the old colour) and lines of tid itself hold
 * nothing back, whichever transition they ended. */
bool gp_agree_settled(const gp_gate_t *g, int64_t tid, const gp_gate_t *line,
                      const gp_part_t *lp);

#endif
