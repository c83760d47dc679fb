/* test_tx_report.c -- tx's HTML report (simulator/report/tx_report.c).
 *
 * Each test builds a small T(x) sweep in memory (two x, three policies, one of which has a
 * failed cell), calls sim_tx_report_write on a mkdtemp directory and inspects the page: the
 * command box, the two tables (mean +- half-width over seeds, "(n)" and "-" cells), the two
 * plots when gnuplot is on PATH (the note with PATH pointing nowhere), no temporary file left.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/htmlplot.h"
#include "report/tx_report.h"

#define N_X   2
#define N_POL 3
static const double xs[N_X] = {50, 100};
static const char *const pol[N_POL] = {"firstfit", "bestfit1", "a<b"};

/* [xi * N_POL + k] */
static const struct sim_tx_cell tasks[N_X * N_POL] = {
    {100, 12.6, 3}, {100, 12.6, 3}, {0, 0, 0}, /* bestfit1 coincides with firstfit; a<b failed */
    {250, 4.4, 3},  {240, 0, 2},    {7, 0, 1},
};
static const struct sim_tx_cell jobs[N_X * N_POL] = {
    {10, 1, 3}, {11, 2, 3}, {0, 0, 0}, {20, 3, 3}, {19, 0, 2}, {3, 0, 1},
};

static int dir_setup(void **state)
{
    char *d = strdup("/tmp/test_tx_report.XXXXXX");

    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    *state = d;
    return 0;
}

static int dir_teardown(void **state)
{
    char *d = *state, path[256];

    snprintf(path, sizeof(path), "%s/report.html", d);
    remove(path);
    assert_int_equal(rmdir(d), 0); /* fails if anything else was left */
    free(d);
    return 0;
}

static char *read_page(const char *dir)
{
    char path[256];
    FILE *f;
    long n;
    char *s;

    snprintf(path, sizeof(path), "%s/report.html", dir);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Only report.html is in dir: no .tmp file, no temporary directory. */
static void only_the_page(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        assert_string_equal(e->d_name, "report.html");
        n++;
    }
    closedir(d);
    assert_int_equal(n, 1);
}

static struct sim_tx_table table(uint64_t seeds)
{
    struct sim_tx_table t = {xs, N_X, pol, N_POL, 7, seeds, tasks, jobs, NULL};
    return t;
}

static void test_tx_report_tables_with_ci_and_two_plots(void **state)
{
    const char *dir = *state;
    struct sim_tx_table t = table(3);
    struct lt_err err;
    bool plotted = true;
    char *html;

    lt_err_init(&err, NULL);
    assert_int_equal(
        sim_tx_report_write(dir, &t, "lotus-sim tx --seeds 3 'it''s'", "0.1.0", &plotted, &err), 0);
    html = read_page(dir);
    assert_non_null(strstr(html,
                           "<code class=\"cmd\">lotus-sim tx --seeds 3 &#39;it&#39;&#39;s&#39;"
                           "</code>"));
    assert_non_null(strstr(html, "<h2>T(x): tasks completed</h2>"));
    assert_non_null(strstr(html, "<h2>T(x): jobs completed</h2>"));
    assert_non_null(strstr(html, "<th>firstfit</th><th>bestfit1</th><th>a&lt;b</th>"));
    /* tasks: mean +- half-width; the failed cell; fewer seeds; one seed has no half-width */
    assert_non_null(strstr(html,
                           "<tr><th>50</th><td class=\"n\">100 \xc2\xb1 13</td>"
                           "<td class=\"n\">100 \xc2\xb1 13</td><td class=\"n\">-</td></tr>"));
    assert_non_null(strstr(html, "<tr><th>100</th><td class=\"n\">250 \xc2\xb1 4</td>"
                                 "<td class=\"n\">240 \xc2\xb1 0 (2)</td><td class=\"n\">7 (1)</td>"
                                 "</tr>"));
    /* jobs */
    assert_non_null(strstr(html, "<tr><th>50</th><td class=\"n\">10 \xc2\xb1 1</td>"
                                 "<td class=\"n\">11 \xc2\xb1 2</td><td class=\"n\">-</td></tr>"));
    assert_non_null(strstr(html, "seeds</th><td>3 (7..9)"));
    assert_non_null(strstr(html, "Written by lotus-sim 0.1.0."));
    if (sim_gnuplot_find((char[SIM_MAX_PATH]){0}, SIM_MAX_PATH)) {
        assert_true(plotted);
        assert_int_equal(count(html, "<svg"), 2);
        assert_non_null(strstr(html, "id=\"tx_tasks"));
        assert_non_null(strstr(html, "id=\"tx_jobs"));
        /* one key entry per policy, the escaped name included */
        assert_int_equal(count(html, ">firstfit</text>"), 2);
        assert_int_equal(count(html, ">bestfit1</text>"), 2);
        assert_int_equal(count(html, ">a&lt;b</text>"), 2);
    } else {
        assert_false(plotted);
        assert_int_equal(count(html, "gnuplot was not found"), 2);
    }
    free(html);
    only_the_page(dir);
}

