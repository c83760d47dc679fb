/* score_cmd.c -- `lotus-sim score`: every machine's score for one task under one policy.
 *
 * The policy author's view of the library (DESIGN.md section 1): load a cluster snapshot and
 * a task (json_model.c), rank all machines with lt_policy_rank, and also attach the policy's
 * index and call lt_policy_choose, the simulator's hot path. The library promises that
 * choose returns exactly the best of rank (lowest score, ties to the lowest index) and makes
 * the same random draws, so both get an RNG seeded identically from --seed; a disagreement is
 * reported as an internal error (exit 70), which makes every run of this command a check of
 * that property on the user's own data. The chosen machine printed is choose's.
 *
 * Output: a table of the feasible machines in rank order, or with --json one object
 * (docs/cli.md). A task that fits nowhere is an answer ("chosen: none"), not an error.
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/opt.h"
#include "cli/policies.h"
#include "lt_mem.h"
#include "lt_rng.h"
#include "lt_score.h"

struct score_opts {
    const char *policy;  /* --policy NAME */
    const char *cluster; /* --cluster FILE */
    const char *task;    /* --task FILE */
    uint64_t seed;       /* --seed N: seeds the policy's random stream */
    bool json;           /* --json */
    bool list;           /* --list-policies */
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct score_opts, name, kind, field, arg, help, def)

static const struct sim_opt opts[] = {
    OPT("--policy", SIM_OPT_STR, policy, "NAME", "placement policy (required; see --list-policies)",
        NULL),
    OPT("--cluster", SIM_OPT_STR, cluster, "FILE",
        "cluster snapshot, JSON (required; docs/formats.md)", NULL),
    OPT("--task", SIM_OPT_STR, task, "FILE", "the task to place, JSON (required; docs/formats.md)",
        NULL),
    OPT("--json", SIM_OPT_FLAG, json, NULL, "print one JSON object instead of a table", NULL),
    OPT("--seed", SIM_OPT_U64, seed, "N", "seed of the policy's random stream", "1"),
    OPT("--list-policies", SIM_OPT_FLAG, list, NULL,
        "print the placement policies, one per line, and exit", NULL),
};

static const struct sim_cmd_spec spec = {
    "score",
    "--policy NAME --cluster CLUSTER.json --task TASK.json\n"
    "                       [--json] [--seed N]\n"
    "       lotus-sim score --list-policies",
    "Scores every machine of the cluster snapshot for the task under the policy and\n"
    "prints the feasible machines best first (lowest score; ties to the lowest index)\n"
    "and the machine the policy chooses.",
    "lotus-sim score --policy bestfit1 --cluster tests/fixtures/score/cluster.json \\\n"
    "      --task tests/fixtures/score/task.json",
    "exit status: 0 done (also when the task fits nowhere), 1 bad input file,\n"
    "2 usage error, 70 internal error",
    opts,
    sizeof(opts) / sizeof(opts[0])};

/* One feasible machine, as listed. */
struct scored {
    size_t machine; /* machine index */
    double score;   /* its score (< LT_SCORE_INFEASIBLE) */
};

/* What the command computed, printed by print_text or print_json. */
struct score_run {
    const struct lt_policy *p; /* borrowed, static */
    struct lt_cluster *c;      /* owned */
    struct lt_task t;          /* the task scored */
    struct scored *feasible;   /* owned; rank order: score ascending, then index */
    size_t n_feasible;         /* entries of feasible */
    size_t n_infeasible;       /* machines offline or where t does not fit */
    size_t chosen;             /* choose's machine, or LT_NO_MACHINE */
};

