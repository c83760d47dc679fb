/* test_firstfit.c -- firstfit, randfirstfit and random (firstfit.c): lowest index that fits,
 * a random order that is a function of (cluster seed, machine name), and uniform random
 * placement with its 64-draw rejection protocol and counting fallback.
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

#define MAX_M 256

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

static const struct lt_policy *policy(const char *name, struct lt_cluster *c)
{
    const struct lt_policy *p = lt_policy_find(name, NULL);
    struct lt_err err;

    assert_non_null(p);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_policy_attach(p, c, &err), 0);
    assert_check(c);
    return p;
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

static size_t choose(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                     struct lt_rng *rng)
{
    struct lt_err err;
    size_t m = 12345;
    int rc;

    lt_err_init(&err, NULL);
    rc = lt_policy_choose(p, c, t, rng, &m, &err);
    if (rc != 0)
        print_error("choose %s: %s\n", lt_policy_name(p), err.text);
    assert_int_equal(rc, 0);
    assert_true(m == LT_NO_MACHINE || m < lt_cluster_size(c));
    return m;
}

/* Scores machines 0..n-1 in index order into scores. */
static void rank_all(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                     struct lt_rng *rng, double *scores)
{
    size_t cand[MAX_M], n = lt_cluster_size(c);
    struct lt_err err;
    int rc;

    assert_true(n <= MAX_M);
    for (size_t i = 0; i < n; i++)
        cand[i] = i;
    lt_err_init(&err, NULL);
    rc = lt_policy_rank(p, c, t, cand, n, rng, scores, &err);
    if (rc != 0)
        print_error("rank %s: %s\n", lt_policy_name(p), err.text);
    assert_int_equal(rc, 0);
}

static size_t place(struct lt_cluster *c, size_t i, const struct lt_task *t)
{
    struct lt_err err;
    size_t pid = 0;

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_place(c, i, t, 0, &pid, &err), 0);
    assert_check(c);
    return pid;
}

/* ---- firstfit ---- */

static void test_firstfit_chooses_lowest_index_that_fits(void **state)
{
    static const struct lt_machine_spec ms[] = {
        {"full", {1.0, 1.0, 1.0}},
        {"low-mem", {2.0, 0.5, 2.0}},
        {"fits", {2.0, 2.0, 2.0}},
        {"fits-too", {4.0, 4.0, 4.0}},
    };
    struct lt_cluster *c = make(ms, 4, 1);
    const struct lt_policy *p = policy("firstfit", c);
    struct lt_task filler = task(1, 1.0, 1.0, 1.0), t = task(2, 0.5, 1.0, 0.5);
    double scores[4];
    size_t pid;

    (void)state;
    /* Empty cluster: machine 0 fits and wins. */
    assert_int_equal(choose(p, c, &t, NULL), 0);
    pid = place(c, 0, &filler);
    assert_int_equal(choose(p, c, &t, NULL), 2);
    rank_all(p, c, &t, NULL, scores);
    assert_true(isinf(scores[0]));
    assert_true(isinf(scores[1]));
    lt_assert_near(scores[2], 2.0, 0.0); /* firstfit's score is the machine index */
    lt_assert_near(scores[3], 3.0, 0.0);
    /* In a candidate list of another order, the score is still the machine index. */
    {
        const size_t cand[] = {3, 1, 2, 0};
        double s[4];

        assert_int_equal(lt_policy_rank(p, c, &t, cand, 4, NULL, s, NULL), 0);
        lt_assert_near(s[0], 3.0, 0.0);
        assert_true(isinf(s[1]));
        lt_assert_near(s[2], 2.0, 0.0);
        assert_true(isinf(s[3]));
        assert_int_equal(lt_scores_best(cand, s, 4), 2);
    }
    /* A removal frees machine 0: it is chosen again. */
    {
        struct lt_err err;

        lt_err_init(&err, NULL);
        assert_int_equal(lt_cluster_remove(c, pid, &err), 0);
        assert_check(c);
    }
    assert_int_equal(choose(p, c, &t, NULL), 0);
    lt_cluster_free(c);
}

static void test_firstfit_follows_fill_order_across_machines(void **state)
{
    struct lt_machine_spec ms[40];
    char names[40][8];
    struct lt_cluster *c;
    const struct lt_policy *p;
    struct lt_task quarter = task(1, 0.25, 0.25, 0.25);

    (void)state;
    for (size_t i = 0; i < 40; i++) {
        snprintf(names[i], sizeof(names[i]), "n%zu", i);
        ms[i].name = names[i];
        ms[i].cap.cpu = ms[i].cap.mem = ms[i].cap.disk = 1.0;
    }
    c = make(ms, 40, 1);
    p = policy("firstfit", c);
    /* Four quarters fill a machine exactly; then the next index takes over. */
    for (size_t k = 0; k < 160; k++) {
        size_t m = choose(p, c, &quarter, NULL);
        assert_int_equal(m, k / 4);
        (void)place(c, m, &quarter);
    }
    assert_int_equal(choose(p, c, &quarter, NULL), LT_NO_MACHINE);
    lt_cluster_free(c);
}

