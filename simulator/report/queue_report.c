/* queue_report.c -- the table and the HTML report of `lotus-sim queue` (queue_report.h).
 *
 * Design: as the tx and slots reports, everything is in memory. Each column's series goes to
 * q_<k>.dat in a temporary directory DIR/.report-XXXXXX ("time utilisation running" per
 * line), with the script plots.gp; gnuplot runs there (htmlplot.c) and the SVGs are inlined.
 * Order names are the only user text in the script, in single-quoted strings with ' doubled;
 * every string on the page goes through sim_html_puts.
 *
 * SPDX-License-Identifier: MIT
 */
#include "report/queue_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/outfile.h"
#include "report/htmlplot.h"
#include "lt_mem.h"

const struct sim_qmetric sim_qmetrics[] = {
    {"makespan_s", "makespan (the paper's \"Wait\") [s]", 2},
    {"utilisation_pct", "utilisation [%]", 2},
    {"total_wait_s", "total wait [s]", 2},
    {"wait_mean_s", "mean wait [s]", 2},
    {"wait_p50_s", "p50 wait [s]", 2},
    {"wait_p90_s", "p90 wait [s]", 2},
    {"wait_p99_s", "p99 wait [s]", 2},
    {"response_mean_s", "mean response [s]", 2},
    {"bsld_mean", "mean bounded slowdown", 3},
    {"xf_mean", "mean expansion factor", 3},
    {"events", "events", 0},
};

const size_t sim_qn_metrics = sizeof(sim_qmetrics) / sizeof(sim_qmetrics[0]);

const struct sim_qmetric sim_qsla_metrics[SIM_QSLA_ROWS] = {
    {"total_reward", "total reward [SWE-h]", 3},
    {"mean_reward", "mean reward [SWE-h]", 4},
    {"p_negative", "P(reward < 0)", 4},
    {"on_time", "jobs started by d1 (target)", 0},
    {"late", "jobs started after it", 0},
    {"on_time_wait_mean_s", "their mean wait: on time [s]", 2},
    {"late_wait_mean_s", "their mean wait: late [s]", 2},
};

double sim_qmetric_value(size_t k, const struct lt_qsim_summary *s)
{
    const double v[] = {s->makespan_s,  s->utilisation * 100.0, s->total_wait_s,
                        s->wait_mean_s, s->wait_p50_s,          s->wait_p90_s,
                        s->wait_p99_s,  s->response_mean_s,     s->bsld_mean,
                        s->xf_mean,     (double)s->events};
    _Static_assert(sizeof(v) / sizeof(v[0]) == sizeof(sim_qmetrics) / sizeof(sim_qmetrics[0]),
                   "one value per metric");
    return k < sizeof(v) / sizeof(v[0]) ? v[k] : NAN;
}

/* ---- the table ----------------------------------------------------------------------------- */

#define LABEL_W 38

static int col_width(const struct sim_qcol *c)
{
    int w = (int)strlen(c->name) + 2;
    return w < 13 ? 13 : w;
}

void sim_qtable_print(FILE *f, const struct sim_qcol *cols, size_t n)
{
    fprintf(f, "%-*s", LABEL_W, "order");
    for (size_t c = 0; c < n; c++)
        fprintf(f, "%*s", col_width(&cols[c]), cols[c].name);
    fputc('\n', f);
    for (size_t k = 0; k < sim_qn_metrics; k++) {
        fprintf(f, "%-*s", LABEL_W, sim_qmetrics[k].label);
        for (size_t c = 0; c < n; c++)
            fprintf(f, "%*.*f", col_width(&cols[c]), sim_qmetrics[k].digits,
                    sim_qmetric_value(k, cols[c].sum));
        fputc('\n', f);
    }
}

