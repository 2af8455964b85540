/* Fuzz target: a manifest of `gate-proxy handover --to-file` (k8s/manifest.c,
 * libyaml underneath). What parses is a JSON object that prints and parses
 * back to the same thing, and a second parse gives the same result; every
 * refusal says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        gp_err_t err = {0};
        cJSON *j = gp_k8s_manifest_parse((const char *)data, size, &err);
        if (!j) {
                if (!err.msg[0])
                        abort();
                return 0;
        }
        if (!cJSON_IsObject(j))
                abort();
        char *s = cJSON_PrintUnformatted(j);
        cJSON *back = s ? cJSON_Parse(s) : NULL;
        cJSON *again = gp_k8s_manifest_parse((const char *)data, size, &err);
        if (!s || !back || !again || !cJSON_Compare(j, back, 1) || !cJSON_Compare(j, again, 1))
                abort();
        free(s);
        cJSON_Delete(back);
        cJSON_Delete(again);
        cJSON_Delete(j);
        return 0;
}
