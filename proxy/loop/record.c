/* proxy/loop/record.c: one record: its event time (JSON path, header, Kafka
 * timestamp, Avro with a local schema or the registry's), the gate's route,
 * the produce to the same partition of its colour topic, or to the
 * dead-letter topic with the reason in its headers (docs/DESIGN.md,
 * Reading the event time). Also the delivery reports. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/control.h"
#include "gate/redeliver.h"
#include "proxy/loop/internal.h"
#include "proxy/base/log.h"

void gp_record_delivered(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk;
        gp_proxy_t *p = opaque;
        if (m->err) {
                p->dr_errors++;
                gp_debug("delivery failed: %s", rd_kafka_err2str(m->err));
                return;
        }
        if (!p->drain)
                return;
        for (int t = 0; t < p->n_topics; t++)
                for (int c = 0; c < 2; c++) {
                        gp_tslot_t *ts = &p->topics[t];
                        if (m->partition >= ts->n ||
                            (ts->out[c] != m->rkt &&
                             strcmp(ts->out_name[c], rd_kafka_topic_name(m->rkt))))
                                continue;
                        gp_pslot_t *ps = &ts->parts[m->partition];
                        if (m->offset >= 0 && m->offset + 1 > ps->work.wrote[c])
                                ps->work.wrote[c] = m->offset + 1;
                        return;
                }
}

static int produce(gp_proxy_t *p, rd_kafka_topic_t *rkt, int32_t part,
                   const rd_kafka_message_t *m, int64_t ts, rd_kafka_headers_t *hdrs) {
        int64_t full_since = -1;
        for (;;) {
                rd_kafka_resp_err_t e = rd_kafka_producev(
                        p->prod, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(part),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                        RD_KAFKA_V_VALUE(m->payload, m->len),
                        RD_KAFKA_V_KEY(m->key, m->key_len), RD_KAFKA_V_TIMESTAMP(ts),
                        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
                if (!e)
                        return 0;
                if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                        /* Kafka takes records slower than they come: wait
                         * for deliveries, but not past the point where the
                         * window could still commit (the broker aborts a
                         * transaction older than its timeout). A producer
                         * that takes nothing for that long (stuck getting a
                         * producer id) is left to the abort, which waits
                         * on Kafka with its own bound. */
                        int64_t now = gp_mono_ms(),
                                bound = p->eos ? p->txn_timeout_ms : GP_KAFKA_WAIT_MS;
                        if (full_since < 0)
                                full_since = now;
                        if (now - full_since <= bound) {
                                /* A bounded wait on Kafka: progress for /livez. */
                                gp_proxy_beat(p);
                                rd_kafka_poll(p->prod, 5);
                                continue;
                        }
                        if (hdrs)
                                rd_kafka_headers_destroy(hdrs);
                        gp_warn("produce to %s/%d: the producer's queue has stayed full for "
                                "%" PRId64 " ms (no record delivered to Kafka in that "
                                "time); the window is aborted",
                                rd_kafka_topic_name(rkt), part, now - full_since);
                        return -1;
                }
                if (hdrs)
                        rd_kafka_headers_destroy(hdrs);
                gp_warn("produce to %s/%d: %s", rd_kafka_topic_name(rkt), part,
                        rd_kafka_err2str(e));
                return -1;
        }
}

/* Key, value and headers, in bytes. */
static size_t record_size(rd_kafka_message_t *m) {
        size_t n = m->len + m->key_len;
        rd_kafka_headers_t *h = NULL;
        const char *name;
        const void *v;
        size_t vl;
        if (!rd_kafka_message_headers(m, &h))
                for (size_t i = 0; !rd_kafka_header_get_all(h, i, &name, &v, &vl); i++)
                        n += strlen(name) + vl;
        return n;
}

/* The Avro schema of a value: the local one, or its registry id's (the
 * loop fetched every id of the batch before handling it). 0, or -1 with
 * *bad set. */
static int avro_schema(gp_proxy_t *p, gp_record_view_t *rv, int64_t mono, gp_bad_t *bad) {
        uint32_t id;
        const uint8_t *body;
        size_t n;
        gp_schema_ref_t ref;
        if (!p->reg) {
                rv->avro = &p->avro_local;
                return 0;
        }
        if (gp_avro_frame(rv->value, rv->value_len, &id, &body, &n)) {
                bad->code = GP_BAD_BAD_FRAME;
                bad->why = "not the Confluent wire format (byte 0 and a 4-byte schema id)";
                return -1;
        }
        if (!gp_registry_lookup(p->reg, id, mono, &ref)) {
                bad->code = GP_BAD_REGISTRY_UNAVAILABLE;
                bad->why = "the schema was not fetched";
                return -1;
        }
        if (!ref.avro) {
                bad->code = ref.code;
                bad->why = ref.why;
                return -1;
        }
        rv->avro = ref.avro;
        rv->value = body;
        rv->value_len = n;
        return 0;
}

