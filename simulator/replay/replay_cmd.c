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
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
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

#include "cli/outfile.h"

#define MAX_POLICIES 64
#define US           1000000LL

static const double tx_default[] = {20, 40, 60, 80, 83, 85, 87, 90, 93, 95, 100};
#define N_TX_DEFAULT (sizeof(tx_default) / sizeof(tx_default[0]))
#define MAX_X        32

struct opts {
    const char *trace;
    const char *out;
    const struct lt_policy *policy[MAX_POLICIES];
    size_t n_policy;
    uint64_t jobs;
    uint64_t seed;
    double machines_pct;
    int64_t until_us;
    int64_t interval_us;
    bool skip_bad_lines;
    bool task_csv;
    bool quiet;
    bool report;
    double x[MAX_X];
    size_t n_x;
    uint64_t cache_mb;
};

struct run {
    const struct lt_policy *policy;
    double pct;
    char dir[4096];
    pid_t pid;
    int status; /* 0 ok, else failed */
    bool done;
    struct timespec t0;
};

static void replay_usage(FILE *f, bool tx)
{
    if (tx)
        fprintf(f, "usage: lotus-sim tx --trace DIR --policy P[,P...] [options]\n\n"
                   "Runs the replay with a random x%% of the machines for every x of --x and\n"
                   "prints T(x), the tasks completed, per policy (docs/simulator.md).\n\n");
    else
        fprintf(f, "usage: lotus-sim replay --trace DIR --policy P[,P...] [options]\n\n"
                   "Replays the Google 2011 trace under DIR (machine_events/, task_events/,\n"
                   "job_events/; .csv.gz parts as published) through each placement policy and\n"
                   "prints the policies side by side (docs/simulator.md).\n\n");
    fprintf(f,
            "options:\n"
            "  --trace DIR             the trace directory (required)\n"
            "  --policy LIST           comma-separated policies (required; see\n"
            "                          'lotus-sim score --list-policies')\n"
            "  -j N                    runs in parallel processes (default: 2)\n"
            "  --until SECONDS         replay trace seconds [0, SECONDS] only\n"
            "  --out DIR               output directory (default out/%s)\n"
            "  --seed N                seed of the policies and the machine subset (default 1)\n",
            tx ? "tx" : "replay");
    if (tx)
        fprintf(f, "  --x LIST                machine percentages (default "
                   "20,40,60,80,83,85,87,90,93,95,100)\n");
    else
        fprintf(f, "  --machines-fraction X   keep a random X%% of the machines (default 100)\n"
                   "  --no-task-csv           do not write tasks.csv (whole-trace runs)\n"
                   "  --no-report             do not write report.html\n");
    fprintf(f, "  --interval SECONDS      time-series sampling interval (default 300)\n"
               "  --skip-bad-lines        count malformed trace lines instead of stopping\n"
               "  --cache-mb N            memory per run for trace rows kept between the two\n"
               "                          passes (default 1024; beyond it the parts are read\n"
               "                          twice)\n"
               "  --quiet                 no progress bar\n"
               "  --help                  this text\n");
}

static int usage_error(bool tx, struct lt_err *err)
{
    sim_err_print(err);
    fprintf(stderr, "lotus-sim: try 'lotus-sim %s --help'\n", tx ? "tx" : "replay");
    return SIM_EXIT_USAGE;
}

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
    return p != NULL ? lt_policy_name(p) : "lotes";
}

