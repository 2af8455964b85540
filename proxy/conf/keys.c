/* proxy/conf/keys.c: the key table of gate-proxy's configuration: every
 * gate.*, control.*, schema.registry.*, http.* and log.* key with its type,
 * default, bounds, the check of its value and its description. The parser
 * (proxy/conf/conf.c) and the documents (proxy/conf/doc.c) read it.
 * May use gate/ (the strict integer parser, the event-time extractor) and
 * k8s/ (Kubernetes name rules). */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gate/extract.h"
#include "gate/timeparse.h"
#include "k8s/kubeconfig.h"
#include "proxy/conf/table.h"

#define PIPELINE_MAX 100

static bool is_topic_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

/* Copies user text for an error message: at most 60 bytes, bytes outside
 * printable ASCII as \xNN, so a binary file cannot garble a terminal. */
const char *gp_conf_shown(const char *s, size_t len, char *buf, size_t buflen) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0, i;
        for (i = 0; i < len && o + 8 < buflen && i < 60; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c >= 0x20 && c < 0x7f) {
                        buf[o++] = (char)c;
                } else {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[c >> 4];
                        buf[o++] = hex[c & 15];
                }
        }
        if (i < len && o + 4 <= buflen) {
                memcpy(buf + o, "...", 3);
                o += 3;
        }
        buf[o] = '\0';
        return buf;
}

/* Checks a topic name span: 1..249 of [A-Za-z0-9._-], not "." or "..". */
bool gp_conf_topic_name_ok(const char *s, size_t n) {
        if (n == 0 || n > TOPIC_MAX)
                return false;
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_topic_char(s[i]))
                        return false;
        return true;
}

/* ------------------------------------------------------------------ */
/* Validators of string values. Each returns GP_OK, or fills err with
 * the reason (GP_ERR_INVALID; GP_ERR_NOMEM when out of memory).       */

static gp_errcode_t check_pipeline(const char *v, gp_err_t *err) {
        size_t n = strlen(v);
        for (size_t i = 0; i < n; i++)
                if (!is_topic_char(v[i]))
                        n = 0;
        if (n == 0 || n > PIPELINE_MAX)
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected 1 to 100 characters from A-Z a-z 0-9 . _ -");
        return GP_OK;
}

/* Walks a template. `topic` allows {topic}, `pipeline` {pipeline};
 * `topic_chars` limits the rest to topic-name characters (otherwise any
 * printable ASCII but space). Sets *has_topic. */
static gp_errcode_t check_template(const char *v, bool topic, bool topic_chars,
                                   bool *has_topic, gp_err_t *err) {
        char b[80];
        *has_topic = false;
        for (const char *p = v; *p;) {
                if (strncmp(p, "{topic}", 7) == 0 && topic) {
                        *has_topic = true;
                        p += 7;
                } else if (strncmp(p, "{pipeline}", 10) == 0) {
                        p += 10;
                } else if (*p == '{') {
                        const char *end = strchr(p, '}');
                        size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
                        return gp_err_set(err, GP_ERR_INVALID,
                                          "unknown placeholder %s; allowed: %s",
                                          gp_conf_shown(p, n, b, sizeof b),
                                          topic ? "{topic}, {pipeline}" : "{pipeline}");
                } else if (topic_chars ? !is_topic_char(*p)
                                       : ((unsigned char)*p <= 0x20 ||
                                          (unsigned char)*p >= 0x7f)) {
                        return gp_err_set(err, GP_ERR_INVALID,
                                          "'%s' is not allowed; expected %s",
                                          gp_conf_shown(p, 1, b, sizeof b),
                                          topic_chars ? "A-Z a-z 0-9 . _ - and placeholders"
                                                      : "printable characters without spaces");
                } else {
                        p++;
                }
        }
        return GP_OK;
}

static gp_errcode_t check_colour_template(const char *v, gp_err_t *err) {
        bool has_topic;
        gp_errcode_t rc = check_template(v, true, true, &has_topic, err);
        if (rc != GP_OK)
                return rc;
        if (!has_topic)
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected a template containing {topic}, e.g. {topic}.blue");
        return GP_OK;
}

static gp_errcode_t check_dlq_template(const char *v, gp_err_t *err) {
        bool has_topic;
        if (strstr(v, "{topic}"))
                return gp_err_set(err, GP_ERR_INVALID,
                                  "{topic} is not allowed: there is one dead-letter topic per "
                                  "pipeline");
        if (*v == '\0')
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected a topic name, e.g. {pipeline}.dlq");
        return check_template(v, false, true, &has_topic, err);
}

static gp_errcode_t check_id(const char *v, gp_err_t *err) {
        bool has_topic;
        if (*v == '\0')
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected 1 to 249 printable characters without spaces, "
                                  "e.g. gate-proxy-{pipeline}");
        return check_template(v, false, false, &has_topic, err);
}

