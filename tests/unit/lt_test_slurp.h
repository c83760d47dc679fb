/* lt_test_slurp.h -- reading a whole fixture file, for the unit tests that compare against
 * files (test_ext_codec.c, test_json_scan.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_TEST_SLURP_H
#define LT_TEST_SLURP_H
#include <stddef.h>
#include <stdio.h>

#include "lt_mem.h"

/* Reads a whole file into a NUL-terminated buffer (owned; lt_free); NULL if unreadable. Needs
 * cmocka (lt_test.h) for its allocation check. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0, got;

    *len = 0;
    if (f == NULL)
        return NULL;
    do {
        if (cap - n < 4096) {
            char *p = lt_reallocarray(buf, cap + 65536, 1);

            assert_non_null(p);
            buf = p;
            cap += 65536;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

#endif
