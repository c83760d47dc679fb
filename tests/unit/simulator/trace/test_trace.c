/* test_trace.c -- the Google 2011 trace reader: line parsers, the part reader on files the test
 * writes, and golden facts of the real samples (../shared/spec/google-trace-2011.md 2.2).
 *
 * The golden tests read TR_SAMPLE_DIR (../shared/data/clusterdata-2011-2 next to the checkout,
 * set by CMakeLists.txt) and skip when it is absent, so the suite passes with the repository
 * alone; the demo subset (TR_DEMO_DIR, tests/data) is always there.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"
#include "lt_test_dir.h"
#include "trace/trace.h"

#include <errno.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "lt_mem.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A real platform ID / user hash of the samples. */
#define HASH "70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo="

/* ---- line parsers ---------------------------------------------------------------------- */

static int parse_task(const char *line, struct tr_task_row *row, struct lt_err *err)
{
    lt_err_init(err, NULL);
    return tr_parse_task_line(line, strlen(line), row, err);
}

static int parse_job(const char *line, struct tr_job_row *row, struct lt_err *err)
{
    lt_err_init(err, NULL);
    return tr_parse_job_line(line, strlen(line), row, err);
}

static int parse_machine(const char *line, struct tr_machine_row *row, struct lt_err *err)
{
    lt_err_init(err, NULL);
    return tr_parse_machine_line(line, strlen(line), row, err);
}

/* Asserts that the task line is rejected at column col with exactly text. */
static void task_rejects(const char *line, int col, const char *text)
{
    struct tr_task_row row;
    struct lt_err err;

    if (parse_task(line, &row, &err) != LT_EPARSE) {
        print_error("accepted: %s\n", line);
        fail();
    }
    assert_int_equal(err.code, LT_EPARSE);
    assert_int_equal(err.line, 0);
    assert_int_equal(err.column, col);
    assert_string_equal(err.text, text);
}

static bool same_double(double a, double b)
{
    uint64_t x, y;

    memcpy(&x, &a, sizeof(x));
    memcpy(&y, &b, sizeof(y));
    return x == y;
}

static void test_trace_parses_full_task_row(void **state)
{
    struct tr_task_row r;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse_task("0,,3418314,0,3938719206,0," HASH ",3,9,0.125,0.07446,"
                                "0.0004244,0",
                                &r, &err),
                     0);
    assert_int_equal(r.time, 0);
    assert_int_equal(r.missing, TR_MISSING_NONE);
    assert_int_equal(r.job_id, 3418314);
    assert_int_equal(r.task_index, 0);
    assert_true(r.has_machine);
    assert_int_equal(r.machine_id, 3938719206u);
    assert_int_equal(r.type, TR_SUBMIT);
    assert_int_equal(r.sched_class, 3);
    assert_int_equal(r.priority, 9);
    assert_true(r.has_req);
    /* Exact: the parser rounds correctly, so the bits equal the C library's. */
    assert_true(same_double(r.cpu, 0.125));
    assert_true(same_double(r.mem, 0.07446));
    assert_true(same_double(r.disk, 0.0004244));
    assert_int_equal(r.diff_machines, 0);
}

/* Rows 1-2 of task_events part-00000: missing info 2, no requests, no flag. */
static void test_trace_parses_missing_info_row_without_requests(void **state)
{
    struct tr_task_row r;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse_task("0,2,3418309,0,4155527081,0," HASH ",3,9,,,,", &r, &err), 0);
    assert_int_equal(r.missing, 2);
    assert_false(r.has_req);
    assert_true(same_double(r.cpu, 0.0));
    assert_true(same_double(r.mem, 0.0));
    assert_true(same_double(r.disk, 0.0));
    assert_int_equal(r.diff_machines, -1);
    assert_int_equal(r.machine_id, 4155527081u);
}

static void test_trace_accepts_empty_optional_task_fields(void **state)
{
    struct tr_task_row r;
    struct lt_err err;

    (void)state;
    /* machine ID, user, class empty; only the memory request present. */
    assert_int_equal(parse_task("5,,1,2,,5,,,0,,0.5,,1", &r, &err), 0);
    assert_false(r.has_machine);
    assert_int_equal(r.machine_id, 0);
    assert_int_equal(r.sched_class, -1);
    assert_true(r.has_req);
    assert_true(same_double(r.cpu, 0.0));
    assert_true(same_double(r.mem, 0.5));
    assert_int_equal(r.diff_machines, 1);
    assert_int_equal(r.type, TR_KILL);
}

static void test_trace_reads_ids_and_times_at_their_limits(void **state)
{
    struct tr_task_row r;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse_task("9223372036854775806,,9223372036854775807,4294967295,"
                                "9223372036854775807,1,,0,0,1,1,1,0",
                                &r, &err),
                     0);
    assert_int_equal(r.time, INT64_MAX - 1);
    assert_true(r.job_id == (uint64_t)INT64_MAX);
    assert_true(r.machine_id == (uint64_t)INT64_MAX);
    assert_true(r.task_index == UINT32_MAX);
    assert_int_equal(parse_task("9223372036854775807,,1,0,,0,,,0,,,,", &r, &err), 0);
    assert_true(r.time == TR_TIME_AFTER);
    assert_int_equal(parse_task("18446744073709551615,,1,0,,0,,,0,,,,", &r, &err), 0);
    assert_true(r.time == TR_TIME_AFTER);
    assert_int_equal(parse_task("9223372036854775808,,1,0,,0,,,0,,,,", &r, &err), 0);
    assert_true(r.time == TR_TIME_AFTER);
    assert_int_equal(parse_task("000,,1,0,,0,,,0,,,,", &r, &err), 0);
    assert_int_equal(r.time, 0);
}

static void test_trace_rejects_integers_out_of_range(void **state)
{
    (void)state;
    task_rejects("18446744073709551616,,1,0,,0,,,0,,,,", 1,
                 "field 1 (time): '18446744073709551616' is out of range "
                 "(0..18446744073709551615)");
    task_rejects("99999999999999999999999,,1,0,,0,,,0,,,,", 1,
                 "field 1 (time): '99999999999999999999999' is out of range "
                 "(0..18446744073709551615)");
    task_rejects("0,,9223372036854775808,0,,0,,,0,,,,", 3,
                 "field 3 (job ID): '9223372036854775808' is out of range "
                 "(0..9223372036854775807)");
    task_rejects("0,,1,4294967296,,0,,,0,,,,", 4,
                 "field 4 (task index): '4294967296' is out of range (0..4294967295)");
    task_rejects("0,,1,0,9223372036854775808,0,,,0,,,,", 5,
                 "field 5 (machine ID): '9223372036854775808' is out of range "
                 "(0..9223372036854775807)");
}

static void test_trace_rejects_non_integers(void **state)
{
    (void)state;
    task_rejects("-1,,1,0,,0,,,0,,,,", 1, "field 1 (time): '-1' is not an integer");
    task_rejects("1.5,,1,0,,0,,,0,,,,", 1, "field 1 (time): '1.5' is not an integer");
    task_rejects("0,,x17,0,,0,,,0,,,,", 3, "field 3 (job ID): 'x17' is not an integer");
    task_rejects("0,,+1,0,,0,,,0,,,,", 3, "field 3 (job ID): '+1' is not an integer");
    task_rejects("0,,1,0, 7,0,,,0,,,,", 5, "field 5 (machine ID): ' 7' is not an integer");
    task_rejects("0,,1,0,,0,,,9 ,,,,", 9, "field 9 (priority): '9 ' is not an integer");
    task_rejects("0,,1,0,,0x1,,,0,,,,", 6, "field 6 (event type): '0x1' is not an integer");
    task_rejects("0,,1,0,,0,,,0,,,,true", 13,
                 "field 13 (different machines restriction): 'true' is not an integer");
    task_rejects("99999999999999999999x,,1,0,,0,,,0,,,,", 1,
                 "field 1 (time): '99999999999999999999x' is not an integer");
}

