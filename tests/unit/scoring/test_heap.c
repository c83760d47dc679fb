/* test_heap.c -- lt_heap.h against a naive model (a scan for the least), with positions kept
 * through the moved callback, removal from the middle, and a failed push changing nothing.
 * Linked with lotus_faults.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdint.h>
#include <string.h>

#include "lt_heap.h"
#include "lt_mem.h"
#include "lt_rng.h"

#define N_IDS 256
#define NONE  SIZE_MAX

struct item {
    int64_t key;
    uint32_t id; /* ties broken by id, so the model's answer is unique */
};

struct pos {
    size_t at[N_IDS]; /* heap position of each id, NONE when out */
};

static bool item_less(const struct pos *p, const struct item *x, const struct item *y)
{
    (void)p;
    return x->key < y->key || (x->key == y->key && x->id < y->id);
}

static void item_moved(struct pos *p, const struct item *x, size_t k)
{
    p->at[x->id] = k;
}

LT_HEAP_DEFINE(iheap, struct item, struct pos, item_less, item_moved);

/* The naive model: an array of ids in or out and their keys. */
struct model {
    bool in[N_IDS];
    int64_t key[N_IDS];
};

static int model_min(const struct model *m)
{
    int best = -1;
    for (int i = 0; i < N_IDS; i++)
        if (m->in[i] && (best < 0 || m->key[i] < m->key[best]))
            best = i; /* equal keys: the lower id, found first */
    return best;
}

static void test_matches_the_naive_model(void **state)
{
    struct iheap h = {0};
    struct pos p;
    struct model m;
    struct lt_rng rng;

    (void)state;
    memset(&m, 0, sizeof(m));
    for (int i = 0; i < N_IDS; i++)
        p.at[i] = NONE;
    lt_rng_init(&rng, 42, 0);
    for (int step = 0; step < 20000; step++) {
        uint32_t id = (uint32_t)lt_rng_below(&rng, N_IDS);
        uint64_t op = lt_rng_below(&rng, 4);
        if (!m.in[id] && op < 2) { /* push; few distinct keys, so ties are common */
            m.in[id] = true;
            m.key[id] = (int64_t)lt_rng_below(&rng, 20);
            assert_int_equal(iheap_push(&p, &h, (struct item){m.key[id], id}), 0);
        } else if (m.in[id] && op == 2) { /* remove from anywhere */
            assert_int_not_equal(p.at[id], NONE);
            assert_int_equal(h.a[p.at[id]].id, id);
            iheap_remove(&p, &h, p.at[id]);
            p.at[id] = NONE;
            m.in[id] = false;
        } else if (m.in[id]) { /* change the key in place */
            m.key[id] = (int64_t)lt_rng_below(&rng, 20);
            h.a[p.at[id]].key = m.key[id];
            iheap_fix(&p, &h, p.at[id]);
        } else if (h.n > 0) { /* pop */
            int want = model_min(&m);
            struct item top = iheap_pop(&p, &h);
            assert_int_equal(top.id, want);
            p.at[top.id] = NONE;
            m.in[top.id] = false;
        }
        assert_true(iheap_ok(&p, &h));
        size_t n_in = 0;
        for (int i = 0; i < N_IDS; i++) {
            n_in += m.in[i];
            if (m.in[i])
                assert_int_equal(h.a[p.at[i]].id, i);
        }
        assert_int_equal(h.n, n_in);
    }
    while (h.n > 0) {
        int want = model_min(&m);
        struct item top = iheap_pop(&p, &h);
        assert_int_equal(top.id, want);
        m.in[top.id] = false;
    }
    iheap_free(&h);
}

static void test_failed_push_changes_nothing(void **state)
{
    struct iheap h = {0};
    struct pos p;

    (void)state;
    for (uint32_t i = 0; i < LT_VEC_MIN_CAP; i++)
        assert_int_equal(iheap_push(&p, &h, (struct item){100 - i, i}), 0);
    lt_mem_fail_after(0);
    assert_int_equal(iheap_push(&p, &h, (struct item){-1, 99}), LT_ENOMEM);
    lt_mem_fail_after(-1);
    assert_int_equal(h.n, LT_VEC_MIN_CAP);
    assert_true(iheap_ok(&p, &h));
    assert_int_equal(h.a[0].key, 100 - (LT_VEC_MIN_CAP - 1));
    iheap_free(&h);
}

static void test_ok_finds_a_broken_order(void **state)
{
    struct iheap h = {0};
    struct pos p;

    (void)state;
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(iheap_push(&p, &h, (struct item){i, i}), 0);
    h.a[3].key = -5; /* below its parent */
    assert_false(iheap_ok(&p, &h));
    iheap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_the_naive_model),
        cmocka_unit_test(test_failed_push_changes_nothing),
        cmocka_unit_test(test_ok_finds_a_broken_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
