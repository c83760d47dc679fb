/* bench_choose.c -- placement benchmark: lt_policy_choose through its index vs a naive scan.
 *
 * What: for each policy, a fresh cluster of --machines machines with the capacity mix of the
 * Google 2011 cell (ten configurations, shuffled over the machine indexes), warmed up to
 * --load of its CPU capacity, then --ops mixed placements and removals that keep the load
 * near that target. Every lt_policy_choose is timed on its own; every K-th one (about 2,000
 * per policy) is also answered by the naive path, lt_policy_rank over machines 0..n-1 and
 * then lt_scores_best, on the same state and with a copy of the same RNG, and timed too.
 * lt_cluster_place and lt_cluster_remove are timed as "updates".
 *
 * Why in one run: DESIGN.md section 9 states the targets as ratios measured in one run
 * (median choose <= 2 us on 12,500 machines, >= 100x faster than the naive scan), so both
 * paths run in one process on identical states and the ratio does not depend on the host.
 * The naive samples double as a fast == naive property test at cell scale: lt_score.h
 * promises that choose returns exactly what the scan returns and draws the same numbers, so
 * any difference is a library bug, printed on stderr and turned into exit status 1.
 *
 * Workload: requests are lognormal, with medians and spreads of the order of the trace's
 * task requests (cpu 0.02, mem 0.015, disk 0.0003, sigma 1, clamped), drawn from the
 * LT_RNG_WORKLOAD stream of --seed; place-or-remove decisions and removal victims come from
 * a stream of their own, so every policy sees the same sequence of requests even though
 * their placements, and hence the decisions, differ.
 *
 * Output: one JSON object per policy on stdout (docs/benchmarks.md lists the keys, whose
 * order is fixed); progress and diagnostics go to stderr. The timer overhead is measured
 * and reported but never subtracted.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
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
#include "lt_rng.h"
#include "lt_cluster.h"
#include "lt_score.h"

#define PROG "bench_choose"

/* Defaults: the Google 2011 cell has 12,583 machines over the trace (~12,500 at a time); a
 * million operations (half of them chooses) give stable tails, 5,000 samples above p99. */
#define DEFAULT_MACHINES 12500
#define DEFAULT_OPS      1000000
#define DEFAULT_LOAD     0.75
#define SMOKE_MACHINES   2000
#define SMOKE_OPS        20000

/* Upper bound of --ops: two uint32 samples per op must fit in memory (800 MB here). */
#define MAX_OPS 100000000

/* Naive checks per policy: about NAIVE_SAMPLES, i.e. one every K = ops / (2 NAIVE_SAMPLES)
 * chooses, since about half of the ops are placements (the load is held steady). The smoke
 * run is a correctness test first and checks one choose in SMOKE_NAIVE_EVERY. */
#define NAIVE_SAMPLES     2000
#define SMOKE_NAIVE_EVERY 4

/* The warm-up stops after this many consecutive tasks that fit nowhere: the cluster is then
 * as full as this request stream can make it, whatever --load asked for. */
#define WARMUP_MAX_MISSES 100

/* Back-to-back clock_gettime pairs whose median is the reported timer overhead. */
#define TIMER_PAIRS 100001

/* Mismatches printed in full per policy; the rest are only counted. */
#define MAX_PRINTED_MISMATCHES 10

/* RNG stream of the place-or-remove decisions; lt_rng.h's own streams are 0..3. */
#define OPS_STREAM 16

/* Box-Muller needs 2 pi; M_PI is not part of C11. */
#define TWO_PI 6.283185307179586476925286766559

/* Longest machine name: "m" and up to 8 digits (LT_MAX_MACHINES < 10^8), with the NUL. */
#define NAME_BYTES 16

/* Command-line options after defaults were applied. */
struct opts {
    const struct lt_policy **pol; /* owned array of borrowed policies, in --policy order */
    size_t n_pol;                 /* policies to run */
    size_t machines;              /* cluster size */
    uint64_t ops;                 /* measured operations per policy */
    uint64_t seed;                /* cluster, workload and policy seed */
    double load;                  /* target share of total CPU capacity allocated */
    bool smoke;                   /* --smoke: small defaults, many naive checks */
};