static int parse_policies(const char *list, struct opts *o, struct lt_err *err)
{
    char buf[1024];
    if (strlen(list) >= sizeof(buf))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--policy: list too long");
    memcpy(buf, list, strlen(list) + 1);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->n_policy == MAX_POLICIES)
            return lt_err_set(err, LT_EINVAL, 0, 0, "--policy: more than %d policies",
                              MAX_POLICIES);
        /* "lotes" is LoTES's dispatcher (a NULL policy), every other name a placement policy */
        const struct lt_policy *p = strcmp(tok, "lotes") == 0 ? NULL : lt_policy_find(tok, err);
        if (!p && strcmp(tok, "lotes") != 0) {
            if (err->code == LT_ENOTFOUND)
                snprintf(err->text + strlen(err->text), sizeof(err->text) - strlen(err->text),
                         "; or lotes");
            return err->code;
        }
        for (size_t k = 0; k < o->n_policy; k++)
            if (o->policy[k] == p)
                return lt_err_set(err, LT_EINVAL, 0, 0, "--policy: '%s' given twice", tok);
        o->policy[o->n_policy++] = p;
    }
    if (o->n_policy == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--policy: empty list");
    return 0;
}

static int parse_x(const char *list, struct opts *o, struct lt_err *err)
{
    char buf[1024];
    if (strlen(list) >= sizeof(buf))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--x: list too long");
    memcpy(buf, list, strlen(list) + 1);
    o->n_x = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->n_x == MAX_X)
            return lt_err_set(err, LT_EINVAL, 0, 0, "--x: more than %d values", MAX_X);
        int rc = parse_pct("--x", tok, &o->x[o->n_x], err);
        if (rc < 0)
            return rc;
        o->n_x++;
    }
    if (o->n_x == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--x: empty list");
    return 0;
}

