/* slotsim.c -- the slot-based cluster simulator (lt_slotsim.h, docs/slots.md).
 *
 * Event-driven: arrivals (tasks sorted by arrival, then id), and per server its next
 * completion or the end of its wake-up, in one heap with lazy deletion (a version per
 * server). After the events of an instant, the scheduler walks the central queue (A21).
 *
 * Processor sharing, exact: every task on an ON server receives the same rate
 * Gamma = C / max(n, cores), so the server keeps w, the work one task has received since the
 * server was created, and each task its threshold thr = w at placement + remaining demand; a
 * rate change moves no threshold, and the next completion is (min thr - w) / Gamma away.
 * While a server wakes, w does not advance: its tasks hold their slots without progress
 * (A40).
 *
 * Free slots: servers are ordered by slot power (cpu / slots), descending, and a Fenwick tree
 * over them counts free slots, so a uniformly random free slot of the cluster, or of the most
 * powerful tier that has one (WAA, A23), is found in O(log servers).
 *
 * Queue orders (lt_slot_params.qorder, docs/slots.md "Queue orders"): with none, the central
 * queue is a heap of task indexes (priority, then first arrival). With one, it is a heap of
 * (key, task) entries: the order's key (lt_qorder_key of size 1, the wait since first arrival
 * and the CPU demand) computed when the task is queued and kept in its entry, so comparisons
 * call no log(), and stale entries (HYBRID phase I leaves some) never sit out of order when a
 * task's key changes. Time-varying orders re-key: the heap is rebuilt from its live entries
 * with the keys of now, O(q), at a scheduling round at most every reprioritise_s.
 *
 * Victims: per priority class, the tasks holding a slot (running or waking) in a list ordered
 * by start time (placements happen in time order) and an array for uniform draws. A victim
 * comes from the lowest class that holds a slot, if it is below the evictor's (A52); mrs takes
 * the latest start, lrs the earliest, ties (equal start times) drawn uniformly (A24).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_slotsim.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lt_heap.h"
#include "lt_mem.h"
#include "lt_rng.h"

#define NONE      UINT32_MAX
#define N_CLASSES 12
#define DONE_EPS  1e-9 /* relative: a threshold within this of w has been reached */

enum { SRV_ON, SRV_SLEEP, SRV_WAKING };

struct srv {
    double cpu;
    uint32_t cores, slots, n; /* n: tasks holding a slot */
    int state;
    double wake_until;
    double w, t_last; /* work per task received; time w was brought up to */
    uint32_t *heap;   /* tasks by thr (min-heap of task indexes), capacity slots; hand-written
                       * (h_up, h_down) rather than lt_heap.h: a fixed array allocated once
                       * whose count is the server's occupancy n, read everywhere */
    uint32_t version;
    const struct lt_server_type *type;
    double t_energy;    /* energy accounted up to here */
    uint32_t cfg_index; /* its number in configuration order */
    double mem_free;    /* unallocated memory (memory-limited runs) */
};

struct tk {
    uint32_t srv;              /* server holding it, or NONE */
    double rem;                /* remaining demand (valid while it holds no slot) */
    double thr;                /* completion threshold in its server's w (while it holds a slot) */
    double start;              /* start of the current attempt */
    double rem_start;          /* rem when the attempt started */
    uint32_t hpos;             /* position in its server's heap */
    uint32_t prev, next, apos; /* class list and class array links */
    uint32_t e, me;            /* evictions, of which memory evictions */
    uint32_t attempt;          /* placements so far: a checkpoint event of an older one is stale */
    double alloc;              /* memory allocated to its attempt */
    bool ckpt;                 /* a memory checkpoint is pending */
    bool dropped, finished;
    bool queued; /* in the central queue (its heap entries may be stale otherwise) */
    bool sticky; /* holds a sticky slot (HYBRID): never a priority victim */
};

enum { EV_SERVER, EV_CHECKPOINT };

struct sev {
    double t;
    uint32_t ref, version; /* a server and its version, or a task and its attempt */
    int kind;
};

/* An entry of the keyed central queue: a task and its order's key when queued or re-keyed. */
struct qent {
    double key;
    uint32_t i;
};

struct sim;
static bool q_before(const struct sim *m, const uint32_t *a, const uint32_t *b);
static bool kq_before(const struct sim *m, const struct qent *a, const struct qent *b);
static bool fq_before(const struct sim *m, const uint32_t *a, const uint32_t *b);
static bool ev_before(const struct sim *m, const struct sev *a, const struct sev *b);

/* Binary heaps of task indexes, ordered by the central queue's order (priority, then first
 * arrival: qheap) or by first arrival alone (HYBRID's phase I: fqheap). Entries of tasks no
 * longer queued stay until they reach the top, so a heap can hold more entries than tasks. */
LT_HEAP_DEFINE(qheap, uint32_t, const struct sim, q_before, LT_HEAP_NO_MOVED);
/* The central queue under a queue order (lt_slot_params.qorder): (key, task) entries. */
LT_HEAP_DEFINE(kqheap, struct qent, const struct sim, kq_before, LT_HEAP_NO_MOVED);
LT_HEAP_DEFINE(fqheap, uint32_t, const struct sim, fq_before, LT_HEAP_NO_MOVED);
/* Server events by time (stale ones dropped at the top by version). */
LT_HEAP_DEFINE(evheap, struct sev, const struct sim, ev_before, LT_HEAP_NO_MOVED);

struct sim {
    const struct lt_slot_params *p;
    struct lt_slot_task *in; /* by internal index (sorted by arrival, id) */
    struct lt_slot_outcome *out;
    size_t n;
    struct tk *t;
    struct srv *s;
    uint32_t ns;
    uint32_t *fen; /* Fenwick tree of free slots over servers (1-based) */
    uint32_t n_tiers;
    uint32_t *tier_lo; /* tier k: servers [tier_lo[k], tier_lo[k + 1]) */
    uint64_t free_total;
    struct qheap q;    /* the central queue (no queue order) */
    struct kqheap kq;  /* the central queue under a queue order (keyed) */
    bool keyed;        /* the queue order needs keys: kq is the central queue, q is unused */
    bool rekey;        /* its keys change with waiting (lt_qorder_time_varying) */
    double last_rekey; /* time of the last re-key (-INFINITY: none yet) */
    struct fqheap fq;  /* HYBRID: the same tasks by first arrival alone */
    uint64_t total_slots, run_sticky, run_regular;
    uint32_t top_hi;  /* servers [0, top_hi) have the most powerful slots */
    struct evheap ev; /* server events */
    uint32_t head[N_CLASSES], tail[N_CLASSES]; /* class lists by start time */
    uint32_t *arr[N_CLASSES];                  /* class arrays */
    uint32_t cnt[N_CLASSES];
    struct lt_rng slot_rng, evict_rng, mem_rng;
    double max_core; /* the largest core capacity, cpu / cores (T_x^min, A26) */
    struct lt_slot_summary *sum;
    bool broken; /* lt_slot_params.check_break done */
};

