/* slots.c -- lotus-extender's slot settings: modes, priority classes, the slots file.
 *
 * Design. Settings only: the slot limit of a node is either computed by the library
 * (lt_slot_count_sc, the rule lotus-sim's SC1-SC4 configurations use) or looked up in the
 * slots file, held as an array sorted by node name (bsearch per lookup: a filter asks once per
 * candidate). The file is validated completely at start; every error names the file and the
 * JSON path of the bad value.
 *
 * SPDX-License-Identifier: MIT
 */
#include "slots.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_codec.h"
#include "lt_mem.h"
#include "lt_slots.h"

void ext_slots_init(struct ext_slots *s)
{
    memset(s, 0, sizeof(*s));
    s->level = 3;
    s->cpu_unit_milli = 1000;
    for (int k = 0; k < EXT_SLOTS_CLASSES - 1; k++)
        s->thresholds[k] = k + 1;
}

static void free_nodes(struct ext_slots *s)
{
    for (size_t i = 0; i < s->n_nodes; i++)
        lt_free(s->nodes[i].name);
    lt_free(s->nodes);
    s->nodes = NULL;
    s->n_nodes = 0;
    s->def_slots = 0;
}

void ext_slots_release(struct ext_slots *s)
{
    free_nodes(s);
    ext_slots_init(s);
}

int ext_slots_parse_mode(const char *text, enum ext_slots_mode *out, struct lt_err *err)
{
    static const char *const names[] = {"off", "capacity", "file"};

    for (int k = 0; k < 3; k++) {
        if (strcmp(text, names[k]) == 0) {
            *out = (enum ext_slots_mode)k;
            return 0;
        }
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown slot mode '%s' (known: off, capacity, file)", text);
}

int ext_slots_parse_classes(const char *text, int32_t out[EXT_SLOTS_CLASSES - 1],
                            struct lt_err *err)
{
    int32_t t[EXT_SLOTS_CLASSES - 1];
    const char *p = text;

    for (int k = 0; k < EXT_SLOTS_CLASSES - 1; k++) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(p, &end, 10);
        if (end == p || errno != 0 || v < INT32_MIN || v > INT32_MAX || *p == ' ' ||
            (*end != (k < EXT_SLOTS_CLASSES - 2 ? ',' : '\0')))
            return lt_err_set(err, LT_EPARSE, 0, 0,
                              "threshold %d of '%s' is not an integer followed by %s (expected 11 "
                              "ascending integers, e.g. '1,2,3,4,5,6,7,8,9,10,11')",
                              k + 1, text, k < EXT_SLOTS_CLASSES - 2 ? "','" : "the end");
        t[k] = (int32_t)v;
        if (k > 0 && t[k] <= t[k - 1])
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "threshold %d (%" PRId32 ") of '%s' is not above threshold %d "
                              "(%" PRId32 ")",
                              k + 1, t[k], text, k, t[k - 1]);
        p = end + 1;
    }
    memcpy(out, t, sizeof(t));
    return 0;
}

int ext_slots_class(const struct ext_slots *s, int32_t prio)
{
    int c = 0;

    while (c < EXT_SLOTS_CLASSES - 1 && s->thresholds[c] <= prio)
        c++;
    return c;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct ext_slots_node *)a)->name,
                  ((const struct ext_slots_node *)b)->name);
}

uint32_t ext_slots_limit(const struct ext_slots *s, const char *name, double cpu_milli)
{
    uint32_t n = 0;

    if (s->mode == EXT_SLOTS_CAPACITY) {
        if (lt_slot_count_sc(s->level, cpu_milli / (double)s->cpu_unit_milli, &n, NULL) < 0)
            return 0; /* no CPU: no slot */
        return n;
    }
    if (s->mode == EXT_SLOTS_FILE) {
        struct ext_slots_node key = {(char *)(uintptr_t)name, 0, false};
        const struct ext_slots_node *e =
            s->n_nodes ? bsearch(&key, s->nodes, s->n_nodes, sizeof(key), by_name) : NULL;

        return e ? e->slots : s->def_slots;
    }
    return 0;
}

