/* lotes_cmd.c -- `lotus-sim lotes`: Tran & Beck's experiments (LoTES against the greedy
 * benchmark over a load sweep, confidence intervals over seeds, the MapReduce option) and
 * `lotus-sim lotes tables` (the LoTES tables of the paper's data center or of a real
 * cluster). docs/cli.md, docs/lotes.md.
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_lotes.h"
#include "lt_lotes_sim.h"
#include "lt_mem.h"
#include "cli/opt.h"
#include "cli/outfile.h"

#define MAX_LOADS       32
#define MAX_SEEDS       100
#define MAX_TABLES_FILE ((size_t)1 << 30)

struct lotes_opts {
    const char *policy, *load, *tables, *out;
    uint64_t seeds, seed, per_config, maps, reduces, active;
    double hours, warmup, drain;
    bool mapreduce, json, quiet;
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct lotes_opts, name, kind, field, arg, help, def)

static const struct sim_opt run_opts[] = {
    OPT("--policy", SIM_OPT_STR, policy, "LIST",
        "lotes, greedy (room now first), greedy-jsq (join the\nshortest queue by task count)",
        "lotes,greedy"),
    OPT("--load", SIM_OPT_STR, load, "LIST", "loads in (0, 10], x the allocation LP's lambda*",
        "0.5,0.7,0.8,0.9,0.95"),
    OPT("--seeds", SIM_OPT_U64, seeds, "N", "seeds per point, 1..100, from --seed", "5"),
    OPT("--seed", SIM_OPT_U64, seed, "N", "the first seed", "1"),
    OPT("--hours", SIM_OPT_HOURS, hours, "DURATION", "arrivals over this time (hours, or 90m, 2d)",
        "300"),
    OPT("--warmup", SIM_OPT_HOURS, warmup, "DURATION",
        "tasks arriving before it are not measured (hours)", "100"),
    OPT("--drain", SIM_OPT_HOURS, drain, "DURATION", "at most this long after the arrivals (hours)",
        "200"),
    OPT("--machines-per-config", SIM_OPT_U64, per_config, "N",
        "Table 1 with N machines per configuration (the\npaper's 1000 runs about 100x longer; "
        "lambda* scales\nwith N)",
        "100"),
    OPT("--active", SIM_OPT_U64, active, "PCT",
        "only PCT % of each configuration's machines are on\n(LoTES plans for them), the load "
        "still refers to all\n(the paper's Figure 4)",
        "100"),
    OPT("--tables", SIM_OPT_STR, tables, "FILE",
        "the machines, classes and tables of a tables file\n(lotus-sim lotes tables) instead of "
        "Table 1 + 3",
        NULL),
    OPT("--mapreduce", SIM_OPT_FLAG, mapreduce, NULL,
        "jobs of --maps map and --reduces reduce tasks; the\nresponse is the job's flow time",
        NULL),
    OPT("--maps", SIM_OPT_U64, maps, "N", "map tasks per job, with --mapreduce", "200"),
    OPT("--reduces", SIM_OPT_U64, reduces, "N", "reduce tasks per job, with --mapreduce", "100"),
    OPT("--json", SIM_OPT_FLAG, json, NULL, "one JSON object per (policy, load) line", NULL),
    OPT("--out", SIM_OPT_STR, out, "DIR",
        "also DIR/results.csv (every run) and DIR/summary.json\n(each replaced only when complete)",
        NULL),
    OPT("--quiet", SIM_OPT_FLAG, quiet, NULL, "no progress bar (it is drawn only on a terminal)",
        NULL),
};

static const struct sim_cmd_spec run_spec = {
    "lotes",
    "[options]  |  lotus-sim lotes tables [options]",
    "Simulates Tran & Beck's data center (Table 1's machines, Table 3's classes) under\n"
    "LoTES and the greedy shortest-queue benchmark, at each load (x the allocation\n"
    "LP's lambda*), over --seeds seeds, and prints mean response and waiting times\n"
    "with 95 % confidence intervals over the seeds. 'lotus-sim lotes tables --help'\n"
    "describes the tables subcommand.",
    "lotus-sim lotes --machines-per-config 20 --hours 100 --warmup 20 --drain 50 --load 0.5,0.9",
    NULL,
    run_opts,
    sizeof(run_opts) / sizeof(run_opts[0])};

struct tables_opts {
    const char *cluster, *classes, *out;
    uint64_t per_config;
    bool paper;
};

#undef OPT
#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct tables_opts, name, kind, field, arg, help, def)

static const struct sim_opt tables_opts[] = {
    OPT("--paper", SIM_OPT_FLAG, paper, NULL, "Table 1's machines and Table 3's classes", NULL),
    OPT("--machines-per-config", SIM_OPT_U64, per_config, "N",
        "with --paper: N machines per configuration", "1000"),
    OPT("--cluster", SIM_OPT_STR, cluster, "FILE",
        "a cluster snapshot (docs/formats.md; machines of\nequal capacity form a configuration)",
        NULL),
    OPT("--classes", SIM_OPT_STR, classes, "FILE", "a classes file (docs/lotes.md)", NULL),
    OPT("--out", SIM_OPT_STR, out, "FILE", "write the tables there (replaced only when complete)",
        "standard output"),
};

static const struct sim_cmd_spec tables_spec = {
    "lotes tables",
    "--paper [--machines-per-config N] | --cluster FILE --classes FILE [--out FILE]",
    "Computes the LoTES tables (lambda*, delta*, bins, the machine assignment, rho)\n"
    "and writes them as JSON (docs/lotes.md).",
    "lotus-sim lotes tables --paper --machines-per-config 20 --out tables.json",
    NULL,
    tables_opts,
    sizeof(tables_opts) / sizeof(tables_opts[0])};

/* Reads the file at path whole (at most MAX_TABLES_FILE bytes) into *out (lt_free). */
static int read_all(const char *path, char **out, size_t *len, struct lt_err *err)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    char *buf;

    if (f == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s'", path);
    if ((buf = lt_malloc(cap)) == NULL) {
        fclose(f);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory reading '%s'", path);
    }
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap >= MAX_TABLES_FILE) {
            fclose(f);
            lt_free(buf);
            return lt_err_set(err, LT_ERANGE, 0, 0, "'%s' is larger than %zu bytes", path,
                              MAX_TABLES_FILE);
        }
        {
            char *nb = lt_reallocarray(buf, cap, 2);
            if (nb == NULL) {
                fclose(f);
                lt_free(buf);
                return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory reading '%s'", path);
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        fclose(f);
        lt_free(buf);
        return lt_err_set(err, LT_EIO, 0, 0, "cannot read '%s'", path);
    }
    fclose(f);
    *out = buf;
    *len = n;
    return 0;
}

