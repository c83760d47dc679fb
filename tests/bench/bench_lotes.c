/* bench_lotes.c -- LoTES benchmark: the time lt_lotes_build takes (allocation LP, bins,
 * assignment LP, rounding) and lt_lotes_dispatch's decisions per second, on two cells, one
 * JSON line per measurement. docs/benchmarks.md, "LoTES benchmark".
 *
 * Cells:
 *   - tables13: Tran and Beck's Table 1 (10 configurations x 1,000 machines, cores and GB) and
 *     Table 3 (8 classes), as lt_lotes_table1/table3 give them;
 *   - google2011: the capacities of the 12,477 machines of the Google 2011 cell at t=0 (ten
 *     (cpu, mem) configurations, normalised so that the largest machine is (1, 1); disk 0),
 *     scaled to --machines (default 12,500) by largest remainder, with Table 3's classes
 *     mapped onto normalised units by the largest Table 1 configuration: cpu / 24 cores,
 *     mem / 32 GB. So the Google (1, 1) machine is Table 1's configuration 10. (Table 3's
 *     requests taken as fractions directly do not work: four classes ask for more than one
 *     whole CPU, so lt_lotes_problem_check rejects the problem: no machine fits them.)
 *
 * Build: lt_lotes_build is timed --repeat times, the median is reported against DESIGN.md
 * section 9's target (< 1 s for Tables 1+3; the cell's line is judged against the same bound).
 *
 * Dispatch: the view of every machine, each mapped to its bin by lt_lotes_machine_bins, with
 * the configurations shuffled over the machine indexes (a cell's ids are not sorted by type).
 * The state is that of the paper's system at --load x lambda* (section 5): the cell is first
 * filled with the mean population of an infinite-server system at that rate, load lambda*
 * sum_k alpha_k / mu_k tasks (rounded) whose classes are drawn in proportion to
 * alpha_k / mu_k, each dispatched in turn and given an exponential residual service time
 * (service is memoryless, so that is the residual's law). Then a small event simulation runs:
 * Poisson arrivals at load x lambda*, classes by alpha_k, requests normal around r_k with Table 3's
 * coefficients of variation, exponential service times of rate mu_k; a task starts where the
 * dispatcher puts it when it has room, else joins that machine's FIFO queue, whose head starts when
 * it fits. Each of the --ops measured dispatches is timed on its own (clock_gettime around the
 * call); decisions per second are --ops over the summed call times.
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
#include "lt_lotes.h"
#include "lt_mem.h"
#include "lt_rng.h"

#define PROG "bench_lotes"

/* Defaults: 21 builds give a stable median of a 5 ms build; 20,000 decisions per cell. */
#define DEFAULT_REPEAT   21
#define DEFAULT_OPS      20000
#define DEFAULT_LOAD     0.9
#define DEFAULT_MACHINES 12500
#define SMOKE_OPS        2000
#define SMOKE_LOAD       0.2

/* DESIGN.md section 9: allocation LP + bins + assignment LP < 1 s. */
#define TARGET_BUILD_S 1.0

/* Back-to-back clock_gettime pairs whose median is the reported timer overhead. */
#define TIMER_PAIRS 10001

/* Box-Muller needs 2 pi; M_PI is not part of C11. */
#define TWO_PI 6.283185307179586476925286766559

#define NONE SIZE_MAX

/* One cell: the problem (owned arrays) and the request spread of its classes. */
struct cell {
    const char *name;                                        /* "tables13" or "google2011" */
    struct lt_lotes_class classes[LT_LOTES_TABLE3_CLASSES];  /* Table 3, in the cell's units */
    struct lt_lotes_config configs[LT_LOTES_TABLE1_CONFIGS]; /* both cells have ten */
    struct lt_res cv[LT_LOTES_TABLE3_CLASSES];               /* coefficients of variation */
    struct lt_lotes_problem p;                               /* borrows the arrays above */
    size_t machines;                                         /* sum of n_j */
};

/* A task of the dispatch simulation; records are reused through a free list. */
struct task {
    double finish;     /* completion time (hours) once started */
    struct lt_res req; /* its actual request (the dispatcher sees it) */
    size_t machine;    /* where it runs or waits */
    size_t k;          /* its class */
    size_t next;       /* next in its machine's queue, or in the free list; NONE ends */
};

