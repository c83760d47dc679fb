/* cells.c -- a set of machines kept sorted by index, with their free vectors and a bounding
 * box of them: the building block of the grid (grid.c) and sum-of-squares (sos.c) indexes.
 *
 * Each member's free vector is stored beside its index (kept equal to the cluster's, checked
 * by lt__cell_check), so a scan reads one contiguous array instead of chasing machines across
 * the cluster. Sorted members let a scan find the lowest-index machine of a tie by scanning in
 * order, and let a point box (every member has the same free vector, hence the same score)
 * answer in O(1) with its first member. An index-ordered cell shifts the shorter side of a
 * member that comes or goes: the arrays keep free entries before the first member (`off`),
 * so that the members that leave a crowded cell in index order (the empty machines, as a
 * first or best fit fills them) each cost O(1), not a move of the whole cell. The box grows on
 * insert; when a member on its boundary leaves, a small cell recomputes it at once, a large one
 * once more members have left than remain, so it stays a valid bound at amortised O(1) per removal
 * (a loose box is still a correct bound; it only prunes less).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <string.h>

#include "lt_mem.h"

/* Cells of at most this many members recompute their box as soon as a member on its boundary
 * leaves (O(n), cheap); larger ones wait until more members left than remain. */
#define EAGER_BOX 64

/* The allocations behind mem and f (no arithmetic on a cell that has none). */
static uint32_t *mem_base(const struct lt__cell *cl)
{
    return cl->off > 0 ? cl->mem - cl->off : cl->mem;
}

static struct lt_res *f_base(const struct lt__cell *cl)
{
    return cl->off > 0 ? cl->f - cl->off : cl->f;
}

int lt__cell_reserve(struct lt__cell *cl)
{
    uint32_t cap;
    uint32_t *t;
    struct lt_res *f;

    if (cl->off + cl->n < cl->cap)
        return 0;
    if (cl->off > 0 && cl->off >= cl->cap / 4) {
        /* A quarter or more of the room is before the members: move them to the front
         * (O(n), after at least n/4 removals at the front since the room was made). */
        uint32_t *m0 = mem_base(cl);
        struct lt_res *f0 = f_base(cl);

        memmove(m0, cl->mem, (size_t)cl->n * sizeof(*cl->mem));
        memmove(f0, cl->f, (size_t)cl->n * sizeof(*cl->f));
        cl->mem = m0;
        cl->f = f0;
        cl->off = 0;
        return 0;
    }
    cap = cl->cap ? 2 * cl->cap : 4;
    t = lt_reallocarray(mem_base(cl), cap, sizeof(*t));
    if (t == NULL)
        return LT_ENOMEM;
    cl->mem = t + cl->off;
    f = lt_reallocarray(f_base(cl), cap, sizeof(*f));
    if (f == NULL)
        return LT_ENOMEM; /* mem grew, f did not: cap is unchanged, so nothing is wrong */
    cl->f = f + cl->off;
    if (cl->heap) {
        double *k = lt_reallocarray(cl->key, cap, sizeof(*k));
        if (k == NULL)
            return LT_ENOMEM; /* likewise */
        cl->key = k;
    }
    cl->cap = cap;
    return 0;
}

