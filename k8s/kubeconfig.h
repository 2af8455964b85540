/* k8s/kubeconfig.h: where the Kubernetes API server is and how to prove who
 * we are. Two sources, as client-go has them:
 *
 *   in-cluster  KUBERNETES_SERVICE_HOST/PORT and the service account's
 *               files (ca.crt, namespace, token; the token is re-read)
 *   kubeconfig  a YAML file: current-context -> cluster (server, CA) and
 *               user (token, tokenFile, client certificate and key)
 *
 * Parsing is pure: a kubeconfig's file references (certificate-authority,
 * tokenFile, client-certificate, client-key) are only resolved against
 * the file's directory here; libcurl and k8s/client.c read them when
 * they are used. TLS verification is always on: a kubeconfig that asks
 * to skip it is refused. Every error names the field, e.g.
 * `users[name="dev"].user.client-key: not set (client-certificate needs a key)`.
 * May use gate/; libyaml. */
#ifndef GP_K8S_KUBECONFIG_H
#define GP_K8S_KUBECONFIG_H

#include <stddef.h>

#include "gate/error.h"

/* The service account directory of a pod. A test build (GP_TEST_HOOKS)
 * reads it from $GP_TEST_SA_DIR when that is set (gp_k8s_conf_load). */
#define GP_K8S_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* A kubeconfig, or a token file, larger than this is refused. */
#define GP_K8S_MAX_KUBECONFIG (1024 * 1024)

typedef struct gp_k8s_conf {
        char *server;  /* "https://host:port", without a trailing '/' */
        char *ns;      /* the context's namespace, or the pod's; NULL: none */
        char *ca_data; /* PEM bytes of the cluster CA (certificate-authority-data) */
        size_t ca_len;
        char *ca_file;    /* or a PEM file; neither: the system's CAs */
        char *token;      /* a bearer token as written in the kubeconfig */
        char *token_file; /* or a file holding it (re-read: k8s/client.c) */
        char *cert_data;  /* client certificate, PEM bytes or file */
        size_t cert_len;
        char *cert_file;
        char *key_data; /* its private key, PEM bytes or file */
        size_t key_len;
        char *key_file;
        char source[320]; /* for messages: "kubeconfig PATH (context C)",
                           * "in-cluster (service account DIR)" */
} gp_k8s_conf_t;

/* Parses a kubeconfig held in buf (need not be NUL-terminated) and picks
 * its current-context. dir (may be NULL) resolves relative file paths;
 * name stands for the file in source and in errors. NULL with
 * "<field>: <reason>" in err. Also the entry point of the fuzz target. */
gp_k8s_conf_t *gp_k8s_kubeconfig_parse(const char *buf, size_t len, const char *name,
                                       const char *dir, gp_err_t *err);

/* Reads and parses a kubeconfig file: path, or when NULL or "" the first
 * entry of $KUBECONFIG, else ~/.kube/config. */
gp_k8s_conf_t *gp_k8s_kubeconfig_load(const char *path, gp_err_t *err);

/* The in-cluster configuration from host and port (the values of
 * KUBERNETES_SERVICE_HOST and _PORT; an IPv6 address is bracketed) and a
 * service account directory (GP_K8S_SA_DIR in a pod), whose ca.crt and
 * token must be readable; its namespace file is optional. */
gp_k8s_conf_t *gp_k8s_incluster_load(const char *host, const char *port, const char *sa_dir,
                                     gp_err_t *err);

/* The configuration to use: kubeconfig when given; else in-cluster when
 * KUBERNETES_SERVICE_HOST is set; else $KUBECONFIG or ~/.kube/config. */
gp_k8s_conf_t *gp_k8s_conf_load(const char *kubeconfig, gp_err_t *err);

void gp_k8s_conf_destroy(gp_k8s_conf_t *conf);

/* Decodes standard base64 (padding optional, whitespace ignored) into a
 * malloc'd buffer with a NUL after the *outlen bytes. 0, or -1 on a bad
 * character or length (or no memory). */
int gp_k8s_base64_decode(const char *in, size_t len, char **out, size_t *outlen);

/* Object names: a ConfigMap name is a DNS subdomain (lower-case letters,
 * digits, '-' and '.', at most 253), a namespace a DNS label (lower-case
 * letters, digits and '-', at most 63). 1 when s is valid. Names pass
 * these checks before they go into a URL, so no escaping is needed. */
int gp_k8s_name_ok(const char *s);
int gp_k8s_namespace_ok(const char *s);

#endif
