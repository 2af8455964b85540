/*
 * Broker facts the proxy's exactly-once design rests on, checked against a
 * real Kafka broker (tests/kafka/broker.sh start; GP_BOOTSTRAP=host:port):
 *
 *  a. offsets sent with rd_kafka_send_offsets_to_transaction() for a group
 *     that has no members (the consumer only assign()s) are committed with
 *     the transaction, and rd_kafka_committed() from a fresh consumer of the
 *     same group.id returns the offset and the same metadata bytes;
 *  b. a read_committed consumer does not see an aborted transaction's
 *     records and sees a committed one's;
 *  c. a second producer with the same transactional.id fences the first,
 *     whose next transaction fails with a fatal error;
 *  d. offset-commit metadata is limited by the broker
 *     (offset.metadata.max.bytes, 4096 by default);
 *  e. key, headers and CreateTime timestamps (old, current, 30 min ahead)
 *     are carried unchanged through a transaction;
 *  f. a record timestamped further ahead than the broker's
 *     log.message.timestamp.after.max.ms (1 h by default since Kafka 4.0,
 *     unlimited in 3.9) fails its batch with INVALID_TIMESTAMP, an abortable
 *     (not fatal) transaction error.
 *
 * Each test makes its own uniquely named topics, group and transactional.id.
 * GP_RDKAFKA_DEBUG=eos,protocol (say) turns on librdkafka's debug log.
 */
#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TMO_MS 30000

/* ---- helpers --------------------------------------------------------------- */

static const char *bootstrap(void) {
        const char *bs = getenv("GP_BOOTSTRAP");
        if (bs == NULL || *bs == '\0')
                cr_assert_fail("GP_BOOTSTRAP is not set: start a broker with "
                               "`tests/kafka/broker.sh start` and "
                               "`export GP_BOOTSTRAP=\"$(tests/kafka/broker.sh bootstrap)\"`");
        return bs;
}

static void unique_name(char *buf, size_t size, const char *what, const char *tag) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(buf, size, "gp-facts-%s-%s-%ld-%ld-%d", what, tag, (long)ts.tv_sec,
                 (long)(ts.tv_nsec / 1000), (int)getpid());
}

static void conf_set(rd_kafka_conf_t *conf, const char *key, const char *val) {
        char err[512];
        cr_assert_eq(rd_kafka_conf_set(conf, key, val, err, sizeof err), RD_KAFKA_CONF_OK,
                     "config %s=%s: %s", key, val, err);
}

/* Per-handle state reached through the opaque pointer. */
struct hstate {
        int delivered;
        int failed;
        rd_kafka_resp_err_t last_dr_err;
        rd_kafka_resp_err_t fatal_err; /* underlying code of an error_cb _FATAL */
        char fatal_str[512];
};

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk;
        struct hstate *st = opaque;
        if (st == NULL)
                return;
        if (m->err) {
                st->failed++;
                st->last_dr_err = m->err;
        } else {
                st->delivered++;
        }
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
        struct hstate *st = opaque;
        if (err == RD_KAFKA_RESP_ERR__FATAL && st != NULL) {
                st->fatal_err = rd_kafka_fatal_error(rk, st->fatal_str, sizeof st->fatal_str);
        }
        fprintf(stderr, "[librdkafka %s] error_cb %s: %s\n", rd_kafka_name(rk),
                rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
}

static rd_kafka_conf_t *base_conf(struct hstate *st) {
        const char *bs = bootstrap(); /* before allocating: it may fail the test */
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        conf_set(conf, "bootstrap.servers", bs);
        conf_set(conf, "socket.timeout.ms", "20000");
        const char *debug = getenv("GP_RDKAFKA_DEBUG"); /* e.g. eos,protocol */
        if (debug != NULL && *debug != '\0')
                conf_set(conf, "debug", debug);
        rd_kafka_conf_set_opaque(conf, st);
        rd_kafka_conf_set_error_cb(conf, error_cb);
        return conf;
}

/* A producer: transactional when txn_id is set, else idempotent. */
static rd_kafka_t *make_producer(const char *txn_id, struct hstate *st) {
        char err[512];
        rd_kafka_conf_t *conf = base_conf(st);
        if (txn_id != NULL)
                conf_set(conf, "transactional.id", txn_id);
        else
                conf_set(conf, "enable.idempotence", "true");
        conf_set(conf, "linger.ms", "5");
        rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        cr_assert_not_null(rk, "rd_kafka_new(producer): %s", err);
        return rk;
}

