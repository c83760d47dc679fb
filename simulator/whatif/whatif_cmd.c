/* whatif_cmd.c -- `lotus-sim whatif`: when would this job start on the Google 2011 cell? One
 * job (--job FILE) injected into the trace replay at --at, --replicas times with Betser's
 * sources of variance (docs/whatif.md), the start delay's distribution per --shrink level.
 *
 * Writes DIR/replicas.csv, DIR/cdf_start.csv, DIR/cdf_reward.csv (with --sla),
 * DIR/summary.json and DIR/report.html (whole or not at all: a staging directory swapped in at
 * the end; --force replaces an earlier whatif result only) and prints a short table. The SLA
 * rewards (reward.h) are a loop over the records: every --sla setting on the same replicas.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opt.h"
#include "cli/outfile.h"
#include "cli/policies.h"
#include "lt_mem.h"
#include "lt_queue.h"
#include "sim.h"
#include "report/whatif_report.h"
#include "whatif/reward.h"
#include "whatif/whatif.h"

#define DEFAULT_OUT "out/whatif"
#define PATH_CAP_W  4096

struct w_opts {
    const char *trace, *job, *at, *start, *shrink, *policy, *preempt, *out, *order, *sla_scope;
    const char *annotate; /* --sla-annotate FILE */
    struct sim_args sla;  /* --sla, repeatable */
    uint64_t replicas, seed, horizon_s, jobs, cache_mb, reprioritise_s;
    bool shrink_from_start, resample, no_arrivals, no_snapshot, force, quiet, until_complete;
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct w_opts, name, kind, field, arg, help, def)

static const struct sim_opt w_rows[] = {
    OPT("--trace", SIM_OPT_STR, trace, "DIR", "the trace directory (required)", NULL),
    OPT("--job", SIM_OPT_STR, job, "FILE", "the job to inject, JSON (required; docs/whatif.md)",
        NULL),
    OPT("--at", SIM_OPT_STR, at, "WHEN",
        "when it is submitted (required): S (trace seconds\nor 2h ...); random[:A:B] (Method I, "
        "uniform in\n[A, B], default the window); day-random[:S]\n(Method II: a random whole day "
        "+ time of day S)",
        NULL),
    OPT("--replicas", SIM_OPT_U64, replicas, "N", "replicas, 1..100000", "100"),
    OPT("--seed", SIM_OPT_U64, seed, "N", "the controller seed: one seed per replica", "1"),
    OPT("--horizon", SIM_OPT_SECS, horizon_s, "DURATION",
        "not started this long after submission: censored", "86400"),
    OPT("--start", SIM_OPT_STR, start, "first|all",
        "started = its first task started (the trace's\nSCHEDULE) or all of them (gang)", "first"),
    OPT("--shrink", SIM_OPT_STR, shrink, "PCT[,PCT...]",
        "keep a random PCT % of the machines per replica\n(taken out at the injection); several "
        "levels\nrun side by side on the same replica seeds",
        "100"),
    OPT("--shrink-from-start", SIM_OPT_FLAG, shrink_from_start, NULL,
        "shrink from trace time 0 as Betser did: the\nprefix is replayed per replica (slower)",
        NULL),
    OPT("--resample-running", SIM_OPT_FLAG, resample, NULL,
        "Method III: new remaining lives for the tasks\nrunning at the injection", NULL),
    OPT("--no-arrivals", SIM_OPT_FLAG, no_arrivals, NULL,
        "drop every trace arrival after the injection\n(Betser's exact Method III)", NULL),
    OPT("--until-complete", SIM_OPT_FLAG, until_complete, NULL,
        "replay on until every task of the job has\nfinished: its completion delay too", NULL),
    OPT("--sla", SIM_OPT_MULTI, sla, "[NAME=]SPEC|@FILE",
        "an SLA setting to price (repeatable): KIND[:K=V,...]\nas lotus-sim queue --sla, or @FILE: "
        "an SLA file's\nsettings (docs/formats.md); Nx = N "
        "times the job's\nlongest task; every setting on the same replicas",
        NULL),
    OPT("--order", SIM_OPT_STR, order, "NAME",
        "priority (the replay's queue), or sla-reward,\nsla-deadline, sla-slope[:H]: the job, "
        "the only\none with an SLA, ranks first (--sla-scope)",
        "priority"),
    OPT("--sla-scope", SIM_OPT_STR, sla_scope, "within-priority|sla-first",
        "with an SLA order: first within its priority, or\nfirst of all", "within-priority"),
    OPT("--sla-annotate", SIM_OPT_STR, annotate, "FILE",
        "SLAs for the trace's tasks (as replay's); with an\nSLA order the job competes with "
        "them, and each\n--sla setting is its own set of replicas",
        NULL),
    OPT("--reprioritise", SIM_OPT_SECS, reprioritise_s, "DURATION",
        "with --sla-annotate: re-key the ordered queue at\nmost this often", "0: every dispatch"),
    OPT("--policy", SIM_OPT_STR, policy, "NAME", "placement policy", "bestfit1"),
    OPT("--preempt", SIM_OPT_STR, preempt, "none|bands|priority|prod",
        "priority preemption, as in replay", "none"),
    OPT("-j", SIM_OPT_U64, jobs, "N", "processes at once, 1..256", "2"),
    OPT("--no-snapshot", SIM_OPT_FLAG, no_snapshot, NULL,
        "replay the prefix per replica instead of forking\nfrom one snapshot (same results; "
        "slower)",
        NULL),
    OPT("--cache-mb", SIM_OPT_U64, cache_mb, "N",
        "memory for the trace rows kept between the passes;\nthe window must fit", "1024"),
    OPT("--out", SIM_OPT_STR, out, "DIR", "result directory", DEFAULT_OUT),
    OPT("--force", SIM_OPT_FLAG, force, NULL, "replace an earlier whatif result in --out", NULL),
    OPT("--quiet", SIM_OPT_FLAG, quiet, NULL, "print nothing but errors and warnings", NULL),
};

