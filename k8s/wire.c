/* k8s/wire.c: watch events, Status messages, patch bodies, the line
 * splitter. Pure: cJSON and gate/; no I/O, no libcurl. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/wire.h"

static const char *const ev_names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

const char *gp_k8s_ev_name(gp_k8s_ev_type_t t) {
        return (unsigned)t < sizeof(ev_names) / sizeof(ev_names[0]) ? ev_names[t] : "?";
}

void gp_k8s_event_clear(gp_k8s_event_t *ev) {
        free(ev->object);
        memset(ev, 0, sizeof(*ev));
}

/* Copies printable ASCII of s (at most n bytes) into out. */
static void printable(const char *s, size_t n, char *out, size_t outlen) {
        size_t o = 0;
        for (size_t i = 0; i < n && o + 1 < outlen; i++) {
                unsigned char c = (unsigned char)s[i];
                out[o++] = c >= 0x20 && c < 0x7f    ? (char)c
                           : c == '\n' || c == '\t' ? ' '
                                                    : '?';
        }
        if (outlen)
                out[o] = '\0';
}

gp_errcode_t gp_k8s_event_parse(const char *line, size_t len, gp_k8s_event_t *ev,
                                gp_err_t *err) {
        cJSON *doc = NULL, *type, *obj, *md, *rv;
        const char *end = NULL;
        gp_errcode_t rc = GP_ERR_INVALID;
        memset(ev, 0, sizeof(*ev));
        if (len > GP_K8S_MAX_EVENT)
                return gp_err_set(err, GP_ERR_INVALID, "watch event of %zu bytes is too large",
                                  len);
        if (!(doc = cJSON_ParseWithLengthOpts(line, len, &end, 0)))
                return gp_err_set(err, GP_ERR_INVALID,
                                  "watch event: not JSON (syntax error at byte %zu)",
                                  end && end >= line && end <= line + len
                                          ? (size_t)(end - line)
                                          : (size_t)0);
        while (end && end < line + len && (*end == ' ' || *end == '\t' || *end == '\r'))
                end++;
        if (end && end < line + len) {
                rc = gp_err_set(err, GP_ERR_INVALID, "watch event: trailing data at byte %zu",
                                (size_t)(end - line));
                goto out;
        }
        type = cJSON_GetObjectItemCaseSensitive(doc, "type");
        obj = cJSON_GetObjectItemCaseSensitive(doc, "object");
        if (!cJSON_IsObject(doc) || !cJSON_IsString(type)) {
                rc = gp_err_set(err, GP_ERR_INVALID, "watch event: no \"type\"");
                goto out;
        }
        size_t t;
        for (t = 0; t < sizeof(ev_names) / sizeof(ev_names[0]); t++)
                if (!strcmp(type->valuestring, ev_names[t]))
                        break;
        if (t == sizeof(ev_names) / sizeof(ev_names[0])) {
                char shown[40];
                printable(type->valuestring, strlen(type->valuestring), shown, sizeof(shown));
                rc = gp_err_set(err, GP_ERR_INVALID, "watch event: unknown type \"%s\"",
                                shown);
                goto out;
        }
        ev->type = (gp_k8s_ev_type_t)t;
        if (!cJSON_IsObject(obj)) {
                rc = gp_err_set(err, GP_ERR_INVALID, "watch event %s: no \"object\"",
                                ev_names[t]);
                goto out;
        }
        if (ev->type == GP_K8S_EV_ERROR) {
                cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
                cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
                char m[400];
                ev->code = cJSON_IsNumber(code) && code->valuedouble >= 0 &&
                                           code->valuedouble < 1000
                                   ? (long)code->valuedouble
                                   : 0;
                if (cJSON_IsString(msg))
                        printable(msg->valuestring, strlen(msg->valuestring), m, sizeof(m));
                else
                        snprintf(m, sizeof(m), "no message");
                const char *reason = gp_k8s_http_reason(ev->code);
                snprintf(ev->message, sizeof(ev->message), "%ld%s%s: %s", ev->code,
                         *reason ? " " : "", reason, m);
                rc = GP_OK;
                goto out;
        }
        cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
        if (ev->type != GP_K8S_EV_BOOKMARK && kind &&
            (!cJSON_IsString(kind) || strcmp(kind->valuestring, "ConfigMap"))) {
                rc = gp_err_set(err, GP_ERR_INVALID,
                                "watch event %s: object is not a ConfigMap", ev_names[t]);
                goto out;
        }
        md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        rv = cJSON_IsObject(md) ? cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")
                                : NULL;
        if (!cJSON_IsString(rv) || !rv->valuestring[0] ||
            strlen(rv->valuestring) >= sizeof(ev->rv)) {
                rc = gp_err_set(err, GP_ERR_INVALID,
                                "watch event %s: no valid metadata.resourceVersion",
                                ev_names[t]);
                goto out;
        }
        snprintf(ev->rv, sizeof(ev->rv), "%s", rv->valuestring);
        if (ev->type != GP_K8S_EV_BOOKMARK && !(ev->object = cJSON_PrintUnformatted(obj))) {
                rc = gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                goto out;
        }
        rc = GP_OK;
out:
        cJSON_Delete(doc);
        if (rc)
                gp_k8s_event_clear(ev);
        return rc;
}