/* The dispatch simulation's state. */
struct sim {
    const struct lt_lotes_tables *t; /* borrowed */
    struct lt_lotes_machine *view;   /* owned, one per machine */
    size_t n;                        /* machines */
    size_t *q_head, *q_tail;         /* owned: per machine FIFO of waiting tasks */
    struct task *tasks;              /* owned pool */
    size_t n_tasks, cap_tasks;       /* records ever used, allocated */
    size_t free_list;                /* first reusable record, or NONE */
    size_t *heap;                    /* owned: running tasks by finish time (binary heap) */
    size_t n_heap;                   /* running tasks */
    struct lt_rng work, disp;        /* the workload's and the dispatcher's streams */
    const struct cell *c;            /* borrowed */
    uint64_t how[5];                 /* LT_LOTES_* counts, [4] = no machine */
};

/* Command-line options after defaults were applied. */
struct opts {
    long repeat;   /* timed builds per cell */
    long ops;      /* timed dispatches per cell */
    long machines; /* machines of the Google cell */
    uint64_t seed; /* machine shuffle, workload and dispatcher streams */
    double load;   /* arrival rate / lambda* */
    bool smoke;    /* --smoke: small defaults */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " [--repeat N] [--ops N] [--load X] [--machines N] [--seed N]\n"
            "       [--smoke] [--help]\n"
            "\n"
            "Times lt_lotes_build (median of --repeat) on Tran and Beck's Tables 1+3 and on the\n"
            "Google 2011 cell's configurations with Table 3's classes, and lt_lotes_dispatch\n"
            "(decisions/s, median ns) over every machine of each cell in a steady state at\n"
            "--load x lambda*. One JSON line per measurement. Exit 1 if a build or a dispatch\n"
            "fails, 2 on a bad option.\n"
            "\n"
            "  --repeat N    timed builds per cell, median reported (default 21)\n"
            "  --ops N       timed dispatches per cell (default 20000)\n"
            "  --load X      arrival rate as a share of lambda*, 0 < X <= 2 (default 0.9)\n"
            "  --machines N  machines of the Google cell, 10..1000000 (default 12500)\n"
            "  --seed N      default 1\n"
            "  --smoke       1 build, 2000 dispatches at load 0.2: correctness only\n");
}

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, PROG ": %s '%s' is not a whole number in %ld..%ld\n", flag, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const char *const flags[] = {"--repeat",   "--ops",  "--load",
                                        "--machines", "--seed", NULL};
    const char *v[5] = {NULL, NULL, NULL, NULL, "1"};
    char *end;
    long seed;
    int rc = bench_scan_args(PROG, argc, argv, flags, v, &o->smoke, usage);

    if (rc != 0)
        return rc > 0 ? 1 : -1;
    if (v[0] == NULL)
        v[0] = o->smoke ? "1" : "21";
    if (v[1] == NULL)
        v[1] = o->smoke ? "2000" : "20000";
    if (v[3] == NULL)
        v[3] = "12500";
    if (parse_long("--repeat", v[0], 1, 100000, &o->repeat) < 0 ||
        parse_long("--ops", v[1], 1, 100000000, &o->ops) < 0 ||
        parse_long("--machines", v[3], 10, 1000000, &o->machines) < 0 ||
        parse_long("--seed", v[4], 0, 1000000000, &seed) < 0)
        return -1;
    o->seed = (uint64_t)seed;
    o->load = o->smoke ? SMOKE_LOAD : DEFAULT_LOAD;
    if (v[2] != NULL) {
        o->load = strtod(v[2], &end);
        if (*v[2] == '\0' || *end != '\0' || !(o->load > 0 && o->load <= 2)) {
            fprintf(stderr, PROG ": --load '%s' is not a number in (0, 2]\n", v[2]);
            return -1;
        }
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Sorts v and returns its q-quantile (nearest rank). */
static double quantile(double *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)n);

    qsort(v, n, sizeof(*v), cmp_double);
    return v[i < n ? i : n - 1];
}

/* ---- the cells ---- */

static void cell_tables13(struct cell *c)
{
    memset(c, 0, sizeof(*c));
    c->name = "tables13";
    lt_lotes_table1(c->configs);
    lt_lotes_table3(c->classes);
    lt_lotes_table3_cv(c->cv);
}

