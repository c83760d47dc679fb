/* reward.c -- the SLA settings of `lotus-sim whatif` and their rewards per replica (reward.h;
 * docs/whatif.md "SLA rewards").
 *
 * SPDX-License-Identifier: MIT
 */
#include "whatif/reward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opt.h"

#define US 1000000.0

int sim_whatif_sla_parse(const char *text, size_t index, struct sim_whatif_sla *out,
                         struct lt_err *err)
{
    struct sim_whatif_sla s;
    const char *eq = strchr(text, '='), *colon = strchr(text, ':'), *spec = text;

    memset(&s, 0, sizeof(s));
    if (eq != NULL && (colon == NULL || eq < colon)) { /* NAME=SPEC */
        size_t len = (size_t)(eq - text);
        char name[SIM_WHATIF_SLA_NAME] = "";
        if (len < sizeof(name))
            memcpy(name, text, len);
        if (len >= sizeof(name) || !sim_sla_name_ok(name))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--sla: '%.80s': the name before '=' must be 1 to %d letters, "
                              "digits, '_', '-' or '.'",
                              text, SIM_WHATIF_SLA_NAME - 1);
        memcpy(s.name, text, len);
        spec = eq + 1;
    } else {
        snprintf(s.name, sizeof(s.name), "s%zu", index + 1);
    }
    if (lt_sla_parse(spec, &s.spec, err) < 0)
        return sim_err_prefix(err, "--sla: ");
    s.sla = s.spec.sla;
    *out = s;
    return 0;
}

int sim_whatif_sla_resolve(struct sim_whatif_sla *s, double longest_s, struct lt_err *err)
{
    if (lt_sla_resolve(&s->spec, longest_s, &s->sla, err) < 0) {
        char pre[SIM_WHATIF_SLA_NAME + 16];
        snprintf(pre, sizeof(pre), "--sla %s: ", s->name);
        return sim_err_prefix(err, pre);
    }
    return 0;
}

double sim_whatif_job_longest_s(const struct sim_whatif_job *job)
{
    int64_t m = 0;
    for (size_t g = 0; g < job->n_groups; g++)
        if (job->groups[g].duration_us > m)
            m = job->groups[g].duration_us;
    return (double)m / US;
}

double sim_whatif_censor_s(const struct sim_whatif_rec *r, double horizon_s, int64_t t_end_us)
{
    switch (r->r.reason) {
    case SIM_INJ_STARTED:
        return NAN;
    case SIM_INJ_TRACE_END:
        return (double)(t_end_us - r->r.t_inj_us) / US;
    case SIM_INJ_UNPLACEABLE:
        return INFINITY;
    default:
        return horizon_s;
    }
}

double sim_whatif_sla_knee(const struct lt_sla *s)
{
    return lt_sla_knee(s);
}

/* Example 1 for a start delay d: each task group from the job's start for its duration. */
static double example1_reward(const struct lt_sla *s, const struct sim_whatif_job *job,
                              int64_t t_inj_us, double d)
{
    double v = 0, start_s = (double)(t_inj_us - SIM_TRACE_ZERO_US) / US + d;
    for (size_t g = 0; g < job->n_groups; g++) {
        const struct sim_inject_group *gr = &job->groups[g];
        struct lt_sla_run run = {start_s, (double)gr->duration_us / US,
                                 gr->req.cpu * (double)gr->count};
        v += lt_sla_reward(s, d, &run);
    }
    return v;
}

/* Example 1's largest possible reward: the dearer price on every cpu-hour of the job. */
static double example1_max(const struct lt_sla *s, const struct sim_whatif_job *job)
{
    double h = 0;
    for (size_t g = 0; g < job->n_groups; g++)
        h += job->groups[g].req.cpu * (double)job->groups[g].count *
             (double)job->groups[g].duration_us / US / 3600.0;
    return fmax(s->price_peak, s->price_offpeak) * h;
}

void sim_whatif_reward(const struct lt_sla *s, const struct sim_whatif_job *job,
                       const struct sim_whatif_rec *r, double horizon_s, int64_t t_end_us,
                       struct sim_whatif_reward *out)
{
    double d;
    memset(out, 0, sizeof(*out));
    if (sim_whatif_delay(r, &d)) {
        out->value = s->kind == LT_SLA_EXAMPLE1 ? example1_reward(s, job, r->r.t_inj_us, d)
                                                : lt_sla_reward(s, d, NULL);
        return;
    }
    double h = sim_whatif_censor_s(r, horizon_s, t_end_us);
    out->censored = true;
    switch (s->kind) {
    case LT_SLA_BY_DEADLINE: /* flat (r_pen) from d2 on */
        out->value = lt_sla_reward(s, h, NULL);
        out->bound = h < s->d2_s;
        break;
    case LT_SLA_CHEAP_AND_SIMPLE: /* decreasing for ever unless r_min = r_max */
        out->value = lt_sla_reward(s, h, NULL);
        out->bound = isfinite(h) && s->r_min < s->r_max;
        break;
    case LT_SLA_EXAMPLE1: /* 0 once the target is missed */
        out->bound = h < s->target_s;
        out->value = out->bound ? example1_max(s, job) : 0.0;
        break;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sim_whatif_rewards(const struct lt_sla *s, const struct sim_whatif_job *job,
                        const struct sim_whatif_rec *recs, uint64_t replicas, size_t n_levels,
                        size_t level, double horizon_s, int64_t t_end_us, double *sorted,
                        struct sim_whatif_rstats *st)
{
    double sum = 0, knee = sim_whatif_sla_knee(s);
    uint64_t neg = 0, in_knee = 0;
    memset(st, 0, sizeof(*st));
    st->n = replicas;
    for (uint64_t i = 0; i < replicas; i++) {
        const struct sim_whatif_rec *r = &recs[i * n_levels + level];
        struct sim_whatif_reward w;
        double d;
        sim_whatif_reward(s, job, r, horizon_s, t_end_us, &w);
        sorted[i] = w.value;
        sum += w.value;
        neg += w.value < 0;
        st->censored += w.censored;
        st->bounds += w.bound;
        in_knee += sim_whatif_delay(r, &d) && d <= knee;
    }
    st->mean = replicas ? sum / (double)replicas : NAN;
    st->p_negative = replicas ? (double)neg / (double)replicas : NAN;
    st->p_knee = replicas ? (double)in_knee / (double)replicas : NAN;
    qsort(sorted, replicas, sizeof(*sorted), cmp_double);
    for (int k = 0; k < SIM_WHATIF_N_Q; k++)
        st->q[k] = sim_whatif_quantile(sorted, replicas, SIM_WHATIF_Q[k]);
}
