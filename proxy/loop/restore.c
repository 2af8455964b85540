/* proxy/loop/restore.c: the consumer's assignment (every partition, no group
 * membership), the committed offsets and checkpoints read at start, and
 * the offsets to commit, each carrying its partition's checkpoint
 * (docs/DESIGN.md, The checkpoint: the truth about decisions made). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "proxy/base/fault.h"
#include "proxy/loop/internal.h"
#include "proxy/base/log.h"

static rd_kafka_topic_partition_list_t *positions(gp_proxy_t *p, bool committed) {
        rd_kafka_topic_partition_list_t *l =
                rd_kafka_topic_partition_list_new((int)p->n_pptrs);
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        if (p->topics[t].parts[i].owned)
                                rd_kafka_topic_partition_list_add(l, p->topics[t].name, i)
                                        ->offset = committed ? p->topics[t].parts[i].done.pos
                                                             : p->topics[t].parts[i].work.pos;
        return l;
}

gp_errcode_t gp_assign_all(gp_proxy_t *p, gp_err_t *err) {
        rd_kafka_topic_partition_list_t *l = positions(p, true);
        /* The test build can fail it (proxy/base/fault.h). */
        bool injected = GP_FAULT_FAILS("assign");
        rd_kafka_resp_err_t e =
                injected ? RD_KAFKA_RESP_ERR__FAIL : rd_kafka_assign(p->cons, l);
        if (e) {
                rd_kafka_topic_partition_list_destroy(l);
                /* The consumer reads from where it was, not from the last
                 * commit: no record may be routed until a restart (every
                 * caller ends the process on this error). */
                return gp_err_set(err, GP_ERR_KAFKA,
                                  "assigning %zu partition(s) at their committed offsets: %s",
                                  p->n_pptrs,
                                  injected ? "failed by GP_FAULT_FAIL=assign"
                                           : rd_kafka_err2str(e));
        }
        gp_record_hold_again(p);
        rd_kafka_topic_partition_list_destroy(l);
        return GP_OK;
}

/* How often a seek that timed out is made again (each waits up to
 * GP_KAFKA_WAIT_MS). */
#define SEEK_TRIES 5

/* True for a seek error that means "not answered in time": the seek was
 * queued and goes on in librdkafka, so asking again is safe (the same
 * offsets) and nothing is read from a wrong position meanwhile (librdkafka
 * applies a seek before the partition's next fetch). */
static bool seek_timed_out(rd_kafka_resp_err_t e) {
        return e == RD_KAFKA_RESP_ERR__TIMED_OUT || e == RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE;
}

gp_errcode_t gp_seek(gp_proxy_t *p, rd_kafka_topic_partition_list_t *l, const char *what,
                     gp_err_t *err) {
        char why[300] = "";
        for (int tries = 1;; tries++) {
                /* The test build can fail it (proxy/base/fault.h). */
                bool injected = GP_FAULT_FAILS("seek");
                gp_proxy_beat(p); /* waiting on Kafka is progress for /livez */
                rd_kafka_error_t *e =
                        injected ? rd_kafka_error_new(RD_KAFKA_RESP_ERR__TIMED_OUT,
                                                      "timed out (GP_FAULT_FAIL=seek)")
                                 : rd_kafka_seek_partitions(p->cons, l, GP_KAFKA_WAIT_MS);
                /* Asked again only when every error is a timeout. */
                bool again = e ? seek_timed_out(rd_kafka_error_code(e)) : true;
                why[0] = '\0';
                if (e)
                        snprintf(why, sizeof why, "%s", rd_kafka_error_string(e));
                for (int i = 0; !e && i < l->cnt; i++) {
                        rd_kafka_resp_err_t pe = l->elems[i].err;
                        if (!pe)
                                continue;
                        if (!why[0] || !seek_timed_out(pe))
                                snprintf(why, sizeof why, "%s/%d: %s", l->elems[i].topic,
                                         l->elems[i].partition, rd_kafka_err2str(pe));
                        if (!seek_timed_out(pe))
                                again = false;
                }
                if (e)
                        rd_kafka_error_destroy(e);
                if (!why[0])
                        return GP_OK;
                if (!again || tries >= SEEK_TRIES)
                        break;
                gp_warn("seeking %d partition(s) %s: %s; the seek goes on in librdkafka, "
                        "asking again (%d of %d)",
                        l->cnt, what, why, tries + 1, SEEK_TRIES);
                for (int i = 0; i < l->cnt; i++)
                        l->elems[i].err = RD_KAFKA_RESP_ERR_NO_ERROR;
        }
        return gp_err_set(err, GP_ERR_KAFKA, "seeking %d partition(s) %s: %s", l->cnt, what,
                          why);
}