static void test_trace_rejects_codes_out_of_range(void **state)
{
    (void)state;
    task_rejects("0,,1,0,,9,,,0,,,,", 6, "field 6 (event type): '9' is not one of 0..8");
    task_rejects("0,,1,0,,10,,,0,,,,", 6, "field 6 (event type): '10' is not one of 0..8");
    task_rejects("0,3,1,0,,0,,,0,,,,", 2, "field 2 (missing info): '3' is not one of 0..2");
    task_rejects("0,,1,0,,0,,4,0,,,,", 8, "field 8 (scheduling class): '4' is not one of 0..3");
    task_rejects("0,,1,0,,0,,,12,,,,", 9, "field 9 (priority): '12' is not one of 0..11");
    task_rejects("0,,1,0,,0,,,0,,,,2", 13,
                 "field 13 (different machines restriction): '2' is not one of 0..1");
}

static void test_trace_rejects_empty_mandatory_fields(void **state)
{
    (void)state;
    task_rejects(",,1,0,,0,,,0,,,,", 1, "field 1 (time): mandatory value is empty");
    task_rejects("0,,,0,,0,,,0,,,,", 3, "field 3 (job ID): mandatory value is empty");
    task_rejects("0,,1,,,0,,,0,,,,", 4, "field 4 (task index): mandatory value is empty");
    task_rejects("0,,1,0,,,,,0,,,,", 6, "field 6 (event type): mandatory value is empty");
    task_rejects("0,,1,0,,0,,,,,,,", 9, "field 9 (priority): mandatory value is empty");
}

static void test_trace_rejects_wrong_field_counts(void **state)
{
    struct tr_machine_row m;
    struct tr_job_row j;
    struct lt_err err;

    (void)state;
    task_rejects("0,,1,0,,0,,,0,,,", 13, "expected 13 fields, got 12");
    task_rejects("0,,1,0,,0,,,0,,,,,", 14, "expected 13 fields, got 14");
    task_rejects("0,,1,0,,0,,,0,,,,,,,", 14, "expected 13 fields, got 16");
    task_rejects("", 2, "expected 13 fields, got 1");
    assert_int_equal(parse_machine("0,5,0," HASH ",0.5", &m, &err), LT_EPARSE);
    assert_string_equal(err.text, "expected 6 fields, got 5");
    assert_int_equal(err.column, 6);
    assert_int_equal(parse_job("0,,1,0,,,,,", &j, &err), LT_EPARSE);
    assert_string_equal(err.text, "expected 8 fields, got 9");
    assert_int_equal(err.column, 9);
}

static void test_trace_rejects_carriage_return(void **state)
{
    (void)state;
    task_rejects("0,,1,0,,0,,,0,,,,\r", 0,
                 "line ends in a carriage return (the trace uses LF line ends)");
}

static void test_trace_rejects_bad_floats(void **state)
{
    (void)state;
    task_rejects("0,,1,0,,0,,,0,abc,,,", 10, "field 10 (CPU request): 'abc' is not a number");
    task_rejects("0,,1,0,,0,,,0,-0.5,,,", 10, "field 10 (CPU request): '-0.5' is negative");
    task_rejects("0,,1,0,,0,,,0,-,,,", 10, "field 10 (CPU request): '-' is not a number");
    task_rejects("0,,1,0,,0,,,0,,nan,,", 11, "field 11 (memory request): 'nan' is not a number");
    task_rejects("0,,1,0,,0,,,0,,inf,,", 11, "field 11 (memory request): 'inf' is not a number");
    task_rejects("0,,1,0,,0,,,0,,,0x1p3,", 12,
                 "field 12 (disk space request): '0x1p3' is not a number");
    task_rejects("0,,1,0,,0,,,0,1.,,,", 10, "field 10 (CPU request): '1.' is not a number");
    task_rejects("0,,1,0,,0,,,0,.5,,,", 10, "field 10 (CPU request): '.5' is not a number");
    task_rejects("0,,1,0,,0,,,0,1e,,,", 10, "field 10 (CPU request): '1e' is not a number");
    task_rejects("0,,1,0,,0,,,0,1e+,,,", 10, "field 10 (CPU request): '1e+' is not a number");
    task_rejects("0,,1,0,,0,,,0,+1,,,", 10, "field 10 (CPU request): '+1' is not a number");
    task_rejects("0,,1,0,,0,,,0,1 ,,,", 10, "field 10 (CPU request): '1 ' is not a number");
    task_rejects("0,,1,0,,0,,,0,1e400,,,", 10, "field 10 (CPU request): '1e400' is out of range");
    task_rejects("0,,1,0,,0,,,0,"
                 "0.00000000000000000000000000000000000000000000000000000000000000001,,,",
                 10,
                 "field 10 (CPU request): '0.000000000000000000000000000000...' is too long for a "
                 "number");
}

/* Values as "%g" prints them, and others, must read back exactly as strtod reads them. */
static void test_trace_float_parser_is_correctly_rounded(void **state)
{
    static const char *const fixed[] = {"0",
                                        "1",
                                        "0.5",
                                        "0.0004244",
                                        "2.861e-06",
                                        "0.07446",
                                        "1e+10",
                                        "1E-5",
                                        "0.30000001",
                                        "9007199254740993",
                                        "123456789012345678901",
                                        "1e-320",
                                        "4.9e-324",
                                        "1.7976931348623157e308",
                                        "0.1000000000000000055511151231257827",
                                        "5e-324",
                                        "1e22",
                                        "1e23",
                                        "0.000001",
                                        "00000.5"};
    char line[160], num[64];
    struct tr_task_row r;
    struct lt_err err;
    uint64_t x = 88172645463325252u; /* xorshift64, fixed seed */
    size_t i;

    (void)state;
    for (i = 0; i < N_OF(fixed) + 30000; i++) {
        const char *s = num;
        if (i < N_OF(fixed)) {
            s = fixed[i];
        } else {
            double v;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v = (double)(x >> 11) / 9007199254740992.0 * pow(10.0, (double)(int)(x % 24) - 20);
            snprintf(num, sizeof(num), i % 3 == 0 ? "%g" : i % 3 == 1 ? "%.17g" : "%.10e", v);
        }
        snprintf(line, sizeof(line), "0,,1,0,,0,,,0,%s,,,", s);
        if (parse_task(line, &r, &err) != 0 || !same_double(r.cpu, strtod(s, NULL))) {
            print_error("'%s' read as %.17g, strtod gives %.17g (%s)\n", s, r.cpu, strtod(s, NULL),
                        err.text);
            fail();
        }
    }
}

static void test_trace_checks_hash_shape(void **state)
{
    struct tr_job_row j;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse_job("0,,1,0," HASH ",1," HASH "," HASH, &j, &err), 0);
    assert_int_equal(parse_job("0,,1,0,,,,", &j, &err), 0);
    assert_int_equal(j.sched_class, -1);
    assert_int_equal(j.missing, TR_MISSING_NONE);
    assert_int_equal(parse_job("0,,1,0,abc,,AAAA,ab==", &j, &err), 0);
    assert_int_equal(parse_job("0,,1,0,ab$c,,,", &j, &err), LT_EPARSE);
    assert_string_equal(err.text, "field 5 (user): 'ab$c' is not a base64 hash");
    assert_int_equal(parse_job("0,,1,0,,,=,", &j, &err), LT_EPARSE);
    assert_string_equal(err.text, "field 7 (job name): '=' is not a base64 hash");
    assert_int_equal(parse_job("0,,1,0,,,,ab===", &j, &err), LT_EPARSE);
    assert_string_equal(err.text, "field 8 (logical job name): 'ab===' is not a base64 hash");
    assert_int_equal(parse_job("0,,1,0,,,,a=b", &j, &err), LT_EPARSE);
    assert_int_equal(err.column, 8);
}

