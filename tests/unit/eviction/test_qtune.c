/* test_qtune.c -- the self-tuning search of Simon & McGalliard (eviction/qtune.c, docs/queue.md
 * "Self-tuning", spec 1.6):
 *   - the grid: parsing, presets, exact values, bad texts; SM3 (the printed loop runs 40 times
 *     in doubles, paper64000 = 64,000 triplets) and SM4 (alg1: 21 values, 9,261 triplets, the
 *     five fixed orders are grid points);
 *   - costs and the tie rule;
 *   - lt_qtune_eval never touches the live state; its costs are those of one fork per triplet;
 *     the pruned search equals the unpruned one bit for bit (random workloads, every mode);
 *   - the static search against lt_qsim_run per triplet, and SM5 (its argmin is no worse than
 *     any fixed order) as a property on random workloads;
 *   - the online search on a hand-worked workload (SJF wins), its callbacks, and a workload
 *     on which it is worse than fcfs (spec pitfall 5);
 *   - bad inputs.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_qsim.h"
#include "lt_qtune.h"
#include "lt_queue.h"
#include "lt_rng.h"
#include "lt_qtest.h"

#define MAX_N 40

/* ---- helpers ---- */

static void grid(const char *text, struct lt_qgrid *g)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (lt_qgrid_parse(text, g, &err) != 0) {
        print_error("lt_qgrid_parse(%s): %s\n", text, err.text);
        fail();
    }
}

/* Random jobs: arrivals in [0, span), sizes 1..max_n, run times 1..60 s (estimates exact, or
 * noisy when asked). */
static void random_jobs(struct lt_qjob *jobs, size_t n, uint32_t max_n, double span, bool noisy,
                        uint64_t seed)
{
    struct lt_rng r;

    lt_rng_init(&r, seed, LT_RNG_WORKLOAD);
    for (size_t j = 0; j < n; j++) {
        double rt = (double)(1 + lt_rng_below(&r, 60));
        jobs[j] = job((int64_t)j, (double)lt_rng_below(&r, (uint64_t)span),
                      (uint32_t)(1 + lt_rng_below(&r, max_n)), rt);
        if (noisy)
            jobs[j].estimate_s = rt * (0.5 + 1.5 * lt_rng_uniform(&r));
    }
}

/* The modes: dispatch, backfill. */
static const char *const modes[][2] = {{"rigid", "none"},
                                       {"rigid", "easy"},
                                       {"rigid", "greedy"},
                                       {"rigid", "relaxed:0.5"},
                                       {"fractional", "none"}};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

/* The cost of one lt_qsim_run of p with order o. */
static double run_cost(const struct lt_qsim_params *p0, const struct lt_qorder *o,
                       const struct lt_qjob *jobs, size_t n, enum lt_qcost c)
{
    struct lt_qsim_params p = *p0;
    struct lt_qsim_summary sum;

    p.order = *o;
    assert_int_equal(lt_qsim_run(&p, jobs, n, NULL, &sum, NULL), 0);
    return lt_qcost_of(c, &sum);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

/* a == b without -Wfloat-equal (exact, as intended). */
static bool eq(double a, double b)
{
    return !(a < b) && !(a > b);
}

/* ---- the grid ---- */

static void test_grid_parse(void **state)
{
    struct lt_qgrid g;
    struct lt_err err;
    static const char *const bad[] = {"1:0:0.1",   "0:1:0",     "0:1:-1",     "abc",
                                      "0:1",       "0:1:0.1:3", "0:1000:0.1", "nan:1:0.1",
                                      "0:inf:0.1", "",          " 0:1:0.5",   "0:1:0.5x"};

    (void)state;
    grid("-1:1:1", &g);
    assert_int_equal(g.count, 3);
    assert_int_equal(lt_qgrid_size(&g), 27);
    grid("0:1:0.25", &g); /* step 1/4: values from integers */
    assert_int_equal(g.count, 5);
    assert_true(eq(lt_qgrid_value(&g, 3), 0.75));
    grid("0:1:0.3", &g); /* not a 1/D step: lo + i step; hi not reached */
    assert_int_equal(g.count, 4);
    assert_true(eq(lt_qgrid_value(&g, 3), 0 + 3 * 0.3));
    grid("0.5:0.5:0.1", &g); /* one value */
    assert_int_equal(g.count, 1);
    assert_true(eq(lt_qgrid_value(&g, 0), 0.5));
    grid("-2:2:0.1", &g); /* inclusive: 41 values */
    assert_int_equal(g.count, 41);
    assert_true(eq(lt_qgrid_value(&g, 40), 2));
    grid("0:200:1", &g); /* the cap */
    assert_int_equal(g.count, LT_QGRID_MAX_COUNT);
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct lt_qgrid keep = {9, 9, 9, 9};

        lt_err_init(&err, NULL);
        assert_int_equal(lt_qgrid_parse(bad[k], &keep, &err), LT_EINVAL);
        assert_non_null(strstr(err.text, bad[k]));
        assert_int_equal(keep.count, 9);
    }
    assert_int_equal(lt_qgrid_parse(NULL, &g, NULL), LT_EINVAL);
}

