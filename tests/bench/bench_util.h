/* bench_util.h -- command-line helpers shared by bench_choose and bench_replay.
 *
 * Errors are printed on stderr as "PROG: message", PROG being the caller's program name.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LOTUS_BENCH_UTIL_H
#define LOTUS_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lt_score.h"

/* Sorts argv: --help or -h prints usage(stdout) and returns 1; --smoke sets *smoke; each
 * option of flags (NULL-terminated), as "--flag=value" or "--flag value", sets the value of
 * the same index (values is left alone for the options not given). 0, 1, or -1 after
 * printing the error. */
int bench_scan_args(const char *prog, int argc, char **argv, const char *const *flags,
                    const char **values, bool *smoke, void (*usage)(FILE *));

/* Resolves a comma-separated list of policy names into *pol (an owned array of borrowed
 * policies, lt_free it; set even on failure) and *n_pol. 0, or -1 after printing. */
int bench_parse_policies(const char *prog, const char *list, const struct lt_policy ***pol,
                         size_t *n_pol);

#endif