static void test_tx_report_one_seed_shows_plain_counts(void **state)
{
    const char *dir = *state;
    struct sim_tx_table t = table(1);
    struct lt_err err;
    bool plotted;
    char *html;

    lt_err_init(&err, NULL);
    assert_int_equal(sim_tx_report_write(dir, &t, NULL, NULL, &plotted, &err), 0);
    html = read_page(dir);
    assert_null(strstr(html, "class=\"cmd\""));
    assert_null(strstr(html, "\xc2\xb1 1"));
    assert_non_null(strstr(html, "<tr><th>100</th><td class=\"n\">250</td>"
                                 "<td class=\"n\">240</td><td class=\"n\">7</td></tr>"));
    assert_non_null(strstr(html, "seed</th><td>7</td>"));
    assert_null(strstr(html, "comparison tables")); /* no --compare: no such section */
    free(html);
    only_the_page(dir);
}

/* tx --compare: the comparison tables close the page, each policy beside the slides' line. */
static void test_tx_report_compare_section(void **state)
{
    const char *dir = *state;
    static const char *const cpol[] = {"bestfit3", "a<b"};
    static const double cx[] = {85, 20}, cval[] = {10, 9, 5, 5};
    struct sim_cmp_input in = {cpol, 2, 2, cx, cval, cval};
    struct sim_cmp_result cmp;
    struct sim_tx_table t = table(1);
    struct lt_err err;
    bool plotted;
    char *html;

    lt_err_init(&err, NULL);
    assert_int_equal(sim_cmp_compute(&in, &cmp, &err), 0);
    t.compare = &cmp;
    assert_int_equal(sim_tx_report_write(dir, &t, NULL, NULL, &plotted, &err), 0);
    html = read_page(dir);
    assert_non_null(strstr(html, "<h2>Stein et al.'s comparison tables</h2>"));
    /* throughput over all x: bestfit3 best twice, 99 % twice, beside the slides' 12 / 38 */
    assert_non_null(strstr(html, "<tr><th>bestfit3</th><td class=\"n\">2</td><td "
                                 "class=\"n\">2</td><td class=\"n\">1.0000</td><td>BestFit3</td>"
                                 "<td class=\"n\">12</td><td class=\"n\">38</td></tr>"));
    assert_non_null(strstr(html, "<tr><th>a&lt;b</th><td class=\"n\">1</td>"));
    free(html);
    only_the_page(dir);
}

static void test_tx_report_without_gnuplot_writes_note(void **state)
{
    const char *dir = *state;
    struct sim_tx_table t = table(3);
    char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    struct lt_err err;
    bool plotted = true;
    char *html;
    int rc;

    lt_err_init(&err, NULL);
    assert_int_equal(setenv("PATH", "/nonexistent-lotus-test", 1), 0);
    rc = sim_tx_report_write(dir, &t, NULL, NULL, &plotted, &err);
    if (path != NULL)
        assert_int_equal(setenv("PATH", path, 1), 0);
    free(path);
    assert_int_equal(rc, 0);
    assert_false(plotted);
    html = read_page(dir);
    assert_int_equal(count(html, "gnuplot was not found on PATH"), 2);
    assert_int_equal(count(html, "<svg"), 0);
    free(html);
    only_the_page(dir);
}

static void test_tx_report_rejects_a_bad_table_and_leaves_no_page(void **state)
{
    const char *dir = *state;
    static const char *const bad[N_POL] = {"firstfit", "", "sos10"};
    struct sim_tx_table t = table(0);
    struct lt_err err;
    bool plotted;
    char path[256];

    lt_err_init(&err, NULL);
    assert_int_equal(sim_tx_report_write(dir, &t, NULL, NULL, &plotted, &err), LT_EINVAL);
    t = table(2);
    t.policy = bad;
    lt_err_init(&err, NULL);
    assert_int_equal(sim_tx_report_write(dir, &t, NULL, NULL, &plotted, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "policy 1"));
    snprintf(path, sizeof(path), "%s/report.html", dir);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, dir_setup, dir_teardown)
        T(test_tx_report_tables_with_ci_and_two_plots),
        T(test_tx_report_one_seed_shows_plain_counts),
        T(test_tx_report_compare_section),
        T(test_tx_report_without_gnuplot_writes_note),
        T(test_tx_report_rejects_a_bad_table_and_leaves_no_page),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
