/* k8s/http.c: one HTTPS exchange over libcurl (see k8s/http.h).
 * May use k8s/kubeconfig.h; libcurl. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/http.h"

#define USER_AGENT "gate-proxy/" GP_VERSION

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void) {
        global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int gp_http_global_init(void) {
        pthread_once(&once, global_init);
        return global_rc == CURLE_OK ? 0 : -1;
}

void gp_http_resp_clear(gp_http_resp_t *resp) {
        free(resp->body);
        memset(resp, 0, sizeof(*resp));
}

typedef struct {
        const gp_http_req_t *req;
        gp_http_resp_t *resp;
        CURL *h;
        int over;    /* the body went over the cap */
        int sunk;    /* the sink ended the transfer */
        int stopped; /* stop() ended it */
} xfer_t;

static int keep(xfer_t *x, const char *p, size_t n) {
        gp_http_resp_t *r = x->resp;
        if (r->len + n > GP_HTTP_MAX_BODY) {
                x->over = 1;
                return -1;
        }
        char *b = realloc(r->body, r->len + n + 1);
        if (!b)
                return -1;
        memcpy(b + r->len, p, n);
        r->body = b;
        r->len += n;
        b[r->len] = '\0';
        return 0;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *opaque) {
        xfer_t *x = opaque;
        size_t n = size * nmemb;
        long status = 0;
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
        /* Only a 2xx body is a stream; an error's body is a Status to keep. */
        if (x->req->sink && status >= 200 && status < 300) {
                if (x->req->sink(x->req->opaque, p, n)) {
                        x->sunk = 1;
                        return 0;
                }
                return n;
        }
        return keep(x, p, n) ? 0 : n;
}

static int on_progress(void *opaque, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                       curl_off_t un) {
        xfer_t *x = opaque;
        (void)dt, (void)dn, (void)ut, (void)un;
        if (x->req->stop && x->req->stop(x->req->opaque)) {
                x->stopped = 1;
                return 1;
        }
        return 0;
}

/* "URL: reason", the URL without its query (the server and the object). */
__attribute__((format(printf, 4, 5))) static int
seterr(const gp_http_req_t *req, gp_err_t *err, gp_errcode_t code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_err_vset(err, code, fmt, ap);
        va_end(ap);
        gp_err_prefix(err, "%.*s", (int)strcspn(req->url, "?"), req->url);
        return code;
}

static int refused(const gp_http_req_t *req, CURLcode rc, gp_err_t *err) {
        return seterr(req, err, GP_ERR_FAIL, "libcurl refused an option: %s%s",
                      curl_easy_strerror(rc),
                      rc == CURLE_NOT_BUILT_IN || rc == CURLE_UNKNOWN_OPTION
                              ? " (libcurl 7.85 or newer with OpenSSL is needed)"
                              : "");
}

