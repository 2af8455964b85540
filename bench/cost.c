/* bench/cost.c: gp-cost, the per-record CPU cost of reading the event time
 * and routing, in instructions (run under callgrind: bench/cost.sh).
 *
 *   gp-cost MODE N
 *     route   gp_gate_route alone, the event time already known
 *     kafka   kafka-timestamp + route
 *     json    json:meta.ts over a 200-byte JSON value + route
 *     avro    the Confluent frame, avro:meta.ts over a 200-byte Avro value
 *             of gp-produce's schema (a union, an array, a map, an enum and
 *             a nested record before the field) + route
 *     metrics kafka, plus what /metrics counts per record (gp_wcount_record):
 *             metrics - kafka is the counters' cost
 *
 * 1024 distinct records are built first; the measured loop routes N records
 * cycling through them, the gate in the split phase. Only that loop is
 * collected (CALLGRIND_TOGGLE_COLLECT), so instructions / N is the cost. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT /* valgrind's headers absent: nothing to toggle */
#endif

#include "gate/extract.h"
#include "gate/gate.h"
#include "proxy/schema/avsc.h"
#include "proxy/loop/proxy.h"

#define NREC 1024
#define BASE INT64_C(1700000000000)

typedef struct {
        uint8_t buf[512];
        size_t len;
        int64_t ts;
} rec_t;

static rec_t recs[NREC];

static size_t put_long(uint8_t *p, int64_t v) {
        uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
        size_t n = 0;
        while (u > 0x7f) {
                p[n++] = (uint8_t)(u | 0x80);
                u >>= 7;
        }
        p[n++] = (uint8_t)u;
        return n;
}

static size_t put_str(uint8_t *p, const char *s) {
        size_t n = put_long(p, (int64_t)strlen(s));
        memcpy(p + n, s, strlen(s));
        return n + strlen(s);
}

static const char PAD[] = "lorem-ipsum-dolor-sit-amet-consectetur-adipiscing-elit-sed-do-eiu"
                          "smod-tempor-incididunt-ut-labore";

/* gp-produce's Order schema (tests/tools/gp_produce.c). */
static const char SCHEMA[] =
        "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"gp.test\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\"},"
        "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
        "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"
        "{\"name\":\"customer\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"Customer\","
        "\"fields\":[{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"tier\",\"type\":"
        "{\"type\":\"enum\",\"name\":\"Tier\",\"symbols\":[\"FREE\",\"PRO\"]}}]}]},"
        "{\"name\":\"price\",\"type\":\"double\"},"
        "{\"name\":\"meta\",\"type\":{\"type\":\"record\",\"name\":\"Meta\",\"fields\":["
        "{\"name\":\"source\",\"type\":\"string\"},{\"name\":\"ts\",\"type\":{\"type\":"
        "\"long\","
        "\"logicalType\":\"timestamp-millis\"}}]}},"
        "{\"name\":\"pad\",\"type\":\"string\"}]}";

static void build_json(void) {
        for (int i = 0; i < NREC; i++) {
                recs[i].ts = BASE + i * 7;
                int n = snprintf((char *)recs[i].buf, sizeof recs[i].buf,
                                 "{\"id\":%d,\"customer\":{\"name\":\"ada\",\"tier\":\"PRO\"},"
                                 "\"price\":%d.25,\"tags\":[\"a\",\"b\"],\"meta\":{\"source\":"
                                 "\"web\",\"ts\":%" PRId64 "},\"pad\":\"%.*s\"}",
                                 100000 + i, i, recs[i].ts, 64, PAD);
                recs[i].len = (size_t)n;
        }
}

