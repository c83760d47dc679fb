/* whatif_report.h -- the one-page HTML report of `lotus-sim whatif` (DIR/report.html;
 * docs/whatif.md "The report").
 *
 * The page holds the command box, the inputs' facts, a table per --shrink level and SLA
 * setting, the warning when every replica gave the same answer, and the plots of Betser's
 * Results pane [B L387]: the start-delay CDF, one curve per --shrink level (censored replicas
 * stay in the denominator: a curve ends below 1, and the page states P(not started by H)); the
 * reward CDF, one curve per SLA setting and level; and, per SLA setting, its reward curve r(d)
 * with the empirical start delays of every level under it as a strip, the panels side by side
 * as Betser's Figure 3-6 proposes [B L394, L407]. gnuplot runs as a child (htmlplot.h); without
 * it the page carries a note instead.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_WHATIF_REPORT_H
#define SIM_WHATIF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"

/* One --shrink level (borrowed). */
struct sim_wreport_level {
    double shrink_pct;
    const double *delays; /* n start delays (s), ascending, censored ones +inf at the end */
    uint64_t censored;
};

/* One SLA setting (borrowed). */
struct sim_wreport_sla {
    const char *name, *spec;
    double knee_s;                /* d1, d0 or the target: marked on the curve */
    const double *curve_d;        /* r(d) sampled: n_curve delays (s), ascending */
    const double *curve_r;        /* and the rewards there */
    size_t n_curve;               /* >= 2 */
    const double *const *rewards; /* per level: n rewards, ascending */
    const double *mean;           /* per level: E[reward] */
    const double *p_knee;         /* per level: P(start <= knee) */
    const double *p_negative;     /* per level: P(reward < 0) */
    const bool *upper_bound;      /* per level: E[reward] is an upper bound */
    /* Per level: this setting's own n start delays (ascending, censored +inf at the end) when
     * each setting has its own replicas (an SLA order with --sla-annotate); NULL: the levels'. */
    const double *const *delays;
    const uint64_t *censored; /* per level, with delays: its censored replicas */
};

struct sim_wreport {
    uint64_t n; /* replicas, >= 1 */
    double horizon_s;
    const struct sim_wreport_level *levels;
    size_t n_levels; /* >= 1 */
    const struct sim_wreport_sla *slas;
    size_t n_slas;               /* 0: no --sla (no reward plots) */
    const char *const *fact_key; /* the inputs' facts, a two-column table */
    const char *const *fact_val;
    size_t n_facts;
    const char *note;    /* a paragraph under the facts (the order's note), or NULL */
    bool all_same;       /* every replica of some level gave the same answer */
    const char *title;   /* the command line, in the command box; NULL: none */
    const char *version; /* lotus's version in the footer; NULL: none */
};

/* Writes DIR/report.html (through report.html.tmp). Returns 0, or LT_EINVAL (no replica or
 * level, a bad name), LT_EIO naming the file (quoting gnuplot when it fails), LT_ENOMEM; on
 * failure no report.html is left. gnuplot missing from PATH is not an error; *plotted tells
 * whether the plots were drawn. */
LT_MUST_CHECK int sim_wreport_write(const char *dir, const struct sim_wreport *r, bool *plotted,
                                    struct lt_err *err);

#endif
