/* proxy/conf/kafka.c: the librdkafka properties gate-proxy decides
 * itself: the kafka.* keys it refuses, and its bounded-memory defaults. */
#include <stddef.h>
#include <string.h>

#include "proxy/conf/internal.h"

/* kafka.* keys that gate-proxy sets itself: a user value would break the
 * exactly-once design or fight a gate.* key. */
const gp_conf_reserved_key_t gp_conf_reserved_keys[] = {
        {"transactional.id", "set by gate-proxy; use gate.transactional.id"},
        {"group.id", "set by gate-proxy; use gate.group.id"},
        {"enable.auto.commit",
         "set by gate-proxy (false): offsets are committed inside each transaction"},
        {"isolation.level", "set by gate-proxy (read_committed)"},
        {"enable.idempotence",
         "set by gate-proxy (true): transactions and ordered retries need it"},
        {"auto.offset.reset", "set by gate-proxy; use gate.source.start"},
        {"allow.auto.create.topics",
         "set by gate-proxy (false): a topic is created only by gate.topics.create, with "
         "the source's partition count"},
};

const size_t gp_conf_n_reserved = sizeof(gp_conf_reserved_keys) / sizeof(gp_conf_reserved_keys[0]);

const gp_kafka_default_t gp_bounded_defaults[] = {
        /* The consumer's prefetch: about 10,000 records or 4 MiB, in
         * responses of at most 1 MiB (each holds its records' memory until
         * the last of them is read). */
        {"consumer", "queued.min.messages", "10000"},
        {"consumer", "queued.max.messages.kbytes", "4096"},
        {"consumer", "fetch.max.bytes", "1048576"},
        /* The producer's queue: 10,000 records or 4 MiB, in batches of at
         * most 256 KiB per partition: batches of librdkafka's 1 MB would
         * seldom fill from a queue this small, and a batch that waits for
         * linger.ms behind full in-flight requests makes the producer's
         * broker thread spin (1 KB records: 70,000 records/s at 10 CPU
         * seconds per million, against 110,000 at 6.5). */
        {"producer", "queue.buffering.max.messages", "10000"},
        {"producer", "queue.buffering.max.kbytes", "4096"},
        {"producer", "batch.size", "262144"},
        {NULL, NULL, NULL},
};

const char *gp_conf_reserved(const char *kname) {
        for (size_t i = 0; i < gp_conf_n_reserved; i++)
                if (strcmp(gp_conf_reserved_keys[i].name, kname) == 0)
                        return gp_conf_reserved_keys[i].reason;
        return NULL;
}
