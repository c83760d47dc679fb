/* test_crc32.c -- sim_crc32 (simulator/trace/crc32.c) against zlib's crc32_z.
 *
 * zlib is the reference: every length 0..1024 at every alignment 0..15, a large buffer,
 * incremental calls split at random points, all-zero and all-0xFF data, and the standard
 * check value. Each short case copies its bytes to the end of an allocation of exactly that
 * size, so ASan reports a read past buf + len. The PCLMUL path is compared with the portable
 * one directly as well (skipped on a CPU without PCLMULQDQ/SSE4.1).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"
#include "trace/crc32.h"

#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "lt_mem.h"
#include "lt_rng.h"

#define SHORT_MAX 1024              /* every length up to this is checked */
#define ALIGN_MAX 16                /* at every offset from a 16-byte boundary */
#define LARGE_LEN ((1u << 20) + 13) /* 1 MiB + 13: many 64-byte steps and a ragged tail */
#define SEED      20240531u         /* fixed seed; printed on failure */

static uint32_t zlib_crc(uint32_t crc, const unsigned char *buf, size_t len)
{
    return (uint32_t)crc32_z(crc, buf, len);
}

/* A new buffer of n random bytes (lt_free it). */
static unsigned char *random_bytes(struct lt_rng *rng, size_t n)
{
    unsigned char *b = lt_malloc(n);

    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)lt_rng_next(rng);
    return b;
}

/* sim_crc32 of src[0..len) placed at offset off of an allocation of exactly off + len bytes,
 * from start value crc, must equal zlib's. */
static void check_at(const unsigned char *src, size_t len, size_t off, uint32_t crc)
{
    unsigned char *blk = lt_malloc(off + len);
    uint32_t want = zlib_crc(crc, src, len);
    uint32_t got;

    assert_non_null(blk);
    memcpy(blk + off, src, len);
    got = sim_crc32(crc, blk + off, len);
    if (got != want)
        print_error("len %zu off %zu crc 0x%08x: got 0x%08x, zlib 0x%08x\n", len, off,
                    (unsigned)crc, (unsigned)got, (unsigned)want);
    assert_int_equal(got, want);
    lt_free(blk);
}

static void test_crc32_check_value_of_123456789(void **state)
{
    static const char digits[] = "123456789";

    (void)state;
    assert_int_equal(sim_crc32(0, (const unsigned char *)digits, 9), 0xCBF43926u);
    assert_int_equal(sim_crc32_portable(0, (const unsigned char *)digits, 9), 0xCBF43926u);
}

static void test_crc32_empty_input_follows_zlib(void **state)
{
    static const unsigned char byte = 'a';

    (void)state;
    assert_int_equal(sim_crc32(0, NULL, 0), 0);
    assert_int_equal(sim_crc32(0x12345678u, NULL, 0), zlib_crc(0x12345678u, NULL, 0));
    assert_int_equal(sim_crc32(0x12345678u, &byte, 0), 0x12345678u);
}

static void test_crc32_equals_zlib_for_every_short_length_and_alignment(void **state)
{
    struct lt_rng rng;
    unsigned char *src;

    (void)state;
    lt_rng_init(&rng, SEED, 0);
    src = random_bytes(&rng, SHORT_MAX);
    for (size_t len = 0; len <= SHORT_MAX; len++) {
        for (size_t off = 0; off < ALIGN_MAX; off++) {
            check_at(src, len, off, 0);
            check_at(src, len, off, (uint32_t)lt_rng_next(&rng));
        }
    }
    lt_free(src);
}

static void test_crc32_equals_zlib_on_one_mib_and_more(void **state)
{
    struct lt_rng rng;
    unsigned char *src;

    (void)state;
    lt_rng_init(&rng, SEED, 1);
    src = random_bytes(&rng, LARGE_LEN);
    for (size_t off = 0; off < ALIGN_MAX; off += 5)
        check_at(src, LARGE_LEN - off, off, 0);
    check_at(src, LARGE_LEN, 3, 0xFFFFFFFFu);
    lt_free(src);
}

static void test_crc32_equals_zlib_on_constant_bytes(void **state)
{
    static const size_t lens[] = {1, 15, 16, 63, 64, 65, 127, 128, 1000, 4096, 65536 + 7};
    static const int fills[] = {0x00, 0xFF};
    unsigned char *src = lt_malloc(65536 + 7);

    (void)state;
    assert_non_null(src);
    for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++) {
        memset(src, fills[f], 65536 + 7);
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            check_at(src, lens[i], 0, 0);
            check_at(src, lens[i], 1, 0);
        }
    }
    lt_free(src);
}

/* A buffer cut at random points, the pieces fed in order, gives the CRC of the whole. */
static void test_crc32_incremental_calls_equal_one_call(void **state)
{
    enum { LEN = 200000, ROUNDS = 50 };
    struct lt_rng rng;
    unsigned char *src;
    uint32_t want;

    (void)state;
    lt_rng_init(&rng, SEED, 2);
    src = random_bytes(&rng, LEN);
    want = zlib_crc(0, src, LEN);
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t crc = sim_crc32(0, NULL, 0);
        size_t pos = 0;

        while (pos < LEN) {
            /* Mostly short pieces (head/tail paths), sometimes long ones (the fold loop). */
            size_t cap = lt_rng_below(&rng, 4) == 0 ? 20000 : 130;
            size_t n = (size_t)lt_rng_below(&rng, cap + 1);

            if (n > LEN - pos)
                n = LEN - pos;
            crc = sim_crc32(crc, src + pos, n);
            pos += n;
        }
        if (crc != want)
            print_error("seed %u round %d: got 0x%08x, zlib 0x%08x\n", SEED, r, (unsigned)crc,
                        (unsigned)want);
        assert_int_equal(crc, want);
    }
    lt_free(src);
}

static void test_crc32_pclmul_path_equals_portable_path(void **state)
{
    enum { LEN = 70000, CASES = 2000 };
    struct lt_rng rng;
    unsigned char *src;

    (void)state;
    if (!sim_crc32_uses_pclmul()) {
        print_message("no PCLMULQDQ/SSE4.1 here: sim_crc32 is the portable path\n");
        skip();
    }
    lt_rng_init(&rng, SEED, 3);
    src = random_bytes(&rng, LEN);
    for (int i = 0; i < CASES; i++) {
        size_t off = (size_t)lt_rng_below(&rng, 64);
        size_t len = 64 + (size_t)lt_rng_below(&rng, LEN - 64 - off + 1);
        uint32_t crc = (uint32_t)lt_rng_next(&rng);

        assert_int_equal(sim_crc32(crc, src + off, len), sim_crc32_portable(crc, src + off, len));
    }
    lt_free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_check_value_of_123456789),
        cmocka_unit_test(test_crc32_empty_input_follows_zlib),
        cmocka_unit_test(test_crc32_equals_zlib_for_every_short_length_and_alignment),
        cmocka_unit_test(test_crc32_equals_zlib_on_one_mib_and_more),
        cmocka_unit_test(test_crc32_equals_zlib_on_constant_bytes),
        cmocka_unit_test(test_crc32_incremental_calls_equal_one_call),
        cmocka_unit_test(test_crc32_pclmul_path_equals_portable_path),
    };
    printf("sim_crc32: %s path\n", sim_crc32_uses_pclmul() ? "PCLMUL" : "portable");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
