/* ext_args_ref.h -- test support: the Jansson reference the extender's one-pass decoding is
 * checked against (tests/unit/extender/test_json_scan.c over fixtures, generated and mutated
 * bodies; tests/fuzz/fuzz_extender_json.c over every fuzz input).
 *
 * The reference parses the whole body with json_loadb(body, len, 0), as the codec did before
 * it walked bodies with extender/json_scan.h, and reads the request from Jansson's tree the way
 * that decoder did: Go's case-insensitive field matching over Jansson's iteration order, exact
 * core/v1 keys, the same checks in the same order. It then compares, field by field, what
 * ext_args_decode and ext_json_check return. The one accepted difference is the one json_scan.h
 * states: a NUL byte right after a number or literal, which Jansson skips and the cursor
 * refuses; the check then requires that Jansson's tree is the same without that byte and
 * checks the body without it instead.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LOTUS_TESTS_EXT_ARGS_REF_H
#define LOTUS_TESTS_EXT_ARGS_REF_H

#include <stddef.h>

/* Checks that ext_json_check(body, len) accepts exactly when json_loadb(body, len, 0) does
 * (within the exception above). Returns 0, or -1 with the disagreement in why (why_len
 * bytes, NUL-terminated). */
int ext_ref_check_json(const char *body, size_t len, char *why, size_t why_len);

/* Checks ext_args_decode(body, len) against the reference: both fail with the same code,
 * line, column and message, or both succeed with the same Pod (its summary and its tree),
 * mode, node names and node objects (each echoed byte range parses to the reference's node),
 * and NodeNames. Returns 0, or -1 with the disagreement in why. */
int ext_ref_check_args(const char *body, size_t len, char *why, size_t why_len);

#endif
