/* lotes_sim.c -- the LoTES experiments' discrete-event simulation (lt_lotes_sim.h).
 *
 * State: every machine's free resources and queue length live in the dispatcher's view
 * (struct lt_lotes_machine), updated in place, so each dispatch reads the current state; a
 * machine's FIFO queue is a linked list through the tasks. Tasks and jobs are pooled with free
 * lists (a long run recycles them). Completions are a binary heap on time; arrivals are drawn
 * one ahead. The workload (arrivals, classes, requests, processing times) and the dispatcher's
 * draws use separate RNG streams, so LoTES and greedy see the same workload under one seed.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_lotes_sim.h"

#include <math.h>
#include <string.h>

#include "lt_heap.h"
#include "lt_mem.h"
#include "lt_vec.h"

#define NIL           UINT32_MAX
#define PROGRESS_MASK 0xffffu

struct task {
    uint32_t job, next, machine;
    bool map;
    double ready; /* when it was dispatched: its job's arrival, or its maps' end (reduces) */
    struct lt_res req;
    double service;
};

struct job {
    double arrival;
    uint32_t maps_left, tasks_left;
    uint32_t k;
    bool measured;
    uint32_t next_free;
};

struct ev {
    double t;
    uint32_t task;
};

struct sim;
static bool ev_before(const struct sim *s, const struct ev *a, const struct ev *b);
LT_HEAP_DEFINE(evheap, struct ev, const struct sim, ev_before, LT_HEAP_NO_MOVED);

struct sim {
    const struct lt_lotes_sim_params *p;
    const struct lt_lotes_tables *t;
    struct lt_lotes_sim_summary *out;
    struct lt_lotes_machine *view;
    uint32_t *qhead, *qtail;
    size_t n;
    struct task *tk;
    uint32_t n_tk, free_tk;
    size_t cap_tk;
    struct job *jb;
    uint32_t n_jb, free_jb;
    size_t cap_jb;
    struct evheap heap; /* completions by time */
    struct lt_rng work, disp;
    uint64_t in_system, outstanding;
    double cls_resp[LT_LOTES_MAX_CLASSES], cls_wait[LT_LOTES_MAX_CLASSES];
    uint64_t cls_started[LT_LOTES_MAX_CLASSES];
    double wait_sum, resp_sum, area;
    double alpha_total; /* sum of the classes' proportions (they need not sum to 1) */
    uint64_t started;
};

void lt_lotes_sim_params_default(struct lt_lotes_sim_params *p, const struct lt_lotes_tables *t)
{
    memset(p, 0, sizeof(*p));
    p->t = t;
    p->policy = LT_LOTES_POLICY_LOTES;
    p->load = 0.5;
    p->hours = 300;
    p->warmup = 100;
    p->drain = 200;
    p->maps = 200;
    p->reduces = 100;
    p->seed = 1;
}

static double expo(struct lt_rng *r, double mean)
{
    return -mean * log1p(-lt_rng_uniform(r));
}

/* A standard normal deviate (Box-Muller, one of the pair). */
static double normal(struct lt_rng *r)
{
    double u = lt_rng_uniform(r), v = lt_rng_uniform(r);

    return sqrt(-2.0 * log1p(-u)) * cos(6.283185307179586 * v);
}

/* m (1 + cv Z), redrawn while not > 0 (at most 64 times, then m). */
static double draw_req(struct lt_rng *r, double m, double cv)
{
    if (!(m > 0.0) || !(cv > 0.0))
        return m;
    for (int a = 0; a < 64; a++) {
        double x = m * (1.0 + cv * normal(r));
        if (x > 0.0)
            return x;
    }
    return m;
}

static int task_new(struct sim *s, uint32_t *out)
{
    if (s->free_tk != NIL) {
        *out = s->free_tk;
        s->free_tk = s->tk[*out].next;
        return 0;
    }
    /* indexes are uint32_t, NIL the largest */
    if (s->n_tk >= NIL - 1 || LT_VEC_RESERVE(s->tk, s->cap_tk, (size_t)s->n_tk + 1) < 0)
        return LT_ENOMEM;
    *out = s->n_tk++;
    return 0;
}

static int job_new(struct sim *s, uint32_t *out)
{
    if (s->free_jb != NIL) {
        *out = s->free_jb;
        s->free_jb = s->jb[*out].next_free;
        return 0;
    }
    if (s->n_jb >= NIL - 1 || LT_VEC_RESERVE(s->jb, s->cap_jb, (size_t)s->n_jb + 1) < 0)
        return LT_ENOMEM;
    *out = s->n_jb++;
    return 0;
}

