/* online.c -- LoTES tables over a live cluster: a task's class from its requests, each machine's
 * configuration and bin when the cluster does not match the tables exactly, and a deterministic
 * ranking of the machines that follows the dispatcher's preference (for kube-scheduler's
 * prioritize, which must not draw).
 *
 * Source: Tran and Beck, section 4.3 (the dispatcher); docs/lotes.md "Online use".
 * Definitions:
 *   - class: the class whose expected request is nearest to the task's request, by the
 *     Euclidean distance over the resources after dividing each by the component-wise largest
 *     capacity of the tables' configurations (N_l = max_j c_jl; a resource with N_l = 0 is
 *     left out); ties to the lower class index;
 *   - configuration of a machine: the first configuration (index order) whose capacity equals
 *     the machine's on cpu, mem and disk within LT_LOTES_CAP_RTOL relative, a resource that the
 *     configuration leaves at 0 and no class requests not compared (a tables file without disk
 *     matches nodes with ephemeral storage); none otherwise;
 *   - bins: p_j machines of configuration j present (the tables say n_j) share j's bins in
 *     proportion to the whole machines m_b: lt_lotes_round(m_b p_j / n_j) per bin, and the
 *     machines of j, in the caller's order, take the bins in order, that many each. With
 *     p_j = n_j this is exactly lt_lotes_machine_bins;
 *   - rank (lower is better, as lt_policy_rank): a machine whose free resources do not hold the
 *     task is infeasible; one whose configuration j has rho_jk > 0 and whose bin serves k
 *     (level 2's first-fit set for a level-1 draw of j) scores 1 - rho_jk; every other machine
 *     with room (level 2's "any room") scores 1. A tie-break (the placement policy's raw scores)
 *     adds delta x its value normalised to [0, 1] over the feasible machines, delta being half
 *     the smallest gap between the distinct scores present, so it orders machines inside a group
 *     and never across groups.
 * Readings: level 1 draws j with probability rho_jk and level 2 then first-fits over j's
 *   machines serving k, so a machine of that set receives the task with probability up to
 *   rho_jk; 1 - rho_jk orders the sets as that probability does. A deterministic caller
 *   (kube-scheduler asks for scores, not a draw) uses rho as a weight instead of a lottery.
 *   Queues are not ranked: kube-scheduler binds only where the pod fits now.
 * Ties: classes to the lower index; equal rho gives equal scores (the tie-break decides).
 * Implementation: O(K) per classification, O(n M + bins) per mapping, O(n + M log M) per rank.
 *   lt_lotes_round (stage 2's whole machines, reused by the mapping) lives here: nothing in this
 *   file calls GLPK, so a front end that only reads tables does not link it.
 * Tests: tests/unit/lotes/test_lotes.c (classification by hand and against brute force, mapping
 * with exact, missing and extra machines, rank against lt_lotes_dispatch's choices).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_score.h"

/* Largest remainder (docs/lotes.md, reading R5). Here rather than in bins.c so that the
 * online functions link without GLPK (lotus-extender does not need an LP solver). */
int lt_lotes_round(const double *x, size_t n_x, size_t n, size_t *out, struct lt_err *err)
{
    double sum = 0, slack = 1e-6 * (n > 1 ? (double)n : 1.0);
    size_t total = 0;

    if ((x == NULL || out == NULL) && n_x > 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/round: no input or output");
    for (size_t b = 0; b < n_x; b++) {
        if (!isfinite(x[b]) || x[b] < -slack)
            return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/round: value %zu is %g", b, x[b]);
        sum += x[b];
    }
    if (n_x == 0 || fabs(sum - (double)n) > slack)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/round: %zu values sum to %.17g, not to %zu",
                          n_x, sum, n);
    /* Floors, with the slack so that 2.9999999999 counts as 3. */
    for (size_t b = 0; b < n_x; b++) {
        double f = floor(x[b] + LT__LOTES_ZERO);
        out[b] = f > 0 ? (size_t)f : 0;
        total += out[b];
    }
    /* Hand out the remaining units by largest fractional part (ties: lower index), or take
     * back surplus units (only possible through round-off) by smallest fractional part. */
    while (total != n) {
        size_t best = SIZE_MAX;
        double best_frac = 0;

        for (size_t b = 0; b < n_x; b++) {
            double frac = x[b] - (double)out[b];
            if (total < n && (best == SIZE_MAX || frac > best_frac)) {
                best = b;
                best_frac = frac;
            } else if (total > n && out[b] > 0 && (best == SIZE_MAX || frac < best_frac)) {
                best = b;
                best_frac = frac;
            }
        }
        assert(best != SIZE_MAX);
        if (total < n) {
            out[best]++;
            total++;
        } else {
            out[best]--;
            total--;
        }
    }
    return 0;
}

static bool res_ok(const struct lt_res *r)
{
    return isfinite(r->cpu) && isfinite(r->mem) && isfinite(r->disk) && r->cpu >= 0 &&
           r->mem >= 0 && r->disk >= 0;
}

