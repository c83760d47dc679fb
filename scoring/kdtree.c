/* kdtree.c -- a k-d tree of bounding boxes over the online machines of each configuration,
 * kept exact under placements: the core of epvm's index (boxtree.c); sos.c no longer uses it.
 *
 * Design: per configuration (machines of equal capacity), a tree with a fixed implicit shape,
 * a segment tree over leaves of LT__KD_LEAF machines each (perm[] lists the machines in leaf
 * order). It is built by splitting each range at the median of the dimension (cpu or mem)
 * with the larger spread relative to capacity, so nearby machines share leaves. Every node
 * holds the exact box of its machines' free vectors, their lowest machine index and the maxima
 * of up to LT__FIT_AUX_MAX per-machine values chosen by the user of the tree. A placement or
 * removal changes one machine: its leaf is recomputed and its ancestors re-joined, so every
 * aggregate stays exact (O(LT__KD_LEAF + log n)). Machines drift apart as their loads change,
 * which loosens leaves; a configuration's tree is rebuilt after LT__KD_REBUILD * n updates
 * (O(n log n), amortised O(log n) each). A machine going online takes the position after the
 * last (a rebuild when every leaf is full, which at most doubles the leaves), one going
 * offline hands its position to the last machine: O(LT__KD_LEAF + log n) each too, and counted
 * as updates (the trace adds thousands of machines one at a time, and rebuilding at each
 * made epvm's replay quadratic in the machines). No allocation after lt__kd_init, so updates
 * cannot fail.
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <string.h>

#include "lt_mem.h"

#define NO_POS LT__KD_NONE

/* Writable aux maxima of node. */
static double *lt__kd_auxw(struct lt__kd_tree *t, uint32_t node)
{
    return &t->aux[(size_t)node * LT__FIT_AUX_MAX];
}

static const struct lt_res empty_lo = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
static const struct lt_res empty_hi = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};

static void res_min(struct lt_res *a, const struct lt_res *b)
{
    a->cpu = fmin(a->cpu, b->cpu);
    a->mem = fmin(a->mem, b->mem);
    a->disk = fmin(a->disk, b->disk);
}

static void res_max(struct lt_res *a, const struct lt_res *b)
{
    a->cpu = fmax(a->cpu, b->cpu);
    a->mem = fmax(a->mem, b->mem);
    a->disk = fmax(a->disk, b->disk);
}

static void aux_reset(struct lt__kd_tree *t, uint32_t node)
{
    double *a = lt__kd_auxw(t, node);

    for (int k = 0; k < LT__FIT_AUX_MAX; k++)
        a[k] = -HUGE_VAL;
}

static void aux_join(double *a, const double *b, int n)
{
    for (int k = 0; k < n; k++)
        a[k] = fmax(a[k], b[k]);
}

/* ---- building ---- */

static void leaf_refresh(const struct lt__kd *kd, struct lt__kd_tree *t, const struct lt_cluster *c,
                         uint32_t leaf)
{
    uint32_t node = t->size + leaf, end = (leaf + 1) * LT__KD_LEAF;
    struct lt_res lo = empty_lo, hi = empty_hi;
    double *aux = lt__kd_auxw(t, node), a[LT__FIT_AUX_MAX];
    uint32_t mi = NO_POS;

    if (end > t->n)
        end = t->n;
    aux_reset(t, node);
    for (uint32_t p = leaf * LT__KD_LEAF; p < end; p++) {
        uint32_t i = t->perm[p];
        struct lt_res f = lt__free(&c->m[i]);
        res_min(&lo, &f);
        res_max(&hi, &f);
        if (kd->n_aux > 0) {
            kd->aux(kd->aux_ctx, &t->cap, &f, a);
            aux_join(aux, a, kd->n_aux);
        }
        if (i < mi)
            mi = i;
    }
    t->lo[node] = lo;
    t->hi[node] = hi;
    t->minidx[node] = mi;
}

