/* lt_rng.h -- explicit, seeded randomness: xoshiro256** seeded through splitmix64.
 *
 * A value type in caller storage (STYLE.md R11). lt_rng_init(r, seed, stream) fills the state
 * with four splitmix64 outputs of seed (never all zero, since splitmix64 is a bijection) and
 * then applies the xoshiro256** jump (2^128 steps) `stream` times, so streams of one seed are
 * non-overlapping subsequences. Every consumer (policy, workload, machine sampler, eviction)
 * draws from its own stream: a new draw in one place does not shift another.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_RNG_H
#define LT_RNG_H

#include <stdint.h>

struct lt_rng {
    uint64_t s[4]; /* xoshiro256** state */
};

/* Stream ids used by lotus itself; any other value is a valid stream too. */
enum lt_rng_stream {
    LT_RNG_POLICY = 0,   /* placement policies (random) */
    LT_RNG_WORKLOAD = 1, /* synthetic workload generators */
    LT_RNG_MACHINES = 2, /* T(x) machine sampling */
    LT_RNG_EVICTION = 3, /* eviction policies (rnd) */
    LT_RNG_MEMORY = 4,   /* the slot simulator's memory checkpoints */
    LT_RNG_PREEMPT = 5,  /* the replay's preemption: where its search for a machine starts */
    LT_RNG_ESTIMATE = 6  /* lotus-sim queue: noisy run-time estimates (--estimate noisy:CV) */
};

/* Seeds r from (seed, stream); stream jumps cost ~256 steps each. */
void lt_rng_init(struct lt_rng *r, uint64_t seed, uint64_t stream);

/* Next 64 random bits. */
uint64_t lt_rng_next(struct lt_rng *r);

/* Uniform double in [0, 1): the top 53 bits times 2^-53. */
double lt_rng_uniform(struct lt_rng *r);

/* Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject); n must be > 0. */
uint64_t lt_rng_below(struct lt_rng *r, uint64_t n);

/* splitmix64 step: advances *x and returns the next output (a 64-bit mixer on its own). */
uint64_t lt_splitmix64(uint64_t *x);

#endif
