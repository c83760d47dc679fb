/* outfile.h -- lotus-sim's output layer: every output is whole or absent, an earlier result is
 * replaced only by a complete new one, and a signal leaves no temporary file behind.
 *
 * Files: sim_tmp_open writes "<path>.tmp"; sim_tmp_commit renames it to path only when every
 * byte reached the file, and removes it otherwise. Directories (one run of replay or tx):
 * sim_stage_open makes "<dir>.tmp"; the run writes its files there; sim_stage_commit swaps it
 * in for dir only after the run succeeded, so a failed or interrupted run leaves the earlier
 * dir as it was. sim_out_refuse_existing checks, before any work, that a command will not
 * replace an existing result unless --force was given.
 *
 * Signals: sim_out_signals(SIM_SIG_CLEANUP) makes SIGINT and SIGTERM remove every
 * registered temporary file or staging directory's files, print what was kept (the outputs
 * committed so far) and what was not, and end the process with the signal; SIM_SIG_FLAG only
 * records the signal for sim_out_interrupted (the replay's parent, which stops its children
 * and cleans up itself). The registry is process-wide state of the front end (not the
 * library's): fixed arrays, so that the handler is async-signal-safe.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_OUTFILE_H
#define SIM_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "lt_err.h"

/* Opens "<final>.tmp" for writing and registers it for removal on a signal. Returns the
 * stream and sets *tmp_out (owned, freed by sim_tmp_commit); NULL with err set (LT_ENOMEM, or
 * LT_EIO naming the file). */
FILE *sim_tmp_open(const char *final, char **tmp_out, struct lt_err *err);

/* Flushes and closes f, then, if rc is 0 and nothing failed, renames tmp to final (and
 * registers final as kept); otherwise removes tmp. Frees tmp. Returns rc if it was an error,
 * else 0 or the first write, close or rename error (LT_EIO naming the file). */
int sim_tmp_commit(FILE *f, char *tmp, const char *final, int rc, struct lt_err *err);

/* mkdir -p: creates path and its missing parents. LT_EINVAL for an empty or over-long path,
 * LT_EIO naming the directory that cannot be made or the path that is not a directory. */
int sim_make_dirs(const char *path, struct lt_err *err);

/* true when path exists (any type). */
bool sim_path_exists(const char *path);

/* Removes path and, for a directory, everything under it; a missing path is fine. Returns 0
 * or LT_EIO naming the first path that could not be removed. */
int sim_remove_tree(const char *path, struct lt_err *err);

/* Makes the staging directory "<dir>.tmp" for the result directory dir (its parents too),
 * emptying a stale one, and writes its path to stage (cap bytes). LT_EIO naming the path. */
int sim_stage_open(const char *dir, char *stage, size_t cap, struct lt_err *err);

/* Replaces dir by stage: renames an existing dir to "<dir>.old", stage to dir, then removes
 * the old one. On failure the earlier dir is put back. LT_EIO naming the path. */
int sim_stage_commit(const char *stage, const char *dir, struct lt_err *err);

/* Refuses, unless force, to overwrite the n results paths[] (files or directories): returns
 * LT_EINVAL naming the first that exists (and how many exist) and saying --force replaces
 * them; 0 when none exists or force. */
int sim_out_refuse_existing(const char *const *paths, size_t n, bool force, struct lt_err *err);

enum sim_sig_mode {
    SIM_SIG_CLEANUP, /* remove the temporary files, print the summary, die by the signal */
    SIM_SIG_QUIET,   /* remove the temporary files and die by the signal, silently (a
                      * replay child: its parent reports) */
    SIM_SIG_FLAG,    /* only record the signal (sim_out_interrupted) */
};

/* Installs the SIGINT and SIGTERM handler of the given mode (no SA_RESTART: a blocked
 * waitpid returns EINTR). */
void sim_out_signals(enum sim_sig_mode mode);

/* The signal received under SIM_SIG_FLAG, or 0. */
int sim_out_interrupted(void);

/* Registers a temporary path (file, or staging directory whose files are removed and which is
 * then removed) for removal on a signal; sim_out_forget unregisters it. */
void sim_out_track(const char *path);
void sim_out_forget(const char *path);

/* Registers path as an output kept (committed); the signal summary lists it. */
void sim_out_kept(const char *path);

#endif
