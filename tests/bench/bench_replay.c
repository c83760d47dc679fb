/* bench_replay.c -- replay benchmark: sim_replay_run on real trace parts against zcat and igzip.
 *
 * What: for each policy, the whole replay engine (machine_events read whole, pass 1 over
 * task_events, job_events counted, pass 2 placing every task with lt_policy_choose) runs on
 * --trace DIR without output files, --repeat times; the median wall time, the median CPU
 * time (getrusage) and the peak RSS are reported. Next to it, in the same run, `zcat` and
 * ISA-L's `igzip -dc` are timed decompressing the same task_events parts to /dev/null (median
 * of 3 runs each), and the ratios of the row rates are reported: issue 5 asks for lotus'
 * rows/s >= 0.33 x zcat's. Before the policies, one "inflate" line times decompression
 * alone, in this process, of the same parts into a 1 MiB buffer (read 256 KiB at a time, as
 * the reader does): ISA-L's isal_inflate, which the reader uses, against zlib's inflate, both
 * checking each member's CRC-32 and length (median of INFLATE_REPEAT runs each).
 *
 * Why a child process per replay: the replay runs in-process, and ru_maxrss only grows, so
 * each run is forked off. The child measures its own wall and CPU time around
 * sim_replay_run only (not the fork), reads its ru_maxrss before the run (the baseline) and
 * after it (its peak), and sends the figures to the parent through a pipe.
 *
 * Extrapolation to the whole trace (144,648,288 task_events rows; about 25 M tasks, a
 * figure docs/spec calls recalled, not verified): time at this run's rows/s, and again with
 * the rows beyond the 1 GiB row cache re-read from the parts at the rate of a run with no
 * cache; RSS as fixed + rows x bytes per row of the cache (capped by the cache budget) +
 * tasks x bytes per task. Bytes per row are the engine's own count of its cache bytes
 * (sim_replay_result.cache_bytes) over the rows; bytes per task the engine's task records and
 * key map over the tasks; fixed the rest of the uncached peak: the cluster, and the tasks
 * running and queued at the peak, which the cluster and the queue bound, not the length of
 * the trace. The marginal RSS of a task between two uncached windows (their extra tasks are
 * mostly still running or queued at the end) prices a live task: the 2 GiB budget left over
 * by the model, divided by it, is how many more tasks could be live at once. These are
 * extrapolations from a two-part sample, not measurements (docs/benchmarks.md).
 *
 * Every repeat must give the same tasks_completed, placements and events, with and without
 * the cache: a difference is a determinism bug, reported on stderr as exit status 1.
 *
 * --ratios: every placement policy and LoTES's dispatcher ("lotes"), cached replays only,
 * --repeat rounds (default 5) in which each policy runs once in turn (so load that drifts
 * during the run weighs on all alike); one JSON line per policy with its median wall and CPU
 * time and the ratios of those to bestfit1's medians in the same run (issue 20 asks for
 * every placement policy <= 3x bestfit1); each policy also runs with --preempt bands (or the
 * mode --preempt names) in the same rounds, and the line gives both row rates and their
 * ratio (issue 21 asks for preemption <= 1.5x the replay without), the CPU time each
 * eviction costs, and the ratios of CPU time per placement and per simulated event, a run's
 * start or stop (the preempting model places more, and each victim adds a stop and a start);
 * --initial-state and --overcommit set both runs' start and overcommit (the replay's defaults:
 * trace, none).
 *
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include "bench_util.h"
#include "lt_err.h"
#include "lt_mem.h"
#include "lt_score.h"
#include "replay/replay.h"

#define PROG "bench_replay"

/* Defaults; BENCH_TRACE_DIR and BENCH_DEMO_DIR come from CMake (absolute paths). */
#ifndef BENCH_TRACE_DIR
#define BENCH_TRACE_DIR "../shared/data/clusterdata-2011-2"
#endif
#ifndef BENCH_DEMO_DIR
#define BENCH_DEMO_DIR "tests/data/clusterdata-2011-2-demo"
#endif
#define DEFAULT_POLICIES "bestfit1,sos10"
#define DEFAULT_REPEAT   3
#define RATIOS_REPEAT    5
#define MAX_REPEAT       101
#define ZCAT_REPEAT      3 /* zcat (and igzip) runs per policy; the median is used */
#define INFLATE_REPEAT   5 /* in-process decompressions per library; the median is used */

/* The run's engine settings, as the issue fixes them: no files, 1 GiB of cached rows,
 * a time-series sample every 300 s. NO_CACHE_BYTES = 1 keeps no row (each costs more). */
#define CACHE_BYTES    ((size_t)1 << 30)
#define NO_CACHE_BYTES ((size_t)1)
#define INTERVAL_US    (300LL * 1000000LL)

/* The whole 2011 trace (docs/spec/google-trace-2011.md): task_events rows (third-party
 * count) and distinct tasks (the usually quoted figure, recalled, not verified). */
#define FULL_TRACE_ROWS  144648288.0
#define FULL_TRACE_TASKS 25000000.0

/* Longest path built from --trace and a part name. */
#define PATH_BYTES 4096

extern char **environ;

/* Command-line options after defaults were applied. */
struct opts {
    const struct lt_policy **pol; /* owned array of borrowed policies, in --policy order */
    size_t n_pol;                 /* policies to run */
    const char *trace;            /* trace directory (borrowed from argv or a literal) */
    unsigned repeat;              /* timed replays per policy */
    bool smoke;                   /* --smoke: the bundled demo subset, 1 repeat */
    bool ratios;                  /* --ratios: every policy and lotes against bestfit1 */
    enum sim_preempt preempt;     /* --ratios --preempt MODE (default bands) */
    enum sim_initial_state init;  /* --ratios --initial-state (default trace, the replay's) */
    const char *overcommit_s;     /* --ratios --overcommit LIST, NULL: none */
    struct sim_overcommit overcommit;
};

