/* lt_lotes.h -- LoTES: the allocation LP, non-dominated bins, the machine-assignment LP and
 * the two-level dispatcher, and the tables that carry them from the offline stages to the
 * online dispatcher.
 *
 * Source: Tran and Beck, "Google data center scheduling" (LoTES, Long Term Evaluation
 *   Scheduling; ../shared/papers/tran-beck-google-datacenter-scheduling-lotes.txt): section
 *   4.1 (allocation LP, constraints 1-4), section 4.2 (Algorithm 1, the machine-assignment LP,
 *   constraints 5-8), section 4.3 (the dispatcher), section 5 (Table 1, Table 3).
 * Definition: stage 1 maximises the arrival rate lambda that a fluid model of the cluster
 *   keeps stable, giving delta*_jkl, the share of resource l of configuration j devoted to
 *   class k. Stage 2 enumerates, per configuration j, the non-dominated bins (maximal sets of
 *   whole expected tasks of the classes with delta*_jk > 0 that fit one machine), then
 *   assigns each of the n_j machines of j to a bin by a second LP, rounded here to whole
 *   machines. Stage 3 sends a class-k task to configuration j with probability rho_jk and then
 *   to a machine of j (first fit, else anywhere with room, else the shortest queue).
 * Readings (docs/lotes.md gives each argument):
 *   - resources are the components of struct lt_res that some class requests (> 0); a
 *     resource no class requests (disk in Tables 1+3) is no constraint;
 *   - a class's request of 0 for an active resource gives delta_jkl = 0 for it and makes
 *     constraint (2) relate only the requested resources;
 *   - in the assignment LP the rows of constraint (5) for the resources of one class are
 *     copies of one another scaled by r_kl (Delta_jkl = r_kl sum_i N_ijk x_ij), so one row per
 *     class is solved; Delta is recomputed from x;
 *   - whole machines: per configuration, largest remainder of x_ij (ties to the lower bin);
 *     rho_jk and A^j come from the rounded assignment, so every configuration that level 1
 *     picks for class k has a machine whose bin serves k;
 *   - machines of a configuration take bins in index order: the first m_1j machines of j
 *     emulate bin 1, the next m_2j bin 2, and so on (lt_lotes_machine_bins);
 *   - "room now" in level 2 searches every machine in index order (first fit); a queue is
 *     joined only on a machine whose capacity holds the task.
 * Ties: level 2 first fit takes the lowest machine index; shortest-queue ties are broken
 *   uniformly at random with the caller's lt_rng (section 4.3).
 * Tests: tests/unit/lotes/test_lotes.c.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_LOTES_H
#define LT_LOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"
#include "lt_err.h"
#include "lt_rng.h"

/* Longest class or configuration name, bytes without the NUL. */
#define LT_LOTES_MAX_NAME 63

/* Most classes and configurations: the LP sizes grow with their product; Tables 1+3 are 8 x 10. */
#define LT_LOTES_MAX_CLASSES 64
#define LT_LOTES_MAX_CONFIGS 256

/* Most non-dominated bins per configuration. The paper reports "thousands" for Tables 1+3
 * after the allocation LP has pruned the classes; a million bins is ~30 MB of counts and an LP
 * GLPK still solves, beyond that Algorithm 1's exhaustive search is the wrong tool. */
#define LT_LOTES_MAX_BINS 1000000

/* Most tasks of one class that may fit one machine of a configuration (capacity over request,
 * on the tightest resource): lt_lotes_problem_check rejects a class that requests less, which
 * is a unit mistake (cores against millicores), not a workload; Table 3 gives at most 300. */
#define LT_LOTES_MAX_FIT 1000000

/* Most machines per configuration (the counts are stored as uint32_t in the tables file). */
#define LT_LOTES_MAX_MACHINES LT_MAX_MACHINES

/* A job class (Table 3: one row). */
struct lt_lotes_class {
    char name[LT_LOTES_MAX_NAME + 1]; /* unique, non-empty */
    double alpha;                     /* alpha_k: probability that a job is of this class, > 0 */
    double mu;                        /* mu_k: service rate, tasks per unit time, > 0 */
    struct lt_res req;                /* r_k: expected request; >= 0, not all 0 */
};

