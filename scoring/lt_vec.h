/* lt_vec.h -- growable arrays: a caller's (pointer, capacity) pair grown through lt_mem.
 *
 * A growable array in lotus is three fields of the owner, `struct x *a; size_t n, cap;`, so
 * it is typed and indexed as a plain array. Before appending, the owner reserves room:
 *
 *     if (LT_VEC_RESERVE(e->rec, e->cap_rec, e->n_rec + 1) != 0)
 *         return oom(e);
 *     e->rec[e->n_rec++] = r;
 *
 * The check is inline (a compare on the hot path); the growth, by doubling from
 * LT_VEC_MIN_CAP or to `need` if more, is out of line in vec.c. On failure the array and its
 * capacity are untouched, so the owner frees it as usual. The element size comes from the
 * pointer's type (LT_VEC_RESERVE); lt_vec_reserve takes it explicitly.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_VEC_H
#define LT_VEC_H

#include <stddef.h>

#include "lt_err.h"

#define LT_VEC_MIN_CAP 16

/* Out of line: grows *p to hold need elements of size bytes (need > *cap); 0 or LT_ENOMEM
 * (also when the size overflows). */
LT_MUST_CHECK int lt__vec_grow(void **p, size_t *cap, size_t need, size_t size);

/* Makes *p (an array of *cap elements of size bytes, NULL when *cap is 0) hold at least need
 * elements. Returns 0, or LT_ENOMEM with *p and *cap unchanged. */
LT_MUST_CHECK static inline int lt_vec_reserve(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    return lt__vec_grow(p, cap, need, size);
}

/* lt_vec_reserve for an lvalue array pointer `a` and its size_t capacity `cap`. */
#define LT_VEC_RESERVE(a, cap, need) lt_vec_reserve((void **)&(a), &(cap), (need), sizeof(*(a)))

#endif
