/* gate/error.h: the one error type of proxy/, k8s/ and os/ (docs/DESIGN.md,
 * Errors). An error is a code and a sentence for a person. The caller
 * owns it (usually on its stack); a function that fails fills it and
 * returns its code, or NULL for a constructor. Callers decide on the
 * code, never on the text: whether to read again (CONFLICT), wait for a
 * peer (TRANSPORT) or give up is the code's meaning, at the layer that
 * decides.
 * Pure: libc only. */
#ifndef GP_GATE_ERROR_H
#define GP_GATE_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum gp_errcode {
        GP_OK = 0,
        GP_ERR_FAIL,      /* none of the below: see the message */
        GP_ERR_INVALID,   /* input that cannot be used: configuration, a map, a document */
        GP_ERR_CONFLICT,  /* a precondition moved (resourceVersion), or it already exists */
        GP_ERR_NOT_FOUND, /* the object is not there */
        GP_ERR_DROPPED,   /* not written: the map moved on to another transition */
        GP_ERR_DENIED,    /* authentication or authorisation refused (401, 403) */
        GP_ERR_TRANSPORT, /* the peer could not be reached or answered 5xx/429: retriable */
        GP_ERR_IO,        /* a local file or the operating system */
        GP_ERR_NOMEM,     /* out of memory */
        GP_ERR_KAFKA,     /* a Kafka error (librdkafka's text in the message) */
        GP_ERR__COUNT
} gp_errcode_t;

#define GP_ERR_MSG_MAX 1024

typedef struct gp_err {
        gp_errcode_t code;
        char msg[GP_ERR_MSG_MAX];
} gp_err_t;

/* Fills e (may be NULL: the error is only returned) with code and the
 * formatted message; returns code. */
__attribute__((format(printf, 3, 4))) gp_errcode_t gp_err_set(gp_err_t *e, gp_errcode_t code,
                                                              const char *fmt, ...);
gp_errcode_t gp_err_vset(gp_err_t *e, gp_errcode_t code, const char *fmt, va_list ap);
/* Puts "<formatted>: " before e's message, keeping its code. */
__attribute__((format(printf, 2, 3))) gp_errcode_t gp_err_prefix(gp_err_t *e, const char *fmt,
                                                                 ...);
void gp_err_clear(gp_err_t *e);
/* e's code (GP_ERR_FAIL when e is NULL: an error nobody asked to see). */
static inline gp_errcode_t gp_err_code(const gp_err_t *e) {
        return e ? e->code : GP_ERR_FAIL;
}
/* e's message, "" when e is NULL. */
static inline const char *gp_err_msg(const gp_err_t *e) {
        return e ? e->msg : "";
}
/* "conflict", "not found", ...: for logs and metrics labels. */
const char *gp_errcode_name(gp_errcode_t code);

#endif