static const struct sim_cmd_spec w_spec = {
    "whatif",
    "--trace DIR --job FILE --at S|random[:A:B]|day-random[:S]\n"
    "       [--replicas N] [--seed N] [--horizon DURATION] [--start first|all]\n"
    "       [--shrink PCT[,PCT...]] [--shrink-from-start] [--resample-running]\n"
    "       [--no-arrivals] [--until-complete] [--sla [NAME=]SPEC|@FILE]...\n"
    "       [--order priority|sla-reward|sla-deadline|sla-slope[:H]]\n"
    "       [--sla-scope within-priority|sla-first] [--sla-annotate FILE]\n"
    "       [--reprioritise DURATION] [--policy NAME] [--preempt MODE]\n"
    "       [-j N] [--out DIR] [--force]",
    "When would this job start? Injects one job into the replay of the Google 2011\n"
    "trace at --at and replays until it starts, --replicas times, each replica with\n"
    "its own seed (from --seed) for Betser's sources of variance: a random instant\n"
    "(I), a random day (II), new remaining lives of the running tasks (III), a random\n"
    "subset of the machines (--shrink). The prefix before the injection is replayed\n"
    "once and forked per replica. A replica not started by --horizon, or by the end\n"
    "of the trace, is censored and stays in the denominator. Each --sla setting is\n"
    "priced on the same replicas. Writes DIR/replicas.csv, DIR/cdf_start.csv,\n"
    "DIR/cdf_reward.csv, DIR/summary.json and DIR/report.html (docs/whatif.md).",
    "lotus-sim whatif --trace ../shared/data/clusterdata-2011-2 --job tests/data/whatif/bob.json "
    "--at random "
    "--shrink 100,90 --sla bob=by-deadline:pen=-1,d1=1h,d2=2h --sla "
    "bob3=by-deadline:pen=-3,d1=1h,d2=2h",
    NULL,
    w_rows,
    sizeof(w_rows) / sizeof(w_rows[0]),
};

/* The run's parsed pieces. */
struct w_run {
    struct w_opts *o;
    struct sim_whatif_job job;
    struct sim_replay_config rc;
    struct sim_whatif_config wc;
    struct sim_whatif_info info;
    struct sim_whatif_rec *recs;
    struct sim_whatif_sla slas[SIM_WHATIF_MAX_SLAS];
    size_t n_sla;
    bool sla_order; /* --order is an SLA order */
    bool per_sla;   /* an SLA order over annotated trace tasks: every --sla setting is
                     * its own set of replicas (recs holds n_sla sets) */
    struct sim_annot annot;
    struct lt_qorder order;
    char *cmdline;        /* the whole command, owned */
    char order_note[400]; /* "" none */
};

static int parse_shrink(const char *s, struct sim_whatif_config *wc, struct lt_err *err)
{
    char buf[512], *items[SIM_WHATIF_MAX_LEVELS];
    size_t n;
    int rc = sim_list_split("--shrink", s, buf, sizeof(buf), items, SIM_WHATIF_MAX_LEVELS, &n, err);
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        char *end;
        double v = strtod(items[k], &end);
        if (end == items[k] || *end != '\0' || !(v > 0.0) || v > 100.0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--shrink: '%.40s' is not a percentage of machines kept in (0, 100]",
                              items[k]);
        wc->shrink[k] = v;
    }
    wc->n_shrink = n;
    return 0;
}

/* The command line, checked (usage errors). */
static int opts_check(struct w_run *r, struct lt_err *err)
{
    struct w_opts *o = r->o;
    int rc;
    if (!o->trace || !o->job || !o->at)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s is required",
                          !o->trace ? "--trace"
                          : !o->job ? "--job"
                                    : "--at");
    if (o->replicas == 0 || o->replicas > 100000)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--replicas: %" PRIu64 " is not in 1..100000",
                          o->replicas);
    if (o->jobs == 0 || o->jobs > 256)
        return lt_err_set(err, LT_EINVAL, 0, 0, "-j: %" PRIu64 " is not in 1..256", o->jobs);
    if (o->horizon_s == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--horizon: must be > 0");
    if (strcmp(o->start, "first") != 0 && strcmp(o->start, "all") != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--start: '%.40s' is not first or all", o->start);
    if (o->no_arrivals && !o->resample)
        fprintf(stderr, "lotus-sim: warning: --no-arrivals without --resample-running: only the "
                        "tasks already there compete, with their trace lives\n");
    if ((rc = sim_at_parse("--at", o->at, &r->wc.at, err)) < 0 ||
        (rc = parse_shrink(o->shrink, &r->wc, err)) < 0 ||
        (rc = sim_policy_find(o->policy, false, &r->rc.policy, err)) < 0)
        return rc;
    if ((rc = sim_preempt_parse("--preempt", o->preempt, &r->rc.preempt, err)) < 0)
        return rc;
    if (o->shrink_from_start && r->wc.n_shrink == 1 && r->wc.shrink[0] >= 100.0)
        fprintf(stderr, "lotus-sim: warning: --shrink-from-start without --shrink below 100\n");
    return 0;
}

/* Appends s to r's settings: at most SIM_WHATIF_MAX_SLAS, names unique. */
static int sla_add(struct w_run *r, const struct sim_whatif_sla *s, struct lt_err *err)
{
    if (r->n_sla == SIM_WHATIF_MAX_SLAS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "--sla: at most %d settings", SIM_WHATIF_MAX_SLAS);
    for (size_t i = 0; i < r->n_sla; i++)
        if (strcmp(r->slas[i].name, s->name) == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "--sla: the name '%s' is given twice", s->name);
    r->slas[r->n_sla++] = *s;
    return 0;
}

/* --sla [NAME=]SPEC (unnamed: s<position among the settings>). */
static int sla_text_add(struct w_run *r, const char *text, struct lt_err *err)
{
    struct sim_whatif_sla s;
    int rc = sim_whatif_sla_parse(text, r->n_sla, &s, err);
    if (rc < 0)
        return rc;
    s.given = text;
    return sla_add(r, &s, err);
}

/* --sla @FILE: every SLA of the file, in its order (slafile.h). */
static int sla_file_add(struct w_run *r, const char *arg, struct lt_err *err)
{
    struct sim_sla_named *f = NULL;
    size_t n = 0;
    int rc = sim_sla_file_load(arg + 1, &f, &n, err);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        struct sim_whatif_sla s;
        memset(&s, 0, sizeof(s));
        snprintf(s.name, sizeof(s.name), "%s", f[k].name);
        s.spec = f[k].spec;
        s.sla = s.spec.sla;
        s.given = arg;
        rc = sla_add(r, &s, err);
    }
    lt_free(f);
    return rc;
}

/* --sla, --order and --sla-scope (usage errors; the Nx times are resolved once the job is
 * read). seen: which options were given. */
