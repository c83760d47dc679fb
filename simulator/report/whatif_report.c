/* whatif_report.c -- `lotus-sim whatif`'s report.html (whatif_report.h): the start-delay CDF
 * per level, the reward CDF per SLA setting and level, and each setting's reward curve with
 * the start delays under it, drawn by gnuplot (htmlplot.h) and inlined as SVG.
 *
 * SPDX-License-Identifier: MIT
 */
#include "report/whatif_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/outfile.h"
#include "lt_mem.h"
#include "report/htmlplot.h"

struct wr {
    const char *dir;
    const struct sim_wreport *r;
    char gnuplot[SIM_MAX_PATH];
    char *tmpdir;
    double x_max_s;   /* the delay axes' end (axis_pick) */
    double unit_s;    /* their unit: 1, 60 or 3600 s */
    const char *unit; /* "s", "min" or "h" */
    bool made;        /* gnuplot ran */
    struct lt_err *err;
};

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
}

/* ---- the plots ----------------------------------------------------------------------------- */

static FILE *dat_open(struct wr *q, const char *name, char **path)
{
    FILE *f;
    *path = lt_strfmt("%s/%s", q->tmpdir, name);
    if (*path == NULL) {
        oom(q->err);
        return NULL;
    }
    if ((f = fopen(*path, "w")) == NULL)
        lt_err_set(q->err, LT_EIO, 0, 0, "cannot create '%s': %s", *path, strerror(errno));
    return f;
}

/* An empirical CDF of n sorted values (+inf: not reached) as steps: (v_i, (i + 1) / n), from
 * (x0, 0); the curve stops at the last finite value, below 1 when some are +inf, then runs flat
 * to x_end. */
static int cdf_write(struct wr *q, const char *name, const double *v, uint64_t n, double scale,
                     double x0, double x_end)
{
    char *path;
    FILE *f = dat_open(q, name, &path);
    int rc;
    if (f == NULL) {
        lt_free(path);
        return q->err->code;
    }
    uint64_t k = 0;
    fprintf(f, "%.9g 0\n", x0 / scale);
    for (; k < n && isfinite(v[k]); k++)
        fprintf(f, "%.9g %.9g\n", v[k] / scale, (double)(k + 1) / (double)n);
    if (isfinite(x_end))
        fprintf(f, "%.9g %.9g\n", x_end / scale, (double)k / (double)n);
    rc = sim_close_written(f, path, q->err);
    lt_free(path);
    return rc;
}

static void gp_head(FILE *f, const char *name, int w, const char *xlabel, const char *ylabel,
                    const char *title)
{
    fprintf(f,
            "reset\nset encoding utf8\n"
            "set terminal svg size %d,380 dynamic noenhanced font 'sans,11' name '%s'\n"
            "set output '%s.svg'\nset grid\nset key bottom right\n",
            w, name, name);
    fputs("set xlabel '", f);
    sim_gp_puts(f, xlabel);
    fputs("'\nset ylabel '", f);
    sim_gp_puts(f, ylabel);
    fputs("'\nset title '", f);
    sim_gp_puts(f, title);
    fputs("'\n", f);
}

/* Do the settings have their own start delays (their own replicas)? */
static bool own_starts(const struct sim_wreport *r)
{
    return r->n_slas > 0 && r->slas[0].delays != NULL;
}

/* The start delays setting s's rewards come from, at level lv. */
static const double *sla_delays(const struct sim_wreport *r, size_t s, size_t lv)
{
    return r->slas[s].delays != NULL ? r->slas[s].delays[lv] : r->levels[lv].delays;
}

static void level_title(FILE *f, const struct sim_wreport *r, size_t lv)
{
    fprintf(f, " title 'shrink %g%%'", r->levels[lv].shrink_pct);
    (void)r;
}

