/* tests/integration/k8s_client_check.c: the k8s/ client against the real
 * API server, for what the proxy's run does not show: a rotated token
 * (the cached one now gets 401: the file is re-read and the request
 * retried at once), 409 with the API's message, 410 for a watch from a
 * version the server no longer has and the watch thread past it, and the
 * watch thread's latency.
 * Run by tests/integration/k8s_handshake.sh, which sets the stage:
 *   k8s_client_check KUBECONFIG TOKEN_FILE NEXT_TOKEN_FILE NS CONFIGMAP SA_DELETE_CMD
 * and ctest sets GP_K8S_EXPIRE_CMD, a command that makes every version up
 * to now too old (tests/k8s/apiserver.sh restart, then compact).
 * KUBECONFIG reads its token from TOKEN_FILE, which holds a ServiceAccount
 * token; this program copies NEXT_TOKEN_FILE over it and runs
 * SA_DELETE_CMD, which deletes that ServiceAccount (its token then gets
 * 401). Prints "ok ..." lines; exits 1 on the first failure.
 * Uses k8s/ only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "k8s/client.h"
#include "k8s/watch.h"
#include "k8s/wire.h"

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define CHECK(cond, ...)                                                                      \
        do {                                                                                  \
                if (!(cond)) {                                                                \
                        fprintf(stderr, "k8s_client_check: FAIL: " __VA_ARGS__);              \
                        fputc('\n', stderr);                                                  \
                        exit(1);                                                              \
                }                                                                             \
        } while (0)

static void copy_file(const char *from, const char *to) {
        char buf[65536], tmp[4200];
        FILE *in = fopen(from, "rb");
        CHECK(in, "cannot read %s", from);
        size_t n = fread(buf, 1, sizeof(buf), in);
        fclose(in);
        snprintf(tmp, sizeof(tmp), "%s.new", to);
        FILE *out = fopen(tmp, "wb");
        CHECK(out && fwrite(buf, 1, n, out) == n && fclose(out) == 0, "cannot write %s", tmp);
        CHECK(rename(tmp, to) == 0, "cannot rename %s", tmp);
}

typedef struct {
        char lines[8][2048];
        int n;
} lines_t;

static int keep_line(void *opaque, const char *line, size_t len) {
        lines_t *l = opaque;
        if (l->n < 8)
                snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%.*s", (int)len, line);
        return 0;
}

static int sink(void *opaque, const char *p, size_t n) {
        static gp_k8s_lines_t splitter;
        if (!splitter.max)
                gp_k8s_lines_init(&splitter, GP_K8S_MAX_EVENT);
        return gp_k8s_lines_feed(&splitter, p, n, keep_line, opaque) < 0;
}

int main(int argc, char **argv) {
        gp_err_t err;
        if (argc != 7) {
                fprintf(stderr,
                        "usage: k8s_client_check KUBECONFIG TOKEN_FILE NEXT_TOKEN_FILE "
                        "NS CONFIGMAP SA_DELETE_CMD\n");
                return 2;
        }
        const char *kc = argv[1], *tok = argv[2], *next = argv[3], *ns = argv[4],
                   *cm = argv[5];
        gp_k8s_conf_t *conf = gp_k8s_kubeconfig_load(kc, &err);
        CHECK(conf, "%s", err.msg);
        CHECK(conf->token_file && !strcmp(conf->token_file, tok), "the kubeconfig must use %s",
              tok);
        gp_k8s_t *k = gp_k8s_new(conf, &err);
        CHECK(k, "%s", err.msg);

        /* 1. A token that stops working is re-read at once after the 401. */
        char oldtok[8192] = "";
        FILE *f = fopen(tok, "rb");
        CHECK(f && fgets(oldtok, sizeof(oldtok), f), "cannot read %s", tok);
        fclose(f);
        oldtok[strcspn(oldtok, "\r\n")] = '\0';
        gp_cm_t *doc = NULL;
        long http = 0;
        int rc = gp_k8s_cm_get(k, ns, cm, &doc, &http, &err);
        CHECK(rc == GP_OK, "GET with the ServiceAccount token: %s", err.msg);
        gp_cm_destroy(doc); /* k now holds that token for up to 60 s */
        copy_file(next, tok);
        CHECK(system(argv[6]) == 0, "%s failed", argv[6]);
        gp_k8s_conf_t *oconf = gp_k8s_kubeconfig_load(kc, &err);
        CHECK(oconf, "%s", err.msg);
        free(oconf->token_file);
        oconf->token_file = NULL;
        oconf->token = strdup(oldtok);
        gp_k8s_t *old = gp_k8s_new(oconf, &err);
        CHECK(old, "%s", err.msg);
        int64_t t0 = mono_ms();
        for (;;) { /* until the server refuses the old token */
                rc = gp_k8s_cm_get(old, ns, cm, &doc, &http, &err);
                gp_cm_destroy(doc);
                if (http == 401)
                        break;
                CHECK(mono_ms() - t0 < 10000,
                      "the deleted ServiceAccount's token still works");
                usleep(100 * 1000);
        }
        CHECK(strstr(err.msg, ": 401 Unauthorized"), "401 message: %s", err.msg);
        gp_k8s_destroy(old);
        rc = gp_k8s_cm_get(k, ns, cm, &doc, &http, &err);
        CHECK(rc == GP_OK, "GET after the token was refused: %s", err.msg);
        gp_cm_destroy(doc);
        printf("ok   the cached token refused (401): the token file was re-read and the "
               "request retried\n");

        /* 1b. TLS is verified: without the cluster's CA the server is refused. */
        gp_k8s_conf_t *noca = gp_k8s_kubeconfig_load(kc, &err);
        CHECK(noca, "%s", err.msg);
        free(noca->ca_data);
        noca->ca_data = NULL;
        noca->ca_len = 0;
        gp_k8s_t *k3 = gp_k8s_new(noca, &err);
        CHECK(k3, "%s", err.msg);
        rc = gp_k8s_cm_get(k3, ns, cm, &doc, &http, &err);
        CHECK(rc == GP_ERR_TRANSPORT && http == 0 && strstr(err.msg, "certificate"),
              "without the CA: rc %d, HTTP %ld: %s", rc, http, err.msg);
        gp_k8s_destroy(k3);
        printf("ok   without the cluster's CA: %s\n", strstr(err.msg, ": ") + 2);

        /* 2. 409 with the API's message. */
        rc = gp_k8s_cm_get(k, ns, cm, &doc, NULL, &err);
        CHECK(rc == GP_OK, "%s", err.msg);
        char rv[64];
        snprintf(rv, sizeof(rv), "%s", gp_cm_resource_version(doc));
        gp_cm_destroy(doc);
        gp_kv_t kv[] = {{"gate-proxy.check", "1"}};
        gp_cm_t *after = NULL;
        rc = gp_k8s_cm_patch(k, ns, cm, rv, kv, 1, &after, &err);
        CHECK(rc == GP_OK && after, "PATCH at the current version: %s", err.msg);
        CHECK(strcmp(gp_cm_resource_version(after), rv), "the version did not move");
        gp_cm_destroy(after);
        kv[0].value = "2";
        rc = gp_k8s_cm_patch(k, ns, cm, rv, kv, 1, NULL, &err);
        char want[300];
        snprintf(want, sizeof(want),
                 "PATCH configmap %s/%s: 409 Conflict: Operation cannot be fulfilled on "
                 "configmaps \"%s\": the object has been modified",
                 ns, cm, cm);
        CHECK(rc == GP_ERR_CONFLICT && strstr(err.msg, want) == err.msg,
              "stale PATCH: rc %d: %s", rc, err.msg);
        printf("ok   stale PATCH: %.120s...\n", err.msg);
        kv[0].value = NULL;
        rc = gp_k8s_cm_patch(k, ns, cm, NULL, kv, 1, NULL, &err);
        CHECK(rc == GP_OK, "PATCH deleting a key: %s", err.msg);

        /* 3. A watch from a resourceVersion the server no longer has: 410.
         * GP_K8S_EXPIRE_CMD makes every version up to now too old: the
         * fixture restarted (a watch is served from the API server's watch
         * cache, whose history starts at the revision of its start), then
         * etcd compacted at its current revision. */
        const char *expire = getenv("GP_K8S_EXPIRE_CMD");
        CHECK(expire && *expire, "GP_K8S_EXPIRE_CMD is not set (run through ctest)");
        rc = gp_k8s_cm_get(k, ns, cm, &doc, NULL, &err);
        CHECK(rc == GP_OK, "%s", err.msg);
        snprintf(rv, sizeof(rv), "%s", gp_cm_resource_version(doc));
        gp_cm_destroy(doc);
        CHECK(system(expire) == 0, "%s failed", expire);
        char path[600];
        snprintf(path, sizeof(path),
                 "/api/v1/namespaces/%s/configmaps?watch=1&fieldSelector=metadata.name%%3D%s"
                 "&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=%s",
                 ns, cm, rv);
        lines_t got = {.n = 0};
        rc = gp_k8s_stream(k, path, 10000, sink, NULL, &got, &http, &err);
        char gone[400] = "";
        if (http == 410)
                snprintf(gone, sizeof(gone), "HTTP 410: %.300s", err.msg);
        for (int i = 0; i < got.n && !gone[0]; i++) {
                gp_k8s_event_t ev;
                gp_err_t perr;
                if (!gp_k8s_event_parse(got.lines[i], strlen(got.lines[i]), &ev, &perr) &&
                    ev.type == GP_K8S_EV_ERROR && ev.code == 410)
                        snprintf(gone, sizeof(gone), "ERROR event: %.300s", ev.message);
                gp_k8s_event_clear(&ev);
        }
        CHECK(gone[0],
              "a watch from resourceVersion %s after %s: HTTP %ld, %d lines (%.300s), "
              "no 410",
              rv, expire, http, got.n, got.n ? got.lines[0] : err.msg);
        printf("ok   watch from resourceVersion %s after the restart and compaction: 410 "
               "(%s)\n",
               rv, gone);

        /* 3b. The watch thread from that version: 410, a GET (the map has not
         * changed since: the same, too old, version), 410 again, then a
         * watch from now, which sends the map and then every change. Not a
         * GET and a watch after each other without pause. */
        gp_k8s_watch_t *w;
        gp_k8s_watch_stats_t st;
        uint64_t gen = 0;
        char *json = NULL;
        w = gp_k8s_watch_start_at(k, ns, cm, rv, &err);
        CHECK(w, "%s", err.msg);
        gp_k8s_watch_wait_first(w, 5000);
        rc = gp_k8s_watch_latest(w, &gen, &json, &err);
        CHECK(rc == GP_OK, "watch from %s: %s", rv, err.msg);
        free(json);
        usleep(1000 * 1000); /* what the thread does next, once settled */
        gp_k8s_watch_stats(w, &st);
        CHECK(st.relists == 2 && st.gets == 1 && st.watches == 3 && st.failures == 0,
              "watch from %s: %llu re-lists (410), %llu GETs, %llu watch requests, %llu "
              "failures; want 2, 1, 3, 0",
              rv, (unsigned long long)st.relists, (unsigned long long)st.gets,
              (unsigned long long)st.watches, (unsigned long long)st.failures);
        {
                uint64_t before = gp_k8s_watch_generation(w);
                gp_kv_t one[] = {{"gate-proxy.check", "after-410"}};
                gp_k8s_t *k2 = gp_k8s_new(gp_k8s_kubeconfig_load(kc, &err), &err);
                CHECK(k2, "%s", err.msg);
                t0 = mono_ms();
                rc = gp_k8s_cm_patch(k2, ns, cm, NULL, one, 1, NULL, &err);
                CHECK(rc == GP_OK, "%s", err.msg);
                gp_k8s_destroy(k2);
                while (gp_k8s_watch_generation(w) == before && mono_ms() - t0 < 5000)
                        usleep(1000);
                t0 = mono_ms() - t0;
                CHECK(gp_k8s_watch_generation(w) != before,
                      "the watch from now missed a change after the 410s");
                rc = gp_k8s_watch_latest(w, &gen, &json, &err);
                CHECK(rc == GP_OK && strstr(json, "after-410"), "the watch has an old copy");
                free(json);
        }
        gp_k8s_watch_stop(w);
        printf("ok   the watch thread from resourceVersion %s: 410, one GET (the same "
               "version), 410, a watch from now: the map, and a change %lld ms after its "
               "PATCH\n",
               rv, (long long)t0);

        /* 4. The watch thread publishes a change within milliseconds. */
        w = gp_k8s_watch_start(k, ns, cm, &err);
        CHECK(w, "%s", err.msg);
        gp_k8s_watch_wait_first(w, 5000);
        rc = gp_k8s_watch_latest(w, &gen, &json, &err);
        CHECK(rc == GP_OK, "watch: %s", err.msg);
        free(json);
        usleep(300 * 1000); /* let the watch connect after its GET */
        int64_t worst = 0;
        for (int i = 0; i < 5; i++) {
                char v[16];
                snprintf(v, sizeof(v), "w%d", i);
                gp_kv_t one[] = {{"gate-proxy.check", v}};
                uint64_t before = gp_k8s_watch_generation(w);
                /* From another client: no offer, only the watch tells. */
                t0 = mono_ms();
                gp_k8s_t *k2 = gp_k8s_new(gp_k8s_kubeconfig_load(kc, &err), &err);
                CHECK(k2, "%s", err.msg);
                rc = gp_k8s_cm_patch(k2, ns, cm, NULL, one, 1, NULL, &err);
                CHECK(rc == GP_OK, "%s", err.msg);
                gp_k8s_destroy(k2);
                while (gp_k8s_watch_generation(w) == before && mono_ms() - t0 < 5000)
                        usleep(1000);
                CHECK(gp_k8s_watch_generation(w) != before, "the watch missed change %d", i);
                rc = gp_k8s_watch_latest(w, &gen, &json, &err);
                CHECK(rc == GP_OK && strstr(json, v), "the watch has an old copy");
                free(json);
                if (mono_ms() - t0 > worst)
                        worst = mono_ms() - t0;
        }
        gp_k8s_watch_stats(w, &st);
        CHECK(st.gets == 1 && st.watches >= 1 && st.events >= 5,
              "watch stats: %llu GETs, %llu watches, %llu events", (unsigned long long)st.gets,
              (unsigned long long)st.watches, (unsigned long long)st.events);
        printf("ok   watch: 5 changes seen, the slowest %lld ms after its PATCH started "
               "(%llu events, %llu watch requests)\n",
               (long long)worst, (unsigned long long)st.events,
               (unsigned long long)st.watches);
        t0 = mono_ms();
        gp_k8s_watch_stop(w);
        CHECK(mono_ms() - t0 < 2000, "stopping the watch took %lld ms",
              (long long)(mono_ms() - t0));
        gp_k8s_destroy(k);
        return 0;
}
