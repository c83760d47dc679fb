/* opt.c -- lotus-sim's option tables: parsing, help, suggestions, durations, lists (opt.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli/opt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "sim.h"

#define MAX_SECS (UINT64_C(1) << 53)

/* ---- suggestions ----------------------------------------------------------------------- */

/* Levenshtein distance of a and b, capped at 99 (names are short). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];

    if (la >= sizeof(row) / sizeof(row[0]) || lb >= sizeof(row) / sizeof(row[0]))
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

const char *sim_closest(const char *s, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = 99, limit = strlen(s) / 3 > 2 ? strlen(s) / 3 : 2;

    for (size_t k = 0; k < n; k++) {
        size_t d = edit_distance(s, names[k]);
        if (d < best_d) {
            best_d = d;
            best = names[k];
        }
    }
    return best_d <= limit ? best : NULL;
}

/* ---- help ------------------------------------------------------------------------------- */

/* Prints text with every line after the first indented by indent spaces. */
static void put_indented(FILE *f, const char *text, int indent)
{
    for (const char *p = text; *p != '\0'; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fprintf(f, "%*s", indent, "");
    }
}

void sim_opt_usage(const struct sim_cmd_spec *c, FILE *f)
{
    fprintf(f, "usage: lotus-sim %s %s\n\n%s\n\noptions:\n", c->name, c->synopsis, c->about);
    for (size_t k = 0; k < c->n_opts; k++) {
        const struct sim_opt *o = &c->opts[k];
        char head[64];
        snprintf(head, sizeof(head), "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-24s ", head);
        put_indented(f, o->help, 27);
        if (o->def != NULL)
            fprintf(f, " (default %s)", o->def);
        fputc('\n', f);
    }
    fprintf(f, "  %-24s this text\n", "--help, -h");
    if (c->footer != NULL)
        fprintf(f, "\n%s\n", c->footer);
    fprintf(f, "\nexample:\n  %s\n", c->example);
}

size_t sim_opt_index(const struct sim_cmd_spec *c, const char *flag)
{
    for (size_t k = 0; k < c->n_opts; k++)
        if (strcmp(c->opts[k].name, flag) == 0)
            return k;
    return c->n_opts;
}

void sim_opt_warn_unused(const struct sim_cmd_spec *c, const bool *seen, const char *flag,
                         const char *why)
{
    size_t k = sim_opt_index(c, flag);

    if (k < c->n_opts && seen[k])
        fprintf(stderr, "lotus-sim: warning: %s does not apply %s\n", flag, why);
}

int sim_opt_alone(const struct sim_cmd_spec *c, const bool *seen, const char *flag,
                  struct lt_err *err)
{
    size_t i = sim_opt_index(c, flag);

    if (i == c->n_opts || !seen[i])
        return 0;
    for (size_t k = 0; k < c->n_opts; k++)
        if (k != i && seen[k])
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s takes no other options", flag);
    return 0;
}

/* ---- parsing ---------------------------------------------------------------------------- */

static int unknown_option(const struct sim_cmd_spec *c, const char *arg, struct lt_err *err)
{
    const char *names[64];
    char key[64];
    size_t n = 0, len = strcspn(arg, "=");
    const char *near;

    if (arg[0] != '-' || arg[1] == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "unexpected argument '%.60s'", arg);
    for (size_t k = 0; k < c->n_opts && n < 63; k++)
        names[n++] = c->opts[k].name;
    names[n++] = "--help";
    snprintf(key, sizeof(key), "%.*s", (int)(len < 63 ? len : 63), arg);
    near = sim_closest(key, names, n);
    if (near != NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown option '%.60s' (did you mean %s?)", key,
                          near);
    return lt_err_set(err, LT_EINVAL, 0, 0, "unknown option '%.60s'", key);
}

/* Stores value (the text of option o) into base by o's kind. */
static int store(const struct sim_opt *o, const char *value, void *base, struct lt_err *err)
{
    char *dst = (char *)base + o->off;

    switch (o->kind) {
    case SIM_OPT_FLAG:
        *(bool *)(void *)dst = true;
        return 0;
    case SIM_OPT_STR:
        *(const char **)(void *)dst = value;
        return 0;
    case SIM_OPT_U64:
        return sim_parse_u64(o->name, value, (uint64_t *)(void *)dst, err);
    case SIM_OPT_SECS:
        return sim_parse_secs(o->name, value, 1, (uint64_t *)(void *)dst, err);
    case SIM_OPT_HOURS:
        return sim_parse_hours(o->name, value, (double *)(void *)dst, err);
    case SIM_OPT_SHARD:
        return sim_parse_shard(o->name, value, (struct sim_shard *)(void *)dst, err);
    case SIM_OPT_ARGS:
    case SIM_OPT_MULTI: {
        struct sim_args *a = (struct sim_args *)(void *)dst;
        if (a->n == SIM_ARGS_MAX)
            return lt_err_set(err, LT_EINVAL, 0, 0, "more than %d %s arguments", SIM_ARGS_MAX,
                              o->name);
        a->v[a->n++] = value;
        return 0;
    }
    }
    return lt_err_set(err, LT_EINVAL, 0, 0, "%s: bad option table", o->name);
}

