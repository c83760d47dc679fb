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
#include <limits.h>
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

#include "replay/ci.h"
#include "replay/compare.h"
#include "replay/replay.h"
#include "report/report.h"
#include "report/tx_report.h"
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
    const char *overcommit_s; /* --overcommit, parsed into overcommit */
    struct sim_overcommit overcommit;
    const char *order_s;    /* --order, parsed into order (has_order false: priority) */
    const char *backfill_s; /* --backfill, parsed into backfill */
    const char *estimate_s; /* --estimate, parsed into estimate_cv */
    struct lt_qorder order;
    bool has_order;
    enum sim_backfill backfill;
    double estimate_cv;
    uint64_t reprioritise_s;       /* --reprioritise */
    const char *annot_path;        /* --sla-annotate (replay), loaded into annot */
    const char *sla_scope;         /* --sla-scope within-priority|sla-first */
    const struct sim_annot *annot; /* annot_store when --sla-annotate, else NULL */
    struct sim_annot annot_store;
    bool sla_first;
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
    bool compare; /* tx --compare: the comparison tables (compare.h) */
    double x[MAX_X];
    size_t n_x;
    uint64_t cache_mb;
    uint64_t seeds;         /* tx --seeds: seeds seed .. seed + seeds - 1 per (policy, x) */
    int argc;               /* the command line, for the report's command box */
    char *const *argv;      /* argv[0] is the command name */
    struct sim_shard shard; /* --shard I/N; count 0: the whole run list */
};

struct run {
    const struct lt_policy *policy;
    double pct;
    uint64_t seed;
    char rel[512];    /* the result directory under --out: "<policy>" or "x<x>/<policy>" */
    char dir[4096];   /* the result directory */
    char stage[4200]; /* where the run writes: dir + ".tmp", swapped in on success */
    pid_t pid;
    int status; /* 0 ok, else failed */
    bool done;
    struct timespec t0;
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct opts, name, kind, field, arg, help, def)

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
        OPT("--preempt", SIM_OPT_STR, preempt_s, "none|bands|priority|prod",                       \
            "bands: a task evicts lower bands (free 0-1 <\nbatch 2-8 < production 9-11); "         \
            "priority:\nlower priorities, production never production;\nprod: only production "    \
            "evicts, lower bands",                                                                 \
            "none"),                                                                               \
        OPT("--evict", SIM_OPT_STR, evict_s, "mrs|lrs|rnd",                                        \
            "victims' order with --preempt: most or least\nrecently started first, random",        \
            "mrs"),                                                                                \
        OPT("--overcommit", SIM_OPT_STR, overcommit_s, "LIST",                                     \
            "[BAND.]RES=F,...: a task of BAND (free, batch,\nprod; none: free and batch) is "      \
            "accounted as\nits request of RES (cpu, mem, disk) / F",                               \
            "none"),                                                                               \
        OPT("--order", SIM_OPT_STR, order_s, "NAME",                                               \
            "queue order: priority, fcfs, sjf, ljf, largest,\nsmallest, composite:A,B,G "          \
            "(docs/queue.md)",                                                                     \
            "priority"),                                                                           \
        OPT("--backfill", SIM_OPT_STR, backfill_s, "greedy|none|easy",                             \
            "greedy: every queued task that fits starts;\nnone: the first blocks the rest; "       \
            "easy: it\nholds a reservation",                                                       \
            "greedy"),                                                                             \
        OPT("--estimate", SIM_OPT_STR, estimate_s, "oracle|noisy:CV",                              \
            "run times the queue order and EASY use: the\ntrace's, or times a lognormal factor "   \
            "(mean 1)",                                                                            \
            "oracle"),                                                                             \
        OPT("--reprioritise", SIM_OPT_SECS, reprioritise_s, "DURATION",                            \
            "composite orders with a wait exponent: re-key\nat most this often (0: every "         \
            "dispatch)",                                                                           \
            "0"),                                                                                  \
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
            NULL),                                                                                 \
        OPT("--shard", SIM_OPT_SHARD, shard, "I/N",                                                \
            "run only part I of N of the run list (run k when\nk mod N = I) and write "            \
            "DIR/shard-I-of-N.json;\n'lotus-sim merge DIR' joins the N parts",                     \
            NULL)

static const struct sim_opt replay_opts[] = {
    COMMON_OPTS,
    OPT("--out", SIM_OPT_STR, out, "DIR", "output directory", "out/replay"),
    OPT("--machines-fraction", SIM_OPT_STR, fraction, "X", "keep a random X% of the machines",
        "100"),
    OPT("--no-task-csv", SIM_OPT_FLAG, no_task_csv, NULL, "do not write tasks.csv", NULL),
    OPT("--no-report", SIM_OPT_FLAG, no_report, NULL, "do not write report.html", NULL),
    OPT("--sla-annotate", SIM_OPT_STR, annot_path, "FILE",
        "give the trace's tasks SLAs by band, priority and\nclass (docs/simulator.md \"SLA "
        "annotation\") and\nreport their rewards; needed by --order sla-*",
        NULL),
    OPT("--sla-scope", SIM_OPT_STR, sla_scope, "within-priority|sla-first",
        "SLA orders: tasks with an SLA first within their\npriority, or before all others",
        "within-priority"),
};

static const struct sim_opt tx_opts[] = {
    COMMON_OPTS,
    OPT("--out", SIM_OPT_STR, out, "DIR", "output directory", "out/tx"),
    OPT("--x", SIM_OPT_STR, x_list, "LIST", "machine percentages",
        "20,40,60,80,83,85,87,90,93,95,100"),
    OPT("--seeds", SIM_OPT_U64, seeds, "N",
        "run every (policy, x) with seeds --seed .. --seed+N-1\nand print mean +- 95 % CI", "1"),
    OPT("--compare", SIM_OPT_FLAG, compare, NULL,
        "print Stein et al.'s tables (times best, times >= 99 %\nof best) beside the slides' and "
        "write\nDIR/compare.csv, DIR/compare.json",
        NULL),
    OPT("--no-report", SIM_OPT_FLAG, no_report, NULL, "do not write report.html", NULL),
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
    "DIR/tx.csv, DIR/report.html and DIR/x<x>/<policy>/.",
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
    o->seeds = 1;
    sim_overcommit_none(&o->overcommit);
}

/* --order, --backfill, --estimate, --reprioritise (docs/simulator.md, "Queue orders and
 * backfill"). */
static int parse_queue(struct opts *o, struct lt_err *err)
{
    if (o->order_s != NULL && strcmp(o->order_s, "priority") != 0) {
        struct lt_err e2;
        lt_err_init(&e2, NULL);
        if (lt_qorder_find(o->order_s, &o->order, &e2) < 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "--order: %s%s", e2.text,
                              e2.code == LT_ENOTFOUND ? "; or priority" : "");
        if (lt_qorder_uses_sla(&o->order) && o->annot_path == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--order %s: the trace's tasks carry no SLA unless --sla-annotate "
                              "FILE gives them one (docs/simulator.md \"SLA annotation\")",
                              o->order_s);
        o->has_order = true;
    }
    if (o->sla_scope != NULL && strcmp(o->sla_scope, "within-priority") != 0 &&
        strcmp(o->sla_scope, "sla-first") != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--sla-scope: '%.40s' is not within-priority or sla-first", o->sla_scope);
    o->sla_first = o->sla_scope != NULL && strcmp(o->sla_scope, "sla-first") == 0;
    if (o->backfill_s != NULL) {
        if (strcmp(o->backfill_s, "greedy") == 0)
            o->backfill = SIM_BACKFILL_GREEDY;
        else if (strcmp(o->backfill_s, "none") == 0)
            o->backfill = SIM_BACKFILL_NONE;
        else if (strcmp(o->backfill_s, "easy") == 0)
            o->backfill = SIM_BACKFILL_EASY;
        else
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--backfill: '%.60s' is not greedy, none or easy", o->backfill_s);
    }
    if (o->estimate_s != NULL && strcmp(o->estimate_s, "oracle") != 0) {
        char *end = NULL;
        const char *v = strncmp(o->estimate_s, "noisy:", 6) == 0 ? o->estimate_s + 6 : NULL;
        double cv = v != NULL && *v != '\0' ? strtod(v, &end) : -1.0;
        if (v == NULL || end == NULL || *end != '\0' || !(cv > 0.0) || cv > 100.0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--estimate: '%.60s' is not oracle or noisy:CV with 0 < CV <= 100",
                              o->estimate_s);
        o->estimate_cv = cv;
    }
    if (o->reprioritise_s > 86400 * 365)
        return lt_err_set(err, LT_ERANGE, 0, 0, "--reprioritise: '%" PRIu64 "' is too large",
                          o->reprioritise_s);
    if ((o->has_order || o->backfill != SIM_BACKFILL_GREEDY) && o->preempt != SIM_PREEMPT_NONE)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--preempt: not supported with --order or --backfill other than "
                          "priority and greedy");
    return 0;
}