/* SM3: the paper's printed loop in doubles runs 40 times, its last value 1.9000000000000015;
 * the preset paper64000 has those 40 values (exact decimals) and 64,000 triplets. */
static void test_sm3_paper64000(void **state)
{
    struct lt_qgrid g;
    double last = 0;
    int runs = 0;

    (void)state;
    for (double a = -2; a <= 2; a += 0.1) {
        last = a;
        runs++;
    }
    assert_int_equal(runs, 40);
    assert_true(same_bits(last, 1.9000000000000015));
    assert_false(same_bits(last, 1.9));
    grid("paper64000", &g);
    assert_int_equal(g.count, 40);
    assert_int_equal(lt_qgrid_size(&g), 64000);
    assert_true(eq(lt_qgrid_value(&g, 0), -2));
    assert_true(eq(lt_qgrid_value(&g, 20), 0));
    assert_true(eq(lt_qgrid_value(&g, 30), 1));
    assert_true(same_bits(lt_qgrid_value(&g, 39), 1.9));
    assert_int_not_equal(lt_qgrid_index(&g, 0, 1, 0), SIZE_MAX);
    assert_int_not_equal(lt_qgrid_index(&g, -0.1, -0.3, -0.4), SIZE_MAX); /* the paper's best */
    assert_int_equal(lt_qgrid_index(&g, 0, 2, 0), SIZE_MAX);
}

/* SM4: alg1 = -1:1:0.1, 21 values, 9,261 triplets; every value is the double of its decimal
 * (0 and 1 exact), so the five fixed orders are grid points, at the right indices. */
static void test_sm4_alg1(void **state)
{
    static const char *const fixed[] = {"fcfs", "sjf", "ljf", "largest", "smallest"};
    struct lt_qgrid g;
    char text[16];

    (void)state;
    grid("alg1", &g);
    assert_int_equal(g.count, 21);
    assert_int_equal(lt_qgrid_size(&g), 9261);
    for (size_t i = 0; i < 21; i++) {
        snprintf(text, sizeof(text), "%.1f", -1 + 0.1 * (double)i);
        assert_true(same_bits(lt_qgrid_value(&g, i), strtod(text, NULL)));
    }
    for (size_t k = 0; k < 5; k++) {
        struct lt_qorder o;
        double a, b, c;
        size_t i;

        assert_int_equal(lt_qorder_find(fixed[k], &o, NULL), 0);
        i = lt_qgrid_index(&g, o.alpha, o.beta, o.gamma);
        assert_int_not_equal(i, SIZE_MAX);
        lt_qgrid_triplet(&g, i, &a, &b, &c);
        assert_true(eq(a, o.alpha) && eq(b, o.beta) && eq(c, o.gamma));
    }
    assert_int_equal(lt_qgrid_index(&g, 0, 1, 0), (10 * 21 + 20) * 21 + 10);
    assert_int_equal(lt_qgrid_index(&g, 0.05, 0, 0), SIZE_MAX);
    assert_int_equal(lt_qgrid_index(&g, 0, 1.1, 0), SIZE_MAX);
}

