/* tests/unit/test_kubeconfig.c: k8s/kubeconfig.c. A table of kubeconfig
 * documents -> the configuration they give or the error (which names the
 * field); the in-cluster configuration from a fake service-account
 * directory; KUBECONFIG and ~/.kube/config; base64 and object names. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s/kubeconfig.h"

/* A kubeconfig with one cluster, context and user; the parts vary. */
#define KC(cluster, context, user, current)                                                   \
        "apiVersion: v1\n"                                                                    \
        "kind: Config\n"                                                                      \
        "clusters:\n"                                                                         \
        "- name: c1\n"                                                                        \
        "  cluster:\n" cluster "contexts:\n"                                                  \
        "- name: ctx\n"                                                                       \
        "  context:\n" context "users:\n"                                                     \
        "- name: u1\n"                                                                        \
        "  user:\n" user current

#define SERVER "    server: https://127.0.0.1:6443\n"
#define CTX    "    cluster: c1\n    user: u1\n    namespace: flink\n"
#define TOKEN  "    token: s3cret\n"
#define CUR    "current-context: ctx\n"

typedef struct {
        const char *name;
        const char *yaml;
        /* expectations (NULL: not checked; "": must be unset) */
        const char *server, *ns, *token, *token_file, *ca_data, *ca_file, *cert_data,
                *cert_file, *key_data, *key_file;
} row_t;

