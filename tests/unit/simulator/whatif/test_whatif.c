/* test_whatif.c -- lotus-sim whatif's engine (simulator/whatif/, replay.h's sim_snap_*;
 * docs/whatif.md): Eq. 4.1-4.2 and the residual life, the quantiles with censoring, --at, the
 * job file's errors, determinism per controller seed, censoring kept in the denominator,
 * Method II's refusal, and the key property: a replica forked from the snapshot gives what a
 * fresh replay of the whole prefix with the same perturbation gives; --until-complete; the SLA
 * settings (reward.h): names, censoring delays and rewards by hand, bounds.
 *
 * The replays run on the bundled demo trace (tests/data/clusterdata-2011-2-demo, ~3 h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"
#include "lt_test_dir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lt_mem.h"
#include "whatif/reward.h"
#include "whatif/whatif.h"

#define US    1000000LL
#define TS(s) ((600LL + (s)) * US) /* timestamp of trace second s */

/* ---- Eq. 4.1-4.2 and the residual life ------------------------------------------------- */

static void test_life_split_sums_to_the_duration(void **state)
{
    (void)state;
    struct lt_rng r;
    lt_rng_init(&r, 7, 0);
    for (int k = 0; k < 10000; k++) {
        int64_t d = (int64_t)lt_rng_below(&r, 100000000000ULL), x, y;
        double p = lt_rng_uniform(&r);
        sim_life_split(d, p, &x, &y);
        assert_int_equal(x + y, d); /* B5: X + Y = D exactly */
        assert_true(x >= 0 && y >= 0);
        assert_true(fabs((double)x - (double)d * p) <= 0.5 + 1e-6 * (double)d * 1e-9);
    }
    int64_t x, y;
    sim_life_split(1000, 0.25, &x, &y); /* by hand */
    assert_int_equal(x, 250);
    assert_int_equal(y, 750);
    sim_life_split(1000, 0.0, &x, &y);
    assert_int_equal(y, 1000);
    sim_life_split(1000, 1.0, &x, &y);
    assert_int_equal(y, 0);
}

static void test_residual_draw_conditions_on_elapsed(void **state)
{
    (void)state;
    const int64_t runs[] = {10, 20, 30, 40};
    struct lt_rng r;
    bool seen[4] = {false};
    lt_rng_init(&r, 1, 0);
    for (int k = 0; k < 400; k++) {
        int64_t y = sim_residual_draw(runs, 4, 15, &r); /* runs >= 15: 20, 30, 40 */
        assert_true(y == 5 || y == 15 || y == 25);
        seen[(y + 15) / 10 - 1] = true;
    }
    assert_true(seen[1] && seen[2] && seen[3] && !seen[0]);
    assert_int_equal(sim_residual_draw(runs, 4, 40, &r), 0);  /* only 40: residual 0 */
    assert_int_equal(sim_residual_draw(runs, 4, 41, &r), -1); /* longer than every run */
    assert_int_equal(sim_residual_draw(runs, 0, 0, &r), -1);
}

/* ---- statistics with censoring ----------------------------------------------------------- */

static struct sim_whatif_rec rec_delay(int64_t delay_s)
{
    struct sim_whatif_rec x;
    memset(&x, 0, sizeof(x));
    x.r.t_inj_us = TS(100);
    if (delay_s < 0) {
        x.r.reason = SIM_INJ_HORIZON;
        x.r.start_us = -1;
    } else {
        x.r.reason = SIM_INJ_STARTED;
        x.r.start_us = x.r.t_inj_us + delay_s * US;
    }
    return x;
}

