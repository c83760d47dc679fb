/* compare_cmd.c -- `lotus-sim compare DIR...`: Stein et al.'s comparison tables (compare.h)
 * over finished tx sweeps, pooled, as the slides pool days and cells.
 *
 * Each DIR is a tx --out directory. Its tx.csv is the run list (x,policy[,seed],tasks,jobs;
 * "nan" where the run failed, so a result an earlier sweep left behind is never read); the
 * values come from each run's summary.json, DIR/x<x>/<policy>[/seed<s>]/summary.json, as tx
 * --compare takes them. A case is (DIR, x, seed); every DIR must hold the same policies. The
 * tables go to stdout and, through the output layer, to --out's compare.csv and compare.json,
 * which are byte for byte what tx --compare writes for one DIR.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/compare.h"
#include "sim.h"

#include "cli/opt.h"
#include "cli/outfile.h"
#include "lt_mem.h"

#define LINE_MAX_LEN 4096 /* longest tx.csv line */
#define NAME_MAX_LEN 64   /* longest policy name */

struct cmp_opts {
    struct sim_args dirs;
    const char *out;
    bool force;
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct cmp_opts, name, kind, field, arg, help, def)

static const struct sim_opt cmp_opts[] = {
    OPT("DIR...", SIM_OPT_ARGS, dirs, NULL,
        "tx --out directories (tx.csv and the runs'\nsummary.json); their cases are pooled", NULL),
    OPT("--out", SIM_OPT_STR, out, "DIR",
        "where compare.csv and compare.json go (required\nwith several DIRs)",
        "the DIR, when only one"),
    OPT("--force", SIM_OPT_FLAG, force, NULL, "replace compare.csv and compare.json in --out",
        NULL),
};

static const struct sim_cmd_spec cmp_spec = {
    "compare",
    "DIR... [--out DIR] [--force]",
    "Stein, Henzinger and Radovanovic's comparison tables over finished tx\n"
    "sweeps: per policy, the times it was best and within 99 % of the best, for\n"
    "throughput (tasks completed) and useful work, over every x and over x in\n"
    "80-90 %, each case an (x, seed) of a DIR, beside the slides' tables, with\n"
    "Spearman's rank correlation (docs/simulator.md). A case with a failed run is\n"
    "left out. Outputs: --out's compare.csv and compare.json, as tx --compare.",
    "lotus-sim compare out/tx-demo out/tx-sample --out out/compare",
    "Exit status: 0 done, 1 a DIR cannot be read or its sweeps differ in policies, 2 usage\n"
    "error.",
    cmp_opts,
    sizeof(cmp_opts) / sizeof(cmp_opts[0])};

/* The pooled cases: values [c * np + k], NaN until a run fills them. */
struct pool {
    char name[SIM_CMP_MAX_POLICIES][NAME_MAX_LEN];
    const char *names[SIM_CMP_MAX_POLICIES];
    size_t np;
    double *x, *tasks, *useful;
    uint64_t *seed; /* case c's seed (0: the sweep had one seed) */
    size_t n, cap;
};

static void pool_release(struct pool *p)
{
    lt_free(p->x);
    lt_free(p->tasks);
    lt_free(p->useful);
    lt_free(p->seed);
}

/* The case (x, seed) among cases first .. n-1 (this DIR's), added when new. */
static int pool_case(struct pool *p, size_t first, double x, uint64_t seed, size_t *c,
                     struct lt_err *err)
{
    for (size_t i = first; i < p->n; i++)
        if (!(p->x[i] < x) && !(p->x[i] > x) && p->seed[i] == seed) {
            *c = i;
            return 0;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap * 2 + 16;
        double *a = lt_reallocarray(p->x, cap, sizeof(*a));
        if (a != NULL)
            p->x = a;
        uint64_t *s = lt_reallocarray(p->seed, cap, sizeof(*s));
        if (s != NULL)
            p->seed = s;
        double *t = lt_reallocarray(p->tasks, cap * SIM_CMP_MAX_POLICIES, sizeof(*t));
        if (t != NULL)
            p->tasks = t;
        double *u = lt_reallocarray(p->useful, cap * SIM_CMP_MAX_POLICIES, sizeof(*u));
        if (u != NULL)
            p->useful = u;
        if (a == NULL || s == NULL || t == NULL || u == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
        p->cap = cap;
    }
    p->x[p->n] = x;
    p->seed[p->n] = seed;
    for (size_t k = 0; k < SIM_CMP_MAX_POLICIES; k++)
        p->tasks[p->n * SIM_CMP_MAX_POLICIES + k] = p->useful[p->n * SIM_CMP_MAX_POLICIES + k] =
            NAN;
    *c = p->n++;
    return 0;
}

/* The index of policy name; the first DIR adds its policies, the others must have them. */
static int pool_policy(struct pool *p, const char *name, bool add, size_t *k, const char *where,
                       struct lt_err *err)
{
    for (*k = 0; *k < p->np; (*k)++)
        if (strcmp(p->name[*k], name) == 0)
            return 0;
    if (!add)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: policy '%s' is not in the first DIR's sweep: the DIRs must hold "
                          "the same policies",
                          where, name);
    if (p->np == SIM_CMP_MAX_POLICIES || strlen(name) >= NAME_MAX_LEN || name[0] == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: policy '%.60s': bad name or over %d policies",
                          where, name, SIM_CMP_MAX_POLICIES);
    snprintf(p->name[p->np], NAME_MAX_LEN, "%s", name);
    p->names[p->np] = p->name[p->np];
    *k = p->np++;
    return 0;
}

