/* test_compare.c -- Stein et al.'s comparison tables (simulator/replay/compare.c): the counts
 * of hand-made cases (ties, the 99 % threshold, x in 80-90 % with both ends, a failed run, a
 * case where every policy is at 0), the ranks and Spearman's rho computed by hand, the
 * slides' tables, and the files.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/outfile.h"
#include "replay/compare.h"

/* Four policies: two the slides' tables have, one only the throughput tables have, one
 * that is on no slide. Five cases (x, values per policy), as tasks and as useful work:
 *   x=20:  100  100   99   10   A, B tied best; C at 99 % exactly
 *   x=85: 1000  989  990  995   A best; C and D >= 99 %, B just below
 *   x=80:  NaN    5    5    5   A's run failed: left out for everyone
 *   x=90:    0    0    0    0   every policy best, ratio 1
 *   x=93:   50  100   10  100   B, D tied best */
static const char *const pol[] = {"bestfit3", "randfirstfit", "lotes", "firstfit"};
static const double xs[] = {20, 85, 80, 90, 93};
static const double val[] = {100, 100, 99, 10, 1000, 989, 990, 995, NAN, 5,
                             5,   5,   0,  0,  0,    0,   50,  100, 10,  100};

static void compute(struct sim_cmp_result *res)
{
    struct lt_err err;
    struct sim_cmp_input in = {pol, 4, 5, xs, val, val};

    lt_err_init(&err, NULL);
    assert_int_equal(sim_cmp_compute(&in, res, &err), 0);
}

static void row_is(const struct sim_cmp_table *t, size_t k, size_t best, size_t ge99, double ratio)
{
    assert_int_equal(t->row[k].best, best);
    assert_int_equal(t->row[k].ge99, ge99);
    lt_assert_near(t->row[k].mean_ratio, ratio, 1e-12);
}

static void test_counts_over_all_x(void **state)
{
    (void)state;
    struct sim_cmp_result res;
    compute(&res);
    const struct sim_cmp_table *t = &res.t[SIM_CMP_THROUGHPUT][SIM_CMP_ALL];
    assert_int_equal(t->cases, 4);
    assert_int_equal(t->left_out, 1);
    row_is(t, 0, 3, 3, (1 + 1 + 1 + 0.5) / 4);
    row_is(t, 1, 3, 3, (1 + 0.989 + 1 + 1) / 4);
    row_is(t, 2, 1, 3, (0.99 + 0.99 + 1 + 0.1) / 4);
    row_is(t, 3, 2, 3, (0.1 + 0.995 + 1 + 1) / 4);
    /* the slides' sort: (3,3) A, (3,3) B in input order, (2,3) D, (1,3) C */
    assert_int_equal(t->order[0], 0);
    assert_int_equal(t->order[1], 1);
    assert_int_equal(t->order[2], 3);
    assert_int_equal(t->order[3], 2);
    /* on the slides (all): randfirstfit 1, firstfit 2, bestfit3 3; lotus: bestfit3 and
     * randfirstfit 1.5, firstfit 3. (1.5,1.5,3) against (3,1,2): deviations (-.5,-.5,1) and
     * (1,-1,0), sum of products 0. */
    assert_int_equal(t->n_common, 3);
    lt_assert_near(t->spearman, 0.0, 1e-12);
}

static void test_counts_at_80_90(void **state)
{
    (void)state;
    struct sim_cmp_result res;
    compute(&res);
    const struct sim_cmp_table *t = &res.t[SIM_CMP_THROUGHPUT][SIM_CMP_80_90];
    /* x = 85 and 90 counted, 80 (an end of the range) left out, 20 and 93 outside */
    assert_int_equal(t->cases, 2);
    assert_int_equal(t->left_out, 1);
    row_is(t, 0, 2, 2, 1.0);
    row_is(t, 1, 1, 1, (0.989 + 1) / 2);
    row_is(t, 2, 1, 2, (0.99 + 1) / 2);
    row_is(t, 3, 1, 2, (0.995 + 1) / 2);
    assert_int_equal(t->order[0], 0);
    assert_int_equal(t->order[1], 2);
    assert_int_equal(t->order[2], 3);
    assert_int_equal(t->order[3], 1);
    /* slides (80-90): randfirstfit 1, bestfit3 2, firstfit 3; lotus: bestfit3 1, firstfit 2,
     * randfirstfit 3. d = (1-2, 3-1, 2-3): sum d^2 = 6, rho = 1 - 6*6/(3*8) = -0.5 */
    assert_int_equal(t->n_common, 3);
    lt_assert_near(t->spearman, -0.5, 1e-12);
}

