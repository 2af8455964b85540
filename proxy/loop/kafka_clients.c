/* proxy/loop/kafka_clients.c: librdkafka client configuration (proxy/loop/kafka_clients.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/loop/kafka_clients.h"
#include "proxy/base/log.h"

bool gp_client_user_set(const gp_conf_t *conf, const char *role, const char *key) {
        size_t rl = strlen(role);
        for (int i = 0; i < conf->n_kafka; i++) {
                const char *k = conf->kafka[i].key;
                if (!strncmp(k, role, rl) && k[rl] == '.')
                        k += rl + 1;
                if (!strcmp(k, key))
                        return true;
        }
        return false;
}

void gp_client_set(rd_kafka_conf_t *kc, const char *k, const char *v, gp_err_t *err,
                   int *bad) {
        if (*bad)
                return;
        char why[512];
        if (rd_kafka_conf_set(kc, k, v, why, sizeof why) != RD_KAFKA_CONF_OK) {
                gp_err_set(err, GP_ERR_INVALID, "%s", why);
                *bad = 1;
        }
}

long long gp_client_conf_ll(rd_kafka_conf_t *kc, const char *key) {
        char v[32];
        size_t n = sizeof v;
        return rd_kafka_conf_get(kc, key, v, &n) == RD_KAFKA_CONF_OK ? strtoll(v, NULL, 10)
                                                                     : 0;
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
        (void)rk;
        gp_log_level_t l = level <= 3   ? GP_LOG_ERROR
                           : level <= 4 ? GP_LOG_WARN
                           : level <= 6 ? GP_LOG_INFO
                                        : GP_LOG_DEBUG;
        /* A broker's coordinator still loading (a fresh broker, a moved
         * coordinator) is retried by librdkafka itself; what does not
         * recover comes back as an error of the call. */
        if (l == GP_LOG_WARN && strstr(buf, "load in progress: retrying"))
                l = GP_LOG_DEBUG;
        gp_log(l, "librdkafka %s: %s", fac, buf);
}

rd_kafka_conf_t *gp_client_conf(const gp_conf_t *conf, const char *role, gp_err_t *err) {
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        int bad = 0;
        size_t rl = strlen(role);
        if (!kc) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        for (const gp_kafka_default_t *d = gp_bounded_defaults; d->key && !bad; d++) {
                if (strcmp(d->role, role) || gp_client_user_set(conf, role, d->key) ||
                    /* fetch.max.bytes may not be below message.max.bytes */
                    (!strcmp(d->key, "fetch.max.bytes") &&
                     gp_client_user_set(conf, role, "message.max.bytes")))
                        continue;
                if (!gp_client_default_applies(kc, d))
                        continue;
                gp_client_set(kc, d->key, d->value, err, &bad);
        }
        for (int i = 0; i < conf->n_kafka && !bad; i++) {
                const char *k = conf->kafka[i].key;
                if (!strncmp(k, "producer.", 9) || !strncmp(k, "consumer.", 9)) {
                        if (strncmp(k, role, rl) || k[rl] != '.')
                                continue;
                        k += rl + 1;
                }
                gp_client_set(kc, k, conf->kafka[i].value, err, &bad);
        }
        if (bad) {
                gp_err_prefix(err, "kafka.*");
                rd_kafka_conf_destroy(kc);
                return NULL;
        }
        rd_kafka_conf_set_log_cb(kc, log_cb);
        return kc;
}

rd_kafka_t *gp_client_new(rd_kafka_type_t type, rd_kafka_conf_t *kc, gp_err_t *err) {
        char why[512];
        rd_kafka_t *rk = rd_kafka_new(type, kc, why, sizeof why);
        if (!rk)
                gp_err_set(err, GP_ERR_KAFKA, "%s", why);
        return rk;
}

int gp_client_partitions(rd_kafka_t *rk, const char *topic, int wait_ms) {
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
        const struct rd_kafka_metadata *md = NULL;
        int n = -1;
        if (rkt && !rd_kafka_metadata(rk, 0, rkt, &md, wait_ms) && md->topic_cnt == 1 &&
            !md->topics[0].err)
                n = md->topics[0].partition_cnt;
        if (md)
                rd_kafka_metadata_destroy(md);
        if (rkt)
                rd_kafka_topic_destroy(rkt);
        return n;
}

bool gp_rdkafka_group_ok(int v, const char *v_str, char *buf, size_t n) {
        if (v >= GP_RDKAFKA_GROUP_MIN)
                return true;
        snprintf(buf, n,
                 "gate.membership=group needs librdkafka %d.%d.%d or later, and this "
                 "gate-proxy "
                 "runs on librdkafka %s, whose cooperative rebalances can stall or lose an "
                 "assignment (docs/DESIGN.md, librdkafka); build gate-proxy with its own "
                 "librdkafka (make librdkafka, then make), or use gate.membership=assign",
                 GP_RDKAFKA_GROUP_MIN >> 24, (GP_RDKAFKA_GROUP_MIN >> 16) & 0xff,
                 (GP_RDKAFKA_GROUP_MIN >> 8) & 0xff, v_str);
        return false;
}

const char *gp_rdkafka_features(char *buf, size_t n) {
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        size_t len = n;
        if (!kc || rd_kafka_conf_get(kc, "builtin.features", buf, &len) != RD_KAFKA_CONF_OK)
                snprintf(buf, n, "?");
        if (kc)
                rd_kafka_conf_destroy(kc);
        return buf;
}

bool gp_rdkafka_prefetch_unpaced(void) {
        static int unpaced = -1;
        if (unpaced < 0) {
                rd_kafka_conf_t *kc = rd_kafka_conf_new();
                size_t sz = 0;
                unpaced = kc && rd_kafka_conf_get(kc, "fetch.queue.backoff.ms", NULL, &sz) ==
                                        RD_KAFKA_CONF_UNKNOWN;
                if (kc)
                        rd_kafka_conf_destroy(kc);
        }
        return unpaced;
}

bool gp_client_default_applies(rd_kafka_conf_t *kc, const gp_kafka_default_t *d) {
        /* A default the loaded librdkafka does not know is left out
         * (fetch.queue.backoff.ms came in 2.2.0), and without it the
         * prefetch is not bounded: such a librdkafka looks at a full queue
         * again only after a second, which a queue this small would spend
         * empty. */
        size_t sz = 0;
        return rd_kafka_conf_get(kc, d->key, NULL, &sz) != RD_KAFKA_CONF_UNKNOWN &&
               !(gp_rdkafka_prefetch_unpaced() && !strncmp(d->key, "queued.", 7));
}