static void pull(const struct lt__kd *kd, struct lt__kd_tree *t, uint32_t node)
{
    uint32_t l = 2 * node, r = 2 * node + 1;

    t->lo[node] = t->lo[l];
    res_min(&t->lo[node], &t->lo[r]);
    t->hi[node] = t->hi[l];
    res_max(&t->hi[node], &t->hi[r]);
    memcpy(lt__kd_auxw(t, node), lt__kd_aux(t, l), LT__FIT_AUX_MAX * sizeof(double));
    aux_join(lt__kd_auxw(t, node), lt__kd_aux(t, r), kd->n_aux);
    t->minidx[node] = t->minidx[l] < t->minidx[r] ? t->minidx[l] : t->minidx[r];
}

static void swap_pos(struct lt__kd_tree *t, uint32_t a, uint32_t b)
{
    uint32_t m = t->perm[a];
    double k = t->key[a];

    t->perm[a] = t->perm[b];
    t->key[a] = t->key[b];
    t->perm[b] = m;
    t->key[b] = k;
}

/* Reorders positions [lo, hi) so that position k holds the element of rank k by key, with
 * smaller-or-equal keys before it and greater-or-equal after (Hoare quickselect, median of
 * three pivots: deterministic). */
static void select_kth(struct lt__kd_tree *t, uint32_t lo, uint32_t hi, uint32_t k)
{
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2, i = lo, j = hi - 1;
        double pivot;

        if (t->key[mid] < t->key[lo])
            swap_pos(t, mid, lo);
        if (t->key[hi - 1] < t->key[lo])
            swap_pos(t, hi - 1, lo);
        if (t->key[hi - 1] < t->key[mid])
            swap_pos(t, hi - 1, mid);
        pivot = t->key[mid];
        while (i <= j) {
            while (t->key[i] < pivot)
                i++;
            while (pivot < t->key[j])
                j--;
            if (i <= j) {
                swap_pos(t, i, j);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j + 1;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Splits positions [lo, hi) for node with `leaves` leaves below it. */
static void split(struct lt__kd_tree *t, const struct lt_cluster *c, uint32_t node, uint32_t lo,
                  uint32_t hi, uint32_t leaves)
{
    uint32_t mid;
    struct lt_res mn = empty_lo, mx = empty_hi;
    bool by_cpu;

    if (leaves == 1 || hi - lo <= LT__KD_LEAF)
        return;
    mid = lo + (leaves / 2) * LT__KD_LEAF;
    if (mid >= hi) {
        split(t, c, 2 * node, lo, hi, leaves / 2);
        return;
    }
    for (uint32_t p = lo; p < hi; p++) {
        struct lt_res f = lt__free(&c->m[t->perm[p]]);
        res_min(&mn, &f);
        res_max(&mx, &f);
    }
    by_cpu = (mx.cpu - mn.cpu) / t->cap.cpu >= (mx.mem - mn.mem) / t->cap.mem;
    for (uint32_t p = lo; p < hi; p++) {
        struct lt_res f = lt__free(&c->m[t->perm[p]]);
        t->key[p] = by_cpu ? f.cpu : f.mem;
    }
    select_kth(t, lo, hi, mid);
    split(t, c, 2 * node, lo, mid, leaves / 2);
    split(t, c, 2 * node + 1, mid, hi, leaves / 2);
}

/* Rebuilds tree t from the cluster: gathers its online machines, partitions, fills boxes. */
static void build(struct lt__kd *kd, struct lt__kd_tree *t, const struct lt_cluster *c,
                  uint32_t config)
{
    uint32_t leaves;

    t->n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->m[i].config == config && c->m[i].online)
            t->perm[t->n++] = (uint32_t)i;
    }
    leaves = t->n == 0 ? 1 : (t->n + LT__KD_LEAF - 1) / LT__KD_LEAF;
    for (t->size = 1; t->size < leaves;)
        t->size *= 2;
    assert(t->size <= t->size_max);
    split(t, c, 1, 0, t->n, t->size);
    for (uint32_t p = 0; p < t->n; p++)
        kd->pos[t->perm[p]] = p;
    for (uint32_t leaf = 0; leaf < t->size; leaf++)
        leaf_refresh(kd, t, c, leaf);
    for (uint32_t node = t->size - 1; node >= 1; node--)
        pull(kd, t, node);
    t->updates = 0;
}

/* Leaf `leaf` of t changed: recompute it and re-join its ancestors. */
static void refresh(const struct lt__kd *kd, struct lt__kd_tree *t, const struct lt_cluster *c,
                    uint32_t leaf)
{
    leaf_refresh(kd, t, c, leaf);
    for (uint32_t node = (t->size + leaf) / 2; node >= 1; node /= 2)
        pull(kd, t, node);
}

void lt__kd_commit(struct lt__kd *kd, const struct lt_cluster *c, size_t i, bool oon)
{
    uint32_t config = c->m[i].config;
    struct lt__kd_tree *t = &kd->t[config];

    if (oon != c->m[i].online && c->m[i].online) {
        /* Online: appended after the last position, unless every leaf is full. */
        if (t->n >= t->size * LT__KD_LEAF) {
            build(kd, t, c, config);
            return;
        }
        kd->pos[i] = t->n;
        t->perm[t->n++] = (uint32_t)i;
        refresh(kd, t, c, kd->pos[i] / LT__KD_LEAF);
    } else if (oon != c->m[i].online) {
        /* Offline: the last position moves into its place. */
        uint32_t p = kd->pos[i], last = t->n - 1;

        t->perm[p] = t->perm[last];
        kd->pos[t->perm[p]] = p;
        kd->pos[i] = NO_POS;
        t->n--;
        refresh(kd, t, c, p / LT__KD_LEAF);
        if (last / LT__KD_LEAF != p / LT__KD_LEAF)
            refresh(kd, t, c, last / LT__KD_LEAF);
    } else {
        refresh(kd, t, c, kd->pos[i] / LT__KD_LEAF);
    }
    if (++t->updates > (uint64_t)LT__KD_REBUILD * t->n)
        build(kd, t, c, config);
}

void lt__kd_release(struct lt__kd *kd)
{
    for (size_t k = 0; kd->t != NULL && k < kd->n_cfg; k++) {
        lt_free(kd->t[k].perm);
        lt_free(kd->t[k].key);
        lt_free(kd->t[k].lo);
        lt_free(kd->t[k].hi);
        lt_free(kd->t[k].aux);
        lt_free(kd->t[k].minidx);
    }
    lt_free(kd->t);
    lt_free(kd->pos);
    memset(kd, 0, sizeof(*kd));
}

static bool res_same(const struct lt_res *a, const struct lt_res *b)
{
    return lt__res_ge(a, b) && lt__res_ge(b, a);
}

int lt__kd_check(const struct lt__kd *kd, const struct lt_cluster *c, const char *name,
                 struct lt_err *err)
{

    if (kd->n != c->n || kd->n_cfg != c->n_cfg)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, kd->n, c->n);
    for (size_t i = 0; i < c->n; i++) {
        const struct lt__kd_tree *t = &kd->t[c->m[i].config];
        uint32_t p = kd->pos[i];
        if (!c->m[i].online ? p != NO_POS : p >= t->n || t->perm[p] != i)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu misplaced", name, i);
    }
    for (size_t k = 0; k < kd->n_cfg; k++) {
        const struct lt__kd_tree *t = &kd->t[k];
        uint32_t online = 0;
        for (size_t i = 0; i < c->n; i++)
            online += c->m[i].config == k && c->m[i].online;
        if (online != t->n)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: configuration %zu holds %u of %u",
                              name, k, (unsigned)t->n, (unsigned)online);
        /* Every box is exactly the join of what lies below it. */
        for (uint32_t node = 2 * t->size - 1; node >= 1; node--) {
            struct lt_res lo = empty_lo, hi = empty_hi;
            double aux[LT__FIT_AUX_MAX], a[LT__FIT_AUX_MAX];
            uint32_t mi = NO_POS;
            for (int j = 0; j < LT__FIT_AUX_MAX; j++)
                aux[j] = -HUGE_VAL;
            if (node >= t->size) {
                uint32_t leaf = node - t->size;
                for (uint32_t p = leaf * LT__KD_LEAF; p < (leaf + 1) * LT__KD_LEAF && p < t->n;
                     p++) {
                    struct lt_res f = lt__free(&c->m[t->perm[p]]);
                    res_min(&lo, &f);
                    res_max(&hi, &f);
                    if (kd->n_aux > 0) {
                        kd->aux(kd->aux_ctx, &t->cap, &f, a);
                        aux_join(aux, a, kd->n_aux);
                    }
                    mi = t->perm[p] < mi ? t->perm[p] : mi;
                }
            } else {
                lo = t->lo[2 * node];
                res_min(&lo, &t->lo[2 * node + 1]);
                hi = t->hi[2 * node];
                res_max(&hi, &t->hi[2 * node + 1]);
                memcpy(aux, lt__kd_aux(t, 2 * node), sizeof(aux));
                aux_join(aux, lt__kd_aux(t, 2 * node + 1), kd->n_aux);
                mi = t->minidx[2 * node] < t->minidx[2 * node + 1] ? t->minidx[2 * node]
                                                                   : t->minidx[2 * node + 1];
            }
            if (!res_same(&lo, &t->lo[node]) || !res_same(&hi, &t->hi[node]) ||
                memcmp(aux, lt__kd_aux(t, node), sizeof(aux)) != 0 || mi != t->minidx[node])
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: stale box at node %u of configuration %zu", name,
                                  (unsigned)node, k);
        }
    }
    return 0;
}

