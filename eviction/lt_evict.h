/* lt_evict.h -- priority eviction: which running tasks to evict so that a task fits.
 *
 * Source: Cavdar, "Priority Scheduling for Heterogeneous Workloads" (PhD thesis, 2015),
 * chapter 6, as DESIGN.md section 5 states it: when a task of priority h does not fit, evict
 * one task of the lowest running priority l < h, chosen by the eviction policy:
 *   mrs  most recently started first,
 *   lrs  least recently started first,
 *   rnd  uniformly at random (from the caller's RNG),
 * and repeat until it fits. lt_victims_choose applies that rule on one machine, never to a
 * sticky task (HYBRID, Cavdar ch. 9), then gives back every victim the task does not need
 * (the last chosen first), so the victim set is minimal: no victim can be spared. The
 * extender's preempt verb and the simulators call this one function.
 *
 * Each policy has one registration entry and is looked up by name, like the placement
 * policies; an unknown name is an error listing the known ones.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_EVICT_H
#define LT_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"
#include "lt_err.h"
#include "lt_rng.h"

struct lt_evict_policy;

/* The eviction policy named name ("mrs", "lrs", "rnd"), static; NULL and LT_ENOTFOUND with
 * the known names in the message otherwise. */
const struct lt_evict_policy *lt_evict_find(const char *name, struct lt_err *err);

/* Its name; the number of policies and the i-th, in registration order. */
const char *lt_evict_name(const struct lt_evict_policy *p);
size_t lt_evict_count(void);
const struct lt_evict_policy *lt_evict_at(size_t i);

/* A running task on the machine, as lt_victims_choose sees it. */
struct lt_victim_cand {
    int64_t id;        /* caller's id; ties in the policy order go to the lower id */
    int priority;      /* higher is more important */
    int64_t start_us;  /* start of its current run */
    struct lt_res req; /* its request, counted in the machine's allocation */
    bool sticky;       /* never evicted */
};

/* Chooses victims among cand[0..n-1] (the tasks running on a machine of capacity cap) so that
 * a task of priority prio requesting req fits: after the victims leave, free = cap - (sum of
 * every cand's req) + (sum of the victims' req) >= req in every component req asks for (> 0;
 * lt_res_fits_requested: a component it does not request is not checked, so no victim is
 * chosen to relieve a resource the task does not need, even where it is overcommitted). Only
 * non-sticky
 * tasks of priority < prio are victims. On success returns 0 and stores in *fits whether the
 * task can be made to fit; if so, out[0..*n_out-1] are the victims' positions in cand, in the
 * order they were chosen (*n_out is 0 when the task already fits). out must hold n entries.
 * rng is needed by rnd only (may be NULL otherwise). Errors: LT_EINVAL for a bad request,
 * capacity or candidate (negative or NaN), NULL arguments, or rnd without an rng. */
LT_MUST_CHECK int lt_victims_choose(const struct lt_evict_policy *p, const struct lt_res *cap,
                                    const struct lt_res *req, int prio,
                                    const struct lt_victim_cand *cand, size_t n, struct lt_rng *rng,
                                    size_t *out, size_t *n_out, bool *fits, struct lt_err *err);

/* lt_victims_choose on a machine that also has a slot limit (Cavdar's slot model, lt_slots.h):
 * the task fits only if, besides its requests, fewer than slots of the candidates stay, so on a
 * full machine at least one is evicted (never a sticky one: a machine full of sticky tasks
 * cannot be helped). slots == 0 means no slot limit, exactly lt_victims_choose. Arguments,
 * results and errors as lt_victims_choose. */
LT_MUST_CHECK int lt_victims_choose_slots(const struct lt_evict_policy *p, const struct lt_res *cap,
                                          uint32_t slots, const struct lt_res *req, int prio,
                                          const struct lt_victim_cand *cand, size_t n,
                                          struct lt_rng *rng, size_t *out, size_t *n_out,
                                          bool *fits, struct lt_err *err);

#endif