const char *gp_k8s_http_reason(long status) {
        switch (status) {
        case 200:
                return "OK";
        case 201:
                return "Created";
        case 400:
                return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 406:
                return "Not Acceptable";
        case 409:
                return "Conflict";
        case 410:
                return "Gone";
        case 413:
                return "Request Entity Too Large";
        case 415:
                return "Unsupported Media Type";
        case 422:
                return "Unprocessable Entity";
        case 429:
                return "Too Many Requests";
        case 500:
                return "Internal Server Error";
        case 502:
                return "Bad Gateway";
        case 503:
                return "Service Unavailable";
        case 504:
                return "Gateway Timeout";
        default:
                return "";
        }
}

void gp_k8s_status_message(long status, const char *body, size_t len, char *out,
                           size_t outlen) {
        const char *reason = gp_k8s_http_reason(status);
        char m[400] = "";
        cJSON *doc = body && len ? cJSON_ParseWithLength(body, len) : NULL;
        cJSON *msg = doc ? cJSON_GetObjectItemCaseSensitive(doc, "message") : NULL;
        if (cJSON_IsString(msg) && msg->valuestring[0])
                printable(msg->valuestring, strlen(msg->valuestring), m, sizeof(m));
        else if (body && len) {
                /* Not a Status: a proxy's or load balancer's page. */
                size_t n = len < 200 ? len : 200;
                printable(body, n, m, sizeof(m));
                while (*m && m[strlen(m) - 1] == ' ')
                        m[strlen(m) - 1] = '\0';
        }
        cJSON_Delete(doc);
        snprintf(out, outlen, "%ld%s%s%s%s", status, *reason ? " " : "", reason,
                 *m ? ": " : "", m);
}

char *gp_k8s_merge_patch(const char *rv, const gp_kv_t *kv, size_t n) {
        cJSON *doc = cJSON_CreateObject(), *data;
        char *out = NULL;
        if (!doc)
                return NULL;
        if (rv) {
                cJSON *md = cJSON_AddObjectToObject(doc, "metadata");
                if (!md || !cJSON_AddStringToObject(md, "resourceVersion", rv))
                        goto out;
        }
        if (!(data = cJSON_AddObjectToObject(doc, "data")))
                goto out;
        for (size_t i = 0; i < n; i++) {
                /* A later entry for the same key wins, as in gp_cm_set. */
                cJSON_DeleteItemFromObjectCaseSensitive(data, kv[i].key);
                if (!(kv[i].value ? cJSON_AddStringToObject(data, kv[i].key, kv[i].value)
                                  : cJSON_AddNullToObject(data, kv[i].key)))
                        goto out;
        }
        out = cJSON_PrintUnformatted(doc);
out:
        cJSON_Delete(doc);
        return out;
}

