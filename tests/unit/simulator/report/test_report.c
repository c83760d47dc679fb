/* test_report.c -- the replay's HTML report (simulator/report/report.c).
 *
 * Each test writes a small fake run directory (two policies, a few rows each) under a
 * mkdtemp directory, calls sim_report_write and inspects DIR: the page, the absence of
 * temporary files, and the errors of malformed inputs. The plots are checked when gnuplot is
 * on PATH; the note that replaces them is checked with PATH pointing nowhere.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"

#define N_POL 2
static const char *const pol[N_POL] = {"firstfit", "sos10"};

static const char ts_header[] =
    "time_s,machines_online,tasks_running,tasks_queued,util_cpu,util_mem,util_disk,"
    "unused_machines,frag5,frag10,frag25,frag50,completed,requeues,req_cpu,req_mem\n";

/* A fake run directory; path is owned by the fixture. */
struct run {
    char path[64];
};

static void write_file(const char *dir, const char *p, const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s/%s", dir, p, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void write_summary(const char *dir, const char *p, int k)
{
    char text[2048];

    snprintf(text, sizeof(text),
             "{\"run\": {\"lotus_version\": \"0.1.0\", \"policy\": \"%s\", \"seed\": 42,"
             " \"trace\": \"tests/data/demo\", \"machines_fraction_pct\": 100.0,"
             " \"window_end_s\": 10800.0, \"interval_s\": 300.0},"
             " \"rows_read\": {\"machine_events\": {\"rows\": 12, \"bad_lines\": 0},"
             " \"task_events\": {\"rows\": 3456, \"bad_lines\": 0}},"
             " \"machines\": {\"in_trace\": 10, \"kept\": 10},"
             " \"tasks\": {\"submitted\": 1000, \"completed\": %d, \"failed\": 3, \"killed\": 4,"
             " \"lost\": 0, \"running_at_end\": 5, \"queued_at_end\": 6, \"unplaceable\": 1,"
             " \"no_requests\": 0, \"orphan_rows\": 0, \"ignored_rows\": 7},"
             " \"jobs\": {\"submitted\": 30, \"completed\": 20,"
             " \"completion_time_mean_s\": 7200.0, \"completion_time_p90_s\": 30.0,"
             " \"bounded_slowdown_mean\": null},"
             " \"metrics\": {\"throughput\": %d, \"flow_time_s\": 36000.0,"
             " \"flow_time_mean_s\": 40.0, \"bounded_slowdown_mean\": 1.25,"
             " \"time_in_system_s\": 40000.0, \"useful_work_s\": 7200.0,"
             " \"wasted_work_s\": 0.0, \"requeues\": 2, \"placements\": 990,"
             " \"queue_mean\": 3.5, \"queue_max\": 9,"
             " \"utilisation_mean\": {\"cpu\": 0.5, \"mem\": 0.25, \"disk\": 0.1},"
             " \"requested_mean\": {\"cpu\": 0.625, \"mem\": 0.3}, \"requested_max\": {\"cpu\": "
             "1.25, \"mem\": 0.5},"
             " \"fragmentation_mean\": {\"5\": 1.0, \"10\": 2.0, \"25\": 3.0, \"50\": 4.0},"
             " \"unused_machines_mean\": 1.5, \"samples\": 4,"
             " \"waiting_by_priority\": {\"0\": {\"started\": 10, \"never_started\": 0,"
             " \"mean_s\": 5.0, \"p50_s\": 1.0, \"p90_s\": 20.0, \"p99_s\": 300.0,"
             " \"max_s\": 400.0}, \"9\": {\"started\": 3, \"never_started\": 1, \"mean_s\": 0.0,"
             " \"p50_s\": 0.0, \"p90_s\": 0.0, \"p99_s\": 0.0, \"max_s\": 0.0}}}}\n",
             p, 900 + k, 900 + k);
    write_file(dir, p, "summary.json", text);
}

static void write_timeseries(const char *dir, const char *p, int k)
{
    char text[2048];
    size_t len = 0;

    len += (size_t)snprintf(text + len, sizeof(text) - len, "%s", ts_header);
    for (int r = 0; r < 4; r++)
        len += (size_t)snprintf(
            text + len, sizeof(text) - len,
            "%d,10,%d,%d,0.%d00000,0.%d50000,0.100000,%d,0,%d,3,4,%d,0,1.%d00000,0.%d"
            "50000\n",
            r * 3600, 20 + r, r + k, 4 + r, 2 + r, 3 - r, r % 2, 100 * r, r, 2 + r);
    write_file(dir, p, "timeseries.csv", text);
}

static void write_waiting(const char *dir, const char *p, int k)
{
    static const int prios[] = {0, 9};
    char text[8192];
    size_t len = 0;

    len += (size_t)snprintf(text + len, sizeof(text) - len,
                            "priority,quantile,waiting_s,all_s,all_lower_bound\n");
    for (size_t j = 0; j < 2; j++)
        for (int q = 0; q <= 100; q++) {
            double w = prios[j] == 0 ? q * q * 0.04 * (k + 1) : 0.0;
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%d,%.2f,%.6f,%.6f,%d\n",
                                    prios[j], q / 100.0, w, w * 1.5, q > 90);
        }
    write_file(dir, p, "waiting.csv", text);
}

