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
 * Implementation: O(n) per task in the view; the caller owns the view and keeps it current.
 * Tests: tests/unit/lotes/test_lotes.c (level-1 frequencies; each rule of level 2).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes_int.h"

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
