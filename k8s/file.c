/* k8s/file.c: capped whole-file reads (see k8s/file.h). libc only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s/file.h"

char *gp_file_read(const char *path, size_t max, size_t *len, gp_err_t *err) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), saved = 0;
        struct stat st;
        char *buf = NULL;
        size_t got = 0;

        *len = 0;
        if (fd < 0) {
                saved = errno;
                gp_err_set(err, saved == ENOENT ? GP_ERR_NOT_FOUND : GP_ERR_IO, "%s: %s", path,
                           strerror(saved));
                errno = saved;
                return NULL;
        }
        if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
                gp_err_set(err, GP_ERR_IO, "%s: not a regular file of at most %zu bytes", path,
                           max);
                saved = EFBIG;
                goto out;
        }
        if (!(buf = malloc((size_t)st.st_size + 1))) {
                saved = ENOMEM;
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                goto out;
        }
        while (got < (size_t)st.st_size) {
                ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        saved = errno;
                        gp_err_set(err, GP_ERR_IO, "%s: %s", path, strerror(saved));
                        free(buf);
                        buf = NULL;
                        goto out;
                }
                if (r == 0)
                        break; /* shrank while we read: take what is there */
                got += (size_t)r;
        }
        buf[got] = '\0';
        *len = got;
out:
        close(fd);
        errno = saved;
        return buf;
}
