/* proxy/loop/redeliver.c: the re-delivery after an abort past T, on the
 * loop's side (gate/redeliver.h, docs/DESIGN.md, Abort re-delivery): each
 * partition's marks when the gate it routes by changes, the move back to
 * where its split began, what retention left of it, and the progress. The
 * records themselves go through gp_record_handle. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/redeliver.h"
#include "proxy/base/log.h"
#include "proxy/loop/internal.h"

/* The first offset the source partition holds, -1 when the broker does
 * not say (the re-read then starts where it would, and a gap is read as
 * the consumer finds it). */
static int64_t low_offset(gp_proxy_t *p, const char *topic, int32_t part) {
        int64_t lo = -1, hi = -1;
        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(p->cons, topic, part, &lo,
                                                                 &hi, GP_KAFKA_WAIT_MS);
        if (e) {
                gp_log_at(GP_LOG_WARN, topic, part,
                          "%s/%d: the first offset it holds is unknown (%s): the re-delivery "
                          "cannot tell what retention removed",
                          topic, part, rd_kafka_err2str(e));
                return -1;
        }
        return lo;
}

/* A re-delivery that begins (or goes on) at *pos: past what retention
 * removed, said with its count. */
static void start_at(gp_proxy_t *p, const char *topic, int32_t part, gp_colour_t to,
                     gp_part_t *st, int64_t *pos) {
        uint64_t lost = st->rd[1];
        int64_t from = gp_redeliver_from(st, *pos, low_offset(p, topic, part));
        if (st->rd[1] != lost)
                gp_log_at(GP_LOG_WARN, topic, part,
                          "%s/%d: offsets %" PRId64 " to %" PRId64 " are no longer in the "
                          "source (retention): %" PRIu64 " offset(s) the re-delivery to %s "
                          "cannot read again are lost%s",
                          topic, part, *pos, from - 1, st->rd[1] - lost, gp_colour_name(to),
                          st->ro ? "; the rest is re-delivered" : "");
        *pos = from;
}

static void said_begin(const char *topic, int32_t part, gp_colour_t to, const gp_part_t *st) {
        gp_log_at(GP_LOG_INFO, topic, part,
                  "%s/%d: re-delivering to %s what went to %s: source offsets %" PRId64
                  " to %" PRId64 " read again (split from %" PRId64 "%s)",
                  topic, part, gp_colour_name(to), gp_colour_name(gp_colour_other(to)), st->sp,
                  st->ap - 1, st->sp, st->cp >= 0 ? ", closed at a later offset" : "");
}

int gp_redeliver_boundary(gp_proxy_t *p, const gp_gate_t *was, gp_err_t *err) {
        rd_kafka_topic_partition_list_t *seek = NULL;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        if (!ps->owned || ps->work.pos < 0)
                                continue;
                        gp_part_t *st = &ps->work.st;
                        if (gp_redeliver_settle(st, ps->work.pos))
                                p->need_commit = true;
                        bool ro = st->ro;
                        if (!gp_redeliver_mark(st, was, &p->gate, ps->work.pos,
                                               p->conf->abort_redeliver)) {
                                if (ro != st->ro)
                                        p->need_commit = true;
                                continue;
                        }
                        said_begin(p->topics[t].name, i, p->gate.new_c, st);
                        p->rd_began = true;
                        int64_t at = st->sp;
                        start_at(p, p->topics[t].name, i, p->gate.new_c, st, &at);
                        ps->work.pos = at;
                        p->need_commit = true;
                        if (!seek)
                                seek = rd_kafka_topic_partition_list_new(4);
                        rd_kafka_topic_partition_list_add(seek, p->topics[t].name, i)->offset =
                                at;
                }
        if (!seek)
                return 0;
        gp_errcode_t rc =
                gp_seek(p, seek, "back to where their split began, for the re-delivery", err);
        rd_kafka_topic_partition_list_destroy(seek);
        return rc ? -1 : 0;
}

void gp_redeliver_taken(gp_proxy_t *p, const char *topic, int32_t part, gp_part_t *st,
                        const gp_gate_t *line, const gp_gate_t *g, int64_t *pos) {
        if (gp_redeliver_mark(st, line, g, *pos, p->conf->abort_redeliver)) {
                *pos = st->sp;
                said_begin(topic, part, g->new_c, st);
        } else if (st->ro)
                gp_log_at(GP_LOG_INFO, topic, part,
                          "%s/%d: the re-delivery to %s goes on from offset %" PRId64
                          " (%" PRId64 " offset(s) left, %" PRIu64 " record(s) sent so far)",
                          topic, part, gp_colour_name(g->new_c), *pos, st->ap - *pos,
                          st->rd[0]);
        else
                return;
        p->rd_began = true;
        /* Beginning, or going on from the committed offset after a
         * restart: what retention left. */
        start_at(p, topic, part, g->new_c, st, pos);
}

void gp_redeliver_progress(gp_proxy_t *p, gp_redelivery_t *out) {
        *out = (gp_redelivery_t){0};
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        const gp_part_t *st = &ps->done.st;
                        if (!ps->owned || st->ap < 0)
                                continue;
                        out->marked++;
                        out->sent += st->rd[0];
                        out->lost += st->rd[1];
                        if (st->ro) {
                                out->open++;
                                if (st->ap > ps->done.pos)
                                        out->left += (uint64_t)(st->ap - ps->done.pos);
                        }
                }
}
