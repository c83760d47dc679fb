/* boxtree.c -- the indexes behind choose() of the worst-fit formulas epvm (a box tree) and
 * brfs-dot (direction lists, in the second half of this file, which has its own comment).
 *
 * Design: per configuration, the k-d tree of kdtree.c over the online machines' free vectors,
 * whose nodes also keep the maxima of the policy's aux values (fit.c).
 *
 * Why this shape for worst fits: the answer is the emptiest feasible machine, and under a
 * worst-fit policy machines drift into a dense band of nearly equal scores, so box corners
 * (which mix the best cpu and the best mem of different machines) overshoot the frontier and
 * prune nothing. Each node therefore also keeps the maximum of the negated score of an empty
 * request (fit.c), from which epvm's bound is exact.
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
    double w[1]; /* per-request term of the bound (prep) */
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
    struct query q = {bx->fp, c, NULL, &t->req, {0}};
    struct lt__best b = {LT_SCORE_INFEASIBLE, LT_NO_MACHINE, NULL};
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
        (void)hint;                                                                                \
        (void)err;                                                                                 \
        return choose_with(ix, c, t, out, lt__##name, prep_##name, bound_##name);                  \
    }

BOX_CHOOSE(epvm)

/* ---- brfs-dot: direction lists ----
 *
 * brfs-dot's score is -(u . c), u the request and c the residual over the reference capacity:
 * it does not depend on the machine's capacity, and it is linear in c. Under it the machines of
 * every configuration drift into one dense band of residuals, with a few machines above it,
 * and the box tree could not separate them: a leaf of eight machines spans more than the gap
 * between the best machine and the band (docs/benchmarks.md). So brfs-dot has an index of its
 * own, over all machines at once: the threshold algorithm on lists sorted by projection.
 *
 * Design: DOT_DIRS directions d_j spread evenly from 0 to 90 degrees in (cpu, mem) / ref. For
 * each, every online machine sits in one of DOT_BUCKETS buckets by its projection d_j . c
 * (buckets of equal width up to the largest projection of any capacity; the last one also
 * takes anything above, the first anything below); a bucket is a doubly linked list, and a
 * bitmap with a summary word finds the next non-empty bucket below any other in O(1). A
 * placement or removal moves the machine between buckets in each list: O(DOT_DIRS), no
 * allocation.
 *
 * Query: write u = alpha d_k + beta d_k+1 with alpha, beta >= 0 for the two directions around
 * u. Walk lists k and k+1 alternately from their top bucket down, scoring every member of each
 * bucket visited exactly (the function rank() uses, ties to the lowest index). A machine not
 * yet seen lies below the current bucket in both lists, so u . c <= alpha U_k + beta U_k+1
 * with U the upper edges of those buckets; the walk stops when that is strictly below the best
 * found (every unseen machine scores strictly worse), or when U_j < d_j . u for either list (no
 * unseen machine has c >= u, so none fits), or when a list is exhausted. Bounds are raised by
 * 1e-9 of the largest projection, far above rounding. An empty request scores 0 everywhere,
 * so its answer is the lowest-index machine that fits, found by a scan from machine 0.
 *
 * Cost, measured on the bench's cluster: a median choose visits about ten machines. */

#define DOT_DIRS    9    /* directions, 0 .. 90 degrees */
#define DOT_BUCKETS 4096 /* buckets per direction: 64 words of bitmap under one summary word */
#define DOT_WORDS   (DOT_BUCKETS / 64)
#define DOT_NONE    UINT32_MAX
#define DOT_OFF     UINT16_MAX /* bucket of an offline machine */
#define DOT_TOP_K   16         /* the top list a search keeps for the hint (tophint.c) */

_Static_assert(DOT_WORDS == 64, "one summary word per direction");

/* cos and sin of k * 90 / (DOT_DIRS - 1) degrees. */
static const double dot_cos[DOT_DIRS] = {1.0,
                                         0.98078528040323043,
                                         0.92387953251128674,
                                         0.83146961230254524,
                                         0.70710678118654757,
                                         0.55557023301960229,
                                         0.38268343236508984,
                                         0.19509032201612833,
                                         0.0};
static const double dot_sin[DOT_DIRS] = {0.0,
                                         0.19509032201612825,
                                         0.38268343236508978,
                                         0.55557023301960218,
                                         0.70710678118654746,
                                         0.83146961230254524,
                                         0.92387953251128674,
                                         0.98078528040323043,
                                         1.0};

