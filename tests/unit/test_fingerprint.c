/* tests/unit/test_fingerprint.c: the settings fingerprint and the verdict
 * on a partition's committed line (gate/fingerprint.h): the fingerprint
 * pinned (it is compared across hosts and versions), each covered setting
 * moving it, and the verdicts of a restart with changed settings (an
 * upgrade in place: never a refusal), a live member under other settings
 * (a refusal, once its line is its own) and a partition in between owners.
 * Uses gate/ only. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gate/checkpoint.h"
#include "gate/fingerprint.h"

static gp_fp_settings_t defaults(void) {
        return (gp_fp_settings_t){
                .event_time = "json:ts",
                .unit = GP_UNIT_MS,
                .avro_schema = GP_FP_NONE,
                .record_max_bytes = 1048576,
                .gate = {.out_of_orderness_ms = 1000,
                         .idle_ms = 10000,
                         .align_ms = 1,
                         .lateness_ms = 0,
                         .late_to_dlq = false,
                         .bad_route_old = false},
                .topic_blue = "{topic}.blue",
                .topic_green = "{topic}.green",
                .dlq_topic = "orders.dlq",
                .drain_blue = NULL,
                .drain_green = NULL,
        };
}

/* The canonical text is part of the checkpoint's meaning: instances of
 * different versions compare fingerprints, so it must not drift. */
Test(fingerprint, pinned) {
        gp_fp_settings_t s = defaults();
        cr_assert_eq(gp_fp_of(&s), 0x2ee90df7u, "fp=%08x", gp_fp_of(&s));
        cr_assert_eq(gp_fp_bytes("", 0), 0x811c9dc5u, "FNV-1a of nothing");
        cr_assert_eq(gp_fp_bytes("a", 1), 0xe40c292cu, "FNV-1a of 'a'");
        gp_fp_settings_t t = defaults();
        cr_assert_eq(gp_fp_of(&t), gp_fp_of(&s), "the same settings, the same fingerprint");
}

/* Every covered setting moves the fingerprint. */
Test(fingerprint, every_setting_counts) {
        gp_fp_settings_t base = defaults();
        uint32_t fp0 = gp_fp_of(&base);
        uint32_t seen[32];
        size_t n = 0;
        seen[n++] = fp0;
        for (int k = 0; k < 18; k++) {
                gp_fp_settings_t s = defaults();
                switch (k) {
                case 0:
                        s.event_time = "json:ts2";
                        break;
                case 1:
                        s.event_time = "kafka-timestamp";
                        break;
                case 2:
                        s.unit = GP_UNIT_S;
                        break;
                case 3:
                        s.avro_schema = gp_fp_bytes("{}", 2);
                        break;
                case 4:
                        s.record_max_bytes = 1048577;
                        break;
                case 5:
                        s.gate.out_of_orderness_ms = 1001;
                        break;
                case 6:
                        s.gate.idle_ms = 9999;
                        break;
                case 7:
                        s.gate.align_ms = 60000;
                        break;
                case 8:
                        s.gate.lateness_ms = 5000;
                        break;
                case 9:
                        s.gate.late_to_dlq = true;
                        break;
                case 10:
                        s.gate.bad_route_old = true;
                        break;
                case 11:
                        s.topic_blue = "{topic}-blue";
                        break;
                case 12:
                        s.topic_green = "{topic}-green";
                        break;
                case 13:
                        s.dlq_topic = "orders.dead";
                        break;
                case 14:
                        s.drain_blue = "job-blue";
                        break;
                case 15:
                        s.drain_green = "job-green";
                        break;
                case 16:
                        s.drain_blue = "";
                        break; /* set but empty is not unset */
                case 17:
                        s.unit = GP_UNIT_US;
                        break;
                }
                uint32_t fp = gp_fp_of(&s);
                cr_assert_neq(fp, GP_FP_NONE, "setting %d: fingerprint 0", k);
                for (size_t i = 0; i < n; i++)
                        cr_assert_neq(fp, seen[i], "setting %d gives an earlier fingerprint",
                                      k);
                seen[n++] = fp;
        }
        /* A value moved from one field to its neighbour is another text. */
        gp_fp_settings_t a = defaults(), b = defaults();
        a.topic_blue = "x";
        a.topic_green = "yz";
        b.topic_blue = "xy";
        b.topic_green = "z";
        cr_assert_neq(gp_fp_of(&a), gp_fp_of(&b));
}

Test(fingerprint, counts) {
        cr_assert(gp_fp_counts(0x1234, GP_FP_NONE), "a line of an earlier version counts");
        cr_assert(gp_fp_counts(0x1234, 0x1234));
        cr_assert(!gp_fp_counts(0x1234, 0x1235));
}

Test(fingerprint, owner_hash) {
        uint64_t a = gp_fp_owner("rdkafka-1", 9), b = gp_fp_owner("rdkafka-2", 9);
        cr_assert_neq(a, 0u);
        cr_assert_neq(a, b);
        cr_assert_neq(gp_fp_owner("", 0), 0u);
}

