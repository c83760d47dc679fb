/* test_property.c -- choose() equals the naive rank() scan, for every policy, on 1,200 seeded
 * random clusters driven through random placements, removals, forced (overcommitting)
 * placements, machines going offline and online, and machines being added; the invariant
 * checkers of the cluster and of every attached index run after every mutation.
 *
 * The states are made to hit the hard cases: capacities and requests on coarse dyadic grids
 * (so scores tie exactly and requests equal free amounts exactly), requests of zero in some
 * dimensions, tasks that fit nowhere, a reference capacity below the largest machine (SOS
 * buckets clamp), empty clusters, and a few large clusters so grid cells hold many machines;
 * and clusters of 1,260 machines filled by bestfit4, bestfit5 or epvm2 until nothing more
 * fits, whose machines crowd the first thousandths of their capacity in one dimension or both.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_cluster.h"
#include "lt_rng.h"
#include "lt_score.h"

#define N_CLUSTERS 1200
#define STEPS      60

struct world {
    struct lt_cluster *c;
    struct lt_rng r; /* drives the test */
    size_t *live;    /* live placement ids */
    size_t n_live, cap_live;
    size_t *cand; /* 0..n-1 */
    double *scores;
    size_t n_named; /* machines named so far */
    double grid;    /* resolution of generated values (dyadic), or 0 for continuous */
    uint64_t seed;
    struct lt_choose_hint *hint[32]; /* per policy, across the world's chooses (owned) */
    struct lt_res last_req;          /* the previous task's request */
    size_t hinted_same;              /* chooses whose request repeated the previous one */
};

static double pick_value(struct world *w, double max)
{
    double x = lt_rng_uniform(&w->r) * max;

    if (w->grid > 0.0)
        x = floor(x / w->grid) * w->grid;
    return x;
}

static struct lt_res random_cap(struct world *w)
{
    static const double caps[] = {0.25, 0.5, 1.0, 0.75};
    struct lt_res cap;

    if (lt_rng_below(&w->r, 4) != 0) {
        cap.cpu = caps[lt_rng_below(&w->r, 4)];
        cap.mem = caps[lt_rng_below(&w->r, 4)];
        cap.disk = caps[lt_rng_below(&w->r, 2) + 1];
    } else {
        cap.cpu = 0.05 + lt_rng_uniform(&w->r);
        cap.mem = 0.05 + lt_rng_uniform(&w->r);
        cap.disk = 0.05 + lt_rng_uniform(&w->r);
    }
    return cap;
}

static struct lt_task random_task(struct world *w)
{
    struct lt_task t;
    uint64_t kind = lt_rng_below(&w->r, 20);
    double scale = kind < 14 ? 0.25 : kind < 18 ? 0.6 : 1.5; /* some fit nowhere */

    memset(&t, 0, sizeof(t));
    t.id = (int64_t)lt_rng_below(&w->r, 1000000);
    t.req.cpu = pick_value(w, scale);
    t.req.mem = pick_value(w, scale);
    t.req.disk = lt_rng_below(&w->r, 3) == 0 ? 0.0 : pick_value(w, scale * 0.5);
    if (lt_rng_below(&w->r, 8) == 0)
        t.req.cpu = 0.0;
    return t;
}

static void push_live(struct world *w, size_t pid)
{
    if (w->n_live == w->cap_live) {
        w->cap_live = w->cap_live ? 2 * w->cap_live : 64;
        w->live = realloc(w->live, w->cap_live * sizeof(*w->live));
        assert_non_null(w->live);
    }
    w->live[w->n_live++] = pid;
}

static void grow_scratch(struct world *w)
{
    size_t n = lt_cluster_size(w->c);

    w->cand = realloc(w->cand, (n + 1) * sizeof(*w->cand));
    w->scores = realloc(w->scores, (n + 1) * sizeof(*w->scores));
    assert_non_null(w->cand);
    assert_non_null(w->scores);
    for (size_t i = 0; i < n; i++)
        w->cand[i] = i;
}

