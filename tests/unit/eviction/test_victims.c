/* test_victims.c -- priority eviction on one machine (eviction/lt_evict.h): the mrs, lrs and
 * rnd orders, the lowest priority first, sticky tasks, the reprieve that makes the set
 * minimal, "cannot be helped" as an answer, seeded determinism and fairness of rnd, and bad
 * input. Every expected victim set is worked out by hand in the comment above its test.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdbool.h>
#include <string.h>

#include "lt_evict.h"

static const struct lt_evict_policy *pol(const char *name)
{
    struct lt_err err;
    lt_err_init(&err, NULL);
    const struct lt_evict_policy *p = lt_evict_find(name, &err);
    assert_non_null(p);
    return p;
}

/* Machine cap (4, 4, 4). Running: A prio 1 started at 10 wants 2 cpu; B prio 1 started at 20
 * wants 1 cpu; C prio 5 started at 5 wants 1 cpu. All 4 cpus are taken. */
static const struct lt_res cap4 = {4, 4, 4};
static const struct lt_victim_cand abc[] = {
    {1, 1, 10, {2, 0, 0}, false}, /* A */
    {2, 1, 20, {1, 0, 0}, false}, /* B */
    {3, 5, 5, {1, 0, 0}, false},  /* C */
};

static void choose(const char *name, const struct lt_res *req, int prio,
                   const struct lt_victim_cand *cand, size_t n, struct lt_rng *rng, size_t *out,
                   size_t *n_out, bool *fits)
{
    struct lt_err err;
    lt_err_init(&err, NULL);
    int rc = lt_victims_choose(pol(name), &cap4, req, prio, cand, n, rng, out, n_out, fits, &err);
    if (rc != 0)
        fail_msg("%s", err.text);
}

/* mrs for a prio-3 task wanting 2 cpu: the lowest running priority below 3 is 1 (A, B); the
 * most recently started is B (20) -> free 1 cpu, not enough; then A -> free 3, fits. Reprieve,
 * last chosen first: without A only 1 cpu is free -> A stays a victim; B given back leaves
 * 4 - (1 C + 1 B) = 2 free >= 2 -> B is spared. Victims: {A}. */
static void test_mrs_then_reprieve(void **state)
{
    struct lt_res req = {2, 1, 1};
    size_t out[3], n;
    bool fits;
    (void)state;
    choose("mrs", &req, 3, abc, 3, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 0);
}

/* lrs: A (started at 10) first -> free 2, fits. Victims: {A}. With 3 cpus wanted: A then B
 * -> free 3, fits; reprieve B (last) -> free 2 < 3, keep; reprieve A -> free 1, keep. */
static void test_lrs(void **state)
{
    struct lt_res req = {2, 0, 0}, big = {3, 0, 0};
    size_t out[3], n;
    bool fits;
    (void)state;
    choose("lrs", &req, 3, abc, 3, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 0);
    choose("lrs", &big, 3, abc, 3, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 1);
}

/* Only lower priorities are victims: a prio-5 task wanting 4 cpus could take A and B (3 cpus)
 * but C (prio 5, not lower) stays -> cannot be helped. A prio-6 task can evict all three:
 * mrs takes B, A (prio 1), then C (prio 5) -> 4 free; nothing can be given back. */
static void test_only_lower_priorities(void **state)
{
    struct lt_res req = {4, 0, 0};
    size_t out[3], n;
    bool fits;
    (void)state;
    choose("mrs", &req, 5, abc, 3, NULL, out, &n, &fits);
    assert_false(fits);
    assert_int_equal(n, 0);
    choose("mrs", &req, 6, abc, 3, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 3);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 2);
}

/* Sticky A: mrs may take only B (1 cpu) -> 1 free < 2: cannot be helped. */
static void test_sticky_never_evicted(void **state)
{
    struct lt_victim_cand c[3];
    struct lt_res req = {2, 0, 0};
    size_t out[3], n;
    bool fits;
    (void)state;
    memcpy(c, abc, sizeof(c));
    c[0].sticky = true;
    choose("mrs", &req, 3, c, 3, NULL, out, &n, &fits);
    assert_false(fits);
    assert_int_equal(n, 0);
}

/* A task that already fits needs no victim; an empty machine too. */
static void test_already_fits(void **state)
{
    struct lt_res small = {0, 1, 1};
    size_t out[3], n = 99;
    bool fits = false;
    (void)state;
    choose("mrs", &small, 0, abc, 3, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 0);
    choose("lrs", &cap4, 0, NULL, 0, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 0);
}

/* Equal start times: the lower id goes first under mrs and lrs. */
static void test_ties_by_id(void **state)
{
    struct lt_victim_cand c[2] = {{7, 0, 10, {2, 0, 0}, false}, {3, 0, 10, {2, 0, 0}, false}};
    struct lt_res req = {1, 0, 0};
    size_t out[2], n;
    bool fits;
    (void)state;
    choose("mrs", &req, 1, c, 2, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 1); /* id 3 */
    choose("lrs", &req, 1, c, 2, NULL, out, &n, &fits);
    assert_int_equal(out[0], 1);
}

/* rnd: two equal tasks of priority 0, either one is enough. The same seed gives the same
 * victim; over 4,000 seeds each is chosen 50 % +- 4 % (binomial sd 0.8 %: 5 sd). */
