/* bench_util.h -- helpers shared by the benchmarks: the command line, the Google cell's mix.
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

/* The capacity mix (cpu, mem -> count) of the machines present at t=0 in the Google 2011
 * trace (../shared/spec/google-trace-2011.md, machine_events; 12,477 machines in ten
 * configurations), normalised as the trace gives it. */
struct bench_mix_entry {
    double cpu;     /* normalised CPU capacity */
    double mem;     /* normalised memory capacity */
    unsigned count; /* machines with this capacity at t=0 */
};

#define BENCH_N_MIX 10
extern const struct bench_mix_entry bench_google_mix[BENCH_N_MIX];

/* Scales the mix counts to n machines by largest remainder (ties to the earlier entry). */
void bench_scale_mix(size_t n, size_t counts[BENCH_N_MIX]);

#endif
