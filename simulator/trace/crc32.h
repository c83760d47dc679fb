/* crc32.h -- the gzip/zlib CRC-32, with a carry-less-multiplication fast path.
 *
 * sim_crc32 is a drop-in for zlib's crc32() / crc32_z(): the reflected polynomial 0xEDB88320,
 * initial and final XOR with 0xFFFFFFFF done inside, so sim_crc32(0, NULL, 0) is 0 and
 * sim_crc32(sim_crc32(0, a, n), b, m) is the CRC of a followed by b. It decides at run time,
 * on every call of 64 bytes or more, whether the CPU has PCLMULQDQ and SSE4.1 (x86-64, gcc
 * or clang); without them, on other targets and for shorter buffers it calls zlib's crc32_z.
 * No state, no allocation: safe to call from any number of threads.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_CRC32_H
#define SIM_CRC32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Returns the CRC-32 of buf[0..len) continued from crc (0 to start; the value a previous call
 * returned to continue). Equal to zlib's crc32_z(crc, buf, len) for every input, including
 * buf == NULL, for which it returns 0 as zlib does. buf is read, never written; it need not
 * be aligned. O(len). */
uint32_t sim_crc32(uint32_t crc, const unsigned char *buf, size_t len);

/* For tests: the same function without the PCLMUL path (zlib's crc32_z). */
uint32_t sim_crc32_portable(uint32_t crc, const unsigned char *buf, size_t len);

/* For tests: true if sim_crc32 takes the PCLMUL path on this CPU (for buffers of 64 bytes or
 * more), false if it always falls back to sim_crc32_portable. */
bool sim_crc32_uses_pclmul(void);

#endif
