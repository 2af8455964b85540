/* tests/unit/test_loop.c: gp_proxy_run itself, in seconds, on librdkafka's
 * in-process mock cluster with a control file: routing through a cutover in
 * both delivery modes, a decision committed while no record flows, a stop
 * with a decision pending, an aborted transaction rewound, and (test build)
 * a rewind that cannot assign the partitions ending the loop.
 * The mock cluster ignores read_committed, stores no transactional offsets
 * and never fences: these tests check the loop's logic, and the
 * exactly-once claims stay with the integration tests on a real broker. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "gate/control.h"
#include "k8s/configmap.h"
#include "proxy/ops/verbs.h"
#include "proxy/conf/conf.h"
#include "proxy/control/ctl.h"
#include "proxy/base/log.h"
#include "proxy/loop/internal.h"
#include "proxy/loop/proxy.h"

#define PARTS 2
#define BASE  INT64_C(1700000000000)

typedef struct rig {
        rd_kafka_t *host;
        rd_kafka_mock_cluster_t *mock;
        const char *bootstrap;
        char dir[64], control[128];
        gp_conf_t conf;
        gp_proxy_t *p;
        pthread_t thr;
        volatile int done;
        int code;
} rig_t;

static void *run(void *arg) {
        rig_t *r = arg;
        r->code = gp_proxy_run(r->p);
        r->done = 1;
        return NULL;
}

/* A mock cluster with S, its colour topics and the dead-letter topic, a
 * control map for a first deployment, and the proxy running on them. */
static void rig_up(rig_t *r, const char *delivery) {
        gp_err_t err;
        memset(r, 0, sizeof(*r));
        gp_log_set_level("error");
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        rd_kafka_conf_set(kc, "log_level", "2", err.msg, sizeof err.msg);
        r->host = rd_kafka_new(RD_KAFKA_PRODUCER, kc, err.msg, sizeof err.msg);
        cr_assert_not_null(r->host, "%s", err.msg);
        r->mock = rd_kafka_mock_cluster_new(r->host, 1);
        cr_assert_not_null(r->mock);
        r->bootstrap = rd_kafka_mock_cluster_bootstraps(r->mock);
        const char *topics[] = {"s", "s.blue", "s.green", "loop.dlq"};
        for (int i = 0; i < 4; i++)
                rd_kafka_mock_topic_create(r->mock, topics[i], i == 3 ? 1 : PARTS, 1);
        snprintf(r->dir, sizeof(r->dir), "/tmp/gp-loop.XXXXXX");
        cr_assert_not_null(mkdtemp(r->dir));
        snprintf(r->control, sizeof(r->control), "%s/cm.json", r->dir);
        cr_assert_eq(gp_ops_init(r->control, GP_BLUE, 0), 0);
        gp_conf_init(&r->conf);
        const char *kv[][2] = {
                {"kafka.bootstrap.servers", r->bootstrap},
                {"gate.pipeline", "loop"},
                {"gate.source.topics", "s"},
                {"gate.event-time", "json:ts"},
                {"gate.dlq.topic", "loop.dlq"},
                {"gate.delivery", delivery},
                {"gate.watermark.out-of-orderness.ms", "100"},
                {"gate.watermark.idle.ms", "500"},
                {"gate.status.interval.ms", "1000"},
                {"control.file", r->control},
                {"log.level", "error"},
        };
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
                cr_assert_eq(gp_conf_set(&r->conf, kv[i][0], kv[i][1], "test", &err), 0, "%s",
                             err.msg);
        cr_assert_eq(gp_conf_finalize(&r->conf, &err), 0, "%s", err.msg);
        r->p = gp_proxy_new(&r->conf, &err);
        cr_assert_not_null(r->p, "%s", err.msg);
        pthread_create(&r->thr, NULL, run, r);
}

/* Frees the rig once gp_proxy_run has returned. */
static void rig_free(rig_t *r) {
        gp_proxy_destroy(r->p);
        gp_conf_destroy(&r->conf);
        rd_kafka_mock_cluster_destroy(r->mock);
        rd_kafka_destroy(r->host);
        char lock[160];
        snprintf(lock, sizeof(lock), "%s.lock", r->control);
        unlink(r->control);
        unlink(lock);
        rmdir(r->dir);
}

