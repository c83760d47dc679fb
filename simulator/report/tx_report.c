/* tx_report.c -- the HTML report of `lotus-sim tx` (tx_report.h).
 *
 * Design: the cells are in memory, as for the slots report. Each policy's points go to
 * tx_<k>.dat in a temporary directory DIR/.report-XXXXXX ("x mean half" per line, x shifted
 * by the policy's offset; a blank line where a cell failed, which breaks the line), with the
 * script plots.gp; gnuplot runs there (htmlplot.c) and its two SVGs are inlined. Policy names
 * are the only user text in the script, in single-quoted strings with ' doubled; every
 * string on the page goes through sim_html_puts.
 *
 * SPDX-License-Identifier: MIT
 */
#include "report/tx_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/outfile.h"
#include "report/htmlplot.h"
#include "lt_mem.h"

/* Each policy's points are shifted by (k - (n-1)/2) * OFFSET of the x span (or of 1 for a
 * single x): 14 policies over x = 20..100 spread over 3.6 x units, enough for bars that
 * coincide to sit side by side, too little to be mistaken for another x. */
#define TXR_OFFSET 0.0035

enum { PLOT_TASKS, PLOT_JOBS, N_PLOTS };

static const char *const what[N_PLOTS] = {"tasks", "jobs"};
static const char *const plot_file[N_PLOTS] = {"tx_tasks.svg", "tx_jobs.svg"};
static const char *const plot_name[N_PLOTS] = {"tx_tasks", "tx_jobs"};

struct txr {
    const char *dir;
    const struct sim_tx_table *t;
    char gnuplot[SIM_MAX_PATH];
    char *tmpdir;
    bool made[N_PLOTS];
    struct lt_err *err;
};

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
}

static const struct sim_tx_cell *cells(const struct sim_tx_table *t, int w)
{
    return w == PLOT_TASKS ? t->tasks : t->jobs;
}

/* Policy k's x offset. */
static double x_shift(const struct sim_tx_table *t, size_t k)
{
    double lo = t->x[0], hi = t->x[0];

    for (size_t xi = 1; xi < t->n_x; xi++) {
        lo = t->x[xi] < lo ? t->x[xi] : lo;
        hi = t->x[xi] > hi ? t->x[xi] : hi;
    }
    return ((double)k - (double)(t->n_policy - 1) / 2.0) * TXR_OFFSET * (hi > lo ? hi - lo : 1.0);
}

/* ---- the plots ----------------------------------------------------------------------------- */

/* tx_<w>_<k>.dat: "x mean half" per x of policy k (a blank line for a failed cell); sets
 * *any when it holds a point. */
