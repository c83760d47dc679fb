/* decide.h -- lotus-extender's decisions: filter, prioritize and preempt over one snapshot.
 *
 * Pure functions: each reads a decoded request (ext_codec.h) and an immutable cache snapshot
 * (cache.h) and fills caller-visible results; no sockets, no clock, no logging. The server
 * (server.c) decodes, acquires a snapshot, calls one of these, encodes and releases. The
 * policy logic itself is the library's: lt_cluster_fits_requested, lt_policy_rank_flags,
 * lt_victims_choose. "Fits" is NodeResourcesFit's (fitsRequest): only the resources the pod
 * requests are checked, and the node's pod limit (snapshot max_pods) always is.
 * docs/extender.md ("Verbs") states every rule below from the operator's side.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_DECIDE_H
#define EXT_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "ext_codec.h"
#include "lt_err.h"
#include "lt_evict.h"
#include "lt_rng.h"
#include "lt_score.h"
#include "lotes.h"
#include "slots.h"

/* Bytes of one filter reason incl. NUL: three "Insufficient <res>: requested X, free Y"
 * clauses with 20-digit numbers fit in about 200 bytes. */
#define EXT_REASON_MAX 256

/* What the decisions are configured with; borrowed, static policies. */
struct ext_decide_config {
    const struct lt_policy *policy;      /* placement policy for prioritize */
    const struct lt_evict_policy *evict; /* eviction policy for preempt */
    const struct ext_slots *slots;       /* slot mode (slots.h); NULL or mode off: none */
    const struct ext_lotes *lotes;       /* LoTES mode (lotes.h); NULL or no tables: none */
};

/* ------------------------------------------------------------------------------------------
 * filter
 */

/* The filter's answer: one verdict per candidate of the request, in input order, each
 * reason pointing into text (n * EXT_REASON_MAX bytes). Caller storage; init, then
 * ext_decide_filter, then release. */
struct ext_filter_decision {
    struct ext_filter_verdict *v; /* owned; n entries, ready for ext_filter_answer */
    char *text;                   /* owned; the reasons */
    size_t n;                     /* candidates */
    size_t n_pass;                /* verdicts EXT_PASS */
};

void ext_filter_decision_init(struct ext_filter_decision *d);
void ext_filter_decision_release(struct ext_filter_decision *d);

/* Decides every candidate of a (ext_args_candidates) against snapshot s (cfg: only its slot
 * mode is read; NULL means no slot mode):
 *   - a name the snapshot does not know: EXT_FAIL, "unknown node";
 *   - a node where the pod's requests (cpu millicores, memory and ephemeral-storage bytes)
 *     fit in capacity minus the requests of the pods counted on it, in every resource the pod
 *     requests (> 0; lt_cluster_fits_requested: an unrequested resource may be overcommitted),
 *     and where one more pod stays within the node's pod limit (s->max_pods, 0: none): EXT_PASS;
 *   - a request above the node's capacity in some resource: EXT_FAIL_UNRESOLVABLE (evicting
 *     pods cannot help), "Insufficient cpu: requested 500m, capacity 200m";
 *   - otherwise EXT_FAIL with "Too many pods (110/110 used)" at the pod limit, then every short
 *     requested resource, "Insufficient cpu: requested 500m, free 200m; Insufficient memory:
 *     requested 2147483648, free 1073741824" (bytes).
 * In slot mode (cfg->slots, mode not off), besides: a node whose slot limit is 0 (no CPU, or
 * not in the slots file and no default) fails unresolvably, "node has no slots"; a node whose
 * counted pods (bound or assumed) reach its limit (lt_slot_node_free) fails, "no free slot
 * (24/24 used)", appended after "; " to the short resources if there are any.
 * d is released first. Errors: LT_ENOMEM (d left released). */
LT_MUST_CHECK int ext_decide_filter(const struct ext_decide_config *cfg,
                                    const struct ext_snapshot *s, const struct ext_args *a,
                                    struct ext_filter_decision *d, struct lt_err *err);

/* ------------------------------------------------------------------------------------------
 * prioritize
 */

