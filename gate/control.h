/* gate/control.h: what the blue/green ConfigMap asks for.
 *
 * Parses the `data` entries of the FLIP-504 ConfigMap (docs/DESIGN.md, The control map)
 * strictly into a gp_control_t. Every error names the key and what was
 * allowed; nothing is guessed. Keys this parser does not know are ignored
 * (the map carries other writers' keys, such as the gate-proxy.* status).
 * Pure: libc only. */
#ifndef GP_GATE_CONTROL_H
#define GP_GATE_CONTROL_H

#include "gate/types.h"

/* ConfigMap keys. */
#define GP_KEY_ACTIVE   "active-deployment-type"
#define GP_KEY_STAGE    "stage"
#define GP_KEY_DELAY    "deployment-deletion-delay-ms"
#define GP_KEY_FIRST    "is-first-deployment"
#define GP_KEY_WM_STAGE "watermark-stage"
#define GP_KEY_TOGGLE   "watermark-toggle-value"
/* Written by `gate-proxy cutover --at T --align-ms A`, read by the proxy. */
#define GP_KEY_REQ_CUTOFF "gate-proxy.request.cutoff"
#define GP_KEY_REQ_ALIGN  "gate-proxy.request.align-ms"
/* Where `gate-proxy handover` records its progress (proxy/ops/handover.c). */
#define GP_KEY_HANDOVER "gate-proxy.handover."
/* Prefix of the proxy's own status keys. */
#define GP_KEY_STATUS_PREFIX "gate-proxy."
/* The proxy's status keys, all under GP_KEY_STATUS_PREFIX. */
#define GP_KEY_PHASE          "gate-proxy.phase"
#define GP_KEY_TRANSITION     "gate-proxy.transition"
#define GP_KEY_CUTOFF         "gate-proxy.cutoff"
#define GP_KEY_WATERMARK      "gate-proxy.watermark"
#define GP_KEY_COUNT_BLUE     "gate-proxy.count.blue"
#define GP_KEY_COUNT_GREEN    "gate-proxy.count.green"
#define GP_KEY_COUNT_DLQ      "gate-proxy.count.dlq"
#define GP_KEY_COUNT_LATE     "gate-proxy.count.late"
#define GP_KEY_ABORTED_ROUTED "gate-proxy.aborted-routed"
#define GP_KEY_ERROR          "gate-proxy.error"
#define GP_KEY_HEARTBEAT      "gate-proxy.heartbeat"
#define GP_KEY_WARNING        "gate-proxy.warning"
/* During a transition with gate.drain.group.<old colour>: how many records
 * the old colour's group has yet to commit ("" when unknown or not
 * waiting). */
#define GP_KEY_DRAIN_LAG "gate-proxy.drain-lag"
/* When the proxy that wrote the map last stopped cleanly (SIGTERM, SIGINT,
 * its open transaction committed): the time, "" while one runs. */
#define GP_KEY_STOPPED "gate-proxy.stopped"
/* During a transition with gate.drain.group.<old colour>: what the last
 * check of that group found ("waiting for group G to consume S.blue: 2 of
 * 3 partitions drained, lag 40"), "" otherwise. */
#define GP_KEY_DRAIN "gate-proxy.drain"
/* gate.membership=group: the members of the pipeline's consumer group as
 * the writing instance last saw them ("3: client/host=4, ...": client id,
 * host, partitions assigned), "" when unknown or not in a group. */
#define GP_KEY_MEMBERS "gate-proxy.members"
/* The last hand-over's instants as this proxy recorded them
 * (gate/hoptime.h): "hop1 seen=MS t=+ close=+ rule=R:I/N drain=+ clear=+",
 * "" before the first transition. */
#define GP_KEY_HOP "gate-proxy.hop"
/* After an abort past T with gate.abort.redeliver: the re-delivery of the
 * abandoned colour's records to the survivor, as the writing instance last
 * committed it: "to=blue sent=N left=M lost=L open=K" (records sent, source
 * offsets left to read again, offsets retention removed first, partitions
 * still reading), "" when there is none. */
#define GP_KEY_REDELIVERY "gate-proxy.redelivery"
/* The identity of the map's transition (docs/DESIGN.md, A transition's
 * identity): "N" while the transition it names is open (stage
 * INITIALIZING, TRANSITIONING or CLEAR_TO_TEARDOWN, not a first
 * deployment), "N ended" after it. N is written once per transition, by
 * `gate-proxy cutover` with TRANSITIONING or by a proxy that sees an open
 * stage without one, always above every N before it; every checkpoint
 * line carries the N of its transition (tx=), so a line of an earlier
 * transition between the same colours is never taken for the current
 * one, and a map that names an earlier N than a checkpoint is a copy
 * behind it, never followed. */
#define GP_KEY_TID "gate-proxy.transition-id"
/* The headers of a dead-lettered record: the reason, and where it was read
 * (topic/partition/offset). */
#define GP_HDR_ERROR  "gate-proxy.error"
#define GP_HDR_SOURCE "gate-proxy.source"

typedef enum {
        GP_STAGE_INITIALIZING = 0,
        GP_STAGE_TRANSITIONING,
        GP_STAGE_CLEAR_TO_TEARDOWN,
        GP_STAGE_RUNNING,
        GP_STAGE_FAILING,
} gp_stage_t;

typedef enum {
        GP_WMS_NONE = 0, /* key absent */
        GP_WMS_WAITING,  /* WAITING_FOR_WATERMARK */
        GP_WMS_SET,      /* WATERMARK_SET */
} gp_wm_stage_t;

typedef struct gp_control {
        gp_colour_t active; /* the colour being rolled to */
        gp_stage_t stage;
        int64_t delay_ms; /* D, 0 when absent */
        bool is_first;
        gp_wm_stage_t wm_stage;
        int64_t toggle;       /* T as published, GP_TS_NONE when absent */
        int64_t req_cutoff;   /* explicit T asked for, GP_TS_NONE when absent */
        int64_t req_align_ms; /* alignment asked for, 0 when absent */
        int64_t tid;          /* gate-proxy.transition-id's N, 0 when absent */
        bool tid_ended;       /* ... written "N ended" */
} gp_control_t;

const char *gp_stage_name(gp_stage_t s);
const char *gp_wm_stage_name(gp_wm_stage_t s);

/* Parses n entries. Required: active-deployment-type, stage,
 * is-first-deployment. watermark-toggle-value is required when
 * watermark-stage is WATERMARK_SET. Returns 0, or -1 with
 * "<key>: <reason>" in err. */
int gp_control_parse(gp_control_t *out, const gp_kv_t *kv, size_t n, char *err, size_t errlen);

/* True when the map asks for a transition: not a first deployment, stage
 * INITIALIZING, TRANSITIONING or CLEAR_TO_TEARDOWN. */
bool gp_control_open(const gp_control_t *c);
/* The id of the open transition the map names: its N while open and not
 * ended, else 0 (none yet: a proxy writes one). */
int64_t gp_control_tid(const gp_control_t *c);
/* True when b still describes the transition a described: same active
 * colour, same first-deployment flag, the same stage and transition id. A write planned
 * from a is dropped unless this holds for the map read back: the map has
 * moved on (or back: the operator rewrote it for a new deployment). */
bool gp_control_same_transition(const gp_control_t *a, const gp_control_t *b);

#endif
