/* proxy/loop/members.c: the members view and its refusals
 * (proxy/loop/members.h); the parsers are gate/members.h's, the settings
 * rule gate/fingerprint.h's. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "gate/fingerprint.h"
#include "gate/members.h"
#include "os/worker.h"
#include "proxy/base/log.h"
#include "proxy/loop/kafka_clients.h"
#include "proxy/loop/members.h"

#define LOOK_EVERY_MS 2000
#define LOOK_SOON_MS  500  /* after a look that settled nothing */
#define WAIT_MS       5000 /* the longest one request of a look waits */
/* How long another member may hold a partition whose line carries other
 * settings before that line counts as its own (gp_fp_judge), besides the
 * commit interval: an owner commits every partition it is given at once,
 * after reading its committed offset (which waits for a crashed owner's
 * transaction, up to its transaction.timeout.ms, below the session
 * timeout), so grace is this + the session timeout + two commit
 * intervals. */
#define GRACE_MS   15000
#define SHOWN      64 /* members kept for the view */
#define LIST_PARTS 6  /* partitions named per fingerprint in a refusal */

struct gp_members {
        rd_kafka_t *rk;
        char *group, *pipeline;
        char **topics;
        int n_topics;
        uint32_t fp;
        int64_t grace_ms;
        /* the thread's own */
        int *counts; /* partitions per topic at the last judged look */
        gp_fp_track_t *track;
        size_t n_track;
        char said[256]; /* the last trouble logged */
        gp_worker_t w;  /* w.lock guards what follows */
        bool joining;
        char self[256];
        bool settled;
        int n; /* members as last seen, -1: no look yet */
        gp_member_info_t shown[SHOWN];
        size_t n_shown;
        int refusal;
        char why[GP_MEMBERS_WHY];
};

/* ---- text ---------------------------------------------------------------- */

/* Appends to buf (NUL-terminated, len bytes), cutting at its end. */
__attribute__((format(printf, 3, 4))) static void add(char *buf, size_t len, const char *fmt,
                                                      ...) {
        size_t at = strlen(buf);
        if (at + 1 >= len)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + at, len - at, fmt, ap);
        va_end(ap);
}

/* n bytes of s (another client's), printable ASCII only. */
static void printable(char *out, size_t len, const char *s, size_t n) {
        size_t k = 0;
        for (size_t i = 0; s && i < n && k + 1 < len; i++)
                out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
        out[k] = '\0';
}

/* client id/host of a member: the host as the broker gives it
 * ("/127.0.0.1") without its slash. */
static void label_of(const struct rd_kafka_group_member_info *mi, char *out, size_t len) {
        char c[120], h[72];
        const char *host = mi->client_host ? mi->client_host : "";
        if (*host == '/')
                host++;
        printable(c, sizeof c, mi->client_id, mi->client_id ? strlen(mi->client_id) : 0);
        printable(h, sizeof h, host, strlen(host));
        snprintf(out, len, "%s/%s", c, h);
}

static void who(const struct rd_kafka_group_member_info *mi, char *out, size_t len) {
        char c[120], h[72];
        const char *host = mi->client_host ? mi->client_host : "";
        if (*host == '/')
                host++;
        printable(c, sizeof c, mi->client_id, mi->client_id ? strlen(mi->client_id) : 0);
        printable(h, sizeof h, host, strlen(host));
        snprintf(out, len, "client id %s on host %s", c, h);
}

static void trouble(gp_members_t *m, const char *what) {
        if (!strcmp(m->said, what))
                return;
        snprintf(m->said, sizeof m->said, "%s", what);
        gp_warn("members: cannot describe group %s: %s; the view stays as last seen, "
                "retrying",
                m->group, what);
}

/* ---- the refusals ----------------------------------------------------------- */

/* A member subscribed to other topics (or whose subscription cannot be
 * read): the refusal sentence in why. */
