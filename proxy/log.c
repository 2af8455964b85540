/* proxy/log.c: the process log and the clocks. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate/timeparse.h"
#include "proxy/log.h"

gp_log_level_t gp_log_level = GP_LOG_INFO;

static const char *const names[] = {"error", "warn", "info", "debug"};

int gp_log_set_level(const char *name) {
        for (int i = 0; i < 4; i++)
                if (!strcmp(name, names[i])) {
                        gp_log_level = (gp_log_level_t)i;
                        return 0;
                }
        return -1;
}

int64_t gp_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gp_mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gp_log_write(gp_log_level_t lvl, const char *fmt, ...) {
        char line[1024], when[40];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        gp_time_format(gp_now_ms(), when, sizeof(when));
        /* One fprintf per line keeps lines whole across threads. */
        fprintf(stderr, "%s %-5s %s\n", when, names[lvl], line);
}
