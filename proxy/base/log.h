/* proxy/base/log.h: the process log. One line per event on stderr:
 *   2026-12-02T14:00:00.123Z info  cutoff chosen: T=... (W=..., D=...)
 * The macros test the level before formatting, so a disabled line costs a
 * comparison. Never log per record at info or above. */
#ifndef GP_PROXY_BASE_LOG_H
#define GP_PROXY_BASE_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "os/clock.h" /* gp_now_ms, gp_mono_ms: every user of the log has them */

typedef enum { GP_LOG_ERROR = 0, GP_LOG_WARN, GP_LOG_INFO, GP_LOG_DEBUG } gp_log_level_t;

extern gp_log_level_t gp_log_level;

/* Sets the level from its name; -1 on an unknown name. */
int gp_log_set_level(const char *name);
/* log.format: JSON lines instead of text: "ts", "level", "pipeline",
 * "msg"; "phase" and "colour" (the committed phase and active colour)
 * once the loop has set them; "topic" and "partition" on lines about one
 * (gp_log_at). */
void gp_log_set_format(bool as_json, const char *pipeline);
/* The loop's committed phase and active colour, for JSON lines (static
 * strings; NULL: not known yet). Any thread. */
void gp_log_set_state(const char *phase, const char *colour);
void gp_log_write(gp_log_level_t lvl, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* A line about topic (NULL: none) and partition (< 0: the whole topic). */
void gp_log_write_at(gp_log_level_t lvl, const char *topic, int partition, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

#define gp_log(lvl, ...)                                                                      \
        do {                                                                                  \
                if ((lvl) <= gp_log_level)                                                    \
                        gp_log_write((lvl), __VA_ARGS__);                                     \
        } while (0)
#define gp_log_at(lvl, topic, partition, ...)                                                 \
        do {                                                                                  \
                if ((lvl) <= gp_log_level)                                                    \
                        gp_log_write_at((lvl), (topic), (partition), __VA_ARGS__);            \
        } while (0)
#define gp_error(...) gp_log(GP_LOG_ERROR, __VA_ARGS__)
#define gp_warn(...)  gp_log(GP_LOG_WARN, __VA_ARGS__)
#define gp_info(...)  gp_log(GP_LOG_INFO, __VA_ARGS__)
#define gp_debug(...) gp_log(GP_LOG_DEBUG, __VA_ARGS__)

#endif
