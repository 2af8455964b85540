/* proxy/conf/conf.c: the configuration of one gate-proxy process.
 *
 * Owns the key table (name, type, default, bounds, description), the
 * parsing of `key=value` files and -X overrides, the cross-field checks of
 * gp_conf_finalize, and the two documents generated from the table
 * (configs/CONFIGURATION.md and configs/gate-proxy.conf.example).
 * May use gate/ (the strict integer parser); no librdkafka: kafka.* keys
 * are kept as plain strings and applied by proxy/loop/loop.c. */
#include "proxy/conf/conf.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <librdkafka/rdkafka.h>

#include "gate/extract.h"
#include "gate/timeparse.h"
#include "k8s/kubeconfig.h"

#define TOPIC_MAX 249 /* Kafka's limit on a topic name */
#define ID_MAX 249    /* transactional.id / group.id after expansion */
#define PIPELINE_MAX 100
#define KAFKA_PREFIX "kafka."
#define KAFKA_PREFIX_LEN (sizeof(KAFKA_PREFIX) - 1)

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

/* Running out of memory ends the process (as librdkafka's rd_malloc
 * does): a half-built configuration is no state to continue from. */
static char *xstrndup(const char *s, size_t n) {
        char *d = malloc(n + 1);
        if (!d)
                abort();
        memcpy(d, s, n);
        d[n] = '\0';
        return d;
}

static char *xstrdup(const char *s) {
        return xstrndup(s, strlen(s));
}

__attribute__((format(printf, 3, 4))) static int seterr(char *why, size_t whylen,
                                                        const char *fmt, ...) {
        va_list ap;
        if (why && whylen > 0) {
                va_start(ap, fmt);
                vsnprintf(why, whylen, fmt, ap);
                va_end(ap);
        }
        return -1;
}

