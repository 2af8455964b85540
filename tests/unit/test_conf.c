/* tests/unit/test_conf.c: proxy/conf/, the key table, file parsing,
 * -X overrides, kafka.* passthrough, finalize and the generated documents.
 * Files are written to a temporary file (mkstemp) so errors carry a real
 * "path:line" origin. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/conf/conf.h"

#define ERRLEN 512

/* The smallest configuration that finalizes. */
#define BASE                                                                                  \
        "gate.pipeline=orders-enrich\n"                                                       \
        "gate.source.topics=orders\n"                                                         \
        "kafka.bootstrap.servers=localhost:9092\n"                                            \
        "control.file=/var/lib/gate-proxy/bluegreen.json\n"

static char tmp_path[64];

/* Writes len bytes to a new temporary file; its path is in tmp_path. */
static void write_tmp(const char *text, size_t len) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp_path, sizeof tmp_path, "%s/gp_conf_XXXXXX",
                 dir && strlen(dir) < 40 ? dir : "/tmp");
        int fd = mkstemp(tmp_path);
        cr_assert_geq(fd, 0, "mkstemp");
        size_t off = 0;
        while (off < len) {
                ssize_t w = write(fd, text + off, len - off);
                cr_assert_gt(w, 0, "write");
                off += (size_t)w;
        }
        close(fd);
}

/* Loads text through a real file; the file is removed again. */
static gp_errcode_t load_text(gp_conf_t *c, const char *text, gp_err_t *err) {
        write_tmp(text, strlen(text));
        gp_err_clear(err);
        gp_errcode_t rc = gp_conf_load_file(c, tmp_path, err);
        unlink(tmp_path);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Good files                                                          */

Test(conf, defaults) {
        gp_conf_t c;
        cr_assert_eq(gp_conf_init(&c), GP_OK); /* the table takes its own defaults */
        cr_assert_null(c.pipeline);
        cr_assert_null(c.source_topics_raw);
        cr_assert_null(c.control_file);
        cr_assert_str_eq(c.transactional_id, "gate-proxy-{pipeline}");
        cr_assert_str_eq(c.group_id, "gate-proxy-{pipeline}");
        cr_assert_str_eq(c.topic_blue, "{topic}.blue");
        cr_assert_str_eq(c.topic_green, "{topic}.green");
        cr_assert_str_eq(c.dlq_topic, "{pipeline}.dlq");
        cr_assert_eq(c.topics_create, false);
        cr_assert_eq(c.topics_replication, -1);
        cr_assert_eq(c.source_start, GP_START_EARLIEST);
        cr_assert_str_eq(c.event_time, "kafka-timestamp");
        cr_assert_eq(c.event_time_unit, GP_UNIT_MS);
        cr_assert_eq(c.bad_record, GP_BAD_DLQ);
        cr_assert_eq(c.late, GP_LATE_NEW);
        cr_assert_eq(c.out_of_orderness_ms, 1000);
        cr_assert_eq(c.idle_ms, 10000);
        cr_assert_eq(c.align_ms, 1);
        cr_assert_eq(c.lateness_ms, 0);
        cr_assert_eq(c.delivery, GP_DELIVERY_EOS);
        cr_assert_eq(c.commit_interval_ms, 100);
        cr_assert_eq(c.commit_records, 10000);
        cr_assert_eq(c.discovery_ms, 5000);
        cr_assert_eq(c.status_interval_ms, 1000);
        cr_assert_str_eq(c.log_level, "info");
        cr_assert_eq(c.n_kafka, 0);
        cr_assert_eq(c.n_topics, 0);
        gp_conf_destroy(&c);
}

/* A colour without a drain check is named, with the key that fixes it. */
Test(conf, drain_warning) {
        struct {
                const char *groups, *names; /* lines added to BASE; what the warning names */
        } t[] = {
                {"", "gate.drain.group.blue/.green unset"},
                {"gate.drain.group.blue=j-blue\n", "gate.drain.group.green unset"},
                {"gate.drain.group.green=j-green\n", "gate.drain.group.blue unset"},
                {"gate.drain.group.blue=j-blue\ngate.drain.group.green=j-green\n", NULL},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                gp_conf_t c;
                char text[1024], w[400];
                gp_err_t err;
                snprintf(text, sizeof text, "%s%s", BASE, t[i].groups);
                gp_conf_init(&c);
                cr_assert_eq(load_text(&c, text, &err), 0, "%s", err.msg);
                cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
                gp_conf_drain_warning(&c, w, sizeof w);
                if (t[i].names) {
                        cr_assert(strstr(w, t[i].names), "case %zu: %s", i, w);
                        cr_assert(strstr(w, "reads them again or never"), "case %zu: %s", i,
                                  w);
                } else {
                        cr_assert_str_empty(w, "case %zu: %s", i, w);
                }
                gp_conf_destroy(&c);
        }
}

Test(conf, minimal_file_finalizes_with_derived_defaults) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, BASE, &err), 0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        cr_assert_str_eq(c.transactional_id, "gate-proxy-orders-enrich");
        cr_assert_str_eq(c.group_id, "gate-proxy-orders-enrich");
        cr_assert_str_eq(c.dlq_topic, "orders-enrich.dlq");
        cr_assert_eq(c.n_topics, 1);
        cr_assert_str_eq(c.topics[0], "orders");
        /* Colour templates stay templates. */
        cr_assert_str_eq(c.topic_blue, "{topic}.blue");
        /* A second finalize changes nothing and leaks nothing. */
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        cr_assert_eq(c.n_topics, 1);
        cr_assert_str_eq(c.transactional_id, "gate-proxy-orders-enrich");
        gp_conf_destroy(&c);
}