static bool ev_before(const struct sim *s, const struct ev *a, const struct ev *b)
{
    (void)s;
    return a->t < b->t;
}

static int heap_push(struct sim *s, double t, uint32_t task)
{
    return evheap_push(s, &s->heap, (struct ev){t, task});
}

static bool fits(const struct lt_res *r, const struct lt_res *f)
{
    return r->cpu <= f->cpu && r->mem <= f->mem && r->disk <= f->disk;
}

static int start(struct sim *s, uint32_t i, uint32_t m, double now)
{
    struct task *x = &s->tk[i];
    struct job *j = &s->jb[x->job];
    struct lt_res *f = &s->view[m].free;

    f->cpu -= x->req.cpu;
    f->mem -= x->req.mem;
    f->disk -= x->req.disk;
    s->view[m].running++;
    x->machine = m;
    if (j->measured) {
        double w = now - x->ready;
        s->wait_sum += w;
        s->started++;
        s->cls_wait[j->k] += w;
        s->cls_started[j->k]++;
    }
    return heap_push(s, now + x->service, i);
}

/* Dispatches task i (already filled in) at now. */
static int dispatch(struct sim *s, uint32_t i, double now, struct lt_err *err)
{
    struct task *x = &s->tk[i];
    struct lt_lotes_choice ch;
    enum lt_lotes_greedy_rule rule =
        s->p->policy == LT_LOTES_POLICY_GREEDY ? LT_LOTES_GREEDY_ROOM : LT_LOTES_GREEDY_JSQ;
    int rc =
        s->p->policy != LT_LOTES_POLICY_LOTES
            ? lt_lotes_greedy(s->t, s->view, s->n, rule, &x->req, &s->disp, &ch, err)
            : lt_lotes_dispatch(s->t, s->view, s->n, s->jb[x->job].k, &x->req, &s->disp, &ch, err);

    if (rc < 0)
        return rc;
    s->out->tasks++;
    if (ch.machine == LT_NO_MACHINE) {
        s->out->rejected++;
        return 1; /* the caller finishes it at once */
    }
    s->out->how[ch.how]++;
    s->in_system++;
    if (ch.how == LT_LOTES_FIRST_FIT || ch.how == LT_LOTES_ANY_ROOM)
        return start(s, i, (uint32_t)ch.machine, now);
    x->machine = (uint32_t)ch.machine;
    x->next = NIL;
    if (s->qtail[ch.machine] == NIL)
        s->qhead[ch.machine] = i;
    else
        s->tk[s->qtail[ch.machine]].next = i;
    s->qtail[ch.machine] = i;
    s->view[ch.machine].queue_len++;
    return 0;
}

static int job_done_task(struct sim *s, uint32_t jid, bool map, double now, struct lt_err *err);

/* New tasks of job jid: n of them, maps or reduces. */
static int spawn(struct sim *s, uint32_t jid, uint32_t n, bool map, double now, struct lt_err *err)
{
    const struct lt_lotes_class *c = &s->t->classes[s->jb[jid].k];
    const struct lt_res *cv = s->p->cv != NULL ? &s->p->cv[s->jb[jid].k] : NULL;

    for (uint32_t a = 0; a < n; a++) {
        uint32_t i;
        int rc = task_new(s, &i);
        if (rc < 0)
            return rc;
        s->tk[i].job = jid;
        s->tk[i].map = map;
        s->tk[i].ready = now;
        s->tk[i].next = NIL;
        s->tk[i].req.cpu = draw_req(&s->work, c->req.cpu, cv ? cv->cpu : 0.0);
        s->tk[i].req.mem = draw_req(&s->work, c->req.mem, cv ? cv->mem : 0.0);
        s->tk[i].req.disk = draw_req(&s->work, c->req.disk, cv ? cv->disk : 0.0);
        s->tk[i].service = expo(&s->work, 1.0 / c->mu);
        if ((rc = dispatch(s, i, now, err)) < 0)
            return rc;
        if (rc == 1) { /* rejected: done at once, it never runs */
            s->tk[i].next = s->free_tk;
            s->free_tk = i;
            if ((rc = job_done_task(s, jid, map, now, err)) < 0)
                return rc;
        }
    }
    return 0;
}

