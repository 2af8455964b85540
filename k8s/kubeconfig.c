/* k8s/kubeconfig.c: kubeconfig (libyaml) and in-cluster configuration.
 *
 * The YAML is loaded into libyaml's document tree and walked along fixed
 * paths (never recursively, so an alias cycle cannot loop us). Values are
 * taken as strings, as Kubernetes' own loader does. May use gate/;
 * libyaml; no libcurl here. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "os/file.h"
#include "k8s/kubeconfig.h"

/* A configuration that cannot be used: NULL. */
__attribute__((format(printf, 2, 3))) static void *fail(gp_err_t *err, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_err_vset(err, GP_ERR_INVALID, fmt, ap);
        va_end(ap);
        return NULL;
}

static void *nomem(gp_err_t *err) {
        gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        return NULL;
}

void gp_k8s_conf_destroy(gp_k8s_conf_t *c) {
        if (!c)
                return;
        free(c->server);
        free(c->ns);
        free(c->ca_data);
        free(c->ca_file);
        if (c->token) /* a secret: do not leave it in freed memory */
                memset(c->token, 0, strlen(c->token));
        free(c->token);
        free(c->token_file);
        free(c->cert_data);
        free(c->cert_file);
        if (c->key_data)
                memset(c->key_data, 0, c->key_len);
        free(c->key_data);
        free(c->key_file);
        free(c);
}

/* ---- names ------------------------------------------------------------- */

static int dns_ok(const char *s, size_t max, int dots) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n > max)
                return 0;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                if (alnum)
                        continue;
                if (c == '-' && i > 0 && i + 1 < n && s[i - 1] != '.' && s[i + 1] != '.')
                        continue;
                if (dots && c == '.' && i > 0 && i + 1 < n && s[i - 1] != '.' &&
                    s[i - 1] != '-')
                        continue;
                return 0;
        }
        return 1;
}

int gp_k8s_name_ok(const char *s) {
        return dns_ok(s, 253, 1);
}

int gp_k8s_namespace_ok(const char *s) {
        return dns_ok(s, 63, 0);
}

/* ---- base64 ------------------------------------------------------------- */

static int b64val(unsigned char c) {
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int gp_k8s_base64_decode(const char *in, size_t len, char **out, size_t *outlen) {
        char *buf;
        size_t o = 0, pad = 0, digits = 0;
        unsigned acc = 0;
        *out = NULL;
        *outlen = 0;
        if (!(buf = malloc(len / 4 * 3 + 4)))
                return -1;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)in[i];
                if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                if (c == '=') {
                        pad++;
                        continue;
                }
                int v = b64val(c);
                if (v < 0 || pad) /* a bad character, or data after padding */
                        goto bad;
                acc = (acc << 6) | (unsigned)v;
                if (++digits % 4 == 0) {
                        buf[o++] = (char)(acc >> 16);
                        buf[o++] = (char)(acc >> 8);
                        buf[o++] = (char)acc;
                        acc = 0;
                }
        }
        switch (digits % 4) {
        case 0:
                if (pad)
                        goto bad;
                break;
        case 1:
                goto bad;
        case 2: /* one byte; 4 spare bits must be zero */
                if (pad > 2 || (pad && pad != 2) || (acc & 0xf))
                        goto bad;
                buf[o++] = (char)(acc >> 4);
                break;
        case 3: /* two bytes; 2 spare bits */
                if (pad > 1 || (acc & 0x3))
                        goto bad;
                buf[o++] = (char)(acc >> 10);
                buf[o++] = (char)(acc >> 2);
                break;
        }
        buf[o] = '\0';
        *out = buf;
        *outlen = o;
        return 0;
bad:
        free(buf);
        return -1;
}

/* ---- YAML tree helpers ------------------------------------------------- */

typedef struct {
        yaml_document_t *d;
        gp_err_t *err;
} walk_t;

static int scalar_is(const yaml_node_t *n, const char *s) {
        size_t l = strlen(s);
        return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == l &&
               !memcmp(n->data.scalar.value, s, l);
}

