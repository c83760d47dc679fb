/* test_slots.c -- the slot simulator (eviction/slotsim.c): hand-computed scenarios for mrs,
 * lrs, resume, the drop threshold, FCFS, sleeping servers and processor sharing; and the
 * exact processor sharing against a naive small-time-step reference on random single-server
 * cases (FCFS and priority with mrs), within a stated tolerance; the queue orders (sjf, ljf,
 * composite with re-keying ...) on hand-worked one-slot cases, their identities with the
 * default, and the checker under each.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_rng.h"
#include "lt_workload.h"
#include "lt_queue.h"
#include "lt_slotsim.h"

/* One type-D server (cpu 1, 8 cores) with `slots` slots. */
static void one_server(struct lt_slot_config *cfg, uint32_t slots)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->n = 1;
    cfg->g[0].type = lt_server_type_find("D", NULL);
    cfg->g[0].count = 1;
    cfg->g[0].slots = slots;
}

static void run_ok(const struct lt_slot_params *p, const struct lt_slot_task *t, size_t n,
                   struct lt_slot_outcome *out, struct lt_slot_summary *sum)
{
    struct lt_slot_params checked = *p;
    struct lt_err err;

    /* Every invariant after every event (O(tasks + servers) each): on every run but the
     * workload-sized ones, which it would slow from a second to a minute. */
    checked.check = n <= 1000;
    lt_err_init(&err, NULL);
    if (lt_slot_run(&checked, t, n, out, sum, &err) != 0) {
        print_error("lt_slot_run: %s\n", err.text);
        fail();
    }
}

/* Ten tasks of demand 1 on one 16-slot D server: 10 running > 8 cores, so each gets
 * 1/10 and all finish at t = 10 (eq. 6.2). */
static void test_processor_sharing_beyond_the_cores(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[10];
    struct lt_slot_outcome out[10];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 16);
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    for (int k = 0; k < 10; k++)
        t[k] = (struct lt_slot_task){k, 0, 0.0, 1.0, 0.0};
    run_ok(&p, t, 10, out, &sum);
    for (int k = 0; k < 10; k++)
        lt_assert_near(out[k].finish, 10.0, 1e-9);
    assert_int_equal(sum.completed, 10);
    lt_assert_near(sum.r_mean, 10.0, 1e-9);
}

/* One D server with 2 slots, IDL. A (prio 0, demand 2) at 0, B (prio 0, demand 1) at 1, C
 * (prio 5, demand 0.5) at 4. Two tasks run below the 8 cores: 0.125 each. At 4 A has done
 * 0.5 and B 0.375; C finds no slot and evicts a class-0 task. */
static void scenario(struct lt_slot_task t[3])
{
    t[0] = (struct lt_slot_task){1, 0, 0.0, 2.0, 0.0};
    t[1] = (struct lt_slot_task){2, 0, 1.0, 1.0, 0.0};
    t[2] = (struct lt_slot_task){3, 5, 4.0, 0.5, 0.0};
}

static void test_mrs_evicts_the_latest_start_and_wastes_its_work(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[3];
    struct lt_slot_outcome out[3];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 2);
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    scenario(t);
    run_ok(&p, t, 3, out, &sum);
    /* B evicted at 4 (0.375 lost), C runs 4..8, B restarts at 8 with demand 1: 8..16;
     * A: 0.5 done at 4, 1.5 left at 0.125: 16 */
    lt_assert_near(out[2].finish, 8.0, 1e-9);
    lt_assert_near(out[1].finish, 16.0, 1e-9);
    lt_assert_near(out[0].finish, 16.0, 1e-9);
    assert_int_equal(out[1].evictions, 1);
    assert_int_equal(out[0].evictions, 0);
    lt_assert_near(out[1].wasted, 0.375, 1e-12);
    assert_int_equal(sum.ne, 1);
    assert_int_equal(sum.net, 1);
    lt_assert_near(sum.we, 0.375, 1e-12);
    lt_assert_near(sum.r_class[0], (16.0 + 15.0) / 2, 1e-9);
    lt_assert_near(sum.r_class_evicted[0], 15.0, 1e-9);
    lt_assert_near(sum.r_class_nonevicted[0], 16.0, 1e-9);
    lt_assert_near(sum.r_class[5], 4.0, 1e-9);
    /* V (eq. 6.5, a = 3): classes 0 and 5 completed: ((0 + 3) 15.5 + (5 + 3) 4) / 2 */
    lt_assert_near(sum.v, (3 * 15.5 + 8 * 4.0) / 2, 1e-9);
    lt_assert_near(sum.e_mean, 1.0, 0);
}

