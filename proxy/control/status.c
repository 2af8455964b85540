/* proxy/control/status.c: status and publication on their own thread
 * (proxy/control/status.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/agree.h"
#include "gate/control.h"
#include "gate/hoptime.h"
#include "gate/mstatus.h"
#include "os/clock.h"
#include "os/worker.h"
#include "proxy/control/ctl.h"
#include "proxy/base/fault.h"
#include "proxy/base/log.h"
#include "proxy/control/status.h"

/* How often the thread looks at the map by itself: a map that moved (the
 * operator's TRANSITIONING) may call for a publication. */
#define LOOK_MS  100
#define RETRY_MS 1000

struct gp_status {
        gp_ctl_t *ctl; /* the thread's own */
        gp_worker_t w; /* w.lock guards what follows */
        bool st_new;   /* st holds a status not yet written */
        gp_status_kv_t st;
        gp_gate_t gate; /* the committed decisions */
        bool have_gate, gate_new;
        uint64_t posted, done;          /* posts made, and the last one written */
        uint64_t writes[GP_MAP_WRITES]; /* by outcome (gp_status_writes) */
        bool cas_cutoff;                /* gate.membership=group */
        int64_t forget_ms;              /* gate.member.forget.ms */
        int64_t other_cutoff;           /* another T found in the map, GP_TS_NONE */
        /* The hand-over's instants: the loop's (gp_status_hop), with T
         * and CLEAR_TO_TEARDOWN written as this thread writes them. */
        gp_hop_t hop;
        /* The thread's copy of st, written outside the lock; allocated
         * with the rest by gp_status_new, so the thread needs no memory of
         * its own. */
        gp_status_kv_t writing;
};

static void count(gp_status_t *s, int rc) {
        int i = rc == GP_OK ? 0 : rc == GP_ERR_DROPPED ? 1 : rc == GP_ERR_INVALID ? 2 : 3;
        uint64_t conflicts = gp_ctl_conflicts(s->ctl);
        pthread_mutex_lock(&s->w.lock);
        s->writes[i]++;
        s->writes[4] = conflicts;
        pthread_mutex_unlock(&s->w.lock);
}

void gp_status_writes(gp_status_t *s, uint64_t out[GP_MAP_WRITES]) {
        pthread_mutex_lock(&s->w.lock);
        memcpy(out, s->writes, sizeof(s->writes));
        pthread_mutex_unlock(&s->w.lock);
}

/* gate-proxy.hop as it stands. */
static void hop_value(gp_status_t *s, char *b, size_t len) {
        pthread_mutex_lock(&s->w.lock);
        gp_hop_t h = s->hop;
        pthread_mutex_unlock(&s->w.lock);
        gp_hoptime_format(&h, b, len);
}

/* Other members' keys the map may forget (gp_mstatus_forgotten), from the
 * map as last read, into keys (copied: a conflict re-reads the map); at
 * most FORGET_MAX a write. Only a member forgets: own is its key. */
#define FORGET_MAX     8
#define FORGET_KEY_MAX 320 /* a ConfigMap key has at most 253 characters */
static size_t forgettable(gp_status_t *s, const char *own, char keys[][FORGET_KEY_MAX]) {
        const gp_cm_t *doc = s->cas_cutoff && own ? gp_ctl_document(s->ctl) : NULL;
        size_t n = 0, nd = 0, pl = strlen(GP_KEY_MEMBER_PREFIX);
        const gp_kv_t *d = doc ? gp_cm_data(doc, &nd) : NULL;
        int64_t now = gp_now_ms();
        for (size_t i = 0; i < nd && n < FORGET_MAX; i++) {
                if (strncmp(d[i].key, GP_KEY_MEMBER_PREFIX, pl) || !strcmp(d[i].key, own) ||
                    strlen(d[i].key) >= FORGET_KEY_MAX ||
                    !gp_mstatus_forgotten(d[i].value, now, s->forget_ms))
                        continue;
                snprintf(keys[n++], FORGET_KEY_MAX, "%s", d[i].key);
        }
        return n;
}

