/* bins.c -- LoTES stage 2: the non-dominated bins of each configuration (Algorithm 1), the
 * machine-assignment LP (constraints 5-8), whole machines, and lt_lotes_build, which runs
 * stages 1 and 2 into the dispatcher's tables.
 *
 * Source: Tran and Beck, section 4.2 (Algorithm 1; the machine-assignment LP) and section 4.3
 *   (rho_jk from Delta_jkl; the matrix A^j).
 * Definition: a bin of configuration j is a vector N_k of whole expected tasks of the classes
 *   K^j = {k : delta*_jk > 0} whose summed request fits c_j; it is non-dominated when no class
 *   of K^j fits in what it leaves. The assignment LP maximises lambda over x_b >= 0 (machines
 *   of j emulating bin b) with sum_b x_b = n_j per configuration and, per class,
 *   sum_b N_bk mu_k x_b >= alpha_k lambda.
 * Readings: Algorithm 1's pseudocode (greedy fill in class order, backtrack by removing the
 *   most recently added task, try the next class) is implemented as the equivalent depth-first
 *   search over the count of each class, largest first, which visits the same bins in the
 *   same order; a leaf is kept when nothing more fits (maximal == non-dominated, since any
 *   strict superset of a bin contains the bin plus one task). The last class is always filled
 *   greedily: a smaller count leaves room for one more of it. Classes of K^j whose expected task
 *   does not fit an empty machine of j cannot be in any bin and are left out. Constraint (5)'s
 *   rows for the resources of one class are the same row scaled by r_kl (Delta_jkl = r_kl
 *   sum_b N_bk x_b), so one row per class is solved. Whole machines: largest remainder per
 *   configuration (lt_lotes_round, kept in online.c so that it links without GLPK); rho and
 *   lambda_rounded come from the whole machines.
 * Implementation: bins of all configurations live in one array, configuration by
 *   configuration; the search recomputes each partial bin's use as base + t * r (no running sum
 *   that drifts) and stops at LT_LOTES_MAX_BINS bins or 64 x that many search nodes. The most
 *   tasks of a class that fit on a partial bin come in closed form (most_that_fit), so a node
 *   costs O(classes) whatever the request/capacity ratio.
 * Tests: tests/unit/lotes/test_lotes.c (brute-force enumeration; rounding; Tables 1+3).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "lt_mem.h"

/* Search state of Algorithm 1 for one configuration. */
struct search {
    const struct lt_lotes_problem *p;
    const struct lt_lotes_config *cfg;
    unsigned mask;                    /* requested resources */
    size_t cls[LT_LOTES_MAX_CLASSES]; /* usable classes of K^j, in class order */
    size_t m;                         /* how many */
    uint32_t *cnt;                    /* current counts, n_classes entries */
    uint32_t *out;                    /* bins found so far, n_out x n_classes */
    size_t n_out;                     /* bins found */
    size_t cap_out;                   /* room in out, in bins */
    size_t max_bins;                  /* stop after this many bins */
    uint64_t nodes;                   /* search nodes visited */
    uint64_t max_nodes;               /* stop after this many nodes */
};

static struct lt_res scaled_add(const struct lt_res *base, const struct lt_res *r, double t)
{
    struct lt_res u = {base->cpu + t * r->cpu, base->mem + t * r->mem, base->disk + t * r->disk};
    return u;
}

static int emit(struct search *s, struct lt_err *err)
{
    size_t kk = s->p->n_classes;

    if (s->n_out >= s->max_bins)
        return lt_err_set(err, LT_ERANGE, 0, 0,
                          "configuration '%s' has more than %zu non-dominated bins", s->cfg->name,
                          s->max_bins);
    if (s->n_out == s->cap_out) {
        size_t cap = s->cap_out < 16 ? 16 : s->cap_out * 2;
        uint32_t *o = lt_reallocarray(s->out, cap, kk * sizeof(*o));
        if (o == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0,
                              "configuration '%s': out of memory for its bins", s->cfg->name);
        s->out = o;
        s->cap_out = cap;
    }
    memcpy(&s->out[s->n_out * kk], s->cnt, kk * sizeof(*s->cnt));
    s->n_out++;
    return 0;
}

