/* test_config.c -- lotus-extender's settings (extender/config.c): the config file, the flags,
 * their precedence and --print-config.
 *
 * Each test writes its config file into a scratch directory and calls ext_config_parse_args
 * with an argv as main() gets it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lt_test_dir.h"

struct fixture {
    char dir[128];
    char path[256]; /* dir/extender.json */
    struct ext_config cfg;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (f == NULL || lt_test_mkdtemp(f->dir, sizeof(f->dir), "test_config") < 0)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/extender.json", f->dir);
    ext_config_init(&f->cfg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    ext_config_release(&f->cfg);
    lt_test_rm_tree(f->dir);
    free(f);
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
}

/* Parses argv (NULL-terminated, argv[0] included); returns ext_config_parse_args's result. */
static int parse(struct fixture *f, const char **argv, enum ext_config_action *action,
                 struct lt_err *err)
{
    int argc = 0;

    while (argv[argc] != NULL)
        argc++;
    lt_err_init(err, NULL);
    return ext_config_parse_args(&f->cfg, argc, (char **)(uintptr_t)argv, action, err);
}

/* The value of key in ext_config_to_json's object, as a string or an integer. */
static void assert_printed(const struct ext_config *cfg, const char *key, const char *str,
                           json_int_t n)
{
    json_t *o = ext_config_to_json(cfg), *v;

    assert_non_null(o);
    v = json_object_get(o, key);
    assert_non_null(v);
    if (str != NULL)
        assert_string_equal(json_string_value(v), str);
    else
        assert_int_equal(json_integer_value(v), n);
    json_decref(o);
}

/* --print-config prints what the server would run with: defaults, then the file, then flags. */
static void test_config_print_config_includes_the_config_file(void **state)
{
    struct fixture *f = *state;
    const char *argv[] = {"lotus-extender", "--config", f->path, "--print-config",
                          "--threads",      "3",        NULL};
    enum ext_config_action action;
    struct lt_err err;

    write_file(f->path, "{\"policy\": \"sos10\", \"threads\": 7, \"conn_timeout\": \"10s\"}");
    assert_int_equal(parse(f, argv, &action, &err), 0);
    assert_int_equal(action, EXT_CONFIG_PRINT);
    assert_printed(&f->cfg, "policy", "sos10", 0);
    assert_printed(&f->cfg, "conn_timeout", "10s", 0);
    assert_printed(&f->cfg, "threads", NULL, 3); /* the flag wins over the file */
}

/* An error in the file is reported by --print-config too, as it would be at start. */
static void test_config_print_config_reports_a_bad_config_file(void **state)
{
    struct fixture *f = *state;
    const char *argv[] = {"lotus-extender", "--print-config", "--config", f->path, NULL};
    enum ext_config_action action;
    struct lt_err err;

    write_file(f->path, "{\"polcy\": \"sos10\"}");
    assert_int_equal(parse(f, argv, &action, &err), LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "unknown key 'polcy' (did you mean 'policy'?)"));
}

/* A budget of all bodies smaller than one body could never let the largest one in. */
static void test_config_body_budget_must_hold_the_largest_body(void **state)
{
    struct fixture *f = *state;
    const char *argv[] = {"lotus-extender", "--config", f->path, "--max-body", "64Mi", NULL};
    enum ext_config_action action;
    struct lt_err err;

    write_file(f->path, "{\"body_budget\": \"32Mi\"}");
    assert_int_equal(parse(f, argv, &action, &err), LT_EINVAL);
    assert_non_null(strstr(err.text, "extender.json: key 'body_budget' (33554432 bytes) is "
                                     "smaller than --max-body (67108864 bytes)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_config_print_config_includes_the_config_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_config_print_config_reports_a_bad_config_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_config_body_budget_must_hold_the_largest_body, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
