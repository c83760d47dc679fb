/* test_qworkload.c -- lotus-sim queue's inputs (simulator/queue/workload.c, gen.c): the CSV and
 * SWF readers on hand-checked files and on every malformed case with its exact position, the
 * generator's determinism and distributions, the noisy estimates' mean and spread, and random
 * bytes that must give a job array or a positioned error, never a crash (ASan in test-asan).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_rng.h"
#include "queue/workload.h"

#ifndef QW_DATA_DIR
#error "QW_DATA_DIR must point at tests/data/queue"
#endif

/* ---- helpers -------------------------------------------------------------------------- */

static int load_csv(const char *text, const struct sim_qload_opts *o, struct lt_qjob **jobs,
                    size_t *n, struct sim_qload_info *info, struct lt_err *err)
{
    lt_err_init(err, NULL);
    return sim_qload_csv_buffer("jobs.csv", text, strlen(text), o, jobs, n, info, err);
}

static int load_swf(const char *text, const struct sim_qload_opts *o, struct lt_qjob **jobs,
                    size_t *n, struct sim_qload_info *info, struct lt_err *err)
{
    lt_err_init(err, NULL);
    return sim_qload_swf_buffer("log.swf", text, strlen(text), o, jobs, n, info, err);
}

static void check_job(const struct lt_qjob *j, int64_t id, double arrival, uint32_t tasks,
                      double runtime, double estimate, int cls)
{
    assert_int_equal(j->id, id);
    lt_assert_near(j->arrival_s, arrival, 0); /* decimal inputs read exactly as strtod does */
    assert_int_equal(j->tasks, tasks);
    lt_assert_near(j->runtime_s, runtime, 0);
    lt_assert_near(j->estimate_s, estimate, 0);
    assert_int_equal(j->cls, cls);
}

/* A malformed case: the input, the code, the position and the exact message. */
struct bad {
    const char *in;
    int code;
    int64_t line;
    int column;
    const char *text;
};

static void check_bad(const struct bad *b, size_t nb, bool swf, const struct sim_qload_opts *o)
{
    size_t i;

    for (i = 0; i < nb; i++) {
        struct lt_qjob *jobs = (struct lt_qjob *)(uintptr_t)1; /* must stay untouched */
        size_t n = 77;
        struct lt_err err;
        int rc = swf ? load_swf(b[i].in, o, &jobs, &n, NULL, &err)
                     : load_csv(b[i].in, o, &jobs, &n, NULL, &err);

        if (rc != b[i].code || err.line != b[i].line || err.column != b[i].column ||
            strcmp(err.text, b[i].text) != 0)
            print_error("case %zu: got %d %s:%lld:%d: %s\n", i, rc, err.source, (long long)err.line,
                        err.column, err.text);
        assert_int_equal(rc, b[i].code);
        assert_int_equal(err.code, b[i].code);
        assert_int_equal(err.line, b[i].line);
        assert_int_equal(err.column, b[i].column);
        assert_string_equal(err.text, b[i].text);
        assert_string_equal(err.source, swf ? "log.swf" : "jobs.csv");
        assert_true(jobs == (struct lt_qjob *)(uintptr_t)1);
        assert_int_equal(n, 77);
    }
}

/* ---- CSV ------------------------------------------------------------------------------ */

/* tests/data/queue/jobs.csv, checked by hand: sorted by arrival (line 7's job, at 5 s, moves
 * before line 6's), an empty estimate becomes the run time, an empty class -1. */
static void test_csv_reads_the_example_file(void **state)
{
    struct lt_qjob *j = NULL;
    struct sim_qload_info info;
    struct lt_err err;
    size_t n = 0;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qload_csv(QW_DATA_DIR "/jobs.csv", NULL, &j, &n, &info, &err), 0);
    assert_int_equal(n, 6);
    check_job(&j[0], 0, 0, 4, 100, 120, 0);
    check_job(&j[1], 1, 0, 8, 50, 60, 1);
    check_job(&j[2], 2, 5, 2, 200, 200, 0);
    check_job(&j[3], 3, 10, 16, 30, 30, 2);
    check_job(&j[4], 4, 12.5, 1, 400, 500, -1);
    check_job(&j[5], 5, 20, 4, 80, 100, 1);
    assert_int_equal(info.n_lines, 6);
    assert_int_equal(info.n_jobs, 6);
    assert_int_equal(info.n_estimates, 5);
    lt_free(j);
}

/* Columns by name in any order, the optional ones absent, blanks around values, CRLF, a BOM,
 * equal arrivals keeping the file's order. */
