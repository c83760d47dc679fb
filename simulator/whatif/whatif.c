/* whatif.c -- the replicas of `lotus-sim whatif` (whatif.h; docs/whatif.md): seeds, injection
 * instants, the fork per replica from the snapshot, the records collected in order, and each
 * level's statistics.
 *
 * SPDX-License-Identifier: MIT
 */
#include "whatif/whatif.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/opt.h"
#include "lt_mem.h"
#include "lt_rng.h"

#define US 1000000.0

const double SIM_WHATIF_Q[SIM_WHATIF_N_Q] = {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0};

/* ---- --at ---------------------------------------------------------------------------------- */

static int parse_time(const char *flag, const char *whole, const char *s, double *out,
                      struct lt_err *err)
{
    uint64_t v;
    struct lt_err e2;
    lt_err_init(&e2, NULL);
    if (sim_parse_secs(flag, s, 1, &v, &e2) < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: '%.60s' is not S, random[:A:B] or day-random[:S] (S, A, B: "
                          "seconds or a duration: 7200, 2h)",
                          flag, whole);
    *out = (double)v;
    return 0;
}

int sim_at_parse(const char *flag, const char *s, struct sim_at *out, struct lt_err *err)
{
    struct sim_at a = {0};
    if (strncmp(s, "random", 6) == 0 && (s[6] == '\0' || s[6] == ':')) {
        a.mode = SIM_AT_RANDOM;
        if (s[6] == ':') {
            char buf[64];
            const char *colon = strchr(s + 7, ':');
            size_t len = colon ? (size_t)(colon - (s + 7)) : 0;
            if (!colon || len == 0 || len >= sizeof(buf))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s: '%.60s': random:A:B needs both A and B", flag, s);
            memcpy(buf, s + 7, len);
            buf[len] = '\0';
            if (parse_time(flag, s, buf, &a.a_s, err) < 0 ||
                parse_time(flag, s, colon + 1, &a.b_s, err) < 0)
                return LT_EINVAL;
            if (!(a.a_s < a.b_s))
                return lt_err_set(err, LT_EINVAL, 0, 0, "%s: '%.60s': A must be before B", flag, s);
            a.has_window = true;
        }
    } else if (strncmp(s, "day-random", 10) == 0 && (s[10] == '\0' || s[10] == ':')) {
        a.mode = SIM_AT_DAY_RANDOM;
        if (s[10] == ':') {
            if (parse_time(flag, s, s + 11, &a.at_s, err) < 0)
                return LT_EINVAL;
            if (a.at_s >= 86400.0)
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s: '%.60s': the time of day must be under 1d", flag, s);
        }
    } else {
        a.mode = SIM_AT_FIXED;
        if (parse_time(flag, s, s, &a.at_s, err) < 0)
            return LT_EINVAL;
    }
    *out = a;
    return 0;
}

/* ---- records and statistics ------------------------------------------------------------- */

bool sim_whatif_delay(const struct sim_whatif_rec *r, double *d_s)
{
    if (r->r.reason != SIM_INJ_STARTED) {
        *d_s = INFINITY;
        return false;
    }
    *d_s = (double)(r->r.start_us - r->r.t_inj_us) / US;
    return true;
}

double sim_whatif_quantile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double k = ceil(q * (double)n - 1e-9);
    size_t i = k < 1.0 ? 0 : (size_t)k - 1;
    return sorted[i < n ? i : n - 1];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sim_whatif_level(const struct sim_whatif_rec *recs, uint64_t replicas, size_t n_levels,
                      size_t level, double *out, struct sim_whatif_stats *st)
{
    double sum = 0;
    memset(st, 0, sizeof(*st));
    st->n = replicas;
    st->all_same = replicas > 1;
    for (uint64_t i = 0; i < replicas; i++) {
        const struct sim_whatif_rec *r = &recs[i * n_levels + level];
        if (sim_whatif_delay(r, &out[i])) {
            st->started++;
            sum += out[i];
        }
        if (r->r.reason >= 0 && r->r.reason < 4)
            st->by_reason[r->r.reason]++;
        const struct sim_whatif_rec *r0 = &recs[level];
        if (i > 0 && (r->r.reason != r0->r.reason ||
                      r->r.start_us - r->r.t_inj_us != r0->r.start_us - r0->r.t_inj_us))
            st->all_same = false;
    }
    st->censored = replicas - st->started;
    st->mean_s = st->started ? sum / (double)st->started : NAN;
    qsort(out, replicas, sizeof(*out), cmp_double);
    for (int k = 0; k < SIM_WHATIF_N_Q; k++)
        st->q[k] = sim_whatif_quantile(out, replicas, SIM_WHATIF_Q[k]);
}

/* ---- the replicas ----------------------------------------------------------------------- */

struct child {
    pid_t pid;
    int fd;
    size_t slot; /* replica * n_levels + level */
};

struct runner {
    const struct sim_whatif_config *c;
    struct sim_whatif_rec *recs;
    const uint64_t *seeds;
    const int64_t *t_inj;
    struct child *kids;
    size_t n_kids;
    struct lt_err *err;
};

/* In the child: perturbs s (already at t_inj unless fresh), injects, fills *rec. */
static void child_work(const struct sim_whatif_config *c, struct sim_snap *s, size_t level,
                       uint64_t seed, int64_t t_inj, bool fresh, struct sim_whatif_rec *rec)
{
    struct lt_err err;
    struct lt_rng shrink, resample;
    double pct = c->shrink[level];
    size_t kept = sim_snap_machines(s);
    int rc = 0;

    lt_err_init(&err, NULL);
    lt_rng_init(&shrink, seed, SIM_WHATIF_STREAM_SHRINK);
    lt_rng_init(&resample, seed, SIM_WHATIF_STREAM_RESAMPLE);
    if (fresh && c->shrink_from_start && pct < 100.0)
        rc = sim_snap_shrink(s, pct, &shrink, &kept, &err);
    if (rc == 0 && fresh)
        rc = sim_snap_advance(s, t_inj, &err);
    if (rc == 0 && !c->shrink_from_start && pct < 100.0)
        rc = sim_snap_shrink(s, pct, &shrink, &kept, &err);
    if (rc == 0 && c->resample)
        rc = sim_snap_resample(s, &resample, &rec->rs, &err);
    if (rc == 0)
        rc = sim_snap_inject(s, &c->inject, &rec->r, &err);
    rec->machines_kept = kept;
    rec->status = rc;
    if (rc < 0)
        snprintf(rec->err, sizeof(rec->err), "%.120s%s%.250s", err.source,
                 err.source[0] ? ": " : "", err.text);
}

static void kill_all(struct runner *rn)
{
    for (size_t k = 0; k < rn->n_kids; k++)
        kill(rn->kids[k].pid, SIGKILL);
    for (size_t k = 0; k < rn->n_kids; k++) {
        int st;
        while (waitpid(rn->kids[k].pid, &st, 0) < 0 && errno == EINTR)
            ;
        close(rn->kids[k].fd);
    }
    rn->n_kids = 0;
}

/* Waits for one child and takes its record. */
static int reap_one(struct runner *rn)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
        ;
    if (pid < 0)
        return lt_err_set(rn->err, LT_EIO, 0, 0, "what-if: waitpid: %s", strerror(errno));
    size_t k = 0;
    while (k < rn->n_kids && rn->kids[k].pid != pid)
        k++;
    if (k == rn->n_kids)
        return 0; /* not one of ours */
    struct child ch = rn->kids[k];
    rn->kids[k] = rn->kids[--rn->n_kids];
    size_t n_lv = rn->c->n_shrink, rep = ch.slot / n_lv;
    struct sim_whatif_rec *rec = &rn->recs[ch.slot];
    struct sim_whatif_rec got;
    size_t have = 0;
    while (have < sizeof(got)) {
        ssize_t r = read(ch.fd, (char *)&got + have, sizeof(got) - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    close(ch.fd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || have != sizeof(got) ||
        got.magic != SIM_WHATIF_MAGIC || got.replica != rep || got.level != ch.slot % n_lv) {
        char how[64];
        if (WIFSIGNALED(st))
            snprintf(how, sizeof(how), "died of signal %d", WTERMSIG(st));
        else
            snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(st));
        return lt_err_set(rn->err, LT_EIO, 0, 0,
                          "what-if: replica %zu (shrink %g %%): its process %s after writing "
                          "%zu of %zu bytes of its record",
                          rep, rn->c->shrink[ch.slot % n_lv], how, have, sizeof(got));
    }
    if (got.status < 0)
        return lt_err_set(rn->err, got.status, 0, 0, "what-if: replica %zu (shrink %g %%): %s", rep,
                          got.shrink_pct, got.err);
    *rec = got;
    return 0;
}

/* Reaps until fewer than max children run (the parent is one of the c->jobs processes). */
static int reap_to(struct runner *rn, size_t max)
{
    int rc = 0;
    while (rc == 0 && rn->n_kids > max)
        rc = reap_one(rn);
    return rc;
}

static int spawn(struct runner *rn, struct sim_snap *s, size_t rep, size_t level, bool fresh)
{
    int fds[2];
    size_t n_lv = rn->c->n_shrink;
    if (pipe(fds) != 0)
        return lt_err_set(rn->err, LT_EIO, 0, 0, "what-if: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return lt_err_set(rn->err, LT_EIO, 0, 0, "what-if: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        struct sim_whatif_rec rec;
        memset(&rec, 0, sizeof(rec));
        close(fds[0]);
        rec.magic = SIM_WHATIF_MAGIC;
        rec.replica = (uint32_t)rep;
        rec.level = (uint32_t)level;
        rec.seed = rn->seeds[rep];
        rec.shrink_pct = rn->c->shrink[level];
        child_work(rn->c, s, level, rn->seeds[rep], rn->t_inj[rep], fresh, &rec);
        const char *p = (const char *)&rec;
        size_t left = sizeof(rec);
        while (left > 0) {
            ssize_t w = write(fds[1], p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(3);
            p += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    rn->kids[rn->n_kids++] = (struct child){pid, fds[0], rep * n_lv + level};
    return 0;
}

/* The injection instants and the replica seeds. */
static int plan(const struct sim_whatif_config *c, int64_t t_end, uint64_t *seeds, int64_t *t_inj,
                struct sim_whatif_info *info, struct lt_err *err)
{
    struct lt_rng ctl;
    double end_s = (double)(t_end - SIM_TRACE_ZERO_US) / US;
    double a = 0, b = end_s;
    uint64_t days = (uint64_t)(end_s / 86400.0);

    if (c->at.mode == SIM_AT_RANDOM && c->at.has_window) {
        a = c->at.a_s;
        b = c->at.b_s;
    }
    info->a_s = a;
    info->b_s = b;
    if (c->at.mode == SIM_AT_FIXED && c->at.at_s > end_s)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--at %.0f: after the trace's window, which ends at %.0f s", c->at.at_s,
                          end_s);
    if (c->at.mode == SIM_AT_RANDOM && b > end_s)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--at random:%.0f:%.0f: B is after the trace's window, which ends at "
                          "%.0f s",
                          a, b, end_s);
    if (c->at.mode == SIM_AT_DAY_RANDOM && days < 2)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--at day-random (Method II) needs a trace of 2 whole days or more; "
                          "this one holds %.2f h (%.0f s): use --at S or random",
                          end_s / 3600.0, end_s);
    lt_rng_init(&ctl, c->seed, SIM_WHATIF_STREAM_CONTROL);
    for (uint64_t i = 0; i < c->replicas; i++) {
        struct lt_rng tr;
        double t = c->at.at_s;
        seeds[i] = lt_rng_next(&ctl);
        lt_rng_init(&tr, seeds[i], SIM_WHATIF_STREAM_TIME);
        if (c->at.mode == SIM_AT_RANDOM)
            t = a + lt_rng_uniform(&tr) * (b - a);
        else if (c->at.mode == SIM_AT_DAY_RANDOM)
            t = 86400.0 * (double)lt_rng_below(&tr, days) + c->at.at_s;
        t_inj[i] = SIM_TRACE_ZERO_US + (int64_t)llround(t * US);
        if (t_inj[i] <= 0)
            t_inj[i] = 1;
    }
    return 0;
}

static const int64_t *g_order_t; /* qsort's key: by instant, then replica */
static int cmp_order(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    if (g_order_t[i] != g_order_t[j])
        return g_order_t[i] < g_order_t[j] ? -1 : 1;
    return (i > j) - (i < j);
}

int sim_whatif_run(const struct sim_whatif_config *c, struct sim_whatif_rec *recs,
                   struct sim_whatif_info *info, struct lt_err *err)
{
    struct sim_snap *s = NULL;
    struct runner rn = {.c = c, .recs = recs, .err = err};
    uint64_t *seeds = NULL;
    int64_t *t_inj = NULL;
    size_t *order = NULL;
    bool fresh = c->no_snapshot || c->shrink_from_start;
    int rc;

