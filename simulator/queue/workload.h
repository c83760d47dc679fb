/* workload.h -- the inputs of `lotus-sim queue`: CSV and SWF readers, a seeded generator, and
 * the run-time estimates the orders and backfill see.
 *
 * Every input becomes an array of struct lt_qjob (eviction/lt_queue.h) with the same
 * guarantees, whatever its source:
 *   - sorted by arrival_s ascending (a stable sort of the input order), ids 0 .. n-1 in that
 *     order, so job i has id i and ties keep the file's order;
 *   - arrival_s >= 0 and finite, tasks >= 1, runtime_s > 0 and finite, estimate_s > 0 and
 *     finite (= runtime_s unless the file gave an estimate), cls >= 0 or -1 for none.
 * The array is owned by the caller (lt_free it). simulator/queue/README.md gives the formats
 * byte by byte; docs/formats.md summarises them.
 *
 * Errors are LT_EPARSE (or LT_ERANGE for a limit) with err->source = the file, err->line = the
 * 1-based line and err->column = the 1-based field number, and a text that names the field:
 * "jobs.csv:7:2: tasks: '0' is not a whole number >= 1". LT_EIO when the file cannot be read,
 * LT_EINVAL for a bad option value (no position), LT_ENOMEM. On failure the outputs are
 * untouched.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_QUEUE_WORKLOAD_H
#define SIM_QUEUE_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "lt_queue.h"

/* Longest line either reader accepts, newline excluded: Parallel Workloads Archive lines are
 * under 200 bytes and header comments under 1,000, so a longer line is not a workload. */
#define SIM_QLOAD_MAX_LINE 4096

/* Most jobs one input may hold (2^27 = 134 M, 6.4 GB of struct lt_qjob): the largest archive
 * logs have a few million jobs, so more means a runaway generator spec or a wrong file. */
#define SIM_QLOAD_MAX_JOBS ((size_t)1 << 27)

/* The three ways of reading an estimate (--estimate). */
enum sim_qest_kind {
    SIM_QEST_EXACT = 0, /* estimate = run time (an oracle); the default */
    SIM_QEST_NOISY =
        1,             /* run time x a lognormal factor of mean 1 and coefficient of variation cv */
    SIM_QEST_FIELD = 2 /* the file's own estimate: CSV estimate_s, SWF field 9 (requested time) */
};

struct sim_qest {
    enum sim_qest_kind kind;
    double cv; /* SIM_QEST_NOISY: coefficient of variation, 0 <= cv <= SIM_QEST_MAX_CV */
};

/* Largest noisy CV: sigma^2 = ln(1 + cv^2) = ln 101, so a factor of exp(mu + sigma z) stays
 * well inside double range (> 1e-30 for |z| < 30); real user estimates have CVs of about 1-3. */
#define SIM_QEST_MAX_CV 10.0

/* What a reader should do besides reading. Zero-initialised means: estimates optional,
 * skippable SWF jobs skipped. */
struct sim_qload_opts {
    bool need_estimates; /* --estimate field: a job without an estimate in the file is an error */
    bool strict;         /* SWF: a job the reader would skip (see sim_qload_info) is an error */
    uint64_t max_tasks;  /* > 0: a kept job of more tasks is an LT_EPARSE error at its line and
                          * field (CSV tasks; SWF field 5, or 8 when 5 was missing): rigid
                          * dispatch on max_tasks cores; 0: no limit */
};

/* What a reader did. Every count is of data lines (jobs), comments and blank lines excluded. */
struct sim_qload_info {
    size_t n_lines;           /* data lines read */
    size_t n_jobs;            /* jobs kept (= the array's length) */
    size_t n_estimates;       /* kept jobs whose estimate came from the file */
    size_t skipped_runtime;   /* SWF: run time 0 or -1 (field 4), e.g. jobs cancelled in queue */
    size_t skipped_size;      /* SWF: no processor count >= 1 (fields 5 and 8) */
    size_t skipped_partial;   /* SWF: status 2, 3 or 4 (field 11), a checkpointed job's parts */
    size_t size_from_request; /* SWF: field 5 was -1, field 8 (requested processors) used */
    size_t cancelled_kept;    /* SWF: status 5 (cancelled) jobs that ran (run time > 0), kept */
    double time_offset_s;     /* SWF: the smallest submit time, subtracted from every one */
    int64_t max_procs;        /* SWF header "; MaxProcs: N", 0 when absent */
    int64_t max_nodes;        /* SWF header "; MaxNodes: N", 0 when absent */
};

/* Reads the CSV workload at path (simulator/queue/README.md): a header line naming the
 * columns (arrival_s, tasks, runtime_s required; estimate_s, class optional; any order), then
 * one job per line; '#' lines and blank lines are skipped. opts may be NULL (defaults); info
 * may be NULL. On success *out is a new array of *n jobs (lt_free it; NULL and 0 for a file
 * without jobs). Errors as the file comment says. */
LT_MUST_CHECK int sim_qload_csv(const char *path, const struct sim_qload_opts *opts,
                                struct lt_qjob **out, size_t *n, struct sim_qload_info *info,
                                struct lt_err *err);

/* As sim_qload_csv, from the len bytes at buf (need not be NUL-terminated); source names the
 * input in messages. */
LT_MUST_CHECK int sim_qload_csv_buffer(const char *source, const char *buf, size_t len,
                                       const struct sim_qload_opts *opts, struct lt_qjob **out,
                                       size_t *n, struct sim_qload_info *info, struct lt_err *err);