/* Whether base + t * r fits the machine: the fit test every count is checked with. */
static bool fits_times(const struct search *s, const struct lt_res *base, const struct lt_res *r,
                       uint32_t t)
{
    static const struct lt_res zero = {0, 0, 0};
    struct lt_res u = scaled_add(base, r, (double)t);

    return lt__lotes_fits(&u, &zero, &s->cfg->cap, s->mask);
}

/* Largest t <= UINT32_MAX with base + t * r fitting the machine (0 when even t = 1 does not).
 * Closed form: the floor of (limit - base) / r on each requested resource, then corrected by
 * the fit test itself, which rounds differently by at most a step or two; base + t * r grows
 * with t in floating point too, so the answer is the one counting up from 0 would give.
 * lt_lotes_problem_check bounds the count by LT_LOTES_MAX_FIT, so t stays small. */
static uint32_t most_that_fit(const struct search *s, const struct lt_res *base,
                              const struct lt_res *r)
{
    double est = (double)UINT32_MAX;
    uint32_t t;

    for (int l = 0; l < LT__LOTES_NRES; l++) {
        double c = lt__lotes_res_get(&s->cfg->cap, l), b = lt__lotes_res_get(base, l);
        double v = lt__lotes_res_get(r, l), lim = c + LT__LOTES_FIT_EPS * c;

        if (!(s->mask & (1u << l)))
            continue;
        if (b + 0.0 > lim)
            return 0; /* base alone is over: no count fits (v > 0 or not) */
        if (v > 0 && floor((lim - b) / v) < est)
            est = floor((lim - b) / v);
    }
    t = est > 0 ? (uint32_t)est : 0;
    while (t > 0 && !fits_times(s, base, r, t))
        t--;
    while (t < UINT32_MAX && fits_times(s, base, r, t + 1))
        t++;
    return t;
}

/* Chooses the count of s->cls[i] (largest first) on top of base, then the later classes. */
static int search_from(struct search *s, size_t i, const struct lt_res *base, struct lt_err *err)
{
    const struct lt_lotes_class *classes = s->p->classes;
    size_t k;
    uint32_t most;

    if (++s->nodes > s->max_nodes)
        return lt_err_set(err, LT_ERANGE, 0, 0,
                          "configuration '%s': Algorithm 1 gave up after %llu partial bins",
                          s->cfg->name, (unsigned long long)s->max_nodes);
    if (i == s->m) {
        /* A leaf: keep it when no class of K^j fits in what is left. */
        for (size_t h = 0; h < s->m; h++)
            if (lt__lotes_fits(base, &classes[s->cls[h]].req, &s->cfg->cap, s->mask))
                return 0;
        return emit(s, err);
    }
    k = s->cls[i];
    most = most_that_fit(s, base, &classes[k].req);
    for (uint32_t t = most;; t--) {
        struct lt_res u = scaled_add(base, &classes[k].req, (double)t);
        int rc;

        s->cnt[k] = t;
        rc = search_from(s, i + 1, &u, err);
        if (rc < 0)
            return rc;
        /* The last class is filled greedily: fewer would leave room for one more. */
        if (t == 0 || i + 1 == s->m)
            break;
    }
    s->cnt[k] = 0;
    return 0;
}

int lt_lotes_bins_enum(const struct lt_lotes_problem *p, size_t j, const bool *use, size_t max_bins,
                       uint32_t **out, size_t *n_out, struct lt_err *err)
{
    static const struct lt_res zero = {0, 0, 0};
    struct search s;
    int rc;

    if (out == NULL || n_out == NULL || use == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/bins: no output or class set");
    rc = lt_lotes_problem_check(p, err);
    if (rc < 0)
        return rc;
    if (j >= p->n_configs)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/bins: configuration %zu of %zu", j,
                          p->n_configs);
    if (max_bins == 0 || max_bins > LT_LOTES_MAX_BINS)
        max_bins = LT_LOTES_MAX_BINS;
    memset(&s, 0, sizeof(s));
    s.p = p;
    s.cfg = &p->configs[j];
    s.mask = lt__lotes_active(p->classes, p->n_classes);
    s.max_bins = max_bins;
    s.max_nodes = 64 * (uint64_t)max_bins;
    for (size_t k = 0; k < p->n_classes; k++)
        if (use[k] && lt__lotes_fits(&zero, &p->classes[k].req, &s.cfg->cap, s.mask))
            s.cls[s.m++] = k;
    s.cnt = lt_calloc(p->n_classes, sizeof(*s.cnt));
    if (s.cnt == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "configuration '%s': out of memory for its bins",
                          s.cfg->name);
    rc = search_from(&s, 0, &zero, err);
    lt_free(s.cnt);
    if (rc < 0) {
        lt_free(s.out);
        return rc;
    }
    *out = s.out;
    *n_out = s.n_out;
    return 0;
}

