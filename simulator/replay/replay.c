/* replay.c -- the trace-replay engine (replay.h; docs/simulator.md is the contract).
 *
 * Layout of a run:
 *   machines_load  reads machine_events whole, fills in ADD rows without capacities, splits a
 *                  machine whose capacity changes into incarnations, draws the T(x) subset;
 *   pass1          streams task_events once: per task, its last end event, the demand of the
 *                  run that ended there, flags (scheduled at t = 0, first row kind), and the
 *                  requests of tasks whose SUBMIT has none; finds T_end; counts job_events;
 *   pass2          streams task_events again, merged in time with the machine rows and the
 *                  completions of simulated tasks (a binary heap), placing with
 *                  lt_policy_choose, queueing what fits nowhere, sampling the time series.
 * Every placement decision is the library's; this file only keeps time and books.
 *
 * SPDX-License-Identifier: MIT
 */
#include "replay/replay.h"

#include "cli/outfile.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_cluster.h"
#include "lt_heap.h"
#include "lt_map.h"
#include "lt_mem.h"
#include "lt_rng.h"
#include "lt_vec.h"
#include "lt_sla.h"
#include "replay/squeue.h"

#define NIL           UINT32_MAX
#define US            1000000LL
#define TRACE_ZERO_US (600LL * US) /* timestamp of trace second 0 */
#define T_INF         INT64_MAX

/* ---- task records (pass 1, anchors for pass 2) ---------------------------------------- */

enum rec_flags {
    F_ENDED = 1 << 0,       /* an end event came after the last SUBMIT/SCHEDULE */
    F_SCHED_AT_0 = 1 << 1,  /* has a SCHEDULE at t = 0: running before the trace */
    F_ORPHAN = 1 << 2,      /* first row neither SUBMIT nor SCHEDULE */
    F_REQ_PENDING = 1 << 3, /* first SUBMIT had no requests; waiting for a row with some */
    F_ARRIVED = 1 << 4,     /* pass 2: arrived */
    F_DONE = 1 << 5         /* pass 2: left the simulation */
};

/* One task, by dense task id (the order of first appearance in task_events). 24 bytes: at
 * ~25 M tasks in the whole trace this array and the map below are most of the engine's
 * memory, so t does three jobs (one at a time) and the map keeps no key of its own. */
struct task_rec {
    uint64_t job_id; /* trace job ID */
    union {
        int64_t t;     /* pass 1: the last SCHEDULE (-1 none) until an end event; after it, the
                        * run's demand (FINISH, FAIL, EVICT) or the end time (KILL, LOST); pass 2
                        * reads it at arrival */
        uint32_t live; /* pass 2, from arrival while in the simulation (!F_DONE): the entry in
                        * engine.live */
    } u;
    uint32_t index;   /* task index */
    uint8_t end_type; /* TR_* of the last end event */
    uint8_t flags;    /* enum rec_flags */
};

/* (job ID, task index) -> dense task id, open addressing with linear probing. A slot holds
 * the id and 32 bits of the key's hash; the key itself is engine.rec[id], read only when the
 * fingerprint matches. 8 bytes a slot at a load of 1/2 to 3/4 (the table grows by half):
 * 11-16 bytes a task. Growing frees the old table first and re-inserts every task from rec,
 * so the old and the new table never coexist. This is not an lt_map (lt_map.h) on purpose:
 * lt_map keeps a 64-bit key beside each value (16+ bytes a slot, the key being 96 bits here
 * would not fit), where this one reuses rec as its keys; at 25 M tasks that is 0.2-0.3 GB. */
struct map_slot {
    uint32_t id; /* NIL: empty */
    uint32_t fp; /* low 32 bits of map_hash of the key */
};

struct task_map {
    struct map_slot *slot;
    size_t cap; /* any size in 2^16 .. 2^32; a hash picks its slot by multiply-shift */
    size_t n;
};

/* Jobs, for "jobs completed" (the T(x) of the slides counts jobs): the value of job ID in
 * engine.jobs. */
struct job_slot {
    uint32_t arrived;      /* simulated tasks that arrived */
    uint32_t completed;    /* of them, completed (FINISH outcome) */
    int64_t first_arrival; /* of its first simulated task */
    int64_t last_end;      /* latest completion (FINISH) of its tasks, -1 none */
    int64_t max_run;       /* longest last run of its completed tasks */
};

/* A task_events row as pass 2 needs it: decoded from the cache (below) or read again. */
struct crow {
    int64_t time;
    uint32_t id; /* dense task id */
    uint8_t type;
    uint8_t priority;
    int8_t sched_class;
};

/* The row cache (pass 1 -> pass 2) is a byte stream that keeps, of the first cache_rows rows
 * of the window, only those pass 2 can act on: the first row of every task (its arrival) and
 * the KILL and LOST rows (they may end a task). Every other row of those would only be
 * counted in pass 2 (orphan_rows, ignored_rows), so pass 1 counts it instead. One entry:
 *   head     1 byte: event type (bits 0-3), C_NEW, C_REQ, C_SAME
 *   time     LEB128 varint: time - time of the previous entry (rows never go back in time)
 *   C_NEW    the task's first row; its id is the number of C_NEW entries before it. Then
 *            1 byte priority (bits 0-3) | (scheduling class + 1) << 4, and with C_REQ and
 *            without C_SAME the three requests as raw doubles (24 bytes); C_SAME: the same
 *            requests as the previous entry that carried some (jobs submit equal tasks)
 *   else     varint: (tasks seen so far - 1) - id (small: a task's rows are close in time)
 * Whole trace (144.6 M rows: 25 M first rows, 10.3 M KILL/LOST): about 0.2 GB. */
enum crow_head { C_TYPE = 0x0f, C_NEW = 0x10, C_REQ = 0x20, C_SAME = 0x40 };
#define C_MAX_ENTRY (1 + 10 + 1 + 3 * 8) /* bytes of the longest entry */

/* Where pass 2 is in the cache. */
struct cache_cursor {
    size_t pos;        /* next byte of engine.cache */
    int64_t time;      /* time of the last entry decoded */
    uint32_t ids;      /* C_NEW entries decoded */
    struct lt_res req; /* requests of the last entry that carried some */
};

/* Requests of a task whose first row had none, from a later row of it (pass 1), sorted by
 * id after pass 1. */
struct reqfix {
    uint32_t id;
    struct lt_res req;
};

/* --initial-state trace: the t = 0 SCHEDULE row of a task running at t = 0 (pass 1, in row
 * order; sorted by id after pass 1, one entry a task: its last such row). */
struct t0place {
    uint32_t id;       /* dense task id */
    uint32_t seq;      /* row order, so that the last row of a task wins */
    uint64_t machine;  /* trace machine ID */
    struct lt_res req; /* the row's requests (has_req) */
    bool has_req;
};

/* ---- live tasks (pass 2) ----------------------------------------------------------------- */

enum live_state { L_QUEUED, L_RUNNING, L_DEFERRED };

/* One entry per task in the simulation, 88 bytes (most of the replay's memory is these, the
 * queue's and the cluster's placements: the whole trace keeps millions alive at once). */
struct live {
    uint32_t rec;  /* slot in the task map (stable in pass 2: nothing is inserted) */
    uint32_t slot; /* queue slot (squeue.h), held from arrival to leaving */
    union {
        uint32_t heap_pos; /* in use: position in the completion heap, NIL if none */
        uint32_t q_next;   /* unused (on the free list): the next unused entry */
    };
    uint32_t machine; /* when running */
    uint32_t requeues;
    uint32_t seq; /* arrival order (arrivals <= tasks < NIL) */
    uint32_t pid; /* placement id when running */
    uint8_t prio, sched_class, state;
    uint8_t outcome; /* TR_FINISH, TR_FAIL, TR_KILL, TR_LOST, or TR_N_TYPES = open */
    int64_t arrival, first_start, start;
    union {
        int64_t demand;   /* outcome FINISH or FAIL: the run length (has_demand) */
        int64_t end_time; /* outcome KILL or LOST: the time of that row */
    };
    struct lt_res req; /* what its machine accounts: the request / --overcommit's factor */
    struct lt_res ask; /* the request */
};
_Static_assert(sizeof(struct live) == 112, "struct live grew");

/* True if live task t ends by itself after running its demand (FINISH, FAIL). */
static bool has_demand(const struct live *t)
{
    return t->outcome == TR_FINISH || t->outcome == TR_FAIL;
}

struct heap_item {
    int64_t time;
    uint64_t seq;
    uint32_t live;
};

struct engine;
static bool heap_less(const struct engine *e, const struct heap_item *a, const struct heap_item *b);
static void heap_moved(struct engine *e, const struct heap_item *it, size_t k);

/* Completions of running tasks by (time, seq); each live task keeps its position (heap_pos). */
LT_HEAP_DEFINE(comp_heap, struct heap_item, struct engine, heap_less, heap_moved);

/* The ordered queue (--order, --backfill): queued tasks by key (higher first), then arrival,
 * then arrival order; each live task keeps its position in struct oq_live. */
struct oq_item {
    double pr;  /* SLA orders within priority: the priority; else 0 */
    double cls; /* SLA orders: struct lt_qkey's cls (with an SLA first); else 0 */
    double key;
    double tie; /* SLA orders: struct lt_qkey's tie; else 0 */
    int64_t arrival;
    uint32_t seq;
    uint32_t live;
};
static bool oq_less(const struct engine *e, const struct oq_item *a, const struct oq_item *b);
static void oq_moved(struct engine *e, const struct oq_item *it, size_t k);
LT_HEAP_DEFINE(oq_heap, struct oq_item, struct engine, oq_less, oq_moved);
/* A dispatch's candidates, in the same order. */
LT_HEAP_DEFINE(cand_heap, struct oq_item, struct engine, oq_less, LT_HEAP_NO_MOVED);

/* Per live entry, beside struct live (allocated only for the ordered queue). */
struct oq_live {
    uint32_t pos;  /* position in the oq heap, NIL when not queued */
    uint32_t mark; /* candidate stamp of the last dispatch that collected it */
    uint32_t any;  /* ... as one that may fit any machine (new, or held back by EASY) */
    int64_t est;   /* the scheduler's run-time estimate, microseconds (> 0) */
};

/* Per live entry with --sla-annotate: the task's SLA, resolved with its estimate. */
struct asla {
    struct lt_sla sla;
    bool has;     /* sla holds the task's SLA (an annotation rule's, or the injected job's) */
    int64_t est;  /* the run-time estimate Nx times were resolved with, microseconds */
    int32_t rule; /* the annotation rule, -1: no SLA */
};

/* A running task's predicted end and request (the EASY reservation's scratch). */
struct oq_end {
    int64_t end;
    struct lt_res req;
};

/* ---- machines ------------------------------------------------------------------------- */

struct mrow {
    int64_t time;
    uint64_t id;
    uint8_t type;
    bool has_cap;
    double cpu, mem;
    uint32_t inc; /* incarnation index (cluster machine), NIL if the machine is not kept */
};

struct incarnation {
    uint64_t id;
    double cpu, mem;
    char name[32];
};

/* ---- the engine ----------------------------------------------------------------------- */

/* Preemption's index (docs/simulator.md, "Preemption"): for an eviction threshold thr (a task
 * may evict the tasks of priority < thr), a segment tree over the machines of the
 * component-wise maximum of free + (requests of the tasks of priority < thr): the first machine
 * where a task could be made to fit is found in O(log machines), without a scan. */
struct ptree {
    int thr;           /* evicts priorities < thr */
    size_t leaves;     /* a power of two >= machines */
    struct lt_res *mx; /* 2 * leaves nodes, 1-based; leaf i at leaves + i */
    /* A search that found nothing, remembered until some leaf grows: a request asking at least
     * as much finds nothing either (jobs submit many equal tasks). */
    uint64_t grown;     /* leaves grown so far */
    uint64_t fail_at;   /* grown at the failed search; UINT64_MAX: none */
    struct lt_res fail; /* its request */
};
#define PT_MAX 9 /* thresholds 1..9: production (9-11) never evicts production */

/* Requests that fit no machine, remembered with the machines whose free room grew since
 * (docs/simulator.md, "Placement and the queue"): a request asking at least as much as one of
 * them can fit only one of those machines, so a failing choose, a full search of a full cell,
 * is answered by a few lt_cluster_fits. Exact: choose returns LT_NO_MACHINE iff no machine
 * fits, and then draws nothing (lt_score.h; LoTES through lt_lotes_index_dispatch_now).
 * check_index compares every answer with choose. */
#define NF_SLOTS 4  /* failed requests kept */
#define NF_GROWN 32 /* grown machines kept; one more forgets every failed request */
struct nofit {
    struct lt_res req[NF_SLOTS];
    uint32_t since[NF_SLOTS]; /* n_grown when req[s] failed */
    unsigned n, next;         /* slots in use; the one replaced next */
    uint32_t grown[NF_GROWN]; /* machines whose free room grew, in order */
    uint32_t n_grown;
    uint32_t mark;       /* n_grown at the last failed request */
    struct lt_res *last; /* [machine]: free room at its last change (offline: -HUGE_VAL) */
};

struct engine {
    const struct sim_replay_config *cfg;
    struct sim_replay_result *res;
    struct lt_err *err;
    struct lt_lotes_tables *lotes;  /* LoTES tables (cfg->lotes_classes), or NULL */
    struct lt_lotes_machine *lview; /* LoTES's view of every machine of the cluster */
    struct lt_lotes_index *lix;     /* the dispatcher's index over lview, kept current */

    struct mrow *mrows;
    size_t n_mrows;
    struct incarnation *inc;
    size_t n_inc;
    uint64_t *primary_ids; /* IDs of incarnations 0..n_primary-1, sorted (= their order) */
    size_t n_primary;
    struct lt_res *caps; /* distinct capacities of kept incarnations (disk 1) */
    size_t n_caps;

    struct task_map map;
    struct task_rec *rec; /* by dense task id */
    size_t n_rec, cap_rec;
    uint8_t *cache;            /* rows 1..cache_rows of the window, encoded (struct crow, C_NEW) */
    size_t n_cache, cap_cache; /* bytes */
    uint64_t cache_rows;       /* window rows the cache covers */
    int64_t cache_time;        /* time of the last entry */
    struct lt_res cache_req;   /* requests of the last entry that carried some */
    uint64_t cache_orphan;     /* rows the cache left out that pass 2 counts in orphan_rows */
    uint64_t cache_ignored;    /* ... and in ignored_rows */
    bool cache_full;           /* the budget ran out: pass 2 reads the parts again after it */
    uint64_t rows_window;      /* task_events rows inside the window */
    struct reqfix *fix;
    size_t n_fix, cap_fix;
    struct t0place *t0; /* --initial-state trace */
    size_t n_t0, cap_t0;

    struct lt_map jobs; /* job ID -> struct job_slot */

    struct lt_cluster *cluster;
    struct lt_rng rng;
    struct lt_rng erng;                  /* eviction policy rnd */
    struct lt_rng prng;                  /* preemption: where the search starts */
    const struct lt_evict_policy *evict; /* cfg->evict, or mrs */
    struct ptree pt[PT_MAX];             /* --preempt: one tree per threshold in use */
    size_t n_pt;
    struct lt_res *prio_sum;     /* [machine * SIM_N_PRIO + p]: requests running, by priority */
    struct lt_victim_cand *cand; /* scratch for lt_victims_choose */
    size_t *vout;
    uint32_t *vlive; /* the candidates' live entries, then the victims' */
    size_t cap_cand, cap_vout, cap_vlive;
    size_t online;

    struct live *live;
    size_t n_live, cap_live;
    uint32_t free_live; /* free list through q_next */

    struct comp_heap heap;

    struct sq q;                 /* tasks that fit nowhere */
    struct lt_choose_hint *hint; /* what each choose leaves for the next (owned) */
    uint32_t witness;            /* a live entry that was queued, or NIL (dominated_by_queue) */
    struct nofit nf;             /* requests that fit nowhere (nofit_hit) */

    uint32_t *deferred; /* tasks pending at t = 0, in trace order */
    size_t n_deferred, cap_deferred;
    bool t0_phase;
    bool deferring; /* run_deferred: the t = 0 tasks not kept on their trace machine */

    uint64_t seq;
    int64_t now;
    int64_t t_end;

    struct sim_overcommit oc; /* cfg->overcommit, or none */
    bool oc_none;
    struct lt_res ask_run; /* the requests (ask) of the running tasks, for timeseries.csv */

    /* The ordered queue (cfg->order, cfg->backfill; docs/simulator.md "Queue orders and
     * backfill"): om says it is in use; the default queue (squeue) then still holds every
     * queued task, for the statistics and its fit search. */
    bool om;
    struct lt_qorder order; /* cfg->order with the trace's size clamp */
    struct oq_heap oq;
    struct oq_live *ol; /* by live entry */
    size_t cap_ol;
    uint32_t *oq_new; /* queued since the last dispatch */
    size_t n_oq_new, cap_oq_new;
    uint32_t *oq_blocked; /* EASY: fitted somewhere at a dispatch, but waited */
    size_t n_oq_blocked, cap_oq_blocked;
    uint32_t blk_head; /* ... the reservation they waited for: head, machine, */
    size_t blk_m;      /* shadow time and room beside the head */
    int64_t blk_ts;
    struct lt_res blk_extra;
    uint32_t *gained; /* machines that gained room since the last dispatch */
    size_t n_gained, cap_gained;
    uint32_t *gained_mark;  /* by machine: the dispatch stamp it was listed at */
    struct cand_heap qcand; /* a dispatch's candidates */
    struct lt_res cand_min; /* the least request of each resource among them */
    struct oq_end *ends;    /* EASY scratch */
    size_t cap_ends;
    uint32_t rsv_head;       /* EASY: the head of the last reservation, NIL none */
    size_t rsv_m;            /* ... its machine, LT_NO_MACHINE none */
    int64_t rsv_ts;          /* ... its shadow time */
    struct lt_res rsv_extra; /* ... the room beside the head then */
    uint32_t *rsv_gained;    /* machines that gained room since the last reservation */
    size_t n_rsv_gained, cap_rsv_gained;
    uint32_t *rsv_mark; /* by machine: rsv_epoch when listed */
    uint32_t rsv_epoch;
    int64_t *mend;   /* EASY, by machine: at most the least predicted end of its tasks */
    uint32_t stamp;  /* dispatches run, from 1 */
    bool oq_pending; /* a dispatch is due before time moves on */
    int64_t last_rekey;
    struct lt_rng qrng; /* --estimate noisy:CV */
    bool sla_order;     /* cfg->order is an SLA order (keys from e->asla) */
    struct asla *asla;  /* cfg->annot: by live entry */
    size_t cap_asla;

    /* The what-if snapshot and injection (sim_snap_*, docs/whatif.md). */
    bool opened;       /* engine_open got past the configuration and its first maps */
    bool halt;         /* pass 2 stops: the injected job started (as asked) */
    bool no_arrivals;  /* trace tasks arriving from now on are dropped (--no-arrivals) */
    bool collect;      /* completed runs are kept by band (runs), for --resample-running */
    uint32_t inj_rec0; /* the injected job's first task record; NIL: none */
    uint32_t inj_need; /* its tasks that must start for the job to have started */
    int inj_rank;      /* enum sim_inject_rank: its place in the queue */
    const struct lt_sla *inj_sla; /* its SLA in an SLA order's key, NULL none */
    int inj_prio;                 /* its priority */
    uint32_t inj_started;         /* its tasks started */
    int64_t inj_first;            /* its first task's start, -1 none */
    int64_t inj_last;             /* the start that made inj_need, -1 none */
    bool inj_until;               /* halt when every injected task has finished, not at start */
    uint32_t inj_n, inj_done;     /* its tasks; those finished (FINISH) */
    int64_t inj_end;              /* the end that finished the last of them, -1 none */
    uint8_t *dropped;             /* by incarnation: taken out by sim_snap_shrink; NULL none */
    int64_t *runs[SIM_N_BANDS];   /* completed runs (FINISH), microseconds, by band */
    size_t n_runs[SIM_N_BANDS], cap_runs[SIM_N_BANDS];
    bool runs_sorted;

    FILE *tasks_csv, *ts_csv;
    char *path_tasks, *path_ts;
    double sum_queue, sum_util[3], sum_frag[SIM_N_FRAG], sum_unused, sum_req[2];
};

/* ---- small helpers ---------------------------------------------------------------------- */

static int oom(struct engine *e)
{
    return lt_err_set(e->err, LT_ENOMEM, 0, 0, "out of memory");
}

