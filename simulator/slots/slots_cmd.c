/* slots_cmd.c -- `lotus-sim slots`: one run of the slot-based simulator (Cavdar ch. 6-9) on
 * a synthetic workload, printed as a table or as one JSON object (docs/cli.md, docs/slots.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_mem.h"
#include "cli/opt.h"
#include "cli/outfile.h"
#include "report/slots_report.h"
#include "slots/slots_trace.h"
#include "lt_slots.h"
#include "lt_slotsim.h"
#include "lt_workload.h"

struct slot_opts {
    const char *workload, *servers, *slots, *policy, *evict, *memory, *dpm, *out, *trace;
    const char *order;       /* --order's value, a list (one name in a run's copy) */
    uint64_t reprioritise_s; /* --reprioritise */
    const char *sticky_list; /* --sticky's value, a comma list (NULL: not given) */
    const char *hours_s;     /* --hours's value, parsed into hours */
    uint64_t hours, seed, sticky, sample_pct;
    bool sticky_set, resume, json, quiet, force;
};

/* Most runs of one sweep (policies x eviction policies x sticky pool sizes x orders). */
#define MAX_RUNS 64

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct slot_opts, name, kind, field, arg, help, def)

static const struct sim_opt slots_opts[] = {
    OPT("--workload", SIM_OPT_STR, workload, "NAME",
        "w-d, w-e, w-d_l, w-e_l (synthetic, Table 9.4), or w-b, w-c,\n"
        "w-b_l, w-c_l (semi-synthetic: tasks drawn from --trace's)",
        NULL),
    OPT("--trace", SIM_OPT_STR, trace, "DIR",
        "W-A: the tasks of a Google 2011 trace directory's\n"
        "task_events (requests stand in for usage; docs/slots.md);\n"
        "with w-b/w-c, the pool their tasks are drawn from",
        NULL),
    OPT("--sample", SIM_OPT_U64, sample_pct, "PCT",
        "with --trace: keep PCT % of the tasks (seeded)", "100"),
    OPT("--hours", SIM_OPT_STR, hours_s, "DURATION",
        "arrival window of --workload: hours, or 90m, 2d\n(whole hours)", "15"),
    OPT("--servers", SIM_OPT_STR, servers, "MIX", "table8.1 (68 A, 39 B, 10 C, 8 D) or table7.1",
        "table8.1"),
    OPT("--slots", SIM_OPT_STR, slots, "CONF", "wasc (Table 8.1's WASC column) or sc1..sc4",
        "wasc"),
    OPT("--policy", SIM_OPT_STR, policy, "LIST", "priority, fcfs, wasp, hybrid", "priority"),
    OPT("--evict", SIM_OPT_STR, evict, "LIST", "mrs, lrs, rnd, with a drop threshold: mrs5 ...",
        "mrs"),
    OPT("--order", SIM_OPT_STR, order, "LIST",
        "queue order within a priority class (the whole\n"
        "order under fcfs): priority (first arrival), fcfs,\n"
        "sjf, ljf, largest, smallest, composite:A,B,G",
        "priority"),
    OPT("--reprioritise", SIM_OPT_SECS, reprioritise_s, "DURATION",
        "re-key time-varying composite orders at most this\noften", "0: every round"),
    OPT("--resume", SIM_OPT_FLAG, resume, NULL, "evicted tasks keep their progress", NULL),
    OPT("--memory", SIM_OPT_STR, memory, "M", "unlimited, lsf, lpf", "unlimited"),
    OPT("--sticky", SIM_OPT_STR, sticky_list, "LIST", "HYBRID's sticky slots", "200"),
    OPT("--dpm", SIM_OPT_STR, dpm, "D", "slp or idl", "slp"),
    OPT("--seed", SIM_OPT_U64, seed, "N", "seed of the workload and the policies", "1"),
    OPT("--json", SIM_OPT_FLAG, json, NULL,
        "one JSON object per run (a line each) instead of the table", NULL),
    OPT("--out", SIM_OPT_STR, out, "DIR",
        "also write DIR/summary.json, DIR/tasks.csv and\n"
        "DIR/report.html (a sweep: DIR/RUN/summary.json and\n"
        "tasks.csv per run; each file whole or not at all)",
        NULL),
    OPT("--force", SIM_OPT_FLAG, force, NULL, "replace the earlier results in --out", NULL),
    OPT("--quiet", SIM_OPT_FLAG, quiet, NULL, "no progress bar (it is drawn only on a terminal)",
        NULL),
};