static void test_rnd_seeded_and_fair(void **state)
{
    struct lt_victim_cand c[2] = {{1, 0, 10, {2, 0, 0}, false}, {2, 0, 20, {2, 0, 0}, false}};
    struct lt_res req = {1, 0, 0};
    size_t out[2], n, first = 0;
    bool fits;
    (void)state;
    for (uint64_t seed = 0; seed < 4000; seed++) {
        struct lt_rng a, b;
        size_t out2[2], n2;
        lt_rng_init(&a, seed, LT_RNG_EVICTION);
        lt_rng_init(&b, seed, LT_RNG_EVICTION);
        choose("rnd", &req, 1, c, 2, &a, out, &n, &fits);
        choose("rnd", &req, 1, c, 2, &b, out2, &n2, &fits);
        assert_int_equal(n, 1);
        assert_int_equal(out[0], out2[0]);
        first += out[0] == 0;
    }
    assert_in_range(first, 1840, 2160);
}

static void test_bad_input(void **state)
{
    struct lt_err err;
    struct lt_res nan_req = {NAN, 0, 0}, req = {1, 0, 0};
    struct lt_victim_cand bad = {1, 0, 0, {-1, 0, 0}, false};
    size_t out[3], n;
    bool fits;
    (void)state;
    lt_err_init(&err, NULL);
    assert_null(lt_evict_find("mru", &err));
    assert_int_equal(err.code, LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "mrs, lrs, rnd"));
    lt_err_init(&err, NULL);
    assert_int_equal(
        lt_victims_choose(pol("mrs"), &cap4, &nan_req, 1, NULL, 0, NULL, out, &n, &fits, &err),
        LT_EINVAL);
    lt_err_init(&err, NULL);
    assert_int_equal(
        lt_victims_choose(pol("mrs"), &cap4, &req, 1, &bad, 1, NULL, out, &n, &fits, &err),
        LT_EINVAL);
    assert_non_null(strstr(err.text, "candidate 0"));
    lt_err_init(&err, NULL);
    assert_int_equal(
        lt_victims_choose(pol("rnd"), &cap4, &req, 1, abc, 3, NULL, out, &n, &fits, &err),
        LT_EINVAL);
    assert_int_equal(lt_evict_count(), 3);
    assert_string_equal(lt_evict_name(lt_evict_at(2)), "rnd");
}

/* Slot limit 3 on cap4 with A, B, C running (3 tasks: no free slot). A prio-3 task wanting
 * nothing fits by resources alone, so lt_victims_choose evicts nobody; with the slot limit one
 * task must leave: mrs takes B (prio 1, latest start 20). With a limit of 4 a slot is free: no
 * victim. Limit 3 with A and B sticky: only C (prio 5) is left, not below 3: cannot be helped. */
static void test_slot_limit_needs_a_victim_on_a_full_machine(void **state)
{
    struct lt_res req = {0, 0, 0};
    struct lt_victim_cand st[3];
    size_t out[3], n = 99;
    bool fits = false;
    (void)state;
    assert_int_equal(
        lt_victims_choose_slots(pol("mrs"), &cap4, 3, &req, 3, abc, 3, NULL, out, &n, &fits, NULL),
        0);
    assert_true(fits);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 1);
    assert_int_equal(
        lt_victims_choose_slots(pol("mrs"), &cap4, 4, &req, 3, abc, 3, NULL, out, &n, &fits, NULL),
        0);
    assert_true(fits);
    assert_int_equal(n, 0);
    memcpy(st, abc, sizeof(st));
    st[0].sticky = st[1].sticky = true;
    assert_int_equal(
        lt_victims_choose_slots(pol("mrs"), &cap4, 3, &req, 3, st, 3, NULL, out, &n, &fits, NULL),
        0);
    assert_false(fits);
}

/* Machine cap4, overcommitted in cpu: A 2 + B 1 + C 1 + D 2 = 6 cpu, 3 mem. A prio-3 task
 * wants 2 mem and no cpu; 1 mem is free. mrs among prio 1 takes D (started at 30; no memory
 * back), then B (20) -> 2 mem free, fits. Reprieve, last chosen first: B is needed; D is given
 * back, since the task requests no cpu. Victims: {B}. (Checking cpu too would keep D, to bring
 * free cpu from -2 to 1.) */
static void test_overcommitted_resource_the_task_does_not_request_needs_no_victim(void **state)
{
    static const struct lt_victim_cand over[] = {
        {1, 1, 10, {2, 1, 0}, false}, /* A */
        {2, 1, 20, {1, 1, 0}, false}, /* B */
        {3, 5, 5, {1, 1, 0}, false},  /* C */
        {4, 1, 30, {2, 0, 0}, false}, /* D */
    };
    struct lt_res req = {0, 2, 0};
    size_t out[4], n;
    bool fits;

    (void)state;
    choose("mrs", &req, 3, over, 4, NULL, out, &n, &fits);
    assert_true(fits);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_limit_needs_a_victim_on_a_full_machine),
        cmocka_unit_test(test_mrs_then_reprieve),
        cmocka_unit_test(test_lrs),
        cmocka_unit_test(test_only_lower_priorities),
        cmocka_unit_test(test_sticky_never_evicted),
        cmocka_unit_test(test_already_fits),
        cmocka_unit_test(test_ties_by_id),
        cmocka_unit_test(test_rnd_seeded_and_fair),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_overcommitted_resource_the_task_does_not_request_needs_no_victim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
