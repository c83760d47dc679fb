/* test_cluster.c -- the cluster model: construction and validation, configurations, the
 * reference capacity, names, placement and removal (fits, exact fits, forced overcommit, bad
 * requests, offline machines), exact-zero allocations after removals, the per-machine
 * placement lists, taking machines offline and adding machines. lt_cluster_check runs after
 * every mutation.
 *
 * Most capacities and requests are dyadic (k / 2^m), so sums are exact and compared with
 * eps 0; the one test about drift uses 0.1, 0.2 and 0.3 on purpose.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lt_cluster.h"
#include "lt_score.h"

/* a and c share a capacity; b and d each have their own. */
static const struct lt_machine_spec four[] = {
    {"a", {4.0, 8.0, 100.0}},
    {"b", {2.0, 4.0, 50.0}},
    {"c", {4.0, 8.0, 100.0}},
    {"d", {8.0, 2.0, 10.0}},
};

#define N_FOUR (sizeof(four) / sizeof(four[0]))

/* Exactly +0 or -0, without a float == (-Wfloat-equal). */
static bool is_zero(double x)
{
    return fpclassify(x) == FP_ZERO;
}

static void assert_res_eq(struct lt_res got, struct lt_res want)
{
    lt_assert_near(got.cpu, want.cpu, 0.0);
    lt_assert_near(got.mem, want.mem, 0.0);
    lt_assert_near(got.disk, want.disk, 0.0);
}

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

static struct lt_cluster *make(const struct lt_machine_spec *ms, size_t n, struct lt_res ref)
{
    struct lt_cluster_spec spec = {ms, n, ref, 77};
    struct lt_err err;
    struct lt_cluster *c;

    lt_err_init(&err, NULL);
    c = lt_cluster_new(&spec, &err);
    if (c == NULL)
        print_error("lt_cluster_new: %s\n", err.text);
    assert_non_null(c);
    assert_int_equal(err.code, 0);
    assert_check(c);
    return c;
}

static struct lt_cluster *make_four(void)
{
    struct lt_res no_ref = {0.0, 0.0, 0.0};

    return make(four, N_FOUR, no_ref);
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

/* Places t on machine i and expects success; returns the placement id. */
static size_t place_ok(struct lt_cluster *c, size_t i, const struct lt_task *t, unsigned flags)
{
    struct lt_err err;
    size_t pid = LT_NO_MACHINE;
    int rc;

    lt_err_init(&err, NULL);
    rc = lt_cluster_place(c, i, t, flags, &pid, &err);
    if (rc != 0)
        print_error("lt_cluster_place: %s\n", err.text);
    assert_int_equal(rc, 0);
    assert_true(pid != LT_NO_MACHINE);
    assert_true(lt_cluster_placement_live(c, pid));
    assert_check(c);
    return pid;
}

static void remove_ok(struct lt_cluster *c, size_t pid)
{
    struct lt_err err;
    int rc;

    lt_err_init(&err, NULL);
    rc = lt_cluster_remove(c, pid, &err);
    if (rc != 0)
        print_error("lt_cluster_remove: %s\n", err.text);
    assert_int_equal(rc, 0);
    assert_false(lt_cluster_placement_live(c, pid));
    assert_check(c);
}

/* A snapshot of what a failed call must leave unchanged. */
struct snap {
    size_t n, n_online, n_configs, n_placements;
    struct lt_res alloc[8];
    size_t n_tasks[8], first[8];
};

static struct snap take_snap(const struct lt_cluster *c)
{
    struct snap s;

    memset(&s, 0, sizeof(s));
    s.n = lt_cluster_size(c);
    s.n_online = lt_cluster_n_online(c);
    s.n_configs = lt_cluster_n_configs(c);
    s.n_placements = lt_cluster_n_placements(c);
    assert_true(s.n <= 8);
    for (size_t i = 0; i < s.n; i++) {
        s.alloc[i] = lt_cluster_alloc(c, i);
        s.n_tasks[i] = lt_cluster_n_tasks(c, i);
        s.first[i] = lt_cluster_first_placement(c, i);
    }
    return s;
}

static void assert_unchanged(const struct lt_cluster *c, const struct snap *s)
{
    assert_int_equal(lt_cluster_size(c), s->n);
    assert_int_equal(lt_cluster_n_online(c), s->n_online);
    assert_int_equal(lt_cluster_n_configs(c), s->n_configs);
    assert_int_equal(lt_cluster_n_placements(c), s->n_placements);
    for (size_t i = 0; i < s->n; i++) {
        assert_res_eq(lt_cluster_alloc(c, i), s->alloc[i]);
        assert_int_equal(lt_cluster_n_tasks(c, i), s->n_tasks[i]);
        assert_int_equal(lt_cluster_first_placement(c, i), s->first[i]);
    }
    assert_check(c);
}

/* Places t on machine i, expects error code want, and that nothing changed. */
static void place_fails(struct lt_cluster *c, size_t i, const struct lt_task *t, unsigned flags,
                        int want, const char *in_text)
{
    struct snap s = take_snap(c);
    struct lt_err err;
    size_t pid = 12345;

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_place(c, i, t, flags, &pid, &err), want);
    assert_int_equal(err.code, want);
    assert_int_equal(pid, 12345); /* output untouched */
    if (strstr(err.text, in_text) == NULL)
        print_error("message '%s' lacks '%s'\n", err.text, in_text);
    assert_non_null(strstr(err.text, in_text));
    assert_unchanged(c, &s);
}

/* ---- construction ---- */