/* Checks and converts what sim_opt_parse stored. */
static int opts_finish(struct opts *o, bool tx, struct lt_err *err)
{
    int rc = 0;

    o->task_csv = !tx && !o->no_task_csv;
    o->report = !o->no_report;
    if (o->seeds == 0 || o->seeds > 1000)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--seeds: '%" PRIu64 "' is not in 1..1000",
                          o->seeds);
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
    if (o->preempt_s != NULL && sim_preempt_parse("--preempt", o->preempt_s, &o->preempt, err) < 0)
        return err->code;
    if (o->evict_s != NULL && (o->evict = lt_evict_find(o->evict_s, err)) == NULL)
        return LT_EINVAL;
    if (o->overcommit_s != NULL &&
        (rc = sim_overcommit_parse("--overcommit", o->overcommit_s, &o->overcommit, err)) < 0)
        return rc;
    if ((rc = parse_queue(o, err)) < 0)
        return rc;
    if (o->x_list != NULL && (rc = parse_x(o->x_list, o, err)) < 0)
        return rc;
    if (o->trace == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --trace");
    if (o->policy_list == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --policy");
    return parse_policies(o->policy_list, o, err);
}

/* --sla-annotate FILE: reads it (a bad file is a usage error naming the file and the JSON
 * path), and warns when the order does not read the SLAs it gives; --sla-scope without an SLA
 * order does not apply. */
static int sla_annot_open(struct opts *o, bool tx, const bool *seen, struct lt_err *err)
{
    if (tx)
        return 0;
    bool sla_order = o->has_order && lt_qorder_uses_sla(&o->order);
    if (!sla_order)
        sim_opt_warn_unused(&replay_spec, seen, "--sla-scope",
                            "without an SLA order (--order sla-reward|sla-deadline|sla-slope)");
    if (o->annot_path == NULL)
        return 0;
    if (sim_annot_load(o->annot_path, &o->annot_store, err) < 0)
        return err->code;
    o->annot = &o->annot_store;
    if (!sla_order)
        fprintf(stderr,
                "lotus-sim: warning: --order %s does not read the SLAs --sla-annotate gives; "
                "their rewards are still reported\n",
                o->order_s != NULL ? o->order_s : "priority");
    return 0;
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
    if (rc < 0 || opts_finish(o, tx, &err) < 0 || sla_annot_open(o, tx, seen, &err) < 0)
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
                                    .seed = r->seed,
                                    .machines_pct = r->pct,
                                    .initial_state = o->initial_state,
                                    .preempt = o->preempt,
                                    .evict = o->evict,
                                    .overcommit = &o->overcommit,
                                    .order = o->has_order ? &o->order : NULL,
                                    .backfill = o->backfill,
                                    .estimate_cv = o->estimate_cv,
                                    .reprioritise_us = (int64_t)o->reprioritise_s * US,
                                    .annot = o->annot,
                                    .sla_first = o->sla_first,
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
    {"flow time mean (s)", "metrics", "flow_time_mean_s", NULL, 1, 1},
    {"bounded slowdown mean", "metrics", "bounded_slowdown_mean", NULL, 1, 2},
    {"job compl. time mean (s)", "jobs", "completion_time_mean_s", NULL, 1, 1},
    {"job bounded sld mean", "jobs", "bounded_slowdown_mean", NULL, 1, 2},
    {"useful work (h)", "metrics", "useful_work_s", NULL, 1.0 / 3600, 1},
    {"wasted work (h)", "metrics", "wasted_work_s", NULL, 1.0 / 3600, 1},
    {"requeues", "metrics", "requeues", NULL, 1, 0},
    {"queue mean", "metrics", "queue_mean", NULL, 1, 1},
    {"queue max", "metrics", "queue_max", NULL, 1, 0},
    {"util cpu mean", "metrics", "utilisation_mean", "cpu", 1, 3},
    {"util mem mean", "metrics", "utilisation_mean", "mem", 1, 3},
    {"requested cpu mean", "metrics", "requested_mean", "cpu", 1, 3},
    {"requested mem mean", "metrics", "requested_mean", "mem", 1, 3},
    {"frag 10% mean", "metrics", "fragmentation_mean", "10", 1, 1},
    {"unused machines mean", "metrics", "unused_machines_mean", NULL, 1, 1},
};

/* The waiting-time cell of quantile key qkey (…_s) of w: "-" when absent or null, ">=V" when
 * its …_lower_bound flag is true. */
static void wait_cell(char *cell, size_t cap, json_t *w, const char *qkey)
{
    char bkey[40];
    size_t len = strlen(qkey);
    json_t *v = json_object_get(w, qkey);

    snprintf(bkey, sizeof(bkey), "%.*slower_bound", (int)(len > 1 ? len - 1 : 0), qkey);
    if (!json_is_number(v))
        snprintf(cell, cap, "-");
    else
        snprintf(cell, cap, "%s%.1f", json_is_true(json_object_get(w, bkey)) ? ">=" : "",
                 json_number_value(v));
}

/* The waiting rows of priority p: quantiles of the started tasks, the share that never
 * started, quantiles over all tasks (the never started at their censored wait, ">=" where
 * only a lower bound) and Kaplan-Meier's ("-": beyond every wait seen). */
static void print_wait_rows(json_t **sum, size_t n, int p)
{
    static const char *qs[] = {"p50_s",     "p90_s",     "p99_s",    "censored_share", "all_p50_s",
                               "all_p90_s", "all_p99_s", "km_p50_s", "km_p90_s",       "km_p99_s"};
    static const char *lab[] = {"wait p50",     "wait p90",     "wait p99",     "never started %",
                                "wait all p50", "wait all p90", "wait all p99", "wait KM p50",
                                "wait KM p90",  "wait KM p99"};
    json_t *w[MAX_POLICIES * MAX_X];
    char key[8];
    bool any = false;

    snprintf(key, sizeof(key), "%d", p);
    for (size_t k = 0; k < n; k++) {
        w[k] = json_object_get(
            json_object_get(json_object_get(sum[k], "metrics"), "waiting_by_priority"), key);
        any |= w[k] != NULL;
    }
    for (size_t q = 0; any && q < sizeof(qs) / sizeof(qs[0]); q++) {
        char label[40], cell[64];
        bool share = q == 3;
        snprintf(label, sizeof(label), "%s prio %d", lab[q], p);
        /* the first three rows: as before these were added (a table is read by scripts) */
        if (q >= 3 && w[0] != NULL && json_object_get(w[0], qs[q]) == NULL)
            continue;
        printf("%-24s", label);
        for (size_t k = 0; k < n; k++) {
            json_t *v = json_object_get(w[k], qs[q]);
            if (share && json_is_number(v))
                snprintf(cell, sizeof(cell), "%.1f", json_number_value(v) * 100.0);
            else
                wait_cell(cell, sizeof(cell), w[k], qs[q]);
            printf(" %12s", cell);
        }
        printf("\n");
    }
}

/* --sla-annotate: per rule, its tasks' rewards (summary.json's sla_annotation). A mean
 * reward that includes censored upper bounds is printed "<=". */
static void print_sla_rows(json_t **sum, size_t n)
{
    static const char *keys[] = {"tasks",      "started",           "mean_reward",
                                 "p_negative", "p_started_by_knee", "late_wait_mean_s"};
    static const char *lab[] = {"tasks",    "started",   "mean reward",
                                "P(r<0) %", "by knee %", "late wait s"};
    json_t *r0 = json_object_get(json_object_get(sum[0], "sla_annotation"), "rules");
    for (size_t i = 0; i < json_array_size(r0); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(r0, i), "rule"));
        for (size_t q = 0; q < sizeof(keys) / sizeof(keys[0]); q++) {
            char label[64];
            snprintf(label, sizeof(label), "sla %.12s %s", name ? name : "?", lab[q]);
            printf("%-24s", label);
            for (size_t k = 0; k < n; k++) {
                json_t *ru = json_array_get(
                    json_object_get(json_object_get(sum[k], "sla_annotation"), "rules"), i);
                json_t *v = json_object_get(ru, keys[q]);
                char cell[64] = "-";
                if (json_is_integer(v))
                    snprintf(cell, sizeof(cell), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                else if (json_is_number(v) && q == 2)
                    snprintf(cell, sizeof(cell), "%s%.4f",
                             json_is_true(json_object_get(ru, "reward_is_upper_bound")) ? "<=" : "",
                             json_number_value(v));
                else if (json_is_number(v))
                    snprintf(cell, sizeof(cell), "%.1f",
                             json_number_value(v) * (q == 3 || q == 4 ? 100.0 : 1.0));
                printf(" %12s", cell);
            }
            printf("\n");
        }
    }
}

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
    for (int p = SIM_N_PRIO - 1; p >= 0; p--)
        print_wait_rows(sum, n, p);
    print_sla_rows(sum, n);
}

