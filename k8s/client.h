/* k8s/client.h: a client of the Kubernetes API, mostly for ConfigMaps:
 * GET one, PATCH one (JSON merge patch, with metadata.resourceVersion as
 * the precondition), POST one, and the raw streamed GET a watch runs on
 * (k8s/watch.h); and one plain call on any path for other resources (the
 * FlinkDeployments of `gate-proxy handover`). Behind an opaque handle; safe to use from several
 * threads (the request handle is locked, a stream has its own).
 *
 * Authentication: the bearer token of the configuration, or its token
 * file (a projected service-account token rotates), re-read at least
 * every 60 s and after any 401, which is then retried once; or a client
 * certificate. Every call returns GP_OK or its error (gate/error.h), with
 * "METHOD configmap NS/NAME: 409 Conflict: <the API's Status message>" or
 * the transport's reason in err: GP_ERR_CONFLICT for 409 (resourceVersion
 * moved, or on create: it exists), GP_ERR_NOT_FOUND for 404,
 * GP_ERR_DENIED for 401 and 403, GP_ERR_TRANSPORT (retriable) for no
 * answer, 429 and 5xx, GP_ERR_INVALID for a bad name or a 400/422.
 * Nothing logs here. May use gate/ and k8s/; libcurl, cJSON. */
#ifndef GP_K8S_CLIENT_H
#define GP_K8S_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/error.h"
#include "gate/types.h"
#include "k8s/configmap.h"
#include "k8s/kubeconfig.h"

typedef struct gp_k8s gp_k8s_t;

#define GP_K8S_TOKEN_TTL_MS 60000 /* a token file is re-read this often */

/* The error code for an HTTP status of the API, as above. */
gp_errcode_t gp_k8s_status_code(long status);

/* Takes conf (also when it fails). NULL with the reason in err. */
gp_k8s_t *gp_k8s_new(gp_k8s_conf_t *conf, gp_err_t *err);
void gp_k8s_destroy(gp_k8s_t *k);
const gp_k8s_conf_t *gp_k8s_conf(const gp_k8s_t *k);

/* Request timeouts (defaults: connect 5 s, a request 10 s). */
void gp_k8s_set_timeouts(gp_k8s_t *k, long connect_ms, long request_ms);

/* GET. GP_OK with *out (caller destroys), or the error. *http (may be
 * NULL) gets the status, 0 if none. */
gp_errcode_t gp_k8s_cm_get(gp_k8s_t *k, const char *ns, const char *name, gp_cm_t **out,
                           long *http, gp_err_t *err);
/* PATCH data (value NULL deletes the key) if the object's resourceVersion
 * is still expected_rv (NULL: no precondition). GP_OK with the new
 * object in *out (may be NULL: not wanted), or the error. */
gp_errcode_t gp_k8s_cm_patch(gp_k8s_t *k, const char *ns, const char *name,
                             const char *expected_rv, const gp_kv_t *kv, size_t n,
                             gp_cm_t **out, gp_err_t *err);
/* POST a new ConfigMap with data kv. GP_OK with *out (may be NULL),
 * GP_ERR_CONFLICT when it exists, or the error. */
gp_errcode_t gp_k8s_cm_create(gp_k8s_t *k, const char *ns, const char *name, const gp_kv_t *kv,
                              size_t n, gp_cm_t **out, gp_err_t *err);

/* Any other call on the API: method on path (from /api or /apis), body
 * (NULL: none) of content type ctype; what names it in errors ("PATCH
 * flinkdeployment ns/orders-blue"). GP_OK with the parsed JSON of a 2xx
 * answer in *out (caller cJSON_Deletes it; out NULL: not wanted), else the
 * error as above. *http (may be NULL) gets the status, 0 if none. */
struct cJSON;
gp_errcode_t gp_k8s_call(gp_k8s_t *k, const char *method, const char *path, const char *ctype,
                         const char *body, const char *what, struct cJSON **out, long *http,
                         gp_err_t *err);

/* A streamed GET of path (from /api/...) on its own connection: each
 * piece of a 2xx body goes to sink; stop is polled. Returns 0 when the
 * server ended the response (*http its status; for a non-2xx status its
 * Status message in err, "403 Forbidden: ..."), GP_ERR_TRANSPORT when no
 * answer came, GP_ERR_FAIL when sink or stop ended it ("URL: reason" in
 * err). A 401 re-reads the token file for the next call. */
gp_errcode_t gp_k8s_stream(gp_k8s_t *k, const char *path, long timeout_ms,
                           int (*sink)(void *, const char *, size_t), int (*stop)(void *),
                           void *opaque, long *http, gp_err_t *err);

#endif