/* Reads the Standard Workload Format file at path (Parallel Workloads Archive, version 2.2;
 * simulator/queue/README.md): ';' comment lines (the header's MaxProcs and MaxNodes are read
 * into info), 18 whitespace-separated numeric fields per job. Uses field 2 (submit time,
 * made relative to the smallest), 4 (run time), 5 (allocated processors; 8, requested
 * processors, when 5 is -1), 9 (requested time, the estimate) and 11 (status); skips and
 * counts the jobs info lists, or fails on the first with opts->strict. Arguments, ownership and
 * errors as for sim_qload_csv. The file must be uncompressed (gunzip an archive's .swf.gz). */
LT_MUST_CHECK int sim_qload_swf(const char *path, const struct sim_qload_opts *opts,
                                struct lt_qjob **out, size_t *n, struct sim_qload_info *info,
                                struct lt_err *err);

/* As sim_qload_swf, from the len bytes at buf; source names the input in messages. */
LT_MUST_CHECK int sim_qload_swf_buffer(const char *source, const char *buf, size_t len,
                                       const struct sim_qload_opts *opts, struct lt_qjob **out,
                                       size_t *n, struct sim_qload_info *info, struct lt_err *err);

/* The workload generator's parameters (`gen:...`, sim_qgen_parse). NOT the paper's workload,
 * which Simon & McGalliard do not give (spec section 1.10): defaults are lotus's choice. */
struct sim_qgen_spec {
    size_t n;             /* jobs, 1 .. SIM_QLOAD_MAX_JOBS; default 1000 */
    bool batch;           /* all jobs arrive at t = 0 (arrivals=batch); default false */
    double rate;          /* Poisson arrivals per second (> 0), or 0: derived from load */
    double load;          /* offered load on the cores when rate is 0, > 0; default 0.9 */
    uint32_t tasks_min;   /* job size, log-uniform integer in [tasks_min, tasks_max]; 1 */
    uint32_t tasks_max;   /* default 64 */
    double runtime_min_s; /* run time, log-uniform in [runtime_min_s, runtime_max_s]; 10 s */
    double runtime_max_s; /* default 3600 s */
};

/* Sets *spec to the defaults above. */
void sim_qgen_defaults(struct sim_qgen_spec *spec);

/* Parses a generator spec: "gen" or "gen:KEY=VALUE[,KEY=VALUE]..." with the keys n=N,
 * arrivals=batch|poisson, rate=R (jobs/s; implies poisson), load=RHO (implies poisson),
 * tasks=A..B (or tasks=A for a fixed size), runtime=A..B (seconds; or runtime=A). Keys not given
 * keep their defaults; rate and load exclude each other. LT_EINVAL naming the key and value
 * (or LT_ENOTFOUND for an unknown key, listing the known ones); *spec untouched on failure. */
LT_MUST_CHECK int sim_qgen_parse(const char *s, struct sim_qgen_spec *spec, struct lt_err *err);

/* Generates spec->n jobs from seed (stream LT_RNG_WORKLOAD) into a new array *out of *n jobs
 * (lt_free it). For each job in turn: an Exp(1) gap, a size, a run time. Arrivals: all 0 with
 * batch; otherwise job 0 at 0 and job i at the sum of gaps 1..i divided by the rate, where the
 * rate is spec->rate or, when 0, load x cores / (mean of tasks x runtime_s over the generated
 * jobs), so the sample's offered load is exactly spec->load. Size: floor(a x ((b+1)/a)^U),
 * run time: a x (b/a)^U, U uniform in [0, 1). estimate_s = runtime_s, cls = -1. cores is
 * needed only for load (> 0 then); a spec with tasks_max > cores (when cores > 0) is LT_EINVAL.
 * The same (spec, cores, seed) gives the same jobs on every platform with IEEE doubles and the
 * same libm. */
LT_MUST_CHECK int sim_qgen(const struct sim_qgen_spec *spec, uint64_t cores, uint64_t seed,
                           struct lt_qjob **out, size_t *n, struct lt_err *err);

/* Parses --estimate: "exact", "noisy:CV" (0 <= CV <= SIM_QEST_MAX_CV) or "field". LT_EINVAL
 * naming the value; *out untouched on failure. */
LT_MUST_CHECK int sim_qest_parse(const char *s, struct sim_qest *out, struct lt_err *err);

/* Applies est to jobs[0..n-1]: exact sets estimate_s = runtime_s; noisy multiplies runtime_s
 * by exp(mu + sigma z), z standard normal (Box-Muller, stream LT_RNG_ESTIMATE of seed, one
 * pair of uniforms per job in array order), sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2, so the
 * factor has mean 1 and coefficient of variation cv; field leaves the readers' estimates as
 * they are (the caller read the file with need_estimates). Every estimate stays > 0 and finite.
 * LT_EINVAL for a bad est. */
LT_MUST_CHECK int sim_qestimate(struct lt_qjob *jobs, size_t n, const struct sim_qest *est,
                                uint64_t seed, struct lt_err *err);

/* Which reader a --workload value names. */
enum sim_qformat {
    SIM_QFORMAT_CSV = 0, /* a path ending in ".csv" */
    SIM_QFORMAT_SWF = 1, /* a path ending in ".swf" */
    SIM_QFORMAT_GEN = 2  /* "gen" or "gen:..." */
};

/* The format of a --workload value: "gen[:...]" is the generator, otherwise the path's
 * extension (case-insensitive) decides. LT_EINVAL naming the value otherwise (the message says
 * that an archive's .swf.gz must be decompressed first). */
LT_MUST_CHECK int sim_qformat_of(const char *workload, enum sim_qformat *out, struct lt_err *err);

#endif
