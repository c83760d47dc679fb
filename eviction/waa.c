/* waa.c -- WASP's workload-aware assignment (WAA) over servers with slot counts (lt_slots.h).
 *
 * Source: Cavdar 2015, section 8.3, Fig. 8.2 [L1592-L1618]: "for the production classes,
 *   scheduler sorts the slots according to CPU and assigns the task to the most powerful slot";
 *   [L1742] "sorts the slots according to average CPU per slot".
 * Definition: a slot's power is its server's CPU over its slot count (lt_slot_power); a
 *   production task (class 9-11 [L965]) takes a free slot of the highest power that has one.
 * Reading: A23 of the digest (../shared/spec/cavdar-thesis-digest.md): equal powers form one
 *   tier; if no slot of the top tier is free, the next tier down. Powers are compared exactly:
 *   both front ends compute them with the same division from the same numbers.
 * Users: the slot simulator (slotsim.c) orders its server groups with lt_slot_power_cmp and asks
 *   lt_class_is_production; lotus-extender's prioritize ranks nodes with lt_slot_waa_tiers and
 *   its filter asks lt_slot_node_free (docs/extender.md "Slot mode").
 * Tests: tests/unit/eviction/test_wasc.c (tiers, ties, no free slot, bad power);
 * tests/unit/extender/test_decide.c (through the extender).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_slots.h"

#include <math.h>
#include <stdlib.h>

#include "lt_mem.h"

bool lt_class_is_production(int cls)
{
    return lt_class_group_of(cls) == LT_PRODUCTION;
}

int lt_slot_power_cmp(double a, double b)
{
    return a > b ? -1 : a < b ? 1 : 0;
}

bool lt_slot_node_free(const struct lt_slot_node *s)
{
    return s->used < s->slots;
}

static int by_power(const void *a, const void *b)
{
    return lt_slot_power_cmp(*(const double *)a, *(const double *)b);
}

/* The position of power p in the distinct powers u[0..n-1] (sorted by lt_slot_power_cmp). */
static uint32_t tier_of(const double *u, size_t n, double p)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (lt_slot_power_cmp(u[mid], p) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

int lt_slot_waa_tiers(const struct lt_slot_node *nodes, size_t n, uint32_t *tier, size_t *n_tiers,
                      struct lt_err *err)
{
    double *u;
    size_t k = 0, d = 0;

    if ((n > 0 && (nodes == NULL || tier == NULL)) || n_tiers == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lt_slot_waa_tiers: NULL argument");
    if (n > UINT32_MAX - 1)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lt_slot_waa_tiers: %zu servers (at most %u)", n,
                          (unsigned)(UINT32_MAX - 1));
    for (size_t i = 0; i < n; i++) {
        if (lt_slot_node_free(&nodes[i]) && !(nodes[i].power > 0.0 && isfinite(nodes[i].power)))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "server %zu has a free slot of power %g (expected > 0)", i,
                              nodes[i].power);
    }
    u = lt_calloc(n ? n : 1, sizeof(*u));
    if (u == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory ranking %zu servers", n);
    for (size_t i = 0; i < n; i++) {
        if (lt_slot_node_free(&nodes[i]))
            u[k++] = nodes[i].power;
    }
    qsort(u, k, sizeof(*u), by_power);
    for (size_t i = 0; i < k; i++) { /* distinct powers, most powerful first */
        if (d == 0 || lt_slot_power_cmp(u[d - 1], u[i]) != 0)
            u[d++] = u[i];
    }
    for (size_t i = 0; i < n; i++)
        tier[i] = lt_slot_node_free(&nodes[i]) ? tier_of(u, d, nodes[i].power) : LT_SLOT_NO_TIER;
    *n_tiers = d;
    lt_free(u);
    return 0;
}
