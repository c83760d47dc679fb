/* wasc.c -- server types, slot configurations and WASC (lt_slots.h).
 *
 * Source: Cavdar 2015, Table 3.1 [L490-L497], Table 8.1 [L1574-L1584], section 8.2
 * [L1550-L1588] (the Algorithm 8.1 figure is missing from the thesis; the prose is followed).
 * Readings (digest ids): A1 Table 3.1 printed values verbatim; A32 pooled group statistics
 * and rounding to multiples of the minimum core count; A33 phase II by core speed, whole
 * servers, nearest rounding, at least one production server.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_slots.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct lt_server_type types[] = {
    /* name  cpu   mem   cores p_cpu  p_mem p_sleep p_idle p_peak */
    {"A", 0.5, 0.5, 8, 51.5, 18, 46.25, 162, 231.25},
    {"B", 0.5, 0.25, 8, 51.5, 9, 44.5, 162, 222.5},
    {"C", 0.5, 0.75, 8, 51.5, 24, 47.5, 162, 237.5},
    {"D", 1.0, 1.0, 8, 103, 36, 60.2, 162, 301},
};

#define N_TYPES (sizeof(types) / sizeof(types[0]))

size_t lt_server_type_count(void)
{
    return N_TYPES;
}

const struct lt_server_type *lt_server_type_at(size_t i)
{
    return i < N_TYPES ? &types[i] : NULL;
}

const struct lt_server_type *lt_server_type_find(const char *name, struct lt_err *err)
{
    for (size_t k = 0; name != NULL && k < N_TYPES; k++) {
        if (strcmp(types[k].name, name) == 0)
            return &types[k];
    }
    lt_err_set(err, LT_ENOTFOUND, 0, 0, "unknown server type '%s' (known: A, B, C, D)",
               name != NULL ? name : "(null)");
    return NULL;
}

uint64_t lt_slot_config_servers(const struct lt_slot_config *c)
{
    uint64_t n = 0;

    for (size_t k = 0; k < c->n; k++)
        n += c->g[k].count;
    return n;
}

uint64_t lt_slot_config_slots(const struct lt_slot_config *c)
{
    uint64_t n = 0;

    for (size_t k = 0; k < c->n; k++)
        n += (uint64_t)c->g[k].count * c->g[k].slots;
    return n;
}

double lt_slot_power(const struct lt_slot_group *g)
{
    return g->slots > 0 ? g->type->cpu / g->slots : 0.0;
}

static int check_inventory(const struct lt_slot_group *inv, size_t n, struct lt_err *err)
{
    if (inv == NULL || n == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "the server inventory is empty");
    if (n > LT_SLOT_MAX_GROUPS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%zu server groups (at most %d)", n,
                          LT_SLOT_MAX_GROUPS);
    for (size_t k = 0; k < n; k++) {
        const struct lt_server_type *t = inv[k].type;
        if (t == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "server group %zu has no type", k);
        if (!(t->cpu > 0.0) || !isfinite(t->cpu) || t->cores == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "server type '%s' has no CPU or no cores (cpu %g, cores %u)", t->name,
                              t->cpu, (unsigned)t->cores);
        if (inv[k].count == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "server group %zu (type '%s') has no servers",
                              k, t->name);
    }
    return 0;
}

/* Slots for a server of CPU cpu, from n slots on a server of CPU c_max (eq. 8.5), rounded to
 * the nearest whole slot, at least one. */
static uint32_t scaled_slots(double cpu, double c_max, uint32_t n)
{
    double s = floor(cpu / c_max * n + 0.5);

    return s < 1.0 ? 1u : s > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

int lt_slot_count_sc(int level, double cpu, uint32_t *out, struct lt_err *err)
{
    if (level < 1 || level > 4)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot configuration SC%d does not exist (SC1-SC4)",
                          level);
    if (!(cpu > 0.0) || !isfinite(cpu))
        return lt_err_set(err, LT_EINVAL, 0, 0, "a server with CPU %g has no slots under SC%d", cpu,
                          level);
    /* 8 * level slots per 0.5 CPU (Table 8.1: A/B/C 8..32, D 16..64) */
    *out = scaled_slots(cpu, 1.0, 16u * (uint32_t)level);
    return 0;
}

int lt_slot_config_sc(int level, const struct lt_slot_group *inv, size_t n,
                      struct lt_slot_config *out, struct lt_err *err)
{
    struct lt_slot_config c;
    int rc;