static void test_lrs_resume_and_threshold(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[3];
    struct lt_slot_outcome out[3];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 2);
    scenario(t);

    /* lrs: A (started at 0) is evicted, 0.5 lost; B finishes at 1 + 8 = 9; A restarts at 8
     * (C's slot) with demand 2: 8 + 16 = 24 */
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    p.evict = LT_SLOT_EVICT_LRS;
    run_ok(&p, t, 3, out, &sum);
    lt_assert_near(out[0].finish, 24.0, 1e-9);
    lt_assert_near(out[1].finish, 9.0, 1e-9);
    lt_assert_near(sum.we, 0.5, 1e-12);

    /* mrs with resume: B keeps its 0.375 and finishes at 8 + 0.625 / 0.125 = 13 */
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    p.resume = true;
    run_ok(&p, t, 3, out, &sum);
    lt_assert_near(out[1].finish, 13.0, 1e-9);
    lt_assert_near(sum.we, 0.0, 0);
    assert_int_equal(sum.ne, 1);

    /* threshold 1: B is dropped at its first eviction; A ends at 16 */
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    p.drop_threshold = 1;
    run_ok(&p, t, 3, out, &sum);
    assert_true(out[1].dropped);
    assert_true(isnan(out[1].finish));
    assert_int_equal(sum.dropped, 1);
    assert_int_equal(sum.completed, 2);
    lt_assert_near(out[0].finish, 16.0, 1e-9);

    /* FCFS: no evictions; C waits for B (done at 9), then 9 + 0.5 / 0.125 = 13 */
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    p.order = LT_SLOT_ORDER_FCFS;
    run_ok(&p, t, 3, out, &sum);
    assert_int_equal(sum.ne, 0);
    lt_assert_near(out[2].finish, 13.0, 1e-9);
}

/* SLP: a sleeping server wakes in 30 s before its task runs; emptied, it sleeps again and
 * the next task waits another 30 s. */
static void test_sleeping_server_wakes_in_30_s(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[2] = {{1, 0, 0.0, 1.0, 0.0}, {2, 0, 100.0, 1.0, 0.0}};
    struct lt_slot_outcome out[2];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 2);
    lt_slot_params_default(&p, &cfg);
    run_ok(&p, t, 2, out, &sum);
    lt_assert_near(out[0].finish, 30.0 + 8.0, 1e-9);
    lt_assert_near(out[1].finish, 100.0 + 30.0 + 8.0, 1e-9);
    /* energy, type D (Table 3.1): waking 2 x 30 s at P_peak 301; running 2 x 8 s at
     * P_idle + P_cpu / 8 = 162 + 103 / 8; asleep 38 .. 100 at P_sleep 60.2 */
    lt_assert_near(sum.end, 138.0, 1e-9);
    lt_assert_near(sum.energy_j, 60 * 301 + 16 * (162 + 103.0 / 8) + 62 * 60.2, 1e-6);
    /* a horizon extends the integral: 12 more seconds asleep */
    p.horizon = 150.0;
    run_ok(&p, t, 2, out, &sum);
    lt_assert_near(sum.energy_j, 60 * 301 + 16 * (162 + 103.0 / 8) + 74 * 60.2, 1e-6);
    /* IDL: on from the start, idle at P_idle between and after */
    p.sleep = false;
    p.horizon = 0.0;
    run_ok(&p, t, 2, out, &sum);
    lt_assert_near(out[1].finish, 108.0, 1e-9);
    lt_assert_near(sum.energy_j, 16 * (162 + 103.0 / 8) + 92 * 162, 1e-6);
}

static void test_bad_input_is_named(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[1] = {{7, 12, 0.0, 1.0, 0.0}};
    struct lt_slot_outcome out[1];
    struct lt_slot_summary sum;
    struct lt_err err;

    (void)state;
    one_server(&cfg, 2);
    lt_slot_params_default(&p, &cfg);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_run(&p, t, 1, out, &sum, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "task 7: priority 12"));
    t[0].prio = 0;
    t[0].demand = 0.0;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_run(&p, t, 1, out, &sum, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "task 7: CPU demand"));
    cfg.g[0].slots = 0;
    t[0].demand = 1.0;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_run(&p, t, 1, out, &sum, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "server group 0"));
}

/* ---- the naive reference: one server, fixed steps of DT ---- */

#define DT  1e-3
#define TOL 0.1 /* seconds: about one step per event that can shift a later one */

struct ref_task {
    double rem, finish;
    bool queued, running, done;
};

/* Steps: complete, enqueue arrivals, schedule (queue head first; mrs evicts the latest
 * started of the lowest class below the head's, non-resume), then advance every running task
 * by Gamma * DT. Arrival times are distinct and on the DT grid's interior, so ties cannot
 * arise. */
static void reference(const struct lt_slot_task *t, size_t n, uint32_t slots, bool prio,
                      double *finish)
{
    struct ref_task *r = calloc(n, sizeof(*r));
    double *start = calloc(n, sizeof(*start));
    size_t left = n;

    assert_non_null(r);
    assert_non_null(start);
    for (size_t k = 0; k < n; k++)
        r[k].rem = t[k].demand;
    for (long step = 0; left > 0; step++) {
        double now = step * DT;
        uint32_t running = 0;

        for (size_t k = 0; k < n; k++) {
            if (r[k].running && r[k].rem <= 1e-12) {
                r[k].running = false;
                r[k].done = true;
                finish[k] = now;
                left--;
            }
            if (!r[k].done && !r[k].running && !r[k].queued && t[k].arrival <= now)
                r[k].queued = true;
            running += r[k].running;
        }
        for (;;) {
            size_t h = n, v = n;
            for (size_t k = 0; k < n; k++) { /* head: priority, then arrival */
                if (r[k].queued &&
                    (h == n || (prio && t[k].prio > t[h].prio) ||
                     ((!prio || t[k].prio == t[h].prio) && t[k].arrival < t[h].arrival)))
                    h = k;
            }
            if (h == n)
                break;
            if (running < slots) {
                r[h].queued = false;
                r[h].running = true;
                start[h] = now;
                running++;
                continue;
            }
            if (!prio)
                break;
            for (size_t k = 0; k < n; k++) { /* victim: lowest class, latest start */
                if (r[k].running && t[k].prio < t[h].prio &&
                    (v == n || t[k].prio < t[v].prio ||
                     (t[k].prio == t[v].prio && start[k] > start[v])))
                    v = k;
            }
            if (v == n)
                break;
            r[v].running = false;
            r[v].queued = true;
            r[v].rem = t[v].demand;
            r[h].queued = false;
            r[h].running = true;
            start[h] = now;
        }
        for (size_t k = 0; k < n; k++) {
            if (r[k].running)
                r[k].rem -= 1.0 / (running > 8 ? running : 8) * DT;
        }
    }
    free(r);
    free(start);
}

