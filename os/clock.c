/* os/clock.c: clocks and waits (os/clock.h). */
#include "os/clock.h"

static int64_t ms_of(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gp_now_ms(void) {
        return ms_of(CLOCK_REALTIME);
}

int64_t gp_mono_ms(void) {
        return ms_of(CLOCK_MONOTONIC);
}

void gp_sleep_ms(int64_t ms) {
        if (ms <= 0)
                return;
        struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
                              .tv_nsec = (long)(ms % 1000) * 1000000L};
        nanosleep(
                &ts,
                NULL); /* a signal ends it early: the caller's stop flag is then read sooner */
}

int gp_cond_init_mono(pthread_cond_t *c) {
        pthread_condattr_t ca;
        int rc = pthread_condattr_init(&ca);
        if (rc)
                return rc;
        if (!(rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)))
                rc = pthread_cond_init(c, &ca);
        pthread_condattr_destroy(&ca);
        return rc;
}

struct timespec gp_deadline_ms(int64_t ms) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (ms < 0)
                ms = 0;
        t.tv_sec += (time_t)(ms / 1000);
        t.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000L;
        }
        return t;
}
