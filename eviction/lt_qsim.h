/* lt_qsim.h -- the single-pool queue simulator of Simon & McGalliard's model (docs/queue.md).
 *
 * C identical cores; jobs (struct lt_qjob) of n one-core tasks arrive, wait in one queue in the
 * order of a struct lt_qorder and run without interruption for their actual run time. The
 * algorithm is the spec's numbered Algorithm 1 (../shared/spec/queue-sla-network.md 1.5),
 * event-driven: at each instant (an arrival or the end of a running piece) the pieces ending
 * then are released, the jobs arriving then join the queue, and the queue is dispatched:
 *   - rigid: a job starts only with all its cores; the head that does not fit blocks the queue
 *     unless a backfill rule lets later jobs start (1.7): none; easy (a later job starts if it
 *     fits and either ends, by its estimate, by the head's shadow time, or fits in the extra
 *     cores, which it then uses up); relaxed:F (the first condition becomes t + r_b <= T_s +
 *     F (T_s - a_h)); greedy (every job that fits starts, in queue order, no reservation);
 *   - fractional (Algorithm 1 as printed [S L259]): the free cores go to the queue in order, the
 *     last ones to part of the next job, whose other tasks stay queued under its priority; a
 *     job's start is its first task's start, its completion its last task's end. Backfill does
 *     not apply (no core is left idle while work waits): anything but none is LT_EINVAL.
 * Shadow times use ESTIMATES (a running piece is expected to end at start + estimate, or now if
 * it has run past that), recomputed from the current state at every instant the head is
 * blocked: with estimates shorter than run times a reservation can be broken; with exact ones
 * the head starts no later than its first shadow time while it stays head (SM7).
 *
 * Queue orders whose keys do not change with time are ranked once (one sort of every job) and
 * the queue is a segment tree over the ranks (first queued job, first that fits in k cores:
 * O(log n)); time-varying orders (composite with beta != 0, the SLA orders, which read each
 * job's SLA through lt_qorder_key_job) keep a sorted array re-keyed and re-sorted at
 * dispatch instants (every instant, or at most every reprioritise_s seconds: Ward's 60 s; jobs
 * arriving in between are keyed as of the last re-key).
 *
 * State. A struct lt_qsim holds the whole state. lt_qsim_advance moves to the next instant
 * (releases, arrivals) and lt_qsim_dispatch dispatches at it, so a self-tuning scheduler can,
 * between the two, lt_qsim_fork the state (the queued and running work only, no future
 * arrivals: spec 1.6 "copy the state, never touch the live one"), run each fork to the end
 * under another order, and lt_qsim_set_order the live one. lt_qsim_run does a whole run.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_QSIM_H
#define LT_QSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "lt_queue.h"

enum lt_qdispatch { LT_QDISPATCH_RIGID, LT_QDISPATCH_FRACTIONAL };
enum lt_qbackfill {
    LT_QBACKFILL_NONE,
    LT_QBACKFILL_EASY,
    LT_QBACKFILL_RELAXED,
    LT_QBACKFILL_GREEDY
};

/* Bounded slowdown's bound, as the replay's (docs/simulator.md). */
#define LT_QSIM_TAU_S 10.0

/* "rigid" or "fractional". LT_ENOTFOUND listing the known names. */
LT_MUST_CHECK int lt_qdispatch_find(const char *name, enum lt_qdispatch *out, struct lt_err *err);

/* "none", "easy", "relaxed:F" (F a finite number >= 0; *relax_f = F, else 0) or "greedy".
 * LT_ENOTFOUND listing the known names, LT_EINVAL naming a bad F. */
LT_MUST_CHECK int lt_qbackfill_find(const char *name, enum lt_qbackfill *out, double *relax_f,
                                    struct lt_err *err);

/* The state after an instant was dispatched (the time series of the paper's Figures 7-9). */
struct lt_qsample {
    double time_s;
    uint32_t busy;  /* cores running a task */
    size_t running; /* jobs with a task running */
    size_t queued;  /* jobs with a task waiting (a partly started job counts in both) */
};

struct lt_qsim_params {
    uint32_t cores; /* C >= 1 */
    struct lt_qorder order;
    enum lt_qdispatch dispatch;
    enum lt_qbackfill backfill;
    double relax_f;        /* relaxed:F, finite, >= 0 */
    double reprioritise_s; /* time-varying orders: re-key at most this often; 0: every instant */
    /* If not NULL: called after every dispatched instant at which busy, running or queued
     * changed (and after the first). Not called in forks. */
    void (*on_sample)(void *arg, const struct lt_qsample *s);
    void *sample_arg;
    /* If not NULL (tests, reports): called at every instant the rigid head job (its index)
     * does not fit and easy or relaxed computes its shadow time and extra cores. Not in forks. */
    void (*on_shadow)(void *arg, double now_s, size_t job, double shadow_s, uint32_t extra);
    void *shadow_arg;
};

/* Defaults: cores, fcfs, rigid, no backfill, re-key every instant, no callbacks. */
void lt_qsim_params_default(struct lt_qsim_params *p, uint32_t cores);

/* One job's schedule: its first task's start and its last task's end; NaN until then. */
struct lt_qjob_out {
    double start_s;
    double end_s;
};