/* A plain scalar that YAML reads as null: "", "~", "null". */
static int is_null(const yaml_node_t *n) {
        if (!n)
                return 1;
        if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return 0;
        return n->data.scalar.length == 0 || scalar_is(n, "~") || scalar_is(n, "null") ||
               scalar_is(n, "Null") || scalar_is(n, "NULL");
}

static yaml_node_t *map_get(walk_t *w, yaml_node_t *map, const char *key) {
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
             p < map->data.mapping.pairs.top; p++)
                if (scalar_is(yaml_document_get_node(w->d, p->key), key))
                        return yaml_document_get_node(w->d, p->value);
        return NULL;
}

/* key's value in map as a string: 1 (set, *out malloc'd), 0 (absent or
 * null), -1 (not a string; err names where.key). */
static int get_str(walk_t *w, yaml_node_t *map, const char *where, const char *key,
                   char **out) {
        yaml_node_t *n = map_get(w, map, key);
        *out = NULL;
        if (is_null(n))
                return 0;
        if (n->type != YAML_SCALAR_NODE) {
                fail(w->err, "%s.%s: not a string", where, key);
                return -1;
        }
        if (memchr(n->data.scalar.value, '\0', n->data.scalar.length)) {
                fail(w->err, "%s.%s: contains a NUL byte", where, key);
                return -1;
        }
        if (!(*out = strndup((const char *)n->data.scalar.value, n->data.scalar.length))) {
                nomem(w->err);
                return -1;
        }
        return 1;
}

/* The entry of list (clusters, contexts, users) whose name is name; its
 * member `inner` (cluster, context, user) must be a mapping. */
static yaml_node_t *find_named(walk_t *w, yaml_node_t *root, const char *list,
                               const char *name, const char *inner, const char *why) {
        yaml_node_t *seq = map_get(w, root, list);
        if (seq && !is_null(seq) && seq->type != YAML_SEQUENCE_NODE)
                return fail(w->err, "%s: not a list", list);
        if (seq && seq->type == YAML_SEQUENCE_NODE) {
                for (yaml_node_item_t *it = seq->data.sequence.items.start;
                     it < seq->data.sequence.items.top; it++) {
                        yaml_node_t *e = yaml_document_get_node(w->d, *it);
                        if (!e || e->type != YAML_MAPPING_NODE ||
                            !scalar_is(map_get(w, e, "name"), name))
                                continue;
                        yaml_node_t *m = map_get(w, e, inner);
                        if (!m || m->type != YAML_MAPPING_NODE)
                                return fail(w->err,
                                            "%s[name=\"%.100s\"].%s: not set or not a mapping",
                                            list, name, inner);
                        return m;
                }
        }
        return fail(w->err, "%s[name=\"%.100s\"]: not found (named by %s)", list, name, why);
}

/* dir/p for a relative p; a copy of p otherwise. */
static char *resolve(const char *dir, const char *p) {
        char *out;
        if (p[0] == '/' || !dir || !*dir)
                return strdup(p);
        size_t n = strlen(dir) + strlen(p) + 2;
        if ((out = malloc(n)))
                snprintf(out, n, "%s/%s", dir, p);
        return out;
}

/* A "-data" (base64) or file field pair: data wins, as in client-go. */
static int data_or_file(walk_t *w, yaml_node_t *m, const char *where, const char *field,
                        const char *dir, char **data, size_t *len, char **file) {
        char key[64], *s = NULL;
        int rc;
        snprintf(key, sizeof(key), "%s-data", field);
        if ((rc = get_str(w, m, where, key, &s)) < 0)
                return -1;
        if (rc) {
                int bad = gp_k8s_base64_decode(s, strlen(s), data, len);
                free(s);
                if (bad) {
                        fail(w->err, "%s.%s: not valid base64", where, key);
                        return -1;
                }
                if (*len == 0) {
                        fail(w->err, "%s.%s: empty", where, key);
                        return -1;
                }
                return 1;
        }
        if ((rc = get_str(w, m, where, field, &s)) <= 0)
                return rc;
        *file = resolve(dir, s);
        free(s);
        if (!*file) {
                nomem(w->err);
                return -1;
        }
        return 1;
}

