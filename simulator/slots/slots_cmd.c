/* slots_cmd.c -- `lotus-sim slots`: one run of the slot-based simulator (Cavdar ch. 6-9) on
 * a synthetic workload, printed as a table or as one JSON object (docs/cli.md, docs/slots.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_mem.h"
#include "cli/outfile.h"
#include "report/slots_report.h"
#include "slots/slots_trace.h"
#include "lt_slots.h"
#include "lt_slotsim.h"
#include "lt_workload.h"

struct slot_opts {
    const char *workload, *servers, *slots, *policy, *evict, *memory, *dpm, *out, *trace;
    const char *sticky_list; /* --sticky's value, a comma list (NULL: not given) */
    uint64_t hours, seed, sticky, sample_pct;
    bool sticky_set, resume, json, quiet;
};

/* Most runs of one sweep (policies x eviction policies x sticky pool sizes). */
#define MAX_RUNS 64

static void slots_usage(FILE *f)
{
    fprintf(f, "usage: lotus-sim slots --workload NAME | --trace DIR [options]\n"
               "\n"
               "Runs Cavdar's slot-based cluster simulator once and prints its metrics.\n"
               "\n"
               "  --workload NAME   w-d, w-e, w-d_l, w-e_l (synthetic, Table 9.4), or w-b, w-c,\n"
               "                    w-b_l, w-c_l (semi-synthetic: tasks drawn from --trace's)\n"
               "  --trace DIR       W-A: the tasks of a Google 2011 trace directory's\n"
               "                    task_events (requests stand in for usage; docs/slots.md);\n"
               "                    with w-b/w-c, the pool their tasks are drawn from\n"
               "  --sample PCT      with --trace: keep PCT %% of the tasks (seeded; default 100)\n"
               "  --hours N         arrival window of --workload, hours (default 15)\n"
               "  --servers MIX     table8.1 (68 A, 39 B, 10 C, 8 D; default) or table7.1\n"
               "  --slots CONF      wasc (default: Table 8.1's WASC column) or sc1..sc4\n"
               "  --policy LIST     priority (default), fcfs, wasp, hybrid\n"
               "  --evict LIST      mrs (default), lrs, rnd, with a drop threshold: mrs5 ...\n"
               "  --resume          evicted tasks keep their progress\n"
               "  --memory M        unlimited (default), lsf, lpf\n"
               "  --sticky LIST     HYBRID's sticky slots (default 200)\n"
               "  --dpm D           slp (default) or idl\n"
               "  --seed N          default 1\n"
               "  --json            one JSON object per run (a line each) instead of the table\n"
               "  --out DIR         also write DIR/summary.json, DIR/tasks.csv and\n"
               "                    DIR/report.html (a sweep: DIR/RUN/summary.json and\n"
               "                    tasks.csv per run; each file whole or not at all)\n"
               "  --quiet           no progress bar (it is drawn only on a terminal)\n"
               "\n"
               "A LIST is one value or several separated by commas: every combination of the\n"
               "policies, eviction policies and (for hybrid) sticky pool sizes is one run, on\n"
               "the same workload, and the runs are printed side by side.\n");
}

static int parse_opts(int argc, char **argv, struct slot_opts *o, struct lt_err *err)
{
    memset(o, 0, sizeof(*o));
    o->servers = "table8.1";
    o->slots = "wasc";
    o->policy = "priority";
    o->evict = "mrs";
    o->memory = "unlimited";
    o->dpm = "slp";
    o->hours = 15;
    o->seed = 1;
    o->sticky = 200;
    o->sample_pct = 100;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int rc;

        if (strcmp(argv[i], "--resume") == 0) {
            o->resume = true;
            continue;
        }
        if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
#define STR_OPT(flag, field)                                                                       \
    if ((rc = sim_opt_value(argc, argv, &i, flag, &v, err)) != 0) {                                \
        if (rc < 0)                                                                                \
            return rc;                                                                             \
        o->field = v;                                                                              \
        continue;                                                                                  \
    }
#define U64_OPT(flag, field)                                                                       \
    if ((rc = sim_opt_value(argc, argv, &i, flag, &v, err)) != 0) {                                \
        if (rc < 0 || (rc = sim_parse_u64(flag, v, &o->field, err)) < 0)                           \
            return rc;                                                                             \
        continue;                                                                                  \
    }
        STR_OPT("--workload", workload)
        STR_OPT("--servers", servers)
        STR_OPT("--slots", slots)
        STR_OPT("--policy", policy)
        STR_OPT("--evict", evict)
        STR_OPT("--memory", memory)
        STR_OPT("--dpm", dpm)
        STR_OPT("--out", out)
        STR_OPT("--trace", trace)
        U64_OPT("--hours", hours)
        U64_OPT("--seed", seed)
        U64_OPT("--sample", sample_pct)
        STR_OPT("--sticky", sticky_list)
#undef STR_OPT
#undef U64_OPT
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown option '%s' (lotus-sim slots --help)",
                          argv[i]);
    }
    if (o->sample_pct == 0 || o->sample_pct > 100 || (o->sample_pct != 100 && o->trace == NULL))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--sample %llu: a percentage 1..100, with --trace only",
                          (unsigned long long)o->sample_pct);
    if (o->workload == NULL && o->trace == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "give --workload NAME, --trace DIR (W-A), or both for w-b and w-c");
    if (o->hours == 0 || o->hours > 24 * 365)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--hours %llu is not in 1..8760",
                          (unsigned long long)o->hours);
    return 0;
}