/* A consumer with group.id set that never joins the group: assign() only. */
static rd_kafka_t *make_consumer(const char *group, const char *isolation) {
        char err[512];
        rd_kafka_conf_t *conf = base_conf(NULL);
        conf_set(conf, "group.id", group);
        conf_set(conf, "enable.auto.commit", "false");
        conf_set(conf, "enable.auto.offset.store", "false");
        conf_set(conf, "isolation.level", isolation);
        conf_set(conf, "enable.partition.eof", "true");
        conf_set(conf, "auto.offset.reset", "earliest");
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
        cr_assert_not_null(rk, "rd_kafka_new(consumer): %s", err);
        return rk;
}

static void close_consumer(rd_kafka_t *rk) {
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
}

/* rd_kafka_error_t -> assertion message; consumes the error. */
static void check_error(rd_kafka_error_t *error, const char *what) {
        if (error == NULL)
                return;
        char msg[1024];
        snprintf(msg, sizeof msg, "%s failed: %s (%s)%s%s", what, rd_kafka_error_name(error),
                 rd_kafka_error_string(error),
                 rd_kafka_error_is_fatal(error) ? " [fatal]" : "",
                 rd_kafka_error_txn_requires_abort(error) ? " [abortable]" : "");
        rd_kafka_error_destroy(error);
        cr_assert_fail("%s", msg);
}

/* Waits until metadata shows `topic` with `partitions` partitions, all led. */
static void wait_topic(rd_kafka_t *rk, const char *topic, int partitions) {
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
        cr_assert_not_null(rkt);
        const rd_kafka_metadata_t *md = NULL;
        int ok = 0;
        for (int i = 0; i < 60 && !ok; i++) {
                if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
                        if (md->topic_cnt == 1 && md->topics[0].err == 0 &&
                            md->topics[0].partition_cnt == partitions) {
                                ok = 1;
                                for (int p = 0; p < partitions; p++)
                                        if (md->topics[0].partitions[p].err ||
                                            md->topics[0].partitions[p].leader < 0)
                                                ok = 0;
                        }
                        rd_kafka_metadata_destroy(md);
                }
                if (!ok)
                        nanosleep(
                                &(struct timespec){.tv_sec = 0, .tv_nsec = 250 * 1000 * 1000},
                                NULL);
        }
        rd_kafka_topic_destroy(rkt);
        cr_assert(ok, "topic %s did not become available", topic);
}

static void create_topics_cfg(const char **names, int n, int partitions, const char *cfg_key,
                              const char *cfg_val) {
        char err[512];
        struct hstate st = {0};
        rd_kafka_t *rk = make_producer(NULL, &st);
        const rd_kafka_metadata_t *md = NULL;
        rd_kafka_resp_err_t merr = rd_kafka_metadata(rk, 0, NULL, &md, 10000);
        if (merr != RD_KAFKA_RESP_ERR_NO_ERROR) {
                rd_kafka_destroy(rk);
                cr_assert_fail(
                        "no Kafka broker answers at GP_BOOTSTRAP=%s (%s): is it running? "
                        "(tests/kafka/broker.sh status)",
                        bootstrap(), rd_kafka_err2name(merr));
        }
        rd_kafka_metadata_destroy(md);

        rd_kafka_NewTopic_t *nt[8];
        cr_assert(n <= 8);
        for (int i = 0; i < n; i++) {
                nt[i] = rd_kafka_NewTopic_new(names[i], partitions, 1, err, sizeof err);
                cr_assert_not_null(nt[i], "NewTopic %s: %s", names[i], err);
                if (cfg_key != NULL)
                        cr_assert_eq(rd_kafka_NewTopic_set_config(nt[i], cfg_key, cfg_val), 0);
        }
        rd_kafka_AdminOptions_t *opt =
                rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
        cr_assert_eq(rd_kafka_AdminOptions_set_operation_timeout(opt, TMO_MS, err, sizeof err),
                     0, "%s", err);
        cr_assert_eq(rd_kafka_AdminOptions_set_request_timeout(opt, TMO_MS, err, sizeof err),
                     0, "%s", err);
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_CreateTopics(rk, nt, (size_t)n, opt, q);
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, TMO_MS + 10000);
        cr_assert_not_null(ev, "CreateTopics: no result");
        cr_assert_eq(rd_kafka_event_error(ev), 0, "CreateTopics: %s (%s)",
                     rd_kafka_err2name(rd_kafka_event_error(ev)),
                     rd_kafka_event_error_string(ev));
        const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
        cr_assert_not_null(res);
        size_t cnt = 0;
        const rd_kafka_topic_result_t **tr = rd_kafka_CreateTopics_result_topics(res, &cnt);
        cr_assert_eq(cnt, (size_t)n);
        for (size_t i = 0; i < cnt; i++)
                cr_assert_eq(rd_kafka_topic_result_error(tr[i]), 0, "create topic %s: %s (%s)",
                             rd_kafka_topic_result_name(tr[i]),
                             rd_kafka_err2name(rd_kafka_topic_result_error(tr[i])),
                             rd_kafka_topic_result_error_string(tr[i]));
        rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_AdminOptions_destroy(opt);
        for (int i = 0; i < n; i++)
                rd_kafka_NewTopic_destroy(nt[i]);
        for (int i = 0; i < n; i++)
                wait_topic(rk, names[i], partitions);
        rd_kafka_destroy(rk);
}

