/* hist.h -- log-linear histogram of non-negative integers (waiting times in microseconds).
 *
 * Values below 2^HIST_SUB_BITS are counted exactly; above, each power-of-two range is cut
 * into 2^(HIST_SUB_BITS-1) equal sub-buckets, so a bucket's width is at most 2^-(SUB_BITS-1)
 * of its values: with HIST_SUB_BITS = 11 a quantile is off by less than 0.1 %. Fixed size
 * (no allocation after sim_hist_init), O(1) add, O(buckets) quantile. The sum is kept exactly
 * in long double for the mean.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_HIST_H
#define SIM_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 11
#define HIST_SUB      (1u << HIST_SUB_BITS) /* exact values 0 .. HIST_SUB - 1 */
#define HIST_HALF     (HIST_SUB / 2)        /* sub-buckets per power of two above */
#define HIST_BUCKETS  (HIST_SUB + (64 - HIST_SUB_BITS) * HIST_HALF)

struct sim_hist {
    uint64_t n;                   /* values added */
    long double sum;              /* their sum */
    uint64_t max;                 /* largest value added (0 if none) */
    uint64_t count[HIST_BUCKETS]; /* per bucket */
};

void sim_hist_init(struct sim_hist *h);
void sim_hist_add(struct sim_hist *h, uint64_t v);

/* The value at quantile q in [0, 1] (nearest rank: the smallest bucket whose cumulative count
 * reaches ceil(q * n), at least 1), reported as the bucket's midpoint clamped to max; 0 when
 * the histogram is empty. */
uint64_t sim_hist_quantile(const struct sim_hist *h, double q);

#endif
