/* proxy/obs/endpoints.c: /metrics, /livez, /healthz, /readyz (proxy/obs/endpoints.h). */
#include <dirent.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <librdkafka/rdkafka.h>
#include <microhttpd.h>

#include "gate/gate.h"
#include "proxy/obs/endpoints.h"
#include "proxy/base/fault.h"
#include "proxy/base/log.h"

#define MAX_CONNECTIONS      32
#define CONNECTION_TIMEOUT_S 10
#define BODY_START           65536
#define BODY_MAX             (64 << 20) /* past this a scrape is cut, and says so */

struct gp_endpoints {
        struct MHD_Daemon *d;
        gp_proxy_t *p;
        const gp_conf_t *conf;
        double start_s; /* process start, epoch seconds */
};

/* ---- a growing text buffer ----------------------------------------------- */

/* Whole lines only: a line that does not fit (memory, or BODY_MAX) is
 * dropped with every one after it, and `full` says so. */
typedef struct text {
        char *buf;
        size_t len, cap;
        bool full;
} text_t;

static bool text_init(text_t *t) {
        *t = (text_t){.buf = malloc(BODY_START), .cap = BODY_START};
        if (t->buf)
                t->buf[0] = '\0';
        return t->buf != NULL;
}

__attribute__((format(printf, 2, 3))) static void put(text_t *t, const char *fmt, ...) {
        va_list ap;
        if (t->full)
                return;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t)n >= t->cap - t->len) {
                size_t cap = t->cap;
                while (cap - t->len <= (size_t)n && cap < BODY_MAX)
                        cap *= 2;
                char *b = cap - t->len > (size_t)n ? realloc(t->buf, cap) : NULL;
                if (!b) {
                        t->buf[t->len] = '\0';
                        t->full = true;
                        return;
                }
                t->buf = b;
                t->cap = cap;
                va_start(ap, fmt);
                vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
                va_end(ap);
        }
        t->len += (size_t)n;
}