static void create_topics(const char **names, int n, int partitions) {
        create_topics_cfg(names, n, partitions, NULL, NULL);
}

static void produce(rd_kafka_t *rk, const char *topic, int32_t partition, const char *value) {
        rd_kafka_resp_err_t err =
                rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                                  RD_KAFKA_V_VALUE((void *)value, strlen(value)),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        cr_assert_eq(err, 0, "produce to %s: %s", topic, rd_kafka_err2name(err));
}

static void assign_from(rd_kafka_t *c, const char *topic, int32_t partition, int64_t offset) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, partition)->offset = offset;
        rd_kafka_resp_err_t err = rd_kafka_assign(c, l);
        cr_assert_eq(err, 0, "assign: %s", rd_kafka_err2name(err));
        rd_kafka_topic_partition_list_destroy(l);
}

/* Consumes until partition EOF; returns the payloads (caller frees). */
#define MAX_VALUES 64
struct values {
        int n;
        char *v[MAX_VALUES];
        int64_t off[MAX_VALUES];
};

static void consume_to_eof(rd_kafka_t *c, struct values *out) {
        memset(out, 0, sizeof *out);
        time_t deadline = time(NULL) + 30;
        while (time(NULL) < deadline) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 500);
                if (m == NULL)
                        continue;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        rd_kafka_message_destroy(m);
                        return;
                }
                if (m->err) {
                        char msg[512];
                        snprintf(msg, sizeof msg, "consume: %s (%s)",
                                 rd_kafka_err2name(m->err), rd_kafka_message_errstr(m));
                        rd_kafka_message_destroy(m);
                        cr_assert_fail("%s", msg);
                }
                cr_assert_lt(out->n, MAX_VALUES);
                out->v[out->n] = strndup(m->payload ? (const char *)m->payload : "", m->len);
                out->off[out->n] = m->offset;
                out->n++;
                rd_kafka_message_destroy(m);
        }
        cr_assert_fail("no partition EOF within 30 s (got %d records)", out->n);
}

static void free_values(struct values *v) {
        for (int i = 0; i < v->n; i++)
                free(v->v[i]);
        v->n = 0;
}

/* Begins a transaction and commits `offset`+`metadata` for in:0 to `group`. */
static rd_kafka_error_t *txn_commit_offset(rd_kafka_t *p, rd_kafka_t *consumer_or_null,
                                           const char *group, const char *out_topic,
                                           const char *in_topic, int64_t offset,
                                           const char *metadata, size_t metadata_size) {
        check_error(rd_kafka_begin_transaction(p), "begin_transaction");
        produce(p, out_topic, 0, "routed");

        rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(offs, in_topic, 0);
        tp->offset = offset;
        tp->metadata = malloc(metadata_size); /* freed by list_destroy */
        cr_assert_not_null(tp->metadata);
        memcpy(tp->metadata, metadata, metadata_size);
        tp->metadata_size = metadata_size;

        rd_kafka_consumer_group_metadata_t *cgmd =
                consumer_or_null ? rd_kafka_consumer_group_metadata(consumer_or_null)
                                 : rd_kafka_consumer_group_metadata_new(group);
        cr_assert_not_null(cgmd, "consumer group metadata is NULL (%s)",
                           consumer_or_null
                                   ? "rd_kafka_consumer_group_metadata(consumer)"
                                   : "rd_kafka_consumer_group_metadata_new(group_id)");
        rd_kafka_error_t *error = rd_kafka_send_offsets_to_transaction(p, offs, cgmd, TMO_MS);
        rd_kafka_consumer_group_metadata_destroy(cgmd);
        rd_kafka_topic_partition_list_destroy(offs);
        if (error != NULL)
                return error;
        return rd_kafka_commit_transaction(p, TMO_MS);
}

/* Reads the committed offset of in:0 for `group` from a fresh consumer. */
static void committed(const char *group, const char *topic, int64_t *offset, char *meta,
                      size_t meta_cap, size_t *meta_size) {
        rd_kafka_t *c = make_consumer(group, "read_committed");
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, 0);
        rd_kafka_resp_err_t err = rd_kafka_committed(c, l, TMO_MS);
        cr_assert_eq(err, 0, "rd_kafka_committed: %s", rd_kafka_err2name(err));
        rd_kafka_topic_partition_t *tp = &l->elems[0];
        cr_assert_eq(tp->err, 0, "committed %s[0]: %s", topic, rd_kafka_err2name(tp->err));
        *offset = tp->offset;
        *meta_size = tp->metadata_size;
        cr_assert_leq(tp->metadata_size, meta_cap);
        if (tp->metadata_size)
                memcpy(meta, tp->metadata, tp->metadata_size);
        rd_kafka_topic_partition_list_destroy(l);
        close_consumer(c);
}

