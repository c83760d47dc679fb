/* test_json_scan.c -- the strict JSON cursor (extender/json_scan.c) and the one-pass decoding
 * of ExtenderArgs built on it (extender/ext_codec.c).
 *
 * Edge cases of the grammar, each checked for the expected verdict and against Jansson through
 * tests/support/ext_args_ref.c: escapes and surrogate pairs, UTF-8, control characters and NUL
 * bytes, nesting at Jansson's limit, the number grammar and Jansson's ranges (int64, reals up to
 * the exact overflow bound), trailing bytes, truncation. Then the differential tests: every
 * fixture of tests/fixtures/extender, a few thousand generated ExtenderArgs bodies and many
 * mutations of them must give the same verdict as json_loadb, and ext_args_decode must read from
 * each what the tree walk of the reference reads (names, byte ranges, errors word for word).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"
#include "lt_test_slurp.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "ext_args_ref.h"
#include "ext_codec.h"
#include "json_scan.h"
#include "lt_mem.h"
#include "lt_rng.h"

#ifndef EXT_FIXTURES
#error "EXT_FIXTURES must name tests/fixtures/extender"
#endif

/* Fails the test unless the scanner and the reference (Jansson) agree on s[0..len), both as a
 * document and as an ExtenderArgs body. */
static void agree(const char *s, size_t len, const char *what)
{
    char why[512];

    if (ext_ref_check_json(s, len, why, sizeof(why)) != 0)
        fail_msg("%s: ext_json_check disagrees with Jansson: %s", what, why);
    if (ext_ref_check_args(s, len, why, sizeof(why)) != 0)
        fail_msg("%s: ext_args_decode disagrees with the reference: %s", what, why);
}

struct jcase {
    const char *text;
    size_t len; /* 0: strlen(text) */
    bool ok;    /* ext_json_check accepts it */
};

#define OK(s)                                                                                      \
    {                                                                                              \
        s, sizeof(s) - 1, true                                                                     \
    }
#define BAD(s)                                                                                     \
    {                                                                                              \
        s, sizeof(s) - 1, false                                                                    \
    }

/* Runs the cases: verdict as listed, and the same as Jansson's. */
static void run_cases(const struct jcase *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct lt_err err;
        int rc;

        lt_err_init(&err, NULL);
        rc = ext_json_check(c[i].text, c[i].len, NULL, &err);
        if ((rc == 0) != c[i].ok)
            fail_msg("case %zu '%.*s': %s", i, (int)c[i].len, c[i].text,
                     rc == 0 ? "accepted" : err.text);
        if (rc < 0 && (rc != LT_EPARSE || err.code != rc || err.line < 1 || err.column < 1))
            fail_msg("case %zu: error %d at %" PRId64 ":%d", i, rc, err.line, err.column);
        agree(c[i].text, c[i].len, c[i].text);
    }
}

