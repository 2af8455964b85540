/* tests/fuzz/fuzz_jsonpath.c: libFuzzer target for gate/jsonpath.c.
 * Input: a path spec, a newline, then the document (no newline: the whole
 * input is the spec and the document is empty). The document is also
 * searched with a few fixed paths, so the scanner is exercised when the
 * spec does not compile. Depends on gate/jsonpath.h and libc only.
 * Invariants checked:
 *   - a compiled path has 1..GP_JPATH_MAX_SEGS segments, keys 1..63 bytes,
 *     NUL-terminated, free of '.', '[' and ']'; a failure has a message;
 *     "$." + spec compiles to the same segments;
 *   - gp_jpath_find returns one of the four codes; on GP_JSON_OK the value
 *     lies inside the document and has the shape of its type (a string
 *     between quotes, has_escapes iff it holds a backslash; a number token;
 *     OTHER starting with { [ t f n); on anything else *out is cleared;
 *   - the scanner does not read past the answer: cutting the document just
 *     after the byte that ends the value gives the same answer;
 *   - the same call twice gives the same answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/jsonpath.h"
#include "tests/fuzz/fuzz_check.h"

static int same_path(const gp_jpath_t *a, const gp_jpath_t *b) {
        if (a->nsegs != b->nsegs)
                return 0;
        for (int k = 0; k < a->nsegs; k++) {
                if (a->seg[k].is_index != b->seg[k].is_index)
                        return 0;
                if (a->seg[k].is_index
                            ? a->seg[k].index != b->seg[k].index
                            : (a->seg[k].keylen != b->seg[k].keylen ||
                               memcmp(a->seg[k].key, b->seg[k].key, a->seg[k].keylen) != 0))
                        return 0;
        }
        return 1;
}

static void check_compiled(const gp_jpath_t *p, const char *spec) {
        CHECK(p->nsegs >= 1 && p->nsegs <= GP_JPATH_MAX_SEGS);
        for (int k = 0; k < p->nsegs; k++) {
                if (p->seg[k].is_index)
                        continue;
                size_t n = p->seg[k].keylen;
                CHECK(n >= 1 && n < GP_JPATH_MAX_KEY);
                CHECK(p->seg[k].key[n] == '\0' && strlen(p->seg[k].key) == n);
                CHECK(strpbrk(p->seg[k].key, ".[]") == NULL);
        }
        if (spec[0] != '$' && spec[0] != '[' && strlen(spec) + 3 < 512) {
                char alt[512];
                gp_jpath_t q;
                snprintf(alt, sizeof alt, "$.%s", spec);
                CHECK(gp_jpath_compile(&q, alt, NULL, 0) == 0);
                CHECK(same_path(p, &q));
        }
}

static int is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void check_find(const gp_jpath_t *p, const char *doc, size_t len) {
        gp_jval_t v, w;
        memset(&v, 0x5a, sizeof v);
        gp_json_rc_t rc = gp_jpath_find(p, doc, len, &v);
        CHECK(rc == GP_JSON_OK || rc == GP_JSON_ERR_SYNTAX || rc == GP_JSON_ERR_MISSING ||
              rc == GP_JSON_ERR_DEPTH);
        CHECK(gp_jpath_find(p, doc, len, &w) == rc);
        if (rc != GP_JSON_OK) {
                CHECK(v.ptr == NULL && v.len == 0);
                return;
        }
        CHECK(w.ptr == v.ptr && w.len == v.len && w.type == v.type);
        CHECK(v.ptr >= doc && v.len <= len && (size_t)(v.ptr - doc) <= len - v.len);
        size_t end = (size_t)(v.ptr - doc) + v.len; /* one past the value */
        switch (v.type) {
        case GP_JSON_STRING:
                CHECK(v.ptr > doc && v.ptr[-1] == '"' && end < len && doc[end] == '"');
                CHECK(v.has_escapes == (memchr(v.ptr, '\\', v.len) != NULL));
                end++;
                break;
        case GP_JSON_NUMBER:
                CHECK(v.len >= 1);
                for (size_t k = 0; k < v.len; k++)
                        CHECK(strchr("-+.eE0123456789", v.ptr[k]) != NULL && v.ptr[k]);
                break;
        case GP_JSON_OTHER:
                CHECK(v.len >= 2 && strchr("{[tfn", v.ptr[0]) != NULL && v.ptr[0]);
                break;
        default:
                CHECK(0);
        }
        /* The value is followed (after blanks) by ',' or a closer, which is
         * the last byte the scanner may read. */
        while (end < len && is_blank(doc[end]))
                end++;
        CHECK(end < len && (doc[end] == ',' || doc[end] == '}' || doc[end] == ']'));
        size_t cut = end + 1;
        char *copy = malloc(cut);
        CHECK(copy != NULL);
        memcpy(copy, doc, cut);
        CHECK(gp_jpath_find(p, copy, cut, &w) == GP_JSON_OK);
        CHECK(w.ptr - copy == v.ptr - doc && w.len == v.len && w.type == v.type);
        free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const fixed[] = {"ts", "a.b", "[0]", "a[1].b"};
        const uint8_t *nl = memchr(data, '\n', size);
        size_t speclen = nl ? (size_t)(nl - data) : size;
        size_t doclen = nl ? size - speclen - 1 : 0;
        char *spec = malloc(speclen + 1);
        char *doc = malloc(doclen ? doclen : 1); /* exact size: ASan sees overreads */
        char err[128];
        gp_jpath_t p;

        CHECK(spec && doc);
        memcpy(spec, data, speclen);
        spec[speclen] = '\0';
        if (doclen)
                memcpy(doc, nl + 1, doclen);

        err[0] = 'x';
        if (gp_jpath_compile(&p, spec, err, sizeof err) == 0) {
                check_compiled(&p, spec);
                check_find(&p, doc, doclen);
        } else {
                CHECK(err[0] != '\0' && err[0] != 'x' && p.nsegs == 0);
        }
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
                CHECK(gp_jpath_compile(&p, fixed[k], NULL, 0) == 0);
                check_find(&p, doc, doclen);
        }
        free(spec);
        free(doc);
        return 0;
}