static void test_censored_replicas_stay_in_the_denominator(void **state)
{
    (void)state;
    struct sim_whatif_rec recs[4] = {rec_delay(30), rec_delay(-1), rec_delay(10), rec_delay(20)};
    double buf[4], d;
    struct sim_whatif_stats st;
    sim_whatif_level(recs, 4, 1, 0, buf, &st);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.started, 3);
    assert_int_equal(st.censored, 1);
    assert_int_equal(st.by_reason[SIM_INJ_HORIZON], 1);
    assert_true(fabs(st.mean_s - 20.0) < 1e-9); /* over the started */
    assert_true(fabs(sim_whatif_quantile(buf, 4, 0.5) - 20.0) < 1e-9);
    assert_true(fabs(sim_whatif_quantile(buf, 4, 0.75) - 30.0) < 1e-9);
    assert_true(isinf(sim_whatif_quantile(buf, 4, 0.76))); /* the CDF ends at 3/4 */
    assert_true(isinf(st.q[SIM_WHATIF_N_Q - 1]));
    assert_true(fabs(sim_whatif_quantile(buf, 4, 0.0) - 10.0) < 1e-9);
    assert_false(st.all_same);
    assert_false(sim_whatif_delay(&recs[1], &d));
    assert_true(isinf(d));
    struct sim_whatif_rec same[3] = {rec_delay(5), rec_delay(5), rec_delay(5)};
    sim_whatif_level(same, 3, 1, 0, buf, &st);
    assert_true(st.all_same);
}

/* ---- --at --------------------------------------------------------------------------------- */

static void test_at_parse(void **state)
{
    (void)state;
    struct sim_at a;
    struct lt_err err;
    lt_err_init(&err, NULL);
    assert_int_equal(sim_at_parse("--at", "7200", &a, &err), 0);
    assert_int_equal(a.mode, SIM_AT_FIXED);
    assert_true(fabs(a.at_s - 7200) < 1e-9);
    assert_int_equal(sim_at_parse("--at", "2h", &a, &err), 0);
    assert_true(fabs(a.at_s - 7200) < 1e-9);
    assert_int_equal(sim_at_parse("--at", "random", &a, &err), 0);
    assert_true(a.mode == SIM_AT_RANDOM && !a.has_window);
    assert_int_equal(sim_at_parse("--at", "random:1h:2h", &a, &err), 0);
    assert_true(a.has_window && fabs(a.a_s - 3600) < 1e-9 && fabs(a.b_s - 7200) < 1e-9);
    assert_int_equal(sim_at_parse("--at", "day-random:9h", &a, &err), 0);
    assert_true(a.mode == SIM_AT_DAY_RANDOM && fabs(a.at_s - 32400) < 1e-9);
    const char *bad[] = {"",           "x",          "random:",        "random:5",
                         "random:9:5", "random:a:b", "day-random:25h", "randomly",
                         "-5"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        lt_err_init(&err, NULL);
        assert_int_equal(sim_at_parse("--at", bad[k], &a, &err), LT_EINVAL);
        assert_non_null(strstr(err.text, "--at"));
    }
}

/* ---- the job file ------------------------------------------------------------------------ */

static char g_dir[512];

static int dir_setup(void **state)
{
    (void)state;
    return lt_test_mkdtemp(g_dir, sizeof(g_dir), "whatif");
}

