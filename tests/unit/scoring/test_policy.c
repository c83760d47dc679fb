/* test_policy.c -- the policy registry and the contract every policy shares: lookup by name,
 * attach before choose, argument validation in rank and choose, "fits nowhere" as an answer,
 * offline machines, empty clusters, lt_scores_best's tie rule, the rng requirement of
 * `random`, and seeded determinism of 200 choose+place decisions.
 *
 * Policy-specific scores are tested in test_fit.c, test_sos.c and test_firstfit.c; here
 * every check loops over all registered policies, so a new policy is covered without edits.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lt_cluster.h"
#include "lt_rng.h"
#include "lt_score.h"
#include "score_int.h" /* only for n_ix: attaching twice must not add an index */

static const char *const want_names[] = {
    "firstfit", "randfirstfit", "bestfit1", "bestfit2", "bestfit3", "bestfit4", "bestfit5",
    "epvm",     "epvm2",        "sos10",    "sos20",    "random",   "brfs-dot", "brfs-norm",
};

#define N_WANT (sizeof(want_names) / sizeof(want_names[0]))

/* Six machines, four configurations. */
static const struct lt_machine_spec six[] = {
    {"m0", {1.0, 1.0, 1.0}}, {"m1", {2.0, 1.0, 1.0}}, {"m2", {1.0, 2.0, 1.0}},
    {"m3", {2.0, 2.0, 2.0}}, {"m4", {1.0, 1.0, 1.0}}, {"m5", {4.0, 4.0, 4.0}},
};

#define N_SIX (sizeof(six) / sizeof(six[0]))

static void assert_check(const struct lt_cluster *c)
{
    struct lt_err err;
    int rc;

    lt_err_init(&err, NULL);
    rc = lt_cluster_check(c, &err);
    if (rc != 0)
        print_error("lt_cluster_check: %s\n", err.text);
    assert_int_equal(rc, 0);
}

static struct lt_cluster *make(const struct lt_machine_spec *ms, size_t n, uint64_t seed)
{
    struct lt_cluster_spec spec = {ms, n, {0.0, 0.0, 0.0}, seed};
    struct lt_err err;
    struct lt_cluster *c;

    lt_err_init(&err, NULL);
    c = lt_cluster_new(&spec, &err);
    if (c == NULL)
        print_error("lt_cluster_new: %s\n", err.text);
    assert_non_null(c);
    return c;
}

static void attach(const struct lt_policy *p, struct lt_cluster *c)
{
    struct lt_err err;
    int rc;

    lt_err_init(&err, NULL);
    rc = lt_policy_attach(p, c, &err);
    if (rc != 0)
        print_error("attach %s: %s\n", lt_policy_name(p), err.text);
    assert_int_equal(rc, 0);
    assert_check(c);
}

static struct lt_task task(int64_t id, double cpu, double mem, double disk)
{
    struct lt_task t;

    memset(&t, 0, sizeof(t));
    t.id = id;
    t.req.cpu = cpu;
    t.req.mem = mem;
    t.req.disk = disk;
    return t;
}

static bool contains(const char *text, const char *what)
{
    if (strstr(text, what) != NULL)
        return true;
    print_error("message '%s' lacks '%s'\n", text, what);
    return false;
}

/* ---- registry ---- */

static void test_policy_count_and_names_in_registration_order(void **state)
{
    (void)state;
    assert_int_equal(lt_policy_count(), 14);
    assert_int_equal(lt_policy_count(), N_WANT);
    for (size_t i = 0; i < N_WANT; i++) {
        assert_non_null(lt_policy_at(i));
        assert_string_equal(lt_policy_name(lt_policy_at(i)), want_names[i]);
    }
    assert_null(lt_policy_at(N_WANT));
    assert_null(lt_policy_at(SIZE_MAX));
}

static void test_policy_find_finds_each_policy(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_WANT; i++) {
        struct lt_err err;
        const struct lt_policy *p;

        lt_err_init(&err, NULL);
        p = lt_policy_find(want_names[i], &err);
        assert_ptr_equal(p, lt_policy_at(i));
        assert_int_equal(err.code, 0);
        assert_ptr_equal(lt_policy_find(want_names[i], NULL), p);
    }
}

