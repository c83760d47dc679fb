/* lt_queue.h -- queue orders and the single-pool queue model of Simon & McGalliard
 * (../shared/spec/queue-sla-network.md section 1; docs/queue.md).
 *
 * A job of the model: arrival, size (cores = one-core tasks), run time, the scheduler's
 * estimate of it. The workload readers (simulator/queue/) fill arrays of struct lt_qjob; the
 * orders and the simulator in eviction/ read them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_QUEUE_H
#define LT_QUEUE_H

#include <stdint.h>

/* One job of a single-pool workload. */
struct lt_qjob {
    int64_t id;        /* input order, 0-based: the last tie-break of every order */
    double arrival_s;  /* >= 0 */
    uint32_t tasks;    /* cores requested, >= 1 */
    double runtime_s;  /* actual run time, > 0 */
    double estimate_s; /* the scheduler's estimate of runtime_s, > 0 (orders, backfill) */
    int cls;           /* class from the input, -1 when none */
};

#endif
