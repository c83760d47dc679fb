/* compare.c -- Stein et al.'s comparison tables (compare.h): counting, ranking, the slides'
 * numbers, and the tables on stdout, in compare.csv / compare.json and in a report.
 *
 * Source: C. Stein, M. Henzinger, M. Radovanovic, "Scheduling a large datacenter" (Google,
 * 2009, slides), "Comparison based on Throughput" and "Comparison based on Useful Work"
 * (/work/shared/papers/stein-henzinger-radovanovic-scheduling-a-large-datacenter.txt; their
 * two-column tables are interleaved in the text). The four tables below are transcribed in
 * the slides' printed order; that order is not always lexicographic in (times best, times
 * >= 99 %) (EPVM, EPVM2, SOS20 at 80-90 %; RandFit's 282 and 102 after EPVM2's 270 and 90),
 * which is why both sides are ranked from the numbers, never from the printed order.
 *
 * SPDX-License-Identifier: MIT
 */
#include "replay/compare.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/outfile.h"
#include "report/htmlplot.h"
#include "lt_mem.h"

/* Throughput, "over all cells and machine percentages". */
static const struct sim_cmp_slide tp_all[] = {
    {"randfirstfit", "randFirstFit", 31, 37},
    {"sos10", "SOS10", 20, 41},
    {"firstfit", "FirstFit", 15, 32},
    {"bestfit3", "BestFit3", 12, 38},
    {"bestfit4", "BestFit4", 10, 37},
    {"epvm2", "EPVM2", 6, 19},
    {"epvm", "EPVM", 5, 35},
    {"bestfit1", "BestFit1", 5, 29},
    {"bestfit2", "BestFit2", 5, 29},
    {"sos20", "SOS20", 5, 26},
    {"random", "RandFit", 5, 26},
};

/* Throughput, "over all cells at 80%-90% of machines". */
static const struct sim_cmp_slide tp_8090[] = {
    {"randfirstfit", "randFirstFit", 11, 16},
    {"bestfit3", "BestFit3", 10, 20},
    {"firstfit", "FirstFit", 7, 15},
    {"bestfit4", "BestFit4", 6, 19},
    {"sos10", "SOS10", 5, 14},
    {"bestfit1", "BestFit1", 3, 12},
    {"bestfit2", "BestFit2", 3, 12},
    {"random", "RandFit", 3, 12},
    {"epvm", "EPVM", 2, 10},
    {"epvm2", "EPVM2", 2, 7},
    {"sos20", "SOS20", 2, 12},
};

/* Useful work, "over all days, cells and machine percentages" (no FirstFit, no SOS). */
static const struct sim_cmp_slide uw_all[] = {
    {"bestfit3", "BestFit3", 294, 318}, {"randfirstfit", "RandFF", 264, 306},
    {"bestfit4", "BestFit4", 258, 312}, {"bestfit1", "BestFit1", 246, 288},
    {"bestfit2", "BestFit2", 246, 288}, {"epvm", "EPVM", 240, 270},
    {"epvm2", "EPVM2", 240, 270},       {"random", "RandFit", 240, 282},
};

/* Useful work, "over all days, cells at 80%-90% of machines". */
static const struct sim_cmp_slide uw_8090[] = {
    {"bestfit3", "BestFit3", 114, 138}, {"randfirstfit", "RandFF", 84, 126},
    {"bestfit4", "BestFit4", 78, 132},  {"bestfit1", "BestFit1", 66, 108},
    {"bestfit2", "BestFit2", 66, 108},  {"epvm", "EPVM", 60, 90},
    {"epvm2", "EPVM2", 60, 90},         {"random", "RandFit", 60, 102},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const struct sim_cmp_slide *sim_cmp_slides(enum sim_cmp_metric m, enum sim_cmp_range r, size_t *n)
{
    if (m == SIM_CMP_THROUGHPUT) {
        *n = r == SIM_CMP_ALL ? N_OF(tp_all) : N_OF(tp_8090);
        return r == SIM_CMP_ALL ? tp_all : tp_8090;
    }
    *n = r == SIM_CMP_ALL ? N_OF(uw_all) : N_OF(uw_8090);
    return r == SIM_CMP_ALL ? uw_all : uw_8090;
}

const struct sim_cmp_slide *sim_cmp_slide_find(enum sim_cmp_metric m, enum sim_cmp_range r,
                                               const char *policy)
{
    size_t n;
    const struct sim_cmp_slide *s = sim_cmp_slides(m, r, &n);

    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].policy, policy) == 0)
            return &s[i];
    return NULL;
}

