/* sos.c -- sum-of-squares bucket placement (sos10, sos20).
 *
 * Source: Stein, Henzinger, Radovanovic, "Scheduling a Large DataCenter" (Google Research,
 *   June 2009), slides "Sum of Squares" and "Sum of Squares (1-D)"; docs/policies.md.
 * Definition: every online machine sits in a bucket by its free cpu, ram and disk, each cut
 *   into K equal parts of the reference capacity (sos10: K = 10, 10, 5; sos20: 20, 20, 5).
 *   Task j on machine i scores sum_k b(k)^2 after i moves to the bucket of its free vector
 *   minus j's request. Lowest wins; ties go to the lowest machine index.
 * Reading: bucket = floor(free * K / ref) per dimension, clamped to [0, K - 1] (free == ref
 *   is in the top bucket), which reproduces the slide's 1-D example; b(k) counts every online
 *   machine, not only the candidates ranked.
 * Index: moving i from bucket c to T != c changes S = sum b^2 by 2 (b(T) - b(c) + 1), so the
 *   counts decide, and members of one bucket that land in one target tie: their lowest index
 *   wins. Widths are uniform, so a request drops a machine m or m + 1 buckets per dimension
 *   by its offset inside its bucket alone: one classification of the slices per request
 *   serves every bucket. Buckets are visited by their bound, lowest first, while it can beat
 *   the best; inside one, sure sub-cells answer in O(1) and only straddling ones are scanned.
 *   choose_small takes small requests: the walk's stayer, then only neg and zero buckets;
 *   choose_rounds the other requests that leave every disk bucket alone; choose_full the rest
 *   (large disk requests, requests within SLICE_EPS of a whole number of widths). Cost:
 *   O(non-empty buckets) at most, plus the straddling members below the best's index.
 * Glossary:
 *   bucket       a cell of the grid of free vectors (K a dimension); b(k): its online machines
 *   sub-cell     one of a bucket's SUB x SUB parts by offset inside it in cpu and mem: a
 *                cells.c set (index order, free vectors, box)
 *   slice        a row of sub-cells in one dimension: offsets in [s, s + 1) / SUB of a width
 *   class        where a member lands: bit 0 set if cpu drops the extra bucket (offset below
 *                the request's fraction), bit 1 the same for mem; one class, one score change
 *   sure         a slice clearly (by SLICE_EPS) on one side of the request's fraction, so its
 *                members' class is known in that dimension
 *   straddling   a sub-cell not sure in both dimensions: its box, or its members, decide
 *   odd          a machine with free beyond the reference capacity or within DISK_SAFE of
 *                its disk bucket's low edge: its bucket is always scored in full
 *   small        a request under one width in cpu and mem and DISK_SAFE of one in disk
 *   stayer       a machine a small request leaves in its bucket (score change 0)
 *   walk         sos_walk.c: the machines that are not odd, in index order, with their
 *                quantised offsets, for the lowest stayer
 *   block        64 consecutive machines of the walk (LT__WALK_BLOCK), with a summary
 *   super-block  8 consecutive blocks, with an upper bound of their summaries
 *   hint         lt_choose_hint: the walk's last stayer for a request, so that the next walk
 *                for the same request starts there (or at a machine changed since)
 *   neg, zero    bucket k for class c when b(k - e_c) <= b(k) - 2 (a move lowers the score)
 *                or == b(k) - 1 (a move ties with staying); kept as bitsets with the counts
 *   bound        a lower bound of the score change of a bucket's or sub-cell's members, from
 *                the counts and a box shifted by the request (the bucket map is monotone)
 * Tests: tests/unit/scoring/test_sos.c (the DESIGN.md worked example, requests wider than a
 *   bucket, small requests on crowded clusters, hints), test_sos_walk.c (the walk and its
 *   checker), test_property.c (choose equals the naive rank scan on random states).
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
                    const size_t *cand, size_t n, unsigned flags, struct lt_rng *rng,
                    double *scores, struct lt_err *err)
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
        struct lt_res f;

        /* A component raised to 0 by LT_RANK_REQUESTED stays in its bucket: coord() puts
         * every free amount <= 0 in bucket 0, as the counts above did. */
        if (!lt__rank_free(m, &t->req, flags, &f)) {
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
    struct lt_res lo, hi; /* holds every member's free vector (when count > 0); may be loose */
    uint32_t min_i;       /* the lowest member index (valid when count > 0) */
    uint32_t loose;       /* removals and moves inside since the box was recomputed */
    uint64_t mask;        /* bit j set iff sub-cell j is non-empty */
    uint32_t smin[SUB2];  /* sub-cell j's lowest member index (UINT32_MAX if empty) */
};

