/* tx_report.h -- the one-page HTML report of `lotus-sim tx` (DIR/report.html).
 *
 * One page for a T(x) sweep: the command box, the sweep's facts, the two T(x) tables (tasks
 * and jobs completed per x and policy; mean +- 95 % CI half-width over the seeds when there
 * are several) and two gnuplot SVG plots inlined, T(x) for tasks and for jobs: x on the
 * horizontal axis, one line per policy in the replay report's styles (sim_gp_line_style:
 * colour, dash and point type) with error bars when there are several seeds; each policy's
 * points are shifted by a small x offset so that coinciding lines and bars stay visible.
 * The cells are in memory (tx and merge compute them from the runs' summary.json), so nothing
 * is read back from disk. With tx --compare, a last section holds Stein et al.'s comparison
 * tables beside the slides' (compare.h). gnuplot runs as a child process (htmlplot.h);
 * without it the page carries a note in place of the plots.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_TX_REPORT_H
#define SIM_TX_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "replay/compare.h"

/* One (x, policy) cell of a T(x) table: the mean and the 95 % half-width over the n_ok seeds
 * whose run succeeded (n_ok 0: every run of the cell failed; half is not shown when n_ok < 2). */
struct sim_tx_cell {
    double mean;
    double half;
    size_t n_ok;
};

/* A T(x) sweep as the report sees it (all borrowed). Cells are [xi * n_policy + k]. */
struct sim_tx_table {
    const double *x; /* the machine percentages, n_x >= 1 */
    size_t n_x;
    const char *const *policy; /* plain names: not empty, no control character */
    size_t n_policy;           /* >= 1 */
    uint64_t seed;             /* the first seed */
    uint64_t seeds;            /* seeds per cell, >= 1 */
    const struct sim_tx_cell *tasks;
    const struct sim_tx_cell *jobs;
    const struct sim_cmp_result *compare; /* tx --compare's tables, or NULL: no such section */
};

/* Writes DIR/report.html (to report.html.tmp, renamed when complete) for the sweep t; title
 * (the command line) is shown at the top in the command box, NULL shows none; version (the
 * lotus version) in the footer, NULL shows none. Returns 0, or LT_EINVAL (no x or policy, a
 * bad name, seeds 0), LT_EIO naming the file (and quoting gnuplot when it fails), LT_ENOMEM;
 * on failure no report.html (a stale one included), report.html.tmp nor temporary directory
 * is left. gnuplot missing from PATH is not an error (the page says so); *plotted tells
 * whether the plots were drawn. */
LT_MUST_CHECK int sim_tx_report_write(const char *dir, const struct sim_tx_table *t,
                                      const char *title, const char *version, bool *plotted,
                                      struct lt_err *err);

#endif