static const row_t rows[] = {
        {"token", KC(SERVER, CTX, TOKEN, CUR), "https://127.0.0.1:6443", "flink", "s3cret", "",
         "", "", "", "", "", ""},
        {"tokenFile relative to the kubeconfig's dir",
         KC(SERVER, CTX, "    tokenFile: tok\n", CUR), "https://127.0.0.1:6443", "flink", "",
         "/etc/kube/tok", "", "", "", "", "", ""},
        {"tokenFile absolute", KC(SERVER, CTX, "    tokenFile: /run/t\n", CUR), NULL, NULL, "",
         "/run/t", "", "", "", "", "", ""},
        {"token wins over tokenFile",
         KC(SERVER, CTX, "    token: a\n    tokenFile: /run/t\n", CUR), NULL, NULL, "a", "",
         "", "", "", "", "", ""},
        {"CA data (base64)",
         KC(SERVER "    certificate-authority-data: aGVsbG8=\n", CTX, TOKEN, CUR), NULL, NULL,
         NULL, NULL, "hello", "", "", "", "", ""},
        {"CA file", KC(SERVER "    certificate-authority: ca.crt\n", CTX, TOKEN, CUR), NULL,
         NULL, NULL, NULL, "", "/etc/kube/ca.crt", "", "", "", ""},
        {"CA data wins over file",
         KC(SERVER "    certificate-authority: ca.crt\n"
                   "    certificate-authority-data: aGVsbG8=\n",
            CTX, TOKEN, CUR),
         NULL, NULL, NULL, NULL, "hello", "", "", "", "", ""},
        {"client certificate data",
         KC(SERVER, CTX, "    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n",
            CUR),
         NULL, NULL, "", "", "", "", "cert", "", "key", ""},
        {"client certificate files",
         KC(SERVER, CTX, "    client-certificate: c.pem\n    client-key: /k/k.pem\n", CUR),
         NULL, NULL, "", "", "", "", "", "/etc/kube/c.pem", "", "/k/k.pem"},
        {"trailing slash of server dropped, no namespace",
         KC("    server: https://api.example:443/\n", "    cluster: c1\n    user: u1\n", TOKEN,
            CUR),
         "https://api.example:443", "", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
        {"quoted values, flow style",
         "{clusters: [{name: c1, cluster: {server: 'https://h:1'}}],"
         " contexts: [{name: ctx, context: {cluster: c1, user: u1}}],"
         " users: [{name: u1, user: {token: \"t\"}}], current-context: ctx}",
         "https://h:1", "", "t", NULL, NULL, NULL, NULL, NULL, NULL, NULL},
        {"insecure-skip-tls-verify: false is fine",
         KC(SERVER "    insecure-skip-tls-verify: false\n", CTX, TOKEN, CUR), NULL, NULL, NULL,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL},

};

/* Refused documents: each error names the field. */
static const struct {
        const char *name, *yaml, *err;
} bad_rows[] = {
        {"missing current-context", KC(SERVER, CTX, TOKEN, ""), "current-context: not set"},
        {"empty current-context", KC(SERVER, CTX, TOKEN, "current-context: \"\"\n"),
         "current-context: not set"},
        {"unknown context", KC(SERVER, CTX, TOKEN, "current-context: nope\n"),
         "contexts[name=\"nope\"]: not found (named by current-context)"},
        {"context without cluster", KC(SERVER, "    user: u1\n", TOKEN, CUR),
         "contexts[name=\"ctx\"].context.cluster: not set"},
        {"context without user", KC(SERVER, "    cluster: c1\n", TOKEN, CUR),
         "contexts[name=\"ctx\"].context.user: not set"},
        {"unknown cluster", KC(SERVER, "    cluster: c9\n    user: u1\n", TOKEN, CUR),
         "clusters[name=\"c9\"]: not found (named by contexts[name=\"ctx\"].context.cluster)"},
        {"unknown user", KC(SERVER, "    cluster: c1\n    user: u9\n", TOKEN, CUR),
         "users[name=\"u9\"]: not found (named by contexts[name=\"ctx\"].context.user)"},
        {"no server", KC("    certificate-authority-data: aGVsbG8=\n", CTX, TOKEN, CUR),
         "clusters[name=\"c1\"].cluster.server: not set"},
        {"http server", KC("    server: http://127.0.0.1:8080\n", CTX, TOKEN, CUR),
         "clusters[name=\"c1\"].cluster.server: \"http://127.0.0.1:8080\" is not an https:// "
         "URL (TLS is required)"},
        {"insecure-skip-tls-verify",
         KC(SERVER "    insecure-skip-tls-verify: true\n", CTX, TOKEN, CUR),
         "clusters[name=\"c1\"].cluster.insecure-skip-tls-verify: not supported (TLS "
         "verification is always on; give the cluster's CA instead)"},
        {"bad CA base64",
         KC(SERVER "    certificate-authority-data: '@@@'\n", CTX, TOKEN, CUR),
         "clusters[name=\"c1\"].cluster.certificate-authority-data: not valid base64"},
        {"client certificate without key",
         KC(SERVER, CTX, "    client-certificate-data: Y2VydA==\n", CUR),
         "users[name=\"u1\"].user.client-key: not set (client-certificate needs a key)"},
        {"client key without certificate", KC(SERVER, CTX, "    client-key: k.pem\n", CUR),
         "users[name=\"u1\"].user.client-certificate: not set (client-key needs a "
         "certificate)"},
        {"exec plugin", KC(SERVER, CTX, "    exec:\n      command: aws\n", CUR),
         "users[name=\"u1\"].user.exec: not supported (use token, tokenFile or "
         "client-certificate and client-key)"},
        {"basic auth", KC(SERVER, CTX, "    username: admin\n    password: x\n", CUR),
         "users[name=\"u1\"].user.username: not supported (use token, tokenFile or "
         "client-certificate and client-key)"},
        {"no credentials", KC(SERVER, CTX, "    {}\n", CUR),
         "users[name=\"u1\"].user: no credentials (token, tokenFile, or client-certificate "
         "and client-key)"},
        {"token is a list", KC(SERVER, CTX, "    token: [a, b]\n", CUR),
         "users[name=\"u1\"].user.token: not a string"},
        {"NUL in a value", KC(SERVER, CTX, "    token: \"a\\0b\"\n", CUR),
         "users[name=\"u1\"].user.token: contains a NUL byte"},
        {"clusters not a list",
         "clusters: 3\ncurrent-context: ctx\ncontexts:\n- name: ctx\n"
         "  context: {cluster: c1, user: u1}\n",
         "clusters: not a list"},
        {"context entry without a context mapping",
         "current-context: ctx\ncontexts:\n- name: ctx\n  context: x\n",
         "contexts[name=\"ctx\"].context: not set or not a mapping"},
        {"not a mapping", "- a\n- b\n", "kubeconfig: not a YAML mapping"},
        {"empty document", "", "kubeconfig: empty document"},
        {"YAML syntax error", "clusters: [a, b\n",
         "kubeconfig: YAML error at line 2 column 1: did not find expected ',' or ']' while "
         "parsing a flow sequence"},
};

static void expect(const char *row, const char *field, const char *want, const char *got) {
        if (!want)
                return;
        if (!*want)
                cr_expect_null(got, "%s: %s should be unset, is \"%s\"", row, field, got);
        else
                cr_expect(got && !strcmp(got, want), "%s: %s is \"%s\", want \"%s\"", row,
                          field, got ? got : "(null)", want);
}

Test(kubeconfig, table) {
        gp_err_t err;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const row_t *r = &rows[i];
                err.msg[0] = '\0';
                gp_k8s_conf_t *c = gp_k8s_kubeconfig_parse(r->yaml, strlen(r->yaml), "kc",
                                                           "/etc/kube", &err);
                cr_assert_not_null(c, "%s: %s", r->name, err.msg);
                expect(r->name, "server", r->server, c->server);
                expect(r->name, "ns", r->ns, c->ns);
                expect(r->name, "token", r->token, c->token);
                expect(r->name, "token_file", r->token_file, c->token_file);
                expect(r->name, "ca_data", r->ca_data, c->ca_data);
                expect(r->name, "ca_file", r->ca_file, c->ca_file);
                expect(r->name, "cert_data", r->cert_data, c->cert_data);
                expect(r->name, "cert_file", r->cert_file, c->cert_file);
                expect(r->name, "key_data", r->key_data, c->key_data);
                expect(r->name, "key_file", r->key_file, c->key_file);
                if (r->ca_data && *r->ca_data)
                        cr_expect_eq(c->ca_len, strlen(r->ca_data), "%s", r->name);
                cr_expect(strstr(c->source, "kubeconfig kc (context "), "%s: %s", r->name,
                          c->source);
                gp_k8s_conf_destroy(c);
        }
        for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
                err.msg[0] = '\0';
                gp_k8s_conf_t *c = gp_k8s_kubeconfig_parse(
                        bad_rows[i].yaml, strlen(bad_rows[i].yaml), "kc", "/etc/kube", &err);
                cr_expect_null(c, "%s: parsed", bad_rows[i].name);
                cr_expect_str_eq(err.msg, bad_rows[i].err, "%s", bad_rows[i].name);
                gp_k8s_conf_destroy(c);
        }
}

