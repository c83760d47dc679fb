/* test_lotes.c -- LoTES (lotes/): the allocation LP on instances solved by hand and on Tables
 * 1+3 against an independent formulation, Algorithm 1 against brute-force enumeration, the
 * whole-machine rounding, the dispatcher (level-1 frequencies, each rule of level 2), the
 * tables file (round trip, bad documents rejected with their JSON path), bad problems, and the
 * online use (classification, the machine view of a live cluster, rank against the dispatcher).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <glpk.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_lotes.h"
#include "lt_lotes_sim.h"
#include "lt_mem.h"

/* LP values: GLPK's simplex is exact to ~1e-9 relative on these small, scaled problems. */
#define LP_EPS 1e-7

static struct lt_lotes_class mk_class(const char *name, double alpha, double mu, double cpu,
                                      double mem)
{
    struct lt_lotes_class c;

    memset(&c, 0, sizeof(c));
    snprintf(c.name, sizeof(c.name), "%s", name);
    c.alpha = alpha;
    c.mu = mu;
    c.req.cpu = cpu;
    c.req.mem = mem;
    return c;
}

static struct lt_lotes_config mk_config(const char *name, double cpu, double mem, size_t n)
{
    struct lt_lotes_config c;

    memset(&c, 0, sizeof(c));
    snprintf(c.name, sizeof(c.name), "%s", name);
    c.cap.cpu = cpu;
    c.cap.mem = mem;
    c.n = n;
    return c;
}

/* ---- Stage 1 on instances solved by hand ------------------------------------------------ */

/* One class (1 core, 1 GB) on 10 machines of (4, 8): the cores bind, so delta_cpu = 1,
 * delta_mem = 0.5 by constraint (2), lambda* = 4 x 10 x mu / (alpha x r_cpu) = 40. */
static void test_alloc_one_class_by_hand(void **state)
{
    struct lt_lotes_class k = mk_class("a", 1, 1, 1, 1);
    struct lt_lotes_config c = mk_config("m", 4, 8, 10);
    struct lt_lotes_problem p = {&k, 1, &c, 1};
    struct lt_res delta;
    double lambda;

    (void)state;
    assert_int_equal(lt_lotes_alloc_solve(&p, &lambda, &delta, NULL), 0);
    lt_assert_near(lambda, 40, LP_EPS);
    lt_assert_near(delta.cpu, 1, LP_EPS);
    lt_assert_near(delta.mem, 0.5, LP_EPS);
    lt_assert_near(delta.disk, 0, 0);
}

/* Classes x (2, 1) and y (1, 2), alpha 1/2 each, on one (4, 4) machine: with t tasks of each
 * in parallel, 2 t_x + t_y <= 4 and t_x + 2 t_y <= 4 with t_x, t_y >= lambda / 2 give the
 * unique optimum t_x = t_y = 4/3, lambda* = 8/3; delta_x = (2/3 cpu, 1/3 mem), delta_y the
 * mirror image. */
static void test_alloc_two_classes_share_one_machine(void **state)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 2, 1), mk_class("y", 0.5, 1, 1, 2)};
    struct lt_lotes_config c = mk_config("m", 4, 4, 1);
    struct lt_lotes_problem p = {k, 2, &c, 1};
    struct lt_res delta[2];
    double lambda;

    (void)state;
    assert_int_equal(lt_lotes_alloc_solve(&p, &lambda, delta, NULL), 0);
    lt_assert_near(lambda, 8.0 / 3, LP_EPS);
    lt_assert_near(delta[0].cpu, 2.0 / 3, LP_EPS);
    lt_assert_near(delta[0].mem, 1.0 / 3, LP_EPS);
    lt_assert_near(delta[1].cpu, 1.0 / 3, LP_EPS);
    lt_assert_near(delta[1].mem, 2.0 / 3, LP_EPS);
}

/* The cpu-rich configuration (4, 1) goes to the cpu-heavy class x (1, 0.25) and the
 * memory-rich (1, 4) to y (0.25, 1): total cpu 5 >= (1/2 + 1/8) lambda bounds lambda* by 8,
 * reached only with every resource used, i.e. delta_1x = delta_2y = 1 and the rest 0. */
static void test_alloc_matches_profiles_to_configurations(void **state)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 1, 0.25), mk_class("y", 0.5, 1, 0.25, 1)};
    struct lt_lotes_config c[2] = {mk_config("cpu-rich", 4, 1, 1), mk_config("mem-rich", 1, 4, 1)};
    struct lt_lotes_problem p = {k, 2, c, 2};
    struct lt_res d[4];
    double lambda;

    (void)state;
    assert_int_equal(lt_lotes_alloc_solve(&p, &lambda, d, NULL), 0);
    lt_assert_near(lambda, 8, LP_EPS);
    lt_assert_near(d[0].cpu, 1, LP_EPS); /* cpu-rich, x */
    lt_assert_near(d[0].mem, 1, LP_EPS);
    lt_assert_near(d[1].cpu, 0, LP_EPS); /* cpu-rich, y */
    lt_assert_near(d[2].mem, 0, LP_EPS); /* mem-rich, x */
    lt_assert_near(d[3].cpu, 1, LP_EPS); /* mem-rich, y */
    lt_assert_near(d[3].mem, 1, LP_EPS);
}

/* The paper's fragmentation example (section 4.1): 30 machines of 8 cores, tasks of 3 cores.
 * The fluid LP sees 240 / 3 = 80 tasks; whole machines hold 2 each, 60: lambda 80 vs 60. */
static void test_paper_fragmentation_example(void **state)
{
    struct lt_lotes_class k = mk_class("three-cores", 1, 1, 3, 1);
    struct lt_lotes_config c = mk_config("eight-cores", 8, 8, 30);
    struct lt_lotes_problem p = {&k, 1, &c, 1};
    struct lt_lotes_tables *t;
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    t = lt_lotes_build(&p, &err);
    assert_non_null(t);
    lt_assert_near(t->lambda_alloc, 80, LP_EPS);
    assert_int_equal(t->n_bins, 1);
    assert_int_equal(t->bin_tasks[0], 2);
    assert_int_equal(t->bin_machines[0], 30);
    lt_assert_near(t->lambda_assign, 60, LP_EPS);
    lt_assert_near(t->lambda_rounded, 60, LP_EPS);
    lt_assert_near(t->rho[0], 1, 0);
    lt_lotes_tables_free(t);
}

/* ---- Tables 1 and 3 ---------------------------------------------------------------------- */

static void tables_1_3(struct lt_lotes_config c[10], struct lt_lotes_class k[8],
                       struct lt_lotes_problem *p)
{
    lt_lotes_table1(c);
    lt_lotes_table3(k);
    p->configs = c;
    p->n_configs = 10;
    p->classes = k;
    p->n_classes = 8;
}

/* lambda* of the reduced form that constraint (2) allows: one variable t_jk >= 0 (class-k
 * tasks in parallel per machine of j), sum_k t_jk r_kl <= c_jl, sum_j n_j mu_k t_jk >= alpha_k
 * lambda. Written here with GLPK directly, independently of lotes/lp.c. */
static double reduced_lambda(const struct lt_lotes_problem *p)
{
    size_t kk = p->n_classes, mm = p->n_configs, ncol = mm * kk + 1;
    int ia[1 + 4096], ja[1 + 4096], nz = 0, term;
    double ar[1 + 4096], lambda;
    glp_prob *lp = glp_create_prob();
    glp_smcp parm;

    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_cols(lp, (int)ncol);
    for (size_t c = 1; c <= ncol; c++)
        glp_set_col_bnds(lp, (int)c, GLP_LO, 0, 0);
    glp_set_obj_coef(lp, 1, 1);
    for (size_t k = 0; k < kk; k++) {
        int row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
        ++nz, ia[nz] = row, ja[nz] = 1, ar[nz] = -p->classes[k].alpha;
        for (size_t j = 0; j < mm; j++)
            ++nz, ia[nz] = row, ja[nz] = (int)(2 + j * kk + k),
                  ar[nz] = (double)p->configs[j].n * p->classes[k].mu;
    }
    for (size_t j = 0; j < mm; j++)
        for (int l = 0; l < 2; l++) {
            int row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_UP, 0,
                             l == 0 ? p->configs[j].cap.cpu : p->configs[j].cap.mem);
            for (size_t k = 0; k < kk; k++)
                ++nz, ia[nz] = row, ja[nz] = (int)(2 + j * kk + k),
                      ar[nz] = l == 0 ? p->classes[k].req.cpu : p->classes[k].req.mem;
        }
    assert_true(nz <= 4096);
    glp_load_matrix(lp, nz, ia, ja, ar);
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    term = glp_term_out(GLP_OFF);
    assert_int_equal(glp_simplex(lp, &parm), 0);
    glp_term_out(term);
    assert_int_equal(glp_get_status(lp), GLP_OPT);
    lambda = glp_get_obj_val(lp);
    glp_delete_prob(lp);
    return lambda;
}

