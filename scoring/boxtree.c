/* boxtree.c -- the index behind choose() of the worst-fit formulas epvm and brfs-dot.
 *
 * Design: per configuration, the k-d tree of kdtree.c over the online machines' free vectors,
 * whose nodes also keep the maxima of the policy's aux values (fit.c).
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

#define BOUND_SLACK  1e-9 /* relative: far above rounding error, far below score gaps */
#define SORT_CONFIGS 64   /* configurations ordered by bound when there are at most this many */

struct box_index {
    struct lt_index base;
    const struct lt__fit_params *fp;
    struct lt_res ref; /* the cluster's reference capacity (aux values use it) */
    struct lt__kd kd;  /* the trees */
};

static void fit_aux(const void *ctx, const struct lt_res *cap, const struct lt_res *f, double *aux)
{
    const struct box_index *bx = ctx;

    bx->fp->aux(cap, f, &bx->ref, aux);
}

static void box_commit(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                       const struct lt_res *of, bool oon)
{
    (void)of;
    lt__kd_commit(&((struct box_index *)ix)->kd, c, i, oon);
}

static void box_free(struct lt_index *ix)
{
    struct box_index *bx = (struct box_index *)ix;

    if (bx == NULL)
        return;
    lt__kd_release(&bx->kd);
    lt_free(bx);
}

static int box_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    return lt__kd_check(&((const struct box_index *)ix)->kd, c, ix->policy->name, err);
}

static const struct lt__index_ops box_ops = {lt__prepare_none, box_commit, box_check, box_free};

