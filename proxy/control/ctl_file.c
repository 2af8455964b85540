/* proxy/control/ctl_file.c: the control backend for a local ConfigMap file.
 *
 * Change detection by stat (inode, size, mtime), so a poll costs one
 * syscall. Writes take an exclusive flock on "<path>.lock", check the
 * resourceVersion, bump it, write "<path>.tmp.<pid>", fsync and rename:
 * a reader never sees a half-written file from us. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/timeparse.h"
#include "os/file.h"
#include "proxy/control/ctl.h"

typedef struct ctlfile {
        char *path;
        struct stat last;
        bool seen;
} ctlfile_t;

static char *read_all(const char *path, size_t *len, gp_err_t *err) {
        char *buf = gp_file_read(path, GP_CM_MAX_BYTES, len, err);
        if (!buf && errno == ENOENT)
                gp_err_set(err, GP_ERR_NOT_FOUND,
                           "%s: not found (create it with `gate-proxy init --control %s`)",
                           path, path);
        return buf;
}

gp_cm_t *gp_ctlfile_load(const char *path, gp_err_t *err) {
        size_t len = 0;
        char *buf = read_all(path, &len, err);
        if (!buf)
                return NULL;
        gp_cm_t *cm = gp_cm_parse(buf, len, err);
        if (!cm)
                gp_err_prefix(err, "%s", path);
        free(buf);
        return cm;
}

static gp_errcode_t f_read(void *be, bool force, gp_cm_t **out, bool *changed, gp_err_t *err) {
        ctlfile_t *f = be;
        struct stat st;
        *out = NULL;
        *changed = false;
        if (stat(f->path, &st)) {
                f->seen = false;
                free(read_all(f->path, &(size_t){0}, err)); /* for the message */
                return gp_err_code(err);
        }
        if (!force && f->seen && st.st_ino == f->last.st_ino &&
            st.st_size == f->last.st_size && st.st_mtim.tv_sec == f->last.st_mtim.tv_sec &&
            st.st_mtim.tv_nsec == f->last.st_mtim.tv_nsec)
                return GP_OK;
        f->last = st;
        f->seen = true;
        if (!(*out = gp_ctlfile_load(f->path, err)))
                return gp_err_code(err);
        *changed = true;
        return GP_OK;
}

/* The directory of path, for messages. */
static const char *dir_of(const char *path, char *buf, size_t len) {
        const char *slash = strrchr(path, '/');
        if (!slash)
                return ".";
        snprintf(buf, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        return buf;
}

/* Why path's directory does not take a new file: in the user's words. */
static void dir_error(const char *path, int e, gp_err_t *err) {
        char d[4096];
        if (e == ENOENT || e == ENOTDIR)
                gp_err_set(err, GP_ERR_IO, "%s: its directory %s does not exist", path,
                           dir_of(path, d, sizeof d));
        else if (e == EACCES || e == EPERM || e == EROFS)
                gp_err_set(err, GP_ERR_IO,
                           "%s: cannot write in its directory %s (%s); the map is "
                           "replaced by a new file there, so the directory must be writable",
                           path, dir_of(path, d, sizeof d), strerror(e));
        else
                gp_err_set(err, GP_ERR_IO, "%s: %s", path, strerror(e));
}

/* Writes text to path by a new file renamed over it, with the mode and
 * owner of the file it replaces, or of *like (0644 for a new one). */
static int write_file(const char *path, const char *text, const struct stat *like,
                      gp_err_t *err) {
        char tmp[4096 + 32];
        struct stat old;
        bool had = like ? (old = *like, true) : stat(path, &old) == 0;
        snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
                dir_error(path, errno, err);
                return -1;
        }
        /* Owner first (it may clear set-id bits), then the mode. Only root
         * may give a file away: a file of another owner gets ours. */
        if (had && (old.st_uid != geteuid() || old.st_gid != getegid()) &&
            fchown(fd, old.st_uid, old.st_gid) && errno != EPERM) {
                gp_err_set(err, GP_ERR_IO, "%s: keeping its owner: %s", path, strerror(errno));
                close(fd);
                unlink(tmp);
                return -1;
        }
        if (fchmod(fd, had ? old.st_mode & 07777 : 0644)) {
                gp_err_set(err, GP_ERR_IO, "%s: keeping its mode: %s", path, strerror(errno));
                close(fd);
                unlink(tmp);
                return -1;
        }
        size_t len = strlen(text), off = 0;
        while (off < len) {
                ssize_t w = write(fd, text + off, len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        gp_err_set(err, GP_ERR_IO, "%s: writing its new copy: %s", path,
                                   strerror(errno));
                        close(fd);
                        unlink(tmp);
                        return -1;
                }
                off += (size_t)w;
        }
        if (write(fd, "\n", 1) != 1 || fsync(fd) || close(fd) || rename(tmp, path)) {
                gp_err_set(err, GP_ERR_IO, "%s: %s", path, strerror(errno));
                unlink(tmp);
                return -1;
        }
        return 0;
}

/* Applies patch to the file under the lock, if its resourceVersion is
 * still expected_rv (or always, with expected_rv NULL). Creates the file
 * when create_name is given and it does not exist. */
