/* k8s/http.h: one HTTPS exchange with the API server over libcurl, in the
 * manner of librdkafka's rdhttp.c: every option set on every request
 * (curl_easy_reset keeps the connection and TLS session caches), timeouts,
 * no signals, https only, no redirects, TLS verification always on, the
 * body of a response capped at 1 MiB (a streamed body goes to a sink that
 * bounds itself). No retries here: k8s/client.c decides.
 * May use k8s/kubeconfig.h; libcurl. Never prints the token. */
#ifndef GP_K8S_HTTP_H
#define GP_K8S_HTTP_H

#include <curl/curl.h>
#include <stddef.h>

#include "k8s/kubeconfig.h"

#define GP_HTTP_MAX_BODY (1024 * 1024)

typedef struct gp_http_req {
        const char *method; /* "GET", "PATCH", "POST" */
        const char *url;
        const char *token;        /* bearer token, or NULL */
        const char *content_type; /* of body, when there is one */
        const char *body;         /* NUL-terminated, or NULL */
        long connect_timeout_ms;
        long timeout_ms; /* the whole exchange */
        /* A streamed response: each piece of a 2xx body goes to sink
         * (non-zero from it ends the transfer) instead of being kept. */
        int (*sink)(void *opaque, const char *p, size_t n);
        /* Polled while the transfer runs (about once a second when idle);
         * non-zero ends it. */
        int (*stop)(void *opaque);
        void *opaque;
} gp_http_req_t;

typedef struct gp_http_resp {
        long status; /* 0 when no response header came */
        char *body;  /* NUL-terminated (a streamed 2xx body is not kept) */
        size_t len;
} gp_http_resp_t;

/* One exchange on handle h (made by curl_easy_init; one thread at a time).
 * Returns 0 when a complete response came (of any status), otherwise the
 * error with "URL: reason" in err (the URL without its query):
 * GP_ERR_TRANSPORT for no connection, a timeout or a TLS failure;
 * GP_ERR_FAIL for a body over the cap or an end by sink or stop
 * (resp->status may then be set). resp is cleared at entry; free it with gp_http_resp_clear. */
int gp_http_do(CURL *h, const gp_k8s_conf_t *tls, const gp_http_req_t *req,
               gp_http_resp_t *resp, gp_err_t *err);
void gp_http_resp_clear(gp_http_resp_t *resp);

/* curl_global_init, once per process (thread-safe). 0 or -1. */
int gp_http_global_init(void);

#endif
