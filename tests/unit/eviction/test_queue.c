/* test_queue.c -- the queue orders (eviction/qorder.c) and the single-pool queue simulator
 * (eviction/qsim.c) of Simon & McGalliard (docs/queue.md, spec section 1):
 *   - hand-worked schedules of one small workload under every order and every dispatch and
 *     backfill mode (the schedules are written out above each table);
 *   - SM2: the time series' integral of busy cores is W = sum n r, and U M C = W;
 *   - SM6: fcfs and composite:0,1,0 give the same schedule (random workloads with
 *     simultaneous arrivals, every mode);
 *   - SM7: under EASY with exact estimates, the head starts no later than the shadow time
 *     computed when it became the blocked head, while it stays head;
 *   - the simulator (ranked segment tree, sorted array) against a naive simulator that
 *     re-sorts the whole queue and every running piece at every instant (below), on random
 *     workloads, every order and mode: identical schedules;
 *   - the same for the SLA-aware orders on random SLAs (test_sla.c has their hand cases);
 *   - forks and order changes mid-run; bad inputs and names.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_qsim.h"
#include "lt_queue.h"
#include "lt_rng.h"
#include "lt_sla.h"
#include "lt_qtest.h"

#define MAX_N 200

/* ---- helpers ---- */

static void run(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                struct lt_qjob_out *out, struct lt_qsim_summary *sum)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (lt_qsim_run(p, jobs, n, out, sum, &err) != 0) {
        print_error("lt_qsim_run: %s\n", err.text);
        fail();
    }
}

/* ---- the naive reference: re-sorts everything at every instant ---- */

struct npiece {
    size_t job;
    uint32_t cores;
    double end, pred;
};

struct naive {
    const struct lt_qsim_params *p;
    const struct lt_qjob *jobs;
    size_t n;
    uint32_t u[MAX_N], nrun[MAX_N];
    bool admitted[MAX_N];
    struct npiece pc[MAX_N * 8];
    size_t n_pc;
    uint32_t free;
    double now;
    struct lt_qjob_out *out;
};

static const struct naive *sort_ctx; /* qsort has no context argument (test code only) */

static int naive_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const struct naive *s = sort_ctx;

    if (lt_qorder_before(&s->p->order, &s->jobs[a], a, &s->jobs[b], b, s->now))
        return -1;
    return lt_qorder_before(&s->p->order, &s->jobs[b], b, &s->jobs[a], a, s->now) ? 1 : 0;
}

static int pred_cmp(const void *pa, const void *pb)
{
    const struct npiece *a = pa, *b = pb;

    return a->pred < b->pred ? -1 : a->pred > b->pred;
}

static void naive_start(struct naive *s, size_t j, uint32_t k)
{
    if (s->u[j] == s->jobs[j].tasks)
        s->out[j].start_s = s->now;
    s->u[j] -= k;
    s->free -= k;
    s->nrun[j]++;
    s->pc[s->n_pc++] =
        (struct npiece){j, k, s->now + s->jobs[j].runtime_s, s->now + s->jobs[j].estimate_s};
}

static void naive_shadow(const struct naive *s, uint32_t need, double *ts, uint32_t *extra)
{
    struct npiece sorted[MAX_N * 8];
    uint32_t avail = s->free;
    bool found = false;

    memcpy(sorted, s->pc, s->n_pc * sizeof(*sorted));
    for (size_t i = 0; i < s->n_pc; i++)
        sorted[i].pred = fmax(sorted[i].pred, s->now);
    qsort(sorted, s->n_pc, sizeof(*sorted), pred_cmp);
    for (size_t i = 0; i < s->n_pc; i++) {
        if (found && sorted[i].pred > *ts)
            break;
        avail += sorted[i].cores;
        if (!found && avail >= need) {
            found = true;
            *ts = sorted[i].pred;
        }
    }
    assert_true(found);
    *extra = avail - need;
}

static void naive_dispatch(struct naive *s)
{
    size_t q[MAX_N], nq = 0, i;
    double ts = 0, limit = 0;
    uint32_t extra = 0;

    for (size_t j = 0; j < s->n; j++)
        if (s->admitted[j] && s->u[j] > 0)
            q[nq++] = j;
    sort_ctx = s;
    qsort(q, nq, sizeof(*q), naive_cmp);
    for (i = 0; i < nq && s->free > 0; i++) {
        size_t j = q[i];
        if (s->p->dispatch == LT_QDISPATCH_FRACTIONAL)
            naive_start(s, j, s->u[j] < s->free ? s->u[j] : s->free);
        else if (s->jobs[j].tasks <= s->free)
            naive_start(s, j, s->jobs[j].tasks);
        else
            break;
    }
    if (i == nq || s->free == 0 || s->p->backfill == LT_QBACKFILL_NONE)
        return;
    if (s->p->backfill != LT_QBACKFILL_GREEDY) {
        const struct lt_qjob *h = &s->jobs[q[i]];
        naive_shadow(s, h->tasks, &ts, &extra);
        limit = s->p->backfill == LT_QBACKFILL_EASY ? ts : ts + s->p->relax_f * (ts - h->arrival_s);
    }
    for (i++; i < nq; i++) {
        const struct lt_qjob *b = &s->jobs[q[i]];
        if (b->tasks > s->free)
            continue;
        if (s->p->backfill != LT_QBACKFILL_GREEDY) {
            if (s->now + b->estimate_s <= limit)
                ;
            else if (b->tasks <= extra)
                extra -= b->tasks;
            else
                continue;
        }
        naive_start(s, q[i], b->tasks);
    }
}

