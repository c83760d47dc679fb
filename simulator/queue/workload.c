/* workload.c -- the CSV and Standard Workload Format readers of `lotus-sim queue`.
 *
 * Both readers share one line source (a file read in 64 KiB blocks, or a caller's buffer, so
 * the fuzz target and the tests drive the same code as the command), one bounded number
 * parser and one finishing step (stable sort by arrival, ids = positions). Lines are split
 * and parsed in place; a field is never copied except into a 64-byte buffer for strtod, after
 * a syntax check that lets only plain decimal numbers through (no "inf", "nan", hex or
 * leading spaces, which strtod would take). Limits: SIM_QLOAD_MAX_LINE bytes per line,
 * SIM_QLOAD_MAX_JOBS jobs. Every rejected field names its line, its field number and the
 * field's name (simulator/queue/README.md lists the messages' shape).
 *
 * SWF readings (the format leaves them to the user; Batsim's SWF converter makes the same
 * first two choices): submit times are made relative to the smallest kept one; a job that did
 * not run (run time 0 or -1) or has no processor count is skipped and counted, or an error in
 * strict mode; a checkpointed job's partial-execution lines (status 2, 3, 4) are skipped, its
 * summary line (status 0, 1 or 5) is the job; cancelled jobs that ran are kept, since they
 * held their processors.
 *
 * SPDX-License-Identifier: MIT
 */
#include "queue/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lt_mem.h"
#include "lt_vec.h"

#define BLOCK     65536 /* file read size; > SIM_QLOAD_MAX_LINE + 2 so a whole line fits */
#define NUM_MAX   63    /* longest number text handed to strtod */
#define EXCERPT   40    /* longest value quoted in a message */
#define SWF_N     18    /* fields of an SWF line (version 2.2) */
#define CSV_NCOLS 5     /* known CSV columns */

_Static_assert(BLOCK > SIM_QLOAD_MAX_LINE + 2, "a whole line must fit in one block");

/* ---- line source ---------------------------------------------------------------------- */

/* Lines of a file (f != NULL, read through buf) or of a caller's buffer (mem). */
struct lines {
    FILE *f;
    char *buf;       /* BLOCK bytes when reading f */
    size_t start;    /* first unread byte of buf */
    size_t end;      /* one past the last valid byte of buf */
    bool eof;        /* f has nothing more */
    const char *mem; /* the caller's bytes when f is NULL */
    size_t mem_len;  /* their count */
    size_t mem_pos;  /* first unread one */
    int64_t lineno;  /* 1-based number of the line last returned */
};

/* The line at [p, p + n) (n includes no newline), with one trailing '\r' dropped and the
 * length checked. 1, or LT_ERANGE. */
static int line_done(struct lines *ls, const char *p, size_t n, const char **line, size_t *len,
                     struct lt_err *err)
{
    ls->lineno++;
    if (n > 0 && p[n - 1] == '\r')
        n--;
    if (n > SIM_QLOAD_MAX_LINE)
        return lt_err_set(err, LT_ERANGE, ls->lineno, 0, "line is longer than %d bytes",
                          SIM_QLOAD_MAX_LINE);
    *line = p;
    *len = n;
    return 1;
}

static int next_mem_line(struct lines *ls, const char **line, size_t *len, struct lt_err *err)
{
    const char *p = ls->mem + ls->mem_pos;
    size_t rest = ls->mem_len - ls->mem_pos;
    const char *nl;

    if (rest == 0)
        return 0;
    nl = memchr(p, '\n', rest);
    if (nl == NULL) {
        ls->mem_pos = ls->mem_len;
        return line_done(ls, p, rest, line, len, err);
    }
    ls->mem_pos += (size_t)(nl - p) + 1;
    return line_done(ls, p, (size_t)(nl - p), line, len, err);
}

/* 1 and the next line in (*line, *len), valid until the next call; 0 at the end of the input;
 * LT_EIO or LT_ERANGE (a line over the limit). */