static int data_write(struct txr *r, int w, size_t k, bool *any)
{
    const struct sim_tx_table *t = r->t;
    char *path = lt_strfmt("%s/tx_%d_%zu.dat", r->tmpdir, w, k);
    FILE *f;

    *any = false;
    if (path == NULL)
        return oom(r->err);
    if ((f = fopen(path, "w")) == NULL) {
        int rc = lt_err_set(r->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
        lt_free(path);
        return rc;
    }
    for (size_t xi = 0; xi < t->n_x; xi++) {
        const struct sim_tx_cell *c = &cells(t, w)[xi * t->n_policy + k];
        if (c->n_ok == 0) {
            fputc('\n', f);
            continue;
        }
        fprintf(f, "%.6g %.17g %.17g\n", t->x[xi] + x_shift(t, k), c->mean,
                c->n_ok > 1 && isfinite(c->half) ? c->half : 0.0);
        *any = true;
    }
    int rc = sim_close_written(f, path, r->err);
    lt_free(path);
    return rc;
}

/* Plot w: one line per policy with a point, error bars when there are several seeds. */
static int gp_plot(struct txr *r, FILE *f, int w)
{
    const struct sim_tx_table *t = r->t;
    const char *sep = "plot ";
    bool any;
    int rc;

    fprintf(f,
            "reset\n"
            "set encoding utf8\n"
            "set terminal svg size 960,480 dynamic noenhanced font 'sans,11' name '%s'\n"
            "set output '%s'\n"
            "set grid\n"
            "set key outside right top\n"
            "set xlabel 'x: machines kept (%%)'\n"
            "set ylabel '%s completed'\n"
            "set yrange [0:*]\n"
            "set offsets graph 0.03, graph 0.03, graph 0.05, 0\n"
            "set title 'T(x): %s completed%s'\n",
            plot_name[w], plot_file[w], what[w], what[w], t->seeds > 1 ? ", mean and 95 % CI" : "");
    for (size_t k = 0; k < t->n_policy; k++) {
        if ((rc = data_write(r, w, k, &any)) < 0)
            return rc;
        if (!any)
            continue;
        fprintf(f, "%s'tx_%d_%zu.dat' using 1:2%s with %s ", sep, w, k, t->seeds > 1 ? ":3" : "",
                t->seeds > 1 ? "yerrorlines" : "linespoints");
        sim_gp_line_style(f, k);
        fprintf(f, " pt %zu ps 0.8 title '", sim_gp_point_type(k));
        sim_gp_puts(f, t->policy[k]);
        fputc('\'', f);
        sep = ", \\\n     ";
        r->made[w] = true;
    }
    fputs(r->made[w] ? "\nset output\n" : "set output\n", f);
    return 0;
}

static int plots_make(struct txr *r)
{
    char *path = lt_strfmt("%s/plots.gp", r->tmpdir);
    const char *files[N_PLOTS];
    size_t n = 0;
    FILE *f;
    int rc = 0;

    if (path == NULL)
        return oom(r->err);
    if ((f = fopen(path, "w")) == NULL) {
        rc = lt_err_set(r->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
        lt_free(path);
        return rc;
    }
    for (int w = 0; w < N_PLOTS && rc == 0; w++)
        rc = gp_plot(r, f, w);
    if (rc == 0)
        rc = sim_close_written(f, path, r->err);
    else
        fclose(f);
    lt_free(path);
    for (int w = 0; w < N_PLOTS; w++)
        if (r->made[w])
            files[n++] = plot_file[w];
    if (rc == 0 && n > 0)
        rc = sim_gnuplot_run(r->gnuplot, r->tmpdir, files, n, r->err);
    return rc;
}

/* ---- the page ------------------------------------------------------------------------------ */

/* A cell as stdout prints it: "-" (failed), "M", "M ± H"; " (n)" when fewer seeds succeeded. */
static void fmt_cell(char *buf, size_t cap, const struct sim_tx_table *t,
                     const struct sim_tx_cell *c)
{
    char cnt[32] = "";

    if (t->seeds > 1 && c->n_ok < t->seeds)
        snprintf(cnt, sizeof(cnt), " (%zu)", c->n_ok);
    if (c->n_ok == 0)
        snprintf(buf, cap, "-");
    else if (t->seeds == 1 || c->n_ok == 1)
        snprintf(buf, cap, "%.0f%s", c->mean, cnt);
    else
        snprintf(buf, cap, "%.0f \xc2\xb1 %.0f%s", c->mean, c->half, cnt);
}

static void html_table(FILE *f, const struct sim_tx_table *t, int w)
{
    char buf[96];

    fputs("<table>\n<tr><th>x (%)</th>", f);
    for (size_t k = 0; k < t->n_policy; k++) {
        fputs("<th>", f);
        sim_html_puts(f, t->policy[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t xi = 0; xi < t->n_x; xi++) {
        fprintf(f, "<tr><th>%g</th>", t->x[xi]);
        for (size_t k = 0; k < t->n_policy; k++) {
            fmt_cell(buf, sizeof(buf), t, &cells(t, w)[xi * t->n_policy + k]);
            fputs("<td class=\"n\">", f);
            sim_html_puts(f, buf);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static int html_plot(FILE *f, const struct txr *r, int w)
{
    if (r->gnuplot[0] == '\0') {
        sim_html_no_gnuplot(f);
        return 0;
    }
    if (!r->made[w]) {
        fputs("<p class=\"note\">No plot: every run failed.</p>\n", f);
        return 0;
    }
    char *svg = lt_strfmt("%s/%s", r->tmpdir, plot_file[w]);
    int rc = svg ? sim_svg_inline(f, svg, r->err) : oom(r->err);
    lt_free(svg);
    return rc;
}

static void html_head(FILE *f, const struct sim_tx_table *t, const char *title)
{
    sim_html_head(f, "tx", NULL, title);
    fputs("<h2>Sweep</h2>\n<table class=\"facts\">\n<tr><th>policies</th><td>", f);
    for (size_t k = 0; k < t->n_policy; k++) {
        fputs(k ? ", " : "", f);
        sim_html_puts(f, t->policy[k]);
    }
    fputs("</td></tr>\n<tr><th>x (% of the machines)</th><td>", f);
    for (size_t xi = 0; xi < t->n_x; xi++)
        fprintf(f, "%s%g", xi ? ", " : "", t->x[xi]);
    if (t->seeds > 1)
        fprintf(f, "</td></tr>\n<tr><th>seeds</th><td>%" PRIu64 " (%" PRIu64 "..%" PRIu64 ")",
                t->seeds, t->seed, t->seed + t->seeds - 1);
    else
        fprintf(f, "</td></tr>\n<tr><th>seed</th><td>%" PRIu64, t->seed);
    fputs("</td></tr>\n</table>\n", f);
}

static int html_write(struct txr *r, const char *title, const char *version)
{
    static const char *const heading[N_PLOTS] = {"T(x): tasks completed", "T(x): jobs completed"};
    const struct sim_tx_table *t = r->t;
    char *final = lt_strfmt("%s/report.html", r->dir);
    char *tmp = NULL; /* "<final>.tmp", from sim_tmp_open; freed by sim_tmp_commit */
    FILE *f;
    int rc = 0;

    if (final == NULL)
        return oom(r->err);
    if ((f = sim_tmp_open(final, &tmp, r->err)) == NULL) {
        lt_free(final);
        return r->err->code;
    }
    html_head(f, t, title);
    for (int w = 0; w < N_PLOTS && rc == 0; w++) {
        fprintf(f, "<h2>%s</h2>\n<p class=\"cap\">", heading[w]);
        if (t->seeds > 1)
            fprintf(f,
                    "%s completed with x %% of the machines: mean \xc2\xb1 95 %% confidence "
                    "half-width (Student t) over the %" PRIu64 " seeds; \"(n)\": only n seeds "
                    "succeeded; \"-\": every run failed. The plot's bars are the half-widths.",
                    what[w], t->seeds);
        else
            fprintf(f, "%s completed with x %% of the machines; \"-\": the run failed.", what[w]);
        fputs(" Each policy's points are shifted by a small x offset so that lines that "
              "coincide stay visible.</p>\n",
              f);
        html_table(f, t, w);
        rc = html_plot(f, r, w);
    }
    if (t->compare != NULL)
        sim_cmp_html(f, t->compare);
    sim_html_footer(f, version);
    rc = sim_tmp_commit(f, tmp, final, rc, r->err);
    lt_free(final);
    return rc;
}

static int check_args(const char *dir, const struct sim_tx_table *t, struct lt_err *err)
{
    if (dir == NULL || t == NULL || t->n_x == 0 || t->n_policy == 0 || t->seeds == 0 ||
        t->x == NULL || t->policy == NULL || t->tasks == NULL || t->jobs == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "tx report: no x, no policy or no seed");
    for (size_t k = 0; k < t->n_policy; k++) {
        const char *p = t->policy[k];
        bool bad = p == NULL || *p == '\0';
        for (; !bad && *p != '\0'; p++)
            bad = (unsigned char)*p < 0x20 || *p == 0x7f;
        if (bad)
            return lt_err_set(err, LT_EINVAL, 0, 0, "tx report: policy %zu has a bad name", k);
    }
    return 0;
}

int sim_tx_report_write(const char *dir, const struct sim_tx_table *t, const char *title,
                        const char *version, bool *plotted, struct lt_err *err)
{
    struct txr r;
    int rc;

    *plotted = false;
    if ((rc = check_args(dir, t, err)) < 0)
        return rc;
    memset(&r, 0, sizeof(r));
    r.dir = dir;
    r.t = t;
    r.err = err;
    if (sim_gnuplot_find(r.gnuplot, sizeof(r.gnuplot)))
        rc = sim_tmpdir_make(dir, &r.tmpdir, err);
    if (rc == 0 && r.tmpdir != NULL)
        rc = plots_make(&r);
    if (rc == 0)
        rc = html_write(&r, title, version);
    *plotted = rc == 0 && r.tmpdir != NULL && (r.made[PLOT_TASKS] || r.made[PLOT_JOBS]);
    sim_tmpdir_remove(&r.tmpdir);
    if (rc < 0) { /* no stale page that the sweep no longer describes */
        char *final = lt_strfmt("%s/report.html", dir);
        if (final != NULL)
            remove(final);
        lt_free(final);
    }
    return rc;
}