/* The task_events parts of the trace, for zcat. */
struct parts {
    char **path;   /* owned, each owned; sorted by name (= part order) */
    size_t n;      /* parts */
    uint64_t rows; /* lines of the decompressed parts (counted with zlib, untimed) */
    uint64_t text; /* bytes of the decompressed parts (the same count) */
    uint64_t gz;   /* bytes of the parts as stored */
};

/* What a replay child sends back through its pipe. */
struct run_out {
    double seconds;        /* wall time of sim_replay_run */
    double cpu_seconds;    /* user + system CPU time of sim_replay_run */
    long base_rss_kb;      /* the child's ru_maxrss before the run */
    long peak_rss_kb;      /* the child's ru_maxrss after the run: its peak */
    uint64_t task_rows;    /* res.rows[TR_TASK_EVENTS].rows */
    uint64_t machine_rows; /* res.rows[TR_MACHINE_EVENTS].rows */
    uint64_t completions;  /* res.tasks_completed + res.tasks_failed */
    uint64_t tasks;        /* res.tasks_submitted */
    uint64_t completed;    /* res.tasks_completed */
    uint64_t placements;   /* res.placements */
    uint64_t events;       /* starts and stops: 2 placements - res.tasks_running_at_end */
    uint64_t preemptions;  /* res.preemptions */
    int64_t end_time_us;   /* res.end_time_us: T_end */
    uint64_t task_bytes;   /* res.task_bytes: task records + key map after pass 1 */
    uint64_t cache_bytes;  /* res.cache_bytes: the row cache */
};

static void usage(FILE *f)
{
    fputs("usage: " PROG " [--policy LIST] [--trace DIR] [--repeat N] [--smoke] [--ratios]\n"
          "       [--help]\n"
          "\n"
          "Replays a Google 2011 trace directory with sim_replay_run (no output files) for\n"
          "each policy and times zcat and igzip -dc on the same task_events parts in the\n"
          "same run, and ISA-L's inflate against zlib's on them. Prints one JSON line for the\n"
          "inflate timing and one per policy on stdout; exits 1 if a replay, zcat, igzip or\n"
          "an inflate fails or repeats disagree, 2 on a bad option.\n"
          "\n"
          "  --policy LIST   comma-separated policy names (default " DEFAULT_POLICIES ")\n"
          "  --trace DIR     trace directory (default " BENCH_TRACE_DIR ")\n"
          "  --repeat N      timed replays per policy, median reported (default 3)\n"
          "  --smoke         the bundled demo subset (" BENCH_DEMO_DIR "), 1 repeat;\n"
          "                  explicit options still win\n"
          "  --ratios        every placement policy and lotes, cached replays only, in\n"
          "                  turn for --repeat rounds (default 5); prints each median\n"
          "                  and its ratio to bestfit1's; each policy also runs with\n"
          "                  --preempt bands (or priority, prod) and the row rates\n"
          "                  with and without are reported side by side, both from\n"
          "                  --initial-state trace|repack (default trace) with\n"
          "                  --overcommit LIST (default none), as lotus-sim replay\n"
          "  --help          this text\n",
          f);
}

/* ---- option parsing ---- */

/* Parses s as a decimal integer in [lo, hi]. 0, or -1 after printing what is wrong. */
static int parse_uint(const char *flag, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    unsigned long v;
    char *end;

    if (s[0] < '0' || s[0] > '9') {
        fprintf(stderr, PROG ": invalid value '%s' for %s: expected an integer\n", s, flag);
        return -1;
    }
    errno = 0;
    v = strtoul(s, &end, 10);
    if (*end != '\0') {
        fprintf(stderr, PROG ": invalid value '%s' for %s: expected an integer\n", s, flag);
        return -1;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, PROG ": value '%s' for %s is out of range (expected %u..%u)\n", s, flag, lo,
                hi);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* The options that take a value; parse_args holds them raw, NULL when not given. */
enum { F_POLICY, F_TRACE, F_REPEAT, N_FLAGS };
static const char *const flag_names[N_FLAGS + 1] = {"--policy", "--trace", "--repeat", NULL};

/* Fills *o from argv. 1 for --help (usage printed), 0, or -1 after printing the error. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    const char *r[N_FLAGS] = {NULL};
    int rc;

    memset(o, 0, sizeof(*o));
    o->preempt = SIM_PREEMPT_BANDS;
    o->init = SIM_INIT_TRACE;
    sim_overcommit_none(&o->overcommit);
    for (int i = 1; i < argc; i++) { /* flags of this program only: taken out before the scan */
        int take = 0;
        if (strcmp(argv[i], "--ratios") == 0) {
            o->ratios = true;
            take = 1;
        } else if (strcmp(argv[i], "--preempt") == 0 && i + 1 < argc) {
            struct lt_err err;
            lt_err_init(&err, NULL);
            if (sim_preempt_parse("--preempt", argv[i + 1], &o->preempt, &err) < 0 ||
                o->preempt == SIM_PREEMPT_NONE) {
                fprintf(stderr, PROG ": --preempt: '%s' is not bands, priority or prod\n",
                        argv[i + 1]);
                return -1;
            }
            take = 2;
        } else if (strcmp(argv[i], "--initial-state") == 0 && i + 1 < argc) {
            if (strcmp(argv[i + 1], "trace") != 0 && strcmp(argv[i + 1], "repack") != 0) {
                fprintf(stderr, PROG ": --initial-state: '%s' is not trace or repack\n",
                        argv[i + 1]);
                return -1;
            }
            o->init = argv[i + 1][0] == 't' ? SIM_INIT_TRACE : SIM_INIT_REPACK;
            take = 2;
        } else if (strcmp(argv[i], "--overcommit") == 0 && i + 1 < argc) {
            struct lt_err err;
            lt_err_init(&err, NULL);
            if (sim_overcommit_parse("--overcommit", argv[i + 1], &o->overcommit, &err) < 0) {
                fprintf(stderr, PROG ": %s\n", err.text);
                return -1;
            }
            o->overcommit_s = argv[i + 1];
            take = 2;
        }
        if (take) {
            memmove(&argv[i], &argv[i + take], (size_t)(argc - i - take + 1) * sizeof(*argv));
            argc -= take;
            i--;
        }
    }
    rc = bench_scan_args(PROG, argc, argv, flag_names, r, &o->smoke, usage);
    if (rc != 0)
        return rc;
    o->trace = r[F_TRACE] ? r[F_TRACE] : o->smoke ? BENCH_DEMO_DIR : BENCH_TRACE_DIR;
    o->repeat = o->smoke ? 1 : o->ratios ? RATIOS_REPEAT : DEFAULT_REPEAT;
    if (r[F_REPEAT] && parse_uint("--repeat", r[F_REPEAT], 1, MAX_REPEAT, &o->repeat) < 0)
        return -1;
    return bench_parse_policies(PROG, r[F_POLICY] ? r[F_POLICY] : DEFAULT_POLICIES, &o->pol,
                                &o->n_pol);
}

