/* grid.c -- the index behind choose() of bestfit1-5, epvm2 and brfs-norm.
 *
 * Design: machines are grouped by configuration (equal capacity), and within a configuration
 * by a g x g grid over (free cpu, free mem), g a power of two (at most 64, so a row of cells is
 * one uint64_t mask; grid_size: with few configurations about eight machines a cell for the
 * keyed formulas and two cells a machine for the others, at least 16 or 32 cells a side). Each cell
 * keeps its members sorted by index and a box bounding their free vectors (cells.c); each
 * configuration keeps a bound on its members' free disk. The grid lines are evenly spaced, except
 * for the keyed formulas below, whose lines are logarithmic below about 1e-3 of the capacity
 * (grid_lines): most machines crowd into the first few hundredths of their capacity in one
 * dimension or both.
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
 * tree (boxtree.c serves epvm, and brfs-dot with direction lists). Bounds are lowered by a
 * relative 1e-9 so that rounding can never prune a machine; the exact comparison is always on
 * the member's own score, ties by index, so choose() returns what the naive rank scan returns
 * (test_property.c).
 *
 * Keyed formulas (bestfit4, bestfit5, epvm2; fp->key): each is, exactly, a task-independent
 * key of the machine (negated) plus a term that depends on the request and only weakly on where
 * the machine lies (epvm2 = -(x^2 + y^2) + 2 (u x + v y) - (u^2 + v^2), with x, y the free
 * fractions and u, v the request's). The worst fits pack thousands of machines of a
 * configuration into a few cells, where box corners bound nothing, and for bestfit4 free disk
 * (10^d, about 10) outweighs the cell's position. So their cells keep members in a max-heap by
 * key (cells.c), each column and configuration keep their largest key, and a cell, a column or
 * a configuration is bounded by the request term at its edges (corr_*) minus its largest key;
 * a cell is searched depth-first down its heap, skipping every subtree whose key is too low.
 * bestfit4 also keeps each row's suffix maxima of the column keys (smax), so that the largest
 * key of a quadrant is one load.
 * Their corner bounds come from a table of 10^(k/64) and Taylor bounds of 10^-u (corner_*),
 * with no call to exp.
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
#define GRID_PER_CELL 2  /* machines per cell with many configurations (grid_size) */
#define NO_CELL       UINT32_MAX
#define BOUND_SLACK   1e-9 /* relative: far above rounding error, far below score gaps */
#define SORT_CONFIGS  64   /* configurations ordered by bound when there are at most this many */
#define GRID_EPS      1e-3 /* fine grid lines: about linear above it, logarithmic below */
#define GRID_TOP_K    16   /* top list of bestfit4, bestfit5, epvm2 for the hint (tophint.c) */

struct grid_cfg {
    /* What choose() reads of every configuration first, together (a cache line or two). */
    struct lt_res cap;         /* the configuration's capacity */
    uint32_t g;                /* cells per dimension (power of two, 1..GRID_MAX) */
    uint32_t n;                /* online machines of this configuration in the grid */
    double inv_cpu, inv_mem;   /* 1 / cap.cpu, 1 / cap.mem: free -> free fraction */
    double inv_disk;           /* 1 / cap.disk */
    double sc_cpu, sc_mem, gd; /* g / cap.cpu, g / cap.mem, g: for coord() on a linear grid */
    bool linear;               /* line[a] = a / g: coord() multiplies instead of searching */
    double dlo, dhi;           /* bounds of the members' free disk (loose, valid when n > 0) */
    double p10lo, p10hi;       /* keyed formulas: a lower bound of 10^(dlo / cap.disk), an upper
                                * bound of 10^(dhi / cap.disk): their disk terms, set up when
                                * dlo or dhi moves rather than in every choose */
    bool keyed;                /* the formula has a key (fp->key): keep p10lo, p10hi */
    uint64_t cols;             /* bit a set iff rows[a] != 0 */
    uint64_t any;              /* bit b set iff row_n[b] > 0 */
    double *skey;           /* keyed formulas: [b * g + a], the largest key in column a at rows >= b
                             * (-inf if none); stored by row, so that a row's maxima over a range
                             * of columns are contiguous (config_bound, walk_best_fit); row 0
                             * holds each column's largest key */
    double *smax;           /* keyed best fits: [b * g + a], the largest key at columns >= a,
                             * rows >= b (-inf if none), the row suffix maxima of skey, so that
                             * the largest key of a quadrant is one load (config_bound,
                             * walk_best_fit). NULL for the worst fits: their keys grow with
                             * the columns, so that a change would reach down most of a row */
    double *ckey;           /* keyed formulas: [a * g + b], the largest key of cell (a, b) (its
                             * heap top; -inf if empty): a column's are contiguous, so a walk
                             * bounds its cells without touching them (visit) */
    uint32_t rc[3];         /* keyed formulas: its cpu, mem and disk capacities' numbers among the
                             * distinct ones (grid_index.rinv) */
    uint32_t shift;         /* log2(GRID_MAX / g): a column at GRID_MAX resolution >> shift is one
                             * of this grid's (the fine lines of g are every 2^shift-th of GRID_MAX's) */
    uint64_t *rows;         /* g masks: bit b of rows[a] set iff cell (a, b) is non-empty */
    struct lt__cell *cells; /* g * g cells; (a, b) = (cpu column, mem row) at a * g + b */
    double *col_dlo;    /* per column: a lower bound of its members' free disk (loose); kept only
                         * for formulas that use disk (fp->disk) */
    uint32_t *row_n;    /* per row: non-empty cells in it */
    uint32_t *col_n;    /* per column: members */
    uint32_t *col_rm;   /* per column: departures since col_dlo was recomputed */
    uint32_t n_changes; /* updates since dlo/dhi were recomputed */
    double line[GRID_MAX + 1]; /* [0, g]: the grid lines as fractions of the capacity:
                                * column a holds cpu fractions in [line[a], line[a + 1]), row b
                                * likewise in mem; line[0] = 0, line[g] = 1 (which the top
                                * cells also hold) */
    double lp10[GRID_MAX + 1]; /* [0, g]: 10^line[a] */
    double lcpu[GRID_MAX + 1]; /* [0, g]: the lines in units, line[a] * cap.cpu */
    double lmem[GRID_MAX + 1]; /* [0, g]: line[a] * cap.mem */
};

struct grid_index {
    struct lt_index base;
    const struct lt__fit_params *fp;
    struct grid_cfg *cfg; /* one per cluster configuration */
    size_t n_cfg;
    uint32_t *cell;           /* machine -> cell number in its configuration's grid, or NO_CELL */
    uint32_t *pos;            /* keyed formulas (fp->key): machine -> position in its heap cell */
    size_t n;                 /* machines covered by `cell` */
    double p10[GRID_MAX + 1]; /* p10[k] = 10^(k / GRID_MAX): free disk's bounds (p10_*) */
    /* Keyed formulas: the distinct capacities of each resource among the configurations, as
     * 1 / capacity (rinv[d * n_cfg + j], j < n_r[d]), so that choose() sets up the request's
     * terms once per capacity rather than once per configuration (struct rterm). */
    double *rinv;
    uint32_t n_r[3];
    double line64[GRID_MAX + 1]; /* the fine lines at GRID_MAX cells per dimension */
    struct lt__changes ch;       /* the last machine changes, for top hints (tophint.c) */
};

/* The column (or row) of free amount f, inv_cap = 1 / capacity, scale = g / capacity: the
 * largest a < g with line[a] <= f * inv_cap (f * scale >= a on a linear grid), so that the
 * bounds, which read the lines, hold for every member up to rounding (which they pad for). */
