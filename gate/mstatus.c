/* gate/mstatus.c: a member's status line, and the pipeline's view
 * (gate/mstatus.h). Pure: libc only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/mstatus.h"
#include "gate/timeparse.h"

int gp_mstatus_encode(const gp_mstatus_t *m, char *buf, size_t len) {
        char rd[112] = "-";
        if (m->rd)
                snprintf(rd, sizeof rd, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
                         gp_colour_name(m->rd_to), m->rd_sent, m->rd_left, m->rd_lost,
                         m->rd_open);
        int k = snprintf(buf, len,
                         "phase=%s tx=%" PRId64 " parts=%" PRIu64 " n=%" PRIu64 ",%" PRIu64
                         ",%" PRIu64 " late=%" PRIu64 " rd=%s beat=%" PRId64 " run=%d",
                         gp_phase_name(m->phase), m->tid, m->parts, m->n[0], m->n[1], m->n[2],
                         m->late, rd, m->beat, m->run ? 1 : 0);
        return k < 0 || (size_t)k >= len ? -1 : k;
}

/* A cursor over the line: the next "name=value" field, space-separated. */
typedef struct {
        const char *p, *end;
        const char *field; /* the field being read, for the error */
} cur_t;

static int field(cur_t *c, const char *name, const char **v, size_t *vl) {
        size_t nl = strlen(name);
        c->field = name;
        if ((size_t)(c->end - c->p) <= nl || memcmp(c->p, name, nl) || c->p[nl] != '=')
                return -1;
        const char *s = c->p + nl + 1, *e = s;
        while (e < c->end && *e != ' ')
                e++;
        if (e == s)
                return -1;
        *v = s;
        *vl = (size_t)(e - s);
        c->p = e < c->end ? e + 1 : e;
        return 0;
}

static int num(const char *s, size_t len, int64_t *out) {
        const char *why;
        return gp_parse_i64(s, len, out, &why);
}

static int unum(const char *s, size_t len, uint64_t *out) {
        int64_t v;
        if (num(s, len, &v) || v < 0)
                return -1;
        *out = (uint64_t)v;
        return 0;
}

/* n comma-separated non-negative numbers, exactly. */
static int unums(const char *s, size_t len, uint64_t *out, int n) {
        const char *end = s + len;
        for (int i = 0; i < n; i++) {
                const char *e = memchr(s, ',', (size_t)(end - s));
                if (i == n - 1 ? e != NULL : e == NULL)
                        return -1;
                if (!e)
                        e = end;
                if (unum(s, (size_t)(e - s), &out[i]))
                        return -1;
                s = e + 1;
        }
        return 0;
}

static int word(const char *s, size_t len, char *out, size_t outlen) {
        if (len >= outlen)
                return -1;
        memcpy(out, s, len);
        out[len] = '\0';
        return 0;
}

int gp_mstatus_decode(const char *s, size_t len, gp_mstatus_t *m, char *err, size_t errlen) {
        cur_t c = {s, s + len, ""};
        const char *v;
        size_t vl;
        char w[16];
        gp_mstatus_t r = {0};
        uint64_t u[4];
        if (field(&c, "phase", &v, &vl) || word(v, vl, w, sizeof w) ||
            gp_phase_parse(w, &r.phase))
                goto bad;
        if (field(&c, "tx", &v, &vl) || num(v, vl, &r.tid) || r.tid < 0)
                goto bad;
        if (field(&c, "parts", &v, &vl) || unum(v, vl, &r.parts))
                goto bad;
        if (field(&c, "n", &v, &vl) || unums(v, vl, r.n, 3))
                goto bad;
        if (field(&c, "late", &v, &vl) || unum(v, vl, &r.late))
                goto bad;
        if (field(&c, "rd", &v, &vl))
                goto bad;
        if (!(vl == 1 && *v == '-')) {
                const char *comma = memchr(v, ',', vl);
                if (!comma || word(v, (size_t)(comma - v), w, sizeof w) ||
                    gp_colour_parse(w, &r.rd_to) ||
                    unums(comma + 1, vl - (size_t)(comma + 1 - v), u, 4))
                        goto bad;
                r.rd = true;
                r.rd_sent = u[0];
                r.rd_left = u[1];
                r.rd_lost = u[2];
                r.rd_open = u[3];
        }
        if (field(&c, "beat", &v, &vl) || num(v, vl, &r.beat))
                goto bad;
        if (field(&c, "run", &v, &vl) || vl != 1 || (*v != '0' && *v != '1'))
                goto bad;
        r.run = *v == '1';
        c.field = "the end of the line";
        if (c.p != c.end || (len && s[len - 1] == ' '))
                goto bad;
        *m = r;
        return 0;
bad:
        snprintf(err, errlen, "a member's status: bad or missing %s", c.field);
        return -1;
}

void gp_mstatus_view(const gp_mstatus_t *m, size_t n, int64_t now, int64_t stale_ms,
                     gp_mstatus_view_t *out) {
        memset(out, 0, sizeof *out);
        out->oldest = GP_TS_NONE;
        out->one_phase = true;
        for (size_t i = 0; i < n; i++) {
                const gp_mstatus_t *s = &m[i];
                if (!s->run || now - s->beat > stale_ms) {
                        out->gone++;
                        continue;
                }
                /* The phase of those that own partitions: one with none
                 * took no step of its own. */
                if (s->parts && !out->owning)
                        out->phase = s->phase;
                else if (s->parts && s->phase != out->phase)
                        out->one_phase = false;
                else if (!out->live && !out->owning)
                        out->phase = s->phase;
                out->owning += s->parts > 0;
                out->live++;
                out->parts += s->parts;
                for (int d = 0; d < 3; d++)
                        out->n[d] += s->n[d];
                out->late += s->late;
                if (s->rd) {
                        out->rd_members++;
                        out->rd_sent += s->rd_sent;
                        out->rd_left += s->rd_left;
                        out->rd_lost += s->rd_lost;
                        out->rd_open += s->rd_open;
                }
                if (out->oldest == GP_TS_NONE || s->beat < out->oldest)
                        out->oldest = s->beat;
        }
}

bool gp_mstatus_forgotten(const char *value, int64_t now, int64_t after_ms) {
        gp_mstatus_t m;
        char err[64];
        if (!value || after_ms <= 0 ||
            gp_mstatus_decode(value, strlen(value), &m, err, sizeof err))
                return false;
        return m.beat < now && now - m.beat > after_ms;
}