Test(conf, every_key_set) {
        static const char text[] =
                "\xef\xbb\xbf# a full file, with a byte order mark and CRLF lines\r\n"
                "\r\n"
                "   gate.pipeline   =   pay.v2_x-1   \r\n"
                "gate.transactional.id=tx-{pipeline}-a\n"
                "gate.group.id = grp.{pipeline}\n"
                "gate.source.topics = payments , refunds,\tchargebacks \n"
                "gate.topic.blue={pipeline}.{topic}.b\n"
                "gate.topic.green={topic}-g\n"
                "gate.dlq.topic=dead.{pipeline}\n"
                "gate.topics.create=true\n"
                "gate.topics.replication.factor=3\n"
                "gate.source.start=latest\n"
                "gate.event-time=json:payload.ts\n"
                "gate.event-time.unit=us\n"
                "gate.bad-record=route-old\n"
                "gate.late=dlq\n"
                "\t# indented comment\n"
                "gate.watermark.out-of-orderness.ms=0\n"
                "gate.watermark.idle.ms=86400000\n"
                "gate.cutoff.align.ms=60000\n"
                "gate.lateness.ms=30000\n"
                "gate.delivery=at-least-once\n"
                "gate.commit.interval.ms=60000\n"
                "gate.commit.records=1\n"
                "gate.discovery.interval.ms=500\n"
                "gate.status.interval.ms=3600000\n"
                "control.file=/etc/gate proxy/bg=1.json\n"
                "log.level=debug\n"
                "kafka.bootstrap.servers=b1:9092,b2:9092\n"
                "kafka.sasl.password=a=b#c \n"
                "kafka.client.id=" /* last line without a newline, empty value */;
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, text, &err), 0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        cr_assert_str_eq(c.pipeline, "pay.v2_x-1");
        cr_assert_str_eq(c.transactional_id, "tx-pay.v2_x-1-a");
        cr_assert_str_eq(c.group_id, "grp.pay.v2_x-1");
        cr_assert_str_eq(c.source_topics_raw, "payments , refunds,\tchargebacks");
        cr_assert_eq(c.n_topics, 3);
        cr_assert_str_eq(c.topics[0], "payments");
        cr_assert_str_eq(c.topics[1], "refunds");
        cr_assert_str_eq(c.topics[2], "chargebacks");
        cr_assert_str_eq(c.topic_blue, "{pipeline}.{topic}.b");
        cr_assert_str_eq(c.topic_green, "{topic}-g");
        cr_assert_str_eq(c.dlq_topic, "dead.pay.v2_x-1");
        cr_assert_eq(c.topics_create, true);
        cr_assert_eq(c.topics_replication, 3);
        cr_assert_eq(c.source_start, GP_START_LATEST);
        cr_assert_str_eq(c.event_time, "json:payload.ts");
        cr_assert_eq(c.event_time_unit, GP_UNIT_US);
        cr_assert_eq(c.bad_record, GP_BAD_ROUTE_OLD);
        cr_assert_eq(c.late, GP_LATE_DLQ);
        cr_assert_eq(c.out_of_orderness_ms, 0);
        cr_assert_eq(c.idle_ms, 86400000);
        cr_assert_eq(c.align_ms, 60000);
        cr_assert_eq(c.lateness_ms, 30000);
        cr_assert_eq(c.delivery, GP_DELIVERY_ALO);
        cr_assert_eq(c.commit_interval_ms, 60000);
        cr_assert_eq(c.commit_records, 1);
        cr_assert_eq(c.discovery_ms, 500);
        cr_assert_eq(c.status_interval_ms, 3600000);
        cr_assert_str_eq(c.control_file, "/etc/gate proxy/bg=1.json");
        cr_assert_str_eq(c.log_level, "debug");
        cr_assert_eq(c.n_kafka, 3);
        cr_assert_str_eq(c.kafka[0].key, "bootstrap.servers");
        cr_assert_str_eq(c.kafka[0].value, "b1:9092,b2:9092");
        cr_assert_str_eq(c.kafka[1].key, "sasl.password");
        cr_assert_str_eq(c.kafka[1].value, "a=b#c");
        cr_assert_str_eq(c.kafka[2].key, "client.id");
        cr_assert_str_eq(c.kafka[2].value, "");
        char want[128];
        snprintf(want, sizeof want, "%s:30", tmp_path);
        cr_assert_str_eq(c.kafka[1].origin, want);

        char name[256];
        cr_assert_eq(gp_conf_topic_name(&c, c.topic_blue, c.topics[1], name, sizeof name), 0);
        cr_assert_str_eq(name, "pay.v2_x-1.refunds.b");
        cr_assert_eq(gp_conf_topic_name(&c, c.topic_green, c.topics[2], name, sizeof name), 0);
        cr_assert_str_eq(name, "chargebacks-g");
        gp_conf_destroy(&c);
}

/* Enum words and the value each one stores. */
Test(conf, enum_words) {
        static const struct {
                const char *key, *value;
                int want;
        } rows[] = {
                {"gate.source.start", "earliest", GP_START_EARLIEST},
                {"gate.source.start", "latest", GP_START_LATEST},
                {"gate.event-time.unit", "ms", GP_UNIT_MS},
                {"gate.event-time.unit", "s", GP_UNIT_S},
                {"gate.event-time.unit", "us", GP_UNIT_US},
                {"gate.bad-record", "dlq", GP_BAD_DLQ},
                {"gate.bad-record", "route-old", GP_BAD_ROUTE_OLD},
                {"gate.late", "new", GP_LATE_NEW},
                {"gate.late", "dlq", GP_LATE_DLQ},
                {"gate.delivery", "exactly-once", GP_DELIVERY_EOS},
                {"gate.delivery", "at-least-once", GP_DELIVERY_ALO},
        };
        gp_err_t err;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                gp_conf_t c;
                gp_conf_init(&c);
                /* Start from the other word, so the set must change it. */
                c.source_start = (gp_start_t)!rows[i].want;
                c.event_time_unit = (gp_unit_t)(rows[i].want == 0);
                c.bad_record = (gp_bad_policy_t)!rows[i].want;
                c.late = (gp_late_policy_t)!rows[i].want;
                c.delivery = (gp_delivery_t)!rows[i].want;
                cr_assert_eq(gp_conf_set(&c, rows[i].key, rows[i].value, "-X", &err), 0, "%s",
                             err.msg);
                int got = !strcmp(rows[i].key, "gate.source.start") ? (int)c.source_start
                          : !strcmp(rows[i].key, "gate.event-time.unit")
                                  ? (int)c.event_time_unit
                          : !strcmp(rows[i].key, "gate.bad-record") ? (int)c.bad_record
                          : !strcmp(rows[i].key, "gate.late")       ? (int)c.late
                                                                    : (int)c.delivery;
                cr_assert_eq(got, rows[i].want, "%s=%s", rows[i].key, rows[i].value);
                gp_conf_destroy(&c);
        }
}

Test(conf, event_time_forms) {
        static const char *const good[] = {"kafka-timestamp", "json:ts", "json:$.a.b[0].c",
                                           "header:event-time", "header:x"};
        gp_err_t err;
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
                gp_conf_t c;
                gp_conf_init(&c);
                cr_assert_eq(gp_conf_set(&c, "gate.event-time", good[i], "-X", &err), 0,
                             "%s: %s", good[i], err.msg);
                cr_assert_str_eq(c.event_time, good[i]);
                gp_conf_destroy(&c);
        }
}

/* ------------------------------------------------------------------ */
/* Bad lines: every kind, with the exact error                          */

