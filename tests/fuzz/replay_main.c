/* tests/fuzz/replay_main.c: a main() for builds without libFuzzer (gcc, or
 * clang without GP_FUZZ): feeds each file named on the command line, or
 * each file in a named directory (names starting with '.' skipped, sorted
 * for a stable order), to LLVMFuzzerTestOneInput. Each input sits in a heap
 * buffer of exactly its size, so sanitizers see reads past its end.
 * Depends on libc and POSIX (dirent, stat) only; linked with one target. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 0 on success, -1 on a read error (reported). */
static int replay_file(const char *path) {
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "replay: %s: cannot open\n", path);
                return -1;
        }
        size_t cap = 4096, len = 0;
        uint8_t *buf = malloc(cap);
        int rc = 0;
        while (buf) {
                size_t n = fread(buf + len, 1, cap - len, f);
                len += n;
                if (len < cap)
                        break;
                uint8_t *nb = realloc(buf, cap * 2);
                if (!nb) {
                        free(buf);
                        buf = NULL;
                        break;
                }
                buf = nb;
                cap *= 2;
        }
        if (!buf || ferror(f)) {
                fprintf(stderr, "replay: %s: read error\n", path);
                rc = -1;
        } else {
                /* Exactly len bytes (malloc(0) may return NULL: use 1). */
                uint8_t *exact = malloc(len ? len : 1);
                if (!exact) {
                        fprintf(stderr, "replay: %s: out of memory\n", path);
                        rc = -1;
                } else {
                        memcpy(exact, buf, len);
                        LLVMFuzzerTestOneInput(exact, len);
                        free(exact);
                }
        }
        free(buf);
        fclose(f);
        return rc;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file in dir; adds to *count. -1 on any error. */
static int replay_dir(const char *dir, int *count) {
        DIR *d = opendir(dir);
        char **names = NULL;
        size_t n = 0, cap = 0;
        int rc = 0;
        if (!d) {
                fprintf(stderr, "replay: %s: cannot open directory\n", dir);
                return -1;
        }
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
                if (e->d_name[0] == '.')
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 64;
                        char **nn = realloc(names, cap * sizeof *names);
                        if (!nn) {
                                rc = -1;
                                break;
                        }
                        names = nn;
                }
                size_t l = strlen(dir) + strlen(e->d_name) + 2;
                names[n] = malloc(l);
                if (!names[n]) {
                        rc = -1;
                        break;
                }
                snprintf(names[n], l, "%s/%s", dir, e->d_name);
                n++;
        }
        closedir(d);
        if (n)
                qsort(names, n, sizeof *names, cmp_str);
        for (size_t k = 0; k < n; k++) {
                struct stat st;
                if (rc == 0 && stat(names[k], &st) == 0 && S_ISREG(st.st_mode)) {
                        if (replay_file(names[k]) != 0)
                                rc = -1;
                        else
                                (*count)++;
                }
                free(names[k]);
        }
        free(names);
        if (rc != 0)
                fprintf(stderr, "replay: %s: error while reading the directory\n", dir);
        return rc;
}

int main(int argc, char **argv) {
        int count = 0, failed = 0;
        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return 2;
        }
        for (int k = 1; k < argc; k++) {
                struct stat st;
                if (stat(argv[k], &st) != 0) {
                        fprintf(stderr, "replay: %s: not found\n", argv[k]);
                        failed = 1;
                } else if (S_ISDIR(st.st_mode)) {
                        if (replay_dir(argv[k], &count) != 0)
                                failed = 1;
                } else if (replay_file(argv[k]) != 0) {
                        failed = 1;
                } else {
                        count++;
                }
        }
        printf("replay: %d input(s)\n", count);
        if (count == 0) {
                fprintf(stderr, "replay: no inputs\n");
                return 1;
        }
        return failed;
}
