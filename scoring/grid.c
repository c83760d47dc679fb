/* grid.c -- the index behind choose() of bestfit1-5, epvm2 and brfs-norm.
 *
 * Design: machines are grouped by configuration (equal capacity), and within a configuration
 * by a g x g grid over (free cpu, free mem), g a power of two chosen so that a cell holds
 * about two machines (at most 64, so a row of cells is one uint64_t mask). Each cell keeps its
 * members sorted by index and a box bounding their free vectors (cells.c); each configuration
 * keeps a bound on its members' free disk.
 *
 * Why a fixed grid for best fits: the answer is the feasible machine nearest the request's
 * corner (free just above the request), and feasibility (free >= request) is a pair of
 * axis-aligned half-planes. Grid lines are fixed, so every cell below the request in cpu or
 * mem is skipped whole, only the cells of the request's row and column are partly feasible,
 * and the bound of any other cell is the formula at its low corner. (A data-adaptive k-d tree
 * was tried and measured 15x slower here: its boxes straddle the request, so their bounds
 * collapse to the request's own score; docs/benchmarks.md.)
 *
 * Every best-fit formula is non-decreasing in each free component on f >= q (fit.c's `dir`),
 * so a bound on all machines in cells (a' >= a, b' >= b) is the formula at the cell corner
 * (a*w, b*w), with the column's lowest free disk when the formula uses disk. choose() walks,
 * per configuration, the non-empty cells from the request's corner outwards with the masks,
 * stops a row or column as soon as the corner bound exceeds the best score found, skips a cell
 * whose box bound exceeds it, and scores the members of the rest exactly with the same
 * function rank() uses. Worst fits (non-increasing) are walked from the top corner down, with
 * bounds at the cells' high corners; for epvm2 and bestfit5 this measured faster than the box
 * tree (boxtree.c serves epvm and brfs-dot). Bounds are lowered by a relative 1e-9 so that
 * rounding can never prune a machine; the exact comparison is always on the member's own
 * score, ties by index, so choose() returns what the naive rank scan returns
 * (test_property.c).
 *
 * Cost: a placement or removal moves a machine between two cells (O(cell) memmove);
 * choose() visits a few cells near the answer. Workload assumption: a Google-like cell,
 * 12,500 machines in ~10 configurations, many more placements than machine events; machine
 * events rebuild the index (cluster.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <string.h>

#include "lt_mem.h"

#define GRID_MAX      64 /* cells per dimension: a row of cells is one uint64_t mask */
#define GRID_PER_CELL 2  /* size the grid for about this many machines per cell */
#define NO_CELL       UINT32_MAX
#define BOUND_SLACK   1e-9 /* relative: far above rounding error, far below score gaps */
#define SORT_CONFIGS  64   /* configurations ordered by bound when there are at most this many */

struct grid_cfg {
    struct lt_res cap;      /* the configuration's capacity */
    uint32_t g;             /* cells per dimension (power of two, 1..GRID_MAX) */
    double inv_wc, inv_wm;  /* g / cap.cpu, g / cap.mem: value -> cell coordinate */
    double wc, wm;          /* cap.cpu / g, cap.mem / g: cell widths */
    struct lt__cell *cells; /* g * g cells; (a, b) = (cpu column, mem row) at a * g + b */
    uint64_t *rows;         /* g masks: bit b of rows[a] set iff cell (a, b) is non-empty */
    uint64_t cols;          /* bit a set iff rows[a] != 0 */
    double dlo, dhi;        /* bounds of the members' free disk (loose, valid when n > 0) */
    double *col_dlo;    /* per column: a lower bound of its members' free disk (loose); kept only
                         * for formulas that use disk (fp->disk) */
    uint32_t *col_n;    /* per column: members */
    uint32_t *col_rm;   /* per column: departures since col_dlo was recomputed */
    uint32_t n;         /* online machines of this configuration in the grid */
    uint32_t n_changes; /* updates since dlo/dhi were recomputed */
};

