/* bench_queue.c -- the single-pool queue simulator's speed (eviction/lt_qsim.h): events per
 * second of lt_qsim_run for every fixed order and a time-varying composite, under each
 * dispatch and backfill mode, one JSON line per run.
 *
 * Workload (synthetic; not the paper's, whose workload is unknown): --jobs jobs on --cores
 * cores; sizes log-uniform in 1..--max-size cores, run times log-uniform in 10 s..10 h,
 * estimates exact, Poisson arrivals at the rate that offers --load times the cores' capacity.
 * Events are arrivals plus ends of running pieces (lt_qsim_summary.events); the time is the
 * whole lt_qsim_run (validation, ranking, the run, the summary), the median of --repeat.
 * Target (issue 22): >= 10^6 events/s for fixed orders on 100,000 jobs / 10,000 cores.
 *
 * Then the self-tuning search (eviction/lt_qtune.h): one full retune (lt_qtune_eval over the
 * whole grid) of a live state with about 100 queued jobs, with and without the pruning, per
 * dispatch mode; one JSON line each ("bench":"qtune"): seconds, triplets/s, simulations run.
 * The live state: 110 jobs arriving at 0 on 64 cores (sizes log-uniform 1..16 cores, run
 * times log-uniform 10 s..1 h, exact estimates), taken at the first completion. Target (issue
 * 22): one 9,261-triplet retune of a 100-job queue in under 1 s on one core. --smoke uses the
 * grid -1:1:0.5 (125 triplets) and checks the pruned costs equal the unpruned ones.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "lt_err.h"
#include "lt_mem.h"
#include "lt_qsim.h"
#include "lt_qtune.h"
#include "lt_rng.h"

#define PROG "bench_queue"

#define DEFAULT_JOBS   100000
#define DEFAULT_CORES  10000
#define DEFAULT_REPEAT 3
#define SMOKE_JOBS     3000
#define SMOKE_CORES    300
#define TARGET_EPS     1e6

struct opts {
    long jobs, cores, repeat, max_size;
    double load;
    uint64_t seed;
    bool smoke;
};

/* Order, dispatch, backfill of each measured run; fixed orders first. */
static const char *const runs[][3] = {
    {"fcfs", "rigid", "none"},
    {"sjf", "rigid", "none"},
    {"ljf", "rigid", "none"},
    {"largest", "rigid", "none"},
    {"smallest", "rigid", "none"},
    {"fcfs", "rigid", "easy"},
    {"sjf", "rigid", "easy"},
    {"fcfs", "rigid", "greedy"},
    {"fcfs", "fractional", "none"},
    {"sjf", "fractional", "none"},
    {"composite:-0.1,-0.3,-0.4", "rigid", "none"},
    {"composite:-0.1,-0.3,-0.4", "fractional", "none"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [--jobs N] [--cores N] [--max-size N] [--load X] [--repeat N]\n"
               "       [--seed N] [--smoke] [--help]\n"
               "\n"
               "Events/s of the queue simulator (lt_qsim_run) on a synthetic workload, for each\n"
               "order and dispatch/backfill mode; one JSON line per run. Exit 1 if a run fails,\n"
               "2 on a bad option.\n"
               "\n"
               "  --jobs N      jobs (default 100000)\n"
               "  --cores N     cores (default 10000)\n"
               "  --max-size N  largest job, cores (default cores / 10)\n"
               "  --load X      offered load, 0 < X <= 4 (default 0.95)\n"
               "  --repeat N    runs per line, median reported (default 3)\n"
               "  --seed N      default 1\n"
               "  --smoke       3000 jobs on 300 cores, one run each: correctness only\n");
}