/* Waits up to secs for gp_proxy_run to return (else fails with what it
 * went on doing), and joins its thread; its code is in r->code. */
static void await_end(rig_t *r, int secs, const char *what) {
        for (int i = 0; i < secs * 100 && !r->done; i++)
                usleep(10 * 1000);
        cr_assert(r->done, "gp_proxy_run %s", what);
        pthread_join(r->thr, NULL);
}

/* Stops the proxy, which must return 0 within 10 s. */
static void rig_stop(rig_t *r) {
        gp_proxy_stop(r->p);
        await_end(r, 10, "did not return within 10 s of gp_proxy_stop");
        cr_assert_eq(r->code, 0, "gp_proxy_run returned %d", r->code);
}

/* Stops the proxy (rig_stop) and frees the rig. */
static void rig_down(rig_t *r) {
        rig_stop(r);
        rig_free(r);
}

/* Records id from..from+n-1 with event time BASE + id, round-robin over the
 * partitions. */
static void produce(rig_t *r, int64_t from, int64_t n) {
        char err[256], v[96];
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        rd_kafka_conf_set(kc, "bootstrap.servers", r->bootstrap, err, sizeof(err));
        rd_kafka_conf_set(kc, "log_level", "2", err, sizeof(err));
        rd_kafka_t *pr = rd_kafka_new(RD_KAFKA_PRODUCER, kc, err, sizeof(err));
        cr_assert_not_null(pr, "%s", err);
        for (int64_t i = from; i < from + n; i++) {
                int len = snprintf(v, sizeof(v), "{\"id\":%" PRId64 ",\"ts\":%" PRId64 "}", i,
                                   BASE + i);
                cr_assert_eq(rd_kafka_producev(pr, RD_KAFKA_V_TOPIC("s"),
                                               RD_KAFKA_V_PARTITION((int32_t)(i % PARTS)),
                                               RD_KAFKA_V_VALUE(v, (size_t)len),
                                               RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                               RD_KAFKA_V_END),
                             RD_KAFKA_RESP_ERR_NO_ERROR);
        }
        cr_assert_eq(rd_kafka_flush(pr, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
        rd_kafka_destroy(pr);
}

static gp_stats_t stats(rig_t *r) {
        gp_stats_t s;
        gp_proxy_stats(r->p, &s);
        return s;
}

/* Polls until the committed counts reach blue, green (each -1: any). */
static void await_counts(rig_t *r, int64_t blue, int64_t green, const char *what) {
        gp_stats_t s = stats(r);
        for (int i = 0; i < 1000; i++, usleep(10 * 1000)) {
                s = stats(r);
                if ((blue < 0 || (int64_t)s.n[0] == blue) &&
                    (green < 0 || (int64_t)s.n[1] == green))
                        return;
                cr_assert(!r->done, "the proxy stopped (code %d) while waiting for %s",
                          r->code, what);
        }
        cr_assert_fail("%s: blue=%" PRIu64 " green=%" PRIu64 " after 10 s (want %" PRId64
                       ", %" PRId64 ")",
                       what, s.n[0], s.n[1], blue, green);
}

/* The control file's KEY, "" when absent; into buf. */
static const char *key(rig_t *r, const char *k, char *buf, size_t len) {
        gp_err_t err;
        gp_cm_t *cm = gp_ctlfile_load(r->control, &err);
        const char *v = cm ? gp_cm_get(cm, k) : NULL;
        snprintf(buf, len, "%s", v ? v : "");
        gp_cm_destroy(cm);
        return buf;
}

static void await_key(rig_t *r, const char *k, const char *want, int secs) {
        char v[128] = "";
        for (int i = 0; i < secs * 50; i++, usleep(20 * 1000))
                if (!strcmp(key(r, k, v, sizeof(v)), want))
                        return;
        cr_assert_fail("%s is '%s' after %d s, not '%s'", k, v, secs, want);
}

static void cutover(rig_t *r, gp_colour_t to) {
        gp_cutover_opts_t co = {.to = to, .delay_ms = 0, .at = GP_TS_NONE, .quiet = 1};
        cr_assert_eq(gp_ops_cutover(r->control, &co), 0);
}

/* Blue, the split at T, green: every record once, each on its side of T. */
static void cutover_routes(const char *delivery) {
        rig_t r;
        rig_up(&r, delivery);
        produce(&r, 0, 1000);
        await_counts(&r, 1000, 0, "the first deployment");
        cutover(&r, GP_GREEN);
        await_key(&r, GP_KEY_WM_STAGE, "WATERMARK_SET", 10);
        char t[32];
        int64_t cut = strtoll(key(&r, GP_KEY_TOGGLE, t, sizeof(t)), NULL, 10);
        /* T is above every event time routed before it. */
        cr_assert_geq(cut, BASE + 1000, "T=%" PRId64 " is not above the last routed ts", cut);
        produce(&r, 1000, 1000);
        await_key(&r, GP_KEY_STAGE, "CLEAR_TO_TEARDOWN", 10);
        /* ids 1000..1999 have ts >= BASE + 1000 = T: all to green. */
        await_counts(&r, 1000 + (cut - BASE - 1000), 1000 - (cut - BASE - 1000), "the split");
        cr_assert_eq(stats(&r).phase, GP_PHASE_CLOSED);
        rig_down(&r);
}

Test(loop, eos_cutover_routes_by_t, .timeout = 60) {
        cutover_routes("exactly-once");
}

Test(loop, alo_cutover_routes_by_t, .timeout = 60) {
        cutover_routes("at-least-once");
}

/* With no record flowing, the cutover's decisions are committed and
 * published all the same: T, then the close over idle partitions. */
static void decisions_without_records(const char *delivery) {
        rig_t r;
        rig_up(&r, delivery);
        produce(&r, 0, 10);
        await_counts(&r, 10, 0, "ten records");
        cutover(&r, GP_GREEN);
        await_key(&r, GP_KEY_WM_STAGE, "WATERMARK_SET", 10);
        await_key(&r, GP_KEY_STAGE, "CLEAR_TO_TEARDOWN", 10);
        rig_down(&r);
}

Test(loop, eos_decisions_without_records, .timeout = 60) {
        decisions_without_records("exactly-once");
}

Test(loop, alo_decisions_without_records, .timeout = 60) {
        decisions_without_records("at-least-once");
}

/* A stop right after a transition is asked for: the loop commits the
 * pending decision and returns 0 (rig_down), in both modes. */
static void stop_with_decision_pending(const char *delivery) {
        rig_t r;
        rig_up(&r, delivery);
        produce(&r, 0, 10);
        await_counts(&r, 10, 0, "ten records");
        cutover(&r, GP_GREEN);
        usleep(150 * 1000); /* the loop sees the change within ~100 ms */
        rig_down(&r);
}

Test(loop, eos_stop_with_decision_pending, .timeout = 60) {
        stop_with_decision_pending("exactly-once");
}

Test(loop, alo_stop_with_decision_pending, .timeout = 60) {
        stop_with_decision_pending("at-least-once");
}

/* An abortable error (the broker refuses to add a partition to the
 * transaction): the transaction is aborted, the loop rewinds to the last
 * commit and routes the records again, so the committed counts come out
 * exact. */
Test(loop, aborted_transaction_is_rewound, .timeout = 60) {
        rig_t r;
        rig_up(&r, "exactly-once");
        produce(&r, 0, 100);
        await_counts(&r, 100, 0, "the first records");
        uint64_t aborts = stats(&r).aborts;
        rd_kafka_mock_push_request_errors(r.mock, 24 /* AddPartitionsToTxn */, 1,
                                          RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
        produce(&r, 100, 400);
        await_counts(&r, 500, 0, "the records after the abort");
        cr_assert_gt(stats(&r).aborts, aborts, "no transaction was aborted");
        rig_down(&r);
}

#ifdef GP_TEST_HOOKS
/* The rewind after an abort cannot assign the partitions (the test build's
 * GP_FAULT_FAIL=assign:2; the 1st assignment is the start's): the consumer
 * would go on past the aborted records, so the loop ends with
 * GP_EXIT_FATAL instead of routing on, and nothing after the last commit
 * is counted. */
Test(loop, failed_rewind_is_fatal, .timeout = 60) {
        rig_t r;
        setenv("GP_FAULT_FAIL", "assign:2", 1);
        rig_up(&r, "exactly-once");
        produce(&r, 0, 100);
        await_counts(&r, 100, 0, "the first records");
        rd_kafka_mock_push_request_errors(r.mock, 24 /* AddPartitionsToTxn */, 1,
                                          RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
        produce(&r, 100, 400);
        await_end(&r, 10, "went on after the rewind failed");
        cr_assert_eq(r.code, GP_EXIT_FATAL, "gp_proxy_run returned %d, not GP_EXIT_FATAL",
                     r.code);
        gp_stats_t s = stats(&r);
        cr_assert_eq(s.n[0], 100, "%" PRIu64 " records committed, expected the first 100",
                     s.n[0]);
        cr_assert_eq(s.aborts, 0, "the failed rewind was counted as a finished abort");
        rig_free(&r);
        unsetenv("GP_FAULT_FAIL");
}
#endif

/* An abort with no transaction open (a rebalance that ends a window which
 * never began) only rewinds: librdkafka refuses abort_transaction in
 * state Ready, and taking that refusal for a fatal error ended a member
 * after an assignment and a revocation in one poll. Here the producer is
 * in state Ready after the run's last commit. */
Test(loop, abort_without_transaction_only_rewinds, .timeout = 60) {
        rig_t r;
        rig_up(&r, "exactly-once");
        produce(&r, 0, 100);
        await_counts(&r, 100, 0, "the first records");
        rig_stop(&r);
        cr_assert_lt(r.p->txn_begin, 0, "a transaction is open after the run");
        uint64_t aborts = stats(&r).aborts;
        cr_assert_eq(gp_delivery_abort(r.p), GP_TX_OK,
                     "an abort with no transaction open failed (abort_transaction called "
                     "in state Ready?)");
        cr_assert_eq(stats(&r).aborts, aborts + 1, "the rewind was not counted as an abort");
        /* Rewound: the consumer is assigned again at the committed offsets
         * (the end): it reads what comes next, nothing before. Waited for
         * also because librdkafka asserts when a consumer is closed before
         * the partitions of a new assignment have started. */
        produce(&r, 100, 10);
        int got_n = 0;
        for (int i = 0; i < 100 && got_n < 10; i++) {
                rd_kafka_message_t *m[16];
                ssize_t got = rd_kafka_consume_batch_queue(r.p->queue, 100, m, 16);
                for (ssize_t k = 0; k < got; k++) {
                        if (!m[k]->err) {
                                cr_assert_geq(m[k]->offset, 50,
                                              "offset %" PRId64 " read again after the rewind "
                                              "(the last commit is at 50 per partition)",
                                              m[k]->offset);
                                got_n++;
                        }
                        rd_kafka_message_destroy(m[k]);
                }
        }
        cr_assert_eq(got_n, 10, "%d of the 10 records after the rewind read", got_n);
        rig_free(&r);
}

#ifdef GP_TEST_HOOKS
/* Aborts in a row with no commit for longer than the watchdog's bound
 * (GP_TEST_WATCHDOG_MS=3000 here, 60 s in production) are no progress: a
 * Kafka client with a stale view of the cluster (librdkafka #5430) aborts
 * every window for good. The loop ends with GP_EXIT_FATAL (a restart has a
 * fresh client); nothing after the last commit is counted. */
Test(loop, aborts_without_end_are_fatal, .timeout = 60) {
        rig_t r;
        setenv("GP_TEST_WATCHDOG_MS", "3000", 1);
        rig_up(&r, "exactly-once");
        produce(&r, 0, 100);
        await_counts(&r, 100, 0, "the first records");
        static rd_kafka_resp_err_t refused[5000];
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
                refused[i] = RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED;
        rd_kafka_mock_push_request_errors_array(r.mock, 24 /* AddPartitionsToTxn */,
                                                sizeof refused / sizeof refused[0], refused);
        produce(&r, 100, 400);
        await_end(&r, 30, "went on aborting for 30 s without a commit");
        cr_assert_eq(r.code, GP_EXIT_FATAL, "gp_proxy_run returned %d, not GP_EXIT_FATAL",
                     r.code);
        gp_stats_t s = stats(&r);
        cr_assert_eq(s.n[0], 100, "%" PRIu64 " records committed, expected the first 100",
                     s.n[0]);
        cr_assert_gt(s.aborts, 1, "only %" PRIu64 " abort(s) before the end", s.aborts);
        rig_free(&r);
        unsetenv("GP_TEST_WATCHDOG_MS");
}
#endif