static struct lt_lotes_tables *tables_load(const char *path, struct lt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    struct lt_lotes_tables *t;

    if (read_all(path, &text, &len, err) < 0)
        return NULL;
    t = lt_lotes_tables_parse(text, len, path, err);
    lt_free(text);
    return t;
}

/* Writes t to path whole or not at all (path NULL: standard output). */
static int tables_save(const struct lt_lotes_tables *t, const char *path, struct lt_err *err)
{
    char *text = lt_lotes_tables_dump(t, err), *tmp = NULL;
    FILE *f;
    int rc;

    if (text == NULL)
        return err != NULL && err->code != 0 ? err->code : LT_ENOMEM;
    if (path == NULL) {
        rc = fputs(text, stdout) == EOF || putchar('\n') == EOF
                 ? lt_err_set(err, LT_EIO, 0, 0, "cannot write the tables to standard output")
                 : 0;
        lt_free(text);
        return rc;
    }
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL) {
        lt_free(text);
        return err != NULL ? err->code : LT_EIO;
    }
    rc = fputs(text, f) == EOF || fputc('\n', f) == EOF
             ? lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s'", path)
             : 0;
    lt_free(text);
    return sim_tmp_commit(f, tmp, path, rc, err);
}

/* Table 1 (with per_config machines each) and Table 3, built. */
static struct lt_lotes_tables *paper_tables(uint64_t per_config, struct lt_err *err)
{
    struct lt_lotes_config c[LT_LOTES_TABLE1_CONFIGS];
    struct lt_lotes_class k[LT_LOTES_TABLE3_CLASSES];
    struct lt_lotes_problem p = {k, LT_LOTES_TABLE3_CLASSES, c, LT_LOTES_TABLE1_CONFIGS};

    lt_lotes_table1(c);
    lt_lotes_table3(k);
    for (size_t j = 0; j < LT_LOTES_TABLE1_CONFIGS; j++)
        c[j].n = (size_t)per_config;
    return lt_lotes_build(&p, err);
}