static void test_csv_takes_columns_in_any_order(void **state)
{
    const char *in = "\xEF\xBB\xBF\"runtime_s\", tasks ,arrival_s\r\n"
                     "30,2,7\r\n"
                     "# a comment\r\n"
                     "  10 ,\t1,  3\r\n"
                     "1e2,3,3\n"
                     "0.5,1,0";
    struct lt_qjob *j = NULL;
    struct sim_qload_info info;
    struct lt_err err;
    size_t n = 0;

    (void)state;
    assert_int_equal(load_csv(in, NULL, &j, &n, &info, &err), 0);
    assert_int_equal(n, 4);
    check_job(&j[0], 0, 0, 1, 0.5, 0.5, -1);
    check_job(&j[1], 1, 3, 1, 10, 10, -1);
    check_job(&j[2], 2, 3, 3, 100, 100, -1);
    check_job(&j[3], 3, 7, 2, 30, 30, -1);
    assert_int_equal(info.n_estimates, 0);
    lt_free(j);
}

static void test_csv_header_only_gives_no_jobs(void **state)
{
    struct lt_qjob *j = (struct lt_qjob *)(uintptr_t)1;
    struct lt_err err;
    size_t n = 5;

    (void)state;
    assert_int_equal(load_csv("arrival_s,tasks,runtime_s\n", NULL, &j, &n, NULL, &err), 0);
    assert_null(j);
    assert_int_equal(n, 0);
}

static void test_csv_rejects_every_malformed_field_at_its_position(void **state)
{
    static const struct bad b[] = {
        {"", LT_EPARSE, 0, 0, "no header line (arrival_s,tasks,runtime_s[,estimate_s][,class])"},
        {"# only a comment\n\n", LT_EPARSE, 2, 0,
         "no header line (arrival_s,tasks,runtime_s[,estimate_s][,class])"},
        {"0,1,10\n", LT_EPARSE, 1, 1,
         "unknown column '0' (the header names arrival_s, tasks, runtime_s and optionally "
         "estimate_s, class)"},
        {"arrival_s,tasks,runtme_s\n", LT_EPARSE, 1, 3,
         "unknown column 'runtme_s' (the header names arrival_s, tasks, runtime_s and optionally "
         "estimate_s, class)"},
        {"arrival_s,tasks,tasks,runtime_s\n", LT_EPARSE, 1, 3, "column 'tasks' appears twice"},
        {"arrival_s,runtime_s\n", LT_EPARSE, 1, 0, "the header has no 'tasks' column"},
        {"arrival_s,tasks,runtime_s,\n", LT_EPARSE, 1, 4,
         "unknown column '' (the header names arrival_s, tasks, runtime_s and optionally "
         "estimate_s, class)"},
        {"arrival_s,tasks,runtime_s\n0,1,10\n# c\n0,0,10\n", LT_EPARSE, 4, 2,
         "tasks: '0' is not a whole number >= 1"},
        {"arrival_s,tasks,runtime_s\n0,2.0,10\n", LT_EPARSE, 2, 2,
         "tasks: '2.0' is not a whole number >= 1"},
        {"arrival_s,tasks,runtime_s\n0,4294967296,10\n", LT_EPARSE, 2, 2,
         "tasks: '4294967296' is more than 4294967295"},
        {"arrival_s,tasks,runtime_s\n-1,1,10\n", LT_EPARSE, 2, 1,
         "arrival_s: '-1' is not a number >= 0"},
        {"arrival_s,tasks,runtime_s\ninf,1,10\n", LT_EPARSE, 2, 1,
         "arrival_s: 'inf' is not a number >= 0"},
        {"arrival_s,tasks,runtime_s\n0x10,1,10\n", LT_EPARSE, 2, 1,
         "arrival_s: '0x10' is not a number >= 0"},
        {"arrival_s,tasks,runtime_s\n1e999,1,10\n", LT_EPARSE, 2, 1,
         "arrival_s: '1e999' is not a number >= 0"},
        {"arrival_s,tasks,runtime_s\n0,1,0\n", LT_EPARSE, 2, 3,
         "runtime_s: '0' is not a number > 0"},
        {"arrival_s,tasks,runtime_s\n0,1,\n", LT_EPARSE, 2, 3, "runtime_s: missing value"},
        {"arrival_s,tasks,runtime_s\n0,1\n", LT_EPARSE, 2, 3,
         "expected 3 fields (as the header), found 2"},
        {"arrival_s,tasks,runtime_s\n0,1,5,6\n", LT_EPARSE, 2, 4,
         "expected 3 fields (as the header), found 4"},
        {"arrival_s,tasks,runtime_s,estimate_s,class\n0,1,5,-2,0\n", LT_EPARSE, 2, 4,
         "estimate_s: '-2' is not a number > 0"},
        {"arrival_s,tasks,runtime_s,estimate_s,class\n0,1,5,6,x\n", LT_EPARSE, 2, 5,
         "class: 'x' is not a whole number in 0..2147483647"},
        {"arrival_s,tasks,runtime_s,estimate_s,class\n0,1,5,6,-1\n", LT_EPARSE, 2, 5,
         "class: '-1' is not a whole number in 0..2147483647"},
        {"arrival_s,tasks,runtime_s\n\"1\",1,5\n", LT_EPARSE, 2, 1,
         "arrival_s: '\"1\"' is not a number >= 0"},
        {"arrival_s,tasks,runtime_s\n1,1,"
         "1234567890123456789012345678901234567890123456789012345678901234\n",
         LT_EPARSE, 2, 3,
         "runtime_s: '1234567890123456789012345678901234567890...' is not a number > 0"},
        {"arrival_s,tasks,runtime_s\n1,\x01\xff,5\n", LT_EPARSE, 2, 2,
         "tasks: '?\?' is not a whole number >= 1"},
    };

    (void)state;
    check_bad(b, sizeof(b) / sizeof(b[0]), false, NULL);
}