static int dir_teardown(void **state)
{
    (void)state;
    lt_test_rm_tree(g_dir);
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_job_file_errors_name_the_file_and_path(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"[]", "$: expected an object, got an array"},
        {"{\"priority\":2,\"tasks\":[{\"cpu\":0.1,\"mem\":0.1,\"disk\":0,\"duration_s\":1}],"
         "\"colour\":1}",
         "$: unknown key 'colour' (known: name, priority, sched_class, tasks)"},
        {"{\"tasks\":[{\"cpu\":0.1,\"mem\":0.1,\"disk\":0,\"duration_s\":1}]}",
         "$.priority: missing"},
        {"{\"priority\":12,\"tasks\":[]}", "$.priority: must be an integer in 0..11"},
        {"{\"priority\":2,\"tasks\":[]}", "$.tasks: must be an array of 1.."},
        {"{\"priority\":2,\"tasks\":[{\"cpu\":0,\"mem\":0.1,\"disk\":0,\"duration_s\":1}]}",
         "$.tasks[0].cpu: must be a number > 0"},
        {"{\"priority\":2,\"tasks\":[{\"cpu\":0.1,\"mem\":0.1,\"disk\":0,\"duration_s\":1},"
         "{\"cpu\":0.1,\"mem\":0.1,\"disk\":0,\"duration_s\":1,\"cpuu\":1}]}",
         "$.tasks[1]: unknown key 'cpuu'"},
        {"{\"priority\":2,\"tasks\":[{\"cpu\":0.1,\"mem\":\"x\",\"disk\":0,\"duration_s\":1}]}",
         "$.tasks[0].mem: must be a number"},
        {"{\"priority\":2,\"tasks\":[{\"count\":0,\"cpu\":0.1,\"mem\":0.1,\"disk\":0,"
         "\"duration_s\":1}]}",
         "$.tasks[0].count: must be an integer in 1..100000"},
        {"{\"priority\":2,\"tasks\":[{\"cpu\":0.1,\"mem\":0.1,\"disk\":0}]}",
         "$.tasks[0].duration_s: missing"},
        {"{\"priority\":2,\"sched_class\":4,\"tasks\":[{\"cpu\":0.1,\"mem\":0.1,\"disk\":0,"
         "\"duration_s\":1}]}",
         "$.sched_class: must be an integer in 0..3"},
    };
    char path[600];
    struct sim_whatif_job job;
    struct lt_err err;
    snprintf(path, sizeof(path), "%s/job.json", g_dir);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        write_file(path, cases[k].json);
        lt_err_init(&err, NULL);
        assert_int_equal(sim_whatif_job_load(path, &job, &err), LT_EINVAL);
        assert_string_equal(err.source, path);
        if (strstr(err.text, cases[k].want) == NULL)
            fail_msg("case %zu: '%s' lacks '%s'", k, err.text, cases[k].want);
    }
    write_file(path, "{\"priority\":2,");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_job_load(path, &job, &err), LT_EPARSE);
    assert_true(err.line == 1 && err.column > 0);
    lt_err_init(&err, NULL);
    snprintf(path, sizeof(path), "%s/none.json", g_dir);
    assert_int_equal(sim_whatif_job_load(path, &job, &err), LT_EIO);
    /* A good one, then against a cell whose largest memory is 0.5. */
    snprintf(path, sizeof(path), "%s/job.json", g_dir);
    write_file(path, "{\"name\":\"bob\",\"priority\":2,\"sched_class\":0,\"tasks\":[{\"count\":2,"
                     "\"cpu\":0.0417,\"mem\":0.94,\"disk\":0.01,\"duration_s\":3600}]}");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_job_load(path, &job, &err), 0);
    assert_string_equal(job.name, "bob");
    assert_int_equal(job.n_tasks, 2);
    assert_int_equal(job.groups[0].duration_us, 3600 * US);
    assert_int_equal(sim_whatif_job_check(path, &job, (struct lt_res){1, 1, 1}, &err), 0);
    assert_int_equal(sim_whatif_job_check(path, &job, (struct lt_res){1, 0.5, 1}, &err), LT_EINVAL);
    assert_string_equal(err.source, path);
    assert_non_null(strstr(err.text, "$.tasks[0].mem: must be > 0 and at most the largest"));
}

/* ---- runs on the demo trace ------------------------------------------------------------- */

static const struct sim_inject_group SMALL = {{0.02, 0.02, 0.001}, 600 * US, 3};

static struct sim_replay_config demo_cfg(enum sim_preempt preempt)
{
    return (struct sim_replay_config){.trace_dir = TR_DEMO_DIR,
                                      .policy = lt_policy_find("bestfit1", NULL),
                                      .seed = 1,
                                      .machines_pct = 100.0,
                                      .initial_state = SIM_INIT_TRACE,
                                      .preempt = preempt,
                                      .until_us = INT64_MAX,
                                      .interval_us = INT64_C(1) << 60,
                                      .cache_bytes = (size_t)256 << 20};
}

static struct sim_whatif_config wcfg(const struct sim_replay_config *rc, int prio)
{
    struct sim_whatif_config c = {0};
    c.replay = rc;
    c.inject = (struct sim_inject){.groups = &SMALL,
                                   .n_groups = 1,
                                   .priority = prio,
                                   .sched_class = 0,
                                   .horizon_us = 86400 * US};
    c.at = (struct sim_at){.mode = SIM_AT_RANDOM};
    c.replicas = 5;
    c.seed = 1;
    c.shrink[0] = 100;
    c.n_shrink = 1;
    c.jobs = 2;
    return c;
}

