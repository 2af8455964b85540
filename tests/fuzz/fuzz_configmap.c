/* Fuzz target: a ConfigMap document (k8s/configmap.c), then its data as
 * blue/green control (gate/control.c), then a render and re-parse that must
 * give the same data. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/control.h"
#include "k8s/configmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        gp_err_t err;
        gp_cm_t *cm = gp_cm_parse((const char *)data, size, &err);
        if (!cm)
                return 0;
        size_t n, n2;
        const gp_kv_t *kv = gp_cm_data(cm, &n);
        gp_control_t c;
        if (gp_control_parse(&c, kv, n, err.msg, sizeof err.msg) == 0) {
                gp_control_t again;
                if (gp_control_parse(&again, kv, n, err.msg, sizeof err.msg) ||
                    memcmp(&c, &again, sizeof(c)))
                        abort(); /* parsing must be deterministic */
        }
        char *text = gp_cm_render(cm);
        if (text) {
                gp_cm_t *back = gp_cm_parse(text, strlen(text), &err);
                if (!back)
                        abort(); /* what we render we must read */
                const gp_kv_t *kv2 = gp_cm_data(back, &n2);
                if (n2 != n)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if (strcmp(kv[i].key, kv2[i].key) || strcmp(kv[i].value, kv2[i].value))
                                abort();
                gp_cm_destroy(back);
                free(text);
        }
        gp_cm_destroy(cm);
        return 0;
}
