/* replay.h -- the trace-replay engine of lotus-sim (docs/simulator.md is its contract).
 *
 * sim_replay_run streams a Google 2011 trace directory through one placement policy: pass 1
 * reads task_events for each task's outcome and service demand, pass 2 replays machines and
 * tasks in time order, placing every task with lt_policy_choose, and fills a struct
 * sim_replay_result. With an output directory it also writes summary.json, tasks.csv,
 * timeseries.csv and waiting.csv there (each to NAME.tmp, renamed when complete).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_REPLAY_H
#define SIM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "replay/annotate.h"
#include "replay/hist.h"
#include "lt_err.h"
#include "lt_evict.h"
#include "lt_lotes.h"
#include "lt_queue.h"
#include "lt_rng.h"
#include "lt_score.h"
#include "trace/trace.h"

#define SIM_N_PRIO 12 /* trace priorities 0..11 */
#define SIM_N_FRAG 4  /* fragmentation thresholds, SIM_FRAG_PCT */
#define SIM_FRAG_PCT                                                                               \
    {                                                                                              \
        5.0, 10.0, 25.0, 50.0                                                                      \
    }

/* Progress, published by the engine for a progress bar (may be shared between processes:
 * plain fields, written by the engine only). */
struct sim_progress {
    volatile int pass;             /* 0 not started, 1 pass 1, 2 pass 2, 3 done, -1 failed */
    volatile int64_t sim_time_us;  /* simulated time reached (pass 2) */
    volatile int64_t end_time_us;  /* end of the window, once pass 1 has found it */
    volatile uint64_t rows;        /* task_events rows read in this pass */
    volatile uint64_t bytes_read;  /* compressed bytes of task_events read in this pass */
    volatile uint64_t bytes_total; /* compressed bytes of all task_events parts */
};

/* How the replay starts (docs/simulator.md, "Initial state"). */
enum sim_initial_state {
    SIM_INIT_REPACK = 0, /* every task pending or running at t = 0 goes through the policy */
    SIM_INIT_TRACE = 1   /* a task running at t = 0 starts on its trace machine (forced, even
                          * beyond capacity) with its t = 0 SCHEDULE row's requests; only those
                          * on machines --machines-fraction drops go through the policy */
};

/* Priority preemption (docs/simulator.md, "Preemption"). */
enum sim_preempt {
    SIM_PREEMPT_NONE = 0, /* never */
    SIM_PREEMPT_BANDS,    /* a task evicts only tasks of a lower band: free 0-1 < batch 2-8 <
                           * production 9-11 */
    SIM_PREEMPT_PRIORITY, /* a task evicts tasks of a lower priority; production (9-11)
                           * never evicts production */
    SIM_PREEMPT_PROD      /* only production (9-11) evicts, tasks of the lower bands (free,
                           * batch), as bands does */
};

/* --preempt's word: "none", "bands", "priority", "prod". */
const char *sim_preempt_name(enum sim_preempt mode);

/* *mode for word s (sim_preempt_name's words): 0, or LT_EINVAL naming what (a flag, a JSON
 * path) and s. */
int sim_preempt_parse(const char *what, const char *s, enum sim_preempt *mode, struct lt_err *err);

/* Overcommit (docs/simulator.md, "Overcommit"): a task of band b (free 0-1, batch 2-8,
 * production 9-11) asking r of resource k is accounted on its machine as r / f[b][k] (its
 * reservation, Verma et al. 2015, section 5.5); 1 everywhere = none. */
#define SIM_N_BANDS 3
struct sim_overcommit {
    double f[SIM_N_BANDS][3]; /* [band][cpu, mem, disk], each >= 1 */
};

/* All factors 1 (no overcommit); sim_overcommit_is_none tells. */
void sim_overcommit_none(struct sim_overcommit *oc);
bool sim_overcommit_is_none(const struct sim_overcommit *oc);

/* Parses --overcommit's list of "[BAND.]RESOURCE=FACTOR" (BAND free, batch, prod or nonprod;
 * no band: nonprod, i.e. free and batch; RESOURCE cpu, mem or disk; FACTOR 1..100) into *oc
 * (unset factors 1). A band's own item overrides a nonprod one, whatever the order. LT_EINVAL
 * naming flag and the item for an empty item, an unknown band or resource, a bad factor, or a
 * factor given twice. */
LT_MUST_CHECK int sim_overcommit_parse(const char *flag, const char *s, struct sim_overcommit *oc,
                                       struct lt_err *err);

