/* qsim.c -- the single-pool queue simulator: Algorithm 1's dispatch, rigid or fractional, and
 * backfill none / easy / relaxed:F / greedy (lt_qsim.h, docs/queue.md).
 *
 * Source: Simon & McGalliard [S L218-L259] for the dispatch (fractional knapsack fill in
 *   priority order) and [S L61-L86] for backfill, as ../shared/spec/queue-sla-network.md 1.5
 *   and 1.7 define them (numbered algorithm; EASY shadow time and extra cores; relaxed:F).
 * Structures:
 *   - running pieces (a job's tasks started at one instant) in a pool, in a min-heap by actual
 *     end (the events) and, for easy and relaxed, a second min-heap by predicted end (start +
 *     estimate) that the shadow time walks in order without popping: a frontier heap over the
 *     heap's positions yields its k smallest in O(k log k);
 *   - the queue: for orders with fixed keys, every job is ranked once (sorted by the order) and
 *     a min-segment tree over the ranks holds each queued job's unstarted tasks (UINT32_MAX
 *     when absent): the head and "the first job after rank r that fits in f cores" are
 *     O(log n) descents; for time-varying orders, an array of (key, job) re-keyed and re-sorted
 *     at dispatch instants, scanned in order.
 * Ties between pieces ending together do not matter (all are released before dispatching).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_qsim.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_heap.h"
#include "lt_mem.h"
#include "lt_sla.h"
#include "lt_vec.h"

#define NONE   SIZE_MAX
#define ABSENT UINT32_MAX

/* Jobs and pieces are indexed by uint32_t in the hot arrays. */
#define MAX_JOBS ((size_t)UINT32_MAX - 1)

/* One running piece: k tasks of one job started at one instant. */
struct piece {
    double end;      /* actual end: start + runtime */
    double pred;     /* predicted end: start + estimate */
    uint32_t job;    /* index; the next free piece when in the free list */
    uint32_t cores;  /* its tasks */
    size_t pos_pred; /* position in the predicted-end heap */
};

/* A queue entry of the sorted (time-varying) queue; also used to rank fixed orders. */
struct qent {
    struct lt_qkey k; /* lt_qorder_key_job's key (cls and tie are 0 but for SLA orders) */
    double arrival;   /* tie rule: arrival, id, index */
    int64_t id;
    uint32_t job;
};

struct lt_qsim;
static bool end_less(const struct lt_qsim *s, const uint32_t *x, const uint32_t *y);
static bool pred_less(const struct lt_qsim *s, const uint32_t *x, const uint32_t *y);
static bool front_less(const struct lt_qsim *s, const size_t *x, const size_t *y);
static void pred_moved(struct lt_qsim *s, const uint32_t *x, size_t k);

LT_HEAP_DEFINE(end_heap, uint32_t, struct lt_qsim, end_less, LT_HEAP_NO_MOVED);
LT_HEAP_DEFINE(pred_heap, uint32_t, struct lt_qsim, pred_less, pred_moved);
LT_HEAP_DEFINE(front_heap, size_t, struct lt_qsim, front_less, LT_HEAP_NO_MOVED);

struct lt_qsim {
    struct lt_qsim_params p;
    const struct lt_qjob *jobs; /* borrowed, or own_jobs */
    struct lt_qjob *own_jobs;   /* forks: owned copy */
    size_t *origin;             /* forks: index in the root's array (owned); NULL: identity */
    size_t n;
    struct lt_qjob_out *out; /* owned, n */
    uint32_t *unstarted;     /* owned, n: tasks not started yet */
    uint32_t *n_running;     /* owned, n: pieces running */
    uint32_t *arr;           /* owned: jobs in arrival order (tie rule) */
    size_t n_arr, next_arr;  /* arrivals to come: arr[next_arr..n_arr-1] */
    double now;
    bool pending; /* the current instant is not dispatched yet */
    bool sampled; /* a sample was emitted */
    struct lt_qsample last;
    uint32_t busy;
    size_t running, queued, max_queued;
    uint64_t events, instants, completed;
    /* running pieces */
    struct piece *pc;
    size_t n_pc, cap_pc;
    uint32_t free_pc; /* first free piece, ABSENT if none */
    struct end_heap ends;
    struct pred_heap preds;  /* easy and relaxed only */
    struct front_heap front; /* scratch of the shadow walk */
    bool use_pred;
    /* the queue: ranked (fixed keys) or sorted (time-varying) */
    bool ranked;
    uint32_t *rank_of; /* owned, n: job -> rank */
    uint32_t *job_at;  /* owned, n: rank -> job */
    uint32_t *seg;     /* owned, 2 * width: min unstarted over a range of ranks */
    size_t width;      /* leaves: a power of two >= n */
    struct qent *qa;   /* sorted queue */
    size_t n_qa, cap_qa;
    bool keyed;      /* the sorted queue was keyed once */
    bool dirty;      /* the sorted queue needs a sort */
    double key_time; /* the instant the keys were computed at */
};

