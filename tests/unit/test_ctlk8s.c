/* tests/unit/test_ctlk8s.c: the Kubernetes control backend
 * (proxy/control/ctl_k8s.c) where no API server is needed: refused names and
 * kubeconfigs, the namespace default, and a server that is not there (the
 * read fails with the reason, never with the token; the watch thread
 * stops promptly). The exchange with a real API server is
 * tests/integration/k8s_handshake.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proxy/control/ctl.h"

static char dir[64], kc[128];

static void write_kc(const char *ns_line) {
        snprintf(dir, sizeof(dir), "/tmp/gp-ctlk8s.XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
        snprintf(kc, sizeof(kc), "%s/kubeconfig", dir);
        FILE *f = fopen(kc, "w");
        cr_assert_not_null(f);
        fprintf(f,
                "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
                "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n%s"
                "users:\n- name: u\n  user:\n    token: TOPSECRET-TOKEN\n"
                "current-context: x\n",
                ns_line);
        fclose(f);
}

static void cleanup(void) {
        unlink(kc);
        rmdir(dir);
}

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Test(ctlk8s, refused_names_and_kubeconfigs) {
        gp_err_t err;
        write_kc("");
        cr_expect_null(gp_ctl_new_k8s("Bad_Name", NULL, kc, false, &err));
        cr_expect(strstr(err.msg, "ConfigMap name \"Bad_Name\": not a valid name"), "%s",
                  err.msg);
        cr_expect_null(gp_ctl_new_k8s("bg", "a.b", kc, false, &err));
        cr_expect(strstr(err.msg, "namespace \"a.b\": not a valid namespace name"), "%s",
                  err.msg);
        cr_expect_null(gp_ctl_new_k8s("bg", NULL, "/nonexistent/kc", false, &err));
        cr_expect_str_eq(err.msg, "kubernetes: /nonexistent/kc: No such file or directory");
        cleanup();
}

Test(ctlk8s, no_server_without_watch) {
        gp_err_t err;
        write_kc("    namespace: flink\n");
        gp_ctl_t *c = gp_ctl_new_k8s("bg", NULL, kc, false, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(gp_ctl_describe(c), "configmap flink/bg", "the context's namespace");
        cr_expect_eq(gp_ctl_poll(c, true), -1);
        const char *e = gp_ctl_error(c);
        cr_expect(strstr(e,
                         "GET configmap flink/bg: https://127.0.0.1:1/api/v1/namespaces/"
                         "flink/configmaps/bg: Failed to connect to 127.0.0.1 port 1") == e &&
                          strstr(e, "Couldn't connect to server"),
                  "%s", e);
        cr_expect_null(strstr(e, "TOPSECRET"), "the token is never in a message");
        cr_expect_null(gp_ctl_load(c, &err));
        gp_kv_t kv[] = {{"gate-proxy.phase", "steady"}};
        cr_expect_eq(gp_ctl_write(c, "1", kv, 1, &err), GP_ERR_TRANSPORT);
        cr_expect(strstr(err.msg, "PATCH configmap flink/bg: https://127.0.0.1:1/"), "%s",
                  err.msg);
        cr_expect_null(strstr(err.msg, "TOPSECRET"));
        cr_expect_eq(gp_ctl_create(c, kv, 1, false, &err), GP_ERR_TRANSPORT);
        cr_expect(gp_ctl_cli_cas(c), "the CLI writes with a precondition");
        gp_ctl_destroy(c);
        cleanup();
}

Test(ctlk8s, no_server_with_watch) {
        gp_err_t err;
        write_kc("");
        gp_ctl_t *c = gp_ctl_new_k8s("bg", "ns1", kc, true, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(gp_ctl_describe(c), "configmap ns1/bg");
        /* The first answer (a refused connection) came before the return. */
        cr_expect_eq(gp_ctl_poll(c, false), -1);
        cr_expect(strstr(gp_ctl_error(c), "GET configmap ns1/bg: "), "%s", gp_ctl_error(c));
        cr_expect_null(gp_ctl_current(c));
        /* The thread is in its backoff or connecting: it stops promptly. */
        usleep(300 * 1000);
        int64_t t0 = mono_ms();
        gp_ctl_destroy(c);
        cr_expect_lt(mono_ms() - t0, 1500, "stopping took %lld ms",
                     (long long)(mono_ms() - t0));
        cleanup();
}

Test(ctlk8s, namespace_default) {
        gp_err_t err;
        write_kc("");
        gp_ctl_t *c = gp_ctl_new_k8s("bg", "", kc, false, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(gp_ctl_describe(c), "configmap default/bg");
        gp_ctl_destroy(c);
        cleanup();
}
