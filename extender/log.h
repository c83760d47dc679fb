/* log.h -- lotus-extender's logs: one JSON object per line on stderr.
 *
 * Each line is {"ts":"2024-05-01T12:00:00.123Z","level":"info","msg":"...",<fields>}: the
 * time in UTC with milliseconds, the level, a fixed message (grep-able, STYLE.md R7) and the
 * fields of the event, flat, in the order given. Lines from many threads never interleave:
 * each is built in memory and written with one locked fputs + fflush. Levels below the
 * configured one cost one atomic load. Warn and error lines are rate-limited per message: at
 * most 10 a second each, then one "suppressed similar lines" line with the count (log.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_LOG_H
#define EXT_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

enum ext_log_level { EXT_LOG_DEBUG = 0, EXT_LOG_INFO, EXT_LOG_WARN, EXT_LOG_ERROR };

/* Sets the lowest level written (default EXT_LOG_INFO). Thread-safe. */
void ext_log_set_level(enum ext_log_level lvl);

/* Parses "debug", "info", "warn" or "error"; false for anything else. */
bool ext_log_level_parse(const char *s, enum ext_log_level *out);

/* "debug", "info", "warn", "error". */
const char *ext_log_level_name(enum ext_log_level lvl);

/* True if a line of level lvl would be written. */
bool ext_log_enabled(enum ext_log_level lvl);

/* Writes one line. fields is a json_pack() format for an object ("{s:s, s:I}") or NULL for
 * none, followed by its arguments. A field named ts, level or msg is dropped. Never fails
 * visibly: if the fields cannot be packed, the line carries "log_error" instead. A warn or
 * error line past the rate limit of its msg is counted and dropped. */
void ext_log(enum ext_log_level lvl, const char *msg, const char *fields, ...);

/* Like ext_log with an already built object of fields (borrowed; NULL for none). */
void ext_log_obj(enum ext_log_level lvl, const char *msg, json_t *fields);

/* Writes the "suppressed similar lines" summary of every message whose window has ended with
 * lines dropped (all: of every message, e.g. at exit). Call it now and then (main does, once a
 * second), so that the count of a flood that stopped is not left unsaid. */
void ext_log_flush(bool all);

/* Replaces the clock of the rate limit (milliseconds, any origin; NULL: CLOCK_MONOTONIC).
 * For tests. */
void ext_log_set_clock(int64_t (*now_ms)(void));

#endif
