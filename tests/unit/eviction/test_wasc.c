/* test_wasc.c -- server types (Cavdar Table 3.1), the CPU-based slot configurations SC1-SC4
 * and WASC (Table 8.1 reproduced from its inputs: Table 5.2 and the 125 servers of Table 8.1),
 * the pooled statistics of a group by hand, and bad input.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <string.h>

#include "lt_slots.h"

/* Table 5.2 as the library carries it (lt_wasc_table_5_2). */
static void table_5_2(struct lt_class_stats cls[12])
{
    lt_wasc_table_5_2(cls);
    lt_assert_near(cls[4].arrivals, 59.94, 0);
    assert_true(isnan(cls[7].cpu_demand));
}

/* The 125 servers of Table 8.1: A 68, B 39, C 10, D 8. */
static size_t table_8_1_inventory(struct lt_slot_group inv[4])
{
    static const uint32_t count[4] = {68, 39, 10, 8};

    for (size_t k = 0; k < 4; k++) {
        inv[k].type = lt_server_type_at(k);
        inv[k].count = count[k];
        inv[k].slots = 0;
    }
    return 4;
}

static void test_table_3_1_types(void **state)
{
    const struct lt_server_type *d = lt_server_type_find("D", NULL);
    struct lt_err err;

    (void)state;
    assert_int_equal(lt_server_type_count(), 4);
    assert_non_null(d);
    lt_assert_near(d->cpu, 1.0, 0);
    lt_assert_near(d->p_peak, 301, 0);
    assert_int_equal(d->cores, 8);
    lt_assert_near(lt_server_type_find("B", NULL)->mem, 0.25, 0);
    /* [CHECK] in the digest: P_sleep = 0.2 P_peak on every row of the table */
    for (size_t k = 0; k < 4; k++) {
        const struct lt_server_type *t = lt_server_type_at(k);
        lt_assert_near(t->p_sleep, 0.2 * t->p_peak, 1e-9);
    }
    lt_err_init(&err, NULL);
    assert_null(lt_server_type_find("E", &err));
    assert_int_equal(err.code, LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "'E'"));
}

static void test_sc1_to_sc4_totals_of_table_8_1(void **state)
{
    static const uint64_t want[4] = {1064, 2128, 3192, 4256};
    struct lt_slot_group inv[4];
    struct lt_slot_config sc;
    size_t n = table_8_1_inventory(inv);

    (void)state;
    for (int level = 1; level <= 4; level++) {
        assert_int_equal(lt_slot_config_sc(level, inv, n, &sc, NULL), 0);
        assert_int_equal(lt_slot_config_slots(&sc), want[level - 1]);
        assert_int_equal(lt_slot_config_servers(&sc), 125);
        assert_int_equal(sc.g[0].slots, 8u * (uint32_t)level);  /* A */
        assert_int_equal(sc.g[3].slots, 16u * (uint32_t)level); /* D */
    }
    /* Table 7.1's mix (69/38/10/8) gives the same SC2 total, 2128 */
    inv[0].count = 69;
    inv[1].count = 38;
    assert_int_equal(lt_slot_config_sc(2, inv, n, &sc, NULL), 0);
    assert_int_equal(lt_slot_config_slots(&sc), 2128);
    assert_int_equal(lt_slot_config_sc(5, inv, n, &sc, NULL), LT_EINVAL);
}

/* Table 8.1's WASC column: 5 D servers with 24 powerful slots, 3 D with 48, A/B/C with 24,
 * 3072 slots; production slots have twice the CPU of the others. */
static void check_table_8_1(const struct lt_wasc_result *r)
{
    uint64_t prod_slots = 0;

    assert_int_equal(r->n_slots[0], 24);
    assert_int_equal(r->n_slots[1], 48);
    assert_int_equal(r->prod_servers, 5);
    assert_int_equal(lt_slot_config_slots(&r->config), 3072);
    assert_int_equal(lt_slot_config_servers(&r->config), 125);
    for (size_t k = 0; k < r->config.n; k++) {
        const struct lt_slot_group *g = &r->config.g[k];
        if (r->production[k]) {
            assert_string_equal(g->type->name, "D");
            assert_int_equal(g->slots, 24);
            lt_assert_near(lt_slot_power(g), 1.0 / 24, 1e-12);
            prod_slots += (uint64_t)g->count * g->slots;
        } else {
            assert_int_equal(g->slots, strcmp(g->type->name, "D") == 0 ? 48 : 24);
            lt_assert_near(lt_slot_power(g), 1.0 / 48, 1e-12);
        }
    }
    assert_int_equal(prod_slots, 120);
}

