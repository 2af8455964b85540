/* tests/unit/test_k8s_wire.c: k8s/wire.c. Watch event lines (ADDED,
 * MODIFIED, DELETED, BOOKMARK, ERROR 410) and refused ones, Status error
 * messages, merge-patch bodies, resourceVersion order, the line splitter. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/configmap.h"
#include "k8s/wire.h"

#define CM(rv, data)                                                                          \
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"bg\","        \
        "\"namespace\":\"ns\",\"resourceVersion\":\"" rv "\"},\"data\":{" data "}}"

Test(wire, events) {
        static const struct {
                const char *line;
                gp_k8s_ev_type_t type;
                const char *rv;
                const char *stage; /* data.stage of the object, NULL: no object */
                long code;
                const char *message;
        } t[] = {
                {"{\"type\":\"ADDED\",\"object\":" CM("11", "\"stage\":\"RUNNING\"") "}",
                 GP_K8S_EV_ADDED, "11", "RUNNING", 0, ""},
                {"{\"type\":\"MODIFIED\",\"object\":" CM("12",
                                                         "\"stage\":\"TRANSITIONING\"") "}",
                 GP_K8S_EV_MODIFIED, "12", "TRANSITIONING", 0, ""},
                {"{\"type\":\"DELETED\",\"object\":" CM("13", "\"stage\":\"RUNNING\"") "}",
                 GP_K8S_EV_DELETED, "13", "RUNNING", 0, ""},
                {"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":"
                 "\"v1\",\"metadata\":{\"resourceVersion\":\"99\",\"annotations\":{"
                 "\"k8s.io/initial-events-end\":\"true\"}}}}",
                 GP_K8S_EV_BOOKMARK, "99", NULL, 0, ""},
                {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                 "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
                 "version: 5 (9)\",\"reason\":\"Expired\",\"code\":410}}",
                 GP_K8S_EV_ERROR, "", NULL, 410, "410 Gone: too old resource version: 5 (9)"},
                {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
                 "\"message\":\"etcd\\nunavailable\"}}",
                 GP_K8S_EV_ERROR, "", NULL, 500,
                 "500 Internal Server Error: etcd unavailable"},
                {"{\"type\":\"ERROR\",\"object\":{}}", GP_K8S_EV_ERROR, "", NULL, 0,
                 "0: no message"},
                /* whitespace and a CR at the end are fine; order of keys too */
                {"  {\"object\":" CM("7", "") ",\"type\":\"ADDED\"} \r", GP_K8S_EV_ADDED, "7",
                 "", 0, ""},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                gp_k8s_event_t ev;
                gp_err_t err = {0};
                int rc = gp_k8s_event_parse(t[i].line, strlen(t[i].line), &ev, &err);
                cr_assert_eq(rc, 0, "row %zu: %s", i, err.msg);
                cr_expect_eq(ev.type, t[i].type, "row %zu: %s", i, gp_k8s_ev_name(ev.type));
                cr_expect_str_eq(ev.rv, t[i].rv, "row %zu", i);
                cr_expect_eq(ev.code, t[i].code, "row %zu", i);
                cr_expect_str_eq(ev.message, t[i].message, "row %zu", i);
                if (t[i].stage) {
                        cr_assert_not_null(ev.object, "row %zu", i);
                        gp_cm_t *cm = gp_cm_parse(ev.object, strlen(ev.object), &err);
                        cr_assert_not_null(cm, "row %zu: %s", i, err.msg);
                        cr_expect_str_eq(gp_cm_resource_version(cm), t[i].rv);
                        const char *st = gp_cm_get(cm, "stage");
                        cr_expect_str_eq(st ? st : "", t[i].stage, "row %zu", i);
                        cr_expect_null(strchr(ev.object, '\n'), "compact JSON");
                        gp_cm_destroy(cm);
                } else {
                        cr_expect_null(ev.object, "row %zu", i);
                }
                gp_k8s_event_clear(&ev);
        }
}