static void check(struct world *w, const char *after)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (lt_cluster_check(w->c, &err) != 0) {
        print_error("seed %llu: invariant broken after %s: %s\n", (unsigned long long)w->seed,
                    after, err.text);
        fail();
    }
}

/* A capacity for one of many configurations: each component from the pool of random_cap or
 * drawn, so that configurations are distinct but often share one resource's capacity (as the
 * Google cell's share cpu 0.5 and disk 1). */
static struct lt_res mixed_cap(struct world *w)
{
    static const double caps[] = {0.25, 0.5, 1.0, 0.75};
    double v[3];

    for (int d = 0; d < 3; d++)
        v[d] = lt_rng_below(&w->r, 2) == 0 ? caps[lt_rng_below(&w->r, 4)]
                                           : 0.05 + lt_rng_uniform(&w->r);
    return (struct lt_res){v[0], v[1], v[2]};
}

/* A random cluster. many_cfg: 70-95 capacities (more than 64 configurations after equal ones merge,
 * more than grid.c orders by bound) over 150-400 machines, each used, instead of 1-5. */
static void new_world_cfgs(struct world *w, uint64_t seed, bool many_cfg)
{
    struct lt_cluster_spec spec;
    struct lt_machine_spec *ms;
    char(*names)[24];
    struct lt_err err;
    size_t n;
    uint64_t size_kind;

    memset(w, 0, sizeof(*w));
    w->seed = seed;
    lt_rng_init(&w->r, seed, 7);
    size_kind = lt_rng_below(&w->r, 40);
    n = size_kind == 0   ? 0
        : size_kind < 36 ? 1 + lt_rng_below(&w->r, 40)
                         : 100 + lt_rng_below(&w->r, 400);
    if (many_cfg)
        n = 150 + lt_rng_below(&w->r, 250);
    w->grid = lt_rng_below(&w->r, 3) == 0 ? 0.0 : 1.0 / 16.0;
    ms = calloc(n + 1, sizeof(*ms));
    names = calloc(n + 1, sizeof(*names));
    assert_non_null(ms);
    assert_non_null(names);
    {
        /* A few configurations, reused: machines share capacity vectors. */
        struct lt_res cfg[95];
        size_t n_cfg = many_cfg ? 70 + lt_rng_below(&w->r, 26) : 1 + lt_rng_below(&w->r, 5);
        for (size_t k = 0; k < n_cfg; k++)
            cfg[k] = many_cfg ? mixed_cap(w) : random_cap(w);
        for (size_t i = 0; i < n; i++) {
            snprintf(names[i], sizeof(names[i]), "m%zu", i);
            ms[i].name = names[i];
            ms[i].cap = cfg[many_cfg && i < n_cfg ? i : lt_rng_below(&w->r, n_cfg)];
        }
    }
    w->n_named = n;
    memset(&spec, 0, sizeof(spec));
    spec.machines = ms;
    spec.n_machines = n;
    spec.seed = seed;
    if (n == 0 || lt_rng_below(&w->r, 4) == 0) {
        /* Explicit reference, sometimes below the largest capacity (SOS top buckets clamp). */
        spec.ref.cpu = 0.5 + lt_rng_uniform(&w->r);
        spec.ref.mem = 0.5 + lt_rng_uniform(&w->r);
        spec.ref.disk = 0.5 + lt_rng_uniform(&w->r);
    }
    lt_err_init(&err, NULL);
    w->c = lt_cluster_new(&spec, &err);
    if (w->c == NULL) {
        print_error("seed %llu: %s\n", (unsigned long long)seed, err.text);
        fail();
    }
    free(ms);
    free(names);
    for (size_t k = 0; k < lt_policy_count(); k++)
        assert_int_equal(lt_policy_attach(lt_policy_at(k), w->c, &err), 0);
    grow_scratch(w);
    check(w, "creation");
}

static void new_world(struct world *w, uint64_t seed)
{
    new_world_cfgs(w, seed, false);
}

static void free_world(struct world *w)
{
    lt_cluster_free(w->c);
    for (size_t k = 0; k < sizeof(w->hint) / sizeof(w->hint[0]); k++)
        lt_choose_hint_free(w->hint[k]);
    free(w->live);
    free(w->cand);
    free(w->scores);
}

