/* workload.c -- Cavdar's generated workloads W-B..W-E and their low-load versions
 * (lt_workload.h), and Table 9.2's arrival statistics.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_workload.h"

#include <math.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_rng.h"

/* Table 9.4; mean_on calibrated for 60,000 arrivals in 15 h (A38): with OFF and ON means
 * T and L and rates 1/g and 1/b, a cycle carries T/g + L/b arrivals in T + L seconds. */
static const struct lt_workload_spec specs[] = {
    {"w-b", 6.0, 0.6, 6 * 60.0, 612.0, {0, 0}, {0, 0}, {0, 0}, true},
    {"w-c", 3.0, 0.15, 36 * 60.0, 302.0, {0, 0}, {0, 0}, {0, 0}, true},
    {"w-d", 6.0, 0.6, 6 * 60.0, 612.0, {0.01, 0.02}, {0.01, 0.02}, {3400, 27200}, false},
    {"w-e", 3.0, 0.15, 36 * 60.0, 302.0, {0.01, 0.02}, {0.01, 0.02}, {3400, 27200}, false},
    {"w-b_l", 8.0, 0.8, 6 * 60.0, 612.0, {0, 0}, {0, 0}, {0, 0}, true},
    {"w-c_l", 4.0, 0.20, 36 * 60.0, 302.0, {0, 0}, {0, 0}, {0, 0}, true},
    {"w-d_l", 8.0, 0.8, 6 * 60.0, 612.0, {0.01, 0.02}, {0.01, 0.02}, {3400, 27200}, false},
    {"w-e_l", 4.0, 0.20, 36 * 60.0, 302.0, {0.01, 0.02}, {0.01, 0.02}, {3400, 27200}, false},
};

#define N_SPECS (sizeof(specs) / sizeof(specs[0]))

/* Table 5.2, "% of tasks" per priority 0..11 ("<=0.01" read as 0.01). */
static const double class_share[12] = {23.29, 12.78, 0.39, 0.01, 59.94, 0.01,
                                       1.28,  0.01,  1.10, 1.19, 0.01,  0.01};

const struct lt_workload_spec *lt_workload_find(const char *name, struct lt_err *err)
{
    for (size_t k = 0; name != NULL && k < N_SPECS; k++) {
        if (strcmp(specs[k].name, name) == 0)
            return &specs[k];
    }
    lt_err_set(err, LT_ENOTFOUND, 0, 0,
               "unknown workload '%s' (known: w-b, w-c, w-d, w-e, w-b_l, w-c_l, w-d_l, w-e_l)",
               name != NULL ? name : "(null)");
    return NULL;
}

static double expo(struct lt_rng *r, double mean)
{
    return -mean * log1p(-lt_rng_uniform(r));
}

static int draw_class(struct lt_rng *r)
{
    double total = 0.0, u;

    for (int c = 0; c < 12; c++)
        total += class_share[c];
    u = lt_rng_uniform(r) * total;
    for (int c = 0; c < 11; c++) {
        if (u < class_share[c])
            return c;
        u -= class_share[c];
    }
    return 11;
}

static bool positive(double v)
{
    return v > 0.0 && isfinite(v);
}

/* The pool's tasks as a pooled spec copies them: each must be a valid task. */
static int pool_check(const struct lt_workload_spec *w, const struct lt_slot_task *pool,
                      size_t n_pool, struct lt_err *err)
{
    if (pool == NULL || n_pool == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "workload '%s' draws its tasks from a pool of real tasks (W-A's, "
                          "from a trace), and none was given",
                          w->name);
    for (size_t k = 0; k < n_pool; k++) {
        const struct lt_slot_task *p = &pool[k];
        if (p->prio < 0 || p->prio > 11 || !positive(p->demand) || !(p->mem >= 0.0) ||
            !(p->mem <= 1.0))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "workload '%s': pool task %zu (id %lld) has priority %d, demand %g, "
                              "memory %g (want 0..11, > 0, [0, 1])",
                              w->name, k, (long long)p->id, p->prio, p->demand, p->mem);
    }
    return 0;
}

