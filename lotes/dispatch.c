/* dispatch.c -- LoTES stage 3: the two-level dispatcher over a caller's view of the machines.
 *
 * Source: Tran and Beck, section 4.3.
 * Definition: level 1 draws configuration j for a class-k task with probability rho_jk (u
 *   uniform in [0, 1), j the first with u < rho_0k + ... + rho_jk). Level 2: (a) the first
 *   machine of j, in index order, whose bin serves k (A^j_ik = 1) and which has room for the
 *   task now; else (b) the first machine of the whole view with room now; else (c) the
 *   shortest queue among the machines of j whose bin serves k, ties uniformly at random.
 * Readings: in (c) only machines whose capacity holds the task are candidates (a queue on a
 *   machine that can never run the task would never drain); (d) when no such machine of j
 *   serves k (possible with a view or tables the caller changed by hand, never with tables from
 *   lt_lotes_build and a full view), the shortest queue over every machine whose capacity holds
 *   the task; when there is none the answer is LT_NO_MACHINE ("nothing fits" is a result).
 *   Level 1 uses rho from the whole-machine assignment (lt_lotes.h).
 * Ties: first fit takes the lowest index; a shortest-queue tie is broken by one
 *   lt_rng_below(number of tied machines) draw (reservoir order: the i-th tied machine in
 *   index order).
 * Implementation: lt_lotes_dispatch is O(n) per task in the view; the caller owns the view and
 *   keeps it current. lt_lotes_index keeps its own copy of the view and, over the machines in
 *   index order, segment trees of the component-wise maximum free vector ("fit lists"): one
 *   over all machines for (b), one per (j, k) over the machines of j whose bin serves k for
 *   (a); a query descends only into boxes that hold the request, so it is the lowest index
 *   either way. (c) walks the (j, k) list in index order and (d) the copy of the view, with
 *   lt_lotes_dispatch's own reservoir code, so the draws are the same.
 * Tests: tests/unit/lotes/test_lotes.c (level-1 frequencies; each rule of level 2; the index
 *   against lt_lotes_dispatch on random views and updates).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "lt_mem.h"

int lt_lotes_machine_bins(const struct lt_lotes_tables *t, const size_t *config, size_t n,
                          size_t *bin_out, struct lt_err *err)
{
    if (t == NULL || (n > 0 && (config == NULL || bin_out == NULL)))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/dispatch: no tables or machines");
    for (size_t j = 0; j < t->n_configs; j++) {
        size_t b = t->bin_first[j], used = 0, seen = 0;

        for (size_t i = 0; i < n; i++) {
            if (config[i] >= t->n_configs)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "machine %zu: configuration %zu does not exist (%zu known)", i,
                                  config[i], t->n_configs);
            if (config[i] != j)
                continue;
            seen++;
            /* Skip bins that are full (or have no machine). */
            while (b < t->bin_first[j + 1] && used == t->bin_machines[b]) {
                b++;
                used = 0;
            }
            if (b == t->bin_first[j + 1])
                break;
            bin_out[i] = b;
            used++;
        }
        if (seen != t->configs[j].n)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "configuration '%s' has %zu machines in the view, the tables "
                              "assign %zu",
                              t->configs[j].name, seen, t->configs[j].n);
    }
    return 0;
}

int lt_lotes_pick_config(const struct lt_lotes_tables *t, size_t k, struct lt_rng *rng,
                         size_t *j_out, struct lt_err *err)
{
    size_t last = SIZE_MAX;
    double u, acc = 0;

    if (t == NULL || rng == NULL || j_out == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/dispatch: no tables, rng or output");
    if (k >= t->n_classes)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "lotes/dispatch: class %zu does not exist (%zu "
                          "known)",
                          k, t->n_classes);
    u = lt_rng_uniform(rng);
    for (size_t j = 0; j < t->n_configs; j++) {
        double r = t->rho[j * t->n_classes + k];
        if (!(r > 0))
            continue;
        acc += r;
        last = j;
        if (u < acc) {
            *j_out = j;
            return 0;
        }
    }
    if (last == SIZE_MAX)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "lotes/dispatch: class '%s' has no configuration (rho is all 0)",
                          t->classes[k].name);
    *j_out = last; /* u beyond a column that sums to 1 - 1e-16 */
    return 0;
}

