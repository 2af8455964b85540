/* proxy/schema/registry.c: the schema registry client and its cache (libcurl,
 * cJSON). The cache is the Kafka loop's alone; the fetch thread works on
 * its own entries and hands them over in a list under the lock, which the
 * loop takes into the cache (gp_registry_collect). */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/clock.h"
#include "os/worker.h"
#include "proxy/schema/avsc.h"
#include "proxy/base/log.h"
#include "proxy/schema/registry.h"

#define BODY_MAX       (4 << 20) /* a schema larger than 4 MiB is refused */
#define UNKNOWN_TTL_MS 60000     /* a 404 is asked again after a minute */
#define WANT_MAX       64        /* ids asked for and not answered yet */

typedef enum { E_FREE = 0, E_OK, E_REFUSED, E_UNAVAILABLE } estate_t;

typedef struct entry {
        uint32_t id;
        estate_t state;
        int32_t next;    /* the bucket chain, -1: end */
        int64_t expires; /* mono ms; 0: never */
        uint64_t used;   /* tick of the last lookup */
        gp_bad_code_t code;
        char why[320];
        gp_avro_t av;
} entry_t;

struct gp_registry {
        const gp_conf_t *conf;
        const gp_extract_t *x;
        CURL *h;
        struct curl_slist *hdrs;
        entry_t *e;
        uint32_t cap, n;
        int32_t *bucket;
        uint32_t nb;  /* a power of two */
        int32_t last; /* the entry of the last hit */
        uint64_t tick;
        /* The fetch thread; what follows is shared with it under w.lock
         * (w.quit is read by the transfer callback too). */
        gp_worker_t w;
        uint32_t want[WANT_MAX]; /* asked for, answer not collected yet */
        int n_want;
        entry_t *done; /* answers for the loop: at most one per id in want[],
                        * so WANT_MAX of them, allocated at start */
        int n_done;
        gp_registry_stats_t st;
};

typedef struct body {
        char *p;
        size_t n;
        bool over;  /* larger than BODY_MAX */
        bool nomem; /* no memory to hold it */
} body_t;

static size_t on_write(char *data, size_t size, size_t n, void *arg) {
        body_t *b = arg;
        size_t len = size * n;
        if (b->n + len > BODY_MAX) {
                b->over = true;
                return 0;
        }
        char *p = realloc(b->p, b->n + len + 1);
        if (!p) {
                b->nomem = true;
                return 0;
        }
        memcpy(p + b->n, data, len);
        b->p = p;
        b->n += len;
        p[b->n] = '\0';
        return len;
}

static void *run(void *arg);

