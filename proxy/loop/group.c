/* proxy/loop/group.c: gate.membership=group, one pipeline over any number
 * of instances that are members of one Kafka consumer group (docs/DESIGN.md,
 * Scale-out). The group protocol decides who reads what (cooperative-
 * sticky: only moved partitions stop); the offsets and checkpoints go with
 * each transaction with this member's group metadata, so a member whose
 * generation has moved on cannot commit (KIP-447); a partition's next owner
 * reads its committed offset and checkpoint with RequireStable
 * (read_committed), which waits for the previous owner's transaction.
 *
 * The rebalance callback runs on the loop's thread, inside
 * rd_kafka_consume_batch_queue (or rd_kafka_consumer_close):
 *   revoke: commit the open window (abort and rewind if the assignment
 *     was lost, or the commit fails), drop the partitions' state,
 *     incremental_unassign;
 *   assign: end the open window the same way, read the partitions'
 *     committed offsets and checkpoints, take their decisions into the gate
 *     (gp_gate_adopt), then incremental_assign at those offsets; the next
 *     window commits at once, so every owned partition's checkpoint carries
 *     the same decisions.
 * Each callback takes the member's group metadata anew, and commits carry
 * that, not the consumer's newest: the generation of the assignment this
 * process's state reflects, so a rebalance it has not seen yet makes them
 * fail (abort, rewind) rather than succeed for partitions another member
 * owns now. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "proxy/base/fault.h"
#include "proxy/loop/internal.h"
#include "proxy/base/log.h"

/* How often rd_kafka_committed is asked before the assignment fails (each
 * waits up to GP_KAFKA_WAIT_MS; a crashed member's transaction is pending
 * for up to transaction.timeout.ms). */
#define COMMITTED_TRIES 4

size_t gp_group_owned(const gp_proxy_t *p) {
        return p->n_pptrs;
}

bool gp_group_owns_all(const gp_proxy_t *p) {
        size_t all = 0;
        for (int t = 0; t < p->n_topics; t++)
                all += (size_t)p->topics[t].n;
        return p->n_pptrs == all && all > 0;
}

