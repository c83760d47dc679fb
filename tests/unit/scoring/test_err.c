/* test_err.c -- struct lt_err: recording, first error wins, NULL tolerance, left-truncated
 * sources, and the code tables generated from LT_ERRNO_MAP.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <string.h>

#include "lt_err.h"

static void test_err_init_clears_everything_and_sets_source(void **state)
{
    struct lt_err err;

    (void)state;
    memset(&err, 0x5a, sizeof(err));
    lt_err_init(&err, "trace/part-00001.csv");
    assert_int_equal(err.code, 0);
    assert_int_equal(err.line, 0);
    assert_int_equal(err.column, 0);
    assert_string_equal(err.text, "");
    assert_string_equal(err.source, "trace/part-00001.csv");

    lt_err_init(&err, NULL);
    assert_string_equal(err.source, "");
}

static void test_err_init_accepts_null_err(void **state)
{
    (void)state;
    lt_err_init(NULL, "x");
    lt_err_set_source(NULL, "y");
}

static void test_err_set_records_code_line_column_and_text(void **state)
{
    struct lt_err err;
    int rc;

    (void)state;
    lt_err_init(&err, "<request>");
    rc = lt_err_set(&err, LT_EPARSE, 1201, 4, "field '%s' is not an integer near '%s'",
                    "machine ID", "x17");
    assert_int_equal(rc, LT_EPARSE);
    assert_int_equal(err.code, LT_EPARSE);
    assert_int_equal(err.line, 1201);
    assert_int_equal(err.column, 4);
    assert_string_equal(err.text, "field 'machine ID' is not an integer near 'x17'");
    assert_string_equal(err.source, "<request>");
}

static void test_err_set_keeps_lines_beyond_32_bits(void **state)
{
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    (void)lt_err_set(&err, LT_ERANGE, INT64_C(5000000000), 2, "big file");
    assert_true(err.line == INT64_C(5000000000));
}

static void test_err_first_error_wins(void **state)
{
    struct lt_err err;
    int rc;

    (void)state;
    lt_err_init(&err, "a.csv");
    (void)lt_err_set(&err, LT_EPARSE, 3, 7, "first %d", 1);
    rc = lt_err_set(&err, LT_ENOMEM, 9, 9, "second");
    assert_int_equal(rc, LT_ENOMEM); /* the code passed is still returned */
    assert_int_equal(err.code, LT_EPARSE);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 7);
    assert_string_equal(err.text, "first 1");
}

static void test_err_set_with_null_err_returns_code(void **state)
{
    (void)state;
    assert_int_equal(lt_err_set(NULL, LT_EIO, 1, 2, "ignored %s", "text"), LT_EIO);
    assert_int_equal(lt_err_set(NULL, LT_EINVAL, 0, 0, "ignored"), LT_EINVAL);
}

static void test_err_set_truncates_long_text_and_terminates_it(void **state)
{
    char big[2 * LT_ERR_TEXT];
    struct lt_err err;

    (void)state;
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    lt_err_init(&err, NULL);
    (void)lt_err_set(&err, LT_EPARSE, 1, 1, "%s", big);
    assert_int_equal(strlen(err.text), LT_ERR_TEXT - 1);
    assert_int_equal(err.text[0], 'z');
    assert_int_equal(err.text[LT_ERR_TEXT - 2], 'z');
}

static void test_err_init_keeps_short_source_whole(void **state)
{
    char src[LT_ERR_SOURCE];
    struct lt_err err;

    (void)state;
    /* The longest source that fits: LT_ERR_SOURCE - 1 bytes, kept unchanged. */
    memset(src, 'a', sizeof(src) - 1);
    src[sizeof(src) - 1] = '\0';
    src[sizeof(src) - 2] = 'Z';
    lt_err_init(&err, src);
    assert_string_equal(err.source, src);
}

static void test_err_init_keeps_tail_of_long_source_with_dots(void **state)
{
    char src[LT_ERR_SOURCE + 120];
    char want[LT_ERR_SOURCE];
    const size_t tail = LT_ERR_SOURCE - 4; /* bytes of the original kept after "..." */
    size_t n;
    struct lt_err err;

    (void)state;
    /* A path longer than LT_ERR_SOURCE cycling through A..Z, so any misplaced byte shows. */
    for (size_t i = 0; i < sizeof(src) - 1; i++)
        src[i] = (char)('A' + (i % 26));
    src[sizeof(src) - 1] = '\0';
    n = strlen(src);
    memcpy(want, "...", 3);
    memcpy(want + 3, src + n - tail, tail + 1);

    memset(&err, 0x7f, sizeof(err));
    lt_err_init(&err, src);
    assert_int_equal(err.source[LT_ERR_SOURCE - 1], '\0');
    assert_int_equal(strlen(err.source), LT_ERR_SOURCE - 1);
    assert_memory_equal(err.source, "...", 3);
    assert_string_equal(err.source, want);
    /* The last character of the path is the last character kept. */
    assert_int_equal(err.source[LT_ERR_SOURCE - 2], src[n - 1]);
}

