/* cluster.c -- machines, configurations, placements, and the two-step mutation protocol that
 * keeps attached policy indexes exact.
 *
 * Design: machines live in one array indexed 0..n-1 (indexes never change; a machine leaves
 * by going offline). Equal capacity vectors share a configuration id, found by a linear scan
 * over configurations (a cell has ~10, a Kubernetes cluster a few hundred at most). Placements
 * are copies of the caller's task in a slab with a free list, linked per machine newest
 * first, so eviction can walk a machine's tasks. Every state change of a machine goes through
 * change_machine(): all attached indexes prepare (may allocate, may fail), then the fields
 * change, then all indexes commit (cannot fail). A failed call therefore changes nothing.
 *
 * Floating point: allocations are running sums of doubles; when the last task leaves a
 * machine its allocation is reset to exactly 0, so an empty machine is exactly empty.
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lt_mem.h"

/* FNV-1a, 64 bits: name hashing for the name table and randfirstfit keys. */
static uint64_t hash_name(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* Exactly +0 or -0 (never NaN), without a float == (-Wfloat-equal). */
static bool is_zero(double x)
{
    return fpclassify(x) == FP_ZERO;
}

static bool finite_nonneg(double x)
{
    return isfinite(x) && x >= 0.0;
}

int lt_res_check_request(const struct lt_res *r, const char *what, struct lt_err *err)
{
    if (r == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: request is NULL", what);
    if (!finite_nonneg(r->cpu) || !finite_nonneg(r->mem) || !finite_nonneg(r->disk))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: request must be finite and >= 0, got cpu=%g mem=%g disk=%g", what,
                          r->cpu, r->mem, r->disk);
    return 0;
}

int lt_res_check_capacity(const struct lt_res *r, const char *what, struct lt_err *err)
{
    if (r == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: capacity is NULL", what);
    if (!(isfinite(r->cpu) && r->cpu > 0.0) || !(isfinite(r->mem) && r->mem > 0.0) ||
        !(isfinite(r->disk) && r->disk > 0.0))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: capacity must be finite and > 0, got cpu=%g mem=%g disk=%g", what,
                          r->cpu, r->mem, r->disk);
    return 0;
}

static bool res_same(const struct lt_res *a, const struct lt_res *b)
{
    return !(a->cpu < b->cpu) && !(b->cpu < a->cpu) && !(a->mem < b->mem) && !(b->mem < a->mem) &&
           !(a->disk < b->disk) && !(b->disk < a->disk);
}

/* ---- name table ---- */

static size_t name_slot(const struct lt_cluster *c, const char *name)
{
    size_t mask = c->names_cap - 1;
    size_t s = (size_t)hash_name(name) & mask;

    while (c->names[s] != 0 && strcmp(c->m[c->names[s] - 1].name, name) != 0)
        s = (s + 1) & mask;
    return s;
}

size_t lt_cluster_find(const struct lt_cluster *c, const char *name)
{
    size_t s;

    if (c == NULL || name == NULL || c->names_cap == 0)
        return LT_NO_MACHINE;
    s = name_slot(c, name);
    return c->names[s] == 0 ? LT_NO_MACHINE : (size_t)c->names[s] - 1;
}

/* Makes room for `want` machines in the machine array and the name table. */
static int reserve_machines(struct lt_cluster *c, size_t want, struct lt_err *err)
{
    if (want > c->m_cap) {
        size_t cap = c->m_cap ? c->m_cap : 16;
        struct lt__machine *m;

        while (cap < want)
            cap *= 2;
        m = lt_reallocarray(c->m, cap, sizeof(*m));
        if (m == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu machines", want);
        c->m = m;
        c->m_cap = cap;
    }
    if (2 * want > c->names_cap) {
        size_t cap = c->names_cap ? c->names_cap : 32;
        uint32_t *t, *old = c->names;

        while (cap < 2 * want)
            cap *= 2;
        t = lt_calloc(cap, sizeof(*t));
        if (t == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu machine names", want);
        c->names = t;
        c->names_cap = cap;
        for (size_t i = 0; i < c->n; i++)
            c->names[name_slot(c, c->m[i].name)] = (uint32_t)(i + 1);
        lt_free(old);
    }
    return 0;
}

static int check_machine_spec(const struct lt_cluster *c, const struct lt_machine_spec *ms,
                              size_t pos, struct lt_err *err)
{
    char what[LT_MAX_NAME + 16];
    size_t len;

    if (ms->name == NULL || (len = strlen(ms->name)) == 0 || len > LT_MAX_NAME)
        return lt_err_set(err, LT_EINVAL, 0, 0, "machine %zu: name must be 1..%d bytes", pos,
                          LT_MAX_NAME);
    snprintf(what, sizeof(what), "machine '%s'", ms->name);
    if (lt_res_check_capacity(&ms->cap, what, err) < 0)
        return LT_EINVAL;
    if (c->names_cap != 0 && lt_cluster_find(c, ms->name) != LT_NO_MACHINE)
        return lt_err_set(err, LT_EINVAL, 0, 0, "duplicate machine name '%s'", ms->name);
    return 0;
}

/* Configuration id for capacity cap, adding one if new. */
static int config_for(struct lt_cluster *c, const struct lt_res *cap, uint32_t *out,
                      struct lt_err *err)
{
    for (size_t k = 0; k < c->n_cfg; k++) {
        if (res_same(&c->cfg[k].cap, cap)) {
            *out = (uint32_t)k;
            return 0;
        }
    }
    if (c->n_cfg == c->cfg_cap) {
        size_t cap_n = c->cfg_cap ? 2 * c->cfg_cap : 8;
        struct lt__config *t = lt_reallocarray(c->cfg, cap_n, sizeof(*t));
        if (t == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for configurations");
        c->cfg = t;
        c->cfg_cap = cap_n;
    }
    c->cfg[c->n_cfg].cap = *cap;
    c->cfg[c->n_cfg].n_machines = 0;
    *out = (uint32_t)c->n_cfg++;
    return 0;
}

/* Appends machine ms (validated, room reserved). Only config_for can fail. */
static int append_machine(struct lt_cluster *c, const struct lt_machine_spec *ms,
                          struct lt_err *err)
{
    struct lt__machine *m = &c->m[c->n];
    uint64_t x;
    char *name;
    uint32_t cfg = 0;

    name = lt_strdup(ms->name);
    if (name == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for machine '%s'", ms->name);
    if (config_for(c, &ms->cap, &cfg, err) < 0) {
        lt_free(name);
        return LT_ENOMEM;
    }
    memset(m, 0, sizeof(*m));
    m->cap = ms->cap;
    m->config = cfg;
    m->online = true;
    m->name = name;
    m->first_pid = LT_NO_MACHINE;
    x = c->seed ^ hash_name(name);
    m->rkey = (double)(lt_splitmix64(&x) >> 11) * 0x1.0p-53;
    c->cfg[cfg].n_machines++;
    c->names[name_slot(c, name)] = (uint32_t)(c->n + 1);
    c->n++;
    c->n_online++;
    return 0;
}

/* Undoes the last append_machine (used when an index rebuild fails). */
static void pop_machine(struct lt_cluster *c)
{
    struct lt__machine *m = &c->m[c->n - 1];
    size_t s = name_slot(c, m->name);
    size_t mask = c->names_cap - 1;

    /* Delete from the linear-probing table by re-inserting the rest of the run. */
    c->names[s] = 0;
    for (size_t t = (s + 1) & mask; c->names[t] != 0; t = (t + 1) & mask) {
        uint32_t v = c->names[t];
        c->names[t] = 0;
        c->names[name_slot(c, c->m[v - 1].name)] = v;
    }
    c->cfg[m->config].n_machines--;
    if (c->cfg[m->config].n_machines == 0 && m->config == c->n_cfg - 1)
        c->n_cfg--;
    lt_free(m->name);
    c->n--;
    c->n_online--;
}

struct lt_cluster *lt_cluster_new(const struct lt_cluster_spec *spec, struct lt_err *err)
{
    struct lt_cluster *c;
    struct lt_res ref;

    if (spec == NULL || (spec->n_machines > 0 && spec->machines == NULL)) {
        lt_err_set(err, LT_EINVAL, 0, 0, "cluster spec is NULL or has no machine array");
        return NULL;
    }
    if (spec->n_machines > LT_MAX_MACHINES) {
        lt_err_set(err, LT_EINVAL, 0, 0, "too many machines: %zu (limit %u)", spec->n_machines,
                   (unsigned)LT_MAX_MACHINES);
        return NULL;
    }
    ref = spec->ref;
    if (is_zero(ref.cpu) && is_zero(ref.mem) && is_zero(ref.disk)) {
        if (spec->n_machines == 0) {
            lt_err_set(err, LT_EINVAL, 0, 0,
                       "cluster has no machines and no reference capacity 'ref'");
            return NULL;
        }
        for (size_t i = 0; i < spec->n_machines; i++) {
            const struct lt_res *cap = &spec->machines[i].cap;
            ref.cpu = fmax(ref.cpu, cap->cpu);
            ref.mem = fmax(ref.mem, cap->mem);
            ref.disk = fmax(ref.disk, cap->disk);
        }
    }
    c = lt_calloc(1, sizeof(*c));
    if (c == NULL) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the cluster");
        return NULL;
    }
    c->magic = LT__CLUSTER_MAGIC;
    c->seed = spec->seed;
    c->pl_free = LT_NO_MACHINE;
    c->ref = ref;
    if (reserve_machines(c, spec->n_machines, err) < 0)
        goto out_free;
    for (size_t i = 0; i < spec->n_machines; i++) {
        if (check_machine_spec(c, &spec->machines[i], i, err) < 0 ||
            append_machine(c, &spec->machines[i], err) < 0)
            goto out_free;
    }
    if (lt_res_check_capacity(&c->ref, "reference capacity 'ref'", err) < 0)
        goto out_free;
    return c;

out_free:
    lt_cluster_free(c);
    return NULL;
}

void lt_cluster_free(struct lt_cluster *c)
{
    if (c == NULL)
        return;
    assert(c->magic == LT__CLUSTER_MAGIC);
    for (size_t k = 0; k < c->n_ix; k++)
        c->ix[k]->ops->free(c->ix[k]);
    for (size_t i = 0; i < c->n; i++)
        lt_free(c->m[i].name);
    lt_free(c->ix);
    lt_free(c->m);
    lt_free(c->cfg);
    for (size_t k = 0; k < c->pl_cap / LT__PL_CHUNK; k++)
        lt_free(c->pl[k]);
    lt_free(c->pl);
    lt_free(c->names);
    c->magic = 0;
    lt_free(c);
}

/* Rebuilds every attached index from the cluster; all or nothing. */
static int rebuild_indexes(struct lt_cluster *c, struct lt_err *err)
{
    struct lt_index **fresh;
    size_t k;
    int rc = 0;

    if (c->n_ix == 0)
        return 0;
    fresh = lt_calloc(c->n_ix, sizeof(*fresh));
    if (fresh == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory rebuilding policy indexes");
    for (k = 0; k < c->n_ix; k++) {
        const struct lt_policy *p = c->ix[k]->policy;
        rc = p->index_new(p, c, &fresh[k], err);
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        while (k-- > 0)
            fresh[k]->ops->free(fresh[k]);
    } else {
        for (k = 0; k < c->n_ix; k++) {
            c->ix[k]->ops->free(c->ix[k]);
            c->ix[k] = fresh[k];
            c->ix[k]->serial = ++c->ix_serial; /* a new index, maybe at a freed one's address */
        }
    }
    lt_free(fresh);
    return rc;
}

int lt_cluster_add_machine(struct lt_cluster *c, const struct lt_machine_spec *ms,
                           size_t *out_index, struct lt_err *err)
{
    int rc;

    if (c == NULL || ms == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "add machine: NULL argument");
    if (c->n >= LT_MAX_MACHINES)
        return lt_err_set(err, LT_EINVAL, 0, 0, "too many machines (limit %u)",
                          (unsigned)LT_MAX_MACHINES);
    rc = check_machine_spec(c, ms, c->n, err);
    if (rc < 0)
        return rc;
    rc = reserve_machines(c, c->n + 1, err);
    if (rc < 0)
        return rc;
    rc = append_machine(c, ms, err);
    if (rc < 0)
        return rc;
    rc = rebuild_indexes(c, err);
    if (rc < 0) {
        pop_machine(c);
        return rc;
    }
    if (out_index != NULL)
        *out_index = c->n - 1;
    return 0;
}

/* The two-step protocol: every index prepares for machine i's new state, then the caller
 * changes the fields, then commit_machine tells every index. */
static int prepare_machine(struct lt_cluster *c, size_t i, const struct lt_res *nf, bool non,
                           struct lt_err *err)
{
    for (size_t k = 0; k < c->n_ix; k++) {
        if (c->ix[k]->ops->prepare(c->ix[k], c, i, nf, non) < 0)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory updating the '%s' index",
                              c->ix[k]->policy->name);
    }
    return 0;
}

static void commit_machine(struct lt_cluster *c, size_t i, const struct lt_res *of, bool oon)
{
    for (size_t k = 0; k < c->n_ix; k++)
        c->ix[k]->ops->commit(c->ix[k], c, i, of, oon);
}

int lt__prepare_none(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                     const struct lt_res *nf, bool non)
{
    (void)ix;
    (void)c;
    (void)i;
    (void)nf;
    (void)non;
    return 0;
}

static int check_index(const struct lt_cluster *c, size_t i, struct lt_err *err)
{
    if (c == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "cluster is NULL");
    if (i >= c->n)
        return lt_err_set(err, LT_EINVAL, 0, 0, "machine index %zu out of range (cluster has %zu)",
                          i, c->n);
    return 0;
}

int lt_cluster_set_online(struct lt_cluster *c, size_t i, bool online, struct lt_err *err)
{
    struct lt__machine *m;
    struct lt_res f;
    int rc = check_index(c, i, err);

    if (rc < 0)
        return rc;
    m = &c->m[i];
    if (m->online == online)
        return 0;
    if (!online && m->n_tasks > 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "machine '%s' has %u tasks; remove them before taking it offline",
                          m->name, (unsigned)m->n_tasks);
    f = lt__free(m);
    rc = prepare_machine(c, i, &f, online, err);
    if (rc < 0)
        return rc;
    m->online = online;
    if (online)
        c->n_online++;
    else
        c->n_online--;
    commit_machine(c, i, &f, !online);
    return 0;
}

/* Takes a placement slot from the free list or the end of the slab. */
static int take_slot(struct lt_cluster *c, size_t *out, struct lt_err *err)
{
    if (c->pl_free != LT_NO_MACHINE) {
        *out = c->pl_free;
        return 0;
    }
    if (c->pl_used == c->pl_cap) {
        /* A new chunk; chunks never move, so task pointers stay valid (lt_cluster.h). */
        size_t n_chunks = c->pl_cap / LT__PL_CHUNK;
        struct lt__placement **t = lt_reallocarray(c->pl, n_chunks + 1, sizeof(*t));
        if (t == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for placements");
        c->pl = t;
        t[n_chunks] = lt_calloc(LT__PL_CHUNK, sizeof(**t));
        if (t[n_chunks] == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for placements");
        c->pl_cap += LT__PL_CHUNK;
    }
    *out = c->pl_used;
    return 0;
}

int lt_cluster_place(struct lt_cluster *c, size_t i, const struct lt_task *task, unsigned flags,
                     size_t *out_pid, struct lt_err *err)
{
    struct lt__machine *m, next;
    struct lt__placement *p;
    struct lt_task tcopy;
    const struct lt_task *t = &tcopy;
    struct lt_res of, nf;
    size_t pid = 0;
    int rc = check_index(c, i, err);

    if (rc < 0)
        return rc;
    if (task == NULL || out_pid == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "place: NULL task or placement id");
    /* A copy: task may point into this cluster's own placements (moving a task). */
    tcopy = *task;
    rc = lt_res_check_request(&t->req, "task", err);
    if (rc < 0)
        return rc;
    m = &c->m[i];
    if (!m->online)
        return lt_err_set(err, LT_ERANGE, 0, 0, "machine '%s' is offline", m->name);
    if (!(flags & LT_PLACE_FORCE) && !lt__fits(m, &t->req))
        return lt_err_set(err, LT_ERANGE, 0, 0, "task %lld does not fit on machine '%s'",
                          (long long)t->id, m->name);
    rc = take_slot(c, &pid, err);
    if (rc < 0)
        return rc;
    next = *m;
    next.alloc.cpu += t->req.cpu;
    next.alloc.mem += t->req.mem;
    next.alloc.disk += t->req.disk;
    nf = lt__free(&next);
    rc = prepare_machine(c, i, &nf, true, err);
    if (rc < 0)
        return rc;

    if (pid == c->pl_free)
        c->pl_free = lt__pl(c, pid)->next;
    else
        c->pl_used++;
    p = lt__pl(c, pid);
    p->task = tcopy;
    p->machine = (uint32_t)i;
    p->live = true;
    p->prev = LT_NO_MACHINE;
    p->next = m->first_pid;
    if (m->first_pid != LT_NO_MACHINE)
        lt__pl(c, m->first_pid)->prev = pid;
    m->first_pid = pid;
    of = lt__free(m);
    m->alloc = next.alloc;
    m->n_tasks++;
    c->n_live++;
    commit_machine(c, i, &of, true);
    *out_pid = pid;
    return 0;
}

int lt_cluster_remove(struct lt_cluster *c, size_t pid, struct lt_err *err)
{
    struct lt__machine *m, next;
    struct lt__placement *p;
    struct lt_res of, nf;
    int rc;

    if (c == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "cluster is NULL");
    if (!lt_cluster_placement_live(c, pid))
        return lt_err_set(err, LT_EINVAL, 0, 0, "placement %zu is not live", pid);
    p = lt__pl(c, pid);
    m = &c->m[p->machine];
    next = *m;
    if (m->n_tasks == 1) {
        next.alloc.cpu = next.alloc.mem = next.alloc.disk = 0.0;
    } else {
        next.alloc.cpu -= p->task.req.cpu;
        next.alloc.mem -= p->task.req.mem;
        next.alloc.disk -= p->task.req.disk;
    }
    nf = lt__free(&next);
    rc = prepare_machine(c, p->machine, &nf, true, err);
    if (rc < 0)
        return rc;
    if (p->prev != LT_NO_MACHINE)
        lt__pl(c, p->prev)->next = p->next;
    else
        m->first_pid = p->next;
    if (p->next != LT_NO_MACHINE)
        lt__pl(c, p->next)->prev = p->prev;
    of = lt__free(m);
    m->alloc = next.alloc;
    m->n_tasks--;
    c->n_live--;
    p->live = false;
    p->next = c->pl_free;
    c->pl_free = pid;
    commit_machine(c, p->machine, &of, true);
    return 0;
}

/* ---- queries ---- */

size_t lt_cluster_size(const struct lt_cluster *c)
{
    return c->n;
}

size_t lt_cluster_n_online(const struct lt_cluster *c)
{
    return c->n_online;
}

size_t lt_cluster_n_configs(const struct lt_cluster *c)
{
    return c->n_cfg;
}

size_t lt_cluster_n_placements(const struct lt_cluster *c)
{
    return c->n_live;
}

struct lt_res lt_cluster_ref(const struct lt_cluster *c)
{
    return c->ref;
}

uint64_t lt_cluster_seed(const struct lt_cluster *c)
{
    return c->seed;
}

const char *lt_cluster_name(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].name;
}

uint32_t lt_cluster_config(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].config;
}

struct lt_res lt_cluster_cap(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].cap;
}

struct lt_res lt_cluster_alloc(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].alloc;
}

struct lt_res lt_cluster_free_res(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return lt__free(&c->m[i]);
}

size_t lt_cluster_n_tasks(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].n_tasks;
}

bool lt_cluster_online(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].online;
}