/* Small requests (under one bucket width in cpu and mem, and a sliver of disk) move a
 * machine at most one bucket down per dimension, to k - e_c for its class c (bit 0: cpu drops,
 * bit 1: mem drops; e_1, e_2, e_3 the unit moves), and machines of class 0 stay. Only moves to
 * emptier buckets (b(k - e_c) <= b(k) - 2, "neg") lower the score; moves to a bucket with one
 * machine fewer ("zero") tie with staying. choose then needs only the buckets that are neg or
 * zero for a class their members can be in (a member in a low slice), kept in bitsets updated
 * with the counts, and the lowest-index stayer of the whole cluster, found by the walk
 * (sos_walk.c) over the machines in index order and their offsets inside their buckets. An
 * "odd" machine (free beyond the reference capacity, or less than DISK_SAFE of a disk bucket
 * above its disk bucket's low edge) breaks these shortcuts: its bucket is always scored in
 * full and the walk skips it. */
#define DISK_SAFE (1.0 / 16)

struct sos_index {
    struct lt_index base;
    struct sos_geom geo;
    struct lt__cell *cells;                /* geo.n * SUB2 sub-cells; bucket k's are k * SUB2 + j */
    struct sos_bucket *bkt;                /* per bucket */
    uint32_t *count;                       /* b(k) */
    uint64_t nonempty[SOS_MAX_CELLS / 64]; /* bit k set iff b(k) > 0 */
    uint64_t used[SOS_MAX_CELLS / 64];     /* bit k set once a sub-cell of bucket k reserved
                                            * room: the others hold nothing and own nothing,
                                            * so the checker and sos_free skip them */
    uint32_t *cell;                        /* machine -> sub-cell, or NO_CELL if offline */
    size_t n;                              /* machines covered */
    int64_t sumsq;                         /* sum over buckets of b(k)^2 */
    uint8_t (*coord)[2];                   /* bucket -> its cpu and mem coordinates */
    /* The small-request structures (the comment above). */
    uint64_t neg[3][SOS_MAX_CELLS / 64];      /* [c - 1]: b(k - e_c) <= b(k) - 2 */
    uint64_t zero[3][SOS_MAX_CELLS / 64];     /* [c - 1]: b(k - e_c) == b(k) - 1 */
    uint64_t low[2][SUB][SOS_MAX_CELLS / 64]; /* [dim][s]: a member in a slice <= s */
    uint64_t oddb[SOS_MAX_CELLS / 64];        /* bit k set iff bucket k has an odd member */
    uint8_t (*lows)[2];                       /* bucket -> lowest occupied slice in cpu, mem */
    uint32_t *nodd;                           /* bucket -> odd members */
    struct lt__sos_walk walk; /* machines in index order, for the lowest stayer (sos_walk.c) */
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

/* ---- the small-request structures ---- */

static void bit_put(uint64_t *set, uint32_t k, bool on)
{
    uint64_t bit = UINT64_C(1) << (k % 64);

    set[k / 64] = on ? set[k / 64] | bit : set[k / 64] & ~bit;
}

/* Whether bucket k is neg, zero for class c (1..3): the counts of k and of k - e_c. */
static void nz_bits(const struct sos_index *s, uint32_t k, uint32_t c, bool *neg, bool *zero)
{
    const struct sos_geom *g = &s->geo;
    uint32_t da = c & 1, db = c >> 1, t;

    *neg = *zero = false;
    if (da > s->coord[k][0] || db > s->coord[k][1])
        return; /* class c would leave the grid: its members cannot fit */
    t = k - (da * g->k[1] + db) * g->k[2];
    *neg = s->count[t] + 2 <= s->count[k];
    *zero = s->count[t] + 1 == s->count[k];
}

/* b(k) changed: the bits of k and of the buckets k is a target of. */
static void nz_count_changed(struct sos_index *s, uint32_t k)
{
    const struct sos_geom *g = &s->geo;

    for (uint32_t c = 1; c < 4; c++) {
        uint32_t da = c & 1, db = c >> 1;
        bool neg, zero;

        nz_bits(s, k, c, &neg, &zero);
        bit_put(s->neg[c - 1], k, neg);
        bit_put(s->zero[c - 1], k, zero);
        if (s->coord[k][0] + da < g->k[0] && s->coord[k][1] + db < g->k[1]) {
            uint32_t up = k + (da * g->k[1] + db) * g->k[2];
            nz_bits(s, up, c, &neg, &zero);
            bit_put(s->neg[c - 1], up, neg);
            bit_put(s->zero[c - 1], up, zero);
        }
    }
}

/* The lowest occupied cpu and mem slices of a sub-cell mask (SUB if empty). */
static void mask_lows(uint64_t m, uint32_t lo[2])
{
    uint64_t x = m | m >> 32;

    x |= x >> 16;
    x |= x >> 8;
    lo[0] = m != 0 ? (uint32_t)__builtin_ctzll(m) / SUB : SUB;
    lo[1] = m != 0 ? (uint32_t)__builtin_ctzll(x & 0xFF) : SUB;
}

/* Bucket k's mask changed: its lowest slices and the low bitsets. */
static void low_update(struct sos_index *s, uint32_t k)
{
    uint32_t lo[2];

    mask_lows(s->bkt[k].mask, lo);
    for (int d = 0; d < 2; d++) {
        if (lo[d] == s->lows[k][d])
            continue;
        for (uint32_t sl = 0; sl < SUB; sl++)
            bit_put(s->low[d][sl], k, sl >= lo[d]);
        s->lows[k][d] = (uint8_t)lo[d];
    }
}

/* True if free vector f, in a bucket with coordinates a, b, d, is odd; otherwise its offsets
 * inside the bucket in cpu and mem (in bucket widths, 0 at the low edge) go to off. */
static bool offsets(const struct sos_geom *g, const struct lt_res *f, uint32_t a, uint32_t b,
                    uint32_t d, double off[2])
{
    double x = f->cpu * g->scale[0], y = f->mem * g->scale[1], z = f->disk * g->scale[2];

    if (!(x >= 0.0 && x <= (double)g->k[0] && y >= 0.0 && y <= (double)g->k[1] &&
          z >= (double)d + DISK_SAFE && z <= (double)g->k[2]))
        return true;
    off[0] = x - (double)a;
    off[1] = y - (double)b;
    return false;
}

static void odd_add(struct sos_index *s, uint32_t k, bool add)
{
    s->nodd[k] = add ? s->nodd[k] + 1 : s->nodd[k] - 1;
    bit_put(s->oddb, k, s->nodd[k] > 0);
}

/* Machine i went from sub-cell `from` to `to` (NO_CELL: offline) with free vector f: its odd
 * count and its walk entry. An online machine is odd exactly when the walk does not walk it. */
static void walk_move(struct sos_index *s, uint32_t i, uint32_t from, uint32_t to,
                      const struct lt_res *f)
{
    double off[2];
    bool walked = false;

    if (from != NO_CELL && !lt__sos_walk_has(&s->walk, i))
        odd_add(s, from / SUB2, false);
    if (to != NO_CELL) {
        uint32_t k = to / SUB2;

        walked = !offsets(&s->geo, f, s->coord[k][0], s->coord[k][1], k % s->geo.k[2], off);
        if (!walked)
            odd_add(s, k, true);
    }
    lt__sos_walk_set(&s->walk, i, walked ? off : NULL);
}

/* The box [lo, hi] grows to hold the box [alo, ahi]. */
static void box_join(struct lt_res *lo, struct lt_res *hi, const struct lt_res *alo,
                     const struct lt_res *ahi)
{
    /* plain comparisons: without -ffinite-math-only, fmin and fmax are calls into libm */
    lo->cpu = alo->cpu < lo->cpu ? alo->cpu : lo->cpu;
    lo->mem = alo->mem < lo->mem ? alo->mem : lo->mem;
    lo->disk = alo->disk < lo->disk ? alo->disk : lo->disk;
    hi->cpu = ahi->cpu > hi->cpu ? ahi->cpu : hi->cpu;
    hi->mem = ahi->mem > hi->mem ? ahi->mem : hi->mem;
    hi->disk = ahi->disk > hi->disk ? ahi->disk : hi->disk;
}

/* The lowest of the sub-cell minima of bucket bk's sub-cells in mask m (UINT32_MAX if none). */
static uint32_t smin_of(const struct sos_bucket *bk, uint64_t m)
{
    uint32_t mi = UINT32_MAX;

    for (; m != 0; m &= m - 1) {
        uint32_t v = bk->smin[__builtin_ctzll(m)];
        mi = v < mi ? v : mi;
    }
    return mi;
}

/* Recomputes bucket k's box (the union of its sub-cells' boxes) and lowest member (O(SUB2)). */
static void bucket_box(struct sos_index *s, uint32_t k)
{
    struct sos_bucket *bk = &s->bkt[k];

    bk->loose = 0;
    bk->lo.cpu = bk->lo.mem = bk->lo.disk = HUGE_VAL;
    bk->hi.cpu = bk->hi.mem = bk->hi.disk = -HUGE_VAL;
    bk->min_i = UINT32_MAX;
    for (uint64_t m = bk->mask; m != 0; m &= m - 1) {
        const struct lt__cell *cl = &s->cells[k * SUB2 + (uint32_t)__builtin_ctzll(m)];
        box_join(&bk->lo, &bk->hi, &cl->lo, &cl->hi);
        if (cl->min_i < bk->min_i)
            bk->min_i = cl->min_i;
    }
}

/* A member of bucket k left its place (removed, or moved inside the bucket): the box may be
 * loose, a valid bound that prunes less; it is recomputed once more changes than members have
 * piled up, O(1) amortised, as cells.c does for cells. */
static void bucket_loosen(struct sos_index *s, uint32_t k)
{
    if (++s->bkt[k].loose > s->count[k])
        bucket_box(s, k);
}

/* Machine i joins sub-cell `cell` with free vector f. nz: the bucket's count changes for
 * good (false when the machine only moves between two sub-cells of one bucket: cell_del and
 * cell_add then leave the counts, so the neg and zero bits, as they were). */
static void cell_add(struct sos_index *s, uint32_t cell, uint32_t i, const struct lt_res *f,
                     bool nz)
{
    uint32_t k = cell / SUB2;
    struct sos_bucket *bk = &s->bkt[k];

    s->sumsq += 2 * (int64_t)s->count[k] + 1;
    s->count[k]++;
    s->nonempty[k / 64] |= UINT64_C(1) << (k % 64);
    lt__cell_insert(&s->cells[cell], i, f);
    bk->mask |= UINT64_C(1) << (cell % SUB2);
    bk->smin[cell % SUB2] = s->cells[cell].min_i;
    if (s->count[k] == 1) {
        bk->lo = bk->hi = *f;
        bk->min_i = i;
        bk->loose = 0;
    } else {
        box_join(&bk->lo, &bk->hi, f, f);
        bk->min_i = i < bk->min_i ? i : bk->min_i;
    }
    if (nz)
        nz_count_changed(s, k);
    low_update(s, k);
}

/* Machine i leaves sub-cell `cell` (nz as for cell_add). */
static void cell_del(struct sos_index *s, uint32_t cell, uint32_t i, bool nz)
{
    uint32_t k = cell / SUB2;
    struct sos_bucket *bk = &s->bkt[k];

    s->sumsq -= 2 * (int64_t)s->count[k] - 1;
    if (--s->count[k] == 0)
        s->nonempty[k / 64] &= ~(UINT64_C(1) << (k % 64));
    lt__cell_remove(&s->cells[cell], i);
    if (s->cells[cell].n == 0)
        bk->mask &= ~(UINT64_C(1) << (cell % SUB2));
    bk->smin[cell % SUB2] = s->cells[cell].n > 0 ? s->cells[cell].min_i : UINT32_MAX;
    if (s->count[k] > 0 && i == bk->min_i)
        bk->min_i = smin_of(bk, bk->mask);
    if (s->count[k] > 0)
        bucket_loosen(s, k);
    if (nz)
        nz_count_changed(s, k);
    low_update(s, k);
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
    if (to == s->cell[i])
        return 0;
    bit_put(s->used, to / SUB2, true);
    return lt__cell_reserve(&s->cells[to]);
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
            box_join(&s->bkt[to / SUB2].lo, &s->bkt[to / SUB2].hi, &f, &f);
            bucket_loosen(s, to / SUB2);
        }
    } else {
        if (from != NO_CELL)
            cell_del(s, from, (uint32_t)i, to == NO_CELL || to / SUB2 != from / SUB2);
        if (to != NO_CELL)
            cell_add(s, to, (uint32_t)i, &f, from == NO_CELL || to / SUB2 != from / SUB2);
        s->cell[i] = to;
    }
    walk_move(s, (uint32_t)i, from, to, &f);
    lt__sos_walk_note(&s->walk, (uint32_t)i);
}