static bool end_less(const struct lt_qsim *s, const uint32_t *x, const uint32_t *y)
{
    return s->pc[*x].end < s->pc[*y].end;
}

static bool pred_less(const struct lt_qsim *s, const uint32_t *x, const uint32_t *y)
{
    return s->pc[*x].pred < s->pc[*y].pred;
}

static bool front_less(const struct lt_qsim *s, const size_t *x, const size_t *y)
{
    return s->pc[s->preds.a[*x]].pred < s->pc[s->preds.a[*y]].pred;
}

static void pred_moved(struct lt_qsim *s, const uint32_t *x, size_t k)
{
    s->pc[*x].pos_pred = k;
}

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory in the queue simulator");
}

/* Puts prefix before err's text (lt_err_set keeps the first error: it cannot rewrite one). */
static int err_prefix(struct lt_err *err, const char *prefix)
{
    size_t cap, lp, lt;

    if (err == NULL)
        return LT_EINVAL;
    cap = sizeof(err->text) - 1;
    lp = strlen(prefix);
    lt = strlen(err->text);
    lp = lp > cap ? cap : lp;
    lt = lt > cap - lp ? cap - lp : lt;
    memmove(err->text + lp, err->text, lt);
    memcpy(err->text, prefix, lp);
    err->text[lp + lt] = '\0';
    return err->code;
}

/* ---- names ---- */

int lt_qdispatch_find(const char *name, enum lt_qdispatch *out, struct lt_err *err)
{
    if (name != NULL && strcmp(name, "rigid") == 0) {
        *out = LT_QDISPATCH_RIGID;
        return 0;
    }
    if (name != NULL && strcmp(name, "fractional") == 0) {
        *out = LT_QDISPATCH_FRACTIONAL;
        return 0;
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0, "unknown dispatch '%s' (known: rigid, fractional)",
                      name ? name : "(null)");
}

int lt_qbackfill_find(const char *name, enum lt_qbackfill *out, double *relax_f, struct lt_err *err)
{
    static const char *const names[] = {"none", "easy", "relaxed:F", "greedy"};
    static const char prefix[] = "relaxed:";

    if (name != NULL && strncmp(name, prefix, sizeof(prefix) - 1) == 0) {
        const char *v = name + sizeof(prefix) - 1;
        char *end;
        double f = strtod(v, &end);

        if (*v == '\0' || *v == ' ' || *end != '\0' || !isfinite(f) || f < 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "backfill '%s' needs a finite number F >= 0 in 'relaxed:F'", name);
        *out = LT_QBACKFILL_RELAXED;
        *relax_f = f;
        return 0;
    }
    for (size_t k = 0; k < 4; k++) {
        if (k != LT_QBACKFILL_RELAXED && name != NULL && strcmp(name, names[k]) == 0) {
            *out = (enum lt_qbackfill)k;
            *relax_f = 0;
            return 0;
        }
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown backfill '%s' (known: none, easy, relaxed:F, greedy)",
                      name ? name : "(null)");
}

void lt_qsim_params_default(struct lt_qsim_params *p, uint32_t cores)
{
    memset(p, 0, sizeof(*p));
    p->cores = cores;
    p->order.kind = LT_QORDER_FCFS;
    p->order.beta = 1;
    p->order.w_min_s = LT_QORDER_W_MIN_S;
    p->order.r_min_s = LT_QORDER_R_MIN_S;
    p->order.n_min = LT_QORDER_N_MIN;
    p->order.h_s = LT_QORDER_SLA_H_S;
    p->dispatch = LT_QDISPATCH_RIGID;
    p->backfill = LT_QBACKFILL_NONE;
}

/* ---- validation ---- */

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

static int check_order(const struct lt_qorder *o, struct lt_err *err)
{
    if ((unsigned)o->kind > LT_QORDER_SLA_SLOPE || !isfinite(o->alpha) || !isfinite(o->beta) ||
        !isfinite(o->gamma))
        return lt_err_set(err, LT_EINVAL, 0, 0, "queue order has a bad kind or exponent");
    if (o->kind == LT_QORDER_SLA_SLOPE && !(isfinite(o->h_s) && o->h_s >= 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "sla-slope's look-ahead must be >= 0 s, not %g",
                          o->h_s);
    if (!positive(o->w_min_s) || !positive(o->r_min_s) || !positive(o->n_min))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "queue order clamps must be > 0 (w_min %g, r_min %g, n_min %g)",
                          o->w_min_s, o->r_min_s, o->n_min);
    return 0;
}

