/* gate/members.c: the ConsumerProtocol Subscription and Assignment, read
 * with every count and length checked (gate/members.h).
 * Pure: libc only. */
#include <stdio.h>
#include <string.h>

#include "gate/members.h"

typedef struct rd {
        const unsigned char *p, *end;
        const char *what; /* the field being read, for the error */
} rd_t;

static size_t left(const rd_t *r) {
        return (size_t)(r->end - r->p);
}

static int i16(rd_t *r, int16_t *out) {
        if (left(r) < 2)
                return -1;
        *out = (int16_t)(uint16_t)((unsigned)r->p[0] << 8 | r->p[1]);
        r->p += 2;
        return 0;
}

static int32_t be32(const unsigned char *b) {
        return (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
                         (uint32_t)b[3]);
}

static int i32(rd_t *r, int32_t *out) {
        if (left(r) < 4)
                return -1;
        *out = be32(r->p);
        r->p += 4;
        return 0;
}

/* A string; -1 length (null) only when nullable (then s->s is NULL). */
static int str(rd_t *r, gp_cp_str_t *s, bool nullable) {
        int16_t n;
        if (i16(r, &n))
                return -1;
        if (n < 0) {
                if (n != -1 || !nullable)
                        return -1;
                *s = (gp_cp_str_t){NULL, 0};
                return 0;
        }
        if (left(r) < (size_t)n)
                return -1;
        *s = (gp_cp_str_t){(const char *)r->p, (size_t)n};
        r->p += n;
        return 0;
}

/* Nullable bytes, skipped; their length in *n (-1: null). */
static int bytes(rd_t *r, int32_t *n) {
        if (i32(r, n) || *n < -1)
                return -1;
        if (*n > 0) {
                if (left(r) < (size_t)*n)
                        return -1;
                r->p += *n;
        }
        return 0;
}

/* An array count: at least 0, and no more elements than the bytes left
 * could hold at min_size each. */
static int count(rd_t *r, size_t min_size, size_t *n) {
        int32_t c;
        if (i32(r, &c) || c < 0 || (size_t)c > left(r) / min_size)
                return -1;
        *n = (size_t)c;
        return 0;
}

/* [int32 partition], each >= 0; *parts at the first. */
static int partitions(rd_t *r, size_t *n, const unsigned char **parts) {
        if (count(r, 4, n))
                return -1;
        *parts = r->p;
        for (size_t i = 0; i < *n; i++)
                if (be32(r->p + 4 * i) < 0)
                        return -1;
        r->p += 4 * *n;
        return 0;
}

/* [string topic, [int32 partition]]; kept into out[0..max) when out. */
static int topic_parts(rd_t *r, gp_cp_tparts_t *out, size_t max, size_t *n_topics,
                       size_t *n_parts) {
        /* A topic takes at least its length (2) and its count (4). */
        if (count(r, 6, n_topics))
                return -1;
        *n_parts = 0;
        for (size_t i = 0; i < *n_topics; i++) {
                gp_cp_tparts_t t;
                if (str(r, &t.topic, false) || partitions(r, &t.n, &t.parts))
                        return -1;
                *n_parts += t.n;
                if (out && i < max)
                        out[i] = t;
        }
        return 0;
}

static int refuse(const rd_t *r, const char *kind, const unsigned char *start, char *err,
                  size_t errlen) {
        if (err && errlen)
                snprintf(err, errlen, "%s: %s truncated or malformed at byte %zu", kind,
                         r->what, (size_t)(r->p - start));
        return -1;
}

int gp_cp_subscription_parse(const void *buf, size_t len, gp_cp_subscription_t *out, char *err,
                             size_t errlen) {
        const unsigned char *b = buf;
        rd_t r = {b, b + len, "version"};
        memset(out, 0, sizeof(*out));
        out->generation = -1;
        if (!buf || i16(&r, &out->version) || out->version < 0)
                return refuse(&r, "subscription", b, err, errlen);
        r.what = "topics";
        if (count(&r, 2, &out->n_topics))
                return refuse(&r, "subscription", b, err, errlen);
        for (size_t i = 0; i < out->n_topics; i++) {
                gp_cp_str_t t;
                if (str(&r, &t, false))
                        return refuse(&r, "subscription", b, err, errlen);
                if (i < GP_CP_MAX_TOPICS)
                        out->topics[i] = t;
        }
        r.what = "userdata";
        if (bytes(&r, &out->userdata_len))
                return refuse(&r, "subscription", b, err, errlen);
        size_t owned_topics;
        r.what = "owned partitions";
        if (out->version >= 1 && topic_parts(&r, NULL, 0, &owned_topics, &out->n_owned))
                return refuse(&r, "subscription", b, err, errlen);
        r.what = "generation";
        if (out->version >= 2 && i32(&r, &out->generation))
                return refuse(&r, "subscription", b, err, errlen);
        r.what = "rack";
        if (out->version >= 3) {
                if (str(&r, &out->rack, true))
                        return refuse(&r, "subscription", b, err, errlen);
                out->has_rack = out->rack.s != NULL;
        }
        return 0;
}

int gp_cp_assignment_parse(const void *buf, size_t len, gp_cp_assignment_t *out, char *err,
                           size_t errlen) {
        const unsigned char *b = buf;
        rd_t r = {b, b + len, "version"};
        memset(out, 0, sizeof(*out));
        if (!buf || i16(&r, &out->version) || out->version < 0)
                return refuse(&r, "assignment", b, err, errlen);
        r.what = "partitions";
        if (topic_parts(&r, out->topics, GP_CP_MAX_TOPICS, &out->n_topics, &out->n_parts))
                return refuse(&r, "assignment", b, err, errlen);
        r.what = "userdata";
        if (bytes(&r, &out->userdata_len))
                return refuse(&r, "assignment", b, err, errlen);
        return 0;
}

int32_t gp_cp_part(const gp_cp_tparts_t *t, size_t i) {
        return i < t->n ? be32(t->parts + 4 * i) : -1;
}

bool gp_cp_str_is(gp_cp_str_t s, const char *topic) {
        size_t n = strlen(topic);
        return s.s && s.len == n && !memcmp(s.s, topic, n);
}

bool gp_cp_same_topics(const gp_cp_subscription_t *s, const char *const *mine, size_t n) {
        size_t kept = s->n_topics < GP_CP_MAX_TOPICS ? s->n_topics : GP_CP_MAX_TOPICS;
        if (kept < s->n_topics)
                return false;
        for (size_t i = 0; i < kept; i++) {
                bool found = false;
                for (size_t k = 0; k < n && !found; k++)
                        found = gp_cp_str_is(s->topics[i], mine[k]);
                if (!found)
                        return false;
        }
        for (size_t k = 0; k < n; k++) {
                bool found = false;
                for (size_t i = 0; i < kept && !found; i++)
                        found = gp_cp_str_is(s->topics[i], mine[k]);
                if (!found)
                        return false;
        }
        return true;
}
