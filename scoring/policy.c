/* policy.c -- the one list of placement policies, lookup by name, and the public entry
 * points that validate arguments before calling a policy's rank or choose (R18).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <stdio.h>
#include <string.h>

#include "lt_mem.h"

/* Registration order is the order of docs/policies.md and of --list-policies. */
static const struct lt_policy *const policies[] = {
    &lt__firstfit_policy, &lt__randfirstfit_policy, &lt__bestfit1_policy, &lt__bestfit2_policy,
    &lt__bestfit3_policy, &lt__bestfit4_policy,     &lt__bestfit5_policy, &lt__epvm_policy,
    &lt__epvm2_policy,    &lt__sos10_policy,        &lt__sos20_policy,    &lt__random_policy,
    &lt__brfs_dot_policy, &lt__brfs_norm_policy,
};

#define N_POLICIES (sizeof(policies) / sizeof(policies[0]))

size_t lt_policy_count(void)
{
    return N_POLICIES;
}

const struct lt_policy *lt_policy_at(size_t i)
{
    return i < N_POLICIES ? policies[i] : NULL;
}

const char *lt_policy_name(const struct lt_policy *p)
{
    return p->name;
}

const struct lt_policy *lt_policy_find(const char *name, struct lt_err *err)
{
    char known[LT_ERR_TEXT];
    size_t used = 0;

    if (name == NULL) {
        lt_err_set(err, LT_EINVAL, 0, 0, "policy name is NULL");
        return NULL;
    }
    for (size_t i = 0; i < N_POLICIES; i++) {
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    }
    known[0] = '\0';
    for (size_t i = 0; i < N_POLICIES && used < sizeof(known); i++) {
        int w =
            snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "", policies[i]->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    lt_err_set(err, LT_ENOTFOUND, 0, 0, "unknown policy '%.40s' (known: %s)", name, known);
    return NULL;
}

int lt__rank_check(const struct lt_cluster *c, const size_t *cand, size_t n, const double *scores,
                   struct lt_err *err)
{
    if (c == NULL || (n > 0 && (cand == NULL || scores == NULL)))
        return lt_err_set(err, LT_EINVAL, 0, 0, "rank: NULL cluster, candidates or scores");
    for (size_t k = 0; k < n; k++) {
        if (cand[k] >= c->n)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "rank: candidate %zu is machine %zu, cluster has %zu", k, cand[k],
                              c->n);
    }
    return 0;
}

static int check_task(const struct lt_policy *p, const struct lt_cluster *c,
                      const struct lt_task *t, struct lt_err *err)
{
    if (p == NULL || c == NULL || t == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "NULL policy, cluster or task");
    return lt_res_check_request(&t->req, "task", err);
}

int lt_policy_rank(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                   const size_t *cand, size_t n, struct lt_rng *rng, double *scores,
                   struct lt_err *err)
{
    return lt_policy_rank_flags(p, c, t, cand, n, 0, rng, scores, err);
}

int lt_policy_rank_flags(const struct lt_policy *p, const struct lt_cluster *c,
                         const struct lt_task *t, const size_t *cand, size_t n, unsigned flags,
                         struct lt_rng *rng, double *scores, struct lt_err *err)
{
    int rc = check_task(p, c, t, err);

    if (rc < 0)
        return rc;
    if ((flags & ~(unsigned)LT_RANK_REQUESTED) != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "rank: unknown flags 0x%x", flags);
    return p->rank(p, c, t, cand, n, flags, rng, scores, err);
}

int lt_policy_choose(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                     struct lt_rng *rng, size_t *out_machine, struct lt_err *err)
{
    return lt_policy_choose_hinted(p, c, t, rng, NULL, out_machine, err);
}

int lt_policy_choose_hinted(const struct lt_policy *p, const struct lt_cluster *c,
                            const struct lt_task *t, struct lt_rng *rng,
                            struct lt_choose_hint *hint, size_t *out_machine, struct lt_err *err)
{
    const struct lt_index *ix;
    int rc = check_task(p, c, t, err);

    if (rc < 0)
        return rc;
    if (out_machine == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "choose: NULL output");
    ix = lt__cluster_index(c, p);
    if (ix == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "policy '%s' is not attached to this cluster (call lt_policy_attach)",
                          p->name);
    return p->choose(p, ix, c, t, rng, hint, out_machine, err);
}

struct lt_choose_hint *lt_choose_hint_new(struct lt_err *err)
{
    struct lt_choose_hint *hint = lt_calloc(1, sizeof(*hint));

    if (hint == NULL)
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory allocating a choose hint");
    return hint;
}

void lt_choose_hint_free(struct lt_choose_hint *hint)
{
    lt_free(hint);
}

void lt_choose_hint_reset(struct lt_choose_hint *hint)
{
    if (hint != NULL)
        memset(hint, 0, sizeof(*hint));
}

int lt_policy_choose_sole(const struct lt_policy *p, const struct lt_cluster *c,
                          const struct lt_task *t, size_t m, struct lt_rng *rng,
                          size_t *out_machine, struct lt_err *err)
{
    struct lt_res f;
    int rc = check_task(p, c, t, err);

    if (rc < 0)
        return rc;
    if (out_machine == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "choose: NULL output");
    if (lt__cluster_index(c, p) == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "policy '%s' is not attached to this cluster (call lt_policy_attach)",
                          p->name);
    if (m >= c->n || !lt__rank_free(&c->m[m], &t->req, 0, &f))
        return lt_err_set(err, LT_EINVAL, 0, 0, "choose: the task does not fit machine %zu", m);
    if (p == &lt__random_policy) {
        if (rng == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "policy '%s' needs a random number generator",
                              p->name);
        lt__random_draws_sole(c->n, m, rng);
    }
    *out_machine = m;
    return 0;
}

size_t lt_scores_best(const size_t *cand, const double *scores, size_t n)
{
    size_t best = LT_NO_MACHINE;

    for (size_t k = 0; k < n; k++) {
        if (!(scores[k] < LT_SCORE_INFEASIBLE))
            continue;
        if (best == LT_NO_MACHINE || lt__better(scores[k], cand[k], scores[best], cand[best]))
            best = k;
    }
    return best;
}