static gp_errcode_t check_group(const char *v, gp_err_t *err) {
        size_t n = strlen(v);
        bool ok = n >= 1 && n <= ID_MAX;
        for (size_t i = 0; ok && i < n; i++)
                ok = v[i] > ' ' && v[i] < 0x7f;
        return ok ? GP_OK
                  : gp_err_set(err, GP_ERR_INVALID,
                               "expected a consumer group id: 1 to 249 printable characters "
                               "without spaces");
}

/* gate.instance: "" (derived at finalize) or a name that can end a
 * transactional.id and a log line: [A-Za-z0-9._-], at most 100. */
static gp_errcode_t check_instance(const char *v, gp_err_t *err) {
        size_t n = strlen(v);
        bool ok = n <= PIPELINE_MAX;
        for (size_t i = 0; ok && i < n; i++)
                ok = is_topic_char(v[i]);
        return ok ? GP_OK
                  : gp_err_set(err, GP_ERR_INVALID,
                               "expected up to 100 characters from A-Z a-z 0-9 . _ -, or "
                               "empty for POD_NAME or the host name");
}

static gp_errcode_t check_path(const char *v, gp_err_t *err) {
        if (*v == '\0')
                return gp_err_set(err, GP_ERR_INVALID, "expected a file path");
        return GP_OK;
}

/* HOST:PORT, the host an IPv4 address or a name, the port 1-65535. */
static gp_errcode_t check_listen(const char *v, gp_err_t *err) {
        const char *colon = strrchr(v, ':');
        int64_t port;
        const char *perr;
        if (!colon || colon == v || !colon[1] ||
            gp_parse_i64(colon + 1, strlen(colon + 1), &port, &perr) || port < 1 ||
            port > 65535)
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected HOST:PORT, e.g. 0.0.0.0:9464 or "
                                  "127.0.0.1:9464");
        for (const char *c = v; c < colon; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
                        return gp_err_set(err, GP_ERR_INVALID,
                                          "expected HOST:PORT with an IPv4 address "
                                          "or a host name, e.g. 0.0.0.0:9464");
        return GP_OK;
}

static gp_errcode_t check_configmap_name(const char *v, gp_err_t *err) {
        if (!gp_k8s_name_ok(v))
                return gp_err_set(
                        err, GP_ERR_INVALID,
                        "expected a ConfigMap name: lower-case letters, digits, '-' and "
                        "'.', at most 253, e.g. orders-configmap");
        return GP_OK;
}

static gp_errcode_t check_namespace(const char *v, gp_err_t *err) {
        if (!gp_k8s_namespace_ok(v))
                return gp_err_set(
                        err, GP_ERR_INVALID,
                        "expected a namespace name: lower-case letters, digits and '-', "
                        "at most 63");
        return GP_OK;
}

static gp_errcode_t check_event_time(const char *v, gp_err_t *err) {
        if (strcmp(v, "kafka-timestamp") == 0)
                return GP_OK;
        if (strncmp(v, "json:", 5) == 0)
                return v[5] ? GP_OK
                            : gp_err_set(err, GP_ERR_INVALID,
                                         "expected a JSON path after json:, e.g. "
                                         "json:payload.ts");
        if (strncmp(v, "header:", 7) == 0)
                return v[7] ? GP_OK
                            : gp_err_set(err, GP_ERR_INVALID,
                                         "expected a header name after header:, e.g. "
                                         "header:event-time");
        if (strncmp(v, "avro:", 5) == 0) {
                gp_extract_t x;
                char why[512];
                if (gp_extract_compile(&x, v, GP_UNIT_MS, why, sizeof why) != 0)
                        return gp_err_set(err, GP_ERR_INVALID, "%s", why);
                return GP_OK;
        }
        return gp_err_set(err, GP_ERR_INVALID,
                          "expected kafka-timestamp, json:PATH, header:NAME or avro:PATH");
}

static gp_errcode_t check_url(const char *v, gp_err_t *err) {
        if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected an http:// or https:// URL, e.g. "
                                  "http://schema-registry:8081");
        if (strchr(v, ' ') || strchr(v, ','))
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected one URL, without spaces or commas");
        return GP_OK;
}

static gp_errcode_t check_userinfo(const char *v, gp_err_t *err) {
        if (!strchr(v, ':'))
                return gp_err_set(err, GP_ERR_INVALID, "expected USER:PASSWORD");
        return GP_OK;
}

/* Splits a topic list. With out != NULL, stores copies there (the caller
 * frees them, also on error). *n is the count. */