static int sla_opts_check(struct w_run *r, const bool *seen, struct lt_err *err)
{
    struct w_opts *o = r->o;
    struct lt_qorder ord = {0};
    for (size_t k = 0; k < o->sla.n; k++) {
        int rc = o->sla.v[k][0] == '@' ? sla_file_add(r, o->sla.v[k], err)
                                       : sla_text_add(r, o->sla.v[k], err);
        if (rc < 0)
            return rc;
    }
    if (strcmp(o->order, "priority") != 0) {
        struct lt_err e2;
        lt_err_init(&e2, NULL);
        if (lt_qorder_find(o->order, &ord, &e2) < 0 || !lt_qorder_uses_sla(&ord))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--order: '%.60s' is not priority, sla-reward, sla-deadline or "
                              "sla-slope[:H]",
                              o->order);
        r->sla_order = true;
        if (r->n_sla == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--order %.60s needs --sla SPEC: without it the job has no SLA "
                              "(e.g. --sla by-deadline:d1=1h,d2=2h)",
                              o->order);
    }
    if (strcmp(o->sla_scope, "within-priority") != 0 && strcmp(o->sla_scope, "sla-first") != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--sla-scope: '%.40s' is not within-priority or sla-first", o->sla_scope);
    if (!r->sla_order)
        sim_opt_warn_unused(&w_spec, seen, "--sla-scope",
                            "without an SLA order (--order sla-reward|sla-deadline|sla-slope)");
    if (o->annotate != NULL) {
        if (sim_annot_load(o->annotate, &r->annot, err) < 0)
            return err->code;
        if (!r->sla_order)
            fprintf(stderr, "lotus-sim: warning: --sla-annotate does not apply without an SLA "
                            "order (--order sla-reward|sla-deadline|sla-slope): the trace's "
                            "tasks keep the replay's priority queue\n");
        r->per_sla = r->sla_order;
        if (r->per_sla)
            r->order = ord;
        if (r->per_sla && strcmp(o->preempt, "none") != 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "--preempt: not supported with --sla-annotate and an SLA order "
                              "(the replay's ordered queue)");
    } else if (seen[sim_opt_index(&w_spec, "--reprioritise")]) {
        sim_opt_warn_unused(&w_spec, seen, "--reprioritise", "without --sla-annotate");
    }
    r->wc.inject.rank = !r->sla_order                            ? SIM_RANK_ARRIVAL
                        : strcmp(o->sla_scope, "sla-first") == 0 ? SIM_RANK_FIRST
                                                                 : SIM_RANK_FIRST_IN_PRIORITY;
    if (r->per_sla)
        snprintf(r->order_note, sizeof(r->order_note),
                 "--order %s over the trace's tasks annotated by %s (%s): the job's SLA sets its "
                 "place among them, so each --sla setting is simulated as its own set of "
                 "replicas, on the same replica seeds (common random numbers)",
                 o->order, o->annotate,
                 strcmp(o->sla_scope, "sla-first") == 0 ? "SLA tasks before all others"
                                                        : "SLA tasks first within a priority");
    else if (r->sla_order)
        snprintf(r->order_note, sizeof(r->order_note),
                 "--order %s: the injected job is the only job with an SLA, so sla-reward, "
                 "sla-deadline and sla-slope rank it alike (%s) and one simulation serves every "
                 "--sla setting; without SLAs on the trace's tasks (--sla-annotate FILE) the "
                 "three orders cannot be told apart",
                 o->order,
                 r->wc.inject.rank == SIM_RANK_FIRST ? "first of all queued tasks"
                                                     : "first among the tasks of its priority");
    return 0;
}

/* An existing --out: refused without --force; with it, only an empty directory or an earlier
 * whatif result is replaced. */
static int out_check(const struct w_opts *o, struct lt_err *err)
{
    const char *paths[1] = {o->out};
    char sum[PATH_CAP_W];
    int rc;
    if ((rc = sim_out_refuse_existing(paths, 1, o->force, err)) < 0 || !sim_path_exists(o->out))
        return rc;
    if (rmdir(o->out) == 0)
        return 0;
    snprintf(sum, sizeof(sum), "%s/summary.json", o->out);
    json_t *j = json_load_file(sum, 0, NULL);
    bool ours = j != NULL && json_is_string(json_object_get(j, "command")) &&
                strcmp(json_string_value(json_object_get(j, "command")), "whatif") == 0;
    json_decref(j);
    if (!ours)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--out '%s' exists and is not a lotus-sim whatif result: --force "
                          "replaces only those; choose another --out",
                          o->out);
    return 0;
}

static double tsec(int64_t us)
{
    return (double)(us - SIM_TRACE_ZERO_US) / 1e6;
}

/* Replica x's reward under setting k (reward.h). */
static void reward_of(const struct w_run *r, size_t k, const struct sim_whatif_rec *x,
                      struct sim_whatif_reward *w)
{
    sim_whatif_reward(&r->slas[k].sla, &r->job, x, (double)r->o->horizon_s, r->info.t_end_us, w);
}

/* One row of replicas.csv: the replica's columns, then its completion and setting k's reward
 * (k == n_sla: no setting). */
static void replica_row(FILE *f, const struct w_run *r, uint64_t i, const struct sim_whatif_rec *x,
                        size_t k)
{
    double d;
    bool ok = sim_whatif_delay(x, &d);
    fprintf(f, "%" PRIu64 ",%" PRIu64 ",%.6f,%g,%" PRIu64 ",", i, x->seed, tsec(x->r.t_inj_us),
            x->shrink_pct, x->machines_kept);
    if (ok)
        fprintf(f, "%.6f,0,", d);
    else
        fprintf(f, ",1,");
    fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",", sim_inject_reason_name(x->r.reason),
            x->r.queued_at_inj, x->r.running_at_inj, x->r.started);
    if (x->r.end_us >= 0)
        fprintf(f, "%.6f", (double)(x->r.end_us - x->r.t_inj_us) / 1e6);
    if (k < r->n_sla) {
        struct sim_whatif_reward w;
        reward_of(r, k, x, &w);
        fprintf(f, ",%s,%.9g,%d\n", r->slas[k].name, w.value, w.censored ? 1 : 0);
    } else {
        fputs(",,,\n", f);
    }
}

/* The records setting k was simulated with: its own set with per_sla, else the one set. */
static const struct sim_whatif_rec *recs_of(const struct w_run *r, size_t k)
{
    return r->recs + (r->per_sla ? k * r->wc.replicas * r->wc.n_shrink : 0);
}

static int write_replicas(const struct w_run *r, const char *dir, struct lt_err *err)
{
    char path[PATH_CAP_W + 64], *tmp;
    snprintf(path, sizeof(path), "%s/replicas.csv", dir);
    FILE *f = sim_tmp_open(path, &tmp, err);
    if (!f)
        return err->code;
    fprintf(f, "replica,seed,t_inj_s,shrink_pct,machines_kept,start_delay_s,censored,reason,"
               "queued_at_inj,running_at_inj,tasks_started,completion_delay_s,sla,reward,"
               "reward_censored\n");
    size_t nl = r->wc.n_shrink, ns = r->n_sla ? r->n_sla : 1;
    for (uint64_t i = 0; i < r->wc.replicas; i++)
        for (size_t lv = 0; lv < nl; lv++)
            for (size_t k = 0; k < ns; k++)
                replica_row(f, r, i, &recs_of(r, k)[i * nl + lv], r->n_sla ? k : r->n_sla);
    return sim_tmp_commit(f, tmp, path, 0, err);
}

