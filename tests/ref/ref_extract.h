/* tests/ref/ref_extract.h: the event-time readers as they were before the
 * skip-scanners (gate/jsonpath.c, gate/avro.c, gate/timeparse.c,
 * gate/extract.c at that time), kept unchanged under ref_ names as the
 * reference of the differential fuzz target tests/fuzz/fuzz_fastread.c.
 * Built for the tests only (library gp_ref). The reference validates every
 * byte it reads; the readers in gate/ skip what they need not read, and
 * fuzz_fastread.c states what the two must agree on. */
#ifndef GP_TESTS_REF_EXTRACT_H
#define GP_TESTS_REF_EXTRACT_H

#include "gate/extract.h"

gp_json_rc_t ref_jpath_find(const gp_jpath_t *p, const char *doc, size_t len, gp_jval_t *out);
int ref_jpath_compile(gp_jpath_t *p, const char *spec, char *err, size_t errlen);
gp_avro_rc_t ref_avro_find(const gp_avro_t *av, const void *buf, size_t len,
                           gp_avro_val_t *out);
int ref_avro_val_ms(const gp_avro_val_t *v, gp_unit_t unit, int64_t *ms, const char **why);
int ref_time_parse(const char *s, size_t len, gp_unit_t unit, int64_t *out_ms,
                   const char **why);
int64_t ref_avro_add_node(gp_avro_t *av, gp_av_type_t type);
int64_t ref_avro_add_kids(gp_avro_t *av, uint32_t n);
void ref_avro_free(gp_avro_t *av);
int ref_avro_frame(const void *buf, size_t len, uint32_t *id, const uint8_t **body,
                   size_t *body_len);
int ref_parse_i64(const char *s, size_t len, int64_t *out, const char **why);
int ref_time_from_int(int64_t v, gp_unit_t unit, int64_t *out_ms, const char **why);
char *ref_time_format(int64_t ms, char *buf, size_t len);
int ref_extract_compile(gp_extract_t *x, const char *spec, gp_unit_t unit, char *err,
                        size_t errlen);
const char *ref_bad_name(gp_bad_code_t code);
int ref_extract_ts(const gp_extract_t *x, const gp_record_view_t *r, int64_t *ts,
                   gp_bad_t *bad);

#endif
