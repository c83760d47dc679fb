/* opt.h -- lotus-sim's command-line layer: one option table per command, parsed, checked and
 * described (--help) by the same code.
 *
 * A command declares a `static const struct sim_opt` table whose rows name a flag, its kind,
 * where its value goes (an offset into the command's options struct), its help text and its
 * default as shown by --help, plus a struct sim_cmd_spec (synopsis, description, example).
 * sim_opt_parse walks argv once: "--flag VALUE", "--flag=VALUE", "-jN" for one-letter flags;
 * --help and -h print the generated help; an unknown option gets "did you mean --policy?"
 * (edit distance); each value is parsed by its kind, with an error naming the flag and the
 * value. The syntax every command shares (docs/cli.md "Common syntax"):
 *
 *   lists      comma-separated, no empty item (a trailing comma is an error everywhere), no
 *              item twice (sim_list_split);
 *   durations  a whole number with an optional unit: 90s, 5m, 1h, 2d; a bare number is in the
 *              option's documented unit (seconds, or hours for the options in hours).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_OPT_H
#define SIM_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lt_err.h"

enum sim_opt_kind {
    SIM_OPT_FLAG,  /* bool: set to true; takes no value */
    SIM_OPT_STR,   /* const char *: the value, borrowed from argv */
    SIM_OPT_U64,   /* uint64_t: sim_parse_u64 */
    SIM_OPT_SECS,  /* uint64_t seconds: sim_parse_secs, a bare number in seconds */
    SIM_OPT_HOURS, /* double hours: sim_parse_hours, a bare number in hours */
    SIM_OPT_SHARD, /* struct sim_shard: sim_parse_shard, "I/N" */
    SIM_OPT_ARGS,  /* struct sim_args: the arguments that are not options, in order; the row's
                    * name is how --help shows them ("DIR...") */
    SIM_OPT_MULTI, /* struct sim_args: a repeatable option's values, in order ("--sla A
                    * --sla B"); at most SIM_ARGS_MAX */
};

/* --shard I/N: this process runs the part I (0-based) of N of a sweep's run list. count 0:
 * not given (the whole list). */
struct sim_shard {
    uint64_t index;
    uint64_t count;
};

#define SIM_SHARD_MAX 100000 /* largest N of --shard I/N */
#define SIM_ARGS_MAX  256    /* most arguments a SIM_OPT_ARGS row takes */

/* The arguments of a SIM_OPT_ARGS row, borrowed from argv. */
struct sim_args {
    const char *v[SIM_ARGS_MAX];
    size_t n;
};

/* One row of a command's option table. */
struct sim_opt {
    const char *name;       /* "--trace", or "-j" (then "-j4" works too) */
    enum sim_opt_kind kind; /* how the value is parsed and stored */
    size_t off;             /* offsetof(the command's options struct, the field) */
    const char *arg;        /* the value's name in --help ("DIR"); NULL for a flag */
    const char *help;       /* one line or several ("\n"), without the default */
    const char *def;        /* the default as --help shows it; NULL: none shown */
};

/* What --help says about a command besides its options. */
/* One row of a command's option table, its value going to `field` of the options struct
 * `type`: each command defines OPT(...) as SIM_OPT_ROW(struct its_opts, ...). */
#define SIM_OPT_ROW(type, name, kind, field, arg, help, def)                                       \
    {                                                                                              \
        name, kind, offsetof(type, field), arg, help, def                                          \
    }

struct sim_cmd_spec {
    const char *name;     /* as typed after lotus-sim: "replay", "lotes tables" */
    const char *synopsis; /* after "usage: lotus-sim NAME " */
    const char *about;    /* what the command does, one paragraph or more */
    const char *example;  /* one complete command line */
    const char *footer;   /* more text after the options, or NULL */
    const struct sim_opt *opts;
    size_t n_opts;
};

