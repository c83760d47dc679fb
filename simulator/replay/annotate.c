/* annotate.c -- the replay's --sla-annotate file (annotate.h; docs/simulator.md "SLA
 * annotation").
 *
 * SPDX-License-Identifier: MIT
 */
#include "replay/annotate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/jsonpath.h"

#define ALL_PRIO  0x0fffu
#define ALL_CLASS 0x0fu

static const char *const bands[] = {"free", "batch", "prod"};
static const uint16_t band_mask[] = {0x0003u, 0x01fcu, 0x0e00u};

/* A selector at key of rule o: one value or a list of them, as a bit mask. Integers in
 * [0, hi] (names: one of bands[]). Absent: every bit (all). */
static int selector(json_t *o, const char *at, const char *key, bool names, int hi, unsigned all,
                    unsigned *mask, struct lt_err *err)
{
    char sub[SIM_JP_LEN], el[SIM_JP_LEN];
    json_t *v = json_object_get(o, key), *x;
    size_t i;

    *mask = all;
    if (v == NULL)
        return 0;
    sim_jp_key(sub, at, key);
    if (json_is_array(v) && json_array_size(v) == 0)
        return sim_jp_bad(err, LT_EINVAL, sub, "an empty list selects nothing");
    *mask = 0;
    for (i = 0; i < (json_is_array(v) ? json_array_size(v) : 1); i++) {
        x = json_is_array(v) ? json_array_get(v, i) : v;
        if (json_is_array(v))
            sim_jp_index(el, sub, i);
        else
            snprintf(el, sizeof(el), "%s", sub);
        if (names) {
            int b = -1;
            for (int k = 0; k < 3 && json_is_string(x); k++)
                if (strcmp(json_string_value(x), bands[k]) == 0)
                    b = k;
            if (b < 0)
                return sim_jp_bad_value(err, el, "a band: free, batch or prod", x);
            *mask |= band_mask[b];
        } else {
            json_int_t n;
            if (sim_jp_integer(x, el, 0, hi, &n, err) < 0)
                return err->code;
            *mask |= 1u << n;
        }
    }
    return 0;
}

static int one_rule(json_t *o, size_t i, struct sim_annot *a, struct lt_err *err)
{
    static const char *const keys[] = {"name", "band", "priority", "sched_class", "sla"};
    struct sim_annot_rule *r = &a->rules[i];
    char at[SIM_JP_LEN], sub[SIM_JP_LEN], label[SIM_SLA_NAME + 8];
    unsigned band, prio, cls;
    json_t *name, *sla;
    int rc;

    sim_jp_index(at, "$.rules", i);
    if ((rc = sim_jp_object(o, at, keys, 5, err)) < 0 ||
        (rc = sim_jp_member(o, at, "sla", true, &sla, err)) < 0)
        return rc;
    name = json_object_get(o, "name");
    sim_jp_key(sub, at, "name");
    if (name != NULL && (!json_is_string(name) || !sim_sla_name_ok(json_string_value(name))))
        return sim_jp_bad_value(err, sub, "a name of 1..31 letters, digits, '_', '-', '.'", name);
    if (name != NULL)
        snprintf(r->name, sizeof(r->name), "%s", json_string_value(name));
    else
        snprintf(r->name, sizeof(r->name), "r%zu", i + 1);
    for (size_t k = 0; k < i; k++)
        if (strcmp(a->rules[k].name, r->name) == 0)
            return sim_jp_bad(err, LT_EINVAL, sub,
                              "the name '%s' is given twice (also $.rules[%zu])", r->name, k);
    if ((rc = selector(o, at, "band", true, 2, ALL_PRIO, &band, err)) < 0 ||
        (rc = selector(o, at, "priority", false, 11, ALL_PRIO, &prio, err)) < 0 ||
        (rc = selector(o, at, "sched_class", false, 3, ALL_CLASS, &cls, err)) < 0)
        return rc;
    if ((band & prio) == 0)
        return sim_jp_bad(err, LT_EINVAL, at, "band and priority select no priority together");
    r->prio_mask = (uint16_t)(band & prio);
    r->class_mask = (uint8_t)cls;
    sim_jp_key(sub, at, "sla");
    snprintf(label, sizeof(label), "%s", r->name);
    if ((rc = sim_sla_value(sla, sub, label, &r->spec, err)) < 0)
        return rc;
    if (r->spec.sla.kind == LT_SLA_BY_DEADLINE &&
        !(r->spec.relative & LT_SLA_T_D1) != !(r->spec.relative & LT_SLA_T_D2))
        return sim_jp_bad(err, LT_EINVAL, sub,
                          "d1 and d2 must be both relative (Nx) or both absolute: a mix breaks "
                          "d1 <= d2 for some tasks");
    return 0;
}

/* FNV-1a 64 of the file's bytes, as 16 hex digits. */
static int file_hash(const char *path, char *hex, struct lt_err *err)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    FILE *f = fopen(path, "rb");
    int c;

    if (f == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open file: %s", strerror(errno));
    while ((c = getc(f)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)c) * UINT64_C(0x100000001b3);
    fclose(f);
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
    return 0;
}

int sim_annot_load(const char *path, struct sim_annot *out, struct lt_err *err)
{
    static const char *const top[] = {"rules"};
    static struct sim_annot zero;
    struct sim_annot *a = out;
    json_t *root, *rules;
    int rc;

    *a = zero;
    if ((rc = sim_jp_load(path, &root, err)) < 0)
        return rc;
    if ((rc = sim_jp_object(root, "$", top, 1, err)) < 0 ||
        (rc = sim_jp_member(root, "$", "rules", true, &rules, err)) < 0)
        goto out;
    if (!json_is_array(rules)) {
        rc = sim_jp_bad_value(err, "$.rules", "an array of rules", rules);
        goto out;
    }
    a->n = json_array_size(rules);
    if (a->n == 0 || a->n > SIM_ANNOT_MAX_RULES) {
        rc = sim_jp_bad(err, LT_EINVAL, "$.rules", "%zu rules: give 1..%d", a->n,
                        SIM_ANNOT_MAX_RULES);
        goto out;
    }
    for (size_t i = 0; i < a->n && rc == 0; i++)
        rc = one_rule(json_array_get(rules, i), i, a, err);
    if (rc == 0)
        rc = file_hash(path, a->sha, err);
    if (rc == 0)
        lt_err_set_source(err, NULL);
out:
    json_decref(root);
    return rc;
}

int sim_annot_match(const struct sim_annot *a, int prio, int cls)
{
    for (size_t i = 0; i < a->n; i++)
        if ((a->rules[i].prio_mask >> prio & 1u) && (a->rules[i].class_mask >> cls & 1u))
            return (int)i;
    return -1;
}
