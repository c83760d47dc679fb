/* lt_score.h -- placement policies: look one up by name, rank candidates, choose a machine.
 *
 * Every policy of DESIGN.md section 4 (Stein, Henzinger, Radovanovic 2009; Cavdar 2015 for
 * brfs-*) has two entry points over the same definition:
 *   rank   scores an explicit candidate list (the extender's prioritize); O(n), no index;
 *   choose returns the best machine of the whole cluster (the simulator's hot path) through
 *          an index attached to the cluster, and returns exactly what a naive scan of rank
 *          over machines 0..n-1 would return (a tested property).
 * The lowest score wins; ties go to the lowest machine index; a machine that is offline or
 * where the task does not fit gets LT_SCORE_INFEASIBLE and is never chosen. Randomness comes
 * only from the struct lt_rng the caller passes. docs/policies.md has every formula.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_SCORE_H
#define LT_SCORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"
#include "lt_err.h"
#include "lt_rng.h"

/* Score of a candidate that is offline or where the task does not fit. */
#define LT_SCORE_INFEASIBLE HUGE_VAL

struct lt_policy;

/* The policy named name (borrowed, static). Unknown name: NULL and LT_ENOTFOUND, with a
 * message that lists the known names. */
const struct lt_policy *lt_policy_find(const char *name, struct lt_err *err);

/* Number of registered policies and the i-th of them (i < lt_policy_count()), in the
 * registration order of docs/policies.md. */
size_t lt_policy_count(void);
const struct lt_policy *lt_policy_at(size_t i);

/* The policy's name ("bestfit3"), static. */
const char *lt_policy_name(const struct lt_policy *p);

/* Scores the n candidates cand[0..n-1] (machine indexes of c, any order, duplicates allowed)
 * for task t into scores[0..n-1]. Infeasible candidates get LT_SCORE_INFEASIBLE. rng is used
 * only by policies that draw (random); it may be NULL for the others (LT_EINVAL if needed).
 * Errors: LT_EINVAL for a bad request, an out-of-range candidate or NULL arguments. */
LT_MUST_CHECK int lt_policy_rank(const struct lt_policy *p, const struct lt_cluster *c,
                                 const struct lt_task *t, const size_t *cand, size_t n,
                                 struct lt_rng *rng, double *scores, struct lt_err *err);

/* Flags of lt_policy_rank_flags. */
enum lt_rank_flags {
    LT_RANK_REQUESTED = 1 << 0 /* Kubernetes' fit (lt_cluster_fits_requested): a component the
                                  task does not request is not checked, and the score sees it
                                  as free max(free, 0): an overcommitted resource counts as
                                  full, the way NodeResourcesFit's scores count it */
};

/* lt_policy_rank with flags (0: exactly lt_policy_rank). With LT_RANK_REQUESTED a candidate is
 * feasible when lt_cluster_fits_requested holds, and the policy's formula is evaluated on its
 * free vector with every component the task does not request (0) raised to at least 0. It
 * differs from lt_policy_rank only on machines overcommitted in a resource the task does not
 * request (free < 0 there), which lt_policy_rank calls infeasible. choose has no such variant:
 * the simulator never needs it. Errors as lt_policy_rank, and LT_EINVAL for unknown flags. */
LT_MUST_CHECK int lt_policy_rank_flags(const struct lt_policy *p, const struct lt_cluster *c,
                                       const struct lt_task *t, const size_t *cand, size_t n,
                                       unsigned flags, struct lt_rng *rng, double *scores,
                                       struct lt_err *err);

/* The position in cand[0..n-1] of the best score (lowest; ties to the lowest machine index),
 * or LT_NO_MACHINE if every score is LT_SCORE_INFEASIBLE or n == 0. */
size_t lt_scores_best(const size_t *cand, const double *scores, size_t n);

/* Builds p's index on c and keeps it exact through every later mutation of c (owned by c,
 * freed with it). Attaching an already attached policy is a no-op. O(n log n).
 * Errors: LT_ENOMEM (c unchanged). */
LT_MUST_CHECK int lt_policy_attach(const struct lt_policy *p, struct lt_cluster *c,
                                   struct lt_err *err);

/* Chooses the best machine of c for t into *out_machine, or LT_NO_MACHINE when t fits
 * nowhere (an answer, not an error). Requires lt_policy_attach(p, c) first (LT_EINVAL
 * otherwise). Same result, and the same draws from rng, as lt_policy_rank over all machines
 * followed by lt_scores_best. Cost: microseconds on 12,500 machines (docs/benchmarks.md). */
LT_MUST_CHECK int lt_policy_choose(const struct lt_policy *p, const struct lt_cluster *c,
                                   const struct lt_task *t, struct lt_rng *rng, size_t *out_machine,
                                   struct lt_err *err);

/* lt_policy_choose when the caller knows that machine m is the only machine of c where t fits
 * (the trace replay retrying its queue on the one machine that gained room): *out_machine = m,
 * with exactly the draws from rng that lt_policy_choose would make then (none, except for
 * random: its rejection draws until one picks m, and one more if all miss). O(1) for every
 * policy but random (up to 65 draws). Only that t fits m is checked, not that it fits nowhere
 * else (that costs what choose costs): with another feasible machine the answer and the draws
 * may differ from lt_policy_choose's. Errors: LT_EINVAL as lt_policy_choose, or if t does not
 * fit m. */
LT_MUST_CHECK int lt_policy_choose_sole(const struct lt_policy *p, const struct lt_cluster *c,
                                        const struct lt_task *t, size_t m, struct lt_rng *rng,
                                        size_t *out_machine, struct lt_err *err);

/* What one choose leaves for the next on the same cluster: opaque, owned by the caller (one
 * per sequence of calls, never shared between threads; the cluster stays const). When the
 * next request is the same, a policy may skip the part of its search that the changes to the
 * cluster since then cannot have altered (sos10/sos20: the machines below the lowest one that
 * stays in its bucket; bestfit4, bestfit5, epvm2, brfs-dot: every machine but the previous
 * search's 16 best and those changed since; docs/policies.md). Use a hint with one cluster only:
 * reset it before using it with another (a freed cluster's memory may be reused by a new one). */
struct lt_choose_hint;

/* A new hint that holds nothing yet (owned, free with lt_choose_hint_free). NULL and
 * LT_ENOMEM if out of memory. */
struct lt_choose_hint *lt_choose_hint_new(struct lt_err *err);

/* Frees hint; NULL is a no-op. */
void lt_choose_hint_free(struct lt_choose_hint *hint);

/* Forgets what hint holds, as lt_choose_hint_new left it: for use with another cluster. NULL
 * is a no-op. */
void lt_choose_hint_reset(struct lt_choose_hint *hint);

/* lt_policy_choose with a hint (NULL: none), updated for the next call. The answer and the
 * draws from rng are exactly lt_policy_choose's. */
LT_MUST_CHECK int lt_policy_choose_hinted(const struct lt_policy *p, const struct lt_cluster *c,
                                          const struct lt_task *t, struct lt_rng *rng,
                                          struct lt_choose_hint *hint, size_t *out_machine,
                                          struct lt_err *err);

#endif