Test(wire, bad_events) {
        static const struct {
                const char *line, *err;
        } t[] = {
                {"not json", "watch event: not JSON (syntax error at byte 0)"},
                {"{\"type\":\"ADDED\"", "watch event: not JSON (syntax error at byte 14)"},
                {"[1]", "watch event: no \"type\""},
                {"{\"object\":{}}", "watch event: no \"type\""},
                {"{\"type\":7,\"object\":{}}", "watch event: no \"type\""},
                {"{\"type\":\"UPSERTED\",\"object\":{}}",
                 "watch event: unknown type \"UPSERTED\""},
                {"{\"type\":\"ADDED\"}", "watch event ADDED: no \"object\""},
                {"{\"type\":\"MODIFIED\",\"object\":[]}",
                 "watch event MODIFIED: no \"object\""},
                {"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Secret\",\"metadata\":{"
                 "\"resourceVersion\":\"1\"}}}",
                 "watch event ADDED: object is not a ConfigMap"},
                {"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{}}}",
                 "watch event ADDED: no valid metadata.resourceVersion"},
                {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":5}}}",
                 "watch event BOOKMARK: no valid metadata.resourceVersion"},
                {"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"resourceVersion\":\"\"}}}",
                 "watch event DELETED: no valid metadata.resourceVersion"},
                {"{\"type\":\"ADDED\",\"object\":" CM("1", "") "} {}",
                 "watch event: trailing data at byte 139"},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                gp_k8s_event_t ev;
                gp_err_t err = {0};
                cr_expect_eq(gp_k8s_event_parse(t[i].line, strlen(t[i].line), &ev, &err),
                             GP_ERR_INVALID, "row %zu parsed", i);
                cr_expect_str_eq(err.msg, t[i].err, "row %zu: %s", i, err.msg);
                cr_expect_null(ev.object);
        }
}

Test(wire, status_messages) {
        static const struct {
                long status;
                const char *body, *want;
        } t[] = {
                {409,
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                 "\"Failure\",\"message\":\"Operation cannot be fulfilled on configmaps "
                 "\\\"bg\\\": the object has been modified; please apply your changes to the "
                 "latest version and try again\",\"reason\":\"Conflict\",\"details\":{"
                 "\"name\":\"bg\",\"kind\":\"configmaps\"},\"code\":409}",
                 "409 Conflict: Operation cannot be fulfilled on configmaps \"bg\": the "
                 "object "
                 "has been modified; please apply your changes to the latest version and try "
                 "again"},
                /* pretty-printed, as the server does for some user agents */
                {403,
                 "{\n  \"kind\": \"Status\",\n  \"message\": \"configmaps \\\"other\\\" is "
                 "forbidden: User \\\"gate-proxy\\\" cannot get resource \\\"configmaps\\\" "
                 "in API group \\\"\\\" in the namespace \\\"ns\\\"\",\n  \"code\": 403\n}\n",
                 "403 Forbidden: configmaps \"other\" is forbidden: User \"gate-proxy\" "
                 "cannot "
                 "get resource \"configmaps\" in API group \"\" in the namespace \"ns\""},
                {404, "{\"kind\":\"Status\",\"message\":\"configmaps \\\"bg\\\" not found\"}",
                 "404 Not Found: configmaps \"bg\" not found"},
                {401, "{\"kind\":\"Status\",\"message\":\"Unauthorized\",\"code\":401}",
                 "401 Unauthorized: Unauthorized"},
                {502, "<html>\n<body>bad gateway</body></html>",
                 "502 Bad Gateway: <html> <body>bad gateway</body></html>"},
                {503, "", "503 Service Unavailable"},
                {418, NULL, "418"},
                {500, "{\"message\":\"\"}", "500 Internal Server Error: {\"message\":\"\"}"},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                char out[600];
                gp_k8s_status_message(t[i].status, t[i].body,
                                      t[i].body ? strlen(t[i].body) : 0, out, sizeof(out));
                cr_expect_str_eq(out, t[i].want, "row %zu", i);
        }
        /* A long body is cut, a small buffer is not overrun. */
        char big[2000], small[16];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        char out[600];
        gp_k8s_status_message(500, big, strlen(big), out, sizeof(out));
        cr_expect_eq(strlen(out), strlen("500 Internal Server Error: ") + 200);
        gp_k8s_status_message(409, "{\"message\":\"long message here\"}", 31, small,
                              sizeof(small));
        cr_expect_str_eq(small, "409 Conflict: l");
}