static void run_ok(const struct sim_whatif_config *c, struct sim_whatif_rec *recs,
                   struct sim_whatif_info *info)
{
    struct lt_err err;
    lt_err_init(&err, NULL);
    int rc = sim_whatif_run(c, recs, info, &err);
    if (rc != 0)
        fail_msg("sim_whatif_run: %s", err.text);
}

/* The fields a replica's answer is made of. */
static void assert_same_rec(const struct sim_whatif_rec *a, const struct sim_whatif_rec *b)
{
    assert_int_equal(a->seed, b->seed);
    assert_int_equal(a->machines_kept, b->machines_kept);
    assert_int_equal(a->r.t_inj_us, b->r.t_inj_us);
    assert_int_equal(a->r.reason, b->r.reason);
    assert_int_equal(a->r.start_us, b->r.start_us);
    assert_int_equal(a->r.first_start_us, b->r.first_start_us);
    assert_int_equal(a->r.started, b->r.started);
    assert_int_equal(a->r.queued_at_inj, b->r.queued_at_inj);
    assert_int_equal(a->r.running_at_inj, b->r.running_at_inj);
    assert_int_equal(a->rs.residual, b->rs.residual);
    assert_int_equal(a->rs.split, b->rs.split);
    assert_int_equal(a->rs.kept, b->rs.kept);
}

static void test_determinism_per_controller_seed(void **state)
{
    (void)state;
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 9);
    struct sim_whatif_rec a[10], b[10], d[10];
    struct sim_whatif_info info;
    c.shrink[1] = 60;
    c.n_shrink = 2;
    c.resample = true;
    run_ok(&c, a, &info);
    c.jobs = 1; /* the number of processes changes nothing */
    run_ok(&c, b, &info);
    for (size_t k = 0; k < 10; k++)
        assert_same_rec(&a[k], &b[k]);
    c.seed = 2;
    run_ok(&c, d, &info);
    size_t differ = 0;
    for (size_t k = 0; k < 10; k++)
        differ += a[k].seed != d[k].seed && a[k].r.t_inj_us != d[k].r.t_inj_us;
    assert_int_equal(differ, 10);
    /* Replica seeds come from the controller, the levels share them (common random numbers),
     * and the shrink levels keep nested subsets: 100 % keeps every machine. */
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(a[2 * i].seed, a[2 * i + 1].seed);
        assert_int_equal(a[2 * i].r.t_inj_us, a[2 * i + 1].r.t_inj_us);
        assert_int_equal(a[2 * i].machines_kept, info.machines);
        assert_int_equal(a[2 * i + 1].machines_kept, (uint64_t)(0.6 * (double)info.machines + 0.5));
    }
}

/* One source on does not change another's draws: --resample-running leaves the instants of
 * Method I as they were. */
static void test_streams_are_independent(void **state)
{
    (void)state;
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 9);
    struct sim_whatif_rec a[5], b[5];
    struct sim_whatif_info info;
    run_ok(&c, a, &info);
    c.resample = true;
    run_ok(&c, b, &info);
    for (size_t k = 0; k < 5; k++) {
        assert_int_equal(a[k].seed, b[k].seed);
        assert_int_equal(a[k].r.t_inj_us, b[k].r.t_inj_us);
    }
}

/* The key property: for several option sets, every replica forked from the snapshot equals
 * the same replica replayed from the start in its own process (no_snapshot), and one of them
 * equals a fresh replay in this process. */