/* ---- the central queue ---- */

static bool q_before(const struct sim *m, const uint32_t *a, const uint32_t *b)
{
    if (m->p->order == LT_SLOT_ORDER_PRIORITY && m->in[*a].prio != m->in[*b].prio)
        return m->in[*a].prio > m->in[*b].prio;
    return *a < *b; /* internal index = order of first arrival, then id */
}

/* The keyed queue: priority first unless FCFS mode, then the higher key, then first arrival
 * (the registry's tie rule: arrival, then id, which the internal index encodes). */
static bool kq_before(const struct sim *m, const struct qent *a, const struct qent *b)
{
    if (m->p->order == LT_SLOT_ORDER_PRIORITY && m->in[a->i].prio != m->in[b->i].prio)
        return m->in[a->i].prio > m->in[b->i].prio;
    if (a->key > b->key || a->key < b->key)
        return a->key > b->key;
    return a->i < b->i;
}

/* Task i's key at now: size 1 (a task takes one slot), its wait since first arrival, its CPU
 * demand as the run time (the oracle). */
static double q_key(const struct sim *m, uint32_t i, double now)
{
    return lt_qorder_key(m->p->qorder, 1.0, now - m->in[i].arrival, m->in[i].demand);
}

static bool fq_before(const struct sim *m, const uint32_t *a, const uint32_t *b)
{
    (void)m;
    return *a < *b;
}

/* The first queued task of the central queue, or NONE (stale entries dropped on the way). */
static uint32_t q_head(struct sim *m)
{
    if (m->keyed) {
        while (m->kq.n > 0 && !m->t[m->kq.a[0].i].queued)
            (void)kqheap_pop(m, &m->kq);
        return m->kq.n > 0 ? m->kq.a[0].i : NONE;
    }
    while (m->q.n > 0 && !m->t[m->q.a[0]].queued)
        (void)qheap_pop(m, &m->q);
    return m->q.n > 0 ? m->q.a[0] : NONE;
}

/* The same for HYBRID's first-arrival heap. */
static uint32_t fq_head(struct sim *m)
{
    while (m->fq.n > 0 && !m->t[m->fq.a[0]].queued)
        (void)fqheap_pop(m, &m->fq);
    return m->fq.n > 0 ? m->fq.a[0] : NONE;
}

/* Removes the head of the central queue (q_head's task). */
static void q_pop(struct sim *m)
{
    if (m->keyed)
        (void)kqheap_pop(m, &m->kq);
    else
        (void)qheap_pop(m, &m->q);
}

/* Queues task i at now (in both orders under HYBRID). */
static int q_push(struct sim *m, uint32_t i, double now)
{
    int rc = m->keyed ? kqheap_push(m, &m->kq, (struct qent){q_key(m, i, now), i})
                      : qheap_push(m, &m->q, i);

    m->t[i].queued = true;
    if (rc < 0 || (m->p->sticky > 0 && fqheap_push(m, &m->fq, i) < 0))
        return LT_ENOMEM;
    return 0;
}

/* Time-varying orders, at a scheduling round: every live entry gets its key of now and the
 * heap is rebuilt (stale entries dropped), at most every reprioritise_s. */
static void q_rekey(struct sim *m, double now)
{
    size_t live = 0;

    if (!m->rekey || m->kq.n == 0 || now - m->last_rekey < m->p->reprioritise_s ||
        !(now > m->last_rekey))
        return;
    m->last_rekey = now;
    for (size_t k = 0; k < m->kq.n; k++) {
        uint32_t i = m->kq.a[k].i;
        if (m->t[i].queued)
            m->kq.a[live++] = (struct qent){q_key(m, i, now), i};
    }
    m->kq.n = live;
    for (size_t k = live / 2; k-- > 0;)
        kqheap_down(m, &m->kq, k);
}

/* ---- server events ---- */

static bool ev_before(const struct sim *m, const struct sev *a, const struct sev *b)
{
    (void)m;
    return a->t < b->t;
}

static int ev_push(struct sim *m, double t, uint32_t ref, int kind)
{
    struct sev e = {t, ref, kind == EV_SERVER ? m->s[ref].version : m->t[ref].attempt, kind};

    return evheap_push(m, &m->ev, e);
}

/* ---- energy ---- */

/* The server's power now (eq. 6.3): sleep, waking at peak, on at idle plus its CPU share. */
static double power(const struct srv *s)
{
    double u;

    if (s->state == SRV_SLEEP)
        return s->type->p_sleep;
    if (s->state == SRV_WAKING)
        return s->type->p_peak;
    u = (double)(s->n < s->cores ? s->n : s->cores) / (double)s->cores;
    return s->type->p_idle + s->type->p_cpu * u +
           (s->type->mem > 0.0 ? s->type->p_mem * (1.0 - s->mem_free / s->type->mem) : 0.0);
}

/* Accounts the server's energy up to t; call before any change of its state or tasks. */
static void energy_to(struct sim *m, struct srv *s, double t)
{
    if (t > s->t_energy) {
        m->sum->energy_j += power(s) * (t - s->t_energy);
        s->t_energy = t;
    }
}

/* ---- per-server processor sharing ---- */

static bool ev_live(const struct sim *m, const struct sev *e)
{
    if (e->kind == EV_SERVER)
        return e->version == m->s[e->ref].version;
    return e->version == m->t[e->ref].attempt && m->t[e->ref].ckpt;
}

static double rate(const struct srv *s)
{
    return s->cpu / (double)(s->n > s->cores ? s->n : s->cores);
}

static void advance(struct srv *s, double t)
{
    if (s->state == SRV_ON && s->n > 0 && t > s->t_last)
        s->w += rate(s) * (t - s->t_last);
    s->t_last = t;
}

static void h_set(struct sim *m, struct srv *s, uint32_t j, uint32_t i)
{
    s->heap[j] = i;
    m->t[i].hpos = j;
}

static void h_up(struct sim *m, struct srv *s, uint32_t j)
{
    uint32_t i = s->heap[j];

    while (j > 0 && m->t[i].thr < m->t[s->heap[(j - 1) / 2]].thr) {
        h_set(m, s, j, s->heap[(j - 1) / 2]);
        j = (j - 1) / 2;
    }
    h_set(m, s, j, i);
}

