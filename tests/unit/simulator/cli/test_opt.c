/* test_opt.c -- lotus-sim's option tables, durations and lists (simulator/cli/opt.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/opt.h"

struct o {
    const char *name;
    uint64_t n, secs;
    double hours;
    bool flag;
};

static const struct sim_opt rows[] = {
    {"--name", SIM_OPT_STR, offsetof(struct o, name), "S", "a string", NULL},
    {"-j", SIM_OPT_U64, offsetof(struct o, n), "N", "a number", "2"},
    {"--until", SIM_OPT_SECS, offsetof(struct o, secs), "D", "seconds", NULL},
    {"--hours", SIM_OPT_HOURS, offsetof(struct o, hours), "D", "hours", NULL},
    {"--flag", SIM_OPT_FLAG, offsetof(struct o, flag), NULL, "a flag", NULL},
};
static const struct sim_cmd_spec spec = {
    "t", "[options]", "about", "lotus-sim t -j 2", NULL, rows, sizeof(rows) / sizeof(rows[0])};

/* Parses the n strings of args (argv[0] first), copied: sim_opt_parse takes char **. */
static int parse(struct o *o, bool *seen, struct lt_err *err, int n, const char *const *args)
{
    static char store[16][64];
    static char *argv[16];

    for (int k = 0; k < n; k++) {
        snprintf(store[k], sizeof(store[k]), "%s", args[k]);
        argv[k] = store[k];
    }
    memset(o, 0, sizeof(*o));
    lt_err_init(err, NULL);
    return sim_opt_parse(&spec, n, argv, o, seen, err);
}

static void test_values_and_forms(void **state)
{
    static const char *const argv[] = {"t",  "--name=x", "-j4", "--until",
                                       "1h", "--hours",  "90m", "--flag"};
    struct o o;
    struct lt_err err;
    bool seen[5];

    (void)state;
    assert_int_equal(parse(&o, seen, &err, 8, argv), 0);
    assert_string_equal(o.name, "x");
    assert_int_equal(o.n, 4);
    assert_int_equal(o.secs, 3600);
    lt_assert_near(o.hours, 1.5, 1e-12);
    assert_true(o.flag);
    assert_true(seen[0] && seen[1] && seen[2] && seen[3] && seen[4]);
}

static void test_unknown_option_suggests(void **state)
{
    static const char *const argv[] = {"t", "--nmae", "x"};
    static const char *const far[] = {"t", "--zzzzzzzz"};
    static const char *const stray[] = {"t", "stray"};
    struct o o;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse(&o, NULL, &err, 3, argv), LT_EINVAL);
    assert_non_null(strstr(err.text, "did you mean --name?"));
    assert_int_equal(parse(&o, NULL, &err, 2, far), LT_EINVAL);
    assert_null(strstr(err.text, "did you mean"));
    assert_int_equal(parse(&o, NULL, &err, 2, stray), LT_EINVAL);
    assert_non_null(strstr(err.text, "unexpected argument 'stray'"));
}

static void test_missing_value(void **state)
{
    static const char *const argv[] = {"t", "--name", "--flag"};
    struct o o;
    struct lt_err err;

    (void)state;
    assert_int_equal(parse(&o, NULL, &err, 3, argv), LT_EINVAL);
    assert_non_null(strstr(err.text, "missing value for --name"));
}

/* sim_opt_alone: the flag with another option is an error; alone, or absent, it is not. */
static void test_alone(void **state)
{
    static const char *const alone[] = {"t", "--flag"};
    static const char *const with[] = {"t", "--flag", "-j", "3"};
    static const char *const without[] = {"t", "--name", "x", "-j", "3"};
    struct o o;
    struct lt_err err;
    bool seen[5];

    (void)state;
    assert_int_equal(parse(&o, seen, &err, 2, alone), 0);
    assert_int_equal(sim_opt_alone(&spec, seen, "--flag", &err), 0);
    assert_int_equal(parse(&o, seen, &err, 4, with), 0);
    assert_int_equal(sim_opt_alone(&spec, seen, "--flag", &err), LT_EINVAL);
    assert_string_equal(err.text, "--flag takes no other options");
    assert_int_equal(parse(&o, seen, &err, 5, without), 0);
    assert_int_equal(sim_opt_alone(&spec, seen, "--flag", &err), 0);
}

