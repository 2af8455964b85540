/* proxy/proxy.c: the gate-proxy loop.
 *
 *   between transactions: read the control map, compute the watermark,
 *     let the gate decide (T, the close), discover partitions, publish
 *     committed decisions and status;
 *   one transaction: consume up to gate.commit.records records or for
 *     gate.commit.interval.ms, route each, produce it to the same
 *     partition of its colour topic, then send the offsets, each carrying
 *     the gate checkpoint, and commit. An abortable error aborts, rewinds
 *     the consumer and the gate to the last commit, and goes on.
 *
 * The consumer assigns itself every partition (no group membership); the
 * group id only names where offsets and checkpoints are committed.
 * Uses librdkafka, gate/, k8s/ (through proxy/control.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "gate/checkpoint.h"
#include "gate/extract.h"
#include "gate/timeparse.h"
#include "proxy/control.h"
#include "proxy/fault.h"
#include "proxy/fetchwake.h"
#include "proxy/avsc.h"
#include "proxy/log.h"
#include "proxy/proxy.h"
#include "proxy/registry.h"

#define BATCH 1024
/* Longest wait for a batch to fill: a record that arrives alone is produced
 * within this, not at the end of the transaction window (make bench's
 * latency runs). A full batch returns at once. */
#define GP_WAIT_MS 5
#define TIMEOUT_MS 30000

typedef struct pslot {
        gp_part_t st, cst;  /* working and committed partition state */
        int64_t pos, cpos;  /* next offset to read: working and committed */
        /* One past the last record this process wrote to partition i of each
         * colour topic (delivery reports), working and committed; -1: none.
         * Kept only with a drain group (gate.drain.group.*). */
        int64_t wrote[2], cwrote[2];
} pslot_t;

typedef struct tslot {
        char *name;
        char out_name[2][256];
        rd_kafka_topic_t *out[2]; /* producer handles: blue, green */
        rd_kafka_topic_t *in;     /* the consumer's handle (pointer identity) */
        int n;                    /* partitions assigned */
        int out_n[2];             /* partitions of the colour topics */
        pslot_t *parts;
        char held[512];           /* why new partitions are held, "" if none */
        int64_t held_logged;      /* mono ms of the last log of held */
} tslot_t;

struct gp_proxy {
        const gp_conf_t *conf;
        gp_gate_conf_t gconf;
        gp_extract_t ex;
        gp_avro_t avro_local;  /* gate.avro.schema compiled; n_nodes 0: none */
        gp_registry_t *reg;    /* schema.registry.url; NULL: none */
        rd_kafka_t *prod, *cons;
        rd_kafka_queue_t *queue;
        gp_fetchwake_t *wake; /* NULL: librdkafka's own fetch pacing */
        rd_kafka_consumer_group_metadata_t *cgmd;
        rd_kafka_topic_t *dlq;
        int dlq_n;
        gp_ctl_t *ctl;

        tslot_t *topics;
        int n_topics;
        gp_part_t **pptrs; /* every partition's working state, for the gate */
        size_t n_pptrs;

        gp_gate_t gate, cgate; /* working and committed decisions */
        bool need_commit;
        bool eos;
        atomic_int stop; /* set by gp_proxy_stop: a signal handler or another thread */

        int64_t next_discovery, next_status, next_publish, next_ctl_warn;
        int64_t next_ctl_check; /* inside a transaction window */
        int ctl_pending;        /* a poll result seen inside the window */
        char last_refusal[256];
        char ctl_error[512]; /* the control-map error last logged */

        uint64_t dr_errors; /* at-least-once: failed deliveries since the last commit */
        rd_kafka_t *drain[2];   /* per colour: reads gate.drain.group.*'s offsets; NULL: no check */
        int64_t drain_next;     /* mono ms of the next drain check */
        char drain_msg[512];    /* the drain progress last logged */
        char drain_warning[400]; /* gate-proxy.warning: a colour without a drain check */
        int64_t txn_begin;      /* gp_mono_ms() when the open transaction began, -1: none */
        int64_t txn_timeout_ms; /* the producer's effective transaction.timeout.ms */

        pthread_mutex_t lock; /* guards stats */
        gp_stats_t stats;
};

/* ---- small helpers ---------------------------------------------------- */

/* Did the configuration set librdkafka property key for role (kafka.KEY
 * or kafka.ROLE.KEY)? */
static bool user_set(const gp_conf_t *conf, const char *role, const char *key) {
        size_t rl = strlen(role);
        for (int i = 0; i < conf->n_kafka; i++) {
                const char *k = conf->kafka[i].key;
                if (!strncmp(k, role, rl) && k[rl] == '.')
                        k += rl + 1;
                if (!strcmp(k, key))
                        return true;
        }
        return false;
}

static void set_kafka_conf(rd_kafka_conf_t *kc, const char *k, const char *v, char *err,
                           size_t errlen, int *bad) {
        if (*bad)
                return;
        if (rd_kafka_conf_set(kc, k, v, err, errlen) != RD_KAFKA_CONF_OK)
                *bad = 1;
}

/* A numeric librdkafka property of kc, 0 if unset or not a number. */
static long long conf_ll(rd_kafka_conf_t *kc, const char *key) {
        char v[32];
        size_t n = sizeof v;
        return rd_kafka_conf_get(kc, key, v, &n) == RD_KAFKA_CONF_OK ? strtoll(v, NULL, 10) : 0;
}

/* kafka.X goes to both clients, kafka.producer.X / kafka.consumer.X to one,
 * over gate-proxy's bounded queues (gp_bounded_defaults). */
static rd_kafka_conf_t *client_conf(const gp_conf_t *conf, const char *role, char *err,
                                    size_t errlen) {
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        int bad = 0;
        size_t rl = strlen(role);
        for (const gp_kafka_default_t *d = gp_bounded_defaults; d->key && !bad; d++) {
                if (strcmp(d->role, role) || user_set(conf, role, d->key) ||
                    /* fetch.max.bytes may not be below message.max.bytes */
                    (!strcmp(d->key, "fetch.max.bytes") &&
                     user_set(conf, role, "message.max.bytes")))
                        continue;
                set_kafka_conf(kc, d->key, d->value, err, errlen, &bad);
        }
        for (int i = 0; i < conf->n_kafka && !bad; i++) {
                const char *k = conf->kafka[i].key;
                if (!strncmp(k, "producer.", 9) || !strncmp(k, "consumer.", 9)) {
                        if (strncmp(k, role, rl) || k[rl] != '.')
                                continue;
                        k += rl + 1;
                }
                set_kafka_conf(kc, k, conf->kafka[i].value, err, errlen, &bad);
        }
        if (bad) {
                char tmp[512];
                snprintf(tmp, sizeof(tmp), "kafka.*: %s", err);
                snprintf(err, errlen, "%s", tmp);
                rd_kafka_conf_destroy(kc);
                return NULL;
        }
        return kc;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk;
        gp_proxy_t *p = opaque;
        if (m->err) {
                p->dr_errors++;
                gp_debug("delivery failed: %s", rd_kafka_err2str(m->err));
                return;
        }
        if (!p->drain[0] && !p->drain[1])
                return;
        for (int t = 0; t < p->n_topics; t++)
                for (int c = 0; c < 2; c++) {
                        tslot_t *ts = &p->topics[t];
                        if (m->partition >= ts->n ||
                            (ts->out[c] != m->rkt &&
                             strcmp(ts->out_name[c], rd_kafka_topic_name(m->rkt))))
                                continue;
                        pslot_t *ps = &ts->parts[m->partition];
                        if (m->offset >= 0 && m->offset + 1 > ps->wrote[c])
                                ps->wrote[c] = m->offset + 1;
                        return;
                }
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
        (void)rk;
        gp_log_level_t l = level <= 3 ? GP_LOG_ERROR : level <= 4 ? GP_LOG_WARN
                                                     : level <= 6 ? GP_LOG_INFO
                                                                  : GP_LOG_DEBUG;
        gp_log(l, "librdkafka %s: %s", fac, buf);
}

/* -1 when out of memory, the old array kept. */
static int rebuild_pptrs(gp_proxy_t *p) {
        size_t n = 0;
        for (int t = 0; t < p->n_topics; t++)
                n += (size_t)p->topics[t].n;
        gp_part_t **np = calloc(n ? n : 1, sizeof(*np));
        if (!np)
                return -1;
        free(p->pptrs);
        p->pptrs = np;
        p->n_pptrs = 0;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        p->pptrs[p->n_pptrs++] = &p->topics[t].parts[i].st;
        return 0;
}

