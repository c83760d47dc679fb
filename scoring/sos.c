/* sos.c -- sum-of-squares bucket placement (sos10, sos20).
 *
 * Source: Stein, Henzinger, Radovanovic, "Scheduling a Large DataCenter" (Google Research,
 *   June 2009), slides "Sum of Squares" and "Sum of Squares (1-D)".
 * Definition: a machine's bucket is given by its free resources in absolute size: each of
 *   cpu, ram, disk is cut into K equal parts of the cluster's reference capacity (sos10:
 *   K = 10, 10, 5, i.e. 500 buckets; sos20: 20, 20, 5, 2000 buckets). With b(k) the number
 *   of online machines in bucket k, score(i, j) = sum_k b(k)^2 after moving machine i to the
 *   bucket of its free vector minus j's request. Lowest wins.
 * Reading: per dimension bucket = floor(free * K / ref), clamped to [0, K-1], so a machine
 *   whose free amount equals the reference capacity sits in the top bucket. This reproduces
 *   the slide's 1-D example exactly (counts (3,0,1) -> 10; 0.5 GB on M1/M2 -> 6, on M3 -> 8).
 *   The sum runs over all online machines of the cluster, not only the candidates.
 * Ties: lowest machine index. Scores are integers, so ties are common: most tasks leave
 *   most machines in their bucket (score unchanged).
 * Implementation: with S = sum b^2, moving machine i from bucket c to T != c gives
 *   S + 2 (b(T) - b(c) + 1); staying gives S. The index keeps S and the counts
 *   incrementally, and the machines of each bucket in 8 x 8 sub-cells by their position
 *   inside the bucket in cpu and mem (cells.c: sorted by index, with their free vectors and a
 *   box), with each sub-cell's lowest index kept beside the bucket.
 *   Bucket widths are uniform, so a request rho = m + phi bucket widths (per dimension) moves
 *   a machine at offset o inside its bucket m buckets down if o >= phi and m + 1 if o < phi,
 *   whatever the bucket: one classification of the 8 slices per dimension serves every
 *   bucket. A slice clearly on one side of phi is "sure": all members of a sub-cell sure in
 *   both dimensions land in the same bucket (a class: low or high in cpu, in mem), so its
 *   lowest member is its best, in O(1). Only the sub-cells of the slice holding phi straddle;
 *   their boxes often lie on one side anyway, and otherwise their members are classified by
 *   the exact test bucket_after() applies ((f - r) * scale against the bucket m lower),
 *   without branches, only those below the best's index. A bucket whose disk range does not
 *   land in one disk bucket, or that holds free amounts beyond the reference capacity, or a
 *   request within 1e-9 of a whole number of widths, takes the general path: a lower bound
 *   from the box shifted by the request (bucket() is monotone, so the range of targets is
 *   exact), members scored with bucket_after().
 *   choose() bounds every non-empty bucket and takes its sure sub-cells in one pass, then
 *   scans the straddling sub-cells of the buckets that can still beat (or tie with a lower
 *   index) the best, negative bounds first. Cost: O(non-empty buckets) plus the members of
 *   straddling sub-cells below the best's index, independent of the number of machines.
 * Tests: tests/unit/test_sos.c (the DESIGN.md worked example, requests wider than a bucket),
 *   test_property.c (choose equals the naive rank scan on random states).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "lt_mem.h"

#define SOS_MAX_CELLS    2048 /* >= 20 * 20 * 5 (sos20): bounds the stack arrays of choose */
#define NO_CELL          UINT32_MAX
#define SOS_MAX_MACHINES (UINT32_C(1) << 30) /* score changes fit in 32 bits (choose's keys) */

struct sos_params {
    uint32_t k[3]; /* buckets per dimension: cpu, mem, disk */
};

struct sos_geom {
    uint32_t k[3];   /* buckets per dimension */
    double scale[3]; /* k / ref: free amount -> bucket coordinate */
    uint32_t n;      /* k[0] * k[1] * k[2] */
};

static int geom_init(struct sos_geom *g, const struct lt_policy *p, const struct lt_cluster *c,
                     struct lt_err *err)
{
    const struct sos_params *sp = p->params;

    for (int d = 0; d < 3; d++) {
        if (sp->k[d] == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "policy '%s' has zero buckets", p->name);
        g->k[d] = sp->k[d];
    }
    g->n = g->k[0] * g->k[1] * g->k[2];
    if (g->n > SOS_MAX_CELLS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "policy '%s' has %u buckets (limit %d)", p->name,
                          (unsigned)g->n, SOS_MAX_CELLS);
    g->scale[0] = g->k[0] / c->ref.cpu;
    g->scale[1] = g->k[1] / c->ref.mem;
    g->scale[2] = g->k[2] / c->ref.disk;
    return 0;
}

