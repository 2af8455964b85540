/* proxy/loop/watchdog.c: see watchdog.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "os/clock.h"
#include "os/worker.h"
#include "proxy/base/fault.h"
#include "proxy/base/log.h"
#include "proxy/loop/internal.h"
#include "proxy/loop/watchdog.h"

/* How often the heartbeat is looked at. */
#define LOOK_MS 100

struct gp_watchdog {
        gp_worker_t w;
        gp_proxy_t *p;
        int64_t bound_ms;
};

int64_t gp_watchdog_bound_ms(void) {
        return gp_test_ms("GP_TEST_WATCHDOG_MS", 2 * (int64_t)GP_KAFKA_WAIT_MS);
}

static void *watch(void *arg) {
        gp_watchdog_t *wd = arg;
        int64_t looked = gp_mono_ms(), since = looked;
        pthread_mutex_lock(&wd->w.lock);
        while (!gp_worker_quitting(&wd->w)) {
                gp_worker_wait(&wd->w, LOOK_MS);
                int64_t now = gp_mono_ms();
                /* This thread did not run for a while either: the whole
                 * process was stopped (SIGSTOP) or starved. The loop gets
                 * the full bound from now. */
                if (now - looked > 10 * LOOK_MS)
                        since = now;
                looked = now;
                pthread_mutex_lock(&wd->p->lock);
                int64_t beat = wd->p->stats.beat_mono;
                pthread_mutex_unlock(&wd->p->lock);
                if (!beat)
                        continue; /* not started: as /livez */
                if (beat < since)
                        beat = since;
                int64_t age = now - beat;
                /* A test holding the loop on purpose (GP_FAULT_HOLD) is
                 * not a stuck loop. */
                if (age <= wd->bound_ms || gp_fault_holding())
                        continue;
                gp_error("the loop has not moved for %" PRId64 " ms, longer than any Kafka "
                         "call may wait (%" PRId64 " ms): a librdkafka call does not return "
                         "(librdkafka #5456); exiting (code %d) for a restart, which goes on "
                         "from the last commit",
                         age, wd->bound_ms, GP_EXIT_FATAL);
                _exit(GP_EXIT_FATAL);
        }
        pthread_mutex_unlock(&wd->w.lock);
        return NULL;
}

gp_watchdog_t *gp_watchdog_start(gp_proxy_t *p) {
        gp_watchdog_t *wd = calloc(1, sizeof(*wd));
        if (!wd || gp_worker_init(&wd->w)) {
                free(wd);
                gp_warn("the loop's watchdog could not be started: the loop runs unwatched "
                        "(/livez still reports a stuck loop)");
                return NULL;
        }
        wd->p = p;
        wd->bound_ms = gp_watchdog_bound_ms();
        if (gp_worker_start(&wd->w, watch, wd)) {
                gp_worker_fini(&wd->w);
                free(wd);
                gp_warn("the loop's watchdog could not be started: the loop runs unwatched "
                        "(/livez still reports a stuck loop)");
                return NULL;
        }
        return wd;
}

void gp_watchdog_stop(gp_watchdog_t *wd) {
        if (!wd)
                return;
        gp_worker_fini(&wd->w);
        free(wd);
}
