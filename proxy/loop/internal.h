/* proxy/loop/internal.h: the parts of one running pipeline, shared by the
 * files that make up proxy/loop/proxy.h's gp_proxy_t (docs/DESIGN.md, The data
 * path). Not an API: only proxy/ includes it.
 *
 *   loop.c      the loop: windows, the boundary between them, periodic tasks
 *   setup.c     the clients and threads of gp_proxy_new, and their end
 *   topics.c    source, colour and dead-letter topics; partition discovery
 *   restore.c   assignment, the checkpoint read at start and written per commit
 *   group.c     gate.membership=group: subscription, the rebalance callback
 *   agreer.c    group: the agreement on T, on its own thread
 *   members.c   group: who is in the group, and the refusals, on its own thread
 *   delivery.c  exactly-once and at-least-once: begin, commit, abort
 *   record.c    one record: event time, route, produce; the dead-letter topic
 *   status.c    status and publication, on their own thread
 *   http.c      /metrics and the probes, on libmicrohttpd's thread
 *   drain.c     the drain check, on its own thread */
#ifndef GP_PROXY_LOOP_INTERNAL_H
#define GP_PROXY_LOOP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <librdkafka/rdkafka.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "gate/gate.h"
#include "gate/hoptime.h"
#include "proxy/control/ctl.h"
#include "proxy/loop/agreer.h"
#include "proxy/loop/drainer.h"
#include "proxy/loop/members.h"
#include "proxy/loop/proxy.h"
#include "proxy/schema/registry.h"
#include "proxy/control/status.h"

/* What one source partition has: the gate's state, the next offset to
 * read, and one past the last record this process wrote to the same
 * partition of each colour topic (delivery reports; -1: none; kept only
 * with a drain group, gate.drain.group.*). */
typedef struct gp_pstate {
        gp_part_t st;
        int64_t pos;
        int64_t wrote[2];
} gp_pstate_t;

/* Working and committed: done = work on commit, work = done on rewind.
 * hold: the partition waits for the registry's answer on schema hold_id
 * (paused, its position back at the record that needs it); outside work
 * and done, since a rewind does not answer it. */
typedef struct gp_pslot {
        gp_pstate_t work, done;
        bool hold;
        uint32_t hold_id;
        /* group: held by the agreement (gate/agree.h): paused at the first
         * record at or above the partition's promise until T is known. */
        bool ahold;
        bool ahold_unpromised; /* ... held before it had a promise */
        /* This process reads the partition: every one with assign; with
         * group, those the group gave it. Routing, the watermark, the
         * checkpoint list, the counts, lags and the drain check see only
         * owned partitions. */
        bool owned;
        /* group: owned, but a colour topic lacks the partition: paused,
         * not read, until discovery finds both colour topics grown. */
        bool colourless;
} gp_pslot_t;

typedef struct gp_tslot {
        char *name;
        char out_name[2][256];
        rd_kafka_topic_t *out[2]; /* producer handles: blue, green */
        rd_kafka_topic_t *in;     /* the consumer's handle (pointer identity) */
        int n;                    /* partitions assigned */
        int out_n[2];             /* partitions of the colour topics */
        int placed;               /* partitions whose colour partitions exist (0..placed-1) */
        gp_pslot_t *parts;
        char held[512];      /* why new partitions are held, "" if none */
        int64_t held_logged; /* mono ms of the last log of held */
} gp_tslot_t;

/* The outcome of a transactional step. */
typedef enum { GP_TX_OK = 0, GP_TX_ABORT, GP_TX_FATAL } gp_txres_t;

/* One delivery mode (delivery.c). begin opens a window, commit makes what
 * it produced and the offsets in l durable together (or in that order),
 * abort drops what it produced. */
typedef struct gp_delivery {
        const char *name;
        gp_txres_t (*begin)(gp_proxy_t *p);
        gp_txres_t (*commit)(gp_proxy_t *p, rd_kafka_topic_partition_list_t *l);
        gp_txres_t (*abort)(gp_proxy_t *p);
} gp_deliver_ops_t;

extern const gp_deliver_ops_t gp_delivery_eos, gp_delivery_alo;