/* Ends a transfer in flight when the registry is being destroyed. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
        (void)dt, (void)dn, (void)ut, (void)un;
        return gp_worker_quitting(&((gp_registry_t *)arg)->w) ? 1 : 0;
}

gp_registry_t *gp_registry_new(const gp_conf_t *conf, const gp_extract_t *x, gp_err_t *err) {
        gp_registry_t *r = calloc(1, sizeof(*r));
        CURLcode c = CURLE_OK;
        if (!r) {
                gp_err_set(err, GP_ERR_NOMEM, "schema.registry: out of memory");
                return NULL;
        }
        if (gp_worker_init(&r->w)) {
                free(r);
                gp_err_set(err, GP_ERR_FAIL, "schema.registry: cannot make its lock");
                return NULL;
        }
        r->conf = conf;
        r->x = x;
        r->cap = (uint32_t)conf->registry_cache_max;
        for (r->nb = 2; r->nb < 2 * r->cap; r->nb *= 2)
                ;
        r->e = calloc(r->cap, sizeof(*r->e));
        r->bucket = malloc(r->nb * sizeof(*r->bucket));
        r->done = calloc(WANT_MAX, sizeof(*r->done));
        if (!r->e || !r->bucket || !r->done) {
                gp_err_set(err, GP_ERR_NOMEM, "schema.registry: out of memory");
                gp_registry_destroy(r);
                return NULL;
        }
        for (uint32_t i = 0; i < r->nb; i++)
                r->bucket[i] = -1;
        r->last = -1;
        curl_global_init(CURL_GLOBAL_DEFAULT);
        if (!(r->h = curl_easy_init())) {
                gp_err_set(err, GP_ERR_FAIL, "schema.registry.url: libcurl could not start");
                gp_registry_destroy(r);
                return NULL;
        }
        r->hdrs = curl_slist_append(NULL, "Accept: application/vnd.schemaregistry.v1+json, "
                                          "application/json");
        if (!r->hdrs) {
                gp_err_set(err, GP_ERR_NOMEM, "schema.registry: out of memory");
                gp_registry_destroy(r);
                return NULL;
        }
#define SET(o, v)                                                                             \
        do {                                                                                  \
                if (!c)                                                                       \
                        c = curl_easy_setopt(r->h, o, v);                                     \
        } while (0)
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_PROTOCOLS_STR, "http,https");
        SET(CURLOPT_FOLLOWLOCATION, 0L);
        SET(CURLOPT_USERAGENT, "gate-proxy");
        SET(CURLOPT_HTTPHEADER, r->hdrs);
        SET(CURLOPT_CONNECTTIMEOUT_MS, (long)conf->registry_timeout_ms);
        SET(CURLOPT_TIMEOUT_MS, (long)conf->registry_timeout_ms);
        SET(CURLOPT_TCP_KEEPALIVE, 1L);
        SET(CURLOPT_WRITEFUNCTION, on_write);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, r);
        SET(CURLOPT_SSL_VERIFYPEER, 1L);
        SET(CURLOPT_SSL_VERIFYHOST, 2L);
        if (conf->registry_ca)
                SET(CURLOPT_CAINFO, conf->registry_ca);
        if (conf->registry_cert) {
                SET(CURLOPT_SSLCERT, conf->registry_cert);
                SET(CURLOPT_SSLCERTTYPE, "PEM");
                SET(CURLOPT_SSLKEY, conf->registry_key);
                SET(CURLOPT_SSLKEYTYPE, "PEM");
        }
        if (conf->registry_userinfo) {
                SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
                SET(CURLOPT_USERPWD, conf->registry_userinfo);
        }
#undef SET
        if (c) {
                gp_err_set(err, GP_ERR_FAIL, "schema.registry: libcurl refused an option: %s",
                           curl_easy_strerror(c));
                gp_registry_destroy(r);
                return NULL;
        }
        if (gp_worker_start(&r->w, run, r)) {
                gp_err_set(err, GP_ERR_FAIL, "schema.registry: cannot start the fetch thread");
                gp_registry_destroy(r);
                return NULL;
        }
        return r;
}

void gp_registry_destroy(gp_registry_t *r) {
        if (!r)
                return;
        gp_worker_stop(&r->w);
        for (int i = 0; i < r->n_done; i++)
                gp_avro_free(&r->done[i].av);
        free(r->done);
        gp_worker_fini(&r->w);
        for (uint32_t i = 0; i < r->cap && r->e; i++)
                gp_avro_free(&r->e[i].av);
        free(r->e);
        free(r->bucket);
        if (r->h)
                curl_easy_cleanup(r->h);
        curl_slist_free_all(r->hdrs);
        free(r);
}

static uint32_t hash(const gp_registry_t *r, uint32_t id) {
        return (id * 2654435761u) & (r->nb - 1);
}

static int32_t find(const gp_registry_t *r, uint32_t id) {
        if (r->last >= 0 && r->e[r->last].id == id && r->e[r->last].state != E_FREE)
                return r->last;
        for (int32_t i = r->bucket[hash(r, id)]; i >= 0; i = r->e[i].next)
                if (r->e[i].id == id)
                        return i;
        return -1;
}

static void unlink_entry(gp_registry_t *r, int32_t i) {
        int32_t *pp = &r->bucket[hash(r, r->e[i].id)];
        while (*pp != i)
                pp = &r->e[*pp].next;
        *pp = r->e[i].next;
        gp_avro_free(&r->e[i].av);
        memset(&r->e[i], 0, sizeof(r->e[i]));
        if (r->last == i)
                r->last = -1;
}

/* A slot for id: its own, a free one, or the least recently used. */
static entry_t *slot(gp_registry_t *r, uint32_t id) {
        int32_t i = find(r, id);
        if (i >= 0) {
                unlink_entry(r, i);
        } else if (r->n < r->cap) {
                i = (int32_t)r->n++;
        } else {
                /* A free slot (used 0) first, else the least recently used. */
                i = 0;
                for (uint32_t j = 1; j < r->cap; j++)
                        if (r->e[j].used < r->e[i].used)
                                i = (int32_t)j;
                if (r->e[i].state != E_FREE || r->e[i].used) {
                        unlink_entry(r, i);
                        r->st.evicted++;
                }
        }
        entry_t *e = &r->e[i];
        e->id = id;
        e->next = r->bucket[hash(r, id)];
        e->used = ++r->tick;
        r->bucket[hash(r, id)] = i;
        return e;
}