static void test_cluster_new_keeps_machines_in_spec_order(void **state)
{
    struct lt_cluster *c = make_four();

    (void)state;
    assert_int_equal(lt_cluster_size(c), 4);
    assert_int_equal(lt_cluster_n_online(c), 4);
    assert_int_equal(lt_cluster_n_placements(c), 0);
    assert_int_equal(lt_cluster_seed(c), 77);
    for (size_t i = 0; i < N_FOUR; i++) {
        struct lt_res zero = {0.0, 0.0, 0.0};

        assert_string_equal(lt_cluster_name(c, i), four[i].name);
        assert_ptr_not_equal(lt_cluster_name(c, i), four[i].name); /* copied */
        assert_res_eq(lt_cluster_cap(c, i), four[i].cap);
        assert_res_eq(lt_cluster_alloc(c, i), zero);
        assert_res_eq(lt_cluster_free_res(c, i), four[i].cap);
        assert_true(lt_cluster_online(c, i));
        assert_int_equal(lt_cluster_n_tasks(c, i), 0);
        assert_int_equal(lt_cluster_first_placement(c, i), LT_NO_MACHINE);
    }
    lt_cluster_free(c);
}

static void test_cluster_new_shares_config_ids_between_equal_capacities(void **state)
{
    struct lt_cluster *c = make_four();

    (void)state;
    assert_int_equal(lt_cluster_n_configs(c), 3);
    assert_int_equal(lt_cluster_config(c, 0), lt_cluster_config(c, 2));
    assert_int_not_equal(lt_cluster_config(c, 0), lt_cluster_config(c, 1));
    assert_int_not_equal(lt_cluster_config(c, 0), lt_cluster_config(c, 3));
    assert_int_not_equal(lt_cluster_config(c, 1), lt_cluster_config(c, 3));
    for (size_t i = 0; i < N_FOUR; i++)
        assert_true(lt_cluster_config(c, i) < lt_cluster_n_configs(c));
    lt_cluster_free(c);
}

static void test_cluster_configs_differ_in_any_single_component(void **state)
{
    static const struct lt_machine_spec ms[] = {
        {"base", {1.0, 1.0, 1.0}}, {"cpu", {2.0, 1.0, 1.0}},  {"mem", {1.0, 2.0, 1.0}},
        {"disk", {1.0, 1.0, 2.0}}, {"same", {1.0, 1.0, 1.0}},
    };
    struct lt_res no_ref = {0.0, 0.0, 0.0};
    struct lt_cluster *c = make(ms, 5, no_ref);

    (void)state;
    assert_int_equal(lt_cluster_n_configs(c), 4);
    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(lt_cluster_config(c, i), lt_cluster_config(c, j));
    }
    assert_int_equal(lt_cluster_config(c, 4), lt_cluster_config(c, 0));
    lt_cluster_free(c);
}

static void test_cluster_ref_defaults_to_componentwise_max_capacity(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_res want = {8.0, 8.0, 100.0}; /* cpu from d, mem from a/c, disk from a/c */

    (void)state;
    assert_res_eq(lt_cluster_ref(c), want);
    lt_cluster_free(c);
}

static void test_cluster_explicit_ref_is_kept(void **state)
{
    struct lt_res ref = {1.0, 0.5, 1000.0}; /* below and above the machines: kept as given */
    struct lt_cluster *c = make(four, N_FOUR, ref);

    (void)state;
    assert_res_eq(lt_cluster_ref(c), ref);
    lt_cluster_free(c);
}

static void test_cluster_find_by_name(void **state)
{
    struct lt_cluster *c = make_four();

    (void)state;
    for (size_t i = 0; i < N_FOUR; i++)
        assert_int_equal(lt_cluster_find(c, four[i].name), i);
    assert_int_equal(lt_cluster_find(c, "e"), LT_NO_MACHINE);
    assert_int_equal(lt_cluster_find(c, ""), LT_NO_MACHINE);
    assert_int_equal(lt_cluster_find(c, "aa"), LT_NO_MACHINE);
    assert_int_equal(lt_cluster_find(c, NULL), LT_NO_MACHINE);
    lt_cluster_free(c);
}

static void test_cluster_find_in_a_larger_cluster(void **state)
{
    struct lt_machine_spec ms[300];
    char names[300][16];
    struct lt_res no_ref = {0.0, 0.0, 0.0};
    struct lt_cluster *c;

    (void)state;
    for (size_t i = 0; i < 300; i++) {
        snprintf(names[i], sizeof(names[i]), "node-%zu", i);
        ms[i].name = names[i];
        ms[i].cap.cpu = 1.0 + (double)(i % 3);
        ms[i].cap.mem = 1.0;
        ms[i].cap.disk = 1.0;
    }
    c = make(ms, 300, no_ref);
    assert_int_equal(lt_cluster_n_configs(c), 3);
    for (size_t i = 0; i < 300; i++)
        assert_int_equal(lt_cluster_find(c, names[i]), i);
    assert_int_equal(lt_cluster_find(c, "node-300"), LT_NO_MACHINE);
    lt_cluster_free(c);
}

/* Builds {ok0, bad, ok2} and expects LT_EINVAL with want_text in the message. */
static void assert_new_rejects(const char *bad_name, struct lt_res bad_cap, const char *want_text)
{
    struct lt_machine_spec ms[3] = {
        {"ok0", {1.0, 1.0, 1.0}},
        {bad_name, bad_cap},
        {"ok2", {2.0, 2.0, 2.0}},
    };
    struct lt_cluster_spec spec = {ms, 3, {0.0, 0.0, 0.0}, 1};
    struct lt_err err;

    lt_err_init(&err, NULL);
    assert_null(lt_cluster_new(&spec, &err));
    assert_int_equal(err.code, LT_EINVAL);
    if (strstr(err.text, want_text) == NULL)
        print_error("message '%s' lacks '%s'\n", err.text, want_text);
    assert_non_null(strstr(err.text, want_text));
    /* NULL err is accepted too. */
    assert_null(lt_cluster_new(&spec, NULL));
}

static void test_cluster_new_rejects_zero_capacity(void **state)
{
    struct lt_res cap = {1.0, 0.0, 1.0};

    (void)state;
    assert_new_rejects("zero", cap, "machine 'zero'");
}