static int gp_start(struct wr *q, FILE *f)
{
    const struct sim_wreport *r = q->r;
    char xl[64];
    int rc = 0;
    snprintf(xl, sizeof(xl), "start delay (%s)", q->unit);
    gp_head(f, "w_start", 960, xl, "share of replicas started", "start-delay CDF per level");
    fprintf(f, "set xrange [0:%.9g]\nset yrange [0:1.05]\n", q->x_max_s / q->unit_s);
    if (r->horizon_s <= q->x_max_s)
        fprintf(f, "set arrow from %.9g,0 to %.9g,1.05 nohead dt 3\n", r->horizon_s / q->unit_s,
                r->horizon_s / q->unit_s);
    size_t ns = own_starts(r) ? r->n_slas : 1, i = 0;
    for (size_t s = 0; s < ns && rc == 0; s++)
        for (size_t lv = 0; lv < r->n_levels && rc == 0; lv++, i++) {
            char name[64];
            snprintf(name, sizeof(name), "start_%zu_%zu.dat", s, lv);
            rc = cdf_write(q, name, own_starts(r) ? sla_delays(r, s, lv) : r->levels[lv].delays,
                           r->n, q->unit_s, 0, q->x_max_s);
            fprintf(f, "%s'%s' using 1:2 with steps ", i ? ", \\\n     " : "plot ", name);
            sim_gp_line_style(f, i);
            if (own_starts(r)) {
                fputs(" title '", f);
                sim_gp_puts(f, r->slas[s].name);
                fprintf(f, ", shrink %g%%'", r->levels[lv].shrink_pct);
            } else {
                level_title(f, r, lv);
            }
        }
    fputs("\nset output\n", f);
    return rc;
}

static int gp_reward(struct wr *q, FILE *f)
{
    const struct sim_wreport *r = q->r;
    double lo = INFINITY, hi = -INFINITY;
    int rc = 0;
    size_t i = 0;
    for (size_t s = 0; s < r->n_slas; s++)
        for (size_t lv = 0; lv < r->n_levels; lv++) {
            lo = fmin(lo, r->slas[s].rewards[lv][0]);
            hi = fmax(hi, r->slas[s].rewards[lv][r->n - 1]);
        }
    double pad = hi > lo ? 0.05 * (hi - lo) : 0.5;
    gp_head(f, "w_reward", 960, "reward (SWE-h)", "share of replicas",
            "reward CDF per SLA and "
            "level");
    fprintf(f, "set xrange [%.9g:%.9g]\nset yrange [0:1.05]\nset key outside right top\n", lo - pad,
            hi + pad);
    for (size_t s = 0; s < r->n_slas && rc == 0; s++)
        for (size_t lv = 0; lv < r->n_levels && rc == 0; lv++, i++) {
            char name[80];
            snprintf(name, sizeof(name), "reward_%zu_%zu.dat", s, lv);
            rc = cdf_write(q, name, r->slas[s].rewards[lv], r->n, 1.0, lo - pad, hi + pad);
            fprintf(f, "%s'%s' using 1:2 with steps ", i ? ", \\\n     " : "plot ", name);
            sim_gp_line_style(f, i);
            fputs(" title '", f);
            sim_gp_puts(f, r->slas[s].name);
            fprintf(f, ", shrink %g%%'", r->levels[lv].shrink_pct);
        }
    fputs("\nset output\n", f);
    return rc;
}

/* Setting s's reward curve, the start delays of each level as a strip under it. */
static int gp_sla(struct wr *q, FILE *f, size_t s)
{
    const struct sim_wreport *r = q->r;
    const struct sim_wreport_sla *a = &r->slas[s];
    char name[48], gname[32], *path = NULL, xl[64];
    double lo = INFINITY, hi = -INFINITY;
    int rc;
    for (size_t k = 0; k < a->n_curve; k++) {
        lo = fmin(lo, a->curve_r[k]);
        hi = fmax(hi, a->curve_r[k]);
    }
    double span = hi > lo ? hi - lo : 1.0, step = 0.08 * span;
    snprintf(name, sizeof(name), "curve_%zu.dat", s);
    FILE *d = dat_open(q, name, &path);
    if (d == NULL) {
        lt_free(path);
        return q->err->code;
    }
    for (size_t k = 0; k < a->n_curve; k++)
        fprintf(d, "%.9g %.9g\n", a->curve_d[k] / q->unit_s, a->curve_r[k]);
    fputs("\n\n", d); /* index 1..: the strips, one block per level */
    for (size_t lv = 0; lv < r->n_levels; lv++) {
        double y = lo - (double)(lv + 1) * step;
        uint64_t k = 0;
        const double *dl = sla_delays(r, s, lv);
        for (; k < r->n && isfinite(dl[k]); k++)
            fprintf(d, "%.9g %.9g\n", dl[k] / q->unit_s, y);
        if (k == 0) /* no start: one invisible point keeps the block */
            fprintf(d, "NaN NaN\n");
        fputs("\n\n", d);
    }
    rc = sim_close_written(d, path, q->err);
    lt_free(path);
    if (rc < 0)
        return rc;
    snprintf(gname, sizeof(gname), "w_sla_%zu", s);
    snprintf(xl, sizeof(xl), "start delay (%s)", q->unit);
    gp_head(f, gname, 520, xl, "reward (SWE-h)", a->name);
    fprintf(f,
            "set xrange [0:%.9g]\nset yrange [%.9g:%.9g]\nset key top right\n"
            "set arrow from %.9g,graph 0 to %.9g,graph 1 nohead dt 3\n",
            q->x_max_s / q->unit_s, lo - (double)(r->n_levels + 1) * step, hi + step,
            a->knee_s / q->unit_s, a->knee_s / q->unit_s);
    fprintf(f, "plot '%s' index 0 using 1:2 with lines lw 2 lc rgb '#000000' title 'r(d)'", name);
    for (size_t lv = 0; lv < r->n_levels; lv++) {
        fprintf(f, ", \\\n     '%s' index %zu using 1:2 with points pt %zu ps 0.6 ", name, lv + 1,
                sim_gp_point_type(lv));
        sim_gp_line_style(f, lv);
        fprintf(f, " title 'starts, shrink %g%%'", r->levels[lv].shrink_pct);
    }
    fputs("\nset output\n", f);
    return 0;
}