/* ---- a. offsets + metadata in a transaction, group without members ---------- */

static void offsets_metadata_fact(int use_consumer_cgmd) {
        const char *variant = use_consumer_cgmd
                                      ? "rd_kafka_consumer_group_metadata(consumer)"
                                      : "rd_kafka_consumer_group_metadata_new(group_id)";
        const char *tag = use_consumer_cgmd ? "cgmd" : "cgmdnew";
        char in[160], out[160], group[160], txid[160];
        unique_name(in, sizeof in, "in", tag);
        unique_name(out, sizeof out, "out", tag);
        unique_name(group, sizeof group, "group", tag);
        unique_name(txid, sizeof txid, "txn", tag);
        const char *topics[] = {in, out};
        create_topics(topics, 2, 1);

        /* Three input records. */
        struct hstate pst = {0};
        rd_kafka_t *plain = make_producer(NULL, &pst);
        for (int i = 0; i < 3; i++)
                produce(plain, in, 0, "input");
        cr_assert_eq(rd_kafka_flush(plain, TMO_MS), 0);
        cr_assert_eq(pst.delivered, 3, "seed: delivered %d, failed %d (%s)", pst.delivered,
                     pst.failed, rd_kafka_err2name(pst.last_dr_err));
        rd_kafka_destroy(plain);

        /* The proxy's consumer: group.id set, assign() only, never subscribe(). */
        rd_kafka_t *c = make_consumer(group, "read_committed");
        assign_from(c, in, 0, RD_KAFKA_OFFSET_BEGINNING);
        struct values got;
        consume_to_eof(c, &got);
        cr_assert_eq(got.n, 3);
        int64_t next = got.off[got.n - 1] + 1;
        free_values(&got);

        struct hstate tst = {0};
        rd_kafka_t *p = make_producer(txid, &tst);
        check_error(rd_kafka_init_transactions(p, TMO_MS), "init_transactions");

        const char *meta = "gp1 seq=3";
        check_error(txn_commit_offset(p, use_consumer_cgmd ? c : NULL, group, out, in, next,
                                      meta, strlen(meta)),
                    "send_offsets_to_transaction/commit_transaction");
        rd_kafka_destroy(p);
        close_consumer(c);

        int64_t off = -1;
        char got_meta[64];
        size_t got_size = 0;
        committed(group, in, &off, got_meta, sizeof got_meta, &got_size);
        cr_assert_eq(off, next, "committed offset %" PRId64 ", expected %" PRId64, off, next);
        cr_assert_eq(got_size, strlen(meta), "metadata size %zu, expected %zu", got_size,
                     strlen(meta));
        cr_assert_eq(memcmp(got_meta, meta, got_size), 0, "metadata '%.*s', expected '%s'",
                     (int)got_size, got_meta, meta);
        fprintf(stderr,
                "[fact a] %s: transactional offset %" PRId64
                " with metadata '%s' committed to "
                "memberless group %s, read back intact by rd_kafka_committed()\n",
                variant, off, meta, group);
}

Test(broker_facts, a_txn_offsets_metadata_consumer_cgmd, .timeout = 60) {
        offsets_metadata_fact(1);
}

Test(broker_facts, a_txn_offsets_metadata_new_cgmd, .timeout = 60) {
        offsets_metadata_fact(0);
}

/* ---- b. read_committed hides aborted records ------------------------------------ */

