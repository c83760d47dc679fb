/* test_faults.c -- allocation-failure injection (STYLE.md R19): every allocation of a
 * scenario is made to fail in turn; each failure must surface as LT_ENOMEM (or NULL with
 * LT_ENOMEM), leave the cluster and its indexes consistent (the checker passes) and leak
 * nothing (this test runs under ASan in the sanitizer build). Linked with lotus_faults; the
 * replay engine (simulator/replay, simulator/trace) is compiled into this test against it.
 * Scenarios: the cluster and every policy; a replay of a small hand-written trace; a slot
 * simulator run (HYBRID, memory-limited, checked after every event); a LoTES build and
 * simulation; queue simulator runs (EASY on a fixed order, a time-varying composite order,
 * fractional dispatch) with a fork, an order change and the summary; the self-tuning search
 * (a pruned search of a live state, the static and online searches); lotus-sim queue's inputs
 * (simulator/queue: CSV, SWF file, generator).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"
#include "lt_test_dir.h"
#include "queue/workload.h"
#include "replay/replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lt_cluster.h"
#include "lt_lotes.h"
#include "lt_lotes_sim.h"
#include "lt_mem.h"
#include "lt_qsim.h"
#include "lt_qtune.h"
#include "lt_rng.h"
#include "lt_score.h"
#include "lt_slotsim.h"

#define N_MACHINES 40

/* The scenario: build a cluster, attach every policy, place and remove tasks through every
 * policy's choose, add a machine, take one offline. Returns 0 when it ran to the end,
 * LT_ENOMEM when an allocation failed (after checking the state is consistent). */
static int scenario(void)
{
    struct lt_machine_spec ms[N_MACHINES];
    char names[N_MACHINES][16];
    struct lt_cluster_spec spec;
    struct lt_cluster *c;
    struct lt_err err;
    size_t pids[64], n_pids = 0;
    int rc = 0;

    for (int i = 0; i < N_MACHINES; i++) {
        snprintf(names[i], sizeof(names[i]), "m%d", i);
        ms[i].name = names[i];
        ms[i].cap = (struct lt_res){i % 3 ? 0.5 : 1.0, i % 2 ? 0.5 : 1.0, 1.0};
    }
    memset(&spec, 0, sizeof(spec));
    spec.machines = ms;
    spec.n_machines = N_MACHINES;
    spec.seed = 3;
    lt_err_init(&err, NULL);
    c = lt_cluster_new(&spec, &err);
    if (c == NULL) {
        assert_int_equal(err.code, LT_ENOMEM);
        return LT_ENOMEM;
    }
    for (size_t k = 0; k < lt_policy_count() && rc == 0; k++)
        rc = lt_policy_attach(lt_policy_at(k), c, &err);
    for (int step = 0; step < 60 && rc == 0; step++) {
        const struct lt_policy *p = lt_policy_at((size_t)step % lt_policy_count());
        struct lt_rng rng;
        struct lt_task t;
        size_t m;

        lt_rng_init(&rng, (uint64_t)step, LT_RNG_POLICY);
        memset(&t, 0, sizeof(t));
        t.req = (struct lt_res){0.05 * (step % 7 + 1), 0.03 * (step % 5 + 1), 0.01};
        rc = lt_policy_choose(p, c, &t, &rng, &m, &err);
        if (rc == 0 && m != LT_NO_MACHINE) {
            rc = lt_cluster_place(c, m, &t, 0, &pids[n_pids], &err);
            if (rc == 0)
                n_pids++;
        }
        if (rc == 0 && step % 3 == 2 && n_pids > 0)
            rc = lt_cluster_remove(c, pids[--n_pids], &err);
        if (rc == 0 && step == 30) {
            struct lt_machine_spec extra = {"extra", {2, 2, 2}};
            rc = lt_cluster_add_machine(c, &extra, &m, &err);
        }
        if (rc == 0 && step == 40) {
            for (size_t i = 0; i < lt_cluster_size(c); i++) {
                if (lt_cluster_n_tasks(c, i) == 0) {
                    rc = lt_cluster_set_online(c, i, false, &err);
                    break;
                }
            }
        }
    }
    if (rc != 0) {
        struct lt_err check;
        assert_int_equal(rc, LT_ENOMEM);
        assert_int_equal(err.code, LT_ENOMEM);
        /* The failed call changed nothing: every invariant still holds. */
        lt_mem_fail_after(-1);
        lt_err_init(&check, NULL);
        if (lt_cluster_check(c, &check) != 0) {
            print_error("inconsistent after failure: %s (%s)\n", check.text, err.text);
            fail();
        }
    }
    lt_cluster_free(c);
    return rc;
}