/* ---- costs and the tie rule ---- */

static void test_costs_and_ties(void **state)
{
    static const char *const names[] = {"makespan",   "mean-response", "mean-wait",
                                        "total-wait", "mean-xf",       "neg-utilisation"};
    struct lt_qsim_summary s = {0};
    enum lt_qcost c;
    struct lt_err err;
    double v[] = {3, 1, 1, 2}, w[] = {NAN, 2, NAN, 2}, x[] = {NAN, NAN};

    (void)state;
    for (size_t k = 0; k < 6; k++) {
        assert_int_equal(lt_qcost_find(names[k], &c, NULL), 0);
        assert_int_equal(c, k);
        assert_string_equal(lt_qcost_name(c), names[k]);
    }
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qcost_find("speed", &c, &err), LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "speed"));
    assert_non_null(strstr(err.text, "mean-xf"));
    s.completed = 2;
    s.makespan_s = 10;
    s.response_mean_s = 4;
    s.wait_mean_s = 1.5;
    s.total_wait_s = 3;
    s.xf_mean = 2;
    s.utilisation = 0.8;
    assert_true(eq(lt_qcost_of(LT_QCOST_MAKESPAN, &s), 10));
    assert_true(eq(lt_qcost_of(LT_QCOST_MEAN_RESPONSE, &s), 4));
    assert_true(eq(lt_qcost_of(LT_QCOST_MEAN_WAIT, &s), 1.5));
    assert_true(eq(lt_qcost_of(LT_QCOST_TOTAL_WAIT, &s), 3));
    assert_true(eq(lt_qcost_of(LT_QCOST_MEAN_XF, &s), 2));
    assert_true(eq(lt_qcost_of(LT_QCOST_NEG_UTILISATION, &s), -0.8));
    s.completed = 0;
    assert_true(isnan(lt_qcost_of(LT_QCOST_TOTAL_WAIT, &s)));
    /* lowest; on a tie the incumbent, else the first; NaN never wins */
    assert_int_equal(lt_qtune_argmin(v, 4, SIZE_MAX), 1);
    assert_int_equal(lt_qtune_argmin(v, 4, 2), 2);
    assert_int_equal(lt_qtune_argmin(v, 4, 0), 1);
    assert_int_equal(lt_qtune_argmin(w, 4, 3), 3);
    assert_int_equal(lt_qtune_argmin(w, 4, 0), 1);
    assert_int_equal(lt_qtune_argmin(x, 2, 1), 1);
    assert_int_equal(lt_qtune_argmin(x, 2, SIZE_MAX), 0);
}

/* ---- the search over a live state ---- */

/* A live state of random jobs after `steps` instants (the last one's dispatch pending). */
static struct lt_qsim *live_state(const struct lt_qsim_params *p, const struct lt_qjob *jobs,
                                  size_t n, int steps)
{
    struct lt_qsim *s = lt_qsim_new(p, jobs, n, NULL);
    bool done = false;

    assert_non_null(s);
    for (int k = 0; k < steps && !done; k++)
        assert_int_equal(lt_qsim_advance(s, &done, NULL), 0);
    return s;
}

/* The live state is the same after searches (pruned and not) as a twin never searched: its
 * queries, summary, and the whole rest of its run. */