static void test_snapshot_equals_a_fresh_prefix(void **state)
{
    (void)state;
    struct sim_replay_config none = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_replay_config prio = demo_cfg(SIM_PREEMPT_PRIORITY);
    /* The ordered queue: sla-deadline over annotated trace tasks (every task by-deadline,
     * d1 = 2x, d2 = 4x of its estimate), the job with its own SLA, re-keyed every 10 min. */
    static struct sim_annot ann;
    struct sim_replay_config ord = demo_cfg(SIM_PREEMPT_NONE);
    struct lt_qorder order;
    struct lt_sla job_sla = {
        .kind = LT_SLA_BY_DEADLINE, .r_max = 1, .r_pen = -1, .d1_s = 600, .d2_s = 1200};
    struct lt_err e0;
    lt_err_init(&e0, NULL);
    assert_int_equal(lt_qorder_find("sla-deadline", &order, &e0), 0);
    ann.n = 1;
    ann.rules[0].prio_mask = 0x0fff;
    ann.rules[0].class_mask = 0x0f;
    snprintf(ann.rules[0].name, sizeof(ann.rules[0].name), "all");
    assert_int_equal(lt_sla_parse("by-deadline:d1=2x,d2=4x", &ann.rules[0].spec, &e0), 0);
    ord.order = &order;
    ord.annot = &ann;
    ord.reprioritise_us = 600 * US;
    struct {
        const struct sim_replay_config *rc;
        int prio;
        bool resample, no_arrivals, start_all, fixed;
        double shrink[2];
        size_t n_shrink;
    } sets[] = {
        {&none, 9, true, false, false, false, {100, 70}, 2},
        {&none, 9, true, true, true, true, {80, 0}, 1},
        {&prio, 2, false, false, true, false, {100, 50}, 2},
        {&prio, 0, true, false, false, true, {90, 0}, 1},
        {&ord, 2, true, false, false, true, {100, 70}, 2},
    };
    for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
        struct sim_whatif_config c = wcfg(sets[k].rc, sets[k].prio);
        struct sim_whatif_rec snap[8], fresh[8];
        struct sim_whatif_info info;
        c.replicas = 4;
        c.seed = 10 + k;
        c.resample = sets[k].resample;
        c.inject.no_arrivals = sets[k].no_arrivals;
        c.inject.start_all = sets[k].start_all;
        c.inject.sla = sets[k].rc == &ord ? &job_sla : NULL;
        if (sets[k].fixed)
            c.at = (struct sim_at){.mode = SIM_AT_FIXED, .at_s = 3000};
        c.n_shrink = sets[k].n_shrink;
        memcpy(c.shrink, sets[k].shrink, sizeof(sets[k].shrink));
        run_ok(&c, snap, &info);
        c.no_snapshot = true;
        run_ok(&c, fresh, &info);
        size_t started = 0;
        for (size_t i = 0; i < c.replicas * c.n_shrink; i++) {
            assert_same_rec(&snap[i], &fresh[i]);
            started += snap[i].r.reason == SIM_INJ_STARTED;
        }
        if (k == 0 || sets[k].rc == &ord) /* cases where the job starts: delays compared */
            assert_true(started > 0);
        /* The last replica of the last level again, in this process. */
        const struct sim_whatif_rec *x = &snap[c.replicas * c.n_shrink - 1];
        struct sim_snap *s;
        struct lt_err err;
        struct lt_rng shrink, resample;
        struct sim_inject_result res;
        struct sim_resample_stats rs = {0};
        size_t kept = 0;
        lt_err_init(&err, NULL);
        lt_rng_init(&shrink, x->seed, SIM_WHATIF_STREAM_SHRINK);
        lt_rng_init(&resample, x->seed, SIM_WHATIF_STREAM_RESAMPLE);
        assert_int_equal(sim_snap_open(c.replay, c.resample, &s, &err), 0);
        assert_int_equal(sim_snap_advance(s, x->r.t_inj_us, &err), 0);
        if (x->shrink_pct < 100)
            assert_int_equal(sim_snap_shrink(s, x->shrink_pct, &shrink, &kept, &err), 0);
        if (c.resample)
            assert_int_equal(sim_snap_resample(s, &resample, &rs, &err), 0);
        assert_int_equal(sim_snap_inject(s, &c.inject, &res, &err), 0);
        sim_snap_free(s);
        assert_int_equal(res.reason, x->r.reason);
        assert_int_equal(res.start_us, x->r.start_us);
        assert_int_equal(res.queued_at_inj, x->r.queued_at_inj);
        assert_int_equal(res.running_at_inj, x->r.running_at_inj);
        assert_int_equal(rs.residual, x->rs.residual);
    }
}

