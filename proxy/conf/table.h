/* proxy/conf/table.h: what the files of proxy/conf/ share, and nothing
 * outside it includes: the key table's row (proxy/conf/keys.c), the value
 * helpers the checks share, and the refused librdkafka keys
 * (proxy/conf/kafka_keys.c). */
#ifndef GP_PROXY_CONF_TABLE_H
#define GP_PROXY_CONF_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/conf/conf.h"

#define TOPIC_MAX 249 /* Kafka's limit on a topic name */
#define ID_MAX    249 /* transactional.id / group.id after expansion */

/* A check of a string value: GP_OK, or err filled with the reason alone
 * (no origin, no key). */
typedef gp_errcode_t (*check_fn)(const char *v, gp_err_t *err);

typedef enum {
        PT_STR,  /* char *, validated by .check */
        PT_BOOL, /* bool: true | false */
        PT_INT,  /* int64_t or int (by field size), min..max */
        PT_MS,   /* as PT_INT, a duration in milliseconds */
        PT_ENUM, /* one of .words: stored by .set_enum, or as the word */
} prop_type_t;

typedef struct prop {
        const char *section; /* starts a section in the documents */
        const char *name;
        prop_type_t type;
        const char *def;          /* as written in a file; NULL: required, unless optional */
        const char *example;      /* required and optional keys: value in the example file */
        bool optional;            /* no default and not required (gp_conf_finalize may
                              * still ask for one of several) */
        const char *unset;        /* optional keys: what leaving it unset means */
        bool example_set;         /* optional keys: set in the example file */
        int64_t min, max;         /* PT_INT, PT_MS */
        bool minus1;              /* PT_INT: -1 ("broker default") also allowed */
        const char *const *words; /* PT_ENUM, NULL-terminated */
        void (*set_enum)(gp_conf_t *, int); /* PT_ENUM: index of the word */
        check_fn check;                     /* PT_STR */
        const char *allowed;                /* PT_STR: for the documents */
        size_t off, size;                   /* the field, unless set_enum */
        const char *desc;
} prop_t;

/* The key table, in document order, and its length. */
extern const prop_t gp_conf_props[];
extern const size_t gp_conf_n_props;
/* The row of a key, NULL for none. */
const prop_t *gp_conf_find_prop(const char *name);

static inline bool gp_conf_is_space(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
/* Copies user text for an error message: at most 60 bytes, bytes outside
 * printable ASCII as \xNN, so a binary file cannot garble a terminal. */
const char *gp_conf_shown(const char *s, size_t len, char *buf, size_t buflen);
/* Checks a topic name span: 1..249 of [A-Za-z0-9._-], not "." or "..". */
bool gp_conf_topic_name_ok(const char *s, size_t n);
/* Splits a topic list. With out != NULL, stores copies there (the caller
 * frees them, also on error). *n is the count. GP_ERR_INVALID or
 * GP_ERR_NOMEM with the reason in err. */
gp_errcode_t gp_conf_split_topics(const char *raw, char **out, int *n, gp_err_t *err);

/* Why kafka.<kname> (without a producer. or consumer. prefix) is refused;
 * NULL when gate-proxy leaves it to the configuration. */
const char *gp_conf_reserved(const char *kname);
#endif
