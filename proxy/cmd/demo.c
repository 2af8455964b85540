/* proxy/cmd/demo.c: the embedded demo (see proxy/cmd/demo.h). */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "gate/jsonpath.h"
#include "gate/timeparse.h"
#include "proxy/ops/verbs.h"
#include "proxy/conf/conf.h"
#include "proxy/cmd/demo.h"
#include "proxy/base/log.h"
#include "proxy/loop/proxy.h"

#define PARTS 4

static const char *usage =
        "Usage: gate-proxy demo [--records N] [--rate R] [--keep]\n"
        "\n"
        "Runs a whole blue -> green cutover in this process, on librdkafka's mock\n"
        "Kafka cluster: it writes N synthetic JSON events (default 100000, at R per\n"
        "second, default 10000) with out-of-order event times, some late and some\n"
        "unreadable, to topic `events` (4 partitions); runs the proxy with a local\n"
        "control map; starts the cutover once the proxy has routed half of them, with\n"
        "`gate-proxy cutover`; finishes\n"
        "it when the proxy writes CLEAR_TO_TEARDOWN; then reads events.blue,\n"
        "events.green and the dead-letter topic back and checks every event arrived\n"
        "exactly once:\n"
        "  demo: in=N blue=X green=Y late=L dlq=Z duplicates=D missing=M cutoff=T\n"
        "The progress line shows the proxy's watermark (the event time up to which it\n"
        "has seen every partition, less gate.watermark.out-of-orderness.ms) and the\n"
        "cutoff T, as times of day (UTC): blue gets the events before T, green the rest.\n"
        "Exit 0 when D and M are 0. --keep leaves the control map in its temp folder.\n"
        "The mock cluster ignores read_committed and never fences; exactly-once is\n"
        "proven by `make test` on a real broker.\n";

typedef struct demo {
        const char *bootstrap;
        int64_t records, rate;
        int64_t base_ts;
        volatile int64_t produced;
        volatile int failed;
} demo_t;

/* The event time of record i: 1 ms apart, jittered by up to +-400 ms; every
 * 997th is 30 s late; every 1009th has an unreadable time. */
static void event(int64_t base, int64_t i, char *buf, size_t len, unsigned *seed) {
        int64_t ts = base + i + (int64_t)(rand_r(seed) % 801) - 400;
        if (i % 997 == 996)
                ts -= 30000;
        if (i % 1009 == 1008)
                snprintf(buf, len, "{\"id\":%" PRId64 ",\"ts\":\"soon\"}", i);
        else
                snprintf(buf, len, "{\"id\":%" PRId64 ",\"ts\":%" PRId64 ",\"v\":\"x\"}", i,
                         ts);
}

static void *producer(void *arg) {
        demo_t *d = arg;
        char err[256], buf[128];
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        rd_kafka_conf_set(kc, "bootstrap.servers", d->bootstrap, err, sizeof(err));
        rd_kafka_conf_set(kc, "linger.ms", "5", err, sizeof(err));
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, kc, err, sizeof(err));
        unsigned seed = 42;
        int64_t t0 = gp_mono_ms();
        if (!rk) {
                d->failed = 1;
                return NULL;
        }
        for (int64_t i = 0; i < d->records; i++) {
                event(d->base_ts, i, buf, sizeof(buf), &seed);
                char key[16];
                snprintf(key, sizeof(key), "k%" PRId64, i % 64);
                while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("events"),
                                         RD_KAFKA_V_KEY(key, strlen(key)),
                                         RD_KAFKA_V_VALUE(buf, strlen(buf)),
                                         RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                         RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        rd_kafka_poll(rk, 10);
                d->produced = i + 1;
                /* Pace to the rate, in steps of 100 records. */
                if (d->rate > 0 && i % 100 == 99) {
                        int64_t due = t0 + (i + 1) * 1000 / d->rate, now = gp_mono_ms();
                        if (due > now)
                                usleep((useconds_t)(due - now) * 1000);
                }
                rd_kafka_poll(rk, 0);
        }
        if (rd_kafka_flush(rk, 30000))
                d->failed = 1;
        rd_kafka_destroy(rk);
        return NULL;
}

typedef struct runner {
        gp_proxy_t *p;
        int code;
} runner_t;

