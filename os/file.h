/* os/file.h: reading a small file whole (a configuration, a kubeconfig,
 * a token, a ConfigMap document, a schema, a manifest), with a size cap
 * so nothing is sized by what an untrusted file claims. May use libc and
 * gate/ only. */
#ifndef GP_OS_FILE_H
#define GP_OS_FILE_H

#include <stddef.h>

#include "gate/error.h"

/* Reads the file at path (symlinks followed), at most max bytes,
 * NUL-terminated; *len is its length. A regular file larger than max is
 * refused by its size before any read; anything else (a pipe, a FIFO,
 * /dev/stdin) is read up to max + 1 bytes and refused past max. NULL on
 * failure with "path: reason" in err (err may be NULL; GP_ERR_NOT_FOUND
 * when it is absent, GP_ERR_IO otherwise); errno then
 * tells why (ENOENT: absent, EISDIR: a directory, EFBIG: over max). The
 * caller frees. */
char *gp_file_read(const char *path, size_t max, size_t *len, gp_err_t *err);

#endif
