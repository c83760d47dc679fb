/* fuzz_trace_line.c -- libFuzzer target for the three trace line parsers (trace_line.c): any
 * bytes must give a row within the schema's ranges or an LT_EPARSE naming a column, never a
 * crash, a read past the line or undefined behaviour. The input is copied to a buffer of its
 * exact size, so ASan catches any read beyond len. Built with -DLOTUS_FUZZ=ON (clang); seeds:
 * real lines of the demo subset (make fuzz-smoke). The task line parser's fast path must
 * decide as the general parser, and with a memo (tr_parse_task_line_memo) as without.
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure must say why, at column 0 (the line) .. 14 (one past the last task field). */
static void check_failure(int rc, const struct lt_err *err)
{
    if (rc != LT_EPARSE || err->code != LT_EPARSE || err->text[0] == '\0' || err->column < 0 ||
        err->column > 14 || err->line != 0)
        __builtin_trap();
}

static bool bad_double(double v)
{
    return !(v >= 0.0) || !isfinite(v); /* NaN, negative or infinite */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size ? size : 1);
    struct tr_machine_row m;
    struct tr_job_row j;
    struct tr_task_row t;
    struct lt_err err;
    int rc;

    if (line == NULL)
        return 0;
    memcpy(line, data, size);

    lt_err_init(&err, NULL);
    rc = tr_parse_machine_line(line, size, &m, &err);
    if (rc == 0) {
        if (m.type >= TR_M_N_TYPES || m.time < 0 || m.machine_id > (uint64_t)INT64_MAX ||
            bad_double(m.cpu) || bad_double(m.mem))
            __builtin_trap();
    } else {
        check_failure(rc, &err);
    }

    lt_err_init(&err, NULL);
    rc = tr_parse_job_line(line, size, &j, &err);
    if (rc == 0) {
        if (j.type >= TR_N_TYPES || j.time < 0 || j.missing < -1 || j.missing > 2 ||
            j.sched_class < -1 || j.sched_class > 3 || j.job_id > (uint64_t)INT64_MAX)
            __builtin_trap();
    } else {
        check_failure(rc, &err);
    }

    lt_err_init(&err, NULL);
    rc = tr_parse_task_line(line, size, &t, &err);
    if (rc == 0) {
        if (t.type >= TR_N_TYPES || t.time < 0 || t.priority > 11 || t.missing < -1 ||
            t.missing > 2 || t.sched_class < -1 || t.sched_class > 3 || t.diff_machines < -1 ||
            t.diff_machines > 1 || bad_double(t.cpu) || bad_double(t.mem) || bad_double(t.disk) ||
            (!t.has_machine && t.machine_id != 0))
            __builtin_trap();
    } else {
        check_failure(rc, &err);
    }

    /* The fast path (tr_parse_task_line) decides as the general parser. */
    {
        struct tr_task_row g;
        struct lt_err eg;
        int rg;

        memset(&g, 0, sizeof(g));
        lt_err_init(&eg, NULL);
        rg = tr_parse_task_line_general(line, size, &g, &eg);
        if (rg != rc ||
            (rc == 0 &&
             (g.time != t.time || g.missing != t.missing || g.job_id != t.job_id ||
              g.task_index != t.task_index || g.has_machine != t.has_machine ||
              g.machine_id != t.machine_id || g.type != t.type || g.priority != t.priority ||
              g.sched_class != t.sched_class || g.has_req != t.has_req ||
              g.diff_machines != t.diff_machines || memcmp(&g.cpu, &t.cpu, sizeof(g.cpu)) != 0 ||
              memcmp(&g.mem, &t.mem, sizeof(g.mem)) != 0 ||
              memcmp(&g.disk, &t.disk, sizeof(g.disk)) != 0)))
            __builtin_trap();
        if (rc != 0 && (eg.column != err.column || strcmp(eg.text, err.text) != 0))
            __builtin_trap();
    }

    /* The memo: a line parsed after itself (its tail then comes from the memo) and after
     * another line must give what the plain parser gave. */
    {
        static struct tr_task_memo memo; /* kept across inputs: the previous one's tail */
        for (int k = 0; k < 2; k++) {
            struct tr_task_row u;
            struct lt_err e2;
            int r2;

            memset(&u, 0, sizeof(u));
            lt_err_init(&e2, NULL);
            r2 = tr_parse_task_line_memo(line, size, &memo, &u, &e2);
            if (r2 != rc ||
                (rc == 0 &&
                 (u.time != t.time || u.job_id != t.job_id || u.task_index != t.task_index ||
                  u.type != t.type || u.priority != t.priority || u.sched_class != t.sched_class ||
                  u.has_req != t.has_req || u.diff_machines != t.diff_machines ||
                  memcmp(&u.cpu, &t.cpu, sizeof(u.cpu)) != 0 ||
                  memcmp(&u.mem, &t.mem, sizeof(u.mem)) != 0 ||
                  memcmp(&u.disk, &t.disk, sizeof(u.disk)) != 0)))
                __builtin_trap();
        }
    }
    free(line);
    return 0;
}