static void write_status(gp_status_t *s, const gp_status_kv_t *st) {
        gp_kv_t kv[GP_STATUS_KEYS + 1 + FORGET_MAX];
        char hop[GP_HOP_VALUE_MAX], forget[FORGET_MAX][FORGET_KEY_MAX];
        gp_err_t err;
        const char *own = NULL;
        for (size_t i = 0; i < st->n; i++) {
                kv[i] = (gp_kv_t){st->key[i], st->value[i]};
                if (!strncmp(st->key[i], GP_KEY_MEMBER_PREFIX, strlen(GP_KEY_MEMBER_PREFIX)))
                        own = st->key[i];
        }
        hop_value(s, hop, sizeof hop);
        kv[st->n] = (gp_kv_t){GP_KEY_HOP, hop};
        size_t n = st->n + 1, nf = forgettable(s, own, forget);
        for (size_t i = 0; i < nf; i++)
                kv[n++] = (gp_kv_t){forget[i], NULL};
        gp_errcode_t rc = gp_ctl_patch(s->ctl, kv, n, NULL, &err);
        for (size_t i = 0; rc == GP_OK && i < nf; i++)
                gp_info("removed %s from the map: its member has not written it for more than "
                        "gate.member.forget.ms=%" PRId64,
                        forget[i], s->forget_ms);
        count(s, rc);
        /* A missing or unreadable map is left alone; the loop has said
         * why, once. */
        if (rc == GP_ERR_INVALID)
                gp_debug("status not written: %s", err.msg);
        else if (rc)
                gp_warn("status write: %s", err.msg);
}

/* Publishes one step of what g decided and the map does not show yet.
 * 1: written (there may be a next step), 0: nothing to publish or dropped,
 * -1: to be tried again later. */
static int publish(gp_status_t *s, const gp_gate_t *g) {
        const gp_control_t *ctl = gp_ctl_current(s->ctl);
        gp_publish_t pub;
        if (s->cas_cutoff && ctl && g->cutoff != GP_TS_NONE &&
            (g->phase == GP_PHASE_SPLIT || g->phase == GP_PHASE_CLOSED) &&
            ctl->stage == GP_STAGE_TRANSITIONING && !ctl->is_first &&
            ctl->active == g->new_c) {
                /* The map's T is publication, written once: another T
                 * there is reported and never followed nor written over,
                 * and CLEAR_TO_TEARDOWN waits (gp_agree_clear). */
                int64_t stored = ctl->wm_stage == GP_WMS_SET ? ctl->toggle : GP_TS_NONE;
                int64_t other = gp_agree_map(stored, g->cutoff) == GP_AGREE_MAP_CONFLICT
                                        ? stored
                                        : GP_TS_NONE;
                pthread_mutex_lock(&s->w.lock);
                int64_t was = s->other_cutoff;
                s->other_cutoff = other;
                pthread_mutex_unlock(&s->w.lock);
                if (other != was && other != GP_TS_NONE)
                        gp_warn("the map stores the cutoff %" PRId64 ", not the T=%" PRId64
                                " every partition routes by: reported, not followed, not "
                                "written over; CLEAR_TO_TEARDOWN waits until the map shows "
                                "T",
                                other, g->cutoff);
                if (other != GP_TS_NONE)
                        return 0;
        }
        if (!ctl || !gp_gate_publication(g, ctl, &pub))
                return 0;
        gp_control_t base = *ctl;
        char t[24], hop[GP_HOP_VALUE_MAX];
        gp_err_t err;
        gp_kv_t kv[4];
        size_t n = 0;
        /* The instants of this write go with it (gate/hoptime.h): a
         * reader that sees T or CLEAR_TO_TEARDOWN sees when. */
        int64_t now = gp_now_ms();
        pthread_mutex_lock(&s->w.lock);
        gp_hop_t h = s->hop;
        pthread_mutex_unlock(&s->w.lock);
        bool t_now = pub.wm_stage == GP_WMS_SET && gp_hoptime_mark(&h, &h.t, now);
        bool clear_now = pub.clear_to_teardown && gp_hoptime_mark(&h, &h.clear, now);
        if (pub.wm_stage != GP_WMS_NONE)
                kv[n++] = (gp_kv_t){GP_KEY_WM_STAGE, gp_wm_stage_name(pub.wm_stage)};
        if (pub.wm_stage == GP_WMS_SET) {
                snprintf(t, sizeof(t), "%" PRId64, pub.toggle);
                kv[n++] = (gp_kv_t){GP_KEY_TOGGLE, t};
        }
        if (pub.clear_to_teardown)
                kv[n++] = (gp_kv_t){GP_KEY_STAGE, "CLEAR_TO_TEARDOWN"};
        if (t_now || clear_now) {
                gp_hoptime_format(&h, hop, sizeof hop);
                kv[n++] = (gp_kv_t){GP_KEY_HOP, hop};
        }
        GP_FAULT("before-publish");
        gp_errcode_t rc = gp_ctl_patch(s->ctl, kv, n, &base, &err);
        count(s, rc);
        if (rc == GP_OK) {
                pthread_mutex_lock(&s->w.lock);
                if (s->hop.seen == h.seen) {
                        if (t_now)
                                gp_hoptime_mark(&s->hop, &s->hop.t, h.t);
                        if (clear_now)
                                gp_hoptime_mark(&s->hop, &s->hop.clear, h.clear);
                }
                pthread_mutex_unlock(&s->w.lock);
                for (size_t i = 0; i < n; i++)
                        if (strcmp(kv[i].key, GP_KEY_HOP))
                                gp_info("published %s=%s", kv[i].key, kv[i].value);
                return 1;
        }
        if (rc == GP_ERR_DROPPED) {
                gp_info("not published: the map moved on to another transition");
                return 0;
        }
        if (rc == GP_ERR_INVALID)
                /* Published once the map is valid again and still asks for
                 * this transition. */
                gp_debug("not published while the map is invalid: %s", err.msg);
        else
                gp_warn("publishing to %s failed (%s); retrying in 1 s",
                        gp_ctl_describe(s->ctl), err.msg);
        return -1;
}