/* Scores every candidate of a with cfg->policy's rank (lowest raw score best; with
 * LT_RANK_REQUESTED, so a node overcommitted only in resources the pod does not request is
 * ranked as if they were full; a node at its pod limit is infeasible) and maps the result onto
 * 0..EXT_MAX_PRIORITY into out[0..n-1] (n = ext_args_candidates(a)), host names borrowed from
 * a:
 *   best = the lowest, worst = the highest finite raw score among the known nodes;
 *   score = round(10 * (worst - raw) / (worst - best)), half away from zero;
 *   every feasible node gets 10 if worst == best; unknown or infeasible nodes get 0;
 *   then the node the policy chooses among the candidates (lt_scores_best: the lowest raw,
 *   ties to the lowest machine index, i.e. node name) keeps 10 and every other 10 becomes 9
 *   (ext_scores_single_top), so that kube-scheduler, which breaks ties between equal totals
 *   at random, places the pod where the policy (and lotus-sim) would when no other score
 *   plugin counts.
 * rng is passed to the policy (only "random" draws; may be NULL otherwise).
 * In slot mode, a node without a free slot is infeasible (0), and for a production pod (class
 * 9..11 of its spec.priority, ext_slots_class and lt_class_is_production) WASP's preference
 * comes first: raw = tier + 0.5 * (policy raw - best) / (worst - best), tier from
 * lt_slot_waa_tiers (0 = the most powerful free slots), best and worst over the nodes with a
 * free slot, so a more powerful tier always scores at least as high and the placement policy
 * orders the nodes inside a tier. Other pods keep the policy's score.
 * In LoTES mode (cfg->lotes with tables), the pod's requests (cpu millicores, memory and
 * ephemeral-storage bytes: the tables' units) give its class k (lt_lotes_classify); every node
 * of the snapshot, in node-name order (the cluster's index order), gets a configuration and a
 * bin (lt_lotes_map_machines); and the candidates are scored by lt_lotes_rank with the
 * policy's raw scores as the tie-break: nodes where the pod fits now whose configuration has
 * rho_jk > 0 and whose bin serves k score 1 - rho_jk, other nodes where it fits 1, inside each
 * group ordered by the policy, so the node of the largest rho_jk gets 10. Filter and preempt
 * do not change in LoTES mode. O(nodes of the cluster) more per request.
 * Errors: LT_ENOMEM, LT_EINVAL from the policy or the LoTES functions (bad request vector);
 * out is then unspecified. */
LT_MUST_CHECK int ext_decide_prioritize(const struct ext_decide_config *cfg,
                                        const struct ext_snapshot *s, const struct ext_args *a,
                                        struct lt_rng *rng, struct ext_host_priority *out,
                                        struct lt_err *err);

/* The mapping alone: raw[0..n-1] (LT_SCORE_INFEASIBLE or non-finite = infeasible) onto
 * out[0..n-1] as above. Exposed for the tests and the docs' worked example. */
void ext_scores_map(const double *raw, size_t n, int64_t *out);

/* Lowers every score of out[0..n-1] but out[top] that is EXT_MAX_PRIORITY to one less, so
 * that top alone has the maximum (top >= n: none keeps it). */
void ext_scores_single_top(int64_t *out, size_t n, size_t top);

/* ------------------------------------------------------------------------------------------
 * preempt
 */

/* The preemption answer: ExtenderPreemptionResult.NodeNameToMetaVictims entries, ready for
 * ext_preempt_result_encode. Caller storage; init, then ext_decide_preempt, then release. */
struct ext_preempt_decision {
    struct ext_meta_victims *nodes; /* owned array; node names borrowed from the request */
    size_t n;
    const char **uids; /* owned array every nodes[i].uids points into; strings borrowed from
                        * the snapshot or the request */
};

void ext_preempt_decision_init(struct ext_preempt_decision *d);
void ext_preempt_decision_release(struct ext_preempt_decision *d);

/* For each node of the request (NodeNameToMetaVictims if it has entries, else
 * NodeNameToVictims), in request order: the candidates are the snapshot's pods on that node
 * (never the preemptor itself); cfg->evict chooses the fewest victims of priority below the
 * preemptor's, never a sticky pod, that make its requests fit (lt_victims_choose: in the
 * resources it requests; at the node's pod limit, fewer pods than the limit stay). A node
 * that is unknown or cannot be helped is dropped. A node where the pod already fits in the
 * snapshot keeps the victims kube-scheduler proposed (its view says the pod does not fit
 * there), restricted to those the rule allows (pods of the snapshot on that node, lower
 * priority, not sticky), and is dropped if none is left. In slot mode the victims must also
 * free a slot on a node whose pods fill its limit (lt_victims_choose_slots); a node without
 * slots is dropped. NumPDBViolations is always 0: lotus does
 * not read PodDisruptionBudgets. rng: needed by "rnd" only. d is released first. Errors: LT_ENOMEM,
 * LT_EINVAL (bad request vector); d is then left released. */
LT_MUST_CHECK int ext_decide_preempt(const struct ext_decide_config *cfg,
                                     const struct ext_snapshot *s, const struct ext_preempt_args *a,
                                     struct lt_rng *rng, struct ext_preempt_decision *d,
                                     struct lt_err *err);

/* The seed of the RNG that prioritize ("random") and preempt ("rnd") draw from for pod p:
 * seed + FNV-1a 64 of p's uid (of "namespace/name" when the uid is empty). A function of the
 * request alone, so every replica, and a retry on the same snapshot, draws the same. */
uint64_t ext_pod_seed(uint64_t seed, const struct ext_pod *p);

/* The library task for pod p (requests as doubles, priority, stickiness). */
struct lt_task ext_pod_task(const struct ext_pod *p);

/* Writes v into out as printf's "%.0f" does (round half to even under the default rounding
 * mode, "-0" for a negative value that rounds to zero), without printf's multi-precision
 * path for values below 2^53 (filter reasons, once per failed node); returns the length. */
#define EXT_FMT_F0_MAX 320 /* "%.0f" of DBL_MAX has 309 digits */
size_t ext_fmt_f0(char out[EXT_FMT_F0_MAX], double v);

#endif