bool lt_cluster_fits(const struct lt_cluster *c, size_t i, const struct lt_res *req)
{
    assert(i < c->n);
    return lt__fits(&c->m[i], req);
}

bool lt_res_fits_requested(const struct lt_res *free, const struct lt_res *req)
{
    return lt__res_fits_requested(free, req);
}

bool lt_cluster_fits_requested(const struct lt_cluster *c, size_t i, const struct lt_res *req)
{
    struct lt_res f;

    assert(i < c->n);
    f = lt__free(&c->m[i]);
    return c->m[i].online && lt__res_fits_requested(&f, req);
}

bool lt_cluster_placement_live(const struct lt_cluster *c, size_t pid)
{
    return pid < c->pl_used && lt__pl(c, pid)->live;
}

size_t lt_cluster_placement_machine(const struct lt_cluster *c, size_t pid)
{
    assert(lt_cluster_placement_live(c, pid));
    return lt__pl(c, pid)->machine;
}

const struct lt_task *lt_cluster_placement_task(const struct lt_cluster *c, size_t pid)
{
    assert(lt_cluster_placement_live(c, pid));
    return &lt__pl(c, pid)->task;
}

size_t lt_cluster_first_placement(const struct lt_cluster *c, size_t i)
{
    assert(i < c->n);
    return c->m[i].first_pid;
}

