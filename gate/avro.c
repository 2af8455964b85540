/* gate/avro.c: the Avro binary walk to one field. Pure: libc only.
 *
 * The encoding (Avro specification, "Binary Encoding"): int and long are
 * zig-zag varints; float 4 bytes, double 8; bytes and string a long length
 * then the bytes; fixed its size; enum a varint; a union a long branch
 * index then the branch; a record its fields in order; arrays and maps a
 * series of blocks, each a long count (when negative, its absolute value
 * followed by the block's size in bytes) then that many items (map items
 * are a string key and a value), ended by a count of 0. */
#include <stdlib.h>
#include <string.h>

#include "gate/avro.h"
#include "gate/types.h"

int64_t gp_avro_add_node(gp_avro_t *av, gp_av_type_t type) {
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

int64_t gp_avro_add_kids(gp_avro_t *av, uint32_t n) {
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

void gp_avro_free(gp_avro_t *av) {
        if (!av)
                return;
        free(av->nodes);
        free(av->kids);
        free(av->ops);
        memset(av, 0, sizeof(*av));
}

typedef struct rd {
        const uint8_t *p, *end;
        int64_t budget; /* node visits and items left */
} rd_t;

#if defined(__GNUC__)
#define GP_HOT       static inline __attribute__((always_inline))
#define GP_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define GP_HOT       static inline
#define GP_LIKELY(x) (x)
#endif

/* A varint of more than one byte at p: the byte past it with *v set, or
 * NULL. Out of line, the one-byte case is rd_long's. It takes no reader,
 * so that a reader can stay in registers. */
static const uint8_t *varint_slow(const uint8_t *p, const uint8_t *end, int64_t *v) {
        size_t left = (size_t)(end - p);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (left >= 8) {
                /* up to eight bytes at once: the first byte below 0x80 ends
                 * it; the 7-bit groups are packed by three shift steps */
                uint64_t w, stop;
                memcpy(&w, p, 8);
                stop = ~w & UINT64_C(0x8080808080808080);
                if (stop) {
                        int bits = __builtin_ctzll(stop) + 1; /* through the last byte */
                        uint64_t x = w &
                                     (bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1) &
                                     UINT64_C(0x7f7f7f7f7f7f7f7f);
                        x = (x & UINT64_C(0x007f007f007f007f)) |
                            ((x & UINT64_C(0x7f007f007f007f00)) >> 1);
                        x = (x & UINT64_C(0x00003fff00003fff)) |
                            ((x & UINT64_C(0x3fff00003fff0000)) >> 2);
                        x = (x & UINT64_C(0x000000000fffffff)) |
                            ((x & UINT64_C(0x0fffffff00000000)) >> 4);
                        *v = (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
                        return p + bits / 8;
                }
        }
#endif
        uint64_t u = 0;
        for (size_t k = 0; k < 10 && k < left; k++) {
                uint8_t b = p[k];
                /* The 10th byte may hold only the top bit. */
                if (k == 9 && b > 1)
                        return NULL;
                u |= (uint64_t)(b & 0x7f) << (7 * k);
                if (!(b & 0x80)) {
                        *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
                        return p + k + 1;
                }
        }
        return NULL;
}

/* The same on a reader (which stays where it was on an error). */
GP_HOT int rd_long_slow(rd_t *r, int64_t *v) {
        const uint8_t *p = varint_slow(r->p, r->end, v);
        if (!p)
                return -1;
        r->p = p;
        return 0;
}

GP_HOT int rd_long(rd_t *r, int64_t *v) {
        /* One byte: small counts, lengths, indexes (the common case). */
        if (GP_LIKELY(r->p < r->end && *r->p < 0x80)) {
                uint64_t u = *r->p++;
                *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
                return 0;
        }
        return rd_long_slow(r, v);
}

/* Steps over a varint without its value; the same bytes are refused as
 * by rd_long (truncated, more than 10 bytes, a 10th byte above 1). */
GP_HOT int rd_skip_long(rd_t *r) {
        const uint8_t *p = r->p;
        size_t left = (size_t)(r->end - p);
        if (GP_LIKELY(left >= 10)) {
                for (int k = 0; k < 9; k++)
                        if (p[k] < 0x80) {
                                r->p = p + k + 1;
                                return 0;
                        }
                if (p[9] > 1)
                        return -1;
                r->p = p + 10;
                return 0;
        }
        int64_t v;
        return rd_long_slow(r, &v);
}

GP_HOT int rd_skip(rd_t *r, int64_t n) {
        if (n < 0 || n > r->end - r->p)
                return -1;
        r->p += n;
        return 0;
}

/* The branch a union's bytes select. */
GP_HOT int rd_branch(const gp_avro_t *av, const gp_av_node_t *u, rd_t *r, uint32_t *out) {
        int64_t i;
        if (rd_long(r, &i) || i < 0 || (uint64_t)i >= u->n)
                return -1;
        *out = av->kids[u->kids + (uint32_t)i];
        return 0;
}

static gp_avro_rc_t skip(const gp_avro_t *av, uint32_t node, rd_t *r, int depth);
static gp_avro_rc_t skip_fields(const gp_avro_t *av, const gp_av_node_t *n, uint32_t count,
                                rd_t *r, int depth);

/* The next array or map block with items: *count of them follow, 0 at the
 * end. A block written with a negative count and its byte size is skipped
 * whole by that size, one step of the budget. */
GP_HOT gp_avro_rc_t block_next(rd_t *r, int64_t *count) {
        for (;;) {
                int64_t size;
                if (rd_long(r, count))
                        return GP_AVRO_ERR_DATA;
                if (*count >= 0)
                        return GP_AVRO_OK;
                if (*count == INT64_MIN || rd_long(r, &size) || rd_skip(r, size))
                        return GP_AVRO_ERR_DATA;
                if ((r->budget -= 1) < 0)
                        return GP_AVRO_ERR_LIMIT;
        }
}

/* Array and map blocks. */
static gp_avro_rc_t skip_blocks(const gp_avro_t *av, uint32_t items, rd_t *r, int depth,
                                int is_map) {
        for (;;) {
                int64_t count;
                gp_avro_rc_t brc = block_next(r, &count);
                if (brc || count == 0)
                        return brc;
                if ((r->budget -= count) < 0)
                        return GP_AVRO_ERR_LIMIT;
                /* Items of a varint or string type: skip()'s visit of
                 * each (its depth check and one step) charged at once,
                 * then the bytes in line. */
                uint8_t t = av->nodes[items].type;
                if ((t == GP_AV_INT || t == GP_AV_LONG || t == GP_AV_ENUM ||
                     t == GP_AV_STRING || t == GP_AV_BYTES) &&
                    depth + 1 <= GP_AVRO_MAX_DEPTH) {
                        if ((r->budget -= count) < 0)
                                return GP_AVRO_ERR_LIMIT;
                        int is_len = t == GP_AV_STRING || t == GP_AV_BYTES;
                        for (int64_t i = 0; i < count; i++) {
                                int64_t klen, vlen;
                                if (is_map && (rd_long(r, &klen) || rd_skip(r, klen)))
                                        return GP_AVRO_ERR_DATA;
                                if (is_len ? (rd_long(r, &vlen) || rd_skip(r, vlen))
                                           : rd_skip_long(r))
                                        return GP_AVRO_ERR_DATA;
                        }
                        continue;
                }
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
                return rd_skip_long(r) ? GP_AVRO_ERR_DATA : GP_AVRO_OK;
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
                        if (rd_skip_long(r))
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

/* Skip plans. A record's fields before the path's field, as skip_fields
 * would step over them, flattened: int, long, enum a varint; string and
 * bytes a length and bytes; double, float, boolean, fixed a byte count;
 * a nested record its own fields in line; null nothing; an array or map
 * of varints or strings its blocks in line (BLOCKS); a union a jump on
 * its branch index to the plan of each branch (UNION, then one BRANCH per
 * branch with the index of its plan, each plan ending in a JUMP past
 * them, which also keeps a FIXED after the union apart from a branch's);
 * anything else, and unions nested more than PLAN_UNIONS deep (a
 * recursive schema would never end), a call of skip() (NODE). COST
 * charges the step budget the node visits skip_fields and skip would
 * charge for the part in line up to the next branch: each plan opens
 * with one, and so does each branch; BLOCKS and NODE charge their own as
 * they go. END closes a plan. The budget is charged at once, before the
 * bytes are read: a record over it is refused either way (DATA or LIMIT,
 * both bad-avro for the extractor), one within it is read the same. */
enum {
        GP_AVOP_END = 0,
        GP_AVOP_COST,
        GP_AVOP_VARINT,
        GP_AVOP_LEN,
        GP_AVOP_FIXED,
        GP_AVOP_NODE,
        GP_AVOP_BLOCKS, /* arg: BLK_MAP | BLK_LEN */
        GP_AVOP_UNION,  /* arg: branches; a BRANCH op for each follows */
        GP_AVOP_BRANCH, /* arg: the index in ops of the branch's plan */
        GP_AVOP_JUMP,   /* arg: the index in ops to go on from */
};

#define BLK_MAP         1u   /* map items: a string key first */
#define BLK_LEN         2u   /* items of string or bytes; else a varint */
#define PLAN_UNIONS     2    /* unions in line within unions in line */
#define PLAN_BRANCHES   16   /* a union of more branches is a NODE */
#define GP_AVRO_MAX_OPS 4096 /* ops over all plans; past it, no plans */

static int plan_op(gp_avro_t *av, uint8_t op, uint32_t arg, int depth) {
        if (op == GP_AVOP_FIXED && av->n_ops > 0 &&
            av->ops[av->n_ops - 1].op == GP_AVOP_FIXED &&
            av->ops[av->n_ops - 1].arg <= UINT32_MAX - arg) {
                av->ops[av->n_ops - 1].arg += arg; /* adjacent fixed sizes add up */
                return 0;
        }
        if (av->n_ops >= GP_AVRO_MAX_OPS)
                return -1;
        if (av->n_ops == av->cap_ops) {
                uint32_t cap = av->cap_ops ? av->cap_ops * 2 : 32;
                gp_av_op_t *o = realloc(av->ops, cap * sizeof(*o));
                if (!o)
                        return -1;
                av->ops = o;
                av->cap_ops = cap;
        }
        av->ops[av->n_ops++] = (gp_av_op_t){.arg = arg, .op = op, .depth = (uint8_t)depth};
        return 0;
}

static int plan_fields(gp_avro_t *av, uint32_t rec, uint32_t count, int depth, int unions,
                       uint64_t *cost);

/* A COST op to be filled in later: its index, or -1. */
static int64_t plan_cost(gp_avro_t *av) {
        if (plan_op(av, GP_AVOP_COST, 0, 0))
                return -1;
        return av->n_ops - 1;
}

static int plan_set_cost(gp_avro_t *av, int64_t at, uint64_t cost) {
        if (cost > UINT32_MAX)
                return -1;
        av->ops[at].arg = (uint32_t)cost;
        return 0;
}

/* Node k as skip(k, depth) steps over it; *cost gathers the visits charged
 * in line. */
static int plan_value(gp_avro_t *av, uint32_t k, int depth, int unions, uint64_t *cost) {
        const gp_av_node_t *f = &av->nodes[k];
        if (depth > GP_AVRO_MAX_DEPTH)
                return plan_op(av, GP_AVOP_NODE, k, depth);
        switch ((gp_av_type_t)f->type) {
        case GP_AV_NULL:
                *cost += 1;
                return 0;
        case GP_AV_BOOLEAN:
                *cost += 1;
                return plan_op(av, GP_AVOP_FIXED, 1, 0);
        case GP_AV_FLOAT:
                *cost += 1;
                return plan_op(av, GP_AVOP_FIXED, 4, 0);
        case GP_AV_DOUBLE:
                *cost += 1;
                return plan_op(av, GP_AVOP_FIXED, 8, 0);
        case GP_AV_FIXED:
                *cost += 1;
                return plan_op(av, GP_AVOP_FIXED, f->n, 0);
        case GP_AV_INT:
        case GP_AV_LONG:
        case GP_AV_ENUM:
                *cost += 1;
                return plan_op(av, GP_AVOP_VARINT, 0, 0);
        case GP_AV_BYTES:
        case GP_AV_STRING:
                *cost += 1;
                return plan_op(av, GP_AVOP_LEN, 0, 0);
        case GP_AV_RECORD:
                *cost += 1;
                return plan_fields(av, k, f->n, depth, unions, cost);
        case GP_AV_ARRAY:
        case GP_AV_MAP: {
                /* skip_blocks' in-line case: items of a varint or string
                 * type, one level down */
                uint8_t t = av->nodes[f->kids].type;
                int is_len = t == GP_AV_STRING || t == GP_AV_BYTES;
                if ((is_len || t == GP_AV_INT || t == GP_AV_LONG || t == GP_AV_ENUM) &&
                    depth + 1 <= GP_AVRO_MAX_DEPTH) {
                        *cost += 1;
                        return plan_op(av, GP_AVOP_BLOCKS,
                                       (f->type == GP_AV_MAP ? BLK_MAP : 0) |
                                               (is_len ? BLK_LEN : 0),
                                       0);
                }
                return plan_op(av, GP_AVOP_NODE, k, depth);
        }
        case GP_AV_UNION: {
                if (unions >= PLAN_UNIONS || f->n == 0 || f->n > PLAN_BRANCHES)
                        return plan_op(av, GP_AVOP_NODE, k, depth);
                *cost += 1;
                if (plan_op(av, GP_AVOP_UNION, f->n, 0))
                        return -1;
                uint32_t table = av->n_ops;
                for (uint32_t b = 0; b < f->n; b++)
                        if (plan_op(av, GP_AVOP_BRANCH, 0, 0))
                                return -1;
                uint32_t jumps[PLAN_BRANCHES];
                for (uint32_t b = 0; b < f->n; b++) {
                        uint64_t bcost = 0;
                        av->ops[table + b].arg = av->n_ops;
                        int64_t at = plan_cost(av);
                        if (at < 0 ||
                            plan_value(av, av->kids[f->kids + b], depth + 1, unions + 1,
                                       &bcost) ||
                            plan_set_cost(av, at, bcost))
                                return -1;
                        jumps[b] = av->n_ops;
                        if (plan_op(av, GP_AVOP_JUMP, 0, 0))
                                return -1;
                }
                for (uint32_t b = 0; b < f->n; b++)
                        av->ops[jumps[b]].arg = av->n_ops;
                return 0;
        }
        }
        return -1;
}

/* The first `count` fields of record `rec` as skip_fields(rec, count,
 * depth) steps over them; *cost gathers the visits charged in line. */
static int plan_fields(gp_avro_t *av, uint32_t rec, uint32_t count, int depth, int unions,
                       uint64_t *cost) {
        *cost += count;
        for (uint32_t i = 0; i < count; i++) {
                uint32_t k = av->kids[av->nodes[rec].kids + i];
                int rc;
                switch ((gp_av_type_t)av->nodes[k].type) {
                case GP_AV_INT:
                case GP_AV_LONG:
                case GP_AV_ENUM:
                        rc = plan_op(av, GP_AVOP_VARINT, 0, 0);
                        break;
                case GP_AV_BYTES:
                case GP_AV_STRING:
                        rc = plan_op(av, GP_AVOP_LEN, 0, 0);
                        break;
                case GP_AV_DOUBLE:
                        rc = plan_op(av, GP_AVOP_FIXED, 8, 0);
                        break;
                default: /* skip(k, depth + 1) */
                        rc = plan_value(av, k, depth + 1, unions, cost);
                }
                if (rc)
                        return -1;
        }
        return 0;
}

void gp_avro_plan(gp_avro_t *av) {
        av->n_ops = 0;
        for (uint32_t i = 0; i < av->n_nodes; i++)
                memset(av->nodes[i].plan, 0, sizeof(av->nodes[i].plan));
        for (uint32_t i = 0; i < av->n_nodes; i++) {
                gp_av_node_t *n = &av->nodes[i];
                if (n->type != GP_AV_RECORD)
                        continue;
                for (int k = 0; k < av->path_len && k < GP_AVRO_MAX_PATH; k++) {
                        if (n->step[k] < 0 || (uint32_t)n->step[k] > n->n)
                                continue;
                        uint64_t cost = 0;
                        int64_t at = plan_cost(av);
                        if (at < 0 || plan_fields(av, i, (uint32_t)n->step[k], 1, 0, &cost) ||
                            plan_op(av, GP_AVOP_END, 0, 0) || plan_set_cost(av, at, cost))
                                goto none;
                        av->nodes[i].plan[k] = (uint32_t)at + 1;
                }
        }
        return;
none: /* no plans: gp_avro_find walks the schema */
        for (uint32_t i = 0; i < av->n_nodes; i++)
                memset(av->nodes[i].plan, 0, sizeof(av->nodes[i].plan));
        av->n_ops = 0;
}

/* A length (of string or bytes) at p: steps p past it and its bytes, or
 * returns -1. One byte in line, longer ones by rd_long. */
GP_HOT int rd_skip_len(rd_t *r) {
        const uint8_t *p = r->p;
        if (GP_LIKELY(p < r->end && *p < 0x80)) {
                /* zig-zag: an odd byte is a negative length */
                size_t n = *p >> 1;
                if ((*p & 1) || n >= (size_t)(r->end - p))
                        return -1;
                r->p = p + 1 + n;
                return 0;
        }
        int64_t v;
        return rd_long_slow(r, &v) || rd_skip(r, v);
}

/* A BLOCKS op: skip_blocks' in-line case, the same bytes refused and the
 * same budget charged. */
GP_HOT gp_avro_rc_t run_blocks(rd_t *r, uint32_t how) {
        for (;;) {
                int64_t count;
                gp_avro_rc_t brc = block_next(r, &count);
                if (brc || count == 0)
                        return brc;
                if ((r->budget -= count) < 0 || (r->budget -= count) < 0)
                        return GP_AVRO_ERR_LIMIT;
                if (how == BLK_LEN) {
                        for (int64_t i = 0; i < count; i++)
                                if (rd_skip_len(r))
                                        return GP_AVRO_ERR_DATA;
                } else if (how == (BLK_MAP | BLK_LEN)) {
                        for (int64_t i = 0; i < count; i++)
                                if (rd_skip_len(r) || rd_skip_len(r))
                                        return GP_AVRO_ERR_DATA;
                } else {
                        int is_map = how == BLK_MAP;
                        for (int64_t i = 0; i < count; i++)
                                if ((is_map && rd_skip_len(r)) || rd_skip_long(r))
                                        return GP_AVRO_ERR_DATA;
                }
        }
}

/* Runs the plan from op (its COST) to its END. */
static gp_avro_rc_t run_plan(const gp_avro_t *av, const gp_av_op_t *op, rd_t *out) {
        int64_t v;
        gp_avro_rc_t rc = GP_AVRO_OK;
        /* a copy whose address is not taken: it stays in registers, and
         * goes back to *out around skip() */
        rd_t c = *out, *r = &c;
        /* the plan's COST, then its steps */
        if ((r->budget -= op->arg) < 0)
                return GP_AVRO_ERR_LIMIT;
        for (op++;; op++) {
                switch (op->op) {
                case GP_AVOP_COST:
                        if ((r->budget -= op->arg) < 0)
                                return GP_AVRO_ERR_LIMIT;
                        break;
                case GP_AVOP_VARINT:
                        if (rd_skip_long(r))
                                return GP_AVRO_ERR_DATA;
                        break;
                case GP_AVOP_LEN:
                        if (rd_skip_len(r))
                                return GP_AVRO_ERR_DATA;
                        break;
                case GP_AVOP_FIXED:
                        if (rd_skip(r, op->arg))
                                return GP_AVRO_ERR_DATA;
                        break;
                case GP_AVOP_NODE:
                        *out = c;
                        if ((rc = skip(av, op->arg, out, op->depth)))
                                return rc;
                        c = *out;
                        break;
                case GP_AVOP_BLOCKS:
                        if ((rc = run_blocks(r, op->arg)))
                                return rc;
                        break;
                case GP_AVOP_UNION:
                        if (rd_long(r, &v) || v < 0 || (uint64_t)v >= op->arg)
                                return GP_AVRO_ERR_DATA;
                        /* the branch's plan opens with its COST */
                        op = &av->ops[op[1 + v].arg];
                        if ((r->budget -= op->arg) < 0)
                                return GP_AVRO_ERR_LIMIT;
                        break;
                case GP_AVOP_JUMP:
                        op = &av->ops[op->arg] - 1;
                        break;
                default: /* END */
                        *out = c;
                        return GP_AVRO_OK;
                }
        }
}

gp_avro_rc_t gp_avro_find(const gp_avro_t *av, const void *buf, size_t len,
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
                if (n->plan[k] && av->ops)
                        rc = run_plan(av, &av->ops[n->plan[k] - 1], &r);
                else
                        rc = skip_fields(av, n, (uint32_t)n->step[k], &r, 1);
                if (rc)
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

int gp_avro_frame(const void *buf, size_t len, uint32_t *id, const uint8_t **body,
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

int gp_avro_val_ms(const gp_avro_val_t *v, gp_unit_t unit, int64_t *ms, const char **why) {
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
                        if (gp_time_from_int(v->i, unit, &t, why))
                                return -1;
                }
                break;
        case GP_AVF_STRING:
                if (gp_time_parse(v->s, v->len, unit, &t, why))
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
