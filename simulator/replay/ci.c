/* ci.c -- mean and Student-t 95 % confidence interval (ci.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "replay/ci.h"

#include <math.h>

double sim_t975(size_t df)
{
    static const double t[31] = {NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                 2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                 2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                 2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df <= 30)
        return t[df];
    /* Cornish-Fisher: t = z + g1/df + g2/df^2 + g3/df^3, z = 1.959964 */
    double z = 1.959963985, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, d = (double)df;
    double g1 = (z3 + z) / 4.0, g2 = (5 * z5 + 16 * z3 + 3 * z) / 96.0;
    double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384.0;
    return z + g1 / d + g2 / (d * d) + g3 / (d * d * d);
}

void sim_ci95(const double *v, size_t n, double *mean, double *half)
{
    double sum = 0.0, ss = 0.0;

    *mean = NAN;
    *half = NAN;
    if (n == 0)
        return;
    for (size_t k = 0; k < n; k++)
        sum += v[k];
    *mean = sum / (double)n;
    if (n < 2)
        return;
    for (size_t k = 0; k < n; k++)
        ss += (v[k] - *mean) * (v[k] - *mean);
    *half = sim_t975(n - 1) * sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}
