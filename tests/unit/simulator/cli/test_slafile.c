/* test_slafile.c -- SLA files (simulator/cli/slafile.c): a good file read as the SPEC would be,
 * and every error naming the file and the JSON path.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdio.h>
#include <string.h>

#include "cli/slafile.h"
#include "lt_mem.h"
#include "lt_test_dir.h"

static char g_dir[256];
static char g_path[320];

static int setup(void **state)
{
    (void)state;
    if (lt_test_mkdtemp(g_dir, sizeof(g_dir), "slafile") != 0)
        return -1;
    snprintf(g_path, sizeof(g_path), "%s/sla.json", g_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    lt_test_rm_tree(g_dir);
    return 0;
}

static void write_file(const char *text)
{
    FILE *f = fopen(g_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_file_equals_spec(void **state)
{
    (void)state;
    struct sim_sla_named *s = NULL;
    struct lt_sla_spec want;
    struct lt_err err;
    size_t n = 0;

    write_file("{\"slas\": [{\"name\": \"pen1\", \"shape\": \"by-deadline\", \"rmax\": 1, "
               "\"pen\": -1, \"d1\": \"1h\", \"d2\": 7200},"
               " {\"name\": \"rel\", \"shape\": \"by-deadline\", \"pen\": -3.5, \"d1\": \"2x\","
               " \"d2\": \"4x\"},"
               " {\"name\": \"cs\", \"shape\": \"cheap-and-simple\"}]}");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_sla_file_load(g_path, &s, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(s[0].name, "pen1");
    assert_int_equal(lt_sla_parse("by-deadline:rmax=1,pen=-1,d1=1h,d2=2h", &want, &err), 0);
    assert_memory_equal(&s[0].spec.sla, &want.sla, sizeof(want.sla));
    assert_int_equal(lt_sla_parse("by-deadline:pen=-3.5,d1=2x,d2=4x", &want, &err), 0);
    assert_memory_equal(&s[1].spec.sla, &want.sla, sizeof(want.sla));
    assert_int_equal(s[1].spec.relative, LT_SLA_T_D1 | LT_SLA_T_D2);
    assert_int_equal(s[2].spec.sla.kind, LT_SLA_CHEAP_AND_SIMPLE);
    lt_assert_near(s[2].spec.sla.r_min, LT_SLA_DEF_RMIN, 0);
    assert_string_equal(err.source, ""); /* cleared on success */
    lt_free(s);
}

static void test_errors_name_file_and_path(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"by-deadline\", \"d1\": \"3h\", "
         "\"d2\": \"2h\"}]}",
         "$.slas[0].d2: SLA 'a': d1 (10800 s) must be <= d2 (7200 s)"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"by-deadline\", \"pen\": 1}]}",
         "$.slas[0].pen: SLA 'a': pen must be <= 0"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"by-deadline\", \"d1\": \"1 hour\"}]}",
         "$.slas[0].d1: SLA 'a': key 'd1' needs a finite time"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"by-deadline\", \"d3\": 1}]}",
         "$.slas[0].d3: SLA 'a': unknown key 'd3' for by-deadline (known: rmax, pen, d1, d2)"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"by-deadline\", \"d1\": true}]}",
         "$.slas[0].d1: expected a number or a time string (90s, 5m, 1h, 2x), got true"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"linear\"}]}",
         "$.slas[0].shape: unknown SLA kind 'linear' in 'a'"},
        {"{\"slas\": [{\"name\": \"a\"}]}", "$.slas[0]: missing key 'shape'"},
        {"{\"slas\": [{\"shape\": \"by-deadline\"}]}", "$.slas[0]: missing key 'name'"},
        {"{\"slas\": [{\"name\": \"a b\", \"shape\": \"by-deadline\"}]}",
         "$.slas[0].name: expected a name of 1..31 letters"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"example1\", \"target\": \"1h\"}]}",
         "$.slas[0]: SLA 'a': key 'peak' is required"},
        {"{\"slas\": [{\"name\": \"a\", \"shape\": \"by-deadline\"}, {\"name\": \"a\", "
         "\"shape\": \"by-deadline\"}]}",
         "$.slas[1].name: the name 'a' is given twice (also $.slas[0])"},
        {"{\"slas\": []}", "$.slas: 0 SLAs: give 1..64"},
        {"{\"slas\": {}}", "$.slas: expected an array of SLA objects, got an object"},
        {"{\"sla\": []}", "$: unknown key 'sla' (known: slas)"},
        {"{}", "$: missing key 'slas'"},
    };
    struct sim_sla_named *s = NULL;
    struct lt_err err;
    size_t n = 0;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_file(cases[i].json);
        lt_err_init(&err, NULL);
        assert_int_not_equal(sim_sla_file_load(g_path, &s, &n, &err), 0);
        if (strstr(err.text, cases[i].want) == NULL)
            fail_msg("case %zu: got '%s', want '%s'", i, err.text, cases[i].want);
        assert_string_equal(err.source, g_path);
    }
    /* syntax: a duplicate key is Jansson's, with a line */
    write_file("{\"slas\": [{\"name\": \"a\", \"name\": \"b\", \"shape\": \"by-deadline\"}]}");
    lt_err_init(&err, NULL);
    assert_int_equal(sim_sla_file_load(g_path, &s, &n, &err), LT_EPARSE);
    assert_int_equal(err.line, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_equals_spec),
        cmocka_unit_test(test_errors_name_file_and_path),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