static int check_params(const struct lt_qsim_params *p, struct lt_err *err)
{
    if (p->cores == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "queue simulator needs cores >= 1");
    if ((unsigned)p->dispatch > LT_QDISPATCH_FRACTIONAL ||
        (unsigned)p->backfill > LT_QBACKFILL_GREEDY)
        return lt_err_set(err, LT_EINVAL, 0, 0, "queue simulator: bad dispatch or backfill");
    if (p->dispatch == LT_QDISPATCH_FRACTIONAL && p->backfill != LT_QBACKFILL_NONE)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "backfill needs dispatch 'rigid' (fractional dispatch leaves no core "
                          "idle while work waits)");
    if (!isfinite(p->relax_f) || p->relax_f < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "relaxed backfill's F must be >= 0, not %g",
                          p->relax_f);
    if (!isfinite(p->reprioritise_s) || p->reprioritise_s < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "reprioritise interval must be >= 0 s, not %g",
                          p->reprioritise_s);
    return check_order(&p->order, err);
}

static int check_job(const struct lt_qsim_params *p, const struct lt_qjob *j, size_t i,
                     struct lt_err *err)
{
    const char *field = NULL, *rule = NULL;
    double v = 0;

    if (!isfinite(j->arrival_s) || j->arrival_s < 0)
        field = "arrival_s", rule = "a finite number >= 0", v = j->arrival_s;
    else if (j->tasks == 0)
        field = "tasks", rule = ">= 1", v = 0;
    else if (p->dispatch == LT_QDISPATCH_RIGID && j->tasks > p->cores)
        field = "tasks", rule = "<= cores under rigid dispatch", v = j->tasks;
    else if (!positive(j->runtime_s))
        field = "runtime_s", rule = "a finite number > 0", v = j->runtime_s;
    else if (!positive(j->estimate_s))
        field = "estimate_s", rule = "a finite number > 0", v = j->estimate_s;
    if (field == NULL) {
        if (j->sla != NULL && lt_sla_check(j->sla, err) < 0) {
            char pre[64];
            snprintf(pre, sizeof(pre), "job %zu (id %" PRId64 "): ", i, j->id);
            return err_prefix(err, pre);
        }
        return 0;
    }
    return lt_err_set(err, LT_EINVAL, 0, 0,
                      "job %zu (id %" PRId64 "): field '%s' is %g, must be %s", i, j->id, field, v,
                      rule);
}

/* ---- the queue ---- */

static int qent_cmp(const void *pa, const void *pb)
{
    const struct qent *a = pa, *b = pb;

    int c = lt_qkey_cmp(&a->k, &b->k);
    if (c != 0)
        return c;
    if (a->arrival < b->arrival)
        return -1;
    if (b->arrival < a->arrival)
        return 1;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->job < b->job ? -1 : a->job > b->job;
}

/* The entry of job j keyed at time t. */
static struct qent qent_of(const struct lt_qsim *s, uint32_t j, double t)
{
    const struct lt_qjob *q = &s->jobs[j];
    struct lt_qkey k = lt_qorder_key_job(&s->p.order, q, t);

    return (struct qent){k, q->arrival_s, q->id, j};
}

static void seg_set(struct lt_qsim *s, uint32_t rank, uint32_t v)
{
    size_t k = s->width + rank;

    s->seg[k] = v;
    for (k /= 2; k >= 1; k /= 2) {
        uint32_t l = s->seg[2 * k], r = s->seg[2 * k + 1];
        s->seg[k] = l < r ? l : r;
    }
}

/* The first rank >= from in [lo, hi) (the range of node) whose value is <= limit. */
static size_t seg_find(const struct lt_qsim *s, size_t node, size_t lo, size_t hi, size_t from,
                       uint32_t limit)
{
    size_t mid, r;

    if (hi <= from || s->seg[node] > limit)
        return NONE;
    if (hi - lo == 1)
        return lo;
    mid = lo + (hi - lo) / 2;
    r = seg_find(s, 2 * node, lo, mid, from, limit);
    return r != NONE ? r : seg_find(s, 2 * node + 1, mid, hi, from, limit);
}

/* Puts job j (already counted in unstarted) in the queue structure. */
static int queue_add(struct lt_qsim *s, uint32_t j)
{
    if (s->ranked) {
        seg_set(s, s->rank_of[j], s->unstarted[j]);
        return 0;
    }
    if (LT_VEC_RESERVE(s->qa, s->cap_qa, s->n_qa + 1) != 0)
        return LT_ENOMEM;
    s->qa[s->n_qa++] = qent_of(s, j, s->keyed ? s->key_time : s->now);
    s->dirty = true;
    return 0;
}

/* Position (rank or index in qa) of the first queued job after position after (NONE: from
 * the start) needing at most limit cores, or NONE. */
static size_t q_first(const struct lt_qsim *s, size_t after, uint32_t limit)
{
    size_t from = after == NONE ? 0 : after + 1;

    if (s->ranked)
        return seg_find(s, 1, 0, s->width, from, limit);
    for (size_t k = from; k < s->n_qa; k++) {
        uint32_t u = s->unstarted[s->qa[k].job];
        if (u > 0 && u <= limit)
            return k;
    }
    return NONE;
}

