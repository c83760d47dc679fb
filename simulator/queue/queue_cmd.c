/* queue_cmd.c -- `lotus-sim queue`: Simon & McGalliard's single-pool model (jobs of n cores
 * on C identical cores), every --order side by side on the same jobs (docs/queue.md
 * "lotus-sim queue", docs/cli.md).
 *
 * The jobs come from a CSV, an SWF log or the generator (workload.h), with their estimates
 * (--estimate), once; each --order item is a column, resolved by col_resolve (the only place
 * an order name is read) and run by col_run. A fixed or composite order is one lt_qsim_run;
 * a self-tuning order (`dynamic`, `dynamic-static`: lt_qtune.h) is reserved there and is just
 * another column: it fills the same struct q_col (schedule, summary, time series) and may add
 * its own files to its directory.
 *
 * Outputs: the whole --out DIR is written as DIR.tmp and swapped in only when complete
 * (outfile.h); SIGINT and SIGTERM are recorded (SIM_SIG_FLAG) and, at the next step, the
 * staging directory is removed and the process dies by the signal, leaving DIR as it was.
 * --force replaces an earlier DIR only if it is empty or a queue result (its summary.json
 * says "command": "queue"), so a mistyped --out never wipes another directory.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/opt.h"
#include "cli/outfile.h"
#include "queue/workload.h"
#include "report/queue_report.h"
#include "sim.h"

#include "lt_mem.h"
#include "lt_qsim.h"
#include "lt_qtune.h"
#include "lt_sla.h"
#include "cli/slafile.h"

#include <sys/wait.h>
#include "lt_queue.h"

#define MAX_ORDERS   16
#define ORDER_BUF    1024
#define NAME_CAP     96
#define PATH_CAP_Q   4200
#define DEFAULT_OUT  "out/queue"
#define PAPER_ORDERS "ljf,largest,sjf,smallest,fcfs"

struct q_opts {
    const char *workload;
    uint64_t cores;
    const char *order;
    const char *dispatch;
    const char *backfill;
    const char *estimate;
    const char *sla;
    uint64_t reprioritise_s;
    uint64_t retune_s;
    uint64_t jobs;
    uint64_t seed;
    const char *out;
    bool force, no_report, quiet;
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct q_opts, name, kind, field, arg, help, def)

static const struct sim_opt q_opt_rows[] = {
    OPT("--workload", SIM_OPT_STR, workload, "FILE|gen[:SPEC]",
        "the jobs: a CSV (arrival_s,tasks,runtime_s[,estimate_s]\n"
        "[,class]), an SWF log (.swf, Parallel Workloads Archive)\n"
        "or the generator, gen:n=N,load=RHO,tasks=A..B,...\n"
        "(docs/queue.md; not the paper's workload, which is unknown)",
        NULL),
    OPT("--cores", SIM_OPT_U64, cores, "C", "identical cores; required for CSV and gen",
        "the SWF\nheader's MaxProcs, else MaxNodes"),
    OPT("--order", SIM_OPT_STR, order, "LIST",
        "queue orders, one column each: fcfs, sjf, ljf, largest,\n"
        "smallest, composite:ALPHA,BETA,GAMMA, and the self-tuning\n"
        "dynamic[:GRID][:COST], dynamic-static[:GRID][:COST]\n"
        "(GRID alg1, paper64000 or LO:HI:STEP; COST makespan,\n"
        "mean-response, mean-wait, total-wait, mean-xf,\n"
        "neg-utilisation; default alg1, makespan); with --sla\n"
        "also sla-reward, sla-deadline, sla-slope[:H] (H s, 300)",
        "the paper's five:\n" PAPER_ORDERS),
    OPT("--dispatch", SIM_OPT_STR, dispatch, "rigid|fractional",
        "fractional: Algorithm 1 as printed, the last free\n"
        "cores go to part of the next job; rigid: a job starts\n"
        "with all its cores",
        "fractional"),
    OPT("--backfill", SIM_OPT_STR, backfill, "none|easy|relaxed:F|greedy",
        "who may pass a blocked head (rigid only)", "none"),
    OPT("--estimate", SIM_OPT_STR, estimate, "exact|noisy:CV|field",
        "the run-time estimates orders and backfill see:\n"
        "exact, lognormal noise of mean 1 and CV, or the\n"
        "file's (CSV estimate_s, SWF field 9)",
        "exact"),
    OPT("--sla", SIM_OPT_STR, sla, "SPEC|@FILE",
        "give every job this SLA (or an SLA file's one SLA)\nand report its rewards:\n"
        "by-deadline:rmax=1,pen=-1,d1=1h,d2=2h,\n"
        "cheap-and-simple:rmax=1,rmin=0.1,d0=0,k=0.000192 or\n"
        "example1:target=T,peak=P,offpeak=Q; times in s, m, h,\n"
        "d, or Nx = N times the job's estimate (docs/queue.md)",
        "none"),
    OPT("--reprioritise", SIM_OPT_SECS, reprioritise_s, "DURATION",
        "re-key time-varying composite orders at most this\noften (Ward: 60s)", "0: every instant"),
    OPT("--retune", SIM_OPT_SECS, retune_s, "DURATION",
        "dynamic: re-tune every DURATION instead of at every\njob completion",
        "0: at every completion"),
    OPT("-j", SIM_OPT_U64, jobs, "N",
        "self-tuning searches in N processes, 1..256 (each\ntakes a share of the triplets)", "2"),
    OPT("--seed", SIM_OPT_U64, seed, "N", "seed of gen and of noisy estimates", "1"),
    OPT("--out", SIM_OPT_STR, out, "DIR", "output directory, replaced whole", DEFAULT_OUT),
    OPT("--force", SIM_OPT_FLAG, force, NULL, "replace an earlier queue result in --out", NULL),
    OPT("--no-report", SIM_OPT_FLAG, no_report, NULL, "do not write report.html", NULL),
    OPT("--quiet", SIM_OPT_FLAG, quiet, NULL, "no progress lines (printed only on a terminal)",
        NULL),
};

static const struct sim_cmd_spec q_spec = {
    "queue",
    "--workload FILE|gen[:SPEC] [--cores C] [--order LIST]\n"
    "       [--dispatch rigid|fractional] [--backfill none|easy|relaxed:F|greedy]\n"
    "       [--estimate exact|noisy:CV|field] [--sla SPEC] [--reprioritise DURATION]\n"
    "       [--seed N] [--out DIR] [--force] [--no-report] [--quiet]",
    "Simon & McGalliard's single-pool queue model: jobs of n one-core tasks on C\n"
    "identical cores, one queue, each --order run on the same jobs and estimates.\n"
    "Prints the paper's table for every order side by side (makespan, the paper's\n"
    "\"Wait\"; utilisation; total wait; wait percentiles, mean response, bounded\n"
    "slowdown, expansion factor) and writes DIR/summary.json, DIR/table.csv,\n"
    "DIR/ORDER/jobs.csv, DIR/ORDER/timeseries.csv and DIR/report.html (the paper's\n"
    "Figures 7-9 per order). The paper's protocol is the default, --dispatch\n"
    "fractional --backfill none; an HPC batch system is --dispatch rigid --backfill\n"
    "easy. Under rigid dispatch a job wider than C is an error at its line.",
    "lotus-sim queue --workload tests/data/queue/jobs.csv --cores 16",
    "Exit status: 0 done, 1 the workload cannot be read (an error at FILE:LINE:FIELD)\n"
    "or a run failed, 2 usage error. SIGINT or SIGTERM leaves the earlier DIR as it was.",
    q_opt_rows,
    sizeof(q_opt_rows) / sizeof(q_opt_rows[0])};

/* What a column is: a fixed or composite order, or a self-tuning search (lt_qtune.h). */
enum q_col_kind { Q_COL_FIXED, Q_COL_DYNAMIC, Q_COL_STATIC };

