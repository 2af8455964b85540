/* gate/hoptime.c: a hand-over's instants, their value in the map and
 * their description (gate/hoptime.h).
 * Pure: libc only; every instant is an argument. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate/hoptime.h"
#include "gate/timeparse.h"

/* The value's version tag: a reader refuses another. */
#define TAG "hop1"

void gp_hoptime_init(gp_hop_t *h) {
        *h = (gp_hop_t){.seen = GP_TS_NONE,
                        .t = GP_TS_NONE,
                        .closed = GP_TS_NONE,
                        .rule = GP_CLOSE_NONE,
                        .drained = GP_TS_NONE,
                        .clear = GP_TS_NONE};
}

void gp_hoptime_start(gp_hop_t *h, int64_t now) {
        gp_hoptime_init(h);
        h->seen = now;
}

bool gp_hoptime_mark(const gp_hop_t *h, int64_t *at, int64_t now) {
        if (h->seen == GP_TS_NONE || *at != GP_TS_NONE || now == GP_TS_NONE)
                return false;
        *at = now;
        return true;
}

bool gp_hoptime_closed(gp_hop_t *h, gp_close_rule_t rule, int idle, int parts, int64_t now) {
        if (rule == GP_CLOSE_NONE || rule >= GP_CLOSE__N ||
            !gp_hoptime_mark(h, &h->closed, now))
                return false;
        h->rule = rule;
        h->idle = idle < 0 ? 0 : idle;
        h->parts = parts < h->idle ? h->idle : parts;
        return true;
}

/* to - from in ms, -1 when either is missing, 0 when negative; saturating. */
static int64_t span(int64_t from, int64_t to) {
        if (from == GP_TS_NONE || to == GP_TS_NONE || to <= from)
                return from == GP_TS_NONE || to == GP_TS_NONE ? -1 : 0;
        if (from < 0 && to > INT64_MAX + from)
                return INT64_MAX;
        return to - from;
}

void gp_hoptime_phases(const gp_hop_t *h, int64_t out[4]) {
        const int64_t at[5] = {h->seen, h->t, h->closed, h->drained, h->clear};
        int64_t from = at[0];
        for (int i = 0; i < 4; i++) {
                int64_t to = at[i + 1];
                out[i] = span(from, to);
                /* An instant marked before the one before it ends its phase
                 * at 0 ms and starts nothing: the next phase runs from the
                 * later one, so the phases still sum to seen .. clear. */
                if (to == GP_TS_NONE || from == GP_TS_NONE || to > from)
                        from = to;
        }
}

/* " key=OFFSET" or " key=-": the instant in ms since seen. */
static size_t put_at(char *b, size_t len, size_t at, const char *key, int64_t seen,
                     int64_t v) {
        if (at >= len)
                return at;
        int n;
        if (v == GP_TS_NONE)
                n = snprintf(b + at, len - at, " %s=-", key);
        else
                n = snprintf(b + at, len - at, " %s=%" PRId64, key, span(seen, v));
        return n < 0 ? len : at + (size_t)n;
}

void gp_hoptime_format(const gp_hop_t *h, char *buf, size_t len) {
        if (!len)
                return;
        buf[0] = '\0';
        if (h->seen == GP_TS_NONE)
                return;
        if (len > GP_HOP_VALUE_MAX)
                len = GP_HOP_VALUE_MAX;
        int n = snprintf(buf, len, TAG " seen=%" PRId64, h->seen);
        size_t at = n < 0 ? len : (size_t)n;
        at = put_at(buf, len, at, "t", h->seen, h->t);
        at = put_at(buf, len, at, "close", h->seen, h->closed);
        if (at < len) {
                if (h->rule == GP_CLOSE_NONE || h->rule >= GP_CLOSE__N)
                        n = snprintf(buf + at, len - at, " rule=-");
                else
                        n = snprintf(buf + at, len - at, " rule=%s:%d/%d",
                                     gp_close_rule_name(h->rule), h->idle, h->parts);
                at = n < 0 ? len : at + (size_t)n;
        }
        at = put_at(buf, len, at, "drain", h->seen, h->drained);
        put_at(buf, len, at, "clear", h->seen, h->clear);
}

/* ---- parsing -------------------------------------------------------------- */