/* For every policy: choose == naive rank scan, with identical draws; returns the machine the
 * policy given by `placer` chose. */
static size_t compare_all(struct world *w, const struct lt_task *t, size_t placer)
{
    size_t n = lt_cluster_size(w->c), placed = LT_NO_MACHINE;
    struct lt_err err;

    for (size_t k = 0; k < lt_policy_count(); k++) {
        const struct lt_policy *p = lt_policy_at(k);
        struct lt_rng r1, r2;
        size_t fast, pos, slow;

        lt_rng_init(&r1, w->seed * 131 + k, LT_RNG_POLICY);
        r1.s[0] ^= lt_rng_next(&w->r); /* a fresh state per comparison */
        r2 = r1;
        lt_err_init(&err, NULL);
        {
            /* with the policy's hint, carried across this world's chooses: the same answer
             * and draws (a copy of the generator, as the draws are compared below) */
            struct lt_rng r3 = r1;
            size_t hinted;
            assert_true(k < sizeof(w->hint) / sizeof(w->hint[0]));
            if (w->hint[k] == NULL)
                assert_non_null(w->hint[k] = lt_choose_hint_new(&err));
            assert_int_equal(lt_policy_choose_hinted(p, w->c, t, &r3, w->hint[k], &hinted, &err),
                             0);
            assert_int_equal(lt_policy_choose(p, w->c, t, &r1, &fast, &err), 0);
            if (hinted != fast || memcmp(&r1, &r3, sizeof(r1)) != 0) {
                print_error("seed %llu policy %s: hinted choose %zu, choose %zu\n",
                            (unsigned long long)w->seed, lt_policy_name(p), hinted, fast);
                fail();
            }
        }
        assert_int_equal(lt_policy_rank(p, w->c, t, w->cand, n, &r2, w->scores, &err), 0);
        pos = lt_scores_best(w->cand, w->scores, n);
        slow = pos == LT_NO_MACHINE ? LT_NO_MACHINE : w->cand[pos];
        if (fast != slow || memcmp(&r1, &r2, sizeof(r1)) != 0) {
            print_error("seed %llu policy %s: choose %zu, naive %zu (req %.17g %.17g %.17g)%s\n",
                        (unsigned long long)w->seed, lt_policy_name(p), fast, slow, t->req.cpu,
                        t->req.mem, t->req.disk,
                        memcmp(&r1, &r2, sizeof(r1)) ? ", draws differ" : "");
            fail();
        }
        if (fast != LT_NO_MACHINE)
            assert_true(lt_cluster_fits(w->c, fast, &t->req));
        if (k == placer)
            placed = fast;
    }
    return placed;
}