const char *sim_cmp_metric_name(enum sim_cmp_metric m)
{
    return m == SIM_CMP_THROUGHPUT ? "throughput" : "useful_work";
}

const char *sim_cmp_range_name(enum sim_cmp_range r)
{
    return r == SIM_CMP_ALL ? "all" : "80-90";
}

/* ---- ranks and the correlation --------------------------------------------------------- */

/* true when item i comes before item j: larger (best, ge99) first. */
static bool key_before(const double *best, const double *ge99, size_t i, size_t j)
{
    return best[i] > best[j] || (!(best[i] < best[j]) && ge99[i] > ge99[j]);
}

void sim_cmp_rank(const double *best, const double *ge99, size_t n, double *rank)
{
    for (size_t i = 0; i < n; i++) {
        size_t above = 0, tied = 0; /* items strictly before i; items with i's key, i too */
        for (size_t j = 0; j < n; j++) {
            if (key_before(best, ge99, j, i))
                above++;
            else if (!key_before(best, ge99, i, j))
                tied++;
        }
        /* ranks above+1 .. above+tied, averaged */
        rank[i] = (double)above + ((double)tied + 1.0) / 2.0;
    }
}

double sim_cmp_spearman(const double *a, const double *b, size_t n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;

    if (n < 2)
        return NAN;
    for (size_t i = 0; i < n; i++) {
        ma += a[i];
        mb += b[i];
    }
    ma /= (double)n;
    mb /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    if (!(saa > 0) || !(sbb > 0))
        return NAN;
    return sab / sqrt(saa * sbb);
}

/* ---- the counts ----------------------------------------------------------------------- */

static bool in_range(enum sim_cmp_range r, double x)
{
    return r == SIM_CMP_ALL || (x >= 80.0 && x <= 90.0);
}

/* Adds case c's values v[0 .. n_policy-1] to table t (every value a number). */
static void case_add(struct sim_cmp_table *t, const double *v, size_t n_policy, double *sum)
{
    double max = v[0];

    for (size_t k = 1; k < n_policy; k++)
        max = v[k] > max ? v[k] : max;
    t->cases++;
    for (size_t k = 0; k < n_policy; k++) {
        t->row[k].best += v[k] >= max;
        t->row[k].ge99 += 100.0 * v[k] >= 99.0 * max;
        sum[k] += max > 0 ? v[k] / max : 1.0;
    }
}

/* The slides' order on t: times best desc, >= 99 % desc, then the input's order. */
static void table_sort(struct sim_cmp_table *t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        t->order[k] = k;
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable, n <= 64 */
        size_t k = t->order[i], j = i;
        for (; j > 0; j--) {
            const struct sim_cmp_row *a = &t->row[k], *b = &t->row[t->order[j - 1]];
            if (!(a->best > b->best || (a->best == b->best && a->ge99 > b->ge99)))
                break;
            t->order[j] = t->order[j - 1];
        }
        t->order[j] = k;
    }
}

/* Spearman's rho between t and the slides' table (m, r) over the policies both have. */
static void table_spearman(struct sim_cmp_table *t, const struct sim_cmp_result *res,
                           enum sim_cmp_metric m, enum sim_cmp_range r)
{
    double lb[SIM_CMP_MAX_POLICIES], lg[SIM_CMP_MAX_POLICIES], sb[SIM_CMP_MAX_POLICIES],
        sg[SIM_CMP_MAX_POLICIES], lr[SIM_CMP_MAX_POLICIES], sr[SIM_CMP_MAX_POLICIES];
    size_t n = 0;