/* ---- the parts and zcat ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void parts_release(struct parts *p)
{
    for (size_t i = 0; i < p->n; i++)
        lt_free(p->path[i]);
    lt_free(p->path);
    memset(p, 0, sizeof(*p));
}

/* Adds dir/name to p. 0, or -1 after printing. */
static int parts_add(struct parts *p, const char *dir, const char *name)
{
    char buf[PATH_BYTES];
    char **grown;
    int len = snprintf(buf, sizeof(buf), "%s/%s", dir, name);

    if (len < 0 || (size_t)len >= sizeof(buf)) {
        fprintf(stderr, PROG ": path too long in '%s'\n", dir);
        return -1;
    }
    grown = lt_reallocarray(p->path, p->n + 1, sizeof(*p->path));
    if (grown == NULL || (grown[p->n] = lt_strdup(buf)) == NULL) {
        if (grown != NULL)
            p->path = grown;
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    p->path = grown;
    p->n++;
    return 0;
}

/* Lists TRACE/task_events/part-*.csv.gz in name order. zcat cannot stand in for the
 * reader on uncompressed parts, so a .csv part is an error. 0, or -1 after printing. */
static int parts_list(const char *trace, struct parts *p)
{
    char dir[PATH_BYTES];
    struct dirent *de;
    DIR *d;
    int rc = 0;

    memset(p, 0, sizeof(*p));
    if ((size_t)snprintf(dir, sizeof(dir), "%s/task_events", trace) >= sizeof(dir) ||
        (d = opendir(dir)) == NULL) {
        fprintf(stderr, PROG ": cannot open directory '%s/task_events': %s\n", trace,
                strerror(errno));
        return -1;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "part-", 5) != 0)
            continue;
        if (ends_with(de->d_name, ".csv.gz")) {
            rc = parts_add(p, dir, de->d_name);
        } else if (ends_with(de->d_name, ".csv")) {
            fprintf(stderr, PROG ": part '%s/%s' is not gzipped: zcat cannot be compared\n", dir,
                    de->d_name);
            rc = -1;
        }
    }
    closedir(d);
    if (rc == 0 && p->n == 0) {
        fprintf(stderr, PROG ": no part-*.csv.gz under '%s'\n", dir);
        rc = -1;
    }
    if (rc < 0)
        parts_release(p);
    else
        qsort(p->path, p->n, sizeof(*p->path), cmp_str);
    return rc;
}

/* Counts the lines of the decompressed parts into p->rows (a last line without '\n'
 * counts). 0, or -1 after printing. */