/* --estimate field: the column must exist and every job must have a value. */
static void test_csv_field_estimates_need_every_value(void **state)
{
    static const struct bad b[] = {
        {"arrival_s,tasks,runtime_s\n0,1,5\n", LT_EPARSE, 1, 0,
         "the header has no 'estimate_s' column, which --estimate field needs"},
        {"arrival_s,tasks,runtime_s,estimate_s\n0,1,5,6\n1,1,5,\n", LT_EPARSE, 3, 4,
         "estimate_s: missing, and --estimate field needs it"},
    };
    struct sim_qload_opts o = {.need_estimates = true};

    (void)state;
    check_bad(b, 2, false, &o);
}

static void test_csv_rejects_long_lines_and_missing_files(void **state)
{
    char *in = malloc(SIM_QLOAD_MAX_LINE + 64);
    struct lt_qjob *j = NULL;
    struct lt_err err;
    size_t n = 0, k;

    (void)state;
    assert_non_null(in);
    k = (size_t)snprintf(in, 64, "arrival_s,tasks,runtime_s\n0,1,");
    memset(in + k, '1', SIM_QLOAD_MAX_LINE);
    in[k + SIM_QLOAD_MAX_LINE] = '\0';
    assert_int_equal(load_csv(in, NULL, &j, &n, NULL, &err), LT_ERANGE);
    assert_int_equal(err.line, 2);
    assert_string_equal(err.text, "line is longer than 4096 bytes");
    free(in);

    lt_err_init(&err, NULL);
    assert_int_equal(sim_qload_csv(QW_DATA_DIR "/no-such.csv", NULL, &j, &n, NULL, &err), LT_EIO);
    assert_string_equal(err.source, QW_DATA_DIR "/no-such.csv");
    assert_string_equal(err.text, "cannot open workload: No such file or directory");
}

/* The file reader crosses its 64 KiB blocks and a long line at a block edge like the buffer
 * reader: the same jobs from a 200,000-byte file read both ways. */
static void test_csv_file_and_buffer_agree_across_blocks(void **state)
{
    const char *path = "test_qworkload_blocks.csv";
    size_t cap = 300000, len = 0, n1 = 0, n2 = 0, i;
    char *text = malloc(cap);
    struct lt_qjob *a = NULL, *b = NULL;
    struct lt_err err;
    FILE *f;

    (void)state;
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "arrival_s,tasks,runtime_s\n");
    for (i = 0; len < 200000; i++)
        len += (size_t)snprintf(text + len, cap - len, "%zu.%03zu,%zu,%zu.5\n", i, i % 1000,
                                1 + i % 7, 1 + i % 13);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qload_csv(path, NULL, &a, &n1, NULL, &err), 0);
    assert_int_equal(load_csv(text, NULL, &b, &n2, NULL, &err), 0);
    assert_int_equal(n1, i);
    assert_int_equal(n2, i);
    assert_memory_equal(a, b, n1 * sizeof(*a));
    lt_free(a);
    lt_free(b);
    free(text);
    remove(path);
}

/* ---- SWF ------------------------------------------------------------------------------ */

/* tests/data/queue/example.swf, checked by hand: submit times minus 100; job 2 (run time -1)
 * and 4 (0) skipped, 6 (no processors) skipped, 7's partial executions skipped, 3's size from
 * field 8 and its estimate = its run time (field 9 is -1), 5 cancelled but ran: kept. */
static void test_swf_reads_the_example_file(void **state)
{
    struct lt_qjob *j = NULL;
    struct sim_qload_info info;
    struct lt_err err;
    size_t n = 0;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qload_swf(QW_DATA_DIR "/example.swf", NULL, &j, &n, &info, &err), 0);
    assert_int_equal(n, 5);
    check_job(&j[0], 0, 0, 16, 300, 600, -1);
    check_job(&j[1], 1, 20, 4, 50, 50, -1);
    check_job(&j[2], 2, 40, 32, 200, 3600, -1);
    check_job(&j[3], 3, 60, 64, 1000, 900, -1);
    check_job(&j[4], 4, 70.5, 1, 12.25, 30, -1);
    assert_int_equal(info.n_lines, 10);
    assert_int_equal(info.n_jobs, 5);
    assert_int_equal(info.n_estimates, 4);
    assert_int_equal(info.skipped_runtime, 2);
    assert_int_equal(info.skipped_size, 1);
    assert_int_equal(info.skipped_partial, 2);
    assert_int_equal(info.size_from_request, 1);
    assert_int_equal(info.cancelled_kept, 1);
    lt_assert_near(info.time_offset_s, 100, 0);
    assert_int_equal(info.max_procs, 64);
    assert_int_equal(info.max_nodes, 16);
    lt_free(j);
}

