/* tests/unit/test_members.c: the ConsumerProtocol Subscription and
 * Assignment as DescribeGroups gives them (gate/members.h): what
 * librdkafka 2.0.2 and the Java client write, every version's fields,
 * every truncation and every hostile count refused, the topics compared
 * as sets. Uses gate/ only. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/members.h"

/* ---- a writer for test buffers ---------------------------------------- */

typedef struct {
        unsigned char b[4096];
        size_t n;
} buf_t;

static void w16(buf_t *w, int v) {
        w->b[w->n++] = (unsigned char)((unsigned)v >> 8);
        w->b[w->n++] = (unsigned char)v;
}
static void w32(buf_t *w, int64_t v) {
        uint32_t u = (uint32_t)v;
        for (int i = 3; i >= 0; i--)
                w->b[w->n++] = (unsigned char)(u >> (8 * i));
}
static void wstr(buf_t *w, const char *s) {
        w16(w, (int)strlen(s));
        memcpy(w->b + w->n, s, strlen(s));
        w->n += strlen(s);
}
static void wbytes(buf_t *w, const char *s) {
        if (!s) {
                w32(w, -1);
                return;
        }
        w32(w, (int64_t)strlen(s));
        memcpy(w->b + w->n, s, strlen(s));
        w->n += strlen(s);
}

static buf_t from_hex(const char *h) {
        buf_t w = {.n = 0};
        for (; h[0] && h[1]; h += 2) {
                unsigned v;
                sscanf(h, "%2x", &v);
                w.b[w.n++] = (unsigned char)v;
        }
        return w;
}

/* A heap copy of exactly n bytes: ASan sees a read past it. */
static int sub_exact(const unsigned char *b, size_t n, gp_cp_subscription_t *s, char *err,
                     size_t errlen) {
        unsigned char *c = malloc(n ? n : 1);
        cr_assert(c);
        memcpy(c, b, n);
        int rc = gp_cp_subscription_parse(c, n, s, err, errlen);
        if (!rc)
                for (size_t i = 0; i < s->n_topics && i < GP_CP_MAX_TOPICS; i++)
                        cr_assert(s->topics[i].s >= (const char *)c &&
                                  s->topics[i].s + s->topics[i].len <= (const char *)c + n);
        free(c);
        /* Again on the caller's buffer, which outlives what points into it. */
        int again = gp_cp_subscription_parse(b, n, s, NULL, 0);
        cr_assert_eq(again, rc);
        return rc;
}
static int asg_exact(const unsigned char *b, size_t n, gp_cp_assignment_t *a, char *err,
                     size_t errlen) {
        unsigned char *c = malloc(n ? n : 1);
        cr_assert(c);
        memcpy(c, b, n);
        int rc = gp_cp_assignment_parse(c, n, a, err, errlen);
        if (!rc)
                for (size_t i = 0; i < a->n_topics && i < GP_CP_MAX_TOPICS; i++)
                        for (size_t k = 0; k < a->topics[i].n; k++)
                                cr_assert(gp_cp_part(&a->topics[i], k) >= 0);
        free(c);
        int again = gp_cp_assignment_parse(b, n, a, NULL, 0);
        cr_assert_eq(again, rc);
        return rc;
}

/* What librdkafka 2.0.2's cooperative-sticky consumer subscribed to
 * probe-t and probe-u wrote, and the assignment the group gave it
 * (DescribeGroups on Kafka 3.9). */
#define RDK_SUB "000100000002000770726f62652d74000770726f62652d750000000000000000"
#define RDK_ASG                                                                               \
        "000000000002000770726f62652d7400000003000000000000000100000002000770726f62652d75"    \
        "00000002000000000000000100000000"

Test(members, librdkafka_subscription) {
        buf_t w = from_hex(RDK_SUB);
        gp_cp_subscription_t s;
        char err[128] = "";
        cr_assert_eq(sub_exact(w.b, w.n, &s, err, sizeof err), 0, "%s", err);
        cr_assert_eq(s.version, 1);
        cr_assert_eq(s.n_topics, 2u);
        cr_assert(gp_cp_str_is(s.topics[0], "probe-t") &&
                  gp_cp_str_is(s.topics[1], "probe-u"));
        cr_assert_eq(s.userdata_len, 0);
        cr_assert_eq(s.n_owned, 0u);
        cr_assert_eq(s.generation, -1);
        cr_assert(!s.has_rack);
        const char *mine[] = {"probe-u", "probe-t"};
        cr_assert(gp_cp_same_topics(&s, mine, 2));
        cr_assert(!gp_cp_same_topics(&s, mine, 1));
}

