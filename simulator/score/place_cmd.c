/* place_cmd.c -- `lotus-sim place`: a sequence of tasks placed one by one on a cluster
 * snapshot, as a scheduler that sees each task arrive alone would place them.
 *
 * For each task of --tasks in file order: lt_policy_choose (the replay's hot path) picks the
 * machine, and lt_cluster_place puts the task there, so the next task sees it; a task that
 * fits nowhere stays unplaced and changes nothing. This is what lotus-extender's prioritize
 * makes kube-scheduler do when its own score plugins are off: the policy's choice is the only
 * node at the top score (docs/extender.md, "prioritize"), and the end-to-end suite checks that
 * every pod lands where this command says (tests/e2e, TestSameDecisionsAsTheSimulator).
 *
 * Every choice is also checked against lt_policy_rank over all machines plus lt_scores_best
 * (the naive path, with an RNG seeded the same way); a disagreement is an internal error
 * (exit 70), as in `lotus-sim score`.
 *
 * Output: CSV on stdout, a header then one row per task: index, id, machine name (empty when
 * the task fits nowhere); or with --json one object (docs/cli.md).
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

struct place_opts {
    const char *policy;  /* --policy NAME */
    const char *cluster; /* --cluster FILE */
    const char *tasks;   /* --tasks FILE */
    uint64_t seed;       /* --seed N: seeds the policy's random stream */
    bool json;           /* --json */
    bool list;           /* --list-policies */
};

#define OPT(name, kind, field, arg, help, def)                                                     \
    SIM_OPT_ROW(struct place_opts, name, kind, field, arg, help, def)

static const struct sim_opt opts[] = {
    OPT("--policy", SIM_OPT_STR, policy, "NAME", "placement policy (required; see --list-policies)",
        NULL),
    OPT("--cluster", SIM_OPT_STR, cluster, "FILE",
        "cluster snapshot, JSON (required; docs/formats.md)", NULL),
    OPT("--tasks", SIM_OPT_STR, tasks, "FILE",
        "a JSON array of tasks (required; docs/formats.md,\n\"Task\")", NULL),
    OPT("--json", SIM_OPT_FLAG, json, NULL, "one JSON object instead of CSV", NULL),
    OPT("--seed", SIM_OPT_U64, seed, "N", "seed of the policy's random stream", "1"),
    OPT("--list-policies", SIM_OPT_FLAG, list, NULL,
        "print the placement policies, one per line, and exit", NULL),
};

static const struct sim_cmd_spec spec = {
    "place",
    "--policy NAME --cluster CLUSTER.json --tasks TASKS.json\n"
    "                       [--json] [--seed N]\n"
    "       lotus-sim place --list-policies",
    "Places the tasks one by one, in file order, on the cluster snapshot: each goes to\n"
    "the machine the policy chooses given the tasks placed before it, or nowhere if it\n"
    "fits nowhere. Prints one CSV row per task: index,id,machine (empty: unplaced).",
    "lotus-sim place --policy bestfit1 --cluster tests/fixtures/score/cluster.json \\\n"
    "      --tasks tests/fixtures/score/tasks.json",
    "exit status: 0 done (also when tasks stay unplaced), 1 bad input file,\n"
    "2 usage error, 70 internal error",
    opts,
    sizeof(opts) / sizeof(opts[0])};

/* Returns 0 to run, 1 when done (--help, --list-policies), or a negative LT_E*. */
static int parse_args(int argc, char **argv, struct place_opts *o, struct lt_err *err)
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
    if (o->tasks == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "missing --tasks");
    return 0;
}

/* The naive path: rank over every machine, then the best. */
static int naive_best(const struct lt_policy *p, const struct lt_cluster *c,
                      const struct lt_task *t, struct lt_rng *rng, size_t *cand, double *scores,
                      size_t *out, struct lt_err *err)
{
    size_t n = lt_cluster_size(c), b;
    int rc;

    for (size_t i = 0; i < n; i++)
        cand[i] = i;
    rc = lt_policy_rank(p, c, t, cand, n, rng, scores, err);
    if (rc < 0)
        return rc;
    b = lt_scores_best(cand, scores, n);
    *out = b == LT_NO_MACHINE ? LT_NO_MACHINE : cand[b];
    return 0;
}

/* Places tasks[0..n-1] in order; chosen[k] is task k's machine or LT_NO_MACHINE. Returns 0
 * or a negative LT_E*. *mismatch is the first task whose choose disagreed with the naive path
 * (placing stops there), or n. */