struct gp_proxy {
        const gp_conf_t *conf;
        gp_gate_conf_t gconf;
        gp_extract_t ex;
        gp_avro_t avro_local; /* gate.avro.schema compiled; n_nodes 0: none */
        gp_registry_t *reg;   /* schema.registry.url; NULL: none */
        int n_hold;           /* partitions held for a schema (gp_pslot_t.hold) */
        rd_kafka_t *prod, *cons;
        rd_kafka_queue_t *queue;
        rd_kafka_consumer_group_metadata_t *cgmd;
        bool cgmd_refused; /* a commit was refused for cgmd (said once per snapshot) */
        rd_kafka_topic_t *dlq;
        int dlq_n;
        gp_ctl_t *ctl; /* the loop's: read between transactions, never written */
        const gp_deliver_ops_t *dv;
        bool eos;

        gp_tslot_t *topics;
        int n_topics;
        gp_part_t **pptrs; /* every partition's working state, for the gate */
        size_t n_pptrs;

        gp_gate_t gate, cgate; /* working and committed decisions */
        bool need_commit;
        atomic_int stop; /* set by gp_proxy_stop: a signal handler or another thread */

        char last_refusal[256];
        char ctl_error[512]; /* the control-map error last logged */
        gp_wm_view_t wv;     /* the watermark of the last boundary */

        uint64_t dr_errors;  /* at-least-once: failed deliveries since the last commit */
        gp_drainer_t *drain; /* the drain check; NULL: no drain group */
        gp_drain_target_t *drain_t; /* the old colour's targets, one per partition */
        gp_status_t *status;        /* writes status and decisions to the map */
        gp_wcount_t win;            /* the open window's counts */
        uint64_t win_dlq[GP_DLQ_REASONS];
        gp_lag_t *lags; /* per partition, under lock; n_pptrs of them */
        size_t n_lags;
        char drain_warning[400]; /* gate-proxy.warning: a colour without a drain check */
        bool stopped;            /* a clean stop: the last status says so */
        int64_t txn_begin;       /* gp_mono_ms() when the open window began, -1: none */
        int64_t txn_timeout_ms;  /* the producer's effective transaction.timeout.ms */
        int64_t aborting_since; /* gp_mono_ms() of the first abort since the last commit, -1 */
        int aborts_in_row;      /* aborts since the last commit */

        /* gate.membership=group (group.c) */
        bool group;
        gp_agreer_t *agree;           /* the agreement on T; NULL: not started */
        char member_key[160];         /* group mode: this member's status key
                                         (gate/mstatus.h), "" before the first */
        bool rd_began;                /* a re-delivery began or went on since the last
                                         commit (redeliver.c) */
        bool census;                  /* this boundary asked it whether the transition
                                         the map opens may begin (loop.c) */
        gp_members_t *members;        /* who is in the group, and the refusals */
        uint32_t fp;                  /* this instance's settings fingerprint, in every line */
        uint32_t avsc_fp;             /* gp_fp_bytes of gate.avro.schema's text; 0: none */
        int refused;                  /* a refusal ends the loop: its exit code, 0: none */
        char refusal[GP_MEMBERS_WHY]; /* ... and why (gate-proxy.error) */
        int64_t agree_since;          /* wall ms the open transition was seen, -1: none */
        char map_t_note[200];         /* gate-proxy.error: another T in the map */
        bool gate_known; /* gate holds committed decisions (false while nothing is owned) */
        bool closing;    /* the consumer is closing: a rebalance only unassigns */
        bool rb_ended;   /* a rebalance committed or aborted the open window */
        bool rb_rewound; /* ... and rewound: the batch being read is dropped */
        int rb_exit;     /* a rebalance failed: the exit code, 0: none */
        char close_note[160];     /* group: what the close waits for, as last logged */
        gp_hop_t hop;             /* the hand-over's instants (gate/hoptime.h) */
        int64_t hop_posted_close; /* hop.closed as last posted at once to the status */
        int hop_by[GP_CLOSE__N];  /* group: owned partitions closed by each rule */
        size_t agree_other_said;  /* group: lines under other settings, as last logged */