/* --shrink-from-start replays the prefix per replica with the machines dropped from t = 0: a
 * different state at the injection than shrinking there. */
static void test_shrink_from_start_differs(void **state)
{
    (void)state;
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 9);
    struct sim_whatif_rec a[3], b[3];
    struct sim_whatif_info info;
    c.replicas = 3;
    c.shrink[0] = 50;
    run_ok(&c, a, &info);
    c.shrink_from_start = true;
    run_ok(&c, b, &info);
    size_t differ = 0;
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(a[k].machines_kept, b[k].machines_kept);
        differ += a[k].r.running_at_inj != b[k].r.running_at_inj;
    }
    assert_true(differ > 0);
}

/* A job larger than every machine is censored (unplaceable); one that cannot start before a
 * short horizon is censored (horizon); both stay among the replicas. */
/* A start time, censored as +inf. */
static double start_or_inf(const struct sim_whatif_rec *r)
{
    return r->r.reason == SIM_INJ_STARTED ? (double)r->r.start_us : HUGE_VAL;
}

/* --order sla-* with --sla-scope (sim_inject.rank). Ranked first of all, the job starts at the
 * first instant a machine gains room that fits one of its tasks: the histories of every rank
 * are the same until then, so no other rank starts it earlier. Ranked first within its
 * priority, a job of the highest priority is ranked first of all, replica for replica. */
static void test_rank_first_starts_no_later(void **state)
{
    (void)state;
    static const struct sim_inject_group BIG = {{0.25, 0.25, 0.001}, 600 * US, 2};
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 0);
    struct sim_whatif_rec arr[8], inp[8], first[8], hi_in[8], hi_first[8];
    struct sim_whatif_info info;
    c.inject.groups = &BIG;
    c.replicas = 8;
    c.shrink[0] = 50;
    run_ok(&c, arr, &info);
    c.inject.rank = SIM_RANK_FIRST_IN_PRIORITY;
    run_ok(&c, inp, &info);
    c.inject.rank = SIM_RANK_FIRST;
    run_ok(&c, first, &info);
    size_t earlier = 0;
    for (size_t k = 0; k < 8; k++) {
        assert_true(start_or_inf(&first[k]) <= start_or_inf(&arr[k]));
        assert_true(start_or_inf(&first[k]) <= start_or_inf(&inp[k]));
        earlier += start_or_inf(&first[k]) < start_or_inf(&arr[k]);
    }
    assert_true(earlier > 0); /* the rank changes something here */
    c.inject.priority = SIM_N_PRIO - 1;
    c.inject.rank = SIM_RANK_FIRST_IN_PRIORITY;
    run_ok(&c, hi_in, &info);
    c.inject.rank = SIM_RANK_FIRST;
    run_ok(&c, hi_first, &info);
    for (size_t k = 0; k < 8; k++)
        assert_same_rec(&hi_in[k], &hi_first[k]);
}

static void test_censoring(void **state)
{
    (void)state;
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 0);
    const struct sim_inject_group big = {{0.9, 0.9, 0.01}, 3600 * US, 200};
    struct sim_whatif_rec recs[4];
    struct sim_whatif_info info;
    double buf[4];
    struct sim_whatif_stats st;
    c.inject.groups = &big;
    c.inject.horizon_us = 120 * US;
    c.replicas = 4;
    c.inject.start_all = true;
    run_ok(&c, recs, &info);
    sim_whatif_level(recs, 4, 1, 0, buf, &st);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.censored, 4);
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(recs[k].r.reason, SIM_INJ_HORIZON);
        assert_int_equal(recs[k].r.start_us, -1);
    }
    assert_true(isinf(st.q[2]));
    /* Past the window's end: trace-end. */
    c.inject.horizon_us = 86400 * US;
    c.at = (struct sim_at){.mode = SIM_AT_FIXED, .at_s = 10000};
    c.replicas = 2;
    run_ok(&c, recs, &info);
    assert_int_equal(recs[0].r.reason, SIM_INJ_TRACE_END);
    /* Larger than every machine (sim_snap_inject's own check; the command refuses such a job
     * file first). */
    const struct sim_inject_group huge = {{2.0, 0.1, 0.01}, 60 * US, 1};
    c.inject.groups = &huge;
    run_ok(&c, recs, &info);
    assert_int_equal(recs[0].r.reason, SIM_INJ_UNPLACEABLE);
}

