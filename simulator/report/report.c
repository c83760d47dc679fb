/* report.c -- the one-page HTML report of a replay run: metrics table and gnuplot plots.
 *
 * Design: the inputs are the replay's own output files (docs/simulator.md, "Outputs"), read
 * as untrusted text. summary.json is parsed whole with Jansson and every key the page shows
 * is checked up front (metrics[] and facts[] below): a missing or mistyped key is LT_EPARSE
 * naming the file, never a blank cell. The CSVs are read line by line into a fixed buffer
 * (RP_MAX_LINE); the header must equal the documented one and every field must be a plain
 * decimal number, else LT_EPARSE with file, line and field.
 *
 * Plots: timeseries.csv is streamed, never held: while it is checked, each row goes to a
 * whitespace-separated data file for gnuplot (time in hours), so a whole-trace run costs no
 * memory here. waiting.csv (at most 12 x 101 rows) is kept and written as one gnuplot data
 * block per priority. All of it, the script and gnuplot's SVG output live in a temporary
 * directory DIR/.report-XXXXXX; gnuplot is found on PATH, run by fork/exec with that
 * directory as its working directory (so no path is ever quoted into the script), and the
 * directory is removed whatever happens. Policy names are the only user text in the script;
 * they go in single-quoted strings with ' doubled, and gnuplot's SVG terminal escapes text.
 * Each SVG is inlined from its "<svg" on (the XML prolog dropped); the page needs no
 * JavaScript and no other file.
 *
 * Output: report.html.tmp, renamed to report.html when complete. Every string put into the
 * page goes through html_puts.
 *
 * SPDX-License-Identifier: MIT
 */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/outfile.h"
#include "report/htmlplot.h"
#include "lt_mem.h"

/* A timeseries row is ~120 bytes and a waiting row ~30; 1 KiB leaves room and bounds fgets. */
#define RP_MAX_LINE 1024
/* Longest number field accepted ("-1.234567890123456789e+308" is 26 bytes). */
#define RP_MAX_NUM 40
/* Most columns of an input CSV (timeseries.csv has 16). */
#define RP_MAX_COLS 16
/* Trace priorities are 0..11 (docs/formats.md); waiting.csv has one block per priority. */
#define RP_N_PRIO 12
/* waiting.csv holds at most RP_N_PRIO x 101 quantile rows; the cap bounds memory. */
#define RP_MAX_WAIT_ROWS 100000
/* Longest policy name (a directory name). */
#define RP_MAX_NAME 255
/* Line styles: sim_gp_line_style (htmlplot.h); each line's marks are also shifted by a
 * fraction of the mark interval. */
#define RP_COLOURS SIM_GP_COLOURS
#define RP_POINTS  SIM_GP_POINTS
#define RP_MARKS   12 /* marks per line */

static const char *const ts_cols[] = {
    "time_s",    "machines_online", "tasks_running", "tasks_queued", "util_cpu", "util_mem",
    "util_disk", "unused_machines", "frag5",         "frag10",       "frag25",   "frag50",
    "completed", "requeues",        "req_cpu",       "req_mem"};
#define TS_NCOLS (sizeof(ts_cols) / sizeof(ts_cols[0]))
enum {
    TS_TIME = 0,
    TS_QUEUED = 3,
    TS_CPU = 4,
    TS_MEM = 5,
    TS_UNUSED = 7,
    TS_FRAG10 = 9,
    TS_COMPLETED = 12,
    TS_REQ_CPU = 14,
    TS_REQ_MEM = 15
};

static const char *const wait_cols[] = {"priority", "quantile", "waiting_s", "all_s",
                                        "all_lower_bound"};
enum { WAIT_STARTED = 2, WAIT_ALL = 3, WAIT_BOUND = 4 };
#define WAIT_NCOLS (sizeof(wait_cols) / sizeof(wait_cols[0]))

/* How a summary.json value is shown. */
enum rp_kind {
    RP_INT,   /* integer, with thousands separators */
    RP_UINT,  /* integer written from a uint64_t (the seed): shown unsigned */
    RP_HOURS, /* seconds, shown in hours */
    RP_PCT,   /* fraction, shown in per cent */
    RP_REAL,  /* number, one decimal */
    RP_SECS,  /* seconds or null (a mean of nothing): shown in a readable unit, or "-" */
    RP_RATIO, /* number or null: two decimals, or "-" */
    RP_STR,   /* string */
};

struct rp_field {
    const char *label; /* row label in the page */
    const char *path;  /* dotted key path in summary.json */
    enum rp_kind kind;
};

/* The rows of the policy table, in page order (summary.json keys: replay.c). */
static const struct rp_field metrics[] = {
    {"tasks submitted", "tasks.submitted", RP_INT},
    {"tasks completed (throughput)", "tasks.completed", RP_INT},
    {"tasks failed", "tasks.failed", RP_INT},
    {"tasks killed", "tasks.killed", RP_INT},
    {"tasks lost", "tasks.lost", RP_INT},
    {"tasks running at the end", "tasks.running_at_end", RP_INT},
    {"tasks queued at the end", "tasks.queued_at_end", RP_INT},
    {"tasks unplaceable", "tasks.unplaceable", RP_INT},
    {"flow time (h)", "metrics.flow_time_s", RP_HOURS},
    {"flow time, mean per completed task", "metrics.flow_time_mean_s", RP_SECS},
    {"bounded slowdown, mean per completed task (tau 10 s)", "metrics.bounded_slowdown_mean",
     RP_RATIO},
    {"jobs completed", "jobs.completed", RP_INT},
    {"job completion time, mean", "jobs.completion_time_mean_s", RP_SECS},
    {"job completion time, p90", "jobs.completion_time_p90_s", RP_SECS},
    {"job bounded slowdown, mean (tau 10 s)", "jobs.bounded_slowdown_mean", RP_RATIO},
    {"useful work (h)", "metrics.useful_work_s", RP_HOURS},
    {"wasted work (h)", "metrics.wasted_work_s", RP_HOURS},
    {"requeues", "metrics.requeues", RP_INT},
    {"queue size, mean", "metrics.queue_mean", RP_REAL},
    {"queue size, max", "metrics.queue_max", RP_INT},
    {"utilisation, CPU, mean", "metrics.utilisation_mean.cpu", RP_PCT},
    {"utilisation, memory, mean", "metrics.utilisation_mean.mem", RP_PCT},
    {"requested / capacity, CPU, mean", "metrics.requested_mean.cpu", RP_PCT},
    {"requested / capacity, CPU, max", "metrics.requested_max.cpu", RP_PCT},
    {"requested / capacity, memory, mean", "metrics.requested_mean.mem", RP_PCT},
    {"fragmented machines (free cpu and mem < 10 %), mean", "metrics.fragmentation_mean.10",
     RP_REAL},
    {"unused machines, mean", "metrics.unused_machines_mean", RP_REAL},
};
#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))