typedef struct {
        const char *s, *end;
        char *err;
        size_t errlen;
} rd_t;

__attribute__((format(printf, 2, 3))) static int bad(rd_t *r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
        return -1;
}

/* The next space-separated word of r, which must start with "key=": its
 * value in *v, *vn. */
static int field(rd_t *r, const char *key, const char **v, size_t *vn) {
        size_t kn = strlen(key);
        if (r->s >= r->end)
                return bad(r, "gate-proxy.hop: %s= is missing", key);
        if (*r->s != ' ')
                return bad(r, "gate-proxy.hop: a space was expected before %s=", key);
        r->s++;
        const char *w = r->s;
        while (r->s < r->end && *r->s != ' ')
                r->s++;
        if ((size_t)(r->s - w) <= kn || memcmp(w, key, kn) || w[kn] != '=')
                return bad(r, "gate-proxy.hop: %s= was expected here", key);
        *v = w + kn + 1;
        *vn = (size_t)(r->s - *v);
        return 0;
}

/* A number as gp_parse_i64 reads it, but "-0" too is refused: a value
 * has one spelling. */
static int num(const char *v, size_t vn, int64_t *out) {
        const char *why;
        if (vn > 1 && v[0] == '-' && v[1] == '0')
                return -1;
        return gp_parse_i64(v, vn, out, &why) ? -1 : 0;
}

/* An instant as an offset from seen ("-": none). */
static int instant(rd_t *r, const char *key, int64_t seen, int64_t *out) {
        const char *v;
        size_t vn;
        int64_t off;
        if (field(r, key, &v, &vn))
                return -1;
        if (vn == 1 && *v == '-') {
                *out = GP_TS_NONE;
                return 0;
        }
        if (num(v, vn, &off) || off < 0)
                return bad(r, "gate-proxy.hop: %s= is not a number of ms (0 or more)", key);
        if (seen > 0 && off > INT64_MAX - seen)
                return bad(r, "gate-proxy.hop: %s= is too large", key);
        *out = seen + off;
        return 0;
}

/* A count of partitions, 0..1000000. */
static int count(const char *s, size_t n, int *out) {
        int64_t v;
        if (num(s, n, &v) || v < 0 || v > 1000000)
                return -1;
        *out = (int)v;
        return 0;
}

/* "-" or "RULE:IDLE/PARTS". */
static int rule(rd_t *r, gp_hop_t *h) {
        const char *v;
        size_t vn;
        if (field(r, "rule", &v, &vn))
                return -1;
        if (vn == 1 && *v == '-') {
                h->rule = GP_CLOSE_NONE;
                h->idle = h->parts = 0;
                return 0;
        }
        const char *colon = memchr(v, ':', vn), *end = v + vn;
        const char *slash = colon ? memchr(colon, '/', (size_t)(end - colon)) : NULL;
        if (!colon || !slash)
                return bad(r, "gate-proxy.hop: rule= is not %s", "RULE:IDLE/PARTS or -");
        if (gp_close_rule_parse(v, (size_t)(colon - v), &h->rule) || h->rule == GP_CLOSE_NONE)
                return bad(r, "gate-proxy.hop: rule= names no close rule (%s)",
                           "watermark, idle or forced");
        if (count(colon + 1, (size_t)(slash - colon - 1), &h->idle) ||
            count(slash + 1, (size_t)(end - slash - 1), &h->parts) || h->idle > h->parts)
                return bad(r, "gate-proxy.hop: rule= has no %s",
                           "IDLE/PARTS counts (0 <= IDLE <= PARTS)");
        return 0;
}

