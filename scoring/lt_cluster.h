/* lt_cluster.h -- the cluster model: resource vectors, machines, tasks, placements.
 *
 * A cluster is an array of machines, each with a capacity and the sum of the requests of the
 * tasks placed on it. Machines with equal capacity vectors share a configuration id (the
 * Google 2011 cell has ten configurations for 12,583 machines); the placement indexes are
 * built per configuration. Placing a task copies it into the cluster and returns a placement
 * id, the handle with which it is removed again. Policies (lt_score.h) read a cluster and may
 * attach an index to it; every mutation here keeps the attached indexes exact.
 *
 * Units: one unit system per cluster, chosen by the caller (Kubernetes: CPU millicores,
 * memory bytes, ephemeral-storage bytes; Google 2011 trace: normalised floats).
 *
 * Threading: one cluster is used by one thread at a time (STYLE.md R10).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_CLUSTER_H
#define LT_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"

/* A resource vector. Doubles throughout (DESIGN.md section 3). */
struct lt_res {
    double cpu;  /* CPU (k8s: millicores; trace: normalised) */
    double mem;  /* memory (k8s: bytes; trace: normalised) */
    double disk; /* local disk (k8s: ephemeral-storage bytes; trace: normalised) */
};

/* Returned by choose when no machine fits, and by lookups that find nothing. */
#define LT_NO_MACHINE SIZE_MAX

/* Most machines a cluster may hold: indexes store machine numbers as uint32_t. */
#define LT_MAX_MACHINES (UINT32_C(1) << 24)

/* Longest machine name, bytes without the NUL (a Kubernetes node name is at most 253). */
#define LT_MAX_NAME 253

/* A task as the caller describes it. The cluster copies it on placement. */
struct lt_task {
    int64_t id;         /* caller's task id (trace: job id * 2^20 + index, or any) */
    int64_t job_id;     /* job id; 0 if none */
    int priority;       /* 0..11 in the Google trace; Kubernetes spec.priority */
    int sched_class;    /* scheduling class (trace: 0..3) */
    struct lt_res req;  /* requested resources; every component finite and >= 0 */
    double mem_usage;   /* average memory usage, for memory eviction; 0 if unknown */
    int64_t arrival_us; /* first arrival (simulator time, microseconds) */
    int64_t start_us;   /* start of the current run (simulator time, microseconds) */
    uint32_t evictions; /* times evicted so far */
    bool sticky;        /* HYBRID sticky: never priority-evicted */
};

/* One machine as the caller describes it to lt_cluster_new / lt_cluster_add_machine. */
struct lt_machine_spec {
    const char *name;  /* unique, 1..LT_MAX_NAME bytes; copied */
    struct lt_res cap; /* capacity; every component finite and > 0 */
};

struct lt_cluster_spec {
    const struct lt_machine_spec *machines; /* borrowed for the call */
    size_t n_machines;                      /* may be 0 only if ref is given */
    struct lt_res ref; /* reference capacity for absolute-size buckets (sos*) and for the
                        * normalisation of brfs-*; all three 0 means "the component-wise
                        * maximum capacity of the machines given here". Machines added later
                        * never change it. */
    uint64_t seed;     /* seeds per-machine constants (randfirstfit's random order) */
};

struct lt_cluster;

/* Placement flags for lt_cluster_place. */
enum lt_place_flags {
    LT_PLACE_FORCE = 1 << 0 /* place even if the task does not fit (an overcommitted
                               snapshot); the machine then fits nothing until it has room */
};

/* Creates a cluster with the given machines, all online and empty; indexes 0..n-1 in spec
 * order. Returns an owned cluster (free with lt_cluster_free) or NULL with err set:
 * LT_EINVAL for a bad capacity (zero, negative, NaN, infinite), an empty or duplicate name,
 * or more than LT_MAX_MACHINES machines; LT_ENOMEM. */
struct lt_cluster *lt_cluster_new(const struct lt_cluster_spec *spec, struct lt_err *err);

/* Frees c, its placements and its attached indexes. NULL is a no-op. */
void lt_cluster_free(struct lt_cluster *c);

/* Appends a machine (online, empty); *out_index receives its index. Errors as for
 * lt_cluster_new; on error c is unchanged. O(n log n) when a policy index is attached. */
LT_MUST_CHECK int lt_cluster_add_machine(struct lt_cluster *c, const struct lt_machine_spec *m,
                                         size_t *out_index, struct lt_err *err);

/* Takes machine i offline (it then fits nothing and counts in no metric) or back online.
 * Only an empty machine may go offline (LT_EINVAL otherwise: remove its tasks first). */
LT_MUST_CHECK int lt_cluster_set_online(struct lt_cluster *c, size_t i, bool online,
                                        struct lt_err *err);

/* Places task t on machine i and returns its placement id in *out_pid. LT_ERANGE if t does
 * not fit on i (unless LT_PLACE_FORCE) or i is offline; LT_EINVAL for a bad request or index;
 * LT_ENOMEM. On error nothing changed. */
LT_MUST_CHECK int lt_cluster_place(struct lt_cluster *c, size_t i, const struct lt_task *t,
                                   unsigned flags, size_t *out_pid, struct lt_err *err);

/* Removes placement pid (returned by lt_cluster_place). LT_EINVAL if pid is not a live
 * placement. When the last task leaves a machine its allocation is reset to exactly zero, so
 * floating-point drift never makes an empty machine look used. */
LT_MUST_CHECK int lt_cluster_remove(struct lt_cluster *c, size_t pid, struct lt_err *err);