/* A machine configuration (Table 1: one row). */
struct lt_lotes_config {
    char name[LT_LOTES_MAX_NAME + 1]; /* unique, non-empty */
    struct lt_res cap;                /* c_j: capacity of one machine; > 0 on every resource
                                       * some class requests, >= 0 elsewhere */
    size_t n;                         /* n_j: machines, 1..LT_LOTES_MAX_MACHINES */
};

/* The input of every stage. Borrowed for the duration of each call. */
struct lt_lotes_problem {
    const struct lt_lotes_class *classes;  /* K classes */
    size_t n_classes;                      /* 1..LT_LOTES_MAX_CLASSES */
    const struct lt_lotes_config *configs; /* M configurations */
    size_t n_configs;                      /* 1..LT_LOTES_MAX_CONFIGS */
};

/* Checks a problem: counts, names (non-empty, unique), finite positive alpha and mu, a class
 * that requests nothing ("empty class"), a zero capacity on a requested resource, and a class
 * whose expected task fits no machine of any configuration. Returns 0 or LT_EINVAL naming the
 * class or configuration. */
int lt_lotes_problem_check(const struct lt_lotes_problem *p, struct lt_err *err) LT_MUST_CHECK;

/* Table 1 (10 configurations, 1000 machines each; cores and RAM, disk 0) and Table 3 (8
 * classes: proportion, cores, RAM; mu = 1 / expected processing time in hours, so lambda is in
 * jobs per hour). Fills caller storage; names are "1".."10" and "1".."8" as in the paper. */
#define LT_LOTES_TABLE1_CONFIGS 10
#define LT_LOTES_TABLE3_CLASSES 8
void lt_lotes_table1(struct lt_lotes_config out[LT_LOTES_TABLE1_CONFIGS]);
void lt_lotes_table3(struct lt_lotes_class out[LT_LOTES_TABLE3_CLASSES]);
/* Table 3's coefficients of variation of the normal demands (cpu: cores, mem: RAM; disk 0),
 * for the simulator's workload; the tables do not use them. */
void lt_lotes_table3_cv(struct lt_res out[LT_LOTES_TABLE3_CLASSES]);

/* ---- Stage 1: the allocation LP (lp.c) ---------------------------------------------------- */

/* Solves the allocation LP (constraints 1-4) with GLPK's simplex, silently. On success sets
 * *lambda to lambda* (> 0) and delta[j * n_classes + k] to delta*_jk (one share per resource;
 * 0 on resources the class does not request); delta has n_configs * n_classes entries.
 * Errors: LT_EINVAL (lt_lotes_problem_check), LT_ENOMEM, LT_EINFEASIBLE when GLPK finds no
 * optimum or the optimum is degenerate (lambda* = 0), naming the LP ("lotes/allocation"). */
int lt_lotes_alloc_solve(const struct lt_lotes_problem *p, double *lambda, struct lt_res *delta,
                         struct lt_err *err) LT_MUST_CHECK;

/* ---- Stage 2: bins, the machine-assignment LP, whole machines (bins.c) --------------------- */

/* Algorithm 1 for configuration j: every non-dominated bin of the classes k with use[k]
 * true whose expected task fits an empty machine of j. A bin is a vector of task counts per
 * class (n_classes entries, 0 for the classes not used) whose total expected request fits c_j;
 * it is non-dominated when no class's task fits in what it leaves (equivalently, no other
 * feasible bin holds a superset of its tasks). With no usable class the single bin is empty.
 * Bins come in Algorithm 1's order (greedy fill in class order, then backtrack), i.e. their
 * count vectors in decreasing lexicographic order.
 * On success *out (owned, free with lt_free) holds *n_out * n_classes counts.
 * Errors: LT_EINVAL for bad arguments, LT_ENOMEM, LT_ERANGE when more than max_bins bins
 * (at most LT_LOTES_MAX_BINS) exist, naming the configuration. */
int lt_lotes_bins_enum(const struct lt_lotes_problem *p, size_t j, const bool *use, size_t max_bins,
                       uint32_t **out, size_t *n_out, struct lt_err *err) LT_MUST_CHECK;

