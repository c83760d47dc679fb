/* jsonpath.c -- the JSON-path messages every lotus-sim JSON reader shares (cluster snapshots and
 * tasks, simulator/score/json_model.c; whatif's job file, simulator/whatif/job.c; SLA and
 * annotation files, simulator/cli/slafile.c).
 *
 * A file is parsed whole with Jansson (JSON_REJECT_DUPLICATES: a repeated key is a syntax error
 * with line and column) and walked by validators that pass the JSON path of each value
 * ("$.machines[3].capacity"); the first problem is reported as "PATH: what, got VALUE", with
 * the file as the error's source (lt_err_set_source); syntax errors keep Jansson's line and
 * column. Every object is checked for unknown keys (STYLE.md R7).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli/jsonpath.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* dst = at + "." + key (dst has SIM_JP_LEN bytes). Paths are built from our own keys and
 * bounded indexes, so they always fit (see SIM_JP_LEN). */
void sim_jp_key(char *dst, const char *at, const char *key)
{
    int w = snprintf(dst, SIM_JP_LEN, "%s.%s", at, key);

    assert(w > 0 && w < SIM_JP_LEN);
    if (w < 0 || w >= SIM_JP_LEN) /* cannot happen (see SIM_JP_LEN); keep the cut visible */
        memcpy(dst + SIM_JP_LEN - 4, "...", 4);
}

/* dst = at + "[" + i + "]" (dst has SIM_JP_LEN bytes). */
void sim_jp_index(char *dst, const char *at, size_t i)
{
    int w = snprintf(dst, SIM_JP_LEN, "%s[%zu]", at, i);

    assert(w > 0 && w < SIM_JP_LEN);
    if (w < 0 || w >= SIM_JP_LEN) /* cannot happen (see SIM_JP_LEN); keep the cut visible */
        memcpy(dst + SIM_JP_LEN - 4, "...", 4);
}

/* Records "AT: message" as error code on err. */
int sim_jp_bad(struct lt_err *err, int code, const char *at, const char *fmt, ...)
{
    char msg[LT_ERR_TEXT];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return lt_err_set(err, code, 0, 0, "%s: %s", at, msg);
}

/* A short description of v for "got ..." in messages: the value itself for scalars. */
static void describe(json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, size, "an object");
        break;
    case JSON_ARRAY:
        snprintf(buf, size, "an array");
        break;
    case JSON_STRING:
        snprintf(buf, size, "the string \"%.*s\"%s", SIM_JP_QUOTE, json_string_value(v),
                 json_string_length(v) > SIM_JP_QUOTE ? "..." : "");
        break;
    case JSON_INTEGER:
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(buf, size, "%.15g", json_real_value(v));
        break;
    case JSON_TRUE:
        snprintf(buf, size, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, size, "false");
        break;
    case JSON_NULL:
    default:
        snprintf(buf, size, "null");
        break;
    }
}

/* Reports that the value at `at` is not what was expected. */
int sim_jp_bad_value(struct lt_err *err, const char *at, const char *expected, json_t *v)
{
    char got[SIM_JP_QUOTE + 32];

    describe(v, got, sizeof(got));
    return sim_jp_bad(err, LT_EINVAL, at, "expected %s, got %s", expected, got);
}

static bool key_known(const char *key, const char *const *known, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (strcmp(key, known[k]) == 0)
            return true;
    }
    return false;
}

/* Checks that v is an object whose keys are all in known[0..n-1]. */
int sim_jp_object(json_t *v, const char *at, const char *const *known, size_t n, struct lt_err *err)
{
    const char *key;
    json_t *member;
    char list[LT_ERR_TEXT / 2];
    size_t used = 0;

    if (!json_is_object(v))
        return sim_jp_bad_value(err, at, "an object", v);
    json_object_foreach(v, key, member)
    {
        if (key_known(key, known, n))
            continue;
        list[0] = '\0';
        for (size_t k = 0; k < n && used < sizeof(list); k++)
            used +=
                (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", k ? ", " : "", known[k]);
        return sim_jp_bad(err, LT_EINVAL, at, "unknown key '%.*s' (known: %s)", SIM_JP_QUOTE, key,
                          list);
    }
    return 0;
}

/* The member key of object obj into *out (borrowed; NULL if absent and optional). */
int sim_jp_member(json_t *obj, const char *at, const char *key, bool required, json_t **out,
                  struct lt_err *err)
{
    *out = json_object_get(obj, key);
    if (*out == NULL && required)
        return sim_jp_bad(err, LT_EINVAL, at, "missing key '%s'", key);
    return 0;
}

/* A finite number, > 0 if positive, else >= 0. */
int sim_jp_number(json_t *v, const char *at, bool positive, double *out, struct lt_err *err)
{
    const char *expected = positive ? "a number > 0" : "a number >= 0";
    double x;

    if (!json_is_number(v))
        return sim_jp_bad_value(err, at, expected, v);
    x = json_number_value(v);
    if (!isfinite(x) || (positive ? !(x > 0.0) : !(x >= 0.0)))
        return sim_jp_bad_value(err, at, expected, v);
    *out = x;
    return 0;
}

/* An integer in [lo, hi]. */
int sim_jp_integer(json_t *v, const char *at, json_int_t lo, json_int_t hi, json_int_t *out,
                   struct lt_err *err)
{
    char expected[64];

    if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) {
        *out = json_integer_value(v);
        return 0;
    }
    if (lo == INT64_MIN && hi == INT64_MAX)
        snprintf(expected, sizeof(expected), "an integer");
    else if (hi == INT64_MAX)
        snprintf(expected, sizeof(expected), "an integer >= %" JSON_INTEGER_FORMAT, lo);
    else
        snprintf(expected, sizeof(expected),
                 "an integer in [%" JSON_INTEGER_FORMAT ", %" JSON_INTEGER_FORMAT "]", lo, hi);
    return sim_jp_bad_value(err, at, expected, v);
}

/* Parses the file at path; on failure err has the position (syntax) or the cause (I/O).
 * fopen + json_loadf rather than json_load_file, so that an unreadable file (a directory,
 * an I/O error) is reported with its errno instead of as malformed JSON. */
int sim_jp_load(const char *path, json_t **out, struct lt_err *err)
{
    json_error_t je;
    FILE *f;
    int rc = 0;

    lt_err_set_source(err, path);
    f = fopen(path, "rb");
    if (f == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open file: %s", strerror(errno));
    *out = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    if (*out == NULL && ferror(f))
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot read file: %s", strerror(errno));
    else if (*out == NULL && json_error_code(&je) == json_error_out_of_memory)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory parsing JSON");
    else if (*out == NULL)
        /* Jansson's column is that of the last character read: 0 right after a newline,
         * which lt_err would take for "no column". */
        rc = lt_err_set(err, LT_EPARSE, je.line > 0 ? je.line : 0,
                        je.line > 0 && je.column < 1 ? 1 : je.column, "%s", je.text);
    fclose(f);
    return rc;
}
