/* os/worker.c: a side thread's plumbing (os/worker.h). libc and POSIX only. */
#include <errno.h>
#include <time.h>

#include "os/clock.h"
#include "os/worker.h"

int gp_worker_init(gp_worker_t *w) {
        int rc = pthread_mutex_init(&w->lock, NULL);
        if (rc)
                return rc;
        if ((rc = gp_cond_init_mono(&w->cond))) {
                pthread_mutex_destroy(&w->lock);
                return rc;
        }
        w->started = false;
        atomic_store(&w->quit, false);
        return 0;
}

int gp_worker_start(gp_worker_t *w, void *(*fn)(void *), void *arg) {
        if (w->started)
                return EBUSY;
        int rc = pthread_create(&w->thread, NULL, fn, arg);
        if (!rc)
                w->started = true;
        return rc;
}

void gp_worker_wake(gp_worker_t *w) {
        pthread_cond_broadcast(&w->cond);
}

static int timed(gp_worker_t *w, const struct timespec *ts) {
        return pthread_cond_timedwait(&w->cond, &w->lock, ts) == ETIMEDOUT ? ETIMEDOUT : 0;
}

int gp_worker_wait(gp_worker_t *w, int64_t ms) {
        if (ms < 0) {
                pthread_cond_wait(&w->cond, &w->lock);
                return 0;
        }
        struct timespec ts = gp_deadline_ms(ms);
        return timed(w, &ts);
}

int gp_worker_wait_until(gp_worker_t *w, int64_t at) {
        if (at < 0) {
                pthread_cond_wait(&w->cond, &w->lock);
                return 0;
        }
        struct timespec ts = {.tv_sec = (time_t)(at / 1000),
                              .tv_nsec = (long)(at % 1000) * 1000000L};
        return timed(w, &ts);
}

bool gp_worker_quitting(gp_worker_t *w) {
        return atomic_load(&w->quit);
}

void gp_worker_stop(gp_worker_t *w) {
        pthread_mutex_lock(&w->lock);
        atomic_store(&w->quit, true);
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        if (w->started) {
                pthread_join(w->thread, NULL);
                w->started = false;
        }
}

void gp_worker_fini(gp_worker_t *w) {
        gp_worker_stop(w);
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
}
