/* proxy/registry.h: schemas by id from a Confluent-compatible schema
 * registry (GET URL/schemas/ids/ID), compiled for the event-time path and
 * kept in a bounded cache.
 *
 * The Kafka loop asks the cache for every record (gp_registry_lookup: a
 * hash probe, no I/O) and fetches only between transactions
 * (gp_registry_fetch), so a slow registry never holds a transaction open.
 * Uses libcurl and cJSON; logs what it retries. */
#ifndef GP_PROXY_REGISTRY_H
#define GP_PROXY_REGISTRY_H

#include <stdatomic.h>
#include <stdint.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "proxy/conf.h"

typedef struct gp_registry gp_registry_t;

/* What the cache knows about one id. */
typedef struct gp_schema_ref {
        const gp_avro_t *avro; /* NULL when the id cannot be used: */
        const char *code;      /* unknown-schema, bad-schema, field-missing,
                                * registry-unavailable */
        const char *why;       /* text naming the id; valid until the next
                                * gp_registry_fetch */
} gp_schema_ref_t;

/* A client for conf's schema.registry.* keys and x's avro path. NULL with
 * the reason in err (an option libcurl refuses). */
gp_registry_t *gp_registry_new(const gp_conf_t *conf, const gp_extract_t *x, gp_err_t *err);
void gp_registry_destroy(gp_registry_t *r);

/* 1 with *out set when the cache holds an answer for id that is still
 * good at mono (ms); 0 when it must be fetched. */
int gp_registry_lookup(gp_registry_t *r, uint32_t id, int64_t mono, gp_schema_ref_t *out);

/* Fetches id's schema into the cache. A registry that cannot be reached
 * (connection, timeout, 5xx, 401/403) is asked again with a growing pause
 * for up to schema.registry.retry.ms. Returns 0 when the cache holds an
 * answer (the schema, or a lasting refusal: 404, a bad schema, a schema
 * without the path); -1 when the registry stayed out of reach (cached as
 * registry-unavailable for schema.registry.retry.ms); -2 as soon as *stop
 * is set. */
int gp_registry_fetch(gp_registry_t *r, uint32_t id, const atomic_int *stop);

/* Counters since start. */
typedef struct gp_registry_stats {
        uint64_t requests, failures, cached, evicted;
} gp_registry_stats_t;
void gp_registry_stats(const gp_registry_t *r, gp_registry_stats_t *out);

#endif
