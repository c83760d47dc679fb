/* lt_err.h -- error codes and the error record every fallible lotus call fills.
 *
 * Actions return 0 or a negative LT_E* code; constructors return NULL. Either way the last
 * parameter is a `struct lt_err *` (may be NULL) that receives the code, the place (source,
 * line, column) and a message. The first error recorded wins, so a caller deep in a parse can
 * add nothing that hides the original cause (Jansson's json_error_t, STYLE.md R5-R7).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_ERR_H
#define LT_ERR_H

#include <stdint.h>

#define LT_MUST_CHECK   __attribute__((warn_unused_result))
#define LT_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* X-macro: name, value, generic message. Drives the enum, lt_strerror and lt_err_name. */
#define LT_ERRNO_MAP(XX)                                                                           \
    XX(EINVAL, -1, "invalid argument")                                                             \
    XX(ENOMEM, -2, "out of memory")                                                                \
    XX(EPARSE, -3, "malformed input")                                                              \
    XX(ERANGE, -4, "value out of range")                                                           \
    XX(ENOTFOUND, -5, "unknown name")                                                              \
    XX(EINFEASIBLE, -6, "linear program is infeasible")                                            \
    XX(EIO, -7, "input/output error")

enum lt_errno {
#define XX(name, val, msg) LT_##name = (val),
    LT_ERRNO_MAP(XX)
#undef XX
};

#define LT_ERR_TEXT   256 /* message bytes incl. NUL: room for a list of known names */
#define LT_ERR_SOURCE 256 /* source bytes incl. NUL; longer paths keep their tail ("...") */

struct lt_err {
    int code;                   /* LT_E*; 0 when no error was set */
    int64_t line;               /* 1-based line; 0 if not applicable */
    int column;                 /* 1-based field/column; 0 if not applicable */
    char source[LT_ERR_SOURCE]; /* file path, "<request>", "lp", or "" */
    char text[LT_ERR_TEXT];     /* message: what, then the subject in quotes (R7) */
};

/* Clears err and sets its source (NULL means ""). err may be NULL. */
void lt_err_init(struct lt_err *err, const char *source);

/* Replaces the source only (e.g. the next trace part); keeps any recorded error. */
void lt_err_set_source(struct lt_err *err, const char *source);

/* Records an error unless one is already recorded; returns code so that callers can write
 * `return lt_err_set(err, LT_EINVAL, 0, 0, "...")`. err may be NULL. */
int lt_err_set(struct lt_err *err, int code, int64_t line, int column, const char *fmt, ...)
    LT_PRINTF(5, 6);

/* Generic message for a code ("out of memory"); "unknown error" for anything else. */
const char *lt_strerror(int code);

/* Symbolic name for a code ("LT_ENOMEM"); "LT_E?" for anything else. */
const char *lt_err_name(int code);

#endif
