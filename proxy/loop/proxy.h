/* proxy/loop/proxy.h: one running gate-proxy pipeline: the consume, route,
 * produce, commit loop (docs/DESIGN.md, The data path).
 *
 * Thread use: gp_proxy_run() on one thread; gp_proxy_stop() from any
 * thread or a signal handler; gp_proxy_stats() from any thread. */
#ifndef GP_PROXY_LOOP_PROXY_H
#define GP_PROXY_LOOP_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "gate/extract.h"
#include "gate/gate.h"
#include "proxy/conf/conf.h"
#include "proxy/control/status.h"

/* Exit codes of `gate-proxy run` (also documented in the README). */
enum {
        GP_EXIT_OK = 0,     /* stopped by SIGTERM/SIGINT after finishing the transaction */
        GP_EXIT_FATAL = 1,  /* a fatal Kafka error, or the open transaction outlived
                                transaction.timeout.ms; restart the process */
        GP_EXIT_USAGE = 2,  /* bad command line or configuration */
        GP_EXIT_FENCED = 3, /* another instance with the same transactional.id took over */
        GP_EXIT_TOPICS = 4, /* a source, colour or dead-letter topic is missing or too small */
        GP_EXIT_STATE = 5,  /* the committed checkpoint cannot be read */
        GP_EXIT_GROUP = 6,  /* gate.membership=group: the group has a member of
                               another pipeline, or an instance of this one under
                               other gate.* settings (docs/DESIGN.md, Scale-out) */
};

typedef struct gp_proxy gp_proxy_t;

/* The longest any one Kafka call of the loop waits. */
#define GP_KAFKA_WAIT_MS 30000

/* Upper bounds of the histogram buckets (proxy/obs/endpoints.c gives them as le). */
#define GP_COMMIT_BUCKETS 11 /* seconds: 0.005 .. 10 */
#define GP_SIZE_BUCKETS   7  /* records per transaction: 1 .. 1e6 */
extern const double gp_commit_le[GP_COMMIT_BUCKETS];
extern const double gp_size_le[GP_SIZE_BUCKETS];
/* Why records go to the dead-letter topic: the stable codes of the
 * gate-proxy.error header (docs/DESIGN.md, Reading the event time), "late", "other". */
#define GP_DLQ_REASONS (GP_BAD__COUNT + 1)
/* The index in gp_dlq_reasons of a gp_bad_code_t (gate/extract.h), of a
 * late record, of anything else. */
#define GP_DLQ_OF(code) ((int)(code)-1)
#define GP_DLQ_LATE     (GP_BAD__COUNT - 1)
#define GP_DLQ_OTHER    GP_BAD__COUNT
extern const char *const gp_dlq_reasons[GP_DLQ_REASONS];
/* Control input the proxy did not act on, by reason: the map invalid,
 * missing, out of reach, access denied, another read failure; a request
 * refused by the gate (gate-proxy.error says which). Counted once per
 * change of reason, not per read. */
#define GP_REFUSALS 6
enum {
        GP_REF_INVALID,
        GP_REF_MISSING,
        GP_REF_UNREACHABLE,
        GP_REF_DENIED,
        GP_REF_ERROR,
        GP_REF_REQUEST
};
extern const char *const gp_refusal_reasons[GP_REFUSALS];

/* A re-delivery's progress (gate/redeliver.h), committed: partitions
 * marked by an abort past T, of them still reading; records sent; source
 * offsets left to read again; offsets lost to retention. */
typedef struct gp_redelivery {
        uint64_t marked, open, sent, left, lost;
} gp_redelivery_t;