static void test_cluster_new_rejects_negative_capacity(void **state)
{
    struct lt_res cap = {-1.0, 1.0, 1.0};

    (void)state;
    assert_new_rejects("neg", cap, "machine 'neg'");
}

static void test_cluster_new_rejects_nan_capacity(void **state)
{
    struct lt_res cap = {1.0, 1.0, NAN};

    (void)state;
    assert_new_rejects("nan", cap, "machine 'nan'");
}

static void test_cluster_new_rejects_infinite_capacity(void **state)
{
    struct lt_res cap = {1.0, INFINITY, 1.0};

    (void)state;
    assert_new_rejects("inf", cap, "machine 'inf'");
}

static void test_cluster_new_rejects_empty_name(void **state)
{
    struct lt_res cap = {1.0, 1.0, 1.0};

    (void)state;
    /* The machine has no name, so the message names its position in the spec. */
    assert_new_rejects("", cap, "machine 1");
}

static void test_cluster_new_rejects_too_long_name(void **state)
{
    char name[LT_MAX_NAME + 2];
    struct lt_res cap = {1.0, 1.0, 1.0};

    (void)state;
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    assert_new_rejects(name, cap, "machine 1");
}

static void test_cluster_new_accepts_longest_name(void **state)
{
    char name[LT_MAX_NAME + 1];
    struct lt_machine_spec ms[1] = {{name, {1.0, 1.0, 1.0}}};
    struct lt_res no_ref = {0.0, 0.0, 0.0};
    struct lt_cluster *c;

    (void)state;
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    c = make(ms, 1, no_ref);
    assert_int_equal(lt_cluster_find(c, name), 0);
    lt_cluster_free(c);
}

static void test_cluster_new_rejects_duplicate_name(void **state)
{
    struct lt_res cap = {3.0, 3.0, 3.0};

    (void)state;
    assert_new_rejects("ok0", cap, "'ok0'");
}

static void test_cluster_new_rejects_no_machines_without_ref(void **state)
{
    struct lt_cluster_spec spec = {NULL, 0, {0.0, 0.0, 0.0}, 1};
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_null(lt_cluster_new(&spec, &err));
    assert_int_equal(err.code, LT_EINVAL);
    assert_non_null(strstr(err.text, "'ref'"));
}

static void test_cluster_new_rejects_bad_explicit_ref(void **state)
{
    struct lt_cluster_spec spec = {four, N_FOUR, {1.0, 0.0, 1.0}, 1};
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_null(lt_cluster_new(&spec, &err));
    assert_int_equal(err.code, LT_EINVAL);
    assert_non_null(strstr(err.text, "'ref'"));
}

static void test_cluster_new_with_ref_and_no_machines_is_empty(void **state)
{
    struct lt_res ref = {1.0, 2.0, 3.0};
    struct lt_cluster *c = make(NULL, 0, ref);

    (void)state;
    assert_int_equal(lt_cluster_size(c), 0);
    assert_int_equal(lt_cluster_n_online(c), 0);
    assert_int_equal(lt_cluster_n_configs(c), 0);
    assert_res_eq(lt_cluster_ref(c), ref);
    assert_int_equal(lt_cluster_find(c, "a"), LT_NO_MACHINE);
    lt_cluster_free(c);
    lt_cluster_free(NULL); /* a no-op */
}

/* ---- placement ---- */

static void test_cluster_place_rejects_task_that_does_not_fit(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task too_much_mem = task(7, 1.0, 4.5, 1.0);
    struct lt_task too_much_disk = task(8, 0.5, 0.5, 50.5);
    struct lt_task small = task(9, 1.0, 1.0, 1.0);

    (void)state;
    place_fails(c, 1, &too_much_mem, 0, LT_ERANGE, "task 7 does not fit on machine 'b'");
    place_fails(c, 1, &too_much_disk, 0, LT_ERANGE, "'b'");
    (void)place_ok(c, 1, &small, 0);
    /* Now 1.0 cpu is left on b: 1.5 does not fit, and nothing changes. */
    small.req.cpu = 1.5;
    place_fails(c, 1, &small, 0, LT_ERANGE, "'b'");
    assert_false(lt_cluster_fits(c, 1, &small.req));
    lt_cluster_free(c);
}

static void test_cluster_place_accepts_exact_fit(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task half = task(1, 1.0, 2.0, 25.0);
    struct lt_task zero = task(2, 0.0, 0.0, 0.0);
    struct lt_task tiny = task(3, 0.0, 0.0, 0x1.0p-40);
    struct lt_res none = {0.0, 0.0, 0.0};

    (void)state;
    /* b has (2, 4, 50): two halves fill it exactly. */
    (void)place_ok(c, 1, &half, 0);
    assert_true(lt_cluster_fits(c, 1, &half.req)); /* free == request */
    (void)place_ok(c, 1, &half, 0);
    assert_res_eq(lt_cluster_free_res(c, 1), none);
    /* A full machine still takes a zero request (free >= 0), nothing more. */
    assert_true(lt_cluster_fits(c, 1, &zero.req));
    (void)place_ok(c, 1, &zero, 0);
    assert_false(lt_cluster_fits(c, 1, &tiny.req));
    place_fails(c, 1, &tiny, 0, LT_ERANGE, "'b'");
    assert_int_equal(lt_cluster_n_tasks(c, 1), 3);
    lt_cluster_free(c);
}