static void pause_at(gp_proxy_t *p, const char *topic, int32_t part, int64_t offset,
                     bool pause);

int gp_record_handle(gp_proxy_t *p, gp_tslot_t *t, rd_kafka_message_t *m, int64_t now,
                     int64_t mono) {
        gp_pslot_t *ps = &t->parts[m->partition];
        rd_kafka_timestamp_type_t tst;
        int64_t kts = rd_kafka_message_timestamp(m, &tst);
        gp_record_view_t rv = {
                m->payload, m->len, tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : kts,
                NULL,       0,      NULL};
        rd_kafka_headers_t *hdrs = NULL;
        int64_t ts = GP_TS_NONE;
        gp_bad_t bad = {0};
        bool late;
        char reason[160];
        size_t size = record_size(m);
        bool refuse = size > (size_t)p->conf->record_max_bytes;

        if (refuse) {
                snprintf(reason, sizeof reason,
                         "%zu bytes, more than gate.record.max.bytes=%" PRId64, size,
                         p->conf->record_max_bytes);
                bad.code = GP_BAD_TOO_LARGE;
                bad.why = reason;
        } else if (p->ex.kind == GP_ET_AVRO) {
                if (avro_schema(p, &rv, mono, &bad) || gp_extract_ts(&p->ex, &rv, &ts, &bad))
                        ts = GP_TS_NONE;
        } else {
                if (p->ex.kind == GP_ET_HEADER) {
                        rd_kafka_headers_t *h = NULL;
                        if (!rd_kafka_message_headers(m, &h))
                                rd_kafka_header_get_last(h, p->ex.header, &rv.header,
                                                         &rv.header_len);
                }
                if (gp_extract_ts(&p->ex, &rv, &ts, &bad))
                        ts = GP_TS_NONE;
        }
        if (!refuse && gp_gate_future(&p->gconf, ts, now)) {
                snprintf(reason, sizeof reason,
                         "event time %" PRId64
                         " is more than gate.event-time.max-future.ms=%" PRId64
                         " past the wall clock %" PRId64,
                         ts, p->gconf.max_future_ms, now);
                bad.code = GP_BAD_FUTURE_TIME;
                bad.why = reason;
                refuse = true;
        }
        if (ps->work.st.ro) {
                /* Read again after an abort past T (gate/redeliver.h): to
                 * the survivor only what went to the abandoned colour. */
                gp_rd_t rd = refuse && m->offset < ps->work.st.ap
                                     ? GP_RD_SKIP
                                     : gp_redeliver_record(&ps->work.st, &p->gate, &p->gconf,
                                                           m->offset, ts);
                if (rd != GP_RD_ROUTE) {
                        ps->work.pos = m->offset + 1;
                        if (rd == GP_RD_SKIP)
                                return 0;
                        rd_kafka_message_detach_headers(m, &hdrs);
                        gp_wcount_record(&p->win, size, size);
                        return produce(p, t->out[p->gate.new_c], m->partition, m,
                                       tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? 0 : kts,
                                       hdrs);
                }
        }
        if (!refuse && p->group && p->gate.phase == GP_PHASE_WAITING &&
            (ps->work.st.promise == GP_TS_NONE ||
             gp_agree_route(ts, ps->work.st.promise, GP_TS_NONE) == GP_AGREE_HOLD)) {
                /* At or above the partition's promise (or no promise made
                 * yet): neither colour until T is known; the partition
                 * stops here, this record is read again on release. */
                ps->ahold = true;
                ps->ahold_unpromised = ps->work.st.promise == GP_TS_NONE;
                pause_at(p, t->name, m->partition, m->offset, true);
                gp_log_at(GP_LOG_DEBUG, t->name, m->partition,
                          "%s/%d held at offset %" PRId64 " (event time %" PRId64
                          ", promise %" PRId64 ") until T is agreed",
                          t->name, m->partition, m->offset, ts, ps->work.st.promise);
                return GP_RECORD_HELD;
        }
        gp_dest_t d =
                refuse ? (late = false, gp_gate_reject(&ps->work.st, now))
                       : gp_gate_route(&p->gate, &p->gconf, &ps->work.st, ts, now, &late);
        rd_kafka_message_detach_headers(m, &hdrs);
        ps->work.pos = m->offset + 1;
        gp_wcount_record(&p->win, size, size);
        if (d != GP_DEST_DLQ)
                return produce(p, t->out[d], m->partition, m,
                               tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? 0 : kts, hdrs);

        char why[512], src[300];
        if (bad.code)
                snprintf(why, sizeof(why), "%s: %s", gp_bad_name(bad.code), bad.why);
        else
                snprintf(why, sizeof(why),
                         "late: event time %" PRId64 " is before the cutoff "
                         "%" PRId64 " and the old side is closed",
                         ts, p->gate.cutoff);
        snprintf(src, sizeof(src), "%s/%d/%" PRId64, t->name, m->partition, m->offset);
        if (!hdrs)
                hdrs = rd_kafka_headers_new(2);
        rd_kafka_header_add(hdrs, GP_HDR_ERROR, -1, why, -1);
        rd_kafka_header_add(hdrs, GP_HDR_SOURCE, -1, src, -1);
        p->win.out += strlen(GP_HDR_ERROR) + strlen(why) + strlen(GP_HDR_SOURCE) + strlen(src);
        p->win_dlq[bad.code ? GP_DLQ_OF(bad.code) : GP_DLQ_LATE]++;
        return produce(p, p->dlq, m->partition % p->dlq_n, m,
                       tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? 0 : kts, hdrs);
}