    if (level < 1 || level > 4)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot configuration SC%d does not exist (SC1-SC4)",
                          level);
    if ((rc = check_inventory(inv, n, err)) < 0)
        return rc;
    memset(&c, 0, sizeof(c));
    c.n = n;
    for (size_t k = 0; k < n; k++) {
        c.g[k] = inv[k];
        rc = lt_slot_count_sc(level, inv[k].type->cpu, &c.g[k].slots, err);
        if (rc < 0)
            return rc;
    }
    *out = c;
    return 0;
}

int lt_class_group_of(int priority)
{
    if (priority < 0 || priority > 11)
        return -1;
    return priority <= 1 ? LT_GRATIS : priority <= 8 ? LT_MIDDLE : LT_PRODUCTION;
}

void lt_wasc_table_5_2(struct lt_class_stats cls[12])
{
    static const double rows[12][3] = {
        {23.29, 15.408, 0.0066832}, {12.78, 40.758, 0.012176}, {0.39, 382.12, 0.018668},
        {0.01, 0.24663, 0.0034657}, {59.94, 49.768, 0.019338}, {0.01, 0.15221, 0.0034661},
        {1.28, 12.628, 0.020213},   {0.01, NAN, NAN},          {1.10, 25.975, 0.0037737},
        {1.19, 269.47, 0.0071297},  {0.01, 66.186, 0.0092705}, {0.01, 1506.8, 0.010355},
    };

    for (int k = 0; k < 12; k++) {
        cls[k].priority = k;
        cls[k].arrivals = rows[k][0];
        cls[k].cpu_demand = rows[k][1];
        cls[k].cpu_usage = rows[k][2];
        cls[k].cpu_usage_sd = NAN;
    }
}

void lt_wasc_params_default(struct lt_wasc_params *p)
{
    memset(p, 0, sizeof(*p));
    p->c = 2.0;
    p->delta[LT_GRATIS] = 0.5;
    p->delta[LT_MIDDLE] = 0.75;
    p->delta[LT_PRODUCTION] = 1.0;
    p->min_cores = 8;
}

/* A statistic that is either NaN ("not given") or finite and >= 0. */
static bool stat_ok(double v)
{
    return isnan(v) || (isfinite(v) && v >= 0.0);
}

static int check_classes(const struct lt_class_stats *cls, size_t n, struct lt_err *err)
{
    bool seen[12] = {false};

    if (cls == NULL || n == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no class statistics");
    for (size_t k = 0; k < n; k++) {
        const struct lt_class_stats *c = &cls[k];
        if (lt_class_group_of(c->priority) < 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "class %zu: priority %d is not 0..11", k,
                              c->priority);
        if (seen[c->priority])
            return lt_err_set(err, LT_EINVAL, 0, 0, "priority %d has two sets of statistics",
                              c->priority);
        seen[c->priority] = true;
        if (!(isfinite(c->arrivals) && c->arrivals >= 0.0))
            return lt_err_set(err, LT_EINVAL, 0, 0, "priority %d: arrival share %g is not >= 0",
                              c->priority, c->arrivals);
        if (!stat_ok(c->cpu_demand) || !stat_ok(c->cpu_usage) || !stat_ok(c->cpu_usage_sd))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "priority %d: a statistic is negative or infinite (demand %g, "
                              "usage %g, deviation %g)",
                              c->priority, c->cpu_demand, c->cpu_usage, c->cpu_usage_sd);
    }
    return 0;
}

/* Nearest multiple of m to x, at least m. */
static uint32_t round_multiple(double x, uint32_t m)
{
    double k = floor(x / m + 0.5);

    if (k < 1.0)
        k = 1.0;
    if (k * m > (double)UINT32_MAX)
        return UINT32_MAX / m * m;
    return (uint32_t)k * m;
}

/* Phase I for one of the two groups (production or not): pooled mean and deviation of the CPU
 * usage, weighted by arrivals, and the arrival-weighted delta. */