static void test_exact_sharing_matches_a_small_step_reference(void **state)
{
    struct lt_rng rng;

    (void)state;
    lt_rng_init(&rng, 42, 0);
    for (int c = 0; c < 40; c++) {
        struct lt_slot_config cfg;
        struct lt_slot_params p;
        struct lt_slot_task t[16];
        struct lt_slot_outcome out[16];
        struct lt_slot_summary sum;
        double ref[16];
        size_t n = 4 + lt_rng_below(&rng, 12);
        uint32_t slots = 1 + (uint32_t)lt_rng_below(&rng, 12);
        bool prio = c % 2 == 1;

        one_server(&cfg, slots);
        lt_slot_params_default(&p, &cfg);
        p.sleep = false;
        p.order = prio ? LT_SLOT_ORDER_PRIORITY : LT_SLOT_ORDER_FCFS;
        for (size_t k = 0; k < n; k++) {
            /* distinct arrivals between grid points, demands 0.05 .. 0.5 cpu-s */
            t[k].id = (int64_t)k;
            t[k].prio = prio ? (int)lt_rng_below(&rng, 4) * 3 : 0;
            t[k].arrival = 0.25 * (double)k + 0.0005 + 0.1 * lt_rng_uniform(&rng);
            t[k].demand = 0.05 + 0.45 * lt_rng_uniform(&rng);
            t[k].mem = 0.0; /* memory unlimited here, but the simulator checks every field */
        }
        run_ok(&p, t, n, out, &sum);
        reference(t, n, slots, prio, ref);
        for (size_t k = 0; k < n; k++) {
            if (fabs(out[k].finish - ref[k]) > TOL) {
                print_error("case %d (slots %u, %s) task %zu: exact %.6f, reference %.6f\n", c,
                            (unsigned)slots, prio ? "priority" : "fcfs", k, out[k].finish, ref[k]);
                fail();
            }
        }
    }
}

/* A small heterogeneous cluster: 2 D servers with 2 powerful slots (1/2 CPU each), 1 D with 8
 * and 3 A with 4 (1/8). */
static void small_wasc(struct lt_slot_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->n = 3;
    cfg->g[0] = (struct lt_slot_group){lt_server_type_find("D", NULL), 2, 2};
    cfg->g[1] = (struct lt_slot_group){lt_server_type_find("D", NULL), 1, 8};
    cfg->g[2] = (struct lt_slot_group){lt_server_type_find("A", NULL), 3, 4};
}

/* A random workload of n tasks: classes 0, 4 and 9 in Google-like shares, arrivals over
 * 200 s, demands 1 .. 20 cpu-s. */
static void random_tasks(struct lt_rng *rng, struct lt_slot_task *t, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        uint64_t c = lt_rng_below(rng, 10);
        t[k].id = (int64_t)k;
        t[k].prio = c < 4 ? 0 : c < 9 ? 4 : 9;
        t[k].arrival = 200.0 * lt_rng_uniform(rng);
        t[k].demand = 1.0 + 19.0 * lt_rng_uniform(rng);
    }
}

static void assert_same_outcomes(const struct lt_slot_outcome *a, const struct lt_slot_outcome *b,
                                 size_t n)
{
    for (size_t k = 0; k < n; k++) {
        bool same = !(a[k].finish < b[k].finish) && !(a[k].finish > b[k].finish) &&
                    isnan(a[k].finish) == isnan(b[k].finish);
        if (!same || a[k].evictions != b[k].evictions || a[k].server != b[k].server) {
            print_error("task %zu: finish %.17g / %.17g, evictions %u / %u, server %u / %u\n", k,
                        a[k].finish, b[k].finish, (unsigned)a[k].evictions,
                        (unsigned)b[k].evictions, (unsigned)a[k].server, (unsigned)b[k].server);
            fail();
        }
    }
}

/* Digest section 8.1 [L1746, L1792]: HYBRID with no sticky slot is WASP; with every slot
 * sticky it is non-preemptive FCFS. Same seed, same outcomes, exactly. */
static void test_hybrid_limits_are_wasp_and_fcfs(void **state)
{
    enum { N = 300 };
    static struct lt_slot_task t[N];
    static struct lt_slot_outcome a[N], b[N];
    struct lt_slot_config cfg;
    struct lt_slot_params p, q;
    struct lt_slot_summary sa, sb;
    struct lt_rng rng;

    (void)state;
    small_wasc(&cfg);
    lt_rng_init(&rng, 7, 0);
    for (int round = 0; round < 5; round++) {
        random_tasks(&rng, t, N);
        lt_slot_params_default(&p, &cfg); /* WASP: WAA + WAE with mrs */
        p.waa = p.wae = true;
        p.seed = (uint64_t)round;
        q = p;
        q.sticky = 0;
        run_ok(&p, t, N, a, &sa);
        run_ok(&q, t, N, b, &sb);
        assert_same_outcomes(a, b, N);
        assert_true(sa.ne > 0); /* the workload does evict */

        q.sticky = (uint32_t)lt_slot_config_slots(&cfg);
        p.order = LT_SLOT_ORDER_FCFS;
        p.evict = LT_SLOT_EVICT_NONE;
        p.wae = false;
        run_ok(&p, t, N, a, &sa);
        run_ok(&q, t, N, b, &sb);
        assert_same_outcomes(a, b, N);
        assert_int_equal(sb.ne, 0);
        for (size_t k = 0; k < N; k++)
            assert_true(b[k].sticky);
    }
}

