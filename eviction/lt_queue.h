/* lt_queue.h -- queue orders and the single-pool queue model of Simon & McGalliard
 * (../shared/spec/queue-sla-network.md section 1; docs/queue.md).
 *
 * A job of the model: arrival, size (cores = one-core tasks), run time, the scheduler's
 * estimate of it. The workload readers (simulator/queue/) fill arrays of struct lt_qjob; the
 * orders and the simulator (lt_qsim.h) in eviction/ read them.
 *
 * Queue orders. Every order is the composite priority of the paper [S L213] compared in log
 * space (spec 1.4 rule 1), highest key first:
 *
 *     key = alpha ln(n_eff) + beta ln(w_eff) + gamma ln(r_eff)
 *     n_eff = max(n, n_min), w_eff = max(now - arrival, w_min), r_eff = max(r, r_min)
 *
 * with r the scheduler's ESTIMATE of the run time (estimate_s: it does not know the actual
 * one). The paper divides n and r by their means over the queue; that multiplies every
 * priority of one instant by the same constant and changes no order (rule 2), so the key
 * leaves them out. Ties go to the earlier arrival, then the lower id, then the lower index in
 * the caller's array (spec 1.3). The fixed orders are the special cases of the spec's table:
 *
 *     fcfs (0,1,0)   sjf (0,0,-1)   ljf (0,0,1)   largest (1,0,0)   smallest (-1,0,0)
 *
 * fcfs is applied as "earlier arrival first" (a key that never changes); that is the order
 * composite:0,1,0 gives at every instant, because ln is monotone, waits shorter than w_min
 * tie and fall to the arrival tie-break (SM6, tests/unit/eviction/test_queue.c). A composite
 * order with beta != 0 has keys that change as jobs wait (lt_qorder_time_varying): callers
 * re-key at dispatch instants.
 *
 * SLA-aware orders (Betser [B L470-L499], spec 2.4; docs/queue.md): sla-reward (greatest
 * current reward first), sla-deadline (smallest max(0, d1 - d) among by-deadline jobs still in
 * their positive part; the rest after, in sla-reward order), sla-slope[:H] (greatest look-ahead
 * loss (r(d) - r(d + H)) / H, H = 300 s by default; sla-slope:0 the right derivative). d is
 * now - arrival; example1's run is taken as [now, now + estimate) on the job's cores. Ties:
 * then the sla-deadline distance, then arrival, id, index; jobs without an SLA (sla == NULL)
 * rank after every job with one, by arrival. The keys need the job's SLA, so these orders are
 * read through lt_qorder_key_job / lt_qorder_before; lt_qorder_key (no job) gives them 0.
 * They are time-varying.
 *
 * `priority` (the replay's priority-then-arrival order) is not in this registry: a job of the
 * single-pool model has no priority (its cls is a label), so the replay keeps that order in
 * its own queue; lt_qorder_find("priority") is LT_ENOTFOUND.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_QUEUE_H
#define LT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"

struct lt_sla; /* lt_sla.h */

/* One job of a single-pool workload. */
struct lt_qjob {
    int64_t id;        /* input order, 0-based: the last tie-break of every order */
    double arrival_s;  /* >= 0 */
    uint32_t tasks;    /* cores requested, >= 1 */
    double runtime_s;  /* actual run time, > 0 */
    double estimate_s; /* the scheduler's estimate of runtime_s, > 0 (orders, backfill) */
    int cls;           /* class from the input, -1 when none */
    /* The job's SLA (SLA-aware orders), NULL for none; borrowed: must outlive every
     * simulator holding the job (forks copy the pointer). */
    const struct lt_sla *sla;
};

enum lt_qorder_kind {
    LT_QORDER_FCFS,
    LT_QORDER_SJF,
    LT_QORDER_LJF,
    LT_QORDER_LARGEST,
    LT_QORDER_SMALLEST,
    LT_QORDER_COMPOSITE,
    LT_QORDER_SLA_REWARD,
    LT_QORDER_SLA_DEADLINE,
    LT_QORDER_SLA_SLOPE
};

/* Default clamps (spec 1.4 rules 3, 4): one simulator tick of 1 s for waits and run times,
 * one core for sizes. The replay's normalised CPU sizes would use n_min = 2^-10. */
#define LT_QORDER_W_MIN_S 1.0
#define LT_QORDER_R_MIN_S 1.0
#define LT_QORDER_N_MIN   1.0

/* sla-slope's default look-ahead (spec 2.4 [REC]: before its knee an instantaneous slope is 0
 * for every job; five minutes sees a knee coming). */
#define LT_QORDER_SLA_H_S 300.0

