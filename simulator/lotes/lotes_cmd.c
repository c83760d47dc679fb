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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_lotes.h"
#include "lt_lotes_sim.h"
#include "lt_mem.h"
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

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: lotus-sim lotes [--policy LIST] [--load LIST] [--seeds N] [--seed N]\n"
            "                       [--hours H] [--warmup H] [--drain H]\n"
            "                       [--machines-per-config N | --tables FILE]\n"
            "                       [--mapreduce [--maps N] [--reduces N]] [--json] [--out DIR]\n"
            "                       [--quiet]\n"
            "       lotus-sim lotes tables (--paper [--machines-per-config N]\n"
            "                               | --cluster CLUSTER.json --classes CLASSES.json)\n"
            "                              [--out FILE]\n"
            "\n"
            "Simulates Tran & Beck's data center (Table 1's machines, Table 3's classes) under\n"
            "LoTES and the greedy shortest-queue benchmark, at each load (x the allocation\n"
            "LP's lambda*), over --seeds seeds, and prints mean response and waiting times\n"
            "with 95 %% confidence intervals over the seeds.\n"
            "\n"
            "  --policy LIST            lotes, greedy (room now first), greedy-jsq (join the\n"
            "                           shortest queue by task count); default lotes,greedy\n"
            "  --load LIST              loads (default 0.5,0.7,0.8,0.9,0.95)\n"
            "  --seeds N                seeds per point, 1..100 (default 5), from --seed (1)\n"
            "  --hours H                arrivals over H hours (default 300)\n"
            "  --warmup H               tasks arriving before H are not measured (default 100)\n"
            "  --drain H                at most H hours after the arrivals (default 200)\n"
            "  --machines-per-config N  Table 1 with N machines per configuration (default\n"
            "                           100; the paper's 1000 runs about 100x longer;\n"
            "                           lambda* scales with N)\n"
            "  --active PCT             only PCT %% of each configuration's machines are on\n"
            "                           (LoTES plans for them), the load still refers to all\n"
            "                           (the paper's Figure 4; default 100)\n"
            "  --tables FILE            the machines, classes and tables of a tables file\n"
            "                           (lotus-sim lotes tables) instead of Table 1 + 3\n"
            "  --mapreduce              jobs of --maps (200) map and --reduces (100) reduce\n"
            "                           tasks; the response is the job's flow time\n"
            "  --json                   one JSON object per (policy, load) line\n"
            "  --out DIR                also DIR/results.csv (every run) and DIR/summary.json\n"
            "  --quiet                  no progress bar (it is drawn only on a terminal)\n"
            "\n"
            "tables: computes the LoTES tables (lambda*, delta*, bins, the machine assignment,\n"
            "rho) and writes them as JSON (docs/lotes.md) to FILE or standard output. --paper\n"
            "takes Table 1 + 3; --cluster takes a cluster snapshot (docs/formats.md; machines of\n"
            "equal capacity form a configuration) and --classes a classes file (docs/lotes.md).\n");
}

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