Test(broker_facts, b_read_committed_hides_aborted, .timeout = 60) {
        char topic[160], txid[160], group[160];
        unique_name(topic, sizeof topic, "topic", "rc");
        unique_name(txid, sizeof txid, "txn", "rc");
        unique_name(group, sizeof group, "group", "rc");
        const char *topics[] = {topic};
        create_topics(topics, 1, 1);

        struct hstate st = {0};
        rd_kafka_t *p = make_producer(txid, &st);
        check_error(rd_kafka_init_transactions(p, TMO_MS), "init_transactions");

        check_error(rd_kafka_begin_transaction(p), "begin_transaction");
        produce(p, topic, 0, "aborted-0");
        produce(p, topic, 0, "aborted-1");
        produce(p, topic, 0, "aborted-2");
        /* abort_transaction() would purge unsent records: make sure they reach the log. */
        cr_assert_eq(rd_kafka_flush(p, TMO_MS), 0);
        cr_assert_eq(st.delivered, 3, "aborted batch: delivered %d failed %d (%s)",
                     st.delivered, st.failed, rd_kafka_err2name(st.last_dr_err));
        check_error(rd_kafka_abort_transaction(p, TMO_MS), "abort_transaction");

        check_error(rd_kafka_begin_transaction(p), "begin_transaction");
        produce(p, topic, 0, "committed-0");
        produce(p, topic, 0, "committed-1");
        produce(p, topic, 0, "committed-2");
        check_error(rd_kafka_commit_transaction(p, TMO_MS), "commit_transaction");
        rd_kafka_destroy(p);

        struct values got;
        rd_kafka_t *c = make_consumer(group, "read_committed");
        assign_from(c, topic, 0, RD_KAFKA_OFFSET_BEGINNING);
        consume_to_eof(c, &got);
        int64_t lo = -1, hi = -1;
        rd_kafka_resp_err_t err =
                rd_kafka_query_watermark_offsets(c, topic, 0, &lo, &hi, TMO_MS);
        cr_assert_eq(err, 0, "query_watermark_offsets: %s", rd_kafka_err2name(err));
        close_consumer(c);

        cr_assert_eq(got.n, 3, "read_committed saw %d records, expected the 3 committed ones",
                     got.n);
        for (int i = 0; i < 3; i++) {
                char want[32];
                snprintf(want, sizeof want, "committed-%d", i);
                cr_assert_str_eq(got.v[i], want);
        }
        fprintf(stderr,
                "[fact b] read_committed: 3 committed records at offsets %" PRId64 "..%" PRId64
                ", aborted ones hidden; high watermark %" PRId64 "\n",
                got.off[0], got.off[2], hi);
        free_values(&got);

        /* The aborted records are in the log: read_uncommitted sees all six. */
        c = make_consumer(group, "read_uncommitted");
        assign_from(c, topic, 0, RD_KAFKA_OFFSET_BEGINNING);
        consume_to_eof(c, &got);
        close_consumer(c);
        cr_assert_eq(got.n, 6, "read_uncommitted saw %d records, expected 6", got.n);
        cr_assert_str_eq(got.v[0], "aborted-0");
        free_values(&got);
}

/* ---- c. same transactional.id fences the older producer ----------------------- */

Test(broker_facts, c_second_producer_fences_first, .timeout = 60) {
        char topic[160], txid[160], group[160];
        unique_name(topic, sizeof topic, "topic", "fence");
        unique_name(txid, sizeof txid, "txn", "fence");
        unique_name(group, sizeof group, "group", "fence");
        const char *topics[] = {topic};
        create_topics(topics, 1, 1);

        struct hstate st1 = {0}, st2 = {0};
        rd_kafka_t *p1 = make_producer(txid, &st1);
        check_error(rd_kafka_init_transactions(p1, TMO_MS), "p1 init_transactions");
        check_error(rd_kafka_begin_transaction(p1), "p1 begin_transaction");
        produce(p1, topic, 0, "p1-committed");
        check_error(rd_kafka_commit_transaction(p1, TMO_MS), "p1 commit_transaction");

        rd_kafka_t *p2 = make_producer(txid, &st2);
        check_error(rd_kafka_init_transactions(p2, TMO_MS), "p2 init_transactions");

        /* p1 goes on as if nothing happened. */
        rd_kafka_error_t *error = rd_kafka_begin_transaction(p1);
        const char *where = "begin_transaction";
        if (error == NULL) {
                produce(p1, topic, 0, "p1-zombie");
                error = rd_kafka_commit_transaction(p1, TMO_MS);
                where = "commit_transaction";
        }
        cr_assert_not_null(error, "the fenced producer committed a transaction");
        char fatal_str[512] = "";
        rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(p1, fatal_str, sizeof fatal_str);
        fprintf(stderr,
                "[fact c] fenced producer: %s -> %s (%s) fatal=%d abortable=%d; "
                "rd_kafka_fatal_error() = %s (%s); zombie delivery reports: %d ok, %d failed "
                "(%s)\n",
                where, rd_kafka_error_name(error), rd_kafka_error_string(error),
                rd_kafka_error_is_fatal(error), rd_kafka_error_txn_requires_abort(error),
                rd_kafka_err2name(fatal), fatal_str, st1.delivered - 1, st1.failed,
                rd_kafka_err2name(st1.last_dr_err));
        cr_assert(rd_kafka_error_is_fatal(error), "error %s is not fatal",
                  rd_kafka_error_name(error));
        cr_assert(fatal == RD_KAFKA_RESP_ERR__FENCED ||
                          fatal == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
                          fatal == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH,
                  "fatal error %s is not a fencing error", rd_kafka_err2name(fatal));
        rd_kafka_error_destroy(error);
        rd_kafka_destroy(p1);

        /* The new producer works. */
        check_error(rd_kafka_begin_transaction(p2), "p2 begin_transaction");
        produce(p2, topic, 0, "p2-committed");
        check_error(rd_kafka_commit_transaction(p2, TMO_MS), "p2 commit_transaction");
        rd_kafka_destroy(p2);

        struct values got;
        rd_kafka_t *c = make_consumer(group, "read_committed");
        assign_from(c, topic, 0, RD_KAFKA_OFFSET_BEGINNING);
        consume_to_eof(c, &got);
        close_consumer(c);
        cr_assert_eq(got.n, 2, "read_committed saw %d records, expected 2", got.n);
        cr_assert_str_eq(got.v[0], "p1-committed");
        cr_assert_str_eq(got.v[1], "p2-committed");
        free_values(&got);
}

