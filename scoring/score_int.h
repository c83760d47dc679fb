/* score_int.h -- library-internal declarations of scoring/: the cluster's fields, the policy
 * table and the index interface. Front ends never include this (STYLE.md R1); unit tests may.
 *
 * An index is attached to a cluster by lt_policy_attach and owned by it. Every mutation of a
 * machine's state (free vector or online flag) runs in two steps across all attached indexes:
 *   prepare(ix, c, i, new state)  may allocate and may fail; changes nothing observable;
 *   commit(ix, c, i, old state)   runs after the cluster field changed; cannot fail.
 * If any prepare fails the cluster changes nothing, so a failed placement leaves no trace.
 * Adding a machine rebuilds the indexes (rare: machine events, not placements).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_SCORE_INT_H
#define LT_SCORE_INT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"
#include "lt_score.h"

#define LT__CLUSTER_MAGIC 0x6c74636cu /* "ltcl" */

_Static_assert(LT_MAX_MACHINES <= UINT32_MAX, "machine index must fit in uint32_t");

struct lt__machine {
    struct lt_res cap;   /* capacity */
    struct lt_res alloc; /* sum of requests of the placements on it; exactly 0 when empty */
    uint32_t config;     /* configuration id: index into lt_cluster.cfg */
    uint32_t n_tasks;    /* live placements on it */
    bool online;         /* offline machines fit nothing and count in no metric */
    double rkey;         /* randfirstfit key in [0, 1): hash of (cluster seed, name) */
    char *name;          /* owned, unique */
    size_t first_pid;    /* most recent placement on it, or LT_NO_MACHINE */
};

struct lt__config {
    struct lt_res cap;   /* the capacity shared by its machines */
    uint32_t n_machines; /* machines with this configuration (online or not) */
};

struct lt__placement {
    struct lt_task task; /* the caller's task, copied */
    uint32_t machine;    /* where it runs */
    bool live;           /* false: on the free list */
    size_t prev, next;   /* per-machine list (newest first); next doubles as free-list link */
};

/* Placements live in fixed chunks that never move, so a task pointer stays valid while its
 * placement lives. */
#define LT__PL_CHUNK 1024

struct lt_index;

struct lt__index_ops {
    /* Machine i is about to change to free vector *nf and online flag non. May reserve
     * memory; must not change anything a query can see. 0 or LT_ENOMEM. */
    int (*prepare)(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                   const struct lt_res *nf, bool non);
    /* Machine i has changed (c holds the new state); *of / oon is the old state. */
    void (*commit)(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                   const struct lt_res *of, bool oon);
    /* Recomputes the index's invariants from c the slow way. 0 or LT_EINVAL with a message. */
    int (*check)(const struct lt_index *ix, const struct lt_cluster *c, struct lt_err *err);
    void (*free)(struct lt_index *ix);
};

/* Base of every concrete index (first member). */
struct lt_index {
    const struct lt__index_ops *ops;
    const struct lt_policy *policy; /* the policy it serves */
    uint64_t serial; /* set by the cluster: no two of its indexes share one (lt_choose_hint) */
};

/* A policy is a const table of functions plus one registration entry in policy.c (R18). */
struct lt_policy {
    const char *name; /* "bestfit2" */
    int (*rank)(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                const size_t *cand, size_t n, unsigned flags, struct lt_rng *rng, double *scores,
                struct lt_err *err); /* flags: enum lt_rank_flags (lt__rank_free) */
    int (*choose)(const struct lt_policy *p, const struct lt_index *ix, const struct lt_cluster *c,
                  const struct lt_task *t, struct lt_rng *rng, struct lt_choose_hint *hint,
                  size_t *out, struct lt_err *err);
    int (*index_new)(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                     struct lt_err *err);
    const void *params; /* per-policy constants: score function, bucket counts */
};

