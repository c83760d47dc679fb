/* slots_trace.c -- the Google-trace-driven workload W-A for the slot simulator (slots_trace.h).
 *
 * Reading (digest A18, with one deviation): a task is a (job ID, task index) pair of
 * task_events; its arrival is its first SUBMIT, its priority the first SUBMIT's, its execution
 * time the span from its last SCHEDULE to its FINISH. Only tasks submitted inside the window
 * (after t = 0, "before the trace") that finish inside it are kept: the slot simulator decides
 * evictions itself, so the trace's own evictions and resubmissions only shape that last
 * attempt. Deviation: the thesis takes the CPU demand as mean CPU usage x execution time and
 * the memory as mean memory usage, from task_usage; lotus reads task_events only (the sample
 * data holds 677 task_usage rows), so it takes the CPU and memory *requests* of the first
 * SUBMIT instead. Requests are mostly above usage in this trace, so the demand is an upper
 * bound (docs/slots.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "slots/slots_trace.h"

#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "trace/trace.h"

struct wa_rec {
    uint64_t job;
    uint32_t index;
    uint8_t prio;
    bool used;
    bool scheduled, finished;
    int64_t submit, schedule, finish; /* microseconds */
    double cpu, mem;
};

/* (job, index) -> record, open addressing. Not an lt_map (lt_map.h): the key is 96 bits, and
 * the W-A tasks are numbered in this table's slot order before the stable sort by submit
 * time, so equal submit times keep the order this hash and growth give (the outputs depend
 * on it). */
struct wa_map {
    struct wa_rec *r;
    size_t cap, n; /* cap a power of two */
};

static uint64_t mix(uint64_t job, uint32_t index)
{
    uint64_t x =
        job * UINT64_C(0x9e3779b97f4a7c15) ^ ((uint64_t)index + UINT64_C(0x632be59bd9b4e019));

    x ^= x >> 31;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    return x ^ (x >> 29);
}

static int map_grow(struct wa_map *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    struct wa_rec *r = lt_calloc(cap, sizeof(*r));

    if (r == NULL)
        return LT_ENOMEM;
    for (size_t k = 0; k < m->cap; k++) {
        size_t j;
        if (!m->r[k].used)
            continue;
        for (j = mix(m->r[k].job, m->r[k].index) & (cap - 1); r[j].used; j = (j + 1) & (cap - 1))
            ;
        r[j] = m->r[k];
    }
    lt_free(m->r);
    m->r = r;
    m->cap = cap;
    return 0;
}

/* The record of (job, index), created if absent; NULL on LT_ENOMEM. */
static struct wa_rec *map_get(struct wa_map *m, uint64_t job, uint32_t index)
{
    size_t j;

    if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
        return NULL;
    for (j = mix(job, index) & (m->cap - 1); m->r[j].used; j = (j + 1) & (m->cap - 1)) {
        if (m->r[j].job == job && m->r[j].index == index)
            return &m->r[j];
    }
    memset(&m->r[j], 0, sizeof(m->r[j]));
    m->r[j].used = true;
    m->r[j].job = job;
    m->r[j].index = index;
    m->r[j].submit = -1;
    m->n++;
    return &m->r[j];
}

static int by_submit(const void *a, const void *b)
{
    const struct lt_slot_task *x = a, *y = b;

    if (x->arrival < y->arrival)
        return -1;
    if (x->arrival > y->arrival)
        return 1;
    return (x->id > y->id) - (x->id < y->id);
}

int sim_slot_tasks_from_trace(const char *dir, uint32_t max_parts, double sample, uint64_t seed,
                              struct lt_slot_task **out, size_t *n_out, struct sim_wa_stats *st,
                              struct lt_err *err)
{
    struct tr_opts opts = {false, 0, max_parts};
    struct tr_reader *r;
    struct tr_task_row row;
    struct wa_map m = {NULL, 0, 0};
    struct lt_slot_task *t = NULL;
    size_t k = 0;
    int rc;

    *out = NULL;
    *n_out = 0;
    memset(st, 0, sizeof(*st));
    if (!(sample > 0.0 && sample <= 1.0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "W-A: sample %g is not in (0, 1]", sample);
    if ((r = tr_open(dir, TR_TASK_EVENTS, &opts, err)) == NULL)
        return err->code != 0 ? err->code : LT_EIO;
    while ((rc = tr_next(r, &row, err)) > 0) {
        struct wa_rec *w;

        st->rows++;
        if (row.time > st->end_us && row.time < TR_TIME_AFTER)
            st->end_us = row.time;
        if (row.type != TR_SUBMIT && row.type != TR_SCHEDULE && row.type != TR_FINISH)
            continue;
        if ((w = map_get(&m, row.job_id, row.task_index)) == NULL) {
            rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory reading W-A from '%s'", dir);
            break;
        }
        if (row.type == TR_SUBMIT && w->submit < 0) {
            w->submit = row.time;
            w->prio = row.priority;
            w->cpu = row.cpu;
            w->mem = row.mem;
        } else if (row.type == TR_SCHEDULE) {
            w->scheduled = true;
            w->schedule = row.time;
        } else if (row.type == TR_FINISH && w->scheduled) {
            w->finished = true;
            w->finish = row.time;
        }
    }
    tr_close(r);
    if (rc < 0)
        goto out;
    st->tasks_seen = m.n;
    if ((t = lt_calloc(m.n + 1, sizeof(*t))) == NULL) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory reading W-A from '%s'", dir);
        goto out;
    }
    for (size_t j = 0; j < m.cap; j++) {
        const struct wa_rec *w = &m.r[j];
        double exec;

        if (!w->used)
            continue;
        if (w->submit <= 0) { /* submitted before the trace, or never in the window */
            st->before++;
            continue;
        }
        if (!w->finished || w->finish < w->schedule || w->schedule < w->submit) {
            st->unfinished++;
            continue;
        }
        /* a seeded uniform sample of the tasks, the same whatever the read order */
        if (sample < 1.0 && (double)(mix(w->job ^ seed, w->index) >> 11) * 0x1p-53 >= sample) {
            st->sampled_out++;
            continue;
        }
        exec = (double)(w->finish - w->schedule) / 1e6;
        if (!(w->cpu > 0.0) || !(exec > 0.0)) {
            st->no_demand++; /* no CPU request, or an instant run: no demand to serve */
            continue;
        }
        memset(&t[k], 0, sizeof(t[k]));
        t[k].id = (int64_t)k; /* renumbered below in arrival order */
        t[k].prio = w->prio;
        t[k].arrival = (double)w->submit / 1e6;
        t[k].demand = w->cpu * exec;
        t[k].mem = w->mem < 1.0 ? w->mem : 1.0;
        k++;
    }
    qsort(t, k, sizeof(*t), by_submit);
    for (size_t j = 0; j < k; j++)
        t[j].id = (int64_t)j;
    st->kept = k;
    *out = t;
    *n_out = k;
    t = NULL;
    rc = 0;
out:
    lt_free(t);
    lt_free(m.r);
    return rc;
}
