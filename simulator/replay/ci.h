/* ci.h -- mean and 95 % confidence interval of a few values (T(x) over seeds).
 *
 * The interval is Student's: mean +- t(0.975, n - 1) * s / sqrt(n), s the sample standard
 * deviation (n - 1 in the denominator). The runs of one (policy, x) cell differ only in the
 * seed, so they are independent draws of the cell's result; with the handful of seeds a sweep
 * affords, the normal's 1.96 would understate the interval (t is 4.30 for 3 seeds).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_CI_H
#define SIM_CI_H

#include <stddef.h>

/* t(0.975, df), the two-sided 95 % quantile of Student's t with df >= 1 degrees of freedom:
 * exact to 3 decimals from a table for df <= 30, the Cornish-Fisher expansion beyond
 * (within 0.001). NAN for df == 0. */
double sim_t975(size_t df);

/* The mean of v[0..n-1] and the half-width of its 95 % interval; the half-width is NAN
 * when n < 2 (no spread to estimate), the mean NAN when n == 0. */
void sim_ci95(const double *v, size_t n, double *mean, double *half);

#endif