static const struct sim_cmd_spec slots_spec = {
    "slots",
    "--workload NAME | --trace DIR [options]",
    "Runs Cavdar's slot-based cluster simulator once and prints its metrics.",
    "lotus-sim slots --workload w-d --hours 2 --policy priority,wasp --evict mrs,lrs",
    "A LIST is one value or several separated by commas: every combination of the\n"
    "policies, eviction policies, (for hybrid) sticky pool sizes and queue orders is\n"
    "one run, on the same workload, and the runs are printed side by side. An existing result in\n"
    "--out is refused without --force; SIGINT or SIGTERM removes the unfinished files\n"
    "and says which were kept.",
    slots_opts,
    sizeof(slots_opts) / sizeof(slots_opts[0])};

/* One --order name: false for priority (no queue order), else true and *q filled; an unknown
 * name is LT_EINVAL naming the flag and the known ones. */
static int order_find(const char *name, struct lt_qorder *q, bool *has, struct lt_err *err)
{
    struct lt_err e2;

    *has = strcmp(name, "priority") != 0;
    if (!*has)
        return 0;
    lt_err_init(&e2, NULL);
    if (lt_qorder_find(name, q, &e2) < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--order: %s%s", e2.text,
                          e2.code == LT_ENOTFOUND ? "; or priority" : "");
    if (lt_qorder_uses_sla(q))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--order %s: the slot simulator's tasks carry no SLA; the SLA orders "
                          "run in lotus-sim queue --sla",
                          name);
    return 0;
}

/* --order's names and --reprioritise: errors first, then the warnings (largest and smallest
 * order nothing here: every task takes one slot; --reprioritise without a time-varying
 * order). */
static int check_orders(const struct slot_opts *o, const bool *seen, struct lt_err *err)
{
    char buf[1024], *items[MAX_RUNS];
    size_t n;
    bool tv = false;
    int rc;

    if ((rc = sim_order_list_split("--order", o->order, buf, sizeof(buf), items, MAX_RUNS, &n,
                                   err)) < 0)
        return rc;
    if (o->reprioritise_s > 86400 * 365)
        return lt_err_set(err, LT_ERANGE, 0, 0, "--reprioritise: '%llu' is too large",
                          (unsigned long long)o->reprioritise_s);
    for (size_t k = 0; k < n; k++) {
        struct lt_qorder q;
        bool has;

        if ((rc = order_find(items[k], &q, &has, err)) < 0)
            return rc;
        tv = tv || (has && lt_qorder_time_varying(&q));
        if (has && (q.kind == LT_QORDER_LARGEST || q.kind == LT_QORDER_SMALLEST))
            fprintf(stderr,
                    "lotus-sim: warning: --order %s: every task takes one slot (size 1), so all "
                    "tie and the order is first arrival, as priority's\n",
                    items[k]);
    }
    if (!tv)
        sim_opt_warn_unused(&slots_spec, seen, "--reprioritise",
                            "to these orders (only a composite with BETA != 0 is re-keyed)");
    return 0;
}

static int parse_opts(int argc, char **argv, struct slot_opts *o, struct lt_err *err)
{
    bool seen[sizeof(slots_opts) / sizeof(slots_opts[0])];
    uint64_t secs = 15 * 3600;
    int rc;

    memset(o, 0, sizeof(*o));
    o->servers = "table8.1";
    o->slots = "wasc";
    o->policy = "priority";
    o->order = "priority";
    o->evict = "mrs";
    o->memory = "unlimited";
    o->dpm = "slp";
    o->seed = 1;
    o->sticky = 200;
    o->sample_pct = 100;
    if ((rc = sim_opt_parse(&slots_spec, argc, argv, o, seen, err)) != 0 ||
        (rc = check_orders(o, seen, err)) < 0)
        return rc;
    if (o->hours_s != NULL && (rc = sim_parse_secs("--hours", o->hours_s, 3600, &secs, err)) < 0)
        return rc;
    if (secs % 3600 != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--hours: '%s' is not a whole number of hours",
                          o->hours_s);
    o->hours = secs / 3600;
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
    if (o->workload == NULL)
        sim_opt_warn_unused(&slots_spec, seen, "--hours",
                            "to --trace without --workload (W-A spans the trace's window)");
    if (o->out == NULL)
        sim_opt_warn_unused(&slots_spec, seen, "--force", "without --out");
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
    if (strcmp(o->order, "priority") != 0) { /* absent: the default */
        json_object_set_new(j, "order", json_string(o->order));
        if (o->reprioritise_s != 0)
            json_object_set_new(j, "reprioritise_s", json_integer((json_int_t)o->reprioritise_s));
    }
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
    bool ord = strcmp(o->order, "priority") != 0;

    printf("workload %s, %llu h, servers %s, slots %s, policy %s%s%s, evict %s%s, memory %s, "
           "dpm %s, seed %llu\n",
           o->workload != NULL ? o->workload : "w-a", (unsigned long long)o->hours, o->servers,
           o->slots, o->policy, ord ? ", order " : "", ord ? o->order : "", o->evict,
           o->resume ? " (resume)" : "", o->memory, o->dpm, (unsigned long long)o->seed);
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
    struct slot_opts o;  /* the options, with this run's policy, evict, sticky and order */
    char name[96];       /* policy[-evict][-sN][-order]: a directory name under --out */
    struct lt_qorder qo; /* its queue order (p.qorder points here when it has one) */
    struct lt_slot_params p;
    struct lt_slot_summary sum;
    struct lt_slot_outcome *out;
    json_t *j;
    double wall;
};

