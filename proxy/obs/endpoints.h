/* proxy/obs/endpoints.h: the proxy's HTTP endpoints (http.listen), served by
 * libmicrohttpd on a thread of its own:
 *
 *   /metrics  Prometheus text format 0.0.4, prefix gate_proxy_
 *   /livez    200 unless the loop has made no progress for a bound (a
 *             broker, API server or map in trouble never fails it)
 *   /healthz  the same as /livez
 *   /readyz   200 while routing: the map valid, every partition read, not
 *             stopping; 503 otherwise; ?verbose lists each check
 *
 * GET and HEAD only (405 otherwise). The handlers read the proxy's
 * statistics snapshot (gp_proxy_stats), which the loop updates between
 * transactions; they never touch a Kafka handle. */
#ifndef GP_PROXY_OBS_ENDPOINTS_H
#define GP_PROXY_OBS_ENDPOINTS_H

#include <stddef.h>

#include "proxy/conf/conf.h"
#include "proxy/loop/proxy.h"

typedef struct gp_endpoints gp_endpoints_t;

/* Listens on conf->http_listen for p. NULL with err (a bad address, the
 * port in use). */
gp_endpoints_t *gp_endpoints_start(const gp_conf_t *conf, gp_proxy_t *p, gp_err_t *err);
void gp_endpoints_stop(gp_endpoints_t *h);

#endif