static int cmd_tables(int argc, char **argv)
{
    const char *cluster = NULL, *classes = NULL, *out = NULL;
    uint64_t per_config = 1000;
    bool paper = false;
    struct lt_lotes_tables *t = NULL;
    struct lt_err err;

    lt_err_init(&err, NULL);
    for (int i = 1; i < argc; i++) {
        const char *v;
        int rc;
        if (strcmp(argv[i], "--paper") == 0) {
            paper = true;
            continue;
        }
        if ((rc = sim_opt_value(argc, argv, &i, "--cluster", &cluster, &err)) != 0 ||
            (rc = sim_opt_value(argc, argv, &i, "--classes", &classes, &err)) != 0 ||
            (rc = sim_opt_value(argc, argv, &i, "--out", &out, &err)) != 0) {
            if (rc < 0)
                goto usage;
            continue;
        }
        if ((rc = sim_opt_value(argc, argv, &i, "--machines-per-config", &v, &err)) != 0) {
            if (rc < 0 || sim_parse_u64("--machines-per-config", v, &per_config, &err) < 0)
                goto usage;
            continue;
        }
        lt_err_set(&err, LT_EINVAL, 0, 0, "unknown option '%s' (lotus-sim lotes --help)", argv[i]);
        goto usage;
    }
    if (paper == (cluster != NULL || classes != NULL) ||
        (!paper && (cluster == NULL || classes == NULL))) {
        lt_err_set(&err, LT_EINVAL, 0, 0,
                   "give --paper, or --cluster CLUSTER.json and --classes CLASSES.json");
        goto usage;
    }
    if (per_config == 0 || per_config > 1000000) {
        lt_err_set(&err, LT_EINVAL, 0, 0, "--machines-per-config %llu is not in 1..1000000",
                   (unsigned long long)per_config);
        goto usage;
    }
    if (paper) {
        t = paper_tables(per_config, &err);
    } else {
        struct lt_lotes_config c[LT_LOTES_MAX_CONFIGS];
        struct lt_lotes_class k[LT_LOTES_MAX_CLASSES];
        size_t nc = 0, nk = 0;
        if (cluster_configs(cluster, c, &nc, &err) == 0 &&
            classes_load(classes, k, &nk, &err) == 0) {
            struct lt_lotes_problem p = {k, nk, c, nc};
            lt_err_set_source(&err, NULL);
            t = lt_lotes_build(&p, &err);
        }
    }
    if (t == NULL || tables_save(t, out, &err) < 0) {
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
usage:
    sim_err_print(&err);
    return SIM_EXIT_USAGE;
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

/* Splits a comma list of loads. */
static int parse_loads(const char *s, double *out, size_t *n, struct lt_err *err)
{
    const char *p = s;

    *n = 0;
    for (;;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v > 0.0) || !(v <= 10.0) || (*end != ',' && *end != '\0'))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--load '%s': expected loads in (0, 10] separated by commas", s);
        if (*n == MAX_LOADS)
            return lt_err_set(err, LT_EINVAL, 0, 0, "--load '%s': more than %d loads", s,
                              MAX_LOADS);
        out[(*n)++] = v;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

static int parse_hours(const char *flag, const char *v, double *out, struct lt_err *err)
{
    char *end;
    double x = strtod(v, &end);

    if (end == v || *end != '\0' || !(x >= 0.0) || !(x <= 1e6))
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s '%s': expected hours in [0, 1e6]", flag, v);
    *out = x;
    return 0;
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
    char cells[25];
    int fill;

    in_run = in_run < 1.0 ? in_run : 1.0;
    frac = ((double)b->run + in_run) / (double)b->n_runs;
    fill = (int)(frac * 24 + 0.5);
    for (int k = 0; k < 24; k++)
        cells[k] = k < fill ? '#' : '.';
    cells[24] = '\0';
    fprintf(stderr, "\r[%s] %3.0f%% run %zu/%zu %s load %.2f | sim %.0f/%.0f h | %.1f M events   ",
            cells, frac * 100.0, b->run + 1, b->n_runs, b->policy, b->load, now, b->horizon,
            (double)events / 1e6);
    fflush(stderr);
}

static int parse_run(int argc, char **argv, struct lotes_opts *o, struct lt_err *err)
{
    struct lt_lotes_sim_params d;

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
    for (int i = 1; i < argc; i++) {
        const char *v;
        int rc;
        if (strcmp(argv[i], "--mapreduce") == 0 || strcmp(argv[i], "--json") == 0 ||
            strcmp(argv[i], "--quiet") == 0) {
            *(argv[i][2] == 'm' ? &o->mapreduce : argv[i][2] == 'j' ? &o->json : &o->quiet) = true;
            continue;
        }
#define STR(flag, field)                                                                           \
    if ((rc = sim_opt_value(argc, argv, &i, flag, &o->field, err)) != 0) {                         \
        if (rc < 0)                                                                                \
            return rc;                                                                             \
        continue;                                                                                  \
    }
#define U64(flag, field)                                                                           \
    if ((rc = sim_opt_value(argc, argv, &i, flag, &v, err)) != 0) {                                \
        if (rc < 0 || (rc = sim_parse_u64(flag, v, &o->field, err)) < 0)                           \
            return rc;                                                                             \
        continue;                                                                                  \
    }
#define HOURS(flag, field)                                                                         \
    if ((rc = sim_opt_value(argc, argv, &i, flag, &v, err)) != 0) {                                \
        if (rc < 0 || (rc = parse_hours(flag, v, &o->field, err)) < 0)                             \
            return rc;                                                                             \
        continue;                                                                                  \
    }
        STR("--policy", policy)
        STR("--load", load)
        STR("--tables", tables)
        STR("--out", out)
        U64("--seeds", seeds)
        U64("--seed", seed)
        U64("--machines-per-config", per_config)
        U64("--active", active)
        U64("--maps", maps)
        U64("--reduces", reduces)
        HOURS("--hours", hours)
        HOURS("--warmup", warmup)
        HOURS("--drain", drain)
#undef STR
#undef U64
#undef HOURS
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown option '%s' (lotus-sim lotes --help)",
                          argv[i]);
    }
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
    if (!(o->hours > 0.0) || !(o->warmup < o->hours))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--warmup %g must be below --hours %g", o->warmup,
                          o->hours);
    return 0;
}