static bool res_le(const struct lt_res *a, const struct lt_res *b)
{
    return a->cpu <= b->cpu && a->mem <= b->mem && a->disk <= b->disk;
}

static bool serves_k(const struct lt_lotes_tables *t, const struct lt_lotes_machine *m, size_t k)
{
    return m->bin != LT_LOTES_NONE && t->bin_tasks[m->bin * t->n_classes + k] > 0;
}

/* Shortest queue among the machines that pass the filter (of configuration j serving k when
 * only_j, else all) and whose capacity holds req; ties by one uniform draw. */
static size_t shortest_queue(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view,
                             size_t n, size_t j, size_t k, bool only_j, const struct lt_res *req,
                             struct lt_rng *rng)
{
    size_t best = LT_NO_MACHINE, best_len = SIZE_MAX, ties = 0;

    for (size_t i = 0; i < n; i++) {
        const struct lt_lotes_machine *m = &view[i];
        if (only_j && (m->config != j || !serves_k(t, m, k)))
            continue;
        if (m->config == LT_LOTES_NONE || !res_le(req, &t->configs[m->config].cap))
            continue; /* a machine the tables do not describe has no known capacity */
        if (m->queue_len < best_len) {
            best = i;
            best_len = m->queue_len;
            ties = 1;
        } else if (m->queue_len == best_len) {
            /* Reservoir sampling: the i-th tie replaces the choice with probability 1/i. */
            ties++;
            if (lt_rng_below(rng, ties) == 0)
                best = i;
        }
    }
    return best;
}

static int check_view(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view,
                      size_t n, struct lt_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const struct lt_lotes_machine *m = &view[i];
        if (m->config == LT_LOTES_NONE && m->bin == LT_LOTES_NONE)
            continue; /* not described by the tables: "any room" only */
        if (m->config >= t->n_configs || m->bin < t->bin_first[m->config] ||
            m->bin >= t->bin_first[m->config + 1])
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "machine %zu: configuration %zu and bin %zu do not match the "
                              "tables",
                              i, m->config, m->bin);
    }
    return 0;
}

int lt_lotes_dispatch(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view,
                      size_t n, size_t k, const struct lt_res *req, struct lt_rng *rng,
                      struct lt_lotes_choice *choice, struct lt_err *err)
{
    size_t j;
    int rc;