static void h_down(struct sim *m, struct srv *s, uint32_t j)
{
    uint32_t i = s->heap[j];

    for (;;) {
        uint32_t c = 2 * j + 1;
        if (c >= s->n)
            break;
        if (c + 1 < s->n && m->t[s->heap[c + 1]].thr < m->t[s->heap[c]].thr)
            c++;
        if (!(m->t[s->heap[c]].thr < m->t[i].thr))
            break;
        h_set(m, s, j, s->heap[c]);
        j = c;
    }
    h_set(m, s, j, i);
}

/* The server's next event: end of wake-up, or its next completion; INFINITY if none. */
static double srv_next(const struct sim *m, const struct srv *s)
{
    if (s->state == SRV_WAKING)
        return s->wake_until;
    if (s->state != SRV_ON || s->n == 0)
        return INFINITY;
    return s->t_last + (m->t[s->heap[0]].thr - s->w) / rate(s);
}

static int srv_reschedule(struct sim *m, uint32_t si)
{
    double t = srv_next(m, &m->s[si]);

    m->s[si].version++;
    return isfinite(t) ? ev_push(m, t, si, EV_SERVER) : 0;
}

/* ---- free slots ---- */

static void fen_add(struct sim *m, uint32_t si, int d)
{
    for (uint32_t k = si + 1; k <= m->ns; k += k & (0u - k))
        m->fen[k] = (uint32_t)((int64_t)m->fen[k] + d);
    m->free_total = (uint64_t)((int64_t)m->free_total + d);
}

static uint64_t fen_prefix(const struct sim *m, uint32_t si) /* free slots of servers < si */
{
    uint64_t r = 0;

    for (uint32_t k = si; k > 0; k -= k & (0u - k))
        r += m->fen[k];
    return r;
}

/* The server holding the u-th free slot (0-based) in server order. */
static uint32_t fen_find(const struct sim *m, uint64_t u)
{
    uint32_t pos = 0, step = 1;

    while (step * 2 <= m->ns)
        step *= 2;
    for (; step > 0; step /= 2) {
        if (pos + step <= m->ns && m->fen[pos + step] <= u) {
            pos += step;
            u -= m->fen[pos];
        }
    }
    return pos; /* 0-based server */
}

/* A free slot for task i: uniform over the cluster's free slots, or, for a production task
 * under WAA, uniform over the most powerful tier that has one. free_total > 0. */
static uint32_t pick_slot(struct sim *m, uint32_t i)
{
    uint64_t lo = 0, n = m->free_total;

    if (m->p->waa && lt_class_is_production(m->in[i].prio)) {
        for (uint32_t k = 0; k < m->n_tiers; k++) {
            uint64_t a = fen_prefix(m, m->tier_lo[k]), b = fen_prefix(m, m->tier_lo[k + 1]);
            if (b > a) {
                lo = a;
                n = b - a;
                break;
            }
        }
    }
    return fen_find(m, lo + lt_rng_below(&m->slot_rng, n));
}

/* ---- class lists (victims) ---- */

static void cls_add(struct sim *m, uint32_t i)
{
    int c = m->in[i].prio;
    struct tk *t = &m->t[i];

    t->prev = m->tail[c];
    t->next = NONE;
    if (m->tail[c] != NONE)
        m->t[m->tail[c]].next = i;
    else
        m->head[c] = i;
    m->tail[c] = i;
    t->apos = m->cnt[c];
    m->arr[c][m->cnt[c]++] = i;
}

static void cls_del(struct sim *m, uint32_t i)
{
    int c = m->in[i].prio;
    struct tk *t = &m->t[i];
    uint32_t last;

    if (t->prev != NONE)
        m->t[t->prev].next = t->next;
    else
        m->head[c] = t->next;
    if (t->next != NONE)
        m->t[t->next].prev = t->prev;
    else
        m->tail[c] = t->prev;
    last = m->arr[c][--m->cnt[c]];
    m->arr[c][t->apos] = last;
    m->t[last].apos = t->apos;
}

/* The victim for an evictor of priority prio, or NONE. */
static uint32_t pick_victim(struct sim *m, int prio)
{
    for (int c = 0; c < prio && c < N_CLASSES; c++) {
        uint32_t end, k = 1, v;
        bool from_tail;

        if (m->cnt[c] == 0)
            continue;
        if (m->p->evict == LT_SLOT_EVICT_RND)
            return m->arr[c][lt_rng_below(&m->evict_rng, m->cnt[c])];
        from_tail = m->p->evict == LT_SLOT_EVICT_MRS;
        end = from_tail ? m->tail[c] : m->head[c];
        /* ties: the tasks at that end with the same start time, drawn uniformly */
        for (v = end;;) {
            uint32_t nb = from_tail ? m->t[v].prev : m->t[v].next;
            double a = m->t[nb == NONE ? v : nb].start, b = m->t[end].start;
            if (nb == NONE || a < b || a > b)
                break;
            v = nb;
            k++;
        }
        k = (uint32_t)lt_rng_below(&m->evict_rng, k);
        for (v = end; k > 0; k--)
            v = from_tail ? m->t[v].prev : m->t[v].next;
        return v;
    }
    return NONE;
}

/* WAE (A22, the prose): for a production evictor, the most recently started task of the
 * lowest class below it among the tasks on the most powerful slots; NONE if there is none
 * (the caller then takes the policy's cluster-wide victim). Ties drawn uniformly. */
static uint32_t pick_victim_wae(struct sim *m, int prio)
{
    int low = prio;
    double latest = -INFINITY;
    uint32_t k = 0, pick = 0;

    for (uint32_t si = 0; si < m->top_hi; si++) {
        const struct srv *s = &m->s[si];
        for (uint32_t j = 0; j < s->n; j++) {
            const struct tk *t = &m->t[s->heap[j]];
            int c = m->in[s->heap[j]].prio;
            if (t->sticky || c >= low)
                continue;
            low = c;
        }
    }
    if (low >= prio)
        return NONE;
    for (uint32_t pass = 0; pass < 2; pass++) { /* the latest start, then the k-th of ties */
        if (pass == 1)
            pick = (uint32_t)lt_rng_below(&m->evict_rng, k);
        for (uint32_t si = 0; si < m->top_hi; si++) {
            const struct srv *s = &m->s[si];
            for (uint32_t j = 0; j < s->n; j++) {
                uint32_t i = s->heap[j];
                const struct tk *t = &m->t[i];
                if (t->sticky || m->in[i].prio != low)
                    continue;
                if (pass == 0) {
                    if (t->start > latest) {
                        latest = t->start;
                        k = 0;
                    }
                    k += !(t->start < latest);
                } else if (!(t->start < latest) && pick-- == 0) {
                    return i;
                }
            }
        }
    }
    return NONE;
}

