/* lt_heap.h -- a binary min-heap over the caller's elements, generated per element type.
 *
 *     LT_HEAP_DEFINE(ev_heap, struct ev, struct sim, ev_less, LT_HEAP_NO_MOVED)
 *
 * defines, all `static inline` in the including file (so the comparison inlines into the
 * sift loops: the replay's completion heap is on its hot path),
 *
 *     struct ev_heap { struct ev *a; size_t n, cap; };      a[0] is the least when n > 0
 *     int  ev_heap_push(struct sim *c, struct ev_heap *h, struct ev x);    0 or LT_ENOMEM
 *     struct ev ev_heap_pop(struct sim *c, struct ev_heap *h);            n > 0
 *     void ev_heap_remove(struct sim *c, struct ev_heap *h, size_t k);    the element at k
 *     void ev_heap_fix(struct sim *c, struct ev_heap *h, size_t k);       a[k] changed
 *     void ev_heap_up / ev_heap_down(c, h, k);                            the sifts
 *     bool ev_heap_ok(struct sim *c, const struct ev_heap *h);            heap order holds
 *     void ev_heap_free(struct ev_heap *h);
 *
 * less(c, x, y) (pointers to two elements) says x goes before y; ties are left in the order
 * the sifts leave them, the textbook one (hole sifts, strict comparisons), so a heap built
 * from the same pushes and pops always pops the same sequence. moved(c, x, k) is called with
 * every element stored at position k (to keep a position in the element's owner, which
 * remove and fix need); LT_HEAP_NO_MOVED does nothing. The array grows through lt_vec.h
 * (lt_mem), so fault injection reaches it; a zeroed struct is an empty heap.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_HEAP_H
#define LT_HEAP_H

#include <stdbool.h>
#include <stddef.h>

#include "lt_mem.h"
#include "lt_vec.h"

/* Every generated function: static inline, and unused ones are no warning (clang warns about an
 * unused static inline function defined in a .c file, which a macro expansion is). */
#define LT__HEAP_FN static inline __attribute__((unused))

#define LT_HEAP_NO_MOVED(c, x, k) ((void)(c), (void)(x), (void)(k))

#define LT_HEAP_DEFINE(name, type, ctx, less, moved)                                               \
    struct name {                                                                                  \
        type *a;                                                                                   \
        size_t n, cap;                                                                             \
    };                                                                                             \
    LT__HEAP_FN void name##_up(ctx *c, struct name *h, size_t k)                                   \
    {                                                                                              \
        type x = h->a[k];                                                                          \
        while (k > 0 && less(c, &x, &h->a[(k - 1) / 2])) {                                         \
            h->a[k] = h->a[(k - 1) / 2];                                                           \
            moved(c, &h->a[k], k);                                                                 \
            k = (k - 1) / 2;                                                                       \
        }                                                                                          \
        h->a[k] = x;                                                                               \
        moved(c, &h->a[k], k);                                                                     \
    }                                                                                              \
    LT__HEAP_FN void name##_down(ctx *c, struct name *h, size_t k)                                 \
    {                                                                                              \
        type x = h->a[k];                                                                          \
        for (;;) {                                                                                 \
            size_t ch = 2 * k + 1;                                                                 \
            if (ch >= h->n)                                                                        \
                break;                                                                             \
            if (ch + 1 < h->n && less(c, &h->a[ch + 1], &h->a[ch]))                                \
                ch++;                                                                              \
            if (!less(c, &h->a[ch], &x))                                                           \
                break;                                                                             \
            h->a[k] = h->a[ch];                                                                    \
            moved(c, &h->a[k], k);                                                                 \
            k = ch;                                                                                \
        }                                                                                          \
        h->a[k] = x;                                                                               \
        moved(c, &h->a[k], k);                                                                     \
    }                                                                                              \
    LT_MUST_CHECK LT__HEAP_FN int name##_push(ctx *c, struct name *h, type x)                      \
    {                                                                                              \
        if (LT_VEC_RESERVE(h->a, h->cap, h->n + 1) != 0)                                           \
            return LT_ENOMEM;                                                                      \
        h->a[h->n] = x;                                                                            \
        name##_up(c, h, h->n++);                                                                   \
        return 0;                                                                                  \
    }                                                                                              \
    LT__HEAP_FN void name##_fix(ctx *c, struct name *h, size_t k)                                  \
    {                                                                                              \
        if (k > 0 && less(c, &h->a[k], &h->a[(k - 1) / 2]))                                        \
            name##_up(c, h, k);                                                                    \
        else                                                                                       \
            name##_down(c, h, k);                                                                  \
    }                                                                                              \
    LT__HEAP_FN void name##_remove(ctx *c, struct name *h, size_t k)                               \
    {                                                                                              \
        if (k == --h->n)                                                                           \
            return;                                                                                \
        h->a[k] = h->a[h->n];                                                                      \
        name##_fix(c, h, k);                                                                       \
    }                                                                                              \
    LT__HEAP_FN type name##_pop(ctx *c, struct name *h)                                            \
    {                                                                                              \
        type top = h->a[0];                                                                        \
        if (--h->n > 0) {                                                                          \
            h->a[0] = h->a[h->n];                                                                  \
            name##_down(c, h, 0);                                                                  \
        }                                                                                          \
        return top;                                                                                \
    }                                                                                              \
    LT__HEAP_FN bool name##_ok(ctx *c, const struct name *h)                                       \
    {                                                                                              \
        for (size_t k = 1; k < h->n; k++)                                                          \
            if (less(c, &h->a[k], &h->a[(k - 1) / 2]))                                             \
                return false;                                                                      \
        return true;                                                                               \
    }                                                                                              \
    LT__HEAP_FN void name##_free(struct name *h)                                                   \
    {                                                                                              \
        lt_free(h->a);                                                                             \
        h->a = NULL;                                                                               \
        h->n = h->cap = 0;                                                                         \
    }                                                                                              \
    struct name

#endif