void sim_qsla_table_print(FILE *f, const struct sim_qcol *cols, size_t n)
{
    fprintf(f, "%-*s", LABEL_W, "order");
    for (size_t c = 0; c < n; c++)
        fprintf(f, "%*s", col_width(&cols[c]), cols[c].name);
    fputc('\n', f);
    for (size_t k = 0; k < SIM_QSLA_ROWS; k++) {
        fprintf(f, "%-*s", LABEL_W, sim_qsla_metrics[k].label);
        for (size_t c = 0; c < n; c++) {
            double v = cols[c].sla != NULL ? cols[c].sla[k] : NAN;
            if (isnan(v))
                fprintf(f, "%*s", col_width(&cols[c]), "-");
            else
                fprintf(f, "%*.*f", col_width(&cols[c]), sim_qsla_metrics[k].digits, v);
        }
        fputc('\n', f);
    }
}

/* ---- the plots ----------------------------------------------------------------------------- */

struct qr {
    const char *dir;
    const struct sim_qreport *r;
    char gnuplot[SIM_MAX_PATH];
    char *tmpdir;
    double unit_s;     /* the time axis' unit: 1, 3600 or 86400 s */
    const char *unit;  /* "s", "h", "d" */
    bool *made;        /* per column: its data file holds points */
    bool binned;       /* some series was binned */
    bool made_overlay; /* the overlay plot was drawn */
    bool made_heat;    /* gnuplot ran: the heat maps were drawn */
    struct lt_err *err;
};

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
}

/* The series as steps: every sample, and one more point at the end repeating the last. */
static void series_exact(FILE *f, const struct sim_qcol *c, double cores, double unit_s)
{
    for (size_t i = 0; i < c->n_samples; i++) {
        const struct lt_qsample *s = &c->samples[i];
        fprintf(f, "%.10g %.6g %zu\n", s->time_s / unit_s, s->busy / cores, s->running);
    }
}

/* The series as time-weighted means over SIM_QREPORT_BINS bins from the first to the last
 * sample (sample i holds from its time to the next sample's). */
static int series_binned(FILE *f, const struct sim_qcol *c, double cores, double unit_s,
                         struct lt_err *err)
{
    const struct lt_qsample *s = c->samples;
    size_t n = c->n_samples, nb = SIM_QREPORT_BINS;
    double t0 = s[0].time_s, t1 = s[n - 1].time_s, w = (t1 - t0) / (double)nb;
    double *u = lt_calloc(2 * nb, sizeof(*u)), *r;

    if (u == NULL)
        return oom(err);
    r = u + nb;
    for (size_t i = 0; i + 1 < n && w > 0; i++) {
        double a = s[i].time_s, b = s[i + 1].time_s;
        size_t k = (size_t)((a - t0) / w);
        for (; k < nb && a < b; k++) {
            double end = t0 + (double)(k + 1) * w;
            double e = k + 1 == nb || end > b ? b : end;
            u[k] += (e - a) * s[i].busy / cores;
            r[k] += (e - a) * (double)s[i].running;
            a = e;
        }
    }
    for (size_t k = 0; k < nb; k++)
        fprintf(f, "%.10g %.6g %.6g\n", (t0 + ((double)k + 0.5) * w) / unit_s, w > 0 ? u[k] / w : 0,
                w > 0 ? r[k] / w : 0);
    lt_free(u);
    return 0;
}