/* ---- topics ------------------------------------------------------------ */

/* Partition count of a topic, 0 if it does not exist, -1 on error. */
static int topic_partitions(rd_kafka_t *rk, const char *name, char *err, size_t errlen) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, name, NULL);
        if (!rkt) {
                snprintf(err, errlen, "metadata for %s: %s", name,
                         rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
        int n = -1;
        rd_kafka_topic_destroy(rkt);
        if (e) {
                snprintf(err, errlen, "metadata for %s: %s", name, rd_kafka_err2str(e));
                return -1;
        }
        if (md->topic_cnt == 1) {
                const struct rd_kafka_metadata_topic *t = &md->topics[0];
                if (t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
                        n = 0;
                else if (t->err) {
                        snprintf(err, errlen, "metadata for %s: %s", name,
                                 rd_kafka_err2str(t->err));
                } else
                        n = t->partition_cnt;
        }
        rd_kafka_metadata_destroy(md);
        return n;
}

/* Creates topic `name` with n partitions, or grows it to n. */
static int create_topic(gp_proxy_t *p, const char *name, int n, int grow, char *err,
                        size_t errlen) {
        rd_kafka_queue_t *q = rd_kafka_queue_new(p->prod);
        rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(p->prod, RD_KAFKA_ADMIN_OP_ANY);
        rd_kafka_AdminOptions_set_operation_timeout(o, 10000, NULL, 0);
        int rc = -1;
        rd_kafka_event_t *ev;
        char why[256] = "";
        if (grow) {
                rd_kafka_NewPartitions_t *np =
                        rd_kafka_NewPartitions_new(name, (size_t)n, why, sizeof(why));
                if (np) {
                        rd_kafka_CreatePartitions(p->prod, &np, 1, o, q);
                        rd_kafka_NewPartitions_destroy(np);
                }
        } else {
                rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(
                        name, n, p->conf->topics_replication, why, sizeof(why));
                if (nt) {
                        rd_kafka_CreateTopics(p->prod, &nt, 1, o, q);
                        rd_kafka_NewTopic_destroy(nt);
                }
        }
        ev = why[0] ? NULL : rd_kafka_queue_poll(q, 15000);
        if (why[0]) {
                snprintf(err, errlen, "%s: %s", name, why);
        } else if (!ev) {
                snprintf(err, errlen, "%s: creating timed out", name);
        } else if (rd_kafka_event_error(ev)) {
                snprintf(err, errlen, "%s: %s", name, rd_kafka_event_error_string(ev));
        } else {
                const rd_kafka_topic_result_t **r;
                size_t cnt = 0;
                r = grow ? rd_kafka_CreatePartitions_result_topics(
                                   rd_kafka_event_CreatePartitions_result(ev), &cnt)
                         : rd_kafka_CreateTopics_result_topics(
                                   rd_kafka_event_CreateTopics_result(ev), &cnt);
                if (cnt == 1 && rd_kafka_topic_result_error(r[0]) &&
                    rd_kafka_topic_result_error(r[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                        snprintf(err, errlen, "%s: %s", name,
                                 rd_kafka_topic_result_error_string(r[0]));
                else
                        rc = 0;
        }
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        if (rc == 0)
                gp_info("%s topic %s with %d partitions", grow ? "grew" : "created", name, n);
        return rc;
}

/* Makes sure `name` exists with at least `need` partitions (creating or
 * growing it when gate.topics.create is on). Returns its partition count,
 * or -1 with err. */
static int ensure_topic(gp_proxy_t *p, const char *name, int need, const char *role,
                        char *err, size_t errlen) {
        int have = topic_partitions(p->prod, name, err, errlen);
        if (have < 0)
                return -1;
        if (have >= need)
                return have;
        if (!p->conf->topics_create) {
                if (have == 0)
                        snprintf(err, errlen,
                                 "%s topic %s does not exist; create it with %d partitions "
                                 "or set gate.topics.create=true", role, name, need);
                else
                        snprintf(err, errlen,
                                 "%s topic %s has %d partitions but needs %d (one per source "
                                 "partition); add partitions or set gate.topics.create=true",
                                 role, name, have, need);
                return -1;
        }
        if (create_topic(p, name, need, have > 0, err, errlen))
                return -1;
        /* Metadata may lag the creation briefly. */
        for (int i = 0; i < 50; i++) {
                have = topic_partitions(p->prod, name, err, errlen);
                if (have >= need)
                        return have;
                rd_kafka_poll(p->prod, 100);
        }
        snprintf(err, errlen, "%s: created but not visible after 5 s", name);
        return -1;
}

/* Low or high watermark of one partition, for a start without checkpoint. */
static int64_t start_offset(gp_proxy_t *p, const char *topic, int32_t part, bool latest) {
        int64_t lo = 0, hi = 0;
        rd_kafka_resp_err_t e =
                rd_kafka_query_watermark_offsets(p->cons, topic, part, &lo, &hi, 10000);
        if (e) {
                gp_warn("%s/%d: cannot read offsets (%s); starting at the %s", topic, part,
                        rd_kafka_err2str(e), latest ? "end" : "beginning");
                return latest ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
        }
        return latest ? hi : lo;
}

/* Grows topic slot t to n partitions, fresh state for the new ones. */
static int grow_slot(gp_proxy_t *p, tslot_t *t, int n, bool latest) {
        pslot_t *np = realloc(t->parts, (size_t)n * sizeof(*np));
        if (!np)
                return -1;
        t->parts = np;
        int64_t now = gp_now_ms();
        for (int i = t->n; i < n; i++) {
                gp_part_init(&np[i].st, now);
                np[i].cst = np[i].st;
                /* A partition that appears while running starts at its
                 * beginning: nothing written to it may be skipped. */
                np[i].pos = np[i].cpos = start_offset(p, t->name, i, latest);
                np[i].wrote[0] = np[i].wrote[1] = np[i].cwrote[0] = np[i].cwrote[1] = -1;
        }
        t->n = n;
        if (rebuild_pptrs(p))
                return -1;
        return 0;
}

/* ---- assignment and checkpoint ---------------------------------------- */

static rd_kafka_topic_partition_list_t *positions(gp_proxy_t *p, bool committed) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)p->n_pptrs);
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        rd_kafka_topic_partition_list_add(l, p->topics[t].name, i)->offset =
                                committed ? p->topics[t].parts[i].cpos
                                          : p->topics[t].parts[i].pos;
        return l;
}

static int assign_all(gp_proxy_t *p) {
        rd_kafka_topic_partition_list_t *l = positions(p, true);
        rd_kafka_resp_err_t e = rd_kafka_assign(p->cons, l);
        gp_fetchwake_assigned(p->wake, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (e) {
                gp_error("assign: %s", rd_kafka_err2str(e));
                return -1;
        }
        return 0;
}

/* Reads the committed offsets and checkpoints of every partition. */
static int restore(gp_proxy_t *p, const gp_control_t *ctl, char *err, size_t errlen) {
        rd_kafka_topic_partition_list_t *l = positions(p, true);
        rd_kafka_resp_err_t e = rd_kafka_committed(p->cons, l, TIMEOUT_MS);
        int64_t best_seq = -1, now = gp_now_ms();
        int restored = 0;

        if (e) {
                snprintf(err, errlen, "reading committed offsets of group %s: %s",
                         p->conf->group_id, rd_kafka_err2str(e));
                rd_kafka_topic_partition_list_destroy(l);
                return -1;
        }
        for (int i = 0; i < l->cnt; i++) {
                rd_kafka_topic_partition_t *tp = &l->elems[i];
                tslot_t *t = NULL;
                for (int k = 0; k < p->n_topics; k++)
                        if (!strcmp(p->topics[k].name, tp->topic))
                                t = &p->topics[k];
                pslot_t *ps = &t->parts[tp->partition];
                if (tp->err) {
                        snprintf(err, errlen, "committed offset of %s/%d: %s", tp->topic,
                                 tp->partition, rd_kafka_err2str(tp->err));
                        goto fail;
                }
                if (tp->offset < 0)
                        continue; /* never committed: keep the fresh start */
                gp_gate_t g;
                char derr[200];
                if (gp_ckpt_decode(tp->metadata, tp->metadata_size, &g, &ps->st, derr,
                                   sizeof(derr))) {
                        snprintf(err, errlen,
                                 "%s/%d: the offset committed for group %s holds no "
                                 "gate-proxy checkpoint (%s); is another application "
                                 "using this group? set gate.group.id",
                                 tp->topic, tp->partition, p->conf->group_id, derr);
                        goto fail;
                }
                ps->st.last_wall = now;
                ps->cst = ps->st;
                ps->pos = ps->cpos = tp->offset;
                restored++;
                if (g.seq > best_seq) {
                        best_seq = g.seq;
                        p->gate = g;
                }
        }
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
        rd_kafka_topic_partition_list_destroy(l);
        return -1;
}

/* The offsets to commit, each carrying the checkpoint of its partition. */
static rd_kafka_topic_partition_list_t *checkpoint_list(gp_proxy_t *p, const gp_gate_t *g) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)p->n_pptrs);
        char line[GP_CKPT_MAX];
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        pslot_t *ps = &p->topics[t].parts[i];
                        if (ps->pos < 0)
                                continue; /* position unknown: nothing to commit yet */
                        rd_kafka_topic_partition_t *tp =
                                rd_kafka_topic_partition_list_add(l, p->topics[t].name, i);
                        tp->offset = ps->pos;
                        int n = gp_ckpt_encode(g, &ps->st, line, sizeof(line));
                        if (n < 0 || !(tp->metadata = malloc((size_t)n))) {
                                rd_kafka_topic_partition_list_destroy(l);
                                return NULL;
                        }
                        memcpy(tp->metadata, line, (size_t)n);
                        tp->metadata_size = (size_t)n;
                }
        return l;
}