/* Sticky tasks are never priority victims (slotsim.c asserts it at every eviction): with 4
 * sticky slots, the tasks that took them (some after earlier evictions as regular tasks) run
 * to completion while production tasks evict the others. */
static void test_sticky_tasks_are_never_evicted(void **state)
{
    enum { N = 300 };
    static struct lt_slot_task t[N];
    static struct lt_slot_outcome out[N];
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_summary sum;
    struct lt_rng rng;
    size_t sticky = 0;

    (void)state;
    small_wasc(&cfg);
    lt_rng_init(&rng, 8, 0);
    random_tasks(&rng, t, N);
    lt_slot_params_default(&p, &cfg);
    p.waa = p.wae = true;
    p.sticky = 4;
    run_ok(&p, t, N, out, &sum);
    assert_true(sum.ne > 0);
    for (size_t k = 0; k < N; k++) {
        if (out[k].sticky) {
            sticky++;
            assert_false(isnan(out[k].finish)); /* its sticky attempt ran to completion */
        }
    }
    assert_true(sticky > 0);
    assert_int_equal(sum.completed, N);
}

/* WAE (A22, the prose): a production evictor frees a powerful slot, held by the latest
 * started class-0 task there; without WAE mrs takes the latest start cluster-wide. Six class-0
 * tasks fill the 2 + 4 slots (starts 0..5), a production task arrives at 10. */
static void test_wae_frees_a_powerful_slot(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[7];
    struct lt_slot_outcome out[7];
    struct lt_slot_summary sum;
    int on_powerful_plain = 0;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.n = 2;
    cfg.g[0] = (struct lt_slot_group){lt_server_type_find("D", NULL), 1, 2}; /* server 0 */
    cfg.g[1] = (struct lt_slot_group){lt_server_type_find("D", NULL), 1, 4}; /* server 1 */
    for (int k = 0; k < 6; k++)
        t[k] = (struct lt_slot_task){k, 0, (double)k, 1000.0, 0.0};
    t[6] = (struct lt_slot_task){6, 9, 10.0, 1.0, 0.0};
    for (uint64_t seed = 0; seed < 20; seed++) {
        double latest_kept = -1.0;
        int victim = -1;

        lt_slot_params_default(&p, &cfg);
        p.sleep = false;
        p.wae = true;
        p.seed = seed;
        run_ok(&p, t, 7, out, &sum);
        assert_int_equal(sum.ne, 1);
        assert_int_equal(out[6].server, 0); /* the production task got a powerful slot */
        for (int k = 0; k < 6; k++) {
            if (out[k].evictions == 1)
                victim = k;
            else if (out[k].server == 0 && t[k].arrival > latest_kept)
                latest_kept = t[k].arrival;
        }
        assert_true(victim >= 0);
        assert_true(t[victim].arrival > latest_kept); /* the latest start on server 0 */

        p.wae = false; /* plain mrs: the task started at 5, wherever it is */
        run_ok(&p, t, 7, out, &sum);
        assert_int_equal(out[5].evictions, 1);
        on_powerful_plain += out[6].server == 0;
    }
    assert_true(on_powerful_plain < 20); /* without WAE the slot is not always a powerful one */
}

/* Memory (A25, A26): one D server (memory 1.0), 4 slots, IDL. A (class 0, memory 0.6,
 * demand 8) at 0; B (class 4, memory 0.6, demand 8) at 1 gets the 0.4 left and a checkpoint
 * within T_x^min = 8 / 0.125 = 64 s. Two tasks run at 0.125 each, so 64 s of running
 * finishes either. */
static void test_memory_checkpoint_lsf_and_lpf(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[2] = {{1, 0, 0.0, 8.0, 0.6}, {2, 4, 1.0, 8.0, 0.6}};
    struct lt_slot_outcome out[2];
    struct lt_slot_summary sum;
    struct lt_err err;

    (void)state;
    one_server(&cfg, 4);
    for (uint64_t seed = 0; seed < 10; seed++) {
        /* lsf: B cannot get its memory while A runs: it is evicted at each checkpoint and
         * restarted, until A ends at 64; then its last attempt runs 64 s */
        lt_slot_params_default(&p, &cfg);
        p.sleep = false;
        p.memory = LT_SLOT_MEM_LSF;
        p.seed = seed;
        run_ok(&p, t, 2, out, &sum);
        lt_assert_near(out[0].finish, 64.0, 1e-9);
        assert_int_equal(out[0].evictions, 0);
        assert_true(out[1].evictions >= 1);
        assert_int_equal(out[1].mem_evictions, out[1].evictions);
        assert_int_equal(sum.ne_priority, 0);
        assert_int_equal(sum.ne, out[1].evictions);
        assert_true(out[1].finish > 64.0);
        assert_true(out[1].finish <= 64.0 + 64.0 + 1e-9);

        /* lpf: at B's checkpoint A (lower priority) is evicted; B ends at 1 + 64 = 65 and A,
         * short of memory beside B and with no lower task to evict, waits by evictions */
        p.memory = LT_SLOT_MEM_LPF;
        run_ok(&p, t, 2, out, &sum);
        lt_assert_near(out[1].finish, 65.0, 1e-9);
        assert_int_equal(out[1].evictions, 0);
        assert_true(out[0].evictions >= 1);
        assert_int_equal(out[0].mem_evictions, out[0].evictions);
        assert_true(out[0].finish > 65.0);
        assert_true(sum.we > 0.0);
    }
    /* a task larger than every server can never run: an error, not a loop */
    t[1].mem = 1.5;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_run(&p, t, 2, out, &sum, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "task 2: memory 1.5"));
    p.memory = LT_SLOT_MEM_UNLIMITED; /* fine without memory accounting */
    run_ok(&p, t, 2, out, &sum);
}