static uint32_t coord(double f, double scale, uint32_t k)
{
    double x = f * scale;

    if (!(x > 0.0))
        return 0;
    if (x >= (double)k)
        return k - 1;
    return (uint32_t)x;
}

static uint32_t bucket3(const struct sos_geom *g, uint32_t a, uint32_t b, uint32_t d)
{
    return (a * g->k[1] + b) * g->k[2] + d;
}

static uint32_t bucket(const struct sos_geom *g, const struct lt_res *f)
{
    return bucket3(g, coord(f->cpu, g->scale[0], g->k[0]), coord(f->mem, g->scale[1], g->k[1]),
                   coord(f->disk, g->scale[2], g->k[2]));
}

/* Bucket of free vector f after placing request r. */
static uint32_t bucket_after(const struct sos_geom *g, const struct lt_res *f,
                             const struct lt_res *r)
{
    struct lt_res a = {f->cpu - r->cpu, f->mem - r->mem, f->disk - r->disk};

    return bucket(g, &a);
}

/* Score change of moving one machine from bucket `from` to `to` (counts before the move). */
static int64_t delta(const uint32_t *count, uint32_t from, uint32_t to)
{
    if (from == to)
        return 0;
    return 2 * ((int64_t)count[to] - (int64_t)count[from] + 1);
}

/* ---- rank: counts from scratch ---- */

static int sos_rank(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                    const size_t *cand, size_t n, struct lt_rng *rng, double *scores,
                    struct lt_err *err)
{
    struct sos_geom g;
    uint32_t count[SOS_MAX_CELLS];
    int64_t sumsq = 0;
    int rc = lt__rank_check(c, cand, n, scores, err);

    (void)rng;
    if (rc < 0 || (rc = geom_init(&g, p, c, err)) < 0)
        return rc;
    memset(count, 0, g.n * sizeof(*count));
    for (size_t i = 0; i < c->n; i++) {
        if (c->m[i].online) {
            struct lt_res f = lt__free(&c->m[i]);
            count[bucket(&g, &f)]++;
        }
    }
    for (uint32_t k = 0; k < g.n; k++)
        sumsq += (int64_t)count[k] * count[k];
    for (size_t k = 0; k < n; k++) {
        const struct lt__machine *m = &c->m[cand[k]];
        struct lt_res f = lt__free(m);

        if (!m->online || !lt__res_ge(&f, &t->req)) {
            scores[k] = LT_SCORE_INFEASIBLE;
            continue;
        }
        scores[k] = (double)(sumsq + delta(count, bucket(&g, &f), bucket_after(&g, &f, &t->req)));
    }
    return 0;
}

/* ---- the index ---- */

#define SUB  8 /* sub-cells per bucket in cpu and in mem */
#define SUB2 (SUB * SUB)

/* A bucket's members live in SUB x SUB sub-cells by their position inside the bucket, so the
 * full machines at a bucket's low corner (which fit few tasks) and the machines near its low
 * edges (the only ones a small task moves to another bucket) are apart from the rest, and a
 * sub-cell's box says which of them can fit and where they can go. */
struct sos_bucket {
    struct lt_res lo, hi; /* union of the sub-cells' boxes (valid when count > 0) */
    uint32_t min_i;       /* the lowest member index (valid when count > 0) */
    uint64_t mask;        /* bit j set iff sub-cell j is non-empty */
    uint32_t smin[SUB2];  /* sub-cell j's lowest member index (UINT32_MAX if empty) */
};

struct sos_index {
    struct lt_index base;
    struct sos_geom geo;
    struct lt__cell *cells;                /* geo.n * SUB2 sub-cells; bucket k's are k * SUB2 + j */
    struct sos_bucket *bkt;                /* per bucket */
    uint32_t *count;                       /* b(k) */
    uint64_t nonempty[SOS_MAX_CELLS / 64]; /* bit k set iff b(k) > 0 */
    uint32_t *cell;                        /* machine -> sub-cell, or NO_CELL if offline */
    size_t n;                              /* machines covered */
    int64_t sumsq;                         /* sum over buckets of b(k)^2 */
    uint8_t (*coord)[2];                   /* bucket -> its cpu and mem coordinates */
};

static uint32_t sub_coord(double f, double scale, uint32_t c)
{
    double x = (f * scale - (double)c) * SUB;

    if (!(x > 0.0))
        return 0;
    if (x >= SUB)
        return SUB - 1;
    return (uint32_t)x;
}

/* Sub-cell of free vector f. */
static uint32_t cell_of(const struct sos_geom *g, const struct lt_res *f)
{
    uint32_t a = coord(f->cpu, g->scale[0], g->k[0]), b = coord(f->mem, g->scale[1], g->k[1]);
    uint32_t d = coord(f->disk, g->scale[2], g->k[2]);

    return bucket3(g, a, b, d) * SUB2 + sub_coord(f->cpu, g->scale[0], a) * SUB +
           sub_coord(f->mem, g->scale[1], b);
}

