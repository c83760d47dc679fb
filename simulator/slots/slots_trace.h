/* slots_trace.h -- W-A: the slot simulator's workload from the Google 2011 trace's
 * task_events (Cavdar ch. 9's trace-driven workload; reading and deviation in slots_trace.c
 * and docs/slots.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_SLOTS_TRACE_H
#define SIM_SLOTS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "lt_slotsim.h"

struct sim_wa_stats {
    uint64_t rows;      /* task_events rows read */
    size_t tasks_seen;  /* distinct (job, index) with a SUBMIT, SCHEDULE or FINISH */
    size_t before;      /* left out: submitted at t = 0 (before the trace) or not seen */
    size_t unfinished;  /* left out: no FINISH after a SCHEDULE inside the window */
    size_t no_demand;   /* left out: no CPU request or a zero-length run */
    size_t sampled_out; /* left out by the sample */
    size_t kept;        /* tasks of the workload */
    int64_t end_us;     /* the last timestamp read (the window's end), microseconds */
};

/* Reads DIR/task_events (at most max_parts parts, 0 = all) into a new array of tasks (*out,
 * *n; lt_free), in arrival order with ids 0, 1, ...: arrival = first SUBMIT (seconds), priority
 * of that SUBMIT, demand = its CPU request x (FINISH - last SCHEDULE), memory = its memory
 * request (at most 1). sample in (0, 1] keeps that fraction of the tasks, chosen by a hash of
 * (job, index) and seed (the thesis samples its 15-hour subset for 125 servers, A17).
 * Errors as tr_open / tr_next report them, LT_EINVAL for a bad sample, or LT_ENOMEM. */
LT_MUST_CHECK int sim_slot_tasks_from_trace(const char *dir, uint32_t max_parts, double sample,
                                            uint64_t seed, struct lt_slot_task **out, size_t *n,
                                            struct sim_wa_stats *st, struct lt_err *err);

#endif
