/* proxy/control/ctl.h: where the blue/green ConfigMap lives, behind one API.
 *
 * Backends: a local file holding the ConfigMap JSON (control.file, the
 * embedded default, proxy/control/ctl_file.c), and the ConfigMap itself through the
 * Kubernetes API (control.k8s.configmap, proxy/control/ctl_k8s.c).
 * The proxy reads the map between transactions and keeps the last good
 * control; a bad map never replaces it, the error is kept for the status.
 * Writes are compare-and-set on metadata.resourceVersion: on a conflict
 * the map is read again and the write retried only while the map still
 * describes the same transition. */
#ifndef GP_PROXY_CONTROL_CTL_H
#define GP_PROXY_CONTROL_CTL_H

#include <stdbool.h>

#include "gate/error.h"
#include "gate/control.h"
#include "k8s/configmap.h"

typedef struct gp_ctl gp_ctl_t;

/* A backend: read the current document; write a patch (value NULL removes
 * the key) if the document's resourceVersion is still expected_rv (NULL:
 * no precondition). Each returns GP_OK or its error (gate/error.h):
 * GP_ERR_CONFLICT when the resourceVersion moved (or on create: it
 * exists), GP_ERR_NOT_FOUND when the map is absent, GP_ERR_TRANSPORT
 * when the API server did not answer. */
typedef struct gp_ctl_ops {
        /* GP_OK with *out (caller destroys) and *changed; with
         * changed false *out may be NULL. force: read even if unchanged. */
        gp_errcode_t (*read)(void *be, bool force, gp_cm_t **out, bool *changed,
                             gp_err_t *err);
        gp_errcode_t (*write)(void *be, const char *expected_rv, const gp_kv_t *patch,
                              size_t n, gp_err_t *err);
        void (*destroy)(void *be);
        const char *(*describe)(void *be);
        /* Creates the document with exactly these data; replace: also when
         * it exists (other keys are dropped). */
        gp_errcode_t (*create)(void *be, const gp_kv_t *data, size_t n, bool replace,
                               gp_err_t *err);
        /* The CLI writes with the resourceVersion it read as the
         * precondition, and reads and decides again on a conflict (the
         * API server); false: it writes without one (the file, whose
         * update is atomic under its lock). */
        bool cli_cas;
} gp_ctl_ops_t;

gp_ctl_t *gp_ctl_new(const gp_ctl_ops_t *ops, void *be);
/* The file backend. */
gp_ctl_t *gp_ctl_new_file(const char *path);
/* The Kubernetes backend: ConfigMap name in namespace ns (NULL or "": the
 * configuration's: in a pod its own from its service account, with a
 * kubeconfig its context's; else "default"), reached through kubeconfig (NULL or "": in-cluster when
 * KUBERNETES_SERVICE_HOST is set, else $KUBECONFIG or ~/.kube/config).
 * watch: a thread keeps the newest copy, so a read never waits for the
 * network (the proxy; it waits up to 5 s here for the first answer);
 * without it every read is a GET (the CLI). NULL with the reason in err:
 * a bad kubeconfig or name, never the network. */
gp_ctl_t *gp_ctl_new_k8s(const char *name, const char *ns, const char *kubeconfig, bool watch,
                         gp_err_t *err);
/* The proxy's map as conf names it (control.k8s.* with a watch, or
 * control.file). NULL with err. */
struct gp_conf;
gp_ctl_t *gp_ctl_new_conf(const struct gp_conf *conf, gp_err_t *err);
void gp_ctl_destroy(gp_ctl_t *c);
const char *gp_ctl_describe(const gp_ctl_t *c);

/* Reads the map if it changed. Returns 1 when a new valid control is now
 * current, 0 when nothing changed, -1 when the map is missing or invalid
 * (the last good control stays current; gp_ctl_error says why). */
int gp_ctl_poll(gp_ctl_t *c, bool force);
/* The last good control, or NULL if there never was one. */
const gp_control_t *gp_ctl_current(const gp_ctl_t *c);
/* The reason the last read failed, or "" when it succeeded; its code
 * (GP_OK when it succeeded). */
const char *gp_ctl_error(const gp_ctl_t *c);
gp_errcode_t gp_ctl_error_code(const gp_ctl_t *c);
/* How many of gp_ctl_patch's writes met a moved resourceVersion (each
 * then read the map again and decided again). */
uint64_t gp_ctl_conflicts(const gp_ctl_t *c);
/* The last document read successfully (borrowed), or NULL. */
const gp_cm_t *gp_ctl_document(const gp_ctl_t *c);

/* Writes patch. base NULL: unconditional (status keys). Otherwise the
 * write is dropped (GP_ERR_DROPPED) if the map no longer describes the
 * transition base described. GP_OK, GP_ERR_DROPPED, GP_ERR_INVALID (the
 * map is missing or invalid now), GP_ERR_CONFLICT (still after 8 reads)
 * or the backend's error. */
gp_errcode_t gp_ctl_patch(gp_ctl_t *c, const gp_kv_t *patch, size_t n,
                          const gp_control_t *base, gp_err_t *err);

/* on: gp_ctl_patch with a base writes the cutoff (watermark-toggle-value)
 * only into a map that stores none, checked on the document its write is
 * conditional on; a stored one drops the write (GP_ERR_DROPPED).
 * gate.membership=group, where the cutoff is written once. */
void gp_ctl_cas_cutoff(gp_ctl_t *c, bool on);

/* For the CLI, which decides for itself: the document as it is now
 * (caller destroys; NULL with err); a backend write as is (no re-read, no
 * transition check): GP_OK, GP_ERR_CONFLICT or another error; the
 * backend's create; whether its writes take a precondition (cli_cas). */
gp_cm_t *gp_ctl_load(gp_ctl_t *c, gp_err_t *err);
gp_errcode_t gp_ctl_write(gp_ctl_t *c, const char *expected_rv, const gp_kv_t *patch, size_t n,
                          gp_err_t *err);
gp_errcode_t gp_ctl_create(gp_ctl_t *c, const gp_kv_t *data, size_t n, bool replace,
                           gp_err_t *err);
bool gp_ctl_cli_cas(const gp_ctl_t *c);

/* File helpers shared with the CLI: read a document from a file; apply a
 * patch under the file's lock (expected_rv NULL: no precondition;
 * create_name: create the ConfigMap with that name if the file is absent). */
gp_cm_t *gp_ctlfile_load(const char *path, gp_err_t *err);
gp_errcode_t gp_ctlfile_update(const char *path, const char *expected_rv, const gp_kv_t *patch,
                               size_t n, const char *create_name, gp_err_t *err);

#endif
