/* lp.c -- LoTES stage 1: the allocation LP (Tran and Beck, section 4.1), solved with GLPK, and
 * the GLPK plumbing both LPs share.
 *
 * Source: Tran and Beck, section 4.1, constraints (1)-(4).
 * Definition: maximise lambda subject to
 *   (1) sum_j delta_jkl c_jl n_j mu_k >= lambda alpha_k r_kl        for every k, l
 *   (2) delta_jkl c_jl / r_kl = delta_jkl0 c_jl0 / r_kl0            for every j, k, l
 *   (3) sum_k delta_jkl <= 1                                         for every j, l
 *   (4) delta_jkl >= 0.
 * Reading: l ranges over the requested resources (lotes_int.h); l0 is the first resource the
 *   class requests; delta_jkl is a column only where r_kl > 0 (a class that does not request
 *   a resource takes none of it, and constraint (2) with r_kl = 0 has no meaning). This is the
 *   LP of the paper written out, not the reduced form with one variable per (j, k) that (2)
 *   allows (docs/lotes.md shows both; they have the same optimum).
 * Implementation: columns are lambda (1) then delta_jkl in (j, k, l) order; rows are (1), (2),
 *   (3) in that order; GLPK scales the rows (geometric then equilibration) before the primal
 *   simplex. GLPK never prints (msg_lev = GLP_MSG_OFF) and every return code and status is
 *   checked. GLPK itself aborts when its own allocator fails; that is outside our control and
 *   is documented in docs/lotes.md.
 * Tests: tests/unit/lotes/test_lotes.c (hand-solved instances, Tables 1+3).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

#include <assert.h>
#include <limits.h>
#include <math.h>

#include "lt_mem.h"

void lt__lotes_mat_init(struct lt__lotes_mat *m)
{
    m->ia = NULL;
    m->ja = NULL;
    m->ar = NULL;
    m->n = 0;
    m->cap = 0;
}

void lt__lotes_mat_release(struct lt__lotes_mat *m)
{
    lt_free(m->ia);
    lt_free(m->ja);
    lt_free(m->ar);
    lt__lotes_mat_init(m);
}

/* Three parallel 1-based arrays under one int capacity (GLPK counts in int), so not lt_vec.h. */
static int mat_grow(struct lt__lotes_mat *m, const char *what, struct lt_err *err)
{
    int cap = m->cap < 64 ? 64 : m->cap;
    int *ia, *ja;
    double *ar;

    if (cap > INT_MAX / 2 - 1)
        return lt_err_set(err, LT_ERANGE, 0, 0, "%s: linear program has too many coefficients",
                          what);
    cap *= 2;
    /* One more than cap: GLPK's arrays are 1-based. */
    ia = lt_reallocarray(m->ia, (size_t)cap + 1, sizeof(*ia));
    if (ia == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "%s: out of memory for the LP matrix", what);
    m->ia = ia;
    ja = lt_reallocarray(m->ja, (size_t)cap + 1, sizeof(*ja));
    if (ja == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "%s: out of memory for the LP matrix", what);
    m->ja = ja;
    ar = lt_reallocarray(m->ar, (size_t)cap + 1, sizeof(*ar));
    if (ar == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "%s: out of memory for the LP matrix", what);
    m->ar = ar;
    m->cap = cap;
    return 0;
}

int lt__lotes_mat_add(struct lt__lotes_mat *m, int row, int col, double v, const char *what,
                      struct lt_err *err)
{
    int rc;

    assert(row > 0 && col > 0);
    if (!(v > 0) && !(v < 0))
        return 0;
    if (m->n >= m->cap) {
        rc = mat_grow(m, what, err);
        if (rc < 0)
            return rc;
    }
    m->n++;
    m->ia[m->n] = row;
    m->ja[m->n] = col;
    m->ar[m->n] = v;
    return 0;
}

int lt__lotes_simplex(glp_prob *lp, const struct lt__lotes_mat *m, const char *what,
                      struct lt_err *err)
{
    glp_smcp parm;
    int ret, status, term;