int lt_lotes_classify(const struct lt_lotes_tables *t, const struct lt_res *req, size_t *k_out,
                      struct lt_err *err)
{
    double norm[LT__LOTES_NRES] = {0, 0, 0}, best = HUGE_VAL;
    size_t kk, best_k = 0;

    if (t == NULL || req == NULL || k_out == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/classify: no tables, request or output");
    if (!res_ok(req))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "lotes/classify: request (%g, %g, %g) is not finite and >= 0", req->cpu,
                          req->mem, req->disk);
    for (size_t j = 0; j < t->n_configs; j++)
        for (int l = 0; l < LT__LOTES_NRES; l++) {
            double c = lt__lotes_res_get(&t->configs[j].cap, l);
            norm[l] = c > norm[l] ? c : norm[l];
        }
    kk = t->n_classes;
    for (size_t k = 0; k < kk; k++) {
        double d = 0;

        for (int l = 0; l < LT__LOTES_NRES; l++) {
            double x;

            if (!(norm[l] > 0))
                continue;
            x = (lt__lotes_res_get(req, l) - lt__lotes_res_get(&t->classes[k].req, l)) / norm[l];
            d += x * x;
        }
        if (d < best) { /* strict: ties to the lower index */
            best = d;
            best_k = k;
        }
    }
    *k_out = best_k;
    return 0;
}

/* Whether machine capacity a is configuration capacity b: |a - b| <= LT_LOTES_CAP_RTOL *
 * max(|a|, |b|) on every component, except one that b leaves at 0 and no class requests (bit
 * not in active): the tables do not describe that resource. */
static bool same_cap(const struct lt_res *a, const struct lt_res *b, unsigned active)
{
    for (int l = 0; l < LT__LOTES_NRES; l++) {
        double x = lt__lotes_res_get(a, l), y = lt__lotes_res_get(b, l);
        double m = fabs(x) > fabs(y) ? fabs(x) : fabs(y);

        if (!(y > 0) && !(active & (1u << l)))
            continue;
        if (fabs(x - y) > LT_LOTES_CAP_RTOL * m)
            return false;
    }
    return true;
}

/* Gives the present machines of configuration j (config[i] == j, p of them) j's bins in
 * proportion to m_b; x and cnt have room for j's bins. */
static int share_bins(const struct lt_lotes_tables *t, size_t j, const size_t *config, size_t n,
                      size_t p, double *x, size_t *cnt, size_t *bin_out, struct lt_err *err)
{
    size_t first = t->bin_first[j], nb = t->bin_first[j + 1] - first, b = 0, used = 0;
    int rc;

    for (size_t i = 0; i < nb; i++)
        x[i] = (double)t->bin_machines[first + i] * (double)p / (double)t->configs[j].n;
    rc = lt_lotes_round(x, nb, p, cnt, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (config[i] != j)
            continue;
        while (b < nb && used == cnt[b]) { /* next bin with machines left */
            b++;
            used = 0;
        }
        if (b == nb) /* cannot happen: the counts sum to p */
            return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/map: bins of '%s' ran out",
                              t->configs[j].name);
        bin_out[i] = first + b;
        used++;
    }
    return 0;
}

int lt_lotes_map_machines(const struct lt_lotes_tables *t, const struct lt_res *cap, size_t n,
                          size_t *config_out, size_t *bin_out, struct lt_err *err)
{
    size_t max_nb = 1, *present = NULL, *cnt = NULL;
    double *x = NULL;
    unsigned active;
    int rc = 0;

    if (t == NULL || (n > 0 && (cap == NULL || config_out == NULL || bin_out == NULL)))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/map: no tables, machines or output");
    active = lt__lotes_active(t->classes, t->n_classes);
    for (size_t i = 0; i < n; i++) {
        if (!res_ok(&cap[i]))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "lotes/map: machine %zu has capacity (%g, %g, %g), not finite and "
                              ">= 0",
                              i, cap[i].cpu, cap[i].mem, cap[i].disk);
        config_out[i] = LT_LOTES_NONE;
        bin_out[i] = LT_LOTES_NONE;
        for (size_t j = 0; j < t->n_configs; j++)
            if (same_cap(&cap[i], &t->configs[j].cap, active)) {
                config_out[i] = j;
                break;
            }
    }
    for (size_t j = 0; j < t->n_configs; j++)
        if (t->bin_first[j + 1] - t->bin_first[j] > max_nb)
            max_nb = t->bin_first[j + 1] - t->bin_first[j];
    present = lt_calloc(t->n_configs, sizeof(*present));
    x = lt_calloc(max_nb, sizeof(*x));
    cnt = lt_calloc(max_nb, sizeof(*cnt));
    if (present == NULL || x == NULL || cnt == NULL) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "lotes/map: out of memory for %zu machines", n);
        goto out_free;
    }
    for (size_t i = 0; i < n; i++)
        if (config_out[i] != LT_LOTES_NONE)
            present[config_out[i]]++;
    for (size_t j = 0; j < t->n_configs && rc == 0; j++)
        if (present[j] > 0)
            rc = share_bins(t, j, config_out, n, present[j], x, cnt, bin_out, err);