int lt__box_index_new(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                      struct lt_err *err)
{
    struct box_index *bx = lt_calloc(1, sizeof(*bx));

    if (bx == NULL)
        goto out_nomem;
    bx->base.ops = &box_ops;
    bx->base.policy = p;
    bx->fp = p->params;
    bx->ref = c->ref;
    if (lt__kd_init(&bx->kd, c, bx->fp->n_aux, fit_aux, bx) < 0)
        goto out_nomem;
    *out = &bx->base;
    return 0;

out_nomem:
    lt_free(bx);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

/* ---- choose ---- */

struct query;
/* Per-request set-up of a formula's bound (for the configuration q->t), and the bound of a
 * node from its box and aux maxima. The search passes them as constant arguments, so that
 * each instance inlines them (through fp->bound they cost a call per node and redid the
 * request's set-up every time). */
typedef void prep_fn(struct query *q);
typedef double bound_fn(const struct query *q, const struct lt_res *lo, const struct lt_res *hi,
                        const double *aux);
#define FORMULA lt__fit_score_fn *score, prep_fn *prep, bound_fn *bound
#define PASS    score, prep, bound

struct query {
    const struct lt__fit_params *fp;
    const struct lt_cluster *c;
    const struct lt__kd_tree *t;
    const struct lt_res *r;
    double w[2]; /* per-request weights of the bound (prep) */
    int k;       /* brfs-dot: the direction sector of the request */
};

/* epvm: score = -aux[0] + (rx + ry) exactly, rx, ry the request over the capacity. */
static inline __attribute__((always_inline)) void prep_epvm(struct query *q)
{
    q->w[0] = q->r->mem / q->t->cap.mem + q->r->cpu / q->t->cap.cpu;
}

static inline __attribute__((always_inline)) double bound_epvm(const struct query *q,
                                                               const struct lt_res *lo,
                                                               const struct lt_res *hi,
                                                               const double *aux)
{
    (void)lo;
    (void)hi;
    return -aux[0] + q->w[0];
}

/* brfs-dot: the weights alpha, beta of the request over its two nearest directions
 * (lt__brfs_dot_sector, fit.c); the bound is the tighter of theirs and the box's high corner. */
static inline __attribute__((always_inline)) void prep_brfs_dot(struct query *q)
{
    q->k = lt__brfs_dot_sector(q->r, &q->c->ref, q->w);
}

static inline __attribute__((always_inline)) double bound_brfs_dot(const struct query *q,
                                                                   const struct lt_res *lo,
                                                                   const struct lt_res *hi,
                                                                   const double *aux)
{
    const struct lt_res *ref = &q->c->ref;
    double dirs = q->w[0] * aux[q->k] + q->w[1] * aux[q->k + 1];
    double box = (q->r->cpu / ref->cpu) * (hi->cpu / ref->cpu) +
                 (q->r->mem / ref->mem) * (hi->mem / ref->mem);

    (void)lo;
    return -(dirs < box ? dirs : box) * (1 + 1e-12) - 1e-300;
}

/* The lowest score any machine below node could reach, or +inf when the node can be skipped:
 * empty, no member can fit, or a point box (all members alike), which is resolved here. */
static inline __attribute__((always_inline)) double node_bound(const struct query *q, uint32_t node,
                                                               struct lt__best *b, FORMULA)
{
    const struct lt__kd_tree *t = q->t;
    const struct lt_res *lo = &t->lo[node], *hi = &t->hi[node], *r = q->r;
    double s;

    (void)prep;
    if (t->minidx[node] == LT__KD_NONE || !lt__res_ge(hi, r))
        return HUGE_VAL;
    if (lt__box_is_point(lo, hi)) {
        lt__best_offer(b, score(&t->cap, lo, r, &q->c->ref), t->minidx[node]);
        return HUGE_VAL;
    }
    s = bound(q, lo, hi, lt__kd_aux(t, node));
    return s - BOUND_SLACK * (1.0 + fabs(s));
}

static void scan_leaf(const struct query *q, uint32_t leaf, struct lt__best *b, FORMULA)
{
    const struct lt__kd_tree *t = q->t;
    uint32_t end = (leaf + 1) * LT__KD_LEAF;

    (void)prep;
    (void)bound;
    if (end > t->n)
        end = t->n;
    for (uint32_t p = leaf * LT__KD_LEAF; p < end; p++) {
        uint32_t i = t->perm[p];
        struct lt_res f = lt__free(&q->c->m[i]);
        if (lt__res_ge(&f, q->r))
            lt__best_offer(b, score(&t->cap, &f, q->r, &q->c->ref), i);
    }
}

/* Visits node, whose bound has been found not to exceed the best score. */
static void visit(const struct query *q, uint32_t node, struct lt__best *b, FORMULA)
{
    uint32_t first, second;
    double bl, br, b1, b2;

    if (node >= q->t->size) {
        scan_leaf(q, node - q->t->size, b, PASS);
        return;
    }
    bl = node_bound(q, 2 * node, b, PASS);
    br = node_bound(q, 2 * node + 1, b, PASS);
    if (br < bl) {
        first = 2 * node + 1, second = 2 * node, b1 = br, b2 = bl;
    } else {
        first = 2 * node, second = 2 * node + 1, b1 = bl, b2 = br;
    }
    if (b1 <= b->s)
        visit(q, first, b, PASS);
    if (b2 <= b->s)
        visit(q, second, b, PASS);
}

static bool config_usable(const struct lt__kd_tree *t, const struct lt_res *r)
{
    return t->n > 0 && lt__res_ge(&t->cap, r);
}

/* The search with the formula as a parameter; each instance below passes constants, and
 * `flatten` inlines this body, and the formula, into it. */
static inline int choose_with(const struct lt_index *ix, const struct lt_cluster *c,
                              const struct lt_task *t, size_t *out, FORMULA)
{
    const struct box_index *bx = (const struct box_index *)ix;
    struct query q = {bx->fp, c, NULL, &t->req, {0, 0}, 0};
    struct lt__best b = {LT_SCORE_INFEASIBLE, LT_NO_MACHINE};
    uint32_t order[SORT_CONFIGS];
    double bound_of[SORT_CONFIGS];
    size_t n = 0;

    if (bx->kd.n_cfg > SORT_CONFIGS) {
        for (size_t k = 0; k < bx->kd.n_cfg; k++) {
            q.t = &bx->kd.t[k];
            if (!config_usable(q.t, q.r))
                continue;
            prep(&q);
            if (node_bound(&q, 1, &b, PASS) <= b.s)
                visit(&q, 1, &b, PASS);
        }
        *out = b.i;
        return 0;
    }
    /* Few configurations: visit them in order of their root bound, so the first one visited
     * usually holds the answer and the others are pruned whole. */
    for (size_t k = 0; k < bx->kd.n_cfg; k++) {
        double s;

        q.t = &bx->kd.t[k];
        if (!config_usable(q.t, q.r))
            continue;
        prep(&q);
        s = node_bound(&q, 1, &b, PASS);
        if (isinf(s))
            continue;
        n = lt__order_insert(bound_of, order, n, s, (uint32_t)k);
    }
    for (size_t j = 0; j < n && bound_of[j] <= b.s; j++) {
        q.t = &bx->kd.t[order[j]];
        prep(&q);
        visit(&q, 1, &b, PASS);
    }
    *out = b.i;
    return 0;
}

#define BOX_CHOOSE(name)                                                                           \
    __attribute__((flatten)) LT__CHOOSE_DECL(lt__box_choose_##name)                                \
    {                                                                                              \
        (void)p;                                                                                   \
        (void)rng;                                                                                 \
        (void)err;                                                                                 \
        return choose_with(ix, c, t, out, lt__##name, prep_##name, bound_##name);                  \
    }

BOX_CHOOSE(epvm)
BOX_CHOOSE(brfs_dot)
