/* gen.c -- `lotus-sim queue`'s workload generator (`gen:...`) and run-time estimates
 * (--estimate exact|noisy:CV|field).
 *
 * The generator is spec section 1.11 item 3's [REC]: N jobs, Poisson or all-at-0 arrivals,
 * size and run time log-uniform over ranges. Simon & McGalliard do not describe their
 * synthetic workload (spec section 1.10), so nothing here is theirs: the defaults (1,000 jobs,
 * 1..64 tasks, 10 s..1 h, offered load 0.9) are lotus's, chosen so that a default run on a few
 * hundred cores queues jobs (waits are not all zero) and ends in seconds. Every job draws, in
 * order, a gap, a size and a run time from one stream (LT_RNG_WORKLOAD), so the batch and the
 * Poisson variants of one seed have the same jobs, and a longer run (larger n) extends a
 * shorter one's jobs (prefix-stable), except for the arrival scale when the rate comes from
 * the load.
 *
 * Noisy estimates use a lognormal factor: the usual model of user estimate error when only
 * its spread is known (mean 1 keeps the estimates unbiased; real user estimates are biased
 * upwards, which --estimate field on an archive log shows instead).
 *
 * SPDX-License-Identifier: MIT
 */
#include "queue/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_rng.h"

#define TOKEN_MAX 63                /* longest number or value the spec parser looks at */
#define TWO_PI    6.283185307179586 /* Box-Muller needs 2 pi; M_PI is not part of C11 */

void sim_qgen_defaults(struct sim_qgen_spec *spec)
{
    *spec = (struct sim_qgen_spec){.n = 1000,
                                   .batch = false,
                                   .rate = 0,
                                   .load = 0.9,
                                   .tasks_min = 1,
                                   .tasks_max = 64,
                                   .runtime_min_s = 10,
                                   .runtime_max_s = 3600};
}

/* ---- small parsers over NUL-free [p, p + n) ------------------------------------------- */

/* A positive decimal number: digits, '.', an exponent; no sign, "inf", "nan" or hex. */
static bool num_pos(const char *p, size_t n, double *out)
{
    char buf[TOKEN_MAX + 1];
    char *end;
    double v;

    if (n == 0 || n > TOKEN_MAX || !((p[0] >= '0' && p[0] <= '9') || p[0] == '.'))
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (strpbrk(buf, "xXpP") != NULL)
        return false;
    v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v) || !(v >= 0))
        return false;
    *out = v;
    return true;
}

/* A whole number of at most 18 digits. */
static bool num_whole(const char *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0 || n > 18)
        return false;
    for (i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *out = v;
    return true;
}

/* "A..B" or "A": the two ends (equal for "A"). */
static void range_split(const char *p, size_t n, size_t *na, const char **b, size_t *nb)
{
    const char *dots = NULL;
    size_t i;

    for (i = 0; i + 1 < n; i++)
        if (p[i] == '.' && p[i + 1] == '.') {
            dots = p + i;
            break;
        }
    if (dots == NULL) {
        *na = n;
        *b = p;
        *nb = n;
        return;
    }
    *na = (size_t)(dots - p);
    *b = dots + 2;
    *nb = n - *na - 2;
}

/* ---- the generator spec --------------------------------------------------------------- */

enum { K_N, K_ARRIVALS, K_RATE, K_LOAD, K_TASKS, K_RUNTIME, K_COUNT };

static const char *const gen_keys[K_COUNT] = {"n", "arrivals", "rate", "load", "tasks", "runtime"};

static int gen_bad(struct lt_err *err, const char *key, const char *v, size_t n, const char *what)
{
    return lt_err_set(err, LT_EINVAL, 0, 0, "generator spec: %s: '%.*s' %s", key,
                      (int)(n < 40 ? n : 40), v, what);
}

static int gen_tasks(const char *v, size_t n, struct sim_qgen_spec *s, struct lt_err *err)
{
    size_t na, nb;
    const char *b;
    uint64_t lo, hi;

    range_split(v, n, &na, &b, &nb);
    if (!num_whole(v, na, &lo) || !num_whole(b, nb, &hi) || lo < 1 || hi < lo || hi > UINT32_MAX)
        return gen_bad(err, "tasks", v, n, "is not A..B or A with whole 1 <= A <= B <= 4294967295");
    s->tasks_min = (uint32_t)lo;
    s->tasks_max = (uint32_t)hi;
    return 0;
}

static int gen_runtime(const char *v, size_t n, struct sim_qgen_spec *s, struct lt_err *err)
{
    size_t na, nb;
    const char *b;
    double lo, hi;

    range_split(v, n, &na, &b, &nb);
    if (!num_pos(v, na, &lo) || !num_pos(b, nb, &hi) || !(lo > 0) || hi < lo)
        return gen_bad(err, "runtime", v, n, "is not A..B or A with seconds 0 < A <= B");
    s->runtime_min_s = lo;
    s->runtime_max_s = hi;
    return 0;
}