static void test_escapes_and_surrogate_pairs(void **state)
{
    static const struct jcase c[] = {
        OK("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]"),
        OK("[\"\\u00e9\\u20AC\\uFFFF\"]"),
        OK("[\"\\ud83d\\ude00\"]"), /* U+1F600 */
        OK("[\"\\uD83D\\uDE00x\"]"),
        OK("{\"\\ud800\\udc00\":1}"), /* in a key too */
        BAD("[\"\\ud83d\"]"),         /* high surrogate alone */
        BAD("[\"\\ud83dx\"]"),
        BAD("[\"\\ud83d\\u0041\"]"), /* followed by a non-low escape */
        BAD("[\"\\ud83d\\n\"]"),
        BAD("[\"\\ude00\"]"), /* low surrogate alone */
        BAD("[\"\\ude00\\ud83d\"]"),
        BAD("[\"\\u0000\"]"), /* Jansson needs JSON_ALLOW_NUL */
        BAD("{\"a\\u0000\":1}"),
        BAD("[\"\\u00\"]"),
        BAD("[\"\\u00e\"]"),
        BAD("[\"\\uZZZZ\"]"),
        BAD("[\"\\x41\"]"),
        BAD("[\"\\'\"]"),
        BAD("[\"\\"),
        BAD("[\"\\u12"),
    };
    (void)state;
    run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_utf8_is_checked(void **state)
{
    static const struct jcase c[] = {
        OK("[\"\xc2\x80\xdf\xbf\"]"),
        OK("[\"\xe0\xa0\x80\xef\xbf\xbf\xee\x80\x80\"]"),
        OK("[\"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"]"),
        OK("[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]"),
        OK("[\"\x7f\"]"),  /* DEL is not a control character in JSON */
        BAD("[\"\xc3\"]"), /* cut sequence */
        BAD("[\"\xe2\x82\"]"),
        BAD("[\"\xc0\x80\"]"), /* overlong */
        BAD("[\"\xc1\xbf\"]"),
        BAD("[\"\xe0\x80\x80\"]"),
        BAD("[\"\xe0\x9f\xbf\"]"),
        BAD("[\"\xf0\x8f\xbf\xbf\"]"),
        BAD("[\"\xed\xa0\x80\"]"), /* a surrogate */
        BAD("[\"\xed\xbf\xbf\"]"),
        BAD("[\"\xf4\x90\x80\x80\"]"), /* above U+10FFFF */
        BAD("[\"\xf5\x80\x80\x80\"]"),
        BAD("[\"\xff\"]"),
        BAD("[\"\x80\"]"), /* a lone continuation byte */
        BAD("[\"\xc3\x28\"]"),
        BAD("[\xc3\xa9]"),     /* outside a string */
        BAD("\xef\xbb\xbf{}"), /* a byte order mark */
        BAD("[\"\x01\"]"),     /* raw control characters */
        BAD("[\"\x1f\"]"),
        BAD("[\"a\nb\"]"),
        BAD("[\"\t\"]"),
    };
    (void)state;
    run_cases(c, sizeof(c) / sizeof(c[0]));
}

static void test_nul_bytes(void **state)
{
    static const struct jcase c[] = {
        BAD("[\"a\0b\"]"), BAD("\0{}"),        BAD("{}\0"),    BAD("[\0]"),
        BAD("[1,\0 2]"),   BAD("{\"a\"\0:1}"), BAD("[1\0\0]"),
    };
    /* Jansson skips a NUL right after a number or literal and accepts these; the cursor
     * refuses them, as RFC 8259 and Go do (json_scan.h). agree() checks the exception. */
    static const char *const skipped[] = {"[1\0]", "[true\0]", "{\"a\":null\0}", "[-0.5e3\0,2]"};
    static const size_t skipped_len[] = {4, 7, 11, 11};
    struct lt_err err;

    (void)state;
    run_cases(c, sizeof(c) / sizeof(c[0]));
    for (size_t i = 0; i < 4; i++) {
        json_t *j = json_loadb(skipped[i], skipped_len[i], 0, NULL);

        assert_non_null(j); /* if Jansson stops skipping them, this exception can go */
        json_decref(j);
        lt_err_init(&err, NULL);
        assert_int_equal(ext_json_check(skipped[i], skipped_len[i], NULL, &err), LT_EPARSE);
        assert_non_null(strstr(err.text, "NUL byte outside a string at byte"));
        agree(skipped[i], skipped_len[i], "skipped NUL");
    }
    lt_err_init(&err, NULL);
    assert_int_equal(ext_json_check("[1\0]", 4, NULL, &err), LT_EPARSE);
    assert_string_equal(err.text, "NUL byte outside a string at byte 2");
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 3);
}

/* Strings are scanned 16 and 8 bytes at a time: every special byte at every offset of strings
 * up to 40 bytes long, in a key and in a value, gives Jansson's verdict. */
static void test_string_runs_at_every_offset(void **state)
{
    static const char *const specials[] = {"\\\"", "\\u00e9", "\xc3\xa9", "\xf0\x9f\x98\x80",
                                           "\x01", "\x1f",    "\xff",     "\xe2\x82",
                                           "\"",   "\x7f",    "\\",       "\xed\xa0\x80"};
    char buf[128], pad[48];
    size_t n_ok = 0;

    (void)state;
    memset(pad, 'a', sizeof(pad));
    for (size_t len = 0; len <= 40; len++) {
        for (size_t k = 0; k <= len; k++) {
            for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
                int w = snprintf(buf, sizeof(buf), "{\"%.*s%s%.*s\":[\"%.*s%s%.*s\"]}", (int)k, pad,
                                 specials[i], (int)(len - k), pad, (int)(len - k), pad, specials[i],
                                 (int)k, pad);

                assert_true(w > 0 && (size_t)w < sizeof(buf));
                n_ok += ext_json_check(buf, (size_t)w, NULL, NULL) == 0;
                agree(buf, (size_t)w, buf);
            }
        }
    }
    assert_true(n_ok > 3000); /* the valid specials pass at every offset */
}