static int parse_num(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (*s == '\0' || *end != '\0' || !(v >= lo && v <= hi)) {
        fprintf(stderr, PROG ": %s '%s' is not a number in %g..%g\n", flag, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const char *const flags[] = {"--jobs",   "--cores", "--max-size", "--load",
                                        "--repeat", "--seed",  NULL};
    const char *v[6] = {NULL};
    double x[6] = {DEFAULT_JOBS, DEFAULT_CORES, 0, 0.95, DEFAULT_REPEAT, 1};
    const double hi[6] = {1e7, 1e7, 1e7, 4, 1000, 1e15};
    int rc;

    o->smoke = false;
    if ((rc = bench_scan_args(PROG, argc, argv, flags, v, &o->smoke, usage)) != 0)
        return rc > 0 ? 1 : -1;
    if (o->smoke) {
        x[0] = SMOKE_JOBS;
        x[1] = SMOKE_CORES;
        x[4] = 1;
    }
    for (int k = 0; k < 6; k++)
        if (v[k] != NULL && parse_num(flags[k], v[k], k == 2 ? 0 : 1e-9, hi[k], &x[k]) < 0)
            return -1;
    o->jobs = (long)x[0];
    o->cores = (long)x[1];
    o->max_size = x[2] >= 1 ? (long)x[2] : (o->cores / 10 > 0 ? o->cores / 10 : 1);
    o->load = x[3];
    o->repeat = (long)x[4] > 0 ? (long)x[4] : 1;
    o->seed = (uint64_t)x[5];
    if (o->max_size > o->cores) {
        fprintf(stderr, PROG ": --max-size %ld is above --cores %ld\n", o->max_size, o->cores);
        return -1;
    }
    return 0;
}

/* Log-uniform in [lo, hi]. */
static double log_uniform(struct lt_rng *r, double lo, double hi)
{
    return lo * exp(lt_rng_uniform(r) * log(hi / lo));
}

static struct lt_qjob *make_jobs(const struct opts *o)
{
    struct lt_qjob *jobs = lt_calloc((size_t)o->jobs, sizeof(*jobs));
    struct lt_rng r;
    double work = 0, t = 0, mean_gap;

    if (jobs == NULL)
        return NULL;
    lt_rng_init(&r, o->seed, LT_RNG_WORKLOAD);
    for (long j = 0; j < o->jobs; j++) {
        uint32_t n = (uint32_t)floor(log_uniform(&r, 1, (double)o->max_size + 1));
        double rt = round(log_uniform(&r, 10, 36000));

        n = n < 1 ? 1 : n > (uint32_t)o->max_size ? (uint32_t)o->max_size : n;
        jobs[j] = (struct lt_qjob){j, 0, n, rt, rt, -1, NULL};
        work += n * rt;
    }
    mean_gap = work / ((double)o->jobs * o->load * (double)o->cores);
    for (long j = 0; j < o->jobs; j++) {
        jobs[j].arrival_s = round(t);
        t += -mean_gap * log(1 - lt_rng_uniform(&r));
    }
    return jobs;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Runs one line of runs[] --repeat times and prints its JSON line; 0 or -1. */
static int measure(const struct opts *o, const struct lt_qjob *jobs, const char *const run[3])
{
    struct lt_qsim_params p;
    struct lt_qsim_summary sum;
    struct lt_err err;
    double t[1000];
    bool fixed;

    lt_err_init(&err, NULL);
    lt_qsim_params_default(&p, (uint32_t)o->cores);
    if (lt_qorder_find(run[0], &p.order, &err) < 0 ||
        lt_qdispatch_find(run[1], &p.dispatch, &err) < 0 ||
        lt_qbackfill_find(run[2], &p.backfill, &p.relax_f, &err) < 0)
        goto out_fail;
    fixed = !lt_qorder_time_varying(&p.order);
    for (long k = 0; k < o->repeat; k++) {
        double t0 = now_s();
        if (lt_qsim_run(&p, jobs, (size_t)o->jobs, NULL, &sum, &err) < 0)
            goto out_fail;
        t[k] = now_s() - t0;
    }
    qsort(t, (size_t)o->repeat, sizeof(*t), cmp_double);
    printf("{\"bench\":\"queue\",\"order\":\"%s\",\"dispatch\":\"%s\",\"backfill\":\"%s\","
           "\"jobs\":%ld,\"cores\":%ld,\"load\":%g,\"events\":%llu,\"instants\":%llu,"
           "\"max_queued\":%zu,\"makespan_s\":%.0f,\"utilisation\":%.4f,\"wait_mean_s\":%.1f,"
           "\"run_s\":%.4f,\"events_per_s\":%.0f,\"target_events_per_s\":%s,\"smoke\":%s}\n",
           run[0], run[1], run[2], o->jobs, o->cores, o->load, (unsigned long long)sum.events,
           (unsigned long long)sum.instants, sum.max_queued, sum.makespan_s, sum.utilisation,
           sum.wait_mean_s, t[o->repeat / 2], (double)sum.events / t[o->repeat / 2],
           fixed ? "1e6" : "null", o->smoke ? "true" : "false");
    if (sum.completed != (size_t)o->jobs) {
        fprintf(stderr, PROG ": %s %s %s: %zu of %ld jobs completed\n", run[0], run[1], run[2],
                sum.completed, o->jobs);
        return -1;
    }
    return 0;

out_fail:
    fprintf(stderr, PROG ": %s %s %s: %s\n", run[0], run[1], run[2], err.text);
    return -1;
}

/* The retune benchmark's live state: its jobs (owned by the caller) and the simulator at the
 * first completion, with the instant's dispatch pending. NULL on failure (printed). */
static struct lt_qsim *retune_state(const char *dispatch, const char *backfill,
                                    struct lt_qjob *jobs, size_t n)
{
    struct lt_qsim_params p;
    struct lt_qsim *s;
    struct lt_err err;
    struct lt_rng r;
    bool done = false;

    lt_rng_init(&r, 7, LT_RNG_WORKLOAD);
    for (size_t j = 0; j < n; j++) {
        uint32_t size = (uint32_t)floor(log_uniform(&r, 1, 17));
        double rt = round(log_uniform(&r, 10, 3600));

        jobs[j] = (struct lt_qjob){(int64_t)j, 0, size > 16 ? 16 : size, rt, rt, -1, NULL};
    }
    lt_err_init(&err, NULL);
    lt_qsim_params_default(&p, 64);
    if (lt_qdispatch_find(dispatch, &p.dispatch, &err) < 0 ||
        lt_qbackfill_find(backfill, &p.backfill, &p.relax_f, &err) < 0 ||
        (s = lt_qsim_new(&p, jobs, n, &err)) == NULL) {
        fprintf(stderr, PROG ": retune state: %s\n", err.text);
        return NULL;
    }
    while (lt_qsim_completed(s) == 0 && !done) {
        if (lt_qsim_advance(s, &done, &err) < 0) {
            fprintf(stderr, PROG ": retune state: %s\n", err.text);
            lt_qsim_free(s);
            return NULL;
        }
    }
    return s;
}

/* One full retune per mode, pruned and not; JSON lines. 0 or -1. */
static int measure_retune(const struct opts *o)
{
    static const char *const modes[][2] = {
        {"rigid", "none"}, {"fractional", "none"}, {"rigid", "easy"}};
    struct lt_qjob jobs[110];
    struct lt_qgrid g;
    struct lt_err err;
    double *costs[2] = {NULL, NULL};
    int rc = 0;

    lt_err_init(&err, NULL);
    if (lt_qgrid_parse(o->smoke ? "-1:1:0.5" : "alg1", &g, &err) < 0)
        return -1;
    costs[0] = lt_calloc(lt_qgrid_size(&g), sizeof(double));
    costs[1] = lt_calloc(lt_qgrid_size(&g), sizeof(double));
    for (size_t m = 0; m < 3 && rc == 0 && costs[0] != NULL && costs[1] != NULL; m++) {
        struct lt_qsim *s = retune_state(modes[m][0], modes[m][1], jobs, 110);

        if (s == NULL) {
            rc = -1;
            break;
        }
        for (int prune = 1; prune >= 0 && rc == 0; prune--) {
            struct lt_qtune_stats st;
            double t0 = now_s(), t;

            if (lt_qtune_eval_opt(s, &g, LT_QCOST_MAKESPAN, 0, lt_qgrid_size(&g), prune,
                                  costs[prune], &st, &err) < 0) {
                fprintf(stderr, PROG ": retune: %s\n", err.text);
                rc = -1;
                break;
            }
            t = now_s() - t0;
            printf("{\"bench\":\"qtune\",\"dispatch\":\"%s\",\"backfill\":\"%s\","
                   "\"cores\":64,\"queued\":%zu,\"triplets\":%zu,\"pruned\":%s,"
                   "\"simulated\":%zu,\"retune_s\":%.4f,\"triplets_per_s\":%.0f,"
                   "\"target_retune_s\":%s,\"smoke\":%s}\n",
                   modes[m][0], modes[m][1], lt_qsim_queued(s), st.triplets,
                   prune ? "true" : "false", st.simulated, t, (double)st.triplets / t,
                   o->smoke ? "null" : "1", o->smoke ? "true" : "false");
        }
        for (size_t k = 0; rc == 0 && k < lt_qgrid_size(&g); k++) {
            if (memcmp(&costs[0][k], &costs[1][k], sizeof(double)) != 0) {
                fprintf(stderr, PROG ": retune %s %s: triplet %zu costs %.17g pruned, %.17g not\n",
                        modes[m][0], modes[m][1], k, costs[1][k], costs[0][k]);
                rc = -1;
            }
        }
        lt_qsim_free(s);
    }
    if (costs[0] == NULL || costs[1] == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = -1;
    }
    lt_free(costs[0]);
    lt_free(costs[1]);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct lt_qjob *jobs;
    int rc = 0, prc = parse_opts(argc, argv, &o);

    if (prc != 0)
        return prc > 0 ? 0 : 2;
    if ((jobs = make_jobs(&o)) == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]) && rc == 0; k++)
        rc = measure(&o, jobs, runs[k]);
    if (rc == 0)
        rc = measure_retune(&o);
    lt_free(jobs);
    return rc == 0 ? 0 : 1;
}
