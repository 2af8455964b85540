/* proxy/loop/topics.c: the source, colour and dead-letter topics (exist, big
 * enough, handles open), and partitions that appear while running
 * (gate.discovery.interval.ms): the colour topics grow with the source
 * (gate.topics.create) or the new partitions are held, not read, until
 * they can be placed. Lookups go through the producer with
 * allow.auto.create.topics=false, so a lookup never creates a topic. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/loop/internal.h"
#include "proxy/base/log.h"

/* -1 when out of memory, the old array kept. */
int gp_topics_rebuild(gp_proxy_t *p) {
        size_t n = 0;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        n += p->topics[t].parts[i].owned;
        gp_part_t **np = calloc(n ? n : 1, sizeof(*np));
        gp_drain_target_t *nt = calloc(n ? n : 1, sizeof(*nt));
        if (!np || !nt) {
                free(np);
                free(nt);
                return -1;
        }
        free(p->drain_t);
        p->drain_t = nt;
        free(p->pptrs);
        p->pptrs = np;
        p->n_pptrs = 0;
        for (int t = 0; t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        if (p->topics[t].parts[i].owned)
                                p->pptrs[p->n_pptrs++] = &p->topics[t].parts[i].work.st;
        return 0;
}

rd_kafka_topic_partition_list_t *gp_topics_owned(gp_proxy_t *p) {
        rd_kafka_topic_partition_list_t *l =
                rd_kafka_topic_partition_list_new(p->n_pptrs ? (int)p->n_pptrs : 1);
        for (int t = 0; l && t < p->n_topics; t++)
                for (int i = 0; i < p->topics[t].n; i++)
                        if (p->topics[t].parts[i].owned)
                                rd_kafka_topic_partition_list_add(l, p->topics[t].name, i)
                                        ->offset = p->topics[t].parts[i].work.pos;
        return l;
}

/* Partition count of a topic, 0 if it does not exist, -1 on error. */
static int topic_partitions(rd_kafka_t *rk, const char *name, gp_err_t *err) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, name, NULL);
        if (!rkt) {
                gp_err_set(err, GP_ERR_KAFKA, "metadata for %s: %s", name,
                           rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
        int n = -1;
        rd_kafka_topic_destroy(rkt);
        if (e) {
                gp_err_set(err, GP_ERR_KAFKA, "metadata for %s: %s", name,
                           rd_kafka_err2str(e));
                return -1;
        }
        if (md->topic_cnt == 1) {
                const struct rd_kafka_metadata_topic *t = &md->topics[0];
                if (t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
                        n = 0;
                else if (t->err) {
                        gp_err_set(err, GP_ERR_KAFKA, "metadata for %s: %s", name,
                                   rd_kafka_err2str(t->err));
                } else
                        n = t->partition_cnt;
        }
        rd_kafka_metadata_destroy(md);
        return n;
}

/* Creates topic `name` with n partitions, or grows it to n. */
static int create_topic(gp_proxy_t *p, const char *name, int n, int grow, gp_err_t *err) {
        rd_kafka_queue_t *q = rd_kafka_queue_new(p->prod);
        rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(p->prod, RD_KAFKA_ADMIN_OP_ANY);
        rd_kafka_AdminOptions_set_operation_timeout(o, 10000, NULL, 0);
        int rc = -1;
        rd_kafka_event_t *ev;
        char why[256] = "";
        if (grow) {
                rd_kafka_NewPartitions_t *np =
                        rd_kafka_NewPartitions_new(name, (size_t)n, why, sizeof(why));
                if (np) {
                        rd_kafka_CreatePartitions(p->prod, &np, 1, o, q);
                        rd_kafka_NewPartitions_destroy(np);
                }
        } else {
                rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(
                        name, n, p->conf->topics_replication, why, sizeof(why));
                if (nt) {
                        rd_kafka_CreateTopics(p->prod, &nt, 1, o, q);
                        rd_kafka_NewTopic_destroy(nt);
                }
        }
        ev = why[0] ? NULL : rd_kafka_queue_poll(q, 15000);
        if (why[0]) {
                gp_err_set(err, GP_ERR_INVALID, "%s: %s", name, why);
        } else if (!ev) {
                gp_err_set(err, GP_ERR_TRANSPORT, "%s: creating timed out", name);
        } else if (rd_kafka_event_error(ev)) {
                gp_err_set(err, GP_ERR_KAFKA, "%s: %s", name, rd_kafka_event_error_string(ev));
        } else {
                const rd_kafka_topic_result_t **r;
                size_t cnt = 0;
                r = grow ? rd_kafka_CreatePartitions_result_topics(
                                   rd_kafka_event_CreatePartitions_result(ev), &cnt)
                         : rd_kafka_CreateTopics_result_topics(
                                   rd_kafka_event_CreateTopics_result(ev), &cnt);
                if (cnt == 1 && rd_kafka_topic_result_error(r[0]) &&
                    rd_kafka_topic_result_error(r[0]) !=
                            RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                        gp_err_set(err, GP_ERR_KAFKA, "%s: %s", name,
                                   rd_kafka_topic_result_error_string(r[0]));
                else
                        rc = 0;
        }
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_AdminOptions_destroy(o);
        rd_kafka_queue_destroy(q);
        if (rc == 0)
                gp_log_at(GP_LOG_INFO, name, -1, "%s topic %s with %d partition%s",
                          grow ? "grew" : "created", name, n, n == 1 ? "" : "s");
        return rc;
}

/* Makes sure `name` exists with at least `need` partitions (creating or
 * growing it when gate.topics.create is on). Returns its partition count,
 * or -1 with err. */
static int ensure_topic(gp_proxy_t *p, const char *name, int need, const char *role,
                        gp_err_t *err) {
        int have = topic_partitions(p->prod, name, err);
        if (have < 0)
                return -1;
        if (have >= need)
                return have;
        if (!p->conf->topics_create) {
                if (have == 0)
                        gp_err_set(err, GP_ERR_NOT_FOUND,
                                   "%s topic %s does not exist; create it with %d partitions "
                                   "or set gate.topics.create=true",
                                   role, name, need);
                else
                        gp_err_set(
                                err, GP_ERR_INVALID,
                                "%s topic %s has %d partitions but needs %d (one per source "
                                "partition); add partitions or set gate.topics.create=true",
                                role, name, have, need);
                return -1;
        }
        if (create_topic(p, name, need, have > 0, err))
                return -1;
        /* Metadata may lag the creation briefly. */
        for (int i = 0; i < 50; i++) {
                have = topic_partitions(p->prod, name, err);
                if (have >= need)
                        return have;
                rd_kafka_poll(p->prod, 100);
        }
        gp_err_set(err, GP_ERR_TRANSPORT, "%s: created but not visible after 5 s", name);
        return -1;
}

/* Low or high watermark of one partition, for a start without checkpoint. */
int64_t gp_topics_start_offset(gp_proxy_t *p, const char *topic, int32_t part, bool latest) {
        int64_t lo = 0, hi = 0;
        gp_proxy_beat(p); /* a bounded wait on Kafka, maybe one per new partition */
        rd_kafka_resp_err_t e =
                rd_kafka_query_watermark_offsets(p->cons, topic, part, &lo, &hi, 10000);
        if (e) {
                gp_warn("%s/%d: cannot read offsets (%s); starting at the %s", topic, part,
                        rd_kafka_err2str(e), latest ? "end" : "beginning");
                return latest ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
        }
        return latest ? hi : lo;
}

/* Grows topic slot t to n partitions, fresh state for the new ones. */
static int grow_slot(gp_proxy_t *p, gp_tslot_t *t, int n, bool latest) {
        gp_pslot_t *np = realloc(t->parts, (size_t)n * sizeof(*np));
        if (!np)
                return -1;
        t->parts = np;
        int64_t now = gp_now_ms();
        for (int i = t->n; i < n; i++) {
                np[i] = (gp_pslot_t){0};
                gp_part_init(&np[i].work.st, now);
                /* A partition that appears while running starts at its
                 * beginning: nothing written to it may be skipped. With
                 * group, the group assigns it and its position is read
                 * then (group.c). */
                np[i].owned = !p->group;
                np[i].work.pos = p->group ? -1 : gp_topics_start_offset(p, t->name, i, latest);
                np[i].work.wrote[0] = np[i].work.wrote[1] = -1;
                np[i].done = np[i].work;
        }
        t->n = n;
        if (gp_topics_rebuild(p))
                return -1;
        return 0;
}

/* Source, colour and dead-letter topics: exist, big enough, handles open. */
gp_errcode_t gp_topics_setup(gp_proxy_t *p, gp_err_t *err) {
        const gp_conf_t *conf = p->conf;
        if (!(p->topics = calloc((size_t)conf->n_topics, sizeof(*p->topics))))
                return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        p->n_topics = conf->n_topics;
        for (int i = 0; i < conf->n_topics; i++) {
                gp_tslot_t *t = &p->topics[i];
                t->name = conf->topics[i];
                int n = topic_partitions(p->cons, t->name, err);
                if (n <= 0) {
                        if (n == 0)
                                gp_err_set(err, GP_ERR_NOT_FOUND,
                                           "source topic %s does not exist; create it "
                                           "(kafka-topics.sh --bootstrap-server BROKER "
                                           "--create --topic %s --partitions N) or name "
                                           "an existing one in gate.source.topics",
                                           t->name, t->name);
                        return gp_err_code(err);
                }
                for (int c = 0; c < 2; c++) {
                        if (gp_conf_topic_name(conf, c ? conf->topic_green : conf->topic_blue,
                                               t->name, t->out_name[c],
                                               sizeof(t->out_name[c]))) {
                                return gp_err_set(err, GP_ERR_INVALID,
                                                  "colour topic name too long for %s",
                                                  t->name);
                        }
                        if ((t->out_n[c] = ensure_topic(p, t->out_name[c], n, "colour", err)) <
                            0)
                                return gp_err_code(err);
                        if (!(t->out[c] = rd_kafka_topic_new(p->prod, t->out_name[c], NULL)))
                                return gp_err_set(err, GP_ERR_KAFKA, "%s: %s", t->out_name[c],
                                                  rd_kafka_err2str(rd_kafka_last_error()));
                }
                if (grow_slot(p, t, n, conf->source_start == GP_START_LATEST))
                        return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                t->placed = n;
        }
        if ((p->dlq_n = ensure_topic(p, conf->dlq_topic, 1, "dead-letter", err)) < 0)
                return gp_err_code(err);
        if (!(p->dlq = rd_kafka_topic_new(p->prod, conf->dlq_topic, NULL)))
                return gp_err_set(err, GP_ERR_KAFKA, "%s: %s", conf->dlq_topic,
                                  rd_kafka_err2str(rd_kafka_last_error()));
        return GP_OK;
}

/* One topic's growth to n partitions: placed (colour topics big enough,
 * the slot grown; with assign, the new partitions assigned) or held. With
 * group the partitions t->placed..n-1 may be the group's already (slots
 * grown, paused as colourless) and are resumed once placed. */
static gp_errcode_t discover_one(gp_proxy_t *p, gp_tslot_t *t, int n, gp_err_t *err) {
        gp_err_t why;
        int from = p->group ? t->placed : t->n;
        if (n <= from)
                return GP_OK;
        int ok = 1;
        for (int c = 0; c < 2 && ok; c++) {
                int have = ensure_topic(p, t->out_name[c], n, "colour", &why);
                if (have < 0) {
                        ok = 0;
                } else
                        t->out_n[c] = have;
        }
        if (!ok) {
                /* Held: partitions from..n-1 are not assigned (with group:
                 * assigned but paused), so not read; the old ones keep
                 * flowing. Retried every discovery, logged once per change
                 * and every 60 s. */
                int64_t mono = gp_mono_ms();
                if (strcmp(t->held, why.msg) || mono - t->held_logged >= 60000) {
                        gp_log_at(GP_LOG_ERROR, t->name, -1,
                                  "%s grew to %d partitions but its records cannot be "
                                  "placed: %s; holding partitions %d-%d (not read) "
                                  "until then",
                                  t->name, n, why.msg, from, n - 1);
                        t->held_logged = mono;
                }
                snprintf(t->held, sizeof(t->held), "%.500s", why.msg);
                return GP_OK;
        }
        if (t->held[0]) {
                gp_info("the colour topics of %s have %d partitions now: the held "
                        "partitions %d-%d are read",
                        t->name, n, from, n - 1);
                t->held[0] = '\0';
        }
        gp_info("%s grew from %d to %d partitions; reading the new ones from the "
                "beginning%s",
                t->name, from, n, p->group ? " as the group assigns them" : "");
        t->placed = n;
        if (grow_slot(p, t, n > t->n ? n : t->n, false) == 0 && !p->group &&
            gp_assign_all(p, err))
                return gp_err_prefix(err, "%s grew to %d partitions", t->name, n);
        if (p->group)
                gp_group_colours_grown(p);
        return GP_OK;
}

gp_errcode_t gp_topics_discover(gp_proxy_t *p, gp_err_t *err) {
        gp_err_t why;
        for (int i = 0; i < p->n_topics; i++) {
                gp_tslot_t *t = &p->topics[i];
                int n = topic_partitions(p->cons, t->name, &why);
                if (discover_one(p, t, n, err))
                        return gp_err_code(err);
        }
        return GP_OK;
}

gp_errcode_t gp_topics_assigned_beyond(gp_proxy_t *p, gp_tslot_t *t, int n, gp_err_t *err) {
        if (n > t->n && grow_slot(p, t, n, false))
                return gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        gp_err_t why;
        int have = topic_partitions(p->cons, t->name, &why);
        return discover_one(p, t, have > n ? have : n, err);
}

gp_tslot_t *gp_topics_slot(gp_proxy_t *p, rd_kafka_topic_t *rkt) {
        for (int i = 0; i < p->n_topics; i++)
                if (p->topics[i].in == rkt)
                        return &p->topics[i];
        const char *name = rd_kafka_topic_name(rkt);
        for (int i = 0; i < p->n_topics; i++)
                if (!strcmp(p->topics[i].name, name)) {
                        p->topics[i].in = rkt;
                        return &p->topics[i];
                }
        return NULL;
}