static void test_eval_never_touches_live(void **state)
{
    struct lt_qjob jobs[30];
    struct lt_qgrid g;
    double costs[125];

    (void)state;
    grid("-1:1:0.5", &g);
    for (size_t m = 0; m < N_MODES; m++) {
        struct lt_qsim_params p;
        struct lt_qsim *a, *b;
        struct lt_qsim_summary sa, sb;

        params(&p, 16, m % 2 ? "sjf" : "composite:0,-1,0.5", modes[m][0], modes[m][1]);
        random_jobs(jobs, 30, 8, 40, m == 1, 11 + m);
        a = live_state(&p, jobs, 30, 12);
        b = live_state(&p, jobs, 30, 12);
        assert_true(lt_qsim_queued(a) > 0);
        for (int prune = 0; prune < 2; prune++)
            assert_int_equal(
                lt_qtune_eval_opt(a, &g, LT_QCOST_MEAN_RESPONSE, 0, 125, prune, costs, NULL, NULL),
                0);
        assert_true(eq(lt_qsim_now(a), lt_qsim_now(b)));
        assert_int_equal(lt_qsim_queued(a), lt_qsim_queued(b));
        assert_int_equal(lt_qsim_busy(a), lt_qsim_busy(b));
        assert_int_equal(lt_qsim_completed(a), lt_qsim_completed(b));
        assert_int_equal(lt_qsim_summarise(a, &sa, NULL), 0);
        assert_int_equal(lt_qsim_summarise(b, &sb, NULL), 0);
        assert_memory_equal(&sa, &sb, sizeof(sa));
        assert_int_equal(lt_qsim_finish(a, NULL), 0);
        assert_int_equal(lt_qsim_finish(b, NULL), 0);
        assert_memory_equal(lt_qsim_outcome(a), lt_qsim_outcome(b),
                            30 * sizeof(struct lt_qjob_out));
        lt_qsim_free(a);
        lt_qsim_free(b);
    }
}

/* Pruned == unpruned, bit for bit, and == one fork per triplet run by hand; random workloads,
 * every mode and cost, at several instants. The pruning saves simulations. */
static void test_pruning_is_exact(void **state)
{
    struct lt_qjob jobs[MAX_N];
    struct lt_qgrid g;
    double full[125], pruned[125];
    size_t saved = 0, total = 0;

    (void)state;
    grid("-1:1:0.5", &g);
    for (uint64_t seed = 1; seed <= 30; seed++) {
        const char *const *mode = modes[seed % N_MODES];
        enum lt_qcost c = (enum lt_qcost)(seed % 6);
        struct lt_qtune_stats st;
        struct lt_qsim_params p;
        struct lt_qsim *s;
        size_t n = 15 + seed % 25;

        params(&p, 12, "fcfs", mode[0], mode[1]);
        random_jobs(jobs, n, 6, seed % 2 ? 10 : 100, seed % 3 == 0, seed);
        s = live_state(&p, jobs, n, 1 + (int)(seed % 7));
        assert_int_equal(lt_qtune_eval_opt(s, &g, c, 0, 125, false, full, &st, NULL), 0);
        assert_int_equal(st.simulated, 125);
        assert_int_equal(lt_qtune_eval_opt(s, &g, c, 0, 125, true, pruned, &st, NULL), 0);
        assert_int_equal(st.triplets, 125);
        saved += 125 - st.simulated;
        total += 125;
        for (size_t k = 0; k < 125; k++) {
            if (!same_bits(full[k], pruned[k])) {
                print_error("seed %llu %s/%s triplet %zu: %.17g pruned, %.17g not\n",
                            (unsigned long long)seed, mode[0], mode[1], k, pruned[k], full[k]);
                fail();
            }
        }
        /* a sub-range gives the same costs */
        assert_int_equal(lt_qtune_eval(s, &g, c, 40, 90, pruned, NULL), 0);
        assert_memory_equal(pruned, full + 40, 50 * sizeof(double));
        /* and so does a fork per triplet, by hand */
        for (size_t k = 0; k < 125; k += 31) {
            struct lt_qsim_summary sum;
            struct lt_qorder o;
            struct lt_qsim *f;
            double a, b, gm;

            lt_qgrid_triplet(&g, k, &a, &b, &gm);
            assert_int_equal(lt_qorder_composite(&o, a, b, gm, NULL), 0);
            assert_non_null(f = lt_qsim_fork(s, &o, NULL));
            assert_int_equal(lt_qsim_finish(f, NULL), 0);
            assert_int_equal(lt_qsim_summarise(f, &sum, NULL), 0);
            assert_true(same_bits(lt_qcost_of(c, &sum), full[k]));
            lt_qsim_free(f);
        }
        lt_qsim_free(s);
    }
    print_message("pruning: %zu of %zu simulations saved\n", saved, total);
    assert_true(saved > total / 4);
}