Test(members, librdkafka_assignment) {
        buf_t w = from_hex(RDK_ASG);
        gp_cp_assignment_t a;
        char err[128] = "";
        cr_assert_eq(asg_exact(w.b, w.n, &a, err, sizeof err), 0, "%s", err);
        cr_assert_eq(a.version, 0);
        cr_assert_eq(a.n_topics, 2u);
        cr_assert_eq(a.n_parts, 5u);
        cr_assert(gp_cp_str_is(a.topics[0].topic, "probe-t"));
        cr_assert_eq(a.topics[0].n, 3u);
        for (int i = 0; i < 3; i++)
                cr_assert_eq(gp_cp_part(&a.topics[0], (size_t)i), i);
        cr_assert(gp_cp_str_is(a.topics[1].topic, "probe-u"));
        cr_assert_eq(gp_cp_part(&a.topics[1], 1), 1);
        cr_assert_eq(gp_cp_part(&a.topics[1], 2), -1, "past the end");
        cr_assert_eq(a.userdata_len, 0);
}

/* The Java client's v3: owned partitions, generation, rack; v0 without
 * them; userdata null and present; bytes after the last field. */
Test(members, every_version) {
        for (int v = 0; v <= 4; v++) {
                buf_t w = {.n = 0};
                w16(&w, v);
                w32(&w, 1);
                wstr(&w, "orders");
                wbytes(&w, v == 2 ? NULL : "sticky");
                if (v >= 1) {
                        w32(&w, 1);
                        wstr(&w, "orders");
                        w32(&w, 2);
                        w32(&w, 3);
                        w32(&w, 7);
                }
                if (v >= 2)
                        w32(&w, 42);
                if (v >= 3)
                        wstr(&w, "rack-a");
                if (v == 4)
                        w32(&w, 12345); /* a field of a version after 3 */
                gp_cp_subscription_t s;
                char err[128] = "";
                cr_assert_eq(sub_exact(w.b, w.n, &s, err, sizeof err), 0, "v%d: %s", v, err);
                cr_assert_eq(s.version, v);
                cr_assert_eq(s.n_topics, 1u);
                cr_assert_eq(s.userdata_len, v == 2 ? -1 : 6, "v%d", v);
                cr_assert_eq(s.n_owned, v >= 1 ? 2u : 0u, "v%d", v);
                cr_assert_eq(s.generation, v >= 2 ? 42 : -1, "v%d", v);
                cr_assert_eq(s.has_rack, v >= 3, "v%d", v);
                if (v >= 3)
                        cr_assert(gp_cp_str_is(s.rack, "rack-a"));
        }
        /* A null rack. */
        buf_t w = {.n = 0};
        w16(&w, 3);
        w32(&w, 0);
        wbytes(&w, NULL);
        w32(&w, 0);
        w32(&w, -1);
        w16(&w, -1);
        gp_cp_subscription_t s;
        cr_assert_eq(sub_exact(w.b, w.n, &s, NULL, 0), 0);
        cr_assert(!s.has_rack);
        cr_assert_eq(s.generation, -1);
}

/* Every proper prefix of a valid buffer is refused, with a reason. */
Test(members, truncations) {
        buf_t s = from_hex(RDK_SUB), a = from_hex(RDK_ASG);
        for (size_t cut = 0; cut < s.n; cut++) {
                gp_cp_subscription_t out;
                char err[128] = "";
                cr_assert_eq(sub_exact(s.b, cut, &out, err, sizeof err), -1, "sub cut %zu",
                             cut);
                cr_assert(strstr(err, "subscription:"), "cut %zu: '%s'", cut, err);
        }
        for (size_t cut = 0; cut < a.n; cut++) {
                gp_cp_assignment_t out;
                char err[128] = "";
                cr_assert_eq(asg_exact(a.b, cut, &out, err, sizeof err), -1, "asg cut %zu",
                             cut);
                cr_assert(strstr(err, "assignment:"), "cut %zu: '%s'", cut, err);
        }
        gp_cp_subscription_t out;
        cr_assert_eq(gp_cp_subscription_parse(NULL, 0, &out, NULL, 0), -1);
        gp_cp_assignment_t aout;
        char tiny[4];
        cr_assert_eq(gp_cp_assignment_parse(NULL, 10, &aout, tiny, sizeof tiny), -1);
        cr_assert_eq(strlen(tiny), 3u, "the reason cut to its buffer");
}

