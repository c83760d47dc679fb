/* replay_cmd.c -- `lotus-sim replay` and `lotus-sim tx`: runs of the trace-replay engine in
 * parallel processes, a progress bar, the side-by-side table, the report.
 *
 * Each run (one policy, one machines fraction) is a child process that calls
 * sim_replay_run and writes its files under the output directory; the parent keeps at most
 * -j children alive, draws the progress of all of them from a shared anonymous mapping
 * (struct sim_progress, written by the children only), then reads every summary.json back
 * and prints one table. docs/cli.md describes the commands; docs/simulator.md the semantics.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replay/replay.h"
#include "report/report.h"
#include "sim.h"

#include "cli/opt.h"
#include "cli/policies.h"
#include "cli/outfile.h"
#include "lt_mem.h"
#include "trace/trace.h"

#define MAX_POLICIES 64
#define US           1000000LL

static const double tx_default[] = {20, 40, 60, 80, 83, 85, 87, 90, 93, 95, 100};
#define N_TX_DEFAULT (sizeof(tx_default) / sizeof(tx_default[0]))
#define MAX_X        32

struct opts {
    const char *trace;
    const char *out;
    const char *policy_list; /* --policy, split into policy[] */
    const char *x_list;      /* --x, split into x[] */
    const char *fraction;    /* --machines-fraction, parsed into machines_pct */
    const char *init_state;  /* --initial-state, parsed into initial_state */
    enum sim_initial_state initial_state;
    const char *preempt_s; /* --preempt, parsed into preempt */
    const char *evict_s;   /* --evict, parsed into evict */
    enum sim_preempt preempt;
    const struct lt_evict_policy *evict;
    const struct lt_policy *policy[MAX_POLICIES];
    size_t n_policy;
    uint64_t jobs;
    uint64_t seed;
    double machines_pct;
    uint64_t until_s;    /* --until: trace seconds; UINT64_MAX when not given */
    uint64_t interval_s; /* --interval */
    int64_t until_us;
    int64_t interval_us;
    bool skip_bad_lines;
    bool no_task_csv, no_report;
    bool task_csv;
    bool quiet;
    bool list_policies;
    bool report;
    bool force;
    double x[MAX_X];
    size_t n_x;
    uint64_t cache_mb;
};

