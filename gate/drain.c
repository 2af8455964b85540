/* gate/drain.c: the drain check's verdict (gate/drain.h). */
#include "gate/drain.h"

static int64_t have(const gp_drain_part_t *p) {
        return p->committed >= 0 ? p->committed : 0;
}

/* What the group must have reached: what this process wrote, else the
 * partition's end, 0 when the group is already at or past the end. */
static int64_t target(const gp_drain_part_t *p) {
        if (p->written >= 0)
                return p->written;
        return have(p) >= p->hi ? 0 : p->hi;
}

int64_t gp_drain_from(const gp_drain_part_t *p) {
        if (p->written >= 0 || target(p) == 0)
                return -1;
        /* Between the committed offset and the end there may be only
         * aborted records and transaction markers: a read says. */
        return have(p) > p->lo ? have(p) : p->lo;
}

gp_drain_state_t gp_drain_state(const gp_drain_part_t *p, int64_t *lag) {
        int64_t t = target(p), h = have(p);
        *lag = 0;
        if (gp_drain_from(p) >= 0) {
                if (p->found < 0)
                        return GP_DRAIN_UNKNOWN;
                if (p->found == 0)
                        return GP_DRAIN_DONE;
        }
        if (t == 0 || h >= t)
                return GP_DRAIN_DONE;
        *lag = t - h;
        return GP_DRAIN_LAG;
}
