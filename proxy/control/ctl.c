/* proxy/control/ctl.c: the last good control, and compare-and-set writes with
 * re-read and retry. The backends live in proxy/control/ctl_file.c and
 * proxy/control/ctl_k8s.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/conf/conf.h"
#include "proxy/control/ctl.h"
#include "proxy/base/fault.h"
#include "proxy/base/log.h"

struct gp_ctl {
        const gp_ctl_ops_t *ops;
        void *be;
        gp_cm_t *doc;     /* last good document */
        gp_control_t cur; /* parsed from doc */
        bool have;
        gp_err_t error; /* why the last read failed (code GP_OK: it did not) */
        /* The resourceVersion of the current document when it parses as a
         * ConfigMap but is not a valid control (a bad value), else "":
         * status keys may go into it (with this version), decisions not. */
        char bad_rv[64];
        uint64_t conflicts; /* writes that met a moved resourceVersion */
        bool cas_cutoff;    /* the cutoff is written only where none is stored */
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
        return c->error.msg;
}

uint64_t gp_ctl_conflicts(const gp_ctl_t *c) {
        return c->conflicts;
}

gp_errcode_t gp_ctl_error_code(const gp_ctl_t *c) {
        return c->error.code;
}

const gp_cm_t *gp_ctl_document(const gp_ctl_t *c) {
        return c->doc;
}

gp_ctl_t *gp_ctl_new_conf(const gp_conf_t *conf, gp_err_t *err) {
        if (conf->k8s_configmap)
                return gp_ctl_new_k8s(conf->k8s_configmap, conf->k8s_namespace,
                                      conf->k8s_kubeconfig, true, err);
        gp_ctl_t *c = gp_ctl_new_file(conf->control_file);
        if (!c)
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        return c;
}

int gp_ctl_poll(gp_ctl_t *c, bool force) {
        gp_cm_t *doc = NULL;
        bool changed = false;
        char why[400];
        gp_control_t ctl;
        size_t n;

        if (c->ops->read(c->be, force, &doc, &changed, &c->error) != GP_OK) {
                c->bad_rv[0] = '\0';
                return -1;
        }
        if (!changed) {
                gp_cm_destroy(doc);
                return c->error.code ? -1 : 0;
        }
        const gp_kv_t *kv = gp_cm_data(doc, &n);
        if (gp_control_parse(&ctl, kv, n, why, sizeof(why))) {
                gp_err_set(&c->error, GP_ERR_INVALID, "%s: %s", c->ops->describe(c->be), why);
                snprintf(c->bad_rv, sizeof(c->bad_rv), "%s", gp_cm_resource_version(doc));
                gp_cm_destroy(doc);
                return -1;
        }
        gp_cm_destroy(c->doc);
        c->doc = doc;
        c->cur = ctl;
        c->have = true;
        gp_err_clear(&c->error);
        c->bad_rv[0] = '\0';
        return 1;
}

/* The map is missing or invalid: GP_ERR_INVALID with the reason. */
static gp_errcode_t invalid(const gp_ctl_t *c, gp_err_t *err) {
        return gp_err_set(err, GP_ERR_INVALID, "%s", c->error.msg);
}

gp_errcode_t gp_ctl_patch(gp_ctl_t *c, const gp_kv_t *patch, size_t n,
                          const gp_control_t *base, gp_err_t *err) {
        for (int attempt = 0; attempt < 8; attempt++) {
                if (!c->doc && gp_ctl_poll(c, true) < 0)
                        return invalid(c, err);
                /* The map is invalid now: a decision waits for a valid one;
                 * status keys go into a document that parses (compared on
                 * its own version, its bad value left as it is); a missing
                 * or unreadable file is not touched. */
                if (c->error.code && (base || !c->bad_rv[0]))
                        return invalid(c, err);
                if (base && (!c->have || !gp_control_same_transition(base, &c->cur)))
                        return gp_err_set(err, GP_ERR_DROPPED,
                                          "%s: the map moved on to another transition",
                                          c->ops->describe(c->be));
                /* With gp_ctl_cas_cutoff, a cutoff goes only into a map
                 * that stores none (compare-and-set on "no T stored",
                 * against the version just read): one stored meanwhile,
                 * the same or another, is never written over. */
                if (base && c->cas_cutoff && c->cur.wm_stage == GP_WMS_SET &&
                    c->cur.toggle != GP_TS_NONE)
                        for (size_t i = 0; i < n; i++)
                                if (!strcmp(patch[i].key, GP_KEY_TOGGLE))
                                        return gp_err_set(err, GP_ERR_DROPPED,
                                                          "%s: a cutoff is stored already "
                                                          "(%lld); not written over",
                                                          c->ops->describe(c->be),
                                                          (long long)c->cur.toggle);
                /* Read and decided; a test may hold the proxy here. */
                GP_FAULT(base ? "before-decision-write" : "before-status-write");
                gp_errcode_t rc = c->ops->write(
                        c->be, c->error.code ? c->bad_rv : gp_cm_resource_version(c->doc),
                        patch, n, err);
                if (rc == GP_ERR_CONFLICT)
                        c->conflicts++;
                if (rc != GP_ERR_CONFLICT) {
                        if (rc == GP_OK)
                                gp_ctl_poll(c, true); /* see our own write */
                        return rc;
                }
                /* Someone wrote in between: read again and decide again
                 * (an invalid map now: see above). */
                gp_debug("%s: conflict writing %s%s at resourceVersion %s; reading again "
                         "(attempt %d of 8)",
                         c->ops->describe(c->be), n ? patch[0].key : "",
                         n > 1 ? " and others" : "",
                         c->error.code ? c->bad_rv : gp_cm_resource_version(c->doc),
                         attempt + 1);
                gp_ctl_poll(c, true);
        }
        return gp_err_set(err, GP_ERR_CONFLICT, "%s: still conflicting after 8 attempts",
                          c->ops->describe(c->be));
}

void gp_ctl_cas_cutoff(gp_ctl_t *c, bool on) {
        c->cas_cutoff = on;
}

gp_cm_t *gp_ctl_load(gp_ctl_t *c, gp_err_t *err) {
        gp_cm_t *doc = NULL;
        bool changed = false;
        if (c->ops->read(c->be, true, &doc, &changed, err) != GP_OK)
                return NULL;
        if (!doc)
                gp_err_set(err, GP_ERR_NOT_FOUND, "%s: no document", c->ops->describe(c->be));
        return doc;
}

gp_errcode_t gp_ctl_write(gp_ctl_t *c, const char *expected_rv, const gp_kv_t *patch, size_t n,
                          gp_err_t *err) {
        return c->ops->write(c->be, expected_rv, patch, n, err);
}

gp_errcode_t gp_ctl_create(gp_ctl_t *c, const gp_kv_t *data, size_t n, bool replace,
                           gp_err_t *err) {
        if (!c->ops->create)
                return gp_err_set(err, GP_ERR_FAIL, "%s: cannot be created from here",
                                  c->ops->describe(c->be));
        return c->ops->create(c->be, data, n, replace, err);
}

bool gp_ctl_cli_cas(const gp_ctl_t *c) {
        return c->ops->cli_cas;
}