struct lt_cluster {
    uint32_t magic;            /* LT__CLUSTER_MAGIC while alive */
    struct lt__machine *m;     /* machines [0, n) */
    size_t n, m_cap;           /* count and allocated */
    size_t n_online;           /* online machines */
    struct lt__config *cfg;    /* configurations [0, n_cfg) */
    size_t n_cfg, cfg_cap;     /* count and allocated */
    struct lt__placement **pl; /* placement slab in chunks of LT__PL_CHUNK: [0, pl_used) */
    size_t pl_used, pl_cap;    /* slots handed out and allocated */
    size_t pl_free;            /* head of the free list, or LT_NO_MACHINE */
    size_t n_live;             /* live placements */
    uint32_t *names;           /* open-addressing name table: machine index + 1, 0 = empty */
    size_t names_cap;          /* power of two, >= 2 * n */
    struct lt_res ref;         /* reference capacity (see lt_cluster_spec) */
    uint64_t seed;             /* per-machine constants */
    struct lt_index **ix;      /* attached indexes, owned */
    uint64_t ix_serial;        /* the last serial number given to an index */
    size_t n_ix, ix_cap;       /* count and allocated */
};

/* Placement pid; pid < c->pl_cap. */
static inline struct lt__placement *lt__pl(const struct lt_cluster *c, size_t pid)
{
    return &c->pl[pid / LT__PL_CHUNK][pid % LT__PL_CHUNK];
}

/* Free vector of machine m: capacity minus allocation. The one definition every policy and
 * index uses, so that scores are computed from bit-identical inputs. */
static inline struct lt_res lt__free(const struct lt__machine *m)
{
    struct lt_res f = {m->cap.cpu - m->alloc.cpu, m->cap.mem - m->alloc.mem,
                       m->cap.disk - m->alloc.disk};
    return f;
}

static inline bool lt__res_ge(const struct lt_res *a, const struct lt_res *b)
{
    return a->cpu >= b->cpu && a->mem >= b->mem && a->disk >= b->disk;
}

/* Does req fit on machine m (online, free >= req in every component)? */
static inline bool lt__fits(const struct lt__machine *m, const struct lt_res *req)
{
    struct lt_res f = lt__free(m);
    return m->online && lt__res_ge(&f, req);
}

/* lt_res_fits_requested: only the components req asks for (> 0) are compared. */
static inline bool lt__res_fits_requested(const struct lt_res *f, const struct lt_res *req)
{
    return (!(req->cpu > 0) || f->cpu >= req->cpu) && (!(req->mem > 0) || f->mem >= req->mem) &&
           (!(req->disk > 0) || f->disk >= req->disk);
}

/* The free vector rank() scores machine m by for request req, into *f, and whether req fits
 * there. Without LT_RANK_REQUESTED: lt__free(m) and lt__fits. With it, every component req
 * does not ask for is raised to at least 0 (an overcommitted resource counts as full), which
 * makes lt__res_ge(f, req) the test of lt_res_fits_requested. */
static inline bool lt__rank_free(const struct lt__machine *m, const struct lt_res *req,
                                 unsigned flags, struct lt_res *f)
{
    *f = lt__free(m);
    if (flags & LT_RANK_REQUESTED) {
        f->cpu = !(req->cpu > 0) && f->cpu < 0 ? 0 : f->cpu;
        f->mem = !(req->mem > 0) && f->mem < 0 ? 0 : f->mem;
        f->disk = !(req->disk > 0) && f->disk < 0 ? 0 : f->disk;
    }
    return m->online && lt__res_ge(f, req);
}

/* (s, i) before (bs, bi): lower score, then lower machine index; no float == (R11). */
static inline bool lt__better(double s, size_t i, double bs, size_t bi)
{
    return s < bs || (!(bs < s) && i < bi);
}

#define LT__TOP_MAX 16 /* machines a top list (and a top hint) holds at most */

/* The k best (score, machine) pairs a search found (tophint.c), best first. */
struct lt__top {
    uint32_t n, k;         /* held, wanted (1 <= k <= LT__TOP_MAX) */
    double s[LT__TOP_MAX]; /* scores, best first (lt__better) */
    size_t i[LT__TOP_MAX]; /* their machines */
};

/* The best (score, machine) found so far by a choose() search; with a top list, (s, i) is
 * instead its k-th entry once it holds k (before: LT_SCORE_INFEASIBLE, LT_NO_MACHINE), so that
 * a search that prunes what cannot beat (s, i) finds the k best exactly. */