gp_errcode_t gp_conf_split_topics(const char *raw, char **out, int *n, gp_err_t *err) {
        const char *spans[GP_CONF_MAX_TOPICS];
        size_t lens[GP_CONF_MAX_TOPICS];
        char b[80];
        const char *p = raw;
        *n = 0;
        if (*raw == '\0')
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected a comma-separated list of topic names, e.g. "
                                  "orders,payments");
        for (;;) {
                const char *comma = strchr(p, ',');
                const char *end = comma ? comma : p + strlen(p);
                while (p < end && gp_conf_is_space(*p))
                        p++;
                while (end > p && gp_conf_is_space(end[-1]))
                        end--;
                size_t len = (size_t)(end - p);
                if (len == 0)
                        return gp_err_set(err, GP_ERR_INVALID, "empty topic name in the list");
                if (!gp_conf_topic_name_ok(p, len))
                        return gp_err_set(
                                err, GP_ERR_INVALID,
                                "\"%s\" is not a valid topic name (1 to 249 characters "
                                "from A-Z a-z 0-9 . _ -)",
                                gp_conf_shown(p, len, b, sizeof b));
                for (int i = 0; i < *n; i++)
                        if (lens[i] == len && memcmp(spans[i], p, len) == 0)
                                return gp_err_set(err, GP_ERR_INVALID,
                                                  "\"%.*s\" is listed twice", (int)len, p);
                if (*n == GP_CONF_MAX_TOPICS)
                        return gp_err_set(err, GP_ERR_INVALID, "more than %d topics",
                                          GP_CONF_MAX_TOPICS);
                spans[*n] = p;
                lens[*n] = len;
                if (out && !(out[*n] = strndup(p, len)))
                        return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                (*n)++;
                if (!comma)
                        return GP_OK;
                p = comma + 1;
        }
}

