/* proxy/loop/agreer.c: the agreement thread (proxy/loop/agreer.h); the
 * rule is gate/agree.h's. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/checkpoint.h"
#include "gate/fingerprint.h"
#include "os/worker.h"
#include "proxy/base/log.h"
#include "proxy/loop/agreer.h"
#include "proxy/loop/kafka_clients.h"

#define READ_EVERY_MS 200
#define WAIT_MS       5000

struct gp_agreer {
        rd_kafka_t *rk;
        char **topics;
        int n_topics;
        uint32_t fp;   /* this instance's settings fingerprint */
        gp_worker_t w; /* w.lock guards what follows */
        bool want;     /* a transition is asked */
        gp_colour_t old, new_c;
        int64_t tid;    /* the transition's id; 0: any line of its colours */
        int64_t cutoff; /* T once known: the read counts the partitions closed by it */
        bool based;     /* base is asked about: the census before tid begins */
        gp_gate_t base;
        gp_agreed_t got; /* the last read of what is asked now */
        bool have;
        uint64_t gen;   /* +1 per change of what is asked: a read of another ask is dropped */
        char said[256]; /* the thread's last logged trouble */
};

/* One read of every partition's committed checkpoint for the transition
 * tid, old -> new_c (and, with cutoff set, which of them closed the old
 * side under it; with base, which of them hold tid back). A line of
 * another transition (an earlier one between the same colours, left by a
 * member that died in it) counts as none. -1: the read failed (out
 * untouched). */
static int read_all(gp_agreer_t *a, gp_colour_t old, gp_colour_t new_c, int64_t tid,
                    int64_t cutoff, const gp_gate_t *base, gp_agreed_t *out) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(64);
        for (int t = 0; t < a->n_topics; t++) {
                int n = gp_client_partitions(a->rk, a->topics[t], WAIT_MS);
                if (n <= 0) {
                        rd_kafka_topic_partition_list_destroy(l);
                        return -1;
                }
                for (int i = 0; i < n; i++)
                        rd_kafka_topic_partition_list_add(l, a->topics[t], i);
        }
        rd_kafka_resp_err_t e = rd_kafka_committed(a->rk, l, WAIT_MS);
        if (e) {
                rd_kafka_topic_partition_list_destroy(l);
                return -1;
        }
        int64_t *pr = calloc((size_t)l->cnt + 1, sizeof(*pr));
        bool *cl = calloc((size_t)l->cnt + 1, sizeof(*cl));
        if (!pr || !cl) {
                free(pr);
                free(cl);
                rd_kafka_topic_partition_list_destroy(l);
                return -1;
        }
        gp_agreed_t r = {.cutoff = GP_TS_NONE, .parts = (size_t)l->cnt};
        int64_t known = GP_TS_NONE;
        for (int i = 0; i < l->cnt; i++) {
                const rd_kafka_topic_partition_t *tp = &l->elems[i];
                gp_gate_t g;
                gp_part_t part;
                char why[128];
                pr[i] = GP_TS_NONE;
                gp_part_init(&part, 0);
                if (tp->err || !tp->metadata || !tp->metadata_size ||
                    gp_ckpt_decode(tp->metadata, tp->metadata_size, &g, &part, why,
                                   sizeof why))
                        continue;
                if (base && !gp_agree_settled(base, tid, &g, &part))
                        r.unsettled++;
                if (g.old_c != old || g.new_c != new_c || (tid && g.tid != tid))
                        continue;
                if (!gp_fp_counts(a->fp, part.fp)) {
                        /* Written under other settings: no promise, no T
                         * and no close is taken from it (the members
                         * watch refuses a live member that writes so;
                         * a line an earlier owner left is rewritten by
                         * its next owner). */
                        r.other++;
                        r.other_fp = part.fp;
                        r.any |= g.phase == GP_PHASE_WAITING && part.promise != GP_TS_NONE;
                        continue;
                }
                if (g.phase == GP_PHASE_SPLIT && g.cutoff != GP_TS_NONE) {
                        /* T already taken by the partition's owner: the
                         * maximum of the promises it read, the same for
                         * every reader. */
                        known = g.cutoff;
                        pr[i] = g.cutoff;
                } else if (g.phase == GP_PHASE_WAITING)
                        pr[i] = part.promise;
                /* Closed under the T asked about: by the partition's own
                 * watermark while the gate splits, or with the gate. */
                cl[i] = cutoff != GP_TS_NONE && g.cutoff == cutoff && !part.ro &&
                        ((g.phase == GP_PHASE_SPLIT && part.closed) ||
                         g.phase == GP_PHASE_CLOSED);
                r.closed += cl[i];
                if (pr[i] != GP_TS_NONE) {
                        r.promised++;
                        r.any = true;
                }
        }
        r.cutoff = known != GP_TS_NONE ? known : gp_agree_cutoff(pr, (size_t)l->cnt);
        r.all_closed = gp_agree_all_closed(cl, (size_t)l->cnt);
        free(pr);
        free(cl);
        rd_kafka_topic_partition_list_destroy(l);
        *out = r;
        return 0;
}

