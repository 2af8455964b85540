/* gate/hoptime.h: a hand-over's time, accounted for (docs/DESIGN.md, A
 * hand-over's time).
 *
 * The instants of one transition as the proxy saw them: TRANSITIONING
 * seen, T written to the map, the old side closed (and by which rule),
 * the old colour's group drained, CLEAR_TO_TEARDOWN written. The proxy
 * records them where they happen and publishes them under
 * gate-proxy.hop as one compact value; `gate-proxy status` and
 * `gate-proxy handover` read it back and say where the time went.
 *
 * The value, every instant after `seen` in ms since `seen`, "-" for one
 * not reached (or not seen by this instance):
 *
 *   hop1 seen=1733150000123 t=412 close=6612 rule=idle:1/2 drain=10712 clear=10813
 *
 * Pure: libc only, no clock (every instant is an argument). */
#ifndef GP_GATE_HOPTIME_H
#define GP_GATE_HOPTIME_H

#include "gate/gate.h"
#include "gate/types.h"

/* The longest value gp_hoptime_format writes, its NUL included. */
#define GP_HOP_VALUE_MAX 200

typedef struct gp_hop {
        int64_t seen;         /* wall ms: TRANSITIONING seen; GP_TS_NONE: no hop */
        int64_t t;            /* T written to the map */
        int64_t closed;       /* a close rule held (gp_gate_close_rule) */
        gp_close_rule_t rule; /* ... which one */
        int idle, parts;      /* partitions idle at the close, of how many */
        int64_t drained;      /* the old colour's group drained (the gate closed) */
        int64_t clear;        /* CLEAR_TO_TEARDOWN written to the map */
} gp_hop_t;

/* No hop: every instant GP_TS_NONE, no rule. */
void gp_hoptime_init(gp_hop_t *h);
/* A new hop seen at now: the record starts again. */
void gp_hoptime_start(gp_hop_t *h, int64_t now);
/* *at = now unless already set, and only within a hop (h->seen set).
 * True when it was set now. */
bool gp_hoptime_mark(const gp_hop_t *h, int64_t *at, int64_t now);
/* The close, once: rule, idle of parts partitions idle, at now. */
bool gp_hoptime_closed(gp_hop_t *h, gp_close_rule_t rule, int idle, int parts, int64_t now);

/* The four phases in ms, -1 where an end is missing:
 * [0] TRANSITIONING -> T written, [1] T -> closed, [2] closed -> drained,
 * [3] drained -> clear written. An instant recorded (on another thread)
 * before the one before it ends its phase at 0, and the next phase starts
 * from the later of the two: the known phases sum to clear - seen. */
void gp_hoptime_phases(const gp_hop_t *h, int64_t out[4]);

/* The value of gate-proxy.hop ("" when there is no hop); a value that
 * does not fit is cut (never with len >= GP_HOP_VALUE_MAX). */
void gp_hoptime_format(const gp_hop_t *h, char *buf, size_t len);
/* Parses n bytes of a value gp_hoptime_format wrote ("" is no hop).
 * 0, or -1 with the reason in err and *out untouched. */
int gp_hoptime_parse(gp_hop_t *out, const char *s, size_t n, char *err, size_t errlen);
/* For people: "T written 0.4 s after TRANSITIONING; old side closed 6.2 s
 * later (watermark >= T + lateness); drained 4.1 s later; clear written
 * 0.1 s later", and what is still awaited. */
void gp_hoptime_describe(const gp_hop_t *h, char *buf, size_t len);

#endif
