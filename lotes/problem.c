/* problem.c -- the LoTES input: checks that name the class or configuration at fault, the
 * data of Tran and Beck's Table 1 and Table 3, and the resource helpers of lotes_int.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double lt__lotes_res_get(const struct lt_res *r, int l)
{
    return l == 0 ? r->cpu : l == 1 ? r->mem : r->disk;
}

void lt__lotes_res_set(struct lt_res *r, int l, double v)
{
    if (l == 0)
        r->cpu = v;
    else if (l == 1)
        r->mem = v;
    else
        r->disk = v;
}

unsigned lt__lotes_active(const struct lt_lotes_class *classes, size_t n_classes)
{
    unsigned mask = 0;

    for (size_t k = 0; k < n_classes; k++)
        for (int l = 0; l < LT__LOTES_NRES; l++)
            if (lt__lotes_res_get(&classes[k].req, l) > 0)
                mask |= 1u << l;
    return mask;
}

bool lt__lotes_fits(const struct lt_res *used, const struct lt_res *add, const struct lt_res *cap,
                    unsigned mask)
{
    for (int l = 0; l < LT__LOTES_NRES; l++) {
        double c = lt__lotes_res_get(cap, l);

        if (!(mask & (1u << l)))
            continue;
        if (lt__lotes_res_get(used, l) + lt__lotes_res_get(add, l) > c + LT__LOTES_FIT_EPS * c)
            return false;
    }
    return true;
}

int lt__lotes_check_names(const void *items, size_t n, size_t stride, const char *what,
                          struct lt_err *err)
{
    const char *base = items;

    for (size_t i = 0; i < n; i++) {
        const char *a = base + i * stride;

        if (memchr(a, '\0', LT_LOTES_MAX_NAME + 1) == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s %zu: name is not NUL-terminated", what, i);
        if (a[0] == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s %zu: name is empty", what, i);
        for (size_t h = 0; h < i; h++)
            if (strcmp(a, base + h * stride) == 0)
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s '%s' is defined twice (%zu and %zu)",
                                  what, a, h, i);
    }
    return 0;
}

static bool finite_nonneg(const struct lt_res *r)
{
    for (int l = 0; l < LT__LOTES_NRES; l++) {
        double v = lt__lotes_res_get(r, l);
        if (!isfinite(v) || v < 0)
            return false;
    }
    return true;
}

static int check_classes(const struct lt_lotes_problem *p, struct lt_err *err)
{
    int rc = lt__lotes_check_names(p->classes, p->n_classes, sizeof(p->classes[0]), "class", err);

    if (rc < 0)
        return rc;
    for (size_t k = 0; k < p->n_classes; k++) {
        const struct lt_lotes_class *c = &p->classes[k];

        if (!isfinite(c->alpha) || c->alpha <= 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "class '%s' is empty: its proportion alpha is %g (must be > 0)",
                              c->name, c->alpha);
        if (!isfinite(c->mu) || c->mu <= 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "class '%s' has service rate mu %g (must be > 0)", c->name, c->mu);
        if (!finite_nonneg(&c->req))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "class '%s' has a negative or non-finite request", c->name);
        if (lt__lotes_active(c, 1) == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "class '%s' is empty: it requests no resource",
                              c->name);
    }
    return 0;
}

static int check_configs(const struct lt_lotes_problem *p, unsigned mask, struct lt_err *err)
{
    static const char *const res_name[LT__LOTES_NRES] = {"cpu", "mem", "disk"};
    int rc = lt__lotes_check_names(p->configs, p->n_configs, sizeof(p->configs[0]), "configuration",
                                   err);

    if (rc < 0)
        return rc;
    for (size_t j = 0; j < p->n_configs; j++) {
        const struct lt_lotes_config *c = &p->configs[j];

        if (c->n == 0 || c->n > LT_LOTES_MAX_MACHINES)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "configuration '%s' has %zu machines (must be 1..%lu)", c->name, c->n,
                              (unsigned long)LT_LOTES_MAX_MACHINES);
        if (!finite_nonneg(&c->cap))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "configuration '%s' has a negative or non-finite capacity", c->name);
        for (int l = 0; l < LT__LOTES_NRES; l++)
            if ((mask & (1u << l)) && !(lt__lotes_res_get(&c->cap, l) > 0))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "configuration '%s' has zero %s capacity, which a class requests",
                                  c->name, res_name[l]);
    }
    return 0;
}

/* How many tasks requesting req fit capacity cap, on the tightest resource of mask that req
 * requests (HUGE_VAL when it requests none of them). */
static double fit_count(const struct lt_res *req, const struct lt_res *cap, unsigned mask)
{
    double most = HUGE_VAL;

    for (int l = 0; l < LT__LOTES_NRES; l++) {
        double r = lt__lotes_res_get(req, l);
        if ((mask & (1u << l)) && r > 0 && lt__lotes_res_get(cap, l) / r < most)
            most = lt__lotes_res_get(cap, l) / r;
    }
    return most;
}

/* Every class must fit one machine of some configuration, or no bin can ever hold it; and
 * no class may fit more than LT_LOTES_MAX_FIT times on one machine (Algorithm 1 would list
 * that many bins, the assignment LP would not be solvable in practice). */
