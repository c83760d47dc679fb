/* test_log.c -- lotus-extender's JSON-lines logs (extender/log.c): the rate limit of warn and
 * error lines per message.
 *
 * stderr is sent to a scratch file for each test and read back line by line.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"
#include "lt_test_dir.h"

struct fixture {
    char dir[128];
    char path[256]; /* dir/log */
    int saved;      /* the real stderr */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (f == NULL || lt_test_mkdtemp(f->dir, sizeof(f->dir), "test_log") < 0)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
    fflush(stderr);
    f->saved = dup(2);
    if (f->saved < 0 || freopen(f->path, "w", stderr) == NULL)
        return -1;
    ext_log_set_level(EXT_LOG_INFO);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    ext_log_flush(true); /* no count left over for the next test */
    fflush(stderr);
    dup2(f->saved, 2);
    close(f->saved);
    lt_test_rm_tree(f->dir);
    free(f);
    return 0;
}

/* Lines of the log so far whose msg is msg; their "suppressed" fields summed into *suppressed
 * (NULL: not wanted). */
static size_t count_lines(struct fixture *f, const char *msg, long *suppressed)
{
    char line[4096];
    size_t n = 0;
    FILE *fp;

    fflush(stderr);
    fp = fopen(f->path, "r");
    assert_non_null(fp);
    if (suppressed)
        *suppressed = 0;
    while (fgets(line, sizeof(line), fp)) {
        json_t *o = json_loads(line, 0, NULL);
        const char *m = json_string_value(json_object_get(o, "msg"));

        assert_non_null(o);
        if (m != NULL && strcmp(m, msg) == 0) {
            n++;
            if (suppressed)
                *suppressed += (long)json_integer_value(json_object_get(o, "suppressed"));
        }
        json_decref(o);
    }
    fclose(fp);
    return n;
}

/* A flood of one malformed request after another: a few lines per second, not one each. The
 * loop may straddle the start of a second, hence two windows' worth. */
static void test_log_warn_flood_is_rate_limited(void **state)
{
    struct fixture *f = *state;

    for (int i = 0; i < 1000; i++)
        ext_log(EXT_LOG_WARN, "filter request failed", "{s:s}", "error", "malformed");
    assert_true(count_lines(f, "filter request failed", NULL) <= 2 * 10);
}

static int64_t fake_ms;

static int64_t fake_clock(void)
{
    return fake_ms;
}

/* 10 lines of a message a second; the 990 dropped are counted in one summary line written
 * before the first line of the next second; another message has its own 10. */
static void test_log_limit_is_per_message_and_second(void **state)
{
    struct fixture *f = *state;
    long n;

    ext_log_set_clock(fake_clock);
    fake_ms = 5000;
    for (int i = 0; i < 1000; i++)
        ext_log(EXT_LOG_WARN, "flood a", "{s:i}", "i", i);
    for (int i = 0; i < 20; i++)
        ext_log(EXT_LOG_ERROR, "flood b", NULL);
    assert_int_equal(count_lines(f, "flood a", NULL), 10);
    assert_int_equal(count_lines(f, "flood b", NULL), 10);
    assert_int_equal(count_lines(f, "suppressed similar lines", NULL), 0);
    fake_ms = 5999;
    ext_log(EXT_LOG_WARN, "flood a", NULL);
    assert_int_equal(count_lines(f, "flood a", NULL), 10);
    fake_ms = 6000;
    ext_log(EXT_LOG_WARN, "flood a", NULL);
    assert_int_equal(count_lines(f, "flood a", NULL), 11);
    assert_int_equal(count_lines(f, "suppressed similar lines", &n), 1);
    assert_int_equal(n, 991);
    ext_log_set_clock(NULL);
}

/* A flood that stopped is still summed up: by ext_log_flush once its second is over, or at
 * once with all (at exit). */
static void test_log_flush_writes_the_pending_summaries(void **state)
{
    struct fixture *f = *state;
    long n;

    ext_log_set_clock(fake_clock);
    fake_ms = 10000;
    for (int i = 0; i < 15; i++)
        ext_log(EXT_LOG_WARN, "flood c", NULL);
    for (int i = 0; i < 12; i++)
        ext_log(EXT_LOG_WARN, "flood d", NULL);
    ext_log_flush(false); /* the second is not over */
    assert_int_equal(count_lines(f, "suppressed similar lines", NULL), 0);
    fake_ms = 11000;
    ext_log_flush(false);
    assert_int_equal(count_lines(f, "suppressed similar lines", &n), 2);
    assert_int_equal(n, 5 + 2);
    for (int i = 0; i < 13; i++)
        ext_log(EXT_LOG_WARN, "flood c", NULL);
    ext_log_flush(true);
    assert_int_equal(count_lines(f, "suppressed similar lines", &n), 3);
    assert_int_equal(n, 5 + 2 + 3);
    ext_log_set_clock(NULL);
}

/* info lines (bound, preempt) are an audit trail and debug lines are asked for: no limit. */
static void test_log_info_and_debug_are_not_limited(void **state)
{
    struct fixture *f = *state;

    ext_log_set_level(EXT_LOG_DEBUG);
    for (int i = 0; i < 100; i++) {
        ext_log(EXT_LOG_INFO, "bound", NULL);
        ext_log(EXT_LOG_DEBUG, "filter", NULL);
    }
    assert_int_equal(count_lines(f, "bound", NULL), 100);
    assert_int_equal(count_lines(f, "filter", NULL), 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_log_warn_flood_is_rate_limited, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_limit_is_per_message_and_second, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_flush_writes_the_pending_summaries, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_log_info_and_debug_are_not_limited, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
