/* proxy/conf/conf.c: the configuration of one gate-proxy process: setting
 * one key (gp_conf_set), reading `key=value` files, init and destroy, and
 * the cross-field checks and derived values of gp_conf_finalize. The keys
 * themselves are the table of proxy/conf/keys.c.
 * Uses librdkafka only to ask whether it takes a kafka.* property, so its
 * refusal names the line; the kafka.* keys are kept as plain strings and
 * applied by proxy/loop/kafka_clients.c. */
#include "proxy/conf/conf.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "os/file.h"
#include "gate/timeparse.h"
#include "proxy/conf/table.h"

#define KAFKA_PREFIX     "kafka."
#define KAFKA_PREFIX_LEN (sizeof(KAFKA_PREFIX) - 1)

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */

/* A setting that cannot be used: GP_ERR_INVALID, "where: key: reason". */
__attribute__((format(printf, 2, 3))) static gp_errcode_t bad(gp_err_t *err, const char *fmt,
                                                              ...) {
        va_list ap;
        va_start(ap, fmt);
        gp_err_vset(err, GP_ERR_INVALID, fmt, ap);
        va_end(ap);
        return GP_ERR_INVALID;
}

/* Running out of memory is an error like the others (GP_ERR_NOMEM): the
 * caller decides whether the process goes on. */
static gp_errcode_t nomem(gp_err_t *err) {
        return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
}

/* The table's check of key, on a value that may have been assigned
 * directly; "key: reason" in err. */
static gp_errcode_t recheck(const char *key, const char *v, gp_err_t *err) {
        gp_errcode_t rc = gp_conf_find_prop(key)->check(v, err);
        if (rc != GP_OK)
                gp_err_prefix(err, "%s", key);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Setting one key                                                     */

/* "expected an integer between 10 and 60000 ms" */
static gp_errcode_t int_reason(const prop_t *p, gp_err_t *err) {
        if (p->minus1)
                return gp_err_set(err, GP_ERR_INVALID,
                                  "expected -1 (broker default) or an integer between %lld "
                                  "and %lld",
                                  (long long)p->min, (long long)p->max);
        return gp_err_set(err, GP_ERR_INVALID, "expected an integer between %lld and %lld%s",
                          (long long)p->min, (long long)p->max, p->type == PT_MS ? " ms" : "");
}

static gp_errcode_t enum_reason(const prop_t *p, gp_err_t *err) {
        char buf[512];
        size_t o = (size_t)snprintf(buf, sizeof buf, "expected one of ");
        for (int i = 0; p->words[i] && o < sizeof buf; i++)
                o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? ", " : "",
                                      p->words[i]);
        return gp_err_set(err, GP_ERR_INVALID, "%s", buf);
}

/* The slot keeps its old value when there is no memory for the new. */
static gp_errcode_t store_str(gp_conf_t *conf, const prop_t *p, const char *value,
                              gp_err_t *err) {
        char **slot = (char **)(void *)((char *)conf + p->off);
        char *copy = strdup(value);
        if (!copy)
                return nomem(err);
        free(*slot);
        *slot = copy;
        return GP_OK;
}

/* Parses and stores value; the reason alone (no origin, no key) in err. */
static gp_errcode_t prop_set(gp_conf_t *conf, const prop_t *p, const char *value,
                             gp_err_t *err) {
        int64_t v;
        const char *perr;
        gp_errcode_t rc;
        switch (p->type) {
        case PT_STR:
                if ((rc = p->check(value, err)) != GP_OK)
                        return rc;
                return store_str(conf, p, value, err);
        case PT_BOOL: {
                bool b;
                if (strcmp(value, "true") == 0)
                        b = true;
                else if (strcmp(value, "false") == 0)
                        b = false;
                else
                        return gp_err_set(err, GP_ERR_INVALID, "expected true or false");
                assert(p->size == sizeof b);
                memcpy((char *)conf + p->off, &b, sizeof b);
                return GP_OK;
        }
        case PT_INT:
        case PT_MS:
                if (gp_parse_i64(value, strlen(value), &v, &perr) != 0 ||
                    !((v >= p->min && v <= p->max) || (p->minus1 && v == -1)))
                        return int_reason(p, err);
                if (p->size == sizeof(int64_t)) {
                        memcpy((char *)conf + p->off, &v, sizeof v);
                } else {
                        int iv = (int)v; /* the bounds keep it in range */
                        assert(p->size == sizeof iv);
                        memcpy((char *)conf + p->off, &iv, sizeof iv);
                }
                return GP_OK;
        case PT_ENUM:
                for (int i = 0; p->words[i]; i++) {
                        if (strcmp(p->words[i], value) != 0)
                                continue;
                        if (!p->set_enum)
                                return store_str(conf, p, value, err);
                        p->set_enum(conf, i);
                        return GP_OK;
                }
                return enum_reason(p, err);
        }
        return gp_err_set(err, GP_ERR_FAIL, "internal error: unknown type");
}