static void naive_run(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                      struct lt_qjob_out *out)
{
    static struct naive s;

    assert_true(n <= MAX_N);
    memset(&s, 0, sizeof(s));
    s.p = p, s.jobs = jobs, s.n = n, s.out = out, s.free = p->cores;
    for (size_t j = 0; j < n; j++) {
        s.u[j] = jobs[j].tasks;
        out[j] = (struct lt_qjob_out){NAN, NAN};
    }
    for (;;) {
        double t = INFINITY;
        for (size_t i = 0; i < s.n_pc; i++)
            t = fmin(t, s.pc[i].end);
        for (size_t j = 0; j < n; j++)
            if (!s.admitted[j])
                t = fmin(t, jobs[j].arrival_s);
        if (isinf(t))
            break;
        s.now = t;
        for (size_t i = 0; i < s.n_pc;) {
            if (s.pc[i].end > t) {
                i++;
                continue;
            }
            size_t j = s.pc[i].job;
            s.free += s.pc[i].cores;
            if (--s.nrun[j] == 0 && s.u[j] == 0)
                out[j].end_s = t;
            s.pc[i] = s.pc[--s.n_pc];
        }
        for (size_t j = 0; j < n; j++)
            if (!s.admitted[j] && !(jobs[j].arrival_s > t))
                s.admitted[j] = true;
        naive_dispatch(&s);
    }
}

/* ---- random workloads ---- */

/* n jobs on cores cores: arrivals whole seconds in [0, span) (so many coincide), sizes
 * 1..max_n, run times whole 1..60 s; estimates exact, or (noisy) 0.5..2 times. */
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
        if (j % 7 == 3) /* a duplicate id: the index breaks the tie */
            jobs[j].id = (int64_t)j - 1;
    }
}

static void assert_same(const struct lt_qjob_out *a, const struct lt_qjob_out *b, size_t n,
                        const char *what, uint64_t seed)
{
    for (size_t j = 0; j < n; j++) {
        bool same_s = !(a[j].start_s < b[j].start_s) && !(a[j].start_s > b[j].start_s);
        bool same_e = !(a[j].end_s < b[j].end_s) && !(a[j].end_s > b[j].end_s);
        if (!same_s || !same_e) {
            print_error("%s, seed %llu: job %zu starts %.17g / %.17g, ends %.17g / %.17g\n", what,
                        (unsigned long long)seed, j, a[j].start_s, b[j].start_s, a[j].end_s,
                        b[j].end_s);
            fail();
        }
    }
}

/* ---- hand-worked schedules ---- */

/* The workload of every hand case: 4 cores, estimates exact.
 *   J0 a=0 n=2 r=10   J1 a=0 n=4 r=5   J2 a=1 n=1 r=3   J3 a=2 n=2 r=4   J4 a=3 n=1 r=20 */
static const struct lt_qjob hand_jobs[5] = {
    {0, 0, 2, 10, 10, -1, NULL}, {1, 0, 4, 5, 5, -1, NULL},   {2, 1, 1, 3, 3, -1, NULL},
    {3, 2, 2, 4, 4, -1, NULL},   {4, 3, 1, 20, 20, -1, NULL},
};

struct hand_case {
    const char *order, *dispatch, *backfill;
    double start[5], end[5];
};

