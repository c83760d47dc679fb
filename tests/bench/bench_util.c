/* bench_util.c -- command-line helpers shared by bench_choose and bench_replay (see
 * bench_util.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lt_err.h"
#include "lt_mem.h"

/* The value of option argv[*i] (either "--flag=value" or "--flag value"), advancing *i past
 * a separate value; NULL if arg is not flag. Prints and sets *bad if the value is missing. */
static const char *flag_value(const char *prog, int argc, char **argv, int *i, const char *flag,
                              bool *bad)
{
    const char *arg = argv[*i];
    size_t len = strlen(flag);

    if (strncmp(arg, flag, len) != 0)
        return NULL;
    if (arg[len] == '=')
        return arg + len + 1;
    if (arg[len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: option %s needs a value (try --help)\n", prog, flag);
        *bad = true;
        return NULL;
    }
    return argv[++*i];
}

int bench_scan_args(const char *prog, int argc, char **argv, const char *const *flags,
                    const char **values, bool *smoke, void (*usage)(FILE *))
{
    for (int i = 1; i < argc; i++) {
        bool bad = false;
        const char *v = NULL;

        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(argv[i], "--smoke") == 0) {
            *smoke = true;
            continue;
        }
        for (size_t k = 0; flags[k] != NULL && v == NULL && !bad; k++)
            if ((v = flag_value(prog, argc, argv, &i, flags[k], &bad)) != NULL)
                values[k] = v;
        if (v == NULL && !bad)
            fprintf(stderr, "%s: unknown option '%s' (try --help)\n", prog, argv[i]);
        if (v == NULL)
            return -1;
    }
    return 0;
}

int bench_parse_policies(const char *prog, const char *list, const struct lt_policy ***pol,
                         size_t *n_pol)
{
    size_t n = 1, k = 0;
    char *copy, *name, *next;
    struct lt_err err;

    for (const char *s = list; *s != '\0'; s++)
        n += *s == ',';
    copy = lt_strdup(list);
    *pol = lt_calloc(n, sizeof(**pol));
    if (copy == NULL || *pol == NULL) {
        fprintf(stderr, "%s: out of memory\n", prog);
        lt_free(copy);
        return -1;
    }
    for (name = copy; name != NULL; name = next) {
        next = strchr(name, ',');
        if (next != NULL)
            *next++ = '\0';
        lt_err_init(&err, NULL);
        (*pol)[k] = name[0] == '\0' ? NULL : lt_policy_find(name, &err);
        if ((*pol)[k] == NULL) {
            if (name[0] == '\0')
                fprintf(stderr, "%s: empty policy name in --policy '%s'\n", prog, list);
            else
                fprintf(stderr, "%s: invalid --policy: %s\n", prog, err.text);
            lt_free(copy);
            return -1;
        }
        k++;
    }
    *n_pol = k;
    lt_free(copy);
    return 0;
}

const struct bench_mix_entry bench_google_mix[BENCH_N_MIX] = {
    {0.5, 0.4995, 6672}, {0.5, 0.2493, 3835}, {0.5, 0.749, 992}, {1.0, 1.0, 788},
    {0.25, 0.2498, 123}, {0.5, 0.1241, 54},   {0.5, 0.03085, 5}, {0.5, 0.9678, 4},
    {1.0, 0.5, 3},       {0.5, 0.06158, 1},
};

void bench_scale_mix(size_t n, size_t counts[BENCH_N_MIX])
{
    uint64_t total = 0, rem[BENCH_N_MIX];
    bool bumped[BENCH_N_MIX] = {false};
    size_t given = 0;

    for (size_t k = 0; k < BENCH_N_MIX; k++)
        total += bench_google_mix[k].count;
    for (size_t k = 0; k < BENCH_N_MIX; k++) {
        counts[k] = (size_t)(bench_google_mix[k].count * (uint64_t)n / total);
        rem[k] = bench_google_mix[k].count * (uint64_t)n % total;
        given += counts[k];
    }
    /* Fewer than BENCH_N_MIX machines remain, and the remainders sum to (n - given) * total. */
    for (; given < n; given++) {
        size_t best = BENCH_N_MIX;
        for (size_t k = 0; k < BENCH_N_MIX; k++) {
            if (!bumped[k] && (best == BENCH_N_MIX || rem[k] > rem[best]))
                best = k;
        }
        bumped[best] = true;
        counts[best]++;
    }
}