/* ---- randfirstfit ---- */

static const char *const rff_names[] = {"alpha", "bravo",   "charlie", "delta",
                                        "echo",  "foxtrot", "golf",    "hotel"};

#define N_RFF 8

/* Builds the eight machines (all (1,1,1)) in the order perm[] and returns the name order by
 * randfirstfit score, as indexes into rff_names, in out[]; also each name's score. */
static void rff_order(uint64_t seed, const size_t *perm, size_t *out, double *score_of_name)
{
    struct lt_machine_spec ms[N_RFF];
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    double scores[N_RFF];
    struct lt_cluster *c;
    const struct lt_policy *p;
    bool taken[N_RFF] = {false};

    for (size_t i = 0; i < N_RFF; i++) {
        ms[i].name = rff_names[perm[i]];
        ms[i].cap.cpu = ms[i].cap.mem = ms[i].cap.disk = 1.0;
    }
    c = make(ms, N_RFF, seed);
    p = policy("randfirstfit", c);
    rank_all(p, c, &t, NULL, scores);
    for (size_t i = 0; i < N_RFF; i++) {
        assert_true(scores[i] >= 0.0 && scores[i] < 1.0);
        score_of_name[perm[i]] = scores[i];
    }
    /* Selection sort by score (ties by name index, which never happen for these names). */
    for (size_t k = 0; k < N_RFF; k++) {
        size_t best = N_RFF;
        for (size_t j = 0; j < N_RFF; j++) {
            if (!taken[j] && (best == N_RFF || score_of_name[j] < score_of_name[best]))
                best = j;
        }
        taken[best] = true;
        out[k] = best;
    }
    lt_cluster_free(c);
}

static void test_randfirstfit_order_depends_on_seed_and_name_not_position(void **state)
{
    const size_t ident[N_RFF] = {0, 1, 2, 3, 4, 5, 6, 7};
    const size_t shuffled[N_RFF] = {5, 2, 7, 0, 3, 6, 1, 4};
    size_t order_a[N_RFF], order_b[N_RFF], order_other[N_RFF];
    double score_a[N_RFF], score_b[N_RFF], score_other[N_RFF];
    bool same_order = true;

    (void)state;
    rff_order(7, ident, order_a, score_a);
    rff_order(7, shuffled, order_b, score_b);
    for (size_t k = 0; k < N_RFF; k++) {
        assert_int_equal(order_a[k], order_b[k]);
        lt_assert_near(score_a[k], score_b[k], 0.0); /* same key for the same name */
    }
    /* Another seed gives another order for these eight names (8! orders; checked once). */
    rff_order(8, ident, order_other, score_other);
    for (size_t k = 0; k < N_RFF; k++)
        same_order &= order_a[k] == order_other[k];
    assert_false(same_order);
    /* The order is not simply the index order either. */
    {
        bool by_index = true;
        for (size_t k = 0; k < N_RFF; k++)
            by_index &= order_a[k] == k;
        assert_false(by_index);
    }
}

static void test_randfirstfit_chooses_fitting_machine_with_smallest_key(void **state)
{
    struct lt_machine_spec ms[N_RFF];
    struct lt_task t = task(1, 0.75, 0.75, 0.75), fill = task(2, 1.0, 1.0, 1.0);
    double keys[N_RFF];
    struct lt_cluster *c;
    const struct lt_policy *p;
    bool full[N_RFF] = {false};

    (void)state;
    for (size_t i = 0; i < N_RFF; i++) {
        ms[i].name = rff_names[i];
        /* Machines 1 and 4 are too small for t: they never win. */
        ms[i].cap.cpu = ms[i].cap.mem = ms[i].cap.disk = (i == 1 || i == 4) ? 0.5 : 1.0;
    }
    c = make(ms, N_RFF, 7);
    p = policy("randfirstfit", c);
    {
        struct lt_task zero = task(0, 0.0, 0.0, 0.0);
        rank_all(p, c, &zero, NULL, keys); /* every machine fits: scores are the keys */
    }
    full[1] = full[4] = true;
    /* Fill the winner each time: the choices walk the fitting machines in key order. */
    for (size_t k = 0; k < N_RFF - 2; k++) {
        double scores[N_RFF];
        size_t want = N_RFF, cand[N_RFF], m;

        for (size_t i = 0; i < N_RFF; i++) {
            cand[i] = i;
            if (!full[i] && (want == N_RFF || keys[i] < keys[want]))
                want = i;
        }
        m = choose(p, c, &t, NULL);
        assert_int_equal(m, want);
        rank_all(p, c, &t, NULL, scores);
        assert_int_equal(lt_scores_best(cand, scores, N_RFF), want);
        for (size_t i = 0; i < N_RFF; i++) {
            if (full[i])
                assert_true(isinf(scores[i]));
            else
                lt_assert_near(scores[i], keys[i], 0.0);
        }
        (void)place(c, m, &fill);
        full[m] = true;
    }
    assert_int_equal(choose(p, c, &t, NULL), LT_NO_MACHINE);
    lt_cluster_free(c);
}