    if (view == NULL || req == NULL || choice == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/dispatch: no view, request or output");
    rc = lt_lotes_pick_config(t, k, rng, &j, err);
    if (rc == 0)
        rc = check_view(t, view, n, err);
    if (rc < 0)
        return rc;
    choice->config = j;
    /* (a) first fit over j's machines whose bin serves k. */
    for (size_t i = 0; i < n; i++)
        if (view[i].config == j && serves_k(t, &view[i], k) && res_le(req, &view[i].free)) {
            choice->machine = i;
            choice->how = LT_LOTES_FIRST_FIT;
            return 0;
        }
    /* (b) any machine with room now. */
    for (size_t i = 0; i < n; i++)
        if (res_le(req, &view[i].free)) {
            choice->machine = i;
            choice->how = LT_LOTES_ANY_ROOM;
            return 0;
        }
    /* (c) the shortest queue of j's machines serving k; (d) of every machine. */
    choice->how = LT_LOTES_QUEUED;
    choice->machine = shortest_queue(t, view, n, j, k, true, req, rng);
    if (choice->machine == LT_NO_MACHINE) {
        choice->how = LT_LOTES_QUEUED_ANY;
        choice->machine = shortest_queue(t, view, n, j, k, false, req, rng);
    }
    return 0;
}

/* ---- the index ---------------------------------------------------------------------- */

#define NOPOS UINT32_MAX

/* Memory levels of the per-level cpu maxima, kept for the list of every machine (rule (b)):
 * lv[0] = -HUGE_VAL, then the largest memory capacity of the tables times 2^-7.5, 2^-7, ...,
 * 2^-0.5 (the trace's requests are mostly 1/100 to 1/10 of the largest machine). On the
 * replay's full cell (the sample parts, --preempt bands) rule (b) visited 2,900 nodes a search
 * and rule (a) 650: levels on every list cut the visits 5x but cost each update more than they
 * saved without preemption; on the list of every machine alone they made the replay faster
 * with preemption and without. */
#define FIT_LEVELS 16

/* Machine ids in ascending order and, over them, a segment tree of the component-wise maximum
 * free vector: leaf size + p is id[p]'s free vector, empty leaves are -HUGE_VAL. A box's
 * maxima may come from different machines, and in a full cell (every machine short of cpu or
 * of memory) the boxes of most subtrees then hold a request no machine holds. So each node
 * also keeps, per memory level q, the largest free cpu among its leaves whose free memory is
 * at least lv[q]: a machine that holds req has memory >= req.mem >= lv[q(req)], so a node
 * whose maximum at that level is below req.cpu holds no such machine and is pruned. */
struct fit_list {
    uint32_t n;        /* ids */
    uint32_t size;     /* leaves: a power of two >= n (1 when empty) */
    uint32_t *id;      /* n machine indexes, ascending */
    struct lt_res *mx; /* 2 * size nodes, 1 the root */
    int nlv;           /* levels kept: FIT_LEVELS or 0 */
    double *mc;        /* 2 * size * nlv: [x * nlv + q] */
    const double *lv;  /* the index's FIT_LEVELS levels */
};

struct lt_lotes_index {
    const struct lt_lotes_tables *t; /* borrowed */
    struct lt_lotes_machine *v;      /* the view, n entries (owned copy) */
    size_t n;
    struct fit_list all; /* every machine: id[p] = p */
    struct fit_list *jk; /* n_configs x n_classes: machines of j whose bin serves k */
    uint32_t *pos;       /* n x n_classes: machine i's position in its (config, k) list */
    double lv[FIT_LEVELS];
};

static const struct lt_res no_room = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};

static struct lt_res res_max(const struct lt_res *a, const struct lt_res *b)
{
    struct lt_res r = {a->cpu > b->cpu ? a->cpu : b->cpu, a->mem > b->mem ? a->mem : b->mem,
                       a->disk > b->disk ? a->disk : b->disk};
    return r;
}

static int fit_alloc(struct fit_list *f, uint32_t n, const double *lv, int nlv)
{
    f->n = n;
    f->lv = lv;
    f->nlv = nlv;
    for (f->size = 1; f->size < n;)
        f->size *= 2;
    f->id = lt_calloc(n > 0 ? n : 1, sizeof(*f->id));
    f->mx = lt_calloc(2 * (size_t)f->size, sizeof(*f->mx));
    f->mc = lt_calloc(nlv > 0 ? 2 * (size_t)f->size * (size_t)nlv : 1, sizeof(*f->mc));
    if (f->id == NULL || f->mx == NULL || f->mc == NULL)
        return LT_ENOMEM;
    for (size_t x = 0; x < 2 * (size_t)f->size; x++)
        f->mx[x] = no_room;
    for (size_t x = 0; x < 2 * (size_t)f->size * (size_t)nlv; x++)
        f->mc[x] = -HUGE_VAL;
    return 0;
}

static void fit_release(struct fit_list *f)
{
    lt_free(f->id);
    lt_free(f->mx);
    lt_free(f->mc);
}

/* Position p's free vector is now *free: its leaf and the boxes above it, up to the first
 * that does not change (bit for bit: those above it do not either). */
