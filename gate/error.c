/* gate/error.c: see gate/error.h. */
#include "gate/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const names[GP_ERR__COUNT] = {
        [GP_OK] = "ok",
        [GP_ERR_FAIL] = "error",
        [GP_ERR_INVALID] = "invalid",
        [GP_ERR_CONFLICT] = "conflict",
        [GP_ERR_NOT_FOUND] = "not found",
        [GP_ERR_DROPPED] = "dropped",
        [GP_ERR_DENIED] = "denied",
        [GP_ERR_TRANSPORT] = "transport",
        [GP_ERR_IO] = "i/o",
        [GP_ERR_NOMEM] = "out of memory",
        [GP_ERR_KAFKA] = "kafka",
};

gp_errcode_t gp_err_vset(gp_err_t *e, gp_errcode_t code, const char *fmt, va_list ap) {
        if (!e)
                return code;
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        return code;
}

gp_errcode_t gp_err_set(gp_err_t *e, gp_errcode_t code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_err_vset(e, code, fmt, ap);
        va_end(ap);
        return code;
}

gp_errcode_t gp_err_prefix(gp_err_t *e, const char *fmt, ...) {
        if (!e)
                return GP_ERR_FAIL;
        char head[GP_ERR_MSG_MAX], old[GP_ERR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(head, sizeof head, fmt, ap);
        va_end(ap);
        memcpy(old, e->msg, sizeof old);
        /* Truncated at the end when the two do not fit. */
        size_t h = strlen(head);
        memcpy(e->msg, head, h + 1);
        if (h + 2 < sizeof e->msg) {
                memcpy(e->msg + h, ": ", 3);
                size_t room = sizeof e->msg - h - 3, o = strlen(old);
                memcpy(e->msg + h + 2, old, o < room ? o : room);
                e->msg[h + 2 + (o < room ? o : room)] = '\0';
        }
        return e->code;
}

void gp_err_clear(gp_err_t *e) {
        if (e) {
                e->code = GP_OK;
                e->msg[0] = '\0';
        }
}

const char *gp_errcode_name(gp_errcode_t code) {
        return code < GP_ERR__COUNT && names[code] ? names[code] : "unknown";
}
