/* outfile.h -- output files written whole or not at all: each is written to "<path>.tmp" and
 * renamed to its final name only when every byte reached the disk (replay, tx, slots).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_OUTFILE_H
#define SIM_OUTFILE_H

#include <stdio.h>

#include "lt_err.h"

/* Opens "<final>.tmp" for writing. Returns the stream and sets *tmp_out (owned, freed by
 * sim_tmp_commit); NULL with err set (LT_ENOMEM, or LT_EIO naming the file). */
FILE *sim_tmp_open(const char *final, char **tmp_out, struct lt_err *err);

/* Flushes and closes f, then, if rc is 0 and nothing failed, renames tmp to final; otherwise
 * removes tmp. Frees tmp. Returns rc if it was an error, else 0 or the first write, close or
 * rename error (LT_EIO naming the file). */
int sim_tmp_commit(FILE *f, char *tmp, const char *final, int rc, struct lt_err *err);

/* mkdir -p: creates path and its missing parents. LT_EINVAL for an empty or over-long path,
 * LT_EIO naming the directory that cannot be made or the path that is not a directory. */
int sim_make_dirs(const char *path, struct lt_err *err);

#endif