/* Parses argv[1 .. argc-1] (argv[0] is the command name) into the struct at base, by c's
 * table. seen, if not NULL, has c->n_opts entries and receives which options were given.
 * Returns 0 to go on, 1 after printing the help on stdout (--help, -h), or a negative LT_E*
 * with err set: an unknown option (with a suggestion when one is close), a stray argument, a
 * missing, empty or bad value. Options given twice: the last one wins (SIM_OPT_MULTI: each
 * is kept). */
int sim_opt_parse(const struct sim_cmd_spec *c, int argc, char **argv, void *base, bool *seen,
                  struct lt_err *err);

/* The help text: usage, description, options with defaults, the example. */
void sim_opt_usage(const struct sim_cmd_spec *c, FILE *f);

/* The whole command line "lotus-sim ARGV..." (argv[0]: the command's name), each argument that
 * holds more than [A-Za-z0-9_./=,:%+-] in single quotes (' as '\''), so it can be pasted into
 * a shell; owned (lt_free), NULL when out of memory. */
char *sim_command_line(int argc, char **argv);

/* Puts prefix ("--sla: ") before err's text, truncating its end to fit (lt_err_set keeps the
 * first error: it cannot rewrite one); returns err->code. */
int sim_err_prefix(struct lt_err *err, const char *prefix);

/* The row index of flag in c's table, or c->n_opts when it has none (for `seen`). */
size_t sim_opt_index(const struct sim_cmd_spec *c, const char *flag);

/* Prints "lotus-sim: warning: FLAG does not apply WHY" on stderr when seen[flag]. */
void sim_opt_warn_unused(const struct sim_cmd_spec *c, const bool *seen, const char *flag,
                         const char *why);

/* For an option that must come alone (--list-policies): LT_EINVAL "FLAG takes no other
 * options" when seen[flag] and another option was seen too; 0 otherwise. */
LT_MUST_CHECK int sim_opt_alone(const struct sim_cmd_spec *c, const bool *seen, const char *flag,
                                struct lt_err *err);

/* The name among names[0 .. n-1] closest to s by edit distance, if close enough to be a
 * likely typo (at most 2 edits, or a third of s's length); NULL otherwise. */
const char *sim_closest(const char *s, const char *const *names, size_t n);

/* Parses s, the value of flag, as a duration: digits, then optionally one unit of s, m, h or
 * d; a bare number counts in bare_unit seconds (1 or 3600). Stores whole seconds. LT_EINVAL
 * naming flag and value for anything else, LT_ERANGE past 2^53 seconds. */
LT_MUST_CHECK int sim_parse_secs(const char *flag, const char *s, uint64_t bare_unit, uint64_t *out,
                                 struct lt_err *err);

/* As sim_parse_secs for an option in hours that may be fractional: "1.5", "90m", "2d";
 * stores hours. LT_EINVAL naming flag and value. */
LT_MUST_CHECK int sim_parse_hours(const char *flag, const char *s, double *out, struct lt_err *err);

/* Parses s, the value of flag, as "I/N": decimal digits only, 1 <= N <= SIM_SHARD_MAX and
 * 0 <= I < N. LT_EINVAL naming flag and value, and which of the two is wrong. */
LT_MUST_CHECK int sim_parse_shard(const char *flag, const char *s, struct sim_shard *out,
                                  struct lt_err *err);

/* Splits the comma list s (the value of flag), copied into buf of cap bytes, into items[]
 * (pointers into buf), at most max. LT_EINVAL naming flag for an empty list, an empty item
 * (",a", "a,,b", "a,"), an item given twice, more than max items or a list over cap - 1
 * bytes. */
LT_MUST_CHECK int sim_list_split(const char *flag, const char *s, char *buf, size_t cap,
                                 char **items, size_t max, size_t *n, struct lt_err *err);

/* As sim_list_split for a list of queue orders (lt_queue.h): a composite's three numbers stay
 * one item, "sjf,composite:0,1,0,fcfs" being sjf, composite:0,1,0 and fcfs. */
LT_MUST_CHECK int sim_order_list_split(const char *flag, const char *s, char *buf, size_t cap,
                                       char **items, size_t max, size_t *n, struct lt_err *err);

#endif
