/* slafile.c -- SLA files and SLA values in JSON (slafile.h; docs/formats.md "SLA files").
 *
 * The object's keys become (key, value text) pairs for lt_sla_parse_kv, so a file and a SPEC
 * text go through one parser and one set of checks; the library says which pair an error is
 * about and the path is built from that.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli/slafile.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/jsonpath.h"
#include "lt_mem.h"

/* The most keys an SLA object has (example1's three; by-deadline's four), with margin. */
#define MAX_ITEMS 8
/* A value's text: numbers printed with %.17g; longer strings are refused by the parser. */
#define VALUE_LEN 64

bool sim_sla_name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n >= SIM_SLA_NAME)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static bool is_extra(const char *key, const char *const *extra, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, extra[i]) == 0)
            return true;
    return false;
}

int sim_sla_from_json(json_t *v, const char *at, const char *label, const char *const *extra,
                      size_t n_extra, struct lt_sla_spec *out, struct lt_err *err)
{
    const char *keys[MAX_ITEMS], *vals[MAX_ITEMS], *key, *kind;
    char text[MAX_ITEMS][VALUE_LEN], sub[SIM_JP_LEN];
    struct lt_err e2;
    json_t *m, *shape;
    size_t n = 0, bad;

    if (!json_is_object(v))
        return sim_jp_bad_value(err, at, "an SLA object", v);
    if (sim_jp_member(v, at, "shape", true, &shape, err) < 0)
        return err->code;
    sim_jp_key(sub, at, "shape");
    if (!json_is_string(shape))
        return sim_jp_bad_value(err, sub, "a string (by-deadline, cheap-and-simple, example1)",
                                shape);
    kind = json_string_value(shape);
    json_object_foreach(v, key, m)
    {
        if (strcmp(key, "shape") == 0 || is_extra(key, extra, n_extra))
            continue;
        sim_jp_key(sub, at, key);
        if (n == MAX_ITEMS)
            return sim_jp_bad(err, LT_EINVAL, sub, "too many keys (at most %d)", MAX_ITEMS);
        if (json_is_integer(m))
            snprintf(text[n], VALUE_LEN, "%" JSON_INTEGER_FORMAT, json_integer_value(m));
        else if (json_is_real(m))
            snprintf(text[n], VALUE_LEN, "%.17g", json_real_value(m));
        else if (json_is_string(m) && json_string_length(m) < VALUE_LEN)
            snprintf(text[n], VALUE_LEN, "%s", json_string_value(m));
        else
            return sim_jp_bad_value(err, sub, "a number or a time string (90s, 5m, 1h, 2x)", m);
        keys[n] = key;
        vals[n] = text[n];
        n++;
    }
    lt_err_init(&e2, NULL);
    if (lt_sla_parse_kv(label, kind, keys, vals, n, out, &bad, &e2) == 0)
        return 0;
    if (bad < n)
        sim_jp_key(sub, at, keys[bad]);
    else if (bad == n)
        sim_jp_key(sub, at, "shape");
    else
        snprintf(sub, sizeof(sub), "%s", at);
    return sim_jp_bad(err, e2.code, sub, "%s", e2.text);
}

int sim_sla_value(json_t *v, const char *at, const char *label, struct lt_sla_spec *out,
                  struct lt_err *err)
{
    struct lt_err e2;

    if (json_is_object(v))
        return sim_sla_from_json(v, at, label, NULL, 0, out, err);
    if (!json_is_string(v))
        return sim_jp_bad_value(err, at, "a SPEC string or an SLA object", v);
    lt_err_init(&e2, NULL);
    if (lt_sla_parse(json_string_value(v), out, &e2) == 0)
        return 0;
    return sim_jp_bad(err, e2.code, at, "%s", e2.text);
}

/* The i-th SLA of the file's array a into *s (names unique among the first i). */
static int one_sla(json_t *a, size_t i, struct sim_sla_named *s, struct lt_err *err)
{
    static const char *const extra[] = {"name"};
    char at[SIM_JP_LEN], sub[SIM_JP_LEN];
    json_t *o = json_array_get(a, i), *name;

    sim_jp_index(at, "$.slas", i);
    if (!json_is_object(o))
        return sim_jp_bad_value(err, at, "an SLA object", o);
    if (sim_jp_member(o, at, "name", true, &name, err) < 0)
        return err->code;
    sim_jp_key(sub, at, "name");
    if (!json_is_string(name) || !sim_sla_name_ok(json_string_value(name)))
        return sim_jp_bad_value(err, sub, "a name of 1..31 letters, digits, '_', '-', '.'", name);
    snprintf(s->name, sizeof(s->name), "%s", json_string_value(name));
    for (size_t k = 0; k < i; k++)
        if (strcmp(s[-(ptrdiff_t)(i - k)].name, s->name) == 0)
            return sim_jp_bad(err, LT_EINVAL, sub,
                              "the name '%s' is given twice (also $.slas[%zu])", s->name, k);
    return sim_sla_from_json(o, at, s->name, extra, 1, &s->spec, err);
}

int sim_sla_file_load(const char *path, struct sim_sla_named **out, size_t *n, struct lt_err *err)
{
    static const char *const top[] = {"slas"};
    struct sim_sla_named *s = NULL;
    json_t *root, *a;
    size_t len;
    int rc;

    if ((rc = sim_jp_load(path, &root, err)) < 0)
        return rc;
    if ((rc = sim_jp_object(root, "$", top, 1, err)) < 0 ||
        (rc = sim_jp_member(root, "$", "slas", true, &a, err)) < 0)
        goto out;
    if (!json_is_array(a)) {
        rc = sim_jp_bad_value(err, "$.slas", "an array of SLA objects", a);
        goto out;
    }
    len = json_array_size(a);
    if (len == 0 || len > SIM_SLA_FILE_MAX) {
        rc = sim_jp_bad(err, LT_EINVAL, "$.slas", "%zu SLAs: give 1..%d", len, SIM_SLA_FILE_MAX);
        goto out;
    }
    if ((s = lt_calloc(len, sizeof(*s))) == NULL) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < len && rc == 0; i++)
        rc = one_sla(a, i, &s[i], err);
    if (rc == 0) {
        *out = s;
        *n = len;
        s = NULL;
        lt_err_set_source(err, NULL);
    }
out:
    lt_free(s);
    json_decref(root);
    return rc;
}
