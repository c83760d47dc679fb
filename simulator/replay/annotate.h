/* annotate.h -- SLAs for the trace's tasks: the replay's --sla-annotate file (docs/simulator.md
 * "SLA annotation"; spec queue-sla-network.md 2.4 "Annotating trace jobs with SLAs" [REC]).
 *
 * The 2011 trace has no SLAs; Betser added an SLA field to the simulator's collections [B L501]
 * without saying how it was filled. The file gives rules, first match wins:
 *
 *   {"rules": [{"name": "prod", "band": "prod", "sla": "by-deadline:d1=1h,d2=2h"},
 *              {"name": "b2", "priority": [2, 3], "sched_class": 3,
 *               "sla": {"shape": "by-deadline", "pen": -1, "d1": "2x", "d2": "4x"}},
 *              {"name": "rest", "sla": "cheap-and-simple"}]}
 *
 * A rule selects by priority band ("free" 0-1, "batch" 2-8, "prod" 9-11; a name or a list),
 * priority (0..11, one or a list) and scheduling class (0..3, one or a list); the selectors given
 * must all match (none: every task). "sla" is an SLA text or an SLA object (docs/formats.md
 * "SLA files"). A time written Nx is N times the task's run-time estimate r-hat, the one the
 * replay's ordered queue keeps (the trace's run, or the window's end for an open task; times
 * the --estimate noise). by-deadline's d1 and d2 must be both relative or both absolute (a mix
 * breaks d1 <= d2 for some tasks). A task no rule matches has no SLA.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_ANNOTATE_H
#define SIM_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/slafile.h"
#include "lt_err.h"
#include "lt_sla.h"

#define SIM_ANNOT_MAX_RULES 32

struct sim_annot_rule {
    char name[SIM_SLA_NAME]; /* given, or "r<index + 1>" */
    uint16_t prio_mask;      /* bit p: priority p is selected */
    uint8_t class_mask;      /* bit c: scheduling class c is selected */
    struct lt_sla_spec spec;
};

struct sim_annot {
    struct sim_annot_rule rules[SIM_ANNOT_MAX_RULES];
    size_t n;
    char sha[17]; /* the file's content hash (FNV-1a 64, hex): shards of one sweep agree on it */
};

/* Reads the annotation file at path into *out. Errors name the file and the JSON path. */
LT_MUST_CHECK int sim_annot_load(const char *path, struct sim_annot *out, struct lt_err *err);

/* The first rule that selects a task of priority prio and scheduling class cls; -1 for none. */
int sim_annot_match(const struct sim_annot *a, int prio, int cls);

#endif