/* The factors other than 1 as "band.res=F,..." (parseable; "" for none) into buf of cap bytes;
 * -1 if it does not fit. */
LT_MUST_CHECK int sim_overcommit_format(const struct sim_overcommit *oc, char *buf, size_t cap);

/* The band of a trace priority: 0 free (0-1), 1 batch (2-8), 2 production (9-11); its name. */
int sim_band(int priority);
const char *sim_band_name(int band);

/* What a task of this priority asking *req is accounted as on its machine. */
struct lt_res sim_overcommit_apply(const struct sim_overcommit *oc, int priority,
                                   const struct lt_res *req);

/* Backfill of the ordered queue (docs/simulator.md, "Queue orders and backfill"). */
enum sim_backfill {
    SIM_BACKFILL_GREEDY = 0, /* every queued task that fits somewhere starts, in queue order */
    SIM_BACKFILL_NONE,       /* strict order: the first queued task blocks all behind it */
    SIM_BACKFILL_EASY        /* the first blocked task holds a reservation (EASY) */
};

/* Test hook: an EASY reservation for task (job, index) was computed now_us, with shadow time
 * shadow_us (INT64_MAX: no machine ever frees room for it) on machine m. */
typedef void (*sim_reserve_fn)(void *ctx, uint64_t job, uint32_t index, int64_t now_us,
                               int64_t shadow_us, size_t m);

struct sim_replay_config {
    const char *trace_dir;          /* holds machine_events/, task_events/ (job_events/ optional) */
    const struct lt_policy *policy; /* placement policy; NULL with lotes_classes */
    /* LoTES instead of a placement policy (docs/simulator.md, "LoTES"): the tables are built
     * from the cell's machine configurations and these classes (in the trace's units), each
     * task is classified into the nearest class and dispatched by lt_lotes_dispatch; a task
     * that finds no room waits in the replay's queue, as with every policy. */
    const struct lt_lotes_class *lotes_classes;
    size_t n_lotes_classes;
    uint64_t seed;                        /* policy RNG, randfirstfit order, T(x) machine subset */
    double machines_pct;                  /* keep this % of the machine IDs (0 < x <= 100) */
    enum sim_initial_state initial_state; /* the start: SIM_INIT_REPACK (0) or _TRACE */
    enum sim_preempt preempt;             /* SIM_PREEMPT_NONE (0): no preemption */
    const struct lt_evict_policy *evict;  /* victims' order with preempt; NULL = mrs */
    const struct sim_overcommit *overcommit; /* NULL = none */
    int64_t until_us;                        /* last timestamp to replay; INT64_MAX = all parts */
    int64_t interval_us;                     /* time-series sampling interval (> 0) */
    bool skip_bad_lines;                     /* count bad trace lines instead of stopping */
    const char *out_dir;                     /* write the files here (created); NULL = no files */
    bool task_csv;                           /* write tasks.csv (with out_dir) */
    size_t cache_bytes;                      /* memory for task_events rows kept from pass 1 for
                                              * pass 2; rows beyond it are read from the parts again */
    struct sim_progress *progress;           /* NULL = none */
    /* The queue (docs/simulator.md, "Queue orders and backfill"). order NULL and backfill
     * greedy are today's queue (priority, then arrival; greedy); anything else is the ordered
     * queue: a task's size is its accounted CPU request, its run time the trace's (an
     * oracle), or that times a lognormal factor of mean 1 and CV estimate_cv (> 0). */
    const struct lt_qorder *order; /* NULL: priority */
    enum sim_backfill backfill;    /* SIM_BACKFILL_GREEDY (0): greedy */
    double estimate_cv;            /* 0: oracle run times */
    int64_t reprioritise_us;       /* time-varying orders: re-key at most this often; 0: at
                                    * every dispatch instant */
    /* SLAs for the trace's tasks (--sla-annotate; docs/simulator.md "SLA annotation"): each
     * task gets the first matching rule's SLA (Nx times its run-time estimate), the SLA orders
     * rank by it, and the rewards of the start delays are reported per rule (res->sla). NULL:
     * no task has an SLA (the SLA orders are then refused). */
    const struct sim_annot *annot;
    bool sla_first;            /* SLA orders: every task with an SLA before every task without one
                                * (--sla-scope sla-first); false: within each priority (within-priority) */
    sim_reserve_fn on_reserve; /* tests: NULL */
    void *reserve_ctx;
    bool check_index; /* tests: every preemption search is checked against a scan of every
                       * machine (LT_EINVAL on a difference); the sanitizer build always */
};