static void step(struct world *w)
{
    uint64_t op = lt_rng_below(&w->r, 100);
    size_t n = lt_cluster_size(w->c);
    struct lt_err err;
    struct lt_task t = random_task(w);
    size_t m, pid;

    lt_err_init(&err, NULL);
    /* Jobs submit many equal tasks: half the time the previous request again, so that the
     * hints are used across the mutations between (lt_choose_hint). */
    if (lt_rng_below(&w->r, 2) == 0 && w->n_live > 0) {
        t.req = w->last_req;
        w->hinted_same++;
    }
    w->last_req = t.req;
    /* Every step compares all policies on a fresh task first. */
    m = compare_all(w, &t, (size_t)lt_rng_below(&w->r, lt_policy_count()));
    if (op < 50) {
        if (m != LT_NO_MACHINE) {
            assert_int_equal(lt_cluster_place(w->c, m, &t, 0, &pid, &err), 0);
            push_live(w, pid);
            check(w, "place");
        }
    } else if (op < 80) {
        if (w->n_live > 0) {
            size_t k = (size_t)lt_rng_below(&w->r, w->n_live);
            assert_int_equal(lt_cluster_remove(w->c, w->live[k], &err), 0);
            w->live[k] = w->live[--w->n_live];
            check(w, "remove");
        }
    } else if (op < 86) {
        if (n > 0) {
            m = (size_t)lt_rng_below(&w->r, n);
            if (lt_cluster_online(w->c, m)) {
                assert_int_equal(lt_cluster_place(w->c, m, &t, LT_PLACE_FORCE, &pid, &err), 0);
                push_live(w, pid);
                check(w, "forced place");
            }
        }
    } else if (op < 94) {
        if (n > 0) {
            m = (size_t)lt_rng_below(&w->r, n);
            if (lt_cluster_n_tasks(w->c, m) == 0) {
                assert_int_equal(lt_cluster_set_online(w->c, m, !lt_cluster_online(w->c, m), &err),
                                 0);
                check(w, "online/offline");
            }
        }
    } else if (op < 97) {
        struct lt_machine_spec ms;
        char name[24];
        snprintf(name, sizeof(name), "m%zu", w->n_named++);
        ms.name = name;
        ms.cap = random_cap(w);
        assert_int_equal(lt_cluster_add_machine(w->c, &ms, &m, &err), 0);
        assert_int_equal(m, n);
        grow_scratch(w);
        check(w, "add machine");
    } else {
        /* Empty one machine entirely: exercises "last task leaves" resets. */
        if (w->n_live > 0) {
            size_t victim = lt_cluster_placement_machine(w->c, w->live[0]);
            for (size_t k = 0; k < w->n_live;) {
                if (lt_cluster_placement_machine(w->c, w->live[k]) == victim) {
                    assert_int_equal(lt_cluster_remove(w->c, w->live[k], &err), 0);
                    w->live[k] = w->live[--w->n_live];
                    check(w, "drain");
                } else {
                    k++;
                }
            }
            assert_int_equal(lt_cluster_n_tasks(w->c, victim), 0);
        }
    }
}

static void test_choose_equals_naive_rank_on_random_states(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= N_CLUSTERS; seed++) {
        struct world w;
        new_world(&w, seed);
        for (int s = 0; s < STEPS; s++)
            step(&w);
        free_world(&w);
    }
}

/* More configurations than grid.c orders by bound (SORT_CONFIGS), sharing resources'
 * capacities: the path that bounds and walks them one by one. */
static void test_choose_equals_naive_rank_with_many_configurations(void **state)
{
    (void)state;
    for (uint64_t seed = 9001; seed <= 9040; seed++) {
        struct world w;
        new_world_cfgs(&w, seed, true);
        assert_true(lt_cluster_n_configs(w.c) > 64);
        for (int s = 0; s < STEPS; s++)
            step(&w);
        free_world(&w);
    }
}

/* Long runs on one mid-sized cluster: cells fill, boxes go loose and are recomputed. */
static void test_choose_equals_naive_rank_on_long_runs(void **state)
{
    (void)state;
    for (uint64_t seed = 5001; seed <= 5004; seed++) {
        struct world w;
        new_world(&w, seed);
        for (int s = 0; s < 1500; s++)
            step(&w);
        free_world(&w);
    }
}

/* A small task: requests log-uniform over [0.0002, 0.2] (so that some fall in the finest grid
 * columns of grid.c's fine lines), disk small. */
static struct lt_task packed_task(struct world *w)
{
    struct lt_task t;

    memset(&t, 0, sizeof(t));
    t.id = (int64_t)lt_rng_below(&w->r, 1000000);
    t.req.cpu = 0.0002 * pow(1000.0, lt_rng_uniform(&w->r));
    t.req.mem = 0.0002 * pow(1000.0, lt_rng_uniform(&w->r));
    t.req.disk = 0.00001 * pow(100.0, lt_rng_uniform(&w->r));
    return t;
}

/* Large configurations filled by one policy until nothing more fits, so that most machines
 * have a few thousandths of their capacity free in cpu or memory or both: the crowded cells
 * of the fine grid lines (grid.c), then mixed placements and removals. */
