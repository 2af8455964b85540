/* os/clock.h: the clocks and the waits every thread uses: wall-clock and
 * monotonic milliseconds, a sleep, and the deadline of a timed wait on a
 * condition variable that runs on the monotonic clock. May use libc and
 * POSIX only. */
#ifndef GP_OS_CLOCK_H
#define GP_OS_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Wall-clock milliseconds since the epoch (event times, the map's
 * heartbeat). */
int64_t gp_now_ms(void);
/* Monotonic milliseconds (intervals, timeouts, deadlines). */
int64_t gp_mono_ms(void);
/* Sleeps ms milliseconds, or less when a signal arrives; nothing for
 * ms <= 0. */
void gp_sleep_ms(int64_t ms);
/* Initialises c to wait on CLOCK_MONOTONIC, so gp_deadline_ms's deadlines
 * hold across wall-clock steps. 0 or an errno. */
int gp_cond_init_mono(pthread_cond_t *c);
/* The CLOCK_MONOTONIC instant ms from now, for pthread_cond_timedwait on a
 * condition variable made by gp_cond_init_mono. */
struct timespec gp_deadline_ms(int64_t ms);

#endif
