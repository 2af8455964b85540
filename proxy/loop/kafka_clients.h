/* proxy/loop/kafka_clients.h: librdkafka client configuration from gate-proxy's
 * configuration: kafka.X for every client, kafka.producer.X and
 * kafka.consumer.X for one role, over gate-proxy's bounded queues
 * (gp_bounded_defaults); the log callback every client uses; and what the
 * loaded librdkafka is (its version, its features, whether group mode may
 * run on it). */
#ifndef GP_PROXY_LOOP_KAFKA_CLIENTS_H
#define GP_PROXY_LOOP_KAFKA_CLIENTS_H

#include <stdbool.h>
#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "proxy/conf/conf.h"

/* A configuration for role ("producer" or "consumer") with the log
 * callback set; NULL with err ("kafka.*: ...") when librdkafka refuses a
 * key. */
rd_kafka_conf_t *gp_client_conf(const gp_conf_t *conf, const char *role, gp_err_t *err);
/* rd_kafka_new; on a refusal NULL with GP_ERR_KAFKA (kc is then still the
 * caller's). */
rd_kafka_t *gp_client_new(rd_kafka_type_t type, rd_kafka_conf_t *kc, gp_err_t *err);
/* Sets k=v unless *bad; sets *bad (err says why, GP_ERR_INVALID) when
 * refused. */
void gp_client_set(rd_kafka_conf_t *kc, const char *k, const char *v, gp_err_t *err, int *bad);
/* Does bounded default d apply to kc on the loaded librdkafka (a key it
 * knows; the prefetch bound only with fetch.queue.backoff.ms)? */
bool gp_client_default_applies(rd_kafka_conf_t *kc, const gp_kafka_default_t *d);
/* Did the configuration set key for role (kafka.KEY or kafka.ROLE.KEY)? */
bool gp_client_user_set(const gp_conf_t *conf, const char *role, const char *key);
/* A numeric property of kc, 0 if unset or not a number. */
long long gp_client_conf_ll(rd_kafka_conf_t *kc, const char *key);
/* The partitions of topic now (a metadata request, at most wait_ms), or
 * -1. */
int gp_client_partitions(rd_kafka_t *rk, const char *topic, int wait_ms);

/* The first librdkafka release whose cooperative rebalances
 * gate.membership=group relies on (docs/DESIGN.md, librdkafka): 2.10.0, in
 * rd_kafka_version()'s form (0xMMmmrrpp, pp 0xff for a release). */
#define GP_RDKAFKA_GROUP_MIN 0x020a00ff

/* May gate.membership=group run on librdkafka version v (rd_kafka_version()'s
 * form)? When not, why into buf: the version found, the one needed, and
 * how to get it. */
bool gp_rdkafka_group_ok(int v, const char *v_str, char *buf, size_t n);
/* True when the loaded librdkafka has no fetch.queue.backoff.ms (before
 * 2.2.0): the consumer's prefetch is then left at librdkafka's defaults
 * (gp_client_conf), since such a librdkafka refills a bounded queue only
 * once a second. */
bool gp_rdkafka_prefetch_unpaced(void);
/* The loaded librdkafka's builtin.features ("?" when it cannot say). */
const char *gp_rdkafka_features(char *buf, size_t n);

#endif
