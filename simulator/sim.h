/* sim.h -- declarations shared by the files of lotus-sim, the simulator front end.
 *
 * lotus-sim is a command-line front end over liblotus: main.c dispatches `lotus-sim
 * <command>` to one sim_cmd_<command>() per command, each in its own file; json_model.c reads
 * the JSON cluster snapshot and task formats (docs/formats.md). Everything here uses the
 * sim_ prefix; only the library's public lt_*.h headers are included (STYLE.md R1, R3).
 *
 * Errors travel as struct lt_err (source = the input file, text = "JSON path: message", or
 * line and column for a JSON syntax error) and are printed once, by the command, with
 * sim_err_print. Exit statuses are the SIM_EXIT_* constants below (docs/cli.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"
#include "lt_err.h"

/* Must match project(lotus VERSION ...) in CMakeLists.txt. */
#ifndef LOTUS_VERSION
#error "LOTUS_VERSION must come from CMakeLists.txt (project VERSION)"
#endif
#define SIM_VERSION LOTUS_VERSION

/* Exit statuses (docs/cli.md). 70 is sysexits.h's EX_SOFTWARE. */
#define SIM_EXIT_OK       0  /* success, including "the task fits on no machine" */
#define SIM_EXIT_INPUT    1  /* bad or unreadable input file, or a run-time failure */
#define SIM_EXIT_USAGE    2  /* bad command line: unknown command, option, value or policy */
#define SIM_EXIT_INTERNAL 70 /* an internal consistency check failed: a lotus bug */

/* Defined by Jansson (typedef struct json_t json_t); declared here so that this header does
 * not need jansson.h. */
struct json_t;

/* What sim_cluster_load did besides building the cluster. */
struct sim_load_stats {
    size_t n_tasks;         /* tasks placed from the file */
    size_t n_overcommitted; /* machines whose listed tasks exceed their capacity */
};

/* Loads the cluster snapshot at path (docs/formats.md): builds the cluster with the machines
 * in file order (index = position in "machines"), places the tasks listed under each machine
 * (with LT_PLACE_FORCE when they do not fit: an overcommitted snapshot is legal) and takes the
 * machines with "online": false offline. On success *out receives an owned cluster (free with
 * lt_cluster_free) and *stats, if stats is not NULL, what was loaded. On failure returns
 * LT_EIO (cannot open), LT_EPARSE (JSON syntax: err has line and column), LT_EINVAL (a value
 * or key is wrong: err->text starts with its JSON path), LT_ERANGE (a limit) or LT_ENOMEM;
 * err->source is path; *out and *stats are untouched. */
LT_MUST_CHECK int sim_cluster_load(const char *path, struct lt_cluster **out,
                                   struct sim_load_stats *stats, struct lt_err *err);

/* As sim_cluster_load, from the len bytes at buf (not NUL-terminated); source names the
 * input in messages. Used by the fuzz target and by callers holding the JSON in memory. */
LT_MUST_CHECK int sim_cluster_load_buffer(const char *source, const char *buf, size_t len,
                                          struct lt_cluster **out, struct sim_load_stats *stats,
                                          struct lt_err *err);

/* Loads the file at path holding one TASK object (docs/formats.md) into *out (fields not in
 * the format are zeroed). Errors as for sim_cluster_load; *out is untouched on failure. */
LT_MUST_CHECK int sim_task_load(const char *path, struct lt_task *out, struct lt_err *err);

/* Reads a JSON array of TASK objects (docs/formats.md) into a new array *out of *n_out tasks
 * (lt_free it; NULL and 0 on error). Errors name the file and the JSON path ("$[3].request"). */
LT_MUST_CHECK int sim_tasks_load(const char *path, struct lt_task **out, size_t *n_out,
                                 struct lt_err *err);

/* The TASK object for t, in the format sim_task_load reads. Returns a new reference (free
 * with json_decref) or NULL when out of memory. */
struct json_t *sim_task_to_json(const struct lt_task *t);

/* Parses s, the value of command-line flag `flag`, as an unsigned decimal integer: digits
 * only (no sign, no spaces), all of s consumed, at most UINT64_MAX. LT_EINVAL or LT_ERANGE
 * with a message naming flag and value; *out is untouched on failure. */
LT_MUST_CHECK int sim_parse_u64(const char *flag, const char *s, uint64_t *out, struct lt_err *err);

/* Prints err on stderr as "lotus-sim: SOURCE:LINE:COLUMN: TEXT", leaving out the parts that
 * are empty or 0. */
void sim_err_print(const struct lt_err *err);

/* As sim_err_print, with "CTX: " (a run's policy, say) after the prefix when ctx is not NULL:
 * one "lotus-sim:" per message. */
void sim_err_print_ctx(const char *ctx, const struct lt_err *err);

/* A progress bar's cells for the share frac (clamped to [0, 1]) done: SIM_BAR_WIDTH of '#'
 * then '.', NUL-terminated, in cells[SIM_BAR_WIDTH + 1]. */
#define SIM_BAR_WIDTH 24
void sim_bar_cells(double frac, char *cells);

/* Prints err and "try 'lotus-sim CMD --help'"; returns SIM_EXIT_USAGE. */
int sim_usage_error(const char *cmd, const struct lt_err *err);

/* Commands. Each takes the arguments after the command name (argv[0] is the command name)
 * and returns an exit status. */
int sim_cmd_score(int argc, char **argv);
int sim_cmd_place(int argc, char **argv);   /* place_cmd.c */
int sim_cmd_replay(int argc, char **argv);  /* replay_cmd.c */
int sim_cmd_tx(int argc, char **argv);      /* replay_cmd.c */
int sim_cmd_merge(int argc, char **argv);   /* replay_cmd.c */
int sim_cmd_compare(int argc, char **argv); /* compare_cmd.c */
int sim_cmd_slots(int argc, char **argv);   /* slots_cmd.c */
int sim_cmd_lotes(int argc, char **argv);   /* lotes_cmd.c */
int sim_cmd_queue(int argc, char **argv);   /* queue/queue_cmd.c */
int sim_cmd_whatif(int argc, char **argv);  /* whatif/whatif_cmd.c */

#endif