struct lt__best {
    double s;            /* best score so far (LT_SCORE_INFEASIBLE before any) */
    size_t i;            /* its machine, or LT_NO_MACHINE */
    struct lt__top *top; /* NULL: the best only */
};

/* Inserts (s, i), which beats (b->s, b->i), into b's top list (tophint.c). */
void lt__top_insert(struct lt__best *b, double s, size_t i);

/* Keeps (s, i) if it beats the best: lower score, then lower index. */
static inline void lt__best_offer(struct lt__best *b, double s, size_t i)
{
    if (lt__better(s, i, b->s, b->i)) {
        if (b->top != NULL) {
            lt__top_insert(b, s, i);
            return;
        }
        b->s = s;
        b->i = i;
    }
}

/* The answer of a search: its best machine, or LT_NO_MACHINE. */
static inline size_t lt__best_answer(const struct lt__best *b)
{
    if (b->top != NULL)
        return b->top->n > 0 ? b->top->i[0] : LT_NO_MACHINE;
    return b->i;
}

/* Does the search want every machine of a group with equal scores offered (a top list), or
 * only the lowest index? */
static inline bool lt__best_wants_all(const struct lt__best *b)
{
    return b->top != NULL;
}

/* Inserts configuration k with bound s into the n entries of (bound, order), kept sorted by
 * bound (ties in insertion order): choose() visits configurations best bound first, so the
 * first usually holds the answer and prunes the rest. Returns n + 1. */
static inline size_t lt__order_insert(double *bound, uint32_t *order, size_t n, double s,
                                      uint32_t k)
{
    size_t j;

    for (j = n; j > 0 && bound[j - 1] > s; j--) {
        bound[j] = bound[j - 1];
        order[j] = order[j - 1];
    }
    bound[j] = s;
    order[j] = k;
    return n + 1;
}

/* The prepare step of an index whose updates allocate nothing: always 0. */
int lt__prepare_none(struct lt_index *ix, const struct lt_cluster *c, size_t i,
                     const struct lt_res *nf, bool non);

/* Rank-side validation shared by every policy: NULL checks and candidate range. */
int lt__rank_check(const struct lt_cluster *c, const size_t *cand, size_t n, const double *scores,
                   struct lt_err *err);

/* The index attached for p, or NULL. */
const struct lt_index *lt__cluster_index(const struct lt_cluster *c, const struct lt_policy *p);

/* Policies, one entry each, defined in their modules. */
extern const struct lt_policy lt__firstfit_policy;     /* firstfit.c */
extern const struct lt_policy lt__randfirstfit_policy; /* firstfit.c */
extern const struct lt_policy lt__random_policy;       /* firstfit.c */
extern const struct lt_policy lt__bestfit1_policy;     /* fit.c */
extern const struct lt_policy lt__bestfit2_policy;
extern const struct lt_policy lt__bestfit3_policy;
extern const struct lt_policy lt__bestfit4_policy;
extern const struct lt_policy lt__bestfit5_policy;
extern const struct lt_policy lt__epvm_policy;
extern const struct lt_policy lt__epvm2_policy;
extern const struct lt_policy lt__brfs_dot_policy;
extern const struct lt_policy lt__brfs_norm_policy;
extern const struct lt_policy lt__sos10_policy; /* sos.c */
extern const struct lt_policy lt__sos20_policy;

/* random's draws for a choose over n machines of which only machine m is feasible
 * (lt_policy_choose_sole). */
void lt__random_draws_sole(size_t n, size_t m, struct lt_rng *rng);

/* sos.c test hook: a sum-of-squares policy with any bucket counts; `storage` must hold
 * LT__SOS_PARAMS_SIZE bytes and, like *p, outlive the policy's use. */
#define LT__SOS_PARAMS_SIZE (3 * sizeof(uint32_t))
void lt__sos_policy_init(struct lt_policy *p, void *storage, const char *name, uint32_t k_cpu,
                         uint32_t k_mem, uint32_t k_disk);

/* ---- fit.c: score functions of the monotone "fit" family, shared with boxtree.c ---- */

/* The formulas (fit.c's file comment and docs/policies.md). static inline so that the grid
 * and box-tree walks inline them (a measured 30-40 % of choose()); rank() uses the same
 * functions, so both see bit-identical scores. */
