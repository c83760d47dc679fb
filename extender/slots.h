/* slots.h -- lotus-extender's slot mode: slot limits per node, priority classes, the sticky pool.
 *
 * The slot model of Cavdar ch. 6-9 (lt_slots.h) on a Kubernetes cluster: a node runs at most
 * `limit` pods whatever their requests. The limit comes from the node's allocatable CPU
 * (`--slots capacity`: lt_slot_count_sc, SC<level> with `--slots-cpu-unit` cores as one unit of
 * normalised CPU) or from a slots file (`--slots file`, docs/formats.md "Slots file"). A pod's
 * priority class 0..11 comes from its spec.priority through `--priority-classes` (11 ascending
 * thresholds). The policy itself (free slot, WAA tiers, victims) is the library's; this module
 * only holds the settings and answers "what is node X's limit". docs/extender.md "Slot mode".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_SLOTS_H
#define EXT_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lt_err.h"

#define EXT_SLOTS_MAX     1000000 /* largest slot count of one node (a sanity bound) */
#define EXT_SLOTS_CLASSES 12      /* the thesis' priority classes 0..11 */

enum ext_slots_mode { EXT_SLOTS_OFF = 0, EXT_SLOTS_CAPACITY, EXT_SLOTS_FILE };

/* One node of a slots file. */
struct ext_slots_node {
    char *name;      /* owned */
    uint32_t slots;  /* 1..EXT_SLOTS_MAX */
    bool production; /* holds WASC's production slots (informational: WAA ranks by power) */
};

/* Caller storage; init, fill (ext_slots_set_mode, ..._load_file), release. */
struct ext_slots {
    enum ext_slots_mode mode;
    int level;                    /* capacity: SC level 1..4 */
    int64_t cpu_unit_milli;       /* capacity: millicores of one unit of normalised CPU, > 0 */
    struct ext_slots_node *nodes; /* file: owned, sorted by name */
    size_t n_nodes;
    uint32_t def_slots; /* file: "default" (0: a node the file does not name has no slot) */
    int32_t thresholds[EXT_SLOTS_CLASSES - 1]; /* class(p) = #{k : thresholds[k] <= p} */
    int64_t sticky;                            /* HYBRID's sticky pool, pods (0: none) */
};

/* Mode off, SC3, one unit = 1 core, no file, thresholds 1..11 (spec.priority 0..11 is its own
 * class), no sticky pool. */
void ext_slots_init(struct ext_slots *s);
void ext_slots_release(struct ext_slots *s);

/* "off", "capacity" or "file"; LT_ENOTFOUND naming the known modes. */
LT_MUST_CHECK int ext_slots_parse_mode(const char *text, enum ext_slots_mode *out,
                                       struct lt_err *err);

/* Parses 11 comma-separated ascending integers (int32) into thresholds; LT_EPARSE naming the
 * bad element, or LT_EINVAL if they are not strictly ascending. */
LT_MUST_CHECK int ext_slots_parse_classes(const char *text, int32_t out[EXT_SLOTS_CLASSES - 1],
                                          struct lt_err *err);

/* Reads the slots file at path into s (nodes, default); errors name the file and the JSON path,
 * e.g. "slots.json: nodes[\"n1\"].slots: expected an integer 1..1000000, got \"x\"". */
LT_MUST_CHECK int ext_slots_load_file(struct ext_slots *s, const char *path, struct lt_err *err);

/* The same from a parsed document (borrowed); source names it in messages. */
LT_MUST_CHECK int ext_slots_load_json(struct ext_slots *s, const json_t *root, const char *source,
                                      struct lt_err *err);

/* The priority class 0..11 of a pod of spec.priority prio. */
int ext_slots_class(const struct ext_slots *s, int32_t prio);

/* Node name's slot limit with cpu_milli millicores of allocatable CPU: capacity mode
 * lt_slot_count_sc(level, cpu_milli / cpu_unit_milli) (0 if the node has no CPU), file mode
 * the file's entry or default (0 if neither), off 0. 0 means "no slot": the filter refuses
 * the node. */
uint32_t ext_slots_limit(const struct ext_slots *s, const char *name, double cpu_milli);

#endif
