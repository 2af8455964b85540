/* proxy/loop/drainer.c: the drain check on its own thread (proxy/loop/drainer.h); the
 * verdict per partition is gate/drain.h's. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/drain.h"
#include "os/worker.h"
#include "proxy/loop/kafka_clients.h"
#include "proxy/loop/drainer.h"
#include "proxy/base/log.h"

#define CHECK_EVERY_MS  250 /* a group's commit is seen within a quarter second */
#define OFFSETS_WAIT_MS 5000
#define READ_WAIT_MS    3000

typedef struct tlist {
        gp_colour_t old;
        gp_drain_target_t *t;
        size_t n, cap;
} tlist_t;

struct gp_drainer {
        const gp_conf_t *conf;
        rd_kafka_t *rk[2]; /* per colour: reads its drain group's offsets; NULL: none */
        gp_worker_t w;     /* w.lock guards what follows */
        bool asked;        /* ask holds a check waiting or running (the thread reads it) */
        tlist_t ask;
        bool have; /* done holds the last finished check */
        tlist_t done;
        bool drained;
        int64_t next;      /* mono ms: no check starts before */
        char msg[512];     /* the progress last logged (the thread's) */
        int64_t lag[2];    /* per colour: the last check's lag, -1: unknown */
        char said[2][512]; /* per colour: the last check's msg, "" when unknown */
};

