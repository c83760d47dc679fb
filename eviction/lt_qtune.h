/* lt_qtune.h -- Simon & McGalliard's self-tuning search (Algorithm 2, CostEval): the grid of
 * exponent triplets, the costs, the offline search over a whole workload (`dynamic-static`)
 * and the online re-tuning of a running simulator (`dynamic`)
 * (../shared/spec/queue-sla-network.md section 1.6; docs/queue.md).
 *
 * The search never touches the state it tunes: each triplet runs on a fork (lt_qsim_fork)
 * with no future arrivals. The library is single-threaded; callers that want -j processes
 * split the triplets with lt_qtune_eval's [first, last) range and join the costs.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_QTUNE_H
#define LT_QTUNE_H

#include <stddef.h>

#include "lt_err.h"
#include "lt_qsim.h"

/* One axis of the grid: lo + i * step for i = 0 .. count - 1, generated from integers (never
 * accumulated), the last value <= hi + step / 1e6. The same axis for alpha, beta and gamma. */
struct lt_qgrid {
    double lo, hi, step;
    size_t count; /* values per axis; count^3 triplets, alpha outer, beta, gamma inner */
};

/* "lo:hi:step" (inclusive hi), "alg1" (-1:1:0.1, 21 values, 9,261 triplets: Algorithm 1's
 * header) or "paper64000" (-2:1.9:0.1, 40 values: the printed loop in doubles). LT_EINVAL
 * naming the text otherwise. */
LT_MUST_CHECK int lt_qgrid_parse(const char *s, struct lt_qgrid *g, struct lt_err *err);

/* The k-th triplet (0 <= k < count^3). */
void lt_qgrid_triplet(const struct lt_qgrid *g, size_t k, double *alpha, double *beta,
                      double *gamma);

/* What a triplet's run costs (lower is better). */
enum lt_qcost {
    LT_QCOST_MAKESPAN = 0, /* the paper's */
    LT_QCOST_MEAN_RESPONSE,
    LT_QCOST_MEAN_WAIT,
    LT_QCOST_TOTAL_WAIT,
    LT_QCOST_MEAN_XF,
    LT_QCOST_NEG_UTILISATION
};

/* "makespan", "mean-response", "mean-wait", "total-wait", "mean-xf", "neg-utilisation";
 * LT_ENOTFOUND listing them otherwise. */
LT_MUST_CHECK int lt_qcost_find(const char *name, enum lt_qcost *out, struct lt_err *err);
const char *lt_qcost_name(enum lt_qcost c);
double lt_qcost_of(enum lt_qcost c, const struct lt_qsim_summary *sum);

#endif