        pthread_mutex_t lock; /* guards stats, kstats */
        /* The last librdkafka statistics (JSON) of the producer [0] and
         * the consumer [1], with http.listen; freed by rd_kafka_mem_free. */
        char *kstats[2];
        gp_stats_t stats;
};

/* proxy.c: the loop is alive (for /livez), also while it waits on Kafka. */
void gp_proxy_beat(gp_proxy_t *p);

/* topics.c */
gp_errcode_t gp_topics_setup(gp_proxy_t *p, gp_err_t *err);
/* Partitions that appeared: assigned once their colour topics have them
 * too, held (logged, not read) until then. A failed assignment is fatal
 * (gp_assign_all). */
gp_errcode_t gp_topics_discover(gp_proxy_t *p, gp_err_t *err);
gp_tslot_t *gp_topics_slot(gp_proxy_t *p, rd_kafka_topic_t *rkt);

/* group.c (gate.membership=group) */
/* The rebalance callback (opaque: the proxy): commits (or, the assignment
 * lost, aborts) the open window before partitions go; reads the committed
 * offsets and checkpoints of the partitions that come, and takes their
 * decisions, before they are assigned. */
void gp_group_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t *parts, void *opaque);
gp_errcode_t gp_group_subscribe(gp_proxy_t *p, gp_err_t *err);
/* Owned partitions, and whether they are every partition of the pipeline. */
size_t gp_group_owned(const gp_proxy_t *p);
bool gp_group_owns_all(const gp_proxy_t *p);
/* Discovery's part: resumes the colourless partitions now placed. */
void gp_group_colours_grown(gp_proxy_t *p);
/* True when the group metadata commits carry would be fenced: a member id
 * and a generation. A snapshot without them (taken while librdkafka had
 * reset both, or before the first assignment) would make the broker take
 * the offsets of a member whose generation moved on (KIP-447 applies only
 * to a commit that names its member); the commit is refused instead. */
bool gp_group_metadata_fenced(gp_proxy_t *p);
/* True (the exit code in rb_exit, the reason logged) when the consumer
 * has had a fatal error: another member took this one's
 * group.instance.id (static membership), or another that ends its
 * membership for good. */
bool gp_group_consumer_fatal(gp_proxy_t *p);

/* topics.c (also) */
/* group: the group assigned partition n-1 of t: the slot grown to n, and
 * the growth placed (colour topics big enough) or held, as discovery does
 * it (logged once, gate-proxy.error). GP_OK unless out of memory or a
 * failure with assign. */
gp_errcode_t gp_topics_assigned_beyond(gp_proxy_t *p, gp_tslot_t *t, int n, gp_err_t *err);
/* The list of owned partitions, or NULL when out of memory. */
rd_kafka_topic_partition_list_t *gp_topics_owned(gp_proxy_t *p);
/* pptrs again, over the owned partitions (after a change of ownership). */
int gp_topics_rebuild(gp_proxy_t *p);
/* The low or high watermark of a partition, for a start without a
 * checkpoint. */
int64_t gp_topics_start_offset(gp_proxy_t *p, const char *topic, int32_t part, bool latest);

/* hop.c (gate.membership=group): at every boundary, the hand-over's
 * step: promises while a transition waits for T, T once every partition's
 * committed checkpoint gives it, then each partition's close and the
 * pipeline's. */
void gp_hop_step(gp_proxy_t *p, const gp_control_t *ctl, int64_t now);
/* Starts the agreement thread (once); -1 when it cannot (logged). */
int gp_hop_agreer(gp_proxy_t *p);
/* Before the gate steps: when the map opens a transition this instance
 * has not begun, wv->unsettled from the agreement thread's last read of
 * every partition's committed checkpoint (gp_agree_settled); -1 when the
 * thread cannot start. */
int gp_hop_census(gp_proxy_t *p, const gp_control_t *ctl, gp_wm_view_t *wv);

/* redeliver.c (gate/redeliver.h) */
/* At a boundary, after the gate's step (and the hand-over's, with group):
 * every owned partition's marks from the gate was to p->gate; a partition
 * whose re-delivery begins is sought back to where its split began (past
 * what retention removed). Ends re-deliveries that reached their end.
 * -1: a seek failed (fatal to the caller: the consumer would go on past
 * what must be read again). */