size_t lt_cluster_next_placement(const struct lt_cluster *c, size_t pid)
{
    assert(lt_cluster_placement_live(c, pid));
    return lt__pl(c, pid)->next;
}

int lt_cluster_fragmentation(const struct lt_cluster *c, double x_pct, size_t *out_count,
                             struct lt_err *err)
{
    struct lt_census cs;
    int rc;

    if (c == NULL || out_count == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "fragmentation: NULL argument");
    rc = lt_cluster_census(c, &x_pct, 1, &cs, err);
    if (rc < 0)
        return rc;
    *out_count = cs.frag[0];
    return 0;
}

int lt_cluster_census(const struct lt_cluster *c, const double *pct, size_t n_pct,
                      struct lt_census *out, struct lt_err *err)
{
    double x[LT_CENSUS_MAX_PCT];
    struct lt_census r;

    if (c == NULL || out == NULL || (pct == NULL && n_pct > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "census: NULL argument");
    if (n_pct > LT_CENSUS_MAX_PCT)
        return lt_err_set(err, LT_EINVAL, 0, 0, "census: %zu thresholds, at most %d", n_pct,
                          LT_CENSUS_MAX_PCT);
    for (size_t k = 0; k < n_pct; k++) {
        if (!(pct[k] >= 0.0 && pct[k] <= 100.0))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "fragmentation threshold %g%% is not in [0, 100]", pct[k]);
        x[k] = pct[k] / 100.0;
    }
    memset(&r, 0, sizeof(r));
    for (size_t i = 0; i < c->n; i++) {
        const struct lt__machine *m = &c->m[i];
        struct lt_res f;

        if (!m->online)
            continue;
        f = lt__free(m);
        r.online++;
        r.unused += m->n_tasks == 0;
        r.cap.cpu += m->cap.cpu;
        r.cap.mem += m->cap.mem;
        r.cap.disk += m->cap.disk;
        r.alloc.cpu += m->alloc.cpu;
        r.alloc.mem += m->alloc.mem;
        r.alloc.disk += m->alloc.disk;
        for (size_t k = 0; k < n_pct; k++)
            r.frag[k] += f.cpu < x[k] * m->cap.cpu && f.mem < x[k] * m->cap.mem;
    }
    *out = r;
    return 0;
}