static bool same(const tlist_t *a, gp_colour_t old, const gp_drain_target_t *t, size_t n) {
        if (a->old != old || a->n != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (a->t[i].topic != t[i].topic || a->t[i].partition != t[i].partition ||
                    a->t[i].written != t[i].written)
                        return false;
        return true;
}

static int set(tlist_t *a, gp_colour_t old, const gp_drain_target_t *t, size_t n) {
        if (n > a->cap) {
                gp_drain_target_t *nt = realloc(a->t, n * sizeof(*nt));
                if (!nt)
                        return -1;
                a->t = nt;
                a->cap = n;
        }
        if (n)
                memcpy(a->t, t, n * sizeof(*t));
        a->n = n;
        a->old = old;
        return 0;
}

/* Whether reader rk finds a committed record at or after p[i] 's
 * gp_drain_from() on l->elems[i], for each i that asks: p[i].found is 1
 * (a record), 0 (the end: none) or stays -1 (no answer in wait_ms). rk
 * reads read_committed with partition EOF events, so aborted records and
 * transaction markers are skipped and the end is the last stable offset. */
static void read_after(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *l,
                       gp_drain_part_t *p, int64_t wait_ms) {
        rd_kafka_topic_partition_list_t *a = rd_kafka_topic_partition_list_new(l->cnt);
        int left = 0;
        for (int i = 0; i < l->cnt; i++) {
                p[i].found = -1;
                int64_t from = gp_drain_from(&p[i]);
                if (from < 0)
                        continue;
                rd_kafka_topic_partition_list_add(a, l->elems[i].topic, l->elems[i].partition)
                        ->offset = from;
                left++;
        }
        if (left && !rd_kafka_assign(rk, a)) {
                int64_t end = gp_mono_ms() + wait_ms;
                while (left && gp_mono_ms() < end) {
                        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
                        if (!m)
                                continue;
                        if (!m->err || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                                const char *tn = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
                                for (int i = 0; i < l->cnt; i++)
                                        if (p[i].found < 0 && gp_drain_from(&p[i]) >= 0 &&
                                            l->elems[i].partition == m->partition &&
                                            !strcmp(l->elems[i].topic, tn)) {
                                                p[i].found = m->err ? 0 : 1;
                                                left--;
                                        }
                        }
                        rd_kafka_message_destroy(m);
                }
                rd_kafka_assign(rk, NULL);
        }
        rd_kafka_topic_partition_list_destroy(a);
}

/* One check of the targets in a; logs progress when it changes. */
static bool check(gp_drainer_t *d, const tlist_t *a) {
        rd_kafka_t *rk = d->rk[a->old];
        const char *group =
                a->old == GP_BLUE ? d->conf->drain_group_blue : d->conf->drain_group_green;
        size_t np = a->n ? a->n : 1;
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)np);
        gp_drain_part_t *p = calloc(np, sizeof(*p));
        char msg[512] = "", topics[300] = "";
        int done = 0, reads = 0;
        int64_t lag = 0;
        bool ok = p != NULL;
        for (size_t i = 0; ok && i < a->n; i++) {
                if (!i || strcmp(a->t[i].topic, a->t[i - 1].topic)) {
                        size_t tl = strlen(topics);
                        if (tl < sizeof(topics) - 1)
                                snprintf(topics + tl, sizeof(topics) - tl, "%s%s",
                                         i ? "," : "", a->t[i].topic);
                }
                rd_kafka_topic_partition_list_add(l, a->t[i].topic, a->t[i].partition);
                p[i].written = a->t[i].written;
        }
        if (ok) {
                rd_kafka_resp_err_t e = rd_kafka_committed(rk, l, OFFSETS_WAIT_MS);
                if (e) {
                        snprintf(msg, sizeof(msg),
                                 "drain check: committed offsets of group "
                                 "%s: %s",
                                 group, rd_kafka_err2str(e));
                        ok = false;
                }
        }
        /* Offsets first; the partition's own only where this process wrote
         * nothing; then one read for those that need it. */
        for (int i = 0; ok && i < l->cnt; i++) {
                const rd_kafka_topic_partition_t *tp = &l->elems[i];
                if (tp->err) {
                        snprintf(msg, sizeof(msg),
                                 "drain check: committed offset of group "
                                 "%s on %s/%d: %s",
                                 group, tp->topic, tp->partition, rd_kafka_err2str(tp->err));
                        ok = false;
                        break;
                }
                p[i].committed = tp->offset;
                if (p[i].written >= 0)
                        continue;
                rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
                        rk, tp->topic, tp->partition, &p[i].lo, &p[i].hi, OFFSETS_WAIT_MS);
                if (e) {
                        snprintf(msg, sizeof(msg), "drain check: end offset of %s/%d: %s",
                                 tp->topic, tp->partition, rd_kafka_err2str(e));
                        ok = false;
                        break;
                }
                reads += gp_drain_from(&p[i]) >= 0;
        }
        if (ok && reads)
                read_after(rk, l, p, READ_WAIT_MS);
        for (int i = 0; ok && i < l->cnt; i++) {
                int64_t plag;
                gp_drain_state_t s = gp_drain_state(&p[i], &plag);
                if (s == GP_DRAIN_UNKNOWN) {
                        snprintf(msg, sizeof(msg),
                                 "drain check: reading %s/%d from offset %" PRId64
                                 " gave no answer in %d s",
                                 l->elems[i].topic, l->elems[i].partition,
                                 gp_drain_from(&p[i]), READ_WAIT_MS / 1000);
                        ok = false;
                } else if (s == GP_DRAIN_DONE)
                        done++;
                else
                        lag += plag;
        }
        if (ok && done == l->cnt)
                snprintf(msg, sizeof(msg),
                         "group %s has consumed all the proxy wrote to %s "
                         "(%d partitions): the old side may close",
                         group, topics, l->cnt);
        else if (ok)
                snprintf(msg, sizeof(msg),
                         "waiting for group %s to consume %s: %d of %d "
                         "partitions drained, lag %" PRId64,
                         group, topics, done, l->cnt, lag);
        else if (!p)
                snprintf(msg, sizeof(msg), "drain check: out of memory");
        if (strcmp(msg, d->msg)) {
                gp_log(ok ? GP_LOG_INFO : GP_LOG_WARN, "%s", msg);
                snprintf(d->msg, sizeof(d->msg), "%s", msg);
        }
        bool drained = ok && done == l->cnt;
        pthread_mutex_lock(&d->w.lock);
        d->lag[a->old] = ok ? lag : -1;
        snprintf(d->said[a->old], sizeof(d->said[a->old]), "%s", msg);
        pthread_mutex_unlock(&d->w.lock);
        rd_kafka_topic_partition_list_destroy(l);
        free(p);
        return drained;
}

