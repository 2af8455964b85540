/* gate/jsonpath.h: finds one value in a JSON document by a path such as
 * "a.b[0].c", without allocating and without building a tree.
 * Pure: libc only. The scanner validates the document up to the value it
 * finds (and the value itself); it does not read past it. */
#ifndef GP_GATE_JSONPATH_H
#define GP_GATE_JSONPATH_H

#include <stddef.h>
#include <stdint.h>

#define GP_JPATH_MAX_SEGS 16
#define GP_JPATH_MAX_KEY  64
#define GP_JSON_MAX_DEPTH 64

typedef struct gp_jpath {
        int nsegs;
        struct {
                int is_index; /* 1: [n], 0: .key */
                uint32_t index;
                uint8_t keylen;
                char key[GP_JPATH_MAX_KEY];
        } seg[GP_JPATH_MAX_SEGS];
} gp_jpath_t;

typedef enum {
        GP_JSON_STRING = 1,
        GP_JSON_NUMBER,
        GP_JSON_OTHER, /* true, false, null, object, array */
} gp_json_type_t;

typedef struct gp_jval {
        gp_json_type_t type;
        const char *ptr; /* STRING: the raw contents between the quotes
                          * (escapes not decoded); NUMBER: the token */
        size_t len;
        int has_escapes; /* STRING: contains a backslash */
} gp_jval_t;

/* Result codes of gp_jpath_find; also the DLQ reason codes for JSON. */
typedef enum {
        GP_JSON_OK = 0,
        GP_JSON_ERR_SYNTAX = -1,  /* not JSON (up to the value) */
        GP_JSON_ERR_MISSING = -2, /* the path does not exist */
        GP_JSON_ERR_DEPTH = -3,   /* nesting deeper than GP_JSON_MAX_DEPTH */
} gp_json_rc_t;

/* Compiles "a.b[0].c" (keys: any bytes but '.', '[' and ']'; a leading
 * "$." is allowed). 0 on success; -1 with a reason in err. */
int gp_jpath_compile(gp_jpath_t *p, const char *spec, char *err, size_t errlen);

/* Finds the value at path p in doc[0..len). Keys are compared byte for
 * byte with the raw (undecoded) JSON key. */
gp_json_rc_t gp_jpath_find(const gp_jpath_t *p, const char *doc, size_t len, gp_jval_t *out);

#endif