    glp_load_matrix(lp, m->n, m->ia, m->ja, m->ar);
    /* glp_scale_prob prints its statistics whatever msg_lev says: turn this thread's GLPK
     * terminal output off around the solve and restore the caller's setting. */
    term = glp_term_out(GLP_OFF);
    glp_scale_prob(lp, GLP_SF_AUTO);
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;
    ret = glp_simplex(lp, &parm);
    glp_term_out(term);
    if (ret != 0)
        return lt_err_set(err, LT_EINFEASIBLE, 0, 0,
                          "%s: linear program not solved: GLPK simplex returned %d", what, ret);
    status = glp_get_status(lp);
    if (status == GLP_NOFEAS)
        return lt_err_set(err, LT_EINFEASIBLE, 0, 0, "%s: linear program is infeasible", what);
    if (status == GLP_UNBND)
        return lt_err_set(err, LT_EINFEASIBLE, 0, 0, "%s: linear program is unbounded", what);
    if (status != GLP_OPT)
        return lt_err_set(err, LT_EINFEASIBLE, 0, 0,
                          "%s: linear program has no optimum (GLPK status %d)", what, status);
    return 0;
}

/* The first resource class k requests (l0 of constraint 2); the problem check guarantees one. */
static int ref_res(const struct lt_lotes_class *c)
{
    for (int l = 0; l < LT__LOTES_NRES; l++)
        if (lt__lotes_res_get(&c->req, l) > 0)
            return l;
    assert(0 && "class requests nothing");
    return 0;
}

/* Column of delta_jkl, or 0 when class k does not request l (no column). col[] is filled by
 * add_columns: index (j * K + k) * 3 + l. */
static int add_columns(glp_prob *lp, const struct lt_lotes_problem *p, int *col)
{
    int n = 1; /* column 1 is lambda */

    for (size_t j = 0; j < p->n_configs; j++)
        for (size_t k = 0; k < p->n_classes; k++)
            for (int l = 0; l < LT__LOTES_NRES; l++) {
                size_t at = (j * p->n_classes + k) * LT__LOTES_NRES + (size_t)l;
                col[at] = lt__lotes_res_get(&p->classes[k].req, l) > 0 ? ++n : 0;
            }
    glp_add_cols(lp, n);
    /* lambda >= 0 and every delta >= 0 (constraint 4); only lambda is in the objective. */
    for (int c = 1; c <= n; c++)
        glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, 1, 1.0);
    return n;
}

/* Constraint (1): sum_j c_jl n_j mu_k delta_jkl - alpha_k r_kl lambda >= 0. */
static int rows_capacity(glp_prob *lp, const struct lt_lotes_problem *p, const int *col,
                         struct lt__lotes_mat *m, struct lt_err *err)
{
    const char *what = "lotes/allocation";