static void packed_run(uint64_t seed, const char *placer_name)
{
    static const struct lt_res caps[] = {{0.5, 0.5, 1.0}, {0.5, 0.25, 1.0}, {1.0, 1.0, 1.0}};
    static const size_t counts[] = {900, 300, 60};
    struct lt_machine_spec ms[1260];
    char names[1260][24];
    struct lt_cluster_spec spec;
    struct world w;
    struct lt_err err;
    size_t n = 0, placer = 0, misses = 0;

    memset(&w, 0, sizeof(w));
    w.seed = seed;
    lt_rng_init(&w.r, seed, 7);
    for (size_t k = 0; k < 3; k++) {
        for (size_t j = 0; j < counts[k]; j++, n++) {
            snprintf(names[n], sizeof(names[n]), "m%zu", n);
            ms[n].name = names[n];
            ms[n].cap = caps[k];
        }
    }
    memset(&spec, 0, sizeof(spec));
    spec.machines = ms;
    spec.n_machines = n;
    spec.seed = seed;
    lt_err_init(&err, NULL);
    w.c = lt_cluster_new(&spec, &err);
    assert_non_null(w.c);
    w.n_named = n;
    for (size_t k = 0; k < lt_policy_count(); k++) {
        assert_int_equal(lt_policy_attach(lt_policy_at(k), w.c, &err), 0);
        if (strcmp(lt_policy_name(lt_policy_at(k)), placer_name) == 0)
            placer = k;
    }
    grow_scratch(&w);
    while (misses < 50) {
        struct lt_task t = packed_task(&w);
        struct lt_rng r;
        size_t m, pid;
        lt_rng_init(&r, seed, LT_RNG_POLICY);
        assert_int_equal(lt_policy_choose(lt_policy_at(placer), w.c, &t, &r, &m, &err), 0);
        if (m == LT_NO_MACHINE) {
            misses++;
            continue;
        }
        misses = 0;
        assert_int_equal(lt_cluster_place(w.c, m, &t, 0, &pid, &err), 0);
        push_live(&w, pid);
    }
    check(&w, "packing");
    for (int s = 0; s < 300; s++) {
        struct lt_task t = packed_task(&w);
        size_t m = compare_all(&w, &t, placer), pid;
        if (m != LT_NO_MACHINE && lt_rng_below(&w.r, 2) == 0) {
            assert_int_equal(lt_cluster_place(w.c, m, &t, 0, &pid, &err), 0);
            push_live(&w, pid);
            check(&w, "place");
        } else if (w.n_live > 0) {
            size_t k = (size_t)lt_rng_below(&w.r, w.n_live);
            assert_int_equal(lt_cluster_remove(w.c, w.live[k], &err), 0);
            w.live[k] = w.live[--w.n_live];
            check(&w, "remove");
        }
    }
    free_world(&w);
}

/* Hints (lt_choose_hint) that lag: three requests take turns, with up to 40 placements and
 * removals between two chooses of the same one (sos keeps only the last 16 machine changes;
 * older hints must be ignored), on a cluster half filled by sos10. */
