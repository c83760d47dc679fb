/* boxtree.c -- the index behind choose() of the worst-fit formulas (epvm, epvm2, bestfit5,
 * brfs-dot).
 *
 * Design: per configuration (machines of equal capacity), a k-d tree of bounding boxes over
 * the online machines' free vectors. The tree has a fixed implicit shape, a segment tree over
 * leaves of LEAF machines each (perm[] lists the machines in leaf order); it is built by
 * splitting each range at the median of the dimension (cpu or mem) with the larger spread, so
 * nearby machines share leaves. Every node holds the exact box of its machines' free vectors,
 * the maxima of the policy's aux values over them, and their lowest machine index. A placement or removal changes one machine: its leaf is recomputed and
 * its ancestors re-joined, so every aggregate stays exact (O(LEAF + log n)). Machines drift
 * apart as their loads change, which loosens leaves; a configuration's tree is rebuilt after
 * REBUILD_FACTOR * n updates (O(n log n), amortised O(log n) each) and whenever a machine goes
 * online or offline.
 *
 * Why this shape for worst fits: the answer is the emptiest feasible machine, and under a
 * worst-fit policy machines drift into a dense band of nearly equal scores, so box corners
 * (which mix the best cpu and the best mem of different machines) overshoot the frontier and
 * prune nothing. Each node therefore also keeps the maxima of a few per-machine values chosen
 * by the policy (fit.c: the negated score of an empty request, or projections of the
 * residual), from which the policy computes a bound that is tight for near-identical
 * machines; for epvm it is exact.
 *
 * Query: a depth-first branch and bound visits the better child first and prunes a node whose
 * bound exceeds the best score found, or whose box cannot cover the request. A node whose box
 * is a single point holds machines with identical free vectors, hence identical scores: its
 * lowest index answers for all of them, exactly (same inputs, same function). Other bounds are
 * lowered by a relative 1e-9 so that rounding never prunes the answer; the answer is always
 * decided on each machine's own score, computed by the function rank() uses, ties to the
 * lowest index. Configurations are visited in order of their root bound, so most are pruned
 * whole. test_property.c checks choose == rank.
 *
 * Workload assumption: a Google-like cell, 12,500 machines in ~10 configurations, many more
 * placements than machine events (which rebuild the index, cluster.c). Measured in
 * docs/benchmarks.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <string.h>

#include "lt_mem.h"

#define LEAF           8    /* machines per leaf: a leaf scan is cheaper than more levels */
#define REBUILD_FACTOR 4    /* rebuild a tree after this many updates per machine */
#define BOUND_SLACK    1e-9 /* relative: far above rounding error, far below score gaps */
#define SORT_CONFIGS   64   /* configurations ordered by bound when there are at most this many */
#define NO_POS         UINT32_MAX

struct ktree {
    struct lt_res cap;  /* the configuration's capacity */
    uint32_t n_max;     /* machines of this configuration, online or not */
    uint32_t n;         /* online machines: perm[0, n) */
    uint32_t *perm;     /* machines in leaf order; leaf j holds perm[j * LEAF, ...) */
    double *key;        /* scratch for building: one key per position */
    uint32_t size;      /* leaves, rounded up to a power of two (>= 1) */
    uint32_t size_max;  /* nodes allocated: 2 * size_max */
    struct lt_res *lo;  /* per node (root 1): component-wise minimum free; +inf if empty */
    struct lt_res *hi;  /* per node: component-wise maximum free; -inf if empty */
    double *aux;        /* per node: LT__FIT_AUX_MAX maxima of the policy's aux values; -inf */
    uint32_t *minidx;   /* per node: lowest machine index below, NO_POS if empty */
    uint64_t updates;   /* free-vector updates since the last build */
};

struct box_index {
    struct lt_index base;
    const struct lt__fit_params *fp;
    struct lt_res ref;  /* the cluster's reference capacity (aux values use it) */
    struct ktree *t;    /* one per cluster configuration */
    size_t n_cfg;
    uint32_t *pos;      /* machine -> position in its configuration's perm, or NO_POS */
    size_t n;           /* machines covered by pos */
};

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

static double *node_aux(const struct ktree *t, uint32_t node)
{
    return &t->aux[(size_t)node * LT__FIT_AUX_MAX];
}

static void aux_reset(const struct ktree *t, uint32_t node)
{
    double *a = node_aux(t, node);

    for (int k = 0; k < LT__FIT_AUX_MAX; k++)
        a[k] = -HUGE_VAL;
}

static void aux_join(double *a, const double *b, int n)
{
    for (int k = 0; k < n; k++)
        a[k] = fmax(a[k], b[k]);
}

/* ---- building ---- */

