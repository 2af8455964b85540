/* gate/types.c: names of the shared value types. Pure: libc only. */
#include <string.h>

#include "gate/types.h"

const char *gp_colour_name(gp_colour_t c) {
        return c == GP_BLUE ? "blue" : "green";
}

const char *gp_colour_upper(gp_colour_t c) {
        return c == GP_BLUE ? "BLUE" : "GREEN";
}

int gp_colour_parse(const char *s, gp_colour_t *out) {
        if (!strcmp(s, "BLUE") || !strcmp(s, "blue")) {
                *out = GP_BLUE;
                return 0;
        }
        if (!strcmp(s, "GREEN") || !strcmp(s, "green")) {
                *out = GP_GREEN;
                return 0;
        }
        return -1;
}