/* ---- lotus-sim lotes tables ---- */

/* The classes file: {"classes": [{"name": S, "alpha": X, "mu": X, "cpu": X, "mem": X,
 * "disk": X (optional)}, ...]}; errors name the file and the JSON path. */
static int classes_load(const char *path, struct lt_lotes_class *k, size_t *n, struct lt_err *err)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *arr;
    size_t i;
    json_t *v;
    int rc = 0;

    lt_err_set_source(err, path);
    if (doc == NULL)
        return lt_err_set(err, LT_EPARSE, je.line, je.column, "%s", je.text);
    arr = json_object_get(doc, "classes");
    if (!json_is_array(arr) || json_array_size(arr) == 0 ||
        json_array_size(arr) > LT_LOTES_MAX_CLASSES) {
        json_decref(doc);
        return lt_err_set(err, LT_EPARSE, 0, 0,
                          "$.classes: expected an array of 1..%d class objects",
                          LT_LOTES_MAX_CLASSES);
    }
    json_array_foreach(arr, i, v)
    {
        static const char *const num[] = {"alpha", "mu", "cpu", "mem", "disk"};
        double x[5] = {0, 0, 0, 0, 0};
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *key;
        json_t *m;

        if (!json_is_object(v) || name == NULL || strlen(name) == 0 ||
            strlen(name) > LT_LOTES_MAX_NAME) {
            rc = lt_err_set(err, LT_EPARSE, 0, 0,
                            "$.classes[%zu].name: expected a string of 1..%d bytes", i,
                            LT_LOTES_MAX_NAME);
            break;
        }
        json_object_foreach(v, key, m)
        {
            bool known = strcmp(key, "name") == 0;
            for (size_t a = 0; a < 5; a++)
                known = known || strcmp(key, num[a]) == 0;
            if (!known) {
                rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.classes[%zu].%s: unknown member", i, key);
                break;
            }
        }
        for (size_t a = 0; a < 5 && rc == 0; a++) {
            json_t *e = json_object_get(v, num[a]);
            if (e == NULL && a == 4)
                continue;
            if (!json_is_number(e) || !(json_number_value(e) >= 0.0)) {
                rc = lt_err_set(err, LT_EPARSE, 0, 0, "$.classes[%zu].%s: expected a number >= 0",
                                i, num[a]);
                break;
            }
            x[a] = json_number_value(e);
        }
        if (rc < 0)
            break;
        memset(&k[i], 0, sizeof(k[i]));
        snprintf(k[i].name, sizeof(k[i].name), "%s", name);
        k[i].alpha = x[0];
        k[i].mu = x[1];
        k[i].req = (struct lt_res){x[2], x[3], x[4]};
    }
    *n = i;
    json_decref(doc);
    return rc;
}

/* The cluster's configurations: machines of equal capacity (online or not), in order of first
 * appearance (lt_lotes_configs_from_caps). */
static int cluster_configs(const char *path, struct lt_lotes_config *c, size_t *n,
                           struct lt_err *err)
{
    struct lt_cluster *cl;
    struct sim_load_stats st;
    struct lt_res *cap;
    int rc = sim_cluster_load(path, &cl, &st, err);

    *n = 0;
    if (rc < 0)
        return rc;
    if ((cap = lt_calloc(lt_cluster_size(cl) + 1, sizeof(*cap))) == NULL) {
        lt_cluster_free(cl);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory reading '%s'", path);
    }
    for (size_t i = 0; i < lt_cluster_size(cl); i++)
        cap[i] = lt_cluster_cap(cl, i);
    rc = lt_lotes_configs_from_caps(cap, lt_cluster_size(cl), c, LT_LOTES_MAX_CONFIGS, n, err);
    lt_free(cap);
    lt_cluster_free(cl);
    return rc;
}

/* The tables of --paper, or of --cluster and --classes. */
static struct lt_lotes_tables *tables_make(const struct tables_opts *o, struct lt_err *err)
{
    struct lt_lotes_config c[LT_LOTES_MAX_CONFIGS];
    struct lt_lotes_class k[LT_LOTES_MAX_CLASSES];
    size_t nc = 0, nk = 0;

    if (o->paper)
        return paper_tables(o->per_config, err);
    if (cluster_configs(o->cluster, c, &nc, err) < 0 || classes_load(o->classes, k, &nk, err) < 0)
        return NULL;
    struct lt_lotes_problem p = {k, nk, c, nc};
    lt_err_set_source(err, NULL);
    return lt_lotes_build(&p, err);
}