static int run_setup(void **state)
{
    struct run *r = calloc(1, sizeof(*r));
    char sub[128];

    assert_non_null(r);
    snprintf(r->path, sizeof(r->path), "/tmp/test_report.XXXXXX");
    assert_non_null(mkdtemp(r->path));
    for (int k = 0; k < N_POL; k++) {
        snprintf(sub, sizeof(sub), "%s/%s", r->path, pol[k]);
        assert_int_equal(mkdir(sub, 0700), 0);
        write_summary(r->path, pol[k], k);
        write_timeseries(r->path, pol[k], k);
        write_waiting(r->path, pol[k], k);
    }
    *state = r;
    return 0;
}

/* Removes DIR/<entries>/<entries> and DIR (the fixture is two levels deep). */
static void rm_tree(const char *path, int depth)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char sub[512];

    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
                continue; /* not one of ours: the test's paths are short */
            if (depth > 0)
                rm_tree(sub, depth - 1);
            remove(sub);
        }
        closedir(d);
    }
    remove(path);
}

static int run_teardown(void **state)
{
    struct run *r = *state;
    rm_tree(r->path, 2);
    free(r);
    return 0;
}

/* The whole of path as a string (free), or NULL if it cannot be read. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s;
    long n;

    if (f == NULL)
        return NULL;
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

static char *report_read(const struct run *r)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/report.html", r->path);
    return slurp(path);
}

static bool report_exists(const struct run *r)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/report.html", r->path);
    return access(path, F_OK) == 0;
}

/* Asserts that DIR holds only the policy directories and, if page, report.html: no
 * report.html.tmp, no .report-XXXXXX directory. */
static void assert_no_leftovers(const struct run *r, bool page)
{
    DIR *d = opendir(r->path);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strstr(e->d_name, ".tmp") != NULL || strncmp(e->d_name, ".report", 7) == 0)
            fail_msg("leftover '%s' in %s", e->d_name, r->path);
        n++;
    }
    closedir(d);
    assert_int_equal(n, N_POL + (page ? 1 : 0));
}

static void test_report_shows_both_policies_metrics_and_six_plots(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char *html;

    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, "lotus-sim replay --policy x", &err), 0);
    html = report_read(r);
    assert_non_null(html);
    assert_non_null(strstr(html, "<th>firstfit</th>"));
    assert_non_null(strstr(html, "<th>sos10</th>"));
    assert_non_null(strstr(html, "lotus-sim replay --policy x"));
    /* Facts of the first summary; metrics converted to the page's units. */
    assert_non_null(strstr(html, "tests/data/demo"));
    assert_non_null(strstr(html, "3,456"));  /* task_events rows read */
    assert_non_null(strstr(html, ">900<"));  /* firstfit completed */
    assert_non_null(strstr(html, ">901<"));  /* sos10 completed */
    assert_non_null(strstr(html, ">10.0<")); /* flow time 36000 s in hours */
    assert_non_null(strstr(html, "50.0 %")); /* CPU utilisation */
    /* The requests against capacity: the table's rows and, with gnuplot, their plot. */
    assert_non_null(strstr(html, "requested / capacity, CPU, mean</th><td class=\"n\">62.5 %<"));
    assert_non_null(strstr(html, "requested / capacity, CPU, max</th><td class=\"n\">125.0 %<"));
    assert_non_null(strstr(html, "1.0 s / 20.0 s / 5.0 min"));
    /* The means per completed task and job; a null mean shows as "-". */
    assert_non_null(strstr(html, ">40.0 s<")); /* flow time mean */
    assert_non_null(strstr(html, ">1.25<"));   /* bounded slowdown */
    assert_non_null(strstr(html, ">2.0 h<"));  /* job completion time mean */
    assert_non_null(strstr(html, "job bounded slowdown, mean (tau 10 s)</th><td class=\"n\">-<"));
    if (sim_report_has_gnuplot()) {
        assert_int_equal(count(html, "<svg"), 6);
        assert_non_null(strstr(html, "Requested against capacity"));
        assert_null(strstr(html, "<?xml"));
    } else {
        assert_int_equal(count(html, "<svg"), 0);
        assert_non_null(strstr(html, "gnuplot was not found"));
    }
    free(html);
    assert_no_leftovers(r, true);
}

