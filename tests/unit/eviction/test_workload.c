/* test_workload.c -- the workloads W-B..W-E (and _l) of Cavdar Table 9.4 under the digest's
 * burst reading (A38, A39): 60,000 arrivals in 15 h on average (about 25 % fewer for the
 * low-load versions), Table 5.2's class shares, the stated means; the semi-synthetic W-B/W-C
 * drawing whole tasks from a pool; determinism; and the arrival statistics of Table 9.2 on a
 * hand-made sequence.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_workload.h"

static void mean_arrivals(const char *name, int seeds, double want, double tol)
{
    const struct lt_workload_spec *w = lt_workload_find(name, NULL);
    double total = 0.0;

    assert_non_null(w);
    for (int s = 0; s < seeds; s++) {
        struct lt_slot_task *t;
        size_t n;
        assert_int_equal(lt_workload_generate(w, 15.0, (uint64_t)s, NULL, 0, &t, &n, NULL), 0);
        total += (double)n;
        lt_free(t);
    }
    if (fabs(total / seeds - want) > tol * want) {
        print_error("%s: mean %.0f arrivals in 15 h over %d seeds, want %.0f +- %.0f %%\n", name,
                    total / seeds, seeds, want, 100 * tol);
        fail();
    }
}

static void test_60k_arrivals_in_15_hours(void **state)
{
    (void)state;
    mean_arrivals("w-d", 20, 60000, 0.08);
    mean_arrivals("w-e", 20, 60000, 0.10);
    /* low load: same bursts, rates 3/4: 45,000 */
    mean_arrivals("w-d_l", 10, 45000, 0.10);
    mean_arrivals("w-e_l", 10, 45000, 0.12);
    /* W-B and W-C share W-D's and W-E's arrival processes (test_semi_synthetic_...) */
}

static void test_attributes_follow_table_5_2_and_9_4(void **state)
{
    const struct lt_workload_spec *w = lt_workload_find("w-d", NULL);
    struct lt_slot_task *t, *u;
    size_t n, m, count[12] = {0}, prod = 0;
    double exec_np = 0.0, mem_max = 0.0;
    struct lt_err err;

    (void)state;
    assert_int_equal(lt_workload_generate(w, 15.0, 3, NULL, 0, &t, &n, NULL), 0);
    assert_true(n > 20000);
    for (size_t k = 0; k < n; k++) {
        count[t[k].prio]++;
        assert_true(t[k].demand > 0.0);
        assert_true(t[k].mem >= 0.0 && t[k].mem <= 1.0);
        assert_true(k == 0 || t[k].arrival >= t[k - 1].arrival);
        assert_int_equal(t[k].id, (int64_t)k);
        mem_max = t[k].mem > mem_max ? t[k].mem : mem_max;
        if (t[k].prio >= 9)
            prod++;
        else
            exec_np += t[k].demand; /* usage x exec: mean 0.01 x 3400 = 34 cpu-s */
    }
    lt_assert_near((double)count[4] / n, 0.5994, 0.02);
    lt_assert_near((double)count[0] / n, 0.2329, 0.02);
    lt_assert_near((double)prod / n, 0.0121, 0.004);
    lt_assert_near(exec_np / (double)(n - prod) / 34.0, 1.0, 0.1);
    /* the same seed gives the same tasks, another seed others */
    assert_int_equal(lt_workload_generate(w, 15.0, 3, NULL, 0, &u, &m, NULL), 0);
    assert_int_equal(m, n);
    assert_memory_equal(t, u, n * sizeof(*t));
    lt_free(u);
    assert_int_equal(lt_workload_generate(w, 15.0, 4, NULL, 0, &u, &m, NULL), 0);
    assert_true(m != n || memcmp(t, u, n * sizeof(*t)) != 0);
    lt_free(u);
    lt_free(t);

    lt_err_init(&err, NULL);
    assert_null(lt_workload_find("w-a", &err));
    assert_non_null(strstr(err.text, "'w-a'"));
    lt_err_init(&err, NULL);
    assert_int_equal(lt_workload_generate(w, -1.0, 0, NULL, 0, &t, &n, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "duration"));
}

/* W-C: W-E's arrival instants (same seed), each task's (priority, demand, memory) one of the
 * pool's, drawn jointly and about uniformly; the pool is required, and checked. */
static void test_semi_synthetic_draws_whole_pool_tasks(void **state)
{
    struct lt_slot_task pool[3] = {
        {.id = 70, .prio = 0, .demand = 5.0, .mem = 0.1},
        {.id = 71, .prio = 9, .demand = 500.0, .mem = 0.4},
        {.id = 72, .prio = 4, .demand = 50.0, .mem = 0.0},
    };
    const struct lt_workload_spec *wc = lt_workload_find("w-c", NULL);
    const struct lt_workload_spec *we = lt_workload_find("w-e", NULL);
    struct lt_slot_task *t, *u;
    size_t n, m, hits[3] = {0};
    struct lt_err err;

    (void)state;
    assert_non_null(wc);
    assert_non_null(we);
    assert_non_null(lt_workload_find("w-b_l", NULL));
    assert_int_equal(lt_workload_generate(wc, 15.0, 5, pool, 3, &t, &n, NULL), 0);
    assert_int_equal(lt_workload_generate(we, 15.0, 5, NULL, 0, &u, &m, NULL), 0);
    assert_int_equal(m, n);
    for (size_t k = 0; k < n; k++) {
        int which = -1;
        assert_memory_equal(&t[k].arrival, &u[k].arrival, sizeof(double)); /* same instants */
        assert_int_equal(t[k].id, (int64_t)k);
        for (int p = 0; p < 3; p++) {
            if (t[k].prio == pool[p].prio &&
                memcmp(&t[k].demand, &pool[p].demand, sizeof(double)) == 0 &&
                memcmp(&t[k].mem, &pool[p].mem, sizeof(double)) == 0)
                which = p;
        }
        assert_true(which >= 0); /* never a mix of two pool tasks */
        hits[which]++;
    }
    for (int p = 0; p < 3; p++)
        lt_assert_near((double)hits[p] / (double)n, 1.0 / 3.0, 0.02);
    lt_free(u);
    lt_free(t);

    lt_err_init(&err, NULL);
    assert_int_equal(lt_workload_generate(wc, 15.0, 5, NULL, 0, &t, &n, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "pool"));
    lt_err_init(&err, NULL);
    assert_int_equal(lt_workload_generate(we, 15.0, 5, pool, 3, &t, &n, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "synthetic"));
    pool[2].demand = 0.0;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_workload_generate(wc, 15.0, 5, pool, 3, &t, &n, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "pool task 2 (id 72)"));
}

static void test_arrival_statistics(void **state)
{
    static const double t[] = {0.0, 10.0, 59.9, 60.0, 700.0, 701.0};
    struct lt_arrival_stats s;

    (void)state;
    lt_arrival_stats(t, 6, &s);
    assert_int_equal(s.arrivals, 6);
    assert_int_equal(s.max_per_min, 3);   /* [0, 60): 0, 10, 59.9; then 10, 59.9, 60 */
    assert_int_equal(s.max_per_10min, 4); /* 0 .. 60 */
    lt_assert_near(s.max_gap, 640.0, 1e-9);
    lt_arrival_stats(t, 0, &s);
    assert_int_equal(s.max_per_min, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_60k_arrivals_in_15_hours),
        cmocka_unit_test(test_attributes_follow_table_5_2_and_9_4),
        cmocka_unit_test(test_semi_synthetic_draws_whole_pool_tasks),
        cmocka_unit_test(test_arrival_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