static void test_every_allocation_failure_is_reported_and_leaks_nothing(void **state)
{
    int64_t k;
    int failures = 0;

    (void)state;
    for (k = 0;; k++) {
        int rc;
        lt_mem_fail_after(k);
        rc = scenario();
        lt_mem_fail_after(-1);
        if (rc == 0)
            break;
        failures++;
    }
    /* The scenario allocates dozens of times (cluster, names, indexes, cells, slab). */
    assert_true(failures > 50);
    print_message("allocation points exercised: %d\n", failures);
}

/* Makes allocation k fail for k = 0, 1, ... until run() succeeds; every failing run must
 * return LT_ENOMEM with err naming it. Returns the number of failing runs. */
static int every_failure(int (*run)(void *arg, struct lt_err *err), void *arg)
{
    int failures = 0;

    for (int64_t k = 0;; k++) {
        struct lt_err err;
        int rc;
        lt_err_init(&err, NULL);
        lt_mem_fail_after(k);
        rc = run(arg, &err);
        lt_mem_fail_after(-1);
        if (rc == 0)
            break;
        if (rc != LT_ENOMEM || err.code != LT_ENOMEM) {
            print_error("allocation %" PRId64 ": rc %d, err %d '%s'\n", k, rc, err.code, err.text);
            fail();
        }
        failures++;
    }
    return failures;
}

/* ---- the replay engine ---- */