static int cmd_tables(int argc, char **argv)
{
    struct tables_opts o = {.per_config = 1000};
    bool seen[sizeof(tables_opts) / sizeof(tables_opts[0])];
    struct lt_lotes_tables *t = NULL;
    struct lt_err err;
    int rc;

    lt_err_init(&err, NULL);
    if ((rc = sim_opt_parse(&tables_spec, argc, argv, &o, seen, &err)) != 0)
        return rc == 1 ? SIM_EXIT_OK : sim_usage_error("lotes tables", &err);
    if (o.paper == (o.cluster != NULL || o.classes != NULL) ||
        (!o.paper && (o.cluster == NULL || o.classes == NULL))) {
        lt_err_set(&err, LT_EINVAL, 0, 0,
                   "give --paper, or --cluster CLUSTER.json and --classes CLASSES.json");
        return sim_usage_error("lotes tables", &err);
    }
    if (o.per_config == 0 || o.per_config > 1000000) {
        lt_err_set(&err, LT_EINVAL, 0, 0, "--machines-per-config %llu is not in 1..1000000",
                   (unsigned long long)o.per_config);
        return sim_usage_error("lotes tables", &err);
    }
    if (!o.paper)
        sim_opt_warn_unused(&tables_spec, seen, "--machines-per-config",
                            "with --cluster (the snapshot has its machines)");
    sim_out_signals(SIM_SIG_CLEANUP);
    if ((t = tables_make(&o, &err)) == NULL || tables_save(t, o.out, &err) < 0) {
        sim_err_print(&err);
        lt_lotes_tables_free(t);
        return SIM_EXIT_INPUT;
    }
    fprintf(stderr,
            "lotus-sim: lambda* %.6g (allocation LP), %.6g (assignment LP), %.6g (whole "
            "machines); %zu configurations, %zu classes, %zu bins\n",
            t->lambda_alloc, t->lambda_assign, t->lambda_rounded, t->n_configs, t->n_classes,
            t->n_bins);
    lt_lotes_tables_free(t);
    return SIM_EXIT_OK;
}

/* ---- lotus-sim lotes (the experiments) ---- */

/* Two-sided 95 % Student t quantiles for 1..30 degrees of freedom; 1.96 beyond. */
static double t95(size_t df)
{
    static const double q[31] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                 2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                 2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                 2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    return df <= 30 ? q[df] : 1.96;
}

/* Mean and 95 % half-width over the finite values of x[0..n-1] (half-width NaN for < 2). */
static void ci(const double *x, size_t n, double *mean, double *half)
{
    double s = 0.0, ss = 0.0;
    size_t m = 0;

    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i])) {
            s += x[i];
            m++;
        }
    }
    *mean = m ? s / (double)m : NAN;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i]))
            ss += (x[i] - *mean) * (x[i] - *mean);
    }
    *half = m >= 2 ? t95(m - 1) * sqrt(ss / (double)(m - 1)) / sqrt((double)m) : NAN;
}

/* Splits a comma list of loads (the shared list syntax). */
static int parse_loads(const char *s, double *out, size_t *n, struct lt_err *err)
{
    char buf[1024], *items[MAX_LOADS];
    int rc = sim_list_split("--load", s, buf, sizeof(buf), items, MAX_LOADS, n, err);

    for (size_t k = 0; k < *n && rc == 0; k++) {
        char *end;
        double v = strtod(items[k], &end);
        if (end == items[k] || *end != '\0' || !(v > 0.0) || !(v <= 10.0))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--load '%s': expected loads in (0, 10] separated by commas", s);
        out[k] = v;
    }
    return rc;
}

struct bar {
    bool on;
    size_t run, n_runs;
    const char *policy;
    double load, horizon;
};

static void bar_draw(void *arg, double now, uint64_t events)
{
    const struct bar *b = arg;
    double in_run = b->horizon > 0 ? now / b->horizon : 0.0, frac;
    char cells[SIM_BAR_WIDTH + 1];

    in_run = in_run < 1.0 ? in_run : 1.0;
    frac = ((double)b->run + in_run) / (double)b->n_runs;
    sim_bar_cells(frac, cells);
    fprintf(stderr, "\r[%s] %3.0f%% run %zu/%zu %s load %.2f | sim %.0f/%.0f h | %.1f M events   ",
            cells, frac * 100.0, b->run + 1, b->n_runs, b->policy, b->load, now, b->horizon,
            (double)events / 1e6);
    fflush(stderr);
}

