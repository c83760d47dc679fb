/* test_ci.c -- T(x)'s confidence intervals (simulator/replay/ci.c): Student's t quantiles
 * against published values and the interval of small samples computed by hand.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>

#include "replay/ci.h"

static void test_t975_matches_published_quantiles(void **state)
{
    (void)state;
    assert_true(isnan(sim_t975(0)));
    lt_assert_near(sim_t975(1), 12.706, 1e-9);
    lt_assert_near(sim_t975(2), 4.303, 1e-9);
    lt_assert_near(sim_t975(9), 2.262, 1e-9);
    lt_assert_near(sim_t975(30), 2.042, 1e-9);
    /* beyond the table: published t(0.975, 40) = 2.021, 60: 2.000, 120: 1.980 */
    lt_assert_near(sim_t975(40), 2.021, 1e-3);
    lt_assert_near(sim_t975(60), 2.000, 1e-3);
    lt_assert_near(sim_t975(120), 1.980, 1e-3);
    lt_assert_near(sim_t975(1000000), 1.960, 1e-3);
}

static void test_ci95_by_hand(void **state)
{
    (void)state;
    double mean, half;
    /* 1, 2, 3: mean 2, s = 1, half = 4.303 / sqrt(3) */
    const double a[] = {1, 2, 3};
    sim_ci95(a, 3, &mean, &half);
    lt_assert_near(mean, 2.0, 1e-12);
    lt_assert_near(half, 4.303 / sqrt(3.0), 1e-12);
    /* 975, 975, 975, 975: no spread */
    const double b[] = {975, 975, 975, 975};
    sim_ci95(b, 4, &mean, &half);
    lt_assert_near(mean, 975.0, 1e-12);
    lt_assert_near(half, 0.0, 1e-12);
    /* 10, 14: mean 12, s = sqrt(8), half = 12.706 * sqrt(8) / sqrt(2) = 25.412 */
    const double c[] = {10, 14};
    sim_ci95(c, 2, &mean, &half);
    lt_assert_near(half, 25.412, 1e-9);
    /* one value: a mean, no interval; none: neither */
    sim_ci95(c, 1, &mean, &half);
    lt_assert_near(mean, 10.0, 1e-12);
    assert_true(isnan(half));
    sim_ci95(c, 0, &mean, &half);
    assert_true(isnan(mean) && isnan(half));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t975_matches_published_quantiles),
        cmocka_unit_test(test_ci95_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
