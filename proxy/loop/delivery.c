/* proxy/loop/delivery.c: the two delivery modes behind one interface
 * (proxy/loop/internal.h, gp_deliver_ops_t) and the commit rule they share: a
 * window that has begun is committed, with the offsets, each carrying its
 * partition's checkpoint; an abortable error aborts it and rewinds the
 * consumer and the gate to the last commit (docs/DESIGN.md, The data path).
 *
 *   exactly-once: a Kafka transaction holds the records and the offsets;
 *   at-least-once: the producer is flushed, then the offsets committed; a
 *     failed delivery re-sends from the last commit. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy/base/fault.h"
#include "proxy/loop/internal.h"
#include "proxy/loop/watchdog.h"
#include "proxy/base/log.h"

/* The group coordinator refused the offsets of a member whose generation
 * moved on (KIP-447): the partitions may be another member's now. */
static bool group_fenced(rd_kafka_resp_err_t c) {
        return c == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
               c == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
               c == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID ||
               c == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS;
}

static gp_txres_t txn_error(const char *what, rd_kafka_error_t *e) {
        if (!e)
                return GP_TX_OK;
        gp_txres_t r = rd_kafka_error_txn_requires_abort(e) ? GP_TX_ABORT
                       : rd_kafka_error_is_retriable(e)     ? GP_TX_ABORT
                                                            : GP_TX_FATAL;
        /* Never committed and never gone on with: aborted and rewound;
         * the rebalance that follows says what this member owns. */
        if (group_fenced(rd_kafka_error_code(e)))
                r = GP_TX_ABORT;
        if (rd_kafka_error_is_fatal(e))
                r = GP_TX_FATAL;
        gp_log(r == GP_TX_FATAL ? GP_LOG_ERROR : GP_LOG_WARN, "%s: %s", what,
               rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        return r;
}

/* How often a transactional call that keeps failing with a plain
 * retriable error (librdkafka 2.0.2: _TIMED_OUT while the coordinator is
 * away, each call waiting GP_KAFKA_WAIT_MS) is made again before giving up. */
#define TXN_TRIES 10

/* True (e destroyed) when e is a plain retriable error and the call may
 * be made again: commit_transaction and abort_transaction are resumable
 * (the operation goes on in the background and the next call picks it
 * up; any other transactional call meanwhile fails with _CONFLICT), and
 * send_offsets_to_transaction is retried with the same offsets.
 * False (e kept) for an abortable or fatal error, or after TXN_TRIES. */
static bool txn_retry(gp_proxy_t *p, const char *what, rd_kafka_error_t *e, int *tries) {
        gp_proxy_beat(p); /* waiting on Kafka is progress for /livez */
        if (!rd_kafka_error_is_retriable(e) || rd_kafka_error_txn_requires_abort(e) ||
            rd_kafka_error_is_fatal(e) || group_fenced(rd_kafka_error_code(e)) ||
            ++*tries >= TXN_TRIES)
                return false;
        /* A pause first, growing to 3 s: an error that comes at once
         * (_TRANSPORT while the broker is down) would use up the calls in
         * no time; each call itself waits up to GP_KAFKA_WAIT_MS. */
        int64_t ms = *tries * 500 < 3000 ? *tries * 500 : 3000;
        gp_warn("%s: %s (%s); calling it again in %" PRId64 " ms (%d of %d)", what,
                rd_kafka_error_string(e), rd_kafka_err2name(rd_kafka_error_code(e)), ms,
                *tries + 1, TXN_TRIES);
        rd_kafka_error_destroy(e);
        gp_sleep_ms(ms);
        return true;
}

static gp_txres_t eos_begin(gp_proxy_t *p) {
        return txn_error("begin", rd_kafka_begin_transaction(p->prod));
}

/* The exit code for a fatal producer error (see proxy.h). */
int gp_delivery_exit_code(gp_proxy_t *p) {
        char buf[512];
        rd_kafka_resp_err_t e = rd_kafka_fatal_error(p->prod, buf, sizeof(buf));
        bool fenced = e == RD_KAFKA_RESP_ERR__FENCED ||
                      e == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
                      e == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
        int64_t open_ms = p->txn_begin < 0 ? -1 : gp_mono_ms() - p->txn_begin;
        if (fenced && open_ms >= p->txn_timeout_ms) {
                /* The coordinator aborts a transaction older than its timeout
                 * and bumps the producer epoch, so the old epoch looks fenced
                 * (librdkafka 2.0.2: INVALID_PRODUCER_EPOCH on the next
                 * produce, reported as fatal _FENCED). No other instance is
                 * involved: a restart goes on from the last commit. */
                gp_error("the transaction outlived transaction.timeout.ms (was the process "
                         "paused?); exiting for a restart: open for %" PRId64 " ms, "
                         "transaction.timeout.ms=%" PRId64 " (%s); a broker out of reach "
                         "that long has the same effect",
                         open_ms, p->txn_timeout_ms, buf);
                return GP_EXIT_FATAL;
        }
        if (fenced) {
                gp_error("fenced: another gate-proxy with transactional.id %s has started "
                         "(%s); this instance stops without committing",
                         p->conf->transactional_id, buf);
                return GP_EXIT_FENCED;
        }
        if (e)
                gp_error("fatal Kafka error: %s: %s; exiting (code %d) for a restart, which "
                         "goes on from the last commit",
                         rd_kafka_err2name(e), buf, GP_EXIT_FATAL);
        return GP_EXIT_FATAL;
}

static gp_txres_t eos_commit(gp_proxy_t *p, rd_kafka_topic_partition_list_t *l) {
        rd_kafka_error_t *e;
        int tries = 0;
        if (p->group && !gp_group_metadata_fenced(p))
                return GP_TX_ABORT;
        while ((e = rd_kafka_send_offsets_to_transaction(p->prod, l, p->cgmd,
                                                         GP_KAFKA_WAIT_MS)) &&
               txn_retry(p, "send offsets", e, &tries))
                ;
        gp_txres_t r = txn_error("send offsets", e);
        GP_FAULT("before-commit");
        if (r != GP_TX_OK)
                return r;
        /* A retriable commit error is never turned into an abort: the
         * commit may still complete on the broker, and an abort would
         * rewind over committed records. */
        tries = 0;
        while ((e = rd_kafka_commit_transaction(p->prod, GP_KAFKA_WAIT_MS)) &&
               txn_retry(p, "commit", e, &tries))
                ;
        if (e && rd_kafka_error_is_retriable(e) && !rd_kafka_error_txn_requires_abort(e) &&
            !rd_kafka_error_is_fatal(e)) {
                gp_error("commit: %s; still not complete after %d calls of %d ms: exiting "
                         "(code %d) for a restart, which goes on from whatever the broker "
                         "committed",
                         rd_kafka_error_string(e), TXN_TRIES, GP_KAFKA_WAIT_MS, GP_EXIT_FATAL);
                rd_kafka_error_destroy(e);
                return GP_TX_FATAL;
        }
        return txn_error("commit", e);
}

static gp_txres_t eos_abort(gp_proxy_t *p) {
        rd_kafka_error_t *e;
        int tries = 0;
        while ((e = rd_kafka_abort_transaction(p->prod, GP_KAFKA_WAIT_MS)) &&
               txn_retry(p, "abort", e, &tries))
                ;
        if (e && !rd_kafka_error_is_fatal(e)) {
                gp_error("abort: %s (%s)%s: exiting (code %d) for a restart, which goes on "
                         "from the last commit",
                         rd_kafka_error_string(e), rd_kafka_err2name(rd_kafka_error_code(e)),
                         rd_kafka_error_is_retriable(e) ? "; still not complete" : "",
                         GP_EXIT_FATAL);
                rd_kafka_error_destroy(e);
                return GP_TX_FATAL;
        }
        return txn_error("abort", e) == GP_TX_OK ? GP_TX_OK : GP_TX_FATAL;
}

static gp_txres_t alo_begin(gp_proxy_t *p) {
        (void)p;
        return GP_TX_OK;
}

static gp_txres_t alo_commit(gp_proxy_t *p, rd_kafka_topic_partition_list_t *l) {
        rd_kafka_resp_err_t e = rd_kafka_flush(p->prod, GP_KAFKA_WAIT_MS);
        gp_txres_t r = GP_TX_OK;
        if (e || p->dr_errors) {
                gp_warn("at-least-once: %" PRIu64 " deliveries failed (%s); re-sending from "
                        "the last commit",
                        p->dr_errors, rd_kafka_err2str(e));
                r = GP_TX_ABORT;
        } else if ((e = rd_kafka_commit(p->cons, l, 0))) {
                gp_warn("offset commit: %s", rd_kafka_err2str(e));
                r = GP_TX_ABORT;
        }
        p->dr_errors = 0;
        return r;
}

static gp_txres_t alo_abort(gp_proxy_t *p) {
        rd_kafka_purge(p->prod, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_flush(p->prod, GP_KAFKA_WAIT_MS);
        p->dr_errors = 0;
        return GP_TX_OK;
}

const double gp_commit_le[GP_COMMIT_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                0.5,   1,    2.5,   5,    10};
const double gp_size_le[GP_SIZE_BUCKETS] = {1, 10, 100, 1000, 10000, 100000, 1000000};

const char *const gp_dlq_reasons[GP_DLQ_REASONS] = {"not-json",
                                                    "field-missing",
                                                    "wrong-type",
                                                    "bad-time",
                                                    "header-missing",
                                                    "no-timestamp",
                                                    "bad-frame",
                                                    "bad-avro",
                                                    "unknown-schema",
                                                    "bad-schema",
                                                    "registry-unavailable",
                                                    "too-large",
                                                    "future-time",
                                                    "late",
                                                    "other"};

const char *const gp_refusal_reasons[GP_REFUSALS] = {"invalid", "missing", "unreachable",
                                                     "denied",  "error",   "request"};

const gp_deliver_ops_t gp_delivery_eos = {"exactly-once", eos_begin, eos_commit, eos_abort};
const gp_deliver_ops_t gp_delivery_alo = {"at-least-once", alo_begin, alo_commit, alo_abort};

gp_txres_t gp_delivery_begin(gp_proxy_t *p) {
        gp_txres_t r = p->dv->begin(p);
        if (r == GP_TX_OK)
                p->txn_begin = gp_mono_ms();
        return r;
}

void gp_delivery_committed(gp_proxy_t *p) {
        uint64_t n[3] = {0}, late = 0, ab = 0;
        bool promised = false;
        p->aborting_since = -1;
        p->aborts_in_row = 0;
        p->cgate = p->gate;
        gp_status_committed(p->status, &p->cgate);
        p->need_commit = false;
        p->txn_begin = -1;
        gp_colour_t aborted = gp_colour_other(p->gate.new_c);
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        ps->done = ps->work;
                        if (!ps->owned)
                                continue;
                        for (int d = 0; d < 3; d++)
                                n[d] += ps->work.st.n[d];
                        late += ps->work.st.late;
                        ab += ps->work.st.since_t[aborted];
                        promised |= ps->work.st.promise != GP_TS_NONE;
                }
        if (promised && p->gate.phase == GP_PHASE_WAITING)
                GP_FAULT("promised"); /* a promise is committed */
        pthread_mutex_lock(&p->lock);
        memcpy(p->stats.n, n, sizeof(n));
        p->stats.late = late;
        p->stats.in = n[0] + n[1] + n[2];
        p->stats.aborted_routed = p->gate.phase == GP_PHASE_ABORTED ? ab : 0;
        gp_redelivery_t was = p->stats.rd;
        gp_redeliver_progress(p, &p->stats.rd);
        p->stats.phase = p->gate.phase;
        p->stats.cutoff = p->gate.cutoff;
        p->stats.old_c = p->gate.old_c;
        p->stats.new_c = p->gate.new_c;
        p->stats.last_commit_ms = gp_now_ms();
        p->stats.partitions = (int)p->n_pptrs;
        pthread_mutex_unlock(&p->lock);
        gp_log_set_state(gp_phase_name(p->gate.phase), gp_colour_name(p->gate.new_c));
        bool had = was.open || p->rd_began; /* begun, and perhaps done, since */
        p->rd_began = false;
        if (had && !p->stats.rd.open)
                gp_info("re-delivery done: the %" PRIu64 " record(s) that had gone to %s are "
                        "in %s too, after the records it had; %" PRIu64
                        " source offset(s) lost to retention",
                        p->stats.rd.sent, gp_colour_name(gp_colour_other(p->gate.new_c)),
                        gp_colour_name(p->gate.new_c), p->stats.rd.lost);
}

gp_txres_t gp_delivery_commit(gp_proxy_t *p) {
        gp_gate_t g = p->gate;
        g.seq = p->cgate.seq + 1;
        rd_kafka_topic_partition_list_t *l = gp_checkpoint_list(p, &g);
        if (!l) {
                gp_error("out of memory for the checkpoint: exiting (code %d) for a restart",
                         GP_EXIT_FATAL);
                return GP_TX_FATAL;
        }
        GP_FAULT("before-send-offsets");
        int64_t t0 = gp_mono_ms();
        gp_txres_t r = p->dv->commit(p, l);
        double took = (double)(gp_mono_ms() - t0) / 1000.0;
        rd_kafka_topic_partition_list_destroy(l);
        if (r == GP_TX_OK) {
                p->gate.seq = g.seq;
                GP_FAULT("after-commit");
                int cb = 0, sb = 0;
                while (cb < GP_COMMIT_BUCKETS && took > gp_commit_le[cb])
                        cb++;
                while (sb < GP_SIZE_BUCKETS && (double)p->win.records > gp_size_le[sb])
                        sb++;
                pthread_mutex_lock(&p->lock);
                p->stats.txns++;
                p->stats.commit_n[cb]++;
                p->stats.commit_sum_s += took;
                p->stats.size_n[sb]++;
                p->stats.size_sum += p->win.records;
                p->stats.bytes_in += p->win.in;
                p->stats.bytes_out += p->win.out;
                for (int i = 0; i < GP_DLQ_REASONS; i++)
                        p->stats.dlq_by[i] += p->win_dlq[i];
                pthread_mutex_unlock(&p->lock);
                p->win = (gp_wcount_t){0};
                memset(p->win_dlq, 0, sizeof(p->win_dlq));
                gp_delivery_committed(p);
        }
        return r;
}

/* Aborts in a row with no commit between them for longer than the
 * watchdog's bound are no progress either: librdkafka can keep a stale view
 * of the cluster for good after a broker was fenced for a moment
 * (librdkafka #5430: a partition whose leader was -1 once is never sent to
 * again, its records time out, each window aborts). A new process has a
 * fresh view; the commit it goes on from is the last one. */
static bool aborting_too_long(gp_proxy_t *p) {
        int64_t now = gp_mono_ms();
        if (p->aborting_since < 0)
                p->aborting_since = now;
        p->aborts_in_row++;
        int64_t bound = gp_watchdog_bound_ms();
        if (now - p->aborting_since <= bound)
                return false;
        gp_error("no transaction has committed for %" PRId64 " ms: %d aborts in a row, "
                 "longer than the watchdog's %" PRId64 " ms (a broker away that long, or "
                 "a Kafka client whose view of the cluster went stale, librdkafka #5430); "
                 "exiting (code %d) for a restart, which goes on from the last commit",
                 now - p->aborting_since, p->aborts_in_row, bound, GP_EXIT_FATAL);
        return true;
}

gp_txres_t gp_delivery_abort(gp_proxy_t *p) {
        if (aborting_too_long(p))
                return GP_TX_FATAL;
        /* With no transaction open (a rebalance ending a window that
         * never began) there is nothing to abort, and librdkafka refuses
         * abort_transaction in that state (_STATE): only the rewind. */
        if (p->txn_begin >= 0 && p->dv->abort(p) != GP_TX_OK)
                return GP_TX_FATAL;
        /* Back to the last commit: consumer positions and gate state (the
         * time of each partition's last record stays: it is wall time). */
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        gp_pslot_t *ps = &p->topics[t].parts[i];
                        int64_t lw = ps->work.st.last_wall;
                        ps->work = ps->done;
                        ps->work.st.last_wall = lw;
                }
        p->gate = p->cgate;
        p->need_commit = false;
        p->txn_begin = -1;
        p->win = (gp_wcount_t){0};
        memset(p->win_dlq, 0, sizeof(p->win_dlq));
        gp_err_t err;
        if (gp_rewind(p, &err)) {
                /* The consumer would go on past what was aborted: those
                 * records would be lost. A restart reads from the commit. */
                gp_error("rewinding the consumer after an abort failed: %s; exiting (code %d) "
                         "for a restart, which goes on from the last commit",
                         err.msg, GP_EXIT_FATAL);
                return GP_TX_FATAL;
        }
        pthread_mutex_lock(&p->lock);
        p->stats.aborts++;
        pthread_mutex_unlock(&p->lock);
        gp_info("transaction aborted; rewound to the last commit");
        return GP_TX_OK;
}