gp_errcode_t gp_group_subscribe(gp_proxy_t *p, gp_err_t *err) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(p->n_topics);
        for (int t = 0; t < p->n_topics; t++)
                rd_kafka_topic_partition_list_add(l, p->topics[t].name, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t e = rd_kafka_subscribe(p->cons, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (e)
                return gp_err_set(err, GP_ERR_KAFKA,
                                  "subscribing to the source topics as group %s: %s",
                                  p->conf->group_id, rd_kafka_err2str(e));
        return GP_OK;
}

static gp_tslot_t *slot_of(gp_proxy_t *p, const char *topic) {
        for (int t = 0; t < p->n_topics; t++)
                if (!strcmp(p->topics[t].name, topic))
                        return &p->topics[t];
        return NULL;
}

static void fail(gp_proxy_t *p, int code) {
        if (!p->rb_exit)
                p->rb_exit = code;
        p->rb_ended = true;
}

/* The group metadata of this member as of now (its generation). */
static void take_metadata(gp_proxy_t *p) {
        rd_kafka_consumer_group_metadata_t *m = rd_kafka_consumer_group_metadata(p->cons);
        if (!m)
                return;
        if (GP_FAULT_FAILS("metadata")) {
                /* The test build: a snapshot as librdkafka gives it while
                 * it has reset the member id and generation. */
                rd_kafka_consumer_group_metadata_destroy(m);
                m = rd_kafka_consumer_group_metadata_new(p->conf->group_id);
        }
        if (p->cgmd)
                rd_kafka_consumer_group_metadata_destroy(p->cgmd);
        p->cgmd = m;
        p->cgmd_refused = false;
}

bool gp_group_metadata_fenced(gp_proxy_t *p) {
#if RD_KAFKA_VERSION >= 0x020a0000
        /* Older librdkafka has no accessors; group mode refuses to start
         * on it (docs/DESIGN.md, librdkafka). */
        const char *id = p->cgmd ? rd_kafka_consumer_group_metadata_member_id(p->cgmd) : NULL;
        int32_t gen = p->cgmd ? rd_kafka_consumer_group_metadata_generation_id(p->cgmd) : -1;
        if (id && *id && gen >= 0)
                return true;
        if (!p->cgmd_refused)
                gp_warn("not committing: the group metadata of this member's last rebalance "
                        "names no member (generation %" PRId32 "), so the broker would take "
                        "its offsets even if the group had moved on without it; the window "
                        "is aborted until the next rebalance says what this member owns",
                        gen);
        p->cgmd_refused = true;
        return false;
#else
        (void)p;
        return true;
#endif
}

bool gp_group_consumer_fatal(gp_proxy_t *p) {
        char buf[512];
        rd_kafka_resp_err_t e = rd_kafka_fatal_error(p->cons, buf, sizeof buf);
        if (!e)
                return false;
        char sid[256] = "?";
        size_t n = sizeof sid;
        if (rd_kafka_conf_get(rd_kafka_conf(p->cons), "group.instance.id", sid, &n) !=
            RD_KAFKA_CONF_OK)
                snprintf(sid, sizeof sid, "?");
        if (e == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID) {
                gp_error("fenced in group %s: another member joined with this one's "
                         "group.instance.id %s (%s); this instance stops without committing "
                         "(code %d). Give every instance its own kafka.group.instance.id "
                         "(for example the pod name), or leave it unset",
                         p->conf->group_id, sid, buf, GP_EXIT_FENCED);
                fail(p, GP_EXIT_FENCED);
        } else {
                gp_error("the consumer of group %s failed for good: %s: %s; exiting (code %d) "
                         "for a restart, which goes on from the last commit",
                         p->conf->group_id, rd_kafka_err2name(e), buf, GP_EXIT_FATAL);
                fail(p, GP_EXIT_FATAL);
        }
        return true;
}

/* Commits the open window (abort and rewind when it fails); with lost,
 * aborts it. Partitions in gone are dropped before an abort's rewind. */
static void end_window(gp_proxy_t *p, bool lost, rd_kafka_topic_partition_list_t *gone);

static void drop(gp_proxy_t *p, rd_kafka_topic_partition_list_t *gone) {
        for (int i = 0; gone && i < gone->cnt; i++) {
                gp_tslot_t *t = slot_of(p, gone->elems[i].topic);
                int k = gone->elems[i].partition;
                if (!t || k >= t->n || !t->parts[k].owned)
                        continue;
                gp_pslot_t *ps = &t->parts[k];
                /* /metrics counts what this process routed: the partition's
                 * counters leave with it, the total stays (modulo 2^64). */
                pthread_mutex_lock(&p->lock);
                for (int d = 0; d < 3; d++)
                        p->stats.n_base[d] -= ps->done.st.n[d];
                p->stats.late_base -= ps->done.st.late;
                pthread_mutex_unlock(&p->lock);
                if (ps->hold) {
                        ps->hold = false;
                        p->n_hold--;
                }
                ps->ahold = false;
                ps->owned = false;
                ps->colourless = false;
                ps->work = ps->done;
        }
}

static void end_window(gp_proxy_t *p, bool lost, rd_kafka_topic_partition_list_t *gone) {
        /* Every rebalance, even one that moves nothing of this member's,
         * ends the batch being read: the loop drops it and seeks every
         * owned partition to its committed position (gp_rewind). The
         * callback runs inside the batch read, and the records that read
         * returns after it move the consumer's position past themselves
         * though the loop drops them unrouted, so without the seek a
         * partition that did not move would go on past records never
         * handed over (docs/DESIGN.md, Scale-out). */
        p->rb_ended = true;
        if (p->txn_begin < 0 && !p->need_commit)
                return;
        gp_txres_t r = GP_TX_ABORT;
        if (!lost && p->txn_begin >= 0)
                r = gp_delivery_commit(p);
        if (r == GP_TX_ABORT) {
                drop(p, gone);
                r = gp_delivery_abort(p);
                p->rb_rewound = true;
                if (lost)
                        gp_warn("assignment lost (the group moved on without this member): "
                                "the "
                                "open transaction is aborted, nothing of it committed");
        }
        if (r == GP_TX_FATAL)
                fail(p, gp_delivery_exit_code(p));
        p->need_commit = false;
        p->rb_ended = true;
}

static void after_change(gp_proxy_t *p) {
        if (gp_topics_rebuild(p))
                gp_error("out of memory after a rebalance");
        if (!p->n_pptrs)
                p->gate_known = false;
        pthread_mutex_lock(&p->lock);
        p->stats.partitions = (int)p->n_pptrs;
        pthread_mutex_unlock(&p->lock);
}

static void on_revoke(gp_proxy_t *p, rd_kafka_topic_partition_list_t *parts) {
        if (p->closing) {
                /* gp_proxy_destroy: the loop's state may be gone already. */
                rd_kafka_error_t *e = rd_kafka_incremental_unassign(p->cons, parts);
                if (e)
                        rd_kafka_error_destroy(e);
                return;
        }
        bool lost = rd_kafka_assignment_lost(p->cons);
        /* The generation that revokes: nobody else owns these partitions in
         * it until this member has let them go, so the last window's
         * offsets for them are committed in it. */
        if (!p->closing)
                take_metadata(p);
        if (!p->closing && !p->rb_exit)
                end_window(p, lost, parts);
        drop(p, parts);
        /* librdkafka keeps an application's pause on a partition across
         * unassign and a later assign (librdkafka #1849): a partition held
         * here would come back paused for good. What gate-proxy paused it
         * resumes as it lets go. */
        rd_kafka_resume_partitions(p->cons, parts);
        rd_kafka_error_t *e = rd_kafka_incremental_unassign(p->cons, parts);
        if (e) {
                gp_error("incremental unassign of %d partition(s): %s", parts->cnt,
                         rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
                if (!p->closing)
                        fail(p, GP_EXIT_FATAL);
        }
        after_change(p);
        if (!p->closing) {
                gp_info("%s %d partition(s); %zu owned now", lost ? "lost" : "revoked",
                        parts->cnt, p->n_pptrs);
        }
}

/* Committed offsets and checkpoints of l (RequireStable: waits for a
 * transaction still open on them), tried COMMITTED_TRIES times. */
static rd_kafka_resp_err_t committed(gp_proxy_t *p, rd_kafka_topic_partition_list_t *l) {
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
        for (int i = 0; i < COMMITTED_TRIES; i++) {
                gp_proxy_beat(p);
                e = rd_kafka_committed(p->cons, l, GP_KAFKA_WAIT_MS);
                for (int k = 0; !e && k < l->cnt; k++)
                        e = l->elems[k].err;
                if (!e)
                        return e;
                gp_warn("reading the committed offsets of %d partition(s) of group %s: %s "
                        "(%d of %d)",
                        l->cnt, p->conf->group_id, rd_kafka_err2str(e), i + 1,
                        COMMITTED_TRIES);
        }
        return e;
}

/* Takes the decisions of one committed line into g. -1: a conflict or a
 * line that is no checkpoint (fail() called). */
static int adopt(gp_proxy_t *p, gp_gate_t *g, bool *known, bool lines_only,
                 const rd_kafka_topic_partition_t *tp, gp_part_t *part, gp_gate_t *line_out) {
        gp_gate_t line;
        gp_part_t scratch;
        char why[300];
        if (gp_ckpt_decode(tp->metadata, tp->metadata_size, &line, part ? part : &scratch, why,
                           sizeof(why))) {
                gp_error("%s/%d: the offset committed for group %s holds no gate-proxy "
                         "checkpoint (%s); is another application using this group? set "
                         "gate.group.id; exiting (code %d)",
                         tp->topic, tp->partition, p->conf->group_id, why, GP_EXIT_STATE);
                fail(p, GP_EXIT_STATE);
                return -1;
        }
        if (line_out)
                *line_out = line;
        /* A gate made of lines alone (this member routed none of them
         * yet) is the latest transition's, whichever line comes first. */
        if (!*known || (lines_only && line.tid > g->tid)) {
                int64_t seq = *known && g->seq > line.seq ? g->seq : line.seq;
                *g = line;
                g->seq = seq;
                *known = true;
                return 0;
        }
        if (gp_gate_adopt(g, &line, why, sizeof(why)) < 0) {
                gp_error("%s/%d: %s: two instances must never route by different cutoffs; "
                         "exiting (code %d) without routing it",
                         tp->topic, tp->partition, why, GP_EXIT_STATE);
                fail(p, GP_EXIT_STATE);
                return -1;
        }
        return 0;
}

/* Every partition's committed line, for a partition that comes without
 * one: the pipeline's decisions are in the others'. Sets *history when
 * some partition has one. */
static int adopt_all(gp_proxy_t *p, gp_gate_t *g, bool *known, bool lines_only,
                     bool *history) {
        rd_kafka_topic_partition_list_t *all = rd_kafka_topic_partition_list_new(8);
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        rd_kafka_topic_partition_list_add(all, p->topics[t].name, i);
        int rc = 0;
        rd_kafka_resp_err_t e = committed(p, all);
        if (e) {
                gp_error(
                        "reading the committed checkpoints of group %s: %s; exiting (code %d) "
                        "for a restart",
                        p->conf->group_id, rd_kafka_err2str(e), GP_EXIT_FATAL);
                fail(p, GP_EXIT_FATAL);
                rc = -1;
        }
        for (int k = 0; !rc && k < all->cnt; k++) {
                if (all->elems[k].offset < 0)
                        continue;
                *history = true;
                rc = adopt(p, g, known, lines_only, &all->elems[k], NULL, NULL);
        }
        rd_kafka_topic_partition_list_destroy(all);
        return rc;
}

static void on_assign(gp_proxy_t *p, rd_kafka_topic_partition_list_t *parts) {
        if (!p->closing)
                take_metadata(p);
        if (!p->closing && !p->rb_exit)
                end_window(p, false, NULL);
        if (p->closing || p->rb_exit || !parts->cnt) {
                rd_kafka_error_t *e = rd_kafka_incremental_assign(p->cons, parts);
                if (e)
                        rd_kafka_error_destroy(e);
                return;
        }

        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_copy(parts);
        gp_gate_t g = p->gate;
        bool known = p->gate_known && p->n_pptrs > 0, fresh = false, history = false;
        bool lines_only = !known;
        int64_t now = gp_now_ms();
        rd_kafka_resp_err_t e = committed(p, l);
        if (e) {
                gp_error("reading the committed offsets of %d assigned partition(s) of group "
                         "%s: %s; exiting (code %d) for a restart",
                         l->cnt, p->conf->group_id, rd_kafka_err2str(e), GP_EXIT_FATAL);
                fail(p, GP_EXIT_FATAL);
                goto out;
        }
        /* Slots big enough, colour topics checked; lines decoded. */
        gp_part_t *parts_st = calloc((size_t)l->cnt, sizeof(*parts_st));
        gp_gate_t *lines = calloc((size_t)l->cnt, sizeof(*lines));
        if (!parts_st || !lines) {
                free(parts_st);
                free(lines);
                fail(p, GP_EXIT_FATAL);
                goto out;
        }
        for (int i = 0; i < l->cnt; i++) {
                rd_kafka_topic_partition_t *tp = &l->elems[i];
                gp_tslot_t *t = slot_of(p, tp->topic);
                int need = 0;
                for (int k = 0; t && k < l->cnt; k++)
                        if (!strcmp(l->elems[k].topic, t->name) &&
                            l->elems[k].partition >= need)
                                need = l->elems[k].partition + 1;
                gp_err_t gerr;
                if (!t || (need > t->placed && gp_topics_assigned_beyond(p, t, need, &gerr))) {
                        gp_error("%s/%d assigned but not a source partition here (or out of "
                                 "memory); exiting (code %d)",
                                 tp->topic, tp->partition, GP_EXIT_FATAL);
                        fail(p, GP_EXIT_FATAL);
                        free(parts_st);
                        free(lines);
                        goto out;
                }
                if (tp->offset < 0) {
                        fresh = true;
                        continue;
                }
                history = true;
                if (adopt(p, &g, &known, lines_only, tp, &parts_st[i], &lines[i])) {
                        free(parts_st);
                        free(lines);
                        goto out;
                }
        }
        if (fresh && adopt_all(p, &g, &known, lines_only, &history)) {
                free(parts_st);
                free(lines);
                goto out;
        }
        if (!known)
                gp_gate_from_control(&g, gp_ctl_current(p->ctl), now);

        for (int i = 0; i < l->cnt; i++) {
                rd_kafka_topic_partition_t *tp = &l->elems[i];
                gp_tslot_t *t = slot_of(p, tp->topic);
                gp_pslot_t *ps = &t->parts[tp->partition];
                ps->work.wrote[0] = ps->work.wrote[1] = -1;
                if (tp->offset >= 0) {
                        ps->work.st = parts_st[i];
                        ps->work.pos = tp->offset;
                        /* The line's decisions against the pipeline's: a
                         * re-delivery begins or goes on (gate/redeliver.h). */
                        gp_redeliver_taken(p, tp->topic, tp->partition, &ps->work.st,
                                           &lines[i], &g, &ps->work.pos);
                        tp->offset = ps->work.pos;
                } else {
                        /* Never committed: a partition of a pipeline with a
                         * history is one that appeared, read from its start;
                         * otherwise the first start (gate.source.start). */
                        gp_part_init(&ps->work.st, now);
                        /* One that appeared after T made no promise, so T
                         * does not cover it: it sends nothing to the old
                         * colour, which may be torn down already
                         * (gate/agree.h). */
                        ps->work.st.closed = history && g.phase == GP_PHASE_SPLIT;
                        ps->work.pos = gp_topics_start_offset(
                                p, t->name, tp->partition,
                                !history && p->conf->source_start == GP_START_LATEST);
                        tp->offset = ps->work.pos;
                }
                ps->work.st.last_wall = now;
                ps->done = ps->work;
                ps->owned = true;
                ps->hold = false;
                ps->ahold = false;
                /* Held (paused) until discovery finds the colour topics grown. */
                ps->colourless = tp->partition >= t->placed;
                pthread_mutex_lock(&p->lock);
                for (int d = 0; d < 3; d++)
                        p->stats.n_base[d] += ps->work.st.n[d];
                p->stats.late_base += ps->work.st.late;
                pthread_mutex_unlock(&p->lock);
        }
        free(parts_st);
        free(lines);

        for (int i = 0; i < l->cnt; i++)
                gp_debug("assigning %s/%d at offset %" PRId64, l->elems[i].topic,
                         l->elems[i].partition, l->elems[i].offset);
        rd_kafka_error_t *ae = rd_kafka_incremental_assign(p->cons, l);
        if (ae) {
                gp_error("incremental assign of %d partition(s): %s; exiting (code %d) for a "
                         "restart",
                         l->cnt, rd_kafka_error_string(ae), GP_EXIT_FATAL);
                rd_kafka_error_destroy(ae);
                fail(p, GP_EXIT_FATAL);
                goto out;
        }
        /* The pause of an assigned partition is what gate-proxy holds
         * now, whatever librdkafka kept from an earlier ownership (see
         * on_revoke): resumed, then paused again only if colourless. */
        rd_kafka_resume_partitions(p->cons, l);
        for (int i = 0; i < l->cnt; i++) {
                gp_tslot_t *t = slot_of(p, l->elems[i].topic);
                if (t->parts[l->elems[i].partition].colourless) {
                        rd_kafka_topic_partition_list_t *one =
                                rd_kafka_topic_partition_list_new(1);
                        rd_kafka_topic_partition_list_add(one, t->name, l->elems[i].partition);
                        rd_kafka_pause_partitions(p->cons, one);
                        rd_kafka_topic_partition_list_destroy(one);
                }
        }
        gp_gate_t before = p->gate;
        if (history)
                gp_info("restored checkpoint seq %" PRId64 " from %d partitions: phase %s, "
                        "%s -> %s, T=%" PRId64,
                        g.seq, l->cnt, gp_phase_name(g.phase), gp_colour_name(g.old_c),
                        gp_colour_name(g.new_c), g.cutoff == GP_TS_NONE ? -1 : g.cutoff);
        p->gate = p->cgate = g;
        p->gate_known = true;
        after_change(p);
        gp_delivery_committed(p);
        /* The next window commits at once: every owned partition's line
         * then carries the same decisions. */
        p->need_commit = true;
        p->rb_ended = true;
        gp_info("assigned %d partition(s); %zu owned (%s); phase %s, %s -> %s, T=%" PRId64
                "%s",
                l->cnt, p->n_pptrs, gp_group_owns_all(p) ? "all" : "not all",
                gp_phase_name(p->gate.phase), gp_colour_name(p->gate.old_c),
                gp_colour_name(p->gate.new_c),
                p->gate.cutoff == GP_TS_NONE ? -1 : p->gate.cutoff,
                before.phase != p->gate.phase || before.cutoff != p->gate.cutoff
                        ? " (decisions taken from the committed checkpoints)"
                        : "");
out:
        rd_kafka_topic_partition_list_destroy(l);
        if (p->rb_exit) {
                /* Nothing of these is read: assigned with no position would
                 * read from the committed offset without the gate state. */
                rd_kafka_error_t *ue = rd_kafka_incremental_assign(p->cons, parts);
                if (ue)
                        rd_kafka_error_destroy(ue);
        }
}

void gp_group_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t *parts, void *opaque) {
        gp_proxy_t *p = opaque;
        (void)rk;
        pthread_mutex_lock(&p->lock);
        p->stats.rebalances[err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS ? 0
                            : rd_kafka_assignment_lost(p->cons)         ? 2
                                                                        : 1]++;
        pthread_mutex_unlock(&p->lock);
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
                on_assign(p, parts);
        else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
                on_revoke(p, parts);
        else {
                gp_error("rebalance: %s", rd_kafka_err2str(err));
                on_revoke(p, parts);
        }
        if (p->members && !p->closing) {
                /* The members watch tells this instance from the others. */
                char *id = rd_kafka_memberid(p->cons);
                gp_members_self(p->members, id);
                if (id)
                        rd_kafka_mem_free(p->cons, id);
        }
        gp_proxy_beat(p);
}

void gp_group_colours_grown(gp_proxy_t *p) {
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_tslot_t *ts = &p->topics[t];
                        gp_pslot_t *ps = &ts->parts[i];
                        if (!ps->owned || !ps->colourless || i >= ts->placed)
                                continue;
                        ps->colourless = false;
                        rd_kafka_topic_partition_list_t *one =
                                rd_kafka_topic_partition_list_new(1);
                        rd_kafka_topic_partition_list_add(one, ts->name, i);
                        rd_kafka_resume_partitions(p->cons, one);
                        rd_kafka_topic_partition_list_destroy(one);
                        gp_log_at(GP_LOG_DEBUG, ts->name, i, "%s/%d resumed: placed", ts->name,
                                  i);
                }
}
