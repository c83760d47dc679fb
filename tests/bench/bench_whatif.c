/* bench_whatif.c -- lotus-sim whatif's speed: replicas per second with the snapshot (the prefix
 * replayed once, one fork per replica) and with the prefix replayed per replica, in one run.
 *
 * What: Bob's job (Betser's use case: 2 tasks of CPU 0.0417, memory 0.94, disk 0.01, one hour,
 * priority 2) injected at trace second 7200 into --trace DIR (default the two sample parts),
 * --replicas N (default 100) replicas at --shrink 90 (a random 90 % of the machines per replica:
 * the source of variance), one process at a time (-j 1, one core). Each mode is timed whole,
 * pass 1 included: wall time and the CPU time of this process and its children (getrusage).
 * Both modes must give the same records (the snapshot's property): a difference is exit 1.
 * Output: one JSON line per mode, then one with the ratio (issue 23 item 7: 100 replicas in
 * under 30 s with the snapshot). --smoke: the bundled demo subset, 10 replicas.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "lt_mem.h"
#include "whatif/whatif.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    getrusage(RUSAGE_CHILDREN, &b);
    return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) +
           (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
                    b.ru_stime.tv_usec) *
               1e-6;
}

int main(int argc, char **argv)
{
    const char *trace = BENCH_TRACE_DIR;
    uint64_t replicas = 100;
    double at_s = 7200;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--smoke") == 0) {
            trace = BENCH_DEMO_DIR;
            replicas = 10;
            at_s = 3600;
        } else if (strcmp(argv[k], "--trace") == 0 && k + 1 < argc) {
            trace = argv[++k];
        } else if (strcmp(argv[k], "--replicas") == 0 && k + 1 < argc) {
            replicas = strtoull(argv[++k], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_whatif [--smoke] [--trace DIR] [--replicas N]\n");
            return 2;
        }
    }
    static const struct sim_inject_group bob = {{0.0417, 0.94, 0.01}, 3600LL * 1000000, 2};
    struct sim_replay_config rc = {.trace_dir = trace,
                                   .policy = lt_policy_find("bestfit1", NULL),
                                   .seed = 1,
                                   .machines_pct = 100.0,
                                   .initial_state = SIM_INIT_TRACE,
                                   .until_us = INT64_MAX,
                                   .interval_us = INT64_C(1) << 60,
                                   .cache_bytes = (size_t)1024 << 20};
    struct sim_whatif_config c = {
        .replay = &rc,
        .inject = {.groups = &bob, .n_groups = 1, .priority = 2, .horizon_us = 86400LL * 1000000},
        .at = {.mode = SIM_AT_FIXED, .at_s = at_s},
        .replicas = replicas,
        .seed = 1,
        .shrink = {90},
        .n_shrink = 1,
        .jobs = 1};
    struct sim_whatif_rec *rec[2];
    struct sim_whatif_info info;
    double wall[2], cpu[2];
    for (int m = 0; m < 2; m++) {
        struct lt_err err;
        lt_err_init(&err, NULL);
        rec[m] = lt_calloc(replicas, sizeof(**rec));
        if (!rec[m])
            return 1;
        c.no_snapshot = m == 1;
        double w0 = now_s(), c0 = cpu_s();
        if (sim_whatif_run(&c, rec[m], &info, &err) < 0) {
            fprintf(stderr, "bench_whatif: %s: %s\n", err.source, err.text);
            return 1;
        }
        wall[m] = now_s() - w0;
        cpu[m] = cpu_s() - c0;
        uint64_t started = 0;
        for (uint64_t i = 0; i < replicas; i++)
            started += rec[m][i].r.reason == SIM_INJ_STARTED;
        printf("{\"bench\":\"whatif\",\"mode\":\"%s\",\"trace\":\"%s\",\"at_s\":%.0f,"
               "\"replicas\":%llu,\"started\":%llu,\"jobs\":1,\"wall_s\":%.3f,\"cpu_s\":%.3f,"
               "\"replicas_per_s\":%.2f}\n",
               m == 0 ? "snapshot" : "prefix-per-replica", trace, at_s,
               (unsigned long long)replicas, (unsigned long long)started, wall[m], cpu[m],
               (double)replicas / wall[m]);
        fflush(stdout);
    }
    int bad = 0;
    for (uint64_t i = 0; i < replicas; i++)
        bad |= rec[0][i].r.start_us != rec[1][i].r.start_us ||
               rec[0][i].r.reason != rec[1][i].r.reason ||
               rec[0][i].r.queued_at_inj != rec[1][i].r.queued_at_inj;
    printf("{\"bench\":\"whatif\",\"mode\":\"ratio\",\"wall_ratio\":%.2f,\"cpu_ratio\":%.2f,"
           "\"same_records\":%s}\n",
           wall[1] / wall[0], cpu[1] / cpu[0], bad ? "false" : "true");
    lt_free(rec[0]);
    lt_free(rec[1]);
    if (bad)
        fprintf(stderr, "bench_whatif: the two modes gave different records\n");
    return bad ? 1 : 0;
}