Test(conf, bad_lines) {
        static const struct {
                const char *text;
                const char *want; /* after "<path>:" */
        } rows[] = {
                /* shape of the line */
                {"gate.pipeline\n", "1: gate.pipeline: expected key=value"},
                {"# comment\n\n  = orders\n", "3: = orders: expected key=value"},
                {"gate.pipeline=ok\nno equals here\n",
                 "2: no equals here: expected key=value"},
                {"gate.pipeline=a\r\ngate.delivery=x\r\n",
                 "2: gate.delivery: expected one of exactly-once, at-least-once"},
                /* the first error wins */
                {"gate.delivery=twice\ngate.pipeline=\n",
                 "1: gate.delivery: expected one of exactly-once, at-least-once"},
                /* enums */
                {"gate.delivery=\n",
                 "1: gate.delivery: expected one of exactly-once, at-least-once"},
                {"gate.delivery=Exactly-Once\n",
                 "1: gate.delivery: expected one of exactly-once, at-least-once"},
                {"gate.source.start=now",
                 "1: gate.source.start: expected one of earliest, latest"},
                {"gate.event-time.unit=ns",
                 "1: gate.event-time.unit: expected one of ms, s, us"},
                {"gate.bad-record=drop", "1: gate.bad-record: expected one of dlq, route-old"},
                {"gate.late=old", "1: gate.late: expected one of new, dlq"},
                {"log.level=trace", "1: log.level: expected one of error, warn, info, debug"},
                /* integers */
                {"gate.commit.interval.ms=10ms",
                 "1: gate.commit.interval.ms: expected an integer between 10 and 60000 ms"},
                {"gate.commit.interval.ms=+100",
                 "1: gate.commit.interval.ms: expected an integer between 10 and 60000 ms"},
                {"gate.commit.interval.ms=0100",
                 "1: gate.commit.interval.ms: expected an integer between 10 and 60000 ms"},
                {"gate.commit.interval.ms=1e3",
                 "1: gate.commit.interval.ms: expected an integer between 10 and 60000 ms"},
                {"gate.commit.interval.ms=1 00",
                 "1: gate.commit.interval.ms: expected an integer between 10 and 60000 ms"},
                {"gate.commit.interval.ms=",
                 "1: gate.commit.interval.ms: expected an integer between 10 and 60000 ms"},
                {"gate.commit.records=99999999999999999999",
                 "1: gate.commit.records: expected an integer between 1 and 1000000"},
                {"gate.topics.replication.factor=0",
                 "1: gate.topics.replication.factor: expected -1 (broker default) or an "
                 "integer "
                 "between 1 and 32"},
                /* booleans */
                {"gate.topics.create=yes", "1: gate.topics.create: expected true or false"},
                /* strings */
                {"gate.pipeline=a b",
                 "1: gate.pipeline: expected 1 to 100 characters from A-Z a-z 0-9 . _ -"},
                {"gate.pipeline=",
                 "1: gate.pipeline: expected 1 to 100 characters from A-Z a-z 0-9 . _ -"},
                {"gate.pipeline=\"orders\"", "1: gate.pipeline: expected 1 to 100 characters "
                                             "from A-Z a-z 0-9 . _ - (write "
                                             "values without quotes)"},
                {"gate.pipeline="
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                 "1: gate.pipeline: expected 1 to 100 characters from A-Z a-z 0-9 . _ -"},
                {"gate.source.topics=",
                 "1: gate.source.topics: expected a comma-separated list "
                 "of topic names, e.g. orders,payments"},
                {"gate.source.topics=a,,b",
                 "1: gate.source.topics: empty topic name in the list"},
                {"gate.source.topics=a,",
                 "1: gate.source.topics: empty topic name in the list"},
                {"gate.source.topics=a, b ,a", "1: gate.source.topics: \"a\" is listed twice"},
                {"gate.source.topics=a/b",
                 "1: gate.source.topics: \"a/b\" is not a valid topic "
                 "name (1 to 249 characters from A-Z a-z 0-9 . _ -)"},
                {"gate.source.topics=..", "1: gate.source.topics: \"..\" is not a valid topic "
                                          "name (1 to 249 characters from A-Z a-z 0-9 . _ -)"},
                {"gate.topic.blue=blue", "1: gate.topic.blue: expected a template containing "
                                         "{topic}, e.g. {topic}.blue"},
                {"gate.topic.blue=", "1: gate.topic.blue: expected a template containing "
                                     "{topic}, e.g. {topic}.blue"},
                {"gate.topic.blue={topik}.b", "1: gate.topic.blue: unknown placeholder "
                                              "{topik}; allowed: {topic}, {pipeline}"},
                {"gate.topic.green={topic}/g",
                 "1: gate.topic.green: '/' is not allowed; expected "
                 "A-Z a-z 0-9 . _ - and placeholders"},
                {"gate.dlq.topic={topic}.dlq",
                 "1: gate.dlq.topic: {topic} is not allowed: there "
                 "is one dead-letter topic per pipeline"},
                {"gate.dlq.topic=",
                 "1: gate.dlq.topic: expected a topic name, e.g. {pipeline}.dlq"},
                {"gate.transactional.id=a b", "1: gate.transactional.id: ' ' is not allowed; "
                                              "expected printable characters without spaces"},
                {"gate.group.id={group}", "1: gate.group.id: unknown placeholder {group}; "
                                          "allowed: {pipeline}"},
                {"gate.event-time=json:",
                 "1: gate.event-time: expected a JSON path after json:, e.g. json:payload.ts"},
                {"gate.event-time=header:",
                 "1: gate.event-time: expected a header name after header:, e.g. "
                 "header:event-time"},
                {"gate.event-time=ts",
                 "1: gate.event-time: expected kafka-timestamp, json:PATH, header:NAME or "
                 "avro:PATH"},
                {"control.file=", "1: control.file: expected a file path"},
                /* kafka.* */
                {"kafka.=x", "1: kafka.: expected a librdkafka property after kafka., e.g. "
                             "kafka.bootstrap.servers"},
                {"kafka.transactional.id=x",
                 "1: kafka.transactional.id: set by gate-proxy; use gate.transactional.id"},
                {"kafka.group.id=x",
                 "1: kafka.group.id: set by gate-proxy; use gate.group.id"},
                {"kafka.enable.auto.commit=true",
                 "1: kafka.enable.auto.commit: set by gate-proxy "
                 "(false): offsets are committed inside each "
                 "transaction"},
                {"kafka.isolation.level=read_uncommitted",
                 "1: kafka.isolation.level: set by gate-proxy (read_committed)"},
                {"kafka.auto.offset.reset=latest",
                 "1: kafka.auto.offset.reset: set by gate-proxy; use gate.source.start"},
                {"http.listen=9464",
                 "1: http.listen: expected HOST:PORT, e.g. 0.0.0.0:9464 or 127.0.0.1:9464"},
                {"http.listen=[::1]:9464", "1: http.listen: expected HOST:PORT with an IPv4 "
                                           "address or a host name, e.g. "
                                           "0.0.0.0:9464"},
                {"log.format=yaml", "1: log.format: expected one of text, json"},
                /* the same for one client */
                {"kafka.consumer.isolation.level=read_uncommitted",
                 "1: kafka.consumer.isolation.level: set by gate-proxy (read_committed)"},
                {"kafka.producer.transactional.id=x",
                 "1: kafka.producer.transactional.id: set by gate-proxy; use "
                 "gate.transactional.id"},
                {"kafka.consumer.enable.auto.commit=true",
                 "1: kafka.consumer.enable.auto.commit: set by gate-proxy (false): offsets "
                 "are "
                 "committed inside each transaction"},
                {"kafka.producer.enable.idempotence=false",
                 "1: kafka.producer.enable.idempotence: set by gate-proxy (true): "
                 "transactions "
                 "and ordered retries need it"},
                /* librdkafka's refusal, on the user's line and key */
                {"# x\nkafka.acks=maybe",
                 "2: kafka.acks: Invalid value for configuration property "
                 "\"request.required.acks\""},
                {"kafka.no.such.property=1",
                 "1: kafka.no.such.property: No such configuration property: "
                 "\"no.such.property\""},
                /* unknown keys */
                {"# x\ngate.event_time=json:ts",
                 "2: gate.event_time: unknown key; did you mean gate.event-time?"},
                {"bootstrap.servers=b:9092", "1: bootstrap.servers: unknown key (librdkafka "
                                             "properties are written kafka.<property>)"},
        };
        char want[ERRLEN];
        gp_err_t err;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                gp_conf_t c;
                gp_conf_init(&c);
                cr_assert_eq(load_text(&c, rows[i].text, &err), GP_ERR_INVALID,
                             "row %zu: \"%s\" loaded", i, rows[i].text);
                snprintf(want, sizeof want, "%s:%s", tmp_path, rows[i].want);
                cr_assert_str_eq(err.msg, want, "row %zu: %s", i, err.msg);
                gp_conf_destroy(&c);
        }
}

