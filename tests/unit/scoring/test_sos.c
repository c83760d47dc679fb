/* test_sos.c -- sum-of-squares placement: the DESIGN.md section 4 worked example (Stein et
 * al., slide "Sum of Squares (1-D)"), through rank and choose, with the slide's 3 buckets
 * and with sos10 under a reference capacity that gives the same bucket counts; the
 * incremental sum after placements; the 3-D bucket layout of sos10/sos20.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lt_cluster.h"
#include "lt_rng.h"
#include "lt_score.h"
#include "score_int.h"

/* Four machines with 1 GB of RAM using 0, 0, 0.25 and 0.75 GB (cpu and disk unused). */
static struct lt_cluster *slide_cluster(struct lt_res ref)
{
    static const struct lt_machine_spec ms[] = {
        {"M1", {1, 1, 1}}, {"M2", {1, 1, 1}}, {"M3", {1, 1, 1}}, {"M4", {1, 1, 1}}};
    struct lt_cluster_spec spec = {ms, 4, ref, 0};
    struct lt_cluster *c = lt_cluster_new(&spec, NULL);
    struct lt_task t;
    size_t pid;

    assert_non_null(c);
    memset(&t, 0, sizeof(t));
    t.req.mem = 0.25;
    assert_int_equal(lt_cluster_place(c, 2, &t, 0, &pid, NULL), 0);
    t.req.mem = 0.75;
    assert_int_equal(lt_cluster_place(c, 3, &t, 0, &pid, NULL), 0);
    return c;
}

/* Slide: buckets of 1/3 GB give counts (3,0,1), sum 10; a 0.5 GB job on M1 or M2 gives
 * (2,1,1) -> 6, on M3 (2,0,2) -> 8; M4 cannot take it. SOS places it on M1. */
static void check_slide(const struct lt_policy *p, struct lt_cluster *c)
{
    size_t cand[4] = {0, 1, 2, 3}, m;
    double scores[4];
    struct lt_task t;
    struct lt_err err;

    memset(&t, 0, sizeof(t));
    t.req.mem = 0.5;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 4, NULL, scores, &err), 0);
    lt_assert_near(scores[0], 6, 0);
    lt_assert_near(scores[1], 6, 0);
    lt_assert_near(scores[2], 8, 0);
    assert_true(isinf(scores[3]));
    assert_int_equal(lt_policy_attach(p, c, &err), 0);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, &err), 0);
    assert_int_equal(m, 0); /* M1: ties with M2 go to the lower index */

    /* Place it on M1 and ask again: the index must follow the new counts exactly. */
    {
        size_t pid, m2;
        assert_int_equal(lt_cluster_place(c, m, &t, 0, &pid, &err), 0);
        assert_int_equal(lt_cluster_check(c, &err), 0);
        assert_int_equal(lt_policy_rank(p, c, &t, cand, 4, NULL, scores, &err), 0);
        /* Free now 0.5, 1, 0.75, 0.25 -> buckets 1, 2, 2, 0: counts (1,1,2), sum 6.
         * M1 -> 0 (bucket 0): (2,0,2) = 8; M2 -> 0.5 (bucket 1): (1,2,1) = 6;
         * M3 -> 0.25 (bucket 0): (2,1,1) = 6; M4 cannot. */
        lt_assert_near(scores[0], 8, 0);
        lt_assert_near(scores[1], 6, 0);
        lt_assert_near(scores[2], 6, 0);
        assert_true(isinf(scores[3]));
        assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m2, &err), 0);
        assert_int_equal(m2, 1);
    }
}

static void test_sos_design_worked_example_with_three_buckets(void **state)
{
    struct lt_policy p;
    unsigned char params[LT__SOS_PARAMS_SIZE];
    struct lt_cluster *c = slide_cluster((struct lt_res){0, 0, 0});

    (void)state;
    lt__sos_policy_init(&p, params, "sos-1x3x1", 1, 3, 1);
    check_slide(&p, c);
    lt_cluster_free(c);
}

/* sos10 cuts memory into 10 parts of the reference capacity; with ref.mem = 0.8333 the
 * free amounts 1 and 0.75 both clamp into the top bucket and 0.25 lands in bucket 3, so the
 * counts, and the scores, are the slide's. */
