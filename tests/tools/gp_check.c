/* tests/tools/gp_check.c: gp-check, the independent checker of invariants
 * 1 to 3 (docs/DESIGN.md) (and the "nothing dropped" half of 7) on a real broker.
 *
 * It reads the source topic S and the colour topics (and the dead-letter
 * topic) from the beginning to their end as a read_committed consumer sees
 * them, and counts, per source partition p, the source records that are
 * missing from S.blue/p, S.green/p and the DLQ, the ones that are there too
 * often, the ones out of source order, and (given the cutoff) the ones on
 * the wrong side of T.
 *
 * With --survivor it judges a hand-over aborted with re-delivery instead:
 * the surviving colour must hold every source record (not in the DLQ)
 * exactly once, the records that went to the aborted colour re-delivered
 * in one block; the aborted colour holds each of its records once.
 *
 * Independent on purpose: it shares nothing with proxy/ and uses of gate/
 * only the strict time parser and the JSON path finder. Memory: the source
 * records are kept (one arena), the colour records only as a 16-byte
 * reference to the source record they match, so a run costs about the size
 * of the source topic plus 80 bytes a record. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "gate/control.h"
#include "gate/jsonpath.h"
#include "gate/timeparse.h"

#define NONE        UINT32_MAX
#define MAX_DETAILS 20
#define ARENA_BLOCK (1u << 20)
#define HDR_SOURCE  GP_HDR_SOURCE
#define HDR_ERROR   GP_HDR_ERROR

#define EXIT_OK       0
#define EXIT_PROBLEMS 1
#define EXIT_USAGE    2

/* Where a sink record was found. */
enum { W_NONE = 0, W_BLUE = 1, W_GREEN = 2, W_DLQ = 3 };
enum { C_BLUE = 0, C_GREEN = 1 };
enum { ET_KAFKA = 0, ET_JSON, ET_HEADER };

/* ---- small helpers ------------------------------------------------------- */

static void die_oom(void) {
        fputs("gp-check: out of memory\n", stderr);
        exit(EXIT_USAGE);
}

static void *xrealloc(void *p, size_t n) {
        void *q = realloc(p, n ? n : 1);
        if (!q)
                die_oom();
        return q;
}

/* Grows *arr (of *cap elements of size sz) to hold at least need. */
static void grow(void **arr, size_t *cap, size_t need, size_t sz) {
        if (need <= *cap)
                return;
        size_t n = *cap ? *cap : 64;
        while (n < need)
                n *= 2;
        if (n > SIZE_MAX / sz)
                die_oom();
        *arr = xrealloc(*arr, n * sz);
        *cap = n;
}

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- arena: the source records' bytes ------------------------------------ */

typedef struct blk {
        struct blk *next;
        size_t used, cap;
        uint8_t data[];
} blk_t;

typedef struct arena {
        blk_t *head;
        size_t total;
} arena_t;

static uint8_t *arena_copy(arena_t *a, const uint8_t *src, size_t n) {
        if (!a->head || a->head->cap - a->head->used < n) {
                size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
                blk_t *b = malloc(sizeof(*b) + cap);
                if (!b)
                        die_oom();
                b->next = a->head;
                b->used = 0;
                b->cap = cap;
                a->head = b;
        }
        uint8_t *p = a->head->data + a->head->used;
        if (n)
                memcpy(p, src, n);
        a->head->used += n;
        a->total += n;
        return p;
}

static void arena_free(arena_t *a) {
        blk_t *b = a->head;
        while (b) {
                blk_t *next = b->next;
                free(b);
                b = next;
        }
        a->head = NULL;
}

/* ---- a record's identity: key, value, headers, timestamp ---------------- */

/* The canonical encoding, compared byte for byte:
 *   u8 key-present, u32 len, key; u8 value-present, u32 len, value;
 *   u32 header count; per header: u32 name len, name, u8 present, u32 len,
 *   value; i64 timestamp. */
typedef struct buf {
        uint8_t *p;
        size_t len, cap;
} buf_t;

static void buf_put(buf_t *b, const void *src, size_t n) {
        void *arr = b->p;
        grow(&arr, &b->cap, b->len + n, 1);
        b->p = arr;
        if (n)
                memcpy(b->p + b->len, src, n);
        b->len += n;
}

static void buf_u32(buf_t *b, uint32_t v) {
        buf_put(b, &v, sizeof(v));
}

static void buf_bytes(buf_t *b, const void *p, size_t n) {
        uint8_t present = p != NULL;
        buf_put(b, &present, 1);
        buf_u32(b, (uint32_t)n);
        buf_put(b, p, p ? n : 0);
}

/* Encodes m into b. strip_gp drops the two headers the proxy adds to a
 * dead-letter record. */
static void encode(buf_t *b, const rd_kafka_message_t *m, bool strip_gp) {
        rd_kafka_headers_t *hdrs = NULL;
        rd_kafka_timestamp_type_t tstype;
        int64_t ts = rd_kafka_message_timestamp(m, &tstype);
        b->len = 0;
        buf_bytes(b, m->key, m->key ? m->key_len : 0);
        buf_bytes(b, m->payload, m->payload ? m->len : 0);

        size_t count_at = b->len;
        uint32_t count = 0;
        buf_u32(b, 0);
        if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
                const char *name;
                const void *val;
                size_t size;
                for (size_t i = 0; !rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
                     i++) {
                        if (strip_gp &&
                            (!strcmp(name, HDR_SOURCE) || !strcmp(name, HDR_ERROR)))
                                continue;
                        size_t nl = strlen(name);
                        buf_u32(b, (uint32_t)nl);
                        buf_put(b, name, nl);
                        buf_bytes(b, val, val ? size : 0);
                        count++;
                }
        }
        memcpy(b->p + count_at, &count, sizeof(count));
        buf_put(b, &ts, sizeof(ts));
}

static uint64_t mix64(uint64_t x) {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return x;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
        uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)n * 0xff51afd7ed558ccdULL);
        while (n >= 8) {
                uint64_t w;
                memcpy(&w, p, 8);
                h = mix64(h ^ w);
                p += 8;
                n -= 8;
        }
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
                w |= (uint64_t)p[i] << (8 * i);
        return mix64(h ^ w ^ ((uint64_t)n << 59));
}

/* ---- the data ------------------------------------------------------------ */

typedef struct src_rec {
        uint64_t hash;
        int64_t offset;
        int64_t ev; /* event time ms, when ev_ok */
        const uint8_t *blob;
        uint32_t bloblen;
        uint32_t seen;      /* times found in blue, green or the DLQ (with
                               --survivor: in the survivor or the DLQ) */
        uint32_t aseen;     /* --survivor: times found in the aborted colour */
        uint32_t next_same; /* next identical record in this partition */
        int32_t where_part; /* where it was found first */
        int64_t where_off;
        uint8_t where; /* W_* */
        uint8_t ev_ok;
} src_rec_t;

typedef struct src_part {
        src_rec_t *r;
        size_t n, cap;
} src_part_t;

/* One colour record that matched a source record. */
typedef struct col_ent {
        uint32_t pos; /* index of the source record in its partition */
        uint32_t dup; /* the source record had been found already */
        int64_t off;  /* offset in the colour topic */
} col_ent_t;

typedef struct col_part {
        col_ent_t *e;
        size_t n, cap;
} col_part_t;

/* Identical source records of one partition form a chain. */
typedef struct idx_ent {
        uint64_t hash;
        uint32_t part;
        uint32_t head, tail, cursor; /* cursor: first possibly unseen (seen,
                                        then for the aborted colour aseen) */
} idx_ent_t;

/* One transition of several (--hops): judged on the source offsets from
 * its since up to the next hop's since. */
typedef struct hop {
        int64_t cutoff;
        int old_c;
        char *since_arg;
        int64_t *since; /* per source partition */
} hop_t;