Test(conf, too_many_topics) {
        char list[GP_CONF_MAX_TOPICS * 8 + 16];
        gp_err_t err;
        size_t o = 0;
        gp_conf_t c;
        for (int i = 0; i <= GP_CONF_MAX_TOPICS; i++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%st%d", i ? "," : "", i);
        gp_conf_init(&c);
        cr_assert_eq(gp_conf_set(&c, "gate.source.topics", list, "-X", &err), GP_ERR_INVALID);
        cr_assert_str_eq(err.msg, "-X: gate.source.topics: more than 64 topics");
        /* Exactly the maximum is fine. */
        *strrchr(list, ',') = '\0';
        cr_assert_eq(gp_conf_set(&c, "gate.source.topics", list, "-X", &err), 0, "%s",
                     err.msg);
        gp_conf_destroy(&c);
}

/* min-1 and max+1 fail with the exact reason; min and max are stored. */
Test(conf, integer_bounds) {
        static const struct {
                const char *key;
                long long min, max;
                const char *reason;
        } rows[] = {
                {"gate.topics.replication.factor", 1, 32,
                 "expected -1 (broker default) or an integer between 1 and 32"},
                {"gate.watermark.out-of-orderness.ms", 0, 86400000,
                 "expected an integer between 0 and 86400000 ms"},
                {"gate.watermark.idle.ms", 100, 86400000,
                 "expected an integer between 100 and 86400000 ms"},
                {"gate.cutoff.align.ms", 1, 86400000,
                 "expected an integer between 1 and 86400000 ms"},
                {"gate.lateness.ms", 0, 86400000,
                 "expected an integer between 0 and 86400000 ms"},
                {"gate.commit.interval.ms", 10, 60000,
                 "expected an integer between 10 and 60000 ms"},
                {"gate.commit.records", 1, 1000000,
                 "expected an integer between 1 and 1000000"},
                {"gate.discovery.interval.ms", 500, 3600000,
                 "expected an integer between 500 and 3600000 ms"},
                {"gate.status.interval.ms", 1000, 3600000,
                 "expected an integer between 1000 and 3600000 ms"},
        };
        char want[ERRLEN], v[32];
        gp_err_t err;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                const long long bad[2] = {rows[i].min - 1, rows[i].max + 1};
                const long long good[2] = {rows[i].min, rows[i].max};
                gp_conf_t c;
                gp_conf_init(&c);
                for (int k = 0; k < 2; k++) {
                        snprintf(v, sizeof v, "%lld", bad[k]);
                        cr_assert_eq(gp_conf_set(&c, rows[i].key, v, "-X", &err),
                                     GP_ERR_INVALID, "%s=%s accepted", rows[i].key, v);
                        snprintf(want, sizeof want, "-X: %s: %s", rows[i].key, rows[i].reason);
                        cr_assert_str_eq(err.msg, want);
                }
                for (int k = 0; k < 2; k++) {
                        snprintf(v, sizeof v, "%lld", good[k]);
                        cr_assert_eq(gp_conf_set(&c, rows[i].key, v, "-X", &err), 0,
                                     "%s=%s: %s", rows[i].key, v, err.msg);
                        long long got =
                                !strcmp(rows[i].key, "gate.topics.replication.factor")
                                        ? c.topics_replication
                                : !strcmp(rows[i].key, "gate.watermark.out-of-orderness.ms")
                                        ? c.out_of_orderness_ms
                                : !strcmp(rows[i].key, "gate.watermark.idle.ms") ? c.idle_ms
                                : !strcmp(rows[i].key, "gate.cutoff.align.ms")   ? c.align_ms
                                : !strcmp(rows[i].key, "gate.lateness.ms") ? c.lateness_ms
                                : !strcmp(rows[i].key, "gate.commit.interval.ms")
                                        ? c.commit_interval_ms
                                : !strcmp(rows[i].key, "gate.commit.records")
                                        ? c.commit_records
                                : !strcmp(rows[i].key, "gate.discovery.interval.ms")
                                        ? c.discovery_ms
                                        : c.status_interval_ms;
                        cr_assert_eq(got, good[k], "%s=%s stored %lld", rows[i].key, v, got);
                }
                gp_conf_destroy(&c);
        }
}

Test(conf, replication_factor_minus_one) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        c.topics_replication = 3;
        cr_assert_eq(gp_conf_set(&c, "gate.topics.replication.factor", "-1", "-X", &err), 0,
                     "%s", err.msg);
        cr_assert_eq(c.topics_replication, -1);
        cr_assert_eq(gp_conf_set(&c, "gate.topics.replication.factor", "-2", "-X", &err),
                     GP_ERR_INVALID);
        gp_conf_destroy(&c);
}

Test(conf, boolean_words) {
        static const struct {
                const char *value;
                int want; /* 1 true, 0 false, -1 refused */
        } rows[] = {
                {"true", 1}, {"false", 0}, {"TRUE", -1},  {"True", -1},
                {"1", -1},   {"0", -1},    {"yes", -1},   {"no", -1},
                {"on", -1},  {"", -1},     {"true ", -1}, /* gp_conf_set does not trim; only file lines are trimmed */
        };
        gp_err_t err;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                gp_conf_t c;
                gp_conf_init(&c);
                c.topics_create = rows[i].want != 1;
                int rc = gp_conf_set(&c, "gate.topics.create", rows[i].value, "-X", &err);
                if (rows[i].want < 0) {
                        cr_assert_eq(rc, GP_ERR_INVALID, "\"%s\" accepted", rows[i].value);
                        cr_assert_str_eq(err.msg,
                                         "-X: gate.topics.create: expected true or false");
                } else {
                        cr_assert_eq(rc, 0, "\"%s\": %s", rows[i].value, err.msg);
                        cr_assert_eq(c.topics_create, rows[i].want == 1, "\"%s\"",
                                     rows[i].value);
                }
                gp_conf_destroy(&c);
        }
}