/* One KEY=VALUE (key index k) into *s. */
static int gen_key(int k, const char *v, size_t n, struct sim_qgen_spec *s, struct lt_err *err)
{
    uint64_t w;
    double x;

    switch (k) {
    case K_N:
        if (!num_whole(v, n, &w) || w < 1 || w > SIM_QLOAD_MAX_JOBS)
            return gen_bad(err, "n", v, n, "is not a whole number in 1..134217728");
        s->n = (size_t)w;
        return 0;
    case K_ARRIVALS:
        if (n == 5 && memcmp(v, "batch", 5) == 0)
            s->batch = true;
        else if (n == 7 && memcmp(v, "poisson", 7) == 0)
            s->batch = false;
        else
            return gen_bad(err, "arrivals", v, n, "is not 'batch' or 'poisson'");
        return 0;
    case K_RATE:
    case K_LOAD:
        if (!num_pos(v, n, &x) || !(x > 0))
            return gen_bad(err, gen_keys[k], v, n, "is not a number > 0");
        if (k == K_RATE)
            s->rate = x;
        else
            s->load = x;
        return 0;
    case K_TASKS:
        return gen_tasks(v, n, s, err);
    default:
        return gen_runtime(v, n, s, err);
    }
}

/* The key of "KEY=VALUE" at [p, p + n): its index, or an error. */
static int gen_find(const char *p, size_t n, int *k, const char **v, size_t *nv, struct lt_err *err)
{
    const char *eq = memchr(p, '=', n);
    size_t nk = eq ? (size_t)(eq - p) : n;

    for (*k = 0; *k < K_COUNT; (*k)++)
        if (strlen(gen_keys[*k]) == nk && memcmp(gen_keys[*k], p, nk) == 0)
            break;
    if (*k == K_COUNT)
        return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                          "generator spec: unknown key '%.*s' (known: n, arrivals, rate, load, "
                          "tasks, runtime)",
                          (int)(nk < 40 ? nk : 40), p);
    if (eq == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator spec: key '%s' has no '=VALUE'",
                          gen_keys[*k]);
    *v = eq + 1;
    *nv = n - nk - 1;
    return 0;
}

int sim_qgen_parse(const char *s, struct sim_qgen_spec *spec, struct lt_err *err)
{
    struct sim_qgen_spec t;
    bool seen[K_COUNT] = {false};
    const char *p;

    if (s == NULL || spec == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no generator spec");
    if (strcmp(s, "gen") != 0 && strncmp(s, "gen:", 4) != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator spec '%s' does not start with 'gen'", s);
    sim_qgen_defaults(&t);
    for (p = s[3] == ':' ? s + 4 : s + 3; *p != '\0';) {
        size_t n = strcspn(p, ",");
        const char *v = p;
        size_t nv = 0;
        int k = 0, rc;

        rc = gen_find(p, n, &k, &v, &nv, err);
        if (rc == 0 && seen[k])
            rc = lt_err_set(err, LT_EINVAL, 0, 0, "generator spec: key '%s' appears twice",
                            gen_keys[k]);
        if (rc == 0)
            rc = gen_key(k, v, nv, &t, err);
        if (rc < 0)
            return rc;
        seen[k] = true;
        p += n;
        if (*p == ',' && *++p == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0, "generator spec '%s' ends with ','", s);
    }
    if (seen[K_RATE] && seen[K_LOAD])
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator spec: give rate or load, not both");
    if (t.batch && (seen[K_RATE] || seen[K_LOAD]))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "generator spec: arrivals=batch takes no rate or load");
    *spec = t;
    return 0;
}

/* ---- the generator -------------------------------------------------------------------- */

static int gen_check(const struct sim_qgen_spec *s, uint64_t cores, struct lt_err *err)
{
    if (s->n < 1 || s->n > SIM_QLOAD_MAX_JOBS)
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator: n = %zu is not in 1..%zu", s->n,
                          SIM_QLOAD_MAX_JOBS);
    if (s->tasks_min < 1 || s->tasks_max < s->tasks_min)
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator: tasks %u..%u is not a range >= 1",
                          s->tasks_min, s->tasks_max);
    if (!(s->runtime_min_s > 0) || !(s->runtime_max_s >= s->runtime_min_s) ||
        !isfinite(s->runtime_max_s))
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator: runtime %g..%g s is not a range > 0",
                          s->runtime_min_s, s->runtime_max_s);
    if (cores > 0 && s->tasks_max > cores)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "generator: jobs of up to %u tasks cannot run on %llu cores",
                          s->tasks_max, (unsigned long long)cores);
    if (!s->batch && !(s->rate > 0) && !(s->load > 0 && isfinite(s->load) && cores > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "generator: Poisson arrivals need rate > 0, or load > 0 and cores");
    if (!s->batch && !isfinite(s->rate))
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator: rate %g is not finite", s->rate);
    return 0;
}