/* Splits line (no newline) at commas into f[0 .. max-1]; returns the number of fields. */
static size_t split(char *line, char **f, size_t max)
{
    size_t n = 0;

    f[n++] = line;
    for (char *s = line; *s != '\0'; s++)
        if (*s == ',') {
            *s = '\0';
            if (n == max)
                return max + 1;
            f[n++] = s + 1;
        }
    return n;
}

/* A run's values from DIR/rel/summary.json into case c, policy k. */
static int run_load(struct pool *p, const char *dir, const char *rel, size_t c, size_t k,
                    struct lt_err *err)
{
    char *path = lt_strfmt("%s/%s/summary.json", dir, rel);
    json_error_t je;
    json_t *j;
    double t, u;
    int rc = 0;

    if (path == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if ((j = json_load_file(path, 0, &je)) == NULL) {
        rc = lt_err_set(err, LT_EIO, 0, 0, "%s:%d: %s (tx.csv lists the run as done)", path,
                        je.line, je.text);
        lt_free(path);
        return rc;
    }
    t = json_number_value(json_object_get(json_object_get(j, "tasks"), "completed"));
    u = json_number_value(json_object_get(json_object_get(j, "metrics"), "useful_work_s"));
    if (!json_is_number(json_object_get(json_object_get(j, "tasks"), "completed")) ||
        !json_is_number(json_object_get(json_object_get(j, "metrics"), "useful_work_s")))
        rc = lt_err_set(err, LT_EPARSE, 0, 0,
                        "%s: no number at \"tasks\".\"completed\" or \"metrics\".\"useful_work_s\"",
                        path);
    p->tasks[c * SIM_CMP_MAX_POLICIES + k] = t;
    p->useful[c * SIM_CMP_MAX_POLICIES + k] = u;
    json_decref(j);
    lt_free(path);
    return rc;
}

/* One row of DIR/tx.csv (fields f, nf of them; seeds: the header has a seed column). */
static int row_add(struct pool *p, const char *dir, size_t first, bool add, bool seeds, char **f,
                   size_t nf, const char *where, struct lt_err *err)
{
    char *end, rel[512];
    double x;
    uint64_t seed = 0;
    size_t k = 0, c = 0;
    int rc;

    if (nf != (seeds ? 5u : 4u))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: %zu fields, not %d", where, nf, seeds ? 5 : 4);
    errno = 0;
    x = strtod(f[0], &end);
    if (end == f[0] || *end != '\0' || errno != 0 || !(x > 0.0) || x > 100.0)
        return lt_err_set(err, LT_EPARSE, 0, 1, "%s: x '%.40s' is not a percentage", where, f[0]);
    if (seeds) {
        errno = 0;
        seed = strtoull(f[2], &end, 10);
        if (end == f[2] || *end != '\0' || errno != 0 || f[2][0] == '-')
            return lt_err_set(err, LT_EPARSE, 0, 3, "%s: seed '%.40s' is not a number", where,
                              f[2]);
    }
    if ((rc = pool_policy(p, f[1], add, &k, where, err)) < 0 ||
        (rc = pool_case(p, first, x, seed, &c, err)) < 0)
        return rc;
    if (!isnan(p->tasks[c * SIM_CMP_MAX_POLICIES + k]))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: the run of '%s' at x %s is listed twice",
                          where, f[1], f[0]);
    errno = 0;
    double v = strtod(f[seeds ? 3 : 2], &end);
    if (isnan(v) && *end == '\0')
        return 0; /* the run failed: the case is left out */
    if (seeds)
        snprintf(rel, sizeof(rel), "x%s/%s/seed%s", f[0], f[1], f[2]);
    else
        snprintf(rel, sizeof(rel), "x%s/%s", f[0], f[1]);
    return run_load(p, dir, rel, c, k, err);
}