static void *run(void *arg) {
        gp_agreer_t *a = arg;
        pthread_mutex_lock(&a->w.lock);
        while (!gp_worker_quitting(&a->w)) {
                if (!a->want) {
                        gp_worker_wait(&a->w, -1);
                        continue;
                }
                gp_colour_t old = a->old, new_c = a->new_c;
                int64_t tid = a->tid, cutoff = a->cutoff;
                gp_gate_t base = a->base;
                bool based = a->based;
                uint64_t gen = a->gen;
                pthread_mutex_unlock(&a->w.lock);
                gp_agreed_t r;
                int rc = read_all(a, old, new_c, tid, cutoff, based ? &base : NULL, &r);
                r.read_ms = gp_now_ms();
                pthread_mutex_lock(&a->w.lock);
                if (rc == 0 && gen == a->gen) {
                        a->got = r;
                        a->have = true;
                        if (a->said[0])
                                gp_info("agreement: committed checkpoints readable again");
                        a->said[0] = '\0';
                } else if (rc != 0 && !a->said[0]) {
                        snprintf(a->said, sizeof a->said, "cannot read");
                        gp_warn("agreement: cannot read the committed checkpoints of every "
                                "source partition; retrying");
                }
                if (gp_worker_quitting(&a->w))
                        break;
                gp_worker_wait(&a->w, READ_EVERY_MS);
        }
        pthread_mutex_unlock(&a->w.lock);
        return NULL;
}

gp_agreer_t *gp_agreer_new(const gp_conf_t *conf, const char *const *topics, int n,
                           uint32_t fp, gp_err_t *err) {
        gp_agreer_t *a = calloc(1, sizeof(*a));
        if (!a || !(a->topics = calloc((size_t)n + 1, sizeof(char *)))) {
                free(a);
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        if (gp_worker_init(&a->w)) {
                free(a->topics);
                free(a);
                gp_err_set(err, GP_ERR_FAIL, "agreement: cannot make its lock");
                return NULL;
        }
        a->fp = fp;
        for (int i = 0; i < n; i++)
                if (!(a->topics[a->n_topics++] = strdup(topics[i]))) {
                        gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                        goto fail;
                }
        rd_kafka_conf_t *kc;
        int bad = 0;
        if (!(kc = gp_client_conf(conf, "consumer", err)))
                goto fail;
        gp_client_set(kc, "group.id", conf->group_id, err, &bad);
        gp_client_set(kc, "enable.auto.commit", "false", err, &bad);
        /* read_uncommitted: its offset reads then leave out RequireStable.
         * A stable read fails, and is retried as a whole, while any member
         * has a transaction open with offsets in it, which with many members
         * committing every 100 ms may be always; a plain read gives each
         * partition's last committed line, never a pending one, and the
         * rule (the maximum of committed promises, every line closed) only
         * waits longer for a line still pending. */
        gp_client_set(kc, "isolation.level", "read_uncommitted", err, &bad);
        if (bad || !(a->rk = gp_client_new(RD_KAFKA_CONSUMER, kc, err))) {
                rd_kafka_conf_destroy(kc);
                goto fail;
        }
        if (gp_worker_start(&a->w, run, a)) {
                gp_err_set(err, GP_ERR_FAIL, "agreement: cannot start its thread");
                goto fail;
        }
        return a;
fail:
        gp_agreer_destroy(a);
        return NULL;
}

void gp_agreer_destroy(gp_agreer_t *a) {
        if (!a)
                return;
        gp_worker_stop(&a->w);
        if (a->rk)
                rd_kafka_destroy_flags(a->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        for (int i = 0; i < a->n_topics; i++)
                free(a->topics[i]);
        free(a->topics);
        gp_worker_fini(&a->w);
        free(a);
}

/* The census's base, as far as gp_agree_settled reads it. */
static bool same_base(const gp_agreer_t *a, const gp_gate_t *base) {
        if (!base || !a->based)
                return !base && !a->based;
        return a->base.tid == base->tid && a->base.phase == base->phase;
}

void gp_agreer_ask(gp_agreer_t *a, gp_colour_t old, gp_colour_t new_c, int64_t tid,
                   int64_t cutoff, const gp_gate_t *base, gp_agreed_t *out) {
        *out = (gp_agreed_t){.cutoff = GP_TS_NONE};
        pthread_mutex_lock(&a->w.lock);
        if (!a->want || a->old != old || a->new_c != new_c || a->tid != tid ||
            a->cutoff != cutoff || !same_base(a, base)) {
                a->want = true;
                a->old = old;
                a->new_c = new_c;
                a->tid = tid;
                a->cutoff = cutoff;
                a->based = base != NULL;
                if (base)
                        a->base = *base;
                a->have = false;
                a->gen++;
                gp_worker_wake(&a->w);
        } else if (a->have)
                *out = a->got;
        pthread_mutex_unlock(&a->w.lock);
}

void gp_agreer_idle(gp_agreer_t *a) {
        pthread_mutex_lock(&a->w.lock);
        a->want = false;
        a->have = false;
        a->gen++;
        pthread_mutex_unlock(&a->w.lock);
}