Test(conf, unknown_key_suggestions) {
        static const struct {
                const char *key, *want;
        } rows[] = {
                {"gate.event_time",
                 "-X: gate.event_time: unknown key; did you mean gate.event-time?"},
                {"gate.pipelin", "-X: gate.pipelin: unknown key; did you mean gate.pipeline?"},
                {"gate.delivry", "-X: gate.delivry: unknown key; did you mean gate.delivery?"},
                {"log.levle", "-X: log.levle: unknown key; did you mean log.level?"},
                {"control.files",
                 "-X: control.files: unknown key; did you mean control.file?"},
                {"GATE.PIPELINE",
                 "-X: GATE.PIPELINE: unknown key; did you mean gate.pipeline?"},
                {"gate.lateness",
                 "-X: gate.lateness: unknown key; did you mean gate.lateness.ms?"},
                {"gate.commit.interval", "-X: gate.commit.interval: unknown key; did you mean "
                                         "gate.commit.interval.ms?"},
                {"gate.late.policy",
                 "-X: gate.late.policy: unknown key; did you mean gate.late?"},
                {"gate.watermark.idle",
                 "-X: gate.watermark.idle: unknown key; did you mean gate.watermark.idle.ms?"},
                {"gate.nothing.like.this", "-X: gate.nothing.like.this: unknown key; "
                                           "gate-proxy --list-config lists every "
                                           "key"},
                {"gate.", "-X: gate.: unknown key; gate-proxy --list-config lists every key"},
                {"gate.\x01\xff", "-X: gate.\\x01\\xff: unknown key; gate-proxy --list-config "
                                  "lists every key"},
                {"acks", "-X: acks: unknown key (librdkafka properties are written "
                         "kafka.<property>)"},
        };
        gp_err_t err;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                gp_conf_t c;
                gp_conf_init(&c);
                cr_assert_eq(gp_conf_set(&c, rows[i].key, "1", "-X", &err), GP_ERR_INVALID);
                cr_assert_str_eq(err.msg, rows[i].want);
                gp_conf_destroy(&c);
        }
}

/* ------------------------------------------------------------------ */
/* Limits of the file reader                                           */

Test(conf, line_length_limit) {
        size_t n = strlen("kafka.x=") + (GP_CONF_MAX_LINE - strlen("kafka.x="));
        char *text = malloc(2 * (GP_CONF_MAX_LINE + 2) + 32);
        char want[ERRLEN];
        gp_err_t err;
        gp_conf_t c;
        cr_assert_not_null(text);
        /* Line 1: exactly the limit; line 2: one byte more. */
        memcpy(text, "kafka.client.id=", 16);
        memset(text + 16, 'v', n - 16);
        text[n] = '\n';
        memcpy(text + n + 1, "kafka.y=", 8);
        memset(text + n + 9, 'v', n - 7);
        text[2 * n + 2] = '\n';
        text[2 * n + 3] = '\0';
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, text, &err), GP_ERR_INVALID);
        snprintf(want, sizeof want, "%s:2: line is longer than 16384 bytes", tmp_path);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(c.n_kafka, 1);
        cr_assert_eq(strlen(c.kafka[0].value), GP_CONF_MAX_LINE - 16);
        gp_conf_destroy(&c);
        free(text);
}

Test(conf, file_size_limit) {
        size_t max = GP_CONF_MAX_FILE;
        char *text = malloc(max + 2);
        char want[ERRLEN];
        gp_err_t err;
        gp_conf_t c;
        cr_assert_not_null(text);
        /* Comment lines up to exactly 1 MiB: accepted. */
        for (size_t i = 0; i < max; i += 64) {
                memset(text + i, '#', 63);
                text[i + 63] = '\n';
        }
        text[max] = '\0';
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, text, &err), 0, "%s", err.msg);
        /* One byte more: refused before any line is read. */
        text[max] = '#';
        text[max + 1] = '\0';
        cr_assert_eq(load_text(&c, text, &err), GP_ERR_INVALID);
        snprintf(want, sizeof want, "%s: file is larger than 1 MiB (1048576 bytes)", tmp_path);
        cr_assert_str_eq(err.msg, want);
        gp_conf_destroy(&c);
        free(text);
}

Test(conf, missing_file_and_directory) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(gp_conf_load_file(&c, "/nonexistent/gate-proxy.conf", &err), GP_ERR_IO);
        cr_assert_str_eq(err.msg, "/nonexistent/gate-proxy.conf: cannot open: No such file or "
                                  "directory");
        cr_assert_eq(gp_conf_load_file(&c, "/", &err), GP_ERR_IO);
        cr_assert_str_eq(err.msg, "/: cannot read: Is a directory");
        gp_conf_destroy(&c);
}

Test(conf, buffer_nul_byte_and_name) {
        static const char buf[] = "gate.pipeline=a\n# fine\ngate.late=n\0ew\n";
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(gp_conf_load_buffer(&c, "mem", buf, sizeof buf - 1, &err),
                     GP_ERR_INVALID);
        cr_assert_str_eq(err.msg, "mem:3: line contains a NUL byte");
        cr_assert_str_eq(c.pipeline, "a");
        /* An empty buffer and one without a final newline are fine. */
        cr_assert_eq(gp_conf_load_buffer(&c, "mem", "", 0, &err), 0);
        cr_assert_eq(gp_conf_load_buffer(&c, "mem", "gate.late=dlqXX", 13, &err), 0, "%s",
                     err.msg);
        cr_assert_eq(c.late, GP_LATE_DLQ);
        gp_conf_destroy(&c);
}

Test(conf, error_code_or_no_error_wanted) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(gp_conf_set(&c, "gate.delivery", "x", "-X", &err), GP_ERR_INVALID);
        cr_assert_eq(err.code, GP_ERR_INVALID);
        cr_assert_eq(gp_conf_set(&c, "gate.delivery", "x", "-X", NULL), GP_ERR_INVALID);
        gp_conf_destroy(&c);
}

/* ------------------------------------------------------------------ */
/* -X overrides and kafka.* passthrough                                 */

Test(conf, override_wins_over_file) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, BASE "gate.commit.interval.ms=200\ngate.late=dlq\n", &err),
                     0, "%s", err.msg);
        cr_assert_eq(c.commit_interval_ms, 200);
        cr_assert_eq(gp_conf_set(&c, "gate.commit.interval.ms", "300", "-X", &err), 0);
        cr_assert_eq(gp_conf_set(&c, "gate.pipeline", "other", "-X", &err), 0);
        cr_assert_eq(c.commit_interval_ms, 300);
        cr_assert_eq(c.late, GP_LATE_DLQ); /* not overridden: from the file */
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        cr_assert_str_eq(c.transactional_id, "gate-proxy-other");
        /* A refused override leaves the value from the file. */
        cr_assert_eq(gp_conf_set(&c, "gate.commit.interval.ms", "5", "-X", &err),
                     GP_ERR_INVALID);
        cr_assert_str_eq(err.msg,
                         "-X: gate.commit.interval.ms: expected an integer between 10 and "
                         "60000 ms");
        cr_assert_eq(c.commit_interval_ms, 300);
        gp_conf_destroy(&c);
}

