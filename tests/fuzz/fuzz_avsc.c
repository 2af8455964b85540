/* tests/fuzz/fuzz_avsc.c: libFuzzer target for proxy/schema/avsc.c, the Avro
 * schema compiler. Input: the schema's JSON. It is compiled for the paths
 * avro:ts and avro:a.b; a schema that compiles also reads a few fixed byte
 * strings through gate/avro.c.
 * Depends on proxy/schema/avsc.h, gate/avro.h, gate/extract.h and libc.
 * Invariants checked:
 *   - the result is one of the three codes, the same for the same input;
 *   - a failure has a message and leaves the table empty (nothing to free);
 *   - a compiled table is well formed: the root and every child index are
 *     nodes, child ranges lie inside the kids array, unions have a branch,
 *     a logical type sits only on a long, a record's step for depth k is
 *     -1 or one of its fields (and -1 past the path);
 *   - compiling twice gives the same table;
 *   - reading with it returns one of the four codes and a string inside
 *     the buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/avro.h"
#include "gate/extract.h"
#include "proxy/schema/avsc.h"
#include "tests/fuzz/fuzz_check.h"

static void check_table(const gp_avro_t *av, const gp_extract_t *x) {
        CHECK(av->n_nodes >= 1 && av->n_nodes <= GP_AVRO_MAX_NODES && av->nodes);
        CHECK(av->n_nodes <= av->cap_nodes && av->n_kids <= av->cap_kids);
        CHECK(av->root < av->n_nodes);
        CHECK(av->path_len == x->avro_n);
        for (uint32_t i = 0; i < av->n_nodes; i++) {
                const gp_av_node_t *n = &av->nodes[i];
                CHECK(n->type <= GP_AV_RECORD);
                CHECK(n->logical <= GP_AV_LT_NANOS);
                CHECK(n->logical == GP_AV_LT_NONE || n->type == GP_AV_LONG);
                for (int k = 0; k < GP_AVRO_MAX_PATH; k++) {
                        if (n->type == GP_AV_RECORD && k < av->path_len)
                                CHECK(n->step[k] >= -1 && n->step[k] < (int64_t)n->n);
                        else
                                CHECK(n->step[k] == -1);
                }
                switch ((gp_av_type_t)n->type) {
                case GP_AV_UNION:
                        CHECK(n->n >= 1);
                        /* fall through */
                case GP_AV_RECORD:
                        CHECK(n->kids <= av->n_kids && n->n <= av->n_kids - n->kids);
                        for (uint32_t j = 0; j < n->n; j++)
                                CHECK(av->kids[n->kids + j] < av->n_nodes);
                        break;
                case GP_AV_ARRAY:
                case GP_AV_MAP:
                        CHECK(n->kids < av->n_nodes);
                        break;
                case GP_AV_ENUM:
                        CHECK(n->n >= 1);
                        break;
                default:
                        break;
                }
        }
}

static int same_table(const gp_avro_t *a, const gp_avro_t *b) {
        return a->n_nodes == b->n_nodes && a->n_kids == b->n_kids && a->root == b->root &&
               a->path_len == b->path_len &&
               memcmp(a->nodes, b->nodes, a->n_nodes * sizeof(*a->nodes)) == 0 &&
               (a->n_kids == 0 || memcmp(a->kids, b->kids, a->n_kids * sizeof(*a->kids)) == 0);
}

static void read_some(const gp_avro_t *av) {
        static const struct {
                const char *b;
                size_t n;
        } bodies[] = {
                {"", 0},
                {"\x00", 1},
                {"\x02\x04", 2},
                {"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02", 12},
                {"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 16},
                {"\x06"
                 "abc\x06"
                 "def\x02\x00\x02\x00\x14\x08",
                 12},
                {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x02", 11},
                {"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 15},
        };
        for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
                size_t n = bodies[k].n;
                uint8_t *b = malloc(n ? n : 1); /* exact size: ASan sees overreads */
                CHECK(b);
                memcpy(b, bodies[k].b, n);
                gp_avro_val_t v;
                gp_avro_rc_t rc = gp_avro_find(av, b, n, &v);
                CHECK(rc == GP_AVRO_OK || rc == GP_AVRO_ERR_DATA ||
                      rc == GP_AVRO_ERR_MISSING || rc == GP_AVRO_ERR_LIMIT);
                if (rc == GP_AVRO_OK && v.kind == GP_AVF_STRING) {
                        const uint8_t *s = (const uint8_t *)v.s;
                        CHECK(s >= b && v.len <= n && (size_t)(s - b) <= n - v.len);
                }
                free(b);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const specs[] = {"avro:ts", "avro:a.b"};
        for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
                gp_extract_t x;
                gp_avro_t av, again;
                gp_err_t err2;
                gp_err_t err;
                CHECK(gp_extract_compile(&x, specs[k], GP_UNIT_MS, err.msg, sizeof err.msg) ==
                      0);
                err.msg[0] = 'x';
                gp_errcode_t rc = gp_avsc_compile((const char *)data, size, &x, &av, &err);
                CHECK(rc == GP_OK || rc == GP_ERR_INVALID || rc == GP_ERR_NOT_FOUND);
                CHECK(gp_avsc_compile((const char *)data, size, &x, &again, &err2) == rc);
                if (rc != GP_OK) {
                        CHECK(err.msg[0] != '\0' && err.msg[0] != 'x' &&
                              memchr(err.msg, '\0', sizeof err.msg));
                        CHECK(strcmp(err.msg, err2.msg) == 0);
                        CHECK(av.n_nodes == 0 && av.nodes == NULL && av.kids == NULL);
                        continue;
                }
                check_table(&av, &x);
                CHECK(same_table(&av, &again));
                read_some(&av);
                gp_avro_free(&av);
                gp_avro_free(&again);
                CHECK(av.nodes == NULL && av.n_nodes == 0);
        }
        return 0;
}