#define SWF_OK "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n"

/* Header keys in any case with a remark after the number, the first of each kept; tabs; no
 * header at all gives 0; a file of comments gives no jobs. */
static void test_swf_reads_header_comments(void **state)
{
    const char *in = ";maxprocs:\t128 (32 nodes x 4)\n;  MaxNodes: 32\n; MaxProcs: 7\n"
                     "\t" SWF_OK;
    struct lt_qjob *j = NULL;
    struct sim_qload_info info;
    struct lt_err err;
    size_t n = 0;

    (void)state;
    assert_int_equal(load_swf(in, NULL, &j, &n, &info, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(info.max_procs, 128);
    assert_int_equal(info.max_nodes, 32);
    check_job(&j[0], 0, 0, 4, 10, 20, -1);
    lt_free(j);

    assert_int_equal(load_swf("; Version: 2.2\n;\n", NULL, &j, &n, &info, &err), 0);
    assert_null(j);
    assert_int_equal(n, 0);
    assert_int_equal(info.max_procs, 0);
    assert_int_equal(info.max_nodes, 0);
}

static void test_swf_rejects_every_malformed_line_at_its_field(void **state)
{
    static const struct bad b[] = {
        {"1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1\n", LT_EPARSE, 1, 18,
         "expected 18 fields, found 17"},
        {SWF_OK "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1 9\n", LT_EPARSE, 2, 19,
         "expected 18 fields, found 19"},
        {"; MaxProcs: 8\n\n1 0 0 10 4 -1 x 4 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 3, 7,
         "field 7 (used memory): 'x' is not a number"},
        {"1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 nan\n", LT_EPARSE, 1, 18,
         "field 18 (think time): 'nan' is not a number"},
        {"1 -5 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 2,
         "field 2 (submit time): '-5' is not a time >= 0"},
        {"1 0 0 -3 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 4,
         "field 4 (run time): '-3' is not -1 or a time >= 0"},
        {"1 0 0 10 2.5 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 5,
         "field 5 (allocated processors): '2.5' is not -1 or a whole number >= 1"},
        {"1 0 0 10 -1 -1 -1 -7 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 8,
         "field 8 (requested processors): '-7' is not -1 or a whole number >= 1"},
        {"1 0 0 10 4294967296 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 5,
         "field 5 (allocated processors): '4294967296' is more than 4294967295"},
        {"1 0 0 10 4 -1 -1 4 -2 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 9,
         "field 9 (requested time): '-2' is not -1 or a time >= 0"},
        {"1 0 0 10 4 -1 -1 4 20 -1 7 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 11,
         "field 11 (status): '7' is not one of -1, 0, 1, 2, 3, 4, 5"},
        {"1 0 0 10 4 -1 -1 4 20 -1 1.0 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 11,
         "field 11 (status): '1.0' is not one of -1, 0, 1, 2, 3, 4, 5"},
        {"1,0,0,10,4,-1,-1,4,20,-1,1,1,1,1,1,1,-1,-1\n", LT_EPARSE, 1, 2,
         "expected 18 fields, found 1"},
        {"; MaxProcs: lots\n" SWF_OK, LT_EPARSE, 1, 0,
         "header MaxProcs: 'lots' is not a whole number >= 1"},
        {"; MaxNodes: 0\n" SWF_OK, LT_EPARSE, 1, 0,
         "header MaxNodes: '0' is not a whole number >= 1"},
        {"; MaxNodes: 12x\n" SWF_OK, LT_EPARSE, 1, 0,
         "header MaxNodes: '12x' is not a whole number >= 1"},
    };

    (void)state;
    check_bad(b, sizeof(b) / sizeof(b[0]), true, NULL);
}

/* Strict mode: a job the reader would skip is an error at its field; partial executions are
 * not jobs and stay skipped. --estimate field: a job without field 9 is an error. */
static void test_swf_strict_and_field_estimates_fail_where_they_should(void **state)
{
    static const struct bad strict[] = {
        {SWF_OK "2 5 0 -1 4 -1 -1 4 20 -1 5 1 1 1 1 1 -1 -1\n", LT_EPARSE, 2, 4,
         "field 4 (run time): '-1' is not a run time > 0 (strict mode)"},
        {"2 5 0 0 4 -1 -1 4 20 -1 0 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 4,
         "field 4 (run time): '0' is not a run time > 0 (strict mode)"},
        {"2 5 0 9 -1 -1 -1 0 20 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 1, 5,
         "field 5 (allocated processors): '-1' and field 8 give no processor count (strict "
         "mode)"},
    };
    static const struct bad field[] = {
        {SWF_OK "2 5 0 9 4 -1 -1 4 -1 -1 1 1 1 1 1 1 -1 -1\n", LT_EPARSE, 2, 9,
         "field 9 (requested time): '-1' is no estimate, and --estimate field needs one"},
    };
    struct sim_qload_opts o = {.strict = true};
    struct lt_qjob *j = NULL;
    struct lt_err err;
    size_t n = 0;

    (void)state;
    check_bad(strict, 3, true, &o);
    assert_int_equal(
        load_swf(SWF_OK "1 0 0 10 4 -1 -1 4 20 -1 2 1 1 1 1 1 -1 -1\n", &o, &j, &n, NULL, &err), 0);
    assert_int_equal(n, 1);
    lt_free(j);
    o = (struct sim_qload_opts){.need_estimates = true};
    check_bad(field, 1, true, &o);
}

/* ---- generator ------------------------------------------------------------------------ */

static void gen(const char *spec, uint64_t cores, uint64_t seed, struct lt_qjob **j, size_t *n)
{
    struct sim_qgen_spec s;
    struct lt_err err;

    lt_err_init(&err, NULL);
    assert_int_equal(sim_qgen_parse(spec, &s, &err), 0);
    assert_int_equal(sim_qgen(&s, cores, seed, j, n, &err), 0);
}

static void test_gen_parse_reads_every_key_and_keeps_defaults(void **state)
{
    struct sim_qgen_spec s, d;
    struct lt_err err;

    (void)state;
    sim_qgen_defaults(&d);
    assert_int_equal(sim_qgen_parse("gen", &s, &err), 0);
    assert_int_equal(s.n, 1000);
    assert_false(s.batch);
    lt_assert_near(s.rate, 0, 0);
    lt_assert_near(s.load, 0.9, 0);
    assert_int_equal(s.tasks_min, 1);
    assert_int_equal(s.tasks_max, 64);
    lt_assert_near(s.runtime_min_s, 10, 0);
    lt_assert_near(s.runtime_max_s, 3600, 0);
    assert_int_equal(sim_qgen_parse("gen:", &s, &err), 0);
    assert_int_equal(s.n, d.n);
    assert_int_equal(sim_qgen_parse("gen:n=20,tasks=2..8,runtime=1.5..60,rate=0.25", &s, &err), 0);
    assert_int_equal(s.n, 20);
    assert_int_equal(s.tasks_min, 2);
    assert_int_equal(s.tasks_max, 8);
    lt_assert_near(s.runtime_min_s, 1.5, 0);
    lt_assert_near(s.runtime_max_s, 60, 0);
    lt_assert_near(s.rate, 0.25, 0);
    assert_false(s.batch);
    assert_int_equal(sim_qgen_parse("gen:arrivals=batch,tasks=4,runtime=100", &s, &err), 0);
    assert_true(s.batch);
    assert_int_equal(s.tasks_min, 4);
    assert_int_equal(s.tasks_max, 4);
    lt_assert_near(s.runtime_min_s, 100, 0);
    lt_assert_near(s.runtime_max_s, 100, 0);
}

static void test_gen_parse_rejects_bad_specs(void **state)
{
    static const struct {
        const char *in;
        int code;
        const char *text;
    } b[] = {
        {"generate", LT_EINVAL, "generator spec 'generate' does not start with 'gen'"},
        {"gen:m=3", LT_ENOTFOUND,
         "generator spec: unknown key 'm' (known: n, arrivals, rate, load, tasks, runtime)"},
        {"gen:n", LT_EINVAL, "generator spec: key 'n' has no '=VALUE'"},
        {"gen:n=0", LT_EINVAL, "generator spec: n: '0' is not a whole number in 1..134217728"},
        {"gen:n=5,n=6", LT_EINVAL, "generator spec: key 'n' appears twice"},
        {"gen:n=5,", LT_EINVAL, "generator spec 'gen:n=5,' ends with ','"},
        {"gen:rate=1,load=0.5", LT_EINVAL, "generator spec: give rate or load, not both"},
        {"gen:arrivals=batch,rate=2", LT_EINVAL,
         "generator spec: arrivals=batch takes no rate or load"},
        {"gen:arrivals=burst", LT_EINVAL,
         "generator spec: arrivals: 'burst' is not 'batch' or 'poisson'"},
        {"gen:rate=-1", LT_EINVAL, "generator spec: rate: '-1' is not a number > 0"},
        {"gen:load=inf", LT_EINVAL, "generator spec: load: 'inf' is not a number > 0"},
        {"gen:tasks=8..2", LT_EINVAL,
         "generator spec: tasks: '8..2' is not A..B or A with whole 1 <= A <= B <= 4294967295"},
        {"gen:tasks=0..2", LT_EINVAL,
         "generator spec: tasks: '0..2' is not A..B or A with whole 1 <= A <= B <= 4294967295"},
        {"gen:runtime=0..5", LT_EINVAL,
         "generator spec: runtime: '0..5' is not A..B or A with seconds 0 < A <= B"},
        {"gen:runtime=5..", LT_EINVAL,
         "generator spec: runtime: '5..' is not A..B or A with seconds 0 < A <= B"},
    };
    struct sim_qgen_spec s, d;
    struct lt_err err;
    size_t i;

    (void)state;
    sim_qgen_defaults(&d);
    for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
        s = d;
        s.n = 12345;
        lt_err_init(&err, NULL);
        assert_int_equal(sim_qgen_parse(b[i].in, &s, &err), b[i].code);
        assert_string_equal(err.text, b[i].text);
        assert_int_equal(s.n, 12345); /* untouched */
    }
}

static void test_gen_checks_cores_and_rate(void **state)
{
    struct sim_qgen_spec s;
    struct lt_qjob *j = NULL;
    struct lt_err err;
    size_t n = 0;

    (void)state;
    sim_qgen_defaults(&s);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qgen(&s, 32, 1, &j, &n, &err), LT_EINVAL);
    assert_string_equal(err.text, "generator: jobs of up to 64 tasks cannot run on 32 cores");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qgen(&s, 0, 1, &j, &n, &err), LT_EINVAL);
    assert_string_equal(err.text,
                        "generator: Poisson arrivals need rate > 0, or load > 0 and cores");
    assert_null(j);
}