/* The largest a < g with line[a] <= x (binary search; line[0] = 0, g a power of two). */
static uint32_t line_search(const double *line, uint32_t g, double x)
{
    uint32_t a = 0;

    if (!(x > 0.0))
        return 0;
    for (uint32_t h = g / 2; h > 0; h /= 2) {
        if (line[a + h] <= x)
            a += h;
    }
    return a;
}

static uint32_t coord(const struct grid_cfg *g, double f, double inv_cap, double scale)
{
    double x;

    if (g->linear) {
        x = f * scale;
        if (!(x > 0.0))
            return 0;
        return x >= g->gd ? g->g - 1 : (uint32_t)x;
    }
    return line_search(g->line, g->g, f * inv_cap);
}

static uint32_t cell_number(const struct grid_cfg *g, const struct lt_res *f)
{
    return coord(g, f->cpu, g->inv_cpu, g->sc_cpu) * g->g + coord(g, f->mem, g->inv_mem, g->sc_mem);
}

/* max and min for finite operands: fmax/fmin are library calls under GCC without
 * -ffinite-math-only. */
static double dmax(double a, double b)
{
    return a > b ? a : b;
}

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

static double padded(double s)
{
    return s - BOUND_SLACK * (1.0 + fabs(s));
}

/* ---- maintenance ---- */

/* dlo or dhi moved: their powers of ten, exp's result widened by far more than its error. */
static void disk_powers(struct grid_cfg *g)
{
    if (!g->keyed)
        return;
    g->p10lo = lt__p10(g->dlo * g->inv_disk) * (1.0 - 1e-12);
    g->p10hi = lt__p10(g->dhi * g->inv_disk) * (1.0 + 1e-12);
}

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
    disk_powers(g);
}

/* Machine with free disk d was inserted or updated; g->n already counts it. */
static void disk_note(struct grid_cfg *g, double d)
{
    if (g->n == 1) {
        g->dlo = g->dhi = d; /* the only member: exact */
        g->n_changes = 0;
        disk_powers(g);
        return;
    }
    if (d < g->dlo || d > g->dhi) {
        g->dlo = d < g->dlo ? d : g->dlo;
        g->dhi = d > g->dhi ? d : g->dhi;
        disk_powers(g);
    }
    if (++g->n_changes > g->n)
        disk_recompute(g);
}

static void mark(struct grid_cfg *g, uint32_t cell)
{
    uint32_t a = cell / g->g, b = cell % g->g;
    bool was = g->rows[a] >> b & 1;

    if (g->cells[cell].n > 0) {
        g->rows[a] |= UINT64_C(1) << b;
        g->cols |= UINT64_C(1) << a;
        if (!was && g->row_n[b]++ == 0)
            g->any |= UINT64_C(1) << b;
    } else {
        g->rows[a] &= ~(UINT64_C(1) << b);
        if (g->rows[a] == 0)
            g->cols &= ~(UINT64_C(1) << a);
        if (was && --g->row_n[b] == 0)
            g->any &= ~(UINT64_C(1) << b);
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

static void cell_insert(struct grid_index *gi, struct grid_cfg *g, uint32_t to, uint32_t i,
                        const struct lt_res *f)
{
    if (gi->pos != NULL)
        lt__cell_heap_insert(&g->cells[to], i, f, gi->fp->key(&g->cap, f), gi->pos);
    else
        lt__cell_insert(&g->cells[to], i, f);
}

/* Keyed formulas: skey[b][a] was set; recomputes row b's suffix maxima (smax) from column a
 * leftwards, stopping at the first one unchanged (those left of it are then unchanged too). */
static void smax_refresh(struct grid_cfg *g, uint32_t b, uint32_t a)
{
    const double *sk = &g->skey[(size_t)b * g->g];
    double *sm = &g->smax[(size_t)b * g->g];
    double right = a + 1 < g->g ? sm[a + 1] : -HUGE_VAL;

    for (uint32_t c = a + 1; c-- > 0;) {
        double v = dmax(sk[c], right);
        if (c < a && !(v < sm[c]) && !(v > sm[c]))
            return;
        sm[c] = v;
        right = v;
    }
}

/* Keyed formulas: the cells of column a at rows low..top changed (their heap tops). Recomputes
 * the column's largest keys by row suffix from row top down, stopping below row low at the
 * first one unchanged (the rows under it are then unchanged too), and the suffix maxima over
 * columns of each row it changed. O(top - low) plus the rows until the suffix is held by an
 * unchanged cell, times the columns to the left whose suffix maximum changes. */
static void key_refresh(struct grid_cfg *g, uint32_t a, uint32_t top, uint32_t low)
{
    uint32_t n = g->g;
    double *sk = g->skey;
    double k = top + 1 < n ? sk[(size_t)(top + 1) * n + a] : -HUGE_VAL;

    for (uint32_t b = top + 1; b-- > 0;) {
        double nk = k, *s = &sk[(size_t)b * n + a];
        double ck = g->rows[a] >> b & 1 ? g->cells[a * n + b].key[0] : -HUGE_VAL;
        if (b >= low)
            g->ckey[a * n + b] = ck;
        nk = dmax(nk, ck);
        if (!(nk < *s) && !(nk > *s)) {
            if (b < low)
                return; /* so are the rows below, row 0 included */
        } else {
            *s = nk;
            if (g->smax != NULL)
                smax_refresh(g, b, a);
        }
        k = nk;
    }
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
    lt__changes_note(&gi->ch, i);
    if (from == to) {
        if (to != NO_CELL) {
            if (gi->pos != NULL)
                lt__cell_heap_update(&g->cells[to], (uint32_t)i, &f, gi->fp->key(&g->cap, &f),
                                     gi->pos);
            else
                lt__cell_update(&g->cells[to], (uint32_t)i, &f);
            if (cols) {
                col_note(g, to / g->g, f.disk);
                col_leave(g, to / g->g);
            }
            disk_note(g, f.disk);
            if (gi->pos != NULL)
                key_refresh(g, to / g->g, to % g->g, to % g->g);
        }
        return;
    }
    if (from != NO_CELL) {
        if (gi->pos != NULL)
            lt__cell_heap_remove(&g->cells[from], (uint32_t)i, gi->pos);
        else
            lt__cell_remove(&g->cells[from], (uint32_t)i);
        mark(g, from);
        if (cols) {
            g->col_n[from / g->g]--;
            col_leave(g, from / g->g);
        }
        g->n--;
    }
    if (to != NO_CELL) {
        cell_insert(gi, g, to, (uint32_t)i, &f);
        mark(g, to);
        if (cols) {
            g->col_n[to / g->g]++;
            col_note(g, to / g->g, f.disk);
        }
        g->n++;
        disk_note(g, f.disk);
    }
    gi->cell[i] = to;
    if (gi->pos != NULL && from != NO_CELL && to != NO_CELL && from / g->g == to / g->g) {
        uint32_t b0 = from % g->g, b1 = to % g->g;
        key_refresh(g, to / g->g, b0 > b1 ? b0 : b1, b0 < b1 ? b0 : b1);
    } else if (gi->pos != NULL) {
        if (from != NO_CELL)
            key_refresh(g, from / g->g, from % g->g, from % g->g);
        if (to != NO_CELL)
            key_refresh(g, to / g->g, to % g->g, to % g->g);
    }
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
        lt_free(g->row_n);
        lt_free(g->col_dlo);
        lt_free(g->col_n);
        lt_free(g->col_rm);
        lt_free(g->skey);
        lt_free(g->ckey);
        lt_free(g->smax);
    }
    lt_free(gi->cfg);
    lt_free(gi->cell);
    lt_free(gi->pos);
    lt_free(gi->rinv);
    lt_free(gi);
}

struct key_ctx {
    const struct lt__fit_params *fp;
    const struct lt_res *cap;
};

static double key_of(const void *ctx, const struct lt_res *f)
{
    const struct key_ctx *k = ctx;

    return k->fp->key(k->cap, f);
}

/* Every machine in the cell its free vector says, and listed there. */
static int check_machines(const struct grid_index *gi, const struct lt_cluster *c, const char *name,
                          struct lt_err *err)
{
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
        if (gi->pos != NULL && gi->pos[i] >= cl->n)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu position wrong", name,
                              i);
    }
    return 0;
}