/* 10^x as exp(x ln 10): about twice as fast as pow(10, x) in glibc, and the same function in
 * rank and choose, which is all exactness needs. */
#define LT__LN10 2.302585092994045684017991454684364208

/* The formulas are called through constant function pointers in the indexes' search
 * instances; always_inline makes GCC inline them there however large the search grows. */
#define LT__FORMULA static inline __attribute__((always_inline))

LT__FORMULA double lt__p10(double x)
{
    return exp(x * LT__LN10);
}

LT__FORMULA double lt__pct(double free, double req, double cap)
{
    return (free - req) / cap;
}

LT__FORMULA double lt__bestfit1(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref)
{
    (void)ref;
    return lt__pct(f->mem, r->mem, cap->mem) + lt__pct(f->cpu, r->cpu, cap->cpu);
}

LT__FORMULA double lt__bestfit2(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref)
{
    double a = lt__pct(f->mem, r->mem, cap->mem), b = lt__pct(f->cpu, r->cpu, cap->cpu);

    (void)ref;
    return a * a + b * b;
}

LT__FORMULA double lt__bestfit3(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref)
{
    (void)ref;
    return lt__p10(lt__pct(f->mem, r->mem, cap->mem)) + lt__p10(lt__pct(f->cpu, r->cpu, cap->cpu));
}

LT__FORMULA double lt__bestfit4(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref)
{
    (void)ref;
    return lt__p10(lt__pct(f->mem, r->mem, cap->mem)) + lt__p10(lt__pct(f->cpu, r->cpu, cap->cpu)) +
           lt__p10(lt__pct(f->disk, r->disk, cap->disk));
}

LT__FORMULA double lt__bestfit5(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref)
{
    double a = lt__pct(f->mem, r->mem, cap->mem), b = lt__pct(f->cpu, r->cpu, cap->cpu);
    double d = lt__pct(f->disk, r->disk, cap->disk);

    (void)ref;
    return fmax(a, b) - (lt__p10(a) + lt__p10(b) + lt__p10(d));
}

LT__FORMULA double lt__epvm(const struct lt_res *cap, const struct lt_res *f,
                            const struct lt_res *r, const struct lt_res *ref)
{
    (void)ref;
    return -(lt__pct(f->mem, r->mem, cap->mem) + lt__pct(f->cpu, r->cpu, cap->cpu));
}

LT__FORMULA double lt__epvm2(const struct lt_res *cap, const struct lt_res *f,
                             const struct lt_res *r, const struct lt_res *ref)
{
    double a = lt__pct(f->mem, r->mem, cap->mem), b = lt__pct(f->cpu, r->cpu, cap->cpu);

    (void)ref;
    return -(a * a + b * b);
}

LT__FORMULA double lt__brfs_dot(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref)
{
    (void)cap;
    return -((r->cpu / ref->cpu) * (f->cpu / ref->cpu) + (r->mem / ref->mem) * (f->mem / ref->mem));
}

LT__FORMULA double lt__brfs_norm(const struct lt_res *cap, const struct lt_res *f,
                                 const struct lt_res *r, const struct lt_res *ref)
{
    double dc = r->cpu / ref->cpu - f->cpu / ref->cpu;
    double dm = r->mem / ref->mem - f->mem / ref->mem;

    (void)cap;
    return dc * dc + dm * dm;
}

/* Score of placing a task with request *r on a machine with capacity *cap and free vector
 * *f (before placement; f >= r), in a cluster with reference capacity *ref. */
typedef double lt__fit_score_fn(const struct lt_res *cap, const struct lt_res *f,
                                const struct lt_res *r, const struct lt_res *ref);

/* Worst fits only: per-machine quantities whose maxima boxtree.c keeps per node (fit.c); its
 * bound of the score over a node from them is per formula (boxtree.c's bound_*). */
#define LT__FIT_AUX_MAX 1
typedef void lt__fit_aux_fn(const struct lt_res *cap, const struct lt_res *f,
                            const struct lt_res *ref, double *aux);

/* A machine's key for grid.c's heap cells: larger keys score lower (better). */
typedef double lt__fit_key_fn(const struct lt_res *cap, const struct lt_res *f);