/* c2. The zombie is mid-transaction (records already in the log) when the new
 * instance starts: the new instance's init_transactions() aborts that
 * transaction, the zombie's commit fails fatally, its records stay invisible. */
Test(broker_facts, c_fencing_aborts_open_transaction, .timeout = 60) {
        char topic[160], txid[160], group[160];
        unique_name(topic, sizeof topic, "topic", "fence2");
        unique_name(txid, sizeof txid, "txn", "fence2");
        unique_name(group, sizeof group, "group", "fence2");
        const char *topics[] = {topic};
        create_topics(topics, 1, 1);

        struct hstate st1 = {0}, st2 = {0};
        rd_kafka_t *p1 = make_producer(txid, &st1);
        check_error(rd_kafka_init_transactions(p1, TMO_MS), "p1 init_transactions");
        check_error(rd_kafka_begin_transaction(p1), "p1 begin_transaction");
        produce(p1, topic, 0, "p1-open-0");
        produce(p1, topic, 0, "p1-open-1");
        cr_assert_eq(rd_kafka_flush(p1, TMO_MS), 0);
        cr_assert_eq(st1.delivered, 2, "p1: delivered %d failed %d", st1.delivered,
                     st1.failed);

        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rd_kafka_t *p2 = make_producer(txid, &st2);
        check_error(rd_kafka_init_transactions(p2, TMO_MS), "p2 init_transactions");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long init_ms =
                (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);

        rd_kafka_error_t *error = rd_kafka_commit_transaction(p1, TMO_MS);
        cr_assert_not_null(error, "the zombie committed its open transaction");
        fprintf(stderr,
                "[fact c2] p2 init_transactions() with p1's transaction open took %ld ms; "
                "p1 commit_transaction -> %s (%s) fatal=%d abortable=%d\n",
                init_ms, rd_kafka_error_name(error), rd_kafka_error_string(error),
                rd_kafka_error_is_fatal(error), rd_kafka_error_txn_requires_abort(error));
        cr_assert(rd_kafka_error_is_fatal(error), "error %s is not fatal",
                  rd_kafka_error_name(error));
        rd_kafka_error_destroy(error);
        rd_kafka_destroy(p1);

        check_error(rd_kafka_begin_transaction(p2), "p2 begin_transaction");
        produce(p2, topic, 0, "p2-committed");
        check_error(rd_kafka_commit_transaction(p2, TMO_MS), "p2 commit_transaction");
        rd_kafka_destroy(p2);

        struct values got;
        rd_kafka_t *c = make_consumer(group, "read_committed");
        assign_from(c, topic, 0, RD_KAFKA_OFFSET_BEGINNING);
        consume_to_eof(c, &got);
        close_consumer(c);
        cr_assert_eq(got.n, 1, "read_committed saw %d records, expected 1", got.n);
        cr_assert_str_eq(got.v[0], "p2-committed");
        free_values(&got);
}

/* ---- d. metadata size limit ------------------------------------------------------ */

Test(broker_facts, d_offset_metadata_size_limit, .timeout = 60) {
        char in[160], out[160], group[160], txid[160];
        unique_name(in, sizeof in, "in", "meta");
        unique_name(out, sizeof out, "out", "meta");
        unique_name(group, sizeof group, "group", "meta");
        unique_name(txid, sizeof txid, "txn", "meta");
        const char *topics[] = {in, out};
        create_topics(topics, 2, 1);

        enum { LIMIT = 4096 }; /* broker default offset.metadata.max.bytes */
        static char big[LIMIT + 1];
        for (size_t i = 0; i < sizeof big; i++)
                big[i] = (char)('a' + i % 26);

        struct hstate st = {0};
        rd_kafka_t *p = make_producer(txid, &st);
        check_error(rd_kafka_init_transactions(p, TMO_MS), "init_transactions");

        check_error(txn_commit_offset(p, NULL, group, out, in, 10, big, LIMIT),
                    "commit with 4096 bytes of metadata");
        int64_t off = -1;
        static char got[LIMIT + 1];
        size_t got_size = 0;
        committed(group, in, &off, got, sizeof got, &got_size);
        cr_assert_eq(off, 10);
        cr_assert_eq(got_size, (size_t)LIMIT);
        cr_assert_eq(memcmp(got, big, LIMIT), 0);

        rd_kafka_error_t *error =
                txn_commit_offset(p, NULL, group, out, in, 20, big, LIMIT + 1);
        cr_assert_not_null(error, "4097 bytes of metadata were accepted");
        fprintf(stderr,
                "[fact d] 4096 bytes of metadata round-trip; 4097 -> %s (%s) fatal=%d "
                "abortable=%d\n",
                rd_kafka_error_name(error), rd_kafka_error_string(error),
                rd_kafka_error_is_fatal(error), rd_kafka_error_txn_requires_abort(error));
        int abortable = rd_kafka_error_txn_requires_abort(error);
        rd_kafka_error_destroy(error);
        if (abortable)
                check_error(rd_kafka_abort_transaction(p, TMO_MS), "abort_transaction");
        rd_kafka_destroy(p);

        committed(group, in, &off, got, sizeof got, &got_size);
        cr_assert_eq(off, 10, "the rejected commit changed the offset to %" PRId64, off);
}

