/* lt_workload.h -- generated workloads for the slot simulator: Cavdar's synthetic W-D and W-E
 * and semi-synthetic W-B and W-C (Tables 9.2, 9.4), their low-load versions, and the arrival
 * statistics of Table 9.2.
 *
 * Source: Cavdar 2015, section 9.3 [L1801-L1875]. The thesis gives the mean interarrival
 * times (background, during bursts) and the mean time between bursts, but not the bursts'
 * length; the digest's reading A38 is taken: a two-state ON/OFF process, OFF ~ Exp(between
 * bursts) with Poisson arrivals at the background rate, ON ~ Exp(L) at the burst rate, L
 * calibrated so that 15 h hold 60,000 arrivals [L1819] (612 s for W-B/W-D, 302 s for
 * W-C/W-E). Task attributes follow A39: the class from Table 5.2's shares, CPU and memory
 * usage ~ Exp(0.01) (production 9-11: Exp(0.02)), memory clipped at 1, execution time ~
 * Exp(3400 s) (production: Exp(27200 s)), CPU demand = usage x execution time, all draws
 * independent and seeded (stream LT_RNG_WORKLOAD). W-B and W-C take W-D's and W-E's arrival
 * processes and draw each task's (class, CPU demand, memory) jointly, uniformly from a pool
 * of real tasks (W-A's, from the trace: A39's semi-synthetic reading, keeping the class-resource
 * correlation); the pool is the caller's.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_WORKLOAD_H
#define LT_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "lt_slotsim.h"

struct lt_workload_spec {
    const char *name;
    double mean_gap;       /* background mean interarrival, s */
    double mean_gap_burst; /* mean interarrival during bursts, s */
    double mean_off;       /* mean time between bursts, s */
    double mean_on;        /* mean burst length L, s (A38) */
    double usage[2];       /* mean CPU usage: [0] others, [1] production */
    double mem[2];         /* mean memory usage */
    double exec[2];        /* mean execution time, s */
    bool pooled;           /* W-B, W-C: attributes drawn from a pool (usage, mem, exec unused) */
};

/* The presets "w-b", "w-c", "w-d", "w-e" and their "_l" versions (Table 9.4); NULL and
 * LT_ENOTFOUND naming the known ones otherwise. (W-A is the Google trace itself.) */
const struct lt_workload_spec *lt_workload_find(const char *name, struct lt_err *err);

/* Generates the tasks arriving in [0, hours * 3600) into a new array (*out, *n; free with
 * lt_free), ids 0, 1, ... in arrival order. A pooled spec (W-B, W-C) draws each task's
 * priority, demand and memory together from pool[0..n_pool-1] (uniformly, seeded); a
 * synthetic one takes no pool (NULL, 0). The arrival times depend on the spec and seed only,
 * so W-C and W-E with one seed arrive at the same instants. Errors: LT_EINVAL for a bad spec
 * or duration, a pooled spec without a pool or a synthetic one with one, a pool task with a
 * priority outside 0..11, a demand not > 0 or a memory not in [0, 1] (naming its position and
 * id); LT_ENOMEM. */
LT_MUST_CHECK int lt_workload_generate(const struct lt_workload_spec *w, double hours,
                                       uint64_t seed, const struct lt_slot_task *pool,
                                       size_t n_pool, struct lt_slot_task **out, size_t *n,
                                       struct lt_err *err);

/* Table 9.2's burstiness figures of an arrival sequence (sorted ascending). */
struct lt_arrival_stats {
    size_t arrivals;
    size_t max_per_min;   /* most arrivals in any 60-s window */
    size_t max_per_10min; /* ... in any 600-s window */
    double max_gap;       /* longest time between two arrivals, s */
};

void lt_arrival_stats(const double *t, size_t n, struct lt_arrival_stats *out);

#endif