/* n nested arrays, with `inner` (may be "") in the middle. */
static char *nested(size_t n, const char *inner, size_t *len)
{
    size_t k = strlen(inner);
    char *s = lt_malloc(2 * n + k + 1);

    assert_non_null(s);
    memset(s, '[', n);
    memcpy(s + n, inner, k);
    memset(s + n + k, ']', n);
    *len = 2 * n + k;
    s[*len] = '\0';
    return s;
}

/* Jansson counts every value, scalars included: 2,048 empty arrays nest, a number inside 2,048
 * arrays is one too deep. */
static void test_nesting_stops_where_jansson_does(void **state)
{
    static const struct {
        size_t n;
        const char *inner;
        bool ok;
    } c[] = {{EXT_JSON_MAX_DEPTH, "", true},
             {EXT_JSON_MAX_DEPTH + 1, "", false},
             {EXT_JSON_MAX_DEPTH - 1, "1", true},
             {EXT_JSON_MAX_DEPTH, "1", false},
             {EXT_JSON_MAX_DEPTH - 1, "{}", true},
             {EXT_JSON_MAX_DEPTH - 1, "{\"a\":1}", false},
             {100000, "", false}};
    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        size_t len;
        char *s = nested(c[i].n, c[i].inner, &len);

        assert_int_equal(ext_json_check(s, len, NULL, NULL) == 0, c[i].ok);
        agree(s, len, "nesting");
        lt_free(s);
    }
}

/* The digits of 2^1024 - 2^970, the smallest decimal strtod rounds to infinity. */
#define OVF                                                                                        \
    "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797" \
    "7"                                                                                            \
    "58720709633028641669288791094655554785194040263065748867150582068190890200070838367627385484" \
    "5"                                                                                            \
    "81771153176447573027006985557136695962284291481986083493647529271907416844436551070434271155" \
    "9"                                                                                            \
    "699508093042880177904174497792"
#define BELOW_OVF                                                                                  \
    "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797" \
    "7"                                                                                            \
    "58720709633028641669288791094655554785194040263065748867150582068190890200070838367627385484" \
    "5"                                                                                            \
    "81771153176447573027006985557136695962284291481986083493647529271907416844436551070434271155" \
    "9"                                                                                            \
    "699508093042880177904174497791"

static void test_numbers_follow_the_grammar_and_janssons_ranges(void **state)
{
    static const struct jcase c[] = {
        OK("[0,-0,1,-1,10,1.5,-1.5,0.0,-0.0e0,1e5,1E+5,1e-5,123456789]"),
        OK("[9223372036854775807,-9223372036854775808]"),
        OK("[1234567890123456789.0,12345678901234567890e0]"), /* reals: no int64 limit */
        OK("[1.7976931348623157e308,-1.7976931348623158e308]"),
        OK("[" BELOW_OVF ".0]"),
        OK("[" BELOW_OVF "9999e-4]"),
        OK("[0." BELOW_OVF "e309]"),
        OK("[0.001e311,1e-400,-1e-99999999999999999999,0e99999999999999999999]"),
        OK("[0.000000e400]"),
        BAD("[9223372036854775808]"),
        BAD("[-9223372036854775809]"),
        BAD("[12345678901234567890]"),
        BAD("[1e309]"),
        BAD("[-1e309]"),
        BAD("[1.7976931348623159e308]"),
        BAD("[" OVF "]"),   /* an integer: too big for int64 anyway */
        BAD("[" OVF ".0]"), /* exactly halfway to 2^1024: rounds to infinity */
        BAD("[" OVF "00000e-5]"),
        BAD("[0.1e310]"),
        BAD("[100e307]"),
        BAD("[1e99999999999999999999]"),
        BAD("[01]"),
        BAD("[-01]"),
        BAD("[00]"),
        BAD("[1.]"),
        BAD("[.5]"),
        BAD("[-]"),
        BAD("[+1]"),
        BAD("[1e]"),
        BAD("[1e+]"),
        BAD("[1.e5]"),
        BAD("[--1]"),
        BAD("[0x10]"),
        BAD("[1.5.3]"),
        BAD("[Infinity]"),
        BAD("[NaN]"),
        BAD("[1 2]"),
    };
    (void)state;
    run_cases(c, sizeof(c) / sizeof(c[0]));
    /* The overflow bound is exactly strtod's. */
    assert_false(isinf(strtod(BELOW_OVF ".0", NULL)));
    assert_true(isinf(strtod(OVF ".0", NULL)));
}