static void test_err_init_truncates_source_of_exactly_the_buffer_size(void **state)
{
    char src[LT_ERR_SOURCE + 1];
    struct lt_err err;

    (void)state;
    /* LT_ERR_SOURCE bytes do not fit with their NUL: the tail is kept. */
    memset(src, 'b', LT_ERR_SOURCE);
    src[0] = 'S';
    src[LT_ERR_SOURCE - 1] = 'E';
    src[LT_ERR_SOURCE] = '\0';
    lt_err_init(&err, src);
    assert_int_equal(strlen(err.source), LT_ERR_SOURCE - 1);
    assert_memory_equal(err.source, "...", 3);
    assert_int_equal(err.source[LT_ERR_SOURCE - 2], 'E');
    assert_null(strchr(err.source, 'S'));
}

static void test_err_set_source_keeps_recorded_error(void **state)
{
    struct lt_err err;

    (void)state;
    lt_err_init(&err, "part-00000.csv");
    (void)lt_err_set(&err, LT_EPARSE, 12, 3, "bad field");
    lt_err_set_source(&err, "part-00001.csv");
    assert_string_equal(err.source, "part-00001.csv");
    assert_int_equal(err.code, LT_EPARSE);
    assert_int_equal(err.line, 12);
    assert_int_equal(err.column, 3);
    assert_string_equal(err.text, "bad field");

    lt_err_set_source(&err, NULL);
    assert_string_equal(err.source, "");
    assert_int_equal(err.code, LT_EPARSE);
}

static void test_err_set_source_truncates_like_init(void **state)
{
    char src[3 * LT_ERR_SOURCE];
    struct lt_err a, b;

    (void)state;
    for (size_t i = 0; i < sizeof(src) - 1; i++)
        src[i] = (char)('a' + (i % 23));
    src[sizeof(src) - 1] = '\0';
    lt_err_init(&a, src);
    lt_err_init(&b, "short");
    lt_err_set_source(&b, src);
    assert_string_equal(a.source, b.source);
    assert_int_equal(strlen(b.source), LT_ERR_SOURCE - 1);
}

static void test_err_strerror_and_name_cover_every_code(void **state)
{
    static const struct {
        int code;
        const char *name;
        const char *msg;
    } want[] = {
        {LT_EINVAL, "LT_EINVAL", "invalid argument"},
        {LT_ENOMEM, "LT_ENOMEM", "out of memory"},
        {LT_EPARSE, "LT_EPARSE", "malformed input"},
        {LT_ERANGE, "LT_ERANGE", "value out of range"},
        {LT_ENOTFOUND, "LT_ENOTFOUND", "unknown name"},
        {LT_EINFEASIBLE, "LT_EINFEASIBLE", "linear program is infeasible"},
        {LT_EIO, "LT_EIO", "input/output error"},
    };
    size_t n_map = 0;

    (void)state;
    /* Count the map so that a new code without a row here fails the test. */
#define XX(name, val, msg) n_map++;
    LT_ERRNO_MAP(XX)
#undef XX
    assert_int_equal(n_map, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_string_equal(lt_err_name(want[i].code), want[i].name);
        assert_string_equal(lt_strerror(want[i].code), want[i].msg);
    }
    /* The values are part of the ABI. */
    assert_int_equal(LT_EINVAL, -1);
    assert_int_equal(LT_ENOMEM, -2);
    assert_int_equal(LT_EPARSE, -3);
    assert_int_equal(LT_ERANGE, -4);
    assert_int_equal(LT_ENOTFOUND, -5);
    assert_int_equal(LT_EINFEASIBLE, -6);
    assert_int_equal(LT_EIO, -7);
}

static void test_err_strerror_and_name_of_unknown_code(void **state)
{
    static const int unknown[] = {0, 1, -8, -100, 42};

    (void)state;
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_string_equal(lt_strerror(unknown[i]), "unknown error");
        assert_string_equal(lt_err_name(unknown[i]), "LT_E?");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err_init_clears_everything_and_sets_source),
        cmocka_unit_test(test_err_init_accepts_null_err),
        cmocka_unit_test(test_err_set_records_code_line_column_and_text),
        cmocka_unit_test(test_err_set_keeps_lines_beyond_32_bits),
        cmocka_unit_test(test_err_first_error_wins),
        cmocka_unit_test(test_err_set_with_null_err_returns_code),
        cmocka_unit_test(test_err_set_truncates_long_text_and_terminates_it),
        cmocka_unit_test(test_err_init_keeps_short_source_whole),
        cmocka_unit_test(test_err_init_keeps_tail_of_long_source_with_dots),
        cmocka_unit_test(test_err_init_truncates_source_of_exactly_the_buffer_size),
        cmocka_unit_test(test_err_set_source_keeps_recorded_error),
        cmocka_unit_test(test_err_set_source_truncates_like_init),
        cmocka_unit_test(test_err_strerror_and_name_cover_every_code),
        cmocka_unit_test(test_err_strerror_and_name_of_unknown_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
