/* slots_report.c -- the HTML report of `lotus-sim slots` (slots_report.h).
 *
 * Design: the runs are in memory (the command ran them in this process), so unlike the
 * replay's report nothing is read back from disk. Each plot's data goes to whitespace-
 * separated files in a temporary directory DIR/.report-XXXXXX with the script; gnuplot runs
 * there (htmlplot.c) and its SVGs are inlined. Run names are the only user text in the
 * script, in single-quoted strings with ' doubled; every string on the page goes through
 * sim_html_puts.
 *
 * SPDX-License-Identifier: MIT
 */
#include "report/slots_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/outfile.h"
#include "report/htmlplot.h"
#include "lt_mem.h"

/* Points of a response-time distribution curve (quantiles 0, 0.5 %, ..., 100 %). */
#define CDF_POINTS 201

enum { PLOT_RCLASS, PLOT_GRATIS, PLOT_PROD, PLOT_EVICT, N_PLOTS };

static const char *const plot_file[N_PLOTS] = {"rclass.svg", "gratis.svg", "prod.svg", "evict.svg"};
static const char *const plot_title[N_PLOTS] = {
    "Mean response time per class", "Response time, gratis classes (0-1)",
    "Response time, production classes (9-11)", "Evictions per task"};
static const char *const plot_caption[N_PLOTS] = {
    "R(C_i): mean response time (arrival to completion) of the completed tasks of each "
    "priority class, one bar per run; a class with no completed task has no bar.",
    "Share of the completed gratis tasks (priorities 0 and 1) that finished within a given "
    "response time, one line per run.",
    "Share of the completed production tasks (priorities 9 to 11) that finished within a "
    "given response time, one line per run.",
    "Share of all tasks evicted at least e times (priority and memory evictions), one line "
    "per run; log-log."};

/* A summary.json key shown in the table. */
struct row {
    const char *key, *label;
    int kind; /* 0 integer, 1 real with one decimal, 2 real with two decimals */
};

static const struct row rows[] = {
    {"tasks", "tasks", 0},
    {"completed", "completed", 0},
    {"dropped", "dropped", 0},
    {"r_mean_s", "R mean [s]", 1},
    {"v", "V (a = 3)", 1},
    {"ne", "NE (priority + memory)", 0},
    {"ne_priority", "NE priority", 0},
    {"net", "NET", 0},
    {"net_priority", "NET priority", 0},
    {"e_mean", "evictions per evicted task (NE / NET)", 2},
    {"max_e", "max(e)", 0},
    {"we_cpu_s", "WE [cpu-s]", 1},
    {"energy_kwh", "E [kWh]", 1},
    {"end_s", "simulated span [s]", 1},
    {"wall_s", "wall time [s]", 2},
};

static const char *const facts[] = {"workload", "trace",  "hours", "servers",
                                    "slots",    "memory", "dpm",   "seed"};

struct srp {
    const char *dir;
    const struct sim_slots_run *runs;
    size_t n;
    char gnuplot[SIM_MAX_PATH];
    char *tmpdir;
    bool made[N_PLOTS];
    struct lt_err *err;
};

/* Run i's summary entry for priority class c ("classes"."c"), NULL if none completed. */
static const json_t *class_entry(const struct srp *s, size_t i, int c)
{
    char key[8];

    snprintf(key, sizeof(key), "%d", c);
    return json_object_get(json_object_get(s->runs[i].summary, "classes"), key);
}

/* Whether some run completed a task of class c. */
static bool class_seen(const struct srp *s, int c)
{
    for (size_t i = 0; i < s->n; i++) {
        if (class_entry(s, i, c) != NULL)
            return true;
    }
    return false;
}

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the report");
}

static void fmt_value(char *buf, size_t cap, const json_t *v, int kind)
{
    if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, kind == 2 ? "%.2f" : "%.1f", json_real_value(v));
    else if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else
        snprintf(buf, cap, "-");
}

/* ---- the plot data ---------------------------------------------------------------------- */

static FILE *data_open(struct srp *s, const char *name, char **path)
{
    FILE *f;

    *path = lt_strfmt("%s/%s", s->tmpdir, name);
    if (*path == NULL) {
        oom(s->err);
        return NULL;
    }
    f = fopen(*path, "w");
    if (f == NULL) {
        lt_err_set(s->err, LT_EIO, 0, 0, "cannot create '%s'", *path);
        lt_free(*path);
        *path = NULL;
    }
    return f;
}