/* ---- placing and removing ---- */

static int place(struct sim *m, uint32_t i, uint32_t si, double now, bool sticky)
{
    struct srv *s = &m->s[si];
    struct tk *t = &m->t[i];

    t->queued = false;
    t->sticky = sticky;
    m->out[i].server = s->cfg_index;
    m->out[i].sticky = sticky;
    if (sticky)
        m->run_sticky++;
    else
        m->run_regular++;
    advance(s, now);
    energy_to(m, s, now);
    t->srv = si;
    t->start = now;
    t->rem_start = t->rem;
    t->thr = s->w + t->rem;
    s->heap[s->n++] = i;
    h_up(m, s, s->n - 1);
    fen_add(m, si, -1);
    if (!sticky)
        cls_add(m, i);
    if (s->state == SRV_SLEEP) {
        if (m->p->wake_s > 0.0) {
            s->state = SRV_WAKING;
            s->wake_until = now + m->p->wake_s;
        } else {
            s->state = SRV_ON;
        }
    }
    t->attempt++;
    if (m->p->memory != LT_SLOT_MEM_UNLIMITED) {
        /* A25 steps 1-3: the task starts whatever the memory; short of its average usage it
         * takes what is free and is checked again at X ~ U[0, T_x^min] of running time, T_x^min
         * its demand at the largest core capacity (A26). */
        double want = m->in[i].mem;
        t->alloc = s->mem_free >= want ? want : (s->mem_free > 0.0 ? s->mem_free : 0.0);
        s->mem_free -= t->alloc;
        if (t->alloc < want) {
            double x = lt_rng_uniform(&m->mem_rng) * t->rem / m->max_core;
            double from = s->state == SRV_WAKING ? s->wake_until : now;
            int rc;
            t->ckpt = true;
            if ((rc = ev_push(m, from + x, i, EV_CHECKPOINT)) < 0)
                return rc;
        }
    }
    return srv_reschedule(m, si);
}

/* Takes task i off its server at now; its remaining demand is kept in rem. An emptied server
 * sleeps (SLP) unless keep_awake (an eviction: the evictor takes the slot at once). */
static int unplace(struct sim *m, uint32_t i, double now, bool keep_awake)
{
    struct tk *t = &m->t[i];
    uint32_t si = t->srv, j = t->hpos;
    struct srv *s = &m->s[si];

    advance(s, now);
    energy_to(m, s, now);
    t->rem = t->thr - s->w;
    if (t->rem < 0.0)
        t->rem = 0.0;
    s->n--;
    if (j != s->n) {
        h_set(m, s, j, s->heap[s->n]);
        h_up(m, s, j);
        h_down(m, s, m->t[s->heap[j]].hpos);
    }
    t->srv = NONE;
    s->mem_free += t->alloc;
    t->alloc = 0.0;
    t->ckpt = false;
    fen_add(m, si, +1);
    if (t->sticky) {
        m->run_sticky--; /* the token returns to the pool */
        t->sticky = false;
    } else {
        m->run_regular--;
        cls_del(m, i);
    }
    if (s->n == 0 && m->p->sleep && s->state == SRV_ON && !keep_awake)
        s->state = SRV_SLEEP;
    return srv_reschedule(m, si);
}

/* Evicts task v at now: by priority (its slot goes to the evictor at once) or for memory. */
static int evict(struct sim *m, uint32_t v, double now, bool memory)
{
    struct tk *t = &m->t[v];
    int rc;

    assert(memory || !t->sticky); /* HYBRID: sticky tasks are never priority victims */
    rc = unplace(m, v, now, !memory);
    if (rc < 0)
        return rc;
    m->sum->ne++;
    if (t->e++ == 0)
        m->sum->net++;
    if (memory) {
        t->me++;
    } else {
        m->sum->ne_priority++;
        if (t->e - t->me == 1)
            m->sum->net_priority++;
    }
    if (!m->p->resume) {
        double lost = t->rem_start - t->rem;
        m->out[v].wasted += lost;
        m->sum->we += lost;
        t->rem = m->in[v].demand;
    }
    if (m->p->drop_threshold > 0 && t->e >= m->p->drop_threshold) {
        t->dropped = true;
        m->sum->dropped++;
        return 0;
    }
    return q_push(m, v, now);
}

/* HYBRID phase I (A34, A35): queued tasks in first-arrival order take sticky slots while
 * tokens and free slots remain; they are never priority-evicted. Then the central queue,
 * head first, on the regular pool, until the head can neither take a free slot nor evict. */
static int schedule(struct sim *m, double now)
{
    uint64_t regular = m->total_slots - m->p->sticky;
    int rc;

    while (m->run_sticky < m->p->sticky && m->free_total > 0) {
        uint32_t i = fq_head(m);
        if (i == NONE)
            break;
        (void)fqheap_pop(m, &m->fq);
        if ((rc = place(m, i, pick_slot(m, i), now, true)) < 0)
            return rc;
    }
    q_rekey(m, now);
    for (;;) {
        uint32_t i = q_head(m), v = NONE, si;

        if (i == NONE)
            break;
        if (m->free_total > 0 && m->run_regular < regular) {
            q_pop(m);
            if ((rc = place(m, i, pick_slot(m, i), now, false)) < 0)
                return rc;
            continue;
        }
        if (m->p->order != LT_SLOT_ORDER_PRIORITY || m->p->evict == LT_SLOT_EVICT_NONE)
            break;
        if (m->p->wae && lt_class_is_production(m->in[i].prio))
            v = pick_victim_wae(m, m->in[i].prio);
        if (v == NONE)
            v = pick_victim(m, m->in[i].prio);
        if (v == NONE)
            break; /* every later task has priority <= the head's */
        si = m->t[v].srv;
        q_pop(m);
        if ((rc = evict(m, v, now, false)) < 0 || (rc = place(m, i, si, now, false)) < 0)
            return rc;
    }
    return 0;
}

/* Task i reaches its memory checkpoint (A25 step 5): the rest of its average usage is
 * allocated if free; otherwise lsf evicts it, and lpf first evicts the lower-priority tasks of
 * its server, lowest class and latest start first, until enough is free (and it, if that is
 * not enough). */
