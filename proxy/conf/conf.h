/* proxy/conf/conf.h: the configuration of one gate-proxy process.
 *
 * A `key=value` file plus `-X key=value` overrides. Keys starting with
 * `kafka.` pass through to librdkafka (without the prefix); every other key
 * comes from one table (proxy/conf/keys.c) with a type, default, bounds and a
 * description, which also generates configs/CONFIGURATION.md
 * (proxy/conf/doc.c). Parsing and checks: proxy/conf/conf.c.
 * May use gate/; this header has no librdkafka types (the passthrough
 * list is plain strings and is applied by proxy/loop/kafka_clients.c). */
#ifndef GP_PROXY_CONF_CONF_H
#define GP_PROXY_CONF_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gate/error.h"
#include "gate/timeparse.h"

#define GP_CONF_MAX_TOPICS 64
#define GP_CONF_MAX_FILE   (1024 * 1024) /* bytes; a larger file is refused */
#define GP_CONF_MAX_LINE                                                                      \
        16384 /* bytes per line, without the newline: room for
                                    gate.source.topics with 64 topics of Kafka's
                                    longest names (249 characters) */

typedef enum { GP_DELIVERY_EOS = 0, GP_DELIVERY_ALO } gp_delivery_t;
typedef enum { GP_BAD_DLQ = 0, GP_BAD_ROUTE_OLD } gp_bad_policy_t;
typedef enum { GP_LATE_NEW = 0, GP_LATE_DLQ } gp_late_policy_t;
typedef enum { GP_START_EARLIEST = 0, GP_START_LATEST } gp_start_t;
/* gate.membership: assign every partition (no group), or share them as
 * members of the Kafka consumer group (docs/DESIGN.md, Scale-out). */
typedef enum { GP_MEMBER_ASSIGN = 0, GP_MEMBER_GROUP } gp_membership_t;
/* With gate.membership=group, unless kafka.* sets them: the producer's
 * transaction.timeout.ms stays below the consumer's session.timeout.ms, so
 * a crashed member's open transaction is aborted by the broker before the
 * group gives its partitions to another member (whose read of the
 * committed offsets would otherwise wait for it). */
#define GP_GROUP_TXN_TIMEOUT_MS     10000
#define GP_GROUP_SESSION_TIMEOUT_MS 30000

typedef struct gp_conf_kv {
        char *key; /* without the "kafka." prefix */
        char *value;
        char *origin; /* "path:line" or "-X" of the setting in force, so
                       * an error about the key names it: "origin: kafka.key:
                       * reason" */
} gp_conf_kv_t;