static void *run(void *arg) {
        gp_drainer_t *d = arg;
        pthread_mutex_lock(&d->w.lock);
        for (;;) {
                while (!d->asked && !gp_worker_quitting(&d->w))
                        gp_worker_wait(&d->w, -1);
                if (gp_worker_quitting(&d->w))
                        break;
                /* d->ask is not written while d->asked is set. */
                pthread_mutex_unlock(&d->w.lock);
                bool drained = check(d, &d->ask);
                pthread_mutex_lock(&d->w.lock);
                tlist_t t = d->done;
                d->done = d->ask;
                d->ask = t;
                d->drained = drained;
                d->have = true;
                d->asked = false;
                d->next = gp_mono_ms() + CHECK_EVERY_MS;
        }
        pthread_mutex_unlock(&d->w.lock);
        return NULL;
}

gp_drainer_t *gp_drainer_new(const gp_conf_t *conf, gp_err_t *err) {
        if (!conf->drain_group_blue && !conf->drain_group_green)
                return NULL;
        gp_drainer_t *d = calloc(1, sizeof(*d));
        if (!d) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        if (gp_worker_init(&d->w)) {
                free(d);
                gp_err_set(err, GP_ERR_FAIL, "drain check: cannot make its lock");
                return NULL;
        }
        d->conf = conf;
        d->lag[0] = d->lag[1] = -1;
        for (int c = 0; c < 2; c++) {
                const char *g =
                        c == GP_BLUE ? conf->drain_group_blue : conf->drain_group_green;
                rd_kafka_conf_t *kc;
                int bad = 0;
                if (!g)
                        continue;
                if (!(kc = gp_client_conf(conf, "consumer", err)))
                        goto fail;
                gp_client_set(kc, "group.id", g, err, &bad);
                gp_client_set(kc, "enable.auto.commit", "false", err, &bad);
                gp_client_set(kc, "isolation.level", "read_committed", err, &bad);
                gp_client_set(kc, "enable.partition.eof", "true", err, &bad);
                gp_client_set(kc, "fetch.wait.max.ms", "10", err, &bad);
                if (bad || !(d->rk[c] = gp_client_new(RD_KAFKA_CONSUMER, kc, err))) {
                        rd_kafka_conf_destroy(kc);
                        goto fail;
                }
        }
        if (gp_worker_start(&d->w, run, d)) {
                gp_err_set(err, GP_ERR_FAIL, "drain check: cannot start its thread");
                goto fail;
        }
        return d;
fail:
        gp_drainer_destroy(d);
        return NULL;
}

void gp_drainer_destroy(gp_drainer_t *d) {
        if (!d)
                return;
        gp_worker_stop(&d->w);
        for (int c = 0; c < 2; c++)
                if (d->rk[c])
                        rd_kafka_destroy_flags(d->rk[c], RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        free(d->ask.t);
        free(d->done.t);
        gp_worker_fini(&d->w);
        free(d);
}

bool gp_drainer_has(const gp_drainer_t *d, gp_colour_t c) {
        return d && d->rk[c];
}

bool gp_drainer_ask(gp_drainer_t *d, gp_colour_t old, const gp_drain_target_t *t, size_t n) {
        if (!gp_drainer_has(d, old))
                return false;
        pthread_mutex_lock(&d->w.lock);
        bool v = d->have && d->drained && same(&d->done, old, t, n);
        if (!v && !d->asked && gp_mono_ms() >= d->next && !set(&d->ask, old, t, n)) {
                d->asked = true;
                gp_worker_wake(&d->w);
        }
        pthread_mutex_unlock(&d->w.lock);
        return v;
}

void gp_drainer_said(gp_drainer_t *d, gp_colour_t c, char *buf, size_t len) {
        buf[0] = '\0';
        if (!d)
                return;
        pthread_mutex_lock(&d->w.lock);
        snprintf(buf, len, "%s", d->said[c]);
        pthread_mutex_unlock(&d->w.lock);
}

int64_t gp_drainer_lag(gp_drainer_t *d, gp_colour_t c) {
        if (!d)
                return -1;
        pthread_mutex_lock(&d->w.lock);
        int64_t lag = d->lag[c];
        pthread_mutex_unlock(&d->w.lock);
        return lag;
}