char *gp_k8s_configmap_body(const char *ns, const char *name, const gp_kv_t *kv, size_t n) {
        cJSON *doc = cJSON_CreateObject(), *md, *data;
        char *out = NULL;
        if (!doc)
                return NULL;
        if (!cJSON_AddStringToObject(doc, "apiVersion", "v1") ||
            !cJSON_AddStringToObject(doc, "kind", "ConfigMap") ||
            !(md = cJSON_AddObjectToObject(doc, "metadata")) ||
            !cJSON_AddStringToObject(md, "name", name) ||
            !cJSON_AddStringToObject(md, "namespace", ns) ||
            !(data = cJSON_AddObjectToObject(doc, "data")))
                goto out;
        for (size_t i = 0; i < n; i++) {
                cJSON_DeleteItemFromObjectCaseSensitive(data, kv[i].key);
                if (kv[i].value && !cJSON_AddStringToObject(data, kv[i].key, kv[i].value))
                        goto out;
        }
        out = cJSON_PrintUnformatted(doc);
out:
        cJSON_Delete(doc);
        return out;
}

static int decimal(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= 19 && strspn(s, "0123456789") == n;
}

int gp_k8s_rv_cmp(const char *a, const char *b) {
        if (!strcmp(a, b))
                return 0;
        if (!decimal(a) || !decimal(b))
                return 2;
        while (*a == '0' && a[1])
                a++;
        while (*b == '0' && b[1])
                b++;
        size_t la = strlen(a), lb = strlen(b);
        if (la != lb)
                return la < lb ? -1 : 1;
        int c = strcmp(a, b);
        return c < 0 ? -1 : c > 0;
}

/* ---- lines ------------------------------------------------------------- */

void gp_k8s_lines_init(gp_k8s_lines_t *l, size_t max) {
        memset(l, 0, sizeof(*l));
        l->max = max;
}

void gp_k8s_lines_reset(gp_k8s_lines_t *l) {
        l->len = 0;
}

void gp_k8s_lines_free(gp_k8s_lines_t *l) {
        free(l->buf);
        l->buf = NULL;
        l->len = l->cap = 0;
}

static int append(gp_k8s_lines_t *l, const char *p, size_t n) {
        if (l->len + n > l->max)
                return -1;
        if (l->len + n > l->cap) {
                size_t cap = l->cap ? l->cap : 4096;
                while (cap < l->len + n)
                        cap *= 2;
                if (cap > l->max)
                        cap = l->max;
                char *b = realloc(l->buf, cap);
                if (!b)
                        return -1;
                l->buf = b;
                l->cap = cap;
        }
        memcpy(l->buf + l->len, p, n);
        l->len += n;
        return 0;
}

static int emit(const char *s, size_t n, gp_k8s_line_fn fn, void *opaque) {
        while (n && s[n - 1] == '\r')
                n--;
        if (!n)
                return 0;
        return fn(opaque, s, n) ? 1 : 0;
}

int gp_k8s_lines_feed(gp_k8s_lines_t *l, const char *p, size_t n, gp_k8s_line_fn fn,
                      void *opaque) {
        while (n) {
                const char *nl = memchr(p, '\n', n);
                if (!nl)
                        return append(l, p, n);
                size_t k = (size_t)(nl - p);
                int rc;
                if (l->len) { /* finish the buffered line */
                        if (append(l, p, k))
                                return -1;
                        size_t len = l->len;
                        l->len = 0;
                        rc = emit(l->buf, len, fn, opaque);
                } else {
                        if (k > l->max)
                                return -1;
                        rc = emit(p, k, fn, opaque); /* straight from the input */
                }
                p = nl + 1;
                n -= k + 1;
                if (rc)
                        return 1;
        }
        return 0;
}
