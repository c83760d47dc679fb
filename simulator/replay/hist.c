/* hist.c -- log-linear histogram (hist.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "replay/hist.h"

#include <math.h>
#include <string.h>

void sim_hist_init(struct sim_hist *h)
{
    memset(h, 0, sizeof(*h));
}

static unsigned bucket_of(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);   /* 2^e <= v < 2^(e+1), e >= SUB_BITS */
    unsigned shift = e - (HIST_SUB_BITS - 1);          /* keep SUB_BITS significant bits */
    unsigned sub = (unsigned)(v >> shift) - HIST_HALF; /* 0 .. HALF-1 */
    return HIST_SUB + (e - HIST_SUB_BITS) * HIST_HALF + sub;
}

/* Smallest value of bucket b and its width. */
static void bucket_range(unsigned b, uint64_t *lo, uint64_t *width)
{
    if (b < HIST_SUB) {
        *lo = b;
        *width = 1;
        return;
    }
    unsigned e = (b - HIST_SUB) / HIST_HALF + HIST_SUB_BITS;
    unsigned sub = (b - HIST_SUB) % HIST_HALF;
    unsigned shift = e - (HIST_SUB_BITS - 1);
    *lo = ((uint64_t)(sub + HIST_HALF)) << shift;
    *width = UINT64_C(1) << shift;
}

void sim_hist_add(struct sim_hist *h, uint64_t v)
{
    h->count[bucket_of(v)]++;
    h->n++;
    h->sum += (long double)v;
    if (v > h->max)
        h->max = v;
}

uint64_t sim_hist_quantile(const struct sim_hist *h, double q)
{
    if (h->n == 0)
        return 0;
    if (!(q > 0.0))
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);
    if (rank < 1)
        rank = 1;
    if (rank > h->n)
        rank = h->n;
    uint64_t seen = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank) {
            uint64_t lo, width;
            bucket_range(b, &lo, &width);
            uint64_t mid = lo + (width - 1) / 2;
            return mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}

/* The bucket value reported for bucket b: its midpoint, clamped to max. */
static uint64_t bucket_value(unsigned b, uint64_t max)
{
    uint64_t lo, width;
    bucket_range(b, &lo, &width);
    uint64_t mid = lo + (width - 1) / 2;
    return mid > max ? max : mid;
}

static uint64_t rank_of(double q, uint64_t n)
{
    if (!(q > 0.0))
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    uint64_t rank = (uint64_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    return rank > n ? n : rank;
}

uint64_t sim_hist_quantile_censored(const struct sim_hist *obs, const struct sim_hist *cens,
                                    double q, bool *bound)
{
    uint64_t n = obs->n + cens->n, max = obs->max > cens->max ? obs->max : cens->max;
    *bound = false;
    if (n == 0)
        return 0;
    uint64_t rank = rank_of(q, n), seen = 0, seen_cens = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        seen += obs->count[b] + cens->count[b];
        seen_cens += cens->count[b];
        if (seen >= rank) {
            *bound = seen_cens > 0;
            return bucket_value(b, max);
        }
    }
    *bound = cens->n > 0;
    return max;
}

bool sim_hist_km_quantile(const struct sim_hist *obs, const struct sim_hist *cens, double q,
                          uint64_t *value)
{
    uint64_t at_risk = obs->n + cens->n, max = obs->max > cens->max ? obs->max : cens->max;
    double surv = 1.0, target = 1.0 - q;

    *value = max;
    if (at_risk == 0 || obs->n == 0)
        return false;
    for (unsigned b = 0; b < HIST_BUCKETS && at_risk > 0; b++) {
        uint64_t d = obs->count[b];
        if (d > 0) {
            surv *= 1.0 - (double)d / (double)at_risk;
            /* 1e-9: S falls to 1 - q exactly when q * n tasks have started (no censoring) */
            if (surv <= target + 1e-9) {
                *value = bucket_value(b, max);
                return true;
            }
        }
        at_risk -= d + cens->count[b];
    }
    return false;
}
