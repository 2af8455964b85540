/* proxy/control/ctl_k8s.c: the control backend for the ConfigMap itself, through
 * the Kubernetes API (k8s/client.h, k8s/watch.h).
 *
 * With a watch (the proxy), read() hands out the newest copy the watch
 * thread holds, under its mutex, and says "changed" when its generation
 * moved: no network on the proxy's loop. A write is a PATCH with the
 * expected resourceVersion as precondition (409 -> GP_ERR_CONFLICT); its
 * response is offered to the watch, so the next read sees our own write
 * at once, and after a 409 the object is read again (GET) for the same
 * reason: the retry in gp_ctl_patch decides on the newest map. Without a
 * watch (the CLI) every read is a GET.
 * Uses k8s/ and proxy/base/log.h (failures of the watch thread are logged here,
 * once per change: the document in hand stays current meanwhile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/client.h"
#include "k8s/watch.h"
#include "proxy/control/ctl.h"
#include "proxy/base/log.h"

#define FIRST_ANSWER_MS 5000
#define CREATE_ATTEMPTS 5

typedef struct ctlk8s {
        gp_k8s_t *k;
        gp_k8s_watch_t *w; /* NULL: read by GET */
        char ns[64], name[256];
        char desc[400];
        uint64_t seen_gen;
        bool seen;
        char seen_rv[64]; /* without a watch: the last version read */
        char warned[800]; /* the watch failure last logged */
} ctlk8s_t;

/* Logs a change in the watch thread's health (not its first failure
 * before any document: read() returns that one as the error). */
static void watch_health(ctlk8s_t *b) {
        char now[800];
        gp_k8s_watch_last_error(b->w, now, sizeof(now));
        if (!strcmp(now, b->warned))
                return;
        if (now[0])
                gp_warn("%s (retrying with backoff; the map is read again on each retry, "
                        "the last one read stays in use)",
                        now);
        else
                gp_info("%s: watching again", b->desc);
        snprintf(b->warned, sizeof(b->warned), "%s", now);
}

static gp_errcode_t k_read(void *be, bool force, gp_cm_t **out, bool *changed, gp_err_t *err) {
        ctlk8s_t *b = be;
        gp_errcode_t rc;
        *out = NULL;
        *changed = false;
        if (!b->w) {
                gp_cm_t *cm = NULL;
                if ((rc = gp_k8s_cm_get(b->k, b->ns, b->name, &cm, NULL, err)))
                        return rc;
                const char *rv = gp_cm_resource_version(cm);
                if (!force && b->seen && !strcmp(rv, b->seen_rv)) {
                        gp_cm_destroy(cm);
                        return GP_OK;
                }
                snprintf(b->seen_rv, sizeof(b->seen_rv), "%s", rv);
                b->seen = true;
                *out = cm;
                *changed = true;
                return GP_OK;
        }
        uint64_t gen = 0;
        char *json = NULL;
        if (!force && b->seen && gp_k8s_watch_generation(b->w) == b->seen_gen) {
                watch_health(b);
                return GP_OK; /* the common case: a lock and a compare */
        }
        if ((rc = gp_k8s_watch_latest(b->w, &gen, &json, err))) {
                b->seen = false; /* a document that comes back is news */
                return rc;
        }
        watch_health(b);
        if (!force && b->seen && gen == b->seen_gen) {
                free(json);
                return GP_OK;
        }
        *out = gp_cm_parse(json, strlen(json), err);
        free(json);
        if (!*out)
                return gp_err_prefix(err, "%s", b->desc);
        b->seen_gen = gen;
        b->seen = true;
        *changed = true;
        return GP_OK;
}

static gp_errcode_t k_write(void *be, const char *expected_rv, const gp_kv_t *patch, size_t n,
                            gp_err_t *err) {
        ctlk8s_t *b = be;
        gp_cm_t *cm = NULL;
        gp_errcode_t rc = gp_k8s_cm_patch(b->k, b->ns, b->name, expected_rv, patch, n,
                                          b->w ? &cm : NULL, err);
        if (rc == GP_OK && cm)
                gp_k8s_watch_offer(b->w, cm);
        gp_cm_destroy(cm);
        if (rc == GP_ERR_CONFLICT && b->w) {
                /* Read the newest now: the caller decides again on it. */
                if (gp_k8s_cm_get(b->k, b->ns, b->name, &cm, NULL, NULL) == GP_OK) {
                        gp_k8s_watch_offer(b->w, cm);
                        gp_cm_destroy(cm);
                }
        }
        /* 404: the map was deleted after our last read; missing, as a
         * read would say. */
        if (rc == GP_ERR_NOT_FOUND)
                rc = err ? (err->code = GP_ERR_INVALID) : GP_ERR_INVALID;
        return rc;
}

