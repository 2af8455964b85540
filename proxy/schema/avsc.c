/* proxy/schema/avsc.c: Avro schema JSON -> gate/avro.h table (cJSON).
 *
 * Why not avro-c's parser: avro-c 1.11 drops logical types, and the
 * event-time field's logical type (timestamp-millis or -micros) says how
 * to read it. avro-c is the independent encoder in the tests instead. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/schema/avsc.h"

#define MAX_DEPTH 64
#define MAX_NAME  512

typedef struct named {
        char *full;
        uint32_t node;
} named_t;

typedef struct ctx {
        gp_avro_t *av;
        const gp_extract_t *x;
        named_t *names;
        size_t n_names, cap_names;
        gp_err_t *err;
        gp_errcode_t code; /* of the first failure: err may be NULL */
} ctx_t;

/* A schema that cannot be used: GP_ERR_INVALID with the reason; -1. */
__attribute__((format(printf, 2, 3))) static int64_t fail(ctx_t *c, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        c->code = gp_err_vset(c->err, GP_ERR_INVALID, fmt, ap);
        va_end(ap);
        return -1;
}

/* Out of memory: GP_ERR_NOMEM, not a verdict on the schema; -1. */
static int64_t nomem(ctx_t *c) {
        c->code = gp_err_set(c->err, GP_ERR_NOMEM, "out of memory");
        return -1;
}

static const struct {
        const char *name;
        gp_av_type_t type;
} primitives[] = {
        {"null", GP_AV_NULL},   {"boolean", GP_AV_BOOLEAN}, {"int", GP_AV_INT},
        {"long", GP_AV_LONG},   {"float", GP_AV_FLOAT},     {"double", GP_AV_DOUBLE},
        {"bytes", GP_AV_BYTES}, {"string", GP_AV_STRING},
};

static int primitive(const char *s) {
        for (size_t i = 0; i < sizeof(primitives) / sizeof(primitives[0]); i++)
                if (!strcmp(s, primitives[i].name))
                        return (int)primitives[i].type;
        return -1;
}

static const named_t *find_name(const ctx_t *c, const char *full) {
        for (size_t i = 0; i < c->n_names; i++)
                if (!strcmp(c->names[i].full, full))
                        return &c->names[i];
        return NULL;
}

/* A reference: a full name, or a short one in the enclosing namespace,
 * or in none. */
static int64_t lookup(ctx_t *c, const char *s, const char *ns) {
        char full[2 * MAX_NAME + 2];
        const named_t *n = NULL;
        if (!strchr(s, '.') && ns && *ns) {
                snprintf(full, sizeof full, "%s.%s", ns, s);
                n = find_name(c, full);
        }
        if (!n)
                n = find_name(c, s);
        if (!n)
                return fail(c,
                            "unknown type name \"%.100s\" (not defined before its use; "
                            "schema references are not supported)",
                            s);
        return n->node;
}

/* Registers a named type; sets *own_ns to the namespace its fields use. */
static int define(ctx_t *c, const cJSON *j, const char *ns, uint32_t node, char *own_ns) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
        const cJSON *space = cJSON_GetObjectItemCaseSensitive(j, "namespace");
        char full[2 * MAX_NAME + 2];
        if (!cJSON_IsString(name) || !name->valuestring[0] ||
            strlen(name->valuestring) >= MAX_NAME)
                return (int)fail(c, "a named type needs a \"name\" (1 to %d characters)",
                                 MAX_NAME - 1);
        const char *dot = strrchr(name->valuestring, '.');
        if (dot) {
                snprintf(full, sizeof full, "%s", name->valuestring);
                snprintf(own_ns, MAX_NAME, "%.*s", (int)(dot - name->valuestring),
                         name->valuestring);
        } else {
                if (cJSON_IsString(space) && strlen(space->valuestring) < MAX_NAME)
                        ns = space->valuestring;
                snprintf(own_ns, MAX_NAME, "%s", ns ? ns : "");
                if (*own_ns)
                        snprintf(full, sizeof full, "%s.%s", own_ns, name->valuestring);
                else
                        snprintf(full, sizeof full, "%s", name->valuestring);
        }
        if (find_name(c, full))
                return (int)fail(c, "type \"%.100s\" is defined twice", full);
        if (c->n_names == c->cap_names) {
                size_t cap = c->cap_names ? c->cap_names * 2 : 8;
                named_t *n = realloc(c->names, cap * sizeof(*n));
                if (!n)
                        return (int)nomem(c);
                c->names = n;
                c->cap_names = cap;
        }
        if (!(c->names[c->n_names].full = strdup(full)))
                return (int)nomem(c);
        c->names[c->n_names++].node = node;
        return 0;
}

