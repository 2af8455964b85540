/* proxy/loop/fetchwake.c: the fetch wake-up (proxy/loop/fetchwake.h). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "os/worker.h"
#include "proxy/loop/fetchwake.h"

struct gp_fetchwake {
        rd_kafka_t *cons;
        rd_kafka_queue_t *q;
        double min_records, min_bytes; /* half the fetcher's thresholds */
        double record_bytes;           /* running mean of a record's key + value */
        bool armed;                    /* the queue was at least half full */

        gp_worker_t wk;                         /* wk.lock guards what follows */
        rd_kafka_topic_partition_list_t *parts; /* assigned */
        bool wanted;
        atomic_uint_fast64_t sent; /* requests sent */
};

static void *run(void *arg) {
        gp_fetchwake_t *w = arg;
        pthread_mutex_lock(&w->wk.lock);
        for (;;) {
                while (!w->wanted && !gp_worker_quitting(&w->wk))
                        gp_worker_wait(&w->wk, -1);
                if (gp_worker_quitting(&w->wk))
                        break;
                w->wanted = false;
                rd_kafka_topic_partition_list_t *l =
                        w->parts ? rd_kafka_topic_partition_list_copy(w->parts) : NULL;
                pthread_mutex_unlock(&w->wk.lock);
                if (l && l->cnt) {
                        for (int i = 0; i < l->cnt; i++)
                                l->elems[i].offset = RD_KAFKA_OFFSET_END; /* latest */
                        rd_kafka_offsets_for_times(w->cons, l, 5000);
                        atomic_fetch_add(&w->sent, 1);
                }
                if (l)
                        rd_kafka_topic_partition_list_destroy(l);
                pthread_mutex_lock(&w->wk.lock);
        }
        pthread_mutex_unlock(&w->wk.lock);
        return NULL;
}

static double conf_num(rd_kafka_t *rk, const char *key, double dflt) {
        char v[64];
        size_t n = sizeof v;
        if (rd_kafka_conf_get(rd_kafka_conf(rk), key, v, &n) != RD_KAFKA_CONF_OK)
                return dflt;
        return strtod(v, NULL);
}

gp_fetchwake_t *gp_fetchwake_new(rd_kafka_t *cons, rd_kafka_queue_t *q) {
        gp_fetchwake_t *w = calloc(1, sizeof *w);
        if (!w)
                return NULL;
        w->cons = cons;
        w->q = q;
        w->min_records = conf_num(cons, "queued.min.messages", 100000) / 2;
        w->min_bytes = conf_num(cons, "queued.max.messages.kbytes", 65536) * 1024 / 2;
        w->record_bytes = 100;
        if (gp_worker_init(&w->wk)) {
                free(w);
                return NULL;
        }
        if (gp_worker_start(&w->wk, run, w)) {
                gp_worker_fini(&w->wk);
                free(w);
                return NULL;
        }
        return w;
}

void gp_fetchwake_destroy(gp_fetchwake_t *w) {
        if (!w)
                return;
        gp_worker_stop(&w->wk);
        if (w->parts)
                rd_kafka_topic_partition_list_destroy(w->parts);
        gp_worker_fini(&w->wk);
        free(w);
}

void gp_fetchwake_assigned(gp_fetchwake_t *w, const rd_kafka_topic_partition_list_t *l) {
        if (!w)
                return;
        rd_kafka_topic_partition_list_t *c = rd_kafka_topic_partition_list_copy(l);
        pthread_mutex_lock(&w->wk.lock);
        if (w->parts)
                rd_kafka_topic_partition_list_destroy(w->parts);
        w->parts = c;
        pthread_mutex_unlock(&w->wk.lock);
}

void gp_fetchwake_after(gp_fetchwake_t *w, rd_kafka_message_t *const *msgs, ssize_t got) {
        if (!w)
                return;
        if (got > 0) {
                size_t b = 0;
                for (ssize_t i = 0; i < got; i++)
                        b += msgs[i]->len + msgs[i]->key_len;
                w->record_bytes = (7 * w->record_bytes + (double)b / (double)got) / 8;
        }
        /* Before this read the queue held at least n + got records: if
         * that was half the fetcher's thresholds or more (by count, or by
         * bytes estimated from the records read), the fetcher may have
         * stopped, and once the queue is below half it is woken. */
        double n = (double)rd_kafka_queue_length(w->q),
               before = n + (double)(got > 0 ? got : 0);
        if (before >= w->min_records || before * w->record_bytes >= w->min_bytes)
                w->armed = true;
        if (w->armed && n < w->min_records && n * w->record_bytes < w->min_bytes) {
                w->armed = false;
                pthread_mutex_lock(&w->wk.lock);
                w->wanted = true;
                gp_worker_wake(&w->wk);
                pthread_mutex_unlock(&w->wk.lock);
        }
}

uint64_t gp_fetchwake_count(const gp_fetchwake_t *w) {
        return w ? atomic_load(&w->sent) : 0;
}