#define MINE  0xaaaa0001u
#define OTHER 0xbbbb0002u
#define GRACE 30000

/* A restart with changed settings and no other member: this instance owns
 * every partition, whose lines carry the old fingerprint until its first
 * commit. Never a refusal. */
Test(fingerprint, upgrade_in_place) {
        gp_fp_track_t t = {0};
        uint64_t me = gp_fp_owner("me", 2);
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 10, me, true, 1000, GRACE), GP_FP_PENDING);
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 10, me, true, 1000 + 10 * GRACE, GRACE),
                     GP_FP_PENDING, "its own line, however long");
        cr_assert_eq(gp_fp_judge(&t, MINE, MINE, 11, me, true, 1000 + 10 * GRACE, GRACE),
                     GP_FP_SAME, "rewritten at its commit");
        /* Lines of an earlier version, and no line at all. */
        cr_assert_eq(gp_fp_judge(&t, MINE, GP_FP_NONE, 12, me, true, 0, GRACE), GP_FP_SAME);
        gp_fp_track_t u = {0};
        cr_assert_eq(gp_fp_judge(&u, MINE, GP_FP_NONE, -1, 0, false, 0, GRACE), GP_FP_SAME);
}

/* Another live member under other settings: refused once the line is its
 * own, by a commit seen since (seq grew) or by holding it past grace. */
Test(fingerprint, live_member_differs) {
        uint64_t other = gp_fp_owner("other", 5);
        gp_fp_track_t t = {0};
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 50, other, false, 1000, GRACE),
                     GP_FP_PENDING, "first seen: perhaps an earlier owner's line");
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 50, other, false, 2000, GRACE),
                     GP_FP_PENDING);
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 51, other, false, 2500, GRACE),
                     GP_FP_DIFFERS, "a commit of its own");
        gp_fp_track_t q = {0};
        cr_assert_eq(gp_fp_judge(&q, MINE, OTHER, 50, other, false, 1000, GRACE),
                     GP_FP_PENDING);
        cr_assert_eq(gp_fp_judge(&q, MINE, OTHER, 50, other, false, 1000 + GRACE - 1, GRACE),
                     GP_FP_PENDING);
        cr_assert_eq(gp_fp_judge(&q, MINE, OTHER, 50, other, false, 1000 + GRACE, GRACE),
                     GP_FP_DIFFERS, "an idle owner, held past grace");
}

/* The line an earlier owner left, rewritten by the new owner under this
 * instance's settings: never refused; a partition nobody owns waits. */
Test(fingerprint, between_owners) {
        uint64_t a = gp_fp_owner("a", 1), b = gp_fp_owner("b", 1);
        gp_fp_track_t t = {0};
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 7, 0, false, 0, GRACE), GP_FP_PENDING,
                     "nobody owns it");
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 7, 0, false, 10 * GRACE, GRACE),
                     GP_FP_PENDING, "nobody owns it, however long");
        cr_assert_eq(gp_fp_judge(&t, MINE, OTHER, 7, a, false, 10 * GRACE, GRACE),
                     GP_FP_PENDING, "a new owner starts the watch again");
        cr_assert_eq(gp_fp_judge(&t, MINE, MINE, 8, a, false, 10 * GRACE + 100, GRACE),
                     GP_FP_SAME, "rewritten under the same settings");
        /* Owner a had it under other settings for a while, then b takes it:
         * b's first look starts again. */
        gp_fp_track_t u = {0};
        gp_fp_judge(&u, MINE, OTHER, 7, a, false, 0, GRACE);
        cr_assert_eq(gp_fp_judge(&u, MINE, OTHER, 7, b, false, GRACE + 1, GRACE),
                     GP_FP_PENDING);
        cr_assert_eq(u.since, GRACE + 1);
        cr_assert_eq(u.seq, 7);
        /* grace < 0: only a commit seen counts. */
        gp_fp_track_t v = {0};
        gp_fp_judge(&v, MINE, OTHER, 7, a, false, 0, -1);
        cr_assert_eq(gp_fp_judge(&v, MINE, OTHER, 7, a, false, INT64_MAX / 2, -1),
                     GP_FP_PENDING);
}

/* The fingerprint in the line: written as gp5, read back the same. */
Test(fingerprint, in_the_checkpoint) {
        gp_gate_t g;
        gp_part_t p, q;
        gp_gate_init(&g, GP_BLUE);
        gp_part_init(&p, 0);
        gp_fp_settings_t s = defaults();
        p.fp = gp_fp_of(&s);
        char line[GP_CKPT_MAX], want[32], err[128];
        int n = gp_ckpt_encode(&g, &p, line, sizeof line);
        snprintf(want, sizeof want, " fp=%08x", p.fp);
        cr_assert(n > 0 && !strncmp(line, "gp5 ", 4) && strstr(line, want), "'%s'", line);
        gp_part_init(&q, 0);
        cr_assert_eq(gp_ckpt_decode(line, (size_t)n, &g, &q, err, sizeof err), 0, "%s", err);
        cr_assert_eq(q.fp, p.fp);
}