/* Returns 0 to run, 1 when done (--help, --list-policies), or a negative LT_E*. */
static int parse_args(int argc, char **argv, struct score_opts *o, struct lt_err *err)
{
    bool seen[sizeof(opts) / sizeof(opts[0])];
    int rc;

    memset(o, 0, sizeof(*o));
    o->seed = 1;
    rc = sim_opt_parse(&spec, argc, argv, o, seen, err);
    if (rc != 0)
        return rc;
    if (o->list)
        return (rc = sim_policy_list_alone(&spec, seen, false, err)) < 0 ? rc : 1;
    if (o->policy == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --policy");
    if (o->cluster == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --cluster");
    if (o->task == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --task");
    return 0;
}

/* Rank order: score ascending, then machine index (what lt_scores_best picks first). */
static int by_rank(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;

    if (x->score < y->score)
        return -1;
    if (y->score < x->score)
        return 1;
    return x->machine < y->machine ? -1 : x->machine > y->machine;
}

/* Keeps the feasible machines of scores[0..n-1] (candidate k is machine k), sorted. */
static int collect_feasible(struct score_run *r, const double *scores, size_t n, struct lt_err *err)
{
    r->feasible = lt_calloc(n, sizeof(*r->feasible));
    if (r->feasible == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu scores", n);
    for (size_t i = 0; i < n; i++) {
        if (!(scores[i] < LT_SCORE_INFEASIBLE))
            continue;
        r->feasible[r->n_feasible].machine = i;
        r->feasible[r->n_feasible].score = scores[i];
        r->n_feasible++;
    }
    r->n_infeasible = n - r->n_feasible;
    qsort(r->feasible, r->n_feasible, sizeof(*r->feasible), by_rank);
    return 0;
}

/* rank over machines 0..n-1, then attach + choose; *out_best is rank's best machine. */
static int rank_and_choose(struct score_run *r, uint64_t seed, size_t *out_best, struct lt_err *err)
{
    size_t n = lt_cluster_size(r->c), best;
    struct lt_rng rank_rng, choose_rng;
    size_t *cand;
    double *scores;
    int rc = LT_ENOMEM;

    cand = lt_calloc(n, sizeof(*cand));
    scores = lt_calloc(n, sizeof(*scores));
    if (cand == NULL || scores == NULL) {
        lt_err_set(err, rc, 0, 0, "out of memory for %zu machines", n);
        goto out_free;
    }
    for (size_t i = 0; i < n; i++)
        cand[i] = i;
    lt_rng_init(&rank_rng, seed, LT_RNG_POLICY);
    lt_rng_init(&choose_rng, seed, LT_RNG_POLICY);
    rc = lt_policy_rank(r->p, r->c, &r->t, cand, n, &rank_rng, scores, err);
    if (rc < 0)
        goto out_free;
    best = lt_scores_best(cand, scores, n);
    *out_best = best == LT_NO_MACHINE ? LT_NO_MACHINE : cand[best];
    rc = lt_policy_attach(r->p, r->c, err);
    if (rc < 0)
        goto out_free;
    rc = lt_policy_choose(r->p, r->c, &r->t, &choose_rng, &r->chosen, err);
    if (rc < 0)
        goto out_free;
    rc = collect_feasible(r, scores, n, err);

out_free:
    lt_free(scores);
    lt_free(cand);
    return rc;
}

/* Score of machine i in r, which must be feasible. */
static double score_of(const struct score_run *r, size_t i)
{
    for (size_t k = 0; k < r->n_feasible; k++) {
        if (r->feasible[k].machine == i)
            return r->feasible[k].score;
    }
    return LT_SCORE_INFEASIBLE;
}

static int width_zu(size_t v)
{
    return snprintf(NULL, 0, "%zu", v);
}

static int width_g(int digits, double v)
{
    return snprintf(NULL, 0, "%.*g", digits, v);
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

/* Column widths of the table: rank, machine, index, score, free cpu, mem, disk. */
static void table_widths(const struct score_run *r, int w[7])
{
    static const char *const head[7] = {"rank",     "machine",  "index",    "score",
                                        "free_cpu", "free_mem", "free_disk"};

    for (int k = 0; k < 7; k++)
        w[k] = (int)strlen(head[k]);
    for (size_t k = 0; k < r->n_feasible; k++) {
        size_t i = r->feasible[k].machine;
        struct lt_res f = lt_cluster_free_res(r->c, i);

        w[0] = max_int(w[0], width_zu(k + 1));
        w[1] = max_int(w[1], (int)strlen(lt_cluster_name(r->c, i)));
        w[2] = max_int(w[2], width_zu(i));
        w[3] = max_int(w[3], width_g(17, r->feasible[k].score));
        w[4] = max_int(w[4], width_g(15, f.cpu - r->t.req.cpu));
        w[5] = max_int(w[5], width_g(15, f.mem - r->t.req.mem));
        w[6] = max_int(w[6], width_g(15, f.disk - r->t.req.disk));
    }
}

static void print_text(const struct score_run *r, uint64_t seed)
{
    size_t n = lt_cluster_size(r->c);
    int w[7];

    printf("policy: %s (seed %" PRIu64 ")\n", lt_policy_name(r->p), seed);
    printf("task: cpu %.15g, mem %.15g, disk %.15g (priority %d, class %d)\n", r->t.req.cpu,
           r->t.req.mem, r->t.req.disk, r->t.priority, r->t.sched_class);
    if (r->n_feasible > 0) {
        table_widths(r, w);
        printf("%*s  %-*s  %*s  %*s  %*s  %*s  %*s\n", w[0], "rank", w[1], "machine", w[2], "index",
               w[3], "score", w[4], "free_cpu", w[5], "free_mem", w[6], "free_disk");
    }
    for (size_t k = 0; k < r->n_feasible; k++) {
        size_t i = r->feasible[k].machine;
        struct lt_res f = lt_cluster_free_res(r->c, i);

        printf("%*zu  %-*s  %*zu  %*.17g  %*.15g  %*.15g  %*.15g\n", w[0], k + 1, w[1],
               lt_cluster_name(r->c, i), w[2], i, w[3], r->feasible[k].score, w[4],
               f.cpu - r->t.req.cpu, w[5], f.mem - r->t.req.mem, w[6], f.disk - r->t.req.disk);
    }
    printf("infeasible: %zu of %zu machines (offline, or the task does not fit)\n", r->n_infeasible,
           n);
    if (r->chosen == LT_NO_MACHINE)
        printf("chosen: none (the task fits on no machine)\n");
    else
        printf("chosen: %s (index %zu, score %.17g)\n", lt_cluster_name(r->c, r->chosen), r->chosen,
               score_of(r, r->chosen));
}

/* {"machine": name, "index": i, "score": s} for feasible machine i. */
static json_t *machine_json(const struct score_run *r, size_t i, double score)
{
    return json_pack("{s:s, s:I, s:f}", "machine", lt_cluster_name(r->c, i), "index", (json_int_t)i,
                     "score", score);
}

static int print_json(const struct score_run *r, struct lt_err *err)
{
    json_t *scores = json_array(), *root, *chosen;
    int rc = 0;

    for (size_t k = 0; scores != NULL && k < r->n_feasible; k++) {
        const struct scored *s = &r->feasible[k];
        if (json_array_append_new(scores, machine_json(r, s->machine, s->score)) < 0) {
            json_decref(scores);
            scores = NULL;
        }
    }
    if (r->chosen == LT_NO_MACHINE)
        chosen = json_null();
    else
        chosen = machine_json(r, r->chosen, score_of(r, r->chosen));
    /* json_pack takes the "o" references, also when it fails (NULL ones included). */
    root = json_pack("{s:s, s:o, s:o, s:I, s:o}", "policy", lt_policy_name(r->p), "task",
                     sim_task_to_json(&r->t), "scores", scores, "infeasible",
                     (json_int_t)r->n_infeasible, "chosen", chosen);
    if (root == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building the JSON output");
    if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0 || putchar('\n') == EOF)
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write the JSON output");
    json_decref(root);
    return rc;
}

/* "'NAME' (index I)" or "no machine", for messages. */
static const char *label(const struct score_run *r, size_t i, char *buf, size_t size)
{
    if (i == LT_NO_MACHINE || i >= lt_cluster_size(r->c))
        snprintf(buf, size, "no machine");
    else
        snprintf(buf, size, "'%s' (index %zu)", lt_cluster_name(r->c, i), i);
    return buf;
}

/* Loads the inputs, scores, prints. Returns an exit status; r's resources are the caller's
 * to free. */
static int run(const struct score_opts *o, struct score_run *r, struct lt_err *err)
{
    struct sim_load_stats st;
    size_t best = LT_NO_MACHINE;
    char a[LT_MAX_NAME + 32], b[LT_MAX_NAME + 32];

    if (sim_policy_find(o->policy, false, &r->p, err) < 0)
        return sim_policy_usage_error(spec.name, err);
    if (sim_cluster_load(o->cluster, &r->c, &st, err) < 0 ||
        sim_task_load(o->task, &r->t, err) < 0) {
        sim_err_print(err);
        return SIM_EXIT_INPUT;
    }
    lt_err_set_source(err, NULL);
    if (st.n_overcommitted > 0)
        fprintf(stderr, "lotus-sim: %s: note: overcommitted machines (they fit no task): %zu\n",
                o->cluster, st.n_overcommitted);
    if (rank_and_choose(r, o->seed, &best, err) < 0) {
        sim_err_print(err);
        return SIM_EXIT_INPUT;
    }
    if (r->chosen != best) {
        fprintf(stderr, "lotus-sim: internal error: policy '%s' chose %s but ranks %s first\n",
                lt_policy_name(r->p), label(r, r->chosen, a, sizeof(a)),
                label(r, best, b, sizeof(b)));
        return SIM_EXIT_INTERNAL;
    }
    if (o->json) {
        if (print_json(r, err) < 0) {
            sim_err_print(err);
            return SIM_EXIT_INPUT;
        }
    } else {
        print_text(r, o->seed);
    }
    return SIM_EXIT_OK;
}

int sim_cmd_score(int argc, char **argv)
{
    struct score_opts o;
    struct score_run r;
    struct lt_err err;
    int status;

    lt_err_init(&err, NULL);
    status = parse_args(argc, argv, &o, &err);
    if (status < 0)
        return sim_policy_usage_error(spec.name, &err);
    if (status == 1)
        return SIM_EXIT_OK;
    memset(&r, 0, sizeof(r));
    r.chosen = LT_NO_MACHINE;
    status = run(&o, &r, &err);
    lt_free(r.feasible);
    lt_cluster_free(r.c);
    return status;
}