/* Optimal string alignment distance (a swap of two neighbours costs 1).
 * b is a table key, shorter than 64 bytes. */
static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        size_t r0[64] = {0}, r1[64], r2[64];
        if (lb >= 64)
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                r1[j] = j;
        for (size_t i = 1; i <= la; i++) {
                r2[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = a[i - 1] != b[j - 1];
                        size_t d = r1[j] + 1;
                        if (r2[j - 1] + 1 < d)
                                d = r2[j - 1] + 1;
                        if (r1[j - 1] + cost < d)
                                d = r1[j - 1] + cost;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            r0[j - 2] + 1 < d)
                                d = r0[j - 2] + 1;
                        r2[j] = d;
                }
                memcpy(r0, r1, sizeof r0);
                memcpy(r1, r2, sizeof r1);
        }
        return r1[lb];
}

/* The closest table key: same letters in another case, edit distance <= 2,
 * or one a prefix of the other (the shorter at least 6 bytes; the closer
 * in length wins, so gate.lateness suggests gate.lateness.ms, not
 * gate.late). Ties go to the earlier key in the table. */
static const char *suggest(const char *key) {
        size_t klen = strlen(key), best_score = SIZE_MAX;
        const char *best = NULL;
        for (size_t i = 0; i < gp_conf_n_props; i++) {
                const char *name = gp_conf_props[i].name;
                size_t nlen = strlen(name), score = SIZE_MAX, d;
                size_t shorter = klen < nlen ? klen : nlen;
                size_t diff = klen > nlen ? klen - nlen : nlen - klen;
                if (strcasecmp(key, name) == 0)
                        score = 0;
                else if (diff <= 2 && (d = edit_distance(key, name)) <= 2)
                        score = d;
                else if (shorter >= 6 && strncmp(key, name, shorter) == 0)
                        score = 3 + diff;
                if (score < best_score) {
                        best_score = score;
                        best = name;
                }
        }
        return best;
}