/* The lists of a sweep, split (pointers into the caller's buffers). */
struct sweep {
    char *pol[MAX_RUNS], *ev[MAX_RUNS], *st[MAX_RUNS], *ord[MAX_RUNS];
    size_t np, ne, ns, no;
};

/* Appends "-" and s to r->name, with [^A-Za-z0-9._-] as _ (a composite's ':' and ','). */
static void name_add(struct run *r, size_t *len, const char *s)
{
    if (*len < sizeof(r->name))
        *len += (size_t)snprintf(r->name + *len, sizeof(r->name) - *len, "-");
    for (; *s != '\0' && *len < sizeof(r->name); s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        r->name[(*len)++] = ok ? c : '_';
    }
    if (*len < sizeof(r->name))
        r->name[*len] = '\0';
}

/* Run runs[*n_runs]: policy a, eviction policy b, sticky pool c (hybrid), order d, named
 * POLICY, then -EVICT, -sN, -ORDER when those vary or (the order) are not the default. */
static int add_run(const struct slot_opts *o, const struct lt_slot_config *cfg,
                   const struct sweep *w, size_t a, size_t b, size_t c, size_t d, struct run *runs,
                   size_t *n_runs, struct lt_err *err)
{
    struct run *r = &runs[*n_runs];
    bool hy = strcmp(w->pol[a], "hybrid") == 0, has;
    size_t len;
    int rc;

    if (*n_runs == MAX_RUNS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "more than %d runs in one sweep", MAX_RUNS);
    memset(r, 0, sizeof(*r));
    r->o = *o;
    r->o.policy = w->pol[a];
    r->o.evict = w->ev[b];
    r->o.order = w->ord[d];
    r->o.sticky_set = hy && o->sticky_list != NULL;
    if (r->o.sticky_set && (rc = sim_parse_u64("--sticky", w->st[c], &r->o.sticky, err)) < 0)
        return rc;
    len = (size_t)snprintf(r->name, sizeof(r->name), "%s", w->pol[a]);
    if (w->ne > 1)
        name_add(r, &len, w->ev[b]);
    if (hy && w->ns > 1 && len < sizeof(r->name))
        len += (size_t)snprintf(r->name + len, sizeof(r->name) - len, "-s%llu",
                                (unsigned long long)r->o.sticky);
    if (strcmp(w->ord[d], "priority") != 0)
        name_add(r, &len, w->ord[d]);
    if (len >= sizeof(r->name))
        return lt_err_set(err, LT_EINVAL, 0, 0, "run name '%s...' is too long", r->name);
    if ((rc = build_params(&r->o, cfg, &r->p, err)) < 0 ||
        (rc = order_find(w->ord[d], &r->qo, &has, err)) < 0)
        return rc;
    r->p.qorder = has ? &r->qo : NULL;
    r->p.reprioritise_s = (double)o->reprioritise_s;
    for (size_t k = 0; k < *n_runs; k++) {
        if (strcmp(runs[k].name, r->name) == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "run '%s' is named twice", r->name);
    }
    (*n_runs)++;
    return 0;
}

/* The runs of the sweep the options name (lists in bufs, which must outlive the runs),
 * each with its parameters checked. */