static int check_fit(const struct lt_lotes_problem *p, unsigned mask, struct lt_err *err)
{
    static const struct lt_res zero = {0, 0, 0};

    for (size_t k = 0; k < p->n_classes; k++) {
        bool fits = false;

        for (size_t j = 0; j < p->n_configs && !fits; j++)
            fits = lt__lotes_fits(&zero, &p->classes[k].req, &p->configs[j].cap, mask);
        if (!fits)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "class '%s' fits no machine configuration: its expected request "
                              "exceeds every capacity",
                              p->classes[k].name);
        for (size_t j = 0; j < p->n_configs; j++) {
            double most = fit_count(&p->classes[k].req, &p->configs[j].cap, mask);
            if (most > LT_LOTES_MAX_FIT)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "class '%s' requests too little for configuration '%s': %.3g "
                                  "of its tasks fit one machine (at most %d); are the requests "
                                  "and capacities in the same units?",
                                  p->classes[k].name, p->configs[j].name, most, LT_LOTES_MAX_FIT);
        }
    }
    return 0;
}

int lt_lotes_problem_check(const struct lt_lotes_problem *p, struct lt_err *err)
{
    unsigned mask;
    int rc;

    if (p == NULL || p->classes == NULL || p->configs == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes problem has no classes or configurations");
    if (p->n_classes == 0 || p->n_classes > LT_LOTES_MAX_CLASSES)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%zu classes (must be 1..%d)", p->n_classes,
                          LT_LOTES_MAX_CLASSES);
    if (p->n_configs == 0 || p->n_configs > LT_LOTES_MAX_CONFIGS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%zu configurations (must be 1..%d)", p->n_configs,
                          LT_LOTES_MAX_CONFIGS);
    rc = check_classes(p, err);
    if (rc < 0)
        return rc;
    mask = lt__lotes_active(p->classes, p->n_classes);
    rc = check_configs(p, mask, err);
    if (rc < 0)
        return rc;
    return check_fit(p, mask, err);
}

void lt_lotes_table1(struct lt_lotes_config out[LT_LOTES_TABLE1_CONFIGS])
{
    /* Table 1: cores, RAM; 1000 machines each. */
    static const double cap[LT_LOTES_TABLE1_CONFIGS][2] = {
        {4, 2}, {4, 4}, {4, 8}, {4, 16}, {8, 2}, {8, 4}, {8, 8}, {8, 16}, {8, 32}, {24, 32}};

    for (size_t j = 0; j < LT_LOTES_TABLE1_CONFIGS; j++) {
        memset(&out[j], 0, sizeof(out[j]));
        snprintf(out[j].name, sizeof(out[j].name), "%zu", j + 1);
        out[j].cap.cpu = cap[j][0];
        out[j].cap.mem = cap[j][1];
        out[j].cap.disk = 0;
        out[j].n = 1000;
    }
}

void lt_lotes_table3(struct lt_lotes_class out[LT_LOTES_TABLE3_CLASSES])
{
    /* Table 3: proportion, expected processing time (hours), expected cores, expected RAM. */
    static const double row[LT_LOTES_TABLE3_CLASSES][4] = {
        {0.33, 0.083, 0.08, 0.48}, {0.29, 0.32, 0.4, 0.74},   {0.06, 0.65, 1.11, 0.68},
        {0.01, 0.42, 1.39, 1.54},  {0.17, 18.34, 0.12, 0.48}, {0.02, 22.23, 0.16, 1.66},
        {0.07, 20.49, 1.22, 0.65}, {0.05, 18.85, 1.32, 1.93}};

    for (size_t k = 0; k < LT_LOTES_TABLE3_CLASSES; k++) {
        memset(&out[k], 0, sizeof(out[k]));
        snprintf(out[k].name, sizeof(out[k].name), "%zu", k + 1);
        out[k].alpha = row[k][0];
        out[k].mu = 1.0 / row[k][1];
        out[k].req.cpu = row[k][2];
        out[k].req.mem = row[k][3];
        out[k].req.disk = 0;
    }
}

void lt_lotes_table3_cv(struct lt_res out[LT_LOTES_TABLE3_CLASSES])
{
    /* Table 3: coefficient of variation of cores, of RAM. */
    static const double cv[LT_LOTES_TABLE3_CLASSES][2] = {{0.16, 0.09}, {0.03, 0.09}, {0.03, 0.08},
                                                          {0.04, 0.05}, {0.19, 0.11}, {0.09, 0.09},
                                                          {0.03, 0.08}, {0.06, 0.07}};

    for (size_t k = 0; k < LT_LOTES_TABLE3_CLASSES; k++) {
        out[k].cpu = cv[k][0];
        out[k].mem = cv[k][1];
        out[k].disk = 0;
    }
}

void lt_lotes_table3_normalised(struct lt_lotes_class out[LT_LOTES_TABLE3_CLASSES])
{
    lt_lotes_table3(out);
    for (size_t k = 0; k < LT_LOTES_TABLE3_CLASSES; k++) {
        out[k].req.cpu /= 24.0;
        out[k].req.mem /= 32.0;
    }
}
