/* job.c -- the --job file of `lotus-sim whatif` (whatif.h; docs/whatif.md): one job, its
 * priority, scheduling class and groups of equal tasks. Every error names the file and the
 * JSON path of the value (cli/jsonpath.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/jsonpath.h"
#include "whatif/whatif.h"

/* An integer in [lo, hi] at key of o (def when absent and has_def). */
static int get_int(json_t *o, const char *key, const char *where, long long lo, long long hi,
                   bool has_def, long long def, long long *out, struct lt_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (!has_def)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s.%s: missing", where, key);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s.%s: must be an integer in %lld..%lld", where,
                          key, lo, hi);
    *out = json_integer_value(v);
    return 0;
}

/* A number at key of o, > 0 (or >= 0 with zero_ok) and <= hi. */
static int get_num(json_t *o, const char *key, const char *where, bool zero_ok, double hi,
                   double *out, struct lt_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s.%s: missing", where, key);
    double x = json_number_value(v);
    if (!json_is_number(v) || !isfinite(x) || !(zero_ok ? x >= 0 : x > 0) || x > hi)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s.%s: must be a number %s 0 and at most %g",
                          where, key, zero_ok ? ">=" : ">", hi);
    *out = x;
    return 0;
}

static int job_from_json(json_t *root, struct sim_whatif_job *job, struct lt_err *err)
{
    static const char *const top[] = {"name", "priority", "sched_class", "tasks"};
    static const char *const tkeys[] = {"count", "cpu", "mem", "disk", "duration_s"};
    long long v;
    int rc;

    memset(job, 0, sizeof(*job));
    if ((rc = sim_jp_object(root, "$", top, 4, err)) < 0)
        return rc;
    json_t *name = json_object_get(root, "name");
    if (name && (!json_is_string(name) || json_string_length(name) >= sizeof(job->name) ||
                 json_string_length(name) == 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "$.name: must be a string of 1..%zu bytes",
                          sizeof(job->name) - 1);
    snprintf(job->name, sizeof(job->name), "%s", name ? json_string_value(name) : "job");
    if ((rc = get_int(root, "priority", "$", 0, 11, false, 0, &v, err)) < 0)
        return rc;
    job->priority = (int)v;
    if ((rc = get_int(root, "sched_class", "$", 0, 3, true, 0, &v, err)) < 0)
        return rc;
    job->sched_class = (int)v;
    json_t *tasks = json_object_get(root, "tasks");
    if (!tasks)
        return lt_err_set(err, LT_EINVAL, 0, 0, "$.tasks: missing");
    if (!json_is_array(tasks) || json_array_size(tasks) == 0 ||
        json_array_size(tasks) > SIM_WHATIF_MAX_GROUPS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "$.tasks: must be an array of 1..%d objects",
                          SIM_WHATIF_MAX_GROUPS);
    for (size_t i = 0; i < json_array_size(tasks); i++) {
        json_t *t = json_array_get(tasks, i);
        char where[32];
        struct sim_inject_group *g = &job->groups[i];
        double d;
        snprintf(where, sizeof(where), "$.tasks[%zu]", i);
        if ((rc = sim_jp_object(t, where, tkeys, 5, err)) < 0 ||
            (rc = get_int(t, "count", where, 1, 100000, true, 1, &v, err)) < 0)
            return rc;
        g->count = (uint32_t)v;
        if ((rc = get_num(t, "cpu", where, false, 1.0, &g->req.cpu, err)) < 0 ||
            (rc = get_num(t, "mem", where, false, 1.0, &g->req.mem, err)) < 0 ||
            (rc = get_num(t, "disk", where, true, 1.0, &g->req.disk, err)) < 0 ||
            (rc = get_num(t, "duration_s", where, false, 1e9, &d, err)) < 0)
            return rc;
        g->duration_us = (int64_t)llround(d * 1e6);
        if (g->duration_us <= 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s.duration_s: must be at least 1 us", where);
        job->n_tasks += g->count;
    }
    job->n_groups = json_array_size(tasks);
    if (job->n_tasks > 100000)
        return lt_err_set(err, LT_EINVAL, 0, 0, "$.tasks: %llu tasks, at most 100000",
                          (unsigned long long)job->n_tasks);
    return 0;
}

int sim_whatif_job_load(const char *path, struct sim_whatif_job *job, struct lt_err *err)
{
    struct sim_whatif_job tmp;
    json_t *root;
    int rc = sim_jp_load(path, &root, err);
    if (rc < 0)
        return rc;
    rc = job_from_json(root, &tmp, err);
    json_decref(root);
    if (rc == 0) {
        *job = tmp;
        lt_err_set_source(err, NULL);
    }
    return rc;
}

int sim_whatif_job_check(const char *path, const struct sim_whatif_job *job, struct lt_res max,
                         struct lt_err *err)
{
    for (size_t i = 0; i < job->n_groups; i++) {
        const struct lt_res *q = &job->groups[i].req;
        const char *key = q->cpu > max.cpu     ? "cpu"
                          : q->mem > max.mem   ? "mem"
                          : q->disk > max.disk ? "disk"
                                               : NULL;
        if (key) {
            double lim = key[0] == 'c' ? max.cpu : key[0] == 'm' ? max.mem : max.disk;
            lt_err_set_source(err, path);
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "$.tasks[%zu].%s: must be > 0 and at most the largest machine's "
                              "capacity, %g in this trace",
                              i, key, lim);
        }
    }
    return 0;
}
