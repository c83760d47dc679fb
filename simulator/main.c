/* main.c -- lotus-sim: command dispatch and the command-line helpers every command shares.
 *
 * `lotus-sim <command> [options]` looks the command up in one table and hands it the rest
 * of argv; a new command is one row here plus one sim_cmd_<name>() in its own file (docs/
 * cli.md). Each command parses its own options with its option table (cli/opt.h), prints
 * its errors with sim_err_print and returns an exit status (SIM_EXIT_*). `lotus-sim help CMD`
 * is `lotus-sim CMD --help`; an unknown command gets the closest one suggested, as an unknown
 * option does; the top-level help says which --policy names each command takes
 * (cli/policies.h). main() makes sure that a failed write to stdout is an error too, not a
 * silently truncated report.
 *
 * SPDX-License-Identifier: MIT
 */
#include "sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opt.h"
#include "cli/policies.h"

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
    {"merge", sim_cmd_merge, "join the shards of a replay or tx sweep (--shard I/N)"},
    {"compare", sim_cmd_compare,
     "Stein et al.'s times-best tables over tx sweeps, beside the slides'"},
    {"slots", sim_cmd_slots, "Cavdar's slot-based simulator: priority eviction, WASP, HYBRID"},
    {"lotes", sim_cmd_lotes, "Tran & Beck's LoTES against greedy dispatch; LoTES tables"},
    {"queue", sim_cmd_queue, "Simon & McGalliard's queue orders and backfill on C cores"},
    {"whatif", sim_cmd_whatif, "Betser's what-if: when would this job start on the trace's cell?"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Prints names[0 .. n-1], comma-separated, wrapped before column 100 with every line
 * indented by indent. */
static void put_names(FILE *f, const char *const *names, size_t n, int indent)
{
    int col = indent;

    fprintf(f, "%*s", indent, "");
    for (size_t k = 0; k < n; k++) {
        int w = (int)strlen(names[k]) + 2;
        if (k > 0 && col + w > 99) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (k > 0) {
            fputc(' ', f);
        }
        fprintf(f, "%s%s", names[k], k + 1 < n ? "," : "\n");
        col += w;
    }
}

static void usage(FILE *f)
{
    const char *names[64];
    size_t n = sim_policy_names(false, names, 64);

    fprintf(f, "usage: lotus-sim <command> [options]\n"
               "       lotus-sim help [<command>]\n"
               "       lotus-sim --help | --version\n"
               "\n"
               "commands:\n");
    for (size_t k = 0; k < N_COMMANDS; k++)
        fprintf(f, "  %-8s %s\n", commands[k].name, commands[k].summary);
    fprintf(f, "\npolicies (--policy NAME):\n"
               "  score, place   the placement policies:\n");
    put_names(f, names, n, 17);
    fprintf(f,
            "  replay, tx     the placement policies and %s (Tran & Beck's LoTES dispatcher)\n"
            "  slots, lotes   names of their own: see 'lotus-sim slots --help', 'lotus-sim lotes "
            "--help'\n"
            "  queue          --order LIST of queue orders: fcfs, sjf, ljf, largest, smallest,\n"
            "                 composite:ALPHA,BETA,GAMMA (docs/queue.md)\n"
            "'lotus-sim score --list-policies' prints the placement policies, one per line;\n"
            "'lotus-sim replay --list-policies' prints them and %s (place and tx likewise).\n",
            SIM_POLICY_LOTES, SIM_POLICY_LOTES);
    fprintf(f, "\n'lotus-sim <command> --help' describes a command; docs/cli.md has them all.\n");
}

static void unknown_command(const char *name)
{
    const char *names[N_COMMANDS], *near;

    for (size_t k = 0; k < N_COMMANDS; k++)
        names[k] = commands[k].name;
    near = sim_closest(name, names, N_COMMANDS);
    fprintf(stderr, "lotus-sim: unknown command '%s'", name);
    if (near != NULL)
        fprintf(stderr, " (did you mean %s?)", near);
    fprintf(stderr, " (known:");
    for (size_t k = 0; k < N_COMMANDS; k++)
        fprintf(stderr, "%s %s", k ? "," : "", commands[k].name);
    fprintf(stderr, ")\nlotus-sim: try 'lotus-sim --help'\n");
}

/* Runs the command argv[0] with argc - 1 arguments, or says it is unknown. */
static int run_command(int argc, char **argv)
{
    for (size_t k = 0; k < N_COMMANDS; k++) {
        if (strcmp(argv[0], commands[k].name) == 0)
            return commands[k].run(argc, argv);
    }
    unknown_command(argv[0]);
    return SIM_EXIT_USAGE;
}

/* `lotus-sim help [COMMAND [SUBCOMMAND]]`: the top-level help, or `COMMAND [SUBCOMMAND]
 * --help`. argv[0] is "help". */
static int help(int argc, char **argv)
{
    static char help_flag[] = "--help";
    char *av[4];
    int n = 0;

    if (argc == 1 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    if (argc > 3) {
        fprintf(stderr, "lotus-sim: help takes a command (and a subcommand: 'help lotes "
                        "tables')\nlotus-sim: try 'lotus-sim --help'\n");
        return SIM_EXIT_USAGE;
    }
    av[n++] = argv[1];
    if (argc == 3)
        av[n++] = argv[2];
    av[n++] = help_flag;
    av[n] = NULL;
    return run_command(n, av);
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
    if (strcmp(argv[1], "help") == 0)
        return help(argc - 1, argv + 1);
    return run_command(argc - 1, argv + 1);
}

void sim_bar_cells(double frac, char *cells)
{
    int fill = (int)((frac < 0.0 ? 0.0 : frac > 1.0 ? 1.0 : frac) * SIM_BAR_WIDTH + 0.5);

    for (int k = 0; k < SIM_BAR_WIDTH; k++)
        cells[k] = k < fill ? '#' : '.';
    cells[SIM_BAR_WIDTH] = '\0';
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
