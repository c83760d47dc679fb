/* err.c -- struct lt_err: first error wins, left-truncated sources, one message table.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void copy_source(char *dst, const char *src)
{
    size_t n;

    if (src == NULL) {
        dst[0] = '\0';
        return;
    }
    n = strlen(src);
    if (n < LT_ERR_SOURCE) {
        memcpy(dst, src, n + 1);
        return;
    }
    /* Keep the tail: the file name matters more than the directory. */
    memcpy(dst, "...", 3);
    memcpy(dst + 3, src + n - (LT_ERR_SOURCE - 4), LT_ERR_SOURCE - 4);
    dst[LT_ERR_SOURCE - 1] = '\0';
}

void lt_err_init(struct lt_err *err, const char *source)
{
    if (err == NULL)
        return;
    err->code = 0;
    err->line = 0;
    err->column = 0;
    err->text[0] = '\0';
    copy_source(err->source, source);
}

void lt_err_set_source(struct lt_err *err, const char *source)
{
    if (err != NULL)
        copy_source(err->source, source);
}

int lt_err_set(struct lt_err *err, int code, int64_t line, int column, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || err->code != 0)
        return code;
    err->code = code;
    err->line = line;
    err->column = column;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
    return code;
}

const char *lt_strerror(int code)
{
    switch (code) {
#define XX(name, val, msg)                                                                         \
    case LT_##name:                                                                                \
        return msg;
        LT_ERRNO_MAP(XX)
#undef XX
    default:
        return "unknown error";
    }
}

const char *lt_err_name(int code)
{
    switch (code) {
#define XX(name, val, msg)                                                                         \
    case LT_##name:                                                                                \
        return "LT_" #name;
        LT_ERRNO_MAP(XX)
#undef XX
    default:
        return "LT_E?";
    }
}