/* Waiting-time statistics of one priority. */
struct sim_wait_stats {
    struct sim_hist hist;     /* first start - arrival of the started tasks, microseconds */
    uint64_t never_started;   /* simulated tasks of this priority that never started */
    struct sim_hist censored; /* the never-started tasks' censored waits, microseconds:
                               * min(leave, T_end) - arrival (left: killed or lost while
                               * waiting); never_started values */
    uint64_t waiting_at_end;  /* of the never-started, those still waiting at T_end */
};

/* The rewards of one annotation rule's tasks (docs/simulator.md "SLA annotation"): the tasks
 * that arrived in the window (not those running at its start) and got the rule's SLA; delay d
 * = first start - arrival. A task never started (still queued at the window's end, or killed
 * or lost while queued) is censored at h = min(leave, T_end) - arrival: its reward is r(h),
 * a strict upper bound while r still decreases past h (counted in bounds). */
struct sim_sla_stats {
    uint64_t tasks, started, censored;
    uint64_t bounds;        /* censored tasks whose reward is a strict upper bound */
    uint64_t negative;      /* tasks with reward < 0 */
    uint64_t by_knee;       /* started with d <= knee (lt_sla_knee) */
    uint64_t late;          /* started with d > knee */
    double reward_sum;      /* every task's reward (censored ones at their value) */
    double late_wait_s;     /* the late tasks' delays, summed */
    double censored_wait_s; /* the censored tasks' h, summed */
};

/* Feitelson's bound of the bounded slowdown (docs/simulator.md, "Metrics"). */
#define SIM_BSLD_TAU_US 10000000LL

struct sim_replay_result {
    /* The run. */
    int64_t end_time_us;     /* T_end */
    uint64_t machines_total; /* distinct machine IDs in machine_events */
    uint64_t machines_kept;  /* after --machines-fraction */
    /* Rows read per table and event type (rows before T_end; pass 2). */
    struct tr_counts rows[TR_N_TABLES];
    uint64_t rows_after_window; /* task rows with time TR_TIME_AFTER */
    /* Tasks. */
    uint64_t tasks_submitted; /* simulated tasks that arrived */
    uint64_t tasks_completed; /* FINISH outcome, completed in the window (throughput) */
    uint64_t jobs_submitted;  /* jobs with at least one simulated task */
    uint64_t jobs_completed;  /* jobs all of whose simulated tasks completed (FINISH) */
    uint64_t tasks_failed, tasks_killed, tasks_lost;
    uint64_t tasks_running_at_end, tasks_queued_at_end;
    uint64_t tasks_unplaceable; /* larger than every machine */
    uint64_t tasks_no_requests; /* no row carried requests */
    uint64_t tasks_t0_trace;    /* --initial-state trace: started on their t = 0 trace machine */
    uint64_t tasks_t0_moved;    /* ... running at t = 0 on a machine not simulated: the policy */
    uint64_t tasks_t0_overfull; /* ... of tasks_t0_trace, placed beyond the machine's room */
    uint64_t orphan_rows;       /* rows of tasks whose first row is neither SUBMIT nor SCHEDULE */
    uint64_t ignored_rows;      /* rows counted and not acted on (docs/simulator.md) */
    /* Metrics. */
    double flow_time_s;      /* completed tasks: completion - arrival */
    double bsld_sum;         /* completed tasks: max(1, flow / max(last run, tau)) */
    struct sim_hist jct;     /* completed jobs: last completion - first arrival, microseconds */
    double job_bsld_sum;     /* completed jobs: max(1, jct / max(longest last run, tau)) */
    double time_in_system_s; /* all tasks: min(end, T_end) - arrival */
    double useful_work_s;    /* completed runs */
    double wasted_work_s;    /* runs lost to requeues */
    uint64_t requeues;       /* machine REMOVE / UPDATE and preemptions */
    uint64_t preemptions;    /* victims evicted (each also a requeue) */
    uint64_t preempt_by_prio[SIM_N_PRIO][SIM_N_PRIO]; /* [preemptor][victim] */
    uint64_t preempt_events;                          /* preemptors started by evicting */
    uint64_t preempt_t0;      /* victims evicted while the t = 0 tasks were being placed */
    uint64_t preempt_repeat;  /* victims requeued before (churn) */
    uint64_t preempt_cascade; /* victims of a preemptor that was itself requeued */
    uint64_t trace_evict_by_prio[SIM_N_PRIO]; /* the window's EVICT rows, by priority */
    uint64_t placements;                      /* successful choose + place */
    uint64_t nofit_hits; /* chooses answered "fits nowhere" from remembered failures */
    uint64_t queue_max;
    double queue_mean;   /* over the samples */
    double util_mean[3]; /* cpu, mem, disk, over the samples */
    double req_mean[2];  /* cpu, mem: the running tasks' requests / online capacity, mean */
    double req_max[2];   /* ... and largest, over the samples */
    double frag_mean[SIM_N_FRAG];
    double unused_mean;
    uint64_t samples;
    struct sim_wait_stats wait[SIM_N_PRIO];
    /* --sla-annotate: per rule (cfg->annot->rules), and the tasks no rule gave an SLA. */
    struct sim_sla_stats sla[SIM_ANNOT_MAX_RULES];
    uint64_t sla_none;
    /* Memory, for benchmarks (not in summary.json): bytes the task records and their key map
     * held at the end of pass 1, bytes of the row cache, and the window rows it covered. */
    uint64_t task_bytes, cache_bytes, cache_rows;
};