static void *run_proxy(void *arg) {
        runner_t *r = arg;
        r->code = gp_proxy_run(r->p);
        return NULL;
}

/* Reads every record of topic back; calls fn for each. */
static int read_back(const char *bootstrap, const char *topic, int parts,
                     void (*fn)(void *, const rd_kafka_message_t *), void *arg) {
        char err[256];
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        rd_kafka_conf_set(kc, "bootstrap.servers", bootstrap, err, sizeof(err));
        rd_kafka_conf_set(kc, "group.id", "gate-proxy-demo-tally", err, sizeof(err));
        rd_kafka_conf_set(kc, "enable.partition.eof", "true", err, sizeof(err));
        rd_kafka_conf_set(kc, "enable.auto.commit", "false", err, sizeof(err));
        rd_kafka_conf_set(kc, "isolation.level", "read_committed", err, sizeof(err));
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, kc, err, sizeof(err));
        if (!rk)
                return -1;
        rd_kafka_poll_set_consumer(rk);
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(parts);
        for (int i = 0; i < parts; i++)
                rd_kafka_topic_partition_list_add(l, topic, i)->offset =
                        RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(rk, l);
        int eof = 0, idle = 0;
        while (eof < parts && idle < 50) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
                if (!m) {
                        idle++;
                        continue;
                }
                idle = 0;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
                        eof++;
                else if (!m->err)
                        fn(arg, m);
                rd_kafka_message_destroy(m);
        }
        rd_kafka_topic_partition_list_destroy(l);
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
        return eof < parts ? -1 : 0;
}

typedef struct tally {
        uint8_t *seen; /* per event id: how many times it arrived */
        int64_t n;
        int64_t count;
        int64_t late; /* green records with ts < T */
        int64_t cutoff;
        gp_jpath_t id, ts;
        int check_late;
} tally_t;

static void count(void *arg, const rd_kafka_message_t *m) {
        tally_t *t = arg;
        gp_jval_t v;
        int64_t id, ts;
        const char *why;
        t->count++;
        if (gp_jpath_find(&t->id, m->payload, m->len, &v) != GP_JSON_OK ||
            gp_parse_i64(v.ptr, v.len, &id, &why) || id < 0 || id >= t->n)
                return;
        if (t->seen[id] < 255)
                t->seen[id]++;
        if (t->check_late && gp_jpath_find(&t->ts, m->payload, m->len, &v) == GP_JSON_OK &&
            v.type == GP_JSON_NUMBER && !gp_parse_i64(v.ptr, v.len, &ts, &why) &&
            ts < t->cutoff)
                t->late++;
}

/* An event time as the time of day, UTC ("17:20:01.123"), "-" if none. */
static const char *clock_of(int64_t ts, char *buf, size_t len) {
        char full[40];
        if (ts == GP_TS_NONE)
                return snprintf(buf, len, "-"), buf;
        gp_time_format(ts, full, sizeof(full)); /* 2026-12-03T17:20:01.123Z */
        snprintf(buf, len, "%.12s", full + 11);
        return buf;
}

static void progress(const gp_stats_t *s, int64_t produced, const char *note, int tty) {
        char w[40], t[40];
        fprintf(stderr,
                "%sproduced=%" PRId64 " routed=%" PRIu64 " blue=%" PRIu64 " green=%" PRIu64
                " dlq=%" PRIu64 " watermark=%s T=%s phase=%s %s%s",
                tty ? "\r\033[K" : "", produced, s->in, s->n[0], s->n[1], s->n[2],
                clock_of(s->wm, w, sizeof(w)), clock_of(s->cutoff, t, sizeof(t)),
                gp_phase_name(s->phase), note, tty ? "" : "\n");
}

