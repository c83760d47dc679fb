/* queue_report.h -- the table and the one-page HTML report of `lotus-sim queue`
 * (DIR/report.html), and the metric rows they share with stdout, table.csv and summary.json.
 *
 * A column is one order's run (a fixed or composite order today; a self-tuning one is just
 * another column): its name, its summary (eviction/lt_qsim.h) and the time series of its
 * on_sample callback. The page holds the command box, the inputs' facts, the paper's table
 * for every column side by side, one plot overlaying every column's utilisation (the line
 * styles of sim_gp_line_style, so lines that coincide stay visible) and, per column, the plot
 * of the paper's Figures 7-9: utilisation (0..1, left axis) and jobs running (right axis)
 * against time. A series longer than SIM_QREPORT_MAX_POINTS samples is plotted as
 * time-weighted means over SIM_QREPORT_BINS equal bins (the page says so); the CSV keeps every
 * sample. gnuplot runs as a child (htmlplot.h); without it the page carries a note instead.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_QUEUE_REPORT_H
#define SIM_QUEUE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lt_err.h"
#include "lt_qsim.h"

#define SIM_QREPORT_MAX_POINTS 4000 /* samples plotted as they are (steps) */
#define SIM_QREPORT_BINS       2000 /* bins of a longer series */

/* One row of the paper's table (stdout, report.html, table.csv, summary.json "metrics"). */
struct sim_qmetric {
    const char *key;   /* table.csv and summary.json name: "makespan_s" */
    const char *label; /* the table's row label */
    int digits;        /* decimals on stdout and in the page */
};

extern const struct sim_qmetric sim_qmetrics[];
extern const size_t sim_qn_metrics;

/* The value of metric k of sum (utilisation in %, events as a double). */
double sim_qmetric_value(size_t k, const struct lt_qsim_summary *sum);

/* The SLA rows (lotus-sim queue --sla; docs/queue.md): stdout, report.html, table.csv and
 * summary.json "sla". A row that does not apply to the SLA's kind (no deadline in
 * cheap-and-simple) holds NaN: "-" in the tables, null in JSON, absent from table.csv. */
#define SIM_QSLA_ROWS 7
extern const struct sim_qmetric sim_qsla_metrics[SIM_QSLA_ROWS];

/* One column: an order's run (all borrowed). */
struct sim_qcol {
    const char *name; /* the order's name: not empty, no control character */
    const struct lt_qsim_summary *sum;
    const struct lt_qsample *samples; /* in time order */
    size_t n_samples;
    /* dynamic-static: the search's grid, drawn as a heat map of the cost over (alpha, gamma)
     * at the chosen beta. costs[(a * n + b) * n + g] for axis values axis[0..n-1]; best is the
     * chosen triplet's index; cost_name labels the colour scale. costs NULL: no heat map. */
    const double *costs;
    const double *axis;
    size_t axis_n, best;
    const char *cost_name;
    const double *sla; /* SIM_QSLA_ROWS values (sim_qsla_metrics), or NULL: no --sla */
};

/* Prints the paper's table for the n columns to f (a label column, then one per column). */
void sim_qtable_print(FILE *f, const struct sim_qcol *cols, size_t n);

/* Prints the SLA rows for the n columns to f, as sim_qtable_print ("-" for NaN). */
void sim_qsla_table_print(FILE *f, const struct sim_qcol *cols, size_t n);

/* What the report shows besides the columns (all borrowed). */
struct sim_qreport {
    const struct sim_qcol *cols;
    size_t n_cols;               /* >= 1 */
    uint32_t cores;              /* C >= 1 */
    const char *const *fact_key; /* the inputs' facts, shown as a two-column table */
    const char *const *fact_val;
    size_t n_facts;
    const char *title;   /* the command line, in the command box; NULL: none */
    const char *version; /* lotus's version in the footer; NULL: none */
    const char *sla;     /* the --sla text: the page gets the SLA table; NULL: none */
};

/* Writes DIR/report.html (through report.html.tmp, renamed when complete). Returns 0, or
 * LT_EINVAL (no column, a bad name, cores 0), LT_EIO naming the file (quoting gnuplot when it
 * fails), LT_ENOMEM; on failure no report.html, report.html.tmp nor temporary directory is
 * left. gnuplot missing from PATH is not an error; *plotted tells whether plots were drawn. */
LT_MUST_CHECK int sim_qreport_write(const char *dir, const struct sim_qreport *r, bool *plotted,
                                    struct lt_err *err);

#endif
