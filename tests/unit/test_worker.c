/* tests/unit/test_worker.c: os/worker.c, the side-thread plumbing of the
 * members view, the agreement, the drain check, the status writer, the
 * schema registry's fetch thread and the ConfigMap
 * watch. A wake reaches the thread, a timed wait ends on time and no
 * sooner, a wake ends it early, stop joins the thread (and is fine twice,
 * or without a start). Bounds are loose: the test build runs under the
 * sanitizers, on a shared machine. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/clock.h"
#include "os/worker.h"

typedef struct {
        gp_worker_t w;
        int asked;         /* the owner's requests; guarded by w.lock */
        int served;        /* the thread's answers; guarded by w.lock */
        int64_t wait_ms;   /* the thread's wait per round, -1: none */
        int64_t waited_ms; /* how long its first wait took */
        int rc;            /* what its first wait returned */
        bool waiting;      /* the thread is in its first wait */
        bool waited;
        bool ended; /* the thread returned (set just before) */
} rig_t;

/* Serves each request, waiting wait_ms (or for ever) between them. */
static void *serve(void *arg) {
        rig_t *r = arg;
        pthread_mutex_lock(&r->w.lock);
        while (!gp_worker_quitting(&r->w)) {
                if (r->served < r->asked) {
                        r->served++;
                        gp_worker_wake(&r->w);
                        continue;
                }
                int64_t t0 = gp_mono_ms();
                r->waiting = !r->waited;
                int rc = gp_worker_wait(&r->w, r->wait_ms);
                if (!r->waited) {
                        r->waiting = false;
                        r->waited = true;
                        r->waited_ms = gp_mono_ms() - t0;
                        r->rc = rc;
                        gp_worker_wake(&r->w);
                }
        }
        r->ended = true;
        pthread_mutex_unlock(&r->w.lock);
        return NULL;
}

static void rig_up(rig_t *r, int64_t wait_ms) {
        *r = (rig_t){.wait_ms = wait_ms};
        cr_assert_eq(gp_worker_init(&r->w), 0);
        cr_assert_eq(gp_worker_start(&r->w, serve, r), 0);
}

/* Waits (up to 10 s) until the thread's first wait has ended. */
static void first_wait_done(rig_t *r) {
        int64_t end = gp_mono_ms() + 10000;
        pthread_mutex_lock(&r->w.lock);
        while (!r->waited && gp_worker_wait_until(&r->w, end) == 0)
                ;
        bool waited = r->waited;
        pthread_mutex_unlock(&r->w.lock);
        cr_assert(waited, "the thread's wait did not end within 10 s");
}

Test(worker, stop_without_start) {
        gp_worker_t w;
        cr_assert_eq(gp_worker_init(&w), 0);
        cr_assert_not(gp_worker_quitting(&w));
        gp_worker_stop(&w);
        cr_assert(gp_worker_quitting(&w));
        gp_worker_stop(&w); /* twice: nothing more */
        gp_worker_fini(&w); /* stops again, then destroys */
}

Test(worker, wake_reaches_the_thread) {
        rig_t r;
        rig_up(&r, -1);
        for (int i = 1; i <= 3; i++) {
                int64_t end = gp_mono_ms() + 10000;
                pthread_mutex_lock(&r.w.lock);
                r.asked++;
                gp_worker_wake(&r.w);
                while (r.served < r.asked && gp_worker_wait_until(&r.w, end) == 0)
                        ;
                int served = r.served;
                pthread_mutex_unlock(&r.w.lock);
                cr_assert_eq(served, i, "request %d not served within 10 s", i);
        }
        gp_worker_fini(&r.w);
        cr_assert(r.ended);
}

Test(worker, timed_wait_ends_on_time) {
        rig_t r;
        rig_up(&r, 200);
        first_wait_done(&r);
        /* gp_mono_ms truncates to the millisecond: 199 is 200 measured. */
        cr_assert_eq(r.rc, ETIMEDOUT);
        cr_assert_geq(r.waited_ms, 199, "a 200 ms wait ended after %lld ms",
                      (long long)r.waited_ms);
        cr_assert_lt(r.waited_ms, 5000, "a 200 ms wait ended after %lld ms",
                     (long long)r.waited_ms);
        gp_worker_fini(&r.w);
        cr_assert(r.ended);
}

Test(worker, timed_wait_ends_on_wake) {
        rig_t r;
        rig_up(&r, 60000);
        /* Once the thread waits (it holds the lock from setting waiting
         * until the wait lets it go), wake it. */
        bool woke = false;
        for (int i = 0; i < 1000 && !woke; i++) {
                pthread_mutex_lock(&r.w.lock);
                if ((woke = r.waiting))
                        gp_worker_wake(&r.w);
                pthread_mutex_unlock(&r.w.lock);
                if (!woke)
                        gp_sleep_ms(10);
        }
        cr_assert(woke, "the thread did not wait within 10 s");
        first_wait_done(&r);
        cr_assert_eq(r.rc, 0);
        cr_assert_lt(r.waited_ms, 10000, "a woken 60 s wait took %lld ms",
                     (long long)r.waited_ms);
        gp_worker_fini(&r.w);
}

Test(worker, stop_ends_an_endless_wait_and_joins) {
        rig_t r;
        rig_up(&r, -1);
        gp_sleep_ms(50);
        int64_t t0 = gp_mono_ms();
        gp_worker_stop(&r.w);
        /* Joined: the thread has returned, no lock needed to read it. */
        cr_assert(r.ended);
        cr_assert_lt(gp_mono_ms() - t0, 10000);
        gp_worker_stop(&r.w);
        cr_assert_eq(gp_worker_start(&r.w, serve, &r), 0, "a stopped worker starts again");
        gp_worker_fini(&r.w); /* quit is still set: the new thread ends at once */
}

Test(worker, start_twice_is_refused) {
        rig_t r;
        rig_up(&r, -1);
        cr_assert_eq(gp_worker_start(&r.w, serve, &r), EBUSY);
        gp_worker_fini(&r.w);
        cr_assert(r.ended);
}

Test(worker, wait_until_a_past_instant_is_a_timeout) {
        gp_worker_t w;
        cr_assert_eq(gp_worker_init(&w), 0);
        pthread_mutex_lock(&w.lock);
        int64_t t0 = gp_mono_ms();
        cr_assert_eq(gp_worker_wait_until(&w, t0 - 1000), ETIMEDOUT);
        cr_assert_eq(gp_worker_wait(&w, 0), ETIMEDOUT);
        int rc;
        while ((rc = gp_worker_wait_until(&w, t0 + 100)) == 0)
                ; /* nobody wakes it: only a spurious wake-up returns 0 */
        cr_assert_eq(rc, ETIMEDOUT);
        int64_t took = gp_mono_ms() - t0;
        pthread_mutex_unlock(&w.lock);
        cr_assert_geq(took, 99, "a wait until 100 ms from now took %lld ms", (long long)took);
        cr_assert_lt(took, 5000, "a wait until 100 ms from now took %lld ms", (long long)took);
        gp_worker_fini(&w);
}