/* The paper does not report lambda* for Tables 1+3 (section 5 uses it only as "load 1"), so
 * the value is checked against the reduced formulation above and pinned: 21264.93034 jobs per
 * hour (mu in 1/hours). Relative tolerance 1e-9: both are simplex optima of the same LP. */
static void test_tables_1_3_lambda_and_tables(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    struct lt_err err;

    (void)state;
    tables_1_3(c, k, &p);
    lt_err_init(&err, NULL);
    t = lt_lotes_build(&p, &err);
    if (t == NULL)
        fail_msg("%s", err.text);
    lt_assert_near(t->lambda_alloc, reduced_lambda(&p), 1e-9 * t->lambda_alloc);
    lt_assert_near(t->lambda_alloc, 21264.93034, 1e-5);
    /* Bins and whole machines can only lose capacity: lambda* >= assignment >= rounded. */
    assert_true(t->lambda_assign <= t->lambda_alloc * (1 + 1e-9));
    assert_true(t->lambda_rounded <= t->lambda_assign * (1 + 1e-9));
    assert_true(t->lambda_rounded > 0.9 * t->lambda_alloc);
    assert_int_equal(lt_lotes_tables_check(t, NULL), 0);
    for (size_t j = 0; j < 10; j++) {
        size_t sum = 0;
        for (size_t b = t->bin_first[j]; b < t->bin_first[j + 1]; b++) {
            sum += t->bin_machines[b];
            /* Rounding moves each bin by less than one machine. */
            assert_true(fabs((double)t->bin_machines[b] - t->bin_x[b]) < 1);
        }
        assert_int_equal(sum, 1000);
    }
    lt_lotes_tables_free(t);
}

/* ---- Algorithm 1 against brute force ----------------------------------------------------- */

static bool fits_counts(const struct lt_lotes_problem *p, size_t j, const uint32_t *n)
{
    double cpu = 0, mem = 0;
    const struct lt_res *cap = &p->configs[j].cap;

    for (size_t k = 0; k < p->n_classes; k++) {
        cpu += n[k] * p->classes[k].req.cpu;
        mem += n[k] * p->classes[k].req.mem;
    }
    /* The library's slack (lotes_int.h): 1e-9 of the capacity. */
    return cpu <= cap->cpu * (1 + 1e-9) && mem <= cap->mem * (1 + 1e-9);
}

/* Every count vector (classes not in use stay 0) up to the per-class maximum, feasible and
 * dominated by no other feasible vector (componentwise >=, not equal): the definition of the
 * paper, enumerated. Returns the count; bins are written to out (room for max_out). */
static size_t brute_force_bins(const struct lt_lotes_problem *p, size_t j, const bool *use,
                               uint32_t *out, size_t max_out)
{
    size_t kk = p->n_classes, n_feas = 0, n_out = 0;
    uint32_t lim[8] = {0}, cur[8] = {0};
    uint32_t *feas = calloc(200000 * kk, sizeof(*feas));

    assert_non_null(feas);
    for (size_t k = 0; k < kk; k++) {
        uint32_t one[8] = {0};
        while (use[k]) {
            one[k] = lim[k] + 1;
            if (!fits_counts(p, j, one))
                break;
            lim[k]++;
        }
    }
    for (;;) {
        size_t k = 0;
        if (fits_counts(p, j, cur)) {
            assert_true(n_feas < 200000);
            memcpy(&feas[n_feas++ * kk], cur, kk * sizeof(*cur));
        }
        while (k < kk && cur[k] == lim[k])
            cur[k++] = 0;
        if (k == kk)
            break;
        cur[k]++;
    }
    for (size_t a = 0; a < n_feas; a++) {
        bool dominated = false;
        /* Large sets (Tables 1+3): the feasible set is closed downwards, so a is dominated iff
         * a plus one task of some used class is feasible; small sets use the definition. */
        for (size_t k = 0; k < kk && n_feas > 3000 && !dominated; k++) {
            uint32_t up[8];
            memcpy(up, &feas[a * kk], kk * sizeof(*up));
            up[k]++;
            dominated = use[k] && fits_counts(p, j, up);
        }
        for (size_t b = 0; b < n_feas && n_feas <= 3000 && !dominated; b++) {
            bool ge = true, ne = false;
            for (size_t k = 0; k < kk; k++) {
                ge = ge && feas[b * kk + k] >= feas[a * kk + k];
                ne = ne || feas[b * kk + k] != feas[a * kk + k];
            }
            dominated = ge && ne;
        }
        if (!dominated) {
            assert_true(n_out < max_out);
            memcpy(&out[n_out++ * kk], &feas[a * kk], kk * sizeof(*feas));
        }
    }
    free(feas);
    return n_out;
}

static int cmp_desc(const uint32_t *a, const uint32_t *b, size_t kk)
{
    for (size_t k = 0; k < kk; k++)
        if (a[k] != b[k])
            return a[k] > b[k] ? -1 : 1;
    return 0;
}

/* Algorithm 1's bins equal the brute-force set, and come in decreasing lexicographic order. */
static void check_bins_against_brute_force(const struct lt_lotes_problem *p, size_t j,
                                           const bool *use)
{
    size_t kk = p->n_classes, n = 0, nb;
    uint32_t *bins = NULL, *bf = calloc(20000 * kk, sizeof(*bf));
    struct lt_err err;

    assert_non_null(bf);
    lt_err_init(&err, NULL);
    if (lt_lotes_bins_enum(p, j, use, 0, &bins, &n, &err) != 0)
        fail_msg("%s", err.text);
    nb = brute_force_bins(p, j, use, bf, 20000);
    assert_int_equal(n, nb);
    for (size_t a = 0; a < n; a++) {
        bool found = false;
        if (a > 0)
            assert_true(cmp_desc(&bins[(a - 1) * kk], &bins[a * kk], kk) < 0);
        for (size_t b = 0; b < nb && !found; b++)
            found = cmp_desc(&bins[a * kk], &bf[b * kk], kk) == 0;
        assert_true(found);
    }
    lt_free(bins);
    free(bf);
}

