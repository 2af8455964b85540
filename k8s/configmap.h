/* k8s/configmap.h: a ConfigMap document (the JSON that
 * `kubectl get configmap NAME -o json` prints), read and edited.
 *
 * Keeps the whole document so a write-back changes only `data` and
 * `metadata.resourceVersion`. Every error says where: a JSON syntax error
 * gives the byte offset, a bad entry names `data.<key>`.
 * Uses cJSON and gate/; no I/O here. */
#ifndef GP_K8S_CONFIGMAP_H
#define GP_K8S_CONFIGMAP_H

#include <stddef.h>

#include "gate/error.h"
#include "gate/types.h"

/* ConfigMaps are limited to 1 MiB by the API server; so are we. */
#define GP_CM_MAX_BYTES (1024 * 1024)

typedef struct gp_cm gp_cm_t;

/* Parses a document. Returns NULL with "<where>: <reason>" in err. */
gp_cm_t *gp_cm_parse(const char *buf, size_t len, gp_err_t *err);
/* A new empty ConfigMap named name (namespace may be NULL). */
gp_cm_t *gp_cm_new(const char *name, const char *ns);
void gp_cm_destroy(gp_cm_t *cm);

const char *gp_cm_name(const gp_cm_t *cm);
/* metadata.resourceVersion, "" when absent. */
const char *gp_cm_resource_version(const gp_cm_t *cm);
int gp_cm_set_resource_version(gp_cm_t *cm, const char *rv);

/* The data entries, borrowed until the next change to cm. */
const gp_kv_t *gp_cm_data(const gp_cm_t *cm, size_t *n);
const char *gp_cm_get(const gp_cm_t *cm, const char *key);
/* Sets data[key] = value; value NULL removes the key. 0 or -1 (no memory). */
int gp_cm_set(gp_cm_t *cm, const char *key, const char *value);
/* Removes every data key starting with prefix. */
void gp_cm_remove_prefix(gp_cm_t *cm, const char *prefix);

/* The document as pretty JSON, malloc'd (caller frees); NULL on no memory. */
char *gp_cm_render(const gp_cm_t *cm);
/* The same, compact (one line), as the API server sends it. */
char *gp_cm_render_compact(const gp_cm_t *cm);

#endif