struct grid_index {
    struct lt_index base;
    const struct lt__fit_params *fp;
    struct grid_cfg *cfg; /* one per cluster configuration */
    size_t n_cfg;
    uint32_t *cell; /* machine -> cell number in its configuration's grid, or NO_CELL */
    size_t n;       /* machines covered by `cell` */
};

static uint32_t coord(double f, double inv_w, uint32_t g)
{
    double x = f * inv_w;

    if (!(x > 0.0))
        return 0;
    if (x >= (double)g)
        return g - 1;
    return (uint32_t)x;
}

static uint32_t cell_number(const struct grid_cfg *g, const struct lt_res *f)
{
    return coord(f->cpu, g->inv_wc, g->g) * g->g + coord(f->mem, g->inv_wm, g->g);
}

static double padded(double s)
{
    return s - BOUND_SLACK * (1.0 + fabs(s));
}

/* ---- maintenance ---- */

static void disk_recompute(struct grid_cfg *g)
{
    bool first = true;

    for (uint32_t k = 0; k < g->g * g->g; k++) {
        const struct lt__cell *cl = &g->cells[k];
        for (uint32_t j = 0; j < cl->n; j++) {
            double d = cl->f[j].disk;
            if (first || d < g->dlo)
                g->dlo = d;
            if (first || d > g->dhi)
                g->dhi = d;
            first = false;
        }
    }
    g->n_changes = 0;
}

/* Machine with free disk d was inserted or updated; g->n already counts it. */
static void disk_note(struct grid_cfg *g, double d)
{
    if (g->n == 1) {
        g->dlo = g->dhi = d; /* the only member: exact */
        g->n_changes = 0;
        return;
    }
    if (d < g->dlo)
        g->dlo = d;
    if (d > g->dhi)
        g->dhi = d;
    if (++g->n_changes > g->n)
        disk_recompute(g);
}

static void mark(struct grid_cfg *g, uint32_t cell)
{
    uint32_t a = cell / g->g, b = cell % g->g;

    if (g->cells[cell].n > 0) {
        g->rows[a] |= UINT64_C(1) << b;
        g->cols |= UINT64_C(1) << a;
    } else {
        g->rows[a] &= ~(UINT64_C(1) << b);
        if (g->rows[a] == 0)
            g->cols &= ~(UINT64_C(1) << a);
    }
}

/* Column a gained a member with free disk d. */
/* Column a holds a member (new or changed) with free disk d, col_n counting it: widen the
 * column's bound (exact when it is the only member). */
static void col_note(struct grid_cfg *g, uint32_t a, double d)
{
    if (g->col_n[a] == 1 || d < g->col_dlo[a])
        g->col_dlo[a] = d;
}

/* Column a lost a member (or one changed); recompute its bound from its cells when loose. */
static void col_leave(struct grid_cfg *g, uint32_t a)
{
    if (++g->col_rm[a] <= g->col_n[a])
        return;
    g->col_dlo[a] = HUGE_VAL;
    for (uint64_t m = g->rows[a]; m != 0; m &= m - 1) {
        const struct lt__cell *cl = &g->cells[a * g->g + (uint32_t)__builtin_ctzll(m)];
        g->col_dlo[a] = fmin(g->col_dlo[a], cl->lo.disk);
    }
    g->col_rm[a] = 0;
}

static int grid_prepare(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                        const struct lt_res *nf, bool non)
{
    struct grid_index *gi = (struct grid_index *)ix;
    struct grid_cfg *g = &gi->cfg[c->m[i].config];
    uint32_t to;

    if (!non)
        return 0;
    to = cell_number(g, nf);
    if (to == gi->cell[i])
        return 0;
    return lt__cell_reserve(&g->cells[to]);
}