/* (4, 4) with x (2, 1) and y (1, 2): exactly {2x}, {x, y}, {2y}, in that order. */
static void test_bins_by_hand(void **state)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 2, 1), mk_class("y", 0.5, 1, 1, 2)};
    struct lt_lotes_config c = mk_config("m", 4, 4, 1);
    struct lt_lotes_problem p = {k, 2, &c, 1};
    static const uint32_t want[6] = {2, 0, 1, 1, 0, 2};
    bool use[2] = {true, true};
    uint32_t *bins = NULL;
    size_t n = 0;

    (void)state;
    assert_int_equal(lt_lotes_bins_enum(&p, 0, use, 0, &bins, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(bins, want, sizeof(want));
    lt_free(bins);
    /* Without y the only bin is {2x}; with no class the only bin is empty. */
    use[1] = false;
    assert_int_equal(lt_lotes_bins_enum(&p, 0, use, 0, &bins, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(bins[0], 2);
    assert_int_equal(bins[1], 0);
    lt_free(bins);
    use[0] = false;
    assert_int_equal(lt_lotes_bins_enum(&p, 0, use, 0, &bins, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(bins[0] + bins[1], 0);
    lt_free(bins);
}

/* A tiny request (100,000 tasks a machine, within LT_LOTES_MAX_FIT) costs O(1) a search node:
 * counting the tasks one at a time took 1e5 steps at each of the 1e5 nodes (minutes). */
static void test_bins_tiny_request_is_fast(void **state)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 1e-5, 0), mk_class("y", 0.5, 1, 0, 1e-5)};
    struct lt_lotes_config c = mk_config("m", 1, 1, 1);
    struct lt_lotes_problem p = {k, 2, &c, 1};
    bool use[2] = {true, true};
    uint32_t *bins = NULL;
    size_t n = 0;
    clock_t t0 = clock();

    (void)state;
    assert_int_equal(lt_lotes_bins_enum(&p, 0, use, 0, &bins, &n, NULL), 0);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    assert_int_equal(n, 1); /* x and y use different resources: one bin, both full */
    assert_int_equal(bins[0], 100000);
    assert_int_equal(bins[1], 100000);
    lt_free(bins);
}

/* 300 seeded random instances: 1-4 classes of (0.2..1.7, 0.2..1.7) on a (1..5, 1..5) machine,
 * some classes switched off; each against brute force. */
static void test_bins_match_brute_force_on_random_instances(void **state)
{
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 20240808, 0);
    for (int trial = 0; trial < 300; trial++) {
        struct lt_lotes_class k[4];
        struct lt_lotes_config c =
            mk_config("m", 1 + 4 * lt_rng_uniform(&rng), 1 + 4 * lt_rng_uniform(&rng), 1);
        size_t kk = 1 + (size_t)lt_rng_below(&rng, 4);
        struct lt_lotes_problem p = {k, kk, &c, 1};
        bool use[4];

        for (size_t i = 0; i < kk; i++) {
            char name[24];
            snprintf(name, sizeof(name), "c%zu", i);
            /* Small enough to fit the smallest machine (1, 1): the problem check wants it. */
            k[i] = mk_class(name, 1, 1, 0.2 + 0.75 * lt_rng_uniform(&rng),
                            0.2 + 0.75 * lt_rng_uniform(&rng));
            use[i] = lt_rng_below(&rng, 5) != 0;
        }
        check_bins_against_brute_force(&p, 0, use);
    }
}

/* Every configuration of Tables 1+3 with the classes the allocation LP gives it. */
static void test_bins_of_tables_1_3_match_brute_force(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    for (size_t j = 0; j < 10; j++) {
        bool use[8];
        for (size_t i = 0; i < 8; i++)
            use[i] = t->delta[j * 8 + i].cpu > 1e-9;
        check_bins_against_brute_force(&p, j, use);
    }
    lt_lotes_tables_free(t);
}

/* ---- Whole machines ---------------------------------------------------------------------- */

static void test_round_by_hand(void **state)
{
    static const double x1[2] = {0.5, 0.5}, x2[3] = {1.2, 2.3, 0.5};
    static const double x3[3] = {2.9999999999, 1.0000000001, 0};
    size_t out[3];
    struct lt_err err;

    (void)state;
    /* Equal fractions: the lower index gets the unit. */
    assert_int_equal(lt_lotes_round(x1, 2, 1, out, NULL), 0);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 0);
    /* Floors 1, 2, 0 leave one unit: the largest fraction (0.5) takes it. */
    assert_int_equal(lt_lotes_round(x2, 3, 4, out, NULL), 0);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 1);
    /* Round-off below an integer is the integer. */
    assert_int_equal(lt_lotes_round(x3, 3, 4, out, NULL), 0);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 1);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_round(x2, 3, 5, out, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "not to 5"));
}

/* 1000 seeded random vectors (1..12 entries, n 1..5000): the sum is n exactly, each entry
 * moves by less than 1. */
static void test_round_keeps_each_count(void **state)
{
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 7, 1);
    for (int trial = 0; trial < 1000; trial++) {
        size_t m = 1 + (size_t)lt_rng_below(&rng, 12), n = 1 + (size_t)lt_rng_below(&rng, 5000);
        double x[12], w[12], sum = 0;
        size_t out[12], total = 0;

        for (size_t i = 0; i < m; i++) {
            w[i] = lt_rng_below(&rng, 4) == 0 ? 0 : lt_rng_uniform(&rng);
            sum += w[i];
        }
        for (size_t i = 0; i < m; i++)
            x[i] = sum > 0 ? w[i] / sum * (double)n : (i == 0 ? (double)n : 0);
        assert_int_equal(lt_lotes_round(x, m, n, out, NULL), 0);
        for (size_t i = 0; i < m; i++) {
            assert_true(fabs((double)out[i] - x[i]) < 1);
            total += out[i];
        }
        assert_int_equal(total, n);
    }
}

/* Two classes that only fit alone on the one machine: the LP splits it 1/2 - 1/2; whole, the
 * machine goes to x (lower bin) and y has none: a clear error naming y. */
static void test_build_rejects_class_lost_by_rounding(void **state)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 0.6, 0.6), mk_class("y", 0.5, 1, 0.6, 0.6)};
    struct lt_lotes_config c = mk_config("m", 1, 1, 1);
    struct lt_lotes_problem p = {k, 2, &c, 1};
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_null(lt_lotes_build(&p, &err));
    assert_int_equal(err.code, LT_EINFEASIBLE);
    assert_non_null(strstr(err.text, "class 'y' has no machine after rounding"));
}

/* ---- The dispatcher ---------------------------------------------------------------------- */

/* Level 1 over 100,000 draws per class of Tables 1+3: each frequency is within 0.008 of
 * rho_jk. The standard deviation of a frequency is sqrt(rho (1 - rho) / N) <= 0.0016, so the
 * tolerance is 5 sigma (the seed is fixed; the bound says a correct sampler passes with any
 * seed except with probability ~1e-6 per cell). */
static void test_level1_frequencies_converge_to_rho(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    struct lt_rng rng;
    const int draws = 100000;

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    lt_rng_init(&rng, 42, LT_RNG_POLICY);
    for (size_t cls = 0; cls < 8; cls++) {
        int hits[10] = {0};
        for (int d = 0; d < draws; d++) {
            size_t j = 99;
            assert_int_equal(lt_lotes_pick_config(t, cls, &rng, &j, NULL), 0);
            assert_true(j < 10);
            assert_true(t->rho[j * 8 + cls] > 0);
            hits[j]++;
        }
        for (size_t j = 0; j < 10; j++)
            lt_assert_near((double)hits[j] / draws, t->rho[j * 8 + cls], 0.008);
    }
    lt_lotes_tables_free(t);
}

/* The two-configuration instance of test_alloc_matches_profiles_to_configurations with 3
 * machines each: rho sends x to "cpu-rich" (machines 0-2), y to "mem-rich" (3-5). */
static struct lt_lotes_tables *two_config_tables(struct lt_lotes_machine view[6])
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 1, 0.25), mk_class("y", 0.5, 1, 0.25, 1)};
    struct lt_lotes_config c[2] = {mk_config("cpu-rich", 4, 1, 3), mk_config("mem-rich", 1, 4, 3)};
    struct lt_lotes_problem p = {k, 2, c, 2};
    static const size_t config[6] = {0, 0, 0, 1, 1, 1};
    struct lt_lotes_tables *t = lt_lotes_build(&p, NULL);
    size_t bin[6];

    assert_non_null(t);
    lt_assert_near(t->rho[0], 1, 0);
    lt_assert_near(t->rho[3], 1, 0);
    assert_int_equal(lt_lotes_machine_bins(t, config, 6, bin, NULL), 0);
    for (size_t i = 0; i < 6; i++) {
        view[i].config = config[i];
        view[i].bin = bin[i];
        view[i].free = t->configs[config[i]].cap;
        view[i].queue_len = 0;
        view[i].running = 0;
    }
    return t;
}