static int checkpoint(struct sim *m, uint32_t i, double now)
{
    struct tk *t = &m->t[i];
    struct srv *s = &m->s[t->srv];
    double need = m->in[i].mem - t->alloc;
    int rc;

    m->sum->events++;
    t->ckpt = false;
    if (m->p->memory == LT_SLOT_MEM_LPF) {
        while (s->mem_free < need) {
            uint32_t v = NONE;
            for (uint32_t j = 0; j < s->n; j++) {
                uint32_t c = s->heap[j];
                if (c == i || m->in[c].prio >= m->in[i].prio)
                    continue;
                if (v == NONE || m->in[c].prio < m->in[v].prio ||
                    (m->in[c].prio == m->in[v].prio && m->t[c].start > m->t[v].start))
                    v = c;
            }
            if (v == NONE)
                break;
            if ((rc = evict(m, v, now, true)) < 0)
                return rc;
        }
    }
    if (s->mem_free >= need) {
        s->mem_free -= need;
        t->alloc += need;
        return 0;
    }
    return evict(m, i, now, true);
}

/* The events of server si at now: the end of its wake-up, its completions. */
static int srv_event(struct sim *m, uint32_t si, double now)
{
    struct srv *s = &m->s[si];

    m->sum->events++;
    if (s->state == SRV_WAKING) {
        if (now < s->wake_until)
            return srv_reschedule(m, si);
        energy_to(m, s, now);
        s->state = s->n > 0 || !m->p->sleep ? SRV_ON : SRV_SLEEP;
        s->t_last = now;
        return srv_reschedule(m, si);
    }
    advance(s, now);
    while (s->n > 0) {
        uint32_t i = s->heap[0];
        struct tk *t = &m->t[i];
        int rc;

        if (t->thr - s->w > DONE_EPS * (t->thr > 1.0 ? t->thr : 1.0))
            break;
        t->thr = s->w; /* reached: nothing left */
        if ((rc = unplace(m, i, now, false)) < 0)
            return rc;
        t->finished = true;
        m->out[i].finish = now;
    }
    return srv_reschedule(m, si);
}

/* ---- set-up ---- */

void lt_slot_params_default(struct lt_slot_params *p, const struct lt_slot_config *cfg)
{
    memset(p, 0, sizeof(*p));
    p->cfg = cfg;
    p->order = LT_SLOT_ORDER_PRIORITY;
    p->evict = LT_SLOT_EVICT_MRS;
    p->sleep = true;
    p->wake_s = 30.0;
    p->v_a = 3.0;
}

/* ---- the named policies ---- */

static const struct {
    const char *name;
    enum lt_slot_order order;
    bool workload_aware; /* WAA and WAE */
    bool sticky;         /* HYBRID's sticky pool */
} slot_policies[] = {
    {"priority", LT_SLOT_ORDER_PRIORITY, false, false},
    {"fcfs", LT_SLOT_ORDER_FCFS, false, false},
    {"wasp", LT_SLOT_ORDER_PRIORITY, true, false},
    {"hybrid", LT_SLOT_ORDER_PRIORITY, true, true},
};

static const struct {
    const char *name;
    enum lt_slot_evict evict;
} slot_evicts[] = {
    {"mrs", LT_SLOT_EVICT_MRS}, {"lrs", LT_SLOT_EVICT_LRS}, {"rnd", LT_SLOT_EVICT_RND}};

static const struct {
    const char *name;
    enum lt_slot_memory memory;
} slot_memories[] = {
    {"unlimited", LT_SLOT_MEM_UNLIMITED}, {"lsf", LT_SLOT_MEM_LSF}, {"lpf", LT_SLOT_MEM_LPF}};

int lt_slot_policy_set(struct lt_slot_params *p, const char *name, uint32_t sticky,
                       struct lt_err *err)
{
    for (size_t k = 0; name != NULL && k < sizeof(slot_policies) / sizeof(slot_policies[0]); k++) {
        if (strcmp(name, slot_policies[k].name) == 0) {
            p->order = slot_policies[k].order;
            p->evict = p->order == LT_SLOT_ORDER_FCFS ? LT_SLOT_EVICT_NONE : LT_SLOT_EVICT_MRS;
            p->waa = p->wae = slot_policies[k].workload_aware;
            p->sticky = slot_policies[k].sticky ? sticky : 0;
            return 0;
        }
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown slot policy '%s' (known: priority, fcfs, wasp, hybrid)",
                      name != NULL ? name : "(null)");
}

int lt_slot_evict_set(struct lt_slot_params *p, const char *name, struct lt_err *err)
{
    for (size_t k = 0; name != NULL && k < sizeof(slot_evicts) / sizeof(slot_evicts[0]); k++) {
        const char *rest = name + strlen(slot_evicts[k].name);
        uint64_t th = 0;

        if (strncmp(name, slot_evicts[k].name, strlen(slot_evicts[k].name)) != 0)
            continue;
        for (const char *c = rest; *c != '\0'; c++) {
            if (*c < '0' || *c > '9' || th > UINT32_MAX)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "eviction policy '%s': the threshold must be a whole number "
                                  ">= 1",
                                  name);
            th = th * 10 + (uint64_t)(*c - '0');
        }
        if (*rest != '\0' && (th == 0 || th > UINT32_MAX))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "eviction policy '%s': the threshold must be >= 1", name);
        if (p->order == LT_SLOT_ORDER_PRIORITY)
            p->evict = slot_evicts[k].evict;
        p->drop_threshold = (uint32_t)th;
        return 0;
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown eviction policy '%s' (known: mrs, lrs, rnd, with an optional "
                      "drop threshold: mrs5)",
                      name != NULL ? name : "(null)");
}

int lt_slot_memory_set(struct lt_slot_params *p, const char *name, struct lt_err *err)
{
    for (size_t k = 0; name != NULL && k < sizeof(slot_memories) / sizeof(slot_memories[0]); k++) {
        if (strcmp(name, slot_memories[k].name) == 0) {
            p->memory = slot_memories[k].memory;
            return 0;
        }
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown memory model '%s' (known: unlimited, lsf, lpf)",
                      name != NULL ? name : "(null)");
}

static int check(const struct lt_slot_params *p, const struct lt_slot_task *tasks, size_t n,
                 struct lt_err *err)
{
    double max_mem = 0.0;