static void fit_set(struct fit_list *f, uint32_t p, const struct lt_res *free)
{
    const size_t nlv = (size_t)f->nlv;
    uint32_t x = f->size + p;
    double *c = &f->mc[x * nlv];

    f->mx[x] = *free;
    for (size_t q = 0; q < nlv; q++)
        c[q] = free->mem >= f->lv[q] ? free->cpu : -HUGE_VAL;
    for (x /= 2; x >= 1; x /= 2) {
        const double *a = &f->mc[2 * x * nlv], *b = a + nlv;
        struct lt_res m = res_max(&f->mx[2 * x], &f->mx[2 * x + 1]);
        bool same = memcmp(&m, &f->mx[x], sizeof(m)) == 0;
        c = &f->mc[x * nlv];
        f->mx[x] = m;
        for (size_t q = 0; q < nlv; q++) {
            double v = a[q] > b[q] ? a[q] : b[q];
            same = same && memcmp(&v, &c[q], sizeof(v)) == 0;
            c[q] = v;
        }
        if (same)
            break;
    }
}

/* The memory level of a request: the last q with lv[q] <= mem. */
static int fit_level(const struct fit_list *f, double mem)
{
    int q = f->nlv - 1;

    while (q > 0 && !(f->lv[q] <= mem))
        q--;
    return q;
}

/* Node x may hold req (of memory level q): its box does, and so does its cpu maximum at q. */
static bool fit_holds(const struct fit_list *f, uint32_t x, const struct lt_res *req, int q)
{
    return res_le(req, &f->mx[x]) && (f->nlv == 0 || req->cpu <= f->mc[(size_t)x * f->nlv + q]);
}

/* The first position whose free vector holds req, or NOPOS: a depth-first descent, left child
 * first, into the boxes that hold req. */
static uint32_t fit_first(const struct fit_list *f, const struct lt_res *req)
{
    uint32_t x = 1;
    int q = fit_level(f, req->mem);

    if (f->n == 0 || !fit_holds(f, 1, req, q))
        return NOPOS;
    for (;;) {
        if (x >= f->size)
            return x - f->size; /* a leaf that holds req: the first one */
        if (fit_holds(f, 2 * x, req, q)) {
            x = 2 * x;
            continue;
        }
        if (fit_holds(f, 2 * x + 1, req, q)) {
            x = 2 * x + 1;
            continue;
        }
        /* Neither child holds it: back up to the first left child whose sibling does. */
        for (;;) {
            if (x == 1)
                return NOPOS;
            if (x % 2 == 0 && fit_holds(f, x + 1, req, q)) {
                x = x + 1;
                break;
            }
            x /= 2;
        }
    }
}

void lt_lotes_index_free(struct lt_lotes_index *ix)
{
    if (ix == NULL)
        return;
    fit_release(&ix->all);
    for (size_t x = 0; ix->jk != NULL && x < ix->t->n_configs * ix->t->n_classes; x++)
        fit_release(&ix->jk[x]);
    lt_free(ix->jk);
    lt_free(ix->pos);
    lt_free(ix->v);
    lt_free(ix);
}

/* Fills the (j, k) lists: counts, allocates, then the ids in index order. */
static int index_lists(struct lt_lotes_index *ix)
{
    const struct lt_lotes_tables *t = ix->t;
    size_t kk = t->n_classes, nl = t->n_configs * kk;
    uint32_t *count = lt_calloc(nl, sizeof(*count));
    int rc = 0;

    if (count == NULL)
        return LT_ENOMEM;
    for (size_t i = 0; i < ix->n; i++)
        for (size_t k = 0; k < kk; k++)
            if (ix->v[i].config != LT_LOTES_NONE && serves_k(t, &ix->v[i], k))
                count[ix->v[i].config * kk + k]++;
    for (size_t x = 0; x < nl && rc == 0; x++)
        rc = fit_alloc(&ix->jk[x], count[x], ix->lv, 0);
    memset(count, 0, nl * sizeof(*count));
    for (size_t i = 0; i < ix->n && rc == 0; i++)
        for (size_t k = 0; k < kk; k++) {
            size_t x = ix->v[i].config * kk + k;
            if (ix->v[i].config == LT_LOTES_NONE || !serves_k(t, &ix->v[i], k))
                continue;
            ix->pos[i * kk + k] = count[x];
            ix->jk[x].id[count[x]++] = (uint32_t)i;
        }
    lt_free(count);
    return rc;
}