Test(kubeconfig, several_entries_pick_the_named_ones) {
        const char *y = "clusters:\n"
                        "- {name: a, cluster: {server: 'https://a:1'}}\n"
                        "- {name: b, cluster: {server: 'https://b:2'}}\n"
                        "users:\n"
                        "- {name: x, user: {token: tx}}\n"
                        "- {name: y, user: {token: ty}}\n"
                        "contexts:\n"
                        "- {name: one, context: {cluster: a, user: x}}\n"
                        "- {name: two, context: {cluster: b, user: y, namespace: n2}}\n"
                        "current-context: two\n";
        gp_err_t err;
        gp_k8s_conf_t *c = gp_k8s_kubeconfig_parse(y, strlen(y), NULL, NULL, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(c->server, "https://b:2");
        cr_expect_str_eq(c->token, "ty");
        cr_expect_str_eq(c->ns, "n2");
        gp_k8s_conf_destroy(c);
}

Test(kubeconfig, alias_cycle_does_not_loop) {
        const char *y = "a: &x [*x]\ncurrent-context: ctx\ncontexts: &c [*c]\n";
        gp_err_t err = {0};
        gp_k8s_conf_t *c = gp_k8s_kubeconfig_parse(y, strlen(y), NULL, NULL, &err);
        cr_expect_null(c);
        cr_expect(err.msg[0], "an error is given");
        gp_k8s_conf_destroy(c);
}

/* ---- files: KUBECONFIG, ~/.kube/config, in-cluster --------------------- */

static char dir[64];

static void mkdir_tmp(void) {
        snprintf(dir, sizeof(dir), "/tmp/gp-kc-test.XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
}

static void put(const char *name, const char *text) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f, "%s", p);
        fputs(text, f);
        fclose(f);
}

static void rm(const char *name) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        unlink(p);
}