/* The same seed gives the same jobs; another seed others; batch has the same sizes and run
 * times as Poisson with zero arrivals; n = 10 is a prefix of n = 50 (fixed rate). */
static void test_gen_is_deterministic_by_seed(void **state)
{
    struct lt_qjob *a, *b, *c, *d;
    size_t na, nb, nc, nd, i;

    (void)state;
    gen("gen:n=50,rate=0.5", 0, 42, &a, &na);
    gen("gen:n=50,rate=0.5", 0, 42, &b, &nb);
    assert_int_equal(na, 50);
    assert_memory_equal(a, b, na * sizeof(*a));
    lt_free(b);
    gen("gen:n=50,rate=0.5", 0, 43, &b, &nb);
    assert_memory_not_equal(a, b, na * sizeof(*a));
    gen("gen:n=50,arrivals=batch", 0, 42, &c, &nc);
    gen("gen:n=10,rate=0.5", 0, 42, &d, &nd);
    lt_assert_near(a[0].arrival_s, 0, 0);
    for (i = 0; i < na; i++) {
        assert_int_equal(a[i].id, (int64_t)i);
        assert_int_equal(c[i].tasks, a[i].tasks);
        lt_assert_near(c[i].runtime_s, a[i].runtime_s, 0);
        lt_assert_near(c[i].arrival_s, 0, 0);
        lt_assert_near(a[i].estimate_s, a[i].runtime_s, 0);
        assert_int_equal(a[i].cls, -1);
        assert_true(a[i].tasks >= 1 && a[i].tasks <= 64);
        assert_true(a[i].runtime_s >= 10 && a[i].runtime_s <= 3600);
        if (i > 0)
            assert_true(a[i].arrival_s >= a[i - 1].arrival_s);
    }
    assert_memory_equal(a, d, nd * sizeof(*a));
    lt_free(a);
    lt_free(b);
    lt_free(c);
    lt_free(d);
}