static void test_durations(void **state)
{
    static const struct {
        const char *s;
        uint64_t unit, want;
    } ok[] = {{"0", 1, 0},     {"90", 1, 90},     {"90s", 1, 90},     {"5m", 1, 300},
              {"1h", 1, 3600}, {"2d", 1, 172800}, {"3", 3600, 10800}, {"30m", 3600, 1800}};
    static const char *bad[] = {"", "h", "1x", "1hh", "-1", "+1", "1.5", " 1", "1 h"};
    struct lt_err err;
    uint64_t v;
    double h;

    (void)state;
    for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
        assert_int_equal(sim_parse_secs("--d", ok[k].s, ok[k].unit, &v, NULL), 0);
        assert_int_equal(v, ok[k].want);
    }
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        lt_err_init(&err, NULL);
        assert_int_equal(sim_parse_secs("--d", bad[k], 1, &v, &err), LT_EINVAL);
        assert_non_null(strstr(err.text, "--d"));
    }
    assert_int_equal(sim_parse_secs("--d", "99999999999999999999", 1, &v, NULL), LT_ERANGE);
    assert_int_equal(sim_parse_hours("--h", "2.5", &h, NULL), 0);
    lt_assert_near(h, 2.5, 1e-12);
    assert_int_equal(sim_parse_hours("--h", "1d", &h, NULL), 0);
    lt_assert_near(h, 24.0, 1e-12);
    assert_int_equal(sim_parse_hours("--h", "-1", &h, NULL), LT_EINVAL);
    assert_int_equal(sim_parse_hours("--h", "2w", &h, NULL), LT_EINVAL);
}

static void test_lists(void **state)
{
    char buf[32], *items[4];
    size_t n;
    struct lt_err err;

    (void)state;
    assert_int_equal(sim_list_split("--l", "a,b,c", buf, sizeof(buf), items, 4, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_string_equal(items[2], "c");
    static const char *bad[] = {"", "a,", ",a", "a,,b", "a,a", "a,b,c,d,e"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        lt_err_init(&err, NULL);
        assert_int_equal(sim_list_split("--l", bad[k], buf, sizeof(buf), items, 4, &n, &err),
                         LT_EINVAL);
        assert_non_null(strstr(err.text, "--l"));
    }
}

/* Order lists: a composite's three numbers stay one item; the list rules otherwise hold. */
static void test_order_lists(void **state)
{
    char buf[64], *items[4];
    size_t n;
    struct lt_err err;

    (void)state;
    assert_int_equal(sim_order_list_split("--o", "sjf,composite:0,1,0,fcfs", buf, sizeof(buf),
                                          items, 4, &n, NULL),
                     0);
    assert_int_equal(n, 3);
    assert_string_equal(items[0], "sjf");
    assert_string_equal(items[1], "composite:0,1,0");
    assert_string_equal(items[2], "fcfs");
    assert_int_equal(
        sim_order_list_split("--o", "composite:1,2", buf, sizeof(buf), items, 4, &n, NULL), 0);
    assert_string_equal(items[0], "composite:1,2"); /* lt_qorder_find names what is missing */
    static const char *bad[] = {"", "sjf,", "composite:0,1,0,", "sjf,sjf",
                                "composite:0,1,0,composite:0,1,0"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        lt_err_init(&err, NULL);
        assert_int_equal(sim_order_list_split("--o", bad[k], buf, sizeof(buf), items, 4, &n, &err),
                         LT_EINVAL);
        assert_non_null(strstr(err.text, "--o"));
    }
    /* sim_list_split keeps splitting there */
    assert_int_equal(sim_list_split("--l", "composite:0,1,2", buf, sizeof(buf), items, 4, &n, NULL),
                     0);
    assert_int_equal(n, 3);
}

static void test_closest(void **state)
{
    static const char *names[] = {"firstfit", "bestfit1", "sos10"};

    (void)state;
    assert_string_equal(sim_closest("firstfitt", names, 3), "firstfit");
    assert_string_equal(sim_closest("sos01", names, 3), "sos10");
    assert_null(sim_closest("random", names, 3));
}

/* --shard I/N: 0 <= I < N <= SIM_SHARD_MAX, digits only; errors name the flag. */
static void test_shard(void **state)
{
    static const char *bad[] = {"",     "1",    "/2",   "1/",  "2/2",      "0/0",  "-1/2",
                                "1/2x", " 0/2", "0/ 2", "a/2", "0/100001", "1/2/3"};
    struct sim_shard sh = {7, 7};
    struct lt_err err;

    (void)state;
    assert_int_equal(sim_parse_shard("--shard", "0/1", &sh, NULL), 0);
    assert_true(sh.index == 0 && sh.count == 1);
    assert_int_equal(sim_parse_shard("--shard", "99999/100000", &sh, NULL), 0);
    assert_true(sh.index == 99999 && sh.count == 100000);
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct sim_shard keep = sh;
        lt_err_init(&err, NULL);
        if (sim_parse_shard("--shard", bad[k], &sh, &err) != LT_EINVAL ||
            strstr(err.text, "--shard") == NULL) {
            print_error("'%s' accepted or not named: %s\n", bad[k], err.text);
            fail();
        }
        assert_true(sh.index == keep.index && sh.count == keep.count);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_forms), cmocka_unit_test(test_unknown_option_suggests),
        cmocka_unit_test(test_missing_value),    cmocka_unit_test(test_alone),
        cmocka_unit_test(test_durations),        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_order_lists),      cmocka_unit_test(test_shard),
        cmocka_unit_test(test_closest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
