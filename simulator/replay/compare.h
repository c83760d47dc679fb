/* compare.h -- Stein, Henzinger and Radovanovic's comparison tables from T(x) sweeps: "times
 * best" and "times >= 99 % of best" per policy, for throughput and useful work, over every x
 * and over x in 80-90 %, beside the slides' own tables, with the rank correlation.
 *
 * A case is one (x, seed) of one tx sweep (cases of several sweeps pooled: one per sweep, x
 * and seed). In a case, a policy is "best" when its value equals the case's maximum over the
 * policies that ran (ties count for every tied policy, as the slides' sums show), and ">= 99 %"
 * when 100 * value >= 99 * maximum (exact for integer counts below 2^46). Its ratio is value /
 * maximum (1 when the maximum is 0). A case with a failed run (a NaN value) is left out for
 * every policy. Ranking, on lotus's side and on the slides' alike: by (times best, times
 * >= 99 %) lexicographically, descending; equal pairs share the average of their ranks. The
 * Spearman coefficient is Pearson's correlation of the two rank vectors over the policies
 * both tables have (ranked among those policies only). docs/simulator.md, "Stein et al.'s
 * comparison tables", has the definitions and docs/reproduction.md the slides' tables.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_COMPARE_H
#define SIM_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lt_err.h"

#define SIM_CMP_MAX_POLICIES 64

enum sim_cmp_metric { SIM_CMP_THROUGHPUT, SIM_CMP_USEFUL, SIM_CMP_N_METRICS };
enum sim_cmp_range { SIM_CMP_ALL, SIM_CMP_80_90, SIM_CMP_N_RANGES };

/* The cases of a comparison (all borrowed). Values are [c * n_policy + k]; NaN: the run of
 * policy k in case c failed (or is missing). */
struct sim_cmp_input {
    const char *const *policy; /* lotus names, n_policy of them, 1..SIM_CMP_MAX_POLICIES */
    size_t n_policy;
    size_t n_case;
    const double *x;      /* x (% of the machines) of case c */
    const double *tasks;  /* tasks completed (summary.json "tasks"."completed") */
    const double *useful; /* useful work, seconds ("metrics"."useful_work_s") */
};

/* One policy's line of a table. */
struct sim_cmp_row {
    size_t best;       /* times best */
    size_t ge99;       /* times >= 99 % of best */
    double mean_ratio; /* mean of value / best over the cases; NaN when there is no case */
};

/* One of the four tables. */
struct sim_cmp_table {
    size_t cases;                                 /* cases counted: every policy's run succeeded */
    size_t left_out;                              /* cases of the range left out: a run failed */
    struct sim_cmp_row row[SIM_CMP_MAX_POLICIES]; /* by the input's policy index */
    size_t order[SIM_CMP_MAX_POLICIES]; /* policy indices sorted as the slides sort: times best
                                         * desc, then >= 99 % desc, then input order */
    size_t n_common;                    /* policies in both this table and the slides' */
    double spearman; /* over them; NaN when undefined (fewer than 2, or a side all tied) */
};

/* The four tables; policy borrowed from the input. */
struct sim_cmp_result {
    const char *const *policy;
    size_t n_policy;
    struct sim_cmp_table t[SIM_CMP_N_METRICS][SIM_CMP_N_RANGES];
};

/* A line of one of the slides' tables. */
struct sim_cmp_slide {
    const char *policy; /* lotus's name ("random" for RandFit) */
    const char *name;   /* as the slides write it */
    unsigned best, ge99;
};

/* Computes the four tables of in into *res. LT_EINVAL for no policy, more than
 * SIM_CMP_MAX_POLICIES or a NULL array; *res is then unspecified. */
LT_MUST_CHECK int sim_cmp_compute(const struct sim_cmp_input *in, struct sim_cmp_result *res,
                                  struct lt_err *err);

/* The slides' table for (metric, range): *n lines, in the slides' printed order (static). */
const struct sim_cmp_slide *sim_cmp_slides(enum sim_cmp_metric m, enum sim_cmp_range r, size_t *n);

/* The slides' line of policy (a lotus name) in (metric, range), or NULL when it has none. */
const struct sim_cmp_slide *sim_cmp_slide_find(enum sim_cmp_metric m, enum sim_cmp_range r,
                                               const char *policy);

/* rank[i] of n items keyed by (best[i], ge99[i]), larger first, lexicographically; rank 1 is
 * the first; equal keys share the average of the ranks they span. */
void sim_cmp_rank(const double *best, const double *ge99, size_t n, double *rank);

/* Pearson's correlation of a and b (n values each): Spearman's rho for rank vectors with
 * average ranks for ties. NaN when n < 2 or either side has no spread. */
double sim_cmp_spearman(const double *a, const double *b, size_t n);

/* "throughput" / "useful_work"; "all" / "80-90". */
const char *sim_cmp_metric_name(enum sim_cmp_metric m);
const char *sim_cmp_range_name(enum sim_cmp_range r);

/* Prints the four tables, each policy beside the slides' numbers, and the correlations. */
void sim_cmp_print(const struct sim_cmp_result *res, FILE *f);

/* Writes DIR/compare.csv (long form: metric,range,policy,cases,times_best,times_ge99,
 * mean_ratio,slides_times_best,slides_times_ge99) and DIR/compare.json (per table: cases,
 * left out, the policies compared and Spearman's rho), each staged (outfile.h). 0, or
 * LT_ENOMEM / LT_EIO naming the file. */
LT_MUST_CHECK int sim_cmp_write(const char *dir, const struct sim_cmp_result *res,
                                struct lt_err *err);

/* The tables as an HTML section of a report (<h2> and four tables), names escaped. */
void sim_cmp_html(FILE *f, const struct sim_cmp_result *res);

#endif
