/* gate/gate.h: the gate: phases, the routing rule, the watermark, and the
 * decisions (choosing the cutoff T, closing the old side).
 *
 * One gp_gate_t per pipeline holds the decisions made (checkpointed with
 * the offsets, gate/checkpoint.h). One gp_part_t per source partition holds
 * what that partition has seen. Routing a record reads only the gate, the
 * record's event time and the policies: replaying the same records from the
 * same checkpoint gives the same destinations (docs/DESIGN.md, invariant 4).
 * Decisions are taken only between transactions, by gp_gate_step().
 *
 * Pure: libc only. Time is an argument ("now", wall-clock ms). */
#ifndef GP_GATE_GATE_H
#define GP_GATE_GATE_H

#include "gate/control.h"
#include "gate/types.h"

typedef enum {
        GP_PHASE_STEADY = 0, /* every record to the owner (new_c) */
        GP_PHASE_WAITING,    /* transition old_c -> new_c asked, no T yet: all to old_c */
        GP_PHASE_SPLIT,      /* ts < T to old_c, ts >= T to new_c */
        GP_PHASE_CLOSED,     /* old side closed: all to new_c, ts < T counted late */
        GP_PHASE_ABORTED,    /* transition abandoned: all to the survivor (new_c) */
        GP_PHASE__N
} gp_phase_t;

const char *gp_phase_name(gp_phase_t p);
int gp_phase_parse(const char *s, gp_phase_t *out);
/* The explicit table of allowed phase changes (a phase may always stay). */
bool gp_phase_allowed(gp_phase_t from, gp_phase_t to);

/* The policies and bounds the gate needs (from the proxy configuration). */
typedef struct gp_gate_conf {
        int64_t out_of_orderness_ms; /* watermark = highest ts seen - this */
        int64_t idle_ms;             /* a partition with no record this long is idle */
        int64_t align_ms;            /* T is rounded up to a multiple of this (>= 1) */
        int64_t lateness_ms;         /* close when W >= T + lateness */
        bool late_to_dlq;            /* after the close, ts < T goes to the DLQ */
        bool bad_route_old;          /* unreadable event time counts as older than T */
        int64_t max_future_ms;       /* an event time past now + this is refused
                                        (gp_gate_future); 0: no bound */
} gp_gate_conf_t;

/* Pipeline-wide decisions. Checkpointed. */
typedef struct gp_gate {
        gp_phase_t phase;
        gp_colour_t old_c;   /* owned traffic when the transition started */
        gp_colour_t new_c;   /* rolled to; in STEADY and ABORTED the owner */
        int64_t cutoff;      /* T, GP_TS_NONE until chosen */
        int64_t cutoff_wall; /* wall-clock ms when T was chosen */
        int64_t seq;         /* checkpoint sequence, +1 per commit */
        int64_t tid;         /* the transition's id (GP_KEY_TID); 0: none known */
} gp_gate_t;

/* What one source partition has seen. All but last_wall is checkpointed. */
typedef struct gp_part {
        int64_t hi;          /* highest readable event time seen, GP_TS_NONE */
        int64_t last_wall;   /* wall-clock ms of the last record (or assignment) */
        uint64_t n[3];       /* records per destination (blue, green, dlq) */
        uint64_t late;       /* records with ts < T after the close */
        uint64_t since_t[2]; /* records per colour since the current T was chosen */
        int64_t promise;     /* the partition's promise for the open transition
                                (gate/agree.h), GP_TS_NONE: none made */
        bool closed;         /* the partition closed the old side of the
                                transition by its own watermark */
        uint32_t fp;         /* the settings fingerprint of the line it was read
                                from (gate/fingerprint.h); 0: none (a gp1 or gp2
                                line, or not read from one) */
        /* Where the last transition's routing changed on this partition,
         * as source offsets (gate/redeliver.h); -1: not there. */
        int64_t sp;     /* the first record routed by the split (T known) */
        int64_t cp;     /* the first routed with the old side closed */
        int64_t ap;     /* the first routed after an abort: the re-delivery
                            re-reads [sp, ap) */
        bool ro;        /* a re-delivery is open: records below ap are read again */
        uint64_t rd[2]; /* records re-delivered; offsets lost to retention */
} gp_part_t;