static void test_structure_literals_and_trailing_bytes(void **state)
{
    static const struct jcase c[] = {
        OK("{}"),
        OK("[]"),
        OK(" \t\r\n{ \"a\" : [ true , false , null ] , \"b\" : { } } \n "),
        OK("{\"a\":1,\"a\":2}"), /* duplicate keys: Jansson keeps the last */
        BAD(""),
        BAD("   "),
        BAD("1"),
        BAD("\"a\""),
        BAD("null"),
        BAD("{} x"),
        BAD("{}{}"),
        BAD("[1] ]"),
        BAD("[1,]"),
        BAD("[,1]"),
        BAD("[,]"),
        BAD("{\"a\":1,}"),
        BAD("{,}"),
        BAD("{\"a\"}"),
        BAD("{\"a\" 1}"),
        BAD("{a:1}"),
        BAD("{'a':1}"),
        BAD("{\"a\":1 \"b\":2}"),
        BAD("{1:2}"),
        BAD("[tru]"),
        BAD("[truex]"),
        BAD("[nul]"),
        BAD("[True]"),
        BAD("[true1]"),
        BAD("[\"a\" \"b\"]"),
        BAD("{\"a\":}"),
        BAD("[}"),
        BAD("{]"),
    };
    (void)state;
    run_cases(c, sizeof(c) / sizeof(c[0]));
}

/* Every proper prefix of a document is refused, at the end of the text or before. */
static void test_truncated_documents_are_refused(void **state)
{
    const char *doc = "{\"Pod\":{\"metadata\":{\"name\":\"p\\u00e9\"}},\"Nodes\":{\"items\":[{"
                      "\"metadata\":{\"name\":\"n\xc3\xa9\"},\"x\":[1.5e3,-2,true,null]}]},"
                      "\"NodeNames\":[\"\\ud83d\\ude00\"]}";
    size_t len = strlen(doc);

    (void)state;
    assert_int_equal(ext_json_check(doc, len, NULL, NULL), 0);
    for (size_t cut = 0; cut < len; cut++) {
        struct lt_err err;

        lt_err_init(&err, NULL);
        assert_int_equal(ext_json_check(doc, cut, NULL, &err), LT_EPARSE);
        agree(doc, cut, "prefix");
    }
}

/* Messages: what, at which byte, with the line and column of the character. */
static void test_errors_name_line_column_and_byte(void **state)
{
    const char *doc = "{\n  \"caf\xc3\xa9\": [1, 2,\n   tru]\n}";
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(ext_json_check(doc, strlen(doc), NULL, &err), LT_EPARSE);
    assert_string_equal(err.text, "invalid literal at byte 23");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 4);
    lt_err_init(&err, NULL);
    assert_int_equal(ext_json_check("{\"a\":[1,2]", 10, NULL, &err), LT_EPARSE);
    assert_string_equal(err.text, "unexpected end of input at byte 10");
}

