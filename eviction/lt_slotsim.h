/* lt_slotsim.h -- the slot-based cluster simulator of Cavdar ch. 6-9 (docs/slots.md).
 *
 * A server runs at most `slots` tasks; every task on an ON server gets the CPU rate
 * Gamma = C / max(N_running, N_cores) (eq. 6.2), kept exact between events (each server keeps
 * the work one task has received since a reference point, so a rate change moves no
 * completion threshold). Tasks wait in a central queue ordered by priority, then first
 * arrival (or, with a queue order of lt_queue.h, by priority, then the order's key); a task
 * that finds no free slot evicts a running task of the lowest running class
 * below its own (mrs, lrs or rnd), which loses its progress unless `resume`. Servers sleep
 * when empty (SLP) and take `wake_s` seconds to wake, or stay idle (IDL).
 *
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_SLOTSIM_H
#define LT_SLOTSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "lt_queue.h"
#include "lt_slots.h"

/* One task of the workload. */
struct lt_slot_task {
    int64_t id;     /* ties in the queue after arrival */
    int prio;       /* 0..11, higher is more important */
    double arrival; /* seconds, >= 0 */
    double demand;  /* CPU demand Delta_C, cpu-s at unit CPU, > 0 */
    double mem;     /* average memory usage, normalised like the server types (0: none) */
};

enum lt_slot_evict { LT_SLOT_EVICT_NONE, LT_SLOT_EVICT_MRS, LT_SLOT_EVICT_LRS, LT_SLOT_EVICT_RND };
enum lt_slot_order { LT_SLOT_ORDER_PRIORITY, LT_SLOT_ORDER_FCFS };

/* Memory: unlimited (no accounting, A43), or limited with memory eviction at the checkpoint
 * (section 6.2.3, A25, A26): lsf evicts the task whose memory cannot be satisfied, lpf evicts
 * lower-priority tasks of its server (lowest class, latest start first) until it can. */
enum lt_slot_memory { LT_SLOT_MEM_UNLIMITED, LT_SLOT_MEM_LSF, LT_SLOT_MEM_LPF };

struct lt_slot_params {
    const struct lt_slot_config *cfg;
    enum lt_slot_order
        order; /* priority then first arrival, or first arrival only (no evictions) */
    /* A queue order of lt_queue.h (borrowed; NULL: first arrival, today's order). Under
     * LT_SLOT_ORDER_PRIORITY the queue stays priority-first and the order's key replaces first
     * arrival within a class; under LT_SLOT_ORDER_FCFS it is the whole order. Ties go to first
     * arrival, then id. A task's key: size 1, wait = now - first arrival, run time = its CPU
     * demand (the oracle). HYBRID's phase I keeps first arrival. */
    const struct lt_qorder *qorder;
    /* Orders whose keys change with waiting (lt_qorder_time_varying): the queue is re-keyed at
     * a scheduling round at most this often, s (0: every round); ignored by other orders. */
    double reprioritise_s;
    enum lt_slot_evict evict; /* the priority eviction policy */
    bool resume;              /* an evicted task keeps its progress (else it restarts, WE grows) */
    enum lt_slot_memory memory;
    uint32_t drop_threshold; /* 0: none; else a task evicted this many times is dropped (A28) */
    bool waa;                /* production (9-11) tasks take the most powerful free slot (A23) */
    bool wae;        /* WASP's eviction: a production evictor frees the most powerful slot held by
                      * the latest started task of the lowest class (A22, the prose) */
    uint32_t sticky; /* HYBRID: sticky slots (0: none, WASP alone); phase I places queued tasks
                      * in first-arrival order on them, never priority-evicted (A34, A35) */
    bool sleep;      /* SLP: an empty server sleeps and takes wake_s to wake; else IDL */
    double wake_s;   /* 30 [L1225] */
    double horizon;  /* energy is integrated up to max(horizon, last event), s */
    double v_a;      /* V's weights w_i = i + v_a (A30: 3) */
    uint64_t seed;
    /* If not NULL, called from inside lt_slot_run about every 16,384 scheduling rounds with
     * the simulated time reached and the events so far (a progress bar); it must not call
     * back into the simulator. */
    void (*progress)(void *arg, double now, uint64_t events);
    void *progress_arg;
    /* Tests: verify every invariant of the simulator's state (its Fenwick tree of free slots,
     * the server, queue and event heaps, the class lists) after every event; the run stops
     * with LT_EINVAL naming the first broken one. O(tasks + servers) an event. */
    bool check;
    /* Tests of the checker itself (0: off): with check on, before the first check at which it
     * can, break one structure on purpose, so the check must fail: 1 the Fenwick tree, 2 a
     * server's heap, 3 the event heap, 4 a class list, 5 the central queue, 6 free_total. */
    int check_break;
};