static void grid_commit(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                        const struct lt_res *of, bool oon)
{
    struct grid_index *gi = (struct grid_index *)ix;
    const struct lt__machine *m = &c->m[i];
    struct grid_cfg *g = &gi->cfg[m->config];
    struct lt_res f = lt__free(m);
    uint32_t from = gi->cell[i], to = m->online ? cell_number(g, &f) : NO_CELL;
    bool cols = gi->fp->disk; /* per-column disk bounds only for formulas that use disk */

    (void)of;
    (void)oon;
    if (from == to) {
        if (to != NO_CELL) {
            lt__cell_update(&g->cells[to], (uint32_t)i, &f);
            if (cols) {
                col_note(g, to / g->g, f.disk);
                col_leave(g, to / g->g);
            }
            disk_note(g, f.disk);
        }
        return;
    }
    if (from != NO_CELL) {
        lt__cell_remove(&g->cells[from], (uint32_t)i);
        mark(g, from);
        if (cols) {
            g->col_n[from / g->g]--;
            col_leave(g, from / g->g);
        }
        g->n--;
    }
    if (to != NO_CELL) {
        lt__cell_insert(&g->cells[to], (uint32_t)i, &f);
        mark(g, to);
        if (cols) {
            g->col_n[to / g->g]++;
            col_note(g, to / g->g, f.disk);
        }
        g->n++;
        disk_note(g, f.disk);
    }
    gi->cell[i] = to;
}

static void grid_free(struct lt_index *ix)
{
    struct grid_index *gi = (struct grid_index *)ix;

    if (gi == NULL)
        return;
    for (size_t k = 0; gi->cfg != NULL && k < gi->n_cfg; k++) {
        struct grid_cfg *g = &gi->cfg[k];
        if (g->cells != NULL) {
            for (uint32_t j = 0; j < g->g * g->g; j++)
                lt__cell_release(&g->cells[j]);
        }
        lt_free(g->cells);
        lt_free(g->rows);
        lt_free(g->col_dlo);
        lt_free(g->col_n);
        lt_free(g->col_rm);
    }
    lt_free(gi->cfg);
    lt_free(gi->cell);
    lt_free(gi);
}

static int grid_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    const struct grid_index *gi = (const struct grid_index *)ix;
    const char *name = ix->policy->name;

    if (gi->n != c->n || gi->n_cfg != c->n_cfg)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, gi->n, c->n);
    for (size_t i = 0; i < c->n; i++) {
        const struct lt__machine *m = &c->m[i];
        const struct grid_cfg *g = &gi->cfg[m->config];
        struct lt_res f = lt__free(m);
        uint32_t want = m->online ? cell_number(g, &f) : NO_CELL;
        const struct lt__cell *cl;

        if (gi->cell[i] != want)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu in cell %u, expected %u",
                              name, i, (unsigned)gi->cell[i], (unsigned)want);
        if (want == NO_CELL)
            continue;
        cl = &g->cells[want];
        if (!(f.disk >= g->dlo && f.disk <= g->dhi))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu disk outside bounds",
                              name, i);
        for (uint32_t j = 0;; j++) {
            if (j == cl->n)
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu missing from cell",
                                  name, i);
            if (cl->mem[j] == i)
                break;
        }
    }
    for (size_t k = 0; k < gi->n_cfg; k++) {
        const struct grid_cfg *g = &gi->cfg[k];
        uint32_t total = 0;
        uint64_t cols = 0;
        for (uint32_t a = 0; a < g->g; a++) {
            uint64_t row = 0;
            for (uint32_t b = 0; b < g->g; b++) {
                const struct lt__cell *cl = &g->cells[a * g->g + b];
                int rc = lt__cell_check(cl, c, name, err);
                if (rc < 0)
                    return rc;
                total += cl->n;
                if (cl->n > 0)
                    row |= UINT64_C(1) << b;
            }
            if (row != g->rows[a])
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: row mask %u wrong", name,
                                  (unsigned)a);
            if (row != 0)
                cols |= UINT64_C(1) << a;
        }
        for (uint32_t a = 0; gi->fp->disk && a < g->g; a++) {
            uint32_t n = 0;
            for (uint32_t b = 0; b < g->g; b++) {
                const struct lt__cell *cl = &g->cells[a * g->g + b];
                n += cl->n;
                if (cl->n > 0 && cl->lo.disk < g->col_dlo[a])
                    return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: column %u disk bound", name,
                                      (unsigned)a);
            }
            if (n != g->col_n[a])
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: column %u counts wrong", name,
                                  (unsigned)a);
        }
        if (cols != g->cols || total != g->n)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: configuration %zu counts wrong",
                              name, k);
    }
    return 0;
}

