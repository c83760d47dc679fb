/* lotes.h -- lotus-extender's LoTES mode: the tables file (--lotes-tables).
 *
 * Tran & Beck's dispatcher (lt_lotes.h) on a Kubernetes cluster: the tables that `lotus-sim
 * lotes tables` computes for the cluster are loaded once at start; prioritize then classifies
 * each pod by its requests (lt_lotes_classify), maps the nodes to the tables' configurations
 * and bins (lt_lotes_map_machines, in node-name order) and scores the candidates in the
 * dispatcher's order (lt_lotes_rank), the placement policy breaking ties inside a group
 * (decide.c). This module only reads and holds the tables. docs/extender.md "LoTES mode".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_LOTES_H
#define EXT_LOTES_H

#include <stddef.h>

#include "lt_err.h"
#include "lt_lotes.h"

/* Largest tables file read: Tables 1+3 (1020 bins) take ~150 KB; 1 GiB bounds a file of
 * LT_LOTES_MAX_BINS-scale bins while refusing a runaway input. */
#define EXT_LOTES_MAX_FILE ((size_t)1 << 30)

/* Caller storage; init, load, release. */
struct ext_lotes {
    struct lt_lotes_tables *t; /* owned; NULL: LoTES mode off */
};

void ext_lotes_init(struct ext_lotes *l);

/* Frees the tables; l is then as after init. */
void ext_lotes_release(struct ext_lotes *l);

/* Reads the tables file at path (at most EXT_LOTES_MAX_FILE bytes) and decodes it with
 * lt_lotes_tables_parse into l (replacing any tables). Errors name the file and, for a
 * document that is not valid tables, the JSON path: "t.json: $.rho: the shares of class 'x'
 * sum to 1.5, not 1"; for malformed JSON the line and column: "t.json:3:7: ...". LT_EIO (the
 * file cannot be read, or is too large), LT_EPARSE, LT_EINVAL, LT_ENOMEM; l is then off. */
LT_MUST_CHECK int ext_lotes_load_file(struct ext_lotes *l, const char *path, struct lt_err *err);

/* The same from text of len bytes; source names it in messages. */
LT_MUST_CHECK int ext_lotes_load_text(struct ext_lotes *l, const char *text, size_t len,
                                      const char *source, struct lt_err *err);

#endif