bool gp_registry_lookup(gp_registry_t *r, uint32_t id, int64_t mono, gp_schema_ref_t *out) {
        int32_t i = find(r, id);
        if (i < 0)
                return false;
        entry_t *e = &r->e[i];
        if (e->expires && mono >= e->expires)
                return false;
        r->last = i;
        e->used = ++r->tick;
        out->avro = e->state == E_OK ? &e->av : NULL;
        out->code = e->code;
        out->why = e->why;
        return true;
}

/* One request. GP_OK: the registry answered, e holds the answer (E_OK, or
 * E_REFUSED with its code: a lasting refusal). Otherwise worth asking
 * again, the reason in err: GP_ERR_TRANSPORT (unreachable, timing out,
 * any other HTTP status), GP_ERR_DENIED (401, 403: a configuration to
 * fix, retried all the same so records wait for the fix), GP_ERR_NOMEM. */
static gp_errcode_t request(gp_registry_t *r, uint32_t id, entry_t *e, gp_err_t *err) {
        char url[2048];
        body_t b = {0};
        long status = 0;
        const char *base = r->conf->registry_url;
        size_t bl = strlen(base);
        gp_errcode_t res = GP_OK;

        snprintf(url, sizeof url, "%.*s/schemas/ids/%" PRIu32,
                 (int)(bl && base[bl - 1] == '/' ? bl - 1 : bl), base, id);
        curl_easy_setopt(r->h, CURLOPT_URL, url);
        curl_easy_setopt(r->h, CURLOPT_WRITEDATA, &b);
        pthread_mutex_lock(&r->w.lock);
        r->st.requests++;
        pthread_mutex_unlock(&r->w.lock);
        CURLcode c = curl_easy_perform(r->h);
        if (b.nomem) {
                res = gp_err_set(err, GP_ERR_NOMEM, "GET %.400s: out of memory", url);
                goto out;
        }
        if (c != CURLE_OK && !(c == CURLE_WRITE_ERROR && b.over)) {
                res = gp_err_set(err, GP_ERR_TRANSPORT, "GET %.400s: %s", url,
                                 curl_easy_strerror(c));
                goto out;
        }
        curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
        if (status == 404) {
                e->code = GP_BAD_UNKNOWN_SCHEMA;
                snprintf(e->why, sizeof e->why,
                         "schema id %" PRIu32 " is not in the registry (404)", id);
                e->state = E_REFUSED;
                e->expires = gp_mono_ms() + UNKNOWN_TTL_MS;
                goto out;
        }
        if (status != 200) {
                /* 5xx and 429 pass; 401 and 403 are a configuration to fix,
                 * retried all the same so records wait for the fix. */
                cJSON *j = b.p ? cJSON_Parse(b.p) : NULL;
                const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
                res = gp_err_set(
                        err, status == 401 || status == 403 ? GP_ERR_DENIED : GP_ERR_TRANSPORT,
                        "GET %.400s: HTTP %ld%s%.60s", url, status,
                        cJSON_IsString(m) ? ": " : "",
                        cJSON_IsString(m) ? m->valuestring : "");
                cJSON_Delete(j);
                goto out;
        }
        e->state = E_REFUSED;
        e->expires = 0;
        e->code = GP_BAD_BAD_SCHEMA;
        cJSON *j = b.over ? NULL : cJSON_ParseWithLength(b.p ? b.p : "", b.n);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "schema");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "schemaType");
        gp_err_t cerr;
        if (b.over)
                snprintf(e->why, sizeof e->why,
                         "schema id %" PRIu32 " is larger than %d bytes", id, BODY_MAX);
        else if (!cJSON_IsString(s))
                snprintf(e->why, sizeof e->why,
                         "schema id %" PRIu32 ": the registry's answer has no \"schema\"", id);
        else if (cJSON_IsString(t) && strcmp(t->valuestring, "AVRO") != 0)
                snprintf(e->why, sizeof e->why, "schema id %" PRIu32 " is %.40s, not Avro", id,
                         t->valuestring);
        else {
                gp_errcode_t rc = gp_avsc_compile(s->valuestring, strlen(s->valuestring), r->x,
                                                  &e->av, &cerr);
                if (rc == GP_OK) {
                        e->state = E_OK;
                        e->code = GP_BAD_NONE;
                        snprintf(e->why, sizeof e->why, "schema id %" PRIu32, id);
                } else if (rc == GP_ERR_NOMEM) {
                        /* not a verdict on the schema: asked again */
                        e->state = E_FREE;
                        res = gp_err_set(err, GP_ERR_NOMEM, "schema id %" PRIu32 ": %s", id,
                                         cerr.msg);
                } else {
                        e->code = rc == GP_ERR_NOT_FOUND ? GP_BAD_FIELD_MISSING
                                                         : GP_BAD_BAD_SCHEMA;
                        snprintf(e->why, sizeof e->why, "schema id %" PRIu32 ": %.280s", id,
                                 cerr.msg);
                }
        }
        cJSON_Delete(j);
