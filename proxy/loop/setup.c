/* proxy/loop/setup.c: gp_proxy_new and its end: the event-time extractor, the
 * schema registry client, the loop's control handle, the producer
 * (transactional for exactly-once, idempotent for at-least-once, never
 * creating topics by looking them up), the consumer (assigned, or a
 * member of the group with gate.membership=group; read_committed, offsets
 * only with the records), and the threads beside
 * the loop (drain check, status writer). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/fingerprint.h"
#include "os/file.h"
#include "proxy/schema/avsc.h"
#include "proxy/loop/kafka_clients.h"
#include "proxy/loop/internal.h"
#include "proxy/base/log.h"

int gp_kafka_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
        gp_proxy_t *p = opaque;
        int i = rd_kafka_type(rk) == RD_KAFKA_PRODUCER ? 0 : 1;
        (void)len;
        pthread_mutex_lock(&p->lock);
        char *old = p->kstats[i];
        p->kstats[i] = json;
        pthread_mutex_unlock(&p->lock);
        rd_kafka_mem_free(rk, old);
        return 1; /* ours now */
}

/* With http.listen: statistics for the broker metrics, every 5 s unless
 * kafka.statistics.interval.ms says otherwise. */
static void want_stats(gp_proxy_t *p, rd_kafka_conf_t *kc, const char *role, gp_err_t *err,
                       int *bad) {
        if (!p->conf->http_listen)
                return;
        if (!gp_client_user_set(p->conf, role, "statistics.interval.ms"))
                gp_client_set(kc, "statistics.interval.ms", "5000", err, bad);
        rd_kafka_conf_set_stats_cb(kc, gp_kafka_stats);
}

/* The librdkafka keys gate-proxy decides for role's client, from the one
 * table of them (proxy/conf/kafka_keys.c: exactly-once, read_committed,
 * offsets only in transactions, no topic auto-creation). */
static void force(rd_kafka_conf_t *kc, const gp_conf_t *conf, const char *role, gp_err_t *err,
                  int *bad) {
        for (const gp_kafka_key_t *k = gp_kafka_keys; k->key; k++) {
                const char *v = gp_kafka_forced(k, conf, role);
                if (v)
                        gp_client_set(kc, k->key, v, err, bad);
        }
}

/* gate.avro.schema: read and compiled once, at start. */
static int load_avsc(gp_proxy_t *p, const char *path, gp_err_t *err) {
        gp_err_t why;
        size_t n;
        char *buf = gp_file_read(path, 4 << 20, &n, &why);
        if (!buf) {
                /* gp_proxy_new fails with it; its caller decides the exit. */
                if (errno == EFBIG)
                        gp_err_set(err, GP_ERR_INVALID,
                                   "gate.avro.schema: %s: larger than 4 MiB", path);
                else
                        gp_err_set(err, why.code, "gate.avro.schema: %s", why.msg);
                return -1;
        }
        int rc = -1;
        p->avsc_fp = gp_fp_bytes(buf, n);
        if (gp_avsc_compile(buf, n, &p->ex, &p->avro_local, &why))
                gp_err_set(err, why.code == GP_ERR_NOMEM ? GP_ERR_NOMEM : GP_ERR_INVALID,
                           "gate.avro.schema: %s: %s (gate.event-time=%s)", path, why.msg,
                           p->conf->event_time);
        else
                rc = 0;
        free(buf);
        return rc;
}