/* --until-complete: the same start as without, and every task's end at least its duration
 * after it; without it no end. */
static void test_until_complete(void **state)
{
    (void)state;
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 9);
    struct sim_whatif_rec a[5], b[5];
    struct sim_whatif_info info;
    c.resample = true;
    run_ok(&c, a, &info);
    c.inject.until_complete = true;
    run_ok(&c, b, &info);
    size_t done = 0;
    for (size_t k = 0; k < 5; k++) {
        assert_int_equal(a[k].r.end_us, -1);
        assert_int_equal(a[k].r.start_us, b[k].r.start_us);
        assert_int_equal(a[k].r.reason, b[k].r.reason);
        if (b[k].r.end_us >= 0) {
            done++;
            assert_true(b[k].r.end_us >= b[k].r.start_us + SMALL.duration_us);
        }
    }
    assert_true(done > 0);
}

static struct sim_whatif_rec rec_at(int reason, int64_t t_inj_s, double d_s)
{
    struct sim_whatif_rec r;
    memset(&r, 0, sizeof(r));
    r.r.reason = reason;
    r.r.t_inj_us = TS(t_inj_s);
    r.r.start_us = reason == SIM_INJ_STARTED ? r.r.t_inj_us + (int64_t)(d_s * US) : -1;
    return r;
}

static void sla_ok(const char *text, size_t index, double longest_s, struct sim_whatif_sla *s)
{
    struct lt_err err;
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_sla_parse(text, index, s, &err), 0);
    assert_int_equal(sim_whatif_sla_resolve(s, longest_s, &err), 0);
}