/* The preemption table's counts (summary.json "preemption", with --preempt only). */
static const struct rp_field pre_fields[] = {
    {"mode (--preempt)", "preemption.mode", RP_STR},
    {"victims' order (--evict)", "preemption.evict", RP_STR},
    {"victims (tasks evicted)", "preemption.preemptions", RP_INT},
    {"preemptors (tasks started by evicting)", "preemption.preemptors", RP_INT},
    {"victims while the t = 0 backlog was placed", "preemption.at_t0", RP_INT},
    {"victims evicted before", "preemption.repeat_victims", RP_INT},
    {"victims of a requeued preemptor", "preemption.cascades", RP_INT},
};
#define N_PRE_FIELDS (sizeof(pre_fields) / sizeof(pre_fields[0]))
#define PRE_VICTIMS  2 /* pre_fields[2]: beside the trace's count */
/* The trace's count: one per run, in the table's last column. */
static const struct rp_field pre_trace = {"trace: EVICT rows in the window",
                                          "preemption.trace_evict_rows", RP_INT};

/* The run facts of the header, from the first policy's summary.json. */
static const struct rp_field facts[] = {
    {"trace", "run.trace", RP_STR},
    {"window end (trace s)", "run.window_end_s", RP_REAL},
    {"seed", "run.seed", RP_UINT},
    {"machines kept", "machines.kept", RP_INT},
    {"machines in trace", "machines.in_trace", RP_INT},
};
#define N_FACTS (sizeof(facts) / sizeof(facts[0]))

/* The plots, in page order. */
enum { PLOT_DONE, PLOT_QUEUE, PLOT_UTIL, PLOT_REQ, PLOT_WAIT, PLOT_FRAG, N_PLOTS };
static const char *const plot_file[N_PLOTS] = {"done.svg", "queue.svg", "util.svg",
                                               "req.svg",  "wait.svg",  "frag.svg"};
static const char *const plot_name[N_PLOTS] = {"done", "queue", "util", "req", "wait", "frag"};
static const char *const plot_title[N_PLOTS] = {
    "Completions over time",         "Queue size",   "Utilisation", "Requested against capacity",
    "Waiting time CDF per priority", "Fragmentation"};
static const char *const plot_caption[N_PLOTS] = {
    "Tasks completed (FINISH) since the start of the window, cumulative, one line per policy; "
    "the last point of each line is its throughput.",
    "Tasks waiting in the queue, one line per policy, sampled every interval.",
    "Allocated requests over the capacity of the online machines: CPU (top) and memory "
    "(bottom), one line per policy. With --overcommit a task is allocated its request divided "
    "by its band's factor.",
    "The requests of the running tasks over the capacity of the online machines (dashed: "
    "100 %, the capacity): CPU (top) and memory (bottom), one line per policy. Above 100 % the "
    "cell runs more than it has: tasks the trace ran beyond a machine's room at t = 0 "
    "(--initial-state trace), or --overcommit; the gap to the Utilisation plot is what "
    "--overcommit lets the scheduler admit.",
    "For each priority, the fraction of all its tasks (y) that waited at most x seconds from "
    "arrival to first start, one line per policy. A task that never started counts at the time "
    "it had waited when the window ended (or it was killed): its wait is at least that, so "
    "where the line is dotted (censored tasks at or below x) it is an upper bound of the true "
    "CDF; solid, it is exact. The key is in the first panel; colours are the same in every "
    "plot.",
    "Top: machines with free CPU and free memory both below 10 % of capacity. Bottom: online "
    "machines running no task. One line per policy.",
};

struct rp_wait_row {
    int prio;   /* 0..RP_N_PRIO-1 */
    double q;   /* quantile, 0..1 */
    double w_s; /* waiting time of all tasks, the never started at their censored wait, s */
    bool bound; /* w_s is only a lower bound (docs/simulator.md, "Waiting times") */
};

struct rp_policy {
    const char *name;         /* borrowed from the caller */
    json_t *summary;          /* owned (json_decref) */
    size_t n_samples;         /* data rows of timeseries.csv */
    struct rp_wait_row *wait; /* owned; rows of waiting.csv in file order */
    size_t n_wait;            /* rows in wait */
};

struct rp {
    const char *dir;            /* the run directory (borrowed) */
    struct rp_policy *pol;      /* n entries, owned */
    size_t n;                   /* policies */
    char gnuplot[SIM_MAX_PATH]; /* gnuplot's path, "" when not on PATH */
    char *tmpdir;               /* owned; NULL until made */
    bool prio_seen[RP_N_PRIO];  /* priority has waiting rows in some policy */
    double wait_max_s;          /* largest waiting time of any waiting.csv */
    size_t n_samples;           /* timeseries rows of all policies */
    bool plot_made[N_PLOTS];    /* plot k has data, so gnuplot draws plot_file[k] */
    struct lt_err *err;         /* the caller's (may be NULL) */
};

/* A CSV being read: bounded lines, 1-based line numbers. */
struct csv {
    FILE *f;
    const char *path;
    int64_t line;
    char buf[RP_MAX_LINE + 2]; /* the line, its '\n' and the NUL */
};

/* ---- errors and small helpers ------------------------------------------------------------- */

/* Records a parse error whose source is path (first error wins: the source is only changed
 * when no error is recorded yet). Returns code. */
static int LT_PRINTF(6, 7) fail_at(struct lt_err *err, int code, const char *path, int64_t line,
                                   int column, const char *fmt, ...)
{
    char text[LT_ERR_TEXT];
    va_list ap;

    if (err != NULL && err->code == 0)
        lt_err_set_source(err, path);
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    return lt_err_set(err, code, line, column, "%s", text);
}

static int oom(struct lt_err *err)
{
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the report");
}

/* ---- gnuplot on PATH ---------------------------------------------------------------------- */

bool sim_report_has_gnuplot(void)
{
    char buf[SIM_MAX_PATH];
    return sim_gnuplot_find(buf, sizeof(buf));
}

/* ---- CSV reading -------------------------------------------------------------------------- */

/* Reads the next line into c->buf without its line end. Returns 1, 0 at end of file, or
 * LT_EPARSE for a line longer than RP_MAX_LINE, LT_EIO for a read error. */
static int csv_line(struct csv *c, struct lt_err *err)
{
    size_t len;

    if (fgets(c->buf, sizeof(c->buf), c->f) == NULL) {
        if (ferror(c->f))
            return lt_err_set(err, LT_EIO, 0, 0, "cannot read '%s': %s", c->path, strerror(errno));
        return 0;
    }
    c->line++;
    len = strlen(c->buf);
    if (len > 0 && c->buf[len - 1] == '\n')
        c->buf[--len] = '\0';
    else if (!feof(c->f))
        return fail_at(err, LT_EPARSE, c->path, c->line, 0, "line longer than %d bytes",
                       RP_MAX_LINE);
    if (len > 0 && c->buf[len - 1] == '\r')
        c->buf[--len] = '\0';
    return 1;
}

