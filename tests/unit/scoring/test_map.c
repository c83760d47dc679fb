/* test_map.c -- lt_map.h against a naive model (an array of pairs) over random puts, gets and
 * deletes on a small key space (long probe runs, so the backward shift is exercised), the
 * key UINT64_MAX, iteration, and failed growth changing nothing. Linked with lotus_faults.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdint.h>
#include <string.h>

#include "lt_map.h"
#include "lt_mem.h"
#include "lt_rng.h"

#define N_KEYS 600

/* Keys in the model: a few special ones and clustered small ones. */
static uint64_t key_of(uint64_t i)
{
    if (i == 0)
        return UINT64_MAX;
    if (i == 1)
        return 0;
    return i * 1024; /* low bits alike: a weak hash would collide */
}

static void test_matches_the_naive_model(void **state)
{
    struct lt_map m;
    bool in[N_KEYS] = {false};
    uint64_t val[N_KEYS];
    struct lt_rng rng;

    (void)state;
    lt_map_init(&m, sizeof(uint64_t));
    lt_rng_init(&rng, 7, 0);
    for (int step = 0; step < 200000; step++) {
        uint64_t i = lt_rng_below(&rng, N_KEYS), op = lt_rng_below(&rng, 3);
        uint64_t key = key_of(i);
        if (op == 0) {
            uint64_t *v;
            bool fresh;
            assert_int_equal(lt_map_put(&m, key, (void **)&v, &fresh), 0);
            assert_int_equal(fresh, !in[i]);
            if (!fresh)
                assert_true(*v == val[i]);
            *v = val[i] = lt_rng_below(&rng, 1000000);
            in[i] = true;
        } else if (op == 1) {
            assert_int_equal(lt_map_del(&m, key), in[i]);
            in[i] = false;
        } else {
            uint64_t *v = lt_map_get(&m, key);
            assert_int_equal(v != NULL, in[i]);
            if (v != NULL)
                assert_true(*v == val[i]);
        }
        if (step % 997 == 0) { /* every key agrees, and iteration visits each entry once */
            size_t n = 0, seen = 0, it = 0;
            uint64_t k;
            void *v;
            for (uint64_t j = 0; j < N_KEYS; j++) {
                uint64_t *g = lt_map_get(&m, key_of(j));
                n += in[j];
                assert_int_equal(g != NULL, in[j]);
                if (g != NULL)
                    assert_true(*g == val[j]);
            }
            assert_int_equal(m.n, n);
            while (lt_map_next(&m, &it, &k, &v)) {
                assert_true(lt_map_get(&m, k) == v);
                seen++;
            }
            assert_int_equal(seen, n);
        }
    }
    lt_map_release(&m);
    assert_null(lt_map_get(&m, 5));
}

static void test_failed_growth_changes_nothing(void **state)
{
    struct lt_map m;
    uint64_t *v;
    bool fresh;
    uint64_t k = 0;

    (void)state;
    lt_map_init(&m, sizeof(uint64_t));
    /* Fill up to the load limit: the next new key needs a bigger table. */
    for (; (m.n + 1) * 2 <= LT_MAP_MIN_CAP || m.cap == 0; k++) {
        assert_int_equal(lt_map_put(&m, k, (void **)&v, &fresh), 0);
        *v = k + 100;
    }
    for (int64_t f = 0; f < 2; f++) { /* the key table, then the value table */
        lt_mem_fail_after(f);
        assert_int_equal(lt_map_put(&m, k, (void **)&v, &fresh), LT_ENOMEM);
        lt_mem_fail_after(-1);
        assert_int_equal(m.n, k);
        for (uint64_t j = 0; j < k; j++) {
            v = lt_map_get(&m, j);
            assert_non_null(v);
            assert_true(*v == j + 100);
        }
        assert_null(lt_map_get(&m, k));
    }
    lt_map_release(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_the_naive_model),
        cmocka_unit_test(test_failed_growth_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
