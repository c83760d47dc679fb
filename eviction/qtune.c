/* qtune.c -- Simon & McGalliard's self-tuning search (Algorithm 2, CostEval): the grid, the
 * costs, the search over a live state, the offline (dynamic-static) and online (dynamic)
 * searches (lt_qtune.h, docs/queue.md "Self-tuning").
 *
 * Source: [S L262-L298, L333-L335] as ../shared/spec/queue-sla-network.md 1.6 defines it:
 *   the grid from integers (40 values for the printed loop, 21 for Algorithm 1's header), the
 *   cost of the value just computed (not the printed cost[i] after i++), the argmin triplet
 *   with the incumbent kept on a tie, forks with no future arrivals.
 * Pruning (exact): simulations of one source (a fork of one live state, or one workload from
 *   t = 0) under two triplets stay identical as long as they take the same dispatch decision
 *   at every instant, and the decision at an instant depends only on the queue's order then:
 *   for rigid dispatch without backfill on the jobs that start and the one that blocks (a
 *   prefix of the order), for fractional on the jobs that get the free cores (a prefix), for
 *   backfill on the whole order. The search runs one simulation for a class of triplets
 *   (its representative, the first) and, at every instant that dispatches (work queued and a
 *   core free), checks each other member's order against the representative's prefix with
 *   the member's own keys, computed exactly as lt_qorder_key does (the same operations on the
 *   same logs, so the same bits); the members that differ leave as a new class, which replays
 *   the prefix they shared and goes on checking from that instant. Every triplet's cost is
 *   then bit for bit that of its own simulation (tests/unit/eviction/test_qtune.c checks it
 *   against the unpruned search). Off when the source re-keys with reprioritise_s > 0 (its
 *   keys are not of the instant).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_qtune.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lt_mem.h"

/* ---- the grid ---- */

/* The integers (a, d) with lo = a / d and step = 1 / d, if there are (false otherwise). */
static bool decimal_axis(const struct lt_qgrid *g, double *a, double *d)
{
    double inv = 1 / g->step, r = round(inv), x;

    if (!(g->step <= 1) || !(fabs(inv - r) <= 1e-9 * r) || r > 1e6)
        return false;
    x = g->lo * r;
    if (!(fabs(x - round(x)) <= 1e-9 * fmax(1, fabs(x))))
        return false;
    *a = round(x);
    *d = r;
    return true;
}

double lt_qgrid_value(const struct lt_qgrid *g, size_t i)
{
    double a, d;

    if (decimal_axis(g, &a, &d))
        return (a + (double)i) / d;
    return g->lo + (double)i * g->step;
}

size_t lt_qgrid_size(const struct lt_qgrid *g)
{
    return g->count * g->count * g->count;
}

void lt_qgrid_triplet(const struct lt_qgrid *g, size_t k, double *alpha, double *beta,
                      double *gamma)
{
    size_t c = g->count;

    *alpha = lt_qgrid_value(g, k / (c * c));
    *beta = lt_qgrid_value(g, k / c % c);
    *gamma = lt_qgrid_value(g, k % c);
}

/* The axis index of v, or SIZE_MAX. */
static size_t axis_index(const struct lt_qgrid *g, double v)
{
    double i = round((v - g->lo) / g->step);

    if (!(i >= 0 && i < (double)g->count))
        return SIZE_MAX;
    double x = lt_qgrid_value(g, (size_t)i);

    return !(x < v) && !(x > v) ? (size_t)i : SIZE_MAX;
}

size_t lt_qgrid_index(const struct lt_qgrid *g, double alpha, double beta, double gamma)
{
    size_t a = axis_index(g, alpha), b = axis_index(g, beta), c = axis_index(g, gamma);

    if (a == SIZE_MAX || b == SIZE_MAX || c == SIZE_MAX)
        return SIZE_MAX;
    return (a * g->count + b) * g->count + c;
}

