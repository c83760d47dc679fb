/* firstfit.c -- firstfit, randfirstfit and random placement, over one "fit tree" index.
 *
 * Source: Stein, Henzinger, Radovanovic, "Scheduling a Large DataCenter" (Google Research,
 *   June 2009), slide "Algorithms": Firstfit V1 score(i,j) = machine_uid, V2 score(i,j) =
 *   random(i) "chosen once, independent of j"; "Random: Random placement".
 * Definition: firstfit scores a machine by its index; randfirstfit by a per-machine key in
 *   [0, 1) fixed for the life of the cluster, a hash of (cluster seed, machine name), so the
 *   order survives machines being added and is the same in the simulator and the extender;
 *   random picks a uniformly random feasible machine.
 * Reading: "random" has no score of its own. To make rank and choose draw identically, a
 *   decision is: no draw if nothing fits; else up to 64 rejection draws k = below(n) over the
 *   candidate list, taking the first feasible cand[k]; if all 64 miss, F = the number of
 *   feasible candidates and the below(F)-th of them in list order. Either way every feasible
 *   machine is equally likely. rank scores the chosen candidate 0, other feasible ones 1.
 * Ties: lowest machine index (randfirstfit keys tie only by hash collision).
 * Implementation: a segment tree over machines in score order (index order, or key order for
 *   randfirstfit) whose nodes hold the component-wise maximum free vector below them; the
 *   leftmost leaf that fits is found by descending into subtrees whose maximum covers the
 *   request. Placement: O(log n). choose: O(log n) typically; it backtracks when a subtree's
 *   maxima come from different machines. random's index also keeps kdtree.c's trees (no aux
 *   values): when its 64 rejection draws miss, few machines fit and the cluster is full and
 *   fragmented, where the fit tree's boxes prune little; the kd trees find the feasible
 *   machines, sorted into index order to pick one (the fit tree walks them when there are
 *   more than RANDOM_PICK_MAX).
 * Tests: tests/unit/scoring/test_firstfit.c, test_property.c (choose == rank on random states).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <stdlib.h>

#include "lt_mem.h"

#define RANDOM_TRIES 64 /* rejection draws before counting; P(fallback) = (1 - p)^64 */

struct fit_tree {
    struct lt_index base;
    size_t n;          /* machines covered */
    size_t size;       /* leaves: a power of two >= n */
    struct lt_res *mx; /* 2 * size nodes, root at 1: max free of online machines below */
    uint32_t *order;   /* leaf position -> machine */
    uint32_t *pos;     /* machine -> leaf position */
    bool has_kd;       /* random: kd below is built */
    struct lt__kd kd;  /* random: free vectors by configuration, for its fallback */
};

enum tree_order { ORDER_INDEX, ORDER_KEY };

static const enum tree_order by_index = ORDER_INDEX;
static const enum tree_order by_key = ORDER_KEY;

static struct lt_res leaf_value(const struct lt__machine *m)
{
    struct lt_res none = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};

    return m->online ? lt__free(m) : none;
}

static void pull(struct fit_tree *t, size_t node)
{
    const struct lt_res *l = &t->mx[2 * node], *r = &t->mx[2 * node + 1];

    t->mx[node].cpu = fmax(l->cpu, r->cpu);
    t->mx[node].mem = fmax(l->mem, r->mem);
    t->mx[node].disk = fmax(l->disk, r->disk);
}

static void tree_commit(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                        const struct lt_res *of, bool oon)
{
    struct fit_tree *t = (struct fit_tree *)ix;
    size_t node = t->size + t->pos[i];

    (void)of;
    t->mx[node] = leaf_value(&c->m[i]);
    for (node /= 2; node >= 1; node /= 2)
        pull(t, node);
    if (t->has_kd)
        lt__kd_commit(&t->kd, c, i, oon);
}

static void tree_free(struct lt_index *ix)
{
    struct fit_tree *t = (struct fit_tree *)ix;

    if (t == NULL)
        return;
    if (t->has_kd)
        lt__kd_release(&t->kd);
    lt_free(t->mx);
    lt_free(t->order);
    lt_free(t->pos);
    lt_free(t);
}

static bool res_equal(const struct lt_res *a, const struct lt_res *b)
{
    return lt__res_ge(a, b) && lt__res_ge(b, a);
}