static void sos_free(struct lt_index *ix)
{
    struct sos_index *s = (struct sos_index *)ix;

    if (s == NULL)
        return;
    for (uint32_t k = 0; s->cells != NULL && k < s->geo.n; k++) {
        if ((s->used[k / 64] >> (k % 64)) & 1) {
            for (uint32_t j = 0; j < SUB2; j++)
                lt__cell_release(&s->cells[k * SUB2 + j]);
        }
    }
    lt_free(s->cells);
    lt_free(s->bkt);
    lt_free(s->count);
    lt_free(s->cell);
    lt_free(s->coord);
    lt_free(s->lows);
    lt_free(s->nodd);
    lt__sos_walk_release(&s->walk);
    lt_free(s);
}

/* What sos_check's walk checker needs: the index and the cluster. */
struct sos_check_ctx {
    const struct sos_index *s;
    const struct lt_cluster *c;
};

/* lt__sos_entry_fn: machine i's walk entry, from the cluster (odd machines are not walked). */
static bool walk_entry(const void *ctx, size_t i, double off[2])
{
    const struct sos_check_ctx *x = ctx;
    const struct sos_index *s = x->s;
    struct lt_res f = lt__free(&x->c->m[i]);
    uint32_t k;

    if (s->cell[i] == NO_CELL)
        return false;
    k = s->cell[i] / SUB2;
    return !offsets(&s->geo, &f, s->coord[k][0], s->coord[k][1], k % s->geo.k[2], off);
}