int gp_hoptime_parse(gp_hop_t *out, const char *s, size_t n, char *err, size_t errlen) {
        rd_t r = {s, s + n, err, errlen};
        gp_hop_t h;
        const char *v;
        size_t vn;
        gp_hoptime_init(&h);
        if (n == 0) {
                *out = h;
                return 0;
        }
        if (n >= GP_HOP_VALUE_MAX)
                return bad(&r, "gate-proxy.hop: longer than %d bytes", GP_HOP_VALUE_MAX - 1);
        if (memchr(s, '\0', n))
                return bad(&r, "gate-proxy.hop: %s", "a NUL byte inside");
        if (n < sizeof TAG - 1 || memcmp(s, TAG, sizeof TAG - 1))
                return bad(&r, "gate-proxy.hop: does not start with %s (another version?)",
                           TAG);
        r.s += sizeof TAG - 1;
        if (field(&r, "seen", &v, &vn))
                return -1;
        if (num(v, vn, &h.seen) || h.seen == GP_TS_NONE)
                return bad(&r, "gate-proxy.hop: seen= is not %s", "epoch ms");
        if (instant(&r, "t", h.seen, &h.t) || instant(&r, "close", h.seen, &h.closed) ||
            rule(&r, &h) || instant(&r, "drain", h.seen, &h.drained) ||
            instant(&r, "clear", h.seen, &h.clear))
                return -1;
        if (r.s != r.end)
                return bad(&r, "gate-proxy.hop: %s", "something follows clear=");
        if ((h.closed == GP_TS_NONE) != (h.rule == GP_CLOSE_NONE))
                return bad(&r, "gate-proxy.hop: %s",
                           "close= and rule= must both be set or both be -");
        *out = h;
        return 0;
}

/* ---- for people ----------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static size_t add(char *b, size_t len, size_t at,
                                                        const char *fmt, ...) {
        if (at >= len)
                return at;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b + at, len - at, fmt, ap);
        va_end(ap);
        return n < 0 ? len : at + (size_t)n;
}

static const char *rule_why(const gp_hop_t *h, char *b, size_t len) {
        switch (h->rule) {
        case GP_CLOSE_WATERMARK:
                snprintf(b, len, "watermark >= T + lateness, %d partition(s) all active",
                         h->parts);
                break;
        case GP_CLOSE_IDLE:
                snprintf(b, len,
                         "idle: %d of %d partition(s) idle past gate.watermark.idle.ms, "
                         "not waited for",
                         h->idle, h->parts);
                break;
        case GP_CLOSE_FORCED:
                snprintf(b, len, "forced: the map tore the old side down first");
                break;
        default:
                snprintf(b, len, "no rule");
        }
        return b;
}

void gp_hoptime_describe(const gp_hop_t *h, char *buf, size_t len) {
        char why[120];
        size_t at = 0;
        if (!len)
                return;
        buf[0] = '\0';
        if (h->seen == GP_TS_NONE) {
                add(buf, len, 0, "no hand-over seen");
                return;
        }
        /* Each instant after the last one known: "N s later"; the first
         * after TRANSITIONING. A missing instant is said as such. */
        int64_t last = h->seen;
        const char *later = "after TRANSITIONING";
        struct {
                const char *what;
                int64_t at;
        } steps[] = {{"T written", h->t},
                     {"old side closed", h->closed},
                     {"drained", h->drained},
                     {"clear written", h->clear}};
        bool waiting = false;
        for (size_t i = 0; i < 4; i++) {
                if (steps[i].at == GP_TS_NONE) {
                        /* T written by another instance (or before a
                         * restart): the rest is measured from the last
                         * instant known. */
                        bool later_known = false;
                        for (size_t j = i + 1; j < 4; j++)
                                later_known |= steps[j].at != GP_TS_NONE;
                        if (later_known) {
                                at = add(buf, len, at, "%s%s not seen by this proxy",
                                         at ? "; " : "", steps[i].what);
                                continue;
                        }
                        at = add(buf, len, at, "%swaiting: %s", at ? "; " : "",
                                 i == 0   ? "T to be written"
                                 : i == 1 ? "the old side to close"
                                 : i == 2 ? "the old group to drain"
                                          : "CLEAR_TO_TEARDOWN to be written");
                        waiting = true;
                        break;
                }
                int64_t d = span(last, steps[i].at);
                at = add(buf, len, at, "%s%s %" PRId64 ".%" PRId64 " s %s", at ? "; " : "",
                         steps[i].what, d / 1000, d % 1000 / 100, later);
                if (i == 1)
                        at = add(buf, len, at, " (%s)", rule_why(h, why, sizeof why));
                last = steps[i].at;
                later = "later";
        }
        if (!waiting && h->clear != GP_TS_NONE) {
                int64_t d = span(h->seen, h->clear);
                add(buf, len, at, "; %" PRId64 ".%" PRId64 " s in all", d / 1000,
                    d % 1000 / 100);
        }
}