static void test_useful_work_without_firstfit(void **state)
{
    (void)state;
    struct sim_cmp_result res;
    compute(&res);
    /* the useful-work slides have no FirstFit: bestfit3 and randfirstfit are compared, and
     * lotus ties them over all x: no spread, no coefficient */
    const struct sim_cmp_table *t = &res.t[SIM_CMP_USEFUL][SIM_CMP_ALL];
    assert_int_equal(t->n_common, 2);
    assert_true(isnan(t->spearman));
    t = &res.t[SIM_CMP_USEFUL][SIM_CMP_80_90];
    /* bestfit3 (2,2) first, randfirstfit (1,1); the slides agree (114/138 over 84/126) */
    lt_assert_near(t->spearman, 1.0, 1e-12);
}

static void test_ranks_and_spearman_by_hand(void **state)
{
    (void)state;
    const double best[] = {3, 3, 1, 2}, ge99[] = {5, 5, 9, 0};
    double r[4];
    sim_cmp_rank(best, ge99, 4, r);
    /* (3,5) twice share ranks 1 and 2; (2,0) is 3rd; (1,9) 4th: times best comes first */
    lt_assert_near(r[0], 1.5, 1e-12);
    lt_assert_near(r[1], 1.5, 1e-12);
    lt_assert_near(r[2], 4.0, 1e-12);
    lt_assert_near(r[3], 3.0, 1e-12);
    const double other[] = {1, 2, 3, 4};
    /* deviations (-1,-1,1.5,.5) and (-1.5,-.5,.5,1.5): 3.5 / sqrt(4.5 * 5) */
    lt_assert_near(sim_cmp_spearman(r, other, 4), 3.5 / sqrt(22.5), 1e-12);
    lt_assert_near(sim_cmp_spearman(other, other, 4), 1.0, 1e-12);
    assert_true(isnan(sim_cmp_spearman(other, other, 1)));
    const double flat[] = {2, 2, 2, 2};
    assert_true(isnan(sim_cmp_spearman(flat, other, 4)));
}

static void test_slides_tables(void **state)
{
    (void)state;
    size_t n;
    const struct sim_cmp_slide *s = sim_cmp_slides(SIM_CMP_THROUGHPUT, SIM_CMP_ALL, &n);
    assert_int_equal(n, 11);
    assert_string_equal(s[0].policy, "randfirstfit");
    assert_int_equal(s[0].best, 31);
    s = sim_cmp_slide_find(SIM_CMP_THROUGHPUT, SIM_CMP_80_90, "sos20");
    assert_non_null(s);
    assert_int_equal(s->best, 2);
    assert_int_equal(s->ge99, 12);
    s = sim_cmp_slide_find(SIM_CMP_USEFUL, SIM_CMP_ALL, "random");
    assert_non_null(s);
    assert_string_equal(s->name, "RandFit");
    assert_int_equal(s->ge99, 282);
    assert_null(sim_cmp_slide_find(SIM_CMP_USEFUL, SIM_CMP_80_90, "firstfit"));
    assert_null(sim_cmp_slide_find(SIM_CMP_USEFUL, SIM_CMP_ALL, "sos10"));
    assert_null(sim_cmp_slide_find(SIM_CMP_THROUGHPUT, SIM_CMP_ALL, "bestfit5"));
    sim_cmp_slides(SIM_CMP_USEFUL, SIM_CMP_80_90, &n);
    assert_int_equal(n, 8);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[8192];
    size_t n;
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_compare_XXXXXX", path[128];
    struct sim_cmp_result res;
    struct lt_err err;

    lt_err_init(&err, NULL);
    assert_non_null(mkdtemp(dir));
    compute(&res);
    assert_int_equal(sim_cmp_write(dir, &res, &err), 0);
    snprintf(path, sizeof(path), "%s/compare.csv", dir);
    const char *csv = slurp(path);
    assert_non_null(strstr(csv, "metric,range,policy,cases,times_best,times_ge99,mean_ratio,"
                                "slides_times_best,slides_times_ge99\n"
                                "throughput,all,bestfit3,4,3,3,0.875000,12,38\n"));
    assert_non_null(strstr(csv, "\nthroughput,all,lotes,4,1,3,0.770000,,\n"));
    assert_non_null(strstr(csv, "\nthroughput,80-90,firstfit,2,1,2,0.997500,7,15\n"));
    assert_non_null(strstr(csv, "\nuseful_work,80-90,firstfit,2,1,2,0.997500,,\n"));
    remove(path);
    snprintf(path, sizeof(path), "%s/compare.json", dir);
    const char *js = slurp(path);
    assert_non_null(strstr(js, "\"spearman\": -0.5"));
    assert_non_null(strstr(js, "\"spearman\": null"));
    assert_non_null(strstr(js, "\"left_out\": 1"));
    remove(path);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_over_all_x),
        cmocka_unit_test(test_counts_at_80_90),
        cmocka_unit_test(test_useful_work_without_firstfit),
        cmocka_unit_test(test_ranks_and_spearman_by_hand),
        cmocka_unit_test(test_slides_tables),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