int gp_redeliver_boundary(gp_proxy_t *p, const gp_gate_t *was, gp_err_t *err);
/* A partition that comes to this process (at start, or assigned by the
 * group) with its committed line's gate line, under the pipeline's gate
 * g, at committed position *pos: its marks; *pos moves back when a
 * re-delivery begins, and past what retention removed of an open one. */
void gp_redeliver_taken(gp_proxy_t *p, const char *topic, int32_t part, gp_part_t *st,
                        const gp_gate_t *line, const gp_gate_t *g, int64_t *pos);
/* The committed progress over the owned partitions. */
void gp_redeliver_progress(gp_proxy_t *p, gp_redelivery_t *out);

/* restore.c */
/* Back to the committed positions after an abort: with assign,
 * gp_assign_all; with group, a seek of every owned partition. A failure
 * is fatal, as for gp_assign_all. */
gp_errcode_t gp_rewind(gp_proxy_t *p, gp_err_t *err);
/* Seeks the partitions of l to their offsets (what: "back to ...", for
 * the messages). A seek that times out was queued and goes on in
 * librdkafka: it is asked again, up to 5 times; any other error, or a
 * timeout every time, is returned (the callers end the process). */
gp_errcode_t gp_seek(gp_proxy_t *p, rd_kafka_topic_partition_list_t *l, const char *what,
                     gp_err_t *err);
/* Assigns every partition at its committed position (at start, after an
 * abort, after growth). Every failure is fatal to its caller: the consumer
 * is left where it was, so the caller ends the process and a restart goes
 * on from the last commit. */
gp_errcode_t gp_assign_all(gp_proxy_t *p, gp_err_t *err);
gp_errcode_t gp_restore(gp_proxy_t *p, const gp_control_t *ctl, gp_err_t *err);
rd_kafka_topic_partition_list_t *gp_checkpoint_list(gp_proxy_t *p, const gp_gate_t *g);

/* delivery.c: begin a window, commit it (offsets and checkpoints; on
 * success the committed state becomes the working one's), abort it (and
 * rewind consumer and gate to the last commit); the state after a commit
 * or at start; the exit code for a fatal producer error. */
gp_txres_t gp_delivery_begin(gp_proxy_t *p);
gp_txres_t gp_delivery_commit(gp_proxy_t *p);
gp_txres_t gp_delivery_abort(gp_proxy_t *p);
void gp_delivery_committed(gp_proxy_t *p);
int gp_delivery_exit_code(gp_proxy_t *p);

/* setup.c: librdkafka's statistics callback (opaque: the proxy). */
int gp_kafka_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque);

/* record.c */
int gp_record_handle(gp_proxy_t *p, gp_tslot_t *t, rd_kafka_message_t *m, int64_t now,
                     int64_t mono);
/* With a registry: is m framed with a schema id (*id) the cache cannot
 * answer yet? Only asks the cache: no request, no pause. */
bool gp_record_schema_unknown(gp_proxy_t *p, const rd_kafka_message_t *m, int64_t mono,
                              uint32_t *id);
/* Holds m's partition for schema id: pauses it back at m (m and the rest
 * of that partition's batch are not handled, and come again on resume)
 * and asks the registry's thread for id; gp_record_release resumes it. */
void gp_record_hold(gp_proxy_t *p, gp_tslot_t *t, const rd_kafka_message_t *m, uint32_t id);
/* What gp_record_handle returns when the agreement holds the record's
 * partition at it (paused there, nothing produced). */
#define GP_RECORD_HELD 2
/* Resumes the partitions the agreement holds: all of them (T is known,
 * or no transition is open), or only those held before they had a
 * promise and that have one now. */
void gp_record_agree_release(gp_proxy_t *p, bool all);
/* Takes the registry's answers and resumes the partitions they release;
 * keeps held partitions from counting as idle. -1: an answer was
 * registry-unavailable with schema.registry.on-failure=exit. */
int gp_record_release(gp_proxy_t *p, int64_t now, int64_t mono);
/* Pauses the held partitions again (after an assignment). */
void gp_record_hold_again(gp_proxy_t *p);
void gp_record_delivered(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

#endif