/* Chapter 7's orderings (digest T16-T19), on the synthetic W-E (15 h) over Table 7.1's
 * servers with SC2 slots, unlimited memory, seeds 1 and 2: non-resume wasted work and mean
 * response time grow from mrs to rnd to lrs, mrs has the fewest evictions of one task, and
 * resume wastes nothing. (NE and NET orderings hold on some seeds only: docs/reproduction.md.) */
static void test_chapter_7_orderings_on_w_e(void **state)
{
    static const uint32_t cnt[4] = {69, 38, 10, 8};
    static const enum lt_slot_evict ev[3] = {LT_SLOT_EVICT_MRS, LT_SLOT_EVICT_RND,
                                             LT_SLOT_EVICT_LRS};
    struct lt_slot_group inv[4];
    struct lt_slot_config cfg;
    struct lt_slot_task *t;
    struct lt_slot_outcome *out;
    size_t n;

    (void)state;
    for (size_t k = 0; k < 4; k++)
        inv[k] = (struct lt_slot_group){lt_server_type_at(k), cnt[k], 0};
    assert_int_equal(lt_slot_config_sc(2, inv, 4, &cfg, NULL), 0);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        struct lt_slot_summary s[3], res;
        struct lt_slot_params p;

        assert_int_equal(
            lt_workload_generate(lt_workload_find("w-e", NULL), 15.0, seed, NULL, 0, &t, &n, NULL),
            0);
        out = calloc(n, sizeof(*out));
        assert_non_null(out);
        for (int e = 0; e < 3; e++) {
            lt_slot_params_default(&p, &cfg);
            p.evict = ev[e];
            p.seed = seed;
            run_ok(&p, t, n, out, &s[e]);
            assert_true(s[e].ne > 1000);
        }
        assert_true(s[0].we < s[1].we && s[1].we < s[2].we);
        assert_true(s[0].r_mean < s[1].r_mean && s[1].r_mean < s[2].r_mean);
        assert_true(s[0].max_e < s[1].max_e && s[0].max_e < s[2].max_e);
        p.evict = LT_SLOT_EVICT_MRS;
        p.resume = true;
        run_ok(&p, t, n, out, &res);
        lt_assert_near(res.we, 0.0, 0);
        assert_true(res.r_mean < s[0].r_mean);
        free(out);
        lt_free(t);
    }
}

/* The progress callback: called during the run with non-decreasing simulated time and event
 * counts, never past the end; and a run with it gives the outcomes of a run without. */
struct progress_log {
    size_t calls;
    double last_now;
    uint64_t last_events;
    bool monotone;
};

static void progress_cb(void *arg, double now, uint64_t events)
{
    struct progress_log *l = arg;

    l->monotone = l->monotone && now >= l->last_now && events >= l->last_events;
    l->last_now = now;
    l->last_events = events;
    l->calls++;
}

static void test_progress_callback(void **state)
{
    static const uint32_t cnt[4] = {68, 39, 10, 8};
    struct lt_slot_group inv[4];
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_summary a, b;
    struct lt_slot_task *t;
    struct lt_slot_outcome *o1, *o2;
    struct progress_log log = {0, 0.0, 0, true};
    size_t n;

    (void)state;
    for (size_t k = 0; k < 4; k++)
        inv[k] = (struct lt_slot_group){lt_server_type_at(k), cnt[k], 0};
    assert_int_equal(lt_wasc_table_8_1(inv, 4, &cfg, NULL), 0);
    assert_int_equal(
        lt_workload_generate(lt_workload_find("w-e", NULL), 15.0, 1, NULL, 0, &t, &n, NULL), 0);
    o1 = calloc(n, sizeof(*o1));
    o2 = calloc(n, sizeof(*o2));
    assert_non_null(o1);
    assert_non_null(o2);
    lt_slot_params_default(&p, &cfg);
    p.waa = p.wae = true;
    run_ok(&p, t, n, o1, &a);
    p.progress = progress_cb;
    p.progress_arg = &log;
    run_ok(&p, t, n, o2, &b);
    /* about one call per 16,384 scheduling rounds, and there are more rounds than tasks */
    assert_true(log.calls >= n / 16384 && log.calls > 0);
    assert_true(log.monotone);
    assert_true(log.last_now <= b.end && log.last_events <= b.events);
    assert_memory_equal(o1, o2, n * sizeof(*o1));
    assert_int_equal(a.events, b.events);
    free(o1);
    free(o2);
    lt_free(t);
}

