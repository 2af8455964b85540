/* proxy/control/status.h: the proxy's writes to the control map, on a thread of
 * their own so the loop never waits for the API server or the file: the
 * status keys (gate-proxy.*) and the publication of committed decisions
 * (docs/DESIGN.md, The ConfigMap protocol).
 *
 * The thread has its own control handle on the same map (for the API
 * server: its own client and watch). The loop hands it, between
 * transactions, the newest status and the committed gate state; the thread
 * publishes what that state has decided and the map does not show yet,
 * decided on the newest map it has read (a write is compare-and-set, and
 * dropped when the map has moved on to another transition). Newest wins:
 * a status not yet written is replaced by a newer one. */
#ifndef GP_PROXY_CONTROL_STATUS_H
#define GP_PROXY_CONTROL_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "gate/gate.h"
#include "gate/hoptime.h"
#include "k8s/configmap.h"
#include "proxy/conf/conf.h"

typedef struct gp_status gp_status_t;

/* The handle on conf's control map and the thread. NULL with err. */
gp_status_t *gp_status_new(const gp_conf_t *conf, gp_err_t *err);
/* Stops the thread (a write under way ends first; what is still waiting
 * is not written: see gp_status_flush). */
void gp_status_destroy(gp_status_t *s);
/* One status to write: its keys by name (static strings, in the order
 * first set), each with its value. */
#define GP_STATUS_KEYS      20
#define GP_STATUS_VALUE_MAX 520
typedef struct gp_status_kv {
        size_t n;
        const char *key[GP_STATUS_KEYS];
        char value[GP_STATUS_KEYS][GP_STATUS_VALUE_MAX];
} gp_status_kv_t;
/* Sets key (a static string) to the formatted value, cut at
 * GP_STATUS_VALUE_MAX; a key set again takes the new value; a key beyond
 * GP_STATUS_KEYS is not kept. */
__attribute__((format(printf, 3, 4))) void gp_status_set(gp_status_kv_t *st, const char *key,
                                                         const char *fmt, ...);
/* Hands st to the thread to write (copied). */
void gp_status_post(gp_status_t *s, const gp_status_kv_t *st);
/* The committed gate state, whose decisions are published. */
void gp_status_committed(gp_status_t *s, const gp_gate_t *committed);
/* Waits until what was posted before has been written (or has failed),
 * at most wait_ms. 0, or -1 on timeout. */
int gp_status_flush(gp_status_t *s, int64_t wait_ms);
/* Writes so far by outcome: written, dropped, not written (map invalid or
 * missing), failed. */
#define GP_MAP_WRITES 5 /* written, dropped, invalid, error; conflicts */
void gp_status_writes(gp_status_t *s, uint64_t out[GP_MAP_WRITES]);

/* The loop's instants of the hand-over (gate/hoptime.h): seen, closed,
 * drained. The thread adds when it wrote T and CLEAR_TO_TEARDOWN (in the
 * same write as each), and writes the whole as gate-proxy.hop with every
 * status; a new h->seen starts a new record. */
void gp_status_hop(gp_status_t *s, const gp_hop_t *h);

/* gate.membership=group: a cutoff the map stores that is not the T the
 * committed gate routes by (reported, never followed nor written over),
 * GP_TS_NONE when none. */
int64_t gp_status_other_cutoff(gp_status_t *s);

#endif