static void foreign(gp_members_t *m, const struct rd_kafka_group_member_info *mi,
                    const gp_cp_subscription_t *s, const char *bad, char *why, size_t len) {
        char w[256], theirs[300] = "", mine[300] = "";
        who(mi, w, sizeof w);
        for (size_t i = 0; s && i < s->n_topics && i < GP_CP_MAX_TOPICS; i++) {
                char t[256];
                printable(t, sizeof t, s->topics[i].s, s->topics[i].len);
                add(theirs, sizeof theirs, "%s%s", i ? "," : "", t);
        }
        for (int i = 0; i < m->n_topics; i++)
                add(mine, sizeof mine, "%s%s", i ? "," : "", m->topics[i]);
        int n;
        if (bad)
                n = snprintf(
                        why, len,
                        "group %s has a member that is not an instance of pipeline %s: %s, "
                        "whose subscription cannot be read (%s); one consumer group serves "
                        "one pipeline: give each pipeline its own gate.group.id; exiting "
                        "(code %d)",
                        m->group, m->pipeline, w, bad, GP_EXIT_GROUP);
        else
                n = snprintf(
                        why, len,
                        "group %s has a member that is not an instance of pipeline %s: %s "
                        "subscribes to topic(s) %s, this pipeline's source topics are %s; "
                        "one consumer group serves one pipeline: give each pipeline its own "
                        "gate.group.id; exiting (code %d)",
                        m->group, m->pipeline, w, *theirs ? theirs : "(none)", mine,
                        GP_EXIT_GROUP);
        if (n >= (int)len && len > 4)
                memcpy(why + len - 4, "...", 4); /* cut: said so */
}

/* One partition as the settings judge saw it. */
typedef struct seen {
        int topic, part;
        uint32_t fp;
        int owner; /* member index, -1: nobody */
        gp_fp_verdict_t v;
} seen_t;

/* The settings refusal: the partitions by fingerprint. */
static void disagree(gp_members_t *m, const struct rd_kafka_group_info *gi, const seen_t *s,
                     size_t n, char *why, size_t len) {
        uint32_t fps[8];
        size_t nf = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i].fp == GP_FP_NONE)
                        continue;
                size_t k = 0;
                while (k < nf && fps[k] != s[i].fp)
                        k++;
                if (k == nf && nf < sizeof fps / sizeof *fps)
                        fps[nf++] = s[i].fp;
        }
        snprintf(why, len, "instances of pipeline %s disagree on gate settings:", m->pipeline);
        for (size_t f = 0; f < nf; f++) {
                size_t shown = 0, more = 0;
                int by = -1;
                add(why, len, "%s partitions ", f ? "," : "");
                for (size_t i = 0; i < n; i++) {
                        if (s[i].fp != fps[f])
                                continue;
                        if (s[i].v == GP_FP_DIFFERS && by < 0)
                                by = s[i].owner;
                        if (shown++ < LIST_PARTS)
                                add(why, len, "%s%s/%d", shown > 1 ? "," : "",
                                    m->topics[s[i].topic], s[i].part);
                        else
                                more++;
                }
                if (more)
                        add(why, len, " and %zu more", more);
                add(why, len, " under fp %08" PRIx32, fps[f]);
                if (by >= 0) {
                        char w[256];
                        who(&gi->members[by], w, sizeof w);
                        add(why, len, " (written by the member with %s)", w);
                }
        }
        add(why, len,
            " (this instance: %08" PRIx32 "); run every instance with the same gate.* "
            "settings: stop every instance, then start them all with the new settings "
            "(docs/DESIGN.md, Scale-out: refusals); exiting (code %d)",
            m->fp, GP_EXIT_GROUP);
}

/* The settings of the members that own this pipeline's partitions, from
 * the partitions' committed lines (gp_fp_judge). Sets *pending while a
 * line under other settings waits to be confirmed as a live member's.
 * -1 when the partitions or their lines cannot be read (nothing judged). */