Test(kubeconfig, load_from_KUBECONFIG_first_entry_and_HOME) {
        char p[256];
        gp_err_t err;
        mkdir_tmp();
        put("config", KC(SERVER, CTX, "    tokenFile: tok\n", CUR));
        snprintf(p, sizeof(p), "%s/config:/nonexistent/other", dir);
        setenv("KUBECONFIG", p, 1);
        gp_k8s_conf_t *c = gp_k8s_kubeconfig_load(NULL, &err);
        cr_assert_not_null(c, "%s", err.msg);
        snprintf(p, sizeof(p), "%s/tok", dir);
        cr_expect_str_eq(c->token_file, p, "relative to the kubeconfig");
        gp_k8s_conf_destroy(c);

        /* No KUBECONFIG: ~/.kube/config. */
        unsetenv("KUBECONFIG");
        snprintf(p, sizeof(p), "%s/.kube", dir);
        mkdir(p, 0700);
        put(".kube/config", KC(SERVER, CTX, TOKEN, CUR));
        setenv("HOME", dir, 1);
        c = gp_k8s_conf_load(NULL, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(c->token, "s3cret");
        gp_k8s_conf_destroy(c);

        /* An explicit path that does not exist: the path and the reason. */
        c = gp_k8s_kubeconfig_load("/nonexistent/kc", &err);
        cr_expect_null(c);
        cr_expect_str_eq(err.msg, "/nonexistent/kc: No such file or directory");

        /* A parse error is prefixed by the path. */
        put("bad", KC(SERVER, CTX, TOKEN, ""));
        snprintf(p, sizeof(p), "%s/bad", dir);
        c = gp_k8s_kubeconfig_load(p, &err);
        cr_expect_null(c);
        cr_expect(strstr(err.msg, "/bad: current-context: not set"), "%s", err.msg);

        rm(".kube/config");
        snprintf(p, sizeof(p), "%s/.kube", dir);
        rmdir(p);
        rm("config");
        rm("bad");
        rmdir(dir);
}

Test(kubeconfig, in_cluster) {
        char p[256];
        gp_err_t err;
        mkdir_tmp();
        put("ca.crt", "-----BEGIN CERTIFICATE-----\n");
        put("token", "tok\n");
        put("namespace", "flink-prod\n");
        gp_k8s_conf_t *c = gp_k8s_incluster_load("10.96.0.1", "443", dir, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(c->server, "https://10.96.0.1:443");
        cr_expect_str_eq(c->ns, "flink-prod");
        snprintf(p, sizeof(p), "%s/ca.crt", dir);
        cr_expect_str_eq(c->ca_file, p);
        snprintf(p, sizeof(p), "%s/token", dir);
        cr_expect_str_eq(c->token_file, p, "re-read later, not copied");
        cr_expect_null(c->token);
        gp_k8s_conf_destroy(c);

        /* IPv6: bracketed. No namespace file: none. */
        rm("namespace");
        c = gp_k8s_incluster_load("fd00:10:96::1", "6443", dir, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(c->server, "https://[fd00:10:96::1]:6443");
        cr_expect_null(c->ns);
        gp_k8s_conf_destroy(c);

        static const struct {
                const char *host, *port, *want;
        } bad[] = {
                {NULL, "443",
                 "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT: not set "
                 "(not in a pod? give control.k8s.kubeconfig)"},
                {"10.0.0.1", "",
                 "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT: not set "
                 "(not in a pod? give control.k8s.kubeconfig)"},
                {"10.0.0.1", "99999", "KUBERNETES_SERVICE_PORT: \"99999\" is not a port"},
                {"10.0.0.1", "44a", "KUBERNETES_SERVICE_PORT: \"44a\" is not a port"},
                {"a/b", "443",
                 "KUBERNETES_SERVICE_HOST: \"a/b\" is not a host name or address"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                c = gp_k8s_incluster_load(bad[i].host, bad[i].port, dir, &err);
                cr_expect_null(c);
                cr_expect_str_eq(err.msg, bad[i].want);
        }

        /* The token file must be there. */
        rm("token");
        c = gp_k8s_incluster_load("10.0.0.1", "443", dir, &err);
        cr_expect_null(c);
        snprintf(p, sizeof(p), "%s/token: No such file or directory", dir);
        cr_expect_str_eq(err.msg, p);
        rm("ca.crt");
        rmdir(dir);
}

Test(kubeconfig, explicit_kubeconfig_wins_over_in_cluster) {
        char p[256];
        gp_err_t err;
        mkdir_tmp();
        put("kc", KC(SERVER, CTX, TOKEN, CUR));
        snprintf(p, sizeof(p), "%s/kc", dir);
        setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
        setenv("KUBERNETES_SERVICE_PORT", "443", 1);
        gp_k8s_conf_t *c = gp_k8s_conf_load(p, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(c->server, "https://127.0.0.1:6443");
        gp_k8s_conf_destroy(c);
        /* Without it, in-cluster (whose files are missing here). */
        c = gp_k8s_conf_load(NULL, &err);
        cr_expect_null(c);
        cr_expect(strstr(err.msg, GP_K8S_SA_DIR "/ca.crt"), "%s", err.msg);
        unsetenv("KUBERNETES_SERVICE_HOST");
        unsetenv("KUBERNETES_SERVICE_PORT");
        rm("kc");
        rmdir(dir);
}

#ifdef GP_TEST_HOOKS
/* The test build reads the service account directory from GP_TEST_SA_DIR
 * (the integration test k8s_incluster plays a pod with it). */
Test(kubeconfig, test_build_service_account_dir) {
        char p[256];
        gp_err_t err;
        mkdir_tmp();
        put("ca.crt", "-----BEGIN CERTIFICATE-----\n");
        put("token", "tok\n");
        put("namespace", "flink-test\n");
        unsetenv("KUBECONFIG");
        setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
        setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
        setenv("GP_TEST_SA_DIR", dir, 1);
        gp_k8s_conf_t *c = gp_k8s_conf_load(NULL, &err);
        cr_assert_not_null(c, "%s", err.msg);
        cr_expect_str_eq(c->server, "https://127.0.0.1:6443");
        cr_expect_str_eq(c->ns, "flink-test");
        snprintf(p, sizeof(p), "%s/token", dir);
        cr_expect_str_eq(c->token_file, p);
        snprintf(p, sizeof(p), "in-cluster (service account %s)", dir);
        cr_expect_str_eq(c->source, p);
        gp_k8s_conf_destroy(c);
        /* Set but empty: the pod's own directory. */
        setenv("GP_TEST_SA_DIR", "", 1);
        c = gp_k8s_conf_load(NULL, &err);
        cr_expect_null(c);
        cr_expect(strstr(err.msg, GP_K8S_SA_DIR "/ca.crt"), "%s", err.msg);
        unsetenv("GP_TEST_SA_DIR");
        unsetenv("KUBERNETES_SERVICE_HOST");
        unsetenv("KUBERNETES_SERVICE_PORT");
        rm("ca.crt");
        rm("token");
        rm("namespace");
        rmdir(dir);
}
#endif

/* ---- base64, names ------------------------------------------------------ */

Test(kubeconfig, base64) {
        static const struct {
                const char *in, *out; /* out NULL: refused */
        } t[] = {
                {"", ""},
                {"aGVsbG8=", "hello"},
                {"aGVsbG8", "hello"},
                {"aGVsbA==", "hell"},
                {"aGVsbA", "hell"},
                {"aGVs\nbG8=\n", "hello"},
                {"YQ==", "a"},
                {"a", NULL},
                {"aGVsbG8=x", NULL},
                {"aGV*", NULL},
                {"aGVsbA=", NULL},
                {"aGVsbG8==", NULL},
                {"====", NULL},
                {"aGVsbB==", NULL}, /* spare bits set */
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                char *out = NULL;
                size_t len = 99;
                int rc = gp_k8s_base64_decode(t[i].in, strlen(t[i].in), &out, &len);
                if (!t[i].out) {
                        cr_expect_eq(rc, -1, "\"%s\" should be refused", t[i].in);
                        cr_expect_null(out);
                        cr_expect_eq(len, 0);
                } else {
                        cr_expect_eq(rc, 0, "\"%s\"", t[i].in);
                        cr_expect_eq(len, strlen(t[i].out), "\"%s\"", t[i].in);
                        cr_expect(out && !strcmp(out, t[i].out), "\"%s\" -> \"%s\"", t[i].in,
                                  out ? out : "(null)");
                }
                free(out);
        }
}

Test(kubeconfig, names) {
        cr_expect(gp_k8s_name_ok("flink-bluegreen-configmap"));
        cr_expect(gp_k8s_name_ok("a.b-c.d"));
        cr_expect(gp_k8s_name_ok("0"));
        cr_expect_not(gp_k8s_name_ok(""));
        cr_expect_not(gp_k8s_name_ok(NULL));
        cr_expect_not(gp_k8s_name_ok("Upper"));
        cr_expect_not(gp_k8s_name_ok("-a"));
        cr_expect_not(gp_k8s_name_ok("a-"));
        cr_expect_not(gp_k8s_name_ok("a..b"));
        cr_expect_not(gp_k8s_name_ok("a/b"));
        cr_expect_not(gp_k8s_name_ok("a?x=1"));
        cr_expect(gp_k8s_namespace_ok("flink-prod"));
        cr_expect_not(gp_k8s_namespace_ok("a.b"));
        char big[300];
        memset(big, 'a', sizeof(big));
        big[253] = '\0';
        cr_expect(gp_k8s_name_ok(big));
        big[253] = 'a';
        big[254] = '\0';
        cr_expect_not(gp_k8s_name_ok(big));
        big[63] = '\0';
        cr_expect(gp_k8s_namespace_ok(big));
        big[63] = 'a';
        big[64] = '\0';
        cr_expect_not(gp_k8s_namespace_ok(big));
}
