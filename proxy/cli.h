/* proxy/cli.h: the commands that play the operator's part on the control
 * map (init, cutover, finish, abort, status), usable without Kubernetes.
 * Each returns a process exit code and prints what it did. */
#ifndef GP_PROXY_CLI_H
#define GP_PROXY_CLI_H

#include <stdint.h>

#include "gate/types.h"

typedef struct gp_cutover_opts {
        gp_colour_t to;
        int64_t delay_ms;    /* deployment-deletion-delay-ms */
        int64_t at;          /* explicit T, GP_TS_NONE for none */
        int64_t align_ms;    /* 0 for the proxy's gate.cutoff.align.ms */
        int force;           /* start even if a transition is in progress */
} gp_cutover_opts_t;

int gp_cli_init(const char *path, gp_colour_t active, int force);
int gp_cli_cutover(const char *path, const gp_cutover_opts_t *o);
/* Waits until the proxy writes CLEAR_TO_TEARDOWN; prints progress. */
int gp_cli_wait_clear(const char *path, int64_t timeout_ms, int quiet);
int gp_cli_finish(const char *path, int force);
int gp_cli_abort(const char *path, int has_to, gp_colour_t to);
int gp_cli_status(const char *path, int json);

int gp_cli_main(int argc, char **argv);

#endif
