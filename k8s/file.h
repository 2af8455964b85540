/* k8s/file.h: reading a small file whole (a kubeconfig, a token, a
 * ConfigMap document), with a size cap so nothing is sized by what an
 * untrusted file claims. May use libc and gate/ only. */
#ifndef GP_K8S_FILE_H
#define GP_K8S_FILE_H

#include <stddef.h>

#include "gate/error.h"

/* Reads the regular file at path (symlinks followed), at most max bytes,
 * NUL-terminated; *len is its length. NULL on failure with "path: reason"
 * in err (err may be NULL; GP_ERR_NOT_FOUND when it is absent); errno
 * then tells why (ENOENT: absent, EFBIG: over max). The caller frees. */
char *gp_file_read(const char *path, size_t max, size_t *len, gp_err_t *err);

#endif
