/* tests/tools/gp_produce.c: gp-produce, the test data generator for the
 * integration tests and the benchmark.
 *
 * Writes N JSON records {"id":<n>,"ts":<event time ms>,"pad":"..."} to a
 * topic with an idempotent producer; the Kafka timestamp equals the event
 * time, so kafka-timestamp and json:ts see the same value. Everything but
 * the default --ts-start is a function of the options and --seed, so two
 * runs with the same options write the same records.
 *
 * With --format avro or confluent the value is an Avro record instead
 * (schema: --print-schema), encoded by avro-c, so the proxy's own Avro
 * reader is checked against an independent writer.
 *
 * Uses librdkafka and avro-c (and gate/timeparse.h for strict numbers); it
 * shares nothing with proxy/. */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <avro.h>
#include <librdkafka/rdkafka.h>

#include "gate/timeparse.h"

#define EXIT_OK     0
#define EXIT_FAILED 1
#define EXIT_USAGE  2
#define MAX_PAD     (1 << 20)

enum { F_JSON = 0, F_AVRO, F_CONFLUENT };

/* The Avro value: fields of most kinds before the event time, so a reader
 * must skip arrays, maps, unions, enums and nested records to reach
 * meta.ts (avro:meta.ts). */
static const char SCHEMA[] =
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"gp.test\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\"},"
        "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
        "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"
        "{\"name\":\"customer\",\"type\":[\"null\",{\"type\":\"record\",\"name\":"
        "\"Customer\",\"fields\":[{\"name\":\"name\",\"type\":\"string\"},{\"name\":"
        "\"tier\",\"type\":{\"type\":\"enum\",\"name\":\"Tier\",\"symbols\":[\"FREE\","
        "\"PRO\"]}}]}]},"
        "{\"name\":\"price\",\"type\":\"double\"},"
        "{\"name\":\"meta\",\"type\":{\"type\":\"record\",\"name\":\"Meta\",\"fields\":["
        "{\"name\":\"source\",\"type\":\"string\"},"
        "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":"
        "\"timestamp-millis\"}}]}},"
        "{\"name\":\"pad\",\"type\":\"string\"}]}";

typedef struct prod {
        /* options */
        const char *bootstrap, *topic;
        int64_t count, start_id, ts_start, ts_step, disorder, bad_every, key_every;
        int64_t partitions_hint, pad, timeout_ms, partition; /* partition: -1: any */
        double rate;
        uint64_t seed;
        bool have_ts_start, headers, partition_rr, quiet;
        int format; /* F_JSON, F_AVRO, F_CONFLUENT */
        int64_t schema_id;
        const char *ts_header;
        avro_schema_t schema;
        avro_value_iface_t *iface;
        avro_value_t rec;
        const char **xconf;
        size_t n_xconf;
        const char **hdr; /* --header NAME=VALUE, pairs */
        size_t n_hdr;
        const char *pick_arg; /* --pick LIST */
        int64_t *pick;        /* the records i to write, in order */
        size_t n_pick;

        rd_kafka_t *rk;
        int nparts;
        /* delivery reports */
        int64_t delivered, failed;
        char first_error[256];
        /* --resend-timed-out: records whose delivery timed out, sent again
         * by a new producer once the old one has nothing left */
        bool resend;
        struct again *again;
        size_t n_again, cap_again;
        int64_t resent;
} prod_t;

/* A record to send again: where it went and what it was. */
struct again {
        int32_t partition;
        int64_t ts;
        void *key, *val;
        size_t key_len, len;
        rd_kafka_headers_t *hdrs;
};

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* splitmix64: small, seeded, the same everywhere. */
static uint64_t rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* Keeps a copy of m to send again; false when out of memory. */
static bool keep_again(prod_t *g, const rd_kafka_message_t *m) {
        if (g->n_again == g->cap_again) {
                size_t cap = g->cap_again ? 2 * g->cap_again : 256;
                struct again *a = realloc(g->again, cap * sizeof(*a));
                if (!a)
                        return false;
                g->again = a;
                g->cap_again = cap;
        }
        struct again *a = &g->again[g->n_again];
        *a = (struct again){.partition = m->partition,
                            .ts = rd_kafka_message_timestamp(m, NULL),
                            .key_len = m->key_len,
                            .len = m->len};
        a->key = m->key_len ? malloc(m->key_len) : NULL;
        a->val = m->len ? malloc(m->len) : NULL;
        if ((m->key_len && !a->key) || (m->len && !a->val)) {
                free(a->key);
                free(a->val);
                return false;
        }
        if (m->key_len)
                memcpy(a->key, m->key, m->key_len);
        if (m->len)
                memcpy(a->val, m->payload, m->len);
        rd_kafka_headers_t *h = NULL;
        if (!rd_kafka_message_headers(m, &h))
                a->hdrs = rd_kafka_headers_copy(h);
        g->n_again++;
        return true;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk;
        prod_t *g = opaque;
        if (m->err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT && g->resend && keep_again(g, m))
                return;
        if (m->err) {
                if (!g->failed++)
                        snprintf(g->first_error, sizeof(g->first_error), "%s",
                                 rd_kafka_err2str(m->err));
        } else {
                g->delivered++;
        }
}

static void kafka_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
        (void)rk;
        if (level <= 4)
                fprintf(stderr, "gp-produce: librdkafka %s: %s\n", fac, buf);
}

