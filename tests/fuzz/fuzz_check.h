/* tests/fuzz/fuzz_check.h: CHECK(c), the fuzz targets' invariant check:
 * when c is false, the file, line and expression on stderr and abort(),
 * which libFuzzer (and the corpus replay) reports as a crash. */
#ifndef GP_TESTS_FUZZ_CHECK_H
#define GP_TESTS_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                              \
        do {                                                                                  \
                if (!(c)) {                                                                   \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__,  \
                                #c);                                                          \
                        abort();                                                              \
                }                                                                             \
        } while (0)

#endif