static void rewards_of(const struct w_run *r, size_t k, size_t lv, double *buf,
                       struct sim_whatif_rstats *st)
{
    sim_whatif_rewards(&r->slas[k].sla, &r->job, recs_of(r, k), r->wc.replicas, r->wc.n_shrink, lv,
                       (double)r->o->horizon_s, r->info.t_end_us, buf, st);
}

static int write_cdf_reward(const struct w_run *r, const char *dir, double *buf, struct lt_err *err)
{
    char path[PATH_CAP_W + 64], *tmp;
    snprintf(path, sizeof(path), "%s/cdf_reward.csv", dir);
    FILE *f = sim_tmp_open(path, &tmp, err);
    if (!f)
        return err->code;
    fprintf(f, "shrink_pct,sla,quantile,value\n");
    for (size_t lv = 0; lv < r->wc.n_shrink; lv++)
        for (size_t k = 0; k < r->n_sla; k++) {
            struct sim_whatif_rstats st;
            rewards_of(r, k, lv, buf, &st);
            for (int q = 0; q <= 100; q++)
                fprintf(f, "%g,%s,%.2f,%.9g\n", r->wc.shrink[lv], r->slas[k].name, q / 100.0,
                        sim_whatif_quantile(buf, r->wc.replicas, q / 100.0));
        }
    return sim_tmp_commit(f, tmp, path, 0, err);
}

static int write_cdf(const struct w_run *r, const char *dir, double *buf, struct lt_err *err)
{
    char path[PATH_CAP_W + 64], *tmp;
    struct sim_whatif_stats st;
    snprintf(path, sizeof(path), "%s/cdf_start.csv", dir);
    FILE *f = sim_tmp_open(path, &tmp, err);
    if (!f)
        return err->code;
    /* per_sla: a column sla, one CDF per setting (each its own simulations) */
    fprintf(f, r->per_sla ? "shrink_pct,sla,quantile,value\n" : "shrink_pct,quantile,value\n");
    for (size_t lv = 0; lv < r->wc.n_shrink; lv++)
        for (size_t s = 0; s < (r->per_sla ? r->n_sla : 1); s++) {
            sim_whatif_level(recs_of(r, s), r->wc.replicas, r->wc.n_shrink, lv, buf, &st);
            for (int k = 0; k <= 100; k++) {
                double v = sim_whatif_quantile(buf, r->wc.replicas, k / 100.0);
                if (isinf(v)) /* beyond the started share: the CDF ends below 1 */
                    break;
                if (r->per_sla)
                    fprintf(f, "%g,%s,%.2f,%.6f\n", r->wc.shrink[lv], r->slas[s].name, k / 100.0,
                            v);
                else
                    fprintf(f, "%g,%.2f,%.6f\n", r->wc.shrink[lv], k / 100.0, v);
            }
        }
    return sim_tmp_commit(f, tmp, path, 0, err);
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The resolved parameters of a setting. */
static json_t *sla_params_json(const struct lt_sla *s)
{
    switch (s->kind) {
    case LT_SLA_BY_DEADLINE:
        return json_pack("{s:f, s:f, s:f, s:f}", "rmax", s->r_max, "pen", s->r_pen, "d1_s", s->d1_s,
                         "d2_s", s->d2_s);
    case LT_SLA_CHEAP_AND_SIMPLE:
        return json_pack("{s:f, s:f, s:f, s:f}", "rmax", s->r_max, "rmin", s->r_min, "d0_s",
                         s->d0_s, "k_per_s", s->k_per_s);
    case LT_SLA_EXAMPLE1:
        return json_pack("{s:f, s:f, s:f}", "target_s", s->target_s, "peak", s->price_peak,
                         "offpeak", s->price_offpeak);
    }
    return json_null();
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --until-complete: the level's completion delays (not completed: +inf), sorted into buf. */
static json_t *completion_json(const struct w_run *r, size_t lv, double *buf)
{
    uint64_t n = r->wc.replicas, done = 0;
    double sum = 0;
    json_t *q = json_object();
    for (uint64_t i = 0; i < n; i++) {
        const struct sim_whatif_rec *x = &r->recs[i * r->wc.n_shrink + lv];
        buf[i] = x->r.end_us >= 0 ? (double)(x->r.end_us - x->r.t_inj_us) / 1e6 : INFINITY;
        if (x->r.end_us >= 0) {
            done++;
            sum += buf[i];
        }
    }
    qsort(buf, n, sizeof(*buf), cmp_dbl);
    for (int k = 0; q && k < SIM_WHATIF_N_Q; k++) {
        char key[16];
        snprintf(key, sizeof(key), "p%g", SIM_WHATIF_Q[k] * 100);
        json_object_set_new(q, key, num_or_null(sim_whatif_quantile(buf, n, SIM_WHATIF_Q[k])));
    }
    return json_pack("{s:I, s:I, s:o, s:o}", "completed", (json_int_t)done, "not_completed",
                     (json_int_t)(n - done), "mean_completion_delay_s",
                     num_or_null(done ? sum / (double)done : NAN), "completion_delay_quantiles_s",
                     q ? q : json_null());
}

#define HINT_NEGATIVE "expected reward negative: do not offer this SLA"

/* Setting k at level lv. */
static json_t *sla_level_json(const struct w_run *r, size_t k, size_t lv, double *buf)
{
    struct sim_whatif_rstats st;
    const struct lt_sla *s = &r->slas[k].sla;
    json_t *q = json_object(), *o;
    rewards_of(r, k, lv, buf, &st);
    for (int i = 0; q && i < SIM_WHATIF_N_Q; i++) {
        char key[16];
        snprintf(key, sizeof(key), "p%g", SIM_WHATIF_Q[i] * 100);
        json_object_set_new(q, key, json_real(st.q[i]));
    }
    o = json_pack("{s:s, s:f, s:f, s:f, s:b, s:f, s:I, s:I, s:o}", "sla", r->slas[k].name, "knee_s",
                  sim_whatif_sla_knee(s), "p_start_within_knee", st.p_knee, "expected_reward",
                  st.mean, "expected_reward_is_upper_bound", st.bounds > 0, "p_reward_negative",
                  st.p_negative, "censored", (json_int_t)st.censored,
                  "censored_rewards_upper_bound", (json_int_t)st.bounds, "reward_quantiles",
                  q ? q : json_null());
    if (o != NULL && st.mean < 0)
        json_object_set_new(o, "hint", json_string(HINT_NEGATIVE));
    if (o != NULL && r->per_sla) { /* its own simulations: its own start statistics */
        struct sim_whatif_stats ss;
        sim_whatif_level(recs_of(r, k), r->wc.replicas, r->wc.n_shrink, lv, buf, &ss);
        json_object_set_new(o, "start",
                            json_pack("{s:I, s:I, s:f, s:o}", "started", (json_int_t)ss.started,
                                      "censored", (json_int_t)ss.censored,
                                      "p_not_started_by_horizon",
                                      (double)ss.censored / (double)ss.n, "mean_delay_started_s",
                                      num_or_null(ss.mean_s)));
    }
    return o;
}

/* The settings as given and resolved. */
static json_t *slas_json(const struct w_run *r)
{
    json_t *a = json_array();
    for (size_t k = 0; a && k < r->n_sla; k++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:o}", "name", r->slas[k].name,
                                           "spec", r->slas[k].given, "kind",
                                           lt_sla_kind_name(r->slas[k].sla.kind), "relative_times",
                                           r->slas[k].spec.relative != 0, "parameters",
                                           sla_params_json(&r->slas[k].sla)));
    return a;
}