/* ---- lt_lotes_build: stage 1, bins, the assignment LP, whole machines, rho -------------- */

/* Appends configuration j's bins (K^j from delta*) to t's bin arrays. */
static int add_config_bins(struct lt_lotes_tables *t, const struct lt_lotes_problem *p, size_t j,
                           struct lt_err *err)
{
    size_t kk = p->n_classes, n = 0;
    bool use[LT_LOTES_MAX_CLASSES];
    uint32_t *bins = NULL, *tasks;
    int rc;

    for (size_t k = 0; k < kk; k++) {
        const struct lt_res *d = &t->delta[j * kk + k];
        use[k] = d->cpu > LT__LOTES_ZERO || d->mem > LT__LOTES_ZERO || d->disk > LT__LOTES_ZERO;
    }
    rc = lt_lotes_bins_enum(p, j, use, LT_LOTES_MAX_BINS, &bins, &n, err);
    if (rc < 0)
        return rc;
    tasks = lt_reallocarray(t->bin_tasks, t->n_bins + n, kk * sizeof(*tasks));
    if (tasks == NULL) {
        lt_free(bins);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "configuration '%s': out of memory for its bins",
                          p->configs[j].name);
    }
    t->bin_tasks = tasks;
    if (n > 0)
        memcpy(&tasks[t->n_bins * kk], bins, n * kk * sizeof(*bins));
    lt_free(bins);
    t->n_bins += n;
    t->bin_first[j + 1] = t->n_bins;
    return 0;
}

/* A class that no bin holds makes the assignment LP's lambda 0: name it instead. */
static int check_every_class_binned(const struct lt_lotes_tables *t, struct lt_err *err)
{
    for (size_t k = 0; k < t->n_classes; k++) {
        bool any = false;
        for (size_t b = 0; b < t->n_bins && !any; b++)
            any = t->bin_tasks[b * t->n_classes + k] > 0;
        if (!any)
            return lt_err_set(err, LT_EINFEASIBLE, 0, 0,
                              "lotes/assignment: class '%s' is in no bin: no configuration that "
                              "the allocation LP gives it fits one of its tasks",
                              t->classes[k].name);
    }
    return 0;
}

/* The assignment LP's rows: one per class (constraint 5 over one resource, see the file
 * comment), then one per configuration (constraint 7). Column 1 is lambda, 2 + b is x_b. */
static int assign_rows(glp_prob *lp, const struct lt_lotes_tables *t, struct lt__lotes_mat *m,
                       struct lt_err *err)
{
    const char *what = "lotes/assignment";
    size_t kk = t->n_classes;
    int rc = 0;

    glp_add_rows(lp, (int)(kk + t->n_configs));
    for (size_t k = 0; k < kk && rc == 0; k++) {
        int row = (int)k + 1;
        glp_set_row_bnds(lp, row, GLP_LO, 0.0, 0.0);
        rc = lt__lotes_mat_add(m, row, 1, -t->classes[k].alpha, what, err);
        for (size_t b = 0; b < t->n_bins && rc == 0; b++)
            rc = lt__lotes_mat_add(m, row, (int)b + 2,
                                   (double)t->bin_tasks[b * kk + k] * t->classes[k].mu, what, err);
    }
    for (size_t j = 0; j < t->n_configs && rc == 0; j++) {
        int row = (int)(kk + j) + 1;
        glp_set_row_bnds(lp, row, GLP_FX, (double)t->configs[j].n, (double)t->configs[j].n);
        for (size_t b = t->bin_first[j]; b < t->bin_first[j + 1] && rc == 0; b++)
            rc = lt__lotes_mat_add(m, row, (int)b + 2, 1.0, what, err);
    }
    return rc;
}

