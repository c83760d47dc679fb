/* lt_qtest.h -- helpers of the queue tests (test_queue.c, test_qtune.c): a job with an exact
 * estimate and simulator parameters by name. Include after cmocka.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_QTEST_H
#define LT_QTEST_H

#include "lt_qsim.h"
#include "lt_queue.h"

/* Job id arriving at a on n cores for r seconds, estimated exactly, no class. */
static inline struct lt_qjob job(int64_t id, double a, uint32_t n, double r)
{
    return (struct lt_qjob){id, a, n, r, r, -1, NULL};
}

/* The defaults on cores, with the named order, dispatch and backfill (each must exist). */
static inline void params(struct lt_qsim_params *p, uint32_t cores, const char *order,
                          const char *dispatch, const char *backfill)
{
    lt_qsim_params_default(p, cores);
    assert_int_equal(lt_qorder_find(order, &p->order, NULL), 0);
    assert_int_equal(lt_qdispatch_find(dispatch, &p->dispatch, NULL), 0);
    assert_int_equal(lt_qbackfill_find(backfill, &p->backfill, &p->relax_f, NULL), 0);
}

#endif