/* Configuration k's cells, their row and column masks and counts, and its disk powers. */
static int check_cells(const struct grid_index *gi, const struct lt_cluster *c, size_t k,
                       const char *name, struct lt_err *err)
{
    const struct grid_cfg *g = &gi->cfg[k];
    uint32_t total = 0;
    uint64_t cols = 0;
    struct key_ctx kc = {gi->fp, &g->cap};

    for (uint32_t a = 0; a < g->g; a++) {
        uint64_t row = 0;
        for (uint32_t b = 0; b < g->g; b++) {
            const struct lt__cell *cl = &g->cells[a * g->g + b];
            int rc = gi->pos != NULL ? lt__cell_heap_check(cl, c, gi->pos, key_of, &kc, name, err)
                                     : lt__cell_check(cl, c, name, err);
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
    for (uint32_t b = 0; b < g->g; b++) {
        uint32_t n = 0;
        for (uint32_t a = 0; a < g->g; a++)
            n += g->rows[a] >> b & 1;
        if (n != g->row_n[b] || (n > 0) != (g->any >> b & 1))
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: row %u counts wrong", name,
                              (unsigned)b);
    }
    if (cols != g->cols || total != g->n)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: configuration %zu counts wrong", name,
                          k);
    if (g->keyed && g->n > 0) {
        double lo = lt__p10(g->dlo * g->inv_disk), hi = lt__p10(g->dhi * g->inv_disk);
        if (!(g->p10lo <= lo && g->p10lo >= lo * (1.0 - 1e-9) && g->p10hi >= hi &&
              g->p10hi <= hi * (1.0 + 1e-9)))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s index: configuration %zu's disk powers are stale", name, k);
    }
    return 0;
}

/* Configuration k's key maxima (keyed formulas only): per cell, per row suffix, per suffix of
 * rows from a column, recomputed from every member. */
static int check_keys(const struct grid_index *gi, size_t k, const char *name, struct lt_err *err)
{
    const struct grid_cfg *g = &gi->cfg[k];
    double kmax = -HUGE_VAL;

    /* The row-suffix maxima, recomputed from every member, top row down; row 0 is the
     * column's largest key. */
    for (uint32_t a = 0; a < g->g; a++) {
        double ks = -HUGE_VAL;
        for (uint32_t bb = g->g; bb-- > 0;) {
            const struct lt__cell *cl = &g->cells[a * g->g + bb];
            double ck = -HUGE_VAL;
            for (uint32_t j = 0; j < cl->n; j++)
                ck = cl->key[j] > ck ? cl->key[j] : ck;
            if (ck < g->ckey[a * g->g + bb] || ck > g->ckey[a * g->g + bb])
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: key maximum of cell %u, %u",
                                  name, (unsigned)a, (unsigned)bb);
            ks = dmax(ks, ck);
            if (ks < g->skey[bb * g->g + a] || ks > g->skey[bb * g->g + a])
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: row-suffix key maximum of cell %u, %u", name,
                                  (unsigned)a, (unsigned)bb);
        }
        kmax = ks > kmax ? ks : kmax;
    }
    for (uint32_t bb = 0; g->smax != NULL && bb < g->g; bb++) {
        double m = -HUGE_VAL;
        for (uint32_t a = g->g; a-- > 0;) {
            m = dmax(m, g->skey[bb * g->g + a]);
            if (m < g->smax[bb * g->g + a] || m > g->smax[bb * g->g + a])
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: suffix key maximum of row %u from column %u", name,
                                  (unsigned)bb, (unsigned)a);
        }
        if (bb == 0)
            kmax = m > kmax ? m : kmax;
    }
    if (g->smax != NULL && (kmax < g->smax[0] || kmax > g->smax[0]))
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: configuration %zu key maximum", name, k);
    return 0;
}

static int grid_check(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err)
{
    const struct grid_index *gi = (const struct grid_index *)ix;
    const char *name = ix->policy->name;
    int rc;

    if (gi->n != c->n || gi->n_cfg != c->n_cfg)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index covers %zu machines, cluster has %zu",
                          name, gi->n, c->n);
    if ((rc = check_machines(gi, c, name, err)) < 0)
        return rc;
    for (size_t k = 0; k < gi->n_cfg; k++) {
        if ((rc = check_cells(gi, c, k, name, err)) < 0)
            return rc;
        if (gi->pos != NULL && (rc = check_keys(gi, k, name, err)) < 0)
            return rc;
    }
    return 0;
}

static const struct lt__index_ops grid_ops = {grid_prepare, grid_commit, grid_check, grid_free};

/* Grid line t in [0, 1] (t = a / g) as a fraction of the capacity: t itself, or, on a fine
 * grid, GRID_EPS ((1 + 1 / GRID_EPS)^t - 1), which is fine near 0 and coarse near 1. */
static double line_at(double t, bool fine)
{
    if (!fine || !(t > 0.0) || !(t < 1.0))
        return t;
    return GRID_EPS * (pow(1.0 + 1.0 / GRID_EPS, t) - 1.0);
}

/* The keyed formulas (bestfit4, bestfit5, epvm2) get the fine grid. bestfit4 packs most
 * machines of a configuration into the first few hundredths of their capacity, where on a
 * linear grid the request's column and row cut through cells of hundreds of members, scanned
 * whole (scan_heap). Under the worst fits many machines are full in one dimension and empty in
 * the other; their keys are the largest and they fit nothing, and on a fine grid they lie in
 * the rows or columns below the request's, outside the region whose largest key bounds a
 * configuration (config_bound). bestfit1-3 and brfs-norm measured slower on it
 * (docs/benchmarks.md). */
static void grid_lines(struct grid_cfg *g, bool fine)
{
    g->linear = !fine;
    for (uint32_t a = 0; a <= g->g; a++) {
        g->line[a] = line_at((double)a / g->g, fine);
        g->lp10[a] = lt__p10(g->line[a]);
        g->lcpu[a] = g->line[a] * g->cap.cpu;
        g->lmem[a] = g->line[a] * g->cap.mem;
    }
}

/* Cells per dimension for a configuration of n machines among n_cfg. With few configurations
 * (n_cfg <= SORT_CONFIGS, so that the memory is bounded), at least 16 (keyed formulas) or 32
 * (the others), and beyond that about eight machines a cell (keyed) or two cells a machine
 * (the others): the small configurations' finer cells bound tighter; the keyed formulas' large
 * ones have fewer, fuller columns to bound, whose heaps skip members by key. With more
 * configurations, about two machines a cell. (bench_choose, in-process A/B against two
 * machines a cell everywhere: 5-12 % for bestfit1-3 and brfs-norm, 12-15 % for the keyed
 * formulas; docs/benchmarks.md.) */
