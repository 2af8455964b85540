/* proxy/ops/handover_int.h: what the files of `gate-proxy handover` share
 * (proxy/ops/handover.c, the steps; proxy/ops/snapshots.c, the operator's
 * FlinkStateSnapshots and savepoint records). Not for other rooms. */
#ifndef GP_PROXY_OPS_HANDOVER_INT_H
#define GP_PROXY_OPS_HANDOVER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gate/hoptime.h"
#include "k8s/client.h"
#include "proxy/control/ctl.h"
#include "proxy/ops/progress.h"

/* The steps in their order (the table `steps` in proxy/ops/handover.c); S_DONE after the
 * last, S_NONE for none. */
typedef enum { S_CUTOVER, S_CLEAR, S_SUSPEND, S_START, S_FINISH, S_DONE, S_NONE } gp_ho_step_t;

typedef struct {
        gp_ctl_t *ctl;
        gp_k8s_t *k;
        char ns[64];
        const char *from, *to;
        int64_t timeout_ms;
        gp_colour_t old_colour, new_colour;
        int64_t t;               /* the cutoff, GP_TS_NONE until known */
        char prev[1024];         /* the old job's upgradeSavepointPath before */
        char sp[1024];           /* the savepoint the new job starts from */
        const char *explicit_sp; /* --savepoint, or NULL */
        int64_t suspended_at, running_after;
        bool waited_snapshot;    /* the suspend waited for a snapshot to complete */
        gp_progress_t pr;        /* the progress lines */
        int64_t step_ms[S_DONE]; /* each step's time in this run, -1: not taken in it */
        gp_hop_t hop;            /* the proxy's gate-proxy.hop at the clear */
        bool no_checkpoint;      /* --no-checkpoint-request */
        int asked;               /* a checkpoint of OLD: 0 not yet, 1 asked, -1 could not */
} gp_ho_t;

/* What a wait compares with: the generation its patch made, and what the
 * resource showed before this run (a failure then is the operator's to
 * retry; only a new one stops the command). */
typedef struct {
        int64_t gen;
        char err0[1024]; /* status.error */
        bool failed0;    /* lifecycleState FAILED */
} gp_ho_seen_t;

/* Prints "gate-proxy handover: " and the message on stderr, after any
 * open progress line; returns 1 (a step that stops). */
__attribute__((format(printf, 1, 2))) int gp_ho_fail(const char *fmt, ...);

/* The map's value of key, "" when absent. */
const char *gp_ho_cm_get(const gp_cm_t *cm, const char *key);

/* A path or URI as Flink writes it back ("scheme:///p" is "scheme:/p", no
 * trailing '/'), in place: for comparing paths with directories. */
void gp_ho_uri_norm(char *s);

/* suspend: is OLD (fd) stopped with a savepoint this command can prove?
 * 1 yes (its path in h->sp), 0 not yet, -1 a trap or a failure (printed). */
int gp_ho_old_stopped(gp_ho_t *h, const cJSON *fd, const gp_ho_seen_t *seen);

/* clear: once the proxy has closed the old side, asks the operator once
 * for a checkpoint of OLD (below). */
void gp_ho_ask_checkpoint(gp_ho_t *h, const gp_cm_t *cm);

/* The short names both files use. */
#define fail(...)       gp_ho_fail(__VA_ARGS__)
#define cm_get(cm, key) gp_ho_cm_get(cm, key)
#define uri_norm(s)     gp_ho_uri_norm(s)

#endif
