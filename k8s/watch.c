/* k8s/watch.c: the watch thread of one ConfigMap (see k8s/watch.h).
 * May use gate/, os/ and k8s/; pthreads. Nothing logs here: failures are kept
 * for the reader (gp_k8s_watch_latest, gp_k8s_watch_last_error). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/watch.h"
#include "k8s/wire.h"
#include "os/clock.h"
#include "os/worker.h"

#define BACKOFF_MIN_MS  250
#define BACKOFF_MAX_MS  30000
#define WATCH_TIMEOUT_S 240 /* plus up to 60 s of jitter */

enum { S_NONE = 0, S_DOC, S_GONE };

struct gp_k8s_watch {
        gp_k8s_t *k;
        char ns[64], name[256];
        uint32_t rnd;                 /* the thread's jitter */
        char start_rv[GP_K8S_RV_MAX]; /* watch from here first, without a GET */

        gp_worker_t wk; /* wk.lock guards everything below; wk.cond: stop, first outcome */
        bool first_done;
        int state;
        char *json;             /* S_DOC: the object */
        char rv[GP_K8S_RV_MAX]; /* of json, or of the deletion */
        uint64_t gen;
        char gone[700]; /* S_GONE: why */
        gp_err_t error; /* the last failure, code GP_OK after a success */
        bool error_get; /* it was a GET's (a good GET clears it) */
        gp_k8s_watch_stats_t stats;
};

/* One watch connection's reading state (the thread's own). */
typedef struct {
        gp_k8s_watch_t *w;
        gp_k8s_lines_t lines;
        char rv[GP_K8S_RV_MAX];
        bool relist;
        gp_err_t fail; /* why the reader ended the stream */
        uint64_t events;
} stream_t;

static uint32_t rnd(gp_k8s_watch_t *w) {
        uint32_t x = w->rnd; /* xorshift32 */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return w->rnd = x;
}

static bool stopping(gp_k8s_watch_t *w) {
        return gp_worker_quitting(&w->wk);
}

/* Publishes json (taken) at rv unless what is published is newer or the
 * same. Called with the lock held. */
static void publish_locked(gp_k8s_watch_t *w, char *json, const char *rv) {
        if (w->state != S_NONE && rv[0] && w->rv[0]) {
                int c = gp_k8s_rv_cmp(rv, w->rv);
                if (c == -1 || (c == 0 && w->state == S_DOC)) {
                        free(json);
                        return;
                }
        }
        free(w->json);
        w->json = json;
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
        w->state = S_DOC;
        w->gen++;
        w->first_done = true;
        gp_worker_wake(&w->wk);
}

static void publish(gp_k8s_watch_t *w, char *json, const char *rv) {
        pthread_mutex_lock(&w->wk.lock);
        publish_locked(w, json, rv);
        pthread_mutex_unlock(&w->wk.lock);
}

/* The watch works (an event came, or it ran its course): no failure now. */
static void healthy(gp_k8s_watch_t *w, bool get) {
        pthread_mutex_lock(&w->wk.lock);
        if (!get || w->error_get)
                gp_err_clear(&w->error);
        pthread_mutex_unlock(&w->wk.lock);
}

static void publish_gone(gp_k8s_watch_t *w, const char *rv, const char *why) {
        pthread_mutex_lock(&w->wk.lock);
        if (!(w->state == S_DOC && rv[0] && w->rv[0] && gp_k8s_rv_cmp(rv, w->rv) == -1) &&
            w->state != S_GONE) {
                free(w->json);
                w->json = NULL;
                snprintf(w->rv, sizeof(w->rv), "%s", rv);
                snprintf(w->gone, sizeof(w->gone), "%s", why);
                w->state = S_GONE;
                w->gen++;
        }
        w->first_done = true;
        gp_worker_wake(&w->wk);
        pthread_mutex_unlock(&w->wk.lock);
}

static void failure(gp_k8s_watch_t *w, const gp_err_t *why, bool get) {
        pthread_mutex_lock(&w->wk.lock);
        w->error = *why;
        w->error_get = get;
        w->stats.failures++;
        w->first_done = true;
        gp_worker_wake(&w->wk);
        pthread_mutex_unlock(&w->wk.lock);
}