static int next_line(struct lines *ls, const char **line, size_t *len, struct lt_err *err)
{
    if (ls->f == NULL)
        return next_mem_line(ls, line, len, err);
    for (;;) {
        char *p = ls->buf + ls->start;
        size_t have = ls->end - ls->start;
        char *nl = memchr(p, '\n', have);
        size_t got;

        if (nl != NULL) {
            ls->start += (size_t)(nl - p) + 1;
            return line_done(ls, p, (size_t)(nl - p), line, len, err);
        }
        if (ls->eof) {
            ls->start = ls->end;
            return have == 0 ? 0 : line_done(ls, p, have, line, len, err);
        }
        if (have > SIM_QLOAD_MAX_LINE + 1)
            return lt_err_set(err, LT_ERANGE, ls->lineno + 1, 0, "line is longer than %d bytes",
                              SIM_QLOAD_MAX_LINE);
        memmove(ls->buf, p, have);
        ls->start = 0;
        ls->end = have;
        got = fread(ls->buf + have, 1, BLOCK - have, ls->f);
        ls->end += got;
        if (got == 0) {
            if (ferror(ls->f))
                return lt_err_set(err, LT_EIO, ls->lineno + 1, 0, "cannot read workload: %s",
                                  strerror(errno));
            ls->eof = true;
        }
    }
}

/* ---- fields and numbers --------------------------------------------------------------- */

