/* test_eval.c -- the evaluation helpers of lt_cluster.h: machine fragmentation (Stein et al.:
 * online machines with free cpu < x% of capacity AND free ram < x% of capacity) and the
 * number of unused (online, task-free) machines; the census that computes them, with the
 * capacity and allocation sums, in one pass.
 *
 * The fixture's free fractions are exact in binary, so the boundary cases (a free fraction
 * equal to x, which does not count: the comparison is strict) are decided exactly.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdbool.h>
#include <string.h>

#include "lt_cluster.h"

/* Free (cpu %, mem %) after eval_fixture() places its tasks: */
static const struct lt_machine_spec ms[] = {
    {"m0", {10.0, 10.0, 1.0}}, /* full: (0, 0) */
    {"m1", {10.0, 20.0, 1.0}}, /* (5, 5) */
    {"m2", {10.0, 10.0, 1.0}}, /* (20, 50): mem exactly at x = 50 */
    {"m3", {4.0, 8.0, 1.0}},   /* (25, 12.5): cpu exactly at x = 25 */
    {"m4", {10.0, 10.0, 1.0}}, /* empty: (100, 100) */
    {"m5", {10.0, 10.0, 1.0}}, /* (40, 5): low mem only */
    {"m6", {10.0, 10.0, 1.0}}, /* empty and offline */
    {"m7", {10.0, 10.0, 1.0}}, /* disk full, cpu and mem free: (100, 100) */
    {"m8", {10.0, 10.0, 1.0}}, /* forced past cpu: (-20, 60) */
    {"m9", {10.0, 10.0, 1.0}}, /* forced past both: (-10, -10) */
};

#define N_MS (sizeof(ms) / sizeof(ms[0]))

struct fixture {
    struct lt_cluster *c;
    size_t pid[N_MS]; /* the one placement on machine i, or LT_NO_MACHINE */
};

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

static size_t place(struct lt_cluster *c, size_t i, double cpu, double mem, double disk,
                    unsigned flags)
{
    struct lt_task t;
    struct lt_err err;
    size_t pid = LT_NO_MACHINE;
    int rc;

    memset(&t, 0, sizeof(t));
    t.id = (int64_t)i;
    t.req.cpu = cpu;
    t.req.mem = mem;
    t.req.disk = disk;
    lt_err_init(&err, NULL);
    rc = lt_cluster_place(c, i, &t, flags, &pid, &err);
    if (rc != 0)
        print_error("place on %zu: %s\n", i, err.text);
    assert_int_equal(rc, 0);
    assert_check(c);
    return pid;
}

static void set_online(struct lt_cluster *c, size_t i, bool online)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_set_online(c, i, online, &err), 0);
    assert_check(c);
}

static void eval_fixture(struct fixture *f)
{
    struct lt_cluster_spec spec = {ms, N_MS, {0.0, 0.0, 0.0}, 1};
    struct lt_err err;

    lt_err_init(&err, NULL);
    f->c = lt_cluster_new(&spec, &err);
    assert_non_null(f->c);
    for (size_t i = 0; i < N_MS; i++)
        f->pid[i] = LT_NO_MACHINE;
    f->pid[0] = place(f->c, 0, 10.0, 10.0, 0.5, 0);
    f->pid[1] = place(f->c, 1, 9.5, 19.0, 0.5, 0);
    f->pid[2] = place(f->c, 2, 8.0, 5.0, 0.5, 0);
    f->pid[3] = place(f->c, 3, 3.0, 7.0, 0.5, 0);
    f->pid[5] = place(f->c, 5, 6.0, 9.5, 0.5, 0);
    set_online(f->c, 6, false);
    f->pid[7] = place(f->c, 7, 0.0, 0.0, 1.0, 0);
    f->pid[8] = place(f->c, 8, 12.0, 4.0, 0.5, LT_PLACE_FORCE);
    f->pid[9] = place(f->c, 9, 11.0, 11.0, 0.5, LT_PLACE_FORCE);
}

static size_t frag(const struct lt_cluster *c, double x)
{
    struct lt_err err;
    size_t count = 12345;

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_fragmentation(c, x, &count, &err), 0);
    assert_int_equal(err.code, 0);
    assert_true(count <= lt_cluster_n_online(c));
    return count;
}