/* Sleeps the next backoff (jittered), unless stopped meanwhile. */
static void backoff_sleep(gp_k8s_watch_t *w, int64_t *backoff) {
        *backoff = *backoff ? *backoff * 2 : BACKOFF_MIN_MS;
        if (*backoff > BACKOFF_MAX_MS)
                *backoff = BACKOFF_MAX_MS;
        int64_t ms = *backoff / 2 + (int64_t)(rnd(w) % (uint32_t)(*backoff / 2 + 1));
        int64_t until = gp_mono_ms() + (ms > 0 ? ms : 0);
        pthread_mutex_lock(&w->wk.lock);
        while (!stopping(w) && gp_worker_wait_until(&w->wk, until) == 0)
                ;
        pthread_mutex_unlock(&w->wk.lock);
}

static int on_line(void *opaque, const char *line, size_t len) {
        stream_t *s = opaque;
        gp_k8s_event_t ev;
        if (gp_k8s_event_parse(line, len, &ev, &s->fail)) {
                gp_err_prefix(&s->fail, "configmap %s/%s", s->w->ns, s->w->name);
                return 1;
        }
        if (ev.type != GP_K8S_EV_ERROR && !s->events)
                healthy(s->w, false);
        s->events++;
        pthread_mutex_lock(&s->w->wk.lock);
        s->w->stats.events++;
        pthread_mutex_unlock(&s->w->wk.lock);
        switch (ev.type) {
        case GP_K8S_EV_ADDED:
        case GP_K8S_EV_MODIFIED:
                snprintf(s->rv, sizeof(s->rv), "%s", ev.rv);
                publish(s->w, ev.object, ev.rv);
                ev.object = NULL;
                break;
        case GP_K8S_EV_DELETED: {
                char why[400];
                snprintf(why, sizeof(why), "configmap %s/%s: deleted", s->w->ns, s->w->name);
                snprintf(s->rv, sizeof(s->rv), "%s", ev.rv);
                publish_gone(s->w, ev.rv, why);
                break;
        }
        case GP_K8S_EV_BOOKMARK:
                snprintf(s->rv, sizeof(s->rv), "%s", ev.rv);
                break;
        case GP_K8S_EV_ERROR:
                if (ev.code == 410)
                        s->relist = true;
                else
                        gp_err_set(&s->fail, gp_k8s_status_code(ev.code),
                                   "WATCH configmap %.60s/%.200s: %.400s", s->w->ns,
                                   s->w->name, ev.message);
                gp_k8s_event_clear(&ev);
                return 1;
        }
        gp_k8s_event_clear(&ev);
        return 0;
}

static int on_data(void *opaque, const char *p, size_t n) {
        stream_t *s = opaque;
        int rc = gp_k8s_lines_feed(&s->lines, p, n, on_line, s);
        if (rc < 0 && !s->fail.code)
                gp_err_set(&s->fail, GP_ERR_INVALID,
                           "configmap %s/%s: a watch event longer than %d bytes", s->w->ns,
                           s->w->name, GP_K8S_MAX_EVENT);
        return rc != 0;
}

static int on_poll(void *opaque) {
        return stopping(((stream_t *)opaque)->w);
}

/* Appends rv to a URL, percent-encoding anything unusual. */
static void url_rv(char *out, size_t outlen, const char *rv) {
        static const char hex[] = "0123456789ABCDEF";
        size_t o = strlen(out);
        for (const unsigned char *p = (const unsigned char *)rv; *p && o + 4 < outlen; p++) {
                if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= 'A' && *p <= 'Z') || *p == '-' || *p == '.' || *p == '_') {
                        out[o++] = (char)*p;
                } else {
                        out[o++] = '%';
                        out[o++] = hex[*p >> 4];
                        out[o++] = hex[*p & 15];
                }
        }
        out[o] = '\0';
}