static const struct lt__index_ops grid_ops = {grid_prepare, grid_commit, grid_check, grid_free};

static uint32_t grid_size(uint32_t n)
{
    uint32_t g = 1;

    while (g < GRID_MAX && (uint64_t)g * g * GRID_PER_CELL < n)
        g *= 2;
    return g;
}

int lt__grid_index_new(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                       struct lt_err *err)
{
    struct grid_index *gi = lt_calloc(1, sizeof(*gi));

    if (gi == NULL)
        goto out_nomem;
    gi->base.ops = &grid_ops;
    gi->base.policy = p;
    gi->fp = p->params;
    gi->n = c->n;
    gi->n_cfg = c->n_cfg;
    gi->cfg = lt_calloc(c->n_cfg, sizeof(*gi->cfg));
    gi->cell = lt_calloc(c->n, sizeof(*gi->cell));
    if (gi->cfg == NULL || gi->cell == NULL)
        goto out_nomem;
    for (size_t k = 0; k < c->n_cfg; k++) {
        struct grid_cfg *g = &gi->cfg[k];
        g->cap = c->cfg[k].cap;
        g->g = grid_size(c->cfg[k].n_machines);
        g->inv_wc = g->g / g->cap.cpu;
        g->inv_wm = g->g / g->cap.mem;
        g->wc = g->cap.cpu / g->g;
        g->wm = g->cap.mem / g->g;
        g->cells = lt_calloc((size_t)g->g * g->g, sizeof(*g->cells));
        g->rows = lt_calloc(g->g, sizeof(*g->rows));
        g->col_dlo = lt_calloc(g->g, sizeof(*g->col_dlo));
        g->col_n = lt_calloc(g->g, sizeof(*g->col_n));
        g->col_rm = lt_calloc(g->g, sizeof(*g->col_rm));
        if (g->cells == NULL || g->rows == NULL || g->col_dlo == NULL || g->col_n == NULL ||
            g->col_rm == NULL)
            goto out_nomem;
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct lt__machine *m = &c->m[i];
        struct grid_cfg *g = &gi->cfg[m->config];
        struct lt_res f = lt__free(m);
        uint32_t to;

        gi->cell[i] = NO_CELL;
        if (!m->online)
            continue;
        to = cell_number(g, &f);
        if (lt__cell_reserve(&g->cells[to]) < 0)
            goto out_nomem;
        lt__cell_insert(&g->cells[to], (uint32_t)i, &f);
        mark(g, to);
        if (gi->fp->disk) {
            g->col_n[to / g->g]++;
            col_note(g, to / g->g, f.disk);
        }
        g->n++;
        disk_note(g, f.disk);
        gi->cell[i] = to;
    }
    *out = &gi->base;
    return 0;

out_nomem:
    grid_free(gi ? &gi->base : NULL);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

/* ---- choose ---- */

struct query {
    const struct lt__fit_params *fp;
    lt__fit_score_fn *score; /* fp->score, a constant in each instance (inlined) */
    const struct lt_cluster *c;
    const struct grid_cfg *g;
    const struct lt_res *r;
};

/* Lower bound of the score over the feasible part of the box [lo, hi]: the formula at the
 * low corner (clamped to the request) for best fits, at the high corner for worst fits. */
static double box_bound(const struct query *q, const struct lt_res *lo, const struct lt_res *hi)
{
    const struct lt_res *c = q->fp->dir > 0 ? lo : hi;
    struct lt_res p;

    p.cpu = fmax(c->cpu, q->r->cpu);
    p.mem = fmax(c->mem, q->r->mem);
    p.disk = fmax(c->disk, q->r->disk);
    return padded(q->score(&q->g->cap, &p, q->r, &q->c->ref));
}

/* Best fits: bound for all cells (>= a, >= b) whose members have at least free disk d, the
 * formula at the corner (a, b, d). Worst fits: bound for all cells (<= a, <= b), the formula
 * at their high corner (a + 1, b + 1, dhi). */
static double corner_bound(const struct query *q, uint32_t a, uint32_t b, double d)
{
    const struct grid_cfg *g = q->g;
    struct lt_res p;

    if (q->fp->dir > 0) {
        p.cpu = a * g->wc;
        p.mem = b * g->wm;
        p.disk = d;
    } else {
        p.cpu = (a + 1) * g->wc;
        p.mem = (b + 1) * g->wm;
        p.disk = g->dhi;
    }
    return box_bound(q, &p, &p);
}

static void scan_cell(const struct query *q, const struct lt__cell *cl, struct lt__best *b)
{
    const struct lt_cluster *c = q->c;

    if (!lt__res_ge(&cl->hi, q->r) || box_bound(q, &cl->lo, &cl->hi) > b->s)
        return;
    if (lt__cell_is_point(cl)) {
        /* Every member has this free vector, hence this score: the first one wins. */
        lt__best_offer(b, q->score(&q->g->cap, &cl->f[0], q->r, &c->ref), cl->mem[0]);
        return;
    }
    for (uint32_t k = 0; k < cl->n; k++) {
        if (lt__res_ge(&cl->f[k], q->r))
            lt__best_offer(b, q->score(&q->g->cap, &cl->f[k], q->r, &c->ref), cl->mem[k]);
    }
}

static void walk_best_fit(const struct query *q, struct lt__best *b)
{
    const struct grid_cfg *g = q->g;
    uint32_t qa = coord(q->r->cpu, g->inv_wc, g->g), qb = coord(q->r->mem, g->inv_wm, g->g);
    uint64_t cm = g->cols & (~UINT64_C(0) << qa);
    double sdlo[GRID_MAX]; /* sdlo[a]: disk bound of the columns >= a */
    double d = g->dlo;
    bool disk = q->fp->disk;

    for (uint64_t m = disk ? cm : 0; m != 0;) {
        uint32_t a = 63u - (uint32_t)__builtin_clzll(m);
        d = fmin(d, g->col_dlo[a]);
        sdlo[a] = d;
        m &= ~(UINT64_C(1) << a);
    }
    while (cm != 0) {
        uint32_t a = (uint32_t)__builtin_ctzll(cm);
        uint64_t rm = g->rows[a] & (~UINT64_C(0) << qb);

        cm &= cm - 1;
        if (corner_bound(q, a, qb, disk ? sdlo[a] : g->dlo) > b->s)
            break;
        while (rm != 0) {
            uint32_t bb = (uint32_t)__builtin_ctzll(rm);
            rm &= rm - 1;
            if (corner_bound(q, a, bb, disk ? g->col_dlo[a] : g->dlo) > b->s)
                break;
            scan_cell(q, &g->cells[a * g->g + bb], b);
        }
    }
}

/* Worst fits: from the top column down, each from its top row down. */
static void walk_worst_fit(const struct query *q, struct lt__best *b)
{
    const struct grid_cfg *g = q->g;
    uint32_t qa = coord(q->r->cpu, g->inv_wc, g->g), qb = coord(q->r->mem, g->inv_wm, g->g);
    uint64_t cm = g->cols & (~UINT64_C(0) << qa);

    while (cm != 0) {
        uint32_t a = 63u - (uint32_t)__builtin_clzll(cm);
        uint64_t rm = g->rows[a] & (~UINT64_C(0) << qb);

        cm &= ~(UINT64_C(1) << a);
        if (corner_bound(q, a, g->g - 1, 0) > b->s)
            break;
        while (rm != 0) {
            uint32_t bb = 63u - (uint32_t)__builtin_clzll(rm);
            rm &= ~(UINT64_C(1) << bb);
            if (corner_bound(q, a, bb, 0) > b->s)
                break;
            scan_cell(q, &g->cells[a * g->g + bb], b);
        }
    }
}

static void walk(const struct query *q, struct lt__best *b)
{
    if (q->fp->dir > 0)
        walk_best_fit(q, b);
    else
        walk_worst_fit(q, b);
}

/* Bound of a whole configuration: its best corner. */
static double config_bound(const struct query *q)
{
    const struct grid_cfg *g = q->g;

    if (q->fp->dir < 0)
        return corner_bound(q, g->g - 1, g->g - 1, 0);
    return corner_bound(q, coord(q->r->cpu, g->inv_wc, g->g), coord(q->r->mem, g->inv_wm, g->g),
                        g->dlo);
}

static bool config_usable(const struct grid_cfg *g, const struct lt_res *r)
{
    return g->n > 0 && lt__res_ge(&g->cap, r) && g->dhi >= r->disk;
}

/* The search with the formula as a parameter; each instance below passes a constant, and
 * `flatten` inlines this body, and the formula, into it. */
static inline int choose_with(const struct lt_index *ix, const struct lt_cluster *c,
                              const struct lt_task *t, size_t *out, lt__fit_score_fn *score)
{
    const struct grid_index *gi = (const struct grid_index *)ix;
    struct query q = {gi->fp, score, c, NULL, &t->req};
    struct lt__best b = {LT_SCORE_INFEASIBLE, LT_NO_MACHINE};
    uint32_t order[SORT_CONFIGS];
    double bound[SORT_CONFIGS];
    size_t n = 0;

    if (gi->n_cfg > SORT_CONFIGS) {
        for (size_t k = 0; k < gi->n_cfg; k++) {
            q.g = &gi->cfg[k];
            if (!config_usable(q.g, q.r) || config_bound(&q) > b.s)
                continue;
            walk(&q, &b);
        }
        *out = b.i;
        return 0;
    }
    /* Few configurations: visit them in order of their bound, so the first one visited
     * usually holds the answer and the rest are pruned whole. */
    for (size_t k = 0; k < gi->n_cfg; k++) {
        double s;

        q.g = &gi->cfg[k];
        if (!config_usable(q.g, q.r))
            continue;
        s = config_bound(&q);
        n = lt__order_insert(bound, order, n, s, (uint32_t)k);
    }
    for (size_t j = 0; j < n && !(bound[j] > b.s); j++) {
        q.g = &gi->cfg[order[j]];
        walk(&q, &b);
    }
    *out = b.i;
    return 0;
}

#define GRID_CHOOSE(name)                                                                          \
    __attribute__((flatten)) LT__CHOOSE_DECL(lt__grid_choose_##name)                               \
    {                                                                                              \
        (void)p;                                                                                   \
        (void)rng;                                                                                 \
        (void)err;                                                                                 \
        return choose_with(ix, c, t, out, lt__##name);                                             \
    }

GRID_CHOOSE(bestfit1)
GRID_CHOOSE(bestfit2)
GRID_CHOOSE(bestfit3)
GRID_CHOOSE(bestfit4)
GRID_CHOOSE(bestfit5)
GRID_CHOOSE(epvm2)
GRID_CHOOSE(brfs_norm)