struct dot_index {
    struct lt_index base;
    struct lt_res ref;      /* the cluster's reference capacity */
    size_t n;               /* machines covered */
    double w[DOT_DIRS];     /* bucket widths */
    double inv_w[DOT_DIRS]; /* their inverses */
    double vmax;            /* the largest projection of any capacity (> 0) */
    uint32_t *head;         /* [j * DOT_BUCKETS + b]: first machine, or DOT_NONE */
    uint64_t *bits;         /* [j * DOT_WORDS + w]: bit set iff the bucket is non-empty */
    uint64_t sum[DOT_DIRS]; /* bit w set iff bits[j * DOT_WORDS + w] != 0 */
    uint32_t *next, *prev;  /* [i * DOT_DIRS + j]: list links, DOT_NONE at the ends */
    uint16_t *bkt;          /* [i * DOT_DIRS + j]: machine i's bucket, DOT_OFF offline */
    struct lt__changes ch;  /* the last machine changes, for top hints (tophint.c) */
};

static double dot_proj(int j, const struct lt_res *f, const struct lt_res *ref)
{
    return dot_cos[j] * (f->cpu / ref->cpu) + dot_sin[j] * (f->mem / ref->mem);
}

static uint16_t dot_bucket(const struct dot_index *dx, int j, const struct lt_res *f)
{
    double x = dot_proj(j, f, &dx->ref) * dx->inv_w[j];

    if (!(x > 0.0))
        return 0;
    if (x >= DOT_BUCKETS - 1)
        return DOT_BUCKETS - 1;
    return (uint16_t)x;
}

/* The upper edge of bucket b of list j: every member's projection is below it (the last
 * bucket has none). */
static double dot_upper(const struct dot_index *dx, int j, uint32_t b)
{
    return b == DOT_BUCKETS - 1 ? HUGE_VAL : (b + 1) * dx->w[j];
}

static void dot_link(struct dot_index *dx, size_t i, int j, uint16_t b)
{
    size_t s = i * DOT_DIRS + (size_t)j, h = (size_t)j * DOT_BUCKETS + b;
    uint32_t first = dx->head[h];

    dx->bkt[s] = b;
    dx->prev[s] = DOT_NONE;
    dx->next[s] = first;
    if (first != DOT_NONE)
        dx->prev[(size_t)first * DOT_DIRS + (size_t)j] = (uint32_t)i;
    dx->head[h] = (uint32_t)i;
    dx->bits[(size_t)j * DOT_WORDS + b / 64] |= UINT64_C(1) << (b % 64);
    dx->sum[j] |= UINT64_C(1) << (b / 64);
}

static void dot_unlink(struct dot_index *dx, size_t i, int j)
{
    size_t s = i * DOT_DIRS + (size_t)j;
    uint16_t b = dx->bkt[s];
    uint32_t pv = dx->prev[s], nx = dx->next[s];

    if (pv != DOT_NONE)
        dx->next[(size_t)pv * DOT_DIRS + (size_t)j] = nx;
    else
        dx->head[(size_t)j * DOT_BUCKETS + b] = nx;
    if (nx != DOT_NONE)
        dx->prev[(size_t)nx * DOT_DIRS + (size_t)j] = pv;
    if (pv == DOT_NONE && nx == DOT_NONE) {
        uint64_t *w = &dx->bits[(size_t)j * DOT_WORDS + b / 64];
        *w &= ~(UINT64_C(1) << (b % 64));
        if (*w == 0)
            dx->sum[j] &= ~(UINT64_C(1) << (b / 64));
    }
    dx->bkt[s] = DOT_OFF;
}

/* The highest non-empty bucket of list j below bucket b (b = DOT_BUCKETS: the top one), or
 * DOT_NONE. */
static uint32_t dot_below(const struct dot_index *dx, int j, uint32_t b)
{
    const uint64_t *bits = &dx->bits[(size_t)j * DOT_WORDS];
    uint32_t w;
    uint64_t m;

    if (b == 0)
        return DOT_NONE;
    b--;
    w = b / 64;
    m = bits[w] & (~UINT64_C(0) >> (63 - b % 64));
    if (m == 0) {
        m = dx->sum[j] & ((UINT64_C(1) << w) - 1);
        if (m == 0)
            return DOT_NONE;
        w = 63u - (uint32_t)__builtin_clzll(m);
        m = bits[w];
    }
    return w * 64 + 63u - (uint32_t)__builtin_clzll(m);
}

