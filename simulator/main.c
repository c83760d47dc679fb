/* main.c -- lotus-sim: command dispatch and the command-line helpers every command shares.
 *
 * `lotus-sim <command> [options]` looks the command up in one table and hands it the rest
 * of argv; a new command is one row here plus one sim_cmd_<name>() in its own file (docs/
 * cli.md). Each command parses its own options with sim_opt_value and sim_parse_u64, prints
 * its errors with sim_err_print and returns an exit status (SIM_EXIT_*). main() makes sure
 * that a failed write to stdout is an error too, not a silently truncated report.
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;         /* as typed after lotus-sim */
    int (*run)(int, char **); /* argv[0] is the command name; returns an exit status */
    const char *summary;      /* one line for --help */
};

static const struct command commands[] = {
    {"score", sim_cmd_score, "score every machine of a cluster snapshot for one task"},
    {"place", sim_cmd_place, "place a sequence of tasks one by one on a cluster snapshot"},
    {"replay", sim_cmd_replay, "replay the Google 2011 trace through placement policies"},
    {"tx", sim_cmd_tx, "T(x): tasks completed with x% of the machines, per policy"},
    {"slots", sim_cmd_slots, "Cavdar's slot-based simulator: priority eviction, WASP, HYBRID"},
    {"lotes", sim_cmd_lotes, "Tran & Beck's LoTES against greedy dispatch; LoTES tables"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: lotus-sim <command> [options]\n"
               "       lotus-sim --help | --version\n"
               "\n"
               "commands:\n");
    for (size_t k = 0; k < N_COMMANDS; k++)
        fprintf(f, "  %-8s %s\n", commands[k].name, commands[k].summary);
    fprintf(f, "\n'lotus-sim <command> --help' describes a command; docs/cli.md has them all.\n");
}

static void unknown_command(const char *name)
{
    fprintf(stderr, "lotus-sim: unknown command '%s' (known:", name);
    for (size_t k = 0; k < N_COMMANDS; k++)
        fprintf(stderr, "%s %s", k ? "," : "", commands[k].name);
    fprintf(stderr, ")\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("lotus-sim %s\n", SIM_VERSION);
        return SIM_EXIT_OK;
    }
    for (size_t k = 0; k < N_COMMANDS; k++) {
        if (strcmp(argv[1], commands[k].name) == 0)
            return commands[k].run(argc - 1, argv + 1);
    }
    unknown_command(argv[1]);
    return SIM_EXIT_USAGE;
}

int sim_snapshot_opt(int argc, char **argv, int *i, struct sim_snapshot_opts *o, struct lt_err *err)
{
    const char *arg = argv[*i], *seed = NULL;
    int rc;

    if (strcmp(arg, "--json") == 0) {
        o->json = true;
        return 1;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        o->help = true;
        return 1;
    }
    if ((rc = sim_opt_value(argc, argv, i, "--policy", &o->policy, err)) != 0 ||
        (rc = sim_opt_value(argc, argv, i, "--cluster", &o->cluster, err)) != 0)
        return rc;
    rc = sim_opt_value(argc, argv, i, "--seed", &seed, err);
    if (rc > 0 && (rc = sim_parse_u64("--seed", seed, &o->seed, err)) == 0)
        return 1;
    return rc;
}

int sim_unknown_arg(const char *arg, struct lt_err *err)
{
    if (arg[0] == '-')
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown option '%.40s'", arg);
    return lt_err_set(err, LT_EINVAL, 0, 0, "unexpected argument '%.40s'", arg);
}

int sim_usage_error(const char *cmd, const struct lt_err *err)
{
    sim_err_print(err);
    fprintf(stderr, "lotus-sim: try 'lotus-sim %s --help'\n", cmd);
    return SIM_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int status = dispatch(argc, argv);

    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "lotus-sim: cannot write to standard output: %s\n", strerror(errno));
        if (status == SIM_EXIT_OK)
            status = SIM_EXIT_INPUT;
    }
    return status;
}