    memset(info, 0, sizeof(*info));
    if (c->replicas == 0 || c->n_shrink == 0 || c->n_shrink > SIM_WHATIF_MAX_LEVELS ||
        c->jobs == 0 || c->replicas > UINT32_MAX)
        return lt_err_set(err, LT_EINVAL, 0, 0, "what-if: bad configuration");
    rc = sim_snap_open(c->replay, c->resample, &s, err);
    if (rc < 0)
        return rc;
    info->t_end_us = sim_snap_end_us(s);
    info->machines = sim_snap_machines(s);
    seeds = lt_calloc(c->replicas, sizeof(*seeds));
    t_inj = lt_calloc(c->replicas, sizeof(*t_inj));
    order = lt_calloc(c->replicas, sizeof(*order));
    rn.kids = lt_calloc(c->jobs, sizeof(*rn.kids));
    rn.seeds = seeds;
    rn.t_inj = t_inj;
    if (!seeds || !t_inj || !order || !rn.kids)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if (rc == 0 && c->check)
        rc = c->check(c->check_ctx, sim_snap_max_cap(s), err);
    if (rc == 0)
        rc = plan(c, info->t_end_us, seeds, t_inj, info, err);
    if (rc == 0) {
        for (size_t i = 0; i < c->replicas; i++)
            order[i] = i;
        g_order_t = t_inj;
        qsort(order, c->replicas, sizeof(*order), cmp_order);
    }
    /* At most c->jobs processes busy: the parent's advance counts as one. */
    for (size_t k = 0; rc == 0 && k < c->replicas; k++) {
        size_t i = order[k];
        if (!fresh) {
            rc = reap_to(&rn, c->jobs - 1);
            if (rc == 0)
                rc = sim_snap_advance(s, t_inj[i], err);
        }
        for (size_t lv = 0; rc == 0 && lv < c->n_shrink; lv++) {
            rc = reap_to(&rn, c->jobs - 1);
            if (rc == 0)
                rc = spawn(&rn, s, i, lv, fresh);
        }
    }
    if (rc == 0)
        rc = reap_to(&rn, 0);
    if (rc < 0)
        kill_all(&rn);
    lt_free(rn.kids);
    lt_free(order);
    lt_free(t_inj);
    lt_free(seeds);
    sim_snap_free(s);
    return rc;
}