/* Rigid, no backfill, every order:
 *   fcfs: t=0 J0 [0,10), J1 blocks the rest; t=10 J1 [10,15); t=15 J2, J3, J4 start.
 *   sjf (shortest estimate first): t=0 J1 (5 s) [0,5); t=5 order J2 J3 J0 J4: J2 [5,8), J3
 *     [5,9), J0 (2 cores, 1 free) blocks; t=8 J0 [8,18); t=9 J4 [9,29).
 *   ljf: t=0 J0 [0,10), J1 blocked; t=3 J4 (20 s) heads the queue, fits [3,23); t=10 J1 still
 *     blocked (3 free); t=23 J1 [23,28); t=28 J3 [28,32), J2 [28,31).
 *   largest: t=0 J1 [0,5); t=5 order J0 J3 (both 2 cores: the earlier arrival) J2 J4: J0
 *     [5,15), J3 [5,9); t=9 J2 [9,12), J4 [9,29).
 *   smallest: t=0 J0 [0,10), J1 blocked; t=1 J2 [1,4); t=2 J3 heads, blocked (1 free);
 *     t=3 J4 heads [3,23); t=10 J3 [10,14); t=23 J1 [23,28).
 *   composite:0,-1,0 (the shortest wait first; waits under 1 s tie at the clamp): t=0 J0 (tie,
 *     J0 before J1) [0,10), J1 blocked; t=1 J1 and J2 tie (waits 1 and 0 clamp to 1): J1 is
 *     head, blocked; t=2 J2, J3 (waits 1, 0: tie) before J1: J2 [2,5), J3 blocked; t=3 J3, J4
 *     tie before J1, J3 blocked; t=5 keys: J4 -ln2 > J3 -ln3 > J1 -ln5: J4 [5,25), J3 blocked;
 *     t=10 J3 [10,14), J1 blocked; t=25 J1 [25,30).
 * FCFS under every dispatch and backfill mode:
 *   easy: t=0 J0 [0,10), J1 blocked, shadow 10, extra 0; t=1 J2 ends by 10: [1,4); t=3 J4
 *     would end at 23 > 10, no extra core: waits; t=4 J3 ends by 10: [4,8); t=10 J1 [10,15);
 *     t=15 J4 [15,35).
 *   relaxed:2: limit = 10 + 2 (10 - 0) = 30 at t=3: J4 [3,23) (it delays J1); t=10 J1
 *     blocked (shadow 23), J3 ends by 23 + 46: [10,14); t=23 J1 [23,28).
 *   greedy: J2 [1,4), J4 [3,23), J3 [10,14) fit in turn; J1 [23,28) (starved).
 *   fractional: t=0 J0 [0,10), 2 of J1's tasks [0,5); t=5 the other 2 [5,10); t=10 J1 completes,
 *     J2 [10,13), J3 [10,14), J4 [10,30). */
static const struct hand_case hand_cases[] = {
    {"fcfs", "rigid", "none", {0, 10, 15, 15, 15}, {10, 15, 18, 19, 35}},
    {"sjf", "rigid", "none", {8, 0, 5, 5, 9}, {18, 5, 8, 9, 29}},
    {"ljf", "rigid", "none", {0, 23, 28, 28, 3}, {10, 28, 31, 32, 23}},
    {"largest", "rigid", "none", {5, 0, 9, 5, 9}, {15, 5, 12, 9, 29}},
    {"smallest", "rigid", "none", {0, 23, 1, 10, 3}, {10, 28, 4, 14, 23}},
    {"composite:0,-1,0", "rigid", "none", {0, 25, 2, 10, 5}, {10, 30, 5, 14, 25}},
    {"fcfs", "rigid", "easy", {0, 10, 1, 4, 15}, {10, 15, 4, 8, 35}},
    {"fcfs", "rigid", "relaxed:2", {0, 23, 1, 10, 3}, {10, 28, 4, 14, 23}},
    {"fcfs", "rigid", "relaxed:0", {0, 10, 1, 4, 15}, {10, 15, 4, 8, 35}},
    {"fcfs", "rigid", "greedy", {0, 23, 1, 10, 3}, {10, 28, 4, 14, 23}},
    {"fcfs", "fractional", "none", {0, 0, 10, 10, 10}, {10, 10, 13, 14, 30}},
};

static void test_hand_schedules(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(hand_cases) / sizeof(hand_cases[0]); c++) {
        const struct hand_case *h = &hand_cases[c];
        struct lt_qsim_params p;
        struct lt_qjob_out out[5], ref[5];

        params(&p, 4, h->order, h->dispatch, h->backfill);
        run(&p, hand_jobs, 5, out, NULL);
        naive_run(&p, hand_jobs, 5, ref);
        for (size_t j = 0; j < 5; j++) {
            if (out[j].start_s < h->start[j] || out[j].start_s > h->start[j] ||
                out[j].end_s < h->end[j] || out[j].end_s > h->end[j] ||
                ref[j].start_s < h->start[j] || ref[j].start_s > h->start[j]) {
                print_error("%s %s %s: J%zu [%g, %g) (naive start %g), want [%g, %g)\n", h->order,
                            h->dispatch, h->backfill, j, out[j].start_s, out[j].end_s,
                            ref[j].start_s, h->start[j], h->end[j]);
                fail();
            }
        }
    }
}

/* EASY's extra cores: 4 cores; J0 a=0 n=3 r=10 starts; J1 n=2 r=5 is blocked (shadow 10, then
 * 4 cores free, extra 2); J2 n=1 r=100 ends after the shadow time but fits in the extra cores:
 * starts at 0; J3 n=2 r=100 would need extra 2 but only 1 is left: waits for J1. Without the
 * extra-core rule J2 would wait until 15. Schedule: J0 [0,10), J1 [10,15), J2 [0,100),
 * J3 [15,115). */
