/* tests/ref/ref_avro.c: the reference (tests/ref/ref_extract.h), gate/avro.c
 * as it was before the skip-scanners, renamed gp_ -> ref_. Then:
 * the Avro binary walk to one field. Pure: libc only.
 *
 * The encoding (Avro specification, "Binary Encoding"): int and long are
 * zig-zag varints; float 4 bytes, double 8; bytes and string a long length
 * then the bytes; fixed its size; enum a varint; a union a long branch
 * index then the branch; a record its fields in order; arrays and maps a
 * series of blocks, each a long count (when negative, its absolute value
 * followed by the block's size in bytes) then that many items (map items
 * are a string key and a value), ended by a count of 0. */
#include "tests/ref/ref_extract.h"
#include <stdlib.h>
#include <string.h>

#include "gate/avro.h"
#include "gate/types.h"

int64_t ref_avro_add_node(gp_avro_t *av, gp_av_type_t type) {
        if (av->n_nodes >= GP_AVRO_MAX_NODES)
                return -1;
        if (av->n_nodes == av->cap_nodes) {
                uint32_t cap = av->cap_nodes ? av->cap_nodes * 2 : 16;
                gp_av_node_t *n = realloc(av->nodes, cap * sizeof(*n));
                if (!n)
                        return -1;
                av->nodes = n;
                av->cap_nodes = cap;
        }
        gp_av_node_t *n = &av->nodes[av->n_nodes];
        memset(n, 0, sizeof(*n));
        n->type = (uint8_t)type;
        for (int k = 0; k < GP_AVRO_MAX_PATH; k++)
                n->step[k] = -1;
        return av->n_nodes++;
}

int64_t ref_avro_add_kids(gp_avro_t *av, uint32_t n) {
        if (n > GP_AVRO_MAX_NODES || av->n_kids > GP_AVRO_MAX_NODES * 4u - n)
                return -1;
        if (n == 0) /* an empty record: no room, and no memset on a NULL array */
                return av->n_kids;
        if (av->n_kids + n > av->cap_kids) {
                uint32_t cap = av->cap_kids ? av->cap_kids : 16;
                while (cap < av->n_kids + n)
                        cap *= 2;
                uint32_t *k = realloc(av->kids, cap * sizeof(*k));
                if (!k)
                        return -1;
                av->kids = k;
                av->cap_kids = cap;
        }
        memset(av->kids + av->n_kids, 0, n * sizeof(*av->kids));
        uint32_t first = av->n_kids;
        av->n_kids += n;
        return first;
}

void ref_avro_free(gp_avro_t *av) {
        if (!av)
                return;
        free(av->nodes);
        free(av->kids);
        memset(av, 0, sizeof(*av));
}

typedef struct rd {
        const uint8_t *p, *end;
        int64_t budget; /* node visits and items left */
} rd_t;

static int rd_long(rd_t *r, int64_t *v) {
        uint64_t u = 0;
        /* One byte: small counts, lengths, indexes (the common case). */
        if (r->p < r->end && *r->p < 0x80) {
                u = *r->p++;
                *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
                return 0;
        }
        for (int shift = 0; shift < 64; shift += 7) {
                if (r->p == r->end)
                        return -1;
                uint8_t b = *r->p++;
                /* The 10th byte may hold only the top bit. */
                if (shift == 63 && b > 1)
                        return -1;
                u |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
                        return 0;
                }
        }
        return -1;
}

static int rd_skip(rd_t *r, int64_t n) {
        if (n < 0 || n > r->end - r->p)
                return -1;
        r->p += n;
        return 0;
}

/* The branch a union's bytes select. */
static int rd_branch(const gp_avro_t *av, const gp_av_node_t *u, rd_t *r, uint32_t *out) {
        int64_t i;
        if (rd_long(r, &i) || i < 0 || (uint64_t)i >= u->n)
                return -1;
        *out = av->kids[u->kids + (uint32_t)i];
        return 0;
}