/* Durations in nanoseconds, one per timed call (uint32: a call of 4 s saturates). */
struct samples {
    uint32_t *v; /* owned */
    size_t n;    /* recorded */
    size_t cap;  /* allocated; callers never record more */
};

/* Request generator: lognormal components from one RNG stream. */
struct workload {
    struct lt_rng rng; /* LT_RNG_WORKLOAD of --seed */
    bool have_spare;   /* Box-Muller makes two normals; the second waits here */
    double spare;      /* the waiting normal */
    int64_t next_id;   /* task id of the next request */
};

/* A live placement as the benchmark remembers it, to remove a random one in O(1). */
struct live_pl {
    size_t pid; /* placement id from lt_cluster_place */
    double cpu; /* its CPU request, for the load */
};

/* State of one run; the buffers are allocated once and reused by every policy. */
struct bench {
    const struct opts *o;
    const struct lt_machine_spec *specs; /* borrowed: the machines of every cluster */
    const struct lt_policy *p;           /* the policy being measured */
    struct lt_cluster *c;                /* owned while a policy runs, else NULL */
    struct lt_rng policy_rng;            /* LT_RNG_POLICY: draws of the random policies */
    struct lt_rng ops_rng;               /* OPS_STREAM: place or remove, and which */
    struct workload wl;                  /* the request stream */
    struct live_pl *live;                /* owned: live placements, any order */
    size_t n_live, live_cap;             /* count and allocated */
    double cap_cpu;                      /* total CPU capacity of the cluster */
    double alloc_cpu;                    /* CPU requests of the live placements */
    struct samples choose_ns;            /* every measured choose */
    struct samples update_ns;            /* every measured place and remove */
    struct samples naive_ns;             /* every naive scan (rank + best) */
    size_t *cand;                        /* owned: machines 0..n-1, the naive candidates */
    double *scores;                      /* owned: the naive scores */
    uint64_t naive_every;                /* K: a naive check every K-th measured choose */
    uint64_t n_choose;                   /* measured chooses so far */
    uint64_t op;                         /* current measured operation */
    const char *phase;                   /* "setup", "warm-up", "ops" or "check" */
    uint64_t warmup;                     /* placements made by the warm-up */
    uint64_t placements, removals;       /* measured operations of each kind */
    uint64_t unplaced;                   /* measured requests that fit nowhere (dropped) */
    uint64_t mismatches;                 /* naive and choose disagreed */
    uint32_t timer_ns;                   /* median clock_gettime pair */
    double seconds;                      /* wall time of the policy: warm-up, ops, checks */
    struct lt_err err;                   /* the library's error of the failed call */
};

static void usage(FILE *f)
{
    fputs("usage: " PROG " [--policy LIST] [--machines N] [--ops N] [--seed N] [--load X]\n"
          "                    [--smoke] [--help]\n"
          "\n"
          "Times lt_policy_choose (indexed) against a naive lt_policy_rank scan on a cluster\n"
          "with the Google 2011 cell's capacity mix, under mixed placements and removals.\n"
          "Prints one JSON line per policy on stdout; exits 1 if choose and the scan ever\n"
          "disagree or the library fails, 2 on a bad option.\n"
          "\n"
          "  --policy LIST   comma-separated policy names (default: every registered policy)\n"
          "  --machines N    machines in the cluster (default 12500)\n"
          "  --ops N         measured placements and removals per policy (default 1000000)\n"
          "  --seed N        seed of the cluster, the requests and the policies (default 1)\n"
          "  --load X        target share of CPU capacity allocated, 0..1 (default 0.75)\n"
          "  --smoke         a seconds-long correctness run: 2000 machines, 20000 ops, one\n"
          "                  naive check per 4 chooses; explicit options still win\n"
          "  --help          this text\n",
          f);
}

