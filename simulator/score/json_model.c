/* json_model.c -- the simulator's JSON formats: cluster snapshot and task (docs/formats.md).
 *
 * Design: a file is parsed whole with Jansson (JSON_REJECT_DUPLICATES, so a repeated key is a
 * syntax error with line and column) and then walked by one small validator per object type.
 * Each validator gets the JSON path of its value ("$.machines[3].capacity") and reports the
 * first problem as "PATH: what, got VALUE", with the file as the error's source; syntax
 * errors keep Jansson's line and column instead. Every object is checked for unknown keys:
 * a misspelt "capacty" must fail loudly rather than default silently (STYLE.md R7).
 *
 * Building the cluster: the machine specs borrow their names from the parsed document, so
 * the document lives until lt_cluster_new has copied them. The loader checks what it can
 * name by path (types, ranges, duplicate names) before calling the library, so library
 * errors are left for what the format cannot express (out of memory). Tasks listed under a
 * machine are placed in file order; one that does not fit is placed with LT_PLACE_FORCE
 * (an overcommitted snapshot, e.g. a node whose allocatable shrank, is legal). Machines with
 * "online": false are taken offline last, and may not list tasks.
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/jsonpath.h"
#include "lt_mem.h"

/* Longest JSON path built here: "$.machines[16777215].tasks[<20 digits>].request.disk" is
 * 61 bytes, within SIM_JP_LEN. */
#define PATH_LEN  SIM_JP_LEN
#define QUOTE_MAX SIM_JP_QUOTE

static const char *const res_keys[] = {"cpu", "mem", "disk"};
static const char *const task_keys[] = {"id", "job", "priority", "class", "request"};
static const char *const machine_keys[] = {"name", "capacity", "online", "tasks"};
static const char *const cluster_keys[] = {"ref", "seed", "machines"};

#define N_KEYS(a) (sizeof(a) / sizeof((a)[0]))

/* A resource object at `at`: a capacity (cpu, mem, disk all required, > 0) or a request
 * (cpu, mem required, disk optional and 0 if absent, all >= 0). */
static int parse_res(json_t *v, const char *at, bool capacity, struct lt_res *out,
                     struct lt_err *err)
{
    double x[3] = {0.0, 0.0, 0.0};
    char sub[PATH_LEN];
    int rc = sim_jp_object(v, at, res_keys, N_KEYS(res_keys), err);

    for (size_t d = 0; rc == 0 && d < 3; d++) {
        json_t *m;

        rc = sim_jp_member(v, at, res_keys[d], capacity || d < 2, &m, err);
        if (rc < 0 || m == NULL)
            continue;
        sim_jp_key(sub, at, res_keys[d]);
        rc = sim_jp_number(m, sub, capacity, &x[d], err);
    }
    if (rc < 0)
        return rc;
    out->cpu = x[0];
    out->mem = x[1];
    out->disk = x[2];
    return 0;
}

/* An optional integer member of obj in [lo, hi], *out unchanged if absent. */
static int opt_integer(json_t *obj, const char *at, const char *key, json_int_t lo, json_int_t hi,
                       json_int_t *out, struct lt_err *err)
{
    json_t *m = json_object_get(obj, key);
    char sub[PATH_LEN];

    if (m == NULL)
        return 0;
    sim_jp_key(sub, at, key);
    return sim_jp_integer(m, sub, lo, hi, out, err);
}

/* A TASK object at `at`. */
static int parse_task(json_t *v, const char *at, struct lt_task *out, struct lt_err *err)
{
    json_int_t id = 0, job = 0, prio = 0, cls = 0;
    json_t *req;
    char sub[PATH_LEN];
    struct lt_task t;
    int rc;

    memset(&t, 0, sizeof(t));
    rc = sim_jp_object(v, at, task_keys, N_KEYS(task_keys), err);
    if (rc == 0)
        rc = opt_integer(v, at, "id", INT64_MIN, INT64_MAX, &id, err);
    if (rc == 0)
        rc = opt_integer(v, at, "job", INT64_MIN, INT64_MAX, &job, err);
    if (rc == 0)
        rc = opt_integer(v, at, "priority", INT_MIN, INT_MAX, &prio, err);
    if (rc == 0)
        rc = opt_integer(v, at, "class", INT_MIN, INT_MAX, &cls, err);
    if (rc == 0)
        rc = sim_jp_member(v, at, "request", true, &req, err);
    if (rc < 0)
        return rc;
    sim_jp_key(sub, at, "request");
    rc = parse_res(req, sub, false, &t.req, err);
    if (rc < 0)
        return rc;
    t.id = id;
    t.job_id = job;
    t.priority = (int)prio;
    t.sched_class = (int)cls;
    *out = t;
    return 0;
}

