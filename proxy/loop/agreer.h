/* proxy/loop/agreer.h: the agreement on T beside the loop
 * (docs/DESIGN.md, Scale-out: one T for N instances).
 *
 * gate.membership=group only. A thread with a consumer handle of its own
 * (the pipeline's group id, never subscribed, so never a member) reads
 * the committed offsets and checkpoints of every partition of the source
 * topics while the loop asks about a transition, and computes T from the
 * committed promises (gp_agree_cutoff), or takes the T a committed
 * checkpoint of the same transition already holds; once T is known, it
 * counts the partitions closed under it. A line written under other
 * settings (another fingerprint, gate/fingerprint.h) counts for nothing:
 * T is never computed from promises made under other settings. The loop
 * asks and collects between transactions and never waits for it. */
#ifndef GP_PROXY_LOOP_AGREER_H
#define GP_PROXY_LOOP_AGREER_H

#include "gate/types.h"
#include "proxy/conf/conf.h"

typedef struct gp_agreer gp_agreer_t;

/* A thread reading the checkpoints of the n source topics (names copied)
 * for an instance whose settings fingerprint is fp. NULL with err set when
 * it cannot start. */
gp_agreer_t *gp_agreer_new(const gp_conf_t *conf, const char *const *topics, int n,
                           uint32_t fp, gp_err_t *err);
void gp_agreer_destroy(gp_agreer_t *a);

/* What the last read of every partition's committed checkpoint found. */
typedef struct gp_agreed {
        int64_t cutoff;    /* T of the transition asked; GP_TS_NONE: not yet */
        bool any;          /* some partition has a committed promise (or T) of it */
        size_t parts;      /* partitions read */
        size_t promised;   /* of them with a committed promise (or T) */
        size_t closed;     /* of them closed under the T asked about */
        bool all_closed;   /* every partition read is (gp_agree_all_closed) */
        size_t other;      /* of them whose line carries another fingerprint: they
                            count as without a promise, T or close */
        size_t unsettled;  /* asked with a base gate: of them whose line holds the
                            transition back (gp_agree_settled) */
        uint32_t other_fp; /* one such fingerprint */
        int64_t read_ms;   /* wall ms of that read; 0: none yet */
} gp_agreed_t;

/* Asks for transition tid (gate/control.h, GP_KEY_TID; 0: any of these
 * colours) old -> new_c, with cutoff its T once known
 * (GP_TS_NONE before: the thread then looks for T; after, for the
 * partitions closed under it). With base (this instance's gate, before it
 * begins tid; NULL: not asked) each read also counts the partitions whose
 * line holds tid back. The thread reads until asked about another one or
 * gp_agreer_idle; out is what its last read of this ask found. */
void gp_agreer_ask(gp_agreer_t *a, gp_colour_t old, gp_colour_t new_c, int64_t tid,
                   int64_t cutoff, const gp_gate_t *base, gp_agreed_t *out);

/* No transition open: the thread stops reading. */
void gp_agreer_idle(gp_agreer_t *a);

#endif