static int64_t node_new(ctx_t *c, gp_av_type_t t) {
        int64_t i = gp_avro_add_node(c->av, t);
        if (i < 0 && c->av->n_nodes < GP_AVRO_MAX_NODES)
                return nomem(c);
        if (i < 0)
                return fail(c, "schema too large (more than %d types)", GP_AVRO_MAX_NODES);
        return i;
}

/* Room for n children; -1 when the schema is too large or memory short. */
static int64_t kids_new(ctx_t *c, uint32_t n) {
        bool fits = n <= GP_AVRO_MAX_NODES && c->av->n_kids <= GP_AVRO_MAX_NODES * 4u - n;
        int64_t k = gp_avro_add_kids(c->av, n);
        /* gp_avro_add_kids refuses a size (gate/avro.c's bounds, as here)
         * before it allocates: a refusal of a size that fits is its
         * allocation failing. */
        if (k < 0 && fits)
                return nomem(c);
        if (k < 0)
                return fail(c, "schema too large");
        return k;
}

static int64_t parse(ctx_t *c, const cJSON *j, const char *ns, int depth);

static int64_t parse_record(ctx_t *c, const cJSON *j, const char *ns, int depth) {
        char own[MAX_NAME];
        const cJSON *fields = cJSON_GetObjectItemCaseSensitive(j, "fields");
        int64_t node = node_new(c, GP_AV_RECORD);
        if (node < 0 || define(c, j, ns, (uint32_t)node, own))
                return -1;
        if (!cJSON_IsArray(fields))
                return fail(c, "record \"%.100s\" needs a \"fields\" array",
                            c->names[c->n_names - 1].full);
        int n = cJSON_GetArraySize(fields);
        int64_t kids = kids_new(c, (uint32_t)n);
        if (kids < 0)
                return -1;
        c->av->nodes[node].n = (uint32_t)n;
        c->av->nodes[node].kids = (uint32_t)kids;
        int i = 0;
        const cJSON *f;
        cJSON_ArrayForEach(f, fields) {
                const cJSON *fname = cJSON_GetObjectItemCaseSensitive(f, "name");
                const cJSON *ftype = cJSON_GetObjectItemCaseSensitive(f, "type");
                if (!cJSON_IsString(fname) || !ftype)
                        return fail(c,
                                    "a field of record \"%.100s\" needs a \"name\" and a "
                                    "\"type\"",
                                    c->names[c->n_names - 1].full);
                for (int k = 0; k < c->x->avro_n; k++)
                        if (!strcmp(fname->valuestring, c->x->avro_path[k]) &&
                            c->av->nodes[node].step[k] < 0)
                                c->av->nodes[node].step[k] = (int16_t)i;
                int64_t t = parse(c, ftype, own, depth + 1);
                if (t < 0)
                        return -1;
                c->av->kids[kids + i++] = (uint32_t)t;
        }
        if (n > INT16_MAX)
                return fail(c, "record with more than %d fields", INT16_MAX);
        return node;
}

