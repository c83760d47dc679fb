/* lt_lotes_sim.h -- the discrete-event simulation of Tran & Beck's experiments (section 5 and
 * the MapReduce section 7): machines of the tables' configurations, each running every task
 * that fits its free resources and holding the others in a FIFO queue; tasks dispatched on
 * arrival by LoTES (lt_lotes_dispatch) or by the greedy benchmark (lt_lotes_greedy).
 *
 * Workload (section 5.1): Poisson arrivals at load x lambda* (the allocation LP's, in jobs per
 * hour); a job's class by the proportions alpha; each task's cores and RAM normal around the
 * class's expected request with the class's coefficient of variation (redrawn while not > 0),
 * its processing time exponential with mean 1 / mu hours. With mapreduce, a job is `maps` map
 * tasks dispatched at its arrival and `reduces` reduce tasks dispatched when its last map
 * finishes (all of the job's class); the LP is scaled by the tasks per job (section 6), so
 * the job rate is load x lambda* / (maps + reduces).
 * Readings (docs/lotes.md): a task that fits a machine's free resources starts at once, even
 * past that machine's queue (the dispatcher's "begin immediate service"); a machine's queue is
 * strict FIFO: on a completion the head starts while it fits, and a head that does not fit
 * blocks the tasks behind it. Waiting = start - arrival, response = completion - arrival,
 * measured for the tasks (jobs) arriving in [warmup, hours); after `hours` no task arrives and
 * the run drains until the measured tasks are done or `hours + drain` is reached (tasks left
 * then are counted as unfinished, not averaged).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_LOTES_SIM_H
#define LT_LOTES_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_lotes.h"

enum lt_lotes_policy {
    LT_LOTES_POLICY_LOTES = 0,
    LT_LOTES_POLICY_GREEDY = 1,    /* lt_lotes_greedy, LT_LOTES_GREEDY_ROOM */
    LT_LOTES_POLICY_GREEDY_JSQ = 2 /* lt_lotes_greedy, LT_LOTES_GREEDY_JSQ */
};

struct lt_lotes_sim_params {
    const struct lt_lotes_tables *t; /* the machines (configurations x n_j) and, for LoTES, rho
                                      * and the bins */
    const struct lt_res *cv;         /* per class: coefficients of variation of cpu, mem (NULL:
                                      * every task requests exactly the class's expectation) */
    enum lt_lotes_policy policy;
    double load;       /* > 0: arrivals at load x lambda_ref */
    double lambda_ref; /* load 1's rate (jobs per hour); 0: the tables' lambda_alloc. Another
                        * value simulates a cluster planned for fewer machines than the load
                        * refers to (the paper's Figure 4) */
    double hours;      /* arrivals in [0, hours) */
    double warmup;     /* [0, hours): tasks arriving earlier are not measured */
    double drain;      /* >= 0: hours simulated after `hours` at most */
    bool mapreduce;
    uint32_t maps, reduces; /* tasks per job with mapreduce (>= 1 map) */
    uint64_t seed;
    /* If not NULL, called about every 65,536 events with the simulated time (hours) and the
     * events so far. */
    void (*progress)(void *arg, double now, uint64_t events);
    void *progress_arg;
};

/* Defaults: LoTES, load 0.5, 300 hours, 100 of warm-up, 200 of drain, no mapreduce (200 maps
 * and 100 reduces when turned on), seed 1. */
void lt_lotes_sim_params_default(struct lt_lotes_sim_params *p, const struct lt_lotes_tables *t);

struct lt_lotes_sim_summary {
    uint64_t arrived;    /* jobs arrived */
    uint64_t tasks;      /* tasks dispatched */
    uint64_t measured;   /* jobs arrived in [warmup, hours) */
    uint64_t completed;  /* of which completed */
    uint64_t unfinished; /* of which not completed at the end */
    uint64_t rejected;   /* tasks no machine's capacity holds (never run) */
    uint64_t how[4];     /* dispatches by rule (enum lt_lotes_how) */
    double wait_mean;    /* hours, over the measured tasks that started */
    double resp_mean;    /* hours: task response, or job flow time with mapreduce */
    double resp_class[LT_LOTES_MAX_CLASSES]; /* per class (NaN: none completed) */
    double wait_class[LT_LOTES_MAX_CLASSES];
    uint64_t n_class[LT_LOTES_MAX_CLASSES]; /* completed measured jobs per class */
    double in_system_mean; /* time-average of tasks in the system over [warmup, hours) */
    uint64_t in_system_max;
    double end; /* simulated hours at the end */
    uint64_t events;
};

/* Runs one simulation. Errors: LT_EINVAL naming the parameter (no tables, a load, horizon,
 * warm-up, drain or task count out of range), LT_ENOMEM. */
int lt_lotes_sim_run(const struct lt_lotes_sim_params *p, struct lt_lotes_sim_summary *out,
                     struct lt_err *err) LT_MUST_CHECK;

#endif