static int data_write(struct qr *q, size_t k)
{
    const struct sim_qcol *c = &q->r->cols[k];
    char *path = lt_strfmt("%s/q_%zu.dat", q->tmpdir, k);
    FILE *f;
    int rc = 0;

    if (path == NULL)
        return oom(q->err);
    if ((f = fopen(path, "w")) == NULL) {
        rc = lt_err_set(q->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
        lt_free(path);
        return rc;
    }
    if (c->n_samples <= SIM_QREPORT_MAX_POINTS)
        series_exact(f, c, (double)q->r->cores, q->unit_s);
    else
        rc = series_binned(f, c, (double)q->r->cores, q->unit_s, q->err);
    q->binned = q->binned || c->n_samples > SIM_QREPORT_MAX_POINTS;
    q->made[k] = c->n_samples > 0;
    rc = rc < 0 ? (fclose(f), rc) : sim_close_written(f, path, q->err);
    lt_free(path);
    return rc;
}

/* Column k's heat map data, h_<k>.dat: "alpha gamma cost" at the chosen beta, a blank line
 * after each alpha (gnuplot's grid layout); NaN costs (a failed triplet) are left out. */
static int heat_write(struct qr *q, size_t k)
{
    const struct sim_qcol *c = &q->r->cols[k];
    size_t n = c->axis_n, b = (c->best / n) % n;
    char *path = lt_strfmt("%s/h_%zu.dat", q->tmpdir, k);
    FILE *f;

    if (path == NULL)
        return oom(q->err);
    if ((f = fopen(path, "w")) == NULL) {
        int rc = lt_err_set(q->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
        lt_free(path);
        return rc;
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t g = 0; g < n; g++) {
            double v = c->costs[(a * n + b) * n + g];
            fprintf(f, "%.10g %.10g %.10g\n", c->axis[a], c->axis[g], isfinite(v) ? v : NAN);
        }
        fputc('\n', f);
    }
    int rc = sim_close_written(f, path, q->err);
    lt_free(path);
    return rc;
}

/* The heat map of column k: the cost over (alpha, gamma) at the chosen beta, the chosen
 * triplet marked. */
static void gp_heat(struct qr *q, FILE *f, size_t k)
{
    const struct sim_qcol *c = &q->r->cols[k];
    size_t n = c->axis_n, a = c->best / (n * n), b = (c->best / n) % n, g = c->best % n;

    (void)q;
    fprintf(f,
            "reset\nset encoding utf8\n"
            "set terminal svg size 720,560 dynamic noenhanced font 'sans,11' name 'h_%zu'\n"
            "set output 'h_%zu.svg'\nset view map\nset size ratio -1\n"
            "set xlabel 'alpha (size)'\nset ylabel 'gamma (run time)'\n"
            "set cblabel '",
            k, k);
    sim_gp_puts(f, c->cost_name);
    fprintf(f,
            " (lower is better)'\nset palette rgbformulae 33,13,10\n"
            "set title 'cost over (alpha, gamma) at beta = %.10g'\n"
            "plot 'h_%zu.dat' using 1:2:3 with image notitle, \\\n"
            "     '-' using 1:2 with points pt 7 ps 1.5 lc rgb 'black' title 'chosen (%.10g, "
            "%.10g, %.10g)'\n%.10g %.10g\ne\nset output\n",
            c->axis[b], k, c->axis[a], c->axis[b], c->axis[g], c->axis[a], c->axis[g]);
}

static const char *with(const struct sim_qcol *c)
{
    return c->n_samples <= SIM_QREPORT_MAX_POINTS ? "steps" : "lines";
}

static void gp_head(struct qr *q, FILE *f, const char *name, const char *title_pre,
                    const char *title)
{
    fprintf(f,
            "reset\n"
            "set encoding utf8\n"
            "set terminal svg size 960,420 dynamic noenhanced font 'sans,11' name '%s'\n"
            "set output '%s.svg'\n"
            "set grid\n"
            "set key outside right top\n"
            "set xlabel 'time (%s)'\n"
            "set ylabel 'utilisation'\n"
            "set yrange [0:1.05]\n"
            "set title '%s",
            name, name, q->unit, title_pre);
    sim_gp_puts(f, title);
    fputs("'\n", f);
}

/* Figure 7-9 of column k: utilisation on y1, jobs running on y2. */
static void gp_column(struct qr *q, FILE *f, size_t k)
{
    const struct sim_qcol *c = &q->r->cols[k];
    char name[32];

    snprintf(name, sizeof(name), "q_%zu", k);
    gp_head(q, f, name, "utilisation and jobs running: ", c->name);
    fprintf(f,
            "set y2label 'jobs running'\n"
            "set y2range [0:*]\n"
            "set ytics nomirror\n"
            "set y2tics\n"
            "plot 'q_%zu.dat' using 1:2 with %s lw 1.5 lc 1 title 'utilisation (left)', \\\n"
            "     'q_%zu.dat' using 1:3 axes x1y2 with %s lw 1.2 lc 2 dt 2 title 'jobs running "
            "(right)'\n"
            "set output\n",
            k, with(c), k, with(c));
}

static void gp_overlay(struct qr *q, FILE *f)
{
    const char *sep = "plot ";

    gp_head(q, f, "q_all", "utilisation of every order", "");
    for (size_t k = 0; k < q->r->n_cols; k++) {
        if (!q->made[k])
            continue;
        fprintf(f, "%s'q_%zu.dat' using 1:2 with %s ", sep, k, with(&q->r->cols[k]));
        sim_gp_line_style(f, k);
        fputs(" title '", f);
        sim_gp_puts(f, q->r->cols[k].name);
        fputc('\'', f);
        sep = ", \\\n     ";
        q->made_overlay = true;
    }
    fputs(q->made_overlay ? "\nset output\n" : "set output\n", f);
}

static int plots_make(struct qr *q)
{
    size_t n = q->r->n_cols, m = 0;
    char *path = lt_strfmt("%s/plots.gp", q->tmpdir);
    char(*files)[32] = lt_calloc(2 * n + 1, sizeof(*files));
    const char **fp = lt_calloc(2 * n + 1, sizeof(*fp));
    FILE *f = NULL;
    int rc = 0;

    if (path == NULL || files == NULL || fp == NULL)
        rc = oom(q->err);
    for (size_t k = 0; rc == 0 && k < n; k++)
        rc = data_write(q, k);
    for (size_t k = 0; rc == 0 && k < n; k++)
        if (q->r->cols[k].costs != NULL && q->r->cols[k].axis_n > 1)
            rc = heat_write(q, k);
    if (rc == 0 && (f = fopen(path, "w")) == NULL)
        rc = lt_err_set(q->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
    if (rc == 0) {
        gp_overlay(q, f);
        for (size_t k = 0; k < n; k++) {
            if (q->made[k])
                gp_column(q, f, k);
            if (q->r->cols[k].costs != NULL && q->r->cols[k].axis_n > 1)
                gp_heat(q, f, k);
        }
        rc = sim_close_written(f, path, q->err);
    }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (q->made[k]) {
            snprintf(files[m], sizeof(files[m]), "q_%zu.svg", k);
            fp[m] = files[m];
            m++;
        }
        if (q->r->cols[k].costs != NULL && q->r->cols[k].axis_n > 1) {
            snprintf(files[m], sizeof(files[m]), "h_%zu.svg", k);
            fp[m] = files[m];
            m++;
        }
    }
    if (rc == 0 && q->made_overlay)
        fp[m++] = "q_all.svg";
    if (rc == 0 && m > 0)
        rc = sim_gnuplot_run(q->gnuplot, q->tmpdir, fp, m, q->err);
    q->made_heat = rc == 0 && m > 0;
    lt_free(path);
    lt_free(files);
    lt_free(fp);
    return rc;
}

/* ---- the page ------------------------------------------------------------------------------ */

static void html_table(FILE *f, const struct sim_qreport *r)
{
    fputs("<table>\n<tr><th>order</th>", f);
    for (size_t c = 0; c < r->n_cols; c++) {
        fputs("<th>", f);
        sim_html_puts(f, r->cols[c].name);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t k = 0; k < sim_qn_metrics; k++) {
        fputs("<tr><th>", f);
        sim_html_puts(f, sim_qmetrics[k].label);
        fputs("</th>", f);
        for (size_t c = 0; c < r->n_cols; c++)
            fprintf(f, "<td class=\"n\">%.*f</td>", sim_qmetrics[k].digits,
                    sim_qmetric_value(k, r->cols[c].sum));
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The SLA rows, with what they mean. */
static void html_sla(FILE *f, const struct sim_qreport *r)
{
    fputs("<h2>SLA rewards</h2>\n<p class=\"cap\">Every job has the SLA <code>", f);
    sim_html_puts(f, r->sla);
    fputs("</code> (times written <code>Nx</code> are N &times; the job's estimated run time). "
          "A job's reward is its SLA's reward at its start delay d = first start &minus; "
          "arrival (Betser; docs/queue.md). Late jobs (started after d1, or Example 1's "
          "target) are shown apart: <code>sla-reward</code> starves exactly them.</p>\n"
          "<table>\n<tr><th>order</th>",
          f);
    for (size_t c = 0; c < r->n_cols; c++) {
        fputs("<th>", f);
        sim_html_puts(f, r->cols[c].name);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t k = 0; k < SIM_QSLA_ROWS; k++) {
        fputs("<tr><th>", f);
        sim_html_puts(f, sim_qsla_metrics[k].label);
        fputs("</th>", f);
        for (size_t c = 0; c < r->n_cols; c++) {
            double v = r->cols[c].sla != NULL ? r->cols[c].sla[k] : NAN;
            if (isnan(v))
                fputs("<td class=\"n\">-</td>", f);
            else
                fprintf(f, "<td class=\"n\">%.*f</td>", sim_qsla_metrics[k].digits, v);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static int html_plot(FILE *f, const struct qr *q, const char *svg_name, bool made)
{
    if (q->gnuplot[0] == '\0') {
        sim_html_no_gnuplot(f);
        return 0;
    }
    if (!made) {
        fputs("<p class=\"note\">No plot: no sample (no job).</p>\n", f);
        return 0;
    }
    char *svg = lt_strfmt("%s/%s", q->tmpdir, svg_name);
    int rc = svg ? sim_svg_inline(f, svg, q->err) : oom(q->err);
    lt_free(svg);
    return rc;
}

static void html_head(FILE *f, const struct sim_qreport *r)
{
    sim_html_head(f, "queue", NULL, r->title);
    fputs("<h2>Inputs</h2>\n<table class=\"facts\">\n", f);
    for (size_t k = 0; k < r->n_facts; k++) {
        fputs("<tr><th>", f);
        sim_html_puts(f, r->fact_key[k]);
        fputs("</th><td>", f);
        sim_html_puts(f, r->fact_val[k]);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void html_caption(FILE *f, const struct qr *q)
{
    fputs("<p class=\"cap\">Simon &amp; McGalliard's table for every order side by side. "
          "The makespan (last end &minus; first arrival) is the column the paper calls "
          "\"Wait\"; utilisation = the work &Sigma; n&middot;r over C &times; makespan; total "
          "wait = &Sigma; (start &minus; arrival), a job's start being its first task's. "
          "Bounded slowdown uses &tau; = 10 s. docs/queue.md defines every row.</p>\n",
          f);
    (void)q;
}

static int html_body(FILE *f, struct qr *q)
{
    const struct sim_qreport *r = q->r;
    int rc;

    fputs("<h2>The paper's table</h2>\n", f);
    html_caption(f, q);
    html_table(f, r);
    if (r->sla != NULL)
        html_sla(f, r);
    fputs("<h2>Utilisation of every order</h2>\n<p class=\"cap\">Busy cores / C against "
          "time, one line per order; lines differ in colour and dash so that lines that "
          "coincide stay visible.",
          f);
    if (q->binned)
        fprintf(f,
                " Series of more than %d samples are drawn as time-weighted means over "
                "%d equal bins (timeseries.csv has every sample).",
                SIM_QREPORT_MAX_POINTS, SIM_QREPORT_BINS);
    fputs("</p>\n", f);
    if ((rc = html_plot(f, q, "q_all.svg", q->made_overlay)) < 0)
        return rc;
    for (size_t k = 0; k < r->n_cols; k++) {
        char svg[32];
        fputs("<h2>", f);
        sim_html_puts(f, r->cols[k].name);
        fputs(": utilisation and jobs running</h2>\n<p class=\"cap\">As the paper's Figures "
              "7&ndash;9: utilisation (0..1, left axis) and jobs with a task running (right "
              "axis) against time.</p>\n",
              f);
        snprintf(svg, sizeof(svg), "q_%zu.svg", k);
        if ((rc = html_plot(f, q, svg, q->made[k])) < 0)
            return rc;
        if (r->cols[k].costs == NULL || r->cols[k].axis_n < 2)
            continue;
        fputs("<h2>", f);
        sim_html_puts(f, r->cols[k].name);
        fputs(": the search's cost over the grid</h2>\n<p class=\"cap\">Each triplet's cost "
              "on the whole workload (grid.csv has all of them), over (alpha, gamma) at the "
              "beta of the triplet chosen, which is marked.</p>\n",
              f);
        snprintf(svg, sizeof(svg), "h_%zu.svg", k);
        if ((rc = html_plot(f, q, svg, q->made_heat)) < 0)
            return rc;
    }
    return 0;
}

static int html_page(FILE *f, void *ctx)
{
    struct qr *q = ctx;
    html_head(f, q->r);
    return html_body(f, q);
}

static int html_write(struct qr *q)
{
    return sim_html_report(q->dir, q->r->version, html_page, q, q->err);
}

static int check_args(const char *dir, const struct sim_qreport *r, struct lt_err *err)
{
    if (dir == NULL || r == NULL || r->n_cols == 0 || r->cols == NULL || r->cores == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "queue report: no column or no core");
    for (size_t k = 0; k < r->n_cols; k++) {
        const char *p = r->cols[k].name;
        bool bad = p == NULL || *p == '\0' || r->cols[k].sum == NULL;
        for (; !bad && *p != '\0'; p++)
            bad = (unsigned char)*p < 0x20 || *p == 0x7f;
        if (bad)
            return lt_err_set(err, LT_EINVAL, 0, 0, "queue report: column %zu has a bad name", k);
    }
    return 0;
}

/* The time axis' unit: seconds up to 2 h of makespan, hours up to 2 days, then days. */
static void pick_unit(struct qr *q)
{
    double m = 0;

    for (size_t k = 0; k < q->r->n_cols; k++)
        m = q->r->cols[k].sum->makespan_s > m ? q->r->cols[k].sum->makespan_s : m;
    q->unit_s = m > 2 * 86400.0 ? 86400.0 : m > 2 * 3600.0 ? 3600.0 : 1.0;
    q->unit = m > 2 * 86400.0 ? "d" : m > 2 * 3600.0 ? "h" : "s";
}

int sim_qreport_write(const char *dir, const struct sim_qreport *r, bool *plotted,
                      struct lt_err *err)
{
    struct qr q;
    int rc;

    *plotted = false;
    if ((rc = check_args(dir, r, err)) < 0)
        return rc;
    memset(&q, 0, sizeof(q));
    q.dir = dir;
    q.r = r;
    q.err = err;
    pick_unit(&q);
    if ((q.made = lt_calloc(r->n_cols, sizeof(*q.made))) == NULL)
        return oom(err);
    if (sim_gnuplot_find(q.gnuplot, sizeof(q.gnuplot)))
        rc = sim_tmpdir_make(dir, &q.tmpdir, err);
    if (rc == 0 && q.tmpdir != NULL)
        rc = plots_make(&q);
    if (rc == 0)
        rc = html_write(&q);
    *plotted = rc == 0 && q.tmpdir != NULL && q.made_overlay;
    sim_tmpdir_remove(&q.tmpdir);
    lt_free(q.made);
    if (rc < 0) { /* no stale page that this run does not describe */
        char *final = lt_strfmt("%s/report.html", dir);
        if (final != NULL)
            remove(final);
        lt_free(final);
    }
    return rc;
}