static gp_errcode_t check_topics(const char *v, gp_err_t *err) {
        int n;
        return gp_conf_split_topics(v, NULL, &n, err);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */

#define FIELD(f) .off = offsetof(gp_conf_t, f), .size = sizeof(((gp_conf_t *)0)->f)

static const char *const w_start[] = {"earliest", "latest", NULL};
static const char *const w_unit[] = {"ms", "s", "us", NULL};
static const char *const w_bad[] = {"dlq", "route-old", NULL};
static const char *const w_late[] = {"new", "dlq", NULL};
static const char *const w_regfail[] = {"dlq", "exit", NULL};
static const char *const w_delivery[] = {"exactly-once", "at-least-once", NULL};
static const char *const w_format[] = {"text", "json", NULL};
static const char *const w_membership[] = {"assign", "group", NULL};
static const char *const w_level[] = {"error", "warn", "info", "debug", NULL};

/* The word lists are in the order of the enum values. */
static void set_start(gp_conf_t *c, int i) {
        c->source_start = i == 1 ? GP_START_LATEST : GP_START_EARLIEST;
}
static void set_unit(gp_conf_t *c, int i) {
        c->event_time_unit = i == 1 ? GP_UNIT_S : i == 2 ? GP_UNIT_US : GP_UNIT_MS;
}
static void set_bad(gp_conf_t *c, int i) {
        c->bad_record = i == 1 ? GP_BAD_ROUTE_OLD : GP_BAD_DLQ;
}
static void set_late(gp_conf_t *c, int i) {
        c->late = i == 1 ? GP_LATE_DLQ : GP_LATE_NEW;
}
static void set_regfail(gp_conf_t *c, int i) {
        c->registry_exit = i == 1;
}
static void set_membership(gp_conf_t *c, int i) {
        c->membership = i == 1 ? GP_MEMBER_GROUP : GP_MEMBER_ASSIGN;
}
static void set_delivery(gp_conf_t *c, int i) {
        c->delivery = i == 1 ? GP_DELIVERY_ALO : GP_DELIVERY_EOS;
}

const prop_t gp_conf_props[] = {
        /* identity */
        {.section = "Identity",
         .name = "gate.pipeline",
         .type = PT_STR,
         .example = "orders-enrich",
         .check = check_pipeline,
         .allowed = "1 to 100 characters from A-Z a-z 0-9 . _ -",
         FIELD(pipeline),
         .desc = "Name of the pipeline this process serves; run one gate-proxy per "
                 "pipeline. It fills {pipeline} in other keys, so with orders-enrich "
                 "the dead-letter topic defaults to orders-enrich.dlq."},
        {.name = "gate.transactional.id",
         .type = PT_STR,
         .def = "gate-proxy-{pipeline}",
         .check = check_id,
         .allowed = "up to 249 printable characters without spaces; {pipeline} allowed",
         FIELD(transactional_id),
         .desc = "Kafka transactional.id of the producer; a second process with the "
                 "same id fences the first, so two copies of a pipeline never both "
                 "write. {pipeline} is replaced by gate.pipeline: "
                 "gate-proxy-orders-enrich with the default."},
        {.name = "gate.group.id",
         .type = PT_STR,
         .def = "gate-proxy-{pipeline}",
         .check = check_id,
         .allowed = "up to 249 printable characters without spaces; {pipeline} allowed",
         FIELD(group_id),
         .desc = "Consumer group that the consumed offsets and the gate checkpoint "
                 "are committed to, inside each transaction. The proxy never joins it "
                 "with gate.membership=assign (it assigns every partition itself), so "
                 "the group has no members; with group, every instance of the pipeline "
                 "is a member of it, and an instance that finds a member of other topics "
                 "in it (another pipeline) exits with code 6: give each pipeline its own. "
                 "{pipeline} is replaced as in gate.transactional.id."},
        {.name = "gate.membership",
         .type = PT_ENUM,
         .def = "assign",
         .words = w_membership,
         .set_enum = set_membership,
         .desc = "How the source partitions are shared. assign: one process reads "
                 "every partition (no group membership, no rebalance) and runs the "
                 "whole pipeline. group: any number of instances join gate.group.id "
                 "as members of Kafka's consumer group (cooperative-sticky assignment) "
                 "and each routes the partitions the group gives it, with "
                 "transactional.id = gate.transactional.id-gate.instance. The "
                 "instances agree on one cutoff T without a leader: the owner of each "
                 "partition commits a promise in its checkpoint, T is the highest "
                 "promise once every partition has one, and the old side closes once "
                 "every partition has closed it in its checkpoint (docs/DESIGN.md, "
                 "Scale-out). A pipeline run "
                 "with assign can be restarted with group on the same group (stop "
                 "the assign process first)."},
        {.name = "gate.instance",
         .type = PT_STR,
         .def = "",
         .check = check_instance,
         .allowed = "up to 100 of A-Z a-z 0-9 . _ -; empty: POD_NAME or host name",
         FIELD(instance),
         .desc = "Name of this instance with gate.membership=group: it ends the "
                 "transactional.id (gate-proxy-orders-enrich-orders-0), so an instance "
                 "restarted under the same name aborts its predecessor's open "
                 "transaction at once, and two live instances of one name fence each "
                 "other. Keep it stable per replica (a StatefulSet's pod name). Empty "
                 "(the default) takes the environment variable POD_NAME, else the host "
                 "name. Unused with assign."},

        /* topics */
        {.section = "Topics",
         .name = "gate.source.topics",
         .type = PT_STR,
         .example = "orders",
         .check = check_topics,
         .allowed = "comma-separated topic names, at most 64, no duplicates",
         FIELD(source_topics_raw),
         .desc = "The topics to read and route, separated by commas, e.g. "
                 "orders,payments (spaces around names are ignored). Each one gets "
                 "its own blue and green topic."},
        {.name = "gate.topic.blue",
         .type = PT_STR,
         .def = "{topic}.blue",
         .check = check_colour_template,
         .allowed = "topic name containing {topic}; {pipeline} allowed",
         FIELD(topic_blue),
         .desc = "Name of the blue topic of each source topic, which the blue job "
                 "reads: {topic} is replaced by the source topic and {pipeline} by "
                 "gate.pipeline. With the default, records of orders go to "
                 "orders.blue; must differ from gate.topic.green."},
        {.name = "gate.topic.green",
         .type = PT_STR,
         .def = "{topic}.green",
         .check = check_colour_template,
         .allowed = "topic name containing {topic}; {pipeline} allowed",
         FIELD(topic_green),
         .desc = "Name of the green topic of each source topic, which the green job "
                 "reads; the same placeholders as gate.topic.blue. Example: "
                 "{pipeline}.{topic}.green gives orders-enrich.orders.green."},
        {.name = "gate.dlq.topic",
         .type = PT_STR,
         .def = "{pipeline}.dlq",
         .check = check_dlq_template,
         .allowed = "topic name; {pipeline} allowed, {topic} not",
         FIELD(dlq_topic),
         .desc = "Dead-letter topic for records that are not routed to a colour (an "
                 "unreadable event time, or a late record with gate.late=dlq); each "
                 "carries the reason. {pipeline} is replaced: orders-enrich.dlq with "
                 "the default."},
        {.name = "gate.topics.create",
         .type = PT_BOOL,
         .def = "false",
         FIELD(topics_create),
         .desc = "With true, missing colour and dead-letter topics are created at "
                 "start, with the partition count of their source topic. With false, "
                 "they must exist already (e.g. created by your topic operator)."},
        {.name = "gate.topics.replication.factor",
         .type = PT_INT,
         .def = "-1",
         .min = 1,
         .max = 32,
         .minus1 = true,
         FIELD(topics_replication),
         .desc = "Replication factor of the topics that gate.topics.create creates; "
                 "-1 uses the broker's default.replication.factor. Example: 3 on a "
                 "production cluster."},
        {.name = "gate.source.start",
         .type = PT_ENUM,
         .def = "earliest",
         .words = w_start,
         .set_enum = set_start,
         .desc = "Where to start reading when the pipeline has no checkpoint yet "
                 "(its first start): earliest routes every record already in the "
                 "source topics, latest only records produced from then on."},

        /* event time */
        {.section = "Event time",
         .name = "gate.event-time",
         .type = PT_STR,
         .def = "kafka-timestamp",
         .check = check_event_time,
         .allowed = "kafka-timestamp, json:PATH, header:NAME or avro:PATH",
         FIELD(event_time),
         .desc = "Where a record's event time is read, the time compared with the "
                 "cutoff: kafka-timestamp is the Kafka record timestamp, json:PATH a "
                 "field of a JSON value (json:payload.ts), header:NAME a record header "
                 "(header:event-time), avro:PATH a field of an Avro value "
                 "(avro:event.ts), whose schema comes from gate.avro.schema or, for "
                 "values in the Confluent wire format, from schema.registry.url. A field "
                 "or header holds a number in gate.event-time.unit or an RFC 3339 "
                 "date-time; an Avro long with the logical type timestamp-millis, "
                 "timestamp-micros or timestamp-nanos is read in that unit."},
        {.name = "gate.event-time.unit",
         .type = PT_ENUM,
         .def = "ms",
         .words = w_unit,
         .set_enum = set_unit,
         .desc = "Unit of a numeric event time read by json: or header: "
                 "(milliseconds, seconds or microseconds since 1970); the Kafka "
                 "timestamp is always in ms. Example: s when the field holds "
                 "1767225600 for 2026-01-01T00:00:00Z."},
        {.name = "gate.event-time.max-future.ms",
         .type = PT_MS,
         .def = "86400000",
         .min = 0,
         .max = 3153600000000,
         FIELD(max_future_ms),
         .desc = "How far past the wall clock an event time may be: a record "
                 "dated later goes to gate.dlq.topic with the reason future-time "
                 "and raises no watermark, highest event time or promise, so one "
                 "mistyped date (2100, or the largest integer) cannot hold the "
                 "cutoff T above every real record. 0: no bound. Example: "
                 "3600000 where producers' clocks are within an hour of this "
                 "host's; the default, a day, is far past any clock skew."},
        {.name = "gate.avro.schema",
         .type = PT_STR,
         .example = "/etc/gate-proxy/event.avsc",
         .optional = true,
         .unset = "with avro:PATH, values are in the Confluent wire format and their "
                  "schemas come from schema.registry.url",
         .check = check_path,
         .allowed = "file path",
         FIELD(avro_schema),
         .desc = "An Avro schema file (.avsc, JSON): with avro:PATH, every value is "
                 "plain Avro binary of this schema, with no framing. Read once at "
                 "start; a schema without the field stops the start. Example: "
                 "/etc/gate-proxy/event.avsc for values written by an Avro "
                 "DatumWriter without a registry."},
        {.name = "gate.record.max.bytes",
         .type = PT_INT,
         .def = "1048576",
         .min = 1,
         .max = 1073741824,
         FIELD(record_max_bytes),
         .desc = "The largest record (key plus value plus headers, in bytes) routed "
                 "to a colour topic; a larger one goes to gate.dlq.topic with the "
                 "reason too-large, and its event time is not read. Example: 65536 "
                 "when the jobs' topics refuse larger records (their "
                 "max.message.bytes); the dead-letter topic must take them."},
        {.name = "gate.bad-record",
         .type = PT_ENUM,
         .def = "dlq",
         .words = w_bad,
         .set_enum = set_bad,
         .desc = "What happens to a record whose event time cannot be read: dlq "
                 "sends it to gate.dlq.topic with the reason; route-old counts it as "
                 "older than the cutoff, so it goes to the colour that owned the "
                 "traffic before the hand-over (FLIP-504's rule)."},
        {.name = "gate.late",
         .type = PT_ENUM,
         .def = "new",
         .words = w_late,
         .set_enum = set_late,
         .desc = "What happens to a record older than the cutoff that arrives after "
                 "the old side was closed: new sends it to the new colour and counts "
                 "it as late; dlq sends it to gate.dlq.topic."},
        {.name = "gate.abort.redeliver",
         .type = PT_BOOL,
         .def = "true",
         FIELD(abort_redeliver),
         .desc = "With true, a hand-over aborted after its cutoff gives the surviving "
                 "colour the records that had gone to the abandoned one: each source "
                 "partition is read again from where its split began to where the "
                 "abort took effect, and exactly those records are sent to the "
                 "survivor, after the records it already has, before any later one "
                 "(docs/DESIGN.md, Abort re-delivery). With false, they are only "
                 "counted (gate-proxy.aborted-routed)."},

        /* watermark and cutoff */
        {.section = "Watermark and cutoff",
         .name = "gate.watermark.out-of-orderness.ms",
         .type = PT_MS,
         .def = "1000",
         .min = 0,
         .max = 86400000,
         FIELD(out_of_orderness_ms),
         .desc = "How far out of order event times may arrive: a partition's "
                 "watermark is its highest event time minus this. Example: 5000 "
                 "when records arrive up to 5 s out of order."},
        {.name = "gate.watermark.idle.ms",
         .type = PT_MS,
         .def = "10000",
         .min = 100,
         .max = 86400000,
         FIELD(idle_ms),
         .desc = "A partition without records for this long is idle and stops "
                 "holding back the watermark (the minimum over the other partitions). "
                 "Example: 60000 for partitions that are quiet for a minute at a "
                 "time."},
        {.name = "gate.cutoff.align.ms",
         .type = PT_MS,
         .def = "1",
         .min = 1,
         .max = 86400000,
         FIELD(align_ms),
         .desc = "The cutoff T is rounded up to a multiple of this, so no window of "
                 "the jobs is split between blue and green. Example: 60000 for "
                 "one-minute windows; 1 means no rounding."},
        {.name = "gate.lateness.ms",
         .type = PT_MS,
         .def = "0",
         .min = 0,
         .max = 86400000,
         FIELD(lateness_ms),
         .desc = "Allowed lateness after the cutoff: the old side is closed "
                 "(CLEAR_TO_TEARDOWN) only when the watermark has reached T plus this. "
                 "Example: 30000 when the old job's windows accept records up to "
                 "30 s late."},
        {.name = "gate.drain.group.blue",
         .type = PT_STR,
         .example = "orders-enrich-blue",
         .optional = true,
         .unset = "no drain check: blue closes on the watermark condition alone",
         .check = check_group,
         .allowed = "consumer group id",
         FIELD(drain_group_blue),
         .desc = "Consumer group of the job reading the blue topics. When blue is the "
                 "old side, CLEAR_TO_TEARDOWN also waits until this group's committed "
                 "offsets on every blue partition the proxy writes have reached the last "
                 "record the proxy committed there (a drain check, polled at most every "
                 "250 ms, progress logged). The proxy only reads the group's offsets; it "
                 "never joins it. A Flink job needs it: its offsets are committed on "
                 "checkpoints and its last commit at a stop can be lost, so without the "
                 "check the old job may be stopped before it has processed and committed "
                 "its last records, and the next job of its colour reads them again or "
                 "never (deploy/README.md, The Flink jobs). All jobs of a colour may share "
                 "the group when each reads its own topics. Without it, the watermark "
                 "condition alone, and gate-proxy says so at start and in "
                 "gate-proxy.warning."},
        {.name = "gate.drain.group.green",
         .type = PT_STR,
         .example = "orders-enrich-green",
         .optional = true,
         .unset = "no drain check: green closes on the watermark condition alone",
         .check = check_group,
         .allowed = "consumer group id",
         FIELD(drain_group_green),
         .desc = "As gate.drain.group.blue, for the job reading the green topics. "
                 "Without it, the watermark condition alone."},

        /* transactions */
        {.section = "Transactions",
         .name = "gate.delivery",
         .type = PT_ENUM,
         .def = "exactly-once",
         .words = w_delivery,
         .set_enum = set_delivery,
         .desc = "exactly-once writes routed records and the consumed offsets in one "
                 "Kafka transaction; at-least-once commits offsets after the records "
                 "are written, without transactions, so a crash can write some "
                 "records twice."},
        {.name = "gate.commit.interval.ms",
         .type = PT_MS,
         .def = "100",
         .min = 10,
         .max = 60000,
         FIELD(commit_interval_ms),
         .desc = "Longest time a transaction stays open before it is committed. "
                 "read_committed readers see records only after the commit, so this "
                 "adds up to this much latency; example: 1000 for fewer, larger "
                 "transactions."},
        {.name = "gate.commit.records",
         .type = PT_INT,
         .def = "10000",
         .min = 1,
         .max = 1000000,
         FIELD(commit_records),
         .desc = "A transaction is committed once it holds this many records, even "
                 "before gate.commit.interval.ms has passed. Example: 50000 for "
                 "busy topics."},
        {.name = "gate.discovery.interval.ms",
         .type = PT_MS,
         .def = "5000",
         .min = 500,
         .max = 3600000,
         FIELD(discovery_ms),
         .desc = "How often the proxy refreshes topic metadata to find new "
                 "partitions of the source topics (it reads every partition itself, "
                 "without group membership). Example: 30000 to ask the brokers less "
                 "often."},
        {.name = "gate.status.interval.ms",
         .type = PT_MS,
         .def = "1000",
         .min = 1000,
         .max = 3600000,
         FIELD(status_interval_ms),
         .desc = "How often the proxy writes its status keys (gate-proxy.*: "
                 "watermark, cutoff, phase, counts, heartbeat) to the control "
                 "ConfigMap. Example: 10000 to write less often."},
        {.name = "gate.member.forget.ms",
         .type = PT_MS,
         .def = "600000",
         .min = 15000,
         .max = 31536000000,
         FIELD(member_forget_ms),
         .desc = "With gate.membership=group, each member writes its own status "
                 "key (gate-proxy.member.<instance>); a key whose member has not "
                 "written it for this long (killed, or gone with its pod's name) "
                 "is removed by a member still running. Example: 3600000 to keep "
                 "a dead member's last status an hour for a post-mortem."},

        /* schema registry */
        {.section = "Schema registry",
         .name = "schema.registry.url",
         .type = PT_STR,
         .example = "http://schema-registry:8081",
         .optional = true,
         .unset = "no registry: avro:PATH needs gate.avro.schema",
         .check = check_url,
         .allowed = "http:// or https:// URL",
         FIELD(registry_url),
         .desc = "Base URL of a Confluent-compatible schema registry; with "
                 "avro:PATH and no gate.avro.schema, each value is the Confluent wire "
                 "format (byte 0, a 4-byte schema id, Avro binary) and the schema of an "
                 "id is fetched once from URL/schemas/ids/ID and kept. Example: "
                 "http://registry:8080/apis/ccompat/v7 for Apicurio Registry."},
        {.name = "schema.registry.basic.auth.user.info",
         .type = PT_STR,
         .example = "gate-proxy:secret",
         .optional = true,
         .unset = "no authentication",
         .check = check_userinfo,
         .allowed = "USER:PASSWORD",
         FIELD(registry_userinfo),
         .desc = "HTTP basic authentication for the registry, never logged. Example: "
                 "gate-proxy:secret (prefer an https:// URL)."},
        {.name = "schema.registry.ssl.ca.location",
         .type = PT_STR,
         .example = "/etc/gate-proxy/registry-ca.pem",
         .optional = true,
         .unset = "the system's CA certificates",
         .check = check_path,
         .allowed = "file path",
         FIELD(registry_ca),
         .desc = "PEM file of the CA certificates that verify an https:// registry. "
                 "Verification is always on."},
        {.name = "schema.registry.ssl.certificate.location",
         .type = PT_STR,
         .example = "/etc/gate-proxy/registry-client.pem",
         .optional = true,
         .unset = "no client certificate",
         .check = check_path,
         .allowed = "file path",
         FIELD(registry_cert),
         .desc = "PEM client certificate for a registry that asks for one; with "
                 "schema.registry.ssl.key.location."},
        {.name = "schema.registry.ssl.key.location",
         .type = PT_STR,
         .example = "/etc/gate-proxy/registry-client.key",
         .optional = true,
         .unset = "no client certificate",
         .check = check_path,
         .allowed = "file path",
         FIELD(registry_key),
         .desc = "PEM private key of schema.registry.ssl.certificate.location."},
        {.name = "schema.registry.timeout.ms",
         .type = PT_MS,
         .def = "5000",
         .min = 100,
         .max = 60000,
         FIELD(registry_timeout_ms),
         .desc = "Time allowed for one request to the registry, connecting included."},
        {.name = "schema.registry.retry.ms",
         .type = PT_MS,
         .def = "30000",
         .min = 0,
         .max = 120000,
         FIELD(registry_retry_ms),
         .desc = "How long a schema that cannot be fetched (registry unreachable, "
                 "timing out or answering 5xx) is retried, with a growing pause, "
                 "before schema.registry.on-failure applies. The records of that id "
                 "wait meanwhile, and so does the rest of their partition; the other "
                 "partitions go on. An id the registry does not know (404) is not "
                 "retried."},
        {.name = "schema.registry.on-failure",
         .type = PT_ENUM,
         .def = "dlq",
         .words = w_regfail,
         .set_enum = set_regfail,
         .desc = "What happens once schema.registry.retry.ms has passed without the "
                 "schema: dlq sends the records of that id to gate.dlq.topic (reason "
                 "registry-unavailable) for the next schema.registry.retry.ms, then "
                 "tries again; exit stops the proxy with exit code 1 and commits "
                 "nothing more, so a restart goes on from those records."},
        {.name = "schema.registry.cache.max",
         .type = PT_INT,
         .def = "1000",
         .min = 1,
         .max = 100000,
         FIELD(registry_cache_max),
         .desc = "Schemas kept in memory, by id; the least recently used is dropped "
                 "(and fetched again when needed). An unknown id is remembered for a "
                 "minute."},

        /* control */
        {.section = "Control",
         .name = "control.file",
         .type = PT_STR,
         .example = "/var/lib/gate-proxy/bluegreen.json",
         .optional = true,
         .unset = "the map is read from Kubernetes (control.k8s.configmap)",
         .example_set = true,
         .check = check_path,
         .allowed = "file path",
         FIELD(control_file),
         .desc = "Path of the local JSON file that holds the blue/green ConfigMap "
                 "document; the proxy reads the requested transition from it and writes "
                 "its decisions and status back. Set exactly one of control.file and "
                 "control.k8s.configmap. Example: /var/lib/gate-proxy/bluegreen.json."},
        {.name = "control.k8s.configmap",
         .type = PT_STR,
         .example = "orders-configmap",
         .optional = true,
         .unset = "the map is a local file (control.file)",
         .check = check_configmap_name,
         .allowed = "ConfigMap name",
         FIELD(k8s_configmap),
         .desc = "Name of the blue/green ConfigMap in Kubernetes, which the Flink "
                 "Kubernetes Operator names NAME-configmap, NAME being the "
                 "FlinkBlueGreenDeployment's. The proxy watches "
                 "it and patches it (compare-and-set on its resourceVersion); its Role "
                 "needs get, watch and patch on exactly this ConfigMap (resourceNames). "
                 "Set exactly one of control.file and control.k8s.configmap."},
        {.name = "control.k8s.namespace",
         .type = PT_STR,
         .example = "flink",
         .optional = true,
         .unset = "the namespace of the configuration in use: in a pod without "
                  "control.k8s.kubeconfig its own (from its service account), with a "
                  "kubeconfig its context's; else default",
         .check = check_namespace,
         .allowed = "namespace name",
         FIELD(k8s_namespace),
         .desc = "Namespace of control.k8s.configmap. Example: flink when the "
                 "FlinkBlueGreenDeployment lives there and the proxy runs elsewhere."},
        {.name = "control.k8s.kubeconfig",
         .type = PT_STR,
         .example = "/etc/gate-proxy/kubeconfig",
         .optional = true,
         .unset = "in a pod, its service account (KUBERNETES_SERVICE_HOST and "
                  "/var/run/secrets/kubernetes.io/serviceaccount); elsewhere the first "
                  "file of KUBECONFIG, else ~/.kube/config",
         .check = check_path,
         .allowed = "file path",
         FIELD(k8s_kubeconfig),
         .desc = "Kubeconfig file to reach the API server with: its current-context "
                 "gives the server, the CA (certificate-authority or -data) and the "
                 "credentials (token, tokenFile, or client-certificate and client-key). "
                 "TLS is always verified. Example: /etc/gate-proxy/kubeconfig when the "
                 "proxy runs outside the cluster."},

        /* process */
        {.section = "Process",
         .name = "http.listen",
         .type = PT_STR,
         .example = "0.0.0.0:9464",
         .optional = true,
         .unset = "no HTTP server",
         .check = check_listen,
         .allowed = "HOST:PORT",
         FIELD(http_listen),
         .desc = "Where to serve /metrics (Prometheus text format), /livez, /healthz and "
                 "/readyz, on a thread of its own that never touches a Kafka handle. "
                 "Example: 0.0.0.0:9464 in a pod, so Prometheus and the kubelet's probes "
                 "reach it."},
        {.name = "log.level",
         .type = PT_ENUM,
         .def = "info",
         .words = w_level,
         FIELD(log_level),
         .desc = "The least severe messages that are logged: error, warn, info or "
                 "debug. Example: debug while you investigate a hand-over."},
        {.name = "log.format",
         .type = PT_ENUM,
         .def = "text",
         .words = w_format,
         FIELD(log_format),
         .desc = "How log lines on stderr look: text (time, level, message) or json (one "
                 "object a line: ts, level, pipeline, msg). Example: json where a log "
                 "collector parses the lines."},
};

const size_t gp_conf_n_props = sizeof(gp_conf_props) / sizeof(gp_conf_props[0]);

size_t gp_conf_n_keys(void) {
        return gp_conf_n_props;
}

const char *gp_conf_key_name(size_t i) {
        return i < gp_conf_n_props ? gp_conf_props[i].name : NULL;
}

const prop_t *gp_conf_find_prop(const char *name) {
        for (size_t i = 0; i < gp_conf_n_props; i++)
                if (strcmp(gp_conf_props[i].name, name) == 0)
                        return &gp_conf_props[i];
        return NULL;
}