static void test_trace_parses_job_and_machine_rows(void **state)
{
    struct tr_job_row j;
    struct tr_machine_row m;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse_job("5620274759,1,6252007148,4," HASH ",0," HASH "," HASH, &j, &err), 0);
    assert_int_equal(j.time, 5620274759);
    assert_int_equal(j.missing, 1);
    assert_int_equal(j.job_id, 6252007148u);
    assert_int_equal(j.type, TR_FINISH);
    assert_int_equal(j.sched_class, 0);

    assert_int_equal(
        parse_machine("0,5,0,HofLGzk1Or/8Ildj2+Lqv0UGGvY82NLoni8+J/Yy0RU=,0.5,0.2493", &m, &err),
        0);
    assert_int_equal(m.time, 0);
    assert_int_equal(m.machine_id, 5);
    assert_int_equal(m.type, TR_M_ADD);
    assert_true(m.has_cap);
    assert_true(same_double(m.cpu, 0.5));
    assert_true(same_double(m.mem, 0.2493));
    /* The 32 ADD rows without capacities look like this one. */
    assert_int_equal(parse_machine("113019603442,6264344062,0," HASH ",,", &m, &err), 0);
    assert_false(m.has_cap);
    assert_true(same_double(m.cpu, 0.0));
    assert_int_equal(parse_machine("1,5,3," HASH ",1,1", &m, &err), LT_EPARSE);
    assert_string_equal(err.text, "field 3 (event type): '3' is not one of 0..2");
    assert_int_equal(parse_machine("1,,1," HASH ",1,1", &m, &err), LT_EPARSE);
    assert_string_equal(err.text, "field 2 (machine ID): mandatory value is empty");
}

static void test_trace_parse_failure_leaves_row_untouched_and_allows_null_err(void **state)
{
    struct tr_task_row r, before;

    (void)state;
    memset(&r, 0x5a, sizeof(r));
    before = r;
    assert_int_equal(tr_parse_task_line("7,,1,0,,0,,,0,0.5,x,,", 21, &r, NULL), LT_EPARSE);
    assert_memory_equal(&r, &before, sizeof(r));
}

/* Bytes that are not printable are quoted as '?' and long values are cut. */
static void test_trace_quotes_bad_bytes_safely(void **state)
{
    static const char line[] = "0,,1\0x,0,,0,,,0,,,,";
    struct tr_task_row r;
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(tr_parse_task_line(line, sizeof(line) - 1, &r, &err), LT_EPARSE);
    assert_string_equal(err.text, "field 3 (job ID): '1?x' is not an integer");
}

/* ---- the reader on files written by the test ------------------------------------------- */

struct tmp {
    char dir[64]; /* mkdtemp result */
};