/* Keys are compared once unescaped; strings unescape to UTF-8. */
static void test_strings_unescape(void **state)
{
    const char *doc = "[\"it\\u0065ms\",\"items\",\"item\",\"\\u0069tems\\u0000\","
                      "\"a\\n\\\"\\/\\u00e9\\ud83d\\ude00\"]";
    struct ext_jscan sc;
    struct ext_jval arr, v[5];
    char out[64];
    bool first = true;
    size_t n = 0, w;

    (void)state;
    ext_jscan_init(&sc, doc, strlen(doc));
    assert_int_equal(ext_jscan_peek(&sc), '[');
    assert_int_equal(ext_jscan_open(&sc, 1, &arr), 0);
    while (n < 5 && ext_jscan_element(&sc, &first, &arr) == 1) {
        if (ext_jscan_value(&sc, 2, &v[n]) != 0)
            break; /* the 4th element has \u0000: refused */
        n++;
    }
    assert_int_equal(n, 3);
    assert_true(v[0].esc && ext_jscan_str_is(&sc, &v[0], "items"));
    assert_true(!v[1].esc && ext_jscan_str_is(&sc, &v[1], "items"));
    assert_false(ext_jscan_str_is(&sc, &v[2], "items"));
    assert_string_equal(sc.err_what, "\\u0000 in a string");

    doc = "[\"a\\n\\\"\\/\\u00e9\\ud83d\\ude00\"]";
    ext_jscan_init(&sc, doc, strlen(doc));
    assert_int_equal(ext_json_check(doc, strlen(doc), &arr, NULL), 0);
    first = true;
    assert_int_equal(ext_jscan_open(&sc, 1, &arr), 0);
    assert_int_equal(ext_jscan_element(&sc, &first, &arr), 1);
    assert_int_equal(ext_jscan_value(&sc, 2, &v[0]), 0);
    w = ext_jscan_unescape(&sc, &v[0], out);
    assert_true(w <= v[0].len);
    assert_int_equal(w, 10);
    assert_memory_equal(out, "a\n\"/\xc3\xa9\xf0\x9f\x98\x80", 10);
}

/* ------------------------------------------------------------------------------------------
 * Differential: fixtures, generated bodies, mutations
 */

/* Calls fn on every regular file under dir (recursively); returns how many. */
static size_t each_file(const char *dir, void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[1024];
        struct stat st;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            n += each_file(path, fn);
        } else {
            fn(path);
            n++;
        }
    }
    closedir(d);
    return n;
}

static void check_fixture(const char *path)
{
    size_t len = 0;
    char *s = slurp(path, &len);

    assert_non_null(s);
    agree(s, len, path);
    lt_free(s);
}

static void test_fixtures_agree_with_jansson(void **state)
{
    (void)state;
    assert_true(each_file(EXT_FIXTURES, check_fixture) >= 40);
}

/* A growable string for the generator. */
struct gen {
    char *s;
    size_t len, cap;
    struct lt_rng rng;
};

static void put(struct gen *g, const char *s, size_t n)
{
    if (g->len + n + 1 > g->cap) {
        size_t cap = g->cap ? g->cap : 1024;
        char *p;

        while (cap < g->len + n + 1)
            cap *= 2;
        p = lt_reallocarray(g->s, cap, 1);
        assert_non_null(p);
        g->s = p;
        g->cap = cap;
    }
    memcpy(g->s + g->len, s, n);
    g->len += n;
    g->s[g->len] = '\0';
}

static void puts_(struct gen *g, const char *s)
{
    put(g, s, strlen(s));
}

static bool chance(struct gen *g, unsigned pct)
{
    return lt_rng_below(&g->rng, 100) < pct;
}

static const char *pick(struct gen *g, const char *const *list, size_t n)
{
    return list[lt_rng_below(&g->rng, n)];
}

#define PICK(g, list) pick(g, list, sizeof(list) / sizeof(list[0]))

static void ws(struct gen *g)
{
    static const char *const w[] = {" ", "\n", "\t", "\r\n", "  "};

    if (chance(g, 5))
        puts_(g, PICK(g, w));
}