static void build_avro(uint32_t id) {
        for (int i = 0; i < NREC; i++) {
                uint8_t *p = recs[i].buf;
                size_t n = 0;
                recs[i].ts = BASE + i * 7;
                p[n++] = 0;
                p[n++] = (uint8_t)(id >> 24);
                p[n++] = (uint8_t)(id >> 16);
                p[n++] = (uint8_t)(id >> 8);
                p[n++] = (uint8_t)id;
                n += put_long(p + n, 100000 + i); /* id */
                n += put_long(p + n, 2);          /* tags: 2 items */
                n += put_str(p + n, "priority");
                n += put_str(p + n, "gift");
                n += put_long(p + n, 0);
                n += put_long(p + n, 2); /* attrs: 2 entries */
                n += put_str(p + n, "qty");
                n += put_long(p + n, i % 10);
                n += put_str(p + n, "weight");
                n += put_long(p + n, i % 1000);
                n += put_long(p + n, 0);
                n += put_long(p + n, 1); /* customer: branch 1 */
                n += put_str(p + n, "ada lovelace byron");
                n += put_long(p + n, 1); /* tier PRO */
                memset(p + n, 0x40, 8);  /* price */
                n += 8;
                n += put_str(p + n, "web-checkout-eu-west-1"); /* meta.source */
                n += put_long(p + n, recs[i].ts);              /* meta.ts */
                n += put_str(p + n, PAD);                      /* pad */
                recs[i].len = n;
        }
}

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr,
                        "usage: gp-cost route|kafka|json|avro|metrics N  (under callgrind: "
                        "bench/cost.sh)\n");
                return 2;
        }
        const char *mode = argv[1];
        long n = strtol(argv[2], NULL, 10);
        gp_extract_t x;
        gp_avro_t av = {0};
        gp_err_t err;
        const char *spec = !strcmp(mode, "json")   ? "json:meta.ts"
                           : !strcmp(mode, "avro") ? "avro:meta.ts"
                                                   : "kafka-timestamp";
        if (gp_extract_compile(&x, spec, GP_UNIT_MS, err.msg, sizeof err.msg)) {
                fprintf(stderr, "gp-cost: %s\n", err.msg);
                return 2;
        }
        if (!strcmp(mode, "avro")) {
                if (gp_avsc_compile(SCHEMA, sizeof SCHEMA - 1, &x, &av, &err)) {
                        fprintf(stderr, "gp-cost: %s\n", err.msg);
                        return 2;
                }
                build_avro(7);
        } else {
                build_json();
        }

        gp_gate_t g;
        gp_gate_conf_t gc = {.out_of_orderness_ms = 1000};
        gp_part_t part;
        gp_gate_init(&g, GP_BLUE);
        g.phase = GP_PHASE_SPLIT;
        g.old_c = GP_BLUE;
        g.new_c = GP_GREEN;
        g.cutoff = BASE + NREC * 7 / 2;
        gp_part_init(&part, 0);
        bool route_only = !strcmp(mode, "route"), count = !strcmp(mode, "metrics"), late;
        static gp_wcount_t win;
        uint64_t sum = 0, bad = 0;

        CALLGRIND_TOGGLE_COLLECT;
        for (long i = 0; i < n; i++) {
                const rec_t *r = &recs[i & (NREC - 1)];
                int64_t ts = r->ts;
                if (!route_only) {
                        gp_record_view_t rv = {r->buf, r->len, r->ts, NULL, 0, NULL};
                        gp_bad_t b;
                        if (x.kind == GP_ET_AVRO) {
                                uint32_t id;
                                const uint8_t *body;
                                size_t blen;
                                if (gp_avro_frame(r->buf, r->len, &id, &body, &blen) == 0) {
                                        rv.avro = &av;
                                        rv.value = body;
                                        rv.value_len = blen;
                                }
                        }
                        if (gp_extract_ts(&x, &rv, &ts, &b)) {
                                ts = GP_TS_NONE;
                                bad++;
                        }
                }
                sum += gp_gate_route(&g, &gc, &part, ts, i, &late);
                if (count)
                        gp_wcount_record(&win, r->len, r->len);
        }
        CALLGRIND_TOGGLE_COLLECT;

        printf("mode=%s records=%ld green=%" PRIu64 " unreadable=%" PRIu64 " bytes=%zu\n",
               mode, n, sum, bad, recs[0].len);
        gp_avro_free(&av);
        if (count && win.records != (uint64_t)n)
                return 1;
        return bad ? 1 : 0;
}