static void test_level2_rules_in_order(void **state)
{
    struct lt_lotes_machine view[6];
    struct lt_lotes_tables *t = two_config_tables(view);
    struct lt_res small = {0.5, 0.1, 0}, none = {0, 0, 0};
    struct lt_lotes_choice ch;
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 1, 0);
    /* (a) first fit over j's machines serving x. */
    assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.config, 0);
    assert_int_equal(ch.machine, 0);
    assert_int_equal(ch.how, LT_LOTES_FIRST_FIT);
    view[0].free = none;
    assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 1);
    /* (b) j's machines full: the first machine anywhere with room. */
    view[1].free = view[2].free = view[3].free = none;
    assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 4);
    assert_int_equal(ch.how, LT_LOTES_ANY_ROOM);
    /* (c) all full: the shortest queue of j's machines serving x (machine 2). */
    view[4].free = view[5].free = none;
    view[0].queue_len = 5;
    view[1].queue_len = 3;
    view[2].queue_len = 2;
    assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 2);
    assert_int_equal(ch.how, LT_LOTES_QUEUED);
    /* (d) a task no cpu-rich machine can ever hold (mem 2 > 1): queue on mem-rich. */
    {
        struct lt_res big = {0.5, 2, 0};
        view[3].queue_len = 4;
        view[4].queue_len = 1;
        view[5].queue_len = 3;
        assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &big, &rng, &ch, NULL), 0);
        assert_int_equal(ch.machine, 4);
        assert_int_equal(ch.how, LT_LOTES_QUEUED_ANY);
    }
    /* Nothing can ever hold it: a result, not an error. */
    {
        struct lt_res huge = {5, 5, 0};
        assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &huge, &rng, &ch, NULL), 0);
        assert_int_equal(ch.machine, LT_NO_MACHINE);
    }
    lt_lotes_tables_free(t);
}

/* Shortest-queue ties are random: machines 1 and 2 tie; over 4000 dispatches each gets
 * 1/2 within 0.05 (sigma = 0.0079, so 6 sigma). */
static void test_level2_queue_ties_are_random(void **state)
{
    struct lt_lotes_machine view[6];
    struct lt_lotes_tables *t = two_config_tables(view);
    struct lt_res small = {0.5, 0.1, 0}, none = {0, 0, 0};
    struct lt_lotes_choice ch;
    struct lt_rng rng;
    int hits[6] = {0};

    (void)state;
    lt_rng_init(&rng, 3, 0);
    for (size_t i = 0; i < 6; i++)
        view[i].free = none;
    view[0].queue_len = 4;
    view[1].queue_len = 2;
    view[2].queue_len = 2;
    for (int d = 0; d < 4000; d++) {
        assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
        hits[ch.machine]++;
    }
    assert_int_equal(hits[1] + hits[2], 4000);
    lt_assert_near(hits[1] / 4000.0, 0.5, 0.05);
    lt_lotes_tables_free(t);
}

/* The greedy benchmark, JSQ reading: join the shortest queue (running + waiting) among the
 * machines whose capacity holds the task, whatever rho, the bins and the free resources say;
 * ROOM reading: the shortest waiting queue among the machines with room now, first. */
static void test_greedy_shortest_queue(void **state)
{
    struct lt_lotes_machine view[6];
    struct lt_lotes_tables *t = two_config_tables(view);
    struct lt_res small = {0.5, 0.1, 0}, big = {0.5, 2, 0}, huge = {5, 5, 0}, none = {0, 0, 0};
    struct lt_lotes_choice ch;
    struct lt_rng rng;
    int hits[6] = {0};

    (void)state;
    lt_rng_init(&rng, 5, 0);
    for (size_t i = 0; i < 6; i++) {
        view[i].running = 2;
        view[i].queue_len = 1;
    }
    /* x would go to cpu-rich under LoTES; greedy takes the shortest queue (4), and starts. */
    view[4].queue_len = 0;
    assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_JSQ, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 4);
    assert_int_equal(ch.how, LT_LOTES_ANY_ROOM);
    assert_int_equal(ch.config, 1);
    /* resource-unaware: the shortest queue wins even with no room now (the task waits) */
    view[4].free = none;
    assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_JSQ, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 4);
    assert_int_equal(ch.how, LT_LOTES_QUEUED_ANY);
    /* running tasks count: machine 1 (0 running, 1 waiting) beats 4 (2 running) */
    view[1].running = 0;
    assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_JSQ, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 1);
    assert_int_equal(ch.how, LT_LOTES_QUEUED_ANY); /* room, but behind its queue: FIFO */
    /* only capacities that hold it: mem 2 fits mem-rich only; 3, 4, 5 tie at 3, random */
    view[4].running = 2;
    view[4].queue_len = 1;
    for (int d = 0; d < 3000; d++) {
        assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_JSQ, &big, &rng, &ch, NULL),
                         0);
        hits[ch.machine]++;
    }
    assert_int_equal(hits[3] + hits[4] + hits[5], 3000);
    for (int m = 3; m < 6; m++) /* 1/3 each, sigma 0.0086: 6 sigma */
        lt_assert_near(hits[m] / 3000.0, 1.0 / 3.0, 0.052);
    assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_JSQ, &huge, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, LT_NO_MACHINE);
    /* ROOM: machine 4 has no room now; of those with room (all others, queue 1 each except
     * machine 1 with 1 waiting and no running), the waiting queues tie at 1: random among
     * 0, 1, 2, 3, 5, and the task waits behind that queue */
    view[2].queue_len = 0;
    assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_ROOM, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 2); /* room and the only empty queue: it starts */
    assert_int_equal(ch.how, LT_LOTES_ANY_ROOM);
    for (int m = 0; m < 6; m++)
        view[m].free = none;
    view[5].queue_len = 7;
    assert_int_equal(lt_lotes_greedy(t, view, 6, LT_LOTES_GREEDY_ROOM, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 2); /* no room anywhere: the shortest waiting queue */
    assert_int_equal(ch.how, LT_LOTES_QUEUED_ANY);
    lt_lotes_tables_free(t);
}

/* The experiments' simulation: at a low load nothing waits and the mean response is the
 * mean processing time, sum_k alpha_k / mu_k = 6.10 h for Table 3 (tolerance 0.6 h: the mean of
 * ~8,500 mixed exponentials has a standard error of ~0.15 h); one seed gives one result; LoTES
 * and greedy see the same workload; every dispatched task is counted by one rule. */
static void test_sim_low_load_and_determinism(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_res cv[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    struct lt_lotes_sim_params sp;
    struct lt_lotes_sim_summary a, b, g;
    double es = 0.0;
    struct lt_err err;

    (void)state;
    tables_1_3(c, k, &p);
    for (size_t j = 0; j < 10; j++)
        c[j].n = 20;
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    lt_lotes_table3_cv(cv);
    for (size_t i = 0; i < 8; i++)
        es += k[i].alpha / k[i].mu;
    lt_lotes_sim_params_default(&sp, t);
    sp.cv = cv;
    sp.load = 0.1;
    sp.hours = 300;
    sp.warmup = 100;
    assert_int_equal(lt_lotes_sim_run(&sp, &a, NULL), 0);
    assert_true(a.measured > 7000);
    lt_assert_near(a.wait_mean, 0.0, 1e-12);
    lt_assert_near(a.resp_mean, es, 0.6);
    assert_int_equal(a.how[0] + a.how[1] + a.how[2] + a.how[3] + a.rejected, a.tasks);
    assert_int_equal(a.completed + a.unfinished, a.measured);
    assert_int_equal(lt_lotes_sim_run(&sp, &b, NULL), 0);
    assert_memory_equal(&a, &b, sizeof(a));
    sp.policy = LT_LOTES_POLICY_GREEDY;
    assert_int_equal(lt_lotes_sim_run(&sp, &g, NULL), 0);
    assert_int_equal(g.arrived, a.arrived); /* the same arrivals */
    assert_int_equal(g.measured, a.measured);
    /* MapReduce: every job is 3 maps and 2 reduces */
    sp.policy = LT_LOTES_POLICY_LOTES;
    sp.mapreduce = true;
    sp.maps = 3;
    sp.reduces = 2;
    sp.load = 0.3;
    sp.drain = 1e6;
    assert_int_equal(lt_lotes_sim_run(&sp, &a, NULL), 0);
    assert_int_equal(a.unfinished, 0);
    assert_int_equal(a.tasks, 5 * a.arrived);
    assert_true(a.resp_mean > es); /* a job's flow time: its longest map, then reduce */
    /* bad parameters name themselves */
    sp.warmup = 400;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_sim_run(&sp, &a, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "warm-up 400"));
    sp.warmup = 10;
    sp.load = 0;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_sim_run(&sp, &a, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "load 0"));
    lt_lotes_tables_free(t);
}

