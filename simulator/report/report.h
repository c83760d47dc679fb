/* report.h -- the one-page HTML report of a replay run (DIR/report.html).
 *
 * sim_report_write reads the files `lotus-sim replay` wrote for each policy (DIR/<p>/
 * summary.json, timeseries.csv, waiting.csv; docs/simulator.md) and writes one self-contained
 * page: the run facts, a table of the key metrics of every policy side by side, and four
 * gnuplot SVG plots inlined (queue size, utilisation, waiting-time CDF per priority,
 * fragmentation). gnuplot runs as a child process; without it the page carries a note in
 * place of the plots.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "lt_err.h"

/* Writes DIR/report.html from DIR/<p>/summary.json, DIR/<p>/timeseries.csv and
 * DIR/<p>/waiting.csv for each policy p of policies[0..n-1]; returns 0 or a negative
 * LT_E* code with err set (lt_err.h: LT_EIO naming the file, LT_EPARSE for a malformed
 * input file naming file:line, LT_ENOMEM). title is shown at the top (e.g. the command
 * line); NULL shows none.
 *
 * Arguments: dir and policies are borrowed; n >= 1; every name must be a plain directory
 * name (not empty, no '/', no control character, not "." or "..") or LT_EINVAL.
 * Errors: LT_EIO "cannot open 'PATH': ..." for a missing or unreadable input, and when
 * gnuplot is found but fails (the message quotes its first error line); LT_EPARSE with
 * err->source = the input file and err->line (and err->column for a CSV field) for a
 * malformed file, a CSV header that differs from the documented one, or a summary.json
 * key that is missing or of the wrong type; LT_ENOMEM.
 * gnuplot missing from PATH is not an error: the page is written with a note in place of
 * the plots and 0 is returned (sim_report_has_gnuplot tells the caller, to warn).
 * Files: report.html is written to report.html.tmp and renamed when complete; gnuplot's
 * data and script go to a temporary directory DIR/.report-XXXXXX that is always removed.
 * On failure neither report.html (a stale one included) nor any temporary file is left. */
LT_MUST_CHECK int sim_report_write(const char *dir, const char *const *policies, size_t n,
                                   const char *title, struct lt_err *err);

/* True when an executable `gnuplot` is on PATH, i.e. when sim_report_write will draw the
 * plots. */
bool sim_report_has_gnuplot(void);

#endif