static void test_eval_fragmentation_counts_by_hand(void **state)
{
    struct fixture f;

    (void)state;
    eval_fixture(&f);
    /* x = 0: only m9, whose free cpu and mem are both negative. */
    assert_int_equal(frag(f.c, 0.0), 1);
    /* x = 10: m0 (0, 0), m1 (5, 5), m9. */
    assert_int_equal(frag(f.c, 10.0), 3);
    /* x = 25: m3's cpu is exactly 25%, which is not below 25%. */
    assert_int_equal(frag(f.c, 25.0), 3);
    /* x = 30: m3 joins. */
    assert_int_equal(frag(f.c, 30.0), 4);
    /* x = 50: m5 (40, 5) joins; m2's mem is exactly 50%, m8's mem 60%. */
    assert_int_equal(frag(f.c, 50.0), 5);
    /* x = 100: everything with some use in both cpu and mem: m0 m1 m2 m3 m5 m8 m9. m4 and m7
     * are fully free in cpu and mem (m7's full disk does not count), m6 is offline. */
    assert_int_equal(frag(f.c, 100.0), 7);
    lt_cluster_free(f.c);
}

static void test_eval_fragmentation_follows_placements_and_removals(void **state)
{
    struct fixture f;
    struct lt_err err;

    (void)state;
    eval_fixture(&f);
    lt_err_init(&err, NULL);
    /* Removing m0's task leaves it empty: it leaves the x = 10 count. */
    assert_int_equal(lt_cluster_remove(f.c, f.pid[0], &err), 0);
    assert_check(f.c);
    assert_int_equal(frag(f.c, 10.0), 2);
    assert_int_equal(frag(f.c, 100.0), 6);
    /* Filling m4 to (5, 5)% free brings it into the x = 10 count. */
    f.pid[4] = place(f.c, 4, 9.5, 9.5, 0.0, 0);
    assert_int_equal(frag(f.c, 10.0), 3);
    assert_int_equal(frag(f.c, 100.0), 7);
    lt_cluster_free(f.c);
}

static void test_eval_fragmentation_excludes_offline_machines(void **state)
{
    struct fixture f;
    struct lt_err err;
    size_t before;

    (void)state;
    eval_fixture(&f);
    lt_err_init(&err, NULL);
    /* Only an empty machine may go offline, and an empty machine is never fragmented, so
     * taking one offline or online leaves every count where it was. */
    before = frag(f.c, 100.0);
    set_online(f.c, 6, true);
    set_online(f.c, 4, false);
    assert_int_equal(frag(f.c, 100.0), before);
    assert_int_equal(frag(f.c, 10.0), 3);
    /* m0 emptied, taken offline, brought back and filled again counts again. */
    assert_int_equal(lt_cluster_remove(f.c, f.pid[0], &err), 0);
    assert_check(f.c);
    set_online(f.c, 0, false);
    assert_int_equal(frag(f.c, 10.0), 2);
    set_online(f.c, 0, true);
    f.pid[0] = place(f.c, 0, 10.0, 10.0, 0.0, 0);
    assert_int_equal(frag(f.c, 10.0), 3);
    lt_cluster_free(f.c);
}

static void test_eval_fragmentation_rejects_threshold_outside_0_100(void **state)
{
    const double bad[] = {-0.001, -1.0, -INFINITY, 100.0001, 101.0, INFINITY, NAN};
    struct fixture f;

    (void)state;
    eval_fixture(&f);
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct lt_err err;
        size_t count = 12345;

        lt_err_init(&err, NULL);
        assert_int_equal(lt_cluster_fragmentation(f.c, bad[k], &count, &err), LT_EINVAL);
        assert_int_equal(err.code, LT_EINVAL);
        assert_non_null(strstr(err.text, "not in [0, 100]"));
        assert_int_equal(count, 12345); /* output untouched */
    }
    assert_int_equal(lt_cluster_fragmentation(f.c, 50.0, NULL, NULL), LT_EINVAL);
    assert_int_equal(lt_cluster_fragmentation(NULL, 50.0, NULL, NULL), LT_EINVAL);
    lt_cluster_free(f.c);
}

