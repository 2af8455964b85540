/* k8s/manifest.h: one Kubernetes manifest, YAML or JSON, as the JSON
 * object the API takes (`gate-proxy handover --to-file`). Plain scalars
 * are typed as YAML 1.2's core schema does (null, booleans, decimal
 * numbers); quoted ones stay strings. One document, a mapping at the top,
 * string keys, no key twice, at most 64 levels. May use gate/ and k8s/;
 * libyaml, cJSON. */
#ifndef GP_K8S_MANIFEST_H
#define GP_K8S_MANIFEST_H

#include <stddef.h>

#include "gate/error.h"

struct cJSON;

/* The manifest (caller cJSON_Deletes it), or NULL with "line N: reason"
 * in err. */
struct cJSON *gp_k8s_manifest_parse(const char *buf, size_t len, gp_err_t *err);

#endif
