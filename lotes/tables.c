/* tables.c -- the LoTES tables: allocation, the invariant checker, and the JSON document the
 * simulator writes and the extender loads (format in docs/lotes.md, "The tables file").
 *
 * Decoding is strict: every member is required, unknown members are rejected (a typo must not
 * silently fall back to a default), counts must match the classes and configurations, and the
 * decoded tables go through lt_lotes_tables_check, the same checker lt_lotes_build runs. Every
 * message starts with the JSON path of what is wrong ("$.bins[2][0].machines"); the error's
 * source is the file name. Reals are written with Jansson's default 17 significant digits, so
 * a write-read round trip gives the same doubles.
 *
 * Files are written whole or not at all: "<path>.tmp", then rename (DESIGN.md section 10).
 * This is the one place in liblotus that touches files: the brief of issue 8 puts the tables
 * file here so that the simulator and the extender share one reader (docs/lotes.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lt_mem.h"

#define FORMAT_NAME    "lotus-lotes-tables"
#define FORMAT_VERSION 1

/* Largest tables file read: LT_LOTES_MAX_BINS bins of 64 classes is far below; a bigger file
 * is not a tables file. */

/* JSON paths: "$.bins[12][3].machines" fits easily. A member's path is its parent's (at most
 * PATH_MAX_LEN - 1 bytes) plus a suffix of at most ".tasks[" + 20 digits + "]". */
#define PATH_MAX_LEN 128
#define SUB_PATH_LEN (PATH_MAX_LEN + 32)

struct lt_lotes_tables *lt__lotes_tables_new(size_t n_classes, size_t n_configs, struct lt_err *err)
{
    struct lt_lotes_tables *t = lt_calloc(1, sizeof(*t));

    if (t == NULL)
        goto out_nomem;
    t->n_classes = n_classes;
    t->n_configs = n_configs;
    t->classes = lt_calloc(n_classes, sizeof(*t->classes));
    t->configs = lt_calloc(n_configs, sizeof(*t->configs));
    t->delta = lt_calloc(n_configs * n_classes, sizeof(*t->delta));
    t->rho = lt_calloc(n_configs * n_classes, sizeof(*t->rho));
    t->bin_first = lt_calloc(n_configs + 1, sizeof(*t->bin_first));
    if (t->classes == NULL || t->configs == NULL || t->delta == NULL || t->rho == NULL ||
        t->bin_first == NULL)
        goto out_nomem;
    return t;

out_nomem:
    lt_lotes_tables_free(t);
    lt_err_set(err, LT_ENOMEM, 0, 0, "lotes: out of memory for the tables");
    return NULL;
}

int lt__lotes_tables_alloc_bins(struct lt_lotes_tables *t, struct lt_err *err)
{
    t->bin_x = lt_calloc(t->n_bins, sizeof(*t->bin_x));
    t->bin_machines = lt_calloc(t->n_bins, sizeof(*t->bin_machines));
    if (t->bin_x == NULL || t->bin_machines == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "lotes: out of memory for %zu bins", t->n_bins);
    return 0;
}

void lt_lotes_tables_free(struct lt_lotes_tables *t)
{
    if (t == NULL)
        return;
    lt_free(t->classes);
    lt_free(t->configs);
    lt_free(t->delta);
    lt_free(t->rho);
    lt_free(t->bin_first);
    lt_free(t->bin_tasks);
    lt_free(t->bin_x);
    lt_free(t->bin_machines);
    lt_free(t);
}

/* ---- The checker ------------------------------------------------------------------------ */

static int check_lambdas(const struct lt_lotes_tables *t, struct lt_err *err)
{
    const double v[3] = {t->lambda_alloc, t->lambda_assign, t->lambda_rounded};
    static const char *const name[3] = {"allocation", "assignment", "rounded"};

    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i]) || !(v[i] > 0))
            return lt_err_set(err, LT_EINVAL, 0, 0, "$.lambda.%s: %g is not a positive number",
                              name[i], v[i]);
    return 0;
}