static int tmp_setup(void **state)
{
    struct tmp *t = lt_calloc(1, sizeof(*t));

    if (t == NULL)
        return -1;
    if (lt_test_mkdtemp(t->dir, sizeof(t->dir), "lt_trace") != 0) {
        lt_free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int tmp_teardown(void **state)
{
    struct tmp *t = *state;

    lt_test_rm_tree(t->dir);
    lt_free(t);
    return 0;
}

/* Writes text as DIR/<table>/name; gzip-compressed when name ends in ".gz". */
static void write_part(const struct tmp *t, const char *table, const char *name, const char *text)
{
    char path[256];
    size_t n = strlen(name), len = strlen(text);

    snprintf(path, sizeof(path), "%s/%s", t->dir, table);
    if (mkdir(path, 0700) != 0)
        assert_int_equal(errno, EEXIST);
    snprintf(path, sizeof(path), "%s/%s/%s", t->dir, table, name);
    if (n > 3 && strcmp(name + n - 3, ".gz") == 0) {
        gzFile gz = gzopen(path, "wb");
        assert_non_null(gz);
        if (len > 0)
            assert_int_equal(gzwrite(gz, text, (unsigned)len), (int)len);
        assert_int_equal(gzclose(gz), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
    }
}

/* Reads the whole table; returns the last tr_next result (0 at the end, or an error). */
static int read_all(const char *dir, enum tr_table table, const struct tr_opts *o,
                    struct tr_reader **out, struct lt_err *err)
{
    struct tr_task_row row; /* the largest row type */
    struct tr_reader *r;
    int rc;

    lt_err_init(err, NULL);
    r = tr_open(dir, table, o, err);
    *out = r;
    if (r == NULL)
        return err->code;
    while ((rc = tr_next(r, &row, err)) == 1)
        ;
    return rc;
}

static void test_trace_reads_plain_and_gzip_parts_in_order(void **state)
{
    const struct tmp *t = *state;
    struct tr_job_row row;
    struct tr_reader *r;
    struct lt_err err;
    char path[256];

    write_part(t, "job_events", "part-00001-of-00003.csv", "20,,2,1,,,,\n30,,2,4,,,,\n");
    write_part(t, "job_events", "part-00000-of-00003.csv.gz", "0,,1,0,,,,\n10,,2,0,,,,\n");
    write_part(t, "job_events", "part-00002-of-00003.csv.gz", "30,,1,5,,,,"); /* no final LF */
    write_part(t, "job_events", "README", "not a part\n");
    lt_err_init(&err, NULL);
    r = tr_open(t->dir, TR_JOB_EVENTS, NULL, &err);
    assert_non_null(r);
    snprintf(path, sizeof(path), "%s/job_events/part-00000-of-00003.csv.gz", t->dir);
    assert_string_equal(tr_part_path(r), path);
    assert_true(tr_bytes_total(r) > 0);
    assert_int_equal(tr_next(r, &row, &err), 1);
    assert_int_equal(row.job_id, 1);
    assert_int_equal(tr_line(r), 1);
    assert_int_equal(tr_next(r, &row, &err), 1);
    assert_int_equal(row.time, 10);
    assert_int_equal(tr_next(r, &row, &err), 1);
    assert_int_equal(row.time, 20);
    assert_int_equal(row.type, TR_SCHEDULE);
    snprintf(path, sizeof(path), "%s/job_events/part-00001-of-00003.csv", t->dir);
    assert_string_equal(tr_part_path(r), path);
    assert_int_equal(tr_line(r), 1);
    assert_int_equal(tr_next(r, &row, &err), 1);
    assert_int_equal(tr_next(r, &row, &err), 1);
    assert_int_equal(row.type, TR_KILL);
    assert_int_equal(tr_next(r, &row, &err), 0);
    assert_int_equal(tr_next(r, &row, &err), 0);
    assert_int_equal(err.code, 0);
    assert_int_equal(tr_counts(r)->rows, 5);
    assert_int_equal(tr_counts(r)->parts, 3);
    assert_int_equal(tr_counts(r)->by_type[TR_SUBMIT], 2);
    assert_int_equal(tr_counts(r)->by_type[TR_SCHEDULE], 1);
    assert_int_equal(tr_counts(r)->by_type[TR_FINISH], 1);
    assert_int_equal(tr_counts(r)->by_type[TR_KILL], 1);
    assert_true(tr_bytes_read(r) == tr_bytes_total(r));
    tr_close(r);
}

static void test_trace_honours_first_part_and_max_parts(void **state)
{
    const struct tmp *t = *state;
    struct tr_opts o = {false, 1, 1};
    struct tr_reader *r;
    struct lt_err err;

    write_part(t, "job_events", "part-00000-of-00500.csv", "0,,1,0,,,,\n");
    write_part(t, "job_events", "part-00001-of-00500.csv", "5,,1,1,,,,\n6,,1,1,,,,\n");
    write_part(t, "job_events", "part-00002-of-00500.csv", "7,,1,1,,,,\n");
    write_part(t, "job_events", "part-00009-of-00500.csv", "9,,1,1,,,,\n"); /* beyond max */
    assert_int_equal(read_all(t->dir, TR_JOB_EVENTS, &o, &r, &err), 0);
    assert_int_equal(tr_counts(r)->rows, 2);
    assert_int_equal(tr_counts(r)->parts, 1);
    tr_close(r);
    o.max_parts = 2;
    assert_int_equal(read_all(t->dir, TR_JOB_EVENTS, &o, &r, &err), 0);
    assert_int_equal(tr_counts(r)->rows, 3);
    tr_close(r);
    o.first_part = 3;
    assert_null(tr_open(t->dir, TR_JOB_EVENTS, &o, &err));
    assert_int_equal(err.code, LT_EIO);
    assert_string_equal(err.text, "no part 00003 (first part to read) in the directory");
}

static void test_trace_rejects_missing_directory_and_empty_table(void **state)
{
    const struct tmp *t = *state;
    struct lt_err err;
    char path[256];

    lt_err_init(&err, NULL);
    snprintf(path, sizeof(path), "%s/nosuch", t->dir);
    assert_null(tr_open(path, TR_TASK_EVENTS, NULL, &err));
    assert_int_equal(err.code, LT_EIO);
    snprintf(path, sizeof(path), "%s/nosuch/task_events", t->dir);
    assert_string_equal(err.source, path);
    assert_string_equal(err.text, "cannot open trace directory: No such file or directory");

    write_part(t, "task_events", "part-0000-of-00500.csv", "0,,1,0,,0,,,0,,,,\n");
    lt_err_init(&err, NULL);
    assert_null(tr_open(t->dir, TR_TASK_EVENTS, NULL, &err));
    assert_int_equal(err.code, LT_EIO);
    assert_string_equal(err.text,
                        "no trace parts (part-NNNNN-of-MMMMM.csv.gz or .csv) in the directory");
}

static void test_trace_rejects_part_sets_with_gaps_or_disagreements(void **state)
{
    const struct tmp *t = *state;
    struct lt_err err;

    write_part(t, "job_events", "part-00000-of-00500.csv", "0,,1,0,,,,\n");
    write_part(t, "job_events", "part-00002-of-00500.csv.gz", "0,,1,0,,,,\n");
    lt_err_init(&err, NULL);
    assert_null(tr_open(t->dir, TR_JOB_EVENTS, NULL, &err));
    assert_int_equal(err.code, LT_EIO);
    assert_string_equal(err.text, "part 00001 is missing between 'part-00000-of-00500.csv' and "
                                  "'part-00002-of-00500.csv.gz'");

    write_part(t, "job_events", "part-00001-of-00400.csv", "0,,1,0,,,,\n");
    lt_err_init(&err, NULL);
    assert_null(tr_open(t->dir, TR_JOB_EVENTS, NULL, &err));
    assert_string_equal(err.text, "part 'part-00001-of-00400.csv' disagrees with "
                                  "'part-00000-of-00500.csv' on the part count");

    write_part(t, "machine_events", "part-00000-of-00001.csv", "0,1,0,,,\n");
    write_part(t, "machine_events", "part-00000-of-00001.csv.gz", "0,1,0,,,\n");
    lt_err_init(&err, NULL);
    assert_null(tr_open(t->dir, TR_MACHINE_EVENTS, NULL, &err));
    assert_int_equal(err.code, LT_EIO);
    assert_string_equal(err.text, "part 00000 is there twice: 'part-00000-of-00001.csv' and "
                                  "'part-00000-of-00001.csv.gz'");
}

/* Enough distinct lines that the compressed file is several kilobytes. */
static char *many_task_lines(size_t n)
{
    char *text = lt_malloc(n * 64);
    size_t i, off = 0;

    assert_non_null(text);
    for (i = 0; i < n; i++)
        off += (size_t)snprintf(text + off, 64, "%zu,,%zu,%zu,%zu,1,,2,9,0.%zu,0.25,,0\n", i * 7,
                                i * 31 % 1000, i % 97, i * 2654435761u % 100000, i % 997);
    return text;
}

static void test_trace_reports_truncated_gzip_naming_the_part(void **state)
{
    const struct tmp *t = *state;
    char *text = many_task_lines(20000);
    char path[256];
    struct tr_reader *r;
    struct lt_err err;
    struct stat st;

    write_part(t, "task_events", "part-00000-of-00002.csv.gz", text);
    write_part(t, "task_events", "part-00001-of-00002.csv.gz", "999999999,,1,0,,0,,,0,,,,\n");
    snprintf(path, sizeof(path), "%s/task_events/part-00000-of-00002.csv.gz", t->dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
    assert_string_equal(err.source, path);
    assert_non_null(strstr(err.text, "truncated gzip file"));
    assert_true(tr_counts(r)->rows > 0 && tr_counts(r)->rows < 20000);
    assert_int_equal(err.line, tr_counts(r)->rows + 1); /* the line where the data stops */
    /* Sticky: the same error again. */
    {
        struct tr_task_row row;
        struct lt_err again;
        lt_err_init(&again, NULL);
        assert_int_equal(tr_next(r, &row, &again), LT_EIO);
        assert_string_equal(again.text, err.text);
    }
    tr_close(r);

    /* Cut inside the 8-byte trailer: every row decodes, the end is still missing. */
    write_part(t, "task_events", "part-00000-of-00002.csv.gz", text);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size - 3), 0);
    assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
    assert_string_equal(err.source, path);
    assert_int_equal(tr_counts(r)->rows, 20000);
    tr_close(r);
    lt_free(text);
}

static void test_trace_reports_corrupt_gzip_and_misnamed_files(void **state)
{
    const struct tmp *t = *state;
    char *text = many_task_lines(20000);
    char path[256];
    struct tr_reader *r;
    struct lt_err err;
    FILE *f;

    write_part(t, "task_events", "part-00000-of-00001.csv.gz", text);
    snprintf(path, sizeof(path), "%s/task_events/part-00000-of-00001.csv.gz", t->dir);
    f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 5000, SEEK_SET), 0);
    assert_int_equal(fwrite("\xff\x00\xff\x00\xff\x00\xff\x00", 1, 8, f), 8);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
    assert_string_equal(err.source, path);
    assert_non_null(strstr(err.text, "cannot read trace part: invalid"));
    assert_int_equal(err.line, tr_counts(r)->rows + 1);
    tr_close(r);
    lt_free(text);

    /* Plain text under a .gz name. */
    lt_test_rm_tree(path);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_true(fputs("0,,1,0,,0,,,0,,,,\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
    assert_string_equal(err.text, "file named .csv.gz is not gzip-compressed");
    tr_close(r);
}

/* One gzip member of text, stored (no compression, so its size is known in advance), with
 * an extra header field of extra bytes to set that size, and a header CRC (FHCRC) when hcrc;
 * returns its length in out. */
static size_t gz_member_h(unsigned char *out, size_t cap, const char *text, size_t len,
                          size_t extra, bool hcrc)
{
    static unsigned char pad[65535];
    z_stream zs;
    gz_header h;
    size_t n;

    memset(&zs, 0, sizeof(zs));
    memset(&h, 0, sizeof(h));
    assert_true(extra <= sizeof(pad));
    h.extra = pad;
    h.extra_len = (uInt)extra;
    h.hcrc = hcrc;
    assert_int_equal(
        deflateInit2(&zs, Z_NO_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
        Z_OK);
    assert_int_equal(deflateSetHeader(&zs, &h), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)text;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    n = cap - zs.avail_out;
    assert_int_equal(deflateEnd(&zs), Z_OK);
    return n;
}

static size_t gz_member(unsigned char *out, size_t cap, const char *text, size_t len, size_t extra)
{
    return gz_member_h(out, cap, text, len, extra, false);
}

static void put_file(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Each gzip member's CRC-32 and length are checked against its trailer, also when the
 * trailer straddles two reads; members are read one after another; bytes after the last
 * member that do not start another are ignored (as gzread does). */
static void test_trace_checks_every_gzip_member(void **state)
{
    enum { INBUF = 256 * 1024 }; /* trace.c's GZ_INBUF: the size of one read */
    const struct tmp *t = *state;
    char *text = many_task_lines(6000);
    size_t len = strlen(text), cap = 2 * INBUF, n0, n;
    unsigned char *buf = lt_malloc(cap);
    char path[256];
    struct tr_reader *r;
    struct lt_err err;

    assert_non_null(buf);
    write_part(t, "task_events", "part-00000-of-00001.csv.gz", "");
    snprintf(path, sizeof(path), "%s/task_events/part-00000-of-00001.csv.gz", t->dir);
    n0 = gz_member(buf, cap, text, len, 0);
    assert_true(n0 < INBUF && n0 + 65535 > INBUF + 8);
    /* The file ends k bytes into the second read: the trailer's last k bytes are there. */
    for (size_t k = 1; k <= 9; k++) {
        size_t e = INBUF + k - n0 - 2 /* XLEN */;
        n = gz_member(buf, cap, text, len, e);
        n = gz_member(buf, cap, text, len, e + (INBUF + k) - n); /* the block layout may move */
        assert_int_equal(n, INBUF + k);
        put_file(path, buf, n);
        assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), 0);
        assert_int_equal(tr_counts(r)->rows, 6000);
        tr_close(r);
        buf[n - 8] ^= 1; /* the CRC's low byte */
        put_file(path, buf, n);
        assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
        assert_string_equal(err.text, "cannot read trace part: incorrect data check");
        assert_string_equal(err.source, path);
        tr_close(r);
        buf[n - 8] ^= 1;
        buf[n - 1] ^= 0x80; /* the length's high byte */
        put_file(path, buf, n);
        assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
        assert_string_equal(err.text, "cannot read trace part: incorrect length check");
        tr_close(r);
    }
    /* Two members, then bytes that start no third: all rows of both, no error. */
    n0 = gz_member(buf, cap, text, len, 0);
    {
        static const char more[] = "999999999,,1,0,,0,,,0,,,,\n999999999,,1,1,,0,,,0,,,,\n";
        n = n0 + gz_member(buf + n0, cap - n0, more, strlen(more), 3);
        memcpy(buf + n, "junk", 4);
        put_file(path, buf, n + 4);
        assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), 0);
        assert_int_equal(tr_counts(r)->rows, 6002);
        tr_close(r);
        /* A broken second member is still an error. */
        buf[n - 8] ^= 1;
        put_file(path, buf, n);
        assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
        assert_string_equal(err.text, "cannot read trace part: incorrect data check");
        assert_int_equal(tr_counts(r)->rows, 6000);
        tr_close(r);
        /* A third member whose header CRC (FHCRC, after the 10-byte header and XLEN = 0)
         * does not match. */
        buf[n - 8] ^= 1;
        n += gz_member_h(buf + n, cap - n, more, strlen(more), 0, true);
        buf[n - 8 - 5 - strlen(more) - 2] ^= 1; /* its trailer, a stored block, the CRC */
        put_file(path, buf, n);
        assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_EIO);
        assert_string_equal(err.text, "cannot read trace part: incorrect header check");
        assert_int_equal(tr_counts(r)->rows, 6002);
        tr_close(r);
    }
    lt_free(buf);
    lt_free(text);
}