/* ---- the static search ---- */

/* Every triplet's cost is lt_qsim_run's with that composite; the argmin is the first lowest
 * (or fcfs on a tie); pruned == unpruned; ranges join. */
static void test_static_against_brute_force(void **state)
{
    struct lt_qjob jobs[MAX_N];
    struct lt_qgrid g;
    double costs[125], pruned[125], part[125];

    (void)state;
    grid("-1:1:0.5", &g);
    for (uint64_t seed = 1; seed <= 10; seed++) {
        const char *const *mode = modes[seed % N_MODES];
        enum lt_qcost c = (enum lt_qcost)(seed % 6);
        struct lt_qsim_params p;
        size_t n = 10 + seed * 2, best, pbest, inc, lo = 0;
        double best_cost, pbest_cost;

        params(&p, 10, "fcfs", mode[0], mode[1]);
        random_jobs(jobs, n, 5, 60, seed % 3 == 0, seed + 100);
        assert_int_equal(lt_qtune_static(&p, jobs, n, &g, c, 0, 125, false, costs, &best,
                                         &best_cost, NULL, NULL),
                         0);
        for (size_t k = 0; k < 125; k++) {
            struct lt_qorder o;
            double a, b, gm;

            lt_qgrid_triplet(&g, k, &a, &b, &gm);
            assert_int_equal(lt_qorder_composite(&o, a, b, gm, NULL), 0);
            assert_true(same_bits(run_cost(&p, &o, jobs, n, c), costs[k]));
            if (costs[k] < costs[lo])
                lo = k;
        }
        inc = lt_qgrid_index(&g, 0, 1, 0);
        assert_int_equal(best, costs[inc] <= costs[lo] ? inc : lo);
        assert_true(same_bits(best_cost, costs[best]));
        assert_int_equal(lt_qtune_static(&p, jobs, n, &g, c, 0, 125, true, pruned, &pbest,
                                         &pbest_cost, NULL, NULL),
                         0);
        assert_memory_equal(pruned, costs, sizeof(costs));
        assert_int_equal(pbest, best);
        /* three ranges, joined */
        for (size_t r = 0; r < 3; r++) {
            size_t first = r * 42, last = r == 2 ? 125 : first + 42;

            assert_int_equal(lt_qtune_static(&p, jobs, n, &g, c, first, last, true, part + first,
                                             &pbest, &pbest_cost, NULL, NULL),
                             0);
            assert_true(pbest >= first && pbest < last);
        }
        assert_memory_equal(part, costs, sizeof(costs));
        assert_int_equal(lt_qtune_argmin(part, 125, inc), best);
    }
}

/* SM5: the static argmin costs no more than any fixed order (all grid points), each fixed
 * order's grid cost is its lt_qsim_run cost, and the argmin is the grid minimum. Random
 * workloads, every mode and cost, grid -1:1:0.5; one workload on the whole alg1 grid. */