int lt_workload_generate(const struct lt_workload_spec *w, double hours, uint64_t seed,
                         const struct lt_slot_task *pool, size_t n_pool, struct lt_slot_task **out,
                         size_t *n, struct lt_err *err)
{
    struct lt_rng arr, attr;
    struct lt_slot_task *t = NULL;
    size_t cap = 0, k = 0;
    double end = hours * 3600.0, now = 0.0, phase_end;
    bool on = false;

    *out = NULL;
    *n = 0;
    if (w == NULL || !positive(w->mean_gap) || !positive(w->mean_gap_burst) ||
        !positive(w->mean_off) || !positive(w->mean_on))
        return lt_err_set(err, LT_EINVAL, 0, 0, "workload '%s': a mean time is not > 0",
                          w != NULL && w->name != NULL ? w->name : "(null)");
    if (w->pooled) {
        int rc = pool_check(w, pool, n_pool, err);
        if (rc < 0)
            return rc;
    } else if (pool != NULL || n_pool != 0) {
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "workload '%s' is synthetic: it draws its own tasks and takes no pool",
                          w->name);
    }
    for (int g = 0; g < 2 && !w->pooled; g++) {
        if (!positive(w->usage[g]) || !positive(w->mem[g]) || !positive(w->exec[g]))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "workload '%s': a mean usage or execution time is not > 0", w->name);
    }
    if (!positive(hours) || end > 1e9)
        return lt_err_set(err, LT_EINVAL, 0, 0, "workload '%s': duration %g h is not in (0, %g]",
                          w->name, hours, 1e9 / 3600.0);
    /* arrivals and attributes on separate sub-streams: changing one never shifts the other */
    lt_rng_init(&arr, seed, LT_RNG_WORKLOAD);
    lt_rng_init(&attr, seed ^ UINT64_C(0x9e3779b97f4a7c15), LT_RNG_WORKLOAD);
    phase_end = expo(&arr, w->mean_off); /* the cluster starts between bursts */
    for (;;) {
        double gap = expo(&arr, on ? w->mean_gap_burst : w->mean_gap);

        if (now + gap >= phase_end) { /* memoryless: restart the draw in the next phase */
            now = phase_end;
            on = !on;
            phase_end = now + expo(&arr, on ? w->mean_on : w->mean_off);
            if (now >= end)
                break;
            continue;
        }
        now += gap;
        if (now >= end)
            break;
        if (k == cap) {
            size_t c = cap ? 2 * cap : 1024;
            struct lt_slot_task *nt = lt_reallocarray(t, c, sizeof(*nt));
            if (nt == NULL) {
                lt_free(t);
                return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory generating '%s'", w->name);
            }
            t = nt;
            cap = c;
        }
        memset(&t[k], 0, sizeof(t[k])); /* padding too: equal seeds give equal bytes */
        t[k].id = (int64_t)k;
        t[k].arrival = now;
        if (w->pooled) {
            const struct lt_slot_task *p = &pool[lt_rng_below(&attr, n_pool)];
            t[k].prio = p->prio;
            t[k].demand = p->demand;
            t[k].mem = p->mem;
        } else {
            int c = draw_class(&attr), g = c >= 9 ? 1 : 0;
            double usage = expo(&attr, w->usage[g]), mem = expo(&attr, w->mem[g]);
            double exec = expo(&attr, w->exec[g]);

            t[k].prio = c;
            t[k].demand = usage * exec > 0.0 ? usage * exec : 1e-9; /* > 0 even for U = 0 */
            t[k].mem = mem < 1.0 ? mem : 1.0;
        }
        k++;
    }
    *out = t;
    *n = k;
    return 0;
}

void lt_arrival_stats(const double *t, size_t n, struct lt_arrival_stats *out)
{
    size_t a = 0, b = 0;

    memset(out, 0, sizeof(*out));
    out->arrivals = n;
    for (size_t k = 0; k < n; k++) {
        while (t[k] - t[a] >= 60.0)
            a++;
        while (t[k] - t[b] >= 600.0)
            b++;
        if (k + 1 - a > out->max_per_min)
            out->max_per_min = k + 1 - a;
        if (k + 1 - b > out->max_per_10min)
            out->max_per_10min = k + 1 - b;
        if (k > 0 && t[k] - t[k - 1] > out->max_gap)
            out->max_gap = t[k] - t[k - 1];
    }
}