struct lt__fit_params {
    lt__fit_score_fn *score; /* the formula (docs/policies.md) */
    int dir;                 /* +1: non-decreasing in every free component on f >= r (best fit);
                              * -1: non-increasing (worst fit). grid.c and boxtree.c rely on it. */
    bool disk;           /* the formula depends on free disk (grid.c then bounds disk per column) */
    int n_aux;           /* worst fits: how many aux values per machine (<= LT__FIT_AUX_MAX) */
    lt__fit_aux_fn *aux; /* worst fits: the aux values of a machine with free vector f */
    lt__fit_key_fn *key; /* grid.c, or NULL: a task-independent key of a machine; the grid
                          * keeps each cell's members in a heap by it and bounds the score
                          * of a member by a per-cell term minus its key */
};

int lt__fit_rank(const struct lt_policy *p, const struct lt_cluster *c, const struct lt_task *t,
                 const size_t *cand, size_t n, unsigned flags, struct lt_rng *rng, double *scores,
                 struct lt_err *err);

/* ---- grid.c: the per-configuration grid (bestfit1-5, epvm2, brfs-norm) ---- */
int lt__grid_index_new(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                       struct lt_err *err);
/* choose() of each grid formula: one instance per formula, so the formula is inlined. */
#define LT__CHOOSE_DECL(fn)                                                                        \
    int fn(const struct lt_policy *p, const struct lt_index *ix, const struct lt_cluster *c,       \
           const struct lt_task *t, struct lt_rng *rng, struct lt_choose_hint *hint, size_t *out,  \
           struct lt_err *err)
LT__CHOOSE_DECL(lt__grid_choose_bestfit1);
LT__CHOOSE_DECL(lt__grid_choose_bestfit2);
LT__CHOOSE_DECL(lt__grid_choose_bestfit3);
LT__CHOOSE_DECL(lt__grid_choose_bestfit4);
LT__CHOOSE_DECL(lt__grid_choose_bestfit5);
LT__CHOOSE_DECL(lt__grid_choose_epvm2);
LT__CHOOSE_DECL(lt__grid_choose_brfs_norm);

/* ---- kdtree.c: per-configuration k-d trees of boxes, for boxtree.c (epvm) ---- */
#define LT__KD_LEAF    8 /* machines per leaf: a leaf scan is cheaper than more levels */
#define LT__KD_REBUILD 4 /* rebuild a tree after this many updates per machine */
#define LT__KD_NONE    UINT32_MAX

/* Per-machine values whose maxima each node keeps (n_aux of them). */
typedef void lt__kd_aux_fn(const void *ctx, const struct lt_res *cap, const struct lt_res *f,
                           double *aux);

struct lt__kd_tree {
    struct lt_res cap; /* the configuration's capacity */
    uint32_t n_max;    /* machines of this configuration, online or not */
    uint32_t n;        /* online machines: perm[0, n) */
    uint32_t *perm;    /* machines in leaf order; leaf j holds perm[j * LT__KD_LEAF, ...) */
    double *key;       /* scratch for building: one key per position */
    uint32_t size;     /* leaves, rounded up to a power of two (>= 1); node 1 is the root,
                        * node size + j is leaf j */
    uint32_t size_max; /* nodes allocated: 2 * size_max */
    struct lt_res *lo; /* per node: component-wise minimum free; +inf if empty */
    struct lt_res *hi; /* per node: component-wise maximum free; -inf if empty */
    double *aux;       /* per node: LT__FIT_AUX_MAX maxima of the aux values; -inf */
    uint32_t *minidx;  /* per node: lowest machine index below, LT__KD_NONE if empty */
    uint64_t updates;  /* free-vector updates since the last build */
};

struct lt__kd {
    struct lt__kd_tree *t; /* one per cluster configuration */
    size_t n_cfg;
    uint32_t *pos;       /* machine -> position in its configuration's perm, or NONE */
    size_t n;            /* machines covered by pos */
    int n_aux;           /* aux values per machine, 0..LT__FIT_AUX_MAX */
    lt__kd_aux_fn *aux;  /* computes them (NULL if n_aux == 0) */
    const void *aux_ctx; /* its first argument */
};

