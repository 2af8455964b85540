/* Tests of k8s/configmap.c: what documents are accepted, what each bad one
 * is refused with, and that edits keep the rest of the document. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/configmap.h"

static const char *good =
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"bg-"
        "configmap\","
        "\"namespace\":\"flink\",\"resourceVersion\":\"41\",\"labels\":{\"a\":\"b\"}},"
        "\"data\":{\"active-deployment-type\":\"BLUE\",\"stage\":\"RUNNING\","
        "\"is-first-deployment\":\"true\"}}";

Test(configmap, parses_kubectl_output) {
        gp_err_t err;
        gp_cm_t *cm = gp_cm_parse(good, strlen(good), &err);
        cr_assert_not_null(cm, "%s", err.msg);
        cr_assert_str_eq(gp_cm_name(cm), "bg-configmap");
        cr_assert_str_eq(gp_cm_resource_version(cm), "41");
        size_t n;
        const gp_kv_t *kv = gp_cm_data(cm, &n);
        cr_assert_eq(n, 3);
        cr_assert_str_eq(kv[0].key, "active-deployment-type");
        cr_assert_str_eq(gp_cm_get(cm, "stage"), "RUNNING");
        cr_assert_null(gp_cm_get(cm, "Stage"), "keys are case-sensitive");
        gp_cm_destroy(cm);
}

static const struct {
        const char *doc, *err;
} bad[] = {
        {"", "empty document"},
        {"{\"a\":1,", "not JSON (syntax error at byte 6)"},
        {"[1]", "not a JSON object"},
        {"{\"kind\":\"Secret\"}", "kind: expected \"ConfigMap\""},
        {"{\"metadata\":[]}", "metadata: not an object"},
        {"{\"metadata\":{\"resourceVersion\":7}}", "metadata.resourceVersion: not a string"},
        {"{\"data\":\"x\"}", "data: not an object"},
        {"{\"data\":{\"stage\":5}}",
         "data.stage: not a string (ConfigMap values are strings; quote it)"},
        {"{\"data\":{\"stage\":\"A\",\"stage\":\"B\"}}", "data.stage: duplicate key"},
        {"{\"data\":{}} x", "trailing data at byte 12"},
};

Test(configmap, refuses_bad_documents) {
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                gp_err_t err = {0};
                gp_cm_t *cm = gp_cm_parse(bad[i].doc, strlen(bad[i].doc), &err);
                cr_assert_null(cm, "row %zu accepted", i);
                cr_assert_str_eq(err.msg, bad[i].err, "row %zu", i);
        }
}

Test(configmap, null_or_absent_data_is_empty) {
        gp_err_t err;
        gp_cm_t *cm = gp_cm_parse("{\"data\":null}", 13, &err);
        cr_assert_not_null(cm, "%s", err.msg);
        size_t n = 9;
        gp_cm_data(cm, &n);
        cr_assert_eq(n, 0);
        cr_assert_eq(gp_cm_set(cm, "stage", "RUNNING"), 0);
        cr_assert_str_eq(gp_cm_get(cm, "stage"), "RUNNING");
        gp_cm_destroy(cm);
}

Test(configmap, edits_keep_the_rest) {
        gp_err_t err;
        gp_cm_t *cm = gp_cm_parse(good, strlen(good), &err);
        cr_assert_eq(gp_cm_set(cm, "stage", "TRANSITIONING"), 0);
        cr_assert_eq(gp_cm_set(cm, "gate-proxy.phase", "split"), 0);
        cr_assert_eq(gp_cm_set(cm, "gate-proxy.cutoff", "5"), 0);
        cr_assert_eq(gp_cm_set(cm, "is-first-deployment", NULL), 0);
        cr_assert_eq(gp_cm_set_resource_version(cm, "42"), 0);
        gp_cm_remove_prefix(cm, "gate-proxy.");
        char *text = gp_cm_render(cm);
        gp_cm_t *back = gp_cm_parse(text, strlen(text), &err);
        cr_assert_not_null(back, "%s", err.msg);
        cr_assert_str_eq(gp_cm_get(back, "stage"), "TRANSITIONING");
        cr_assert_null(gp_cm_get(back, "is-first-deployment"));
        cr_assert_null(gp_cm_get(back, "gate-proxy.phase"));
        cr_assert_str_eq(gp_cm_resource_version(back), "42");
        cr_assert(strstr(text, "\"labels\""), "metadata.labels kept");
        free(text);
        gp_cm_destroy(back);
        gp_cm_destroy(cm);
}

Test(configmap, new_has_identity) {
        gp_cm_t *cm = gp_cm_new("x-configmap", "ns");
        cr_assert_str_eq(gp_cm_name(cm), "x-configmap");
        cr_assert_str_eq(gp_cm_resource_version(cm), "1");
        gp_cm_destroy(cm);
        gp_cm_destroy(NULL);
}