Test(conf, kafka_passthrough_order_and_override) {
        gp_conf_t c;
        char want[ERRLEN];
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c,
                               "kafka.client.id=1\n"
                               "kafka.linger.ms=2\n"
                               "kafka.client.id=3\n"
                               "kafka.security.protocol = SASL_SSL\n",
                               &err),
                     0, "%s", err.msg);
        cr_assert_eq(gp_conf_set(&c, "kafka.linger.ms", "4", "-X", &err), 0);
        cr_assert_eq(gp_conf_set(&c, "kafka.producer.batch.size", "5", "-X", &err), 0);
        cr_assert_eq(c.n_kafka, 4);
        static const char *const keys[] = {"client.id", "linger.ms", "security.protocol",
                                           "producer.batch.size"};
        static const char *const vals[] = {"3", "4", "SASL_SSL", "5"};
        for (int i = 0; i < 4; i++) {
                cr_assert_str_eq(c.kafka[i].key, keys[i]);
                cr_assert_str_eq(c.kafka[i].value, vals[i]);
        }
        snprintf(want, sizeof want, "%s:3", tmp_path);
        cr_assert_str_eq(c.kafka[0].origin, want);
        cr_assert_str_eq(c.kafka[1].origin, "-X");
        gp_conf_destroy(&c);
}

/* ------------------------------------------------------------------ */
/* finalize                                                            */

static void push_kafka(gp_conf_t *c, const char *k, const char *v) {
        c->kafka = realloc(c->kafka, (size_t)(c->n_kafka + 1) * sizeof *c->kafka);
        cr_assert_not_null(c->kafka);
        c->kafka[c->n_kafka].key = strdup(k);
        c->kafka[c->n_kafka].value = strdup(v);
        c->kafka[c->n_kafka].origin = strdup("test");
        c->n_kafka++;
}

static void set_raw(char **slot, const char *v) {
        free(*slot);
        *slot = strdup(v);
}

/* Direct assignments that gp_conf_set would refuse: finalize must catch
 * them too, because it is the last check before the values are used. */
static void mut_blue_without_topic(gp_conf_t *c) {
        set_raw(&c->topic_blue, "blue");
}
static void mut_reserved_kafka(gp_conf_t *c) {
        push_kafka(c, "isolation.level", "read_uncommitted");
}
static void mut_bad_pipeline(gp_conf_t *c) {
        set_raw(&c->pipeline, "a/b");
}

Test(conf, finalize_errors) {
        static const struct {
                const char *text;
                void (*mutate)(gp_conf_t *);
                const char *want;
        } rows[] = {
                {"gate.source.topics=o\nkafka.bootstrap.servers=b\ncontrol.file=f\n", NULL,
                 "a required key is not set; for example:\n  gate.pipeline=orders-enrich"},
                {"gate.pipeline=p\nkafka.bootstrap.servers=b\ncontrol.file=f\n", NULL,
                 "a required key is not set; for example:\n  gate.source.topics=orders"},
                {"gate.pipeline=p\ngate.source.topics=o\ncontrol.file=f\n", NULL,
                 "a required key is not set; for example:\n  "
                 "kafka.bootstrap.servers=localhost:9092"},
                {"gate.pipeline=p\ngate.source.topics=o\ncontrol.file=f\n"
                 "kafka.bootstrap.servers=\n",
                 NULL,
                 "a required key is not set; for example:\n  "
                 "kafka.bootstrap.servers=localhost:9092"},
                /* an empty file: every one at once */
                {"", NULL,
                 "required keys are not set; for example:\n  gate.pipeline=orders-enrich\n  "
                 "gate.source.topics=orders\n  kafka.bootstrap.servers=localhost:9092"},
                {"gate.pipeline=p\ngate.source.topics=o\nkafka.bootstrap.servers=b\n", NULL,
                 "control.file or control.k8s.configmap: one is required (e.g. "
                 "control.file=/var/lib/gate-proxy/bluegreen.json, or "
                 "control.k8s.configmap=orders-configmap)"},
                {BASE "control.k8s.configmap=bg\n", NULL,
                 "@5: control.k8s.configmap: control.file is set too (@4); set only one of "
                 "them"},
                {BASE "control.k8s.namespace=flink\n", NULL,
                 "@5: control.k8s.namespace: needs control.k8s.configmap (the map is in "
                 "control.file)"},
                {BASE "control.k8s.kubeconfig=/k\n", NULL,
                 "@5: control.k8s.kubeconfig: needs control.k8s.configmap (the map is in "
                 "control.file)"},
                {BASE, mut_blue_without_topic,
                 "gate.topic.blue: expected a template containing {topic}, e.g. {topic}.blue"},
                {BASE "gate.topic.blue={topic}.x\ngate.topic.green={topic}.x\n", NULL,
                 "gate.topic.green: same as gate.topic.blue (\"{topic}.x\"); blue and green "
                 "need "
                 "different topics"},
                {BASE, mut_reserved_kafka,
                 "test: kafka.isolation.level: set by gate-proxy (read_committed)"},
                {BASE, mut_bad_pipeline,
                 "gate.pipeline: expected 1 to 100 characters from A-Z a-z 0-9 . _ -"},
                /* names that clash */
                {BASE "gate.source.topics=orders,orders.blue\n", NULL,
                 "gate.topic.blue: \"orders.blue\" (for orders) is also a source topic"},
                {BASE "gate.topic.green={topic}\n", NULL,
                 "gate.topic.green: \"orders\" (for orders) is also a source topic"},
                {BASE "gate.dlq.topic=orders.green\n", NULL,
                 "gate.dlq.topic: \"orders.green\" is also the green topic of orders"},
                {BASE "gate.dlq.topic=orders\n", NULL,
                 "gate.dlq.topic: \"orders\" is also a source topic"},
                {BASE "gate.source.topics=a,a.b\ngate.topic.blue={topic}.b.g\n"
                      "gate.topic.green={topic}.g\n",
                 NULL, "gate.topic.green: \"a.b.g\" (for a.b) is also the blue topic of a"},
                {BASE "gate.dlq.topic=.\n", NULL,
                 "gate.dlq.topic: \".\" is not a valid topic name"},
                {BASE
                 "gate.transactional.id={pipeline}{pipeline}{pipeline}\n"
                 "gate.pipeline=ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
                 "ppppppppppppppppppppppppppppppppppppppppp\n",
                 NULL,
                 "gate.transactional.id: longer than 249 characters once {pipeline} is "
                 "replaced"},
        };
        char want[ERRLEN];
        gp_err_t err;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                gp_conf_t c;
                gp_conf_init(&c);
                cr_assert_eq(load_text(&c, rows[i].text, &err), 0, "row %zu: %s", i, err.msg);
                if (rows[i].mutate)
                        rows[i].mutate(&c);
                err.msg[0] = '\0';
                cr_assert_eq(gp_conf_finalize(&c, &err), GP_ERR_INVALID, "row %zu finalized",
                             i);
                /* "@N" in want: line N of the file */
                size_t o = 0;
                for (const char *w = rows[i].want; *w && o < sizeof want - 1; w++) {
                        if (*w == '@' && w[1] >= '0' && w[1] <= '9')
                                o += (size_t)snprintf(want + o, sizeof want - o,
                                                      "%s:", tmp_path);
                        else
                                want[o++] = *w;
                }
                want[o] = '\0';
                cr_assert_str_eq(err.msg, want, "row %zu: %s", i, err.msg);
                gp_conf_destroy(&c);
        }
}

