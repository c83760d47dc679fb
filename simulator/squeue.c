/* squeue.c -- the replay's queue with a min-request segment tree per priority (squeue.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "squeue.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
    q->lv = calloc(n_prio, sizeof(*q->lv));
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
        free(q->lv[p].item);
        free(q->lv[p].mn);
    }
    free(q->lv);
    memset(q, 0, sizeof(*q));
}

static void update(struct sq_level *L, uint32_t slot, const struct lt_res *v)
{
    size_t k = L->cap + slot;
    L->mn[k] = *v;
    for (k /= 2; k >= 1; k /= 2)
        L->mn[k] = rmin(&L->mn[2 * k], &L->mn[2 * k + 1]);
}

/* Rebuilds L with capacity cap (>= the slots kept), dropping released slots when compact. */
static int rebuild(struct sq *q, struct sq_level *L, uint32_t cap, bool compact)
{
    uint32_t *item = malloc((size_t)cap * sizeof(*item));
    struct lt_res *mn = malloc(2 * (size_t)cap * sizeof(*mn));
    if (!item || !mn) {
        free(item);
        free(mn);
        return -1;
    }
    uint32_t n = 0;
    for (size_t k = 0; k < 2 * (size_t)cap; k++)
        mn[k] = none;
    for (uint32_t s = 0; s < L->n; s++) {
        if (compact && L->item[s] == SQ_NONE)
            continue;
        item[n] = L->item[s];
        mn[cap + n] = L->mn[L->cap + s];
        if (n != s && q->moved)
            q->moved(q->ctx, item[n], n);
        n++;
    }
    for (size_t k = cap - 1; k >= 1; k--)
        mn[k] = rmin(&mn[2 * k], &mn[2 * k + 1]);
    free(L->item);
    free(L->mn);
    L->item = item;
    L->mn = mn;
    L->n = n;
    L->cap = cap;
    if (compact)
        L->released = 0;
    return 0;
}

int sq_add(struct sq *q, unsigned p, uint32_t item, uint32_t *slot)
{
    struct sq_level *L = &q->lv[p];
    if (L->n == L->cap) {
        bool compact = L->released >= L->n / 2 && L->n > 0;
        uint32_t keep = compact ? L->n - L->released : L->n;
        uint32_t cap = L->cap ? L->cap : 64;
        while (cap < keep + 1 || (!compact && cap <= L->n))
            cap *= 2;
        if (compact && cap > 64 && keep * 4 < cap)
            cap /= 2;
        if (rebuild(q, L, cap, compact) != 0)
            return -1;
    }
    *slot = L->n++;
    L->item[*slot] = item;
    return 0;
}

void sq_activate(struct sq *q, unsigned p, uint32_t slot, const struct lt_res *req)
{
    update(&q->lv[p], slot, req);
    q->active++;
}

void sq_deactivate(struct sq *q, unsigned p, uint32_t slot)
{
    update(&q->lv[p], slot, &none);
    q->active--;
}

void sq_release(struct sq *q, unsigned p, uint32_t slot)
{
    q->lv[p].item[slot] = SQ_NONE;
    q->lv[p].released++;
}

static uint32_t find(const struct sq_level *L, size_t node, uint32_t lo, uint32_t hi, uint32_t from,
                     const struct lt_res *f)
{
    if (hi <= from || lo >= L->n || !fits(&L->mn[node], f))
        return SQ_NONE;
    if (hi - lo == 1)
        return lo;
    uint32_t mid = lo + (hi - lo) / 2;
    uint32_t r = find(L, 2 * node, lo, mid, from, f);
    return r != SQ_NONE ? r : find(L, 2 * node + 1, mid, hi, from, f);
}

uint32_t sq_find(const struct sq *q, unsigned p, uint32_t from, const struct lt_res *f)
{
    const struct sq_level *L = &q->lv[p];
    if (L->cap == 0)
        return SQ_NONE;
    return find(L, 1, 0, L->cap, from, f);
}

uint32_t sq_item(const struct sq *q, unsigned p, uint32_t slot)
{
    return q->lv[p].item[slot];
}

struct lt_res sq_min(const struct sq *q, unsigned p)
{
    const struct sq_level *L = &q->lv[p];
    return L->cap ? L->mn[1] : none;
}
