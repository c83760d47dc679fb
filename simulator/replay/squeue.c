/* squeue.c -- the replay's queue with a min-request segment tree per priority (squeue.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "replay/squeue.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"

_Static_assert(SQ_GROUP == 8, "sq_level.active holds a group's bits in one byte");

static const struct lt_res none = {HUGE_VAL, HUGE_VAL, HUGE_VAL};

static struct lt_res rmin(const struct lt_res *a, const struct lt_res *b)
{
    struct lt_res r = *a;
    if (b->cpu < r.cpu)
        r.cpu = b->cpu;
    if (b->mem < r.mem)
        r.mem = b->mem;
    if (b->disk < r.disk)
        r.disk = b->disk;
    return r;
}

static bool fits(const struct lt_res *req, const struct lt_res *f)
{
    return req->cpu <= f->cpu && req->mem <= f->mem && req->disk <= f->disk;
}

int sq_init(struct sq *q, unsigned n_prio, sq_moved_fn moved, void *ctx)
{
    memset(q, 0, sizeof(*q));
    q->lv = lt_calloc(n_prio, sizeof(*q->lv));
    if (!q->lv)
        return -1;
    q->n_prio = n_prio;
    q->moved = moved;
    q->ctx = ctx;
    return 0;
}

void sq_free(struct sq *q)
{
    for (unsigned p = 0; p < q->n_prio && q->lv; p++) {
        lt_free(q->lv[p].item);
        lt_free(q->lv[p].req);
        lt_free(q->lv[p].active);
        lt_free(q->lv[p].mn);
    }
    lt_free(q->lv);
    memset(q, 0, sizeof(*q));
}

/* The minimum of group g's active requests. */
static struct lt_res group_min(const struct sq_level *L, uint32_t g)
{
    struct lt_res m = none;
    for (unsigned bits = L->active[g]; bits != 0; bits &= bits - 1) {
        uint32_t s = g * SQ_GROUP + (uint32_t)__builtin_ctz(bits);
        m = rmin(&m, &L->req[s]);
    }
    return m;
}

/* Group g's leaf is v: the path to the root follows. */
static void update(struct sq_level *L, uint32_t g, const struct lt_res *v)
{
    size_t k = L->cap / SQ_GROUP + g;
    L->mn[k] = *v;
    for (k /= 2; k >= 1; k /= 2)
        L->mn[k] = rmin(&L->mn[2 * k], &L->mn[2 * k + 1]);
}

/* The tree over groups [0, cap / SQ_GROUP), from the slots' requests and bits. */
static void tree_build(struct sq_level *L)
{
    size_t leaves = L->cap / SQ_GROUP;
    for (size_t g = 0; g < leaves; g++)
        L->mn[leaves + g] = group_min(L, (uint32_t)g);
    for (size_t k = leaves - 1; k >= 1; k--)
        L->mn[k] = rmin(&L->mn[2 * k], &L->mn[2 * k + 1]);
}

/* Grows L to cap slots in place (lt_reallocarray: the requests of slots never activated stay
 * untouched memory), then rebuilds the tree. Not lt_vec.h: four parallel arrays grow to one
 * capacity together, and the tree over them is rebuilt for it. */
static int grow(struct sq_level *L, uint32_t cap)
{
    uint32_t *item = lt_reallocarray(L->item, (size_t)cap, sizeof(*item));
    if (!item)
        return -1;
    L->item = item;
    struct lt_res *req = lt_reallocarray(L->req, (size_t)cap, sizeof(*req));
    if (!req)
        return -1;
    L->req = req;
    uint8_t *active = lt_reallocarray(L->active, cap / SQ_GROUP, 1);
    if (!active)
        return -1;
    memset(active + L->cap / SQ_GROUP, 0, (cap - L->cap) / SQ_GROUP);
    L->active = active;
    struct lt_res *mn = lt_reallocarray(NULL, 2 * (size_t)(cap / SQ_GROUP), sizeof(*mn));
    if (!mn)
        return -1;
    lt_free(L->mn);
    L->mn = mn;
    L->cap = cap;
    tree_build(L);
    return 0;
}

