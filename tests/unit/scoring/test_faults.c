/* test_faults.c -- allocation-failure injection (STYLE.md R19): every allocation of a
 * scenario is made to fail in turn; each failure must surface as LT_ENOMEM (or NULL with
 * LT_ENOMEM), leave the cluster and its indexes consistent (the checker passes) and leak
 * nothing (this test runs under ASan in the sanitizer build). Linked with lotus_faults.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdio.h>
#include <string.h>

#include "lt_cluster.h"
#include "lt_mem.h"
#include "lt_score.h"

#define N_MACHINES 40

/* The scenario: build a cluster, attach every policy, place and remove tasks through every
 * policy's choose, add a machine, take one offline. Returns 0 when it ran to the end,
 * LT_ENOMEM when an allocation failed (after checking the state is consistent). */
static int scenario(void)
{
    struct lt_machine_spec ms[N_MACHINES];
    char names[N_MACHINES][16];
    struct lt_cluster_spec spec;
    struct lt_cluster *c;
    struct lt_err err;
    size_t pids[64], n_pids = 0;
    int rc = 0;

    for (int i = 0; i < N_MACHINES; i++) {
        snprintf(names[i], sizeof(names[i]), "m%d", i);
        ms[i].name = names[i];
        ms[i].cap = (struct lt_res){i % 3 ? 0.5 : 1.0, i % 2 ? 0.5 : 1.0, 1.0};
    }
    memset(&spec, 0, sizeof(spec));
    spec.machines = ms;
    spec.n_machines = N_MACHINES;
    spec.seed = 3;
    lt_err_init(&err, NULL);
    c = lt_cluster_new(&spec, &err);
    if (c == NULL) {
        assert_int_equal(err.code, LT_ENOMEM);
        return LT_ENOMEM;
    }
    for (size_t k = 0; k < lt_policy_count() && rc == 0; k++)
        rc = lt_policy_attach(lt_policy_at(k), c, &err);
    for (int step = 0; step < 60 && rc == 0; step++) {
        const struct lt_policy *p = lt_policy_at((size_t)step % lt_policy_count());
        struct lt_rng rng;
        struct lt_task t;
        size_t m;

        lt_rng_init(&rng, (uint64_t)step, LT_RNG_POLICY);
        memset(&t, 0, sizeof(t));
        t.req = (struct lt_res){0.05 * (step % 7 + 1), 0.03 * (step % 5 + 1), 0.01};
        rc = lt_policy_choose(p, c, &t, &rng, &m, &err);
        if (rc == 0 && m != LT_NO_MACHINE) {
            rc = lt_cluster_place(c, m, &t, 0, &pids[n_pids], &err);
            if (rc == 0)
                n_pids++;
        }
        if (rc == 0 && step % 3 == 2 && n_pids > 0)
            rc = lt_cluster_remove(c, pids[--n_pids], &err);
        if (rc == 0 && step == 30) {
            struct lt_machine_spec extra = {"extra", {2, 2, 2}};
            rc = lt_cluster_add_machine(c, &extra, &m, &err);
        }
        if (rc == 0 && step == 40) {
            for (size_t i = 0; i < lt_cluster_size(c); i++) {
                if (lt_cluster_n_tasks(c, i) == 0) {
                    rc = lt_cluster_set_online(c, i, false, &err);
                    break;
                }
            }
        }
    }
    if (rc != 0) {
        struct lt_err check;
        assert_int_equal(rc, LT_ENOMEM);
        assert_int_equal(err.code, LT_ENOMEM);
        /* The failed call changed nothing: every invariant still holds. */
        lt_mem_fail_after(-1);
        lt_err_init(&check, NULL);
        if (lt_cluster_check(c, &check) != 0) {
            print_error("inconsistent after failure: %s (%s)\n", check.text, err.text);
            fail();
        }
    }
    lt_cluster_free(c);
    return rc;
}

static void test_every_allocation_failure_is_reported_and_leaks_nothing(void **state)
{
    int64_t k;
    int failures = 0;

    (void)state;
    for (k = 0;; k++) {
        int rc;
        lt_mem_fail_after(k);
        rc = scenario();
        lt_mem_fail_after(-1);
        if (rc == 0)
            break;
        failures++;
    }
    /* The scenario allocates dozens of times (cluster, names, indexes, cells, slab). */
    assert_true(failures > 50);
    print_message("allocation points exercised: %d\n", failures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure_is_reported_and_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