Test(wire, merge_patch) {
        gp_kv_t kv[] = {
                {"stage", "CLEAR_TO_TEARDOWN"}, {"watermark-stage", NULL}, {"q\"", "v"}};
        char *p = gp_k8s_merge_patch("42", kv, 3);
        cr_assert_not_null(p);
        cr_expect_str_eq(p,
                         "{\"metadata\":{\"resourceVersion\":\"42\"},\"data\":{\"stage\":"
                         "\"CLEAR_TO_TEARDOWN\",\"watermark-stage\":null,\"q\\\"\":\"v\"}}");
        free(p);
        p = gp_k8s_merge_patch(NULL, kv, 1);
        cr_expect_str_eq(p, "{\"data\":{\"stage\":\"CLEAR_TO_TEARDOWN\"}}");
        free(p);
        gp_kv_t twice[] = {{"a", "1"}, {"a", "2"}};
        p = gp_k8s_merge_patch(NULL, twice, 2);
        cr_expect_str_eq(p, "{\"data\":{\"a\":\"2\"}}", "the later entry wins");
        free(p);
        p = gp_k8s_configmap_body("ns", "bg", kv, 2);
        cr_expect_str_eq(p, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                            "\"name\":\"bg\",\"namespace\":\"ns\"},\"data\":{\"stage\":"
                            "\"CLEAR_TO_TEARDOWN\"}}");
        free(p);
}

Test(wire, rv_order) {
        static const struct {
                const char *a, *b;
                int want;
        } t[] = {
                {"5", "5", 0},
                {"5", "6", -1},
                {"10", "9", 1},
                {"009", "10", -1},
                {"", "", 0},
                {"", "5", 2},
                {"a", "b", 2},
                {"abc", "abc", 0},
                {"5", "5x", 2},
                {"99999999999999999999", "1", 2},
                {"1234567890123456789", "1234567890123456788", 1},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                cr_expect_eq(gp_k8s_rv_cmp(t[i].a, t[i].b), t[i].want, "%s vs %s", t[i].a,
                             t[i].b);
}

/* ---- the line splitter ------------------------------------------------- */

typedef struct {
        char got[16][64];
        int n;
        int stop_at; /* stop after this many lines; 0: never */
} sink_t;

static int collect(void *opaque, const char *line, size_t len) {
        sink_t *s = opaque;
        cr_assert_lt(s->n, 16);
        snprintf(s->got[s->n], sizeof(s->got[0]), "%.*s", (int)len, line);
        s->n++;
        return s->stop_at && s->n >= s->stop_at;
}

Test(wire, lines_in_pieces) {
        const char *stream = "{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":\n3}\nrest";
        /* Every split point: the same lines. */
        for (size_t cut = 0; cut <= strlen(stream); cut++) {
                gp_k8s_lines_t l;
                sink_t s = {.n = 0};
                gp_k8s_lines_init(&l, 64);
                cr_assert_eq(gp_k8s_lines_feed(&l, stream, cut, collect, &s), 0);
                cr_assert_eq(
                        gp_k8s_lines_feed(&l, stream + cut, strlen(stream) - cut, collect, &s),
                        0);
                cr_assert_eq(s.n, 4, "cut %zu: %d lines", cut, s.n);
                cr_expect_str_eq(s.got[0], "{\"a\":1}");
                cr_expect_str_eq(s.got[1], "{\"b\":2}");
                cr_expect_str_eq(s.got[2], "{\"c\":");
                cr_expect_str_eq(s.got[3], "3}");
                cr_expect_eq(l.len, 4, "\"rest\" waits for its newline");
                gp_k8s_lines_free(&l);
        }
}

Test(wire, lines_bounded_and_stoppable) {
        gp_k8s_lines_t l;
        sink_t s = {.n = 0};
        gp_k8s_lines_init(&l, 8);
        cr_expect_eq(gp_k8s_lines_feed(&l, "12345678\n", 9, collect, &s), 0, "exactly max");
        cr_expect_eq(gp_k8s_lines_feed(&l, "123456789\n", 10, collect, &s), -1, "over max");
        gp_k8s_lines_reset(&l);
        cr_expect_eq(gp_k8s_lines_feed(&l, "12345", 5, collect, &s), 0);
        cr_expect_eq(gp_k8s_lines_feed(&l, "6789", 4, collect, &s), -1, "over max, buffered");
        cr_expect_leq(l.cap, 8, "never grows past max");
        gp_k8s_lines_reset(&l);
        s.n = 0;
        s.stop_at = 2;
        cr_expect_eq(gp_k8s_lines_feed(&l, "a\nb\nc\n", 6, collect, &s), 1, "stopped");
        cr_expect_eq(s.n, 2);
        gp_k8s_lines_free(&l);
}