/* The Google cell; a configuration the scaling leaves without machines gets one. */
static void cell_google(struct cell *c, size_t machines)
{
    size_t counts[BENCH_N_MIX];

    memset(c, 0, sizeof(*c));
    c->name = "google2011";
    bench_scale_mix(machines, counts);
    for (size_t j = 0; j < BENCH_N_MIX; j++) {
        struct lt_lotes_config *g = &c->configs[j];
        snprintf(g->name, sizeof(g->name), "%g/%g", bench_google_mix[j].cpu,
                 bench_google_mix[j].mem);
        g->cap.cpu = bench_google_mix[j].cpu;
        g->cap.mem = bench_google_mix[j].mem;
        g->n = counts[j] > 0 ? counts[j] : 1;
    }
    lt_lotes_table3_normalised(c->classes); /* the replay's mapping too */
    lt_lotes_table3_cv(c->cv);
}

static void cell_finish(struct cell *c)
{
    c->p.classes = c->classes;
    c->p.n_classes = LT_LOTES_TABLE3_CLASSES;
    c->p.configs = c->configs;
    c->p.n_configs = LT_LOTES_TABLE1_CONFIGS;
    c->machines = 0;
    for (size_t j = 0; j < c->p.n_configs; j++)
        c->machines += c->configs[j].n;
}

/* ---- the build ---- */

/* Builds c's tables o->repeat times, prints the line and returns the last tables (owned, or
 * NULL after printing the error). */
static struct lt_lotes_tables *bench_build(const struct cell *c, const struct opts *o)
{
    double *wall = calloc((size_t)o->repeat, sizeof(*wall)), med, min;
    struct lt_lotes_tables *t = NULL;
    size_t max_bins = 0;
    struct lt_err err;

    if (wall == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return NULL;
    }
    for (long r = 0; r < o->repeat; r++) {
        double t0 = now_s();
        lt_lotes_tables_free(t);
        lt_err_init(&err, NULL);
        t = lt_lotes_build(&c->p, &err);
        wall[r] = now_s() - t0;
        if (t == NULL) {
            fprintf(stderr, PROG ": %s: build: %s\n", c->name, err.text);
            free(wall);
            return NULL;
        }
    }
    if (lt_lotes_tables_check(t, &err) < 0) {
        fprintf(stderr, PROG ": %s: tables: %s\n", c->name, err.text);
        lt_lotes_tables_free(t);
        free(wall);
        return NULL;
    }
    for (size_t j = 0; j < t->n_configs; j++)
        if (t->bin_first[j + 1] - t->bin_first[j] > max_bins)
            max_bins = t->bin_first[j + 1] - t->bin_first[j];
    med = quantile(wall, (size_t)o->repeat, 0.5);
    min = wall[0];
    printf("{\"bench\":\"lotes_build\",\"cell\":\"%s\",\"machines\":%zu,\"configs\":%zu,"
           "\"classes\":%zu,\"repeat\":%ld,\"build_s\":%.6f,\"build_s_min\":%.6f,"
           "\"lambda_alloc\":%.5f,\"lambda_assign\":%.5f,\"lambda_rounded\":%.5f,\"bins\":%zu,"
           "\"bins_max_config\":%zu,\"target_s\":1,\"met\":%s}\n",
           c->name, c->machines, t->n_configs, t->n_classes, o->repeat, med, min, t->lambda_alloc,
           t->lambda_assign, t->lambda_rounded, t->n_bins, max_bins,
           med < TARGET_BUILD_S ? "true" : "false");
    free(wall);
    return t;
}

/* ---- the dispatch simulation ---- */