typedef struct chk {
        /* options */
        const char *bootstrap, *source, *dlq;
        char *blue, *green;
        bool have_cutoff, verbose;
        int64_t cutoff;
        int old_c; /* C_BLUE or C_GREEN, with the cutoff */
        int et_kind;
        gp_unit_t unit;
        gp_jpath_t path;
        const char *et_header;
        int timeout_ms;
        const char *since_arg; /* --since P:OFF,... */
        int64_t *since;        /* per source partition: judge routing from here */
        bool end_offsets;      /* --end-offsets: print them and stop */
        const char *hops_path; /* --hops FILE */
        hop_t *hops;
        size_t n_hops;
        const char **xconf; /* -X key=value, pairs */
        size_t n_xconf;
        int survivor; /* --survivor: C_BLUE or C_GREEN; -1 without */

        rd_kafka_t *rk;
        int n_src, n_col[2], n_dlq;

        src_part_t *src;
        arena_t arena;
        idx_ent_t *idx;
        size_t idx_mask;
        col_part_t *col[2];
        buf_t scratch;

        uint64_t checked, duplicates, missing, reordered, misrouted;
        uint64_t unreadable; /* source records whose event time cannot be read */
        uint64_t found[4];   /* sink records matched, by W_* */
        uint64_t dlq_other, dlq_nohdr;
        uint64_t redelivered, aborted; /* --survivor */
        uint64_t problems;
} chk_t;