static void test_sla_settings_and_rewards(void **state)
{
    (void)state;
    struct sim_whatif_sla a, b, e;
    struct sim_whatif_reward w;
    struct sim_whatif_job job;
    struct lt_err err;
    memset(&job, 0, sizeof(job));
    job.groups[0] = (struct sim_inject_group){{0.5, 0.1, 0}, 1800 * US, 2};
    job.n_groups = 1;
    lt_assert_near(sim_whatif_job_longest_s(&job), 1800, 1e-9);
    sla_ok("bob=by-deadline:pen=-3,d1=1x,d2=2x", 0, 1800, &a); /* d1 30 min, d2 1 h */
    assert_string_equal(a.name, "bob");
    lt_assert_near(a.sla.d1_s, 1800, 1e-9);
    lt_assert_near(a.sla.d2_s, 3600, 1e-9);
    sla_ok("cheap-and-simple:rmin=0,d0=0,k=0.001", 1, 1800, &b);
    assert_string_equal(b.name, "s2");
    /* started at 45 min: a on its slope, 1 - 4 * 900 / 1800 = -1 */
    struct sim_whatif_rec r = rec_at(SIM_INJ_STARTED, 100, 2700);
    sim_whatif_reward(&a.sla, &job, &r, 86400, TS(10000), &w);
    lt_assert_near(w.value, -1.0, 1e-9);
    assert_false(w.censored);
    sim_whatif_reward(&b.sla, &job, &r, 86400, TS(10000), &w);
    lt_assert_near(w.value, exp(-2.7), 1e-9);
    /* censored at the horizon 40 min (a bound: r still falls to 1 h), then at 2 h (exact) */
    r = rec_at(SIM_INJ_HORIZON, 100, 0);
    lt_assert_near(sim_whatif_censor_s(&r, 2400, TS(10000)), 2400, 1e-9);
    sim_whatif_reward(&a.sla, &job, &r, 2400, TS(10000), &w);
    lt_assert_near(w.value, 1 - 4.0 * 600 / 1800, 1e-9);
    assert_true(w.censored && w.bound);
    sim_whatif_reward(&a.sla, &job, &r, 7200, TS(10000), &w);
    lt_assert_near(w.value, -3, 1e-9);
    assert_true(w.censored && !w.bound);
    /* censored at the trace's end: H_eff = end - injection */
    r = rec_at(SIM_INJ_TRACE_END, 100, 0);
    lt_assert_near(sim_whatif_censor_s(&r, 86400, TS(1000)), 900, 1e-9);
    sim_whatif_reward(&b.sla, &job, &r, 86400, TS(1000), &w);
    lt_assert_near(w.value, exp(-0.9), 1e-9);
    assert_true(w.bound);
    r = rec_at(SIM_INJ_UNPLACEABLE, 100, 0);
    assert_true(isinf(sim_whatif_censor_s(&r, 86400, TS(1000))));
    sim_whatif_reward(&a.sla, &job, &r, 86400, TS(1000), &w);
    lt_assert_near(w.value, -3, 1e-9);
    assert_false(w.bound);
    /* example1 off peak (trace second 100 = Sunday 19:01 EDT): 2 x 0.5 cpu x 0.5 h x 1 */
    sla_ok("e=example1:target=10m,peak=4,offpeak=1", 2, 1800, &e);
    r = rec_at(SIM_INJ_STARTED, 100, 60);
    sim_whatif_reward(&e.sla, &job, &r, 86400, TS(10000), &w);
    lt_assert_near(w.value, 0.5, 1e-9);
    r = rec_at(SIM_INJ_STARTED, 100, 601);
    sim_whatif_reward(&e.sla, &job, &r, 86400, TS(10000), &w);
    lt_assert_near(w.value, 0, 1e-12);
    r = rec_at(SIM_INJ_HORIZON, 100, 0); /* censored before the target: at most 4 x 0.5 */
    sim_whatif_reward(&e.sla, &job, &r, 300, TS(10000), &w);
    lt_assert_near(w.value, 2.0, 1e-9);
    assert_true(w.bound);
    /* errors name the flag */
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_sla_parse("x y=by-deadline", 0, &a, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "--sla: 'x y=by-deadline'"));
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_sla_parse("by-deadline:d1=3h,d2=1h", 0, &a, &err), LT_EINVAL);
    assert_true(strncmp(err.text, "--sla: ", 7) == 0);
}

static void test_day_random_needs_two_days(void **state)
{
    (void)state;
    struct sim_replay_config rc = demo_cfg(SIM_PREEMPT_NONE);
    struct sim_whatif_config c = wcfg(&rc, 9);
    struct sim_whatif_rec recs[5];
    struct sim_whatif_info info;
    struct lt_err err;
    c.at = (struct sim_at){.mode = SIM_AT_DAY_RANDOM};
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_run(&c, recs, &info, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "day-random (Method II) needs a trace of 2 whole days"));
    c.at = (struct sim_at){.mode = SIM_AT_FIXED, .at_s = 1e6};
    lt_err_init(&err, NULL);
    assert_int_equal(sim_whatif_run(&c, recs, &info, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "after the trace's window"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_life_split_sums_to_the_duration),
        cmocka_unit_test(test_residual_draw_conditions_on_elapsed),
        cmocka_unit_test(test_censored_replicas_stay_in_the_denominator),
        cmocka_unit_test(test_at_parse),
        cmocka_unit_test_setup_teardown(test_job_file_errors_name_the_file_and_path, dir_setup,
                                        dir_teardown),
        cmocka_unit_test(test_determinism_per_controller_seed),
        cmocka_unit_test(test_streams_are_independent),
        cmocka_unit_test(test_snapshot_equals_a_fresh_prefix),
        cmocka_unit_test(test_shrink_from_start_differs),
        cmocka_unit_test(test_rank_first_starts_no_later),
        cmocka_unit_test(test_censoring),
        cmocka_unit_test(test_day_random_needs_two_days),
        cmocka_unit_test(test_until_complete),
        cmocka_unit_test(test_sla_settings_and_rewards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
