/* lt_workload.h -- synthetic workloads for the slot simulator: Cavdar's W-D and W-E (Tables
 * 9.2, 9.4) and their low-load versions, and the arrival statistics of Table 9.2.
 *
 * Source: Cavdar 2015, section 9.3 [L1801-L1875]. The thesis gives the mean interarrival
 * times (background, during bursts) and the mean time between bursts, but not the bursts'
 * length; the digest's reading A38 is taken: a two-state ON/OFF process, OFF ~ Exp(between
 * bursts) with Poisson arrivals at the background rate, ON ~ Exp(L) at the burst rate, L
 * calibrated so that 15 h hold 60,000 arrivals [L1819] (612 s for W-B/W-D, 302 s for
 * W-C/W-E). Task attributes follow A39: the class from Table 5.2's shares, CPU and memory
 * usage ~ Exp(0.01) (production 9-11: Exp(0.02)), memory clipped at 1, execution time ~
 * Exp(3400 s) (production: Exp(27200 s)), CPU demand = usage x execution time, all draws
 * independent and seeded (stream LT_RNG_WORKLOAD).
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
};

/* The presets "w-d", "w-e", "w-d_l", "w-e_l" (Table 9.4); NULL and LT_ENOTFOUND naming the
 * known ones otherwise. (W-A is the Google trace itself; W-B and W-C sample task attributes
 * from it and are not here.) */
const struct lt_workload_spec *lt_workload_find(const char *name, struct lt_err *err);

/* Generates the tasks arriving in [0, hours * 3600) into a new array (*out, *n; free with
 * lt_free), ids 0, 1, ... in arrival order. Errors: LT_EINVAL for a bad spec or duration,
 * LT_ENOMEM. */
LT_MUST_CHECK int lt_workload_generate(const struct lt_workload_spec *w, double hours,
                                       uint64_t seed, struct lt_slot_task **out, size_t *n,
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