static int place_all(const struct lt_policy *p, struct lt_cluster *c, const struct lt_task *tasks,
                     size_t n, uint64_t seed, size_t *chosen, size_t *mismatch, struct lt_err *err)
{
    size_t m = lt_cluster_size(c), pid, naive;
    struct lt_rng fast_rng, naive_rng;
    size_t *cand = lt_calloc(m ? m : 1, sizeof(*cand));
    double *scores = lt_calloc(m ? m : 1, sizeof(*scores));
    int rc;

    *mismatch = n;
    if (cand == NULL || scores == NULL) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu machines", m);
        goto out;
    }
    lt_rng_init(&fast_rng, seed, LT_RNG_POLICY);
    lt_rng_init(&naive_rng, seed, LT_RNG_POLICY);
    rc = lt_policy_attach(p, c, err);
    for (size_t k = 0; k < n && rc == 0; k++) {
        rc = naive_best(p, c, &tasks[k], &naive_rng, cand, scores, &naive, err);
        if (rc == 0)
            rc = lt_policy_choose(p, c, &tasks[k], &fast_rng, &chosen[k], err);
        if (rc < 0)
            break;
        if (chosen[k] != naive) {
            *mismatch = k;
            chosen[k] = naive;
            break;
        }
        if (chosen[k] != LT_NO_MACHINE)
            rc = lt_cluster_place(c, chosen[k], &tasks[k], 0, &pid, err);
    }
out:
    lt_free(cand);
    lt_free(scores);
    return rc;
}

static void print_csv(const struct lt_cluster *c, const struct lt_task *tasks, size_t n,
                      const size_t *chosen)
{
    printf("index,id,machine\n");
    for (size_t k = 0; k < n; k++)
        printf("%zu,%" PRId64 ",%s\n", k, (int64_t)tasks[k].id,
               chosen[k] == LT_NO_MACHINE ? "" : lt_cluster_name(c, chosen[k]));
}

static int print_json(const struct lt_policy *p, const struct lt_cluster *c,
                      const struct lt_task *tasks, size_t n, const size_t *chosen)
{
    json_t *o = json_object(), *a = json_array();
    size_t placed = 0;
    char *s;

    if (o == NULL || a == NULL)
        goto fail;
    for (size_t k = 0; k < n; k++) {
        json_t *row =
            json_pack("{s:I, s:I, s:s?}", "index", (json_int_t)k, "id", (json_int_t)tasks[k].id,
                      "machine", chosen[k] == LT_NO_MACHINE ? NULL : lt_cluster_name(c, chosen[k]));
        if (row == NULL || json_array_append_new(a, row) < 0)
            goto fail;
        placed += chosen[k] != LT_NO_MACHINE;
    }
    if (json_object_set_new(o, "policy", json_string(lt_policy_name(p))) < 0 ||
        json_object_set_new(o, "placed", json_integer((json_int_t)placed)) < 0 ||
        json_object_set_new(o, "unplaced", json_integer((json_int_t)(n - placed))) < 0 ||
        json_object_set(o, "placements", a) < 0)
        goto fail;
    s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s == NULL)
        goto fail;
    puts(s);
    free(s);
    json_decref(a);
    json_decref(o);
    return 0;
fail:
    json_decref(a);
    json_decref(o);
    return -1;
}

int sim_cmd_place(int argc, char **argv)
{
    const struct lt_policy *p;
    struct lt_cluster *c = NULL;
    struct lt_task *tasks = NULL;
    size_t n = 0, bad = 0, *chosen = NULL;
    struct place_opts o;
    struct lt_err e;
    int rc, status = SIM_EXIT_OK;

    lt_err_init(&e, NULL);
    rc = parse_args(argc, argv, &o, &e);
    if (rc < 0 || (rc == 0 && sim_policy_find(o.policy, false, &p, &e) < 0))
        return sim_policy_usage_error(spec.name, &e);
    if (rc == 1)
        return SIM_EXIT_OK;
    if (sim_cluster_load(o.cluster, &c, NULL, &e) < 0 ||
        sim_tasks_load(o.tasks, &tasks, &n, &e) < 0) {
        sim_err_print(&e);
        status = e.code == LT_ENOMEM ? SIM_EXIT_INTERNAL : SIM_EXIT_INPUT;
        goto out;
    }
    chosen = lt_calloc(n ? n : 1, sizeof(*chosen));
    if (chosen == NULL) {
        lt_err_set(&e, LT_ENOMEM, 0, 0, "out of memory for %zu tasks", n);
        sim_err_print(&e);
        status = SIM_EXIT_INTERNAL;
        goto out;
    }
    lt_err_init(&e, NULL);
    rc = place_all(p, c, tasks, n, o.seed, chosen, &bad, &e);
    if (rc < 0) {
        sim_err_print(&e);
        status = rc == LT_ENOMEM ? SIM_EXIT_INTERNAL : SIM_EXIT_INPUT;
        goto out;
    }
    if (bad < n) {
        fprintf(stderr,
                "lotus-sim: internal error: task %zu: policy '%s' chose another machine "
                "than its rank over all machines (%s)\n",
                bad, lt_policy_name(p),
                chosen[bad] == LT_NO_MACHINE ? "none" : lt_cluster_name(c, chosen[bad]));
        status = SIM_EXIT_INTERNAL;
        goto out;
    }
    if (o.json) {
        if (print_json(p, c, tasks, n, chosen) < 0) {
            fprintf(stderr, "lotus-sim: out of memory writing JSON\n");
            status = SIM_EXIT_INTERNAL;
        }
    } else {
        print_csv(c, tasks, n, chosen);
    }
out:
    lt_free(chosen);
    lt_free(tasks);
    lt_cluster_free(c);
    return status;
}