static void test_easy_extra_cores(void **state)
{
    struct lt_qjob jobs[4] = {job(0, 0, 3, 10), job(1, 0, 2, 5), job(2, 0, 1, 100),
                              job(3, 0, 2, 100)};
    const double start[4] = {0, 10, 0, 15};
    struct lt_qsim_params p;
    struct lt_qjob_out out[4];

    (void)state;
    params(&p, 4, "fcfs", "rigid", "easy");
    run(&p, jobs, 4, out, NULL);
    for (size_t j = 0; j < 4; j++)
        lt_assert_near(out[j].start_s, start[j], 0);
}

/* The metrics of the fcfs hand case: starts 0,10,15,15,15, ends 10,15,18,19,35.
 * M = 35, W = 2*10 + 4*5 + 3 + 2*4 + 20 = 71, U = 71 / (4 * 35); waits 0,10,14,13,12
 * (total 49, p50 12, p90 = p99 = 14); responses 10,15,17,17,32 (mean 18.2); bounded slowdown
 * max(1, resp / max(r, 10)): 1, 1.5, 1.7, 1.7, 1.6 (mean 1.5); expansion resp / r: 1, 3,
 * 17/3, 17/4, 1.6. */
static void test_metrics_by_hand(void **state)
{
    struct lt_qsim_params p;
    struct lt_qsim_summary s;

    (void)state;
    params(&p, 4, "fcfs", "rigid", "none");
    run(&p, hand_jobs, 5, NULL, &s);
    assert_int_equal(s.completed, 5);
    assert_int_equal(s.events, 10); /* 5 arrivals, 5 ends */
    lt_assert_near(s.makespan_s, 35, 0);
    lt_assert_near(s.work_core_s, 71, 1e-12);
    lt_assert_near(s.utilisation, 71.0 / 140, 1e-12);
    lt_assert_near(s.total_wait_s, 49, 1e-12);
    lt_assert_near(s.wait_mean_s, 9.8, 1e-12);
    lt_assert_near(s.wait_p50_s, 12, 0);
    lt_assert_near(s.wait_p90_s, 14, 0);
    lt_assert_near(s.wait_p99_s, 14, 0);
    lt_assert_near(s.response_mean_s, 18.2, 1e-12);
    lt_assert_near(s.bsld_mean, 1.5, 1e-12);
    lt_assert_near(s.xf_mean, (1 + 3 + 17.0 / 3 + 17.0 / 4 + 1.6) / 5, 1e-12);
    assert_int_equal(s.max_queued, 4);
}

/* ---- properties on random workloads ---- */

static const char *const modes[][2] = {
    {"rigid", "none"},   {"rigid", "easy"},      {"rigid", "relaxed:0.5"},
    {"rigid", "greedy"}, {"fractional", "none"},
};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

static const char *const all_orders[] = {
    "fcfs",
    "sjf",
    "ljf",
    "largest",
    "smallest",
    "composite:0,1,0",
    "composite:-0.1,-0.3,-0.4",
    "composite:1,0,1",
    "composite:0.5,2,-1",
};
#define N_ORDERS (sizeof(all_orders) / sizeof(all_orders[0]))

/* The simulator against the naive one: every order, mode and seed, exact and noisy estimates. */
static void test_fast_equals_naive(void **state)
{
    static struct lt_qjob jobs[MAX_N];
    static struct lt_qjob_out out[MAX_N], ref[MAX_N];

    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        size_t n = 40 + (size_t)(seed * 13 % 120);
        random_jobs(jobs, n, 8, seed % 2 ? 30 : 300, seed % 3 == 0, seed);
        for (size_t o = 0; o < N_ORDERS; o++) {
            for (size_t m = 0; m < N_MODES; m++) {
                struct lt_qsim_params p;
                char what[96];

                params(&p, 8, all_orders[o], modes[m][0], modes[m][1]);
                run(&p, jobs, n, out, NULL);
                naive_run(&p, jobs, n, ref);
                snprintf(what, sizeof(what), "%s %s %s", all_orders[o], modes[m][0], modes[m][1]);
                assert_same(out, ref, n, what, seed);
            }
        }
    }
}

/* Random SLAs for jobs[0..n-1] into slas: every kind, knees and steps near the waits of
 * random_jobs, every fifth job without one. */