typedef struct gp_stats {
        uint64_t in;   /* records read and committed */
        uint64_t n[3]; /* per destination: blue, green, dlq (committed) */
        uint64_t late;
        /* n[] and late as the checkpoint had them at start: the pipeline's
         * totals go on from there (the map's gate-proxy.count.*), while
         * /metrics counts this process's, as Prometheus expects. */
        uint64_t n_base[3], late_base;
        uint64_t aborted_routed; /* routed to the aborted colour since T */
        gp_redelivery_t rd;      /* the re-delivery to the survivor after an abort */
        uint64_t txns, aborts;
        int64_t wm;     /* watermark W, GP_TS_NONE if unknown */
        int64_t cutoff; /* T, GP_TS_NONE if unset */
        gp_phase_t phase;
        gp_colour_t old_c, new_c;
        int running;       /* routing (the control map was valid) */
        int ctl_valid;     /* the control map read last was valid */
        int held;          /* partitions held: their colour partitions are missing */
        int partitions;    /* partitions assigned */
        int64_t beat_mono; /* gp_mono_ms() of the loop's last pass (also while starting) */
        int64_t last_commit_ms;       /* wall-clock ms of the last commit, 0: none yet */
        uint64_t bytes_in, bytes_out; /* committed: key, value and headers */
        /* Commits by duration and by records, per bucket (the last: above
         * every bound), with their sums. */
        uint64_t commit_n[GP_COMMIT_BUCKETS + 1], size_n[GP_SIZE_BUCKETS + 1];
        double commit_sum_s;
        uint64_t size_sum;
        uint64_t dlq_by[GP_DLQ_REASONS]; /* committed, per gp_dlq_reasons */
        uint64_t refusals[GP_REFUSALS];  /* per gp_refusal_reasons */
        /* gate.membership=group */
        uint64_t rebalances[3]; /* callbacks: partitions assigned, revoked, lost */
        /* The agreement's last read of every partition's committed
         * checkpoint in the open transition: partitions read, of them
         * with a promise (or T), closed under T; all 0 outside one. */
        int agree_parts, agree_promised, agree_closed;
        /* ... of them whose line carries other settings (a fingerprint not
         * this instance's): the agreement takes nothing from them. */
        int agree_other;
        int64_t promise;  /* highest promise of an owned partition, GP_TS_NONE: none */
        int map_conflict; /* the map stores another T than the one routed by */
} gp_stats_t;

/* What /metrics counts of each record while its window is open, folded
 * into gp_stats_t when the window commits (dropped when it aborts): three
 * additions on the hot path, no atomics (bench/cost.sh, mode metrics). */
typedef struct gp_wcount {
        uint64_t records, in, out; /* records; key, value and header bytes */
} gp_wcount_t;

static inline void gp_wcount_record(gp_wcount_t *w, uint64_t in, uint64_t out) {
        w->records++;
        w->in += in;
        w->out += out;
}

/* One source partition's lag: its end (the last stable offset as the
 * consumer last saw it) minus the committed position. */
typedef struct gp_lag {
        const char *topic;
        int partition;
        int64_t lag;
} gp_lag_t;

/* gate.membership=group: one member of the pipeline's consumer group as
 * the last look at the group saw it (proxy/loop/members.h). */
#define GP_MEMBER_LABEL_MAX 200
typedef struct gp_member_info {
        char label[GP_MEMBER_LABEL_MAX]; /* client id/host, printable ASCII */
        int partitions; /* assigned to it, all topics; -1: not known (rebalancing) */
        bool self;      /* this instance */
        bool foreign;   /* subscribed to other topics than this pipeline's */
} gp_member_info_t;
/* The members of the group as last seen: how many (-1: no look yet, or
 * gate.membership=assign); up to max of them (the first 64 at most)
 * copied to out, *shown of them. */
int gp_proxy_members(gp_proxy_t *p, gp_member_info_t *out, size_t max, size_t *shown);
/* The settings fingerprint this instance writes into its checkpoints
 * (gate/fingerprint.h). */
uint32_t gp_proxy_fingerprint(gp_proxy_t *p);

/* Up to max lags, as of the last status interval; how many there are. */
size_t gp_proxy_lags(gp_proxy_t *p, gp_lag_t *out, size_t max);
/* Writes to the control map so far, by outcome: written, dropped (the
 * map moved to another transition), not written (the map missing or
 * invalid), failed; and the conflicts met on the way (a moved
 * resourceVersion: read again, decided again). */
void gp_proxy_map_writes(gp_proxy_t *p, uint64_t out[GP_MAP_WRITES]);

/* A copy of the last librdkafka statistics (JSON) of the producer
 * (client 0) or the consumer (1), with http.listen; NULL: none yet.
 * The caller frees it. */
char *gp_proxy_kafka_stats(gp_proxy_t *p, int client);
/* What colour c's drain group has yet to commit (gp_drainer_lag); -1:
 * no drain check for c, or not known yet. */
int64_t gp_proxy_drain_lag(gp_proxy_t *p, gp_colour_t c);

/* Takes a finalized conf (borrowed for the proxy's life). NULL with err. */
gp_proxy_t *gp_proxy_new(const gp_conf_t *conf, gp_err_t *err);
/* Runs until stopped or a fatal error; returns a GP_EXIT_* code. */
int gp_proxy_run(gp_proxy_t *p);
/* Asks the loop to finish its open transaction and return. Signal-safe. */
void gp_proxy_stop(gp_proxy_t *p);
void gp_proxy_stats(gp_proxy_t *p, gp_stats_t *out);
/* Has gp_proxy_stop been called? Any thread. */
bool gp_proxy_stopping(gp_proxy_t *p);
void gp_proxy_destroy(gp_proxy_t *p);

#endif