static int assign_solve(struct lt_lotes_tables *t, struct lt_err *err)
{
    const char *what = "lotes/assignment";
    struct lt__lotes_mat m;
    glp_prob *lp;
    int rc;

    if (t->n_bins > (size_t)INT32_MAX - 2)
        return lt_err_set(err, LT_ERANGE, 0, 0, "%s: %zu bins are too many columns", what,
                          t->n_bins);
    lt__lotes_mat_init(&m);
    lp = glp_create_prob();
    glp_set_prob_name(lp, what);
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_cols(lp, (int)t->n_bins + 1);
    for (int c = 1; c <= (int)t->n_bins + 1; c++)
        glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0); /* lambda >= 0; constraint (8) */
    glp_set_obj_coef(lp, 1, 1.0);
    rc = assign_rows(lp, t, &m, err);
    if (rc == 0)
        rc = lt__lotes_simplex(lp, &m, what, err);
    if (rc == 0) {
        t->lambda_assign = glp_get_obj_val(lp);
        for (size_t b = 0; b < t->n_bins; b++) {
            double x = glp_get_col_prim(lp, (int)b + 2);
            t->bin_x[b] = x < LT__LOTES_ZERO ? 0.0 : x;
        }
        if (!(t->lambda_assign > LT__LOTES_ZERO))
            rc =
                lt_err_set(err, LT_EINFEASIBLE, 0, 0,
                           "%s: linear program is degenerate: lambda = %g", what, t->lambda_assign);
    }
    glp_delete_prob(lp);
    lt__lotes_mat_release(&m);
    return rc;
}

/* Whole machines per configuration, then rho_jk and lambda_rounded from them. */
static int round_and_rho(struct lt_lotes_tables *t, struct lt_err *err)
{
    size_t kk = t->n_classes;

    for (size_t j = 0; j < t->n_configs; j++) {
        size_t b0 = t->bin_first[j], nb = t->bin_first[j + 1] - b0;
        int rc = lt_lotes_round(&t->bin_x[b0], nb, t->configs[j].n, &t->bin_machines[b0], err);
        if (rc < 0)
            return rc;
    }
    t->lambda_rounded = INFINITY;
    for (size_t k = 0; k < kk; k++) {
        double total = 0;

        for (size_t j = 0; j < t->n_configs; j++) {
            double served = 0; /* sum_b N_bk m_b: Delta_jkl / r_kl */
            for (size_t b = t->bin_first[j]; b < t->bin_first[j + 1]; b++)
                served += (double)t->bin_tasks[b * kk + k] * (double)t->bin_machines[b];
            t->rho[j * kk + k] = served;
            total += served;
        }
        if (!(total > 0))
            return lt_err_set(err, LT_EINFEASIBLE, 0, 0,
                              "lotes/assignment: class '%s' has no machine after rounding to "
                              "whole machines",
                              t->classes[k].name);
        for (size_t j = 0; j < t->n_configs; j++)
            t->rho[j * kk + k] /= total;
        total = total * t->classes[k].mu / t->classes[k].alpha;
        if (total < t->lambda_rounded)
            t->lambda_rounded = total;
    }
    return 0;
}

struct lt_lotes_tables *lt_lotes_build(const struct lt_lotes_problem *p, struct lt_err *err)
{
    struct lt_lotes_tables *t;
    int rc;

    if (lt_lotes_problem_check(p, err) < 0)
        return NULL;
    t = lt__lotes_tables_new(p->n_classes, p->n_configs, err);
    if (t == NULL)
        return NULL;
    memcpy(t->classes, p->classes, p->n_classes * sizeof(*t->classes));
    memcpy(t->configs, p->configs, p->n_configs * sizeof(*t->configs));
    rc = lt_lotes_alloc_solve(p, &t->lambda_alloc, t->delta, err);
    for (size_t j = 0; j < p->n_configs && rc == 0; j++)
        rc = add_config_bins(t, p, j, err);
    if (rc == 0)
        rc = check_every_class_binned(t, err);
    if (rc == 0)
        rc = lt__lotes_tables_alloc_bins(t, err);
    if (rc == 0)
        rc = assign_solve(t, err);
    if (rc == 0)
        rc = round_and_rho(t, err);
    if (rc == 0)
        rc = lt_lotes_tables_check(t, err);
    if (rc < 0) {
        lt_lotes_tables_free(t);
        return NULL;
    }
    return t;
}
