/* bench_slots.c -- speed of the slot simulator (eviction/slotsim.c): simulated seconds per
 * wall second and events per second on Cavdar's Table 8.1 cluster (125 servers, WASC slots)
 * and on the same mix scaled to 1,000 servers with 8x the arrival rate, one JSON line per
 * (scale, policy). Target (issue 7): >= 10^4 simulated seconds per wall second at 1,000
 * machines; `met` judges it on the arrival window alone (window_per_wall), not on the whole
 * simulated span to the last completion (sim_per_wall, larger). docs/benchmarks.md, "Slot
 * simulator benchmark".
 *
 * The workload is W-C (Table 9.4: 3 s, 0.15 s in bursts, 36 min between bursts) with its tasks
 * drawn from W-A's, read from --trace (default: the bundled demo subset of the Google 2011
 * trace); --workload w-e takes W-E instead (the same arrivals, synthetic tasks).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "lt_mem.h"
#include "lt_slots.h"
#include "lt_slotsim.h"
#include "lt_workload.h"
#include "slots/slots_trace.h"

#define PROG "bench_slots"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: " PROG " [--workload W] [--trace DIR] [--hours N] [--repeat N] [--seed N]\n"
        "       [--smoke] [--help]\n"
        "\n"
        "Runs W-C (or W-E) on Cavdar's Table 8.1 cluster (125 servers) and on the mix scaled to\n"
        "1,000 servers (8x the arrivals), under priority (mrs), wasp and hybrid (200\n"
        "sticky slots per 125 servers), memory lsf, and prints one JSON line each with\n"
        "simulated seconds per wall second and events per second (median of --repeat).\n"
        "Exit 1 if a run fails, 2 on a bad option.\n"
        "\n"
        "  --workload W w-c (default) or w-e\n"
        "  --trace DIR  W-C's pool of tasks (default: the bundled demo subset)\n"
        "  --hours N    arrival window (default 15)\n"
        "  --repeat N   timed runs per line, median reported (default 3)\n"
        "  --seed N     default 1\n"
        "  --smoke      1 hour, 1 repeat\n");
}

static int parse_pos(const char *flag, const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v <= 0 || v > 100000) {
        fprintf(stderr, PROG ": %s '%s' is not a whole number in 1..100000\n", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Table 8.1's servers times scale, with Table 8.1's WASC slots (24 / 48). */
static int wasc_config(uint32_t scale, struct lt_slot_config *cfg)
{
    static const uint32_t cnt[4] = {68, 39, 10, 8};
    struct lt_slot_group inv[4];
    struct lt_err err;

    for (size_t k = 0; k < 4; k++) {
        inv[k].type = lt_server_type_at(k);
        inv[k].count = cnt[k] * scale;
        inv[k].slots = 0;
    }
    lt_err_init(&err, NULL);
    if (lt_wasc_table_8_1(inv, 4, cfg, &err) < 0) {
        fprintf(stderr, PROG ": WASC: %s\n", err.text);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const flags[] = {"--hours",    "--repeat", "--seed",
                                        "--workload", "--trace",  NULL};
    static const char *const policies[] = {"priority", "wasp", "hybrid"};
    const char *values[5] = {"15", "3", "1", "w-c", BENCH_DEMO_DIR};
    const struct lt_workload_spec *spec;
    struct lt_slot_task *pool = NULL;
    size_t n_pool = 0;
    long hours, repeat, seed;
    bool smoke = false;
    struct lt_err err;
    int rc = bench_scan_args(PROG, argc, argv, flags, values, &smoke, usage);

    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (smoke) {
        values[0] = "1";
        values[1] = "1";
    }
    if (parse_pos("--hours", values[0], &hours) < 0 ||
        parse_pos("--repeat", values[1], &repeat) < 0 || parse_pos("--seed", values[2], &seed) < 0)
        return 2;
    lt_err_init(&err, NULL);
    if ((spec = lt_workload_find(values[3], &err)) == NULL ||
        (strcmp(values[3], "w-c") != 0 && strcmp(values[3], "w-e") != 0)) {
        fprintf(stderr, PROG ": --workload '%s': w-c or w-e\n", values[3]);
        return 2;
    }
    if (spec->pooled) {
        struct sim_wa_stats st;
        if (sim_slot_tasks_from_trace(values[4], 0, 1.0, (uint64_t)seed, &pool, &n_pool, &st,
                                      &err) < 0) {
            fprintf(stderr, PROG ": W-C's pool: %s\n", err.text);
            return 1;
        }
    }
    for (uint32_t scale = 1; scale <= 8; scale *= 8) {
        struct lt_workload_spec w = *spec;
        struct lt_slot_config cfg;
        struct lt_slot_task *t;
        size_t n;

        if (wasc_config(scale, &cfg) < 0)
            return 1;
        w.mean_gap /= scale;
        w.mean_gap_burst /= scale;
        if (lt_workload_generate(&w, (double)hours, (uint64_t)seed, pool, n_pool, &t, &n, &err) <
            0) {
            fprintf(stderr, PROG ": %s\n", err.text);
            return 1;
        }
        for (size_t k = 0; k < sizeof(policies) / sizeof(policies[0]); k++) {
            struct lt_slot_outcome *out = lt_calloc(n + 1, sizeof(*out));
            double *wall = calloc((size_t)repeat, sizeof(*wall)), med;
            struct lt_slot_params p;
            struct lt_slot_summary sum;

            if (out == NULL || wall == NULL) {
                fprintf(stderr, PROG ": out of memory\n");
                return 1;
            }
            lt_slot_params_default(&p, &cfg);
            p.memory = LT_SLOT_MEM_LSF;
            p.seed = (uint64_t)seed;
            p.horizon = (double)hours * 3600.0;
            p.waa = p.wae = k > 0;
            p.sticky = k == 2 ? 200 * scale : 0;
            for (long r = 0; r < repeat; r++) {
                double t0 = now_s();
                if (lt_slot_run(&p, t, n, out, &sum, &err) < 0) {
                    fprintf(stderr, PROG ": %s\n", err.text);
                    return 1;
                }
                wall[r] = now_s() - t0;
            }
            qsort(wall, (size_t)repeat, sizeof(*wall), cmp_double);
            med = wall[repeat / 2];
            printf("{\"bench\":\"slots\",\"workload\":\"%s\",\"pool\":%zu,\"hours\":%ld,"
                   "\"servers\":%llu,"
                   "\"slots\":%llu,\"policy\":\"%s\",\"memory\":\"lsf\",\"tasks\":%zu,"
                   "\"events\":%llu,\"sim_s\":%.1f,\"wall_s\":%.4f,\"sim_per_wall\":%.0f,"
                   "\"window_per_wall\":%.0f,\"events_per_s\":%.0f,\"repeat\":%ld,"
                   "\"target_sim_per_wall\":10000,\"met\":%s}\n",
                   spec->name, n_pool, hours, (unsigned long long)lt_slot_config_servers(&cfg),
                   (unsigned long long)lt_slot_config_slots(&cfg), policies[k], n,
                   (unsigned long long)sum.events, sum.end, med, med > 0 ? sum.end / med : 0.0,
                   med > 0 ? p.horizon / med : 0.0, med > 0 ? (double)sum.events / med : 0.0,
                   repeat, med > 0 && p.horizon / med >= 1e4 ? "true" : "false");
            free(wall);
            lt_free(out);
        }
        lt_free(t);
    }
    lt_free(pool);
    return fflush(stdout) == 0 ? 0 : 1;
}