/* Rounds n_x non-negative reals that sum to n (within 1e-6 * max(1, n)) to whole numbers
 * that sum to exactly n, each within 1 of its real: floor, then the remaining units to the
 * largest fractional parts, ties to the lower index. out has n_x entries.
 * Errors: LT_EINVAL for a negative, non-finite or mis-summed input. (online.c: no GLPK.) */
int lt_lotes_round(const double *x, size_t n_x, size_t n, size_t *out,
                   struct lt_err *err) LT_MUST_CHECK;

/* ---- The tables: everything the dispatcher needs (lt_lotes_build in bins.c; tables.c) ---- */

/* Read-only after construction; every array is owned by the tables. Indexing: [j * K + k]
 * for configuration j and class k; bins of configuration j are bin_first[j] ..
 * bin_first[j + 1] - 1, and bin b's task counts are bin_tasks[b * K .. b * K + K - 1]. */
struct lt_lotes_tables {
    size_t n_classes;                /* K */
    size_t n_configs;                /* M */
    struct lt_lotes_class *classes;  /* K classes, copied from the problem */
    struct lt_lotes_config *configs; /* M configurations, copied from the problem */
    double lambda_alloc;             /* lambda* of the allocation LP (stage 1) */
    double lambda_assign;            /* lambda of the machine-assignment LP (<= lambda_alloc) */
    double lambda_rounded;           /* lambda the whole-machine assignment sustains:
                                      * min_k mu_k sum_{j,b} N_bk m_b / alpha_k */
    struct lt_res *delta;            /* M x K: delta*_jk per resource (stage 1) */
    double *rho;                     /* M x K: rho_jk; each class's column sums to 1 */
    size_t n_bins;                   /* bins over all configurations */
    size_t *bin_first;               /* M + 1 entries, bin_first[0] = 0, [M] = n_bins */
    uint32_t *bin_tasks;             /* n_bins x K: N_bk, tasks of class k in bin b */
    double *bin_x;                   /* n_bins: x_b of the assignment LP (machines, real) */
    size_t *bin_machines;            /* n_bins: m_b, whole machines; sum over the bins of j
                                      * is n_j */
};

/* Runs stages 1 and 2 on a problem. Returns owned tables (free with lt_lotes_tables_free) or
 * NULL with err set: LT_EINVAL (the problem), LT_ENOMEM, LT_ERANGE (too many bins, naming the
 * configuration), LT_EINFEASIBLE (an LP without an optimum, or a class that no machine serves
 * after rounding, naming the class). */
struct lt_lotes_tables *lt_lotes_build(const struct lt_lotes_problem *p, struct lt_err *err);

/* Frees t and everything it owns; NULL is a no-op. */
void lt_lotes_tables_free(struct lt_lotes_tables *t);

/* Checks every invariant of t (the problem's checks, shapes, rho columns sum to 1 within
 * 1e-6, every bin fits its configuration, machines sum to n_j, rho_jk > 0 only where a bin
 * with m_b > 0 serves k). Returns 0 or LT_EINVAL naming what is wrong. */
int lt_lotes_tables_check(const struct lt_lotes_tables *t, struct lt_err *err) LT_MUST_CHECK;

/* ---- Tables as JSON (tables.c; format in docs/lotes.md) ------------------------------------ */

/* Encodes t as the documented JSON document. Returns an owned NUL-terminated string (free
 * with lt_free) or NULL with err set (LT_ENOMEM). */
char *lt_lotes_tables_dump(const struct lt_lotes_tables *t, struct lt_err *err);

/* Decodes and checks a tables document of len bytes. source names it in errors (a file name;
 * NULL means "<tables>"); errors are LT_EPARSE with line and column for malformed JSON, and
 * LT_EPARSE or LT_EINVAL with the JSON path ("$.bins[2][0].machines") for a document that
 * does not describe valid tables; LT_ENOMEM. Returns owned tables or NULL. */
struct lt_lotes_tables *lt_lotes_tables_parse(const char *text, size_t len, const char *source,
                                              struct lt_err *err);

/* ---- Stage 3: the dispatcher (dispatch.c) -------------------------------------------------- */