/* Names the map's open transition, or marks its id ended, when the map
 * does not say so yet (gp_control_tid_due): one compare-and-set write,
 * the same from every member. g: the last committed gate (NULL: none
 * yet). 1: written, 0: nothing to write or dropped, -1: to be tried again
 * later. */
static int name_transition(gp_status_t *s, const gp_gate_t *g) {
        const gp_control_t *ctl = gp_ctl_current(s->ctl);
        char id[32];
        if (!ctl || !gp_gate_tid_due(g, ctl, gp_now_ms(), id, sizeof id))
                return 0;
        gp_control_t base = *ctl;
        gp_kv_t kv = {GP_KEY_TID, id};
        gp_err_t err;
        gp_errcode_t rc = gp_ctl_patch(s->ctl, &kv, 1, &base, &err);
        count(s, rc);
        if (rc == GP_OK) {
                gp_info("published %s=%s", GP_KEY_TID, id);
                return 1;
        }
        if (rc == GP_ERR_DROPPED || rc == GP_ERR_INVALID)
                return 0; /* decided again on the map as it is now */
        gp_warn("naming the transition in %s failed (%s); retrying in 1 s",
                gp_ctl_describe(s->ctl), err.msg);
        return -1;
}

static void *run(void *arg) {
        gp_status_t *s = arg;
        gp_status_kv_t *st = &s->writing;
        int64_t retry_at = 0;
        pthread_mutex_lock(&s->w.lock);
        while (!gp_worker_quitting(&s->w)) {
                if (!s->st_new && !s->gate_new) {
                        gp_worker_wait(&s->w, LOOK_MS);
                        if (gp_worker_quitting(&s->w))
                                break;
                }
                bool write_st = s->st_new, have_gate = s->have_gate;
                bool gate_new = s->gate_new;
                if (write_st)
                        *st = s->st;
                gp_gate_t g = s->gate;
                uint64_t posted = s->posted;
                s->st_new = s->gate_new = false;
                pthread_mutex_unlock(&s->w.lock);

                /* A moved map, new decisions, or a retry due. */
                bool moved = gp_ctl_poll(s->ctl, false) == 1;
                if (write_st)
                        write_status(s, st);
                bool due = moved || gate_new || write_st ||
                           (retry_at && gp_mono_ms() >= retry_at);
                if (due) {
                        int rc = name_transition(s, have_gate ? &g : NULL), steps = 0;
                        retry_at = rc < 0 ? gp_mono_ms() + RETRY_MS : 0;
                        while (have_gate && rc >= 0 && (rc = publish(s, &g)) == 1 &&
                               ++steps < 4)
                                ;
                        if (rc < 0)
                                retry_at = gp_mono_ms() + RETRY_MS;
                }

                pthread_mutex_lock(&s->w.lock);
                s->done = posted;
                gp_worker_wake(&s->w);
        }
        pthread_mutex_unlock(&s->w.lock);
        return NULL;
}

