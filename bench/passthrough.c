/* bench/passthrough.c: gp-passthrough, the limit gate-proxy is measured
 * against: librdkafka's exactly-once consume -> produce -> commit loop with
 * gate-proxy's settings (assigned partitions, read_committed, batches of
 * 1024, its bounded queues (gp_bounded_defaults), a
 * transaction every --commit-interval-ms or --commit-records) and
 * no gate: no event time, no routing, no checkpoint. Record p/offset of
 * SOURCE goes to partition p of DEST, key, value, headers and timestamp
 * as read.
 *
 *   gp-passthrough --bootstrap B --source S --dest D --group G
 *                  [--commit-interval-ms 100] [--commit-records 10000]
 *                  [--at-least-once] [-X key=value]...
 *
 * Runs until SIGTERM or SIGINT, then commits what it holds and exits 0;
 * exits 1 on a Kafka error. Uses librdkafka only. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "proxy/conf/conf.h"
#include "proxy/loop/kafka_clients.h"

#define BATCH 1024
#define TMO   30000

static volatile sig_atomic_t stop;
static void on_signal(int s) {
        (void)s;
        stop = 1;
}

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void die(const char *what, const char *why) {
        fprintf(stderr, "gp-passthrough: %s: %s\n", what, why);
        exit(1);
}

static void set(rd_kafka_conf_t *c, const char *k, const char *v) {
        char err[512];
        if (rd_kafka_conf_set(c, k, v, err, sizeof err))
                die(k, err);
}

static void check(const char *what, rd_kafka_error_t *e) {
        if (e)
                die(what, rd_kafka_error_string(e));
}

int main(int argc, char **argv) {
        const char *boot = NULL, *src = NULL, *dst = NULL, *group = NULL;
        int64_t interval = 100, max_records = 10000;
        bool eos = true;
        rd_kafka_conf_t *pc = rd_kafka_conf_new(), *cc = rd_kafka_conf_new();
        static const struct option opts[] = {
                {"bootstrap", required_argument, NULL, 'b'},
                {"source", required_argument, NULL, 's'},
                {"dest", required_argument, NULL, 'd'},
                {"group", required_argument, NULL, 'g'},
                {"commit-interval-ms", required_argument, NULL, 'i'},
                {"commit-records", required_argument, NULL, 'n'},
                {"at-least-once", no_argument, NULL, 'a'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        /* As gate-proxy (gp_client_conf). */
        for (const gp_kafka_default_t *d = gp_bounded_defaults; d->key; d++) {
                rd_kafka_conf_t *c = !strcmp(d->role, "producer") ? pc : cc;
                if (gp_client_default_applies(c, d))
                        set(c, d->key, d->value);
        }
        int o;
        while ((o = getopt_long(argc, argv, "X:h", opts, NULL)) != -1) {
                char *eq;
                switch (o) {
                case 'b':
                        boot = optarg;
                        break;
                case 's':
                        src = optarg;
                        break;
                case 'd':
                        dst = optarg;
                        break;
                case 'g':
                        group = optarg;
                        break;
                case 'i':
                        interval = strtoll(optarg, NULL, 10);
                        break;
                case 'n':
                        max_records = strtoll(optarg, NULL, 10);
                        break;
                case 'a':
                        eos = false;
                        break;
                case 'X':
                        if (!(eq = strchr(optarg, '=')))
                                die("-X", "expected key=value");
                        *eq = '\0';
                        set(pc, optarg, eq + 1);
                        set(cc, optarg, eq + 1);
                        break;
                default:
                        fputs("usage: gp-passthrough --bootstrap B --source S --dest D "
                              "--group G\n"
                              "         [--commit-interval-ms 100] [--commit-records 10000]\n"
                              "         [--at-least-once] [-X key=value]...\n",
                              o == 'h' ? stdout : stderr);
                        return o == 'h' ? 0 : 2;
                }
        }
        if (!boot || !src || !dst || !group || interval < 1 || max_records < 1) {
                fputs("gp-passthrough: --bootstrap, --source, --dest and --group are "
                      "required\n",
                      stderr);
                return 2;
        }
        char txid[300], err[512];
        snprintf(txid, sizeof txid, "passthrough-%s", group);
        set(pc, "bootstrap.servers", boot);
        set(pc, "enable.idempotence", "true");
        if (eos)
                set(pc, "transactional.id", txid);
        set(cc, "bootstrap.servers", boot);
        set(cc, "group.id", group);
        set(cc, "enable.auto.commit", "false");
        set(cc, "enable.auto.offset.store", "false");
        set(cc, "isolation.level", "read_committed");
        set(cc, "auto.offset.reset", "earliest");
        rd_kafka_t *prod = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof err);
        if (!prod)
                die("producer", err);
        rd_kafka_t *cons = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof err);
        if (!cons)
                die("consumer", err);
        rd_kafka_poll_set_consumer(cons);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);

        /* Every partition of the source, from the committed offsets. */
        const struct rd_kafka_metadata *md;
        rd_kafka_topic_t *st = rd_kafka_topic_new(cons, src, NULL);
        if (rd_kafka_metadata(cons, 0, st, &md, TMO) || md->topic_cnt != 1 ||
            md->topics[0].err)
                die(src, "no metadata");
        int np = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
        if (np < 1 || np > 100000)
                die(src, "no partitions");
        rd_kafka_topic_destroy(st);
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(np);
        for (int i = 0; i < np; i++)
                rd_kafka_topic_partition_list_add(l, src, i);
        if (rd_kafka_committed(cons, l, TMO))
                die("committed", "failed");
        for (int i = 0; i < np; i++)
                if (l->elems[i].offset < 0)
                        l->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
        if (rd_kafka_assign(cons, l))
                die("assign", "failed");
        int64_t *pos = calloc((size_t)np, sizeof *pos);
        for (int i = 0; i < np; i++)
                pos[i] = l->elems[i].offset;
        rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(cons);
        rd_kafka_topic_partition_list_destroy(l);
        if (eos)
                check("init_transactions", rd_kafka_init_transactions(prod, TMO));
        rd_kafka_topic_t *out = rd_kafka_topic_new(prod, dst, NULL);
        rd_kafka_consumer_group_metadata_t *cgmd = rd_kafka_consumer_group_metadata(cons);
        rd_kafka_message_t *msgs[BATCH];
        uint64_t total = 0;

        while (!stop) {
                int64_t deadline = mono_ms() + interval, count = 0;
                bool open = false;
                while (!stop && count < max_records) {
                        int64_t left = deadline - mono_ms();
                        if (left <= 0)
                                break;
                        size_t want = (size_t)(max_records - count);
                        ssize_t got = rd_kafka_consume_batch_queue(
                                q, (int)(left < 5 ? left : 5), msgs,
                                want < BATCH ? want : BATCH);
                        for (ssize_t i = 0; i < got; i++) {
                                rd_kafka_message_t *m = msgs[i];
                                if (m->err) {
                                        rd_kafka_message_destroy(m);
                                        continue;
                                }
                                if (!open && eos)
                                        check("begin", rd_kafka_begin_transaction(prod));
                                open = true;
                                rd_kafka_headers_t *h = NULL;
                                rd_kafka_timestamp_type_t tt;
                                int64_t ts = rd_kafka_message_timestamp(m, &tt);
                                rd_kafka_message_detach_headers(m, &h);
                                rd_kafka_resp_err_t e;
                                while ((e = rd_kafka_producev(
                                                prod, RD_KAFKA_V_RKT(out),
                                                RD_KAFKA_V_PARTITION(m->partition),
                                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                                RD_KAFKA_V_VALUE(m->payload, m->len),
                                                RD_KAFKA_V_KEY(m->key, m->key_len),
                                                RD_KAFKA_V_TIMESTAMP(ts < 0 ? 0 : ts),
                                                RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END)) ==
                                       RD_KAFKA_RESP_ERR__QUEUE_FULL)
                                        rd_kafka_poll(prod, 5);
                                if (e)
                                        die("produce", rd_kafka_err2str(e));
                                pos[m->partition] = m->offset + 1;
                                count++;
                                rd_kafka_message_destroy(m);
                        }
                        rd_kafka_poll(prod, 0);
                }
                if (!open)
                        continue;
                l = rd_kafka_topic_partition_list_new(np);
                for (int i = 0; i < np; i++)
                        if (pos[i] >= 0)
                                rd_kafka_topic_partition_list_add(l, src, i)->offset = pos[i];
                if (eos) {
                        check("send_offsets",
                              rd_kafka_send_offsets_to_transaction(prod, l, cgmd, TMO));
                        check("commit", rd_kafka_commit_transaction(prod, TMO));
                } else {
                        if (rd_kafka_flush(prod, TMO) || rd_kafka_commit(cons, l, 0))
                                die("commit", "failed");
                }
                rd_kafka_topic_partition_list_destroy(l);
                total += (uint64_t)count;
        }
        fprintf(stderr, "gp-passthrough: %" PRIu64 " records\n", total);
        rd_kafka_consumer_group_metadata_destroy(cgmd);
        rd_kafka_queue_destroy(q);
        rd_kafka_topic_destroy(out);
        rd_kafka_consumer_close(cons);
        rd_kafka_destroy(cons);
        rd_kafka_destroy(prod);
        free(pos);
        return 0;
}