static int judge_settings(gp_members_t *m, const struct rd_kafka_group_info *gi,
                          const gp_cp_assignment_t *asg, const bool *asg_ok, const char *self,
                          int64_t now, bool *pending, char *why, size_t len) {
        int counts[GP_CONF_MAX_TOPICS];
        size_t total = 0;
        bool moved = false;
        for (int t = 0; t < m->n_topics; t++) {
                if ((counts[t] = gp_client_partitions(m->rk, m->topics[t], WAIT_MS)) < 0)
                        return -1;
                moved |= counts[t] != m->counts[t];
                total += (size_t)counts[t];
        }
        if (moved || total != m->n_track) {
                /* Partitions appeared: every track starts again. */
                gp_fp_track_t *nt = calloc(total ? total : 1, sizeof(*nt));
                if (!nt)
                        return -1;
                free(m->track);
                m->track = nt;
                m->n_track = total;
                memcpy(m->counts, counts, sizeof(int) * (size_t)m->n_topics);
        }
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)total);
        seen_t *s = calloc(total ? total : 1, sizeof(*s));
        if (!s) {
                rd_kafka_topic_partition_list_destroy(l);
                return -1;
        }
        size_t at = 0;
        for (int t = 0; t < m->n_topics; t++)
                for (int k = 0; k < counts[t]; k++) {
                        rd_kafka_topic_partition_list_add(l, m->topics[t], k);
                        s[at++] = (seen_t){.topic = t, .part = k, .owner = -1};
                }
        /* The group's owner of each partition. */
        for (int j = 0; j < gi->member_cnt; j++) {
                for (size_t i = 0; asg_ok[j] && i < asg[j].n_topics && i < GP_CP_MAX_TOPICS;
                     i++) {
                        const gp_cp_tparts_t *tp = &asg[j].topics[i];
                        size_t base = 0;
                        for (int t = 0; t < m->n_topics; t++) {
                                if (gp_cp_str_is(tp->topic, m->topics[t]))
                                        for (size_t k = 0; k < tp->n; k++) {
                                                int32_t p = gp_cp_part(tp, k);
                                                if (p >= 0 && p < counts[t])
                                                        s[base + (size_t)p].owner = j;
                                        }
                                base += (size_t)counts[t];
                        }
                }
        }
        int rc = -1;
        if (rd_kafka_committed(m->rk, l, WAIT_MS))
                goto out;
        size_t differs = 0;
        for (size_t i = 0; i < total; i++) {
                const rd_kafka_topic_partition_t *tp = &l->elems[i];
                gp_gate_t g;
                gp_part_t pt;
                char derr[160];
                int64_t seq = -1;
                gp_part_init(&pt, 0);
                if (!tp->err && tp->offset >= 0 && tp->metadata && tp->metadata_size &&
                    !gp_ckpt_decode(tp->metadata, tp->metadata_size, &g, &pt, derr,
                                    sizeof derr))
                        seq = g.seq;
                else
                        pt.fp = GP_FP_NONE;
                s[i].fp = pt.fp;
                const struct rd_kafka_group_member_info *mi =
                        s[i].owner >= 0 ? &gi->members[s[i].owner] : NULL;
                const char *id = mi && mi->member_id ? mi->member_id : "";
                uint64_t owner = mi ? gp_fp_owner(id, strlen(id)) : 0;
                bool mine = mi && *self && !strcmp(id, self);
                s[i].v = gp_fp_judge(&m->track[i], m->fp, pt.fp, seq, owner, mine, now,
                                     m->grace_ms);
                differs += s[i].v == GP_FP_DIFFERS;
                *pending |= s[i].v == GP_FP_PENDING && mi && !mine;
        }
        if (differs)
                disagree(m, gi, s, total, why, len);
        rc = 0;
out:
        free(s);
        rd_kafka_topic_partition_list_destroy(l);
        return rc;
}

/* ---- one look ------------------------------------------------------------- */

static const struct rd_kafka_group_info *find(const struct rd_kafka_group_list *gl,
                                              const char *group) {
        for (int i = 0; gl && i < gl->group_cnt; i++)
                if (gl->groups[i].group && !strcmp(gl->groups[i].group, group) &&
                    !gl->groups[i].err)
                        return &gl->groups[i];
        return NULL;
}

