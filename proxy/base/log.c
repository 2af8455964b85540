/* proxy/base/log.c: the process log and the clocks. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate/timeparse.h"
#include "proxy/base/log.h"

gp_log_level_t gp_log_level = GP_LOG_INFO;
static int json;           /* log.format=json */
static char pipeline[128]; /* for JSON lines */

static _Atomic(const char *) state_phase, state_colour;

void gp_log_set_state(const char *phase, const char *colour) {
        atomic_store(&state_phase, phase);
        atomic_store(&state_colour, colour);
}

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

static void write_line(gp_log_level_t lvl, const char *topic, int partition, const char *fmt,
                       va_list ap) {
        char line[1024], when[40];
        vsnprintf(line, sizeof(line), fmt, ap);
        gp_time_format(gp_now_ms(), when, sizeof(when));
        /* One fprintf per line keeps lines whole across threads. */
        if (!json) {
                fprintf(stderr, "%s %-5s %s\n", when, names[lvl], line);
                return;
        }
        char msg[sizeof(line) * 6 + 1], pipe[sizeof(pipeline) * 6 + 1], at[800] = "";
        escape(line, msg, sizeof(msg));
        escape(pipeline, pipe, sizeof(pipe));
        const char *ph = atomic_load(&state_phase), *co = atomic_load(&state_colour);
        size_t o = 0;
        if (ph && co)
                o += (size_t)snprintf(at, sizeof at, ",\"phase\":\"%s\",\"colour\":\"%s\"", ph,
                                      co);
        if (topic) {
                char t[256 * 6 + 1];
                escape(topic, t, sizeof t);
                o += (size_t)snprintf(at + o, sizeof at - o, ",\"topic\":\"%.400s\"", t);
                if (partition >= 0 && o < sizeof at)
                        snprintf(at + o, sizeof at - o, ",\"partition\":%d", partition);
        }
        fprintf(stderr,
                "{\"ts\":\"%s\",\"level\":\"%s\",\"pipeline\":\"%s\"%s,\"msg\":\"%s\"}\n",
                when, names[lvl], pipe, at, msg);
}

void gp_log_write(gp_log_level_t lvl, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        write_line(lvl, NULL, -1, fmt, ap);
        va_end(ap);
}

void gp_log_write_at(gp_log_level_t lvl, const char *topic, int partition, const char *fmt,
                     ...) {
        va_list ap;
        va_start(ap, fmt);
        write_line(lvl, topic, partition, fmt, ap);
        va_end(ap);
}