static void random_slas(struct lt_qjob *jobs, struct lt_sla *slas, size_t n, uint64_t seed)
{
    struct lt_rng r;

    lt_rng_init(&r, seed, LT_RNG_POLICY);
    for (size_t j = 0; j < n; j++) {
        struct lt_sla *s = &slas[j];

        memset(s, 0, sizeof(*s));
        s->kind = (enum lt_sla_kind)lt_rng_below(&r, 3);
        s->r_max = 1 + (double)lt_rng_below(&r, 3);
        s->r_pen = -(double)lt_rng_below(&r, 3);
        s->d1_s = (double)lt_rng_below(&r, 100);
        s->d2_s = s->d1_s + (double)lt_rng_below(&r, 3) * 50; /* 0: a step */
        s->r_min = s->r_max * lt_rng_uniform(&r);
        s->d0_s = (double)lt_rng_below(&r, 60);
        s->k_per_s = 0.001 + 0.1 * lt_rng_uniform(&r);
        s->target_s = 1 + (double)lt_rng_below(&r, 120);
        s->price_peak = 2;
        s->price_offpeak = 1;
        assert_int_equal(lt_sla_check(s, NULL), 0);
        jobs[j].sla = j % 5 == 4 ? NULL : s;
    }
}

/* The SLA orders (keyed per job, sorted array) against the naive simulator, which orders by
 * lt_qorder_before: every mode, jobs with and without SLAs. */
static void test_fast_equals_naive_sla_orders(void **state)
{
    static const char *const sla_orders[] = {"sla-reward", "sla-deadline", "sla-slope",
                                             "sla-slope:0", "sla-slope:7"};
    static struct lt_qjob jobs[MAX_N];
    static struct lt_sla slas[MAX_N];
    static struct lt_qjob_out out[MAX_N], ref[MAX_N];

    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        size_t n = 40 + (size_t)(seed * 17 % 120);
        random_jobs(jobs, n, 8, seed % 2 ? 30 : 300, seed % 3 == 0, seed);
        random_slas(jobs, slas, n, seed);
        for (size_t o = 0; o < sizeof(sla_orders) / sizeof(sla_orders[0]); o++) {
            for (size_t m = 0; m < N_MODES; m++) {
                struct lt_qsim_params p;
                char what[96];

                params(&p, 8, sla_orders[o], modes[m][0], modes[m][1]);
                run(&p, jobs, n, out, NULL);
                naive_run(&p, jobs, n, ref);
                snprintf(what, sizeof(what), "%s %s %s", sla_orders[o], modes[m][0], modes[m][1]);
                assert_same(out, ref, n, what, seed);
            }
        }
    }
}

/* SM6: fcfs (a fixed arrival rank, the segment tree) and composite:0,1,0 (keys re-computed at
 * every instant, the sorted array) give the same schedule, many arrivals coinciding. */
static void test_sm6_fcfs_is_composite_010(void **state)
{
    static struct lt_qjob jobs[MAX_N];
    static struct lt_qjob_out a[MAX_N], b[MAX_N];

    (void)state;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        size_t n = 20 + (size_t)(seed * 7 % 180);
        random_jobs(jobs, n, 16, (double)(1 + seed % 5 * 20), seed % 2 == 0, seed);
        for (size_t m = 0; m < N_MODES; m++) {
            struct lt_qsim_params p, q;

            params(&p, 16, "fcfs", modes[m][0], modes[m][1]);
            params(&q, 16, "composite:0,1,0", modes[m][0], modes[m][1]);
            assert_true(lt_qorder_time_varying(&q.order));
            assert_false(lt_qorder_time_varying(&p.order));
            run(&p, jobs, n, a, NULL);
            run(&q, jobs, n, b, NULL);
            assert_same(a, b, n, modes[m][1], seed);
        }
    }
}

/* SM2: the time series. */
struct series {
    double t, busy_int, peak;
    uint32_t cores, busy;
    size_t n;
};

static void on_sample(void *arg, const struct lt_qsample *x)
{
    struct series *s = arg;

    if (s->n > 0) {
        assert_true(x->time_s > s->t);
        s->busy_int += s->busy * (x->time_s - s->t);
    }
    assert_true(x->busy <= s->cores);
    assert_true((x->busy == 0) == (x->running == 0));
    s->t = x->time_s;
    s->busy = x->busy;
    s->n++;
}

/* U M C = W (spec SM2), where W is measured independently as the integral of the busy cores
 * of the time series from the first arrival; the series ends idle at the last completion. */
static void test_sm2_utilisation_identity(void **state)
{
    static struct lt_qjob jobs[MAX_N];

    (void)state;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        for (size_t m = 0; m < N_MODES; m++) {
            struct series ser = {0, 0, 0, 12, 0, 0};
            struct lt_qsim_params p;
            struct lt_qsim_summary s;
            size_t n = 150;

            random_jobs(jobs, n, 12, 200, false, seed);
            params(&p, 12, seed % 2 ? "sjf" : "composite:0.3,-0.5,0.2", modes[m][0], modes[m][1]);
            p.on_sample = on_sample;
            p.sample_arg = &ser;
            run(&p, jobs, n, NULL, &s);
            assert_int_equal(s.completed, n);
            assert_int_equal(ser.busy, 0);
            lt_assert_near(ser.t, s.last_end_s, 0);
            lt_assert_near(ser.busy_int, s.work_core_s, 1e-9 * s.work_core_s);
            lt_assert_near(s.utilisation * s.makespan_s * 12, s.work_core_s, 1e-9 * s.work_core_s);
            assert_true(s.utilisation > 0 && s.utilisation <= 1 + 1e-12);
        }
    }
}

