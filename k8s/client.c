/* k8s/client.c: ConfigMap GET / PATCH / POST and the raw watch stream,
 * with bearer-token refresh. May use gate/ and k8s/; libcurl, cJSON. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "k8s/client.h"
#include "k8s/http.h"
#include "k8s/wire.h"
#include "os/clock.h"
#include "os/file.h"

#define TOKEN_MAX (64 * 1024)

struct gp_k8s {
        gp_k8s_conf_t *conf;
        long connect_ms, request_ms;

        pthread_mutex_t req_lock; /* guards req */
        CURL *req;                /* GET / PATCH / POST */

        pthread_mutex_t tok_lock; /* guards the token cache */
        char *token;              /* from token_file */
        int64_t token_read;       /* monotonic ms, 0: read it */
};

static int nomem(gp_err_t *err) {
        return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
}

static void wipe(char *s) {
        if (s) {
                memset(s, 0, strlen(s));
                free(s);
        }
}

gp_k8s_t *gp_k8s_new(gp_k8s_conf_t *conf, gp_err_t *err) {
        gp_k8s_t *k;
        if (!conf) {
                gp_err_set(err, GP_ERR_INVALID, "no configuration");
                return NULL;
        }
        if (gp_http_global_init()) {
                gp_k8s_conf_destroy(conf);
                gp_err_set(err, GP_ERR_FAIL, "libcurl did not initialise");
                return NULL;
        }
        if (!(k = calloc(1, sizeof(*k))) || !(k->req = curl_easy_init())) {
                free(k);
                gp_k8s_conf_destroy(conf);
                nomem(err);
                return NULL;
        }
        k->conf = conf;
        k->connect_ms = 5000;
        k->request_ms = 10000;
        pthread_mutex_init(&k->req_lock, NULL);
        pthread_mutex_init(&k->tok_lock, NULL);
        return k;
}

void gp_k8s_destroy(gp_k8s_t *k) {
        if (!k)
                return;
        curl_easy_cleanup(k->req);
        wipe(k->token);
        pthread_mutex_destroy(&k->req_lock);
        pthread_mutex_destroy(&k->tok_lock);
        gp_k8s_conf_destroy(k->conf);
        free(k);
}

const gp_k8s_conf_t *gp_k8s_conf(const gp_k8s_t *k) {
        return k->conf;
}

void gp_k8s_set_timeouts(gp_k8s_t *k, long connect_ms, long request_ms) {
        k->connect_ms = connect_ms;
        k->request_ms = request_ms;
}

/* Reads the token file: at most 64 KiB, surrounding whitespace trimmed. */
static char *read_token(const char *path, gp_err_t *err) {
        size_t got;
        char *buf = gp_file_read(path, TOKEN_MAX, &got, err);
        if (!buf) {
                gp_err_prefix(err, "token file");
                return NULL;
        }
        while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r' || buf[got - 1] == ' ' ||
                       buf[got - 1] == '\t'))
                buf[--got] = '\0';
        size_t lead = strspn(buf, " \t\r\n");
        memmove(buf, buf + lead, got - lead + 1);
        if (!buf[0]) {
                gp_err_set(err, GP_ERR_INVALID, "token file %s: empty", path);
                free(buf);
                return NULL;
        }
        for (const char *p = buf; *p; p++)
                if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) {
                        gp_err_set(err, GP_ERR_INVALID,
                                   "token file %s: not a token (control or "
                                   "non-ASCII bytes)",
                                   path);
                        wipe(buf);
                        return NULL;
                }
        return buf;
}

/* A copy of the bearer token to send (NULL: none; caller wipes it).
 * refresh: re-read the token file now (after a 401). 0 or the error. */
static int bearer(gp_k8s_t *k, bool refresh, char **out, gp_err_t *err) {
        *out = NULL;
        if (k->conf->token) {
                if (!(*out = strdup(k->conf->token)))
                        return nomem(err);
                return 0;
        }
        if (!k->conf->token_file)
                return 0; /* a client certificate */
        pthread_mutex_lock(&k->tok_lock);
        int64_t now = gp_mono_ms();
        if (refresh || !k->token || now - k->token_read >= GP_K8S_TOKEN_TTL_MS) {
                char *t = read_token(k->conf->token_file, err);
                if (!t && !k->token) {
                        pthread_mutex_unlock(&k->tok_lock);
                        return gp_err_code(err);
                }
                if (t) { /* a failed re-read keeps the token we have */
                        wipe(k->token);
                        k->token = t;
                        k->token_read = now;
                }
        }
        *out = strdup(k->token);
        pthread_mutex_unlock(&k->tok_lock);
        return *out ? 0 : nomem(err);
}