static rd_kafka_t *kafka_new(prod_t *g) {
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        const char *kv[][2] = {
                {"bootstrap.servers", g->bootstrap},
                {"enable.idempotence", "true"},
                {"client.id", "gp-produce"},
                {"linger.ms", "5"},
        };
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
                if (rd_kafka_conf_set(conf, kv[i][0], kv[i][1], err, sizeof(err))) {
                        fprintf(stderr, "gp-produce: %s: %s\n", kv[i][0], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        /* A record stuck for 20 s is sent again by a new producer. */
        if (g->resend &&
            rd_kafka_conf_set(conf, "message.timeout.ms", "20000", err, sizeof err)) {
                fprintf(stderr, "gp-produce: message.timeout.ms: %s\n", err);
                rd_kafka_conf_destroy(conf);
                return NULL;
        }
        for (size_t i = 0; i < g->n_xconf; i++)
                if (rd_kafka_conf_set(conf, g->xconf[2 * i], g->xconf[2 * i + 1], err,
                                      sizeof(err))) {
                        fprintf(stderr, "gp-produce: -X %s: %s\n", g->xconf[2 * i], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        rd_kafka_conf_set_opaque(conf, g);
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_conf_set_log_cb(conf, kafka_log);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        if (!rk) {
                fprintf(stderr, "gp-produce: cannot create the producer: %s\n", err);
                rd_kafka_conf_destroy(conf);
        }
        return rk;
}

/* Partition count of the topic: > 0; 0 if it does not exist; -1 on error. */
static int partitions(prod_t *g) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(g->rk, g->topic, NULL);
        if (!rkt) {
                fprintf(stderr, "gp-produce: topic %s: %s\n", g->topic,
                        rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        int n = -1;
        rd_kafka_resp_err_t err = rd_kafka_metadata(g->rk, 0, rkt, &md, 10000);
        if (err)
                fprintf(stderr, "gp-produce: cannot read the metadata of %s from %s: %s\n",
                        g->topic, g->bootstrap, rd_kafka_err2str(err));
        else if (md->topic_cnt != 1)
                fprintf(stderr, "gp-produce: the broker did not describe %s\n", g->topic);
        else if (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
                n = 0;
        else if (md->topics[0].err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
                n = -2; /* just created: ask again */
        else if (md->topics[0].err)
                fprintf(stderr, "gp-produce: topic %s: %s\n", g->topic,
                        rd_kafka_err2str(md->topics[0].err));
        else {
                n = md->topics[0].partition_cnt;
                for (int i = 0; i < n; i++)
                        if (md->topics[0].partitions[i].leader < 0)
                                n = -2;
        }
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return n;
}

/* Creates the topic with n partitions (broker's replication factor). */
static int create_topic(prod_t *g, int n) {
        char err[512];
        int rc = -1;
        rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(g->topic, n, -1, err, sizeof(err));
        if (!nt) {
                fprintf(stderr, "gp-produce: topic %s: %s\n", g->topic, err);
                return -1;
        }
        rd_kafka_queue_t *q = rd_kafka_queue_new(g->rk);
        rd_kafka_AdminOptions_t *o =
                rd_kafka_AdminOptions_new(g->rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
        rd_kafka_AdminOptions_set_operation_timeout(o, 30000, err, sizeof(err));
        rd_kafka_CreateTopics(g->rk, &nt, 1, o, q);
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 60000);
        if (!ev) {
                fprintf(stderr, "gp-produce: creating %s: no answer in 60 s\n", g->topic);
        } else if (rd_kafka_event_error(ev)) {
                fprintf(stderr, "gp-produce: creating %s: %s\n", g->topic,
                        rd_kafka_event_error_string(ev));
        } else {
                size_t cnt = 0;
                const rd_kafka_topic_result_t **res = rd_kafka_CreateTopics_result_topics(
                        rd_kafka_event_CreateTopics_result(ev), &cnt);
                rd_kafka_resp_err_t e = cnt ? rd_kafka_topic_result_error(res[0]) : 0;
                if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                        fprintf(stderr, "gp-produce: creating %s: %s\n", g->topic,
                                rd_kafka_topic_result_error_string(res[0]));
                else {
                        rc = 0;
                        if (!g->quiet)
                                fprintf(stderr,
                                        "gp-produce: created topic %s with %d partitions\n",
                                        g->topic, n);
                }
        }
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        rd_kafka_NewTopic_destroy(nt);
        return rc;
}

/* Finds the topic (creating it with --partitions-hint when absent) and
 * waits until every partition has a leader. */
static int ensure_topic(prod_t *g) {
        bool created = false;
        for (int tries = 0; tries < 100; tries++) {
                int n = partitions(g);
                if (n == -1)
                        return -1;
                if (n > 0) {
                        g->nparts = n;
                        if (g->partitions_hint > 0 && n != g->partitions_hint)
                                fprintf(stderr,
                                        "gp-produce: warning: %s has %d partitions, not "
                                        "%" PRId64 "\n",
                                        g->topic, n, g->partitions_hint);
                        return 0;
                }
                if (n == 0 && !created) {
                        if (g->partitions_hint <= 0) {
                                fprintf(stderr,
                                        "gp-produce: topic %s does not exist on %s "
                                        "(--partitions-hint N creates it)\n",
                                        g->topic, g->bootstrap);
                                return -1;
                        }
                        if (create_topic(g, (int)g->partitions_hint))
                                return -1;
                        created = true;
                }
                struct timespec ts = {0, 200 * 1000000L};
                nanosleep(&ts, NULL);
        }
        fprintf(stderr, "gp-produce: topic %s has no leader for every partition after 20 s\n",
                g->topic);
        return -1;
}

static void enc_die(const char *what) {
        fprintf(stderr, "gp-produce: avro-c: %s: %s\n", what, avro_strerror());
        exit(EXIT_USAGE);
}

static int enc_init(prod_t *g) {
        if (avro_schema_from_json_length(SCHEMA, sizeof(SCHEMA) - 1, &g->schema))
                enc_die("schema");
        if (!(g->iface = avro_generic_class_from_schema(g->schema)) ||
            avro_generic_value_new(g->iface, &g->rec))
                enc_die("value");
        return 0;
}

static void enc_fini(prod_t *g) {
        if (!g->iface)
                return;
        avro_value_decref(&g->rec);
        avro_value_iface_decref(g->iface);
        avro_schema_decref(g->schema);
}

/* Encodes record id into buf (after the 5-byte header in the Confluent
 * format); returns the length. */
static size_t enc_record(prod_t *g, int64_t id, int64_t ev, const char *pad, char *buf,
                         size_t cap) {
        avro_value_t f, e, b, m;
        char name[32];
        avro_value_reset(&g->rec);
        if (avro_value_get_by_name(&g->rec, "id", &f, NULL) || avro_value_set_long(&f, id))
                enc_die("id");
        avro_value_get_by_name(&g->rec, "tags", &f, NULL);
        for (int64_t k = 0; k < id % 3; k++) {
                snprintf(name, sizeof name, "tag-%" PRId64, k);
                if (avro_value_append(&f, &e, NULL) || avro_value_set_string(&e, name))
                        enc_die("tags");
        }
        avro_value_get_by_name(&g->rec, "attrs", &f, NULL);
        for (int64_t k = 0; k < id % 2 * 2; k++) {
                snprintf(name, sizeof name, "a%" PRId64, k);
                if (avro_value_add(&f, name, &e, NULL, NULL) ||
                    avro_value_set_int(&e, (int32_t)(id % 1000 + k)))
                        enc_die("attrs");
        }
        avro_value_get_by_name(&g->rec, "customer", &f, NULL);
        if (id % 2) {
                if (avro_value_set_branch(&f, 1, &b) ||
                    avro_value_get_by_name(&b, "name", &e, NULL) ||
                    avro_value_set_string(&e, "ada") ||
                    avro_value_get_by_name(&b, "tier", &e, NULL) ||
                    avro_value_set_enum(&e, (int)(id % 4 == 1)))
                        enc_die("customer");
        } else if (avro_value_set_branch(&f, 0, &b) || avro_value_set_null(&b)) {
                enc_die("customer");
        }
        avro_value_get_by_name(&g->rec, "price", &f, NULL);
        avro_value_set_double(&f, (double)id / 4.0);
        avro_value_get_by_name(&g->rec, "meta", &m, NULL);
        if (avro_value_get_by_name(&m, "source", &e, NULL) ||
            avro_value_set_string(&e, "gp") || avro_value_get_by_name(&m, "ts", &e, NULL) ||
            avro_value_set_long(&e, ev))
                enc_die("meta");
        avro_value_get_by_name(&g->rec, "pad", &f, NULL);
        avro_value_set_string(&f, pad);

        size_t off = g->format == F_CONFLUENT ? 5 : 0;
        avro_writer_t w = avro_writer_memory(buf + off, (int64_t)(cap - off));
        if (avro_value_write(w, &g->rec))
                enc_die("write");
        size_t n = (size_t)avro_writer_tell(w);
        avro_writer_free(w);
        if (off) {
                uint32_t sid = (uint32_t)g->schema_id;
                buf[0] = 0;
                buf[1] = (char)(sid >> 24);
                buf[2] = (char)(sid >> 16);
                buf[3] = (char)(sid >> 8);
                buf[4] = (char)sid;
        }
        return off + n;
}

/* One record: the value into *val, the key into key (or NULL). */
static void make_record(prod_t *g, int64_t i, uint64_t *rng, char **val, size_t *vcap,
                        size_t *vlen, int64_t *ev, char *key, bool *has_key, const char *pad) {
        int64_t id = g->start_id + i;
        int64_t jitter = 0;
        if (g->disorder > 0)
                jitter = (int64_t)(rng_next(rng) % (uint64_t)(2 * g->disorder + 1)) -
                         g->disorder;
        *ev = g->ts_start + i * g->ts_step + jitter;
        if (*ev < 0)
                *ev = 0;
        *has_key = g->key_every > 0 && id % g->key_every == 0;
        if (*has_key)
                snprintf(key, 32, "k%" PRId64, ((id % 1000) + 1000) % 1000);

        size_t need = (size_t)g->pad + 512;
        if (need > *vcap) {
                char *p = realloc(*val, need);
                if (!p) {
                        fputs("gp-produce: out of memory\n", stderr);
                        exit(EXIT_USAGE);
                }
                *val = p;
                *vcap = need;
        }
        int n;
        bool bad = g->bad_every > 0 && (i + 1) % g->bad_every == 0;
        if (g->format != F_JSON) {
                *vlen = enc_record(g, id, *ev, pad, *val, *vcap);
                if (bad) {
                        int kind = (int)(((i + 1) / g->bad_every) % 3);
                        if (kind == 1) { /* confluent: bad-frame; avro: a bad varint */
                                memcpy(*val,
                                       g->format == F_CONFLUENT ? "not avro" : "\xff\xff\xff",
                                       g->format == F_CONFLUENT ? 8 : 3);
                                *vlen = g->format == F_CONFLUENT ? 8 : 3;
                        } else if (kind == 2 || g->format == F_AVRO) { /* truncated */
                                *vlen = g->format == F_CONFLUENT ? 5 + 6 : 6;
                        } else { /* an id the registry does not know */
                                uint32_t bid = (uint32_t)(g->schema_id + 1000000);
                                (*val)[1] = (char)(bid >> 24);
                                (*val)[2] = (char)(bid >> 16);
                                (*val)[3] = (char)(bid >> 8);
                                (*val)[4] = (char)bid;
                        }
                }
                return;
        }
        if (bad && ((i + 1) / g->bad_every) % 2 == 1)
                n = snprintf(*val, *vcap, "not json: id=%" PRId64, id);
        else if (bad)
                n = snprintf(*val, *vcap, "{\"id\":%" PRId64 ",\"pad\":\"%s\"}", id, pad);
        else
                n = snprintf(*val, *vcap,
                             "{\"id\":%" PRId64 ",\"ts\":%" PRId64 ",\"pad\":\"%s\"}", id, *ev,
                             pad);
        *vlen = (size_t)n;
}

/* A new producer for the records that timed out (librdkafka #5430: a
 * client that saw a partition without a leader while its broker was fenced
 * may never send to it again), each to its partition as before; the old
 * producer has nothing left. A record that timed out may have been written
 * all the same: the topic then holds it twice, as after any retry. */
static int resend_again(prod_t *g) {
        struct again *list = g->again;
        size_t n = g->n_again;
        g->again = NULL;
        g->n_again = g->cap_again = 0;
        fprintf(stderr,
                "gp-produce: %s: %zu records timed out; sending them again with a new "
                "producer\n",
                g->topic, n);
        rd_kafka_t *fresh = kafka_new(g);
        int rc = fresh ? 0 : -1;
        if (fresh) {
                rd_kafka_destroy(g->rk);
                g->rk = fresh;
        } else
                g->failed += (int64_t)n;
        for (size_t i = 0; i < n; i++) {
                struct again *a = &list[i];
                while (!rc) {
                        rd_kafka_resp_err_t err = rd_kafka_producev(
                                g->rk, RD_KAFKA_V_TOPIC(g->topic),
                                RD_KAFKA_V_PARTITION(a->partition),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_KEY(a->key, a->key_len),
                                RD_KAFKA_V_VALUE(a->val, a->len), RD_KAFKA_V_TIMESTAMP(a->ts),
                                RD_KAFKA_V_HEADERS(a->hdrs), RD_KAFKA_V_END);
                        if (!err) {
                                a->hdrs = NULL; /* the producer's now */
                                g->resent++;
                                break;
                        }
                        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                                fprintf(stderr, "gp-produce: sending again: %s\n",
                                        rd_kafka_err2str(err));
                                rc = -1;
                                break;
                        }
                        rd_kafka_poll(g->rk, 50);
                }
                if (a->hdrs)
                        rd_kafka_headers_destroy(a->hdrs);
                free(a->key);
                free(a->val);
        }
        free(list);
        return rc;
}

static int produce_all(prod_t *g) {
        char *pad = malloc((size_t)g->pad + 1);
        char *val = NULL;
        size_t vcap = 0;
        int64_t t0 = mono_ms(), next_report = t0 + 1000, last_report_n = 0, last_report_t = t0;
        int64_t n = g->pick_arg ? (int64_t)g->n_pick : g->count;
        int rc = 0;
        if (!pad) {
                fputs("gp-produce: out of memory\n", stderr);
                return -1;
        }
        for (int64_t k = 0; k < g->pad; k++)
                pad[k] = (char)('a' + k % 26);
        pad[g->pad] = '\0';

        for (int64_t j = 0; j < n && !g->failed; j++) {
                char key[32], hval[32];
                bool has_key;
                size_t vlen;
                int64_t ev;
                int64_t i = g->pick_arg ? g->pick[j] : j;
                /* The jitter generator's state before record i: each record
                 * draws once, so --pick writes record i as it is without. */
                uint64_t rng = g->seed + (uint64_t)i * 0x9e3779b97f4a7c15ULL;

                if (g->rate > 0) {
                        for (;;) {
                                int64_t due = t0 + (int64_t)((double)j * 1000.0 / g->rate);
                                int64_t now = mono_ms();
                                if (now >= due)
                                        break;
                                rd_kafka_poll(g->rk, (int)(due - now > 100 ? 100 : due - now));
                        }
                }
                make_record(g, i, &rng, &val, &vcap, &vlen, &ev, key, &has_key, pad);
                int hlen = snprintf(hval, sizeof(hval), "%" PRId64, g->start_id + i);
                int32_t part = g->partition >= 0 ? (int32_t)g->partition
                               : g->partition_rr ? (int32_t)(i % g->nparts)
                                                 : RD_KAFKA_PARTITION_UA;

                char tsval[32];
                int tslen = snprintf(tsval, sizeof(tsval), "%" PRId64, ev);
                for (;;) {
                        rd_kafka_resp_err_t err;
                        if (g->n_hdr) {
                                /* The headers below, then those of --header. */
                                rd_kafka_headers_t *hs = rd_kafka_headers_new(g->n_hdr + 2);
                                if (g->headers || g->ts_header)
                                        rd_kafka_header_add(hs, "h", -1, hval,
                                                            g->headers ? (ssize_t)hlen : 0);
                                if (g->ts_header)
                                        rd_kafka_header_add(hs, g->ts_header, -1, tsval,
                                                            (ssize_t)tslen);
                                for (size_t k = 0; k < g->n_hdr; k++)
                                        rd_kafka_header_add(hs, g->hdr[2 * k], -1,
                                                            g->hdr[2 * k + 1], -1);
                                err = rd_kafka_producev(
                                        g->rk, RD_KAFKA_V_TOPIC(g->topic),
                                        RD_KAFKA_V_PARTITION(part),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_KEY(has_key ? key : NULL,
                                                       has_key ? strlen(key) : 0),
                                        RD_KAFKA_V_VALUE(val, vlen), RD_KAFKA_V_TIMESTAMP(ev),
                                        RD_KAFKA_V_HEADERS(hs), RD_KAFKA_V_END);
                                if (err) /* still ours */
                                        rd_kafka_headers_destroy(hs);
                        } else if (g->ts_header)
                                err = rd_kafka_producev(
                                        g->rk, RD_KAFKA_V_TOPIC(g->topic),
                                        RD_KAFKA_V_PARTITION(part),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_KEY(has_key ? key : NULL,
                                                       has_key ? strlen(key) : 0),
                                        RD_KAFKA_V_VALUE(val, vlen), RD_KAFKA_V_TIMESTAMP(ev),
                                        RD_KAFKA_V_HEADER("h", hval,
                                                          g->headers ? (ssize_t)hlen : 0),
                                        RD_KAFKA_V_HEADER(g->ts_header, tsval, (ssize_t)tslen),
                                        RD_KAFKA_V_END);
                        else if (g->headers)
                                err = rd_kafka_producev(
                                        g->rk, RD_KAFKA_V_TOPIC(g->topic),
                                        RD_KAFKA_V_PARTITION(part),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_KEY(has_key ? key : NULL,
                                                       has_key ? strlen(key) : 0),
                                        RD_KAFKA_V_VALUE(val, vlen), RD_KAFKA_V_TIMESTAMP(ev),
                                        RD_KAFKA_V_HEADER("h", hval, (ssize_t)hlen),
                                        RD_KAFKA_V_END);
                        else
                                err = rd_kafka_producev(
                                        g->rk, RD_KAFKA_V_TOPIC(g->topic),
                                        RD_KAFKA_V_PARTITION(part),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_KEY(has_key ? key : NULL,
                                                       has_key ? strlen(key) : 0),
                                        RD_KAFKA_V_VALUE(val, vlen), RD_KAFKA_V_TIMESTAMP(ev),
                                        RD_KAFKA_V_END);
                        if (!err)
                                break;
                        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                                rd_kafka_poll(g->rk, 50);
                                continue;
                        }
                        fprintf(stderr, "gp-produce: record %" PRId64 ": %s\n", i,
                                rd_kafka_err2str(err));
                        rc = -1;
                        goto out;
                }
                rd_kafka_poll(g->rk, 0);

                int64_t now = mono_ms();
                if (now >= next_report && !g->quiet) {
                        double secs = (double)(now - last_report_t) / 1000.0;
                        fprintf(stderr,
                                "gp-produce: %s: sent=%" PRId64 " delivered=%" PRId64
                                " failed=%" PRId64 " rate=%.0f/s\n",
                                g->topic, j + 1, g->delivered, g->failed,
                                secs > 0 ? (double)(j + 1 - last_report_n) / secs : 0.0);
                        last_report_n = j + 1;
                        last_report_t = now;
                        next_report = now + 1000;
                }
        }
out:
        free(pad);
        free(val);
        /* Wait for every delivery report, with a progress line each second;
         * with --resend-timed-out, the records that timed out go again
         * through a new producer once this one has nothing left. */
        int64_t deadline = mono_ms() + g->timeout_ms;
        for (;;) {
                while (rd_kafka_outq_len(g->rk) > 0 && mono_ms() < deadline) {
                        rd_kafka_flush(g->rk, 1000);
                        if (rd_kafka_outq_len(g->rk) > 0 && !g->quiet)
                                fprintf(stderr, "gp-produce: %s: waiting for %d deliveries\n",
                                        g->topic, rd_kafka_outq_len(g->rk));
                }
                if (!g->n_again || rd_kafka_outq_len(g->rk) > 0 || mono_ms() >= deadline || rc)
                        break;
                if (resend_again(g))
                        rc = -1;
        }
        if (g->n_again) {
                fprintf(stderr,
                        "gp-produce: %zu timed-out records not sent again within %" PRId64
                        " ms\n",
                        g->n_again, g->timeout_ms);
                rc = -1;
        }
        if (rd_kafka_outq_len(g->rk) > 0) {
                fprintf(stderr, "gp-produce: %d records not delivered within %" PRId64 " ms\n",
                        rd_kafka_outq_len(g->rk), g->timeout_ms);
                rc = -1;
        }
        if (g->failed) {
                fprintf(stderr, "gp-produce: %" PRId64 " delivery errors, the first: %s\n",
                        g->failed, g->first_error);
                rc = -1;
        }
        if (!g->quiet) {
                double secs = (double)(mono_ms() - t0) / 1000.0;
                fprintf(stderr, "gp-produce: %s: delivered %" PRId64 " in %.1f s (%.0f/s)\n",
                        g->topic, g->delivered, secs,
                        secs > 0 ? (double)g->delivered / secs : 0.0);
        }
        return rc;
}

static void usage(FILE *f) {
        fputs("usage: gp-produce --bootstrap HOST:PORT --topic S --count N\n"
              "                  [--partitions-hint P] [--partition-rr | --partition N]\n"
              "                  [--rate R[/s]]\n"
              "                  [--start-id K] [--ts-start MS] [--ts-step MS] [--disorder "
              "MS]\n"
              "                  [--bad-every K] [--key-every K] [--headers] [--pad-bytes N]\n"
              "                  [--seed N] [--timeout-ms MS] [--resend-timed-out] [-X "
              "key=value]... [--quiet]\n"
              "                  [--format json|avro|confluent] [--schema-id N] [--ts-header "
              "NAME]\n"
              "                  [--pick LIST] [--header NAME=VALUE]...\n"
              "       gp-produce --print-schema\n"
              "\n"
              "Writes N test records to topic S with an idempotent producer\n"
              "(enable.idempotence=true). Record i (0-based, id = K + i):\n"
              "  value   {\"id\":<id>,\"ts\":<event time>,\"pad\":\"abc...\"}\n"
              "  event   ts-start + i * ts-step + jitter, jitter uniform in\n"
              "  time    [-disorder, +disorder] (0 below 0); the Kafka timestamp is set to\n"
              "          the same value, so kafka-timestamp and json:ts agree\n"
              "  key     \"k<id mod 1000>\" when id is a multiple of --key-every, else null\n"
              "  header  h=\"<id>\" with --headers\n"
              "Records i with (i+1) a multiple of --bad-every are bad, alternately\n"
              "  not JSON:              not json: id=<id>\n"
              "  JSON without \"ts\":     {\"id\":<id>,\"pad\":\"...\"}\n"
              "(their Kafka timestamp is still the event time).\n"
              "With --format avro the value is the same record in Avro binary (schema:\n"
              "--print-schema; the event time is meta.ts, timestamp-millis); with confluent\n"
              "it is framed as byte 0, the 4-byte --schema-id, then the Avro binary. Bad\n"
              "Avro records cycle through: not framed (\"not avro\"; plain: a bad varint),\n"
              "truncated to 6 bytes, and (confluent) schema id --schema-id + 1000000.\n"
              "Given the same options and --seed, the records are the same on every run;\n"
              "only the default --ts-start (now) changes. --pick writes some of them, each\n"
              "exactly as it would be written without it (e.g. a hand-made copy of chosen\n"
              "records in a chosen order).\n"
              "\n"
              "Options:\n"
              "  --bootstrap HOST:PORT  the broker (required)\n"
              "  --topic S              the topic (required)\n"
              "  --count N              records to write (required; 0 is allowed, e.g. only "
              "to\n"
              "                         create the topic)\n"
              "  --partitions-hint P    create S with P partitions if it does not exist (the\n"
              "                         test broker has auto-creation off); warn if it "
              "exists\n"
              "                         with another count\n"
              "  --partition-rr         record i goes to partition i mod P (default: the\n"
              "                         librdkafka partitioner on the key, random for null\n"
              "                         keys; -X partitioner=murmur2_random matches Java)\n"
              "  --partition N          every record to partition N\n"
              "  --rate R[/s]           records per second (default 0: as fast as possible)\n"
              "  --start-id K           id of the first record (default 0)\n"
              "  --ts-start MS          event time of record 0, epoch ms or RFC 3339 "
              "(default:\n"
              "                         now). Far past times can be deleted by retention\n"
              "                         (retention.ms, 7 days), far future ones refused by\n"
              "                         log.message.timestamp.after.max.ms\n"
              "  --ts-step MS           event-time step between records (default 1; may be 0\n"
              "                         or negative)\n"
              "  --disorder MS          jitter bound (default 0: in order)\n"
              "  --bad-every K          every K-th record is bad (default 0: none)\n"
              "  --key-every K          key only every K-th id (default 1: all keyed;\n"
              "                         0: all keys null)\n"
              "  --headers              add header h=<id>\n"
              "  --ts-header NAME       add header NAME=<event time ms>\n"
              "  --header NAME=VALUE    add this header to every record, after the others\n"
              "                         (repeatable)\n"
              "  --format F             json (default), avro (plain binary) or confluent\n"
              "                         (wire format with --schema-id)\n"
              "  --schema-id N          the registry id in the confluent framing (default 1)\n"
              "  --print-schema         print the Avro schema and exit\n"
              "  --pick LIST            write only the records i in LIST, in its order:\n"
              "                         comma-separated indexes I and ranges A-B (0-based,\n"
              "                         below --count; repeats allowed), e.g. 0-3,6,4,4\n"
              "  --pad-bytes N          length of \"pad\" (default 16, at most 1048576)\n"
              "  --seed N               seed of the jitter (default 1)\n"
              "  --timeout-ms MS        wait this long for the last deliveries (default "
              "60000)\n"
              "  -X key=value           a librdkafka producer property (repeatable)\n"
              "  --resend-timed-out     a record whose delivery times out (20 s) is sent\n"
              "                         again by a new producer, to the same partition, once\n"
              "                         the old one has nothing left (it may then be in the\n"
              "                         topic twice); for tests that freeze the broker\n"
              "  --quiet                no progress lines\n"
              "\n"
              "Output: a progress line on stderr every second; at the end \"produced=N\" on\n"
              "stdout, N the records the broker acknowledged.\n"
              "Exit status: 0 all N delivered; 1 a delivery error (the first one is\n"
              "printed); 2 usage error, or the topic is missing / cannot be created.\n"
              "\n"
              "Example: 10000 records over 4 partitions, one bad record in 100, 2 s of\n"
              "disorder at 1000 records/s of event time:\n"
              "  gp-produce --bootstrap 127.0.0.1:19092 --topic orders --partitions-hint 4 "
              "\\\n"
              "             --count 10000 --ts-step 1 --disorder 2000 --bad-every 100\n",
              f);
}

static int num(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
        const char *why = NULL;
        if (gp_parse_i64(s, strlen(s), out, &why) || *out < lo || *out > hi) {
                fprintf(stderr,
                        "gp-produce: %s %s: %s (an integer from %" PRId64 " to %" PRId64 ")\n",
                        opt, s, why ? why : "out of range", lo, hi);
                return -1;
        }
        return 0;
}

/* --pick LIST: indexes I and ranges A-B, comma-separated, each below
 * --count; 0 or -1 (usage error printed). */
static int parse_pick(prod_t *g) {
        const char *s = g->pick_arg, *why = NULL;
        size_t cap = 0;
        while (*s) {
                const char *end = strchr(s, ',');
                if (!end)
                        end = s + strlen(s);
                const char *dash = memchr(s, '-', (size_t)(end - s));
                const char *first_end = dash ? dash : end;
                int64_t a = 0, b = 0;
                bool bad = gp_parse_i64(s, (size_t)(first_end - s), &a, &why) != 0;
                if (dash)
                        bad = bad ||
                              gp_parse_i64(dash + 1, (size_t)(end - dash - 1), &b, &why);
                else
                        b = a;
                if (bad) {
                        fprintf(stderr, "gp-produce: --pick %s: '%.*s' is not I or A-B\n",
                                g->pick_arg, (int)(end - s), s);
                        return -1;
                }
                if (a < 0 || b < a || b >= g->count) {
                        fprintf(stderr,
                                "gp-produce: --pick %s: '%.*s' is not within 0 to %" PRId64
                                " (--count - 1), or ends before it starts\n",
                                g->pick_arg, (int)(end - s), s, g->count - 1);
                        return -1;
                }
                for (int64_t i = a; i <= b; i++) {
                        if (g->n_pick == cap) {
                                cap = cap ? cap * 2 : 64;
                                int64_t *p = realloc(g->pick, cap * sizeof(*p));
                                if (!p) {
                                        fputs("gp-produce: out of memory\n", stderr);
                                        return -1;
                                }
                                g->pick = p;
                        }
                        g->pick[g->n_pick++] = i;
                }
                s = *end ? end + 1 : end;
        }
        return 0;
}

/* 0, 1 (help printed) or -1 (usage error printed). */
static int parse_args(prod_t *g, int argc, char **argv) {
        enum {
                O_BOOT = 256,
                O_TOPIC,
                O_COUNT,
                O_HINT,
                O_RR,
                O_RATE,
                O_SID,
                O_TS0,
                O_STEP,
                O_DIS,
                O_BAD,
                O_KEY,
                O_HDR,
                O_PAD,
                O_SEED,
                O_TMO,
                O_QUIET,
                O_RESEND,
                O_FMT,
                O_SID2,
                O_TSH,
                O_PRINT,
                O_PART,
                O_PICK,
                O_XHDR
        };
        static const struct option opts[] = {
                {"bootstrap", required_argument, NULL, O_BOOT},
                {"topic", required_argument, NULL, O_TOPIC},
                {"count", required_argument, NULL, O_COUNT},
                {"partitions-hint", required_argument, NULL, O_HINT},
                {"partition-rr", no_argument, NULL, O_RR},
                {"partition", required_argument, NULL, O_PART},
                {"rate", required_argument, NULL, O_RATE},
                {"start-id", required_argument, NULL, O_SID},
                {"ts-start", required_argument, NULL, O_TS0},
                {"ts-step", required_argument, NULL, O_STEP},
                {"disorder", required_argument, NULL, O_DIS},
                {"bad-every", required_argument, NULL, O_BAD},
                {"key-every", required_argument, NULL, O_KEY},
                {"headers", no_argument, NULL, O_HDR},
                {"pad-bytes", required_argument, NULL, O_PAD},
                {"seed", required_argument, NULL, O_SEED},
                {"timeout-ms", required_argument, NULL, O_TMO},
                {"resend-timed-out", no_argument, NULL, O_RESEND},
                {"quiet", no_argument, NULL, O_QUIET},
                {"format", required_argument, NULL, O_FMT},
                {"schema-id", required_argument, NULL, O_SID2},
                {"ts-header", required_argument, NULL, O_TSH},
                {"print-schema", no_argument, NULL, O_PRINT},
                {"pick", required_argument, NULL, O_PICK},
                {"header", required_argument, NULL, O_XHDR},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        const int64_t BIG = INT64_C(1) << 50;
        int64_t v;
        int o;
        bool have_count = false;
        g->ts_step = 1;
        g->key_every = 1;
        g->pad = 16;
        g->seed = 1;
        g->timeout_ms = 60000;
        g->partition = -1;
        g->schema_id = 1;
        opterr = 0;
        while ((o = getopt_long(argc, argv, ":hX:", opts, NULL)) != -1) {
                int bad = 0;
                switch (o) {
                case O_BOOT:
                        g->bootstrap = optarg;
                        break;
                case O_TOPIC:
                        g->topic = optarg;
                        break;
                case O_COUNT:
                        bad = num("--count", optarg, 0, BIG, &g->count);
                        have_count = true;
                        break;
                case O_HINT:
                        bad = num("--partitions-hint", optarg, 1, 100000, &g->partitions_hint);
                        break;
                case O_RR:
                        g->partition_rr = true;
                        break;
                case O_PART:
                        bad = num("--partition", optarg, 0, 100000, &g->partition);
                        break;
                case O_RATE: {
                        char buf[64];
                        size_t n = strlen(optarg);
                        if (n > 2 && !strcmp(optarg + n - 2, "/s"))
                                n -= 2;
                        if (n >= sizeof(buf)) {
                                bad = -1;
                                fprintf(stderr, "gp-produce: --rate %s: too long\n", optarg);
                                break;
                        }
                        memcpy(buf, optarg, n);
                        buf[n] = '\0';
                        bad = num("--rate", buf, 0, 100000000, &v);
                        g->rate = (double)v;
                        break;
                }
                case O_SID:
                        bad = num("--start-id", optarg, -BIG, BIG, &g->start_id);
                        break;
                case O_TS0: {
                        const char *why = NULL;
                        if (gp_time_parse(optarg, strlen(optarg), GP_UNIT_MS, &g->ts_start,
                                          &why) ||
                            g->ts_start < 0) {
                                fprintf(stderr, "gp-produce: --ts-start %s: %s\n", optarg,
                                        why ? why : "before 1970");
                                bad = -1;
                        }
                        g->have_ts_start = true;
                        break;
                }
                case O_STEP:
                        bad = num("--ts-step", optarg, -86400000, 86400000, &g->ts_step);
                        break;
                case O_DIS:
                        bad = num("--disorder", optarg, 0, 86400000, &g->disorder);
                        break;
                case O_BAD:
                        bad = num("--bad-every", optarg, 0, BIG, &g->bad_every);
                        break;
                case O_KEY:
                        bad = num("--key-every", optarg, 0, BIG, &g->key_every);
                        break;
                case O_HDR:
                        g->headers = true;
                        break;
                case O_PAD:
                        bad = num("--pad-bytes", optarg, 0, MAX_PAD, &g->pad);
                        break;
                case O_SEED:
                        bad = num("--seed", optarg, 0, INT64_MAX, &v);
                        g->seed = (uint64_t)v;
                        break;
                case O_TMO:
                        bad = num("--timeout-ms", optarg, 1, INT32_MAX, &g->timeout_ms);
                        break;
                case O_RESEND:
                        g->resend = true;
                        break;
                case O_QUIET:
                        g->quiet = true;
                        break;
                case O_FMT:
                        if (!strcmp(optarg, "json"))
                                g->format = F_JSON;
                        else if (!strcmp(optarg, "avro"))
                                g->format = F_AVRO;
                        else if (!strcmp(optarg, "confluent"))
                                g->format = F_CONFLUENT;
                        else {
                                fprintf(stderr,
                                        "gp-produce: --format %s: expected json, avro or "
                                        "confluent\n",
                                        optarg);
                                return -1;
                        }
                        break;
                case O_SID2:
                        bad = num("--schema-id", optarg, 0, UINT32_MAX - 1000000,
                                  &g->schema_id);
                        break;
                case O_TSH:
                        g->ts_header = optarg;
                        break;
                case O_PRINT:
                        puts(SCHEMA);
                        return 1;
                case O_PICK:
                        g->pick_arg = optarg;
                        break;
                case O_XHDR: {
                        char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg) {
                                fprintf(stderr,
                                        "gp-produce: --header %s: expected NAME=VALUE\n",
                                        optarg);
                                return -1;
                        }
                        *eq = '\0';
                        const char **h = realloc(g->hdr, (g->n_hdr + 1) * 2 * sizeof(*h));
                        if (!h) {
                                fputs("gp-produce: out of memory\n", stderr);
                                return -1;
                        }
                        g->hdr = h;
                        h[2 * g->n_hdr] = optarg;
                        h[2 * g->n_hdr + 1] = eq + 1;
                        g->n_hdr++;
                        break;
                }
                case 'X': {
                        char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg) {
                                fprintf(stderr, "gp-produce: -X %s: expected key=value\n",
                                        optarg);
                                return -1;
                        }
                        *eq = '\0';
                        const char **x = realloc(g->xconf, (g->n_xconf + 1) * 2 * sizeof(*x));
                        if (!x) {
                                fputs("gp-produce: out of memory\n", stderr);
                                return -1;
                        }
                        g->xconf = x;
                        x[2 * g->n_xconf] = optarg;
                        x[2 * g->n_xconf + 1] = eq + 1;
                        g->n_xconf++;
                        break;
                }
                case 'h':
                        usage(stdout);
                        return 1;
                case ':':
                        fprintf(stderr, "gp-produce: %s needs a value (see --help)\n",
                                argv[optind - 1]);
                        return -1;
                default:
                        fprintf(stderr, "gp-produce: unknown option %s (see --help)\n",
                                argv[optind - 1]);
                        return -1;
                }
                if (bad)
                        return -1;
        }
        if (optind < argc) {
                fprintf(stderr, "gp-produce: unexpected argument '%s' (see --help)\n",
                        argv[optind]);
                return -1;
        }
        if (!g->bootstrap || !g->topic || !*g->topic || !have_count) {
                fprintf(stderr,
                        "gp-produce: --bootstrap, --topic and --count are required (see "
                        "--help)\n");
                return -1;
        }
        if (g->pick_arg && parse_pick(g))
                return -1;
        if (!g->have_ts_start) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                g->ts_start = (int64_t)ts.tv_sec * 1000;
        }
        return 0;
}

int main(int argc, char **argv) {
        prod_t g;
        memset(&g, 0, sizeof(g));
        int rc = parse_args(&g, argc, argv);
        if (rc) {
                free(g.xconf);
                free(g.hdr);
                free(g.pick);
                return rc > 0 ? EXIT_OK : EXIT_USAGE;
        }
        rc = EXIT_USAGE;
        if (g.format != F_JSON)
                enc_init(&g);
        g.rk = kafka_new(&g);
        if (g.rk && !ensure_topic(&g)) {
                if (!g.quiet)
                        fprintf(stderr,
                                "gp-produce: %s: %d partitions, %" PRId64
                                " records, first event time %" PRId64 "\n",
                                g.topic, g.nparts, g.count, g.ts_start);
                rc = produce_all(&g) ? EXIT_FAILED : EXIT_OK;
                printf("produced=%" PRId64 "\n", g.delivered);
        }
        if (g.rk)
                rd_kafka_destroy(g.rk);
        enc_fini(&g);
        free(g.xconf);
        free(g.hdr);
        free(g.pick);
        return rc;
}
