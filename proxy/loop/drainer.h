/* proxy/loop/drainer.h: the drain check (docs/DESIGN.md, Choosing T and
 * closing) on a thread of its own, so the loop never waits for it.
 *
 * For each colour with a drain group (gate.drain.group.*), a consumer
 * that reads the group's committed offsets and, read_committed, the
 * colour topics after them; it never subscribes, so it never joins the
 * group, and never commits.
 *
 * The loop asks between transactions with what it has committed to the
 * old colour (gp_drainer_ask) and reads the verdict of an earlier ask. A
 * verdict holds only for the targets it was computed on: a record
 * committed to the old side since then moves a target and the check runs
 * again. A group's committed offset only grows, so a "drained" verdict on
 * unchanged targets stays true. Checks run at most four times a second
 * (a commit is seen within 250 ms of the job making it). */
#ifndef GP_PROXY_LOOP_DRAINER_H
#define GP_PROXY_LOOP_DRAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/types.h"
#include "proxy/conf/conf.h"

typedef struct gp_drainer gp_drainer_t;

/* One partition of an old colour topic: its name (must outlive the
 * gp_drainer_t), its number, and one past the last record this process
 * committed there (-1: none since it started). */
typedef struct gp_drain_target {
        const char *topic;
        int32_t partition;
        int64_t written;
} gp_drain_target_t;

/* The consumers and the thread; NULL (no error) when no drain group is
 * configured; NULL with err when a consumer cannot be made. */
gp_drainer_t *gp_drainer_new(const gp_conf_t *conf, gp_err_t *err);
void gp_drainer_destroy(gp_drainer_t *d);
/* Does colour c have a drain group? */
bool gp_drainer_has(const gp_drainer_t *d, gp_colour_t c);
/* True when a finished check found the group of colour old drained on
 * exactly these targets; otherwise starts a check on them (unless one
 * runs or the last began less than a second ago) and returns false.
 * Never waits on the network. */
bool gp_drainer_ask(gp_drainer_t *d, gp_colour_t old, const gp_drain_target_t *t, size_t n);

/* Offsets the drain group of colour c had still to consume at the last
 * finished check (0: drained), -1 when unknown (no group, no check yet,
 * or the last check failed). Any thread; d may be NULL. */
int64_t gp_drainer_lag(gp_drainer_t *d, gp_colour_t c);
/* What the last finished check of colour c's drain group found, as the
 * proxy logged it ("waiting for group G to consume S.blue: 2 of 3
 * partitions drained, lag 40"); "" before any. Any thread; d may be NULL. */
void gp_drainer_said(gp_drainer_t *d, gp_colour_t c, char *buf, size_t len);

#endif
