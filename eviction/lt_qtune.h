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

#include <stdbool.h>
#include <stddef.h>

#include "lt_err.h"
#include "lt_qsim.h"

/* One axis of the grid: count values v_i = lo + i * step, i = 0 .. count - 1, the last
 * <= hi + step / 1e6, generated from integers (never accumulated): when step = 1 / D for an
 * integer D and lo = a / D for an integer a (0.1 and -1, -2...), v_i = (a + i) / D, so every
 * value is the double nearest its decimal (0, 1, -0.3 exactly as strtod reads them: FCFS
 * (0,1,0) and the paper's (-0.1,-0.3,-0.4) are grid points); else lo + i * step. The same axis
 * for alpha, beta and gamma. */
struct lt_qgrid {
    double lo, hi, step;
    size_t count; /* values per axis; count^3 triplets, alpha outer, beta, gamma inner */
};

/* The most values per axis lt_qgrid_parse accepts (201^3 = 8.1 million triplets). */
#define LT_QGRID_MAX_COUNT 201

/* "lo:hi:step" (inclusive hi; finite numbers, step > 0, hi >= lo, at most LT_QGRID_MAX_COUNT
 * values), "alg1" (-1:1:0.1, 21 values, 9,261 triplets: Algorithm 1's header) or
 * "paper64000" (-2:1.9:0.1, 40 values, 64,000 triplets: the printed loop in doubles). LT_EINVAL
 * naming the text otherwise; *g untouched then. */
LT_MUST_CHECK int lt_qgrid_parse(const char *s, struct lt_qgrid *g, struct lt_err *err);

/* The i-th value of an axis (0 <= i < count). */
double lt_qgrid_value(const struct lt_qgrid *g, size_t i);

/* count^3. */
size_t lt_qgrid_size(const struct lt_qgrid *g);

/* The k-th triplet (0 <= k < count^3). */
void lt_qgrid_triplet(const struct lt_qgrid *g, size_t k, double *alpha, double *beta,
                      double *gamma);

/* The index of the triplet (alpha, beta, gamma) if each is exactly a value of the axis, else
 * SIZE_MAX. */
size_t lt_qgrid_index(const struct lt_qgrid *g, double alpha, double beta, double gamma);

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

/* ---- the search ---- */

/* What a search did: triplets costed, and simulations run for them (fewer when pruned). */
struct lt_qtune_stats {
    size_t triplets;
    size_t simulated;
};

/* The costs of triplets [first, last) of g (costs[k - first]) for the work present in live:
 * for each, a fork of live ordered by composite(triplet) (lt_qsim_fork: the queued and running
 * work, no future arrivals, spec 1.6 "simulate the workload currently enqueued") run to the
 * end, summarised and costed (NaN if no job completes in it: nothing present). live is not
 * touched. Pruned (exact, docs/queue.md "Self-tuning"): triplets that would take the same
 * dispatch decision as an already simulated one at every dispatch instant share its
 * simulation and cost, bit for bit. LT_EINVAL (bad range, live re-keying with
 * reprioritise_s > 0 is fine: the pruning is then off), LT_ENOMEM. */
LT_MUST_CHECK int lt_qtune_eval(const struct lt_qsim *live, const struct lt_qgrid *g,
                                enum lt_qcost c, size_t first, size_t last, double *costs,
                                struct lt_err *err);

/* lt_qtune_eval with the pruning on or off and what it did (stats may be NULL). */
LT_MUST_CHECK int lt_qtune_eval_opt(const struct lt_qsim *live, const struct lt_qgrid *g,
                                    enum lt_qcost c, size_t first, size_t last, bool prune,
                                    double *costs, struct lt_qtune_stats *stats,
                                    struct lt_err *err);

/* The tie rule of spec 1.6 line 6 over costs[0..n-1] (a whole grid): the index of the lowest
 * cost; among equal lowest costs, incumbent if it is one of them, else the first. NaN costs
 * are never chosen unless all are NaN (then incumbent if < n, else 0). n >= 1. */
size_t lt_qtune_argmin(const double *costs, size_t n, size_t incumbent);