static void test_sos10_reproduces_the_worked_example_under_a_scaled_reference(void **state)
{
    struct lt_cluster *c = slide_cluster((struct lt_res){1, 0.8333333333, 1});
    const struct lt_policy *p = lt_policy_find("sos10", NULL);
    size_t cand[4] = {0, 1, 2, 3}, m;
    double scores[4];
    struct lt_task t;

    (void)state;
    memset(&t, 0, sizeof(t));
    t.req.mem = 0.5;
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 4, NULL, scores, NULL), 0);
    lt_assert_near(scores[0], 6, 0);
    lt_assert_near(scores[1], 6, 0);
    lt_assert_near(scores[2], 8, 0);
    assert_true(isinf(scores[3]));
    assert_int_equal(lt_policy_attach(p, c, NULL), 0);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, NULL), 0);
    assert_int_equal(m, 0);
    lt_cluster_free(c);
}

/* Buckets are 3-D: a request that keeps every machine in its memory bucket but moves one
 * machine down a cpu bucket changes the sum. Two machines (1,1,1), ref (1,1,1), sos10:
 * both in bucket (9,9,4): sum 4. A task of cpu 0.15 moves the chosen machine to cpu bucket
 * 8: counts 1 + 1, sum 2, on either machine; ties -> machine 0. A second such task: machine
 * 0 (free cpu 0.85 -> 0.7, bucket 7) keeps two singleton buckets: 2; machine 1 joins machine
 * 0 in bucket 8: 4. SOS spreads: machine 0 again. */
static void test_sos10_buckets_cpu_and_prefers_spreading(void **state)
{
    static const struct lt_machine_spec ms[] = {{"a", {1, 1, 1}}, {"b", {1, 1, 1}}};
    struct lt_cluster_spec spec = {ms, 2, {0, 0, 0}, 0};
    struct lt_cluster *c = lt_cluster_new(&spec, NULL);
    const struct lt_policy *p = lt_policy_find("sos10", NULL);
    size_t cand[2] = {0, 1}, m, pid;
    double scores[2];
    struct lt_task t;

    (void)state;
    assert_non_null(c);
    assert_int_equal(lt_policy_attach(p, c, NULL), 0);
    memset(&t, 0, sizeof(t));
    t.req.cpu = 0.15;
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 2, NULL, scores, NULL), 0);
    lt_assert_near(scores[0], 2, 0);
    lt_assert_near(scores[1], 2, 0);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, NULL), 0);
    assert_int_equal(m, 0);
    assert_int_equal(lt_cluster_place(c, m, &t, 0, &pid, NULL), 0);
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 2, NULL, scores, NULL), 0);
    lt_assert_near(scores[0], 2, 0);
    lt_assert_near(scores[1], 4, 0);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, NULL), 0);
    assert_int_equal(m, 0);
    assert_int_equal(lt_cluster_check(c, NULL), 0);
    lt_cluster_free(c);
}

/* choose with a hint (lt_choose_hint) and without, and the naive rank scan: all three agree;
 * returns the machine. */
static size_t choose3(const struct lt_policy *p, struct lt_cluster *c, const struct lt_task *t,
                      struct lt_choose_hint *hint)
{
    size_t n = lt_cluster_size(c), cand[256], hinted, plain;
    double scores[256];

    assert_true(n <= 256);
    for (size_t i = 0; i < n; i++)
        cand[i] = i;
    assert_int_equal(lt_policy_choose_hinted(p, c, t, NULL, hint, &hinted, NULL), 0);
    assert_int_equal(lt_policy_choose(p, c, t, NULL, &plain, NULL), 0);
    assert_int_equal(lt_policy_rank(p, c, t, cand, n, NULL, scores, NULL), 0);
    assert_int_equal(plain, cand[lt_scores_best(cand, scores, n)]);
    assert_int_equal(hinted, plain);
    return plain;
}

/* The hint tests' cluster: 200 machines of capacity 1; 0-99 at free 0.92 (bucket 9, 0.2 of a
 * width above its edge), 100-199 at free 0.88 (bucket 8, 0.8 above); sos10 attached after the
 * placements (its change count starts at 0). A request of 0.05 (half a width) moves the first
 * ones to bucket 8 (score +2) and leaves the others where they are (0): machine 100. ms[200]
 * and ms[201] are spares of capacity 0.57 (bucket 5, 0.7 of a width up: stayers, and no count
 * of bucket 8 or 9 moves when they join). */
struct hint_fx {
    struct lt_machine_spec ms[202];
    char names[202][8];
    size_t pid[200];
    struct lt_cluster *c;
    const struct lt_policy *p;
    struct lt_task t;
};