/* Configurations from capacities: equal capacities group in order of first appearance, a
 * machine without cpu or memory is left out; the dispatcher then accepts machines the tables
 * do not describe, for "any room" only. */
static void test_configs_from_caps_and_undescribed_machines(void **state)
{
    static const struct lt_res cap[6] = {{0.5, 0.25, 0}, {1, 1, 0},      {0.5, 0.25, 0},
                                         {0, 0, 0},      {0.5, 0.25, 0}, {1, 1, 0}};
    struct lt_lotes_config c[4];
    struct lt_lotes_class k[8];
    struct lt_lotes_machine view[6];
    struct lt_lotes_tables *t = two_config_tables(view);
    struct lt_res small = {0.5, 0.1, 0}, none = {0, 0, 0};
    struct lt_lotes_choice ch;
    struct lt_rng rng;
    size_t n;
    struct lt_err err;

    (void)state;
    assert_int_equal(lt_lotes_configs_from_caps(cap, 6, c, 4, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].n, 3);
    assert_int_equal(c[1].n, 2);
    assert_string_equal(c[0].name, "cpu0.5-mem0.25-disk0");
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_configs_from_caps(cap, 6, c, 1, &n, &err), LT_ERANGE);
    lt_lotes_table3_normalised(k);
    lt_assert_near(k[7].req.cpu, 1.32 / 24, 1e-12);
    lt_assert_near(k[7].req.mem, 1.93 / 32, 1e-12);
    /* machine 5 undescribed: never a first fit, but "any room" when it alone has room */
    lt_rng_init(&rng, 1, 0);
    view[5].config = view[5].bin = LT_LOTES_NONE;
    for (size_t i = 0; i < 5; i++)
        view[i].free = none;
    assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
    assert_int_equal(ch.machine, 5);
    assert_int_equal(ch.how, LT_LOTES_ANY_ROOM);
    view[5].free = none; /* no room anywhere: it is no queue candidate (capacity unknown) */
    assert_int_equal(lt_lotes_dispatch(t, view, 6, 0, &small, &rng, &ch, NULL), 0);
    assert_true(ch.machine < 3);
    assert_int_equal(ch.how, LT_LOTES_QUEUED);
    lt_lotes_tables_free(t);
}

static void test_machine_bins_rejects_wrong_counts(void **state)
{
    struct lt_lotes_machine view[6];
    struct lt_lotes_tables *t = two_config_tables(view);
    static const size_t config[5] = {0, 0, 0, 1, 1};
    static const size_t bad[6] = {0, 0, 0, 1, 1, 7};
    size_t bin[6];
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_machine_bins(t, config, 5, bin, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "configuration 'mem-rich' has 2 machines"));
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_machine_bins(t, bad, 6, bin, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "machine 5: configuration 7"));
    lt_lotes_tables_free(t);
}

/* ---- Online use: classification, machine view, rank (online.c) -------------------------- */

/* The two-configuration instance in Kubernetes units (cpu millicores, mem bytes): x requests
 * (1000m, 0.25 GB), y (250m, 1 GB); "cpu-rich" is (4000m, 1 GB), "mem-rich" (1000m, 4 GB). */
static struct lt_lotes_tables *k8s_tables(void)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 1000, 0.25e9),
                                  mk_class("y", 0.5, 1, 250, 1e9)};
    struct lt_lotes_config c[2] = {mk_config("cpu-rich", 4000, 1e9, 3),
                                   mk_config("mem-rich", 1000, 4e9, 3)};
    struct lt_lotes_problem p = {k, 2, c, 2};
    struct lt_lotes_tables *t = lt_lotes_build(&p, NULL);

    assert_non_null(t);
    return t;
}

static size_t classify(const struct lt_lotes_tables *t, double cpu, double mem, double disk)
{
    struct lt_res r = {cpu, mem, disk};
    size_t k = 99;

    assert_int_equal(lt_lotes_classify(t, &r, &k, NULL), 0);
    return k;
}

/* Nearest class after dividing by the largest capacity (4000m, 4 GB). (250m, 0.6 GB): to x
 * (0.1875, 0.0875) -> 0.0428, to y (0, 0.1) -> 0.01, so y; the raw distance in bytes would
 * pick x (0.35e9 < 0.4e9). The midpoint is a tie: the lower index. Disk is no resource of the
 * tables (every capacity 0), so a disk request changes nothing. */
static void test_classify_nearest_normalised_class(void **state)
{
    struct lt_lotes_tables *t = k8s_tables();
    struct lt_res bad = {-1, 0, 0}, nan_req = {NAN, 0, 0};
    struct lt_err err;
    size_t k;

    (void)state;
    assert_int_equal(classify(t, 1000, 0.25e9, 0), 0);
    assert_int_equal(classify(t, 250, 1e9, 0), 1);
    assert_int_equal(classify(t, 250, 0.6e9, 0), 1);
    assert_int_equal(classify(t, 625, 0.625e9, 0), 0);
    assert_int_equal(classify(t, 625, 0.625e9, 1e12), 0);
    assert_int_equal(classify(t, 0, 0, 0), 0);
    assert_int_equal(classify(t, 1e6, 0, 0), 0);
    assert_int_equal(classify(t, 0, 1e15, 0), 1);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_classify(t, &bad, &k, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "not finite and >= 0"));
    assert_int_equal(lt_lotes_classify(t, &nan_req, &k, NULL), LT_EINVAL);
    assert_int_equal(lt_lotes_classify(NULL, &bad, &k, NULL), LT_EINVAL);
    lt_lotes_tables_free(t);
}

/* Tables 1+3: classification equals a brute-force argmin written out here, on 2000 seeded
 * random requests, and every class's own expected request is its class. */
static void test_classify_matches_brute_force_on_tables_1_3(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    struct lt_rng rng;

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    for (size_t cls = 0; cls < 8; cls++)
        assert_int_equal(classify(t, k[cls].req.cpu, k[cls].req.mem, 0), cls);
    lt_rng_init(&rng, 7, LT_RNG_WORKLOAD);
    for (int d = 0; d < 2000; d++) {
        double cpu = lt_rng_uniform(&rng) * 2, mem = lt_rng_uniform(&rng) * 2, best = HUGE_VAL;
        size_t want = 0;

        for (size_t cls = 0; cls < 8; cls++) { /* largest capacities: 24 cores, 32 RAM */
            double a = (cpu - k[cls].req.cpu) / 24, b = (mem - k[cls].req.mem) / 32;
            if (a * a + b * b < best) {
                best = a * a + b * b;
                want = cls;
            }
        }
        assert_int_equal(classify(t, cpu, mem, 0), want);
    }
    lt_lotes_tables_free(t);
}

/* With exactly n_j machines per configuration, lt_lotes_map_machines gives the bins that
 * lt_lotes_machine_bins gives, machines of Tables 1+3 interleaved (machine i of configuration
 * i mod 10). */
static void test_map_machines_exact_counts_equal_machine_bins(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    const size_t n = 10000;
    struct lt_res *cap = lt_calloc(n, sizeof(*cap));
    size_t *config = lt_calloc(n, sizeof(*config)), *got_c = lt_calloc(n, sizeof(*got_c));
    size_t *want = lt_calloc(n, sizeof(*want)), *got = lt_calloc(n, sizeof(*got));

    (void)state;
    assert_true(cap && config && got_c && want && got);
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++) {
        config[i] = i % 10;
        cap[i] = c[i % 10].cap;
    }
    assert_int_equal(lt_lotes_machine_bins(t, config, n, want, NULL), 0);
    assert_int_equal(lt_lotes_map_machines(t, cap, n, got_c, got, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got_c[i], config[i]);
        assert_int_equal(got[i], want[i]);
    }
    lt_lotes_tables_free(t);
    lt_free(cap);
    lt_free(config);
    lt_free(got_c);
    lt_free(want);
    lt_free(got);
}

/* A live cluster: configuration 0 has 500 of its 1000 machines, configuration 1 has 1500,
 * configuration 2 one, the others none; two machines match nothing (one 1e-5 off, one of
 * another shape), one is within the tolerance (1e-7 off) and one has disk, which Table 1
 * leaves at 0 and no class requests. Per configuration each bin gets
 * within 1 of m_b p_j / n_j machines, the counts sum to p_j, and the machines take the bins in
 * order. A capacity that is not a number is an error naming the machine. */