/* One entry at path: an integer, or {"slots": integer, "production": boolean}. */
static int entry(const json_t *v, const char *source, const char *path, uint32_t *slots,
                 bool *production, struct lt_err *err)
{
    const json_t *n = v, *x;
    const char *k;
    char got[64];

    *production = false;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            if (strcmp(k, "slots") != 0 && strcmp(k, "production") != 0)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s: %s: unknown key '%s' (known: slots, production)", source,
                                  path, k);
        }
        n = json_object_get(v, "slots");
        x = json_object_get(v, "production");
        if (x != NULL && !json_is_boolean(x)) {
            ext_json_describe(x, got, sizeof(got));
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s.production: expected a boolean, got %s",
                              source, path, got);
        }
        *production = x != NULL && json_is_true(x);
        if (n == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s.slots: missing", source, path);
    }
    if (!json_is_integer(n) || json_integer_value(n) < 1 || json_integer_value(n) > EXT_SLOTS_MAX) {
        ext_json_describe(n, got, sizeof(got));
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s%s: expected an integer 1..%d, got %s",
                          source, path, n == v ? "" : ".slots", EXT_SLOTS_MAX, got);
    }
    *slots = (uint32_t)json_integer_value(n);
    return 0;
}

static int load_nodes(struct ext_slots *s, const json_t *nodes, const char *source,
                      struct lt_err *err)
{
    const char *k;
    const json_t *v;
    char path[300], got[64];
    size_t n = 0;
    int rc;

    if (!json_is_object(nodes)) {
        ext_json_describe(nodes, got, sizeof(got));
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: nodes: expected an object, got %s", source,
                          got);
    }
    s->nodes = lt_calloc(json_object_size(nodes) + 1, sizeof(*s->nodes));
    if (s->nodes == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "%s: out of memory", source);
    json_object_foreach((json_t *)(uintptr_t)nodes, k, v)
    {
        struct ext_slots_node *e = &s->nodes[n];

        snprintf(path, sizeof(path), "nodes[\"%.250s\"]", k);
        if (k[0] == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s: empty node name", source, path);
        if ((rc = entry(v, source, path, &e->slots, &e->production, err)) < 0)
            return rc;
        e->name = lt_malloc(strlen(k) + 1);
        if (e->name == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "%s: out of memory", source);
        memcpy(e->name, k, strlen(k) + 1);
        s->n_nodes = ++n;
    }
    qsort(s->nodes, n, sizeof(*s->nodes), by_name);
    return 0;
}

int ext_slots_load_json(struct ext_slots *s, const json_t *root, const char *source,
                        struct lt_err *err)
{
    const char *k;
    const json_t *v;
    char got[64];
    bool prod;
    int rc = 0;

    free_nodes(s);
    if (!json_is_object(root)) {
        ext_json_describe(root, got, sizeof(got));
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: expected an object, got %s", source, got);
    }
    json_object_foreach((json_t *)(uintptr_t)root, k, v)
    {
        if (strcmp(k, "nodes") == 0)
            rc = load_nodes(s, v, source, err);
        else if (strcmp(k, "default") == 0)
            rc = entry(v, source, "default", &s->def_slots, &prod, err);
        else
            rc = lt_err_set(err, LT_EINVAL, 0, 0,
                            "%s: unknown key '%.100s' (known: nodes, default)", source, k);
        if (rc < 0) {
            free_nodes(s);
            return rc;
        }
    }
    if (s->n_nodes == 0 && s->def_slots == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: no node and no default: every node would "
                          "have no slot",
                          source);
    return 0;
}

int ext_slots_load_file(struct ext_slots *s, const char *path, struct lt_err *err)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    int rc;

    if (root == NULL)
        return lt_err_set(err, LT_EPARSE, je.line, je.column, "%s:%d:%d: %s", path, je.line,
                          je.column, je.text);
    rc = ext_slots_load_json(s, root, path, err);
    json_decref(root);
    return rc;
}
