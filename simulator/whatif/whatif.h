/* whatif.h -- the engine of `lotus-sim whatif` (docs/whatif.md): one job injected into the
 * replay of the Google 2011 trace, many times, each replica with its own random perturbation,
 * its start delay (or censoring) recorded per replica.
 *
 * The prefix [0, t_inj) is replayed once in the parent (replay.h's sim_snap_*), then one child
 * process per replica and --shrink level is forked from it (a copy-on-write snapshot), applies
 * its perturbation, injects the job, replays until the job starts or the horizon, and writes
 * one fixed-size struct sim_whatif_rec to a pipe. Replica i's seed is the i-th output of a
 * controller RNG seeded by --seed (Betser [B L447]); each source of variance draws from its own
 * stream of the replica's seed (SIM_WHATIF_STREAM_*), so turning one on changes no other's
 * draws.
 *
 * Rewards (issue 23 item 1) are a loop over the records: sim_whatif_delay gives each
 * replica's delay or its censoring, the same replicas for every SLA setting.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_WHATIF_H
#define SIM_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"
#include "replay/replay.h"

/* lt_rng streams of a replica's seed (lt_rng.h: any stream id is valid; these sit above the
 * library's own). The controller draws the replica seeds from stream CONTROL of --seed. */
enum sim_whatif_stream {
    SIM_WHATIF_STREAM_CONTROL = 16,  /* --seed -> the replica seeds */
    SIM_WHATIF_STREAM_TIME = 17,     /* Methods I and II: the injection instant */
    SIM_WHATIF_STREAM_SHRINK = 18,   /* --shrink: the machines kept */
    SIM_WHATIF_STREAM_RESAMPLE = 19, /* Method III: the running tasks' remaining lives */
};

/* --at: when the job is injected. */
enum sim_at_mode {
    SIM_AT_FIXED = 0,  /* at_s */
    SIM_AT_RANDOM,     /* Method I: uniform in [a_s, b_s] (has_window; else the whole window) */
    SIM_AT_DAY_RANDOM, /* Method II: a random whole day of the trace + time of day at_s */
};

struct sim_at {
    enum sim_at_mode mode;
    double at_s;     /* fixed: trace seconds; day-random: seconds into the day */
    double a_s, b_s; /* random: the window, trace seconds */
    bool has_window; /* random: a_s and b_s given */
};

/* Parses --at's value: "S" (trace seconds or a duration: 7200, 2h), "random",
 * "random:A:B", "day-random" or "day-random:S" (S the time of day, default 0). LT_EINVAL
 * naming flag and value. */
LT_MUST_CHECK int sim_at_parse(const char *flag, const char *s, struct sim_at *out,
                               struct lt_err *err);

/* The --job file. */
#define SIM_WHATIF_MAX_GROUPS 64
struct sim_whatif_job {
    char name[64];
    int priority;    /* 0 .. 11 */
    int sched_class; /* 0 .. 3 */
    struct sim_inject_group groups[SIM_WHATIF_MAX_GROUPS];
    size_t n_groups;
    uint64_t n_tasks;
};

/* Reads the job file (docs/whatif.md): {"name", "priority", "sched_class", "tasks": [{"count",
 * "cpu", "mem", "disk", "duration_s"}, ...]}. Errors (err->source = path): LT_EIO, LT_EPARSE
 * with line and column, LT_EINVAL "$.tasks[0].cpu: ..." for a missing, mistyped or out-of-range
 * value or an unknown key. */
LT_MUST_CHECK int sim_whatif_job_load(const char *path, struct sim_whatif_job *job,
                                      struct lt_err *err);

/* LT_EINVAL "$.tasks[i].cpu: must be at most the largest machine's capacity X" (source path)
 * when a request exceeds max, the largest capacity of the cell. */
LT_MUST_CHECK int sim_whatif_job_check(const char *path, const struct sim_whatif_job *job,
                                       struct lt_res max, struct lt_err *err);

#define SIM_WHATIF_MAX_LEVELS 16

struct sim_whatif_config {
    const struct sim_replay_config *replay; /* the replay (no out_dir, default queue) */
    struct sim_inject inject;               /* the job, horizon, --start, --no-arrivals */
    struct sim_at at;
    uint64_t replicas;                    /* >= 1 */
    uint64_t seed;                        /* the controller's */
    double shrink[SIM_WHATIF_MAX_LEVELS]; /* % of the machines kept, per level (100: all) */
    size_t n_shrink;                      /* >= 1 */
    bool shrink_from_start; /* shrink before the prefix: the prefix is replayed per replica */
    bool resample;          /* Method III, --resample-running */
    bool no_snapshot;       /* replay the prefix per replica (checks and benchmarks) */
    unsigned jobs;          /* processes at once, >= 1 (the parent counts) */
    /* Called once the cell is known, before any replica (the job against the largest
     * machine); NULL none. A negative return ends the run with that error. */
    int (*check)(void *ctx, struct lt_res max, struct lt_err *err);
    void *check_ctx;
};

#define SIM_WHATIF_MAGIC 0x77686966u /* "whif" */

/* One replica at one --shrink level: what its child process writes to its pipe. */
struct sim_whatif_rec {
    uint32_t magic;
    int32_t status; /* 0, or the child's LT_E* (err then holds its message) */
    uint32_t replica, level;
    uint64_t seed;     /* the replica's */
    double shrink_pct; /* the level's % kept */
    uint64_t machines_kept;
    struct sim_inject_result r;
    struct sim_resample_stats rs;
    char err[400]; /* the child's error message */
};

/* The replica's start delay in seconds into *d_s; false (and *d_s = +inf) when censored. */
bool sim_whatif_delay(const struct sim_whatif_rec *r, double *d_s);

/* What the run found about the trace. */
struct sim_whatif_info {
    int64_t t_end_us; /* the window's end */
    size_t machines;  /* machine IDs simulated (before --shrink) */
    double a_s, b_s;  /* --at random's window used */
};

/* Runs every replica at every level: recs[replica * n_shrink + level] (replicas * n_shrink
 * records, caller storage). Errors: the replay's, LT_EINVAL for a bad configuration or an
 * injection instant outside the window (naming it), LT_EIO when a child failed or wrote a short
 * record (naming the replica). */
LT_MUST_CHECK int sim_whatif_run(const struct sim_whatif_config *c, struct sim_whatif_rec *recs,
                                 struct sim_whatif_info *info, struct lt_err *err);

/* The statistics of one level. */
#define SIM_WHATIF_N_Q 8
struct sim_whatif_stats {
    uint64_t n, started, censored;
    uint64_t by_reason[4];    /* enum sim_inject_reason */
    double mean_s;            /* over the started; NAN when none */
    double q[SIM_WHATIF_N_Q]; /* delays at SIM_WHATIF_Q, +inf beyond the started share */
    bool all_same;            /* n > 1 and every replica gave the same answer */
};
extern const double SIM_WHATIF_Q[SIM_WHATIF_N_Q]; /* 0.1 0.25 0.5 0.75 0.9 0.95 0.99 1 */

/* The q-quantile (0 <= q <= 1) of n delays sorted ascending, censored ones +inf at the end:
 * the smallest d with #(delays <= d) >= q n (q = 0: the least). */
double sim_whatif_quantile(const double *sorted, size_t n, double q);

/* Sorts the level's delays (censored +inf) into out (replicas entries) and fills *st. */
void sim_whatif_level(const struct sim_whatif_rec *recs, uint64_t replicas, size_t n_levels,
                      size_t level, double *out, struct sim_whatif_stats *st);

#endif