gp_proxy_t *gp_proxy_new(const gp_conf_t *conf, gp_err_t *err) {
        gp_proxy_t *p = calloc(1, sizeof(*p));
        rd_kafka_conf_t *kc;
        char e2[512];

        if (!p) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        pthread_mutex_init(&p->lock, NULL);
        p->conf = conf;
        gp_conf_drain_warning(conf, p->drain_warning, sizeof(p->drain_warning));
        p->eos = conf->delivery == GP_DELIVERY_EOS;
        p->group = conf->membership == GP_MEMBER_GROUP;
        p->dv = p->eos ? &gp_delivery_eos : &gp_delivery_alo;
        if (p->group &&
            !gp_rdkafka_group_ok(rd_kafka_version(), rd_kafka_version_str(), e2, sizeof e2)) {
                gp_err_set(err, GP_ERR_INVALID, "%s", e2);
                goto fail;
        }
        if (gp_rdkafka_prefetch_unpaced())
                gp_warn("librdkafka %s has no fetch.queue.backoff.ms: the consumer's prefetch "
                        "is left at librdkafka's defaults (about 100 MB more memory at 12 "
                        "partitions; docs/DESIGN.md, librdkafka); make librdkafka builds "
                        "one that has it",
                        rd_kafka_version_str());
        p->gconf = (gp_gate_conf_t){
                .out_of_orderness_ms = conf->out_of_orderness_ms,
                .idle_ms = conf->idle_ms,
                .align_ms = conf->align_ms,
                .lateness_ms = conf->lateness_ms,
                .late_to_dlq = conf->late == GP_LATE_DLQ,
                .bad_route_old = conf->bad_record == GP_BAD_ROUTE_OLD,
                .max_future_ms = conf->max_future_ms,
        };
        p->stats.wm = p->stats.cutoff = p->stats.promise = GP_TS_NONE;
        if (gp_extract_compile(&p->ex, conf->event_time, conf->event_time_unit, e2,
                               sizeof(e2))) {
                gp_err_set(err, GP_ERR_INVALID, "gate.event-time: %s", e2);
                goto fail;
        }
        if (p->ex.kind == GP_ET_AVRO && conf->avro_schema &&
            load_avsc(p, conf->avro_schema, err))
                goto fail;
        if (p->ex.kind == GP_ET_AVRO && conf->registry_url &&
            !(p->reg = gp_registry_new(conf, &p->ex, err)))
                goto fail;
        if (!(p->ctl = gp_ctl_new_conf(conf, err)))
                goto fail;
        gp_fp_settings_t fs = {
                .event_time = conf->event_time,
                .unit = conf->event_time_unit,
                .avro_schema = p->avsc_fp,
                .record_max_bytes = conf->record_max_bytes,
                .gate = p->gconf,
                .topic_blue = conf->topic_blue,
                .topic_green = conf->topic_green,
                .dlq_topic = conf->dlq_topic,
                .drain_blue = conf->drain_group_blue,
                .drain_green = conf->drain_group_green,
        };
        p->fp = gp_fp_of(&fs);

        /* Producer: transactional (or idempotent for at-least-once). */
        if (!(kc = gp_client_conf(conf, "producer", err)))
                goto fail;
        int bad = 0;
        force(kc, conf, "producer", err, &bad);
        /* Room for the largest record routed (gate.record.max.bytes), unless
         * kafka.message.max.bytes says otherwise. */
        if (!gp_client_user_set(conf, "producer", "message.max.bytes") &&
            conf->record_max_bytes + 65536 > 1000000) {
                char v[32];
                int64_t want = conf->record_max_bytes + 65536;
                snprintf(v, sizeof v, "%" PRId64, want > 1000000000 ? 1000000000 : want);
                gp_client_set(kc, "message.max.bytes", v, err, &bad);
        }
        /* The producer's queue holds at least two of the largest records. */
        long long need_kb = gp_client_conf_ll(kc, "message.max.bytes") / 512;
        if (!bad && !gp_client_user_set(conf, "producer", "queue.buffering.max.kbytes") &&
            need_kb > gp_client_conf_ll(kc, "queue.buffering.max.kbytes")) {
                char v[32];
                snprintf(v, sizeof v, "%lld", need_kb);
                gp_client_set(kc, "queue.buffering.max.kbytes", v, err, &bad);
        }
        /* Delivery reports only where they are used: at-least-once counts
         * failures, the drain check the offsets written. Exactly-once
         * learns of a failed delivery from commit_transaction, and a report
         * per record is measurable CPU (make bench). */
        if (!p->eos || conf->drain_group_blue || conf->drain_group_green)
                rd_kafka_conf_set_dr_msg_cb(kc, gp_record_delivered);
        /* group: a crashed member's transaction ends before the group
         * moves its partitions (proxy/conf/conf.h). */
        if (p->group && !gp_client_user_set(conf, "producer", "transaction.timeout.ms")) {
                char v[32];
                snprintf(v, sizeof v, "%d", GP_GROUP_TXN_TIMEOUT_MS);
                gp_client_set(kc, "transaction.timeout.ms", v, err, &bad);
        }
        rd_kafka_conf_set_opaque(kc, p);
        want_stats(p, kc, "producer", err, &bad);
        if (bad || !(p->prod = gp_client_new(RD_KAFKA_PRODUCER, kc, err))) {
                rd_kafka_conf_destroy(kc);
                goto fail;
        }
        p->txn_begin = -1;
        p->aborting_since = -1;
        p->txn_timeout_ms = 60000; /* librdkafka's default */
        char tto[32];
        size_t tto_n = sizeof(tto);
        if (rd_kafka_conf_get(rd_kafka_conf(p->prod), "transaction.timeout.ms", tto, &tto_n) ==
            RD_KAFKA_CONF_OK)
                p->txn_timeout_ms = strtoll(tto, NULL, 10);

        /* Consumer: assigned, read_committed, offsets only in transactions. */
        if (!(kc = gp_client_conf(conf, "consumer", err)))
                goto fail;
        force(kc, conf, "consumer", err, &bad);
        if (p->group) {
                if (!gp_client_user_set(conf, "consumer", "session.timeout.ms")) {
                        char v[32];
                        snprintf(v, sizeof v, "%d", GP_GROUP_SESSION_TIMEOUT_MS);
                        gp_client_set(kc, "session.timeout.ms", v, err, &bad);
                }
                /* The group sees a source topic grow at the consumer's
                 * metadata refresh: as often as gate.discovery.interval.ms. */
                if (!gp_client_user_set(conf, "consumer",
                                        "topic.metadata.refresh.interval.ms")) {
                        char v[32];
                        snprintf(v, sizeof v, "%" PRId64, conf->discovery_ms);
                        gp_client_set(kc, "topic.metadata.refresh.interval.ms", v, err, &bad);
                }
                rd_kafka_conf_set_rebalance_cb(kc, gp_group_rebalance);
                /* The group's members view names this instance by it
                 * (gate-proxy-orders-orders-0), unless kafka.* says
                 * otherwise. */
                if (!gp_client_user_set(conf, "consumer", "client.id"))
                        gp_client_set(kc, "client.id", conf->transactional_id, err, &bad);
        }
        rd_kafka_conf_set_opaque(kc, p);
        want_stats(p, kc, "consumer", err, &bad);
        if (bad || !(p->cons = gp_client_new(RD_KAFKA_CONSUMER, kc, err))) {
                rd_kafka_conf_destroy(kc);
                goto fail;
        }
        rd_kafka_poll_set_consumer(p->cons);
        p->queue = rd_kafka_queue_get_consumer(p->cons);

        /* Beside the loop: the drain check and the writes to the map. */
        gp_err_clear(err);
        if (!(p->drain = gp_drainer_new(conf, err)) && err->code)
                goto fail;
        if (!(p->status = gp_status_new(conf, err)))
                goto fail;
        if (p->group && !(p->members = gp_members_new(conf, p->fp, err)))
                goto fail;
        p->cgmd = rd_kafka_consumer_group_metadata_new(conf->group_id);
        return p;
fail:
        gp_proxy_destroy(p);
        return NULL;
}