/* The inside of a string: plain, escaped, non-ASCII, sometimes long. */
static void gen_chars(struct gen *g)
{
    static const char *const parts[] = {"node-1",
                                        "a",
                                        "\\n",
                                        "\\\"",
                                        "\\\\",
                                        "\\/",
                                        "\\u00e9",
                                        "\\u0041",
                                        "\xc3\xa9",
                                        "\xe2\x82\xac",
                                        "\xf0\x9f\x98\x80",
                                        "\\ud83d\\ude00",
                                        "x.y/z",
                                        " ",
                                        "\\t",
                                        "<&>",
                                        "\\u2028",
                                        "\x7f",
                                        "\\uFFFF",
                                        "",
                                        "name"};
    size_t n = lt_rng_below(&g->rng, 4);

    if (chance(g, 3))
        n = 60 + lt_rng_below(&g->rng, 40); /* sometimes past 253 bytes */
    for (size_t i = 0; i < n; i++)
        puts_(g, PICK(g, parts));
}

static void gen_string(struct gen *g)
{
    puts_(g, "\"");
    gen_chars(g);
    puts_(g, "\"");
}

static void gen_value(struct gen *g, int depth);

static void gen_number(struct gen *g)
{
    static const char *const nums[] = {"0",
                                       "-0",
                                       "1",
                                       "-1",
                                       "42",
                                       "1.5",
                                       "-2.25e3",
                                       "1e-400",
                                       "1E+2",
                                       "0.0",
                                       "9223372036854775807",
                                       "-9223372036854775808",
                                       "1.7976931348623157e308",
                                       "3",
                                       "100"};
    char buf[32];

    if (chance(g, 70)) {
        puts_(g, PICK(g, nums));
    } else {
        snprintf(buf, sizeof(buf), "%" PRIu64, lt_rng_below(&g->rng, 1000000));
        puts_(g, buf);
    }
}

static void gen_object(struct gen *g, int depth)
{
    static const char *const keys[] = {"metadata", "name",   "spec", "status",   "items",
                                       "a",        "labels", "Pod",  "x\\u0079", "uid"};
    size_t n = lt_rng_below(&g->rng, 4);

    puts_(g, "{");
    for (size_t i = 0; i < n; i++) {
        puts_(g, i ? "," : "");
        ws(g);
        puts_(g, "\"");
        puts_(g, PICK(g, keys));
        puts_(g, "\"");
        ws(g);
        puts_(g, ":");
        gen_value(g, depth + 1);
    }
    puts_(g, "}");
}

static void gen_value(struct gen *g, int depth)
{
    size_t k = lt_rng_below(&g->rng, depth > 4 ? 6 : 8);

    ws(g);
    switch (k) {
    case 0:
        puts_(g, "null");
        break;
    case 1:
        puts_(g, chance(g, 50) ? "true" : "false");
        break;
    case 2:
    case 3:
        gen_number(g);
        break;
    case 4:
    case 5:
        gen_string(g);
        break;
    case 6: {
        size_t n = lt_rng_below(&g->rng, 4);

        puts_(g, "[");
        for (size_t i = 0; i < n; i++) {
            puts_(g, i ? "," : "");
            gen_value(g, depth + 1);
        }
        puts_(g, "]");
        break;
    }
    default:
        gen_object(g, depth);
        break;
    }
    ws(g);
}

/* A node: mostly well formed, with the name spelled in the ways JSON allows. */
static void gen_node(struct gen *g)
{
    if (chance(g, 5)) {
        gen_value(g, 3);
        return;
    }
    puts_(g, "{");
    if (chance(g, 30)) {
        puts_(g, "\"spec\":");
        gen_value(g, 4);
        puts_(g, ",");
    }
    puts_(g, chance(g, 10) ? "\"m\\u0065tadata\":" : "\"metadata\":");
    if (chance(g, 8)) {
        gen_value(g, 4);
    } else {
        puts_(g, "{");
        if (chance(g, 20)) {
            puts_(g, "\"uid\":");
            gen_string(g);
            puts_(g, ",");
        }
        puts_(g, chance(g, 10) ? "\"nam\\u0065\":" : "\"name\":");
        if (chance(g, 8))
            gen_value(g, 5);
        else
            gen_string(g);
        if (chance(g, 10)) { /* a repeated name: the last counts */
            puts_(g, ",\"name\":");
            gen_string(g);
        }
        puts_(g, "}");
    }
    if (chance(g, 10)) { /* a repeated metadata */
        puts_(g, ",\"metadata\":");
        gen_value(g, 4);
    }
    if (chance(g, 50)) {
        puts_(g, ",\"status\":");
        gen_object(g, 3);
    }
    puts_(g, "}");
}