/* SM7: the head's first shadow time, per head, while it stays head. */
struct shadow_log {
    size_t head;     /* the current head, SIZE_MAX: none yet */
    double first_ts; /* its shadow time when it became head */
    double last_ts;
    double ts_of[MAX_N]; /* per job: the shadow time when it last became head (NaN: never) */
    double since[MAX_N]; /* ... the time it did */
    double until[MAX_N]; /* ... and the time it stopped being head (INFINITY: never) */
    size_t calls;
    bool fcfs;
};

static void on_shadow(void *arg, double now, size_t job, double ts, uint32_t extra)
{
    struct shadow_log *g = arg;

    (void)extra;
    assert_true(ts >= now);
    g->calls++;
    if (job != g->head) {
        if (g->head != SIZE_MAX)
            g->until[g->head] = now;
        g->head = job;
        g->ts_of[job] = ts;
        g->since[job] = now;
        g->until[job] = INFINITY;
    } else if (g->fcfs) {
        /* With exact estimates the reservation never moves later while no job can overtake
         * the head (under largest or sjf a bigger or shorter arrival can start before it
         * without being a backfill, unseen here, and push the shadow time on). */
        assert_true(ts <= g->last_ts);
    }
    g->last_ts = ts;
}

/* Did a job ordered before j (a fixed order) start in [since, j's start]? Then it was the
 * head in that time (a later arrival that overtook j), and j was not head throughout. */
static bool overtaken(const struct lt_qorder *o, const struct lt_qjob *jobs, size_t n,
                      const struct lt_qjob_out *out, size_t j, double since)
{
    for (size_t k = 0; k < n; k++)
        if (k != j && lt_qorder_before(o, &jobs[k], k, &jobs[j], j, 0) &&
            !(out[k].start_s < since) && !(out[k].start_s > out[j].start_s))
            return true;
    return false;
}

/* Checked: for every job that was ever a blocked head under EASY (exact estimates), if it
 * started while it was still the head (its start is not after the instant another job
 * replaced it in a callback, and no job ordered before it started between its becoming head
 * and its start), its start <= the shadow time computed when it became head. Under fcfs a
 * head is never replaced; under largest and sjf a bigger or shorter arrival can overtake it. */
static void test_sm7_easy_never_delays_the_head(void **state)
{
    static struct lt_qjob jobs[MAX_N];
    static struct lt_qjob_out out[MAX_N];
    static struct shadow_log g;
    const char *orders[] = {"fcfs", "largest", "sjf"};
    size_t checked = 0;

    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        for (size_t o = 0; o < 3; o++) {
            struct lt_qsim_params p;
            size_t n = 120;

            random_jobs(jobs, n, 10, 150, false, seed);
            for (size_t j = 0; j < n; j++)
                g.ts_of[j] = NAN;
            g.head = SIZE_MAX;
            g.calls = 0;
            g.fcfs = o == 0;
            params(&p, 10, orders[o], "rigid", "easy");
            p.on_shadow = on_shadow;
            p.shadow_arg = &g;
            run(&p, jobs, n, out, NULL);
            for (size_t j = 0; j < n; j++) {
                if (isnan(g.ts_of[j]) || out[j].start_s > g.until[j] ||
                    overtaken(&p.order, jobs, n, out, j, g.since[j]))
                    continue;
                checked++;
                if (out[j].start_s > g.ts_of[j]) {
                    print_error("%s seed %llu: head %zu started %g after its shadow time %g\n",
                                orders[o], (unsigned long long)seed, j, out[j].start_s, g.ts_of[j]);
                    fail();
                }
            }
        }
    }
    assert_true(checked > 500);
}

/* ---- forks and order changes ---- */

/* Every job arrives at 0, so a fork taken at any instant has all the future: run to the end
 * with the same order it must give the live run's schedule; the live one, run on after the
 * forks, too (a fork does not touch it). Then lt_qsim_set_order mid-run to the same order
 * (the ranked queue becomes a sorted array) changes nothing either. */