static gp_errcode_t set_kafka(gp_conf_t *conf, const char *key, const char *value,
                              const char *origin, gp_err_t *err) {
        const char *kname = key + KAFKA_PREFIX_LEN;
        const char *reason;
        char b[80];
        if (*kname == '\0')
                return bad(err,
                           "%s: %s: expected a librdkafka property after kafka., e.g. "
                           "kafka.bootstrap.servers",
                           origin, key);
        /* kafka.producer.X and kafka.consumer.X are X for one client. */
        const char *bare = kname;
        if (!strncmp(bare, "producer.", 9) || !strncmp(bare, "consumer.", 9))
                bare += 9;
        if ((reason = gp_conf_reserved(bare)))
                return bad(err, "%s: %s: %s", origin, key, reason);
        for (const char *p = kname; *p; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                        return bad(err,
                                   "%s: %s: expected a librdkafka property name "
                                   "(printable, no spaces)",
                                   origin, gp_conf_shown(key, strlen(key), b, sizeof b));
        /* librdkafka's own check, here, so its refusal names the line. */
        rd_kafka_conf_t *probe = rd_kafka_conf_new();
        char why[512];
        if (!probe)
                return nomem(err);
        rd_kafka_conf_res_t res = rd_kafka_conf_set(probe, bare, value, why, sizeof why);
        rd_kafka_conf_destroy(probe);
        if (res != RD_KAFKA_CONF_OK)
                return bad(err, "%s: %s: %s", origin, key, why);
        /* The copies first: without memory for them the key keeps its
         * earlier setting, or stays unset. */
        gp_conf_kv_t kv = {.value = strdup(value), .origin = strdup(origin)};
        int i = 0;
        while (i < conf->n_kafka && strcmp(conf->kafka[i].key, kname) != 0)
                i++;
        if (kv.value && kv.origin && i == conf->n_kafka) {
                gp_conf_kv_t *grown = realloc(conf->kafka, (size_t)(conf->n_kafka + 1) *
                                                                   sizeof *conf->kafka);
                if (grown)
                        conf->kafka = grown;
                kv.key = grown ? strdup(kname) : NULL;
        }
        if (!kv.value || !kv.origin || (i == conf->n_kafka && !kv.key)) {
                free(kv.key);
                free(kv.value);
                free(kv.origin);
                return nomem(err);
        }
        if (i == conf->n_kafka) {
                conf->kafka[conf->n_kafka++] = kv;
                return GP_OK;
        }
        free(conf->kafka[i].value);
        free(conf->kafka[i].origin);
        conf->kafka[i].value = kv.value;
        conf->kafka[i].origin = kv.origin;
        return GP_OK;
}

gp_errcode_t gp_conf_set(gp_conf_t *conf, const char *key, const char *value,
                         const char *origin, gp_err_t *err) {
        const prop_t *p;
        char b[80];
        gp_err_t why;
        gp_errcode_t rc;
        if (!origin)
                origin = "-X";
        if (!key || !value)
                return bad(err, "%s: expected key=value", origin);
        if (strncmp(key, KAFKA_PREFIX, KAFKA_PREFIX_LEN) == 0)
                return set_kafka(conf, key, value, origin, err);
        p = gp_conf_find_prop(key);
        if (!p) {
                const char *near = suggest(key);
                const char *k = gp_conf_shown(key, strlen(key), b, sizeof b);
                if (near)
                        return bad(err, "%s: %s: unknown key; did you mean %s?", origin, k,
                                   near);
                if (strncmp(key, "gate.", 5) != 0 && strncmp(key, "control.", 8) != 0 &&
                    strncmp(key, "log.", 4) != 0 && strncmp(key, "schema.registry.", 16) != 0)
                        return bad(err,
                                   "%s: %s: unknown key (librdkafka properties are "
                                   "written kafka.<property>)",
                                   origin, k);
                return bad(err,
                           "%s: %s: unknown key; gate-proxy --list-config lists every key",
                           origin, k);
        }
        /* Where it is set, before the value: without memory for it the key
         * keeps its earlier value. */
        char *at = strdup(origin);
        if (!at || (!conf->prop_origin &&
                    !(conf->prop_origin = calloc(gp_conf_n_props, sizeof(char *))))) {
                free(at);
                return nomem(err);
        }
        if ((rc = prop_set(conf, p, value, &why)) != GP_OK) {
                bool quoted = value[0] == '"' || value[0] == '\'';
                free(at);
                return gp_err_set(err, rc, "%s: %s: %s%s", origin, key, why.msg,
                                  rc == GP_ERR_INVALID && quoted
                                          ? " (write values without quotes)"
                                          : "");
        }
        free(conf->prop_origin[p - gp_conf_props]);
        conf->prop_origin[p - gp_conf_props] = at;
        return GP_OK;
}

/* "path:line: " where key was set, "" where it was not (a default). */
static const char *where(const gp_conf_t *conf, const char *key, char *buf, size_t len) {
        const prop_t *p = gp_conf_find_prop(key);
        const char *o = p && conf->prop_origin ? conf->prop_origin[p - gp_conf_props] : NULL;
        snprintf(buf, len, "%s%s", o ? o : "", o ? ": " : "");
        return buf;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

gp_errcode_t gp_conf_load_buffer(gp_conf_t *conf, const char *name, const char *buf,
                                 size_t len, gp_err_t *err) {
        char line[GP_CONF_MAX_LINE + 1];
        char origin[600], b[80];
        size_t pos = 0;
        unsigned long lineno = 0;
        if (!name)
                name = "(buffer)";
        if (len > GP_CONF_MAX_FILE)
                return bad(err, "%s: file is larger than 1 MiB (%d bytes)", name,
                           GP_CONF_MAX_FILE);
        if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) /* UTF-8 byte order mark */
                pos = 3;
        while (pos < len) {
                const char *start = buf + pos;
                const char *nl = memchr(start, '\n', len - pos);
                size_t n = nl ? (size_t)(nl - start) : len - pos;
                pos += n + (nl ? 1 : 0);
                lineno++;
                snprintf(origin, sizeof origin, "%s:%lu", name, lineno);
                if (n > GP_CONF_MAX_LINE)
                        return bad(err, "%s: line is longer than %d bytes", origin,
                                   GP_CONF_MAX_LINE);
                if (memchr(start, '\0', n))
                        return bad(err, "%s: line contains a NUL byte", origin);
                memcpy(line, start, n);
                line[n] = '\0';

                char *s = line, *e = line + n;
                while (s < e && gp_conf_is_space(*s))
                        s++;
                while (e > s && gp_conf_is_space(e[-1]))
                        e--;
                *e = '\0';
                if (s == e || *s == '#')
                        continue;
                char *eq = strchr(s, '=');
                char *ke = eq;
                while (ke && ke > s && gp_conf_is_space(ke[-1]))
                        ke--;
                if (!eq || ke == s)
                        return bad(err, "%s: %s: expected key=value", origin,
                                   gp_conf_shown(s, (size_t)(e - s), b, sizeof b));
                *ke = '\0';
                char *v = eq + 1;
                while (*v && gp_conf_is_space(*v))
                        v++;
                gp_errcode_t rc = gp_conf_set(conf, s, v, origin, err);
                if (rc != GP_OK)
                        return rc;
        }
        return GP_OK;
}

gp_errcode_t gp_conf_load_file(gp_conf_t *conf, const char *path, gp_err_t *err) {
        gp_err_t why;
        size_t n;
        char *buf = gp_file_read(path, GP_CONF_MAX_FILE, &n, &why);
        if (!buf) {
                int e = errno;
                if (why.code == GP_ERR_NOMEM)
                        return gp_err_set(err, GP_ERR_NOMEM, "%s: out of memory", path);
                if (e == EFBIG)
                        return gp_err_set(err, GP_ERR_INVALID,
                                          "%s: file is larger than 1 MiB (%d bytes)", path,
                                          GP_CONF_MAX_FILE);
                return gp_err_set(err, GP_ERR_IO, "%s: cannot %s: %s", path,
                                  e == EISDIR ? "read" : "open", strerror(e));
        }
        gp_errcode_t rc = gp_conf_load_buffer(conf, path, buf, n, err);
        free(buf);
        return rc;
}

/* ------------------------------------------------------------------ */
/* init, destroy                                                       */

gp_errcode_t gp_conf_init(gp_conf_t *conf) {
        gp_err_t why;
        memset(conf, 0, sizeof *conf);
        for (size_t i = 0; i < gp_conf_n_props; i++) {
                const prop_t *p = &gp_conf_props[i];
                if (!p->def)
                        continue;
                /* Out of memory, or a default the table itself refuses (a
                 * bug here, which the unit tests catch): kept for
                 * gp_conf_finalize, for a caller that does not look. */
                gp_errcode_t rc = prop_set(conf, p, p->def, &why);
                if (rc != GP_OK) {
                        conf->init_rc = rc;
                        conf->init_key = p->name;
                        return rc;
                }
        }
        return GP_OK;
}

static void free_topics(gp_conf_t *conf) {
        for (int i = 0; i < conf->n_topics; i++) {
                free(conf->topics[i]);
                conf->topics[i] = NULL;
        }
        conf->n_topics = 0;
}

void gp_conf_destroy(gp_conf_t *conf) {
        if (!conf)
                return;
        for (size_t i = 0; i < gp_conf_n_props; i++) {
                const prop_t *p = &gp_conf_props[i];
                if (p->type == PT_STR || (p->type == PT_ENUM && !p->set_enum)) {
                        char **slot = (char **)(void *)((char *)conf + p->off);
                        free(*slot);
                        *slot = NULL;
                }
        }
        free_topics(conf);
        for (int i = 0; i < conf->n_kafka; i++) {
                free(conf->kafka[i].key);
                free(conf->kafka[i].value);
                free(conf->kafka[i].origin);
        }
        free(conf->kafka);
        if (conf->prop_origin)
                for (size_t i = 0; i < gp_conf_n_props; i++)
                        free(conf->prop_origin[i]);
        free(conf->prop_origin);
        memset(conf, 0, sizeof *conf);
}

/* ------------------------------------------------------------------ */
/* finalize                                                            */

gp_errcode_t gp_conf_topic_name(const gp_conf_t *conf, const char *tmpl, const char *topic,
                                char *buf, size_t len) {
        size_t o = 0;
        if (!buf || len == 0)
                return GP_ERR_INVALID;
        buf[0] = '\0';
        if (!tmpl)
                return GP_ERR_INVALID;
        for (const char *p = tmpl; *p;) {
                const char *rep = NULL;
                size_t skip = 0;
                if (strncmp(p, "{topic}", 7) == 0) {
                        rep = topic;
                        skip = 7;
                } else if (strncmp(p, "{pipeline}", 10) == 0) {
                        rep = conf ? conf->pipeline : NULL;
                        skip = 10;
                }
                if (skip) {
                        size_t n;
                        if (!rep)
                                goto fail;
                        n = strlen(rep);
                        if (n >= len - o)
                                goto fail;
                        memcpy(buf + o, rep, n);
                        o += n;
                        p += skip;
                } else {
                        if (len - o < 2)
                                goto fail;
                        buf[o++] = *p++;
                }
        }
        buf[o] = '\0';
        return GP_OK;
fail:
        buf[0] = '\0';
        return GP_ERR_INVALID;
}

/* Replaces {pipeline} in *slot, and checks the result's length. */
static gp_errcode_t expand_pipeline(gp_conf_t *conf, char **slot, const char *key, size_t max,
                                    gp_err_t *err) {
        char buf[1024];
        if (gp_conf_topic_name(conf, *slot, NULL, buf, sizeof buf) != 0 || strlen(buf) > max)
                return bad(err,
                           "%s: longer than %zu characters once {pipeline} "
                           "is replaced",
                           key, max);
        char *copy = strdup(buf);
        if (!copy)
                return nomem(err);
        free(*slot);
        *slot = copy;
        return GP_OK;
}

typedef struct {
        char name[TOPIC_MAX + 1];
} tname_t;

/* The colour topics of every source topic: valid, distinct from each
 * other, from the source topics and from the dead-letter topic. A clash
 * would route a record back into a source or mix the two jobs' inputs. */
static gp_errcode_t check_colour_names(const gp_conf_t *conf, gp_err_t *err) {
        static const char *const keys[2] = {"gate.topic.blue", "gate.topic.green"};
        static const char *const colours[2] = {"blue", "green"};
        const char *tmpls[2] = {conf->topic_blue, conf->topic_green};
        int n = conf->n_topics;
        gp_errcode_t rc = GP_ERR_INVALID;
        tname_t *names = calloc((size_t)(2 * n) + 1, sizeof *names);
        char big[1024];
        if (!names)
                return nomem(err);
        for (int c = 0; c < 2; c++) {
                for (int i = 0; i < n; i++) {
                        if (gp_conf_topic_name(conf, tmpls[c], conf->topics[i], big,
                                               sizeof big) != 0 ||
                            strlen(big) > TOPIC_MAX) {
                                bad(err,
                                    "%s: the name for topic %s is longer than %d "
                                    "characters",
                                    keys[c], conf->topics[i], TOPIC_MAX);
                                goto out;
                        }
                        if (!gp_conf_topic_name_ok(big, strlen(big))) {
                                bad(err, "%s: \"%s\" is not a valid topic name", keys[c], big);
                                goto out;
                        }
                        memcpy(names[c * n + i].name, big, strlen(big) + 1);
                }
        }
        for (int a = 0; a < 2 * n; a++) {
                const char *name = names[a].name;
                int ca = a / n, ia = a % n;
                for (int j = 0; j < n; j++) {
                        if (strcmp(name, conf->topics[j]) == 0) {
                                bad(err, "%s: \"%s\" (for %s) is also a source topic",
                                    keys[ca], name, conf->topics[ia]);
                                goto out;
                        }
                }
                if (strcmp(name, conf->dlq_topic) == 0) {
                        bad(err, "gate.dlq.topic: \"%s\" is also the %s topic of %s", name,
                            colours[ca], conf->topics[ia]);
                        goto out;
                }
                for (int b = 0; b < a; b++) {
                        if (strcmp(name, names[b].name) == 0) {
                                bad(err, "%s: \"%s\" (for %s) is also the %s topic of %s",
                                    keys[ca], name, conf->topics[ia], colours[b / n],
                                    conf->topics[b % n]);
                                goto out;
                        }
                }
        }
        rc = GP_OK;
out:
        free(names);
        return rc;
}

/* The value of kafka.KEY or kafka.ROLE.KEY for role, the last one set;
 * NULL when neither is. */
static const char *kafka_value(const gp_conf_t *conf, const char *role, const char *key) {
        const char *v = NULL;
        size_t rl = strlen(role);
        for (int i = 0; i < conf->n_kafka; i++) {
                const char *k = conf->kafka[i].key;
                if (!strncmp(k, role, rl) && k[rl] == '.')
                        k += rl + 1;
                if (!strcmp(k, key))
                        v = conf->kafka[i].value;
        }
        return v;
}

/* gate.instance from POD_NAME or the host name when empty; with
 * gate.membership=group the transactional id gets "-<instance>", and
 * transaction.timeout.ms must stay below session.timeout.ms. */
static gp_errcode_t derive_instance(gp_conf_t *conf, gp_err_t *err) {
        char host[256] = "";
        if (!conf->instance || !conf->instance[0]) {
                const char *pod = getenv("POD_NAME");
                if (pod && *pod)
                        snprintf(host, sizeof host, "%s", pod);
                else if (gethostname(host, sizeof host - 1))
                        snprintf(host, sizeof host, "%s", "gate-proxy");
                host[sizeof host - 1] = '\0';
                gp_err_t why;
                if (gp_conf_find_prop("gate.instance")->check(host, &why) != GP_OK)
                        return bad(err,
                                   "gate.instance: \"%.60s\" (from %s) cannot be used: %s; "
                                   "set gate.instance",
                                   host, pod && *pod ? "POD_NAME" : "the host name", why.msg);
                char *copy = strdup(host);
                if (!copy)
                        return nomem(err);
                free(conf->instance);
                conf->instance = copy;
        }
        if (conf->membership != GP_MEMBER_GROUP)
                return GP_OK;
        if (conf->delivery == GP_DELIVERY_EOS) {
                size_t n = strlen(conf->transactional_id) + strlen(conf->instance) + 2;
                if (n - 1 > ID_MAX)
                        return bad(err,
                                   "gate.transactional.id: longer than %d characters once "
                                   "\"-%s\" (gate.instance) is added",
                                   ID_MAX, conf->instance);
                char *id = malloc(n);
                if (!id)
                        return nomem(err);
                snprintf(id, n, "%s-%s", conf->transactional_id, conf->instance);
                free(conf->transactional_id);
                conf->transactional_id = id;
        }
        const char *tto = kafka_value(conf, "producer", "transaction.timeout.ms");
        const char *sto = kafka_value(conf, "consumer", "session.timeout.ms");
        long long t = tto ? strtoll(tto, NULL, 10) : GP_GROUP_TXN_TIMEOUT_MS;
        long long s = sto ? strtoll(sto, NULL, 10) : GP_GROUP_SESSION_TIMEOUT_MS;
        if (conf->delivery == GP_DELIVERY_EOS && t >= s)
                return bad(err,
                           "kafka.transaction.timeout.ms (%lld) must be below "
                           "kafka.session.timeout.ms (%lld) with gate.membership=group: "
                           "a crashed instance's open transaction must be aborted before "
                           "the group hands its partitions on",
                           t, s);
        return GP_OK;
}

gp_errcode_t gp_conf_finalize(gp_conf_t *conf, gp_err_t *err) {
        const gp_conf_kv_t *servers = NULL;
        gp_errcode_t rc;

        if (conf->init_rc != GP_OK)
                return gp_err_set(err, conf->init_rc, "%s: %s", conf->init_key,
                                  conf->init_rc == GP_ERR_NOMEM
                                          ? "out of memory"
                                          : "the table's default is refused");

        for (int i = 0; i < conf->n_kafka; i++) {
                const char *k = conf->kafka[i].key, *reason;
                if (!strncmp(k, "producer.", 9) || !strncmp(k, "consumer.", 9))
                        k += 9;
                if ((reason = gp_conf_reserved(k)))
                        return bad(err, "%s: kafka.%s: %s", conf->kafka[i].origin,
                                   conf->kafka[i].key, reason);
                if (strcmp(conf->kafka[i].key, "bootstrap.servers") == 0 ||
                    strcmp(conf->kafka[i].key, "metadata.broker.list") == 0)
                        servers = &conf->kafka[i];
        }
        /* Required keys, all of them in one message, in table order. */
        char missing[1024] = "";
        int n_missing = 0;
        for (size_t i = 0; i <= gp_conf_n_props; i++) {
                const char *name, *example;
                if (i == gp_conf_n_props) {
                        if (servers && servers->value[0])
                                continue;
                        name = "kafka.bootstrap.servers";
                        example = "localhost:9092";
                } else {
                        const prop_t *p = &gp_conf_props[i];
                        if (p->def || p->optional || *(char **)(void *)((char *)conf + p->off))
                                continue;
                        name = p->name;
                        example = p->example;
                }
                size_t ml = strlen(missing);
                snprintf(missing + ml, sizeof missing - ml, "%s  %s=%s", n_missing ? "\n" : "",
                         name, example);
                n_missing++;
        }
        if (n_missing)
                return bad(err, "%s not set; for example:\n%s",
                           n_missing == 1 ? "a required key is" : "required keys are",
                           missing);

        /* Values may have been assigned directly, not through
         * gp_conf_set: check the ones later code relies on again. */
        if (!conf->topic_blue || !conf->topic_green || !conf->dlq_topic ||
            !conf->transactional_id || !conf->group_id)
                return bad(err, "gp_conf_finalize: conf was not initialised");
        if ((rc = recheck("gate.pipeline", conf->pipeline, err)) != GP_OK ||
            (rc = recheck("gate.topic.blue", conf->topic_blue, err)) != GP_OK ||
            (rc = recheck("gate.topic.green", conf->topic_green, err)) != GP_OK)
                return rc;
        if (strcmp(conf->topic_blue, conf->topic_green) == 0)
                return bad(err,
                           "gate.topic.green: same as gate.topic.blue (\"%s\"); blue and "
                           "green need different topics",
                           conf->topic_green);
        if ((rc = recheck("gate.dlq.topic", conf->dlq_topic, err)) != GP_OK)
                return rc;

        /* Exactly one control backend. */
        if (!conf->control_file && !conf->k8s_configmap)
                return bad(err, "control.file or control.k8s.configmap: one is required (e.g. "
                                "control.file=/var/lib/gate-proxy/bluegreen.json, or "
                                "control.k8s.configmap=orders-configmap)");
        char at[620];
        if (conf->control_file && conf->k8s_configmap)
                return bad(err,
                           "%scontrol.k8s.configmap: control.file is set too (%s); set "
                           "only one of them",
                           where(conf, "control.k8s.configmap", at, sizeof at),
                           conf->prop_origin
                                   ? conf->prop_origin[gp_conf_find_prop("control.file") -
                                                       gp_conf_props]
                                   : "");
        if (!conf->k8s_configmap && (conf->k8s_namespace || conf->k8s_kubeconfig)) {
                const char *k = conf->k8s_namespace ? "control.k8s.namespace"
                                                    : "control.k8s.kubeconfig";
                return bad(err,
                           "%s%s: needs control.k8s.configmap (the map is in control.file)",
                           where(conf, k, at, sizeof at), k);
        }

        /* Avro: exactly one source of schemas; the rest only with avro:. */
        bool avro = strncmp(conf->event_time, "avro:", 5) == 0;
        if (avro && !conf->avro_schema && !conf->registry_url)
                return bad(err,
                           "gate.event-time: %s needs gate.avro.schema (plain Avro "
                           "values) or schema.registry.url (Confluent wire format)",
                           conf->event_time);
        if (avro && conf->avro_schema && conf->registry_url)
                return bad(err,
                           "%sschema.registry.url: gate.avro.schema is set too; set "
                           "gate.avro.schema for plain Avro values or "
                           "schema.registry.url for the Confluent wire format, not both",
                           where(conf, "schema.registry.url", at, sizeof at));
        if (!avro && (conf->avro_schema || conf->registry_url))
                return bad(err, "%s: needs gate.event-time=avro:PATH",
                           conf->avro_schema ? "gate.avro.schema" : "schema.registry.url");
        if (!conf->registry_url && (conf->registry_userinfo || conf->registry_ca ||
                                    conf->registry_cert || conf->registry_key))
                return bad(err, "%s: needs schema.registry.url",
                           conf->registry_userinfo ? "schema.registry.basic.auth.user.info"
                           : conf->registry_ca     ? "schema.registry.ssl.ca.location"
                           : conf->registry_cert   ? "schema.registry.ssl.certificate.location"
                                                   : "schema.registry.ssl.key.location");
        if (!conf->registry_cert != !conf->registry_key)
                return bad(err, "%s: needs %s too",
                           conf->registry_cert ? "schema.registry.ssl.certificate.location"
                                               : "schema.registry.ssl.key.location",
                           conf->registry_cert ? "schema.registry.ssl.key.location"
                                               : "schema.registry.ssl.certificate.location");

        /* Derived values. */
        if ((rc = expand_pipeline(conf, &conf->transactional_id, "gate.transactional.id",
                                  ID_MAX, err)) != GP_OK ||
            (rc = expand_pipeline(conf, &conf->group_id, "gate.group.id", ID_MAX, err)) !=
                    GP_OK ||
            (rc = expand_pipeline(conf, &conf->dlq_topic, "gate.dlq.topic", TOPIC_MAX, err)) !=
                    GP_OK)
                return rc;
        if ((rc = derive_instance(conf, err)) != GP_OK)
                return rc;
        if (!gp_conf_topic_name_ok(conf->dlq_topic, strlen(conf->dlq_topic)))
                return bad(err, "gate.dlq.topic: \"%s\" is not a valid topic name",
                           conf->dlq_topic);
        free_topics(conf);
        if ((rc = gp_conf_split_topics(conf->source_topics_raw, conf->topics, &conf->n_topics,
                                       err)) != GP_OK) {
                free_topics(conf); /* n_topics counts what was stored */
                gp_err_prefix(err, "gate.source.topics");
                return rc;
        }
        for (int i = 0; i < conf->n_topics; i++)
                if (strcmp(conf->topics[i], conf->dlq_topic) == 0)
                        return bad(err, "gate.dlq.topic: \"%s\" is also a source topic",
                                   conf->dlq_topic);
        return check_colour_names(conf, err);
}

void gp_conf_drain_warning(const gp_conf_t *conf, char *buf, size_t len) {
        const char *off = !conf->drain_group_blue && !conf->drain_group_green ? "blue or green"
                          : !conf->drain_group_blue                           ? "blue"
                          : !conf->drain_group_green                          ? "green"
                                                                              : NULL;
        if (!off) {
                snprintf(buf, len, "%s", "");
                return;
        }
        snprintf(buf, len,
                 "no drain check for %s (gate.drain.group.%s unset): CLEAR_TO_TEARDOWN "
                 "may come before the old job has committed its last records, and the next "
                 "job of its colour reads them again or never; set it to the job's consumer "
                 "group",
                 off, strchr(off, ' ') ? "blue/.green" : off);
}
