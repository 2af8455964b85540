/* k8s/flinkdep.c: the FlinkDeployment and FlinkStateSnapshot calls of
 * `gate-proxy handover`, one request each, and the readers of their
 * documents. May use gate/ and k8s/; cJSON. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/flinkdep.h"

#define FD_PATH       "/apis/flink.apache.org/v1beta1/namespaces/%s/flinkdeployments"
#define SNAPSHOTS_KEY "kubernetes.operator.snapshot.resource.enabled"

/* ---- the documents -------------------------------------------------------- */

/* The item at the path of object keys in ap (NULL-terminated), or NULL. */
static const cJSON *walk(const cJSON *j, va_list ap) {
        const char *key;
        while (j && (key = va_arg(ap, const char *)))
                j = cJSON_GetObjectItemCaseSensitive(j, key);
        return j;
}

const char *gp_flinkdep_str(const cJSON *j, ...) {
        va_list ap;
        va_start(ap, j);
        j = walk(j, ap);
        va_end(ap);
        return cJSON_IsString(j) && j->valuestring ? j->valuestring : "";
}

int64_t gp_flinkdep_num(const cJSON *j, ...) {
        va_list ap;
        va_start(ap, j);
        j = walk(j, ap);
        va_end(ap);
        return cJSON_IsNumber(j) ? (int64_t)j->valuedouble : -1;
}

/* The value of key under c, an object of spec.flinkConfiguration: the key
 * itself, or a nested object whose name and a dot begin it (the operator
 * flattens {"a": {"b.c": 1}} to "a.b.c", from 1.13 on). NULL: unset. */
static const cJSON *conf_find(const cJSON *c, const char *key, int depth) {
        const cJSON *it;
        if (!cJSON_IsObject(c) || depth > 16)
                return NULL;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, key);
        if (v && !cJSON_IsObject(v))
                return v;
        cJSON_ArrayForEach(it, c) {
                size_t n = it->string ? strlen(it->string) : 0;
                if (!cJSON_IsObject(it) || !n || strncmp(key, it->string, n) || key[n] != '.')
                        continue;
                if ((v = conf_find(it, key + n + 1, depth + 1)))
                        return v;
        }
        return NULL;
}

const char *gp_flinkdep_conf(const cJSON *fd, const char *key, char *buf, size_t len) {
        const cJSON *c = conf_find(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(fd, "spec"),
                                                 "flinkConfiguration"),
                key, 0);
        buf[0] = '\0';
        if (cJSON_IsString(c))
                snprintf(buf, len, "%s", c->valuestring);
        else if (cJSON_IsBool(c))
                snprintf(buf, len, "%s", cJSON_IsTrue(c) ? "true" : "false");
        else if (cJSON_IsNumber(c))
                snprintf(buf, len, "%.17g", c->valuedouble);
        return buf;
}

const char *gp_flinkdep_conf2(const cJSON *fd, const char *key, const char *old_key, char *buf,
                              size_t len) {
        if (*gp_flinkdep_conf(fd, key, buf, len))
                return buf;
        return gp_flinkdep_conf(fd, old_key, buf, len);
}

bool gp_flinkdep_legacy_savepoint(const cJSON *fd, const char *path) {
        return !strcmp(gp_flinkdep_str(fd, "status", "jobStatus", "savepointInfo",
                                       "lastSavepoint", "location", NULL),
                       path) &&
               *path;
}

/* ---- the calls ------------------------------------------------------------- */

gp_errcode_t gp_flinkdep_get(gp_k8s_t *k, const char *ns, const char *name, cJSON **out,
                             gp_err_t *err) {
        char path[512], what[256];
        snprintf(path, sizeof(path), FD_PATH "/%s", ns, name);
        snprintf(what, sizeof(what), "GET flinkdeployment %s/%s", ns, name);
        return gp_k8s_call(k, "GET", path, NULL, NULL, what, out, NULL, err);
}

gp_errcode_t gp_flinkdep_patch_job(gp_k8s_t *k, const char *ns, const char *name,
                                   const char *rv, cJSON *job, int64_t *gen, gp_err_t *err) {
        char path[512], what[256];
        cJSON *body = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(body, "metadata"),
              *spec = cJSON_AddObjectToObject(body, "spec"), *out = NULL;
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
        cJSON_AddItemToObject(spec, "job", job);
        char *s = cJSON_PrintUnformatted(body);
        cJSON_Delete(body);
        if (!s)
                return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        snprintf(path, sizeof(path), FD_PATH "/%s", ns, name);
        snprintf(what, sizeof(what), "PATCH flinkdeployment %s/%s", ns, name);
        gp_errcode_t rc = gp_k8s_call(k, "PATCH", path, "application/merge-patch+json", s,
                                      what, &out, NULL, err);
        free(s);
        if (rc == GP_OK)
                *gen = gp_flinkdep_num(out, "metadata", "generation", NULL);
        cJSON_Delete(out);
        return rc;
}