static void *run(void *arg) {
        gp_k8s_watch_t *w = arg;
        stream_t s = {.w = w};
        char rv[GP_K8S_RV_MAX] = "", path[1024];
        gp_err_t err;
        bool need_get = !w->start_rv[0];
        bool from_get = false; /* rv is the object's own version, just read */
        int64_t backoff = 0;

        gp_k8s_lines_init(&s.lines, GP_K8S_MAX_EVENT);
        snprintf(rv, sizeof(rv), "%s", w->start_rv);
        while (!stopping(w)) {
                if (need_get) {
                        gp_cm_t *cm = NULL;
                        long http = 0;
                        pthread_mutex_lock(&w->wk.lock);
                        w->stats.gets++;
                        pthread_mutex_unlock(&w->wk.lock);
                        int rc = gp_k8s_cm_get(w->k, w->ns, w->name, &cm, &http, &err);
                        if (rc == GP_OK) {
                                char *json = gp_cm_render_compact(cm);
                                snprintf(rv, sizeof(rv), "%s", gp_cm_resource_version(cm));
                                gp_cm_destroy(cm);
                                if (!json) {
                                        gp_err_set(&err, GP_ERR_NOMEM, "out of memory");
                                        failure(w, &err, true);
                                        backoff_sleep(w, &backoff);
                                        continue;
                                }
                                publish(w, json, rv);
                                healthy(w, true);
                                from_get = true;
                        } else if (rc == GP_ERR_NOT_FOUND) {
                                publish_gone(w, "", err.msg);
                                healthy(w, true);
                                rv[0] = '\0'; /* watch from now: ADDED when it comes */
                        } else {
                                failure(w, &err, true);
                                backoff_sleep(w, &backoff);
                                continue;
                        }
                        need_get = false;
                        backoff = 0;
                }

                int ts = WATCH_TIMEOUT_S + (int)(rnd(w) % 61);
                snprintf(path, sizeof(path),
                         "/api/v1/namespaces/%s/configmaps?watch=1&fieldSelector=metadata.name"
                         "%%3D%s&allowWatchBookmarks=true&timeoutSeconds=%d%s",
                         w->ns, w->name, ts, rv[0] ? "&resourceVersion=" : "");
                url_rv(path, sizeof(path), rv);
                snprintf(s.rv, sizeof(s.rv), "%s", rv);
                s.relist = false;
                gp_err_clear(&s.fail);
                s.events = 0;
                gp_k8s_lines_reset(&s.lines);
                pthread_mutex_lock(&w->wk.lock);
                w->stats.watches++;
                pthread_mutex_unlock(&w->wk.lock);

                int64_t t0 = gp_mono_ms();
                long http = 0;
                int rc = gp_k8s_stream(w->k, path, (long)(ts + 30) * 1000, on_data, on_poll,
                                       &s, &http, &err);
                /* Still at the version the GET gave: nothing came before the end. */
                bool after_get = from_get && !strcmp(rv, s.rv);
                from_get = false;
                snprintf(rv, sizeof(rv), "%s", s.rv);
                if (stopping(w))
                        break;
                if (s.relist || http == 410) {
                        pthread_mutex_lock(&w->wk.lock);
                        w->stats.relists++;
                        pthread_mutex_unlock(&w->wk.lock);
                        rv[0] = '\0';
                        if (after_get) {
                                /* The object's own version, just read, is
                                 * already older than the server's watch
                                 * history (the API server restarted since
                                 * the object last changed, or its history
                                 * moved on): another GET would give the
                                 * same version. Watch from now instead: the
                                 * server sends the object as it is (ADDED),
                                 * then every change. */
                                continue;
                        }
                        /* Our resourceVersion is too old: read again. */
                        need_get = true;
                        continue;
                }
                if (s.fail.code) {
                        failure(w, &s.fail, false);
                } else if (rc == 0 && http >= 200 && http < 300) {
                        /* The server ended the watch (its timeout): go on
                         * from rv at once, unless it ends them at once. */
                        if (s.events || gp_mono_ms() - t0 >= 1000) {
                                healthy(w, false);
                                backoff = 0;
                                continue;
                        }
                        gp_err_set(&err, GP_ERR_TRANSPORT,
                                   "WATCH configmap %s/%s: the server ended the watch at once",
                                   w->ns, w->name);
                        failure(w, &err, false);
                } else {
                        gp_err_prefix(&err, "WATCH configmap %.60s/%.200s", w->ns, w->name);
                        failure(w, &err, false);
                }
                if (s.events)
                        backoff = 0;
                /* After a failed watch the next attempt starts with a GET:
                 * should watching stay impossible (a Role without watch),
                 * the copy is still refreshed once per backoff. */
                need_get = true;
                backoff_sleep(w, &backoff);
        }
        gp_k8s_lines_free(&s.lines);
        return NULL;
}