static void test_fork_and_set_order(void **state)
{
    static struct lt_qjob jobs[MAX_N];
    static struct lt_qjob_out ref[MAX_N];

    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        for (size_t m = 0; m < N_MODES; m++) {
            const char *order = seed % 2 ? "sjf" : "composite:0.2,-1,0.5";
            struct lt_qsim_params p;
            struct lt_qsim *s;
            bool done = false;
            size_t n = 80, step = 0;

            random_jobs(jobs, n, 6, 1, false, seed);
            params(&p, 6, order, modes[m][0], modes[m][1]);
            run(&p, jobs, n, ref, NULL);
            s = lt_qsim_new(&p, jobs, n, NULL);
            assert_non_null(s);
            while (!done) {
                assert_int_equal(lt_qsim_advance(s, &done, NULL), 0);
                if (step++ % 9 == 4) {
                    struct lt_qsim *f = lt_qsim_fork(s, NULL, NULL);
                    const struct lt_qjob_out *fo;

                    assert_non_null(f);
                    assert_int_equal(lt_qsim_finish(f, NULL), 0);
                    fo = lt_qsim_outcome(f);
                    for (size_t i = 0; i < lt_qsim_n_jobs(f); i++)
                        assert_same(&fo[i], &ref[lt_qsim_origin(f, i)], 1, "fork", seed);
                    lt_qsim_free(f);
                }
                if (step == 20)
                    assert_int_equal(lt_qsim_set_order(s, &p.order, NULL), 0);
            }
            assert_same(lt_qsim_outcome(s), ref, n, "live after forks", seed);
            lt_qsim_free(s);
        }
    }
}

/* A fork has no future arrivals, and ordered differently it changes only itself: after a fork
 * run with ljf, the live fcfs run is still the plain fcfs run. */
static void test_fork_sees_only_present_work(void **state)
{
    struct lt_qsim_params p;
    struct lt_qorder ljf;
    struct lt_qjob_out ref[5];
    struct lt_qsim *s, *f;
    bool done;

    (void)state;
    params(&p, 4, "fcfs", "rigid", "none");
    run(&p, hand_jobs, 5, ref, NULL);
    assert_int_equal(lt_qorder_find("ljf", &ljf, NULL), 0);
    s = lt_qsim_new(&p, hand_jobs, 5, NULL);
    assert_non_null(s);
    assert_int_equal(lt_qsim_advance(s, &done, NULL), 0); /* t = 0: J0, J1 queued */
    assert_int_equal(lt_qsim_dispatch(s, NULL), 0);       /* J0 runs, J1 waits */
    assert_int_equal(lt_qsim_advance(s, &done, NULL), 0); /* t = 1: J2 queued */
    f = lt_qsim_fork(s, &ljf, NULL);
    assert_non_null(f);
    assert_int_equal(lt_qsim_n_jobs(f), 3); /* J0 running, J1 and J2 queued */
    assert_int_equal(lt_qsim_origin(f, 2), 2);
    assert_int_equal(lt_qsim_finish(f, NULL), 0);
    /* ljf on the fork: J1 (5 s) blocked before J2 (3 s); J1 [10,15), J2 [15,18). */
    lt_assert_near(lt_qsim_outcome(f)[1].start_s, 10, 0);
    lt_assert_near(lt_qsim_outcome(f)[2].start_s, 15, 0);
    lt_assert_near(lt_qsim_outcome(f)[0].end_s, 10, 0);
    lt_qsim_free(f);
    assert_int_equal(lt_qsim_finish(s, NULL), 0);
    assert_same(lt_qsim_outcome(s), ref, 5, "live", 0);
    lt_qsim_free(s);
}

/* ---- names and bad inputs ---- */

static void test_order_names(void **state)
{
    struct lt_qorder o;
    struct lt_err err;
    char name[64];
    const char *bad[] = {"composite:",        "composite:1,2",   "composite:1,2,3,4",
                         "composite:1,x,3",   "composite:1,,3",  "composite:nan,0,0",
                         "composite:1,inf,0", "composite: 1,2,3"};

    (void)state;
    assert_int_equal(lt_qorder_find("composite:-0.1,-0.3,-0.4", &o, NULL), 0);
    assert_int_equal(o.kind, LT_QORDER_COMPOSITE);
    lt_assert_near(o.alpha, -0.1, 0);
    lt_assert_near(o.beta, -0.3, 0);
    lt_assert_near(o.gamma, -0.4, 0);
    lt_qorder_name(&o, name, sizeof(name));
    assert_string_equal(name, "composite:-0.1,-0.3,-0.4");
    assert_int_equal(lt_qorder_find("sjf", &o, NULL), 0);
    lt_assert_near(o.gamma, -1, 0);
    lt_qorder_name(&o, name, sizeof(name));
    assert_string_equal(name, "sjf");
    assert_int_equal(lt_qorder_count(), 9);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qorder_find("priority", &o, &err), LT_ENOTFOUND);
    assert_string_equal(err.text, "unknown queue order 'priority' (known: fcfs, sjf, ljf, largest, "
                                  "smallest, composite:A,B,G, sla-reward, sla-deadline, "
                                  "sla-slope[:H])");
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        lt_err_init(&err, NULL);
        assert_int_equal(lt_qorder_find(bad[k], &o, &err), LT_EINVAL);
        assert_non_null(strstr(err.text, bad[k]));
    }
    /* The clamps: a fresh job (wait 0) keys as wait 1 s; r and n below 1 as 1. */
    assert_int_equal(lt_qorder_find("composite:-2,-1,3", &o, NULL), 0);
    lt_assert_near(lt_qorder_key(&o, 0.5, 0, 0.01), 0, 0);
    lt_assert_near(lt_qorder_key(&o, 4, 8, 2), -2 * log(4) - log(8) + 3 * log(2), 1e-12);
}