static gp_avro_rc_t skip(const gp_avro_t *av, uint32_t node, rd_t *r, int depth);
static gp_avro_rc_t skip_fields(const gp_avro_t *av, const gp_av_node_t *n, uint32_t count,
                                rd_t *r, int depth);

/* Array and map blocks. */
static gp_avro_rc_t skip_blocks(const gp_avro_t *av, uint32_t items, rd_t *r, int depth,
                                int is_map) {
        for (;;) {
                int64_t count, size;
                if (rd_long(r, &count))
                        return GP_AVRO_ERR_DATA;
                if (count == 0)
                        return GP_AVRO_OK;
                if (count < 0) {
                        if (count == INT64_MIN || rd_long(r, &size) || rd_skip(r, size))
                                return GP_AVRO_ERR_DATA;
                        if ((r->budget -= 1) < 0)
                                return GP_AVRO_ERR_LIMIT;
                        continue;
                }
                if ((r->budget -= count) < 0)
                        return GP_AVRO_ERR_LIMIT;
                for (int64_t i = 0; i < count; i++) {
                        int64_t klen;
                        if (is_map && (rd_long(r, &klen) || rd_skip(r, klen)))
                                return GP_AVRO_ERR_DATA;
                        gp_avro_rc_t rc = skip(av, items, r, depth + 1);
                        if (rc)
                                return rc;
                }
        }
}

static gp_avro_rc_t skip(const gp_avro_t *av, uint32_t node, rd_t *r, int depth) {
        int64_t v;
        if (depth > GP_AVRO_MAX_DEPTH || --r->budget < 0)
                return GP_AVRO_ERR_LIMIT;
        const gp_av_node_t *n = &av->nodes[node];
        switch ((gp_av_type_t)n->type) {
        case GP_AV_NULL:
                return GP_AVRO_OK;
        case GP_AV_BOOLEAN:
                return rd_skip(r, 1) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
        case GP_AV_INT:
        case GP_AV_LONG:
        case GP_AV_ENUM:
                return rd_long(r, &v) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
        case GP_AV_FLOAT:
                return rd_skip(r, 4) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
        case GP_AV_DOUBLE:
                return rd_skip(r, 8) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
        case GP_AV_BYTES:
        case GP_AV_STRING:
                return rd_long(r, &v) || rd_skip(r, v) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
        case GP_AV_FIXED:
                return rd_skip(r, n->n) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
        case GP_AV_ARRAY:
                return skip_blocks(av, n->kids, r, depth, 0);
        case GP_AV_MAP:
                return skip_blocks(av, n->kids, r, depth, 1);
        case GP_AV_UNION: {
                uint32_t b;
                if (rd_branch(av, n, r, &b))
                        return GP_AVRO_ERR_DATA;
                return skip(av, b, r, depth + 1);
        }
        case GP_AV_RECORD:
                return skip_fields(av, n, n->n, r, depth);
        }
        return GP_AVRO_ERR_DATA;
}

/* The first `count` fields of record n: primitives inline, the rest by
 * skip(). */
static gp_avro_rc_t skip_fields(const gp_avro_t *av, const gp_av_node_t *n, uint32_t count,
                                rd_t *r, int depth) {
        int64_t v;
        for (uint32_t i = 0; i < count; i++) {
                uint32_t k = av->kids[n->kids + i];
                switch ((gp_av_type_t)av->nodes[k].type) {
                case GP_AV_INT:
                case GP_AV_LONG:
                case GP_AV_ENUM:
                        if (rd_long(r, &v))
                                return GP_AVRO_ERR_DATA;
                        break;
                case GP_AV_BYTES:
                case GP_AV_STRING:
                        if (rd_long(r, &v) || rd_skip(r, v))
                                return GP_AVRO_ERR_DATA;
                        break;
                case GP_AV_DOUBLE:
                        if (rd_skip(r, 8))
                                return GP_AVRO_ERR_DATA;
                        break;
                default: {
                        gp_avro_rc_t rc = skip(av, k, r, depth + 1);
                        if (rc)
                                return rc;
                }
                }
        }
        if ((r->budget -= count) < 0)
                return GP_AVRO_ERR_LIMIT;
        return GP_AVRO_OK;
}

