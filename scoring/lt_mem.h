/* lt_mem.h -- the one place lotus allocates, so tests can make the k-th allocation fail.
 *
 * liblotus.a calls malloc/realloc/free through these. The test archive lotus_faults is built
 * with -DLT_MEM_FAULTS; there lt_mem_fail_after(k) makes allocation number k (0-based,
 * counted from the call) and every later one return NULL until lt_mem_fail_after(-1).
 * In liblotus.a lt_mem_fail_after does nothing and there is no counter (STYLE.md R10, R19).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_MEM_H
#define LT_MEM_H

#include <stddef.h>
#include <stdint.h>

/* malloc(n); NULL on failure. n == 0 is treated as 1. */
void *lt_malloc(size_t n);

/* calloc(count, size) with an overflow check; NULL on failure or overflow. */
void *lt_calloc(size_t count, size_t size);

/* realloc(p, count * size) with an overflow check; NULL on failure (p is untouched). */
void *lt_reallocarray(void *p, size_t count, size_t size);

/* free(p); NULL is a no-op. */
void lt_free(void *p);

/* strdup through lt_malloc; NULL on failure. */
char *lt_strdup(const char *s);

/* A new string printf'd from fmt through lt_malloc (lt_free it); NULL on failure. */
char *lt_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fault injection (effective only in the lotus_faults archive): allocation number k from
 * now on fails, and so does every later one; k < 0 turns injection off. Returns the number
 * of allocations made since the previous call. */
int64_t lt_mem_fail_after(int64_t k);

#endif