static void token_expire(gp_k8s_t *k) {
        pthread_mutex_lock(&k->tok_lock);
        k->token_read = 0;
        pthread_mutex_unlock(&k->tok_lock);
}

static int check_names(const char *ns, const char *name, gp_err_t *err) {
        if (!gp_k8s_namespace_ok(ns))
                return gp_err_set(
                        err, GP_ERR_INVALID,
                        "namespace \"%.80s\": not a valid namespace name (lower-case "
                        "letters, digits and '-', at most 63)",
                        ns ? ns : "");
        if (!gp_k8s_name_ok(name))
                return gp_err_set(err, GP_ERR_INVALID,
                                  "ConfigMap name \"%.80s\": not a valid name (lower-case "
                                  "letters, digits, '-' and '.', at most 253)",
                                  name ? name : "");
        return 0;
}

/* One request on the shared handle; a 401 with a token file re-reads the
 * token and tries once more. 0 when a response came (GP_ERR_TRANSPORT
 * when none did). */
static int call(gp_k8s_t *k, const char *what, const char *method, const char *path,
                const char *ctype, const char *body, gp_http_resp_t *resp, gp_err_t *err) {
        size_t n = strlen(k->conf->server) + strlen(path) + 1;
        char *url = malloc(n);
        int rc = GP_ERR_FAIL;
        if (!url)
                return nomem(err);
        snprintf(url, n, "%s%s", k->conf->server, path);
        for (int attempt = 0; attempt < 2; attempt++) {
                char *tok = NULL;
                if ((rc = bearer(k, attempt > 0, &tok, err))) {
                        gp_err_prefix(err, "%s", what);
                        break;
                }
                gp_http_req_t req = {.method = method,
                                     .url = url,
                                     .token = tok,
                                     .content_type = ctype,
                                     .body = body,
                                     .connect_timeout_ms = k->connect_ms,
                                     .timeout_ms = k->request_ms};
                pthread_mutex_lock(&k->req_lock);
                rc = gp_http_do(k->req, k->conf, &req, resp, err);
                pthread_mutex_unlock(&k->req_lock);
                wipe(tok);
                if (rc)
                        gp_err_prefix(err, "%s", what);
                if (rc || resp->status != 401 || !k->conf->token_file || attempt)
                        break;
                gp_http_resp_clear(resp);
                rc = GP_ERR_FAIL;
        }
        if (rc == 0 && resp->status == 401)
                token_expire(k);
        free(url);
        return rc;
}

/* The object in a 2xx response. */
static int parse_object(const gp_http_resp_t *resp, const char *what, gp_cm_t **out,
                        gp_err_t *err) {
        if (!out)
                return GP_OK;
        if (!(*out = gp_cm_parse(resp->body ? resp->body : "", resp->len, err)))
                return gp_err_prefix(err, "%s: the response is not a ConfigMap", what);
        return GP_OK;
}

gp_errcode_t gp_k8s_status_code(long status) {
        if (status == 409)
                return GP_ERR_CONFLICT;
        if (status == 404)
                return GP_ERR_NOT_FOUND;
        if (status == 401 || status == 403)
                return GP_ERR_DENIED;
        if (status == 429 || status >= 500)
                return GP_ERR_TRANSPORT;
        if (status == 400 || status == 422)
                return GP_ERR_INVALID;
        return GP_ERR_FAIL;
}

/* Maps a response to a result code; err gets the Status message. */
static int result(const gp_http_resp_t *resp, const char *what, gp_err_t *err) {
        char msg[700];
        if (resp->status >= 200 && resp->status < 300)
                return GP_OK;
        gp_k8s_status_message(resp->status, resp->body, resp->len, msg, sizeof(msg));
        return gp_err_set(err, gp_k8s_status_code(resp->status), "%s: %s", what, msg);
}

gp_errcode_t gp_k8s_cm_get(gp_k8s_t *k, const char *ns, const char *name, gp_cm_t **out,
                           long *http, gp_err_t *err) {
        char path[512], what[400];
        gp_http_resp_t resp;
        int rc;
        *out = NULL;
        if (http)
                *http = 0;
        if (check_names(ns, name, err))
                return GP_ERR_INVALID;
        snprintf(what, sizeof(what), "GET configmap %s/%s", ns, name);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
        if ((rc = call(k, what, "GET", path, NULL, NULL, &resp, err)))
                return rc;
        if (http)
                *http = resp.status;
        if ((rc = result(&resp, what, err)) == GP_OK)
                rc = parse_object(&resp, what, out, err);
        gp_http_resp_clear(&resp);
        return rc;
}