static void look(gp_members_t *m) {
        char self[256];
        pthread_mutex_lock(&m->w.lock);
        bool joining = m->joining;
        snprintf(self, sizeof self, "%s", m->self);
        pthread_mutex_unlock(&m->w.lock);

        const struct rd_kafka_group_list *gl = NULL;
        rd_kafka_resp_err_t e = rd_kafka_list_groups(m->rk, m->group, &gl, WAIT_MS);
        const struct rd_kafka_group_info *gi = find(gl, m->group);
        bool listed = false;
        for (int i = 0; gl && i < gl->group_cnt; i++)
                listed |= gl->groups[i].group && !strcmp(gl->groups[i].group, m->group);
        if (!gi && (e || listed)) {
                /* A request failed, or the group's coordinator answered
                 * with an error (loading, moving). */
                trouble(m, e ? rd_kafka_err2str(e) : "its coordinator answered with an error");
                if (gl)
                        rd_kafka_group_list_destroy(gl);
                return;
        }
        if (m->said[0])
                gp_info("members: group %s described again", m->group);
        m->said[0] = '\0';
        if (!gi) {
                /* No broker lists it: a group nobody has joined, or whose
                 * members have all left (and its offsets expired). */
                pthread_mutex_lock(&m->w.lock);
                m->n = 0;
                m->n_shown = 0;
                m->settled = true;
                gp_worker_wake(&m->w);
                pthread_mutex_unlock(&m->w.lock);
                if (gl)
                        rd_kafka_group_list_destroy(gl);
                return;
        }

        int n = gi->member_cnt > 0 ? gi->member_cnt : 0;
        bool stable = gi->state && !strcmp(gi->state, "Stable");
        bool gone = !n ||
                    (gi->state && (!strcmp(gi->state, "Empty") || !strcmp(gi->state, "Dead")));
        bool consumer = !gi->protocol_type || !*gi->protocol_type ||
                        !strcmp(gi->protocol_type, "consumer");
        gp_cp_assignment_t *asg = calloc((size_t)n + 1, sizeof(*asg));
        bool *asg_ok = calloc((size_t)n + 1, sizeof(*asg_ok));
        gp_cp_subscription_t *sub = malloc(sizeof(*sub));
        gp_member_info_t shown[SHOWN];
        size_t n_shown = 0;
        char why[GP_MEMBERS_WHY] = "";
        bool settled = gone, pending = false, self_seen = false;
        if (!asg || !asg_ok || !sub)
                goto out;
        if (n && !consumer)
                snprintf(
                        why, sizeof why,
                        "group %s is used by clients of protocol type %.40s, not by consumers "
                        "of pipeline %s: give each pipeline its own gate.group.id; exiting "
                        "(code %d)",
                        m->group, gi->protocol_type, m->pipeline, GP_EXIT_GROUP);
        for (int j = 0; j < n; j++) {
                const struct rd_kafka_group_member_info *mi = &gi->members[j];
                bool is_self = *self && mi->member_id && !strcmp(mi->member_id, self);
                self_seen |= is_self;
                char bad[160] = "";
                bool judged = stable && consumer && mi->member_metadata_size > 0;
                bool differs = false;
                if (judged && !is_self) {
                        if (gp_cp_subscription_parse(mi->member_metadata,
                                                     (size_t)mi->member_metadata_size, sub,
                                                     bad, sizeof bad))
                                differs = true;
                        else
                                differs =
                                        !gp_cp_same_topics(sub, (const char *const *)m->topics,
                                                           (size_t)m->n_topics);
                        if (differs && !why[0])
                                foreign(m, mi, bad[0] ? NULL : sub, bad[0] ? bad : NULL, why,
                                        sizeof why);
                }
                asg_ok[j] = stable && consumer && mi->member_assignment_size > 0 &&
                            !gp_cp_assignment_parse(mi->member_assignment,
                                                    (size_t)mi->member_assignment_size,
                                                    &asg[j], NULL, 0);
                if (n_shown < SHOWN) {
                        gp_member_info_t *v = &shown[n_shown++];
                        label_of(mi, v->label, sizeof v->label);
                        v->partitions = asg_ok[j] ? (int)asg[j].n_parts : -1;
                        v->self = is_self;
                        v->foreign = differs;
                }
        }
        if (stable && consumer && !why[0]) {
                /* Before joining every member is another; after, only once
                 * this instance's own member is in the view. */
                bool judge = !joining || self_seen;
                if (judge && judge_settings(m, gi, asg, asg_ok, self, gp_now_ms(), &pending,
                                            why, sizeof why) == 0)
                        settled = !pending;
        }
        settled |= why[0] != '\0';
out:
        pthread_mutex_lock(&m->w.lock);
        m->n = n;
        memcpy(m->shown, shown, n_shown * sizeof(*shown));
        m->n_shown = n_shown;
        if (why[0] && !m->refusal) {
                m->refusal = GP_EXIT_GROUP;
                snprintf(m->why, sizeof m->why, "%s", why);
        }
        m->settled = settled;
        gp_worker_wake(&m->w);
        pthread_mutex_unlock(&m->w.lock);
        free(asg);
        free(asg_ok);
        free(sub);
        rd_kafka_group_list_destroy(gl);
}

static void *run(void *arg) {
        gp_members_t *m = arg;
        pthread_mutex_lock(&m->w.lock);
        while (!gp_worker_quitting(&m->w)) {
                pthread_mutex_unlock(&m->w.lock);
                look(m);
                pthread_mutex_lock(&m->w.lock);
                if (gp_worker_quitting(&m->w))
                        break;
                gp_worker_wait(&m->w, m->settled ? LOOK_EVERY_MS : LOOK_SOON_MS);
        }
        pthread_mutex_unlock(&m->w.lock);
        return NULL;
}