/* Counts and lengths that lie: negative, beyond the buffer, huge. */
Test(members, hostile_counts) {
        static const struct {
                const char *what;
                int64_t version, topics, name_len, userdata_len, owned;
        } rows[] = {
                {"negative version", -1, 1, 6, 0, 0},
                {"negative topic count", 1, -1, 6, 0, 0},
                {"topic count past the buffer", 1, 2, 6, 0, 0},
                {"huge topic count", 1, 0x7fffffff, 6, 0, 0},
                {"null topic", 1, 1, -1, 0, 0},
                {"topic name past the buffer", 1, 1, 300, 0, 0},
                {"negative name length", 1, 1, -2, 0, 0},
                {"userdata -2", 1, 1, 6, -2, 0},
                {"userdata past the buffer", 1, 1, 6, 1000, 0},
                {"negative owned count", 1, 1, 6, 0, -1},
                {"huge owned count", 1, 1, 6, 0, 0x7fffffff},
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                buf_t w = {.n = 0};
                w16(&w, (int)rows[i].version);
                w32(&w, rows[i].topics);
                w16(&w, (int)rows[i].name_len);
                if (rows[i].name_len == 6) {
                        memcpy(w.b + w.n, "orders", 6);
                        w.n += 6;
                }
                w32(&w, rows[i].userdata_len);
                w32(&w, rows[i].owned);
                gp_cp_subscription_t s;
                char err[128] = "";
                cr_assert_eq(sub_exact(w.b, w.n, &s, err, sizeof err), -1, "%s accepted",
                             rows[i].what);
                cr_assert(err[0], "%s: no reason", rows[i].what);
        }
        /* An assignment with a negative partition, a negative and a huge
         * partition count. */
        static const int64_t counts[][2] = {{1, -5}, {-1, 0}, {0x40000000, 0}};
        for (size_t i = 0; i < 3; i++) {
                buf_t w = {.n = 0};
                w16(&w, 0);
                w32(&w, 1);
                wstr(&w, "orders");
                w32(&w, counts[i][0]);
                w32(&w, counts[i][1]);
                wbytes(&w, "");
                gp_cp_assignment_t a;
                cr_assert_eq(asg_exact(w.b, w.n, &a, NULL, 0), -1, "row %zu accepted", i);
        }
}

/* More topics than are kept: the counts go on, the first ones are kept,
 * and such a subscription is never "the same" as ours. */
Test(members, many_topics) {
        static buf_t w;
        w.n = 0;
        size_t n = GP_CP_MAX_TOPICS + 5;
        w16(&w, 0);
        w32(&w, (int64_t)n);
        char name[16];
        for (size_t i = 0; i < n; i++) {
                snprintf(name, sizeof name, "t%zu", i % 3);
                wstr(&w, name);
        }
        wbytes(&w, NULL);
        gp_cp_subscription_t s;
        cr_assert_eq(sub_exact(w.b, w.n, &s, NULL, 0), 0);
        cr_assert_eq(s.n_topics, n);
        cr_assert(gp_cp_str_is(s.topics[GP_CP_MAX_TOPICS - 1], "t1"));
        const char *mine[] = {"t0", "t1", "t2"};
        cr_assert(!gp_cp_same_topics(&s, mine, 3), "not all of them were kept");
        /* The same three, repeated within the limit: the same set. */
        w.n = 0;
        w16(&w, 0);
        w32(&w, 6);
        for (int i = 0; i < 6; i++) {
                snprintf(name, sizeof name, "t%d", (i * 2) % 3);
                wstr(&w, name);
        }
        wbytes(&w, NULL);
        cr_assert_eq(sub_exact(w.b, w.n, &s, NULL, 0), 0);
        cr_assert(gp_cp_same_topics(&s, mine, 3));
        const char *other[] = {"t0", "t1", "t3"};
        cr_assert(!gp_cp_same_topics(&s, other, 3));
        const char *more[] = {"t0", "t1", "t2", "t4"};
        cr_assert(!gp_cp_same_topics(&s, more, 4), "a superset");
        const char *prefix[] = {"t", "t1", "t2"};
        cr_assert(!gp_cp_same_topics(&s, prefix, 3), "a prefix is not the name");
}

Test(members, no_topics) {
        buf_t w = {.n = 0};
        w16(&w, 0);
        w32(&w, 0);
        wbytes(&w, NULL);
        gp_cp_subscription_t s;
        cr_assert_eq(sub_exact(w.b, w.n, &s, NULL, 0), 0);
        const char *mine[] = {"orders"};
        cr_assert(!gp_cp_same_topics(&s, mine, 1));
        cr_assert(gp_cp_same_topics(&s, mine, 0));
        gp_cp_str_t null = {NULL, 0};
        cr_assert(!gp_cp_str_is(null, ""));
}