/* The watermark over all partitions, computed at a transaction boundary. */
typedef struct gp_wm_view {
        int64_t wm;          /* W: min over non-idle partitions; GP_TS_NONE if unknown */
        int64_t hi_max;      /* highest event time seen on any partition */
        bool all_idle;       /* every partition idle */
        int64_t last_record; /* wall ms of the latest record on any partition */
        bool drained;        /* the old job has consumed all it was sent (or no check) */
        int idle;            /* partitions idle (no record for the idle timeout) */
        size_t unsettled;    /* group mode: partitions of the pipeline whose committed
                                checkpoint holds a new transition back
                                (gp_agree_settled); GP_UNSETTLED_UNKNOWN before the
                                checkpoints were read; 0 otherwise */
} gp_wm_view_t;
#define GP_UNSETTLED_UNKNOWN SIZE_MAX

/* A gate in STEADY phase owned by `owner`. */
void gp_gate_init(gp_gate_t *g, gp_colour_t owner);
/* A fresh partition assigned at wall time now. */
void gp_part_init(gp_part_t *p, int64_t now);

/* The colour that owns traffic when no record-level split applies. */
gp_colour_t gp_gate_owner(const gp_gate_t *g);

/* The gate state a proxy with no checkpoint starts from, derived from the
 * map alone: first deployment -> STEADY(active); a transition without T ->
 * WAITING; with T -> SPLIT; CLEAR_TO_TEARDOWN or RUNNING with T -> CLOSED. */
void gp_gate_from_control(gp_gate_t *g, const gp_control_t *c, int64_t now);

/* Routes one record with event time ts (GP_TS_NONE: unreadable) and
 * updates the partition's counters. Sets *late when the record counts as
 * late (after the close, ts < T; for a partition with p->closed, after its
 * own close while g is SPLIT). The hot path: no allocation. */
gp_dest_t gp_gate_route(const gp_gate_t *g, const gp_gate_conf_t *c, gp_part_t *p, int64_t ts,
                        int64_t now, bool *late);

/* True when event time ts lies more than c->max_future_ms past the wall
 * clock now (c->max_future_ms 0: never): such a record is refused
 * (gp_gate_reject, reason future-time), so that it raises no watermark,
 * highest event time or promise. A date far ahead (2100, INT64_MAX) would
 * otherwise hold every later T above all real records for good. */
bool gp_gate_future(const gp_gate_conf_t *c, int64_t ts, int64_t now);

/* A record refused before it is routed (larger than the configured limit,
 * or dated past the future bound): to the dead-letter topic in every
 * phase, counted there; its event time raises nothing. */
gp_dest_t gp_gate_reject(gp_part_t *p, int64_t now);

/* The destination alone, with no side effect (for checks and replays). */
gp_dest_t gp_gate_dest(const gp_gate_t *g, const gp_gate_conf_t *c, int64_t ts, bool *late);

/* The watermark view of n partitions at wall time now. drained is set true. */
void gp_gate_watermark(const gp_part_t *const *parts, size_t n, const gp_gate_conf_t *c,
                       int64_t now, gp_wm_view_t *out);

/* True when g is SPLIT and the watermark condition for closing the old
 * side holds (W >= T + lateness, or every partition idle long enough since
 * T was chosen), whatever wv->drained says: the proxy runs its drain check
 * only then. */
bool gp_gate_close_due(const gp_gate_t *g, const gp_wm_view_t *wv, const gp_gate_conf_t *conf,
                       int64_t now);

/* Which rule lets the old side close (gate/hoptime.h says it):
 * - WATERMARK: W >= T + lateness with every partition active;
 * - IDLE: W >= T + lateness over the active partitions while at least one
 *   is idle (no record for gate.watermark.idle.ms: its watermark is not
 *   waited for), or every partition idle that long since T;
 * - FORCED: the map tore the old side down first (GP_EV_FORCED). */
typedef enum {
        GP_CLOSE_NONE = 0,
        GP_CLOSE_WATERMARK,
        GP_CLOSE_IDLE,
        GP_CLOSE_FORCED,
        GP_CLOSE__N
} gp_close_rule_t;

const char *gp_close_rule_name(gp_close_rule_t r); /* "-", "watermark", "idle", "forced" */
int gp_close_rule_parse(const char *s, size_t n, gp_close_rule_t *out);