static void hint_fx_init(struct hint_fx *h)
{
    struct lt_cluster_spec spec;
    struct lt_task x;

    for (size_t i = 0; i < 202; i++) {
        snprintf(h->names[i], sizeof(h->names[i]), "m%zu", i);
        h->ms[i].name = h->names[i];
        h->ms[i].cap = i < 200 ? (struct lt_res){1, 1, 1} : (struct lt_res){0.57, 0.57, 1};
    }
    memset(&spec, 0, sizeof(spec));
    spec.machines = h->ms;
    spec.n_machines = 200;
    h->c = lt_cluster_new(&spec, NULL);
    assert_non_null(h->c);
    memset(&x, 0, sizeof(x));
    for (size_t i = 0; i < 200; i++) {
        x.req.cpu = x.req.mem = i < 100 ? 0.08 : 0.12;
        assert_int_equal(lt_cluster_place(h->c, i, &x, 0, &h->pid[i], NULL), 0);
    }
    h->p = lt_policy_find("sos10", NULL);
    assert_int_equal(lt_policy_attach(h->p, h->c, NULL), 0);
    memset(&h->t, 0, sizeof(h->t));
    h->t.req.cpu = h->t.req.mem = 0.05;
}

/* k changes of machine 150, which stays a stayer (a tiny task placed, or placed and removed
 * when k is even). */
static void hint_fx_touch_150(struct hint_fx *h, int k)
{
    struct lt_task x;
    size_t tiny;

    memset(&x, 0, sizeof(x));
    x.req.cpu = x.req.mem = 0.001;
    for (int j = 0; j < k; j++) {
        if (j % 2 == 0)
            assert_int_equal(lt_cluster_place(h->c, 150, &x, 0, &tiny, NULL), 0);
        else
            assert_int_equal(lt_cluster_remove(h->c, tiny, NULL), 0);
    }
}

/* Machine 70 emptied (free 1, the top of bucket 9) becomes the lowest stayer: the hint must
 * not hide it after one change, nor machine 3 (a block below 70's) after twenty-one (more
 * than the 16 changes sos remembers: the hint is then ignored). */
static void test_sos10_hint_never_hides_a_new_stayer(void **state)
{
    struct hint_fx h;
    struct lt_choose_hint *hint = lt_choose_hint_new(NULL);

    (void)state;
    assert_non_null(hint);
    hint_fx_init(&h);
    assert_int_equal(choose3(h.p, h.c, &h.t, hint), 100);
    assert_int_equal(choose3(h.p, h.c, &h.t, hint), 100); /* no change: from 100's block */
    assert_int_equal(lt_cluster_remove(h.c, h.pid[70], NULL), 0);
    assert_int_equal(choose3(h.p, h.c, &h.t, hint), 70); /* one change, in the ring */
    assert_int_equal(lt_cluster_remove(h.c, h.pid[3], NULL), 0);
    hint_fx_touch_150(&h, 20);
    assert_int_equal(choose3(h.p, h.c, &h.t, hint), 3); /* 3 changed 21 changes ago */
    assert_int_equal(lt_cluster_check(h.c, NULL), 0);
    lt_cluster_free(h.c);
    lt_choose_hint_free(hint);
}

/* A hint outlives its index: adding a machine rebuilds the cluster's indexes, and a later
 * index may sit at the address of the one that left the hint, with a change count in the
 * hint's range. choose answers 100 and leaves its hint; a machine added (new index); machine
 * 3 emptied (a stayer now); another machine added (a third index, often at the first's
 * address), and one change of machine 150. The hint must not be taken for the third index's:
 * the answer is 3. */
static void test_sos10_hint_of_a_rebuilt_index_is_ignored(void **state)
{
    struct hint_fx h;
    struct lt_choose_hint *hint = lt_choose_hint_new(NULL);
    size_t m;

    (void)state;
    assert_non_null(hint);
    hint_fx_init(&h);
    assert_int_equal(choose3(h.p, h.c, &h.t, hint), 100);
    assert_int_equal(lt_cluster_add_machine(h.c, &h.ms[200], &m, NULL), 0);
    assert_int_equal(lt_cluster_remove(h.c, h.pid[3], NULL), 0);
    assert_int_equal(lt_cluster_add_machine(h.c, &h.ms[201], &m, NULL), 0);
    hint_fx_touch_150(&h, 1);
    assert_int_equal(choose3(h.p, h.c, &h.t, hint), 3);
    assert_int_equal(lt_cluster_check(h.c, NULL), 0);
    lt_cluster_free(h.c);
    lt_choose_hint_free(hint);
}