static void test_map_machines_shares_bins_by_proportion(void **state)
{
    static const size_t present[3] = {500, 1500, 1};
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    const size_t n = 500 + 1500 + 1 + 4;
    struct lt_res cap[2005];
    size_t cfg[2005], bin[2005], i = 0;
    struct lt_err err;

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    for (size_t j = 0; j < 3; j++)
        for (size_t m = 0; m < present[j]; m++)
            cap[i++] = c[j].cap;
    cap[i] = c[3].cap;
    cap[i++].cpu *= 1 + 1e-5;
    cap[i++] = (struct lt_res){3, 3, 0};
    cap[i] = c[4].cap;
    cap[i++].mem *= 1 + 1e-7;
    cap[i] = c[5].cap;
    cap[i++].disk = 5e10; /* Table 1 has no disk: not compared */
    assert_int_equal(i, n);
    assert_int_equal(lt_lotes_map_machines(t, cap, n, cfg, bin, NULL), 0);
    for (size_t j = 0, at = 0; j < 3; j++) {
        size_t first = t->bin_first[j], nb = t->bin_first[j + 1] - first, sum = 0;
        for (size_t b = 0; b < nb; b++) {
            double x = (double)t->bin_machines[first + b] * (double)present[j] / 1000.0;
            size_t cnt = 0;
            while (cnt < present[j] - sum && bin[at + sum + cnt] == first + b)
                cnt++;
            assert_true(fabs((double)cnt - x) < 1.0);
            sum += cnt;
        }
        assert_int_equal(sum, present[j]);
        for (size_t m = 0; m < present[j]; m++)
            assert_int_equal(cfg[at + m], j);
        at += present[j];
    }
    assert_int_equal(cfg[n - 4], LT_LOTES_NONE);
    assert_int_equal(bin[n - 4], LT_LOTES_NONE);
    assert_int_equal(cfg[n - 3], LT_LOTES_NONE);
    assert_int_equal(cfg[n - 2], 4);
    assert_true(bin[n - 2] >= t->bin_first[4] && bin[n - 2] < t->bin_first[5]);
    assert_int_equal(cfg[n - 1], 5);
    cap[7].mem = NAN;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_map_machines(t, cap, n, cfg, bin, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "machine 7"));
    lt_lotes_tables_free(t);
}

/* The two-configuration instance: for class x the cpu-rich machines (rho 1, bins of x) score 0,
 * the mem-rich ones 1, a full machine is infeasible, a machine the tables do not describe 1.
 * A tie-break orders inside each group and never across groups. */
static void test_rank_by_hand(void **state)
{
    struct lt_lotes_machine view[7];
    struct lt_lotes_tables *t = two_config_tables(view);
    struct lt_res small = {0.5, 0.1, 0};
    double s[7], tb[7] = {3, 1, 2, 0, 9, 5, 4};
    struct lt_err err;

    (void)state;
    view[2].free = (struct lt_res){0, 0, 0};
    view[6] = view[5];
    view[6].config = LT_LOTES_NONE;
    view[6].bin = LT_LOTES_NONE;
    assert_int_equal(lt_lotes_rank(t, view, 7, 0, &small, NULL, s, NULL), 0);
    lt_assert_near(s[0], 0, 0);
    lt_assert_near(s[1], 0, 0);
    assert_true(isinf(s[2]));
    for (size_t i = 3; i < 7; i++)
        lt_assert_near(s[i], 1, 0);
    /* Class y: the mem-rich machines come first. */
    assert_int_equal(lt_lotes_rank(t, view, 7, 1, &small, NULL, s, NULL), 0);
    lt_assert_near(s[0], 1, 0);
    lt_assert_near(s[3], 0, 0);
    /* Tie-break: groups {0, 1} and {3, 4, 5, 6}; delta = 0.5, tiebreak over 0..9. */
    assert_int_equal(lt_lotes_rank(t, view, 7, 0, &small, tb, s, NULL), 0);
    lt_assert_near(s[0], 0.5 * 3 / 9, 1e-15);
    lt_assert_near(s[1], 0.5 * 1 / 9, 1e-15);
    lt_assert_near(s[3], 1, 1e-15);
    lt_assert_near(s[4], 1.5, 1e-15);
    assert_true(s[1] < s[0] && s[0] < s[3] && s[3] < s[6] && s[6] < s[5] && s[5] < s[4]);
    /* A tie-break that says "infeasible" makes the machine infeasible. */
    tb[4] = HUGE_VAL;
    assert_int_equal(lt_lotes_rank(t, view, 7, 0, &small, tb, s, NULL), 0);
    assert_true(isinf(s[4]));
    /* Bad arguments. */
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_rank(t, view, 7, 2, &small, NULL, s, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "class 2"));
    view[4].bin = 0; /* a bin of cpu-rich on a mem-rich machine */
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_rank(t, view, 7, 0, &small, NULL, s, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "machine 4"));
    lt_lotes_tables_free(t);
}

/* Rank against the dispatcher on Tables 1+3, 10 machines per configuration (mapped
 * proportionally), each machine with a random share of its capacity free: every first-fit
 * choice of lt_lotes_dispatch lands on a machine scored 1 - rho_jk of the drawn j, every
 * "any room" choice on a feasible machine; the frequency of first fits on configuration j is
 * rho_jk (5 sigma, sigma <= 0.005 at 10,000 draws) for every j with a serving machine with
 * room; and the best-scored machines are those of the configuration the dispatcher sends the
 * task to most often. */
static void test_rank_follows_dispatch_choices(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    struct lt_lotes_machine view[100];
    struct lt_res cap[100];
    size_t cfg[100], bin[100];
    struct lt_rng rng;
    const int draws = 10000;
    int any_room = 0, split = 0; /* the draws exercised both rules and a split column */

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    for (size_t i = 0; i < 100; i++)
        cap[i] = c[i / 10].cap;
    assert_int_equal(lt_lotes_map_machines(t, cap, 100, cfg, bin, NULL), 0);
    lt_rng_init(&rng, 11, LT_RNG_POLICY);
    for (size_t i = 0; i < 100; i++) {
        double u = lt_rng_uniform(&rng);
        view[i].config = cfg[i];
        view[i].bin = bin[i];
        view[i].free = (struct lt_res){cap[i].cpu * u, cap[i].mem * u, 0};
        view[i].queue_len = 0;
    }
    for (size_t cls = 0; cls < 8; cls++) {
        double s[100], best = HUGE_VAL, best_rho = 0;
        int ff[10] = {0}, most = 0;
        bool serving[10] = {false};
        struct lt_lotes_choice ch;

        assert_int_equal(lt_lotes_rank(t, view, 100, cls, &k[cls].req, NULL, s, NULL), 0);
        for (size_t i = 0; i < 100; i++) {
            if (s[i] < 1.0)
                serving[cfg[i]] = true;
            best = s[i] < best ? s[i] : best;
        }
        for (int d = 0; d < draws; d++) {
            assert_int_equal(lt_lotes_dispatch(t, view, 100, cls, &k[cls].req, &rng, &ch, NULL), 0);
            if (ch.how == LT_LOTES_FIRST_FIT) {
                lt_assert_near(s[ch.machine], 1 - t->rho[ch.config * 8 + cls], 1e-12);
                assert_true(s[ch.machine] < 1.0);
                ff[ch.config]++;
            } else {
                assert_int_equal(ch.how, LT_LOTES_ANY_ROOM);
                assert_true(isfinite(s[ch.machine]));
                assert_false(serving[ch.config]);
                any_room++;
            }
        }
        for (size_t j = 0; j < 10; j++) {
            if (serving[j])
                lt_assert_near((double)ff[j] / draws, t->rho[j * 8 + cls], 0.025);
            else
                assert_int_equal(ff[j], 0);
            if (ff[j] > ff[most])
                most = (int)j;
            if (serving[j] && t->rho[j * 8 + cls] > best_rho)
                best_rho = t->rho[j * 8 + cls];
        }
        if (best < 1.0) {
            lt_assert_near(best, 1 - best_rho, 1e-12);
            lt_assert_near(t->rho[most * 8 + cls], best_rho, 1e-12);
        }
        split += best_rho < 1.0 && best < 1.0;
    }
    assert_true(any_room > 0);
    assert_true(split > 0);
    lt_lotes_tables_free(t);
}

