/* proxy/base/fault.c: the test build's fault points (see proxy/base/fault.h). */
#ifdef GP_TEST_HOOKS
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/clock.h"
#include "proxy/base/fault.h"

static atomic_int holding;

bool gp_fault_holding(void) {
        return atomic_load(&holding) > 0;
}

int64_t gp_test_ms(const char *env, int64_t otherwise) {
        const char *t = getenv(env);
        long long ms = t ? strtoll(t, NULL, 10) : 0;
        return ms > 0 ? ms : otherwise;
}

/* Holds while <prefix>.<name> exists; see proxy/base/fault.h. */
static void hold(const char *prefix, const char *name) {
        char arm[4096], held[4200];
        if (snprintf(arm, sizeof(arm), "%s.%s", prefix, name) >= (int)sizeof(arm) ||
            access(arm, F_OK))
                return;
        atomic_fetch_add(&holding, 1);
        snprintf(held, sizeof(held), "%s.held", arm);
        int fd = open(held, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
                close(fd);
        for (int i = 0; i < 6000 && !access(arm, F_OK); i++)
                gp_sleep_ms(10);
        unlink(held);
        atomic_fetch_sub(&holding, 1);
}

/* The n of <name>[:<n>] when spec names name (default 1), else -1. */
static long wanted(const char *spec, const char *name) {
        size_t n = strlen(name);
        if (!spec || strncmp(spec, name, n) || (spec[n] && spec[n] != ':'))
                return -1;
        return spec[n] == ':' ? strtol(spec + n + 1, NULL, 10) : 1;
}

void gp_fault_point(const char *name) {
        static long seen;
        const char *prefix = getenv("GP_FAULT_HOLD");
        if (prefix && *prefix)
                hold(prefix, name);
        long want = wanted(getenv("GP_FAULT"), name);
        if (want >= 0 && ++seen >= want)
                kill(getpid(), SIGKILL);
        static long stalls;
        want = wanted(getenv("GP_FAULT_STALL"), name);
        if (want >= 0 && ++stalls == want)
                for (;;)
                        gp_sleep_ms(1000);
}

bool gp_fault_fails(const char *name) {
        static long seen;
        const char *spec = getenv("GP_FAULT_FAIL");
        long want = wanted(spec, name);
        if (want < 0)
                return false;
        /* <name>:<n>x<k>: k times in a row from the n-th on. */
        const char *x = strchr(spec + strlen(name), 'x');
        long times = x ? strtol(x + 1, NULL, 10) : 1;
        ++seen;
        return seen >= want && seen < want + times;
}
#else
typedef int gp_fault_unused_t; /* ISO C wants a declaration in every file */
#endif