    for (size_t k = 0; k < p->n_classes; k++) {
        const struct lt_lotes_class *c = &p->classes[k];

        for (int l = 0; l < LT__LOTES_NRES; l++) {
            double r = lt__lotes_res_get(&c->req, l);
            int row, rc;

            if (!(r > 0))
                continue;
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_LO, 0.0, 0.0);
            rc = lt__lotes_mat_add(m, row, 1, -c->alpha * r, what, err);
            for (size_t j = 0; j < p->n_configs && rc == 0; j++) {
                const struct lt_lotes_config *g = &p->configs[j];
                int cl = col[(j * p->n_classes + k) * LT__LOTES_NRES + (size_t)l];
                rc = lt__lotes_mat_add(
                    m, row, cl, lt__lotes_res_get(&g->cap, l) * (double)g->n * c->mu, what, err);
            }
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* Constraint (2): (c_jl / r_kl) delta_jkl - (c_jl0 / r_kl0) delta_jkl0 = 0 for l != l0. */
static int rows_profile(glp_prob *lp, const struct lt_lotes_problem *p, const int *col,
                        struct lt__lotes_mat *m, struct lt_err *err)
{
    const char *what = "lotes/allocation";

    for (size_t j = 0; j < p->n_configs; j++)
        for (size_t k = 0; k < p->n_classes; k++) {
            const struct lt_res *r = &p->classes[k].req, *cap = &p->configs[j].cap;
            const int *cl = &col[(j * p->n_classes + k) * LT__LOTES_NRES];
            int l0 = ref_res(&p->classes[k]);

            for (int l = l0 + 1; l < LT__LOTES_NRES; l++) {
                int row, rc;

                if (cl[l] == 0)
                    continue;
                row = glp_add_rows(lp, 1);
                glp_set_row_bnds(lp, row, GLP_FX, 0.0, 0.0);
                rc = lt__lotes_mat_add(
                    m, row, cl[l], lt__lotes_res_get(cap, l) / lt__lotes_res_get(r, l), what, err);
                if (rc == 0)
                    rc = lt__lotes_mat_add(m, row, cl[l0],
                                           -lt__lotes_res_get(cap, l0) / lt__lotes_res_get(r, l0),
                                           what, err);
                if (rc < 0)
                    return rc;
            }
        }
    return 0;
}

/* Constraint (3): sum_k delta_jkl <= 1, for every requested resource l. */
static int rows_share(glp_prob *lp, const struct lt_lotes_problem *p, const int *col,
                      struct lt__lotes_mat *m, struct lt_err *err)
{
    unsigned mask = lt__lotes_active(p->classes, p->n_classes);

    for (size_t j = 0; j < p->n_configs; j++)
        for (int l = 0; l < LT__LOTES_NRES; l++) {
            int row, rc = 0;

            if (!(mask & (1u << l)))
                continue;
            row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_UP, 0.0, 1.0);
            for (size_t k = 0; k < p->n_classes && rc == 0; k++) {
                int cl = col[(j * p->n_classes + k) * LT__LOTES_NRES + (size_t)l];
                if (cl != 0)
                    rc = lt__lotes_mat_add(m, row, cl, 1.0, "lotes/allocation", err);
            }
            if (rc < 0)
                return rc;
        }
    return 0;
}

static void read_solution(glp_prob *lp, const struct lt_lotes_problem *p, const int *col,
                          double *lambda, struct lt_res *delta)
{
    *lambda = glp_get_obj_val(lp);
    for (size_t j = 0; j < p->n_configs; j++)
        for (size_t k = 0; k < p->n_classes; k++) {
            struct lt_res *d = &delta[j * p->n_classes + k];
            const int *cl = &col[(j * p->n_classes + k) * LT__LOTES_NRES];

            for (int l = 0; l < LT__LOTES_NRES; l++) {
                double v = cl[l] != 0 ? glp_get_col_prim(lp, cl[l]) : 0.0;
                /* Clamp GLPK's round-off: a share is never below 0 nor above 1. */
                lt__lotes_res_set(d, l, v < LT__LOTES_ZERO ? 0.0 : v > 1.0 ? 1.0 : v);
            }
        }
}

int lt_lotes_alloc_solve(const struct lt_lotes_problem *p, double *lambda, struct lt_res *delta,
                         struct lt_err *err)
{
    struct lt__lotes_mat m;
    glp_prob *lp;
    int *col;
    int rc;

    if (lambda == NULL || delta == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/allocation: no output arrays");
    rc = lt_lotes_problem_check(p, err);
    if (rc < 0)
        return rc;
    col = lt_calloc(p->n_configs * p->n_classes * LT__LOTES_NRES, sizeof(*col));
    if (col == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "lotes/allocation: out of memory");
    lt__lotes_mat_init(&m);
    lp = glp_create_prob();
    glp_set_prob_name(lp, "lotes/allocation");
    glp_set_obj_dir(lp, GLP_MAX);
    add_columns(lp, p, col);
    rc = rows_capacity(lp, p, col, &m, err);
    if (rc == 0)
        rc = rows_profile(lp, p, col, &m, err);
    if (rc == 0)
        rc = rows_share(lp, p, col, &m, err);
    if (rc == 0)
        rc = lt__lotes_simplex(lp, &m, "lotes/allocation", err);
    if (rc == 0) {
        read_solution(lp, p, col, lambda, delta);
        if (!(*lambda > LT__LOTES_ZERO))
            rc =
                lt_err_set(err, LT_EINFEASIBLE, 0, 0,
                           "lotes/allocation: linear program is degenerate: lambda* = %g", *lambda);
    }
    glp_delete_prob(lp);
    lt__lotes_mat_release(&m);
    lt_free(col);
    return rc;
}