typedef struct gp_conf {
        /* identity */
        char *pipeline;             /* gate.pipeline (required) */
        char *transactional_id;     /* gate.transactional.id, default gate-proxy-{pipeline} */
        char *group_id;             /* gate.group.id, default gate-proxy-{pipeline} */
        gp_membership_t membership; /* gate.membership */
        char *instance; /* gate.instance; "" in the table: POD_NAME, else the host name */

        /* topics */
        char *source_topics_raw; /* gate.source.topics (required) */
        int n_topics;
        char *topics[GP_CONF_MAX_TOPICS]; /* split, trimmed, unique */
        char *topic_blue;                 /* template, default {topic}.blue */
        char *topic_green;                /* template, default {topic}.green */
        char *dlq_topic;                  /* gate.dlq.topic, default {pipeline}.dlq */
        bool topics_create;               /* gate.topics.create */
        int topics_replication;  /* gate.topics.replication.factor, -1 = broker default */
        gp_start_t source_start; /* gate.source.start */

        /* event time */
        char *event_time; /* gate.event-time: kafka-timestamp | json:PATH | header:NAME | avro:PATH */
        gp_unit_t event_time_unit;  /* gate.event-time.unit: ms | s | us */
        int64_t max_future_ms;      /* gate.event-time.max-future.ms, 0: no bound */
        gp_bad_policy_t bad_record; /* gate.bad-record: dlq | route-old */
        gp_late_policy_t late;      /* gate.late: new | dlq */
        bool abort_redeliver;       /* gate.abort.redeliver */
        char *avro_schema;          /* gate.avro.schema, NULL: registry framing */
        int64_t record_max_bytes;   /* gate.record.max.bytes */

        /* schema registry (avro:PATH without gate.avro.schema) */
        char *registry_url;          /* schema.registry.url */
        char *registry_userinfo;     /* schema.registry.basic.auth.user.info */
        char *registry_ca;           /* schema.registry.ssl.ca.location */
        char *registry_cert;         /* schema.registry.ssl.certificate.location */
        char *registry_key;          /* schema.registry.ssl.key.location */
        int64_t registry_timeout_ms; /* schema.registry.timeout.ms */
        int64_t registry_retry_ms;   /* schema.registry.retry.ms */
        bool registry_exit;          /* schema.registry.on-failure=exit */
        int64_t registry_cache_max;  /* schema.registry.cache.max */

        /* watermark and cutoff */
        int64_t out_of_orderness_ms; /* gate.watermark.out-of-orderness.ms */
        int64_t idle_ms;             /* gate.watermark.idle.ms */
        int64_t align_ms;            /* gate.cutoff.align.ms */
        int64_t lateness_ms;         /* gate.lateness.ms */
        char *drain_group_blue;      /* gate.drain.group.blue, NULL: no drain check */
        char *drain_group_green;     /* gate.drain.group.green, NULL: no drain check */

        /* transactions */
        gp_delivery_t delivery;     /* gate.delivery */
        int64_t commit_interval_ms; /* gate.commit.interval.ms */
        int64_t commit_records;     /* gate.commit.records */
        int64_t discovery_ms;       /* gate.discovery.interval.ms */
        int64_t status_interval_ms; /* gate.status.interval.ms */
        int64_t member_forget_ms;   /* gate.member.forget.ms */

        /* control: exactly one of control.file and control.k8s.configmap */
        char *control_file;   /* control.file */
        char *k8s_configmap;  /* control.k8s.configmap */
        char *k8s_namespace;  /* control.k8s.namespace, NULL: the pod's */
        char *k8s_kubeconfig; /* control.k8s.kubeconfig, NULL: in-cluster or default */

        /* process */
        char *http_listen; /* http.listen: HOST:PORT, NULL: no HTTP server */
        char *log_level;   /* log.level: error|warn|info|debug */
        char *log_format;  /* log.format: text|json */

        /* kafka.* passthrough, in file order, later overrides earlier */
        int n_kafka;
        gp_conf_kv_t *kafka;

        /* Where each gate.*, control.*, schema.registry.* and log.* key was
         * set ("path:line" or "-X"), by the table's order; NULL: not set. */
        char **prop_origin;

        /* GP_OK, or why gp_conf_init could not set the default of
         * init_key (GP_ERR_NOMEM): gp_conf_finalize reports it. */
        gp_errcode_t init_rc;
        const char *init_key;
} gp_conf_t;

/* Fills every field with its default (strings owned by conf). GP_OK, or
 * GP_ERR_NOMEM: conf may then be destroyed, and gp_conf_finalize refuses
 * it with the same code. */
gp_errcode_t gp_conf_init(gp_conf_t *conf);
/* Frees what conf owns; accepts a zeroed or initialised conf. */
void gp_conf_destroy(gp_conf_t *conf);

/* Sets one key. `origin` is used in the error ("file:line" or "-X").
 * Errors: "<origin>: <key>: <reason>" in err; GP_ERR_INVALID (a key or
 * value that cannot be used) or GP_ERR_NOMEM (the key keeps its earlier
 * value). */
gp_errcode_t gp_conf_set(gp_conf_t *conf, const char *key, const char *value,
                         const char *origin, gp_err_t *err);

/* Reads a key=value file: '#' comments, blank lines, whitespace around key
 * and value trimmed. First error: "path:line: key: reason", with
 * gp_conf_set's codes, or GP_ERR_IO when the file cannot be read.
 * A file larger than GP_CONF_MAX_FILE or a line longer than
 * GP_CONF_MAX_LINE is refused. Keys set before the error stay set. */
