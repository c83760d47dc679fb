/* rng.c -- xoshiro256** 1.0 and splitmix64 (Blackman & Vigna, public-domain reference code
 * at prng.di.unimi.it), rewritten in lotus style. tests/unit/scoring/test_rng.c pins the outputs.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_rng.h"

#include <assert.h>

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t lt_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t lt_rng_next(struct lt_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Equivalent to 2^128 calls of lt_rng_next (the reference jump polynomial). */
static void jump(struct lt_rng *r)
{
    static const uint64_t poly[4] = {UINT64_C(0x180ec6d33cfd0aba), UINT64_C(0xd5a61266f0c9392c),
                                     UINT64_C(0xa9582618e03fc9aa), UINT64_C(0x39abdc4529b1661c)};
    uint64_t t[4] = {0, 0, 0, 0};

    for (int i = 0; i < 4; i++) {
        for (int b = 0; b < 64; b++) {
            if (poly[i] & (UINT64_C(1) << b)) {
                t[0] ^= r->s[0];
                t[1] ^= r->s[1];
                t[2] ^= r->s[2];
                t[3] ^= r->s[3];
            }
            (void)lt_rng_next(r);
        }
    }
    for (int i = 0; i < 4; i++)
        r->s[i] = t[i];
}

void lt_rng_init(struct lt_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed;

    for (int i = 0; i < 4; i++)
        r->s[i] = lt_splitmix64(&x);
    for (uint64_t k = 0; k < stream; k++)
        jump(r);
}

double lt_rng_uniform(struct lt_rng *r)
{
    return (double)(lt_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t lt_rng_below(struct lt_rng *r, uint64_t n)
{
    unsigned __int128 m;
    uint64_t lo, t;

    assert(n > 0);
    m = (unsigned __int128)lt_rng_next(r) * n;
    lo = (uint64_t)m;
    if (lo < n) {
        t = -n % n;
        while (lo < t) {
            m = (unsigned __int128)lt_rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}