static void test_wasc_reproduces_table_8_1_from_table_5_2(void **state)
{
    struct lt_class_stats cls[12];
    struct lt_slot_group inv[4];
    struct lt_wasc_params p;
    struct lt_wasc_result r;
    size_t n = table_8_1_inventory(inv);

    (void)state;
    table_5_2(cls);
    lt_wasc_params_default(&p);
    /* The thesis never gives sigma; these are the digest's back-solved pooled deviations. */
    p.sd_given = true;
    p.sd_p = 0.0172;
    p.sd_np = 0.0082;
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, NULL), 0);
    lt_assert_near(r.phi_p, 0.076576, 1e-5);      /* digest: 7.658 % */
    lt_assert_near(r.phi_p * 66.5, 5.0923, 1e-3); /* -> 5 D servers */
    lt_assert_near(r.xi[0], 0.0071740, 1e-6);
    lt_assert_near(r.xi[1], 0.0152607, 1e-6);
    lt_assert_near(r.delta[0], 1.0, 0);
    lt_assert_near(r.delta[1], 0.65873, 1e-5);
    lt_assert_near(1.0 / r.theta[0], 24.053, 1e-3);
    lt_assert_near(1.0 / r.theta[1], 47.948, 1e-3);
    lt_assert_near(r.c_max, 1.0, 0);
    assert_int_equal(r.skipped, 2); /* class 7: no demand, no usage */
    check_table_8_1(&r);

    /* The fixture (24/48) gives the same configuration without deviations. */
    lt_wasc_params_default(&p);
    p.fixture_p = 24;
    p.fixture_np = 48;
    for (int k = 0; k < 12; k++)
        cls[k].cpu_usage_sd = 0.0;
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, NULL), 0);
    check_table_8_1(&r);

    /* lt_wasc_table_8_1, which lotus-sim slots and bench_slots use, is that configuration */
    {
        struct lt_slot_config cfg;
        assert_int_equal(lt_wasc_table_8_1(inv, n, &cfg, NULL), 0);
        assert_memory_equal(&cfg, &r.config, sizeof(cfg));
    }
}

/* Two non-production classes with arrivals 1 and 3, usage 0.01 and 0.02, deviation 0:
 * pooled mean 0.0175, variance (1 * 0.0075^2 + 3 * 0.0025^2) / 4 = 1.875e-5 (law of total
 * variance); gratis and middle give delta (1 * 0.5 + 3 * 0.75) / 4 = 0.6875. */
static void test_wasc_pools_a_group_by_arrivals(void **state)
{
    struct lt_class_stats cls[3] = {
        {0, 1, 10, 0.01, 0},
        {4, 3, 10, 0.02, 0},
        {9, 1, 30, 0.05, 0.01},
    };
    struct lt_slot_group inv[1] = {{NULL, 4, 0}};
    struct lt_wasc_params p;
    struct lt_wasc_result r;

    (void)state;
    inv[0].type = lt_server_type_find("D", NULL);
    lt_wasc_params_default(&p);
    assert_int_equal(lt_wasc(cls, 3, inv, 1, &p, &r, NULL), 0);
    lt_assert_near(r.xi[1], 0.0175, 1e-12);
    lt_assert_near(r.sd[1], sqrt(1.875e-5), 1e-12);
    lt_assert_near(r.delta[1], 0.6875, 1e-12);
    lt_assert_near(r.phi_p, 30.0 / 70.0, 1e-12);
    /* theta_p = 1.0 * (0.05 + 2 * 0.01) = 0.07 -> 14.3 slots -> 16 (nearest multiple of 8) */
    assert_int_equal(r.n_slots[0], 16);
    /* theta_np = 0.6875 * (0.0175 + 2 * 0.00433) = 0.0180 -> 55.5 -> 56 */
    assert_int_equal(r.n_slots[1], 56);
    /* budget 30/70 of 4 CPU = 1.71 -> 2 servers */
    assert_int_equal(r.prod_servers, 2);
    assert_int_equal(lt_slot_config_slots(&r.config), 2 * 16 + 2 * 56);
}