/* `dynamic-static`, the offline search behind the paper's table: triplets [first, last) of g
 * each run on the whole workload from t = 0 with all arrivals (lt_qsim_run of p with order
 * composite(triplet)), into costs[k - first] (costs may be NULL when only *best matters, stats
 * may be NULL). *best = lt_qtune_argmin over the range, with the incumbent the triplet of
 * p->order when it is a grid point (fcfs = (0,1,0) by default: ties keep it), as a grid index
 * k; *best_cost its cost. Callers splitting the grid across processes join the ranges' costs
 * and call lt_qtune_argmin. Pruned as lt_qtune_eval when prune. Errors as lt_qsim_new,
 * LT_EINVAL for a bad range, LT_ENOMEM. */
LT_MUST_CHECK int lt_qtune_static(const struct lt_qsim_params *p, const struct lt_qjob *jobs,
                                  size_t n, const struct lt_qgrid *g, enum lt_qcost c, size_t first,
                                  size_t last, bool prune, double *costs, size_t *best,
                                  double *best_cost, struct lt_qtune_stats *stats,
                                  struct lt_err *err);

/* One re-tuning of the online search (a row of retune.csv). */
struct lt_qtune_retune {
    double time_s;             /* the instant */
    double alpha, beta, gamma; /* the triplet adopted (the incumbent kept on a tie) */
    double cost;               /* its cost (of the present work, from time_s) */
    bool changed;              /* the order changed */
    size_t queued;             /* jobs waiting then */
    size_t triplets;           /* triplets costed */
    double cpu_s, wall_s;      /* the search's process CPU and wall time */
};

/* A search over a live state: fills costs[0 .. lt_qgrid_size(g) - 1] as lt_qtune_eval does
 * (a caller may fan it out to -j processes). */
typedef int lt_qtune_eval_fn(void *arg, const struct lt_qsim *live, const struct lt_qgrid *g,
                             enum lt_qcost c, double *costs, struct lt_err *err);

struct lt_qtune_online_params {
    const struct lt_qgrid *grid;
    enum lt_qcost cost;
    /* Re-tuning instants (docs/queue.md): the first dispatch instant with work queued and a
     * core free; then, with work queued and a core free, every instant at which a job
     * completed (on_completion, the spec's default [S L298]) and/or the first instant at least
     * retune_s after the last re-tuning (retune_s > 0); never within min_gap_s of the last
     * (rate limit, 0: none). */
    bool on_completion;
    double retune_s;
    double min_gap_s;
    /* The search: NULL = lt_qtune_eval over the whole grid (pruned). */
    lt_qtune_eval_fn *eval;
    void *eval_arg;
    /* Called after each re-tuning (NULL: not). */
    void (*on_retune)(void *arg, const struct lt_qtune_retune *r);
    void *retune_arg;
};

/* Defaults: grid g, cost c, on_completion, no retune_s, no gap, lt_qtune_eval, no callback. */
void lt_qtune_online_default(struct lt_qtune_online_params *op, const struct lt_qgrid *g,
                             enum lt_qcost c);

/* `dynamic`, the paper's proposal: runs jobs[0..n-1] under p starting with p->order (the first
 * incumbent); at each re-tuning instant, between the instant's arrivals and its dispatch,
 * costs the grid on the live state (op->eval) and adopts lt_qtune_argmin's triplet (the
 * incumbent kept on a tie) as composite(triplet) until the next. The outcomes into out[0..n-1]
 * (may be NULL), the summary into *sum (may be NULL), the number of re-tunings into *retunes
 * (may be NULL). Unlike the static search, it is NOT guaranteed to be no worse than fcfs (or
 * than any fixed order): each search sees only the present work (spec 1.12 pitfall 5).
 * Errors as lt_qsim_new, LT_EINVAL for bad op, op->eval's, LT_ENOMEM. */
LT_MUST_CHECK int lt_qtune_online(const struct lt_qsim_params *p, const struct lt_qjob *jobs,
                                  size_t n, const struct lt_qtune_online_params *op,
                                  struct lt_qjob_out *out, struct lt_qsim_summary *sum,
                                  size_t *retunes, struct lt_err *err);

#endif