out_free:
    lt_free(present);
    lt_free(x);
    lt_free(cnt);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The group score of machine m for class k (1 - rho_jk in its serving set, else 1), or
 * LT_SCORE_INFEASIBLE when its free resources do not hold req. */
static double group_score(const struct lt_lotes_tables *t, const struct lt_lotes_machine *m,
                          size_t k, const struct lt_res *req)
{
    size_t kk = t->n_classes;
    double rho;

    if (!(req->cpu <= m->free.cpu && req->mem <= m->free.mem && req->disk <= m->free.disk))
        return LT_SCORE_INFEASIBLE;
    if (m->config == LT_LOTES_NONE || m->bin == LT_LOTES_NONE)
        return 1.0;
    rho = t->rho[m->config * kk + k];
    if (rho > 0 && t->bin_tasks[m->bin * kk + k] > 0)
        return 1.0 - rho;
    return 1.0;
}

static int check_rank_args(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view,
                           size_t n, size_t k, const struct lt_res *req, const double *scores,
                           struct lt_err *err)
{
    if (t == NULL || req == NULL || (n > 0 && (view == NULL || scores == NULL)))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/rank: no tables, view, request or output");
    if (k >= t->n_classes)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/rank: class %zu does not exist (%zu known)",
                          k, t->n_classes);
    if (!res_ok(req))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "lotes/rank: request (%g, %g, %g) is not finite and >= 0", req->cpu,
                          req->mem, req->disk);
    for (size_t i = 0; i < n; i++) {
        const struct lt_lotes_machine *m = &view[i];

        if (m->config == LT_LOTES_NONE && m->bin == LT_LOTES_NONE)
            continue;
        if (m->config >= t->n_configs ||
            (m->bin != LT_LOTES_NONE &&
             (m->bin < t->bin_first[m->config] || m->bin >= t->bin_first[m->config + 1])))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "lotes/rank: machine %zu: configuration %zu and bin %zu do not match "
                              "the tables",
                              i, m->config, m->bin);
    }
    return 0;
}

int lt_lotes_rank(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view, size_t n,
                  size_t k, const struct lt_res *req, const double *tiebreak, double *scores,
                  struct lt_err *err)
{
    double vals[LT_LOTES_MAX_CONFIGS + 1], gap = HUGE_VAL, lo = HUGE_VAL, hi = -HUGE_VAL, delta;
    bool seen[LT_LOTES_MAX_CONFIGS + 1];
    size_t nv = 0;
    int rc = check_rank_args(t, view, n, k, req, scores, err);

    if (rc < 0)
        return rc;
    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < n; i++) {
        scores[i] = group_score(t, &view[i], k, req);
        if (tiebreak != NULL && !isfinite(tiebreak[i]))
            scores[i] = LT_SCORE_INFEASIBLE; /* the policy says it does not fit */
        if (!isfinite(scores[i]))
            continue;
        /* Distinct group scores come from at most M configurations plus "1". */
        {
            size_t g = scores[i] < 1.0 ? view[i].config : t->n_configs;
            if (!seen[g]) {
                seen[g] = true;
                vals[nv++] = scores[i];
            }
        }
        if (tiebreak != NULL) {
            lo = tiebreak[i] < lo ? tiebreak[i] : lo;
            hi = tiebreak[i] > hi ? tiebreak[i] : hi;
        }
    }
    if (tiebreak == NULL || !(hi > lo))
        return 0;
    qsort(vals, nv, sizeof(vals[0]), cmp_double);
    for (size_t v = 1; v < nv; v++)
        if (vals[v] > vals[v - 1] && vals[v] - vals[v - 1] < gap)
            gap = vals[v] - vals[v - 1];
    delta = isfinite(gap) ? 0.5 * gap : 1.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(scores[i]))
            scores[i] += delta * (tiebreak[i] - lo) / (hi - lo);
    return 0;
}

int lt_lotes_configs_from_caps(const struct lt_res *cap, size_t n, struct lt_lotes_config *out,
                               size_t max, size_t *n_out, struct lt_err *err)
{
    if (cap == NULL || out == NULL || n_out == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/configs: a NULL argument");
    *n_out = 0;
    for (size_t i = 0; i < n; i++) {
        const struct lt_res *c = &cap[i];
        size_t j;

        if (!isfinite(c->cpu) || !isfinite(c->mem) || !isfinite(c->disk))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "lotes/configs: machine %zu's capacity is not finite", i);
        if (!(c->cpu > 0.0) || !(c->mem > 0.0))
            continue;
        for (j = 0; j < *n_out; j++) {
            if (memcmp(&out[j].cap, c, sizeof(*c)) == 0) /* exact: equal machine types */
                break;
        }
        if (j == *n_out) {
            if (j == max)
                return lt_err_set(err, LT_ERANGE, 0, 0,
                                  "lotes/configs: more than %zu machine configurations", max);
            memset(&out[j], 0, sizeof(out[j]));
            out[j].cap = *c;
            snprintf(out[j].name, sizeof(out[j].name), "cpu%g-mem%g-disk%g", c->cpu, c->mem,
                     c->disk);
            (*n_out)++;
        }
        out[j].n++;
    }
    return 0;
}
