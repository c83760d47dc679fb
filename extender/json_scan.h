/* json_scan.h -- a strict JSON cursor that checks and skips values without building them.
 *
 * The extender's full-Nodes requests carry every candidate node as a whole core/v1 Node (about
 * 3.7 KB each, 1.9 MB for 500 nodes), of which the filter needs only metadata.name and the
 * bytes to echo. Parsing such a body into a Jansson tree costs about 100,000 allocations and
 * as many frees. This cursor walks the text once instead: the caller steps through the few
 * objects it cares about (ext_jscan_member, ext_jscan_element) and skips everything else
 * (ext_jscan_value), getting each value's type and byte range. Nothing is allocated.
 *
 * Strictness. Every byte is checked: a text the cursor accepts is one Jansson 2.14's
 * json_loadb(text, len, 0) accepts, and the other way round, with one exception below. That is
 * RFC 8259 JSON plus Jansson's own limits:
 *   - strings are valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), have
 *     no raw control characters (U+0000..U+001F), and \u escapes pair their surrogates;
 *     \u0000 is refused (Jansson needs JSON_ALLOW_NUL for it);
 *   - integers (no fraction, no exponent) fit int64_t; a real whose magnitude rounds past
 *     DBL_MAX is refused (an underflow to 0 is accepted), as Jansson's strtoll/strtod do;
 *   - values nest at most EXT_JSON_MAX_DEPTH deep, counted as Jansson counts them;
 *   - a document (ext_json_check) is one object or array, then only whitespace.
 * The exception: Jansson skips a NUL byte that directly follows a number or true/false/null
 * (its lexer "ungets" the byte it stopped at, and a NUL in its look-ahead buffer reads as
 * "empty"), so it accepts "[1\0]". The cursor refuses every NUL byte outside a string, as
 * RFC 8259 and Go's encoding/json do. tests/support/ext_args_ref.c states this exception where it
 * compares the two, and the fuzz target checks it on every input.
 *
 * Errors are LT_EPARSE. The cursor records the byte offset of the first offending byte and
 * a short reason; ext_jscan_error turns them into an lt_err with line and column. Callers that
 * must report exactly what Jansson reports (ext_codec.c) re-parse a rejected text with
 * Jansson, which is only paid for bad input.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_JSON_SCAN_H
#define LT_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "lt_err.h"

/* Deepest nesting accepted: Jansson's JSON_PARSER_MAX_DEPTH (load.c). A document's top-level
 * value is at depth 1 and a member or element one deeper than its container; a value of any
 * type, scalars included, deeper than this is an error. So 2,048 nested empty arrays pass and
 * 2,048 nested arrays around a number do not, exactly as in Jansson. */
#define EXT_JSON_MAX_DEPTH 2048

enum ext_jtype {
    EXT_J_ABSENT = 0, /* no value (a member that is not there) */
    EXT_J_NULL,
    EXT_J_FALSE,
    EXT_J_TRUE,
    EXT_J_NUMBER,
    EXT_J_STRING,
    EXT_J_ARRAY,
    EXT_J_OBJECT
};

/* One value of the text. */
struct ext_jval {
    enum ext_jtype type;
    size_t off; /* offset of its first byte (the quote of a string, the brace of an object) */
    size_t len; /* bytes up to and including its last byte; 0 when absent */
    bool esc;   /* a string with at least one backslash escape */
};

/* The cursor: caller storage, no resources (nothing to release). */
struct ext_jscan {
    const unsigned char *s; /* the text; borrowed */
    size_t len;             /* its length in bytes */
    size_t pos;             /* offset of the next byte to read */
    size_t err_off;         /* after a failure: offset of the byte that broke the grammar */
    const char *err_what;   /* after a failure: what was wrong (static text); NULL before */
};

/* Starts a cursor at the beginning of s[0..len). */
void ext_jscan_init(struct ext_jscan *sc, const char *s, size_t len);

/* Skips whitespace; returns the next byte (not consumed), or -1 at the end of the text. */
int ext_jscan_peek(struct ext_jscan *sc);

/* Checks and steps over one value whose nesting depth is `depth` (1 for a top-level value),
 * whitespace before it included: *v receives its type and range. Returns 0, or LT_EPARSE with
 * the position recorded in sc (sc->pos is then unspecified). */
int ext_jscan_value(struct ext_jscan *sc, unsigned depth, struct ext_jval *v) LT_MUST_CHECK;

/* Opens the object or array that starts at the next byte (whitespace skipped; the caller has
 * peeked '{' or '['), which is a value at `depth`: consumes the brace and sets v->off and
 * v->type; the member or element loop that follows completes v->len. LT_EPARSE if depth
 * exceeds EXT_JSON_MAX_DEPTH. */
int ext_jscan_open(struct ext_jscan *sc, unsigned depth, struct ext_jval *v) LT_MUST_CHECK;

/* The next member of an object opened with ext_jscan_open. *first is true before the first
 * call and cleared by it. Returns 1 when a member follows: *key is its key (a checked string)
 * and the ':' has been consumed, so the caller must read the value next (ext_jscan_value or
 * ext_jscan_open at the object's depth + 1). Returns 0 after the closing '}', setting
 * obj->len. LT_EPARSE on a syntax error. */
int ext_jscan_member(struct ext_jscan *sc, bool *first, struct ext_jval *obj,
                     struct ext_jval *key) LT_MUST_CHECK;

/* The next element of an array opened with ext_jscan_open, as ext_jscan_member: 1 when an
 * element follows (the caller reads it), 0 after the closing ']' (arr->len set), LT_EPARSE. */
int ext_jscan_element(struct ext_jscan *sc, bool *first, struct ext_jval *arr) LT_MUST_CHECK;

/* Skips trailing whitespace; LT_EPARSE unless the text ends there. */
int ext_jscan_end(struct ext_jscan *sc) LT_MUST_CHECK;

/* Records a failure at the next byte (whitespace skipped), for a caller whose grammar wants
 * something else there: what, unless the text ends there or has a NUL byte there, which are
 * named as such. Returns LT_EPARSE. */
int ext_jscan_fail(struct ext_jscan *sc, const char *what);

/* Records the cursor's failure in err: LT_EPARSE, the line and column (1-based, in
 * characters as Jansson counts them) of the offending byte, and "<what> at byte <offset>".
 * Returns LT_EPARSE. */
int ext_jscan_error(const struct ext_jscan *sc, struct lt_err *err);

/* True if string value v (as checked by the cursor, over the same text) is exactly lit once
 * unescaped: "items", "it\u0065ms" and "\u0069tems" all match "items". */
bool ext_jscan_str_is(const struct ext_jscan *sc, const struct ext_jval *v, const char *lit);

/* Writes the unescaped bytes of string value v (checked by the cursor, over the same text) to
 * out, which has room for v->len bytes (never more are needed), and returns their number. No
 * NUL is added; none can occur inside (\u0000 is refused). */
size_t ext_jscan_unescape(const struct ext_jscan *sc, const struct ext_jval *v, char *out);

/* Checks that s[0..len) is a document json_loadb(s, len, 0) accepts (with the NUL exception
 * above): one object or array, surrounded only by whitespace. *top (may be NULL) receives its
 * type and range. Returns 0 or LT_EPARSE, recorded in err (may be NULL) as ext_jscan_error. */
int ext_json_check(const char *s, size_t len, struct ext_jval *top,
                   struct lt_err *err) LT_MUST_CHECK;

#endif