/* A conf whose init ran out of memory is refused by finalize, with the
 * code, for a caller that did not look at gp_conf_init's result. */
Test(conf, finalize_after_failed_init) {
        gp_err_t err;
        gp_conf_t c;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, BASE, &err), GP_OK, "%s", err.msg);
        c.init_rc = GP_ERR_NOMEM;
        c.init_key = "gate.event-time";
        cr_assert_eq(gp_conf_finalize(&c, &err), GP_ERR_NOMEM);
        cr_assert_eq(err.code, GP_ERR_NOMEM);
        cr_assert_str_eq(err.msg, "gate.event-time: out of memory");
        gp_conf_destroy(&c);
}

Test(conf, finalize_colour_name_too_long) {
        char topic[250], text[600], want[ERRLEN];
        gp_err_t err;
        gp_conf_t c;
        memset(topic, 't', 245); /* 245 + ".blue" = 250 > 249 */
        topic[245] = '\0';
        snprintf(text, sizeof text, BASE "gate.source.topics=%s\n", topic);
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, text, &err), 0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), GP_ERR_INVALID);
        snprintf(want, sizeof want,
                 "gate.topic.blue: the name for topic %s is longer than 249 characters",
                 topic);
        cr_assert_str_eq(err.msg, want);
        gp_conf_destroy(&c);
}

Test(conf, finalize_accepts_metadata_broker_list) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c,
                               "gate.pipeline=p\ngate.source.topics=o\ncontrol.file=f\n"
                               "kafka.metadata.broker.list=b:9092\n",
                               &err),
                     0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        gp_conf_destroy(&c);
}

Test(conf, finalize_k8s_control) {
        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_null(c.k8s_configmap);
        cr_assert_null(c.k8s_namespace);
        cr_assert_null(c.k8s_kubeconfig);
        cr_assert_eq(load_text(&c,
                               "gate.pipeline=p\ngate.source.topics=o\n"
                               "kafka.bootstrap.servers=b:9092\n"
                               "control.k8s.configmap=orders-bluegreen-configmap\n"
                               "control.k8s.namespace=flink\n"
                               "control.k8s.kubeconfig=/etc/gate-proxy/kubeconfig\n",
                               &err),
                     0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        cr_assert_null(c.control_file);
        cr_assert_str_eq(c.k8s_configmap, "orders-bluegreen-configmap");
        cr_assert_str_eq(c.k8s_namespace, "flink");
        cr_assert_str_eq(c.k8s_kubeconfig, "/etc/gate-proxy/kubeconfig");
        gp_conf_destroy(&c);

        /* Only the ConfigMap: namespace and kubeconfig have their defaults. */
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c,
                               "gate.pipeline=p\ngate.source.topics=o\n"
                               "kafka.bootstrap.servers=b:9092\ncontrol.k8s.configmap=bg\n",
                               &err),
                     0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        gp_conf_destroy(&c);

        static const struct {
                const char *line, *want;
        } bad[] = {
                {"control.k8s.configmap=Orders",
                 "control.k8s.configmap: expected a ConfigMap "
                 "name: lower-case letters, digits, '-' and '.', at most 253, e.g. "
                 "orders-configmap"},
                {"control.k8s.configmap=a/b",
                 "control.k8s.configmap: expected a ConfigMap "
                 "name: lower-case letters, digits, '-' and '.', at most 253, e.g. "
                 "orders-configmap"},
                {"control.k8s.namespace=a.b",
                 "control.k8s.namespace: expected a namespace "
                 "name: lower-case letters, digits and '-', at most 63"},
                {"control.k8s.kubeconfig=", "control.k8s.kubeconfig: expected a file path"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                gp_conf_init(&c);
                cr_assert_eq(load_text(&c, bad[i].line, &err), GP_ERR_INVALID, "%s",
                             bad[i].line);
                cr_assert(strstr(err.msg, bad[i].want), "%s: %s", bad[i].line, err.msg);
                gp_conf_destroy(&c);
        }
}

Test(conf, topic_name_templates) {
        gp_conf_t c;
        char buf[32];
        gp_conf_init(&c);
        c.pipeline = strdup("pipe");
        cr_assert_eq(gp_conf_topic_name(&c, "{topic}.blue", "orders", buf, sizeof buf), 0);
        cr_assert_str_eq(buf, "orders.blue");
        cr_assert_eq(
                gp_conf_topic_name(&c, "{pipeline}-{topic}-{topic}", "a", buf, sizeof buf), 0);
        cr_assert_str_eq(buf, "pipe-a-a");
        cr_assert_eq(gp_conf_topic_name(&c, "{pipeline}.dlq", NULL, buf, sizeof buf), 0);
        cr_assert_str_eq(buf, "pipe.dlq");
        /* Exactly fits: 11 characters and the NUL in 12 bytes. */
        cr_assert_eq(gp_conf_topic_name(&c, "{topic}.blue", "orders", buf, 12), 0);
        cr_assert_eq(gp_conf_topic_name(&c, "{topic}.blue", "orders", buf, 11),
                     GP_ERR_INVALID);
        cr_assert_str_eq(buf, "");
        cr_assert_eq(gp_conf_topic_name(&c, "x{topic}", "orders", buf, 7), GP_ERR_INVALID);
        cr_assert_eq(gp_conf_topic_name(&c, "{topic}.blue", NULL, buf, sizeof buf),
                     GP_ERR_INVALID);
        free(c.pipeline);
        c.pipeline = NULL;
        cr_assert_eq(gp_conf_topic_name(&c, "{pipeline}.dlq", NULL, buf, sizeof buf),
                     GP_ERR_INVALID);
        gp_conf_destroy(&c);
}

Test(conf, destroy_zeroed_and_null) {
        gp_conf_t c;
        memset(&c, 0, sizeof c);
        gp_conf_destroy(&c);
        gp_conf_destroy(NULL);
        gp_conf_init(&c);
        gp_conf_destroy(&c);
        gp_conf_destroy(&c); /* destroy leaves a zeroed conf */
}

/* ------------------------------------------------------------------ */
/* Generated documents                                                 */
/* One table of the librdkafka keys gate-proxy decides: the forced rows,
 * then the bounded defaults gp_bounded_defaults points at; what a
 * configuration makes of the forced ones; every refused key refused. */
Test(conf, kafka_keys_table) {
        const gp_kafka_key_t *k = gp_kafka_keys;
        for (; k < gp_bounded_defaults; k++)
                cr_assert_eq(k->kind, GP_KAFKA_FORCED, "%s", k->key);
        for (; k->key; k++)
                cr_assert_eq(k->kind, GP_KAFKA_BOUNDED, "%s", k->key);
        cr_assert_gt(k - gp_bounded_defaults, 0);

        gp_conf_t c;
        gp_err_t err;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c,
                               "gate.pipeline=p\ngate.source.topics=t\n"
                               "control.file=/tmp/x.json\nkafka.bootstrap.servers=b:9092\n"
                               "gate.source.start=latest\n",
                               &err),
                     GP_OK, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), GP_OK, "%s", err.msg);
        static const char *const want[][3] = {
                {"producer", "enable.idempotence", "true"},
                {"producer", "allow.auto.create.topics", "false"},
                {"producer", "transactional.id", "gate-proxy-p"},
                {"consumer", "group.id", "gate-proxy-p"},
                {"consumer", "enable.auto.commit", "false"},
                {"consumer", "enable.auto.offset.store", "false"},
                {"consumer", "isolation.level", "read_committed"},
                {"consumer", "auto.offset.reset", "latest"},
        };
        size_t n = 0;
        for (k = gp_kafka_keys; k->key; k++) {
                const char *pv = gp_kafka_forced(k, &c, "producer");
                const char *cv = gp_kafka_forced(k, &c, "consumer");
                cr_assert(!pv || !cv, "%s forced on both", k->key);
                if (!pv && !cv)
                        continue;
                size_t i = 0;
                while (i < 8 && strcmp(want[i][1], k->key))
                        i++;
                cr_assert_lt(i, 8, "%s is forced", k->key);
                cr_assert_str_eq(want[i][0], pv ? "producer" : "consumer", "%s", k->key);
                cr_assert_str_eq(want[i][2], pv ? pv : cv, "%s", k->key);
                n++;
        }
        cr_assert_eq(n, 8);
        c.delivery = GP_DELIVERY_ALO; /* no transactions, no transactional.id */
        for (k = gp_kafka_keys; k->key; k++)
                if (!strcmp(k->key, "transactional.id"))
                        cr_assert_null(gp_kafka_forced(k, &c, "producer"));
        for (k = gp_kafka_keys; k->key; k++) {
                char key[128];
                if (!k->refused)
                        continue;
                snprintf(key, sizeof key, "kafka.%s.%s", k->role, k->key);
                cr_assert_eq(gp_conf_set(&c, key, "x", "-X", &err), GP_ERR_INVALID, "%s", key);
                cr_assert(strstr(err.msg, k->refused), "%s", err.msg);
        }
        gp_conf_destroy(&c);
}