/* Returns 0 to run, 1 after --help, or SIM_EXIT_USAGE + 100 on a usage error (printed). */
static int parse_args(int argc, char **argv, bool tx, struct opts *o)
{
    struct lt_err err;
    lt_err_init(&err, NULL);
    memset(o, 0, sizeof(*o));
    o->jobs = 2;
    o->seed = 1;
    o->machines_pct = 100.0;
    o->until_us = INT64_MAX;
    o->interval_us = 300 * US;
    o->task_csv = !tx;
    o->report = !tx;
    o->out = tx ? "out/tx" : "out/replay";
    memcpy(o->x, tx_default, sizeof(tx_default));
    o->n_x = N_TX_DEFAULT;
    o->cache_mb = 1024;

    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        const char *a = argv[i];
        int rc;
        uint64_t u;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            replay_usage(stdout, tx);
            return 1;
        }
        if (strcmp(a, "--skip-bad-lines") == 0) {
            o->skip_bad_lines = true;
            continue;
        }
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (!tx && strcmp(a, "--no-task-csv") == 0) {
            o->task_csv = false;
            continue;
        }
        if (!tx && strcmp(a, "--no-report") == 0) {
            o->report = false;
            continue;
        }
        if (strncmp(a, "-j", 2) == 0 && a[2] >= '0' && a[2] <= '9') { /* -jN, as make */
            if (sim_parse_u64("-j", a + 2, &o->jobs, &err) < 0)
                return usage_error(tx, &err) + 100;
            if (o->jobs == 0 || o->jobs > 256) {
                lt_err_set(&err, LT_EINVAL, 0, 0, "-j: '%s' is not in 1..256", a + 2);
                return usage_error(tx, &err) + 100;
            }
            continue;
        }
        if ((rc = sim_opt_value(argc, argv, &i, "--trace", &v, &err)) != 0) {
            if (rc < 0)
                return usage_error(tx, &err) + 100;
            o->trace = v;
        } else if ((rc = sim_opt_value(argc, argv, &i, "--out", &v, &err)) != 0) {
            if (rc < 0)
                return usage_error(tx, &err) + 100;
            o->out = v;
        } else if ((rc = sim_opt_value(argc, argv, &i, "--policy", &v, &err)) != 0) {
            if (rc < 0 || parse_policies(v, o, &err) < 0)
                return usage_error(tx, &err) + 100;
        } else if ((rc = sim_opt_value(argc, argv, &i, "-j", &v, &err)) != 0) {
            if (rc < 0 || sim_parse_u64("-j", v, &o->jobs, &err) < 0)
                return usage_error(tx, &err) + 100;
            if (o->jobs == 0 || o->jobs > 256) {
                lt_err_set(&err, LT_EINVAL, 0, 0, "-j: '%s' is not in 1..256", v);
                return usage_error(tx, &err) + 100;
            }
        } else if ((rc = sim_opt_value(argc, argv, &i, "--seed", &v, &err)) != 0) {
            if (rc < 0 || sim_parse_u64("--seed", v, &o->seed, &err) < 0)
                return usage_error(tx, &err) + 100;
        } else if ((rc = sim_opt_value(argc, argv, &i, "--until", &v, &err)) != 0) {
            if (rc < 0 || sim_parse_u64("--until", v, &u, &err) < 0)
                return usage_error(tx, &err) + 100;
            if (u > (uint64_t)(INT64_MAX / US) - 600) {
                lt_err_set(&err, LT_ERANGE, 0, 0, "--until: '%s' is too large", v);
                return usage_error(tx, &err) + 100;
            }
            o->until_us = ((int64_t)u + 600) * US;
        } else if ((rc = sim_opt_value(argc, argv, &i, "--cache-mb", &v, &err)) != 0) {
            if (rc < 0 || sim_parse_u64("--cache-mb", v, &o->cache_mb, &err) < 0)
                return usage_error(tx, &err) + 100;
            if (o->cache_mb > (UINT64_C(1) << 20)) {
                lt_err_set(&err, LT_ERANGE, 0, 0, "--cache-mb: '%s' is too large", v);
                return usage_error(tx, &err) + 100;
            }
        } else if ((rc = sim_opt_value(argc, argv, &i, "--interval", &v, &err)) != 0) {
            if (rc < 0 || sim_parse_u64("--interval", v, &u, &err) < 0)
                return usage_error(tx, &err) + 100;
            if (u == 0 || u > 86400 * 365) {
                lt_err_set(&err, LT_ERANGE, 0, 0, "--interval: '%s' is not in 1..31536000", v);
                return usage_error(tx, &err) + 100;
            }
            o->interval_us = (int64_t)u * US;
        } else if (!tx &&
                   (rc = sim_opt_value(argc, argv, &i, "--machines-fraction", &v, &err)) != 0) {
            if (rc < 0 || parse_pct("--machines-fraction", v, &o->machines_pct, &err) < 0)
                return usage_error(tx, &err) + 100;
        } else if (tx && (rc = sim_opt_value(argc, argv, &i, "--x", &v, &err)) != 0) {
            if (rc < 0 || parse_x(v, o, &err) < 0)
                return usage_error(tx, &err) + 100;
        } else {
            lt_err_set(&err, LT_EINVAL, 0, 0, "unknown option '%s'", a);
            return usage_error(tx, &err) + 100;
        }
    }
    if (!o->trace) {
        lt_err_set(&err, LT_EINVAL, 0, 0, "missing --trace");
        return usage_error(tx, &err) + 100;
    }
    if (o->n_policy == 0) {
        lt_err_set(&err, LT_EINVAL, 0, 0, "missing --policy");
        return usage_error(tx, &err) + 100;
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
    int width = 24, fill = (int)(frac * width + 0.5);
    char bar[32];
    for (int k = 0; k < width; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[width] = '\0';
    if (final)
        fprintf(stderr, "\r[%s] %3.0f%% %zu runs done in %.1f s%40s\n", bar, frac * 100.0, n, t,
                "");
    else
        fprintf(stderr, "\r[%s] %3.0f%% runs %zu active%s | %.2f M rows/s | ETA %s   ", bar,
                frac * 100.0, active, simbuf, t > 0 ? (double)rows / t / 1e6 : 0.0, eta);
    fflush(stderr);
}

static int child_run(const struct opts *o, struct run *r, struct sim_progress *prog)
{
    struct lt_err err;
    lt_err_init(&err, o->trace);
    struct sim_replay_result *res = malloc(sizeof(*res));
    if (!res) {
        fprintf(stderr, "lotus-sim: out of memory\n");
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
                                    .until_us = o->until_us,
                                    .interval_us = o->interval_us,
                                    .skip_bad_lines = o->skip_bad_lines,
                                    .out_dir = r->dir,
                                    .task_csv = o->task_csv,
                                    .cache_bytes = (size_t)o->cache_mb << 20,
                                    .progress = prog};
    lt_lotes_table3_normalised(cls); /* Tran & Beck's classes in the trace's units */
    int rc = sim_replay_run(&cfg, res, &err);
    free(res);
    if (rc < 0) {
        fprintf(stderr, "\nlotus-sim: %s: ", pol_name(r->policy));
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    return SIM_EXIT_OK;
}

/* Runs every run, at most o->jobs at a time; returns the number that failed. */
static size_t run_all(const struct opts *o, struct run *runs, size_t n)
{
    struct sim_progress *prog =
        mmap(NULL, n * sizeof(*prog), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    bool bar = !o->quiet && isatty(STDERR_FILENO);
    size_t next = 0, running = 0, failed = 0;
    struct timespec t0;

    if (prog == MAP_FAILED) {
        fprintf(stderr, "lotus-sim: cannot map progress memory: %s\n", strerror(errno));
        return n;
    }
    memset(prog, 0, n * sizeof(*prog));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(stdout);
    fflush(stderr);
    while (next < n || running > 0) {
        while (next < n && running < o->jobs) {
            struct run *r = &runs[next];
            clock_gettime(CLOCK_MONOTONIC, &r->t0);
            r->pid = fork();
            if (r->pid < 0) {
                fprintf(stderr, "lotus-sim: fork: %s\n", strerror(errno));
                r->done = true;
                r->status = 1;
                failed++;
            } else if (r->pid == 0) {
                int st = child_run(o, r, &prog[next]);
                fflush(stderr);
                _exit(st);
            } else {
                running++;
            }
            next++;
        }
        int status;
        pid_t pid = waitpid(-1, &status, bar ? WNOHANG : 0);
        if (pid < 0 && errno != EINTR)
            break;
        if (pid > 0) {
            for (size_t k = 0; k < n; k++) {
                if (runs[k].pid != pid)
                    continue;
                runs[k].done = true;
                runs[k].status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
                if (runs[k].status != 0)
                    failed++;
                running--;
            }
            continue;
        }
        if (bar) {
            draw_progress(runs, n, prog, &t0, false);
            struct timespec d = {0, 200 * 1000 * 1000};
            nanosleep(&d, NULL);
        }
    }
    if (bar)
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

static int replay_main(int argc, char **argv, bool tx)
{
    struct opts o;
    struct lt_err err;
    int rc = parse_args(argc, argv, tx, &o);
    if (rc == 1)
        return SIM_EXIT_OK;
    if (rc != 0)
        return rc - 100;
    lt_err_init(&err, NULL);
    struct stat st;
    if (stat(o.trace, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "lotus-sim: %s: not a directory\n", o.trace);
        return SIM_EXIT_INPUT;
    }
    if (sim_make_dirs(o.out, &err) < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    size_t n_x = tx ? o.n_x : 1;
    size_t n = o.n_policy * n_x;
    struct run *runs = calloc(n, sizeof(*runs));
    if (!runs) {
        fprintf(stderr, "lotus-sim: out of memory\n");
        return SIM_EXIT_INPUT;
    }
    for (size_t xi = 0; xi < n_x; xi++) {
        for (size_t k = 0; k < o.n_policy; k++) {
            struct run *r = &runs[xi * o.n_policy + k];
            r->policy = o.policy[k];
            r->pct = tx ? o.x[xi] : o.machines_pct;
            if (tx)
                snprintf(r->dir, sizeof(r->dir), "%s/x%g/%s", o.out, r->pct, pol_name(r->policy));
            else
                snprintf(r->dir, sizeof(r->dir), "%s/%s", o.out, pol_name(r->policy));
            if (sim_make_dirs(r->dir, &err) < 0) {
                sim_err_print(&err);
                free(runs);
                return SIM_EXIT_INPUT;
            }
        }
    }
    size_t failed = run_all(&o, runs, n);
    if (failed) {
        fprintf(stderr, "lotus-sim: %zu of %zu runs failed:", failed, n);
        for (size_t k = 0; k < n; k++)
            if (runs[k].status != 0)
                fprintf(stderr, " %s", runs[k].dir);
        fprintf(stderr, "\n");
        free(runs);
        return SIM_EXIT_INPUT;
    }
    json_t **sum = calloc(n, sizeof(*sum));
    int status = SIM_EXIT_OK;
    for (size_t k = 0; k < n && sum; k++) {
        sum[k] = load_summary(runs[k].dir);
        if (!sum[k])
            status = SIM_EXIT_INPUT;
    }
    if (!sum || status != SIM_EXIT_OK) {
        if (sum)
            for (size_t k = 0; k < n; k++)
                json_decref(sum[k]);
        free(sum);
        free(runs);
        return SIM_EXIT_INPUT;
    }
    if (!tx) {
        print_table(sum, runs, n);
        if (o.report) {
            const char *names[MAX_POLICIES];
            char title[512];
            for (size_t k = 0; k < n; k++)
                names[k] = pol_name(runs[k].policy);
            snprintf(title, sizeof(title), "lotus-sim replay of %s", o.trace);
            if (sim_report_write(o.out, names, n, title, &err) < 0) {
                sim_err_print(&err);
                status = SIM_EXIT_INPUT;
            } else {
                printf("\nreport: %s/report.html\n", o.out);
                if (!sim_report_has_gnuplot())
                    fprintf(stderr, "lotus-sim: warning: gnuplot is not on PATH; the report "
                                    "has no plots (install gnuplot-nox)\n");
            }
        }
        printf("outputs: %s/<policy>/{summary.json,timeseries.csv,waiting.csv%s}\n", o.out,
               o.task_csv ? ",tasks.csv" : "");
    } else {
        /* T(x): tasks and jobs completed per x (rows) and policy (columns); tx.csv holds
         * the same in long form: x,policy,tasks_completed,jobs_completed. */
        static const char *what[2] = {"tasks", "jobs"};
        for (int w = 0; w < 2; w++) {
            printf("%sT(x): %s completed with x%% of the machines\n%-8s", w ? "\n" : "", what[w],
                   "x");
            for (size_t k = 0; k < o.n_policy; k++)
                printf(" %12s", pol_name(o.policy[k]));
            printf("\n");
            for (size_t xi = 0; xi < n_x; xi++) {
                printf("%-8g", o.x[xi]);
                for (size_t k = 0; k < o.n_policy; k++)
                    printf(" %12.0f", jnum(sum[xi * o.n_policy + k], what[w], "completed", NULL));
                printf("\n");
            }
        }
        char path[4200], *tmp = NULL;
        struct lt_err ferr;
        FILE *f;
        int frc = -1;

        lt_err_init(&ferr, NULL);
        snprintf(path, sizeof(path), "%s/tx.csv", o.out);
        if ((f = sim_tmp_open(path, &tmp, &ferr)) != NULL) {
            fprintf(f, "x,policy,tasks_completed,jobs_completed\n");
            for (size_t xi = 0; xi < n_x; xi++)
                for (size_t k = 0; k < o.n_policy; k++)
                    fprintf(f, "%g,%s,%.0f,%.0f\n", o.x[xi], pol_name(o.policy[k]),
                            jnum(sum[xi * o.n_policy + k], "tasks", "completed", NULL),
                            jnum(sum[xi * o.n_policy + k], "jobs", "completed", NULL));
            frc = sim_tmp_commit(f, tmp, path, 0, &ferr);
        }
        if (frc < 0) {
            sim_err_print(&ferr);
            status = SIM_EXIT_INPUT;
        } else {
            printf("\nT(x) table: %s; runs: %s/x<x>/<policy>/\n", path, o.out);
        }
    }
    for (size_t k = 0; k < n; k++)
        json_decref(sum[k]);
    free(sum);
    free(runs);
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
