/* tests/unit/test_manifest.c: k8s/manifest.c. YAML and JSON manifests ->
 * the JSON the API gets: scalars typed as YAML 1.2's core schema, quoted
 * ones kept strings; each refusal names the line and the reason. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/manifest.h"

static char *parse_print(const char *y) {
        gp_err_t err = {0};
        cJSON *j = gp_k8s_manifest_parse(y, strlen(y), &err);
        cr_assert(j, "%s: %s", y, err.msg);
        char *s = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        return s;
}

static void refused(const char *y, const char *why) {
        gp_err_t err = {0};
        cJSON *j = gp_k8s_manifest_parse(y, strlen(y), &err);
        cr_assert_null(j, "%s was taken", y);
        cr_assert(strstr(err.msg, why), "%s: '%s' does not say '%s'", y, err.msg, why);
}

Test(manifest, typed_like_the_core_schema) {
        char *s = parse_print("spec:\n"
                              "  parallelism: 2\n"
                              "  ratio: -1.5e3\n"
                              "  quoted: \"2\"\n"
                              "  single: 'true'\n"
                              "  hex: 0x10\n"
                              "  yes: yes\n"
                              "  on: true\n"
                              "  off: False\n"
                              "  none: ~\n"
                              "  empty:\n"
                              "  path: s3://b/savepoints\n"
                              "  args: [\"--colour\", green, 7]\n");
        cr_assert_str_eq(s, "{\"spec\":{\"parallelism\":2,\"ratio\":-1500,\"quoted\":\"2\","
                            "\"single\":\"true\",\"hex\":\"0x10\",\"yes\":\"yes\",\"on\":true,"
                            "\"off\":false,\"none\":null,\"empty\":null,"
                            "\"path\":\"s3://b/savepoints\","
                            "\"args\":[\"--colour\",\"green\",7]}}");
        free(s);
}

Test(manifest, json_is_yaml) {
        char *s = parse_print("{\"kind\": \"FlinkDeployment\", \"spec\": {\"job\": "
                              "{\"state\": \"suspended\", \"parallelism\": 2}}}");
        cr_assert_str_eq(s, "{\"kind\":\"FlinkDeployment\",\"spec\":{\"job\":"
                            "{\"state\":\"suspended\",\"parallelism\":2}}}");
        free(s);
}

Test(manifest, the_example_flinkdeployment) {
        FILE *f = fopen(GP_SOURCE_DIR "/deploy/kubernetes/handover/flinkdeployment-green.yaml",
                        "rb");
        char buf[8192];
        cr_assert(f);
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        gp_err_t err = {0};
        cJSON *j = gp_k8s_manifest_parse(buf, n, &err);
        cr_assert(j, "%s", err.msg);
        cJSON *job = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "spec"), "job");
        cr_assert_str_eq(cJSON_GetObjectItem(job, "state")->valuestring, "suspended");
        cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(job, "parallelism")));
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(job, "allowNonRestoredState")));
        cJSON *conf =
                cJSON_GetObjectItem(cJSON_GetObjectItem(j, "spec"), "flinkConfiguration");
        cr_assert_str_eq(cJSON_GetObjectItem(conf,
                                             "kubernetes.operator.job.upgrade.last-state-"
                                             "fallback.enabled")
                                 ->valuestring,
                         "false");
        cJSON_Delete(j);
}

Test(manifest, refusals_name_the_line) {
        refused("a: 1\na: 2\n", "line 2: key 'a' twice");
        refused("a: 1\n---\nb: 2\n", "more than one document");
        refused("- a\n- b\n", "not one object");
        refused("a: [1, 2\n", "line");
        refused("? [a]\n: 1\n", "a key that is not a plain string");
        refused("a: \"x\\0y\"\n", "a NUL byte");
}

Test(manifest, aliases_have_a_budget) {
        /* Nine levels of ten aliases each: 10^9 values if expanded. */
        const char *y = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        refused(y, "more than 100000 values");
}