static char *capture(void (*writer)(FILE *)) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        writer(f);
        fclose(f);
        return buf;
}

Test(conf, markdown_lists_every_key) {
        char *md = capture(gp_conf_write_markdown);
        char needle[128];
        cr_assert_gt(gp_conf_n_keys(), 20);
        cr_assert_null(gp_conf_key_name(gp_conf_n_keys()));
        cr_assert_eq(strncmp(md, "# gate-proxy configuration\n", 27), 0);
        for (size_t i = 0; i < gp_conf_n_keys(); i++) {
                const char *k = gp_conf_key_name(i);
                snprintf(needle, sizeof needle, "\n### `%s`\n", k);
                cr_assert_not_null(strstr(md, needle), "no section for %s", k);
                snprintf(needle, sizeof needle, "| [`%s`](#", k);
                cr_assert_not_null(strstr(md, needle), "no summary row for %s", k);
        }
        static const char *const refused[] = {"kafka.transactional.id", "kafka.group.id",
                                              "kafka.enable.auto.commit",
                                              "kafka.isolation.level"};
        for (size_t i = 0; i < 4; i++) {
                snprintf(needle, sizeof needle, "| `%s` |", refused[i]);
                cr_assert_not_null(strstr(md, needle), "%s not listed as refused", refused[i]);
        }
        cr_assert_not_null(strstr(md, "`kafka.bootstrap.servers` is required"));
        cr_assert_not_null(strstr(md, "| milliseconds, 10 to 60000 | `100` |"));
        free(md);
}

Test(conf, example_lists_every_key_and_loads) {
        char *ex = capture(gp_conf_write_example);
        char needle[128];
        gp_err_t err;
        for (size_t i = 0; i < gp_conf_n_keys(); i++) {
                const char *k = gp_conf_key_name(i);
                snprintf(needle, sizeof needle, "\n#%s=", k);
                char *commented = strstr(ex, needle);
                snprintf(needle, sizeof needle, "\n%s=", k);
                char *set = strstr(ex, needle);
                cr_assert(commented || set, "%s missing from the example", k);
        }
        cr_assert_not_null(strstr(ex, "\nkafka.bootstrap.servers=localhost:9092\n"));
        cr_assert_not_null(strstr(ex, "\n#gate.commit.interval.ms=100\n"));
        cr_assert_not_null(strstr(ex, "\ngate.pipeline=orders-enrich\n"));
        /* No comment line wider than 80 columns. */
        for (char *line = ex; *line;) {
                char *nl = strchr(line, '\n');
                size_t n = nl ? (size_t)(nl - line) : strlen(line);
                cr_assert_leq(n, 80, "long line: %.*s", (int)n, line);
                line += n + (nl ? 1 : 0);
        }
        /* The example is a working configuration. */
        gp_conf_t c;
        gp_conf_init(&c);
        cr_assert_eq(load_text(&c, ex, &err), 0, "%s", err.msg);
        cr_assert_eq(gp_conf_finalize(&c, &err), 0, "%s", err.msg);
        cr_assert_str_eq(c.pipeline, "orders-enrich");
        gp_conf_destroy(&c);
        free(ex);
}

#ifndef GP_SOURCE_DIR
#error "GP_SOURCE_DIR (the source tree) is set by tests/CMakeLists.txt"
#endif

/* The files checked in under configs/ are what the table generates. */
Test(conf, checked_in_documents_are_current) {
        static const struct {
                const char *file;
                void (*writer)(FILE *);
        } docs[] = {
                {"/configs/CONFIGURATION.md", gp_conf_write_markdown},
                {"/configs/gate-proxy.conf.example", gp_conf_write_example},
        };
        for (size_t i = 0; i < 2; i++) {
                char path[1024];
                snprintf(path, sizeof path, "%s%s", GP_SOURCE_DIR, docs[i].file);
                FILE *f = fopen(path, "rb");
                cr_assert_not_null(f, "cannot open %s", path);
                char *want = capture(docs[i].writer);
                size_t n = strlen(want);
                char *got = calloc(1, n + 2);
                cr_assert_not_null(got);
                size_t r = fread(got, 1, n + 1, f);
                fclose(f);
                cr_assert(r == n && memcmp(got, want, n) == 0,
                          "%s is out of date: run `make config-docs`", path);
                free(got);
                free(want);
        }
}