/* The delays P(start <= d) is given at (those within the horizon). */
static const double PROBE_S[] = {0, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400};

/* Level lv's entry of summary.json. */
static json_t *level_json(const struct w_run *r, size_t lv, double *buf)
{
    const struct w_opts *o = r->o;
    struct sim_whatif_stats st;
    json_t *l = json_object(), *p = json_object(), *q = json_object();
    sim_whatif_level(r->recs, r->wc.replicas, r->wc.n_shrink, lv, buf, &st);
    json_object_set_new(l, "shrink_pct", json_real(r->wc.shrink[lv]));
    json_object_set_new(l, "n", json_integer((json_int_t)st.n));
    json_object_set_new(l, "started", json_integer((json_int_t)st.started));
    json_object_set_new(l, "censored", json_integer((json_int_t)st.censored));
    for (int k = 1; k < 4; k++) {
        char key[32];
        snprintf(key, sizeof(key), "censored_%s", sim_inject_reason_name(k));
        json_object_set_new(l, key, json_integer((json_int_t)st.by_reason[k]));
    }
    for (size_t k = 0; k < sizeof(PROBE_S) / sizeof(PROBE_S[0]); k++) {
        if (PROBE_S[k] > (double)o->horizon_s)
            break;
        char key[32];
        size_t c = 0;
        while (c < st.n && buf[c] <= PROBE_S[k])
            c++;
        snprintf(key, sizeof(key), "%.0f", PROBE_S[k]);
        json_object_set_new(p, key, json_real((double)c / (double)st.n));
    }
    json_object_set_new(l, "p_start_within_s", p);
    json_object_set_new(l, "p_not_started_by_horizon",
                        json_real((double)st.censored / (double)st.n));
    json_object_set_new(l, "mean_delay_started_s", num_or_null(st.mean_s));
    for (int k = 0; k < SIM_WHATIF_N_Q; k++) {
        char key[16];
        snprintf(key, sizeof(key), "p%g", SIM_WHATIF_Q[k] * 100);
        json_object_set_new(q, key, num_or_null(st.q[k]));
    }
    json_object_set_new(l, "delay_quantiles_s", q);
    if (st.all_same)
        json_object_set_new(l, "warning",
                            json_string("every replica gave the same answer: no source of "
                                        "variance is on (docs/whatif.md)"));
    if (o->until_complete)
        json_object_set_new(l, "completion", completion_json(r, lv, buf));
    json_t *sl = json_array();
    for (size_t k = 0; sl && k < r->n_sla; k++)
        json_array_append_new(sl, sla_level_json(r, k, lv, buf));
    json_object_set_new(l, "sla", sl ? sl : json_null());
    return l;
}

