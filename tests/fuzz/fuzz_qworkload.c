/* fuzz_qworkload.c -- libFuzzer target for lotus-sim queue's CSV and SWF readers
 * (simulator/queue/workload.c): any bytes must give jobs that keep the readers' guarantees
 * (sorted arrivals >= 0, ids 0..n-1, tasks >= 1, run times and estimates > 0 and finite) or an
 * LT_EPARSE / LT_ERANGE naming a line and a field, never a crash or a read past the input. The
 * first byte picks the reader (even: SWF, odd: CSV) and the options (bit 1: strict, bit 2:
 * need estimates); the rest is the file, copied to a buffer of its exact size so ASan catches
 * any over-read. Built with -DLOTUS_FUZZ=ON (clang); seeds: tests/data/queue (make fuzz-smoke).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "queue/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_jobs(const struct lt_qjob *j, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (j[i].id != (int64_t)i || !(j[i].arrival_s >= 0) || !isfinite(j[i].arrival_s) ||
            j[i].tasks < 1 || !(j[i].runtime_s > 0) || !isfinite(j[i].runtime_s) ||
            !(j[i].estimate_s > 0) || !isfinite(j[i].estimate_s) || j[i].cls < -1)
            __builtin_trap();
        if (i > 0 && j[i].arrival_s < j[i - 1].arrival_s)
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_qload_opts o;
    struct sim_qload_info info;
    struct lt_qjob *jobs = NULL;
    struct lt_err err;
    size_t n = 0, len;
    char *buf;
    int rc;

    if (size == 0)
        return 0;
    o = (struct sim_qload_opts){.strict = (data[0] & 2) != 0, .need_estimates = (data[0] & 4) != 0};
    len = size - 1;
    buf = malloc(len ? len : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data + 1, len);
    lt_err_init(&err, NULL);
    if (data[0] & 1)
        rc = sim_qload_csv_buffer("f.csv", buf, len, &o, &jobs, &n, &info, &err);
    else
        rc = sim_qload_swf_buffer("f.swf", buf, len, &o, &jobs, &n, &info, &err);
    if (rc == 0) {
        if (info.n_jobs != n || (n > 0) != (jobs != NULL))
            __builtin_trap();
        check_jobs(jobs, n);
    } else if ((rc != LT_EPARSE && rc != LT_ERANGE) || err.code != rc || err.text[0] == '\0' ||
               err.line < 0 || err.column < 0 || err.column > 19 || jobs != NULL) {
        __builtin_trap();
    }
    lt_free(jobs);
    free(buf);
    return 0;
}