static void test_trace_rejects_backwards_time_within_a_part(void **state)
{
    const struct tmp *t = *state;
    struct tr_reader *r;
    struct lt_err err;
    char path[256];

    write_part(t, "task_events", "part-00000-of-00001.csv",
               "0,,1,0,,0,,,0,,,,\n7,,1,0,,1,,,0,,,,\n7,,1,0,,4,,,0,,,,\n5,,1,0,,0,,,0,,,,\n");
    assert_int_equal(read_all(t->dir, TR_TASK_EVENTS, NULL, &r, &err), LT_ERANGE);
    snprintf(path, sizeof(path), "%s/task_events/part-00000-of-00001.csv", t->dir);
    assert_string_equal(err.source, path);
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 1);
    assert_string_equal(err.text, "time 5 is earlier than 7 on line 3");
    assert_int_equal(tr_counts(r)->rows, 3);
    tr_close(r);
}

static void test_trace_rejects_backwards_time_across_parts(void **state)
{
    const struct tmp *t = *state;
    struct tr_reader *r;
    struct lt_err err;

    write_part(t, "job_events", "part-00000-of-00002.csv.gz", "0,,1,0,,,,\n100,,1,1,,,,\n");
    write_part(t, "job_events", "part-00001-of-00002.csv.gz", "99,,1,4,,,,\n");
    assert_int_equal(read_all(t->dir, TR_JOB_EVENTS, NULL, &r, &err), LT_ERANGE);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.text,
                        "time 99 is earlier than 100 at 'part-00000-of-00002.csv.gz' line 2");
    tr_close(r);
}

static void test_trace_skip_bad_lines_counts_and_keeps_messages(void **state)
{
    const struct tmp *t = *state;
    struct tr_opts o = {true, 0, 0};
    const char *const *msgs;
    struct tr_reader *r;
    struct lt_err err;
    char want[320];
    size_t i;
    char *text = lt_malloc(32 * 20);

    assert_non_null(text);
    /* Line 2 has 5 fields, line 3 an unknown type, line 5 goes back in time; then 14 more
     * bad lines, of which only the first TR_KEEP_BAD messages are kept. */
    strcpy(text, "1,1,0,,,\n2,1,0,,\n3,1,7,,,\n4,1,1,,,\n3,1,2,,,\n");
    for (i = 0; i < 14; i++)
        strcat(text, "x,1,0,,,\n");
    strcat(text, "9,1,2,,0.5,0.25\n");
    write_part(t, "machine_events", "part-00000-of-00001.csv.gz", text);
    assert_int_equal(read_all(t->dir, TR_MACHINE_EVENTS, &o, &r, &err), 0);
    assert_int_equal(err.code, 0);
    assert_int_equal(tr_counts(r)->rows, 3);
    assert_int_equal(tr_counts(r)->bad_lines, 17);
    assert_int_equal(tr_counts(r)->by_type[TR_M_ADD], 1);
    assert_int_equal(tr_counts(r)->by_type[TR_M_REMOVE], 1);
    assert_int_equal(tr_counts(r)->by_type[TR_M_UPDATE], 1);
    assert_int_equal(tr_bad_messages(r, &msgs), TR_KEEP_BAD);
    snprintf(want, sizeof(want),
             "%s/machine_events/part-00000-of-00001.csv.gz:2:6: "
             "expected 6 fields, got 5",
             t->dir);
    assert_string_equal(msgs[0], want);
    snprintf(want, sizeof(want),
             "%s/machine_events/part-00000-of-00001.csv.gz:3:3: "
             "field 3 (event type): '7' is not one of 0..2",
             t->dir);
    assert_string_equal(msgs[1], want);
    snprintf(want, sizeof(want),
             "%s/machine_events/part-00000-of-00001.csv.gz:5:1: "
             "time 3 is earlier than 4 on line 4",
             t->dir);
    assert_string_equal(msgs[2], want);
    tr_close(r);
    lt_free(text);
}

static void test_trace_rejects_overlong_line(void **state)
{
    const struct tmp *t = *state;
    size_t n = 70 * 1024;
    char *text = lt_malloc(n + 32);
    struct tr_reader *r;
    struct lt_err err;

    assert_non_null(text);
    strcpy(text, "0,1,0,,,\n");
    memset(text + 9, 'A', n);
    strcpy(text + 9 + n, ",,,\n");
    write_part(t, "machine_events", "part-00000-of-00001.csv.gz", text);
    assert_int_equal(read_all(t->dir, TR_MACHINE_EVENTS, NULL, &r, &err), LT_EPARSE);
    assert_int_equal(err.line, 2);
    assert_string_equal(err.text, "line is longer than 65536 bytes");
    tr_close(r);
    lt_free(text);
}

/* Lines cut by the reader's block boundary are joined: many rows of varying length. */
static void test_trace_reads_lines_across_block_boundaries(void **state)
{
    const struct tmp *t = *state;
    size_t n = 60000; /* ~2.7 MB decompressed: several 1 MiB blocks */
    char *text = many_task_lines(n);
    struct tr_task_row row;
    struct tr_reader *r;
    struct lt_err err;
    size_t i = 0;

    write_part(t, "task_events", "part-00000-of-00001.csv.gz", text);
    lt_err_init(&err, NULL);
    r = tr_open(t->dir, TR_TASK_EVENTS, NULL, &err);
    assert_non_null(r);
    while (tr_next(r, &row, &err) == 1) {
        assert_int_equal(row.time, i * 7);
        assert_int_equal(row.task_index, i % 97);
        assert_int_equal(tr_line(r), i + 1);
        i++;
    }
    assert_int_equal(err.code, 0);
    assert_int_equal(i, n);
    tr_close(r);
    lt_free(text);
}

/* ---- golden facts of the real samples --------------------------------------------------- */

static bool have_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* Number of distinct values in v[0..n) (sorts v). */
static size_t distinct(uint64_t *v, size_t n)
{
    size_t i, d = n > 0;

    qsort(v, n, sizeof(*v), u64_cmp);
    for (i = 1; i < n; i++)
        d += v[i] != v[i - 1];
    return d;
}

struct task_key {
    uint64_t job;
    uint32_t index;
};

static int task_key_cmp(const void *a, const void *b)
{
    const struct task_key *x = a, *y = b;

    if (x->job != y->job)
        return (x->job > y->job) - (x->job < y->job);
    return (x->index > y->index) - (x->index < y->index);
}

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-12;
}