/* Reads "lo:hi:step" into *g. */
static int parse_range(const char *s, struct lt_qgrid *g, struct lt_err *err)
{
    double v[3];
    const char *p = s;
    char *end;
    double n;

    for (int k = 0; k < 3; k++) {
        v[k] = strtod(p, &end);
        if (end == p || *p == ' ' || !isfinite(v[k]) || *end != (k < 2 ? ':' : '\0'))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "grid '%s' is not 'lo:hi:step' (three finite numbers), "
                              "'alg1' or 'paper64000'",
                              s);
        p = end + 1;
    }
    if (!(v[2] > 0) || !(v[1] >= v[0]))
        return lt_err_set(err, LT_EINVAL, 0, 0, "grid '%s' needs step > 0 and hi >= lo", s);
    n = floor((v[1] - v[0]) / v[2] + 1e-6) + 1;
    if (!(n <= LT_QGRID_MAX_COUNT))
        return lt_err_set(err, LT_EINVAL, 0, 0, "grid '%s' has %.0f values per axis, more than %d",
                          s, n, LT_QGRID_MAX_COUNT);
    *g = (struct lt_qgrid){v[0], v[1], v[2], (size_t)n};
    return 0;
}

int lt_qgrid_parse(const char *s, struct lt_qgrid *g, struct lt_err *err)
{
    if (s == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no grid given");
    if (strcmp(s, "alg1") == 0)
        return parse_range("-1:1:0.1", g, err);
    if (strcmp(s, "paper64000") == 0)
        return parse_range("-2:1.9:0.1", g, err);
    return parse_range(s, g, err);
}

/* ---- costs ---- */

static const char *const cost_names[] = {"makespan",   "mean-response", "mean-wait",
                                         "total-wait", "mean-xf",       "neg-utilisation"};

#define N_COSTS (sizeof(cost_names) / sizeof(cost_names[0]))

int lt_qcost_find(const char *name, enum lt_qcost *out, struct lt_err *err)
{
    for (size_t k = 0; k < N_COSTS; k++) {
        if (name != NULL && strcmp(name, cost_names[k]) == 0) {
            *out = (enum lt_qcost)k;
            return 0;
        }
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown cost '%s' (known: makespan, mean-response, mean-wait, total-wait, "
                      "mean-xf, neg-utilisation)",
                      name ? name : "(null)");
}

const char *lt_qcost_name(enum lt_qcost c)
{
    return (unsigned)c < N_COSTS ? cost_names[c] : "?";
}

double lt_qcost_of(enum lt_qcost c, const struct lt_qsim_summary *sum)
{
    switch (c) {
    case LT_QCOST_MAKESPAN:
        return sum->makespan_s;
    case LT_QCOST_MEAN_RESPONSE:
        return sum->response_mean_s;
    case LT_QCOST_MEAN_WAIT:
        return sum->wait_mean_s;
    case LT_QCOST_TOTAL_WAIT:
        return sum->completed > 0 ? sum->total_wait_s : NAN;
    case LT_QCOST_MEAN_XF:
        return sum->xf_mean;
    case LT_QCOST_NEG_UTILISATION:
        return -sum->utilisation;
    }
    return NAN;
}

size_t lt_qtune_argmin(const double *costs, size_t n, size_t incumbent)
{
    size_t best = SIZE_MAX;

    for (size_t k = 0; k < n; k++) {
        if (isnan(costs[k]))
            continue;
        if (best == SIZE_MAX || costs[k] < costs[best] ||
            (!(costs[k] > costs[best]) && k == incumbent))
            best = k;
    }
    if (best != SIZE_MAX)
        return best;
    return incumbent < n ? incumbent : 0;
}

/* ---- the search engine ---- */

/* Where the simulations come from: forks of live, or runs of p on jobs from t = 0. */
struct source {
    const struct lt_qsim *live;
    const struct lt_qsim_params *p;
    const struct lt_qjob *jobs;
    size_t n;
};

/* A class of triplets idx[lo..hi) sharing a simulation; idx[lo] is its representative; the
 * members are checked from step `from` on (they share the representative's decisions before). */
struct item {
    size_t lo, hi;
    uint64_t from;
};

/* A queued job in the representative's order at one instant. */
struct ent {
    double key, arrival;
    int64_t id;
    size_t job;
};

struct engine {
    struct source src;
    const struct lt_qgrid *g;
    enum lt_qcost c;
    size_t first;
    double *costs;
    size_t *idx; /* the triplets, partitioned into classes */
    size_t n_idx;
    struct item *stack;
    size_t n_stack;
    size_t simulated;
    /* per job of the simulations (all of one source have the same jobs) */
    size_t n_jobs;
    double *ln_n, *ln_r, *ln_w, *mkey;
    size_t *q;
    struct ent *ent;
};

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory in the self-tuning search");
}

/* A simulation of src under o into *out: 0, or the error of lt_qsim_fork / lt_qsim_new. */
static int source_sim(const struct source *src, const struct lt_qorder *o, struct lt_qsim **out,
                      struct lt_err *err)
{
    struct lt_qsim_params p;
    struct lt_err e;

    lt_err_init(&e, NULL);
    if (src->live != NULL) {
        *out = lt_qsim_fork(src->live, o, &e);
    } else {
        p = *src->p;
        p.order = *o;
        p.on_sample = NULL;
        p.on_shadow = NULL;
        *out = lt_qsim_new(&p, src->jobs, src->n, &e);
    }
    if (*out != NULL)
        return 0;
    return lt_err_set(err, e.code < 0 ? e.code : LT_ENOMEM, 0, 0, "%s", e.text);
}

/* The order of triplet k. */
static int triplet_order(const struct lt_qgrid *g, size_t k, struct lt_qorder *o,
                         struct lt_err *err)
{
    double a, b, c;

    lt_qgrid_triplet(g, k, &a, &b, &c);
    return lt_qorder_composite(o, a, b, c, err);
}

/* Runs f to the end and costs it. */
static int finish_cost(struct lt_qsim *f, enum lt_qcost c, double *cost, struct lt_err *err)
{
    struct lt_qsim_summary sum;
    int rc;

    if ((rc = lt_qsim_finish(f, err)) < 0 || (rc = lt_qsim_summarise(f, &sum, err)) < 0)
        return rc;
    *cost = lt_qcost_of(c, &sum);
    return 0;
}

/* lt_qorder_key's operations on precomputed logs (the same bits). */
static double key3(double a, double b, double g, double ln_n, double ln_w, double ln_r)
{
    double key = 0;

    if (a < 0 || a > 0)
        key += a * ln_n;
    if (b < 0 || b > 0)
        key += b * ln_w;
    if (g < 0 || g > 0)
        key += g * ln_r;
    return key;
}

/* The simulator's order: key descending, then arrival, id, index. */
static bool ent_before(double kx, const struct ent *x, double ky, const struct ent *y)
{
    if (kx > ky)
        return true;
    if (ky > kx)
        return false;
    if (x->arrival < y->arrival)
        return true;
    if (y->arrival < x->arrival)
        return false;
    if (x->id != y->id)
        return x->id < y->id;
    return x->job < y->job;
}

static int ent_cmp(const void *pa, const void *pb)
{
    const struct ent *a = pa, *b = pb;

    return ent_before(a->key, a, b->key, b) ? -1 : ent_before(b->key, b, a->key, a);
}

/* The per-job arrays, from the first simulation of the source. */
static int engine_jobs(struct engine *e, const struct lt_qsim *f)
{
    size_t n = lt_qsim_n_jobs(f), m = n ? n : 1;

    e->n_jobs = n;
    e->ln_n = lt_calloc(m, sizeof(*e->ln_n));
    e->ln_r = lt_calloc(m, sizeof(*e->ln_r));
    e->ln_w = lt_calloc(m, sizeof(*e->ln_w));
    e->mkey = lt_calloc(m, sizeof(*e->mkey));
    e->q = lt_calloc(m, sizeof(*e->q));
    e->ent = lt_calloc(m, sizeof(*e->ent));
    if (e->ln_n == NULL || e->ln_r == NULL || e->ln_w == NULL || e->mkey == NULL || e->q == NULL ||
        e->ent == NULL)
        return LT_ENOMEM;
    for (size_t j = 0; j < n; j++) {
        const struct lt_qjob *q = lt_qsim_job(f, j);

        e->ln_n[j] = log(fmax(q->tasks, LT_QORDER_N_MIN));
        e->ln_r[j] = log(fmax(q->estimate_s, LT_QORDER_R_MIN_S));
    }
    return 0;
}

/* How many of the first jobs of the order (e->ent[0..m-1]) decide the dispatch now. */
static size_t decisive(const struct engine *e, const struct lt_qsim *f, size_t m)
{
    const struct lt_qsim_params *p = lt_qsim_params_of(f);
    uint32_t free = p->cores - lt_qsim_busy(f);
    size_t t;

    if (p->dispatch == LT_QDISPATCH_FRACTIONAL) {
        for (t = 0; t < m; t++) {
            uint32_t u = lt_qsim_unstarted(f, e->ent[t].job);

            free -= u < free ? u : free;
            if (free == 0)
                return t + 1;
        }
        return m;
    }
    if (p->backfill != LT_QBACKFILL_NONE)
        return m;
    for (t = 0; t < m; t++) {
        uint32_t n = lt_qsim_job(f, e->ent[t].job)->tasks;

        if (n > free)
            return t + 1; /* the head that blocks */
        free -= n;
        if (free == 0)
            return t + 1;
    }
    return m;
}

/* Does triplet k order the queue as e->ent[0..m-1] in its first L and put the L-th before
 * all the rest? */
static bool same_decision(const struct engine *e, size_t k, size_t m, size_t L)
{
    double a, b, g;

    lt_qgrid_triplet(e->g, k, &a, &b, &g);
    for (size_t t = 0; t < m; t++) {
        size_t j = e->ent[t].job;
        e->mkey[t] = key3(a, b, g, e->ln_n[j], e->ln_w[j], e->ln_r[j]);
    }
    for (size_t t = 0; t + 1 < L; t++)
        if (!ent_before(e->mkey[t], &e->ent[t], e->mkey[t + 1], &e->ent[t + 1]))
            return false;
    for (size_t t = L; t < m; t++)
        if (!ent_before(e->mkey[L - 1], &e->ent[L - 1], e->mkey[t], &e->ent[t]))
            return false;
    return true;
}

/* At a step of the class *it (f its simulation): moves the members deciding otherwise than
 * the representative into a new class checked from this step. */
static void check_step(struct engine *e, const struct lt_qsim *f, struct item *it, uint64_t step)
{
    const struct lt_qsim_params *p = lt_qsim_params_of(f);
    double a, b, g, now = lt_qsim_now(f);
    size_t m, L, hi = it->hi;

    if (lt_qsim_queued(f) == 0 || lt_qsim_busy(f) >= p->cores)
        return; /* nothing is dispatched now */
    m = lt_qsim_queue(f, e->q);
    lt_qgrid_triplet(e->g, e->idx[it->lo], &a, &b, &g);
    for (size_t t = 0; t < m; t++) {
        size_t j = e->q[t];
        const struct lt_qjob *q = lt_qsim_job(f, j);

        e->ln_w[j] = log(fmax(now - q->arrival_s, LT_QORDER_W_MIN_S));
        e->ent[t] =
            (struct ent){key3(a, b, g, e->ln_n[j], e->ln_w[j], e->ln_r[j]), q->arrival_s, q->id, j};
    }
    qsort(e->ent, m, sizeof(*e->ent), ent_cmp);
    L = decisive(e, f, m);
    for (size_t i = it->lo + 1; i < hi;) {
        if (same_decision(e, e->idx[i], m, L)) {
            i++;
            continue;
        }
        hi--;
        size_t tmp = e->idx[i];
        e->idx[i] = e->idx[hi];
        e->idx[hi] = tmp;
    }
    if (hi < it->hi) {
        e->stack[e->n_stack++] = (struct item){hi, it->hi, step};
        it->hi = hi;
    }
}

/* Simulates the class it (pruned) and costs its members. */
static int run_class(struct engine *e, struct item it, struct lt_err *err)
{
    struct lt_qorder o;
    struct lt_qsim *f;
    uint64_t step = 0;
    bool done = false;
    double cost = NAN;
    int rc;

    if ((rc = triplet_order(e->g, e->idx[it.lo], &o, err)) < 0)
        return rc;
    if ((rc = source_sim(&e->src, &o, &f, err)) < 0)
        return rc;
    e->simulated++;
    if (e->ln_n == NULL && (rc = engine_jobs(e, f)) < 0) {
        lt_qsim_free(f);
        return oom(err);
    }
    if (it.hi - it.lo > 1 && it.from == 0)
        check_step(e, f, &it, 0);
    while (rc == 0 && it.hi - it.lo > 1 && !done) {
        if ((rc = lt_qsim_advance(f, &done, err)) == 0 && !done && ++step >= it.from)
            check_step(e, f, &it, step);
    }
    if (rc == 0)
        rc = finish_cost(f, e->c, &cost, err);
    lt_qsim_free(f);
    for (size_t i = it.lo; rc == 0 && i < it.hi; i++)
        e->costs[e->idx[i] - e->first] = cost;
    return rc;
}

static void engine_free(struct engine *e)
{
    lt_free(e->idx);
    lt_free(e->stack);
    lt_free(e->ln_n);
    lt_free(e->ln_r);
    lt_free(e->ln_w);
    lt_free(e->mkey);
    lt_free(e->q);
    lt_free(e->ent);
}

/* Costs triplets [first, last) of g from src into costs[k - first]. */
static int search(const struct source *src, const struct lt_qgrid *g, enum lt_qcost c, size_t first,
                  size_t last, bool prune, double *costs, struct lt_qtune_stats *stats,
                  struct lt_err *err)
{
    struct engine e;
    size_t n = last - first;
    int rc = 0;

    memset(&e, 0, sizeof(e));
    e.src = *src;
    e.g = g;
    e.c = c;
    e.first = first;
    e.costs = costs;
    e.n_idx = n;
    e.idx = lt_calloc(n ? n : 1, sizeof(*e.idx));
    e.stack = lt_calloc(n ? n : 1, sizeof(*e.stack));
    if (e.idx == NULL || e.stack == NULL) {
        engine_free(&e);
        return oom(err);
    }
    for (size_t i = 0; i < n; i++)
        e.idx[i] = first + i;
    if (prune && n > 0) {
        e.stack[e.n_stack++] = (struct item){0, n, 0};
    } else {
        for (size_t i = n; i-- > 0;) /* one class per triplet, popped in grid order */
            e.stack[e.n_stack++] = (struct item){i, i + 1, 0};
    }
    while (rc == 0 && e.n_stack > 0)
        rc = run_class(&e, e.stack[--e.n_stack], err);
    if (stats != NULL)
        *stats = (struct lt_qtune_stats){n, e.simulated};
    engine_free(&e);
    return rc;
}

static int check_range(const struct lt_qgrid *g, enum lt_qcost c, size_t first, size_t last,
                       struct lt_err *err)
{
    if (g == NULL || g->count == 0 || g->count > LT_QGRID_MAX_COUNT || !(g->step > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "self-tuning search: no grid or a bad one");
    if ((unsigned)c >= N_COSTS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "self-tuning search: bad cost %d", (int)c);
    if (first > last || last > lt_qgrid_size(g))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "self-tuning search: triplets [%zu, %zu) are not in a grid of %zu", first,
                          last, lt_qgrid_size(g));
    return 0;
}

int lt_qtune_eval_opt(const struct lt_qsim *live, const struct lt_qgrid *g, enum lt_qcost c,
                      size_t first, size_t last, bool prune, double *costs,
                      struct lt_qtune_stats *stats, struct lt_err *err)
{
    struct source src = {live, NULL, NULL, 0};
    int rc;

    if (live == NULL || (costs == NULL && last > first))
        return lt_err_set(err, LT_EINVAL, 0, 0, "self-tuning search: no live state or costs");
    if ((rc = check_range(g, c, first, last, err)) < 0)
        return rc;
    prune = prune && !(lt_qsim_params_of(live)->reprioritise_s > 0);
    return search(&src, g, c, first, last, prune, costs, stats, err);
}

int lt_qtune_eval(const struct lt_qsim *live, const struct lt_qgrid *g, enum lt_qcost c,
                  size_t first, size_t last, double *costs, struct lt_err *err)
{
    return lt_qtune_eval_opt(live, g, c, first, last, true, costs, NULL, err);
}

/* The grid index of o's triplet, or SIZE_MAX. */
static size_t order_index(const struct lt_qgrid *g, const struct lt_qorder *o)
{
    return lt_qgrid_index(g, o->alpha, o->beta, o->gamma);
}

int lt_qtune_static(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                    const struct lt_qgrid *g, enum lt_qcost c, size_t first, size_t last,
                    bool prune, double *costs, size_t *best, double *best_cost,
                    struct lt_qtune_stats *stats, struct lt_err *err)
{
    struct source src = {NULL, p, jobs, n};
    struct lt_qsim *probe;
    double *own = NULL;
    size_t inc, b;
    int rc;

    if (p == NULL || best == NULL || best_cost == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "self-tuning search: no parameters or result");
    if ((rc = check_range(g, c, first, last, err)) < 0)
        return rc;
    if (first == last)
        return lt_err_set(err, LT_EINVAL, 0, 0, "self-tuning search: empty range [%zu, %zu)", first,
                          last);
    /* the parameters and jobs are checked once, with their error */
    if ((rc = source_sim(&src, &p->order, &probe, err)) < 0)
        return rc;
    lt_qsim_free(probe);
    if (costs == NULL && (costs = own = lt_calloc(last - first, sizeof(*own))) == NULL)
        return oom(err);
    prune = prune && !(p->reprioritise_s > 0);
    if ((rc = search(&src, g, c, first, last, prune, costs, stats, err)) == 0) {
        inc = order_index(g, &p->order);
        b = lt_qtune_argmin(costs, last - first,
                            inc >= first && inc < last ? inc - first : SIZE_MAX);
        *best = first + b;
        *best_cost = costs[b];
    }
    lt_free(own);
    return rc;
}

/* ---- the online search ---- */

void lt_qtune_online_default(struct lt_qtune_online_params *op, const struct lt_qgrid *g,
                             enum lt_qcost c)
{
    memset(op, 0, sizeof(*op));
    op->grid = g;
    op->cost = c;
    op->on_completion = true;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int default_eval(void *arg, const struct lt_qsim *live, const struct lt_qgrid *g,
                        enum lt_qcost c, double *costs, struct lt_err *err)
{
    (void)arg;
    return lt_qtune_eval(live, g, c, 0, lt_qgrid_size(g), costs, err);
}

/* The online run's state between instants. */
struct online {
    const struct lt_qtune_online_params *op;
    struct lt_qsim *live;
    double *costs;
    size_t incumbent; /* grid index of the live order's triplet, or SIZE_MAX */
    bool tuned;
    double last_s;
    uint64_t completed;
    size_t retunes;
};

/* Is now a re-tuning instant (docs/queue.md)? */
static bool retune_due(struct online *o)
{
    const struct lt_qsim_params *p = lt_qsim_params_of(o->live);
    double now = lt_qsim_now(o->live);
    uint64_t done = lt_qsim_completed(o->live);
    bool due, completed = done > o->completed;

    o->completed = done;
    if (lt_qsim_queued(o->live) == 0 || lt_qsim_busy(o->live) >= p->cores)
        return false;
    due = !o->tuned || (o->op->on_completion && completed) ||
          (o->op->retune_s > 0 && now >= o->last_s + o->op->retune_s);
    return due && !(o->tuned && now < o->last_s + o->op->min_gap_s);
}

/* Searches the grid on the live state and adopts the argmin. */
static int retune(struct online *o, struct lt_err *err)
{
    const struct lt_qtune_online_params *op = o->op;
    size_t n = lt_qgrid_size(op->grid), best;
    double cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), wall0 = clock_s(CLOCK_MONOTONIC);
    struct lt_qtune_retune r;
    struct lt_qorder ord;
    int rc;

    rc = op->eval != NULL ? op->eval(op->eval_arg, o->live, op->grid, op->cost, o->costs, err)
                          : default_eval(NULL, o->live, op->grid, op->cost, o->costs, err);
    if (rc < 0)
        return rc;
    best = lt_qtune_argmin(o->costs, n, o->incumbent);
    memset(&r, 0, sizeof(r));
    r.changed = best != o->incumbent;
    if (r.changed) {
        if ((rc = triplet_order(op->grid, best, &ord, err)) < 0 ||
            (rc = lt_qsim_set_order(o->live, &ord, err)) < 0)
            return rc;
        o->incumbent = best;
    }
    r.time_s = lt_qsim_now(o->live);
    lt_qgrid_triplet(op->grid, best, &r.alpha, &r.beta, &r.gamma);
    r.cost = o->costs[best];
    r.queued = lt_qsim_queued(o->live);
    r.triplets = n;
    r.cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    r.wall_s = clock_s(CLOCK_MONOTONIC) - wall0;
    o->tuned = true;
    o->last_s = r.time_s;
    o->retunes++;
    if (op->on_retune != NULL)
        op->on_retune(op->retune_arg, &r);
    return 0;
}

int lt_qtune_online(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                    const struct lt_qtune_online_params *op, struct lt_qjob_out *out,
                    struct lt_qsim_summary *sum, size_t *retunes, struct lt_err *err)
{
    struct online o;
    struct lt_err e;
    bool done = false;
    int rc;

    if (p == NULL || op == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "online search: no parameters");
    if ((rc = check_range(op->grid, op->cost, 0, 0, err)) < 0)
        return rc;
    if (!isfinite(op->retune_s) || op->retune_s < 0 || !isfinite(op->min_gap_s) ||
        op->min_gap_s < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "online search: retune_s and min_gap_s must be >= 0 s, not %g and %g",
                          op->retune_s, op->min_gap_s);
    memset(&o, 0, sizeof(o));
    lt_err_init(&e, NULL);
    o.op = op;
    o.incumbent = order_index(op->grid, &p->order);
    if ((o.live = lt_qsim_new(p, jobs, n, &e)) == NULL)
        return lt_err_set(err, e.code < 0 ? e.code : LT_ENOMEM, 0, 0, "%s", e.text);
    if ((o.costs = lt_calloc(lt_qgrid_size(op->grid), sizeof(*o.costs))) == NULL)
        rc = oom(err);
    while (rc == 0 && (rc = lt_qsim_advance(o.live, &done, err)) == 0 && !done)
        if (retune_due(&o))
            rc = retune(&o, err);
    if (rc == 0 && sum != NULL)
        rc = lt_qsim_summarise(o.live, sum, err);
    if (rc == 0 && out != NULL && n > 0)
        memcpy(out, lt_qsim_outcome(o.live), n * sizeof(*out));
    if (rc == 0 && retunes != NULL)
        *retunes = o.retunes;
    lt_free(o.costs);
    lt_qsim_free(o.live);
    return rc;
}