/* 40,000 jobs: run times log-uniform on [10, 3600] have mean (b - a) / ln(b / a) = 609.6 s
 * (standard deviation 854 s, so the sample mean's standard error is 4.3 s: 2 % is ~3 SE); sizes
 * floor(exp(U ln 65)) have mean sum_k k ln((k+1)/k) / ln 65; Poisson gaps have mean 1/rate and
 * CV 1; the load-derived rate makes the offered load 0.9 on 256 cores. */
static void test_gen_distributions_match_their_definitions(void **state)
{
    struct lt_qjob *j;
    size_t n, i;
    double rt = 0, tk = 0, want_tk = 0, work = 0, gap, g2 = 0, mean_gap, cv;
    int k;

    (void)state;
    gen("gen:n=40000,rate=2", 0, 7, &j, &n);
    for (i = 0; i < n; i++) {
        rt += j[i].runtime_s;
        tk += j[i].tasks;
        if (i > 0) {
            gap = j[i].arrival_s - j[i - 1].arrival_s;
            g2 += gap * gap;
        }
    }
    for (k = 1; k <= 64; k++)
        want_tk += k * log((k + 1.0) / k) / log(65.0);
    lt_assert_near(rt / n, 3590.0 / log(360.0), 0.02 * 609.6);
    lt_assert_near(tk / n, want_tk, 0.02 * want_tk);
    mean_gap = j[n - 1].arrival_s / (double)(n - 1);
    cv = sqrt(g2 / (double)(n - 1) - mean_gap * mean_gap) / mean_gap;
    lt_assert_near(mean_gap, 0.5, 0.02 * 0.5);
    lt_assert_near(cv, 1.0, 0.03);
    lt_free(j);

    gen("gen:n=40000,load=0.9", 256, 7, &j, &n);
    for (i = 0; i < n; i++)
        work += (double)j[i].tasks * j[i].runtime_s;
    /* offered load = rate x mean work / cores, with rate ~ (n - 1) / last arrival */
    lt_assert_near(work / (256.0 * j[n - 1].arrival_s), 0.9, 0.03 * 0.9);
    lt_free(j);
}

