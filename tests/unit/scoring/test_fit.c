/* test_fit.c -- hand-computed scores of the fit family (bestfit1-5, epvm, epvm2, brfs-dot,
 * brfs-norm), their winners, and ties to the lowest index, through both rank and choose.
 *
 * The cluster (capacities cpu, mem, disk; allocations) and free vectors before placement:
 *   m0 (1, 1, 1)      alloc (0.5, 0.25, 0)     free (0.5, 0.75, 1)
 *   m1 (0.5, 0.5, 1)  alloc (0.25, 0.25, 0.5)  free (0.25, 0.25, 0.5)
 *   m2 (1, 0.5, 1)    alloc 0                  free (1, 0.5, 1)
 *   m3 = m1 and m4 = m2 (same configuration and state: they tie with m1 and m2)
 * Task t1 requests (0.25, 0.25, 0.25). After placement, a = free_ram_pct, b = free_cpu_pct,
 * d = free_disk_pct: m0 (a, b, d) = (0.5, 0.25, 0.75); m1 (0, 0, 0.25); m2 (0.5, 0.75, 0.75).
 *   bestfit1 a+b:               m0 0.75     m1 0      m2 1.25
 *   bestfit2 a^2+b^2:           m0 0.3125   m1 0      m2 0.8125
 *   bestfit3 10^a+10^b:         m0 3.16227766+1.77827941 = 4.94055707   m1 2   m2 8.78569091
 *   bestfit4 +10^d:             m0 10.56397032   m1 3.77827941   m2 14.40910416
 *   bestfit5 max(a,b)-(...):    m0 -10.06397032  m1 -3.77827941  m2 -13.65910416
 *   epvm -(a+b):                m0 -0.75    m1 0      m2 -1.25
 *   epvm2 -(a^2+b^2):           m0 -0.3125  m1 0      m2 -0.8125
 * brfs (ref = max capacity = (1, 1, 1), residual c = free before placement, q = (0.25, 0.25)):
 *   brfs-dot -(q.c):            m0 -(0.125+0.1875) = -0.3125   m1 -0.125   m2 -0.375
 *   brfs-norm |q-c|^2:          m0 0.0625+0.25 = 0.3125        m1 0        m2 0.5625+0.0625 = 0.625
 * Task t2 requests (0.25, 0.25, 0.6): m1 and m3 lack disk (0.5 free); d = 0.4 on m0, m2, m4:
 *   bestfit4 m0 4.94055707+2.51188643 = 7.45244350, m2 11.29757734; bestfit5 m0 -6.95244350,
 *   m2 -10.54757734.
 * Tolerance 1e-12: the scores are O(10) and each is a handful of correctly rounded operations
 * and pow calls (error < 1 ulp each), so 1e-12 is a thousand times the worst rounding.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <string.h>

#include "lt_cluster.h"
#include "lt_score.h"

#define EPS 1e-12

static struct lt_cluster *make_cluster(void)
{
    static const struct lt_machine_spec ms[] = {
        {"m0", {1, 1, 1}},     {"m1", {0.5, 0.5, 1}}, {"m2", {1, 0.5, 1}},
        {"m3", {0.5, 0.5, 1}}, {"m4", {1, 0.5, 1}},
    };
    struct lt_cluster_spec spec = {ms, 5, {0, 0, 0}, 1};
    struct lt_task t;
    struct lt_err err;
    struct lt_cluster *c;
    size_t pid;

    lt_err_init(&err, NULL);
    c = lt_cluster_new(&spec, &err);
    assert_non_null(c);
    memset(&t, 0, sizeof(t));
    t.req = (struct lt_res){0.5, 0.25, 0};
    assert_int_equal(lt_cluster_place(c, 0, &t, 0, &pid, &err), 0);
    t.req = (struct lt_res){0.25, 0.25, 0.5};
    assert_int_equal(lt_cluster_place(c, 1, &t, 0, &pid, &err), 0);
    assert_int_equal(lt_cluster_place(c, 3, &t, 0, &pid, &err), 0);
    for (size_t k = 0; k < lt_policy_count(); k++)
        assert_int_equal(lt_policy_attach(lt_policy_at(k), c, &err), 0);
    assert_int_equal(lt_cluster_check(c, &err), 0);
    return c;
}

/* Ranks all machines for req under policy name, checks the scores against want (INFINITY
 * for infeasible), and checks that rank's best and choose both pick machine `winner`. */
static void expect(const char *name, struct lt_res req, const double want[5], size_t winner)
{
    struct lt_cluster *c = make_cluster();
    const struct lt_policy *p = lt_policy_find(name, NULL);
    size_t cand[5] = {0, 1, 2, 3, 4}, chosen;
    double scores[5];
    struct lt_task t;
    struct lt_err err;

    assert_non_null(p);
    memset(&t, 0, sizeof(t));
    t.req = req;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 5, NULL, scores, &err), 0);
    for (int k = 0; k < 5; k++) {
        if (isinf(want[k]))
            assert_true(isinf(scores[k]) && scores[k] > 0);
        else
            lt_assert_near(scores[k], want[k], EPS);
    }
    assert_int_equal(lt_scores_best(cand, scores, 5), winner);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &chosen, &err), 0);
    assert_int_equal(chosen, winner);
    lt_cluster_free(c);
}