/* The named policies: one registration entry each, unknown names list the known ones. */
static void test_policies_by_name(void **state)
{
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_err err;

    (void)state;
    one_server(&cfg, 4);
    lt_slot_params_default(&p, &cfg);
    assert_int_equal(lt_slot_policy_set(&p, "hybrid", 7, NULL), 0);
    assert_true(p.waa && p.wae && p.sticky == 7 && p.order == LT_SLOT_ORDER_PRIORITY);
    assert_int_equal(lt_slot_evict_set(&p, "lrs12", NULL), 0);
    assert_int_equal(p.evict, LT_SLOT_EVICT_LRS);
    assert_int_equal(p.drop_threshold, 12);
    assert_int_equal(lt_slot_policy_set(&p, "wasp", 7, NULL), 0);
    assert_int_equal(p.sticky, 0);
    assert_int_equal(lt_slot_policy_set(&p, "fcfs", 0, NULL), 0);
    assert_int_equal(lt_slot_evict_set(&p, "rnd", NULL), 0);
    assert_int_equal(p.evict, LT_SLOT_EVICT_NONE); /* fcfs never evicts */
    assert_int_equal(p.drop_threshold, 0);
    assert_int_equal(lt_slot_memory_set(&p, "lpf", NULL), 0);
    assert_int_equal(p.memory, LT_SLOT_MEM_LPF);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_policy_set(&p, "lifo", 0, &err), LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "known: priority, fcfs, wasp, hybrid"));
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_evict_set(&p, "mrs0", &err), LT_EINVAL);
    assert_non_null(strstr(err.text, ">= 1"));
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_evict_set(&p, "mrs99999999999", &err), LT_EINVAL);
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_memory_set(&p, NULL, &err), LT_ENOTFOUND);
}

/* The checker can fail: each structure it covers, broken on purpose mid-run
 * (lt_slot_params.check_break), stops the run with LT_EINVAL naming that structure; the same
 * run unbroken passes. Two D servers of 4 slots, 40 tasks of three priorities arriving faster
 * than they finish, so that servers hold several tasks, tasks queue and evictions happen. */
static void test_checker_catches_each_broken_structure(void **state)
{
    static const char *const want[] = {NULL,    "Fenwick tree",  "is not its own", "event heap",
                                       "class", "central queue", "free_total"};
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_task t[40];
    struct lt_slot_outcome out[40];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 4);
    cfg.g[0].count = 2;
    for (int k = 0; k < 40; k++)
        t[k] = (struct lt_slot_task){k,
                                     k % 3 == 0   ? 9
                                     : k % 3 == 1 ? 4
                                                  : 0,
                                     0.5 * k, 3.0 + k % 5, 0.0};
    for (int what = 0; what <= 6; what++) {
        struct lt_err err;
        int rc;

        lt_slot_params_default(&p, &cfg);
        p.sleep = false;
        p.check = true;
        p.check_break = what;
        lt_err_init(&err, NULL);
        rc = lt_slot_run(&p, t, 40, out, &sum, &err);
        if (what == 0) {
            assert_int_equal(rc, 0);
            continue;
        }
        if (rc != LT_EINVAL || strstr(err.text, want[what]) == NULL) {
            print_error("check_break %d: rc %d, '%s' (want '%s')\n", what, rc, err.text,
                        want[what]);
            fail();
        }
    }
    p.check_break = 7;
    assert_int_equal(lt_slot_run(&p, t, 40, out, &sum, NULL), LT_EINVAL);
}

/* ---- queue orders (lt_slot_params.qorder) ---- */

/* The order named, for a test (the registry's own tests are test_queue.c's). */
static struct lt_qorder order_of(const char *name)
{
    struct lt_qorder o;

    assert_int_equal(lt_qorder_find(name, &o, NULL), 0);
    return o;
}

/* One D server with one slot, IDL: a task runs alone at C / max(1, 8) = 0.125, so a task of
 * demand d holds the slot 8d s. Three class-0 tasks arrive at 0: A (demand 3), B (1), C (2).
 * fcfs (and no order): A 0..24, B 24..32, C 32..48. sjf: B 0..8, C 8..24, A 24..48. ljf: A
 * 0..24, C 24..40, B 40..48. The same under --policy fcfs (one class). */
static void test_orders_one_slot_by_hand(void **state)
{
    static const struct {
        const char *name; /* NULL: no order */
        double finish[3];
    } want[] = {{NULL, {24, 32, 48}},
                {"fcfs", {24, 32, 48}},
                {"sjf", {48, 8, 24}},
                {"ljf", {24, 48, 40}},
                {"largest", {24, 32, 48}},
                {"smallest", {24, 32, 48}},
                {"composite:0,0,-1", {48, 8, 24}}};
    struct lt_slot_task t[3] = {
        {0, 0, 0.0, 3.0, 0.0}, {1, 0, 0.0, 1.0, 0.0}, {2, 0, 0.0, 2.0, 0.0}};
    struct lt_slot_config cfg;
    struct lt_slot_outcome out[3];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 1);
    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        for (int fcfs = 0; fcfs < 2; fcfs++) {
            struct lt_slot_params p;
            struct lt_qorder o;

            lt_slot_params_default(&p, &cfg);
            assert_int_equal(lt_slot_policy_set(&p, fcfs ? "fcfs" : "priority", 0, NULL), 0);
            p.sleep = false;
            if (want[w].name != NULL) {
                o = order_of(want[w].name);
                p.qorder = &o;
            }
            run_ok(&p, t, 3, out, &sum);
            for (int k = 0; k < 3; k++) {
                if (fabs(out[k].finish - want[w].finish[k]) > 1e-9) {
                    print_error("%s%s: task %d finishes at %g, not %g\n",
                                want[w].name ? want[w].name : "(none)", fcfs ? " (fcfs)" : "", k,
                                out[k].finish, want[w].finish[k]);
                    fail();
                }
            }
        }
    }
}