static int tree_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    const struct fit_tree *t = (const struct fit_tree *)ix;
    const char *name = ix->policy->name;

    if (t->n != c->n)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, t->n, c->n);
    for (size_t p = 0; p < t->size; p++) {
        struct lt_res want = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
        if (p < t->n) {
            uint32_t i = t->order[p];
            if (t->pos[i] != p)
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: order and position disagree",
                                  name);
            if (p > 0 && ix->policy == &lt__randfirstfit_policy) {
                const struct lt__machine *a = &c->m[t->order[p - 1]], *b = &c->m[i];
                if (!lt__better(a->rkey, t->order[p - 1], b->rkey, i))
                    return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: keys out of order", name);
            } else if (ix->policy != &lt__randfirstfit_policy && i != p) {
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: order is not by index", name);
            }
            want = leaf_value(&c->m[i]);
        }
        if (!res_equal(&t->mx[t->size + p], &want))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: stale leaf %zu", name, p);
    }
    for (size_t node = t->size - 1; node >= 1; node--) {
        struct lt_res l = t->mx[2 * node], r = t->mx[2 * node + 1];
        struct lt_res want = {fmax(l.cpu, r.cpu), fmax(l.mem, r.mem), fmax(l.disk, r.disk)};
        if (!res_equal(&t->mx[node], &want))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: stale node %zu", name, node);
    }
    return t->has_kd ? lt__kd_check(&t->kd, c, name, err) : 0;
}

static const struct lt__index_ops tree_ops = {lt__prepare_none, tree_commit, tree_check, tree_free};

struct keyed {
    double key;
    uint32_t i;
};

