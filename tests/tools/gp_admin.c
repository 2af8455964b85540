/* tests/tools/gp_admin.c: gp-admin, the topic tool of the integration tests
 * and the soak: create a topic, grow it (CreatePartitions), print its
 * partition count; consume a topic in a group the way a Flink job commits;
 * join a group as a member of it for a while.
 *
 * After create and grow it waits until the broker's metadata shows the new
 * count with a leader for every partition, so the next step of a test sees
 * the topic as it asked for it.
 *
 * Uses librdkafka only (and gate/timeparse.h for strict numbers); it shares
 * nothing with proxy/. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "gate/timeparse.h"

#define EXIT_OK     0
#define EXIT_FAILED 1
#define EXIT_USAGE  2

typedef struct admin {
        const char *bootstrap;
        int64_t replication, timeout_ms;
        const char **xconf;
        size_t n_xconf;
        const char *tconf[32]; /* --config key=value for create, split */
        size_t n_tconf;
        rd_kafka_t *rk;
} admin_t;

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void kafka_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
        (void)rk;
        if (level <= 3)
                fprintf(stderr, "gp-admin: librdkafka %s: %s\n", fac, buf);
}

static rd_kafka_t *kafka_new(admin_t *a) {
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        const char *kv[][2] = {
                {"bootstrap.servers", a->bootstrap},
                {"client.id", "gp-admin"},
        };
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
                if (rd_kafka_conf_set(conf, kv[i][0], kv[i][1], err, sizeof(err))) {
                        fprintf(stderr, "gp-admin: %s: %s\n", kv[i][0], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        for (size_t i = 0; i < a->n_xconf; i++)
                if (rd_kafka_conf_set(conf, a->xconf[2 * i], a->xconf[2 * i + 1], err,
                                      sizeof(err))) {
                        fprintf(stderr, "gp-admin: -X %s: %s\n", a->xconf[2 * i], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        rd_kafka_conf_set_log_cb(conf, kafka_log);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        if (!rk) {
                fprintf(stderr, "gp-admin: cannot create the client: %s\n", err);
                rd_kafka_conf_destroy(conf);
        }
        return rk;
}

/* Partition count of topic: > 0; 0 if it does not exist; -1 on error
 * (printed); -2 while some partition has no leader yet. */
static int partitions(admin_t *a, const char *topic, bool quiet) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(a->rk, topic, NULL);
        if (!rkt) {
                fprintf(stderr, "gp-admin: topic %s: %s\n", topic,
                        rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        int n = -1;
        rd_kafka_resp_err_t err = rd_kafka_metadata(a->rk, 0, rkt, &md, (int)a->timeout_ms);
        if (err) {
                if (!quiet)
                        fprintf(stderr,
                                "gp-admin: cannot read the metadata of %s from %s: %s\n",
                                topic, a->bootstrap, rd_kafka_err2str(err));
        } else if (md->topic_cnt != 1 || strcmp(md->topics[0].topic, topic)) {
                fprintf(stderr, "gp-admin: the broker did not describe %s\n", topic);
        } else if (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                n = 0;
        } else if (md->topics[0].err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE) {
                n = -2;
        } else if (md->topics[0].err) {
                fprintf(stderr, "gp-admin: topic %s: %s\n", topic,
                        rd_kafka_err2str(md->topics[0].err));
        } else {
                n = md->topics[0].partition_cnt;
                for (int i = 0; i < md->topics[0].partition_cnt; i++)
                        if (md->topics[0].partitions[i].leader < 0)
                                n = -2;
        }
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return n;
}

/* Waits until topic shows `want` partitions, each with a leader. */
static int wait_visible(admin_t *a, const char *topic, int want) {
        int64_t deadline = mono_ms() + a->timeout_ms;
        int n = 0;
        while (mono_ms() < deadline) {
                n = partitions(a, topic, true);
                if (n == -1)
                        return -1;
                if (n >= want)
                        return 0;
                struct timespec ts = {0, 100 * 1000000L};
                nanosleep(&ts, NULL);
        }
        fprintf(stderr,
                "gp-admin: %s: the broker does not show %d partitions with leaders "
                "after %" PRId64 " ms (last seen: %d)\n",
                topic, want, a->timeout_ms, n);
        return -1;
}

/* Runs one admin request (create or grow) and prints its error. */
static int admin_call(admin_t *a, const char *topic, int n, bool grow) {
        char err[512];
        int rc = -1;
        rd_kafka_queue_t *q = rd_kafka_queue_new(a->rk);
        rd_kafka_AdminOptions_t *o =
                rd_kafka_AdminOptions_new(a->rk, grow ? RD_KAFKA_ADMIN_OP_CREATEPARTITIONS
                                                      : RD_KAFKA_ADMIN_OP_CREATETOPICS);
        rd_kafka_AdminOptions_set_operation_timeout(o, (int)a->timeout_ms, err, sizeof(err));
        rd_kafka_AdminOptions_set_request_timeout(o, (int)a->timeout_ms, err, sizeof(err));
        if (grow) {
                rd_kafka_NewPartitions_t *np =
                        rd_kafka_NewPartitions_new(topic, (size_t)n, err, sizeof(err));
                if (!np) {
                        fprintf(stderr, "gp-admin: grow %s: %s\n", topic, err);
                        goto out;
                }
                rd_kafka_CreatePartitions(a->rk, &np, 1, o, q);
                rd_kafka_NewPartitions_destroy(np);
        } else {
                rd_kafka_NewTopic_t *nt =
                        rd_kafka_NewTopic_new(topic, n, (int)a->replication, err, sizeof(err));
                if (!nt) {
                        fprintf(stderr, "gp-admin: create %s: %s\n", topic, err);
                        goto out;
                }
                for (size_t i = 0; i < a->n_tconf; i++)
                        if (rd_kafka_NewTopic_set_config(nt, a->tconf[2 * i],
                                                         a->tconf[2 * i + 1])) {
                                fprintf(stderr, "gp-admin: create %s: --config %s refused\n",
                                        topic, a->tconf[2 * i]);
                                rd_kafka_NewTopic_destroy(nt);
                                goto out;
                        }
                rd_kafka_CreateTopics(a->rk, &nt, 1, o, q);
                rd_kafka_NewTopic_destroy(nt);
        }
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, (int)a->timeout_ms + 5000);
        const char *what = grow ? "grow" : "create";
        if (!ev) {
                fprintf(stderr, "gp-admin: %s %s: no answer from %s within %" PRId64 " ms\n",
                        what, topic, a->bootstrap, a->timeout_ms + 5000);
        } else if (rd_kafka_event_error(ev)) {
                fprintf(stderr, "gp-admin: %s %s: %s\n", what, topic,
                        rd_kafka_event_error_string(ev));
        } else {
                size_t cnt = 0;
                const rd_kafka_topic_result_t **res =
                        grow ? rd_kafka_CreatePartitions_result_topics(
                                       rd_kafka_event_CreatePartitions_result(ev), &cnt)
                             : rd_kafka_CreateTopics_result_topics(
                                       rd_kafka_event_CreateTopics_result(ev), &cnt);
                rd_kafka_resp_err_t e =
                        cnt ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR__BAD_MSG;
                if (e) {
                        const char *s =
                                cnt ? rd_kafka_topic_result_error_string(res[0]) : NULL;
                        fprintf(stderr, "gp-admin: %s %s %s %d partitions: %s (%s)\n", what,
                                topic, grow ? "to" : "with", n,
                                s && *s ? s : rd_kafka_err2str(e), rd_kafka_err2name(e));
                } else {
                        rc = 0;
                }
        }
        if (ev)
                rd_kafka_event_destroy(ev);
out:
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        return rc;
}

static int cmd_create(admin_t *a, const char *topic, int n) {
        if (admin_call(a, topic, n, false) || wait_visible(a, topic, n))
                return EXIT_FAILED;
        printf("created %s with %d partitions\n", topic, n);
        return EXIT_OK;
}

static int cmd_grow(admin_t *a, const char *topic, int n) {
        int have = partitions(a, topic, false);
        if (have == -1)
                return EXIT_FAILED;
        if (have == 0) {
                fprintf(stderr, "gp-admin: grow %s: the topic does not exist on %s\n", topic,
                        a->bootstrap);
                return EXIT_FAILED;
        }
        if (have > 0 && have >= n) {
                fprintf(stderr,
                        "gp-admin: grow %s to %d partitions: it has %d already (a "
                        "topic can only gain partitions)\n",
                        topic, n, have);
                return EXIT_FAILED;
        }
        if (admin_call(a, topic, n, true) || wait_visible(a, topic, n))
                return EXIT_FAILED;
        printf("grew %s from %d to %d partitions\n", topic, have, n);
        return EXIT_OK;
}

/* DeleteRecords: the partition's first offset moves to offset, as
 * retention moves it when it deletes a segment. */
static int cmd_delete_records(admin_t *a, const char *topic, int part, int64_t offset) {
        char err[512];
        int rc = EXIT_FAILED;
        rd_kafka_queue_t *q = rd_kafka_queue_new(a->rk);
        rd_kafka_AdminOptions_t *o =
                rd_kafka_AdminOptions_new(a->rk, RD_KAFKA_ADMIN_OP_DELETERECORDS);
        rd_kafka_AdminOptions_set_operation_timeout(o, (int)a->timeout_ms, err, sizeof(err));
        rd_kafka_AdminOptions_set_request_timeout(o, (int)a->timeout_ms, err, sizeof(err));
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, part)->offset = offset;
        rd_kafka_DeleteRecords_t *dr = rd_kafka_DeleteRecords_new(l);
        rd_kafka_DeleteRecords(a->rk, &dr, 1, o, q);
        rd_kafka_DeleteRecords_destroy(dr);
        rd_kafka_topic_partition_list_destroy(l);
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, (int)a->timeout_ms + 5000);
        if (!ev) {
                fprintf(stderr,
                        "gp-admin: delete-records %s/%d: no answer within %" PRId64 " ms\n",
                        topic, part, a->timeout_ms + 5000);
        } else if (rd_kafka_event_error(ev)) {
                fprintf(stderr, "gp-admin: delete-records %s/%d: %s\n", topic, part,
                        rd_kafka_event_error_string(ev));
        } else {
                const rd_kafka_topic_partition_list_t *res =
                        rd_kafka_DeleteRecords_result_offsets(
                                rd_kafka_event_DeleteRecords_result(ev));
                if (!res || res->cnt != 1)
                        fprintf(stderr, "gp-admin: delete-records %s/%d: no result\n", topic,
                                part);
                else if (res->elems[0].err)
                        fprintf(stderr,
                                "gp-admin: delete-records %s/%d before %" PRId64 ": %s\n",
                                topic, part, offset, rd_kafka_err2str(res->elems[0].err));
                else {
                        printf("%s/%d now starts at offset %" PRId64 "\n", topic, part,
                               res->elems[0].offset);
                        rc = EXIT_OK;
                }
        }
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        return rc;
}

static int cmd_partitions(admin_t *a, const char *topic) {
        int64_t deadline = mono_ms() + a->timeout_ms;
        int n;
        /* A topic just created may show no leader for a moment. */
        while ((n = partitions(a, topic, false)) == -2 && mono_ms() < deadline) {
                struct timespec ts = {0, 100 * 1000000L};
                nanosleep(&ts, NULL);
        }
        if (n == -1)
                return EXIT_FAILED;
        if (n == 0) {
                fprintf(stderr, "gp-admin: topic %s does not exist on %s\n", topic,
                        a->bootstrap);
                return EXIT_FAILED;
        }
        if (n == -2) {
                fprintf(stderr,
                        "gp-admin: topic %s: some partition has no leader after %" PRId64
                        " ms\n",
                        topic, a->timeout_ms);
                return EXIT_FAILED;
        }
        printf("%d\n", n);
        return EXIT_OK;
}

/* A consumer in group (read_committed, partition EOF events, no auto
 * commit), with every -X; NULL when refused (said on stderr). With member,
 * one that subscribes: cooperative-sticky, as gate-proxy's members. */
static rd_kafka_t *consumer(admin_t *a, const char *group, bool member) {
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        const char *kv[][2] = {
                {"bootstrap.servers", a->bootstrap},
                {"client.id", "gp-admin"},
                {"group.id", group},
                {"enable.auto.commit", "false"},
                {"isolation.level", "read_committed"},
                {"enable.partition.eof", "true"},
                {"auto.offset.reset", "earliest"},
                {"partition.assignment.strategy", "cooperative-sticky"},
        };
        size_t nkv = sizeof(kv) / sizeof(kv[0]) - (member ? 0 : 1);
        for (size_t i = 0; i < nkv; i++)
                if (rd_kafka_conf_set(conf, kv[i][0], kv[i][1], err, sizeof(err))) {
                        fprintf(stderr, "gp-admin: %s: %s\n", kv[i][0], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        for (size_t i = 0; i < a->n_xconf; i++)
                if (rd_kafka_conf_set(conf, a->xconf[2 * i], a->xconf[2 * i + 1], err,
                                      sizeof(err))) {
                        fprintf(stderr, "gp-admin: -X %s: %s\n", a->xconf[2 * i], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        rd_kafka_conf_set_log_cb(conf, kafka_log);
        rd_kafka_t *c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
        if (!c) {
                fprintf(stderr, "gp-admin: cannot create the consumer: %s\n", err);
                rd_kafka_conf_destroy(conf);
        }
        return c;
}

/* consume GROUP TOPIC: read TOPIC read_committed from GROUP's committed
 * offsets (the beginning where none) to its end, then commit, per
 * partition read from, the offset after the last record read. That is what
 * Flink's KafkaSource commits (FLINK-33484): never past the transaction
 * marker that follows the last record, unlike the Java and librdkafka
 * consumers, whose position moves past it. */
static int cmd_consume(admin_t *a, const char *group, const char *topic) {
        int n = partitions(a, topic, false);
        if (n <= 0) {
                if (n == 0)
                        fprintf(stderr, "gp-admin: topic %s does not exist on %s\n", topic,
                                a->bootstrap);
                return EXIT_FAILED;
        }
        rd_kafka_t *c = consumer(a, group, false);
        if (!c)
                return EXIT_FAILED;
        rd_kafka_poll_set_consumer(c);
        int64_t *next = malloc((size_t)n * sizeof(*next));
        bool *eof = calloc((size_t)n, sizeof(*eof));
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
        int rc = EXIT_FAILED, left = n;
        int64_t records = 0, deadline = mono_ms() + a->timeout_ms;
        if (!next || !eof)
                goto out;
        for (int i = 0; i < n; i++) {
                next[i] = -1;
                rd_kafka_topic_partition_list_add(l, topic, i)->offset =
                        RD_KAFKA_OFFSET_STORED;
        }
        rd_kafka_resp_err_t e = rd_kafka_assign(c, l);
        if (e) {
                fprintf(stderr, "gp-admin: consume %s: assign: %s\n", topic,
                        rd_kafka_err2str(e));
                goto out;
        }
        while (left > 0 && mono_ms() < deadline) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
                if (!m)
                        continue;
                int p = m->partition;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        if (p >= 0 && p < n && !eof[p]) {
                                eof[p] = true;
                                left--;
                        }
                } else if (m->err) {
                        fprintf(stderr, "gp-admin: consume %s: %s\n", topic,
                                rd_kafka_message_errstr(m));
                } else if (p >= 0 && p < n) {
                        next[p] = m->offset + 1;
                        records++;
                }
                rd_kafka_message_destroy(m);
        }
        if (left > 0) {
                fprintf(stderr,
                        "gp-admin: consume %s: %d partitions not read to their end "
                        "after %" PRId64 " ms\n",
                        topic, left, a->timeout_ms);
                goto out;
        }
        rd_kafka_topic_partition_list_t *commit = rd_kafka_topic_partition_list_new(n);
        for (int i = 0; i < n; i++)
                if (next[i] >= 0)
                        rd_kafka_topic_partition_list_add(commit, topic, i)->offset = next[i];
        e = commit->cnt ? rd_kafka_commit(c, commit, 0) : RD_KAFKA_RESP_ERR_NO_ERROR;
        if (e)
                fprintf(stderr, "gp-admin: consume %s: commit for group %s: %s\n", topic,
                        group, rd_kafka_err2str(e));
        else {
                /* Where the committed offset stops short of the end: a
                 * transaction marker after the last record. */
                int short_of_end = 0;
                for (int i = 0; i < commit->cnt; i++) {
                        int64_t lo, hi;
                        if (!rd_kafka_query_watermark_offsets(c, topic,
                                                              commit->elems[i].partition, &lo,
                                                              &hi, (int)a->timeout_ms) &&
                            commit->elems[i].offset < hi)
                                short_of_end++;
                }
                printf("consumed %" PRId64 " records of %s; group %s committed %d partitions, "
                       "%d short of the end offset\n",
                       records, topic, group, commit->cnt, short_of_end);
                rc = EXIT_OK;
        }
        rd_kafka_topic_partition_list_destroy(commit);
out:
        rd_kafka_topic_partition_list_destroy(l);
        free(next);
        free(eof);
        rd_kafka_consumer_close(c);
        rd_kafka_destroy(c);
        return rc;
}

/* lag GROUP TOPIC: how many offsets of TOPIC GROUP has not committed yet,
 * summed over its partitions (from the log start where it never
 * committed). 0 once the group has committed every partition's end. */
static int cmd_lag(admin_t *a, const char *group, const char *topic) {
        int n = partitions(a, topic, false);
        if (n <= 0) {
                if (n == 0)
                        fprintf(stderr, "gp-admin: topic %s does not exist on %s\n", topic,
                                a->bootstrap);
                return EXIT_FAILED;
        }
        rd_kafka_t *c = consumer(a, group, false);
        if (!c)
                return EXIT_FAILED;
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
        for (int i = 0; i < n; i++)
                rd_kafka_topic_partition_list_add(l, topic, i);
        int rc = EXIT_FAILED;
        int64_t lag = 0;
        rd_kafka_resp_err_t e = rd_kafka_committed(c, l, (int)a->timeout_ms);
        if (e) {
                fprintf(stderr, "gp-admin: lag: committed offsets of group %s: %s\n", group,
                        rd_kafka_err2str(e));
                goto out;
        }
        for (int i = 0; i < n; i++) {
                int64_t lo, hi, at = l->elems[i].offset;
                e = rd_kafka_query_watermark_offsets(c, topic, i, &lo, &hi,
                                                     (int)a->timeout_ms);
                if (e) {
                        fprintf(stderr, "gp-admin: lag: offsets of %s/%d: %s\n", topic, i,
                                rd_kafka_err2str(e));
                        goto out;
                }
                if (at < lo)
                        at = lo;
                lag += hi > at ? hi - at : 0;
        }
        printf("%" PRId64 "\n", lag);
        rc = EXIT_OK;
out:
        rd_kafka_topic_partition_list_destroy(l);
        rd_kafka_destroy(c);
        return rc;
}

static volatile sig_atomic_t stop_member;
static void on_term(int sig) {
        (void)sig;
        stop_member = 1;
}

/* member GROUP TOPIC: joins GROUP subscribed to TOPIC (cooperative-sticky)
 * and stays a member for --timeout-ms or until SIGTERM, reading what it is
 * assigned and committing nothing; prints each change of its assignment,
 * then leaves the group. */
static int cmd_member(admin_t *a, const char *group, const char *topic) {
        rd_kafka_t *c = consumer(a, group, true);
        if (!c)
                return EXIT_FAILED;
        signal(SIGTERM, on_term);
        signal(SIGINT, on_term);
        rd_kafka_poll_set_consumer(c);
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t e = rd_kafka_subscribe(c, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (e) {
                fprintf(stderr, "gp-admin: subscribing to %s in group %s: %s\n", topic, group,
                        rd_kafka_err2str(e));
                rd_kafka_destroy(c);
                return EXIT_FAILED;
        }
        int64_t end = mono_ms() + a->timeout_ms;
        int was = -1;
        bool assigned = false;
        /* librdkafka before 2.3.0 asserts when a cooperative-sticky member
         * is closed before its first assignment (#4381): it waits for one. */
        while ((!stop_member && mono_ms() < end) || !assigned) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
                if (m)
                        rd_kafka_message_destroy(m);
                rd_kafka_topic_partition_list_t *as = NULL;
                if (rd_kafka_assignment(c, &as))
                        continue;
                int n = as->cnt;
                rd_kafka_topic_partition_list_destroy(as);
                if (n != was) {
                        printf("member of %s: %d partition(s) of %s\n", group, n, topic);
                        fflush(stdout);
                        was = n;
                }
                assigned |= n > 0;
                if (!assigned && mono_ms() > end + 60000)
                        break;
        }
        rd_kafka_consumer_close(c);
        rd_kafka_destroy(c);
        printf("left %s\n", group);
        return assigned ? EXIT_OK : EXIT_FAILED;
}

static void usage(FILE *f) {
        fputs("usage: gp-admin --bootstrap HOST:PORT [--replication N] [--timeout-ms MS]\n"
              "                [-X key=value]... COMMAND ARGS\n"
              "\n"
              "Commands:\n"
              "  create TOPIC PARTITIONS   create TOPIC with PARTITIONS partitions\n"
              "  grow TOPIC PARTITIONS     add partitions to TOPIC so it has PARTITIONS\n"
              "                            (CreatePartitions; a topic can only grow)\n"
              "  partitions TOPIC          print TOPIC's partition count\n"
              "  consume GROUP TOPIC       read TOPIC (read_committed) from GROUP's "
              "committed\n"
              "                            offsets to its end and commit, per partition, the\n"
              "                            offset after the last record read, as a Flink job\n"
              "                            does (never past a trailing transaction marker)\n"
              "  lag GROUP TOPIC           print how many offsets of TOPIC GROUP has not\n"
              "                            committed (0: it committed every partition's end)\n"
              "  member GROUP TOPIC        join GROUP subscribed to TOPIC (cooperative-\n"
              "                            sticky) for --timeout-ms or until SIGTERM,\n"
              "                            committing nothing; print each change of its\n"
              "                            assignment, then leave\n"
              "  delete-records TOPIC PARTITION OFFSET\n"
              "                            delete the partition's records before OFFSET\n"
              "                            (DeleteRecords): its first offset moves there, as\n"
              "                            when retention deletes a segment\n"
              "\n"
              "create and grow return once the broker's metadata shows the new count with\n"
              "a leader for every partition, and print one line on stdout.\n"
              "\n"
              "Options:\n"
              "  --bootstrap HOST:PORT  the broker (required)\n"
              "  --replication N        replication factor for create (default -1: the\n"
              "                         broker's default.replication.factor)\n"
              "  --timeout-ms MS        how long to wait for the broker (default 30000)\n"
              "  --config key=value     a topic config for create (repeatable), e.g.\n"
              "                         message.timestamp.type=LogAppendTime\n"
              "  -X key=value           a librdkafka client property (repeatable)\n"
              "  --help                 this text\n"
              "\n"
              "Exit status: 0 done; 1 the broker refused or did not answer (the topic\n"
              "exists already, does not exist, has that many partitions already, ...;\n"
              "the reason is printed on stderr); 2 usage error.\n"
              "\n"
              "Examples:\n"
              "  gp-admin --bootstrap 127.0.0.1:19092 create orders 4\n"
              "  gp-admin --bootstrap 127.0.0.1:19092 grow orders 6\n"
              "  gp-admin --bootstrap 127.0.0.1:19092 partitions orders     # prints 6\n",
              f);
}

static int num(const char *what, const char *s, int64_t lo, int64_t hi, int64_t *out) {
        const char *why = NULL;
        if (gp_parse_i64(s, strlen(s), out, &why) || *out < lo || *out > hi) {
                fprintf(stderr,
                        "gp-admin: %s %s: %s (an integer from %" PRId64 " to %" PRId64 ")\n",
                        what, s, why ? why : "out of range", lo, hi);
                return -1;
        }
        return 0;
}

/* 0, 1 (help printed) or -1 (usage error printed). */
static int parse_args(admin_t *a, int argc, char **argv) {
        enum { O_BOOT = 256, O_REPL, O_TMO, O_CONF };
        static const struct option opts[] = {
                {"bootstrap", required_argument, NULL, O_BOOT},
                {"replication", required_argument, NULL, O_REPL},
                {"timeout-ms", required_argument, NULL, O_TMO},
                {"config", required_argument, NULL, O_CONF},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        int o;
        a->replication = -1;
        a->timeout_ms = 30000;
        opterr = 0;
        /* "+": options before the command only, so a topic may start with '-'
         * only after "--". */
        while ((o = getopt_long(argc, argv, "+:hX:", opts, NULL)) != -1) {
                int bad = 0;
                switch (o) {
                case O_BOOT:
                        a->bootstrap = optarg;
                        break;
                case O_REPL:
                        bad = num("--replication", optarg, -1, 32, &a->replication);
                        if (!bad && a->replication == 0) {
                                fprintf(stderr, "gp-admin: --replication 0: use -1 (the "
                                                "broker's default) or 1 to 32\n");
                                bad = -1;
                        }
                        break;
                case O_CONF: {
                        char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg || a->n_tconf == 16) {
                                fprintf(stderr,
                                        "gp-admin: --config %s: expected key=value (at "
                                        "most 16)\n",
                                        optarg);
                                return -1;
                        }
                        *eq = '\0';
                        a->tconf[2 * a->n_tconf] = optarg;
                        a->tconf[2 * a->n_tconf + 1] = eq + 1;
                        a->n_tconf++;
                        break;
                }
                case O_TMO:
                        bad = num("--timeout-ms", optarg, 1, INT32_MAX - 5000, &a->timeout_ms);
                        break;
                case 'X': {
                        char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg) {
                                fprintf(stderr, "gp-admin: -X %s: expected key=value\n",
                                        optarg);
                                return -1;
                        }
                        *eq = '\0';
                        const char **x = realloc(a->xconf, (a->n_xconf + 1) * 2 * sizeof(*x));
                        if (!x) {
                                fputs("gp-admin: out of memory\n", stderr);
                                return -1;
                        }
                        a->xconf = x;
                        x[2 * a->n_xconf] = optarg;
                        x[2 * a->n_xconf + 1] = eq + 1;
                        a->n_xconf++;
                        break;
                }
                case 'h':
                        usage(stdout);
                        return 1;
                case ':':
                        fprintf(stderr, "gp-admin: %s needs a value (see --help)\n",
                                argv[optind - 1]);
                        return -1;
                default:
                        fprintf(stderr, "gp-admin: unknown option %s (see --help)\n",
                                argv[optind - 1]);
                        return -1;
                }
                if (bad)
                        return -1;
        }
        if (!a->bootstrap || !*a->bootstrap) {
                fprintf(stderr, "gp-admin: --bootstrap is required (see --help)\n");
                return -1;
        }
        return 0;
}

int main(int argc, char **argv) {
        admin_t a;
        memset(&a, 0, sizeof(a));
        int rc = parse_args(&a, argc, argv);
        if (rc) {
                free(a.xconf);
                return rc > 0 ? EXIT_OK : EXIT_USAGE;
        }
        int nargs = argc - optind;
        char **args = argv + optind;
        const char *cmd = nargs > 0 ? args[0] : NULL;
        int64_t n = 0;
        int want = !cmd                             ? -1
                   : !strcmp(cmd, "create")         ? 3
                   : !strcmp(cmd, "grow")           ? 3
                   : !strcmp(cmd, "partitions")     ? 2
                   : !strcmp(cmd, "consume")        ? 3
                   : !strcmp(cmd, "lag")            ? 3
                   : !strcmp(cmd, "member")         ? 3
                   : !strcmp(cmd, "delete-records") ? 4
                                                    : -2;
        if (want == -1) {
                fprintf(stderr, "gp-admin: no command: create, grow, partitions, consume, "
                                "delete-records, "
                                "lag or member (see --help)\n");
                free(a.xconf);
                return EXIT_USAGE;
        }
        if (want == -2) {
                fprintf(stderr,
                        "gp-admin: unknown command '%s': create, grow, partitions, consume, "
                        "delete-records, "
                        "lag or member (see --help)\n",
                        cmd);
                free(a.xconf);
                return EXIT_USAGE;
        }
        if (want == 4) {
                int64_t part = 0, off = 0;
                if (nargs != 4 || !*args[1] || num("PARTITION", args[2], 0, 100000, &part) ||
                    num("OFFSET", args[3], 0, INT64_MAX, &off)) {
                        if (nargs != 4)
                                fprintf(stderr, "gp-admin: delete-records takes TOPIC "
                                                "PARTITION OFFSET (see --help)\n");
                        free(a.xconf);
                        return EXIT_USAGE;
                }
                if (!(a.rk = kafka_new(&a))) {
                        free(a.xconf);
                        return EXIT_USAGE;
                }
                rc = cmd_delete_records(&a, args[1], (int)part, off);
                rd_kafka_destroy(a.rk);
                free(a.xconf);
                return rc;
        }
        if (nargs != want) {
                fprintf(stderr, "gp-admin: %s takes %s (see --help)\n", cmd,
                        !strcmp(cmd, "consume") || !strcmp(cmd, "lag") ||
                                        !strcmp(cmd, "member")
                                ? "GROUP TOPIC"
                        : want == 3 ? "TOPIC PARTITIONS"
                                    : "TOPIC");
                free(a.xconf);
                return EXIT_USAGE;
        }
        if (!*args[1]) {
                fprintf(stderr, "gp-admin: %s: the %s name is empty\n", cmd,
                        strcmp(cmd, "consume") && strcmp(cmd, "lag") && strcmp(cmd, "member")
                                ? "topic"
                                : "group");
                free(a.xconf);
                return EXIT_USAGE;
        }
        bool grouped =
                !strcmp(cmd, "consume") || !strcmp(cmd, "lag") || !strcmp(cmd, "member");
        if (grouped && !*args[2]) {
                fprintf(stderr, "gp-admin: %s: the topic name is empty\n", cmd);
                free(a.xconf);
                return EXIT_USAGE;
        }
        if (want == 3 && !grouped && num("PARTITIONS", args[2], 1, 100000, &n)) {
                free(a.xconf);
                return EXIT_USAGE;
        }
        if (!(a.rk = kafka_new(&a))) {
                free(a.xconf);
                return EXIT_USAGE;
        }
        if (!strcmp(cmd, "create"))
                rc = cmd_create(&a, args[1], (int)n);
        else if (!strcmp(cmd, "grow"))
                rc = cmd_grow(&a, args[1], (int)n);
        else if (!strcmp(cmd, "consume"))
                rc = cmd_consume(&a, args[1], args[2]);
        else if (!strcmp(cmd, "lag"))
                rc = cmd_lag(&a, args[1], args[2]);
        else if (!strcmp(cmd, "member"))
                rc = cmd_member(&a, args[1], args[2]);
        else
                rc = cmd_partitions(&a, args[1]);
        rd_kafka_destroy(a.rk);
        free(a.xconf);
        return rc;
}
