/* proxy/schema/registry.h: schemas by id from a Confluent-compatible schema
 * registry (GET URL/schemas/ids/ID), compiled for the event-time path and
 * kept in a bounded cache.
 *
 * The Kafka loop asks the cache for every record (gp_registry_lookup: a
 * hash probe, no I/O, no lock). An id the cache does not know is asked
 * for (gp_registry_want) and fetched by the registry's own thread; the
 * loop holds that record's partition meanwhile and takes the answers into
 * the cache between batches (gp_registry_collect). A slow or frozen
 * registry holds only the partitions waiting for a new schema, never the
 * loop. Uses libcurl and cJSON; logs what it retries. */
#ifndef GP_PROXY_SCHEMA_REGISTRY_H
#define GP_PROXY_SCHEMA_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "proxy/conf/conf.h"

typedef struct gp_registry gp_registry_t;

/* What the cache knows about one id. */
typedef struct gp_schema_ref {
        const gp_avro_t *avro; /* NULL when the id cannot be used: */
        gp_bad_code_t code;    /* GP_BAD_UNKNOWN_SCHEMA, _BAD_SCHEMA,
                                * _FIELD_MISSING, _REGISTRY_UNAVAILABLE */
        const char *why;       /* text naming the id; valid until the next
                                * gp_registry_collect */
} gp_schema_ref_t;

/* A client for conf's schema.registry.* keys and x's avro path. NULL with
 * the reason in err: GP_ERR_FAIL (libcurl refuses an option, no thread),
 * GP_ERR_NOMEM. */
gp_registry_t *gp_registry_new(const gp_conf_t *conf, const gp_extract_t *x, gp_err_t *err);
void gp_registry_destroy(gp_registry_t *r);

/* true with *out set when the cache holds an answer for id that is still
 * good at mono (ms); false when it must be fetched. */
bool gp_registry_lookup(gp_registry_t *r, uint32_t id, int64_t mono, gp_schema_ref_t *out);

/* Asks the fetch thread for id (once: asking again while it is pending
 * is a no-op). A registry that cannot be reached (connection, timeout,
 * 5xx, 401/403) is asked again with a growing pause for up to
 * schema.registry.retry.ms; then the answer is registry-unavailable, kept
 * for schema.registry.retry.ms. A lasting refusal (404, a bad schema, a
 * schema without the path) is an answer too. false when too many ids are
 * pending: ask again later. */
bool gp_registry_want(gp_registry_t *r, uint32_t id);
/* Takes the thread's answers into the cache (the loop's thread only).
 * Returns how many of them were registry-unavailable. */
int gp_registry_collect(gp_registry_t *r);

/* Counters since start. */
typedef struct gp_registry_stats {
        uint64_t requests, failures, cached, evicted;
} gp_registry_stats_t;
void gp_registry_stats(gp_registry_t *r, gp_registry_stats_t *out);

#endif