    for (size_t k = 0; k < res->n_policy; k++) {
        const struct sim_cmp_slide *s = sim_cmp_slide_find(m, r, res->policy[k]);
        if (s == NULL)
            continue;
        lb[n] = (double)t->row[k].best;
        lg[n] = (double)t->row[k].ge99;
        sb[n] = s->best;
        sg[n++] = s->ge99;
    }
    sim_cmp_rank(lb, lg, n, lr);
    sim_cmp_rank(sb, sg, n, sr);
    t->n_common = n;
    t->spearman = t->cases > 0 ? sim_cmp_spearman(lr, sr, n) : NAN;
}

int sim_cmp_compute(const struct sim_cmp_input *in, struct sim_cmp_result *res, struct lt_err *err)
{
    const size_t np = in->n_policy;

    if (np == 0 || np > SIM_CMP_MAX_POLICIES || in->policy == NULL ||
        (in->n_case > 0 && (in->x == NULL || in->tasks == NULL || in->useful == NULL)))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "compare: %zu policies (1..%d) or a missing array of values", np,
                          SIM_CMP_MAX_POLICIES);
    memset(res, 0, sizeof(*res));
    res->policy = in->policy;
    res->n_policy = np;
    for (int m = 0; m < SIM_CMP_N_METRICS; m++) {
        const double *val = m == SIM_CMP_THROUGHPUT ? in->tasks : in->useful;
        for (int r = 0; r < SIM_CMP_N_RANGES; r++) {
            struct sim_cmp_table *t = &res->t[m][r];
            double sum[SIM_CMP_MAX_POLICIES] = {0};
            for (size_t c = 0; c < in->n_case; c++) {
                bool failed = false;
                if (!in_range((enum sim_cmp_range)r, in->x[c]))
                    continue;
                for (size_t k = 0; k < np; k++)
                    failed |= isnan(val[c * np + k]);
                if (failed)
                    t->left_out++;
                else
                    case_add(t, &val[c * np], np, sum);
            }
            for (size_t k = 0; k < np; k++)
                t->row[k].mean_ratio = t->cases > 0 ? sum[k] / (double)t->cases : NAN;
            table_sort(t, np);
            table_spearman(t, res, (enum sim_cmp_metric)m, (enum sim_cmp_range)r);
        }
    }
    return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

static const char *const title[SIM_CMP_N_METRICS][SIM_CMP_N_RANGES] = {
    {"throughput (tasks completed), all x", "throughput (tasks completed), x in 80-90 %"},
    {"useful work (s), all x", "useful work (s), x in 80-90 %"},
};

/* The slides' policies that did not run, ", "-separated after "not run: ", or nothing. */
static void print_missing(FILE *f, const struct sim_cmp_result *res, int m, int r)
{
    size_t n;
    const struct sim_cmp_slide *s =
        sim_cmp_slides((enum sim_cmp_metric)m, (enum sim_cmp_range)r, &n);
    const char *sep = "  slides' policies not run: ";

    for (size_t i = 0; i < n; i++) {
        bool ran = false;
        for (size_t k = 0; k < res->n_policy && !ran; k++)
            ran = strcmp(res->policy[k], s[i].policy) == 0;
        if (!ran) {
            fprintf(f, "%s%s", sep, s[i].policy);
            sep = ", ";
        }
    }
    if (sep[0] == ',')
        fputc('\n', f);
}