/* The metrics of spec 1.8 over the completed jobs (NaN where no job completed). */
struct lt_qsim_summary {
    size_t jobs, completed;
    uint64_t events;   /* arrivals + ends of running pieces */
    uint64_t instants; /* distinct event times */
    size_t max_queued; /* most jobs waiting at once */
    double first_arrival_s, last_end_s;
    double makespan_s;   /* M = last end - first arrival (the paper's "Wait" column) */
    double work_core_s;  /* W = sum n r of the completed jobs (actual run times) */
    double utilisation;  /* U = W / (C M), 0..1 (the paper's "Utiliz" / 100) */
    double total_wait_s; /* sum (s - a) (the paper's "TotalWait") */
    double wait_mean_s, wait_p50_s, wait_p90_s, wait_p99_s; /* nearest-rank percentiles */
    double response_mean_s;                                 /* mean c - a */
    double bsld_mean; /* mean max(1, (c - a) / max(r, tau)), tau = LT_QSIM_TAU_S */
    double xf_mean;   /* mean expansion factor (c - a) / r (= (s - a + r) / r if rigid) */
};

struct lt_qsim;

/* A simulator at the start of a run of jobs[0..n-1] (any order; borrowed: jobs must outlive
 * it). NULL on failure: LT_EINVAL naming the parameter, or the job's index, id and field
 * (tasks 0, or above cores under rigid; arrival negative; run time or estimate not > 0; any
 * NaN or infinity), LT_ENOMEM. */
struct lt_qsim *lt_qsim_new(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                            struct lt_err *err);

/* Frees s and everything it owns; NULL is a no-op. */
void lt_qsim_free(struct lt_qsim *s);

/* Moves to the next instant: releases the pieces ending then and queues the jobs arriving
 * then (dispatching the previous instant first if the caller did not). *done is true, and
 * nothing changes, when no work is left. LT_ENOMEM; after an error s can only be freed. */
LT_MUST_CHECK int lt_qsim_advance(struct lt_qsim *s, bool *done, struct lt_err *err);

/* Dispatches the queue at the current instant (a no-op if already done). LT_ENOMEM. */
LT_MUST_CHECK int lt_qsim_dispatch(struct lt_qsim *s, struct lt_err *err);

/* Dispatches and advances until no work is left. LT_ENOMEM. */
LT_MUST_CHECK int lt_qsim_finish(struct lt_qsim *s, struct lt_err *err);

/* Orders the queue by o from now on (the next dispatch re-keys). LT_EINVAL for a bad order,
 * LT_ENOMEM (s unchanged then). */
LT_MUST_CHECK int lt_qsim_set_order(struct lt_qsim *s, const struct lt_qorder *o,
                                    struct lt_err *err);

/* A new simulator holding a copy of s's present work (queued jobs with their unstarted tasks,
 * running pieces with their end times, the current time and whether the instant is still to
 * be dispatched) and no future arrivals, ordered by o (NULL: s's order), without callbacks.
 * Its jobs are renumbered 0..m-1 in s's index order (lt_qsim_origin maps them back); its
 * summary covers them (first arrival: the earliest of theirs, so its makespan is measured from
 * that arrival, whatever the order). s is not touched. Free with lt_qsim_free. NULL and LT_EINVAL /
 * LT_ENOMEM on failure. */
struct lt_qsim *lt_qsim_fork(const struct lt_qsim *s, const struct lt_qorder *o,
                             struct lt_err *err);

/* Queries. lt_qsim_outcome: borrowed, lt_qsim_n_jobs(s) entries, valid until lt_qsim_free.
 * lt_qsim_origin: job i's index in the jobs array given to lt_qsim_new (through any forks). */
double lt_qsim_now(const struct lt_qsim *s);
size_t lt_qsim_n_jobs(const struct lt_qsim *s);
const struct lt_qjob *lt_qsim_job(const struct lt_qsim *s, size_t i);
size_t lt_qsim_origin(const struct lt_qsim *s, size_t i);
const struct lt_qjob_out *lt_qsim_outcome(const struct lt_qsim *s);
uint64_t lt_qsim_completed(const struct lt_qsim *s);           /* jobs completed so far */
size_t lt_qsim_queued(const struct lt_qsim *s);                /* jobs with a task waiting */
uint32_t lt_qsim_busy(const struct lt_qsim *s);                /* cores running a task */
uint32_t lt_qsim_unstarted(const struct lt_qsim *s, size_t i); /* job i's tasks waiting */
/* The jobs with a task waiting (lt_qsim_queued(s) of them) into out, in queue order as of the
 * last dispatch (jobs that arrived since are in it, not yet re-sorted); returns their number. */
size_t lt_qsim_queue(const struct lt_qsim *s, size_t *out);
/* s's parameters (a fork's: its order, no callbacks). */
const struct lt_qsim_params *lt_qsim_params_of(const struct lt_qsim *s);

/* The metrics of the jobs completed so far. LT_ENOMEM (the percentiles sort a copy). */
LT_MUST_CHECK int lt_qsim_summarise(const struct lt_qsim *s, struct lt_qsim_summary *sum,
                                    struct lt_err *err);

/* A whole run: lt_qsim_new, lt_qsim_finish, the outcomes into out[0..n-1] (may be NULL) and
 * the summary into *sum (may be NULL). Errors as lt_qsim_new and lt_qsim_finish. */
LT_MUST_CHECK int lt_qsim_run(const struct lt_qsim_params *p, const struct lt_qjob *jobs, size_t n,
                              struct lt_qjob_out *out, struct lt_qsim_summary *sum,
                              struct lt_err *err);

#endif