struct run {
    const struct lt_policy *policy;
    double pct;
    char dir[4096];   /* the result directory */
    char stage[4200]; /* where the run writes: dir + ".tmp", swapped in on success */
    pid_t pid;
    int status; /* 0 ok, else failed */
    bool done;
    struct timespec t0;
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    {                                                                                              \
        name, kind, offsetof(struct opts, field), arg, help, def                                   \
    }

/* Rows both commands have, then each one's own. */
#define COMMON_OPTS                                                                                \
    OPT("--trace", SIM_OPT_STR, trace, "DIR", "the trace directory (required)", NULL),             \
        OPT("--policy", SIM_OPT_STR, policy_list, "LIST",                                          \
            "comma-separated policies (required): placement\npolicies and lotes; see "             \
            "--list-policies",                                                                     \
            NULL),                                                                                 \
        OPT("--list-policies", SIM_OPT_FLAG, list_policies, NULL,                                  \
            "print the names --policy takes, one per line,\nand exit", NULL),                      \
        OPT("-j", SIM_OPT_U64, jobs, "N", "runs in parallel processes, 1..256", "2"),              \
        OPT("--until", SIM_OPT_SECS, until_s, "DURATION",                                          \
            "replay trace time [0, DURATION] only (seconds,\nor 90s, 5m, 1h, 2d)",                 \
            "the whole trace"),                                                                    \
        OPT("--seed", SIM_OPT_U64, seed, "N", "seed of the policies and the machine subset", "1"), \
        OPT("--initial-state", SIM_OPT_STR, init_state, "trace|repack",                            \
            "trace: tasks running at t = 0 start on their\ntrace machine (even beyond its "        \
            "capacity);\nrepack: they go through the policy",                                      \
            "trace"),                                                                              \
        OPT("--preempt", SIM_OPT_STR, preempt_s, "none|bands|priority",                            \
            "bands: a task evicts lower bands (free 0-1 <\nbatch 2-8 < production 9-11); "         \
            "priority:\nlower priorities, production never production",                            \
            "none"),                                                                               \
        OPT("--evict", SIM_OPT_STR, evict_s, "mrs|lrs|rnd",                                        \
            "victims' order with --preempt: most or least\nrecently started first, random",        \
            "mrs"),                                                                                \
        OPT("--interval", SIM_OPT_SECS, interval_s, "DURATION",                                    \
            "time-series sampling interval (seconds, or 5m ...)", "300"),                          \
        OPT("--skip-bad-lines", SIM_OPT_FLAG, skip_bad_lines, NULL,                                \
            "count malformed trace lines instead of stopping", NULL),                              \
        OPT("--cache-mb", SIM_OPT_U64, cache_mb, "N",                                              \
            "memory per run for trace rows kept between the two\npasses; beyond it the parts are " \
            "read twice",                                                                          \
            "1024"),                                                                               \
        OPT("--force", SIM_OPT_FLAG, force, NULL,                                                  \
            "replace earlier results in --out (each only when\nits new run completes)", NULL),     \
        OPT("--quiet", SIM_OPT_FLAG, quiet, NULL, "no progress bar (drawn only on a terminal)",    \
            NULL)

static const struct sim_opt replay_opts[] = {
    COMMON_OPTS,
    OPT("--out", SIM_OPT_STR, out, "DIR", "output directory", "out/replay"),
    OPT("--machines-fraction", SIM_OPT_STR, fraction, "X", "keep a random X% of the machines",
        "100"),
    OPT("--no-task-csv", SIM_OPT_FLAG, no_task_csv, NULL, "do not write tasks.csv", NULL),
    OPT("--no-report", SIM_OPT_FLAG, no_report, NULL, "do not write report.html", NULL),
};

static const struct sim_opt tx_opts[] = {
    COMMON_OPTS,
    OPT("--out", SIM_OPT_STR, out, "DIR", "output directory", "out/tx"),
    OPT("--x", SIM_OPT_STR, x_list, "LIST", "machine percentages",
        "20,40,60,80,83,85,87,90,93,95,100"),
};

static const char footer[] =
    "Each run writes into <dir>.tmp and replaces its result directory only when it completes;\n"
    "an existing result is refused without --force. SIGINT or SIGTERM stops the runs, removes\n"
    "their unfinished files and says which results were kept. Exit status: 0 done, 1 a run or\n"
    "an input failed, 2 usage error, 128+N killed by signal N.";

static const struct sim_cmd_spec replay_spec = {
    "replay",
    "--trace DIR --policy P[,P...] [options]",
    "Replays the Google 2011 trace under DIR (machine_events/, task_events/,\n"
    "job_events/; .csv.gz parts as published) through each placement policy and\n"
    "prints the policies side by side (docs/simulator.md). Outputs:\n"
    "DIR/<policy>/{summary.json,timeseries.csv,waiting.csv,tasks.csv} and DIR/report.html.",
    "lotus-sim replay --trace tests/data/clusterdata-2011-2-demo --policy firstfit,sos10 -j 2",
    footer,
    replay_opts,
    sizeof(replay_opts) / sizeof(replay_opts[0])};

static const struct sim_cmd_spec tx_spec = {
    "tx",
    "--trace DIR --policy P[,P...] [options]",
    "Runs the replay with a random x% of the machines for every x of --x and\n"
    "prints T(x), the tasks completed, per policy (docs/simulator.md). Outputs:\n"
    "DIR/tx.csv and DIR/x<x>/<policy>/.",
    "lotus-sim tx --trace tests/data/clusterdata-2011-2-demo --policy firstfit --x 50,100",
    footer,
    tx_opts,
    sizeof(tx_opts) / sizeof(tx_opts[0])};

static int parse_pct(const char *flag, const char *s, double *out, struct lt_err *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !(v > 0.0) || v > 100.0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: '%s' is not a percentage in (0, 100]", flag,
                          s);
    *out = v;
    return 0;
}

/* A run's policy name: a placement policy's, or "lotes" (NULL). */
static const char *pol_name(const struct lt_policy *p)
{
    return p != NULL ? lt_policy_name(p) : SIM_POLICY_LOTES;
}

static int parse_policies(const char *list, struct opts *o, struct lt_err *err)
{
    char buf[1024], *items[MAX_POLICIES];
    size_t n;
    int rc = sim_list_split("--policy", list, buf, sizeof(buf), items, MAX_POLICIES, &n, err);

    for (size_t k = 0; k < n && rc == 0; k++) {
        /* "lotes" is LoTES's dispatcher (a NULL policy), every other name a placement policy */
        const struct lt_policy *p;
        if ((rc = sim_policy_find(items[k], true, &p, err)) < 0)
            return rc;
        o->policy[o->n_policy++] = p;
    }
    return rc;
}

static int parse_x(const char *list, struct opts *o, struct lt_err *err)
{
    char buf[1024], *items[MAX_X];
    size_t n;
    int rc = sim_list_split("--x", list, buf, sizeof(buf), items, MAX_X, &n, err);

    o->n_x = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        if ((rc = parse_pct("--x", items[k], &o->x[o->n_x], err)) < 0)
            return rc;
        for (size_t j = 0; j < o->n_x; j++) /* "50,50.0": one directory x50 */
            if (!(o->x[j] < o->x[o->n_x]) && !(o->x[j] > o->x[o->n_x]))
                return lt_err_set(err, LT_EINVAL, 0, 0, "--x '%.60s': %g is given twice", list,
                                  o->x[j]);
        o->n_x++;
    }
    return rc;
}