/* One machine as the caller sees it at dispatch time. */
struct lt_lotes_machine {
    size_t config;      /* configuration index into the tables; LT_LOTES_NONE (with bin) for a
                         * machine the tables do not describe: the dispatchers use it only
                         * when its free resources hold the task ("any room") */
    size_t bin;         /* the bin it emulates: a global bin index of its configuration */
    struct lt_res free; /* free resources now */
    size_t queue_len;   /* tasks waiting in its queue */
    size_t running;     /* tasks running on it (only the greedy benchmark reads it) */
};

/* Maps machines to bins: config[i] is machine i's configuration; the machines of
 * configuration j, in index order, take its bins in order, m_b machines each. bin_out has n
 * entries. LT_EINVAL when a configuration index is out of range or the number of machines of
 * some configuration differs from n_j (naming the configuration). */
int lt_lotes_machine_bins(const struct lt_lotes_tables *t, const size_t *config, size_t n,
                          size_t *bin_out, struct lt_err *err) LT_MUST_CHECK;

/* ---- Online use over a live cluster (online.c; docs/lotes.md "Online use") ----------------- */

/* A machine without a configuration or a bin of the tables (lt_lotes_map_machines). */
#define LT_LOTES_NONE SIZE_MAX

/* Relative tolerance when matching a machine's capacity to a configuration's: node
 * allocatables are integers (millicores, bytes) that a tables file writes with 17 significant
 * digits, so equal capacities agree to ~1e-16; 1e-6 also absorbs a capacity that was rounded
 * to 7 digits by hand, and is far below any real difference between machine types. */
#define LT_LOTES_CAP_RTOL 1e-6

/* The class of a task requesting *req: the class k minimising
 * sum_l ((req_l - r_kl) / N_l)^2 over the resources l with N_l > 0, where N_l is the largest
 * capacity of any configuration on resource l (so cpu and mem weigh alike whatever their
 * units); ties to the lower class index. req must be in the tables' units. Sets *k_out.
 * LT_EINVAL for NULL arguments or a request that is not finite and >= 0. O(K). */
int lt_lotes_classify(const struct lt_lotes_tables *t, const struct lt_res *req, size_t *k_out,
                      struct lt_err *err) LT_MUST_CHECK;

/* The tables' view of n machines of capacities cap[0..n-1], given in the order in which they
 * take bins (the extender passes node-name order). config_out[i] is the first configuration
 * whose capacity equals cap[i] within LT_LOTES_CAP_RTOL on cpu, mem and disk (a resource the
 * configuration leaves at 0 and no class requests is not compared), or LT_LOTES_NONE.
 * bin_out[i] is a global bin index of that configuration, or LT_LOTES_NONE for a machine
 * without a configuration. A live cluster rarely has exactly n_j machines of
 * configuration j, so the p_j machines present share j's bins in proportion to the tables'
 * whole machines: bin b gets lt_lotes_round of m_b p_j / n_j machines (the counts sum to p_j),
 * and the machines of j take the bins in order, that many each. With p_j = n_j for every j
 * this equals lt_lotes_machine_bins. Errors: LT_EINVAL (NULL arguments, a capacity not
 * finite and >= 0, naming the machine), LT_ENOMEM. O(n M + bins). */
int lt_lotes_map_machines(const struct lt_lotes_tables *t, const struct lt_res *cap, size_t n,
                          size_t *config_out, size_t *bin_out, struct lt_err *err) LT_MUST_CHECK;

/* The configurations of n machines of capacities cap[0..n-1]: machines of equal capacity
 * (exactly) form one, in order of first appearance, named "cpu<c>-mem<m>-disk<d>" (%g), n_j
 * their count; a machine with no cpu or no memory (> 0) is left out. Fills out[0..*n_out-1].
 * Errors: LT_ERANGE when there are more than max configurations, LT_EINVAL for NULL
 * arguments or a capacity that is not finite. O(n M). */
int lt_lotes_configs_from_caps(const struct lt_res *cap, size_t n, struct lt_lotes_config *out,
                               size_t max, size_t *n_out, struct lt_err *err) LT_MUST_CHECK;