/* Matches argv[*i] against flag, which takes a value: "--flag VALUE" or "--flag=VALUE". Returns 1
 * with *value set (borrowed from argv, *i advanced past a separate value), 0 if argv[*i] is
 * another flag, LT_EINVAL for a missing or empty value. */
static int opt_value(int argc, char **argv, int *i, const char *flag, const char **value,
                     struct lt_err *err)
{
    const char *arg = argv[*i];
    size_t len = strlen(flag);

    if (strncmp(arg, flag, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
    } else {
        /* "--cluster --task t.json" is a forgotten value, not a file named "--task". */
        if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "missing value for %s", flag);
        *value = argv[++*i];
    }
    if (**value == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "empty value for %s", flag);
    return 1;
}

/* Matches argv[*i] against row o: 1 (value stored, *i advanced), 0 (not this row), < 0. */
static int match(const struct sim_opt *o, int argc, char **argv, int *i, void *base,
                 struct lt_err *err)
{
    const char *arg = argv[*i], *value = NULL;
    size_t len = strlen(o->name);
    int rc;

    if (o->kind == SIM_OPT_FLAG)
        return strcmp(arg, o->name) == 0 ? (store(o, NULL, base, err), 1) : 0;
    if (o->kind == SIM_OPT_ARGS) /* any argument that is not an option */
        return arg[0] != '-' ? ((rc = store(o, arg, base, err)) < 0 ? rc : 1) : 0;
    if (len == 2 && strncmp(arg, o->name, 2) == 0 && arg[2] >= '0' && arg[2] <= '9')
        value = arg + 2; /* -j4, as make */
    else if ((rc = opt_value(argc, argv, i, o->name, &value, err)) <= 0)
        return rc;
    rc = store(o, value, base, err);
    return rc < 0 ? rc : 1;
}

int sim_opt_parse(const struct sim_cmd_spec *c, int argc, char **argv, void *base, bool *seen,
                  struct lt_err *err)
{
    if (seen != NULL)
        memset(seen, 0, c->n_opts * sizeof(*seen));
    for (int i = 1; i < argc; i++) {
        int rc = 0;
        size_t k;

        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            sim_opt_usage(c, stdout);
            return 1;
        }
        for (k = 0; k < c->n_opts; k++)
            if ((rc = match(&c->opts[k], argc, argv, &i, base, err)) != 0)
                break;
        if (rc < 0)
            return rc;
        if (k == c->n_opts)
            return unknown_option(c, argv[i], err);
        if (seen != NULL)
            seen[k] = true;
    }
    return 0;
}

/* ---- shared helpers (sim.h) ----------------------------------------------------------- */

char *sim_command_line(int argc, char **argv)
{
    size_t cap = 16;
    for (int k = 0; k < argc; k++)
        cap += 4 * strlen(argv[k]) + 3;
    char *s = lt_malloc(cap), *p = s;
    if (s == NULL)
        return NULL;
    p += sprintf(p, "lotus-sim");
    for (int k = 0; k < argc; k++) {
        const char *a = argv[k];
        bool plain =
            a[0] != '\0' && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_./=,:%+-") == strlen(a);
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", a);
            continue;
        }
        *p++ = '\'';
        for (; *a; a++)
            p += *a == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *a);
        *p++ = '\'';
    }
    *p = '\0';
    return s;
}

int sim_err_prefix(struct lt_err *err, const char *prefix)
{
    size_t cap = sizeof(err->text) - 1, lp = strlen(prefix), lt = strlen(err->text);

    lp = lp > cap ? cap : lp;
    lt = lt > cap - lp ? cap - lp : lt;
    memmove(err->text + lp, err->text, lt);
    memcpy(err->text, prefix, lp);
    err->text[lp + lt] = '\0';
    return err->code;
}

int sim_parse_u64(const char *flag, const char *s, uint64_t *out, struct lt_err *err)
{
    unsigned long long v;
    char *end;

    _Static_assert(sizeof(v) == sizeof(*out), "unsigned long long must be 64 bits");
    /* strtoull alone would accept "-1" (as 2^64 - 1), " 7" and "+7": require digits only. */
    if (s[0] < '0' || s[0] > '9')
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "invalid value '%.40s' for %s: expected an unsigned integer", s, flag);
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end != '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "invalid value '%.40s' for %s: expected an unsigned integer", s, flag);
    if (errno == ERANGE)
        return lt_err_set(err, LT_ERANGE, 0, 0,
                          "value '%.40s' for %s is out of range (at most %" PRIu64 ")", s, flag,
                          UINT64_MAX);
    *out = v;
    return 0;
}

void sim_err_print(const struct lt_err *err)
{
    sim_err_print_ctx(NULL, err);
}