static void test_policy_find_unknown_name_lists_every_known_name(void **state)
{
    const char *want_prefix = "unknown policy 'bestfit9' (known: firstfit, randfirstfit, ";
    char want[512];
    size_t used;
    struct lt_err err;

    (void)state;
    used = (size_t)snprintf(want, sizeof(want), "unknown policy 'bestfit9' (known: ");
    for (size_t i = 0; i < N_WANT; i++)
        used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%s", i ? ", " : "",
                                 want_names[i]);
    snprintf(want + used, sizeof(want) - used, ")");

    lt_err_init(&err, NULL);
    assert_null(lt_policy_find("bestfit9", &err));
    assert_int_equal(err.code, LT_ENOTFOUND);
    assert_memory_equal(err.text, want_prefix, strlen(want_prefix));
    /* R7: the message lists every known name, the last one included, and closes. */
    for (size_t i = 0; i < N_WANT; i++)
        assert_true(contains(err.text, want_names[i]));
    assert_string_equal(err.text, want);

    assert_null(lt_policy_find("", NULL));
    assert_null(lt_policy_find("FIRSTFIT", NULL));
    assert_null(lt_policy_find("firstfit ", NULL));
}

static void test_policy_find_null_name_is_einval(void **state)
{
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_null(lt_policy_find(NULL, &err));
    assert_int_equal(err.code, LT_EINVAL);
}

/* ---- attach ---- */

static void test_policy_choose_without_attach_is_einval_naming_policy(void **state)
{
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 1, LT_RNG_POLICY);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        char quoted[64];
        struct lt_err err;
        size_t m = 77;

        lt_err_init(&err, NULL);
        assert_int_equal(lt_policy_choose(p, c, &t, &rng, &m, &err), LT_EINVAL);
        assert_int_equal(err.code, LT_EINVAL);
        assert_int_equal(m, 77);
        snprintf(quoted, sizeof(quoted), "'%s'", lt_policy_name(p));
        assert_true(contains(err.text, quoted));
        assert_true(contains(err.text, "lt_policy_attach"));
    }
    lt_cluster_free(c);
}

static void test_policy_attach_twice_is_a_no_op(void **state)
{
    (void)state;
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        struct lt_cluster *c = make(six, N_SIX, 1);
        struct lt_task t = task(1, 1.5, 1.5, 1.5);
        struct lt_rng rng;
        size_t m = 0;

        attach(p, c);
        attach(p, c);
        assert_int_equal(c->n_ix, 1);
        lt_rng_init(&rng, 1, LT_RNG_POLICY);
        assert_int_equal(lt_policy_choose(p, c, &t, &rng, &m, NULL), 0);
        /* Only m3 (2,2,2) and m5 (4,4,4) have room for (1.5, 1.5, 1.5). */
        assert_true(m == 3 || m == 5);
        lt_cluster_free(c);
    }
}

static void test_policy_attach_several_policies_to_one_cluster(void **state)
{
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_task t = task(1, 1.5, 1.5, 1.5);
    struct lt_err err;
    size_t pid;

    (void)state;
    for (size_t i = 0; i < lt_policy_count(); i++)
        attach(lt_policy_at(i), c);
    assert_int_equal(c->n_ix, lt_policy_count());
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_place(c, 5, &t, 0, &pid, &err), 0);
    assert_check(c);
    assert_int_equal(lt_cluster_remove(c, pid, &err), 0);
    assert_check(c);
    lt_cluster_free(c);
}

/* ---- argument validation ---- */