static void dot_commit(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                       const struct lt_res *of, bool oon)
{
    struct dot_index *dx = (struct dot_index *)ix;
    struct lt_res f = lt__free(&c->m[i]);
    bool on = c->m[i].online;

    (void)of;
    lt__changes_note(&dx->ch, i);
    for (int j = 0; j < DOT_DIRS; j++) {
        uint16_t b = on ? dot_bucket(dx, j, &f) : DOT_OFF;
        if (oon && b == dx->bkt[i * DOT_DIRS + (size_t)j])
            continue;
        if (oon)
            dot_unlink(dx, i, j);
        if (on)
            dot_link(dx, i, j, b);
    }
}

static void dot_free(struct lt_index *ix)
{
    struct dot_index *dx = (struct dot_index *)ix;

    if (dx == NULL)
        return;
    lt_free(dx->head);
    lt_free(dx->bits);
    lt_free(dx->next);
    lt_free(dx->prev);
    lt_free(dx->bkt);
    lt_free(dx);
}

static int dot_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    const struct dot_index *dx = (const struct dot_index *)ix;
    const char *name = ix->policy->name;
    size_t online = 0;

    if (dx->n != c->n)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, dx->n, c->n);
    for (size_t i = 0; i < c->n; i++) {
        struct lt_res f = lt__free(&c->m[i]);
        online += c->m[i].online;
        for (int j = 0; j < DOT_DIRS; j++) {
            uint16_t want = c->m[i].online ? dot_bucket(dx, j, &f) : DOT_OFF;
            if (dx->bkt[i * DOT_DIRS + (size_t)j] != want)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: machine %zu in bucket %u of list %d, expected %u",
                                  name, i, (unsigned)dx->bkt[i * DOT_DIRS + (size_t)j], j,
                                  (unsigned)want);
        }
    }
    for (int j = 0; j < DOT_DIRS; j++) {
        size_t seen = 0;
        uint64_t sum = 0;
        for (uint32_t b = 0; b < DOT_BUCKETS; b++) {
            uint32_t pv = DOT_NONE;
            bool bit = (dx->bits[(size_t)j * DOT_WORDS + b / 64] >> (b % 64)) & 1;
            for (uint32_t i = dx->head[(size_t)j * DOT_BUCKETS + b]; i != DOT_NONE;
                 i = dx->next[(size_t)i * DOT_DIRS + (size_t)j]) {
                if (i >= c->n || dx->bkt[(size_t)i * DOT_DIRS + (size_t)j] != b ||
                    dx->prev[(size_t)i * DOT_DIRS + (size_t)j] != pv || ++seen > online)
                    return lt_err_set(err, LT_EINVAL, 0, 0,
                                      "%s index: list %d bucket %u broken at machine %u", name, j,
                                      (unsigned)b, (unsigned)i);
                pv = i;
            }
            if (bit != (pv != DOT_NONE))
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: list %d bucket %u bit wrong",
                                  name, j, (unsigned)b);
            if (bit)
                sum |= UINT64_C(1) << (b / 64);
        }
        if (seen != online || sum != dx->sum[j])
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s index: list %d holds %zu of %zu online machines", name, j, seen,
                              online);
    }
    return 0;
}

static const struct lt__index_ops dot_ops = {lt__prepare_none, dot_commit, dot_check, dot_free};