static void leaf_refresh(const struct box_index *bx, struct ktree *t, const struct lt_cluster *c,
                         uint32_t leaf)
{
    uint32_t node = t->size + leaf, end = (leaf + 1) * LEAF;
    struct lt_res lo = empty_lo, hi = empty_hi;
    double *aux = node_aux(t, node), a[LT__FIT_AUX_MAX];
    uint32_t mi = NO_POS;

    if (end > t->n)
        end = t->n;
    aux_reset(t, node);
    for (uint32_t p = leaf * LEAF; p < end; p++) {
        uint32_t i = t->perm[p];
        struct lt_res f = lt__free(&c->m[i]);
        res_min(&lo, &f);
        res_max(&hi, &f);
        bx->fp->aux(&t->cap, &f, &bx->ref, a);
        aux_join(aux, a, bx->fp->n_aux);
        if (i < mi)
            mi = i;
    }
    t->lo[node] = lo;
    t->hi[node] = hi;
    t->minidx[node] = mi;
}

static void pull(const struct box_index *bx, struct ktree *t, uint32_t node)
{
    uint32_t l = 2 * node, r = 2 * node + 1;

    t->lo[node] = t->lo[l];
    res_min(&t->lo[node], &t->lo[r]);
    t->hi[node] = t->hi[l];
    res_max(&t->hi[node], &t->hi[r]);
    memcpy(node_aux(t, node), node_aux(t, l), LT__FIT_AUX_MAX * sizeof(double));
    aux_join(node_aux(t, node), node_aux(t, r), bx->fp->n_aux);
    t->minidx[node] = t->minidx[l] < t->minidx[r] ? t->minidx[l] : t->minidx[r];
}

static void swap_pos(struct ktree *t, uint32_t a, uint32_t b)
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
static void select_kth(struct ktree *t, uint32_t lo, uint32_t hi, uint32_t k)
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
static void split(struct ktree *t, const struct lt_cluster *c, uint32_t node, uint32_t lo,
                  uint32_t hi, uint32_t leaves)
{
    uint32_t mid;
    struct lt_res mn = empty_lo, mx = empty_hi;
    bool by_cpu;

    if (leaves == 1 || hi - lo <= LEAF)
        return;
    mid = lo + (leaves / 2) * LEAF;
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
static void build(struct box_index *bx, struct ktree *t, const struct lt_cluster *c,
                  uint32_t config)
{
    uint32_t leaves;

    t->n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->m[i].config == config && c->m[i].online)
            t->perm[t->n++] = (uint32_t)i;
    }
    leaves = t->n == 0 ? 1 : (t->n + LEAF - 1) / LEAF;
    for (t->size = 1; t->size < leaves;)
        t->size *= 2;
    assert(t->size <= t->size_max);
    split(t, c, 1, 0, t->n, t->size);
    for (uint32_t p = 0; p < t->n; p++)
        bx->pos[t->perm[p]] = p;
    for (uint32_t leaf = 0; leaf < t->size; leaf++)
        leaf_refresh(bx, t, c, leaf);
    for (uint32_t node = t->size - 1; node >= 1; node--)
        pull(bx, t, node);
    t->updates = 0;
}

/* ---- maintenance ---- */

static int box_prepare(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                       const struct lt_res *nf, bool non)
{
    (void)ix;
    (void)c;
    (void)i;
    (void)nf;
    (void)non;
    return 0; /* all storage is sized at creation */
}

static void box_commit(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                       const struct lt_res *of, bool oon)
{
    struct box_index *bx = (struct box_index *)ix;
    uint32_t config = c->m[i].config;
    struct ktree *t = &bx->t[config];
    uint32_t node;

    (void)of;
    if (oon != c->m[i].online) {
        if (!c->m[i].online)
            bx->pos[i] = NO_POS;
        build(bx, t, c, config);
        return;
    }
    if (++t->updates > (uint64_t)REBUILD_FACTOR * t->n) {
        build(bx, t, c, config);
        return;
    }
    node = t->size + bx->pos[i] / LEAF;
    leaf_refresh(bx, t, c, node - t->size);
    for (node /= 2; node >= 1; node /= 2)
        pull(bx, t, node);
}

static void box_free(struct lt_index *ix)
{
    struct box_index *bx = (struct box_index *)ix;

    if (bx == NULL)
        return;
    for (size_t k = 0; bx->t != NULL && k < bx->n_cfg; k++) {
        lt_free(bx->t[k].perm);
        lt_free(bx->t[k].key);
        lt_free(bx->t[k].lo);
        lt_free(bx->t[k].hi);
        lt_free(bx->t[k].aux);
        lt_free(bx->t[k].minidx);
    }
    lt_free(bx->t);
    lt_free(bx->pos);
    lt_free(bx);
}