static void test_policy_rejects_nan_negative_and_infinite_requests(void **state)
{
    const double bad[] = {NAN, -1.0, -0x1.0p-70, INFINITY, -INFINITY};
    const size_t cand[] = {0, 1, 2, 3, 4, 5};
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 1, LT_RNG_POLICY);
    for (size_t i = 0; i < lt_policy_count(); i++)
        attach(lt_policy_at(i), c);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);

        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
            for (int dim = 0; dim < 3; dim++) {
                struct lt_task t = task(1, 0.5, 0.5, 0.5);
                double *x = dim == 0 ? &t.req.cpu : dim == 1 ? &t.req.mem : &t.req.disk;
                double scores[N_SIX];
                struct lt_err err;
                size_t m = 77;

                *x = bad[k];
                lt_err_init(&err, NULL);
                assert_int_equal(lt_policy_rank(p, c, &t, cand, N_SIX, &rng, scores, &err),
                                 LT_EINVAL);
                assert_int_equal(err.code, LT_EINVAL);
                assert_true(contains(err.text, "request"));
                lt_err_init(&err, NULL);
                assert_int_equal(lt_policy_choose(p, c, &t, &rng, &m, &err), LT_EINVAL);
                assert_int_equal(err.code, LT_EINVAL);
                assert_true(contains(err.text, "request"));
                assert_int_equal(m, 77);
            }
        }
    }
    assert_check(c);
    lt_cluster_free(c);
}

static void test_policy_rank_rejects_out_of_range_candidate(void **state)
{
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    const size_t cand[] = {0, 6, 1};
    const size_t far[] = {SIZE_MAX};
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 1, LT_RNG_POLICY);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        double scores[3];
        struct lt_err err;

        lt_err_init(&err, NULL);
        assert_int_equal(lt_policy_rank(p, c, &t, cand, 3, &rng, scores, &err), LT_EINVAL);
        assert_int_equal(err.code, LT_EINVAL);
        assert_true(contains(err.text, "candidate 1 is machine 6"));
        assert_int_equal(lt_policy_rank(p, c, &t, far, 1, &rng, scores, NULL), LT_EINVAL);
    }
    lt_cluster_free(c);
}

static void test_policy_rejects_null_arguments(void **state)
{
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    const size_t cand[] = {0, 1};
    double scores[2];
    struct lt_rng rng;
    size_t m;

    (void)state;
    lt_rng_init(&rng, 1, LT_RNG_POLICY);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);

        attach(p, c);
        assert_int_equal(lt_policy_rank(p, c, NULL, cand, 2, &rng, scores, NULL), LT_EINVAL);
        assert_int_equal(lt_policy_rank(p, NULL, &t, cand, 2, &rng, scores, NULL), LT_EINVAL);
        assert_int_equal(lt_policy_rank(p, c, &t, NULL, 2, &rng, scores, NULL), LT_EINVAL);
        assert_int_equal(lt_policy_rank(p, c, &t, cand, 2, &rng, NULL, NULL), LT_EINVAL);
        assert_int_equal(lt_policy_choose(p, c, NULL, &rng, &m, NULL), LT_EINVAL);
        assert_int_equal(lt_policy_choose(p, c, &t, &rng, NULL, NULL), LT_EINVAL);
        assert_int_equal(lt_policy_choose(p, NULL, &t, &rng, &m, NULL), LT_EINVAL);
    }
    assert_int_equal(lt_policy_rank(NULL, c, &t, cand, 2, &rng, scores, NULL), LT_EINVAL);
    assert_int_equal(lt_policy_choose(NULL, c, &t, &rng, &m, NULL), LT_EINVAL);
    assert_int_equal(lt_policy_attach(NULL, c, NULL), LT_EINVAL);
    assert_int_equal(lt_policy_attach(lt_policy_at(0), NULL, NULL), LT_EINVAL);
    lt_cluster_free(c);
}

/* ---- answers that are not errors ---- */

static void test_policy_task_that_fits_nowhere_is_no_machine(void **state)
{
    /* (4.5, 0.5, 0.5) exceeds every cpu capacity; (0.5, 0.5, 4.5) every disk. */
    struct lt_task wide = task(1, 4.5, 0.5, 0.5), deep = task(2, 0.5, 0.5, 4.5);
    const struct lt_task *tasks[] = {&wide, &deep};
    const size_t cand[] = {5, 0, 3, 1, 2, 4};
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 1, LT_RNG_POLICY);
    for (size_t i = 0; i < lt_policy_count(); i++)
        attach(lt_policy_at(i), c);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);

        for (size_t k = 0; k < 2; k++) {
            double scores[N_SIX];
            struct lt_err err;
            size_t m = 0;

            lt_err_init(&err, NULL);
            assert_int_equal(lt_policy_choose(p, c, tasks[k], &rng, &m, &err), 0);
            assert_int_equal(m, LT_NO_MACHINE);
            assert_int_equal(err.code, 0);
            assert_int_equal(lt_policy_rank(p, c, tasks[k], cand, N_SIX, &rng, scores, &err), 0);
            assert_int_equal(err.code, 0);
            for (size_t j = 0; j < N_SIX; j++)
                assert_true(isinf(scores[j]) && scores[j] > 0.0);
            assert_int_equal(lt_scores_best(cand, scores, N_SIX), LT_NO_MACHINE);
        }
    }
    lt_cluster_free(c);
}

