/* gate/fingerprint.c: the settings fingerprint and the verdict on a
 * partition's line (gate/fingerprint.h).
 * Pure: libc only; time is an argument. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/fingerprint.h"

#define FNV32_OFFSET 2166136261u
#define FNV32_PRIME  16777619u
#define FNV64_OFFSET 14695981039346656037ull
#define FNV64_PRIME  1099511628211ull

static uint32_t mix(uint32_t h, const void *b, size_t n) {
        const unsigned char *p = b;
        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= FNV32_PRIME;
        }
        return h;
}

/* name=length:value\n, NULL as name=-\n: no two settings give one text. */
static uint32_t field(uint32_t h, const char *name, const char *v) {
        char len[24];
        h = mix(h, name, strlen(name));
        h = mix(h, "=", 1);
        if (!v)
                return mix(h, "-\n", 2);
        size_t n = strlen(v);
        int k = snprintf(len, sizeof len, "%zu:", n);
        h = mix(h, len, (size_t)k);
        h = mix(h, v, n);
        return mix(h, "\n", 1);
}

static uint32_t number(uint32_t h, const char *name, int64_t v) {
        char s[24];
        snprintf(s, sizeof s, "%" PRId64, v);
        return field(h, name, s);
}

static uint32_t not_none(uint32_t h) {
        return h == GP_FP_NONE ? 1u : h;
}

uint32_t gp_fp_bytes(const void *b, size_t n) {
        return not_none(mix(FNV32_OFFSET, b, n));
}

uint32_t gp_fp_of(const gp_fp_settings_t *s) {
        static const char *const units[] = {"ms", "s", "us"};
        char schema[12];
        uint32_t h = mix(FNV32_OFFSET, "gp-settings-1\n", 14);
        h = field(h, "event-time", s->event_time);
        h = field(h, "event-time.unit",
                  (unsigned)s->unit < sizeof units / sizeof *units ? units[s->unit] : "?");
        if (s->avro_schema != GP_FP_NONE)
                snprintf(schema, sizeof schema, "%08" PRIx32, s->avro_schema);
        h = field(h, "avro.schema", s->avro_schema != GP_FP_NONE ? schema : NULL);
        h = number(h, "record.max.bytes", s->record_max_bytes);
        h = field(h, "bad-record", s->gate.bad_route_old ? "route-old" : "dlq");
        h = field(h, "late", s->gate.late_to_dlq ? "dlq" : "new");
        h = number(h, "watermark.out-of-orderness.ms", s->gate.out_of_orderness_ms);
        h = number(h, "watermark.idle.ms", s->gate.idle_ms);
        h = number(h, "cutoff.align.ms", s->gate.align_ms);
        h = number(h, "lateness.ms", s->gate.lateness_ms);
        h = field(h, "topic.blue", s->topic_blue);
        h = field(h, "topic.green", s->topic_green);
        h = field(h, "dlq.topic", s->dlq_topic);
        h = field(h, "drain.group.blue", s->drain_blue);
        h = field(h, "drain.group.green", s->drain_green);
        return not_none(h);
}

bool gp_fp_counts(uint32_t mine, uint32_t line_fp) {
        return line_fp == GP_FP_NONE || line_fp == mine;
}

uint64_t gp_fp_owner(const void *b, size_t n) {
        const unsigned char *p = b;
        uint64_t h = FNV64_OFFSET;
        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= FNV64_PRIME;
        }
        return h ? h : 1;
}

gp_fp_verdict_t gp_fp_judge(gp_fp_track_t *t, uint32_t mine, uint32_t line_fp,
                            int64_t line_seq, uint64_t owner, bool self, int64_t now,
                            int64_t grace_ms) {
        if (t->owner != owner) {
                /* A new owner (or none): what it writes from now on is its
                 * own; the line as it is may be an earlier owner's. */
                t->owner = owner;
                t->since = now;
                t->seq = line_seq;
        }
        if (gp_fp_counts(mine, line_fp))
                return GP_FP_SAME;
        if (!owner || self)
                return GP_FP_PENDING;
        bool rewritten = line_seq > t->seq;
        bool held = grace_ms >= 0 && now - t->since >= grace_ms;
        return rewritten || held ? GP_FP_DIFFERS : GP_FP_PENDING;
}
