/* Fuzz target: a watch stream (k8s/wire.c): the bytes are split into
 * lines by the bounded splitter, fed in two pieces, and each line is
 * parsed as a watch event; an object an event carries must parse as a
 * ConfigMap or be refused with a reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/configmap.h"
#include "k8s/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(void *opaque, const char *line, size_t len) {
        gp_k8s_event_t ev;
        gp_err_t err;
        (void)opaque;
        if (!len || line[len - 1] == '\r')
                abort(); /* empty lines and line-ending CRs never reach us */
        if (gp_k8s_event_parse(line, len, &ev, &err)) {
                if (!err.msg[0] || ev.object)
                        abort();
                return 0;
        }
        if ((ev.type == GP_K8S_EV_BOOKMARK || ev.type == GP_K8S_EV_ERROR) != !ev.object)
                abort();
        if (ev.type != GP_K8S_EV_ERROR && !ev.rv[0])
                abort();
        if (ev.object) {
                gp_cm_t *cm = gp_cm_parse(ev.object, strlen(ev.object), &err);
                if (cm && strcmp(gp_cm_resource_version(cm), ev.rv))
                        abort(); /* the event's version is the object's */
                gp_cm_destroy(cm);
        }
        gp_k8s_event_clear(&ev);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        gp_k8s_lines_t l;
        size_t cut = size ? data[0] % (size + 1) : 0;
        gp_k8s_lines_init(&l, 4096);
        if (gp_k8s_lines_feed(&l, (const char *)data, cut, on_line, NULL) == 0)
                gp_k8s_lines_feed(&l, (const char *)data + cut, size - cut, on_line, NULL);
        if (l.cap > 4096)
                abort(); /* bounded */
        gp_k8s_lines_free(&l);
        return 0;
}