static void test_policy_never_chooses_offline_machine(void **state)
{
    const size_t cand[] = {0, 1, 2, 3, 4, 5};
    struct lt_rng work;

    (void)state;
    lt_rng_init(&work, 5, LT_RNG_WORKLOAD);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        struct lt_cluster *c = make(six, N_SIX, 3);
        struct lt_task only5 = task(0, 3.0, 3.0, 3.0); /* fits on m5 only */
        struct lt_rng rng;
        struct lt_err err;
        size_t chosen[N_SIX] = {0};
        size_t m = 0;

        lt_rng_init(&rng, 9, LT_RNG_POLICY);
        lt_err_init(&err, NULL);
        attach(p, c);
        /* m5 is the only machine for some tasks and the best for many policies. */
        assert_int_equal(lt_cluster_set_online(c, 5, false, &err), 0);
        assert_int_equal(lt_cluster_set_online(c, 0, false, &err), 0);
        assert_check(c);
        assert_int_equal(lt_policy_choose(p, c, &only5, &rng, &m, &err), 0);
        assert_int_equal(m, LT_NO_MACHINE);
        for (int k = 0; k < 60; k++) {
            struct lt_task t =
                task(k, lt_rng_uniform(&work), lt_rng_uniform(&work), lt_rng_uniform(&work));
            double scores[N_SIX];

            assert_int_equal(lt_policy_choose(p, c, &t, &rng, &m, &err), 0);
            assert_true(m < N_SIX);
            assert_true(m != 0 && m != 5);
            chosen[m]++;
            assert_int_equal(lt_policy_rank(p, c, &t, cand, N_SIX, &rng, scores, &err), 0);
            assert_true(isinf(scores[0]) && isinf(scores[5]));
            assert_int_not_equal(lt_scores_best(cand, scores, N_SIX), 0);
            assert_int_not_equal(lt_scores_best(cand, scores, N_SIX), 5);
        }
        assert_int_equal(chosen[0] + chosen[5], 0);
        assert_int_equal(err.code, 0);
        lt_cluster_free(c);
    }
}

/* 200 equal machines, all but machine m loaded so that a task fits m only: for every policy,
 * lt_policy_choose_sole(m) answers what choose answers and leaves the generator in the same
 * state (random: up to 64 rejection draws over 200 machines, often all missing); a machine
 * the task does not fit is LT_EINVAL. */
static void test_policy_choose_sole_equals_choose(void **state)
{
    enum { N = 200 };
    struct lt_machine_spec ms[N];
    char names[N][8];

    (void)state;
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "m%zu", i);
        ms[i] = (struct lt_machine_spec){names[i], {1.0, 1.0, 1.0}};
    }
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        struct lt_cluster *c = make(ms, N, 3);
        struct lt_task load = task(0, 0.6, 0.6, 0.6), t = task(1, 0.5, 0.5, 0.5);
        struct lt_rng a, b;
        struct lt_err err;
        size_t pid[N], m = 37, x, y;

        lt_err_init(&err, NULL);
        attach(p, c);
        for (size_t k = 0; k < N; k++)
            assert_int_equal(lt_cluster_place(c, k, &load, 0, &pid[k], &err), 0);
        assert_int_equal(lt_cluster_remove(c, pid[m], &err), 0);
        for (uint64_t seed = 1; seed <= 40; seed++) {
            lt_rng_init(&a, seed, LT_RNG_POLICY);
            b = a;
            assert_int_equal(lt_policy_choose(p, c, &t, &a, &x, &err), 0);
            assert_int_equal(lt_policy_choose_sole(p, c, &t, m, &b, &y, &err), 0);
            assert_int_equal(x, m);
            assert_int_equal(y, m);
            assert_memory_equal(&a, &b, sizeof(a));
        }
        assert_int_equal(lt_policy_choose_sole(p, c, &t, m + 1, &b, &y, &err), LT_EINVAL);
        assert_true(contains(err.text, "does not fit machine 38"));
        lt_cluster_free(c);
    }
}