out:
        free(b.p);
        return res;
}

/* Waits ms, or less when asked to quit; true when quitting. */
static bool pause_ms(gp_registry_t *r, int64_t ms) {
        int64_t at = gp_mono_ms() + (ms > 0 ? ms : 0);
        pthread_mutex_lock(&r->w.lock);
        while (!gp_worker_quitting(&r->w) && gp_worker_wait_until(&r->w, at) == 0)
                ;
        bool quit = gp_worker_quitting(&r->w);
        pthread_mutex_unlock(&r->w.lock);
        return quit;
}

/* The thread's fetch of one id into e, asking again with a growing pause
 * for up to schema.registry.retry.ms. false: quitting, nothing learnt. */
static bool fetch(gp_registry_t *r, uint32_t id, entry_t *e) {
        gp_err_t why;
        int64_t start = gp_mono_ms(), wait = 250;
        int64_t end = start + r->conf->registry_retry_ms;
        e->id = id;
        for (int attempt = 1;; attempt++) {
                if (request(r, id, e, &why) == GP_OK) {
                        if (e->state == E_OK && attempt > 1)
                                gp_info("schema registry: schema id %" PRIu32
                                        " fetched after %d attempts in %" PRId64 " ms",
                                        id, attempt, gp_mono_ms() - start);
                        else if (e->state == E_REFUSED)
                                gp_warn("schema registry: %s: %s; its records go to the "
                                        "dead-letter topic",
                                        gp_bad_name(e->code), e->why);
                        return true;
                }
                pthread_mutex_lock(&r->w.lock);
                r->st.failures++;
                pthread_mutex_unlock(&r->w.lock);
                int64_t now = gp_mono_ms();
                if (attempt == 1 && now < end)
                        gp_warn("schema registry: %s; retrying for up to %" PRId64
                                " ms (schema.registry.retry.ms); records of this id wait, "
                                "their partitions are held, the others go on",
                                why.msg, r->conf->registry_retry_ms);
                if (now >= end) {
                        e->state = E_UNAVAILABLE;
                        e->code = GP_BAD_REGISTRY_UNAVAILABLE;
                        snprintf(e->why, sizeof e->why, "schema id %" PRIu32 ": %.280s", id,
                                 why.msg);
                        e->expires = now + (r->conf->registry_retry_ms > 1000
                                                    ? r->conf->registry_retry_ms
                                                    : 1000);
                        gp_warn("schema registry: gave up on schema id %" PRIu32
                                " after %d attempts in %" PRId64 " ms: %s",
                                id, attempt, now - start, why.msg);
                        return true;
                }
                if (pause_ms(r, wait < end - now ? wait : end - now))
                        return false;
                wait = wait * 2 > 5000 ? 5000 : wait * 2;
        }
}

