/* k8s/flinkdep.h: the resources of the released Flink Kubernetes Operator
 * that `gate-proxy handover` drives: one call each on a FlinkDeployment
 * (GET, merge patch of spec.job with the resourceVersion as precondition,
 * POST, DELETE), the lookup of its UPGRADE FlinkStateSnapshot, and the
 * readers of their documents (fields at a path, spec.flinkConfiguration).
 * Every call is one request through k8s/client.h and returns GP_OK or its
 * error, "GET flinkdeployment NS/NAME: ..." in err, with the codes of
 * k8s/client.h; retrying, waiting and saying so are the caller's. Nothing
 * logs here. May use gate/ and k8s/; cJSON. */
#ifndef GP_K8S_FLINKDEP_H
#define GP_K8S_FLINKDEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/error.h"
#include "k8s/client.h"

struct cJSON;

/* status.jobStatus.upgradeSavepointPath of a suspend from HA metadata (no
 * savepoint). */
#define GP_FLINKDEP_LAST_STATE "KUBERNETES_OPERATOR_LAST_STATE"
/* When not "false", a suspend of a job that is not running falls back to
 * last-state (above), silently. */
#define GP_FLINKDEP_FALLBACK_KEY "kubernetes.operator.job.upgrade.last-state-fallback.enabled"

/* ---- the documents -------------------------------------------------------- */

/* The string at a path of object keys (NULL-terminated), or "". */
__attribute__((sentinel)) const char *gp_flinkdep_str(const struct cJSON *j, ...);
/* The number at a path of object keys (NULL-terminated), or -1. */
__attribute__((sentinel)) int64_t gp_flinkdep_num(const struct cJSON *j, ...);
/* A key of fd's spec.flinkConfiguration into buf ("" when unset); buf.
 * Read as the operator reads it (1.13+): nested objects are flattened, so
 * {"kubernetes": {"operator.job.x": true}} is kubernetes.operator.job.x;
 * strings, numbers and booleans are all taken as text. */
const char *gp_flinkdep_conf(const struct cJSON *fd, const char *key, char *buf, size_t len);
/* The same for a key that has an old name: key when set, else old_key (as
 * Flink reads a deprecated key; e.g. execution.checkpointing.savepoint-dir,
 * whose name before Flink 1.20 was state.savepoints.dir). */
const char *gp_flinkdep_conf2(const struct cJSON *fd, const char *key, const char *old_key,
                              char *buf, size_t len);
/* The savepoint and checkpoint directories, each by both its names. */
#define GP_FLINKDEP_SAVEPOINT_DIR      "execution.checkpointing.savepoint-dir"
#define GP_FLINKDEP_SAVEPOINT_DIR_OLD  "state.savepoints.dir"
#define GP_FLINKDEP_CHECKPOINT_DIR     "execution.checkpointing.dir"
#define GP_FLINKDEP_CHECKPOINT_DIR_OLD "state.checkpoints.dir"
/* When "true", the suspend's stop-with-savepoint drains the job first
 * (MAX_WATERMARK: every window and timer fires) before its last savepoint. */
#define GP_FLINKDEP_DRAIN_KEY "kubernetes.operator.job.drain-on-savepoint-deletion"
/* Periodic savepoints (the operator's; unset or 0: none). */
#define GP_FLINKDEP_PERIODIC_KEY "kubernetes.operator.periodic.savepoint.interval"
/* Does the legacy record of the operator's last savepoint
 * (status.jobStatus.savepointInfo.lastSavepoint, written from 1.12 when no
 * FlinkStateSnapshot is made) name path? */
bool gp_flinkdep_legacy_savepoint(const struct cJSON *fd, const char *path);

/* ---- the calls ------------------------------------------------------------- */

/* GET the FlinkDeployment ns/name into *out (caller cJSON_Deletes it). */
gp_errcode_t gp_flinkdep_get(gp_k8s_t *k, const char *ns, const char *name, struct cJSON **out,
                             gp_err_t *err);
/* Merge-patches spec.job of ns/name with job (taken) if the resource is
 * still at resourceVersion rv; *gen gets the new metadata.generation (-1
 * if the answer has none). GP_ERR_CONFLICT when rv moved. */
gp_errcode_t gp_flinkdep_patch_job(gp_k8s_t *k, const char *ns, const char *name,
                                   const char *rv, struct cJSON *job, int64_t *gen,
                                   gp_err_t *err);
/* POSTs the FlinkDeployment manifest m (as the API takes it; named by its
 * metadata.name) into ns. GP_ERR_CONFLICT when it exists. */
gp_errcode_t gp_flinkdep_create(gp_k8s_t *k, const char *ns, const struct cJSON *m,
                                gp_err_t *err);
/* DELETEs ns/name. GP_ERR_NOT_FOUND when it is gone already. */
gp_errcode_t gp_flinkdep_delete(gp_k8s_t *k, const char *ns, const char *name, gp_err_t *err);
/* POSTs a FlinkStateSnapshot named snap of checkpoint type (spec.checkpoint
 * {}, spec.jobReference {kind: FlinkDeployment, name: fd}, backoffLimit 0):
 * the operator triggers one checkpoint of fd's running job. GP_ERR_DENIED
 * without create on flinkstatesnapshots, GP_ERR_NOT_FOUND without the
 * CRD, GP_ERR_CONFLICT when snap exists. */
gp_errcode_t gp_flinkdep_checkpoint(gp_k8s_t *k, const char *ns, const char *fd,
                                    const char *snap, gp_err_t *err);

/* What the UPGRADE FlinkStateSnapshots of a FlinkDeployment say of one
 * savepoint path. */
typedef enum {
        GP_FLINKDEP_SNAP_NONE = -1, /* no such resource type (the CRD is not installed,
                                     * or the deployment turns it off): the operator
                                     * uses its legacy path */
        GP_FLINKDEP_SNAP_ABSENT,    /* the type exists, but no snapshot of the path */
        GP_FLINKDEP_SNAP_PENDING,   /* one for the path, none COMPLETED (yet) */
        GP_FLINKDEP_SNAP_COMPLETED, /* one is COMPLETED */
} gp_flinkdep_snap_t;

/* Lists the UPGRADE FlinkStateSnapshots of fd (the FlinkDeployment ns/name
 * as read) and looks for the one of path. GP_OK with *state, and for
 * GP_FLINKDEP_SNAP_PENDING what was seen in seen ("FlinkStateSnapshot N
 * is IN_PROGRESS"); else the error. */
gp_errcode_t gp_flinkdep_upgrade_snapshot(gp_k8s_t *k, const char *ns, const char *name,
                                          const struct cJSON *fd, const char *path,
                                          gp_flinkdep_snap_t *state, char *seen, size_t len,
                                          gp_err_t *err);

#endif
