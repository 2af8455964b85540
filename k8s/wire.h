/* k8s/wire.h: the Kubernetes API's JSON on the wire, without any I/O:
 * watch events (one JSON object per line), Status errors, merge-patch
 * bodies, and the bounded line splitter a watch stream is fed through.
 * Pure: cJSON and gate/ only, so every piece is unit-tested and fuzzed. */
#ifndef GP_K8S_WIRE_H
#define GP_K8S_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/error.h"
#include "gate/types.h"

/* A watch event line is the object plus a small envelope. */
#define GP_K8S_MAX_EVENT (1024 * 1024 + 4096)
#define GP_K8S_RV_MAX    64

typedef enum {
        GP_K8S_EV_ADDED = 0,
        GP_K8S_EV_MODIFIED,
        GP_K8S_EV_DELETED,
        GP_K8S_EV_BOOKMARK,
        GP_K8S_EV_ERROR,
} gp_k8s_ev_type_t;

typedef struct gp_k8s_event {
        gp_k8s_ev_type_t type;
        char rv[GP_K8S_RV_MAX]; /* the object's metadata.resourceVersion; "" for ERROR */
        char *object;           /* ADDED/MODIFIED/DELETED: the object, compact JSON */
        long code;              /* ERROR: the Status code (410: too old, re-list) */
        char message[512];      /* ERROR: "410 Gone: too old resource version: 5 (9)" */
} gp_k8s_event_t;

/* Parses one event line. GP_OK, or GP_ERR_INVALID with the reason in err
 * (and ev cleared). ev->object is malloc'd: gp_k8s_event_clear frees it. */
gp_errcode_t gp_k8s_event_parse(const char *line, size_t len, gp_k8s_event_t *ev,
                                gp_err_t *err);
void gp_k8s_event_clear(gp_k8s_event_t *ev);
const char *gp_k8s_ev_name(gp_k8s_ev_type_t t);

/* The reason phrase of an HTTP status ("Conflict"), "" if unknown. */
const char *gp_k8s_http_reason(long status);
/* "409 Conflict: <Status.message>" from a response body; without a
 * readable Status message the start of the body (printable bytes only),
 * or just "409 Conflict". */
void gp_k8s_status_message(long status, const char *body, size_t len, char *out,
                           size_t outlen);

/* A JSON merge patch of data (value NULL: null, which deletes the key),
 * with metadata.resourceVersion = rv as the precondition unless rv is
 * NULL. malloc'd compact JSON, NULL on no memory. */
char *gp_k8s_merge_patch(const char *rv, const gp_kv_t *kv, size_t n);
/* A ConfigMap to create (POST), malloc'd compact JSON. */
char *gp_k8s_configmap_body(const char *ns, const char *name, const gp_kv_t *kv, size_t n);

/* Orders two resourceVersions: -1, 0, 1 when both are decimal numbers
 * (etcd revisions, which is what every API server sends), 0 when the
 * strings are equal, 2 when they cannot be ordered. The API documents
 * them as opaque, so this is only used to avoid stepping back to a
 * document already superseded; a wrong guess costs a 409 and a re-read. */
int gp_k8s_rv_cmp(const char *a, const char *b);

/* Splits a stream into lines of at most max bytes (without the '\n' and
 * any '\r' before it; empty lines are skipped). */
typedef struct gp_k8s_lines {
        char *buf;
        size_t len, cap, max;
} gp_k8s_lines_t;

typedef int (*gp_k8s_line_fn)(void *opaque, const char *line, size_t len);

void gp_k8s_lines_init(gp_k8s_lines_t *l, size_t max);
/* Feeds n bytes; calls fn for each complete line. 0; 1 when fn returned
 * non-zero (stop); -1 when a line is longer than max. */
int gp_k8s_lines_feed(gp_k8s_lines_t *l, const char *p, size_t n, gp_k8s_line_fn fn,
                      void *opaque);
/* Drops a partial line (after a reconnect). */
void gp_k8s_lines_reset(gp_k8s_lines_t *l);
void gp_k8s_lines_free(gp_k8s_lines_t *l);

#endif