static void family(text_t *t, const char *name, const char *type, const char *help) {
        put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A histogram from per-bucket counts n[0..nb] (n[nb]: above every bound). */
static void histogram(text_t *t, const char *name, const char *help, const double *le, int nb,
                      const uint64_t *n, double sum) {
        uint64_t cum = 0;
        family(t, name, "histogram", help);
        for (int i = 0; i < nb; i++) {
                cum += n[i];
                put(t, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, le[i], cum);
        }
        cum += n[nb];
        put(t, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n%s_count %" PRIu64 "\n", name,
            cum, name, sum, name, cum);
}

/* An event time in ms as seconds; NaN while there is none. */
static void put_time(text_t *t, const char *name, int64_t ms) {
        if (ms == GP_TS_NONE)
                put(t, "%s NaN\n", name);
        else
                put(t, "%s %.3f\n", name, (double)ms / 1000.0);
}

/* ---- the brokers, from librdkafka's statistics ---------------------------- */

/* Each broker a client knows (not the bootstrap placeholders): up (state
 * UP) and its average and 99th percentile round-trip time. */
static void broker_metrics(text_t *t, gp_proxy_t *p) {
        static const char *const client[2] = {"producer", "consumer"};
        cJSON *doc[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++) {
                char *copy = gp_proxy_kafka_stats(p, i);
                doc[i] = copy ? cJSON_Parse(copy) : NULL;
                free(copy);
        }
        static const struct {
                const char *name, *type, *help;
        } fam[3] = {
                {"gate_proxy_broker_up", "gauge",
                 "1 while the client's connection to the broker is up (librdkafka "
                 "statistics, every statistics.interval.ms)."},
                {"gate_proxy_broker_rtt_seconds", "gauge",
                 "Average request round-trip time to the broker over the last statistics "
                 "interval."},
                {"gate_proxy_broker_rtt_p99_seconds", "gauge",
                 "99th percentile of the request round-trip time to the broker over the "
                 "last statistics interval."},
        };
        for (int f = 0; f < 3; f++) {
                family(t, fam[f].name, fam[f].type, fam[f].help);
                for (int i = 0; i < 2; i++) {
                        const cJSON *b,
                                *brokers = cJSON_GetObjectItemCaseSensitive(doc[i], "brokers");
                        cJSON_ArrayForEach(b, brokers) {
                                const cJSON *id =
                                        cJSON_GetObjectItemCaseSensitive(b, "nodeid");
                                const cJSON *nm =
                                        cJSON_GetObjectItemCaseSensitive(b, "nodename");
                                const cJSON *st = cJSON_GetObjectItemCaseSensitive(b, "state");
                                const cJSON *rtt = cJSON_GetObjectItemCaseSensitive(b, "rtt");
                                const cJSON *src =
                                        cJSON_GetObjectItemCaseSensitive(b, "source");
                                /* Each broker once: not the coordinator handles
                                 * ("logical", the same broker again) nor the
                                 * internal one. */
                                if (!cJSON_IsString(src) ||
                                    !strcmp(src->valuestring, "logical") ||
                                    !strcmp(src->valuestring, "internal") ||
                                    !cJSON_IsNumber(id) || id->valuedouble < 0 ||
                                    !cJSON_IsString(nm) || strchr(nm->valuestring, '"') ||
                                    strchr(nm->valuestring, '\\'))
                                        continue;
                                char lbl[400];
                                snprintf(lbl, sizeof lbl,
                                         "client=\"%s\",broker=\"%.200s\",id=\"%d\"",
                                         client[i], nm->valuestring, (int)id->valuedouble);
                                if (f == 0) {
                                        put(t, "%s{%s} %d\n", fam[f].name, lbl,
                                            cJSON_IsString(st) &&
                                                    !strcmp(st->valuestring, "UP"));
                                        continue;
                                }
                                const cJSON *v = cJSON_GetObjectItemCaseSensitive(
                                        rtt, f == 1 ? "avg" : "p99");
                                if (cJSON_IsNumber(v))
                                        put(t, "%s{%s} %.6f\n", fam[f].name, lbl,
                                            v->valuedouble / 1e6);
                        }
                }
        }
        cJSON_Delete(doc[0]);
        cJSON_Delete(doc[1]);
}

/* ---- the group ------------------------------------------------------------ */

/* A label value: backslash, quote and newline escaped. */
static void label_value(char *out, size_t len, const char *s) {
        size_t k = 0;
        for (; *s && k + 2 < len; s++) {
                if (*s == '\\' || *s == '"')
                        out[k++] = '\\';
                out[k++] = *s == '\n' ? 'n' : *s;
        }
        out[k] = '\0';
}

/* gate.membership=group: the members of the group as last seen, and the
 * partitions of each (by client id/host: two members of one label, such
 * as two consumers left at the default client id on one host, are summed,
 * so no series repeats; at most 64 members, one series each). */
static void group_members(text_t *t, gp_proxy_t *p) {
        gp_member_info_t mv[64];
        size_t shown;
        int n = gp_proxy_members(p, mv, sizeof mv / sizeof mv[0], &shown);
        family(t, "gate_proxy_group_members", "gauge",
               "gate.membership=group: members of the pipeline's consumer group as last seen "
               "(a look every 2 s); 0 with assign and before the first look.");
        put(t, "gate_proxy_group_members %d\n", n < 0 ? 0 : n);
        family(t, "gate_proxy_group_member_partitions", "gauge",
               "gate.membership=group: source partitions the group assigned to each member "
               "as last seen, by client id/host (the first 64 members; while the group "
               "rebalances, the members without it).");
        for (size_t i = 0; i < shown; i++) {
                bool first = true;
                int sum = 0, known = 0;
                for (size_t k = 0; k < shown; k++) {
                        if (strcmp(mv[k].label, mv[i].label))
                                continue;
                        if (k < i)
                                first = false;
                        if (mv[k].partitions >= 0) {
                                sum += mv[k].partitions;
                                known++;
                        }
                }
                if (!first || !known)
                        continue;
                char lv[2 * GP_MEMBER_LABEL_MAX];
                label_value(lv, sizeof lv, mv[i].label);
                put(t, "gate_proxy_group_member_partitions{member=\"%s\"} %d\n", lv, sum);
        }
}

/* ---- the process ---------------------------------------------------------- */

static void process_metrics(text_t *t, const gp_endpoints_t *h) {
        long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
        unsigned long utime = 0, stime = 0;
        long rss = 0;
        FILE *f = fopen("/proc/self/stat", "r");
        if (f) {
                /* pid (comm) state, then 10 numbers, then utime and stime; comm
                 * may hold spaces, so read after its closing parenthesis */
                char line[1024];
                if (fgets(line, sizeof line, f)) {
                        const char *r = strrchr(line, ')');
                        if (r && sscanf(r + 2,
                                        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                                        &utime, &stime) != 2)
                                utime = stime = 0;
                }
                fclose(f);
        }
        if ((f = fopen("/proc/self/statm", "r"))) {
                if (fscanf(f, "%*d %ld", &rss) != 1)
                        rss = 0;
                fclose(f);
        }
        int fds = 0;
        DIR *d = opendir("/proc/self/fd");
        if (d) {
                for (struct dirent *e; (e = readdir(d));)
                        fds += e->d_name[0] != '.';
                closedir(d);
                fds--; /* the directory's own */
        }
        family(t, "process_cpu_seconds_total", "counter", "User and system CPU time spent.");
        put(t, "process_cpu_seconds_total %.2f\n",
            tick > 0 ? (double)(utime + stime) / (double)tick : 0.0);
        family(t, "process_resident_memory_bytes", "gauge", "Resident memory size.");
        put(t, "process_resident_memory_bytes %ld\n", rss * page);
        family(t, "process_open_fds", "gauge", "Open file descriptors.");
        put(t, "process_open_fds %d\n", fds);
        family(t, "process_start_time_seconds", "gauge", "Start time since the epoch.");
        put(t, "process_start_time_seconds %.3f\n", h->start_s);
}

/* ---- what the proxy reports ---------------------------------------------- */

/* A loop that has not passed for this long is stuck: longer than any one
 * Kafka call waits (GP_KAFKA_WAIT_MS), twice, plus a window. */
static int64_t live_bound_ms(const gp_conf_t *conf) {
        /* The test build takes a shorter bound, so a held loop fails fast. */
        return gp_test_ms("GP_TEST_LIVEZ_MS", 2 * GP_KAFKA_WAIT_MS + conf->commit_interval_ms);
}

static bool live(const gp_endpoints_t *h, const gp_stats_t *s) {
        return !s->beat_mono || gp_mono_ms() - s->beat_mono <= live_bound_ms(h->conf);
}

typedef struct check {
        const char *name;
        bool ok;
} check_t;

static size_t ready_checks(gp_endpoints_t *h, const gp_stats_t *s, check_t *c) {
        size_t n = 0;
        c[n++] = (check_t){"routing", s->running != 0};
        c[n++] = (check_t){"control-map", s->running && s->ctl_valid};
        c[n++] = (check_t){"partitions", s->running && !s->held};
        c[n++] = (check_t){"loop", live(h, s)};
        c[n++] = (check_t){"not-stopping", !gp_proxy_stopping(h->p)};
        return n;
}

static void metrics(gp_endpoints_t *h, text_t *t) {
        gp_stats_t s;
        gp_proxy_stats(h->p, &s);
        check_t c[8];
        size_t nc = ready_checks(h, &s, c);
        bool ready = true;
        for (size_t i = 0; i < nc; i++)
                ready &= c[i].ok;

        family(t, "gate_proxy_build_info", "gauge",
               "Versions, pipeline and the settings fingerprint written into every "
               "checkpoint (fp); always 1.");
        put(t,
            "gate_proxy_build_info{version=\"%s\",librdkafka=\"%s\",pipeline=\"%s\","
            "fp=\"%08" PRIx32 "\"} 1\n",
            GP_VERSION, rd_kafka_version_str(), h->conf->pipeline, gp_proxy_fingerprint(h->p));
        family(t, "gate_proxy_records_consumed_total", "counter",
               "Records read from the source topics and committed, by this process.");
        uint64_t n[3];
        for (int d = 0; d < 3; d++)
                n[d] = s.n[d] - s.n_base[d];
        put(t, "gate_proxy_records_consumed_total %" PRIu64 "\n", n[0] + n[1] + n[2]);
        family(t, "gate_proxy_records_routed_total", "counter",
               "Records committed to a colour topic by this process, by colour.");
        put(t, "gate_proxy_records_routed_total{colour=\"blue\"} %" PRIu64 "\n", n[GP_BLUE]);
        put(t, "gate_proxy_records_routed_total{colour=\"green\"} %" PRIu64 "\n", n[GP_GREEN]);
        family(t, "gate_proxy_records_dead_lettered_total", "counter",
               "Records committed to the dead-letter topic, by the code of their "
               "gate-proxy.error header.");
        for (int i = 0; i < GP_DLQ_REASONS; i++)
                put(t, "gate_proxy_records_dead_lettered_total{reason=\"%s\"} %" PRIu64 "\n",
                    gp_dlq_reasons[i], s.dlq_by[i]);
        family(t, "gate_proxy_records_late_total", "counter",
               "Records with an event time before T after the old side closed.");
        put(t, "gate_proxy_records_late_total %" PRIu64 "\n", s.late - s.late_base);
        family(t, "gate_proxy_aborted_colour_records", "gauge",
               "Records that went to the colour of an aborted transition since its T.");
        put(t, "gate_proxy_aborted_colour_records %" PRIu64 "\n", s.aborted_routed);
        family(t, "gate_proxy_redelivered_records", "gauge",
               "After an abort past T (gate.abort.redeliver): records of the aborted "
               "colour re-delivered to the survivor, over the partitions this process "
               "owns.");
        put(t, "gate_proxy_redelivered_records %" PRIu64 "\n", s.rd.sent);
        family(t, "gate_proxy_redelivery_remaining_offsets", "gauge",
               "Source offsets the re-delivery has yet to read again; 0 when done.");
        put(t, "gate_proxy_redelivery_remaining_offsets %" PRIu64 "\n", s.rd.left);
        family(t, "gate_proxy_redelivery_lost_offsets", "gauge",
               "Source offsets the re-delivery could not read again: retention had "
               "removed them.");
        put(t, "gate_proxy_redelivery_lost_offsets %" PRIu64 "\n", s.rd.lost);
        family(t, "gate_proxy_transactions_total", "counter",
               "Transactions (at-least-once: offset commits), by outcome.");
        put(t, "gate_proxy_transactions_total{outcome=\"committed\"} %" PRIu64 "\n", s.txns);
        put(t, "gate_proxy_transactions_total{outcome=\"aborted\"} %" PRIu64 "\n", s.aborts);
        family(t, "gate_proxy_watermark_timestamp_seconds", "gauge",
               "The watermark W over all partitions; NaN while unknown.");
        put_time(t, "gate_proxy_watermark_timestamp_seconds", s.wm);
        family(t, "gate_proxy_cutoff_timestamp_seconds", "gauge",
               "The cutoff T of the transition; NaN while none.");
        put_time(t, "gate_proxy_cutoff_timestamp_seconds", s.cutoff);
        family(t, "gate_proxy_phase", "gauge",
               "The gate's committed phase (1 for the one "
               "in force).");
        for (int i = 0; i < GP_PHASE__N; i++)
                put(t, "gate_proxy_phase{phase=\"%s\"} %d\n", gp_phase_name((gp_phase_t)i),
                    s.running && (int)s.phase == i);
        family(t, "gate_proxy_active_colour", "gauge",
               "The colour that new records go to (1 for it).");
        for (int i = 0; i < 2; i++)
                put(t, "gate_proxy_active_colour{colour=\"%s\"} %d\n",
                    gp_colour_name((gp_colour_t)i), s.running && (int)s.new_c == i);
        family(t, "gate_proxy_partitions_assigned", "gauge", "Source partitions read.");
        put(t, "gate_proxy_partitions_assigned %d\n", s.partitions);
        family(t, "gate_proxy_partitions_held", "gauge",
               "Source topics with new partitions held until their colour partitions exist.");
        put(t, "gate_proxy_partitions_held %d\n", s.held);
        family(t, "gate_proxy_group_rebalances_total", "counter",
               "gate.membership=group: rebalance callbacks, by what they did to this "
               "member's partitions.");
        static const char *const rb[3] = {"assigned", "revoked", "lost"};
        for (int i = 0; i < 3; i++)
                put(t, "gate_proxy_group_rebalances_total{event=\"%s\"} %" PRIu64 "\n", rb[i],
                    s.rebalances[i]);
        family(t, "gate_proxy_agreement_partitions", "gauge",
               "gate.membership=group, during a transition: source partitions of the "
               "pipeline in the last read of the committed checkpoints, with a promise "
               "(or T), closed under T, written under other settings (counted as neither).");
        put(t, "gate_proxy_agreement_partitions{state=\"read\"} %d\n", s.agree_parts);
        put(t, "gate_proxy_agreement_partitions{state=\"promised\"} %d\n", s.agree_promised);
        put(t, "gate_proxy_agreement_partitions{state=\"closed\"} %d\n", s.agree_closed);
        put(t, "gate_proxy_agreement_partitions{state=\"other_settings\"} %d\n",
            s.agree_other);
        family(t, "gate_proxy_promise_timestamp_seconds", "gauge",
               "gate.membership=group: the highest promise of a partition this instance "
               "owns while the transition waits for T; NaN while none.");
        put_time(t, "gate_proxy_promise_timestamp_seconds", s.promise);
        family(t, "gate_proxy_map_cutoff_conflict", "gauge",
               "gate.membership=group: 1 while the map stores another T than the one "
               "every partition routes by (reported, never followed).");
        put(t, "gate_proxy_map_cutoff_conflict %d\n", s.map_conflict);
        group_members(t, h->p);
        family(t, "gate_proxy_last_commit_timestamp_seconds", "gauge",
               "Time of the last commit; 0 before the first.");
        put(t, "gate_proxy_last_commit_timestamp_seconds %.3f\n",
            (double)s.last_commit_ms / 1000.0);
        family(t, "gate_proxy_bytes_consumed_total", "counter",
               "Key, value and header bytes of the records committed.");
        put(t, "gate_proxy_bytes_consumed_total %" PRIu64 "\n", s.bytes_in);
        family(t, "gate_proxy_bytes_produced_total", "counter",
               "Key, value and header bytes written (dead-letter headers included).");
        put(t, "gate_proxy_bytes_produced_total %" PRIu64 "\n", s.bytes_out);
        histogram(t, "gate_proxy_commit_duration_seconds",
                  "Time to commit a transaction (send offsets and commit; at-least-once: "
                  "flush and commit).",
                  gp_commit_le, GP_COMMIT_BUCKETS, s.commit_n, s.commit_sum_s);
        histogram(t, "gate_proxy_transaction_records", "Records per committed transaction.",
                  gp_size_le, GP_SIZE_BUCKETS, s.size_n, (double)s.size_sum);
        uint64_t w[GP_MAP_WRITES];
        gp_proxy_map_writes(h->p, w);
        static const char *const outcome[GP_MAP_WRITES] = {"written", "dropped", "invalid",
                                                           "error", "conflict"};
        family(t, "gate_proxy_control_map_writes_total", "counter",
               "Writes of status and decisions to the control map, by outcome (dropped: the "
               "map moved to another transition; invalid: it was missing or invalid; "
               "conflict: a moved resourceVersion, read again and decided again).");
        for (int i = 0; i < GP_MAP_WRITES; i++)
                put(t, "gate_proxy_control_map_writes_total{outcome=\"%s\"} %" PRIu64 "\n",
                    outcome[i], w[i]);
        family(t, "gate_proxy_control_refusals_total", "counter",
               "Control input not acted on, by reason: the map invalid, missing, out of reach "
               "or denied, another read failure, or a request the gate refused; once per "
               "change of reason.");
        for (int i = 0; i < GP_REFUSALS; i++)
                put(t, "gate_proxy_control_refusals_total{reason=\"%s\"} %" PRIu64 "\n",
                    gp_refusal_reasons[i], s.refusals[i]);
        family(t, "gate_proxy_drain_lag_records", "gauge",
               "Offsets the colour's drain group (gate.drain.group.*) had still to consume at "
               "the last drain check; NaN while unknown.");
        for (int i = 0; i < 2; i++) {
                int64_t dl = gp_proxy_drain_lag(h->p, (gp_colour_t)i);
                if (dl < 0)
                        put(t, "gate_proxy_drain_lag_records{colour=\"%s\"} NaN\n",
                            gp_colour_name((gp_colour_t)i));
                else
                        put(t, "gate_proxy_drain_lag_records{colour=\"%s\"} %" PRId64 "\n",
                            gp_colour_name((gp_colour_t)i), dl);
        }
        broker_metrics(t, h->p);
        /* Every source partition: asked again with room for all when
         * there were more than the first guess. */
        size_t cap = 256, nl;
        gp_lag_t *lags = malloc(cap * sizeof(*lags));
        while (lags && (nl = gp_proxy_lags(h->p, lags, cap)) > cap) {
                gp_lag_t *more = realloc(lags, nl * sizeof(*lags));
                if (!more)
                        nl = cap;
                else {
                        lags = more;
                        cap = nl;
                }
                if (!more)
                        break;
        }
        family(t, "gate_proxy_partition_lag_records", "gauge",
               "Per source partition: its end (last stable offset) minus the committed "
               "position, as of the last status interval.");
        for (size_t i = 0; lags && i < nl && i < cap; i++)
                put(t,
                    "gate_proxy_partition_lag_records{topic=\"%s\",partition=\"%d\"} %" PRId64
                    "\n",
                    lags[i].topic, lags[i].partition, lags[i].lag);
        free(lags);
        family(t, "gate_proxy_ready", "gauge", "1 while /readyz answers 200.");
        put(t, "gate_proxy_ready %d\n", ready);
        process_metrics(t, h);
}

/* ---- HTTP ------------------------------------------------------------------ */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int code, const char *type,
                               const char *body, size_t len, bool head) {
        struct MHD_Response *r = MHD_create_response_from_buffer(head ? 0 : len, (void *)body,
                                                                 MHD_RESPMEM_MUST_COPY);
        if (!r)
                return MHD_NO;
        MHD_add_response_header(r, "Content-Type", type);
        if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
                MHD_add_response_header(r, "Allow", "GET, HEAD");
        enum MHD_Result rc = MHD_queue_response(c, code, r);
        MHD_destroy_response(r);
        return rc;
}