static void test_hinted_choose_after_many_changes(void **state)
{
    static const struct lt_res caps[] = {{0.5, 0.5, 1.0}, {0.5, 0.25, 1.0}, {1.0, 1.0, 1.0}};
    static const struct lt_res reqs[] = {
        {0.03, 0.02, 0.001}, {0.011, 0.047, 0.0002}, {0.064, 0.0625, 0.0}};
    struct lt_machine_spec ms[600];
    char names[600][24];
    struct lt_cluster_spec spec;
    struct world w;
    struct lt_err err;
    size_t sos10 = 0;

    (void)state;
    memset(&w, 0, sizeof(w));
    w.seed = 8101;
    lt_rng_init(&w.r, w.seed, 7);
    for (size_t i = 0; i < 600; i++) {
        snprintf(names[i], sizeof(names[i]), "m%zu", i);
        ms[i].name = names[i];
        ms[i].cap = caps[i % 3];
    }
    memset(&spec, 0, sizeof(spec));
    spec.machines = ms;
    spec.n_machines = 600;
    spec.seed = w.seed;
    lt_err_init(&err, NULL);
    w.c = lt_cluster_new(&spec, &err);
    assert_non_null(w.c);
    w.n_named = 600;
    for (size_t k = 0; k < lt_policy_count(); k++) {
        assert_int_equal(lt_policy_attach(lt_policy_at(k), w.c, &err), 0);
        if (strcmp(lt_policy_name(lt_policy_at(k)), "sos10") == 0)
            sos10 = k;
    }
    grow_scratch(&w);
    for (int round = 0; round < 600; round++) {
        struct lt_task t;
        size_t changes = (size_t)lt_rng_below(&w.r, 41), m, pid;

        for (size_t j = 0; j < changes; j++) {
            struct lt_task u = packed_task(&w);
            struct lt_rng r;
            lt_rng_init(&r, w.seed, LT_RNG_POLICY);
            if (lt_rng_below(&w.r, 3) != 0 || w.n_live == 0) {
                assert_int_equal(lt_policy_choose(lt_policy_at(sos10), w.c, &u, &r, &m, &err), 0);
                if (m != LT_NO_MACHINE) {
                    assert_int_equal(lt_cluster_place(w.c, m, &u, 0, &pid, &err), 0);
                    push_live(&w, pid);
                }
            } else {
                size_t k = (size_t)lt_rng_below(&w.r, w.n_live);
                assert_int_equal(lt_cluster_remove(w.c, w.live[k], &err), 0);
                w.live[k] = w.live[--w.n_live];
            }
        }
        memset(&t, 0, sizeof(t));
        t.req = reqs[round % 3];
        m = compare_all(&w, &t, sos10);
        if (m != LT_NO_MACHINE && lt_rng_below(&w.r, 2) == 0) {
            assert_int_equal(lt_cluster_place(w.c, m, &t, 0, &pid, &err), 0);
            push_live(&w, pid);
        }
    }
    check(&w, "hinted rounds");
    free_world(&w);
}

/* Jobs of equal tasks, each placed where the placer chooses, as the replay places them, with
 * now and then a task ending: the pattern top hints serve (bestfit5, brfs-dot: tophint.c).
 * Hinted choose == choose == rank for every policy, through hints that answer, that run out
 * (every listed machine changed for the worse than the threshold) and that see nothing fit. */
static void test_hinted_choose_on_jobs_of_equal_tasks(void **state)
{
    static const char *const placers[] = {"bestfit5", "brfs-dot", "bestfit1", "epvm2"};

    (void)state;
    for (uint64_t seed = 11001; seed <= 11240; seed++) {
        struct world w;
        size_t placer = 0;
        struct lt_err err;

        new_world(&w, seed);
        lt_err_init(&err, NULL);
        for (size_t k = 0; k < lt_policy_count(); k++) {
            if (strcmp(lt_policy_name(lt_policy_at(k)), placers[seed % 4]) == 0)
                placer = k;
        }
        for (int job = 0; job < 6; job++) {
            struct lt_task t = random_task(&w);
            size_t tasks = 1 + (size_t)lt_rng_below(&w.r, 40);

            for (size_t j = 0; j < tasks; j++) {
                size_t m = compare_all(&w, &t, placer), pid;

                if (m != LT_NO_MACHINE) {
                    assert_int_equal(lt_cluster_place(w.c, m, &t, 0, &pid, &err), 0);
                    push_live(&w, pid);
                }
                if (w.n_live > 0 && lt_rng_below(&w.r, 5) == 0) {
                    size_t k = (size_t)lt_rng_below(&w.r, w.n_live);
                    assert_int_equal(lt_cluster_remove(w.c, w.live[k], &err), 0);
                    w.live[k] = w.live[--w.n_live];
                }
            }
        }
        check(&w, "jobs");
        free_world(&w);
    }
}

static void test_choose_equals_naive_rank_on_packed_cells(void **state)
{
    (void)state;
    packed_run(7001, "bestfit4");
    packed_run(7002, "bestfit5");
    packed_run(7003, "epvm2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose_equals_naive_rank_on_random_states),
        cmocka_unit_test(test_choose_equals_naive_rank_on_long_runs),
        cmocka_unit_test(test_choose_equals_naive_rank_with_many_configurations),
        cmocka_unit_test(test_choose_equals_naive_rank_on_packed_cells),
        cmocka_unit_test(test_hinted_choose_after_many_changes),
        cmocka_unit_test(test_hinted_choose_on_jobs_of_equal_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