static void test_trace_golden_machine_events(void **state)
{
    /* The (cpu, mem) -> count table of section 2.2 for machines added at t=0. */
    static const double caps[][3] = {{0.5, 0.4995, 6672}, {0.5, 0.2493, 3835}, {0.5, 0.749, 992},
                                     {1, 1, 788},         {0.25, 0.2498, 123}, {0.5, 0.1241, 54},
                                     {0.5, 0.03085, 5},   {0.5, 0.9678, 4},    {1, 0.5, 3},
                                     {0.5, 0.06158, 1}};
    size_t cap_count[N_OF(caps)] = {0};
    struct tr_machine_row m;
    struct tr_reader *r;
    struct lt_err err;
    uint64_t *ids = lt_calloc(40000, sizeof(*ids));
    size_t n = 0, at0 = 0, no_cap = 0, no_cap_add = 0, remove_no_cap = 0, odd_cpu = 0, i;
    int64_t last = -1;
    int rc;

    (void)state;
    if (!have_dir(TR_SAMPLE_DIR)) {
        lt_free(ids);
        skip();
    }
    assert_non_null(ids);
    lt_err_init(&err, NULL);
    r = tr_open(TR_SAMPLE_DIR, TR_MACHINE_EVENTS, NULL, &err);
    assert_non_null(r);
    while ((rc = tr_next(r, &m, &err)) == 1) {
        if (n == 0) {
            assert_int_equal(m.time, 0);
            assert_int_equal(m.machine_id, 5);
            assert_int_equal(m.type, TR_M_ADD);
            assert_true(near(m.cpu, 0.5) && near(m.mem, 0.2493));
        }
        assert_true(n < 40000);
        ids[n++] = m.machine_id;
        last = m.time;
        if (!m.has_cap) {
            if (no_cap == 0) {
                assert_int_equal(m.time, 113019603442);
                assert_int_equal(m.machine_id, 6264344062u);
            }
            no_cap++;
            no_cap_add += m.type == TR_M_ADD;
        } else if (!near(m.cpu, 0.25) && !near(m.cpu, 0.5) && !near(m.cpu, 1)) {
            odd_cpu++;
        }
        remove_no_cap += m.type == TR_M_REMOVE && !m.has_cap;
        if (m.type == TR_M_ADD && m.time == 0) {
            at0++;
            for (i = 0; i < N_OF(caps); i++)
                cap_count[i] += near(m.cpu, caps[i][0]) && near(m.mem, caps[i][1]);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 37780);
    assert_int_equal(tr_counts(r)->rows, 37780);
    assert_int_equal(tr_counts(r)->by_type[TR_M_ADD], 21443);
    assert_int_equal(tr_counts(r)->by_type[TR_M_REMOVE], 8957);
    assert_int_equal(tr_counts(r)->by_type[TR_M_UPDATE], 7380);
    assert_int_equal(at0, 12477);
    assert_int_equal(no_cap, 32);
    assert_int_equal(no_cap_add, 32);
    assert_int_equal(remove_no_cap, 0);
    assert_int_equal(odd_cpu, 0);
    assert_int_equal(last, 2506135493517);
    for (i = 0; i < N_OF(caps); i++)
        assert_int_equal(cap_count[i], (size_t)caps[i][2]);
    assert_int_equal(distinct(ids, n), 12583);
    tr_close(r);
    lt_free(ids);
}

/* Facts of one task_events part, gathered in one pass. */
struct task_facts {
    size_t rows, at0, schedule_at0, no_machine, schedule_no_machine, missing2, missing_other;
    size_t no_req, no_req_no_flag, missing2_no_req;
    size_t prio[12], cls[4];
    int64_t t_min, t_max;
    size_t n_jobs, n_tasks, n_machines;
    uint64_t by_type[TR_N_TYPES];
};

static void gather_task_facts(uint32_t part, struct task_facts *f)
{
    struct tr_opts o = {false, part, 1};
    struct tr_task_row k;
    struct tr_reader *r;
    struct lt_err err;
    size_t cap = 500000, nm = 0, i;
    uint64_t *jobs = lt_calloc(cap, sizeof(*jobs));
    uint64_t *machines = lt_calloc(cap, sizeof(*machines));
    struct task_key *tasks = lt_calloc(cap, sizeof(*tasks));
    int rc;

    assert_true(jobs != NULL && machines != NULL && tasks != NULL);
    memset(f, 0, sizeof(*f));
    f->t_min = INT64_MAX;
    lt_err_init(&err, NULL);
    r = tr_open(TR_SAMPLE_DIR, TR_TASK_EVENTS, &o, &err);
    assert_non_null(r);
    while ((rc = tr_next(r, &k, &err)) == 1) {
        assert_true(f->rows < cap);
        jobs[f->rows] = k.job_id;
        tasks[f->rows].job = k.job_id;
        tasks[f->rows].index = k.task_index;
        f->rows++;
        f->t_min = k.time < f->t_min ? k.time : f->t_min;
        f->t_max = k.time > f->t_max ? k.time : f->t_max;
        f->at0 += k.time == 0;
        f->schedule_at0 += k.time == 0 && k.type == TR_SCHEDULE;
        if (k.has_machine)
            machines[nm++] = k.machine_id;
        f->no_machine += !k.has_machine;
        f->schedule_no_machine += !k.has_machine && k.type == TR_SCHEDULE;
        f->missing2 += k.missing == 2;
        f->missing_other += k.missing == 0 || k.missing == 1;
        f->no_req += !k.has_req;
        f->no_req_no_flag += !k.has_req && k.diff_machines < 0;
        f->missing2_no_req += k.missing == 2 && !k.has_req;
        f->prio[k.priority]++;
        if (k.sched_class >= 0)
            f->cls[k.sched_class]++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(tr_counts(r)->rows, f->rows);
    for (i = 0; i < TR_N_TYPES; i++)
        f->by_type[i] = tr_counts(r)->by_type[i];
    f->n_jobs = distinct(jobs, f->rows);
    f->n_machines = distinct(machines, nm);
    qsort(tasks, f->rows, sizeof(*tasks), task_key_cmp);
    f->n_tasks = f->rows > 0;
    for (i = 1; i < f->rows; i++)
        f->n_tasks += task_key_cmp(&tasks[i], &tasks[i - 1]) != 0;
    tr_close(r);
    lt_free(jobs);
    lt_free(machines);
    lt_free(tasks);
}

static void test_trace_golden_task_events_part0(void **state)
{
    static const size_t prio[12] = {119711, 35733, 173736, 0, 0, 0, 0, 0, 7013, 99178, 1688, 13087};
    static const size_t cls[4] = {237969, 58109, 97482, 56586};
    struct task_facts f;
    size_t i;

    (void)state;
    if (!have_dir(TR_SAMPLE_DIR))
        skip();
    gather_task_facts(0, &f);
    assert_int_equal(f.rows, 450146);
    assert_int_equal(f.t_min, 0);
    assert_int_equal(f.t_max, 5611086346);
    assert_int_equal(f.at0, 277321);
    assert_int_equal(f.schedule_at0, 132982);
    assert_int_equal(f.n_jobs, 4895);
    assert_int_equal(f.n_tasks, 190926);
    assert_int_equal(f.n_machines, 12492);
    assert_int_equal(f.by_type[TR_SUBMIT], 201491);
    assert_int_equal(f.by_type[TR_SCHEDULE], 189994);
    assert_int_equal(f.by_type[TR_EVICT], 4338);
    assert_int_equal(f.by_type[TR_FAIL], 581);
    assert_int_equal(f.by_type[TR_FINISH], 43237);
    assert_int_equal(f.by_type[TR_KILL], 10505);
    assert_int_equal(
        f.by_type[TR_LOST] + f.by_type[TR_UPDATE_PENDING] + f.by_type[TR_UPDATE_RUNNING], 0);
    assert_int_equal(f.no_machine, 119565);
    assert_int_equal(f.schedule_no_machine, 0);
    /* The 291 missing-info rows are exactly the rows without requests and flag. */
    assert_int_equal(f.missing2, 291);
    assert_int_equal(f.missing_other, 0);
    assert_int_equal(f.no_req, 291);
    assert_int_equal(f.no_req_no_flag, 291);
    assert_int_equal(f.missing2_no_req, 291);
    for (i = 0; i < 12; i++)
        assert_int_equal(f.prio[i], prio[i]);
    for (i = 0; i < 4; i++)
        assert_int_equal(f.cls[i], cls[i]);
}

static void test_trace_golden_task_events_part1(void **state)
{
    struct task_facts f;

    (void)state;
    if (!have_dir(TR_SAMPLE_DIR))
        skip();
    gather_task_facts(1, &f);
    assert_int_equal(f.rows, 77776);
    assert_int_equal(f.t_min, 5611824441);
    assert_int_equal(f.t_max, 10622388150);
    assert_int_equal(f.by_type[TR_SUBMIT], 25822);
    assert_int_equal(f.by_type[TR_SCHEDULE], 26231);
    assert_int_equal(f.by_type[TR_EVICT], 2500);
    assert_int_equal(f.by_type[TR_FAIL], 501);
    assert_int_equal(f.by_type[TR_FINISH], 14551);
    assert_int_equal(f.by_type[TR_KILL], 8171);
}

/* Both parts in one read: the order check holds across the part boundary. */
static void test_trace_golden_task_events_both_parts(void **state)
{
    struct tr_reader *r;
    struct lt_err err;

    (void)state;
    if (!have_dir(TR_SAMPLE_DIR))
        skip();
    assert_int_equal(read_all(TR_SAMPLE_DIR, TR_TASK_EVENTS, NULL, &r, &err), 0);
    assert_int_equal(tr_counts(r)->rows, 450146 + 77776);
    assert_int_equal(tr_counts(r)->parts, 2);
    assert_true(tr_bytes_read(r) == 4139742 + 924634);
    assert_true(tr_bytes_total(r) == 4139742 + 924634);
    tr_close(r);
}

static void test_trace_golden_job_events(void **state)
{
    struct tr_opts o = {false, 0, 1};
    struct tr_job_row j;
    struct tr_reader *r;
    struct lt_err err;
    size_t at0 = 0, missing = 0;
    int64_t t_max = 0;
    int rc;

    (void)state;
    if (!have_dir(TR_SAMPLE_DIR))
        skip();
    lt_err_init(&err, NULL);
    r = tr_open(TR_SAMPLE_DIR, TR_JOB_EVENTS, &o, &err);
    assert_non_null(r);
    while ((rc = tr_next(r, &j, &err)) == 1) {
        at0 += j.time == 0;
        missing += j.missing != TR_MISSING_NONE;
        t_max = j.time;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(tr_counts(r)->rows, 10704);
    assert_int_equal(at0, 7970);
    assert_int_equal(missing, 0);
    assert_int_equal(t_max, 5598884349);
    assert_int_equal(tr_counts(r)->by_type[TR_SUBMIT], 4900);
    assert_int_equal(tr_counts(r)->by_type[TR_SCHEDULE], 4892);
    assert_int_equal(tr_counts(r)->by_type[TR_FAIL], 8);
    assert_int_equal(tr_counts(r)->by_type[TR_FINISH], 636);
    assert_int_equal(tr_counts(r)->by_type[TR_KILL], 268);
    tr_close(r);

    o.first_part = 1;
    assert_int_equal(read_all(TR_SAMPLE_DIR, TR_JOB_EVENTS, &o, &r, &err), 0);
    assert_int_equal(tr_counts(r)->rows, 3099);
    tr_close(r);
}

/* The bundled subset (tests/data/clusterdata-2011-2-demo/README.md lists these counts). */
static void test_trace_golden_demo_subset(void **state)
{
    static const struct {
        enum tr_table table;
        uint64_t rows;
        uint32_t parts;
    } want[] = {{TR_MACHINE_EVENTS, 3671, 1}, {TR_TASK_EVENTS, 57949, 2}, {TR_JOB_EVENTS, 1377, 2}};
    struct tr_reader *r;
    struct lt_err err;
    size_t i;

    (void)state;
    for (i = 0; i < N_OF(want); i++) {
        assert_int_equal(read_all(TR_DEMO_DIR, want[i].table, NULL, &r, &err), 0);
        assert_int_equal(tr_counts(r)->rows, want[i].rows);
        assert_int_equal(tr_counts(r)->parts, want[i].parts);
        assert_int_equal(tr_counts(r)->bad_lines, 0);
        tr_close(r);
    }
}

/* Parses line with tr_parse_task_line and with the general parser alone and asserts the same
 * outcome: the same row, or the same error code, column and message. */
static void task_fast_equals_general(const char *line, size_t len)
{
    struct tr_task_row a, b;
    struct lt_err ea, eb;
    int ra, rb;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    lt_err_init(&ea, NULL);
    lt_err_init(&eb, NULL);
    static struct tr_task_memo memo; /* across calls: lines in file order share tails */
    struct tr_task_row c;
    struct lt_err ec;
    int rc;

    ra = tr_parse_task_line(line, len, &a, &ea);
    rb = tr_parse_task_line_general(line, len, &b, &eb);
    memset(&c, 0, sizeof(c));
    lt_err_init(&ec, NULL);
    rc = tr_parse_task_line_memo(line, len, &memo, &c, &ec);
    if (rc != ra || ec.code != ea.code || ec.column != ea.column || strcmp(ec.text, ea.text) != 0 ||
        memcmp(&a, &c, sizeof(a)) != 0) {
        print_error("'%.*s': with the memo %d '%s', without %d '%s'\n", (int)len, line, rc, ec.text,
                    ra, ea.text);
        fail();
    }
    if (ra != rb || ea.code != eb.code || ea.column != eb.column || strcmp(ea.text, eb.text) != 0) {
        print_error("'%.*s': %d '%s' vs general %d '%s'\n", (int)len, line, ra, ea.text, rb,
                    eb.text);
        fail();
    }
    if (ra == 0 &&
        (a.time != b.time || a.missing != b.missing || a.job_id != b.job_id ||
         a.task_index != b.task_index || a.has_machine != b.has_machine ||
         a.machine_id != b.machine_id || a.type != b.type || a.sched_class != b.sched_class ||
         a.priority != b.priority || a.has_req != b.has_req ||
         memcmp(&a.cpu, &b.cpu, sizeof(a.cpu)) != 0 || memcmp(&a.mem, &b.mem, sizeof(a.mem)) != 0 ||
         memcmp(&a.disk, &b.disk, sizeof(a.disk)) != 0 || a.diff_machines != b.diff_machines)) {
        print_error("'%.*s': rows differ\n", (int)len, line);
        fail();
    }
}

/* tr_parse_task_line's fast path (trace_line.c) decides exactly as the general parser, and
 * tr_parse_task_line_memo exactly as tr_parse_task_line: on every line of the demo subset, on
 * every 40th line with each byte replaced by one of a few troublemakers, deleted or the line
 * cut there (each mutated line between lines that share its tail), and on numbers at the fast
 * path's limits. */
static void test_trace_task_fast_path_equals_general_parser(void **state)
{
    static const char subst[] = {',', 'x', '9', '0', '1', '\r', '-', '.', 'e', '=', ' '};
    static const char *const edge[] = {
        "0,,1,0,,0," HASH ",,10,,,,", "0,,1,0,,0," HASH ",,11,,,,", "0,,1,0,,0," HASH ",,12,,,,",
        "0,,1,0,,0," HASH ",,09,,,,", "0,,1,0,,0," HASH ",,011,,,,", "0,,1,0,,0," HASH ",,1,,,,",
        "9999999999999999999,,1,0,,0,,,0,,,,", "9223372036854775807,,1,0,,0,,,0,,,,",
        "18446744073709551615,,1,0,,0,,,0,,,,", "0,,999999999999999999,0,,0,,,0,,,,",
        "0,,9223372036854775807,0,,0,,,0,,,,", "0,,9223372036854775808,0,,0,,,0,,,,",
        "0,,1,999999999,,0,,,0,,,,", "0,,1,4294967295,1,0,,,0,,,,", "0,,1,4294967296,1,0,,,0,,,,",
        "0,2,1,0,7,8,,3,11,1e-300,2.5e+3,0.0000001,1", "0,3,1,0,,0,,,0,,,,", "0,,1,0,,0,,4,0,,,,",
        "0,,1,0,,9,,,0,,,,", "0,,1,0,,0,,,0,,,,2", "0,,1,0,,0,,,0,1.,.5,0.,0",
        "0,,1,0,,0,,,0,1.5.5,1,1,0", "0,,1,0,,0,,,0,00.50,007,1.0000000000000000001,0",
        "0,,1,0,,0,,,0,1234567890.123456789,0.1,0.1,0",
        "0,,1,0,,0,,,0,9007199254740993,9007199254740992,1,0",
        "0,,1,0,,0,,,0,0.0000000000000000000001,1,1,0",
        "0,,1,0,,0,,,0,0.00000000000000000000001,1,1,0", "0,,1,0,,0,,,0,1,1,1",
        "0,,1,0,,0,,,0,1,1,1e", "0,,1,0,,0,,,0,0.5,0.25,0.125,",
        "0,,1,0,,0,AAAAAAAAAAAAAAA+,,0,,,,", "0,,1,0,,0,AAAAAAAAAAAAAAA-,,0,,,,",
        "0,,1,0,,0,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA@,,0,,,,",
        "0,,1,0,,0,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/=,,0,,,,",
        "0,,1,0,,0,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\x80/=,,0,,,,",
        "0,,1,0,,0,zzzzzzzzzzzzzzzz[,,0,,,,", "0,,1,0,,0,,,0,,,,,", "0,,1,0,,0,,,0,,,", "", ",",
        /* an empty tail (found by fuzz_trace_line): no memo
         * match, even before the first tail is kept */
        "0,,6176858948,797,6565360014,2,"};
    char buf[512];
    gzFile f;
    long n = 0;

    (void)state;
    {
        /* An empty tail against an empty memo (n = 0): no match (found by fuzz_trace_line). */
        static const char cut[] = "0,,6176858948,797,6565360014,2,";
        struct tr_task_memo fresh;
        struct tr_task_row row;
        struct lt_err e1, e2;

        memset(&fresh, 0, sizeof(fresh));
        lt_err_init(&e1, NULL);
        lt_err_init(&e2, NULL);
        assert_int_equal(tr_parse_task_line_memo(cut, strlen(cut), &fresh, &row, &e1), LT_EPARSE);
        assert_int_equal(tr_parse_task_line(cut, strlen(cut), &row, &e2), LT_EPARSE);
        assert_string_equal(e1.text, e2.text);
    }
    for (size_t i = 0; i < N_OF(edge); i++)
        task_fast_equals_general(edge[i], strlen(edge[i]));
    /* Digit runs of every length from 1 to 21 in each number field of the fast path (time,
     * job ID, task index, machine ID), with a leading zero or not, ending in each kind of
     * byte, on lines cut at every byte. */
    for (int field = 0; field < 4; field++) {
        for (int digits = 1; digits <= 21; digits++) {
            for (int lead = 0; lead < 2; lead++) {
                static const char after[] = {',', 'x', '/', ':', '\xff', ' '};
                for (size_t a = 0; a < N_OF(after); a++) {
                    char num[32], line[160];
                    const char *v[4] = {"5", "6", "7", "8"};
                    int len;

                    for (int d = 0; d < digits; d++)
                        num[d] = (char)('0' + (d == 0 ? (lead ? 0 : 9) : (d * 7 + field) % 10));
                    num[digits] = after[a];
                    num[digits + 1] = '\0';
                    if (after[a] == ',')
                        num[digits] = '\0';
                    v[field] = num;
                    len = snprintf(line, sizeof(line), "%s,,%s,%s,%s,1," HASH ",2,9,0.5,0.25,0,1",
                                   v[0], v[1], v[2], v[3]);
                    for (int k = len; k >= 0; k--)
                        task_fast_equals_general(line, (size_t)k);
                }
            }
        }
    }
    snprintf(buf, sizeof(buf), "%s/task_events/part-00000-of-00500.csv.gz", TR_DEMO_DIR);
    f = gzopen(buf, "rb");
    assert_non_null(f);
    while (gzgets(f, buf, (int)sizeof(buf) - 1) != NULL) {
        size_t len = strcspn(buf, "\n");
        char m[512];
        task_fast_equals_general(buf, len);
        if (n++ % 40 != 0)
            continue;
        for (size_t k = 0; k < len; k++) {
            task_fast_equals_general(buf, k); /* cut at k */
            memcpy(m, buf, len);
            memmove(m + k, m + k + 1, len - k - 1); /* byte k deleted */
            task_fast_equals_general(m, len - 1);
            for (size_t c = 0; c < N_OF(subst); c++) {
                memcpy(m, buf, len);
                m[k] = subst[c];
                task_fast_equals_general(m, len);
            }
        }
    }
    gzclose(f);
    assert_true(n > 50000);
}

static void test_trace_names_tables_and_types(void **state)
{
    (void)state;
    assert_string_equal(tr_table_name(TR_TASK_EVENTS), "task_events");
    assert_string_equal(tr_table_name(TR_MACHINE_EVENTS), "machine_events");
    assert_string_equal(tr_type_name(TR_MACHINE_EVENTS, TR_M_UPDATE), "UPDATE");
    assert_string_equal(tr_type_name(TR_JOB_EVENTS, TR_UPDATE_RUNNING), "UPDATE_RUNNING");
    assert_string_equal(tr_type_name(TR_TASK_EVENTS, 9), "?");
}

#define TMP_TEST(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tmp_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_parses_full_task_row),
        cmocka_unit_test(test_trace_parses_missing_info_row_without_requests),
        cmocka_unit_test(test_trace_accepts_empty_optional_task_fields),
        cmocka_unit_test(test_trace_reads_ids_and_times_at_their_limits),
        cmocka_unit_test(test_trace_rejects_integers_out_of_range),
        cmocka_unit_test(test_trace_rejects_non_integers),
        cmocka_unit_test(test_trace_rejects_codes_out_of_range),
        cmocka_unit_test(test_trace_rejects_empty_mandatory_fields),
        cmocka_unit_test(test_trace_rejects_wrong_field_counts),
        cmocka_unit_test(test_trace_rejects_carriage_return),
        cmocka_unit_test(test_trace_rejects_bad_floats),
        cmocka_unit_test(test_trace_float_parser_is_correctly_rounded),
        cmocka_unit_test(test_trace_checks_hash_shape),
        cmocka_unit_test(test_trace_parses_job_and_machine_rows),
        cmocka_unit_test(test_trace_parse_failure_leaves_row_untouched_and_allows_null_err),
        cmocka_unit_test(test_trace_quotes_bad_bytes_safely),
        TMP_TEST(test_trace_reads_plain_and_gzip_parts_in_order),
        TMP_TEST(test_trace_honours_first_part_and_max_parts),
        TMP_TEST(test_trace_rejects_missing_directory_and_empty_table),
        TMP_TEST(test_trace_rejects_part_sets_with_gaps_or_disagreements),
        TMP_TEST(test_trace_reports_truncated_gzip_naming_the_part),
        TMP_TEST(test_trace_reports_corrupt_gzip_and_misnamed_files),
        TMP_TEST(test_trace_checks_every_gzip_member),
        TMP_TEST(test_trace_rejects_backwards_time_within_a_part),
        TMP_TEST(test_trace_rejects_backwards_time_across_parts),
        TMP_TEST(test_trace_skip_bad_lines_counts_and_keeps_messages),
        TMP_TEST(test_trace_rejects_overlong_line),
        TMP_TEST(test_trace_reads_lines_across_block_boundaries),
        cmocka_unit_test(test_trace_golden_machine_events),
        cmocka_unit_test(test_trace_golden_task_events_part0),
        cmocka_unit_test(test_trace_golden_task_events_part1),
        cmocka_unit_test(test_trace_golden_task_events_both_parts),
        cmocka_unit_test(test_trace_golden_job_events),
        cmocka_unit_test(test_trace_golden_demo_subset),
        cmocka_unit_test(test_trace_task_fast_path_equals_general_parser),
        cmocka_unit_test(test_trace_names_tables_and_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
