/* proxy/schema/avsc.h: an Avro schema (its JSON, .avsc) compiled for one
 * event-time path into gate/avro.h's table.
 *
 * Named types (record, error, enum, fixed) with namespaces, references by
 * short or full name, recursion through unions, and the logical types
 * timestamp-millis, -micros and -nanos on long are understood. Defaults,
 * aliases, docs and orders are not needed to read the binary and are
 * ignored. A schema that refers to a name it does not define (a registry
 * schema reference) is refused. */
#ifndef GP_PROXY_SCHEMA_AVSC_H
#define GP_PROXY_SCHEMA_AVSC_H

#include <stddef.h>

#include "gate/avro.h"
#include "gate/error.h"
#include "gate/extract.h"

/* Compiles json[0..len) for x's avro path into *out (freed with
 * gp_avro_free, also on error). GP_OK; GP_ERR_INVALID: not a valid
 * schema; GP_ERR_NOT_FOUND: valid, but the path leads nowhere readable;
 * the reason in err. */
gp_errcode_t gp_avsc_compile(const char *json, size_t len, const gp_extract_t *x,
                             gp_avro_t *out, gp_err_t *err);

#endif