struct lt_lotes_index *lt_lotes_index_new(const struct lt_lotes_tables *t,
                                          const struct lt_lotes_machine *view, size_t n,
                                          struct lt_err *err)
{
    struct lt_lotes_index *ix;
    int rc;

    if (t == NULL || (n > 0 && view == NULL)) {
        lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: no tables or view");
        return NULL;
    }
    if (n >= NOPOS) {
        lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: %zu machines are too many", n);
        return NULL;
    }
    if (check_view(t, view, n, err) < 0)
        return NULL;
    ix = lt_calloc(1, sizeof(*ix));
    if (ix == NULL) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "lotes/index: out of memory");
        return NULL;
    }
    ix->t = t;
    ix->n = n;
    double top = 0.0; /* the largest memory capacity of the tables */
    for (size_t j = 0; j < t->n_configs; j++)
        top = t->configs[j].cap.mem > top ? t->configs[j].cap.mem : top;
    ix->lv[0] = -HUGE_VAL;
    for (int q = 1; q < FIT_LEVELS; q++)
        ix->lv[q] = (top > 0.0 ? top : 1.0) * pow(2.0, (q - FIT_LEVELS) / 2.0);
    ix->v = lt_calloc(n > 0 ? n : 1, sizeof(*ix->v));
    ix->jk = lt_calloc(t->n_configs * t->n_classes, sizeof(*ix->jk));
    ix->pos = lt_calloc(n > 0 ? n * t->n_classes : 1, sizeof(*ix->pos));
    rc = ix->v == NULL || ix->jk == NULL || ix->pos == NULL
             ? LT_ENOMEM
             : fit_alloc(&ix->all, (uint32_t)n, ix->lv, FIT_LEVELS);
    if (rc == 0) {
        memcpy(ix->v, view, n * sizeof(*view));
        for (size_t x = 0; x < n * t->n_classes; x++)
            ix->pos[x] = NOPOS;
        rc = index_lists(ix);
    }
    if (rc < 0) {
        lt_lotes_index_free(ix);
        lt_err_set(err, LT_ENOMEM, 0, 0, "lotes/index: out of memory for %zu machines", n);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        ix->all.id[i] = (uint32_t)i;
        lt_lotes_index_set(ix, i, &view[i].free, view[i].queue_len);
    }
    return ix;
}

void lt_lotes_index_set(struct lt_lotes_index *ix, size_t i, const struct lt_res *free,
                        size_t queue_len)
{
    struct lt_lotes_machine *m = &ix->v[i];
    size_t kk = ix->t->n_classes;

    assert(i < ix->n);
    m->free = *free;
    m->queue_len = queue_len;
    fit_set(&ix->all, (uint32_t)i, free);
    for (size_t k = 0; k < kk; k++)
        if (ix->pos[i * kk + k] != NOPOS)
            fit_set(&ix->jk[m->config * kk + k], ix->pos[i * kk + k], free);
}

/* shortest_queue(only_j) over the (j, k) list: the same candidates in the same order. */
static size_t shortest_in_list(const struct lt_lotes_index *ix, const struct fit_list *f, size_t j,
                               const struct lt_res *req, struct lt_rng *rng)
{
    size_t best = LT_NO_MACHINE, best_len = SIZE_MAX, ties = 0;

    if (!res_le(req, &ix->t->configs[j].cap))
        return LT_NO_MACHINE;
    for (uint32_t p = 0; p < f->n; p++) {
        size_t i = f->id[p], len = ix->v[i].queue_len;
        if (len < best_len) {
            best = i;
            best_len = len;
            ties = 1;
        } else if (len == best_len) {
            ties++;
            if (lt_rng_below(rng, ties) == 0)
                best = i;
        }
    }
    return best;
}

/* Rules (a) and (b) for class k: the configuration drawn into choice->config and *f its
 * (config, k) list; 1 if one of them answered (choice filled), 0 if no machine has room, or
 * LT_EINVAL. */