static void opts_default(struct opts *o, bool tx)
{
    memset(o, 0, sizeof(*o));
    o->jobs = 2;
    o->seed = 1;
    o->machines_pct = 100.0;
    o->initial_state = SIM_INIT_TRACE;
    o->until_s = UINT64_MAX;
    o->interval_s = 300;
    o->out = tx ? "out/tx" : "out/replay";
    memcpy(o->x, tx_default, sizeof(tx_default));
    o->n_x = N_TX_DEFAULT;
    o->cache_mb = 1024;
}

/* Checks and converts what sim_opt_parse stored. */
static int opts_finish(struct opts *o, bool tx, struct lt_err *err)
{
    int rc = 0;

    o->task_csv = !tx && !o->no_task_csv;
    o->report = !tx && !o->no_report;
    if (o->jobs == 0 || o->jobs > 256)
        return lt_err_set(err, LT_EINVAL, 0, 0, "-j: '%" PRIu64 "' is not in 1..256", o->jobs);
    if (o->until_s != UINT64_MAX && o->until_s > (uint64_t)(INT64_MAX / US) - 600)
        return lt_err_set(err, LT_ERANGE, 0, 0, "--until: '%" PRIu64 "' is too large", o->until_s);
    o->until_us = o->until_s == UINT64_MAX ? INT64_MAX : ((int64_t)o->until_s + 600) * US;
    if (o->cache_mb > (UINT64_C(1) << 20))
        return lt_err_set(err, LT_ERANGE, 0, 0, "--cache-mb: '%" PRIu64 "' is too large",
                          o->cache_mb);
    if (o->interval_s == 0 || o->interval_s > 86400 * 365)
        return lt_err_set(err, LT_ERANGE, 0, 0,
                          "--interval: '%" PRIu64 "' is not in 1..31536000 seconds", o->interval_s);
    o->interval_us = (int64_t)o->interval_s * US;
    if (o->fraction != NULL &&
        (rc = parse_pct("--machines-fraction", o->fraction, &o->machines_pct, err)) < 0)
        return rc;
    if (o->init_state != NULL) {
        if (strcmp(o->init_state, "trace") == 0)
            o->initial_state = SIM_INIT_TRACE;
        else if (strcmp(o->init_state, "repack") == 0)
            o->initial_state = SIM_INIT_REPACK;
        else
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--initial-state: '%.60s' is not trace or repack", o->init_state);
    }
    if (o->preempt_s != NULL) {
        if (strcmp(o->preempt_s, "none") == 0)
            o->preempt = SIM_PREEMPT_NONE;
        else if (strcmp(o->preempt_s, "bands") == 0)
            o->preempt = SIM_PREEMPT_BANDS;
        else if (strcmp(o->preempt_s, "priority") == 0)
            o->preempt = SIM_PREEMPT_PRIORITY;
        else
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--preempt: '%.60s' is not none, bands or priority", o->preempt_s);
    }
    if (o->evict_s != NULL && (o->evict = lt_evict_find(o->evict_s, err)) == NULL)
        return LT_EINVAL;
    if (o->x_list != NULL && (rc = parse_x(o->x_list, o, err)) < 0)
        return rc;
    if (o->trace == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --trace");
    if (o->policy_list == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --policy");
    return parse_policies(o->policy_list, o, err);
}

/* Returns 0 to run, 1 after --help or --list-policies, or SIM_EXIT_USAGE + 100 on a usage error
 * (printed). */
static int parse_args(int argc, char **argv, bool tx, struct opts *o)
{
    const struct sim_cmd_spec *spec = tx ? &tx_spec : &replay_spec;
    bool seen[sizeof(replay_opts) / sizeof(replay_opts[0]) + sizeof(tx_opts) / sizeof(tx_opts[0])];
    struct lt_err err;
    int rc;

    lt_err_init(&err, NULL);
    opts_default(o, tx);
    rc = sim_opt_parse(spec, argc, argv, o, seen, &err);
    if (rc == 1)
        return 1;
    if (rc == 0 && o->list_policies && (rc = sim_policy_list_alone(spec, seen, true, &err)) == 0)
        return 1;
    if (rc < 0 || opts_finish(o, tx, &err) < 0)
        return sim_policy_usage_error(spec->name, &err) + 100;
    return 0;
}

/* ---- the trace, checked once before any run ----------------------------------------------- */

/* Opens every part of DIR/table for reading, so that a permission problem names the part. */
static int check_parts_readable(const char *trace, const char *table, struct lt_err *err)
{
    char dir[4200], path[4600];
    struct dirent *de;
    DIR *d;
    int rc = 0;

    snprintf(dir, sizeof(dir), "%s/%s", trace, table);
    if ((d = opendir(dir)) == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", dir, strerror(errno));
    while (rc == 0 && (de = readdir(d)) != NULL) {
        int fd;
        if (strncmp(de->d_name, "part-", 5) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            rc = lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", path, strerror(errno));
        else
            close(fd);
    }
    closedir(d);
    return rc;
}

/* The trace's structure: machine_events/ and task_events/ (job_events/ when present), each
 * with parts part-NNNNN-of-MMMMM numbered without gaps, every part readable. */
static int check_trace(const char *trace, struct lt_err *err)
{
    static const enum tr_table tables[] = {TR_MACHINE_EVENTS, TR_TASK_EVENTS, TR_JOB_EVENTS};
    struct tr_opts topt = {0};
    struct stat st;

    if (stat(trace, &st) != 0 || !S_ISDIR(st.st_mode))
        return lt_err_set(err, LT_EIO, 0, 0, "'%s' is not a directory", trace);
    for (size_t k = 0; k < sizeof(tables) / sizeof(tables[0]); k++) {
        char dir[4200];
        struct tr_reader *r;
        int rc;
        snprintf(dir, sizeof(dir), "%s/%s", trace, tr_table_name(tables[k]));
        if (tables[k] == TR_JOB_EVENTS && !sim_path_exists(dir))
            continue; /* optional: the replay counts jobs when it is there */
        if ((r = tr_open(trace, tables[k], &topt, err)) == NULL)
            return err->code != 0 ? err->code : LT_EIO;
        tr_close(r);
        if ((rc = check_parts_readable(trace, tr_table_name(tables[k]), err)) < 0)
            return rc;
    }
    return 0;
}

/* ---- the process pool and the progress bar ---------------------------------------------- */

static double elapsed(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Fraction of a run done: pass 1 reads every part once (about a third of the work), pass 2
 * again with the simulation. */
static double run_fraction(const volatile struct sim_progress *p)
{
    double f = p->bytes_total ? (double)p->bytes_read / (double)p->bytes_total : 0.0;
    if (f > 1.0)
        f = 1.0;
    switch (p->pass) {
    case 1:
        return 0.3 * f;
    case 2:
        return 0.3 + 0.7 * f;
    case 3:
    case -1:
        return 1.0;
    default:
        return 0.0;
    }
}

static void draw_progress(const struct run *runs, size_t n, const struct sim_progress *prog,
                          const struct timespec *t0, bool final)
{
    double done = 0.0;
    uint64_t rows = 0;
    size_t active = 0;
    int64_t sim = -1, end = -1;
    for (size_t k = 0; k < n; k++) {
        done += run_fraction(&prog[k]);
        if (runs[k].pid > 0 && !runs[k].done) {
            active++;
            rows += prog[k].rows;
            if (prog[k].pass == 2 && (sim < 0 || prog[k].sim_time_us < sim)) {
                sim = prog[k].sim_time_us;
                end = prog[k].end_time_us;
            }
        }
    }
    double t = elapsed(t0);
    double frac = done / (double)n;
    char eta[32] = "--:--";
    if (frac > 0.01 && !final) {
        double left = t / frac - t;
        snprintf(eta, sizeof(eta), "%d:%02d", (int)(left / 60), (int)left % 60);
    }
    char simbuf[64] = "";
    if (sim >= 0 && sim < 600 * US)
        sim = 600 * US; /* t = 0 rows: "before the trace", shown as trace hour 0 */
    if (sim >= 0 && end > 0 && !final)
        snprintf(simbuf, sizeof(simbuf), " | trace %.2f/%.2f h", (double)(sim - 600 * US) / 3.6e9,
                 (double)(end - 600 * US) / 3.6e9);
    char bar[SIM_BAR_WIDTH + 1];
    sim_bar_cells(frac, bar);
    if (final)
        fprintf(stderr, "\r[%s] %3.0f%% %zu runs done in %.1f s%40s\n", bar, frac * 100.0, n, t,
                "");
    else
        fprintf(stderr, "\r[%s] %3.0f%% runs %zu active%s | %.2f M rows/s | ETA %s   ", bar,
                frac * 100.0, active, simbuf, t > 0 ? (double)rows / t / 1e6 : 0.0, eta);
    fflush(stderr);
}

static int child_run(const struct opts *o, struct run *r, struct sim_progress *prog, bool bar)
{
    struct lt_err err;
    lt_err_init(&err, o->trace);
    struct sim_replay_result *res = lt_malloc(sizeof(*res));
    if (!res) {
        fprintf(stderr, "lotus-sim: %s: out of memory\n", pol_name(r->policy));
        return SIM_EXIT_INPUT;
    }
    struct lt_lotes_class cls[LT_LOTES_TABLE3_CLASSES];
    struct sim_replay_config cfg = {.trace_dir = o->trace,
                                    .policy = r->policy,
                                    .lotes_classes = r->policy == NULL ? cls : NULL,
                                    .n_lotes_classes =
                                        r->policy == NULL ? LT_LOTES_TABLE3_CLASSES : 0,
                                    .seed = o->seed,
                                    .machines_pct = r->pct,
                                    .initial_state = o->initial_state,
                                    .preempt = o->preempt,
                                    .evict = o->evict,
                                    .until_us = o->until_us,
                                    .interval_us = o->interval_us,
                                    .skip_bad_lines = o->skip_bad_lines,
                                    .out_dir = r->stage,
                                    .task_csv = o->task_csv,
                                    .cache_bytes = (size_t)o->cache_mb << 20,
                                    .progress = prog};
    lt_lotes_table3_normalised(cls); /* Tran & Beck's classes in the trace's units */
    /* Test hook (docs/cli.md): a run that fails on demand, for the "one failed policy"
     * behaviour; the run writes part of its files first, as a real failure would. */
    const char *fail = getenv("LOTUS_SIM_TEST_FAIL");
    bool fail_here = fail != NULL && strcmp(fail, pol_name(r->policy)) == 0;
    if (fail_here)
        cfg.until_us = 3600 * US;
    int rc = sim_replay_run(&cfg, res, &err);
    if (rc == 0 && fail_here) {
        lt_err_set_source(&err, NULL);
        rc = lt_err_set(&err, LT_EIO, 0, 0, "failure injected by LOTUS_SIM_TEST_FAIL");
    }
    lt_free(res);
    if (rc < 0) {
        if (bar)
            fputs("\r\033[K", stderr); /* the progress bar's line */
        sim_err_print_ctx(pol_name(r->policy), &err);
        return SIM_EXIT_INPUT;
    }
    return SIM_EXIT_OK;
}

/* A run that ended: its staged result replaces the earlier one if it succeeded, else the
 * staging directory goes and the earlier result stays. */
static void run_finished(struct run *r, int status)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    r->done = true;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    if (r->status == 0 && sim_stage_commit(r->stage, r->dir, &err) < 0) {
        sim_err_print(&err);
        r->status = 1;
    }
    if (r->status != 0 && sim_remove_tree(r->stage, &err) < 0)
        sim_err_print(&err);
    sim_out_forget(r->stage);
}

/* Starts run k in a child process; false if fork failed (the run is marked failed). */
static bool run_start(const struct opts *o, struct run *runs, size_t k, struct sim_progress *prog,
                      bool bar)
{
    struct run *r = &runs[k];
    struct lt_err err;

    lt_err_init(&err, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    if (sim_stage_open(r->dir, r->stage, sizeof(r->stage), &err) < 0) {
        sim_err_print(&err);
        r->done = true;
        r->status = 1;
        return false;
    }
    sim_out_track(r->stage);
    r->pid = fork();
    if (r->pid < 0) {
        fprintf(stderr, "lotus-sim: fork: %s\n", strerror(errno));
        r->done = true;
        r->status = 1;
        sim_remove_tree(r->stage, &err);
        return false;
    }
    if (r->pid == 0) {
        sim_out_signals(SIM_SIG_QUIET);
        int st = child_run(o, r, &prog[k], bar);
        fflush(stderr);
        _exit(st);
    }
    return true;
}

/* Prints " (none)" or ": a, b" for the runs whose state is want (0 kept, 1 stopped, 2 not
 * started). */
static void list_runs(const struct run *runs, size_t n, int want)
{
    const char *sep = ": ";

    for (size_t k = 0; k < n; k++) {
        int state = runs[k].done && runs[k].status == 0 ? 0 : runs[k].pid > 0 ? 1 : 2;
        if (state == want) {
            fprintf(stderr, "%s%s", sep, runs[k].dir);
            sep = ", ";
        }
    }
    if (sep[0] == ':')
        fprintf(stderr, ": none");
    fprintf(stderr, "\n");
}

/* After SIGINT or SIGTERM: stops the children, removes every unfinished run's staging
 * directory and says what was kept. Returns the exit status 128 + sig. */
static int interrupted(struct run *runs, size_t n, int sig)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    for (size_t k = 0; k < n; k++)
        if (runs[k].pid > 0 && !runs[k].done)
            kill(runs[k].pid, SIGTERM);
    for (size_t k = 0; k < n; k++) {
        if (runs[k].pid > 0 && !runs[k].done) {
            while (waitpid(runs[k].pid, NULL, 0) < 0 && errno == EINTR)
                ;
            runs[k].status = 128 + sig;
            if (sim_remove_tree(runs[k].stage, &err) < 0)
                sim_err_print(&err);
        }
    }
    fprintf(stderr, "\nlotus-sim: %s; removed the unfinished runs' files\n",
            sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
    fprintf(stderr, "lotus-sim: kept (complete)");
    list_runs(runs, n, 0);
    fprintf(stderr, "lotus-sim: not kept (stopped; an earlier result, if any, is unchanged)");
    list_runs(runs, n, 1);
    fprintf(stderr, "lotus-sim: not started");
    list_runs(runs, n, 2);
    return 128 + sig;
}

/* Runs every run, at most o->jobs at a time. Returns the number that failed, or -(128 + sig)
 * when a signal stopped them (the staging directories removed, the summary printed). */
static long run_all(const struct opts *o, struct run *runs, size_t n)
{
    struct sim_progress *prog =
        mmap(NULL, n * sizeof(*prog), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    bool bar = !o->quiet && isatty(STDERR_FILENO);
    size_t next = 0, running = 0;
    long failed = 0;
    struct timespec t0;

    if (prog == MAP_FAILED) {
        fprintf(stderr, "lotus-sim: cannot map progress memory: %s\n", strerror(errno));
        return (long)n;
    }
    memset(prog, 0, n * sizeof(*prog));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(stdout);
    fflush(stderr);
    sim_out_signals(SIM_SIG_FLAG);
    while ((next < n || running > 0) && !sim_out_interrupted()) {
        while (next < n && running < o->jobs && !sim_out_interrupted()) {
            if (run_start(o, runs, next, prog, bar))
                running++;
            else
                failed++;
            next++;
        }
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG); /* polled: a signal is seen at once */
        if (pid < 0 && errno != EINTR)
            break;
        if (pid > 0) {
            for (size_t k = 0; k < n; k++) {
                if (runs[k].pid != pid || runs[k].done)
                    continue;
                run_finished(&runs[k], status);
                failed += runs[k].status != 0;
                running--;
            }
            continue;
        }
        if (bar)
            draw_progress(runs, n, prog, &t0, false);
        struct timespec d = {0, (bar ? 200 : 50) * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    if (sim_out_interrupted())
        failed = -interrupted(runs, n, sim_out_interrupted());
    else if (bar)
        draw_progress(runs, n, prog, &t0, true);
    munmap(prog, n * sizeof(*prog));
    return failed;
}

/* ---- the table ------------------------------------------------------------------------ */

static json_t *load_summary(const char *dir)
{
    char path[4200];
    json_error_t je;
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        fprintf(stderr, "lotus-sim: %s:%d: %s\n", path, je.line, je.text);
    return j;
}

static double jnum(json_t *root, const char *a, const char *b, const char *c)
{
    json_t *v = json_object_get(root, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

struct row_def {
    const char *label;
    const char *a, *b, *c;
    double scale;
    int decimals;
};

static const struct row_def table_rows[] = {
    {"tasks submitted", "tasks", "submitted", NULL, 1, 0},
    {"tasks completed (T)", "tasks", "completed", NULL, 1, 0},
    {"jobs completed", "jobs", "completed", NULL, 1, 0},
    {"tasks failed", "tasks", "failed", NULL, 1, 0},
    {"tasks killed", "tasks", "killed", NULL, 1, 0},
    {"running at end", "tasks", "running_at_end", NULL, 1, 0},
    {"queued at end", "tasks", "queued_at_end", NULL, 1, 0},
    {"unplaceable", "tasks", "unplaceable", NULL, 1, 0},
    {"flow time (h)", "metrics", "flow_time_s", NULL, 1.0 / 3600, 1},
    {"useful work (h)", "metrics", "useful_work_s", NULL, 1.0 / 3600, 1},
    {"wasted work (h)", "metrics", "wasted_work_s", NULL, 1.0 / 3600, 1},
    {"requeues", "metrics", "requeues", NULL, 1, 0},
    {"queue mean", "metrics", "queue_mean", NULL, 1, 1},
    {"queue max", "metrics", "queue_max", NULL, 1, 0},
    {"util cpu mean", "metrics", "utilisation_mean", "cpu", 1, 3},
    {"util mem mean", "metrics", "utilisation_mean", "mem", 1, 3},
    {"frag 10% mean", "metrics", "fragmentation_mean", "10", 1, 1},
    {"unused machines mean", "metrics", "unused_machines_mean", NULL, 1, 1},
};

static void print_table(json_t **sum, const struct run *runs, size_t n)
{
    printf("%-24s", "");
    for (size_t k = 0; k < n; k++)
        printf(" %12s", pol_name(runs[k].policy));
    printf("\n");
    for (size_t r = 0; r < sizeof(table_rows) / sizeof(table_rows[0]); r++) {
        const struct row_def *d = &table_rows[r];
        printf("%-24s", d->label);
        for (size_t k = 0; k < n; k++) {
            char cell[64];
            double v = jnum(sum[k], d->a, d->b, d->c);
            if (isnan(v))
                snprintf(cell, sizeof(cell), "-");
            else
                snprintf(cell, sizeof(cell), "%.*f", d->decimals, v * d->scale);
            printf(" %12s", cell);
        }
        printf("\n");
    }
    for (int p = SIM_N_PRIO - 1; p >= 0; p--) {
        char key[8];
        snprintf(key, sizeof(key), "%d", p);
        bool any = false;
        for (size_t k = 0; k < n; k++)
            any |= json_object_get(
                       json_object_get(json_object_get(sum[k], "metrics"), "waiting_by_priority"),
                       key) != NULL;
        if (!any)
            continue;
        static const char *qs[] = {"p50_s", "p90_s", "p99_s"};
        for (int q = 0; q < 3; q++) {
            char label[40];
            snprintf(label, sizeof(label), "wait %s prio %d", qs[q], p);
            label[8] = label[7] == '_' ? ' ' : label[8];
            printf("%-24s", label);
            for (size_t k = 0; k < n; k++) {
                json_t *w = json_object_get(
                    json_object_get(json_object_get(sum[k], "metrics"), "waiting_by_priority"),
                    key);
                json_t *v = json_object_get(w, qs[q]);
                char cell[64];
                if (json_is_number(v))
                    snprintf(cell, sizeof(cell), "%.1f", json_number_value(v));
                else
                    snprintf(cell, sizeof(cell), "-");
                printf(" %12s", cell);
            }
            printf("\n");
        }
    }
}

/* ---- commands ----------------------------------------------------------------------------- */

/* The runs (policy x x), their result directories; an existing one is refused without
 * --force. Returns NULL after printing the error. */
static struct run *runs_make(const struct opts *o, bool tx, size_t *n_out)
{
    size_t n_x = tx ? o->n_x : 1, n = o->n_policy * n_x;
    struct run *runs = lt_calloc(n, sizeof(*runs));
    const char **dirs = lt_calloc(n, sizeof(*dirs));
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (!runs || !dirs) {
        fprintf(stderr, "lotus-sim: out of memory\n");
        lt_free(runs);
        lt_free(dirs);
        return NULL;
    }
    for (size_t xi = 0; xi < n_x; xi++) {
        for (size_t k = 0; k < o->n_policy; k++) {
            struct run *r = &runs[xi * o->n_policy + k];
            r->policy = o->policy[k];
            r->pct = tx ? o->x[xi] : o->machines_pct;
            if (tx)
                snprintf(r->dir, sizeof(r->dir), "%s/x%g/%s", o->out, r->pct, pol_name(r->policy));
            else
                snprintf(r->dir, sizeof(r->dir), "%s/%s", o->out, pol_name(r->policy));
            dirs[xi * o->n_policy + k] = r->dir;
        }
    }
    if (sim_out_refuse_existing(dirs, n, o->force, &err) < 0 || sim_make_dirs(o->out, &err) < 0) {
        sim_err_print(&err);
        lt_free(runs);
        runs = NULL;
    }
    lt_free(dirs);
    *n_out = n;
    return runs;
}

/* Loads the summary of every run that succeeded (sum[k] NULL for the others); false when one
 * of them cannot be read (printed). */
static bool summaries_load(const struct run *runs, size_t n, json_t **sum)
{
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        sum[k] = runs[k].status == 0 ? load_summary(runs[k].dir) : NULL;
        ok = ok && (runs[k].status != 0 || sum[k] != NULL);
    }
    return ok;
}

/* --until past the end of the trace: the whole trace was replayed. */
static void warn_until(const struct opts *o, json_t **sum, size_t n)
{
    for (size_t k = 0; k < n && o->until_s != UINT64_MAX; k++) {
        double end = jnum(sum[k], "run", "window_end_s", NULL);
        if (sum[k] != NULL && end < (double)o->until_s) {
            fprintf(stderr,
                    "lotus-sim: warning: --until %" PRIu64 " is past the trace's end (%.0f s): "
                    "the whole trace was replayed\n",
                    o->until_s, end);
            return;
        }
    }
}

/* replay: the table of the runs that succeeded, the report, the outputs line. */
static int replay_results(const struct opts *o, const struct run *runs, json_t **sum, size_t n)
{
    const char *names[MAX_POLICIES];
    json_t *ok_sum[MAX_POLICIES];
    struct run ok_runs[MAX_POLICIES];
    char title[512];
    struct lt_err err;
    size_t m = 0;

    lt_err_init(&err, NULL);
    for (size_t k = 0; k < n; k++) {
        if (sum[k] == NULL)
            continue;
        ok_runs[m] = runs[k];
        ok_sum[m] = sum[k];
        names[m++] = pol_name(runs[k].policy);
    }
    if (m == 0)
        return SIM_EXIT_INPUT;
    print_table(ok_sum, ok_runs, m);
    if (o->report) {
        snprintf(title, sizeof(title), "lotus-sim replay of %s", o->trace);
        if (sim_report_write(o->out, names, m, title, &err) < 0) {
            sim_err_print(&err);
            return SIM_EXIT_INPUT;
        }
        printf("\nreport: %s/report.html\n", o->out);
        if (!sim_report_has_gnuplot())
            fprintf(stderr, "lotus-sim: warning: gnuplot is not on PATH; the report "
                            "has no plots (install gnuplot-nox)\n");
    }
    printf("outputs: %s/<policy>/{summary.json,timeseries.csv,waiting.csv%s}\n", o->out,
           o->task_csv ? ",tasks.csv" : "");
    return SIM_EXIT_OK;
}

/* tx: T(x), tasks and jobs completed per x (rows) and policy (columns); tx.csv holds the same
 * in long form: x,policy,tasks_completed,jobs_completed ("-" cells: the run failed). */
static int tx_results(const struct opts *o, json_t **sum)
{
    static const char *what[2] = {"tasks", "jobs"};
    char path[4200], *tmp = NULL;
    struct lt_err err;
    FILE *f;
    int rc = -1;

    for (int w = 0; w < 2; w++) {
        printf("%sT(x): %s completed with x%% of the machines\n%-8s", w ? "\n" : "", what[w], "x");
        for (size_t k = 0; k < o->n_policy; k++)
            printf(" %12s", pol_name(o->policy[k]));
        printf("\n");
        for (size_t xi = 0; xi < o->n_x; xi++) {
            printf("%-8g", o->x[xi]);
            for (size_t k = 0; k < o->n_policy; k++) {
                double v = jnum(sum[xi * o->n_policy + k], what[w], "completed", NULL);
                if (isnan(v))
                    printf(" %12s", "-"); /* the run failed */
                else
                    printf(" %12.0f", v);
            }
            printf("\n");
        }
    }
    lt_err_init(&err, NULL);
    snprintf(path, sizeof(path), "%s/tx.csv", o->out);
    if ((f = sim_tmp_open(path, &tmp, &err)) != NULL) {
        fprintf(f, "x,policy,tasks_completed,jobs_completed\n");
        for (size_t xi = 0; xi < o->n_x; xi++)
            for (size_t k = 0; k < o->n_policy; k++)
                fprintf(f, "%g,%s,%.0f,%.0f\n", o->x[xi], pol_name(o->policy[k]),
                        jnum(sum[xi * o->n_policy + k], "tasks", "completed", NULL),
                        jnum(sum[xi * o->n_policy + k], "jobs", "completed", NULL));
        rc = sim_tmp_commit(f, tmp, path, 0, &err);
    }
    if (rc < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    printf("\nT(x) table: %s; runs: %s/x<x>/<policy>/\n", path, o->out);
    return SIM_EXIT_OK;
}

/* The runs that failed, after the results of the others. */
static void report_failed(const struct run *runs, size_t n, long failed)
{
    fprintf(stderr, "lotus-sim: %ld of %zu runs failed:", failed, n);
    for (size_t k = 0; k < n; k++)
        if (runs[k].status != 0)
            fprintf(stderr, " %s%s", runs[k].dir,
                    sim_path_exists(runs[k].dir) ? " (its earlier result kept)" : "");
    fprintf(stderr, "\n");
}

static int replay_main(int argc, char **argv, bool tx)
{
    struct opts o;
    struct lt_err err;
    struct run *runs;
    json_t **sum;
    size_t n;
    long failed;
    int rc = parse_args(argc, argv, tx, &o), status;

    if (rc != 0)
        return rc == 1 ? SIM_EXIT_OK : rc - 100;
    lt_err_init(&err, NULL);
    if (check_trace(o.trace, &err) < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    if ((runs = runs_make(&o, tx, &n)) == NULL)
        return SIM_EXIT_INPUT;
    failed = run_all(&o, runs, n);
    if (failed < 0) {
        lt_free(runs);
        return (int)-failed;
    }
    sum = lt_calloc(n, sizeof(*sum));
    status = sum != NULL && summaries_load(runs, n, sum) ? SIM_EXIT_OK : SIM_EXIT_INPUT;
    if (status == SIM_EXIT_OK && (size_t)failed < n) {
        warn_until(&o, sum, n);
        status = tx ? tx_results(&o, sum) : replay_results(&o, runs, sum, n);
    }
    if (failed > 0) {
        report_failed(runs, n, failed);
        status = SIM_EXIT_INPUT;
    }
    for (size_t k = 0; sum != NULL && k < n; k++)
        json_decref(sum[k]);
    lt_free(sum);
    lt_free(runs);
    return status;
}

int sim_cmd_replay(int argc, char **argv)
{
    return replay_main(argc, argv, false);
}

int sim_cmd_tx(int argc, char **argv)
{
    return replay_main(argc, argv, true);
}