/* Validates a request vector: every component finite and >= 0. */
LT_MUST_CHECK int lt_res_check_request(const struct lt_res *r, const char *what,
                                       struct lt_err *err);

/* Validates a capacity vector: every component finite and > 0. */
LT_MUST_CHECK int lt_res_check_capacity(const struct lt_res *r, const char *what,
                                        struct lt_err *err);

/* Queries. i must be < lt_cluster_size(c); they are O(1). */
size_t lt_cluster_size(const struct lt_cluster *c);
size_t lt_cluster_n_online(const struct lt_cluster *c);
size_t lt_cluster_n_configs(const struct lt_cluster *c);
size_t lt_cluster_n_placements(const struct lt_cluster *c);
struct lt_res lt_cluster_ref(const struct lt_cluster *c);
uint64_t lt_cluster_seed(const struct lt_cluster *c);
const char *lt_cluster_name(const struct lt_cluster *c, size_t i); /* borrowed, valid while
                                                                      c lives */
uint32_t lt_cluster_config(const struct lt_cluster *c, size_t i);
struct lt_res lt_cluster_cap(const struct lt_cluster *c, size_t i);
struct lt_res lt_cluster_alloc(const struct lt_cluster *c, size_t i);
struct lt_res lt_cluster_free_res(const struct lt_cluster *c, size_t i); /* cap - alloc */
size_t lt_cluster_n_tasks(const struct lt_cluster *c, size_t i);
bool lt_cluster_online(const struct lt_cluster *c, size_t i);

/* True if machine i is online and t's request fits in its free resources in every
 * component (free >= request). The one definition of "fits" all policies use. */
bool lt_cluster_fits(const struct lt_cluster *c, size_t i, const struct lt_res *req);

/* Kubernetes' reading of "fits" (NodeResourcesFit's fitsRequest): every component that req
 * asks for (> 0) fits in free (free >= req); a component req does not ask for is not checked,
 * so a machine overcommitted in cpu (free cpu < 0) still takes a task that requests only
 * memory. Where free >= 0 in every component this is exactly lt_cluster_fits' test. The
 * extender decides with it; the simulator keeps lt_cluster_fits (its trace tasks may request
 * 0 of a resource, and its results do not change). */
bool lt_res_fits_requested(const struct lt_res *free, const struct lt_res *req);

/* True if machine i is online and req fits its free resources by lt_res_fits_requested. */
bool lt_cluster_fits_requested(const struct lt_cluster *c, size_t i, const struct lt_res *req);

/* Index of the machine named name, or LT_NO_MACHINE. O(1) expected. */
size_t lt_cluster_find(const struct lt_cluster *c, const char *name);

/* Placements: the machine of pid and a borrowed pointer to its task copy (valid until the
 * placement is removed). pid must be live (lt_cluster_placement_live). */
bool lt_cluster_placement_live(const struct lt_cluster *c, size_t pid);
size_t lt_cluster_placement_machine(const struct lt_cluster *c, size_t pid);
const struct lt_task *lt_cluster_placement_task(const struct lt_cluster *c, size_t pid);

/* Iterates the placements on machine i, most recently placed first:
 * for (p = lt_cluster_first_placement(c, i); p != LT_NO_MACHINE;
 *      p = lt_cluster_next_placement(c, p)). Removing p during the walk is allowed after
 * reading its successor. */
size_t lt_cluster_first_placement(const struct lt_cluster *c, size_t i);
size_t lt_cluster_next_placement(const struct lt_cluster *c, size_t pid);

/* Evaluation helpers (Stein et al., "Machine Fragmentation"): the number of online machines
 * m with free_cpu(m) < (x/100) * cap_cpu(m) and free_ram(m) < (x/100) * cap_ram(m), for x in
 * [0, 100] (LT_EINVAL otherwise); and the number of online machines with no task. O(n). */
LT_MUST_CHECK int lt_cluster_fragmentation(const struct lt_cluster *c, double x_pct,
                                           size_t *out_count, struct lt_err *err);
size_t lt_cluster_unused(const struct lt_cluster *c);

/* All of a time-series sample's machine figures in one pass (a simulator samples every few
 * minutes of simulated time; six passes cost six reads of every machine): the online
 * machines, the unused ones (as lt_cluster_unused), the sums of capacity and of allocation
 * over the online machines in index order, and for each of the n_pct thresholds pct[k] the
 * count lt_cluster_fragmentation(c, pct[k]) gives. n_pct <= LT_CENSUS_MAX_PCT; a threshold
 * outside [0, 100], too many of them or a NULL argument is LT_EINVAL. O(n). */
#define LT_CENSUS_MAX_PCT 8
struct lt_census {
    size_t online;
    size_t unused;
    struct lt_res cap;   /* sum over the online machines */
    struct lt_res alloc; /* likewise */
    size_t frag[LT_CENSUS_MAX_PCT];
};
LT_MUST_CHECK int lt_cluster_census(const struct lt_cluster *c, const double *pct, size_t n_pct,
                                    struct lt_census *out, struct lt_err *err);

/* Recomputes every invariant of c and of its attached indexes the slow way: allocations
 * equal the sums of placed requests (within 1e-9 of capacity), configuration ids, task
 * counts, the name table, each index's own invariants. Returns 0 or LT_EINVAL with a message
 * naming the first broken invariant. O(n) or more; for tests and debug builds (R15). */
LT_MUST_CHECK int lt_cluster_check(const struct lt_cluster *c, struct lt_err *err);

#endif
