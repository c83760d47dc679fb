/* jsonpath.h -- JSON-path validators and messages shared by lotus-sim's JSON readers
 * (jsonpath.c). Every function reports "AT: what" on err (LT_EINVAL unless said), AT being the
 * JSON path of the value; the caller sets the file as the error's source (sim_jp_load does).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_JSONPATH_H
#define SIM_JSONPATH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lt_err.h"

/* Bytes of a JSON path buffer; paths are built from the readers' own keys and bounded
 * indexes, and always fit. */
#define SIM_JP_LEN 96

/* Longest excerpt of a string value quoted in a message, so that messages fit LT_ERR_TEXT. */
#define SIM_JP_QUOTE 24

/* dst (SIM_JP_LEN bytes) = at + "." + key, and at + "[" + i + "]". */
void sim_jp_key(char *dst, const char *at, const char *key);
void sim_jp_index(char *dst, const char *at, size_t i);

/* Records "AT: message" as error code on err; returns code. */
LT_PRINTF(4, 5)
int sim_jp_bad(struct lt_err *err, int code, const char *at, const char *fmt, ...);

/* "AT: expected EXPECTED, got VALUE" (the value itself for scalars). */
int sim_jp_bad_value(struct lt_err *err, const char *at, const char *expected, json_t *v);

/* v is an object whose keys are all in known[0..n-1] ("unknown key 'K' (known: ...)"). */
int sim_jp_object(json_t *v, const char *at, const char *const *known, size_t n,
                  struct lt_err *err);

/* The member key of obj into *out (borrowed; NULL if absent and optional). */
int sim_jp_member(json_t *obj, const char *at, const char *key, bool required, json_t **out,
                  struct lt_err *err);

/* A finite number, > 0 if positive, else >= 0. */
int sim_jp_number(json_t *v, const char *at, bool positive, double *out, struct lt_err *err);

/* An integer in [lo, hi]. */
int sim_jp_integer(json_t *v, const char *at, json_int_t lo, json_int_t hi, json_int_t *out,
                   struct lt_err *err);

/* Parses the file at path into *out (a new reference), with path as err's source from here on;
 * on failure err has the position (LT_EPARSE, syntax) or the cause (LT_EIO, LT_ENOMEM). */
int sim_jp_load(const char *path, json_t **out, struct lt_err *err);

#endif