static uint32_t q_job(const struct lt_qsim *s, size_t pos)
{
    return s->ranked ? s->job_at[pos] : s->qa[pos].job;
}

/* Before a dispatch of the sorted queue: re-key if due, sort if needed. */
static void q_prepare(struct lt_qsim *s)
{
    if (s->ranked)
        return;
    if (!s->keyed || s->now - s->key_time >= s->p.reprioritise_s) {
        if (lt_qorder_time_varying(&s->p.order) || !s->keyed) {
            for (size_t k = 0; k < s->n_qa; k++)
                s->qa[k] = qent_of(s, s->qa[k].job, s->now);
            s->dirty = true;
        }
        s->keyed = true;
        s->key_time = s->now;
    }
    if (s->dirty)
        qsort(s->qa, s->n_qa, sizeof(*s->qa), qent_cmp);
    s->dirty = false;
}

/* After a dispatch of the sorted queue: drop the jobs fully started (order kept). */
static void q_compact(struct lt_qsim *s)
{
    size_t w = 0;

    if (s->ranked)
        return;
    for (size_t k = 0; k < s->n_qa; k++)
        if (s->unstarted[s->qa[k].job] > 0)
            s->qa[w++] = s->qa[k];
    s->n_qa = w;
}

/* ---- pieces ---- */

/* Starts k of job j's unstarted tasks now. */
static int start_piece(struct lt_qsim *s, uint32_t j, uint32_t k)
{
    const struct lt_qjob *q = &s->jobs[j];
    uint32_t i;

    assert(k > 0 && k <= s->unstarted[j] && k <= s->p.cores - s->busy);
    if (s->free_pc != ABSENT) {
        i = s->free_pc;
        s->free_pc = s->pc[i].job;
    } else {
        if (LT_VEC_RESERVE(s->pc, s->cap_pc, s->n_pc + 1) != 0)
            return LT_ENOMEM;
        i = (uint32_t)s->n_pc++;
    }
    s->pc[i] = (struct piece){s->now + q->runtime_s, s->now + q->estimate_s, j, k, 0};
    if (end_heap_push(s, &s->ends, i) != 0 || (s->use_pred && pred_heap_push(s, &s->preds, i) != 0))
        return LT_ENOMEM;
    if (s->unstarted[j] == q->tasks)
        s->out[j].start_s = s->now;
    if (s->n_running[j]++ == 0)
        s->running++;
    s->busy += k;
    s->unstarted[j] -= k;
    if (s->unstarted[j] == 0) {
        s->queued--;
        if (s->ranked)
            seg_set(s, s->rank_of[j], ABSENT);
    } else if (s->ranked) {
        seg_set(s, s->rank_of[j], s->unstarted[j]);
    }
    return 0;
}

/* Releases the piece at the top of the end heap (it ends now). */
static void release_top(struct lt_qsim *s)
{
    uint32_t i = end_heap_pop(s, &s->ends);
    struct piece *pc = &s->pc[i];
    uint32_t j = pc->job;

    if (s->use_pred)
        pred_heap_remove(s, &s->preds, pc->pos_pred);
    s->busy -= pc->cores;
    if (--s->n_running[j] == 0) {
        s->running--;
        if (s->unstarted[j] == 0) {
            s->out[j].end_s = s->now;
            s->completed++;
        }
    }
    pc->job = s->free_pc;
    s->free_pc = i;
    s->events++;
}

/* ---- dispatch ---- */

/* The shadow time of a head needing need cores (> free now) and the extra cores then, from the
 * predicted ends of the running pieces (spec 1.7). */
static int shadow(struct lt_qsim *s, uint32_t need, double *ts, uint32_t *extra)
{
    uint64_t avail = s->p.cores - s->busy;
    bool found = false;

    s->front.n = 0;
    if (s->preds.n > 0 && front_heap_push(s, &s->front, 0) != 0)
        return LT_ENOMEM;
    while (s->front.n > 0) {
        size_t pos = front_heap_pop(s, &s->front);
        const struct piece *pc = &s->pc[s->preds.a[pos]];
        double t = fmax(pc->pred, s->now);

        if (found && t > *ts)
            break;
        avail += pc->cores;
        if (!found && avail >= need) {
            found = true;
            *ts = t;
        }
        for (size_t c = 2 * pos + 1; c <= 2 * pos + 2 && c < s->preds.n; c++)
            if (front_heap_push(s, &s->front, c) != 0)
                return LT_ENOMEM;
    }
    assert(found); /* rigid jobs need at most C cores */
    *extra = (uint32_t)(avail - need);
    return 0;
}