static void test_policy_empty_cluster_gives_no_machine(void **state)
{
    struct lt_cluster_spec spec = {NULL, 0, {1.0, 1.0, 1.0}, 1};
    struct lt_task t = task(1, 0.0, 0.0, 0.0);
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 1, LT_RNG_POLICY);
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        struct lt_cluster *c = lt_cluster_new(&spec, NULL);
        struct lt_err err;
        double score = 0.0;
        size_t none = 0, m = 0;

        assert_non_null(c);
        attach(p, c);
        lt_err_init(&err, NULL);
        assert_int_equal(lt_policy_choose(p, c, &t, &rng, &m, &err), 0);
        assert_int_equal(m, LT_NO_MACHINE);
        assert_int_equal(lt_policy_rank(p, c, &t, &none, 0, &rng, &score, &err), 0);
        assert_int_equal(lt_scores_best(&none, &score, 0), LT_NO_MACHINE);
        assert_int_equal(err.code, 0);
        lt_cluster_free(c);
    }
}

/* ---- lt_scores_best ---- */

static void test_policy_scores_best_breaks_ties_by_lowest_machine_index(void **state)
{
    const size_t cand[] = {5, 2, 9};
    const double equal[] = {0.25, 0.25, 0.25};
    const double lower_wins[] = {0.25, 0.5, 0.125};
    const double skip[] = {0.25, LT_SCORE_INFEASIBLE, 0.25};
    const double none[] = {LT_SCORE_INFEASIBLE, LT_SCORE_INFEASIBLE, LT_SCORE_INFEASIBLE};
    const double neg[] = {-1.0, -2.0, -2.0};
    const size_t dup[] = {7, 3, 3, 1};
    const double dup_scores[] = {1.0, 1.0, 1.0, 2.0};

    (void)state;
    assert_int_equal(lt_scores_best(cand, equal, 3), 1); /* machine 2 */
    assert_int_equal(lt_scores_best(cand, lower_wins, 3), 2);
    assert_int_equal(lt_scores_best(cand, skip, 3), 0); /* machine 2 is infeasible */
    assert_int_equal(lt_scores_best(cand, none, 3), LT_NO_MACHINE);
    assert_int_equal(lt_scores_best(cand, none, 0), LT_NO_MACHINE);
    assert_int_equal(lt_scores_best(cand, neg, 3), 1); /* -2 on machines 2 and 9: 2 */
    /* A duplicated candidate: the first position of the lowest machine wins. */
    assert_int_equal(lt_scores_best(dup, dup_scores, 4), 1);
}

/* ---- random needs an rng ---- */

static void test_policy_random_without_rng_is_einval(void **state)
{
    const struct lt_policy *p = lt_policy_find("random", NULL);
    struct lt_cluster *c = make(six, N_SIX, 1);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    const size_t cand[] = {0, 1, 2};
    double scores[3];
    struct lt_err err;
    size_t m = 77;

    (void)state;
    assert_non_null(p);
    attach(p, c);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 3, NULL, scores, &err), LT_EINVAL);
    assert_int_equal(err.code, LT_EINVAL);
    assert_true(contains(err.text, "'random'"));
    lt_err_init(&err, NULL);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, &err), LT_EINVAL);
    assert_int_equal(err.code, LT_EINVAL);
    assert_true(contains(err.text, "'random'"));
    assert_int_equal(m, 77);
    lt_cluster_free(c);
}

static void test_policy_deterministic_policies_accept_null_rng(void **state)
{
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    const size_t cand[] = {0, 1, 2, 3, 4, 5};

    (void)state;
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        struct lt_cluster *c;
        double scores[N_SIX];
        size_t m = 77;

        if (strcmp(lt_policy_name(p), "random") == 0)
            continue;
        c = make(six, N_SIX, 1);
        attach(p, c);
        assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, NULL), 0);
        assert_true(m < N_SIX);
        assert_int_equal(lt_policy_rank(p, c, &t, cand, N_SIX, NULL, scores, NULL), 0);
        assert_int_equal(lt_scores_best(cand, scores, N_SIX), m);
        lt_cluster_free(c);
    }
}

