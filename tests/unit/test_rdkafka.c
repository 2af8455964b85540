/* tests/unit/test_rdkafka.c: what gate-proxy asks of the librdkafka it
 * runs on (proxy/loop/kafka_clients.h): group mode from 2.10.0 on, refused
 * below it with the version found, the one needed and how to get it; and
 * the features of the librdkafka this build links. */
#include <criterion/criterion.h>
#include <string.h>

#include "proxy/loop/kafka_clients.h"

static bool ok(int v, const char *s, char *buf, size_t n) {
        buf[0] = '\0';
        return gp_rdkafka_group_ok(v, s, buf, n);
}

Test(rdkafka, group_refused_below_2_10_0) {
        char buf[512];
        const struct {
                int v;
                const char *s;
        } old[] = {
                {0x020002ff, "2.0.2"},     /* Debian 12 */
                {0x020601ff, "2.6.1"},     /* #4783 fixed, #4059 not */
                {0x020902ff, "2.9.2"},     /* the last before */
                {0x020a0001, "2.10.0-RC1"} /* a pre-release of 2.10.0 */
        };
        for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
                cr_expect(!ok(old[i].v, old[i].s, buf, sizeof buf), "%s allowed", old[i].s);
                cr_expect(
                        strstr(buf, "gate.membership=group needs librdkafka 2.10.0 or later"),
                        "%s", buf);
                char found[64];
                snprintf(found, sizeof found, "runs on librdkafka %s,", old[i].s);
                cr_expect(strstr(buf, found), "the version found is not named: %s", buf);
                cr_expect(strstr(buf, "make librdkafka"), "%s", buf);
        }
}

Test(rdkafka, group_allowed_from_2_10_0) {
        char buf[512];
        cr_expect(ok(0x020a00ff, "2.10.0", buf, sizeof buf));
        cr_expect(ok(0x020e02ff, "2.14.2", buf, sizeof buf));
        cr_expect(ok(0x030000ff, "3.0.0", buf, sizeof buf));
        cr_expect_str_empty(buf, "a reason was written for an allowed version: %s", buf);
        /* The library this build links (make build-test: the one
         * scripts/build-librdkafka.sh makes). */
        cr_expect(ok(rd_kafka_version(), rd_kafka_version_str(), buf, sizeof buf), "%s", buf);
}

Test(rdkafka, features_named) {
        char buf[512];
        const char *f = gp_rdkafka_features(buf, sizeof buf);
        cr_assert(f == buf);
        cr_expect(strstr(f, "ssl"), "%s", f);
        /* Built by scripts/build-librdkafka.sh: SASL (SCRAM, OAUTHBEARER with
         * OIDC, GSSAPI through Cyrus), zstd and lz4. */
        static const char *const want[] = {"sasl_scram", "sasl_gssapi", "sasl_oauthbearer",
                                           "oidc",       "zstd",        "lz4"};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
                cr_expect(strstr(f, want[i]), "no %s in builtin.features: %s", want[i], f);
}
