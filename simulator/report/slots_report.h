/* slots_report.h -- the one-page HTML report of `lotus-sim slots` (DIR/report.html).
 *
 * One page for one run or a sweep: the run facts, a table of every run's metrics side by
 * side, and four gnuplot SVG plots inlined (mean response time per class; the response-time
 * distribution of the gratis classes 0-1 and of production 9-11; evictions per task). gnuplot
 * runs as a child process (htmlplot.h); without it the page carries a note in place of the
 * plots.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_SLOTS_REPORT_H
#define SIM_SLOTS_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lt_err.h"
#include "lt_slotsim.h"

/* One run as the report sees it (all borrowed). */
struct sim_slots_run {
    const char *name;                  /* plain name: no '/', no control character */
    const json_t *summary;             /* the run's summary.json object */
    const struct lt_slot_task *tasks;  /* the workload, n tasks */
    const struct lt_slot_outcome *out; /* their outcomes */
    size_t n;
};

/* Writes DIR/report.html (to report.html.tmp, renamed when complete) for runs[0..n_runs-1];
 * title (e.g. the command line) is shown at the top, NULL shows none. Returns 0, or LT_EINVAL
 * (no run, a bad name), LT_EIO naming the file (and quoting gnuplot when it fails), LT_ENOMEM;
 * on failure no report.html.tmp nor temporary directory is left. gnuplot missing from PATH is
 * not an error (the page says so); *plotted tells whether the plots were drawn. */
LT_MUST_CHECK int sim_slots_report_write(const char *dir, const struct sim_slots_run *runs,
                                         size_t n_runs, const char *title, bool *plotted,
                                         struct lt_err *err);

#endif
