/* test_cells.c -- the index-ordered cell of scoring/cells.c (the building block of grid.c and
 * sos.c) against a plain reference set: members strictly increasing, each with its own free
 * vector, the lowest index, the box holding every member, and the room before the first member
 * (`off`) within the allocation, under the patterns the indexes produce: the lowest member
 * leaving again and again (a fit filling empty machines in index order), members arriving
 * below the lowest, removals from the front while arrivals come at the end (the room before
 * the members is reused or given back), and random mixes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdbool.h>
#include <string.h>

#include "lt_rng.h"
#include "score_int.h"

#define UNIVERSE 3000

static struct lt_res free_of(uint32_t i)
{
    struct lt_res f = {(double)(i % 97) / 97.0, (double)(i % 89) / 89.0, (double)(i % 83) / 83.0};
    return f;
}

/* The cell holds exactly the members of in[], in order, with their free vectors. */
static void check_cell(const struct lt__cell *cl, const bool *in)
{
    uint32_t k = 0;

    assert_true(cl->off <= cl->cap && cl->n <= cl->cap - cl->off);
    for (uint32_t i = 0; i < UNIVERSE; i++) {
        if (!in[i])
            continue;
        struct lt_res f = free_of(i);
        assert_true(k < cl->n);
        assert_int_equal(cl->mem[k], i);
        assert_true(memcmp(&cl->f[k], &f, sizeof(f)) == 0);
        assert_true(lt__res_ge(&f, &cl->lo) && lt__res_ge(&cl->hi, &f));
        k++;
    }
    assert_int_equal(k, cl->n);
    if (cl->n > 0)
        assert_int_equal(cl->min_i, cl->mem[0]);
}

static void put(struct lt__cell *cl, bool *in, uint32_t i)
{
    struct lt_res f = free_of(i);

    if (in[i])
        return;
    assert_int_equal(lt__cell_reserve(cl), 0);
    lt__cell_insert(cl, i, &f);
    in[i] = true;
}

static void take(struct lt__cell *cl, bool *in, uint32_t i)
{
    if (!in[i])
        return;
    lt__cell_remove(cl, i);
    in[i] = false;
}

static void test_cells_lowest_member_leaving_in_index_order(void **state)
{
    struct lt__cell cl;
    bool in[UNIVERSE] = {false};
    uint32_t cap_full;

    (void)state;
    memset(&cl, 0, sizeof(cl));
    for (uint32_t i = 0; i < 2000; i++)
        put(&cl, in, i);
    check_cell(&cl, in);
    cap_full = cl.cap;
    for (uint32_t i = 0; i < 1990; i++) {
        take(&cl, in, i); /* the lowest: O(1), the room goes before the first member */
        if (i % 97 == 0)
            check_cell(&cl, in);
    }
    check_cell(&cl, in);
    assert_int_equal(cl.off, 1990);
    /* arrivals below the lowest member take the room before it back */
    for (uint32_t i = 1990; i-- > 1900;)
        put(&cl, in, i);
    check_cell(&cl, in);
    assert_int_equal(cl.off, 1900);
    /* arrivals at the end, with no room left there: the members move to the front once, the
     * allocation does not grow */
    for (uint32_t i = 2000; i < 2900; i++)
        put(&cl, in, i);
    check_cell(&cl, in);
    assert_int_equal(cl.cap, cap_full);
    lt__cell_release(&cl);
}

static void test_cells_front_removals_with_end_arrivals(void **state)
{
    struct lt__cell cl;
    bool in[UNIVERSE] = {false};
    uint32_t lo = 0, hi = 0, max_cap = 0;

    (void)state;
    memset(&cl, 0, sizeof(cl));
    for (; hi < 300; hi++)
        put(&cl, in, hi);
    /* a sliding window of 300 members: the room made at the front is given back to the end
     * with a move of the members, and the allocation stays bounded */
    while (hi < UNIVERSE) {
        take(&cl, in, lo++);
        put(&cl, in, hi++);
        if (hi % 101 == 0)
            check_cell(&cl, in);
        max_cap = cl.cap > max_cap ? cl.cap : max_cap;
    }
    check_cell(&cl, in);
    assert_true(max_cap <= 1024);
    lt__cell_release(&cl);
}

static void test_cells_random_mix_equals_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct lt__cell cl;
        bool in[UNIVERSE] = {false};
        struct lt_rng r;
        uint32_t span = 50 + (uint32_t)(seed * 149 % (UNIVERSE - 50));

        memset(&cl, 0, sizeof(cl));
        lt_rng_init(&r, seed, 3);
        for (int step = 0; step < 4000; step++) {
            uint32_t op = (uint32_t)lt_rng_below(&r, 10);
            uint32_t i = (uint32_t)lt_rng_below(&r, span);
            struct lt_res f;

            if (op < 5) {
                put(&cl, in, i);
            } else if (op < 8) {
                take(&cl, in, i);
            } else if (op < 9 && cl.n > 0) {
                take(&cl, in, cl.mem[0]); /* the lowest, as a fit takes it */
            } else if (in[i]) {
                f = free_of(i);
                lt__cell_update(&cl, i, &f); /* same vector: nothing may move */
            }
            if (step % 37 == 0)
                check_cell(&cl, in);
        }
        check_cell(&cl, in);
        lt__cell_release(&cl);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cells_lowest_member_leaving_in_index_order),
        cmocka_unit_test(test_cells_front_removals_with_end_arrivals),
        cmocka_unit_test(test_cells_random_mix_equals_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