/* Drops L's released slots into new arrays of cap slots (>= the slots kept). */
static int compact(struct sq *q, struct sq_level *L, uint32_t cap)
{
    uint32_t *item = lt_reallocarray(NULL, cap, sizeof(*item));
    struct lt_res *req = lt_reallocarray(NULL, cap, sizeof(*req));
    uint8_t *active = lt_calloc(cap / SQ_GROUP, 1);
    struct lt_res *mn = lt_reallocarray(NULL, 2 * (size_t)(cap / SQ_GROUP), sizeof(*mn));
    if (!item || !req || !active || !mn) {
        lt_free(item);
        lt_free(req);
        lt_free(active);
        lt_free(mn);
        return -1;
    }
    uint32_t n = 0;
    for (uint32_t s = 0; s < L->n; s++) {
        if (L->item[s] == SQ_NONE)
            continue;
        item[n] = L->item[s];
        if ((L->active[s / SQ_GROUP] >> (s % SQ_GROUP)) & 1) {
            req[n] = L->req[s];
            active[n / SQ_GROUP] |= (uint8_t)(1u << (n % SQ_GROUP));
        }
        if (n != s && q->moved)
            q->moved(q->ctx, item[n], n);
        n++;
    }
    lt_free(L->item);
    lt_free(L->req);
    lt_free(L->active);
    lt_free(L->mn);
    L->item = item;
    L->req = req;
    L->active = active;
    L->mn = mn;
    L->n = n;
    L->cap = cap;
    L->released = 0;
    tree_build(L);
    return 0;
}

int sq_add(struct sq *q, unsigned p, uint32_t item, uint32_t *slot)
{
    struct sq_level *L = &q->lv[p];
    if (L->n == L->cap) {
        bool compacting = L->released >= L->n / 2 && L->n > 0;
        uint32_t keep = compacting ? L->n - L->released : L->n;
        uint32_t cap = L->cap ? L->cap : 64;
        while (cap < keep + 1 || (!compacting && cap <= L->n))
            cap *= 2;
        if (compacting && cap > 64 && keep * 4 < cap)
            cap /= 2;
        if ((compacting ? compact(q, L, cap) : grow(L, cap)) != 0)
            return -1;
    }
    *slot = L->n++;
    L->item[*slot] = item;
    return 0;
}

void sq_activate(struct sq *q, unsigned p, uint32_t slot, const struct lt_res *req)
{
    struct sq_level *L = &q->lv[p];
    uint32_t g = slot / SQ_GROUP;
    L->req[slot] = *req;
    L->active[g] |= (uint8_t)(1u << (slot % SQ_GROUP));
    struct lt_res v = rmin(&L->mn[L->cap / SQ_GROUP + g], req);
    update(L, g, &v);
    q->active++;
}

void sq_deactivate(struct sq *q, unsigned p, uint32_t slot)
{
    struct sq_level *L = &q->lv[p];
    uint32_t g = slot / SQ_GROUP;
    L->active[g] &= (uint8_t) ~(1u << (slot % SQ_GROUP));
    struct lt_res v = group_min(L, g);
    update(L, g, &v);
    q->active--;
}

void sq_release(struct sq *q, unsigned p, uint32_t slot)
{
    q->lv[p].item[slot] = SQ_NONE;
    q->lv[p].released++;
}

/* The first active slot >= from of the groups [lo, hi) under node whose request fits f. A
 * group's minimum may fit where none of its requests does: the search then goes on. */
static uint32_t find(const struct sq_level *L, size_t node, uint32_t lo, uint32_t hi, uint32_t from,
                     const struct lt_res *f)
{
    if ((size_t)hi * SQ_GROUP <= from || !fits(&L->mn[node], f))
        return SQ_NONE;
    if (hi - lo == 1) {
        unsigned bits = L->active[lo];
        if (lo * SQ_GROUP < from)
            bits &= ~0u << (from - lo * SQ_GROUP);
        for (; bits != 0; bits &= bits - 1) {
            uint32_t s = lo * SQ_GROUP + (uint32_t)__builtin_ctz(bits);
            if (fits(&L->req[s], f))
                return s;
        }
        return SQ_NONE;
    }
    uint32_t mid = lo + (hi - lo) / 2;
    uint32_t r = find(L, 2 * node, lo, mid, from, f);
    return r != SQ_NONE ? r : find(L, 2 * node + 1, mid, hi, from, f);
}

uint32_t sq_find(const struct sq *q, unsigned p, uint32_t from, const struct lt_res *f)
{
    const struct sq_level *L = &q->lv[p];
    if (L->cap == 0)
        return SQ_NONE;
    return find(L, 1, 0, L->cap / SQ_GROUP, from, f);
}

uint32_t sq_item(const struct sq *q, unsigned p, uint32_t slot)
{
    return q->lv[p].item[slot];
}

bool sq_slot_fits(const struct sq *q, unsigned p, uint32_t slot, const struct lt_res *free)
{
    const struct sq_level *L = &q->lv[p];
    return slot < L->n && ((L->active[slot / SQ_GROUP] >> (slot % SQ_GROUP)) & 1) &&
           fits(&L->req[slot], free);
}

struct lt_res sq_min(const struct sq *q, unsigned p)
{
    const struct sq_level *L = &q->lv[p];
    return L->cap ? L->mn[1] : none;
}