/* ---- commands ----------------------------------------------------------------------------- */

/* Run k of the sweep's list belongs to this process: no --shard, or k mod N = I. */
static bool in_shard(const struct opts *o, size_t k)
{
    return o->shard.count == 0 || k % o->shard.count == o->shard.index;
}

/* "OUT/shard-I-of-N.json" into buf; returns buf. */
static const char *shard_path(const char *out, const struct sim_shard *sh, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/shard-%" PRIu64 "-of-%" PRIu64 ".json", out, sh->index, sh->count);
    return buf;
}

/* The sweep's run list, in the order of the table and tx.csv: x major, policy minor (for
 * replay one x, --machines-fraction). */
static void runs_list(const struct opts *o, bool tx, struct run *runs)
{
    size_t n_x = tx ? o->n_x : 1, n_s = tx ? (size_t)o->seeds : 1;

    /* run (xi, k, si) is runs[(xi * n_policy + k) * n_s + si] */
    for (size_t j = 0; j < n_x * o->n_policy * n_s; j++) {
        struct run *r = &runs[j];
        size_t xi = j / n_s / o->n_policy, k = j / n_s % o->n_policy, si = j % n_s;
        r->policy = o->policy[k];
        r->pct = tx ? o->x[xi] : o->machines_pct;
        r->seed = o->seed + si;
        if (tx && n_s > 1)
            snprintf(r->rel, sizeof(r->rel), "x%g/%s/seed%" PRIu64, r->pct, pol_name(r->policy),
                     r->seed);
        else if (tx)
            snprintf(r->rel, sizeof(r->rel), "x%g/%s", r->pct, pol_name(r->policy));
        else
            snprintf(r->rel, sizeof(r->rel), "%s", pol_name(r->policy));
        snprintf(r->dir, sizeof(r->dir), "%s/%s", o->out, r->rel);
    }
}

/* The runs (policy x x), their result directories; an existing one is refused without
 * --force. Returns NULL after printing the error. */
static struct run *runs_make(const struct opts *o, bool tx, size_t *n_out)
{
    size_t n_x = tx ? o->n_x : 1, n_s = tx ? (size_t)o->seeds : 1, n = o->n_policy * n_x * n_s;
    struct run *runs = lt_calloc(n, sizeof(*runs));
    const char **dirs = lt_calloc(n + 1, sizeof(*dirs));
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (!runs || !dirs) {
        fprintf(stderr, "lotus-sim: out of memory\n");
        lt_free(runs);
        lt_free(dirs);
        return NULL;
    }
    runs_list(o, tx, runs);
    size_t m = 0; /* the results this process writes: its shard's runs, and its shard file */
    for (size_t k = 0; k < n; k++)
        if (in_shard(o, k))
            dirs[m++] = runs[k].dir;
    char shard_file[4200];
    if (o->shard.count > 0)
        dirs[m++] = shard_path(o->out, &o->shard, shard_file, sizeof(shard_file));
    if (sim_out_refuse_existing(dirs, m, o->force, &err) < 0 || sim_make_dirs(o->out, &err) < 0 ||
        (o->shard.count > 0 && unlink(shard_file) != 0 && errno != ENOENT &&
         lt_err_set(&err, LT_EIO, 0, 0, "cannot remove '%s': %s", shard_file, strerror(errno)))) {
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

/* The whole command line, "lotus-sim CMD ARG...", each argument that holds more than
 * [A-Za-z0-9_./=,:%+-] in single quotes (' as '\''), so it can be pasted into a shell; a new
 * string (lt_free) or NULL when out of memory. */
static char *command_line(const struct opts *o)
{
    size_t cap = 16;
    for (int k = 0; k < o->argc; k++)
        cap += 4 * strlen(o->argv[k]) + 3;
    char *s = lt_malloc(cap), *p = s;
    if (s == NULL)
        return NULL;
    p += sprintf(p, "lotus-sim");
    for (int k = 0; k < o->argc; k++) {
        const char *a = o->argv[k];
        bool plain =
            a[0] != '\0' && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_./=,:%+-") == strlen(a);
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", a);
            continue;
        }
        *p++ = '\'';
        for (; *a; a++)
            p += *a == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *a);
        *p++ = '\'';
    }
    *p = '\0';
    return s;
}