static uint32_t grid_size(uint32_t n, size_t n_cfg, bool keyed)
{
    bool few = n_cfg <= SORT_CONFIGS;
    uint32_t g = !few ? 1 : keyed ? 16 : 32;
    uint32_t per4 = !few ? 4 * GRID_PER_CELL : keyed ? 32 : 2; /* machines per 4 cells */

    while (g < GRID_MAX && (uint64_t)g * g * per4 < 4 * (uint64_t)n)
        g *= 2;
    return g;
}

/* Configuration k's grid: its size, lines, arrays (LT_ENOMEM if one cannot be allocated; what
 * was allocated is grid_free's) and, for the keyed formulas, its capacities' slot in rinv. */
static int cfg_init(struct grid_index *gi, const struct lt_cluster *c, size_t k)
{
    struct grid_cfg *g = &gi->cfg[k];

    g->cap = c->cfg[k].cap;
    g->keyed = gi->fp->key != NULL;
    g->g = grid_size(c->cfg[k].n_machines, c->n_cfg, g->keyed);
    g->inv_cpu = 1.0 / g->cap.cpu;
    g->inv_mem = 1.0 / g->cap.mem;
    g->inv_disk = 1.0 / g->cap.disk;
    g->sc_cpu = g->g / g->cap.cpu;
    g->sc_mem = g->g / g->cap.mem;
    g->gd = g->g;
    g->cells = lt_calloc((size_t)g->g * g->g, sizeof(*g->cells));
    g->rows = lt_calloc(g->g, sizeof(*g->rows));
    g->row_n = lt_calloc(g->g, sizeof(*g->row_n));
    g->col_dlo = lt_calloc(g->g, sizeof(*g->col_dlo));
    g->col_n = lt_calloc(g->g, sizeof(*g->col_n));
    g->col_rm = lt_calloc(g->g, sizeof(*g->col_rm));
    g->skey = lt_calloc((size_t)g->g * g->g, sizeof(*g->skey));
    if (g->keyed && (g->ckey = lt_calloc((size_t)g->g * g->g, sizeof(*g->ckey))) == NULL)
        return LT_ENOMEM;
    if (gi->fp->key != NULL && gi->fp->dir > 0 &&
        (g->smax = lt_calloc((size_t)g->g * g->g, sizeof(*g->smax))) == NULL)
        return LT_ENOMEM;
    if (g->cells == NULL || g->rows == NULL || g->row_n == NULL || g->col_dlo == NULL ||
        g->col_n == NULL || g->col_rm == NULL || g->skey == NULL)
        return LT_ENOMEM;
    grid_lines(g, gi->fp->key != NULL);
    for (uint32_t s = GRID_MAX; s > g->g; s /= 2)
        g->shift++;
    for (int d = 0; gi->rinv != NULL && d < 3; d++) {
        double inv = d == 0 ? g->inv_cpu : d == 1 ? g->inv_mem : g->inv_disk;
        double *ri = &gi->rinv[(size_t)d * c->n_cfg];
        uint32_t j = 0;
        while (j < gi->n_r[d] && (ri[j] < inv || ri[j] > inv))
            j++;
        if (j == gi->n_r[d])
            ri[gi->n_r[d]++] = inv;
        g->rc[d] = j;
    }
    for (size_t j = 0; j < (size_t)g->g * g->g; j++) {
        g->skey[j] = -HUGE_VAL;
        if (g->ckey != NULL)
            g->ckey[j] = -HUGE_VAL;
        if (g->smax != NULL)
            g->smax[j] = -HUGE_VAL;
    }
    for (uint32_t j = 0; j < g->g * g->g; j++)
        g->cells[j].heap = gi->pos != NULL;
    return 0;
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
    if (gi->fp->key != NULL && (gi->pos = lt_calloc(c->n, sizeof(*gi->pos))) == NULL)
        goto out_nomem;
    for (uint32_t k = 0; k <= GRID_MAX; k++) {
        gi->p10[k] = lt__p10((double)k / GRID_MAX);
        gi->line64[k] = line_at((double)k / GRID_MAX, true);
    }
    if (gi->fp->key != NULL && (gi->rinv = lt_calloc(3 * c->n_cfg, sizeof(*gi->rinv))) == NULL)
        goto out_nomem;
    for (size_t k = 0; k < c->n_cfg; k++) {
        if (cfg_init(gi, c, k) < 0)
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
        cell_insert(gi, g, to, (uint32_t)i, &f);
        mark(g, to);
        if (gi->fp->disk) {
            g->col_n[to / g->g]++;
            col_note(g, to / g->g, f.disk);
        }
        g->n++;
        disk_note(g, f.disk);
        gi->cell[i] = to;
    }
    for (size_t k = 0; gi->pos != NULL && k < c->n_cfg; k++) {
        for (uint32_t a = 0; a < gi->cfg[k].g; a++)
            key_refresh(&gi->cfg[k], a, gi->cfg[k].g - 1, 0);
    }
    *out = &gi->base;
    return 0;

out_nomem:
    grid_free(gi ? &gi->base : NULL);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the '%s' index", p->name);
}

/* ---- choose ---- */

struct query;
/* Keyed formulas: the request's terms for one resource over one capacity, shared by every
 * configuration with that capacity (the Google cell's ten configurations have three cpu
 * capacities and one disk capacity), set up once per choose by the formula's term_fn. */
struct rterm {
    double u;   /* the request over the capacity */
    double p;   /* bestfit4/5: 1 + u ln 10, a lower bound of 10^u */
    double k;   /* bestfit4: an upper bound of 1 - 10^-u; bestfit5: a lower bound */
    double m;   /* bestfit4: a lower bound of 10^-u */
    uint32_t c; /* cpu, mem: the request's column on the fine lines at GRID_MAX resolution */
};
/* Keyed formulas: the per-resource terms (term_fn, from t->u), the per-configuration set-up
 * of the query from them (prep_fn), and a lower bound of score + key over the feasible
 * members of cell (a, b) (see the corr_* functions). The search passes the formula, prep and
 * corr as arguments, constants in each instance (not fields of the query, whose address the
 * calls would otherwise see escape), so that they are inlined. */
typedef void term_fn(struct rterm *t);
typedef void prep_fn(struct query *q, const struct rterm *tc, const struct rterm *tm,
                     const struct rterm *td);
typedef double corr_fn(const struct query *q, uint32_t a0, uint32_t b0, uint32_t a1, uint32_t b1);
typedef double corner_fn(const struct query *q, uint32_t a, uint32_t b, double d);
/* Keyed best fits, optional: a lower bound of the score of every member that fits with key <= k
 * and free disk >= d, whatever its cell. */
typedef double kb_fn(const struct query *q, double k, double d, uint32_t a, uint32_t b);
/* Keyed formulas, optional: a lower bound of the score of a member with free vector f and key
 * key, close enough to the score that few members but the answer get their exact score (three
 * exp calls for bestfit5). bestfit4 has none: its cell bound (corr) is nearly as tight, and a
 * member bound measured slower than the exact scores it saved (docs/benchmarks.md). */
typedef double mb_fn(const struct query *q, const struct lt_res *f, double key);
#define FORMULA                                                                                    \
    lt__fit_score_fn *score, term_fn *term, prep_fn *prep, corr_fn *corr, corner_fn *corner,       \
        kb_fn *kb, mb_fn *mb
#define PASS score, term, prep, corr, corner, kb, mb