void sim_cmp_print(const struct sim_cmp_result *res, FILE *f)
{
    fprintf(f, "\nStein et al.'s comparison: times best and times >= 99 %% of best per case "
               "(x, seed);\nranked by (times best, times >= 99 %%), ties at their average rank\n");
    for (int m = 0; m < SIM_CMP_N_METRICS; m++) {
        for (int r = 0; r < SIM_CMP_N_RANGES; r++) {
            const struct sim_cmp_table *t = &res->t[m][r];
            fprintf(f, "\n%s: %zu cases", title[m][r], t->cases);
            if (t->left_out > 0)
                fprintf(f, ", %zu left out (a run failed)", t->left_out);
            fprintf(f, "\n%-14s %6s %6s %8s | %-13s %6s %6s\n", "policy", "best", ">=99%", "ratio",
                    "slides", "best", ">=99%");
            for (size_t i = 0; i < res->n_policy; i++) {
                size_t k = t->order[i];
                const struct sim_cmp_slide *s = sim_cmp_slide_find(
                    (enum sim_cmp_metric)m, (enum sim_cmp_range)r, res->policy[k]);
                char ratio[32] = "-", sb[16] = "-", sg[16] = "-";
                if (!isnan(t->row[k].mean_ratio))
                    snprintf(ratio, sizeof(ratio), "%.4f", t->row[k].mean_ratio);
                if (s != NULL) {
                    snprintf(sb, sizeof(sb), "%u", s->best);
                    snprintf(sg, sizeof(sg), "%u", s->ge99);
                }
                fprintf(f, "%-14s %6zu %6zu %8s | %-13s %6s %6s\n", res->policy[k], t->row[k].best,
                        t->row[k].ge99, ratio, s != NULL ? s->name : "-", sb, sg);
            }
            print_missing(f, res, m, r);
            if (isnan(t->spearman))
                fprintf(f, "  Spearman with the slides: - (%zu policies in both)\n", t->n_common);
            else
                fprintf(f, "  Spearman with the slides: %+.3f (%zu policies in both)\n",
                        t->spearman, t->n_common);
        }
    }
}

static int csv_write(const char *dir, const struct sim_cmp_result *res, struct lt_err *err)
{
    char *path = lt_strfmt("%s/compare.csv", dir), *tmp = NULL;
    FILE *f;
    int rc;

    if (path == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if ((f = sim_tmp_open(path, &tmp, err)) == NULL) {
        lt_free(path);
        return err->code;
    }
    fprintf(f, "metric,range,policy,cases,times_best,times_ge99,mean_ratio,slides_times_best,"
               "slides_times_ge99\n");
    for (int m = 0; m < SIM_CMP_N_METRICS; m++)
        for (int r = 0; r < SIM_CMP_N_RANGES; r++) {
            const struct sim_cmp_table *t = &res->t[m][r];
            for (size_t i = 0; i < res->n_policy; i++) {
                size_t k = t->order[i];
                const struct sim_cmp_slide *s = sim_cmp_slide_find(
                    (enum sim_cmp_metric)m, (enum sim_cmp_range)r, res->policy[k]);
                fprintf(f, "%s,%s,%s,%zu,%zu,%zu,", sim_cmp_metric_name((enum sim_cmp_metric)m),
                        sim_cmp_range_name((enum sim_cmp_range)r), res->policy[k], t->cases,
                        t->row[k].best, t->row[k].ge99);
                if (!isnan(t->row[k].mean_ratio))
                    fprintf(f, "%.6f", t->row[k].mean_ratio);
                if (s != NULL)
                    fprintf(f, ",%u,%u\n", s->best, s->ge99);
                else
                    fputs(",,\n", f);
            }
        }
    rc = sim_tmp_commit(f, tmp, path, 0, err);
    lt_free(path);
    return rc;
}

static json_t *json_tables(const struct sim_cmp_result *res)
{
    json_t *a = json_array();

    for (int m = 0; m < SIM_CMP_N_METRICS && a != NULL; m++)
        for (int r = 0; r < SIM_CMP_N_RANGES; r++) {
            const struct sim_cmp_table *t = &res->t[m][r];
            json_array_append_new(
                a, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "metric",
                             sim_cmp_metric_name((enum sim_cmp_metric)m), "range",
                             sim_cmp_range_name((enum sim_cmp_range)r), "cases",
                             (json_int_t)t->cases, "left_out", (json_int_t)t->left_out,
                             "policies_compared", (json_int_t)t->n_common, "spearman",
                             isnan(t->spearman) ? json_null() : json_real(t->spearman)));
        }
    return a;
}