static void write_text(const char *dir, const char *table, const char *text)
{
    char p[256];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, table);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/%s/part-00000-of-00001.csv", dir, table);
    assert_non_null(f = fopen(p, "wb"));
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static int replay_run(void *arg, struct lt_err *err)
{
    struct sim_replay_config c;
    struct sim_replay_result *res = lt_calloc(1, sizeof(*res));
    int rc;

    if (res == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory (test result)");
    memset(&c, 0, sizeof(c));
    c.trace_dir = arg;
    c.policy = lt_policy_find("bestfit1", NULL);
    c.seed = 1;
    c.machines_pct = 100.0;
    c.until_us = INT64_MAX;
    c.interval_us = 300 * 1000000LL;
    c.cache_bytes = (size_t)1 << 20;
    rc = sim_replay_run(&c, res, err);
    if (rc == 0)
        assert_int_equal(res->tasks_submitted, 9);
    lt_free(res);
    return rc;
}

/* Three machines (one changes capacity, one leaves), nine tasks: some finish, one is killed,
 * one is evicted by the machine's removal and queued, two wait for room. */
static void test_replay_every_failure(void **state)
{
    char dir[64];
    int failures;

    (void)state;
    assert_int_equal(lt_test_mkdtemp(dir, sizeof(dir), "lt_faults"), 0);
    write_text(dir, "machine_events",
               "0,1,0,,0.5,0.5\n0,2,0,,0.5,0.5\n0,3,0,,0.25,0.25\n"
               "700000000,3,2,,0.5,0.5\n900000000,2,1,,,\n");
    write_text(dir, "task_events",
               "0,,10,0,,0,,0,2,0.1,0.1,0.01,\n"
               "0,,10,0,,1,,0,2,,,,\n"
               "610000000,,11,0,,0,,0,9,0.3,0.2,0.01,\n"
               "620000000,,12,0,,0,,0,1,0.3,0.3,0.01,\n"
               "620000000,,13,0,,0,,0,1,0.3,0.3,0.01,\n"
               "630000000,,14,0,,0,,0,0,0.4,0.4,0.01,\n"
               "630000000,,15,0,,0,,0,4,0.2,0.1,0.01,\n"
               "650000000,,11,0,,1,,0,9,,,,\n"
               "700000000,,12,0,,1,,0,1,,,,\n"
               "800000000,,11,0,,4,,0,9,,,,\n"
               "850000000,,16,0,,0,,0,2,0.1,0.1,0.01,\n"
               "860000000,,17,0,,0,,0,2,0.1,0.1,0.01,\n"
               "870000000,,17,0,,5,,0,2,,,,\n"
               "1000000000,,18,0,,0,,0,0,0.05,0.05,0.01,\n"
               "2000000000,,999,0,,7,,0,0,,,,\n");
    failures = every_failure(replay_run, dir);
    lt_test_rm_tree(dir);
    assert_true(failures > 20);
    print_message("replay: allocation points exercised: %d\n", failures);
}

/* ---- the slot simulator ---- */

static int slots_run(void *arg, struct lt_err *err)
{
    const struct lt_slot_config *cfg = arg;
    struct lt_slot_task t[40];
    struct lt_slot_outcome out[40];
    struct lt_slot_summary sum;
    struct lt_slot_params p;
    struct lt_rng rng;
    int rc;

    lt_rng_init(&rng, 5, 0);
    for (size_t k = 0; k < 40; k++)
        t[k] = (struct lt_slot_task){.id = (int64_t)k,
                                     .prio = (int)lt_rng_below(&rng, 12),
                                     .arrival = 0.5 * (double)k,
                                     .demand = 1.0 + 20.0 * lt_rng_uniform(&rng),
                                     .mem = 0.1 + 0.3 * lt_rng_uniform(&rng)};
    lt_slot_params_default(&p, cfg);
    if ((rc = lt_slot_policy_set(&p, "hybrid", 2, err)) < 0 ||
        (rc = lt_slot_memory_set(&p, "lsf", err)) < 0)
        return rc;
    p.check = true;
    return lt_slot_run(&p, t, 40, out, &sum, err);
}

static void test_slots_every_failure(void **state)
{
    struct lt_slot_group inv[2] = {{lt_server_type_at(0), 2, 0}, {lt_server_type_at(3), 1, 0}};
    struct lt_slot_config cfg;
    int failures;

    (void)state;
    assert_int_equal(lt_slot_config_sc(2, inv, 2, &cfg, NULL), 0);
    failures = every_failure(slots_run, &cfg);
    assert_true(failures > 10);
    print_message("slots: allocation points exercised: %d\n", failures);
}

/* ---- LoTES ---- */

static int lotes_run(void *arg, struct lt_err *err)
{
    const struct lt_lotes_problem *p = arg;
    struct lt_lotes_tables *t = lt_lotes_build(p, err);
    struct lt_lotes_sim_params sp;
    struct lt_lotes_sim_summary sum;
    int rc;

    if (t == NULL)
        return err->code;
    lt_lotes_sim_params_default(&sp, t);
    sp.hours = 30;
    sp.warmup = 10;
    sp.drain = 20;
    sp.load = 0.8;
    sp.mapreduce = true;
    sp.maps = 3;
    sp.reduces = 2;
    rc = lt_lotes_sim_run(&sp, &sum, err);
    lt_lotes_tables_free(t);
    return rc;
}

static void test_lotes_every_failure(void **state)
{
    struct lt_lotes_class k[2] = {{"small", 0.7, 1.0, {1, 1, 0}}, {"big", 0.3, 0.5, {3, 2, 0}}};
    struct lt_lotes_config c[2] = {{"eight", {8, 8, 1}, 3}, {"four", {4, 8, 1}, 2}};
    struct lt_lotes_problem p = {k, 2, c, 2};
    int failures;

    (void)state;
    failures = every_failure(lotes_run, &p);
    assert_true(failures > 10);
    print_message("lotes: allocation points exercised: %d\n", failures);
}

/* ---- the queue simulator ---- */

/* One run per mode: advance to the 10th instant, fork (and run the fork), change the order,
 * finish, summarise. */
struct queue_mode {
    const char *order, *dispatch, *backfill;
};

static int queue_run(void *arg, struct lt_err *err)
{
    const struct queue_mode *mode = arg;
    struct lt_qjob jobs[60];
    struct lt_qsim_params p;
    struct lt_qsim_summary sum;
    struct lt_qorder o;
    struct lt_qsim *s, *f;
    bool done = false;
    int rc = 0;

    for (size_t k = 0; k < 60; k++)
        jobs[k] = (struct lt_qjob){(int64_t)k,
                                   (double)(k / 3),
                                   (uint32_t)(1 + k % 5),
                                   (double)(1 + k % 7),
                                   (double)(1 + k % 7),
                                   -1,
                                   NULL};
    lt_qsim_params_default(&p, 6);
    if ((rc = lt_qorder_find(mode->order, &p.order, err)) < 0 ||
        (rc = lt_qdispatch_find(mode->dispatch, &p.dispatch, err)) < 0 ||
        (rc = lt_qbackfill_find(mode->backfill, &p.backfill, &p.relax_f, err)) < 0 ||
        (rc = lt_qorder_find("composite:0,-1,1", &o, err)) < 0)
        return rc;
    if ((s = lt_qsim_new(&p, jobs, 60, err)) == NULL)
        return err->code;
    for (int k = 0; k < 10 && rc == 0 && !done; k++)
        rc = lt_qsim_advance(s, &done, err);
    if (rc == 0) {
        if ((f = lt_qsim_fork(s, &o, err)) == NULL)
            rc = err->code;
        else if ((rc = lt_qsim_finish(f, err)) == 0)
            rc = lt_qsim_summarise(f, &sum, err);
        lt_qsim_free(f);
    }
    if (rc == 0 && (rc = lt_qsim_set_order(s, &o, err)) == 0 && (rc = lt_qsim_finish(s, err)) == 0)
        rc = lt_qsim_summarise(s, &sum, err);
    lt_qsim_free(s);
    if (rc == 0 && (rc = lt_qsim_run(&p, jobs, 60, NULL, &sum, err)) == 0 && sum.completed != 60)
        rc = LT_EINVAL;
    return rc;
}

static void test_queue_every_failure(void **state)
{
    struct queue_mode modes[3] = {{"sjf", "rigid", "easy"},
                                  {"composite:0.5,-0.3,0", "rigid", "greedy"},
                                  {"fcfs", "fractional", "none"}};
    int failures = 0;

    (void)state;
    for (size_t m = 0; m < 3; m++)
        failures += every_failure(queue_run, &modes[m]);
    assert_true(failures > 30);
    print_message("queue: allocation points exercised: %d\n", failures);
}

/* ---- the self-tuning search ---- */

/* On grid -1:1:1: a pruned search of a live state, the static search (pruned), an online run. */
static int qtune_run(void *arg, struct lt_err *err)
{
    struct lt_qjob jobs[10];
    struct lt_qsim_params p;
    struct lt_qtune_online_params op;
    struct lt_qgrid g;
    struct lt_qsim *s;
    double costs[27], bc;
    size_t best;
    bool done = false;
    int rc = 0;

    (void)arg;
    for (size_t k = 0; k < 10; k++)
        jobs[k] = (struct lt_qjob){(int64_t)k,
                                   (double)(k / 3),
                                   (uint32_t)(1 + k % 4),
                                   (double)(1 + k % 9),
                                   (double)(1 + k % 9),
                                   -1,
                                   NULL};
    lt_qsim_params_default(&p, 5);
    if ((rc = lt_qgrid_parse("-1:1:1", &g, err)) < 0)
        return rc;
    if ((s = lt_qsim_new(&p, jobs, 10, err)) == NULL)
        return err->code;
    for (int k = 0; k < 3 && rc == 0 && !done; k++)
        rc = lt_qsim_advance(s, &done, err);
    if (rc == 0)
        rc = lt_qtune_eval(s, &g, LT_QCOST_MEAN_RESPONSE, 0, 27, costs, err);
    lt_qsim_free(s);
    if (rc == 0)
        rc = lt_qtune_static(&p, jobs, 10, &g, LT_QCOST_MAKESPAN, 0, 27, true, NULL, &best, &bc,
                             NULL, err);
    lt_qtune_online_default(&op, &g, LT_QCOST_MEAN_WAIT);
    if (rc == 0)
        rc = lt_qtune_online(&p, jobs, 10, &op, NULL, NULL, NULL, err);
    return rc;
}

static void test_qtune_every_failure(void **state)
{
    int failures;

    (void)state;
    failures = every_failure(qtune_run, NULL);
    assert_true(failures > 20);
    print_message("qtune: allocation points exercised: %d\n", failures);
}

/* ---- lotus-sim queue's inputs ---- */

static int qinput_run(void *arg, struct lt_err *err)
{
    char csv[4096];
    size_t len = 0, n = 0, i;
    struct lt_qjob *j = NULL;
    struct sim_qgen_spec g;
    int rc;

    (void)arg;
    len += (size_t)snprintf(csv, sizeof(csv), "arrival_s,tasks,runtime_s\n");
    for (i = 0; i < 40; i++) /* 40 jobs: the array grows 16 -> 32 -> 64 */
        len += (size_t)snprintf(csv + len, sizeof(csv) - len, "%zu,2,5\n", 40 - i);
    rc = sim_qload_csv_buffer("q.csv", csv, len, NULL, &j, &n, NULL, err);
    lt_free(j);
    j = NULL;
    if (rc == 0)
        rc = sim_qload_swf(QW_DATA_DIR "/example.swf", NULL, &j, &n, NULL, err);
    lt_free(j);
    j = NULL;
    sim_qgen_defaults(&g);
    g.n = 30;
    g.rate = 1;
    if (rc == 0)
        rc = sim_qgen(&g, 0, 1, &j, &n, err);
    lt_free(j);
    return rc;
}

static void test_queue_inputs_every_failure(void **state)
{
    int failures;

    (void)state;
    failures = every_failure(qinput_run, NULL);
    assert_true(failures >= 5);
    print_message("queue inputs: allocation points exercised: %d\n", failures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure_is_reported_and_leaks_nothing),
        cmocka_unit_test(test_replay_every_failure),
        cmocka_unit_test(test_slots_every_failure),
        cmocka_unit_test(test_lotes_every_failure),
        cmocka_unit_test(test_queue_every_failure),
        cmocka_unit_test(test_qtune_every_failure),
        cmocka_unit_test(test_queue_inputs_every_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