    if (p == NULL || p->cfg == NULL || p->cfg->n == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot simulator: no slot configuration");
    for (size_t k = 0; k < p->cfg->n; k++) {
        const struct lt_slot_group *g = &p->cfg->g[k];
        if (g->type == NULL || g->count == 0 || g->slots == 0 || !(g->type->cpu > 0.0) ||
            g->type->cores == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "slot simulator: server group %zu has no servers, slots, CPU or "
                              "cores",
                              k);
    }
    if (!(p->horizon >= 0.0) || !isfinite(p->horizon) || !isfinite(p->v_a))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "slot simulator: horizon %g must be >= 0 and V's a (%g) finite",
                          p->horizon, p->v_a);
    if (p->check_break < 0 || p->check_break > 6)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot simulator: check_break %d is not 0..6",
                          p->check_break);
    if (!(p->reprioritise_s >= 0.0) || !isfinite(p->reprioritise_s))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "slot simulator: re-key interval %g s is not >= 0 and finite",
                          p->reprioritise_s);
    if (p->qorder != NULL &&
        (!isfinite(p->qorder->alpha) || !isfinite(p->qorder->beta) || !isfinite(p->qorder->gamma) ||
         !(p->qorder->w_min_s > 0.0) || !(p->qorder->r_min_s > 0.0) || !(p->qorder->n_min > 0.0)))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "slot simulator: queue order with a non-finite exponent or a clamp "
                          "not > 0");
    if (!(p->wake_s >= 0.0) || !isfinite(p->wake_s))
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot simulator: wake-up time %g is not >= 0",
                          p->wake_s);
    for (size_t k = 0; k < p->cfg->n; k++)
        max_mem = p->cfg->g[k].type->mem > max_mem ? p->cfg->g[k].type->mem : max_mem;
    if (p->sticky > lt_slot_config_slots(p->cfg))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "slot simulator: %u sticky slots, more than the %llu slots there are",
                          (unsigned)p->sticky, (unsigned long long)lt_slot_config_slots(p->cfg));
    if (tasks == NULL && n > 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot simulator: no tasks");
    if (n >= NONE)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot simulator: %zu tasks (at most %u)", n,
                          (unsigned)(NONE - 1));
    for (size_t k = 0; k < n; k++) {
        const struct lt_slot_task *t = &tasks[k];
        if (t->prio < 0 || t->prio >= N_CLASSES)
            return lt_err_set(err, LT_EINVAL, 0, 0, "task %lld: priority %d is not 0..11",
                              (long long)t->id, t->prio);
        if (!(t->arrival >= 0.0) || !isfinite(t->arrival))
            return lt_err_set(err, LT_EINVAL, 0, 0, "task %lld: arrival %g is not >= 0",
                              (long long)t->id, t->arrival);
        if (!(t->mem >= 0.0) || !isfinite(t->mem))
            return lt_err_set(err, LT_EINVAL, 0, 0, "task %lld: memory %g is not >= 0",
                              (long long)t->id, t->mem);
        if (p->memory != LT_SLOT_MEM_UNLIMITED && t->mem > max_mem)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "task %lld: memory %g exceeds every server's (%g): it could never "
                              "run",
                              (long long)t->id, t->mem, max_mem);
        if (!(t->demand > 0.0) || !isfinite(t->demand))
            return lt_err_set(err, LT_EINVAL, 0, 0, "task %lld: CPU demand %g is not > 0",
                              (long long)t->id, t->demand);
    }
    return 0;
}

/* Sort keys carried in the array, so that the comparators need no global (thread safety). */
struct akey {
    double arrival;
    int64_t id;
    uint32_t k;
};

static int by_arrival(const void *a, const void *b)
{
    const struct akey *x = a, *y = b;

    if (x->arrival < y->arrival)
        return -1;
    if (x->arrival > y->arrival)
        return 1;
    return (x->id > y->id) - (x->id < y->id);
}

struct pkey {
    double power;
    uint32_t g;
};

static int by_power(const void *a, const void *b)
{
    const struct pkey *x = a, *y = b;
    int c = lt_slot_power_cmp(x->power, y->power); /* WAA's order, shared with the extender */

    return c != 0 ? c : (x->g > y->g) - (x->g < y->g);
}

static void sim_free(struct sim *m)
{
    if (m->s != NULL) {
        for (uint32_t k = 0; k < m->ns; k++)
            lt_free(m->s[k].heap);
    }
    for (int c = 0; c < N_CLASSES; c++)
        lt_free(m->arr[c]);
    lt_free(m->t);
    lt_free(m->s);
    lt_free(m->fen);
    lt_free(m->tier_lo);
    qheap_free(&m->q);
    kqheap_free(&m->kq);
    fqheap_free(&m->fq);
    evheap_free(&m->ev);
    lt_free(m->in);
    lt_free(m->out);
}

static void summarise(struct sim *m, struct lt_slot_outcome *out, const uint32_t *ord)
{
    struct lt_slot_summary *s = m->sum;
    double r_all = 0.0, rc[N_CLASSES] = {0}, re[N_CLASSES] = {0}, rn[N_CLASSES] = {0};
    uint64_t ne_c[N_CLASSES] = {0}, nn_c[N_CLASSES] = {0};
    double v = 0.0;
    int n_v = 0;

    for (size_t k = 0; k < m->n; k++) {
        const struct tk *t = &m->t[k];
        int c = m->in[k].prio;
        double r;

        m->out[k].evictions = t->e;
        m->out[k].mem_evictions = t->me;
        m->out[k].dropped = t->dropped;
        if (t->e > s->max_e)
            s->max_e = t->e;
        out[ord[k]] = m->out[k];
        if (!t->finished)
            continue;
        r = m->out[k].finish - m->in[k].arrival;
        s->completed++;
        if (m->out[k].finish > s->makespan)
            s->makespan = m->out[k].finish;
        r_all += r;
        rc[c] += r;
        s->n_class[c]++;
        if (t->e > 0) {
            re[c] += r;
            ne_c[c]++;
        } else {
            rn[c] += r;
            nn_c[c]++;
        }
    }
    s->r_mean = s->completed > 0 ? r_all / (double)s->completed : NAN;
    s->e_mean = s->net > 0 ? (double)s->ne / (double)s->net : NAN;
    for (int c = 0; c < N_CLASSES; c++) {
        s->r_class[c] = s->n_class[c] > 0 ? rc[c] / (double)s->n_class[c] : NAN;
        s->r_class_evicted[c] = ne_c[c] > 0 ? re[c] / (double)ne_c[c] : NAN;
        s->r_class_nonevicted[c] = nn_c[c] > 0 ? rn[c] / (double)nn_c[c] : NAN;
        if (s->n_class[c] > 0) {
            v += ((double)c + m->p->v_a) * s->r_class[c];
            n_v++;
        }
    }
    s->v = n_v > 0 ? v / n_v : NAN;
}

