/* test_sos_walk.c -- sos's walk (scoring/sos_walk.c) on its own, against plain arrays of
 * offsets: the lowest stayer equals a plain scan under random moves (maxima leaving, entries
 * leaving the walk, super-blocks going dirty), the checker accepts every state reached, and it
 * names what is wrong when a summary, a super-block's bound or an entry is corrupted.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lt_rng.h"
#include "score_int.h"

#define N 1000 /* machines: 16 blocks, 2 super-blocks, the last block partly used */

/* The reference: machine i walked or not, with its offsets in bucket widths. */
struct ref {
    bool walked[N];
    double off[N][2];
    double phi[2]; /* the request's fractions, for stays() */
};

static bool entry(const void *ctx, size_t i, double off[2])
{
    const struct ref *x = ctx;

    off[0] = x->off[i][0];
    off[1] = x->off[i][1];
    return x->walked[i];
}

static bool stays(const void *ctx, uint32_t i)
{
    const struct ref *x = ctx;

    return x->off[i][0] >= x->phi[0] && x->off[i][1] >= x->phi[1];
}

static void put(struct lt__sos_walk *w, struct ref *x, uint32_t i, bool walked, double oc,
                double om)
{
    x->walked[i] = walked;
    x->off[i][0] = oc;
    x->off[i][1] = om;
    lt__sos_walk_set(w, i, walked ? x->off[i] : NULL);
}

/* Offsets on a coarse grid now and then, so that ties and exact thresholds occur. */
static double offset(struct lt_rng *r)
{
    return lt_rng_below(r, 4) == 0 ? (double)lt_rng_below(r, 16) / 16.0 : lt_rng_uniform(r);
}

static void build(struct lt__sos_walk *w, struct ref *x, struct lt_rng *r)
{
    memset(x, 0, sizeof(*x));
    assert_int_equal(lt__sos_walk_init(w, N), 0);
    for (uint32_t i = 0; i < N; i++)
        put(w, x, i, lt_rng_below(r, 8) != 0, offset(r), offset(r));
}

static void check_ok(const struct lt__sos_walk *w, const struct ref *x)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (lt__sos_walk_check(w, entry, x, "test", &err) != 0) {
        print_error("%s\n", err.text);
        fail();
    }
}

/* The checker fails with LT_EINVAL and a message holding `want`. */
static void check_fails(const struct lt__sos_walk *w, const struct ref *x, const char *want)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    assert_int_equal(lt__sos_walk_check(w, entry, x, "test", &err), LT_EINVAL);
    if (strstr(err.text, want) == NULL) {
        print_error("message '%s' lacks '%s'\n", err.text, want);
        fail();
    }
}

static uint32_t plain_stayer(const struct ref *x, uint32_t from)
{
    for (uint32_t i = from; i < N; i++) {
        if (x->walked[i] && stays(x, i))
            return i;
    }
    return UINT32_MAX;
}

/* Random moves, each followed by the checker and by walks for random requests from random
 * blocks against the plain scan. Machines that leave are often a block's maximum (offsets
 * near 1), so summaries fall and super-blocks go dirty. */
static void test_sos_walk_stayer_equals_plain_scan(void **state)
{
    struct lt__sos_walk w;
    struct ref x;
    struct lt_rng r;

    (void)state;
    lt_rng_init(&r, 42, 1);
    build(&w, &x, &r);
    check_ok(&w, &x);
    for (int step = 0; step < 3000; step++) {
        uint32_t i = (uint32_t)lt_rng_below(&r, N);
        bool high = lt_rng_below(&r, 2) == 0;
        struct lt__sos_walk_query q;
        uint32_t b0 = (uint32_t)lt_rng_below(&r, N / LT__WALK_BLOCK + 1);

        put(&w, &x, i, lt_rng_below(&r, 8) != 0, high ? 1.0 - offset(&r) / 64 : offset(&r),
            high ? 1.0 - offset(&r) / 64 : offset(&r));
        check_ok(&w, &x);
        x.phi[0] = lt_rng_below(&r, 3) == 0 ? 0.9 + lt_rng_uniform(&r) / 10 : lt_rng_uniform(&r);
        x.phi[1] = lt_rng_below(&r, 3) == 0 ? 0.9 + lt_rng_uniform(&r) / 10 : lt_rng_uniform(&r);
        lt__sos_walk_query_init(&q, x.phi, 1e-9);
        assert_int_equal(lt__sos_walk_stayer(&w, &q, b0, stays, &x),
                         plain_stayer(&x, b0 * LT__WALK_BLOCK));
    }
    lt__sos_walk_release(&w);
}

/* A corrupted block summary, super-block bound, entry or presence bit: the checker fails and
 * says which. Each corruption is undone before the next. */
static void test_sos_walk_check_catches_corruption(void **state)
{
    struct lt__sos_walk w;
    struct ref x;
    struct lt_rng r;
    uint16_t keep;
    uint64_t bits;

    (void)state;
    lt_rng_init(&r, 7, 1);
    build(&w, &x, &r);
    check_ok(&w, &x);

    keep = w.blk[3].mx[2];
    w.blk[3].mx[2] ^= 1; /* a summary one off */
    check_fails(&w, &x, "walk block 3's summary at level 2");
    w.blk[3].mx[2] = keep;
    check_ok(&w, &x);

    keep = w.smx[5 * w.n_super + 1];
    assert_true(keep > 0);
    w.smx[5 * w.n_super + 1] = (uint16_t)(keep - 1); /* a bound below a block's summary */
    check_fails(&w, &x, "walk super-block 1's bound at level 5");
    w.smx[5 * w.n_super + 1] = keep;
    check_ok(&w, &x);

    w.sdirty[0] = 8; /* left dirty past its limit */
    check_fails(&w, &x, "walk super-block 0 left dirty");
    w.sdirty[0] = 0;

    assert_true(x.walked[10] || x.walked[11]);
    {
        uint32_t i = x.walked[10] ? 10 : 11;

        keep = w.blk[0].qc[i];
        w.blk[0].qc[i] = (uint16_t)(keep ^ 4); /* an entry that is not the cluster's */
        {
            char want[64];

            snprintf(want, sizeof(want), "machine %u's walk offsets", (unsigned)i);
            check_fails(&w, &x, want);
        }
        w.blk[0].qc[i] = keep;
    }

    bits = w.blk[15].present;
    w.blk[15].present |= UINT64_C(1) << 50; /* machine 1010 of 1000 */
    check_fails(&w, &x, "walk entry 1010 beyond 1000 machines");
    w.blk[15].present = bits;
    check_ok(&w, &x);
    lt__sos_walk_release(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sos_walk_stayer_equals_plain_scan),
        cmocka_unit_test(test_sos_walk_check_catches_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