static void box_join(struct lt_res *lo, struct lt_res *hi, const struct lt__cell *cl)
{
    /* plain comparisons: without -ffinite-math-only, fmin and fmax are calls into libm */
    lo->cpu = cl->lo.cpu < lo->cpu ? cl->lo.cpu : lo->cpu;
    lo->mem = cl->lo.mem < lo->mem ? cl->lo.mem : lo->mem;
    lo->disk = cl->lo.disk < lo->disk ? cl->lo.disk : lo->disk;
    hi->cpu = cl->hi.cpu > hi->cpu ? cl->hi.cpu : hi->cpu;
    hi->mem = cl->hi.mem > hi->mem ? cl->hi.mem : hi->mem;
    hi->disk = cl->hi.disk > hi->disk ? cl->hi.disk : hi->disk;
}

/* Recomputes bucket k's box and lowest member from its sub-cells (O(SUB2)). */
static void bucket_box(struct sos_index *s, uint32_t k)
{
    struct sos_bucket *bk = &s->bkt[k];

    bk->lo.cpu = bk->lo.mem = bk->lo.disk = HUGE_VAL;
    bk->hi.cpu = bk->hi.mem = bk->hi.disk = -HUGE_VAL;
    bk->min_i = UINT32_MAX;
    for (uint64_t m = bk->mask; m != 0; m &= m - 1) {
        const struct lt__cell *cl = &s->cells[k * SUB2 + (uint32_t)__builtin_ctzll(m)];
        box_join(&bk->lo, &bk->hi, cl);
        if (cl->min_i < bk->min_i)
            bk->min_i = cl->min_i;
    }
}

static void cell_add(struct sos_index *s, uint32_t cell, uint32_t i, const struct lt_res *f)
{
    uint32_t k = cell / SUB2;

    s->sumsq += 2 * (int64_t)s->count[k] + 1;
    s->count[k]++;
    s->nonempty[k / 64] |= UINT64_C(1) << (k % 64);
    lt__cell_insert(&s->cells[cell], i, f);
    s->bkt[k].mask |= UINT64_C(1) << (cell % SUB2);
    s->bkt[k].smin[cell % SUB2] = s->cells[cell].min_i;
    bucket_box(s, k);
}

static void cell_del(struct sos_index *s, uint32_t cell, uint32_t i)
{
    uint32_t k = cell / SUB2;

    s->sumsq -= 2 * (int64_t)s->count[k] - 1;
    if (--s->count[k] == 0)
        s->nonempty[k / 64] &= ~(UINT64_C(1) << (k % 64));
    lt__cell_remove(&s->cells[cell], i);
    if (s->cells[cell].n == 0)
        s->bkt[k].mask &= ~(UINT64_C(1) << (cell % SUB2));
    s->bkt[k].smin[cell % SUB2] = s->cells[cell].n > 0 ? s->cells[cell].min_i : UINT32_MAX;
    bucket_box(s, k);
}

static int sos_prepare(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                       const struct lt_res *nf, bool non)
{
    struct sos_index *s = (struct sos_index *)ix;
    uint32_t to;

    (void)c;
    if (!non)
        return 0;
    to = cell_of(&s->geo, nf);
    return to == s->cell[i] ? 0 : lt__cell_reserve(&s->cells[to]);
}

static void sos_commit(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                       const struct lt_res *of, bool oon)
{
    struct sos_index *s = (struct sos_index *)ix;
    struct lt_res f = lt__free(&c->m[i]);
    uint32_t from = s->cell[i], to = c->m[i].online ? cell_of(&s->geo, &f) : NO_CELL;

    (void)of;
    (void)oon;
    if (from == to) {
        if (to != NO_CELL) {
            lt__cell_update(&s->cells[to], (uint32_t)i, &f);
            bucket_box(s, to / SUB2);
        }
        return;
    }
    if (from != NO_CELL)
        cell_del(s, from, (uint32_t)i);
    if (to != NO_CELL)
        cell_add(s, to, (uint32_t)i, &f);
    s->cell[i] = to;
}

static void sos_free(struct lt_index *ix)
{
    struct sos_index *s = (struct sos_index *)ix;

    if (s == NULL)
        return;
    if (s->cells != NULL) {
        for (uint32_t k = 0; k < s->geo.n * SUB2; k++)
            lt__cell_release(&s->cells[k]);
    }
    lt_free(s->cells);
    lt_free(s->bkt);
    lt_free(s->count);
    lt_free(s->cell);
    lt_free(s->coord);
    lt_free(s);
}