struct query {
    const struct grid_index *gi;
    const struct lt__fit_params *fp;
    const struct lt_cluster *c;
    const struct grid_cfg *g;
    const struct lt_res *r;
    double u, v;     /* the request over the configuration's capacity: cpu, mem */
    double w;        /* bestfit4/5 (prep_p10): and disk */
    double pu, pv;   /* bestfit4/5 (prep_p10): 1 + u ln 10, 1 + v ln 10, lower bounds of 10^u,
                      * 10^v */
    double k[3];     /* per-formula terms of corr, set by its prep_fn */
    double zb, zc;   /* per-formula disk terms of corr and corner */
    uint32_t qa, qb; /* the request's column and row */
    double m[4];     /* kb_bestfit4: lower bounds of 10^-u, 10^-v, 10^-w, and the least of them */
};

/* Lower bound of the score over the feasible part of the box [lo, hi]: the formula at the
 * low corner (clamped to the request) for best fits, at the high corner for worst fits. */
static double box_bound(const struct query *q, const struct lt_res *lo, const struct lt_res *hi,
                        lt__fit_score_fn *score)
{
    const struct lt_res *c = q->fp->dir > 0 ? lo : hi;
    struct lt_res p;

    p.cpu = dmax(c->cpu, q->r->cpu);
    p.mem = dmax(c->mem, q->r->mem);
    p.disk = dmax(c->disk, q->r->disk);
    return padded(score(&q->g->cap, &p, q->r, &q->c->ref));
}

/* Best fits: bound for all cells (>= a, >= b) whose members have at least free disk d, the
 * formula at the corner (a, b, d). Worst fits: bound for all cells (<= a, <= b), the formula
 * at their high corner (a + 1, b + 1, dhi). */
static double corner_bound(const struct query *q, uint32_t a, uint32_t b, double d,
                           lt__fit_score_fn *score)
{
    const struct grid_cfg *g = q->g;
    struct lt_res p;

    if (q->fp->dir > 0) {
        p.cpu = g->lcpu[a];
        p.mem = g->lmem[b];
        p.disk = d;
    } else {
        p.cpu = g->lcpu[a + 1];
        p.mem = g->lmem[b + 1];
        p.disk = g->dhi;
    }
    return box_bound(q, &p, &p, score);
}

/* ---- the keyed formulas' cell terms ----
 *
 * x, y, z are a member's free cpu, mem, disk over capacity, u, v, w the request's; a member
 * of cell (a, b) has x in [line[a], line[a+1]] and y in [line[b], line[b+1]], and a feasible one
 * also x >= u, y >= v. With t = u ln 10, 1 - 10^-u = 1 - e^-t lies between the Taylor
 * polynomials of degree 4 and 5, t - t^2/2 + t^3/6 - t^4/24 (+ t^5/120), for every t >= 0
 * (Lagrange remainders of alternating signs), and 10^u >= 1 + t. Each corr_* is a lower bound
 * of score + key over the cell in exact arithmetic; scan_heap pads it. */

/* A lower bound of 10^z for 0 <= z from the table: 10^z = p10[k] 10^(z - k/64), and e^x >= 1 + x +
 * x^2/2 for x >= 0. */
static double p10_lower(const struct query *q, double z)
{
    double x = z * GRID_MAX;
    uint32_t k = x >= GRID_MAX ? GRID_MAX : (uint32_t)x;
    double t = (z - (double)k / GRID_MAX) * LT__LN10;

    return q->gi->p10[k] * (1.0 + t + 0.5 * t * t);
}

static double low_p10(double t) /* a lower bound of 1 - e^-t, t >= 0 */
{
    return dmax(t * (1.0 - t * (0.5 - t * (1.0 / 6.0 - t * (1.0 / 24.0)))), 0.0);
}

/* e^-t >= 1 - t + t^2/2 - t^3/6 + t^4/24 - t^5/120 for t >= 0; high_exp stores 1 - that (an
 * upper bound of 1 - e^-t) and low_exp_mul turns it back into the lower bound of e^-t. */
static double high_exp(double t)
{
    return t * (1.0 - t * (0.5 - t * (1.0 / 6.0 - t * (1.0 / 24.0 - t * (1.0 / 120.0)))));
}

static double low_exp_mul(double h)
{
    return dmax(1.0 - h, 0.0);
}

static double high_p10(double t) /* an upper bound of 1 - e^-t, t >= 0 */
{
    return dmin(high_exp(t), 1.0);
}

/* epvm2 + key = 2 (u x + v y) - (u^2 + v^2): at the low edges, clamped to the request. */
static inline __attribute__((always_inline)) void term_epvm2(struct rterm *t)
{
    (void)t;
}

static inline __attribute__((always_inline)) void
prep_epvm2(struct query *q, const struct rterm *tc, const struct rterm *tm, const struct rterm *td)
{
    (void)td;
    q->u = tc->u;
    q->v = tm->u;
    q->k[0] = q->u * q->u + q->v * q->v;
}

static inline __attribute__((always_inline)) double corr_epvm2(const struct query *q, uint32_t a,
                                                               uint32_t b, uint32_t a1, uint32_t b1)
{
    (void)a1;
    (void)b1;
    const double *ln = q->g->line;

    return 2 * (q->u * dmax(ln[a], q->u) + q->v * dmax(ln[b], q->v)) - q->k[0];
}

/* The terms bestfit4 and bestfit5 share: the fractions, the lower bounds of 10^u, 10^v, and
 * the coefficients k. */
static inline __attribute__((always_inline)) void
prep_p10(struct query *q, const struct rterm *tc, const struct rterm *tm, const struct rterm *td)
{
    q->u = tc->u;
    q->v = tm->u;
    q->w = td->u;
    q->pu = tc->p;
    q->pv = tm->p;
    q->k[0] = tc->k;
    q->k[1] = tm->k;
    q->k[2] = td->k;
}

/* bestfit5 + key = max(x - u, y - v) - max(x, y) + sum (1 - 10^-u) 10^x (corr_bestfit5). */
static inline __attribute__((always_inline)) void term_bestfit5(struct rterm *t)
{
    t->p = 1.0 + t->u * LT__LN10;
    t->k = low_p10(t->u * LT__LN10);
}

static inline __attribute__((always_inline)) void prep_bestfit5(struct query *q,
                                                                const struct rterm *tc,
                                                                const struct rterm *tm,
                                                                const struct rterm *td)
{
    const struct grid_cfg *g = q->g;

    prep_p10(q, tc, tm, td);
    q->zb = q->k[2] * (q->w <= g->dlo * g->inv_disk ? g->p10lo : p10_lower(q, q->w));
    q->zc = (1.0 - q->k[2]) * g->p10hi;
}

/* bestfit5 at the high corner (a + 1, b + 1, dhi) bounds every member of the cells (<= a,
 * <= b): max(x - u, y - v) - sum 10^-u 10^x, with 10^-u <= 1 - low_p10(t). */
static inline __attribute__((always_inline)) double
corner_bestfit5(const struct query *q, uint32_t a, uint32_t b, double d)
{
    const double *ln = q->g->line, *lp10 = q->g->lp10;

    (void)d;
    return padded(dmax(ln[a + 1] - q->u, ln[b + 1] - q->v) - (1.0 - q->k[0]) * lp10[a + 1] -
                  (1.0 - q->k[1]) * lp10[b + 1] - q->zc);
}

/* With the key sum 10^x - max(x, y), the rest is f + sum (1 - 10^-u) 10^x with f = max(x - u,
 * y - v) - max(x, y) in [-max(u, v), -min(u, v)]: f >= -u where every member has x >= y, -v
 * where every member has y >= x. (With the key sum 10^x alone, f was max(x - u, y - v), which
 * ranges over [0, 1] in a column or a configuration: its bound at the low edges was loose by
 * up to the answer's own max(x, y).) */