/* Position of the first member >= i (binary search). */
static uint32_t lower_bound(const struct lt__cell *cl, uint32_t i)
{
    uint32_t lo = 0, hi = cl->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cl->mem[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void box_extend(struct lt__cell *cl, const struct lt_res *f)
{
    if (f->cpu < cl->lo.cpu)
        cl->lo.cpu = f->cpu;
    if (f->mem < cl->lo.mem)
        cl->lo.mem = f->mem;
    if (f->disk < cl->lo.disk)
        cl->lo.disk = f->disk;
    if (f->cpu > cl->hi.cpu)
        cl->hi.cpu = f->cpu;
    if (f->mem > cl->hi.mem)
        cl->hi.mem = f->mem;
    if (f->disk > cl->hi.disk)
        cl->hi.disk = f->disk;
}

void lt__cell_insert(struct lt__cell *cl, uint32_t i, const struct lt_res *f)
{
    uint32_t pos;

    assert(cl->off + cl->n < cl->cap);
    pos = lower_bound(cl, i);
    assert(pos == cl->n || cl->mem[pos] != i);
    if (cl->off > 0 && pos < cl->n - pos) {
        /* the members before pos move one entry towards the front */
        memmove(cl->mem - 1, cl->mem, (size_t)pos * sizeof(*cl->mem));
        memmove(cl->f - 1, cl->f, (size_t)pos * sizeof(*cl->f));
        cl->mem--;
        cl->f--;
        cl->off--;
    } else {
        memmove(cl->mem + pos + 1, cl->mem + pos, (size_t)(cl->n - pos) * sizeof(*cl->mem));
        memmove(cl->f + pos + 1, cl->f + pos, (size_t)(cl->n - pos) * sizeof(*cl->f));
    }
    cl->mem[pos] = i;
    cl->f[pos] = *f;
    cl->min_i = cl->mem[0];
    if (cl->n++ == 0) {
        cl->lo = cl->hi = *f;
        cl->n_removed = 0;
    } else {
        box_extend(cl, f);
    }
}

static void box_recompute(struct lt__cell *cl)
{
    cl->lo = cl->hi = cl->f[0];
    for (uint32_t k = 1; k < cl->n; k++)
        box_extend(cl, &cl->f[k]);
    cl->n_removed = 0;
}

/* Does f touch the box's boundary, so that removing it may shrink the box? */
static bool on_boundary(const struct lt__cell *cl, const struct lt_res *f)
{
    return !(cl->lo.cpu < f->cpu) || !(cl->lo.mem < f->mem) || !(cl->lo.disk < f->disk) ||
           !(f->cpu < cl->hi.cpu) || !(f->mem < cl->hi.mem) || !(f->disk < cl->hi.disk);
}

/* Recomputes the box after a member on its boundary left, when that is cheap (a small cell)
 * or overdue (more removals than members since the last recomputation). */
static void box_after_leave(struct lt__cell *cl, bool boundary)
{
    if (cl->n == 0)
        cl->n_removed = 0;
    else if ((boundary && cl->n <= EAGER_BOX) || ++cl->n_removed > cl->n)
        box_recompute(cl);
}

void lt__cell_remove(struct lt__cell *cl, uint32_t i)
{
    uint32_t pos = lower_bound(cl, i);
    bool boundary;

    assert(pos < cl->n && cl->mem[pos] == i);
    boundary = on_boundary(cl, &cl->f[pos]);
    if (pos < cl->n - pos - 1) {
        /* the members before pos move one entry towards the end */
        memmove(cl->mem + 1, cl->mem, (size_t)pos * sizeof(*cl->mem));
        memmove(cl->f + 1, cl->f, (size_t)pos * sizeof(*cl->f));
        cl->mem++;
        cl->f++;
        cl->off++;
    } else {
        memmove(cl->mem + pos, cl->mem + pos + 1, (size_t)(cl->n - pos - 1) * sizeof(*cl->mem));
        memmove(cl->f + pos, cl->f + pos + 1, (size_t)(cl->n - pos - 1) * sizeof(*cl->f));
    }
    cl->n--;
    cl->min_i = cl->n > 0 ? cl->mem[0] : UINT32_MAX;
    box_after_leave(cl, boundary);
}

void lt__cell_update(struct lt__cell *cl, uint32_t i, const struct lt_res *f)
{
    uint32_t pos = lower_bound(cl, i);
    bool boundary;

    assert(pos < cl->n && cl->mem[pos] == i);
    boundary = on_boundary(cl, &cl->f[pos]);
    cl->f[pos] = *f;
    box_extend(cl, f);
    box_after_leave(cl, boundary);
}

bool lt__cell_is_point(const struct lt__cell *cl)
{
    return !(cl->lo.cpu < cl->hi.cpu) && !(cl->lo.mem < cl->hi.mem) && !(cl->lo.disk < cl->hi.disk);
}

int lt__cell_check(const struct lt__cell *cl, const struct lt_cluster *c, const char *what,
                   struct lt_err *err)
{
    if (cl->off > cl->cap || cl->n > cl->cap - cl->off)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: %u members after %u free entries exceed capacity %u", what,
                          (unsigned)cl->n, (unsigned)cl->off, (unsigned)cl->cap);
    for (uint32_t k = 0; k < cl->n; k++) {
        struct lt_res f;
        if (k > 0 && cl->mem[k - 1] >= cl->mem[k])
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: members not strictly increasing at %u",
                              what, (unsigned)k);
        if (cl->mem[k] >= c->n)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: member %u out of range", what,
                              (unsigned)cl->mem[k]);
        f = lt__free(&c->m[cl->mem[k]]);
        if (!lt__res_ge(&f, &cl->f[k]) || !lt__res_ge(&cl->f[k], &f))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: stored free vector of machine %u is stale",
                              what, (unsigned)cl->mem[k]);
        if (!lt__res_ge(&f, &cl->lo) || !lt__res_ge(&cl->hi, &f))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: machine %u lies outside the cell's box",
                              what, (unsigned)cl->mem[k]);
    }
    if (cl->n > 0 && cl->min_i != cl->mem[0])
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: lowest member %u, recorded %u", what,
                          (unsigned)cl->mem[0], (unsigned)cl->min_i);
    return 0;
}

void lt__cell_release(struct lt__cell *cl)
{
    bool heap = cl->heap;

    lt_free(mem_base(cl));
    lt_free(f_base(cl));
    lt_free(cl->key);
    memset(cl, 0, sizeof(*cl));
    cl->heap = heap;
}