static gp_errcode_t k_create(void *be, const gp_kv_t *data, size_t n, bool replace,
                             gp_err_t *err) {
        ctlk8s_t *b = be;
        gp_errcode_t rc = gp_k8s_cm_create(b->k, b->ns, b->name, data, n, NULL, err);
        if (rc != GP_ERR_CONFLICT || !replace)
                return rc;
        /* It exists: make its data exactly data, on the version we read. */
        for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
                gp_cm_t *cm = NULL;
                size_t have;
                if ((rc = gp_k8s_cm_get(b->k, b->ns, b->name, &cm, NULL, err)))
                        return rc;
                const gp_kv_t *cur = gp_cm_data(cm, &have);
                gp_kv_t *kv = calloc(have + n + 1, sizeof(*kv));
                if (!kv) {
                        gp_cm_destroy(cm);
                        return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                }
                for (size_t i = 0; i < have; i++)
                        kv[i] = (gp_kv_t){cur[i].key, NULL};
                memcpy(kv + have, data, n * sizeof(*kv));
                rc = gp_k8s_cm_patch(b->k, b->ns, b->name, gp_cm_resource_version(cm), kv,
                                     have + n, NULL, err);
                free(kv);
                gp_cm_destroy(cm);
                if (rc != GP_ERR_CONFLICT)
                        return rc;
        }
        return rc; /* still conflicting */
}

static void k_destroy(void *be) {
        ctlk8s_t *b = be;
        if (!b)
                return;
        gp_k8s_watch_stop(b->w);
        gp_k8s_destroy(b->k);
        free(b);
}

static const char *k_describe(void *be) {
        return ((ctlk8s_t *)be)->desc;
}

static const gp_ctl_ops_t k8s_ops = {
        .read = k_read,
        .write = k_write,
        .destroy = k_destroy,
        .describe = k_describe,
        .create = k_create,
        .cli_cas = true,
};

gp_ctl_t *gp_ctl_new_k8s(const char *name, const char *ns, const char *kubeconfig, bool watch,
                         gp_err_t *err) {
        ctlk8s_t *b;
        if (!gp_k8s_name_ok(name)) {
                gp_err_set(err, GP_ERR_INVALID,
                           "ConfigMap name \"%.80s\": not a valid name (lower-case letters, "
                           "digits, '-' and '.', at most 253)",
                           name ? name : "");
                return NULL;
        }
        gp_k8s_conf_t *conf = gp_k8s_conf_load(kubeconfig, err);
        if (!conf) {
                gp_err_prefix(err, "kubernetes");
                return NULL;
        }
        if (!(b = calloc(1, sizeof(*b)))) {
                gp_k8s_conf_destroy(conf);
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        snprintf(b->ns, sizeof(b->ns), "%s", ns && *ns ? ns : conf->ns ? conf->ns : "default");
        snprintf(b->name, sizeof(b->name), "%s", name);
        if (!gp_k8s_namespace_ok(b->ns)) {
                gp_err_set(err, GP_ERR_INVALID,
                           "namespace \"%.80s\": not a valid namespace name (lower-case "
                           "letters, digits and '-', at most 63)",
                           b->ns);
                gp_k8s_conf_destroy(conf);
                free(b);
                return NULL;
        }
        snprintf(b->desc, sizeof(b->desc), "configmap %s/%s", b->ns, b->name);
        if (!(b->k = gp_k8s_new(conf, err))) {
                gp_err_prefix(err, "kubernetes");
                free(b);
                return NULL;
        }
        if (watch)
                gp_info("%s via %s at %s", b->desc, conf->source, conf->server);
        if (watch) {
                if (!(b->w = gp_k8s_watch_start(b->k, b->ns, b->name, err))) {
                        gp_err_prefix(err, "%s", b->desc);
                        k_destroy(b);
                        return NULL;
                }
                gp_k8s_watch_wait_first(b->w, FIRST_ANSWER_MS);
        }
        gp_ctl_t *c = gp_ctl_new(&k8s_ops, b);
        if (!c)
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        return c;
}
