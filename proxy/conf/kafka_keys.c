/* proxy/conf/kafka_keys.c: the librdkafka properties gate-proxy decides itself,
 * in one table: the ones it forces on its producer and consumer (most of
 * them refused as kafka.* keys) and its bounded-memory defaults. The
 * parser refuses from it, the documents list from it, and the clients are
 * configured from it (proxy/loop/kafka_clients.c, proxy/loop/setup.c). */
#include <stddef.h>
#include <string.h>

#include "proxy/conf/table.h"

static const char *txn_id(const gp_conf_t *c) {
        /* at-least-once: idempotent only, no transactions */
        return c->delivery == GP_DELIVERY_EOS ? c->transactional_id : NULL;
}

static const char *group_id(const gp_conf_t *c) {
        return c->group_id;
}

static const char *offset_reset(const gp_conf_t *c) {
        return c->source_start == GP_START_LATEST ? "latest" : "earliest";
}

static const char *assignment_strategy(const gp_conf_t *c) {
        return c->membership == GP_MEMBER_GROUP ? "cooperative-sticky" : NULL;
}

#define N_FORCED 9 /* the rows before the bounded defaults */

/* The forced rows first, the refused ones in the order the documents list
 * them; then the bounded defaults (gp_bounded_defaults points at them). */
const gp_kafka_key_t gp_kafka_keys[] = {
        /* Forced: a user value would break the exactly-once design or
         * fight a gate.* key. */
        {"producer", "transactional.id", NULL, GP_KAFKA_FORCED,
         "set by gate-proxy; use gate.transactional.id", txn_id},
        {"consumer", "group.id", NULL, GP_KAFKA_FORCED, "set by gate-proxy; use gate.group.id",
         group_id},
        {"consumer", "enable.auto.commit", "false", GP_KAFKA_FORCED,
         "set by gate-proxy (false): offsets are committed inside each transaction", NULL},
        {"consumer", "isolation.level", "read_committed", GP_KAFKA_FORCED,
         "set by gate-proxy (read_committed)", NULL},
        {"producer", "enable.idempotence", "true", GP_KAFKA_FORCED,
         "set by gate-proxy (true): transactions and ordered retries need it", NULL},
        {"consumer", "auto.offset.reset", NULL, GP_KAFKA_FORCED,
         "set by gate-proxy; use gate.source.start", offset_reset},
        /* A producer's metadata request creates a missing topic on a broker
         * with auto.create.topics.enable (Kafka's default), with the
         * broker's partition count and behind gate.topics.create. */
        {"producer", "allow.auto.create.topics", "false", GP_KAFKA_FORCED,
         "set by gate-proxy (false): a topic is created only by gate.topics.create, with "
         "the source's partition count",
         NULL},
        /* gate.membership=group: a rebalance moves only the partitions that
         * change owner (incremental assign and unassign). */
        {"consumer", "partition.assignment.strategy", NULL, GP_KAFKA_FORCED,
         "set by gate-proxy (cooperative-sticky with gate.membership=group)",
         assignment_strategy},
        /* Offsets are stored only with the records, in the transaction;
         * not refused (documents and the parser have never listed it), a
         * kafka.* value is overridden. */
        {"consumer", "enable.auto.offset.store", "false", GP_KAFKA_FORCED, NULL, NULL},

        /* Bounded: the consumer's prefetch: about 10,000 records or 4 MiB,
         * in responses of at most 1 MiB (each holds its records' memory
         * until the last of them is read). A partition whose queue is
         * full is looked at again after fetch.queue.backoff.ms (1 s by
         * default), long after a queue this small has drained: 10 ms. */
        {"consumer", "queued.min.messages", "10000", GP_KAFKA_BOUNDED, NULL, NULL},
        {"consumer", "queued.max.messages.kbytes", "4096", GP_KAFKA_BOUNDED, NULL, NULL},
        {"consumer", "fetch.max.bytes", "1048576", GP_KAFKA_BOUNDED, NULL, NULL},
        {"consumer", "fetch.queue.backoff.ms", "10", GP_KAFKA_BOUNDED, NULL, NULL},
        /* The producer's queue: 10,000 records or 4 MiB, in batches of at
         * most 256 KiB per partition: batches of librdkafka's 1 MB would
         * seldom fill from a queue this small, and a batch that waits for
         * linger.ms behind full in-flight requests makes the producer's
         * broker thread spin (1 KB records: 70,000 records/s at 10 CPU
         * seconds per million, against 110,000 at 6.5). */
        {"producer", "queue.buffering.max.messages", "10000", GP_KAFKA_BOUNDED, NULL, NULL},
        {"producer", "queue.buffering.max.kbytes", "4096", GP_KAFKA_BOUNDED, NULL, NULL},
        {"producer", "batch.size", "262144", GP_KAFKA_BOUNDED, NULL, NULL},
        {NULL, NULL, NULL, GP_KAFKA_BOUNDED, NULL, NULL},
};

const gp_kafka_key_t *const gp_bounded_defaults = gp_kafka_keys + N_FORCED;

const char *gp_kafka_forced(const gp_kafka_key_t *k, const gp_conf_t *conf, const char *role) {
        if (!k->key || k->kind != GP_KAFKA_FORCED || strcmp(k->role, role) != 0)
                return NULL;
        return k->from_conf ? k->from_conf(conf) : k->value;
}

const char *gp_conf_reserved(const char *kname) {
        for (const gp_kafka_key_t *k = gp_kafka_keys; k->key; k++)
                if (k->refused && strcmp(k->key, kname) == 0)
                        return k->refused;
        return NULL;
}