/* Builds trees for every configuration of c. 0 or LT_ENOMEM (kd released). */
int lt__kd_init(struct lt__kd *kd, const struct lt_cluster *c, int n_aux, lt__kd_aux_fn *aux,
                const void *aux_ctx);
/* Machine i changed (oon: was it online); c holds the new state. Cannot fail. */
void lt__kd_commit(struct lt__kd *kd, const struct lt_cluster *c, size_t i, bool oon);
int lt__kd_check(const struct lt__kd *kd, const struct lt_cluster *c, const char *name,
                 struct lt_err *err);
void lt__kd_release(struct lt__kd *kd);

static inline const double *lt__kd_aux(const struct lt__kd_tree *t, uint32_t node)
{
    return &t->aux[(size_t)node * LT__FIT_AUX_MAX];
}

/* True if the box [lo, hi] is one point: every machine below has exactly that free vector. */
static inline bool lt__box_is_point(const struct lt_res *lo, const struct lt_res *hi)
{
    return !(lo->cpu < hi->cpu) && !(lo->mem < hi->mem) && !(lo->disk < hi->disk);
}

/* ---- boxtree.c: the index of epvm, on kdtree.c, and brfs-dot's direction lists ---- */
int lt__box_index_new(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                      struct lt_err *err);
LT__CHOOSE_DECL(lt__box_choose_epvm);
int lt__dot_index_new(const struct lt_policy *p, const struct lt_cluster *c, struct lt_index **out,
                      struct lt_err *err);
LT__CHOOSE_DECL(lt__dot_choose_brfs_dot);

/* ---- cells.c: a set of machines sorted by index, with a bounding box of their free vectors,
 * the building block of grid.c and sos.c ---- */
struct lt__cell {
    uint32_t *mem;      /* member machine indexes: strictly increasing, or in heap order */
    struct lt_res *f;   /* f[k]: free vector of machine mem[k], equal to the cluster's */
    double *key;        /* heap cells only: key[k] of mem[k], key[(k - 1) / 2] >= key[k] */
    uint32_t n, cap;    /* members and allocated (from mem - off) */
    uint32_t off;       /* index-ordered cells: free entries before mem[0] and f[0] (cells.c) */
    uint32_t n_removed; /* removals since the box was last recomputed */
    uint32_t min_i;     /* the lowest member index (n > 0): mem[0] in an index-ordered cell */
    bool heap;          /* set before the first reserve: heap order by key, not index order */
    struct lt_res lo;   /* component-wise lower bound of members' free vectors (n > 0) */
    struct lt_res hi;   /* component-wise upper bound (n > 0) */
};

/* Ensures room for one more member. 0 or LT_ENOMEM. */
int lt__cell_reserve(struct lt__cell *cl);
/* Inserts machine i with free vector *f; room must have been reserved; i not a member. */
void lt__cell_insert(struct lt__cell *cl, uint32_t i, const struct lt_res *f);
/* Removes member i; recomputes the box when it has grown loose (amortised O(1)). */
void lt__cell_remove(struct lt__cell *cl, uint32_t i);
/* Member i's free vector changed to *f (it stays a member): stores it and widens the box,
 * recomputing it when loose. */
void lt__cell_update(struct lt__cell *cl, uint32_t i, const struct lt_res *f);
/* True if the box is a single point: then every member has exactly that free vector. */
bool lt__cell_is_point(const struct lt__cell *cl);
/* Checks sortedness and that the box holds every member's free vector. */
int lt__cell_check(const struct lt__cell *cl, const struct lt_cluster *c, const char *what,
                   struct lt_err *err);
void lt__cell_release(struct lt__cell *cl);

/* Heap cells (grid.c): members in a max-heap by a per-member key, so a search can visit them
 * best key first and stop a whole subtree at a key too low to matter. pos[i] is member i's
 * position (mem[pos[i]] == i), kept by these functions. */
void lt__cell_heap_insert(struct lt__cell *cl, uint32_t i, const struct lt_res *f, double key,
                          uint32_t *pos);
void lt__cell_heap_remove(struct lt__cell *cl, uint32_t i, uint32_t *pos);
void lt__cell_heap_update(struct lt__cell *cl, uint32_t i, const struct lt_res *f, double key,
                          uint32_t *pos);