int lt__kd_init(struct lt__kd *kd, const struct lt_cluster *c, int n_aux, lt__kd_aux_fn *aux,
                const void *aux_ctx)
{
    assert(n_aux >= 0 && n_aux <= LT__FIT_AUX_MAX);
    memset(kd, 0, sizeof(*kd));
    kd->n_aux = n_aux;
    kd->aux = aux;
    kd->aux_ctx = aux_ctx;
    kd->n = c->n;
    kd->n_cfg = c->n_cfg;
    kd->t = lt_calloc(c->n_cfg, sizeof(*kd->t));
    kd->pos = lt_calloc(c->n, sizeof(*kd->pos));
    if (kd->t == NULL || kd->pos == NULL)
        goto out_nomem;
    for (size_t i = 0; i < c->n; i++)
        kd->pos[i] = NO_POS;
    for (size_t k = 0; k < c->n_cfg; k++) {
        struct lt__kd_tree *t = &kd->t[k];
        uint32_t leaves;

        t->cap = c->cfg[k].cap;
        t->n_max = c->cfg[k].n_machines;
        leaves = t->n_max == 0 ? 1 : (t->n_max + LT__KD_LEAF - 1) / LT__KD_LEAF;
        for (t->size_max = 1; t->size_max < leaves;)
            t->size_max *= 2;
        t->perm = lt_calloc(t->n_max, sizeof(*t->perm));
        t->key = lt_calloc(t->n_max, sizeof(*t->key));
        t->lo = lt_calloc(2 * (size_t)t->size_max, sizeof(*t->lo));
        t->hi = lt_calloc(2 * (size_t)t->size_max, sizeof(*t->hi));
        t->aux = lt_calloc(2 * (size_t)t->size_max * LT__FIT_AUX_MAX, sizeof(*t->aux));
        t->minidx = lt_calloc(2 * (size_t)t->size_max, sizeof(*t->minidx));
        if (t->perm == NULL || t->key == NULL || t->lo == NULL || t->hi == NULL || t->aux == NULL ||
            t->minidx == NULL)
            goto out_nomem;
        build(kd, t, c, (uint32_t)k);
    }
    return 0;

out_nomem:
    lt__kd_release(kd);
    return LT_ENOMEM;
}