static void test_sm5_static_beats_fixed_orders(void **state)
{
    static const char *const fixed[] = {"fcfs", "sjf", "ljf", "largest", "smallest"};
    struct lt_qjob jobs[MAX_N];
    struct lt_qgrid g;
    double *costs = lt_calloc(9261, sizeof(double));

    (void)state;
    assert_non_null(costs);
    for (uint64_t seed = 1; seed <= 41; seed++) {
        const char *const *mode = modes[seed % N_MODES];
        enum lt_qcost c = (enum lt_qcost)(seed % 6);
        struct lt_qsim_params p;
        size_t n = 12 + seed % 20, best, size;
        double best_cost;

        grid(seed == 41 ? "alg1" : "-1:1:0.5", &g);
        size = lt_qgrid_size(&g);
        params(&p, 8, "fcfs", mode[0], mode[1]);
        random_jobs(jobs, n, 6, seed % 2 ? 20 : 120, seed % 4 == 0, seed + 1000);
        assert_int_equal(lt_qtune_static(&p, jobs, n, &g, c, 0, size, true, costs, &best,
                                         &best_cost, NULL, NULL),
                         0);
        for (size_t k = 0; k < size; k++)
            assert_false(costs[k] < best_cost);
        for (size_t f = 0; f < 5; f++) {
            struct lt_qorder o;
            double fc;

            assert_int_equal(lt_qorder_find(fixed[f], &o, NULL), 0);
            fc = run_cost(&p, &o, jobs, n, c);
            assert_true(best_cost <= fc);
            assert_true(same_bits(costs[lt_qgrid_index(&g, o.alpha, o.beta, o.gamma)], fc));
        }
    }
    lt_free(costs);
}

/* ---- the online search ---- */

struct log {
    struct lt_qtune_retune r[64];
    size_t n;
    size_t evals;
};

static void on_retune(void *arg, const struct lt_qtune_retune *r)
{
    struct log *l = arg;

    if (l->n < 64)
        l->r[l->n++] = *r;
}

static int counting_eval(void *arg, const struct lt_qsim *live, const struct lt_qgrid *g,
                         enum lt_qcost c, double *costs, struct lt_err *err)
{
    struct log *l = arg;

    l->evals++;
    return lt_qtune_eval_opt(live, g, c, 0, lt_qgrid_size(g), false, costs, NULL, err);
}

/* One core; at 0 a 100 s job (id 0) and four 1 s jobs. fcfs runs the long one first: mean
 * response (100 + 101 + 102 + 103 + 104) / 5 = 102. The first search (at 0, before the first
 * dispatch) finds every order putting the short jobs first, mean response
 * (1 + 2 + 3 + 4 + 104) / 5 = 22.8; the first such triplet of -1:1:1 is (-1,-1,-1) (sizes and
 * waits are all equal: it is SJF). Then one search per completion with work queued (t = 1, 2,
 * 3, 4), each keeping the incumbent (nothing better); at t = 4 only the long job is left. */
static void test_online_hand_worked(void **state)
{
    struct lt_qjob jobs[5] = {job(0, 0, 1, 100), job(1, 0, 1, 1), job(2, 0, 1, 1), job(3, 0, 1, 1),
                              job(4, 0, 1, 1)};
    struct lt_qtune_online_params op;
    struct lt_qsim_params p;
    struct lt_qsim_summary sum;
    struct lt_qjob_out out[5];
    struct lt_qgrid g;
    struct log l = {0};
    size_t retunes = 0;

    (void)state;
    grid("-1:1:1", &g);
    params(&p, 1, "fcfs", "rigid", "none");
    assert_int_equal(lt_qsim_run(&p, jobs, 5, NULL, &sum, NULL), 0);
    lt_assert_near(sum.response_mean_s, 102, 0);
    lt_qtune_online_default(&op, &g, LT_QCOST_MEAN_RESPONSE);
    op.on_retune = on_retune;
    op.retune_arg = &l;
    assert_int_equal(lt_qtune_online(&p, jobs, 5, &op, out, &sum, &retunes, NULL), 0);
    lt_assert_near(sum.response_mean_s, 22.8, 1e-12);
    assert_int_equal(retunes, 5);
    assert_int_equal(l.n, 5);
    lt_assert_near(l.r[0].time_s, 0, 0);
    assert_true(l.r[0].changed);
    assert_true(eq(l.r[0].alpha, -1) && eq(l.r[0].beta, -1) && eq(l.r[0].gamma, -1));
    lt_assert_near(l.r[0].cost, 22.8, 1e-12);
    assert_int_equal(l.r[0].queued, 5);
    assert_int_equal(l.r[0].triplets, 27);
    for (size_t k = 1; k < 5; k++) {
        lt_assert_near(l.r[k].time_s, (double)k, 0);
        assert_false(l.r[k].changed);
        assert_true(eq(l.r[k].gamma, -1));
        assert_true(l.r[k].cpu_s >= 0 && l.r[k].wall_s >= 0);
    }
    lt_assert_near(out[0].start_s, 4, 0);
    lt_assert_near(out[4].end_s, 4, 0);
    /* the same with a caller's search (unpruned): the same run, one call per re-tuning */
    op.eval = counting_eval;
    op.eval_arg = &l;
    op.on_retune = NULL;
    assert_int_equal(lt_qtune_online(&p, jobs, 5, &op, NULL, &sum, &retunes, NULL), 0);
    assert_int_equal(l.evals, 5);
    lt_assert_near(sum.response_mean_s, 22.8, 1e-12);
    /* a rate limit of 2.5 s: the searches at 0 and 3 only */
    op.eval = NULL;
    op.min_gap_s = 2.5;
    assert_int_equal(lt_qtune_online(&p, jobs, 5, &op, NULL, &sum, &retunes, NULL), 0);
    assert_int_equal(retunes, 2);
    /* by time only: every 2 s (at 0, 2, 4) */
    op.min_gap_s = 0;
    op.on_completion = false;
    op.retune_s = 2;
    assert_int_equal(lt_qtune_online(&p, jobs, 5, &op, NULL, &sum, &retunes, NULL), 0);
    assert_int_equal(retunes, 3);
}