static void test_cluster_place_force_overcommits_and_then_nothing_fits(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task big = task(1, 3.0, 1.0, 1.0); /* b has only 2 cpu */
    struct lt_task zero = task(2, 0.0, 0.0, 0.0);
    struct lt_task back = task(3, 0.0, 0.0, 0.0);
    size_t pid;

    (void)state;
    place_fails(c, 1, &big, 0, LT_ERANGE, "'b'");
    pid = place_ok(c, 1, &big, LT_PLACE_FORCE);
    lt_assert_near(lt_cluster_free_res(c, 1).cpu, -1.0, 0.0);
    lt_assert_near(lt_cluster_alloc(c, 1).cpu, 3.0, 0.0);
    /* Overcommitted: not even a zero request fits, unless forced. */
    assert_false(lt_cluster_fits(c, 1, &zero.req));
    place_fails(c, 1, &zero, 0, LT_ERANGE, "'b'");
    (void)place_ok(c, 1, &back, LT_PLACE_FORCE);
    assert_int_equal(lt_cluster_n_tasks(c, 1), 2);
    /* Removing the big task gives the room back. */
    remove_ok(c, pid);
    assert_true(lt_cluster_fits(c, 1, &zero.req));
    lt_cluster_free(c);
}

/* Kubernetes' fit checks only the requested components: the machine overcommitted in cpu
 * takes a request of no cpu, but not one of any cpu; lt_cluster_fits refuses both. */
static void test_cluster_fits_requested_ignores_unrequested_components(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task big = task(1, 3.0, 1.0, 1.0); /* b has 2 cpu, 4 mem, 4 disk */
    const struct lt_res mem_only = {0.0, 1.0, 0.0}, nothing = {0.0, 0.0, 0.0},
                        some_cpu = {0.25, 1.0, 0.0}, too_much_mem = {0.0, 3.5, 0.0};
    const struct lt_res f = {-1.0, 3.0, 0.0};

    (void)state;
    (void)place_ok(c, 1, &big, LT_PLACE_FORCE);
    assert_true(lt_cluster_fits_requested(c, 1, &mem_only));
    assert_true(lt_cluster_fits_requested(c, 1, &nothing));
    assert_false(lt_cluster_fits_requested(c, 1, &some_cpu));
    assert_false(lt_cluster_fits_requested(c, 1, &too_much_mem));
    assert_false(lt_cluster_fits(c, 1, &mem_only));
    assert_false(lt_cluster_fits(c, 1, &nothing));
    assert_true(lt_res_fits_requested(&f, &mem_only));
    assert_false(lt_res_fits_requested(&f, &some_cpu));
    lt_cluster_free(c);
}

static void test_cluster_place_rejects_bad_requests(void **state)
{
    const double bad[] = {NAN, -1.0, -0x1.0p-60, INFINITY, -INFINITY};
    struct lt_cluster *c = make_four();

    (void)state;
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        for (int dim = 0; dim < 3; dim++) {
            struct lt_task t = task(1, 0.5, 0.5, 0.5);
            double *x = dim == 0 ? &t.req.cpu : dim == 1 ? &t.req.mem : &t.req.disk;

            *x = bad[k];
            place_fails(c, 0, &t, 0, LT_EINVAL, "request must be finite and >= 0");
            place_fails(c, 0, &t, LT_PLACE_FORCE, LT_EINVAL, "request");
        }
    }
    lt_cluster_free(c);
}

static void test_cluster_place_rejects_offline_machine(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_set_online(c, 2, false, &err), 0);
    assert_check(c);
    place_fails(c, 2, &t, 0, LT_ERANGE, "machine 'c' is offline");
    place_fails(c, 2, &t, LT_PLACE_FORCE, LT_ERANGE, "offline");
    lt_cluster_free(c);
}

static void test_cluster_place_rejects_out_of_range_machine(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(1, 0.5, 0.5, 0.5);

    (void)state;
    place_fails(c, 4, &t, 0, LT_EINVAL, "out of range");
    place_fails(c, LT_NO_MACHINE, &t, LT_PLACE_FORCE, LT_EINVAL, "out of range");
    lt_cluster_free(c);
}

static void test_cluster_place_rejects_null_task(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_err err;
    size_t pid;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_place(c, 0, NULL, 0, &pid, &err), LT_EINVAL);
    assert_int_equal(lt_cluster_place(c, 0, &t, 0, NULL, NULL), LT_EINVAL);
    assert_int_equal(lt_cluster_n_placements(c), 0);
    assert_check(c);
    lt_cluster_free(c);
}

static void test_cluster_allocation_is_the_sum_of_requests(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t1 = task(1, 0.5, 1.25, 10.0);
    struct lt_task t2 = task(2, 1.5, 0.75, 0.0);
    struct lt_task t3 = task(3, 0.25, 2.0, 40.5);
    struct lt_res after2 = {2.0, 2.0, 10.0}, after3 = {2.25, 4.0, 50.5};
    struct lt_res free3 = {1.75, 4.0, 49.5};

    (void)state;
    (void)place_ok(c, 0, &t1, 0);
    (void)place_ok(c, 0, &t2, 0);
    assert_res_eq(lt_cluster_alloc(c, 0), after2);
    (void)place_ok(c, 0, &t3, 0);
    assert_res_eq(lt_cluster_alloc(c, 0), after3);
    assert_res_eq(lt_cluster_free_res(c, 0), free3);
    assert_int_equal(lt_cluster_n_tasks(c, 0), 3);
    assert_int_equal(lt_cluster_n_placements(c), 3);
    /* The machine with the same configuration is untouched. */
    assert_res_eq(lt_cluster_free_res(c, 2), four[2].cap);
    assert_int_equal(lt_cluster_n_tasks(c, 2), 0);
    lt_cluster_free(c);
}