static int dispatch_now(const struct lt_lotes_index *ix, size_t k, const struct lt_res *req,
                        struct lt_rng *rng, struct lt_lotes_choice *choice,
                        const struct fit_list **f, struct lt_err *err)
{
    uint32_t p;
    size_t j;
    int rc;

    if (ix == NULL || req == NULL || choice == NULL || rng == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: no index, request, RNG or output");
    rc = lt_lotes_pick_config(ix->t, k, rng, &j, err);
    if (rc < 0)
        return rc;
    choice->config = j;
    *f = &ix->jk[j * ix->t->n_classes + k];
    if ((p = fit_first(*f, req)) != NOPOS) { /* (a) */
        choice->machine = (*f)->id[p];
        choice->how = LT_LOTES_FIRST_FIT;
        return 1;
    }
    if ((p = fit_first(&ix->all, req)) != NOPOS) { /* (b) */
        choice->machine = p;
        choice->how = LT_LOTES_ANY_ROOM;
        return 1;
    }
    return 0;
}

int lt_lotes_index_dispatch(const struct lt_lotes_index *ix, size_t k, const struct lt_res *req,
                            struct lt_rng *rng, struct lt_lotes_choice *choice, struct lt_err *err)
{
    const struct fit_list *f = NULL;
    int rc = dispatch_now(ix, k, req, rng, choice, &f, err);

    if (rc != 0)
        return rc < 0 ? rc : 0;
    choice->how = LT_LOTES_QUEUED; /* (c), then (d) */
    choice->machine = shortest_in_list(ix, f, choice->config, req, rng);
    if (choice->machine == LT_NO_MACHINE) {
        choice->how = LT_LOTES_QUEUED_ANY;
        choice->machine = shortest_queue(ix->t, ix->v, ix->n, choice->config, k, false, req, rng);
    }
    return 0;
}

int lt_lotes_index_dispatch_now(const struct lt_lotes_index *ix, size_t k, const struct lt_res *req,
                                struct lt_rng *rng, struct lt_lotes_choice *choice,
                                struct lt_err *err)
{
    const struct fit_list *f = NULL;
    struct lt_rng before;
    int rc;

    if (rng == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: no RNG");
    before = *rng;
    rc = dispatch_now(ix, k, req, rng, choice, &f, err);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    *rng = before; /* nothing has room: the configuration's draw is taken back */
    choice->machine = LT_NO_MACHINE;
    choice->how = LT_LOTES_QUEUED;
    return 0;
}

bool lt_lotes_index_any_room(const struct lt_lotes_index *ix, const struct lt_res *req)
{
    return fit_first(&ix->all, req) != NOPOS;
}

static bool res_same(const struct lt_res *a, const struct lt_res *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

/* Every inner box of f the join of its children; leaf p id[p]'s free vector in v. */
static bool fit_consistent(const struct fit_list *f, const struct lt_lotes_machine *v)
{
    for (uint32_t x = 0; x < f->size; x++) {
        const struct lt_res *want = x < f->n ? &v[f->id[x]].free : &no_room;
        if (!res_same(&f->mx[f->size + x], want))
            return false;
    }
    for (uint32_t x = f->size - 1; x >= 1; x--) {
        struct lt_res j = res_max(&f->mx[2 * x], &f->mx[2 * x + 1]);
        if (!res_same(&f->mx[x], &j))
            return false;
    }
    for (uint32_t x = 1; x < 2 * f->size; x++) /* the cpu maxima by memory level */
        for (int q = 0; q < f->nlv; q++) {
            const struct lt_res *r = &f->mx[x];
            double want;
            if (x >= f->size)
                want = r->mem >= f->lv[q] ? r->cpu : -HUGE_VAL;
            else {
                const double *a = &f->mc[(size_t)(2 * x) * f->nlv];
                want = a[q] > a[f->nlv + q] ? a[q] : a[f->nlv + q];
            }
            if (memcmp(&f->mc[(size_t)x * f->nlv + q], &want, sizeof(want)) != 0)
                return false;
        }
    return true;
}

int lt_lotes_index_check(const struct lt_lotes_index *ix, const struct lt_lotes_machine *view,
                         size_t n, struct lt_err *err)
{
    const struct lt_lotes_tables *t = ix->t;
    size_t kk = t->n_classes;

    if (n != ix->n)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: %zu machines, the view has %zu",
                          ix->n, n);
    for (size_t i = 0; i < n; i++) {
        const struct lt_lotes_machine *a = &ix->v[i], *b = &view[i];
        if (a->config != b->config || a->bin != b->bin || !res_same(&a->free, &b->free) ||
            a->queue_len != b->queue_len)
            return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: machine %zu differs", i);
        for (size_t k = 0; k < kk; k++) {
            bool member = a->config != LT_LOTES_NONE && serves_k(t, a, k);
            uint32_t p = ix->pos[i * kk + k];
            if (member != (p != NOPOS) || (member && (p >= ix->jk[a->config * kk + k].n ||
                                                      ix->jk[a->config * kk + k].id[p] != i)))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "lotes/index: machine %zu misplaced in class %zu's list", i, k);
        }
    }
    if (!fit_consistent(&ix->all, ix->v))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: stale box over all machines");
    for (size_t x = 0; x < t->n_configs * kk; x++) {
        for (uint32_t p = 1; p < ix->jk[x].n; p++)
            if (ix->jk[x].id[p - 1] >= ix->jk[x].id[p])
                return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/index: list %zu out of order", x);
        if (!fit_consistent(&ix->jk[x], ix->v))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "lotes/index: stale box over configuration %zu, class %zu", x / kk,
                              x % kk);
    }
    return 0;
}