/* Spec pitfall 5: the online search is not guaranteed to be no worse than fcfs, since each
 * search sees only the present work. Three cores, rigid, no backfill, mean response; jobs
 * (arrival, cores, run time): 0 (3, 2, 19), 1 (2, 3, 9), 2 (2, 1, 7), 3 (4, 1, 11).
 *   fcfs: job 1 [2, 11), job 2 [11, 18), job 0 [11, 30), job 3 [18, 29): responses 9, 16, 27,
 *   25, mean 77 / 4 = 19.25.
 *   online (-1:1:1): the search at 2 sees jobs 1 and 2 only: job 2 first gives 7 and 16 (11.5),
 *   job 1 first 9 and 16 (12.5), so it adopts (-1,-1,-1) and starts job 2 [2, 9); the 3-core
 *   job 1 now waits, job 3 arriving at 4 passes it [4, 15), and the search at 9 (jobs 0 and 1
 *   queued) starts job 0 [9, 28) before job 1 [28, 37): responses 25, 35, 7, 11, mean
 *   78 / 4 = 19.5 > 19.25. */
static void test_online_not_always_better_than_fcfs(void **state)
{
    struct lt_qjob jobs[4] = {job(0, 3, 2, 19), job(1, 2, 3, 9), job(2, 2, 1, 7), job(3, 4, 1, 11)};
    struct lt_qtune_online_params op;
    struct lt_qsim_params p;
    struct lt_qsim_summary on, fc;
    struct lt_qjob_out out[4];
    struct lt_qgrid g;
    struct log l = {0};

    (void)state;
    grid("-1:1:1", &g);
    params(&p, 3, "fcfs", "rigid", "none");
    assert_int_equal(lt_qsim_run(&p, jobs, 4, NULL, &fc, NULL), 0);
    lt_assert_near(fc.response_mean_s, 19.25, 0);
    lt_qtune_online_default(&op, &g, LT_QCOST_MEAN_RESPONSE);
    op.on_retune = on_retune;
    op.retune_arg = &l;
    assert_int_equal(lt_qtune_online(&p, jobs, 4, &op, out, &on, NULL, NULL), 0);
    lt_assert_near(l.r[0].time_s, 2, 0);
    lt_assert_near(l.r[0].cost, 11.5, 1e-12);
    assert_true(eq(l.r[0].alpha, -1) && eq(l.r[0].beta, -1) && eq(l.r[0].gamma, -1));
    lt_assert_near(out[2].start_s, 2, 0);
    lt_assert_near(out[3].start_s, 4, 0);
    lt_assert_near(out[0].start_s, 9, 0);
    lt_assert_near(out[1].start_s, 28, 0);
    lt_assert_near(on.response_mean_s, 19.5, 1e-12);
    assert_true(on.response_mean_s > fc.response_mean_s);
}