static int parts_count_rows(struct parts *p)
{
    enum { BUF_BYTES = 1 << 16 };
    char *buf = lt_malloc(BUF_BYTES);
    int rc = 0;

    if (buf == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    p->rows = p->text = p->gz = 0;
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        gzFile f = gzopen(p->path[i], "rb");
        char last = '\n';
        struct stat st;
        int n;

        if (stat(p->path[i], &st) == 0)
            p->gz += (uint64_t)st.st_size;
        if (f == NULL) {
            fprintf(stderr, PROG ": cannot open '%s'\n", p->path[i]);
            rc = -1;
            break;
        }
        while ((n = gzread(f, buf, BUF_BYTES)) > 0) {
            for (const char *s = buf, *end = buf + n; (s = memchr(s, '\n', (size_t)(end - s))); s++)
                p->rows++;
            last = buf[n - 1];
            p->text += (uint64_t)n;
        }
        gzclose(f);
        if (n < 0) {
            fprintf(stderr, PROG ": cannot decompress '%s'\n", p->path[i]);
            rc = -1;
        }
        p->rows += last != '\n';
    }
    lt_free(buf);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs `TOOL [FLAG] PART... > /dev/null` once (tool "zcat", or "igzip" with "-dc");
 * *seconds is its wall time from spawn to reaped. 0, or -1 after printing. */
static int tool_once(const struct parts *p, const char *tool, const char *flag, double *seconds)
{
    char name[16], fl[8]; /* argv wants char *, not a string literal */
    posix_spawn_file_actions_t fa;
    char **argv = lt_calloc(p->n + 3, sizeof(*argv));
    size_t k = 0;
    int rc, status;
    pid_t pid;
    double t0;

    if (argv == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    snprintf(name, sizeof(name), "%s", tool);
    argv[k++] = name;
    if (flag != NULL) {
        snprintf(fl, sizeof(fl), "%s", flag);
        argv[k++] = fl;
    }
    for (size_t i = 0; i < p->n; i++)
        argv[k++] = p->path[i];
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    t0 = now_s();
    rc = posix_spawnp(&pid, tool, &fa, NULL, argv, environ);
    if (rc == 0 && waitpid(pid, &status, 0) == pid)
        *seconds = now_s() - t0;
    else if (rc == 0)
        rc = errno;
    posix_spawn_file_actions_destroy(&fa);
    lt_free(argv);
    if (rc != 0) {
        fprintf(stderr, PROG ": cannot run '%s': %s\n", tool, strerror(rc));
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, PROG ": '%s' on the parts of '%s' failed (status %d)\n", tool, p->path[0],
                status);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorts v); n >= 1. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median wall time of ZCAT_REPEAT runs of tool_once. 0, or -1 after printing. */
static int tool_median(const struct parts *p, const char *tool, const char *flag, double *seconds)
{
    double t[ZCAT_REPEAT];

    for (size_t i = 0; i < ZCAT_REPEAT; i++)
        if (tool_once(p, tool, flag, &t[i]) < 0)
            return -1;
    *seconds = median(t, ZCAT_REPEAT);
    return 0;
}

/* Prints s as a JSON string. */
static void json_str(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* ---- decompression alone: ISA-L against zlib ---- */

/* Buffers of one in-process decompression: the reader's sizes (trace.c). */
#define INF_IN  (256 * 1024)
#define INF_OUT (1024 * 1024)

/* One library's inflate over a whole part, one member after another. */
struct inflater {
    const char *name;
    /* start: readies st for a member. step: inflates next_in[0..*avail_in) into
     * out[0..INF_OUT), updating next_in, avail_in and *made; 1 at the member's end (its
     * CRC-32 and length checked), 0 for more, -1 on an error. */
    void (*start)(void *st);
    int (*step)(void *st, const unsigned char **next_in, size_t *avail_in, unsigned char *out,
                size_t *made);
};

static void isal_start(void *st)
{
    isal_inflate_reset(st);
    ((struct inflate_state *)st)->crc_flag = ISAL_GZIP;
}

static int isal_step(void *st, const unsigned char **next_in, size_t *avail_in, unsigned char *out,
                     size_t *made)
{
    struct inflate_state *s = st;

    s->next_in = (uint8_t *)(uintptr_t)*next_in;
    s->avail_in = (uint32_t)*avail_in;
    s->next_out = out;
    s->avail_out = INF_OUT;
    if (isal_inflate(s) != ISAL_DECOMP_OK)
        return -1;
    *next_in = s->next_in;
    *avail_in = s->avail_in;
    *made = INF_OUT - s->avail_out;
    return s->block_state == ISAL_BLOCK_FINISH;
}

static void zlib_start(void *st)
{
    (void)inflateReset(st);
}

static int zlib_step(void *st, const unsigned char **next_in, size_t *avail_in, unsigned char *out,
                     size_t *made)
{
    z_stream *z = st;
    int zrc;

    z->next_in = (Bytef *)(uintptr_t)*next_in;
    z->avail_in = (uInt)*avail_in;
    z->next_out = out;
    z->avail_out = INF_OUT;
    zrc = inflate(z, Z_NO_FLUSH);
    if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
        return -1;
    *next_in = z->next_in;
    *avail_in = z->avail_in;
    *made = INF_OUT - z->avail_out;
    return zrc == Z_STREAM_END;
}

/* Decompresses one part with inf into out, adding the bytes made to *text. 0, or -1. */
static int inflate_part(const struct inflater *inf, void *st, const char *path, unsigned char *in,
                        unsigned char *out, uint64_t *text)
{
    const unsigned char *next = in;
    size_t avail = 0, made;
    bool eof = false, in_member = true;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return -1;
    inf->start(st);
    while (rc == 0) {
        if (avail < 2 && !eof) {
            ssize_t got;
            memmove(in, next, avail);
            next = in;
            got = read(fd, in + avail, INF_IN - avail);
            if (got < 0) {
                rc = -1;
                break;
            }
            eof = got == 0;
            avail += (size_t)got;
        }
        if (!in_member) {
            if (avail < 2 || next[0] != 0x1f || next[1] != 0x8b)
                break; /* the end, or bytes that start no member: ignored, as the reader does */
            inf->start(st);
            in_member = true;
        }
        rc = inf->step(st, &next, &avail, out, &made);
        *text += made;
        if (rc == 1) {
            in_member = false;
            rc = 0;
        } else if (rc == 0 && avail == 0 && eof && made == 0) {
            rc = -1; /* truncated */
        }
    }
    close(fd);
    return rc;
}

/* Median wall time of INFLATE_REPEAT decompressions of every part with inf; each must make
 * p->text bytes. 0, or -1 after printing. */
static int inflate_median(const struct parts *p, const struct inflater *inf, void *st,
                          double *seconds)
{
    unsigned char *in = lt_malloc(INF_IN), *out = lt_malloc(INF_OUT);
    double t[INFLATE_REPEAT];
    int rc = in != NULL && out != NULL ? 0 : -1;

    for (size_t k = 0; rc == 0 && k < INFLATE_REPEAT; k++) {
        uint64_t text = 0;
        double t0 = now_s();
        for (size_t i = 0; rc == 0 && i < p->n; i++)
            if (inflate_part(inf, st, p->path[i], in, out, &text) < 0) {
                fprintf(stderr, PROG ": %s cannot decompress '%s'\n", inf->name, p->path[i]);
                rc = -1;
            }
        t[k] = now_s() - t0;
        if (rc == 0 && text != p->text) {
            fprintf(stderr, PROG ": %s made %" PRIu64 " bytes, zlib's gzread %" PRIu64 "\n",
                    inf->name, text, p->text);
            rc = -1;
        }
    }
    lt_free(in);
    lt_free(out);
    if (rc == 0)
        *seconds = median(t, INFLATE_REPEAT);
    return rc;
}

/* Times ISA-L's and zlib's inflate on the parts and prints the "inflate" JSON line. 0, or -1
 * after printing. */
static int run_inflate(const struct opts *o, const struct parts *p)
{
    static const struct inflater isal = {"ISA-L", isal_start, isal_step};
    static const struct inflater zlib = {"zlib", zlib_start, zlib_step};
    struct inflate_state *is = lt_malloc(sizeof(*is));
    z_stream zs;
    double ts, tz;
    int rc;

    memset(&zs, 0, sizeof(zs));
    if (is == NULL || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        fprintf(stderr, PROG ": out of memory\n");
        lt_free(is);
        return -1;
    }
    isal_inflate_init(is);
    fprintf(stderr, PROG ": inflate x%d with ISA-L and with zlib\n", INFLATE_REPEAT);
    rc = inflate_median(p, &isal, is, &ts);
    if (rc == 0)
        rc = inflate_median(p, &zlib, &zs, &tz);
    (void)inflateEnd(&zs);
    lt_free(is);
    if (rc < 0)
        return -1;
    printf("{\"bench\":\"inflate\",\"trace\":");
    json_str(o->trace);
    printf(",\"parts\":%zu,\"gz_bytes\":%" PRIu64 ",\"text_bytes\":%" PRIu64 ",\"rows\":%" PRIu64,
           p->n, p->gz, p->text, p->rows);
    printf(",\"isal_seconds\":%.4f,\"isal_mb_per_s\":%.0f,\"zlib_seconds\":%.4f"
           ",\"zlib_mb_per_s\":%.0f,\"ratio_isal_vs_zlib\":%.3f,\"repeat\":%d}\n",
           ts, (double)p->text / ts / 1e6, tz, (double)p->text / tz / 1e6, tz / ts, INFLATE_REPEAT);
    return fflush(stdout) == 0 ? 0 : -1;
}

/* ---- the replay, in a child ---- */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* How one replay is run. */
struct run_spec {
    const struct lt_policy *pol; /* the policy; NULL: LoTES's dispatcher (Table 3's classes) */
    size_t cache_bytes;          /* CACHE_BYTES or NO_CACHE_BYTES */
    int64_t until_us;            /* INT64_MAX: all parts */
    enum sim_preempt preempt;    /* --ratios: SIM_PREEMPT_NONE, then the --preempt mode */
    enum sim_initial_state init; /* SIM_INIT_REPACK (0) but for --ratios */
    const struct sim_overcommit *overcommit; /* NULL: none */
};

/* A run's policy name: a placement policy's, or "lotes" (NULL). */
static const char *pol_name(const struct lt_policy *p)
{
    return p != NULL ? lt_policy_name(p) : "lotes";
}

/* The child: one sim_replay_run, its figures written to fd. Returns the exit status. */
static int child_main(const struct opts *o, const struct run_spec *rs, int fd)
{
    struct sim_replay_result *res = lt_malloc(sizeof(*res));
    struct lt_lotes_class cls[LT_LOTES_TABLE3_CLASSES];
    struct sim_replay_config cfg = {.trace_dir = o->trace,
                                    .policy = rs->pol,
                                    .lotes_classes = rs->pol == NULL ? cls : NULL,
                                    .n_lotes_classes =
                                        rs->pol == NULL ? LT_LOTES_TABLE3_CLASSES : 0,
                                    .seed = 1,
                                    .machines_pct = 100.0,
                                    .until_us = rs->until_us,
                                    .interval_us = INTERVAL_US,
                                    .out_dir = NULL,
                                    .cache_bytes = rs->cache_bytes,
                                    .preempt = rs->preempt,
                                    .initial_state = rs->init,
                                    .overcommit = rs->overcommit};
    struct run_out out;
    struct rusage ru;
    struct lt_err err;
    double w0, c0;
    int rc;

    if (res == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    memset(&out, 0, sizeof(out));
    lt_lotes_table3_normalised(cls); /* as lotus-sim replay --policy lotes */
    getrusage(RUSAGE_SELF, &ru);
    out.base_rss_kb = ru.ru_maxrss;
    lt_err_init(&err, o->trace);
    w0 = now_s();
    c0 = cpu_s();
    rc = sim_replay_run(&cfg, res, &err);
    out.cpu_seconds = cpu_s() - c0;
    out.seconds = now_s() - w0;
    getrusage(RUSAGE_SELF, &ru);
    out.peak_rss_kb = ru.ru_maxrss;
    if (rc < 0) {
        fprintf(stderr, PROG ": %s: %s:%ld:%d: %s\n", pol_name(rs->pol), err.source, err.line,
                err.column, err.text);
        lt_free(res);
        return 1;
    }
    out.task_rows = res->rows[TR_TASK_EVENTS].rows;
    out.machine_rows = res->rows[TR_MACHINE_EVENTS].rows;
    out.completions = res->tasks_completed + res->tasks_failed;
    out.tasks = res->tasks_submitted;
    out.completed = res->tasks_completed;
    out.placements = res->placements;
    out.events =
        2 * res->placements - res->tasks_running_at_end; /* every run started ends or runs on */
    out.preemptions = res->preemptions;
    out.end_time_us = res->end_time_us;
    out.task_bytes = res->task_bytes;
    out.cache_bytes = res->cache_bytes;
    lt_free(res);
    return write(fd, &out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1;
}

/* Runs one replay in a forked child and fills *r. 0, or -1 after printing. */
static int run_child(const struct opts *o, const struct run_spec *rs, struct run_out *r)
{
    int fd[2], status;
    ssize_t got;
    pid_t pid;

    if (pipe(fd) != 0) {
        fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        /* exit(), not _exit(): the sanitizer build checks the child for leaks too. */
        exit(child_main(o, rs, fd[1]));
    }
    close(fd[1]);
    do
        got = read(fd[0], r, sizeof(*r));
    while (got < 0 && errno == EINTR);
    close(fd[0]);
    if (waitpid(pid, &status, 0) != pid) {
        fprintf(stderr, PROG ": waitpid: %s\n", strerror(errno));
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof(*r)) {
        fprintf(stderr, PROG ": %s: the replay failed (status %d)\n", pol_name(rs->pol), status);
        return -1;
    }
    return 0;
}

/* ---- per policy ---- */

/* Medians of n runs, peak RSS the largest. */
struct summary {
    struct run_out out; /* counts of run 0; seconds and cpu_seconds the medians */
    long peak_rss_kb;   /* max over the runs */
};

static bool same_counts(const struct run_out *a, const struct run_out *b)
{
    return a->task_rows == b->task_rows && a->machine_rows == b->machine_rows &&
           a->completions == b->completions && a->completed == b->completed &&
           a->placements == b->placements && a->tasks == b->tasks;
}

/* Runs n replays of rs into *s; every run must give the counts of *ref, or of the first
 * run when ref is NULL. 0, or -1 after printing. */
static int run_series(const struct opts *o, const struct run_spec *rs, unsigned n,
                      const struct run_out *ref, struct summary *s)
{
    double wall[MAX_REPEAT], cpu[MAX_REPEAT];
    struct run_out r;

    memset(s, 0, sizeof(*s));
    for (unsigned i = 0; i < n; i++) {
        if (run_child(o, rs, &r) < 0)
            return -1;
        if (i == 0)
            s->out = r;
        if (ref == NULL)
            ref = &s->out;
        if (!same_counts(&r, ref)) {
            fprintf(stderr,
                    PROG ": %s: replays disagree (cache %zu bytes): placements %" PRIu64
                         " vs %" PRIu64 ", completed %" PRIu64 " vs %" PRIu64 "\n",
                    pol_name(rs->pol), rs->cache_bytes, r.placements, ref->placements, r.completed,
                    ref->completed);
            return -1;
        }
        wall[i] = r.seconds;
        cpu[i] = r.cpu_seconds;
        if (r.peak_rss_kb > s->peak_rss_kb)
            s->peak_rss_kb = r.peak_rss_kb;
    }
    s->out.seconds = median(wall, n);
    s->out.cpu_seconds = median(cpu, n);
    return 0;
}

/* Everything measured for one policy. */
struct measured {
    double zcat_s;       /* median zcat wall time */
    double igzip_s;      /* median igzip -dc wall time */
    struct summary c;    /* the timed replays, 1 GiB row cache */
    struct summary nc;   /* the same without the cache */
    struct run_out half; /* one replay without the cache, first half of the window */
};

/* The RSS model of the whole trace (docs/benchmarks.md, "Replay benchmark"). */
struct rss_model {
    double per_row;       /* bytes per row of the cache: the engine's cache bytes per row */
    double per_task_rss;  /* uncached peaks of two windows, per task more: a live task */
    double per_task_rec;  /* the engine's task records + key map, per task */
    double per_task_all;  /* upper bound: uncached peak - baseline, all charged to the tasks */
    double fixed_kb;      /* uncached peak - per_task_rec x tasks: the intercept */
    double cached_rows;   /* rows of the whole trace that fit the 1 GiB cache */
    double full_mb;       /* fixed + cached rows + FULL_TRACE_TASKS x per_task_rec */
    double full_upper_mb; /* baseline + cached rows + FULL_TRACE_TASKS x per_task_all */
    double live_headroom; /* (2 GiB - full_mb) / the larger of per_task_rss, per_task_rec */
};

static void rss_extrapolate(const struct measured *m, struct rss_model *x)
{
    const struct run_out *r = &m->c.out;
    double nc_kb = (double)m->nc.peak_rss_kb, half_kb = (double)m->half.peak_rss_kb;
    double d_tasks = (double)r->tasks - (double)m->half.tasks;
    double rows_mb;

    x->per_row = (double)r->cache_bytes / (double)r->task_rows;
    x->per_task_all = (nc_kb - (double)r->base_rss_kb) * 1024.0 / (double)r->tasks;
    x->per_task_rss = d_tasks > 0 ? (nc_kb - half_kb) * 1024.0 / d_tasks : x->per_task_all;
    x->per_task_rec = (double)r->task_bytes / (double)r->tasks;
    x->fixed_kb = nc_kb - x->per_task_rec * (double)r->tasks / 1024.0;
    x->cached_rows = FULL_TRACE_ROWS;
    if (x->per_row * FULL_TRACE_ROWS > (double)CACHE_BYTES)
        x->cached_rows = (double)CACHE_BYTES / x->per_row;
    rows_mb = x->cached_rows * x->per_row / (1024.0 * 1024.0);
    x->full_mb = x->fixed_kb / 1024.0 + rows_mb + FULL_TRACE_TASKS * x->per_task_rec / 1048576.0;
    x->full_upper_mb =
        (double)r->base_rss_kb / 1024.0 + rows_mb + FULL_TRACE_TASKS * x->per_task_all / 1048576.0;
    x->live_headroom = (2048.0 - x->full_mb) * 1048576.0 /
                       (x->per_task_rss > x->per_task_rec ? x->per_task_rss : x->per_task_rec);
}

/* Prints the JSON line of one policy (docs/benchmarks.md lists the keys, in this order). */
static void report(const struct opts *o, const struct lt_policy *pol, const struct parts *p,
                   const struct measured *m)
{
    const struct run_out *r = &m->c.out;
    double rows = (double)r->task_rows;
    double events = rows + (double)r->machine_rows + (double)r->completions;
    double rate = rows / r->seconds, rate_nc = rows / m->nc.out.seconds;
    double zrate = (double)p->rows / m->zcat_s, irate = (double)p->rows / m->igzip_s;
    struct rss_model x;

    rss_extrapolate(m, &x);
    printf("{\"bench\":\"replay\",\"policy\":");
    json_str(lt_policy_name(pol));
    printf(",\"trace\":");
    json_str(o->trace);
    printf(",\"task_rows\":%" PRIu64 ",\"machine_rows\":%" PRIu64 ",\"events\":%.0f", r->task_rows,
           r->machine_rows, events);
    printf(",\"seconds\":%.3f,\"cpu_seconds\":%.3f,\"rows_per_s\":%.0f,\"events_per_s\":%.0f",
           r->seconds, r->cpu_seconds, rate, events / r->seconds);
    printf(",\"peak_rss_kb\":%ld,\"zcat_seconds\":%.3f,\"zcat_rows_per_s\":%.0f", m->c.peak_rss_kb,
           m->zcat_s, zrate);
    printf(",\"ratio_vs_zcat\":%.3f", rate / zrate);
    printf(",\"igzip_seconds\":%.3f,\"igzip_rows_per_s\":%.0f,\"ratio_vs_igzip\":%.3f", m->igzip_s,
           irate, rate / irate);
    printf(",\"extrapolated_full_trace_s\":%.1f", FULL_TRACE_ROWS / rate);
    printf(",\"tasks_completed\":%" PRIu64 ",\"placements\":%" PRIu64, r->completed, r->placements);
    /* Beyond the keys: the repeat count, zcat's rows and the extrapolations. */
    printf(",\"repeat\":%u,\"zcat_rows\":%" PRIu64 ",\"tasks\":%" PRIu64, o->repeat, p->rows,
           r->tasks);
    printf(",\"nocache_seconds\":%.3f,\"nocache_rows_per_s\":%.0f", m->nc.out.seconds, rate_nc);
    printf(",\"extrapolated_full_trace_reread_s\":%.1f",
           x.cached_rows / rate + (FULL_TRACE_ROWS - x.cached_rows) / rate_nc);
    printf(",\"base_rss_kb\":%ld,\"nocache_peak_rss_kb\":%ld", r->base_rss_kb, m->nc.peak_rss_kb);
    printf(",\"half_tasks\":%" PRIu64 ",\"half_nocache_peak_rss_kb\":%ld", m->half.tasks,
           m->half.peak_rss_kb);
    printf(",\"cache_bytes\":%" PRIu64 ",\"task_bytes\":%" PRIu64, r->cache_bytes, r->task_bytes);
    printf(",\"bytes_per_cached_row\":%.1f,\"bytes_per_task\":%.1f,\"bytes_per_task_rss\":%.1f"
           ",\"bytes_per_task_rec\":%.1f,\"bytes_per_task_all\":%.1f",
           x.per_row, x.per_task_rec, x.per_task_rss, x.per_task_rec, x.per_task_all);
    printf(",\"extrapolated_full_trace_rss_mb\":%.0f", x.full_mb);
    printf(",\"extrapolated_full_trace_rss_upper_mb\":%.0f", x.full_upper_mb);
    printf(",\"live_task_headroom\":%.0f}\n", x.live_headroom);
}

/* Trace timestamp of trace second 0 (docs/simulator.md). */
#define TRACE_ZERO_US (600LL * 1000000LL)

/* zcat, igzip, the cached replays, the uncached ones and one uncached replay of the first half of
 * the window, for one policy. 0, or -1 after printing. */
static int run_policy(const struct opts *o, const struct lt_policy *pol, const struct parts *p)
{
    struct run_spec cached = {pol, CACHE_BYTES, INT64_MAX, SIM_PREEMPT_NONE, SIM_INIT_REPACK, NULL};
    struct run_spec uncached = {pol, NO_CACHE_BYTES, INT64_MAX, SIM_PREEMPT_NONE, SIM_INIT_REPACK,
                                NULL};
    struct measured m;

    fprintf(stderr, PROG ": %s: zcat x%d, igzip x%d, replay x%u, replay without cache x%u + 1\n",
            lt_policy_name(pol), ZCAT_REPEAT, ZCAT_REPEAT, o->repeat, o->repeat);
    if (tool_median(p, "zcat", NULL, &m.zcat_s) < 0 ||
        tool_median(p, "igzip", "-dc", &m.igzip_s) < 0 ||
        run_series(o, &cached, o->repeat, NULL, &m.c) < 0 ||
        run_series(o, &uncached, o->repeat, &m.c.out, &m.nc) < 0)
        return -1;
    if (m.c.out.task_rows == 0 || m.c.out.tasks == 0 || !(m.c.out.seconds > 0) ||
        !(m.nc.out.seconds > 0) || !(m.zcat_s > 0) || !(m.igzip_s > 0)) {
        fprintf(stderr, PROG ": %s: the replay of '%s' read no task or took no time\n",
                lt_policy_name(pol), o->trace);
        return -1;
    }
    uncached.until_us = TRACE_ZERO_US + (m.c.out.end_time_us - TRACE_ZERO_US) / 2;
    if (run_child(o, &uncached, &m.half) < 0)
        return -1;
    report(o, pol, p, &m);
    return fflush(stdout) == 0 ? 0 : -1;
}

/* --ratios' runs: o->repeat rounds, each running rs[0..n-1] once in turn; the first run's
 * counts in first[], times in wall[] and cpu[] (n * repeat each). 0, or -1 after printing. */
static int ratios_rounds(const struct opts *o, const struct run_spec *rs, size_t n,
                         struct run_out *first, double *wall, double *cpu)
{
    int rc = 0;
    for (unsigned r = 0; r < o->repeat && rc == 0; r++) {
        fprintf(stderr, PROG ": --ratios round %u of %u\n", r + 1, o->repeat);
        for (size_t i = 0; i < n && rc == 0; i++) {
            struct run_out x;
            rc = run_child(o, &rs[i], &x);
            if (rc == 0 && r == 0)
                first[i] = x;
            if (rc == 0 && !same_counts(&x, &first[i])) {
                fprintf(stderr, PROG ": %s: replays disagree\n", pol_name(rs[i].pol));
                rc = -1;
            }
            wall[i * o->repeat + r] = x.seconds;
            cpu[i * o->repeat + r] = x.cpu_seconds;
        }
    }
    return rc;
}

/* One JSON line per policy i < n: its medians without preemption against bestfit1's (ref),
 * and with preemption (entry n + i) against its own without. */
static int ratios_print(const struct opts *o, const struct run_spec *rs, size_t n, size_t ref,
                        const struct run_out *first, double *wall, double *cpu)
{
    double ref_w = median(&wall[ref * o->repeat], o->repeat);
    double ref_c = median(&cpu[ref * o->repeat], o->repeat);
    for (size_t i = 0; i < n; i++) {
        double w = median(&wall[i * o->repeat], o->repeat);
        double c = median(&cpu[i * o->repeat], o->repeat);
        double pw = median(&wall[(n + i) * o->repeat], o->repeat);
        double pc = median(&cpu[(n + i) * o->repeat], o->repeat);
        double rows = (double)first[i].task_rows;
        printf("{\"bench\":\"replay_ratio\",\"policy\":");
        json_str(pol_name(rs[i].pol));
        printf(",\"trace\":");
        json_str(o->trace);
        printf(",\"repeat\":%u,\"seconds\":%.3f,\"cpu_seconds\":%.3f", o->repeat, w, c);
        printf(",\"bestfit1_seconds\":%.3f,\"bestfit1_cpu_seconds\":%.3f", ref_w, ref_c);
        printf(",\"ratio_vs_bestfit1\":%.2f,\"cpu_ratio_vs_bestfit1\":%.2f", w / ref_w, c / ref_c);
        printf(",\"tasks_completed\":%" PRIu64 ",\"placements\":%" PRIu64, first[i].completed,
               first[i].placements);
        printf(",\"rows_per_s\":%.0f,\"preempt\":\"%s\",\"preempt_seconds\":%.3f", rows / w,
               sim_preempt_name(o->preempt), pw);
        printf(",\"preempt_cpu_seconds\":%.3f,\"preempt_rows_per_s\":%.0f", pc, rows / pw);
        printf(",\"preempt_cost\":%.2f,\"preempt_cpu_cost\":%.2f", pw / w, pc / c);
        printf(",\"preemptions\":%" PRIu64 ",\"preempt_placements\":%" PRIu64,
               first[n + i].preemptions, first[n + i].placements);
        /* CPU time per placement, with over without: the cost of the simulated work apart
         * from how much more of it the preempting model does (each victim placed again). */
        printf(",\"preempt_cpu_cost_per_placement\":%.2f",
               first[i].placements && first[n + i].placements && c > 0
                   ? (pc / (double)first[n + i].placements) / (c / (double)first[i].placements)
                   : 0.0);
        /* ... and per simulated event, a run's start or its stop (a victim is both). */
        printf(",\"events\":%" PRIu64 ",\"preempt_events\":%" PRIu64, first[i].events,
               first[n + i].events);
        printf(",\"preempt_cpu_cost_per_event\":%.2f",
               first[i].events && first[n + i].events && c > 0
                   ? (pc / (double)first[n + i].events) / (c / (double)first[i].events)
                   : 0.0);
        printf(",\"preempt_cpu_us_per_eviction\":%.2f",
               first[n + i].preemptions ? (pc - c) * 1e6 / (double)first[n + i].preemptions : 0.0);
        printf(",\"initial_state\":\"%s\",\"overcommit\":",
               o->init == SIM_INIT_TRACE ? "trace" : "repack");
        json_str(o->overcommit_s != NULL ? o->overcommit_s : "none");
        printf("}\n");
    }
    return fflush(stdout) == 0 ? 0 : -1;
}

/* --ratios: every placement policy and lotes, without and with preemption, o->repeat rounds
 * of one cached replay each, then one JSON line per policy (ratios_print). */
static int run_ratios(const struct opts *o)
{
    size_t n = lt_policy_count() + 1, ref = SIZE_MAX;
    struct run_spec *rs = lt_calloc(2 * n, sizeof(*rs));
    struct run_out *first = lt_calloc(2 * n, sizeof(*first));
    double *wall = lt_calloc(2 * n * o->repeat, sizeof(*wall));
    double *cpu = lt_calloc(2 * n * o->repeat, sizeof(*cpu));
    int rc = rs != NULL && first != NULL && wall != NULL && cpu != NULL ? 0 : -1;

    if (rc < 0)
        fprintf(stderr, PROG ": out of memory\n");
    for (size_t i = 0; i < 2 * n && rc == 0; i++) {
        const struct lt_policy *pol = i % n + 1 < n ? lt_policy_at(i % n) : NULL;
        rs[i] = (struct run_spec){pol,       CACHE_BYTES,
                                  INT64_MAX, i < n ? SIM_PREEMPT_NONE : o->preempt,
                                  o->init,   &o->overcommit};
        if (i < n && pol != NULL && strcmp(lt_policy_name(pol), "bestfit1") == 0)
            ref = i;
    }
    if (rc == 0)
        rc = ratios_rounds(o, rs, 2 * n, first, wall, cpu);
    if (rc == 0 && ref == SIZE_MAX) {
        fprintf(stderr, PROG ": no bestfit1 policy to compare with\n");
        rc = -1;
    }
    if (rc == 0)
        rc = ratios_print(o, rs, n, ref, first, wall, cpu);
    lt_free(rs);
    lt_free(first);
    lt_free(wall);
    lt_free(cpu);
    return rc;
}

int main(int argc, char **argv)
{
    struct parts p;
    struct opts o;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        lt_free(o.pol);
        return rc > 0 ? 0 : 2;
    }
    if (o.ratios) {
        rc = run_ratios(&o);
        lt_free(o.pol);
        return rc < 0 ? 1 : 0;
    }
    rc = parts_list(o.trace, &p);
    if (rc == 0) {
        rc = parts_count_rows(&p);
        if (rc == 0)
            rc = run_inflate(&o, &p);
        for (size_t i = 0; rc == 0 && i < o.n_pol; i++)
            rc = run_policy(&o, o.pol[i], &p);
        parts_release(&p);
    }
    lt_free(o.pol);
    return rc < 0 ? 1 : 0;
}