static void test_randfirstfit_keys_survive_adding_machines(void **state)
{
    struct lt_machine_spec ms[N_RFF];
    struct lt_machine_spec extra = {"india", {1.0, 1.0, 1.0}};
    struct lt_task zero = task(0, 0.0, 0.0, 0.0);
    double before[N_RFF + 1], after[N_RFF + 1];
    struct lt_cluster *c;
    const struct lt_policy *p;
    size_t idx;

    (void)state;
    for (size_t i = 0; i < N_RFF; i++) {
        ms[i].name = rff_names[i];
        ms[i].cap.cpu = ms[i].cap.mem = ms[i].cap.disk = 1.0;
    }
    c = make(ms, N_RFF, 99);
    p = policy("randfirstfit", c);
    rank_all(p, c, &zero, NULL, before);
    assert_int_equal(lt_cluster_add_machine(c, &extra, &idx, NULL), 0);
    assert_check(c);
    rank_all(p, c, &zero, NULL, after);
    for (size_t i = 0; i < N_RFF; i++)
        lt_assert_near(after[i], before[i], 0.0);
    /* The choice is still the smallest key among all nine. */
    {
        size_t cand[N_RFF + 1];
        for (size_t i = 0; i <= N_RFF; i++)
            cand[i] = i;
        assert_int_equal(choose(p, c, &zero, NULL), lt_scores_best(cand, after, N_RFF + 1));
    }
    lt_cluster_free(c);
}

/* ---- random ---- */

static void test_random_is_uniform_over_identical_machines(void **state)
{
    static const struct lt_machine_spec ms[] = {
        {"r0", {1.0, 1.0, 1.0}}, {"r1", {1.0, 1.0, 1.0}}, {"r2", {1.0, 1.0, 1.0}},
        {"r3", {1.0, 1.0, 1.0}}, {"r4", {1.0, 1.0, 1.0}}, {"r5", {1.0, 1.0, 1.0}},
    };
    const size_t draws = 30000;
    struct lt_cluster *c = make(ms, 6, 1);
    const struct lt_policy *p = policy("random", c);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    size_t count[6] = {0};
    double expect = (double)draws / 6.0, chi2 = 0.0;
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 4242, LT_RNG_POLICY);
    for (size_t k = 0; k < draws; k++) {
        struct lt_rng before = rng;

        count[choose(p, c, &t, &rng)]++;
        /* Every machine fits, so the first rejection draw always hits: one draw each. */
        (void)lt_rng_next(&before);
        assert_memory_equal(&before, &rng, sizeof(rng));
    }
    for (size_t i = 0; i < 6; i++) {
        double d = (double)count[i] - expect;
        chi2 += d * d / expect;
    }
    /* 5 degrees of freedom: P(chi2 > 30) ~ 1.5e-5 under uniformity; a policy that favoured
     * one machine by 5% (250 extra choices) would add ~12. Fixed seed: deterministic. */
    if (!(chi2 < 30.0))
        print_error("chi2 = %g\n", chi2);
    assert_true(chi2 < 30.0);
    lt_cluster_free(c);
}

/* Draws made between two states of one generator, or 0 if more than max. */
static size_t draws_between(struct lt_rng before, const struct lt_rng *after, size_t max)
{
    for (size_t k = 1; k <= max; k++) {
        (void)lt_rng_next(&before);
        if (memcmp(&before, after, sizeof(before)) == 0)
            return k;
    }
    return 0;
}