/* The greedy benchmark's pick: the shortest queue (with running tasks counted when
 * count_running) among the machines whose free resources (room_now) or capacity hold req. */
static size_t greedy_pick(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view,
                          size_t n, bool room_now, bool count_running, const struct lt_res *req,
                          struct lt_rng *rng)
{
    size_t best = LT_NO_MACHINE, best_len = SIZE_MAX, ties = 0;

    for (size_t i = 0; i < n; i++) {
        size_t len = view[i].queue_len + (count_running ? view[i].running : 0);
        if (len > best_len || (!room_now && view[i].config == LT_LOTES_NONE) ||
            !res_le(req, room_now ? &view[i].free : &t->configs[view[i].config].cap))
            continue;
        if (len < best_len) {
            best = i;
            best_len = len;
            ties = 1;
        } else if (lt_rng_below(rng, ++ties) == 0) { /* reservoir sampling over the ties */
            best = i;
        }
    }
    return best;
}

int lt_lotes_greedy(const struct lt_lotes_tables *t, const struct lt_lotes_machine *view, size_t n,
                    enum lt_lotes_greedy_rule rule, const struct lt_res *req, struct lt_rng *rng,
                    struct lt_lotes_choice *choice, struct lt_err *err)
{
    size_t best = LT_NO_MACHINE;
    int rc;

    if (t == NULL || view == NULL || req == NULL || rng == NULL || choice == NULL ||
        (rule != LT_LOTES_GREEDY_ROOM && rule != LT_LOTES_GREEDY_JSQ))
        return lt_err_set(err, LT_EINVAL, 0, 0, "lotes/greedy: a NULL argument or a bad rule");
    if ((rc = check_view(t, view, n, err)) < 0)
        return rc;
    if (rule == LT_LOTES_GREEDY_ROOM)
        best = greedy_pick(t, view, n, true, false, req, rng);
    if (best == LT_NO_MACHINE)
        best = greedy_pick(t, view, n, false, rule == LT_LOTES_GREEDY_JSQ, req, rng);
    choice->machine = best;
    choice->config = best != LT_NO_MACHINE ? view[best].config : SIZE_MAX;
    choice->how =
        best != LT_NO_MACHINE && view[best].queue_len == 0 && res_le(req, &view[best].free)
            ? LT_LOTES_ANY_ROOM
            : LT_LOTES_QUEUED_ANY;
    return 0;
}