/* A standard normal variate (Box-Muller over lt_rng_uniform; one of the pair is used). */
static double normal(struct lt_rng *r)
{
    double u1 = 1.0 - lt_rng_uniform(r); /* (0, 1]: log(u1) is finite */
    double u2 = lt_rng_uniform(r);

    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

static double expo(struct lt_rng *r, double rate)
{
    return -log(1.0 - lt_rng_uniform(r)) / rate;
}

/* A request of class k: each requested component normal around r_k with the class's
 * coefficient of variation, redrawn until positive. */
static struct lt_res draw_req(struct sim *s, size_t k)
{
    const struct lt_res *m = &s->c->classes[k].req, *cv = &s->c->cv[k];
    struct lt_res r = {0, 0, 0};

    do
        r.cpu = m->cpu * (1.0 + cv->cpu * normal(&s->work));
    while (m->cpu > 0 && !(r.cpu > 0));
    do
        r.mem = m->mem * (1.0 + cv->mem * normal(&s->work));
    while (m->mem > 0 && !(r.mem > 0));
    return r;
}

/* Draws a class with probability w[k] / sum(w). */
static size_t draw_class(struct lt_rng *r, const double *w, size_t n)
{
    double sum = 0, u;

    for (size_t k = 0; k < n; k++)
        sum += w[k];
    u = lt_rng_uniform(r) * sum;
    for (size_t k = 0; k + 1 < n; k++) {
        if (u < w[k])
            return k;
        u -= w[k];
    }
    return n - 1;
}

static void heap_swap(struct sim *s, size_t a, size_t b)
{
    size_t x = s->heap[a];

    s->heap[a] = s->heap[b];
    s->heap[b] = x;
}

static double fin(const struct sim *s, size_t i)
{
    return s->tasks[s->heap[i]].finish;
}

static void heap_push(struct sim *s, size_t id)
{
    size_t i = s->n_heap++;

    s->heap[i] = id;
    while (i > 0 && fin(s, (i - 1) / 2) > fin(s, i)) {
        heap_swap(s, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static size_t heap_pop(struct sim *s)
{
    size_t top = s->heap[0], i = 0;

    s->heap[0] = s->heap[--s->n_heap];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->n_heap && fin(s, l) < fin(s, m))
            m = l;
        if (l + 1 < s->n_heap && fin(s, l + 1) < fin(s, m))
            m = l + 1;
        if (m == i)
            return top;
        heap_swap(s, i, m);
        i = m;
    }
}

/* A free task record, or NONE when the pool cannot grow. */
static size_t task_new(struct sim *s)
{
    size_t id = s->free_list;

    if (id != NONE) {
        s->free_list = s->tasks[id].next;
        return id;
    }
    if (s->n_tasks == s->cap_tasks) {
        size_t cap = s->cap_tasks * 2 + 1024;
        struct task *tk = lt_reallocarray(s->tasks, cap, sizeof(*tk));
        size_t *h = lt_reallocarray(s->heap, cap, sizeof(*h));
        if (tk != NULL)
            s->tasks = tk;
        if (h != NULL)
            s->heap = h;
        if (tk == NULL || h == NULL)
            return NONE;
        s->cap_tasks = cap;
    }
    return s->n_tasks++;
}

static void task_start(struct sim *s, size_t id, double now)
{
    struct task *tk = &s->tasks[id];
    struct lt_res *f = &s->view[tk->machine].free;

    f->cpu -= tk->req.cpu;
    f->mem -= tk->req.mem;
    tk->finish = now + expo(&s->work, s->c->classes[tk->k].mu);
    heap_push(s, id);
}

static bool fits(const struct lt_res *req, const struct lt_res *free)
{
    return req->cpu <= free->cpu && req->mem <= free->mem;
}

/* Completes every task that finishes by time `until`, starting queued heads that fit. */
static void advance(struct sim *s, double until)
{
    while (s->n_heap > 0 && fin(s, 0) <= until) {
        size_t id = heap_pop(s), m = s->tasks[id].machine;
        double now = s->tasks[id].finish;
        struct lt_lotes_machine *v = &s->view[m];

        v->free.cpu += s->tasks[id].req.cpu;
        v->free.mem += s->tasks[id].req.mem;
        s->tasks[id].next = s->free_list;
        s->free_list = id;
        while (s->q_head[m] != NONE && fits(&s->tasks[s->q_head[m]].req, &v->free)) {
            size_t h = s->q_head[m];
            s->q_head[m] = s->tasks[h].next;
            if (s->q_head[m] == NONE)
                s->q_tail[m] = NONE;
            v->queue_len--;
            task_start(s, h, now);
        }
    }
}

static void enqueue(struct sim *s, size_t id)
{
    struct task *tk = &s->tasks[id];
    size_t m = tk->machine;

    tk->next = NONE;
    if (s->q_tail[m] == NONE)
        s->q_head[m] = id;
    else
        s->tasks[s->q_tail[m]].next = id;
    s->q_tail[m] = id;
    s->view[m].queue_len++;
}

/* Dispatches one class-k task at time now and applies the choice; *ns gets the call's time
 * when ns is not NULL. 0, or -1 after printing. */
static int arrive(struct sim *s, size_t k, double now, double *ns)
{
    struct lt_lotes_choice ch;
    struct lt_res req = draw_req(s, k);
    struct lt_err err;
    size_t id;
    double t0 = 0;
    int rc;

    lt_err_init(&err, NULL);
    if (ns != NULL)
        t0 = now_s();
    rc = lt_lotes_dispatch(s->t, s->view, s->n, k, &req, &s->disp, &ch, &err);
    if (ns != NULL)
        *ns = (now_s() - t0) * 1e9;
    if (rc < 0) {
        fprintf(stderr, PROG ": %s: dispatch: %s\n", s->c->name, err.text);
        return -1;
    }
    if (ch.machine == LT_NO_MACHINE) {
        s->how[4]++;
        return 0;
    }
    if (ch.machine >= s->n || ch.config >= s->t->n_configs) {
        fprintf(stderr, PROG ": %s: dispatch chose machine %zu of %zu\n", s->c->name, ch.machine,
                s->n);
        return -1;
    }
    s->how[ch.how]++;
    if ((id = task_new(s)) == NONE) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    s->tasks[id].req = req;
    s->tasks[id].machine = ch.machine;
    s->tasks[id].k = k;
    if (ch.how == LT_LOTES_FIRST_FIT || ch.how == LT_LOTES_ANY_ROOM)
        task_start(s, id, now);
    else
        enqueue(s, id);
    return 0;
}

static void sim_release(struct sim *s)
{
    lt_free(s->view);
    lt_free(s->q_head);
    lt_free(s->q_tail);
    lt_free(s->tasks);
    lt_free(s->heap);
}

/* The view: configurations shuffled over the machine indexes (Fisher-Yates on stream
 * LT_RNG_MACHINES), bins by lt_lotes_machine_bins, every machine empty. 0, or -1 after
 * printing. */
static int sim_init(struct sim *s, const struct cell *c, const struct lt_lotes_tables *t,
                    uint64_t seed)
{
    size_t *cfg = lt_calloc(c->machines, sizeof(*cfg)), *bin = NULL, i = 0;
    struct lt_rng mr;
    struct lt_err err;
    int rc = -1;

    memset(s, 0, sizeof(*s));
    s->t = t;
    s->c = c;
    s->n = c->machines;
    s->free_list = NONE;
    s->view = lt_calloc(s->n, sizeof(*s->view));
    s->q_head = lt_calloc(s->n, sizeof(*s->q_head));
    s->q_tail = lt_calloc(s->n, sizeof(*s->q_tail));
    bin = lt_calloc(s->n, sizeof(*bin));
    if (cfg == NULL || bin == NULL || s->view == NULL || s->q_head == NULL || s->q_tail == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    for (size_t j = 0; j < c->p.n_configs; j++)
        for (size_t m = 0; m < c->configs[j].n; m++)
            cfg[i++] = j;
    lt_rng_init(&mr, seed, LT_RNG_MACHINES);
    for (i = s->n - 1; i > 0; i--) {
        size_t r = (size_t)lt_rng_below(&mr, i + 1), x = cfg[i];
        cfg[i] = cfg[r];
        cfg[r] = x;
    }
    lt_err_init(&err, NULL);
    if (lt_lotes_machine_bins(t, cfg, s->n, bin, &err) < 0) {
        fprintf(stderr, PROG ": %s: machine bins: %s\n", c->name, err.text);
        goto out;
    }
    for (i = 0; i < s->n; i++) {
        s->view[i].config = cfg[i];
        s->view[i].bin = bin[i];
        s->view[i].free = c->configs[cfg[i]].cap;
        s->q_head[i] = s->q_tail[i] = NONE;
    }
    lt_rng_init(&s->work, seed, LT_RNG_WORKLOAD);
    lt_rng_init(&s->disp, seed, LT_RNG_POLICY);
    rc = 0;
out:
    lt_free(cfg);
    lt_free(bin);
    return rc;
}

/* The stationary population of an infinite-server system at rate load x lambda*: that many
 * tasks (rounded), classes in proportion to alpha_k / mu_k, residual service exponential. */
static int prefill(struct sim *s, double rate, size_t *n_out)
{
    double w[LT_LOTES_TABLE3_CLASSES], mean = 0;
    size_t n;

    for (size_t k = 0; k < s->c->p.n_classes; k++) {
        w[k] = s->c->classes[k].alpha / s->c->classes[k].mu;
        mean += rate * w[k];
    }
    n = (size_t)llround(mean);
    for (size_t i = 0; i < n; i++)
        if (arrive(s, draw_class(&s->work, w, s->c->p.n_classes), 0.0, NULL) < 0)
            return -1;
    *n_out = n;
    return 0;
}

/* Allocated shares of the total cpu and mem, and the tasks waiting in queues. */
static void sim_state(const struct sim *s, double *cpu, double *mem, size_t *queued)
{
    double cap_c = 0, cap_m = 0, free_c = 0, free_m = 0;

    *queued = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct lt_res *cap = &s->c->configs[s->view[i].config].cap;
        cap_c += cap->cpu;
        cap_m += cap->mem;
        free_c += s->view[i].free.cpu;
        free_m += s->view[i].free.mem;
        *queued += s->view[i].queue_len;
    }
    *cpu = 1.0 - free_c / cap_c;
    *mem = 1.0 - free_m / cap_m;
}

/* Runs the dispatch benchmark of one cell and prints its line. 0, or -1 after printing. */
static int bench_dispatch(const struct cell *c, const struct lt_lotes_tables *t,
                          const struct opts *o)
{
    double alpha[LT_LOTES_TABLE3_CLASSES], rate = o->load * t->lambda_alloc, now = 0, total = 0;
    double *ns = calloc((size_t)o->ops, sizeof(*ns)), cpu, mem, t0, fill_s, med, p99;
    size_t n_fill = 0, queued;
    struct sim s;
    int rc = -1;

    if (ns == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    if (sim_init(&s, c, t, o->seed) < 0)
        goto out_sim; /* sim_init zeroes s first, so what it allocated is released */
    for (size_t k = 0; k < c->p.n_classes; k++)
        alpha[k] = c->classes[k].alpha;
    t0 = now_s();
    if (prefill(&s, rate, &n_fill) < 0)
        goto out_sim;
    fill_s = now_s() - t0;
    memset(s.how, 0, sizeof(s.how));
    for (long i = 0; i < o->ops; i++) {
        now += expo(&s.work, rate);
        advance(&s, now);
        if (arrive(&s, draw_class(&s.work, alpha, c->p.n_classes), now, &ns[i]) < 0)
            goto out_sim;
        total += ns[i];
    }
    sim_state(&s, &cpu, &mem, &queued);
    med = quantile(ns, (size_t)o->ops, 0.5);
    p99 = quantile(ns, (size_t)o->ops, 0.99);
    printf("{\"bench\":\"lotes_dispatch\",\"cell\":\"%s\",\"machines\":%zu,\"load\":%g,"
           "\"prefill_tasks\":%zu,\"prefill_s\":%.3f,\"ops\":%ld,\"sim_hours\":%.4f,"
           "\"cpu_alloc\":%.4f,\"mem_alloc\":%.4f,\"running\":%zu,\"queued\":%zu,"
           "\"first_fit\":%llu,\"any_room\":%llu,\"queued_j\":%llu,\"queued_any\":%llu,"
           "\"no_machine\":%llu,\"median_ns\":%.0f,\"p99_ns\":%.0f,\"mean_ns\":%.0f,"
           "\"decisions_per_s\":%.0f}\n",
           c->name, s.n, o->load, n_fill, fill_s, o->ops, now, cpu, mem, s.n_heap, queued,
           (unsigned long long)s.how[0], (unsigned long long)s.how[1], (unsigned long long)s.how[2],
           (unsigned long long)s.how[3], (unsigned long long)s.how[4], med, p99,
           total / (double)o->ops, total > 0 ? (double)o->ops / (total * 1e-9) : 0.0);
    rc = 0;
out_sim:
    sim_release(&s);
out:
    free(ns);
    return rc;
}

/* Median of back-to-back clock_gettime pairs, in ns (reported, never subtracted). */
static double timer_ns(void)
{
    double *d = calloc(TIMER_PAIRS, sizeof(*d)), med;

    if (d == NULL)
        return 0;
    for (size_t i = 0; i < TIMER_PAIRS; i++) {
        double t0 = now_s();
        d[i] = (now_s() - t0) * 1e9;
    }
    med = quantile(d, TIMER_PAIRS, 0.5);
    free(d);
    return med;
}

int main(int argc, char **argv)
{
    static struct cell cells[2];
    struct opts o;
    int rc;

    memset(&o, 0, sizeof(o));
    rc = parse_opts(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    cell_tables13(&cells[0]);
    cell_google(&cells[1], (size_t)o.machines);
    printf("{\"bench\":\"lotes_timer\",\"timer_ns\":%.0f}\n", timer_ns());
    for (size_t i = 0; i < 2; i++) {
        struct lt_lotes_tables *t;
        cell_finish(&cells[i]);
        if ((t = bench_build(&cells[i], &o)) == NULL)
            return 1;
        rc = bench_dispatch(&cells[i], t, &o);
        lt_lotes_tables_free(t);
        if (rc < 0)
            return 1;
        fflush(stdout);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
