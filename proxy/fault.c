/* proxy/fault.c: the test build's fault points (see proxy/fault.h). */
#ifdef GP_TEST_HOOKS
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy/fault.h"

void gp_fault_point(const char *name) {
        static long seen;
        const char *spec = getenv("GP_FAULT");
        size_t n = strlen(name);
        if (!spec || strncmp(spec, name, n) || (spec[n] && spec[n] != ':'))
                return;
        long want = spec[n] == ':' ? strtol(spec + n + 1, NULL, 10) : 1;
        if (++seen >= want)
                kill(getpid(), SIGKILL);
}
#else
typedef int gp_fault_unused_t; /* ISO C wants a declaration in every file */
#endif