gp_errcode_t gp_conf_load_file(gp_conf_t *conf, const char *path, gp_err_t *err);

/* gp_conf_load_file on bytes already in memory (buf need not be
 * NUL-terminated); `name` stands for the path in errors ("name:line").
 * Also the entry point of tests/fuzz/fuzz_conf.c. */
gp_errcode_t gp_conf_load_buffer(gp_conf_t *conf, const char *name, const char *buf,
                                 size_t len, gp_err_t *err);

/* Cross-field checks and derived values (required keys present, templates
 * contain {topic}, defaults that depend on gate.pipeline, topics split,
 * exactly one control backend: control.file or control.k8s.configmap).
 * "<key>: <reason>" in err, GP_ERR_INVALID (or GP_ERR_NOMEM). Afterwards
 * transactional_id, group_id and dlq_topic are plain names ({pipeline}
 * expanded; with gate.membership=group the transactional id ends in
 * "-<instance>"), instance is set (from POD_NAME or the host name when
 * empty); topic_blue and topic_green stay templates for
 * gp_conf_topic_name. */
gp_errcode_t gp_conf_finalize(gp_conf_t *conf, gp_err_t *err);

/* Expands a topic template ({topic}, {pipeline}) into buf. GP_OK;
 * GP_ERR_INVALID (buf "", no message: the caller names the key) if it
 * does not fit in len bytes, or a placeholder has no value (topic NULL,
 * or gate.pipeline not set). */
gp_errcode_t gp_conf_topic_name(const gp_conf_t *conf, const char *tmpl, const char *topic,
                                char *buf, size_t len);

/* The warning for a configuration without a drain check on a colour
 * (gate.drain.group.* unset): what it risks and how to fix it. Writes ""
 * when both colours have one. */
void gp_conf_drain_warning(const gp_conf_t *conf, char *buf, size_t len);

/* Writes the Markdown reference of every key (configs/CONFIGURATION.md). */
void gp_conf_write_markdown(FILE *out);
/* Writes the example file: every key, commented, with its default. */
void gp_conf_write_example(FILE *out);

/* The librdkafka properties gate-proxy decides itself, one table
 * (proxy/conf/kafka_keys.c) ended by a NULL key, each for the client of one
 * role, "producer" or "consumer":
 * - GP_KAFKA_FORCED: set on the proxy's client after the configuration's
 *   kafka.* (gp_kafka_forced gives the value); with .refused, kafka.KEY
 *   and kafka.ROLE.KEY are an error saying why (listed by
 *   gp_conf_write_markdown);
 * - GP_KAFKA_BOUNDED: gate-proxy's value for bounded memory, applied unless
 *   the configuration sets the key (docs in gp_conf_write_markdown). */
typedef enum { GP_KAFKA_FORCED = 0, GP_KAFKA_BOUNDED } gp_kafka_kind_t;

typedef struct gp_kafka_key {
        const char *role, *key;
        const char *value; /* NULL: from the configuration (from_conf) */
        gp_kafka_kind_t kind;
        const char *refused; /* FORCED: why kafka.KEY is refused; NULL: a
                              * kafka.KEY is taken and then overridden */
        const char *(*from_conf)(const gp_conf_t *conf); /* NULL: value */
} gp_kafka_key_t;
typedef gp_kafka_key_t gp_kafka_default_t;

extern const gp_kafka_key_t gp_kafka_keys[];
/* The BOUNDED rows of gp_kafka_keys (its tail, up to the NULL key), for
 * proxy/loop/kafka_clients.c and bench/passthrough.c, which apply them all. */
extern const gp_kafka_key_t *const gp_bounded_defaults;

/* The value gate-proxy forces for row k on role's client under conf;
 * NULL when k is not forced on that role, or this configuration sets
 * none (transactional.id at at-least-once). */
const char *gp_kafka_forced(const gp_kafka_key_t *k, const gp_conf_t *conf, const char *role);

/* The key table, for tests and --list-config: the number of keys and the
 * name of key i (NULL when i >= gp_conf_n_keys()). kafka.* not included. */
size_t gp_conf_n_keys(void);
const char *gp_conf_key_name(size_t i);

#endif
