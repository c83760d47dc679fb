/* mem.c -- allocation wrappers with optional fault injection (lotus_faults only).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LT_MEM_FAULTS
/* Test-only global state: lives in the lotus_faults archive, never in liblotus.a (R10). */
static int64_t fail_at = -1;
static int64_t n_allocs;

static int should_fail(void)
{
    int64_t k = n_allocs++;
    return fail_at >= 0 && k >= fail_at;
}

int64_t lt_mem_fail_after(int64_t k)
{
    int64_t made = n_allocs;

    fail_at = k;
    n_allocs = 0;
    return made;
}
#else
static int should_fail(void)
{
    return 0;
}

int64_t lt_mem_fail_after(int64_t k)
{
    (void)k;
    return 0;
}
#endif

void *lt_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *lt_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    if (should_fail())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *lt_reallocarray(void *p, size_t count, size_t size)
{
    size_t n;

    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    n = count * size;
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void lt_free(void *p)
{
    free(p);
}

char *lt_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lt_malloc(n);

    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

char *lt_strfmt(const char *fmt, ...)
{
    va_list ap;
    int len;
    char *s;

    va_start(ap, fmt);
    len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0 || (s = lt_malloc((size_t)len + 1)) == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}