/* One task of job jid ended at now: maps release the reduces, the last task ends the job. */
static int job_done_task(struct sim *s, uint32_t jid, bool map, double now, struct lt_err *err)
{
    struct job *j = &s->jb[jid];

    if (map && --j->maps_left == 0 && s->p->mapreduce && s->p->reduces > 0) {
        int rc = spawn(s, jid, s->p->reduces, false, now, err);
        if (rc < 0)
            return rc;
        j = &s->jb[jid]; /* spawn may have moved the pool */
    }
    if (--j->tasks_left > 0)
        return 0;
    if (j->measured) {
        double resp = now - j->arrival;
        s->out->completed++;
        s->outstanding--;
        s->resp_sum += resp;
        s->cls_resp[j->k] += resp;
        s->out->n_class[j->k]++;
    }
    j->next_free = s->free_jb;
    s->free_jb = jid;
    return 0;
}

static int complete(struct sim *s, uint32_t i, double now, struct lt_err *err)
{
    struct task *x = &s->tk[i];
    uint32_t m = x->machine, jid = x->job;
    bool map = x->map;
    struct lt_res *f = &s->view[m].free;
    int rc;

    f->cpu += x->req.cpu;
    f->mem += x->req.mem;
    f->disk += x->req.disk;
    if (--s->view[m].running == 0) /* no drift: an empty machine is exactly free */
        *f = s->t->configs[s->view[m].config].cap;
    s->in_system--;
    x->next = s->free_tk;
    s->free_tk = i;
    /* the queue's head starts while it fits (strict FIFO) */
    while (s->qhead[m] != NIL && fits(&s->tk[s->qhead[m]].req, f)) {
        uint32_t h = s->qhead[m];
        s->qhead[m] = s->tk[h].next;
        if (s->qhead[m] == NIL)
            s->qtail[m] = NIL;
        s->view[m].queue_len--;
        if ((rc = start(s, h, m, now)) < 0)
            return rc;
    }
    return job_done_task(s, jid, map, now, err);
}

static int arrive(struct sim *s, double now, struct lt_err *err)
{
    const struct lt_lotes_tables *t = s->t;
    double u = lt_rng_uniform(&s->work), acc = 0.0;
    uint32_t jid, k = (uint32_t)t->n_classes - 1, n_tasks;
    int rc;

    for (size_t c = 0; c < t->n_classes; c++) {
        acc += t->classes[c].alpha / s->alpha_total;
        if (u < acc) {
            k = (uint32_t)c;
            break;
        }
    }
    if ((rc = job_new(s, &jid)) < 0)
        return rc;
    n_tasks = s->p->mapreduce ? s->p->maps + s->p->reduces : 1;
    s->jb[jid] = (struct job){now, s->p->mapreduce ? s->p->maps : 1,         n_tasks,
                              k,   now >= s->p->warmup && now < s->p->hours, NIL};
    s->out->arrived++;
    if (s->jb[jid].measured) {
        s->out->measured++;
        s->outstanding++;
    }
    return spawn(s, jid, s->p->mapreduce ? s->p->maps : 1, true, now, err);
}

static int check(const struct lt_lotes_sim_params *p, struct lt_err *err)
{
    if (p == NULL || p->t == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes simulation: no tables");
    if (!(p->lambda_ref >= 0.0) || !isfinite(p->lambda_ref))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes simulation: lambda_ref %g is not >= 0",
                          p->lambda_ref);
    if (!(p->load > 0.0) || !isfinite(p->load))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes simulation: load %g is not > 0", p->load);
    if (!(p->hours > 0.0) || !(p->hours <= 1e7))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes simulation: %g hours is not in (0, 1e7]",
                          p->hours);
    if (!(p->warmup >= 0.0) || !(p->warmup < p->hours))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "lotes simulation: warm-up %g h is not in [0, %g) (the hours)", p->warmup,
                          p->hours);
    if (!(p->drain >= 0.0) || !(p->drain <= 1e7))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes simulation: drain %g h is not in [0, 1e7]",
                          p->drain);
    if (p->mapreduce && (p->maps == 0 || p->maps > 100000 || p->reduces > 100000))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "lotes simulation: %u maps and %u reduces per job (want 1..100000 maps, "
                          "0..100000 reduces)",
                          (unsigned)p->maps, (unsigned)p->reduces);
    return 0;
}

static void sim_free(struct sim *s)
{
    lt_free(s->view);
    lt_free(s->qhead);
    lt_free(s->qtail);
    lt_free(s->tk);
    lt_free(s->jb);
    evheap_free(&s->heap);
}