/* Opens path and checks that its first line is the column names cols joined by commas. */
static int csv_open(struct csv *c, const char *path, const char *const *cols, size_t ncols,
                    struct lt_err *err)
{
    char want[RP_MAX_LINE];
    size_t len = 0;
    int rc;

    c->path = path;
    c->line = 0;
    c->f = fopen(path, "r");
    if (c->f == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", path, strerror(errno));
    for (size_t k = 0; k < ncols; k++)
        len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s", k ? "," : "", cols[k]);
    rc = csv_line(c, err);
    if (rc == 0)
        rc = fail_at(err, LT_EPARSE, path, 1, 0, "file is empty, expected the header '%s'", want);
    else if (rc > 0 && strcmp(c->buf, want) != 0)
        rc = fail_at(err, LT_EPARSE, path, 1, 0, "header is not '%s' near '%.40s'", want, c->buf);
    if (rc < 0) {
        fclose(c->f);
        c->f = NULL;
        return rc;
    }
    return 0;
}

/* Parses the len bytes at s as a plain finite decimal number (digits, sign, '.', exponent;
 * no "nan", "inf" or hex, which strtod would take). Returns false if it is not one. */
static bool parse_num(const char *s, size_t len, double *out)
{
    char buf[RP_MAX_NUM];
    char *end;

    if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789+-.eE") < len)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *out = strtod(buf, &end);
    return end == buf + len && errno == 0 && isfinite(*out);
}

/* Splits the current line of c into exactly ncols numbers; an empty field k with bit k of
 * empty_ok set reads as NAN. Returns 0 or LT_EPARSE naming the line and the 1-based column. */
static int csv_fields(struct csv *c, const char *const *cols, size_t ncols, unsigned empty_ok,
                      double *vals, struct lt_err *err)
{
    const char *p = c->buf;
    size_t k = 0;

    for (;;) {
        size_t len = strcspn(p, ",");
        if (k == ncols)
            return fail_at(err, LT_EPARSE, c->path, c->line, (int)k + 1,
                           "more than %zu fields near '%.40s'", ncols, p);
        if (len == 0 && (empty_ok >> k & 1u))
            vals[k] = NAN;
        else if (!parse_num(p, len, &vals[k]))
            return fail_at(err, LT_EPARSE, c->path, c->line, (int)k + 1,
                           "field '%s' is not a number near '%.*s'", cols[k],
                           (int)(len < 40 ? len : 40), p);
        k++;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    if (k < ncols)
        return fail_at(err, LT_EPARSE, c->path, c->line, (int)k,
                       "field '%s' is missing (%zu fields, expected %zu)", cols[k], k, ncols);
    return 0;
}

/* ---- loading one policy ------------------------------------------------------------------- */

/* The value at the dotted path in root, or NULL. Keys are at most 63 bytes. */
static json_t *json_path(json_t *root, const char *path)
{
    char key[64];
    json_t *v = root;

    while (v != NULL && *path != '\0') {
        size_t len = strcspn(path, ".");
        if (len >= sizeof(key))
            return NULL;
        memcpy(key, path, len);
        key[len] = '\0';
        v = json_object_get(v, key);
        path += len + (path[len] == '.');
    }
    return v;
}

/* Checks that f->path exists in doc with the type f->kind needs. */
static int field_check(json_t *doc, const struct rp_field *f, const char *file, struct lt_err *err)
{
    json_t *v = json_path(doc, f->path);
    bool is_int = f->kind == RP_INT || f->kind == RP_UINT;
    bool nullable = f->kind == RP_SECS || f->kind == RP_RATIO;
    bool ok = is_int              ? json_is_integer(v)
              : f->kind == RP_STR ? json_is_string(v)
                                  : json_is_number(v) || (nullable && json_is_null(v));
    const char *what = is_int ? "an integer" : f->kind == RP_STR ? "a string" : "a number";

    if (v == NULL)
        return fail_at(err, LT_EPARSE, file, 0, 0, "key '%s' is missing, expected %s", f->path,
                       what);
    if (!ok)
        return fail_at(err, LT_EPARSE, file, 0, 0, "key '%s' is not %s", f->path, what);
    return 0;
}

/* A priority 0..RP_N_PRIO-1 spelled as the whole of s[0..len-1]; -1 otherwise. */
static int prio_of(const char *s, size_t len)
{
    int p = 0;
    if (len == 0 || len > 2)
        return -1;
    for (size_t k = 0; k < len; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        p = p * 10 + (s[k] - '0');
    }
    return p < RP_N_PRIO ? p : -1;
}

/* summary.json's "preemption", when present: its counts, by_priority ("p>v": integer) and
 * trace_evict_rows_by_priority ("v": integer). */
static int preemption_check(json_t *doc, const char *file, struct lt_err *err)
{
    json_t *pre = json_object_get(doc, "preemption");
    const char *key;
    json_t *v;
    int rc = 0;

    if (pre == NULL)
        return 0;
    if (!json_is_object(pre))
        return fail_at(err, LT_EPARSE, file, 0, 0, "key 'preemption' is not an object");
    for (size_t k = 0; k < N_PRE_FIELDS && rc == 0; k++)
        rc = field_check(doc, &pre_fields[k], file, err);
    if (rc < 0 || (rc = field_check(doc, &pre_trace, file, err)) < 0)
        return rc;
    json_t *by = json_object_get(pre, "by_priority");
    json_t *tr = json_object_get(pre, "trace_evict_rows_by_priority");
    if (!json_is_object(by) || !json_is_object(tr))
        return fail_at(err, LT_EPARSE, file, 0, 0,
                       "key 'preemption.by_priority' or 'preemption.trace_evict_rows_by_priority' "
                       "is missing or not an object");
    json_object_foreach(by, key, v)
    {
        const char *gt = strchr(key, '>');
        if (gt == NULL || prio_of(key, (size_t)(gt - key)) < 0 ||
            prio_of(gt + 1, strlen(gt + 1)) < 0 || !json_is_integer(v))
            return fail_at(err, LT_EPARSE, file, 0, 0,
                           "key 'preemption.by_priority.%.20s' is not \"P>V\" (priorities "
                           "0..%d) holding an integer",
                           key, RP_N_PRIO - 1);
    }
    json_object_foreach(tr, key, v)
    {
        if (prio_of(key, strlen(key)) < 0 || !json_is_integer(v))
            return fail_at(err, LT_EPARSE, file, 0, 0,
                           "key 'preemption.trace_evict_rows_by_priority.%.20s' is not a "
                           "priority 0..%d holding an integer",
                           key, RP_N_PRIO - 1);
    }
    return 0;
}

/* Checks the per-priority waiting statistics and the rows_read object of a summary. */
static int summary_check_objects(json_t *doc, const char *file, struct lt_err *err)
{
    json_t *w = json_path(doc, "metrics.waiting_by_priority");
    json_t *rows = json_object_get(doc, "rows_read");
    static const char *const qkeys[] = {"p50_s", "p90_s", "p99_s"};
    const char *key;
    json_t *v;

    if (!json_is_object(w))
        return fail_at(err, LT_EPARSE, file, 0, 0,
                       "key 'metrics.waiting_by_priority' is missing or not an object");
    json_object_foreach(w, key, v)
    {
        char *end;
        long prio = strtol(key, &end, 10);
        if (end == key || *end != '\0' || prio < 0 || prio >= RP_N_PRIO || !json_is_object(v))
            return fail_at(err, LT_EPARSE, file, 0, 0,
                           "key 'metrics.waiting_by_priority.%.20s' is not a priority 0..%d "
                           "holding an object",
                           key, RP_N_PRIO - 1);
        for (size_t q = 0; q < 3; q++)
            if (!json_is_number(json_object_get(v, qkeys[q])))
                return fail_at(err, LT_EPARSE, file, 0, 0,
                               "key 'metrics.waiting_by_priority.%.20s.%s' is missing or not "
                               "a number",
                               key, qkeys[q]);
    }
    if (!json_is_object(rows))
        return fail_at(err, LT_EPARSE, file, 0, 0, "key 'rows_read' is missing or not an object");
    int rc = preemption_check(doc, file, err);
    if (rc < 0)
        return rc;
    json_object_foreach(rows, key, v)
    {
        if (!json_is_integer(json_object_get(v, "rows")))
            return fail_at(err, LT_EPARSE, file, 0, 0,
                           "key 'rows_read.%.40s.rows' is missing or not an integer", key);
    }
    return 0;
}

static int summary_load(struct rp *rp, struct rp_policy *p)
{
    char *file = lt_strfmt("%s/%s/summary.json", rp->dir, p->name);
    json_error_t je;
    int rc = 0;

    if (file == NULL)
        return oom(rp->err);
    p->summary = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    if (p->summary == NULL) {
        if (json_error_code(&je) == json_error_cannot_open_file)
            rc = lt_err_set(rp->err, LT_EIO, 0, 0, "cannot open '%s': %s", file, strerror(errno));
        else if (json_error_code(&je) == json_error_out_of_memory)
            rc = oom(rp->err);
        else
            rc = fail_at(rp->err, LT_EPARSE, file, je.line > 0 ? je.line : 0,
                         je.column > 0 ? je.column : 0, "%s", je.text);
        goto out;
    }
    if (!json_is_object(p->summary)) {
        rc = fail_at(rp->err, LT_EPARSE, file, 1, 1, "not a JSON object");
        goto out;
    }
    for (size_t k = 0; k < N_METRICS && rc == 0; k++)
        rc = field_check(p->summary, &metrics[k], file, rp->err);
    for (size_t k = 0; k < N_FACTS && rc == 0; k++)
        rc = field_check(p->summary, &facts[k], file, rp->err);
    if (rc == 0)
        rc = summary_check_objects(p->summary, file, rp->err);
out:
    lt_free(file);
    return rc;
}

/* Reads timeseries.csv; with a temporary directory, writes its rows to ts_<i>.dat as
 * "time_h queued util_cpu util_mem frag10 unused completed req_cpu req_mem" for gnuplot. */
static int timeseries_load(struct rp *rp, size_t i)
{
    struct rp_policy *p = &rp->pol[i];
    char *file = lt_strfmt("%s/%s/timeseries.csv", rp->dir, p->name);
    char *dat = NULL;
    FILE *out = NULL;
    struct csv c;
    double v[TS_NCOLS] = {0};
    int rc;

    if (file == NULL)
        return oom(rp->err);
    rc = csv_open(&c, file, ts_cols, TS_NCOLS, rp->err);
    if (rc < 0)
        goto out_free;
    if (rp->tmpdir != NULL) {
        dat = lt_strfmt("%s/ts_%zu.dat", rp->tmpdir, i);
        if (dat == NULL) {
            rc = oom(rp->err);
            goto out_close;
        }
        out = fopen(dat, "w");
        if (out == NULL) {
            rc = lt_err_set(rp->err, LT_EIO, 0, 0, "cannot create '%s': %s", dat, strerror(errno));
            goto out_close;
        }
    }
    while ((rc = csv_line(&c, rp->err)) > 0) {
        rc = csv_fields(&c, ts_cols, TS_NCOLS, 0, v, rp->err);
        if (rc < 0)
            break;
        p->n_samples++;
        if (out != NULL)
            fprintf(out, "%.6f %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n",
                    v[TS_TIME] / 3600.0, v[TS_QUEUED], v[TS_CPU], v[TS_MEM], v[TS_FRAG10],
                    v[TS_UNUSED], v[TS_COMPLETED], v[TS_REQ_CPU], v[TS_REQ_MEM]);
    }
    if (out != NULL) {
        int wrc = sim_close_written(out, dat, rp->err);
        rc = rc < 0 ? rc : wrc;
    }
out_close:
    fclose(c.f);
out_free:
    lt_free(dat);
    lt_free(file);
    rp->n_samples += p->n_samples;
    return rc;
}

/* Checks one parsed waiting.csv row and appends it to p->wait. */
static int wait_add(struct rp *rp, struct rp_policy *p, const struct csv *c, const double *v,
                    size_t *cap)
{
    struct rp_wait_row *row;

    if (v[0] < 0 || v[0] >= RP_N_PRIO || floor(v[0]) < v[0])
        return fail_at(rp->err, LT_EPARSE, c->path, c->line, 1,
                       "field 'priority' is not an integer 0..%d", RP_N_PRIO - 1);
    if (v[1] < 0 || v[1] > 1)
        return fail_at(rp->err, LT_EPARSE, c->path, c->line, 2,
                       "field 'quantile' is not within 0..1");
    if (v[WAIT_STARTED] < 0) /* NAN (empty: no task started) passes */
        return fail_at(rp->err, LT_EPARSE, c->path, c->line, 3, "field 'waiting_s' is negative");
    if (v[WAIT_ALL] < 0)
        return fail_at(rp->err, LT_EPARSE, c->path, c->line, 4, "field 'all_s' is negative");
    if (v[WAIT_BOUND] < 0 || v[WAIT_BOUND] > 1 || floor(v[WAIT_BOUND]) < v[WAIT_BOUND])
        return fail_at(rp->err, LT_EPARSE, c->path, c->line, 5,
                       "field 'all_lower_bound' is not 0 or 1");
    if (p->n_wait == RP_MAX_WAIT_ROWS)
        return fail_at(rp->err, LT_EPARSE, c->path, c->line, 0, "more than %d rows",
                       RP_MAX_WAIT_ROWS);
    if (p->n_wait == *cap) {
        size_t ncap = *cap ? *cap * 2 : 128;
        row = lt_reallocarray(p->wait, ncap, sizeof(*row));
        if (row == NULL)
            return oom(rp->err);
        p->wait = row;
        *cap = ncap;
    }
    row = &p->wait[p->n_wait++];
    row->prio = (int)v[0];
    row->q = v[1];
    row->w_s = v[WAIT_ALL];
    row->bound = v[WAIT_BOUND] > 0.5;
    rp->prio_seen[row->prio] = true;
    if (row->w_s > rp->wait_max_s)
        rp->wait_max_s = row->w_s;
    return 0;
}

static int waiting_load(struct rp *rp, struct rp_policy *p)
{
    char *file = lt_strfmt("%s/%s/waiting.csv", rp->dir, p->name);
    struct csv c;
    double v[WAIT_NCOLS] = {0};
    size_t cap = 0;
    int rc;

    if (file == NULL)
        return oom(rp->err);
    rc = csv_open(&c, file, wait_cols, WAIT_NCOLS, rp->err);
    if (rc < 0)
        goto out;
    while ((rc = csv_line(&c, rp->err)) > 0) {
        rc = csv_fields(&c, wait_cols, WAIT_NCOLS, 1u << WAIT_STARTED, v, rp->err);
        if (rc == 0)
            rc = wait_add(rp, p, &c, v, &cap);
        if (rc < 0)
            break;
    }
    fclose(c.f);
out:
    lt_free(file);
    return rc;
}

/* ---- the plots ---------------------------------------------------------------------------- */

/* Writes wait_<i>.dat: one block ("waiting_s quantile" lines, blocks separated by two blank
 * lines, so gnuplot's `index k` selects the k-th) per priority seen by policy i, in increasing
 * priority. */
static int wait_data_write(struct rp *rp, size_t i)
{
    const struct rp_policy *p = &rp->pol[i];
    char *dat = lt_strfmt("%s/wait_%zu.dat", rp->tmpdir, i);
    FILE *f;
    bool first = true;

    if (dat == NULL)
        return oom(rp->err);
    f = fopen(dat, "w");
    if (f == NULL) {
        int rc = lt_err_set(rp->err, LT_EIO, 0, 0, "cannot create '%s': %s", dat, strerror(errno));
        lt_free(dat);
        return rc;
    }
    for (int prio = 0; prio < RP_N_PRIO; prio++) {
        bool any = false;
        for (size_t r = 0; r < p->n_wait; r++) {
            if (p->wait[r].prio != prio)
                continue;
            if (!any && !first)
                fputs("\n\n", f);
            any = true;
            fprintf(f, "%.17g %.17g %d\n", p->wait[r].w_s, p->wait[r].q, p->wait[r].bound);
        }
        first = first && !any;
    }
    int rc = sim_close_written(f, dat, rp->err);
    lt_free(dat);
    return rc;
}

/* The gnuplot block index of priority prio in wait_<i>.dat, or -1 if policy i has none. */
static int wait_block(const struct rp_policy *p, int prio)
{
    bool has[RP_N_PRIO] = {false};
    int k = 0;

    for (size_t r = 0; r < p->n_wait; r++)
        has[p->wait[r].prio] = true;
    if (!has[prio])
        return -1;
    for (int q = 0; q < prio; q++)
        k += has[q];
    return k;
}

/* Starts plot k: a fresh state, the terminal (height px) and the output file. */
static void gp_begin(FILE *f, int k, int height)
{
    fprintf(f,
            "reset\n"
            "set encoding utf8\n"
            "set terminal svg size 960,%d dynamic noenhanced font 'sans,11' name '%s'\n"
            "set output '%s'\n"
            "set grid\n"
            "set key outside right top\n",
            height, plot_name[k], plot_file[k]);
}

/* The style of policy i's line: colour, dash type (3, dots, marks the censored CDF). */
static void gp_style(FILE *f, size_t i)
{
    sim_gp_line_style(f, i);
}

/* One line per policy with samples: `'ts_i.dat' using 1:(EXPR) with lines ...`, then its marks
 * (every n/RP_MARKS-th sample, starting at an offset that differs per policy) and a key entry
 * with both. */
static void gp_ts_plot(FILE *f, const struct rp *rp, const char *expr)
{
    const char *sep = "plot ";

    for (size_t i = 0; i < rp->n; i++) {
        size_t ns = rp->pol[i].n_samples, every = ns / RP_MARKS > 0 ? ns / RP_MARKS : 1;
        if (ns == 0)
            continue;
        fprintf(f, "%s'ts_%zu.dat' using 1:(%s) with lines ", sep, i, expr);
        gp_style(f, i);
        fprintf(f,
                " notitle, \\\n     'ts_%zu.dat' using 1:(%s) every %zu::%zu with points "
                "lt %zu pt %zu ps 0.8 notitle, \\\n     keyentry with linespoints ",
                i, expr, every, (i * every / (rp->n > 0 ? rp->n : 1)) % every, i % RP_COLOURS + 1,
                i % RP_POINTS + 1);
        gp_style(f, i);
        fprintf(f, " pt %zu ps 0.8 title '", i % RP_POINTS + 1);
        sim_gp_puts(f, rp->pol[i].name);
        fputc('\'', f);
        sep = ", \\\n     ";
    }
    fputc('\n', f);
}

/* A plot of one or two time-series panels: titles[j], ylabel[j], column expression expr[j];
 * hline > 0: a dashed horizontal line at that y in each panel. */
static void gp_ts_panels(FILE *f, const struct rp *rp, int k, int panels, const char *const *titles,
                         const char *const *ylabels, const char *const *exprs, double hline)
{
    gp_begin(f, k, panels == 1 ? 420 : 720);
    /* The x axis ends at the last sample; 5 % headroom keeps a flat line off the frame. */
    fputs("set xlabel 'trace time (h)'\nset autoscale xfix\nset yrange [0:*]\n"
          "set offsets 0, 0, graph 0.05, 0\n",
          f);
    if (hline > 0)
        fprintf(f, "set arrow 1 from graph 0, first %g to graph 1, first %g nohead dt 2 lw 1.5\n",
                hline, hline);
    if (panels > 1)
        fprintf(f, "set multiplot layout %d,1\n", panels);
    for (int j = 0; j < panels; j++) {
        fprintf(f, "set title '%s'\nset ylabel '%s'\n", titles[j], ylabels[j]);
        gp_ts_plot(f, rp, exprs[j]);
    }
    if (panels > 1)
        fputs("unset multiplot\n", f);
    if (hline > 0)
        fputs("unset arrow 1\n", f);
    fputs("set output\n", f);
}

/* The waiting-time CDF: one panel per priority seen, three per row. */
static void gp_wait(FILE *f, const struct rp *rp)
{
    /* A log x axis only pays off when waits span decades; waits under 1 s are then drawn at
     * 1 s (log scales have no 0). */
    bool logx = rp->wait_max_s >= 100.0;
    int np = 0, cols, rows;
    bool key = true;

    for (int prio = 0; prio < RP_N_PRIO; prio++)
        np += rp->prio_seen[prio];
    cols = np < 3 ? np : 3;
    rows = (np + cols - 1) / cols;
    gp_begin(f, PLOT_WAIT, 60 + 300 * rows);
    fprintf(f, "set multiplot layout %d,%d\nset yrange [0:1]\nset ylabel 'quantile'\n", rows, cols);
    fprintf(f, "set key inside right bottom font ',9'\n");
    if (logx)
        fputs("set logscale x 10\nset xlabel 'waiting (s, log; < 1 s at 1 s)'\n", f);
    else
        fputs("set xlabel 'waiting (s)'\n", f);
    for (int prio = 0; prio < RP_N_PRIO; prio++) {
        const char *sep = "plot ";
        if (!rp->prio_seen[prio])
            continue;
        fprintf(f, "set title 'priority %d'\n", prio);
        if (!key)
            fputs("unset key\n", f);
        for (size_t i = 0; i < rp->n; i++) {
            int b = wait_block(&rp->pol[i], prio);
            if (b < 0)
                continue;
            const char *x = logx ? "($1 < 1 ? 1 : $1)" : "1";
            /* solid where exact, dotted where a lower bound (column 3 = 1) */
            fprintf(f, "%s'wait_%zu.dat' index %d using %s:($3 > 0 ? NaN : $2) with lines ", sep, i,
                    b, x);
            gp_style(f, i);
            fputs(" title '", f);
            sim_gp_puts(f, rp->pol[i].name);
            fprintf(f,
                    "', \\\n     'wait_%zu.dat' index %d using %s:($3 > 0 ? $2 : NaN) with lines "
                    "lw 1.5 lt %zu dt 3 notitle",
                    i, b, x, i % RP_COLOURS + 1);
            sep = ", \\\n     ";
        }
        fputc('\n', f);
        key = false;
    }
    fputs("unset multiplot\nset output\n", f);
}

/* Writes plots.gp for the plots that have data and marks them in plot_made (tentatively:
 * gnuplot_run checks the files). */
static int script_write(struct rp *rp)
{
    static const char *const util_t[] = {"CPU utilisation", "Memory utilisation"};
    static const char *const util_y[] = {"CPU allocated (%)", "memory allocated (%)"};
    static const char *const util_e[] = {"$3 * 100", "$4 * 100"};
    static const char *const frag_t[] = {"Fragmented machines (free CPU and memory < 10 %)",
                                         "Unused machines"};
    static const char *const frag_y[] = {"machines", "machines"};
    static const char *const frag_e[] = {"$5", "$6"};
    static const char *const queue_t[] = {"Queue size"};
    static const char *const queue_y[] = {"tasks queued"};
    static const char *const queue_e[] = {"$2"};
    static const char *const done_t[] = {"Tasks completed"};
    static const char *const done_y[] = {"tasks completed (cumulative)"};
    static const char *const done_e[] = {"$7"};
    static const char *const req_t[] = {"CPU requested", "Memory requested"};
    static const char *const req_y[] = {"CPU requested (% of capacity)",
                                        "memory requested (% of capacity)"};
    static const char *const req_e[] = {"$8 * 100", "$9 * 100"};
    char *path = lt_strfmt("%s/plots.gp", rp->tmpdir);
    FILE *f;
    int rc;

    if (path == NULL)
        return oom(rp->err);
    f = fopen(path, "w");
    if (f == NULL) {
        rc = lt_err_set(rp->err, LT_EIO, 0, 0, "cannot create '%s': %s", path, strerror(errno));
        lt_free(path);
        return rc;
    }
    if (rp->n_samples > 0) {
        gp_ts_panels(f, rp, PLOT_DONE, 1, done_t, done_y, done_e, 0);
        gp_ts_panels(f, rp, PLOT_QUEUE, 1, queue_t, queue_y, queue_e, 0);
        gp_ts_panels(f, rp, PLOT_UTIL, 2, util_t, util_y, util_e, 0);
        gp_ts_panels(f, rp, PLOT_REQ, 2, req_t, req_y, req_e, 100);
        gp_ts_panels(f, rp, PLOT_FRAG, 2, frag_t, frag_y, frag_e, 0);
        rp->plot_made[PLOT_DONE] = rp->plot_made[PLOT_QUEUE] = true;
        rp->plot_made[PLOT_UTIL] = rp->plot_made[PLOT_FRAG] = rp->plot_made[PLOT_REQ] = true;
    }
    for (int prio = 0; prio < RP_N_PRIO; prio++)
        rp->plot_made[PLOT_WAIT] = rp->plot_made[PLOT_WAIT] || rp->prio_seen[prio];
    if (rp->plot_made[PLOT_WAIT])
        gp_wait(f, rp);
    rc = sim_close_written(f, path, rp->err);
    lt_free(path);
    return rc;
}

/* Runs gnuplot on plots.gp and checks that it wrote every plot asked for. */
static int gnuplot_run(struct rp *rp)
{
    const char *files[N_PLOTS];
    size_t n = 0;

    for (int k = 0; k < N_PLOTS; k++) {
        if (rp->plot_made[k])
            files[n++] = plot_file[k];
    }
    return sim_gnuplot_run(rp->gnuplot, rp->tmpdir, files, n, rp->err);
}

static int plots_make(struct rp *rp)
{
    int rc = 0;

    for (size_t i = 0; i < rp->n && rc == 0; i++)
        rc = wait_data_write(rp, i);
    if (rc == 0)
        rc = script_write(rp);
    if (rc == 0 && (rp->plot_made[PLOT_QUEUE] || rp->plot_made[PLOT_WAIT]))
        rc = gnuplot_run(rp);
    return rc;
}

/* ---- the page ----------------------------------------------------------------------------- */

/* Formats v with thousands separators ("12,583,001"). */
static void fmt_int(char *buf, size_t cap, json_int_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%" JSON_INTEGER_FORMAT, v);
    int lead = digits[0] == '-';
    size_t o = 0;

    for (int k = 0; k < n && o + 2 < cap; k++) {
        if (k > lead && (n - k) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[k];
    }
    buf[o] = '\0';
}

/* Formats a duration in seconds in a readable unit. */
static void fmt_secs(char *buf, size_t cap, double s)
{
    if (s < 100.0)
        snprintf(buf, cap, "%.1f s", s);
    else if (s < 6000.0)
        snprintf(buf, cap, "%.1f min", s / 60.0);
    else
        snprintf(buf, cap, "%.1f h", s / 3600.0);
}

/* The value of field fd in doc, formatted for the page ("-" if absent). */
static void fmt_field(char *buf, size_t cap, json_t *doc, const struct rp_field *fd)
{
    json_t *v = json_path(doc, fd->path);

    if (v == NULL || json_is_null(v)) {
        snprintf(buf, cap, "-");
        return;
    }
    switch (fd->kind) {
    case RP_SECS:
        fmt_secs(buf, cap, json_number_value(v));
        break;
    case RP_RATIO:
        snprintf(buf, cap, "%.2f", json_number_value(v));
        break;
    case RP_INT:
        fmt_int(buf, cap, json_integer_value(v));
        break;
    case RP_UINT:
        snprintf(buf, cap, "%" PRIu64, (uint64_t)json_integer_value(v));
        break;
    case RP_HOURS:
        snprintf(buf, cap, "%.1f", json_number_value(v) / 3600.0);
        break;
    case RP_PCT:
        snprintf(buf, cap, "%.1f %%", json_number_value(v) * 100.0);
        break;
    case RP_REAL:
        snprintf(buf, cap, "%.1f", json_number_value(v));
        break;
    case RP_STR:
        snprintf(buf, cap, "%s", json_string_value(v));
        break;
    }
}

static void html_head(FILE *f, const struct rp *rp, const char *title)
{
    json_t *doc = rp->pol[0].summary;
    json_t *rows = json_object_get(doc, "rows_read");
    const char *key;
    json_t *v;
    char buf[512];

    sim_html_head(f, "replay", NULL, title);
    fputs("<h2>Run</h2>\n<table class=\"facts\">\n", f);
    for (size_t k = 0; k < N_FACTS; k++) {
        fmt_field(buf, sizeof(buf), doc, &facts[k]);
        fputs("<tr><th>", f);
        sim_html_puts(f, facts[k].label);
        fputs("</th><td>", f);
        sim_html_puts(f, buf);
        if (facts[k].kind == RP_REAL)
            fprintf(f, " (%.1f h)", json_number_value(json_path(doc, facts[k].path)) / 3600.0);
        fputs("</td></tr>\n", f);
    }
    json_object_foreach(rows, key, v)
    {
        fmt_int(buf, sizeof(buf), json_integer_value(json_object_get(v, "rows")));
        fputs("<tr><th>rows read, ", f);
        sim_html_puts(f, key);
        fputs("</th><td>", f);
        sim_html_puts(f, buf);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p class=\"cap\">From the summary.json of policy '", f);
    sim_html_puts(f, rp->pol[0].name);
    fputs("'.</p>\n", f);
}

/* One row per priority seen in some summary: p50 / p90 / p99 of each policy. */
static void html_wait_rows(FILE *f, const struct rp *rp)
{
    static const char *const qkeys[] = {"p50_s", "p90_s", "p99_s"};
    char buf[32];

    for (int prio = 0; prio < RP_N_PRIO; prio++) {
        char key[16];
        bool any = false;
        snprintf(key, sizeof(key), "%d", prio);
        for (size_t i = 0; i < rp->n; i++)
            any = any || json_path(json_path(rp->pol[i].summary, "metrics.waiting_by_priority"),
                                   key) != NULL;
        if (!any)
            continue;
        fprintf(f, "<tr><th>waiting p50 / p90 / p99, priority %d</th>", prio);
        for (size_t i = 0; i < rp->n; i++) {
            json_t *w =
                json_path(json_path(rp->pol[i].summary, "metrics.waiting_by_priority"), key);
            fputs("<td class=\"n\">", f);
            for (size_t q = 0; q < 3; q++) {
                if (w == NULL) {
                    fputs("-", f);
                    break;
                }
                fmt_secs(buf, sizeof(buf), json_number_value(json_object_get(w, qkeys[q])));
                fprintf(f, "%s%s", q ? " / " : "", buf);
            }
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
}

/* A table's header cells: "metric", then one per policy (the caller ends the row). */
static void html_policy_heads(FILE *f, const struct rp *rp)
{
    fputs("<tr><th>metric</th>", f);
    for (size_t i = 0; i < rp->n; i++) {
        fputs("<th>", f);
        sim_html_puts(f, rp->pol[i].name);
        fputs("</th>", f);
    }
}

/* A row's label and each policy's value of field fd (the caller ends the row). */
static void html_field_cells(FILE *f, const struct rp *rp, const struct rp_field *fd)
{
    char buf[64];

    fputs("<tr><th>", f);
    sim_html_puts(f, fd->label);
    fputs("</th>", f);
    for (size_t i = 0; i < rp->n; i++) {
        fmt_field(buf, sizeof(buf), rp->pol[i].summary, fd);
        fputs("<td class=\"n\">", f);
        sim_html_puts(f, buf);
        fputs("</td>", f);
    }
}

static void html_table(FILE *f, const struct rp *rp)
{
    fputs("<h2>Policies</h2>\n<table>\n", f);
    html_policy_heads(f, rp);
    fputs("</tr>\n", f);
    for (size_t k = 0; k < N_METRICS; k++) {
        html_field_cells(f, rp, &metrics[k]);
        fputs("</tr>\n", f);
    }
    html_wait_rows(f, rp);
    fputs("</table>\n<p class=\"cap\">Flow time: completion minus arrival, summed over "
          "completed tasks. Means are over the samples of the run (docs/simulator.md, "
          "\"Metrics\").</p>\n",
          f);
}

/* Victims of priority v in one summary's by_priority (checked: "P>V" keys, integers). */
static json_int_t victims_of(json_t *summary, int v)
{
    json_t *by = json_path(summary, "preemption.by_priority");
    json_int_t n = 0;
    const char *key;
    json_t *x;

    json_object_foreach(by, key, x)
    {
        const char *gt = strchr(key, '>');
        if (prio_of(gt + 1, strlen(gt + 1)) == v)
            n += json_integer_value(x);
    }
    return n;
}

/* With --preempt: each policy's counts beside the trace's EVICT rows of the same window, in
 * total and by the victim's priority (docs/simulator.md, "Preemption"). */
static void html_preempt(FILE *f, const struct rp *rp)
{
    json_t *first = json_object_get(rp->pol[0].summary, "preemption");
    char buf[64];

    if (first == NULL)
        return;
    fputs("<h2>Preemption</h2>\n<p class=\"cap\">Victims: running tasks evicted to start a "
          "task that fitted nowhere, each requeued. The trace column is the window's EVICT "
          "rows, which also count evictions that are not preemptions; the ratio is the "
          "model's victims over them (docs/simulator.md, \"Preemption\").</p>\n<table>\n",
          f);
    html_policy_heads(f, rp);
    fputs("<th>trace</th></tr>\n", f);
    json_int_t trace = json_integer_value(json_object_get(first, "trace_evict_rows"));
    for (size_t k = 0; k < N_PRE_FIELDS; k++) {
        html_field_cells(f, rp, &pre_fields[k]);
        if (k == PRE_VICTIMS)
            fmt_int(buf, sizeof(buf), trace);
        fprintf(f, "<td class=\"n\">%s</td></tr>\n", k == PRE_VICTIMS ? buf : "-");
        if (k == PRE_VICTIMS) {
            fputs("<tr><th>victims / trace EVICT rows</th>", f);
            for (size_t i = 0; i < rp->n; i++) {
                json_t *n = json_path(rp->pol[i].summary, "preemption.preemptions");
                if (n == NULL || trace == 0)
                    snprintf(buf, sizeof(buf), "-");
                else
                    snprintf(buf, sizeof(buf), "%.2f",
                             (double)json_integer_value(n) / (double)trace);
                fprintf(f, "<td class=\"n\">%s</td>", buf);
            }
            fputs("<td class=\"n\">-</td></tr>\n", f);
        }
    }
    json_t *tr = json_object_get(first, "trace_evict_rows_by_priority");
    for (int v = 0; v < RP_N_PRIO; v++) {
        char key[16];
        snprintf(key, sizeof(key), "%d", v);
        json_t *t = json_object_get(tr, key);
        bool any = t != NULL;
        for (size_t i = 0; i < rp->n; i++)
            any = any || victims_of(rp->pol[i].summary, v) > 0;
        if (!any)
            continue;
        fprintf(f, "<tr><th>victims of priority %d</th>", v);
        for (size_t i = 0; i < rp->n; i++) {
            if (json_path(rp->pol[i].summary, "preemption") == NULL)
                snprintf(buf, sizeof(buf), "-");
            else
                fmt_int(buf, sizeof(buf), victims_of(rp->pol[i].summary, v));
            fprintf(f, "<td class=\"n\">%s</td>", buf);
        }
        fmt_int(buf, sizeof(buf), t != NULL ? json_integer_value(t) : 0);
        fprintf(f, "<td class=\"n\">%s</td></tr>\n", buf);
    }
    fputs("</table>\n", f);
}

static int html_plots(FILE *f, const struct rp *rp)
{
    for (int k = 0; k < N_PLOTS; k++) {
        fprintf(f, "<h2>%s</h2>\n<p class=\"cap\">%s</p>\n", plot_title[k], plot_caption[k]);
        if (rp->gnuplot[0] == '\0') {
            sim_html_no_gnuplot(f);
        } else if (!rp->plot_made[k]) {
            fputs("<p class=\"note\">No plot: the run has no data for it (no samples in "
                  "timeseries.csv, or no started task in waiting.csv).</p>\n",
                  f);
        } else {
            char *svg = lt_strfmt("%s/%s", rp->tmpdir, plot_file[k]);
            int rc = svg ? sim_svg_inline(f, svg, rp->err) : oom(rp->err);
            lt_free(svg);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* Writes report.html through the output layer (report.html.tmp, renamed when complete);
 * the temporary file is removed on failure or on a signal. */
static int html_write(struct rp *rp, const char *title)
{
    char *final = lt_strfmt("%s/report.html", rp->dir);
    char *tmp = NULL; /* "<final>.tmp", from sim_tmp_open; freed by sim_tmp_commit */
    FILE *f = NULL;
    int rc = 0;

    if (final == NULL) {
        rc = oom(rp->err);
        goto out_free;
    }
    f = sim_tmp_open(final, &tmp, rp->err);
    if (f == NULL) {
        rc = rp->err->code;
        goto out_free;
    }
    html_head(f, rp, title);
    html_table(f, rp);
    html_preempt(f, rp);
    rc = html_plots(f, rp);
    sim_html_footer(f, json_string_value(json_path(rp->pol[0].summary, "run.lotus_version")));
    rc = sim_tmp_commit(f, tmp, final, rc, rp->err);
out_free:
    lt_free(final);
    return rc;
}

/* ---- entry point -------------------------------------------------------------------------- */

static int check_args(const char *dir, const char *const *policies, size_t n, struct lt_err *err)
{
    if (dir == NULL || policies == NULL || n == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "report: no run directory or no policy");
    for (size_t i = 0; i < n; i++) {
        const char *s = policies[i];
        bool bad = s == NULL || s[0] == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 ||
                   strlen(s) > RP_MAX_NAME;
        for (; !bad && *s != '\0'; s++)
            bad = *s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f;
        if (bad)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "report: policy name '%.40s' is not a "
                              "directory name",
                              policies[i] ? policies[i] : "(null)");
    }
    return 0;
}

static void rp_release(struct rp *rp)
{
    sim_tmpdir_remove(&rp->tmpdir);
    for (size_t i = 0; rp->pol != NULL && i < rp->n; i++) {
        json_decref(rp->pol[i].summary);
        lt_free(rp->pol[i].wait);
    }
    lt_free(rp->pol);
}

int sim_report_write(const char *dir, const char *const *policies, size_t n, const char *title,
                     struct lt_err *err)
{
    struct rp rp;
    int rc;

    rc = check_args(dir, policies, n, err);
    if (rc < 0)
        return rc;
    memset(&rp, 0, sizeof(rp));
    rp.dir = dir;
    rp.n = n;
    rp.err = err;
    rp.pol = lt_calloc(n, sizeof(*rp.pol));
    if (rp.pol == NULL) {
        rc = oom(err);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        rp.pol[i].name = policies[i];
    if (sim_gnuplot_find(rp.gnuplot, sizeof(rp.gnuplot)))
        rc = sim_tmpdir_make(rp.dir, &rp.tmpdir, rp.err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = summary_load(&rp, &rp.pol[i]);
        if (rc == 0)
            rc = timeseries_load(&rp, i);
        if (rc == 0)
            rc = waiting_load(&rp, &rp.pol[i]);
    }
    if (rc == 0 && rp.tmpdir != NULL)
        rc = plots_make(&rp);
    if (rc == 0)
        rc = html_write(&rp, title);
out:
    rp_release(&rp);
    if (rc < 0) { /* no stale page that the failed inputs no longer describe */
        char *final = lt_strfmt("%s/report.html", dir);
        if (final != NULL)
            remove(final);
        lt_free(final);
    }
    return rc;
}