/* ---- estimates ------------------------------------------------------------------------ */

static void test_estimate_parse(void **state)
{
    struct sim_qest e = {.kind = SIM_QEST_FIELD, .cv = 9};
    struct lt_err err;

    (void)state;
    assert_int_equal(sim_qest_parse("exact", &e, &err), 0);
    assert_int_equal(e.kind, SIM_QEST_EXACT);
    assert_int_equal(sim_qest_parse("field", &e, &err), 0);
    assert_int_equal(e.kind, SIM_QEST_FIELD);
    assert_int_equal(sim_qest_parse("noisy:0.5", &e, &err), 0);
    assert_int_equal(e.kind, SIM_QEST_NOISY);
    lt_assert_near(e.cv, 0.5, 0);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qest_parse("noisy:11", &e, &err), LT_EINVAL);
    assert_string_equal(
        err.text, "estimate 'noisy:11': the coefficient of variation is not a number in 0..10");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qest_parse("noisy:-1", &e, &err), LT_EINVAL);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qest_parse("oracle", &e, &err), LT_EINVAL);
    assert_string_equal(err.text, "unknown estimate 'oracle' (known: exact, noisy:CV, field)");
    lt_assert_near(e.cv, 0.5, 0); /* untouched */
}

/* 200,000 factors for CV 0.5: mean 1 (standard error 0.0011; 0.005 is ~4.5 SE), CV 0.5 within
 * 0.02, all > 0; the same seed the same estimates; CV 0 is exact; exact and field as said. */
static void test_noisy_estimates_have_mean_one_and_the_cv(void **state)
{
    size_t n = 200000, i;
    struct lt_qjob *j = lt_calloc(n, sizeof(*j)), *k = lt_calloc(n, sizeof(*k));
    struct sim_qest e = {.kind = SIM_QEST_NOISY, .cv = 0.5};
    struct lt_err err;
    double s = 0, s2 = 0, m;

    (void)state;
    assert_non_null(j);
    assert_non_null(k);
    for (i = 0; i < n; i++)
        j[i].runtime_s = j[i].estimate_s = 1 + (double)(i % 3);
    memcpy(k, j, n * sizeof(*j));
    assert_int_equal(sim_qestimate(j, n, &e, 5, &err), 0);
    for (i = 0; i < n; i++) {
        double f = j[i].estimate_s / j[i].runtime_s;

        assert_true(j[i].estimate_s > 0 && isfinite(j[i].estimate_s));
        s += f;
        s2 += f * f;
    }
    m = s / n;
    lt_assert_near(m, 1.0, 0.005);
    lt_assert_near(sqrt(s2 / n - m * m) / m, 0.5, 0.02);
    assert_int_equal(sim_qestimate(k, n, &e, 5, &err), 0);
    assert_memory_equal(j, k, n * sizeof(*j));

    e.cv = 10; /* the widest: still positive and finite */
    assert_int_equal(sim_qestimate(j, n, &e, 6, &err), 0);
    for (i = 0; i < n; i++)
        assert_true(j[i].estimate_s > 0 && isfinite(j[i].estimate_s));
    e.cv = 0;
    assert_int_equal(sim_qestimate(j, n, &e, 6, &err), 0);
    for (i = 0; i < n; i++)
        lt_assert_near(j[i].estimate_s, j[i].runtime_s, 0);
    j[0].estimate_s = 99;
    e.kind = SIM_QEST_FIELD;
    assert_int_equal(sim_qestimate(j, n, &e, 6, &err), 0);
    lt_assert_near(j[0].estimate_s, 99, 0);
    e.kind = SIM_QEST_EXACT;
    assert_int_equal(sim_qestimate(j, n, &e, 6, &err), 0);
    lt_assert_near(j[0].estimate_s, j[0].runtime_s, 0);
    lt_free(j);
    lt_free(k);
}