static int build_runs(const struct slot_opts *o, const struct lt_slot_config *cfg,
                      char bufs[4][1024], struct run *runs, size_t *n_runs, struct lt_err *err)
{
    struct sweep w;
    bool hybrid = false;
    int rc;

    *n_runs = 0;
    w.ns = 1;
    if ((rc = sim_list_split("--policy", o->policy, bufs[0], sizeof(bufs[0]), w.pol, MAX_RUNS,
                             &w.np, err)) < 0 ||
        (rc = sim_list_split("--evict", o->evict, bufs[1], sizeof(bufs[1]), w.ev, MAX_RUNS, &w.ne,
                             err)) < 0 ||
        (rc = sim_order_list_split("--order", o->order, bufs[3], sizeof(bufs[3]), w.ord, MAX_RUNS,
                                   &w.no, err)) < 0)
        return rc;
    if (o->sticky_list != NULL &&
        (rc = sim_list_split("--sticky", o->sticky_list, bufs[2], sizeof(bufs[2]), w.st, MAX_RUNS,
                             &w.ns, err)) < 0)
        return rc;
    for (size_t a = 0; a < w.np; a++)
        hybrid = hybrid || strcmp(w.pol[a], "hybrid") == 0;
    if (o->sticky_list != NULL && !hybrid)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--sticky applies to --policy hybrid only");
    for (size_t a = 0; a < w.np; a++) {
        bool hy = strcmp(w.pol[a], "hybrid") == 0;
        for (size_t b = 0; b < w.ne; b++)
            for (size_t c = 0; c < (hy ? w.ns : 1); c++)
                for (size_t d = 0; d < w.no; d++)
                    if ((rc = add_run(o, cfg, &w, a, b, c, d, runs, n_runs, err)) < 0)
                        return rc;
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
    char cells[SIM_BAR_WIDTH + 1], eta[32] = "--:--";

    in_run = in_run < 1.0 ? in_run : 1.0;
    frac = ((double)b->run + in_run) / (double)b->n_runs;
    sim_bar_cells(frac, cells);
    if (frac > 0.01) {
        double left = t / frac - t;
        snprintf(eta, sizeof(eta), "%d:%02d", (int)(left / 60), (int)left % 60);
    }
    fprintf(stderr, "\r[%s] %3.0f%% run %zu/%zu %s | sim %.1f/%.1f h | %.2f M events | ETA %s   ",
            cells, frac * 100.0, b->run + 1, b->n_runs, b->name, now / 3600.0, b->horizon / 3600.0,
            (double)events / 1e6, eta);
    fflush(stderr);
}

/* A run's column width in the side-by-side table: 14, or its name's length. */
static int col_w(const struct run *r)
{
    size_t len = strlen(r->name);

    return len > 14 ? (int)len : 14;
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
        printf(" %*s", col_w(&runs[i]), runs[i].name);
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
            printf(" %*.*f", col_w(&runs[i]),
                   r == 7 || r == 11            ? 2
                   : r == 2 || r == 3 || r >= 9 ? 1
                                                : 0,
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
            printf(" %*.1f", col_w(&runs[i]), runs[i].sum.r_class[c]);
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

/* The paths --out will hold: DIR/{summary.json,tasks.csv} for one run, DIR/NAME per run of
 * a sweep, and DIR/report.html. An existing one is refused without --force. */
static int out_check(const struct slot_opts *o, const struct run *runs, size_t n_runs,
                     struct lt_err *err)
{
    static char paths[MAX_RUNS + 2][4200]; /* front-end scratch, too big for the stack */
    const char *list[MAX_RUNS + 2];
    size_t n = 0;

    if (n_runs == 1) {
        snprintf(paths[n++], sizeof(paths[0]), "%s/summary.json", o->out);
        snprintf(paths[n++], sizeof(paths[0]), "%s/tasks.csv", o->out);
    } else {
        for (size_t i = 0; i < n_runs; i++)
            snprintf(paths[n++], sizeof(paths[0]), "%s/%s", o->out, runs[i].name);
    }
    snprintf(paths[n++], sizeof(paths[0]), "%s/report.html", o->out);
    for (size_t k = 0; k < n; k++)
        list[k] = paths[k];
    return sim_out_refuse_existing(list, n, o->force, err);
}

/* --out: the files of each run (DIR itself for one run, DIR/NAME for a sweep, written as
 * DIR/NAME.tmp and swapped in whole), then the report. */
static int write_all(const struct slot_opts *o, struct run *runs, size_t n_runs,
                     const struct lt_slot_task *t, size_t n, int argc, char **argv,
                     struct lt_err *err)
{
    struct sim_slots_run rr[MAX_RUNS];
    char *title;
    bool plotted;
    int rc = 0;

    for (size_t i = 0; i < n_runs && rc == 0; i++) {
        char dir[4200], stage[4300];
        if (n_runs == 1) {
            rc = write_outputs(o->out, runs[i].j, t, runs[i].out, n, err);
        } else if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", o->out, runs[i].name) >=
                   sizeof(dir)) {
            return lt_err_set(err, LT_EINVAL, 0, 0, "--out '%s' is too long", o->out);
        } else if ((rc = sim_stage_open(dir, stage, sizeof(stage), err)) == 0) {
            sim_out_track(stage);
            rc = write_outputs(stage, runs[i].j, t, runs[i].out, n, err);
            rc = rc < 0 ? rc : sim_stage_commit(stage, dir, err);
            if (rc < 0)
                (void)sim_remove_tree(stage, NULL);
            sim_out_forget(stage);
        }
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

/* Options, configuration, runs and the workload's compatibility with --trace. Returns 0, 1
 * after --help, or a negative LT_E* with err set (a usage error). */
static int slots_setup(int argc, char **argv, struct slot_opts *o, struct lt_slot_config *cfg,
                       char bufs[4][1024], struct run *runs, size_t *n_runs,
                       const struct lt_workload_spec **w, struct lt_err *err)
{
    int rc;

    if ((rc = parse_opts(argc, argv, o, err)) != 0)
        return rc;
    if ((o->workload != NULL && (*w = lt_workload_find(o->workload, err)) == NULL) ||
        build_config(o, cfg, err) < 0 || build_runs(o, cfg, bufs, runs, n_runs, err) < 0)
        return err->code;
    if (*w != NULL && (*w)->pooled != (o->trace != NULL)) {
        if ((*w)->pooled)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--workload %s draws its tasks from W-A's: give --trace DIR",
                              (*w)->name);
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--workload %s is synthetic: --trace goes alone (W-A) or with w-b/w-c",
                          (*w)->name);
    }
    return 0;
}

/* W-A's tasks from --trace (and its statistics on stderr); for W-A alone, the horizon is the
 * trace's window. */
static int load_trace_tasks(struct slot_opts *o, const struct lt_workload_spec *w, struct run *runs,
                            size_t n_runs, struct lt_slot_task **t, size_t *n, struct lt_err *err)
{
    struct sim_wa_stats st;
    struct lt_arrival_stats as;
    double *arr;

    if (sim_slot_tasks_from_trace(o->trace, 0, (double)o->sample_pct / 100.0, o->seed, t, n, &st,
                                  err) < 0)
        return err->code;
    if (w == NULL) {
        o->hours = (uint64_t)((double)st.end_us / 3.6e9 + 0.5);
        for (size_t i = 0; i < n_runs; i++) {
            runs[i].p.horizon = (double)st.end_us / 1e6;
            runs[i].o.hours = o->hours;
        }
    }
    if ((arr = lt_calloc(*n + 1, sizeof(*arr))) == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu arrivals", *n);
    for (size_t k = 0; k < *n; k++)
        arr[k] = (*t)[k].arrival;
    lt_arrival_stats(arr, *n, &as);
    lt_free(arr);
    fprintf(stderr,
            "lotus-sim: W-A%s from %s: %llu rows, %zu tasks seen, %zu kept (%zu submitted before "
            "the trace, %zu unfinished in the window, %zu without demand, %zu sampled out); "
            "window %.0f s; "
            "at most %zu arrivals in a minute, %zu in 10 minutes, longest gap %.0f s\n",
            w != NULL ? " (the pool)" : "", o->trace, (unsigned long long)st.rows, st.tasks_seen,
            st.kept, st.before, st.unfinished, st.no_demand, st.sampled_out,
            (double)st.end_us / 1e6, as.max_per_min, as.max_per_10min, as.max_gap);
    return 0;
}

/* The tasks: from the trace, a synthetic workload, or a workload drawn from the trace's. */
static int load_tasks(struct slot_opts *o, const struct lt_workload_spec *w, struct run *runs,
                      size_t n_runs, struct lt_slot_task **t, size_t *n, struct lt_err *err)
{
    struct lt_slot_task *pool;
    size_t n_pool;
    int rc;

    if (o->trace != NULL && (rc = load_trace_tasks(o, w, runs, n_runs, t, n, err)) < 0)
        return rc;
    if (w == NULL)
        return 0;
    pool = *t;
    n_pool = *n;
    *t = NULL;
    *n = 0;
    rc = lt_workload_generate(w, (double)o->hours, o->seed, pool, n_pool, t, n, err);
    lt_free(pool);
    return rc;
}

/* Every run of the sweep on the same tasks, with the progress bar. */
static int run_sims(const struct slot_opts *o, struct run *runs, size_t n_runs,
                    const struct lt_slot_task *t, size_t n, struct bar *bar, struct lt_err *err)
{
    bar->on = !o->quiet && isatty(STDERR_FILENO);
    bar->n_runs = n_runs;
    clock_gettime(CLOCK_MONOTONIC, &bar->t0);
    for (size_t i = 0; i < n_runs; i++) {
        struct run *r = &runs[i];
        struct timespec a;

        if ((r->out = lt_calloc(n + 1, sizeof(*r->out))) == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu task outcomes", n);
        bar->run = i;
        bar->name = r->name;
        bar->horizon = r->p.horizon;
        if (bar->on) {
            r->p.progress = bar_draw;
            r->p.progress_arg = bar;
            bar_draw(bar, 0.0, 0);
        }
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (lt_slot_run(&r->p, t, n, r->out, &r->sum, err) < 0)
            return err->code;
        r->wall = secs_since(&a);
        if ((r->j = summary_json(&r->o, n, &r->sum, r->wall)) == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the summary");
        if (n_runs > 1)
            json_object_set_new(r->j, "run", json_string(r->name));
    }
    if (bar->on)
        fprintf(stderr, "\r%*s\r", 100, "");
    return 0;
}

/* The JSON lines, the table or the side-by-side table. */
static int print_results(const struct slot_opts *o, const struct run *runs, size_t n_runs, size_t n,
                         struct lt_err *err)
{
    for (size_t i = 0; i < n_runs && o->json; i++) {
        if (json_dumpf(runs[i].j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10)) < 0 ||
            putchar('\n') == EOF)
            return lt_err_set(err, LT_EIO, 0, 0, "cannot write the summary to standard output");
    }
    if (!o->json && n_runs == 1)
        print_table(&runs[0].o, n, &runs[0].sum, runs[0].wall);
    else if (!o->json)
        print_side_by_side(o, n, runs, n_runs);
    return 0;
}

int sim_cmd_slots(int argc, char **argv)
{
    struct run *runs = lt_calloc(MAX_RUNS, sizeof(*runs));
    char bufs[4][1024];
    struct slot_opts o;
    struct lt_slot_config cfg;
    struct lt_slot_task *t = NULL;
    const struct lt_workload_spec *w = NULL;
    struct bar bar;
    struct lt_err err;
    size_t n = 0, n_runs = 0;
    int status = SIM_EXIT_INPUT, rc;

    lt_err_init(&err, NULL);
    memset(&bar, 0, sizeof(bar));
    if (runs == NULL) {
        lt_err_set(&err, LT_ENOMEM, 0, 0, "out of memory for the runs");
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    if ((rc = slots_setup(argc, argv, &o, &cfg, bufs, runs, &n_runs, &w, &err)) != 0) {
        lt_free(runs);
        return rc == 1 ? SIM_EXIT_OK : sim_usage_error("slots", &err);
    }
    if (o.out != NULL && out_check(&o, runs, n_runs, &err) < 0) {
        sim_err_print(&err);
        lt_free(runs);
        return SIM_EXIT_INPUT;
    }
    sim_out_signals(SIM_SIG_CLEANUP);
    if (load_tasks(&o, w, runs, n_runs, &t, &n, &err) < 0 ||
        run_sims(&o, runs, n_runs, t, n, &bar, &err) < 0 ||
        (o.out != NULL && write_all(&o, runs, n_runs, t, n, argc, argv, &err) < 0) ||
        print_results(&o, runs, n_runs, n, &err) < 0) {
        if (bar.on)
            fputc('\n', stderr);
        sim_err_print(&err);
    } else {
        status = SIM_EXIT_OK;
    }
    for (size_t i = 0; i < n_runs; i++) {
        lt_free(runs[i].out);
        json_decref(runs[i].j);
    }
    lt_free(runs);
    lt_free(t);
    return status;
}