gp_members_t *gp_members_new(const gp_conf_t *conf, uint32_t fp, gp_err_t *err) {
        gp_members_t *m = calloc(1, sizeof(*m));
        if (!m) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                return NULL;
        }
        if (gp_worker_init(&m->w)) {
                free(m);
                gp_err_set(err, GP_ERR_FAIL, "members: cannot make its lock");
                return NULL;
        }
        m->n = -1;
        m->fp = fp;
        if (!(m->group = strdup(conf->group_id)) || !(m->pipeline = strdup(conf->pipeline)) ||
            !(m->topics = calloc((size_t)conf->n_topics + 1, sizeof(char *))) ||
            !(m->counts = calloc((size_t)conf->n_topics + 1, sizeof(int)))) {
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                goto fail;
        }
        for (int i = 0; i < conf->n_topics; i++)
                if (!(m->topics[m->n_topics++] = strdup(conf->topics[i]))) {
                        gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                        goto fail;
                }
        rd_kafka_conf_t *kc;
        int bad = 0;
        if (!(kc = gp_client_conf(conf, "consumer", err)))
                goto fail;
        gp_client_set(kc, "group.id", conf->group_id, err, &bad);
        gp_client_set(kc, "enable.auto.commit", "false", err, &bad);
        /* The last committed line, not a wait for an open transaction. */
        gp_client_set(kc, "isolation.level", "read_uncommitted", err, &bad);
        long long session = gp_client_user_set(conf, "consumer", "session.timeout.ms")
                                    ? gp_client_conf_ll(kc, "session.timeout.ms")
                                    : GP_GROUP_SESSION_TIMEOUT_MS;
        m->grace_ms = GRACE_MS + session + 2 * conf->commit_interval_ms;
        if (bad || !(m->rk = gp_client_new(RD_KAFKA_CONSUMER, kc, err))) {
                rd_kafka_conf_destroy(kc);
                goto fail;
        }
        if (gp_worker_start(&m->w, run, m)) {
                gp_err_set(err, GP_ERR_FAIL, "members: cannot start its thread");
                goto fail;
        }
        return m;
fail:
        gp_members_destroy(m);
        return NULL;
}

void gp_members_destroy(gp_members_t *m) {
        if (!m)
                return;
        gp_worker_stop(&m->w);
        if (m->rk)
                rd_kafka_destroy_flags(m->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        for (int i = 0; m->topics && i < m->n_topics; i++)
                free(m->topics[i]);
        free(m->topics);
        free(m->counts);
        free(m->track);
        free(m->group);
        free(m->pipeline);
        gp_worker_fini(&m->w);
        free(m);
}

void gp_members_joining(gp_members_t *m) {
        pthread_mutex_lock(&m->w.lock);
        m->joining = true;
        pthread_mutex_unlock(&m->w.lock);
}

void gp_members_self(gp_members_t *m, const char *member_id) {
        pthread_mutex_lock(&m->w.lock);
        snprintf(m->self, sizeof m->self, "%s", member_id ? member_id : "");
        pthread_mutex_unlock(&m->w.lock);
}

bool gp_members_settled(gp_members_t *m, int64_t wait_ms) {
        int64_t at = gp_mono_ms() + (wait_ms > 0 ? wait_ms : 0);
        pthread_mutex_lock(&m->w.lock);
        while (!m->settled && !m->refusal)
                if (gp_worker_wait_until(&m->w, at))
                        break;
        bool s = m->settled || m->refusal;
        pthread_mutex_unlock(&m->w.lock);
        return s;
}

int gp_members_refusal(gp_members_t *m, char *why, size_t len) {
        pthread_mutex_lock(&m->w.lock);
        int r = m->refusal;
        if (r)
                snprintf(why, len, "%s", m->why);
        pthread_mutex_unlock(&m->w.lock);
        return r;
}

int gp_members_view(gp_members_t *m, gp_member_info_t *out, size_t max, size_t *shown) {
        pthread_mutex_lock(&m->w.lock);
        int n = m->n;
        size_t k = m->n_shown < max ? m->n_shown : max;
        memcpy(out, m->shown, k * sizeof(*out));
        pthread_mutex_unlock(&m->w.lock);
        *shown = k;
        return n;
}