static gp_errcode_t locked_update(const char *path, const char *expected_rv,
                                  const gp_kv_t *patch, size_t n, const char *create_name,
                                  const struct stat *like, gp_err_t *err) {
        char lockpath[4096 + 8];
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                return gp_err_set(err, GP_ERR_INVALID,
                                  "%s is a directory; give the path of a file in it, e.g. "
                                  "%s/bluegreen.json",
                                  path, path);
        }
        snprintf(lockpath, sizeof(lockpath), "%s.lock", path);
        int lfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        gp_errcode_t rc = GP_ERR_IO;
        if (lfd < 0) {
                dir_error(path, errno, err);
                return GP_ERR_IO;
        }
        while (flock(lfd, LOCK_EX) && errno == EINTR)
                ;
        gp_cm_t *cm = NULL;
        if (create_name && access(path, F_OK) != 0)
                cm = gp_cm_new(create_name, NULL);
        else
                cm = gp_ctlfile_load(path, err);
        if (!cm) {
                rc = create_name ? gp_err_set(err, GP_ERR_NOMEM, "out of memory")
                                 : gp_err_code(err);
                goto out;
        }
        if (expected_rv && strcmp(expected_rv, gp_cm_resource_version(cm))) {
                rc = gp_err_set(err, GP_ERR_CONFLICT, "%s: resourceVersion is %s, not %s",
                                path, gp_cm_resource_version(cm), expected_rv);
                goto out;
        }
        for (size_t i = 0; i < n; i++)
                if (gp_cm_set(cm, patch[i].key, patch[i].value)) {
                        rc = gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                        goto out;
                }
        /* Every writer bumps the resourceVersion (an integer here). */
        int64_t rv = 0;
        const char *why, *cur = gp_cm_resource_version(cm);
        if (gp_parse_i64(cur, strlen(cur), &rv, &why) || rv < 0)
                rv = 0;
        char rvs[24];
        snprintf(rvs, sizeof(rvs), "%lld", (long long)rv + 1);
        gp_cm_set_resource_version(cm, rvs);
        char *text = gp_cm_render(cm);
        if (!text)
                rc = gp_err_set(err, GP_ERR_NOMEM, "out of memory");
        else if (write_file(path, text, like, err) == 0)
                rc = GP_OK;
        free(text);
out:
        gp_cm_destroy(cm);
        flock(lfd, LOCK_UN);
        close(lfd);
        return rc;
}

gp_errcode_t gp_ctlfile_update(const char *path, const char *expected_rv, const gp_kv_t *patch,
                               size_t n, const char *create_name, gp_err_t *err) {
        return locked_update(path, expected_rv, patch, n, create_name, NULL, err);
}

static gp_errcode_t f_write(void *be, const char *expected_rv, const gp_kv_t *patch, size_t n,
                            gp_err_t *err) {
        ctlfile_t *f = be;
        return locked_update(f->path, expected_rv, patch, n, NULL, NULL, err);
}

static void f_destroy(void *be) {
        ctlfile_t *f = be;
        if (f) {
                free(f->path);
                free(f);
        }
}

static const char *f_describe(void *be) {
        return ((ctlfile_t *)be)->path;
}

/* The map as `gate-proxy init` writes it: exactly data. */
static gp_errcode_t f_create(void *be, const gp_kv_t *data, size_t n, bool replace,
                             gp_err_t *err) {
        ctlfile_t *f = be;
        struct stat st;
        if (stat(f->path, &st) == 0 && S_ISDIR(st.st_mode)) {
                return gp_err_set(err, GP_ERR_INVALID,
                                  "%s is a directory; give the path of a file in it, e.g. "
                                  "%s/bluegreen.json",
                                  f->path, f->path);
        }
        bool had = stat(f->path, &st) == 0;
        if (had) {
                if (!replace) {
                        return gp_err_set(err, GP_ERR_CONFLICT, "%s exists", f->path);
                }
                unlink(f->path);
        }
        /* Written anew, with the mode and owner of the file it replaces,
         * named after the file (orders-configmap.json: orders-configmap). */
        char name[256];
        const char *base = strrchr(f->path, '/');
        base = base ? base + 1 : f->path;
        size_t len = strlen(base);
        if (len > 5 && !strcmp(base + len - 5, ".json"))
                len -= 5;
        snprintf(name, sizeof(name), "%.*s", (int)(len < 255 ? len : 255), base);
        return locked_update(f->path, NULL, data, n, *name ? name : "gate-proxy-configmap",
                             had ? &st : NULL, err);
}

static const gp_ctl_ops_t file_ops = {
        .read = f_read,
        .write = f_write,
        .destroy = f_destroy,
        .describe = f_describe,
        .create = f_create,
        .cli_cas = false,
};

gp_ctl_t *gp_ctl_new_file(const char *path) {
        ctlfile_t *f = calloc(1, sizeof(*f));
        if (!f || !(f->path = strdup(path))) {
                free(f);
                return NULL;
        }
        return gp_ctl_new(&file_ops, f);
}