static int data_close(struct srp *s, FILE *f, char *path)
{
    int rc = sim_close_written(f, path, s->err);

    lt_free(path);
    return rc;
}

/* rclass.dat: one line per class completed in some run, "class R_run0 R_run1 ..." ("?" for
 * none). Returns the number of classes written, or a negative error. */
static int rclass_write(struct srp *s)
{
    char *path;
    FILE *f = data_open(s, "rclass.dat", &path);
    int lines = 0;

    if (f == NULL)
        return s->err != NULL ? s->err->code : LT_EIO;
    for (int c = 0; c < 12; c++) {
        if (!class_seen(s, c))
            continue;
        fprintf(f, "%d", c);
        for (size_t i = 0; i < s->n; i++) {
            const json_t *r = json_object_get(class_entry(s, i, c), "r_s");
            if (json_is_number(r))
                fprintf(f, " %.6g", json_number_value(r));
            else
                fputs(" ?", f);
        }
        fputc('\n', f);
        lines++;
    }
    {
        int rc = data_close(s, f, path);
        return rc < 0 ? rc : lines;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* <g>_<i>.dat: the response-time quantiles of run i's completed tasks with a priority in
 * [lo, hi], "response_s share" per line. Returns the number of such tasks or an error. */
static long cdf_write(struct srp *s, size_t i, const char *g, int lo, int hi)
{
    const struct sim_slots_run *r = &s->runs[i];
    double *v = lt_calloc(r->n + 1, sizeof(*v));
    size_t m = 0;
    char name[64], *path;
    FILE *f;
    int rc;

    if (v == NULL)
        return oom(s->err);
    for (size_t k = 0; k < r->n; k++) {
        if (r->tasks[k].prio >= lo && r->tasks[k].prio <= hi && !r->out[k].dropped &&
            isfinite(r->out[k].finish))
            v[m++] = r->out[k].finish - r->tasks[k].arrival;
    }
    qsort(v, m, sizeof(*v), cmp_double);
    snprintf(name, sizeof(name), "%s_%zu.dat", g, i);
    f = data_open(s, name, &path);
    if (f == NULL) {
        lt_free(v);
        return s->err != NULL ? s->err->code : LT_EIO;
    }
    for (int q = 0; q < CDF_POINTS && m > 0; q++) {
        double share = (double)q / (CDF_POINTS - 1);
        size_t at = (size_t)(share * (double)(m - 1) + 0.5);
        /* response times of 0 s do not show on the log axis: floor them at 1 ms */
        fprintf(f, "%.6g %.6g\n", v[at] > 1e-3 ? v[at] : 1e-3, share);
    }
    lt_free(v);
    rc = data_close(s, f, path);
    return rc < 0 ? rc : (long)m;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* ev_<i>.dat: "e share" for each e >= 1 some task was evicted exactly e times, share the
 * fraction of all tasks evicted at least e times. Returns the number of evicted tasks or an
 * error. */
static long evict_write(struct srp *s, size_t i)
{
    const struct sim_slots_run *r = &s->runs[i];
    uint32_t *e = lt_calloc(r->n + 1, sizeof(*e));
    size_t m = 0;
    char name[64], *path;
    FILE *f;
    int rc;

    if (e == NULL)
        return oom(s->err);
    for (size_t k = 0; k < r->n; k++) {
        if (r->out[k].evictions > 0)
            e[m++] = r->out[k].evictions;
    }
    qsort(e, m, sizeof(*e), cmp_u32);
    snprintf(name, sizeof(name), "ev_%zu.dat", i);
    f = data_open(s, name, &path);
    if (f == NULL) {
        lt_free(e);
        return s->err != NULL ? s->err->code : LT_EIO;
    }
    for (size_t j = 0; j < m; j++) {
        if (j == 0 || e[j] != e[j - 1]) /* m - j tasks have at least e[j] evictions */
            fprintf(f, "%u %.6g\n", e[j], (double)(m - j) / (double)r->n);
    }
    lt_free(e);
    rc = data_close(s, f, path);
    return rc < 0 ? rc : (long)m;
}

/* ---- the script ------------------------------------------------------------------------- */

static void gp_begin(FILE *f, int k, const char *xlabel, const char *ylabel)
{
    fprintf(f,
            "reset\nset terminal svg size 900,420 dynamic enhanced font 'sans,11'\n"
            "set output '%s'\nset datafile missing '?'\nset key outside right top\n"
            "set grid\nset xlabel '%s'\nset ylabel '%s'\n",
            plot_file[k], xlabel, ylabel);
}

static void gp_title(FILE *f, const struct srp *s, size_t i)
{
    fputs(" title '", f);
    sim_gp_puts(f, s->runs[i].name);
    fputc('\'', f);
}

/* The lines of plot k over the runs whose data file <g>_<i>.dat is not empty. */
static void gp_lines(FILE *f, const struct srp *s, const char *g, const long *count)
{
    bool first = true;

    for (size_t i = 0; i < s->n; i++) {
        if (count[i] <= 0)
            continue;
        fprintf(f, "%s'%s_%zu.dat' using 1:2 with lines lw 2", first ? "plot " : ", ", g, i);
        gp_title(f, s, i);
        first = false;
    }
    fputs("\n", f);
}

static int plots_make(struct srp *s)
{
    long *gratis = lt_calloc(s->n, sizeof(long)), *prod = lt_calloc(s->n, sizeof(long));
    long *ev = lt_calloc(s->n, sizeof(long));
    const char *files[N_PLOTS];
    size_t n_files = 0;
    char *path = NULL;
    FILE *f = NULL;
    int rc = 0, classes;

    if (gratis == NULL || prod == NULL || ev == NULL) {
        rc = oom(s->err);
        goto out;
    }
    if ((classes = rclass_write(s)) < 0) {
        rc = classes;
        goto out;
    }
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        if ((gratis[i] = cdf_write(s, i, "gratis", 0, 1)) < 0 ||
            (prod[i] = cdf_write(s, i, "prod", 9, 11)) < 0 || (ev[i] = evict_write(s, i)) < 0)
            rc = (int)(gratis[i] < 0 ? gratis[i] : prod[i] < 0 ? prod[i] : ev[i]);
        s->made[PLOT_GRATIS] = s->made[PLOT_GRATIS] || gratis[i] > 0;
        s->made[PLOT_PROD] = s->made[PLOT_PROD] || prod[i] > 0;
        s->made[PLOT_EVICT] = s->made[PLOT_EVICT] || ev[i] > 0;
    }
    s->made[PLOT_RCLASS] = classes > 0;
    if (rc < 0 || (f = data_open(s, "plots.gp", &path)) == NULL) {
        rc = rc < 0 ? rc : (s->err != NULL ? s->err->code : LT_EIO);
        goto out;
    }
    if (s->made[PLOT_RCLASS]) {
        gp_begin(f, PLOT_RCLASS, "priority class", "mean response time (s)");
        fputs("set style data histograms\nset style histogram clustered gap 1\n"
              "set style fill solid 0.8 border -1\nset logscale y\nset grid ytics\n",
              f);
        for (size_t i = 0; i < s->n; i++) {
            fprintf(f, "%s'rclass.dat' using %zu%s", i ? ", " : "plot ", i + 2,
                    i ? "" : ":xtic(1)");
            gp_title(f, s, i);
        }
        fputs("\n", f);
    }
    if (s->made[PLOT_GRATIS]) {
        gp_begin(f, PLOT_GRATIS, "response time (s)", "share of completed tasks");
        fputs("set logscale x\nset yrange [0:1]\n", f);
        gp_lines(f, s, "gratis", gratis);
    }
    if (s->made[PLOT_PROD]) {
        gp_begin(f, PLOT_PROD, "response time (s)", "share of completed tasks");
        fputs("set logscale x\nset yrange [0:1]\n", f);
        gp_lines(f, s, "prod", prod);
    }
    if (s->made[PLOT_EVICT]) {
        gp_begin(f, PLOT_EVICT, "evictions e", "share of tasks evicted >= e times");
        fputs("set logscale xy\n", f);
        gp_lines(f, s, "ev", ev);
    }
    fputs("set output\n", f);
    rc = data_close(s, f, path);
    for (int k = 0; k < N_PLOTS; k++) {
        if (s->made[k])
            files[n_files++] = plot_file[k];
    }
    if (rc == 0 && n_files > 0)
        rc = sim_gnuplot_run(s->gnuplot, s->tmpdir, files, n_files, s->err);
out:
    lt_free(gratis);
    lt_free(prod);
    lt_free(ev);
    return rc;
}

/* ---- the page --------------------------------------------------------------------------- */

static void html_table(FILE *f, const struct srp *s)
{
    char buf[64];

    fputs("<h2>Runs</h2>\n<table>\n<tr><th>metric</th>", f);
    for (size_t i = 0; i < s->n; i++) {
        fputs("<th>", f);
        sim_html_puts(f, s->runs[i].name);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
        fputs("<tr><th>", f);
        sim_html_puts(f, rows[k].label);
        fputs("</th>", f);
        for (size_t i = 0; i < s->n; i++) {
            fmt_value(buf, sizeof(buf), json_object_get(s->runs[i].summary, rows[k].key),
                      rows[k].kind);
            fprintf(f, "<td class=\"n\">%s</td>", buf);
        }
        fputs("</tr>\n", f);
    }
    for (int c = 0; c < 12; c++) {
        if (!class_seen(s, c))
            continue;
        fprintf(f, "<tr><th>R(C_%d) [s] (completed)</th>", c);
        for (size_t i = 0; i < s->n; i++) {
            const json_t *e = class_entry(s, i, c);
            char n[32];
            fmt_value(buf, sizeof(buf), json_object_get(e, "r_s"), 1);
            fmt_value(n, sizeof(n), json_object_get(e, "completed"), 0);
            fprintf(f, "<td class=\"n\">%s (%s)</td>", buf, e != NULL ? n : "0");
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class=\"cap\">Definitions: docs/slots.md (\"Metrics\"). NE counts "
          "evictions, NET evicted tasks; WE is the work lost to evictions (0 with "
          "--resume).</p>\n",
          f);
}

static int html_plots(FILE *f, const struct srp *s)
{
    for (int k = 0; k < N_PLOTS; k++) {
        fprintf(f, "<h2>%s</h2>\n<p class=\"cap\">%s</p>\n", plot_title[k], plot_caption[k]);
        if (s->gnuplot[0] == '\0') {
            sim_html_no_gnuplot(f);
        } else if (!s->made[k]) {
            fputs("<p class=\"note\">No plot: no run has data for it.</p>\n", f);
        } else {
            char *svg = lt_strfmt("%s/%s", s->tmpdir, plot_file[k]);
            int rc = svg ? sim_svg_inline(f, svg, s->err) : oom(s->err);
            lt_free(svg);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int html_write(struct srp *s, const char *title)
{
    char *final = lt_strfmt("%s/report.html", s->dir);
    char *tmp = NULL; /* "<final>.tmp", from sim_tmp_open; freed by sim_tmp_commit */
    FILE *f = NULL;
    int rc = 0;

    if (final == NULL) {
        rc = oom(s->err);
        goto out;
    }
    if ((f = sim_tmp_open(final, &tmp, s->err)) == NULL) {
        rc = s->err->code;
        goto out;
    }
    sim_html_head(f, "slots", NULL, title);
    fputs("<h2>Run</h2>\n<table class=\"facts\">\n", f);
    for (size_t k = 0; k < sizeof(facts) / sizeof(facts[0]); k++) {
        const json_t *v = json_object_get(s->runs[0].summary, facts[k]);
        char buf[512];
        if (v == NULL)
            continue;
        fmt_value(buf, sizeof(buf), v, 0);
        fputs("<tr><th>", f);
        sim_html_puts(f, facts[k]);
        fputs("</th><td>", f);
        sim_html_puts(f, buf);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    html_table(f, s);
    rc = html_plots(f, s);
    fputs("<p class=\"cap\">Written by lotus-sim slots.</p>\n</body>\n</html>\n", f);
    rc = sim_tmp_commit(f, tmp, final, rc, s->err);
out:
    lt_free(final);
    return rc;
}

int sim_slots_report_write(const char *dir, const struct sim_slots_run *runs, size_t n_runs,
                           const char *title, bool *plotted, struct lt_err *err)
{
    struct srp s;
    int rc = 0;

    *plotted = false;
    if (dir == NULL || runs == NULL || n_runs == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "slots report: no run");
    for (size_t i = 0; i < n_runs; i++) {
        const char *p = runs[i].name;
        if (p == NULL || *p == '\0' || strchr(p, '/') != NULL || runs[i].summary == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "slots report: run %zu has a bad name", i);
        for (; *p != '\0'; p++) {
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "slots report: run %zu's name has a control character", i);
        }
    }
    memset(&s, 0, sizeof(s));
    s.dir = dir;
    s.runs = runs;
    s.n = n_runs;
    s.err = err;
    if (sim_gnuplot_find(s.gnuplot, sizeof(s.gnuplot)))
        rc = sim_tmpdir_make(dir, &s.tmpdir, err);
    if (rc == 0 && s.tmpdir != NULL)
        rc = plots_make(&s);
    if (rc == 0)
        rc = html_write(&s, title);
    *plotted = rc == 0 && s.tmpdir != NULL;
    sim_tmpdir_remove(&s.tmpdir);
    return rc;
}