static int setup(struct sim *s, struct lt_err *err)
{
    const struct lt_lotes_tables *t = s->t;
    size_t *config = NULL, *bin = NULL, i = 0;
    int rc;

    for (size_t j = 0; j < t->n_configs; j++)
        s->n += t->configs[j].n;
    for (size_t k = 0; k < t->n_classes; k++)
        s->alpha_total += t->classes[k].alpha;
    s->view = lt_calloc(s->n, sizeof(*s->view));
    s->qhead = lt_calloc(s->n, sizeof(*s->qhead));
    s->qtail = lt_calloc(s->n, sizeof(*s->qtail));
    config = lt_calloc(s->n, sizeof(*config));
    bin = lt_calloc(s->n, sizeof(*bin));
    if (s->view == NULL || s->qhead == NULL || s->qtail == NULL || config == NULL || bin == NULL ||
        s->n > NIL) {
        lt_free(config);
        lt_free(bin);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "lotes simulation: out of memory for %zu machines",
                          s->n);
    }
    for (size_t j = 0; j < t->n_configs; j++)
        for (size_t a = 0; a < t->configs[j].n; a++)
            config[i++] = j;
    rc = lt_lotes_machine_bins(t, config, s->n, bin, err);
    for (i = 0; i < s->n && rc == 0; i++) {
        s->view[i].config = config[i];
        s->view[i].bin = bin[i];
        s->view[i].free = t->configs[config[i]].cap;
        s->qhead[i] = s->qtail[i] = NIL;
    }
    lt_free(config);
    lt_free(bin);
    return rc;
}

int lt_lotes_sim_run(const struct lt_lotes_sim_params *p, struct lt_lotes_sim_summary *out,
                     struct lt_err *err)
{
    struct sim s;
    double rate, next_arrival, last = 0.0;
    int rc;

    if ((rc = check(p, err)) < 0)
        return rc;
    memset(&s, 0, sizeof(s));
    memset(out, 0, sizeof(*out));
    s.p = p;
    s.t = p->t;
    s.out = out;
    s.free_tk = s.free_jb = NIL;
    if ((rc = setup(&s, err)) < 0)
        goto done;
    lt_rng_init(&s.work, p->seed, LT_RNG_WORKLOAD);
    lt_rng_init(&s.disp, p->seed, LT_RNG_POLICY);
    rate = p->load * (p->lambda_ref > 0.0 ? p->lambda_ref : p->t->lambda_alloc) /
           (p->mapreduce ? (double)(p->maps + p->reduces) : 1.0);
    next_arrival = expo(&s.work, 1.0 / rate);
    for (;;) {
        bool arrival = next_arrival < p->hours && (s.heap.n == 0 || next_arrival <= s.heap.a[0].t);
        double now = arrival ? next_arrival : (s.heap.n > 0 ? s.heap.a[0].t : INFINITY);

        if (!isfinite(now) || now > p->hours + p->drain || (now >= p->hours && s.outstanding == 0))
            break;
        /* tasks in the system, integrated over [warmup, hours) */
        {
            double a = last > p->warmup ? last : p->warmup, b = now < p->hours ? now : p->hours;
            if (b > a)
                s.area += (double)s.in_system * (b - a);
        }
        last = now;
        out->events++;
        if (p->progress != NULL && (out->events & PROGRESS_MASK) == 0)
            p->progress(p->progress_arg, now, out->events);
        if (arrival) {
            rc = arrive(&s, now, err);
            next_arrival = now + expo(&s.work, 1.0 / rate);
        } else {
            rc = complete(&s, evheap_pop(&s, &s.heap).task, now, err);
        }
        if (rc < 0)
            goto done;
        if (s.in_system > out->in_system_max)
            out->in_system_max = s.in_system;
    }
    out->end = last;
    out->unfinished = out->measured - out->completed;
    out->resp_mean = out->completed ? s.resp_sum / (double)out->completed : NAN;
    out->wait_mean = s.started ? s.wait_sum / (double)s.started : NAN;
    out->in_system_mean = s.area / (p->hours - p->warmup);
    for (size_t k = 0; k < p->t->n_classes && k < LT_LOTES_MAX_CLASSES; k++) {
        out->resp_class[k] = out->n_class[k] ? s.cls_resp[k] / (double)out->n_class[k] : NAN;
        out->wait_class[k] = s.cls_started[k] ? s.cls_wait[k] / (double)s.cls_started[k] : NAN;
    }
    rc = 0;
done:
    if (rc == LT_ENOMEM)
        lt_err_set(err, LT_ENOMEM, 0, 0, "lotes simulation: out of memory");
    sim_free(&s);
    return rc;
}