static void test_eval_unused_counts_online_machines_without_tasks(void **state)
{
    struct lt_cluster_spec spec = {ms, N_MS, {0.0, 0.0, 0.0}, 1};
    struct fixture f;
    struct lt_err err;
    struct lt_cluster *fresh;
    size_t zero_pid;

    (void)state;
    fresh = lt_cluster_new(&spec, NULL);
    assert_non_null(fresh);
    assert_int_equal(lt_cluster_unused(fresh), N_MS);
    set_online(fresh, 3, false);
    assert_int_equal(lt_cluster_unused(fresh), N_MS - 1);
    lt_cluster_free(fresh);

    eval_fixture(&f);
    lt_err_init(&err, NULL);
    /* Every machine has a task except m4 (online) and m6 (offline). */
    assert_int_equal(lt_cluster_unused(f.c), 1);
    assert_int_equal(lt_cluster_remove(f.c, f.pid[1], &err), 0);
    assert_check(f.c);
    assert_int_equal(lt_cluster_unused(f.c), 2);
    set_online(f.c, 6, true);
    assert_int_equal(lt_cluster_unused(f.c), 3);
    /* A task requesting nothing still makes its machine used. */
    zero_pid = place(f.c, 4, 0.0, 0.0, 0.0, 0);
    assert_int_equal(lt_cluster_unused(f.c), 2);
    set_online(f.c, 1, false);
    assert_int_equal(lt_cluster_unused(f.c), 1);
    assert_int_equal(lt_cluster_remove(f.c, zero_pid, &err), 0);
    assert_check(f.c);
    assert_int_equal(lt_cluster_unused(f.c), 2);
    lt_cluster_free(f.c);
}

/* The census equals the separate helpers and sums (hand-computed on the fixture first). */
static void assert_census(const struct lt_cluster *c)
{
    static const double pct[] = {0.0, 5.0, 12.5, 25.0, 50.0, 60.0, 100.0};
    struct lt_census cs;
    struct lt_err err;
    struct lt_res cap = {0, 0, 0}, alloc = {0, 0, 0};

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_census(c, pct, sizeof(pct) / sizeof(pct[0]), &cs, &err), 0);
    for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++)
        assert_int_equal(cs.frag[k], frag(c, pct[k]));
    assert_int_equal(cs.unused, lt_cluster_unused(c));
    assert_int_equal(cs.online, lt_cluster_n_online(c));
    for (size_t i = 0; i < lt_cluster_size(c); i++) {
        if (!lt_cluster_online(c, i))
            continue;
        struct lt_res a = lt_cluster_alloc(c, i), m = lt_cluster_cap(c, i);
        cap.cpu += m.cpu;
        cap.mem += m.mem;
        cap.disk += m.disk;
        alloc.cpu += a.cpu;
        alloc.mem += a.mem;
        alloc.disk += a.disk;
    }
    assert_memory_equal(&cs.cap, &cap, sizeof(cap));
    assert_memory_equal(&cs.alloc, &alloc, sizeof(alloc));
}

static void test_eval_census_equals_the_separate_helpers(void **state)
{
    static const double bad[] = {-1.0, 100.5};
    double many[LT_CENSUS_MAX_PCT + 1];
    struct fixture f;
    struct lt_census cs;
    struct lt_err err;

    (void)state;
    eval_fixture(&f);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_census(f.c, NULL, 0, &cs, &err), 0);
    assert_int_equal(cs.online, N_MS - 1); /* m6 is offline */
    assert_int_equal(cs.unused, 1);        /* m4 */
    {
        const struct lt_res cap = {84.0, 98.0, 9.0}; /* by hand, exact in binary */
        assert_memory_equal(&cs.cap, &cap, sizeof(cap));
    }
    assert_census(f.c);
    assert_int_equal(lt_cluster_remove(f.c, f.pid[1], &err), 0);
    assert_census(f.c);
    set_online(f.c, 6, true);
    set_online(f.c, 4, false);
    assert_census(f.c);
    for (size_t k = 0; k < 2; k++) {
        lt_err_init(&err, NULL);
        assert_int_equal(lt_cluster_census(f.c, &bad[k], 1, &cs, &err), LT_EINVAL);
        assert_non_null(strstr(err.text, "not in [0, 100]"));
    }
    for (size_t k = 0; k <= LT_CENSUS_MAX_PCT; k++)
        many[k] = 50.0;
    assert_int_equal(lt_cluster_census(f.c, many, LT_CENSUS_MAX_PCT + 1, &cs, NULL), LT_EINVAL);
    assert_int_equal(lt_cluster_census(f.c, NULL, 1, &cs, NULL), LT_EINVAL);
    assert_int_equal(lt_cluster_census(NULL, NULL, 0, &cs, NULL), LT_EINVAL);
    assert_int_equal(lt_cluster_census(f.c, NULL, 0, NULL, NULL), LT_EINVAL);
    lt_cluster_free(f.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_fragmentation_counts_by_hand),
        cmocka_unit_test(test_eval_fragmentation_follows_placements_and_removals),
        cmocka_unit_test(test_eval_fragmentation_excludes_offline_machines),
        cmocka_unit_test(test_eval_fragmentation_rejects_threshold_outside_0_100),
        cmocka_unit_test(test_eval_unused_counts_online_machines_without_tasks),
        cmocka_unit_test(test_eval_census_equals_the_separate_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
