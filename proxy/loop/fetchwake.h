/* proxy/loop/fetchwake.h: small prefetch queues without fetch stalls.
 *
 * gate-proxy keeps its consumer's prefetch queue small (gp_bounded_defaults
 * in proxy/conf/conf.h:
 * at most 10,000 records or 4 MiB), so its memory stays flat whatever the
 * partition count and record size. librdkafka 2.0.2 stops fetching when
 * that queue is over queued.min.messages or queued.max.messages.kbytes and
 * looks again only when something else wakes its broker thread, or after a
 * second (the fetch.queue.backoff.ms of later releases, fixed at 1 s here),
 * so a small queue drains long before the fetcher resumes.
 *
 * The wake-up watches the queue from the consuming thread: once a read
 * finds it at least half full (by count, or by bytes estimated from the
 * records read) and it is below half again, a thread of its own sends one
 * ListOffsets request (rd_kafka_offsets_for_times, the answer ignored) to
 * the leaders of the assigned partitions. The request wakes each leader's
 * broker thread, which finds the queue below its thresholds and fetches at
 * once. There is one request per refill, not per batch.
 *
 * Uses librdkafka and os/worker.h (its thread); no other part of gate-proxy. */
#ifndef GP_PROXY_LOOP_FETCHWAKE_H
#define GP_PROXY_LOOP_FETCHWAKE_H

#include <stdint.h>
#include <sys/types.h>

#include <librdkafka/rdkafka.h>

typedef struct gp_fetchwake gp_fetchwake_t;

/* A wake-up for cons, whose records are read from q. Reads the queue
 * thresholds from cons's configuration. NULL when the thread cannot start
 * (the consumer then works as librdkafka alone would). */
gp_fetchwake_t *gp_fetchwake_new(rd_kafka_t *cons, rd_kafka_queue_t *q);
/* Stops the thread; call it before destroying the consumer. NULL is fine. */
void gp_fetchwake_destroy(gp_fetchwake_t *w);

/* The partitions assigned (copied; offsets ignored). */
void gp_fetchwake_assigned(gp_fetchwake_t *w, const rd_kafka_topic_partition_list_t *l);

/* After each rd_kafka_consume_batch_queue on q: the got records read. */
void gp_fetchwake_after(gp_fetchwake_t *w, rd_kafka_message_t *const *msgs, ssize_t got);

/* Wake-ups sent so far. */
uint64_t gp_fetchwake_count(const gp_fetchwake_t *w);

#endif