/* Table 3 with the requests divided by Table 1's largest configuration (24 cores, 32 GB RAM):
 * the units of the Google 2011 trace, whose largest machine is 1 in cpu and in memory. */
void lt_lotes_table3_normalised(struct lt_lotes_class out[LT_LOTES_TABLE3_CLASSES]);

/* Scores the n machines of view for a class-k task requesting *req without drawing, in the
 * order of the dispatcher's preference (section 4.3; lower is better, as lt_policy_rank):
 *   - free resources that do not hold req: LT_SCORE_INFEASIBLE (HUGE_VAL);
 *   - configuration j with rho_jk > 0 and a bin that serves k (level 2's first-fit set when
 *     level 1 draws j, which it does with probability rho_jk): 1 - rho_jk;
 *   - any other machine with room (level 2's "any room"): 1.
 * view[i].config and .bin may be LT_LOTES_NONE (a machine the tables do not describe: it can
 * only be "any room"); queue_len is not read. tiebreak (NULL: none) holds a secondary score
 * per machine, lower better (the placement policy's raw scores); a non-finite entry makes the
 * machine infeasible, and otherwise scores[i] += delta (tiebreak[i] - lo) / (hi - lo), lo and
 * hi over the feasible machines, delta half the smallest gap between the distinct scores
 * above, so the tie-break orders machines inside a group and never across groups.
 * Errors: LT_EINVAL (NULL arguments, k out of range, a bad request, a configuration or bin that
 * does not match the tables, naming the machine). O(n + M log M). */
int lt_lotes_rank(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view, size_t n,
                  size_t k, const struct lt_res *req, const double *tiebreak, double *scores,
                  struct lt_err *err) LT_MUST_CHECK;

/* Level 1: draws configuration j for a class-k task with probability rho_jk (one uniform
 * draw u from rng; j is the first with u < rho_0k + ... + rho_jk; rounding slack at the end of
 * the column goes to the last configuration with rho_jk > 0). LT_EINVAL for k out of range. */
int lt_lotes_pick_config(const struct lt_lotes_tables *t, size_t k, struct lt_rng *rng,
                         size_t *j_out, struct lt_err *err) LT_MUST_CHECK;

/* How level 2 placed the task. */
enum lt_lotes_how {
    LT_LOTES_FIRST_FIT = 0, /* started now on a machine of j whose bin serves k */
    LT_LOTES_ANY_ROOM = 1,  /* started now on another machine with room */
    LT_LOTES_QUEUED = 2,    /* joined the shortest queue of j's machines serving k */
    LT_LOTES_QUEUED_ANY = 3 /* no machine of j serves k and holds the task: joined the shortest
                             * queue among all machines whose capacity holds it */
};

struct lt_lotes_choice {
    size_t config;         /* configuration drawn by level 1 */
    size_t machine;        /* index into the view; LT_NO_MACHINE when no machine's capacity
                            * holds the task */
    enum lt_lotes_how how; /* which rule chose it */
};

/* Dispatches one class-k task requesting *req over the n machines of view (section 4.3):
 * level 1 (lt_lotes_pick_config), then level 2: first fit over the machines of j whose bin
 * serves k; else the first machine of the whole view with room now; else the shortest queue
 * among the machines of j whose bin serves k and whose capacity holds the task, ties uniformly
 * at random; else the same over every machine. Reads view, draws from rng. O(n).
 * Returns 0 (choice->machine may be LT_NO_MACHINE) or LT_EINVAL for a bad argument or view. */
int lt_lotes_dispatch(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view,
                      size_t n, size_t k, const struct lt_res *req, struct lt_rng *rng,
                      struct lt_lotes_choice *choice, struct lt_err *err) LT_MUST_CHECK;

/* lt_lotes_dispatch over a view kept inside an index, for a caller that dispatches many tasks
 * over many machines whose state changes a few machines at a time (the trace replay). The
 * index copies the view (configurations and bins are fixed from then on) and keeps, over the
 * machines in index order, a segment tree of the component-wise maximum free vector: one over
 * every machine (the "any room" rule) and one per (configuration j, class k) over the machines
 * of j whose bin serves k (first fit), so each of the two rules costs O(log n) when some box
 * holds the task, more only on a fragmented view. The shortest-queue rules read the queue
 * length of each candidate in index order, as lt_lotes_dispatch does, to draw the same numbers.
 * Answers and draws are lt_lotes_dispatch's on the same view, machine for machine
 * (lt_lotes_index_check; tests/unit/lotes/test_lotes.c compares the two). */