static void test_cluster_remove_restores_allocation(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t1 = task(1, 0.5, 1.25, 10.0);
    struct lt_task t2 = task(2, 1.5, 0.75, 0.5);
    struct lt_res only1 = {0.5, 1.25, 10.0};
    size_t p1, p2;

    (void)state;
    p1 = place_ok(c, 0, &t1, 0);
    p2 = place_ok(c, 0, &t2, 0);
    assert_int_not_equal(p1, p2);
    remove_ok(c, p2);
    assert_res_eq(lt_cluster_alloc(c, 0), only1);
    assert_int_equal(lt_cluster_n_tasks(c, 0), 1);
    assert_int_equal(lt_cluster_n_placements(c), 1);
    remove_ok(c, p1);
    assert_res_eq(lt_cluster_free_res(c, 0), four[0].cap);
    assert_int_equal(lt_cluster_n_tasks(c, 0), 0);
    assert_int_equal(lt_cluster_n_placements(c), 0);
    assert_int_equal(lt_cluster_first_placement(c, 0), LT_NO_MACHINE);
    lt_cluster_free(c);
}

static void test_cluster_remove_rejects_dead_or_out_of_range_pid(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_err err;
    struct snap s;
    size_t pid, keep;

    (void)state;
    pid = place_ok(c, 0, &t, 0);
    keep = place_ok(c, 1, &t, 0);
    remove_ok(c, pid);
    s = take_snap(c);

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_remove(c, pid, &err), LT_EINVAL); /* removed twice */
    assert_int_equal(err.code, LT_EINVAL);
    assert_non_null(strstr(err.text, "not live"));
    assert_unchanged(c, &s);

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_remove(c, keep + 1000, &err), LT_EINVAL);
    assert_int_equal(lt_cluster_remove(c, LT_NO_MACHINE, NULL), LT_EINVAL);
    assert_int_equal(err.code, LT_EINVAL);
    assert_unchanged(c, &s);
    assert_true(lt_cluster_placement_live(c, keep));
    assert_false(lt_cluster_placement_live(c, pid));
    assert_false(lt_cluster_placement_live(c, LT_NO_MACHINE));
    lt_cluster_free(c);
}

static void test_cluster_removing_all_tasks_leaves_exactly_zero(void **state)
{
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const double req[3] = {0.1, 0.2, 0.3};

    (void)state;
    /* Every placement order times every removal order. 0.1 + 0.2 + 0.3 in floating point
     * does not come back to 0 by subtraction in every order; the cluster must reset it. */
    for (size_t pp = 0; pp < 6; pp++) {
        for (size_t rp = 0; rp < 6; rp++) {
            struct lt_cluster *c = make_four();
            size_t pid[3];

            for (int k = 0; k < 3; k++) {
                double x = req[perms[pp][k]];
                struct lt_task t = task(k, x, x, x);
                pid[perms[pp][k]] = place_ok(c, 3, &t, 0);
            }
            lt_assert_near(lt_cluster_alloc(c, 3).cpu, 0.6, 1e-15);
            for (int k = 0; k < 3; k++)
                remove_ok(c, pid[perms[rp][k]]);
            assert_true(is_zero(lt_cluster_alloc(c, 3).cpu));
            assert_true(is_zero(lt_cluster_alloc(c, 3).mem));
            assert_true(is_zero(lt_cluster_alloc(c, 3).disk));
            assert_res_eq(lt_cluster_free_res(c, 3), four[3].cap);
            lt_cluster_free(c);
        }
    }
}

/* Collects the placement ids of machine i, newest first. */
static size_t walk(const struct lt_cluster *c, size_t i, size_t *out, size_t max)
{
    size_t n = 0;

    for (size_t p = lt_cluster_first_placement(c, i); p != LT_NO_MACHINE;
         p = lt_cluster_next_placement(c, p)) {
        assert_true(n < max);
        assert_int_equal(lt_cluster_placement_machine(c, p), i);
        out[n++] = p;
    }
    return n;
}

static void test_cluster_placements_iterate_newest_first(void **state)
{
    struct lt_cluster *c = make_four();
    size_t pid[5], got[8];

    (void)state;
    for (int k = 0; k < 5; k++) {
        struct lt_task t = task(100 + k, 0.25, 0.25, 0.25);
        pid[k] = place_ok(c, 0, &t, 0);
    }
    {
        struct lt_task other = task(999, 0.25, 0.25, 0.25);
        (void)place_ok(c, 2, &other, 0); /* another machine's list stays separate */
    }
    assert_int_equal(walk(c, 0, got, 8), 5);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(got[k], pid[4 - k]);
        assert_int_equal(lt_cluster_placement_task(c, got[k])->id, 104 - k);
    }
    /* Remove the middle one: the walk skips it and keeps the order. */
    remove_ok(c, pid[2]);
    assert_int_equal(walk(c, 0, got, 8), 4);
    assert_int_equal(got[0], pid[4]);
    assert_int_equal(got[1], pid[3]);
    assert_int_equal(got[2], pid[1]);
    assert_int_equal(got[3], pid[0]);
    /* Remove the newest and the oldest. */
    remove_ok(c, pid[4]);
    remove_ok(c, pid[0]);
    assert_int_equal(walk(c, 0, got, 8), 2);
    assert_int_equal(got[0], pid[3]);
    assert_int_equal(got[1], pid[1]);
    assert_int_equal(walk(c, 2, got, 8), 1);
    lt_cluster_free(c);
}

static void test_cluster_placements_may_be_removed_during_the_walk(void **state)
{
    struct lt_cluster *c = make_four();
    size_t removed = 0;

    (void)state;
    for (int k = 0; k < 6; k++) {
        struct lt_task t = task(k, 0.25, 0.25, 0.25);
        (void)place_ok(c, 0, &t, 0);
    }
    /* Remove the tasks with an even id while walking, reading the successor first. */
    for (size_t p = lt_cluster_first_placement(c, 0), next; p != LT_NO_MACHINE; p = next) {
        next = lt_cluster_next_placement(c, p);
        if (lt_cluster_placement_task(c, p)->id % 2 == 0) {
            remove_ok(c, p);
            removed++;
        }
    }
    assert_int_equal(removed, 3);
    assert_int_equal(lt_cluster_n_tasks(c, 0), 3);
    lt_assert_near(lt_cluster_alloc(c, 0).cpu, 0.75, 0.0);
    {
        size_t got[8];
        int64_t want_id = 5;

        assert_int_equal(walk(c, 0, got, 8), 3);
        for (size_t k = 0; k < 3; k++, want_id -= 2)
            assert_int_equal(lt_cluster_placement_task(c, got[k])->id, want_id);
    }
    lt_cluster_free(c);
}

