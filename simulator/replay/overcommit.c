/* overcommit.c -- --overcommit's factors: parsing, naming and applying them
 * (docs/simulator.md, "Overcommit").
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

static const char *const band_name[SIM_N_BANDS] = {"free", "batch", "prod"};
static const char *const res_name[3] = {"cpu", "mem", "disk"};

#define OC_MAX_FACTOR 100.0

/* a == b, without -Wfloat-equal's complaint (both are finite here). */
static bool same(double a, double b)
{
    return a <= b && a >= b;
}

void sim_overcommit_none(struct sim_overcommit *oc)
{
    for (int b = 0; b < SIM_N_BANDS; b++)
        for (int k = 0; k < 3; k++)
            oc->f[b][k] = 1.0;
}

bool sim_overcommit_is_none(const struct sim_overcommit *oc)
{
    for (int b = 0; b < SIM_N_BANDS; b++)
        for (int k = 0; k < 3; k++)
            if (!same(oc->f[b][k], 1.0))
                return false;
    return true;
}

int sim_band(int priority)
{
    return priority >= 9 ? 2 : priority >= 2 ? 1 : 0;
}

struct lt_res sim_overcommit_apply(const struct sim_overcommit *oc, int priority,
                                   const struct lt_res *req)
{
    const double *f = oc->f[sim_band(priority)];
    return (struct lt_res){req->cpu / f[0], req->mem / f[1], req->disk / f[2]};
}

/* Index of name (len bytes) in names[0..n-1], or -1. */
static int lookup(const char *name, size_t len, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return i;
    return -1;
}

/* One item "[BAND.]RES=F" of the list; set[b][k] records the items given, general[b][k]
 * whether that one came from an item without a band (a band's own item overrides it). */
static int parse_item(const char *flag, const char *item, size_t len, struct sim_overcommit *oc,
                      bool set[SIM_N_BANDS][3], bool general[SIM_N_BANDS][3], struct lt_err *err)
{
    const char *eq = memchr(item, '=', len),
               *dot = memchr(item, '.', eq ? (size_t)(eq - item) : len);
    int b_lo = 0, b_hi = 1; /* no band: the non-production bands, free and batch */
    if (!eq)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: '%.*s' is not [BAND.]RESOURCE=FACTOR", flag,
                          (int)len, item);
    const char *res = item;
    if (dot) {
        int b = lookup(item, (size_t)(dot - item), band_name, SIM_N_BANDS);
        if (b < 0 && (size_t)(dot - item) == 7 && memcmp(item, "nonprod", 7) == 0)
            b = -2;
        if (b == -1)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s: '%.*s': unknown band '%.*s' (known: free, batch, prod, nonprod)",
                              flag, (int)len, item, (int)(dot - item), item);
        if (b >= 0)
            b_lo = b_hi = b;
        res = dot + 1;
    }
    int k = lookup(res, (size_t)(eq - res), res_name, 3);
    if (k < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.*s': unknown resource '%.*s' (known: cpu, mem, disk)", flag,
                          (int)len, item, (int)(eq - res), res);
    char num[64];
    size_t nl = len - (size_t)(eq + 1 - item);
    char *end = NULL;
    double f = NAN;
    if (nl > 0 && nl < sizeof(num)) {
        memcpy(num, eq + 1, nl);
        num[nl] = '\0';
        errno = 0;
        f = strtod(num, &end);
        if (errno != 0 || end == num || *end != '\0')
            f = NAN;
    }
    if (!(f >= 1.0 && f <= OC_MAX_FACTOR)) /* NaN too */
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.*s': the factor must be a number from 1 to %g (a task is "
                          "accounted as its request / factor)",
                          flag, (int)len, item, OC_MAX_FACTOR);
    bool is_general = !dot || b_lo != b_hi;
    for (int b = b_lo; b <= b_hi; b++) {
        if (set[b][k] && general[b][k] == is_general)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s.%s is given twice", flag, band_name[b],
                              res_name[k]);
        if (set[b][k] && is_general)
            continue; /* the band's own item wins, whatever the order */
        oc->f[b][k] = f;
        set[b][k] = true;
        general[b][k] = is_general;
    }
    return 0;
}

int sim_overcommit_parse(const char *flag, const char *s, struct sim_overcommit *oc,
                         struct lt_err *err)
{
    bool set[SIM_N_BANDS][3] = {{false}}, general[SIM_N_BANDS][3] = {{false}};
    sim_overcommit_none(oc);
    if (*s == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: empty list", flag);
    for (const char *p = s;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: '%s' has an empty item", flag, s);
        int rc = parse_item(flag, p, len, oc, set, general, err);
        if (rc < 0)
            return rc;
        if (!c)
            return 0;
        p = c + 1;
    }
}

int sim_overcommit_format(const struct sim_overcommit *oc, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int b = 0; b < SIM_N_BANDS; b++)
        for (int k = 0; k < 3; k++) {
            if (same(oc->f[b][k], 1.0))
                continue;
            char num[32]; /* the shortest of %.15g and %.17g that reads back the same */
            snprintf(num, sizeof(num), "%.15g", oc->f[b][k]);
            if (!same(strtod(num, NULL), oc->f[b][k]))
                snprintf(num, sizeof(num), "%.17g", oc->f[b][k]);
            int w = snprintf(buf + n, cap - n, "%s%s.%s=%s", n ? "," : "", band_name[b],
                             res_name[k], num);
            if (w < 0 || (size_t)w >= cap - n)
                return -1;
            n += (size_t)w;
        }
    return 0;
}

const char *sim_band_name(int band)
{
    return band >= 0 && band < SIM_N_BANDS ? band_name[band] : "?";
}