gp_status_t *gp_status_new(const gp_conf_t *conf, gp_err_t *err) {
        gp_status_t *s = calloc(1, sizeof(*s));
        if (!s) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        if (gp_worker_init(&s->w)) {
                free(s);
                gp_err_set(err, GP_ERR_FAIL, "status writer: cannot make its lock");
                return NULL;
        }
        s->other_cutoff = GP_TS_NONE;
        gp_hoptime_init(&s->hop);
        s->cas_cutoff = conf->membership == GP_MEMBER_GROUP;
        s->forget_ms = conf->member_forget_ms;
        if (!(s->ctl = gp_ctl_new_conf(conf, err)))
                goto fail;
        gp_ctl_cas_cutoff(s->ctl, s->cas_cutoff);
        if (gp_worker_start(&s->w, run, s)) {
                gp_err_set(err, GP_ERR_FAIL, "status writer: cannot start its thread");
                goto fail;
        }
        return s;
fail:
        gp_status_destroy(s);
        return NULL;
}

void gp_status_destroy(gp_status_t *s) {
        if (!s)
                return;
        gp_worker_stop(&s->w);
        gp_ctl_destroy(s->ctl);
        gp_worker_fini(&s->w);
        free(s);
}

void gp_status_set(gp_status_kv_t *st, const char *key, const char *fmt, ...) {
        size_t i = 0;
        while (i < st->n && strcmp(st->key[i], key))
                i++;
        if (i == GP_STATUS_KEYS)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->value[i], GP_STATUS_VALUE_MAX, fmt, ap);
        va_end(ap);
        st->key[i] = key;
        if (i == st->n)
                st->n++;
}

void gp_status_post(gp_status_t *s, const gp_status_kv_t *st) {
        pthread_mutex_lock(&s->w.lock);
        s->st = *st;
        s->st_new = true;
        s->posted++;
        gp_worker_wake(&s->w);
        pthread_mutex_unlock(&s->w.lock);
}

void gp_status_committed(gp_status_t *s, const gp_gate_t *committed) {
        const gp_gate_t *a = committed, *b = &s->gate;
        pthread_mutex_lock(&s->w.lock);
        /* Every commit bumps seq; only a change of decisions is news. */
        if (!s->have_gate || a->phase != b->phase || a->old_c != b->old_c ||
            a->new_c != b->new_c || a->cutoff != b->cutoff || a->tid != b->tid) {
                s->gate = *committed;
                s->have_gate = s->gate_new = true;
                s->posted++;
                gp_worker_wake(&s->w);
        } else
                s->gate = *committed;
        pthread_mutex_unlock(&s->w.lock);
}

int gp_status_flush(gp_status_t *s, int64_t wait_ms) {
        int rc = 0;
        int64_t at = gp_mono_ms() + (wait_ms > 0 ? wait_ms : 0);
        pthread_mutex_lock(&s->w.lock);
        uint64_t want = s->posted;
        while (s->done < want && !gp_worker_quitting(&s->w) && rc != ETIMEDOUT)
                rc = gp_worker_wait_until(&s->w, at);
        rc = s->done >= want ? 0 : -1;
        pthread_mutex_unlock(&s->w.lock);
        return rc;
}

int64_t gp_status_other_cutoff(gp_status_t *s) {
        pthread_mutex_lock(&s->w.lock);
        int64_t v = s->other_cutoff;
        pthread_mutex_unlock(&s->w.lock);
        return v;
}

void gp_status_hop(gp_status_t *s, const gp_hop_t *h) {
        pthread_mutex_lock(&s->w.lock);
        if (h->seen != s->hop.seen)
                s->hop = *h; /* another hop: what this thread wrote was for the last */
        else {
                int64_t t = s->hop.t, clear = s->hop.clear;
                s->hop = *h;
                s->hop.t = t;
                s->hop.clear = clear;
        }
        pthread_mutex_unlock(&s->w.lock);
}
