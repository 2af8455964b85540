/* k8s/file.h: reading a small file whole (a kubeconfig, a token, a
 * ConfigMap document), with a size cap so nothing is sized by what an
 * untrusted file claims. May use libc only. */
#ifndef GP_K8S_FILE_H
#define GP_K8S_FILE_H

#include <stddef.h>

/* Reads the regular file at path (symlinks followed), at most max bytes,
 * NUL-terminated; *len is its length. NULL on failure with "path: reason"
 * in err (err may be NULL); errno then tells why (ENOENT: absent, EFBIG:
 * over max). The caller frees. */
char *gp_file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen);

#endif
