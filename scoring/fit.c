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
 *   slide; worst fit is read as the negated bestfit1 (and epvm2 the negated bestfit2).
 * Ties: lowest machine index (lt__better).
 * Implementation: rank() evaluates the formula for each candidate; choose() is grid.c, which
 *   relies on `dir`: every formula is monotone in each free component on f >= q.
 * Tests: tests/unit/test_fit.c (hand-computed cases), test_property.c (choose == rank).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>

static inline double pct(double free, double req, double cap)
{
    return (free - req) / cap;
}

static double bestfit1(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                       const struct lt_res *ref)
{
    (void)ref;
    return pct(f->mem, r->mem, cap->mem) + pct(f->cpu, r->cpu, cap->cpu);
}

static double bestfit2(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                       const struct lt_res *ref)
{
    double a = pct(f->mem, r->mem, cap->mem), b = pct(f->cpu, r->cpu, cap->cpu);

    (void)ref;
    return a * a + b * b;
}

static double bestfit3(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                       const struct lt_res *ref)
{
    (void)ref;
    return pow(10.0, pct(f->mem, r->mem, cap->mem)) + pow(10.0, pct(f->cpu, r->cpu, cap->cpu));
}

static double bestfit4(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                       const struct lt_res *ref)
{
    (void)ref;
    return pow(10.0, pct(f->mem, r->mem, cap->mem)) + pow(10.0, pct(f->cpu, r->cpu, cap->cpu)) +
           pow(10.0, pct(f->disk, r->disk, cap->disk));
}

static double bestfit5(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                       const struct lt_res *ref)
{
    double a = pct(f->mem, r->mem, cap->mem), b = pct(f->cpu, r->cpu, cap->cpu);
    double d = pct(f->disk, r->disk, cap->disk);

    (void)ref;
    return fmax(a, b) - (pow(10.0, a) + pow(10.0, b) + pow(10.0, d));
}

static double epvm(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                   const struct lt_res *ref)
{
    (void)ref;
    return -(pct(f->mem, r->mem, cap->mem) + pct(f->cpu, r->cpu, cap->cpu));
}

static double epvm2(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                    const struct lt_res *ref)
{
    double a = pct(f->mem, r->mem, cap->mem), b = pct(f->cpu, r->cpu, cap->cpu);

    (void)ref;
    return -(a * a + b * b);
}

static double brfs_dot(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                       const struct lt_res *ref)
{
    (void)cap;
    return -((r->cpu / ref->cpu) * (f->cpu / ref->cpu) + (r->mem / ref->mem) * (f->mem / ref->mem));
}

static double brfs_norm(const struct lt_res *cap, const struct lt_res *f, const struct lt_res *r,
                        const struct lt_res *ref)
{
    double dc = r->cpu / ref->cpu - f->cpu / ref->cpu;
    double dm = r->mem / ref->mem - f->mem / ref->mem;

    (void)cap;
    return dc * dc + dm * dm;
}

int lt__fit_rank(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                 const size_t *cand, size_t n, struct lt_rng *rng, double *scores,
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
        struct lt_res f = lt__free(m);

        if (m->online && lt__res_ge(&f, r))
            scores[k] = fp->score(&m->cap, &f, r, &c->ref);
        else
            scores[k] = LT_SCORE_INFEASIBLE;
    }
    return 0;
}

#define FIT_POLICY(var, pname, fn, direction)                                                      \
    static const struct lt__fit_params var##_params = {fn, direction};                             \
    const struct lt_policy var = {pname, lt__fit_rank, lt__grid_choose, lt__grid_index_new,        \
                                  &var##_params}

FIT_POLICY(lt__bestfit1_policy, "bestfit1", bestfit1, +1);
FIT_POLICY(lt__bestfit2_policy, "bestfit2", bestfit2, +1);
FIT_POLICY(lt__bestfit3_policy, "bestfit3", bestfit3, +1);
FIT_POLICY(lt__bestfit4_policy, "bestfit4", bestfit4, +1);
FIT_POLICY(lt__bestfit5_policy, "bestfit5", bestfit5, -1);
FIT_POLICY(lt__epvm_policy, "epvm", epvm, -1);
FIT_POLICY(lt__epvm2_policy, "epvm2", epvm2, -1);
FIT_POLICY(lt__brfs_dot_policy, "brfs-dot", brfs_dot, -1);
FIT_POLICY(lt__brfs_norm_policy, "brfs-norm", brfs_norm, +1);