/* Backfill behind the blocked head at position h (rigid dispatch). */
static int backfill(struct lt_qsim *s, size_t h)
{
    const struct lt_qjob *head = &s->jobs[q_job(s, h)];
    double ts = 0, limit = 0;
    uint32_t extra = 0;
    int rc;

    if (s->p.backfill == LT_QBACKFILL_NONE)
        return 0;
    if (s->p.backfill != LT_QBACKFILL_GREEDY) {
        if ((rc = shadow(s, head->tasks, &ts, &extra)) < 0)
            return rc;
        if (s->p.on_shadow != NULL)
            s->p.on_shadow(s->p.shadow_arg, s->now, q_job(s, h), ts, extra);
        limit = ts + s->p.relax_f * (ts - head->arrival_s);
        if (s->p.backfill == LT_QBACKFILL_EASY)
            limit = ts;
    }
    for (size_t b = h; s->busy < s->p.cores;) {
        uint32_t j;

        if ((b = q_first(s, b, s->p.cores - s->busy)) == NONE)
            break;
        j = q_job(s, b);
        if (s->p.backfill != LT_QBACKFILL_GREEDY) {
            if (s->now + s->jobs[j].estimate_s <= limit)
                ;
            else if (s->jobs[j].tasks <= extra)
                extra -= s->jobs[j].tasks;
            else
                continue;
        }
        if ((rc = start_piece(s, j, s->jobs[j].tasks)) < 0)
            return rc;
    }
    return 0;
}

static void sample(struct lt_qsim *s)
{
    struct lt_qsample x = {s->now, s->busy, s->running, s->queued};

    if (s->p.on_sample == NULL)
        return;
    if (s->sampled && x.busy == s->last.busy && x.running == s->last.running &&
        x.queued == s->last.queued)
        return;
    s->sampled = true;
    s->last = x;
    s->p.on_sample(s->p.sample_arg, &x);
}