size_t lt_cluster_unused(const struct lt_cluster *c)
{
    size_t count = 0;

    for (size_t i = 0; i < c->n; i++)
        count += c->m[i].online && c->m[i].n_tasks == 0;
    return count;
}

const struct lt_index *lt__cluster_index(const struct lt_cluster *c, const struct lt_policy *p)
{
    for (size_t k = 0; k < c->n_ix; k++) {
        if (c->ix[k]->policy == p)
            return c->ix[k];
    }
    return NULL;
}

int lt_policy_attach(const struct lt_policy *p, struct lt_cluster *c, struct lt_err *err)
{
    struct lt_index *ix;
    int rc;

    if (p == NULL || c == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "attach: NULL policy or cluster");
    if (lt__cluster_index(c, p) != NULL)
        return 0;
    if (c->n_ix == c->ix_cap) {
        size_t cap = c->ix_cap ? 2 * c->ix_cap : 4;
        struct lt_index **t = lt_reallocarray(c->ix, cap, sizeof(*t));
        if (t == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory attaching '%s'", p->name);
        c->ix = t;
        c->ix_cap = cap;
    }
    rc = p->index_new(p, c, &ix, err);
    if (rc < 0)
        return rc;
    ix->serial = ++c->ix_serial;
    c->ix[c->n_ix++] = ix;
    return 0;
}

/* ---- invariant checker (R15) ---- */

static int check_placements(const struct lt_cluster *c, struct lt_err *err)
{
    size_t live = 0;

    for (size_t i = 0; i < c->n; i++) {
        const struct lt__machine *m = &c->m[i];
        struct lt_res sum = {0, 0, 0};
        size_t count = 0, prev = LT_NO_MACHINE;

        for (size_t p = m->first_pid; p != LT_NO_MACHINE; p = lt__pl(c, p)->next) {
            const struct lt__placement *pl = lt__pl(c, p);
            if (p >= c->pl_used || !pl->live || pl->machine != i || pl->prev != prev ||
                ++count > m->n_tasks)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "placement list of machine '%s' is broken at %zu", m->name, p);
            sum.cpu += pl->task.req.cpu;
            sum.mem += pl->task.req.mem;
            sum.disk += pl->task.req.disk;
            prev = p;
        }
        if (count != m->n_tasks)
            return lt_err_set(err, LT_EINVAL, 0, 0, "machine '%s' counts %u tasks but lists %zu",
                              m->name, (unsigned)m->n_tasks, count);
        if (fabs(sum.cpu - m->alloc.cpu) > 1e-9 * m->cap.cpu ||
            fabs(sum.mem - m->alloc.mem) > 1e-9 * m->cap.mem ||
            fabs(sum.disk - m->alloc.disk) > 1e-9 * m->cap.disk)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "machine '%s' allocation (%g, %g, %g) differs from its tasks' sum "
                              "(%g, %g, %g)",
                              m->name, m->alloc.cpu, m->alloc.mem, m->alloc.disk, sum.cpu, sum.mem,
                              sum.disk);
        if (count == 0 &&
            !(is_zero(m->alloc.cpu) && is_zero(m->alloc.mem) && is_zero(m->alloc.disk)))
            return lt_err_set(err, LT_EINVAL, 0, 0, "empty machine '%s' has a non-zero allocation",
                              m->name);
        live += count;
    }
    if (live != c->n_live)
        return lt_err_set(err, LT_EINVAL, 0, 0, "cluster counts %zu placements but lists %zu",
                          c->n_live, live);
    return 0;
}