static int sos_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    const struct sos_index *s = (const struct sos_index *)ix;
    const char *name = ix->policy->name;
    uint32_t cnt[SOS_MAX_CELLS];
    int64_t sumsq = 0;

    if (s->n != c->n)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, s->n, c->n);
    memset(cnt, 0, s->geo.n * sizeof(*cnt));
    for (size_t i = 0; i < c->n; i++) {
        struct lt_res f = lt__free(&c->m[i]);
        uint32_t want = c->m[i].online ? cell_of(&s->geo, &f) : NO_CELL;
        if (s->cell[i] != want)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu in cell %u, not %u",
                              name, i, (unsigned)s->cell[i], (unsigned)want);
        if (want != NO_CELL)
            cnt[want / SUB2]++;
    }
    for (uint32_t k = 0; k < s->geo.n; k++) {
        const struct sos_bucket *bk = &s->bkt[k];
        bool bit = (s->nonempty[k / 64] >> (k % 64)) & 1;
        uint32_t members = 0, min_i = UINT32_MAX;

        for (uint32_t j = 0; j < SUB2; j++) {
            const struct lt__cell *cl = &s->cells[k * SUB2 + j];
            int rc = lt__cell_check(cl, c, name, err);
            if (rc < 0)
                return rc;
            if (((bk->mask >> j) & 1) != (cl->n > 0) || (cl->n > 0 && bk->smin[j] != cl->mem[0]))
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u mask wrong", name,
                                  (unsigned)k);
            for (uint32_t m = 0; m < cl->n; m++) {
                if (s->cell[cl->mem[m]] != k * SUB2 + j)
                    return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: cell %u holds machine %u",
                                      name, (unsigned)(k * SUB2 + j), (unsigned)cl->mem[m]);
            }
            if (cl->n > 0 && (!lt__res_ge(&cl->lo, &bk->lo) || !lt__res_ge(&bk->hi, &cl->hi)))
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u box too small", name,
                                  (unsigned)k);
            members += cl->n;
            if (cl->n > 0 && cl->mem[0] < min_i)
                min_i = cl->mem[0];
        }
        if (cnt[k] > 0 && min_i != bk->min_i)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u lowest member wrong", name,
                              (unsigned)k);
        if (cnt[k] != s->count[k] || members != cnt[k] || bit != (cnt[k] > 0))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u counts %u, has %u", name,
                              (unsigned)k, (unsigned)s->count[k], (unsigned)cnt[k]);
        sumsq += (int64_t)cnt[k] * cnt[k];
    }
    if (sumsq != s->sumsq)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: sum of squares %lld, recomputed %lld",
                          name, (long long)s->sumsq, (long long)sumsq);
    return 0;
}

static const struct lt__index_ops sos_ops = {sos_prepare, sos_commit, sos_check, sos_free};

static int sos_index_new(const struct lt_policy *p, const struct lt_cluster *c,
                         struct lt_index **out, struct lt_err *err)
{
    struct sos_index *s = lt_calloc(1, sizeof(*s));
    int rc;