static int dispatch_queue(struct lt_qsim *s)
{
    size_t h;
    int rc;

    q_prepare(s);
    while (s->busy < s->p.cores && (h = q_first(s, NONE, ABSENT - 1)) != NONE) {
        uint32_t j = q_job(s, h), free = s->p.cores - s->busy;

        if (s->p.dispatch == LT_QDISPATCH_FRACTIONAL)
            rc = start_piece(s, j, s->unstarted[j] < free ? s->unstarted[j] : free);
        else if (s->jobs[j].tasks <= free)
            rc = start_piece(s, j, s->jobs[j].tasks);
        else
            return backfill(s, h);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int lt_qsim_dispatch(struct lt_qsim *s, struct lt_err *err)
{
    int rc = 0;

    if (!s->pending)
        return 0;
    if (s->queued > 0 && s->busy < s->p.cores) {
        rc = dispatch_queue(s);
        q_compact(s);
    }
    if (rc < 0)
        return oom(err);
    s->pending = false;
    sample(s);
    return 0;
}

int lt_qsim_advance(struct lt_qsim *s, bool *done, struct lt_err *err)
{
    double t = INFINITY;
    int rc;

    if ((rc = lt_qsim_dispatch(s, err)) < 0)
        return rc;
    if (s->ends.n > 0)
        t = s->pc[s->ends.a[0]].end;
    if (s->next_arr < s->n_arr && s->jobs[s->arr[s->next_arr]].arrival_s < t)
        t = s->jobs[s->arr[s->next_arr]].arrival_s;
    *done = isinf(t);
    if (*done)
        return 0;
    s->now = t;
    s->instants++;
    while (s->ends.n > 0 && !(s->pc[s->ends.a[0]].end > t))
        release_top(s);
    while (s->next_arr < s->n_arr && !(s->jobs[s->arr[s->next_arr]].arrival_s > t)) {
        uint32_t j = s->arr[s->next_arr++];

        s->queued++;
        s->events++;
        if (queue_add(s, j) != 0)
            return oom(err);
    }
    if (s->queued > s->max_queued)
        s->max_queued = s->queued;
    s->pending = true;
    return 0;
}

int lt_qsim_finish(struct lt_qsim *s, struct lt_err *err)
{
    bool done = false;
    int rc;

    while ((rc = lt_qsim_advance(s, &done, err)) == 0 && !done)
        ;
    return rc;
}

/* ---- construction ---- */

void lt_qsim_free(struct lt_qsim *s)
{
    if (s == NULL)
        return;
    lt_free(s->own_jobs);
    lt_free(s->origin);
    lt_free(s->out);
    lt_free(s->unstarted);
    lt_free(s->n_running);
    lt_free(s->arr);
    lt_free(s->pc);
    end_heap_free(&s->ends);
    pred_heap_free(&s->preds);
    front_heap_free(&s->front);
    lt_free(s->rank_of);
    lt_free(s->job_at);
    lt_free(s->seg);
    lt_free(s->qa);
    lt_free(s);
}

/* Ranks every job by the (fixed-key) order and builds an empty segment tree. */
static int rank_jobs(struct lt_qsim *s)
{
    struct qent *all = lt_calloc(s->n ? s->n : 1, sizeof(*all));

    s->width = 1;
    while (s->width < s->n)
        s->width *= 2;
    s->rank_of = lt_calloc(s->n ? s->n : 1, sizeof(*s->rank_of));
    s->job_at = lt_calloc(s->n ? s->n : 1, sizeof(*s->job_at));
    s->seg = lt_calloc(2 * s->width, sizeof(*s->seg));
    if (all == NULL || s->rank_of == NULL || s->job_at == NULL || s->seg == NULL) {
        lt_free(all);
        return LT_ENOMEM;
    }
    for (size_t j = 0; j < s->n; j++)
        all[j] = qent_of(s, (uint32_t)j, 0);
    qsort(all, s->n, sizeof(*all), qent_cmp);
    for (size_t r = 0; r < s->n; r++) {
        s->job_at[r] = all[r].job;
        s->rank_of[all[r].job] = (uint32_t)r;
    }
    for (size_t k = 0; k < 2 * s->width; k++)
        s->seg[k] = ABSENT;
    lt_free(all);
    return 0;
}

/* Orders jobs [0..n) by arrival (tie rule) into s->arr. */
static int sort_arrivals(struct lt_qsim *s)
{
    struct qent *all = lt_calloc(s->n ? s->n : 1, sizeof(*all));

    if (all == NULL)
        return LT_ENOMEM;
    for (size_t j = 0; j < s->n; j++)
        all[j] = (struct qent){{0, 0, 0}, s->jobs[j].arrival_s, s->jobs[j].id, (uint32_t)j};
    qsort(all, s->n, sizeof(*all), qent_cmp);
    for (size_t k = 0; k < s->n; k++)
        s->arr[k] = all[k].job;
    lt_free(all);
    return 0;
}

/* A simulator of n jobs (s->jobs to be set by the caller) with per-job arrays allocated and
 * the queue structure for p's order; NULL on allocation failure. */
static struct lt_qsim *alloc_sim(const struct lt_qsim_params *p, size_t n)
{
    struct lt_qsim *s = lt_calloc(1, sizeof(*s));
    size_t m = n ? n : 1;

    if (s == NULL)
        return NULL;
    s->p = *p;
    s->n = n;
    s->free_pc = ABSENT;
    s->use_pred = p->backfill == LT_QBACKFILL_EASY || p->backfill == LT_QBACKFILL_RELAXED;
    s->ranked = !lt_qorder_time_varying(&p->order);
    s->out = lt_calloc(m, sizeof(*s->out));
    s->unstarted = lt_calloc(m, sizeof(*s->unstarted));
    s->n_running = lt_calloc(m, sizeof(*s->n_running));
    s->arr = lt_calloc(m, sizeof(*s->arr));
    if (s->out == NULL || s->unstarted == NULL || s->n_running == NULL || s->arr == NULL) {
        lt_qsim_free(s);
        return NULL;
    }
    for (size_t j = 0; j < n; j++)
        s->out[j] = (struct lt_qjob_out){NAN, NAN};
    return s;
}

struct lt_qsim *lt_qsim_new(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                            struct lt_err *err)
{
    struct lt_qsim *s;

    if (p == NULL || (jobs == NULL && n > 0)) {
        lt_err_set(err, LT_EINVAL, 0, 0, "queue simulator needs parameters and jobs");
        return NULL;
    }
    if (n > MAX_JOBS) {
        lt_err_set(err, LT_EINVAL, 0, 0, "queue simulator takes at most %zu jobs, not %zu",
                   MAX_JOBS, n);
        return NULL;
    }
    if (check_params(p, err) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (check_job(p, &jobs[i], i, err) < 0)
            return NULL;
    if ((s = alloc_sim(p, n)) == NULL)
        goto out_oom;
    s->jobs = jobs;
    s->n_arr = n;
    for (size_t j = 0; j < n; j++)
        s->unstarted[j] = jobs[j].tasks;
    if (sort_arrivals(s) < 0 || (s->ranked && rank_jobs(s) < 0))
        goto out_oom;
    return s;

out_oom:
    lt_qsim_free(s);
    oom(err);
    return NULL;
}

/* ---- forks and order changes ---- */

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

    return a < b ? -1 : a > b;
}

/* The present jobs of s (queued or running), sorted by index, without duplicates, into an
 * owned array *out of *m entries. */
static int present_jobs(const struct lt_qsim *s, uint32_t **out, size_t *m)
{
    uint32_t *list = lt_calloc(s->queued + s->ends.n + 1, sizeof(*list));
    size_t k = 0, w = 0;

    if (list == NULL)
        return LT_ENOMEM;
    for (size_t pos = q_first(s, NONE, ABSENT - 1); pos != NONE; pos = q_first(s, pos, ABSENT - 1))
        list[k++] = q_job(s, pos);
    for (size_t i = 0; i < s->ends.n; i++)
        list[k++] = s->pc[s->ends.a[i]].job;
    qsort(list, k, sizeof(*list), cmp_u32);
    for (size_t i = 0; i < k; i++)
        if (w == 0 || list[w - 1] != list[i])
            list[w++] = list[i];
    *out = list;
    *m = w;
    return 0;
}

/* Copies s's running pieces into f, whose jobs are s's list[0..m-1]. */
static int copy_pieces(struct lt_qsim *f, const struct lt_qsim *s, const uint32_t *list, size_t m)
{
    for (size_t i = 0; i < s->ends.n; i++) {
        struct piece pc = s->pc[s->ends.a[i]];
        const uint32_t *at = bsearch(&pc.job, list, m, sizeof(*list), cmp_u32);

        assert(at != NULL);
        pc.job = (uint32_t)(at - list);
        if (LT_VEC_RESERVE(f->pc, f->cap_pc, f->n_pc + 1) != 0)
            return LT_ENOMEM;
        f->pc[f->n_pc] = pc;
        if (end_heap_push(f, &f->ends, (uint32_t)f->n_pc) != 0 ||
            (f->use_pred && pred_heap_push(f, &f->preds, (uint32_t)f->n_pc) != 0))
            return LT_ENOMEM;
        f->n_pc++;
    }
    return 0;
}

/* Fills fork f (allocated for list[0..m-1] of s) with s's state of those jobs. */
static int fill_fork(struct lt_qsim *f, const struct lt_qsim *s, const uint32_t *list, size_t m)
{
    f->own_jobs = lt_calloc(m ? m : 1, sizeof(*f->own_jobs));
    f->origin = lt_calloc(m ? m : 1, sizeof(*f->origin));
    if (f->own_jobs == NULL || f->origin == NULL)
        return LT_ENOMEM;
    for (size_t i = 0; i < m; i++) {
        uint32_t j = list[i];

        f->own_jobs[i] = s->jobs[j];
        f->origin[i] = s->origin != NULL ? s->origin[j] : j;
        f->unstarted[i] = s->unstarted[j];
        f->n_running[i] = s->n_running[j];
        f->out[i] = s->out[j];
    }
    f->jobs = f->own_jobs;
    /* arr in arrival order, all consumed: the summary's first arrival is the earliest present */
    if (sort_arrivals(f) < 0)
        return LT_ENOMEM;
    f->n_arr = f->next_arr = m;
    f->now = s->now;
    f->pending = s->pending;
    f->busy = s->busy;
    f->running = s->running;
    f->queued = f->max_queued = s->queued;
    if (f->ranked && rank_jobs(f) < 0)
        return LT_ENOMEM;
    for (size_t i = 0; i < m; i++)
        if (f->unstarted[i] > 0 && queue_add(f, (uint32_t)i) < 0)
            return LT_ENOMEM;
    return copy_pieces(f, s, list, m);
}

struct lt_qsim *lt_qsim_fork(const struct lt_qsim *s, const struct lt_qorder *o, struct lt_err *err)
{
    struct lt_qsim_params p = s->p;
    struct lt_qsim *f = NULL;
    uint32_t *list = NULL;
    size_t m = 0;

    if (o != NULL) {
        if (check_order(o, err) < 0)
            return NULL;
        p.order = *o;
    }
    p.on_sample = NULL;
    p.on_shadow = NULL;
    if (present_jobs(s, &list, &m) < 0 || (f = alloc_sim(&p, m)) == NULL ||
        fill_fork(f, s, list, m) < 0) {
        lt_free(list);
        lt_qsim_free(f);
        oom(err);
        return NULL;
    }
    lt_free(list);
    return f;
}

int lt_qsim_set_order(struct lt_qsim *s, const struct lt_qorder *o, struct lt_err *err)
{
    struct qent *qa;
    size_t k = 0;

    if (o == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "queue simulator: no order given");
    if (check_order(o, err) < 0)
        return LT_EINVAL;
    if ((qa = lt_calloc(s->queued + 1, sizeof(*qa))) == NULL)
        return oom(err);
    for (size_t pos = q_first(s, NONE, ABSENT - 1); pos != NONE; pos = q_first(s, pos, ABSENT - 1))
        qa[k++].job = q_job(s, pos);
    assert(k == s->queued);
    lt_free(s->rank_of);
    lt_free(s->job_at);
    lt_free(s->seg);
    lt_free(s->qa);
    s->rank_of = s->job_at = s->seg = NULL;
    s->ranked = false;
    s->p.order = *o;
    s->qa = qa;
    s->n_qa = k;
    s->cap_qa = s->queued + 1;
    s->keyed = false;
    s->dirty = true;
    return 0;
}

/* ---- queries ---- */

double lt_qsim_now(const struct lt_qsim *s)
{
    return s->now;
}

size_t lt_qsim_n_jobs(const struct lt_qsim *s)
{
    return s->n;
}

const struct lt_qjob *lt_qsim_job(const struct lt_qsim *s, size_t i)
{
    return i < s->n ? &s->jobs[i] : NULL;
}

size_t lt_qsim_origin(const struct lt_qsim *s, size_t i)
{
    return s->origin != NULL ? s->origin[i] : i;
}

const struct lt_qjob_out *lt_qsim_outcome(const struct lt_qsim *s)
{
    return s->out;
}

uint64_t lt_qsim_completed(const struct lt_qsim *s)
{
    return s->completed;
}

size_t lt_qsim_queued(const struct lt_qsim *s)
{
    return s->queued;
}

uint32_t lt_qsim_busy(const struct lt_qsim *s)
{
    return s->busy;
}

uint32_t lt_qsim_unstarted(const struct lt_qsim *s, size_t i)
{
    return i < s->n ? s->unstarted[i] : 0;
}

size_t lt_qsim_queue(const struct lt_qsim *s, size_t *out)
{
    size_t k = 0;

    for (size_t pos = q_first(s, NONE, ABSENT - 1); pos != NONE; pos = q_first(s, pos, ABSENT - 1))
        out[k++] = q_job(s, pos);
    return k;
}

const struct lt_qsim_params *lt_qsim_params_of(const struct lt_qsim *s)
{
    return &s->p;
}

/* ---- metrics ---- */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return a < b ? -1 : a > b;
}

/* Nearest rank: the smallest value with at least q of the m sorted values at or below it. */
static double nearest_rank(const double *v, size_t m, double q)
{
    size_t r = (size_t)ceil(q * (double)m);

    return v[r > 0 ? r - 1 : 0];
}

int lt_qsim_summarise(const struct lt_qsim *s, struct lt_qsim_summary *sum, struct lt_err *err)
{
    double *w = lt_calloc(s->n ? s->n : 1, sizeof(*w));
    double resp = 0, bsld = 0, xf = 0;
    size_t m = 0;

    if (w == NULL)
        return oom(err);
    memset(sum, 0, sizeof(*sum));
    sum->jobs = s->n;
    sum->events = s->events;
    sum->instants = s->instants;
    sum->max_queued = s->max_queued;
    sum->first_arrival_s = s->n_arr > 0 ? s->jobs[s->arr[0]].arrival_s : NAN;
    sum->last_end_s = -INFINITY;
    for (size_t j = 0; j < s->n; j++) {
        const struct lt_qjob *q = &s->jobs[j];
        double c = s->out[j].end_s, rt;

        if (isnan(c))
            continue;
        rt = c - q->arrival_s;
        w[m++] = s->out[j].start_s - q->arrival_s;
        sum->total_wait_s += s->out[j].start_s - q->arrival_s;
        sum->work_core_s += q->tasks * q->runtime_s;
        sum->last_end_s = fmax(sum->last_end_s, c);
        resp += rt;
        bsld += fmax(1, rt / fmax(q->runtime_s, LT_QSIM_TAU_S));
        xf += rt / q->runtime_s;
    }
    sum->completed = m;
    if (m == 0) {
        sum->last_end_s = sum->makespan_s = sum->utilisation = NAN;
        sum->wait_mean_s = sum->wait_p50_s = sum->wait_p90_s = sum->wait_p99_s = NAN;
        sum->response_mean_s = sum->bsld_mean = sum->xf_mean = NAN;
        lt_free(w);
        return 0;
    }
    qsort(w, m, sizeof(*w), cmp_double);
    sum->makespan_s = sum->last_end_s - sum->first_arrival_s;
    sum->utilisation = sum->work_core_s / ((double)s->p.cores * sum->makespan_s);
    sum->wait_mean_s = sum->total_wait_s / (double)m;
    sum->wait_p50_s = nearest_rank(w, m, 0.5);
    sum->wait_p90_s = nearest_rank(w, m, 0.9);
    sum->wait_p99_s = nearest_rank(w, m, 0.99);
    sum->response_mean_s = resp / (double)m;
    sum->bsld_mean = bsld / (double)m;
    sum->xf_mean = xf / (double)m;
    lt_free(w);
    return 0;
}

int lt_qsim_run(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                struct lt_qjob_out *out, struct lt_qsim_summary *sum, struct lt_err *err)
{
    struct lt_err e;
    struct lt_qsim *s;
    int rc;

    lt_err_init(&e, NULL);
    if ((s = lt_qsim_new(p, jobs, n, &e)) == NULL)
        return lt_err_set(err, e.code, 0, 0, "%s", e.text);
    if ((rc = lt_qsim_finish(s, err)) == 0 && sum != NULL)
        rc = lt_qsim_summarise(s, sum, err);
    if (rc == 0 && out != NULL && n > 0)
        memcpy(out, s->out, n * sizeof(*out));
    lt_qsim_free(s);
    return rc;
}