/* The small-request structures against the counts, masks and machines (already checked). */
static int small_check(const struct sos_index *s, const struct lt_cluster *c, struct lt_err *err)
{
    const char *name = s->base.policy->name;
    const struct sos_check_ctx x = {s, c};
    uint32_t nodd[SOS_MAX_CELLS];
    int rc = lt__sos_walk_check(&s->walk, walk_entry, &x, name, err);

    if (rc < 0)
        return rc;
    memset(nodd, 0, s->geo.n * sizeof(*nodd));
    for (size_t i = 0; i < c->n; i++) {
        double off[2];

        if (s->cell[i] != NO_CELL && !walk_entry(&x, i, off))
            nodd[s->cell[i] / SUB2]++;
    }
    for (uint32_t k = 0; k < s->geo.n; k++) {
        uint32_t lo[2];

        mask_lows(s->bkt[k].mask, lo);
        if (nodd[k] != s->nodd[k] || ((s->oddb[k / 64] >> (k % 64)) & 1) != (nodd[k] > 0))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s index: bucket %u has %u odd members, "
                              "not %u",
                              name, (unsigned)k, (unsigned)nodd[k], (unsigned)s->nodd[k]);
        for (int d = 0; d < 2; d++) {
            if (lo[d] != s->lows[k][d])
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u lowest slice wrong",
                                  name, (unsigned)k);
            for (uint32_t sl = 0; sl < SUB; sl++) {
                if (((s->low[d][sl][k / 64] >> (k % 64)) & 1) != (sl >= lo[d]))
                    return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u low bit wrong",
                                      name, (unsigned)k);
            }
        }
        for (uint32_t cl = 1; cl < 4; cl++) {
            bool neg, zero;

            nz_bits(s, k, cl, &neg, &zero);
            if (((s->neg[cl - 1][k / 64] >> (k % 64)) & 1) != neg ||
                ((s->zero[cl - 1][k / 64] >> (k % 64)) & 1) != zero)
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: bucket %u class %u bits wrong",
                                  name, (unsigned)k, (unsigned)cl);
        }
    }
    return 0;
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

        if (!((s->used[k / 64] >> (k % 64)) & 1)) {
            /* never reserved room: its sub-cells are as calloc left them */
            if (cnt[k] != 0 || s->count[k] != 0 || bit || bk->mask != 0)
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: unused bucket %u not empty",
                                  name, (unsigned)k);
            continue;
        }
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
    return small_check(s, c, err);
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
    s->lows = lt_calloc(s->geo.n, sizeof(*s->lows));
    s->nodd = lt_calloc(s->geo.n, sizeof(*s->nodd));
    if (s->coord == NULL || s->lows == NULL || lt__sos_walk_init(&s->walk, c->n) < 0)
        goto out_nomem;
    for (uint32_t k = 0; k < s->geo.n; k++) {
        s->coord[k][0] = (uint8_t)(k / s->geo.k[2] / s->geo.k[1]);
        s->coord[k][1] = (uint8_t)(k / s->geo.k[2] % s->geo.k[1]);
        s->lows[k][0] = s->lows[k][1] = SUB; /* empty */
    }
    if (s->cells == NULL || s->bkt == NULL || s->count == NULL || s->cell == NULL ||
        s->nodd == NULL)
        goto out_nomem;
    for (size_t i = 0; i < c->n; i++) {
        struct lt_res f = lt__free(&c->m[i]);
        uint32_t k;

        s->cell[i] = NO_CELL;
        if (!c->m[i].online)
            continue;
        k = cell_of(&s->geo, &f);
        bit_put(s->used, k / SUB2, true);
        if (lt__cell_reserve(&s->cells[k]) < 0)
            goto out_nomem;
        cell_add(s, k, (uint32_t)i, &f, true);
        s->cell[i] = k;
        walk_move(s, (uint32_t)i, NO_CELL, k, &f);
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
#define FAST_BIT 0x8000u
#define SCAN_BLOCK                                                                                 \
    16 /* fast_scan's members between checks for an early stop */ /* in choose's bucket list: the  \
                                                                     bucket takes the fast path */

struct sos_query {
    bool ok;             /* false: rho is within SLICE_EPS of a whole number (general path) */
    uint64_t cls[4];     /* sure sub-cells by class: bit 0 cpu low (o < phi), bit 1 mem low */
    uint64_t straddle;   /* the other sub-cells */
    uint64_t ext[4];     /* sub-cells that may hold members of each class (sure or straddling) */
    uint64_t low[2];     /* per dimension: sub-cells whose slice is surely below phi */
    uint64_t sure[2];    /* per dimension: sub-cells whose slice is sure (above or below) */
    uint32_t drop[2][2]; /* [dim][low]: buckets dropped, m + low */
    bool walked;         /* a small request whose stayers the walk has settled: class 0 of a
                          * bucket without odd members cannot improve the best */
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
    if (q->walked && !((s->oddb[k / 64] >> (k % 64)) & 1))
        cd[0] = INT64_MAX;
}

/* Bucket k's sure sub-cells (O(1) each). */
static void fast_sure(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                      const struct sos_fb *fb, const int64_t cd[4], struct sos_best *b)
{
    const struct sos_bucket *bk = &s->bkt[k];

    for (uint32_t c = 0; c < 4; c++) {
        uint64_t m = q->cls[c] & bk->mask & ~fb->unsure;
        uint32_t mi;

        if (m == 0 || cd[c] == INT64_MAX || !improves(cd[c], bk->min_i, b))
            continue;
        mi = smin_of(bk, m);
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

            /* In blocks of SCAN_BLOCK members: members are in index order, so once a member
             * reaches the sub-cell's bound the rest cannot beat it. */
            uint64_t enough = (uint64_t)(bound + KEY_BIAS + 1) << 32;

            for (uint32_t c = 0; c < 4; c++)
                key[c] = cd[c] == INT64_MAX ? UINT64_MAX : (uint64_t)(cd[c] + KEY_BIAS) << 32;
            for (uint32_t e0 = 0; e0 < n && best >= enough; e0 += SCAN_BLOCK) {
                uint32_t e1 = n - e0 < SCAN_BLOCK ? n : e0 + SCAN_BLOCK;

                for (uint32_t e = e0; e < e1; e++) {
                    const struct lt_res *f = &cl->f[e];
                    uint32_t c = base | (((f->cpu - r->cpu) * sx < tx) ? mx : 0u) |
                                 (((f->mem - r->mem) * sy < ty) ? my : 0u);
                    uint64_t v = key[c] | cl->mem[e];
                    bool fits = f->cpu >= r->cpu && f->mem >= r->mem && f->disk >= r->disk;

                    v = fits ? v : UINT64_MAX;
                    best = v < best ? v : best;
                }
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

/* What the first look at a bucket leaves to do. */
enum { LOOK_DONE, LOOK_GENERAL, LOOK_FAST };

/* The first look at bucket k: its bound, and at once its sure sub-cells (O(1) each). Says
 * whether its straddling sub-cells (LOOK_FAST, facts in *fb, class changes in cd) or the
 * general path (LOOK_GENERAL) may still improve the best, with bound *lb. */
static int look_sure(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                     const struct lt_res *r, struct sos_best *b, struct sos_fb *fb, int64_t *lb,
                     int64_t cd[4])
{
    const struct sos_bucket *bk = &s->bkt[k];
    int64_t v;

    if (!(q->ok && fast_prep(s, k, r, fb) && !(fb->unsure & bk->mask))) {
        v = box_bound(s, k, &bk->lo, &bk->hi, r);
        *lb = v;
        return v != INT64_MAX && improves(v, bk->min_i, b) ? LOOK_GENERAL : LOOK_DONE;
    }
    class_deltas(s, q, k, fb, cd);
    v = INT64_MAX;
    for (uint32_t cl = 0; cl < 4; cl++) {
        if ((q->ext[cl] & bk->mask) && cd[cl] < v)
            v = cd[cl];
    }
    if (v == INT64_MAX || !improves(v, bk->min_i, b))
        return LOOK_DONE;
    fast_sure(s, q, k, fb, cd, b);
    *lb = v;
    return (q->straddle & bk->mask) && improves(v, bk->min_i, b) ? LOOK_FAST : LOOK_DONE;
}

/* The second look: the scans look_sure left, if the best still leaves them a chance. cd:
 * look_sure's class changes, if the counts have not changed since, or NULL. */
static void look_scan(const struct sos_index *s, const struct sos_query *q, uint32_t k, int look,
                      const struct sos_fb *fb, int64_t lb, const int64_t *cd,
                      const struct lt_res *r, struct sos_best *b)
{
    int64_t own[4];

    if (look == LOOK_DONE || !improves(lb, s->bkt[k].min_i, b))
        return;
    if (look == LOOK_FAST) {
        if (cd == NULL) {
            class_deltas(s, q, k, fb, own);
            cd = own;
        }
        fast_scan(s, q, k, fb, cd, lb, r, b);
    } else {
        scan_bucket(s, k, s->bkt[k].mask, lb, r, b);
    }
}

/* Bucket k in full. */
static void look(const struct sos_index *s, const struct sos_query *q, uint32_t k,
                 const struct lt_res *r, struct sos_best *b)
{
    struct sos_fb fb;
    int64_t lb = INT64_MAX;
    int64_t cd[4];
    int l = look_sure(s, q, k, r, b, &fb, &lb, cd);

    look_scan(s, q, k, l, &fb, lb, cd, r, b);
}

/* A small request: the walk's thresholds, and the slices up to sl[d] that may hold members
 * that drop a bucket in dimension d. */
struct sos_small {
    struct lt__sos_walk_query wq;
    uint32_t sl[2];
};

/* False unless r is a small request (the comment above DISK_SAFE). */
static bool small_init(const struct sos_index *s, const struct sos_query *q, const struct lt_res *r,
                       struct sos_small *sm)
{
    const struct sos_geom *g = &s->geo;
    const double phi[2] = {r->cpu * g->scale[0], r->mem * g->scale[1]};

    if (!q->ok || q->drop[0][0] != 0 || q->drop[1][0] != 0 ||
        !(r->disk >= 0.0 && r->disk * g->scale[2] <= DISK_SAFE - SLICE_EPS))
        return false;
    for (int d = 0; d < 2; d++) {
        uint32_t sl = 0;

        while (sl + 1 < SUB && (double)(sl + 1) / SUB < phi[d] + SLICE_EPS)
            sl++;
        sm->sl[d] = sl;
    }
    lt__sos_walk_query_init(&sm->wq, phi, SLICE_EPS);
    return true;
}

/* The walk's exact test near its thresholds (lt__sos_stays_fn): does machine i stay in its
 * bucket under the request? fast_scan's test, as bucket_after() computes it. */
struct sos_stay_ctx {
    const struct sos_index *s;
    const struct lt_cluster *c;
    const struct lt_res *r;
};

static bool stays(const void *ctx, uint32_t i)
{
    const struct sos_stay_ctx *x = ctx;
    const struct sos_index *s = x->s;
    uint32_t k = s->cell[i] / SUB2;
    struct lt_res f = lt__free(&x->c->m[i]);

    return (f.cpu - x->r->cpu) * s->geo.scale[0] >= (double)s->coord[k][0] &&
           (f.mem - x->r->mem) * s->geo.scale[1] >= (double)s->coord[k][1];
}

/* choose_rounds' queue: a min-heap of bound and bucket, packed as (bound + ROUND_BIAS) << 16 |
 * bucket, so that equal bounds come out by bucket (|bound| <= 2 (SOS_MAX_MACHINES + 1) < 2^40,
 * buckets < 2^16). */
#define ROUND_BIAS (INT64_C(1) << 40)

static void round_down(uint64_t *h, size_t n, size_t i)
{
    uint64_t x = h[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (!(h[c] < x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* The buckets of `set`: each one's bound from the counts alone, then the buckets by bound,
 * lowest first, until no bound can beat the best. For a request that leaves
 * every machine that is not odd in its disk bucket (disk under DISK_SAFE), so that a member's
 * change is its class's, and the classes a bucket may hold are in its sub-cell mask. Buckets
 * with odd members are scored at once. */
static void choose_rounds(const struct sos_index *s, const struct sos_query *q,
                          const struct lt_res *r, const uint64_t *set, struct sos_best *b)
{
    const struct sos_geom *g = &s->geo;
    uint64_t h[SOS_MAX_CELLS];
    uint32_t m0 = q->drop[0][0], m1 = q->drop[1][0];
    size_t n = 0, nc = 0;
    /* The classes a bucket's members may be in, with their drops and the distance (in
     * buckets) to where they land; the same for every bucket. */
    struct {
        uint32_t da, db, off;
        uint64_t ext;
    } cl[4];

    for (uint32_t c = q->walked ? 1 : 0; c < 4; c++) {
        uint32_t da = q->drop[0][c & 1], db = q->drop[1][c >> 1];
        if (q->ext[c] != 0) {
            cl[nc].da = da;
            cl[nc].db = db;
            cl[nc].off = (da * g->k[1] + db) * g->k[2];
            cl[nc++].ext = q->ext[c];
        }
    }
    for (uint32_t w = 0; w < (g->n + 63) / 64; w++) {
        for (uint64_t bits = set[w]; bits != 0; bits &= bits - 1) {
            uint32_t k = w * 64 + (uint32_t)__builtin_ctzll(bits);
            uint32_t a = s->coord[k][0], bb = s->coord[k][1];
            uint64_t mask = s->bkt[k].mask;
            int64_t v = INT64_MAX;

            if (a < m0 || bb < m1)
                continue; /* cannot fit (choose_full) */
            if ((s->oddb[w] >> (k % 64)) & 1) {
                look(s, q, k, r, b);
                continue;
            }
            for (size_t j = 0; j < nc; j++) {
                int64_t d;

                if (cl[j].da > a || cl[j].db > bb || !(cl[j].ext & mask))
                    continue;
                d = delta(s->count, k, k - cl[j].off);
                v = d < v ? d : v;
            }
            if (v != INT64_MAX)
                h[n++] = (uint64_t)(v + ROUND_BIAS) << 16 | k;
        }
    }
    for (size_t j = n / 2; j-- > 0;)
        round_down(h, n, j);
    while (n > 0) {
        int64_t low = (int64_t)(h[0] >> 16) - ROUND_BIAS;
        uint32_t k = (uint32_t)(h[0] & 0xffff);

        if (low > b->d)
            return; /* and so are the rest */
        h[0] = h[--n];
        round_down(h, n, 0);
        if (improves(low, s->bkt[k].min_i, b))
            look(s, q, k, r, b);
    }
}

/* A small request: the lowest-index stayer (score change 0), then, in order of bound, the
 * buckets with a class that may lower the score or tie with staying (a member in a low slice
 * and a lower neighbour with fewer machines; see the comment above DISK_SAFE), and the
 * buckets with odd members. If the answer raises the score (no machine stays or moves to a
 * bucket as full as its own), every other bucket the same way. The walk settles the stayers
 * that are not odd (none, or none below the best's index), so choose_rounds leaves out their
 * class. */
static void choose_small(const struct sos_index *s, const struct lt_cluster *c,
                         const struct sos_query *q, const struct sos_small *sm,
                         const struct lt_res *r, struct lt_choose_hint *hint, struct sos_best *b)
{
    const struct sos_stay_ctx x = {s, c, r};
    uint32_t st = lt__sos_walk_stayer(
        &s->walk, &sm->wq, lt__sos_walk_hint_start(&s->walk, s->base.serial, hint, r), stays, &x);
    uint64_t set[SOS_MAX_CELLS / 64];
    struct sos_query qw = *q;

    qw.walked = true;
    lt__sos_walk_hint_keep(&s->walk, s->base.serial, hint, r, st);
    if (st != UINT32_MAX) {
        b->d = 0;
        b->i = st;
    }
    for (uint32_t w = 0; w < (s->geo.n + 63) / 64; w++) {
        uint64_t lc = s->low[0][sm->sl[0]][w], lm = s->low[1][sm->sl[1]][w];

        set[w] = ((s->neg[0][w] | s->zero[0][w]) & lc) | ((s->neg[1][w] | s->zero[1][w]) & lm) |
                 ((s->neg[2][w] | s->zero[2][w]) & lc & lm) | (s->oddb[w] & s->nonempty[w]);
    }
    choose_rounds(s, &qw, r, set, b);
    if (b->i != LT_NO_MACHINE && b->d <= 0)
        return;
    for (uint32_t w = 0; w < (s->geo.n + 63) / 64; w++)
        set[w] = s->nonempty[w] & ~set[w]; /* the rest */
    choose_rounds(s, &qw, r, set, b);
}

/* Every non-empty bucket: the first looks, so that the best is already close when the scans
 * start (the best so far, if any, is a machine's true change and index), then the scans of
 * the buckets that may still improve it, lowest bounds first (negative changes are rare and
 * decide the answer when they exist). */
static void choose_full(const struct sos_index *s, const struct sos_query *q,
                        const struct lt_res *r, struct sos_best *b)
{
    int64_t lb[SOS_MAX_CELLS];
    uint16_t id[SOS_MAX_CELLS];
    struct sos_fb fbs[SOS_MAX_CELLS]; /* fast-path facts of listed bucket j (FAST_BIT set) */
    size_t n = 0;
    /* A bucket m or more below the request's width in cpu or mem cannot fit it (its members
     * have less free than m widths, and m <= rho; only the top bucket holds more, and it is
     * not below m, since q->ok says rho < k). */
    uint32_t m0 = q->ok ? q->drop[0][0] : 0, m1 = q->ok ? q->drop[1][0] : 0;

    for (uint32_t w = 0; w < (s->geo.n + 63) / 64; w++) {
        for (uint64_t bits = s->nonempty[w]; bits != 0; bits &= bits - 1) {
            uint32_t k = w * 64 + (uint32_t)__builtin_ctzll(bits);
            int l;

            if (s->coord[k][0] < m0 || s->coord[k][1] < m1)
                continue;
            int64_t cd[4];

            l = look_sure(s, q, k, r, b, &fbs[n], &lb[n], cd);

            if (l != LOOK_DONE)
                id[n++] = (uint16_t)(k | (l == LOOK_FAST ? FAST_BIT : 0));
        }
    }
    for (int neg = 1; neg >= 0; neg--) {
        for (size_t j = 0; j < n; j++) {
            if ((lb[j] < 0) != (neg == 1))
                continue;
            look_scan(s, q, id[j] & ~FAST_BIT, (id[j] & FAST_BIT) ? LOOK_FAST : LOOK_GENERAL,
                      &fbs[j], lb[j], NULL, r, b); /* class changes not kept: recomputed */
        }
    }
}

static int sos_choose(const struct lt_policy *p, const struct lt_index *ix,
                      const struct lt_cluster *c, const struct lt_task *t, struct lt_rng *rng,
                      struct lt_choose_hint *hint, size_t *out, struct lt_err *err)
{
    const struct sos_index *s = (const struct sos_index *)ix;
    struct sos_best b = {INT64_MAX, LT_NO_MACHINE};
    struct sos_query q;
    struct sos_small sm;

    (void)p;
    (void)rng;
    (void)err;
    query_init(&q, &s->geo, &t->req);
    if (small_init(s, &q, &t->req, &sm)) {
        choose_small(s, c, &q, &sm, &t->req, hint, &b);
    } else if (q.ok && t->req.disk * s->geo.scale[2] <= DISK_SAFE - SLICE_EPS) {
        choose_rounds(s, &q, &t->req, s->nonempty, &b);
    } else {
        choose_full(s, &q, &t->req, &b);
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