int lt_cluster_check(const struct lt_cluster *c, struct lt_err *err)
{
    size_t online = 0;
    int rc;

    if (c == NULL || c->magic != LT__CLUSTER_MAGIC)
        return lt_err_set(err, LT_EINVAL, 0, 0, "not a live cluster");
    for (size_t k = 0; k < c->n_cfg; k++) {
        uint32_t count = 0;
        for (size_t i = 0; i < c->n; i++)
            count += c->m[i].config == k;
        if (count != c->cfg[k].n_machines)
            return lt_err_set(err, LT_EINVAL, 0, 0, "configuration %zu counts %u machines, has %u",
                              k, (unsigned)c->cfg[k].n_machines, (unsigned)count);
        for (size_t j = 0; j < k; j++) {
            if (res_same(&c->cfg[j].cap, &c->cfg[k].cap))
                return lt_err_set(err, LT_EINVAL, 0, 0, "configurations %zu and %zu are equal", j,
                                  k);
        }
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct lt__machine *m = &c->m[i];
        if (m->config >= c->n_cfg || !res_same(&c->cfg[m->config].cap, &m->cap))
            return lt_err_set(err, LT_EINVAL, 0, 0, "machine '%s' has a wrong configuration id",
                              m->name);
        if (lt_cluster_find(c, m->name) != i)
            return lt_err_set(err, LT_EINVAL, 0, 0, "machine '%s' is missing from the name table",
                              m->name);
        online += m->online;
    }
    if (online != c->n_online)
        return lt_err_set(err, LT_EINVAL, 0, 0, "cluster counts %zu online machines, has %zu",
                          c->n_online, online);
    rc = check_placements(c, err);
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < c->n_ix; k++) {
        rc = c->ix[k]->ops->check(c->ix[k], c, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}