static json_t *summary_json(const struct w_run *r, double *buf, const uint64_t *seeds)
{
    const struct w_opts *o = r->o;
    json_t *j = json_object(), *opts = json_object(), *levels = json_array(), *seedv = json_array(),
           *job = json_object(), *tasks = json_array();
    if (!j || !opts || !levels || !seedv || !job || !tasks) {
        json_decref(j);
        json_decref(opts);
        json_decref(levels);
        json_decref(seedv);
        json_decref(job);
        json_decref(tasks);
        return NULL;
    }
    json_object_set_new(j, "command", json_string("whatif"));
    json_object_set_new(j, "version", json_string(SIM_VERSION));
    json_object_set_new(opts, "trace", json_string(o->trace));
    json_object_set_new(opts, "job", json_string(o->job));
    json_object_set_new(opts, "at", json_string(o->at));
    json_object_set_new(opts, "replicas", json_integer((json_int_t)o->replicas));
    json_object_set_new(opts, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(opts, "horizon_s", json_integer((json_int_t)o->horizon_s));
    json_object_set_new(opts, "start", json_string(o->start));
    json_object_set_new(opts, "shrink", json_string(o->shrink));
    json_object_set_new(opts, "shrink_from_start", json_boolean(o->shrink_from_start));
    json_object_set_new(opts, "resample_running", json_boolean(o->resample));
    json_object_set_new(opts, "no_arrivals", json_boolean(o->no_arrivals));
    json_object_set_new(opts, "policy", json_string(o->policy));
    json_object_set_new(opts, "preempt", json_string(o->preempt));
    json_object_set_new(opts, "until_complete", json_boolean(o->until_complete));
    json_object_set_new(opts, "order", json_string(o->order));
    json_object_set_new(opts, "sla_scope", json_string(o->sla_scope));
    json_object_set_new(j, "options", opts);
    json_object_set_new(j, "command_line", json_string(r->cmdline ? r->cmdline : ""));
    json_object_set_new(j, "slas", slas_json(r));
    json_object_set_new(j, "sla_times_relative_to_s", json_real(sim_whatif_job_longest_s(&r->job)));
    if (r->order_note[0] != '\0')
        json_object_set_new(j, "order_note", json_string(r->order_note));
    json_object_set_new(job, "name", json_string(r->job.name));
    json_object_set_new(job, "priority", json_integer(r->job.priority));
    json_object_set_new(job, "sched_class", json_integer(r->job.sched_class));
    for (size_t g = 0; g < r->job.n_groups; g++) {
        const struct sim_inject_group *gr = &r->job.groups[g];
        json_array_append_new(tasks,
                              json_pack("{s:I, s:f, s:f, s:f, s:f}", "count", (json_int_t)gr->count,
                                        "cpu", gr->req.cpu, "mem", gr->req.mem, "disk",
                                        gr->req.disk, "duration_s", (double)gr->duration_us / 1e6));
    }
    json_object_set_new(job, "tasks", tasks);
    json_object_set_new(j, "job", job);
    json_object_set_new(j, "trace_end_s", json_real(tsec(r->info.t_end_us)));
    json_object_set_new(j, "machines", json_integer((json_int_t)r->info.machines));
    for (uint64_t i = 0; i < r->wc.replicas; i++) { /* 64-bit: as decimal strings */
        char d[24];
        snprintf(d, sizeof(d), "%" PRIu64, seeds[i]);
        json_array_append_new(seedv, json_string(d));
    }
    json_object_set_new(j, "replica_seeds", seedv);
    for (size_t lv = 0; lv < r->wc.n_shrink; lv++)
        json_array_append_new(levels, level_json(r, lv, buf));
    json_object_set_new(j, "levels", levels);
    json_object_set_new(j, "quantile_note",
                        json_string("censored replicas count as +inf: a null quantile lies "
                                    "beyond the horizon"));
    return j;
}

#define CURVE_N 401 /* r(d) sampled on [0, H], plus the knees */

/* Setting k's curve r(d) on [0, H] (example1: at the first replica's injection instant). */
static size_t curve_fill(const struct w_run *r, size_t k, double *d, double *v)
{
    const struct lt_sla *s = &r->slas[k].sla;
    double h = (double)r->o->horizon_s;
    size_t n = 0;
    for (; n < CURVE_N; n++)
        d[n] = h * (double)n / (CURVE_N - 1);
    double knees[2] = {sim_whatif_sla_knee(s), s->kind == LT_SLA_BY_DEADLINE ? s->d2_s : NAN};
    for (int i = 0; i < 2; i++)
        if (knees[i] > 0 && knees[i] < h)
            d[n++] = knees[i];
    qsort(d, n, sizeof(*d), cmp_dbl);
    struct sim_whatif_rec x = r->recs[0];
    x.r.reason = SIM_INJ_STARTED;
    for (size_t i = 0; i < n; i++) {
        struct sim_whatif_reward w;
        x.r.start_us = x.r.t_inj_us + (int64_t)llround(d[i] * 1e6);
        reward_of(r, k, &x, &w);
        v[i] = w.value;
    }
    return n;
}

/* The report's facts. */
struct w_facts {
    char val[10][300];
    const char *key[10], *v[10];
    size_t n;
};

static void wfact(struct w_facts *fs, const char *key, const char *val)
{
    if (fs->n == 10)
        return;
    snprintf(fs->val[fs->n], sizeof(fs->val[fs->n]), "%s", val);
    fs->key[fs->n] = key;
    fs->v[fs->n] = fs->val[fs->n];
    fs->n++;
}

static void facts_fill(const struct w_run *r, struct w_facts *fs)
{
    char b[300];
    wfact(fs, "trace", r->o->trace);
    snprintf(b, sizeof(b), "%s: %" PRIu64 " task(s), priority %d, longest task %.0f s", r->job.name,
             r->job.n_tasks, r->job.priority, sim_whatif_job_longest_s(&r->job));
    wfact(fs, "job", b);
    snprintf(b, sizeof(b), "%s; %" PRIu64 " replicas from --seed %" PRIu64, r->o->at,
             r->wc.replicas, r->o->seed);
    wfact(fs, "injected at", b);
    snprintf(b, sizeof(b), "%zu machine IDs; --shrink %s%s", r->info.machines, r->o->shrink,
             r->wc.resample ? "; --resample-running (Method III)" : "");
    wfact(fs, "cell", b);
    snprintf(b, sizeof(b), "%" PRIu64 " s; started = its %s task%s", r->o->horizon_s,
             r->wc.inject.start_all ? "last" : "first",
             r->o->until_complete ? "; replayed until complete" : "");
    wfact(fs, "horizon", b);
    snprintf(b, sizeof(b), "%s%s%s; placement %s", r->o->order,
             r->sla_order ? ", --sla-scope " : "", r->sla_order ? r->o->sla_scope : "",
             r->o->policy);
    wfact(fs, "order", b);
    if (r->n_sla > 0) {
        snprintf(b, sizeof(b), "Nx = N x %.0f s (the longest task)",
                 sim_whatif_job_longest_s(&r->job));
        wfact(fs, "SLA times", b);
    }
}

/* report.html: the delays and rewards sorted, the curves sampled. */
static int report_write(const struct w_run *r, const char *dir, struct lt_err *err)
{
    size_t nl = r->wc.n_shrink, ns = r->n_sla;
    uint64_t n = r->wc.replicas;
    struct sim_wreport_level lv[SIM_WHATIF_MAX_LEVELS];
    struct sim_wreport_sla sl[SIM_WHATIF_MAX_SLAS];
    const double *own[SIM_WHATIF_MAX_SLAS][SIM_WHATIF_MAX_LEVELS];
    uint64_t own_c[SIM_WHATIF_MAX_SLAS][SIM_WHATIF_MAX_LEVELS];
    double *delays = lt_calloc(nl * n, sizeof(double));
    double *sd = lt_calloc(r->per_sla ? ns * nl * n + 1 : 1, sizeof(double));
    double *rw = lt_calloc(ns * nl * n + 1, sizeof(double));
    double *cd = lt_calloc(ns * (CURVE_N + 2) + 1, sizeof(double));
    double *cv = lt_calloc(ns * (CURVE_N + 2) + 1, sizeof(double));
    double *stats = lt_calloc(3 * ns * nl + 1, sizeof(double));
    const double **rp = lt_calloc(ns * nl + 1, sizeof(*rp));
    bool *ub = lt_calloc(ns * nl + 1, sizeof(bool));
    struct w_facts fs;
    bool all_same = false, plotted;
    int rc = 0;
    if (!delays || !sd || !rw || !cd || !cv || !stats || !rp || !ub)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t l = 0; rc == 0 && l < nl; l++) {
        struct sim_whatif_stats st;
        sim_whatif_level(r->recs, n, nl, l, delays + l * n, &st);
        lv[l] = (struct sim_wreport_level){r->wc.shrink[l], delays + l * n, st.censored};
        all_same = all_same || st.all_same;
    }
    for (size_t k = 0; rc == 0 && k < ns; k++) {
        double *m = stats + 3 * k * nl;
        for (size_t l = 0; l < nl; l++) {
            struct sim_whatif_rstats st;
            rewards_of(r, k, l, rw + (k * nl + l) * n, &st);
            rp[k * nl + l] = rw + (k * nl + l) * n;
            m[l] = st.mean;
            m[nl + l] = st.p_knee;
            m[2 * nl + l] = st.p_negative;
            ub[k * nl + l] = st.bounds > 0;
            if (r->per_sla) { /* the setting's own replicas: its own start delays */
                struct sim_whatif_stats ss;
                sim_whatif_level(recs_of(r, k), n, nl, l, sd + (k * nl + l) * n, &ss);
                own[k][l] = sd + (k * nl + l) * n;
                own_c[k][l] = ss.censored;
            }
        }
        size_t nc = curve_fill(r, k, cd + k * (CURVE_N + 2), cv + k * (CURVE_N + 2));
        sl[k] = (struct sim_wreport_sla){.name = r->slas[k].name,
                                         .spec = r->o->sla.v[k],
                                         .knee_s = sim_whatif_sla_knee(&r->slas[k].sla),
                                         .curve_d = cd + k * (CURVE_N + 2),
                                         .curve_r = cv + k * (CURVE_N + 2),
                                         .n_curve = nc,
                                         .rewards = rp + k * nl,
                                         .mean = m,
                                         .p_knee = m + nl,
                                         .p_negative = m + 2 * nl,
                                         .upper_bound = ub + k * nl,
                                         .delays = r->per_sla ? own[k] : NULL,
                                         .censored = r->per_sla ? own_c[k] : NULL};
    }
    if (rc == 0) {
        memset(&fs, 0, sizeof(fs));
        facts_fill(r, &fs);
        struct sim_wreport w = {.n = n,
                                .horizon_s = (double)r->o->horizon_s,
                                .levels = lv,
                                .n_levels = nl,
                                .slas = sl,
                                .n_slas = ns,
                                .fact_key = fs.key,
                                .fact_val = fs.v,
                                .n_facts = fs.n,
                                .note = r->order_note[0] ? r->order_note : NULL,
                                .all_same = all_same,
                                .title = r->cmdline,
                                .version = SIM_VERSION};
        rc = sim_wreport_write(dir, &w, &plotted, err);
    }
    lt_free(delays);
    lt_free(sd);
    lt_free(rw);
    lt_free(cd);
    lt_free(cv);
    lt_free(stats);
    lt_free(rp);
    lt_free(ub);
    return rc;
}