/* The server mix and slot configuration named by the options. */
static int build_config(const struct slot_opts *o, struct lt_slot_config *cfg, struct lt_err *err)
{
    static const uint32_t t81[4] = {68, 39, 10, 8}, t71[4] = {69, 38, 10, 8};
    const uint32_t *cnt;
    struct lt_slot_group inv[4];

    if (strcmp(o->servers, "table8.1") == 0)
        cnt = t81;
    else if (strcmp(o->servers, "table7.1") == 0)
        cnt = t71;
    else
        return lt_err_set(err, LT_EINVAL, 0, 0, "--servers '%s' is not table8.1 or table7.1",
                          o->servers);
    for (size_t k = 0; k < 4; k++) {
        inv[k].type = lt_server_type_at(k);
        inv[k].count = cnt[k];
        inv[k].slots = 0;
    }
    if (strcmp(o->slots, "wasc") == 0)
        return lt_wasc_table_8_1(inv, 4, cfg, err);
    if (strlen(o->slots) == 3 && strncmp(o->slots, "sc", 2) == 0 && o->slots[2] >= '1' &&
        o->slots[2] <= '4')
        return lt_slot_config_sc(o->slots[2] - '0', inv, 4, cfg, err);
    return lt_err_set(err, LT_EINVAL, 0, 0, "--slots '%s' is not wasc or sc1..sc4", o->slots);
}

static int build_params(const struct slot_opts *o, const struct lt_slot_config *cfg,
                        struct lt_slot_params *p, struct lt_err *err)
{
    uint32_t sticky = o->sticky > UINT32_MAX ? UINT32_MAX : (uint32_t)o->sticky;
    int rc;

