/* trace.h -- the Google clusterdata-2011-2 trace reader: tables, rows, parts, errors.
 *
 * Reads machine_events, job_events and task_events exactly as Google publishes them: a
 * directory DIR holding DIR/<table>/part-NNNNN-of-MMMMM.csv.gz (or .csv, uncompressed),
 * streamed in part order, one row at a time, with no preprocessing step. The schema is
 * ../shared/spec/google-trace-2011.md section 1.5 (schema.csv column order); docs/formats.md
 * ("Google 2011 trace") states what the reader accepts.
 *
 * Two layers:
 *   tr_parse_*_line  pure functions: one line (without its newline) -> one row, or an error
 *                    naming the 1-based column and what was wrong. No allocation, no I/O;
 *                    bounded by the line length (the fuzz target drives them).
 *   struct tr_reader one table: finds and orders the parts, decompresses them (ISA-L's
 *                    isal_inflate, each gzip member's CRC-32 and length checked; plain .csv
 *                    too), splits lines, parses them, checks that timestamps never
 *                    go backwards (within a part and across parts), counts rows per event
 *                    type, and reports errors as "PART:LINE:COLUMN: message". With
 *                    skip_bad_lines a bad line is counted (and the first few remembered)
 *                    instead of stopping the read.
 *
 * Times are microseconds as in the trace (trace second s <=> (600 + s) * 10^6). 0 means
 * "before the trace window"; TR_TIME_AFTER (2^63 - 1) means "after it": any value from 2^63-1
 * up to 2^64-1 reads as TR_TIME_AFTER.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"

#define TR_TIME_AFTER INT64_MAX /* 2^63 - 1: "after the end of the trace window" */

enum tr_table { TR_MACHINE_EVENTS = 0, TR_JOB_EVENTS = 1, TR_TASK_EVENTS = 2, TR_N_TABLES = 3 };

/* Machine event types (schema: ADD 0, REMOVE 1, UPDATE 2). */
enum tr_machine_type { TR_M_ADD = 0, TR_M_REMOVE = 1, TR_M_UPDATE = 2, TR_M_N_TYPES = 3 };

/* Job and task event types (schema: SUBMIT 0 .. UPDATE_RUNNING 8). */
enum tr_event_type {
    TR_SUBMIT = 0,
    TR_SCHEDULE = 1,
    TR_EVICT = 2,
    TR_FAIL = 3,
    TR_FINISH = 4,
    TR_KILL = 5,
    TR_LOST = 6,
    TR_UPDATE_PENDING = 7,
    TR_UPDATE_RUNNING = 8,
    TR_N_TYPES = 9
};

/* Missing-info values (schema: 0 SNAPSHOT_BUT_NO_TRANSITION, 1 NO_SNAPSHOT_OR_TRANSITION,
 * 2 EXISTS_BUT_NO_CREATION); TR_MISSING_NONE when the field is empty. */
#define TR_MISSING_NONE (-1)

/* machine_events: time, machine ID, event type, platform ID, CPUs, Memory. */
struct tr_machine_row {
    int64_t time;        /* microseconds; TR_TIME_AFTER for 2^63-1 and above */
    uint64_t machine_id; /* 0 .. 2^63-1 */
    uint8_t type;        /* enum tr_machine_type */
    bool has_cap;        /* false when CPUs and Memory are both empty (32 ADD rows do this) */
    double cpu;          /* normalised capacity; 0 when !has_cap */
    double mem;          /* normalised capacity; 0 when !has_cap */
};

/* job_events: time, missing info, job ID, event type, user, scheduling class, job name,
 * logical job name. The hashes are checked for shape and not kept. */
struct tr_job_row {
    int64_t time;
    int8_t missing;     /* 0..2, or TR_MISSING_NONE */
    uint64_t job_id;    /* 0 .. 2^63-1 */
    uint8_t type;       /* enum tr_event_type */
    int8_t sched_class; /* 0..3, or -1 when empty */
};

/* task_events: time, missing info, job ID, task index, machine ID, event type, user,
 * scheduling class, priority, CPU request, memory request, disk space request, different
 * machines restriction. */
/* The 8-byte fields first, so that the row is 64 bytes with no padding (a parser's copy of
 * it is four 16-byte moves). */
struct tr_task_row {
    int64_t time;
    uint64_t job_id;       /* 0 .. 2^63-1 */
    uint64_t machine_id;   /* 0 when !has_machine */
    double cpu, mem, disk; /* requests (normalised, >= 0); an empty one alone reads as 0 */
    uint32_t task_index;   /* 0 .. 2^32-1 */
    int8_t missing;        /* 0..2, or TR_MISSING_NONE */
    bool has_machine;      /* machine ID present (never empty on SCHEDULE in the samples) */
    uint8_t type;          /* enum tr_event_type */
    int8_t sched_class;    /* 0..3, or -1 when empty */
    uint8_t priority;      /* 0..11 (mandatory) */
    bool has_req;          /* false when CPU, memory and disk requests are all empty */
    int8_t diff_machines;  /* 0 or 1, or -1 when empty */
};