/* The files, each a loop over the records. */
static int outputs_write(const struct w_run *r, const char *dir, const uint64_t *seeds,
                         struct lt_err *err)
{
    double *buf = lt_calloc(r->wc.replicas, sizeof(double));
    int rc = 0;
    if (!buf)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    rc = write_replicas(r, dir, err);
    if (rc == 0)
        rc = write_cdf(r, dir, buf, err);
    if (rc == 0 && r->n_sla > 0)
        rc = write_cdf_reward(r, dir, buf, err);
    if (rc == 0) {
        char path[PATH_CAP_W + 64];
        snprintf(path, sizeof(path), "%s/summary.json", dir);
        json_t *j = summary_json(r, buf, seeds);
        if (!j)
            rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
        else {
            char *tmp;
            FILE *f = sim_tmp_open(path, &tmp, err);
            rc = f ? 0 : err->code;
            if (f) {
                if (json_dumpf(j, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) != 0)
                    rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write %s", path);
                fputc('\n', f);
                rc = sim_tmp_commit(f, tmp, path, rc, err);
            }
            json_decref(j);
        }
    }
    if (rc == 0)
        rc = report_write(r, dir, err);
    lt_free(buf);
    return rc;
}

/* Pitfall 2 of the spec: N identical answers. */
static void warn_same(const struct w_run *r, size_t lv)
{
    bool none = r->wc.at.mode == SIM_AT_FIXED && !r->wc.resample && r->wc.shrink[lv] >= 100.0;
    fprintf(stderr, "lotus-sim: warning: shrink %g%%: every replica gave the same answer%s\n",
            r->wc.shrink[lv],
            none ? "; no source of variance is on (--at random|day-random, --shrink below 100, "
                   "--resample-running)"
                 : "");
}

static void print_table(const struct w_run *r)
{
    double *buf = lt_calloc(r->wc.replicas, sizeof(double));
    if (!buf)
        return;
    printf("job %s: %" PRIu64 " task(s), priority %d, injected %s into %zu machines; %" PRIu64
           " replicas, start = %s task\n",
           r->job.name, r->job.n_tasks, r->job.priority, r->o->at, r->info.machines, r->wc.replicas,
           r->wc.inject.start_all ? "last" : "first");
    printf("%s%-8s %9s %9s %10s %10s %10s %10s %10s\n", r->per_sla ? "sla          " : "", "shrink",
           "started", "censored", "P(<=1h)", "p50 (s)", "p90 (s)", "mean (s)", "P(>H)");
    for (size_t k = 0; k < (r->per_sla ? r->n_sla : 1); k++) /* per_sla: a set per setting */
        for (size_t lv = 0; lv < r->wc.n_shrink; lv++) {
            struct sim_whatif_stats st;
            sim_whatif_level(recs_of(r, k), r->wc.replicas, r->wc.n_shrink, lv, buf, &st);
            size_t c = 0;
            while (c < st.n && buf[c] <= 3600.0)
                c++;
            if (r->per_sla)
                printf("%-12s ", r->slas[k].name);
            printf("%-7g%% %9" PRIu64 " %9" PRIu64 " %10.3f %10.1f %10.1f %10.1f %10.3f\n",
                   r->wc.shrink[lv], st.started, st.censored, (double)c / (double)st.n, st.q[2],
                   st.q[4], st.mean_s, (double)st.censored / (double)st.n);
            if (st.all_same && k == 0)
                warn_same(r, lv);
        }
    printf("(p50/p90: inf = not started by the horizon for that share of replicas)\n");
    if (r->n_sla > 0) {
        printf("\n%-12s %-8s %11s %12s %10s %9s  %s\n", "sla", "shrink", "P(<=knee)", "E[reward]",
               "P(r<0)", "censored", "hint");
        for (size_t k = 0; k < r->n_sla; k++)
            for (size_t lv = 0; lv < r->wc.n_shrink; lv++) {
                struct sim_whatif_rstats st;
                rewards_of(r, k, lv, buf, &st);
                printf("%-12s %-7g%% %11.3f %s%11.4f %10.3f %9" PRIu64 "  %s\n", r->slas[k].name,
                       r->wc.shrink[lv], st.p_knee, st.bounds ? "<=" : "  ", st.mean, st.p_negative,
                       st.censored, st.mean < 0 ? HINT_NEGATIVE : "");
            }
        printf("(knee: d1, d0 or the target; a censored replica pays r(H_eff), an upper bound "
               "while r still falls: E[reward] is then marked <=)\n");
    }
    lt_free(buf);
}