static void test_cluster_placement_returns_a_copy_of_the_task(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(INT64_C(1) << 40, 0.5, 0.25, 2.0);
    const struct lt_task *copy;
    size_t pid;

    (void)state;
    t.job_id = 17;
    t.priority = 9;
    t.sched_class = 3;
    t.mem_usage = 0.125;
    t.arrival_us = INT64_C(123456789012);
    t.start_us = INT64_C(223456789012);
    t.evictions = 4;
    t.sticky = true;
    pid = place_ok(c, 3, &t, 0);
    copy = lt_cluster_placement_task(c, pid);
    assert_ptr_not_equal(copy, &t);
    assert_memory_equal(copy, &t, sizeof(t));
    assert_int_equal(lt_cluster_placement_machine(c, pid), 3);
    /* Changing the caller's task afterwards changes nothing in the cluster. */
    t.id = 1;
    t.req.cpu = 100.0;
    assert_true(copy->id == (INT64_C(1) << 40));
    lt_assert_near(copy->req.cpu, 0.5, 0.0);
    lt_assert_near(lt_cluster_alloc(c, 3).cpu, 0.5, 0.0);
    lt_cluster_free(c);
}

static void test_cluster_placement_after_removal_is_the_new_task(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task a = task(1, 0.25, 0.25, 0.25), b = task(2, 0.5, 0.5, 0.5);
    size_t p1, p2;

    (void)state;
    p1 = place_ok(c, 0, &a, 0);
    remove_ok(c, p1);
    p2 = place_ok(c, 1, &b, 0);
    /* Whether or not the slot is reused, the live placement is the new one. */
    assert_int_equal(lt_cluster_placement_task(c, p2)->id, 2);
    assert_int_equal(lt_cluster_placement_machine(c, p2), 1);
    assert_int_equal(lt_cluster_n_tasks(c, 0), 0);
    assert_int_equal(lt_cluster_first_placement(c, 0), LT_NO_MACHINE);
    lt_cluster_free(c);
}

/* ---- online / offline ---- */

static void test_cluster_set_online_refuses_machine_with_tasks(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(1, 0.5, 0.5, 0.5);
    struct lt_err err;
    size_t pid;

    (void)state;
    pid = place_ok(c, 1, &t, 0);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_set_online(c, 1, false, &err), LT_EINVAL);
    assert_int_equal(err.code, LT_EINVAL);
    assert_non_null(strstr(err.text, "machine 'b'"));
    assert_non_null(strstr(err.text, "remove"));
    assert_true(lt_cluster_online(c, 1));
    assert_int_equal(lt_cluster_n_online(c), 4);
    assert_check(c);
    remove_ok(c, pid);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_set_online(c, 1, false, &err), 0);
    assert_false(lt_cluster_online(c, 1));
    assert_check(c);
    lt_cluster_free(c);
}

static void test_cluster_set_online_toggles_and_offline_fits_nothing(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_res zero = {0.0, 0.0, 0.0}, small = {0.5, 0.5, 0.5};
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_true(lt_cluster_fits(c, 3, &small));
    assert_int_equal(lt_cluster_set_online(c, 3, false, &err), 0);
    assert_check(c);
    assert_int_equal(lt_cluster_n_online(c), 3);
    assert_false(lt_cluster_online(c, 3));
    assert_false(lt_cluster_fits(c, 3, &small));
    assert_false(lt_cluster_fits(c, 3, &zero));
    /* Going offline twice is a no-op. */
    assert_int_equal(lt_cluster_set_online(c, 3, false, &err), 0);
    assert_int_equal(lt_cluster_n_online(c), 3);
    assert_int_equal(lt_cluster_set_online(c, 0, false, &err), 0);
    assert_int_equal(lt_cluster_n_online(c), 2);
    assert_check(c);
    /* Back online: fits again, with its capacity intact. */
    assert_int_equal(lt_cluster_set_online(c, 3, true, &err), 0);
    assert_check(c);
    assert_int_equal(lt_cluster_n_online(c), 3);
    assert_true(lt_cluster_online(c, 3));
    assert_true(lt_cluster_fits(c, 3, &small));
    assert_res_eq(lt_cluster_free_res(c, 3), four[3].cap);
    assert_int_equal(lt_cluster_set_online(c, 3, true, &err), 0);
    assert_int_equal(lt_cluster_n_online(c), 3);
    assert_int_equal(err.code, 0);
    /* Out of range. */
    assert_int_equal(lt_cluster_set_online(c, 4, false, &err), LT_EINVAL);
    assert_int_equal(err.code, LT_EINVAL);
    assert_int_equal(lt_cluster_n_online(c), 3);
    assert_check(c);
    lt_cluster_free(c);
}

/* ---- adding machines ---- */