/* --policy: a comma list of lotes, greedy, greedy-jsq, each at most once. */
static int parse_policies(const char *list, const char **names, enum lt_lotes_policy *ids,
                          size_t *n, struct lt_err *err)
{
    static const char *const known[3] = {"lotes", "greedy", "greedy-jsq"};
    const char *p = list;

    *n = 0;
    for (;;) {
        size_t len = strcspn(p, ","), k;
        for (k = 0; k < 3; k++) {
            if (strlen(known[k]) == len && strncmp(p, known[k], len) == 0)
                break;
        }
        if (k == 3)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--policy '%s': unknown '%.*s' (known: lotes, greedy, greedy-jsq)",
                              list, (int)len, p);
        for (size_t a = 0; a < *n; a++) {
            if (ids[a] == (enum lt_lotes_policy)k)
                return lt_err_set(err, LT_EINVAL, 0, 0, "--policy '%s': '%s' twice", list,
                                  known[k]);
        }
        names[*n] = known[k];
        ids[(*n)++] = (enum lt_lotes_policy)k;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
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

int sim_cmd_lotes(int argc, char **argv)
{
    struct lotes_opts o;
    struct lt_lotes_tables *t = NULL;
    struct lt_res cv[LT_LOTES_MAX_CLASSES];
    double loads[MAX_LOADS];
    size_t n_loads = 0, n_pts = 0;
    const char *pols[3];
    enum lt_lotes_policy pol_ids[3];
    size_t n_pols = 0;
    struct point *pts = NULL;
    double lambda_ref = 0.0;
    struct bar bar;
    struct lt_err err;
    int status = SIM_EXIT_INPUT;

    lt_err_init(&err, NULL);
    memset(&bar, 0, sizeof(bar));
    if (argc > 1 && strcmp(argv[1], "tables") == 0)
        return cmd_tables(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            run_usage(stdout);
            return SIM_EXIT_OK;
        }
    }
    if (parse_run(argc, argv, &o, &err) < 0 || parse_loads(o.load, loads, &n_loads, &err) < 0)
        goto usage;
    if (parse_policies(o.policy, pols, pol_ids, &n_pols, &err) < 0)
        goto usage;
    if (o.tables != NULL) {
        if ((t = tables_load(o.tables, &err)) == NULL)
            goto fail;
        for (size_t k = 0; k < LT_LOTES_MAX_CLASSES; k++)
            cv[k] = (struct lt_res){0, 0, 0};
    } else {
        struct lt_lotes_tables *full = NULL;
        uint64_t on = (o.per_config * o.active + 50) / 100;
        if (o.active == 0 || on == 0) {
            lt_err_set(&err, LT_EINVAL, 0, 0, "--active %llu leaves no machine on",
                       (unsigned long long)o.active);
            goto usage;
        }
        if (on != o.per_config) { /* load 1 is still the whole cluster's lambda* */
            if ((full = paper_tables(o.per_config, &err)) == NULL)
                goto fail;
            lambda_ref = full->lambda_alloc;
            lt_lotes_tables_free(full);
        }
        if ((t = paper_tables(on, &err)) == NULL)
            goto fail;
        lt_lotes_table3_cv(cv);
    }
    if ((pts = lt_calloc(n_pols * n_loads, sizeof(*pts))) == NULL)
        goto oom;
    bar.on = !o.quiet && isatty(STDERR_FILENO);
    bar.n_runs = n_pols * n_loads * (size_t)o.seeds;
    bar.horizon = o.hours;
    for (size_t a = 0; a < n_pols; a++) {
        for (size_t l = 0; l < n_loads; l++) {
            struct point *pt = &pts[n_pts++];
            pt->policy = pols[a];
            pt->load = loads[l];
            if ((pt->s = lt_calloc((size_t)o.seeds, sizeof(*pt->s))) == NULL)
                goto oom;
            for (size_t i = 0; i < o.seeds; i++) {
                struct lt_lotes_sim_params p;
                lt_lotes_sim_params_default(&p, t);
                p.cv = cv;
                p.policy = pol_ids[a];
                p.load = loads[l];
                p.lambda_ref = lambda_ref;
                p.hours = o.hours;
                p.warmup = o.warmup;
                p.drain = o.drain;
                p.mapreduce = o.mapreduce;
                p.maps = (uint32_t)o.maps;
                p.reduces = (uint32_t)o.reduces;
                p.seed = o.seed + i;
                bar.policy = pols[a];
                bar.load = loads[l];
                if (bar.on) {
                    p.progress = bar_draw;
                    p.progress_arg = &bar;
                }
                if (lt_lotes_sim_run(&p, &pt->s[i], &err) < 0)
                    goto fail;
                bar.run++;
            }
            if (o.json) {
                json_t *j = point_json(&o, t, pt);
                if (j == NULL)
                    goto oom;
                json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10));
                putchar('\n');
                fflush(stdout);
                json_decref(j);
            }
        }
    }
    if (bar.on)
        fprintf(stderr, "\r%*s\r", 100, "");
    if (!o.json) {
        if (lambda_ref > 0.0)
            printf("%llu %% of the machines on: loads are relative to all machines' lambda* "
                   "%.1f\n",
                   (unsigned long long)o.active, lambda_ref);
        print_table(&o, t, pts, n_pts);
    }
    if (o.out != NULL && write_out(&o, t, pts, n_pts, &err) < 0)
        goto fail;
    status = SIM_EXIT_OK;
    goto done;
usage:
    sim_err_print(&err);
    return SIM_EXIT_USAGE;
oom:
    lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory");
fail:
    if (bar.on)
        fputc('\n', stderr);
    sim_err_print(&err);
done:
    for (size_t p = 0; p < n_pts; p++)
        lt_free(pts[p].s);
    lt_free(pts);
    lt_lotes_tables_free(t);
    return status;
}