gp_errcode_t gp_flinkdep_create(gp_k8s_t *k, const char *ns, const cJSON *m, gp_err_t *err) {
        char path[512], what[256], *body = cJSON_PrintUnformatted(m);
        if (!body)
                return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        snprintf(path, sizeof(path), FD_PATH, ns);
        snprintf(what, sizeof(what), "POST flinkdeployment %s/%s", ns,
                 gp_flinkdep_str(m, "metadata", "name", NULL));
        gp_errcode_t rc =
                gp_k8s_call(k, "POST", path, "application/json", body, what, NULL, NULL, err);
        free(body);
        return rc;
}

gp_errcode_t gp_flinkdep_delete(gp_k8s_t *k, const char *ns, const char *name, gp_err_t *err) {
        char path[512], what[256];
        snprintf(path, sizeof(path), FD_PATH "/%s", ns, name);
        snprintf(what, sizeof(what), "DELETE flinkdeployment %s/%s", ns, name);
        return gp_k8s_call(k, "DELETE", path, NULL, NULL, what, NULL, NULL, err);
}

gp_errcode_t gp_flinkdep_upgrade_snapshot(gp_k8s_t *k, const char *ns, const char *name,
                                          const cJSON *fd, const char *path,
                                          gp_flinkdep_snap_t *state, char *seen, size_t len,
                                          gp_err_t *err) {
        char url[512], what[256], buf[16];
        cJSON *list = NULL;
        if (!strcmp(gp_flinkdep_conf(fd, SNAPSHOTS_KEY, buf, sizeof(buf)), "false")) {
                *state = GP_FLINKDEP_SNAP_NONE;
                return GP_OK;
        }
        snprintf(url, sizeof(url),
                 "/apis/flink.apache.org/v1beta1/namespaces/%s/flinkstatesnapshots"
                 "?labelSelector=job-reference.name%%3D%s,snapshot.trigger-type%%3DUPGRADE",
                 ns, name);
        snprintf(what, sizeof(what), "LIST flinkstatesnapshots %s (of %s)", ns, name);
        gp_errcode_t rc = gp_k8s_call(k, "GET", url, NULL, NULL, what, &list, NULL, err);
        if (rc == GP_ERR_NOT_FOUND) {
                *state = GP_FLINKDEP_SNAP_NONE; /* the CRD is not installed */
                return GP_OK;
        }
        if (rc)
                return rc;
        *state = GP_FLINKDEP_SNAP_ABSENT;
        snprintf(seen, len, "no UPGRADE FlinkStateSnapshot of %s for it", name);
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items")) {
                /* spec.savepoint.path from its creation (the operator makes
                 * it before it sets upgradeSavepointPath); status.path once
                 * its own controller has seen it. */
                if (strcmp(gp_flinkdep_str(it, "status", "path", NULL), path) &&
                    strcmp(gp_flinkdep_str(it, "spec", "savepoint", "path", NULL), path))
                        continue;
                const char *st = gp_flinkdep_str(it, "status", "state", NULL);
                snprintf(seen, len, "FlinkStateSnapshot %s is %s",
                         gp_flinkdep_str(it, "metadata", "name", NULL),
                         *st ? st : "(no state)");
                if (!strcmp(st, "COMPLETED"))
                        *state = GP_FLINKDEP_SNAP_COMPLETED;
                else if (*state != GP_FLINKDEP_SNAP_COMPLETED)
                        *state = GP_FLINKDEP_SNAP_PENDING;
        }
        cJSON_Delete(list);
        return GP_OK;
}

gp_errcode_t gp_flinkdep_checkpoint(gp_k8s_t *k, const char *ns, const char *fd,
                                    const char *snap, gp_err_t *err) {
        char path[512], what[256];
        cJSON *m = cJSON_CreateObject();
        cJSON *meta = cJSON_AddObjectToObject(m, "metadata");
        cJSON *spec = cJSON_AddObjectToObject(m, "spec");
        cJSON *ref = cJSON_AddObjectToObject(spec, "jobReference");
        cJSON_AddStringToObject(m, "apiVersion", "flink.apache.org/v1beta1");
        cJSON_AddStringToObject(m, "kind", "FlinkStateSnapshot");
        cJSON_AddStringToObject(meta, "name", snap);
        cJSON_AddObjectToObject(spec, "checkpoint");
        cJSON_AddNumberToObject(spec, "backoffLimit", 0);
        cJSON_AddStringToObject(ref, "kind", "FlinkDeployment");
        cJSON_AddStringToObject(ref, "name", fd);
        char *body = cJSON_PrintUnformatted(m);
        cJSON_Delete(m);
        if (!body)
                return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        snprintf(path, sizeof(path),
                 "/apis/flink.apache.org/v1beta1/namespaces/%s/flinkstatesnapshots", ns);
        snprintf(what, sizeof(what), "POST flinkstatesnapshot %s/%s (a checkpoint of %s)", ns,
                 snap, fd);
        gp_errcode_t rc =
                gp_k8s_call(k, "POST", path, "application/json", body, what, NULL, NULL, err);
        free(body);
        return rc;
}