/* One line of detail for the first MAX_DETAILS problems. */
__attribute__((format(printf, 2, 3))) static void problem(chk_t *c, const char *fmt, ...) {
        c->problems++;
        if (!c->verbose || c->problems > MAX_DETAILS)
                return;
        va_list ap;
        va_start(ap, fmt);
        fputs("gp-check: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void note(chk_t *c, const char *fmt, ...) {
        if (!c->verbose)
                return;
        va_list ap;
        va_start(ap, fmt);
        fputs("gp-check: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static const char *where_name(const chk_t *c, int w) {
        switch (w) {
        case W_BLUE:
                return c->blue;
        case W_GREEN:
                return c->green;
        case W_DLQ:
                return c->dlq;
        }
        return "?";
}

static const char *colour_word(int col) {
        return col == C_BLUE ? "blue" : "green";
}

/* ---- event time ---------------------------------------------------------- */

static bool event_time(const chk_t *c, const rd_kafka_message_t *m, int64_t *ev) {
        const char *why = NULL;
        switch (c->et_kind) {
        case ET_KAFKA: {
                rd_kafka_timestamp_type_t t;
                int64_t ts = rd_kafka_message_timestamp(m, &t);
                if (ts < 0)
                        return false;
                *ev = ts;
                return true;
        }
        case ET_HEADER: {
                rd_kafka_headers_t *h = NULL;
                const void *v = NULL;
                size_t n = 0;
                if (rd_kafka_message_headers(m, &h) || !h ||
                    rd_kafka_header_get_last(h, c->et_header, &v, &n) || !v)
                        return false;
                return gp_time_parse(v, n, c->unit, ev, &why) == 0;
        }
        case ET_JSON: {
                gp_jval_t v;
                if (!m->payload)
                        return false;
                if (gp_jpath_find(&c->path, m->payload, m->len, &v) != GP_JSON_OK)
                        return false;
                if (v.type == GP_JSON_NUMBER || (v.type == GP_JSON_STRING && !v.has_escapes))
                        return gp_time_parse(v.ptr, v.len, c->unit, ev, &why) == 0;
                return false;
        }
        }
        return false;
}

/* ---- the index of source records ----------------------------------------- */

static uint64_t slot_of(uint64_t hash, uint32_t part) {
        return mix64(hash ^ ((uint64_t)part * 0x9e3779b97f4a7c15ULL));
}

static bool same(const src_rec_t *r, uint64_t hash, const uint8_t *blob, size_t len) {
        return r->hash == hash && r->bloblen == len && !memcmp(r->blob, blob, len);
}

static void index_build(chk_t *c) {
        size_t total = 0, cap = 16;
        for (int p = 0; p < c->n_src; p++)
                total += c->src[p].n;
        while (cap < total * 2)
                cap *= 2;
        c->idx = malloc(cap * sizeof(*c->idx));
        if (!c->idx)
                die_oom();
        for (size_t i = 0; i < cap; i++)
                c->idx[i].head = NONE;
        c->idx_mask = cap - 1;

        for (int p = 0; p < c->n_src; p++) {
                src_part_t *sp = &c->src[p];
                for (size_t i = 0; i < sp->n; i++) {
                        src_rec_t *r = &sp->r[i];
                        size_t s = slot_of(r->hash, (uint32_t)p) & c->idx_mask;
                        for (;; s = (s + 1) & c->idx_mask) {
                                idx_ent_t *e = &c->idx[s];
                                if (e->head == NONE) {
                                        e->hash = r->hash;
                                        e->part = (uint32_t)p;
                                        e->head = e->tail = e->cursor = (uint32_t)i;
                                        break;
                                }
                                if (e->part == (uint32_t)p &&
                                    same(&sp->r[e->head], r->hash, r->blob, r->bloblen)) {
                                        sp->r[e->tail].next_same = (uint32_t)i;
                                        e->tail = (uint32_t)i;
                                        break;
                                }
                        }
                }
        }
}

/* The chain of source records in partition p identical to blob, or NULL. */
static idx_ent_t *index_find(chk_t *c, uint32_t p, uint64_t hash, const uint8_t *blob,
                             size_t len) {
        if (p >= (uint32_t)c->n_src)
                return NULL;
        src_part_t *sp = &c->src[p];
        for (size_t s = slot_of(hash, p) & c->idx_mask;; s = (s + 1) & c->idx_mask) {
                idx_ent_t *e = &c->idx[s];
                if (e->head == NONE)
                        return NULL;
                if (e->part == p && same(&sp->r[e->head], hash, blob, len))
                        return e;
        }
}

/* Takes the first unseen record of the chain e (unseen in the aborted
 * colour when aborted); if every one was seen, returns the head with *dup
 * set. */
static uint32_t chain_take_in(chk_t *c, uint32_t p, idx_ent_t *e, bool aborted, bool *dup) {
        src_part_t *sp = &c->src[p];
        while (e->cursor != NONE && (aborted ? sp->r[e->cursor].aseen : sp->r[e->cursor].seen))
                e->cursor = sp->r[e->cursor].next_same;
        *dup = e->cursor == NONE;
        return *dup ? e->head : e->cursor;
}

static uint32_t chain_take(chk_t *c, uint32_t p, idx_ent_t *e, bool *dup) {
        return chain_take_in(c, p, e, false, dup);
}

/* Before the aborted colour is read: every chain from its head again. */
static void index_rewind(chk_t *c) {
        for (size_t s = 0; s <= c->idx_mask; s++)
                if (c->idx[s].head != NONE)
                        c->idx[s].cursor = c->idx[s].head;
}

static void mark_found(chk_t *c, uint32_t p, uint32_t i, int where, int32_t wpart,
                       int64_t woff) {
        src_rec_t *r = &c->src[p].r[i];
        if (!r->seen++) {
                r->where = (uint8_t)where;
                r->where_part = wpart;
                r->where_off = woff;
        }
}

/* ---- Kafka --------------------------------------------------------------- */

static void kafka_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
        (void)rk;
        if (level <= 4) /* warnings and worse */
                fprintf(stderr, "gp-check: librdkafka %s: %s\n", fac, buf);
}

static rd_kafka_t *kafka_new(const chk_t *c) {
        char err[512], gid[64];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        unsigned seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
        snprintf(gid, sizeof(gid), "gp-check-%d-%08x", (int)getpid(), (unsigned)rand_r(&seed));
        /* A group id is needed by rd_kafka_assign() in librdkafka 2.0; the
         * consumer never joins it (no subscribe) and never commits. */
        const char *kv[][2] = {
                {"bootstrap.servers", c->bootstrap},
                {"group.id", gid},
                {"isolation.level", "read_committed"},
                {"enable.partition.eof", "true"},
                {"enable.auto.commit", "false"},
                {"enable.auto.offset.store", "false"},
                {"auto.offset.reset", "earliest"},
                {"allow.auto.create.topics", "false"},
                {"client.id", "gp-check"},
                /* The end of a partition is seen on an empty fetch: do not let
             * the broker hold that one for the default 500 ms. */
                {"fetch.wait.max.ms", "50"},
        };
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
                if (rd_kafka_conf_set(conf, kv[i][0], kv[i][1], err, sizeof(err)) !=
                    RD_KAFKA_CONF_OK) {
                        fprintf(stderr, "gp-check: %s: %s\n", kv[i][0], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        }
        for (size_t i = 0; i < c->n_xconf; i++) {
                if (rd_kafka_conf_set(conf, c->xconf[2 * i], c->xconf[2 * i + 1], err,
                                      sizeof(err)) != RD_KAFKA_CONF_OK) {
                        fprintf(stderr, "gp-check: -X %s: %s\n", c->xconf[2 * i], err);
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
        }
        rd_kafka_conf_set_log_cb(conf, kafka_log);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
        if (!rk) {
                fprintf(stderr, "gp-check: cannot create the consumer: %s\n", err);
                rd_kafka_conf_destroy(conf);
                return NULL;
        }
        rd_kafka_poll_set_consumer(rk);
        return rk;
}

/* The partition count of topic, or -1 with the reason printed. */
static int kafka_partitions(chk_t *c, const char *topic) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(c->rk, topic, NULL);
        if (!rkt) {
                fprintf(stderr, "gp-check: topic %s: %s\n", topic,
                        rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        int n = -1;
        rd_kafka_resp_err_t err = rd_kafka_metadata(c->rk, 0, rkt, &md,
                                                    c->timeout_ms > 0 ? c->timeout_ms : 30000);
        if (err) {
                fprintf(stderr, "gp-check: cannot read the metadata of topic %s from %s: %s\n",
                        topic, c->bootstrap, rd_kafka_err2str(err));
        } else if (md->topic_cnt != 1 || strcmp(md->topics[0].topic, topic)) {
                fprintf(stderr, "gp-check: the broker did not describe topic %s\n", topic);
        } else if (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                fprintf(stderr, "gp-check: topic %s does not exist on %s\n", topic,
                        c->bootstrap);
        } else if (md->topics[0].err) {
                fprintf(stderr, "gp-check: topic %s: %s\n", topic,
                        rd_kafka_err2str(md->topics[0].err));
        } else if (md->topics[0].partition_cnt <= 0) {
                fprintf(stderr, "gp-check: topic %s has no partitions\n", topic);
        } else {
                n = md->topics[0].partition_cnt;
        }
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return n;
}

typedef int (*on_msg_t)(chk_t *c, int topic, const rd_kafka_message_t *m);

/* Reads every partition of the given topics from the beginning to the end
 * (end: the first partition EOF, i.e. the last stable offset), calling
 * on_msg for each record. Gives up when nothing happens for timeout_ms.
 * 0, or -1 with the reason printed. */
static int kafka_read(chk_t *c, const char *const *topics, const int *nparts, int ntopics,
                      on_msg_t on_msg) {
        rd_kafka_topic_partition_list_t *tl = rd_kafka_topic_partition_list_new(16);
        int total = 0, done = 0, rc = 0;
        int base[8];
        for (int t = 0; t < ntopics; t++) {
                base[t] = total;
                total += nparts[t];
                for (int p = 0; p < nparts[t]; p++)
                        rd_kafka_topic_partition_list_add(tl, topics[t], p)->offset =
                                RD_KAFKA_OFFSET_BEGINNING;
        }
        bool *eof = calloc((size_t)total, sizeof(*eof));
        if (!eof)
                die_oom();
        rd_kafka_resp_err_t err = rd_kafka_assign(c->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        if (err) {
                fprintf(stderr, "gp-check: assign: %s\n", rd_kafka_err2str(err));
                free(eof);
                return -1;
        }

        int64_t t0 = now_ms(), last = t0;
        uint64_t n = 0;
        while (done < total) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 200);
                if (!m) {
                        char fatal[256];
                        if (rd_kafka_fatal_error(c->rk, fatal, sizeof(fatal))) {
                                fprintf(stderr, "gp-check: fatal Kafka error: %s\n", fatal);
                                rc = -1;
                                break;
                        }
                        if (c->timeout_ms > 0 && now_ms() - last > c->timeout_ms) {
                                fprintf(stderr,
                                        "gp-check: no progress for %d ms; partitions not "
                                        "read to their end:",
                                        c->timeout_ms);
                                int shown = 0;
                                for (int t = 0; t < ntopics; t++)
                                        for (int p = 0; p < nparts[t]; p++)
                                                if (!eof[base[t] + p] && shown++ < 10)
                                                        fprintf(stderr, " %s/%d", topics[t],
                                                                p);
                                fprintf(stderr, "%s\n", shown > 10 ? " ..." : "");
                                rc = -1;
                                break;
                        }
                        continue;
                }
                int t = -1;
                if (m->rkt) {
                        const char *name = rd_kafka_topic_name(m->rkt);
                        for (int i = 0; i < ntopics; i++)
                                if (!strcmp(name, topics[i])) {
                                        t = i;
                                        break;
                                }
                }
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        if (t >= 0 && m->partition >= 0 && m->partition < nparts[t] &&
                            !eof[base[t] + m->partition]) {
                                eof[base[t] + m->partition] = true;
                                done++;
                                last = now_ms();
                        }
                } else if (m->err) {
                        const char *what = t >= 0 ? topics[t] : "(consumer)";
                        bool hard = m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                                    m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
                                    m->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
                                    m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
                                    m->err == RD_KAFKA_RESP_ERR__FATAL;
                        fprintf(stderr, "gp-check: %s [%d]: %s\n", what, (int)m->partition,
                                rd_kafka_message_errstr(m));
                        if (hard) {
                                rd_kafka_message_destroy(m);
                                rc = -1;
                                break;
                        }
                } else if (t >= 0) {
                        last = now_ms();
                        n++;
                        if (on_msg(c, t, m)) {
                                rd_kafka_message_destroy(m);
                                rc = -1;
                                break;
                        }
                }
                rd_kafka_message_destroy(m);
        }
        rd_kafka_assign(c->rk, NULL);
        free(eof);
        if (!rc && c->verbose) {
                fprintf(stderr, "gp-check: read %" PRIu64 " records from", n);
                for (int t = 0; t < ntopics; t++)
                        fprintf(stderr, " %s(%d)", topics[t], nparts[t]);
                fprintf(stderr, " in %" PRId64 " ms\n", now_ms() - t0);
        }
        return rc;
}

/* ---- phase 1: the source ------------------------------------------------- */

static int on_source(chk_t *c, int topic, const rd_kafka_message_t *m) {
        (void)topic;
        if (m->partition < 0 || m->partition >= c->n_src)
                return 0;
        src_part_t *sp = &c->src[m->partition];
        if (sp->n >= NONE - 1) {
                fprintf(stderr, "gp-check: %s/%d: too many records\n", c->source,
                        (int)m->partition);
                return -1;
        }
        if (sp->n && m->offset <= sp->r[sp->n - 1].offset) {
                fprintf(stderr,
                        "gp-check: %s/%d: offset %" PRId64 " after %" PRId64
                        " (read twice?)\n",
                        c->source, (int)m->partition, m->offset, sp->r[sp->n - 1].offset);
                return -1;
        }
        void *arr = sp->r;
        grow(&arr, &sp->cap, sp->n + 1, sizeof(*sp->r));
        sp->r = arr;
        src_rec_t *r = &sp->r[sp->n++];
        memset(r, 0, sizeof(*r));
        encode(&c->scratch, m, false);
        r->hash = hash_bytes(c->scratch.p, c->scratch.len);
        r->blob = arena_copy(&c->arena, c->scratch.p, c->scratch.len);
        r->bloblen = (uint32_t)c->scratch.len;
        r->offset = m->offset;
        r->next_same = NONE;
        r->ev_ok = event_time(c, m, &r->ev);
        if (!r->ev_ok)
                c->unreadable++;
        c->checked++;
        return 0;
}

/* ---- phase 2: blue, green, DLQ ------------------------------------------- */

static void col_add(chk_t *c, int col, int32_t p, uint32_t pos, bool dup, int64_t off) {
        col_part_t *cp = &c->col[col][p];
        void *arr = cp->e;
        grow(&arr, &cp->cap, cp->n + 1, sizeof(*cp->e));
        cp->e = arr;
        cp->e[cp->n++] = (col_ent_t){.pos = pos, .dup = dup, .off = off};
}

static void report_dup(chk_t *c, const char *topic, int32_t p, int64_t off, uint32_t sp,
                       uint32_t i) {
        const src_rec_t *r = &c->src[sp].r[i];
        problem(c,
                "duplicate: %s/%d@%" PRId64 " is source %s/%u@%" PRId64
                ", already found in %s/%d@%" PRId64,
                topic, (int)p, off, c->source, sp, r->offset, where_name(c, r->where),
                (int)r->where_part, r->where_off);
}

static int on_colour(chk_t *c, int col, const rd_kafka_message_t *m) {
        const char *topic = col == C_BLUE ? c->blue : c->green;
        int32_t p = m->partition;
        encode(&c->scratch, m, false);
        uint64_t h = hash_bytes(c->scratch.p, c->scratch.len);
        idx_ent_t *e = index_find(c, (uint32_t)p, h, c->scratch.p, c->scratch.len);
        if (!e) {
                c->duplicates++;
                problem(c, "duplicate: %s/%d@%" PRId64 " matches no record of %s/%d (extra)",
                        topic, (int)p, m->offset, c->source, (int)p);
                return 0;
        }
        bool dup;
        if (c->survivor >= 0 && col != c->survivor) {
                /* The aborted colour: each record once there; its copy in the
                 * survivor is the re-delivery, not a duplicate. */
                uint32_t i = chain_take_in(c, (uint32_t)p, e, true, &dup);
                if (dup) {
                        c->duplicates++;
                        problem(c,
                                "duplicate: %s/%d@%" PRId64 " is source %s/%d@%" PRId64
                                ", found in %s (the aborted colour) already",
                                topic, (int)p, m->offset, c->source, (int)p,
                                c->src[p].r[i].offset, topic);
                }
                c->src[p].r[i].aseen++;
                c->found[col == C_BLUE ? W_BLUE : W_GREEN]++;
                col_add(c, col, p, i, dup, m->offset);
                return 0;
        }
        uint32_t i = chain_take(c, (uint32_t)p, e, &dup);
        if (dup) {
                c->duplicates++;
                report_dup(c, topic, p, m->offset, (uint32_t)p, i);
        }
        mark_found(c, (uint32_t)p, i, col == C_BLUE ? W_BLUE : W_GREEN, p, m->offset);
        c->found[col == C_BLUE ? W_BLUE : W_GREEN]++;
        col_add(c, col, p, i, dup, m->offset);
        return 0;
}

/* Parses "S/p/offset" (a topic name has no '/'). */
static bool parse_source_hdr(const char *v, size_t n, const char **topic, size_t *tlen,
                             int64_t *part, int64_t *off) {
        const char *why;
        const char *s2 = NULL, *s1 = NULL;
        for (size_t i = n; i-- > 0;)
                if (v[i] == '/') {
                        if (!s2)
                                s2 = v + i;
                        else {
                                s1 = v + i;
                                break;
                        }
                }
        if (!s1 || s1 == v)
                return false;
        *topic = v;
        *tlen = (size_t)(s1 - v);
        return gp_parse_i64(s1 + 1, (size_t)(s2 - s1 - 1), part, &why) == 0 &&
               gp_parse_i64(s2 + 1, (size_t)(v + n - s2 - 1), off, &why) == 0;
}

/* Index of the record with offset off in partition p, or NONE. */
static uint32_t src_by_offset(const chk_t *c, uint32_t p, int64_t off) {
        const src_part_t *sp = &c->src[p];
        size_t lo = 0, hi = sp->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (sp->r[mid].offset < off)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < sp->n && sp->r[lo].offset == off ? (uint32_t)lo : NONE;
}

static int on_dlq(chk_t *c, const rd_kafka_message_t *m) {
        rd_kafka_headers_t *hdrs = NULL;
        const void *v = NULL;
        size_t n = 0;
        const char *topic;
        size_t tlen;
        int64_t part, off;
        if (rd_kafka_message_headers(m, &hdrs) || !hdrs ||
            rd_kafka_header_get_last(hdrs, HDR_SOURCE, &v, &n) || !v) {
                c->dlq_nohdr++;
                note(c, "note: %s/%d@%" PRId64 " has no %s header; ignored", c->dlq,
                     (int)m->partition, m->offset, HDR_SOURCE);
                return 0;
        }
        if (!parse_source_hdr(v, n, &topic, &tlen, &part, &off)) {
                c->dlq_nohdr++;
                note(c,
                     "note: %s/%d@%" PRId64
                     ": %s '%.*s' is not TOPIC/PARTITION/OFFSET; ignored",
                     c->dlq, (int)m->partition, m->offset, HDR_SOURCE,
                     (int)(n > 200 ? 200 : n), (const char *)v);
                return 0;
        }
        if (tlen != strlen(c->source) || memcmp(topic, c->source, tlen)) {
                c->dlq_other++; /* another source topic of the same proxy */
                return 0;
        }
        if (part < 0 || part >= c->n_src) {
                c->duplicates++;
                problem(c,
                        "duplicate: %s/%d@%" PRId64 " names %s/%" PRId64
                        ", a partition that does not exist (extra)",
                        c->dlq, (int)m->partition, m->offset, c->source, part);
                return 0;
        }
        uint32_t p = (uint32_t)part;
        encode(&c->scratch, m, true);
        uint64_t h = hash_bytes(c->scratch.p, c->scratch.len);

        /* The record the header names, if it is identical and not yet found;
         * otherwise any identical record of that partition. */
        uint32_t i = src_by_offset(c, p, off);
        bool dup = false;
        if (i == NONE || !same(&c->src[p].r[i], h, c->scratch.p, c->scratch.len)) {
                if (i == NONE)
                        note(c,
                             "note: %s/%d@%" PRId64 " names %s/%u@%" PRId64
                             ", which is not in the source",
                             c->dlq, (int)m->partition, m->offset, c->source, p, off);
                else
                        note(c,
                             "note: %s/%d@%" PRId64 " differs from %s/%u@%" PRId64
                             ", the record its header names",
                             c->dlq, (int)m->partition, m->offset, c->source, p, off);
                i = NONE;
        }
        if (i == NONE || c->src[p].r[i].seen) {
                idx_ent_t *e = index_find(c, p, h, c->scratch.p, c->scratch.len);
                if (!e) {
                        c->duplicates++;
                        problem(c,
                                "duplicate: %s/%d@%" PRId64
                                " matches no record of %s/%u (extra)",
                                c->dlq, (int)m->partition, m->offset, c->source, p);
                        return 0;
                }
                i = chain_take(c, p, e, &dup);
        }
        if (dup) {
                c->duplicates++;
                report_dup(c, c->dlq, m->partition, m->offset, p, i);
        }
        mark_found(c, p, i, W_DLQ, m->partition, m->offset);
        c->found[W_DLQ]++;
        return 0;
}

static int on_sink(chk_t *c, int topic, const rd_kafka_message_t *m) {
        if (c->survivor >= 0 && topic != c->survivor)
                c->aborted++;
        if (m->partition < 0 || m->partition >= c->n_col[topic])
                return 0;
        if (m->partition >= c->n_src) {
                c->duplicates++;
                problem(c,
                        "duplicate: %s/%d@%" PRId64 " is in a partition %s does not have "
                        "(extra)",
                        topic == 0 ? c->blue : c->green, (int)m->partition, m->offset,
                        c->source);
                return 0;
        }
        return on_colour(c, topic, m);
}

static int on_blue(chk_t *c, int topic, const rd_kafka_message_t *m) {
        (void)topic;
        return on_sink(c, C_BLUE, m);
}

static int on_green(chk_t *c, int topic, const rd_kafka_message_t *m) {
        (void)topic;
        return on_sink(c, C_GREEN, m);
}

static int on_dlq_msg(chk_t *c, int topic, const rd_kafka_message_t *m) {
        (void)topic;
        return on_dlq(c, m);
}

/* ---- the verdicts -------------------------------------------------------- */

static void check_missing(chk_t *c) {
        for (int p = 0; p < c->n_src; p++) {
                const src_part_t *sp = &c->src[p];
                for (size_t i = 0; i < sp->n; i++) {
                        if (sp->r[i].seen)
                                continue;
                        c->missing++;
                        problem(c, "missing: %s/%d@%" PRId64 " is in none of %s, %s%s%s",
                                c->source, p, sp->r[i].offset, c->blue, c->green,
                                c->dlq ? ", " : "", c->dlq ? c->dlq : "");
                }
        }
}

/* --survivor: every source record in the survivor or the DLQ, and every
 * record of the aborted colour in the survivor (re-delivered). The
 * survivor is read first, so a record found there has where == it. */
static void check_missing_survivor(chk_t *c) {
        int w_surv = c->survivor == C_BLUE ? W_BLUE : W_GREEN;
        const char *surv = c->survivor == C_BLUE ? c->blue : c->green;
        const char *ab = c->survivor == C_BLUE ? c->green : c->blue;
        for (int p = 0; p < c->n_src; p++) {
                const src_part_t *sp = &c->src[p];
                for (size_t i = 0; i < sp->n; i++) {
                        const src_rec_t *r = &sp->r[i];
                        bool in_surv = r->seen && r->where == w_surv;
                        if (in_surv && r->aseen)
                                c->redelivered++;
                        if (!r->seen) {
                                c->missing++;
                                problem(c, "missing: %s/%d@%" PRId64 " is %s %s%s%s%s",
                                        c->source, p, r->offset,
                                        c->dlq ? "in neither" : "not in", surv,
                                        c->dlq ? " nor " : "", c->dlq ? c->dlq : "",
                                        r->aseen ? " (it is in the aborted colour)" : "");
                        } else if (!in_surv && r->aseen) {
                                c->missing++;
                                problem(c,
                                        "missing: %s/%d@%" PRId64 " is in %s (the aborted "
                                        "colour) but was not re-delivered to %s",
                                        c->source, p, r->offset, ab, surv);
                        }
                }
        }
}

/* Marks in in[] the entries of cp->e[from, to) on a longest increasing
 * subsequence of source positions, duplicates left out. tail and prev:
 * scratch of cp->n entries. O(n log n). */
static void lis_mark(const col_part_t *cp, size_t from, size_t to, bool *in, size_t *tail,
                     size_t *prev) {
        size_t len = 0;
        for (size_t i = from; i < to; i++) {
                if (cp->e[i].dup)
                        continue;
                uint32_t v = cp->e[i].pos;
                size_t lo = 0, hi = len;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (cp->e[tail[mid]].pos < v)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                prev[i] = lo ? tail[lo - 1] : SIZE_MAX;
                tail[lo] = i;
                if (lo == len)
                        len++;
        }
        for (size_t k = len ? tail[len - 1] : SIZE_MAX; k != SIZE_MAX; k = prev[k])
                in[k] = true;
}

/* Records out of source order in one colour partition: those outside a
 * longest increasing subsequence of source positions (the fewest records
 * that would have to move). Duplicates are left out: they are counted
 * already.
 *
 * In the survivor (--survivor) the partition is two such runs, cut at its
 * first record that is also in the aborted colour (the re-delivered block
 * begins there): before it, the records routed to the survivor up to the
 * abort; from it on, the re-delivered ones and then those after the abort.
 * Each run is judged on its own, so the one step back where the block
 * begins is allowed, and nothing else. Without such a record: one run. */
static void check_order(chk_t *c, int col, int p) {
        const col_part_t *cp = &c->col[col][p];
        if (cp->n < 2)
                return;
        size_t *tail = malloc(cp->n * sizeof(*tail)); /* index into cp->e */
        size_t *prev = malloc(cp->n * sizeof(*prev));
        bool *in = calloc(cp->n, sizeof(*in));
        if (!tail || !prev || !in)
                die_oom();
        size_t cut = cp->n;
        if (col == c->survivor)
                for (size_t i = 0; i < cp->n; i++)
                        if (!cp->e[i].dup && c->src[p].r[cp->e[i].pos].aseen) {
                                cut = i;
                                break;
                        }
        lis_mark(cp, 0, cut, in, tail, prev);
        lis_mark(cp, cut, cp->n, in, tail, prev);
        const char *topic = col == C_BLUE ? c->blue : c->green;
        for (size_t i = 0; i < cp->n; i++) {
                if (cp->e[i].dup || in[i])
                        continue;
                c->reordered++;
                if (cut == cp->n)
                        problem(c,
                                "reordered: %s/%d@%" PRId64 " (source %s/%d@%" PRId64
                                ") is out of source order",
                                topic, p, cp->e[i].off, c->source, p,
                                c->src[p].r[cp->e[i].pos].offset);
                else
                        problem(c,
                                "reordered: %s/%d@%" PRId64 " (source %s/%d@%" PRId64
                                ") is out of source order %s the re-delivered block that "
                                "begins at %s/%d@%" PRId64,
                                topic, p, cp->e[i].off, c->source, p,
                                c->src[p].r[cp->e[i].pos].offset,
                                i < cut ? "before" : "in or after", topic, p, cp->e[cut].off);
        }
        free(tail);
        free(prev);
        free(in);
}

/* OLD may hold no record with ts >= T. NEW may hold a record with ts < T
 * only after the close, so not before a record the partition sent to OLD
 * later in source order. Unreadable event times are never misrouted. */
/* The transition with cutoff T and old colour `old`, judged on the source
 * records of partition p with from <= offset < until. */
static void check_routing_window(chk_t *c, int p, int64_t cutoff, int old, int64_t from,
                                 int64_t until) {
        int neu = 1 - old;
        const src_part_t *sp = &c->src[p];
        const col_part_t *op = p < c->n_col[old] ? &c->col[old][p] : NULL;
        const col_part_t *np = p < c->n_col[neu] ? &c->col[neu][p] : NULL;
        int64_t last_old = -1;
        if (op)
                for (size_t i = 0; i < op->n; i++) {
                        const col_ent_t *e = &op->e[i];
                        const src_rec_t *r = &sp->r[e->pos];
                        if (r->offset < from || r->offset >= until)
                                continue; /* routed in another transition */
                        if ((int64_t)e->pos > last_old)
                                last_old = e->pos;
                        if (r->ev_ok && r->ev >= cutoff) {
                                c->misrouted++;
                                problem(c,
                                        "misrouted: %s/%d@%" PRId64 " (source %s/%d@%" PRId64
                                        ") has event time %" PRId64 " >= cutoff %" PRId64
                                        " but is in OLD (%s)",
                                        old == C_BLUE ? c->blue : c->green, p, e->off,
                                        c->source, p, r->offset, r->ev, cutoff,
                                        colour_word(old));
                        }
                }
        if (np)
                for (size_t i = 0; i < np->n; i++) {
                        const col_ent_t *e = &np->e[i];
                        const src_rec_t *r = &sp->r[e->pos];
                        if (r->offset >= from && r->offset < until && r->ev_ok &&
                            r->ev < cutoff && (int64_t)e->pos < last_old) {
                                c->misrouted++;
                                problem(c,
                                        "misrouted: %s/%d@%" PRId64 " (source %s/%d@%" PRId64
                                        ") has event time %" PRId64 " < cutoff %" PRId64
                                        " and is in NEW (%s) before the close: the later "
                                        "source record %s/%d@%" PRId64 " went to OLD",
                                        neu == C_BLUE ? c->blue : c->green, p, e->off,
                                        c->source, p, r->offset, r->ev, cutoff,
                                        colour_word(neu), c->source, p,
                                        sp->r[last_old].offset);
                        }
                }
}

static void check_routing(chk_t *c, int p) {
        if (!c->n_hops) {
                check_routing_window(c, p, c->cutoff, c->old_c, c->since ? c->since[p] : 0,
                                     INT64_MAX);
                return;
        }
        for (size_t h = 0; h < c->n_hops; h++)
                check_routing_window(c, p, c->hops[h].cutoff, c->hops[h].old_c,
                                     c->hops[h].since[p],
                                     h + 1 < c->n_hops ? c->hops[h + 1].since[p] : INT64_MAX);
}

/* ---- command line -------------------------------------------------------- */

static void usage(FILE *f) {
        fputs("usage: gp-check --bootstrap HOST:PORT --source S [--blue S.blue] [--green "
              "S.green]\n"
              "                [--dlq TOPIC] [--cutoff T --old blue|green [--since "
              "P:OFF,...]\n"
              "                               | --hops FILE | --survivor blue|green]\n"
              "                [--end-offsets]\n"
              "                [--event-time kafka-timestamp|json:PATH|header:NAME] [--unit "
              "ms|s|us]\n"
              "                [--timeout-ms 30000] [-X key=value]... [--verbose]\n"
              "\n"
              "Checks what gate-proxy wrote, independently of gate-proxy. Run it when no\n"
              "transaction is open (proxy stopped or idle): it reads every partition of S,\n"
              "S.blue, S.green (and the DLQ) from the beginning to the end as a\n"
              "read_committed consumer sees them (plain assignment, no group membership,\n"
              "nothing committed), then compares, per source partition p, the records of\n"
              "S/p with S.blue/p, S.green/p and the DLQ records whose header\n"
              "gate-proxy.source is \"S/p/OFFSET\".\n"
              "\n"
              "A record's identity is its key, value, headers and timestamp, byte for byte\n"
              "(for a DLQ record the headers gate-proxy.source and gate-proxy.error are left\n"
              "out). Identical records in one source partition are counted as a multiset.\n"
              "\n"
              "It prints one line on stdout:\n"
              "  checked=N duplicates=D missing=M reordered=R misrouted=X\n"
              "  checked     source records examined (all partitions)\n"
              "  missing     source records found in none of blue, green, DLQ (lost)\n"
              "  duplicates  records found more often in blue+green+DLQ than in the source\n"
              "              (in both colours, twice in one), plus records in a colour topic\n"
              "              or the DLQ that match no source record of that partition\n"
              "  reordered   records of a colour partition out of their source order: those\n"
              "              outside a longest in-order subsequence (one swap counts 1)\n"
              "  misrouted   only with --cutoff and --old (NEW is the other colour), judged "
              "on\n"
              "              the source record's event time ts:\n"
              "                ts >= T in OLD;\n"
              "                ts < T in NEW before the close, i.e. before (in source order)\n"
              "                the last record its partition sent to OLD.\n"
              "              Records whose event time cannot be read are never misrouted\n"
              "              (they belong in the DLQ, or in OLD with bad-record=route-old).\n"
              "\n"
              "With --survivor C (a hand-over aborted after T, its records re-delivered to\n"
              "the surviving colour C; ABORTED is the other colour) the line ends with two\n"
              "more counts and the verdicts are:\n"
              "  checked=N duplicates=D missing=M reordered=R misrouted=0 redelivered=B "
              "aborted=A\n"
              "  missing     source records in neither C nor the DLQ, and records of ABORTED\n"
              "              that are not in C (not re-delivered)\n"
              "  duplicates  records more than once in C, in C and in the DLQ, more than "
              "once\n"
              "              in ABORTED, plus records in C, ABORTED or the DLQ that match no\n"
              "              source record of that partition. A record in both C and ABORTED\n"
              "              is the re-delivery, not a duplicate.\n"
              "  reordered   per partition, C's records (duplicates left out) must be two "
              "runs\n"
              "              in source order, cut at the first record that is also in "
              "ABORTED\n"
              "              (the re-delivered block begins there): before the cut, what C\n"
              "              got up to the abort; from it on, the re-delivered records, then\n"
              "              those after the abort. Counted: the records outside a longest\n"
              "              in-order subsequence of each run, so the one step back to the\n"
              "              block is allowed and any other is not (a partition with nothing\n"
              "              re-delivered is one run). ABORTED's records are judged as "
              "without\n"
              "              --survivor (one run in source order).\n"
              "  redelivered the source records found both in C and in ABORTED (all\n"
              "              partitions); equals aborted when every record of ABORTED came\n"
              "              back\n"
              "  aborted     the records ABORTED holds (all partitions)\n"
              "\n"
              "Options:\n"
              "  --bootstrap HOST:PORT  the broker (required)\n"
              "  --source S             the source topic (required)\n"
              "  --blue TOPIC           default S.blue\n"
              "  --green TOPIC          default S.green\n"
              "  --dlq TOPIC            the dead-letter topic; without it, records the proxy\n"
              "                         sent there count as missing. DLQ records of other\n"
              "                         source topics are ignored.\n"
              "  --cutoff T             the cutoff: epoch ms, or RFC 3339\n"
              "                         (2026-01-02T03:04:05.678Z)\n"
              "  --old blue|green       the colour that owned traffic before the transition\n"
              "  --since P:OFF,...      judge the routing only from these source offsets on\n"
              "                         (the records of earlier transitions are left out)\n"
              "  --end-offsets          print the source's end offsets as P:OFF,... and stop\n"
              "  --hops FILE            judge several transitions in one run (instead of\n"
              "                         --cutoff, --old, --since): one line per transition,\n"
              "                         in order, \"T OLD P:OFF,...\" (the --end-offsets at "
              "its\n"
              "                         start); each is judged on the source offsets from "
              "its\n"
              "                         own up to the next line's. Blank lines and lines\n"
              "                         starting with # are skipped\n"
              "  --survivor blue|green  judge a hand-over aborted with re-delivery, this\n"
              "                         colour surviving (see above); not with --cutoff,\n"
              "                         --old, --since or --hops: the split by T is not\n"
              "                         judged\n"
              "  --event-time SPEC      how to read the event time, as the proxy's\n"
              "                         gate.event-time: kafka-timestamp (default), "
              "json:PATH\n"
              "                         (e.g. json:ts, json:a.b[0].t; a number in --unit or "
              "a\n"
              "                         string: number or RFC 3339), header:NAME\n"
              "  --unit ms|s|us         unit of a numeric event time (default ms)\n"
              "  --timeout-ms N         give up (exit 2) when reading makes no progress for "
              "N\n"
              "                         ms (default 30000; 0 = wait for ever)\n"
              "  -X key=value           a librdkafka consumer property (repeatable)\n"
              "  --verbose              on stderr: read statistics and the first 20 problems\n"
              "                         (topic/partition@offset and why)\n"
              "  --help                 this text\n"
              "\n"
              "Exit status: 0 all of duplicates, missing, reordered, misrouted are 0;\n"
              "1 some are not; 2 usage error or Kafka error (e.g. a topic does not exist).\n"
              "\n"
              "Examples:\n"
              "  gp-check --bootstrap 127.0.0.1:19092 --source orders\n"
              "  gp-check --bootstrap 127.0.0.1:19092 --source orders --dlq p1.dlq \\\n"
              "           --cutoff 1767225600000 --old blue --event-time json:ts --verbose\n"
              "  gp-check --bootstrap 127.0.0.1:19092 --source orders --dlq p1.dlq \\\n"
              "           --survivor blue --verbose\n",
              f);
}

static char *dup_suffix(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        char *r = malloc(a + b + 1);
        if (!r)
                die_oom();
        memcpy(r, s, a);
        memcpy(r + a, suffix, b + 1);
        return r;
}

static char *xstrdup(const char *s) {
        return dup_suffix(s, "");
}

/* 0, 1 (help printed) or -1 (usage error printed). */
static int parse_args(chk_t *c, int argc, char **argv) {
        enum {
                O_BOOT = 256,
                O_SRC,
                O_BLUE,
                O_GREEN,
                O_DLQ,
                O_CUT,
                O_OLD,
                O_ET,
                O_UNIT,
                O_TMO,
                O_SINCE,
                O_END,
                O_HOPS,
                O_SURV
        };
        static const struct option opts[] = {
                {"bootstrap", required_argument, NULL, O_BOOT},
                {"source", required_argument, NULL, O_SRC},
                {"blue", required_argument, NULL, O_BLUE},
                {"green", required_argument, NULL, O_GREEN},
                {"dlq", required_argument, NULL, O_DLQ},
                {"cutoff", required_argument, NULL, O_CUT},
                {"old", required_argument, NULL, O_OLD},
                {"event-time", required_argument, NULL, O_ET},
                {"unit", required_argument, NULL, O_UNIT},
                {"timeout-ms", required_argument, NULL, O_TMO},
                {"since", required_argument, NULL, O_SINCE},
                {"end-offsets", no_argument, NULL, O_END},
                {"hops", required_argument, NULL, O_HOPS},
                {"survivor", required_argument, NULL, O_SURV},
                {"verbose", no_argument, NULL, 'v'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        const char *blue = NULL, *green = NULL, *cut = NULL, *old = NULL, *surv = NULL;
        const char *et = "kafka-timestamp", *why = NULL;
        int o;
        c->old_c = -1;
        c->survivor = -1;
        c->timeout_ms = 30000;
        c->unit = GP_UNIT_MS;
        opterr = 0;
        while ((o = getopt_long(argc, argv, ":vhX:", opts, NULL)) != -1) {
                switch (o) {
                case O_BOOT:
                        c->bootstrap = optarg;
                        break;
                case O_SRC:
                        c->source = optarg;
                        break;
                case O_BLUE:
                        blue = optarg;
                        break;
                case O_GREEN:
                        green = optarg;
                        break;
                case O_DLQ:
                        c->dlq = optarg;
                        break;
                case O_SINCE:
                        c->since_arg = optarg;
                        break;
                case O_END:
                        c->end_offsets = true;
                        break;
                case O_HOPS:
                        c->hops_path = optarg;
                        break;
                case O_SURV:
                        surv = optarg;
                        break;
                case O_CUT:
                        cut = optarg;
                        break;
                case O_OLD:
                        old = optarg;
                        break;
                case O_ET:
                        et = optarg;
                        break;
                case O_UNIT:
                        if (!strcmp(optarg, "ms"))
                                c->unit = GP_UNIT_MS;
                        else if (!strcmp(optarg, "s"))
                                c->unit = GP_UNIT_S;
                        else if (!strcmp(optarg, "us"))
                                c->unit = GP_UNIT_US;
                        else {
                                fprintf(stderr, "gp-check: --unit %s: not ms, s or us\n",
                                        optarg);
                                return -1;
                        }
                        break;
                case O_TMO: {
                        int64_t v;
                        if (gp_parse_i64(optarg, strlen(optarg), &v, &why) || v < 0 ||
                            v > INT32_MAX) {
                                fprintf(stderr,
                                        "gp-check: --timeout-ms %s: not a number of ms "
                                        "(0 to 2147483647)\n",
                                        optarg);
                                return -1;
                        }
                        c->timeout_ms = (int)v;
                        break;
                }
                case 'X': {
                        char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg) {
                                fprintf(stderr, "gp-check: -X %s: expected key=value\n",
                                        optarg);
                                return -1;
                        }
                        *eq = '\0';
                        c->xconf =
                                xrealloc(c->xconf, (c->n_xconf + 1) * 2 * sizeof(*c->xconf));
                        c->xconf[2 * c->n_xconf] = optarg;
                        c->xconf[2 * c->n_xconf + 1] = eq + 1;
                        c->n_xconf++;
                        break;
                }
                case 'v':
                        c->verbose = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                case ':':
                        fprintf(stderr, "gp-check: %s needs a value (see --help)\n",
                                argv[optind - 1]);
                        return -1;
                default:
                        fprintf(stderr, "gp-check: unknown option %s (see --help)\n",
                                argv[optind - 1]);
                        return -1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "gp-check: unexpected argument '%s' (see --help)\n",
                        argv[optind]);
                return -1;
        }
        if (!c->bootstrap || !c->source || !*c->source) {
                fprintf(stderr,
                        "gp-check: --bootstrap and --source are required (see --help)\n");
                return -1;
        }
        if (!cut != !old) {
                fprintf(stderr, "gp-check: --cutoff and --old go together\n");
                return -1;
        }
        if (surv && (cut || old || c->since_arg || c->hops_path)) {
                fprintf(stderr,
                        "gp-check: --survivor judges a hand-over aborted with re-delivery "
                        "and takes none of --cutoff, --old, --since, --hops (the split by T "
                        "is not judged then)\n");
                return -1;
        }
        if (surv) {
                if (!strcmp(surv, "blue"))
                        c->survivor = C_BLUE;
                else if (!strcmp(surv, "green"))
                        c->survivor = C_GREEN;
                else {
                        fprintf(stderr, "gp-check: --survivor %s: not blue or green\n", surv);
                        return -1;
                }
        }
        if (c->hops_path && (cut || c->since_arg)) {
                fprintf(stderr, "gp-check: --hops replaces --cutoff, --old and --since\n");
                return -1;
        }
        if (cut) {
                if (gp_time_parse(cut, strlen(cut), GP_UNIT_MS, &c->cutoff, &why)) {
                        fprintf(stderr, "gp-check: --cutoff %s: %s (epoch ms or RFC 3339)\n",
                                cut, why ? why : "not a time");
                        return -1;
                }
                if (!strcmp(old, "blue"))
                        c->old_c = C_BLUE;
                else if (!strcmp(old, "green"))
                        c->old_c = C_GREEN;
                else {
                        fprintf(stderr, "gp-check: --old %s: not blue or green\n", old);
                        return -1;
                }
                c->have_cutoff = true;
        }
        if (!strcmp(et, "kafka-timestamp")) {
                c->et_kind = ET_KAFKA;
        } else if (!strncmp(et, "json:", 5)) {
                char err[256];
                c->et_kind = ET_JSON;
                if (gp_jpath_compile(&c->path, et + 5, err, sizeof(err))) {
                        fprintf(stderr, "gp-check: --event-time %s: %s\n", et, err);
                        return -1;
                }
        } else if (!strncmp(et, "header:", 7) && et[7]) {
                c->et_kind = ET_HEADER;
                c->et_header = et + 7;
        } else {
                fprintf(stderr,
                        "gp-check: --event-time %s: not kafka-timestamp, json:PATH or "
                        "header:NAME\n",
                        et);
                return -1;
        }
        c->blue = blue ? xstrdup(blue) : dup_suffix(c->source, ".blue");
        c->green = green ? xstrdup(green) : dup_suffix(c->source, ".green");
        const char *names[4] = {c->source, c->blue, c->green, c->dlq};
        for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < 4; j++)
                        if (names[i] && names[j] && !strcmp(names[i], names[j])) {
                                fprintf(stderr,
                                        "gp-check: topic %s given twice (source, blue, "
                                        "green and dlq must differ)\n",
                                        names[i]);
                                return -1;
                        }
        return 0;
}

/* ---- main ---------------------------------------------------------------- */

static void chk_free(chk_t *c) {
        free(c->since);
        for (size_t h = 0; h < c->n_hops; h++) {
                free(c->hops[h].since);
                free(c->hops[h].since_arg);
        }
        free(c->hops);
        if (c->rk) {
                rd_kafka_consumer_close(c->rk);
                rd_kafka_destroy(c->rk);
        }
        if (c->src)
                for (int p = 0; p < c->n_src; p++)
                        free(c->src[p].r);
        free(c->src);
        for (int k = 0; k < 2; k++) {
                if (c->col[k])
                        for (int p = 0; p < c->n_col[k]; p++)
                                free(c->col[k][p].e);
                free(c->col[k]);
        }
        free(c->idx);
        free(c->scratch.p);
        arena_free(&c->arena);
        free(c->blue);
        free(c->green);
        free(c->xconf);
}

/* --end-offsets: "0:120,1:98,..." (the source's end offsets), for a later
 * --since that judges routing only from there on. */
static int print_end_offsets(chk_t *c) {
        for (int p = 0; p < c->n_src; p++) {
                int64_t lo = 0, hi = 0;
                rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
                        c->rk, c->source, p, &lo, &hi, c->timeout_ms ? c->timeout_ms : 30000);
                if (e) {
                        fprintf(stderr, "gp-check: end offset of %s/%d: %s\n", c->source, p,
                                rd_kafka_err2str(e));
                        return EXIT_USAGE;
                }
                printf("%s%d:%" PRId64, p ? "," : "", p, hi);
        }
        printf("\n");
        return EXIT_OK;
}

/* --since P:OFF,...: partitions not named start at 0. */
static int parse_since_into(chk_t *c, const char *arg, int64_t **out) {
        int64_t *since = calloc((size_t)c->n_src + 1, sizeof(*since));
        if (!since)
                die_oom();
        *out = since;
        const char *s = arg, *why = NULL;
        while (*s) {
                const char *colon = strchr(s, ':'), *end = strchr(s, ',');
                if (!end)
                        end = s + strlen(s);
                int64_t part, off;
                if (!colon || colon > end ||
                    gp_parse_i64(s, (size_t)(colon - s), &part, &why) ||
                    gp_parse_i64(colon + 1, (size_t)(end - colon - 1), &off, &why) ||
                    part < 0 || part >= c->n_src || off < 0) {
                        fprintf(stderr,
                                "gp-check: --since %s: expected P:OFFSET,... with P a "
                                "partition of %s\n",
                                arg, c->source);
                        return -1;
                }
                since[part] = off;
                s = *end ? end + 1 : end;
        }
        return 0;
}

static int parse_since(chk_t *c) {
        return parse_since_into(c, c->since_arg, &c->since);
}

/* --hops FILE: "T OLD P:OFF,..." per line, in order; each hop's offsets at
 * or after the previous hop's. */
static int parse_hops(chk_t *c) {
        FILE *f = fopen(c->hops_path, "r");
        if (!f) {
                fprintf(stderr, "gp-check: --hops %s: cannot open: %s\n", c->hops_path,
                        strerror(errno));
                return -1;
        }
        char *line = NULL;
        size_t cap = 0, cap_hops = 0;
        int lineno = 0, rc = 0;
        while (getline(&line, &cap, f) >= 0) {
                lineno++;
                char *save = NULL, *t = strtok_r(line, " \t\r\n", &save);
                if (!t || *t == '#')
                        continue;
                char *o = strtok_r(NULL, " \t\r\n", &save);
                char *sn = strtok_r(NULL, " \t\r\n", &save);
                char *extra = strtok_r(NULL, " \t\r\n", &save);
                const char *why = NULL;
                hop_t h = {0};
                if (!o || !sn || extra) {
                        fprintf(stderr, "gp-check: %s:%d: expected \"T OLD P:OFF,...\"\n",
                                c->hops_path, lineno);
                        rc = -1;
                        break;
                }
                if (gp_time_parse(t, strlen(t), GP_UNIT_MS, &h.cutoff, &why)) {
                        fprintf(stderr, "gp-check: %s:%d: cutoff %s: %s\n", c->hops_path,
                                lineno, t, why ? why : "not a time");
                        rc = -1;
                        break;
                }
                if (!strcmp(o, "blue"))
                        h.old_c = C_BLUE;
                else if (!strcmp(o, "green"))
                        h.old_c = C_GREEN;
                else {
                        fprintf(stderr, "gp-check: %s:%d: %s: not blue or green\n",
                                c->hops_path, lineno, o);
                        rc = -1;
                        break;
                }
                if (parse_since_into(c, sn, &h.since)) {
                        free(h.since);
                        fprintf(stderr, "gp-check: (in %s:%d)\n", c->hops_path, lineno);
                        rc = -1;
                        break;
                }
                if (c->n_hops)
                        for (int p = 0; p < c->n_src; p++)
                                if (h.since[p] < c->hops[c->n_hops - 1].since[p]) {
                                        fprintf(stderr,
                                                "gp-check: %s:%d: partition %d starts at "
                                                "%" PRId64 ", before the previous "
                                                "hop's %" PRId64 "\n",
                                                c->hops_path, lineno, p, h.since[p],
                                                c->hops[c->n_hops - 1].since[p]);
                                        rc = -1;
                                }
                if (rc) {
                        free(h.since);
                        break;
                }
                h.since_arg = xstrdup(sn);
                void *arr = c->hops;
                grow(&arr, &cap_hops, c->n_hops + 1, sizeof(*c->hops));
                c->hops = arr;
                c->hops[c->n_hops++] = h;
        }
        free(line);
        fclose(f);
        if (!rc && !c->n_hops) {
                fprintf(stderr, "gp-check: --hops %s: no hop in the file\n", c->hops_path);
                rc = -1;
        }
        if (!rc)
                c->have_cutoff = true;
        return rc;
}

static int run(chk_t *c) {
        c->rk = kafka_new(c);
        if (!c->rk)
                return EXIT_USAGE;
        if ((c->n_src = kafka_partitions(c, c->source)) < 0 ||
            (c->n_col[C_BLUE] = kafka_partitions(c, c->blue)) < 0 ||
            (c->n_col[C_GREEN] = kafka_partitions(c, c->green)) < 0 ||
            (c->dlq && (c->n_dlq = kafka_partitions(c, c->dlq)) < 0))
                return EXIT_USAGE;
        if (c->end_offsets)
                return print_end_offsets(c);
        if (c->since_arg && parse_since(c))
                return EXIT_USAGE;
        if (c->hops_path && parse_hops(c))
                return EXIT_USAGE;
        for (int k = 0; k < 2; k++)
                if (c->n_col[k] != c->n_src)
                        fprintf(stderr, "gp-check: warning: %s has %d partitions, %s has %d\n",
                                k == C_BLUE ? c->blue : c->green, c->n_col[k], c->source,
                                c->n_src);

        c->src = calloc((size_t)c->n_src, sizeof(*c->src));
        c->col[0] = calloc((size_t)c->n_col[0], sizeof(*c->col[0]));
        c->col[1] = calloc((size_t)c->n_col[1], sizeof(*c->col[1]));
        if (!c->src || !c->col[0] || !c->col[1])
                die_oom();

        const char *t1[1] = {c->source};
        if (kafka_read(c, t1, &c->n_src, 1, on_source))
                return EXIT_USAGE;
        index_build(c);

        /* One topic after the other, so the verdicts do not depend on how the
         * consumer interleaves them: of a record found in blue and in green,
         * the blue copy is the original and the green one the duplicate. */
        const char *t2[1] = {c->blue}, *t3[1] = {c->green}, *t4[1] = {c->dlq};
        if (c->survivor < 0) {
                if (kafka_read(c, t2, &c->n_col[C_BLUE], 1, on_blue) ||
                    kafka_read(c, t3, &c->n_col[C_GREEN], 1, on_green) ||
                    (c->dlq && kafka_read(c, t4, &c->n_dlq, 1, on_dlq_msg)))
                        return EXIT_USAGE;
                check_missing(c);
        } else {
                /* --survivor: the survivor, then the DLQ (a record in both is a
                 * duplicate), then the aborted colour on its own count. */
                int sv = c->survivor, ab = 1 - sv;
                const char *ts[1] = {sv == C_BLUE ? c->blue : c->green};
                const char *ta[1] = {ab == C_BLUE ? c->blue : c->green};
                if (kafka_read(c, ts, &c->n_col[sv], 1, sv == C_BLUE ? on_blue : on_green) ||
                    (c->dlq && kafka_read(c, t4, &c->n_dlq, 1, on_dlq_msg)))
                        return EXIT_USAGE;
                index_rewind(c);
                if (kafka_read(c, ta, &c->n_col[ab], 1, ab == C_BLUE ? on_blue : on_green))
                        return EXIT_USAGE;
                check_missing_survivor(c);
        }
        for (int k = 0; k < 2; k++)
                for (int p = 0; p < c->n_col[k] && p < c->n_src; p++)
                        check_order(c, k, p);
        if (c->have_cutoff)
                for (int p = 0; p < c->n_src; p++)
                        check_routing(c, p);

        if (c->verbose) {
                if (c->problems > MAX_DETAILS)
                        fprintf(stderr, "gp-check: ... and %" PRIu64 " more problems\n",
                                c->problems - MAX_DETAILS);
                fprintf(stderr,
                        "gp-check: found %" PRIu64 " in %s, %" PRIu64 " in %s, %" PRIu64
                        " in the DLQ; %" PRIu64 " source records with no readable event time; "
                        "DLQ records ignored: %" PRIu64 " of other topics, %" PRIu64
                        " without a usable %s header; source bytes kept: %zu\n",
                        c->found[W_BLUE], c->blue, c->found[W_GREEN], c->green,
                        c->found[W_DLQ], c->unreadable, c->dlq_other, c->dlq_nohdr, HDR_SOURCE,
                        c->arena.total);
        }
        printf("checked=%" PRIu64 " duplicates=%" PRIu64 " missing=%" PRIu64
               " reordered=%" PRIu64 " misrouted=%" PRIu64,
               c->checked, c->duplicates, c->missing, c->reordered, c->misrouted);
        if (c->survivor >= 0)
                printf(" redelivered=%" PRIu64 " aborted=%" PRIu64, c->redelivered,
                       c->aborted);
        printf("\n");
        fflush(stdout);
        return c->duplicates || c->missing || c->reordered || c->misrouted ? EXIT_PROBLEMS
                                                                           : EXIT_OK;
}

int main(int argc, char **argv) {
        chk_t c;
        memset(&c, 0, sizeof(c));
        int rc = parse_args(&c, argc, argv);
        if (rc) {
                chk_free(&c);
                return rc > 0 ? EXIT_OK : EXIT_USAGE;
        }
        rc = run(&c);
        chk_free(&c);
        return rc;
}