/* The rule by which gp_gate_close_due holds now, GP_CLOSE_NONE when it
 * does not. */
gp_close_rule_t gp_gate_close_rule(const gp_gate_t *g, const gp_wm_view_t *wv,
                                   const gp_gate_conf_t *conf, int64_t now);

/* What gp_gate_step did. */
enum {
        GP_EV_TRANSITION = 1 << 0, /* a transition started (-> WAITING) */
        GP_EV_CUTOFF = 1 << 1,     /* T chosen (-> SPLIT) */
        GP_EV_CLOSED = 1 << 2,     /* old side closed (-> CLOSED) */
        GP_EV_ABORTED = 1 << 3,    /* transition abandoned (-> ABORTED) */
        GP_EV_OWNER = 1 << 4,      /* first deployment: owner set (STEADY) */
        GP_EV_REFUSED = 1 << 5,    /* a request was refused; reason in err */
        GP_EV_FORCED = 1 << 6,     /* closed because the map already tore OLD down */
};

typedef struct gp_step {
        int events;    /* GP_EV_* */
        char err[256]; /* the reason for GP_EV_REFUSED */
} gp_step_t;

/* Applies the requested control c to g and takes the decisions whose
 * conditions hold, at wall time now. A new transition waits (GP_EV_REFUSED,
 * the reason in err) while a partition re-delivers (gate/redeliver.h). Returns non-zero when g changed (the
 * change must be checkpointed before it is published). A request that
 * would break an invariant changes nothing and sets GP_EV_REFUSED. */
int gp_gate_step(gp_gate_t *g, gp_part_t *const *parts, size_t n, const gp_control_t *c,
                 const gp_wm_view_t *wv, const gp_gate_conf_t *conf, int64_t now,
                 gp_step_t *out);

/* The protocol keys the proxy should publish for its committed gate g,
 * given the map c it last read. */
typedef struct gp_publish {
        gp_wm_stage_t wm_stage; /* GP_WMS_NONE: leave as is */
        int64_t toggle;         /* with GP_WMS_SET */
        bool clear_to_teardown; /* write stage=CLEAR_TO_TEARDOWN */
} gp_publish_t;

/* What gate-proxy.transition-id (GP_KEY_TID) should say and the map does
 * not: an open map without a current id gets one above now (wall ms),
 * the map's last id and g's; a map no longer open whose id is still open
 * gets "N ended" once g has left the transition (g NULL: no gate yet; a
 * gate mid-way holds a map that went back to RUNNING for invalid, not for
 * an end). True with the value in buf. */
bool gp_gate_tid_due(const gp_gate_t *g, const gp_control_t *c, int64_t now, char *buf,
                     size_t len);

/* Fills out and returns true when the map lacks something g has decided. */
bool gp_gate_publication(const gp_gate_t *g, const gp_control_t *c, gp_publish_t *out);

/* Takes into g the decisions of a committed checkpoint line's gate
 * (another partition's, perhaps written by another instance), so that
 * every partition is routed by one set of decisions (docs/DESIGN.md,
 * Scale-out):
 * - two transition ids (tid), both known and different: the line of the
 *   earlier transition is stale and gives nothing; the later one's
 *   decisions are taken only by a gate no transition is open in (STEADY
 *   or CLOSED): an open one ends by the map (an abort), and an aborted
 *   one re-delivers first;
 * - the same transition (old and new colour alike, both WAITING, SPLIT or
 *   CLOSED): the further phase wins (a T chosen, the old side closed);
 *   two different T are a conflict: -1, g unchanged, the reason in err;
 *   a gate without an id takes the line's;
 * - otherwise (decisions the map drove: a new transition, an abort, a
 *   first deployment) the higher seq wins, unless the line has no id and
 *   the gate has one (a line from before transition ids: older).
 * g->seq becomes the higher of the two (a Lamport clock: a line written
 * after its writer took another line's decisions has a higher seq).
 * Returns 1 when the decisions of g changed, 0 when not. */
int gp_gate_adopt(gp_gate_t *g, const gp_gate_t *line, char *err, size_t errlen);

/* Rounds t up to a multiple of align (>= 1); GP_TS_NONE on overflow. */
int64_t gp_align_up(int64_t t, int64_t align);

#endif