int gp_demo_main(int argc, char **argv) {
        demo_t d = {.records = 100000, .rate = 10000};
        int keep = 0, c;
        static const struct option o[] = {{"records", required_argument, 0, 'n'},
                                          {"rate", required_argument, 0, 'r'},
                                          {"keep", no_argument, 0, 'k'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
        optind = 1;
        while ((c = getopt_long(argc, argv, "", o, NULL)) != -1) {
                const char *why;
                switch (c) {
                case 'n':
                        if (gp_parse_i64(optarg, strlen(optarg), &d.records, &why) ||
                            d.records < 1000 || d.records > 100000000) {
                                fprintf(stderr,
                                        "gate-proxy demo: --records: 1000 to 100000000\n");
                                return 2;
                        }
                        break;
                case 'r':
                        if (gp_parse_i64(optarg, strlen(optarg), &d.rate, &why) ||
                            d.rate < 0) {
                                fprintf(stderr, "gate-proxy demo: --rate: a whole number, 0 "
                                                "for as fast as possible\n");
                                return 2;
                        }
                        break;
                case 'k':
                        keep = 1;
                        break;
                case 'h':
                        fputs(usage, stdout);
                        return 0;
                default:
                        fputs(usage, stderr);
                        return 2;
                }
        }
        int tty = isatty(2);
        setvbuf(stdout, NULL, _IOLBF, 0);
        gp_log_set_level("warn");

        /* 1. An in-process Kafka with the topics. */
        char err[1024], dir[] = "/tmp/gate-proxy-demo.XXXXXX", control[128];
        gp_err_t cerr;
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        rd_kafka_conf_set(kc, "log_level", "3", err, sizeof(err)); /* no bootstrap: fine */
        rd_kafka_t *host = rd_kafka_new(RD_KAFKA_PRODUCER, kc, err, sizeof(err));
        rd_kafka_mock_cluster_t *mock = host ? rd_kafka_mock_cluster_new(host, 1) : NULL;
        if (!mock || !mkdtemp(dir)) {
                fprintf(stderr, "gate-proxy demo: cannot start the mock cluster: %s\n", err);
                return 1;
        }
        d.bootstrap = rd_kafka_mock_cluster_bootstraps(mock);
        const char *topics[] = {"events", "events.blue", "events.green", "demo.dlq"};
        for (int i = 0; i < 4; i++)
                rd_kafka_mock_topic_create(mock, topics[i], i == 3 ? 1 : PARTS, 1);
        snprintf(control, sizeof(control), "%s/demo-configmap.json", dir);
        printf("demo: mock Kafka at %s, control map %s\n", d.bootstrap, control);
        if (gp_ops_init(control, GP_BLUE, 0))
                return 1;

        /* 2. The proxy, configured as a user would. */
        gp_conf_t conf;
        gp_conf_init(&conf);
        const char *kv[][2] = {
                {"kafka.bootstrap.servers", d.bootstrap},
                {"gate.pipeline", "demo"},
                {"gate.source.topics", "events"},
                {"gate.event-time", "json:ts"},
                {"gate.watermark.out-of-orderness.ms", "500"},
                {"gate.watermark.idle.ms", "2000"},
                {"gate.cutoff.align.ms", "1000"},
                {"control.file", control},
                {"log.level", "warn"},
        };
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
                if (gp_conf_set(&conf, kv[i][0], kv[i][1], "demo", &cerr))
                        goto conf_fail;
        if (gp_conf_finalize(&conf, &cerr))
                goto conf_fail;
        runner_t r = {gp_proxy_new(&conf, &cerr), 0};
        if (!r.p)
                goto conf_fail;

        pthread_t pt, rt;
        d.base_ts = gp_now_ms();
        pthread_create(&rt, NULL, run_proxy, &r);
        pthread_create(&pt, NULL, producer, &d);

        /* 3. Drive the cutover half-way, finish it when cleared. */
        int started = 0, finished = 0, said_t = 0;
        gp_stats_t s;
        int64_t last_print = 0, deadline = 0;
        for (;;) {
                gp_proxy_stats(r.p, &s);
                int64_t now = gp_mono_ms();
                const char *note = "";
                if (!started && (int64_t)s.in >= d.records / 2) {
                        /* quiet: the demo's reader is no job to drain */
                        gp_cutover_opts_t co = {.to = GP_GREEN,
                                                .delay_ms = 1000,
                                                .at = GP_TS_NONE,
                                                .quiet = 1};
                        if (tty)
                                fputc('\n', stderr);
                        if (gp_ops_cutover(control, &co))
                                break;
                        printf("demo: ---- cutover to green requested after %" PRIu64
                               " events (gate-proxy cutover --to green --delay-ms 1000)\n",
                               s.in);
                        fflush(stdout);
                        started = 1;
                }
                if (started && !said_t && s.cutoff != GP_TS_NONE) {
                        char t[40];
                        if (tty)
                                fputc('\n', stderr);
                        printf("demo: ---- the proxy chose T=%s (%" PRId64 "): events before "
                               "it go to blue, the rest to green\n",
                               clock_of(s.cutoff, t, sizeof(t)), s.cutoff);
                        fflush(stdout);
                        said_t = 1;
                }
                if (started && !finished && gp_ops_wait_clear(control, 1, 1) == 0) {
                        if (tty)
                                fputc('\n', stderr);
                        printf("demo: ---- the proxy wrote CLEAR_TO_TEARDOWN: blue has every "
                               "event before T and could now be stopped\n");
                        gp_ops_finish(control, 0);
                        finished = 1;
                }
                if (started && !finished)
                        note = "(cutover to green)";
                if (now - last_print >= (tty ? 200 : 1000)) {
                        progress(&s, d.produced, note, tty);
                        last_print = now;
                }
                if (d.produced >= d.records && (int64_t)s.in >= d.records && finished)
                        break;
                if (d.produced >= d.records && !deadline)
                        deadline = now + 60000;
                if (deadline && now > deadline) {
                        fprintf(stderr, "\ndemo: the proxy did not finish within 60 s\n");
                        break;
                }
                if (d.failed)
                        break;
                usleep(50 * 1000);
        }
        progress(&s, d.produced, "", tty);
        if (tty)
                fputc('\n', stderr);
        pthread_join(pt, NULL);
        gp_proxy_stop(r.p);
        pthread_join(rt, NULL);
        gp_proxy_stats(r.p, &s);
        gp_proxy_destroy(r.p);

        /* 4. The tally, from what the colour topics hold. */
        tally_t t = {.n = d.records, .cutoff = s.cutoff};
        t.seen = calloc((size_t)d.records, 1);
        gp_jpath_compile(&t.id, "id", err, sizeof(err));
        gp_jpath_compile(&t.ts, "ts", err, sizeof(err));
        int64_t blue, green, dlq;
        int rb = read_back(d.bootstrap, "events.blue", PARTS, count, &t);
        blue = t.count;
        t.check_late = 1;
        rb |= read_back(d.bootstrap, "events.green", PARTS, count, &t);
        green = t.count - blue;
        t.check_late = 0;
        rb |= read_back(d.bootstrap, "demo.dlq", 1, count, &t);
        dlq = t.count - blue - green;
        int64_t dup = 0, missing = 0;
        for (int64_t i = 0; i < d.records; i++) {
                if (!t.seen[i])
                        missing++;
                else
                        dup += t.seen[i] - 1;
        }
        free(t.seen);
        printf("demo: in=%" PRId64 " blue=%" PRId64 " green=%" PRId64 " late=%" PRId64
               " dlq=%" PRId64 " duplicates=%" PRId64 " missing=%" PRId64 " cutoff=%" PRId64
               "\n",
               d.records, blue, green, t.late, dlq, dup, missing,
               s.cutoff == GP_TS_NONE ? -1 : s.cutoff);

        if (!dup && !missing && !rb && finished)
                printf("demo: check passed: every event exactly once (blue %" PRId64
                       " + green %" PRId64 " + dead-letter %" PRId64 " = %" PRId64 ")\n",
                       blue, green, dlq, d.records);
        else
                printf("demo: check FAILED: %" PRId64 " duplicates, %" PRId64 " missing%s%s\n",
                       dup, missing, rb ? ", a colour topic could not be read" : "",
                       finished ? "" : ", the cutover did not finish");

        gp_conf_destroy(&conf);
        rd_kafka_mock_cluster_destroy(mock);
        rd_kafka_destroy(host);
        if (!keep) {
                char lock[160];
                snprintf(lock, sizeof(lock), "%s.lock", control);
                unlink(control);
                unlink(lock);
                rmdir(dir);
        }
        return rb || r.code || dup || missing || !finished || d.failed ? 1 : 0;
conf_fail:
        fprintf(stderr, "gate-proxy demo: %s\n", cerr.msg);
        gp_conf_destroy(&conf);
        return 1;
}
