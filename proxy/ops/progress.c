/* proxy/ops/progress.c: the progress lines of a verb that waits, on stdout.
 * May use proxy/base/. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proxy/base/log.h"
#include "proxy/ops/progress.h"

/* A progress line is open on the terminal (no newline yet): one stdout,
 * one flag. */
static bool line_open;

void gp_progress_init(gp_progress_t *p) {
        *p = (gp_progress_t){.t0 = gp_mono_ms(), .tty = isatty(1)};
}

void gp_progress_vprint(gp_progress_t *p, bool keep, const char *fmt, va_list ap) {
        char line[512];
        vsnprintf(line, sizeof(line), fmt, ap);
        int64_t now = gp_mono_ms();
        if (!strcmp(line, p->last) || (!keep && !p->tty && now - p->shown < 1000))
                return;
        snprintf(p->last, sizeof(p->last), "%s", line);
        p->shown = now;
        printf("%s[%6.1fs] %s%s", p->tty ? "\r\033[K" : "", (double)(now - p->t0) / 1000.0,
               line, p->tty && !keep ? "" : "\n");
        line_open = p->tty && !keep;
        fflush(stdout);
}

void gp_progress_show(gp_progress_t *p, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_progress_vprint(p, false, fmt, ap);
        va_end(ap);
}

void gp_progress_note(gp_progress_t *p, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_progress_vprint(p, true, fmt, ap);
        va_end(ap);
}

void gp_progress_break(void) {
        if (!line_open)
                return;
        putchar('\n');
        fflush(stdout);
        line_open = false;
}