/* The machine name at `at`: a string of 1..LT_MAX_NAME bytes without control characters
 * (it is printed in tables and must be one Kubernetes node name at most). */
static int parse_name(json_t *v, const char *at, const char **out, struct lt_err *err)
{
    const char *s;
    size_t len;

    if (!json_is_string(v))
        return sim_jp_bad_value(err, at, "a string", v);
    s = json_string_value(v);
    len = json_string_length(v);
    if (len == 0 || len > LT_MAX_NAME)
        return sim_jp_bad(err, LT_EINVAL, at, "expected a name of 1..%d bytes, got %zu bytes",
                          LT_MAX_NAME, len);
    for (size_t k = 0; k < len; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (ch < 0x20 || ch == 0x7f)
            return sim_jp_bad(err, LT_EINVAL, at, "control character 0x%02x in name \"%.*s\"", ch,
                              QUOTE_MAX, s);
    }
    *out = s;
    return 0;
}

/* Machine i of the cluster document: its spec (name borrowed from v). Checks the tasks
 * array's type and that an offline machine lists none; the tasks themselves are parsed
 * when they are placed. */
static int parse_machine(json_t *v, size_t i, struct lt_machine_spec *ms, struct lt_err *err)
{
    char at[PATH_LEN], sub[PATH_LEN];
    json_t *name, *cap, *online, *tasks;
    int rc;

    sim_jp_index(at, "$.machines", i);
    rc = sim_jp_object(v, at, machine_keys, N_KEYS(machine_keys), err);
    if (rc == 0)
        rc = sim_jp_member(v, at, "name", true, &name, err);
    if (rc == 0)
        rc = sim_jp_member(v, at, "capacity", true, &cap, err);
    if (rc < 0)
        return rc;
    sim_jp_key(sub, at, "name");
    rc = parse_name(name, sub, &ms->name, err);
    if (rc < 0)
        return rc;
    sim_jp_key(sub, at, "capacity");
    rc = parse_res(cap, sub, true, &ms->cap, err);
    if (rc < 0)
        return rc;
    online = json_object_get(v, "online");
    sim_jp_key(sub, at, "online");
    if (online != NULL && !json_is_boolean(online))
        return sim_jp_bad_value(err, sub, "true or false", online);
    tasks = json_object_get(v, "tasks");
    sim_jp_key(sub, at, "tasks");
    if (tasks != NULL && !json_is_array(tasks))
        return sim_jp_bad_value(err, sub, "an array", tasks);
    if (json_is_false(online) && json_array_size(tasks) > 0)
        return sim_jp_bad(err, LT_EINVAL, sub, "offline machine '%.*s' cannot run tasks", QUOTE_MAX,
                          ms->name);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const struct lt_machine_spec *x = *(const struct lt_machine_spec *const *)a;
    const struct lt_machine_spec *y = *(const struct lt_machine_spec *const *)b;
    int d = strcmp(x->name, y->name);

    if (d != 0)
        return d;
    return x < y ? -1 : x > y;
}

/* Finds the first machine (in file order) whose name an earlier machine already has, so
 * the error names the later path. O(n log n). */