gp_k8s_watch_t *gp_k8s_watch_start(gp_k8s_t *k, const char *ns, const char *name,
                                   gp_err_t *err) {
        return gp_k8s_watch_start_at(k, ns, name, NULL, err);
}

gp_k8s_watch_t *gp_k8s_watch_start_at(gp_k8s_t *k, const char *ns, const char *name,
                                      const char *rv, gp_err_t *err) {
        gp_k8s_watch_t *w;
        if (!gp_k8s_namespace_ok(ns) || !gp_k8s_name_ok(name)) {
                gp_err_set(err, GP_ERR_INVALID,
                           "configmap %.80s/%.80s: not a valid namespace and name",
                           ns ? ns : "", name ? name : "");
                return NULL;
        }
        if (!(w = calloc(1, sizeof(*w)))) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        w->k = k;
        snprintf(w->ns, sizeof(w->ns), "%s", ns);
        snprintf(w->name, sizeof(w->name), "%s", name);
        snprintf(w->start_rv, sizeof(w->start_rv), "%s", rv ? rv : "");
        w->rnd = (uint32_t)gp_mono_ms() ^ (uint32_t)(uintptr_t)w ^ 0x9e3779b9u;
        if (!w->rnd)
                w->rnd = 1;
        if (gp_worker_init(&w->wk)) {
                free(w);
                gp_err_set(err, GP_ERR_FAIL, "cannot make the watch's lock");
                return NULL;
        }
        if (gp_worker_start(&w->wk, run, w)) {
                gp_err_set(err, GP_ERR_FAIL, "cannot start the watch thread");
                gp_k8s_watch_stop(w);
                return NULL;
        }
        return w;
}

void gp_k8s_watch_stop(gp_k8s_watch_t *w) {
        if (!w)
                return;
        gp_worker_fini(&w->wk);
        free(w->json);
        free(w);
}

void gp_k8s_watch_wait_first(gp_k8s_watch_t *w, int64_t ms) {
        int64_t until = gp_mono_ms() + (ms > 0 ? ms : 0);
        pthread_mutex_lock(&w->wk.lock);
        while (!w->first_done && !stopping(w) && gp_worker_wait_until(&w->wk, until) == 0)
                ;
        pthread_mutex_unlock(&w->wk.lock);
}

int gp_k8s_watch_latest(gp_k8s_watch_t *w, uint64_t *gen, char **json, gp_err_t *err) {
        int rc;
        *json = NULL;
        pthread_mutex_lock(&w->wk.lock);
        *gen = w->gen;
        if (w->state == S_DOC) {
                rc = (*json = strdup(w->json))
                             ? GP_OK
                             : gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        } else if (w->state == S_GONE) {
                rc = gp_err_set(err, GP_ERR_NOT_FOUND, "%s", w->gone);
        } else if (w->error.code) {
                rc = w->error.code;
                if (err)
                        *err = w->error;
        } else {
                rc = gp_err_set(err, GP_ERR_TRANSPORT,
                                "configmap %s/%s: no answer from %s yet", w->ns, w->name,
                                gp_k8s_conf(w->k)->server);
        }
        pthread_mutex_unlock(&w->wk.lock);
        return rc;
}

uint64_t gp_k8s_watch_generation(gp_k8s_watch_t *w) {
        pthread_mutex_lock(&w->wk.lock);
        uint64_t g = w->gen;
        pthread_mutex_unlock(&w->wk.lock);
        return g;
}

void gp_k8s_watch_last_error(gp_k8s_watch_t *w, char *buf, size_t len) {
        pthread_mutex_lock(&w->wk.lock);
        snprintf(buf, len, "%s", w->error.msg);
        pthread_mutex_unlock(&w->wk.lock);
}

void gp_k8s_watch_stats(gp_k8s_watch_t *w, gp_k8s_watch_stats_t *out) {
        pthread_mutex_lock(&w->wk.lock);
        *out = w->stats;
        pthread_mutex_unlock(&w->wk.lock);
}

void gp_k8s_watch_offer(gp_k8s_watch_t *w, const gp_cm_t *cm) {
        char *json = gp_cm_render_compact(cm);
        if (!json)
                return;
        pthread_mutex_lock(&w->wk.lock);
        publish_locked(w, json, gp_cm_resource_version(cm));
        pthread_mutex_unlock(&w->wk.lock);
}