/* Checks the heap order, pos, min_i and the box; key_of(ctx, k) recomputes member k's key,
 * which must equal the stored one. */
int lt__cell_heap_check(const struct lt__cell *cl, const struct lt_cluster *c, const uint32_t *pos,
                        double (*key_of)(const void *ctx, const struct lt_res *f), const void *ctx,
                        const char *what, struct lt_err *err);

/* ---- sos_walk.c: sos.c's walk over the machines in index order, for the lowest-index machine
 * that a small request leaves in its bucket (the design note is at the top of sos_walk.c) ---- */
#define LT__WALK_BLOCK     64 /* machines a block */
#define LT__WALK_QBITS     14 /* offsets quantised to 2^-14 of a bucket */
#define LT__WALK_QMAX      ((1u << LT__WALK_QBITS) - 1)
#define LT__WALK_LSHIFT    8 /* mem level of a block's summary: qm >> LT__WALK_LSHIFT */
#define LT__WALK_LEVELS    ((LT__WALK_QMAX >> LT__WALK_LSHIFT) + 1)
#define LT__WALK_HINT_RING 16 /* machine changes a hint may lag behind and still be used */

/* mx[l]: 1 + the largest qc of the block's entries with qm >> LT__WALK_LSHIFT >= l; 0 if there
 * is none (so non-increasing in l). */
struct lt__sos_block {
    uint64_t present;            /* bit e: machine block * LT__WALK_BLOCK + e is walked */
    uint16_t qc[LT__WALK_BLOCK]; /* entry e's quantised offset in cpu (if walked) */
    uint16_t qm[LT__WALK_BLOCK]; /* and in mem */
    uint16_t mx[LT__WALK_LEVELS];
};

struct lt__sos_walk {
    struct lt__sos_block *blk; /* n / LT__WALK_BLOCK + 1 blocks, machines in index order */
    uint16_t *smx;             /* smx[l * n_super + si] >= mx[l] of every block of super-block si,
                                * equal to their maximum while sdirty[si] is 0 */
    uint8_t *sdirty;           /* per super-block: summary falls since its bound was recomputed */
    uint32_t n_super;          /* super-blocks */
    size_t n;                  /* machines covered */
    uint64_t version;          /* machine changes noted (lt__sos_walk_note) */
    uint32_t ring[LT__WALK_HINT_RING]; /* ring[v % LT__WALK_HINT_RING] changed at count v */
};

/* A small request's thresholds, in quantised offsets: an entry below lo[d] surely leaves its
 * bucket in dimension d, one at hi[d] or above in both surely stays. A block whose summary
 * has mx[lq] < tc holds no stayer. */
struct lt__sos_walk_query {
    uint32_t lo[2], hi[2]; /* [0] cpu, [1] mem */
    uint32_t lq, tc;       /* lo[1] >> LT__WALK_LSHIFT, lo[0] + 1 */
};

/* lt_score.h's hint: sos10 and sos20 keep the walk's last answer (from); bestfit5 and
 * brfs-dot a top list (tophint.c). */
struct lt_choose_hint {
    const void *ix;    /* the walk or index that left it, or NULL */
    uint64_t serial;   /* its index's serial number in the cluster (an address may be reused) */
    uint64_t version;  /* the walk's or index's count of machine changes then */
    struct lt_res req; /* the request */
    uint64_t from;     /* sos: the stayer found then, or the number of machines if none */
    /* top list: every machine not in top[] and unchanged since has (score, index) after
     * (ts, ti) or does not fit */
    uint32_t n_top;            /* machines in top[] */
    uint32_t top[LT__TOP_MAX]; /* the best machines for req then */
    double ts;                 /* the threshold: LT_SCORE_INFEASIBLE, LT_NO_MACHINE when top[] */
    size_t ti;                 /* held every machine that fit */
};

/* ---- tophint.c: hints from a search's top list, for the policies whose score of a machine
 * depends only on the machine's own state, the request and the cluster's constants ---- */
#define LT__TOP_RING 16 /* machine changes a top hint may lag behind and still be used */

