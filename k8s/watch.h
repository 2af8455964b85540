/* k8s/watch.h: keeps the newest copy of one ConfigMap, on its own thread,
 * so a reader never waits for the network.
 *
 * The thread GETs the object, then WATCHes it from that resourceVersion
 * (fieldSelector=metadata.name=NAME, allowWatchBookmarks, a server-side
 * timeoutSeconds of 4 to 5 minutes), reading the line-delimited events as
 * they stream in (a line is bounded by GP_K8S_MAX_EVENT). ADDED and
 * MODIFIED publish the object, DELETED publishes "deleted", BOOKMARK
 * moves the resume point. A watch the server ends is resumed at once from
 * the last resourceVersion; 410 Gone (or an ERROR event with code 410)
 * means that version is too old: GET again, then watch. When the version
 * the GET just gave is itself too old (the object has not changed since
 * the API server restarted, or since its watch history moved on), the
 * watch starts without a resourceVersion: the server sends the object as
 * it is, then every change (an object deleted in between is then only
 * seen at the next GET). Any other failure
 * (no connection, 401, 403, a garbled stream) is retried after a backoff
 * of 250 ms doubling to 30 s, with jitter (a random 50-100 % of it), reset
 * by a success, starting again with a GET (so a copy is refreshed once per
 * backoff even where watching keeps failing). The newest state is kept under a mutex; each change bumps
 * a generation number, so a reader can tell whether anything changed.
 * May use gate/, os/ and k8s/; pthreads. */
#ifndef GP_K8S_WATCH_H
#define GP_K8S_WATCH_H

#include <stdint.h>

#include "k8s/client.h"

typedef struct gp_k8s_watch gp_k8s_watch_t;

typedef struct gp_k8s_watch_stats {
        uint64_t gets;     /* GETs (the first, and each re-list) */
        uint64_t watches;  /* WATCH requests */
        uint64_t events;   /* events read */
        uint64_t relists;  /* after 410 Gone */
        uint64_t failures; /* failed GETs or watches (each followed by a backoff) */
} gp_k8s_watch_stats_t;

/* Starts the thread (k must outlive the watch). NULL on no memory. */
gp_k8s_watch_t *gp_k8s_watch_start(gp_k8s_t *k, const char *ns, const char *name,
                                   gp_err_t *err);
/* The same, but the first watch starts at resourceVersion rv (non-empty)
 * without a GET: resuming from a version kept elsewhere. A version the
 * server no longer has gives 410 and the usual GET. */
gp_k8s_watch_t *gp_k8s_watch_start_at(gp_k8s_t *k, const char *ns, const char *name,
                                      const char *rv, gp_err_t *err);
/* Stops the thread and frees; accepts NULL. A watch stops within about a
 * second, a GET in flight within its request timeout. */
void gp_k8s_watch_stop(gp_k8s_watch_t *w);

/* Waits up to ms for the first outcome: a document, or a failure. */
void gp_k8s_watch_wait_first(gp_k8s_watch_t *w, int64_t ms);

/* The newest document: GP_OK with *json (malloc'd, caller frees) and
 * its generation in *gen. GP_ERR_NOT_FOUND when the object does not exist
 * (deleted, or never created); when there never was a document, the last
 * attempt's error (GP_ERR_TRANSPORT when nothing came yet).
 * *gen is set in every case. */
int gp_k8s_watch_latest(gp_k8s_watch_t *w, uint64_t *gen, char **json, gp_err_t *err);
/* The generation of the newest state: a cheap "anything new?". */
uint64_t gp_k8s_watch_generation(gp_k8s_watch_t *w);
/* The last failure of the thread ("" once a watch works again), for
 * diagnostics: a document stays current across failures. */
void gp_k8s_watch_last_error(gp_k8s_watch_t *w, char *buf, size_t len);
void gp_k8s_watch_stats(gp_k8s_watch_t *w, gp_k8s_watch_stats_t *out);

/* Publishes a copy of the object read outside the watch (the response to
 * our own PATCH, a GET after a 409), unless the watch already has it or a
 * newer one (gp_k8s_rv_cmp): a writer then reads its own write at once. */
void gp_k8s_watch_offer(gp_k8s_watch_t *w, const gp_cm_t *cm);

#endif