static double secs(int64_t t_us)
{
    return (double)(t_us - TRACE_ZERO_US) / (double)US;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static uint64_t map_hash(uint64_t job, uint32_t index)
{
    return mix64(job * UINT64_C(0x9e3779b97f4a7c15) + index);
}

/* The first slot to probe for hash h: the high 32 bits scaled to cap (multiply-shift). */
static size_t map_pos(uint64_t h, size_t cap)
{
    return (size_t)(((h >> 32) * (uint64_t)cap) >> 32);
}

#define MAP_MIN_CAP ((size_t)1 << 16)
#define MAP_MAX_CAP ((size_t)UINT32_MAX + 1) /* map_pos scales 32 bits */

/* (Re)allocates cap empty slots and inserts tasks 0..n_rec-1 of rec (distinct keys). The
 * old table is freed first: on failure (-1) the map has no table and the run must end. */
static int map_alloc(struct task_map *m, size_t cap, const struct task_rec *rec, size_t n_rec)
{
    lt_free(m->slot);
    m->slot = lt_malloc(cap * sizeof(*m->slot));
    if (!m->slot)
        return -1;
    memset(m->slot, 0xff, cap * sizeof(*m->slot)); /* id NIL everywhere */
    m->cap = cap;
    for (size_t id = 0; id < n_rec; id++) {
        uint64_t h = map_hash(rec[id].job_id, rec[id].index);
        size_t k = map_pos(h, cap);
        while (m->slot[k].id != NIL)
            k = k + 1 == cap ? 0 : k + 1;
        m->slot[k] = (struct map_slot){(uint32_t)id, (uint32_t)h};
    }
    m->n = n_rec;
    return 0;
}

/* The id of (job, index), or NIL. */
static uint32_t map_find(const struct task_map *m, const struct task_rec *rec, uint64_t job,
                         uint32_t index)
{
    uint64_t h = map_hash(job, index);
    uint32_t fp = (uint32_t)h;
    size_t k = map_pos(h, m->cap);
    for (;;) {
        const struct map_slot *r = &m->slot[k];
        if (r->id == NIL)
            return NIL;
        if (r->fp == fp && rec[r->id].job_id == job && rec[r->id].index == index)
            return r->id;
        k = k + 1 == m->cap ? 0 : k + 1;
    }
}

/* The id of (job, index); if new, new_id (== n_rec: the caller appends rec[new_id] with this
 * key next) is stored and *is_new set. The map never holds more than UINT32_MAX - 1 tasks
 * (caller checks). -1 when out of memory. */
static int map_upsert(struct task_map *m, const struct task_rec *rec, size_t n_rec, uint64_t job,
                      uint32_t index, uint32_t new_id, uint32_t *id, bool *is_new)
{
    if ((m->n + 1) * 4 > m->cap * 3 && m->cap < MAP_MAX_CAP) {
        size_t ncap = m->cap + m->cap / 2;
        if (map_alloc(m, ncap < MAP_MAX_CAP ? ncap : MAP_MAX_CAP, rec, n_rec) != 0)
            return -1;
    }
    uint64_t h = map_hash(job, index);
    uint32_t fp = (uint32_t)h;
    size_t k = map_pos(h, m->cap);
    for (;;) {
        struct map_slot *r = &m->slot[k];
        if (r->id == NIL) {
            *r = (struct map_slot){new_id, fp};
            m->n++;
            *id = new_id;
            *is_new = true;
            return 0;
        }
        if (r->fp == fp && rec[r->id].job_id == job && rec[r->id].index == index) {
            *id = r->id;
            *is_new = false;
            return 0;
        }
        k = k + 1 == m->cap ? 0 : k + 1;
    }
}

/* ---- machines --------------------------------------------------------------------------- */

/* The counts of job_id, inserted (zero) if new; NULL when out of memory. A job that is
 * already there is found without allocating. */
static struct job_slot *job_get(struct engine *e, uint64_t job_id)
{
    struct job_slot *js = lt_map_get(&e->jobs, job_id);
    bool fresh;

    if (js)
        return js;
    if (lt_map_put(&e->jobs, job_id, (void **)&js, &fresh) != 0)
        return NULL;
    *js = (struct job_slot){0, 0, 0, -1, 0};
    return js;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

struct row_ref {
    uint64_t id;
    uint32_t row;
};

static int cmp_row_ref(const void *a, const void *b)
{
    const struct row_ref *x = a, *y = b;
    if (x->id != y->id)
        return (x->id > y->id) - (x->id < y->id);
    return (x->row > y->row) - (x->row < y->row);
}

static bool same_cap(double a, double b)
{
    return !(a < b) && !(a > b);
}

/* Reads machine_events whole into e->mrows (capacities as given, no incarnation yet). */
static int mrows_read(struct engine *e)
{
    struct tr_opts o = {.skip_bad_lines = e->cfg->skip_bad_lines};
    struct tr_reader *r = tr_open(e->cfg->trace_dir, TR_MACHINE_EVENTS, &o, e->err);
    size_t cap_rows = 0;
    int rc;

    if (!r)
        return e->err->code ? e->err->code : LT_EIO;
    for (;;) {
        struct tr_machine_row row;
        rc = tr_next(r, &row, e->err);
        if (rc <= 0)
            break;
        if (LT_VEC_RESERVE(e->mrows, cap_rows, e->n_mrows + 1) != 0) {
            rc = oom(e);
            break;
        }
        struct mrow *m = &e->mrows[e->n_mrows++];
        m->time = row.time;
        m->id = row.machine_id;
        m->type = row.type;
        m->has_cap = row.has_cap;
        m->cpu = row.cpu;
        m->mem = row.mem;
        m->inc = NIL;
    }
    e->res->rows[TR_MACHINE_EVENTS] = *tr_counts(r);
    tr_close(r);
    if (rc < 0)
        return rc;
    if (e->n_mrows == 0)
        return lt_err_set(e->err, LT_EINVAL, 0, 0, "machine_events under '%s' has no rows",
                          e->cfg->trace_dir);
    return 0;
}

/* Per machine, in row order: fills missing capacities from the next row that has them, else
 * from the previous one. ids (n_mrows entries) receives the distinct machine IDs, sorted;
 * *n_ids their number. */
static int mrows_fill_caps(struct engine *e, uint64_t *ids, size_t *n_ids)
{
    struct row_ref *ref = lt_calloc(e->n_mrows, sizeof(*ref));
    if (!ref)
        return oom(e);
    for (size_t k = 0; k < e->n_mrows; k++) {
        ref[k].id = e->mrows[k].id;
        ref[k].row = (uint32_t)k;
    }
    qsort(ref, e->n_mrows, sizeof(*ref), cmp_row_ref);
    *n_ids = 0;
    for (size_t a = 0; a < e->n_mrows;) {
        size_t b = a;
        while (b < e->n_mrows && ref[b].id == ref[a].id)
            b++;
        ids[(*n_ids)++] = ref[a].id;
        for (size_t k = a; k < b; k++) {
            struct mrow *m = &e->mrows[ref[k].row];
            if (m->has_cap)
                continue;
            const struct mrow *src = NULL;
            for (size_t j = k + 1; j < b && !src; j++)
                if (e->mrows[ref[j].row].has_cap)
                    src = &e->mrows[ref[j].row];
            for (size_t j = k; j-- > a && !src;)
                if (e->mrows[ref[j].row].has_cap)
                    src = &e->mrows[ref[j].row];
            if (src) {
                m->cpu = src->cpu;
                m->mem = src->mem;
                m->has_cap = true;
            }
        }
        a = b;
    }
    lt_free(ref);
    return 0;
}

/* T(x): keeps a seeded random share of the n_ids machine IDs at the front of ids, sorted (ids
 * is sorted on entry: deterministic). Returns how many are kept. */
static size_t machines_subset(const struct engine *e, uint64_t *ids, size_t n_ids)
{
    size_t keep = n_ids;
    if (e->cfg->machines_pct < 100.0) {
        keep = (size_t)(e->cfg->machines_pct * (double)n_ids / 100.0 + 0.5);
        struct lt_rng mr;
        lt_rng_init(&mr, e->cfg->seed, LT_RNG_MACHINES);
        for (size_t k = 0; k < keep; k++) {
            size_t j = k + (size_t)lt_rng_below(&mr, n_ids - k);
            uint64_t tmp = ids[k];
            ids[k] = ids[j];
            ids[j] = tmp;
        }
        qsort(ids, keep, sizeof(*ids), cmp_u64);
    }
    return keep;
}

/* After the first incarnation pass (row order): rebuilds e->inc in ID order (inc index =
 * position of the ID among the kept IDs) and records the primary IDs. */
static int incarnations_by_id(struct engine *e, uint32_t *cur, size_t keep)
{
    struct incarnation *byid = lt_calloc(e->n_inc, sizeof(*byid));
    if (!byid)
        return oom(e);
    size_t n = 0;
    for (size_t k = 0; k < keep; k++) {
        if (cur[k] == NIL)
            continue; /* a kept machine that never has capacities: never simulated */
        byid[n] = e->inc[cur[k]];
        cur[k] = (uint32_t)n++;
    }
    memcpy(e->inc, byid, n * sizeof(*byid));
    lt_free(byid);
    e->n_inc = n;
    e->n_primary = n;
    e->primary_ids = lt_calloc(n, sizeof(uint64_t));
    if (!e->primary_ids)
        return oom(e);
    for (size_t k = 0; k < n; k++)
        e->primary_ids[k] = e->inc[k].id;
    return 0;
}

/* Incarnations: the first capacity of each kept machine (ids[0..keep-1]), in ID order; a later
 * different capacity appends a new one. cur[k] is machine k's current incarnation. */
static int incarnations_build(struct engine *e, const uint64_t *ids, size_t keep)
{
    uint32_t *cur = lt_calloc(keep, sizeof(*cur));
    size_t cap_inc = 0;
    int rc = 0;

    if (!cur)
        return oom(e);
    for (size_t k = 0; k < keep; k++)
        cur[k] = NIL;
    for (size_t pass = 0; pass < 2 && rc == 0; pass++) {
        for (size_t k = 0; k < e->n_mrows; k++) {
            struct mrow *m = &e->mrows[k];
            const uint64_t *hit = bsearch(&m->id, ids, keep, sizeof(*ids), cmp_u64);
            if (!hit || !m->has_cap)
                continue;
            size_t mk = (size_t)(hit - ids);
            if (pass == 0) {
                if (cur[mk] != NIL)
                    continue;
            } else {
                const struct incarnation *ci = &e->inc[cur[mk]];
                /* A REMOVE takes off whatever is online, whatever capacities it carries;
                 * only ADD and UPDATE rows bring new capacities. */
                if (m->type == TR_M_REMOVE ||
                    (same_cap(ci->cpu, m->cpu) && same_cap(ci->mem, m->mem))) {
                    m->inc = cur[mk];
                    continue;
                }
            }
            if (LT_VEC_RESERVE(e->inc, cap_inc, e->n_inc + 1) != 0) {
                rc = oom(e);
                break;
            }
            struct incarnation *ni = &e->inc[e->n_inc];
            ni->id = m->id;
            ni->cpu = m->cpu;
            ni->mem = m->mem;
            if (pass == 0)
                snprintf(ni->name, sizeof(ni->name), "%" PRIu64, m->id);
            else
                snprintf(ni->name, sizeof(ni->name), "%" PRIu64 ".%zu", m->id, e->n_inc);
            cur[mk] = (uint32_t)e->n_inc++;
            if (pass == 1)
                m->inc = cur[mk];
        }
        if (pass == 0 && rc == 0) /* the first pass went in row order; re-sort by ID */
            rc = incarnations_by_id(e, cur, keep);
    }
    lt_free(cur);
    return rc;
}

/* Distinct capacities of the incarnations, for "larger than every machine". */
static int caps_distinct(struct engine *e)
{
    e->caps = lt_calloc(e->n_inc, sizeof(*e->caps));
    if (!e->caps)
        return oom(e);
    for (size_t k = 0; k < e->n_inc; k++) {
        bool seen = false;
        for (size_t j = 0; j < e->n_caps && !seen; j++)
            seen =
                same_cap(e->caps[j].cpu, e->inc[k].cpu) && same_cap(e->caps[j].mem, e->inc[k].mem);
        if (!seen)
            e->caps[e->n_caps++] = (struct lt_res){e->inc[k].cpu, e->inc[k].mem, 1.0};
    }
    return 0;
}

static int machines_load(struct engine *e)
{
    uint64_t *ids;
    size_t n_ids = 0, keep;
    int rc;

    if ((rc = mrows_read(e)) < 0)
        return rc;
    if ((ids = lt_calloc(e->n_mrows, sizeof(*ids))) == NULL)
        return oom(e);
    if ((rc = mrows_fill_caps(e, ids, &n_ids)) < 0)
        goto out;
    e->res->machines_total = n_ids;
    keep = machines_subset(e, ids, n_ids);
    e->res->machines_kept = keep;
    if ((rc = incarnations_build(e, ids, keep)) < 0)
        goto out;
    if (e->n_inc == 0) {
        rc = lt_err_set(e->err, LT_EINVAL, 0, 0,
                        "no machine of '%s' has capacities (machines kept: %zu)", e->cfg->trace_dir,
                        keep);
        goto out;
    }
    rc = caps_distinct(e);
out:
    lt_free(ids);
    return rc;
}

/* LoTES: the tables of the cell's machine configurations (every machine of the cluster,
 * online or not, by its capacity) and the configured classes, and the view of the machines in
 * index order (lt_lotes_map_machines: machines of a capacity no configuration has, such as
 * those added without capacities, take no bin and serve only as "any room"). */
static int lotes_setup(struct engine *e)
{
    size_t n = lt_cluster_size(e->cluster), nc = 0, *config = NULL, *bin = NULL;
    struct lt_lotes_config *cf = lt_calloc(LT_LOTES_MAX_CONFIGS, sizeof(*cf));
    struct lt_res *cap = lt_calloc(n + 1, sizeof(*cap));
    int rc;

    e->lview = lt_calloc(n + 1, sizeof(*e->lview));
    config = lt_calloc(n + 1, sizeof(*config));
    bin = lt_calloc(n + 1, sizeof(*bin));
    if (cf == NULL || cap == NULL || e->lview == NULL || config == NULL || bin == NULL) {
        rc = oom(e);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        cap[i] = lt_cluster_cap(e->cluster, i);
    rc = lt_lotes_configs_from_caps(cap, n, cf, LT_LOTES_MAX_CONFIGS, &nc, e->err);
    if (rc == 0) {
        struct lt_lotes_problem p = {e->cfg->lotes_classes, e->cfg->n_lotes_classes, cf, nc};
        if ((e->lotes = lt_lotes_build(&p, e->err)) == NULL)
            rc = e->err->code != 0 ? e->err->code : LT_ENOMEM;
    }
    if (rc == 0)
        rc = lt_lotes_map_machines(e->lotes, cap, n, config, bin, e->err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        e->lview[i].config = config[i];
        e->lview[i].bin = bin[i];
        e->lview[i].free = (struct lt_res){-1, -1, -1}; /* every machine is offline now */
    }
    if (rc == 0 && (e->lix = lt_lotes_index_new(e->lotes, e->lview, n, e->err)) == NULL)
        rc = e->err->code != 0 ? e->err->code : LT_ENOMEM;
out:
    lt_free(cf);
    lt_free(cap);
    lt_free(config);
    lt_free(bin);
    return rc;
}

static bool res_ge(const struct lt_res *a, const struct lt_res *b)
{
    return a->cpu >= b->cpu && a->mem >= b->mem && a->disk >= b->disk;
}

/* Machine m's free room is now f (-HUGE_VAL: offline): a machine that grew is one where a
 * request that fit nowhere may fit now (struct nofit). */
static void nofit_touch(struct engine *e, size_t m, const struct lt_res *f)
{
    struct nofit *nf = &e->nf;
    struct lt_res *o = &nf->last[m];
    bool grew = f->cpu > o->cpu || f->mem > o->mem || f->disk > o->disk;

    *o = *f;
    /* (The last one recorded is m: already checked by every request that failed before it.) */
    if (!grew || nf->n == 0 || (nf->n_grown > nf->mark && nf->grown[nf->n_grown - 1] == m))
        return;
    if (nf->n_grown == NF_GROWN) { /* too many to check: forget every failed request */
        nf->n = 0;
        nf->n_grown = 0;
        return;
    }
    nf->grown[nf->n_grown++] = (uint32_t)m;
}

/* True if req fits no machine: it asks at least as much as a remembered failed request and
 * fits none of the machines that grew since that one failed. */
static bool nofit_hit(const struct engine *e, const struct lt_res *req)
{
    const struct nofit *nf = &e->nf;

    for (unsigned s = 0; s < nf->n; s++) {
        if (!res_ge(req, &nf->req[s]))
            continue;
        uint32_t g = nf->since[s];
        while (g < nf->n_grown && !lt_cluster_fits(e->cluster, nf->grown[g], req))
            g++;
        if (g == nf->n_grown)
            return true;
    }
    return false;
}

/* req fits no machine (choose said so): remember it, in place of a request it covers (one
 * asking at least as much, remembered earlier), else of the oldest. */
static void nofit_add(struct engine *e, const struct lt_res *req)
{
    struct nofit *nf = &e->nf;
    unsigned s = 0;

    if (nf->n == 0)
        nf->n_grown = 0;
    while (s < nf->n && !res_ge(&nf->req[s], req))
        s++;
    if (s == nf->n) {
        if (nf->n < NF_SLOTS) {
            nf->n++;
        } else {
            s = nf->next;
            nf->next = (nf->next + 1) % NF_SLOTS;
        }
    }
    nf->req[s] = *req;
    nf->since[s] = nf->n_grown;
    nf->mark = nf->n_grown;
}

/* Machine m's free resources changed (a placement, a removal, online or offline): the failed
 * requests, LoTES's index and preemption's learn them (an offline machine holds nothing, not
 * even 0). */
static void pre_touch(struct engine *e, size_t m, bool on, const struct lt_res *free);

static void room_changed(struct engine *e, size_t m)
{
    const bool on = lt_cluster_online(e->cluster, m);
    const struct lt_res free = lt_cluster_free_res(e->cluster, m);
    const struct lt_res none = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};

    nofit_touch(e, m, on ? &free : &none);
    if (e->n_pt)
        pre_touch(e, m, on, &free); /* preemption's index too */
    if (e->lix != NULL) {
        struct lt_res f = on ? free : (struct lt_res){-1, -1, -1};
        lt_lotes_index_set(e->lix, m, &f, 0);
    }
}

/* LoTES's choice for req: the task's class, then the dispatcher over the index (the free
 * resources of every machine, room_changed); *m is LT_NO_MACHINE unless it can start now. */
static int lotes_choose(struct engine *e, const struct lt_res *req, size_t *m)
{
    struct lt_lotes_choice ch;
    size_t k;
    int rc;

    /* The replay starts a task now or queues it: the dispatcher's queue rules ((c), (d)) are
     * not used, and a task that fits nowhere draws nothing. */
    if ((rc = lt_lotes_classify(e->lotes, req, &k, e->err)) < 0 ||
        (rc = lt_lotes_index_dispatch_now(e->lix, k, req, &e->rng, &ch, e->err)) < 0)
        return rc;
    *m = ch.machine;
    return 0;
}

static int cluster_build(struct engine *e)
{
    struct lt_machine_spec *ms = lt_malloc(e->n_inc * sizeof(*ms));
    if (!ms)
        return oom(e);
    for (size_t k = 0; k < e->n_inc; k++) {
        ms[k].name = e->inc[k].name;
        ms[k].cap = (struct lt_res){e->inc[k].cpu, e->inc[k].mem, 1.0};
    }
    struct lt_cluster_spec spec = {
        .machines = ms, .n_machines = e->n_inc, .ref = {1.0, 1.0, 1.0}, .seed = e->cfg->seed};
    e->cluster = lt_cluster_new(&spec, e->err);
    lt_free(ms);
    if (!e->cluster)
        return e->err->code;
    if ((e->nf.last = lt_malloc((e->n_inc > 0 ? e->n_inc : 1) * sizeof(*e->nf.last))) == NULL)
        return oom(e);
    for (size_t k = 0; k < e->n_inc; k++) /* offline until their ADD */
        e->nf.last[k] = (struct lt_res){-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (size_t k = 0; k < e->n_inc; k++) {
        int rc = lt_cluster_set_online(e->cluster, k, false, e->err);
        if (rc < 0)
            return rc;
    }
    int rc = e->cfg->policy != NULL ? lt_policy_attach(e->cfg->policy, e->cluster, e->err)
                                    : lotes_setup(e);
    if (rc < 0)
        return rc;
    if (e->cfg->policy != NULL && (e->hint = lt_choose_hint_new(e->err)) == NULL)
        return e->err->code;
    lt_rng_init(&e->rng, e->cfg->seed, LT_RNG_POLICY);
    return 0;
}

/* ---- pass 1 ------------------------------------------------------------------------------ */

static bool is_end(uint8_t type)
{
    return type == TR_EVICT || type == TR_FAIL || type == TR_FINISH || type == TR_KILL ||
           type == TR_LOST;
}

static void publish(struct engine *e, int pass, const struct tr_reader *r)
{
    struct sim_progress *p = e->cfg->progress;
    if (!p)
        return;
    p->pass = pass;
    p->rows = tr_counts(r)->rows;
    p->bytes_read = tr_bytes_read(r);
    p->bytes_total = tr_bytes_total(r);
}

/* Appends v as a LEB128 varint at p; returns the new end. */
static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
    uint64_t x = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        x |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    *v = x | (uint64_t)*p++ << shift;
    return p;
}

/* Row (of task id; first: the task's first row; rows 1..cache_rows are covered) goes into the
 * cache while the budget lasts, encoded as struct crow says, or is counted for pass 2 if it
 * cannot act on it. After the first row that does not fit, nothing more is covered. */
static int cache_row(struct engine *e, const struct tr_task_row *row, uint32_t id, bool first,
                     bool orphan)
{
    uint8_t buf[C_MAX_ENTRY], *p = buf;

    if (e->cache_full)
        return 0;
    if (!first && (orphan || (row->type != TR_KILL && row->type != TR_LOST))) {
        if (orphan)
            e->cache_orphan++;
        else
            e->cache_ignored++;
        e->cache_rows++;
        return 0;
    }
    assert(row->time >= e->cache_time); /* the reader never goes back in time */
    uint8_t head = row->type;
    if (first) {
        head |= C_NEW;
        if (row->has_req) {
            struct lt_res req = {row->cpu, row->mem, row->disk};
            head |= C_REQ;
            if (memcmp(&req, &e->cache_req, sizeof(req)) == 0) /* bitwise: exact */
                head |= C_SAME;
            e->cache_req = req;
        }
    }
    *p++ = head;
    p = put_varint(p, (uint64_t)(row->time - e->cache_time));
    if (first) {
        *p++ = (uint8_t)(row->priority | (unsigned)(row->sched_class + 1) << 4);
        if ((head & C_REQ) && !(head & C_SAME)) {
            memcpy(p, &e->cache_req, sizeof(e->cache_req));
            p += sizeof(e->cache_req);
        }
    } else {
        p = put_varint(p, (uint64_t)(e->n_rec - 1 - id));
    }
    size_t n = (size_t)(p - buf);
    if (e->n_cache + n > e->cfg->cache_bytes) {
        e->cache_full = true;
        return 0;
    }
    if (LT_VEC_RESERVE(e->cache, e->cap_cache, e->n_cache + n) != 0)
        return oom(e);
    memcpy(e->cache + e->n_cache, buf, n);
    e->n_cache += n;
    e->cache_time = row->time;
    e->cache_rows++;
    return 0;
}

/* Decodes the entry at cur into *out (and *req, *has_req), advancing cur. */
static void cache_next(const struct engine *e, struct cache_cursor *cur, struct crow *out,
                       struct lt_res *req, bool *has_req)
{
    const uint8_t *p = e->cache + cur->pos;
    uint8_t head = *p++;
    uint64_t v;

    p = get_varint(p, &v);
    cur->time += (int64_t)v;
    out->time = cur->time;
    out->type = head & C_TYPE;
    *has_req = false;
    if (head & C_NEW) {
        out->id = cur->ids++;
        out->priority = *p & 0x0f;
        out->sched_class = (int8_t)((*p++ >> 4) - 1);
        if (head & C_REQ) {
            if (!(head & C_SAME)) {
                memcpy(&cur->req, p, sizeof(cur->req));
                p += sizeof(cur->req);
            }
            *req = cur->req;
            *has_req = true;
        }
    } else {
        p = get_varint(p, &v);
        out->id = cur->ids - 1 - (uint32_t)v;
        out->priority = 0;
        out->sched_class = 0;
    }
    cur->pos = (size_t)(p - e->cache);
}

static int cmp_reqfix(const void *a, const void *b)
{
    uint32_t x = ((const struct reqfix *)a)->id, y = ((const struct reqfix *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_t0_id(const void *a, const void *b)
{
    uint32_t x = ((const struct t0place *)a)->id, y = ((const struct t0place *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_t0place(const void *a, const void *b)
{
    const struct t0place *x = a, *y = b;
    if (x->id != y->id)
        return (x->id > y->id) - (x->id < y->id);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sorts the t = 0 SCHEDULE rows by task and keeps the last one of each task. */
static void t0_sort(struct engine *e)
{
    size_t n = 0;
    if (e->n_t0 == 0)
        return;
    qsort(e->t0, e->n_t0, sizeof(*e->t0), cmp_t0place);
    for (size_t k = 0; k < e->n_t0; k++) {
        if (n > 0 && e->t0[n - 1].id == e->t0[k].id)
            n--;
        e->t0[n++] = e->t0[k];
    }
    e->n_t0 = n;
}

/* The t = 0 SCHEDULE row of task id, or NULL. */
static const struct t0place *t0_find(const struct engine *e, uint32_t id)
{
    struct t0place key = {.id = id};
    if (e->n_t0 == 0)
        return NULL;
    const struct t0place *p = bsearch(&key, e->t0, e->n_t0, sizeof(*e->t0), cmp_t0_id);
    return p;
}

/* Pass 1's work on one row of the window: the task's record, the cache. */
static int pass1_row(struct engine *e, const struct tr_task_row *row)
{
    bool is_new;
    uint32_t id;

    if (e->n_rec >= NIL - 1)
        return lt_err_set(e->err, LT_ERANGE, 0, 0, "more than %u tasks", NIL - 1);
    if (map_upsert(&e->map, e->rec, e->n_rec, row->job_id, row->task_index, (uint32_t)e->n_rec, &id,
                   &is_new) != 0)
        return oom(e);
    if (is_new) {
        if (LT_VEC_RESERVE(e->rec, e->cap_rec, e->n_rec + 1) != 0)
            return oom(e);
        struct task_rec *n = &e->rec[e->n_rec++];
        memset(n, 0, sizeof(*n));
        n->job_id = row->job_id;
        n->index = row->task_index;
        n->u.t = -1;
    }
    struct task_rec *t = &e->rec[id];
    if (is_new) {
        if (row->type != TR_SUBMIT && row->type != TR_SCHEDULE)
            t->flags |= F_ORPHAN;
        else if (!row->has_req)
            t->flags |= F_REQ_PENDING;
    } else if ((t->flags & F_REQ_PENDING) && row->has_req) {
        if (LT_VEC_RESERVE(e->fix, e->cap_fix, e->n_fix + 1) != 0)
            return oom(e);
        e->fix[e->n_fix++] = (struct reqfix){id, {row->cpu, row->mem, row->disk}};
        t->flags &= (uint8_t)~F_REQ_PENDING;
    }
    int rc = cache_row(e, row, id, is_new, (t->flags & F_ORPHAN) != 0);
    if (rc < 0)
        return rc;
    switch (row->type) {
    case TR_SUBMIT:
        t->flags &= (uint8_t)~F_ENDED;
        t->u.t = -1;
        break;
    case TR_SCHEDULE:
        t->flags &= (uint8_t)~F_ENDED;
        t->u.t = row->time;
        if (row->time == 0) {
            t->flags |= F_SCHED_AT_0;
            if (e->cfg->initial_state == SIM_INIT_TRACE && row->has_machine) {
                if (e->n_t0 >= NIL || LT_VEC_RESERVE(e->t0, e->cap_t0, e->n_t0 + 1) != 0)
                    return oom(e);
                e->t0[e->n_t0] = (struct t0place){id,
                                                  (uint32_t)e->n_t0,
                                                  row->machine_id,
                                                  {row->cpu, row->mem, row->disk},
                                                  row->has_req};
                e->n_t0++;
            }
        }
        break;
    default:
        if (row->type == TR_EVICT)
            e->res->trace_evict_by_prio[row->priority < SIM_N_PRIO ? row->priority
                                                                   : SIM_N_PRIO - 1]++;
        if (is_end(row->type)) {
            int64_t sched = (t->flags & F_ENDED) ? -1 : t->u.t;
            if (row->type == TR_KILL || row->type == TR_LOST)
                t->u.t = row->time; /* pass 2 matches the row that ends the task */
            else
                t->u.t = sched >= 0 ? row->time - sched : 0;
            t->end_type = row->type;
            t->flags |= F_ENDED;
        }
        break;
    }
    return 0;
}

/* Rows pass 1 reads ahead of the one it works on: the map slot of each is prefetched as it
 * is parsed, and the record of each known task before the batch is worked on, so the two
 * cache misses of a row's lookup (the map and rec together are ~1 GB for the whole trace)
 * overlap the parsing and the work of the rows before it. */
#define P1_BATCH 16

static int pass1(struct engine *e)
{
    struct tr_opts o = {.skip_bad_lines = e->cfg->skip_bad_lines};
    struct tr_reader *r = tr_open(e->cfg->trace_dir, TR_TASK_EVENTS, &o, e->err);
    struct tr_task_row rows[P1_BATCH];
    struct tr_counts at[P1_BATCH]; /* the reader's counts after each row of the batch */
    const struct tr_counts *cut_at = NULL;
    int64_t last = 0;
    bool any = false;
    int rc = 0, rd = 1;

    if (!r)
        return e->err->code ? e->err->code : LT_EIO;
    while (rc == 0 && !cut_at && rd > 0) {
        size_t n = 0;
        while (n < P1_BATCH && (rd = tr_next(r, &rows[n], e->err)) > 0) {
            uint64_t h = map_hash(rows[n].job_id, rows[n].task_index);
            __builtin_prefetch(&e->map.slot[map_pos(h, e->map.cap)]);
            at[n] = *tr_counts(r);
            if ((at[n].rows & 0xffff) == 0)
                publish(e, 1, r);
            n++;
        }
        for (size_t k = 0; k < n; k++) {
            uint64_t h = map_hash(rows[k].job_id, rows[k].task_index);
            const struct map_slot *s = &e->map.slot[map_pos(h, e->map.cap)];
            if (s->id != NIL && s->fp == (uint32_t)h)
                __builtin_prefetch(&e->rec[s->id]);
        }
        for (size_t k = 0; k < n && rc == 0; k++) {
            const struct tr_task_row *row = &rows[k];
            if (row->time == TR_TIME_AFTER) { /* sorted last: count them, replay nothing */
                e->res->rows_after_window++;
                continue;
            }
            if (row->time > e->cfg->until_us) {
                cut_at = &at[k]; /* the rows read after it were read ahead: not counted */
                break;
            }
            last = row->time;
            any = true;
            e->rows_window++;
            e->res->rows[TR_TASK_EVENTS].rows++;
            e->res->rows[TR_TASK_EVENTS].by_type[row->type]++;
            rc = pass1_row(e, row);
        }
    }
    if (rc == 0 && !cut_at && rd < 0)
        rc = rd;
    publish(e, 1, r);
    bool cut = cut_at != NULL;
    if (!cut)
        cut_at = tr_counts(r);
    e->res->rows[TR_TASK_EVENTS].bad_lines = cut_at->bad_lines;
    e->res->rows[TR_TASK_EVENTS].parts = cut_at->parts;
    tr_close(r);
    if (rc < 0)
        return rc;
    if (!any)
        return lt_err_set(e->err, LT_EINVAL, 0, 0, "task_events under '%s' has no rows%s",
                          e->cfg->trace_dir, e->cfg->until_us < T_INF ? " before --until" : "");
    e->t_end = cut ? e->cfg->until_us : last; /* --until S ends the window at S */
    if (e->cfg->progress)
        e->cfg->progress->end_time_us = last;
    if (e->n_fix) /* qsort and bsearch want a non-null array even for 0 elements */
        qsort(e->fix, e->n_fix, sizeof(*e->fix), cmp_reqfix);
    t0_sort(e);
    e->res->task_bytes = e->n_rec * sizeof(*e->rec) + e->map.cap * sizeof(*e->map.slot);
    e->res->cache_bytes = e->n_cache;
    e->res->cache_rows = e->cache_rows;
    if (!e->cache_full) { /* pass 2 takes every row from the cache: no lookup by key */
        lt_free(e->map.slot);
        e->map.slot = NULL;
    }
    return 0;
}

/* job_events: counted per type within the window (optional table). */
static int count_jobs(struct engine *e)
{
    char path[4096];
    struct stat st;

    snprintf(path, sizeof(path), "%s/job_events", e->cfg->trace_dir);
    if (stat(path, &st) != 0)
        return 0;
    struct tr_opts o = {.skip_bad_lines = e->cfg->skip_bad_lines};
    struct tr_reader *r = tr_open(e->cfg->trace_dir, TR_JOB_EVENTS, &o, e->err);
    if (!r)
        return e->err->code ? e->err->code : LT_EIO;
    struct tr_counts c = {0};
    int rc;
    for (;;) {
        struct tr_job_row row;
        rc = tr_next(r, &row, e->err);
        if (rc <= 0 || row.time > e->t_end)
            break;
        c.rows++;
        c.by_type[row.type]++;
    }
    c.bad_lines = tr_counts(r)->bad_lines;
    c.parts = tr_counts(r)->parts;
    tr_close(r);
    e->res->rows[TR_JOB_EVENTS] = c;
    return rc < 0 ? rc : 0;
}

/* ---- pass 2: the heap, the queue, the books ---------------------------------------------- */

static bool heap_less(const struct engine *e, const struct heap_item *a, const struct heap_item *b)
{
    (void)e;
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_moved(struct engine *e, const struct heap_item *it, size_t k)
{
    e->live[it->live].heap_pos = (uint32_t)k;
}

static int heap_push(struct engine *e, int64_t time, uint32_t l)
{
    if (comp_heap_push(e, &e->heap, (struct heap_item){time, e->live[l].seq, l}) != 0)
        return oom(e);
    return 0;
}

static void heap_remove(struct engine *e, uint32_t l)
{
    size_t k = e->live[l].heap_pos;
    if (k == NIL)
        return;
    e->live[l].heap_pos = NIL;
    comp_heap_remove(e, &e->heap, k);
}

static bool queue_before(const struct live *a, const struct live *b)
{
    return a->arrival < b->arrival || (a->arrival == b->arrival && a->seq < b->seq);
}

static void queue_insert(struct engine *e, uint32_t l)
{
    struct live *t = &e->live[l];
    sq_activate(&e->q, t->prio, t->slot, &t->req);
    t->state = L_QUEUED;
    e->witness = l; /* jobs submit equal tasks: the next one is likely dominated by this one */
}

static void oq_unlink(struct engine *e, uint32_t l);

static void queue_unlink(struct engine *e, uint32_t l)
{
    struct live *t = &e->live[l];
    sq_deactivate(&e->q, t->prio, t->slot);
    if (e->om)
        oq_unlink(e, l);
}

static void slot_moved(void *ctx, uint32_t item, uint32_t slot)
{
    struct engine *e = ctx;
    e->live[item].slot = slot;
}

/* Live entry l is no longer used: its task left the simulation. */
static void live_release(struct engine *e, uint32_t l)
{
    struct live *t = &e->live[l];
    struct task_rec *r = &e->rec[t->rec];
    sq_release(&e->q, t->prio, t->slot);
    r->flags |= F_DONE;
    t->q_next = e->free_live;
    e->free_live = l;
}

static const char *outcome_name(uint8_t o)
{
    switch (o) {
    case TR_FINISH:
        return "finished";
    case TR_FAIL:
        return "failed";
    case TR_KILL:
        return "killed";
    case TR_LOST:
        return "lost";
    default:
        return "running";
    }
}

/* Appends the decimal digits of v at p; returns the new end. */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* ",SECONDS" with exactly six decimals (trace seconds of timestamp t, exact from the integer
 * microseconds), or "," when t < 0 (not reached). */
static char *put_time(char *p, int64_t t)
{
    *p++ = ',';
    if (t < 0)
        return p;
    int64_t us = t - TRACE_ZERO_US;
    if (us < 0) {
        *p++ = '-';
        us = -us;
    }
    p = put_u64(p, (uint64_t)(us / US));
    *p++ = '.';
    int64_t frac = us % US;
    for (int64_t d = US / 10; d >= 1; d /= 10) {
        *p++ = (char)('0' + frac / d);
        frac %= d;
    }
    return p;
}

/* ",V" as printf("%g") writes it (six significant digits, as the trace prints requests). A
 * fast path covers values whose six-digit rounding is unambiguous; the rest go to snprintf. */
static char *put_g(char *p, double v)
{
    static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    *p++ = ',';
    if (v > 0.0 && v < 1e6 && v >= 1e-4) {
        int e = 0; /* decimal exponent: 10^e <= v < 10^(e+1) */
        while (e < 5 && v >= p10[e + 1])
            e++;
        while (e > -4 && v < 1.0 / p10[-e])
            e--;
        if (v >= (e >= 0 ? p10[e] : 1.0 / p10[-e])) {
            int k = 5 - e; /* decimals so that six digits remain: 0 .. 9 */
            double x = v * p10[k];
            double r = floor(x + 0.5);
            double frac = x - floor(x);
            if (fabs(frac - 0.5) > 1e-6 && r < 1e6) {
                uint64_t m = (uint64_t)r;
                while (k > 0 && m % 10 == 0) { /* %g drops trailing zeros */
                    m /= 10;
                    k--;
                }
                char digits[24];
                char *q = put_u64(digits, m);
                int n = (int)(q - digits);
                if (k == 0) {
                    memcpy(p, digits, (size_t)n);
                    return p + n;
                }
                if (n > k) {
                    memcpy(p, digits, (size_t)(n - k));
                    p += n - k;
                    *p++ = '.';
                    memcpy(p, digits + n - k, (size_t)k);
                    return p + k;
                }
                *p++ = '0';
                *p++ = '.';
                for (int z = 0; z < k - n; z++)
                    *p++ = '0';
                memcpy(p, digits, (size_t)n);
                return p + n;
            }
        }
    }
    return p + snprintf(p, 32, "%g", v);
}

static void task_csv_row(struct engine *e, const struct task_rec *r, int prio, int cls,
                         const struct lt_res *req, int64_t arrival, int64_t start, int64_t end,
                         const char *outcome, uint32_t requeues, const char *machine)
{
    char line[512], *p = line;
    if (!e->tasks_csv)
        return;
    p = put_u64(p, r->job_id);
    *p++ = ',';
    p = put_u64(p, r->index);
    *p++ = ',';
    p = put_u64(p, (uint64_t)prio);
    *p++ = ',';
    p = put_u64(p, (uint64_t)cls);
    p = put_g(p, req->cpu);
    p = put_g(p, req->mem);
    p = put_g(p, req->disk);
    p = put_time(p, arrival);
    p = put_time(p, start);
    p = put_time(p, end);
    *p++ = ',';
    size_t n = strlen(outcome);
    memcpy(p, outcome, n);
    p += n;
    *p++ = ',';
    p = put_u64(p, requeues);
    *p++ = ',';
    n = strlen(machine);
    memcpy(p, machine, n);
    p += n;
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), e->tasks_csv);
}

static uint32_t live_alloc(struct engine *e)
{
    if (e->free_live != NIL) {
        uint32_t l = e->free_live;
        e->free_live = e->live[l].q_next;
        return l;
    }
    if (LT_VEC_RESERVE(e->live, e->cap_live, e->n_live + 1) != 0)
        return NIL;
    return (uint32_t)e->n_live++;
}

/* Live entry l's run-time estimate before any noise (see oq_live_init). */
static int64_t live_estimate(const struct engine *e, uint32_t l)
{
    const struct live *t = &e->live[l];
    if (has_demand(t))
        return t->demand;
    if (t->outcome == TR_KILL || t->outcome == TR_LOST)
        return t->end_time - t->arrival;
    return e->t_end - t->arrival;
}

/* ---- SLA annotation (--sla-annotate; docs/simulator.md "SLA annotation") ---------------- */

/* Live entry l (just arrived) gets the SLA of the first rule that selects it, its Nx times
 * resolved with its estimate r-hat (the ordered queue's, noise included, when in use).
 * counted false: a task running at the window's start (no start delay of its own): no SLA. */
static int sla_live_init(struct engine *e, uint32_t l, bool counted)
{
    if (LT_VEC_RESERVE(e->asla, e->cap_asla, (size_t)l + 1) != 0)
        return oom(e);
    struct asla *a = &e->asla[l];
    const struct live *t = &e->live[l];
    a->rule = -1;
    a->has = false;
    if (e->inj_rec0 != NIL && t->rec >= e->inj_rec0) { /* the injected job: its --sla setting */
        a->has = e->inj_sla != NULL;
        if (a->has)
            a->sla = *e->inj_sla;
        a->est = e->om ? e->ol[l].est : live_estimate(e, l);
        return 0;
    }
    if (!counted)
        return 0;
    int r = sim_annot_match(e->cfg->annot, t->prio, t->sched_class);
    if (r < 0) {
        e->res->sla_none++;
        return 0;
    }
    const struct sim_annot_rule *rule = &e->cfg->annot->rules[r];
    struct lt_err e2;
    lt_err_init(&e2, NULL);
    a->est = e->om ? e->ol[l].est : live_estimate(e, l);
    if (a->est < 1)
        a->est = 1;
    if (lt_sla_resolve(&rule->spec, (double)a->est / (double)US, &a->sla, &e2) < 0)
        return lt_err_set(e->err, e2.code, 0, 0, "--sla-annotate rule '%s': %s", rule->name,
                          e2.text);
    a->rule = r;
    a->has = true;
    e->res->sla[r].tasks++;
    return 0;
}

/* Task l's reward for a start at delay d_s (example1: running r-hat on its CPU request). */
static double sla_reward(const struct engine *e, uint32_t l, double d_s)
{
    const struct asla *a = &e->asla[l];
    const struct live *t = &e->live[l];
    struct lt_sla_run run = {secs(t->arrival) + d_s, (double)a->est / (double)US, t->ask.cpu};
    return lt_sla_reward(&a->sla, d_s, &run);
}

/* Task l (with an SLA) started for the first time now. */
static void sla_on_start(struct engine *e, uint32_t l)
{
    const struct asla *a = &e->asla[l];
    struct sim_sla_stats *st = &e->res->sla[a->rule];
    double d = (double)(e->now - e->live[l].arrival) / (double)US, r = sla_reward(e, l, d);
    st->started++;
    st->reward_sum += r;
    st->negative += r < 0;
    if (d <= lt_sla_knee(&a->sla)) {
        st->by_knee++;
    } else {
        st->late++;
        st->late_wait_s += d;
    }
}

/* Task l (with an SLA) leaves at end never started: censored at h = end - arrival. Its reward
 * is at most r(h); exact where r is flat from h on (by-deadline from d2, cheap-and-simple with
 * r_min = r_max, example1 past its target: 0). */
static void sla_on_censor(struct engine *e, uint32_t l, int64_t end)
{
    const struct asla *a = &e->asla[l];
    const struct lt_sla *s = &a->sla;
    struct sim_sla_stats *st = &e->res->sla[a->rule];
    double h = (double)(end - e->live[l].arrival) / (double)US, r = sla_reward(e, l, h);
    bool bound = false;
    switch (s->kind) {
    case LT_SLA_BY_DEADLINE:
        bound = h < s->d2_s;
        break;
    case LT_SLA_CHEAP_AND_SIMPLE:
        bound = s->r_min < s->r_max;
        break;
    case LT_SLA_EXAMPLE1: /* before the target: at most the dearer price on every hour */
        bound = h < s->target_s;
        if (bound)
            r = fmax(s->price_peak, s->price_offpeak) * e->live[l].ask.cpu * (double)a->est /
                (double)US / 3600.0;
        break;
    }
    st->censored++;
    st->bounds += bound;
    st->reward_sum += r;
    st->negative += r < 0;
    st->censored_wait_s += h;
}

/* Task l leaves the simulation now with outcome o (a TR_* end type, or TR_N_TYPES for a task
 * still running or queued at T_end; name then says which): its tasks.csv row, its time in
 * the system, and its live entry back. machine: the machine it ran on last, or "". Names are
 * owned by the cluster, so the caller may have removed the placement already. */
static void task_leave(struct engine *e, uint32_t l, uint8_t o, const char *name,
                       const char *machine)
{
    struct live *t = &e->live[l];
    struct task_rec *r = &e->rec[t->rec];
    int64_t end = e->now < e->t_end ? e->now : e->t_end;

    e->res->time_in_system_s += (double)(end - t->arrival) / (double)US;
    if (t->first_start < 0) {
        e->res->wait[t->prio].never_started++;
        e->res->wait[t->prio].waiting_at_end += o == TR_N_TYPES;
        sim_hist_add(&e->res->wait[t->prio].censored, (uint64_t)(end - t->arrival));
        if (e->asla != NULL && e->asla[l].rule >= 0)
            sla_on_censor(e, l, end);
    }
    task_csv_row(e, r, t->prio, t->sched_class, &t->ask, t->arrival, t->first_start,
                 o == TR_N_TYPES ? -1 : e->now, name ? name : outcome_name(o), t->requeues,
                 machine);
    live_release(e, l);
}

static int retry_queue(struct engine *e, size_t m);
static int oq_enqueue(struct engine *e, uint32_t l);
static int oq_gain(struct engine *e, size_t m);
static int64_t oq_end_of(const struct engine *e, uint32_t l);

/* A task of the injected job starts now for the first time. */
static void inj_on_start(struct engine *e)
{
    if (e->inj_started++ == 0)
        e->inj_first = e->now;
    if (e->inj_started == e->inj_need) {
        e->inj_last = e->now;
        e->halt = !e->inj_until;
    }
}

/* A task of the injected job finishes now (--until-complete). */
static void inj_on_end(struct engine *e)
{
    if (++e->inj_done == e->inj_n) {
        e->inj_end = e->now;
        e->halt = e->inj_until;
    }
}

/* Starts l on machine m now. flags: LT_PLACE_FORCE for a task the trace ran there at t = 0
 * (--initial-state trace), placed even beyond the machine's room. */
static int start(struct engine *e, uint32_t l, size_t m, unsigned flags)
{
    struct live *t = &e->live[l];
    struct lt_task task = {.id = (int64_t)l,
                           .job_id = (int64_t)e->rec[t->rec].job_id,
                           .priority = t->prio,
                           .sched_class = t->sched_class,
                           .req = t->req,
                           .arrival_us = t->arrival,
                           .start_us = e->now,
                           .evictions = t->requeues};
    size_t pid;
    int rc = lt_cluster_place(e->cluster, m, &task, flags, &pid, e->err);
    if (rc < 0)
        return rc;
    if (e->prio_sum) {
        struct lt_res *ps = &e->prio_sum[m * SIM_N_PRIO + t->prio];
        ps->cpu += t->req.cpu;
        ps->mem += t->req.mem;
        ps->disk += t->req.disk;
    }
    room_changed(e, m);
    if (pid >= NIL) /* placements alive at once <= tasks < NIL */
        return lt_err_set(e->err, LT_ERANGE, 0, 0, "placement id %zu out of range", pid);
    t->pid = (uint32_t)pid;
    t->state = L_RUNNING;
    e->ask_run.cpu += t->ask.cpu;
    e->ask_run.mem += t->ask.mem;
    e->ask_run.disk += t->ask.disk;
    t->machine = (uint32_t)m;
    t->start = e->now;
    if (t->first_start < 0) {
        t->first_start = e->now;
        sim_hist_add(&e->res->wait[t->prio].hist, (uint64_t)(e->now - t->arrival));
        if (e->asla != NULL && e->asla[l].rule >= 0)
            sla_on_start(e, l);
        if (t->rec >= e->inj_rec0) /* a task of the injected job (NIL: none) */
            inj_on_start(e);
    }
    e->res->placements++;
    if (e->mend != NULL) {
        int64_t end = oq_end_of(e, l);
        if (end < e->mend[m])
            e->mend[m] = end;
    }
    if (has_demand(t))
        return heap_push(e, e->now + t->demand, l);
    return 0;
}

/* True if a queued task asks for no more than req in every resource. Every queued task fits
 * nowhere (the queue is retried whenever a machine gains room), so such a req fits nowhere
 * either: choose would return LT_NO_MACHINE, and draws nothing from the RNG when nothing
 * fits (lt_score.h). Not valid inside retry_queue, where queued tasks may fit the machine
 * that just gained room. Jobs submit many equal tasks, so this spares most failing chooses. */
static bool dominated_by_queue(struct engine *e, const struct lt_res *req)
{
    if (e->q.active == 0)
        return false;
    /* The last witness first: the task that dominated the previous request, or the last one
     * queued. Its entry's slot is looked up in the queue, whose own copy of a queued request
     * is what counts: a stale slot (the task left) is either not queued or another queued
     * task's, a witness as good. */
    if (e->witness != NIL) {
        const struct live *w = &e->live[e->witness];
        if (sq_slot_fits(&e->q, w->prio, w->slot, req))
            return true;
    }
    for (unsigned p = 0; p < SIM_N_PRIO; p++) {
        uint32_t s = sq_find(&e->q, p, 0, req);
        if (s != SQ_NONE) {
            e->witness = sq_item(&e->q, p, s);
            return true;
        }
    }
    return false;
}

static int preempt(struct engine *e, uint32_t l, bool *done);

/* The sanitizer build (LOTUS_SANITIZE) checks every start_on_sole and nofit_hit against a full
 * choose; the other builds keep assertions on, and that check would cost the search it saves. */
#if defined(__SANITIZE_ADDRESS__)
#define CHECK_SOLE 1
#else
#define CHECK_SOLE 0
#endif

/* The machine the placement policy (or LoTES) chooses for task, or LT_NO_MACHINE; a request
 * that fits nowhere is answered by nofit_hit, checked against the policy's own answer with
 * check_index (and in the sanitizer build). */
static int choose(struct engine *e, const struct lt_task *task, size_t *m)
{
    int rc;

    if (nofit_hit(e, &task->req)) {
        *m = LT_NO_MACHINE;
        e->res->nofit_hits++;
        if (!CHECK_SOLE && !e->cfg->check_index)
            return 0;
        struct lt_rng copy = e->rng;
        size_t want = LT_NO_MACHINE;
        if (e->lotes != NULL)
            want = lt_lotes_index_any_room(e->lix, &task->req) ? 0 : LT_NO_MACHINE;
        else if ((rc = lt_policy_choose(e->cfg->policy, e->cluster, task, &copy, &want, e->err)) <
                 0)
            return rc;
        if (want != LT_NO_MACHINE || memcmp(&copy, &e->rng, sizeof(copy)) != 0)
            return lt_err_set(e->err, LT_EINVAL, 0, 0,
                              "replay: a request remembered to fit nowhere fits machine %zu", want);
        return 0;
    }
    rc = e->lotes != NULL ? lotes_choose(e, &task->req, m)
                          : lt_policy_choose_hinted(e->cfg->policy, e->cluster, task, &e->rng,
                                                    e->hint, m, e->err);
    if (rc == 0 && *m == LT_NO_MACHINE)
        nofit_add(e, &task->req);
    return rc;
}

/* place_or_queue's how. */
enum {
    PQ_RETRY = 1 << 0,     /* inside retry_queue: the dominance shortcut does not hold */
    PQ_NO_PREEMPT = 1 << 1 /* a preemption's victim: it does not preempt in turn */
};

/* l fits nowhere: it evicts lower-priority work where it can (--preempt), else it queues. */
static int queue_or_preempt(struct engine *e, uint32_t l, unsigned how)
{
    if (e->n_pt && !(how & (PQ_RETRY | PQ_NO_PREEMPT))) {
        bool done = false;
        int rc = preempt(e, l, &done);
        if (rc < 0 || done)
            return rc;
    }
    queue_insert(e, l);
    return 0;
}

/* Places l on the machine the policy chooses, or else preempts for it or queues it. how:
 * PQ_* flags. */
static int place_or_queue(struct engine *e, uint32_t l, unsigned how)
{
    struct live *t = &e->live[l];
    struct lt_task task = {.priority = t->prio, .sched_class = t->sched_class, .req = t->req};
    size_t m;
    if (e->om) /* the ordered queue: the next dispatch decides */
        return oq_enqueue(e, l);
    if (!(how & PQ_RETRY) && dominated_by_queue(e, &t->req))
        return queue_or_preempt(e, l, how);
    int rc = choose(e, &task, &m);
    if (rc < 0)
        return rc;
    if (m == LT_NO_MACHINE)
        return queue_or_preempt(e, l, how);
    return start(e, l, m, 0);
}

/* Starts queued task l on machine m, the one machine it fits (retry_queue): a placement
 * policy would choose m, so its search is skipped (lt_policy_choose_sole makes the same draws;
 * CHECK_SOLE compares it with choose). LoTES's dispatcher runs as for any task. */
static int start_on_sole(struct engine *e, uint32_t l, size_t m)
{
    struct lt_task task = {
        .priority = e->live[l].prio, .sched_class = e->live[l].sched_class, .req = e->live[l].req};
    struct lt_rng copy = e->rng;
    size_t got, want = m;
    int rc;

    if (e->lotes != NULL)
        return place_or_queue(e, l, PQ_RETRY);
    if (CHECK_SOLE &&
        (rc = lt_policy_choose(e->cfg->policy, e->cluster, &task, &copy, &want, e->err)) < 0)
        return rc;
    rc = lt_policy_choose_sole(e->cfg->policy, e->cluster, &task, m, &e->rng, &got, e->err);
    if (rc < 0)
        return rc;
    if (CHECK_SOLE && (want != m || memcmp(&copy, &e->rng, sizeof(copy)) != 0))
        return lt_err_set(e->err, LT_EINVAL, 0, 0,
                          "replay: a queued task that fits machine %zu also fits machine %zu", m,
                          want);
    return start(e, l, got, 0);
}

static bool fits_some_machine(const struct engine *e, const struct lt_res *q)
{
    for (size_t k = 0; k < e->n_caps; k++)
        if (q->cpu <= e->caps[k].cpu && q->mem <= e->caps[k].mem && q->disk <= e->caps[k].disk)
            return true;
    return false;
}

/* The injected job's queued tasks that fit machine m, in task order, start there (retry_queue
 * under SIM_RANK_FIRST_IN_PRIORITY and SIM_RANK_FIRST). */
static int retry_injected(struct engine *e, size_t m)
{
    for (size_t h = e->inj_rec0; h < e->n_rec; h++) {
        if (e->rec[h].flags & F_DONE)
            continue;
        uint32_t l = e->rec[h].u.live;
        if (e->live[l].state != L_QUEUED || !lt_cluster_fits(e->cluster, m, &e->live[l].req))
            continue;
        queue_unlink(e, l);
        int rc = start_on_sole(e, l, m);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Machine m gained room: place every queued task that now fits on it, in queue order
 * (priority, then arrival; an injected job ranked first goes first among its priority or
 * before every priority). Queued tasks fit nowhere else, so each goes to m (start_on_sole). */
static int retry_queue(struct engine *e, size_t m)
{
    if (e->om)
        return oq_gain(e, m);
    if (e->q.active == 0 || !lt_cluster_online(e->cluster, m))
        return 0;
    for (int p = SIM_N_PRIO - 1; p >= 0; p--) {
        if (e->inj_rank != SIM_RANK_ARRIVAL && e->inj_rec0 != NIL &&
            (e->inj_rank == SIM_RANK_FIRST ? p == SIM_N_PRIO - 1 : p == e->inj_prio)) {
            int rc = retry_injected(e, m);
            if (rc < 0)
                return rc;
        }
        struct lt_res f = lt_cluster_free_res(e->cluster, m);
        uint32_t s = sq_find(&e->q, (unsigned)p, 0, &f);
        while (s != SQ_NONE) {
            uint32_t l = sq_item(&e->q, (unsigned)p, s);
            if (lt_cluster_fits(e->cluster, m, &e->live[l].req)) {
                queue_unlink(e, l);
                int rc = start_on_sole(e, l, m);
                if (rc < 0)
                    return rc;
                f = lt_cluster_free_res(e->cluster, m);
            }
            s = sq_find(&e->q, (unsigned)p, s + 1, &f);
        }
    }
    return 0;
}

/* ---- the ordered queue (--order, --backfill; docs/simulator.md) ---------------------------- */

static bool oq_less(const struct engine *e, const struct oq_item *a, const struct oq_item *b)
{
    (void)e;
    if (a->pr > b->pr || a->pr < b->pr)
        return a->pr > b->pr;
    if (a->cls > b->cls || a->cls < b->cls)
        return a->cls > b->cls;
    if (a->key > b->key || a->key < b->key)
        return a->key > b->key;
    if (a->tie > b->tie || a->tie < b->tie)
        return a->tie > b->tie;
    return a->arrival < b->arrival || (a->arrival == b->arrival && a->seq < b->seq);
}

static void oq_moved(struct engine *e, const struct oq_item *it, size_t k)
{
    e->ol[it->live].pos = (uint32_t)k;
}

/* Task l's key now, into it: its priority; or the order's key of (accounted CPU request,
 * wait, estimated run time); or, for an SLA order, the priority (within-priority), then
 * lt_qorder_key_job's fields of its SLA (none: after those with one), d = now - arrival. */
static void oq_key(const struct engine *e, uint32_t l, struct oq_item *it)
{
    const struct live *t = &e->live[l];
    it->pr = it->cls = it->tie = 0;
    if (e->cfg->order == NULL) {
        it->key = (double)t->prio;
        return;
    }
    if (!e->sla_order) {
        it->key = lt_qorder_key(&e->order, t->req.cpu, (double)(e->now - t->arrival) / (double)US,
                                (double)e->ol[l].est / (double)US);
        return;
    }
    const struct asla *a = &e->asla[l];
    double est = (double)e->ol[l].est / (double)US;
    struct lt_qjob x = {.id = t->seq,
                        .arrival_s = secs(t->arrival),
                        .tasks = 1,
                        .runtime_s = est,
                        .estimate_s = est,
                        .cls = -1,
                        .sla = a->has ? &a->sla : NULL};
    struct lt_qkey k = lt_qorder_key_job(&e->order, &x, secs(e->now));
    it->pr = e->cfg->sla_first ? 0.0 : (double)t->prio;
    it->cls = k.cls;
    it->key = k.key;
    it->tie = k.tie;
}

/* A standard normal draw (Box-Muller; one of the pair). */
static double oq_normal(struct lt_rng *r)
{
    double u1 = lt_rng_uniform(r), u2 = lt_rng_uniform(r);
    if (u1 <= 0.0)
        u1 = 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Live entry l arrived: its oq_live (not queued) and its run-time estimate: the trace's run
 * for FINISH and FAIL, arrival to the KILL or LOST row for those (an upper bound of its run),
 * arrival to the window's end for a task whose end the window does not hold; with
 * --estimate noisy:CV, times a lognormal factor of mean 1 and that CV. */
static int oq_live_init(struct engine *e, uint32_t l)
{
    if (LT_VEC_RESERVE(e->ol, e->cap_ol, (size_t)l + 1) != 0)
        return oom(e);
    int64_t est = live_estimate(e, l);
    if (e->cfg->estimate_cv > 0.0) {
        double s2 = log1p(e->cfg->estimate_cv * e->cfg->estimate_cv);
        double f = exp(-0.5 * s2 + sqrt(s2) * oq_normal(&e->qrng));
        double v = (double)est * f;
        est = v >= 9e18 ? INT64_MAX / 4 : (int64_t)v;
    }
    e->ol[l] = (struct oq_live){.pos = NIL, .mark = 0, .any = 0, .est = est > 0 ? est : 1};
    return 0;
}

static int oq_push_list(struct engine *e, uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
    if (LT_VEC_RESERVE(*a, *cap, *n + 1) != 0)
        return oom(e);
    (*a)[(*n)++] = v;
    return 0;
}

/* l fits nowhere yet, or waits its turn: it joins both queues, and a dispatch is due. */
static int oq_enqueue(struct engine *e, uint32_t l)
{
    const struct live *t = &e->live[l];
    queue_insert(e, l);
    struct oq_item it = {.arrival = t->arrival, .seq = t->seq, .live = l};
    oq_key(e, l, &it);
    if (oq_heap_push(e, &e->oq, it) != 0)
        return oom(e);
    e->oq_pending = true;
    return oq_push_list(e, &e->oq_new, &e->n_oq_new, &e->cap_oq_new, l);
}

/* l leaves the ordered queue (started, killed). */
static void oq_unlink(struct engine *e, uint32_t l)
{
    uint32_t k = e->ol[l].pos;
    if (k == NIL)
        return;
    e->ol[l].pos = NIL;
    oq_heap_remove(e, &e->oq, k);
}

/* Machine m gained room: a dispatch is due, and the queued tasks that fit m are candidates. */
static int oq_gain(struct engine *e, size_t m)
{
    e->oq_pending = true;
    if (e->gained_mark[m] == e->stamp + 1)
        return 0;
    e->gained_mark[m] = e->stamp + 1;
    if (e->cfg->backfill == SIM_BACKFILL_EASY && e->rsv_mark[m] != e->rsv_epoch) {
        e->rsv_mark[m] = e->rsv_epoch;
        int rc = oq_push_list(e, &e->rsv_gained, &e->n_rsv_gained, &e->cap_rsv_gained, (uint32_t)m);
        if (rc < 0)
            return rc;
    }
    return oq_push_list(e, &e->gained, &e->n_gained, &e->cap_gained, (uint32_t)m);
}

/* The machine the placement policy (or LoTES) chooses for queued task l, or LT_NO_MACHINE. */
static int oq_choose(struct engine *e, uint32_t l, size_t *m)
{
    const struct live *t = &e->live[l];
    struct lt_task task = {.priority = t->prio, .sched_class = t->sched_class, .req = t->req};
    return choose(e, &task, m);
}

/* As oq_choose, with machine x made to look full: a placement taking its free room is added
 * for the search and removed after. */
static int oq_choose_avoiding(struct engine *e, uint32_t l, size_t x, size_t *m)
{
    struct lt_res f = lt_cluster_free_res(e->cluster, x);
    f.cpu = f.cpu > 0 ? f.cpu : 0;
    f.mem = f.mem > 0 ? f.mem : 0;
    f.disk = f.disk > 0 ? f.disk : 0;
    struct lt_task ph = {.id = -1, .job_id = -1, .req = f};
    size_t pid;
    int rc = lt_cluster_place(e->cluster, x, &ph, LT_PLACE_FORCE, &pid, e->err);
    if (rc < 0)
        return rc;
    room_changed(e, x);
    rc = oq_choose(e, l, m);
    int rc2 = lt_cluster_remove(e->cluster, pid, e->err);
    room_changed(e, x);
    if (rc == 0 && *m == x) /* a request of 0 still fits a full machine */
        *m = LT_NO_MACHINE;
    return rc < 0 ? rc : rc2;
}

/* Starts queued task l on m. */
static int oq_start(struct engine *e, uint32_t l, size_t m)
{
    oq_unlink(e, l);
    queue_unlink(e, l);
    return start(e, l, m, 0);
}

static bool res_le(const struct lt_res *a, const struct lt_res *b)
{
    return a->cpu <= b->cpu && a->mem <= b->mem && a->disk <= b->disk;
}

static int cmp_oq_end(const void *a, const void *b)
{
    const struct oq_end *x = a, *y = b;
    return (x->end > y->end) - (x->end < y->end);
}

/* The predicted end of running task l: its start plus its estimate (never before now); a
 * task whose end the window does not hold never ends. */
static int64_t oq_end_of(const struct engine *e, uint32_t l)
{
    const struct live *t = &e->live[l];
    if (t->outcome == TR_N_TYPES)
        return T_INF;
    int64_t est = e->ol[l].est, end = est > T_INF - t->start ? T_INF : t->start + est;
    return end > e->now ? end : e->now;
}

/* The earliest predicted end of machine m's running tasks at which need fits there, before
 * bound (T_INF when none: also for an offline machine or one too small), and the room left
 * beside need then. */
static int oq_shadow_on(struct engine *e, size_t m, const struct lt_res *need, int64_t bound,
                        int64_t *t, struct lt_res *extra)
{
    struct lt_res cap = lt_cluster_cap(e->cluster, m);
    struct lt_res f = lt_cluster_free_res(e->cluster, m);
    *t = T_INF;
    if (!lt_cluster_online(e->cluster, m) || !res_le(need, &cap))
        return 0;
    if (res_le(need, &f)) {
        *t = e->now;
        *extra = (struct lt_res){f.cpu - need->cpu, f.mem - need->mem, f.disk - need->disk};
        return 0;
    }
    if (e->mend[m] >= bound && e->mend[m] > e->now) /* no task ends before bound */
        return 0;
    size_t n = 0;
    for (size_t p = lt_cluster_first_placement(e->cluster, m); p != LT_NO_MACHINE;
         p = lt_cluster_next_placement(e->cluster, p)) {
        uint32_t l = (uint32_t)lt_cluster_placement_task(e->cluster, p)->id;
        if (LT_VEC_RESERVE(e->ends, e->cap_ends, n + 1) != 0)
            return oom(e);
        e->ends[n++] = (struct oq_end){oq_end_of(e, l), e->live[l].req};
    }
    qsort(e->ends, n, sizeof(*e->ends), cmp_oq_end);
    e->mend[m] = n ? e->ends[0].end : T_INF;
    for (size_t k = 0; k < n && *t == T_INF && e->ends[k].end < bound; k++) {
        f.cpu += e->ends[k].req.cpu;
        f.mem += e->ends[k].req.mem;
        f.disk += e->ends[k].req.disk;
        /* every task ending at the same instant leaves then */
        if ((k + 1 == n || e->ends[k + 1].end != e->ends[k].end) && res_le(need, &f))
            *t = e->ends[k].end;
    }
    *extra = (struct lt_res){f.cpu - need->cpu, f.mem - need->mem, f.disk - need->disk};
    return 0;
}

/* The EASY reservation of head h (spec section 1.7, last bullet): over the online machines
 * whose capacity can hold h, the earliest predicted end of their running tasks at which h
 * fits; the machine *ms with the least (*ts; T_INF: none), and *extra the room left beside h
 * then. A scan of every running task when the head changed or its machine's time grew;
 * else only its machine and those that gained room since are looked at again (no other
 * machine's time can have dropped: their room only shrank). */
static int oq_reserve(struct engine *e, uint32_t h, size_t *ms, int64_t *ts, struct lt_res *extra)
{
    const struct lt_res *need = &e->live[h].req;
    int64_t t;
    struct lt_res x;
    int rc;
    bool full = e->rsv_head != h || e->rsv_m == LT_NO_MACHINE;
    if (!full) {
        if ((rc = oq_shadow_on(e, e->rsv_m, need, T_INF, &t, &x)) < 0)
            return rc;
        full = t > e->rsv_ts;
    }
    if (full) {
        e->rsv_head = h;
        e->rsv_m = LT_NO_MACHINE;
        e->rsv_ts = T_INF;
        size_t n_m = lt_cluster_size(e->cluster);
        for (size_t m = 0; m < n_m; m++) {
            if ((rc = oq_shadow_on(e, m, need, e->rsv_ts, &t, &x)) < 0)
                return rc;
            if (t < e->rsv_ts) {
                e->rsv_ts = t;
                e->rsv_m = m;
                e->rsv_extra = x;
            }
        }
    } else {
        e->rsv_ts = t;
        e->rsv_extra = x;
        for (size_t k = 0; k < e->n_rsv_gained; k++) {
            size_t m = e->rsv_gained[k];
            if (m == e->rsv_m)
                continue;
            if ((rc = oq_shadow_on(e, m, need, e->rsv_ts, &t, &x)) < 0)
                return rc;
            if (t < e->rsv_ts || (t == e->rsv_ts && m < e->rsv_m)) {
                e->rsv_ts = t;
                e->rsv_m = m;
                e->rsv_extra = x;
            }
        }
    }
    e->n_rsv_gained = 0;
    e->rsv_epoch++;
    *ms = e->rsv_m;
    *ts = e->rsv_ts;
    *extra = e->rsv_extra;
    if (e->cfg->on_reserve) {
        const struct task_rec *r = &e->rec[e->live[h].rec];
        e->cfg->on_reserve(e->cfg->reserve_ctx, r->job_id, r->index, e->now, *ts, *ms);
    }
    return 0;
}

/* Adds l to the candidates unless it is there already. */
static int oq_cand_add(struct engine *e, uint32_t l, bool any)
{
    if (e->ol[l].pos == NIL || e->ol[l].mark == e->stamp)
        return 0;
    e->ol[l].mark = e->stamp;
    if (any)
        e->ol[l].any = e->stamp;
    const struct lt_res *r = &e->live[l].req;
    e->cand_min.cpu = r->cpu < e->cand_min.cpu ? r->cpu : e->cand_min.cpu;
    e->cand_min.mem = r->mem < e->cand_min.mem ? r->mem : e->cand_min.mem;
    e->cand_min.disk = r->disk < e->cand_min.disk ? r->disk : e->cand_min.disk;
    if (LT_VEC_RESERVE(e->qcand.a, e->qcand.cap, e->qcand.n + 1) != 0)
        return oom(e);
    e->qcand.a[e->qcand.n++] = e->oq.a[e->ol[l].pos];
    return 0;
}

/* Can a gained machine still take the least candidate request (else only the candidates
 * that may fit any machine are left to try)? */
static bool oq_gained_room(const struct engine *e)
{
    for (size_t k = 0; k < e->n_gained; k++) {
        struct lt_res f = lt_cluster_free_res(e->cluster, e->gained[k]);
        if (lt_cluster_online(e->cluster, e->gained[k]) && res_le(&e->cand_min, &f))
            return true;
    }
    return false;
}

/* Keeps only the candidates that may fit any machine. */
static void oq_cand_keep_any(struct engine *e)
{
    size_t n = 0;
    for (size_t k = 0; k < e->qcand.n; k++)
        if (e->ol[e->qcand.a[k].live].any == e->stamp)
            e->qcand.a[n++] = e->qcand.a[k];
    e->qcand.n = n;
    for (size_t k = n / 2; k-- > 0;)
        cand_heap_down(e, &e->qcand, k);
}

/* The tasks that may fit somewhere now, in queue order: those queued since the last dispatch,
 * those EASY held back then, and those that fit a machine that gained room since (every other
 * queued task fitted nowhere at the last dispatch, and only those machines have more room). */
static int oq_candidates(struct engine *e, bool blocked)
{
    int rc = 0;
    e->qcand.n = 0;
    e->cand_min = (struct lt_res){HUGE_VAL, HUGE_VAL, HUGE_VAL};
    for (size_t k = 0; k < e->n_oq_new && rc == 0; k++)
        rc = oq_cand_add(e, e->oq_new[k], true);
    for (size_t k = 0; blocked && k < e->n_oq_blocked && rc == 0; k++)
        rc = oq_cand_add(e, e->oq_blocked[k], true);
    for (size_t k = 0; k < e->n_gained && rc == 0; k++) {
        size_t m = e->gained[k];
        if (!lt_cluster_online(e->cluster, m))
            continue;
        struct lt_res f = lt_cluster_free_res(e->cluster, m);
        for (unsigned p = 0; p < SIM_N_PRIO && rc == 0; p++)
            for (uint32_t s = sq_find(&e->q, p, 0, &f); s != SQ_NONE && rc == 0;
                 s = sq_find(&e->q, p, s + 1, &f))
                rc = oq_cand_add(e, sq_item(&e->q, p, s), false);
    }
    if (rc < 0)
        return rc;
    for (size_t k = e->qcand.n / 2; k-- > 0;)
        cand_heap_down(e, &e->qcand, k);
    return 0;
}

/* Time-varying orders: every queued task's key is recomputed (at most every
 * --reprioritise), and the heap rebuilt. */
static void oq_rekey(struct engine *e)
{
    if (e->cfg->order == NULL || !lt_qorder_time_varying(&e->order) || e->oq.n == 0 ||
        (e->now - e->last_rekey < e->cfg->reprioritise_us && e->last_rekey != T_INF) ||
        e->now == e->last_rekey)
        return;
    e->last_rekey = e->now;
    for (size_t k = 0; k < e->oq.n; k++)
        oq_key(e, e->oq.a[k].live, &e->oq.a[k]);
    for (size_t k = e->oq.n / 2; k-- > 0;)
        oq_heap_down(e, &e->oq, k);
}

/* Remembered requests that fit nowhere during one dispatch (free room only shrinks within
 * it, so a request asking at least as much fits nowhere either). */
#define OQ_FAILS 8

static bool oq_failed(const struct lt_res *fails, size_t n, const struct lt_res *req)
{
    for (size_t k = 0; k < n && k < OQ_FAILS; k++)
        if (res_le(&fails[k], req))
            return true;
    return false;
}

/* The ordered queue's state, when the configuration asks for it (refused with preemption). */
static int oq_setup(struct engine *e)
{
    const struct sim_replay_config *cfg = e->cfg;
    e->om = cfg->order != NULL || cfg->backfill != SIM_BACKFILL_GREEDY;
    if (!e->om)
        return 0;
    if (cfg->preempt != SIM_PREEMPT_NONE)
        return lt_err_set(e->err, LT_EINVAL, 0, 0,
                          "bad replay configuration: preemption with a queue order or backfill "
                          "other than priority and greedy is not supported");
    if (cfg->backfill > SIM_BACKFILL_EASY || !(cfg->estimate_cv >= 0.0) ||
        !isfinite(cfg->estimate_cv) || cfg->reprioritise_us < 0)
        return lt_err_set(e->err, LT_EINVAL, 0, 0, "bad replay configuration: queue options");
    if (cfg->order != NULL) {
        e->order = *cfg->order;
        e->order.n_min = 0x1p-10; /* the trace's granularity (spec 1.4 rule 4) */
        e->sla_order = lt_qorder_uses_sla(cfg->order);
    }
    if (e->sla_order && cfg->annot == NULL)
        return lt_err_set(e->err, LT_EINVAL, 0, 0,
                          "bad replay configuration: an SLA order without SLAs (annot)");
    e->last_rekey = T_INF;
    lt_rng_init(&e->qrng, cfg->seed, LT_RNG_ESTIMATE);
    size_t n = lt_cluster_size(e->cluster);
    e->gained_mark = lt_calloc(n ? n : 1, sizeof(*e->gained_mark));
    e->rsv_mark = lt_calloc(n ? n : 1, sizeof(*e->rsv_mark));
    if (cfg->backfill == SIM_BACKFILL_EASY) {
        if ((e->mend = lt_calloc(n ? n : 1, sizeof(*e->mend))) == NULL)
            return oom(e);
        for (size_t m = 0; m < n; m++)
            e->mend[m] = T_INF;
    }
    e->rsv_head = NIL;
    e->rsv_m = LT_NO_MACHINE;
    e->rsv_epoch = 1;
    return e->gained_mark && e->rsv_mark ? 0 : oom(e);
}

/* EASY: the reservation for head (oq_reserve), remembered as the one tasks held back now
 * wait for. */
static int oq_reserve_now(struct engine *e, uint32_t head, size_t *ms, int64_t *ts,
                          struct lt_res *extra)
{
    int rc = oq_reserve(e, head, ms, ts, extra);
    e->blk_head = head;
    e->blk_m = *ms;
    e->blk_ts = *ts;
    e->blk_extra = *extra;
    return rc;
}

/* EASY: the policy chose the reserved machine ms for candidate l. It may start there if it
 * ends by the shadow time ts or fits in the room *extra left beside the head then (which it
 * takes); else *m becomes another machine where it fits, or LT_NO_MACHINE: it is held back. */
static int oq_on_reserved(struct engine *e, uint32_t l, size_t ms, int64_t ts, struct lt_res *extra,
                          size_t *m)
{
    const struct live *t = &e->live[l];
    if (t->outcome != TR_N_TYPES && e->ol[l].est <= ts - e->now)
        return 0;
    if (res_le(&t->req, extra)) {
        extra->cpu -= t->req.cpu;
        extra->mem -= t->req.mem;
        extra->disk -= t->req.disk;
        return 0;
    }
    int rc = oq_choose_avoiding(e, l, ms, m);
    if (rc == 0 && *m == LT_NO_MACHINE)
        rc = oq_push_list(e, &e->oq_blocked, &e->n_oq_blocked, &e->cap_oq_blocked, l);
    return rc;
}

/* The dispatch, once per instant at which something changed (docs/simulator.md, "Queue
 * orders and backfill"). none and easy: the first queued task starts where the policy
 * chooses while it fits somewhere; the first that fits nowhere is the head. none stops
 * there. easy reserves for the head (oq_reserve) and then, like greedy, goes through the
 * candidates in queue order, starting each one the policy finds a machine for; under easy a
 * candidate goes on the reserved machine only if it ends by the shadow time or fits in the
 * room left beside the head then, else on another machine if one fits, else it waits. */
static int oq_dispatch(struct engine *e)
{
    int rc = 0;
    size_t m, ms = LT_NO_MACHINE;
    int64_t ts = T_INF;
    struct lt_res extra = {0, 0, 0}, fails[OQ_FAILS];
    size_t n_fails = 0;
    bool reserved = false;
    uint32_t head = NIL;

    e->oq_pending = false;
    e->stamp++;
    oq_rekey(e);
    if (e->cfg->backfill != SIM_BACKFILL_GREEDY) {
        while (e->oq.n > 0) {
            uint32_t l = e->oq.a[0].live;
            if ((rc = oq_choose(e, l, &m)) < 0)
                return rc;
            if (m == LT_NO_MACHINE) {
                head = l;
                break;
            }
            if ((rc = oq_start(e, l, m)) < 0)
                return rc;
        }
    }
    /* Tasks held back by the same reservation as before stay held back (time only makes it
     * harder to end by the shadow time; another machine that gained room finds them) */
    bool carry = false;
    if (head != NIL && e->n_oq_blocked > 0) {
        uint32_t h0 = e->blk_head;
        size_t m0 = e->blk_m;
        int64_t t0 = e->blk_ts;
        struct lt_res x0 = e->blk_extra;
        if ((rc = oq_reserve_now(e, head, &ms, &ts, &extra)) < 0)
            return rc;
        reserved = true;
        carry = h0 == head && m0 == ms && t0 == ts && memcmp(&x0, &extra, sizeof(x0)) == 0;
    }
    e->qcand.n = 0;
    if (e->cfg->backfill != SIM_BACKFILL_NONE && e->oq.n > 0 && (rc = oq_candidates(e, !carry)) < 0)
        return rc;
    bool room = e->qcand.n > 0 && oq_gained_room(e), kept_any = false;
    struct lt_res bfails[OQ_FAILS];
    size_t n_bfails = 0;
    e->n_oq_new = 0;
    if (!carry)
        e->n_oq_blocked = 0;
    while (e->qcand.n > 0) {
        if (!room && !kept_any) { /* the rest fit nowhere unless new or held back */
            oq_cand_keep_any(e);
            kept_any = true;
            if (e->qcand.n == 0)
                break;
        }
        uint32_t l = cand_heap_pop(e, &e->qcand).live;
        const struct live *t = &e->live[l];
        if (e->ol[l].pos == NIL || l == head || oq_failed(fails, n_fails, &t->req))
            continue;
        if (reserved && oq_failed(bfails, n_bfails, &t->req) &&
            !(t->outcome != TR_N_TYPES && e->ol[l].est <= ts - e->now)) {
            /* it fits at most where a held-back smaller request fitted: held back too */
            if ((rc = oq_push_list(e, &e->oq_blocked, &e->n_oq_blocked, &e->cap_oq_blocked, l)) < 0)
                return rc;
            continue;
        }
        if ((rc = oq_choose(e, l, &m)) < 0)
            return rc;
        if (m == LT_NO_MACHINE) {
            fails[n_fails++ % OQ_FAILS] = t->req;
            continue;
        }
        if (head != NIL && !reserved) {
            if ((rc = oq_reserve_now(e, head, &ms, &ts, &extra)) < 0)
                return rc;
            reserved = true;
        }
        if (head != NIL && m == ms) {
            if ((rc = oq_on_reserved(e, l, ms, ts, &extra, &m)) < 0)
                return rc;
            if (m == LT_NO_MACHINE) {
                bfails[n_bfails++ % OQ_FAILS] = t->req;
                continue;
            }
        }
        if ((rc = oq_start(e, l, m)) < 0)
            return rc;
        room = room && oq_gained_room(e);
    }
    e->n_gained = 0;
    return 0;
}

/* Ends the run of running task l (completion, kill or requeue): frees its machine. */
static int stop_run(struct engine *e, uint32_t l, size_t *machine)
{
    struct live *t = &e->live[l];
    heap_remove(e, l);
    *machine = t->machine;
    int rc = lt_cluster_remove(e->cluster, t->pid, e->err);
    if (rc == 0) {
        e->ask_run.cpu -= t->ask.cpu;
        e->ask_run.mem -= t->ask.mem;
        e->ask_run.disk -= t->ask.disk;
        if (lt_cluster_n_placements(e->cluster) == 0) /* exactly 0: no drift */
            e->ask_run = (struct lt_res){0, 0, 0};
    }
    if (rc == 0 && e->prio_sum) {
        struct lt_res *ps = &e->prio_sum[*machine * SIM_N_PRIO];
        if (lt_cluster_n_tasks(e->cluster, *machine) == 0) { /* exactly 0: no drift */
            memset(ps, 0, SIM_N_PRIO * sizeof(*ps));
        } else {
            ps[t->prio].cpu -= t->req.cpu;
            ps[t->prio].mem -= t->req.mem;
            ps[t->prio].disk -= t->req.disk;
        }
    }
    if (rc == 0)
        room_changed(e, *machine);
    return rc;
}

/* max(1, flow / max(run, SIM_BSLD_TAU_US)), the bounded slowdown. */
static double bsld(int64_t flow, int64_t run)
{
    double s = (double)flow / (double)(run > SIM_BSLD_TAU_US ? run : SIM_BSLD_TAU_US);
    return s > 1.0 ? s : 1.0;
}

/* Live task l completes now (FINISH): the books of its job, and its bounded slowdown. */
static void job_done(struct engine *e, uint32_t l)
{
    const struct live *t = &e->live[l];
    struct job_slot *js = job_get(e, e->rec[t->rec].job_id); /* present since the task arrived */
    int64_t run = e->now - t->start;

    js->completed++;
    js->last_end = e->now;
    if (run > js->max_run)
        js->max_run = run;
    e->res->bsld_sum += bsld(e->now - t->arrival, run);
}

/* ---- preemption (--preempt; docs/simulator.md, "Preemption") ------------------------------ */

static const char *const preempt_names[] = {"none", "bands", "priority", "prod"};

const char *sim_preempt_name(enum sim_preempt mode)
{
    return preempt_names[mode];
}

int sim_preempt_parse(const char *what, const char *s, enum sim_preempt *mode, struct lt_err *err)
{
    for (size_t k = 0; k < sizeof(preempt_names) / sizeof(preempt_names[0]); k++)
        if (strcmp(s, preempt_names[k]) == 0) {
            *mode = (enum sim_preempt)k;
            return 0;
        }
    return lt_err_set(err, LT_EINVAL, 0, 0, "%s: '%.60s' is not none, bands, priority or prod",
                      what, s);
}

/* Modes that see a task's band, not its priority: who may evict whom, and the victims' order. */
static bool pre_by_band(const struct engine *e)
{
    return e->cfg->preempt == SIM_PREEMPT_BANDS || e->cfg->preempt == SIM_PREEMPT_PROD;
}

/* The eviction threshold of a task of priority p: it may evict priorities < thr (0: none). */
static int pre_threshold(const struct engine *e, int p)
{
    if (e->cfg->preempt == SIM_PREEMPT_PROD)
        return sim_band(p) == 2 ? 9 : 0;
    if (e->cfg->preempt == SIM_PREEMPT_BANDS)
        return sim_band(p) == 2 ? 9 : sim_band(p) == 1 ? 2 : 0;
    return p < PT_MAX ? p : PT_MAX; /* production never evicts production */
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

/* Machine m's leaf in every tree (on: online; free: its free room), and the maxima above it
 * (up to the first node that does not change). */
static void pre_touch(struct engine *e, size_t m, bool on, const struct lt_res *free)
{
    struct lt_res f = *free;
    const struct lt_res *ps = &e->prio_sum[m * SIM_N_PRIO];
    int p = 0;
    for (size_t k = 0; k < e->n_pt; k++) {
        struct ptree *t = &e->pt[k];
        for (; p < t->thr; p++) { /* thresholds increase with k: the sums accumulate */
            f.cpu += ps[p].cpu;
            f.mem += ps[p].mem;
            f.disk += ps[p].disk;
        }
        size_t i = t->leaves + m;
        struct lt_res v = on ? f : (struct lt_res){-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
        const struct lt_res *o = &t->mx[i];
        if (v.cpu > o->cpu || v.mem > o->mem || v.disk > o->disk)
            t->grown++;
        t->mx[i] = v;
        for (i /= 2; i >= 1; i /= 2) {
            const struct lt_res *a = &t->mx[2 * i], *b = &t->mx[2 * i + 1];
            struct lt_res n = {dmax(a->cpu, b->cpu), dmax(a->mem, b->mem), dmax(a->disk, b->disk)};
            if (memcmp(&n, &t->mx[i], sizeof(n)) == 0)
                break; /* the maxima above are unchanged too (bitwise equal) */
            t->mx[i] = n;
        }
    }
}

/* The first machine >= from whose leaf is >= req, or LT_NO_MACHINE. */
static size_t pt_find(const struct ptree *t, size_t node, size_t lo, size_t hi, size_t from,
                      const struct lt_res *req)
{
    if (hi <= from || !res_ge(&t->mx[node], req))
        return LT_NO_MACHINE;
    if (hi - lo == 1)
        return lo;
    size_t mid = lo + (hi - lo) / 2;
    size_t r = pt_find(t, 2 * node, lo, mid, from, req);
    return r != LT_NO_MACHINE ? r : pt_find(t, 2 * node + 1, mid, hi, from, req);
}

/* The trees of the thresholds --preempt uses, all machines offline. */
static int pre_setup(struct engine *e)
{
    size_t n = lt_cluster_size(e->cluster), leaves = 1;
    if (e->cfg->preempt == SIM_PREEMPT_NONE)
        return 0;
    while (leaves < n)
        leaves *= 2;
    e->prio_sum = lt_calloc(n * SIM_N_PRIO, sizeof(*e->prio_sum));
    if (!e->prio_sum)
        return oom(e);
    for (int thr = 1; thr <= PT_MAX; thr++) {
        if (pre_by_band(e) && thr != 2 && thr != 9) /* prod: production tries free first */
            continue;
        struct ptree *t = &e->pt[e->n_pt++];
        t->thr = thr;
        t->leaves = leaves;
        t->mx = lt_malloc(2 * leaves * sizeof(*t->mx));
        if (!t->mx)
            return oom(e);
        for (size_t i = 0; i < 2 * leaves; i++)
            t->mx[i] = (struct lt_res){-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
        t->fail_at = UINT64_MAX;
    }
    lt_rng_init(&e->erng, e->cfg->seed, LT_RNG_EVICTION);
    lt_rng_init(&e->prng, e->cfg->seed, LT_RNG_PREEMPT);
    e->evict = e->cfg->evict ? e->cfg->evict : lt_evict_find("mrs", e->err);
    return e->evict ? 0 : e->err->code;
}

/* The running tasks of machine m as lt_victims_choose's candidates (bands: priorities mapped
 * to their band), their live entries in lv. Returns the count, or SIZE_MAX out of memory. */
static size_t pre_candidates(struct engine *e, size_t m, uint32_t **lv, size_t *cap_lv)
{
    size_t n = 0;
    for (size_t p = lt_cluster_first_placement(e->cluster, m); p != LT_NO_MACHINE;
         p = lt_cluster_next_placement(e->cluster, p)) {
        uint32_t l = (uint32_t)lt_cluster_placement_task(e->cluster, p)->id;
        const struct live *t = &e->live[l];
        if (LT_VEC_RESERVE(e->cand, e->cap_cand, n + 1) != 0 ||
            LT_VEC_RESERVE(*lv, *cap_lv, n + 1) != 0)
            return SIZE_MAX;
        e->cand[n] =
            (struct lt_victim_cand){.id = (int64_t)t->seq,
                                    .priority = pre_by_band(e) ? sim_band(t->prio) : t->prio,
                                    .start_us = t->start,
                                    .req = t->req,
                                    .sticky = false};
        (*lv)[n++] = l;
    }
    return n;
}

/* Evicts victims vl[0..n-1] (running) for preemptor l: each requeued, its run wasted work. */
static int pre_evict(struct engine *e, uint32_t l, const uint32_t *vl, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        struct live *v = &e->live[vl[k]];
        size_t m;
        int rc = stop_run(e, vl[k], &m);
        if (rc < 0)
            return rc;
        e->res->wasted_work_s += (double)(e->now - v->start) / (double)US;
        e->res->requeues++;
        e->res->preemptions++;
        e->res->preempt_by_prio[e->live[l].prio][v->prio]++;
        e->res->preempt_t0 += e->t0_phase || e->deferring;
        e->res->preempt_repeat += v->requeues > 0;
        e->res->preempt_cascade += e->live[l].requeues > 0;
        v->requeues++;
        v->state = L_QUEUED;
    }
    return 0;
}

/* The naive search pt_find replaces (check_index): the first online machine >= from where
 * free + the requests of the tasks of priority < thr running there, summed from the cluster's
 * placements, are >= req. */
static size_t pre_scan(const struct engine *e, int thr, size_t from, const struct lt_res *req)
{
    for (size_t m = from; m < lt_cluster_size(e->cluster); m++) {
        if (!lt_cluster_online(e->cluster, m))
            continue;
        struct lt_res f = lt_cluster_free_res(e->cluster, m);
        for (size_t p = lt_cluster_first_placement(e->cluster, m); p != LT_NO_MACHINE;
             p = lt_cluster_next_placement(e->cluster, p)) {
            const struct live *t = &e->live[lt_cluster_placement_task(e->cluster, p)->id];
            if (t->prio < thr) {
                f.cpu += t->req.cpu;
                f.mem += t->req.mem;
                f.disk += t->req.disk;
            }
        }
        /* The tree sums in another order: a margin far below pre_need's. */
        if (f.cpu >= req->cpu - 1e-12 && f.mem >= req->mem - 1e-12 && f.disk >= req->disk - 1e-12)
            return m;
    }
    return LT_NO_MACHINE;
}

/* pt_find from `from`, or nothing when the remembered failure covers req; checked against
 * pre_scan with check_index (*bad: they differ). */
static size_t pre_find(struct engine *e, struct ptree *t, size_t from, const struct lt_res *req,
                       bool *bad)
{
    bool memo = t->fail_at == t->grown && res_ge(req, &t->fail); /* no machine at all */
    size_t m = memo ? LT_NO_MACHINE : pt_find(t, 1, 0, t->leaves, from, req);
    if (m == LT_NO_MACHINE && from == 0) {
        t->fail_at = t->grown;
        t->fail = *req;
    }
    if (CHECK_SOLE || e->cfg->check_index) {
        size_t want = pre_scan(e, t->thr, from, req);
        *bad = want != m;
    }
    return m;
}

/* The room a preemptor needs, as lt_victims_choose's request: every component of its request
 * (> 0, so lt_victims_choose checks each: one it does not ask for may stay overfull, and the
 * placement would then fail), and a margin for the rounding of the machine's allocation, which the
 * victims' removal recomputes. The trees are searched with it too, so that a machine they find is
 * rejected only when the eviction policy cannot free the room (sticky tasks aside, never). */
static struct lt_res pre_need(const struct lt_res *req)
{
    return (struct lt_res){req->cpu + 1e-9, req->mem + 1e-9, req->disk + 1e-9};
}

/* Victims on machine m for l by the eviction policy, among the tasks of priority < t->thr
 * (lt_victims_choose: lowest priority first, a minimal set): their live entries are
 * e->vlive[e->vout[0..*nv-1]]; *nv is 0 when evicting cannot make l fit m in every resource. */
static int pre_on_machine(struct engine *e, uint32_t l, const struct ptree *t, size_t m, size_t *nv)
{
    const struct lt_res need = pre_need(&e->live[l].req);
    const int prio = pre_by_band(e) ? (t->thr == 2 ? 1 : 2) : t->thr;
    bool fits = false;
    size_t n = pre_candidates(e, m, &e->vlive, &e->cap_vlive);
    *nv = 0;
    if (n == SIZE_MAX || LT_VEC_RESERVE(e->vout, e->cap_vout, n) != 0)
        return oom(e);
    struct lt_res cap = lt_cluster_cap(e->cluster, m);
    int rc = lt_victims_choose(e->evict, &cap, &need, prio, e->cand, n, &e->erng, e->vout, nv,
                               &fits, e->err);
    if (rc < 0 || !fits)
        *nv = 0; /* *nv == 0 with fits: l fits m already, which the caller's choose denied */
    return rc;
}

/* Evicts the nv victims pre_on_machine chose from machine m for l, starts l there, retries the
 * queue on m and re-places the victims (PQ_NO_PREEMPT: no cascade). */
static int pre_commit(struct engine *e, uint32_t l, size_t m, size_t nv)
{
    uint32_t *victims = lt_malloc(nv * sizeof(*victims));
    int rc;
    if (!victims)
        return oom(e);
    for (size_t k = 0; k < nv; k++)
        victims[k] = e->vlive[e->vout[k]];
    if ((rc = pre_evict(e, l, victims, nv)) == 0 && (rc = start(e, l, m, 0)) == 0 &&
        (rc = retry_queue(e, m)) == 0) {
        e->res->preempt_events++;
        for (size_t k = 0; k < nv && rc == 0; k++)
            if (e->live[victims[k]].state == L_QUEUED) /* not started by retry_queue */
                rc = place_or_queue(e, victims[k], PQ_NO_PREEMPT);
    }
    lt_free(victims);
    return rc;
}

/* l fits nowhere (docs/simulator.md, "Preemption"): unless it fits no machine even empty,
 * find the first machine, in index order from a random machine on (wrapping round), where
 * evicting tasks of the lowest priorities makes it fit: the trees from the lowest threshold up
 * to l's own, so that the victims' priorities are as low as they can be (Borg's scoring
 * minimizes them); then evict and start l there. *done: l started. */
static int preempt(struct engine *e, uint32_t l, bool *done)
{
    const int thr = pre_threshold(e, e->live[l].prio);
    const struct lt_res req = pre_need(&e->live[l].req);

    *done = false;
    if (thr == 0 || !fits_some_machine(e, &req))
        return 0;
    /* Borg examines machines in random order (Verma et al. 2015, section 3.4): one draw per
     * preemption, the same start for every threshold. */
    const size_t origin = (size_t)lt_rng_below(&e->prng, lt_cluster_size(e->cluster));
    for (size_t k = 0; k < e->n_pt && e->pt[k].thr <= thr; k++) {
        struct ptree *t = &e->pt[k];
        for (size_t from = origin, wrapped = 0;;) {
            bool bad = false;
            size_t m = pre_find(e, t, from, &req, &bad), nv;
            if (bad)
                return lt_err_set(e->err, LT_EINVAL, 0, 0,
                                  "replay: preemption's index and a scan disagree (threshold %d, "
                                  "from machine %zu)",
                                  t->thr, from);
            if (m == LT_NO_MACHINE && !wrapped && origin > 0) {
                wrapped = 1; /* round to the machines before origin */
                from = 0;
                continue;
            }
            if (m == LT_NO_MACHINE || (wrapped && m >= origin))
                break;
            from = m + 1;
            int rc = pre_on_machine(e, l, t, m, &nv);
            if (rc < 0)
                return rc;
            if (nv > 0) {
                *done = true;
                return pre_commit(e, l, m, nv);
            }
        }
    }
    return 0;
}

static int on_completion(struct engine *e)
{
    uint32_t l = e->heap.a[0].live;
    struct live *t = &e->live[l];
    size_t m;
    int rc;

    e->now = e->heap.a[0].time;
    if ((rc = stop_run(e, l, &m)) < 0)
        return rc;
    if (t->outcome == TR_FINISH) {
        if (e->collect) {
            int b = sim_band(t->prio);
            if (LT_VEC_RESERVE(e->runs[b], e->cap_runs[b], e->n_runs[b] + 1) != 0)
                return oom(e);
            e->runs[b][e->n_runs[b]++] = e->now - t->start;
        }
        e->res->tasks_completed++;
        job_done(e, l);
        if (t->rec >= e->inj_rec0) /* a task of the injected job (NIL: none) */
            inj_on_end(e);
        e->res->flow_time_s += (double)(e->now - t->arrival) / (double)US;
        e->res->useful_work_s += (double)(e->now - t->start) / (double)US;
    } else {
        e->res->tasks_failed++;
    }
    task_leave(e, l, t->outcome, NULL, lt_cluster_name(e->cluster, m));
    return retry_queue(e, m);
}

/* The incarnation of trace machine id that is online now, or LT_NO_MACHINE (not kept, or not
 * online). */
static size_t online_incarnation(const struct engine *e, uint64_t id)
{
    const uint64_t *hit = bsearch(&id, e->primary_ids, e->n_primary, sizeof(uint64_t), cmp_u64);
    if (hit && lt_cluster_online(e->cluster, (size_t)(hit - e->primary_ids)))
        return (size_t)(hit - e->primary_ids);
    for (size_t x = e->n_primary; x < e->n_inc; x++)
        if (e->inc[x].id == id && lt_cluster_online(e->cluster, x))
            return x;
    return LT_NO_MACHINE;
}

/* --initial-state trace, a task running at t = 0: its trace machine (LT_NO_MACHINE when that
 * machine is not simulated) and, when its t = 0 SCHEDULE row has requests, those. */
static size_t t0_machine(struct engine *e, size_t h, struct lt_res *req, bool *has_req)
{
    const struct t0place *p = t0_find(e, (uint32_t)h);
    *has_req = false;
    if (!p)
        return LT_NO_MACHINE;
    if (p->has_req) {
        *req = p->req;
        *has_req = true;
    }
    return online_incarnation(e, p->machine);
}

static int arrive(struct engine *e, size_t h, const struct crow *row, const struct lt_res *rq)
{
    struct task_rec *r = &e->rec[h];
    struct lt_res req = rq ? *rq : (struct lt_res){0, 0, 0};
    bool t0_trace =
        e->t0_phase && (r->flags & F_SCHED_AT_0) && e->cfg->initial_state == SIM_INIT_TRACE;
    size_t m0 = LT_NO_MACHINE;

    r->flags |= F_ARRIVED;
    if (t0_trace) {
        bool has_req;
        struct lt_res sreq;
        m0 = t0_machine(e, h, &sreq, &has_req);
        if (has_req) { /* the requests it ran with (docs/simulator.md, "Initial state") */
            req = sreq;
            rq = &req;
        }
    }
    if (!rq) {
        struct reqfix key = {.id = (uint32_t)h};
        const struct reqfix *fix =
            e->n_fix ? bsearch(&key, e->fix, e->n_fix, sizeof(*e->fix), cmp_reqfix) : NULL;
        if (!fix) {
            e->res->tasks_no_requests++;
            r->flags |= F_DONE;
            return 0;
        }
        req = fix->req;
    }
    e->res->tasks_submitted++;
    struct job_slot *js = job_get(e, r->job_id);
    if (!js)
        return oom(e);
    if (js->arrived++ == 0)
        js->first_arrival = row->time;
    const struct lt_res ask = req; /* req becomes what its machine accounts (--overcommit) */
    if (!e->oc_none)
        req = sim_overcommit_apply(&e->oc, row->priority, &req);
    if (m0 == LT_NO_MACHINE && !fits_some_machine(e, &req)) {
        e->res->tasks_unplaceable++;
        r->flags |= F_DONE;
        task_csv_row(e, r, row->priority, row->sched_class, &ask, row->time, -1, -1, "unplaceable",
                     0, "");
        return 0;
    }
    uint32_t l = live_alloc(e);
    if (l == NIL)
        return oom(e);
    struct live *t = &e->live[l];
    memset(t, 0, sizeof(*t));
    t->rec = (uint32_t)h;
    t->heap_pos = NIL;
    t->prio = row->priority < SIM_N_PRIO ? row->priority : SIM_N_PRIO - 1;
    t->sched_class = (uint8_t)(row->sched_class < 0 ? 0 : row->sched_class);
    t->seq = (uint32_t)e->seq++;
    t->arrival = row->time;
    t->first_start = -1;
    t->req = req;
    t->ask = ask;
    t->outcome = TR_N_TYPES;
    t->demand = -1;
    if (r->flags & F_ENDED) {
        t->outcome = r->end_type;
        if (r->end_type == TR_FINISH || r->end_type == TR_FAIL)
            t->demand = r->u.t;
        else if (r->end_type == TR_KILL || r->end_type == TR_LOST)
            t->end_time = r->u.t;
        else if (r->end_type == TR_EVICT)
            t->outcome = TR_N_TYPES;
    }
    r->u.live = l;
    if (e->om && oq_live_init(e, l) < 0)
        return LT_ENOMEM;
    int rc_sla =
        e->cfg->annot != NULL ? sla_live_init(e, l, !(t0_trace && m0 != LT_NO_MACHINE)) : 0;
    if (rc_sla < 0)
        return rc_sla;
    if (sq_add(&e->q, t->prio, l, &t->slot) != 0)
        return oom(e);
    if (t0_trace && m0 != LT_NO_MACHINE) { /* where the trace ran it, even beyond its room */
        e->res->tasks_t0_trace++;
        if (!lt_cluster_fits(e->cluster, m0, &t->req))
            e->res->tasks_t0_overfull++;
        return start(e, l, m0, LT_PLACE_FORCE);
    }
    if (t0_trace)
        e->res->tasks_t0_moved++;
    /* Pending at t = 0 (and with --initial-state trace, running on a machine not simulated):
     * placed once every task running at t = 0 is. */
    if (e->t0_phase && (t0_trace || !(r->flags & F_SCHED_AT_0))) {
        if (LT_VEC_RESERVE(e->deferred, e->cap_deferred, e->n_deferred + 1) != 0)
            return oom(e);
        e->deferred[e->n_deferred++] = l;
        t->state = L_DEFERRED;
        return 0;
    }
    return place_or_queue(e, l, 0);
}

static int on_kill(struct engine *e, size_t h, uint8_t type)
{
    struct task_rec *r = &e->rec[h];
    uint32_t l = r->u.live;
    struct live *t = &e->live[l];
    size_t m = SIZE_MAX;
    int rc;

    if (t->state == L_RUNNING) {
        if ((rc = stop_run(e, l, &m)) < 0)
            return rc;
        task_leave(e, l, type, NULL, lt_cluster_name(e->cluster, m));
    } else {
        if (t->state == L_QUEUED)
            queue_unlink(e, l);
        else { /* deferred at t = 0: drop it from the list */
            for (size_t k = 0; k < e->n_deferred; k++)
                if (e->deferred[k] == l)
                    e->deferred[k] = NIL;
        }
        task_leave(e, l, type, NULL, "");
    }
    if (type == TR_KILL)
        e->res->tasks_killed++;
    else
        e->res->tasks_lost++;
    return m == SIZE_MAX ? 0 : retry_queue(e, m);
}

static int on_task_row(struct engine *e, const struct crow *row, const struct lt_res *req)
{
    uint32_t h = row->id;
    struct task_rec *r = &e->rec[h];
    if (r->flags & F_ORPHAN) {
        e->res->orphan_rows++;
        return 0;
    }
    if (!(r->flags & F_ARRIVED)) {
        if (e->no_arrivals) {
            e->res->ignored_rows++;
            return 0;
        }
        return arrive(e, h, row, req);
    }
    /* Arrived and not done: r->u.live is the task's live entry. */
    if ((row->type == TR_KILL || row->type == TR_LOST) && (r->flags & F_ENDED) &&
        r->end_type == row->type && !(r->flags & F_DONE) &&
        e->live[r->u.live].end_time == row->time)
        return on_kill(e, h, row->type);
    e->res->ignored_rows++;
    return 0;
}

/* Machine incarnation k leaves (REMOVE, or its capacity changes): requeue its tasks. */
static int machine_down(struct engine *e, size_t k)
{
    uint32_t *moved = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!lt_cluster_online(e->cluster, k))
        return 0;
    for (size_t p = lt_cluster_first_placement(e->cluster, k); p != LT_NO_MACHINE;) {
        size_t next = lt_cluster_next_placement(e->cluster, p);
        uint32_t l = (uint32_t)lt_cluster_placement_task(e->cluster, p)->id;
        size_t m;
        if (LT_VEC_RESERVE(moved, cap, n + 1) != 0) {
            lt_free(moved);
            return oom(e);
        }
        moved[n++] = l;
        if ((rc = stop_run(e, l, &m)) < 0) {
            lt_free(moved);
            return rc;
        }
        struct live *t = &e->live[l];
        e->res->wasted_work_s += (double)(e->now - t->start) / (double)US;
        e->res->requeues++;
        t->requeues++;
        t->state = L_QUEUED;
        p = next;
    }
    if ((rc = lt_cluster_set_online(e->cluster, k, false, e->err)) < 0) {
        lt_free(moved);
        return rc;
    }
    room_changed(e, k);
    e->online--;
    /* Re-place in queue order: priority, then first arrival. */
    for (size_t a = 1; a < n; a++) {
        uint32_t x = moved[a];
        size_t b = a;
        while (b > 0 && (e->live[moved[b - 1]].prio < e->live[x].prio ||
                         (e->live[moved[b - 1]].prio == e->live[x].prio &&
                          queue_before(&e->live[x], &e->live[moved[b - 1]])))) {
            moved[b] = moved[b - 1];
            b--;
        }
        moved[b] = x;
    }
    for (size_t a = 0; a < n && rc == 0; a++)
        rc = place_or_queue(e, moved[a], 0);
    lt_free(moved);
    return rc;
}

static int machine_up(struct engine *e, size_t k)
{
    if (lt_cluster_online(e->cluster, k))
        return 0;
    int rc = lt_cluster_set_online(e->cluster, k, true, e->err);
    if (rc < 0)
        return rc;
    room_changed(e, k);
    e->online++;
    return retry_queue(e, k);
}

static int on_machine_row(struct engine *e, const struct mrow *m)
{
    if (m->inc == NIL || (e->dropped && e->dropped[m->inc]))
        return 0;
    size_t k = m->inc;
    switch (m->type) {
    case TR_M_ADD:
        return machine_up(e, k);
    case TR_M_REMOVE:
        return machine_down(e, k);
    default: /* UPDATE: switch incarnations when the capacity changed */
        break;
    }
    if (lt_cluster_online(e->cluster, k))
        return 0;
    /* Another incarnation of this machine online: the primary one or one of the few extras. */
    uint64_t *hit = bsearch(&m->id, e->primary_ids, e->n_primary, sizeof(uint64_t), cmp_u64);
    size_t j = hit ? (size_t)(hit - e->primary_ids) : SIZE_MAX;
    for (size_t x = e->n_primary; j == SIZE_MAX || j == k || !lt_cluster_online(e->cluster, j);) {
        if (x >= e->n_inc)
            return 0;
        j = e->inc[x].id == m->id ? x : SIZE_MAX;
        x++;
    }
    int rc = machine_down(e, j);
    if (rc < 0)
        return rc;
    return machine_up(e, k);
}

static int sample(struct engine *e, int64_t ts)
{
    static const double pct[SIM_N_FRAG] = SIM_FRAG_PCT;
    struct sim_replay_result *res = e->res;
    double alloc[3], cap[3], util[3];
    const size_t *frag;
    struct lt_census cs;
    int rc = lt_cluster_census(e->cluster, pct, SIM_N_FRAG, &cs, e->err);

    if (rc < 0)
        return rc;
    alloc[0] = cs.alloc.cpu;
    alloc[1] = cs.alloc.mem;
    alloc[2] = cs.alloc.disk;
    cap[0] = cs.cap.cpu;
    cap[1] = cs.cap.mem;
    cap[2] = cs.cap.disk;
    frag = cs.frag;
    for (int d = 0; d < 3; d++)
        util[d] = cap[d] > 0 ? alloc[d] / cap[d] : 0.0;
    /* The requests running against the online capacity: util without --overcommit (up to
     * rounding), util times the factors with it. */
    const double asked[2] = {cap[0] > 0 ? e->ask_run.cpu / cap[0] : 0.0,
                             cap[1] > 0 ? e->ask_run.mem / cap[1] : 0.0};
    for (int d = 0; d < 2; d++) {
        e->sum_req[d] += asked[d];
        if (asked[d] > res->req_max[d])
            res->req_max[d] = asked[d];
    }
    size_t unused = cs.unused;
    if (e->q.active > res->queue_max)
        res->queue_max = e->q.active;
    res->samples++;
    e->sum_queue += (double)e->q.active;
    for (int d = 0; d < 3; d++)
        e->sum_util[d] += util[d];
    for (int x = 0; x < SIM_N_FRAG; x++)
        e->sum_frag[x] += (double)frag[x];
    e->sum_unused += (double)unused;
    if (e->ts_csv)
        fprintf(e->ts_csv,
                "%.0f,%zu,%zu,%zu,%.6f,%.6f,%.6f,%zu,%zu,%zu,%zu,%zu,%" PRIu64 ",%" PRIu64
                ",%.6f,%.6f\n",
                secs(ts), e->online, lt_cluster_n_placements(e->cluster), e->q.active, util[0],
                util[1], util[2], unused, frag[0], frag[1], frag[2], frag[3], res->tasks_completed,
                res->requeues, asked[0], asked[1]);
    return 0;
}

/* The end of t = 0: the deferred tasks go through the policy in trace order, those that ran at
 * t = 0 (--initial-state trace, on a machine not simulated) before those pending. */
static int run_deferred(struct engine *e)
{
    int rc = 0;
    e->t0_phase = false;
    e->deferring = true;
    for (int ran = 1; ran >= 0; ran--) {
        for (size_t k = 0; k < e->n_deferred && rc == 0; k++) {
            uint32_t l = e->deferred[k];
            if (l == NIL || ((e->rec[e->live[l].rec].flags & F_SCHED_AT_0) != 0) != (ran == 1))
                continue;
            rc = place_or_queue(e, l, 0);
        }
    }
    e->n_deferred = 0;
    e->deferring = false;
    /* Forced placements left machines beyond capacity: the cluster and the policy's index
     * must still be exact (once a run, O(machines)). */
    if (rc == 0 && e->cfg->initial_state == SIM_INIT_TRACE)
        rc = lt_cluster_check(e->cluster, e->err);
    return rc;
}

/* Where pass 2 takes its task_events rows from. */
struct row_source {
    struct cache_cursor cur; /* the cache, first */
    struct tr_reader *rd;    /* then the parts again, past the covered rows (NULL until then) */
    uint64_t rows;           /* window rows handed out by the second read (cache_rows before) */
    uint64_t calls;          /* rows returned, for the progress cadence */
};

/* Window rows pass 2 has reached, for the progress bar (estimated inside the cache). */
static uint64_t source_progress(const struct engine *e, const struct row_source *src)
{
    if (src->cur.pos < e->n_cache)
        return (uint64_t)((double)e->cache_rows * (double)src->cur.pos / (double)e->n_cache);
    return src->rd ? src->rows : e->cache_rows;
}

/* The next task_events row of pass 2: from the cache, then (when the cache budget ran out)
 * from a second read of the parts, past the covered rows. Returns 1, 0 at the end of the
 * window, or an error. */
static int next_task_row(struct engine *e, struct row_source *src, struct crow *out,
                         struct lt_res *req, bool *has_req)
{
    src->calls++;
    if (src->cur.pos < e->n_cache) {
        cache_next(e, &src->cur, out, req, has_req);
        return 1;
    }
    if (!e->cache_full || src->rows >= e->rows_window)
        return 0;
    if (!src->rd) {
        struct tr_opts o = {.skip_bad_lines = e->cfg->skip_bad_lines};
        src->rd = tr_open(e->cfg->trace_dir, TR_TASK_EVENTS, &o, e->err);
        if (!src->rd)
            return e->err->code ? e->err->code : LT_EIO;
    }
    struct tr_task_row row;
    for (;;) {
        int rc = tr_next(src->rd, &row, e->err);
        if (rc <= 0)
            return rc < 0 ? rc
                          : lt_err_set(e->err, LT_EIO, 0, 0, "task_events changed between passes");
        if ((tr_counts(src->rd)->rows & 0xffff) == 0)
            publish(e, 2, src->rd);
        if (tr_counts(src->rd)->rows > e->cache_rows)
            break;
    }
    uint32_t id = map_find(&e->map, e->rec, row.job_id, row.task_index);
    if (id == NIL)
        return lt_err_set(e->err, LT_EIO, 0, 0,
                          "task_events changed between passes (task %" PRIu64 "/%" PRIu32 ")",
                          row.job_id, row.task_index);
    out->time = row.time;
    out->id = id;
    out->type = row.type;
    out->priority = row.priority;
    out->sched_class = row.sched_class;
    *has_req = row.has_req;
    *req = (struct lt_res){row.cpu, row.mem, row.disk};
    src->rows = tr_counts(src->rd)->rows;
    return 1;
}

/* Where pass 2 is between two calls of pass2_run (the what-if snapshot stops it at an
 * instant and resumes it; docs/whatif.md). */
struct p2state {
    struct row_source src;
    struct crow row;
    struct lt_res req;
    bool have_row, has_req;
    bool exhausted; /* no event is left in the window */
    size_t mi;      /* next machine row */
    int64_t next_sample;
};

static void pass2_begin(struct engine *e, struct p2state *s)
{
    memset(s, 0, sizeof(*s));
    s->src.rows = e->cache_rows;
    s->next_sample = TRACE_ZERO_US;
    e->free_live = NIL;
    e->witness = NIL;
    e->t0_phase = true;
    e->now = 0;
    e->res->orphan_rows += e->cache_orphan; /* the rows the cache left out */
    e->res->ignored_rows += e->cache_ignored;
    if (e->cfg->progress) {
        e->cfg->progress->bytes_read = 0;
        e->cfg->progress->rows = 0;
        e->cfg->progress->pass = 2;
    }
}

/* Runs pass 2's events of time < before (T_INF: all; before > 0), or until e->halt is set
 * (the injected job started). s->exhausted says the window has no event left. */
static int pass2_run(struct engine *e, struct p2state *s, int64_t before)
{
    struct row_source src = s->src;
    struct crow row = s->row;
    struct lt_res req = s->req;
    bool have_row = s->have_row, has_req = s->has_req;
    size_t mi = s->mi;
    int64_t next_sample = s->next_sample;
    int rc = 0;

    for (;;) {
        if (!have_row) {
            rc = next_task_row(e, &src, &row, &req, &has_req);
            if (rc < 0)
                break;
            have_row = rc == 1;
            rc = 0;
            if (e->cfg->progress && (src.calls & 0x3fff) == 0 && e->rows_window) {
                uint64_t reached = source_progress(e, &src);
                e->cfg->progress->bytes_read = (uint64_t)((double)e->cfg->progress->bytes_total *
                                                          (double)reached / (double)e->rows_window);
                e->cfg->progress->rows = reached;
            }
        }
        int64_t t_task = have_row ? row.time : T_INF;
        int64_t t_mach =
            mi < e->n_mrows && e->mrows[mi].time <= e->t_end ? e->mrows[mi].time : T_INF;
        int64_t t_comp = e->heap.n && e->heap.a[0].time <= e->t_end ? e->heap.a[0].time : T_INF;
        int64_t t_row = t_task < t_mach ? t_task : t_mach;
        int64_t t_ev = t_row < t_comp ? t_row : t_comp;
        if (e->t0_phase && t_ev > 0) {
            if ((rc = run_deferred(e)) < 0)
                break;
            continue;
        }
        if (e->oq_pending && !e->t0_phase && t_ev > e->now) { /* the instant's events are in */
            if ((rc = oq_dispatch(e)) < 0)
                break;
            continue;
        }
        while (next_sample <= e->t_end && next_sample < t_ev && next_sample < before) {
            e->now = next_sample;
            if ((rc = sample(e, next_sample)) < 0)
                break;
            next_sample += e->cfg->interval_us;
        }
        s->exhausted = t_ev == T_INF;
        if (rc < 0 || t_ev == T_INF || t_ev >= before)
            break;
        if (e->cfg->progress)
            e->cfg->progress->sim_time_us = t_ev;
        if (t_comp <= t_row) {
            rc = on_completion(e);
        } else if (t_mach <= t_task) {
            e->now = t_mach;
            rc = on_machine_row(e, &e->mrows[mi++]);
        } else {
            e->now = t_task;
            rc = on_task_row(e, &row, has_req ? &req : NULL);
            have_row = false;
        }
        if (rc < 0 || e->halt)
            break;
    }
    s->src = src;
    s->row = row;
    s->req = req;
    s->have_row = have_row;
    s->has_req = has_req;
    s->mi = mi;
    s->next_sample = next_sample;
    return rc;
}

/* The window ends: what is still running or queued leaves. */
static void pass2_finish(struct engine *e)
{
    e->now = e->t_end;
    for (size_t l = 0; l < e->n_live; l++) {
        struct live *t = &e->live[l];
        const struct task_rec *tr = &e->rec[t->rec];
        if (tr->flags & F_DONE) /* a free entry: its last task left */
            continue;
        if (t->state == L_RUNNING)
            e->res->tasks_running_at_end++;
        else
            e->res->tasks_queued_at_end++;
        task_leave(e, (uint32_t)l, TR_N_TYPES, t->state == L_RUNNING ? "running" : "queued",
                   t->state == L_RUNNING ? lt_cluster_name(e->cluster, t->machine) : "");
    }
}

static int pass2(struct engine *e)
{
    struct p2state s;
    pass2_begin(e, &s);
    int rc = pass2_run(e, &s, T_INF);
    tr_close(s.src.rd);
    if (rc < 0)
        return rc;
    pass2_finish(e);
    return 0;
}

/* ---- outputs ------------------------------------------------------------------------------ */

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = lt_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static json_t *counts_json(enum tr_table t, const struct tr_counts *c)
{
    json_t *o = json_object();
    unsigned n = t == TR_MACHINE_EVENTS ? TR_M_N_TYPES : TR_N_TYPES;
    json_object_set_new(o, "rows", json_integer((json_int_t)c->rows));
    for (unsigned k = 0; k < n; k++)
        json_object_set_new(o, tr_type_name(t, k), json_integer((json_int_t)c->by_type[k]));
    json_object_set_new(o, "bad_lines", json_integer((json_int_t)c->bad_lines));
    json_object_set_new(o, "parts", json_integer((json_int_t)c->parts));
    return o;
}

static double q_s(const struct sim_hist *h, double q)
{
    return (double)sim_hist_quantile(h, q) / (double)US;
}

/* sum / n, or null when n is 0 (a mean of nothing). */
static json_t *per(double sum, uint64_t n)
{
    return n ? json_real(sum / (double)n) : json_null();
}

/* The censored quantiles of one priority (docs/simulator.md, "Waiting times"): over started
 * and never-started tasks (all_pQ_s, a lower bound; all_pQ_lower_bound says whether it is only
 * that) and Kaplan-Meier's estimate (km_pQ_s, null when more than 1 - Q never started). */
static void censored_json(json_t *o, const struct sim_wait_stats *ws)
{
    static const int qs[] = {50, 90, 99};
    uint64_t n = ws->hist.n + ws->censored.n;
    char key[32];

    json_object_set_new(o, "waiting_at_end", json_integer((json_int_t)ws->waiting_at_end));
    json_object_set_new(o, "censored_share",
                        json_real(n ? (double)ws->censored.n / (double)n : 0.0));
    for (int k = 0; k < 3; k++) {
        bool bound;
        uint64_t v = sim_hist_quantile_censored(&ws->hist, &ws->censored, qs[k] / 100.0, &bound);
        snprintf(key, sizeof(key), "all_p%d_s", qs[k]);
        json_object_set_new(o, key, json_real((double)v / US));
        snprintf(key, sizeof(key), "all_p%d_lower_bound", qs[k]);
        json_object_set_new(o, key, json_boolean(bound));
    }
    for (int k = 0; k < 3; k++) {
        uint64_t v;
        bool ok = sim_hist_km_quantile(&ws->hist, &ws->censored, qs[k] / 100.0, &v);
        snprintf(key, sizeof(key), "km_p%d_s", qs[k]);
        json_object_set_new(o, key, ok ? json_real((double)v / US) : json_null());
    }
}

static json_t *waiting_json(const struct sim_replay_result *res)
{
    json_t *w = json_object();
    for (int p = 0; p < SIM_N_PRIO; p++) {
        const struct sim_wait_stats *ws = &res->wait[p];
        if (ws->hist.n == 0 && ws->never_started == 0)
            continue;
        json_t *o = json_object();
        char key[8];
        snprintf(key, sizeof(key), "%d", p);
        json_object_set_new(o, "started", json_integer((json_int_t)ws->hist.n));
        json_object_set_new(o, "never_started", json_integer((json_int_t)ws->never_started));
        json_object_set_new(
            o, "mean_s",
            json_real(ws->hist.n ? (double)(ws->hist.sum / (long double)ws->hist.n) / US : 0.0));
        json_object_set_new(o, "p50_s", json_real(q_s(&ws->hist, 0.50)));
        json_object_set_new(o, "p90_s", json_real(q_s(&ws->hist, 0.90)));
        json_object_set_new(o, "p99_s", json_real(q_s(&ws->hist, 0.99)));
        json_object_set_new(o, "max_s", json_real((double)ws->hist.max / US));
        censored_json(o, ws);
        json_object_set_new(w, key, o);
    }
    return w;
}

/* Job metrics of the jobs all of whose tasks completed (docs/simulator.md, "Metrics"). */
static void jobs_json(json_t *jb, const struct sim_replay_result *res)
{
    const struct sim_hist *h = &res->jct;
    json_object_set_new(jb, "completion_time_mean_s",
                        h->n ? json_real((double)(h->sum / (long double)h->n) / US) : json_null());
    json_object_set_new(jb, "completion_time_p50_s", json_real(q_s(h, 0.50)));
    json_object_set_new(jb, "completion_time_p90_s", json_real(q_s(h, 0.90)));
    json_object_set_new(jb, "completion_time_max_s", json_real((double)h->max / US));
    json_object_set_new(jb, "bounded_slowdown_mean", per(res->job_bsld_sum, h->n));
}

/* summary.json's "initial_state" (docs/simulator.md, "Initial state"). */
static json_t *init_state_json(const struct sim_replay_config *cfg,
                               const struct sim_replay_result *res)
{
    json_t *is = json_object();
    json_object_set_new(is, "mode",
                        json_string(cfg->initial_state == SIM_INIT_TRACE ? "trace" : "repack"));
    json_object_set_new(is, "on_trace_machine", json_integer((json_int_t)res->tasks_t0_trace));
    json_object_set_new(is, "overfull", json_integer((json_int_t)res->tasks_t0_overfull));
    json_object_set_new(is, "through_policy", json_integer((json_int_t)res->tasks_t0_moved));
    return is;
}

/* summary.json's "overcommit": the factors per band, 1 where not given. */
static json_t *overcommit_json(const struct sim_overcommit *oc)
{
    static const char *const res_key[3] = {"cpu", "mem", "disk"};
    json_t *o = json_object();
    for (int b = 0; b < SIM_N_BANDS; b++) {
        json_t *f = json_object();
        for (int k = 0; k < 3; k++)
            json_object_set_new(f, res_key[k], json_real(oc->f[b][k]));
        json_object_set_new(o, sim_band_name(b), f);
    }
    return o;
}

/* summary.json's "preemption" (docs/simulator.md, "Preemption"). */
static json_t *preempt_json(const struct sim_replay_config *cfg,
                            const struct sim_replay_result *res)
{
    json_t *pr = json_object(), *by = json_object(), *tr = json_object();
    json_object_set_new(pr, "mode", json_string(sim_preempt_name(cfg->preempt)));
    json_object_set_new(pr, "evict", json_string(cfg->evict ? lt_evict_name(cfg->evict) : "mrs"));
    json_object_set_new(pr, "preemptions", json_integer((json_int_t)res->preemptions));
    json_object_set_new(pr, "preemptors", json_integer((json_int_t)res->preempt_events));
    json_object_set_new(pr, "at_t0", json_integer((json_int_t)res->preempt_t0));
    json_object_set_new(pr, "repeat_victims", json_integer((json_int_t)res->preempt_repeat));
    json_object_set_new(pr, "cascades", json_integer((json_int_t)res->preempt_cascade));
    uint64_t trace_evicts = 0;
    for (int a = SIM_N_PRIO - 1; a >= 0; a--)
        for (int v = SIM_N_PRIO - 1; v >= 0; v--)
            if (res->preempt_by_prio[a][v]) {
                char key[16];
                snprintf(key, sizeof(key), "%d>%d", a, v);
                json_object_set_new(by, key, json_integer((json_int_t)res->preempt_by_prio[a][v]));
            }
    for (int v = SIM_N_PRIO - 1; v >= 0; v--) {
        trace_evicts += res->trace_evict_by_prio[v];
        if (res->trace_evict_by_prio[v]) {
            char key[8];
            snprintf(key, sizeof(key), "%d", v);
            json_object_set_new(tr, key, json_integer((json_int_t)res->trace_evict_by_prio[v]));
        }
    }
    json_object_set_new(pr, "by_priority", by); /* "preemptor>victim": victims */
    json_object_set_new(pr, "trace_evict_rows", json_integer((json_int_t)trace_evicts));
    json_object_set_new(pr, "trace_evict_rows_by_priority", tr);
    return pr;
}

/* The queue options of an ordered-queue run (docs/simulator.md, "summary.json"). */
static json_t *queue_json(const struct sim_replay_config *cfg)
{
    static const char *bf[] = {"greedy", "none", "easy"};
    char name[128] = "priority";
    if (cfg->order != NULL)
        lt_qorder_name(cfg->order, name, sizeof(name));
    json_t *q = json_object();
    json_object_set_new(q, "order", json_string(name));
    json_object_set_new(q, "backfill", json_string(bf[cfg->backfill <= 2 ? cfg->backfill : 0]));
    json_object_set_new(q, "estimate", json_string(cfg->estimate_cv > 0.0 ? "noisy" : "oracle"));
    json_object_set_new(q, "estimate_cv", json_real(cfg->estimate_cv));
    json_object_set_new(q, "reprioritise_s", json_real((double)cfg->reprioritise_us / US));
    return q;
}

/* A ratio, null when the denominator is 0. */
static json_t *ratio_json(double num, uint64_t den)
{
    return den > 0 ? json_real(num / (double)den) : json_null();
}

/* --sla-annotate: the rules and their tasks' rewards (docs/simulator.md "SLA annotation"). */
static json_t *sla_annot_json(const struct sim_replay_config *cfg,
                              const struct sim_replay_result *res)
{
    const struct sim_annot *a = cfg->annot;
    json_t *j = json_object(), *rules = json_array();
    json_object_set_new(j, "file_sha", json_string(a->sha));
    json_object_set_new(j, "scope", json_string(cfg->sla_first ? "sla-first" : "within-priority"));
    json_object_set_new(j, "times_relative_to", json_string("the task's run-time estimate r-hat"));
    json_object_set_new(j, "tasks_without_sla", json_integer((json_int_t)res->sla_none));
    for (size_t r = 0; r < a->n; r++) {
        const struct sim_sla_stats *st = &res->sla[r];
        json_t *o = json_object();
        json_object_set_new(o, "rule", json_string(a->rules[r].name));
        json_object_set_new(o, "sla", json_string(a->rules[r].spec.text));
        json_object_set_new(o, "kind", json_string(lt_sla_kind_name(a->rules[r].spec.sla.kind)));
        json_object_set_new(o, "relative_times", json_boolean(a->rules[r].spec.relative != 0));
        json_object_set_new(o, "tasks", json_integer((json_int_t)st->tasks));
        json_object_set_new(o, "started", json_integer((json_int_t)st->started));
        json_object_set_new(o, "censored", json_integer((json_int_t)st->censored));
        json_object_set_new(o, "censored_upper_bounds", json_integer((json_int_t)st->bounds));
        json_object_set_new(o, "total_reward", json_real(st->reward_sum));
        json_object_set_new(o, "mean_reward", ratio_json(st->reward_sum, st->tasks));
        json_object_set_new(o, "reward_is_upper_bound", json_boolean(st->bounds > 0));
        json_object_set_new(o, "p_negative", ratio_json((double)st->negative, st->tasks));
        json_object_set_new(o, "started_by_knee", json_integer((json_int_t)st->by_knee));
        json_object_set_new(o, "p_started_by_knee", ratio_json((double)st->by_knee, st->tasks));
        json_object_set_new(o, "late", json_integer((json_int_t)st->late));
        json_object_set_new(o, "late_wait_mean_s", ratio_json(st->late_wait_s, st->late));
        json_object_set_new(o, "censored_wait_mean_s",
                            ratio_json(st->censored_wait_s, st->censored));
        json_array_append_new(rules, o);
    }
    json_object_set_new(j, "rules", rules);
    return j;
}

json_t *sim_replay_summary_json(const struct sim_replay_config *cfg,
                                const struct sim_replay_result *res)
{
    static const double pct[SIM_N_FRAG] = SIM_FRAG_PCT;
    json_t *root = json_object();
    json_t *run = json_object();
    json_object_set_new(run, "lotus_version", json_string(LOTUS_VERSION));
    json_object_set_new(run, "policy",
                        json_string(cfg->policy != NULL ? lt_policy_name(cfg->policy) : "lotes"));
    json_object_set_new(run, "seed", json_integer((json_int_t)cfg->seed));
    json_object_set_new(run, "trace", json_string(cfg->trace_dir));
    json_object_set_new(run, "machines_fraction_pct", json_real(cfg->machines_pct));
    json_object_set_new(run, "window_end_s", json_real(secs(res->end_time_us)));
    json_object_set_new(run, "interval_s", json_real((double)cfg->interval_us / US));
    json_object_set_new(root, "run", run);

    json_t *rows = json_object();
    for (int t = 0; t < TR_N_TABLES; t++)
        json_object_set_new(rows, tr_table_name((enum tr_table)t),
                            counts_json((enum tr_table)t, &res->rows[t]));
    json_object_set_new(json_object_get(rows, tr_table_name(TR_TASK_EVENTS)), "after_window",
                        json_integer((json_int_t)res->rows_after_window));
    json_object_set_new(root, "rows_read", rows);

    json_t *m = json_object();
    json_object_set_new(m, "in_trace", json_integer((json_int_t)res->machines_total));
    json_object_set_new(m, "kept", json_integer((json_int_t)res->machines_kept));
    json_object_set_new(root, "machines", m);

    json_object_set_new(root, "initial_state", init_state_json(cfg, res));

    if (cfg->preempt != SIM_PREEMPT_NONE) /* absent without: outputs as before --preempt */
        json_object_set_new(root, "preemption", preempt_json(cfg, res));
    if (cfg->order != NULL || cfg->backfill != SIM_BACKFILL_GREEDY) /* absent: the default */
        json_object_set_new(root, "queue", queue_json(cfg));
    if (cfg->annot != NULL) /* absent: no annotation */
        json_object_set_new(root, "sla_annotation", sla_annot_json(cfg, res));
    if (cfg->overcommit && !sim_overcommit_is_none(cfg->overcommit))
        json_object_set_new(root, "overcommit", overcommit_json(cfg->overcommit));

    json_t *t = json_object();
#define TASKS(k, v) json_object_set_new(t, k, json_integer((json_int_t)(v)))
    TASKS("submitted", res->tasks_submitted);
    TASKS("completed", res->tasks_completed);
    TASKS("failed", res->tasks_failed);
    TASKS("killed", res->tasks_killed);
    TASKS("lost", res->tasks_lost);
    TASKS("running_at_end", res->tasks_running_at_end);
    TASKS("queued_at_end", res->tasks_queued_at_end);
    TASKS("unplaceable", res->tasks_unplaceable);
    TASKS("no_requests", res->tasks_no_requests);
    TASKS("orphan_rows", res->orphan_rows);
    TASKS("ignored_rows", res->ignored_rows);
#undef TASKS
    json_object_set_new(root, "tasks", t);
    json_t *jb = json_object();
    json_object_set_new(jb, "submitted", json_integer((json_int_t)res->jobs_submitted));
    json_object_set_new(jb, "completed", json_integer((json_int_t)res->jobs_completed));
    jobs_json(jb, res);
    json_object_set_new(root, "jobs", jb);

    json_t *mt = json_object();
    json_object_set_new(mt, "throughput", json_integer((json_int_t)res->tasks_completed));
    json_object_set_new(mt, "flow_time_s", json_real(res->flow_time_s));
    json_object_set_new(mt, "flow_time_mean_s", per(res->flow_time_s, res->tasks_completed));
    json_object_set_new(mt, "bounded_slowdown_mean", per(res->bsld_sum, res->tasks_completed));
    json_object_set_new(mt, "bounded_slowdown_tau_s", json_real((double)SIM_BSLD_TAU_US / US));
    json_object_set_new(mt, "time_in_system_s", json_real(res->time_in_system_s));
    json_object_set_new(mt, "useful_work_s", json_real(res->useful_work_s));
    json_object_set_new(mt, "wasted_work_s", json_real(res->wasted_work_s));
    json_object_set_new(mt, "requeues", json_integer((json_int_t)res->requeues));
    json_object_set_new(mt, "placements", json_integer((json_int_t)res->placements));
    json_object_set_new(mt, "queue_mean", json_real(res->queue_mean));
    json_object_set_new(mt, "queue_max", json_integer((json_int_t)res->queue_max));
    json_t *u = json_object();
    json_object_set_new(u, "cpu", json_real(res->util_mean[0]));
    json_object_set_new(u, "mem", json_real(res->util_mean[1]));
    json_object_set_new(u, "disk", json_real(res->util_mean[2]));
    json_object_set_new(mt, "utilisation_mean", u);
    json_t *rq = json_object(), *rqx = json_object();
    json_object_set_new(rq, "cpu", json_real(res->req_mean[0]));
    json_object_set_new(rq, "mem", json_real(res->req_mean[1]));
    json_object_set_new(rqx, "cpu", json_real(res->req_max[0]));
    json_object_set_new(rqx, "mem", json_real(res->req_max[1]));
    json_object_set_new(mt, "requested_mean", rq); /* requests running / online capacity */
    json_object_set_new(mt, "requested_max", rqx);
    json_t *fr = json_object();
    for (int x = 0; x < SIM_N_FRAG; x++) {
        char key[16];
        snprintf(key, sizeof(key), "%g", pct[x]);
        json_object_set_new(fr, key, json_real(res->frag_mean[x]));
    }
    json_object_set_new(mt, "fragmentation_mean", fr);
    json_object_set_new(mt, "unused_machines_mean", json_real(res->unused_mean));
    json_object_set_new(mt, "samples", json_integer((json_int_t)res->samples));
    json_object_set_new(mt, "waiting_by_priority", waiting_json(res));
    json_object_set_new(root, "metrics", mt);
    return root;
}

/* The waiting.csv rows of priority p (none when no task of it arrived): the quantiles of the
 * started tasks (waiting_s, empty when none started) and of all tasks, the never-started ones
 * at their censored wait (all_s; all_lower_bound 1 when it is only a lower bound). */
static void waiting_rows(FILE *f, int p, const struct sim_wait_stats *ws)
{
    if (ws->hist.n == 0 && ws->censored.n == 0)
        return;
    for (int q = 0; q <= 100; q++) {
        bool bound;
        uint64_t all = sim_hist_quantile_censored(&ws->hist, &ws->censored, q / 100.0, &bound);
        fprintf(f, "%d,%.2f,", p, q / 100.0);
        if (ws->hist.n)
            fprintf(f, "%.6f", q_s(&ws->hist, q / 100.0));
        fprintf(f, ",%.6f,%d\n", (double)all / US, bound);
    }
}

static int write_outputs(struct engine *e)
{
    const char *dir = e->cfg->out_dir;
    char *final = path_join(dir, "summary.json"), *tmp = NULL;
    int rc = 0;
    if (!final)
        return oom(e);
    FILE *f = sim_tmp_open(final, &tmp, e->err);
    if (!f) {
        lt_free(final);
        return e->err->code;
    }
    json_t *j = sim_replay_summary_json(e->cfg, e->res);
    if (!j || json_dumpf(j, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) != 0 ||
        fputc('\n', f) == EOF)
        rc = lt_err_set(e->err, LT_EIO, 0, 0, "cannot write '%s'", tmp);
    json_decref(j);
    rc = sim_tmp_commit(f, tmp, final, rc, e->err);
    lt_free(final);
    if (rc < 0)
        return rc;

    final = path_join(dir, "waiting.csv");
    if (!final)
        return oom(e);
    f = sim_tmp_open(final, &tmp, e->err);
    if (!f) {
        lt_free(final);
        return e->err->code;
    }
    fprintf(f, "priority,quantile,waiting_s,all_s,all_lower_bound\n");
    for (int p = 0; p < SIM_N_PRIO; p++)
        waiting_rows(f, p, &e->res->wait[p]);
    rc = sim_tmp_commit(f, tmp, final, 0, e->err);
    lt_free(final);
    return rc;
}

static int open_streams(struct engine *e)
{
    const char *dir = e->cfg->out_dir;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return lt_err_set(e->err, LT_EIO, 0, 0, "cannot create directory '%s': %s", dir,
                          strerror(errno));
    if (e->cfg->task_csv) {
        char *final = path_join(dir, "tasks.csv");
        if (!final)
            return oom(e);
        e->tasks_csv = sim_tmp_open(final, &e->path_tasks, e->err);
        lt_free(final);
        if (!e->tasks_csv)
            return e->err->code;
        fprintf(e->tasks_csv, "job_id,task_index,priority,sched_class,cpu,mem,disk,arrival_s,"
                              "start_s,end_s,outcome,requeues,machine\n");
    }
    char *final = path_join(dir, "timeseries.csv");
    if (!final)
        return oom(e);
    e->ts_csv = sim_tmp_open(final, &e->path_ts, e->err);
    lt_free(final);
    if (!e->ts_csv)
        return e->err->code;
    fprintf(e->ts_csv, "time_s,machines_online,tasks_running,tasks_queued,util_cpu,util_mem,"
                       "util_disk,unused_machines,frag5,frag10,frag25,frag50,completed,requeues,"
                       "req_cpu,req_mem\n");
    return 0;
}

/* Finishes (rc == 0) or abandons the two streamed files. */
static int close_streams(struct engine *e, int rc)
{
    FILE *fs[2] = {e->tasks_csv, e->ts_csv};
    char **tmps[2] = {&e->path_tasks, &e->path_ts};
    for (int k = 0; k < 2; k++) {
        if (!fs[k])
            continue;
        char *tmp = *tmps[k];
        size_t n = strlen(tmp) - 4; /* final name: without ".tmp" */
        char *final = lt_malloc(n + 1);
        if (!final) {
            fclose(fs[k]);
            remove(tmp);
            lt_free(tmp); /* sim_tmp_open's, from lt_malloc */
            rc = rc < 0 ? rc : oom(e);
        } else {
            memcpy(final, tmp, n);
            final[n] = '\0';
            rc = sim_tmp_commit(fs[k], tmp, final, rc, e->err);
            lt_free(final);
        }
        *tmps[k] = NULL;
    }
    e->tasks_csv = e->ts_csv = NULL;
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------ */

static void engine_free(struct engine *e)
{
    lt_free(e->mrows);
    lt_free(e->inc);
    lt_free(e->primary_ids);
    lt_free(e->caps);
    lt_free(e->map.slot);
    lt_free(e->fix);
    lt_free(e->t0);
    for (size_t k = 0; k < e->n_pt; k++)
        lt_free(e->pt[k].mx);
    lt_free(e->prio_sum);
    lt_free(e->nf.last);
    lt_free(e->cand);
    lt_free(e->vout);
    lt_free(e->vlive);
    lt_map_release(&e->jobs);
    lt_free(e->rec);
    lt_free(e->cache);
    lt_cluster_free(e->cluster);
    lt_choose_hint_free(e->hint);
    lt_lotes_index_free(e->lix); /* before the tables it borrows */
    lt_lotes_tables_free(e->lotes);
    lt_free(e->lview);
    lt_free(e->live);
    comp_heap_free(&e->heap);
    lt_free(e->deferred);
    sq_free(&e->q);
    oq_heap_free(&e->oq);
    lt_free(e->ol);
    lt_free(e->asla);
    lt_free(e->oq_new);
    lt_free(e->oq_blocked);
    lt_free(e->gained);
    lt_free(e->gained_mark);
    lt_free(e->rsv_gained);
    lt_free(e->rsv_mark);
    lt_free(e->mend);
    cand_heap_free(&e->qcand);
    lt_free(e->ends);
    lt_free(e->dropped);
    for (int b = 0; b < SIM_N_BANDS; b++)
        lt_free(e->runs[b]);
}

/* Sets e up and runs everything before pass 2: the machines, the cluster, pass 1. On error
 * e is left for engine_free. */
static int engine_open(struct engine *e, const struct sim_replay_config *cfg,
                       struct sim_replay_result *res, struct lt_err *err)
{
    int rc;

    memset(e, 0, sizeof(*e));
    memset(res, 0, sizeof(*res));
    for (int p = 0; p < SIM_N_PRIO; p++) {
        sim_hist_init(&res->wait[p].hist);
        sim_hist_init(&res->wait[p].censored);
    }
    sim_hist_init(&res->jct);
    e->res = res;
    e->err = err;
    e->inj_rec0 = NIL;
    sim_overcommit_none(&e->oc);
    if (cfg->overcommit)
        e->oc = *cfg->overcommit;
    e->oc_none = sim_overcommit_is_none(&e->oc);
    for (int b = 0; b < SIM_N_BANDS; b++)
        for (int k = 0; k < 3; k++)
            if (!(e->oc.f[b][k] >= 1.0))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "bad replay configuration: overcommit "
                                  "factor %g < 1",
                                  e->oc.f[b][k]);
    if (!cfg->trace_dir || (!cfg->policy) == (!cfg->lotes_classes) || !(cfg->machines_pct > 0.0) ||
        cfg->machines_pct > 100.0 || cfg->interval_us <= 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "bad replay configuration");
    e->cfg = cfg; /* from here on engine_free is due */
    lt_map_init(&e->jobs, sizeof(struct job_slot));
    if (map_alloc(&e->map, MAP_MIN_CAP, NULL, 0) != 0 ||
        sq_init(&e->q, SIM_N_PRIO, slot_moved, e) != 0)
        return oom(e);
    e->opened = true;
    if (cfg->progress)
        cfg->progress->pass = 1;
    rc = machines_load(e);
    if (rc == 0)
        rc = cluster_build(e);
    if (rc == 0)
        rc = pre_setup(e);
    if (rc == 0)
        rc = oq_setup(e);
    if (rc == 0)
        rc = pass1(e);
    if (rc == 0)
        rc = count_jobs(e);
    return rc;
}

int sim_replay_run(const struct sim_replay_config *cfg, struct sim_replay_result *res,
                   struct lt_err *err)
{
    struct engine e;
    int rc = engine_open(&e, cfg, res, err);

    if (rc < 0 && !e.opened) { /* refused, or out of memory before anything started */
        if (e.cfg)
            engine_free(&e);
        return rc;
    }
    if (rc == 0 && cfg->out_dir)
        rc = open_streams(&e);
    if (rc == 0)
        rc = pass2(&e);
    if (rc == 0) {
        res->end_time_us = e.t_end;
        res->jobs_submitted = e.jobs.n;
        void *v;
        for (size_t it = 0; lt_map_next(&e.jobs, &it, NULL, &v);) {
            const struct job_slot *js = v;
            if (js->completed == js->arrived) {
                res->jobs_completed++;
                sim_hist_add(&res->jct, (uint64_t)(js->last_end - js->first_arrival));
                res->job_bsld_sum += bsld(js->last_end - js->first_arrival, js->max_run);
            }
        }
        if (res->samples) {
            double n = (double)res->samples;
            res->queue_mean = e.sum_queue / n;
            for (int d = 0; d < 3; d++)
                res->util_mean[d] = e.sum_util[d] / n;
            for (int d = 0; d < 2; d++)
                res->req_mean[d] = e.sum_req[d] / n;
            for (int x = 0; x < SIM_N_FRAG; x++)
                res->frag_mean[x] = e.sum_frag[x] / n;
            res->unused_mean = e.sum_unused / n;
        }
    }
    if (cfg->out_dir) {
        rc = close_streams(&e, rc);
        if (rc == 0)
            rc = write_outputs(&e);
        if (rc < 0) { /* nothing half-written: remove whatever this run renamed */
            static const char *names[] = {"summary.json", "tasks.csv", "timeseries.csv",
                                          "waiting.csv"};
            for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
                char *p = path_join(cfg->out_dir, names[k]);
                if (p)
                    remove(p);
                lt_free(p);
            }
        }
    }
    if (rc == 0 && lt_cluster_check(e.cluster, err) != 0)
        rc = err->code;
    if (cfg->progress)
        cfg->progress->pass = rc == 0 ? 3 : -1;
    engine_free(&e);
    return rc;
}

/* ---- the what-if snapshot (sim_snap_*; docs/whatif.md) ------------------------------------ */

_Static_assert(SIM_TRACE_ZERO_US == TRACE_ZERO_US, "trace second 0");

struct sim_snap {
    struct engine e;
    struct sim_replay_result res;
    struct p2state p2;
};

int sim_snap_open(const struct sim_replay_config *cfg, bool collect_runs, struct sim_snap **out,
                  struct lt_err *err)
{
    *out = NULL;
    if (cfg->out_dir || cfg->backfill != SIM_BACKFILL_GREEDY)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "what-if: no output directory or backfill in the replay "
                          "configuration");
    struct sim_snap *s = lt_calloc(1, sizeof(*s));
    if (!s)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    int rc = engine_open(&s->e, cfg, &s->res, err);
    if (rc == 0 && s->e.cache_full)
        rc = lt_err_set(err, LT_EINVAL, 0, 0,
                        "what-if: the window's task rows do not fit the row cache (%zu bytes); "
                        "the snapshot keeps them all in memory",
                        cfg->cache_bytes);
    if (rc < 0) {
        if (s->e.cfg)
            engine_free(&s->e);
        lt_free(s);
        return rc;
    }
    s->e.collect = collect_runs;
    pass2_begin(&s->e, &s->p2);
    *out = s;
    return 0;
}

void sim_snap_free(struct sim_snap *s)
{
    if (!s)
        return;
    tr_close(s->p2.src.rd);
    engine_free(&s->e);
    lt_free(s);
}

int64_t sim_snap_end_us(const struct sim_snap *s)
{
    return s->e.t_end;
}

int64_t sim_snap_now_us(const struct sim_snap *s)
{
    return s->e.now;
}

size_t sim_snap_machines(const struct sim_snap *s)
{
    return s->e.n_primary;
}

struct lt_res sim_snap_max_cap(const struct sim_snap *s)
{
    struct lt_res m = {0, 0, 0};
    for (size_t k = 0; k < s->e.n_caps; k++) {
        m.cpu = dmax(m.cpu, s->e.caps[k].cpu);
        m.mem = dmax(m.mem, s->e.caps[k].mem);
        m.disk = dmax(m.disk, s->e.caps[k].disk);
    }
    return m;
}

int sim_snap_advance(struct sim_snap *s, int64_t t_us, struct lt_err *err)
{
    struct engine *e = &s->e;
    if (t_us <= 0 || t_us < e->now || e->inj_rec0 != NIL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "what-if: cannot advance to %" PRId64 " us (now %" PRId64 " us%s)", t_us,
                          e->now, e->inj_rec0 != NIL ? ", job injected" : "");
    e->err = err;
    int rc = pass2_run(e, &s->p2, t_us);
    if (rc == 0 && e->now < t_us)
        e->now = t_us;
    return rc;
}

int sim_snap_shrink(struct sim_snap *s, double keep_pct, struct lt_rng *rng, size_t *kept,
                    struct lt_err *err)
{
    struct engine *e = &s->e;
    size_t n = e->n_primary;
    if (!(keep_pct > 0.0) || keep_pct > 100.0 || e->dropped || e->inj_rec0 != NIL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "what-if: bad shrink (%g %% kept)", keep_pct);
    e->err = err;
    size_t keep = (size_t)(keep_pct * (double)n / 100.0 + 0.5);
    uint32_t *perm = lt_calloc(n ? n : 1, sizeof(*perm));
    uint8_t *drop_id = lt_calloc(n ? n : 1, 1);
    e->dropped = lt_calloc(e->n_inc ? e->n_inc : 1, 1);
    int rc = 0;
    if (!perm || !drop_id || !e->dropped)
        rc = oom(e);
    /* One whole permutation whatever keep_pct: the levels of one seed keep nested subsets
     * (common random numbers across --shrink levels). */
    for (size_t k = 0; rc == 0 && k < n; k++)
        perm[k] = (uint32_t)k;
    for (size_t k = 0; rc == 0 && k + 1 < n; k++) {
        size_t j = k + (size_t)lt_rng_below(rng, n - k);
        uint32_t tmp = perm[k];
        perm[k] = perm[j];
        perm[j] = tmp;
    }
    for (size_t k = keep; rc == 0 && k < n; k++)
        drop_id[perm[k]] = 1;
    for (size_t x = 0; rc == 0 && x < e->n_inc; x++) {
        const uint64_t *hit = bsearch(&e->inc[x].id, e->primary_ids, n, sizeof(uint64_t), cmp_u64);
        e->dropped[x] = hit && drop_id[hit - e->primary_ids];
    }
    /* Taken out now as a machine REMOVE would: their tasks requeued (none before pass 2). */
    for (size_t x = 0; rc == 0 && x < e->n_inc; x++)
        if (e->dropped[x])
            rc = machine_down(e, x);
    lt_free(perm);
    lt_free(drop_id);
    *kept = keep;
    return rc;
}

void sim_life_split(int64_t d_us, double p, int64_t *x_us, int64_t *y_us)
{
    int64_t x = (int64_t)llround((double)d_us * p);
    if (x < 0)
        x = 0;
    if (x > d_us)
        x = d_us;
    *x_us = x;
    *y_us = d_us - x;
}

int64_t sim_residual_draw(const int64_t *runs, size_t n, int64_t elapsed_us, struct lt_rng *rng)
{
    size_t lo = 0, hi = n; /* the first run >= elapsed_us */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (runs[mid] < elapsed_us)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n)
        return -1;
    return runs[lo + (size_t)lt_rng_below(rng, n - lo)] - elapsed_us;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int sim_snap_resample(struct sim_snap *s, struct lt_rng *rng, struct sim_resample_stats *st,
                      struct lt_err *err)
{
    struct engine *e = &s->e;
    memset(st, 0, sizeof(*st));
    if (!e->collect || e->inj_rec0 != NIL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "what-if: resampling needs the completed runs (sim_snap_open)");
    e->err = err;
    if (!e->runs_sorted) {
        for (int b = 0; b < SIM_N_BANDS; b++)
            if (e->n_runs[b] > 1)
                qsort(e->runs[b], e->n_runs[b], sizeof(int64_t), cmp_i64);
        e->runs_sorted = true;
    }
    for (size_t l = 0; l < e->n_live; l++) {
        struct live *t = &e->live[l];
        struct task_rec *r = &e->rec[t->rec];
        if ((r->flags & F_DONE) || t->state != L_RUNNING)
            continue;
        int b = sim_band(t->prio);
        int64_t elapsed = e->now - t->start, y;
        if (e->n_runs[b] == 0) {
            st->kept++;
            continue;
        }
        if (t->start == 0 && (r->flags & F_SCHED_AT_0)) { /* elapsed unknown: Eq. 4.1-4.2 */
            int64_t d = e->runs[b][lt_rng_below(rng, e->n_runs[b])], x;
            sim_life_split(d, lt_rng_uniform(rng), &x, &y);
            st->split++;
        } else {
            y = sim_residual_draw(e->runs[b], e->n_runs[b], elapsed, rng);
            if (y < 0) { /* ran longer than every completed run of its band: its own life */
                st->kept++;
                continue;
            }
            st->residual++;
        }
        if (t->heap_pos != NIL)
            heap_remove(e, (uint32_t)l);
        t->outcome = TR_FINISH;
        t->demand = elapsed + y;
        r->end_type = TR_FINISH; /* a later KILL or LOST row of it is ignored */
        r->flags |= F_ENDED;
        int rc = heap_push(e, e->now + y, (uint32_t)l);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Task records for the injected job's tasks. */
static int inject_recs(struct engine *e, size_t n)
{
    if (e->n_rec + n >= NIL || LT_VEC_RESERVE(e->rec, e->cap_rec, e->n_rec + n) != 0)
        return oom(e);
    return 0;
}

int sim_snap_inject(struct sim_snap *s, const struct sim_inject *inj, struct sim_inject_result *out,
                    struct lt_err *err)
{
    struct engine *e = &s->e;
    size_t n = 0;
    memset(out, 0, sizeof(*out));
    out->first_start_us = out->start_us = out->end_us = -1;
    if (e->inj_rec0 != NIL || inj->n_groups == 0 || inj->priority < 0 ||
        inj->priority >= SIM_N_PRIO || inj->sched_class < 0 || inj->sched_class > 3 ||
        inj->horizon_us <= 0 || inj->rank < SIM_RANK_ARRIVAL || inj->rank > SIM_RANK_FIRST)
        return lt_err_set(err, LT_EINVAL, 0, 0, "what-if: bad injected job");
    for (size_t g = 0; g < inj->n_groups; g++) {
        const struct sim_inject_group *gr = &inj->groups[g];
        if (gr->count == 0 || !(gr->req.cpu > 0) || !(gr->req.mem > 0) || !(gr->req.disk >= 0) ||
            gr->duration_us <= 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "what-if: bad task group %zu", g);
        n += gr->count;
    }
    e->err = err;
    int rc = inject_recs(e, n);
    if (rc < 0)
        return rc;
    out->t_inj_us = e->now;
    out->tasks = (uint32_t)n;
    out->queued_at_inj = e->q.active;
    out->running_at_inj = lt_cluster_n_placements(e->cluster);
    e->no_arrivals = inj->no_arrivals;
    e->collect = false;
    e->inj_rec0 = (uint32_t)e->n_rec;
    e->inj_need = inj->start_all ? (uint32_t)n : 1;
    e->inj_rank = e->om ? SIM_RANK_ARRIVAL : inj->rank; /* ordered queue: its key decides */
    e->inj_sla = inj->sla;
    e->inj_prio = inj->priority;
    e->inj_first = e->inj_last = e->inj_end = -1;
    e->inj_until = inj->until_complete;
    e->inj_n = (uint32_t)n;
    e->inj_done = 0;
    uint32_t unplaceable = 0, index = 0;
    for (size_t g = 0; g < inj->n_groups && rc == 0; g++) {
        for (uint32_t k = 0; k < inj->groups[g].count && rc == 0; k++) {
            uint32_t h = (uint32_t)e->n_rec++;
            struct task_rec *r = &e->rec[h];
            memset(r, 0, sizeof(*r));
            r->job_id = SIM_INJECT_JOB_ID;
            r->index = index++;
            r->end_type = TR_FINISH;
            r->flags = F_ENDED;
            r->u.t = inj->groups[g].duration_us;
            struct crow row = {.time = e->now,
                               .id = h,
                               .type = TR_SUBMIT,
                               .priority = (uint8_t)inj->priority,
                               .sched_class = (int8_t)inj->sched_class};
            rc = arrive(e, h, &row, &inj->groups[g].req);
            /* done at once: larger than every machine, it never entered the queue */
            if (rc == 0 && (e->rec[h].flags & F_DONE))
                unplaceable++;
        }
    }
    if (rc < 0)
        return rc;
    out->unplaceable = unplaceable;
    if (!e->halt && n - unplaceable >= e->inj_need)
        rc = pass2_run(e, &s->p2, out->t_inj_us + inj->horizon_us + 1);
    if (rc < 0)
        return rc;
    out->started = e->inj_started;
    out->first_start_us = e->inj_first;
    out->end_us = e->inj_until ? e->inj_end : -1;
    if (e->inj_last >= 0) {
        out->reason = SIM_INJ_STARTED;
        out->start_us = e->inj_last;
    } else if (n - unplaceable < e->inj_need) {
        out->reason = SIM_INJ_UNPLACEABLE;
    } else if (e->t_end < out->t_inj_us + inj->horizon_us) {
        out->reason = SIM_INJ_TRACE_END;
    } else {
        out->reason = SIM_INJ_HORIZON;
    }
    return 0;
}

const char *sim_inject_reason_name(int reason)
{
    switch (reason) {
    case SIM_INJ_STARTED:
        return "started";
    case SIM_INJ_HORIZON:
        return "horizon";
    case SIM_INJ_TRACE_END:
        return "trace-end";
    case SIM_INJ_UNPLACEABLE:
        return "unplaceable";
    default:
        return "?";
    }
}