/* YAML booleans that mean true (YAML 1.1 and 1.2 spellings). */
static int yaml_true(const char *s) {
        static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                        "on",   "On",   "ON",   "y",   "Y"};
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (!strcmp(s, t[i]))
                        return 1;
        return 0;
}

static int server_ok(const char *s) {
        if (strncmp(s, "https://", 8) || !s[8] || s[8] == '/')
                return 0;
        for (const char *p = s; *p; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                        return 0;
        return 1;
}

/* ---- kubeconfig -------------------------------------------------------- */

static gp_k8s_conf_t *walk(walk_t *w, const char *name, const char *dir) {
        yaml_node_t *root = yaml_document_get_root_node(w->d);
        gp_k8s_conf_t *c = NULL;
        char *ctx = NULL, *cluster = NULL, *user = NULL, *s = NULL;
        char cwhere[160], uwhere[160], xwhere[160], why[200];
        int rc;

        if (!root || is_null(root))
                return fail(w->err, "kubeconfig: empty document");
        if (root->type != YAML_MAPPING_NODE)
                return fail(w->err, "kubeconfig: not a YAML mapping");
        if (!(c = calloc(1, sizeof(*c))))
                return nomem(w->err);
        if ((rc = get_str(w, root, "kubeconfig", "current-context", &ctx)) < 0)
                goto bad;
        if (!rc || !*ctx) {
                fail(w->err, "current-context: not set");
                goto bad;
        }
        snprintf(xwhere, sizeof(xwhere), "contexts[name=\"%.100s\"].context", ctx);
        yaml_node_t *cx = find_named(w, root, "contexts", ctx, "context", "current-context");
        if (!cx)
                goto bad;
        if ((rc = get_str(w, cx, xwhere, "cluster", &cluster)) < 0)
                goto bad;
        if (!rc || !*cluster) {
                fail(w->err, "%s.cluster: not set", xwhere);
                goto bad;
        }
        if ((rc = get_str(w, cx, xwhere, "user", &user)) < 0)
                goto bad;
        if (!rc || !*user) {
                fail(w->err, "%s.user: not set", xwhere);
                goto bad;
        }
        if (get_str(w, cx, xwhere, "namespace", &c->ns) < 0)
                goto bad;
        if (c->ns && !*c->ns) {
                free(c->ns);
                c->ns = NULL;
        }

        /* The cluster. */
        snprintf(why, sizeof(why), "%s.cluster", xwhere);
        yaml_node_t *cl = find_named(w, root, "clusters", cluster, "cluster", why);
        if (!cl)
                goto bad;
        snprintf(cwhere, sizeof(cwhere), "clusters[name=\"%.100s\"].cluster", cluster);
        if ((rc = get_str(w, cl, cwhere, "server", &c->server)) < 0)
                goto bad;
        if (!rc) {
                fail(w->err, "%s.server: not set", cwhere);
                goto bad;
        }
        if (!server_ok(c->server)) {
                fail(w->err, "%s.server: \"%.100s\" is not an https:// URL (TLS is required)",
                     cwhere, c->server);
                goto bad;
        }
        size_t sl = strlen(c->server);
        while (sl > 8 && c->server[sl - 1] == '/')
                c->server[--sl] = '\0';
        if ((rc = get_str(w, cl, cwhere, "insecure-skip-tls-verify", &s)) < 0)
                goto bad;
        if (rc && yaml_true(s)) {
                fail(w->err,
                     "%s.insecure-skip-tls-verify: not supported (TLS verification is "
                     "always on; give the cluster's CA instead)",
                     cwhere);
                goto bad;
        }
        free(s);
        s = NULL;
        if (map_get(w, cl, "proxy-url")) {
                fail(w->err, "%s.proxy-url: not supported", cwhere);
                goto bad;
        }
        if (data_or_file(w, cl, cwhere, "certificate-authority", dir, &c->ca_data, &c->ca_len,
                         &c->ca_file) < 0)
                goto bad;

        /* The user. */
        snprintf(why, sizeof(why), "%s.user", xwhere);
        yaml_node_t *us = find_named(w, root, "users", user, "user", why);
        if (!us)
                goto bad;
        snprintf(uwhere, sizeof(uwhere), "users[name=\"%.100s\"].user", user);
        static const char *const unsupported[] = {"exec", "auth-provider", "username",
                                                  "password"};
        for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
                if (!is_null(map_get(w, us, unsupported[i]))) {
                        fail(w->err,
                             "%s.%s: not supported (use token, tokenFile or "
                             "client-certificate and client-key)",
                             uwhere, unsupported[i]);
                        goto bad;
                }
        if (get_str(w, us, uwhere, "token", &c->token) < 0)
                goto bad;
        if (c->token && !*c->token) {
                free(c->token);
                c->token = NULL;
        }
        if ((rc = get_str(w, us, uwhere, "tokenFile", &s)) < 0)
                goto bad;
        if (rc && !c->token) { /* token wins over tokenFile, as in client-go */
                if (!(c->token_file = resolve(dir, s))) {
                        nomem(w->err);
                        goto bad;
                }
        }
        free(s);
        s = NULL;
        int has_cert = data_or_file(w, us, uwhere, "client-certificate", dir, &c->cert_data,
                                    &c->cert_len, &c->cert_file);
        if (has_cert < 0)
                goto bad;
        int has_key = data_or_file(w, us, uwhere, "client-key", dir, &c->key_data, &c->key_len,
                                   &c->key_file);
        if (has_key < 0)
                goto bad;
        if (has_cert && !has_key) {
                fail(w->err, "%s.client-key: not set (client-certificate needs a key)",
                     uwhere);
                goto bad;
        }
        if (has_key && !has_cert) {
                fail(w->err, "%s.client-certificate: not set (client-key needs a certificate)",
                     uwhere);
                goto bad;
        }
        if (!c->token && !c->token_file && !has_cert) {
                fail(w->err,
                     "%s: no credentials (token, tokenFile, or client-certificate and "
                     "client-key)",
                     uwhere);
                goto bad;
        }
        snprintf(c->source, sizeof(c->source), "kubeconfig %.200s (context %.80s)",
                 name ? name : "(buffer)", ctx);
        free(ctx);
        free(cluster);
        free(user);
        return c;
bad:
        free(s);
        free(ctx);
        free(cluster);
        free(user);
        gp_k8s_conf_destroy(c);
        return NULL;
}

gp_k8s_conf_t *gp_k8s_kubeconfig_parse(const char *buf, size_t len, const char *name,
                                       const char *dir, gp_err_t *err) {
        yaml_parser_t parser;
        yaml_document_t doc;
        gp_k8s_conf_t *c;
        if (len > GP_K8S_MAX_KUBECONFIG)
                return fail(err, "kubeconfig: larger than 1 MiB");
        if (!yaml_parser_initialize(&parser))
                return nomem(err);
        yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
        if (!yaml_parser_load(&parser, &doc)) {
                fail(err, "kubeconfig: YAML error at line %lu column %lu: %s%s%s",
                     (unsigned long)parser.problem_mark.line + 1,
                     (unsigned long)parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "unknown", parser.context ? " " : "",
                     parser.context ? parser.context : "");
                yaml_parser_delete(&parser);
                return NULL;
        }
        walk_t w = {&doc, err};
        c = walk(&w, name, dir);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return c;
}

gp_k8s_conf_t *gp_k8s_kubeconfig_load(const char *path, gp_err_t *err) {
        char def[4096], first[4096], dir[4096];
        size_t len;
        if (!path || !*path) {
                const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
                if (env && *env) {
                        /* The first entry of a ':'-separated list. */
                        while (*env == ':')
                                env++;
                        size_t n = strcspn(env, ":");
                        snprintf(first, sizeof(first), "%.*s", (int)n, env);
                        path = first;
                }
                if (!path || !*path) {
                        if (!home || !*home)
                                return fail(err,
                                            "no kubeconfig: KUBECONFIG and HOME are not set "
                                            "(give control.k8s.kubeconfig)");
                        snprintf(def, sizeof(def), "%s/.kube/config", home);
                        path = def;
                }
        }
        char *buf = gp_file_read(path, GP_K8S_MAX_KUBECONFIG, &len, err);
        if (!buf)
                return NULL;
        /* Relative paths in it are relative to its directory. */
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == dir)
                dir[1] = '\0';
        else
                *slash = '\0';
        gp_k8s_conf_t *c = gp_k8s_kubeconfig_parse(buf, len, path, dir, err);
        free(buf);
        if (!c)
                gp_err_prefix(err, "%s", path);
        return c;
}

