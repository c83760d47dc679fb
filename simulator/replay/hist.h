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

#include <stdbool.h>
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

/* Right-censored values. obs holds the observed values (waits of the tasks that started),
 * cens the censoring values (for a task that never started, the time it had waited when it
 * left or the window ended: its wait is at least that).
 *
 * sim_hist_quantile_censored: the nearest-rank quantile q of obs and cens together, each
 * censored task counted at its censoring value. Since a censored task's true value is at
 * least its censoring value, this is a lower bound of the true quantile; *bound tells whether
 * it is only that: false when no censoring value lies in or below the bucket reached (then
 * every task at or below it has its true value there, and the quantile is exact to the
 * bucket), true otherwise. 0 (and *bound false) when both are empty. */
uint64_t sim_hist_quantile_censored(const struct sim_hist *obs, const struct sim_hist *cens,
                                    double q, bool *bound);

/* The Kaplan-Meier estimate of quantile q: the survival function S is the product over the
 * buckets b of (1 - d_b / n_b), d_b the values of obs in b and n_b the values of obs and cens
 * not in a bucket below b (a censoring value ties after the values of its bucket); the
 * quantile is the first bucket where S <= 1 - q (its midpoint, clamped to the largest
 * value). Returns false, *value = the largest value of obs and cens, when S never gets there
 * (more than 1 - q of the tasks are still censored: the quantile is beyond every value seen)
 * or obs is empty. */
bool sim_hist_km_quantile(const struct sim_hist *obs, const struct sim_hist *cens, double q,
                          uint64_t *value);

#endif