/* ---- the checker ---- */

/* Every invariant of the simulator's state, after an event: the Fenwick tree against each
 * server's free slots, each server's heap (positions, owner, order by threshold), the central
 * queue and event heaps' order, and the class lists (links, counts, arrays, start order).
 * Returns 0 or LT_EINVAL naming the first broken one. O(tasks + servers); for tests
 * (lt_slot_params.check). */
static int sim_check(const struct sim *m, struct lt_err *err)
{
    uint64_t free_sum = 0, held = 0;

    for (uint32_t si = 0; si < m->ns; si++) {
        const struct srv *s = &m->s[si];
        uint64_t f = fen_prefix(m, si + 1) - fen_prefix(m, si);
        if (s->n > s->slots)
            return lt_err_set(err, LT_EINVAL, 0, 0, "slot check: server %u holds %u > %u slots", si,
                              s->n, s->slots);
        if (f != s->slots - s->n)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "slot check: Fenwick tree has %llu free slots at server %u, not %u",
                              (unsigned long long)f, si, s->slots - s->n);
        free_sum += f;
        for (uint32_t j = 0; j < s->n; j++) {
            uint32_t i = s->heap[j];
            held += !m->t[i].sticky; /* sticky holders are in no class list */
            if (i >= m->n || m->t[i].srv != si || m->t[i].hpos != j)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "slot check: server %u heap entry %u (task %u) is not its own",
                                  si, j, i);
            if (j > 0 && m->t[i].thr < m->t[s->heap[(j - 1) / 2]].thr)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "slot check: server %u heap order broken at %u", si, j);
        }
    }
    if (free_sum != m->free_total)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot check: free_total %llu, servers %llu",
                          (unsigned long long)m->free_total, (unsigned long long)free_sum);
    if (!qheap_ok(m, &m->q) || !kqheap_ok(m, &m->kq) || !fqheap_ok(m, &m->fq))
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot check: central queue heap order broken");
    if (!evheap_ok(m, &m->ev))
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot check: event heap order broken");
    uint64_t listed = 0;
    for (int c = 0; c < N_CLASSES; c++) {
        uint32_t k = 0, prev = NONE;
        for (uint32_t i = m->head[c]; i != NONE; prev = i, i = m->t[i].next, k++) {
            const struct tk *t = &m->t[i];
            if (k >= m->cnt[c] || m->in[i].prio != c || t->prev != prev || t->srv == NONE ||
                t->sticky || t->apos >= m->cnt[c] || m->arr[c][t->apos] != i)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "slot check: class %d list broken at task %u", c, i);
            if (prev != NONE && t->start < m->t[prev].start)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "slot check: class %d list out of start order at task %u", c, i);
        }
        if (k != m->cnt[c] || m->tail[c] != prev)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "slot check: class %d lists %u tasks, counts %u", c, k, m->cnt[c]);
        listed += k;
    }
    if (listed != held)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "slot check: %llu tasks hold regular slots, class lists have %llu",
                          (unsigned long long)held, (unsigned long long)listed);
    return 0;
}

/* ---- the run ---- */

/* Allocates m's arrays for n tasks and copies the tasks in internal order (by arrival, then
 * id); *ord receives the caller's index of each. LT_ENOMEM leaves what was allocated in m and
 * *ord for the caller to free. */
static int sim_alloc(struct sim *m, const struct lt_slot_task *tasks, size_t n, uint32_t **ord)
{
    struct akey *keys;

    *ord = lt_calloc(n + 1, sizeof(**ord));
    m->in = lt_calloc(n + 1, sizeof(*m->in));
    m->out = lt_calloc(n + 1, sizeof(*m->out));
    m->t = lt_calloc(n + 1, sizeof(*m->t));
    m->s = lt_calloc(m->ns, sizeof(*m->s));
    m->fen = lt_calloc((size_t)m->ns + 1, sizeof(*m->fen));
    m->tier_lo = lt_calloc(m->p->cfg->n + 1, sizeof(*m->tier_lo));
    if (*ord == NULL || m->in == NULL || m->out == NULL || m->t == NULL || m->s == NULL ||
        m->fen == NULL || m->tier_lo == NULL)
        return LT_ENOMEM;
    for (int c = 0; c < N_CLASSES; c++) {
        m->head[c] = m->tail[c] = NONE;
        if ((m->arr[c] = lt_calloc(n + 1, sizeof(*m->arr[c]))) == NULL)
            return LT_ENOMEM;
    }
    /* tasks by arrival, then id: the internal index is the first-arrival order */
    if ((keys = lt_calloc(n + 1, sizeof(*keys))) == NULL)
        return LT_ENOMEM;
    for (size_t k = 0; k < n; k++)
        keys[k] = (struct akey){tasks[k].arrival, tasks[k].id, (uint32_t)k};
    qsort(keys, n, sizeof(*keys), by_arrival);
    for (size_t k = 0; k < n; k++)
        (*ord)[k] = keys[k].k;
    lt_free(keys);
    for (size_t k = 0; k < n; k++) {
        m->in[k] = tasks[(*ord)[k]];
        m->t[k].srv = NONE;
        m->t[k].rem = m->in[k].demand;
        m->out[k].finish = NAN;
        m->out[k].server = UINT32_MAX;
    }
    return 0;
}

/* The servers, by slot power descending (one tier per group), their heaps and free slots. */
static int servers_build(struct sim *m)
{
    const struct lt_slot_config *cfg = m->p->cfg;
    struct pkey gorder[LT_SLOT_MAX_GROUPS];
    uint32_t si = 0;

    for (uint32_t g = 0; g < cfg->n; g++)
        gorder[g] = (struct pkey){lt_slot_power(&cfg->g[g]), g};
    qsort(gorder, cfg->n, sizeof(*gorder), by_power);
    for (uint32_t a = 0; a < cfg->n; a++) {
        const struct lt_slot_group *g = &cfg->g[gorder[a].g];
        uint32_t first = 0;
        for (uint32_t b = 0; b < gorder[a].g; b++)
            first += cfg->g[b].count;
        m->tier_lo[m->n_tiers++] = si;
        for (uint32_t k = 0; k < g->count; k++, si++) {
            struct srv *s = &m->s[si];
            s->cfg_index = first + k;
            s->type = g->type;
            s->cpu = g->type->cpu;
            s->mem_free = g->type->mem;
            if (g->type->cpu / g->type->cores > m->max_core)
                m->max_core = g->type->cpu / g->type->cores;
            s->cores = g->type->cores;
            s->slots = g->slots;
            s->state = m->p->sleep ? SRV_SLEEP : SRV_ON;
            if ((s->heap = lt_calloc(g->slots, sizeof(*s->heap))) == NULL)
                return LT_ENOMEM;
            fen_add(m, si, (int)g->slots);
        }
    }
    m->tier_lo[m->n_tiers] = si;
    m->total_slots = lt_slot_config_slots(cfg);
    /* the most powerful slots: the first tier and every tier of the same power */
    for (uint32_t a = 0; a < m->n_tiers; a++) {
        if (gorder[a].power < gorder[0].power)
            break;
        m->top_hi = m->tier_lo[a + 1];
    }
    return 0;
}