/* Sends body (freed here) and parses the ConfigMap the API answers with. */
static int send_object(gp_k8s_t *k, const char *what, const char *method, const char *path,
                       const char *ctype, char *body, gp_cm_t **out, gp_err_t *err) {
        gp_http_resp_t resp;
        int rc = call(k, what, method, path, ctype, body, &resp, err);
        free(body);
        if (rc)
                return rc;
        if ((rc = result(&resp, what, err)) == GP_OK)
                rc = parse_object(&resp, what, out, err);
        gp_http_resp_clear(&resp);
        return rc;
}

gp_errcode_t gp_k8s_cm_patch(gp_k8s_t *k, const char *ns, const char *name,
                             const char *expected_rv, const gp_kv_t *kv, size_t n,
                             gp_cm_t **out, gp_err_t *err) {
        char path[512], what[400];
        char *body;
        if (out)
                *out = NULL;
        if (check_names(ns, name, err))
                return GP_ERR_INVALID;
        if (!(body = gp_k8s_merge_patch(expected_rv, kv, n)))
                return nomem(err);
        snprintf(what, sizeof(what), "PATCH configmap %s/%s", ns, name);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
        return send_object(k, what, "PATCH", path, "application/merge-patch+json", body, out,
                           err);
}

gp_errcode_t gp_k8s_cm_create(gp_k8s_t *k, const char *ns, const char *name, const gp_kv_t *kv,
                              size_t n, gp_cm_t **out, gp_err_t *err) {
        char path[512], what[400];
        char *body;
        int rc;
        if (out)
                *out = NULL;
        if (check_names(ns, name, err))
                return GP_ERR_INVALID;
        if (!(body = gp_k8s_configmap_body(ns, name, kv, n)))
                return nomem(err);
        snprintf(what, sizeof(what), "POST configmap %s/%s", ns, name);
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
        rc = send_object(k, what, "POST", path, "application/json", body, out, err);
        if (rc == GP_ERR_NOT_FOUND) /* the namespace: not "the object is absent" */
                rc = err ? (err->code = GP_ERR_FAIL) : GP_ERR_FAIL;
        return rc;
}

gp_errcode_t gp_k8s_call(gp_k8s_t *k, const char *method, const char *path, const char *ctype,
                         const char *body, const char *what, cJSON **out, long *http,
                         gp_err_t *err) {
        gp_http_resp_t resp;
        int rc;
        if (out)
                *out = NULL;
        if (http)
                *http = 0;
        if ((rc = call(k, what, method, path, ctype, body, &resp, err)))
                return rc;
        if (http)
                *http = resp.status;
        if ((rc = result(&resp, what, err)) == GP_OK && out &&
            !(*out = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.len)))
                rc = gp_err_set(err, GP_ERR_FAIL, "%s: the answer is not JSON", what);
        gp_http_resp_clear(&resp);
        return rc;
}

gp_errcode_t gp_k8s_stream(gp_k8s_t *k, const char *path, long timeout_ms,
                           int (*sink)(void *, const char *, size_t), int (*stop)(void *),
                           void *opaque, long *http, gp_err_t *err) {
        size_t n = strlen(k->conf->server) + strlen(path) + 1;
        char *url = NULL, *tok = NULL;
        gp_http_resp_t resp;
        CURL *h = NULL;
        int rc;
        *http = 0;
        if (!(url = malloc(n)) || !(h = curl_easy_init())) {
                rc = nomem(err);
                goto out;
        }
        snprintf(url, n, "%s%s", k->conf->server, path);
        if ((rc = bearer(k, false, &tok, err)))
                goto out;
        gp_http_req_t req = {.method = "GET",
                             .url = url,
                             .token = tok,
                             .connect_timeout_ms = k->connect_ms,
                             .timeout_ms = timeout_ms,
                             .sink = sink,
                             .stop = stop,
                             .opaque = opaque};
        rc = gp_http_do(h, k->conf, &req, &resp, err);
        *http = resp.status;
        if (rc == 0 && (resp.status < 200 || resp.status >= 300)) {
                char msg[700];
                gp_k8s_status_message(resp.status, resp.body, resp.len, msg, sizeof(msg));
                gp_err_set(err, gp_k8s_status_code(resp.status), "%s", msg);
        }
        if (resp.status == 401)
                token_expire(k);
        gp_http_resp_clear(&resp);
out:
        wipe(tok);
        if (h)
                curl_easy_cleanup(h);
        free(url);
        return rc;
}
