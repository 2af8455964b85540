/* proxy/ops/verbs.h: the verbs that play the operator's part on the
 * control map (init, cutover, finish, abort, status), on a file or on the
 * ConfigMap in Kubernetes; proxy/cmd/ parses their options.
 * Each returns a process exit code and prints what it did. */
#ifndef GP_PROXY_OPS_VERBS_H
#define GP_PROXY_OPS_VERBS_H

#include <stdint.h>

#include <stdio.h>

#include "gate/mstatus.h"
#include "gate/types.h"
#include "proxy/control/ctl.h"

typedef struct gp_cutover_opts {
        gp_colour_t to;
        int64_t delay_ms; /* deployment-deletion-delay-ms */
        int64_t at;       /* explicit T, GP_TS_NONE for none */
        int64_t align_ms; /* 0 for the proxy's gate.cutoff.align.ms */
        int force;        /* start even if a transition is in progress */
        int quiet;        /* not repeating the proxy's gate-proxy.warning */
} gp_cutover_opts_t;

/* The commands on a control map of any backend (proxy/control/ctl.h): each
 * reads the map, checks it, and writes its change; on a backend with
 * compare-and-set (Kubernetes) the change is written only if the map is
 * still the one read, else it is read and checked again (5 attempts). */
int gp_ops_ctl_init(gp_ctl_t *c, gp_colour_t active, int force);
int gp_ops_ctl_cutover(gp_ctl_t *c, const gp_cutover_opts_t *o);
int gp_ops_ctl_wait_clear(gp_ctl_t *c, int64_t timeout_ms, int quiet);
int gp_ops_ctl_finish(gp_ctl_t *c, int force);
int gp_ops_ctl_abort(gp_ctl_t *c, int has_to, gp_colour_t to);
int gp_ops_ctl_status(gp_ctl_t *c, int json);

/* The same on a control file, by path. */
int gp_ops_init(const char *path, gp_colour_t active, int force);
int gp_ops_cutover(const char *path, const gp_cutover_opts_t *o);
/* Waits until the proxy writes CLEAR_TO_TEARDOWN; prints progress. */
int gp_ops_wait_clear(const char *path, int64_t timeout_ms, int quiet);
int gp_ops_finish(const char *path, int force);
int gp_ops_abort(const char *path, int has_to, gp_colour_t to);
int gp_ops_status(const char *path, int json);

int gp_cli_main(int argc, char **argv);

/* Group mode: the pipeline over its members' own status keys
 * (gate/mstatus.h) in cm at wall time now, a member silent for
 * GP_MEMBER_STALE_MS counted as gone; with list, one line per member
 * printed there. Returns the number of member keys read (0: none: one
 * instance, or proxies older than these keys). */
#define GP_MEMBER_STALE_MS 15000
size_t gp_ops_members(const gp_cm_t *cm, int64_t now, gp_mstatus_view_t *v, FILE *list);

#endif