/* The index against lt_lotes_dispatch on Tables 1+3 (100 machines, 10 a configuration) and
 * 8 machines the tables do not describe: 20,000 dispatches of random classes at 0.5x to 30x
 * their request, each after a random machine changed (free room, offline, queue length),
 * must give the same choice and leave the two generators in the same state; every rule of
 * level 2 and "nothing holds it" occur. lt_lotes_index_dispatch_now gives the same choice
 * under rules (a) and (b), else no machine and its generator untouched (it follows the others
 * only while they answer (a) or (b)). lt_lotes_index_check agrees, and sees a stale view. */
static void test_index_matches_dispatch(void **state)
{
    enum { N = 108 };
    static const double scale[4] = {0.5, 1, 3, 30}, phase[4] = {1, 0.1, 0.01, 0.3};
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t;
    struct lt_lotes_index *ix;
    struct lt_lotes_machine view[N];
    struct lt_res cap[N];
    size_t cfg[N], bin[N];
    struct lt_rng rng, a, b, c0, cn;
    int seen[5] = {0};
    struct lt_err err;

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    for (size_t i = 0; i < N; i++)
        cap[i] = i < 100 ? c[i / 10].cap : (struct lt_res){48, 64, 0};
    assert_int_equal(lt_lotes_map_machines(t, cap, N, cfg, bin, NULL), 0);
    lt_rng_init(&rng, 5, LT_RNG_WORKLOAD);
    lt_rng_init(&a, 6, LT_RNG_POLICY);
    b = a;
    for (size_t i = 0; i < N; i++) {
        double u = lt_rng_uniform(&rng);
        view[i] =
            (struct lt_lotes_machine){cfg[i], bin[i], {cap[i].cpu * u, cap[i].mem * u, 0}, 0, 0};
    }
    ix = lt_lotes_index_new(t, view, N, NULL);
    assert_non_null(ix);
    for (int d = 0; d < 20000; d++) {
        size_t i = lt_rng_below(&rng, N), cls = lt_rng_below(&rng, 8);
        double u = lt_rng_uniform(&rng), f = scale[lt_rng_below(&rng, 4)];
        struct lt_res req = {k[cls].req.cpu * f, k[cls].req.mem * f, 0};
        struct lt_lotes_choice x, y;

        double g = phase[(d / 1000) % 4]; /* free room shrinks and grows by phases */

        for (size_t h = d % 1000 == 0 ? 0 : i; h < (d % 1000 == 0 ? N : i + 1); h++) {
            double v = lt_rng_uniform(&rng);
            view[h].free = lt_rng_below(&rng, 10) == 0
                               ? (struct lt_res){-1, -1, -1}
                               : (struct lt_res){cap[h].cpu * v * u * g, cap[h].mem * v * g, 0};
            view[h].queue_len = lt_rng_below(&rng, 3);
            lt_lotes_index_set(ix, h, &view[h].free, view[h].queue_len);
        }
        struct lt_lotes_choice z;
        c0 = a;
        cn = a;
        assert_int_equal(lt_lotes_dispatch(t, view, N, cls, &req, &a, &x, NULL), 0);
        assert_int_equal(lt_lotes_index_dispatch(ix, cls, &req, &b, &y, NULL), 0);
        assert_int_equal(lt_lotes_index_dispatch_now(ix, cls, &req, &cn, &z, NULL), 0);
        if (x.how == LT_LOTES_FIRST_FIT || x.how == LT_LOTES_ANY_ROOM) {
            assert_int_equal(z.how, x.how);
            assert_int_equal(z.config, x.config);
            assert_int_equal(z.machine, x.machine);
            assert_memory_equal(&cn, &a, sizeof(cn));
        } else {
            assert_int_equal(z.how, LT_LOTES_QUEUED);
            assert_int_equal(z.machine, LT_NO_MACHINE);
            assert_memory_equal(&cn, &c0, sizeof(cn));
        }
        assert_int_equal(x.config, y.config);
        assert_int_equal(x.machine, y.machine);
        assert_int_equal(x.how, y.how);
        assert_memory_equal(&a, &b, sizeof(a));
        seen[x.machine == LT_NO_MACHINE ? 4 : (int)x.how]++;
        if (d % 1000 == 0)
            assert_int_equal(lt_lotes_index_check(ix, view, N, NULL), 0);
    }
    for (int h = 0; h < 5; h++)
        assert_true(seen[h] > 0);
    view[3].free.cpu += 1; /* not told to the index */
    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_index_check(ix, view, N, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "machine 3 differs"));
    lt_lotes_index_free(ix);
    lt_lotes_tables_free(t);
}

/* ---- The tables file --------------------------------------------------------------------- */

static void assert_tables_equal(const struct lt_lotes_tables *a, const struct lt_lotes_tables *b)
{
    size_t mk = a->n_configs * a->n_classes;

    assert_int_equal(a->n_classes, b->n_classes);
    assert_int_equal(a->n_configs, b->n_configs);
    assert_int_equal(a->n_bins, b->n_bins);
    assert_memory_equal(a->classes, b->classes, a->n_classes * sizeof(*a->classes));
    assert_memory_equal(a->configs, b->configs, a->n_configs * sizeof(*a->configs));
    /* Exact: doubles are written with 17 significant digits. */
    lt_assert_near(a->lambda_alloc, b->lambda_alloc, 0);
    lt_assert_near(a->lambda_assign, b->lambda_assign, 0);
    lt_assert_near(a->lambda_rounded, b->lambda_rounded, 0);
    assert_memory_equal(a->delta, b->delta, mk * sizeof(*a->delta));
    assert_memory_equal(a->rho, b->rho, mk * sizeof(*a->rho));
    assert_memory_equal(a->bin_first, b->bin_first, (a->n_configs + 1) * sizeof(size_t));
    assert_memory_equal(a->bin_tasks, b->bin_tasks, a->n_bins * a->n_classes * sizeof(uint32_t));
    assert_memory_equal(a->bin_x, b->bin_x, a->n_bins * sizeof(double));
    assert_memory_equal(a->bin_machines, b->bin_machines, a->n_bins * sizeof(size_t));
}

static void test_tables_json_round_trip(void **state)
{
    struct lt_lotes_config c[10];
    struct lt_lotes_class k[8];
    struct lt_lotes_problem p;
    struct lt_lotes_tables *t, *u;
    char *text, *again;
    struct lt_err err;

    (void)state;
    tables_1_3(c, k, &p);
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    /* In memory: dump, parse, dump again gives the same text. */
    text = lt_lotes_tables_dump(t, NULL);
    assert_non_null(text);
    lt_err_init(&err, NULL);
    u = lt_lotes_tables_parse(text, strlen(text), "mem.json", &err);
    if (u == NULL)
        fail_msg("%s: %s", err.source, err.text);
    assert_tables_equal(t, u);
    again = lt_lotes_tables_dump(u, NULL);
    assert_non_null(again);
    assert_string_equal(text, again);
    lt_free(text);
    lt_free(again);
    lt_lotes_tables_free(t);
    lt_lotes_tables_free(u);
}

/* One bad document: a mutation of a valid one (a JSON path to set, a value as JSON text, or
 * NULL to delete the member), and the start of the message it must give. */
struct bad_case {
    const char *set;   /* "classes/0/alpha": object members and array indexes by '/' */
    const char *value; /* JSON text; NULL deletes the member */
    int code;          /* LT_EPARSE or LT_EINVAL */
    const char *want;  /* message prefix: the JSON path, then what */
};

static json_t *walk(json_t *doc, const char *path, char *last, size_t last_len)
{
    char buf[128];
    char *save = NULL, *tok, *next;

    snprintf(buf, sizeof(buf), "%s", path);
    tok = strtok_r(buf, "/", &save);
    while ((next = strtok_r(NULL, "/", &save)) != NULL) {
        doc =
            json_is_array(doc) ? json_array_get(doc, (size_t)atoi(tok)) : json_object_get(doc, tok);
        assert_non_null(doc);
        tok = next;
    }
    snprintf(last, last_len, "%s", tok);
    return doc;
}

