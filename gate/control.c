/* gate/control.c: strict parsing of the blue/green ConfigMap data.
 * Pure: libc only (no I/O, no clock). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate/control.h"
#include "gate/timeparse.h"

static const char *const stage_names[] = {
        [GP_STAGE_INITIALIZING] = "INITIALIZING",
        [GP_STAGE_TRANSITIONING] = "TRANSITIONING",
        [GP_STAGE_CLEAR_TO_TEARDOWN] = "CLEAR_TO_TEARDOWN",
        [GP_STAGE_RUNNING] = "RUNNING",
        [GP_STAGE_FAILING] = "FAILING",
};

const char *gp_stage_name(gp_stage_t s) {
        return s <= GP_STAGE_FAILING ? stage_names[s] : "?";
}

const char *gp_wm_stage_name(gp_wm_stage_t s) {
        switch (s) {
        case GP_WMS_WAITING:
                return "WAITING_FOR_WATERMARK";
        case GP_WMS_SET:
                return "WATERMARK_SET";
        default:
                return "";
        }
}

static const char *find(const gp_kv_t *kv, size_t n, const char *key) {
        const char *v = NULL;
        for (size_t i = 0; i < n; i++)
                if (!strcmp(kv[i].key, key))
                        v = kv[i].value; /* the last one wins, as in JSON */
        return v;
}

/* A checked printf-style function, so -Wformat=2 (the CMake flags) can
 * verify every call's format against its arguments. */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen,
                                                      const char *key, const char *fmt, ...) {
        char reason[200];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        snprintf(err, errlen, "%s: %s", key, reason);
        return -1;
}

static int parse_int(const char *key, const char *v, int64_t min, int64_t *out, char *err,
                     size_t errlen) {
        const char *why = NULL;
        if (gp_parse_i64(v, strlen(v), out, &why))
                return fail(err, errlen, key, "'%s' is not an integer", v);
        if (*out < min)
                return fail(err, errlen, key, "'%s' is out of range", v);
        return 0;
}

int gp_control_parse(gp_control_t *out, const gp_kv_t *kv, size_t n, char *err,
                     size_t errlen) {
        gp_control_t c = {.toggle = GP_TS_NONE, .req_cutoff = GP_TS_NONE};
        const char *v;

        if (!(v = find(kv, n, GP_KEY_ACTIVE)))
                return fail(err, errlen, GP_KEY_ACTIVE, "missing (expected BLUE or GREEN)");
        if (strcmp(v, "BLUE") && strcmp(v, "GREEN"))
                return fail(err, errlen, GP_KEY_ACTIVE, "'%s' is not BLUE or GREEN", v);
        gp_colour_parse(v, &c.active);

        if (!(v = find(kv, n, GP_KEY_STAGE)))
                return fail(err, errlen, GP_KEY_STAGE, "missing");
        size_t s;
        for (s = 0; s <= GP_STAGE_FAILING; s++)
                if (!strcmp(v, stage_names[s]))
                        break;
        if (s > GP_STAGE_FAILING)
                return fail(err, errlen, GP_KEY_STAGE,
                            "'%s' is not one of INITIALIZING, TRANSITIONING, "
                            "CLEAR_TO_TEARDOWN, RUNNING, FAILING",
                            v);
        c.stage = (gp_stage_t)s;

        if (!(v = find(kv, n, GP_KEY_FIRST)))
                return fail(err, errlen, GP_KEY_FIRST, "missing (expected true or false)");
        if (!strcmp(v, "true"))
                c.is_first = true;
        else if (strcmp(v, "false"))
                return fail(err, errlen, GP_KEY_FIRST, "'%s' is not true or false", v);

        if ((v = find(kv, n, GP_KEY_DELAY)) &&
            parse_int(GP_KEY_DELAY, v, 0, &c.delay_ms, err, errlen))
                return -1;

        if ((v = find(kv, n, GP_KEY_WM_STAGE)) && *v) {
                if (!strcmp(v, "WAITING_FOR_WATERMARK"))
                        c.wm_stage = GP_WMS_WAITING;
                else if (!strcmp(v, "WATERMARK_SET"))
                        c.wm_stage = GP_WMS_SET;
                else
                        return fail(err, errlen, GP_KEY_WM_STAGE,
                                    "'%s' is not WAITING_FOR_WATERMARK or WATERMARK_SET", v);
        }
        if ((v = find(kv, n, GP_KEY_TOGGLE)) && *v &&
            parse_int(GP_KEY_TOGGLE, v, INT64_MIN + 1, &c.toggle, err, errlen))
                return -1;
        if (c.wm_stage == GP_WMS_SET && c.toggle == GP_TS_NONE)
                return fail(err, errlen, GP_KEY_TOGGLE,
                            "missing while watermark-stage is WATERMARK_SET");

        if ((v = find(kv, n, GP_KEY_REQ_CUTOFF)) && *v &&
            parse_int(GP_KEY_REQ_CUTOFF, v, INT64_MIN + 1, &c.req_cutoff, err, errlen))
                return -1;
        if ((v = find(kv, n, GP_KEY_REQ_ALIGN)) && *v) {
                if (parse_int(GP_KEY_REQ_ALIGN, v, 1, &c.req_align_ms, err, errlen))
                        return -1;
        }
        if ((v = find(kv, n, GP_KEY_TID)) && *v) {
                /* "N" or "N ended", N >= 1 */
                const char *sp = strchr(v, ' '), *why = NULL;
                size_t len = sp ? (size_t)(sp - v) : strlen(v);
                if (gp_parse_i64(v, len, &c.tid, &why) || c.tid < 1 ||
                    (sp && strcmp(sp, " ended")))
                        return fail(err, errlen, GP_KEY_TID,
                                    "'%s' is not a transition id: N or \"N ended\", N >= 1",
                                    v);
                c.tid_ended = sp != NULL;
        }
        *out = c;
        return 0;
}

bool gp_control_open(const gp_control_t *c) {
        return !c->is_first &&
               (c->stage == GP_STAGE_INITIALIZING || c->stage == GP_STAGE_TRANSITIONING ||
                c->stage == GP_STAGE_CLEAR_TO_TEARDOWN);
}

int64_t gp_control_tid(const gp_control_t *c) {
        return gp_control_open(c) && !c->tid_ended ? c->tid : 0;
}

bool gp_control_same_transition(const gp_control_t *a, const gp_control_t *b) {
        return a->active == b->active && a->is_first == b->is_first && a->stage == b->stage &&
               a->tid == b->tid && a->tid_ended == b->tid_ended;
}
