/* tests/fuzz/fuzz_members.c: libFuzzer target for gate/members.c, the
 * ConsumerProtocol Subscription and Assignment of a group's members (bytes
 * another client wrote, as DescribeGroups gives them). Every input is read
 * both ways. Invariants checked:
 *   - a refusal always has a reason;
 *   - what is kept points inside the input, and the counts add up (the
 *     partitions of the kept topics are all the partitions when every
 *     topic was kept);
 *   - every partition read is >= 0;
 *   - a subscription is the same as the list of its own kept topics
 *     (gp_cp_same_topics), and not the same as that list without one that
 *     occurs once.
 * Corpus: tests/fuzz/corpus/members/. Uses gate/ only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/members.h"
#include "tests/fuzz/fuzz_check.h"

static int inside(const void *p, size_t n, const uint8_t *data, size_t size) {
        const uint8_t *q = p;
        return n == 0 || (q >= data && q + n <= data + size);
}

/* The subscription's topics as NUL-terminated names (the first 16). */
static void same_topics(const gp_cp_subscription_t *s) {
        char names[16][64];
        const char *mine[16];
        size_t n = s->n_topics;
        if (n > 16)
                return;
        for (size_t i = 0; i < n; i++) {
                if (s->topics[i].len >= sizeof names[i] ||
                    memchr(s->topics[i].s, '\0', s->topics[i].len))
                        return;
                memcpy(names[i], s->topics[i].s, s->topics[i].len);
                names[i][s->topics[i].len] = '\0';
                mine[i] = names[i];
        }
        CHECK(gp_cp_same_topics(s, mine, n));
        for (size_t drop = 0; drop < n; drop++) {
                size_t times = 0;
                for (size_t i = 0; i < n; i++)
                        times += !strcmp(mine[i], mine[drop]);
                if (times != 1)
                        continue;
                const char *less[16];
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (i != drop)
                                less[k++] = mine[i];
                CHECK(!gp_cp_same_topics(s, less, k));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static gp_cp_subscription_t s;
        static gp_cp_assignment_t a;
        char err[128];

        err[0] = '\0';
        if (gp_cp_subscription_parse(data, size, &s, err, sizeof err)) {
                CHECK(err[0]);
        } else {
                CHECK(s.version >= 0);
                CHECK(s.userdata_len >= -1);
                for (size_t i = 0; i < s.n_topics && i < GP_CP_MAX_TOPICS; i++)
                        CHECK(s.topics[i].s &&
                              inside(s.topics[i].s, s.topics[i].len, data, size));
                CHECK(!s.has_rack || inside(s.rack.s, s.rack.len, data, size));
                CHECK(s.version >= 2 || s.generation == -1);
                CHECK(s.version >= 1 || s.n_owned == 0);
                same_topics(&s);
        }

        err[0] = '\0';
        if (gp_cp_assignment_parse(data, size, &a, err, sizeof err)) {
                CHECK(err[0]);
        } else {
                size_t parts = 0;
                for (size_t i = 0; i < a.n_topics && i < GP_CP_MAX_TOPICS; i++) {
                        const gp_cp_tparts_t *t = &a.topics[i];
                        CHECK(t->topic.s && inside(t->topic.s, t->topic.len, data, size));
                        CHECK(inside(t->parts, 4 * t->n, data, size));
                        for (size_t k = 0; k < t->n; k++)
                                CHECK(gp_cp_part(t, k) >= 0);
                        CHECK(gp_cp_part(t, t->n) == -1);
                        parts += t->n;
                }
                CHECK(a.n_topics > GP_CP_MAX_TOPICS || parts == a.n_parts);
                CHECK(parts <= a.n_parts);
                CHECK(a.userdata_len >= -1);
        }
        return 0;
}
