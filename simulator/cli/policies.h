/* policies.h -- which --policy names lotus-sim's commands take, listed, looked up and
 * suggested in one place, so that --list-policies, the unknown-policy message and the help
 * agree (docs/cli.md "Policy names").
 *
 * Two sets of names exist for the commands built on the placement library:
 *
 *   placement   the library's policy registry (lt_policy_at), in registration order:
 *               `score`, `place`, `replay` and `tx` take them;
 *   replay      the placement policies and then `lotes`, Tran & Beck's LoTES dispatcher,
 *               which only the trace replay can run: `replay` and `tx` take them.
 *
 * `slots --policy` and `lotes --policy` name other things (schedulers, dispatchers) and are
 * checked by their own commands.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_POLICIES_H
#define SIM_POLICIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lt_err.h"
#include "lt_score.h"

/* The name of LoTES's dispatcher in replay/tx --policy; it has no lt_policy. */
#define SIM_POLICY_LOTES "lotes"

/* Fills names[0 .. max-1] with the placement policies, then "lotes" when with_lotes; returns
 * how many (at most max). The names are static. */
size_t sim_policy_names(bool with_lotes, const char **names, size_t max);

/* Prints the names of sim_policy_names, one per line: the --list-policies output. */
void sim_policy_list(bool with_lotes, FILE *f);

struct sim_cmd_spec;

/* --list-policies as a command's whole work: LT_EINVAL if another option was given with it
 * (sim_opt_alone; seen from sim_opt_parse), else the list on stdout and 0. */
LT_MUST_CHECK int sim_policy_list_alone(const struct sim_cmd_spec *c, const bool *seen,
                                        bool with_lotes, struct lt_err *err);

/* Looks name up among the placement policies (and "lotes" when with_lotes, giving *out =
 * NULL). An unknown name is LT_ENOTFOUND with "unknown policy 'NAME' (did you mean X?)
 * (known: A, B, ...)", the suggestion only when one is close, the list the one
 * sim_policy_list prints. *out is untouched on failure. */
LT_MUST_CHECK int sim_policy_find(const char *name, bool with_lotes, const struct lt_policy **out,
                                  struct lt_err *err);

/* For a command with --list-policies: prints err and a hint, "try 'lotus-sim CMD
 * --list-policies'" after an unknown policy (LT_ENOTFOUND, from sim_policy_find), else "try
 * 'lotus-sim CMD --help'". Returns SIM_EXIT_USAGE. */
int sim_policy_usage_error(const char *cmd, const struct lt_err *err);

#endif