/* The last machine changes of an index, for top hints. */
struct lt__changes {
    uint64_t version;            /* changes noted */
    uint32_t ring[LT__TOP_RING]; /* ring[v % LT__TOP_RING] changed at count v */
};

static inline void lt__changes_note(struct lt__changes *ch, size_t i)
{
    ch->ring[ch->version % LT__TOP_RING] = (uint32_t)i;
    ch->version++;
}

/* Answers choose for request r from hint (NULL, or left by another index, request or more
 * than LT__TOP_RING changes ago: false) if it can: the best of its top list and of the
 * machines changed since, scored by score as rank() scores them, when that best is not after
 * the hint's threshold (or when nothing fits and the threshold is LT_SCORE_INFEASIBLE). Then
 * *out is the answer, hint is brought up to date and true is returned; false: search. */
bool lt__top_hint_use(struct lt_choose_hint *hint, const struct lt_index *ix,
                      const struct lt__changes *ch, const struct lt_cluster *c,
                      const struct lt_res *r, lt__fit_score_fn *score, size_t *out);
/* Leaves the top list of a search b for request r in hint (NULL: nothing). */
void lt__top_hint_keep(struct lt_choose_hint *hint, const struct lt_index *ix,
                       const struct lt__changes *ch, const struct lt_res *r,
                       const struct lt__best *b);

/* The exact test of machine i near the thresholds (ctx: the caller's): does it stay? */
typedef bool lt__sos_stays_fn(const void *ctx, uint32_t i);
/* Machine i's entry as the caller computes it from the cluster (for the checker): false if it
 * is not walked, else its offsets inside its bucket in cpu and mem (bucket widths) in off. */
typedef bool lt__sos_entry_fn(const void *ctx, size_t i, double off[2]);

/* A walk of n machines, none walked. 0 or LT_ENOMEM (w then holds nothing to release). */
int lt__sos_walk_init(struct lt__sos_walk *w, size_t n);
void lt__sos_walk_release(struct lt__sos_walk *w);
/* Machine i (< n) is walked with offsets off[0] (cpu), off[1] (mem) inside its bucket, in
 * bucket widths (clamped to [0, 1) when quantised); off NULL: it is not walked. */
void lt__sos_walk_set(struct lt__sos_walk *w, uint32_t i, const double *off);
/* Machine i changed: counted for hints. */
void lt__sos_walk_note(struct lt__sos_walk *w, uint32_t i);
/* The thresholds of a request whose fractional widths are phi[0] (cpu), phi[1] (mem), with a
 * margin eps (in bucket widths) on each side within which the exact test decides. */
void lt__sos_walk_query_init(struct lt__sos_walk_query *q, const double phi[2], double eps);
/* The lowest walked machine from block b0 on that stays (surely by its entry, or by stays()
 * near the thresholds); UINT32_MAX if none. */
uint32_t lt__sos_walk_stayer(const struct lt__sos_walk *w, const struct lt__sos_walk_query *q,
                             uint32_t b0, lt__sos_stays_fn *stays, const void *ctx);
/* The block a walk for request r may start at, given the hint (NULL, or one left by another
 * walk, another serial, another request or more than LT__WALK_HINT_RING changes ago: 0). */
uint32_t lt__sos_walk_hint_start(const struct lt__sos_walk *w, uint64_t serial,
                                 const struct lt_choose_hint *hint, const struct lt_res *r);
/* Leaves stayer st (UINT32_MAX: none) of request r in hint, if not NULL. */
void lt__sos_walk_hint_keep(const struct lt__sos_walk *w, uint64_t serial,
                            struct lt_choose_hint *hint, const struct lt_res *r, uint32_t st);
/* Is machine i walked? */
static inline bool lt__sos_walk_has(const struct lt__sos_walk *w, uint32_t i)
{
    return (w->blk[i / LT__WALK_BLOCK].present >> (i % LT__WALK_BLOCK)) & 1;
}
/* Recomputes every entry (through entry()), block summary and super-block bound: 0, or
 * LT_EINVAL with a message naming the index (name), the machine, block or super-block. */
int lt__sos_walk_check(const struct lt__sos_walk *w, lt__sos_entry_fn *entry, const void *ctx,
                       const char *name, struct lt_err *err);

#endif