static int check_delta(const struct lt_lotes_tables *t, struct lt_err *err)
{
    size_t kk = t->n_classes;

    for (size_t j = 0; j < t->n_configs; j++)
        for (int l = 0; l < LT__LOTES_NRES; l++) {
            double sum = 0;
            for (size_t k = 0; k < kk; k++) {
                double d = lt__lotes_res_get(&t->delta[j * kk + k], l);
                if (!isfinite(d) || d < 0 || d > 1)
                    return lt_err_set(err, LT_EINVAL, 0, 0,
                                      "$.delta[%zu][%zu]: share %g is not in [0, 1]", j, k, d);
                sum += d;
            }
            if (sum > 1 + 1e-6)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "$.delta[%zu]: the shares of one resource sum to %g (> 1)", j,
                                  sum);
        }
    return 0;
}

static int check_bins(const struct lt_lotes_tables *t, unsigned mask, struct lt_err *err)
{
    static const struct lt_res zero = {0, 0, 0};
    size_t kk = t->n_classes;

    if (t->bin_first[0] != 0 || t->bin_first[t->n_configs] != t->n_bins)
        return lt_err_set(err, LT_EINVAL, 0, 0, "$.bins: bin ranges do not cover %zu bins",
                          t->n_bins);
    for (size_t j = 0; j < t->n_configs; j++) {
        size_t machines = 0;

        if (t->bin_first[j + 1] <= t->bin_first[j])
            return lt_err_set(err, LT_EINVAL, 0, 0, "$.bins[%zu]: configuration '%s' has no bin", j,
                              t->configs[j].name);
        for (size_t b = t->bin_first[j]; b < t->bin_first[j + 1]; b++) {
            struct lt_res used = zero;
            size_t i = b - t->bin_first[j];
            for (size_t k = 0; k < kk; k++) {
                double n = (double)t->bin_tasks[b * kk + k];
                used.cpu += n * t->classes[k].req.cpu;
                used.mem += n * t->classes[k].req.mem;
                used.disk += n * t->classes[k].req.disk;
            }
            if (!lt__lotes_fits(&used, &zero, &t->configs[j].cap, mask))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "$.bins[%zu][%zu].tasks: the tasks exceed the capacity of "
                                  "configuration '%s'",
                                  j, i, t->configs[j].name);
            if (!isfinite(t->bin_x[b]) || t->bin_x[b] < 0)
                return lt_err_set(err, LT_EINVAL, 0, 0, "$.bins[%zu][%zu].x: %g is not >= 0", j, i,
                                  t->bin_x[b]);
            machines += t->bin_machines[b];
        }
        if (machines != t->configs[j].n)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "$.bins[%zu]: %zu machines, but configuration '%s' has %zu", j,
                              machines, t->configs[j].name, t->configs[j].n);
    }
    return 0;
}

/* rho_jk > 0 only where some machine of j emulates a bin with class-k tasks. */
static bool serves(const struct lt_lotes_tables *t, size_t j, size_t k)
{
    for (size_t b = t->bin_first[j]; b < t->bin_first[j + 1]; b++)
        if (t->bin_machines[b] > 0 && t->bin_tasks[b * t->n_classes + k] > 0)
            return true;
    return false;
}

static int check_rho(const struct lt_lotes_tables *t, struct lt_err *err)
{
    size_t kk = t->n_classes;

    for (size_t k = 0; k < kk; k++) {
        double sum = 0;
        for (size_t j = 0; j < t->n_configs; j++) {
            double r = t->rho[j * kk + k];
            if (!isfinite(r) || r < 0 || r > 1)
                return lt_err_set(err, LT_EINVAL, 0, 0, "$.rho[%zu][%zu]: %g is not in [0, 1]", j,
                                  k, r);
            if (r > 0 && !serves(t, j, k))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "$.rho[%zu][%zu]: configuration '%s' gets class '%s' but no "
                                  "machine of it serves the class",
                                  j, k, t->configs[j].name, t->classes[k].name);
            sum += r;
        }
        if (fabs(sum - 1) > 1e-6)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "$.rho: the shares of class '%s' sum to %.9g, not 1",
                              t->classes[k].name, sum);
    }
    return 0;
}