/* LT_RANK_REQUESTED: the same scores and draws as plain rank where nothing is overcommitted
 * (or the task requests every resource); on m1, overcommitted in cpu, a task that requests no
 * cpu is ranked (plain rank: infeasible) and every other candidate keeps its plain score.
 * Unknown flags are refused. */
static void test_policy_rank_requested_differs_only_on_overcommitted_machines(void **state)
{
    struct lt_task all = task(1, 0.25, 0.25, 0.25), no_cpu = task(2, 0.0, 0.25, 0.0);
    struct lt_task hog = task(3, 3.0, 0.5, 0.5);
    const size_t cand[] = {0, 1, 2, 3, 4, 5};

    (void)state;
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        bool draws = strcmp(lt_policy_name(p), "random") == 0;
        struct lt_cluster *c = make(six, N_SIX, 1);
        double plain[N_SIX], req[N_SIX];
        struct lt_rng r1, r2;
        struct lt_err err;
        size_t pid;

        lt_rng_init(&r1, 9, LT_RNG_POLICY);
        lt_rng_init(&r2, 9, LT_RNG_POLICY);
        assert_int_equal(lt_policy_rank(p, c, &no_cpu, cand, N_SIX, &r1, plain, NULL), 0);
        assert_int_equal(
            lt_policy_rank_flags(p, c, &no_cpu, cand, N_SIX, LT_RANK_REQUESTED, &r2, req, NULL), 0);
        assert_memory_equal(plain, req, sizeof(plain));
        assert_int_equal(lt_cluster_place(c, 1, &hog, LT_PLACE_FORCE, &pid, NULL), 0);
        assert_int_equal(lt_policy_rank(p, c, &all, cand, N_SIX, &r1, plain, NULL), 0);
        assert_int_equal(
            lt_policy_rank_flags(p, c, &all, cand, N_SIX, LT_RANK_REQUESTED, &r2, req, NULL), 0);
        assert_memory_equal(plain, req, sizeof(plain));
        assert_int_equal(lt_policy_rank(p, c, &no_cpu, cand, N_SIX, &r1, plain, NULL), 0);
        assert_int_equal(
            lt_policy_rank_flags(p, c, &no_cpu, cand, N_SIX, LT_RANK_REQUESTED, &r2, req, NULL), 0);
        assert_false(isfinite(plain[1]));
        if (!isfinite(req[1]))
            fail_msg("%s: m1 is infeasible for a task that requests no cpu", lt_policy_name(p));
        for (size_t k = 0; !draws && k < N_SIX; k++)
            if (k != 1)
                assert_memory_equal(&plain[k], &req[k], sizeof(plain[k]));
        lt_err_init(&err, NULL);
        assert_int_equal(lt_policy_rank_flags(p, c, &all, cand, N_SIX, 2, &r2, req, &err),
                         LT_EINVAL);
        lt_cluster_free(c);
    }
}

/* ---- determinism ---- */

#define DET_MACHINES 24
#define DET_STEPS    200

struct det_world {
    struct lt_cluster *c;
    struct lt_rng policy_rng;
    struct lt_rng work_rng;
    size_t live[DET_STEPS];
    size_t n_live;
};

static void det_init(struct det_world *w, const struct lt_policy *p,
                     const struct lt_machine_spec *ms)
{
    memset(w, 0, sizeof(*w));
    w->c = make(ms, DET_MACHINES, 2011);
    attach(p, w->c);
    lt_rng_init(&w->policy_rng, 2011, LT_RNG_POLICY);
    lt_rng_init(&w->work_rng, 2011, LT_RNG_WORKLOAD);
}