/* Requests wider than a bucket: with cpu buckets of 0.1, a request of 0.12 takes a machine at
 * free 0.15 or 0.122 down one bucket (to 0.03 or 0.002) and does not fit the ones at free 0.11
 * or 0.115, although all four sit in bucket 1 (0.11 and 0.115 in the same eighth of it as
 * 0.122). choose must never answer a machine that cannot fit, even when its index is lower
 * (regression: classes of sub-cells that land below bucket 0 were once taken as scores). */
static void test_sos10_never_chooses_a_machine_the_request_drops_below_zero(void **state)
{
    static const struct lt_machine_spec ms[] = {
        {"low", {1, 1, 1}}, {"cut-low", {1, 1, 1}}, {"cut-high", {1, 1, 1}}, {"fits", {1, 1, 1}}};
    static const double used[] = {0.89, 0.885, 0.878, 0.85};
    struct lt_cluster_spec spec = {ms, 4, {0, 0, 0}, 0};
    struct lt_cluster *c = lt_cluster_new(&spec, NULL);
    const struct lt_policy *p = lt_policy_find("sos10", NULL);
    size_t cand[4] = {0, 1, 2, 3}, m, pid;
    double scores[4];
    struct lt_task t;

    (void)state;
    assert_non_null(c);
    memset(&t, 0, sizeof(t));
    for (size_t i = 0; i < 4; i++) {
        t.req.cpu = used[i];
        assert_int_equal(lt_cluster_place(c, i, &t, 0, &pid, NULL), 0);
    }
    assert_int_equal(lt_policy_attach(p, c, NULL), 0);
    t.req.cpu = 0.12;
    assert_int_equal(lt_policy_rank(p, c, &t, cand, 4, NULL, scores, NULL), 0);
    assert_true(isinf(scores[0]));
    assert_true(isinf(scores[1]));
    lt_assert_near(scores[2], 10, 0); /* counts (0, 4) -> (1, 3) */
    lt_assert_near(scores[3], 10, 0);
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, NULL), 0);
    assert_int_equal(m, 2);
    t.req.cpu = 0.16; /* fits none */
    assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, NULL), 0);
    assert_int_equal(m, LT_NO_MACHINE);
    assert_int_equal(lt_cluster_check(c, NULL), 0);
    lt_cluster_free(c);
}

/* Log-uniform over [lo, hi]. */
static double log_uniform(struct lt_rng *r, double lo, double hi)
{
    return lo * pow(hi / lo, lt_rng_uniform(r));
}

/* Small requests (under one bucket in cpu and mem, a sliver of disk) take choose's shortcut:
 * only the buckets that can lower the score or tie, and the lowest-index stayer found by a
 * walk over the machines. On crowded clusters of the Google mix, with machines whose free disk
 * lies just above a disk bucket's edge and, in some runs, free amounts beyond the reference
 * (both "odd" for the shortcut), idle machines going offline and back, and requests mixed with
 * wider ones and zero ones, choose must equal the scan and the index must pass its checker
 * after every change. */
