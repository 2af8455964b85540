/* proxy/control.c: the last good control, and compare-and-set writes with
 * re-read and retry. The backends live in proxy/ctlfile.c (and later k8s/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/control.h"

struct gp_ctl {
        const gp_ctl_ops_t *ops;
        void *be;
        gp_cm_t *doc;       /* last good document */
        gp_control_t cur;   /* parsed from doc */
        bool have;
        char error[512];    /* why the last read failed */
};

gp_ctl_t *gp_ctl_new(const gp_ctl_ops_t *ops, void *be) {
        gp_ctl_t *c = calloc(1, sizeof(*c));
        if (!c) {
                ops->destroy(be);
                return NULL;
        }
        c->ops = ops;
        c->be = be;
        return c;
}

void gp_ctl_destroy(gp_ctl_t *c) {
        if (!c)
                return;
        c->ops->destroy(c->be);
        gp_cm_destroy(c->doc);
        free(c);
}

const char *gp_ctl_describe(const gp_ctl_t *c) {
        return c->ops->describe(c->be);
}

const gp_control_t *gp_ctl_current(const gp_ctl_t *c) {
        return c->have ? &c->cur : NULL;
}

const char *gp_ctl_error(const gp_ctl_t *c) {
        return c->error;
}

const gp_cm_t *gp_ctl_document(const gp_ctl_t *c) {
        return c->doc;
}

int gp_ctl_poll(gp_ctl_t *c, bool force) {
        gp_cm_t *doc = NULL;
        bool changed = false;
        char err[400];
        gp_control_t ctl;
        size_t n;

        if (c->ops->read(c->be, force, &doc, &changed, err, sizeof(err)) != GP_CTL_OK) {
                snprintf(c->error, sizeof(c->error), "%s", err);
                return -1;
        }
        if (!changed) {
                gp_cm_destroy(doc);
                return c->error[0] ? -1 : 0;
        }
        const gp_kv_t *kv = gp_cm_data(doc, &n);
        if (gp_control_parse(&ctl, kv, n, err, sizeof(err))) {
                snprintf(c->error, sizeof(c->error), "%s: %s", c->ops->describe(c->be), err);
                gp_cm_destroy(doc);
                return -1;
        }
        gp_cm_destroy(c->doc);
        c->doc = doc;
        c->cur = ctl;
        c->have = true;
        c->error[0] = '\0';
        return 1;
}

int gp_ctl_patch(gp_ctl_t *c, const gp_kv_t *patch, size_t n, const gp_control_t *base,
                 char *err, size_t errlen) {
        for (int attempt = 0; attempt < 8; attempt++) {
                if (!c->doc && gp_ctl_poll(c, true) < 0) {
                        snprintf(err, errlen, "%s", c->error);
                        return GP_CTL_ERR;
                }
                if (base && (!c->have || !gp_control_same_transition(base, &c->cur)))
                        return GP_CTL_DROPPED;
                int rc = c->ops->write(c->be, gp_cm_resource_version(c->doc), patch, n, err,
                                       errlen);
                if (rc != GP_CTL_CONFLICT) {
                        if (rc == GP_CTL_OK)
                                gp_ctl_poll(c, true); /* see our own write */
                        return rc;
                }
                /* Someone wrote in between: read again and decide again. */
                if (gp_ctl_poll(c, true) < 0 && base) {
                        snprintf(err, errlen, "%s", c->error);
                        return GP_CTL_DROPPED;
                }
        }
        snprintf(err, errlen, "%s: still conflicting after 8 attempts",
                 c->ops->describe(c->be));
        return GP_CTL_ERR;
}
