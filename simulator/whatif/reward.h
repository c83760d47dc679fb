/* reward.h -- the SLA settings of `lotus-sim whatif` and what each pays per replica: Betser's
 * "reward function evaluator" [B L416] (docs/whatif.md "SLA rewards").
 *
 * A setting is "[NAME=]SPEC", SPEC as `lotus-sim queue --sla` takes it (lt_sla_parse); its
 * times written Nx are N times the job's longest task duration. Every setting is evaluated on
 * the same replicas (common random numbers): the injected job is the only job with an SLA, so
 * the schedule does not depend on the SLA's parameters under any order whatif offers.
 *
 * A started replica's reward is r(d). A censored one was not started by its censoring delay
 * H_eff (the horizon, or the trace's end minus the injection; +inf when the job can never be
 * placed), so its reward is at most r(H_eff) (spec 2.9 pitfall 3): reported as r(H_eff),
 * flagged censored, and `bound` when r still decreases past H_eff (then it is a strict upper
 * bound; by-deadline with H_eff >= d2 pays exactly r_pen). Example 1's reward depends on the
 * run's hours in peak time: every task is taken to run from the job's start for its own
 * duration (resources = its cpu request); a censored replica pays 0 when H_eff >= target
 * (the SLO is missed: exact), else at most the dearer price times the job's cpu-hours.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_WHATIF_REWARD_H
#define SIM_WHATIF_REWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/slafile.h"
#include "lt_err.h"
#include "lt_sla.h"
#include "whatif/whatif.h"

#define SIM_WHATIF_MAX_SLAS 16
#define SIM_WHATIF_SLA_NAME SIM_SLA_NAME

/* One --sla setting. */
struct sim_whatif_sla {
    char name[SIM_WHATIF_SLA_NAME]; /* given, or "s1", "s2"... by position */
    struct lt_sla_spec spec;        /* as parsed */
    struct lt_sla sla;              /* resolved: Nx times the job's longest task duration */
    const char *given;              /* the --sla argument it came from (borrowed) */
};

/* Parses text = "[NAME=]SPEC" (NAME: letters, digits, '_', '-', '.', at most 31, before any
 * ':'; none: "s<index + 1>") into out's name and spec (out->sla is resolved later). Errors
 * (LT_ENOTFOUND, LT_EINVAL) quoting the text, prefixed "--sla: ". *out untouched on failure. */
LT_MUST_CHECK int sim_whatif_sla_parse(const char *text, size_t index, struct sim_whatif_sla *out,
                                       struct lt_err *err);

/* Resolves s->spec into s->sla for a job whose longest task runs longest_s (> 0): Nx times
 * longest_s. LT_EINVAL prefixed "--sla NAME: " (a mixed "d1=2x,d2=1h" can fail). */
LT_MUST_CHECK int sim_whatif_sla_resolve(struct sim_whatif_sla *s, double longest_s,
                                         struct lt_err *err);

/* The longest task duration of the job, seconds. */
double sim_whatif_job_longest_s(const struct sim_whatif_job *job);

/* The delay a censored replica was censored at (H_eff, seconds): horizon_s for SIM_INJ_HORIZON,
 * the window's end t_end_us minus the injection for SIM_INJ_TRACE_END, +inf for
 * SIM_INJ_UNPLACEABLE; NAN for a started replica. */
double sim_whatif_censor_s(const struct sim_whatif_rec *r, double horizon_s, int64_t t_end_us);

/* The knee P(start <= knee) is given at: by-deadline d1, cheap-and-simple d0, example1 target. */
double sim_whatif_sla_knee(const struct lt_sla *s);

/* One replica's reward under one setting. */
struct sim_whatif_reward {
    double value;  /* r(d); censored: r(H_eff) (see above) */
    bool censored; /* the replica was censored */
    bool bound;    /* censored and value is a strict upper bound, not the exact reward */
};

/* Replica r's reward under s for the job (example1 reads its tasks and the injection time). */
void sim_whatif_reward(const struct lt_sla *s, const struct sim_whatif_job *job,
                       const struct sim_whatif_rec *r, double horizon_s, int64_t t_end_us,
                       struct sim_whatif_reward *out);

/* The reward statistics of one level and setting. */
struct sim_whatif_rstats {
    uint64_t n, censored, bounds; /* replicas; censored ones; those whose value is a bound */
    double mean;                  /* E[reward] (censored at their value) */
    double p_negative;            /* P(reward < 0) */
    double p_knee;                /* P(start <= knee) (censored: not started) */
    double q[SIM_WHATIF_N_Q];     /* reward quantiles at SIM_WHATIF_Q */
};

/* Fills sorted (replicas entries) with the rewards of the level under s, ascending, and *st. */
void sim_whatif_rewards(const struct lt_sla *s, const struct sim_whatif_job *job,
                        const struct sim_whatif_rec *recs, uint64_t replicas, size_t n_levels,
                        size_t level, double horizon_s, int64_t t_end_us, double *sorted,
                        struct sim_whatif_rstats *st);

#endif