    lt_slot_params_default(p, cfg);
    p->seed = o->seed;
    p->resume = o->resume;
    p->horizon = (double)o->hours * 3600.0;
    if ((rc = lt_slot_policy_set(p, o->policy, sticky, err)) < 0 ||
        (rc = lt_slot_evict_set(p, o->evict, err)) < 0 ||
        (rc = lt_slot_memory_set(p, o->memory, err)) < 0)
        return rc;
    if (o->sticky_set && strcmp(o->policy, "hybrid") != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--sticky applies to --policy hybrid only");
    if (p->sticky > 0 && o->sticky > lt_slot_config_slots(cfg))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--sticky %llu: the cluster has %llu slots",
                          (unsigned long long)o->sticky,
                          (unsigned long long)lt_slot_config_slots(cfg));
    if (strcmp(o->dpm, "idl") == 0)
        p->sleep = false;
    else if (strcmp(o->dpm, "slp") != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--dpm '%s' is not slp or idl", o->dpm);
    return 0;
}

static void put_num(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

static json_t *summary_json(const struct slot_opts *o, size_t n, const struct lt_slot_summary *s,
                            double wall)
{
    json_t *j = json_object(), *cls = json_object();

    if (j == NULL || cls == NULL) {
        json_decref(j);
        json_decref(cls);
        return NULL;
    }
    json_object_set_new(j, "workload", json_string(o->workload != NULL ? o->workload : "w-a"));
    if (o->trace != NULL) {
        json_object_set_new(j, "trace", json_string(o->trace));
        json_object_set_new(j, "sample_pct", json_integer((json_int_t)o->sample_pct));
    }
    json_object_set_new(j, "hours", json_integer((json_int_t)o->hours));
    json_object_set_new(j, "servers", json_string(o->servers));
    json_object_set_new(j, "slots", json_string(o->slots));
    json_object_set_new(j, "policy", json_string(o->policy));
    if (strcmp(o->policy, "hybrid") == 0)
        json_object_set_new(j, "sticky", json_integer((json_int_t)o->sticky));
    json_object_set_new(j, "evict", json_string(o->evict));
    json_object_set_new(j, "resume", json_boolean(o->resume));
    json_object_set_new(j, "memory", json_string(o->memory));
    json_object_set_new(j, "dpm", json_string(o->dpm));
    json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(j, "tasks", json_integer((json_int_t)n));
    json_object_set_new(j, "completed", json_integer((json_int_t)s->completed));
    json_object_set_new(j, "dropped", json_integer((json_int_t)s->dropped));
    put_num(j, "r_mean_s", s->r_mean);
    put_num(j, "v", s->v);
    json_object_set_new(j, "ne", json_integer((json_int_t)s->ne));
    json_object_set_new(j, "ne_priority", json_integer((json_int_t)s->ne_priority));
    json_object_set_new(j, "net", json_integer((json_int_t)s->net));
    json_object_set_new(j, "net_priority", json_integer((json_int_t)s->net_priority));
    put_num(j, "e_mean", s->e_mean);
    json_object_set_new(j, "max_e", json_integer((json_int_t)s->max_e));
    put_num(j, "we_cpu_s", s->we);
    put_num(j, "energy_kwh", s->energy_j / 3.6e6);
    put_num(j, "end_s", s->end);
    json_object_set_new(j, "events", json_integer((json_int_t)s->events));
    put_num(j, "wall_s", wall);
    for (int c = 0; c < 12; c++) {
        char key[16];
        json_t *e;
        if (s->n_class[c] == 0)
            continue;
        snprintf(key, sizeof(key), "%d", c);
        e = json_object();
        json_object_set_new(e, "completed", json_integer((json_int_t)s->n_class[c]));
        put_num(e, "r_s", s->r_class[c]);
        put_num(e, "r_evicted_s", s->r_class_evicted[c]);
        put_num(e, "r_nonevicted_s", s->r_class_nonevicted[c]);
        json_object_set_new(cls, key, e);
    }
    json_object_set_new(j, "classes", cls);
    return j;
}

static void print_table(const struct slot_opts *o, size_t n, const struct lt_slot_summary *s,
                        double wall)
{
    printf("workload %s, %llu h, servers %s, slots %s, policy %s, evict %s%s, memory %s, dpm %s, "
           "seed %llu\n",
           o->workload != NULL ? o->workload : "w-a", (unsigned long long)o->hours, o->servers,
           o->slots, o->policy, o->evict, o->resume ? " (resume)" : "", o->memory, o->dpm,
           (unsigned long long)o->seed);
    printf("%-28s %14zu\n", "tasks", n);
    printf("%-28s %14llu\n", "completed", (unsigned long long)s->completed);
    printf("%-28s %14llu\n", "dropped", (unsigned long long)s->dropped);
    printf("%-28s %14.1f\n", "R mean [s]", s->r_mean);
    printf("%-28s %14.1f\n", "V (a = 3)", s->v);
    printf("%-28s %14llu\n", "NE (priority + memory)", (unsigned long long)s->ne);
    printf("%-28s %14llu\n", "NE priority", (unsigned long long)s->ne_priority);
    printf("%-28s %14llu\n", "NET", (unsigned long long)s->net);
    printf("%-28s %14.2f\n", "e mean (NE / NET)", s->e_mean);
    printf("%-28s %14u\n", "max(e)", s->max_e);
    printf("%-28s %14.1f\n", "WE [cpu-s]", s->we);
    printf("%-28s %14.1f\n", "E [kWh]", s->energy_j / 3.6e6);
    for (int c = 0; c < 12; c++) {
        char label[64];
        if (s->n_class[c] == 0)
            continue;
        snprintf(label, sizeof(label), "R(C_%d) [s] (%llu tasks)", c,
                 (unsigned long long)s->n_class[c]);
        printf("%-28s %14.1f\n", label, s->r_class[c]);
    }
    printf("%-28s %14.3f (%.0fx real time)\n", "wall [s]", wall, wall > 0 ? s->end / wall : 0.0);
}

/* DIR/summary.json (the --json object) and DIR/tasks.csv (one row per task, in generation
 * order). */
static int write_outputs(const char *dir, const json_t *summary, const struct lt_slot_task *t,
                         const struct lt_slot_outcome *o, size_t n, struct lt_err *err)
{
    char path[4200], *tmp = NULL;
    FILE *f;
    int rc;

    if ((rc = sim_make_dirs(dir, err)) < 0)
        return rc;
    if ((size_t)snprintf(path, sizeof(path), "%s/summary.json", dir) >= sizeof(path))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--out '%s' is too long", dir);
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL)
        return err->code;
    rc = json_dumpf(summary, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0 || fputc('\n', f) < 0
             ? lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s'", path)
             : 0;
    if ((rc = sim_tmp_commit(f, tmp, path, rc, err)) < 0)
        return rc;
    if ((size_t)snprintf(path, sizeof(path), "%s/tasks.csv", dir) >= sizeof(path))
        return lt_err_set(err, LT_EINVAL, 0, 0, "--out '%s' is too long", dir);
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL)
        return err->code;
    fprintf(f, "id,priority,arrival_s,demand_cpu_s,mem,finish_s,response_s,evictions,"
               "mem_evictions,dropped,wasted_cpu_s,server,sticky\n");
    for (size_t k = 0; k < n; k++) {
        const struct lt_slot_outcome *x = &o[k];
        bool done = !x->dropped && isfinite(x->finish);
        fprintf(f, "%lld,%d,%.6f,%.6g,%.6g,", (long long)t[k].id, t[k].prio, t[k].arrival,
                t[k].demand, t[k].mem);
        if (done)
            fprintf(f, "%.6f,%.6f,", x->finish, x->finish - t[k].arrival);
        else
            fputs(",,", f);
        fprintf(f, "%u,%u,%d,%.6g,", x->evictions, x->mem_evictions, x->dropped ? 1 : 0, x->wasted);
        if (x->server != UINT32_MAX)
            fprintf(f, "%u", x->server);
        fprintf(f, ",%d\n", x->sticky ? 1 : 0);
    }
    return sim_tmp_commit(f, tmp, path, 0, err);
}

/* ---- sweeps ---------------------------------------------------------------------------- */

struct run {
    struct slot_opts o; /* the options, with this run's policy, evict and sticky */
    char name[96];      /* policy[-evict][-sN]: a directory name under --out */
    struct lt_slot_params p;
    struct lt_slot_summary sum;
    struct lt_slot_outcome *out;
    json_t *j;
    double wall;
};

/* Splits a comma list (copied into buf) into items[]; LT_EINVAL naming flag for an empty
 * item, too many items or a list longer than buf. */
static int split_list(const char *flag, const char *list, char *buf, size_t cap, char **items,
                      size_t max, size_t *n, struct lt_err *err)
{
    char *p = buf;

    if (strlen(list) >= cap)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: the list is longer than %zu bytes", flag,
                          cap - 1);
    memcpy(buf, list, strlen(list) + 1);
    *n = 0;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (*p == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s '%s': an empty item", flag, list);
        if (*n == max)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s '%s': more than %zu items", flag, list,
                              max);
        items[(*n)++] = p;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* The runs of the sweep the options name (lists in bufs, which must outlive the runs),
 * each with its parameters checked. */
static int build_runs(const struct slot_opts *o, const struct lt_slot_config *cfg,
                      char bufs[3][1024], struct run *runs, size_t *n_runs, struct lt_err *err)
{
    char *pol[MAX_RUNS], *ev[MAX_RUNS], *st[MAX_RUNS];
    size_t np, ne, ns = 1;
    bool hybrid = false;
    int rc;

    *n_runs = 0;
    if ((rc = split_list("--policy", o->policy, bufs[0], sizeof(bufs[0]), pol, MAX_RUNS, &np,
                         err)) < 0 ||
        (rc = split_list("--evict", o->evict, bufs[1], sizeof(bufs[1]), ev, MAX_RUNS, &ne, err)) <
            0)
        return rc;
    if (o->sticky_list != NULL && (rc = split_list("--sticky", o->sticky_list, bufs[2],
                                                   sizeof(bufs[2]), st, MAX_RUNS, &ns, err)) < 0)
        return rc;
    for (size_t a = 0; a < np; a++)
        hybrid = hybrid || strcmp(pol[a], "hybrid") == 0;
    if (o->sticky_list != NULL && !hybrid)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--sticky applies to --policy hybrid only");
    for (size_t a = 0; a < np; a++) {
        bool hy = strcmp(pol[a], "hybrid") == 0;
        for (size_t b = 0; b < ne; b++) {
            for (size_t c = 0; c < (hy ? ns : 1); c++) {
                struct run *r = &runs[*n_runs];
                size_t len;

                if (*n_runs == MAX_RUNS)
                    return lt_err_set(err, LT_EINVAL, 0, 0, "more than %d runs in one sweep",
                                      MAX_RUNS);
                memset(r, 0, sizeof(*r));
                r->o = *o;
                r->o.policy = pol[a];
                r->o.evict = ev[b];
                r->o.sticky_set = hy && o->sticky_list != NULL;
                if (r->o.sticky_set &&
                    (rc = sim_parse_u64("--sticky", st[c], &r->o.sticky, err)) < 0)
                    return rc;
                len = (size_t)snprintf(r->name, sizeof(r->name), "%s", pol[a]);
                if (ne > 1 && len < sizeof(r->name))
                    len += (size_t)snprintf(r->name + len, sizeof(r->name) - len, "-%s", ev[b]);
                if (hy && ns > 1 && len < sizeof(r->name))
                    len += (size_t)snprintf(r->name + len, sizeof(r->name) - len, "-s%llu",
                                            (unsigned long long)r->o.sticky);
                if (len >= sizeof(r->name))
                    return lt_err_set(err, LT_EINVAL, 0, 0, "run name '%s...' is too long",
                                      r->name);
                if ((rc = build_params(&r->o, cfg, &r->p, err)) < 0)
                    return rc;
                for (size_t k = 0; k < *n_runs; k++) {
                    if (strcmp(runs[k].name, r->name) == 0)
                        return lt_err_set(err, LT_EINVAL, 0, 0, "run '%s' is named twice", r->name);
                }
                (*n_runs)++;
            }
        }
    }
    return 0;
}

/* The progress bar, on stderr. */
struct bar {
    bool on;
    size_t run, n_runs;
    const char *name;
    double horizon;
    struct timespec t0;
};

static double secs_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void bar_draw(void *arg, double now, uint64_t events)
{
    const struct bar *b = arg;
    double in_run = b->horizon > 0 ? now / b->horizon : 0.0, frac, t = secs_since(&b->t0);
    char cells[25], eta[32] = "--:--";
    int fill;

    in_run = in_run < 1.0 ? in_run : 1.0;
    frac = ((double)b->run + in_run) / (double)b->n_runs;
    fill = (int)(frac * 24 + 0.5);
    for (int k = 0; k < 24; k++)
        cells[k] = k < fill ? '#' : '.';
    cells[24] = '\0';
    if (frac > 0.01) {
        double left = t / frac - t;
        snprintf(eta, sizeof(eta), "%d:%02d", (int)(left / 60), (int)left % 60);
    }
    fprintf(stderr, "\r[%s] %3.0f%% run %zu/%zu %s | sim %.1f/%.1f h | %.2f M events | ETA %s   ",
            cells, frac * 100.0, b->run + 1, b->n_runs, b->name, now / 3600.0, b->horizon / 3600.0,
            (double)events / 1e6, eta);
    fflush(stderr);
}

/* The runs side by side: one row per figure, one column per run. */
static void print_side_by_side(const struct slot_opts *o, size_t n, const struct run *runs,
                               size_t n_runs)
{
    static const char *const label[] = {
        "completed",   "dropped", "R mean [s]",        "V (a = 3)", "NE (priority + memory)",
        "NE priority", "NET",     "e mean (NE / NET)", "max(e)",    "WE [cpu-s]",
        "E [kWh]",     "wall [s]"};
    printf("workload %s, %llu h, %zu tasks, servers %s, slots %s, memory %s, dpm %s, seed %llu%s\n",
           o->workload != NULL ? o->workload : "w-a", (unsigned long long)o->hours, n, o->servers,
           o->slots, o->memory, o->dpm, (unsigned long long)o->seed, o->resume ? ", resume" : "");
    printf("%-24s", "");
    for (size_t i = 0; i < n_runs; i++)
        printf(" %14s", runs[i].name);
    putchar('\n');
    for (size_t r = 0; r < sizeof(label) / sizeof(label[0]); r++) {
        printf("%-24s", label[r]);
        for (size_t i = 0; i < n_runs; i++) {
            const struct lt_slot_summary *s = &runs[i].sum;
            double v[] = {(double)s->completed,
                          (double)s->dropped,
                          s->r_mean,
                          s->v,
                          (double)s->ne,
                          (double)s->ne_priority,
                          (double)s->net,
                          s->e_mean,
                          (double)s->max_e,
                          s->we,
                          s->energy_j / 3.6e6,
                          runs[i].wall};
            printf(r == 7 || r == 11            ? " %14.2f"
                   : r == 2 || r == 3 || r >= 9 ? " %14.1f"
                                                : " %14.0f",
                   v[r]);
        }
        putchar('\n');
    }
    for (int c = 0; c < 12; c++) {
        bool any = false;
        for (size_t i = 0; i < n_runs; i++)
            any = any || runs[i].sum.n_class[c] > 0;
        if (!any)
            continue;
        printf("R(C_%-2d) [s]%13s", c, "");
        for (size_t i = 0; i < n_runs; i++)
            printf(" %14.1f", runs[i].sum.r_class[c]);
        putchar('\n');
    }
}

/* The command line, for the report's title. */
static char *command_line(int argc, char **argv)
{
    size_t len = strlen("lotus-sim") + 1;
    char *s;

    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    if ((s = lt_malloc(len)) == NULL)
        return NULL;
    strcpy(s, "lotus-sim");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* --out: the files of each run (DIR itself for one run, DIR/NAME for a sweep), then the
 * report. */
static int write_all(const struct slot_opts *o, struct run *runs, size_t n_runs,
                     const struct lt_slot_task *t, size_t n, int argc, char **argv,
                     struct lt_err *err)
{
    struct sim_slots_run rr[MAX_RUNS];
    char *title;
    bool plotted;
    int rc = 0;

    for (size_t i = 0; i < n_runs && rc == 0; i++) {
        char dir[4200];
        if (n_runs == 1)
            snprintf(dir, sizeof(dir), "%s", o->out);
        else if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", o->out, runs[i].name) >= sizeof(dir))
            return lt_err_set(err, LT_EINVAL, 0, 0, "--out '%s' is too long", o->out);
        rc = write_outputs(dir, runs[i].j, t, runs[i].out, n, err);
        rr[i] = (struct sim_slots_run){runs[i].name, runs[i].j, t, runs[i].out, n};
    }
    if (rc < 0)
        return rc;
    if ((title = command_line(argc, argv)) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the report");
    rc = sim_slots_report_write(o->out, rr, n_runs, title, &plotted, err);
    lt_free(title);
    if (rc == 0 && !plotted)
        fprintf(stderr, "lotus-sim: gnuplot is not on PATH: %s/report.html has no plots\n", o->out);
    return rc;
}

int sim_cmd_slots(int argc, char **argv)
{
    struct run *runs = lt_calloc(MAX_RUNS, sizeof(*runs));
    char bufs[3][1024];
    struct slot_opts o;
    struct lt_slot_config cfg;
    struct lt_slot_task *t = NULL;
    const struct lt_workload_spec *w = NULL;
    struct bar bar;
    struct lt_err err;
    size_t n = 0, n_runs = 0;
    int status = SIM_EXIT_INPUT;

    lt_err_init(&err, NULL);
    memset(&bar, 0, sizeof(bar));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            slots_usage(stdout);
            lt_free(runs);
            return SIM_EXIT_OK;
        }
    }
    if (runs == NULL) {
        lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory for the runs");
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    if (parse_opts(argc, argv, &o, &err) < 0 ||
        (o.workload != NULL && (w = lt_workload_find(o.workload, &err)) == NULL) ||
        build_config(&o, &cfg, &err) < 0 || build_runs(&o, &cfg, bufs, runs, &n_runs, &err) < 0) {
        sim_err_print(&err);
        lt_free(runs);
        return SIM_EXIT_USAGE;
    }
    if (w != NULL && w->pooled != (o.trace != NULL)) {
        if (w->pooled)
            lt_err_set(&err, LT_EINVAL, 0, 0,
                       "--workload %s draws its tasks from W-A's: give --trace DIR", w->name);
        else
            lt_err_set(&err, LT_EINVAL, 0, 0,
                       "--workload %s is synthetic: --trace goes alone (W-A) or with w-b/w-c",
                       w->name);
        sim_err_print(&err);
        lt_free(runs);
        return SIM_EXIT_USAGE;
    }
    if (o.trace != NULL) {
        struct sim_wa_stats st;
        struct lt_arrival_stats as;
        double *arr;

        if (sim_slot_tasks_from_trace(o.trace, 0, (double)o.sample_pct / 100.0, o.seed, &t, &n, &st,
                                      &err) < 0)
            goto fail;
        if (w == NULL) {
            o.hours = (uint64_t)((double)st.end_us / 3.6e9 + 0.5);
            for (size_t i = 0; i < n_runs; i++) {
                runs[i].p.horizon = (double)st.end_us / 1e6;
                runs[i].o.hours = o.hours;
            }
        }
        if ((arr = lt_calloc(n + 1, sizeof(*arr))) == NULL) {
            lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory for %zu arrivals", n);
            goto fail;
        }
        for (size_t k = 0; k < n; k++)
            arr[k] = t[k].arrival;
        lt_arrival_stats(arr, n, &as);
        lt_free(arr);
        fprintf(
            stderr,
            "lotus-sim: W-A%s from %s: %llu rows, %zu tasks seen, %zu kept (%zu submitted before "
            "the trace, %zu unfinished in the window, %zu without demand, %zu sampled out); "
            "window %.0f s; "
            "at most %zu arrivals in a minute, %zu in 10 minutes, longest gap %.0f s\n",
            w != NULL ? " (the pool)" : "", o.trace, (unsigned long long)st.rows, st.tasks_seen,
            st.kept, st.before, st.unfinished, st.no_demand, st.sampled_out,
            (double)st.end_us / 1e6, as.max_per_min, as.max_per_10min, as.max_gap);
    }
    if (w != NULL) {
        struct lt_slot_task *pool = t;
        size_t n_pool = n;

        t = NULL;
        n = 0;
        if (lt_workload_generate(w, (double)o.hours, o.seed, pool, n_pool, &t, &n, &err) < 0) {
            lt_free(pool);
            goto fail;
        }
        lt_free(pool);
    }
    bar.on = !o.quiet && isatty(STDERR_FILENO);
    bar.n_runs = n_runs;
    clock_gettime(CLOCK_MONOTONIC, &bar.t0);
    for (size_t i = 0; i < n_runs; i++) {
        struct run *r = &runs[i];
        struct timespec a;

        if ((r->out = lt_calloc(n + 1, sizeof(*r->out))) == NULL) {
            lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory for %zu task outcomes", n);
            goto fail;
        }
        bar.run = i;
        bar.name = r->name;
        bar.horizon = r->p.horizon;
        if (bar.on) {
            r->p.progress = bar_draw;
            r->p.progress_arg = &bar;
            bar_draw(&bar, 0.0, 0);
        }
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (lt_slot_run(&r->p, t, n, r->out, &r->sum, &err) < 0)
            goto fail;
        r->wall = secs_since(&a);
        if ((r->j = summary_json(&r->o, n, &r->sum, r->wall)) == NULL) {
            lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory for the summary");
            goto fail;
        }
        if (n_runs > 1)
            json_object_set_new(r->j, "run", json_string(r->name));
    }
    if (bar.on)
        fprintf(stderr, "\r%*s\r", 100, "");
    if (o.out != NULL && write_all(&o, runs, n_runs, t, n, argc, argv, &err) < 0)
        goto fail;
    for (size_t i = 0; i < n_runs && o.json; i++) {
        if (json_dumpf(runs[i].j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10)) < 0 ||
            putchar('\n') == EOF) {
            lt_err_set(&err, LT_EIO, 0, 0, "cannot write the summary to standard output");
            goto fail;
        }
    }
    if (!o.json && n_runs == 1)
        print_table(&runs[0].o, n, &runs[0].sum, runs[0].wall);
    else if (!o.json)
        print_side_by_side(&o, n, runs, n_runs);
    status = SIM_EXIT_OK;
    goto done;
fail:
    if (bar.on)
        fputc('\n', stderr);
    sim_err_print(&err);
done:
    for (size_t i = 0; i < n_runs; i++) {
        lt_free(runs[i].out);
        json_decref(runs[i].j);
        runs[i].out = NULL;
        runs[i].j = NULL;
    }
    lt_free(runs);
    lt_free(t);
    return status;
}