/* ---- e. key, headers and CreateTime timestamp survive a transaction ------------- */

Test(broker_facts, e_key_headers_timestamp_roundtrip, .timeout = 60) {
        char topic[160], txid[160], group[160];
        unique_name(topic, sizeof topic, "topic", "ts");
        unique_name(txid, sizeof txid, "txn", "ts");
        unique_name(group, sizeof group, "group", "ts");
        const char *topics[] = {topic};
        create_topics(topics, 1, 1);

        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        const int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        /* An old event time (2001), a current one, one 30 minutes ahead (4.x
     * brokers reject more than 1 h ahead: see f). */
        const int64_t ts[3] = {1000000000000LL, now_ms, now_ms + 30 * 60 * 1000};

        struct hstate st = {0};
        rd_kafka_t *p = make_producer(txid, &st);
        check_error(rd_kafka_init_transactions(p, TMO_MS), "init_transactions");
        check_error(rd_kafka_begin_transaction(p), "begin_transaction");
        for (int i = 0; i < 3; i++) {
                char key[16], val[16];
                snprintf(key, sizeof key, "k%d", i);
                snprintf(val, sizeof val, "v%d", i);
                rd_kafka_headers_t *hdrs = rd_kafka_headers_new(2);
                rd_kafka_header_add(hdrs, "trace", -1, "abc", 3);
                rd_kafka_header_add(hdrs, "empty", -1, NULL, 0);
                rd_kafka_resp_err_t err = rd_kafka_producev(
                        p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                        RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE(val, strlen(val)),
                        RD_KAFKA_V_TIMESTAMP(ts[i]), RD_KAFKA_V_HEADERS(hdrs),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err)
                        rd_kafka_headers_destroy(hdrs);
                cr_assert_eq(err, 0, "produce: %s", rd_kafka_err2name(err));
        }
        rd_kafka_error_t *cerr = rd_kafka_commit_transaction(p, TMO_MS);
        if (cerr != NULL)
                fprintf(stderr,
                        "[fact e] commit with timestamps %" PRId64
                        ", now, now+30min: %s (%s); "
                        "delivery: %d ok, %d failed (%s)\n",
                        ts[0], rd_kafka_error_name(cerr), rd_kafka_error_string(cerr),
                        st.delivered, st.failed, rd_kafka_err2name(st.last_dr_err));
        check_error(cerr, "commit_transaction");
        rd_kafka_destroy(p);

        rd_kafka_t *c = make_consumer(group, "read_committed");
        assign_from(c, topic, 0, RD_KAFKA_OFFSET_BEGINNING);
        int n = 0;
        time_t deadline = time(NULL) + 30;
        while (n < 3 && time(NULL) < deadline) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 500);
                if (m == NULL)
                        continue;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        rd_kafka_message_destroy(m);
                        break;
                }
                cr_assert_eq(m->err, 0, "consume: %s", rd_kafka_err2name(m->err));
                char want[16];
                snprintf(want, sizeof want, "k%d", n);
                cr_assert_eq(m->key_len, strlen(want));
                cr_assert_eq(memcmp(m->key, want, m->key_len), 0);
                rd_kafka_timestamp_type_t tstype;
                int64_t got_ts = rd_kafka_message_timestamp(m, &tstype);
                cr_assert_eq(tstype, RD_KAFKA_TIMESTAMP_CREATE_TIME);
                cr_assert_eq(got_ts, ts[n], "timestamp %" PRId64 ", expected %" PRId64, got_ts,
                             ts[n]);
                rd_kafka_headers_t *h = NULL;
                cr_assert_eq(rd_kafka_message_headers(m, &h), 0, "record %d has no headers",
                             n);
                cr_assert_eq(rd_kafka_header_cnt(h), 2);
                const void *hv = NULL;
                size_t hs = 0;
                cr_assert_eq(rd_kafka_header_get_last(h, "trace", &hv, &hs), 0);
                cr_assert_eq(hs, 3);
                cr_assert_eq(memcmp(hv, "abc", 3), 0);
                cr_assert_eq(rd_kafka_header_get_last(h, "empty", &hv, &hs), 0);
                cr_assert_null(hv, "a NULL header value came back non-NULL");
                rd_kafka_message_destroy(m);
                n++;
        }
        close_consumer(c);
        cr_assert_eq(n, 3, "read %d records, expected 3", n);
        fprintf(stderr, "[fact e] key, headers (incl. NULL value) and CreateTime timestamps "
                        "(2001, now, now+30min) round-trip through a transaction\n");
}