/* The job against the cell's machines (sim_whatif_config.check). */
static int check_job(void *ctx, struct lt_res max, struct lt_err *err)
{
    const struct w_run *r = ctx;
    return sim_whatif_job_check(r->o->job, &r->job, max, err);
}

static int whatif_run(struct w_run *r, struct lt_err *err)
{
    char stage[PATH_CAP_W];
    int rc;
    size_t sets = r->per_sla ? r->n_sla : 1, per = r->wc.replicas * r->wc.n_shrink;
    r->recs = lt_calloc(per * sets, sizeof(*r->recs));
    if (!r->recs)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (size_t k = 0; k < sets; k++) { /* per_sla: the same seeds, the setting's SLA */
        r->wc.inject.sla = r->per_sla ? &r->slas[k].sla : NULL;
        rc = sim_whatif_run(&r->wc, r->recs + k * per, &r->info, err);
        if (rc < 0)
            return rc;
    }
    uint64_t *seeds = lt_calloc(r->wc.replicas, sizeof(*seeds));
    if (!seeds)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    for (uint64_t i = 0; i < r->wc.replicas; i++)
        seeds[i] = r->recs[i * r->wc.n_shrink].seed;
    if (!r->o->quiet)
        print_table(r);
    else
        for (size_t lv = 0; lv < r->wc.n_shrink; lv++) { /* the warning still */
            double *b = lt_calloc(r->wc.replicas, sizeof(double));
            struct sim_whatif_stats st;
            if (!b)
                break;
            sim_whatif_level(r->recs, r->wc.replicas, r->wc.n_shrink, lv, b, &st);
            if (st.all_same)
                warn_same(r, lv);
            lt_free(b);
        }
    rc = sim_stage_open(r->o->out, stage, sizeof(stage), err);
    if (rc == 0) {
        sim_out_track(stage);
        rc = outputs_write(r, stage, seeds, err);
        if (rc == 0)
            rc = sim_stage_commit(stage, r->o->out, err);
        if (rc < 0)
            (void)sim_remove_tree(stage, NULL);
        sim_out_forget(stage);
    }
    lt_free(seeds);
    if (rc == 0 && !r->o->quiet)
        printf("outputs: %s/{replicas.csv,cdf_start.csv,%ssummary.json,report.html}\n", r->o->out,
               r->n_sla ? "cdf_reward.csv," : "");
    return rc;
}

int sim_cmd_whatif(int argc, char **argv)
{
    struct w_opts o = {.start = "first",
                       .shrink = "100",
                       .policy = "bestfit1",
                       .preempt = "none",
                       .order = "priority",
                       .sla_scope = "within-priority",
                       .out = DEFAULT_OUT,
                       .replicas = 100,
                       .seed = 1,
                       .horizon_s = 86400,
                       .jobs = 2,
                       .cache_mb = 1024};
    struct w_run r;
    struct lt_err err;
    bool seen[sizeof(w_rows) / sizeof(w_rows[0])];
    int rc;

    memset(&r, 0, sizeof(r));
    r.o = &o;
    lt_err_init(&err, NULL);
    rc = sim_opt_parse(&w_spec, argc, argv, &o, seen, &err);
    if (rc == 1)
        return SIM_EXIT_OK;
    if (rc == 0)
        rc = opts_check(&r, &err);
    if (rc == 0)
        rc = sla_opts_check(&r, seen, &err);
    if (rc == 0)
        rc = out_check(&o, &err);
    if (rc < 0)
        return rc == LT_ENOTFOUND ? sim_policy_usage_error(w_spec.name, &err)
                                  : sim_usage_error(w_spec.name, &err);
    sim_out_signals(SIM_SIG_CLEANUP);
    if (sim_whatif_job_load(o.job, &r.job, &err) < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    for (size_t k = 0; k < r.n_sla; k++)
        if (sim_whatif_sla_resolve(&r.slas[k], sim_whatif_job_longest_s(&r.job), &err) < 0) {
            sim_err_print(&err);
            return SIM_EXIT_INPUT;
        }
    if (r.order_note[0] != '\0' && !o.quiet)
        printf("note: %s\n", r.order_note);
    if ((r.cmdline = sim_command_line(argc, argv)) == NULL) {
        fprintf(stderr, "lotus-sim: out of memory\n");
        return SIM_EXIT_INPUT;
    }
    r.rc = (struct sim_replay_config){.trace_dir = o.trace,
                                      .policy = r.rc.policy,
                                      .order = r.per_sla ? &r.order : NULL,
                                      .annot = r.per_sla ? &r.annot : NULL,
                                      .sla_first = strcmp(o.sla_scope, "sla-first") == 0,
                                      .reprioritise_us = (int64_t)o.reprioritise_s * 1000000,
                                      .seed = 1,
                                      .machines_pct = 100.0,
                                      .initial_state = SIM_INIT_TRACE,
                                      .preempt = r.rc.preempt,
                                      .until_us = INT64_MAX,
                                      .interval_us = INT64_C(1) << 60, /* no samples needed */
                                      .cache_bytes = (size_t)o.cache_mb << 20};
    r.wc.replay = &r.rc;
    r.wc.inject = (struct sim_inject){.groups = r.job.groups,
                                      .n_groups = r.job.n_groups,
                                      .priority = r.job.priority,
                                      .sched_class = r.job.sched_class,
                                      .start_all = strcmp(o.start, "all") == 0,
                                      .horizon_us = (int64_t)o.horizon_s * 1000000,
                                      .no_arrivals = o.no_arrivals,
                                      .rank = r.wc.inject.rank,
                                      .until_complete = o.until_complete};
    r.wc.replicas = o.replicas;
    r.wc.seed = o.seed;
    r.wc.shrink_from_start = o.shrink_from_start;
    r.wc.resample = o.resample;
    r.wc.no_snapshot = o.no_snapshot;
    r.wc.jobs = (unsigned)o.jobs;
    r.wc.check = check_job;
    r.wc.check_ctx = &r;
    rc = whatif_run(&r, &err);
    lt_free(r.recs);
    lt_free(r.cmdline);
    if (rc < 0) {
        sim_err_print(&err);
        return SIM_EXIT_INPUT;
    }
    return SIM_EXIT_OK;
}
