/* k8s/manifest.c: one Kubernetes manifest in YAML (or JSON, which is
 * YAML) as the JSON the API takes. May use gate/ and k8s/; libyaml, cJSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "k8s/manifest.h"

#define DEPTH_MAX 64
#define NODES_MAX 100000 /* aliases may repeat a subtree: a budget for the copy */

static int plain_is(const yaml_node_t *n, const char *const *words) {
        for (; *words; words++)
                if (n->data.scalar.length == strlen(*words) &&
                    !memcmp(n->data.scalar.value, *words, n->data.scalar.length))
                        return 1;
        return 0;
}

/* A plain scalar as YAML 1.2's core schema reads it: null, a boolean, an
 * integer or a float; anything else, and every quoted scalar, is a
 * string. */
static cJSON *scalar(const yaml_node_t *n) {
        static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
        static const char *const trues[] = {"true", "True", "TRUE", NULL};
        static const char *const falses[] = {"false", "False", "FALSE", NULL};
        const char *s = (const char *)n->data.scalar.value;
        size_t len = n->data.scalar.length;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
                if (plain_is(n, nulls))
                        return cJSON_CreateNull();
                if (plain_is(n, trues))
                        return cJSON_CreateTrue();
                if (plain_is(n, falses))
                        return cJSON_CreateFalse();
                /* [-+]?[0-9]+, or a decimal float; no 0x/0o (kept as
                 * strings, which is what the API's schemas want of them). */
                size_t i = (len && (s[0] == '-' || s[0] == '+')) ? 1 : 0, digits = 0, dot = 0,
                       exp = 0;
                for (; i < len; i++) {
                        if (s[i] >= '0' && s[i] <= '9')
                                digits++;
                        else if (s[i] == '.' && !dot && !exp)
                                dot = 1;
                        else if ((s[i] == 'e' || s[i] == 'E') && digits && !exp &&
                                 i + 1 < len) {
                                exp = 1;
                                if (s[i + 1] == '-' || s[i + 1] == '+')
                                        i++;
                        } else
                                break;
                }
                if (i == len && digits && len < 64 && !memchr(s, '\0', len)) {
                        char buf[64], *end;
                        memcpy(buf, s, len);
                        buf[len] = '\0';
                        errno = 0;
                        double d = strtod(buf, &end);
                        if (!*end && errno != ERANGE)
                                return cJSON_CreateNumber(d);
                }
        }
        /* A string with a NUL in it is cut there by cJSON: refuse it. */
        if (memchr(s, '\0', len))
                return NULL;
        char *copy = malloc(len + 1);
        if (!copy)
                return NULL;
        memcpy(copy, s, len);
        copy[len] = '\0';
        cJSON *j = cJSON_CreateString(copy);
        free(copy);
        return j;
}

static cJSON *node(yaml_document_t *d, yaml_node_t *n, int depth, size_t *budget,
                   gp_err_t *err) {
        cJSON *j = NULL;
        if (n && (*budget)-- == 0) {
                gp_err_set(err, GP_ERR_INVALID, "more than %d values (aliases?)", NODES_MAX);
                return NULL;
        }
        if (!n) {
                gp_err_set(err, GP_ERR_INVALID, "an empty node");
                return NULL;
        }
        if (depth > DEPTH_MAX) {
                gp_err_set(err, GP_ERR_INVALID, "nested deeper than %d levels (line %zu)",
                           DEPTH_MAX, n->start_mark.line + 1);
                return NULL;
        }
        switch (n->type) {
        case YAML_SCALAR_NODE:
                if (!(j = scalar(n)))
                        gp_err_set(err, GP_ERR_INVALID, "line %zu: a NUL byte in a value",
                                   n->start_mark.line + 1);
                return j;
        case YAML_SEQUENCE_NODE:
                j = cJSON_CreateArray();
                for (yaml_node_item_t *it = n->data.sequence.items.start;
                     j && it < n->data.sequence.items.top; it++) {
                        cJSON *v = node(d, yaml_document_get_node(d, *it), depth + 1, budget,
                                        err);
                        if (!v) {
                                cJSON_Delete(j);
                                return NULL;
                        }
                        cJSON_AddItemToArray(j, v);
                }
                return j;
        case YAML_MAPPING_NODE:
                j = cJSON_CreateObject();
                for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
                     j && p < n->data.mapping.pairs.top; p++) {
                        yaml_node_t *k = yaml_document_get_node(d, p->key);
                        if (!k || k->type != YAML_SCALAR_NODE ||
                            memchr(k->data.scalar.value, '\0', k->data.scalar.length)) {
                                gp_err_set(err, GP_ERR_INVALID,
                                           "line %zu: a key that is not a plain string",
                                           (k ? k->start_mark.line : n->start_mark.line) + 1);
                                cJSON_Delete(j);
                                return NULL;
                        }
                        char *key = strndup((const char *)k->data.scalar.value,
                                            k->data.scalar.length);
                        if (key && cJSON_GetObjectItemCaseSensitive(j, key)) {
                                gp_err_set(err, GP_ERR_INVALID, "line %zu: key '%.80s' twice",
                                           k->start_mark.line + 1, key);
                                free(key);
                                cJSON_Delete(j);
                                return NULL;
                        }
                        cJSON *v = key ? node(d, yaml_document_get_node(d, p->value),
                                              depth + 1, budget, err)
                                       : NULL;
                        if (!v) {
                                if (!key)
                                        gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                                free(key);
                                cJSON_Delete(j);
                                return NULL;
                        }
                        cJSON_AddItemToObject(j, key, v);
                        free(key);
                }
                return j;
        default:
                gp_err_set(err, GP_ERR_INVALID, "line %zu: an empty node",
                           n->start_mark.line + 1);
                return NULL;
        }
}

cJSON *gp_k8s_manifest_parse(const char *buf, size_t len, gp_err_t *err) {
        yaml_parser_t parser;
        yaml_document_t doc, next;
        cJSON *j = NULL;
        if (!yaml_parser_initialize(&parser)) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
        if (!yaml_parser_load(&parser, &doc)) {
                gp_err_set(err, GP_ERR_INVALID, "line %zu: %s", parser.problem_mark.line + 1,
                           parser.problem ? parser.problem : "not YAML");
                yaml_parser_delete(&parser);
                return NULL;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root || root->type != YAML_MAPPING_NODE) {
                gp_err_set(err, GP_ERR_INVALID, "not one object (a manifest is a mapping)");
        } else if ((j = node(&doc, root, 0, &(size_t){NODES_MAX}, err))) {
                /* One document only: a second one would be ignored. */
                if (!yaml_parser_load(&parser, &next)) {
                        gp_err_set(err, GP_ERR_INVALID, "line %zu: %s",
                                   parser.problem_mark.line + 1,
                                   parser.problem ? parser.problem : "not YAML");
                        cJSON_Delete(j);
                        j = NULL;
                } else {
                        if (yaml_document_get_root_node(&next)) {
                                gp_err_set(err, GP_ERR_INVALID,
                                           "more than one document (one resource per file)");
                                cJSON_Delete(j);
                                j = NULL;
                        }
                        yaml_document_delete(&next);
                }
        }
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return j;
}