gp_avro_rc_t ref_avro_find(const gp_avro_t *av, const void *buf, size_t len,
                           gp_avro_val_t *out) {
        const uint8_t *b = buf ? buf : (const uint8_t *)"";
        /* A budget of node visits that no honest record of this length
         * needs: items of zero bytes are the only way past it. */
        rd_t r = {b, b + len, 4096 + 64 * (int64_t)len};
        uint32_t node = av->root;
        const gp_av_node_t *n;
        gp_avro_rc_t rc;

        memset(out, 0, sizeof(*out));
        for (int k = 0;; k++) {
                /* Unions on the path: the bytes pick the branch. */
                int hops = 0;
                while ((n = &av->nodes[node])->type == GP_AV_UNION) {
                        if (++hops > GP_AVRO_MAX_DEPTH)
                                return GP_AVRO_ERR_LIMIT;
                        if (rd_branch(av, n, &r, &node))
                                return GP_AVRO_ERR_DATA;
                }
                if (k == av->path_len)
                        break;
                if (n->type == GP_AV_NULL)
                        return GP_AVRO_ERR_MISSING; /* an optional record, absent */
                if (n->type != GP_AV_RECORD || n->step[k] < 0)
                        return GP_AVRO_ERR_MISSING;
                if ((rc = skip_fields(av, n, (uint32_t)n->step[k], &r, 1)))
                        return rc;
                node = av->kids[n->kids + n->step[k]];
        }

        int64_t v;
        switch ((gp_av_type_t)n->type) {
        case GP_AV_INT:
        case GP_AV_LONG:
                if (rd_long(&r, &v))
                        return GP_AVRO_ERR_DATA;
                if (n->type == GP_AV_INT && (v < INT32_MIN || v > INT32_MAX))
                        return GP_AVRO_ERR_DATA;
                out->kind = GP_AVF_LONG;
                out->logical = n->logical;
                out->i = v;
                return GP_AVRO_OK;
        case GP_AV_STRING:
                if (rd_long(&r, &v) || v < 0 || v > r.end - r.p)
                        return GP_AVRO_ERR_DATA;
                out->kind = GP_AVF_STRING;
                out->s = (const char *)r.p;
                out->len = (size_t)v;
                return GP_AVRO_OK;
        case GP_AV_NULL:
                out->kind = GP_AVF_NULL;
                return GP_AVRO_OK;
        default:
                out->kind = GP_AVF_OTHER;
                return GP_AVRO_OK;
        }
}

int ref_avro_frame(const void *buf, size_t len, uint32_t *id, const uint8_t **body,
                   size_t *body_len) {
        const uint8_t *b = buf;
        if (!b || len < 5 || b[0] != 0)
                return -1;
        *id = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
        *body = b + 5;
        *body_len = len - 5;
        return 0;
}

static int64_t floor_div(int64_t a, int64_t b) {
        int64_t q = a / b;
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int ref_avro_val_ms(const gp_avro_val_t *v, gp_unit_t unit, int64_t *ms, const char **why) {
        int64_t t;
        switch (v->kind) {
        case GP_AVF_LONG:
                switch ((gp_av_logical_t)v->logical) {
                case GP_AV_LT_MILLIS:
                        t = v->i;
                        break;
                case GP_AV_LT_MICROS:
                        t = floor_div(v->i, 1000);
                        break;
                case GP_AV_LT_NANOS:
                        t = floor_div(v->i, 1000000);
                        break;
                default:
                        if (ref_time_from_int(v->i, unit, &t, why))
                                return -1;
                }
                break;
        case GP_AVF_STRING:
                if (ref_time_parse(v->s, v->len, unit, &t, why))
                        return -1;
                break;
        default:
                *why = "not a time";
                return -1;
        }
        if (t == GP_TS_NONE) {
                *why = "out of range";
                return -1;
        }
        *ms = t;
        return 0;
}