/* A queue order: a value type (copy it freely), filled by lt_qorder_find or
 * lt_qorder_composite. The fixed orders carry their table triplet. */
struct lt_qorder {
    enum lt_qorder_kind kind;
    double alpha, beta, gamma; /* exponents of size, wait, run time */
    double w_min_s;            /* zero-wait clamp, > 0 */
    double r_min_s;            /* zero-run-time clamp, > 0 */
    double n_min;              /* zero-size clamp, > 0 */
    double h_s;                /* sla-slope's look-ahead (s), finite, >= 0 (0: derivative) */
};

/* Fills *out from a name: "fcfs", "sjf", "ljf", "largest", "smallest",
 * "composite:ALPHA,BETA,GAMMA" (three finite decimal numbers, e.g. "composite:-0.1,-0.3,-0.4"),
 * "sla-reward", "sla-deadline" or "sla-slope[:H]" (H seconds, finite, >= 0; default 300), with
 * the default clamps. Errors: LT_ENOTFOUND listing the known names; LT_EINVAL naming the text
 * for a composite whose numbers are missing, extra, not numbers or not finite, or a bad H.
 * *out is untouched on failure. */
LT_MUST_CHECK int lt_qorder_find(const char *name, struct lt_qorder *out, struct lt_err *err);

/* Fills *out with composite(alpha, beta, gamma) and the default clamps (the self-tuning grid).
 * LT_EINVAL if a number is not finite; *out untouched then. */
LT_MUST_CHECK int lt_qorder_composite(struct lt_qorder *out, double alpha, double beta,
                                      double gamma, struct lt_err *err);

/* The registry: the number of names and the i-th ("composite:A,B,G" stands for the family),
 * in registration order; NULL past the end. */
size_t lt_qorder_count(void);
const char *lt_qorder_name_at(size_t i);

/* The order's name as lt_qorder_find reads it ("sjf", "composite:0.1,-0.3,0"), NUL-terminated
 * and truncated to len bytes; numbers are printed with %.17g trimmed by %g when exact. */
void lt_qorder_name(const struct lt_qorder *o, char *buf, size_t len);

/* Do the keys change with time (beta != 0 in a composite)? fcfs is false: it is applied as a
 * fixed arrival order (see above). */
bool lt_qorder_time_varying(const struct lt_qorder *o);

/* Does the order read the jobs' SLAs (sla-reward, sla-deadline, sla-slope)? A caller whose jobs
 * carry no SLA should refuse these orders: every job would tie. */
bool lt_qorder_uses_sla(const struct lt_qorder *o);

/* The key of a job of size n (cores, or a normalised request) and estimated run time r_s that
 * has waited wait_s (may be negative or 0: clamped). Higher goes first. Pure: no check of the
 * arguments beyond the clamps (NaN in, NaN out). */
double lt_qorder_key(const struct lt_qorder *o, double n, double wait_s, double r_s);

/* A job's key under an order at one instant, compared field by field, higher first, then the
 * tie rule (arrival, id, index). */
struct lt_qkey {
    double cls; /* SLA orders: 0 no SLA, 1 with one (sla-deadline: 2 still before its knee's
                 * zero crossing); other orders 0 */
    double key; /* the order's key: lt_qorder_key for fixed and composite orders (0 for fcfs);
                 * the current reward, the look-ahead loss, or minus the deadline distance */
    double tie; /* SLA orders: minus the sla-deadline distance (-INFINITY when not covered);
                 * other orders 0 */
};

/* Job x's key at time now_s (x->sla read by the SLA orders only). Pure. */
struct lt_qkey lt_qorder_key_job(const struct lt_qorder *o, const struct lt_qjob *x, double now_s);

/* -1 if key a goes first, 1 if b does, 0 if they tie (then the tie rule decides). Inline:
 * the queue simulator's sort calls it for every comparison. */
static inline int lt_qkey_cmp(const struct lt_qkey *a, const struct lt_qkey *b)
{
    if (a->cls > b->cls)
        return -1;
    if (b->cls > a->cls)
        return 1;
    if (a->key > b->key)
        return -1;
    if (b->key > a->key)
        return 1;
    if (a->tie > b->tie)
        return -1;
    if (b->tie > a->tie)
        return 1;
    return 0;
}

/* Does job x (at index ix of the caller's array) go before job y (at iy) at time now_s? The
 * order's rule (lt_qorder_key_job), then the tie rule: earlier arrival, lower id, lower
 * index. */
bool lt_qorder_before(const struct lt_qorder *o, const struct lt_qjob *x, size_t ix,
                      const struct lt_qjob *y, size_t iy, double now_s);

#endif