/* A growable time series (the on_sample callback cannot fail: oom is reported after). */
struct q_series {
    struct lt_qsample *s;
    size_t n, cap;
    bool oom;
};

/* One column of the table: an order and its run. */
struct q_col {
    char name[NAME_CAP]; /* canonical name: the table's header and summary.json's "order" */
    char dir[NAME_CAP];  /* its directory under --out: the name with [^A-Za-z0-9._-] as _ */
    enum q_col_kind kind;
    struct lt_qorder order; /* Q_COL_FIXED: the order; Q_COL_STATIC: the triplet found */
    struct lt_qgrid grid;   /* self-tuning: the grid and the cost */
    enum lt_qcost cost;
    double *costs;                  /* Q_COL_STATIC: every triplet's cost (grid.csv) */
    double best_cost;               /* Q_COL_STATIC: the chosen triplet's */
    size_t best;                    /* Q_COL_STATIC: the chosen triplet's grid index */
    double *axis;                   /* Q_COL_STATIC: the grid's axis values (the heat map) */
    struct lt_qtune_retune *retune; /* Q_COL_DYNAMIC: each re-tuning (retune.csv) */
    size_t n_retune, cap_retune;
    bool retune_oom;
    double tune_wall_s; /* self-tuning: the searches' wall time */
    struct lt_qjob_out *out;
    struct lt_qsim_summary sum;
    struct q_series ts;
    double wall_s;
    double sla[SIM_QSLA_ROWS]; /* --sla: the SLA rows (sim_qsla_metrics) */
};

/* Everything the command resolved from its options and the workload. */
struct q_run {
    const struct q_opts *o;
    enum sim_qformat format;
    struct sim_qgen_spec gen;
    struct sim_qest est;
    enum lt_qdispatch dispatch;
    enum lt_qbackfill backfill;
    double relax_f;
    uint32_t cores;
    const char *cores_from; /* "--cores", "the SWF header's MaxProcs", "... MaxNodes" */
    struct lt_qjob *jobs;
    size_t n;
    struct sim_qload_info info;
    struct q_col *cols;
    size_t n_cols;
    char *cmdline;
    bool has_sla;           /* --sla given */
    struct lt_sla_spec sla; /* --sla parsed */
    struct lt_sla *slas;    /* --sla: job k's SLA (jobs[k].sla points here), owned */
};

static double secs_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

/* ---- orders -------------------------------------------------------------------------------- */

static bool is_self_tuning(const char *name)
{
    static const char *const st[] = {"dynamic", "dynamic-static"};
    for (size_t k = 0; k < 2; k++) {
        size_t l = strlen(st[k]);
        if (strncmp(name, st[k], l) == 0 && (name[l] == '\0' || name[l] == ':'))
            return true;
    }
    return false;
}

/* An unknown order: lt_qorder_find's message with the closest known name. */
static int order_unknown(const char *name, struct lt_err *err)
{
    const char *names[32];
    size_t n = 0;

    for (size_t k = 0; k < lt_qorder_count() && n < 30; k++) {
        const char *s = lt_qorder_name_at(k);
        names[n++] = strncmp(s, "composite", 9) == 0   ? "composite"
                     : strncmp(s, "sla-slope", 9) == 0 ? "sla-slope"
                                                       : s;
    }
    names[n++] = "dynamic";
    names[n++] = "dynamic-static";
    const char *near = sim_closest(name, names, n);
    sim_err_prefix(err, "--order: ");
    size_t l = strlen(err->text);
    if (near != NULL)
        snprintf(err->text + l, sizeof(err->text) - l, " (did you mean %s?)", near);
    return err->code;
}

/* dynamic[:GRID][:COST] or dynamic-static[:GRID][:COST] into c: the last ':' field is the cost
 * when it names one, the rest the grid (lt_qgrid_parse); defaults alg1 and makespan. */
static int self_tuning_resolve(const char *name, struct q_col *c, struct lt_err *err)
{
    bool stat = strncmp(name, "dynamic-static", 14) == 0;
    const char *rest = name + (stat ? 14 : 7);
    char grid[NAME_CAP] = "alg1";
    int rc;

    c->kind = stat ? Q_COL_STATIC : Q_COL_DYNAMIC;
    c->cost = LT_QCOST_MAKESPAN;
    if (*rest == ':')
        rest++;
    if (strlen(rest) >= sizeof(grid))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--order %.60s...: too long", name);
    if (*rest != '\0') {
        const char *colon = strrchr(rest, ':'), *last = colon ? colon + 1 : rest;
        enum lt_qcost cost;
        struct lt_err quiet;
        lt_err_init(&quiet, NULL);
        if (lt_qcost_find(last, &cost, &quiet) == 0) {
            c->cost = cost;
            snprintf(grid, sizeof(grid), "%.*s", colon ? (int)(colon - rest) : 0, rest);
            if (grid[0] == '\0')
                snprintf(grid, sizeof(grid), "alg1");
        } else {
            snprintf(grid, sizeof(grid), "%s", rest);
        }
    }
    if ((rc = lt_qgrid_parse(grid, &c->grid, err)) < 0) {
        char pre[NAME_CAP + 40];
        snprintf(pre, sizeof(pre), "--order %s: ", name);
        return sim_err_prefix(err, pre);
    }
    snprintf(c->name, sizeof(c->name), "%s:%s:%s", stat ? "dynamic-static" : "dynamic", grid,
             lt_qcost_name(c->cost));
    return 0;
}

/* Resolves one --order item into c: the only place an order name is read. */
static int col_resolve(const char *name, struct q_col *c, struct lt_err *err)
{
    int rc;

    memset(c, 0, sizeof(*c));
    if (is_self_tuning(name)) {
        if ((rc = self_tuning_resolve(name, c, err)) < 0)
            return rc;
    } else {
        if ((rc = lt_qorder_find(name, &c->order, err)) < 0)
            return rc == LT_ENOTFOUND ? order_unknown(name, err) : sim_err_prefix(err, "--order: ");
        c->kind = Q_COL_FIXED;
        lt_qorder_name(&c->order, c->name, sizeof(c->name));
    }
    for (size_t i = 0; i < sizeof(c->dir) - 1 && c->name[i] != '\0'; i++) {
        char ch = c->name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        c->dir[i] = ok ? ch : '_';
    }
    return 0;
}