static bool res_same(const struct lt_res *a, const struct lt_res *b)
{
    return lt__res_ge(a, b) && lt__res_ge(b, a);
}

static int box_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    const struct box_index *bx = (const struct box_index *)ix;
    const char *name = ix->policy->name;

    if (bx->n != c->n || bx->n_cfg != c->n_cfg)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, bx->n, c->n);
    for (size_t i = 0; i < c->n; i++) {
        const struct ktree *t = &bx->t[c->m[i].config];
        uint32_t p = bx->pos[i];
        if (!c->m[i].online ? p != NO_POS : p >= t->n || t->perm[p] != i)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu misplaced", name, i);
    }
    for (size_t k = 0; k < bx->n_cfg; k++) {
        const struct ktree *t = &bx->t[k];
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
                for (uint32_t p = leaf * LEAF; p < (leaf + 1) * LEAF && p < t->n; p++) {
                    struct lt_res f = lt__free(&c->m[t->perm[p]]);
                    res_min(&lo, &f);
                    res_max(&hi, &f);
                    bx->fp->aux(&t->cap, &f, &bx->ref, a);
                    aux_join(aux, a, bx->fp->n_aux);
                    mi = t->perm[p] < mi ? t->perm[p] : mi;
                }
            } else {
                lo = t->lo[2 * node];
                res_min(&lo, &t->lo[2 * node + 1]);
                hi = t->hi[2 * node];
                res_max(&hi, &t->hi[2 * node + 1]);
                memcpy(aux, node_aux(t, 2 * node), sizeof(aux));
                aux_join(aux, node_aux(t, 2 * node + 1), bx->fp->n_aux);
                mi = t->minidx[2 * node] < t->minidx[2 * node + 1] ? t->minidx[2 * node]
                                                                   : t->minidx[2 * node + 1];
            }
            if (!res_same(&lo, &t->lo[node]) || !res_same(&hi, &t->hi[node]) ||
                memcmp(aux, node_aux(t, node), sizeof(aux)) != 0 || mi != t->minidx[node])
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: stale box at node %u of configuration %zu", name,
                                  (unsigned)node, k);
        }
    }
    return 0;
}

static const struct lt__index_ops box_ops = {box_prepare, box_commit, box_check, box_free};

int lt__box_index_new(const struct lt_policy *p, const struct lt_cluster *c,
                      struct lt_index **out, struct lt_err *err)
{
    struct box_index *bx = lt_calloc(1, sizeof(*bx));