static void test_report_without_gnuplot_writes_note_and_succeeds(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    char *html;
    int rc;

    lt_err_init(&err, NULL);
    assert_int_equal(setenv("PATH", "/nonexistent-lotus-test", 1), 0);
    assert_false(sim_report_has_gnuplot());
    rc = sim_report_write(r->path, pol, N_POL, NULL, &err);
    if (path != NULL)
        assert_int_equal(setenv("PATH", path, 1), 0);
    free(path);
    assert_int_equal(rc, 0);
    html = report_read(r);
    assert_non_null(html);
    assert_int_equal(count(html, "<svg"), 0);
    assert_int_equal(count(html, "gnuplot was not found on PATH"), 6);
    assert_non_null(strstr(html, "<th>sos10</th>"));
    free(html);
    assert_no_leftovers(r, true);
}

static void test_report_escapes_the_title(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char *html;

    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, "<script>x('a') & \"b\"</script>", &err),
                     0);
    html = report_read(r);
    assert_non_null(html);
    assert_null(strstr(html, "<script"));
    assert_non_null(
        strstr(html, "&lt;script&gt;x(&#39;a&#39;) &amp; &quot;b&quot;&lt;/script&gt;"));
    free(html);
}

/* A good run first, so the failure must also remove the now stale report.html. */
static void test_report_rejects_malformed_timeseries_and_leaves_no_page(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char text[512];

    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), 0);
    assert_true(report_exists(r));
    snprintf(text, sizeof(text),
             "%s0,10,1,2,0.1,0.2,0.1,3,0,1,2,3,0,0,0.1,0.2\n"
             "300,10,1,2,0.1,zero,0.1,3,0,1,2,3,0,0,0.1,0.2\n",
             ts_header);
    write_file(r->path, pol[1], "timeseries.csv", text);

    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), LT_EPARSE);
    assert_int_equal(err.code, LT_EPARSE);
    assert_non_null(strstr(err.source, "sos10/timeseries.csv"));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 6);
    assert_non_null(strstr(err.text, "util_mem"));
    assert_false(report_exists(r));
    assert_no_leftovers(r, false);
}

static void test_report_rejects_a_header_that_is_not_the_documented_one(void **state)
{
    struct run *r = *state;
    struct lt_err err;

    write_file(r->path, pol[0], "waiting.csv", "priority,q,waiting_s\n0,0.5,1.0\n");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), LT_EPARSE);
    assert_non_null(strstr(err.source, "firstfit/waiting.csv"));
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.text, "header"));
    assert_no_leftovers(r, false);
}

static void test_report_rejects_a_summary_without_a_metric(void **state)
{
    struct run *r = *state;
    struct lt_err err;

    write_file(r->path, pol[1], "summary.json", "{\"run\": {}}\n");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), LT_EPARSE);
    assert_non_null(strstr(err.source, "sos10/summary.json"));
    assert_non_null(strstr(err.text, "'tasks.submitted' is missing"));
    assert_no_leftovers(r, false);
}

static void test_report_rejects_json_syntax_with_its_line(void **state)
{
    struct run *r = *state;
    struct lt_err err;

    write_file(r->path, pol[0], "summary.json", "{\n\"run\": {,\n}\n");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), LT_EPARSE);
    assert_non_null(strstr(err.source, "firstfit/summary.json"));
    assert_int_equal(err.line, 2);
    assert_no_leftovers(r, false);
}

static void test_report_missing_input_is_eio_naming_the_file(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char path[128];

    snprintf(path, sizeof(path), "%s/%s/waiting.csv", r->path, pol[1]);
    assert_int_equal(remove(path), 0);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), LT_EIO);
    assert_non_null(strstr(err.text, "sos10/waiting.csv"));
    assert_no_leftovers(r, false);
}

/* Rewrites policy p's summary.json with a "preemption" object holding pre (its members). */
static void add_preemption(const struct run *r, const char *p, const char *pre)
{
    char path[256], text[4096];
    char *old;
    size_t n;

    snprintf(path, sizeof(path), "%s/%s/summary.json", r->path, p);
    old = slurp(path);
    assert_non_null(old);
    n = strlen(old);
    assert_true(n >= 2 && old[n - 2] == '}' && old[n - 1] == '\n');
    old[n - 2] = '\0'; /* the root's closing brace */
    snprintf(text, sizeof(text), "%s, \"preemption\": {%s}}\n", old, pre);
    free(old);
    write_file(r->path, p, "summary.json", text);
}