static inline __attribute__((always_inline)) double
corr_bestfit5(const struct query *q, uint32_t a, uint32_t b, uint32_t a1, uint32_t b1)
{
    const double *lp10 = q->g->lp10;
    double px = dmax(lp10[a], q->pu);
    double py = dmax(lp10[b], q->pv);
    double f;

    if (a >= b1 + 1)
        f = -q->u;
    else if (b >= a1 + 1)
        f = -q->v;
    else
        f = -dmax(q->u, q->v);
    return f + q->k[0] * px + q->k[1] * py + q->zb;
}

/* bestfit4 + key = -sum (1 - 10^-u) 10^x: at the high edges. */
static inline __attribute__((always_inline)) void term_bestfit4(struct rterm *t)
{
    t->p = 1.0 + t->u * LT__LN10;
    t->k = high_p10(t->u * LT__LN10);
    t->m = low_exp_mul(high_exp(t->u * LT__LN10));
}

static inline __attribute__((always_inline)) void prep_bestfit4(struct query *q,
                                                                const struct rterm *tc,
                                                                const struct rterm *tm,
                                                                const struct rterm *td)
{
    const struct grid_cfg *g = q->g;

    prep_p10(q, tc, tm, td);
    q->zb = q->k[2] * g->p10hi;
    q->m[0] = tc->m;
    q->m[1] = tm->m;
    q->m[2] = td->m;
    q->m[3] = dmin(dmin(q->m[0], q->m[1]), q->m[2]);
}

/* bestfit4 at the low corner (a, b, d), clamped to the request, bounds every member of the
 * cells (>= a, >= b) with free disk >= d: sum 10^-u 10^x with 10^-u >= low_exp(t). */
static inline __attribute__((always_inline)) double
corner_bestfit4(const struct query *q, uint32_t a, uint32_t b, double d)
{
    const double *lp10 = q->g->lp10;

    return padded(q->m[0] * dmax(lp10[a], q->pu) + q->m[1] * dmax(lp10[b], q->pv) +
                  q->m[2] * p10_lower(q, dmax(d * q->g->inv_disk, q->w)));
}

/* bestfit4 from the key: with lu, lv, lw lower bounds of 10^-u, 10^-v, 10^-w and l the least,
 * score >= lu 10^x + lv 10^y + lw 10^z = -l key + (lu - l) 10^x + (lv - l) 10^y + (lw - l) 10^z,
 * and each power is at least its value at the low edge of the range (columns >= a, rows >= b,
 * free disk >= d), clamped to the request. Tight where the corner bounds are not: over many
 * columns, whose low corner mixes the lowest row of one with the least disk of another. */
static inline __attribute__((always_inline)) double kb_bestfit4(const struct query *q, double k,
                                                                double d, uint32_t a, uint32_t b)
{
    const double *lp10 = q->g->lp10;

    if (!(k > -HUGE_VAL))
        return HUGE_VAL; /* no member */
    return -q->m[3] * k + (q->m[0] - q->m[3]) * dmax(lp10[a], q->pu) +
           (q->m[1] - q->m[3]) * dmax(lp10[b], q->pv) +
           (q->m[2] - q->m[3]) * p10_lower(q, dmax(d * q->g->inv_disk, q->w));
}

static inline __attribute__((always_inline)) double
corr_bestfit4(const struct query *q, uint32_t a0, uint32_t b0, uint32_t a, uint32_t b)
{
    const double *lp10 = q->g->lp10;

    (void)a0;
    (void)b0;
    return -(q->k[0] * lp10[a + 1] + q->k[1] * lp10[b + 1] + q->zb);
}

/* bestfit5 of one member: score = -key + max(x - u, y - v) - max(x, y) + sum (1 - 10^-u) 10^x,
 * with the lower bounds of 1 - 10^-u (prep) and of 10^x from the table. */
static inline __attribute__((always_inline)) double mb_bestfit5(const struct query *q,
                                                                const struct lt_res *f, double key)
{
    const struct grid_cfg *g = q->g;
    double x = f->cpu * g->inv_cpu, y = f->mem * g->inv_mem, z = f->disk * g->inv_disk;

    return dmax(x - q->u, y - q->v) - dmax(x, y) + q->k[0] * p10_lower(q, x) +
           q->k[1] * p10_lower(q, y) + q->k[2] * p10_lower(q, z) - key;
}

static void scan_cell(const struct query *q, const struct lt__cell *cl, struct lt__best *b,
                      lt__fit_score_fn *score)
{
    const struct lt_cluster *c = q->c;

    if (!lt__res_ge(&cl->hi, q->r) || box_bound(q, &cl->lo, &cl->hi, score) > b->s)
        return;
    if (lt__box_is_point(&cl->lo, &cl->hi)) {
        /* Every member has this free vector, hence this score: the first one wins (a top
         * list wants them all, in index order, until one is not taken). */
        double s = score(&q->g->cap, &cl->f[0], q->r, &c->ref);
        lt__best_offer(b, s, cl->mem[0]);
        for (uint32_t k = 1; lt__best_wants_all(b) && k < cl->n; k++)
            lt__best_offer(b, s, cl->mem[k]);
        return;
    }
    for (uint32_t k = 0; k < cl->n; k++) {
        if (lt__res_ge(&cl->f[k], q->r))
            lt__best_offer(b, score(&q->g->cap, &cl->f[k], q->r, &c->ref), cl->mem[k]);
    }
}

/* A heap cell: members whose key is too low for corr - key to reach the best are skipped
 * with their whole subtree (keys only fall downwards); the others are scored exactly. */
/* Offers member k of a heap cell (index i), unless its member bound rules it out. */
static inline __attribute__((always_inline)) void
offer_member(const struct query *q, const struct lt__cell *cl, uint32_t k, uint32_t i,
             struct lt__best *b, lt__fit_score_fn *score, mb_fn *mb)
{
    if (mb != NULL && padded(mb(q, &cl->f[k], cl->key[k])) > b->s)
        return;
    lt__best_offer(b, score(&q->g->cap, &cl->f[k], q->r, &q->c->ref), i);
}

static void scan_heap(const struct query *q, const struct lt__cell *cl, double corr,
                      struct lt__best *b, lt__fit_score_fn *score, mb_fn *mb)
{
    uint32_t stack[64], sp = 0; /* depth-first: at most one pending sibling per level */

    if (!lt__res_ge(&cl->hi, q->r))
        return;
    if (lt__box_is_point(&cl->lo, &cl->hi)) {
        /* Every member has this free vector, hence this score: the lowest index wins (a top
         * list wants them all; the heap is not in index order). */
        offer_member(q, cl, 0, cl->min_i, b, score, mb);
        if (lt__best_wants_all(b) && cl->n > 1) {
            double s = score(&q->g->cap, &cl->f[0], q->r, &q->c->ref);
            for (uint32_t k = 0; k < cl->n; k++)
                lt__best_offer(b, s, cl->mem[k]);
        }
        return;
    }
    if (q->fp->dir > 0 && !lt__res_ge(&cl->lo, q->r)) {
        /* A best fit's cell in the request's row or column: the members that do not fit are
         * the fullest machines, whose keys are the largest (bestfit4), so a search by key
         * would visit them all. Scan the members in storage order instead, fit first. */
        for (uint32_t k = 0; k < cl->n; k++) {
            if (lt__res_ge(&cl->f[k], q->r) && !(padded(corr - cl->key[k]) > b->s))
                offer_member(q, cl, k, cl->mem[k], b, score, mb);
        }
        return;
    }
    stack[sp++] = 0;
    while (sp > 0) {
        uint32_t k = stack[--sp];
        if (padded(corr - cl->key[k]) > b->s)
            continue;
        if (lt__res_ge(&cl->f[k], q->r))
            offer_member(q, cl, k, cl->mem[k], b, score, mb);
        if (2 * k + 2 < cl->n)
            stack[sp++] = 2 * k + 2;
        if (2 * k + 1 < cl->n)
            stack[sp++] = 2 * k + 1;
    }
}

