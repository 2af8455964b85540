/* gate/checkpoint.c: encodes and strictly decodes the checkpoint line.
 * Pure: libc only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "gate/fingerprint.h"
#include "gate/timeparse.h"

static int put_ts(char *b, size_t len, int64_t v) {
        return v == GP_TS_NONE ? snprintf(b, len, "-") : snprintf(b, len, "%" PRId64, v);
}

static int put_off(char *b, size_t len, int64_t v) {
        return v < 0 ? snprintf(b, len, "-") : snprintf(b, len, "%" PRId64, v);
}

int gp_ckpt_encode(const gp_gate_t *g, const gp_part_t *p, char *buf, size_t len) {
        char t[24], tw[24], hi[24], pr[24];
        put_ts(t, sizeof(t), g->cutoff);
        put_ts(pr, sizeof(pr), p->promise);
        put_ts(tw, sizeof(tw), g->cutoff_wall);
        put_ts(hi, sizeof(hi), p->hi);
        char tail[160] = "";
        if (p->fp != GP_FP_NONE) {
                char sp[24], cp[24], ap[24];
                put_off(sp, sizeof(sp), p->sp);
                put_off(cp, sizeof(cp), p->cp);
                put_off(ap, sizeof(ap), p->ap);
                snprintf(tail, sizeof(tail),
                         " sp=%s cp=%s ap=%s rd=%d,%" PRIu64 ",%" PRIu64 " fp=%08" PRIx32, sp,
                         cp, ap, p->ro ? 1 : 0, p->rd[0], p->rd[1], p->fp);
        } else if (p->sp >= 0 || p->cp >= 0 || p->ap >= 0 || p->ro || p->rd[0] || p->rd[1] ||
                   g->tid)
                return -1; /* a gp2 line has no room for them */
        char tx[32] = "";
        if (p->fp != GP_FP_NONE)
                snprintf(tx, sizeof(tx), " tx=%" PRId64, g->tid);
        int n = snprintf(buf, len,
                         "gp%d seq=%" PRId64 "%s ph=%s old=%s new=%s T=%s tw=%s hi=%s "
                         "n=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " late=%" PRIu64 " st=%" PRIu64
                         ",%" PRIu64 " pr=%s cl=%d%s",
                         p->fp != GP_FP_NONE ? 5 : 2, g->seq, tx, gp_phase_name(g->phase),
                         gp_colour_name(g->old_c), gp_colour_name(g->new_c), t, tw, hi,
                         p->n[0], p->n[1], p->n[2], p->late, p->since_t[0], p->since_t[1], pr,
                         p->closed ? 1 : 0, tail);
        return n < 0 || (size_t)n >= len ? -1 : n;
}

/* A cursor over the line: the next space-separated "name=value" field. */
typedef struct {
        const char *p, *end;
} cur_t;

static int next_field(cur_t *c, const char *name, const char **v, size_t *vlen) {
        size_t nl = strlen(name);
        if ((size_t)(c->end - c->p) < nl + 1 || memcmp(c->p, name, nl) || c->p[nl] != '=')
                return -1;
        const char *s = c->p + nl + 1, *e = s;
        while (e < c->end && *e != ' ')
                e++;
        *v = s;
        *vlen = (size_t)(e - s);
        c->p = e < c->end ? e + 1 : e;
        return *vlen ? 0 : -1;
}

static int get_ts(cur_t *c, const char *name, int64_t *out) {
        const char *v, *why;
        size_t n;
        if (next_field(c, name, &v, &n))
                return -1;
        if (n == 1 && *v == '-') {
                *out = GP_TS_NONE;
                return 0;
        }
        return gp_parse_i64(v, n, out, &why) || *out == GP_TS_NONE ? -1 : 0;
}

/* A source offset (>= 0), or "-" for none (-1). */
static int get_off(cur_t *c, const char *name, int64_t *out) {
        int64_t v;
        if (get_ts(c, name, &v))
                return -1;
        if (v == GP_TS_NONE) {
                *out = -1;
                return 0;
        }
        *out = v;
        return v < 0 ? -1 : 0;
}

static int get_u64s(cur_t *c, const char *name, uint64_t *out, int count) {
        const char *v;
        size_t n;
        if (next_field(c, name, &v, &n))
                return -1;
        const char *e = v + n;
        for (int i = 0; i < count; i++) {
                uint64_t x = 0;
                const char *s = v;
                while (v < e && *v >= '0' && *v <= '9') {
                        unsigned d = (unsigned)(*v++ - '0');
                        if (x > (UINT64_MAX - d) / 10) /* exact: UINT64_MAX fits */
                                return -1;
                        x = x * 10 + d;
                }
                if (v == s || (v - s > 1 && *s == '0'))
                        return -1;
                out[i] = x;
                if (i + 1 < count) {
                        if (v >= e || *v != ',')
                                return -1;
                        v++;
                }
        }
        return v == e ? 0 : -1;
}