gp_errcode_t gp_rewind(gp_proxy_t *p, gp_err_t *err) {
        if (!p->group)
                return gp_assign_all(p, err);
        rd_kafka_topic_partition_list_t *l = positions(p, true);
        gp_errcode_t rc = GP_OK;
        if (l->cnt) {
                bool injected = GP_FAULT_FAILS("assign");
                if (injected)
                        rc = gp_err_set(err, GP_ERR_KAFKA,
                                        "seeking %d partition(s) back to their committed "
                                        "offsets: failed by GP_FAULT_FAIL=assign",
                                        l->cnt);
                else
                        rc = gp_seek(p, l, "back to their committed offsets", err);
        }
        rd_kafka_topic_partition_list_destroy(l);
        return rc;
}

/* Reads the committed offsets and checkpoints of every partition. */
gp_errcode_t gp_restore(gp_proxy_t *p, const gp_control_t *ctl, gp_err_t *err) {
        rd_kafka_topic_partition_list_t *l = positions(p, true);
        rd_kafka_resp_err_t e = rd_kafka_committed(p->cons, l, GP_KAFKA_WAIT_MS);
        int64_t best_seq = -1, now = gp_now_ms();
        int restored = 0;
        gp_gate_t *lines = calloc(l->cnt > 0 ? (size_t)l->cnt : 1, sizeof(*lines));
        if (!lines) {
                rd_kafka_topic_partition_list_destroy(l);
                return gp_err_set(err, GP_ERR_KAFKA, "out of memory reading checkpoints");
        }

        if (e) {
                gp_err_set(err, GP_ERR_KAFKA, "reading committed offsets of group %s: %s",
                           p->conf->group_id, rd_kafka_err2str(e));
                rd_kafka_topic_partition_list_destroy(l);
                return GP_ERR_KAFKA;
        }
        for (int i = 0; i < l->cnt; i++) {
                rd_kafka_topic_partition_t *tp = &l->elems[i];
                gp_tslot_t *t = NULL;
                for (int k = 0; k < p->n_topics; k++)
                        if (!strcmp(p->topics[k].name, tp->topic))
                                t = &p->topics[k];
                gp_pslot_t *ps = &t->parts[tp->partition];
                if (tp->err) {
                        gp_err_set(err, GP_ERR_KAFKA, "committed offset of %s/%d: %s",
                                   tp->topic, tp->partition, rd_kafka_err2str(tp->err));
                        goto fail;
                }
                if (tp->offset < 0)
                        continue; /* never committed: keep the fresh start */
                gp_gate_t g;
                char derr[200];
                if (gp_ckpt_decode(tp->metadata, tp->metadata_size, &lines[i], &ps->work.st,
                                   derr, sizeof(derr))) {
                        gp_err_set(err, GP_ERR_INVALID,
                                   "%s/%d: the offset committed for group %s holds no "
                                   "gate-proxy checkpoint (%s); is another application "
                                   "using this group? set gate.group.id",
                                   tp->topic, tp->partition, p->conf->group_id, derr);
                        goto fail;
                }
                g = lines[i];
                ps->work.st.last_wall = now;
                ps->work.pos = tp->offset;
                ps->done = ps->work;
                restored++;
                for (int d = 0; d < 3; d++)
                        p->stats.n_base[d] += ps->work.st.n[d];
                p->stats.late_base += ps->work.st.late;
                /* The decisions of every line taken together (gp_gate_adopt):
                 * with one writer, the highest seq's; of the latest
                 * transition, whichever line comes first. */
                if (best_seq < 0 || g.tid > p->gate.tid) {
                        int64_t seq = best_seq > g.seq ? best_seq : g.seq;
                        p->gate = g;
                        p->gate.seq = seq;
                } else if (gp_gate_adopt(&p->gate, &g, derr, sizeof(derr)) < 0) {
                        gp_err_set(err, GP_ERR_INVALID, "%s/%d: %s", tp->topic, tp->partition,
                                   derr);
                        goto fail;
                }
                best_seq = p->gate.seq;
        }
        /* Each line's own decisions against the pipeline's: an abort past
         * T that a partition has not routed by yet begins its re-delivery
         * here; an open one goes on (gate/redeliver.h). */
        for (int i = 0; best_seq >= 0 && i < l->cnt; i++) {
                rd_kafka_topic_partition_t *tp = &l->elems[i];
                gp_tslot_t *t = NULL;
                for (int k = 0; k < p->n_topics; k++)
                        if (!strcmp(p->topics[k].name, tp->topic))
                                t = &p->topics[k];
                gp_pslot_t *ps = &t->parts[tp->partition];
                if (tp->offset < 0)
                        continue;
                int64_t at = ps->work.pos;
                gp_redeliver_taken(p, tp->topic, tp->partition, &ps->work.st, &lines[i],
                                   &p->gate, &at);
                if (at != ps->work.pos || ps->work.st.ro != ps->done.st.ro ||
                    ps->work.st.ap != ps->done.st.ap)
                        p->need_commit = true;
                ps->work.pos = at;
                ps->done = ps->work;
        }
        free(lines);
        rd_kafka_topic_partition_list_destroy(l);
        if (best_seq < 0) {
                gp_gate_from_control(&p->gate, ctl, now);
                gp_info("no checkpoint in group %s: starting fresh, phase %s, owner %s",
                        p->conf->group_id, gp_phase_name(p->gate.phase),
                        gp_colour_name(gp_gate_owner(&p->gate)));
        } else {
                gp_info("restored checkpoint seq %" PRId64 " from %d partitions: phase %s, "
                        "%s -> %s, T=%" PRId64,
                        best_seq, restored, gp_phase_name(p->gate.phase),
                        gp_colour_name(p->gate.old_c), gp_colour_name(p->gate.new_c),
                        p->gate.cutoff == GP_TS_NONE ? -1 : p->gate.cutoff);
        }
        p->cgate = p->gate;
        return 0;
fail:
        free(lines);
        rd_kafka_topic_partition_list_destroy(l);
        return gp_err_code(err);
}

/* The offsets to commit, each carrying the checkpoint of its partition
 * and this instance's settings fingerprint. */
rd_kafka_topic_partition_list_t *gp_checkpoint_list(gp_proxy_t *p, const gp_gate_t *g) {
        rd_kafka_topic_partition_list_t *l =
                rd_kafka_topic_partition_list_new((int)p->n_pptrs);
        char line[GP_CKPT_MAX];
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        if (!ps->owned || ps->work.pos < 0)
                                continue; /* not ours, or position unknown: nothing to commit */
                        rd_kafka_topic_partition_t *tp =
                                rd_kafka_topic_partition_list_add(l, p->topics[t].name, i);
                        tp->offset = ps->work.pos;
                        /* Written under this instance's settings, whoever
                         * wrote the line it was read from. */
                        gp_part_t st = ps->work.st;
                        st.fp = p->fp;
                        int n = gp_ckpt_encode(g, &st, line, sizeof(line));
                        if (n < 0 || !(tp->metadata = malloc((size_t)n))) {
                                rd_kafka_topic_partition_list_destroy(l);
                                return NULL;
                        }
                        memcpy(tp->metadata, line, (size_t)n);
                        tp->metadata_size = (size_t)n;
                }
        return l;
}