/* The corner bound of corner_bound, or the formula's cheaper one (a constant per instance). */
static double corner_of(const struct query *q, uint32_t a, uint32_t b, double d, FORMULA)
{
    (void)prep;
    (void)term;
    (void)corr;
    (void)kb;
    (void)mb;
    if (corner != NULL)
        return corner(q, a, b, d);
    return corner_bound(q, a, b, d, score);
}

/* Keyed formulas: can column a, with non-empty rows rm, hold a member that reaches the best? */
static bool column_open(const struct query *q, uint32_t a, uint64_t rm, const struct lt__best *b,
                        corr_fn *corr, kb_fn *kb)
{
    uint32_t lo = (uint32_t)__builtin_ctzll(rm), hi = 63u - (uint32_t)__builtin_clzll(rm);
    double k;

    if (corr == NULL)
        return true;
    k = q->g->skey[q->qb * q->g->g + a]; /* = at row lo: rows qb..lo - 1 of a are empty */
    if (kb != NULL && padded(kb(q, k, q->g->col_dlo[a], a, lo)) > b->s)
        return false;
    return !(padded(corr(q, a, lo, a, hi) - k) > b->s);
}

static void visit(const struct query *q, uint32_t a, uint32_t bb, struct lt__best *b, FORMULA)
{
    const struct lt__cell *cl = &q->g->cells[a * q->g->g + bb];

    (void)term;
    (void)prep;
    (void)corner;
    (void)kb;
    if (corr != NULL) {
        /* The cell's bound from the dense ckey first: most cells end here, untouched. */
        double cr = corr(q, a, bb, a, bb);
        if (!(padded(cr - q->g->ckey[a * q->g->g + bb]) > b->s))
            scan_heap(q, cl, cr, b, score, mb);
    } else {
        scan_cell(q, cl, b, score);
    }
}

static void walk_best_fit(const struct query *q, struct lt__best *b, FORMULA)
{
    const struct grid_cfg *g = q->g;
    uint32_t qa = q->qa, qb = q->qb;
    uint64_t cm = g->cols & (~UINT64_C(0) << qa);
    double dlo = g->dlo;

    while (cm != 0) {
        uint32_t a = (uint32_t)__builtin_ctzll(cm);
        uint64_t rm = g->rows[a] & (~UINT64_C(0) << qb);

        cm &= cm - 1;
        if (corr != NULL && rm == 0)
            continue; /* the bounds below only grow with a: the next column tests them */
        if (corner_of(q, a, qb, dlo, PASS) > b->s)
            break;
        if (rm == 0)
            continue;
        if (kb != NULL && padded(kb(q, g->smax[qb * g->g + a], dlo, a, qb)) > b->s)
            break;
        if (!column_open(q, a, rm, b, corr, kb))
            continue;
        while (rm != 0) {
            uint32_t bb = (uint32_t)__builtin_ctzll(rm);
            rm &= rm - 1;
            if (corner_of(q, a, bb, q->fp->disk ? g->col_dlo[a] : g->dlo, PASS) > b->s)
                break;
            if (kb != NULL && padded(kb(q, g->skey[bb * g->g + a], g->col_dlo[a], a, bb)) > b->s)
                break; /* nor any row above */
            visit(q, a, bb, b, PASS);
        }
    }
}

/* Worst fits: the non-empty rows rm of column a, from the top row down. */
static void walk_column_down(const struct query *q, uint32_t a, uint64_t rm, struct lt__best *b,
                             FORMULA)
{
    while (rm != 0) {
        uint32_t bb = 63u - (uint32_t)__builtin_clzll(rm);
        rm &= ~(UINT64_C(1) << bb);
        if (corner_of(q, a, bb, 0, PASS) > b->s)
            break;
        visit(q, a, bb, b, PASS);
    }
}

/* Keyed worst fits: the column with the best column bound (that of column_open) first, so that
 * the best found so far is tight early, then the others from the top column down. */
static void walk_worst_fit_keyed(const struct query *q, struct lt__best *b, FORMULA)
{
    const struct grid_cfg *g = q->g;
    const double *row = &g->skey[q->qb * g->g];
    double cb[GRID_MAX], best = HUGE_VAL;
    uint64_t open = 0;
    uint32_t first = 0;

    /* Every column from qa up, without branches (their outcomes are coin tosses). */
    for (uint32_t a = q->qa; a < g->g; a++) {
        uint64_t rm = g->rows[a] & (~UINT64_C(0) << q->qb);
        uint32_t lo = (uint32_t)__builtin_ctzll(rm | UINT64_C(1) << 63);
        uint32_t hi = 63u - (uint32_t)__builtin_clzll(rm | 1);
        /* The column's largest key at rows >= qb is its largest at rows >= lo (the rows
         * between are empty), and row qb's are contiguous. */
        double s = rm != 0 ? padded(corr(q, a, lo, a, hi) - row[a]) : HUGE_VAL;
        bool in = !(s > b->s) && rm != 0;
        cb[a] = s;
        open |= (uint64_t)in << a;
        first = s < best ? a : first;
        best = s < best ? s : best;
    }
    if (open == 0)
        return;
    walk_column_down(q, first, g->rows[first] & (~UINT64_C(0) << q->qb), b, PASS);
    open &= ~(UINT64_C(1) << first);
    while (open != 0) {
        uint32_t a = 63u - (uint32_t)__builtin_clzll(open);
        open &= ~(UINT64_C(1) << a);
        if (!(cb[a] > b->s))
            walk_column_down(q, a, g->rows[a] & (~UINT64_C(0) << q->qb), b, PASS);
    }
}

static void walk_worst_fit(const struct query *q, struct lt__best *b, FORMULA)
{
    const struct grid_cfg *g = q->g;
    uint32_t qa = q->qa, qb = q->qb;
    uint64_t cm = g->cols & (~UINT64_C(0) << qa);

    if (corr != NULL) {
        walk_worst_fit_keyed(q, b, PASS);
        return;
    }
    while (cm != 0) {
        uint32_t a = 63u - (uint32_t)__builtin_clzll(cm);
        uint64_t rm = g->rows[a] & (~UINT64_C(0) << qb);

        cm &= ~(UINT64_C(1) << a);
        if (corner_of(q, a, g->g - 1, 0, PASS) > b->s)
            break;
        if (rm == 0 || !column_open(q, a, rm, b, corr, kb))
            continue;
        walk_column_down(q, a, rm, b, PASS);
    }
}

static void walk(const struct query *q, struct lt__best *b, FORMULA)
{
    if (q->fp->dir > 0)
        walk_best_fit(q, b, PASS);
    else
        walk_worst_fit(q, b, PASS);
}

/* Bound of a whole configuration: its best corner and, for the keyed formulas, the bounds from
 * the largest key among its members that can fit. */
