/* proxy/proxy.h: one running gate-proxy pipeline: the consume, route,
 * produce, commit loop (docs/DESIGN.md, The data path).
 *
 * Thread use: gp_proxy_run() on one thread; gp_proxy_stop() from any
 * thread or a signal handler; gp_proxy_stats() from any thread. */
#ifndef GP_PROXY_PROXY_H
#define GP_PROXY_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "gate/gate.h"
#include "proxy/conf.h"

#define GP_VERSION "0.1.0"

/* Exit codes of `gate-proxy run` (also documented in the README). */
enum {
        GP_EXIT_OK = 0,      /* stopped by SIGTERM/SIGINT after finishing the transaction */
        GP_EXIT_FATAL = 1,   /* a fatal Kafka error, or the open transaction outlived
                                transaction.timeout.ms; restart the process */
        GP_EXIT_USAGE = 2,   /* bad command line or configuration */
        GP_EXIT_FENCED = 3,  /* another instance with the same transactional.id took over */
        GP_EXIT_TOPICS = 4,  /* a source, colour or dead-letter topic is missing or too small */
        GP_EXIT_STATE = 5,   /* the committed checkpoint cannot be read */
};

typedef struct gp_proxy gp_proxy_t;

typedef struct gp_stats {
        uint64_t in;       /* records read and committed */
        uint64_t n[3];     /* per destination: blue, green, dlq (committed) */
        uint64_t late;
        uint64_t aborted_routed; /* routed to the aborted colour since T */
        uint64_t txns, aborts;
        int64_t wm;        /* watermark W, GP_TS_NONE if unknown */
        int64_t cutoff;    /* T, GP_TS_NONE if unset */
        gp_phase_t phase;
        gp_colour_t old_c, new_c;
        int running;       /* routing (the control map was valid) */
        int ctl_valid;     /* the control map read last was valid */
        int held;          /* partitions held: their colour partitions are missing */
        int partitions;    /* partitions assigned */
        int64_t beat_mono; /* gp_mono_ms() of the loop's last pass (also while starting) */
        int64_t last_commit_ms; /* wall-clock ms of the last commit, 0: none yet */
} gp_stats_t;

/* Takes a finalized conf (borrowed for the proxy's life). NULL with err. */
gp_proxy_t *gp_proxy_new(const gp_conf_t *conf, char *err, size_t errlen);
/* Runs until stopped or a fatal error; returns a GP_EXIT_* code. */
int gp_proxy_run(gp_proxy_t *p);
/* Asks the loop to finish its open transaction and return. Signal-safe. */
void gp_proxy_stop(gp_proxy_t *p);
void gp_proxy_stats(gp_proxy_t *p, gp_stats_t *out);
/* Has gp_proxy_stop been called? Any thread. */
bool gp_proxy_stopping(gp_proxy_t *p);
void gp_proxy_destroy(gp_proxy_t *p);

#endif