/* ---- f. timestamps too far in the future ------------------------------------------ */

Test(broker_facts, f_future_timestamp_limit, .timeout = 60) {
        char topic[160], txid[160], group[160];
        unique_name(topic, sizeof topic, "topic", "future");
        unique_name(txid, sizeof txid, "txn", "future");
        unique_name(group, sizeof group, "group", "future");
        const char *topics[] = {topic};
        /* Kafka 4.x's default, set on the topic so that 3.9 behaves the same. */
        create_topics_cfg(topics, 1, 1, "message.timestamp.after.max.ms", "3600000");

        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        const int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;

        struct hstate st = {0};
        rd_kafka_t *p = make_producer(txid, &st);
        check_error(rd_kafka_init_transactions(p, TMO_MS), "init_transactions");
        check_error(rd_kafka_begin_transaction(p), "begin_transaction");
        produce(p, topic, 0, "ok-before");
        rd_kafka_resp_err_t err = rd_kafka_producev(
                p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                RD_KAFKA_V_VALUE("future", 6), RD_KAFKA_V_TIMESTAMP(now_ms + 2 * 3600 * 1000),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        cr_assert_eq(err, 0, "produce: %s", rd_kafka_err2name(err));
        rd_kafka_error_t *error = rd_kafka_commit_transaction(p, TMO_MS);
        cr_assert_not_null(error, "a record 2 h ahead was accepted by a topic with "
                                  "message.timestamp.after.max.ms=3600000");
        fprintf(stderr,
                "[fact f] a record 2 h ahead: commit_transaction -> %s (%s) fatal=%d "
                "abortable=%d; delivery reports: %d ok, %d failed (%s)\n",
                rd_kafka_error_name(error), rd_kafka_error_string(error),
                rd_kafka_error_is_fatal(error), rd_kafka_error_txn_requires_abort(error),
                st.delivered, st.failed, rd_kafka_err2name(st.last_dr_err));
        cr_assert_eq(rd_kafka_error_code(error), RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP,
                     "expected INVALID_TIMESTAMP, got %s", rd_kafka_error_name(error));
        cr_assert(rd_kafka_error_txn_requires_abort(error));
        cr_assert(!rd_kafka_error_is_fatal(error));
        rd_kafka_error_destroy(error);
        check_error(rd_kafka_abort_transaction(p, TMO_MS), "abort_transaction");

        /* The producer goes on: retry (abort + again) on abortable errors. */
        int attempts = 0, committed_ok = 0;
        while (attempts < 4 && !committed_ok) {
                attempts++;
                check_error(rd_kafka_begin_transaction(p), "begin_transaction");
                produce(p, topic, 0, "ok-after");
                error = rd_kafka_commit_transaction(p, TMO_MS);
                if (error == NULL) {
                        committed_ok = 1;
                        break;
                }
                fprintf(stderr,
                        "[fact f] next transaction, attempt %d: commit -> %s (%s) fatal=%d "
                        "abortable=%d\n",
                        attempts, rd_kafka_error_name(error), rd_kafka_error_string(error),
                        rd_kafka_error_is_fatal(error),
                        rd_kafka_error_txn_requires_abort(error));
                cr_assert(rd_kafka_error_txn_requires_abort(error), "not abortable: %s",
                          rd_kafka_error_name(error));
                rd_kafka_error_destroy(error);
                check_error(rd_kafka_abort_transaction(p, TMO_MS), "abort_transaction");
        }
        fprintf(stderr,
                "[fact f] after the INVALID_TIMESTAMP abort, a transaction committed at "
                "attempt %d\n",
                attempts);
        cr_assert(committed_ok, "no transaction committed after %d attempts", attempts);
        rd_kafka_destroy(p);

        struct values got;
        rd_kafka_t *c = make_consumer(group, "read_committed");
        assign_from(c, topic, 0, RD_KAFKA_OFFSET_BEGINNING);
        consume_to_eof(c, &got);
        close_consumer(c);
        cr_assert_eq(got.n, 1, "read_committed saw %d records, expected 1 (ok-after)", got.n);
        cr_assert_str_eq(got.v[0], "ok-after");
        free_values(&got);
}
