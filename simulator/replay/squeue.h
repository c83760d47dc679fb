/* squeue.h -- the replay's queue of tasks that fit nowhere, searchable by free room.
 *
 * One array of slots per priority, in arrival order: every task gets a slot when it arrives
 * (sq_add) and keeps it until it leaves the simulation (sq_release), so a task that goes back
 * to the queue (a machine left) finds its place in arrival order again. A slot is active
 * while its task is queued. Over each array a segment tree keeps the component-wise minimum
 * request of the active slots of each group of SQ_GROUP slots, so sq_find returns the first
 * queued task (in arrival order, from a given slot on) whose request fits in a free vector
 * without scanning the queue: the replay calls it when a machine gains room. Released slots
 * are compacted away when they are half of an array; slots then move and the caller is told
 * through its callback. Memory: 4 bytes a slot, 24 more for a slot ever queued (its page of
 * requests), 6 for the tree (tests/unit/simulator/replay/test_squeue.c checks it against a plain
 * model).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_SQUEUE_H
#define SIM_SQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"

#define SQ_NONE UINT32_MAX

/* Slots per leaf of the segment tree: a leaf holds its group's minimum, and the slots' own
 * requests sit in a flat array written only when a slot is activated, so that the memory of
 * the many slots that are never queued (their tasks start on arrival) is never touched. */
#define SQ_GROUP 8

struct sq_level {
    uint32_t *item;     /* per slot: the caller's item, SQ_NONE when released */
    struct lt_res *req; /* per slot: its request, valid while active */
    uint8_t *active;    /* per group: bit j set iff slot group * SQ_GROUP + j is active */
    struct lt_res *mn;  /* segment tree, 2 * (cap / SQ_GROUP) nodes; leaf cap / SQ_GROUP + g
                         * is the minimum of group g's active requests */
    uint32_t n;         /* slots used */
    uint32_t cap;       /* slots allocated (power of two, a multiple of SQ_GROUP) */
    uint32_t released;  /* released slots among the n */
};

/* Called when compaction moves an item to a new slot. */
typedef void (*sq_moved_fn)(void *ctx, uint32_t item, uint32_t slot);

struct sq {
    struct sq_level *lv; /* one per priority */
    unsigned n_prio;
    size_t active; /* queued tasks */
    sq_moved_fn moved;
    void *ctx;
};

/* Returns 0 or -1 when out of memory. */
int sq_init(struct sq *q, unsigned n_prio, sq_moved_fn moved, void *ctx);
void sq_free(struct sq *q);

/* Appends an inactive slot for item at priority p; *slot receives it. May compact level p
 * first (callback). Returns 0 or -1 when out of memory (q unchanged). */
int sq_add(struct sq *q, unsigned p, uint32_t item, uint32_t *slot);

/* Queues (activates) or unqueues (deactivates) the slot's task; req must be finite, >= 0. */
void sq_activate(struct sq *q, unsigned p, uint32_t slot, const struct lt_res *req);
void sq_deactivate(struct sq *q, unsigned p, uint32_t slot);

/* The item left the simulation (its slot must be inactive). */
void sq_release(struct sq *q, unsigned p, uint32_t slot);

/* The first active slot s >= from of priority p whose request fits in free (every component
 * <= free), or SQ_NONE. */
uint32_t sq_find(const struct sq *q, unsigned p, uint32_t from, const struct lt_res *free);

/* Item of a slot; the component-wise minimum of the queued requests of priority p (all
 * HUGE_VAL when none). */
uint32_t sq_item(const struct sq *q, unsigned p, uint32_t slot);
/* True if slot (any number) of priority p is queued with a request that fits in free (every
 * component <= free). */
bool sq_slot_fits(const struct sq *q, unsigned p, uint32_t slot, const struct lt_res *free);
struct lt_res sq_min(const struct sq *q, unsigned p);

#endif