gp_k8s_conf_t *gp_k8s_incluster_load(const char *host, const char *port, const char *sa_dir,
                                     gp_err_t *err) {
        gp_k8s_conf_t *c;
        char path[4200];
        size_t len;
        if (!host || !*host || !port || !*port)
                return fail(err,
                            "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT: not set "
                            "(not in a pod? give control.k8s.kubeconfig)");
        size_t pl = strlen(port);
        long pn =
                pl && pl <= 5 && strspn(port, "0123456789") == pl ? strtol(port, NULL, 10) : 0;
        if (pn < 1 || pn > 65535)
                return fail(err, "KUBERNETES_SERVICE_PORT: \"%.20s\" is not a port", port);
        for (const char *p = host; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == ':' ||
                      *p == '%'))
                        return fail(err,
                                    "KUBERNETES_SERVICE_HOST: \"%.100s\" is not a host name "
                                    "or address",
                                    host);
        if (!(c = calloc(1, sizeof(*c))))
                return nomem(err);
        size_t n = strlen(host) + pl + 16;
        if (!(c->server = malloc(n)))
                goto nomem;
        if (strchr(host, ':')) /* IPv6 */
                snprintf(c->server, n, "https://[%s]:%s", host, port);
        else
                snprintf(c->server, n, "https://%s:%s", host, port);
        snprintf(path, sizeof(path), "%s/ca.crt", sa_dir);
        if (access(path, R_OK)) {
                fail(err, "%s: %s", path, strerror(errno));
                goto bad;
        }
        if (!(c->ca_file = strdup(path)))
                goto nomem;
        snprintf(path, sizeof(path), "%s/token", sa_dir);
        if (access(path, R_OK)) {
                fail(err, "%s: %s", path, strerror(errno));
                goto bad;
        }
        if (!(c->token_file = strdup(path)))
                goto nomem;
        snprintf(path, sizeof(path), "%s/namespace", sa_dir);
        char *ns = gp_file_read(path, 4096, &len, NULL);
        if (ns) {
                while (len &&
                       (ns[len - 1] == '\n' || ns[len - 1] == '\r' || ns[len - 1] == ' '))
                        ns[--len] = '\0';
                if (len)
                        c->ns = ns;
                else
                        free(ns);
        }
        snprintf(c->source, sizeof(c->source), "in-cluster (service account %.200s)", sa_dir);
        return c;
nomem:
        nomem(err);
bad:
        gp_k8s_conf_destroy(c);
        return NULL;
}

/* Where a pod's service account files are: GP_K8S_SA_DIR. A test build
 * (GP_TEST_HOOKS) takes $GP_TEST_SA_DIR instead when it is set, so that a
 * test can play the pod; a release build has no such override. */
static const char *pod_sa_dir(void) {
#ifdef GP_TEST_HOOKS
        const char *d = getenv("GP_TEST_SA_DIR");
        if (d && *d)
                return d;
#endif
        return GP_K8S_SA_DIR;
}

gp_k8s_conf_t *gp_k8s_conf_load(const char *kubeconfig, gp_err_t *err) {
        if (kubeconfig && *kubeconfig)
                return gp_k8s_kubeconfig_load(kubeconfig, err);
        const char *host = getenv("KUBERNETES_SERVICE_HOST");
        if (host && *host)
                return gp_k8s_incluster_load(host, getenv("KUBERNETES_SERVICE_PORT"),
                                             pod_sa_dir(), err);
        return gp_k8s_kubeconfig_load(NULL, err);
}
