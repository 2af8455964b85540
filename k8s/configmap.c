/* k8s/configmap.c: ConfigMap documents with cJSON.
 * May use gate/ and cJSON; no I/O, no librdkafka. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/configmap.h"

struct gp_cm {
        cJSON *doc;
        gp_kv_t *kv; /* view of data, rebuilt after each change */
        size_t n;
};

static int rebuild(gp_cm_t *cm) {
        cJSON *data = cJSON_GetObjectItemCaseSensitive(cm->doc, "data");
        size_t n = 0;
        cJSON *it;
        free(cm->kv);
        cm->kv = NULL;
        cm->n = 0;
        cJSON_ArrayForEach(it, data) n++;
        if (!n)
                return 0;
        if (!(cm->kv = calloc(n, sizeof(*cm->kv))))
                return -1;
        cJSON_ArrayForEach(it, data) {
                cm->kv[cm->n].key = it->string;
                cm->kv[cm->n].value = it->valuestring;
                cm->n++;
        }
        return 0;
}

gp_cm_t *gp_cm_parse(const char *buf, size_t len, gp_err_t *err) {
        const char *end = NULL;
        cJSON *doc, *it;
        gp_cm_t *cm;

        if (len == 0) {
                gp_err_set(err, GP_ERR_INVALID, "empty document");
                return NULL;
        }
        if (len > GP_CM_MAX_BYTES) {
                gp_err_set(err, GP_ERR_INVALID,
                           "document of %zu bytes is larger than the 1 MiB limit", len);
                return NULL;
        }
        if (memchr(buf, '\0', len)) {
                gp_err_set(err, GP_ERR_INVALID, "NUL byte at %zu (not JSON text)",
                           (size_t)((const char *)memchr(buf, '\0', len) - buf));
                return NULL;
        }
        doc = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
        if (!doc) {
                size_t off = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
                gp_err_set(err, GP_ERR_INVALID, "not JSON (syntax error at byte %zu)", off);
                return NULL;
        }
        if (end) {
                while (end < buf + len &&
                       (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
                        end++;
                if (end < buf + len) {
                        gp_err_set(err, GP_ERR_INVALID, "trailing data at byte %zu",
                                   (size_t)(end - buf));
                        goto fail;
                }
        }
        if (!cJSON_IsObject(doc)) {
                gp_err_set(err, GP_ERR_INVALID, "not a JSON object");
                goto fail;
        }
        /* The API server never sends a key twice; a document that does is
         * ambiguous (which "data" is meant?), so it is refused. */
        cJSON_ArrayForEach(it, doc) {
                for (cJSON *o = doc->child; o != it; o = o->next)
                        if (!strcmp(o->string, it->string)) {
                                gp_err_set(err, GP_ERR_INVALID, "%.100s: duplicate key",
                                           it->string);
                                goto fail;
                        }
        }
        it = cJSON_GetObjectItemCaseSensitive(doc, "kind");
        if (it && (!cJSON_IsString(it) || strcmp(it->valuestring, "ConfigMap"))) {
                gp_err_set(err, GP_ERR_INVALID, "kind: expected \"ConfigMap\"");
                goto fail;
        }
        it = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
        if (it && !cJSON_IsObject(it)) {
                gp_err_set(err, GP_ERR_INVALID, "metadata: not an object");
                goto fail;
        }
        cJSON *rv = it ? cJSON_GetObjectItemCaseSensitive(it, "resourceVersion") : NULL;
        if (rv && !cJSON_IsString(rv)) {
                gp_err_set(err, GP_ERR_INVALID, "metadata.resourceVersion: not a string");
                goto fail;
        }
        cJSON *data = cJSON_GetObjectItemCaseSensitive(doc, "data");
        if (data && !cJSON_IsObject(data) && !cJSON_IsNull(data)) {
                gp_err_set(err, GP_ERR_INVALID, "data: not an object");
                goto fail;
        }
        if (!data || cJSON_IsNull(data)) {
                cJSON_DeleteItemFromObjectCaseSensitive(doc, "data");
                cJSON_AddItemToObject(doc, "data", cJSON_CreateObject());
        } else {
                cJSON_ArrayForEach(it, data) {
                        if (!cJSON_IsString(it)) {
                                gp_err_set(err, GP_ERR_INVALID,
                                           "data.%.100s: not a string (ConfigMap "
                                           "values are strings; quote it)",
                                           it->string);
                                goto fail;
                        }
                        /* Duplicate keys: the API server keeps one; we refuse. */
                        for (cJSON *o = data->child; o != it; o = o->next)
                                if (!strcmp(o->string, it->string)) {
                                        gp_err_set(err, GP_ERR_INVALID,
                                                   "data.%.100s: duplicate key", it->string);
                                        goto fail;
                                }
                }
        }
        if (!(cm = calloc(1, sizeof(*cm))))
                goto nomem;
        cm->doc = doc;
        if (rebuild(cm)) {
                gp_cm_destroy(cm);
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        return cm;
nomem:
        gp_err_set(err, GP_ERR_NOMEM, "out of memory");
fail:
        cJSON_Delete(doc);
        return NULL;
}

gp_cm_t *gp_cm_new(const char *name, const char *ns) {
        gp_cm_t *cm = calloc(1, sizeof(*cm));
        if (!cm)
                return NULL;
        cm->doc = cJSON_CreateObject();
        cJSON *md = cJSON_CreateObject();
        cJSON_AddStringToObject(cm->doc, "apiVersion", "v1");
        cJSON_AddStringToObject(cm->doc, "kind", "ConfigMap");
        cJSON_AddStringToObject(md, "name", name);
        if (ns)
                cJSON_AddStringToObject(md, "namespace", ns);
        cJSON_AddStringToObject(md, "resourceVersion", "1");
        cJSON_AddItemToObject(cm->doc, "metadata", md);
        cJSON_AddItemToObject(cm->doc, "data", cJSON_CreateObject());
        return cm;
}

void gp_cm_destroy(gp_cm_t *cm) {
        if (!cm)
                return;
        cJSON_Delete(cm->doc);
        free(cm->kv);
        free(cm);
}

static const char *md_string(const gp_cm_t *cm, const char *key) {
        cJSON *md = cJSON_GetObjectItemCaseSensitive(cm->doc, "metadata");
        cJSON *v = md ? cJSON_GetObjectItemCaseSensitive(md, key) : NULL;
        return cJSON_IsString(v) ? v->valuestring : "";
}

const char *gp_cm_name(const gp_cm_t *cm) {
        return md_string(cm, "name");
}

const char *gp_cm_resource_version(const gp_cm_t *cm) {
        return md_string(cm, "resourceVersion");
}

int gp_cm_set_resource_version(gp_cm_t *cm, const char *rv) {
        cJSON *md = cJSON_GetObjectItemCaseSensitive(cm->doc, "metadata");
        if (!md) {
                if (!(md = cJSON_AddObjectToObject(cm->doc, "metadata")))
                        return -1;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
        return cJSON_AddStringToObject(md, "resourceVersion", rv) ? 0 : -1;
}

const gp_kv_t *gp_cm_data(const gp_cm_t *cm, size_t *n) {
        *n = cm->n;
        return cm->kv;
}

const char *gp_cm_get(const gp_cm_t *cm, const char *key) {
        for (size_t i = 0; i < cm->n; i++)
                if (!strcmp(cm->kv[i].key, key))
                        return cm->kv[i].value;
        return NULL;
}

int gp_cm_set(gp_cm_t *cm, const char *key, const char *value) {
        cJSON *data = cJSON_GetObjectItemCaseSensitive(cm->doc, "data");
        cJSON_DeleteItemFromObjectCaseSensitive(data, key);
        if (value && !cJSON_AddStringToObject(data, key, value))
                return -1;
        return rebuild(cm);
}

void gp_cm_remove_prefix(gp_cm_t *cm, const char *prefix) {
        cJSON *data = cJSON_GetObjectItemCaseSensitive(cm->doc, "data");
        size_t pl = strlen(prefix);
        cJSON *it = data->child;
        while (it) {
                cJSON *next = it->next;
                if (!strncmp(it->string, prefix, pl))
                        cJSON_Delete(cJSON_DetachItemViaPointer(data, it));
                it = next;
        }
        rebuild(cm);
}

char *gp_cm_render(const gp_cm_t *cm) {
        return cJSON_Print(cm->doc);
}

char *gp_cm_render_compact(const gp_cm_t *cm) {
        return cJSON_PrintUnformatted(cm->doc);
}