/* Runs the replay. On success returns 0 and fills *res (allocated by the caller; it is
 * large). Errors: the trace reader's (LT_EIO, LT_EPARSE with PART:LINE:COLUMN, LT_ERANGE),
 * LT_EINVAL for a bad configuration, LT_ENOMEM, LT_EIO for an output file. On error no output
 * file of this run is left behind (temporary files are removed). */
LT_MUST_CHECK int sim_replay_run(const struct sim_replay_config *cfg, struct sim_replay_result *res,
                                 struct lt_err *err);

/* The summary.json document of a run (docs/simulator.md), a new reference (json_decref) or
 * NULL when out of memory. */
struct json_t;
struct json_t *sim_replay_summary_json(const struct sim_replay_config *cfg,
                                       const struct sim_replay_result *res);

/* ---- the what-if snapshot (lotus-sim whatif; docs/whatif.md) ------------------------------
 *
 * A replay that stops at an instant, is copied (fork) and goes on in each copy with one
 * perturbation and one injected job, until that job starts. sim_snap_open runs everything
 * before pass 2 (machines, pass 1) and sim_snap_advance replays pass 2's events of time < t;
 * then, in each copy: sim_snap_shrink, sim_snap_resample (either or both, in that order), and
 * sim_snap_inject, which ends the copy's use (free it, or let the process end). Times are the
 * trace's microseconds (trace second s is SIM_TRACE_ZERO_US + s * 10^6). */

#define SIM_TRACE_ZERO_US (600LL * 1000000LL) /* the trace's timestamp of trace second 0 */
#define SIM_INJECT_JOB_ID                                                                          \
    UINT64_C(0x7fffffffffff0023) /* the injected job's ID (none in the trace) */

struct sim_snap;

/* Opens a snapshot at the start of pass 2. cfg (kept by reference until sim_snap_free) must
 * have no out_dir and no backfill (an order is fine: the ordered queue's state is the
 * engine's, copied with it), and its cache_bytes must hold every row of the window
 * (the copies then read nothing from the trace again); collect_runs keeps every completed run
 * (FINISH) by band for sim_snap_resample. Errors as sim_replay_run's; LT_EINVAL for those. */
LT_MUST_CHECK int sim_snap_open(const struct sim_replay_config *cfg, bool collect_runs,
                                struct sim_snap **out, struct lt_err *err);
void sim_snap_free(struct sim_snap *s);

int64_t sim_snap_end_us(const struct sim_snap *s);  /* T_end, the window's last timestamp */
int64_t sim_snap_now_us(const struct sim_snap *s);  /* the instant reached */
size_t sim_snap_machines(const struct sim_snap *s); /* machine IDs simulated (--shrink's 100 %) */
struct lt_res sim_snap_max_cap(const struct sim_snap *s); /* largest capacity of each resource */

/* Replays every event of time < t_us (t_us > 0, not before the instant reached, no job
 * injected yet); the instant reached is then t_us. */
LT_MUST_CHECK int sim_snap_advance(struct sim_snap *s, int64_t t_us, struct lt_err *err);

/* Cell shrinking: keeps round(keep_pct % of sim_snap_machines) machine IDs, the first of a
 * random permutation drawn whole from rng (so the levels of one rng state keep nested
 * subsets), into *kept. The others are taken out now as a machine REMOVE would (their tasks
 * requeued; before the first sim_snap_advance: never online) and their later machine rows
 * are ignored. Once per snapshot. */
LT_MUST_CHECK int sim_snap_shrink(struct sim_snap *s, double keep_pct, struct lt_rng *rng,
                                  size_t *kept, struct lt_err *err);