static void test_cluster_add_machine_appends(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_machine_spec same = {"e", {2.0, 4.0, 50.0}};    /* b's configuration */
    struct lt_machine_spec bigger = {"f", {16.0, 16.0, 1e3}}; /* new, above ref */
    struct lt_res ref_before = lt_cluster_ref(c);
    struct lt_err err;
    size_t idx = 99;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_add_machine(c, &same, &idx, &err), 0);
    assert_check(c);
    assert_int_equal(idx, 4);
    assert_int_equal(lt_cluster_size(c), 5);
    assert_int_equal(lt_cluster_n_online(c), 5);
    assert_int_equal(lt_cluster_n_configs(c), 3);
    assert_int_equal(lt_cluster_config(c, 4), lt_cluster_config(c, 1));
    assert_string_equal(lt_cluster_name(c, 4), "e");
    assert_int_equal(lt_cluster_find(c, "e"), 4);
    assert_true(lt_cluster_online(c, 4));
    assert_int_equal(lt_cluster_n_tasks(c, 4), 0);

    assert_int_equal(lt_cluster_add_machine(c, &bigger, &idx, &err), 0);
    assert_check(c);
    assert_int_equal(idx, 5);
    assert_int_equal(lt_cluster_n_configs(c), 4);
    assert_int_equal(lt_cluster_config(c, 5), 3);
    assert_res_eq(lt_cluster_cap(c, 5), bigger.cap);
    /* ref stays what it was at creation. */
    assert_res_eq(lt_cluster_ref(c), ref_before);
    /* Existing machines are where they were. */
    for (size_t i = 0; i < N_FOUR; i++)
        assert_int_equal(lt_cluster_find(c, four[i].name), i);
    lt_cluster_free(c);
}

static void test_cluster_add_machine_grows_past_initial_capacity(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_err err;
    char names[64][8];

    (void)state;
    lt_err_init(&err, NULL);
    /* Enough additions to regrow the machine array and the name table. */
    for (size_t k = 0; k < 64; k++) {
        struct lt_machine_spec ms = {names[k], {1.0, 1.0, 1.0}};
        size_t idx;

        snprintf(names[k], sizeof(names[k]), "x%zu", k);
        assert_int_equal(lt_cluster_add_machine(c, &ms, &idx, &err), 0);
        assert_int_equal(idx, N_FOUR + k);
        assert_check(c);
    }
    for (size_t k = 0; k < 64; k++)
        assert_int_equal(lt_cluster_find(c, names[k]), N_FOUR + k);
    for (size_t i = 0; i < N_FOUR; i++)
        assert_int_equal(lt_cluster_find(c, four[i].name), i);
    lt_cluster_free(c);
}

static void assert_add_rejected(struct lt_cluster *c, const struct lt_machine_spec *ms,
                                const char *want_text)
{
    struct snap s = take_snap(c);
    struct lt_res ref = lt_cluster_ref(c);
    struct lt_err err;
    size_t idx = 99;

    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_add_machine(c, ms, &idx, &err), LT_EINVAL);
    assert_int_equal(err.code, LT_EINVAL);
    assert_int_equal(idx, 99);
    if (strstr(err.text, want_text) == NULL)
        print_error("message '%s' lacks '%s'\n", err.text, want_text);
    assert_non_null(strstr(err.text, want_text));
    assert_unchanged(c, &s);
    assert_res_eq(lt_cluster_ref(c), ref);
}

static void test_cluster_add_machine_rejects_and_leaves_cluster_unchanged(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_machine_spec dup = {"c", {1.0, 1.0, 1.0}};
    struct lt_machine_spec zero = {"z", {1.0, 1.0, 0.0}};
    struct lt_machine_spec nan = {"n", {NAN, 1.0, 1.0}};
    struct lt_machine_spec empty = {"", {1.0, 1.0, 1.0}};
    struct lt_task t = task(1, 0.5, 0.5, 0.5);

    (void)state;
    (void)place_ok(c, 2, &t, 0);
    assert_add_rejected(c, &dup, "'c'");
    assert_int_equal(lt_cluster_find(c, "c"), 2);
    assert_add_rejected(c, &zero, "machine 'z'");
    assert_int_equal(lt_cluster_find(c, "z"), LT_NO_MACHINE);
    assert_add_rejected(c, &nan, "machine 'n'");
    assert_add_rejected(c, &empty, "machine 4");
    assert_int_equal(lt_cluster_add_machine(c, NULL, NULL, NULL), LT_EINVAL);
    assert_check(c);
    lt_cluster_free(c);
}

static void test_cluster_add_machine_to_empty_cluster(void **state)
{
    struct lt_res ref = {4.0, 4.0, 4.0};
    struct lt_cluster *c = make(NULL, 0, ref);
    struct lt_machine_spec m0 = {"m0", {2.0, 2.0, 2.0}}, m1 = {"m1", {2.0, 2.0, 2.0}};
    struct lt_machine_spec dup = {"m0", {2.0, 2.0, 2.0}};
    struct lt_err err;
    size_t idx;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_cluster_add_machine(c, &m0, &idx, &err), 0);
    assert_check(c);
    assert_int_equal(idx, 0);
    assert_int_equal(lt_cluster_add_machine(c, &m1, &idx, &err), 0);
    assert_check(c);
    assert_int_equal(idx, 1);
    assert_int_equal(lt_cluster_n_configs(c), 1);
    assert_int_equal(lt_cluster_find(c, "m1"), 1);
    assert_add_rejected(c, &dup, "'m0'");
    assert_res_eq(lt_cluster_ref(c), ref);
    lt_cluster_free(c);
}

static void test_cluster_add_machine_keeps_attached_index_exact(void **state)
{
    struct lt_cluster *c = make_four();
    const struct lt_policy *ff = lt_policy_find("firstfit", NULL);
    struct lt_machine_spec huge = {"huge", {64.0, 64.0, 64.0}};
    struct lt_task t = task(1, 32.0, 32.0, 32.0);
    struct lt_err err;
    size_t idx, m = 0;

    (void)state;
    lt_err_init(&err, NULL);
    assert_non_null(ff);
    assert_int_equal(lt_policy_attach(ff, c, &err), 0);
    assert_check(c);
    assert_int_equal(lt_policy_choose(ff, c, &t, NULL, &m, &err), 0);
    assert_int_equal(m, LT_NO_MACHINE);
    assert_int_equal(lt_cluster_add_machine(c, &huge, &idx, &err), 0);
    assert_check(c);
    assert_int_equal(lt_policy_choose(ff, c, &t, NULL, &m, &err), 0);
    assert_int_equal(m, idx);
    (void)place_ok(c, idx, &t, 0);
    assert_int_equal(lt_policy_choose(ff, c, &t, NULL, &m, &err), 0);
    assert_int_equal(m, 4);
    lt_cluster_free(c);
}