int gp_http_do(CURL *h, const gp_k8s_conf_t *tls, const gp_http_req_t *req,
               gp_http_resp_t *resp, gp_err_t *err) {
        struct curl_slist *hdrs = NULL, *nh;
        char ebuf[CURL_ERROR_SIZE] = "", line[256];
        char *auth = NULL;
        xfer_t x = {req, resp, h, 0, 0, 0};
        CURLcode rc = CURLE_OK;
        int ret = GP_ERR_FAIL;

        memset(resp, 0, sizeof(*resp));
        gp_err_clear(err);
        if (gp_http_global_init())
                return seterr(req, err, GP_ERR_FAIL, "libcurl did not initialise");
        curl_easy_reset(h);

        /* Headers. The token goes only into this list, never into a message. */
#define HDR(s)                                                                                \
        do {                                                                                  \
                if (!(nh = curl_slist_append(hdrs, (s)))) {                                   \
                        ret = seterr(req, err, GP_ERR_NOMEM, "out of memory");                \
                        goto out;                                                             \
                }                                                                             \
                hdrs = nh;                                                                    \
        } while (0)
        HDR("Accept: application/json");
        if (req->token) {
                size_t n = strlen(req->token) + 32;
                if (!(auth = malloc(n))) {
                        ret = seterr(req, err, GP_ERR_NOMEM, "out of memory");
                        goto out;
                }
                snprintf(auth, n, "Authorization: Bearer %s", req->token);
                HDR(auth);
        }
        if (req->body) {
                snprintf(line, sizeof(line), "Content-Type: %s",
                         req->content_type ? req->content_type : "application/json");
                HDR(line);
        }
        HDR("Expect:"); /* no 100-continue round trip */
#undef HDR

#define SET(opt, val)                                                                         \
        do {                                                                                  \
                if ((rc = curl_easy_setopt(h, opt, val)) != CURLE_OK) {                       \
                        ret = refused(req, rc, err);                                          \
                        goto out;                                                             \
                }                                                                             \
        } while (0)
        SET(CURLOPT_URL, req->url);
        SET(CURLOPT_ERRORBUFFER, ebuf);
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_PROTOCOLS_STR, "https");
        SET(CURLOPT_REDIR_PROTOCOLS_STR, "https");
        SET(CURLOPT_FOLLOWLOCATION, 0L);
        SET(CURLOPT_USERAGENT, USER_AGENT);
        SET(CURLOPT_HTTPHEADER, hdrs);
        SET(CURLOPT_CONNECTTIMEOUT_MS,
            req->connect_timeout_ms > 0 ? req->connect_timeout_ms : 10000L);
        SET(CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 30000L);
        SET(CURLOPT_TCP_KEEPALIVE, 1L);
        SET(CURLOPT_TCP_KEEPIDLE, 30L);
        SET(CURLOPT_TCP_KEEPINTVL, 10L);
        SET(CURLOPT_WRITEFUNCTION, on_write);
        SET(CURLOPT_WRITEDATA, &x);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, &x);
        SET(CURLOPT_PROXY, ""); /* the API server directly, whatever *_proxy says */
        /* HTTP/1.1: kube-apiserver answers a refused token with 401 and an
         * HTTP/2 GOAWAY, and libcurl (7.88) then reports a PATCH or POST
         * whose body it was sending as a failed transfer instead of the
         * 401, so the token file would not be re-read. One map needs no
         * multiplexing. */
        SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);

        /* TLS: always verified; with a cluster CA, only that CA. */
        SET(CURLOPT_SSL_VERIFYPEER, 1L);
        SET(CURLOPT_SSL_VERIFYHOST, 2L);
        if (tls->ca_data) {
                struct curl_blob b = {tls->ca_data, tls->ca_len, CURL_BLOB_COPY};
                SET(CURLOPT_CAINFO_BLOB, &b);
                SET(CURLOPT_CAPATH, NULL);
        } else if (tls->ca_file) {
                SET(CURLOPT_CAINFO, tls->ca_file);
                SET(CURLOPT_CAPATH, NULL);
        }
        if (tls->cert_data) {
                struct curl_blob b = {tls->cert_data, tls->cert_len, CURL_BLOB_COPY};
                SET(CURLOPT_SSLCERT_BLOB, &b);
                SET(CURLOPT_SSLCERTTYPE, "PEM");
        } else if (tls->cert_file) {
                SET(CURLOPT_SSLCERT, tls->cert_file);
                SET(CURLOPT_SSLCERTTYPE, "PEM");
        }
        if (tls->key_data) {
                struct curl_blob b = {tls->key_data, tls->key_len, CURL_BLOB_COPY};
                SET(CURLOPT_SSLKEY_BLOB, &b);
                SET(CURLOPT_SSLKEYTYPE, "PEM");
        } else if (tls->key_file) {
                SET(CURLOPT_SSLKEY, tls->key_file);
                SET(CURLOPT_SSLKEYTYPE, "PEM");
        }

        if (!strcmp(req->method, "GET")) {
                SET(CURLOPT_HTTPGET, 1L);
        } else {
                SET(CURLOPT_CUSTOMREQUEST, req->method);
                SET(CURLOPT_POSTFIELDS, req->body ? req->body : "");
                SET(CURLOPT_POSTFIELDSIZE_LARGE,
                    (curl_off_t)(req->body ? strlen(req->body) : 0));
        }
#undef SET

        rc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
        if (rc == CURLE_OK) {
                ret = GP_OK;
        } else if (x.over) {
                ret = seterr(req, err, GP_ERR_FAIL, "%ld: response body larger than %d bytes",
                             resp->status, GP_HTTP_MAX_BODY);
        } else if (x.sunk) {
                ret = seterr(req, err, GP_ERR_FAIL, "stream ended by its reader");
        } else if (x.stopped) {
                ret = seterr(req, err, GP_ERR_FAIL, "stopped");
        } else {
                /* libcurl's own message has the detail (host, port, TLS). */
                ret = seterr(req, err, GP_ERR_TRANSPORT, "%s",
                             ebuf[0] ? ebuf : curl_easy_strerror(rc));
        }
out:
        /* The handle keeps pointers to these: detach them first. */
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
        curl_slist_free_all(hdrs);
        if (auth) {
                memset(auth, 0, strlen(auth));
                free(auth);
        }
        if (ret) {
                long st = resp->status;
                gp_http_resp_clear(resp);
                resp->status = st;
        }
        return ret;
}