static int check_unique_names(const struct lt_machine_spec *ms, size_t n, struct lt_err *err)
{
    const struct lt_machine_spec **sorted;
    size_t dup = LT_NO_MACHINE, first = 0;
    char m[PATH_LEN], at[PATH_LEN];

    if (n < 2)
        return 0;
    sorted = lt_calloc(n, sizeof(*sorted));
    if (sorted == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory checking %zu machine names", n);
    for (size_t i = 0; i < n; i++)
        sorted[i] = &ms[i];
    qsort(sorted, n, sizeof(*sorted), by_name);
    for (size_t k = 1; k < n; k++) {
        size_t later = (size_t)(sorted[k] - ms);
        if (strcmp(sorted[k - 1]->name, sorted[k]->name) != 0 || later > dup)
            continue;
        /* sorted[k - 1] is an earlier machine of the same name (ties sort by position). */
        dup = later;
        first = (size_t)(sorted[k - 1] - ms);
    }
    lt_free(sorted);
    if (dup == LT_NO_MACHINE)
        return 0;
    sim_jp_index(m, "$.machines", dup);
    sim_jp_key(at, m, "name");
    return sim_jp_bad(err, LT_EINVAL, at, "duplicate machine name '%.*s' (also $.machines[%zu])",
                      QUOTE_MAX, ms[dup].name, first);
}

/* The cluster document's top level into spec. On success *out_ms is the machine array that
 * spec->machines points to (owned, free with lt_free; names borrowed from root). */
static int parse_cluster(json_t *root, struct lt_cluster_spec *spec,
                         struct lt_machine_spec **out_ms, struct lt_err *err)
{
    json_t *ref = NULL, *machines = NULL;
    struct lt_machine_spec *ms;
    json_int_t seed = 0;
    size_t n;
    int rc;

    rc = sim_jp_object(root, "$", cluster_keys, N_KEYS(cluster_keys), err);
    if (rc == 0)
        rc = sim_jp_member(root, "$", "machines", true, &machines, err);
    if (rc == 0)
        rc = opt_integer(root, "$", "seed", 0, INT64_MAX, &seed, err);
    ref = json_object_get(root, "ref");
    if (rc == 0 && ref != NULL)
        rc = parse_res(ref, "$.ref", true, &spec->ref, err);
    if (rc < 0)
        return rc;
    if (!json_is_array(machines))
        return sim_jp_bad_value(err, "$.machines", "an array", machines);
    n = json_array_size(machines);
    if (n > LT_MAX_MACHINES)
        return sim_jp_bad(err, LT_ERANGE, "$.machines", "too many machines: %zu (limit %lu)", n,
                          (unsigned long)LT_MAX_MACHINES);
    if (n == 0 && ref == NULL)
        return sim_jp_bad(err, LT_EINVAL, "$.machines",
                          "an empty cluster needs a reference capacity \"ref\"");
    ms = lt_calloc(n, sizeof(*ms));
    if (ms == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu machines", n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = parse_machine(json_array_get(machines, i), i, &ms[i], err);
    if (rc == 0)
        rc = check_unique_names(ms, n, err);
    if (rc < 0) {
        lt_free(ms);
        return rc;
    }
    spec->machines = ms;
    spec->n_machines = n;
    spec->seed = (uint64_t)seed;
    *out_ms = ms;
    return 0;
}

/* Places the tasks listed under machine i (validated as an array by parse_machine). */
static int place_tasks(struct lt_cluster *c, size_t i, json_t *machine, struct sim_load_stats *st,
                       struct lt_err *err)
{
    json_t *tasks = json_object_get(machine, "tasks");
    bool over = false;
    char m[PATH_LEN], list[PATH_LEN], at[PATH_LEN];

    sim_jp_index(m, "$.machines", i);
    sim_jp_key(list, m, "tasks");
    for (size_t k = 0; k < json_array_size(tasks); k++) {
        struct lt_task t;
        unsigned flags = 0;
        size_t pid;
        int rc;

        sim_jp_index(at, list, k);
        rc = parse_task(json_array_get(tasks, k), at, &t, err);
        if (rc < 0)
            return rc;
        if (!lt_cluster_fits(c, i, &t.req)) {
            flags |= LT_PLACE_FORCE;
            over = true;
        }
        rc = lt_cluster_place(c, i, &t, flags, &pid, err);
        if (rc < 0)
            return rc;
        st->n_tasks++;
    }
    st->n_overcommitted += over;
    return 0;
}

/* Builds the cluster of a parsed, validated document. */
static int build_cluster(json_t *root, const struct lt_cluster_spec *spec, struct lt_cluster **out,
                         struct sim_load_stats *st, struct lt_err *err)
{
    json_t *machines = json_object_get(root, "machines");
    struct lt_cluster *c;
    int rc = 0;

    c = lt_cluster_new(spec, err);
    if (c == NULL)
        return err != NULL && err->code < 0 ? err->code : LT_ENOMEM;
    for (size_t i = 0; rc == 0 && i < spec->n_machines; i++)
        rc = place_tasks(c, i, json_array_get(machines, i), st, err);
    for (size_t i = 0; rc == 0 && i < spec->n_machines; i++) {
        if (json_is_false(json_object_get(json_array_get(machines, i), "online")))
            rc = lt_cluster_set_online(c, i, false, err);
    }
    if (rc < 0) {
        lt_cluster_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* Builds the cluster from a parsed document; takes the reference to root. */
static int cluster_from_json(json_t *root, struct lt_cluster **out, struct sim_load_stats *stats,
                             struct lt_err *err)
{
    struct lt_cluster_spec spec;
    struct lt_machine_spec *ms = NULL;
    struct sim_load_stats st = {0, 0};
    int rc;

    memset(&spec, 0, sizeof(spec));
    rc = parse_cluster(root, &spec, &ms, err);
    if (rc < 0)
        goto out_decref;
    rc = build_cluster(root, &spec, out, &st, err);
    lt_free(ms);
    if (rc == 0 && stats != NULL)
        *stats = st;

out_decref:
    json_decref(root);
    return rc;
}

int sim_cluster_load(const char *path, struct lt_cluster **out, struct sim_load_stats *stats,
                     struct lt_err *err)
{
    json_t *root;
    int rc;

    rc = sim_jp_load(path, &root, err);
    if (rc < 0)
        return rc;
    return cluster_from_json(root, out, stats, err);
}

int sim_cluster_load_buffer(const char *source, const char *buf, size_t len,
                            struct lt_cluster **out, struct sim_load_stats *stats,
                            struct lt_err *err)
{
    json_error_t je;
    json_t *root;

    lt_err_set_source(err, source);
    root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL && json_error_code(&je) == json_error_out_of_memory)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory parsing JSON");
    if (root == NULL)
        return lt_err_set(err, LT_EPARSE, je.line > 0 ? je.line : 0,
                          je.line > 0 && je.column < 1 ? 1 : je.column, "%s", je.text);
    return cluster_from_json(root, out, stats, err);
}

int sim_task_load(const char *path, struct lt_task *out, struct lt_err *err)
{
    json_t *root;
    int rc;

    rc = sim_jp_load(path, &root, err);
    if (rc < 0)
        return rc;
    rc = parse_task(root, "$", out, err);
    json_decref(root);
    return rc;
}

int sim_tasks_load(const char *path, struct lt_task **out, size_t *n_out, struct lt_err *err)
{
    char at[PATH_LEN];
    struct lt_task *v;
    json_t *root;
    size_t n;
    int rc;

    *out = NULL;
    *n_out = 0;
    rc = sim_jp_load(path, &root, err);
    if (rc < 0)
        return rc;
    if (!json_is_array(root)) {
        rc = sim_jp_bad_value(err, "$", "an array of tasks", root);
        json_decref(root);
        return rc;
    }
    n = json_array_size(root);
    v = lt_calloc(n ? n : 1, sizeof(*v));
    if (v == NULL) {
        json_decref(root);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu tasks", n);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        snprintf(at, sizeof(at), "$[%zu]", i);
        rc = parse_task(json_array_get(root, i), at, &v[i], err);
    }
    json_decref(root);
    if (rc < 0) {
        lt_free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return 0;
}

struct json_t *sim_task_to_json(const struct lt_task *t)
{
    return json_pack("{s:I, s:I, s:i, s:i, s:{s:f, s:f, s:f}}", "id", (json_int_t)t->id, "job",
                     (json_int_t)t->job_id, "priority", t->priority, "class", t->sched_class,
                     "request", "cpu", t->req.cpu, "mem", t->req.mem, "disk", t->req.disk);
}
