/* tests/unit/test_error.c: gate/error.c, the error type of proxy/ and k8s/,
 * and how the layers fill it: HTTP statuses of the API server, a missing
 * and a conflicting control file, a refused setting, a client refused by
 * librdkafka. Decisions are taken on the code, so each code is asserted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/error.h"
#include "k8s/client.h"
#include "proxy/loop/kafka_clients.h"
#include "proxy/conf/conf.h"
#include "proxy/control/ctl.h"

Test(error, set_and_defaults) {
        gp_err_t e;
        cr_assert_eq(gp_err_set(&e, GP_ERR_TRANSPORT, "GET %s: %d", "x", 7), GP_ERR_TRANSPORT);
        cr_assert_str_eq(e.msg, "GET x: 7");
        /* Every code has a name of its own (logs, metric labels). */
        for (int i = GP_OK; i < GP_ERR__COUNT; i++) {
                cr_assert_str_neq(gp_errcode_name((gp_errcode_t)i), "unknown", "code %d", i);
                for (int j = GP_OK; j < i; j++)
                        cr_assert_str_neq(gp_errcode_name((gp_errcode_t)i),
                                          gp_errcode_name((gp_errcode_t)j));
        }
        gp_err_clear(&e);
        cr_assert_eq(e.code, GP_OK);
        cr_assert_str_eq(e.msg, "");
        cr_assert_str_eq(gp_errcode_name(GP_ERR__COUNT), "unknown");
}

Test(error, null_means_not_wanted) {
        cr_assert_eq(gp_err_set(NULL, GP_ERR_IO, "x"), GP_ERR_IO);
        cr_assert_eq(gp_err_code(NULL), GP_ERR_FAIL);
        cr_assert_str_eq(gp_err_msg(NULL), "");
        gp_err_clear(NULL);
}

Test(error, prefix_keeps_code_and_truncates) {
        gp_err_t e;
        gp_err_set(&e, GP_ERR_DENIED, "403 Forbidden");
        cr_assert_eq(gp_err_prefix(&e, "GET configmap %s/%s", "ns", "bg"), GP_ERR_DENIED);
        cr_assert_str_eq(e.msg, "GET configmap ns/bg: 403 Forbidden");
        char big[3 * GP_ERR_MSG_MAX];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        gp_err_set(&e, GP_ERR_FAIL, "%s", big);
        cr_assert_eq(strlen(e.msg), GP_ERR_MSG_MAX - 1);
        gp_err_prefix(&e, "%s", big);
        cr_assert_eq(strlen(e.msg), GP_ERR_MSG_MAX - 1, "bounded");
        gp_err_set(&e, GP_ERR_FAIL, "tail");
        gp_err_prefix(&e, "%.1000s", big);
        cr_assert_eq(strlen(e.msg), 1006);
        cr_assert_str_eq(e.msg + 1000, ": tail");
        gp_err_set(&e, GP_ERR_FAIL, "the whole reason");
        gp_err_prefix(&e, "%.1015s", big);
        cr_assert_eq(strlen(e.msg), GP_ERR_MSG_MAX - 1);
        cr_assert_str_eq(e.msg + 1015, ": the wh", "the prefix first, then what fits");
}

Test(error, api_statuses) {
        static const struct {
                long status;
                gp_errcode_t code;
        } t[] = {{409, GP_ERR_CONFLICT},  {404, GP_ERR_NOT_FOUND}, {401, GP_ERR_DENIED},
                 {403, GP_ERR_DENIED},    {429, GP_ERR_TRANSPORT}, {500, GP_ERR_TRANSPORT},
                 {503, GP_ERR_TRANSPORT}, {400, GP_ERR_INVALID},   {422, GP_ERR_INVALID},
                 {418, GP_ERR_FAIL}};
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
                cr_expect_eq(gp_k8s_status_code(t[i].status), t[i].code, "HTTP %ld: %s",
                             t[i].status, gp_errcode_name(gp_k8s_status_code(t[i].status)));
}

Test(error, control_file_codes) {
        char dir[] = "/tmp/gp-error.XXXXXX", path[64];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/cm.json", dir);
        gp_err_t e;
        cr_assert_null(gp_ctlfile_load(path, &e));
        cr_assert_eq(e.code, GP_ERR_NOT_FOUND, "%s", e.msg);
        cr_assert(strstr(e.msg, "gate-proxy init --control"), "%s", e.msg);
        gp_kv_t kv[] = {{"k", "v"}};
        cr_assert_eq(gp_ctlfile_update(path, NULL, kv, 1, "bg", &e), GP_OK, "%s", e.msg);
        cr_assert_eq(gp_ctlfile_update(path, "99", kv, 1, NULL, &e), GP_ERR_CONFLICT);
        gp_ctl_t *c = gp_ctl_new_file(path);
        cr_assert_eq(gp_ctl_create(c, kv, 1, false, &e), GP_ERR_CONFLICT, "%s", e.msg);
        gp_ctl_destroy(c);
        c = gp_ctl_new_file(dir);
        cr_assert_eq(gp_ctl_create(c, kv, 1, true, &e), GP_ERR_INVALID, "a directory: %s",
                     e.msg);
        gp_ctl_destroy(c);
        unlink(path);
        char lock[80];
        snprintf(lock, sizeof lock, "%s.lock", path);
        unlink(lock);
        rmdir(dir);
}

Test(error, settings_and_clients) {
        gp_conf_t conf;
        gp_err_t e;
        gp_conf_init(&conf);
        cr_assert_eq(gp_conf_set(&conf, "gate.nope", "1", "x.conf:3", &e), GP_ERR_INVALID);
        cr_assert_eq(e.code, GP_ERR_INVALID);
        cr_assert(!strncmp(e.msg, "x.conf:3: gate.nope: ", 21), "%s", e.msg);
        rd_kafka_conf_t *kc = rd_kafka_conf_new();
        int bad = 0;
        gp_client_set(kc, "no.such.property", "1", &e, &bad);
        cr_assert(bad);
        cr_assert_eq(e.code, GP_ERR_INVALID, "%s", e.msg);
        rd_kafka_conf_destroy(kc);
        gp_conf_destroy(&conf);
}