static bool wanted(const gp_registry_t *r, uint32_t id) {
        for (int i = 0; i < r->n_want; i++)
                if (r->want[i] == id)
                        return true;
        return false;
}

/* The first id asked for without an answer waiting in done; false if none. */
static bool next_wanted(const gp_registry_t *r, uint32_t *id) {
        for (int i = 0; i < r->n_want; i++) {
                bool answered = false;
                for (int j = 0; j < r->n_done && !answered; j++)
                        answered = r->done[j].id == r->want[i];
                if (!answered) {
                        *id = r->want[i];
                        return true;
                }
        }
        return false;
}

/* The fetch thread: one id at a time, in the order asked; each answer
 * goes to the done list (want[] keeps the id until it is collected). */
static void *run(void *arg) {
        gp_registry_t *r = arg;
        uint32_t id;
        pthread_mutex_lock(&r->w.lock);
        while (!gp_worker_quitting(&r->w)) {
                if (!next_wanted(r, &id)) {
                        gp_worker_wait(&r->w, -1);
                        continue;
                }
                pthread_mutex_unlock(&r->w.lock);
                entry_t e = {0};
                bool ok = fetch(r, id, &e);
                pthread_mutex_lock(&r->w.lock);
                if (!ok) {
                        gp_avro_free(&e.av);
                        break;
                }
                /* next_wanted gives only ids of want[] without an answer in
                 * done, so done never holds more than WANT_MAX. */
                r->done[r->n_done++] = e;
        }
        pthread_mutex_unlock(&r->w.lock);
        return NULL;
}

bool gp_registry_want(gp_registry_t *r, uint32_t id) {
        bool asked = true;
        pthread_mutex_lock(&r->w.lock);
        if (!wanted(r, id)) {
                if (r->n_want < WANT_MAX) {
                        r->want[r->n_want++] = id;
                        gp_worker_wake(&r->w);
                } else {
                        asked = false;
                }
        }
        pthread_mutex_unlock(&r->w.lock);
        return asked;
}

int gp_registry_collect(gp_registry_t *r) {
        int gave_up = 0;
        pthread_mutex_lock(&r->w.lock);
        for (int i = 0; i < r->n_done; i++) {
                entry_t *a = &r->done[i];
                entry_t *e = slot(r, a->id);
                e->state = a->state;
                e->expires = a->expires;
                e->code = a->code;
                memcpy(e->why, a->why, sizeof e->why);
                e->av = a->av; /* moved */
                r->st.cached++;
                gave_up += a->state == E_UNAVAILABLE;
                for (int k = 0; k < r->n_want; k++)
                        if (r->want[k] == a->id) {
                                r->want[k] = r->want[--r->n_want];
                                break;
                        }
        }
        r->n_done = 0;
        r->last = -1;
        pthread_mutex_unlock(&r->w.lock);
        return gave_up;
}

void gp_registry_stats(gp_registry_t *r, gp_registry_stats_t *out) {
        pthread_mutex_lock(&r->w.lock);
        *out = r->st;
        pthread_mutex_unlock(&r->w.lock);
}