/* What sim_snap_resample did to the running tasks. */
struct sim_resample_stats {
    uint64_t residual; /* new remaining life from the residual-life distribution */
    uint64_t split;    /* running since t = 0 (elapsed unknown): Eq. 4.1-4.2 */
    uint64_t kept;     /* kept their own life: no completed run of their band, or none as long */
};

/* Betser's Method III: every running task gets a new remaining life Y, and completes (FINISH)
 * Y from now: Y = D - x, D drawn uniformly among the completed runs of its band (free, batch,
 * production) of length >= its elapsed time x; a task running since t = 0 draws D among all
 * and splits it (sim_life_split with p ~ U(0, 1)). Needs collect_runs. */
LT_MUST_CHECK int sim_snap_resample(struct sim_snap *s, struct lt_rng *rng,
                                    struct sim_resample_stats *st, struct lt_err *err);

/* Eq. 4.1-4.2 of Betser: a total duration d split at p in [0, 1] into elapsed x = d p and
 * remaining y = d (1 - p), rounded so that x + y = d exactly. */
void sim_life_split(int64_t d_us, double p, int64_t *x_us, int64_t *y_us);

/* A residual life: runs[0 .. n-1] sorted; one of those >= elapsed_us, uniformly, minus
 * elapsed_us; -1 when none is. */
int64_t sim_residual_draw(const int64_t *runs, size_t n, int64_t elapsed_us, struct lt_rng *rng);

/* The injected job: groups of equal tasks. */
struct sim_inject_group {
    struct lt_res req;   /* requests, normalised as the trace's */
    int64_t duration_us; /* run time once started (> 0) */
    uint32_t count;      /* tasks (> 0) */
};

/* Where the injected job's queued tasks stand in the queue (whatif --order with an SLA order,
 * spec queue-sla-network.md section 2.4): in arrival order like every task; first among the
 * tasks of their priority (--sla-scope within-priority: the one job with an SLA ranks before
 * jobs without one at equal priority); first of all (--sla-scope sla-first). */
enum sim_inject_rank { SIM_RANK_ARRIVAL = 0, SIM_RANK_FIRST_IN_PRIORITY, SIM_RANK_FIRST };

struct sim_inject {
    const struct sim_inject_group *groups;
    size_t n_groups;
    int priority;        /* 0 .. 11 */
    int sched_class;     /* 0 .. 3 */
    bool start_all;      /* started = every task started (gang); false: the first one */
    int64_t horizon_us;  /* give up this long after the injection (> 0) */
    bool no_arrivals;    /* drop every trace arrival from the injection on */
    int rank;            /* enum sim_inject_rank */
    bool until_complete; /* replay on after the start until every task has finished (or the
                          * horizon): sim_inject_result.end_us */
    /* The job's SLA in the ordered queue's key (an SLA order with cfg->annot: it competes
     * with the annotated trace tasks; rank is then unused); NULL: none. Borrowed. */
    const struct lt_sla *sla;
};

enum sim_inject_reason {
    SIM_INJ_STARTED = 0,
    SIM_INJ_HORIZON,    /* censored: not started by t_inj + horizon */
    SIM_INJ_TRACE_END,  /* censored: not started when the trace's window ended */
    SIM_INJ_UNPLACEABLE /* censored: too many of its tasks are larger than every machine */
};
const char *sim_inject_reason_name(int reason);

struct sim_inject_result {
    int64_t t_inj_us;        /* the injection instant */
    int64_t start_us;        /* the job's start (its first task's, or with start_all its last
                              * task's), -1 when censored */
    int64_t first_start_us;  /* its first task's start, -1 none */
    uint64_t queued_at_inj;  /* trace tasks queued and running at the injection, after the */
    uint64_t running_at_inj; /* perturbations */
    int64_t end_us;          /* until_complete: its last task's end (every task finished),
                              * -1 when not asked, or not finished by the horizon or the
                              * window's end */
    uint32_t tasks, started, unplaceable;
    int32_t reason; /* enum sim_inject_reason */
};

/* Injects the job at the instant reached (its tasks arrive after the trace's events before
 * it, ahead of those at it, through the queue and policy of every task) and replays on until
 * the job has started (with until_complete: every one of its tasks has finished), the horizon
 * has passed, or the window ends. */
LT_MUST_CHECK int sim_snap_inject(struct sim_snap *s, const struct sim_inject *inj,
                                  struct sim_inject_result *out, struct lt_err *err);

#endif