    if (s == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
    s->base.ops = &sos_ops;
    s->base.policy = p;
    rc = geom_init(&s->geo, p, c, err);
    if (rc == 0 && c->n > SOS_MAX_MACHINES)
        rc = lt_err_set(err, LT_EINVAL, 0, 0, "policy '%s' supports at most %u machines, not %zu",
                        p->name, (unsigned)SOS_MAX_MACHINES, c->n);
    if (rc < 0) {
        lt_free(s);
        return rc;
    }
    s->n = c->n;
    s->cells = lt_calloc((size_t)s->geo.n * SUB2, sizeof(*s->cells));
    s->bkt = lt_calloc(s->geo.n, sizeof(*s->bkt));
    s->count = lt_calloc(s->geo.n, sizeof(*s->count));
    s->cell = lt_calloc(c->n, sizeof(*s->cell));
    s->coord = lt_calloc(s->geo.n, sizeof(*s->coord));
    if (s->coord == NULL)
        goto out_nomem;
    for (uint32_t k = 0; k < s->geo.n; k++) {
        s->coord[k][0] = (uint8_t)(k / s->geo.k[2] / s->geo.k[1]);
        s->coord[k][1] = (uint8_t)(k / s->geo.k[2] % s->geo.k[1]);
    }
    if (s->cells == NULL || s->bkt == NULL || s->count == NULL || s->cell == NULL)
        goto out_nomem;
    for (size_t i = 0; i < c->n; i++) {
        struct lt_res f = lt__free(&c->m[i]);
        uint32_t k;

        s->cell[i] = NO_CELL;
        if (!c->m[i].online)
            continue;
        k = cell_of(&s->geo, &f);
        if (lt__cell_reserve(&s->cells[k]) < 0)
            goto out_nomem;
        cell_add(s, k, (uint32_t)i, &f);
        s->cell[i] = k;
    }
    *out = &s->base;
    return 0;

out_nomem:
    sos_free(&s->base);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

/* ---- choose ---- */

struct sos_best {
    int64_t d; /* best score change so far */
    size_t i;  /* its machine, or LT_NO_MACHINE */
};

static bool improves(int64_t d, size_t i, const struct sos_best *b)
{
    return d < b->d || (d == b->d && i < b->i);
}

/* Lower bound on the score change of the feasible machines of bucket k whose free vectors lie
 * in the box [lo, hi] (the box shifted by the request, through the monotone bucket map);
 * INT64_MAX if none can fit. */
static int64_t box_bound(const struct sos_index *s, uint32_t k, const struct lt_res *blo,
                         const struct lt_res *bhi, const struct lt_res *r)
{
    const struct sos_geom *g = &s->geo;
    struct lt_res lo, hi;
    uint32_t a0, a1, b0, b1, d0, d1;
    int64_t best = INT64_MAX;

    if (!lt__res_ge(bhi, r))
        return INT64_MAX;
    lo.cpu = (blo->cpu > r->cpu ? blo->cpu : r->cpu) - r->cpu;
    lo.mem = (blo->mem > r->mem ? blo->mem : r->mem) - r->mem;
    lo.disk = (blo->disk > r->disk ? blo->disk : r->disk) - r->disk;
    hi.cpu = bhi->cpu - r->cpu;
    hi.mem = bhi->mem - r->mem;
    hi.disk = bhi->disk - r->disk;
    a0 = coord(lo.cpu, g->scale[0], g->k[0]);
    a1 = coord(hi.cpu, g->scale[0], g->k[0]);
    b0 = coord(lo.mem, g->scale[1], g->k[1]);
    b1 = coord(hi.mem, g->scale[1], g->k[1]);
    d0 = coord(lo.disk, g->scale[2], g->k[2]);
    d1 = coord(hi.disk, g->scale[2], g->k[2]);
    for (uint32_t a = a0; a <= a1; a++) {
        for (uint32_t b = b0; b <= b1; b++) {
            for (uint32_t d = d0; d <= d1; d++) {
                int64_t v = delta(s->count, k, bucket3(g, a, b, d));
                if (v < best)
                    best = v;
            }
        }
    }
    return best;
}

/* Scans the sub-cells of bucket k, whose bound is kb: each is skipped when the bucket's bound
 * or its own box shows that none of its machines fits or beats the best; otherwise its
 * members are scored in index order. */
static void scan_bucket(const struct sos_index *s, uint32_t k, uint64_t mask, int64_t kb,
                        const struct lt_res *r, struct sos_best *b)
{
    for (uint64_t m = mask; m != 0; m &= m - 1) {
        const struct lt__cell *cl = &s->cells[k * SUB2 + (uint32_t)__builtin_ctzll(m)];
        int64_t bound;
        uint32_t n;

        if (!improves(kb, cl->min_i, b))
            continue;
        bound = box_bound(s, k, &cl->lo, &cl->hi, r);
        if (bound == INT64_MAX || !improves(bound, cl->mem[0], b))
            continue;
        n = lt__cell_is_point(cl) ? 1 : cl->n; /* a point cell: all alike, first wins */
        for (uint32_t j = 0; j < n; j++) {
            uint32_t i = cl->mem[j];
            struct lt_res f;
            int64_t d;

            if (!improves(bound, i, b))
                break; /* later members cannot beat the best, nor tie it with a lower index */
            f = cl->f[j];
            if (!lt__res_ge(&f, r))
                continue;
            d = delta(s->count, k, bucket_after(&s->geo, &f, r));
            if (improves(d, i, b)) {
                b->d = d;
                b->i = i;
            }
        }
    }
}

/* The request's effect on the sub-cells, the same for every bucket (bucket widths are uniform):
 * in cpu and in mem, with the request rho = m + phi bucket widths (m whole, 0 <= phi < 1), a
 * machine at offset o inside its bucket lands m buckets lower if o >= phi and m + 1 if
 * o < phi. A slice of sub-cells whose offsets all lie clearly on one side (by SLICE_EPS, far
 * above rounding) is "sure": every member of a sure sub-cell lands in the same bucket, so
 * the sub-cell's lowest member is its best. The slice holding phi straddles: its sub-cells are
 * scanned. */
#define SLICE_EPS 1e-9
/* Score changes are even numbers of magnitude at most 2 (machines + 1) < 2^31: biased, they
 * pack above a 32-bit machine index into one unsigned key ordered as (change, index). */
#define KEY_BIAS ((int64_t)1 << 31)
#define FAST_BIT 0x8000u /* in choose's bucket list: the bucket takes the fast path */

struct sos_query {
    bool ok;             /* false: rho is within SLICE_EPS of a whole number (general path) */
    uint64_t cls[4];     /* sure sub-cells by class: bit 0 cpu low (o < phi), bit 1 mem low */
    uint64_t straddle;   /* the other sub-cells */
    uint64_t ext[4];     /* sub-cells that may hold members of each class (sure or straddling) */
    uint64_t low[2];     /* per dimension: sub-cells whose slice is surely below phi */
    uint64_t sure[2];    /* per dimension: sub-cells whose slice is sure (above or below) */
    uint32_t drop[2][2]; /* [dim][low]: buckets dropped, m + low */
};

static void query_init(struct sos_query *q, const struct sos_geom *g, const struct lt_res *r)
{
    const double req[2] = {r->cpu, r->mem};
    uint64_t hi[2] = {0, 0}, lo[2] = {0, 0};

    memset(q, 0, sizeof(*q));
    q->ok = true;
    for (int d = 0; d < 2; d++) {
        double rho = req[d] * g->scale[d], m = floor(rho), phi = rho - m;

        if (!(rho >= 0.0) || rho >= (double)g->k[d] || (req[d] > 0.0 && phi < SLICE_EPS) ||
            phi > 1.0 - SLICE_EPS) {
            q->ok = false;
            return;
        }
        q->drop[d][0] = (uint32_t)m;
        q->drop[d][1] = (uint32_t)m + 1;
        for (uint32_t sl = 0; sl < SUB; sl++) {
            uint64_t line =
                d == 0 ? UINT64_C(0xFF) << (SUB * sl) : UINT64_C(0x0101010101010101) << sl;
            if ((double)sl / SUB >= phi + SLICE_EPS)
                hi[d] |= line;
            else if ((double)(sl + 1) / SUB <= phi - SLICE_EPS)
                lo[d] |= line;
        }
    }
    for (int d = 0; d < 2; d++) {
        q->low[d] = lo[d];
        q->sure[d] = lo[d] | hi[d];
    }
    q->cls[0] = hi[0] & hi[1];
    q->cls[1] = lo[0] & hi[1];
    q->cls[2] = hi[0] & lo[1];
    q->cls[3] = lo[0] & lo[1];
    q->straddle = ~(q->cls[0] | q->cls[1] | q->cls[2] | q->cls[3]);
    for (int d = 0; d < 2; d++) {
        uint64_t mid = ~(hi[d] | lo[d]);
        hi[d] |= mid;
        lo[d] |= mid;
    }
    q->ext[0] = hi[0] & hi[1];
    q->ext[1] = lo[0] & hi[1];
    q->ext[2] = hi[0] & lo[1];
    q->ext[3] = lo[0] & lo[1];
}

/* Bucket k's facts for the fast path: its coordinates, the disk bucket all its members land
 * in, and the sub-cells whose members may lie beyond the reference capacity (a bucket with
 * such members takes the general path). */
struct sos_fb {
    uint32_t ca, cb, td;
    uint64_t unsure;
};

/* False if the bucket's disk range does not map to one disk bucket (the general path). */
static bool fast_prep(const struct sos_index *s, uint32_t k, const struct lt_res *r,
                      struct sos_fb *fb)
{
    const struct sos_geom *g = &s->geo;
    const struct sos_bucket *bk = &s->bkt[k];

    if (!(bk->lo.disk >= r->disk))
        return false;
    fb->td = coord(bk->lo.disk - r->disk, g->scale[2], g->k[2]);
    if (fb->td != coord(bk->hi.disk - r->disk, g->scale[2], g->k[2]))
        return false;
    fb->ca = s->coord[k][0];
    fb->cb = s->coord[k][1];
    fb->unsure = 0;
    /* A top bucket also holds the free amounts beyond the reference capacity (clamped into its
     * last slice), which may drop fewer buckets: that slice is sure only when none is there. */
    if (fb->ca == g->k[0] - 1 && !(bk->hi.cpu * g->scale[0] <= (double)g->k[0]))
        fb->unsure |= UINT64_C(0xFF) << (SUB * (SUB - 1));
    if (fb->cb == g->k[1] - 1 && !(bk->hi.mem * g->scale[1] <= (double)g->k[1]))
        fb->unsure |= UINT64_C(0x0101010101010101) << (SUB - 1);
    return true;
}

/* Score change of class c's members in bucket k; INT64_MAX if they cannot fit. */
static int64_t class_delta(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                           const struct sos_fb *fb, uint32_t c)
{
    uint32_t da = q->drop[0][c & 1], db = q->drop[1][c >> 1];

    if (da > fb->ca || db > fb->cb)
        return INT64_MAX;
    return delta(s->count, k, bucket3(&s->geo, fb->ca - da, fb->cb - db, fb->td));
}

/* The score change of each class in bucket k (INT64_MAX: cannot fit). */
static void class_deltas(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                         const struct sos_fb *fb, int64_t cd[4])
{
    for (uint32_t c = 0; c < 4; c++)
        cd[c] = class_delta(s, q, k, fb, c);
}

/* Bucket k's sure sub-cells (O(1) each). */
static void fast_sure(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                      const struct sos_fb *fb, const int64_t cd[4], struct sos_best *b)
{
    const struct sos_bucket *bk = &s->bkt[k];

    for (uint32_t c = 0; c < 4; c++) {
        uint64_t m = q->cls[c] & bk->mask & ~fb->unsure;
        uint32_t mi = UINT32_MAX;

        if (m == 0 || cd[c] == INT64_MAX || !improves(cd[c], bk->min_i, b))
            continue;
        for (; m != 0; m &= m - 1) {
            uint32_t v = bk->smin[__builtin_ctzll(m)];
            mi = v < mi ? v : mi;
        }
        if (improves(cd[c], mi, b)) {
            b->d = cd[c];
            b->i = mi;
        }
    }
}

/* Bucket k's straddling sub-cells: a member's class is its sub-cell's in a sure dimension,
 * and in a straddling one whether it drops the extra bucket, computed exactly as bucket_after
 * computes it ((f - r) * scale against the bucket m lower). */
static void fast_scan(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                      const struct sos_fb *fb, const int64_t cd[4], int64_t kb,
                      const struct lt_res *r, struct sos_best *b)
{
    const struct sos_bucket *bk = &s->bkt[k];
    double tx = (double)fb->ca - (double)q->drop[0][0];
    double ty = (double)fb->cb - (double)q->drop[1][0];
    double sx = s->geo.scale[0], sy = s->geo.scale[1];

    for (uint64_t m = q->straddle & bk->mask & ~fb->unsure; m != 0; m &= m - 1) {
        uint32_t j = (uint32_t)__builtin_ctzll(m), base, n;
        uint64_t bit = UINT64_C(1) << j;
        bool xs = (q->sure[0] & bit) != 0, ys = (q->sure[1] & bit) != 0;
        const struct lt__cell *cl;
        int64_t bound = INT64_MAX;

        if (!improves(kb, bk->smin[j], b))
            continue; /* nothing here can beat the best */
        base = ((q->low[0] & bit) ? 1u : 0u) | ((q->low[1] & bit) ? 2u : 0u);
        cl = &s->cells[k * SUB2 + j];
        if (!lt__res_ge(&cl->hi, r))
            continue; /* no member fits */
        /* The box may lie on one side of the straddling line (the members' own test, applied
         * to the box's corners, is monotone): then the dimension is sure here too. */
        if (!xs && (xs = (cl->lo.cpu - r->cpu) * sx >= tx || (cl->hi.cpu - r->cpu) * sx < tx))
            base |= (cl->hi.cpu - r->cpu) * sx < tx ? 1u : 0u;
        if (!ys && (ys = (cl->lo.mem - r->mem) * sy >= ty || (cl->hi.mem - r->mem) * sy < ty))
            base |= (cl->hi.mem - r->mem) * sy < ty ? 2u : 0u;
        if (xs && ys && lt__res_ge(&cl->lo, r)) {
            /* every member fits and lands in one class: the lowest is the sub-cell's best */
            if (improves(cd[base], cl->min_i, b)) {
                b->d = cd[base];
                b->i = cl->min_i;
            }
            continue;
        }
        for (uint32_t c = 0; c < 4; c++) {
            if ((xs && (c & 1) != (base & 1)) || (ys && (c & 2) != (base & 2)))
                continue;
            bound = cd[c] < bound ? cd[c] : bound;
        }
        if (bound == INT64_MAX || !improves(bound, bk->smin[j], b))
            continue;
        n = lt__cell_is_point(cl) ? 1 : cl->n; /* a point cell: all alike, first wins */
        /* Members below the best's index (all of them if the bound beats the best's change),
         * each scored without branches: (change, index) packed into one key, infeasible
         * members at the largest key. */
        if (bound == b->d && b->i != LT_NO_MACHINE) {
            uint32_t lo = 0, hi = n;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (cl->mem[mid] < b->i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            n = lo;
        }
        {
            uint64_t best = UINT64_MAX, key[4];
            uint32_t mx = xs ? 0u : 1u, my = ys ? 0u : 2u;

            for (uint32_t c = 0; c < 4; c++)
                key[c] = cd[c] == INT64_MAX ? UINT64_MAX : (uint64_t)(cd[c] + KEY_BIAS) << 32;
            for (uint32_t e = 0; e < n; e++) {
                const struct lt_res *f = &cl->f[e];
                uint32_t c = base | (((f->cpu - r->cpu) * sx < tx) ? mx : 0u) |
                             (((f->mem - r->mem) * sy < ty) ? my : 0u);
                uint64_t v = key[c] | cl->mem[e];
                bool fits = f->cpu >= r->cpu && f->mem >= r->mem && f->disk >= r->disk;

                v = fits ? v : UINT64_MAX;
                best = v < best ? v : best;
            }
            if (best != UINT64_MAX) {
                int64_t d = (int64_t)(best >> 32) - KEY_BIAS;
                uint32_t i = (uint32_t)best;
                if (improves(d, i, b)) {
                    b->d = d;
                    b->i = i;
                }
            }
        }
    }
}

static int sos_choose(const struct lt_policy *p, const struct lt_index *ix,
                      const struct lt_cluster *c, const struct lt_task *t, struct lt_rng *rng,
                      size_t *out, struct lt_err *err)
{
    const struct sos_index *s = (const struct sos_index *)ix;
    int64_t lb[SOS_MAX_CELLS];
    uint16_t id[SOS_MAX_CELLS];
    struct sos_fb fbs[SOS_MAX_CELLS]; /* fast-path facts of listed bucket j (FAST_BIT set) */
    struct sos_best b = {INT64_MAX, LT_NO_MACHINE};
    struct sos_query q;
    size_t n = 0;

    (void)c;
    (void)p;
    (void)rng;
    (void)err;
    query_init(&q, &s->geo, &t->req);
    /* Pass 1: every non-empty bucket's bound, and at once its sure sub-cells (O(1) each), so
     * that the best is already close when the scans start; a bucket that may still improve
     * it through straddling sub-cells (or the general path) is listed. */
    for (uint32_t w = 0; w < (s->geo.n + 63) / 64; w++) {
        for (uint64_t bits = s->nonempty[w]; bits != 0; bits &= bits - 1) {
            uint32_t k = w * 64 + (uint32_t)__builtin_ctzll(bits);
            const struct sos_bucket *bk = &s->bkt[k];
            struct sos_fb *fb = &fbs[n];
            int64_t v, cd[4];

            if (!(q.ok && fast_prep(s, k, &t->req, fb) && !(fb->unsure & bk->mask))) {
                v = box_bound(s, k, &bk->lo, &bk->hi, &t->req);
                if (v != INT64_MAX && improves(v, bk->min_i, &b)) {
                    lb[n] = v;
                    id[n++] = (uint16_t)k;
                }
                continue;
            }
            class_deltas(s, &q, k, fb, cd);
            v = INT64_MAX;
            for (uint32_t cl = 0; cl < 4; cl++) {
                if ((q.ext[cl] & bk->mask) && cd[cl] < v)
                    v = cd[cl];
            }
            if (v == INT64_MAX || !improves(v, bk->min_i, &b))
                continue;
            fast_sure(s, &q, k, fb, cd, &b);
            if ((q.straddle & bk->mask) && improves(v, bk->min_i, &b)) {
                lb[n] = v;
                id[n++] = (uint16_t)(k | FAST_BIT);
            }
        }
    }
    /* Pass 2: the listed buckets' scans, lowest bounds first (negative changes are rare and
     * decide the answer when they exist). */
    for (int neg = 1; neg >= 0; neg--) {
        for (size_t j = 0; j < n; j++) {
            uint32_t k = id[j] & ~FAST_BIT;
            int64_t cd[4];

            if ((lb[j] < 0) != (neg == 1) || !improves(lb[j], s->bkt[k].min_i, &b))
                continue;
            if (id[j] & FAST_BIT) {
                class_deltas(s, &q, k, &fbs[j], cd);
                fast_scan(s, &q, k, &fbs[j], cd, lb[j], &t->req, &b);
            } else {
                scan_bucket(s, k, s->bkt[k].mask, lb[j], &t->req, &b);
            }
        }
    }
    *out = b.i;
    return 0;
}

static const struct sos_params sos10 = {{10, 10, 5}};
static const struct sos_params sos20 = {{20, 20, 5}};

const struct lt_policy lt__sos10_policy = {"sos10", sos_rank, sos_choose, sos_index_new, &sos10};
const struct lt_policy lt__sos20_policy = {"sos20", sos_rank, sos_choose, sos_index_new, &sos20};

/* Test hook: a sum-of-squares policy with any bucket counts (the DESIGN.md 1-D example uses
 * 1 x 3 x 1). Fills *p, whose params live in *storage; both must outlive the policy's use. */
void lt__sos_policy_init(struct lt_policy *p, void *storage, const char *name, uint32_t k_cpu,
                         uint32_t k_mem, uint32_t k_disk)
{
    struct sos_params *sp = storage;

    sp->k[0] = k_cpu;
    sp->k[1] = k_mem;
    sp->k[2] = k_disk;
    p->name = name;
    p->rank = sos_rank;
    p->choose = sos_choose;
    p->index_new = sos_index_new;
    p->params = sp;
}