static void test_format_of_names_the_reader(void **state)
{
    enum sim_qformat f = SIM_QFORMAT_CSV;
    struct lt_err err;

    (void)state;
    assert_int_equal(sim_qformat_of("gen", &f, &err), 0);
    assert_int_equal(f, SIM_QFORMAT_GEN);
    assert_int_equal(sim_qformat_of("gen:n=5", &f, &err), 0);
    assert_int_equal(f, SIM_QFORMAT_GEN);
    assert_int_equal(sim_qformat_of("logs/SDSC-SP2.SWF", &f, &err), 0);
    assert_int_equal(f, SIM_QFORMAT_SWF);
    assert_int_equal(sim_qformat_of("a/jobs.csv", &f, &err), 0);
    assert_int_equal(f, SIM_QFORMAT_CSV);
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qformat_of("x.swf.gz", &f, &err), LT_EINVAL);
    assert_string_equal(err.text, "workload 'x.swf.gz' is compressed: gunzip it first (the "
                                  "reader takes .swf and .csv)");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_qformat_of("jobs.txt", &f, &err), LT_EINVAL);
}

/* ---- random input --------------------------------------------------------------------- */

/* Any bytes give jobs that keep the readers' guarantees or an LT_EPARSE / LT_ERANGE with a
 * message; 20,000 inputs drawn mostly from the formats' own characters, so they get deep. */
static void check_random(const char *buf, size_t len, bool swf)
{
    struct lt_qjob *j = NULL;
    struct lt_err err;
    size_t n = 0, i;
    int rc;

    lt_err_init(&err, NULL);
    rc = swf ? sim_qload_swf_buffer("r", buf, len, NULL, &j, &n, NULL, &err)
             : sim_qload_csv_buffer("r", buf, len, NULL, &j, &n, NULL, &err);
    if (rc != 0) {
        assert_true(rc == LT_EPARSE || rc == LT_ERANGE);
        assert_int_equal(err.code, rc);
        assert_true(err.text[0] != '\0');
        assert_true(err.column >= 0 && err.column <= 19);
        return;
    }
    for (i = 0; i < n; i++) {
        assert_int_equal(j[i].id, (int64_t)i);
        assert_true(j[i].arrival_s >= 0 && isfinite(j[i].arrival_s));
        assert_true(j[i].tasks >= 1);
        assert_true(j[i].runtime_s > 0 && isfinite(j[i].runtime_s));
        assert_true(j[i].estimate_s > 0 && isfinite(j[i].estimate_s));
        assert_true(j[i].cls >= -1);
        if (i > 0)
            assert_true(j[i].arrival_s >= j[i - 1].arrival_s);
    }
    lt_free(j);
}

static void test_random_bytes_never_crash(void **state)
{
    static const char alpha[] = "0123456789 -.,;\n\t#eE+x:";
    static const char csv_head[] = "arrival_s,tasks,runtime_s,estimate_s,class\n";
    struct lt_rng rng;
    int round;

    (void)state;
    lt_rng_init(&rng, 2024, 0);
    for (round = 0; round < 20000; round++) {
        size_t len = (size_t)lt_rng_below(&rng, 300), i = 0;
        bool swf = round % 2 == 0;
        char *p = malloc(len + sizeof(csv_head)); /* exact size: ASan sees any over-read */

        assert_non_null(p);
        if (!swf && round % 4 == 1) {
            memcpy(p, csv_head, sizeof(csv_head) - 1);
            i = sizeof(csv_head) - 1;
            len += i;
        }
        for (; i < len; i++)
            p[i] = lt_rng_below(&rng, 8) == 0 ? (char)lt_rng_below(&rng, 256)
                                              : alpha[lt_rng_below(&rng, sizeof(alpha) - 1)];
        check_random(p, len, swf);
        free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_reads_the_example_file),
        cmocka_unit_test(test_csv_takes_columns_in_any_order),
        cmocka_unit_test(test_csv_header_only_gives_no_jobs),
        cmocka_unit_test(test_csv_rejects_every_malformed_field_at_its_position),
        cmocka_unit_test(test_csv_field_estimates_need_every_value),
        cmocka_unit_test(test_csv_rejects_long_lines_and_missing_files),
        cmocka_unit_test(test_csv_file_and_buffer_agree_across_blocks),
        cmocka_unit_test(test_swf_reads_the_example_file),
        cmocka_unit_test(test_swf_reads_header_comments),
        cmocka_unit_test(test_swf_rejects_every_malformed_line_at_its_field),
        cmocka_unit_test(test_swf_strict_and_field_estimates_fail_where_they_should),
        cmocka_unit_test(test_gen_parse_reads_every_key_and_keeps_defaults),
        cmocka_unit_test(test_gen_parse_rejects_bad_specs),
        cmocka_unit_test(test_gen_checks_cores_and_rate),
        cmocka_unit_test(test_gen_is_deterministic_by_seed),
        cmocka_unit_test(test_gen_distributions_match_their_definitions),
        cmocka_unit_test(test_estimate_parse),
        cmocka_unit_test(test_noisy_estimates_have_mean_one_and_the_cv),
        cmocka_unit_test(test_format_of_names_the_reader),
        cmocka_unit_test(test_random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