/* Returns 0, 1 after --help, or a negative LT_E* with err set. */
static int parse_run(int argc, char **argv, struct lotes_opts *o, struct lt_err *err)
{
    struct lt_lotes_sim_params d;
    bool seen[sizeof(run_opts) / sizeof(run_opts[0])];
    int rc;

    lt_lotes_sim_params_default(&d, NULL); /* the simulation's defaults are the command's */
    memset(o, 0, sizeof(*o));
    o->policy = "lotes,greedy";
    o->load = "0.5,0.7,0.8,0.9,0.95";
    o->seeds = 5;
    o->seed = d.seed;
    o->per_config = 100;
    o->active = 100;
    o->maps = d.maps;
    o->reduces = d.reduces;
    o->hours = d.hours;
    o->warmup = d.warmup;
    o->drain = d.drain;
    if ((rc = sim_opt_parse(&run_spec, argc, argv, o, seen, err)) != 0)
        return rc;
    if (o->active > 100)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--active %llu is not a percentage 1..100",
                          (unsigned long long)o->active);
    if (o->seeds == 0 || o->seeds > MAX_SEEDS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--seeds %llu is not in 1..%d",
                          (unsigned long long)o->seeds, MAX_SEEDS);
    if (o->per_config == 0 || o->per_config > 1000000)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--machines-per-config %llu is not in 1..1000000",
                          (unsigned long long)o->per_config);
    if (o->maps == 0 || o->maps > 100000 || o->reduces > 100000)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--maps must be 1..100000, --reduces 0..100000");
    if (!(o->hours <= 1e6) || !(o->warmup <= 1e6) || !(o->drain <= 1e6))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--hours, --warmup and --drain are at most 1e6 h");
    if (!(o->hours > 0.0) || !(o->warmup < o->hours))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--warmup %g must be below --hours %g", o->warmup,
                          o->hours);
    if (o->tables != NULL) {
        sim_opt_warn_unused(&run_spec, seen, "--machines-per-config",
                            "with --tables (the tables file has the machines)");
        sim_opt_warn_unused(&run_spec, seen, "--active", "with --tables");
    }
    if (!o->mapreduce) {
        sim_opt_warn_unused(&run_spec, seen, "--maps", "without --mapreduce");
        sim_opt_warn_unused(&run_spec, seen, "--reduces", "without --mapreduce");
    }
    return 0;
}

/* --policy: a comma list of lotes, greedy, greedy-jsq, each at most once. */
static int parse_policies(const char *list, const char **names, enum lt_lotes_policy *ids,
                          size_t *n, struct lt_err *err)
{
    static const char *const known[3] = {"lotes", "greedy", "greedy-jsq"};
    char buf[256], *items[3];
    int rc = sim_list_split("--policy", list, buf, sizeof(buf), items, 3, n, err);

    for (size_t a = 0; a < *n && rc == 0; a++) {
        size_t k = 0;
        while (k < 3 && strcmp(items[a], known[k]) != 0)
            k++;
        if (k == 3) {
            const char *near = sim_closest(items[a], known, 3);
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--policy '%s': unknown '%s'%s%s%s (known: lotes, greedy, "
                              "greedy-jsq)",
                              list, items[a], near ? " (did you mean " : "", near ? near : "",
                              near ? "?)" : "");
        }
        names[a] = known[k];
        ids[a] = (enum lt_lotes_policy)k;
    }
    return rc;
}

/* One (policy, load) point: its seeds' summaries. */
struct point {
    const char *policy;
    double load;
    struct lt_lotes_sim_summary *s; /* seeds entries */
};

