/* os/file.c: capped whole-file reads (os/file.h). libc and POSIX only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/file.h"

char *gp_file_read(const char *path, size_t max, size_t *len, gp_err_t *err) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), saved = 0;
        struct stat st;
        char *buf = NULL;
        size_t got = 0, want;

        *len = 0;
        if (fd < 0) {
                saved = errno;
                gp_err_set(err, saved == ENOENT ? GP_ERR_NOT_FOUND : GP_ERR_IO, "%s: %s", path,
                           strerror(saved));
                errno = saved;
                return NULL;
        }
        if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
                gp_err_set(err, GP_ERR_IO, "%s: %s", path, strerror(EISDIR));
                saved = EISDIR;
                goto out;
        }
        if (fstat(fd, &st) || (S_ISREG(st.st_mode) && (size_t)st.st_size > max)) {
                gp_err_set(err, GP_ERR_IO, "%s: not a regular file of at most %zu bytes", path,
                           max);
                saved = EFBIG;
                goto out;
        }
        /* A regular file: its size; anything else: one byte past max tells
         * a stream that is too long. */
        want = S_ISREG(st.st_mode) ? (size_t)st.st_size : max + 1;
        if (!(buf = malloc(want + 1))) {
                saved = ENOMEM;
                gp_err_set(err, GP_ERR_NOMEM, "out of memory");
                goto out;
        }
        while (got < want) {
                ssize_t r = read(fd, buf + got, want - got);
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
                        break; /* shrank while we read, or the stream ended */
                got += (size_t)r;
        }
        if (got > max) {
                gp_err_set(err, GP_ERR_IO, "%s: larger than %zu bytes", path, max);
                saved = EFBIG;
                free(buf);
                buf = NULL;
                goto out;
        }
        buf[got] = '\0';
        *len = got;
out:
        close(fd);
        errno = saved;
        return buf;
}