/* ---- bad inputs ---- */

static void test_bad_inputs(void **state)
{
    struct lt_qjob jobs[3] = {job(0, 0, 1, 5), job(1, 0, 2, 3), job(2, 1, 1, 1)};
    struct lt_qtune_online_params op;
    struct lt_qsim_params p;
    struct lt_qgrid g, bad = {0, 1, 0, 0};
    struct lt_qsim *s;
    struct lt_err err;
    double costs[27], bc;
    size_t best;

    (void)state;
    grid("-1:1:1", &g);
    params(&p, 2, "fcfs", "rigid", "none");
    s = live_state(&p, jobs, 3, 1);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qtune_eval(s, &g, LT_QCOST_MAKESPAN, 5, 4, costs, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "[5, 4)"));
    assert_int_equal(lt_qtune_eval(s, &g, LT_QCOST_MAKESPAN, 0, 28, costs, NULL), LT_EINVAL);
    assert_int_equal(lt_qtune_eval(NULL, &g, LT_QCOST_MAKESPAN, 0, 27, costs, NULL), LT_EINVAL);
    assert_int_equal(lt_qtune_eval(s, &bad, LT_QCOST_MAKESPAN, 0, 0, costs, NULL), LT_EINVAL);
    assert_int_equal(lt_qtune_eval(s, &g, (enum lt_qcost)9, 0, 27, costs, NULL), LT_EINVAL);
    assert_int_equal(lt_qtune_eval(s, &g, LT_QCOST_MAKESPAN, 3, 3, NULL, NULL), 0); /* empty */
    lt_qsim_free(s);
    assert_int_equal(lt_qtune_static(&p, jobs, 3, &g, LT_QCOST_MAKESPAN, 0, 27, true, NULL, NULL,
                                     &bc, NULL, NULL),
                     LT_EINVAL);
    assert_int_equal(lt_qtune_static(&p, jobs, 3, &g, LT_QCOST_MAKESPAN, 4, 4, true, NULL, &best,
                                     &bc, NULL, NULL),
                     LT_EINVAL);
    jobs[1].tasks = 3; /* above the cores under rigid: lt_qsim_new's error */
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qtune_static(&p, jobs, 3, &g, LT_QCOST_MAKESPAN, 0, 27, true, NULL, &best,
                                     &bc, NULL, &err),
                     LT_EINVAL);
    assert_non_null(strstr(err.text, "tasks"));
    lt_qtune_online_default(&op, &g, LT_QCOST_MAKESPAN);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qtune_online(&p, jobs, 3, &op, NULL, NULL, NULL, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "tasks"));
    jobs[1].tasks = 2;
    op.retune_s = -1;
    assert_int_equal(lt_qtune_online(&p, jobs, 3, &op, NULL, NULL, NULL, NULL), LT_EINVAL);
    op.retune_s = 0;
    op.grid = NULL;
    assert_int_equal(lt_qtune_online(&p, jobs, 3, &op, NULL, NULL, NULL, NULL), LT_EINVAL);
    assert_int_equal(lt_qtune_online(&p, jobs, 3, NULL, NULL, NULL, NULL, NULL), LT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_parse),
        cmocka_unit_test(test_sm3_paper64000),
        cmocka_unit_test(test_sm4_alg1),
        cmocka_unit_test(test_costs_and_ties),
        cmocka_unit_test(test_eval_never_touches_live),
        cmocka_unit_test(test_pruning_is_exact),
        cmocka_unit_test(test_static_against_brute_force),
        cmocka_unit_test(test_sm5_static_beats_fixed_orders),
        cmocka_unit_test(test_online_hand_worked),
        cmocka_unit_test(test_online_not_always_better_than_fcfs),
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
