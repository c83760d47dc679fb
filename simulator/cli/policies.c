/* policies.c -- the --policy names of score, place, replay and tx (policies.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli/policies.h"

#include <string.h>

#include "cli/opt.h"
#include "sim.h"

/* Room for the registry's names and lotes; the registry has 14. */
#define MAX_NAMES 64

size_t sim_policy_names(bool with_lotes, const char **names, size_t max)
{
    size_t n = 0;

    for (size_t k = 0; k < lt_policy_count() && n < max; k++)
        names[n++] = lt_policy_name(lt_policy_at(k));
    if (with_lotes && n < max)
        names[n++] = SIM_POLICY_LOTES;
    return n;
}

int sim_policy_list_alone(const struct sim_cmd_spec *c, const bool *seen, bool with_lotes,
                          struct lt_err *err)
{
    int rc = sim_opt_alone(c, seen, "--list-policies", err);

    if (rc == 0)
        sim_policy_list(with_lotes, stdout);
    return rc;
}

void sim_policy_list(bool with_lotes, FILE *f)
{
    const char *names[MAX_NAMES];
    size_t n = sim_policy_names(with_lotes, names, MAX_NAMES);

    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s\n", names[k]);
}

int sim_policy_find(const char *name, bool with_lotes, const struct lt_policy **out,
                    struct lt_err *err)
{
    const char *names[MAX_NAMES], *near;
    char known[LT_ERR_TEXT] = "";
    size_t n, len = 0;

    if (with_lotes && strcmp(name, SIM_POLICY_LOTES) == 0) {
        *out = NULL;
        return 0;
    }
    for (size_t k = 0; k < lt_policy_count(); k++) {
        if (strcmp(name, lt_policy_name(lt_policy_at(k))) == 0) {
            *out = lt_policy_at(k);
            return 0;
        }
    }
    n = sim_policy_names(with_lotes, names, MAX_NAMES);
    for (size_t k = 0; k < n && len < sizeof(known); k++)
        len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", k ? ", " : "", names[k]);
    near = sim_closest(name, names, n);
    if (near != NULL)
        return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                          "unknown policy '%.40s' (did you mean %s?) (known: %s)", name, near,
                          known);
    return lt_err_set(err, LT_ENOTFOUND, 0, 0, "unknown policy '%.40s' (known: %s)", name, known);
}

int sim_policy_usage_error(const char *cmd, const struct lt_err *err)
{
    sim_err_print(err);
    fprintf(stderr, "lotus-sim: try 'lotus-sim %s %s'\n", cmd,
            err->code == LT_ENOTFOUND ? "--list-policies" : "--help");
    return SIM_EXIT_USAGE;
}