/* ---- heap cells ---- */

static void heap_put(struct lt__cell *cl, uint32_t k, uint32_t i, const struct lt_res *f,
                     double key, uint32_t *pos)
{
    cl->mem[k] = i;
    cl->f[k] = *f;
    cl->key[k] = key;
    pos[i] = k;
}

/* Moves the entry (i, f, key) from a hole at k up or down to its place. */
static void heap_place(struct lt__cell *cl, uint32_t k, uint32_t i, const struct lt_res *f,
                       double key, uint32_t *pos)
{
    while (k > 0 && cl->key[(k - 1) / 2] < key) {
        uint32_t p = (k - 1) / 2;
        heap_put(cl, k, cl->mem[p], &cl->f[p], cl->key[p], pos);
        k = p;
    }
    for (;;) {
        uint32_t c = 2 * k + 1;
        if (c >= cl->n)
            break;
        if (c + 1 < cl->n && cl->key[c + 1] > cl->key[c])
            c++;
        if (!(cl->key[c] > key))
            break;
        heap_put(cl, k, cl->mem[c], &cl->f[c], cl->key[c], pos);
        k = c;
    }
    heap_put(cl, k, i, f, key, pos);
}

static void min_recompute(struct lt__cell *cl)
{
    cl->min_i = UINT32_MAX;
    for (uint32_t k = 0; k < cl->n; k++) {
        if (cl->mem[k] < cl->min_i)
            cl->min_i = cl->mem[k];
    }
}

void lt__cell_heap_insert(struct lt__cell *cl, uint32_t i, const struct lt_res *f, double key,
                          uint32_t *pos)
{
    assert(cl->heap && cl->n < cl->cap);
    if (cl->n++ == 0) {
        cl->lo = cl->hi = *f;
        cl->n_removed = 0;
        cl->min_i = i;
    } else {
        box_extend(cl, f);
        if (i < cl->min_i)
            cl->min_i = i;
    }
    heap_place(cl, cl->n - 1, i, f, key, pos);
}

void lt__cell_heap_remove(struct lt__cell *cl, uint32_t i, uint32_t *pos)
{
    uint32_t k = pos[i], last;
    bool boundary;

    assert(cl->heap && k < cl->n && cl->mem[k] == i);
    boundary = on_boundary(cl, &cl->f[k]);
    last = --cl->n;
    if (k < last) {
        struct lt_res f = cl->f[last];
        heap_place(cl, k, cl->mem[last], &f, cl->key[last], pos);
    }
    if (cl->n > 0 && i == cl->min_i)
        min_recompute(cl);
    box_after_leave(cl, boundary);
}

void lt__cell_heap_update(struct lt__cell *cl, uint32_t i, const struct lt_res *f, double key,
                          uint32_t *pos)
{
    uint32_t k = pos[i];
    bool boundary;

    assert(cl->heap && k < cl->n && cl->mem[k] == i);
    boundary = on_boundary(cl, &cl->f[k]);
    heap_place(cl, k, i, f, key, pos);
    box_extend(cl, f);
    box_after_leave(cl, boundary);
}

int lt__cell_heap_check(const struct lt__cell *cl, const struct lt_cluster *c, const uint32_t *pos,
                        double (*key_of)(const void *ctx, const struct lt_res *f), const void *ctx,
                        const char *what, struct lt_err *err)
{
    uint32_t min_i = UINT32_MAX;

    if (!cl->heap || cl->off != 0 || cl->n > cl->cap)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: not a heap cell, or %u members exceed %u",
                          what, (unsigned)cl->n, (unsigned)cl->cap);
    for (uint32_t k = 0; k < cl->n; k++) {
        uint32_t i = cl->mem[k];
        struct lt_res f;
        double key;

        if (i >= c->n || pos[i] != k)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: member %u at %u misplaced", what,
                              (unsigned)i, (unsigned)k);
        if (k > 0 && cl->key[(k - 1) / 2] < cl->key[k])
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: heap order broken at %u", what,
                              (unsigned)k);
        f = lt__free(&c->m[i]);
        if (!lt__res_ge(&f, &cl->f[k]) || !lt__res_ge(&cl->f[k], &f))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: stored free vector of machine %u is stale",
                              what, (unsigned)i);
        if (!lt__res_ge(&f, &cl->lo) || !lt__res_ge(&cl->hi, &f))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: machine %u lies outside the cell's box",
                              what, (unsigned)i);
        key = key_of(ctx, &f);
        if (key < cl->key[k] || key > cl->key[k])
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: stored key of machine %u is stale", what,
                              (unsigned)i);
        if (i < min_i)
            min_i = i;
    }
    if (cl->n > 0 && min_i != cl->min_i)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: lowest member %u, recorded %u", what,
                          (unsigned)min_i, (unsigned)cl->min_i);
    return 0;
}