static int64_t parse_object(ctx_t *c, const cJSON *j, const char *ns, int depth) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
        char own[MAX_NAME];
        int64_t node;
        if (!type)
                return fail(c, "a schema object needs a \"type\"");
        if (!cJSON_IsString(type))
                return parse(c, type, ns, depth + 1);
        const char *t = type->valuestring;
        int prim = primitive(t);
        if (prim >= 0) {
                if ((node = node_new(c, (gp_av_type_t)prim)) < 0)
                        return -1;
                const cJSON *lt = cJSON_GetObjectItemCaseSensitive(j, "logicalType");
                /* A logical type on the wrong base type is ignored, as the
                 * specification asks. */
                if (prim == GP_AV_LONG && cJSON_IsString(lt)) {
                        if (!strcmp(lt->valuestring, "timestamp-millis"))
                                c->av->nodes[node].logical = GP_AV_LT_MILLIS;
                        else if (!strcmp(lt->valuestring, "timestamp-micros"))
                                c->av->nodes[node].logical = GP_AV_LT_MICROS;
                        else if (!strcmp(lt->valuestring, "timestamp-nanos"))
                                c->av->nodes[node].logical = GP_AV_LT_NANOS;
                }
                return node;
        }
        if (!strcmp(t, "record") || !strcmp(t, "error"))
                return parse_record(c, j, ns, depth);
        if (!strcmp(t, "enum")) {
                const cJSON *sym = cJSON_GetObjectItemCaseSensitive(j, "symbols");
                if ((node = node_new(c, GP_AV_ENUM)) < 0 ||
                    define(c, j, ns, (uint32_t)node, own))
                        return -1;
                if (!cJSON_IsArray(sym) || cJSON_GetArraySize(sym) == 0)
                        return fail(c, "enum \"%.100s\" needs a non-empty \"symbols\" array",
                                    c->names[c->n_names - 1].full);
                c->av->nodes[node].n = (uint32_t)cJSON_GetArraySize(sym);
                return node;
        }
        if (!strcmp(t, "fixed")) {
                const cJSON *size = cJSON_GetObjectItemCaseSensitive(j, "size");
                if ((node = node_new(c, GP_AV_FIXED)) < 0 ||
                    define(c, j, ns, (uint32_t)node, own))
                        return -1;
                if (!cJSON_IsNumber(size) || size->valuedouble < 0 ||
                    size->valuedouble > 1e9 ||
                    size->valuedouble != (double)(int64_t)size->valuedouble)
                        return fail(c,
                                    "fixed \"%.100s\" needs a whole \"size\" from 0 to 10^9",
                                    c->names[c->n_names - 1].full);
                c->av->nodes[node].n = (uint32_t)size->valuedouble;
                return node;
        }
        if (!strcmp(t, "array") || !strcmp(t, "map")) {
                bool arr = t[0] == 'a';
                const cJSON *sub =
                        cJSON_GetObjectItemCaseSensitive(j, arr ? "items" : "values");
                if (!sub)
                        return fail(c, "%s needs \"%s\"", t, arr ? "items" : "values");
                if ((node = node_new(c, arr ? GP_AV_ARRAY : GP_AV_MAP)) < 0)
                        return -1;
                int64_t k = parse(c, sub, ns, depth + 1);
                if (k < 0)
                        return -1;
                c->av->nodes[node].kids = (uint32_t)k;
                return node;
        }
        return lookup(c, t, ns);
}

static int64_t parse(ctx_t *c, const cJSON *j, const char *ns, int depth) {
        if (depth > MAX_DEPTH)
                return fail(c, "schema nested more than %d deep", MAX_DEPTH);
        if (cJSON_IsString(j)) {
                int prim = primitive(j->valuestring);
                return prim >= 0 ? node_new(c, (gp_av_type_t)prim)
                                 : lookup(c, j->valuestring, ns);
        }
        if (cJSON_IsArray(j)) {
                int n = cJSON_GetArraySize(j);
                int64_t node = node_new(c, GP_AV_UNION);
                if (node < 0)
                        return -1;
                if (n == 0)
                        return fail(c, "a union needs at least one branch");
                int64_t kids = kids_new(c, (uint32_t)n);
                if (kids < 0)
                        return -1;
                c->av->nodes[node].n = (uint32_t)n;
                c->av->nodes[node].kids = (uint32_t)kids;
                int i = 0;
                const cJSON *b;
                cJSON_ArrayForEach(b, j) {
                        int64_t k = parse(c, b, ns, depth + 1);
                        if (k < 0)
                                return -1;
                        c->av->kids[kids + i++] = (uint32_t)k;
                }
                return node;
        }
        if (cJSON_IsObject(j))
                return parse_object(c, j, ns, depth);
        return fail(c, "a schema is a type name, an object or a union array");
}