static void test_wasc_rejects_bad_input(void **state)
{
    struct lt_class_stats cls[12];
    struct lt_slot_group inv[4];
    struct lt_wasc_params p;
    struct lt_wasc_result r;
    struct lt_err err;
    size_t n = table_8_1_inventory(inv);

    (void)state;
    lt_wasc_params_default(&p);
    lt_err_init(&err, NULL);

    table_5_2(cls);
    cls[3].priority = 12;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "priority 12"));

    table_5_2(cls);
    cls[3].priority = 4;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "priority 4 has two"));

    table_5_2(cls);
    cls[6].cpu_usage = -0.1;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "priority 6"));

    /* no deviations given and none in the statistics: no group can be pooled */
    table_5_2(cls);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "production"));

    /* no production class at all */
    table_5_2(cls);
    p.sd_given = true;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 9, inv, n, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "production (9-11)"));

    table_5_2(cls);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 12, inv, 0, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "inventory is empty"));
    inv[2].count = 0;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_wasc(cls, 12, inv, n, &p, &r, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "type 'C'"));
}

/* SC<level> per server: 16 * level slots per CPU unit, nearest, at least 1; the same rule as
 * lt_slot_config_sc (A: 0.5 CPU -> 24 under SC3; D: 1.0 -> 48). Bad level or CPU rejected. */
static void test_slot_count_sc_is_table_8_1_per_server(void **state)
{
    uint32_t n = 0;
    struct lt_err e;

    (void)state;
    assert_int_equal(lt_slot_count_sc(3, 0.5, &n, NULL), 0);
    assert_int_equal(n, 24);
    assert_int_equal(lt_slot_count_sc(3, 1.0, &n, NULL), 0);
    assert_int_equal(n, 48);
    assert_int_equal(lt_slot_count_sc(1, 0.01, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(lt_slot_count_sc(2, 0.75, &n, NULL), 0);
    assert_int_equal(n, 24);
    lt_err_init(&e, NULL);
    assert_int_equal(lt_slot_count_sc(5, 1.0, &n, &e), LT_EINVAL);
    assert_string_equal(e.text, "slot configuration SC5 does not exist (SC1-SC4)");
    assert_int_equal(lt_slot_count_sc(3, 0.0, &n, NULL), LT_EINVAL);
    assert_int_equal(lt_slot_count_sc(3, NAN, &n, NULL), LT_EINVAL);
}

/* WAA tiers: powers 1/24 (free), 1/48 (free), 1/24 (full), 1/48 (free), 1/12 (no slots
 * configured) -> tiers 0, 1, none, 1, none; two tiers. Production classes are 9..11. */
static void test_waa_tiers_rank_free_servers_by_slot_power(void **state)
{
    const struct lt_slot_node nodes[5] = {
        {24, 3, 1.0 / 24}, {48, 0, 1.0 / 48}, {24, 24, 1.0 / 24}, {48, 47, 1.0 / 48}, {0, 0, 0}};
    uint32_t tier[5];
    size_t nt = 0;
    struct lt_slot_node bad = {4, 0, -1.0};

    (void)state;
    assert_int_equal(lt_slot_waa_tiers(nodes, 5, tier, &nt, NULL), 0);
    assert_int_equal(nt, 2);
    assert_int_equal(tier[0], 0);
    assert_int_equal(tier[1], 1);
    assert_int_equal(tier[2], LT_SLOT_NO_TIER);
    assert_int_equal(tier[3], 1);
    assert_int_equal(tier[4], LT_SLOT_NO_TIER);
    assert_true(lt_slot_power_cmp(1.0 / 24, 1.0 / 48) < 0);
    assert_int_equal(lt_slot_power_cmp(0.5, 0.5), 0);
    assert_false(lt_class_is_production(8));
    assert_true(lt_class_is_production(9));
    assert_true(lt_class_is_production(11));
    assert_false(lt_class_is_production(12));
    assert_int_equal(lt_slot_waa_tiers(&bad, 1, tier, &nt, NULL), LT_EINVAL);
    assert_int_equal(lt_slot_waa_tiers(NULL, 0, NULL, &nt, NULL), 0);
    assert_int_equal(nt, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_3_1_types),
        cmocka_unit_test(test_slot_count_sc_is_table_8_1_per_server),
        cmocka_unit_test(test_waa_tiers_rank_free_servers_by_slot_power),
        cmocka_unit_test(test_sc1_to_sc4_totals_of_table_8_1),
        cmocka_unit_test(test_wasc_reproduces_table_8_1_from_table_5_2),
        cmocka_unit_test(test_wasc_pools_a_group_by_arrivals),
        cmocka_unit_test(test_wasc_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