int lt_lotes_tables_check(const struct lt_lotes_tables *t, struct lt_err *err)
{
    struct lt_lotes_problem p;
    int rc;

    if (t == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes: no tables");
    p.classes = t->classes;
    p.n_classes = t->n_classes;
    p.configs = t->configs;
    p.n_configs = t->n_configs;
    rc = lt_lotes_problem_check(&p, err);
    if (rc == 0)
        rc = check_lambdas(t, err);
    if (rc == 0)
        rc = check_delta(t, err);
    if (rc == 0)
        rc = check_bins(t, lt__lotes_active(t->classes, t->n_classes), err);
    if (rc == 0)
        rc = check_rho(t, err);
    return rc;
}

/* ---- Encoding --------------------------------------------------------------------------- */

/* Jansson's constructors return NULL on allocation failure and the _new setters then free
 * nothing: every helper below returns NULL on failure and frees what it built. */
static json_t *res_json(const struct lt_res *r)
{
    return json_pack("{s:f, s:f, s:f}", "cpu", r->cpu, "mem", r->mem, "disk", r->disk);
}

static int append_new(json_t *arr, json_t *v)
{
    return v == NULL ? -1 : json_array_append_new(arr, v);
}

static json_t *classes_json(const struct lt_lotes_tables *t)
{
    json_t *a = json_array();

    for (size_t k = 0; a != NULL && k < t->n_classes; k++) {
        const struct lt_lotes_class *c = &t->classes[k];
        json_t *req = res_json(&c->req);
        if (req == NULL || append_new(a, json_pack("{s:s, s:f, s:f, s:o}", "name", c->name, "alpha",
                                                   c->alpha, "mu", c->mu, "req", req)) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *configs_json(const struct lt_lotes_tables *t)
{
    json_t *a = json_array();

    for (size_t j = 0; a != NULL && j < t->n_configs; j++) {
        const struct lt_lotes_config *c = &t->configs[j];
        json_t *cap = res_json(&c->cap);
        if (cap == NULL || append_new(a, json_pack("{s:s, s:I, s:o}", "name", c->name, "machines",
                                                   (json_int_t)c->n, "cap", cap)) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* delta and rho: one row per configuration, one entry per class. */
static json_t *matrix_json(const struct lt_lotes_tables *t, bool delta)
{
    json_t *a = json_array();

    for (size_t j = 0; a != NULL && j < t->n_configs; j++) {
        json_t *row = json_array();
        for (size_t k = 0; row != NULL && k < t->n_classes; k++) {
            size_t at = j * t->n_classes + k;
            if (append_new(row, delta ? res_json(&t->delta[at]) : json_real(t->rho[at])) < 0) {
                json_decref(row);
                row = NULL;
            }
        }
        if (append_new(a, row) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *bin_json(const struct lt_lotes_tables *t, size_t b)
{
    json_t *tasks = json_array();

    for (size_t k = 0; tasks != NULL && k < t->n_classes; k++)
        if (append_new(tasks, json_integer(t->bin_tasks[b * t->n_classes + k])) < 0) {
            json_decref(tasks);
            tasks = NULL;
        }
    if (tasks == NULL)
        return NULL;
    return json_pack("{s:o, s:f, s:I}", "tasks", tasks, "x", t->bin_x[b], "machines",
                     (json_int_t)t->bin_machines[b]);
}

static json_t *bins_json(const struct lt_lotes_tables *t)
{
    json_t *a = json_array();

    for (size_t j = 0; a != NULL && j < t->n_configs; j++) {
        json_t *row = json_array();
        for (size_t b = t->bin_first[j]; row != NULL && b < t->bin_first[j + 1]; b++)
            if (append_new(row, bin_json(t, b)) < 0) {
                json_decref(row);
                row = NULL;
            }
        if (append_new(a, row) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

char *lt_lotes_tables_dump(const struct lt_lotes_tables *t, struct lt_err *err)
{
    json_t *classes, *configs, *lambda, *delta, *rho, *bins, *doc;
    char *text, *out = NULL;

    if (t == NULL) {
        lt_err_set(err, LT_EINVAL, 0, 0, "lotes: no tables to write");
        return NULL;
    }
    classes = classes_json(t);
    configs = configs_json(t);
    lambda = json_pack("{s:f, s:f, s:f}", "allocation", t->lambda_alloc, "assignment",
                       t->lambda_assign, "rounded", t->lambda_rounded);
    delta = matrix_json(t, true);
    rho = matrix_json(t, false);
    bins = bins_json(t);
    /* "o" steals every reference, also when json_pack fails; a NULL argument makes it fail. */
    doc = json_pack("{s:s, s:i, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*}", "format", FORMAT_NAME,
                    "version", FORMAT_VERSION, "classes", classes, "configurations", configs,
                    "lambda", lambda, "delta", delta, "rho", rho, "bins", bins);
    if (doc == NULL || classes == NULL || configs == NULL || lambda == NULL || delta == NULL ||
        rho == NULL || bins == NULL)
        goto out;
    text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    if (text != NULL) {
        out = lt_strdup(text);
        free(text); /* json_dumps allocates with Jansson's allocator, malloc by default */
    }

out:
    json_decref(doc);
    if (out == NULL)
        lt_err_set(err, LT_ENOMEM, 0, 0, "lotes: out of memory encoding the tables");
    return out;
}

/* ---- Decoding --------------------------------------------------------------------------- */

/* Rejects members of obj other than the NULL-terminated names. */
static int only_members(json_t *obj, const char *path, const char *const *names, struct lt_err *err)
{
    const char *key;
    json_t *v;

    json_object_foreach(obj, key, v)
    {
        bool known = false;
        for (size_t i = 0; names[i] != NULL && !known; i++)
            known = strcmp(key, names[i]) == 0;
        if (!known)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: unknown member '%s'", path, key);
    }
    return 0;
}

/* The member name of object obj at path: must exist. */
static int member(json_t *obj, const char *path, const char *name, json_t **out, struct lt_err *err)
{
    *out = json_object_get(obj, name);
    if (*out == NULL)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: missing member '%s'", path, name);
    return 0;
}

static int get_real(json_t *obj, const char *path, const char *name, double *out,
                    struct lt_err *err)
{
    json_t *v;
    int rc = member(obj, path, name, &v, err);

    if (rc < 0)
        return rc;
    if (!json_is_number(v))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s.%s: expected a number", path, name);
    *out = json_number_value(v);
    return 0;
}

static int get_count(json_t *v, const char *path, uint64_t max, uint64_t *out, struct lt_err *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an integer in 0..%llu", path,
                          (unsigned long long)max);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_array(json_t *obj, const char *path, const char *name, size_t want, json_t **out,
                     struct lt_err *err)
{
    int rc = member(obj, path, name, out, err);

    if (rc < 0)
        return rc;
    if (!json_is_array(*out))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s.%s: expected an array", path, name);
    if (want != SIZE_MAX && json_array_size(*out) != want)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s.%s: expected %zu entries, found %zu", path,
                          name, want, json_array_size(*out));
    return 0;
}

static int get_res(json_t *v, const char *path, struct lt_res *r, struct lt_err *err)
{
    static const char *const names[] = {"cpu", "mem", "disk", NULL};
    int rc;

    if (!json_is_object(v))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an object", path);
    rc = only_members(v, path, names, err);
    if (rc == 0)
        rc = get_real(v, path, "cpu", &r->cpu, err);
    if (rc == 0)
        rc = get_real(v, path, "mem", &r->mem, err);
    if (rc == 0)
        rc = get_real(v, path, "disk", &r->disk, err);
    return rc;
}

static int get_name(json_t *obj, const char *path, char *out, struct lt_err *err)
{
    json_t *v;
    int rc = member(obj, path, "name", &v, err);

    if (rc < 0)
        return rc;
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > LT_LOTES_MAX_NAME ||
        strlen(json_string_value(v)) != json_string_length(v))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s.name: expected a string of 1..%d bytes", path,
                          LT_LOTES_MAX_NAME);
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

static int parse_class(json_t *v, const char *path, struct lt_lotes_class *c, struct lt_err *err)
{
    static const char *const names[] = {"name", "alpha", "mu", "req", NULL};
    char sub[SUB_PATH_LEN];
    json_t *req;
    int rc;

    if (!json_is_object(v))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an object", path);
    rc = only_members(v, path, names, err);
    if (rc == 0)
        rc = get_name(v, path, c->name, err);
    if (rc == 0)
        rc = get_real(v, path, "alpha", &c->alpha, err);
    if (rc == 0)
        rc = get_real(v, path, "mu", &c->mu, err);
    if (rc == 0)
        rc = member(v, path, "req", &req, err);
    snprintf(sub, sizeof(sub), "%s.req", path);
    if (rc == 0)
        rc = get_res(req, sub, &c->req, err);
    return rc;
}

static int parse_config(json_t *v, const char *path, struct lt_lotes_config *c, struct lt_err *err)
{
    static const char *const names[] = {"name", "machines", "cap", NULL};
    char sub[SUB_PATH_LEN];
    json_t *m, *cap;
    uint64_t n = 0;
    int rc;

    if (!json_is_object(v))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an object", path);
    rc = only_members(v, path, names, err);
    if (rc == 0)
        rc = get_name(v, path, c->name, err);
    if (rc == 0)
        rc = member(v, path, "machines", &m, err);
    snprintf(sub, sizeof(sub), "%s.machines", path);
    if (rc == 0)
        rc = get_count(m, sub, LT_LOTES_MAX_MACHINES, &n, err);
    c->n = (size_t)n;
    if (rc == 0)
        rc = member(v, path, "cap", &cap, err);
    snprintf(sub, sizeof(sub), "%s.cap", path);
    if (rc == 0)
        rc = get_res(cap, sub, &c->cap, err);
    return rc;
}

static int parse_lists(json_t *doc, struct lt_lotes_tables *t, bool classes, struct lt_err *err)
{
    const char *name = classes ? "classes" : "configurations";
    size_t n = classes ? t->n_classes : t->n_configs;
    char path[PATH_MAX_LEN];
    json_t *a;
    int rc = get_array(doc, "$", name, n, &a, err);

    for (size_t i = 0; i < n && rc == 0; i++) {
        snprintf(path, sizeof(path), "$.%s[%zu]", name, i);
        rc = classes ? parse_class(json_array_get(a, i), path, &t->classes[i], err)
                     : parse_config(json_array_get(a, i), path, &t->configs[i], err);
    }
    return rc;
}

/* delta and rho: arrays of n_configs rows of n_classes entries. */
static int parse_matrix(json_t *doc, struct lt_lotes_tables *t, bool delta, struct lt_err *err)
{
    const char *name = delta ? "delta" : "rho";
    char path[PATH_MAX_LEN];
    json_t *a;
    int rc = get_array(doc, "$", name, t->n_configs, &a, err);

    for (size_t j = 0; j < t->n_configs && rc == 0; j++) {
        json_t *row = json_array_get(a, j);
        snprintf(path, sizeof(path), "$.%s[%zu]", name, j);
        if (!json_is_array(row) || json_array_size(row) != t->n_classes)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an array of %zu entries", path,
                              t->n_classes);
        for (size_t k = 0; k < t->n_classes && rc == 0; k++) {
            json_t *v = json_array_get(row, k);
            size_t at = j * t->n_classes + k;
            snprintf(path, sizeof(path), "$.%s[%zu][%zu]", name, j, k);
            if (delta)
                rc = get_res(v, path, &t->delta[at], err);
            else if (!json_is_number(v))
                rc = lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected a number", path);
            else
                t->rho[at] = json_number_value(v);
        }
    }
    return rc;
}

static int parse_bin(json_t *v, const char *path, struct lt_lotes_tables *t, size_t b,
                     struct lt_err *err)
{
    static const char *const names[] = {"tasks", "x", "machines", NULL};
    char sub[SUB_PATH_LEN];
    json_t *tasks, *m;
    uint64_t n = 0;
    int rc;

    if (!json_is_object(v))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an object", path);
    rc = only_members(v, path, names, err);
    if (rc == 0)
        rc = get_array(v, path, "tasks", t->n_classes, &tasks, err);
    for (size_t k = 0; k < t->n_classes && rc == 0; k++) {
        snprintf(sub, sizeof(sub), "%s.tasks[%zu]", path, k);
        rc = get_count(json_array_get(tasks, k), sub, UINT32_MAX, &n, err);
        t->bin_tasks[b * t->n_classes + k] = (uint32_t)n;
    }
    if (rc == 0)
        rc = get_real(v, path, "x", &t->bin_x[b], err);
    if (rc == 0)
        rc = member(v, path, "machines", &m, err);
    snprintf(sub, sizeof(sub), "%s.machines", path);
    if (rc == 0)
        rc = get_count(m, sub, LT_LOTES_MAX_MACHINES, &n, err);
    t->bin_machines[b] = (size_t)n;
    return rc;
}

static int parse_bins(json_t *doc, struct lt_lotes_tables *t, struct lt_err *err)
{
    char path[PATH_MAX_LEN];
    json_t *a;
    int rc = get_array(doc, "$", "bins", t->n_configs, &a, err);

    /* Count first, so that the bin arrays are allocated once. */
    for (size_t j = 0; j < t->n_configs && rc == 0; j++) {
        json_t *row = json_array_get(a, j);
        if (!json_is_array(row) || json_array_size(row) == 0 ||
            json_array_size(row) > LT_LOTES_MAX_BINS)
            return lt_err_set(err, LT_EPARSE, 0, 0, "$.bins[%zu]: expected an array of 1..%d bins",
                              j, LT_LOTES_MAX_BINS);
        t->n_bins += json_array_size(row);
        t->bin_first[j + 1] = t->n_bins;
    }
    if (rc < 0)
        return rc;
    t->bin_tasks = lt_calloc(t->n_bins, t->n_classes * sizeof(*t->bin_tasks));
    if (t->bin_tasks == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "lotes: out of memory for %zu bins", t->n_bins);
    rc = lt__lotes_tables_alloc_bins(t, err);
    for (size_t j = 0; j < t->n_configs && rc == 0; j++) {
        json_t *row = json_array_get(a, j);
        for (size_t i = 0; i < json_array_size(row) && rc == 0; i++) {
            snprintf(path, sizeof(path), "$.bins[%zu][%zu]", j, i);
            rc = parse_bin(json_array_get(row, i), path, t, t->bin_first[j] + i, err);
        }
    }
    return rc;
}

static int parse_lambda(json_t *doc, struct lt_lotes_tables *t, struct lt_err *err)
{
    static const char *const names[] = {"allocation", "assignment", "rounded", NULL};
    json_t *v;
    int rc = member(doc, "$", "lambda", &v, err);

    if (rc == 0 && !json_is_object(v))
        rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.lambda: expected an object");
    if (rc == 0)
        rc = only_members(v, "$.lambda", names, err);
    if (rc == 0)
        rc = get_real(v, "$.lambda", "allocation", &t->lambda_alloc, err);
    if (rc == 0)
        rc = get_real(v, "$.lambda", "assignment", &t->lambda_assign, err);
    if (rc == 0)
        rc = get_real(v, "$.lambda", "rounded", &t->lambda_rounded, err);
    return rc;
}

/* "format", "version" and the two list sizes, before anything is allocated. */
static int parse_header(json_t *doc, size_t *n_classes, size_t *n_configs, struct lt_err *err)
{
    static const char *const names[] = {
        "format", "version", "classes", "configurations", "lambda", "delta", "rho", "bins", NULL};
    json_t *v;
    int rc;

    if (!json_is_object(doc))
        return lt_err_set(err, LT_EPARSE, 0, 0, "$: expected an object");
    rc = only_members(doc, "$", names, err);
    if (rc == 0)
        rc = member(doc, "$", "format", &v, err);
    if (rc == 0 && (!json_is_string(v) || strcmp(json_string_value(v), FORMAT_NAME) != 0))
        rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.format: expected \"" FORMAT_NAME "\"");
    if (rc == 0)
        rc = member(doc, "$", "version", &v, err);
    if (rc == 0 && (!json_is_integer(v) || json_integer_value(v) != FORMAT_VERSION))
        rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.version: expected %d", FORMAT_VERSION);
    if (rc == 0)
        rc = get_array(doc, "$", "classes", SIZE_MAX, &v, err);
    *n_classes = rc == 0 ? json_array_size(v) : 0;
    if (rc == 0 && (*n_classes == 0 || *n_classes > LT_LOTES_MAX_CLASSES))
        rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.classes: expected 1..%d classes",
                        LT_LOTES_MAX_CLASSES);
    if (rc == 0)
        rc = get_array(doc, "$", "configurations", SIZE_MAX, &v, err);
    *n_configs = rc == 0 ? json_array_size(v) : 0;
    if (rc == 0 && (*n_configs == 0 || *n_configs > LT_LOTES_MAX_CONFIGS))
        rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.configurations: expected 1..%d configurations",
                        LT_LOTES_MAX_CONFIGS);
    return rc;
}

/* The checker's messages name JSON paths; those of the problem check name a class or a
 * configuration, which are under "$". */
static int check_decoded(const struct lt_lotes_tables *t, struct lt_err *err)
{
    struct lt_err tmp;
    int rc;

    lt_err_init(&tmp, NULL);
    rc = lt_lotes_tables_check(t, &tmp);
    if (rc < 0)
        lt_err_set(err, LT_EINVAL, 0, 0, "%s%s", tmp.text[0] == '$' ? "" : "$: ", tmp.text);
    return rc < 0 ? LT_EINVAL : 0;
}

struct lt_lotes_tables *lt_lotes_tables_parse(const char *text, size_t len, const char *source,
                                              struct lt_err *err)
{
    struct lt_lotes_tables *t = NULL;
    size_t n_classes = 0, n_configs = 0;
    json_error_t jerr;
    json_t *doc;
    int rc;

    lt_err_set_source(err, source != NULL ? source : "<tables>");
    if (text == NULL) {
        lt_err_set(err, LT_EINVAL, 0, 0, "lotes: no tables text");
        return NULL;
    }
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        lt_err_set(err, LT_EPARSE, jerr.line, jerr.column, "malformed JSON: %s", jerr.text);
        return NULL;
    }
    rc = parse_header(doc, &n_classes, &n_configs, err);
    if (rc == 0) {
        t = lt__lotes_tables_new(n_classes, n_configs, err);
        rc = t == NULL ? LT_ENOMEM : 0;
    }
    if (rc == 0)
        rc = parse_lists(doc, t, true, err);
    if (rc == 0)
        rc = parse_lists(doc, t, false, err);
    if (rc == 0)
        rc = parse_lambda(doc, t, err);
    if (rc == 0)
        rc = parse_matrix(doc, t, true, err);
    if (rc == 0)
        rc = parse_matrix(doc, t, false, err);
    if (rc == 0)
        rc = parse_bins(doc, t, err);
    if (rc == 0)
        rc = check_decoded(t, err);
    json_decref(doc);
    if (rc < 0) {
        lt_lotes_tables_free(t);
        return NULL;
    }
    return t;
}