#define PRE_COMMON                                                                                 \
    "\"mode\": \"bands\", \"evict\": \"mrs\", \"at_t0\": 7, \"repeat_victims\": 3, "               \
    "\"cascades\": 0, \"trace_evict_rows\": 2000, "                                                \
    "\"trace_evict_rows_by_priority\": {\"0\": 1900, \"9\": 100}, "

/* With --preempt the page has a Preemption table: each policy's victims beside the trace's
 * EVICT rows, their ratio, and the victims by priority summed over the preemptors' (2>0 and
 * 9>0 are both priority 0), the trace's count by priority beside them. */
static void test_report_shows_preemption_beside_the_trace(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char *html;

    add_preemption(r, pol[0],
                   PRE_COMMON "\"preemptions\": 5000, \"preemptors\": 1200, "
                              "\"by_priority\": {\"2>0\": 3000, \"9>0\": 500, \"9>1\": 1500}");
    add_preemption(r, pol[1],
                   PRE_COMMON "\"preemptions\": 1000, \"preemptors\": 300, "
                              "\"by_priority\": {\"9>0\": 1000}");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), 0);
    html = report_read(r);
    assert_non_null(html);
    assert_non_null(strstr(html, "<h2>Preemption</h2>"));
    assert_non_null(strstr(html, "victims (tasks evicted)</th><td class=\"n\">5,000</td>"
                                 "<td class=\"n\">1,000</td><td class=\"n\">2,000</td>"));
    assert_non_null(strstr(html, "victims / trace EVICT rows</th><td class=\"n\">2.50</td>"
                                 "<td class=\"n\">0.50</td>"));
    assert_non_null(strstr(html, "victims of priority 0</th><td class=\"n\">3,500</td>"
                                 "<td class=\"n\">1,000</td><td class=\"n\">1,900</td>"));
    assert_non_null(strstr(html, "victims of priority 1</th><td class=\"n\">1,500</td>"
                                 "<td class=\"n\">0</td><td class=\"n\">0</td>"));
    assert_non_null(strstr(html, "victims of priority 9</th><td class=\"n\">0</td>"
                                 "<td class=\"n\">0</td><td class=\"n\">100</td>"));
    assert_null(strstr(html, "victims of priority 2<"));
    free(html);
    assert_no_leftovers(r, true);
}

/* Without --preempt there is no Preemption table; a malformed "P>V" key is an error naming it,
 * and no page is written. */
static void test_report_rejects_a_malformed_preemption_key(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    char page[128];
    char *html;

    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), 0);
    html = report_read(r);
    assert_non_null(html);
    assert_null(strstr(html, "<h2>Preemption</h2>"));
    free(html);
    snprintf(page, sizeof(page), "%s/report.html", r->path);
    assert_int_equal(remove(page), 0);

    add_preemption(r, pol[1],
                   PRE_COMMON "\"preemptions\": 1, \"preemptors\": 1, "
                              "\"by_priority\": {\"12>0\": 1}");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, N_POL, NULL, &err), LT_EPARSE);
    assert_non_null(strstr(err.source, "sos10/summary.json"));
    assert_non_null(strstr(err.text, "'preemption.by_priority.12>0'"));
    assert_no_leftovers(r, false);
}

static void test_report_rejects_policy_names_that_are_not_directory_names(void **state)
{
    struct run *r = *state;
    struct lt_err err;
    const char *bad[] = {"firstfit", "../etc"};

    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, bad, 2, NULL, &err), LT_EINVAL);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_report_write(r->path, pol, 0, NULL, &err), LT_EINVAL);
    assert_no_leftovers(r, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, run_setup, run_teardown)
        T(test_report_shows_both_policies_metrics_and_six_plots),
        T(test_report_without_gnuplot_writes_note_and_succeeds),
        T(test_report_escapes_the_title),
        T(test_report_rejects_malformed_timeseries_and_leaves_no_page),
        T(test_report_rejects_a_header_that_is_not_the_documented_one),
        T(test_report_rejects_a_summary_without_a_metric),
        T(test_report_rejects_json_syntax_with_its_line),
        T(test_report_missing_input_is_eio_naming_the_file),
        T(test_report_rejects_policy_names_that_are_not_directory_names),
        T(test_report_shows_preemption_beside_the_trace),
        T(test_report_rejects_a_malformed_preemption_key),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