static int plots_make(struct wr *q)
{
    const struct sim_wreport *r = q->r;
    size_t n = 2 + r->n_slas, m = 0;
    char *path = lt_strfmt("%s/plots.gp", q->tmpdir);
    char(*files)[32] = lt_calloc(n, sizeof(*files));
    const char **fp = lt_calloc(n, sizeof(*fp));
    FILE *f = NULL;
    int rc = 0;

    if (path == NULL || files == NULL || fp == NULL)
        rc = oom(q->err);
    if (rc == 0 && (f = fopen(path, "w")) == NULL)
        rc = lt_err_set(q->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
    if (rc == 0) {
        rc = gp_start(q, f);
        fp[m++] = "w_start.svg";
        if (rc == 0 && r->n_slas > 0) {
            rc = gp_reward(q, f);
            fp[m++] = "w_reward.svg";
        }
        for (size_t s = 0; rc == 0 && s < r->n_slas; s++) {
            rc = gp_sla(q, f, s);
            snprintf(files[s], sizeof(files[s]), "w_sla_%zu.svg", s);
            fp[m++] = files[s];
        }
        int rc2 = sim_close_written(f, path, q->err);
        rc = rc < 0 ? rc : rc2;
    }
    if (rc == 0)
        rc = sim_gnuplot_run(q->gnuplot, q->tmpdir, fp, m, q->err);
    q->made = rc == 0;
    lt_free(path);
    lt_free(files);
    lt_free(fp);
    return rc;
}

/* ---- the page ------------------------------------------------------------------------------ */

static int html_plot(FILE *f, struct wr *q, const char *svg_name)
{
    if (q->gnuplot[0] == '\0') {
        sim_html_no_gnuplot(f);
        return 0;
    }
    char *svg = lt_strfmt("%s/%s", q->tmpdir, svg_name);
    int rc = svg ? sim_svg_inline(f, svg, q->err) : oom(q->err);
    lt_free(svg);
    return rc;
}

static void html_head(FILE *f, const struct sim_wreport *r)
{
    sim_html_head(f, "whatif", ".row{display:flex;flex-wrap:wrap;gap:1em}\n", r->title);
    fputs("<h2>Inputs</h2>\n<table class=\"facts\">\n", f);
    for (size_t k = 0; k < r->n_facts; k++) {
        fputs("<tr><th>", f);
        sim_html_puts(f, r->fact_key[k]);
        fputs("</th><td>", f);
        sim_html_puts(f, r->fact_val[k]);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (r->note != NULL) {
        fputs("<p class=\"cap\">", f);
        sim_html_puts(f, r->note);
        fputs("</p>\n", f);
    }
    if (r->all_same)
        fputs("<p class=\"note\">Every replica of some level gave the same answer: with no "
              "source of variance on (--at random or day-random, --shrink below 100, "
              "--resample-running) a deterministic replay answers N times the same; the CDFs "
              "below are a single point, not a distribution.</p>\n",
              f);
}

static void html_levels(FILE *f, const struct sim_wreport *r)
{
    bool own = own_starts(r);
    fprintf(f,
            "<table>\n<tr>%s<th>shrink</th><th>replicas</th><th>censored</th>"
            "<th>P(not started by H)</th></tr>\n",
            own ? "<th>SLA</th>" : "");
    for (size_t s = 0; s < (own ? r->n_slas : 1); s++)
        for (size_t lv = 0; lv < r->n_levels; lv++) {
            uint64_t c = own ? r->slas[s].censored[lv] : r->levels[lv].censored;
            fputs("<tr>", f);
            if (own) {
                fputs("<td>", f);
                sim_html_puts(f, r->slas[s].name);
                fputs("</td>", f);
            }
            fprintf(f,
                    "<td class=\"n\">%g %%</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">"
                    "%" PRIu64 "</td><td class=\"n\">%.3f</td></tr>\n",
                    r->levels[lv].shrink_pct, r->n, c, (double)c / (double)r->n);
        }
    fputs("</table>\n", f);
}

static void html_slas(FILE *f, const struct sim_wreport *r)
{
    fputs("<table>\n<tr><th>SLA</th><th>spec</th><th>shrink</th><th>P(start &le; knee)</th>"
          "<th>E[reward]</th><th>P(reward &lt; 0)</th><th>hint</th></tr>\n",
          f);
    for (size_t s = 0; s < r->n_slas; s++)
        for (size_t lv = 0; lv < r->n_levels; lv++) {
            const struct sim_wreport_sla *a = &r->slas[s];
            fputs("<tr><td>", f);
            sim_html_puts(f, a->name);
            fputs("</td><td><code>", f);
            sim_html_puts(f, a->spec);
            fprintf(f,
                    "</code></td><td class=\"n\">%g %%</td><td class=\"n\">%.3f</td>"
                    "<td class=\"n\">%s%.4f</td><td class=\"n\">%.3f</td><td>%s</td></tr>\n",
                    r->levels[lv].shrink_pct, a->p_knee[lv], a->upper_bound[lv] ? "&le; " : "",
                    a->mean[lv], a->p_negative[lv],
                    a->mean[lv] < 0 ? "expected reward negative: do not offer this SLA" : "");
        }
    fputs("</table>\n<p class=\"cap\">The knee is d1 (by-deadline), d0 (cheap-and-simple) or the "
          "target (example1). A censored replica's reward is r(H<sub>eff</sub>), H<sub>eff"
          "</sub> its censoring delay (the horizon or the trace's end): an upper bound while "
          "r still decreases there, so E[reward] is then shown as &le;. The hint is Betser's "
          "admission control, future work in the thesis [B L593-L597].</p>\n",
          f);
}

static int html_body(FILE *f, struct wr *q)
{
    const struct sim_wreport *r = q->r;
    int rc;
    fputs("<h2>When does the job start?</h2>\n", f);
    html_levels(f, r);
    fprintf(f,
            "<p class=\"cap\">The share of replicas whose job had started by each delay, one "
            "curve per %s. Censored replicas (not started by the horizon H = %.0f s or the "
            "trace's end) stay in the denominator: a curve ends below 1 by P(not started by H) "
            "and runs flat to the axis' end (H dotted when the axis reaches it).</p>\n",
            own_starts(r) ? "SLA setting and --shrink level (each setting ran its own replicas "
                            "on the same seeds: the order depends on its SLA)"
                          : "--shrink level",
            r->horizon_s);
    if ((rc = html_plot(f, q, "w_start.svg")) < 0 || r->n_slas == 0)
        return rc;
    fputs("<h2>What is the SLA worth?</h2>\n", f);
    html_slas(f, r);
    fputs("<p class=\"cap\">The reward CDF, one curve per SLA setting and level, over the same "
          "replicas (common random numbers).</p>\n",
          f);
    if ((rc = html_plot(f, q, "w_reward.svg")) < 0)
        return rc;
    fputs("<h2>Each SLA's reward curve and the start delays</h2>\n<p class=\"cap\">Side by "
          "side as Betser's Figure 3-6 proposes: r(d) in black, the knee dotted, and under it "
          "one strip per level with every replica that started, at its start delay (the "
          "censored ones are beyond H). Figure 3-6's 40 % and 80 % are a mock-up of the "
          "thesis, not a result; these strips are this run's.</p>\n<div class=\"row\">\n",
          f);
    for (size_t s = 0; s < r->n_slas && rc == 0; s++) {
        char svg[32];
        snprintf(svg, sizeof(svg), "w_sla_%zu.svg", s);
        fputs("<div>", f);
        rc = html_plot(f, q, svg);
        fputs("</div>\n", f);
    }
    fputs("</div>\n", f);
    return rc;
}

static int html_page(FILE *f, void *ctx)
{
    struct wr *q = ctx;
    html_head(f, q->r);
    return html_body(f, q);
}

static int html_write(struct wr *q)
{
    return sim_html_report(q->dir, q->r->version, html_page, q, q->err);
}

/* The delay axes: from 0 to 1.15 x the largest of the delays that started, the knees, and
 * the delay after which every reward curve is flat (within 0.1 % of its span), at least 1 s
 * and at most the horizon (no start is later); in s, min or h by that end. */
static void axis_pick(struct wr *q)
{
    const struct sim_wreport *r = q->r;
    double x = 1.0;
    for (size_t s = 0; s < (own_starts(r) ? r->n_slas : 1); s++)
        for (size_t lv = 0; lv < r->n_levels; lv++)
            for (uint64_t k = 0; k < r->n; k++) {
                const double *dl = own_starts(r) ? sla_delays(r, s, lv) : r->levels[lv].delays;
                if (isfinite(dl[k]))
                    x = fmax(x, dl[k]);
            }
    for (size_t s = 0; s < r->n_slas; s++) {
        const struct sim_wreport_sla *a = &r->slas[s];
        double lo = INFINITY, hi = -INFINITY, last = a->curve_r[a->n_curve - 1];
        for (size_t k = 0; k < a->n_curve; k++) {
            lo = fmin(lo, a->curve_r[k]);
            hi = fmax(hi, a->curve_r[k]);
        }
        size_t k = a->n_curve - 1;
        while (k > 0 && fabs(a->curve_r[k - 1] - last) <= 1e-3 * (hi - lo))
            k--;
        x = fmax(x, fmax(a->knee_s, a->curve_d[k]));
    }
    q->x_max_s = fmin(1.15 * x, r->horizon_s);
    q->unit_s = q->x_max_s > 7200.0 ? 3600.0 : q->x_max_s > 120.0 ? 60.0 : 1.0;
    q->unit = q->x_max_s > 7200.0 ? "h" : q->x_max_s > 120.0 ? "min" : "s";
}

static int check_args(const char *dir, const struct sim_wreport *r, struct lt_err *err)
{
    if (dir == NULL || r == NULL || r->n == 0 || r->n_levels == 0 || !(r->horizon_s > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "whatif report: no replica or no level");
    for (size_t s = 0; s < r->n_slas; s++) {
        const char *p = r->slas[s].name;
        bool bad = p == NULL || *p == '\0' || r->slas[s].n_curve < 2;
        for (; !bad && *p != '\0'; p++)
            bad = (unsigned char)*p < 0x20 || *p == 0x7f || *p == '\'';
        if (bad)
            return lt_err_set(err, LT_EINVAL, 0, 0, "whatif report: SLA %zu is bad", s);
    }
    return 0;
}

int sim_wreport_write(const char *dir, const struct sim_wreport *r, bool *plotted,
                      struct lt_err *err)
{
    struct wr q;
    int rc;

    *plotted = false;
    if ((rc = check_args(dir, r, err)) < 0)
        return rc;
    memset(&q, 0, sizeof(q));
    q.dir = dir;
    q.r = r;
    q.err = err;
    axis_pick(&q);
    if (sim_gnuplot_find(q.gnuplot, sizeof(q.gnuplot)))
        rc = sim_tmpdir_make(dir, &q.tmpdir, err);
    if (rc == 0 && q.tmpdir != NULL)
        rc = plots_make(&q);
    if (rc == 0)
        rc = html_write(&q);
    *plotted = rc == 0 && q.made;
    sim_tmpdir_remove(&q.tmpdir);
    if (rc < 0) { /* no stale page that this run does not describe */
        char *final = lt_strfmt("%s/report.html", dir);
        if (final != NULL)
            remove(final);
        lt_free(final);
    }
    return rc;
}