/* replay: the table of the runs that succeeded, the report, the outputs line. */
static int replay_results(const struct opts *o, const struct run *runs, json_t **sum, size_t n)
{
    const char *names[MAX_POLICIES];
    json_t *ok_sum[MAX_POLICIES];
    struct run ok_runs[MAX_POLICIES];
    char *title;
    struct lt_err err;
    size_t m = 0;
    int rc;

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
        if ((title = command_line(o)) == NULL) {
            fprintf(stderr, "lotus-sim: out of memory\n");
            return SIM_EXIT_INPUT;
        }
        rc = sim_report_write(o->out, names, m, title, &err);
        lt_free(title);
        if (rc < 0) {
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

static void cell_ci(const struct opts *o, json_t **sum, size_t xi, size_t k, const char *what,
                    double *mean, double *half, size_t *n_ok);

/* tx: DIR/report.html (tx_report.h) from the cells of the sweep and cmp (NULL: no
 * comparison section), and its line on stdout; nothing with --no-report. SIM_EXIT_OK or
 * SIM_EXIT_INPUT (printed). */
static int tx_report_page(const struct opts *o, json_t **sum, const struct sim_cmp_result *cmp)
{
    size_t n = o->n_x * o->n_policy;
    struct sim_tx_cell *tasks = lt_calloc(n, sizeof(*tasks)), *jobs = lt_calloc(n, sizeof(*jobs));
    const char *names[MAX_POLICIES];
    char *title = command_line(o);
    struct lt_err err;
    bool plotted = false;
    int rc = 0;

    lt_err_init(&err, NULL);
    if (!o->report) {
        lt_free(tasks);
        lt_free(jobs);
        lt_free(title);
        return SIM_EXIT_OK;
    }
    if (tasks == NULL || jobs == NULL || title == NULL)
        rc = lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < o->n_policy; k++)
        names[k] = pol_name(o->policy[k]);
    for (size_t j = 0; j < n && rc == 0; j++) {
        cell_ci(o, sum, j / o->n_policy, j % o->n_policy, "tasks", &tasks[j].mean, &tasks[j].half,
                &tasks[j].n_ok);
        cell_ci(o, sum, j / o->n_policy, j % o->n_policy, "jobs", &jobs[j].mean, &jobs[j].half,
                &jobs[j].n_ok);
    }
    if (rc == 0) {
        struct sim_tx_table t = {o->x,     o->n_x, names, o->n_policy, o->seed,
                                 o->seeds, tasks,  jobs,  cmp};
        rc = sim_tx_report_write(o->out, &t, title, SIM_VERSION, &plotted, &err);
    }
    lt_free(tasks);
    lt_free(jobs);
    lt_free(title);
    if (rc < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    printf("report: %s/report.html\n", o->out);
    if (!plotted && !sim_report_has_gnuplot())
        fprintf(stderr, "lotus-sim: warning: gnuplot is not on PATH; the report "
                        "has no plots (install gnuplot-nox)\n");
    return SIM_EXIT_OK;
}

/* tx --compare: Stein et al.'s tables (compare.h) of the sweep into *res, a case per (x,
 * seed), printed on stdout and written to DIR/compare.csv and DIR/compare.json. names
 * (MAX_POLICIES) receives the policy names, which res borrows. 0, or a negative LT_E* with
 * err set. */
static int tx_compare(const struct opts *o, json_t **sum, const char **names,
                      struct sim_cmp_result *res, struct lt_err *err)
{
    size_t np = o->n_policy, n_s = (size_t)o->seeds, n_case = o->n_x * n_s;
    double *x = lt_calloc(n_case, sizeof(*x));
    double *tasks = lt_calloc(n_case * np, sizeof(*tasks));
    double *useful = lt_calloc(n_case * np, sizeof(*useful));
    int rc = 0;

    if (x == NULL || tasks == NULL || useful == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < np; k++)
        names[k] = pol_name(o->policy[k]);
    /* run (xi, k, si) is sum[(xi * np + k) * n_s + si]; case (xi, si) is xi * n_s + si */
    for (size_t j = 0; j < o->n_x * np * n_s && rc == 0; j++) {
        size_t xi = j / n_s / np, k = j / n_s % np, c = xi * n_s + j % n_s;
        x[c] = o->x[xi];
        tasks[c * np + k] = jnum(sum[j], "tasks", "completed", NULL);
        useful[c * np + k] = jnum(sum[j], "metrics", "useful_work_s", NULL);
    }
    if (rc == 0) {
        struct sim_cmp_input in = {names, np, n_case, x, tasks, useful};
        rc = sim_cmp_compute(&in, res, err);
    }
    if (rc == 0) {
        sim_cmp_print(res, stdout);
        rc = sim_cmp_write(o->out, res, err);
    }
    if (rc == 0)
        printf("\ncomparison tables: %s/compare.csv, %s/compare.json\n", o->out, o->out);
    lt_free(x);
    lt_free(tasks);
    lt_free(useful);
    return rc;
}

/* tx: with --compare, the comparison tables (tx_compare); then DIR/report.html (tx_report.h)
 * and its line on stdout, unless --no-report. SIM_EXIT_OK or SIM_EXIT_INPUT (printed). */
static int tx_report(const struct opts *o, json_t **sum)
{
    struct sim_cmp_result *cmp = NULL;
    const char *names[MAX_POLICIES]; /* cmp borrows them */
    int rc;

    if (o->compare) {
        struct lt_err err;
        lt_err_init(&err, NULL);
        if ((cmp = lt_malloc(sizeof(*cmp))) == NULL)
            rc = lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory");
        else
            rc = tx_compare(o, sum, names, cmp, &err);
        if (rc < 0) {
            sim_err_print(&err);
            lt_free(cmp);
            return SIM_EXIT_INPUT;
        }
    }
    rc = tx_report_page(o, sum, cmp);
    lt_free(cmp);
    return rc;
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
    return tx_report(o, sum);
}

/* The mean and 95 % half-width of what (tasks, jobs) completed over the seeds of cell
 * (xi, k) that succeeded; *n_ok their number. */
static void cell_ci(const struct opts *o, json_t **sum, size_t xi, size_t k, const char *what,
                    double *mean, double *half, size_t *n_ok)
{
    double v[1000];
    size_t n_s = (size_t)o->seeds, base = (xi * o->n_policy + k) * n_s;

    *n_ok = 0;
    for (size_t si = 0; si < n_s; si++) {
        double x = jnum(sum[base + si], what, "completed", NULL);
        if (!isnan(x))
            v[(*n_ok)++] = x;
    }
    sim_ci95(v, *n_ok, mean, half);
}

/* tx --seeds N (N > 1): T(x) as mean +- 95 % CI (Student t, ci.h) per cell; tx.csv holds every
 * run (x,policy,seed,tasks_completed,jobs_completed) and tx_ci.csv the cells. A cell with
 * fewer successful seeds says how many ("(2)"). */
static int tx_results_seeds(const struct opts *o, json_t **sum)
{
    static const char *what[2] = {"tasks", "jobs"};
    char path[4200], path_ci[4200], *tmp = NULL;
    struct lt_err err;
    FILE *f;
    int rc = -1;

    for (int w = 0; w < 2; w++) {
        printf("%sT(x): %s completed with x%% of the machines, mean +- 95%% CI over %" PRIu64
               " seeds (%" PRIu64 "..%" PRIu64 ")\n%-8s",
               w ? "\n" : "", what[w], o->seeds, o->seed, o->seed + o->seeds - 1, "x");
        for (size_t k = 0; k < o->n_policy; k++)
            printf(" %20s", pol_name(o->policy[k]));
        printf("\n");
        for (size_t xi = 0; xi < o->n_x; xi++) {
            printf("%-8g", o->x[xi]);
            for (size_t k = 0; k < o->n_policy; k++) {
                double mean, half;
                size_t n_ok;
                char cell[64], cnt[32] = "";
                cell_ci(o, sum, xi, k, what[w], &mean, &half, &n_ok);
                if (n_ok < o->seeds)
                    snprintf(cnt, sizeof(cnt), " (%zu)", n_ok);
                if (n_ok == 0)
                    snprintf(cell, sizeof(cell), "-");
                else if (n_ok == 1)
                    snprintf(cell, sizeof(cell), "%.0f%s", mean, cnt);
                else
                    snprintf(cell, sizeof(cell), "%.0f +- %.0f%s", mean, half, cnt);
                printf(" %20s", cell);
            }
            printf("\n");
        }
    }
    lt_err_init(&err, NULL);
    snprintf(path, sizeof(path), "%s/tx.csv", o->out);
    if ((f = sim_tmp_open(path, &tmp, &err)) != NULL) {
        fprintf(f, "x,policy,seed,tasks_completed,jobs_completed\n");
        for (size_t j = 0; j < o->n_x * o->n_policy * o->seeds; j++)
            fprintf(f, "%g,%s,%" PRIu64 ",%.0f,%.0f\n", o->x[j / o->seeds / o->n_policy],
                    pol_name(o->policy[j / o->seeds % o->n_policy]), o->seed + j % o->seeds,
                    jnum(sum[j], "tasks", "completed", NULL),
                    jnum(sum[j], "jobs", "completed", NULL));
        rc = sim_tmp_commit(f, tmp, path, 0, &err);
    }
    snprintf(path_ci, sizeof(path_ci), "%s/tx_ci.csv", o->out);
    if (rc == 0 && (rc = -1, f = sim_tmp_open(path_ci, &tmp, &err)) != NULL) {
        fprintf(f, "x,policy,seeds,tasks_mean,tasks_ci95,jobs_mean,jobs_ci95\n");
        for (size_t xi = 0; xi < o->n_x; xi++)
            for (size_t k = 0; k < o->n_policy; k++) {
                double tm, th, jm, jh;
                size_t n_ok;
                cell_ci(o, sum, xi, k, "jobs", &jm, &jh, &n_ok);
                cell_ci(o, sum, xi, k, "tasks", &tm, &th, &n_ok);
                fprintf(f, "%g,%s,%zu,%.3f,%.3f,%.3f,%.3f\n", o->x[xi], pol_name(o->policy[k]),
                        n_ok, tm, th, jm, jh);
            }
        rc = sim_tmp_commit(f, tmp, path_ci, 0, &err);
    }
    if (rc < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    printf("\nT(x) tables: %s (runs), %s (mean, CI half-width); runs: %s/x<x>/<policy>/seed<s>/\n",
           path, path_ci, o->out);
    return tx_report(o, sum);
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

/* ---- shards and merge ------------------------------------------------------------------- */

/* {"parts": P, "bytes": B} of DIR/table's part-* files: the trace's fingerprint, so that merge
 * can tell shards that read different data under the same path. */
static json_t *table_parts(const char *trace, const char *table)
{
    char dir[4200], path[4600];
    json_int_t parts = 0, bytes = 0;
    struct dirent *de;
    DIR *d;

    snprintf(dir, sizeof(dir), "%s/%s", trace, table);
    if ((d = opendir(dir)) == NULL)
        return json_null(); /* job_events/ is optional */
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (strncmp(de->d_name, "part-", 5) == 0 && stat(path, &st) == 0) {
            parts++;
            bytes += (json_int_t)st.st_size;
        }
    }
    closedir(d);
    return json_pack("{s:I, s:I}", "parts", parts, "bytes", bytes);
}

/* What makes two shards parts of one sweep: the command, every option that changes an output
 * file or the table, and the trace (its path as given, which the outputs quote, and the size
 * of its parts). -j, --cache-mb, --force, --quiet and --out do not belong: they change no
 * byte. A new reference, or NULL when out of memory. */
/* The queue options other than the defaults, into the sweep object j (absent: default). */
static int queue_json(const struct opts *o, json_t *j)
{
    char name[128];
    static const char *bf[] = {"greedy", "none", "easy"};
    if (o->has_order) {
        lt_qorder_name(&o->order, name, sizeof(name));
        json_object_set_new(j, "order", json_string(name));
    }
    if (o->backfill != SIM_BACKFILL_GREEDY)
        json_object_set_new(j, "backfill", json_string(bf[o->backfill]));
    if (o->estimate_cv > 0.0)
        json_object_set_new(j, "estimate_cv", json_real(o->estimate_cv));
    if (o->reprioritise_s != 0)
        json_object_set_new(j, "reprioritise_s", json_integer((json_int_t)o->reprioritise_s));
    if (o->annot != NULL) { /* absent: none; the content, not the path, must agree */
        json_object_set_new(j, "sla_annotate_sha", json_string(o->annot->sha));
        json_object_set_new(j, "sla_scope",
                            json_string(o->sla_first ? "sla-first" : "within-priority"));
    }
    return 0;
}

static json_t *sweep_json(const struct opts *o, bool tx)
{
    json_t *pol = json_array(), *x = json_array(), *j;
    int rc_q;

    for (size_t k = 0; pol != NULL && k < o->n_policy; k++)
        json_array_append_new(pol, json_string(pol_name(o->policy[k])));
    for (size_t k = 0; x != NULL && tx && k < o->n_x; k++)
        json_array_append_new(x, json_real(o->x[k]));
    j = json_pack("{s:s, s:s, s:s, s:{s:o, s:o, s:o}, s:o, s:I, s:o, s:I, s:b}", "command",
                  tx ? "tx" : "replay", "lotus_version", SIM_VERSION, "trace", o->trace,
                  "trace_parts", "machine_events", table_parts(o->trace, "machine_events"),
                  "task_events", table_parts(o->trace, "task_events"), "job_events",
                  table_parts(o->trace, "job_events"), "policies", pol, "seed", (json_int_t)o->seed,
                  "until_s",
                  o->until_s == UINT64_MAX ? json_null() : json_integer((json_int_t)o->until_s),
                  "interval_s", (json_int_t)o->interval_s, "skip_bad_lines", o->skip_bad_lines);
    if (j != NULL)
        json_object_set_new(j, "initial_state",
                            json_string(o->initial_state == SIM_INIT_REPACK ? "repack" : "trace"));
    if (j != NULL && o->preempt != SIM_PREEMPT_NONE) { /* absent: none */
        json_object_set_new(j, "preempt", json_string(sim_preempt_name(o->preempt)));
        json_object_set_new(j, "evict",
                            json_string(o->evict != NULL ? lt_evict_name(o->evict) : "mrs"));
    }
    char oc[512];
    if (j != NULL && !sim_overcommit_is_none(&o->overcommit)) { /* absent: none */
        if (sim_overcommit_format(&o->overcommit, oc, sizeof(oc)) == 0)
            json_object_set_new(j, "overcommit", json_string(oc));
        else
            json_decref(j), j = NULL;
    }
    if (j != NULL && (rc_q = queue_json(o, j)) < 0)
        json_decref(j), j = NULL;
    if (j != NULL && tx) {
        json_object_set_new(j, "x", x);
        json_object_set_new(j, "seeds", json_integer((json_int_t)o->seeds));
        if (!o->report) /* absent: report.html is written (shard files of earlier versions) */
            json_object_set_new(j, "report", json_false());
        if (o->compare) /* absent: no comparison tables */
            json_object_set_new(j, "compare", json_true());
        return j;
    }
    json_decref(x);
    if (j != NULL) {
        json_object_set_new(j, "machines_fraction_pct", json_real(o->machines_pct));
        json_object_set_new(j, "task_csv", json_boolean(o->task_csv));
        json_object_set_new(j, "report", json_boolean(o->report));
    }
    return j;
}

/* The command's arguments without --shard and its value: what the report's command box of the
 * merged run shows (the unsharded run's command). A new reference, or NULL. */
static json_t *argv_unsharded(const struct opts *o)
{
    json_t *a = json_array();

    for (int k = 0; a != NULL && k < o->argc; k++) {
        if (strcmp(o->argv[k], "--shard") == 0) {
            k++;
            continue;
        }
        if (strncmp(o->argv[k], "--shard=", 8) != 0)
            json_array_append_new(a, json_string(o->argv[k]));
    }
    return a;
}

/* Writes OUT/shard-I-of-N.json: the shard, the sweep (sweep_json) and the runs it wrote,
 * relative to OUT. 0, or LT_ENOMEM / LT_EIO with err set. */
static int shard_write(const struct opts *o, bool tx, const struct run *runs, size_t n,
                       struct lt_err *err)
{
    char path[4200], *tmp = NULL;
    json_t *list = json_array(), *j;
    FILE *f;
    int rc = 0;

    for (size_t k = 0; list != NULL && k < n; k++)
        if (in_shard(o, k))
            json_array_append_new(list, json_string(runs[k].rel));
    j = json_pack("{s:{s:I, s:I}, s:o, s:o, s:o}", "shard", "index", (json_int_t)o->shard.index,
                  "count", (json_int_t)o->shard.count, "sweep", sweep_json(o, tx), "runs", list,
                  "argv", argv_unsharded(o));
    if (j == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the shard file");
    shard_path(o->out, &o->shard, path, sizeof(path));
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL) {
        json_decref(j);
        return err->code;
    }
    if (json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', f) == EOF)
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s.tmp'", path);
    json_decref(j);
    return sim_tmp_commit(f, tmp, path, rc, err);
}

/* replay/tx --shard I/N: runs this shard's part of the run list and, when every one of them
 * succeeded, writes the shard file. The table, tx.csv and report.html are merge's. */
static int shard_main(const struct opts *o, bool tx, const struct run *all, size_t n)
{
    struct run *mine = lt_calloc(n, sizeof(*mine));
    char path[4200];
    struct lt_err err;
    size_t m = 0;
    long failed = 0;

    lt_err_init(&err, NULL);
    if (mine == NULL) {
        fprintf(stderr, "lotus-sim: out of memory\n");
        return SIM_EXIT_INPUT;
    }
    for (size_t k = 0; k < n; k++)
        if (in_shard(o, k))
            mine[m++] = all[k];
    if (m > 0 && (failed = run_all(o, mine, m)) < 0) {
        lt_free(mine);
        return (int)-failed;
    }
    if (failed > 0) {
        report_failed(mine, m, failed);
        fprintf(stderr,
                "lotus-sim: shard %" PRIu64 "/%" PRIu64 " is incomplete: no shard file "
                "written; run it again (with --force) before merging\n",
                o->shard.index, o->shard.count);
        lt_free(mine);
        return SIM_EXIT_INPUT;
    }
    if (shard_write(o, tx, all, n, &err) < 0) {
        sim_err_print(&err);
        lt_free(mine);
        return SIM_EXIT_INPUT;
    }
    printf("shard %" PRIu64 "/%" PRIu64 ": %zu of %zu runs", o->shard.index, o->shard.count, m, n);
    for (size_t k = 0; k < m; k++)
        printf("%s%s", k ? ", " : ": ", mine[k].dir);
    printf("\nshard file: %s\nwhen all %" PRIu64 " shards are done: lotus-sim merge %s\n",
           shard_path(o->out, &o->shard, path, sizeof(path)), o->shard.count, o->out);
    lt_free(mine);
    return SIM_EXIT_OK;
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
    o.argc = argc;
    o.argv = argv;
    lt_err_init(&err, NULL);
    if (check_trace(o.trace, &err) < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    if ((runs = runs_make(&o, tx, &n)) == NULL)
        return SIM_EXIT_INPUT;
    if (o.shard.count > 0) {
        status = shard_main(&o, tx, runs, n);
        lt_free(runs);
        return status;
    }
    failed = run_all(&o, runs, n);
    if (failed < 0) {
        lt_free(runs);
        return (int)-failed;
    }
    sum = lt_calloc(n, sizeof(*sum));
    status = sum != NULL && summaries_load(runs, n, sum) ? SIM_EXIT_OK : SIM_EXIT_INPUT;
    if (status == SIM_EXIT_OK && (size_t)failed < n) {
        warn_until(&o, sum, n);
        status = !tx           ? replay_results(&o, runs, sum, n)
                 : o.seeds > 1 ? tx_results_seeds(&o, sum)
                               : tx_results(&o, sum);
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

/* ---- lotus-sim merge ---------------------------------------------------------------------- */

struct merge_opts {
    struct sim_args dirs;
    const char *out;
    bool force;
};

static const struct sim_opt merge_opts[] = {
    {"DIR...", SIM_OPT_ARGS, offsetof(struct merge_opts, dirs), NULL,
     "the --out directories the shards wrote (one when\nthey share a volume)", NULL},
    {"--out", SIM_OPT_STR, offsetof(struct merge_opts, out), "DIR",
     "the merged result; run directories found in\nanother DIR are copied there", "the first DIR"},
    {"--force", SIM_OPT_FLAG, offsetof(struct merge_opts, force), NULL,
     "replace run directories --out already holds when\nthey are copied from another DIR", NULL},
};

static const struct sim_cmd_spec merge_spec = {
    "merge",
    "DIR... [--out DIR] [--force]",
    "Joins the N shards of a replay or tx sweep (each run with --shard I/N,\n"
    "which writes DIR/shard-I-of-N.json) into what one unsharded run writes:\n"
    "the same table on stdout, tx.csv or report.html, and the run directories\n"
    "under --out. Refuses shards of different sweeps (trace, options, N), a\n"
    "shard given twice and a missing one (docs/simulator.md, \"Sweeps on a cluster\").",
    "lotus-sim merge out/tx",
    "Exit status: 0 merged, 1 the shards do not make one whole sweep or a file cannot be\n"
    "read or written, 2 usage error.",
    merge_opts,
    sizeof(merge_opts) / sizeof(merge_opts[0])};

/* One shard file found by merge. */
struct shard_file {
    const char *dir; /* the DIR argument it is in (borrowed from argv) */
    char path[4200];
    json_t *j; /* the file (owned) */
    uint64_t index, count;
    bool in_out; /* dir is --out itself: its runs need no copy */
};

/* true when name is exactly "shard-I-of-N.json" (canonical numbers); sets I and N. */
static bool shard_name(const char *name, uint64_t *i, uint64_t *n)
{
    char back[128];
    int end = 0;

    if (sscanf(name, "shard-%" SCNu64 "-of-%" SCNu64 ".json%n", i, n, &end) != 2 || end == 0)
        return false;
    snprintf(back, sizeof(back), "shard-%" PRIu64 "-of-%" PRIu64 ".json", *i, *n);
    return strcmp(back, name) == 0;
}

/* Reads and checks the shape of one shard file. */
static int shard_load(struct shard_file *sf, struct lt_err *err)
{
    json_error_t je;
    json_int_t i = -1, n = -1;
    json_t *sweep = NULL, *runs = NULL;

    if ((sf->j = json_load_file(sf->path, 0, &je)) == NULL)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s:%d: %s", sf->path, je.line, je.text);
    if (json_unpack_ex(sf->j, &je, 0, "{s:{s:I, s:I}, s:o, s:o}", "shard", "index", &i, "count", &n,
                       "sweep", &sweep, "runs", &runs) != 0)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: not a shard file: %s", sf->path, je.text);
    if ((uint64_t)i != sf->index || (uint64_t)n != sf->count || !json_is_object(sweep) ||
        !json_is_array(runs))
        return lt_err_set(err, LT_EPARSE, 0, 0,
                          "%s: its shard (%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
                          ") differs from its name, or no sweep object or runs list",
                          sf->path, i, n);
    return 0;
}

/* Every shard file of every DIR, into *files (owned, *nf of them). */
static int shards_find(const struct merge_opts *mo, struct shard_file **files, size_t *nf,
                       struct lt_err *err)
{
    size_t cap = 0;
    int rc = 0;

    *files = NULL;
    *nf = 0;
    for (size_t d = 0; d < mo->dirs.n && rc == 0; d++) {
        DIR *dp = opendir(mo->dirs.v[d]);
        struct dirent *de;
        if (dp == NULL)
            return lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", mo->dirs.v[d],
                              strerror(errno));
        while (rc == 0 && (de = readdir(dp)) != NULL) {
            struct shard_file sf = {.dir = mo->dirs.v[d]};
            if (!shard_name(de->d_name, &sf.index, &sf.count))
                continue;
            if (*nf == cap) {
                struct shard_file *g = lt_reallocarray(*files, cap = cap * 2 + 8, sizeof(*g));
                if (g == NULL) {
                    rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
                    break;
                }
                *files = g;
            }
            snprintf(sf.path, sizeof(sf.path), "%s/%s", sf.dir, de->d_name);
            (*files)[(*nf)++] = sf;
            rc = shard_load(&(*files)[*nf - 1], err);
        }
        closedir(dp);
    }
    if (rc == 0 && *nf == 0)
        rc = lt_err_set(err, LT_EINVAL, 0, 0,
                        "no shard file (shard-I-of-N.json) in %s%s: run 'lotus-sim replay' or "
                        "'lotus-sim tx' with --shard I/N --out DIR first",
                        mo->dirs.v[0], mo->dirs.n > 1 ? " or the other DIRs" : "");
    return rc;
}

/* The first key whose value differs between the sweep objects a and b ("?" if none). */
static const char *sweep_diff(json_t *a, json_t *b)
{
    const char *key;
    json_t *v;

    json_object_foreach(a, key, v)
    {
        if (!json_equal(v, json_object_get(b, key)))
            return key;
    }
    json_object_foreach(b, key, v)
    {
        if (json_object_get(a, key) == NULL)
            return key;
    }
    return "?";
}

/* The files make one whole sweep: one N, one sweep, every index 0..N-1 exactly once. */
static int shards_check(const struct shard_file *f, size_t nf, struct lt_err *err)
{
    uint64_t n = f[0].count;
    size_t *owner;
    json_t *sweep0 = json_object_get(f[0].j, "sweep");
    int rc = 0;

    for (size_t k = 1; k < nf; k++) {
        json_t *sweep = json_object_get(f[k].j, "sweep");
        if (f[k].count != n)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "'%s' is a shard of %" PRIu64 " but '%s' of %" PRIu64
                              ": not the same sweep (remove the stale shard files)",
                              f[k].path, f[k].count, f[0].path, n);
        if (!json_equal(sweep, sweep0))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "'%s' and '%s' are not shards of the same sweep: their '%s' differs",
                              f[0].path, f[k].path, sweep_diff(sweep0, sweep));
    }
    if ((owner = lt_calloc(n, sizeof(*owner))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < nf && rc == 0; k++) {
        if (owner[f[k].index] != 0)
            rc = lt_err_set(err, LT_EINVAL, 0, 0,
                            "shard %" PRIu64 "/%" PRIu64 " is given twice: '%s' and '%s'",
                            f[k].index, n, f[owner[f[k].index] - 1].path, f[k].path);
        owner[f[k].index] = k + 1;
    }
    for (uint64_t i = 0; i < n && rc == 0; i++)
        if (owner[i] == 0)
            rc = lt_err_set(err, LT_EINVAL, 0, 0,
                            "shard %" PRIu64 "/%" PRIu64 " is missing (no shard-%" PRIu64
                            "-of-%" PRIu64 ".json in the DIRs given; %zu of %" PRIu64
                            " found): a shard whose runs failed writes none",
                            i, n, i, n, nf, n);
    lt_free(owner);
    return rc;
}

/* The queue options of a sweep object (queue_json; absent: the defaults). */
static int queue_from_sweep(json_t *sweep, const char *path, struct opts *o, struct lt_err *err)
{
    json_error_t je;
    const char *qo = NULL, *qb = NULL;
    double qcv = 0.0;
    json_int_t qr = 0;
    if (json_unpack_ex(sweep, &je, 0, "{s:s}", "order", &qo) == 0) {
        struct lt_err e2;
        lt_err_init(&e2, NULL);
        if (lt_qorder_find(qo, &o->order, &e2) < 0)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: %s", path, e2.text);
        if (lt_qorder_uses_sla(&o->order) && json_object_get(sweep, "sla_annotate_sha") == NULL)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: order '%s' needs SLAs", path, qo);
        o->has_order = true;
    }
    if (json_unpack_ex(sweep, &je, 0, "{s:s}", "backfill", &qb) == 0) {
        if (strcmp(qb, "none") != 0 && strcmp(qb, "easy") != 0)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad backfill", path);
        o->backfill = strcmp(qb, "none") == 0 ? SIM_BACKFILL_NONE : SIM_BACKFILL_EASY;
    }
    if (json_unpack_ex(sweep, &je, 0, "{s:F}", "estimate_cv", &qcv) == 0) {
        if (!(qcv > 0.0) || qcv > 100.0)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad estimate_cv", path);
        o->estimate_cv = qcv;
    }
    if (json_unpack_ex(sweep, &je, 0, "{s:I}", "reprioritise_s", &qr) == 0) {
        if (qr < 1 || qr > 86400 * 365)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad reprioritise_s", path);
        o->reprioritise_s = (uint64_t)qr;
    }
    return 0;
}

/* The options of the sweep a shard file records, as replay_main would have them with --out
 * out; *tx says which command. The strings stay borrowed from sweep. */
static int opts_from_sweep(json_t *sweep, const char *path, const char *out, struct opts *o,
                           bool *tx, struct lt_err *err)
{
    const char *cmd = NULL, *version = NULL, *trace = NULL;
    json_t *pol = NULL, *until = NULL, *x = NULL, *v;
    json_int_t seed = 0, interval = 0;
    int skip = 0;
    json_error_t je;
    size_t k;
    int rc = 0;

    if (json_unpack_ex(sweep, &je, 0, "{s:s, s:s, s:s, s:o, s:I, s:o, s:I, s:b}", "command", &cmd,
                       "lotus_version", &version, "trace", &trace, "policies", &pol, "seed", &seed,
                       "until_s", &until, "interval_s", &interval, "skip_bad_lines", &skip) != 0)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: %s", path, je.text);
    *tx = strcmp(cmd, "tx") == 0;
    opts_default(o, *tx);
    o->trace = trace;
    if (strcmp(version, SIM_VERSION) != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: written by lotus-sim %s; this is %s (merge with the same version)",
                          path, version, SIM_VERSION);
    o->out = out;
    o->seed = (uint64_t)seed;
    o->until_s = json_is_integer(until) ? (uint64_t)json_integer_value(until) : UINT64_MAX;
    o->interval_s = (uint64_t)interval;
    o->skip_bad_lines = skip != 0;
    json_array_foreach(pol, k, v)
    {
        if (k == MAX_POLICIES || !json_is_string(v))
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad policies", path);
        if ((rc = sim_policy_find(json_string_value(v), true, &o->policy[k], err)) < 0)
            return rc;
        o->n_policy = k + 1;
    }
    const char *init = NULL;
    if (json_unpack_ex(sweep, &je, 0, "{s:s}", "initial_state", &init) != 0 ||
        (strcmp(init, "trace") != 0 && strcmp(init, "repack") != 0))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad initial_state", path);
    o->initial_state = strcmp(init, "repack") == 0 ? SIM_INIT_REPACK : SIM_INIT_TRACE;
    const char *pre = NULL, *ev = NULL;
    if (json_unpack_ex(sweep, &je, 0, "{s:s, s:s}", "preempt", &pre, "evict", &ev) == 0) {
        if (sim_preempt_parse("sweep.preempt", pre, &o->preempt, err) < 0 ||
            o->preempt == SIM_PREEMPT_NONE)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad preempt '%.40s'", path, pre);
        if ((o->evict = lt_evict_find(ev, err)) == NULL)
            return err->code;
    }
    const char *oc = NULL;
    if (json_unpack_ex(sweep, &je, 0, "{s:s}", "overcommit", &oc) == 0) {
        struct lt_err e2;
        lt_err_init(&e2, NULL);
        if (sim_overcommit_parse("overcommit", oc, &o->overcommit, &e2) < 0)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: %s", path, e2.text);
    }
    if ((rc = queue_from_sweep(sweep, path, o, err)) < 0)
        return rc;
    if (*tx) {
        json_int_t seeds = 0;
        if (json_unpack_ex(sweep, &je, 0, "{s:I}", "seeds", &seeds) != 0 || seeds < 1 ||
            seeds > 1000)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad seeds", path);
        o->seeds = (uint64_t)seeds;
        if (json_unpack_ex(sweep, &je, 0, "{s:o}", "x", &x) != 0 || !json_is_array(x) ||
            json_array_size(x) == 0 || json_array_size(x) > MAX_X)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad x list", path);
        o->n_x = json_array_size(x);
        json_array_foreach(x, k, v) o->x[k] = json_number_value(v);
        json_t *report = json_object_get(sweep, "report");
        if (report != NULL && !json_is_boolean(report))
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad report", path);
        o->report = report == NULL || json_is_true(report);
        json_t *compare = json_object_get(sweep, "compare");
        if (compare != NULL && !json_is_boolean(compare))
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: bad compare", path);
        o->compare = json_is_true(compare);
        return 0;
    }
    int task_csv = 0, report = 0;
    if (json_unpack_ex(sweep, &je, 0, "{s:F, s:b, s:b}", "machines_fraction_pct", &o->machines_pct,
                       "task_csv", &task_csv, "report", &report) != 0)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: sweep: %s", path, je.text);
    o->task_csv = task_csv != 0;
    o->report = report != 0;
    return 0;
}

/* Copies the regular files of the run directory src into dst, staged (outfile.h). */
static int run_copy(const char *src, const char *dst, struct lt_err *err)
{
    char stage[4200], from[5000], to[5000], buf[65536];
    struct dirent *de;
    DIR *d;
    int rc;

    if ((rc = sim_stage_open(dst, stage, sizeof(stage), err)) < 0)
        return rc;
    sim_out_track(stage);
    if ((d = opendir(src)) == NULL)
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", src, strerror(errno));
    while (rc == 0 && (de = readdir(d)) != NULL) {
        FILE *in, *outf;
        size_t got;
        snprintf(from, sizeof(from), "%s/%s", src, de->d_name);
        snprintf(to, sizeof(to), "%s/%s", stage, de->d_name);
        struct stat st;
        if (stat(from, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if ((in = fopen(from, "rb")) == NULL)
            rc = lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", from, strerror(errno));
        else if ((outf = fopen(to, "wb")) == NULL)
            rc = lt_err_set(err, LT_EIO, 0, 0, "cannot create '%s': %s", to, strerror(errno));
        else {
            while ((got = fread(buf, 1, sizeof(buf), in)) > 0 && rc == 0)
                if (fwrite(buf, 1, got, outf) != got)
                    rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s'", to);
            if (ferror(in) && rc == 0)
                rc = lt_err_set(err, LT_EIO, 0, 0, "cannot read '%s'", from);
            if (fclose(outf) != 0 && rc == 0)
                rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s'", to);
        }
        if (in != NULL)
            fclose(in);
    }
    if (d != NULL)
        closedir(d);
    if (rc == 0)
        rc = sim_stage_commit(stage, dst, err);
    if (rc < 0)
        sim_remove_tree(stage, NULL);
    sim_out_forget(stage);
    return rc;
}

/* Checks that each shard's runs list is its part of the sweep's run list, that every run's
 * summary.json is there, and copies the runs found outside --out into it. */
static int merge_runs(const struct merge_opts *mo, struct shard_file *f, size_t nf,
                      struct run *runs, size_t n, struct lt_err *err)
{
    uint64_t count = f[0].count;
    const struct shard_file **by_index = lt_calloc(count, sizeof(*by_index));
    const char **copies = lt_calloc(n + 1, sizeof(*copies));
    char src[4700];
    size_t n_copies = 0;
    int rc = 0;

    if (by_index == NULL || copies == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < nf && rc == 0; k++)
        by_index[f[k].index] = &f[k];
    for (size_t k = 0; k < nf && rc == 0; k++) {
        size_t want = n / count + (f[k].index < n % count);
        if (json_array_size(json_object_get(f[k].j, "runs")) != want)
            rc = lt_err_set(err, LT_EINVAL, 0, 0,
                            "'%s' lists %zu runs; part %" PRIu64 " of %" PRIu64
                            " of this sweep has %zu",
                            f[k].path, json_array_size(json_object_get(f[k].j, "runs")), f[k].index,
                            count, want);
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        const struct shard_file *sf = by_index[k % count];
        const char *rel =
            json_string_value(json_array_get(json_object_get(sf->j, "runs"), k / count));
        if (rel == NULL || strcmp(rel, runs[k].rel) != 0) {
            rc = lt_err_set(err, LT_EINVAL, 0, 0, "'%s': run %zu of its list is '%s', not '%s'",
                            sf->path, k / count, rel != NULL ? rel : "?", runs[k].rel);
            break;
        }
        snprintf(src, sizeof(src), "%s/%s/summary.json", sf->dir, rel);
        if (!sim_path_exists(src))
            rc = lt_err_set(err, LT_EIO, 0, 0, "'%s' is missing: the shard's result is gone", src);
        if (!sf->in_out)
            copies[n_copies++] = runs[k].dir;
    }
    if (rc == 0)
        rc = sim_out_refuse_existing(copies, n_copies, mo->force, err);
    for (size_t k = 0; k < n && rc == 0; k++) {
        const struct shard_file *sf = by_index[k % count];
        snprintf(src, sizeof(src), "%s/%s", sf->dir, runs[k].rel);
        if (!sf->in_out)
            rc = run_copy(src, runs[k].dir, err);
    }
    lt_free(by_index);
    lt_free(copies);
    return rc;
}

/* Marks the shard files whose DIR is --out itself (the same directory, however named). */
static int shards_in_out(const char *out, struct shard_file *f, size_t nf, struct lt_err *err)
{
    struct stat so, sd;

    if (stat(out, &so) != 0)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot stat '%s': %s", out, strerror(errno));
    for (size_t k = 0; k < nf; k++) {
        if (stat(f[k].dir, &sd) != 0)
            return lt_err_set(err, LT_EIO, 0, 0, "cannot stat '%s': %s", f[k].dir, strerror(errno));
        f[k].in_out = sd.st_dev == so.st_dev && sd.st_ino == so.st_ino;
    }
    return 0;
}

/* The merged run's command line (the report's command box): shard 0's arguments without
 * --shard, as the unsharded run had them, with --out naming the merged directory (o->out;
 * added when shard 0 had no --out and o->out is not the default), copied into *args (free
 * with args_free). */
static int merge_argv(const struct shard_file *f, size_t nf, struct opts *o, bool tx, char ***args,
                      struct lt_err *err)
{
    json_t *a = NULL, *v;
    size_t k, n;
    bool has_out = false;

    for (k = 0; k < nf && a == NULL; k++)
        if (f[k].index == 0)
            a = json_object_get(f[k].j, "argv");
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > INT_MAX - 2)
        return lt_err_set(err, LT_EPARSE, 0, 0, "the shard 0 file has no usable \"argv\"");
    if ((*args = lt_calloc(json_array_size(a) + 3, sizeof(**args))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    json_array_foreach(a, k, v)
    {
        const char *s = json_string_value(v);
        if (!json_is_string(v))
            return lt_err_set(err, LT_EPARSE, 0, 0, "the shard 0 file's \"argv\" is not strings");
        if (k > 0 && strcmp((*args)[k - 1], "--out") == 0)
            s = o->out;
        if (strncmp(s, "--out", 5) == 0 && (s[5] == '\0' || s[5] == '='))
            has_out = true;
        (*args)[k] = strncmp(s, "--out=", 6) == 0 ? lt_strfmt("--out=%s", o->out) : lt_strdup(s);
        if ((*args)[k] == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    }
    n = json_array_size(a);
    if (!has_out && strcmp(o->out, tx ? "out/tx" : "out/replay") != 0) {
        if (((*args)[n++] = lt_strdup("--out")) == NULL ||
            ((*args)[n++] = lt_strdup(o->out)) == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    }
    o->argc = (int)n;
    o->argv = *args;
    return 0;
}

static void args_free(char **args)
{
    for (size_t k = 0; args != NULL && args[k] != NULL; k++)
        lt_free(args[k]);
    lt_free(args);
}

/* After the checks: the runs in --out, then the table and the files an unsharded run writes
 * after its runs (the same functions). */
static int merge_results(const struct merge_opts *mo, struct shard_file *f, size_t nf,
                         struct lt_err *err)
{
    struct opts o;
    struct run *runs = NULL;
    json_t **sum = NULL;
    char **args = NULL;
    size_t n = 0;
    bool tx = false;
    int rc, status = SIM_EXIT_INPUT;

    if ((rc = opts_from_sweep(json_object_get(f[0].j, "sweep"), f[0].path, mo->out, &o, &tx, err)) <
        0)
        return rc;
    n = o.n_policy * (tx ? o.n_x * (size_t)o.seeds : 1);
    if ((rc = merge_argv(f, nf, &o, tx, &args, err)) < 0) {
        args_free(args);
        return rc;
    }
    if ((runs = lt_calloc(n, sizeof(*runs))) == NULL || (sum = lt_calloc(n, sizeof(*sum))) == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if (rc == 0)
        runs_list(&o, tx, runs);
    if (rc == 0 && (rc = sim_make_dirs(mo->out, err)) == 0 &&
        (rc = shards_in_out(mo->out, f, nf, err)) == 0)
        rc = merge_runs(mo, f, nf, runs, n, err);
    if (rc == 0 && summaries_load(runs, n, sum)) {
        warn_until(&o, sum, n);
        status = !tx           ? replay_results(&o, runs, sum, n)
                 : o.seeds > 1 ? tx_results_seeds(&o, sum)
                               : tx_results(&o, sum);
    }
    for (size_t k = 0; sum != NULL && k < n; k++)
        json_decref(sum[k]);
    lt_free(sum);
    lt_free(runs);
    args_free(args);
    return rc < 0 ? rc : status;
}

int sim_cmd_merge(int argc, char **argv)
{
    struct merge_opts mo;
    struct shard_file *files = NULL;
    struct lt_err err;
    size_t nf = 0;
    int rc;

    memset(&mo, 0, sizeof(mo));
    lt_err_init(&err, NULL);
    rc = sim_opt_parse(&merge_spec, argc, argv, &mo, NULL, &err);
    if (rc == 1)
        return SIM_EXIT_OK;
    if (rc == 0 && mo.dirs.n == 0)
        rc = lt_err_set(&err, LT_EINVAL, 0, 0, "missing DIR: the shards' --out directory");
    if (rc < 0)
        return sim_usage_error(merge_spec.name, &err);
    if (mo.out == NULL)
        mo.out = mo.dirs.v[0];
    sim_out_signals(SIM_SIG_CLEANUP);
    rc = shards_find(&mo, &files, &nf, &err);
    if (rc == 0)
        rc = shards_check(files, nf, &err);
    if (rc == 0)
        rc = merge_results(&mo, files, nf, &err);
    if (rc < 0)
        sim_err_print(&err);
    for (size_t k = 0; k < nf; k++)
        json_decref(files[k].j);
    lt_free(files);
    return rc < 0 ? SIM_EXIT_INPUT : rc;
}
