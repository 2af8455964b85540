/* tests/unit/test_flinkdep.c: k8s/flinkdep.c's readers of FlinkDeployment
 * documents: spec.flinkConfiguration read as the operator reads it from
 * 1.13 on (nested objects flattened, typed values as text), a key by its
 * new or its old name, the legacy savepoint record. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/flinkdep.h"

static cJSON *doc(const char *conf) {
        char buf[2048];
        snprintf(buf, sizeof buf, "{\"spec\":{\"flinkConfiguration\":%s}}", conf);
        cJSON *j = cJSON_Parse(buf);
        cr_assert_not_null(j, "%s", buf);
        return j;
}

Test(flinkdep, conf_flat_nested_and_typed) {
        static const struct {
                const char *conf, *key, *want;
        } rows[] = {
                {"{\"a.b.c\":\"x\"}", "a.b.c", "x"},
                {"{\"a\":{\"b\":{\"c\":\"x\"}}}", "a.b.c", "x"},
                {"{\"a.b\":{\"c\":\"x\"}}", "a.b.c", "x"},
                {"{\"a\":{\"b.c\":\"x\"}}", "a.b.c", "x"},
                {"{\"kubernetes\":{\"operator\":{\"job\":{\"drain-on-savepoint-deletion\":"
                 "true}}}}",
                 GP_FLINKDEP_DRAIN_KEY, "true"},
                {"{\"kubernetes.operator.job.drain-on-savepoint-deletion\":false}",
                 GP_FLINKDEP_DRAIN_KEY, "false"},
                {"{\"parallelism\":{\"default\":10}}", "parallelism.default", "10"},
                {"{\"x\":0.5}", "x", "0.5"},
                {"{\"a\":{\"b\":\"x\"}}", "a", ""},    /* an object is no value */
                {"{\"ab\":{\"c\":\"x\"}}", "a.c", ""}, /* a name is a whole segment */
                {"{\"a\":{\"b\":\"x\"}}", "a.b.c", ""},
                {"{}", "a", ""},
                {"[]", "a", ""},
        };
        char buf[64];
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                cJSON *j = doc(rows[i].conf);
                cr_expect_str_eq(gp_flinkdep_conf(j, rows[i].key, buf, sizeof buf),
                                 rows[i].want, "%s in %s", rows[i].key, rows[i].conf);
                cJSON_Delete(j);
        }
}

Test(flinkdep, conf_new_name_before_old) {
        char buf[64];
        cJSON *j = doc("{\"state.savepoints.dir\":\"s3://old\"}");
        cr_expect_str_eq(gp_flinkdep_conf2(j, GP_FLINKDEP_SAVEPOINT_DIR,
                                           GP_FLINKDEP_SAVEPOINT_DIR_OLD, buf, sizeof buf),
                         "s3://old");
        cJSON_Delete(j);
        j = doc("{\"state.savepoints.dir\":\"s3://old\",\"execution\":{\"checkpointing\":"
                "{\"savepoint-dir\":\"s3://new\"}}}");
        cr_expect_str_eq(gp_flinkdep_conf2(j, GP_FLINKDEP_SAVEPOINT_DIR,
                                           GP_FLINKDEP_SAVEPOINT_DIR_OLD, buf, sizeof buf),
                         "s3://new", "Flink reads the new name first");
        cJSON_Delete(j);
        j = doc("{}");
        cr_expect_str_eq(gp_flinkdep_conf2(j, GP_FLINKDEP_CHECKPOINT_DIR,
                                           GP_FLINKDEP_CHECKPOINT_DIR_OLD, buf, sizeof buf),
                         "");
        cJSON_Delete(j);
}

Test(flinkdep, legacy_savepoint_record) {
        cJSON *j =
                cJSON_Parse("{\"status\":{\"jobStatus\":{\"savepointInfo\":{\"lastSavepoint\":"
                            "{\"location\":\"s3://sp/savepoint-1\"}}}}}");
        cr_assert_not_null(j);
        cr_expect(gp_flinkdep_legacy_savepoint(j, "s3://sp/savepoint-1"));
        cr_expect_not(gp_flinkdep_legacy_savepoint(j, "s3://sp/savepoint-2"));
        cr_expect_not(gp_flinkdep_legacy_savepoint(j, ""));
        cJSON_Delete(j);
}