static int json_write(const char *dir, const struct sim_cmp_result *res, struct lt_err *err)
{
    char *path = lt_strfmt("%s/compare.json", dir), *tmp = NULL;
    json_t *j = json_pack("{s:s, s:s, s:o}", "ranking",
                          "(times_best, times_ge99) lexicographically, descending; equal pairs "
                          "share their average rank; over the policies both tables have",
                          "source",
                          "Stein, Henzinger, Radovanovic, Scheduling a large datacenter "
                          "(slides): Comparison based on Throughput / on Useful Work",
                          "tables", json_tables(res));
    FILE *f = NULL;
    int rc = 0;

    if (path == NULL || j == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if (rc == 0 && (f = sim_tmp_open(path, &tmp, err)) == NULL)
        rc = err->code;
    if (rc == 0) {
        if (json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) != 0 ||
            fputc('\n', f) == EOF)
            rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s.tmp'", path);
        rc = sim_tmp_commit(f, tmp, path, rc, err);
    }
    json_decref(j);
    lt_free(path);
    return rc;
}

int sim_cmp_write(const char *dir, const struct sim_cmp_result *res, struct lt_err *err)
{
    int rc = csv_write(dir, res, err);
    return rc < 0 ? rc : json_write(dir, res, err);
}

void sim_cmp_html(FILE *f, const struct sim_cmp_result *res)
{
    fputs("<h2>Stein et al.'s comparison tables</h2>\n<p class=\"cap\">Per case (x, seed): "
          "times a policy was best (ties count for each tied policy) and times it reached "
          "99 % of the best; ratio: its mean value / best. Beside it, the slides' numbers "
          "(Stein, Henzinger, Radovanovic, over days and cells of Google's datacenters; "
          "\"-\": not on the slides). Spearman: rank correlation with the slides' order, both "
          "ranked by (times best, times \xe2\x89\xa5 99 %), ties at their average rank.</p>\n",
          f);
    for (int m = 0; m < SIM_CMP_N_METRICS; m++)
        for (int r = 0; r < SIM_CMP_N_RANGES; r++) {
            const struct sim_cmp_table *t = &res->t[m][r];
            fprintf(f, "<h3>%s</h3>\n<p class=\"cap\">%zu cases", title[m][r], t->cases);
            if (t->left_out > 0)
                fprintf(f, ", %zu left out (a run failed)", t->left_out);
            if (isnan(t->spearman))
                fprintf(f, "; Spearman: - (%zu policies in both).</p>\n", t->n_common);
            else
                fprintf(f, "; Spearman with the slides: %+.3f (%zu policies in both).</p>\n",
                        t->spearman, t->n_common);
            fputs("<table>\n<tr><th>policy</th><th>times best</th><th>times \xe2\x89\xa5 99 "
                  "%</th><th>mean ratio</th><th>slides</th><th>times best</th><th>times "
                  "\xe2\x89\xa5 99 %</th></tr>\n",
                  f);
            for (size_t i = 0; i < res->n_policy; i++) {
                size_t k = t->order[i];
                const struct sim_cmp_slide *s = sim_cmp_slide_find(
                    (enum sim_cmp_metric)m, (enum sim_cmp_range)r, res->policy[k]);
                fputs("<tr><th>", f);
                sim_html_puts(f, res->policy[k]);
                fprintf(f, "</th><td class=\"n\">%zu</td><td class=\"n\">%zu</td>", t->row[k].best,
                        t->row[k].ge99);
                if (isnan(t->row[k].mean_ratio))
                    fputs("<td class=\"n\">-</td>", f);
                else
                    fprintf(f, "<td class=\"n\">%.4f</td>", t->row[k].mean_ratio);
                if (s != NULL)
                    fprintf(f, "<td>%s</td><td class=\"n\">%u</td><td class=\"n\">%u</td></tr>\n",
                            s->name, s->best, s->ge99);
                else
                    fputs("<td>-</td><td class=\"n\">-</td><td class=\"n\">-</td></tr>\n", f);
            }
            fputs("</table>\n", f);
        }
}