/* Priority first: class 0 A (demand 1), B (3); class 5 C (2), D (4); all at 0 on one slot.
 * Under --policy priority with sjf the class-5 tasks go first, shortest first: C 0..16, D
 * 16..48, then A 48..56, B 56..80. Under --policy fcfs sjf alone: A 0..8, C 8..24, B 24..48,
 * D 48..80. */
static void test_orders_stay_within_a_priority_class(void **state)
{
    struct lt_slot_task t[4] = {
        {0, 0, 0.0, 1.0, 0.0}, {1, 0, 0.0, 3.0, 0.0}, {2, 5, 0.0, 2.0, 0.0}, {3, 5, 0.0, 4.0, 0.0}};
    const double prio[4] = {56, 80, 16, 48}, alone[4] = {8, 48, 24, 80};
    struct lt_qorder o = order_of("sjf");
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_outcome out[4];
    struct lt_slot_summary sum;

    (void)state;
    one_server(&cfg, 1);
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    p.qorder = &o;
    run_ok(&p, t, 4, out, &sum);
    for (int k = 0; k < 4; k++)
        lt_assert_near(out[k].finish, prio[k], 1e-9);
    assert_int_equal(sum.ne, 0);
    assert_int_equal(lt_slot_policy_set(&p, "fcfs", 0, NULL), 0);
    run_ok(&p, t, 4, out, &sum);
    for (int k = 0; k < 4; k++)
        lt_assert_near(out[k].finish, alone[k], 1e-9);
}

/* Re-keying (composite:0,1,-1, key ln(wait / demand)), one slot: A (demand 4) at 0 runs
 * 0..32; B (demand 2) at 2 and C (demand 1) at 20 wait. Keyed when queued (wait 0, clamped
 * to 1 s): B ln(1/2) < C ln(1/1), so C would go first. Re-keyed at every round: at 32 B has
 * ln(30/2) = ln 15 > C's ln(12/1), so B runs 32..48 and C 48..56. With reprioritise 1000 s
 * the only re-key is at 0 (A alone): C 32..40, B 40..56. sjf agrees with the latter. */
static void test_time_varying_order_is_rekeyed(void **state)
{
    struct lt_slot_task t[3] = {
        {0, 0, 0.0, 4.0, 0.0}, {1, 0, 2.0, 2.0, 0.0}, {2, 0, 20.0, 1.0, 0.0}};
    struct lt_qorder o = order_of("composite:0,1,-1"), sjf = order_of("sjf");
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_outcome out[3];
    struct lt_slot_summary sum;

    (void)state;
    assert_true(lt_qorder_time_varying(&o));
    one_server(&cfg, 1);
    lt_slot_params_default(&p, &cfg);
    p.sleep = false;
    p.qorder = &o;
    run_ok(&p, t, 3, out, &sum);
    lt_assert_near(out[0].finish, 32.0, 1e-9);
    lt_assert_near(out[1].finish, 48.0, 1e-9);
    lt_assert_near(out[2].finish, 56.0, 1e-9);
    p.reprioritise_s = 1000.0;
    run_ok(&p, t, 3, out, &sum);
    lt_assert_near(out[1].finish, 56.0, 1e-9);
    lt_assert_near(out[2].finish, 40.0, 1e-9);
    p.reprioritise_s = 25.0; /* re-keyed at 0, then at 32 (>= 25 s later): as every round */
    run_ok(&p, t, 3, out, &sum);
    lt_assert_near(out[1].finish, 48.0, 1e-9);
    p.reprioritise_s = 0.0;
    p.qorder = &sjf;
    run_ok(&p, t, 3, out, &sum);
    lt_assert_near(out[1].finish, 56.0, 1e-9);
    lt_assert_near(out[2].finish, 40.0, 1e-9);
}

/* Orders equal to the default on random workloads with evictions (same seed, exactly, with
 * the checker on): composite:0,1,0 (first arrival at every instant: SM6's analogue, re-keyed
 * every round), largest and smallest (every task has size 1: all tie, to first arrival); under
 * the priority, fcfs and hybrid policies. sjf, on the same workloads, differs. */
static void test_orders_equal_to_the_default(void **state)
{
    enum { N = 300 };
    static const char *const same[] = {"composite:0,1,0", "largest", "smallest", "fcfs"};
    static const char *const policies[] = {"priority", "fcfs", "hybrid"};
    static struct lt_slot_task t[N];
    static struct lt_slot_outcome a[N], b[N];
    struct lt_qorder sjf = order_of("sjf");
    struct lt_slot_config cfg;
    struct lt_slot_summary sa, sb;
    struct lt_rng rng;
    bool differs = false;

    (void)state;
    small_wasc(&cfg);
    lt_rng_init(&rng, 11, 0);
    for (int round = 0; round < 3; round++) {
        random_tasks(&rng, t, N);
        for (size_t pol = 0; pol < sizeof(policies) / sizeof(policies[0]); pol++) {
            struct lt_slot_params p;

            lt_slot_params_default(&p, &cfg);
            assert_int_equal(lt_slot_policy_set(&p, policies[pol], 4, NULL), 0);
            p.seed = (uint64_t)round;
            run_ok(&p, t, N, a, &sa);
            if (pol == 0)
                assert_true(sa.ne > 0); /* the workload does evict */
            for (size_t k = 0; k < sizeof(same) / sizeof(same[0]); k++) {
                struct lt_qorder o = order_of(same[k]);
                p.qorder = &o;
                run_ok(&p, t, N, b, &sb);
                assert_same_outcomes(a, b, N);
                assert_int_equal(sa.ne, sb.ne);
            }
            p.qorder = &sjf;
            run_ok(&p, t, N, b, &sb);
            for (size_t k = 0; k < N; k++)
                differs = differs || a[k].finish < b[k].finish || a[k].finish > b[k].finish;
        }
    }
    assert_true(differs);
}