static void check_bad_case(const char *good, const struct bad_case *bc)
{
    json_t *doc = json_loads(good, 0, NULL), *parent, *val = NULL;
    struct lt_lotes_tables *t;
    struct lt_err err;
    char last[64], *text;

    assert_non_null(doc);
    parent = walk(doc, bc->set, last, sizeof(last));
    if (bc->value != NULL) {
        val = json_loads(bc->value, JSON_DECODE_ANY, NULL);
        assert_non_null(val);
    }
    if (json_is_array(parent))
        assert_int_equal(json_array_set_new(parent, (size_t)atoi(last), val), 0);
    else if (val != NULL)
        assert_int_equal(json_object_set_new(parent, last, val), 0);
    else
        assert_int_equal(json_object_del(parent, last), 0);
    text = json_dumps(doc, 0);
    assert_non_null(text);
    lt_err_init(&err, NULL);
    t = lt_lotes_tables_parse(text, strlen(text), "bad.json", &err);
    if (t != NULL || strncmp(err.text, bc->want, strlen(bc->want)) != 0)
        fail_msg("%s = %s: got '%s', want '%s...'", bc->set, bc->value ? bc->value : "(deleted)",
                 err.text, bc->want);
    assert_int_equal(err.code, bc->code);
    assert_string_equal(err.source, "bad.json");
    free(text);
    json_decref(doc);
}

static void test_bad_tables_rejected_with_json_path(void **state)
{
    static const struct bad_case cases[] = {
        {"format", "\"lotus-other\"", LT_EPARSE, "$.format: expected \"lotus-lotes-tables\""},
        {"version", "2", LT_EPARSE, "$.version: expected 1"},
        {"extra", "1", LT_EPARSE, "$: unknown member 'extra'"},
        {"lambda", NULL, LT_EPARSE, "$: missing member 'lambda'"},
        {"classes/0/alpha", "\"0.5\"", LT_EPARSE, "$.classes[0].alpha: expected a number"},
        {"classes/1/req/gpu", "1", LT_EPARSE, "$.classes[1].req: unknown member 'gpu'"},
        {"configurations/1/machines", "-3", LT_EPARSE,
         "$.configurations[1].machines: expected an integer"},
        {"delta/1", "[]", LT_EPARSE, "$.delta[1]: expected an array of 2 entries"},
        {"rho/0/0", "0.5", LT_EINVAL, "$.rho: the shares of class 'x' sum to"},
        {"bins/0/0/tasks/0", "-1", LT_EPARSE, "$.bins[0][0].tasks[0]: expected an integer"},
        {"bins/0/0/tasks/0", "5", LT_EINVAL, "$.bins[0][0].tasks: the tasks exceed"},
        {"bins/1/0/machines", "4", LT_EINVAL, "$.bins[1]: 4 machines, but configuration"},
        {"lambda/rounded", "0", LT_EINVAL, "$.lambda.rounded: 0 is not a positive number"},
        {"classes/1/name", "\"x\"", LT_EINVAL, "$: class 'x' is defined twice"},
        {"configurations/0/cap/mem", "0", LT_EINVAL,
         "$: configuration 'cpu-rich' has zero mem capacity"},
    };
    struct lt_lotes_machine view[6];
    struct lt_lotes_tables *t = two_config_tables(view);
    char *good = lt_lotes_tables_dump(t, NULL);
    struct lt_err err;

    (void)state;
    assert_non_null(good);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_bad_case(good, &cases[i]);
    /* Malformed JSON: LT_EPARSE with Jansson's line and column. */
    lt_err_init(&err, NULL);
    assert_null(lt_lotes_tables_parse(good, strlen(good) / 2, "cut.json", &err));
    assert_int_equal(err.code, LT_EPARSE);
    assert_true(err.line > 0);
    assert_string_equal(err.source, "cut.json");
    lt_free(good);
    lt_lotes_tables_free(t);
}

/* ---- Bad problems ------------------------------------------------------------------------ */

static void expect_problem_error(const struct lt_lotes_problem *p, const char *want)
{
    struct lt_err err;
    struct lt_res delta[8];
    double lambda;

    lt_err_init(&err, NULL);
    assert_int_equal(lt_lotes_alloc_solve(p, &lambda, delta, &err), LT_EINVAL);
    if (strstr(err.text, want) == NULL)
        fail_msg("got '%s', want '%s'", err.text, want);
    lt_err_init(&err, NULL);
    assert_null(lt_lotes_build(p, &err));
    assert_non_null(strstr(err.text, want));
}

static void test_bad_problems_name_the_class_or_configuration(void **state)
{
    struct lt_lotes_class k[2] = {mk_class("x", 0.5, 1, 1, 1), mk_class("y", 0.5, 1, 1, 1)};
    struct lt_lotes_config c[2] = {mk_config("small", 2, 2, 1), mk_config("big", 4, 4, 1)};
    struct lt_lotes_problem p = {k, 2, c, 2};

    (void)state;
    k[1].req.cpu = k[1].req.mem = 0;
    expect_problem_error(&p, "class 'y' is empty: it requests no resource");
    k[1].req.cpu = k[1].req.mem = 1;
    k[0].alpha = 0;
    expect_problem_error(&p, "class 'x' is empty: its proportion alpha is 0");
    k[0].alpha = 0.5;
    k[0].mu = -1;
    expect_problem_error(&p, "class 'x' has service rate mu -1");
    k[0].mu = 1;
    c[1].cap.mem = 0;
    expect_problem_error(&p, "configuration 'big' has zero mem capacity");
    c[1].cap.mem = 4;
    c[0].n = 0;
    expect_problem_error(&p, "configuration 'small' has 0 machines");
    c[0].n = 1;
    k[1].req.cpu = 5;
    expect_problem_error(&p, "class 'y' fits no machine configuration");
    k[1].req.cpu = k[1].req.mem = 1e-8; /* 2e8 fit the small machine: a unit mistake */
    expect_problem_error(&p, "class 'y' requests too little for configuration 'small': 2e+08 "
                             "of its tasks fit one machine (at most 1000000)");
    k[1].req.cpu = k[1].req.mem = 1;
    snprintf(k[1].name, sizeof(k[1].name), "x");
    expect_problem_error(&p, "class 'x' is defined twice");
    p.n_classes = 0;
    expect_problem_error(&p, "0 classes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_one_class_by_hand),
        cmocka_unit_test(test_alloc_two_classes_share_one_machine),
        cmocka_unit_test(test_alloc_matches_profiles_to_configurations),
        cmocka_unit_test(test_paper_fragmentation_example),
        cmocka_unit_test(test_tables_1_3_lambda_and_tables),
        cmocka_unit_test(test_bins_by_hand),
        cmocka_unit_test(test_bins_tiny_request_is_fast),
        cmocka_unit_test(test_bins_match_brute_force_on_random_instances),
        cmocka_unit_test(test_bins_of_tables_1_3_match_brute_force),
        cmocka_unit_test(test_round_by_hand),
        cmocka_unit_test(test_round_keeps_each_count),
        cmocka_unit_test(test_build_rejects_class_lost_by_rounding),
        cmocka_unit_test(test_level1_frequencies_converge_to_rho),
        cmocka_unit_test(test_level2_rules_in_order),
        cmocka_unit_test(test_level2_queue_ties_are_random),
        cmocka_unit_test(test_greedy_shortest_queue),
        cmocka_unit_test(test_sim_low_load_and_determinism),
        cmocka_unit_test(test_configs_from_caps_and_undescribed_machines),
        cmocka_unit_test(test_machine_bins_rejects_wrong_counts),
        cmocka_unit_test(test_classify_nearest_normalised_class),
        cmocka_unit_test(test_classify_matches_brute_force_on_tables_1_3),
        cmocka_unit_test(test_map_machines_exact_counts_equal_machine_bins),
        cmocka_unit_test(test_map_machines_shares_bins_by_proportion),
        cmocka_unit_test(test_rank_by_hand),
        cmocka_unit_test(test_rank_follows_dispatch_choices),
        cmocka_unit_test(test_index_matches_dispatch),
        cmocka_unit_test(test_tables_json_round_trip),
        cmocka_unit_test(test_bad_tables_rejected_with_json_path),
        cmocka_unit_test(test_bad_problems_name_the_class_or_configuration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