static void on_sample(void *arg, const struct lt_qsample *s)
{
    struct q_series *t = arg;

    if (t->oom)
        return;
    if (t->n == t->cap) {
        size_t cap = t->cap * 2 + 1024;
        struct lt_qsample *p = lt_reallocarray(t->s, cap, sizeof(*p));
        if (p == NULL) {
            t->oom = true;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    t->s[t->n++] = *s;
}

/* ---- self-tuning: the searches, fanned out to -j processes ------------------------------- */

/* Costs triplets [first, last) into costs[0 .. last - first - 1]. */
typedef int slice_fn(void *arg, size_t first, size_t last, double *costs, struct lt_err *err);

static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* fn over [0, total), in j processes when j > 1 (each a contiguous share; its costs come back
 * through a pipe), into costs[0 .. total - 1]. A process that fails prints its error and exits
 * 1; the search then fails naming its share. */
static int fan_out(unsigned j, size_t total, slice_fn *fn, void *arg, double *costs,
                   struct lt_err *err)
{
    enum { MAXJ = 256 };
    pid_t pid[MAXJ];
    int fd[MAXJ], rc = 0;
    size_t lo[MAXJ + 1];

    if (j > total / 2)
        j = (unsigned)(total / 2);
    if (j <= 1)
        return fn(arg, 0, total, costs, err);
    for (unsigned k = 0; k <= j; k++)
        lo[k] = total * k / j;
    fflush(NULL);
    unsigned started = 0;
    for (; started < j; started++) {
        int p[2];
        if (pipe(p) != 0) {
            rc = lt_err_set(err, LT_EIO, 0, 0, "pipe: %s", strerror(errno));
            break;
        }
        pid[started] = fork();
        if (pid[started] < 0) {
            close(p[0]);
            close(p[1]);
            rc = lt_err_set(err, LT_EIO, 0, 0, "fork: %s", strerror(errno));
            break;
        }
        if (pid[started] == 0) { /* the child: its share, then its costs down the pipe */
            struct lt_err e;
            close(p[0]);
            for (unsigned q = 0; q < started; q++)
                close(fd[q]);
            lt_err_init(&e, NULL);
            size_t a = lo[started], b = lo[started + 1];
            if (fn(arg, a, b, costs + a, &e) < 0) {
                fprintf(stderr, "lotus-sim: %s\n", e.text);
                _exit(1);
            }
            _exit(write_full(p[1], costs + a, (b - a) * sizeof(*costs)) == 0 ? 0 : 1);
        }
        close(p[1]);
        fd[started] = p[0];
    }
    for (unsigned k = 0; k < started; k++) {
        size_t a = lo[k], b = lo[k + 1];
        int got = rc == 0 ? read_full(fd[k], costs + a, (b - a) * sizeof(*costs)) : 0, st = 0;
        close(fd[k]);
        while (waitpid(pid[k], &st, 0) < 0 && errno == EINTR)
            ;
        if (rc == 0 && (got < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0))
            rc = lt_err_set(err, LT_EIO, 0, 0,
                            "the search process for triplets %zu..%zu failed (%s)", a, b - 1,
                            WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "see its message above");
    }
    return rc;
}

/* dynamic-static: a share of the grid, each triplet run on the whole workload. */
struct static_arg {
    const struct lt_qsim_params *p;
    const struct q_run *r;
    const struct q_col *c;
};

static int static_slice(void *arg, size_t first, size_t last, double *costs, struct lt_err *err)
{
    const struct static_arg *a = arg;
    size_t best;
    double best_cost;
    return lt_qtune_static(a->p, a->r->jobs, a->r->n, &a->c->grid, a->c->cost, first, last, true,
                           costs, &best, &best_cost, NULL, err);
}

/* dynamic: a share of the grid on a fork of the live state. */
struct online_arg {
    const struct lt_qsim *live;
    const struct lt_qgrid *g;
    enum lt_qcost cost;
    unsigned j;
};

static int online_slice(void *arg, size_t first, size_t last, double *costs, struct lt_err *err)
{
    const struct online_arg *a = arg;
    return lt_qtune_eval(a->live, a->g, a->cost, first, last, costs, err);
}

static int online_eval(void *arg, const struct lt_qsim *live, const struct lt_qgrid *g,
                       enum lt_qcost c, double *costs, struct lt_err *err)
{
    struct online_arg a = {live, g, c, *(const unsigned *)arg};
    return fan_out(a.j, lt_qgrid_size(g), online_slice, &a, costs, err);
}

static void on_retune(void *arg, const struct lt_qtune_retune *rt)
{
    struct q_col *c = arg;
    if (c->retune_oom)
        return;
    if (c->n_retune == c->cap_retune) {
        size_t cap = c->cap_retune * 2 + 64;
        struct lt_qtune_retune *p = lt_reallocarray(c->retune, cap, sizeof(*p));
        if (p == NULL) {
            c->retune_oom = true;
            return;
        }
        c->retune = p;
        c->cap_retune = cap;
    }
    c->retune[c->n_retune++] = *rt;
    c->tune_wall_s += rt->wall_s;
}

/* dynamic-static: every triplet's cost over -j processes, the argmin (the incumbent, p's order
 * fcfs, kept on a tie), then the run of that triplet for the schedule, summary and series. */
static int col_run_static(const struct q_run *r, struct q_col *c, struct lt_qsim_params *p,
                          struct lt_err *err)
{
    size_t total = lt_qgrid_size(&c->grid);
    struct static_arg a = {p, r, c};
    struct timespec t0;
    int rc;

    if ((c->costs = lt_calloc(total, sizeof(*c->costs))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu triplets", total);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    void (*sample)(void *, const struct lt_qsample *) = p->on_sample;
    p->on_sample = NULL; /* the search's runs draw no series */
    rc = fan_out((unsigned)r->o->jobs, total, static_slice, &a, c->costs, err);
    p->on_sample = sample;
    c->tune_wall_s = secs_since(&t0);
    if (rc < 0)
        return rc;
    size_t best = lt_qtune_argmin(
        c->costs, total, lt_qgrid_index(&c->grid, p->order.alpha, p->order.beta, p->order.gamma));
    double al, be, ga;
    lt_qgrid_triplet(&c->grid, best, &al, &be, &ga);
    c->best = best;
    if ((c->axis = lt_calloc(c->grid.count, sizeof(*c->axis))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < c->grid.count; i++)
        c->axis[i] = lt_qgrid_value(&c->grid, i);
    c->best_cost = c->costs[best];
    if ((rc = lt_qorder_composite(&c->order, al, be, ga, err)) < 0)
        return rc;
    p->order = c->order;
    return lt_qsim_run(p, r->jobs, r->n, c->out, &c->sum, err);
}

/* dynamic: the online search, re-tuning at every completion or every --retune. */
static int col_run_dynamic(const struct q_run *r, struct q_col *c, struct lt_qsim_params *p,
                           struct lt_err *err)
{
    struct lt_qtune_online_params op;
    unsigned j = (unsigned)r->o->jobs;
    size_t retunes = 0;

    lt_qtune_online_default(&op, &c->grid, c->cost);
    if (r->o->retune_s > 0) {
        op.on_completion = false;
        op.retune_s = (double)r->o->retune_s;
    }
    op.eval = j > 1 ? online_eval : NULL;
    op.eval_arg = &j;
    op.on_retune = on_retune;
    op.retune_arg = c;
    int rc = lt_qtune_online(p, r->jobs, r->n, &op, c->out, &c->sum, &retunes, err);
    if (rc == 0 && c->retune_oom)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the re-tunings of '%s'", c->name);
    return rc;
}

/* Job k's realised reward under column c: its SLA at d = first start - arrival, the run
 * [start, start + run time) on its cores (Example 1's prices). NaN if it never started. */
static double job_reward(const struct q_run *r, const struct q_col *c, size_t k)
{
    const struct lt_qjob *j = &r->jobs[k];
    struct lt_sla_run run = {c->out[k].start_s, j->runtime_s, (double)j->tasks};

    if (isnan(c->out[k].start_s))
        return NAN;
    return lt_sla_reward(&r->slas[k], c->out[k].start_s - j->arrival_s, &run);
}

/* Job k's deadline: d1 (by-deadline), the target (example1), none (NaN: cheap-and-simple). */
static double job_deadline(const struct q_run *r, size_t k)
{
    const struct lt_sla *s = &r->slas[k];

    return s->kind == LT_SLA_BY_DEADLINE ? s->d1_s : s->kind == LT_SLA_EXAMPLE1 ? s->target_s : NAN;
}

/* Column c's SLA rows (sim_qsla_metrics) over the jobs that started. */
static void sla_rows(const struct q_run *r, struct q_col *c)
{
    double total = 0, neg = 0, on = 0, late = 0, w_on = 0, w_late = 0, started = 0;

    for (size_t k = 0; k < r->n; k++) {
        double rw = job_reward(r, c, k), dl = job_deadline(r, k);
        double d = c->out[k].start_s - r->jobs[k].arrival_s;

        if (isnan(rw))
            continue;
        started++;
        total += rw;
        neg += rw < 0;
        if (isnan(dl))
            continue;
        if (d > dl)
            late++, w_late += d;
        else
            on++, w_on += d;
    }
    bool has_dl = r->sla.sla.kind != LT_SLA_CHEAP_AND_SIMPLE;
    c->sla[0] = total;
    c->sla[1] = started > 0 ? total / started : NAN;
    c->sla[2] = started > 0 ? neg / started : NAN;
    c->sla[3] = has_dl ? on : NAN;
    c->sla[4] = has_dl ? late : NAN;
    c->sla[5] = has_dl && on > 0 ? w_on / on : NAN;
    c->sla[6] = has_dl && late > 0 ? w_late / late : NAN;
}

/* Runs column c on the run's jobs: its schedule, summary and time series. */
static int col_run(const struct q_run *r, struct q_col *c, struct lt_err *err)
{
    struct lt_qsim_params p;
    struct timespec t0;
    int rc;

    lt_qsim_params_default(&p, r->cores);
    p.dispatch = r->dispatch;
    p.backfill = r->backfill;
    p.relax_f = r->relax_f;
    p.reprioritise_s = (double)r->o->reprioritise_s;
    p.on_sample = on_sample;
    p.sample_arg = &c->ts;
    if ((c->out = lt_calloc(r->n + 1, sizeof(*c->out))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu job outcomes", r->n);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    switch (c->kind) {
    case Q_COL_FIXED:
        p.order = c->order;
        rc = lt_qsim_run(&p, r->jobs, r->n, c->out, &c->sum, err);
        break;
    case Q_COL_STATIC:
        rc = col_run_static(r, c, &p, err);
        break;
    case Q_COL_DYNAMIC:
        rc = col_run_dynamic(r, c, &p, err);
        break;
    default:
        rc = lt_err_set(err, LT_EINVAL, 0, 0, "order '%s': unknown kind", c->name);
    }
    c->wall_s = secs_since(&t0);
    if (rc == 0 && r->has_sla)
        sla_rows(r, c);
    if (rc == 0 && c->ts.oom)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the time series of '%s'", c->name);
    return rc;
}

static void cols_free(struct q_col *cols, size_t n)
{
    for (size_t k = 0; cols != NULL && k < n; k++) {
        lt_free(cols[k].out);
        lt_free(cols[k].ts.s);
        lt_free(cols[k].costs);
        lt_free(cols[k].axis);
        lt_free(cols[k].retune);
    }
    lt_free(cols);
}

/* Splits --order's LIST at commas into items[] (pointers into buf), a composite's three
 * numbers staying one item: "fcfs,composite:0,1,0,sjf" is fcfs, composite:0,1,0, sjf. */
static int orders_split(const char *list, char *buf, size_t cap, char **items, size_t *n,
                        struct lt_err *err)
{
    char *p = buf;

    *n = 0;
    if ((size_t)snprintf(buf, cap, "%s", list) >= cap)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--order: the list is over %zu bytes", cap - 1);
    while (p != NULL) {
        char *end = strchr(p, ',');
        if (strncmp(p, "composite:", 10) == 0)
            for (int k = 0; k < 2 && end != NULL; k++)
                end = strchr(end + 1, ',');
        if (end != NULL)
            *end = '\0';
        if (*p == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0, "--order '%s': an empty item", list);
        if (*n == MAX_ORDERS)
            return lt_err_set(err, LT_EINVAL, 0, 0, "--order: more than %d orders", MAX_ORDERS);
        items[(*n)++] = p;
        p = end != NULL ? end + 1 : NULL;
    }
    return 0;
}

/* --order LIST into r->cols; two items naming the same order are an error. */
static int orders_parse(struct q_run *r, struct lt_err *err)
{
    char buf[ORDER_BUF], *items[MAX_ORDERS];
    size_t n;
    int rc;

    if ((rc = orders_split(r->o->order, buf, sizeof(buf), items, &n, err)) < 0)
        return rc;
    if ((r->cols = lt_calloc(n, sizeof(*r->cols))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < n; k++) {
        if ((rc = col_resolve(items[k], &r->cols[k], err)) < 0)
            return rc;
        r->n_cols = k + 1;
        for (size_t j = 0; j < k; j++)
            if (strcmp(r->cols[j].dir, r->cols[k].dir) == 0)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "--order: '%s' and '%s' are the same order (directory '%s')",
                                  items[j], items[k], r->cols[k].dir);
    }
    return 0;
}

/* ---- options ------------------------------------------------------------------------------- */

static bool any_time_varying(const struct q_run *r)
{
    for (size_t k = 0; k < r->n_cols; k++)
        if (r->cols[k].kind != Q_COL_FIXED || lt_qorder_time_varying(&r->cols[k].order))
            return true;
    return false;
}

static bool any_kind(const struct q_run *r, enum q_col_kind kind)
{
    for (size_t k = 0; k < r->n_cols; k++)
        if (r->cols[k].kind == kind)
            return true;
    return false;
}

/* --sla SPEC, and the SLA orders' need of it. */
static int sla_check(struct q_run *r, struct lt_err *err)
{
    r->has_sla = r->o->sla != NULL;
    if (r->has_sla && r->o->sla[0] == '@') { /* an SLA file of one SLA (slafile.h) */
        struct sim_sla_named *f = NULL;
        size_t n = 0;
        int rc = sim_sla_file_load(r->o->sla + 1, &f, &n, err);
        if (rc == 0 && n != 1) {
            lt_err_set_source(err, r->o->sla + 1);
            rc = lt_err_set(err, LT_EINVAL, 0, 0,
                            "$.slas: %zu SLAs, but --sla gives every job one: keep one", n);
        }
        if (rc == 0)
            r->sla = f[0].spec;
        lt_free(f);
        if (rc < 0)
            return rc;
    } else if (r->has_sla && lt_sla_parse(r->o->sla, &r->sla, err) < 0)
        return sim_err_prefix(err, "--sla: ");
    for (size_t k = 0; !r->has_sla && k < r->n_cols; k++)
        if (r->cols[k].kind == Q_COL_FIXED && lt_qorder_uses_sla(&r->cols[k].order))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--order %s needs --sla SPEC: without it no job has an SLA "
                              "(e.g. --sla by-deadline:d1=2x,d2=4x)",
                              r->cols[k].name);
    return 0;
}

/* Every option's value, before the workload is read (usage errors). */
static int opts_check(struct q_run *r, const bool *seen, struct lt_err *err)
{
    const struct q_opts *o = r->o;
    bool given_cores = seen[sim_opt_index(&q_spec, "--cores")];
    int rc;

    if (o->workload == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "missing --workload FILE|gen[:SPEC]: a .csv, a .swf or the generator");
    if ((rc = sim_qformat_of(o->workload, &r->format, err)) < 0)
        return sim_err_prefix(err, "--workload: ");
    if (r->format == SIM_QFORMAT_GEN && (rc = sim_qgen_parse(o->workload, &r->gen, err)) < 0)
        return sim_err_prefix(err, "--workload: ");
    if (given_cores && (o->cores < 1 || o->cores > UINT32_MAX))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--cores %" PRIu64 ": not in 1..%" PRIu32, o->cores,
                          UINT32_MAX);
    if (!given_cores && r->format != SIM_QFORMAT_SWF)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--cores C is required with a %s workload (only an SWF header gives "
                          "a core count)",
                          r->format == SIM_QFORMAT_CSV ? "CSV" : "generated");
    r->cores = (uint32_t)o->cores;
    r->cores_from = "--cores";
    if ((rc = lt_qdispatch_find(o->dispatch, &r->dispatch, err)) < 0 ||
        (rc = lt_qbackfill_find(o->backfill, &r->backfill, &r->relax_f, err)) < 0 ||
        (rc = sim_qest_parse(o->estimate, &r->est, err)) < 0)
        return rc;
    if (r->dispatch == LT_QDISPATCH_FRACTIONAL && r->backfill != LT_QBACKFILL_NONE)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--backfill %s applies to --dispatch rigid only: fractional dispatch "
                          "leaves no core idle while work waits (give --dispatch rigid)",
                          o->backfill);
    if (r->format == SIM_QFORMAT_GEN && r->est.kind == SIM_QEST_FIELD)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--estimate field reads the file's estimates, and the generator "
                          "(--workload %s) has none: give exact or noisy:CV",
                          o->workload);
    if ((rc = orders_parse(r, err)) < 0)
        return rc;
    if ((rc = sla_check(r, err)) < 0)
        return rc;
    if (o->jobs < 1 || o->jobs > 256)
        return lt_err_set(err, LT_EINVAL, 0, 0, "-j %" PRIu64 ": not in 1..256", o->jobs);
    if (o->retune_s > 0 && !any_kind(r, Q_COL_DYNAMIC))
        sim_opt_warn_unused(&q_spec, seen, "--retune", "without a dynamic order");
    if (seen[sim_opt_index(&q_spec, "-j")] && !any_kind(r, Q_COL_DYNAMIC) &&
        !any_kind(r, Q_COL_STATIC))
        sim_opt_warn_unused(&q_spec, seen, "-j", "without a self-tuning order");
    if (o->reprioritise_s > 0 && !any_time_varying(r))
        sim_opt_warn_unused(&q_spec, seen, "--reprioritise",
                            "to these orders (only a composite with BETA != 0 is re-keyed)");
    return 0;
}

/* ---- the workload -------------------------------------------------------------------------- */

/* The largest job, 0 for none. */
static uint32_t widest(const struct lt_qjob *j, size_t n)
{
    uint32_t w = 0;
    for (size_t k = 0; k < n; k++)
        w = j[k].tasks > w ? j[k].tasks : w;
    return w;
}

/* Reads the file (CSV or SWF) with the rigid limit; C from the SWF header when not given. */
static int load_file(struct q_run *r, bool given_cores, bool *usage, struct lt_err *err)
{
    struct sim_qload_opts lo = {.need_estimates = r->est.kind == SIM_QEST_FIELD};
    bool rigid = r->dispatch == LT_QDISPATCH_RIGID;
    bool swf = r->format == SIM_QFORMAT_SWF;
    int rc;

    lo.max_tasks = rigid && given_cores ? r->cores : 0;
    rc = swf ? sim_qload_swf(r->o->workload, &lo, &r->jobs, &r->n, &r->info, err)
             : sim_qload_csv(r->o->workload, &lo, &r->jobs, &r->n, &r->info, err);
    if (rc < 0 || given_cores)
        return rc;
    *usage = true;
    if (r->info.max_procs <= 0 && r->info.max_nodes <= 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "the header has no '; MaxProcs:' or '; MaxNodes:' line: give --cores C");
    int64_t c = r->info.max_procs > 0 ? r->info.max_procs : r->info.max_nodes;
    r->cores_from =
        r->info.max_procs > 0 ? "the SWF header's MaxProcs" : "the SWF header's MaxNodes";
    if (c > (int64_t)UINT32_MAX)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "the header's %" PRId64 " cores: over %" PRIu32 ", give --cores C", c,
                          UINT32_MAX);
    r->cores = (uint32_t)c;
    *usage = false;
    if (!rigid || widest(r->jobs, r->n) <= r->cores)
        return 0;
    /* A job wider than the header's C: read again with the limit, for its line and field. */
    lt_free(r->jobs);
    r->jobs = NULL;
    lo.max_tasks = r->cores;
    rc = sim_qload_swf(r->o->workload, &lo, &r->jobs, &r->n, &r->info, err);
    return rc < 0 ? rc : lt_err_set(err, LT_EINVAL, 0, 0, "a job is wider than %s", r->cores_from);
}

/* --sla: every job's SLA from its estimate (a mixed "d1=2x,d2=1h" can fail for a long job: a
 * usage error naming the job). */
static int sla_resolve(struct q_run *r, bool *usage, struct lt_err *err)
{
    if ((r->slas = lt_calloc(r->n, sizeof(*r->slas))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu SLAs", r->n);
    for (size_t k = 0; k < r->n; k++) {
        if (lt_sla_resolve(&r->sla, r->jobs[k].estimate_s, &r->slas[k], err) < 0) {
            char pre[64];
            *usage = true;
            snprintf(pre, sizeof(pre), "--sla: job %" PRId64 ": ", r->jobs[k].id);
            return sim_err_prefix(err, pre);
        }
        r->jobs[k].sla = &r->slas[k];
    }
    return 0;
}

/* The jobs, then the estimates. Returns 0, or an error with *usage telling whether it is the
 * command line's (exit 2) or the input's (exit 1). */
static int load_jobs(struct q_run *r, const bool *seen, bool *usage, struct lt_err *err)
{
    bool given_cores = seen[sim_opt_index(&q_spec, "--cores")];
    int rc;

    *usage = r->format == SIM_QFORMAT_GEN;
    if (r->format == SIM_QFORMAT_GEN)
        rc = sim_qgen(&r->gen, r->cores, r->o->seed, &r->jobs, &r->n, err);
    else
        rc = load_file(r, given_cores, usage, err);
    if (rc < 0)
        return r->format == SIM_QFORMAT_GEN ? sim_err_prefix(err, "--workload: ") : rc;
    *usage = false;
    if (r->n == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: no job to schedule", r->o->workload);
    if ((rc = sim_qestimate(r->jobs, r->n, &r->est, r->o->seed, err)) < 0)
        return sim_err_prefix(err, "--estimate: ");
    return r->has_sla ? sla_resolve(r, usage, err) : 0;
}

/* ---- outputs ------------------------------------------------------------------------------- */

/* v printed exactly and briefly: %.15g when it reads back, else %.17g (table.csv). */
static void put_exact(FILE *f, double v)
{
    char buf[40];

    snprintf(buf, sizeof(buf), "%.15g", v);
    double back = strtod(buf, NULL);
    if (!(back <= v && back >= v) && !isnan(v))
        snprintf(buf, sizeof(buf), "%.17g", v);
    fputs(buf, f);
}

/* u in decimal. */
static void put_u64(FILE *f, uint64_t u)
{
    char buf[24], *p = buf + sizeof(buf);

    *--p = '\0';
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    fputs(p, f);
}

/* v rounded to 6 decimals (a microsecond for times), trailing zeros dropped: "12.5", "3";
 * %.17g beyond 9e9 or for NaN. The per-job and per-sample files hold millions of numbers:
 * this is several times faster than printf's %g. */
static void put_us(FILE *f, double v)
{
    char buf[48], *p = buf + sizeof(buf);

    if (!(fabs(v) < 9e9)) {
        fprintf(f, "%.17g", v);
        return;
    }
    long long u = llround(v * 1e6);
    unsigned long long a = u < 0 ? (unsigned long long)-u : (unsigned long long)u;
    unsigned long long ip = a / 1000000u, fp = a % 1000000u;
    int digits = 6;

    *--p = '\0';
    if (fp != 0) {
        for (; fp % 10 == 0; fp /= 10)
            digits--;
        for (; digits > 0; digits--, fp /= 10)
            *--p = (char)('0' + fp % 10);
        *--p = '.';
    }
    do
        *--p = (char)('0' + ip % 10);
    while ((ip /= 10) > 0);
    if (u < 0)
        *--p = '-';
    fputs(p, f);
}

typedef int writer_fn(FILE *f, const struct q_run *r, const struct q_col *c);

/* Writes path through path.tmp, renamed when every byte is there. */
static int write_file(const char *path, writer_fn *fn, const struct q_run *r, const struct q_col *c,
                      struct lt_err *err)
{
    char *tmp = NULL;
    FILE *f = sim_tmp_open(path, &tmp, err);
    int rc;

    if (f == NULL)
        return err->code;
    rc = fn(f, r, c) < 0 ? lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s'", path) : 0;
    return sim_tmp_commit(f, tmp, path, rc, err);
}

static int jobs_csv(FILE *f, const struct q_run *r, const struct q_col *c)
{
    fputs(r->has_sla ? "id,arrival_s,tasks,runtime_s,estimate_s,start_s,end_s,wait_s,reward\n"
                     : "id,arrival_s,tasks,runtime_s,estimate_s,start_s,end_s,wait_s\n",
          f);
    for (size_t k = 0; k < r->n; k++) {
        const struct lt_qjob *j = &r->jobs[k];
        put_u64(f, (uint64_t)j->id);
        fputc(',', f);
        put_us(f, j->arrival_s);
        fputc(',', f);
        put_u64(f, j->tasks);
        fputc(',', f);
        put_us(f, j->runtime_s);
        fputc(',', f);
        put_us(f, j->estimate_s);
        fputc(',', f);
        put_us(f, c->out[k].start_s);
        fputc(',', f);
        put_us(f, c->out[k].end_s);
        fputc(',', f);
        put_us(f, c->out[k].start_s - j->arrival_s);
        if (r->has_sla) {
            fputc(',', f);
            put_exact(f, job_reward(r, c, k));
        }
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

static int timeseries_csv(FILE *f, const struct q_run *r, const struct q_col *c)
{
    fputs("time_s,busy_cores,utilisation,jobs_running,jobs_queued\n", f);
    for (size_t k = 0; k < c->ts.n; k++) {
        const struct lt_qsample *s = &c->ts.s[k];
        put_us(f, s->time_s);
        fputc(',', f);
        put_u64(f, s->busy);
        fputc(',', f);
        put_us(f, (double)s->busy / (double)r->cores);
        fputc(',', f);
        put_u64(f, s->running);
        fputc(',', f);
        put_u64(f, s->queued);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

static int table_csv(FILE *f, const struct q_run *r, const struct q_col *c)
{
    (void)c;
    fputs("order,metric,value\n", f);
    for (size_t k = 0; k < r->n_cols; k++)
        for (size_t m = 0; m < sim_qn_metrics; m++) {
            fprintf(f, "%s,%s,", r->cols[k].name, sim_qmetrics[m].key);
            put_exact(f, sim_qmetric_value(m, &r->cols[k].sum));
            fputc('\n', f);
        }
    for (size_t k = 0; r->has_sla && k < r->n_cols; k++)
        for (size_t m = 0; m < SIM_QSLA_ROWS; m++) {
            if (isnan(r->cols[k].sla[m]))
                continue;
            fprintf(f, "%s,sla_%s,", r->cols[k].name, sim_qsla_metrics[m].key);
            put_exact(f, r->cols[k].sla[m]);
            fputc('\n', f);
        }
    return ferror(f) ? -1 : 0;
}

/* A JSON number, or null when not finite (a summary of no completed job). */
static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The SLA rows of c as a JSON object. */
static json_t *sla_json(const struct q_col *c)
{
    json_t *o = json_object();

    for (size_t m = 0; o != NULL && m < SIM_QSLA_ROWS; m++)
        json_object_set_new(o, sim_qsla_metrics[m].key, jnum(c->sla[m]));
    return o;
}

static json_t *col_json(const struct q_run *r, const struct q_col *c)
{
    const struct lt_qsim_summary *s = &c->sum;
    json_t *m = json_object();

    for (size_t k = 0; m != NULL && k < sim_qn_metrics; k++)
        json_object_set_new(m, sim_qmetrics[k].key,
                            k + 1 == sim_qn_metrics ? json_integer((json_int_t)s->events)
                                                    : jnum(sim_qmetric_value(k, s)));
    json_object_set_new(m, "utilisation", jnum(s->utilisation));
    json_object_set_new(m, "work_core_s", jnum(s->work_core_s));
    json_object_set_new(m, "first_arrival_s", jnum(s->first_arrival_s));
    json_object_set_new(m, "last_end_s", jnum(s->last_end_s));
    json_object_set_new(m, "instants", json_integer((json_int_t)s->instants));
    json_object_set_new(m, "max_queued", json_integer((json_int_t)s->max_queued));
    json_object_set_new(m, "jobs", json_integer((json_int_t)s->jobs));
    json_object_set_new(m, "completed", json_integer((json_int_t)s->completed));
    static const char *const kind[] = {"fixed", "dynamic", "dynamic-static"};
    bool dyn = c->kind == Q_COL_DYNAMIC;
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:f, s:o}", "order", c->name, "dir", c->dir,
                  "kind", kind[c->kind], "alpha", dyn ? json_null() : jnum(c->order.alpha), "beta",
                  dyn ? json_null() : jnum(c->order.beta), "gamma",
                  dyn ? json_null() : jnum(c->order.gamma), "metrics", m, "wall_s", c->wall_s,
                  "events_per_s", jnum(c->wall_s > 0 ? (double)s->events / c->wall_s : NAN));
    if (j != NULL && c->kind != Q_COL_FIXED) {
        json_t *t = json_pack("{s:f, s:f, s:f, s:I, s:s, s:f}", "grid_lo", c->grid.lo, "grid_hi",
                              c->grid.hi, "grid_step", c->grid.step, "triplets",
                              (json_int_t)lt_qgrid_size(&c->grid), "cost", lt_qcost_name(c->cost),
                              "search_wall_s", c->tune_wall_s);
        if (t != NULL && c->kind == Q_COL_STATIC)
            json_object_set_new(t, "best_cost", jnum(c->best_cost));
        if (t != NULL && c->kind == Q_COL_DYNAMIC)
            json_object_set_new(t, "retunes", json_integer((json_int_t)c->n_retune));
        json_object_set_new(j, "search", t);
    }
    if (j != NULL && r->has_sla)
        json_object_set_new(j, "sla", sla_json(c));
    return j;
}

static json_t *input_json(const struct q_run *r)
{
    const struct sim_qload_info *i = &r->info;
    static const char *const fmt[] = {"csv", "swf", "gen"};

    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I}",
                     "workload", r->o->workload, "format", fmt[r->format], "lines_read",
                     (json_int_t)i->n_lines, "jobs", (json_int_t)r->n, "skipped_runtime",
                     (json_int_t)i->skipped_runtime, "skipped_size", (json_int_t)i->skipped_size,
                     "skipped_partial_lines", (json_int_t)i->skipped_partial, "size_from_request",
                     (json_int_t)i->size_from_request, "cancelled_kept",
                     (json_int_t)i->cancelled_kept, "estimates_in_file", (json_int_t)i->n_estimates,
                     "time_offset_s", i->time_offset_s, "max_procs", (json_int_t)i->max_procs,
                     "max_nodes", (json_int_t)i->max_nodes);
}

static int summary_json(FILE *f, const struct q_run *r, const struct q_col *c)
{
    const struct q_opts *o = r->o;
    json_t *orders = json_array(), *cols = json_array(), *j;
    int rc;

    (void)c;
    for (size_t k = 0; k < r->n_cols; k++) {
        json_array_append_new(orders, json_string(r->cols[k].name));
        json_array_append_new(cols, col_json(r, &r->cols[k]));
    }
    j = json_pack("{s:s, s:s, s:s, s:{s:I, s:s, s:s, s:s, s:f, s:s, s:I, s:I, s:o}, s:o, s:o}",
                  "command", "queue", "lotus_version", SIM_VERSION, "command_line", r->cmdline,
                  "parameters", "cores", (json_int_t)r->cores, "cores_from", r->cores_from,
                  "dispatch", o->dispatch, "backfill", o->backfill, "relax_f", r->relax_f,
                  "estimate", o->estimate, "reprioritise_s", (json_int_t)o->reprioritise_s, "seed",
                  (json_int_t)o->seed, "orders", orders, "input", input_json(r), "orders", cols);
    if (j == NULL)
        return -1;
    if (r->has_sla)
        json_object_set_new(json_object_get(j, "parameters"), "sla", json_string(o->sla));
    rc = json_dumpf(j, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) < 0 || fputc('\n', f) < 0;
    json_decref(j);
    return rc ? -1 : 0;
}

/* The report's facts: one line each, as stdout's header. */
struct facts {
    char val[8][256];
    const char *key[8], *v[8];
    size_t n;
};

static void fact(struct facts *fs, const char *key, const char *fmt, ...) LT_PRINTF(3, 4);

static void fact(struct facts *fs, const char *key, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(fs->val[fs->n], sizeof(fs->val[0]), fmt, ap);
    va_end(ap);
    fs->key[fs->n] = key;
    fs->v[fs->n] = fs->val[fs->n];
    fs->n++;
}

static void facts_make(const struct q_run *r, struct facts *fs)
{
    const struct sim_qload_info *i = &r->info;
    size_t skipped = i->skipped_runtime + i->skipped_size;

    memset(fs, 0, sizeof(*fs));
    fact(fs, "workload", "%s", r->o->workload);
    if (r->format == SIM_QFORMAT_GEN)
        fact(fs, "jobs",
             "%zu generated (seed %" PRIu64 "; not the paper's workload, which is "
             "unknown)",
             r->n, r->o->seed);
    else
        fact(fs, "jobs",
             "%zu of %zu data lines read; %zu skipped (%zu run time <= 0, %zu no "
             "processor count), %zu partial-execution lines",
             r->n, i->n_lines, skipped, i->skipped_runtime, i->skipped_size, i->skipped_partial);
    fact(fs, "cores", "C = %" PRIu32 " (%s); widest job %" PRIu32, r->cores, r->cores_from,
         widest(r->jobs, r->n));
    fact(fs, "dispatch", "%s, backfill %s", r->o->dispatch, r->o->backfill);
    fact(fs, "estimates", "%s%s", r->o->estimate,
         r->est.kind == SIM_QEST_NOISY ? " (seeded by --seed)" : "");
    if (r->o->reprioritise_s > 0)
        fact(fs, "re-keying", "every %" PRIu64 " s at most", r->o->reprioritise_s);
    if (r->has_sla)
        fact(fs, "sla", "%s for every job%s", r->o->sla,
             r->sla.relative ? " (Nx: N times the job's estimate)" : "");
}

static int report_write(const struct q_run *r, const char *dir, bool *plotted, struct lt_err *err)
{
    struct sim_qcol *cc = lt_calloc(r->n_cols, sizeof(*cc));
    struct facts fs;
    int rc;

    if (cc == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < r->n_cols; k++)
        cc[k] = (struct sim_qcol){.name = r->cols[k].name,
                                  .sum = &r->cols[k].sum,
                                  .samples = r->cols[k].ts.s,
                                  .n_samples = r->cols[k].ts.n,
                                  .costs = r->cols[k].costs,
                                  .axis = r->cols[k].axis,
                                  .axis_n = r->cols[k].costs != NULL ? r->cols[k].grid.count : 0,
                                  .best = r->cols[k].best,
                                  .cost_name = lt_qcost_name(r->cols[k].cost),
                                  .sla = r->has_sla ? r->cols[k].sla : NULL};
    facts_make(r, &fs);
    struct sim_qreport rep = {cc,         r->n_cols,   r->cores,
                              fs.key,     fs.v,        fs.n,
                              r->cmdline, SIM_VERSION, r->has_sla ? r->o->sla : NULL};
    rc = sim_qreport_write(dir, &rep, plotted, err);
    lt_free(cc);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------- */

/* A signal arrived (SIM_SIG_FLAG): removes the staging directory, says so and dies by it. */
static void check_interrupt(const char *stage, const char *dir)
{
    int sig = sim_out_interrupted();

    if (sig == 0)
        return;
    if (stage[0] != '\0')
        (void)sim_remove_tree(stage, NULL);
    fprintf(stderr, "\nlotus-sim: %s: %s%s%s'%s' is as it was\n",
            sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)",
            stage[0] != '\0' ? "removed the unfinished '" : "nothing written", stage,
            stage[0] != '\0' ? "'; " : "; ", dir);
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig);
}

/* An existing --out: refused without --force; with it, only an empty directory or an earlier
 * queue result is replaced. */
static int out_check(const struct q_opts *o, struct lt_err *err)
{
    const char *paths[1] = {o->out};
    char sum[PATH_CAP_Q];
    json_t *j;
    bool ours;
    int rc;

    if ((rc = sim_out_refuse_existing(paths, 1, o->force, err)) < 0 || !sim_path_exists(o->out))
        return rc;
    if (rmdir(o->out) == 0)
        return 0; /* empty */
    snprintf(sum, sizeof(sum), "%s/summary.json", o->out);
    j = json_load_file(sum, 0, NULL);
    ours = j != NULL && json_is_string(json_object_get(j, "command")) &&
           strcmp(json_string_value(json_object_get(j, "command")), "queue") == 0;
    json_decref(j);
    if (!ours)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--out '%s' exists and is not a lotus-sim queue result (no summary.json "
                          "of a queue run): --force replaces only those; choose another --out",
                          o->out);
    return 0;
}

/* buf = "A/B" or "A/B/C" (c NULL): LT_EINVAL when it does not fit. */
static int join(char *buf, size_t cap, const char *a, const char *b, const char *c,
                struct lt_err *err)
{
    int w = c != NULL ? snprintf(buf, cap, "%s/%s/%s", a, b, c) : snprintf(buf, cap, "%s/%s", a, b);
    if (w < 0 || (size_t)w >= cap)
        return lt_err_set(err, LT_EINVAL, 0, 0, "path '%s/%s...' is too long", a, b);
    return 0;
}

/* grid.csv: every triplet of a dynamic-static search and its cost. */
static int grid_csv(FILE *f, const struct q_run *r, const struct q_col *c)
{
    (void)r;
    fprintf(f, "alpha,beta,gamma,%s\n", lt_qcost_name(c->cost));
    for (size_t k = 0; k < lt_qgrid_size(&c->grid); k++) {
        double a, b, g;
        lt_qgrid_triplet(&c->grid, k, &a, &b, &g);
        fprintf(f, "%.10g,%.10g,%.10g,", a, b, g);
        put_exact(f, c->costs[k]);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

/* retune.csv: each re-tuning of a dynamic order. */
static int retune_csv(FILE *f, const struct q_run *r, const struct q_col *c)
{
    (void)r;
    fprintf(f, "time_s,alpha,beta,gamma,%s,changed,queued,triplets,cpu_s,wall_s\n",
            lt_qcost_name(c->cost));
    for (size_t k = 0; k < c->n_retune; k++) {
        const struct lt_qtune_retune *t = &c->retune[k];
        put_exact(f, t->time_s);
        fprintf(f, ",%.10g,%.10g,%.10g,", t->alpha, t->beta, t->gamma);
        put_exact(f, t->cost);
        fprintf(f, ",%d,%zu,%zu,%.6f,%.6f\n", t->changed ? 1 : 0, t->queued, t->triplets, t->cpu_s,
                t->wall_s);
    }
    return ferror(f) ? -1 : 0;
}

/* Column c's directory under stage. */
static int col_write(const struct q_run *r, const struct q_col *c, const char *stage,
                     struct lt_err *err)
{
    char path[PATH_CAP_Q];
    int rc;

    if ((rc = join(path, sizeof(path), stage, c->dir, NULL, err)) < 0 ||
        (rc = sim_make_dirs(path, err)) < 0 ||
        (rc = join(path, sizeof(path), stage, c->dir, "jobs.csv", err)) < 0 ||
        (rc = write_file(path, jobs_csv, r, c, err)) < 0 ||
        (rc = join(path, sizeof(path), stage, c->dir, "timeseries.csv", err)) < 0 ||
        (rc = write_file(path, timeseries_csv, r, c, err)) < 0)
        return rc;
    if (c->kind == Q_COL_STATIC &&
        ((rc = join(path, sizeof(path), stage, c->dir, "grid.csv", err)) < 0 ||
         (rc = write_file(path, grid_csv, r, c, err)) < 0))
        return rc;
    if (c->kind == Q_COL_DYNAMIC &&
        ((rc = join(path, sizeof(path), stage, c->dir, "retune.csv", err)) < 0 ||
         (rc = write_file(path, retune_csv, r, c, err)) < 0))
        return rc;
    return 0;
}

/* Every output into stage (= DIR.tmp). */
static int outputs_write(const struct q_run *r, const char *stage, bool *plotted,
                         struct lt_err *err)
{
    char path[PATH_CAP_Q];
    int rc = 0;

    *plotted = false;
    for (size_t k = 0; rc == 0 && k < r->n_cols; k++) {
        check_interrupt(stage, r->o->out);
        rc = col_write(r, &r->cols[k], stage, err);
    }
    if (rc == 0 && (rc = join(path, sizeof(path), stage, "table.csv", NULL, err)) == 0)
        rc = write_file(path, table_csv, r, NULL, err);
    if (rc == 0 && (rc = join(path, sizeof(path), stage, "summary.json", NULL, err)) == 0)
        rc = write_file(path, summary_json, r, NULL, err);
    check_interrupt(stage, r->o->out);
    if (rc == 0 && !r->o->no_report)
        rc = report_write(r, stage, plotted, err);
    check_interrupt(stage, r->o->out);
    return rc;
}

static void print_header(const struct q_run *r)
{
    struct facts fs;

    facts_make(r, &fs);
    printf("lotus-sim queue: Simon & McGalliard's single-pool model\n");
    for (size_t k = 0; k < fs.n; k++)
        printf("  %-10s %s\n", fs.key[k], fs.v[k]);
    printf("\n");
}

/* Runs every column, prints the table, writes DIR. */
static int queue_run(struct q_run *r, struct lt_err *err)
{
    char stage[PATH_CAP_Q];
    bool bar = !r->o->quiet && isatty(STDERR_FILENO), plotted = false;
    int rc;

    if (strlen(r->o->out) + 8 >= sizeof(stage))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--out '%.60s...' is too long", r->o->out);
    for (size_t k = 0; k < r->n_cols; k++) {
        if (bar)
            fprintf(stderr, "lotus-sim: queue: %s (%zu of %zu) ...", r->cols[k].name, k + 1,
                    r->n_cols);
        if ((rc = col_run(r, &r->cols[k], err)) < 0) {
            char pre[NAME_CAP + 16];
            snprintf(pre, sizeof(pre), "order %s: ", r->cols[k].name);
            return sim_err_prefix(err, pre);
        }
        if (bar)
            fprintf(stderr, " %.3f s\n", r->cols[k].wall_s);
        if (sim_out_interrupted())
            check_interrupt("", r->o->out);
    }
    print_header(r);
    struct sim_qcol *cc = lt_calloc(r->n_cols, sizeof(*cc));
    if (cc == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < r->n_cols; k++)
        cc[k] = (struct sim_qcol){
            .name = r->cols[k].name, .sum = &r->cols[k].sum, .sla = r->cols[k].sla};
    sim_qtable_print(stdout, cc, r->n_cols);
    printf("(makespan = last end - first arrival, the column the paper calls \"Wait\"; "
           "docs/queue.md)\n");
    if (r->has_sla) {
        printf("\nSLA rewards (--sla %s; a job's reward at d = first start - arrival):\n",
               r->o->sla);
        sim_qsla_table_print(stdout, cc, r->n_cols);
        printf("(late = started after d1, or Example 1's target: sla-reward starves them; "
               "docs/queue.md)\n");
    }
    lt_free(cc);
    if ((rc = sim_stage_open(r->o->out, stage, sizeof(stage), err)) < 0)
        return rc;
    sim_out_track(stage);
    rc = outputs_write(r, stage, &plotted, err);
    if (rc == 0)
        rc = sim_stage_commit(stage, r->o->out, err);
    if (rc < 0)
        (void)sim_remove_tree(stage, NULL);
    sim_out_forget(stage);
    if (rc < 0)
        return rc;
    printf("\noutputs: %s/{summary.json,table.csv%s,<order>/jobs.csv,<order>/timeseries.csv}\n",
           r->o->out, r->o->no_report ? "" : ",report.html");
    for (size_t k = 0; k < r->n_cols; k++) {
        const struct q_col *c = &r->cols[k];
        if (c->kind == Q_COL_STATIC)
            printf("%s: triplet (%.10g, %.10g, %.10g) of %zu, %s %.10g, searched in %.3f s; "
                   "%s/%s/grid.csv\n",
                   c->name, c->order.alpha, c->order.beta, c->order.gamma, lt_qgrid_size(&c->grid),
                   lt_qcost_name(c->cost), c->best_cost, c->tune_wall_s, r->o->out, c->dir);
        else if (c->kind == Q_COL_DYNAMIC)
            printf("%s: %zu re-tunings of %zu triplets, searched in %.3f s; %s/%s/retune.csv\n",
                   c->name, c->n_retune, lt_qgrid_size(&c->grid), c->tune_wall_s, r->o->out,
                   c->dir);
    }
    if (!r->o->no_report && !plotted)
        fprintf(stderr,
                "lotus-sim: warning: gnuplot is not on PATH; %s/report.html has no "
                "plots (install gnuplot-nox)\n",
                r->o->out);
    return 0;
}

/* --out without its trailing slashes ("out/queue/" would stage inside itself). */
static void trim_out(struct q_opts *o, char *buf, size_t cap)
{
    size_t n;

    snprintf(buf, cap, "%s", o->out);
    n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    o->out = buf;
}

int sim_cmd_queue(int argc, char **argv)
{
    struct q_opts o = {.order = PAPER_ORDERS,
                       .dispatch = "fractional",
                       .backfill = "none",
                       .estimate = "exact",
                       .seed = 1,
                       .jobs = 2,
                       .out = DEFAULT_OUT};
    bool seen[sizeof(q_opt_rows) / sizeof(q_opt_rows[0])] = {false}, usage = false;
    struct q_run r = {.o = &o};
    struct lt_err err;
    char out[PATH_CAP_Q];
    int rc, status = SIM_EXIT_OK;

    lt_err_init(&err, NULL);
    rc = sim_opt_parse(&q_spec, argc, argv, &o, seen, &err);
    if (rc == 1)
        return SIM_EXIT_OK;
    if (rc == 0) {
        trim_out(&o, out, sizeof(out));
        rc = opts_check(&r, seen, &err);
    }
    if (rc == 0)
        rc = out_check(&o, &err);
    if (rc < 0) {
        cols_free(r.cols, r.n_cols);
        return sim_usage_error(q_spec.name, &err);
    }
    sim_out_signals(SIM_SIG_FLAG);
    if ((rc = load_jobs(&r, seen, &usage, &err)) < 0) {
        status = usage ? sim_usage_error(q_spec.name, &err) : (sim_err_print(&err), SIM_EXIT_INPUT);
    } else if ((r.cmdline = sim_command_line(argc, argv)) == NULL) {
        fprintf(stderr, "lotus-sim: out of memory\n");
        status = SIM_EXIT_INPUT;
    } else if (queue_run(&r, &err) < 0) {
        sim_err_print(&err);
        status = SIM_EXIT_INPUT;
    }
    lt_free(r.cmdline);
    lt_free(r.jobs);
    lt_free(r.slas);
    cols_free(r.cols, r.n_cols);
    return status;
}