int lt__dot_index_new(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                      struct lt_err *err)
{
    struct dot_index *dx = lt_calloc(1, sizeof(*dx));
    size_t slots = c->n * DOT_DIRS;

    if (dx == NULL)
        goto out_nomem;
    dx->base.ops = &dot_ops;
    dx->base.policy = p;
    dx->ref = c->ref;
    dx->n = c->n;
    dx->head = lt_calloc((size_t)DOT_DIRS * DOT_BUCKETS, sizeof(*dx->head));
    dx->bits = lt_calloc((size_t)DOT_DIRS * DOT_WORDS, sizeof(*dx->bits));
    dx->next = lt_calloc(slots > 0 ? slots : 1, sizeof(*dx->next));
    dx->prev = lt_calloc(slots > 0 ? slots : 1, sizeof(*dx->prev));
    dx->bkt = lt_calloc(slots > 0 ? slots : 1, sizeof(*dx->bkt));
    if (dx->head == NULL || dx->bits == NULL || dx->next == NULL || dx->prev == NULL ||
        dx->bkt == NULL)
        goto out_nomem;
    for (size_t h = 0; h < (size_t)DOT_DIRS * DOT_BUCKETS; h++)
        dx->head[h] = DOT_NONE;
    for (int j = 0; j < DOT_DIRS; j++) {
        double v = 0.0;
        for (size_t k = 0; k < c->n_cfg; k++) {
            double pk = dot_proj(j, &c->cfg[k].cap, &c->ref);
            v = pk > v ? pk : v;
        }
        if (!(v > 0.0))
            v = 1.0;
        dx->w[j] = v / DOT_BUCKETS;
        dx->inv_w[j] = DOT_BUCKETS / v;
        dx->vmax = v > dx->vmax ? v : dx->vmax;
    }
    for (size_t i = 0; i < c->n; i++) {
        struct lt_res f = lt__free(&c->m[i]);
        for (int j = 0; j < DOT_DIRS; j++) {
            if (c->m[i].online)
                dot_link(dx, i, j, dot_bucket(dx, j, &f));
            else
                dx->bkt[i * DOT_DIRS + (size_t)j] = DOT_OFF;
        }
    }
    *out = &dx->base;
    return 0;

out_nomem:
    dot_free(dx ? &dx->base : NULL);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

static double dmax0(double x)
{
    return x > 0.0 ? x : 0.0;
}

/* Scores every member of bucket b of list j that fits. */
static void dot_scan(const struct dot_index *dx, const struct lt_cluster *c, int j, uint32_t b,
                     const struct lt_res *r, struct lt__best *best)
{
    for (uint32_t i = dx->head[(size_t)j * DOT_BUCKETS + b]; i != DOT_NONE;
         i = dx->next[(size_t)i * DOT_DIRS + (size_t)j]) {
        const struct lt__machine *m = &c->m[i];
        struct lt_res f = lt__free(m);
        if (lt__res_ge(&f, r))
            lt__best_offer(best, lt__brfs_dot(&m->cap, &f, r, &c->ref), i);
    }
}

__attribute__((flatten)) LT__CHOOSE_DECL(lt__dot_choose_brfs_dot)
{
    const struct dot_index *dx = (const struct dot_index *)ix;
    const struct lt_res *r = &t->req;
    double ux = r->cpu / c->ref.cpu, uy = r->mem / c->ref.mem, det, wt[2], lim[2], pad;
    struct lt__top top = {.k = DOT_TOP_K};
    struct lt__best best = {LT_SCORE_INFEASIBLE, LT_NO_MACHINE, NULL};
    uint32_t b[2];
    int k, side = 0;

    (void)p;
    (void)rng;
    (void)err;
    if (!(ux > 0.0) && !(uy > 0.0)) {
        /* Every machine scores 0: the first one that fits. */
        for (size_t i = 0; i < c->n; i++) {
            if (lt__fits(&c->m[i], r)) {
                *out = i;
                return 0;
            }
        }
        *out = LT_NO_MACHINE;
        return 0;
    }
    if (hint != NULL) {
        if (lt__top_hint_use(hint, ix, &dx->ch, c, r, lt__brfs_dot, out))
            return 0;
        best.top = &top;
    }
    /* The sector of u: the last direction k with u at or counter-clockwise of it. */
    for (k = DOT_DIRS - 2; k > 0 && dot_cos[k] * uy - dot_sin[k] * ux < 0; k--)
        ;
    det = dot_cos[k] * dot_sin[k + 1] - dot_sin[k] * dot_cos[k + 1];
    wt[0] = dmax0((ux * dot_sin[k + 1] - uy * dot_cos[k + 1]) / det);
    wt[1] = dmax0((dot_cos[k] * uy - dot_sin[k] * ux) / det);
    pad = 1e-9 * (wt[0] + wt[1] + ux + uy) * dx->vmax + 1e-300;
    for (int s = 0; s < 2; s++) {
        lim[s] = dot_cos[k + s] * ux + dot_sin[k + s] * uy - 1e-9 * dx->vmax;
        b[s] = dot_below(dx, k + s, DOT_BUCKETS);
    }
    /* A list with weight 0 bounds nothing: walk only the other one. */
    if (!(wt[0] > 0.0))
        side = 1;
    while (b[0] != DOT_NONE && b[1] != DOT_NONE) {
        double u0 = dot_upper(dx, k, b[0]), u1 = dot_upper(dx, k + 1, b[1]);
        if (u0 < lim[0] || u1 < lim[1])
            break;
        /* (u0 or u1 may be +inf, the last bucket's edge: its weight must not be 0 then.) */
        if (-((wt[0] > 0.0 ? wt[0] * u0 : 0.0) + (wt[1] > 0.0 ? wt[1] * u1 : 0.0) + pad) > best.s)
            break;
        dot_scan(dx, c, k + side, b[side], r, &best);
        b[side] = dot_below(dx, k + side, b[side]);
        if (wt[0] > 0.0 && wt[1] > 0.0)
            side ^= 1;
    }
    *out = lt__best_answer(&best);
    lt__top_hint_keep(hint, ix, &dx->ch, r, &best);
    return 0;
}