/* Line-parse result: 0, or LT_EPARSE with the 1-based column (field number) and a message
 * in err->text ("field 6 (event type): '9' is not one of 0..8"). err->line is left 0; the
 * reader fills in the source and line. len excludes the newline; a trailing '\r' is an
 * error (the trace uses LF only). *out is untouched on failure; err may be NULL. */
LT_MUST_CHECK int tr_parse_machine_line(const char *line, size_t len, struct tr_machine_row *out,
                                        struct lt_err *err);
LT_MUST_CHECK int tr_parse_job_line(const char *line, size_t len, struct tr_job_row *out,
                                    struct lt_err *err);
LT_MUST_CHECK int tr_parse_task_line(const char *line, size_t len, struct tr_task_row *out,
                                     struct lt_err *err);

/* The tail of the last task line whose fast-path parse was done in full (from field 7, the
 * user hash, to the end of the line) and the fields read from it. Consecutive rows of a job
 * usually repeat it byte for byte (9 rows in 10 of the sample's part 0, 3 in 4 of part 1), and
 * then tr_parse_task_line_memo takes those fields from here instead of parsing them again: the
 * same bytes give the same fields. Zero-initialise; n = 0 means none (a tail that parses is
 * never empty, but a broken line's may be: it must not match the empty memo). */
#define TR_MEMO_TAIL 128
struct tr_task_memo {
    size_t n;
    char tail[TR_MEMO_TAIL];
    double cpu, mem, disk;
    int8_t sched_class, diff_machines;
    uint8_t priority;
    bool has_req;
};

/* tr_parse_task_line with a memo of the previous line's tail (memo may be NULL): same
 * contract, same results. */
LT_MUST_CHECK int tr_parse_task_line_memo(const char *line, size_t len, struct tr_task_memo *memo,
                                          struct tr_task_row *out, struct lt_err *err);

/* tr_parse_task_line without its fast path for the usual shape of a line (trace_line.c):
 * same contract, same results. For the tests that hold the two equal. */
LT_MUST_CHECK int tr_parse_task_line_general(const char *line, size_t len, struct tr_task_row *out,
                                             struct lt_err *err);

struct tr_opts {
    bool skip_bad_lines; /* count bad lines and go on instead of failing */
    uint32_t first_part; /* first part number to read (default 0) */
    uint32_t max_parts;  /* read at most this many parts; 0 = all found */
};

/* Rows read and rows skipped, per event type. */
struct tr_counts {
    uint64_t rows;                /* good rows returned */
    uint64_t by_type[TR_N_TYPES]; /* good rows per event type (machine tables use 0..2) */
    uint64_t bad_lines;           /* lines skipped with skip_bad_lines */
    uint32_t parts;               /* parts opened so far */
};

struct tr_reader;

/* Opens table t under dir: finds DIR/<table name>/part-NNNNN-of-MMMMM.csv.gz or .csv (a
 * part present in both forms is an error), checks that the part numbers are consecutive
 * from first_part and agree on MMMMM, and opens the first. A missing directory or no parts:
 * LT_EIO naming the path. Other files in the directory are ignored. opts NULL means all
 * defaults (zero). Returns an owned reader (tr_close) or NULL with err set. */
struct tr_reader *tr_open(const char *dir, enum tr_table t, const struct tr_opts *opts,
                          struct lt_err *err);

/* Closes r; NULL is a no-op. */
void tr_close(struct tr_reader *r);

/* Reads the next row of r's table into *out (a struct tr_machine_row, tr_job_row or
 * tr_task_row, as the table says). Returns 1 for a row, 0 at the end of the last part, or
 * a negative LT_E* code with err set: LT_EPARSE ("PART:LINE:COLUMN"), LT_EIO (unreadable or
 * truncated gzip, naming the part), LT_ERANGE (a timestamp earlier than the previous row's,
 * naming both places). After an error the reader returns the same error again. With
 * skip_bad_lines, a line that does not parse or goes back in time is counted in bad_lines and
 * skipped instead; I/O errors and a line longer than 64 KiB (LT_EPARSE) still stop the read.
 * A last line without a newline is read as a line. */
LT_MUST_CHECK int tr_next(struct tr_reader *r, void *out, struct lt_err *err);

/* Counts so far, the current part's path and line number (for progress reports), and the
 * first bad lines skipped (up to TR_KEEP_BAD messages, "PART:LINE:COLUMN: message"). */
#define TR_KEEP_BAD 10
const struct tr_counts *tr_counts(const struct tr_reader *r);
const char *tr_part_path(const struct tr_reader *r);
int64_t tr_line(const struct tr_reader *r);
size_t tr_bad_messages(const struct tr_reader *r, const char *const **out);

/* Compressed bytes consumed so far and in all parts, for the progress bar's ETA. */
uint64_t tr_bytes_read(const struct tr_reader *r);
uint64_t tr_bytes_total(const struct tr_reader *r);

/* Table name as in the trace layout ("task_events"), and an event type's name ("SUBMIT",
 * "ADD" for machine tables). */
const char *tr_table_name(enum tr_table t);
const char *tr_type_name(enum tr_table t, unsigned type);

#endif