void sim_err_print_ctx(const char *ctx, const struct lt_err *err)
{
    fputs("lotus-sim: ", stderr);
    if (ctx != NULL)
        fprintf(stderr, "%s: ", ctx);
    if (err->source[0] != '\0') {
        fputs(err->source, stderr);
        if (err->line > 0)
            fprintf(stderr, ":%" PRId64, err->line);
        if (err->line > 0 && err->column > 0)
            fprintf(stderr, ":%d", err->column);
        fputs(": ", stderr);
    }
    fprintf(stderr, "%s\n", err->text[0] != '\0' ? err->text : lt_strerror(err->code));
}

/* ---- values ----------------------------------------------------------------------------- */

/* The seconds in one unit letter, or 0 for none of s, m, h, d. */
static uint64_t unit_secs(char u)
{
    switch (u) {
    case 's':
        return 1;
    case 'm':
        return 60;
    case 'h':
        return 3600;
    case 'd':
        return 86400;
    default:
        return 0;
    }
}

int sim_parse_secs(const char *flag, const char *s, uint64_t bare_unit, uint64_t *out,
                   struct lt_err *err)
{
    uint64_t v = 0, unit = bare_unit;
    const char *p = s;

    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > MAX_SECS)
            return lt_err_set(err, LT_ERANGE, 0, 0, "%s: '%.40s' is too large", flag, s);
    }
    if (p != s && *p != '\0' && p[1] == '\0')
        unit = unit_secs(*p++);
    if (p == s || *p != '\0' || unit == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.40s' is not a duration (a whole number with an optional unit: "
                          "90s, 5m, 1h, 2d)",
                          flag, s);
    if (v > MAX_SECS / unit)
        return lt_err_set(err, LT_ERANGE, 0, 0, "%s: '%.40s' is too large", flag, s);
    *out = v * unit;
    return 0;
}

int sim_parse_hours(const char *flag, const char *s, double *out, struct lt_err *err)
{
    char *end;
    double v, unit = 1.0;

    errno = 0;
    v = (s[0] >= '0' && s[0] <= '9') ? strtod(s, &end) : -1.0;
    if (v >= 0.0 && *end != '\0' && end[1] == '\0' && unit_secs(*end) != 0)
        unit = (double)unit_secs(*end++) / 3600.0;
    if (!(v >= 0.0) || *end != '\0' || errno != 0 || !(v * unit < 1e12))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.40s' is not a duration (hours, or a number with a unit: 90m, "
                          "1.5h, 2d)",
                          flag, s);
    *out = v * unit;
    return 0;
}

/* Reads decimal digits from *p into *v (at most SIM_SHARD_MAX + 1); false when none. */
static bool shard_number(const char **p, uint64_t *v)
{
    const char *s = *p;

    for (*v = 0; **p >= '0' && **p <= '9'; (*p)++)
        if ((*v = *v * 10 + (uint64_t)(**p - '0')) > SIM_SHARD_MAX)
            *v = SIM_SHARD_MAX + 1;
    return *p != s;
}

int sim_parse_shard(const char *flag, const char *s, struct sim_shard *out, struct lt_err *err)
{
    const char *p = s;
    uint64_t i, n;

    if (!shard_number(&p, &i) || *p++ != '/' || !shard_number(&p, &n) || *p != '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.40s' is not I/N (shard I of N, 0 <= I < N, e.g. 0/4)", flag, s);
    if (n == 0 || n > SIM_SHARD_MAX)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: '%.40s': N must be in 1..%d", flag, s,
                          SIM_SHARD_MAX);
    if (i >= n)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.40s': the index I must be below N (shards are 0 .. N-1)", flag,
                          s);
    out->index = i;
    out->count = n;
    return 0;
}

/* sim_list_split, where an item that starts with `group` (if not NULL) also takes the next
 * `more` commas and what follows them. */
static int list_split(const char *flag, const char *s, const char *group, int more, char *buf,
                      size_t cap, char **items, size_t max, size_t *n, struct lt_err *err)
{
    char *p = buf;

    if (strlen(s) >= cap)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: the list is longer than %zu bytes", flag,
                          cap - 1);
    memcpy(buf, s, strlen(s) + 1);
    *n = 0;
    for (;;) {
        char *comma = strchr(p, ',');
        if (group != NULL && strncmp(p, group, strlen(group)) == 0)
            for (int k = 0; k < more && comma != NULL; k++)
                comma = strchr(comma + 1, ',');
        if (comma != NULL)
            *comma = '\0';
        if (*p == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s '%.60s': an empty item (lists are comma-separated, without "
                              "a trailing comma)",
                              flag, s);
        for (size_t k = 0; k < *n; k++)
            if (strcmp(items[k], p) == 0)
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s '%.60s': '%.40s' is given twice", flag,
                                  s, p);
        if (*n == max)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s '%.60s': more than %zu items", flag, s,
                              max);
        items[(*n)++] = p;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

int sim_list_split(const char *flag, const char *s, char *buf, size_t cap, char **items, size_t max,
                   size_t *n, struct lt_err *err)
{
    return list_split(flag, s, NULL, 0, buf, cap, items, max, n, err);
}

int sim_order_list_split(const char *flag, const char *s, char *buf, size_t cap, char **items,
                         size_t max, size_t *n, struct lt_err *err)
{
    return list_split(flag, s, "composite:", 2, buf, cap, items, max, n, err);
}
