/* fit.c -- the "fit" family of placement scores: bestfit1-5, epvm, epvm2, brfs-dot, brfs-norm.
 *
 * Source: Stein, Henzinger, Radovanovic, "Scheduling a Large DataCenter" (Google Research,
 *   June 2009), slide "Algorithms" (Bestfit V1-V5, Worst Fit (EPVM)); Cavdar, "Priority
 *   Scheduling for Heterogeneous Workloads in Computing Clusters" (2015), Fig. 3.4 BRFS
 *   [L627-L681] as read in spec/cavdar-thesis-digest.md section 2.5 and A7.
 * Definition: with a = free_ram_pct, b = free_cpu_pct, d = free_disk_pct of machine i after
 *   placing task j (free after / capacity):
 *     bestfit1  a + b                 bestfit4  10^a + 10^b + 10^d
 *     bestfit2  a^2 + b^2             bestfit5  max(a, b) - (10^a + 10^b + 10^d)
 *     bestfit3  10^a + 10^b           epvm      -(a + b)         epvm2  -(a^2 + b^2)
 *   and with x^ = x / ref (the cluster's reference capacity), c the residual (free before
 *   placement) and q the request, over cpu and mem:
 *     brfs-dot  -(q_cpu^ c_cpu^ + q_mem^ c_mem^)     brfs-norm  (q_cpu^ - c_cpu^)^2 + (q_mem^ -
 * c_mem^)^2 Reading: bestfit5 is the slide's formula as laid out; it is strictly decreasing in
 * every free fraction, so it behaves as a worst fit (docs/policies.md argues that it may be the
 *   lost EPVM formula; DESIGN.md keeps it as written). epvm's own formula is lost on the
 *   slide; worst fit is read as the negated bestfit1 (and epvm2 the negated lt__bestfit2).
 * Ties: lowest machine index (lt__better).
 * Implementation: rank() evaluates the formula for each candidate; choose() is grid.c or
 *   boxtree.c (see the table at the end), which rely on `dir`: every formula is monotone in
 *   each free component on f >= q.
 * Tests: tests/unit/scoring/test_fit.c (hand-computed cases), test_property.c (choose == rank).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>

int lt__fit_rank(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                 const size_t *cand, size_t n, unsigned flags, struct lt_rng *rng, double *scores,
                 struct lt_err *err)
{
    const struct lt__fit_params *fp = p->params;
    const struct lt_res *r = &t->req;
    int rc = lt__rank_check(c, cand, n, scores, err);

    (void)rng;
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        const struct lt__machine *m = &c->m[cand[k]];
        struct lt_res f;

        if (lt__rank_free(m, r, flags, &f))
            scores[k] = fp->score(&m->cap, &f, r, &c->ref);
        else
            scores[k] = LT_SCORE_INFEASIBLE;
    }
    return 0;
}

/* ---- the worst-fit bound of epvm (boxtree.c) ----
 *
 * epvm is G(x - rx, y - ry) with G(u, v) = -(u + v), x, y = free cpu, mem over capacity and
 * rx, ry the request over capacity; so g_r(f) = g_0(f) + (rx + ry), where g_0 is the score of
 * an empty request (task-independent, kept per node as a maximum of -g_0 in aux[0]): the
 * bound is exact; boxtree.c lowers it by a relative 1e-9 for rounding. (epvm2 and bestfit5
 * measured faster on the grid; brfs-dot has its own index, boxtree.c's direction lists.) */

static const struct lt_res zero_req = {0, 0, 0};

static void epvm_aux(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *ref,
                     double *aux)
{
    aux[0] = -lt__epvm(cap, f, &zero_req, ref);
}

/* ---- keys of the grid's heap cells (grid.c) ----
 *
 * With x, y, z = free cpu, mem, disk over capacity, each formula is its key's negation plus a
 * term that depends on the request and, weakly, on where the machine lies; grid.c bounds that
 * term over a cell from the cell's edges (see its corr_* functions). */

static double p10_sum(const struct lt_res *cap, const struct lt_res *f)
{
    return lt__p10(f->cpu / cap->cpu) + lt__p10(f->mem / cap->mem) + lt__p10(f->disk / cap->disk);
}

/* bestfit4 = sum 10^(x - u) = sum 10^x - sum (1 - 10^-u) 10^x: key -sum 10^x. */
static double bestfit4_key(const struct lt_res *cap, const struct lt_res *f)
{
    return -p10_sum(cap, f);
}

/* bestfit5 = max(x - u, y - v) - max(x, y) - (sum 10^x - max(x, y)) + sum (1 - 10^-u) 10^x:
 * key sum 10^x - max(x, y), so that the request term's first part, in [-max(u, v), -min(u, v)],
 * varies little (grid.c's corr_bestfit5). */
static double bestfit5_key(const struct lt_res *cap, const struct lt_res *f)
{
    double x = f->cpu / cap->cpu, y = f->mem / cap->mem;

    return p10_sum(cap, f) - (x > y ? x : y);
}

/* epvm2 = -(x^2 + y^2) + 2 (u x + v y) - (u^2 + v^2): key x^2 + y^2. */
static double epvm2_key(const struct lt_res *cap, const struct lt_res *f)
{
    double x = f->cpu / cap->cpu, y = f->mem / cap->mem;

    return x * x + y * y;
}

/* Which index serves which formula was decided by measurement (docs/benchmarks.md): the grid
 * for the best fits and for epvm2 and bestfit5; the box tree for epvm, whose bound (above) is
 * exact; boxtree.c's direction lists for brfs-dot, whose score does not depend on the
 * machine's capacity and is linear in its residual. */
#define BEST_FIT_GRID(name, pname, disk, key)                                                      \
    static const struct lt__fit_params name##_params = {lt__##name, +1, disk, 0, NULL, key};       \
    const struct lt_policy lt__##name##_policy = {pname, lt__fit_rank, lt__grid_choose_##name,     \
                                                  lt__grid_index_new, &name##_params}
#define WORST_FIT_GRID(name, pname, key)                                                           \
    static const struct lt__fit_params name##_params = {lt__##name, -1, true, 0, NULL, key};       \
    const struct lt_policy lt__##name##_policy = {pname, lt__fit_rank, lt__grid_choose_##name,     \
                                                  lt__grid_index_new, &name##_params}
#define WORST_FIT_BOXES(name, pname, n_aux)                                                        \
    static const struct lt__fit_params name##_params = {lt__##name, -1,         true,              \
                                                        n_aux,      name##_aux, NULL};             \
    const struct lt_policy lt__##name##_policy = {pname, lt__fit_rank, lt__box_choose_##name,      \
                                                  lt__box_index_new, &name##_params}

BEST_FIT_GRID(bestfit1, "bestfit1", false, NULL);
BEST_FIT_GRID(bestfit2, "bestfit2", false, NULL);
BEST_FIT_GRID(bestfit3, "bestfit3", false, NULL);
BEST_FIT_GRID(bestfit4, "bestfit4", true, bestfit4_key);
BEST_FIT_GRID(brfs_norm, "brfs-norm", false, NULL);
WORST_FIT_GRID(bestfit5, "bestfit5", bestfit5_key);
WORST_FIT_GRID(epvm2, "epvm2", epvm2_key);
WORST_FIT_BOXES(epvm, "epvm", 1);
static const struct lt__fit_params brfs_dot_params = {lt__brfs_dot, -1, false, 0, NULL, NULL};
const struct lt_policy lt__brfs_dot_policy = {"brfs-dot", lt__fit_rank, lt__dot_choose_brfs_dot,
                                              lt__dot_index_new, &brfs_dot_params};