/* Defaults: priority order (no queue order, qorder NULL), mrs, non-resume, no threshold, random
 * slots, SLP, 30 s, no horizon, v_a = 3. */
void lt_slot_params_default(struct lt_slot_params *p, const struct lt_slot_config *cfg);

/* The named policies, each one registration entry (the table in slotsim.c), applied to *p:
 *   lt_slot_policy_set: "priority" (the central queue by priority, priority eviction), "fcfs"
 *     (first arrival only, no eviction), "wasp" (priority with WAA and WAE), "hybrid" (WASP
 *     with `sticky` sticky slots; sticky is ignored by the others);
 *   lt_slot_evict_set: "mrs", "lrs", "rnd", each with an optional drop threshold ("mrs5":
 *     a task is dropped at its 5th eviction); no effect on the eviction of "fcfs";
 *   lt_slot_memory_set: "unlimited", "lsf", "lpf".
 * Set the policy before the eviction policy. Errors: LT_ENOTFOUND naming the known names, or
 * LT_EINVAL for a threshold that is not a whole number 1..2^32-1. */
LT_MUST_CHECK int lt_slot_policy_set(struct lt_slot_params *p, const char *name, uint32_t sticky,
                                     struct lt_err *err);
LT_MUST_CHECK int lt_slot_evict_set(struct lt_slot_params *p, const char *name, struct lt_err *err);
LT_MUST_CHECK int lt_slot_memory_set(struct lt_slot_params *p, const char *name,
                                     struct lt_err *err);

/* What happened to one task. */
struct lt_slot_outcome {
    double finish;          /* completion time; NaN if dropped */
    uint32_t evictions;     /* evictions it suffered (priority and memory) */
    uint32_t mem_evictions; /* of which memory evictions */
    bool dropped;
    double wasted;   /* cpu-s of work lost to its evictions (0 when resume) */
    uint32_t server; /* the server of its last attempt, numbered in configuration order
                      * (group 0's servers first); UINT32_MAX if it never held a slot */
    bool sticky;     /* its last attempt held a sticky slot (HYBRID) */
};

struct lt_slot_summary {
    uint64_t completed, dropped;
    uint64_t ne;                   /* eviction events (priority and memory) */
    uint64_t ne_priority;          /* priority evictions */
    uint64_t net;                  /* distinct evicted tasks */
    uint64_t net_priority;         /* distinct tasks evicted by priority */
    uint32_t max_e;                /* most evictions of one task */
    double we;                     /* wasted work, cpu-s */
    double makespan;               /* last completion */
    double r_mean;                 /* mean response time of completed tasks */
    double r_class[12];            /* per class (NaN if none completed) */
    double r_class_evicted[12];    /* ... of completed tasks with >= 1 eviction */
    double r_class_nonevicted[12]; /* ... with none */
    uint64_t n_class[12];          /* completed per class */
    uint64_t events;               /* events processed (arrivals, completions, wake-ups) */
    double e_mean;                 /* NE / NET: evictions per evicted task (NaN if none) */
    double v;                      /* V = sum over classes with completions of (i + v_a) R(C_i),
                                    * over their number (eq. 6.5) */
    double energy_j;               /* cluster energy, joules (eq. 6.3; sleep P_sleep, waking
                                    * P_peak, on P_idle + P_cpu U_cpu + P_mem U_mem, U_cpu =
                                    * min(N_r, N_c) / N_c, U_mem allocated / capacity (0 when
                                    * memory is unlimited)) */
    double end;                    /* the end of the energy integral */
};

/* Runs tasks[0..n-1] (any order; ties in arrival go to the lower id) to completion. out has n
 * entries, in the order of tasks. Errors: LT_EINVAL naming the task or parameter (priority
 * outside 0..11, negative or non-finite arrival, non-positive demand, no configuration or a
 * group without slots or servers, a negative wake time or re-key interval, a queue order with
 * a non-finite exponent or a clamp not > 0); LT_ENOMEM. */
LT_MUST_CHECK int lt_slot_run(const struct lt_slot_params *p, const struct lt_slot_task *tasks,
                              size_t n, struct lt_slot_outcome *out, struct lt_slot_summary *sum,
                              struct lt_err *err);

#endif