/* One decision: maybe remove a task, then draw a task, choose, place. Returns the choice. */
static size_t det_step(struct det_world *w, const struct lt_policy *p, int step)
{
    struct lt_task t;
    struct lt_err err;
    size_t m = 0, pid;

    lt_err_init(&err, NULL);
    if (w->n_live > 0 && lt_rng_below(&w->work_rng, 3) == 0) {
        size_t k = (size_t)lt_rng_below(&w->work_rng, w->n_live);
        assert_int_equal(lt_cluster_remove(w->c, w->live[k], &err), 0);
        w->live[k] = w->live[--w->n_live];
    }
    t = task(step, 0.5 * lt_rng_uniform(&w->work_rng), 0.5 * lt_rng_uniform(&w->work_rng),
             0.25 * lt_rng_uniform(&w->work_rng));
    assert_int_equal(lt_policy_choose(p, w->c, &t, &w->policy_rng, &m, &err), 0);
    if (m != LT_NO_MACHINE) {
        assert_true(lt_cluster_fits(w->c, m, &t.req));
        assert_int_equal(lt_cluster_place(w->c, m, &t, 0, &pid, &err), 0);
        w->live[w->n_live++] = pid;
    }
    if (err.code != 0)
        print_error("%s: %s\n", lt_policy_name(p), err.text);
    assert_int_equal(err.code, 0);
    return m;
}

static void test_policy_same_seeds_give_same_200_decisions(void **state)
{
    struct lt_machine_spec ms[DET_MACHINES];
    char names[DET_MACHINES][16];

    (void)state;
    for (size_t i = 0; i < DET_MACHINES; i++) {
        snprintf(names[i], sizeof(names[i]), "node-%02zu", i);
        ms[i].name = names[i];
        ms[i].cap.cpu = 1.0 + 0.5 * (double)(i % 3);
        ms[i].cap.mem = 1.0 + 0.5 * (double)(i % 4);
        ms[i].cap.disk = 1.0;
    }
    for (size_t i = 0; i < lt_policy_count(); i++) {
        const struct lt_policy *p = lt_policy_at(i);
        struct det_world a, b;
        size_t placed = 0, distinct = 0;
        bool used[DET_MACHINES] = {false};

        det_init(&a, p, ms);
        det_init(&b, p, ms);
        for (int s = 0; s < DET_STEPS; s++) {
            size_t ma = det_step(&a, p, s), mb = det_step(&b, p, s);

            if (ma != mb)
                print_error("%s: step %d chose %zu and %zu\n", lt_policy_name(p), s, ma, mb);
            assert_int_equal(ma, mb);
            if (ma != LT_NO_MACHINE) {
                placed++;
                distinct += !used[ma];
                used[ma] = true;
            }
            if (s % 50 == 0) {
                assert_check(a.c);
                assert_check(b.c);
            }
        }
        /* The run exercised real decisions: most tasks were placed, on several machines. */
        assert_true(placed > DET_STEPS / 2);
        assert_true(distinct >= 3);
        assert_check(a.c);
        lt_cluster_free(a.c);
        lt_cluster_free(b.c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_count_and_names_in_registration_order),
        cmocka_unit_test(test_policy_find_finds_each_policy),
        cmocka_unit_test(test_policy_find_unknown_name_lists_every_known_name),
        cmocka_unit_test(test_policy_find_null_name_is_einval),
        cmocka_unit_test(test_policy_choose_without_attach_is_einval_naming_policy),
        cmocka_unit_test(test_policy_attach_twice_is_a_no_op),
        cmocka_unit_test(test_policy_attach_several_policies_to_one_cluster),
        cmocka_unit_test(test_policy_rejects_nan_negative_and_infinite_requests),
        cmocka_unit_test(test_policy_rank_rejects_out_of_range_candidate),
        cmocka_unit_test(test_policy_rank_requested_differs_only_on_overcommitted_machines),
        cmocka_unit_test(test_policy_rejects_null_arguments),
        cmocka_unit_test(test_policy_task_that_fits_nowhere_is_no_machine),
        cmocka_unit_test(test_policy_never_chooses_offline_machine),
        cmocka_unit_test(test_policy_choose_sole_equals_choose),
        cmocka_unit_test(test_policy_empty_cluster_gives_no_machine),
        cmocka_unit_test(test_policy_scores_best_breaks_ties_by_lowest_machine_index),
        cmocka_unit_test(test_policy_random_without_rng_is_einval),
        cmocka_unit_test(test_policy_deterministic_policies_accept_null_rng),
        cmocka_unit_test(test_policy_same_seeds_give_same_200_decisions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