static void test_mode_names(void **state)
{
    enum lt_qdispatch d;
    enum lt_qbackfill b;
    double f = -1;
    struct lt_err err;

    (void)state;
    assert_int_equal(lt_qbackfill_find("relaxed:0.25", &b, &f, NULL), 0);
    assert_int_equal(b, LT_QBACKFILL_RELAXED);
    lt_assert_near(f, 0.25, 0);
    assert_int_equal(lt_qbackfill_find("easy", &b, &f, NULL), 0);
    assert_int_equal(b, LT_QBACKFILL_EASY);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qbackfill_find("relaxed:-1", &b, &f, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "'relaxed:-1'"));
    assert_int_equal(lt_qbackfill_find("relaxed:", &b, &f, NULL), LT_EINVAL);
    assert_int_equal(lt_qbackfill_find("conservative", &b, &f, NULL), LT_ENOTFOUND);
    assert_int_equal(lt_qdispatch_find("malleable", &d, NULL), LT_ENOTFOUND);
}

struct bad_case {
    size_t job;
    struct lt_qjob j;
    const char *text;
};

static void test_bad_inputs(void **state)
{
    const struct bad_case cases[] = {
        {1, {7, 0, 0, 1, 1, -1, NULL}, "job 1 (id 7): field 'tasks' is 0, must be >= 1"},
        {0,
         {3, 0, 5, 1, 1, -1, NULL},
         "job 0 (id 3): field 'tasks' is 5, must be <= cores under rigid"},
        {2, {9, -1, 1, 1, 1, -1, NULL}, "job 2 (id 9): field 'arrival_s' is -1"},
        {1, {4, NAN, 1, 1, 1, -1, NULL}, "job 1 (id 4): field 'arrival_s' is nan"},
        {1, {4, 0, 1, 0, 1, -1, NULL}, "job 1 (id 4): field 'runtime_s' is 0"},
        {1, {4, 0, 1, INFINITY, 1, -1, NULL}, "job 1 (id 4): field 'runtime_s' is inf"},
        {0, {5, 0, 1, 1, NAN, -1, NULL}, "job 0 (id 5): field 'estimate_s' is nan"},
    };
    struct lt_qsim_params p;
    struct lt_err err;

    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct lt_qjob jobs[3] = {job(0, 0, 1, 1), job(1, 0, 1, 1), job(2, 0, 1, 1)};

        jobs[cases[c].job] = cases[c].j;
        params(&p, 4, "fcfs", "rigid", "none");
        lt_err_init(&err, NULL);
        assert_null(lt_qsim_new(&p, jobs, 3, &err));
        assert_int_equal(err.code, LT_EINVAL);
        if (strncmp(err.text, cases[c].text, strlen(cases[c].text)) != 0) {
            print_error("got '%s', want '%s...'\n", err.text, cases[c].text);
            fail();
        }
        lt_err_init(&err, NULL);
        assert_int_equal(lt_qsim_run(&p, jobs, 3, NULL, NULL, &err), LT_EINVAL);
    }
    /* Fractional dispatch takes jobs larger than the machine; backfill it rejects. */
    {
        struct lt_qjob big[1] = {job(0, 0, 10, 1)};
        struct lt_qsim_summary s;

        params(&p, 4, "fcfs", "fractional", "none");
        run(&p, big, 1, NULL, &s);
        lt_assert_near(s.makespan_s, 3, 0); /* 4 + 4 + 2 tasks of 1 s */
        params(&p, 4, "fcfs", "fractional", "easy");
        lt_err_init(&err, NULL);
        assert_null(lt_qsim_new(&p, big, 1, &err));
        assert_int_equal(err.code, LT_EINVAL);
    }
    params(&p, 4, "fcfs", "rigid", "none");
    p.cores = 0;
    assert_null(lt_qsim_new(&p, hand_jobs, 5, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_schedules),
        cmocka_unit_test(test_easy_extra_cores),
        cmocka_unit_test(test_metrics_by_hand),
        cmocka_unit_test(test_fast_equals_naive),
        cmocka_unit_test(test_fast_equals_naive_sla_orders),
        cmocka_unit_test(test_sm6_fcfs_is_composite_010),
        cmocka_unit_test(test_sm2_utilisation_identity),
        cmocka_unit_test(test_sm7_easy_never_delays_the_head),
        cmocka_unit_test(test_fork_and_set_order),
        cmocka_unit_test(test_fork_sees_only_present_work),
        cmocka_unit_test(test_order_names),
        cmocka_unit_test(test_mode_names),
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