/* A setting that cannot be used: GP_ERR_INVALID, "where: key: reason". */
__attribute__((format(printf, 2, 3))) static int bad(gp_err_t *err, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_err_vset(err, GP_ERR_INVALID, fmt, ap);
        va_end(ap);
        return -1;
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_topic_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

/* Copies user text for an error message: at most 60 bytes, bytes outside
 * printable ASCII as \xNN, so a binary file cannot garble a terminal. */
static const char *shown(const char *s, size_t len, char *buf, size_t buflen) {
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
static bool topic_name_ok(const char *s, size_t n) {
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
/* Validators of string values. Each returns 0, or -1 with a reason.     */

typedef int (*check_fn)(const char *v, char *why, size_t whylen);

static int check_pipeline(const char *v, char *why, size_t whylen) {
        size_t n = strlen(v);
        for (size_t i = 0; i < n; i++)
                if (!is_topic_char(v[i]))
                        n = 0;
        if (n == 0 || n > PIPELINE_MAX)
                return seterr(why, whylen,
                              "expected 1 to 100 characters from A-Z a-z 0-9 . _ -");
        return 0;
}

/* Walks a template. `topic` allows {topic}, `pipeline` {pipeline};
 * `topic_chars` limits the rest to topic-name characters (otherwise any
 * printable ASCII but space). Sets *has_topic. */
static int check_template(const char *v, bool topic, bool topic_chars, bool *has_topic,
                          char *why, size_t whylen) {
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
                        return seterr(why, whylen,
                                      "unknown placeholder %s; allowed: %s",
                                      shown(p, n, b, sizeof b),
                                      topic ? "{topic}, {pipeline}" : "{pipeline}");
                } else if (topic_chars ? !is_topic_char(*p)
                                       : ((unsigned char)*p <= 0x20 ||
                                          (unsigned char)*p >= 0x7f)) {
                        return seterr(why, whylen, "'%s' is not allowed; expected %s",
                                      shown(p, 1, b, sizeof b),
                                      topic_chars ? "A-Z a-z 0-9 . _ - and placeholders"
                                                  : "printable characters without spaces");
                } else {
                        p++;
                }
        }
        return 0;
}

static int check_colour_template(const char *v, char *why, size_t whylen) {
        bool has_topic;
        if (check_template(v, true, true, &has_topic, why, whylen) != 0)
                return -1;
        if (!has_topic)
                return seterr(why, whylen,
                              "expected a template containing {topic}, e.g. {topic}.blue");
        return 0;
}

static int check_dlq_template(const char *v, char *why, size_t whylen) {
        bool has_topic;
        if (strstr(v, "{topic}"))
                return seterr(why, whylen,
                              "{topic} is not allowed: there is one dead-letter topic per "
                              "pipeline");
        if (*v == '\0')
                return seterr(why, whylen, "expected a topic name, e.g. {pipeline}.dlq");
        return check_template(v, false, true, &has_topic, why, whylen);
}

static int check_id(const char *v, char *why, size_t whylen) {
        bool has_topic;
        if (*v == '\0')
                return seterr(why, whylen,
                              "expected 1 to 249 printable characters without spaces, "
                              "e.g. gate-proxy-{pipeline}");
        return check_template(v, false, false, &has_topic, why, whylen);
}

static int check_group(const char *v, char *why, size_t whylen) {
        size_t n = strlen(v);
        bool ok = n >= 1 && n <= ID_MAX;
        for (size_t i = 0; ok && i < n; i++)
                ok = v[i] > ' ' && v[i] < 0x7f;
        return ok ? 0
                  : seterr(why, whylen,
                           "expected a consumer group id: 1 to 249 printable characters "
                           "without spaces");
}

static int check_path(const char *v, char *why, size_t whylen) {
        if (*v == '\0')
                return seterr(why, whylen, "expected a file path");
        return 0;
}

/* HOST:PORT, the host an IPv4 address or a name, the port 1-65535. */
static int check_listen(const char *v, char *why, size_t whylen) {
        const char *colon = strrchr(v, ':');
        int64_t port;
        const char *perr;
        if (!colon || colon == v || !colon[1] ||
            gp_parse_i64(colon + 1, strlen(colon + 1), &port, &perr) || port < 1 ||
            port > 65535)
                return seterr(why, whylen, "expected HOST:PORT, e.g. 0.0.0.0:9464 or "
                                           "127.0.0.1:9464");
        for (const char *c = v; c < colon; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
                        return seterr(why, whylen, "expected HOST:PORT with an IPv4 address "
                                                   "or a host name, e.g. 0.0.0.0:9464");
        return 0;
}

static int check_configmap_name(const char *v, char *why, size_t whylen) {
        if (!gp_k8s_name_ok(v))
                return seterr(why, whylen,
                              "expected a ConfigMap name: lower-case letters, digits, '-' and "
                              "'.', at most 253, e.g. orders-bluegreen-configmap");
        return 0;
}

static int check_namespace(const char *v, char *why, size_t whylen) {
        if (!gp_k8s_namespace_ok(v))
                return seterr(why, whylen,
                              "expected a namespace name: lower-case letters, digits and '-', "
                              "at most 63");
        return 0;
}

static int check_event_time(const char *v, char *why, size_t whylen) {
        if (strcmp(v, "kafka-timestamp") == 0)
                return 0;
        if (strncmp(v, "json:", 5) == 0)
                return v[5] ? 0
                            : seterr(why, whylen,
                                     "expected a JSON path after json:, e.g. json:payload.ts");
        if (strncmp(v, "header:", 7) == 0)
                return v[7] ? 0
                            : seterr(why, whylen,
                                     "expected a header name after header:, e.g. "
                                     "header:event-time");
        if (strncmp(v, "avro:", 5) == 0) {
                gp_extract_t x;
                return gp_extract_compile(&x, v, GP_UNIT_MS, why, whylen);
        }
        return seterr(why, whylen,
                      "expected kafka-timestamp, json:PATH, header:NAME or avro:PATH");
}

static int check_url(const char *v, char *why, size_t whylen) {
        if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
                return seterr(why, whylen,
                              "expected an http:// or https:// URL, e.g. "
                              "http://schema-registry:8081");
        if (strchr(v, ' ') || strchr(v, ','))
                return seterr(why, whylen, "expected one URL, without spaces or commas");
        return 0;
}

static int check_userinfo(const char *v, char *why, size_t whylen) {
        if (!strchr(v, ':'))
                return seterr(why, whylen, "expected USER:PASSWORD");
        return 0;
}

/* Splits a topic list. With out != NULL, stores copies there (the caller
 * frees them, also on error). *n is the count. */
static int split_topics(const char *raw, char **out, int *n, char *why, size_t whylen) {
        const char *spans[GP_CONF_MAX_TOPICS];
        size_t lens[GP_CONF_MAX_TOPICS];
        char b[80];
        const char *p = raw;
        *n = 0;
        if (*raw == '\0')
                return seterr(why, whylen,
                              "expected a comma-separated list of topic names, e.g. "
                              "orders,payments");
        for (;;) {
                const char *comma = strchr(p, ',');
                const char *end = comma ? comma : p + strlen(p);
                while (p < end && is_space(*p))
                        p++;
                while (end > p && is_space(end[-1]))
                        end--;
                size_t len = (size_t)(end - p);
                if (len == 0)
                        return seterr(why, whylen, "empty topic name in the list");
                if (!topic_name_ok(p, len))
                        return seterr(why, whylen,
                                      "\"%s\" is not a valid topic name (1 to 249 characters "
                                      "from A-Z a-z 0-9 . _ -)",
                                      shown(p, len, b, sizeof b));
                for (int i = 0; i < *n; i++)
                        if (lens[i] == len && memcmp(spans[i], p, len) == 0)
                                return seterr(why, whylen, "\"%.*s\" is listed twice",
                                              (int)len, p);
                if (*n == GP_CONF_MAX_TOPICS)
                        return seterr(why, whylen, "more than %d topics",
                                      GP_CONF_MAX_TOPICS);
                spans[*n] = p;
                lens[*n] = len;
                if (out)
                        out[*n] = xstrndup(p, len);
                (*n)++;
                if (!comma)
                        return 0;
                p = comma + 1;
        }
}

static int check_topics(const char *v, char *why, size_t whylen) {
        int n;
        return split_topics(v, NULL, &n, why, whylen);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */

typedef enum {
        PT_STR,  /* char *, validated by .check */
        PT_BOOL, /* bool: true | false */
        PT_INT,  /* int64_t or int (by field size), min..max */
        PT_MS,   /* as PT_INT, a duration in milliseconds */
        PT_ENUM, /* one of .words: stored by .set_enum, or as the word */
} prop_type_t;

typedef struct prop {
        const char *section; /* starts a section in the documents */
        const char *name;
        prop_type_t type;
        const char *def;     /* as written in a file; NULL: required, unless optional */
        const char *example; /* required and optional keys: value in the example file */
        bool optional;       /* no default and not required (gp_conf_finalize may
                              * still ask for one of several) */
        const char *unset;   /* optional keys: what leaving it unset means */
        bool example_set;    /* optional keys: set in the example file */
        int64_t min, max;    /* PT_INT, PT_MS */
        bool minus1;         /* PT_INT: -1 ("broker default") also allowed */
        const char *const *words;          /* PT_ENUM, NULL-terminated */
        void (*set_enum)(gp_conf_t *, int); /* PT_ENUM: index of the word */
        check_fn check;                     /* PT_STR */
        const char *allowed;                /* PT_STR: for the documents */
        size_t off, size;                   /* the field, unless set_enum */
        const char *desc;
} prop_t;

#define FIELD(f) .off = offsetof(gp_conf_t, f), .size = sizeof(((gp_conf_t *)0)->f)

static const char *const w_start[] = {"earliest", "latest", NULL};
static const char *const w_unit[] = {"ms", "s", "us", NULL};
static const char *const w_bad[] = {"dlq", "route-old", NULL};
static const char *const w_late[] = {"new", "dlq", NULL};
static const char *const w_regfail[] = {"dlq", "exit", NULL};
static const char *const w_delivery[] = {"exactly-once", "at-least-once", NULL};
static const char *const w_format[] = {"text", "json", NULL};
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
static void set_delivery(gp_conf_t *c, int i) {
        c->delivery = i == 1 ? GP_DELIVERY_ALO : GP_DELIVERY_EOS;
}

static const prop_t props[] = {
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
                 "(it assigns every partition itself), so the group has no members; "
                 "{pipeline} is replaced as in gate.transactional.id."},

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
                 "record the proxy committed there (a drain check, polled at most once a "
                 "second, progress logged). The proxy only reads the group's offsets; it "
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
         .example = "orders-bluegreen-configmap",
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

#define N_PROPS (sizeof(props) / sizeof(props[0]))

/* kafka.* keys that gate-proxy sets itself: a user value would break the
 * exactly-once design or fight a gate.* key. */
static const struct {
        const char *name; /* without the prefix */
        const char *reason;
} reserved[] = {
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

#define N_RESERVED (sizeof(reserved) / sizeof(reserved[0]))

size_t gp_conf_n_keys(void) {
        return N_PROPS;
}

const char *gp_conf_key_name(size_t i) {
        return i < N_PROPS ? props[i].name : NULL;
}

static const prop_t *find_prop(const char *name) {
        for (size_t i = 0; i < N_PROPS; i++)
                if (strcmp(props[i].name, name) == 0)
                        return &props[i];
        return NULL;
}

static const char *find_reserved(const char *kname) {
        for (size_t i = 0; i < N_RESERVED; i++)
                if (strcmp(reserved[i].name, kname) == 0)
                        return reserved[i].reason;
        return NULL;
}

/* ------------------------------------------------------------------ */
/* Setting one key                                                     */

/* "expected an integer between 10 and 60000 ms" */
static void int_reason(const prop_t *p, char *buf, size_t len) {
        if (p->minus1)
                snprintf(buf, len,
                         "expected -1 (broker default) or an integer between %lld and %lld",
                         (long long)p->min, (long long)p->max);
        else
                snprintf(buf, len, "expected an integer between %lld and %lld%s",
                         (long long)p->min, (long long)p->max,
                         p->type == PT_MS ? " ms" : "");
}

static void enum_reason(const prop_t *p, char *buf, size_t len) {
        size_t o = (size_t)snprintf(buf, len, "expected one of ");
        for (int i = 0; p->words[i] && o < len; i++)
                o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
                                      p->words[i]);
}

static void store_str(gp_conf_t *conf, const prop_t *p, const char *value) {
        char **slot = (char **)(void *)((char *)conf + p->off);
        free(*slot);
        *slot = xstrdup(value);
}

/* Parses and stores value; -1 with a reason (no origin, no key) in why. */
static int prop_set(gp_conf_t *conf, const prop_t *p, const char *value, char *why,
                    size_t whylen) {
        int64_t v;
        const char *perr;
        switch (p->type) {
        case PT_STR:
                if (p->check(value, why, whylen) != 0)
                        return -1;
                store_str(conf, p, value);
                return 0;
        case PT_BOOL: {
                bool b;
                if (strcmp(value, "true") == 0)
                        b = true;
                else if (strcmp(value, "false") == 0)
                        b = false;
                else
                        return seterr(why, whylen, "expected true or false");
                assert(p->size == sizeof b);
                memcpy((char *)conf + p->off, &b, sizeof b);
                return 0;
        }
        case PT_INT:
        case PT_MS:
                if (gp_parse_i64(value, strlen(value), &v, &perr) != 0 ||
                    !((v >= p->min && v <= p->max) || (p->minus1 && v == -1))) {
                        int_reason(p, why, whylen);
                        return -1;
                }
                if (p->size == sizeof(int64_t)) {
                        memcpy((char *)conf + p->off, &v, sizeof v);
                } else {
                        int iv = (int)v; /* the bounds keep it in range */
                        assert(p->size == sizeof iv);
                        memcpy((char *)conf + p->off, &iv, sizeof iv);
                }
                return 0;
        case PT_ENUM:
                for (int i = 0; p->words[i]; i++) {
                        if (strcmp(p->words[i], value) != 0)
                                continue;
                        if (p->set_enum)
                                p->set_enum(conf, i);
                        else
                                store_str(conf, p, value);
                        return 0;
                }
                enum_reason(p, why, whylen);
                return -1;
        }
        return seterr(why, whylen, "internal error: unknown type");
}

/* Optimal string alignment distance (a swap of two neighbours costs 1).
 * b is a table key, shorter than 64 bytes. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        size_t r0[64] = {0}, r1[64], r2[64];
        if (lb >= 64)
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                r1[j] = j;
        for (size_t i = 1; i <= la; i++) {
                r2[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = a[i - 1] != b[j - 1];
                        size_t d = r1[j] + 1;
                        if (r2[j - 1] + 1 < d)
                                d = r2[j - 1] + 1;
                        if (r1[j - 1] + cost < d)
                                d = r1[j - 1] + cost;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            r0[j - 2] + 1 < d)
                                d = r0[j - 2] + 1;
                        r2[j] = d;
                }
                memcpy(r0, r1, sizeof r0);
                memcpy(r1, r2, sizeof r1);
        }
        return r1[lb];
}

/* The closest table key: same letters in another case, edit distance <= 2,
 * or one a prefix of the other (the shorter at least 6 bytes; the closer
 * in length wins, so gate.lateness suggests gate.lateness.ms, not
 * gate.late). Ties go to the earlier key in the table. */
static const char *suggest(const char *key) {
        size_t klen = strlen(key), best_score = SIZE_MAX;
        const char *best = NULL;
        for (size_t i = 0; i < N_PROPS; i++) {
                const char *name = props[i].name;
                size_t nlen = strlen(name), score = SIZE_MAX, d;
                size_t shorter = klen < nlen ? klen : nlen;
                size_t diff = klen > nlen ? klen - nlen : nlen - klen;
                if (strcasecmp(key, name) == 0)
                        score = 0;
                else if (diff <= 2 && (d = edit_distance(key, name)) <= 2)
                        score = d;
                else if (shorter >= 6 && strncmp(key, name, shorter) == 0)
                        score = 3 + diff;
                if (score < best_score) {
                        best_score = score;
                        best = name;
                }
        }
        return best;
}

static int set_kafka(gp_conf_t *conf, const char *key, const char *value, const char *origin,
                     gp_err_t *err) {
        const char *kname = key + KAFKA_PREFIX_LEN;
        const char *reason;
        char b[80];
        if (*kname == '\0')
                return bad(err,
                           "%s: %s: expected a librdkafka property after kafka., e.g. "
                           "kafka.bootstrap.servers",
                           origin, key);
        /* kafka.producer.X and kafka.consumer.X are X for one client. */
        const char *bare = kname;
        if (!strncmp(bare, "producer.", 9) || !strncmp(bare, "consumer.", 9))
                bare += 9;
        if ((reason = find_reserved(bare)))
                return bad(err, "%s: %s: %s", origin, key, reason);
        for (const char *p = kname; *p; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                        return bad(err,
                                   "%s: %s: expected a librdkafka property name "
                                   "(printable, no spaces)",
                                   origin, shown(key, strlen(key), b, sizeof b));
        /* librdkafka's own check, here, so its refusal names the line. */
        rd_kafka_conf_t *probe = rd_kafka_conf_new();
        char why[512];
        if (!probe)
                abort();
        rd_kafka_conf_res_t res = rd_kafka_conf_set(probe, bare, value, why, sizeof why);
        rd_kafka_conf_destroy(probe);
        if (res != RD_KAFKA_CONF_OK)
                return bad(err, "%s: %s: %s", origin, key, why);
        for (int i = 0; i < conf->n_kafka; i++) {
                gp_conf_kv_t *kv = &conf->kafka[i];
                if (strcmp(kv->key, kname) != 0)
                        continue;
                free(kv->value);
                free(kv->origin);
                kv->value = xstrdup(value);
                kv->origin = xstrdup(origin);
                return 0;
        }
        gp_conf_kv_t *grown =
                realloc(conf->kafka, (size_t)(conf->n_kafka + 1) * sizeof *conf->kafka);
        if (!grown)
                abort();
        conf->kafka = grown;
        grown[conf->n_kafka].key = xstrdup(kname);
        grown[conf->n_kafka].value = xstrdup(value);
        grown[conf->n_kafka].origin = xstrdup(origin);
        conf->n_kafka++;
        return 0;
}

int gp_conf_set(gp_conf_t *conf, const char *key, const char *value, const char *origin,
                gp_err_t *err) {
        const prop_t *p;
        char why[512], b[80];
        if (!origin)
                origin = "-X";
        if (!key || !value)
                return bad(err, "%s: expected key=value", origin);
        if (strncmp(key, KAFKA_PREFIX, KAFKA_PREFIX_LEN) == 0)
                return set_kafka(conf, key, value, origin, err);
        p = find_prop(key);
        if (!p) {
                const char *near = suggest(key);
                const char *k = shown(key, strlen(key), b, sizeof b);
                if (near)
                        return bad(err, "%s: %s: unknown key; did you mean %s?", origin, k,
                                   near);
                if (strncmp(key, "gate.", 5) != 0 && strncmp(key, "control.", 8) != 0 &&
                    strncmp(key, "log.", 4) != 0 &&
                    strncmp(key, "schema.registry.", 16) != 0)
                        return bad(err,
                                   "%s: %s: unknown key (librdkafka properties are "
                                   "written kafka.<property>)",
                                   origin, k);
                return bad(err,
                           "%s: %s: unknown key; gate-proxy --list-config lists every key",
                           origin, k);
        }
        if (prop_set(conf, p, value, why, sizeof why) != 0) {
                bool quoted = value[0] == '"' || value[0] == '\'';
                return bad(err, "%s: %s: %s%s", origin, key, why,
                           quoted ? " (write values without quotes)" : "");
        }
        if (!conf->prop_origin && !(conf->prop_origin = calloc(N_PROPS, sizeof(char *))))
                abort();
        free(conf->prop_origin[p - props]);
        conf->prop_origin[p - props] = xstrdup(origin);
        return 0;
}

/* "path:line: " where key was set, "" where it was not (a default). */
static const char *where(const gp_conf_t *conf, const char *key, char *buf, size_t len) {
        const prop_t *p = find_prop(key);
        const char *o = p && conf->prop_origin ? conf->prop_origin[p - props] : NULL;
        snprintf(buf, len, "%s%s", o ? o : "", o ? ": " : "");
        return buf;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

int gp_conf_load_buffer(gp_conf_t *conf, const char *name, const char *buf, size_t len,
                        gp_err_t *err) {
        char line[GP_CONF_MAX_LINE + 1];
        char origin[600], b[80];
        size_t pos = 0;
        unsigned long lineno = 0;
        if (!name)
                name = "(buffer)";
        if (len > GP_CONF_MAX_FILE)
                return bad(err, "%s: file is larger than 1 MiB (%d bytes)", name,
                           GP_CONF_MAX_FILE);
        if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) /* UTF-8 byte order mark */
                pos = 3;
        while (pos < len) {
                const char *start = buf + pos;
                const char *nl = memchr(start, '\n', len - pos);
                size_t n = nl ? (size_t)(nl - start) : len - pos;
                pos += n + (nl ? 1 : 0);
                lineno++;
                snprintf(origin, sizeof origin, "%s:%lu", name, lineno);
                if (n > GP_CONF_MAX_LINE)
                        return bad(err, "%s: line is longer than %d bytes", origin,
                                   GP_CONF_MAX_LINE);
                if (memchr(start, '\0', n))
                        return bad(err, "%s: line contains a NUL byte", origin);
                memcpy(line, start, n);
                line[n] = '\0';

                char *s = line, *e = line + n;
                while (s < e && is_space(*s))
                        s++;
                while (e > s && is_space(e[-1]))
                        e--;
                *e = '\0';
                if (s == e || *s == '#')
                        continue;
                char *eq = strchr(s, '=');
                char *ke = eq;
                while (ke && ke > s && is_space(ke[-1]))
                        ke--;
                if (!eq || ke == s)
                        return bad(err, "%s: %s: expected key=value", origin,
                                   shown(s, (size_t)(e - s), b, sizeof b));
                *ke = '\0';
                char *v = eq + 1;
                while (*v && is_space(*v))
                        v++;
                if (gp_conf_set(conf, s, v, origin, err) != 0)
                        return -1;
        }
        return 0;
}

int gp_conf_load_file(gp_conf_t *conf, const char *path, gp_err_t *err) {
        FILE *f = fopen(path, "rb");
        char *buf;
        size_t n;
        int rc;
        if (!f)
                return bad(err, "%s: cannot open: %s", path, strerror(errno));
        /* One byte more than allowed tells a file that is too big. */
        buf = malloc((size_t)GP_CONF_MAX_FILE + 1);
        if (!buf)
                abort();
        n = fread(buf, 1, (size_t)GP_CONF_MAX_FILE + 1, f);
        if (ferror(f)) {
                int e = errno;
                fclose(f);
                free(buf);
                return bad(err, "%s: cannot read: %s", path, strerror(e));
        }
        fclose(f);
        rc = gp_conf_load_buffer(conf, path, buf, n, err);
        free(buf);
        return rc;
}

/* ------------------------------------------------------------------ */
/* init, destroy                                                       */

void gp_conf_init(gp_conf_t *conf) {
        char why[256];
        memset(conf, 0, sizeof *conf);
        for (size_t i = 0; i < N_PROPS; i++) {
                if (!props[i].def)
                        continue;
                if (prop_set(conf, &props[i], props[i].def, why, sizeof why) != 0) {
                        /* A default the table itself refuses: a bug here. */
                        fprintf(stderr, "gate-proxy: bad default of %s: %s\n",
                                props[i].name, why);
                        abort();
                }
        }
}

static void free_topics(gp_conf_t *conf) {
        for (int i = 0; i < conf->n_topics; i++) {
                free(conf->topics[i]);
                conf->topics[i] = NULL;
        }
        conf->n_topics = 0;
}

void gp_conf_destroy(gp_conf_t *conf) {
        if (!conf)
                return;
        for (size_t i = 0; i < N_PROPS; i++) {
                const prop_t *p = &props[i];
                if (p->type == PT_STR || (p->type == PT_ENUM && !p->set_enum)) {
                        char **slot = (char **)(void *)((char *)conf + p->off);
                        free(*slot);
                        *slot = NULL;
                }
        }
        free_topics(conf);
        for (int i = 0; i < conf->n_kafka; i++) {
                free(conf->kafka[i].key);
                free(conf->kafka[i].value);
                free(conf->kafka[i].origin);
        }
        free(conf->kafka);
        if (conf->prop_origin)
                for (size_t i = 0; i < N_PROPS; i++)
                        free(conf->prop_origin[i]);
        free(conf->prop_origin);
        memset(conf, 0, sizeof *conf);
}

/* ------------------------------------------------------------------ */
/* finalize                                                            */

int gp_conf_topic_name(const gp_conf_t *conf, const char *tmpl, const char *topic, char *buf,
                       size_t len) {
        size_t o = 0;
        if (!buf || len == 0)
                return -1;
        buf[0] = '\0';
        if (!tmpl)
                return -1;
        for (const char *p = tmpl; *p;) {
                const char *rep = NULL;
                size_t skip = 0;
                if (strncmp(p, "{topic}", 7) == 0) {
                        rep = topic;
                        skip = 7;
                } else if (strncmp(p, "{pipeline}", 10) == 0) {
                        rep = conf ? conf->pipeline : NULL;
                        skip = 10;
                }
                if (skip) {
                        size_t n;
                        if (!rep)
                                goto fail;
                        n = strlen(rep);
                        if (n >= len - o)
                                goto fail;
                        memcpy(buf + o, rep, n);
                        o += n;
                        p += skip;
                } else {
                        if (len - o < 2)
                                goto fail;
                        buf[o++] = *p++;
                }
        }
        buf[o] = '\0';
        return 0;
fail:
        buf[0] = '\0';
        return -1;
}

/* Replaces {pipeline} in *slot, and checks the result's length. */
static int expand_pipeline(gp_conf_t *conf, char **slot, const char *key, size_t max,
                           gp_err_t *err) {
        char buf[1024];
        if (gp_conf_topic_name(conf, *slot, NULL, buf, sizeof buf) != 0 ||
            strlen(buf) > max)
                return bad(err,
                           "%s: longer than %zu characters once {pipeline} "
                           "is replaced",
                           key, max);
        free(*slot);
        *slot = xstrdup(buf);
        return 0;
}

typedef struct {
        char name[TOPIC_MAX + 1];
} tname_t;

/* The colour topics of every source topic: valid, distinct from each
 * other, from the source topics and from the dead-letter topic. A clash
 * would route a record back into a source or mix the two jobs' inputs. */
static int check_colour_names(const gp_conf_t *conf, gp_err_t *err) {
        static const char *const keys[2] = {"gate.topic.blue", "gate.topic.green"};
        static const char *const colours[2] = {"blue", "green"};
        const char *tmpls[2] = {conf->topic_blue, conf->topic_green};
        int n = conf->n_topics, rc = -1;
        tname_t *names = calloc((size_t)(2 * n) + 1, sizeof *names);
        char big[1024];
        if (!names)
                abort();
        for (int c = 0; c < 2; c++) {
                for (int i = 0; i < n; i++) {
                        if (gp_conf_topic_name(conf, tmpls[c], conf->topics[i], big,
                                               sizeof big) != 0 ||
                            strlen(big) > TOPIC_MAX) {
                                bad(err,
                                    "%s: the name for topic %s is longer than %d "
                                    "characters",
                                    keys[c], conf->topics[i], TOPIC_MAX);
                                goto out;
                        }
                        if (!topic_name_ok(big, strlen(big))) {
                                bad(err, "%s: \"%s\" is not a valid topic name", keys[c], big);
                                goto out;
                        }
                        memcpy(names[c * n + i].name, big, strlen(big) + 1);
                }
        }
        for (int a = 0; a < 2 * n; a++) {
                const char *name = names[a].name;
                int ca = a / n, ia = a % n;
                for (int j = 0; j < n; j++) {
                        if (strcmp(name, conf->topics[j]) == 0) {
                                bad(err, "%s: \"%s\" (for %s) is also a source topic",
                                    keys[ca], name, conf->topics[ia]);
                                goto out;
                        }
                }
                if (strcmp(name, conf->dlq_topic) == 0) {
                        bad(err, "gate.dlq.topic: \"%s\" is also the %s topic of %s", name,
                            colours[ca], conf->topics[ia]);
                        goto out;
                }
                for (int b = 0; b < a; b++) {
                        if (strcmp(name, names[b].name) == 0) {
                                bad(err, "%s: \"%s\" (for %s) is also the %s topic of %s",
                                    keys[ca], name, conf->topics[ia], colours[b / n],
                                    conf->topics[b % n]);
                                goto out;
                        }
                }
        }
        rc = 0;
out:
        free(names);
        return rc;
}

int gp_conf_finalize(gp_conf_t *conf, gp_err_t *err) {
        char why[512];
        const gp_conf_kv_t *servers = NULL;

        for (int i = 0; i < conf->n_kafka; i++) {
                const char *k = conf->kafka[i].key, *reason;
                if (!strncmp(k, "producer.", 9) || !strncmp(k, "consumer.", 9))
                        k += 9;
                if ((reason = find_reserved(k)))
                        return bad(err, "%s: kafka.%s: %s", conf->kafka[i].origin,
                                   conf->kafka[i].key, reason);
                if (strcmp(conf->kafka[i].key, "bootstrap.servers") == 0 ||
                    strcmp(conf->kafka[i].key, "metadata.broker.list") == 0)
                        servers = &conf->kafka[i];
        }
        /* Required keys, all of them in one message, in table order. */
        char missing[1024] = "";
        int n_missing = 0;
        for (size_t i = 0; i <= N_PROPS; i++) {
                const char *name, *example;
                if (i == N_PROPS) {
                        if (servers && servers->value[0])
                                continue;
                        name = "kafka.bootstrap.servers";
                        example = "localhost:9092";
                } else {
                        const prop_t *p = &props[i];
                        if (p->def || p->optional || *(char **)(void *)((char *)conf + p->off))
                                continue;
                        name = p->name;
                        example = p->example;
                }
                size_t ml = strlen(missing);
                snprintf(missing + ml, sizeof missing - ml, "%s  %s=%s", n_missing ? "\n" : "",
                         name, example);
                n_missing++;
        }
        if (n_missing)
                return bad(err, "%s not set; for example:\n%s",
                           n_missing == 1 ? "a required key is" : "required keys are",
                           missing);

        /* Values may have been assigned directly, not through
         * gp_conf_set: check the ones later code relies on again. */
        if (!conf->topic_blue || !conf->topic_green || !conf->dlq_topic ||
            !conf->transactional_id || !conf->group_id)
                return bad(err, "gp_conf_finalize: conf was not initialised");
        if (check_pipeline(conf->pipeline, why, sizeof why) != 0)
                return bad(err, "gate.pipeline: %s", why);
        if (check_colour_template(conf->topic_blue, why, sizeof why) != 0)
                return bad(err, "gate.topic.blue: %s", why);
        if (check_colour_template(conf->topic_green, why, sizeof why) != 0)
                return bad(err, "gate.topic.green: %s", why);
        if (strcmp(conf->topic_blue, conf->topic_green) == 0)
                return bad(err,
                           "gate.topic.green: same as gate.topic.blue (\"%s\"); blue and "
                           "green need different topics",
                           conf->topic_green);
        if (check_dlq_template(conf->dlq_topic, why, sizeof why) != 0)
                return bad(err, "gate.dlq.topic: %s", why);

        /* Exactly one control backend. */
        if (!conf->control_file && !conf->k8s_configmap)
                return bad(err, "control.file or control.k8s.configmap: one is required (e.g. "
                                "control.file=/var/lib/gate-proxy/bluegreen.json, or "
                                "control.k8s.configmap=orders-bluegreen-configmap)");
        char at[620];
        if (conf->control_file && conf->k8s_configmap)
                return bad(err,
                           "%scontrol.k8s.configmap: control.file is set too (%s); set "
                           "only one of them",
                           where(conf, "control.k8s.configmap", at, sizeof at),
                           conf->prop_origin
                                   ? conf->prop_origin[find_prop("control.file") - props]
                                   : "");
        if (!conf->k8s_configmap && (conf->k8s_namespace || conf->k8s_kubeconfig)) {
                const char *k = conf->k8s_namespace ? "control.k8s.namespace"
                                                    : "control.k8s.kubeconfig";
                return bad(err,
                           "%s%s: needs control.k8s.configmap (the map is in control.file)",
                           where(conf, k, at, sizeof at), k);
        }

        /* Avro: exactly one source of schemas; the rest only with avro:. */
        bool avro = strncmp(conf->event_time, "avro:", 5) == 0;
        if (avro && !conf->avro_schema && !conf->registry_url)
                return bad(err,
                           "gate.event-time: %s needs gate.avro.schema (plain Avro "
                           "values) or schema.registry.url (Confluent wire format)",
                           conf->event_time);
        if (avro && conf->avro_schema && conf->registry_url)
                return bad(err,
                           "%sschema.registry.url: gate.avro.schema is set too; set "
                           "gate.avro.schema for plain Avro values or "
                           "schema.registry.url for the Confluent wire format, not both",
                           where(conf, "schema.registry.url", at, sizeof at));
        if (!avro && (conf->avro_schema || conf->registry_url))
                return bad(err, "%s: needs gate.event-time=avro:PATH",
                           conf->avro_schema ? "gate.avro.schema" : "schema.registry.url");
        if (!conf->registry_url &&
            (conf->registry_userinfo || conf->registry_ca || conf->registry_cert ||
             conf->registry_key))
                return bad(err, "%s: needs schema.registry.url",
                           conf->registry_userinfo ? "schema.registry.basic.auth.user.info"
                           : conf->registry_ca     ? "schema.registry.ssl.ca.location"
                           : conf->registry_cert   ? "schema.registry.ssl.certificate.location"
                                                   : "schema.registry.ssl.key.location");
        if (!conf->registry_cert != !conf->registry_key)
                return bad(err, "%s: needs %s too",
                           conf->registry_cert ? "schema.registry.ssl.certificate.location"
                                               : "schema.registry.ssl.key.location",
                           conf->registry_cert ? "schema.registry.ssl.key.location"
                                               : "schema.registry.ssl.certificate.location");

        /* Derived values. */
        if (expand_pipeline(conf, &conf->transactional_id, "gate.transactional.id", ID_MAX,
                            err) != 0 ||
            expand_pipeline(conf, &conf->group_id, "gate.group.id", ID_MAX, err) != 0 ||
            expand_pipeline(conf, &conf->dlq_topic, "gate.dlq.topic", TOPIC_MAX, err) != 0)
                return -1;
        if (!topic_name_ok(conf->dlq_topic, strlen(conf->dlq_topic)))
                return bad(err, "gate.dlq.topic: \"%s\" is not a valid topic name",
                           conf->dlq_topic);
        free_topics(conf);
        if (split_topics(conf->source_topics_raw, conf->topics, &conf->n_topics, why,
                         sizeof why) != 0) {
                free_topics(conf); /* n_topics counts what was stored */
                return bad(err, "gate.source.topics: %s", why);
        }
        for (int i = 0; i < conf->n_topics; i++)
                if (strcmp(conf->topics[i], conf->dlq_topic) == 0)
                        return bad(err, "gate.dlq.topic: \"%s\" is also a source topic",
                                   conf->dlq_topic);
        return check_colour_names(conf, err);
}

/* ------------------------------------------------------------------ */
/* Documents                                                           */

/* What a key accepts, in words: "milliseconds, 10 to 60000". */
static void type_text(const prop_t *p, char *buf, size_t len) {
        switch (p->type) {
        case PT_STR:
                snprintf(buf, len, "%s", p->allowed);
                return;
        case PT_BOOL:
                snprintf(buf, len, "true or false");
                return;
        case PT_INT:
                if (p->minus1)
                        snprintf(buf, len, "-1 (broker default) or an integer, %lld to %lld",
                                 (long long)p->min, (long long)p->max);
                else
                        snprintf(buf, len, "integer, %lld to %lld", (long long)p->min,
                                 (long long)p->max);
                return;
        case PT_MS:
                snprintf(buf, len, "milliseconds, %lld to %lld", (long long)p->min,
                         (long long)p->max);
                return;
        case PT_ENUM: {
                size_t o = (size_t)snprintf(buf, len, "one of ");
                for (int i = 0; p->words[i] && o < len; i++)
                        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
                                              p->words[i]);
                return;
        }
        }
}

/* Text for Markdown: '*' and '|' (emphasis, table cells) escaped. */
static void md_text(FILE *out, const char *s) {
        for (; *s; s++) {
                if (*s == '*' || *s == '|')
                        fputc('\\', out);
                fputc(*s, out);
        }
}

/* Markdown type text: the allowed words as code. */
static void md_type(FILE *out, const prop_t *p) {
        char buf[256];
        if (p->type != PT_ENUM) {
                type_text(p, buf, sizeof buf);
                md_text(out, buf);
                return;
        }
        fputs("one of ", out);
        for (int i = 0; p->words[i]; i++)
                fprintf(out, "%s`%s`", i ? ", " : "", p->words[i]);
}

static void md_default(FILE *out, const prop_t *p) {
        if (p->def)
                fprintf(out, "`%s`", p->def);
        else if (p->optional)
                fputs("unset", out);
        else
                fputs("required", out);
}

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

void gp_conf_drain_warning(const gp_conf_t *conf, char *buf, size_t len) {
        const char *off = !conf->drain_group_blue && !conf->drain_group_green ? "blue or green"
                          : !conf->drain_group_blue                           ? "blue"
                          : !conf->drain_group_green                          ? "green"
                                                                              : NULL;
        if (!off) {
                snprintf(buf, len, "%s", "");
                return;
        }
        snprintf(buf, len,
                 "no drain check for %s (gate.drain.group.%s unset): CLEAR_TO_TEARDOWN "
                 "follows the watermark alone, so the old job may be stopped before it has "
                 "processed and committed its last records, and the next job of its colour "
                 "reads them again or never; set it to the job's consumer group",
                 off, strchr(off, ' ') ? "blue/.green" : off);
}

void gp_conf_write_markdown(FILE *out) {
        fputs("# gate-proxy configuration\n"
              "\n"
              "<!-- Generated from the key table in proxy/conf/conf.c by "
              "`gate-proxy --list-config`; edit the table, not this file. -->\n"
              "\n"
              "gate-proxy reads one configuration file of `key=value` lines. "
              "Whitespace around the key and the value is ignored, lines whose first "
              "character is `#` are comments, and blank lines are skipped. A value "
              "is taken as written, up to the end of the line: it may contain `=` "
              "and `#`, and is not quoted. A line may be 4096 bytes long, the file "
              "1 MiB.\n"
              "\n"
              "`-X key=value` on the command line sets a key too, and wins over the "
              "file. When a key is set twice, the later setting wins. An unknown "
              "key, or a value outside what is allowed, stops gate-proxy at start "
              "with an error such as\n"
              "\n"
              "```\n"
              "/etc/gate-proxy/gate-proxy.conf:12: gate.delivery: expected one of "
              "exactly-once, at-least-once\n"
              "```\n"
              "\n"
              "Booleans are `true` or `false`. Integers and durations are plain "
              "decimal numbers (durations in milliseconds, no unit suffix). In the "
              "keys that allow them, `{pipeline}` is replaced by `gate.pipeline` and "
              "`{topic}` by the name of a source topic.\n"
              "\n"
              "## librdkafka properties (`kafka.*`)\n"
              "\n"
              "Keys that start with `kafka.` are passed to librdkafka without the "
              "prefix, in the order they were set: `kafka.bootstrap.servers=broker:9092` "
              "sets librdkafka's `bootstrap.servers`, `kafka.security.protocol=SSL` its "
              "`security.protocol`. See librdkafka's CONFIGURATION.md for the "
              "properties. `kafka.bootstrap.servers` is required.\n"
              "\n"
              "gate-proxy sets these properties itself; setting them is an error:\n"
              "\n"
              "| Key | Reason |\n"
              "|---|---|\n",
              out);
        for (size_t i = 0; i < N_RESERVED; i++)
                fprintf(out, "| `kafka.%s` | %s |\n", reserved[i].name, reserved[i].reason);
        fputs("\ngate-proxy bounds librdkafka's queues so that its memory stays flat "
              "(23 to 29 MB in make bench, from 1 to 48 partitions and 100-byte to 10 KB records); it sets these "
              "unless the configuration does (`kafka.KEY` or `kafka.ROLE.KEY`):\n"
              "\n"
              "| Client | librdkafka property | gate-proxy's value |\n"
              "|---|---|---|\n",
              out);
        for (const gp_kafka_default_t *d = gp_bounded_defaults; d->key; d++)
                fprintf(out, "| %s | `%s` | %s |\n", d->role, d->key, d->value);
        fputs("\n`fetch.max.bytes` is left to librdkafka when `message.max.bytes` is set, "
              "and `queue.buffering.max.kbytes` grows to hold two records of the "
              "producer's `message.max.bytes` (which `gate.record.max.bytes` raises). "
              "With queues this small librdkafka 2.0.2 would pause its fetcher for up to "
              "a second after each refill; gate-proxy wakes it (one ListOffsets request "
              "per refill), so the small queue does not starve the consumer. Larger "
              "queues buy some throughput for large records at the cost of memory, "
              "and while a backlog written in large batches is read they let every "
              "partition advance together, so the watermark, and a cutover's close, "
              "do not wait for the last partition (docs/BENCHMARKS.md, Memory).\n",
              out);

        fputs("\n## Summary\n\n| Key | Allowed | Default |\n|---|---|---|\n", out);
        for (size_t i = 0; i < N_PROPS; i++) {
                fprintf(out, "| [`%s`](#", props[i].name);
                for (const char *c = props[i].name; *c; c++)
                        if (*c != '.')
                                fputc(*c, out);
                fputs(") | ", out);
                md_type(out, &props[i]);
                fputs(" | ", out);
                md_default(out, &props[i]);
                fputs(" |\n", out);
        }

        for (size_t i = 0; i < N_PROPS; i++) {
                const prop_t *p = &props[i];
                if (p->section)
                        fprintf(out, "\n## %s\n", p->section);
                fprintf(out, "\n### `%s`\n\n", p->name);
                md_text(out, p->desc);
                fputs("\n\n- Allowed: ", out);
                md_type(out, p);
                fputs("\n- Default: ", out);
                md_default(out, p);
                if (p->optional) {
                        fputs(": ", out);
                        md_text(out, p->unset);
                } else if (!p->def)
                        fprintf(out, " (e.g. `%s`)", p->example);
                fputs("\n", out);
        }
}

/* Writes text as '#' comment lines of at most `width` columns. */
static void comment_wrapped(FILE *out, const char *text, size_t width) {
        const char *p = text;
        while (*p) {
                size_t n = strlen(p), cut = n;
                if (n > width - 2) {
                        cut = width - 2;
                        while (cut > 0 && p[cut] != ' ')
                                cut--;
                        if (cut == 0) /* one long word */
                                for (cut = width - 2; p[cut] && p[cut] != ' '; cut++)
                                        ;
                }
                fprintf(out, "# %.*s\n", (int)cut, p);
                p += cut;
                while (*p == ' ')
                        p++;
        }
}

void gp_conf_write_example(FILE *out) {
        char type[256];
        fputs("# gate-proxy example configuration, generated from proxy/conf/conf.c\n"
              "# (gate-proxy --example-config). Every key is listed with its default,\n"
              "# commented out; the required keys have placeholder values to replace.\n"
              "#\n"
              "# One key=value per line; lines starting with # are comments. Values\n"
              "# are not quoted. -X key=value on the command line wins over this file.\n"
              "# Keys starting with kafka. go to librdkafka without the prefix.\n"
              "# Reference: configs/CONFIGURATION.md.\n",
              out);
        for (size_t i = 0; i < N_PROPS; i++) {
                const prop_t *p = &props[i];
                if (p->section)
                        fprintf(out, "\n## %s\n", p->section);
                fputs("\n", out);
                comment_wrapped(out, p->desc, 78);
                type_text(p, type, sizeof type);
                fprintf(out, "# Allowed: %s.\n", type);
                if (p->def) {
                        fprintf(out, "#%s=%s\n", p->name, p->def);
                } else if (p->optional) {
                        char unset[512];
                        snprintf(unset, sizeof unset, "Unset: %s.", p->unset);
                        comment_wrapped(out, unset, 78);
                        fprintf(out, "%s%s=%s\n", p->example_set ? "" : "#", p->name,
                                p->example);
                } else {
                        fprintf(out, "# Required.\n%s=%s\n", p->name, p->example);
                }
        }
        fputs("\n## librdkafka (kafka.*)\n\n", out);
        comment_wrapped(out,
                        "Brokers to connect to, host:port separated by commas. Required. "
                        "Any other librdkafka property can be set the same way, e.g. "
                        "kafka.security.protocol=SSL.",
                        78);
        fputs("kafka.bootstrap.servers=localhost:9092\n\n", out);
        char list[512];
        size_t o = (size_t)snprintf(list, sizeof list, "Set by gate-proxy and refused here:");
        for (size_t i = 0; i < N_RESERVED && o < sizeof list; i++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s kafka.%s", i ? "," : "",
                                      reserved[i].name);
        if (o < sizeof list - 1)
                snprintf(list + o, sizeof list - o, ".");
        comment_wrapped(out, list, 78);
}
