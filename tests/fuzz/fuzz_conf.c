/* tests/fuzz/fuzz_conf.c: libFuzzer target for the configuration reader
 * (gp_conf_load_buffer, then gp_conf_finalize on what it accepted).
 * Besides memory errors it checks the promises of proxy/conf/conf.h: every
 * error names its origin, a finalized conf has its required values, and
 * the colour topic names it implies are valid and distinct.
 * Seed corpus: tests/fuzz/corpus/conf/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/conf/conf.h"

static void check(int ok) {
        if (!ok)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        gp_conf_t conf;
        char blue[256], green[256];
        gp_err_t err;

        gp_conf_init(&conf);
        memset(err.msg, 0x55, sizeof err.msg);
        if (gp_conf_load_buffer(&conf, "fuzz.conf", (const char *)data, size, &err) != 0) {
                /* "fuzz.conf:LINE: ..." or "fuzz.conf: ..." , NUL-terminated */
                check(memchr(err.msg, '\0', sizeof err.msg) != NULL);
                check(strncmp(err.msg, "fuzz.conf:", 10) == 0);
                gp_conf_destroy(&conf);
                return 0;
        }
        if (gp_conf_finalize(&conf, &err) == 0) {
                check(conf.pipeline && (conf.control_file || conf.k8s_configmap) &&
                      conf.n_topics >= 1 && conf.n_topics <= GP_CONF_MAX_TOPICS);
                check(strstr(conf.transactional_id, "{pipeline}") == NULL);
                check(strstr(conf.dlq_topic, "{pipeline}") == NULL);
                for (int i = 0; i < conf.n_topics; i++) {
                        check(gp_conf_topic_name(&conf, conf.topic_blue, conf.topics[i], blue,
                                                 sizeof blue) == 0);
                        check(gp_conf_topic_name(&conf, conf.topic_green, conf.topics[i],
                                                 green, sizeof green) == 0);
                        check(strlen(blue) <= 249 && strlen(green) <= 249);
                        check(strcmp(blue, green) != 0);
                        check(strcmp(blue, conf.dlq_topic) != 0);
                        check(strcmp(green, conf.dlq_topic) != 0);
                }
                /* finalize is idempotent */
                check(gp_conf_finalize(&conf, &err) == 0);
        } else {
                check(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        }
        gp_conf_destroy(&conf);
        return 0;
}