static json_t *point_json(const struct lotes_opts *o, const struct lt_lotes_tables *t,
                          const struct point *pt)
{
    size_t n = (size_t)o->seeds;
    double *x = lt_calloc(n + 1, sizeof(*x)), m, h;
    json_t *j = json_object(), *cls = json_object();
    uint64_t unfinished = 0, measured = 0;

    if (x == NULL || j == NULL || cls == NULL) {
        lt_free(x);
        json_decref(j);
        json_decref(cls);
        return NULL;
    }
#define PUT_CI(key, expr)                                                                          \
    do {                                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            x[i] = pt->s[i].expr;                                                                  \
        ci(x, n, &m, &h);                                                                          \
        json_object_set_new(j, key, isfinite(m) ? json_real(m) : json_null());                     \
        json_object_set_new(j, key "_ci95", isfinite(h) ? json_real(h) : json_null());             \
    } while (0)
    json_object_set_new(j, "policy", json_string(pt->policy));
    json_object_set_new(j, "load", json_real(pt->load));
    json_object_set_new(j, "seeds", json_integer((json_int_t)n));
    json_object_set_new(j, "mapreduce", json_boolean(o->mapreduce));
    PUT_CI("response_h", resp_mean);
    PUT_CI("waiting_h", wait_mean);
    PUT_CI("in_system", in_system_mean);
    for (size_t i = 0; i < n; i++) {
        unfinished += pt->s[i].unfinished;
        measured += pt->s[i].measured;
    }
    json_object_set_new(j, "measured", json_integer((json_int_t)measured));
    json_object_set_new(j, "unfinished", json_integer((json_int_t)unfinished));
    for (size_t k = 0; k < t->n_classes && k < LT_LOTES_MAX_CLASSES; k++) {
        json_t *e = json_object();
        for (size_t i = 0; i < n; i++)
            x[i] = pt->s[i].resp_class[k];
        ci(x, n, &m, &h);
        json_object_set_new(e, "response_h", isfinite(m) ? json_real(m) : json_null());
        json_object_set_new(e, "response_h_ci95", isfinite(h) ? json_real(h) : json_null());
        for (size_t i = 0; i < n; i++)
            x[i] = pt->s[i].wait_class[k];
        ci(x, n, &m, &h);
        json_object_set_new(e, "waiting_h", isfinite(m) ? json_real(m) : json_null());
        json_object_set_new(cls, t->classes[k].name, e);
    }
#undef PUT_CI
    json_object_set_new(j, "classes", cls);
    lt_free(x);
    return j;
}

static void print_table(const struct lotes_opts *o, const struct lt_lotes_tables *t,
                        const struct point *pts, size_t n_pts)
{
    size_t machines = 0;

    for (size_t j = 0; j < t->n_configs; j++)
        machines += t->configs[j].n;
    printf("%zu machines in %zu configurations, %zu classes, lambda* %.1f %s/h%s; %llu seeds, "
           "%g h (warm-up %g h)\n",
           machines, t->n_configs, t->n_classes, t->lambda_alloc, o->mapreduce ? "tasks" : "jobs",
           o->mapreduce ? " (MapReduce)" : "", (unsigned long long)o->seeds, o->hours, o->warmup);
    printf("%-10s %6s %22s %22s %14s %10s\n", "policy", "load",
           o->mapreduce ? "flow [h]" : "response [h]", "waiting [h]", "in system", "unfinished");
    for (size_t p = 0; p < n_pts; p++) {
        double *x = lt_calloc((size_t)o->seeds, sizeof(*x)), rm, rh, wm, wh, sm, sh;
        uint64_t unf = 0;
        if (x == NULL)
            return;
        for (size_t i = 0; i < o->seeds; i++)
            x[i] = pts[p].s[i].resp_mean;
        ci(x, (size_t)o->seeds, &rm, &rh);
        for (size_t i = 0; i < o->seeds; i++)
            x[i] = pts[p].s[i].wait_mean;
        ci(x, (size_t)o->seeds, &wm, &wh);
        for (size_t i = 0; i < o->seeds; i++) {
            x[i] = pts[p].s[i].in_system_mean;
            unf += pts[p].s[i].unfinished;
        }
        ci(x, (size_t)o->seeds, &sm, &sh);
        printf("%-10s %6.2f %12.4f +- %-7.4f %12.4f +- %-7.4f %14.0f %10llu\n", pts[p].policy,
               pts[p].load, rm, isfinite(rh) ? rh : 0.0, wm, isfinite(wh) ? wh : 0.0, sm,
               (unsigned long long)unf);
        lt_free(x);
    }
}