static void test_sos_small_requests_equal_the_scan_on_crowded_clusters(void **state)
{
    static const struct lt_res caps[] = {{0.5, 0.5, 1.0},  {0.5, 0.25, 1.0},  {0.5, 0.75, 1.0},
                                         {1.0, 1.0, 1.0},  {0.25, 0.25, 1.0}, {0.5, 0.5, 0.61},
                                         {0.5, 0.5, 0.405}};
    enum { N = 400, STEPS = 2000, CHECK_EVERY = 7, MAX_LIVE = 20000 };
    struct lt_machine_spec ms[N];
    char names[N][16];
    static size_t live[MAX_LIVE];
    size_t cand[N];
    double scores[N];

    (void)state;
    for (size_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "m%zu", i);
        cand[i] = i;
    }
    for (uint64_t seed = 1; seed <= 6; seed++) {
        const char *name = seed % 2 ? "sos10" : "sos20";
        const struct lt_policy *p = lt_policy_find(name, NULL);
        struct lt_cluster_spec spec = {ms, N, {0, 0, 0}, seed};
        struct lt_cluster *c;
        struct lt_rng r;
        struct lt_err err;
        size_t n_live = 0;

        lt_rng_init(&r, seed, 3);
        lt_err_init(&err, NULL);
        for (size_t i = 0; i < N; i++) {
            ms[i].name = names[i];
            ms[i].cap = caps[lt_rng_below(&r, sizeof(caps) / sizeof(caps[0]))];
        }
        if (seed > 4) /* the largest machines beyond the reference: odd */
            spec.ref = (struct lt_res){0.9, 0.95, 1.0};
        c = lt_cluster_new(&spec, &err);
        assert_non_null(c);
        assert_int_equal(lt_policy_attach(p, c, &err), 0);
        /* Warm-up: small tasks placed by the policy until 20 have fitted nowhere. */
        for (int miss = 0; miss < 20 && n_live < MAX_LIVE - STEPS;) {
            struct lt_task t;
            size_t m, pid;

            memset(&t, 0, sizeof(t));
            t.req.cpu = log_uniform(&r, 1e-4, 0.15);
            t.req.mem = log_uniform(&r, 1e-4, 0.15);
            t.req.disk = log_uniform(&r, 1e-5, 0.01);
            assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, &err), 0);
            if (m == LT_NO_MACHINE) {
                miss++;
                continue;
            }
            assert_int_equal(lt_cluster_place(c, m, &t, 0, &pid, &err), 0);
            live[n_live++] = pid;
        }
        assert_int_equal(lt_cluster_check(c, &err), 0);
        for (int step = 0; step < STEPS; step++) {
            uint64_t kind = lt_rng_below(&r, 100);
            struct lt_task t;
            size_t m, want, pid;

            memset(&t, 0, sizeof(t));
            t.req.cpu = lt_rng_below(&r, 10) == 0 ? 0.0 : log_uniform(&r, 1e-4, 0.15);
            t.req.mem = log_uniform(&r, 1e-4, 0.15);
            t.req.disk = lt_rng_below(&r, 4) == 0 ? 0.0 : log_uniform(&r, 1e-5, 0.03);
            if (kind < 3) { /* an idle machine goes offline, or one comes back */
                size_t i = (size_t)lt_rng_below(&r, N);
                bool on = lt_rng_below(&r, 3) != 0;
                if (on || lt_cluster_n_tasks(c, i) == 0)
                    assert_int_equal(lt_cluster_set_online(c, i, on, &err), 0);
            } else if (kind < 52 || n_live == 0) {
                assert_int_equal(lt_policy_rank(p, c, &t, cand, N, NULL, scores, &err), 0);
                want = lt_scores_best(cand, scores, N);
                assert_int_equal(lt_policy_choose(p, c, &t, NULL, &m, &err), 0);
                if (m != want)
                    print_error("seed %llu step %d %s: choose %zu, scan %zu (cpu %.17g mem "
                                "%.17g disk %.17g)\n",
                                (unsigned long long)seed, step, name, m, want, t.req.cpu, t.req.mem,
                                t.req.disk);
                assert_int_equal(m, want);
                if (m != LT_NO_MACHINE) {
                    assert_int_equal(lt_cluster_place(c, m, &t, 0, &pid, &err), 0);
                    live[n_live++] = pid;
                }
            } else {
                size_t k = (size_t)lt_rng_below(&r, n_live);
                assert_int_equal(lt_cluster_remove(c, live[k], &err), 0);
                live[k] = live[--n_live];
            }
            if (step % CHECK_EVERY != 0)
                continue;
            if (lt_cluster_check(c, &err) != 0)
                print_error("seed %llu step %d: %s\n", (unsigned long long)seed, step, err.text);
            assert_int_equal(lt_cluster_check(c, &err), 0);
        }
        lt_cluster_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sos_design_worked_example_with_three_buckets),
        cmocka_unit_test(test_sos10_reproduces_the_worked_example_under_a_scaled_reference),
        cmocka_unit_test(test_sos10_buckets_cpu_and_prefers_spreading),
        cmocka_unit_test(test_sos10_never_chooses_a_machine_the_request_drops_below_zero),
        cmocka_unit_test(test_sos10_hint_never_hides_a_new_stayer),
        cmocka_unit_test(test_sos10_hint_of_a_rebuilt_index_is_ignored),
        cmocka_unit_test(test_sos_small_requests_equal_the_scan_on_crowded_clusters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