/* Adds node and, through unions, every node it may stand for. */
static void reach(const gp_avro_t *av, uint32_t node, uint8_t *seen, uint32_t *list,
                  uint32_t *n) {
        if (seen[node])
                return;
        seen[node] = 1;
        list[(*n)++] = node;
        const gp_av_node_t *u = &av->nodes[node];
        if (u->type == GP_AV_UNION)
                for (uint32_t i = 0; i < u->n; i++)
                        reach(av, av->kids[u->kids + i], seen, list, n);
}

/* Can the path be read in some record this schema allows? */
static gp_errcode_t check_path(const gp_avro_t *av, const gp_extract_t *x, gp_err_t *err) {
        uint32_t nn = av->n_nodes, n = 0, m;
        uint8_t *seen = calloc(nn, 1);
        uint32_t *cur = calloc(nn, sizeof(*cur)), *next = calloc(nn, sizeof(*next));
        gp_errcode_t rc = GP_ERR_NOT_FOUND;
        char path[GP_AVRO_MAX_PATH * GP_AVRO_MAX_NAME] = "";
        if (!seen || !cur || !next) {
                rc = gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                goto out;
        }
        reach(av, av->root, seen, cur, &n);
        size_t pl = 0;
        for (int k = 0; k < x->avro_n; k++) {
                int w = snprintf(path + pl, sizeof(path) - pl, "%s%s", k ? "." : "",
                                 x->avro_path[k]);
                if (w > 0)
                        pl = pl + (size_t)w < sizeof(path) ? pl + (size_t)w : sizeof(path) - 1;
                memset(seen, 0, nn);
                m = 0;
                for (uint32_t i = 0; i < n; i++) {
                        const gp_av_node_t *r = &av->nodes[cur[i]];
                        if (r->type == GP_AV_RECORD && r->step[k] >= 0)
                                reach(av, av->kids[r->kids + (uint32_t)r->step[k]], seen, next,
                                      &m);
                }
                if (m == 0) {
                        gp_err_set(err, GP_ERR_NOT_FOUND, "the schema has no field %s", path);
                        goto out;
                }
                uint32_t *t = cur;
                cur = next;
                next = t;
                n = m;
        }
        for (uint32_t i = 0; i < n; i++) {
                uint8_t t = av->nodes[cur[i]].type;
                if (t == GP_AV_INT || t == GP_AV_LONG || t == GP_AV_STRING)
                        rc = GP_OK;
        }
        if (rc != GP_OK)
                gp_err_set(err, GP_ERR_NOT_FOUND, "the field %s is not an int, long or string",
                           path);
out:
        free(seen);
        free(cur);
        free(next);
        return rc;
}

gp_errcode_t gp_avsc_compile(const char *json, size_t len, const gp_extract_t *x,
                             gp_avro_t *out, gp_err_t *err) {
        ctx_t c = {.av = out, .x = x, .err = err, .code = GP_ERR_INVALID};
        gp_errcode_t rc;
        memset(out, 0, sizeof(*out));
        out->path_len = x->avro_n;
        if (x->kind != GP_ET_AVRO || x->avro_n < 1) {
                gp_err_set(err, GP_ERR_INVALID, "the event time is not avro:PATH");
                return GP_ERR_INVALID;
        }
        const char *end = NULL;
        cJSON *j = cJSON_ParseWithLengthOpts(json, len, &end, 0);
        if (!j) {
                gp_err_set(err, GP_ERR_INVALID, "the schema is not JSON");
                return GP_ERR_INVALID;
        }
        /* cJSON stops after the first value: anything but blanks after it
         * (a second document, a NUL) makes the text not one schema. */
        while (end && end < json + len &&
               (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
                end++;
        if (end != json + len) {
                cJSON_Delete(j);
                gp_err_set(err, GP_ERR_INVALID,
                           "the schema is not JSON (data after the schema)");
                return GP_ERR_INVALID;
        }
        int64_t root = parse(&c, j, NULL, 0);
        if (root >= 0) {
                out->root = (uint32_t)root;
                rc = check_path(out, x, err);
                if (rc == GP_OK)
                        gp_avro_plan(out);
        } else {
                rc = c.code;
        }
        cJSON_Delete(j);
        for (size_t i = 0; i < c.n_names; i++)
                free(c.names[i].full);
        free(c.names);
        if (rc != GP_OK)
                gp_avro_free(out);
        return rc;
}