/* lt_slot_params.check_break: breaks structure `what` of m if it can now (true), as a bug
 * would, so that the checker's next run must fail. */
static bool break_one(struct sim *m, int what)
{
    switch (what) {
    case 1: /* a free slot the Fenwick tree counts at server 0 but the server does not have */
        fen_add(m, 0, 1);
        return true;
    case 2: /* two heap entries of a server swapped without their positions */
        for (uint32_t si = 0; si < m->ns; si++) {
            struct srv *s = &m->s[si];
            if (s->n >= 2) {
                uint32_t x = s->heap[0];
                s->heap[0] = s->heap[1];
                s->heap[1] = x;
                return true;
            }
        }
        return false;
    case 3: /* a later event moved to the root */
        for (size_t j = 1; j < m->ev.n; j++) {
            if (ev_before(m, &m->ev.a[0], &m->ev.a[j])) {
                struct sev x = m->ev.a[0];
                m->ev.a[0] = m->ev.a[j];
                m->ev.a[j] = x;
                return true;
            }
        }
        return false;
    case 4: /* a class counting one task more than it lists */
        for (int c = 0; c < N_CLASSES; c++) {
            if (m->cnt[c] > 0) {
                m->cnt[c]++;
                return true;
            }
        }
        return false;
    case 5: /* a later task moved to the root of the central queue */
        for (size_t j = 1; j < m->kq.n; j++) {
            if (kq_before(m, &m->kq.a[0], &m->kq.a[j])) {
                struct qent x = m->kq.a[0];
                m->kq.a[0] = m->kq.a[j];
                m->kq.a[j] = x;
                return true;
            }
        }
        for (size_t j = 1; j < m->q.n; j++) {
            if (q_before(m, &m->q.a[0], &m->q.a[j])) {
                uint32_t x = m->q.a[0];
                m->q.a[0] = m->q.a[j];
                m->q.a[j] = x;
                return true;
            }
        }
        return false;
    case 6:
        m->free_total++;
        return true;
    default:
        return false;
    }
}

/* Runs sim_check after an event when the parameters ask for it (breaking a structure first,
 * once, under check_break). */
static int maybe_check(struct sim *m, struct lt_err *err)
{
    if (!m->p->check)
        return 0;
    if (m->p->check_break != 0 && !m->broken)
        m->broken = break_one(m, m->p->check_break);
    return sim_check(m, err);
}

/* The event loop: server events and arrivals in time order, then a scheduling round per
 * instant. *last receives the last event's time. */
static int sim_loop(struct sim *m, double *last, struct lt_err *err)
{
    const struct lt_slot_task *in = m->in;
    size_t next = 0, n = m->n;
    int rc;

    for (uint64_t round = 1;; round++) {
        double now = INFINITY;

        while (m->ev.n > 0 && !ev_live(m, &m->ev.a[0]))
            (void)evheap_pop(m, &m->ev); /* stale */
        if (m->ev.n > 0)
            now = m->ev.a[0].t;
        if (next < n && in[next].arrival < now)
            now = in[next].arrival;
        if (!isfinite(now))
            return 0;
        *last = now;
        if (m->p->progress != NULL && (round & 0x3fff) == 0)
            m->p->progress(m->p->progress_arg, now, m->sum->events);
        while (m->ev.n > 0 && !(m->ev.a[0].t > now)) {
            struct sev e = evheap_pop(m, &m->ev);
            if (!ev_live(m, &e))
                continue;
            rc = e.kind == EV_SERVER ? srv_event(m, e.ref, now) : checkpoint(m, e.ref, now);
            if (rc < 0 || (rc = maybe_check(m, err)) < 0)
                return rc;
        }
        while (next < n && !(in[next].arrival > now)) {
            if ((rc = q_push(m, (uint32_t)next++, now)) < 0)
                return rc;
            m->sum->events++;
        }
        if ((rc = schedule(m, now)) < 0 || (rc = maybe_check(m, err)) < 0)
            return rc;
    }
}

int lt_slot_run(const struct lt_slot_params *p, const struct lt_slot_task *tasks, size_t n,
                struct lt_slot_outcome *out, struct lt_slot_summary *sum, struct lt_err *err)
{
    struct sim m;
    uint32_t *ord = NULL;
    double last = 0.0; /* the last event's time */
    int rc;

    if ((rc = check(p, tasks, n, err)) < 0)
        return rc;
    if (out == NULL || sum == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slot simulator: NULL output");
    memset(&m, 0, sizeof(m));
    memset(sum, 0, sizeof(*sum));
    m.p = p;
    m.n = n;
    m.sum = sum;
    m.ns = (uint32_t)lt_slot_config_servers(p->cfg);
    /* fcfs is first arrival: the unkeyed queue's own order (within a class, or alone) */
    m.keyed = p->qorder != NULL && p->qorder->kind != LT_QORDER_FCFS;
    m.rekey = m.keyed && lt_qorder_time_varying(p->qorder);
    m.last_rekey = -INFINITY;
    lt_rng_init(&m.slot_rng, p->seed, LT_RNG_POLICY);
    lt_rng_init(&m.evict_rng, p->seed, LT_RNG_EVICTION);
    lt_rng_init(&m.mem_rng, p->seed, LT_RNG_MEMORY);
    if ((rc = sim_alloc(&m, tasks, n, &ord)) < 0 || (rc = servers_build(&m)) < 0 ||
        (rc = maybe_check(&m, err)) < 0 || (rc = sim_loop(&m, &last, err)) < 0)
        goto out;
    sum->end = last > p->horizon ? last : p->horizon;
    for (uint32_t k = 0; k < m.ns; k++)
        energy_to(&m, &m.s[k], sum->end);
    summarise(&m, out, ord);
    rc = 0;
out:
    if (rc == LT_ENOMEM)
        lt_err_set(err, LT_ENOMEM, 0, 0, "slot simulator: out of memory");
    sim_free(&m);
    lt_free(ord);
    return rc;
}