/* ---- option parsing ---- */

/* Parses s as a decimal integer in [lo, hi]. 0, or -1 after printing what is wrong. */
static int parse_u64(const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    unsigned long long v;
    char *end;

    if (s[0] < '0' || s[0] > '9') {
        fprintf(stderr, PROG ": invalid value '%s' for %s: expected an integer\n", s, flag);
        return -1;
    }
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end != '\0') {
        fprintf(stderr, PROG ": invalid value '%s' for %s: expected an integer\n", s, flag);
        return -1;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr,
                PROG ": value '%s' for %s is out of range (expected %" PRIu64 "..%" PRIu64 ")\n", s,
                flag, lo, hi);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

/* Parses s as a finite number in [lo, hi]. 0, or -1 after printing what is wrong. */
static int parse_f64(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v;

    if (s[0] == '\0' || s[0] == ' ' || s[0] == '\t') {
        fprintf(stderr, PROG ": invalid value '%s' for %s: expected a number\n", s, flag);
        return -1;
    }
    errno = 0;
    v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v)) {
        fprintf(stderr, PROG ": invalid value '%s' for %s: expected a number\n", s, flag);
        return -1;
    }
    if (!(v >= lo && v <= hi)) {
        fprintf(stderr, PROG ": value '%s' for %s is out of range (expected %g..%g)\n", s, flag, lo,
                hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Every registered policy, in registration order. 0, or -1 after printing. */
static int all_policies(struct opts *o)
{
    o->n_pol = lt_policy_count();
    o->pol = lt_calloc(o->n_pol, sizeof(*o->pol));
    if (o->pol == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < o->n_pol; i++)
        o->pol[i] = lt_policy_at(i);
    return 0;
}

/* The options that take a value; parse_args holds them raw, NULL when not given. */
enum { F_POLICY, F_MACHINES, F_OPS, F_SEED, F_LOAD, N_FLAGS };
static const char *const flag_names[N_FLAGS + 1] = {"--policy", "--machines", "--ops",
                                                    "--seed",   "--load",     NULL};

/* Fills *o from argv. 1 for --help (usage printed), 0, or -1 after printing the error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    const char *r[N_FLAGS] = {NULL};
    uint64_t machines;
    int rc;

    memset(o, 0, sizeof(*o));
    rc = bench_scan_args(PROG, argc, argv, flag_names, r, &o->smoke, usage);
    if (rc != 0)
        return rc;
    machines = o->smoke ? SMOKE_MACHINES : DEFAULT_MACHINES;
    o->ops = o->smoke ? SMOKE_OPS : DEFAULT_OPS;
    o->seed = 1;
    o->load = DEFAULT_LOAD;
    if ((r[F_MACHINES] &&
         parse_u64("--machines", r[F_MACHINES], 1, LT_MAX_MACHINES, &machines) < 0) ||
        (r[F_OPS] && parse_u64("--ops", r[F_OPS], 1, MAX_OPS, &o->ops) < 0) ||
        (r[F_SEED] && parse_u64("--seed", r[F_SEED], 0, UINT64_MAX, &o->seed) < 0) ||
        (r[F_LOAD] && parse_f64("--load", r[F_LOAD], 0.0, 1.0, &o->load) < 0))
        return -1;
    o->machines = (size_t)machines;
    return r[F_POLICY] ? bench_parse_policies(PROG, r[F_POLICY], &o->pol, &o->n_pol)
                       : all_policies(o);
}

/* ---- the cluster ---- */

/* Builds the machine specs: the scaled mix, configurations shuffled over machine indexes
 * (a cell's machine ids are not sorted by type), names "m00000".... *out_specs and
 * *out_names are owned (lt_free both). 0 or LT_ENOMEM. */
static int build_machines(size_t n, uint64_t seed, struct lt_machine_spec **out_specs,
                          char **out_names)
{
    size_t counts[BENCH_N_MIX], i = 0;
    struct lt_machine_spec *specs = lt_calloc(n, sizeof(*specs));
    char *names = lt_calloc(n, NAME_BYTES);
    unsigned char *cfg = lt_calloc(n, sizeof(*cfg));
    struct lt_rng rng;

    if (specs == NULL || names == NULL || cfg == NULL) {
        lt_free(specs);
        lt_free(names);
        lt_free(cfg);
        return LT_ENOMEM;
    }
    bench_scale_mix(n, counts);
    for (size_t k = 0; k < BENCH_N_MIX; k++) {
        for (size_t j = 0; j < counts[k]; j++)
            cfg[i++] = (unsigned char)k;
    }
    lt_rng_init(&rng, seed, LT_RNG_MACHINES);
    for (i = n - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = (size_t)lt_rng_below(&rng, i + 1);
        unsigned char t = cfg[i];
        cfg[i] = cfg[j];
        cfg[j] = t;
    }
    for (i = 0; i < n; i++) {
        char *name = names + i * NAME_BYTES;
        /* i < LT_MAX_MACHINES < 10^8: at most 9 bytes, never truncated. */
        (void)snprintf(name, NAME_BYTES, "m%05u", (unsigned)i);
        specs[i].name = name;
        specs[i].cap.cpu = bench_google_mix[cfg[i]].cpu;
        specs[i].cap.mem = bench_google_mix[cfg[i]].mem;
        specs[i].cap.disk = 1.0;
    }
    lt_free(cfg);
    *out_specs = specs;
    *out_names = names;
    return 0;
}

/* ---- the workload ---- */

/* A standard normal variate (Box-Muller over lt_rng_uniform). */
static double normal(struct workload *w)
{
    double u1, u2, r;

    if (w->have_spare) {
        w->have_spare = false;
        return w->spare;
    }
    u1 = 1.0 - lt_rng_uniform(&w->rng); /* (0, 1]: log(u1) is finite */
    u2 = lt_rng_uniform(&w->rng);
    r = sqrt(-2.0 * log(u1));
    w->spare = r * sin(TWO_PI * u2);
    w->have_spare = true;
    return r * cos(TWO_PI * u2);
}

/* A lognormal variate with the given median and sigma, clamped to [lo, hi]. */
static double lognormal(struct workload *w, double median, double sigma, double lo, double hi)
{
    double x = median * exp(sigma * normal(w));

    return x < lo ? lo : x > hi ? hi : x;
}

/* The next request. Medians and clamps resemble the 2011 trace's normalised requests: most
 * tasks ask for 1-5% of a machine's CPU and memory, and very little local disk. */
static void task_draw(struct workload *w, struct lt_task *t)
{
    memset(t, 0, sizeof(*t));
    t->id = w->next_id++;
    t->req.cpu = lognormal(w, 0.02, 1.0, 0.0005, 0.5);
    t->req.mem = lognormal(w, 0.015, 1.0, 0.0002, 0.5);
    t->req.disk = lognormal(w, 0.0003, 1.0, 0.00001, 0.05);
}

/* ---- timing ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        fprintf(stderr, PROG ": clock_gettime(CLOCK_MONOTONIC) failed: %s\n", strerror(errno));
        exit(1);
    }
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static void samples_add(struct samples *s, uint64_t ns)
{
    if (s->n < s->cap) /* always true: buffers are sized for the run */
        s->v[s->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* Sorts the samples in place. */
static void samples_sort(struct samples *s)
{
    qsort(s->v, s->n, sizeof(*s->v), cmp_u32);
}

/* Nearest-rank q-quantile of sorted samples (the lower middle for the median); 0 if none. */
static uint32_t quantile(const struct samples *s, double q)
{
    size_t r;

    if (s->n == 0)
        return 0;
    r = (size_t)ceil(q * (double)s->n);
    return s->v[r == 0 ? 0 : r - 1];
}

/* Median of back-to-back clock_gettime pairs: what every timed sample carries on top of the
 * call it measures. Reported, not subtracted. 0 or LT_ENOMEM. */
static int timer_overhead(uint32_t *out)
{
    struct samples s = {lt_calloc(TIMER_PAIRS, sizeof(uint32_t)), 0, TIMER_PAIRS};

    if (s.v == NULL)
        return LT_ENOMEM;
    for (size_t i = 0; i < TIMER_PAIRS; i++) {
        uint64_t t0 = now_ns();
        samples_add(&s, now_ns() - t0);
    }
    samples_sort(&s);
    *out = quantile(&s, 0.5);
    lt_free(s.v);
    return 0;
}

/* ---- one policy's run ---- */

static double load_now(const struct bench *b)
{
    return b->alloc_cpu / b->cap_cpu;
}

static int live_push(struct bench *b, size_t pid, double cpu)
{
    if (b->n_live == b->live_cap) {
        size_t cap = b->live_cap ? 2 * b->live_cap : 4096;
        struct live_pl *v = lt_reallocarray(b->live, cap, sizeof(*v));
        if (v == NULL)
            return lt_err_set(&b->err, LT_ENOMEM, 0, 0, "out of memory for live placements");
        b->live = v;
        b->live_cap = cap;
    }
    b->live[b->n_live].pid = pid;
    b->live[b->n_live].cpu = cpu;
    b->n_live++;
    return 0;
}

/* Prints machine m's score in the naive scan and its free vector. */
static void print_machine(const struct bench *b, const char *who, size_t m)
{
    struct lt_res f;

    if (m == LT_NO_MACHINE) {
        fprintf(stderr, "  %s: no machine\n", who);
        return;
    }
    if (m >= lt_cluster_size(b->c)) {
        fprintf(stderr, "  %s: machine %zu is out of range\n", who, m);
        return;
    }
    f = lt_cluster_free_res(b->c, m);
    fprintf(stderr,
            "  %s: machine %zu '%s' config %" PRIu32 " naive score %.17g free %.17g %.17g %.17g\n",
            who, m, lt_cluster_name(b->c, m), lt_cluster_config(b->c, m), b->scores[m], f.cpu,
            f.mem, f.disk);
}

/* Records a disagreement between choose and the naive scan, in full for the first few. */
static void mismatch(struct bench *b, const struct lt_task *t, size_t chosen, size_t naive,
                     bool same_draws)
{
    const struct opts *o = b->o;

    if (b->mismatches++ >= MAX_PRINTED_MISMATCHES)
        return;
    fprintf(stderr,
            PROG ": choose and the naive scan disagree for policy '%s' at op %" PRIu64
                 " (choose #%" PRIu64 "): task %" PRId64 " cpu %.17g mem %.17g disk %.17g; %s\n",
            lt_policy_name(b->p), b->op, b->n_choose - 1, t->id, t->req.cpu, t->req.mem,
            t->req.disk,
            same_draws ? "same RNG draws" : "choose and rank drew differently from the RNG");
    print_machine(b, "choose", chosen);
    print_machine(b, "naive ", naive);
    fprintf(stderr,
            "  reproduce: " PROG "%s --policy %s --machines %zu --ops %" PRIu64 " --seed %" PRIu64
            " --load %.17g\n",
            o->smoke ? " --smoke" : "", lt_policy_name(b->p), o->machines, o->ops, o->seed,
            o->load);
}

/* The naive path on the current state: rank over machines 0..n-1 with a copy (*before) of
 * the RNG as it was before choose, then lt_scores_best. Timed; compared with chosen and
 * with the draws choose made. 0 or the library's error. */
static int naive_check(struct bench *b, const struct lt_task *t, const struct lt_rng *before,
                       size_t chosen)
{
    struct lt_rng r = *before;
    size_t n = lt_cluster_size(b->c), best, naive;
    uint64_t t0, t1;
    bool same_draws;
    int rc;

    t0 = now_ns();
    rc = lt_policy_rank(b->p, b->c, t, b->cand, n, &r, b->scores, &b->err);
    best = lt_scores_best(b->cand, b->scores, n);
    t1 = now_ns();
    if (rc < 0)
        return rc;
    samples_add(&b->naive_ns, t1 - t0);
    naive = best == LT_NO_MACHINE ? LT_NO_MACHINE : b->cand[best];
    same_draws = memcmp(r.s, b->policy_rng.s, sizeof(r.s)) == 0;
    if (naive != chosen || !same_draws)
        mismatch(b, t, chosen, naive, same_draws);
    return 0;
}

/* Draws the next request and places it where choose says (measured: timed, naive-checked,
 * counted). *placed tells whether it found a machine. 0 or the library's error. */
static int place_next(struct bench *b, bool measured, bool *placed)
{
    struct lt_task t;
    struct lt_rng before = b->policy_rng;
    uint64_t t0, t1;
    size_t m, pid;
    int rc;

    task_draw(&b->wl, &t);
    t0 = now_ns();
    rc = lt_policy_choose(b->p, b->c, &t, &b->policy_rng, &m, &b->err);
    t1 = now_ns();
    if (rc < 0)
        return rc;
    if (measured) {
        samples_add(&b->choose_ns, t1 - t0);
        if (b->n_choose++ % b->naive_every == 0 && (rc = naive_check(b, &t, &before, m)) < 0)
            return rc;
    }
    *placed = m != LT_NO_MACHINE;
    if (!*placed) {
        b->unplaced += measured;
        return 0;
    }
    t0 = now_ns();
    rc = lt_cluster_place(b->c, m, &t, 0, &pid, &b->err);
    t1 = now_ns();
    if (rc < 0)
        return rc;
    if (measured) {
        samples_add(&b->update_ns, t1 - t0);
        b->placements++;
    } else {
        b->warmup++;
    }
    b->alloc_cpu += t.req.cpu;
    return live_push(b, pid, t.req.cpu);
}

/* Removes a uniformly random live placement (there is one). 0 or the library's error. */
static int remove_random(struct bench *b)
{
    size_t k = (size_t)lt_rng_below(&b->ops_rng, b->n_live);
    struct live_pl pl = b->live[k];
    uint64_t t0, t1;
    int rc;

    t0 = now_ns();
    rc = lt_cluster_remove(b->c, pl.pid, &b->err);
    t1 = now_ns();
    if (rc < 0)
        return rc;
    samples_add(&b->update_ns, t1 - t0);
    b->removals++;
    b->live[k] = b->live[--b->n_live];
    /* Running sums drift; an empty cluster is exactly empty, as in the library. */
    b->alloc_cpu = b->n_live ? b->alloc_cpu - pl.cpu : 0.0;
    return 0;
}

/* Places until the load reaches the target or WARMUP_MAX_MISSES requests in a row fit
 * nowhere. Not timed. 0 or the library's error. */
static int warm_up(struct bench *b)
{
    unsigned misses = 0;
    bool placed;
    int rc;

    while (load_now(b) < b->o->load && misses < WARMUP_MAX_MISSES) {
        rc = place_next(b, false, &placed);
        if (rc < 0)
            return rc;
        misses = placed ? 0 : misses + 1;
    }
    return 0;
}

/* The measured operations: place with probability 0.5 + 5 (target - load), clamped to
 * [0.1, 0.9] (always when nothing is placed), else remove. 0 or the library's error. */
static int run_ops(struct bench *b)
{
    bool placed;
    int rc;

    for (b->op = 0; b->op < b->o->ops; b->op++) {
        double p = 0.5 + (b->o->load - load_now(b)) * 5.0;
        double u = lt_rng_uniform(&b->ops_rng);

        p = p < 0.1 ? 0.1 : p > 0.9 ? 0.9 : p;
        if (u < p || b->n_live == 0)
            rc = place_next(b, true, &placed);
        else
            rc = remove_random(b);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Resets the per-policy state of b for policy p; the request stream restarts at --seed. */
static void bench_reset(struct bench *b, const struct lt_policy *p)
{
    const struct opts *o = b->o;

    b->p = p;
    lt_rng_init(&b->policy_rng, o->seed, LT_RNG_POLICY);
    lt_rng_init(&b->ops_rng, o->seed, OPS_STREAM);
    lt_rng_init(&b->wl.rng, o->seed, LT_RNG_WORKLOAD);
    b->wl.have_spare = false;
    b->wl.next_id = 1;
    b->n_live = 0;
    b->alloc_cpu = 0.0;
    b->choose_ns.n = b->update_ns.n = b->naive_ns.n = 0;
    b->n_choose = b->op = b->warmup = b->placements = b->removals = b->unplaced = 0;
    b->mismatches = 0;
    lt_err_init(&b->err, NULL);
}

/* Runs policy p on a fresh cluster: warm-up, measured ops, then lt_cluster_check. 0 or the
 * library's error (message in b->err). */
static int run_policy(struct bench *b, const struct lt_policy *p)
{
    struct lt_cluster_spec spec = {b->specs, b->o->machines, {0.0, 0.0, 0.0}, b->o->seed};
    uint64_t start = now_ns();
    int rc;

    bench_reset(b, p);
    b->phase = "setup";
    b->c = lt_cluster_new(&spec, &b->err);
    if (b->c == NULL)
        return b->err.code < 0 ? b->err.code : LT_ENOMEM;
    rc = lt_policy_attach(p, b->c, &b->err);
    if (rc == 0) {
        b->phase = "warm-up";
        rc = warm_up(b);
    }
    if (rc == 0) {
        fprintf(stderr, PROG ": %s: warm-up placed %" PRIu64 " tasks, load %.4f\n",
                lt_policy_name(p), b->warmup, load_now(b));
        b->phase = "ops";
        rc = run_ops(b);
    }
    if (rc == 0) {
        b->phase = "check";
        rc = lt_cluster_check(b->c, &b->err);
    }
    b->seconds = (double)(now_ns() - start) * 1e-9;
    return rc;
}

/* Prints b's result line on stdout: the keys of docs/benchmarks.md, in that order. Sorts
 * the samples. 0, or -1 if stdout failed. */
static int report(struct bench *b)
{
    const struct opts *o = b->o;
    uint32_t med, naive_med;
    double ratio;

    samples_sort(&b->choose_ns);
    samples_sort(&b->update_ns);
    samples_sort(&b->naive_ns);
    med = quantile(&b->choose_ns, 0.5);
    naive_med = quantile(&b->naive_ns, 0.5);
    ratio = (double)naive_med / (med ? (double)med : 1.0);
    if (printf("{\"bench\":\"choose\",\"policy\":\"%s\",\"machines\":%zu,\"configs\":%zu,"
               "\"ops\":%" PRIu64 ",\"placements\":%" PRIu64 ",\"removals\":%" PRIu64
               ",\"unplaced\":%" PRIu64 ",\"load\":%g,",
               lt_policy_name(b->p), o->machines, lt_cluster_n_configs(b->c), o->ops, b->placements,
               b->removals, b->unplaced, o->load) < 0)
        return -1;
    if (printf("\"median_ns\":%" PRIu32 ",\"p90_ns\":%" PRIu32 ",\"p99_ns\":%" PRIu32
               ",\"naive_samples\":%zu,\"naive_median_ns\":%" PRIu32
               ",\"naive_ratio\":%.1f,\"update_median_ns\":%" PRIu32 ",",
               med, quantile(&b->choose_ns, 0.9), quantile(&b->choose_ns, 0.99), b->naive_ns.n,
               naive_med, ratio, quantile(&b->update_ns, 0.5)) < 0)
        return -1;
    if (printf("\"timer_ns\":%" PRIu32 ",\"mismatches\":%" PRIu64 ",\"seconds\":%.3f"
               ",\"seed\":%" PRIu64 ",\"warmup_placements\":%" PRIu64 ",\"end_load\":%.4f}\n",
               b->timer_ns, b->mismatches, b->seconds, o->seed, b->warmup, load_now(b)) < 0)
        return -1;
    return fflush(stdout) == 0 ? 0 : -1;
}

/* Allocates the buffers every policy reuses. 0 or LT_ENOMEM. */
static int bench_init(struct bench *b, const struct opts *o, const struct lt_machine_spec *specs)
{
    memset(b, 0, sizeof(*b));
    b->o = o;
    b->specs = specs;
    for (size_t i = 0; i < o->machines; i++)
        b->cap_cpu += specs[i].cap.cpu;
    b->naive_every = o->smoke ? SMOKE_NAIVE_EVERY : o->ops / (2 * NAIVE_SAMPLES);
    if (b->naive_every == 0)
        b->naive_every = 1;
    b->choose_ns.cap = b->update_ns.cap = (size_t)o->ops;
    b->naive_ns.cap = (size_t)(o->ops / b->naive_every + 1);
    b->choose_ns.v = lt_calloc(b->choose_ns.cap, sizeof(uint32_t));
    b->update_ns.v = lt_calloc(b->update_ns.cap, sizeof(uint32_t));
    b->naive_ns.v = lt_calloc(b->naive_ns.cap, sizeof(uint32_t));
    b->cand = lt_calloc(o->machines, sizeof(*b->cand));
    b->scores = lt_calloc(o->machines, sizeof(*b->scores));
    if (!b->choose_ns.v || !b->update_ns.v || !b->naive_ns.v || !b->cand || !b->scores)
        return LT_ENOMEM;
    for (size_t i = 0; i < o->machines; i++)
        b->cand[i] = i;
    return 0;
}

static void bench_release(struct bench *b)
{
    lt_cluster_free(b->c);
    lt_free(b->live);
    lt_free(b->choose_ns.v);
    lt_free(b->update_ns.v);
    lt_free(b->naive_ns.v);
    lt_free(b->cand);
    lt_free(b->scores);
    memset(b, 0, sizeof(*b));
}

/* Runs and reports every policy of o. 0 if all agreed and succeeded, else 1. */
static int run_all(struct bench *b, const struct opts *o)
{
    int status = 0;

    for (size_t i = 0; i < o->n_pol; i++) {
        int rc = run_policy(b, o->pol[i]);

        if (rc < 0) {
            fprintf(stderr, PROG ": %s: library error in %s (op %" PRIu64 "): %s: %s\n",
                    lt_policy_name(o->pol[i]), b->phase, b->op, lt_err_name(rc),
                    b->err.text[0] ? b->err.text : lt_strerror(rc));
            status = 1;
        } else if (report(b) < 0) {
            fprintf(stderr, PROG ": writing to stdout failed: %s\n", strerror(errno));
            status = 1;
        } else if (b->mismatches > 0) {
            fprintf(stderr, PROG ": %s: %" PRIu64 " mismatches between choose and the naive scan\n",
                    lt_policy_name(o->pol[i]), b->mismatches);
            status = 1;
        }
        lt_cluster_free(b->c);
        b->c = NULL;
    }
    return status;
}

int main(int argc, char **argv)
{
    struct lt_machine_spec *specs = NULL;
    char *names = NULL;
    struct opts o;
    struct bench b;
    int rc;

    memset(&b, 0, sizeof(b));
    rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        lt_free(o.pol);
        return rc > 0 ? 0 : 2;
    }
    rc = build_machines(o.machines, o.seed, &specs, &names);
    if (rc == 0)
        rc = bench_init(&b, &o, specs);
    if (rc == 0)
        rc = timer_overhead(&b.timer_ns);
    if (rc < 0) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = 1;
    } else {
        rc = run_all(&b, &o);
    }
    bench_release(&b);
    lt_free(specs);
    lt_free(names);
    lt_free(o.pol);
    return rc;
}
