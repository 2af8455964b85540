/* proxy/ops/progress.h: the progress lines of a verb that waits (`gate-proxy
 * handover`) on stdout, each stamped with the seconds since the start: on
 * a terminal one line rewritten in place, else a line when it changed, at
 * most once a second. A line that stays (the end of a step) is always
 * printed. May use proxy/base/. */
#ifndef GP_PROXY_OPS_PROGRESS_H
#define GP_PROXY_OPS_PROGRESS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct gp_progress {
        int64_t t0;     /* gp_mono_ms() at the start */
        char last[512]; /* the last line */
        int64_t shown;  /* gp_mono_ms() when it was printed */
        bool tty;       /* stdout is a terminal */
} gp_progress_t;

/* Starts the clock now; looks whether stdout is a terminal. */
void gp_progress_init(gp_progress_t *p);
/* A progress line (keep false: the next one replaces it on a terminal,
 * and off one it may be skipped), or a line that stays (keep true). */
void gp_progress_vprint(gp_progress_t *p, bool keep, const char *fmt, va_list ap);
__attribute__((format(printf, 2, 3))) void gp_progress_show(gp_progress_t *p, const char *fmt,
                                                            ...);
__attribute__((format(printf, 2, 3))) void gp_progress_note(gp_progress_t *p, const char *fmt,
                                                            ...);
/* Ends a progress line left open on the terminal, before anything else is
 * printed (to stdout or stderr). */
void gp_progress_break(void);

#endif
