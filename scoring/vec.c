/* vec.c -- the out-of-line growth of lt_vec.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_vec.h"

#include <stdint.h>

#include "lt_mem.h"

int lt__vec_grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap ? *cap : LT_VEC_MIN_CAP;
    void *q;

    while (n < need)
        n = n > SIZE_MAX / 2 ? need : 2 * n;
    q = lt_reallocarray(*p, n, size);
    if (q == NULL)
        return LT_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}