static void test_random_with_one_fitting_machine_of_200_always_picks_it(void **state)
{
    struct lt_machine_spec ms[200];
    char names[200][8];
    const size_t big = 137;
    struct lt_task t = task(1, 1.5, 1.5, 1.5);
    struct lt_cluster *c;
    const struct lt_policy *p;
    struct lt_rng rng;
    size_t fallbacks = 0;
    double scores[200];

    (void)state;
    for (size_t i = 0; i < 200; i++) {
        snprintf(names[i], sizeof(names[i]), "s%zu", i);
        ms[i].name = names[i];
        ms[i].cap.cpu = ms[i].cap.mem = ms[i].cap.disk = i == big ? 2.0 : 1.0;
    }
    c = make(ms, 200, 1);
    p = policy("random", c);
    lt_rng_init(&rng, 77, LT_RNG_POLICY);
    for (size_t k = 0; k < 300; k++) {
        struct lt_rng before = rng;
        size_t used;

        assert_int_equal(choose(p, c, &t, &rng), big);
        /* 1..64 draws when a rejection draw hits; 64 misses + one count draw = 65. */
        used = draws_between(before, &rng, 70);
        assert_true(used >= 1 && used <= 65);
        fallbacks += used == 65;
    }
    /* P(64 misses) = (199/200)^64 ~ 0.73: the fallback ran in most decisions, and a
     * rejection draw hit in the others. */
    assert_true(fallbacks > 150);
    assert_true(fallbacks < 270);

    rank_all(p, c, &t, &rng, scores);
    for (size_t i = 0; i < 200; i++) {
        if (i == big)
            lt_assert_near(scores[i], 0.0, 0.0);
        else
            assert_true(isinf(scores[i]));
    }
    lt_cluster_free(c);
}

static void test_random_rank_scores_chosen_zero_and_other_feasible_one(void **state)
{
    static const struct lt_machine_spec ms[] = {
        {"a", {1.0, 1.0, 1.0}}, {"b", {0.25, 1.0, 1.0}}, {"c", {1.0, 1.0, 1.0}},
        {"d", {1.0, 1.0, 1.0}}, {"e", {1.0, 0.25, 1.0}},
    };
    struct lt_cluster *c = make(ms, 5, 1);
    const struct lt_policy *p = policy("random", c);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_rng r1, r2;

    (void)state;
    lt_rng_init(&r1, 5, LT_RNG_POLICY);
    lt_rng_init(&r2, 5, LT_RNG_POLICY);
    for (int k = 0; k < 200; k++) {
        double scores[5];
        size_t cand[5] = {0, 1, 2, 3, 4}, zeros = 0, m;

        /* rank over 0..n-1 and choose make the same decision from the same draws. */
        rank_all(p, c, &t, &r1, scores);
        m = choose(p, c, &t, &r2);
        assert_memory_equal(&r1, &r2, sizeof(r1));
        assert_int_equal(lt_scores_best(cand, scores, 5), m);
        assert_true(isinf(scores[1]) && isinf(scores[4]));
        for (size_t i = 0; i < 5; i++) {
            if (i == 1 || i == 4)
                continue;
            if (i == m)
                lt_assert_near(scores[i], 0.0, 0.0);
            else
                lt_assert_near(scores[i], 1.0, 0.0);
            zeros += i == m;
        }
        assert_int_equal(zeros, 1);
    }
    lt_cluster_free(c);
}

static void test_random_same_seed_gives_same_sequence(void **state)
{
    static const struct lt_machine_spec ms[] = {
        {"a", {1.0, 1.0, 1.0}}, {"b", {2.0, 1.0, 1.0}}, {"c", {1.0, 2.0, 1.0}},
        {"d", {1.0, 1.0, 1.0}}, {"e", {2.0, 2.0, 2.0}}, {"f", {1.0, 1.0, 2.0}},
        {"g", {1.0, 1.0, 1.0}},
    };
    struct lt_cluster *c = make(ms, 7, 1);
    const struct lt_policy *p = policy("random", c);
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_rng a, b, other;
    size_t differ = 0;

    (void)state;
    lt_rng_init(&a, 31, LT_RNG_POLICY);
    lt_rng_init(&b, 31, LT_RNG_POLICY);
    lt_rng_init(&other, 32, LT_RNG_POLICY);
    for (int k = 0; k < 1000; k++) {
        size_t x = choose(p, c, &t, &a);
        assert_int_equal(x, choose(p, c, &t, &b));
        differ += x != choose(p, c, &t, &other);
    }
    /* Independent sequences over 7 machines agree about 1/7 of the time. */
    assert_true(differ > 700);
    lt_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_firstfit_chooses_lowest_index_that_fits),
        cmocka_unit_test(test_firstfit_follows_fill_order_across_machines),
        cmocka_unit_test(test_randfirstfit_order_depends_on_seed_and_name_not_position),
        cmocka_unit_test(test_randfirstfit_chooses_fitting_machine_with_smallest_key),
        cmocka_unit_test(test_randfirstfit_keys_survive_adding_machines),
        cmocka_unit_test(test_random_is_uniform_over_identical_machines),
        cmocka_unit_test(test_random_with_one_fitting_machine_of_200_always_picks_it),
        cmocka_unit_test(test_random_rank_scores_chosen_zero_and_other_feasible_one),
        cmocka_unit_test(test_random_same_seed_gives_same_sequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