static int write_out(const struct lotes_opts *o, const struct lt_lotes_tables *t,
                     const struct point *pts, size_t n_pts, struct lt_err *err)
{
    char path[4200], *tmp = NULL;
    FILE *f;
    json_t *arr = json_array();
    int rc;

    if (arr == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the summary");
    if ((rc = sim_make_dirs(o->out, err)) < 0 ||
        (size_t)snprintf(path, sizeof(path), "%s/results.csv", o->out) >= sizeof(path)) {
        json_decref(arr);
        return rc < 0 ? rc : lt_err_set(err, LT_EINVAL, 0, 0, "--out '%s' is too long", o->out);
    }
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL) {
        json_decref(arr);
        return err != NULL ? err->code : LT_EIO;
    }
    fputs("policy,load,seed,measured,completed,unfinished,response_h,waiting_h,in_system_mean,"
          "in_system_max,tasks,first_fit,any_room,queued,queued_any,end_h,events\n",
          f);
    for (size_t p = 0; p < n_pts; p++) {
        for (size_t i = 0; i < o->seeds; i++) {
            const struct lt_lotes_sim_summary *s = &pts[p].s[i];
            fprintf(f,
                    "%s,%g,%llu,%llu,%llu,%llu,%.9g,%.9g,%.6g,%llu,%llu,%llu,%llu,%llu,%llu,%.6g,"
                    "%llu\n",
                    pts[p].policy, pts[p].load, (unsigned long long)(o->seed + i),
                    (unsigned long long)s->measured, (unsigned long long)s->completed,
                    (unsigned long long)s->unfinished, s->resp_mean, s->wait_mean,
                    s->in_system_mean, (unsigned long long)s->in_system_max,
                    (unsigned long long)s->tasks, (unsigned long long)s->how[0],
                    (unsigned long long)s->how[1], (unsigned long long)s->how[2],
                    (unsigned long long)s->how[3], s->end, (unsigned long long)s->events);
        }
        json_array_append_new(arr, point_json(o, t, &pts[p]));
    }
    if ((rc = sim_tmp_commit(f, tmp, path, 0, err)) < 0) {
        json_decref(arr);
        return rc;
    }
    snprintf(path, sizeof(path), "%s/summary.json", o->out);
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL) {
        json_decref(arr);
        return err != NULL ? err->code : LT_EIO;
    }
    {
        json_t *doc =
            json_pack("{s:f,s:f,s:f,s:o}", "lambda_alloc", t->lambda_alloc, "lambda_assign",
                      t->lambda_assign, "lambda_rounded", t->lambda_rounded, "points", arr);
        rc = doc == NULL || json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0 ||
                     fputc('\n', f) == EOF
                 ? lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s'", path)
                 : 0;
        json_decref(doc);
    }
    return sim_tmp_commit(f, tmp, path, rc, err);
}

/* What one `lotus-sim lotes` run computes over. */
struct lotes_run {
    struct lotes_opts o;
    struct lt_lotes_tables *t; /* owned */
    struct lt_res cv[LT_LOTES_MAX_CLASSES];
    double loads[MAX_LOADS];
    size_t n_loads;
    const char *pols[3];
    enum lt_lotes_policy pol_ids[3];
    size_t n_pols;
    double lambda_ref; /* > 0: the whole cluster's lambda*, with --active */
};

/* The tables: --tables's, or Table 1 + 3 with --active's machines on. */
static int lotes_tables(struct lotes_run *r, struct lt_err *err)
{
    const struct lotes_opts *o = &r->o;
    uint64_t on = (o->per_config * o->active + 50) / 100;

    if (o->tables != NULL) {
        if ((r->t = tables_load(o->tables, err)) == NULL)
            return err->code;
        for (size_t k = 0; k < LT_LOTES_MAX_CLASSES; k++)
            r->cv[k] = (struct lt_res){0, 0, 0};
        return 0;
    }
    if (o->active == 0 || on == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--active %llu leaves no machine on",
                          (unsigned long long)o->active);
    if (on != o->per_config) { /* load 1 is still the whole cluster's lambda* */
        struct lt_lotes_tables *full = paper_tables(o->per_config, err);
        if (full == NULL)
            return err->code;
        r->lambda_ref = full->lambda_alloc;
        lt_lotes_tables_free(full);
    }
    if ((r->t = paper_tables(on, err)) == NULL)
        return err->code;
    lt_lotes_table3_cv(r->cv);
    return 0;
}

