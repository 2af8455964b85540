/* Fuzz target: a kubeconfig (k8s/kubeconfig.c, libyaml underneath). What
 * parses must be usable as it stands: an https server, credentials, a key
 * with its certificate, and a second parse gives the same result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const char *a, const char *b) {
        return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        gp_err_t err;
        gp_k8s_conf_t *c =
                gp_k8s_kubeconfig_parse((const char *)data, size, "fuzz", "/kc", &err);
        if (!c) {
                if (!err.msg[0])
                        abort(); /* every refusal says why */
                return 0;
        }
        if (strncmp(c->server, "https://", 8) || c->server[strlen(c->server) - 1] == '/')
                abort();
        if (!c->token && !c->token_file && !c->cert_data && !c->cert_file)
                abort();
        if (!(c->cert_data || c->cert_file) != !(c->key_data || c->key_file))
                abort();
        if ((c->ca_data && c->ca_file) || (c->token && c->token_file))
                abort(); /* one of each wins */
        gp_k8s_conf_t *again =
                gp_k8s_kubeconfig_parse((const char *)data, size, "fuzz", "/kc", &err);
        if (!again || !same(c->server, again->server) || !same(c->ns, again->ns) ||
            !same(c->token, again->token) || c->ca_len != again->ca_len ||
            (c->ca_data && memcmp(c->ca_data, again->ca_data, c->ca_len)))
                abort(); /* parsing must be deterministic */
        gp_k8s_conf_destroy(again);
        gp_k8s_conf_destroy(c);
        return 0;
}