/* ---- one transaction -------------------------------------------------- */

typedef enum { TX_OK = 0, TX_ABORT, TX_FATAL } txres_t;

static txres_t txn_error(gp_proxy_t *p, const char *what, rd_kafka_error_t *e) {
        if (!e)
                return TX_OK;
        txres_t r = rd_kafka_error_txn_requires_abort(e) ? TX_ABORT
                    : rd_kafka_error_is_retriable(e)     ? TX_ABORT
                                                         : TX_FATAL;
        if (rd_kafka_error_is_fatal(e))
                r = TX_FATAL;
        gp_log(r == TX_FATAL ? GP_LOG_ERROR : GP_LOG_WARN, "%s: %s", what,
               rd_kafka_error_string(e));
        (void)p;
        rd_kafka_error_destroy(e);
        return r;
}

/* How often a transactional call that keeps failing with a plain
 * retriable error (librdkafka 2.0.2: _TIMED_OUT while the coordinator is
 * away, each call waiting TIMEOUT_MS) is made again before giving up. */
#define TXN_TRIES 10

/* True (e destroyed) when e is a plain retriable error and the call may
 * be made again: commit_transaction and abort_transaction are resumable
 * (the operation goes on in the background and the next call picks it
 * up; any other transactional call meanwhile fails with _CONFLICT), and
 * send_offsets_to_transaction is retried with the same offsets.
 * False (e kept) for an abortable or fatal error, or after TXN_TRIES. */
static bool txn_retry(const char *what, rd_kafka_error_t *e, int *tries) {
        if (!rd_kafka_error_is_retriable(e) || rd_kafka_error_txn_requires_abort(e) ||
            rd_kafka_error_is_fatal(e) || ++*tries >= TXN_TRIES)
                return false;
        /* A pause first, growing to 3 s: an error that comes at once
         * (_TRANSPORT while the broker is down) would use up the calls in
         * no time; each call itself waits up to TIMEOUT_MS. */
        int64_t ms = *tries * 500 < 3000 ? *tries * 500 : 3000;
        gp_warn("%s: %s (%s); calling it again in %" PRId64 " ms (%d of %d)", what,
                rd_kafka_error_string(e), rd_kafka_err2name(rd_kafka_error_code(e)), ms,
                *tries + 1, TXN_TRIES);
        rd_kafka_error_destroy(e);
        nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L},
                  NULL);
        return true;
}

static txres_t begin_txn(gp_proxy_t *p) {
        txres_t r = txn_error(p, "begin", rd_kafka_begin_transaction(p->prod));
        if (r == TX_OK)
                p->txn_begin = gp_mono_ms();
        return r;
}

/* The exit code for a fatal producer error (see proxy.h). */
static int exit_for_fatal(gp_proxy_t *p) {
        char buf[512];
        rd_kafka_resp_err_t e = rd_kafka_fatal_error(p->prod, buf, sizeof(buf));
        bool fenced = e == RD_KAFKA_RESP_ERR__FENCED || e == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
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

/* Back to the last commit: consumer positions and gate state. */
static void rewind_to_commit(gp_proxy_t *p) {
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        pslot_t *ps = &p->topics[t].parts[i];
                        int64_t lw = ps->st.last_wall;
                        ps->st = ps->cst;
                        ps->st.last_wall = lw;
                        ps->pos = ps->cpos;
                        memcpy(ps->wrote, ps->cwrote, sizeof(ps->wrote));
                }
        p->gate = p->cgate;
        p->need_commit = false;
        p->txn_begin = -1;
        assign_all(p);
        pthread_mutex_lock(&p->lock);
        p->stats.aborts++;
        pthread_mutex_unlock(&p->lock);
}

static void on_committed(gp_proxy_t *p) {
        uint64_t n[3] = {0}, late = 0, in = 0, ab = 0;
        p->cgate = p->gate;
        p->need_commit = false;
        p->txn_begin = -1;
        gp_colour_t aborted = gp_colour_other(p->gate.new_c);
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++) {
                        pslot_t *ps = &p->topics[t].parts[i];
                        ps->cst = ps->st;
                        ps->cpos = ps->pos;
                        memcpy(ps->cwrote, ps->wrote, sizeof(ps->cwrote));
                        for (int d = 0; d < 3; d++)
                                n[d] += ps->st.n[d];
                        late += ps->st.late;
                        ab += ps->st.since_t[aborted];
                }
        in = n[0] + n[1] + n[2];
        pthread_mutex_lock(&p->lock);
        memcpy(p->stats.n, n, sizeof(n));
        p->stats.late = late;
        p->stats.in = in;
        p->stats.aborted_routed = p->gate.phase == GP_PHASE_ABORTED ? ab : 0;
        p->stats.txns++;
        p->stats.phase = p->gate.phase;
        p->stats.cutoff = p->gate.cutoff;
        p->stats.old_c = p->gate.old_c;
        p->stats.new_c = p->gate.new_c;
        pthread_mutex_unlock(&p->lock);
}