/* The checker passes with every order (its central-queue check under the keyed comparator),
 * under priority, fcfs and hybrid with memory evictions (which re-queue tasks HYBRID's phase I
 * left stale entries for), re-keyed every round or every 5 s; and catches a broken keyed
 * queue (check_break 5). */
static void test_checker_under_each_order(void **state)
{
    enum { N = 300 };
    static const char *const names[] = {"fcfs",
                                        "sjf",
                                        "ljf",
                                        "largest",
                                        "smallest",
                                        "composite:0,1,0",
                                        "composite:-0.1,-0.3,-0.4",
                                        "composite:0,1,-1"};
    static const char *const policies[] = {"priority", "fcfs", "hybrid"};
    static struct lt_slot_task t[N];
    static struct lt_slot_outcome out[N];
    struct lt_slot_config cfg;
    struct lt_slot_summary sum;
    struct lt_rng rng;
    struct lt_err err;

    (void)state;
    small_wasc(&cfg);
    lt_rng_init(&rng, 12, 0);
    random_tasks(&rng, t, N);
    for (size_t k = 0; k < N; k++)
        t[k].mem = 0.2 * lt_rng_uniform(&rng);
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        struct lt_qorder o = order_of(names[k]);
        for (size_t pol = 0; pol < sizeof(policies) / sizeof(policies[0]); pol++) {
            for (int mem = 0; mem < 2; mem++) {
                struct lt_slot_params p;

                lt_slot_params_default(&p, &cfg);
                assert_int_equal(lt_slot_policy_set(&p, policies[pol], 4, NULL), 0);
                p.memory = mem ? LT_SLOT_MEM_LSF : LT_SLOT_MEM_UNLIMITED;
                p.qorder = &o;
                p.reprioritise_s = mem ? 5.0 : 0.0;
                run_ok(&p, t, N, out, &sum); /* check on */
                assert_int_equal(sum.completed, N);
            }
        }
        if (o.kind == LT_QORDER_FCFS)
            continue; /* applied as no order: the unkeyed queue, covered by the checker's test */
        struct lt_slot_params p;
        lt_slot_params_default(&p, &cfg);
        p.qorder = &o;
        p.check = true;
        p.check_break = 5;
        lt_err_init(&err, NULL);
        assert_int_equal(lt_slot_run(&p, t, N, out, &sum, &err), LT_EINVAL);
        assert_non_null(strstr(err.text, "central queue"));
    }
}

/* Bad queue parameters are named. */
static void test_bad_order_parameters(void **state)
{
    struct lt_slot_task t[1] = {{0, 0, 0.0, 1.0, 0.0}};
    struct lt_qorder o = order_of("sjf");
    struct lt_slot_config cfg;
    struct lt_slot_params p;
    struct lt_slot_outcome out[1];
    struct lt_slot_summary sum;
    struct lt_err err;

    (void)state;
    one_server(&cfg, 1);
    lt_slot_params_default(&p, &cfg);
    assert_null(p.qorder);
    p.reprioritise_s = -1.0;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_run(&p, t, 1, out, &sum, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "re-key interval -1"));
    p.reprioritise_s = 0.0;
    o.r_min_s = 0.0;
    p.qorder = &o;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_slot_run(&p, t, 1, out, &sum, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "queue order"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_processor_sharing_beyond_the_cores),
        cmocka_unit_test(test_mrs_evicts_the_latest_start_and_wastes_its_work),
        cmocka_unit_test(test_lrs_resume_and_threshold),
        cmocka_unit_test(test_sleeping_server_wakes_in_30_s),
        cmocka_unit_test(test_bad_input_is_named),
        cmocka_unit_test(test_exact_sharing_matches_a_small_step_reference),
        cmocka_unit_test(test_hybrid_limits_are_wasp_and_fcfs),
        cmocka_unit_test(test_sticky_tasks_are_never_evicted),
        cmocka_unit_test(test_wae_frees_a_powerful_slot),
        cmocka_unit_test(test_memory_checkpoint_lsf_and_lpf),
        cmocka_unit_test(test_chapter_7_orderings_on_w_e),
        cmocka_unit_test(test_progress_callback),
        cmocka_unit_test(test_policies_by_name),
        cmocka_unit_test(test_checker_catches_each_broken_structure),
        cmocka_unit_test(test_orders_one_slot_by_hand),
        cmocka_unit_test(test_orders_stay_within_a_priority_class),
        cmocka_unit_test(test_time_varying_order_is_rekeyed),
        cmocka_unit_test(test_orders_equal_to_the_default),
        cmocka_unit_test(test_checker_under_each_order),
        cmocka_unit_test(test_bad_order_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