/* One job's gap (in arrival_s, unscaled), size and run time. */
static void gen_job(const struct sim_qgen_spec *s, struct lt_rng *rng, struct lt_qjob *j)
{
    double a = s->tasks_min, b1 = (double)s->tasks_max + 1.0;
    double t, r;

    j->arrival_s = -log1p(-lt_rng_uniform(rng)); /* Exp(1): 1 - U is in (0, 1] */
    t = floor(a * pow(b1 / a, lt_rng_uniform(rng)));
    j->tasks = t < a ? s->tasks_min : t > b1 - 1 ? s->tasks_max : (uint32_t)t;
    r = s->runtime_min_s * pow(s->runtime_max_s / s->runtime_min_s, lt_rng_uniform(rng));
    j->runtime_s = r > s->runtime_max_s ? s->runtime_max_s : r;
    j->estimate_s = j->runtime_s;
    j->cls = -1;
}

int sim_qgen(const struct sim_qgen_spec *spec, uint64_t cores, uint64_t seed, struct lt_qjob **out,
             size_t *n, struct lt_err *err)
{
    struct lt_rng rng;
    struct lt_qjob *jobs;
    double sum = 0, work = 0, rate;
    size_t i;
    int rc;

    if (spec == NULL || out == NULL || n == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "generator: no spec or output");
    rc = gen_check(spec, cores, err);
    if (rc < 0)
        return rc;
    jobs = lt_calloc(spec->n, sizeof(*jobs));
    if (jobs == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "generator: out of memory for %zu jobs", spec->n);
    lt_rng_init(&rng, seed, LT_RNG_WORKLOAD);
    for (i = 0; i < spec->n; i++) {
        gen_job(spec, &rng, &jobs[i]);
        jobs[i].id = (int64_t)i;
        sum = i == 0 ? 0 : sum + jobs[i].arrival_s; /* job 0 arrives at 0 */
        jobs[i].arrival_s = sum;
        work += (double)jobs[i].tasks * jobs[i].runtime_s;
    }
    rate = spec->rate > 0 ? spec->rate : spec->load * (double)cores / (work / (double)spec->n);
    for (i = 0; i < spec->n; i++)
        jobs[i].arrival_s = spec->batch ? 0 : jobs[i].arrival_s / rate;
    *out = jobs;
    *n = spec->n;
    return 0;
}

/* ---- estimates ------------------------------------------------------------------------ */

int sim_qest_parse(const char *s, struct sim_qest *out, struct lt_err *err)
{
    double cv;

    if (s == NULL || out == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no estimate mode");
    if (strcmp(s, "exact") == 0) {
        *out = (struct sim_qest){.kind = SIM_QEST_EXACT};
        return 0;
    }
    if (strcmp(s, "field") == 0) {
        *out = (struct sim_qest){.kind = SIM_QEST_FIELD};
        return 0;
    }
    if (strncmp(s, "noisy:", 6) == 0 && num_pos(s + 6, strlen(s + 6), &cv) &&
        cv <= SIM_QEST_MAX_CV) {
        *out = (struct sim_qest){.kind = SIM_QEST_NOISY, .cv = cv};
        return 0;
    }
    if (strncmp(s, "noisy:", 6) == 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "estimate '%s': the coefficient of variation is not a number in 0..%g", s,
                          SIM_QEST_MAX_CV);
    return lt_err_set(err, LT_EINVAL, 0, 0, "unknown estimate '%s' (known: exact, noisy:CV, field)",
                      s);
}

int sim_qestimate(struct lt_qjob *jobs, size_t n, const struct sim_qest *est, uint64_t seed,
                  struct lt_err *err)
{
    struct lt_rng rng;
    double sigma, mu;
    size_t i;

    if (est == NULL || (jobs == NULL && n > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0, "no estimate mode or jobs");
    switch (est->kind) {
    case SIM_QEST_EXACT:
        for (i = 0; i < n; i++)
            jobs[i].estimate_s = jobs[i].runtime_s;
        return 0;
    case SIM_QEST_FIELD:
        return 0;
    case SIM_QEST_NOISY:
        break;
    default:
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown estimate kind %d", (int)est->kind);
    }
    if (!(est->cv >= 0 && est->cv <= SIM_QEST_MAX_CV))
        return lt_err_set(err, LT_EINVAL, 0, 0, "estimate: cv %g is not in 0..%g", est->cv,
                          SIM_QEST_MAX_CV);
    sigma = sqrt(log1p(est->cv * est->cv));
    mu = -0.5 * sigma * sigma;
    lt_rng_init(&rng, seed, LT_RNG_ESTIMATE);
    for (i = 0; i < n; i++) {
        double u1 = 1.0 - lt_rng_uniform(&rng); /* (0, 1]: log is finite */
        double u2 = lt_rng_uniform(&rng);
        double z = sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
        double e = jobs[i].runtime_s * exp(mu + sigma * z);

        /* Out of double range only for run times near its ends: keep the exact one then. */
        jobs[i].estimate_s = (e > 0 && isfinite(e)) ? e : jobs[i].runtime_s;
    }
    return 0;
}