static int pool_group(const struct lt_class_stats *cls, size_t n, bool prod,
                      const struct lt_wasc_params *p, double *xi, double *sd, double *delta,
                      size_t *skipped, struct lt_err *err)
{
    double w = 0.0, mean = 0.0, var = 0.0, dw = 0.0;

    for (size_t k = 0; k < n; k++) {
        const struct lt_class_stats *c = &cls[k];
        if ((lt_class_group_of(c->priority) == LT_PRODUCTION) != prod || c->arrivals <= 0.0)
            continue;
        if (isnan(c->cpu_usage) || (!p->sd_given && isnan(c->cpu_usage_sd))) {
            (*skipped)++;
            continue;
        }
        w += c->arrivals;
        mean += c->arrivals * c->cpu_usage;
        dw += c->arrivals * p->delta[lt_class_group_of(c->priority)];
    }
    if (!(w > 0.0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "no %s class has arrivals and a known CPU usage%s",
                          prod ? "production (9-11)" : "non-production (0-8)",
                          p->sd_given ? "" : " and deviation");
    mean /= w;
    for (size_t k = 0; k < n && !p->sd_given; k++) {
        const struct lt_class_stats *c = &cls[k];
        double dm;
        if ((lt_class_group_of(c->priority) == LT_PRODUCTION) != prod || c->arrivals <= 0.0 ||
            isnan(c->cpu_usage) || isnan(c->cpu_usage_sd))
            continue;
        dm = c->cpu_usage - mean;
        var += c->arrivals * (c->cpu_usage_sd * c->cpu_usage_sd + dm * dm);
    }
    *xi = mean;
    *sd = p->sd_given ? (prod ? p->sd_p : p->sd_np) : sqrt(var / w);
    *delta = dw / w;
    return 0;
}

int lt_wasc_table_8_1(const struct lt_slot_group *inv, size_t n_inv, struct lt_slot_config *out,
                      struct lt_err *err)
{
    struct lt_class_stats cls[12];
    struct lt_wasc_params wp;
    struct lt_wasc_result wr;
    int rc;

    lt_wasc_table_5_2(cls);
    lt_wasc_params_default(&wp);
    wp.sd_given = true; /* no sigma needed: the fixture gives the slot counts */
    wp.fixture_p = 24;
    wp.fixture_np = 48;
    if ((rc = lt_wasc(cls, 12, inv, n_inv, &wp, &wr, err)) < 0)
        return rc;
    *out = wr.config;
    return 0;
}

/* lt_wasc's parameter checks. */
static int check_params(const struct lt_wasc_params *p, struct lt_err *err)
{
    if (!(p->c > 0.0) || !isfinite(p->c) || p->min_cores == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "WASC: c (%g) and the minimum core count (%u) "
                          "must be positive",
                          p->c, (unsigned)p->min_cores);
    for (int g = 0; g < 3; g++) {
        if (!(p->delta[g] > 0.0) || !isfinite(p->delta[g]))
            return lt_err_set(err, LT_EINVAL, 0, 0, "WASC: delta of group %d is %g, not > 0", g,
                              p->delta[g]);
    }
    if (p->sd_given &&
        (!stat_ok(p->sd_p) || isnan(p->sd_p) || !stat_ok(p->sd_np) || isnan(p->sd_np)))
        return lt_err_set(err, LT_EINVAL, 0, 0, "WASC: given deviations %g and %g are not >= 0",
                          p->sd_p, p->sd_np);
    return 0;
}

/* Phase I: CPU occupancy per class (eq. 8.1-8.2), each group's pooled usage and slot size
 * theta, the most powerful server, and the slot counts on it (eq. 8.4). *total_cpu receives
 * the inventory's CPU. */
static int phase_1(const struct lt_class_stats *cls, size_t n, const struct lt_slot_group *inv,
                   size_t n_inv, const struct lt_wasc_params *p, struct lt_wasc_result *out,
                   double *total_cpu, struct lt_err *err)
{
    double occ_p = 0.0, occ_all = 0.0;
    int rc;

    for (size_t k = 0; k < n; k++) {
        if (isnan(cls[k].cpu_demand)) {
            if (cls[k].arrivals > 0.0)
                out->skipped++;
            continue;
        }
        occ_all += cls[k].arrivals * cls[k].cpu_demand;
        if (lt_class_group_of(cls[k].priority) == LT_PRODUCTION)
            occ_p += cls[k].arrivals * cls[k].cpu_demand;
    }
    if (!(occ_all > 0.0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "WASC: the classes have no CPU demand at all");
    out->phi_p = occ_p / occ_all;
    for (int g = 0; g < 2; g++) {
        rc = pool_group(cls, n, g == 0, p, &out->xi[g], &out->sd[g], &out->delta[g], &out->skipped,
                        err);
        if (rc < 0)
            return rc;
        out->theta[g] = out->delta[g] * (out->xi[g] + p->c * out->sd[g]);
    }
    *total_cpu = 0.0;
    for (size_t k = 0; k < n_inv; k++) {
        *total_cpu += inv[k].type->cpu * inv[k].count;
        if (inv[k].type->cpu > out->c_max)
            out->c_max = inv[k].type->cpu;
    }
    /* eq. 8.4 on the most powerful server, in multiples of the minimum core count */
    for (int g = 0; g < 2; g++) {
        uint32_t fixture = g == 0 ? p->fixture_p : p->fixture_np;
        if (fixture != 0)
            out->n_slots[g] = fixture;
        else if (out->theta[g] > 0.0)
            out->n_slots[g] = round_multiple(out->c_max / out->theta[g], p->min_cores);
        else
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "WASC: the %s group's estimated CPU usage is 0 (no usage and no "
                              "deviation): its slot count is unbounded",
                              g == 0 ? "production" : "non-production");
    }
    return 0;
}

/* Phase II: production servers on the fastest cores first, within phi_p of total_cpu;
 * prod_count[k] receives the production servers of inventory group k. */
static void phase_2(const struct lt_slot_group *inv, size_t n_inv, double total_cpu,
                    struct lt_wasc_result *out, uint32_t *prod_count)
{
    size_t order[LT_SLOT_MAX_GROUPS] = {0};
    double budget;

    for (size_t k = 0; k < n_inv; k++)
        order[k] = k;
    for (size_t a = 1; a < n_inv; a++) { /* insertion sort, stable: by core speed, descending */
        size_t v = order[a], b = a;
        double sv = inv[v].type->cpu / inv[v].type->cores;
        while (b > 0 && inv[order[b - 1]].type->cpu / inv[order[b - 1]].type->cores < sv) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = v;
    }
    budget = out->phi_p * total_cpu;
    for (size_t a = 0; a < n_inv && budget > 0.0; a++) {
        size_t k = order[a];
        double cpu = inv[k].type->cpu, want = floor((budget - out->prod_cpu) / cpu + 0.5);
        uint32_t take = want <= 0.0 ? 0u : want >= inv[k].count ? inv[k].count : (uint32_t)want;
        prod_count[k] = take;
        out->prod_servers += take;
        out->prod_cpu += take * cpu;
        if (take < inv[k].count)
            break; /* the budget ends inside this type */
    }
    if (out->phi_p > 0.0 && out->prod_servers == 0) {
        prod_count[order[0]] = 1; /* at least one production server (A33) */
        out->prod_servers = 1;
        out->prod_cpu = inv[order[0]].type->cpu;
    }
}

int lt_wasc(const struct lt_class_stats *cls, size_t n, const struct lt_slot_group *inv,
            size_t n_inv, const struct lt_wasc_params *p, struct lt_wasc_result *out,
            struct lt_err *err)
{
    double total_cpu = 0.0;
    uint32_t prod_count[LT_SLOT_MAX_GROUPS] = {0};
    int rc;

    if (out == NULL || p == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lt_wasc: NULL argument");
    memset(out, 0, sizeof(*out));
    if ((rc = check_classes(cls, n, err)) < 0 || (rc = check_inventory(inv, n_inv, err)) < 0 ||
        (rc = check_params(p, err)) < 0 ||
        (rc = phase_1(cls, n, inv, n_inv, p, out, &total_cpu, err)) < 0)
        return rc;
    phase_2(inv, n_inv, total_cpu, out, prod_count);
    for (size_t k = 0; k < n_inv; k++) {
        const struct lt_server_type *t = inv[k].type;
        uint32_t split[2] = {prod_count[k], inv[k].count - prod_count[k]};
        for (int g = 0; g < 2; g++) {
            struct lt_slot_group *sg;
            if (split[g] == 0)
                continue;
            if (out->config.n == LT_SLOT_MAX_GROUPS)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "WASC: the configuration needs more than %d server groups",
                                  LT_SLOT_MAX_GROUPS);
            out->production[out->config.n] = g == 0;
            sg = &out->config.g[out->config.n++];
            sg->type = t;
            sg->count = split[g];
            sg->slots = scaled_slots(t->cpu, out->c_max, out->n_slots[g]);
        }
    }
    return 0;
}
