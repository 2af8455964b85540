/* proxy/log.c: the process log and the clocks. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate/timeparse.h"
#include "proxy/log.h"

gp_log_level_t gp_log_level = GP_LOG_INFO;
static int json;           /* log.format=json */
static char pipeline[128]; /* for JSON lines */

void gp_log_set_format(bool as_json, const char *pipe) {
        json = as_json;
        snprintf(pipeline, sizeof(pipeline), "%s", pipe ? pipe : "");
}

/* s as the inside of a JSON string. */
static void escape(const char *s, char *out, size_t len) {
        size_t o = 0;
        for (; *s && o + 7 < len; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\') {
                        out[o++] = '\\';
                        out[o++] = (char)c;
                } else if (c < 0x20)
                        o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
                else
                        out[o++] = (char)c;
        }
        out[o] = '\0';
}

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
        if (json) {
                char msg[sizeof(line) * 6 + 1], pipe[sizeof(pipeline) * 6 + 1];
                escape(line, msg, sizeof(msg));
                escape(pipeline, pipe, sizeof(pipe));
                fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"%s\",\"pipeline\":\"%s\","
                        "\"msg\":\"%s\"}\n", when, names[lvl], pipe, msg);
        } else
                fprintf(stderr, "%s %-5s %s\n", when, names[lvl], line);
}