/* Pauses (or resumes) one partition, and on pausing moves its position
 * back to offset: what was fetched past it is fetched again on resume. */
static void pause_at(gp_proxy_t *p, const char *topic, int32_t part, int64_t offset,
                     bool pause) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, part)->offset = offset;
        rd_kafka_resp_err_t e = pause ? rd_kafka_pause_partitions(p->cons, l)
                                      : rd_kafka_resume_partitions(p->cons, l);
        if (e)
                gp_log_at(GP_LOG_WARN, topic, part, "%s %s/%d: %s", pause ? "pause" : "resume",
                          topic, part, rd_kafka_err2str(e));
        if (pause && offset >= 0) {
                rd_kafka_error_t *se = rd_kafka_seek_partitions(p->cons, l, GP_KAFKA_WAIT_MS);
                if (se) {
                        gp_log_at(GP_LOG_WARN, topic, part, "seek %s/%d to %" PRId64 ": %s",
                                  topic, part, offset, rd_kafka_error_string(se));
                        rd_kafka_error_destroy(se);
                }
        }
        rd_kafka_topic_partition_list_destroy(l);
}

bool gp_record_schema_unknown(gp_proxy_t *p, const rd_kafka_message_t *m, int64_t mono,
                              uint32_t *id) {
        gp_schema_ref_t ref;
        const uint8_t *body;
        size_t len;
        /* Not framed: dead-lettered as bad-frame when handled. */
        return !gp_avro_frame(m->payload, m->len, id, &body, &len) &&
               !gp_registry_lookup(p->reg, *id, mono, &ref);
}

void gp_record_hold(gp_proxy_t *p, gp_tslot_t *t, const rd_kafka_message_t *m, uint32_t id) {
        gp_pslot_t *ps = &t->parts[m->partition];
        gp_registry_want(p->reg, id);
        ps->hold = true;
        ps->hold_id = id;
        p->n_hold++;
        pause_at(p, t->name, m->partition, m->offset, true);
        gp_log_at(GP_LOG_DEBUG, t->name, m->partition,
                  "%s/%d held at offset %" PRId64 " for schema id %" PRIu32, t->name,
                  m->partition, m->offset, id);
}

int gp_record_release(gp_proxy_t *p, int64_t now, int64_t mono) {
        int gave_up = gp_registry_collect(p->reg);
        if (gave_up && p->conf->registry_exit) {
                gp_error("schema registry out of reach and schema.registry.on-failure=exit: "
                         "exiting (code %d); a restart goes on from the last commit",
                         GP_EXIT_FATAL);
                return -1;
        }
        gp_schema_ref_t ref;
        for (int t = 0; t < p->n_topics && p->n_hold; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        if (!ps->hold)
                                continue;
                        if (!gp_registry_lookup(p->reg, ps->hold_id, mono, &ref)) {
                                /* Waiting is not idleness: the watermark
                                 * waits for this partition's records. */
                                ps->work.st.last_wall = now;
                                gp_registry_want(p->reg, ps->hold_id); /* if it was full */
                                continue;
                        }
                        ps->hold = false;
                        p->n_hold--;
                        pause_at(p, p->topics[t].name, i, -1, false);
                        gp_log_at(GP_LOG_DEBUG, p->topics[t].name, i,
                                  "%s/%d resumed: schema id %" PRIu32 " answered",
                                  p->topics[t].name, i, ps->hold_id);
                }
        return 0;
}

void gp_record_hold_again(gp_proxy_t *p) {
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        if (p->topics[t].parts[i].hold || p->topics[t].parts[i].ahold)
                                pause_at(p, p->topics[t].name, i, -1, true);
}

void gp_record_agree_release(gp_proxy_t *p, bool all) {
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        if (!ps->ahold || (!all && !(ps->ahold_unpromised &&
                                                     ps->work.st.promise != GP_TS_NONE)))
                                continue;
                        ps->ahold = false;
                        if (!ps->hold && !ps->colourless)
                                pause_at(p, p->topics[t].name, i, -1, false);
                }
}
