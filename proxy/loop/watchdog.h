/* proxy/loop/watchdog.h: the loop's watchdog. A thread beside the loop
 * that ends the process when the loop has not passed for longer than any
 * Kafka call may wait: the loop is then stuck inside a librdkafka call that
 * does not return (librdkafka #5456: send_offsets_to_transaction waiting
 * for ever on a group coordinator that went away). Exactly-once state is
 * in Kafka, so the exit is as safe as a kill: a restart aborts the open
 * transaction and goes on from the last commit (docs/DESIGN.md, When
 * things fail). /livez says the same to a supervisor a moment later. */
#ifndef GP_PROXY_LOOP_WATCHDOG_H
#define GP_PROXY_LOOP_WATCHDOG_H

#include <stdint.h>

#include "proxy/loop/proxy.h"

typedef struct gp_watchdog gp_watchdog_t;

/* The bound: twice the longest wait of one Kafka call (GP_KAFKA_WAIT_MS);
 * the test build takes GP_TEST_WATCHDOG_MS instead when set. */
int64_t gp_watchdog_bound_ms(void);

/* Starts watching p's heartbeat (gp_proxy_beat); NULL when no thread
 * could be started (logged; the loop runs unwatched). */
gp_watchdog_t *gp_watchdog_start(gp_proxy_t *p);

/* Stops and frees it (NULL is fine). */
void gp_watchdog_stop(gp_watchdog_t *w);

#endif