static const struct lt_res t1 = {0.25, 0.25, 0.25};
static const struct lt_res t2 = {0.25, 0.25, 0.6};

static void test_bestfit1_sums_free_fractions_and_ties_to_lowest_index(void **state)
{
    const double want[5] = {0.75, 0, 1.25, 0, 1.25};
    (void)state;
    expect("bestfit1", t1, want, 1); /* m1 and m3 tie at 0: m1 */
}

static void test_bestfit2_sums_squares(void **state)
{
    const double want[5] = {0.3125, 0, 0.8125, 0, 0.8125};
    (void)state;
    expect("bestfit2", t1, want, 1);
}

static void test_bestfit3_sums_powers_of_ten(void **state)
{
    const double want[5] = {4.940557070207302, 2, 8.785690912071871, 2, 8.785690912071871};
    (void)state;
    expect("bestfit3", t1, want, 1);
}

static void test_bestfit4_adds_disk(void **state)
{
    const double want[5] = {10.563970322110794, 3.7782794100389228, 14.409104163975362,
                            3.7782794100389228, 14.409104163975362};
    const double want2[5] = {7.452443501716882, INFINITY, 11.297577343581452, INFINITY,
                             11.297577343581452};
    (void)state;
    expect("bestfit4", t1, want, 1);
    expect("bestfit4", t2, want2, 0); /* m1, m3 lack disk: m0 is the tightest left */
}

static void test_bestfit5_as_written_prefers_the_emptiest(void **state)
{
    const double want[5] = {-10.063970322110794, -3.7782794100389228, -13.659104163975362,
                            -3.7782794100389228, -13.659104163975362};
    const double want2[5] = {-6.952443501716882, INFINITY, -10.547577343581452, INFINITY,
                             -10.547577343581452};
    (void)state;
    expect("bestfit5", t1, want, 2); /* m2 and m4 tie: m2 */
    expect("bestfit5", t2, want2, 2);
}

static void test_epvm_is_worst_fit(void **state)
{
    const double want[5] = {-0.75, 0, -1.25, 0, -1.25};
    (void)state;
    expect("epvm", t1, want, 2);
}

static void test_epvm2_is_negated_bestfit2(void **state)
{
    const double want[5] = {-0.3125, 0, -0.8125, 0, -0.8125};
    (void)state;
    expect("epvm2", t1, want, 2);
}

static void test_brfs_dot_maximises_request_dot_residual(void **state)
{
    const double want[5] = {-0.3125, -0.125, -0.375, -0.125, -0.375};
    (void)state;
    expect("brfs-dot", t1, want, 2);
}

static void test_brfs_norm_minimises_distance_to_residual(void **state)
{
    const double want[5] = {0.3125, 0, 0.625, 0, 0.625};
    (void)state;
    expect("brfs-norm", t1, want, 1);
}

/* brfs normalises by the reference capacity: in Kubernetes units (millicores, bytes) the
 * memory term would otherwise drown the cpu term. Same cluster scaled by (1000, 2^30, 2^30)
 * gives the same scores. */
static void test_brfs_is_unit_free(void **state)
{
    static const struct lt_machine_spec ms[] = {{"a", {1000, 1073741824.0, 1073741824.0}},
                                                {"b", {500, 536870912.0, 1073741824.0}}};
    struct lt_cluster_spec spec = {ms, 2, {0, 0, 0}, 0};
    struct lt_cluster *c = lt_cluster_new(&spec, NULL);
    const struct lt_policy *p = lt_policy_find("brfs-dot", NULL);
    size_t cand[2] = {0, 1};
    double scores[2];
    struct lt_task t;

    (void)state;
    assert_non_null(c);
    memset(&t, 0, sizeof(t));
    t.req = (struct lt_res){250, 268435456.0, 0};
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 2, NULL, scores, NULL), 0);
    lt_assert_near(scores[0], -(0.25 * 1 + 0.25 * 1), EPS);
    lt_assert_near(scores[1], -(0.25 * 0.5 + 0.25 * 0.5), EPS);
    lt_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bestfit1_sums_free_fractions_and_ties_to_lowest_index),
        cmocka_unit_test(test_bestfit2_sums_squares),
        cmocka_unit_test(test_bestfit3_sums_powers_of_ten),
        cmocka_unit_test(test_bestfit4_adds_disk),
        cmocka_unit_test(test_bestfit5_as_written_prefers_the_emptiest),
        cmocka_unit_test(test_epvm_is_worst_fit),
        cmocka_unit_test(test_epvm2_is_negated_bestfit2),
        cmocka_unit_test(test_brfs_dot_maximises_request_dot_residual),
        cmocka_unit_test(test_brfs_norm_minimises_distance_to_residual),
        cmocka_unit_test(test_brfs_is_unit_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