    if (bx == NULL)
        goto out_nomem;
    bx->base.ops = &box_ops;
    bx->base.policy = p;
    bx->fp = p->params;
    bx->ref = c->ref;
    bx->n = c->n;
    bx->n_cfg = c->n_cfg;
    bx->t = lt_calloc(c->n_cfg, sizeof(*bx->t));
    bx->pos = lt_calloc(c->n, sizeof(*bx->pos));
    if (bx->t == NULL || bx->pos == NULL)
        goto out_nomem;
    for (size_t i = 0; i < c->n; i++)
        bx->pos[i] = NO_POS;
    for (size_t k = 0; k < c->n_cfg; k++) {
        struct ktree *t = &bx->t[k];
        uint32_t leaves;

        t->cap = c->cfg[k].cap;
        t->n_max = c->cfg[k].n_machines;
        leaves = t->n_max == 0 ? 1 : (t->n_max + LEAF - 1) / LEAF;
        for (t->size_max = 1; t->size_max < leaves;)
            t->size_max *= 2;
        t->perm = lt_calloc(t->n_max, sizeof(*t->perm));
        t->key = lt_calloc(t->n_max, sizeof(*t->key));
        t->lo = lt_calloc(2 * (size_t)t->size_max, sizeof(*t->lo));
        t->hi = lt_calloc(2 * (size_t)t->size_max, sizeof(*t->hi));
        t->aux = lt_calloc(2 * (size_t)t->size_max * LT__FIT_AUX_MAX, sizeof(*t->aux));
        t->minidx = lt_calloc(2 * (size_t)t->size_max, sizeof(*t->minidx));
        if (t->perm == NULL || t->key == NULL || t->lo == NULL || t->hi == NULL ||
            t->aux == NULL || t->minidx == NULL)
            goto out_nomem;
        build(bx, t, c, (uint32_t)k);
    }
    *out = &bx->base;
    return 0;

out_nomem:
    box_free(bx ? &bx->base : NULL);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

/* ---- choose ---- */

struct best {
    double s; /* best score so far */
    size_t i; /* its machine, or LT_NO_MACHINE */
};

struct query {
    const struct lt__fit_params *fp;
    const struct lt_cluster *c;
    const struct ktree *t;
    const struct lt_res *r;
};

static bool is_point(const struct lt_res *lo, const struct lt_res *hi)
{
    return !(lo->cpu < hi->cpu) && !(lo->mem < hi->mem) && !(lo->disk < hi->disk);
}

static void offer(struct best *b, double s, size_t i)
{
    if (lt__better(s, i, b->s, b->i)) {
        b->s = s;
        b->i = i;
    }
}

/* The lowest score any machine below node could reach, or +inf when the node can be skipped:
 * empty, no member can fit, or a point box (all members alike), which is resolved here. */
static double node_bound(const struct query *q, uint32_t node, struct best *b)
{
    const struct ktree *t = q->t;
    const struct lt_res *lo = &t->lo[node], *hi = &t->hi[node], *r = q->r;
    double s;

    if (t->minidx[node] == NO_POS || !lt__res_ge(hi, r))
        return HUGE_VAL;
    if (is_point(lo, hi)) {
        offer(b, q->fp->score(&t->cap, lo, r, &q->c->ref), t->minidx[node]);
        return HUGE_VAL;
    }
    s = q->fp->bound(&t->cap, lo, node_aux(t, node), r, &q->c->ref);
    return s - BOUND_SLACK * (1.0 + fabs(s));
}

static void scan_leaf(const struct query *q, uint32_t leaf, struct best *b)
{
    const struct ktree *t = q->t;
    uint32_t end = (leaf + 1) * LEAF;

    if (end > t->n)
        end = t->n;
    for (uint32_t p = leaf * LEAF; p < end; p++) {
        uint32_t i = t->perm[p];
        struct lt_res f = lt__free(&q->c->m[i]);
        if (lt__res_ge(&f, q->r))
            offer(b, q->fp->score(&t->cap, &f, q->r, &q->c->ref), i);
    }
}

/* Visits node, whose bound has been found not to exceed the best score. */
static void visit(const struct query *q, uint32_t node, struct best *b)
{
    uint32_t first, second;
    double bl, br, b1, b2;

    if (node >= q->t->size) {
        scan_leaf(q, node - q->t->size, b);
        return;
    }
    bl = node_bound(q, 2 * node, b);
    br = node_bound(q, 2 * node + 1, b);
    if (br < bl) {
        first = 2 * node + 1, second = 2 * node, b1 = br, b2 = bl;
    } else {
        first = 2 * node, second = 2 * node + 1, b1 = bl, b2 = br;
    }
    if (b1 <= b->s)
        visit(q, first, b);
    if (b2 <= b->s)
        visit(q, second, b);
}

static bool config_usable(const struct ktree *t, const struct lt_res *r)
{
    return t->n > 0 && lt__res_ge(&t->cap, r);
}

int lt__box_choose(const struct lt_policy *p, const struct lt_index *ix,
                   const struct lt_cluster *c, const struct lt_task *task, struct lt_rng *rng,
                   size_t *out, struct lt_err *err)
{
    const struct box_index *bx = (const struct box_index *)ix;
    struct query q = {bx->fp, c, NULL, &task->req};
    struct best b = {LT_SCORE_INFEASIBLE, LT_NO_MACHINE};
    uint32_t order[SORT_CONFIGS];
    double bound[SORT_CONFIGS];
    size_t n = 0;

    (void)p;
    (void)rng;
    (void)err;
    if (bx->n_cfg > SORT_CONFIGS) {
        for (size_t k = 0; k < bx->n_cfg; k++) {
            q.t = &bx->t[k];
            if (config_usable(q.t, q.r) && node_bound(&q, 1, &b) <= b.s)
                visit(&q, 1, &b);
        }
        *out = b.i;
        return 0;
    }
    /* Few configurations: visit them in order of their root bound, so the first one visited
     * usually holds the answer and the others are pruned whole. */
    for (size_t k = 0; k < bx->n_cfg; k++) {
        size_t j;
        double s;

        q.t = &bx->t[k];
        if (!config_usable(q.t, q.r))
            continue;
        s = node_bound(&q, 1, &b);
        if (isinf(s))
            continue;
        for (j = n; j > 0 && bound[j - 1] > s; j--) {
            bound[j] = bound[j - 1];
            order[j] = order[j - 1];
        }
        bound[j] = s;
        order[j] = (uint32_t)k;
        n++;
    }
    for (size_t j = 0; j < n && bound[j] <= b.s; j++) {
        q.t = &bx->t[order[j]];
        visit(&q, 1, &b);
    }
    *out = b.i;
    return 0;
}
