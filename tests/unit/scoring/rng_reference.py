#!/usr/bin/env python3
"""rng_reference.py -- independent reimplementation of splitmix64 and xoshiro256** 1.0.

Written from the public-domain reference code of Blackman and Vigna (prng.di.unimi.it:
splitmix64.c, xoshiro256starstar.c), not from scoring/rng.c. It prints the constants that
tests/unit/scoring/test_rng.c pins: `python3 tests/unit/rng_reference.py`.

SPDX-License-Identifier: MIT
"""

M64 = (1 << 64) - 1
JUMP = (0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA, 0x39ABDC4529B1661C)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class SplitMix64:
    def __init__(self, seed):
        self.x = seed & M64

    def next(self):
        self.x = (self.x + 0x9E3779B97F4A7C15) & M64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


class Xoshiro256ss:
    def __init__(self, seed, stream=0):
        sm = SplitMix64(seed)
        self.s = [sm.next() for _ in range(4)]
        for _ in range(stream):
            self.jump()

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def jump(self):
        acc = [0, 0, 0, 0]
        for word in JUMP:
            for b in range(64):
                if word & (1 << b):
                    acc = [a ^ x for a, x in zip(acc, self.s)]
                self.next()
        self.s = acc


def below(r, n):
    """Lemire's nearly divisionless method (arXiv:1805.10941, Algorithm 5), as lt_rng.h
    documents: multiply, reject while the low word is below 2^64 mod n."""
    m = r.next() * n
    lo = m & M64
    if lo < n:
        t = ((1 << 64) - n) % n
        while lo < t:
            m = r.next() * n
            lo = m & M64
    return m >> 64


def main():
    for seed, stream in ((0, 0), (42, 0), (0, 1), (42, 1)):
        r = Xoshiro256ss(seed, stream)
        words = ", ".join(f"UINT64_C(0x{r.next():016x})" for _ in range(5))
        print(f"seed {seed}, stream {stream}: {words}")
    r = Xoshiro256ss(42, 0)
    print("seed 42, stream 0, below(6) x 12:", ", ".join(str(below(r, 6)) for _ in range(12)))
    r = Xoshiro256ss(42, 0)
    n = (1 << 63) + 1
    print("seed 42, stream 0, below(2^63 + 1) x 6:",
          ", ".join(f"UINT64_C(0x{below(r, n):016x})" for _ in range(6)),
          "then next():", f"UINT64_C(0x{r.next():016x})")
    sm = SplitMix64(0)
    print("splitmix64 from x = 0:", ", ".join(f"UINT64_C(0x{sm.next():016x})" for _ in range(2)))


if __name__ == "__main__":
    main()