/* ?verbose, with or without a value */
static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
        (void)kind;
        (void)value;
        if (!strcmp(key, "verbose")) {
                *(bool *)cls = true;
                return MHD_NO;
        }
        return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version,
                               const char *upload_data, size_t *upload_size, void **state) {
        static int first;
        gp_endpoints_t *h = cls;
        (void)version;
        (void)upload_data;
        bool get = !strcmp(method, "GET"), head = !strcmp(method, "HEAD");
        if (!get && !head) {
                static const char msg[] = "method not allowed: GET or HEAD\n";
                return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", msg,
                               sizeof(msg) - 1, false);
        }
        if (!*state) { /* the headers: answer on the next call */
                *state = &first;
                return MHD_YES;
        }
        if (*upload_size) { /* a body on a GET: dropped */
                *upload_size = 0;
                return MHD_YES;
        }
        text_t body, *t = &body;
        if (!text_init(t))
                return MHD_NO;
        enum MHD_Result rc;
        if (!strcmp(url, "/metrics")) {
                metrics(h, t);
                if (t->full) { /* never a scrape cut mid-way */
                        static const char msg[] = "the metrics did not fit in memory (64 MiB "
                                                  "at most): not sent\n";
                        gp_warn("http: /metrics: the body passed %zu bytes; answered 500",
                                t->len);
                        rc = respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", msg,
                                     sizeof(msg) - 1, head);
                } else
                        rc = respond(c, MHD_HTTP_OK,
                                     "text/plain; version=0.0.4; charset=utf-8", t->buf,
                                     t->len, head);
        } else if (!strcmp(url, "/livez") || !strcmp(url, "/healthz")) {
                gp_stats_t s;
                gp_proxy_stats(h->p, &s);
                bool ok = live(h, &s);
                if (ok)
                        put(t, "ok\n");
                else
                        put(t,
                            "the loop has made no progress for %" PRId64 " ms (bound %" PRId64
                            " ms)\n",
                            gp_mono_ms() - s.beat_mono, live_bound_ms(h->conf));
                rc = respond(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                             t->buf, t->len, head);
        } else if (!strcmp(url, "/readyz")) {
                gp_stats_t s;
                check_t ch[8];
                gp_proxy_stats(h->p, &s);
                size_t n = ready_checks(h, &s, ch);
                bool ok = true, verbose = false;
                MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, find_verbose, &verbose);
                for (size_t i = 0; i < n; i++) {
                        ok &= ch[i].ok;
                        if (verbose)
                                put(t, "[%s] %s\n", ch[i].ok ? "+" : "-", ch[i].name);
                }
                put(t, ok ? "ok\n" : "not ready\n");
                rc = respond(c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                             t->buf, t->len, head);
        } else {
                put(t, "not found: /metrics, /livez, /healthz, /readyz\n");
                rc = respond(c, MHD_HTTP_NOT_FOUND, "text/plain", t->buf, t->len, head);
        }
        free(t->buf);
        return rc;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
        char msg[512];
        (void)cls;
        vsnprintf(msg, sizeof msg, fmt, ap);
        msg[strcspn(msg, "\n")] = '\0';
        gp_warn("http: %s", msg);
}

