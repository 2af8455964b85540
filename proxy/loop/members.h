/* proxy/loop/members.h: who is in the pipeline's consumer group, beside
 * the loop (docs/DESIGN.md, Scale-out: who is in the group, and refusals).
 *
 * gate.membership=group only. A thread with a consumer handle of its own
 * (the pipeline's group id, never subscribed, so never a member) looks at
 * the group every 2 s (DescribeGroups: rd_kafka_list_groups for the one
 * group) and reads each member's subscription and assignment
 * (gate/members.h). It keeps the members as last seen, for /metrics and
 * the status, and decides two refusals, which the loop collects between
 * batches and never waits for:
 *   - a member (other than this instance) subscribed to other topics than
 *     this pipeline's source topics: another pipeline, or another
 *     application, shares the group;
 *   - another live member writes its partitions' checkpoints under other
 *     settings (the lines' fingerprints, gate/fingerprint.h: gp_fp_judge,
 *     over every source partition's committed line and the owner the
 *     group gave it).
 * Each is GP_EXIT_GROUP with a sentence that names the group, the member
 * and what to do. Before the loop joins, one look tells whether to join
 * at all (gp_members_settled). */
#ifndef GP_PROXY_LOOP_MEMBERS_H
#define GP_PROXY_LOOP_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy/conf/conf.h"
#include "proxy/loop/proxy.h"

typedef struct gp_members gp_members_t;

/* Longest refusal sentence. */
#define GP_MEMBERS_WHY 1024

/* The thread, looking at conf's group for conf's source topics, with fp
 * this instance's settings fingerprint. NULL with err when it cannot
 * start. */
gp_members_t *gp_members_new(const gp_conf_t *conf, uint32_t fp, gp_err_t *err);
void gp_members_destroy(gp_members_t *m);

/* The loop has subscribed: until its member id is known (gp_members_self)
 * the settings are not judged (its own partitions would look like
 * another's). */
void gp_members_joining(gp_members_t *m);
/* This instance's member id (after each rebalance; "" or NULL: none). */
void gp_members_self(gp_members_t *m, const char *member_id);

/* Waits up to wait_ms for a look that settled something: the group empty,
 * or every member judged with nothing left to confirm, or a refusal. True
 * when one has. */
bool gp_members_settled(gp_members_t *m, int64_t wait_ms);

/* 0 while nothing is refused; else GP_EXIT_GROUP with the sentence in
 * why. */
int gp_members_refusal(gp_members_t *m, char *why, size_t len);

/* The members as last seen: how many (-1 before the first look); up to
 * max of them (the first 64 at most) copied to out, *shown of them. */
int gp_members_view(gp_members_t *m, gp_member_info_t *out, size_t max, size_t *shown);

#endif