/* lt_cluster.h: the task pointer of a placement is "valid until the placement is removed".
 * Enough further placements to regrow the placement storage must not move it. (Kept last in
 * main(): if the pointer dangles, ASan stops the whole program.) */
static void test_cluster_placement_task_stays_valid_while_placement_lives(void **state)
{
    struct lt_cluster *c = make_four();
    struct lt_task t = task(4242, 0.0, 0.0, 0.0);
    const struct lt_task *held;
    size_t first;

    (void)state;
    t.priority = 7;
    first = place_ok(c, 0, &t, 0);
    held = lt_cluster_placement_task(c, first);
    for (int k = 1; k < 300; k++) {
        struct lt_task other = task(k, 0.0, 0.0, 0.0);
        (void)place_ok(c, 1, &other, 0);
    }
    assert_true(lt_cluster_placement_live(c, first));
    assert_ptr_equal(held, lt_cluster_placement_task(c, first));
    assert_true(held->id == 4242);
    assert_int_equal(held->priority, 7);
    lt_cluster_free(c);
}

/* Placing a copy of a live placement's task (moving a task: place the copy elsewhere, then
 * remove the original) must work whatever the number of placements. */
static void test_cluster_place_accepts_task_of_a_live_placement(void **state)
{
    struct lt_cluster *c = make_four();
    size_t first = LT_NO_MACHINE, moved;

    (void)state;
    /* 64 placements fill the first block of placement storage exactly. */
    for (int k = 0; k < 64; k++) {
        struct lt_task t = task(1000 + k, 0.0, 0.0, 0.0);
        size_t pid = place_ok(c, 0, &t, 0);
        if (k == 0)
            first = pid;
    }
    moved = place_ok(c, 2, lt_cluster_placement_task(c, first), 0);
    assert_true(lt_cluster_placement_task(c, moved)->id == 1000);
    remove_ok(c, first);
    assert_int_equal(lt_cluster_n_tasks(c, 0), 63);
    assert_int_equal(lt_cluster_n_tasks(c, 2), 1);
    lt_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_new_keeps_machines_in_spec_order),
        cmocka_unit_test(test_cluster_fits_requested_ignores_unrequested_components),
        cmocka_unit_test(test_cluster_new_shares_config_ids_between_equal_capacities),
        cmocka_unit_test(test_cluster_configs_differ_in_any_single_component),
        cmocka_unit_test(test_cluster_ref_defaults_to_componentwise_max_capacity),
        cmocka_unit_test(test_cluster_explicit_ref_is_kept),
        cmocka_unit_test(test_cluster_find_by_name),
        cmocka_unit_test(test_cluster_find_in_a_larger_cluster),
        cmocka_unit_test(test_cluster_new_rejects_zero_capacity),
        cmocka_unit_test(test_cluster_new_rejects_negative_capacity),
        cmocka_unit_test(test_cluster_new_rejects_nan_capacity),
        cmocka_unit_test(test_cluster_new_rejects_infinite_capacity),
        cmocka_unit_test(test_cluster_new_rejects_empty_name),
        cmocka_unit_test(test_cluster_new_rejects_too_long_name),
        cmocka_unit_test(test_cluster_new_accepts_longest_name),
        cmocka_unit_test(test_cluster_new_rejects_duplicate_name),
        cmocka_unit_test(test_cluster_new_rejects_no_machines_without_ref),
        cmocka_unit_test(test_cluster_new_rejects_bad_explicit_ref),
        cmocka_unit_test(test_cluster_new_with_ref_and_no_machines_is_empty),
        cmocka_unit_test(test_cluster_place_rejects_task_that_does_not_fit),
        cmocka_unit_test(test_cluster_place_accepts_exact_fit),
        cmocka_unit_test(test_cluster_place_force_overcommits_and_then_nothing_fits),
        cmocka_unit_test(test_cluster_place_rejects_bad_requests),
        cmocka_unit_test(test_cluster_place_rejects_offline_machine),
        cmocka_unit_test(test_cluster_place_rejects_out_of_range_machine),
        cmocka_unit_test(test_cluster_place_rejects_null_task),
        cmocka_unit_test(test_cluster_allocation_is_the_sum_of_requests),
        cmocka_unit_test(test_cluster_remove_restores_allocation),
        cmocka_unit_test(test_cluster_remove_rejects_dead_or_out_of_range_pid),
        cmocka_unit_test(test_cluster_removing_all_tasks_leaves_exactly_zero),
        cmocka_unit_test(test_cluster_placements_iterate_newest_first),
        cmocka_unit_test(test_cluster_placements_may_be_removed_during_the_walk),
        cmocka_unit_test(test_cluster_placement_returns_a_copy_of_the_task),
        cmocka_unit_test(test_cluster_placement_after_removal_is_the_new_task),
        cmocka_unit_test(test_cluster_set_online_refuses_machine_with_tasks),
        cmocka_unit_test(test_cluster_set_online_toggles_and_offline_fits_nothing),
        cmocka_unit_test(test_cluster_add_machine_appends),
        cmocka_unit_test(test_cluster_add_machine_grows_past_initial_capacity),
        cmocka_unit_test(test_cluster_add_machine_rejects_and_leaves_cluster_unchanged),
        cmocka_unit_test(test_cluster_add_machine_to_empty_cluster),
        cmocka_unit_test(test_cluster_add_machine_keeps_attached_index_exact),
        cmocka_unit_test(test_cluster_place_accepts_task_of_a_live_placement),
        cmocka_unit_test(test_cluster_placement_task_stays_valid_while_placement_lives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