/* An ExtenderArgs-like body: the fields in varied spellings, order, repetition and types. */
static void gen_args(struct gen *g)
{
    static const char *const pod_keys[] = {"Pod", "pod", "POD", "P\\u006fd", "Po\\u0044"};
    static const char *const nodes_keys[] = {"Nodes", "nodes", "NODES", "Node\\u0073",
                                             "Node\xc5\xbf"};
    static const char *const names_keys[] = {"NodeNames", "nodenames", "nodeNames",
                                             "NodeName\xc5\xbf", "NodeNam\\u0065s"};
    size_t n = 1 + lt_rng_below(&g->rng, 5);

    g->len = 0;
    if (chance(g, 2)) {
        gen_value(g, 0);
        return;
    }
    puts_(g, "{");
    for (size_t i = 0; i < n; i++) {
        size_t what = lt_rng_below(&g->rng, 10);

        puts_(g, i ? "," : "");
        ws(g);
        puts_(g, "\"");
        if (what < 3) {
            puts_(g, PICK(g, pod_keys));
            puts_(g, "\":");
            if (chance(g, 85))
                puts_(g, "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"priority\":7,"
                         "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"250m\"}}}]}}");
            else
                gen_value(g, 1);
        } else if (what < 6) {
            size_t items = lt_rng_below(&g->rng, 6);

            puts_(g, PICK(g, nodes_keys));
            puts_(g, "\":");
            if (chance(g, 10)) {
                gen_value(g, 1);
                continue;
            }
            puts_(g, "{\"metadata\":{},\"items\":");
            if (chance(g, 8)) {
                gen_value(g, 2);
            } else {
                puts_(g, "[");
                for (size_t k = 0; k < items; k++) {
                    puts_(g, k ? "," : "");
                    ws(g);
                    gen_node(g);
                }
                puts_(g, "]");
            }
            puts_(g, "}");
        } else if (what < 9) {
            size_t names = lt_rng_below(&g->rng, 6);

            puts_(g, PICK(g, names_keys));
            puts_(g, "\":");
            if (chance(g, 10)) {
                gen_value(g, 1);
                continue;
            }
            puts_(g, "[");
            for (size_t k = 0; k < names; k++) {
                puts_(g, k ? "," : "");
                if (chance(g, 8))
                    gen_value(g, 3);
                else
                    gen_string(g);
            }
            puts_(g, "]");
        } else {
            puts_(g, "Extra\":");
            gen_value(g, 1);
        }
    }
    ws(g);
    puts_(g, "}");
    ws(g);
}

/* Changes g->s in place: a byte replaced, deleted, inserted or duplicated, or a cut. */
static void mutate(struct gen *g)
{
    static const char interesting[] = "\"\\{}[],:0e-+.nu \n\x00\x80\xc3\xed\xf4\x01/";
    size_t at = g->len ? lt_rng_below(&g->rng, g->len) : 0;
    char c = chance(g, 70) ? interesting[lt_rng_below(&g->rng, sizeof(interesting) - 1)]
                           : (char)lt_rng_below(&g->rng, 256);

    switch (lt_rng_below(&g->rng, 5)) {
    case 0:
        if (g->len)
            g->s[at] = c;
        break;
    case 1:
        if (g->len) {
            memmove(g->s + at, g->s + at + 1, g->len - at - 1);
            g->len--;
        }
        break;
    case 2:
        put(g, "", 1); /* room for one more */
        g->len--;
        memmove(g->s + at + 1, g->s + at, g->len - at);
        g->s[at] = c;
        g->len++;
        break;
    case 3:
        g->len = at;
        break;
    default:
        if (g->len) {
            size_t n = 1 + lt_rng_below(&g->rng, 16);
            char chunk[16];

            n = n > g->len - at ? g->len - at : n;
            memcpy(chunk, g->s + at, n);
            put(g, chunk, n);
        }
        break;
    }
}

/* If body decodes in full-Nodes mode, the filter answer (every other node kept) must be JSON
 * whose Nodes.items are, object for object, the kept nodes (agree() has checked that each
 * node's bytes are the reference's node). */