/* The seeds of one (policy a, load l) point into pt->s. */
static int run_point(const struct lotes_run *r, size_t a, size_t l, struct point *pt,
                     struct bar *bar, struct lt_err *err)
{
    for (size_t i = 0; i < r->o.seeds; i++) {
        struct lt_lotes_sim_params p;
        lt_lotes_sim_params_default(&p, r->t);
        p.cv = r->cv;
        p.policy = r->pol_ids[a];
        p.load = r->loads[l];
        p.lambda_ref = r->lambda_ref;
        p.hours = r->o.hours;
        p.warmup = r->o.warmup;
        p.drain = r->o.drain;
        p.mapreduce = r->o.mapreduce;
        p.maps = (uint32_t)r->o.maps;
        p.reduces = (uint32_t)r->o.reduces;
        p.seed = r->o.seed + i;
        bar->policy = r->pols[a];
        bar->load = r->loads[l];
        if (bar->on) {
            p.progress = bar_draw;
            p.progress_arg = bar;
        }
        if (lt_lotes_sim_run(&p, &pt->s[i], err) < 0)
            return err->code;
        bar->run++;
    }
    return 0;
}

/* Every (policy, load) point, printed as a JSON line as it completes with --json. */
static int run_points(const struct lotes_run *r, struct point *pts, size_t *n_pts, struct bar *bar,
                      struct lt_err *err)
{
    bar->on = !r->o.quiet && isatty(STDERR_FILENO);
    bar->n_runs = r->n_pols * r->n_loads * (size_t)r->o.seeds;
    bar->horizon = r->o.hours;
    for (size_t a = 0; a < r->n_pols; a++) {
        for (size_t l = 0; l < r->n_loads; l++) {
            struct point *pt = &pts[(*n_pts)++];
            pt->policy = r->pols[a];
            pt->load = r->loads[l];
            if ((pt->s = lt_calloc((size_t)r->o.seeds, sizeof(*pt->s))) == NULL)
                return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
            if (run_point(r, a, l, pt, bar, err) < 0)
                return err->code;
            if (r->o.json) {
                json_t *j = point_json(&r->o, r->t, pt);
                if (j == NULL)
                    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
                json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10));
                putchar('\n');
                fflush(stdout);
                json_decref(j);
            }
        }
    }
    if (bar->on)
        fprintf(stderr, "\r%*s\r", 100, "");
    return 0;
}

int sim_cmd_lotes(int argc, char **argv)
{
    struct lotes_run r;
    struct point *pts = NULL;
    size_t n_pts = 0;
    struct bar bar;
    struct lt_err err;
    int status = SIM_EXIT_INPUT, rc;

    if (argc > 1 && strcmp(argv[1], "tables") == 0)
        return cmd_tables(argc - 1, argv + 1);
    lt_err_init(&err, NULL);
    memset(&bar, 0, sizeof(bar));
    memset(&r, 0, sizeof(r));
    if ((rc = parse_run(argc, argv, &r.o, &err)) != 0 ||
        parse_loads(r.o.load, r.loads, &r.n_loads, &err) < 0 ||
        parse_policies(r.o.policy, r.pols, r.pol_ids, &r.n_pols, &err) < 0)
        return rc == 1 ? SIM_EXIT_OK : sim_usage_error("lotes", &err);
    if (lotes_tables(&r, &err) < 0) {
        sim_err_print(&err);
        lt_lotes_tables_free(r.t);
        return err.code == LT_EINVAL && r.o.tables == NULL ? SIM_EXIT_USAGE : SIM_EXIT_INPUT;
    }
    sim_out_signals(SIM_SIG_CLEANUP);
    if ((pts = lt_calloc(r.n_pols * r.n_loads, sizeof(*pts))) == NULL)
        lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory");
    else if (run_points(&r, pts, &n_pts, &bar, &err) == 0) {
        if (!r.o.json && r.lambda_ref > 0.0)
            printf("%llu %% of the machines on: loads are relative to all machines' lambda* "
                   "%.1f\n",
                   (unsigned long long)r.o.active, r.lambda_ref);
        if (!r.o.json)
            print_table(&r.o, r.t, pts, n_pts);
        if (r.o.out == NULL || write_out(&r.o, r.t, pts, n_pts, &err) == 0)
            status = SIM_EXIT_OK;
    }
    if (status != SIM_EXIT_OK) {
        if (bar.on)
            fputc('\n', stderr);
        sim_err_print(&err);
    }
    for (size_t p = 0; pts != NULL && p < n_pts; p++)
        lt_free(pts[p].s);
    lt_free(pts);
    lt_lotes_tables_free(r.t);
    return status;
}
