/* proxy/ops/handover.h: `gate-proxy handover`, the exact hand-over of a
 * Flink pipeline from one FlinkDeployment to another, step by step, with
 * its progress in the map (docs/DESIGN.md, "The hand-over command");
 * proxy/cmd/handover.c parses its options. Each call returns a process
 * exit code (0, or 1 with the reason and what to do printed) and prints
 * what it did. */
#ifndef GP_PROXY_OPS_HANDOVER_H
#define GP_PROXY_OPS_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gp_handover_opts {
        const char *map;        /* --k8s: the ConfigMap the proxy is steered by */
        const char *ns;         /* its namespace and the FlinkDeployments' (NULL or "":
                                 * the kubeconfig's, else default) */
        const char *kubeconfig; /* NULL: in a pod its service account, else the default */
        const char *from, *to;  /* OLD and NEW, valid names (not for an abort) */
        const char *to_file;    /* NULL, or the manifest NEW is created from */
        int64_t timeout_ms;     /* how long each step waits */
        const char *savepoint;  /* --savepoint: the path NEW starts from once OLD is
                                 * suspended, when the operator recorded none this
                                 * command can prove (NULL: prove it) */
        bool no_checkpoint;     /* --no-checkpoint-request: do not ask the operator
                                 * for a checkpoint of OLD once the proxy closed */
} gp_handover_opts_t;

/* Hands over from o->from to o->to, or goes on with the recorded
 * hand-over of the same pair from its step. */
int gp_handover_run(const gp_handover_opts_t *o);
/* Gives the recorded hand-over up, only while no T is chosen. */
int gp_handover_abort(const gp_handover_opts_t *o);

#endif
