/* gate/checkpoint.h: the gate state as text, stored in the offset-commit
 * metadata of every partition in every transaction.
 *
 * One line per partition: the pipeline's decisions (the same in every
 * partition of one commit, with a sequence number so the newest wins),
 * that partition's own counters, and the fingerprint of the settings of
 * the instance that wrote it:
 *
 *   gp5 seq=42 tx=1733150000123 ph=split old=blue new=green T=1700000000000
 *       tw=1700000000123 hi=1699999999000 n=10,3,0 late=0 st=2,3
 *       pr=1700000000000 cl=0 sp=5120 cp=- ap=- rd=0,0,0 fp=5d1c39a2
 *
 * ("-" for an unset time or offset). tx is the transition's id
 * (gate/control.h, GP_KEY_TID; 0: none known); pr is the partition's promise for the
 * open transition (gate/agree.h), cl whether the partition closed the old
 * side by its own watermark; sp, cp and ap the source offsets where its
 * routing changed and rd the re-delivery's state (open 0 or 1, records
 * re-delivered, offsets lost: gate/redeliver.h); fp the writer's settings
 * fingerprint (8 hex digits, gate/fingerprint.h). A "gp4" line (before
 * tx) decodes with tx 0. A "gp3" line (before sp
 * to rd) decodes with none of them; a "gp2" line (before fp) is the gp3
 * line without fp and decodes with fp 0 (none); a "gp1" line (before pr
 * and cl) is the gp2 line without them and decodes with no promise and
 * cl=0. A state with a fingerprint is written as gp5, one without as gp2
 * (it cannot carry tx or sp to rd: encoding fails), so a gp2 or gp5 line
 * decodes to a state that encodes to the same line. Decoding is strict:
 * any unknown field, missing field or bad number is an error, never a
 * guess.
 * Pure: libc only. */
#ifndef GP_GATE_CHECKPOINT_H
#define GP_GATE_CHECKPOINT_H

#include "gate/gate.h"

/* Enough for the longest line (every number at 20 digits). */
#define GP_CKPT_MAX 512

/* Writes the line into buf (NUL-terminated); returns its length, or -1 if
 * len is too small. */
int gp_ckpt_encode(const gp_gate_t *g, const gp_part_t *p, char *buf, size_t len);

/* Parses buf[0..len). On success fills g and p (p->last_wall untouched)
 * and returns 0; on error returns -1 with the reason in err. */
int gp_ckpt_decode(const char *buf, size_t len, gp_gate_t *g, gp_part_t *p, char *err,
                   size_t errlen);

#endif