struct lt_lotes_index;

/* A new index over the n machines of view (checked as lt_lotes_dispatch checks it) for tables
 * t, which must outlive it. NULL and LT_EINVAL or LT_ENOMEM on failure. O(n K log n). */
struct lt_lotes_index *lt_lotes_index_new(const struct lt_lotes_tables *t,
                                          const struct lt_lotes_machine *view, size_t n,
                                          struct lt_err *err);
void lt_lotes_index_free(struct lt_lotes_index *ix); /* NULL-safe */

/* Machine i's free resources and queue length are now *free and queue_len (i < n; a machine
 * that may take no task, such as an offline one, has a negative free vector). O(K log n). */
void lt_lotes_index_set(struct lt_lotes_index *ix, size_t i, const struct lt_res *free,
                        size_t queue_len);

/* lt_lotes_dispatch(t, view, n, k, req, rng, choice, err) on the index's view. */
int lt_lotes_index_dispatch(const struct lt_lotes_index *ix, size_t k, const struct lt_res *req,
                            struct lt_rng *rng, struct lt_lotes_choice *choice,
                            struct lt_err *err) LT_MUST_CHECK;

/* Rules (a) and (b) of lt_lotes_index_dispatch only, for a caller that starts a task now or
 * not at all (the trace replay, whose own queue replaces rules (c) and (d)): choice->how is
 * LT_LOTES_FIRST_FIT or LT_LOTES_ANY_ROOM with the machine, or LT_LOTES_QUEUED with
 * LT_NO_MACHINE when no machine has room, and then rng is left as it was (the configuration's
 * draw is taken back), as a placement policy's choose draws nothing when nothing fits. */
int lt_lotes_index_dispatch_now(const struct lt_lotes_index *ix, size_t k, const struct lt_res *req,
                                struct lt_rng *rng, struct lt_lotes_choice *choice,
                                struct lt_err *err) LT_MUST_CHECK;

/* True iff some machine's free vector holds req (rule (b)'s test), without a draw. */
bool lt_lotes_index_any_room(const struct lt_lotes_index *ix, const struct lt_res *req);

/* Checks the index against view (n machines): the same machines, free vectors and queue
 * lengths, and every tree node the join of its children. LT_EINVAL naming the first
 * difference. O(n K). */
int lt_lotes_index_check(const struct lt_lotes_index *ix, const struct lt_lotes_machine *view,
                         size_t n, struct lt_err *err) LT_MUST_CHECK;

/* The paper's benchmark (section 5): "a naive scheduler that greedily assigns tasks to the
 * machine with the shortest queue with sufficient resources to handle the job", FIFO per
 * machine, "resource-unaware". Two readings (docs/lotes.md):
 *   LT_LOTES_GREEDY_ROOM: among the machines whose free resources hold the task now, the
 *     shortest queue (queue_len); else among those whose capacity holds it;
 *   LT_LOTES_GREEDY_JSQ: join the shortest queue counting every task on the machine (running
 *     + queue_len) among those whose capacity holds it, free resources unseen.
 * Ties uniformly at random. how is LT_LOTES_ANY_ROOM when the chosen machine's free resources
 * hold the task and its queue is empty (the task starts), else LT_LOTES_QUEUED_ANY (it joins
 * the FIFO queue). The tables give only the machines' capacities. choice->machine is
 * LT_NO_MACHINE when no capacity holds the task. O(n). LT_EINVAL for a bad argument or view. */
enum lt_lotes_greedy_rule { LT_LOTES_GREEDY_ROOM = 0, LT_LOTES_GREEDY_JSQ = 1 };

int lt_lotes_greedy(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view, size_t n,
                    enum lt_lotes_greedy_rule rule, const struct lt_res *req, struct lt_rng *rng,
                    struct lt_lotes_choice *choice, struct lt_err *err) LT_MUST_CHECK;

#endif