void gp_proxy_stop(gp_proxy_t *p) {
        atomic_store(&p->stop, 1);
}

bool gp_proxy_stopping(gp_proxy_t *p) {
        return atomic_load(&p->stop) != 0;
}

void gp_proxy_stats(gp_proxy_t *p, gp_stats_t *out) {
        pthread_mutex_lock(&p->lock);
        *out = p->stats;
        pthread_mutex_unlock(&p->lock);
}

char *gp_proxy_kafka_stats(gp_proxy_t *p, int client) {
        pthread_mutex_lock(&p->lock);
        char *copy = p->kstats[client] ? strdup(p->kstats[client]) : NULL;
        pthread_mutex_unlock(&p->lock);
        return copy;
}

int64_t gp_proxy_drain_lag(gp_proxy_t *p, gp_colour_t c) {
        return gp_drainer_lag(p->drain, c);
}

int gp_proxy_members(gp_proxy_t *p, gp_member_info_t *out, size_t max, size_t *shown) {
        *shown = 0;
        return p->members ? gp_members_view(p->members, out, max, shown) : -1;
}

uint32_t gp_proxy_fingerprint(gp_proxy_t *p) {
        return p->fp;
}

void gp_proxy_destroy(gp_proxy_t *p) {
        if (!p)
                return;
        for (int i = 0; i < p->n_topics; i++) {
                for (int c = 0; c < 2; c++)
                        if (p->topics[i].out[c])
                                rd_kafka_topic_destroy(p->topics[i].out[c]);
                free(p->topics[i].parts);
        }
        free(p->topics);
        free(p->pptrs);
        if (p->dlq)
                rd_kafka_topic_destroy(p->dlq);
        gp_registry_destroy(p->reg);
        gp_avro_free(&p->avro_local);
        if (p->queue)
                rd_kafka_queue_destroy(p->queue);
        if (p->cgmd)
                rd_kafka_consumer_group_metadata_destroy(p->cgmd);
        if (p->cons) {
                /* group: leaves the group at once; the rebalance this
                 * causes only unassigns (the last window is committed, or
                 * was never to be). */
                p->closing = true;
                rd_kafka_consumer_close(p->cons);
                rd_kafka_destroy(p->cons);
        }
        if (p->prod) {
                /* Nothing in flight when the producer goes. A fenced
                 * transactional producer's late Produce errors each set its
                 * fatal error again, freeing the previous message, and
                 * librdkafka 2.14.2 frees that message at termination
                 * (rd_kafka_txns_term) while its broker threads still run:
                 * a late error then frees it twice. After the purge no late
                 * response is handled; what was in flight is unsent or
                 * aborted with the transaction either way. */
                rd_kafka_purge(p->prod, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
                rd_kafka_destroy(p->prod);
        }
        for (int i = 0; i < 2; i++)
                rd_kafka_mem_free(NULL, p->kstats[i]);
        gp_agreer_destroy(p->agree);
        gp_members_destroy(p->members);
        gp_drainer_destroy(p->drain);
        free(p->lags);
        gp_status_destroy(p->status);
        free(p->drain_t);
        gp_ctl_destroy(p->ctl);
        pthread_mutex_destroy(&p->lock);
        free(p);
}
