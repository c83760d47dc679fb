/* lotes_int.h -- library-internal helpers shared by the files of lotes/ (never included by a
 * front end): resource components by number, the set of requested resources, fitting with
 * the one tolerance every stage uses.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_LOTES_INT_H
#define LT_LOTES_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <glpk.h>

#include "lt_lotes.h"

/* Resources by number: 0 cpu, 1 mem, 2 disk. */
#define LT__LOTES_NRES 3

/* Relative slack when comparing a sum of expected requests with a capacity: sums of doubles
 * such as 25 x 0.08 must not miss an exact fit by one ulp. 1e-9 of a capacity is far below any
 * request in Table 3 (the smallest is 0.08 cores on at most 24). */
#define LT__LOTES_FIT_EPS 1e-9

/* Below this a share or an LP value counts as 0 (GLPK's primal feasibility tolerance is 1e-7
 * on scaled rows; basic variables at 0 come back as ~1e-15). */
#define LT__LOTES_ZERO 1e-9

/* Component l (0..2) of r. */
double lt__lotes_res_get(const struct lt_res *r, int l);
void lt__lotes_res_set(struct lt_res *r, int l, double v);

/* Bit l set when some class requests resource l (> 0). */
unsigned lt__lotes_active(const struct lt_lotes_class *classes, size_t n_classes);

/* Whether used + add fits cap on every resource of mask, with LT__LOTES_FIT_EPS slack. */
bool lt__lotes_fits(const struct lt_res *used, const struct lt_res *add, const struct lt_res *cap,
                    unsigned mask);

/* Checks names: non-empty, NUL-terminated within LT_LOTES_MAX_NAME, unique. what is "class"
 * or "configuration"; stride is the struct size, names at offset 0. */
int lt__lotes_check_names(const void *items, size_t n, size_t stride, const char *what,
                          struct lt_err *err);

/* A sparse constraint matrix being built for glp_load_matrix: 1-based triplets (index 0 is
 * GLPK's unused slot). Zero coefficients are skipped: GLPK rejects nothing for them, but they
 * cost time. */
struct lt__lotes_mat {
    int *ia;    /* row numbers, 1-based */
    int *ja;    /* column numbers, 1-based */
    double *ar; /* coefficients */
    int n;      /* triplets stored (ia[1..n]) */
    int cap;    /* room for cap triplets */
};

void lt__lotes_mat_init(struct lt__lotes_mat *m);
void lt__lotes_mat_release(struct lt__lotes_mat *m);
/* Appends (row, col, v) unless v is 0; LT_ENOMEM or LT_ERANGE (past INT_MAX) naming what. */
int lt__lotes_mat_add(struct lt__lotes_mat *m, int row, int col, double v, const char *what,
                      struct lt_err *err);

/* Loads m into lp, scales, runs the primal simplex with every message off and checks that an
 * optimum was found. what names the LP in errors ("lotes/allocation"). Returns 0 or
 * LT_EINFEASIBLE with GLPK's return code or status in the message. */
int lt__lotes_simplex(glp_prob *lp, const struct lt__lotes_mat *m, const char *what,
                      struct lt_err *err);

/* Allocates tables for K classes and M configurations: classes, configs, delta, rho and
 * bin_first (zeroed); no bins yet. NULL and LT_ENOMEM on failure. */
struct lt_lotes_tables *lt__lotes_tables_new(size_t n_classes, size_t n_configs,
                                             struct lt_err *err);

/* Allocates bin_x and bin_machines (zeroed) for t->n_bins bins (bin_tasks is already there).
 * LT_ENOMEM on failure. */
int lt__lotes_tables_alloc_bins(struct lt_lotes_tables *t, struct lt_err *err);

#endif
