/* os/worker.h: the plumbing of a side thread, written once: the thread,
 * the lock its owner and it share, a condition variable on
 * CLOCK_MONOTONIC (a wall-clock step neither stretches nor cuts a wait),
 * and the quit flag. The owner embeds a gp_worker_t and keeps only its own
 * logic: what the thread does, and which fields the lock guards. May use
 * libc and POSIX only.
 *
 *   gp_worker_init(&x->w);             lock and cond; nothing runs yet
 *   gp_worker_start(&x->w, run, x);    the thread
 *   run: lock; while (!gp_worker_quitting(&x->w)) { ...;
 *        gp_worker_wait(&x->w, ms); } unlock
 *   owner: lock; change a field; gp_worker_wake(&x->w); unlock
 *   gp_worker_stop(&x->w);             quit, wake, join (idempotent)
 *   gp_worker_fini(&x->w);             stop, then destroy lock and cond */
#ifndef GP_OS_WORKER_H
#define GP_OS_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct gp_worker {
        pthread_mutex_t lock; /* the owner's lock: guards its shared fields too */
        pthread_cond_t cond;  /* on CLOCK_MONOTONIC */
        pthread_t thread;
        bool started;     /* the owner's thread only */
        atomic_bool quit; /* set under lock; readable without it */
} gp_worker_t;

/* Initialises the lock and the condition variable (on CLOCK_MONOTONIC).
 * 0, or an errno with nothing left to destroy. */
int gp_worker_init(gp_worker_t *w);

/* Starts fn(arg) on a thread of its own. 0 or an errno (nothing started;
 * the caller turns it into its own error). Once per worker. */
int gp_worker_start(gp_worker_t *w, void *(*fn)(void *), void *arg);

/* Wakes every waiter on the condition variable (the thread, and any
 * owner waiting for the thread's news). The caller holds the lock. */
void gp_worker_wake(gp_worker_t *w);

/* Waits on the condition variable for a wake, at most ms milliseconds of
 * the monotonic clock; ms < 0: no limit. The caller holds the lock, and
 * checks what it waits for afterwards (a wake may come for another
 * reason, or for none). 0: woken, ETIMEDOUT: ms passed. */
int gp_worker_wait(gp_worker_t *w, int64_t ms);

/* The same up to the monotonic instant at (gp_mono_ms), for a wait in
 * several rounds towards one deadline; at < 0: no limit. */
int gp_worker_wait_until(gp_worker_t *w, int64_t at);

/* Whether gp_worker_stop was called: the thread's loop condition. Takes
 * no lock (a transfer callback may ask). */
bool gp_worker_quitting(gp_worker_t *w);

/* Sets quit, wakes every waiter and joins the thread. The caller does not
 * hold the lock. Idempotent; fine on a worker never started. */
void gp_worker_stop(gp_worker_t *w);

/* gp_worker_stop, then destroys the lock and the condition variable. */
void gp_worker_fini(gp_worker_t *w);

#endif