static void check_filter_echo(const char *body, size_t len, const char *what)
{
    struct ext_args a;
    struct ext_buf out;
    struct ext_filter_verdict *v;
    json_t *ans, *items;
    size_t k = 0;

    if (ext_args_decode(&a, body, len, NULL) != 0 || a.names_mode) {
        ext_args_release(&a);
        return;
    }
    v = lt_calloc(a.n_nodes + 1, sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < a.n_nodes; i++)
        v[i] = (struct ext_filter_verdict){i % 2 ? EXT_FAIL : EXT_PASS, "no"};
    ext_buf_init(&out);
    assert_int_equal(ext_filter_answer(&a, v, NULL, &out, NULL), 0);
    ans = json_loadb(out.data, out.len, 0, NULL);
    if (ans == NULL)
        fail_msg("%s: the filter answer is not JSON: %.200s", what, out.data);
    items = json_object_get(json_object_get(ans, "Nodes"), "items");
    assert_int_equal(json_array_size(items), (a.n_nodes + 1) / 2);
    for (size_t i = 0; i < a.n_nodes; i += 2) {
        json_t *node = json_loadb(a.nodes[i].raw.json, a.nodes[i].raw.len, 0, NULL);

        if (node == NULL || !json_equal(node, json_array_get(items, k++)))
            fail_msg("%s: echoed node %zu differs", what, i);
        json_decref(node);
    }
    json_decref(ans);
    ext_buf_release(&out);
    lt_free(v);
    ext_args_release(&a);
}

static void test_generated_and_mutated_bodies_agree_with_jansson(void **state)
{
    struct gen g = {NULL, 0, 0, {{0}}};
    size_t accepted = 0, with_nodes = 0;

    (void)state;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        char label[64];
        json_t *j;

        lt_rng_init(&g.rng, seed, 0);
        gen_args(&g);
        snprintf(label, sizeof(label), "generated body %" PRIu64, seed);
        agree(g.s, g.len, label);
        check_filter_echo(g.s, g.len, label);
        j = json_loadb(g.s, g.len, 0, NULL);
        accepted += j != NULL;
        with_nodes += j != NULL && strstr(g.s, "\"items\":[{") != NULL;
        json_decref(j);
        for (int m = 0; m < 8; m++) {
            mutate(&g);
            snprintf(label, sizeof(label), "body %" PRIu64 " mutation %d", seed, m);
            agree(g.s, g.len, label);
        }
    }
    /* The generator must mostly make valid JSON, or it tests only the error path. */
    assert_true(accepted > 2500);
    assert_true(with_nodes > 800);
    lt_free(g.s);
}

/* Large bodies: a full-Nodes request at the node limit, one past it, and long lists. */
static void test_limits_agree_with_jansson(void **state)
{
    struct gen g = {NULL, 0, 0, {{0}}};

    (void)state;
    for (size_t n = EXT_MAX_NODES; n <= EXT_MAX_NODES + 1; n++) {
        g.len = 0;
        puts_(&g, "{\"Pod\":{},\"Nodes\":{\"items\":[");
        for (size_t i = 0; i < n; i++)
            puts_(&g, i ? ",{\"metadata\":{\"name\":\"n\"}}" : "{}");
        puts_(&g, "]},\"NodeNames\":[null,\"a\"]}");
        agree(g.s, g.len, "node limit");
    }
    lt_free(g.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes_and_surrogate_pairs),
        cmocka_unit_test(test_utf8_is_checked),
        cmocka_unit_test(test_string_runs_at_every_offset),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_nesting_stops_where_jansson_does),
        cmocka_unit_test(test_numbers_follow_the_grammar_and_janssons_ranges),
        cmocka_unit_test(test_structure_literals_and_trailing_bytes),
        cmocka_unit_test(test_truncated_documents_are_refused),
        cmocka_unit_test(test_errors_name_line_column_and_byte),
        cmocka_unit_test(test_strings_unescape),
        cmocka_unit_test(test_fixtures_agree_with_jansson),
        cmocka_unit_test(test_generated_and_mutated_bodies_agree_with_jansson),
        cmocka_unit_test(test_limits_agree_with_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