static int keyed_cmp(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;

    if (a->key < b->key)
        return -1;
    if (b->key < a->key)
        return 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Fills t->order by (rkey, index). */
static int order_by_key(struct fit_tree *t, const struct lt_cluster *c)
{
    struct keyed *k = lt_calloc(c->n, sizeof(*k));

    if (k == NULL)
        return LT_ENOMEM;
    for (size_t i = 0; i < c->n; i++) {
        k[i].key = c->m[i].rkey;
        k[i].i = (uint32_t)i;
    }
    qsort(k, c->n, sizeof(*k), keyed_cmp);
    for (size_t p = 0; p < c->n; p++)
        t->order[p] = k[p].i;
    lt_free(k);
    return 0;
}

static int tree_index_new(const struct lt_policy *p, const struct lt_cluster *c,
                          struct lt_index **out, struct lt_err *err)
{
    const enum tree_order *order = p->params;
    struct fit_tree *t = lt_calloc(1, sizeof(*t));

    if (t == NULL)
        goto out_nomem;
    t->base.ops = &tree_ops;
    t->base.policy = p;
    t->n = c->n;
    t->size = 1;
    while (t->size < c->n)
        t->size *= 2;
    t->mx = lt_calloc(2 * t->size, sizeof(*t->mx));
    t->order = lt_calloc(c->n, sizeof(*t->order));
    t->pos = lt_calloc(c->n, sizeof(*t->pos));
    if (t->mx == NULL || t->order == NULL || t->pos == NULL)
        goto out_nomem;
    for (size_t i = 0; i < c->n; i++)
        t->order[i] = (uint32_t)i;
    if (*order == ORDER_KEY && order_by_key(t, c) < 0)
        goto out_nomem;
    for (size_t q = 0; q < t->size; q++) {
        struct lt_res none = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
        if (q < c->n) {
            t->pos[t->order[q]] = (uint32_t)q;
            t->mx[t->size + q] = leaf_value(&c->m[t->order[q]]);
        } else {
            t->mx[t->size + q] = none;
        }
    }
    for (size_t node = t->size - 1; node >= 1; node--)
        pull(t, node);
    if (p == &lt__random_policy) {
        if (lt__kd_init(&t->kd, c, 0, NULL, NULL) < 0)
            goto out_nomem;
        t->has_kd = true;
    }
    *out = &t->base;
    return 0;

out_nomem:
    tree_free(t ? &t->base : NULL);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

/* Leftmost leaf position under node whose free vector covers r, or LT_NO_MACHINE. */
static size_t leftmost(const struct fit_tree *t, size_t node, const struct lt_res *r)
{
    size_t hit;

    if (!lt__res_ge(&t->mx[node], r))
        return LT_NO_MACHINE;
    if (node >= t->size)
        return node - t->size;
    hit = leftmost(t, 2 * node, r);
    return hit != LT_NO_MACHINE ? hit : leftmost(t, 2 * node + 1, r);
}

static int tree_choose(const struct lt_policy *p, const struct lt_index *ix,
                       const struct lt_cluster *c, const struct lt_task *t, struct lt_rng *rng,
                       struct lt_choose_hint *hint, size_t *out, struct lt_err *err)
{
    const struct fit_tree *ft = (const struct fit_tree *)ix;
    size_t q = ft->n == 0 ? LT_NO_MACHINE : leftmost(ft, 1, &t->req);

    (void)p;
    (void)hint;
    (void)c;
    (void)rng;
    (void)err;
    *out = q == LT_NO_MACHINE ? LT_NO_MACHINE : ft->order[q];
    return 0;
}

static int firstfit_rank(const struct lt_policy *p, const struct lt_cluster *c,
                         const struct lt_task *t, const size_t *cand, size_t n, unsigned flags,
                         struct lt_rng *rng, double *scores, struct lt_err *err)
{
    const enum tree_order *order = p->params;
    int rc = lt__rank_check(c, cand, n, scores, err);

    (void)rng;
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        const struct lt__machine *m = &c->m[cand[k]];
        struct lt_res f;

        if (!lt__rank_free(m, &t->req, flags, &f))
            scores[k] = LT_SCORE_INFEASIBLE;
        else
            scores[k] = *order == ORDER_KEY ? m->rkey : (double)cand[k];
    }
    return 0;
}

/* ---- random ---- */

/* The decision protocol shared by rank and choose (see the file comment). fits(k) tells
 * whether candidate k is feasible; returns the chosen candidate or LT_NO_MACHINE. */
struct cand_view {
    const struct lt_cluster *c;
    const size_t *cand; /* NULL: candidate k is machine k */
    size_t n;
    unsigned flags; /* enum lt_rank_flags (rank only; choose passes 0) */
};

static bool cand_fits(const struct cand_view *v, size_t k, const struct lt_res *r)
{
    struct lt_res f;

    return lt__rank_free(&v->c->m[v->cand ? v->cand[k] : k], r, v->flags, &f);
}

static size_t random_decide(const struct cand_view *v, const struct lt_res *r, struct lt_rng *rng)
{
    size_t feasible = 0, u;

    for (int k = 0; k < RANDOM_TRIES; k++) {
        size_t pick = (size_t)lt_rng_below(rng, v->n);
        if (cand_fits(v, pick, r))
            return pick;
    }
    for (size_t k = 0; k < v->n; k++)
        feasible += cand_fits(v, k, r);
    u = (size_t)lt_rng_below(rng, feasible);
    for (size_t k = 0;; k++) {
        if (cand_fits(v, k, r) && u-- == 0)
            return k;
    }
}

/* The first leaf position >= from under node (covering positions [lo, hi)) whose free vector
 * covers r, or LT_NO_MACHINE. */
static size_t leftmost_from(const struct fit_tree *t, size_t node, size_t lo, size_t hi,
                            size_t from, const struct lt_res *r)
{
    size_t mid = lo + (hi - lo) / 2, hit;

    if (hi <= from || !lt__res_ge(&t->mx[node], r))
        return LT_NO_MACHINE;
    if (node >= t->size)
        return lo;
    hit = leftmost_from(t, 2 * node, lo, mid, from, r);
    return hit != LT_NO_MACHINE ? hit : leftmost_from(t, 2 * node + 1, mid, hi, from, r);
}

/* Feasible machines in the kd tree of one configuration below node: counted into *count, the
 * first cap of them (in no particular order) stored in out. Boxes whose maxima do not cover r
 * are skipped; machines are tested one by one with cand_fits. */
static void kd_collect(const struct lt__kd_tree *t, const struct cand_view *v, uint32_t node,
                       const struct lt_res *r, uint32_t *out, size_t cap, size_t *count)
{
    if (!lt__res_ge(&t->hi[node], r))
        return;
    if (node >= t->size) {
        uint32_t leaf = node - t->size, end = (leaf + 1) * LT__KD_LEAF;
        for (uint32_t p = leaf * LT__KD_LEAF; p < end && p < t->n; p++)
            if (cand_fits(v, t->perm[p], r)) {
                if (*count < cap)
                    out[*count] = t->perm[p];
                (*count)++;
            }
        return;
    }
    kd_collect(t, v, 2 * node, r, out, cap, count);
    kd_collect(t, v, 2 * node + 1, r, out, cap, count);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

#define RANDOM_PICK_MAX 512 /* feasible machines the fallback sorts on the stack */

/* random_decide for choose, where candidate k is machine k: the same draws, but the fallback
 * finds the feasible machines through the kd trees (spatial boxes prune well on a full,
 * fragmented cluster, where the fallback runs) and takes the below(F)-th in index order by
 * sorting them; past RANDOM_PICK_MAX of them it walks the fit tree's feasible leaves. */
static size_t random_decide_tree(const struct fit_tree *ft, const struct cand_view *v,
                                 const struct lt_res *r, struct lt_rng *rng)
{
    uint32_t found[RANDOM_PICK_MAX];
    size_t feasible = 0, u, q;

    for (int k = 0; k < RANDOM_TRIES; k++) {
        size_t pick = (size_t)lt_rng_below(rng, v->n);
        if (cand_fits(v, pick, r))
            return pick;
    }
    for (size_t k = 0; k < ft->kd.n_cfg; k++)
        if (ft->kd.t[k].n > 0 && lt__res_ge(&ft->kd.t[k].cap, r))
            kd_collect(&ft->kd.t[k], v, 1, r, found, RANDOM_PICK_MAX, &feasible);
    u = (size_t)lt_rng_below(rng, feasible);
    if (feasible <= RANDOM_PICK_MAX) {
        qsort(found, feasible, sizeof(*found), cmp_u32);
        return found[u];
    }
    for (q = leftmost_from(ft, 1, 0, ft->size, 0, r); u > 0; u--)
        q = leftmost_from(ft, 1, 0, ft->size, q + 1, r);
    return q;
}

void lt__random_draws_sole(size_t n, size_t m, struct lt_rng *rng)
{
    /* random_decide with cand_fits(k) == (k == m): the fallback's count is 1. */
    for (int k = 0; k < RANDOM_TRIES; k++)
        if ((size_t)lt_rng_below(rng, n) == m)
            return;
    (void)lt_rng_below(rng, 1);
}

static int random_rank(const struct lt_policy *p, const struct lt_cluster *c,
                       const struct lt_task *t, const size_t *cand, size_t n, unsigned flags,
                       struct lt_rng *rng, double *scores, struct lt_err *err)
{
    struct cand_view v = {c, cand, n, flags};
    bool any = false;
    int rc = lt__rank_check(c, cand, n, scores, err);

    if (rc < 0)
        return rc;
    if (rng == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "policy '%s' needs a random number generator",
                          p->name);
    for (size_t k = 0; k < n; k++) {
        bool f = cand_fits(&v, k, &t->req);
        scores[k] = f ? 1.0 : LT_SCORE_INFEASIBLE;
        any |= f;
    }
    if (any)
        scores[random_decide(&v, &t->req, rng)] = 0.0;
    return 0;
}

static int random_choose(const struct lt_policy *p, const struct lt_index *ix,
                         const struct lt_cluster *c, const struct lt_task *t, struct lt_rng *rng,
                         struct lt_choose_hint *hint, size_t *out, struct lt_err *err)
{
    const struct fit_tree *ft = (const struct fit_tree *)ix;
    struct cand_view v = {c, NULL, c->n, 0};

    (void)hint;
    if (rng == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "policy '%s' needs a random number generator",
                          p->name);
    if (ft->n == 0 || leftmost(ft, 1, &t->req) == LT_NO_MACHINE) {
        *out = LT_NO_MACHINE;
        return 0;
    }
    *out = random_decide_tree(ft, &v, &t->req, rng);
    return 0;
}

const struct lt_policy lt__firstfit_policy = {"firstfit", firstfit_rank, tree_choose,
                                              tree_index_new, &by_index};
const struct lt_policy lt__randfirstfit_policy = {"randfirstfit", firstfit_rank, tree_choose,
                                                  tree_index_new, &by_key};
const struct lt_policy lt__random_policy = {"random", random_rank, random_choose, tree_index_new,
                                            &by_index};