gp_endpoints_t *gp_endpoints_start(const gp_conf_t *conf, gp_proxy_t *p, gp_err_t *err) {
        char host[256];
        const char *colon = strrchr(conf->http_listen, ':');
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        snprintf(host, sizeof host, "%.*s", (int)(colon - conf->http_listen),
                 conf->http_listen);
        int gai = getaddrinfo(host, colon + 1, &hints, &ai);
        if (gai) {
                gp_err_set(err, GP_ERR_FAIL, "http.listen: %s: %s", conf->http_listen,
                           gai_strerror(gai));
                return NULL;
        }
        gp_endpoints_t *h = calloc(1, sizeof(*h));
        if (!h) {
                freeaddrinfo(ai);
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        h->p = p;
        h->conf = conf;
        h->start_s = (double)gp_now_ms() / 1000.0;
        h->d = MHD_start_daemon(
                MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, handler, h,
                MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                /* a restart binds at once, whatever connections
                                 * of the last process linger in TIME_WAIT */
                MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
                MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_END);
        freeaddrinfo(ai);
        if (!h->d) {
                gp_err_set(err, GP_ERR_FAIL,
                           "http.listen: cannot listen on %s (in use, or not an "
                           "address of this host)",
                           conf->http_listen);
                free(h);
                return NULL;
        }
        gp_info("serving /metrics, /livez, /healthz and /readyz on http://%s",
                conf->http_listen);
        return h;
}

void gp_endpoints_stop(gp_endpoints_t *h) {
        if (!h)
                return;
        MHD_stop_daemon(h->d);
        free(h);
}