/* Reads DIR's tx.csv and its runs into the pool. */
static int dir_load(struct pool *p, const char *dir, bool first_dir, struct lt_err *err)
{
    char *path = lt_strfmt("%s/tx.csv", dir), line[LINE_MAX_LEN], where[4400], *f[8];
    size_t first = p->n, np0 = p->np;
    bool seeds = false, seen[SIM_CMP_MAX_POLICIES] = {false};
    long ln = 0;
    FILE *in;
    int rc = 0;

    if (path == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if ((in = fopen(path, "r")) == NULL) {
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s (not a tx --out directory?)", path,
                        strerror(errno));
        lt_free(path);
        return rc;
    }
    while (rc == 0 && fgets(line, sizeof(line), in) != NULL) {
        size_t len = strlen(line);
        snprintf(where, sizeof(where), "%s:%ld", path, ++ln);
        if (len == 0 || line[len - 1] != '\n') {
            rc = lt_err_set(err, LT_EPARSE, 0, 0, "%s: line too long or not ended", where);
            break;
        }
        line[len - 1] = '\0';
        if (ln == 1) {
            seeds = strcmp(line, "x,policy,seed,tasks_completed,jobs_completed") == 0;
            if (!seeds && strcmp(line, "x,policy,tasks_completed,jobs_completed") != 0)
                rc = lt_err_set(err, LT_EPARSE, 0, 0, "%s: not tx.csv's header", where);
            continue;
        }
        size_t nf = split(line, f, 8);
        rc = row_add(p, dir, first, first_dir, seeds, f, nf, where, err);
        for (size_t k = 0; rc == 0 && k < p->np; k++)
            seen[k] |= strcmp(p->name[k], f[1]) == 0;
    }
    if (rc == 0 && ferror(in))
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot read '%s'", path);
    for (size_t k = 0; rc == 0 && k < (first_dir ? p->np : np0); k++)
        if (!seen[k])
            rc = lt_err_set(err, LT_EINVAL, 0, 0,
                            "%s has no run of '%s': the DIRs must hold the same policies", path,
                            p->name[k]);
    fclose(in);
    lt_free(path);
    return rc;
}

/* The pool's values packed to [c * np + k] for compare.h, and the tables. */
static int pool_compute(struct pool *p, struct sim_cmp_result *res, struct lt_err *err)
{
    size_t np = p->np;
    double *t = lt_calloc(p->n * np + 1, sizeof(*t)), *u = lt_calloc(p->n * np + 1, sizeof(*u));
    int rc = 0;

    if (t == NULL || u == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t c = 0; rc == 0 && c < p->n; c++)
        for (size_t k = 0; k < np; k++) {
            t[c * np + k] = p->tasks[c * SIM_CMP_MAX_POLICIES + k];
            u[c * np + k] = p->useful[c * SIM_CMP_MAX_POLICIES + k];
        }
    if (rc == 0) {
        struct sim_cmp_input in = {p->names, np, p->n, p->x, t, u};
        rc = sim_cmp_compute(&in, res, err);
    }
    lt_free(t);
    lt_free(u);
    return rc;
}

/* Loads every DIR, refuses existing outputs without --force, prints and writes the tables. */
static int compare_run(const struct cmp_opts *o, struct lt_err *err)
{
    struct pool p;
    struct sim_cmp_result *res = lt_malloc(sizeof(*res));
    char *csv = lt_strfmt("%s/compare.csv", o->out), *js = lt_strfmt("%s/compare.json", o->out);
    int rc = 0;

    memset(&p, 0, sizeof(p));
    if (res == NULL || csv == NULL || js == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if (rc == 0) {
        const char *outs[2] = {csv, js};
        rc = sim_out_refuse_existing(outs, 2, o->force, err);
    }
    for (size_t d = 0; rc == 0 && d < o->dirs.n; d++)
        rc = dir_load(&p, o->dirs.v[d], d == 0, err);
    if (rc == 0 && p.np == 0)
        rc = lt_err_set(err, LT_EINVAL, 0, 0, "'%s/tx.csv' lists no run", o->dirs.v[0]);
    if (rc == 0)
        rc = pool_compute(&p, res, err);
    if (rc == 0) {
        printf("%zu cases (x, seed) from %zu tx sweep%s:", p.n, o->dirs.n,
               o->dirs.n > 1 ? "s" : "");
        for (size_t d = 0; d < o->dirs.n; d++)
            printf(" %s", o->dirs.v[d]);
        printf("\n");
        sim_cmp_print(res, stdout);
        if ((rc = sim_make_dirs(o->out, err)) == 0)
            rc = sim_cmp_write(o->out, res, err);
    }
    if (rc == 0)
        printf("\ncomparison tables: %s, %s\n", csv, js);
    pool_release(&p);
    lt_free(res);
    lt_free(csv);
    lt_free(js);
    return rc;
}

int sim_cmd_compare(int argc, char **argv)
{
    struct cmp_opts o;
    struct lt_err err;
    int rc;

    memset(&o, 0, sizeof(o));
    lt_err_init(&err, NULL);
    rc = sim_opt_parse(&cmp_spec, argc, argv, &o, NULL, &err);
    if (rc == 1)
        return SIM_EXIT_OK;
    if (rc == 0 && o.dirs.n == 0)
        rc = lt_err_set(&err, LT_EINVAL, 0, 0, "missing DIR: a tx --out directory");
    if (rc == 0 && o.out == NULL && o.dirs.n > 1)
        rc = lt_err_set(&err, LT_EINVAL, 0, 0,
                        "%zu DIRs: --out names where compare.csv and compare.json go", o.dirs.n);
    if (rc < 0)
        return sim_usage_error(cmp_spec.name, &err);
    if (o.out == NULL)
        o.out = o.dirs.v[0];
    sim_out_signals(SIM_SIG_CLEANUP);
    if (compare_run(&o, &err) < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    return SIM_EXIT_OK;
}