/* Exactly 8 lowercase hex digits, not all zero (GP_FP_NONE). */
static int get_fp(cur_t *c, const char *name, uint32_t *out) {
        const char *v;
        size_t n;
        if (next_field(c, name, &v, &n) || n != 8)
                return -1;
        uint32_t x = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned d;
                if (v[i] >= '0' && v[i] <= '9')
                        d = (unsigned)(v[i] - '0');
                else if (v[i] >= 'a' && v[i] <= 'f')
                        d = (unsigned)(v[i] - 'a' + 10);
                else
                        return -1;
                x = x << 4 | d;
        }
        *out = x;
        return x == GP_FP_NONE ? -1 : 0;
}

static int get_word(cur_t *c, const char *name, char *out, size_t outlen) {
        const char *v;
        size_t n;
        /* A NUL inside the value would end the C string early and let
         * "split\0junk" pass as "split". */
        if (next_field(c, name, &v, &n) || n >= outlen || memchr(v, '\0', n))
                return -1;
        memcpy(out, v, n);
        out[n] = '\0';
        return 0;
}

int gp_ckpt_decode(const char *buf, size_t len, gp_gate_t *g, gp_part_t *p, char *err,
                   size_t errlen) {
        cur_t c = {buf, buf + len};
        gp_gate_t ng;
        gp_part_t np = *p;
        char w[16];
        const char *field = "gp1";

        memset(&ng, 0, sizeof(ng));
        int version = len < 4 || memcmp(buf, "gp", 2) || buf[3] != ' ' ? 0
                      : buf[2] == '1'                                  ? 1
                      : buf[2] == '2'                                  ? 2
                      : buf[2] == '3'                                  ? 3
                      : buf[2] == '4'                                  ? 4
                      : buf[2] == '5'                                  ? 5
                                                                       : 0;
        if (!version) {
                snprintf(err, errlen,
                         "not a gate-proxy checkpoint (no 'gp1' to 'gp5' prefix)");
                return -1;
        }
        bool v2 = version >= 2;
        c.p += 4;
        if ((field = "seq", get_ts(&c, field, &ng.seq)) || ng.seq < 0)
                goto bad;
        if (version >= 5 && ((field = "tx", get_ts(&c, field, &ng.tid)) || ng.tid < 0))
                goto bad;
        if ((field = "ph", get_word(&c, field, w, sizeof(w))) || gp_phase_parse(w, &ng.phase))
                goto bad;
        if ((field = "old", get_word(&c, field, w, sizeof(w))) ||
            gp_colour_parse(w, &ng.old_c))
                goto bad;
        if ((field = "new", get_word(&c, field, w, sizeof(w))) ||
            gp_colour_parse(w, &ng.new_c))
                goto bad;
        if ((field = "T", get_ts(&c, field, &ng.cutoff)) ||
            (field = "tw", get_ts(&c, field, &ng.cutoff_wall)) ||
            (field = "hi", get_ts(&c, field, &np.hi)) ||
            (field = "n", get_u64s(&c, field, np.n, 3)) ||
            (field = "late", get_u64s(&c, field, &np.late, 1)) ||
            (field = "st", get_u64s(&c, field, np.since_t, 2)))
                goto bad;
        np.promise = GP_TS_NONE;
        np.closed = false;
        if (v2) {
                uint64_t cl;
                if ((field = "pr", get_ts(&c, field, &np.promise)) ||
                    (field = "cl", get_u64s(&c, field, &cl, 1)) || cl > 1)
                        goto bad;
                np.closed = cl == 1;
        }
        np.sp = np.cp = np.ap = -1;
        np.ro = false;
        np.rd[0] = np.rd[1] = 0;
        if (version >= 4) {
                uint64_t rd[3];
                if ((field = "sp", get_off(&c, field, &np.sp)) ||
                    (field = "cp", get_off(&c, field, &np.cp)) ||
                    (field = "ap", get_off(&c, field, &np.ap)) ||
                    (field = "rd", get_u64s(&c, field, rd, 3)) || rd[0] > 1)
                        goto bad;
                np.ro = rd[0] == 1;
                np.rd[0] = rd[1];
                np.rd[1] = rd[2];
        }
        np.fp = GP_FP_NONE;
        if (version >= 3 && (field = "fp", get_fp(&c, field, &np.fp)))
                goto bad;
        /* next_field steps over the separator after the last field, so a
         * trailing space would leave c.p == c.end: check the last byte as
         * well. */
        if (c.p != c.end || buf[len - 1] == ' ') {
                snprintf(err, errlen, "checkpoint: trailing data after '%s'",
                         version >= 3 ? "fp"
                         : v2         ? "cl"
                                      : "st");
                return -1;
        }
        if (np.ro && (np.sp < 0 || np.ap <= np.sp)) {
                snprintf(err, errlen,
                         "checkpoint: a re-delivery open without offsets to read again "
                         "(sp=%lld ap=%lld)",
                         (long long)np.sp, (long long)np.ap);
                return -1;
        }
        if ((ng.phase == GP_PHASE_SPLIT || ng.phase == GP_PHASE_CLOSED) &&
            ng.cutoff == GP_TS_NONE) {
                snprintf(err, errlen, "checkpoint: phase %s without a cutoff",
                         gp_phase_name(ng.phase));
                return -1;
        }
        *g = ng;
        *p = np;
        return 0;
bad:
        snprintf(err, errlen, "checkpoint: field '%s' missing or malformed", field);
        return -1;
}
