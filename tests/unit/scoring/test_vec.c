/* test_vec.c -- lt_vec.h: growth keeps the elements, and a failed growth changes nothing.
 * Linked with lotus_faults, so allocations can be made to fail.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdint.h>

#include "lt_mem.h"
#include "lt_vec.h"

struct big {
    uint64_t a, b, c;
};

static void test_reserve_grows_and_keeps_elements(void **state)
{
    struct big *v = NULL;
    size_t n = 0, cap = 0;

    (void)state;
    for (uint64_t i = 0; i < 10000; i++) {
        assert_int_equal(LT_VEC_RESERVE(v, cap, n + 1), 0);
        assert_true(cap >= n + 1);
        v[n++] = (struct big){i, 2 * i, 3 * i};
    }
    for (uint64_t i = 0; i < n; i++)
        assert_true(v[i].a == i && v[i].b == 2 * i && v[i].c == 3 * i);
    /* Already large enough: no change. */
    size_t before = cap;
    assert_int_equal(LT_VEC_RESERVE(v, cap, 5), 0);
    assert_int_equal(cap, before);
    /* A jump beyond doubling reaches need at once. */
    assert_int_equal(LT_VEC_RESERVE(v, cap, 10 * before + 3), 0);
    assert_true(cap >= 10 * before + 3);
    lt_free(v);
}

static void test_failed_growth_leaves_the_array(void **state)
{
    uint32_t *v = NULL;
    size_t cap = 0;

    (void)state;
    assert_int_equal(LT_VEC_RESERVE(v, cap, 3), 0);
    v[0] = 7;
    v[2] = 9;
    size_t before = cap;
    lt_mem_fail_after(0);
    assert_int_equal(LT_VEC_RESERVE(v, cap, before + 1), LT_ENOMEM);
    lt_mem_fail_after(-1);
    assert_int_equal(cap, before);
    assert_int_equal(v[0], 7);
    assert_int_equal(v[2], 9);
    /* An element count whose byte size overflows is refused, not wrapped. */
    assert_int_equal(LT_VEC_RESERVE(v, cap, SIZE_MAX / 2), LT_ENOMEM);
    assert_int_equal(cap, before);
    lt_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve_grows_and_keeps_elements),
        cmocka_unit_test(test_failed_growth_leaves_the_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