struct field {
    const char *p;
    size_t n;
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static struct field trim(struct field f)
{
    while (f.n > 0 && is_blank(f.p[0])) {
        f.p++;
        f.n--;
    }
    while (f.n > 0 && is_blank(f.p[f.n - 1]))
        f.n--;
    return f;
}

/* The value for a message: at most EXCERPT bytes, "..." after a cut; bytes outside printable
 * ASCII as '?', so a message never carries control bytes. out has EXCERPT + 4 bytes. */
static const char *excerpt(struct field f, char *out)
{
    size_t n = f.n < EXCERPT ? f.n : EXCERPT;
    size_t i;

    for (i = 0; i < n; i++)
        out[i] = (f.p[i] >= 0x20 && f.p[i] < 0x7f) ? f.p[i] : '?';
    if (n < f.n) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

/* Number of digits at the start of [p, p + n). */
static size_t digits(const char *p, size_t n)
{
    size_t i = 0;

    while (i < n && is_digit(p[i]))
        i++;
    return i;
}

/* True if f is [-+]?(D+(.D*)?|.D+)([eE][-+]?D+)? */
static bool is_decimal(struct field f)
{
    size_t i = 0, d, frac = 0;

    if (i < f.n && (f.p[i] == '-' || f.p[i] == '+'))
        i++;
    d = digits(f.p + i, f.n - i);
    i += d;
    if (i < f.n && f.p[i] == '.') {
        i++;
        frac = digits(f.p + i, f.n - i);
        i += frac;
    }
    if (d + frac == 0)
        return false;
    if (i < f.n && (f.p[i] == 'e' || f.p[i] == 'E')) {
        i++;
        if (i < f.n && (f.p[i] == '-' || f.p[i] == '+'))
            i++;
        d = digits(f.p + i, f.n - i);
        if (d == 0)
            return false;
        i += d;
    }
    return i == f.n;
}

/* A plain decimal number, finite. false for anything else (syntax, overflow, too long). */
static bool parse_f64(struct field f, double *out)
{
    char buf[NUM_MAX + 1];
    char *end;
    double v;

    if (f.n == 0 || f.n > NUM_MAX || !is_decimal(f))
        return false;
    memcpy(buf, f.p, f.n);
    buf[f.n] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (end != buf + f.n || !isfinite(v))
        return false;
    *out = v; /* underflow to 0 or a denormal is fine: the range checks decide */
    return true;
}

/* A whole number -?D+ of at most 18 digits. */
static bool parse_i64(struct field f, int64_t *out)
{
    size_t i = 0, d;
    int64_t v = 0;

    if (f.n > 0 && f.p[0] == '-')
        i++;
    d = digits(f.p + i, f.n - i);
    if (d == 0 || d > 18 || i + d != f.n)
        return false;
    for (; i < f.n; i++)
        v = v * 10 + (f.p[i] - '0');
    *out = f.p[0] == '-' ? -v : v;
    return true;
}

/* ---- shared reader state and finishing ------------------------------------------------- */

struct reader {
    const char *source;
    struct sim_qload_opts opts;
    struct sim_qload_info info;
    struct lt_qjob *jobs;
    size_t n, cap;
    struct lt_err *err;
};

/* Appends j (its id = its input position), checking the job limit. */
static int push_job(struct reader *r, int64_t line, struct lt_qjob j)
{
    if (r->n >= SIM_QLOAD_MAX_JOBS)
        return lt_err_set(r->err, LT_ERANGE, line, 0, "more than %zu jobs", SIM_QLOAD_MAX_JOBS);
    if (LT_VEC_RESERVE(r->jobs, r->cap, r->n + 1) != 0)
        return lt_err_set(r->err, LT_ENOMEM, line, 0, "out of memory reading job %zu", r->n + 1);
    j.id = (int64_t)r->n;
    r->jobs[r->n++] = j;
    return 0;
}

static int job_cmp(const void *a, const void *b)
{
    const struct lt_qjob *x = a, *y = b;

    if (x->arrival_s < y->arrival_s)
        return -1;
    if (y->arrival_s < x->arrival_s)
        return 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Sorts by (arrival, input position), renumbers, hands the array to the caller. */
static void finish(struct reader *r, struct lt_qjob **out, size_t *n, struct sim_qload_info *info)
{
    size_t i;

    if (r->n > 1)
        qsort(r->jobs, r->n, sizeof(*r->jobs), job_cmp);
    for (i = 0; i < r->n; i++)
        r->jobs[i].id = (int64_t)i;
    r->info.n_jobs = r->n;
    *out = r->jobs;
    *n = r->n;
    if (info != NULL)
        *info = r->info;
    r->jobs = NULL;
}

/* ---- CSV ------------------------------------------------------------------------------ */

enum csv_col { COL_ARRIVAL, COL_TASKS, COL_RUNTIME, COL_ESTIMATE, COL_CLASS };

static const char *const csv_names[CSV_NCOLS] = {"arrival_s", "tasks", "runtime_s", "estimate_s",
                                                 "class"};

/* The CSV header: which known column each field is, and where each known column is. */
struct csv_head {
    size_t n_fields;     /* fields per line */
    int col[CSV_NCOLS];  /* field index (0-based) of each known column, -1 when absent */
    int kind[CSV_NCOLS]; /* enum csv_col of field i, for i < n_fields */
};

/* Splits line at commas into at most max fields (each trimmed); returns the count, which may
 * exceed max (fields past max are counted, not stored). */
static size_t split_csv(const char *line, size_t len, struct field *f, size_t max)
{
    size_t count = 0, i = 0, start = 0;

    for (i = 0; i <= len; i++) {
        if (i < len && line[i] != ',')
            continue;
        if (count < max)
            f[count] = trim((struct field){line + start, i - start});
        count++;
        start = i + 1;
    }
    return count;
}

static int csv_header(struct reader *r, const char *line, size_t len, int64_t ln,
                      struct csv_head *h)
{
    struct field f[CSV_NCOLS + 1];
    size_t n = split_csv(line, len, f, CSV_NCOLS + 1), i;
    int k;
    char ex[EXCERPT + 4];

    for (k = 0; k < CSV_NCOLS; k++)
        h->col[k] = -1;
    for (i = 0; i < n; i++) {
        struct field name = i < CSV_NCOLS + 1 ? f[i] : (struct field){"", 0};

        if (name.n >= 2 && name.p[0] == '"' && name.p[name.n - 1] == '"')
            name = (struct field){name.p + 1, name.n - 2};
        for (k = 0; k < CSV_NCOLS; k++)
            if (strlen(csv_names[k]) == name.n && memcmp(csv_names[k], name.p, name.n) == 0)
                break;
        if (k == CSV_NCOLS)
            return lt_err_set(r->err, LT_EPARSE, ln, (int)i + 1,
                              "unknown column '%s' (the header names arrival_s, tasks, runtime_s "
                              "and optionally estimate_s, class)",
                              excerpt(name, ex));
        if (h->col[k] >= 0)
            return lt_err_set(r->err, LT_EPARSE, ln, (int)i + 1, "column '%s' appears twice",
                              csv_names[k]);
        h->col[k] = (int)i;
        h->kind[i] = k;
    }
    for (k = COL_ARRIVAL; k <= COL_RUNTIME; k++)
        if (h->col[k] < 0)
            return lt_err_set(r->err, LT_EPARSE, ln, 0, "the header has no '%s' column",
                              csv_names[k]);
    if (r->opts.need_estimates && h->col[COL_ESTIMATE] < 0)
        return lt_err_set(r->err, LT_EPARSE, ln, 0,
                          "the header has no 'estimate_s' column, which --estimate field needs");
    h->n_fields = n;
    return 0;
}

/* One CSV value into *j; has_est says whether an estimate was given. */
static int csv_value(struct reader *r, int64_t ln, int i, int kind, struct field f,
                     struct lt_qjob *j, bool *has_est)
{
    const char *name = csv_names[kind];
    char ex[EXCERPT + 4];
    double v = 0;
    int64_t w = 0;

    if (f.n == 0 && kind == COL_CLASS)
        return 0; /* cls stays -1 */
    if (f.n == 0 && kind == COL_ESTIMATE) {
        if (r->opts.need_estimates)
            return lt_err_set(r->err, LT_EPARSE, ln, i,
                              "%s: missing, and --estimate field needs it", name);
        return 0;
    }
    if (f.n == 0)
        return lt_err_set(r->err, LT_EPARSE, ln, i, "%s: missing value", name);
    switch (kind) {
    case COL_ARRIVAL:
        if (!parse_f64(f, &v) || !(v >= 0))
            return lt_err_set(r->err, LT_EPARSE, ln, i, "%s: '%s' is not a number >= 0", name,
                              excerpt(f, ex));
        j->arrival_s = v;
        return 0;
    case COL_TASKS:
        if (!parse_i64(f, &w) || w < 1)
            return lt_err_set(r->err, LT_EPARSE, ln, i, "%s: '%s' is not a whole number >= 1", name,
                              excerpt(f, ex));
        if (w > (int64_t)UINT32_MAX)
            return lt_err_set(r->err, LT_EPARSE, ln, i, "%s: '%s' is more than %u", name,
                              excerpt(f, ex), UINT32_MAX);
        j->tasks = (uint32_t)w;
        return 0;
    case COL_CLASS:
        if (!parse_i64(f, &w) || w < 0 || w > 2147483647)
            return lt_err_set(r->err, LT_EPARSE, ln, i,
                              "%s: '%s' is not a whole number in 0..2147483647", name,
                              excerpt(f, ex));
        j->cls = (int)w;
        return 0;
    default: /* runtime_s, estimate_s */
        if (!parse_f64(f, &v) || !(v > 0))
            return lt_err_set(r->err, LT_EPARSE, ln, i, "%s: '%s' is not a number > 0", name,
                              excerpt(f, ex));
        if (kind == COL_RUNTIME)
            j->runtime_s = v;
        else
            j->estimate_s = v;
        *has_est = *has_est || kind == COL_ESTIMATE;
        return 0;
    }
}

static int csv_row(struct reader *r, const struct csv_head *h, const char *line, size_t len,
                   int64_t ln)
{
    struct field f[CSV_NCOLS + 1];
    size_t n = split_csv(line, len, f, CSV_NCOLS + 1), i;
    struct lt_qjob j = {.cls = -1};
    bool has_est = false;
    int rc;

    r->info.n_lines++;
    if (n != h->n_fields)
        return lt_err_set(r->err, LT_EPARSE, ln, (int)(n < h->n_fields ? n + 1 : h->n_fields + 1),
                          "expected %zu fields (as the header), found %zu", h->n_fields, n);
    for (i = 0; i < n; i++) {
        rc = csv_value(r, ln, (int)i + 1, h->kind[i], f[i], &j, &has_est);
        if (rc < 0)
            return rc;
    }
    if (r->opts.max_tasks > 0 && j.tasks > r->opts.max_tasks)
        return lt_err_set(r->err, LT_EPARSE, ln, h->col[COL_TASKS] + 1,
                          "tasks: %" PRIu32 " is more than the %" PRIu64 " cores: a rigid job "
                          "needs all its cores at once",
                          j.tasks, r->opts.max_tasks);
    if (has_est)
        r->info.n_estimates++;
    else
        j.estimate_s = j.runtime_s;
    return push_job(r, ln, j);
}

/* True for a line to skip: empty, blanks only, or (CSV) a '#' comment. */
static bool skippable(const char *line, size_t len, char comment)
{
    size_t i = 0;

    while (i < len && is_blank(line[i]))
        i++;
    return i == len || line[i] == comment;
}

static int csv_read(struct reader *r, struct lines *ls)
{
    struct csv_head h = {0};
    bool have_head = false;
    const char *line;
    size_t len;
    int rc;

    while ((rc = next_line(ls, &line, &len, r->err)) > 0) {
        if (ls->lineno == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
            line += 3; /* a UTF-8 byte order mark, as spreadsheets write */
            len -= 3;
        }
        if (skippable(line, len, '#'))
            continue;
        if (!have_head) {
            rc = csv_header(r, line, len, ls->lineno, &h);
            have_head = true;
        } else {
            rc = csv_row(r, &h, line, len, ls->lineno);
        }
        if (rc < 0)
            return rc;
    }
    if (rc == 0 && !have_head)
        return lt_err_set(r->err, LT_EPARSE, ls->lineno, 0,
                          "no header line (arrival_s,tasks,runtime_s[,estimate_s][,class])");
    return rc;
}

/* ---- SWF ------------------------------------------------------------------------------ */

static const char *const swf_names[SWF_N] = {"job number",
                                             "submit time",
                                             "wait time",
                                             "run time",
                                             "allocated processors",
                                             "average CPU time",
                                             "used memory",
                                             "requested processors",
                                             "requested time",
                                             "requested memory",
                                             "status",
                                             "user ID",
                                             "group ID",
                                             "executable number",
                                             "queue number",
                                             "partition number",
                                             "preceding job number",
                                             "think time"};

/* SWF field numbers (1-based) the reader uses. */
enum { F_SUBMIT = 2, F_RUN = 4, F_ALLOC = 5, F_REQ_PROCS = 8, F_REQ_TIME = 9, F_STATUS = 11 };

/* Splits an SWF line at runs of blanks; returns the field count (fields past max counted). */
static size_t split_ws(const char *line, size_t len, struct field *f, size_t max)
{
    size_t count = 0, i = 0;

    for (;;) {
        size_t start;

        while (i < len && is_blank(line[i]))
            i++;
        if (i == len)
            return count;
        start = i;
        while (i < len && !is_blank(line[i]))
            i++;
        if (count < max)
            f[count] = (struct field){line + start, i - start};
        count++;
    }
}

/* A header comment "; Key: value" for the keys the reader keeps (MaxProcs, MaxNodes; the
 * first of each wins). The value is a whole number >= 1, optionally followed by blanks and
 * a remark. Other comments are ignored. */
static int swf_comment(struct reader *r, const char *line, size_t len, int64_t ln)
{
    static const char *const keys[2] = {"MaxProcs", "MaxNodes"};
    struct field rest = trim((struct field){line + 1, len - 1}); /* after ';' */
    char ex[EXCERPT + 4];
    int k;

    for (k = 0; k < 2; k++) {
        size_t kl = strlen(keys[k]), d;
        struct field v;
        int64_t x = 0;
        int64_t *dst = k == 0 ? &r->info.max_procs : &r->info.max_nodes;

        if (rest.n <= kl || strncasecmp(rest.p, keys[k], kl) != 0 || rest.p[kl] != ':')
            continue;
        v = trim((struct field){rest.p + kl + 1, rest.n - kl - 1});
        d = digits(v.p, v.n);
        if (d == 0 || d > 18 || (d < v.n && !is_blank(v.p[d])) ||
            !parse_i64((struct field){v.p, d}, &x) || x < 1)
            return lt_err_set(r->err, LT_EPARSE, ln, 0,
                              "header %s: '%s' is not a whole number >= 1", keys[k],
                              excerpt(v, ex));
        if (*dst == 0)
            *dst = x;
    }
    return 0;
}

static int swf_bad(struct reader *r, int64_t ln, int i, struct field f, const char *what)
{
    char ex[EXCERPT + 4];

    return lt_err_set(r->err, LT_EPARSE, ln, i, "field %d (%s): '%s' %s", i, swf_names[i - 1],
                      excerpt(f, ex), what);
}

/* A processor count field: 0 and the count, 1 for "missing" (-1 or 0), or an error. */
static int swf_procs(struct reader *r, int64_t ln, int i, struct field f, uint32_t *out)
{
    int64_t w;

    if (!parse_i64(f, &w) || w < -1)
        return swf_bad(r, ln, i, f, "is not -1 or a whole number >= 1");
    if (w <= 0)
        return 1;
    if (w > (int64_t)UINT32_MAX)
        return swf_bad(r, ln, i, f, "is more than 4294967295");
    *out = (uint32_t)w;
    return 0;
}

/* a == b without -Wfloat-equal's complaint: used only for the exact -1 of missing times. */
static bool same(double a, double b)
{
    return !(a < b) && !(a > b);
}

/* A skipped job: counted, or an error in strict mode. */
static int swf_skip(struct reader *r, int64_t ln, int i, struct field f, size_t *count,
                    const char *why)
{
    if (r->opts.strict)
        return swf_bad(r, ln, i, f, why);
    (*count)++;
    return 0;
}

/* The job of a data line whose 18 fields parsed as v[0..17]. */
static int swf_job(struct reader *r, int64_t ln, const struct field *f, const double *v)
{
    struct lt_qjob j = {.cls = -1};
    size_t from_req = r->info.size_from_request;
    int64_t st = 0;
    int rc;

    if (!parse_i64(f[F_STATUS - 1], &st) || st < -1 || st > 5)
        return swf_bad(r, ln, F_STATUS, f[F_STATUS - 1], "is not one of -1, 0, 1, 2, 3, 4, 5");
    if (st >= 2 && st <= 4) {
        r->info.skipped_partial++; /* the job's summary line carries it */
        return 0;
    }
    if (!(v[F_SUBMIT - 1] >= 0))
        return swf_bad(r, ln, F_SUBMIT, f[F_SUBMIT - 1], "is not a time >= 0");
    j.arrival_s = v[F_SUBMIT - 1];
    if (v[F_RUN - 1] < 0 && !same(v[F_RUN - 1], -1.0))
        return swf_bad(r, ln, F_RUN, f[F_RUN - 1], "is not -1 or a time >= 0");
    if (!(v[F_RUN - 1] > 0))
        return swf_skip(r, ln, F_RUN, f[F_RUN - 1], &r->info.skipped_runtime,
                        "is not a run time > 0 (strict mode)");
    j.runtime_s = v[F_RUN - 1];
    rc = swf_procs(r, ln, F_ALLOC, f[F_ALLOC - 1], &j.tasks);
    if (rc == 1) {
        rc = swf_procs(r, ln, F_REQ_PROCS, f[F_REQ_PROCS - 1], &j.tasks);
        if (rc == 1)
            return swf_skip(r, ln, F_ALLOC, f[F_ALLOC - 1], &r->info.skipped_size,
                            "and field 8 give no processor count (strict mode)");
        if (rc == 0)
            r->info.size_from_request++;
    }
    if (rc < 0)
        return rc;
    if (r->opts.max_tasks > 0 && j.tasks > r->opts.max_tasks) {
        int i = r->info.size_from_request > from_req ? F_REQ_PROCS : F_ALLOC;
        char why[128];
        snprintf(why, sizeof(why),
                 "is more than the %" PRIu64 " cores: a rigid job needs all its cores at once",
                 r->opts.max_tasks);
        return swf_bad(r, ln, i, f[i - 1], why);
    }
    if (v[F_REQ_TIME - 1] < 0 && !same(v[F_REQ_TIME - 1], -1.0))
        return swf_bad(r, ln, F_REQ_TIME, f[F_REQ_TIME - 1], "is not -1 or a time >= 0");
    if (v[F_REQ_TIME - 1] > 0) {
        j.estimate_s = v[F_REQ_TIME - 1];
        r->info.n_estimates++;
    } else if (r->opts.need_estimates) {
        return swf_bad(r, ln, F_REQ_TIME, f[F_REQ_TIME - 1],
                       "is no estimate, and --estimate field needs one");
    } else {
        j.estimate_s = j.runtime_s;
    }
    if (st == 5)
        r->info.cancelled_kept++;
    return push_job(r, ln, j);
}

static int swf_line(struct reader *r, const char *line, size_t len, int64_t ln)
{
    struct field f[SWF_N];
    double v[SWF_N];
    size_t n = split_ws(line, len, f, SWF_N);
    int i;

    r->info.n_lines++;
    if (n != SWF_N)
        return lt_err_set(r->err, LT_EPARSE, ln, n < SWF_N ? (int)n + 1 : SWF_N + 1,
                          "expected %d fields, found %zu", SWF_N, n);
    for (i = 0; i < SWF_N; i++)
        if (!parse_f64(f[i], &v[i]))
            return swf_bad(r, ln, i + 1, f[i], "is not a number");
    return swf_job(r, ln, f, v);
}

static int swf_read(struct reader *r, struct lines *ls)
{
    const char *line;
    size_t len;
    size_t i;
    int rc;

    while ((rc = next_line(ls, &line, &len, r->err)) > 0) {
        size_t lead = 0;

        while (lead < len && is_blank(line[lead]))
            lead++;
        if (lead == len)
            continue;
        if (line[lead] == ';')
            rc = swf_comment(r, line + lead, len - lead, ls->lineno);
        else
            rc = swf_line(r, line, len, ls->lineno);
        if (rc < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (r->n > 0) {
        double t0 = r->jobs[0].arrival_s;

        for (i = 1; i < r->n; i++)
            if (r->jobs[i].arrival_s < t0)
                t0 = r->jobs[i].arrival_s;
        for (i = 0; i < r->n; i++)
            r->jobs[i].arrival_s -= t0;
        r->info.time_offset_s = t0;
    }
    return 0;
}

/* ---- entry points --------------------------------------------------------------------- */

typedef int read_fn(struct reader *r, struct lines *ls);

static int load(read_fn *fn, const char *source, FILE *f, const char *buf, size_t len,
                const struct sim_qload_opts *opts, struct lt_qjob **out, size_t *n,
                struct sim_qload_info *info, struct lt_err *err)
{
    struct lines ls = {.f = f, .mem = buf, .mem_len = len};
    struct reader r = {.source = source, .err = err};
    int rc;

    if (out == NULL || n == NULL || (f == NULL && buf == NULL && len > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "no output or input for the workload reader");
    if (opts != NULL)
        r.opts = *opts;
    if (f != NULL) {
        ls.buf = lt_malloc(BLOCK);
        if (ls.buf == NULL)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    }
    rc = fn(&r, &ls);
    lt_free(ls.buf);
    if (rc < 0) {
        lt_free(r.jobs);
        return rc;
    }
    finish(&r, out, n, info);
    return 0;
}

static int load_path(read_fn *fn, const char *path, const struct sim_qload_opts *opts,
                     struct lt_qjob **out, size_t *n, struct sim_qload_info *info,
                     struct lt_err *err)
{
    FILE *f;
    int rc;

    if (path == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no workload path");
    lt_err_set_source(err, path);
    f = fopen(path, "rb");
    if (f == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open workload: %s", strerror(errno));
    rc = load(fn, path, f, NULL, 0, opts, out, n, info, err);
    fclose(f);
    return rc;
}

int sim_qload_csv(const char *path, const struct sim_qload_opts *opts, struct lt_qjob **out,
                  size_t *n, struct sim_qload_info *info, struct lt_err *err)
{
    return load_path(csv_read, path, opts, out, n, info, err);
}

int sim_qload_csv_buffer(const char *source, const char *buf, size_t len,
                         const struct sim_qload_opts *opts, struct lt_qjob **out, size_t *n,
                         struct sim_qload_info *info, struct lt_err *err)
{
    lt_err_set_source(err, source);
    return load(csv_read, source, NULL, buf, len, opts, out, n, info, err);
}

int sim_qload_swf(const char *path, const struct sim_qload_opts *opts, struct lt_qjob **out,
                  size_t *n, struct sim_qload_info *info, struct lt_err *err)
{
    return load_path(swf_read, path, opts, out, n, info, err);
}

int sim_qload_swf_buffer(const char *source, const char *buf, size_t len,
                         const struct sim_qload_opts *opts, struct lt_qjob **out, size_t *n,
                         struct sim_qload_info *info, struct lt_err *err)
{
    lt_err_set_source(err, source);
    return load(swf_read, source, NULL, buf, len, opts, out, n, info, err);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

int sim_qformat_of(const char *workload, enum sim_qformat *out, struct lt_err *err)
{
    if (workload == NULL || out == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no workload");
    if (strcmp(workload, "gen") == 0 || strncmp(workload, "gen:", 4) == 0)
        *out = SIM_QFORMAT_GEN;
    else if (ends_with(workload, ".csv"))
        *out = SIM_QFORMAT_CSV;
    else if (ends_with(workload, ".swf"))
        *out = SIM_QFORMAT_SWF;
    else if (ends_with(workload, ".swf.gz") || ends_with(workload, ".gz"))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "workload '%s' is compressed: gunzip it first (the reader takes .swf "
                          "and .csv)",
                          workload);
    else
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "workload '%s' is neither a .csv nor a .swf file nor 'gen[:...]'",
                          workload);
    return 0;
}