static int produce(gp_proxy_t *p, rd_kafka_topic_t *rkt, int32_t part,
                   const rd_kafka_message_t *m, int64_t ts, rd_kafka_headers_t *hdrs) {
        for (;;) {
                rd_kafka_resp_err_t e = rd_kafka_producev(
                        p->prod, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(part),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                        RD_KAFKA_V_VALUE(m->payload, m->len), RD_KAFKA_V_KEY(m->key, m->key_len),
                        RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
                if (!e)
                        return 0;
                if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                        rd_kafka_poll(p->prod, 5);
                        continue;
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
                bad->code = "bad-frame";
                bad->why = "not the Confluent wire format (byte 0 and a 4-byte schema id)";
                return -1;
        }
        if (!gp_registry_lookup(p->reg, id, mono, &ref)) {
                bad->code = "registry-unavailable";
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

static int handle(gp_proxy_t *p, tslot_t *t, rd_kafka_message_t *m, int64_t now,
                  int64_t mono) {
        pslot_t *ps = &t->parts[m->partition];
        rd_kafka_timestamp_type_t tst;
        int64_t kts = rd_kafka_message_timestamp(m, &tst);
        gp_record_view_t rv = {m->payload, m->len, tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : kts,
                               NULL, 0, NULL};
        rd_kafka_headers_t *hdrs = NULL;
        int64_t ts = GP_TS_NONE;
        gp_bad_t bad = {0};
        bool late;
        char too_large[128];
        size_t size = record_size(m);
        bool refuse = size > (size_t)p->conf->record_max_bytes;

        if (refuse) {
                snprintf(too_large, sizeof too_large,
                         "%zu bytes, more than gate.record.max.bytes=%" PRId64, size,
                         p->conf->record_max_bytes);
                bad.code = "too-large";
                bad.why = too_large;
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
        gp_dest_t d = refuse ? (late = false, gp_gate_reject(&ps->st, now))
                              : gp_gate_route(&p->gate, &p->gconf, &ps->st, ts, now, &late);
        rd_kafka_message_detach_headers(m, &hdrs);
        ps->pos = m->offset + 1;
        if (d != GP_DEST_DLQ)
                return produce(p, t->out[d], m->partition, m,
                               tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? 0 : kts, hdrs);

        char why[512], src[300];
        if (ts == GP_TS_NONE)
                snprintf(why, sizeof(why), "%s: %s", bad.code, bad.why);
        else
                snprintf(why, sizeof(why), "late: event time %" PRId64 " is before the cutoff "
                         "%" PRId64 " and the old side is closed", ts, p->gate.cutoff);
        snprintf(src, sizeof(src), "%s/%d/%" PRId64, t->name, m->partition, m->offset);
        if (!hdrs)
                hdrs = rd_kafka_headers_new(2);
        rd_kafka_header_add(hdrs, GP_HDR_ERROR, -1, why, -1);
        rd_kafka_header_add(hdrs, GP_HDR_SOURCE, -1, src, -1);
        return produce(p, p->dlq, m->partition % p->dlq_n, m,
                       tst == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? 0 : kts, hdrs);
}

/* Does the batch hold a registry id the cache cannot answer? */
static bool schemas_missing(gp_proxy_t *p, rd_kafka_message_t **msgs, ssize_t n,
                            int64_t mono) {
        gp_schema_ref_t ref;
        uint32_t id, last = 0;
        bool have_last = false;
        const uint8_t *body;
        size_t len;
        for (ssize_t i = 0; i < n; i++) {
                if (msgs[i]->err ||
                    gp_avro_frame(msgs[i]->payload, msgs[i]->len, &id, &body, &len) ||
                    (have_last && id == last))
                        continue; /* a run of one id is looked up once */
                if (!gp_registry_lookup(p->reg, id, mono, &ref))
                        return true;
                last = id;
                have_last = true;
        }
        return false;
}

/* Fetches the schemas the batch needs; called with no transaction open.
 * 0: go on; -1: schema.registry.on-failure=exit and the registry stayed
 * out of reach; -2: stopping (the batch is not handled). */
static int fetch_schemas(gp_proxy_t *p, rd_kafka_message_t **msgs, ssize_t n) {
        gp_schema_ref_t ref;
        uint32_t id;
        const uint8_t *body;
        size_t len;
        for (ssize_t i = 0; i < n; i++) {
                if (msgs[i]->err ||
                    gp_avro_frame(msgs[i]->payload, msgs[i]->len, &id, &body, &len) ||
                    gp_registry_lookup(p->reg, id, gp_mono_ms(), &ref))
                        continue;
                int rc = gp_registry_fetch(p->reg, id, &p->stop);
                if (rc == -2)
                        return -2;
                if (rc == -1 && p->conf->registry_exit) {
                        gp_error("schema registry out of reach and "
                                 "schema.registry.on-failure=exit: exiting (code %d); a "
                                 "restart goes on from the last commit",
                                 GP_EXIT_FATAL);
                        return -1;
                }
        }
        return 0;
}

static tslot_t *slot_of(gp_proxy_t *p, rd_kafka_topic_t *rkt) {
        for (int i = 0; i < p->n_topics; i++)
                if (p->topics[i].in == rkt)
                        return &p->topics[i];
        const char *name = rd_kafka_topic_name(rkt);
        for (int i = 0; i < p->n_topics; i++)
                if (!strcmp(p->topics[i].name, name)) {
                        p->topics[i].in = rkt;
                        return &p->topics[i];
                }
        return NULL;
}

/* Commits what the open transaction holds (or, at-least-once, flushes
 * and commits the offsets). */
static txres_t commit(gp_proxy_t *p) {
        gp_gate_t g = p->gate;
        g.seq = p->cgate.seq + 1;
        rd_kafka_topic_partition_list_t *l = checkpoint_list(p, &g);
        txres_t r;
        if (!l) {
                gp_error("out of memory for the checkpoint: exiting (code %d) for a restart",
                         GP_EXIT_FATAL);
                return TX_FATAL;
        }
        GP_FAULT("before-send-offsets");
        if (p->eos) {
                rd_kafka_error_t *e;
                int tries = 0;
                while ((e = rd_kafka_send_offsets_to_transaction(p->prod, l, p->cgmd,
                                                                 TIMEOUT_MS)) &&
                       txn_retry("send offsets", e, &tries))
                        ;
                r = txn_error(p, "send offsets", e);
                GP_FAULT("before-commit");
                tries = 0;
                if (r == TX_OK) {
                        /* A retriable commit error is never turned into an
                         * abort: the commit may still complete on the broker,
                         * and an abort would rewind over committed records. */
                        while ((e = rd_kafka_commit_transaction(p->prod, TIMEOUT_MS)) &&
                               txn_retry("commit", e, &tries))
                                ;
                        if (e && rd_kafka_error_is_retriable(e) &&
                            !rd_kafka_error_txn_requires_abort(e) &&
                            !rd_kafka_error_is_fatal(e)) {
                                gp_error("commit: %s; still not complete after %d calls of "
                                         "%d ms: exiting (code %d) for a restart, which goes "
                                         "on from whatever the broker committed",
                                         rd_kafka_error_string(e), TXN_TRIES, TIMEOUT_MS,
                                         GP_EXIT_FATAL);
                                rd_kafka_error_destroy(e);
                                r = TX_FATAL;
                        } else
                                r = txn_error(p, "commit", e);
                }
        } else {
                rd_kafka_resp_err_t e = rd_kafka_flush(p->prod, TIMEOUT_MS);
                r = TX_OK;
                if (e || p->dr_errors) {
                        gp_warn("at-least-once: %" PRIu64 " deliveries failed (%s); "
                                "re-sending from the last commit",
                                p->dr_errors, rd_kafka_err2str(e));
                        r = TX_ABORT;
                } else if ((e = rd_kafka_commit(p->cons, l, 0))) {
                        gp_warn("offset commit: %s", rd_kafka_err2str(e));
                        r = TX_ABORT;
                }
                p->dr_errors = 0;
        }
        rd_kafka_topic_partition_list_destroy(l);
        if (r == TX_OK) {
                p->gate.seq = g.seq;
                GP_FAULT("after-commit");
                on_committed(p);
        }
        return r;
}

static txres_t abort_txn(gp_proxy_t *p) {
        if (p->eos) {
                rd_kafka_error_t *e;
                int tries = 0;
                while ((e = rd_kafka_abort_transaction(p->prod, TIMEOUT_MS)) &&
                       txn_retry("abort", e, &tries))
                        ;
                if (e && !rd_kafka_error_is_fatal(e)) {
                        gp_error("abort: %s (%s)%s: exiting (code %d) for a restart, which "
                                 "goes on from the last commit",
                                 rd_kafka_error_string(e),
                                 rd_kafka_err2name(rd_kafka_error_code(e)),
                                 rd_kafka_error_is_retriable(e) ? "; still not complete"
                                                                : "",
                                 GP_EXIT_FATAL);
                        rd_kafka_error_destroy(e);
                        return TX_FATAL;
                }
                if (txn_error(p, "abort", e) != TX_OK)
                        return TX_FATAL;
        } else {
                rd_kafka_purge(p->prod, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
                rd_kafka_flush(p->prod, TIMEOUT_MS);
                p->dr_errors = 0;
        }
        rewind_to_commit(p);
        gp_info("transaction aborted; rewound to the last commit");
        return TX_OK;
}

/* ---- control, decisions, status --------------------------------------- */

/* gate-proxy.error: the first of a bad control map, a refused request,
 * held partitions; "" when all is well. Each source keeps its own, so one
 * clearing does not hide another. */
static const char *current_error(const gp_proxy_t *p) {
        if (p->ctl_error[0])
                return p->ctl_error;
        if (p->last_refusal[0])
                return p->last_refusal;
        for (int i = 0; i < p->n_topics; i++)
                if (p->topics[i].held[0])
                        return p->topics[i].held;
        return "";
}

static void status_write(gp_proxy_t *p, int64_t now, const gp_wm_view_t *wv) {
        char v[12][40], hb[40];
        gp_stats_t s;
        gp_proxy_stats(p, &s);
        snprintf(v[0], 40, "%s", gp_phase_name(p->cgate.phase));
        snprintf(v[1], 40, "%s->%s", gp_colour_upper(p->cgate.old_c),
                 gp_colour_upper(p->cgate.new_c));
        if (p->cgate.cutoff == GP_TS_NONE)
                v[2][0] = '\0';
        else
                snprintf(v[2], 40, "%" PRId64, p->cgate.cutoff);
        if (wv->wm == GP_TS_NONE)
                v[3][0] = '\0';
        else
                snprintf(v[3], 40, "%" PRId64, wv->wm);
        snprintf(v[4], 40, "%" PRIu64, s.n[0]);
        snprintf(v[5], 40, "%" PRIu64, s.n[1]);
        snprintf(v[6], 40, "%" PRIu64, s.n[2]);
        snprintf(v[7], 40, "%" PRIu64, s.late);
        snprintf(v[8], 40, "%" PRIu64, s.aborted_routed);
        gp_time_format(now, hb, sizeof(hb));
        gp_kv_t kv[] = {
                {GP_KEY_PHASE, v[0]},         {GP_KEY_TRANSITION, v[1]},
                {GP_KEY_CUTOFF, v[2]},        {GP_KEY_WATERMARK, v[3]},
                {GP_KEY_COUNT_BLUE, v[4]},    {GP_KEY_COUNT_GREEN, v[5]},
                {GP_KEY_COUNT_DLQ, v[6]},     {GP_KEY_COUNT_LATE, v[7]},
                {GP_KEY_ABORTED_ROUTED, v[8]}, {GP_KEY_ERROR, current_error(p)},
                {GP_KEY_HEARTBEAT, hb},       {GP_KEY_WARNING, p->drain_warning},
        };
        char err[512];
        int rc = gp_ctl_patch(p->ctl, kv, sizeof(kv) / sizeof(kv[0]), NULL, err, sizeof(err));
        /* A missing or unreadable map is left alone; boundary() has said
         * why, once. */
        if (rc == GP_CTL_INVALID)
                gp_debug("status not written: %s", err);
        else if (rc)
                gp_warn("status write: %s", err);
}

/* Publishes the committed decisions the map does not show yet. */
static void publish(gp_proxy_t *p, int64_t mono) {
        const gp_control_t *ctl = gp_ctl_current(p->ctl);
        gp_publish_t pub;
        if (!ctl || mono < p->next_publish || !gp_gate_publication(&p->cgate, ctl, &pub))
                return;
        gp_control_t base = *ctl;
        char t[24], err[512];
        gp_kv_t kv[3];
        size_t n = 0;
        if (pub.wm_stage != GP_WMS_NONE)
                kv[n++] = (gp_kv_t){GP_KEY_WM_STAGE, gp_wm_stage_name(pub.wm_stage)};
        if (pub.wm_stage == GP_WMS_SET) {
                snprintf(t, sizeof(t), "%" PRId64, pub.toggle);
                kv[n++] = (gp_kv_t){GP_KEY_TOGGLE, t};
        }
        if (pub.clear_to_teardown)
                kv[n++] = (gp_kv_t){GP_KEY_STAGE, "CLEAR_TO_TEARDOWN"};
        GP_FAULT("before-publish");
        int rc = gp_ctl_patch(p->ctl, kv, n, &base, err, sizeof(err));
        if (rc == GP_CTL_OK) {
                for (size_t i = 0; i < n; i++)
                        gp_info("published %s=%s", kv[i].key, kv[i].value);
        } else if (rc == GP_CTL_DROPPED) {
                gp_info("not published: the map moved on to another transition");
        } else if (rc == GP_CTL_INVALID) {
                /* Invalid map (boundary() said why): published once it is
                 * valid again and still asks for this transition. */
                gp_debug("not published while the map is invalid: %s", err);
                p->next_publish = mono + 1000;
        } else {
                gp_warn("publishing to %s failed (%s); retrying in 1 s",
                        gp_ctl_describe(p->ctl), err);
                p->next_publish = mono + 1000;
        }
}

/* Whether group-less reader dc finds a committed record at or after
 * from[i] on partition l->elems[i], for each i with from[i] >= 0: found[i]
 * is set to 1 (a record), 0 (the end: none) or -1 (no answer within
 * wait_ms). dc reads read_committed with partition EOF events, so aborted
 * records and transaction markers are skipped and the end is the last
 * stable offset. */
static void probe_committed(rd_kafka_t *dc, const rd_kafka_topic_partition_list_t *l,
                            const int64_t *from, int *found, int64_t wait_ms) {
        rd_kafka_topic_partition_list_t *a = rd_kafka_topic_partition_list_new(l->cnt);
        int left = 0;
        for (int i = 0; i < l->cnt; i++) {
                found[i] = -1;
                if (from[i] < 0)
                        continue;
                rd_kafka_topic_partition_list_add(a, l->elems[i].topic, l->elems[i].partition)
                        ->offset = from[i];
                left++;
        }
        if (left && !rd_kafka_assign(dc, a)) {
                int64_t end = gp_mono_ms() + wait_ms;
                while (left && gp_mono_ms() < end) {
                        rd_kafka_message_t *m = rd_kafka_consumer_poll(dc, 50);
                        if (!m)
                                continue;
                        if (!m->err || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                                const char *tn = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
                                for (int i = 0; i < l->cnt; i++)
                                        if (found[i] < 0 && from[i] >= 0 &&
                                            l->elems[i].partition == m->partition &&
                                            !strcmp(l->elems[i].topic, tn)) {
                                                found[i] = m->err ? 0 : 1;
                                                left--;
                                        }
                        }
                        rd_kafka_message_destroy(m);
                }
                rd_kafka_assign(dc, NULL);
        }
        rd_kafka_topic_partition_list_destroy(a);
}

/* The drain check (docs/DESIGN.md, Choosing T and closing), run when the gate is
 * SPLIT, the old colour has a drain group and the watermark condition
 * holds. True when that group has consumed, on every partition of the old
 * colour topics the proxy writes (0..n-1 of each source topic), all that
 * the proxy wrote there:
 * - where this process wrote since it started, its committed offset has
 *   reached one past the last record written in a committed transaction
 *   (delivery reports);
 * - elsewhere (after a restart), no committed record lies at or after its
 *   committed offset, as a read_committed reader starting there sees.
 * Consumers differ in what they commit after the last record of a
 * transaction: the offset after that record (Flink's KafkaSource,
 * FLINK-33484) or the offset after the commit marker (the Java and
 * librdkafka consumers); both count as drained. Polled at most once a
 * second; a result holds only for the boundary that computed it, since
 * records may go to the old side until the gate closes. */
static bool drain_check(gp_proxy_t *p, int64_t mono) {
        gp_colour_t old = p->gate.old_c;
        rd_kafka_t *dc = p->drain[old];
        const char *group = old == GP_BLUE ? p->conf->drain_group_blue
                                           : p->conf->drain_group_green;
        if (mono < p->drain_next)
                return false;
        p->drain_next = mono + 1000;
        size_t np = p->n_pptrs ? p->n_pptrs : 1;
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)np);
        int64_t *target = calloc(np, sizeof(*target)), *from = calloc(np, sizeof(*from));
        int *found = calloc(np, sizeof(*found));
        char msg[512] = "", topics[300] = "";
        int total = 0, done = 0, probes = 0;
        int64_t lag = 0;
        bool ok = target && from && found;
        for (int t = 0; t < p->n_topics && ok; t++) {
                const char *name = p->topics[t].out_name[old];
                size_t tl = strlen(topics);
                if (tl < sizeof(topics) - 1)
                        snprintf(topics + tl, sizeof(topics) - tl, "%s%s", t ? "," : "", name);
                for (int i = 0; i < p->topics[t].n; i++) {
                        target[l->cnt] = p->topics[t].parts[i].cwrote[old];
                        rd_kafka_topic_partition_list_add(l, name, i);
                }
        }
        if (ok) {
                rd_kafka_resp_err_t e = rd_kafka_committed(dc, l, 5000);
                if (e) {
                        snprintf(msg, sizeof(msg), "drain check: committed offsets of group "
                                 "%s: %s", group, rd_kafka_err2str(e));
                        ok = false;
                }
        }
        /* Offsets first; then one read for the partitions with no target. */
        for (int i = 0; ok && i < l->cnt; i++) {
                const rd_kafka_topic_partition_t *tp = &l->elems[i];
                if (tp->err) {
                        snprintf(msg, sizeof(msg), "drain check: committed offset of group "
                                 "%s on %s/%d: %s", group, tp->topic, tp->partition,
                                 rd_kafka_err2str(tp->err));
                        ok = false;
                        break;
                }
                int64_t have = tp->offset >= 0 ? tp->offset : 0;
                from[i] = -1;
                if (target[i] < 0) {
                        int64_t lo = 0, hi = 0; /* hi: the last stable offset */
                        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
                                dc, tp->topic, tp->partition, &lo, &hi, 5000);
                        if (e) {
                                snprintf(msg, sizeof(msg), "drain check: end offset of %s/%d: "
                                         "%s", tp->topic, tp->partition, rd_kafka_err2str(e));
                                ok = false;
                                break;
                        }
                        target[i] = have >= hi ? 0 : hi;
                        if (target[i]) {
                                from[i] = have > lo ? have : lo;
                                probes++;
                        }
                }
        }
        if (ok && probes)
                probe_committed(dc, l, from, found, 3000);
        for (int i = 0; ok && i < l->cnt; i++) {
                int64_t have = l->elems[i].offset >= 0 ? l->elems[i].offset : 0;
                total++;
                if (from[i] >= 0 && found[i] < 0) {
                        snprintf(msg, sizeof(msg), "drain check: reading %s/%d from offset %"
                                 PRId64 " gave no answer in 3 s", l->elems[i].topic,
                                 l->elems[i].partition, from[i]);
                        ok = false;
                } else if (target[i] == 0 || have >= target[i] || (from[i] >= 0 && !found[i]))
                        done++;
                else
                        lag += target[i] - have;
        }
        if (ok && done == total)
                snprintf(msg, sizeof(msg), "group %s has consumed all the proxy wrote to %s "
                         "(%d partitions): the old side may close", group, topics, total);
        else if (ok)
                snprintf(msg, sizeof(msg), "waiting for group %s to consume %s: %d of %d "
                         "partitions drained, lag %" PRId64, group, topics, done, total, lag);
        if (strcmp(msg, p->drain_msg)) {
                gp_log(ok ? GP_LOG_INFO : GP_LOG_WARN, "%s", msg);
                snprintf(p->drain_msg, sizeof(p->drain_msg), "%s", msg);
        }
        rd_kafka_topic_partition_list_destroy(l);
        free(target);
        free(from);
        free(found);
        return ok && done == total;
}

static void boundary(gp_proxy_t *p, int64_t now, int64_t mono, gp_wm_view_t *wv) {
        int rc = p->ctl_pending ? p->ctl_pending : gp_ctl_poll(p->ctl, false);
        p->ctl_pending = 0;
        const char *cerr = gp_ctl_error(p->ctl);
        if (rc < 0 && strcmp(p->ctl_error, cerr))
                gp_warn("control map invalid, keeping the last good state: %s", cerr);
        else if (rc >= 0 && p->ctl_error[0])
                gp_info("control map valid again");
        snprintf(p->ctl_error, sizeof(p->ctl_error), "%s", rc < 0 ? cerr : "");
        const gp_control_t *ctl = gp_ctl_current(p->ctl);

        gp_gate_watermark((const gp_part_t *const *)p->pptrs, p->n_pptrs, &p->gconf, now, wv);
        if (p->drain[p->gate.old_c] && gp_gate_close_due(&p->gate, wv, &p->gconf, now))
                wv->drained = drain_check(p, mono);
        pthread_mutex_lock(&p->lock);
        p->stats.wm = wv->wm;
        pthread_mutex_unlock(&p->lock);

        gp_step_t st;
        gp_gate_t before = p->gate;
        if (gp_gate_step(&p->gate, p->pptrs, p->n_pptrs, ctl, wv, &p->gconf, now, &st)) {
                p->need_commit = true;
                if (st.events & GP_EV_TRANSITION)
                        gp_info("transition %s -> %s requested: routing all to %s until the "
                                "cutoff is chosen", gp_colour_name(p->gate.old_c),
                                gp_colour_name(p->gate.new_c), gp_colour_name(p->gate.old_c));
                if (st.events & GP_EV_CUTOFF)
                        gp_info("cutoff chosen: T=%" PRId64 " (W=%" PRId64 ", highest routed "
                                "%" PRId64 ", delay %" PRId64 " ms)", p->gate.cutoff,
                                wv->wm == GP_TS_NONE ? -1 : wv->wm,
                                wv->hi_max == GP_TS_NONE ? -1 : wv->hi_max, ctl->delay_ms);
                if (st.events & GP_EV_FORCED)
                        gp_warn("the map says %s before the proxy closed the old side: "
                                "closing now; records with ts < T go to %s as late",
                                gp_stage_name(ctl->stage), gp_colour_name(p->gate.new_c));
                else if (st.events & GP_EV_CLOSED)
                        gp_info("old side %s closed: W=%" PRId64 " >= T + lateness (or idle); "
                                "all records now go to %s", gp_colour_name(p->gate.old_c),
                                wv->wm == GP_TS_NONE ? -1 : wv->wm,
                                gp_colour_name(p->gate.new_c));
                if (st.events & GP_EV_ABORTED)
                        gp_warn("transition %s -> %s aborted: all records go to %s",
                                gp_colour_name(before.old_c), gp_colour_name(before.new_c),
                                gp_colour_name(p->gate.new_c));
                if (st.events & GP_EV_OWNER)
                        gp_info("first deployment: all records go to %s",
                                gp_colour_name(p->gate.new_c));
        }
        if (st.events & GP_EV_REFUSED) {
                if (strcmp(p->last_refusal, st.err)) {
                        gp_warn("request refused, routing unchanged: %s", st.err);
                        snprintf(p->last_refusal, sizeof(p->last_refusal), "%s", st.err);
                }
        } else
                p->last_refusal[0] = '\0';
        publish(p, mono);
}

static void discover(gp_proxy_t *p) {
        char err[512];
        for (int i = 0; i < p->n_topics; i++) {
                tslot_t *t = &p->topics[i];
                int n = topic_partitions(p->cons, t->name, err, sizeof(err));
                if (n <= t->n)
                        continue;
                int ok = 1;
                for (int c = 0; c < 2 && ok; c++) {
                        int have = ensure_topic(p, t->out_name[c], n, "colour", err, sizeof(err));
                        if (have < 0) {
                                ok = 0;
                        } else
                                t->out_n[c] = have;
                }
                if (!ok) {
                        /* Held: partitions t->n..n-1 are not assigned, so
                         * not read; the old ones keep flowing. Retried every
                         * discovery, logged once per change and every 60 s. */
                        int64_t mono = gp_mono_ms();
                        if (strcmp(t->held, err) || mono - t->held_logged >= 60000) {
                                gp_error("%s grew to %d partitions but its records cannot be "
                                         "placed: %s; holding partitions %d-%d (not read) "
                                         "until then", t->name, n, err, t->n, n - 1);
                                t->held_logged = mono;
                        }
                        snprintf(t->held, sizeof(t->held), "%s", err);
                        continue;
                }
                if (t->held[0]) {
                        gp_info("the colour topics of %s have %d partitions now: the held "
                                "partitions %d-%d are read", t->name, n, t->n, n - 1);
                        t->held[0] = '\0';
                }
                gp_info("%s grew from %d to %d partitions; reading the new ones from the "
                        "beginning", t->name, t->n, n);
                if (grow_slot(p, t, n, false) == 0)
                        assign_all(p);
        }
}

/* ---- setup and the loop ----------------------------------------------- */

/* gate.avro.schema: read and compiled once, at start. */
static int load_avsc(gp_proxy_t *p, const char *path, char *err, size_t errlen) {
        FILE *f = fopen(path, "rb");
        char *buf = NULL, why[256];
        size_t n = 0;
        int rc = -1;
        if (!f) {
                snprintf(err, errlen, "gate.avro.schema: %s: %s", path, strerror(errno));
                return -1;
        }
        if (!(buf = malloc((4 << 20) + 1)))
                abort();
        n = fread(buf, 1, (4 << 20) + 1, f);
        if (ferror(f))
                snprintf(err, errlen, "gate.avro.schema: %s: %s", path, strerror(errno));
        else if (n > (4 << 20))
                snprintf(err, errlen, "gate.avro.schema: %s: larger than 4 MiB", path);
        else if (gp_avsc_compile(buf, n, &p->ex, &p->avro_local, why, sizeof why))
                snprintf(err, errlen, "gate.avro.schema: %s: %s (gate.event-time=%s)", path, why,
                         p->conf->event_time);
        else
                rc = 0;
        free(buf);
        fclose(f);
        return rc;
}

gp_proxy_t *gp_proxy_new(const gp_conf_t *conf, char *err, size_t errlen) {
        gp_proxy_t *p = calloc(1, sizeof(*p));
        rd_kafka_conf_t *kc;
        char e2[512];

        if (!p) {
                snprintf(err, errlen, "out of memory");
                return NULL;
        }
        pthread_mutex_init(&p->lock, NULL);
        p->conf = conf;
        gp_conf_drain_warning(conf, p->drain_warning, sizeof(p->drain_warning));
        p->eos = conf->delivery == GP_DELIVERY_EOS;
        p->gconf = (gp_gate_conf_t){
                .out_of_orderness_ms = conf->out_of_orderness_ms,
                .idle_ms = conf->idle_ms,
                .align_ms = conf->align_ms,
                .lateness_ms = conf->lateness_ms,
                .late_to_dlq = conf->late == GP_LATE_DLQ,
                .bad_route_old = conf->bad_record == GP_BAD_ROUTE_OLD,
        };
        p->stats.wm = p->stats.cutoff = GP_TS_NONE;
        if (gp_extract_compile(&p->ex, conf->event_time, conf->event_time_unit, e2, sizeof(e2))) {
                snprintf(err, errlen, "gate.event-time: %s", e2);
                goto fail;
        }
        if (p->ex.kind == GP_ET_AVRO && conf->avro_schema &&
            load_avsc(p, conf->avro_schema, err, errlen))
                goto fail;
        if (p->ex.kind == GP_ET_AVRO && conf->registry_url &&
            !(p->reg = gp_registry_new(conf, &p->ex, err, errlen)))
                goto fail;
        if (conf->k8s_configmap) {
                if (!(p->ctl = gp_ctl_new_k8s(conf->k8s_configmap, conf->k8s_namespace,
                                              conf->k8s_kubeconfig, true, err, errlen)))
                        goto fail;
        } else if (!(p->ctl = gp_ctl_new_file(conf->control_file))) {
                snprintf(err, errlen, "out of memory");
                goto fail;
        }

        /* Producer: transactional (or idempotent for at-least-once). */
        if (!(kc = client_conf(conf, "producer", err, errlen)))
                goto fail;
        int bad = 0;
        set_kafka_conf(kc, "enable.idempotence", "true", err, errlen, &bad);
        /* A producer's metadata request creates a missing topic on a broker
         * with auto.create.topics.enable (Kafka's default), with the
         * broker's partition count and behind gate.topics.create. */
        set_kafka_conf(kc, "allow.auto.create.topics", "false", err, errlen, &bad);
        if (p->eos)
                set_kafka_conf(kc, "transactional.id", conf->transactional_id, err, errlen, &bad);
        /* Room for the largest record routed (gate.record.max.bytes), unless
         * kafka.message.max.bytes says otherwise. */
        if (!user_set(conf, "producer", "message.max.bytes") &&
            conf->record_max_bytes + 65536 > 1000000) {
                char v[32];
                int64_t want = conf->record_max_bytes + 65536;
                snprintf(v, sizeof v, "%" PRId64, want > 1000000000 ? 1000000000 : want);
                set_kafka_conf(kc, "message.max.bytes", v, err, errlen, &bad);
        }
        /* The producer's queue holds at least two of the largest records. */
        long long need_kb = conf_ll(kc, "message.max.bytes") / 512;
        if (!bad && !user_set(conf, "producer", "queue.buffering.max.kbytes") &&
            need_kb > conf_ll(kc, "queue.buffering.max.kbytes")) {
                char v[32];
                snprintf(v, sizeof v, "%lld", need_kb);
                set_kafka_conf(kc, "queue.buffering.max.kbytes", v, err, errlen, &bad);
        }
        /* Delivery reports only where they are used: at-least-once counts
         * failures, the drain check the offsets written. Exactly-once
         * learns of a failed delivery from commit_transaction, and a report
         * per record is measurable CPU (make bench). */
        if (!p->eos || conf->drain_group_blue || conf->drain_group_green)
                rd_kafka_conf_set_dr_msg_cb(kc, dr_cb);
        rd_kafka_conf_set_log_cb(kc, log_cb);
        rd_kafka_conf_set_opaque(kc, p);
        if (bad || !(p->prod = rd_kafka_new(RD_KAFKA_PRODUCER, kc, err, errlen))) {
                if (bad)
                        rd_kafka_conf_destroy(kc);
                goto fail;
        }
        p->txn_begin = -1;
        p->txn_timeout_ms = 60000; /* librdkafka's default */
        char tto[32];
        size_t tto_n = sizeof(tto);
        if (rd_kafka_conf_get(rd_kafka_conf(p->prod), "transaction.timeout.ms", tto, &tto_n) ==
            RD_KAFKA_CONF_OK)
                p->txn_timeout_ms = strtoll(tto, NULL, 10);

        /* Consumer: assigned, read_committed, offsets only in transactions. */
        if (!(kc = client_conf(conf, "consumer", err, errlen)))
                goto fail;
        set_kafka_conf(kc, "group.id", conf->group_id, err, errlen, &bad);
        set_kafka_conf(kc, "enable.auto.commit", "false", err, errlen, &bad);
        set_kafka_conf(kc, "enable.auto.offset.store", "false", err, errlen, &bad);
        set_kafka_conf(kc, "isolation.level", "read_committed", err, errlen, &bad);
        set_kafka_conf(kc, "auto.offset.reset",
                       conf->source_start == GP_START_LATEST ? "latest" : "earliest", err,
                       errlen, &bad);
        rd_kafka_conf_set_log_cb(kc, log_cb);
        if (bad || !(p->cons = rd_kafka_new(RD_KAFKA_CONSUMER, kc, err, errlen))) {
                if (bad)
                        rd_kafka_conf_destroy(kc);
                goto fail;
        }
        rd_kafka_poll_set_consumer(p->cons);
        p->queue = rd_kafka_queue_get_consumer(p->cons);
        if (!(p->wake = gp_fetchwake_new(p->cons, p->queue)))
                gp_warn("fetch wake-up: no thread; the consumer may pause up to 1 s between "
                        "refills of its queue");

        /* Drain check: a consumer per configured drain group that reads the
         * group's committed offsets and, read_committed, the colour topics
         * after them; it never subscribes, so it never joins the group, and
         * never commits. */
        for (int c = 0; c < 2; c++) {
                const char *g = c == GP_BLUE ? conf->drain_group_blue : conf->drain_group_green;
                if (!g)
                        continue;
                if (!(kc = client_conf(conf, "consumer", err, errlen)))
                        goto fail;
                set_kafka_conf(kc, "group.id", g, err, errlen, &bad);
                set_kafka_conf(kc, "enable.auto.commit", "false", err, errlen, &bad);
                set_kafka_conf(kc, "isolation.level", "read_committed", err, errlen, &bad);
                set_kafka_conf(kc, "enable.partition.eof", "true", err, errlen, &bad);
                set_kafka_conf(kc, "fetch.wait.max.ms", "10", err, errlen, &bad);
                rd_kafka_conf_set_log_cb(kc, log_cb);
                if (bad || !(p->drain[c] = rd_kafka_new(RD_KAFKA_CONSUMER, kc, err, errlen))) {
                        if (bad)
                                rd_kafka_conf_destroy(kc);
                        goto fail;
                }
        }
        p->cgmd = rd_kafka_consumer_group_metadata_new(conf->group_id);
        return p;
fail:
        gp_proxy_destroy(p);
        return NULL;
}

void gp_proxy_stop(gp_proxy_t *p) {
        atomic_store(&p->stop, 1);
}

void gp_proxy_stats(gp_proxy_t *p, gp_stats_t *out) {
        pthread_mutex_lock(&p->lock);
        *out = p->stats;
        pthread_mutex_unlock(&p->lock);
}

void gp_proxy_destroy(gp_proxy_t *p) {
        if (!p)
                return;
        for (int i = 0; i < p->n_topics; i++) {
                for (int c = 0; c < 2; c++)
                        if (p->topics[i].out[c])
                                rd_kafka_topic_destroy(p->topics[i].out[c]);
                free(p->topics[i].parts);
        }
        free(p->topics);
        free(p->pptrs);
        if (p->dlq)
                rd_kafka_topic_destroy(p->dlq);
        gp_registry_destroy(p->reg);
        gp_avro_free(&p->avro_local);
        gp_fetchwake_destroy(p->wake);
        if (p->queue)
                rd_kafka_queue_destroy(p->queue);
        if (p->cgmd)
                rd_kafka_consumer_group_metadata_destroy(p->cgmd);
        if (p->cons) {
                rd_kafka_consumer_close(p->cons);
                rd_kafka_destroy(p->cons);
        }
        if (p->prod)
                rd_kafka_destroy(p->prod);
        for (int c = 0; c < 2; c++)
                if (p->drain[c])
                        rd_kafka_destroy_flags(p->drain[c],
                                               RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        gp_ctl_destroy(p->ctl);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

/* Source, colour and dead-letter topics: exist, big enough, handles open. */
static int setup_topics(gp_proxy_t *p, char *err, size_t errlen) {
        const gp_conf_t *conf = p->conf;
        if (!(p->topics = calloc((size_t)conf->n_topics, sizeof(*p->topics))))
                return -1;
        p->n_topics = conf->n_topics;
        for (int i = 0; i < conf->n_topics; i++) {
                tslot_t *t = &p->topics[i];
                t->name = conf->topics[i];
                int n = topic_partitions(p->cons, t->name, err, errlen);
                if (n <= 0) {
                        if (n == 0)
                                snprintf(err, errlen, "source topic %s does not exist", t->name);
                        return -1;
                }
                for (int c = 0; c < 2; c++) {
                        if (gp_conf_topic_name(conf, c ? conf->topic_green : conf->topic_blue,
                                               t->name, t->out_name[c], sizeof(t->out_name[c]))) {
                                snprintf(err, errlen, "colour topic name too long for %s", t->name);
                                return -1;
                        }
                        if ((t->out_n[c] = ensure_topic(p, t->out_name[c], n, "colour", err,
                                                        errlen)) < 0)
                                return -1;
                        if (!(t->out[c] = rd_kafka_topic_new(p->prod, t->out_name[c], NULL))) {
                                snprintf(err, errlen, "%s: %s", t->out_name[c],
                                         rd_kafka_err2str(rd_kafka_last_error()));
                                return -1;
                        }
                }
                if (grow_slot(p, t, n, conf->source_start == GP_START_LATEST))
                        return -1;
        }
        if ((p->dlq_n = ensure_topic(p, conf->dlq_topic, 1, "dead-letter", err, errlen)) < 0)
                return -1;
        if (!(p->dlq = rd_kafka_topic_new(p->prod, conf->dlq_topic, NULL))) {
                snprintf(err, errlen, "%s: %s", conf->dlq_topic,
                         rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        return 0;
}

int gp_proxy_run(gp_proxy_t *p) {
        char err[1024];
        int64_t mono = gp_mono_ms(), now;
        int code = GP_EXIT_OK;
        gp_wm_view_t wv = {.wm = GP_TS_NONE};

        /* 1. A valid control map first: consume nothing without one. */
        while (!p->stop && gp_ctl_poll(p->ctl, true) < 0) {
                if (gp_mono_ms() >= p->next_ctl_warn) {
                        gp_warn("waiting for a valid control map: %s", gp_ctl_error(p->ctl));
                        p->next_ctl_warn = gp_mono_ms() + 5000;
                }
                rd_kafka_poll(p->prod, 200);
        }
        if (p->stop)
                return GP_EXIT_OK;

        /* 2. Topics, transactions, checkpoint, assignment. */
        if (setup_topics(p, err, sizeof(err))) {
                gp_error("%s", err);
                return GP_EXIT_TOPICS;
        }
        if (p->eos) {
                rd_kafka_error_t *e = rd_kafka_init_transactions(p->prod, TIMEOUT_MS);
                if (e) {
                        gp_error("init transactions (transactional.id %s): %s",
                                 p->conf->transactional_id, rd_kafka_error_string(e));
                        rd_kafka_error_destroy(e);
                        return exit_for_fatal(p) == GP_EXIT_FENCED ? GP_EXIT_FENCED
                                                                   : GP_EXIT_FATAL;
                }
        }
        if (restore(p, gp_ctl_current(p->ctl), err, sizeof(err))) {
                gp_error("%s", err);
                return GP_EXIT_STATE;
        }
        if (assign_all(p))
                return GP_EXIT_FATAL;
        on_committed(p);
        pthread_mutex_lock(&p->lock);
        p->stats.running = 1;
        pthread_mutex_unlock(&p->lock);
        gp_info("routing %d topic(s), %zu partition(s), %s, pipeline %s",
                p->n_topics, p->n_pptrs, p->eos ? "exactly-once" : "at-least-once",
                p->conf->pipeline);
        p->next_discovery = mono + p->conf->discovery_ms;

        rd_kafka_message_t *msgs[BATCH];
        while (!p->stop || p->need_commit) {
                mono = gp_mono_ms();
                now = gp_now_ms();
                boundary(p, now, mono, &wv);
                if (mono >= p->next_discovery) {
                        discover(p);
                        p->next_discovery = mono + p->conf->discovery_ms;
                }
                if (mono >= p->next_status) {
                        status_write(p, now, &wv);
                        p->next_status = mono + p->conf->status_interval_ms;
                }

                /* One transaction, begun at the first record (or at once
                 * when a decision must be checkpointed). */
                bool open = false;
                int64_t count = 0, deadline = mono + p->conf->commit_interval_ms;
                txres_t r = TX_OK;
                if (p->need_commit && p->eos) {
                        r = begin_txn(p);
                        open = r == TX_OK;
                }
                while (r == TX_OK && !p->stop && count < p->conf->commit_records) {
                        int64_t left = deadline - gp_mono_ms();
                        if (left <= 0)
                                break;
                        size_t want = (size_t)(p->conf->commit_records - count);
                        ssize_t got = rd_kafka_consume_batch_queue(
                                p->queue, (int)(left < GP_WAIT_MS ? left : GP_WAIT_MS), msgs,
                                want < BATCH ? want : BATCH);
                        gp_fetchwake_after(p->wake, msgs, got);
                        now = gp_now_ms();
                        bool drop = false;
                        if (p->reg && r == TX_OK &&
                            schemas_missing(p, msgs, got, gp_mono_ms())) {
                                /* Commit what came before: no transaction
                                 * waits on the registry. */
                                if (open || (!p->eos && count))
                                        r = commit(p);
                                open = false;
                                int fr = r == TX_OK ? fetch_schemas(p, msgs, got) : 0;
                                drop = fr == -2;
                                if (fr == -1)
                                        r = TX_FATAL;
                                now = gp_now_ms();
                        }
                        int64_t bmono = gp_mono_ms();
                        for (ssize_t i = 0; i < got; i++) {
                                rd_kafka_message_t *m = msgs[i];
                                tslot_t *t;
                                if (drop || r != TX_OK || m->err || !(t = slot_of(p, m->rkt)) ||
                                    m->partition >= t->n ||
                                    m->offset < t->parts[m->partition].pos) {
                                        if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                                gp_warn("consume: %s", rd_kafka_message_errstr(m));
                                        rd_kafka_message_destroy(m);
                                        continue;
                                }
                                if (!open && p->eos) {
                                        r = begin_txn(p);
                                        open = r == TX_OK;
                                }
                                if (r == TX_OK) {
                                        GP_FAULT("before-produce");
                                        if (handle(p, t, m, now, bmono))
                                                r = TX_ABORT;
                                        count++;
                                        open = true;
                                }
                                rd_kafka_message_destroy(m);
                        }
                        rd_kafka_poll(p->prod, 0);
                        /* A changed control map ends the window early, so
                         * it applies within ~100 ms even with a long
                         * gate.commit.interval.ms. */
                        if (gp_mono_ms() >= p->next_ctl_check) {
                                p->next_ctl_check = gp_mono_ms() + 100;
                                /* Only a new valid map ends the window: a map
                                 * that stays invalid changes nothing here. */
                                if ((p->ctl_pending = gp_ctl_poll(p->ctl, false)) == 1)
                                        break;
                        }
                }
                /* At-least-once commits a decision with no records too,
                 * or an idle source would never see its T published. */
                if (r == TX_OK && (open || (!p->eos && (count || p->need_commit))))
                        r = commit(p);
                if (r == TX_ABORT)
                        r = abort_txn(p);
                if (r == TX_FATAL) {
                        code = exit_for_fatal(p);
                        break;
                }
        }
        if (code == GP_EXIT_OK) {
                /* Publish what the last commit decided, and a last status. */
                publish(p, gp_mono_ms());
                status_write(p, gp_now_ms(), &wv);
                gp_info("stopped after %" PRIu64 " transactions (%" PRIu64 " fetch wake-ups)",
                        p->stats.txns, gp_fetchwake_count(p->wake));
        }
        return code;
}
