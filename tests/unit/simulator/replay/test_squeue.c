/* test_squeue.c -- the replay's queue (simulator/replay/squeue.c) against a plain model: random
 * adds, activations, deactivations and releases over several priorities, with the slot moves
 * of compaction followed through the callback; every sq_find (from random slots, for random
 * free vectors, some exactly equal to a queued request) and sq_min must be the model's.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/squeue.h"

#define N_PRIO 3
#define N_ITEM 6000

struct model_slot {
    uint32_t item; /* SQ_NONE: released */
    bool active;
    struct lt_res req;
};

struct model {
    struct model_slot *slot[N_PRIO]; /* by slot as the queue numbers them */
    uint32_t n[N_PRIO];
    uint32_t where[N_ITEM];   /* item -> slot (kept by the callback) */
    unsigned prio_of[N_ITEM]; /* item -> priority, N_PRIO if not added */
    bool moved_seen;          /* the callback ran at least once */
};

static struct model M;

/* Compaction moved item to slot: the model's slot array follows (slots only move down, in
 * order, so moving one entry at a time never overwrites a live one). */
static void moved(void *ctx, uint32_t item, uint32_t slot)
{
    struct model *m = ctx;
    unsigned p = m->prio_of[item];

    assert_true(p < N_PRIO);
    assert_true(slot < m->where[item]);
    m->slot[p][slot] = m->slot[p][m->where[item]];
    m->where[item] = slot;
    m->moved_seen = true;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double pick(void)
{
    static const double v[] = {0.0, 0.01, 0.02, 0.03125, 0.05, 0.1, 0.25, 0.5};
    return v[rnd() % (sizeof(v) / sizeof(v[0]))];
}

static bool fits(const struct lt_res *r, const struct lt_res *f)
{
    return r->cpu <= f->cpu && r->mem <= f->mem && r->disk <= f->disk;
}

static uint32_t model_find(unsigned p, uint32_t from, const struct lt_res *f)
{
    for (uint32_t s = from; s < M.n[p]; s++)
        if (M.slot[p][s].item != SQ_NONE && M.slot[p][s].active && fits(&M.slot[p][s].req, f))
            return s;
    return SQ_NONE;
}

static struct lt_res model_min(unsigned p)
{
    struct lt_res r = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    for (uint32_t s = 0; s < M.n[p]; s++) {
        const struct model_slot *x = &M.slot[p][s];
        if (x->item == SQ_NONE || !x->active)
            continue;
        r.cpu = fmin(r.cpu, x->req.cpu);
        r.mem = fmin(r.mem, x->req.mem);
        r.disk = fmin(r.disk, x->req.disk);
    }
    return r;
}

/* A random item of state want (0 inactive, 1 active) that is added and not released, or
 * N_ITEM if none is found in a few tries. */
static uint32_t random_item(int want)
{
    for (int tries = 0; tries < 64; tries++) {
        uint32_t it = (uint32_t)(rnd() % N_ITEM);
        unsigned p = M.prio_of[it];
        if (p == N_PRIO)
            continue;
        const struct model_slot *x = &M.slot[p][M.where[it]];
        if (x->item == it && (int)x->active == want)
            return it;
    }
    return N_ITEM;
}

static void check_all(struct sq *q)
{
    size_t active = 0;

    for (unsigned p = 0; p < N_PRIO; p++) {
        struct lt_res a = sq_min(q, p), b = model_min(p);
        assert_memory_equal(&a, &b, sizeof(a)); /* bitwise: mins of the same values */
        for (uint32_t s = 0; s < M.n[p]; s++) {
            if (M.slot[p][s].item == SQ_NONE)
                continue;
            assert_int_equal(sq_item(q, p, s), M.slot[p][s].item);
            active += M.slot[p][s].active;
        }
    }
    assert_int_equal(q->active, active);
}

static void test_squeue_matches_a_plain_model(void **state)
{
    struct sq q;
    uint32_t next_item = 0;
    long finds = 0, hits = 0;

    (void)state;
    memset(&M, 0, sizeof(M));
    for (unsigned p = 0; p < N_PRIO; p++) {
        M.slot[p] = calloc(N_ITEM, sizeof(*M.slot[p]));
        assert_non_null(M.slot[p]);
    }
    for (uint32_t i = 0; i < N_ITEM; i++)
        M.prio_of[i] = N_PRIO;
    assert_int_equal(sq_init(&q, N_PRIO, moved, &M), 0);
    for (long step = 0; step < 200000; step++) {
        unsigned op = (unsigned)(rnd() % 100);
        if (op < 12 && next_item < N_ITEM) { /* add */
            unsigned p = (unsigned)(rnd() % N_PRIO);
            uint32_t slot, kept = 0;
            for (uint32_t s = 0; s < M.n[p]; s++)
                kept += M.slot[p][s].item != SQ_NONE;
            assert_int_equal(sq_add(&q, p, next_item, &slot), 0);
            if (slot == kept && kept != M.n[p])
                M.n[p] = kept; /* compacted: the released slots were dropped */
            assert_int_equal(slot, M.n[p]);
            M.slot[p][M.n[p]++] = (struct model_slot){next_item, false, {0, 0, 0}};
            M.where[next_item] = slot;
            M.prio_of[next_item] = p;
            next_item++;
        } else if (op < 40) { /* activate */
            uint32_t it = random_item(0);
            if (it == N_ITEM)
                continue;
            struct model_slot *x = &M.slot[M.prio_of[it]][M.where[it]];
            x->req = (struct lt_res){pick(), pick(), pick()};
            x->active = true;
            sq_activate(&q, M.prio_of[it], M.where[it], &x->req);
        } else if (op < 62) { /* deactivate */
            uint32_t it = random_item(1);
            if (it == N_ITEM)
                continue;
            M.slot[M.prio_of[it]][M.where[it]].active = false;
            sq_deactivate(&q, M.prio_of[it], M.where[it]);
        } else if (op < 70) { /* release */
            uint32_t it = random_item(0);
            if (it == N_ITEM)
                continue;
            M.slot[M.prio_of[it]][M.where[it]].item = SQ_NONE;
            sq_release(&q, M.prio_of[it], M.where[it]);
        } else { /* find */
            unsigned p = (unsigned)(rnd() % N_PRIO);
            uint32_t from = M.n[p] ? (uint32_t)(rnd() % (M.n[p] + 1)) : 0;
            struct lt_res f = {pick(), pick(), pick()};
            if (rnd() % 4 == 0)
                from = 0;
            uint32_t a = sq_find(&q, p, from, &f), b = model_find(p, from, &f);
            assert_int_equal(a, b);
            finds++;
            hits += a != SQ_NONE;
        }
        if (step % 5000 == 0)
            check_all(&q);
    }
    check_all(&q);
    /* the run exercised what it is for */
    assert_true(M.moved_seen);
    assert_true(hits > finds / 10 && hits < finds);
    sq_free(&q);
    for (unsigned p = 0; p < N_PRIO; p++)
        free(M.slot[p]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_squeue_matches_a_plain_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