static double config_bound(const struct query *q, FORMULA)
{
    const struct grid_cfg *g = q->g;
    double s;

    (void)term;
    (void)prep;
    if (q->fp->dir < 0)
        s = corner_of(q, g->g - 1, g->g - 1, 0, PASS);
    else
        s = corner_of(q, q->qa, q->qb, g->dlo, PASS);
    if (corr != NULL) {
        /* Only members at columns and rows >= the request's can fit: their largest key, and
         * the bounds from it (for worst fits the configuration's largest key mostly belongs
         * to machines full in one dimension, which fit nothing). */
        double k = -HUGE_VAL;
        if (g->smax != NULL) {
            k = g->smax[q->qb * g->g + q->qa];
        } else {
            const double *row = &g->skey[q->qb * g->g];
            for (uint32_t a = q->qa; a < g->g; a++)
                k = dmax(k, row[a]);
        }
        if (!(k > -HUGE_VAL))
            return HUGE_VAL; /* no member there */
        if (kb != NULL)
            s = dmax(s, padded(kb(q, k, g->dlo, q->qa, q->qb)));
        s = dmax(s, padded(corr(q, q->qa, q->qb, 63u - (uint32_t)__builtin_clzll(g->cols),
                                63u - (uint32_t)__builtin_clzll(g->any)) -
                           k));
    }
    return s;
}

static bool config_usable(const struct grid_cfg *g, const struct lt_res *r)
{
    return g->n > 0 && lt__res_ge(&g->cap, r) && g->dhi >= r->disk;
}

/* Points the query at configuration k, with the request's terms (keyed formulas) set up
 * for it alone. */
static void set_config(struct query *q, size_t k, term_fn *term, prep_fn *prep)
{
    struct rterm t[3];

    q->g = &q->gi->cfg[k];
    q->u = q->r->cpu * q->g->inv_cpu;
    q->v = q->r->mem * q->g->inv_mem;
    q->qa = coord(q->g, q->r->cpu, q->g->inv_cpu, q->g->sc_cpu);
    q->qb = coord(q->g, q->r->mem, q->g->inv_mem, q->g->sc_mem);
    if (prep == NULL)
        return;
    t[0].u = q->u;
    t[1].u = q->v;
    t[2].u = q->r->disk * q->g->inv_disk;
    for (int d = 0; d < 3; d++)
        term(&t[d]);
    prep(q, &t[0], &t[1], &t[2]);
}

/* The search with the formula as a parameter; each instance below passes constants, and
 * `flatten` inlines this body, and the formula, into it. */
static inline int choose_with(const struct lt_index *ix, const struct lt_cluster *c,
                              const struct lt_task *t, struct lt_choose_hint *hint, uint32_t top_k,
                              size_t *out, FORMULA)
{
    const struct grid_index *gi = (const struct grid_index *)ix;
    struct query q = {.gi = gi, .fp = gi->fp, .c = c, .r = &t->req};
    struct lt__top top = {.k = top_k};
    struct lt__best b = {LT_SCORE_INFEASIBLE, LT_NO_MACHINE, NULL};
    struct query qs[SORT_CONFIGS];
    struct rterm rt[3][SORT_CONFIGS];
    uint32_t order[SORT_CONFIGS];
    double bound[SORT_CONFIGS];
    size_t n = 0;

    if (top_k > 0 && hint != NULL) {
        if (lt__top_hint_use(hint, ix, &gi->ch, c, &t->req, score, out))
            return 0;
        b.top = &top;
    }
    if (gi->n_cfg > SORT_CONFIGS) {
        for (size_t k = 0; k < gi->n_cfg; k++) {
            if (!config_usable(&gi->cfg[k], q.r))
                continue;
            set_config(&q, k, term, prep);
            if (config_bound(&q, PASS) > b.s)
                continue;
            walk(&q, &b, PASS);
        }
        *out = lt__best_answer(&b);
        lt__top_hint_keep(hint, ix, &gi->ch, &t->req, &b);
        return 0;
    }
    /* Few configurations: visit them in order of their bound, so the first one visited
     * usually holds the answer and the rest are pruned whole. A keyed formula's query, whose
     * set-up (prep) costs more than a copy, is kept per configuration (qs[k]) for the walk,
     * and its terms are set up once per distinct capacity of each resource (rt). */
    if (prep != NULL) {
        const double req[3] = {t->req.cpu, t->req.mem, t->req.disk};
        for (int d = 0; d < 3; d++) {
            for (uint32_t j = 0; j < gi->n_r[d]; j++) {
                struct rterm *rd = &rt[d][j];
                rd->u = req[d] * gi->rinv[(size_t)d * gi->n_cfg + j];
                term(rd);
                rd->c = d < 2 ? line_search(gi->line64, GRID_MAX, rd->u) : 0;
            }
        }
    }
    for (size_t k = 0; k < gi->n_cfg; k++) {
        const struct grid_cfg *g = &gi->cfg[k];
        struct query *qk = prep != NULL ? &qs[k] : &q;
        double s;

        if (!config_usable(g, q.r))
            continue;
        if (prep != NULL) {
            const struct rterm *tc = &rt[0][g->rc[0]], *tm = &rt[1][g->rc[1]];
            qk->gi = gi;
            qk->fp = q.fp;
            qk->c = c;
            qk->r = q.r;
            qk->g = g;
            qk->qa = tc->c >> g->shift;
            qk->qb = tm->c >> g->shift;
            prep(qk, tc, tm, &rt[2][g->rc[2]]);
        } else {
            set_config(qk, k, term, prep);
        }
        s = config_bound(qk, PASS);
        if (s < HUGE_VAL)
            n = lt__order_insert(bound, order, n, s, (uint32_t)k);
    }
    for (size_t j = 0; j < n && !(bound[j] > b.s); j++) {
        if (prep != NULL) {
            walk(&qs[order[j]], &b, PASS);
        } else {
            set_config(&q, order[j], term, prep);
            walk(&q, &b, PASS);
        }
    }
    *out = lt__best_answer(&b);
    lt__top_hint_keep(hint, ix, &gi->ch, &t->req, &b);
    return 0;
}

/* top_k: the top list a search keeps for the hint (tophint.c); 0: no hint. */
#define GRID_CHOOSE(name, top_k, term, prep, corr, corner, kb, mb)                                 \
    __attribute__((flatten)) LT__CHOOSE_DECL(lt__grid_choose_##name)                               \
    {                                                                                              \
        (void)p;                                                                                   \
        (void)rng;                                                                                 \
        (void)err;                                                                                 \
        return choose_with(ix, c, t, hint, top_k, out, lt__##name, term, prep, corr, corner, kb,   \
                           mb);                                                                    \
    }

GRID_CHOOSE(bestfit1, 0, NULL, NULL, NULL, NULL, NULL, NULL)
GRID_CHOOSE(bestfit2, 0, NULL, NULL, NULL, NULL, NULL, NULL)
GRID_CHOOSE(bestfit3, 0, NULL, NULL, NULL, NULL, NULL, NULL)
GRID_CHOOSE(bestfit4, GRID_TOP_K, term_bestfit4, prep_bestfit4, corr_bestfit4, corner_bestfit4,
            kb_bestfit4, NULL)
GRID_CHOOSE(bestfit5, GRID_TOP_K, term_bestfit5, prep_bestfit5, corr_bestfit5, corner_bestfit5,
            NULL, mb_bestfit5)
GRID_CHOOSE(epvm2, GRID_TOP_K, term_epvm2, prep_epvm2, corr_epvm2, NULL, NULL, NULL)
GRID_CHOOSE(brfs_norm, 0, NULL, NULL, NULL, NULL, NULL, NULL)
