/* gate/types.h: the small value types every layer shares.
 * Pure: libc only. */
#ifndef GP_GATE_TYPES_H
#define GP_GATE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "No event time": an unreadable or absent timestamp, an unset cutoff. */
#define GP_TS_NONE INT64_MIN

typedef enum { GP_BLUE = 0, GP_GREEN = 1 } gp_colour_t;

/* Where one record goes. */
typedef enum { GP_DEST_BLUE = 0, GP_DEST_GREEN = 1, GP_DEST_DLQ = 2 } gp_dest_t;

static inline gp_colour_t gp_colour_other(gp_colour_t c) {
        return c == GP_BLUE ? GP_GREEN : GP_BLUE;
}

/* "blue" / "green" and "BLUE" / "GREEN" (the ConfigMap's spelling). */
const char *gp_colour_name(gp_colour_t c);
const char *gp_colour_upper(gp_colour_t c);
/* Accepts exactly "blue", "green", "BLUE" or "GREEN". 0 on success. */
int gp_colour_parse(const char *s, gp_colour_t *out);

/* One ConfigMap data entry, borrowed strings. */
typedef struct gp_kv {
        const char *key;
        const char *value;
} gp_kv_t;

#endif
