/* sla.c -- Betser's start-time SLA reward functions, their slopes and the SLA text parser
 * (lt_sla.h, docs/queue.md "SLA reward functions and SLA-aware orders").
 *
 * Source: Betser, MIT M.Eng. 2012: Example 1 [B L253-L272], cheap-and-simple [B L278-L283],
 *   by-deadline [B L285-L288], "maximum refund" -1 [B L394]; the spec's formulas and parameter
 *   tables (../shared/spec/queue-sla-network.md 2.3).
 * Readings (spec [REC]): cheap-and-simple's exponential form (the figure is lost); the delay
 *   quality target / max(d, eps); price x resource-hours for the run-time qualities; peak time
 *   read on the trace's US Eastern clock (6am-6pm Pacific = 9am-9pm Eastern, both on daylight
 *   time in May 2011); the right derivative at a knee (the source compares slopes "after the
 *   knee point" [B L490]).
 * Implementation: the peak seconds of [t0, t1) are C(t1) - C(t0) with C the cumulative peak
 *   time from a week origin (Sunday 00:00 Eastern = trace second -19 h), so a run of any length
 *   costs O(1).
 * Tests: tests/unit/eviction/test_sla.c (B6, B7, every parse error, relative times, the split).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_sla.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_S  86400.0
#define WEEK_S (7 * DAY_S)
/* Trace second 0 is Sunday 19:00 US Eastern (google-trace-2011.md section 1.2). */
#define TRACE_ZERO_IN_WEEK_S (19 * 3600.0)
/* Peak: Monday (day 1) to Friday (day 5), 09:00 to 21:00 Eastern. */
#define PEAK_FROM_S (9 * 3600.0)
#define PEAK_LEN_S  (12 * 3600.0)

/* The longest value text read (a number and its unit). */
#define MAX_VALUE 48

const char *lt_sla_kind_name(enum lt_sla_kind kind)
{
    static const char *const names[] = {"by-deadline", "cheap-and-simple", "example1"};
    return (unsigned)kind < 3 ? names[kind] : "(bad kind)";
}

double lt_sla_knee(const struct lt_sla *s)
{
    switch (s->kind) {
    case LT_SLA_BY_DEADLINE:
        return s->d1_s;
    case LT_SLA_CHEAP_AND_SIMPLE:
        return s->d0_s;
    case LT_SLA_EXAMPLE1:
        return s->target_s;
    }
    return NAN;
}

/* ---- the reward functions ---- */

static double by_deadline(const struct lt_sla *s, double d)
{
    if (!(d > s->d1_s))
        return s->r_max;
    if (d > s->d2_s)
        return s->r_pen;
    return s->r_max - (s->r_max - s->r_pen) * (d - s->d1_s) / (s->d2_s - s->d1_s);
}

static double cheap_and_simple(const struct lt_sla *s, double d)
{
    if (!(d > s->d0_s))
        return s->r_max;
    return s->r_min + (s->r_max - s->r_min) * exp(-s->k_per_s * (d - s->d0_s));
}

double lt_sla_delay_quality(double target_s, double d_s)
{
    return target_s / fmax(d_s, LT_SLA_EPS_S);
}

double lt_sla_example1(const struct lt_sla *s, double d_s, double peak_res_h, double offpeak_res_h)
{
    if (lt_sla_delay_quality(s->target_s, d_s) < 1)
        return 0;
    return s->price_peak * peak_res_h + s->price_offpeak * offpeak_res_h;
}

/* Peak seconds in [0, w) of a week (w in [0, WEEK_S]). */
static double peak_in_week(double w)
{
    double p = 0;

    for (int day = 1; day <= 5; day++) {
        double from = day * DAY_S + PEAK_FROM_S;
        p += fmin(fmax(w - from, 0), PEAK_LEN_S);
    }
    return p;
}

/* Peak seconds from the week origin (Sunday 00:00 Eastern) to w seconds after it (w may be
 * negative: the cycle extends both ways). */
static double peak_cumulative(double w)
{
    double weeks = floor(w / WEEK_S);
    return weeks * 5 * PEAK_LEN_S + peak_in_week(w - weeks * WEEK_S);
}

void lt_sla_peak_split(double t0_s, double t1_s, double *peak_s, double *offpeak_s)
{
    if (!(t1_s > t0_s)) {
        *peak_s = *offpeak_s = 0;
        return;
    }
    *peak_s =
        peak_cumulative(t1_s + TRACE_ZERO_IN_WEEK_S) - peak_cumulative(t0_s + TRACE_ZERO_IN_WEEK_S);
    *offpeak_s = (t1_s - t0_s) - *peak_s;
}

/* Is trace second t in peak time (the right-continuous indicator)? */
static bool is_peak(double t)
{
    double w = t + TRACE_ZERO_IN_WEEK_S;
    double r = w - floor(w / WEEK_S) * WEEK_S;
    double day = floor(r / DAY_S), in_day = r - day * DAY_S;

    return day >= 1 && day <= 5 && in_day >= PEAK_FROM_S && in_day < PEAK_FROM_S + PEAK_LEN_S;
}

static double example1(const struct lt_sla *s, double d, const struct lt_sla_run *run)
{
    double peak = 0, off = 0;

    if (run != NULL)
        lt_sla_peak_split(run->start_s, run->start_s + run->run_s, &peak, &off);
    return lt_sla_example1(s, d, run != NULL ? run->cores * peak / 3600 : 0,
                           run != NULL ? run->cores * off / 3600 : 0);
}

double lt_sla_reward(const struct lt_sla *s, double d_s, const struct lt_sla_run *run)
{
    double d = fmax(d_s, 0);

    switch (s->kind) {
    case LT_SLA_BY_DEADLINE:
        return by_deadline(s, d);
    case LT_SLA_CHEAP_AND_SIMPLE:
        return cheap_and_simple(s, d);
    case LT_SLA_EXAMPLE1:
        return example1(s, d, run);
    }
    return NAN;
}

/* Example 1's right derivative: the step at the target, else the price change as the run's
 * two ends cross the peak boundaries (d/dt of the peak seconds of [t, t + L) is
 * peak(t + L) - peak(t)). */
static double example1_slope(const struct lt_sla *s, double d, const struct lt_sla_run *run)
{
    double t0, t1, dpeak;

    if (d > s->target_s)
        return 0;
    if (!(d < s->target_s))
        return example1(s, d, run) > 0 ? -INFINITY : 0;
    if (run == NULL || !(run->run_s > 0))
        return 0;
    t0 = run->start_s;
    t1 = run->start_s + run->run_s;
    dpeak = (is_peak(t1) ? 1.0 : 0.0) - (is_peak(t0) ? 1.0 : 0.0);
    return run->cores * (s->price_peak - s->price_offpeak) * dpeak / 3600;
}

double lt_sla_slope(const struct lt_sla *s, double d_s, const struct lt_sla_run *run)
{
    double d = fmax(d_s, 0);

    switch (s->kind) {
    case LT_SLA_BY_DEADLINE:
        if (d < s->d1_s || !(d < s->d2_s)) {
            /* the step d1 = d2: r(d1) = r_max, r(d1+) = r_pen */
            bool step = !(s->d1_s < s->d2_s) && !(d < s->d1_s) && !(d > s->d1_s);
            return step && s->r_pen < s->r_max ? -INFINITY : 0;
        }
        return -(s->r_max - s->r_pen) / (s->d2_s - s->d1_s);
    case LT_SLA_CHEAP_AND_SIMPLE:
        if (d < s->d0_s)
            return 0;
        return -s->k_per_s * (s->r_max - s->r_min) * exp(-s->k_per_s * (d - s->d0_s));
    case LT_SLA_EXAMPLE1:
        return example1_slope(s, d, run);
    }
    return NAN;
}

double lt_sla_loss(const struct lt_sla *s, double d_s, double h_s, const struct lt_sla_run *run)
{
    struct lt_sla_run later;
    double d = fmax(d_s, 0);

    if (!(h_s > 0))
        return -lt_sla_slope(s, d, run);
    if (run != NULL) {
        later = *run;
        later.start_s += h_s;
    }
    return (lt_sla_reward(s, d, run) - lt_sla_reward(s, d + h_s, run != NULL ? &later : NULL)) /
           h_s;
}

double lt_sla_deadline_distance(const struct lt_sla *s, double d_s)
{
    double d = fmax(d_s, 0);

    if (s->kind != LT_SLA_BY_DEADLINE || !(by_deadline(s, d) > 0))
        return INFINITY;
    return fmax(s->d1_s - d, 0);
}

double lt_sla_zero_crossing(const struct lt_sla *s)
{
    if (!(s->d1_s < s->d2_s))
        return s->d1_s;
    return s->d1_s + s->r_max * (s->d2_s - s->d1_s) / (s->r_max - s->r_pen);
}

/* ---- checks ---- */

/* Who is checked: "SLA 'TEXT'" and any context, for messages; key: the key a failed check
 * names (NULL before). */
struct who {
    const char *text;
    const char *key;
};

/* A parameter as the text wrote it: "7200 s" or "2x" (relative). */
static void show(char *buf, size_t len, double v, bool relative)
{
    snprintf(buf, len, relative ? "%gx" : "%g s", v);
}

/* One rule: v must satisfy ok, else the message "WHAT: key must be rule, not v", WHAT being
 * "SLA 'TEXT'" and any context. */
static int rule(bool ok, struct who *what, const char *key, const char *must, double v,
                struct lt_err *err)
{
    if (ok)
        return 0;
    what->key = key;
    return lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s must be %s, not %g", what->text, key, must, v);
}

static int check_by_deadline(const struct lt_sla *s, unsigned rel, struct who *what,
                             struct lt_err *err)
{
    char a[40], b[40];
    int rc;

    if ((rc = rule(isfinite(s->r_max) && s->r_max > 0, what, "rmax", "> 0", s->r_max, err)) < 0 ||
        (rc = rule(isfinite(s->r_pen) && s->r_pen <= 0, what, "pen",
                   "<= 0 (the penalty plateau, a negative reward)", s->r_pen, err)) < 0 ||
        (rc = rule(isfinite(s->d1_s) && s->d1_s >= 0, what, "d1", ">= 0", s->d1_s, err)) < 0 ||
        (rc = rule(isfinite(s->d2_s) && s->d2_s >= 0, what, "d2", ">= 0", s->d2_s, err)) < 0)
        return rc;
    /* d1 <= d2 is checkable when both are absolute or both relative */
    if (!(rel & LT_SLA_T_D1) != !(rel & LT_SLA_T_D2) || !(s->d1_s > s->d2_s))
        return 0;
    show(a, sizeof(a), s->d1_s, rel & LT_SLA_T_D1);
    show(b, sizeof(b), s->d2_s, rel & LT_SLA_T_D2);
    what->key = "d2";
    return lt_err_set(err, LT_EINVAL, 0, 0,
                      "%s: d1 (%s) must be <= d2 (%s): the reward drops from d1 to d2", what->text,
                      a, b);
}

static int check_cheap(const struct lt_sla *s, struct who *what, struct lt_err *err)
{
    char must[64];
    int rc;

    if ((rc = rule(isfinite(s->r_max) && s->r_max > 0, what, "rmax", "> 0", s->r_max, err)) < 0)
        return rc;
    snprintf(must, sizeof(must), "in 0..rmax (%g): the reward is never negative", s->r_max);
    if ((rc = rule(isfinite(s->r_min) && s->r_min >= 0 && s->r_min <= s->r_max, what, "rmin", must,
                   s->r_min, err)) < 0 ||
        (rc = rule(isfinite(s->d0_s) && s->d0_s >= 0, what, "d0", ">= 0", s->d0_s, err)) < 0)
        return rc;
    return rule(isfinite(s->k_per_s) && s->k_per_s > 0, what, "k", "> 0 (1/s)", s->k_per_s, err);
}

static int check_example1(const struct lt_sla *s, unsigned rel, struct who *what,
                          struct lt_err *err)
{
    /* a relative target is a multiple: > 0 is enough there */
    double lo = (rel & LT_SLA_T_TARGET) ? 0 : LT_SLA_EPS_S;
    int rc;

    if ((rc = rule(isfinite(s->target_s) && s->target_s >= lo && s->target_s > 0, what, "target",
                   "> 0 (at least 1 us)", s->target_s, err)) < 0 ||
        (rc = rule(isfinite(s->price_peak) && s->price_peak >= 0, what, "peak", ">= 0",
                   s->price_peak, err)) < 0)
        return rc;
    return rule(isfinite(s->price_offpeak) && s->price_offpeak >= 0, what, "offpeak", ">= 0",
                s->price_offpeak, err);
}

static int check(const struct lt_sla *s, unsigned rel, struct who *what, struct lt_err *err)
{
    switch (s->kind) {
    case LT_SLA_BY_DEADLINE:
        return check_by_deadline(s, rel, what, err);
    case LT_SLA_CHEAP_AND_SIMPLE:
        return check_cheap(s, what, err);
    case LT_SLA_EXAMPLE1:
        return check_example1(s, rel, what, err);
    }
    return lt_err_set(err, LT_EINVAL, 0, 0, "SLA of unknown kind %d", (int)s->kind);
}

int lt_sla_check(const struct lt_sla *s, struct lt_err *err)
{
    char text[64];
    struct who what = {text, NULL};

    if (s == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no SLA given");
    snprintf(text, sizeof(text), "SLA '%s'", lt_sla_kind_name(s->kind));
    return check(s, 0, &what, err);
}

/* ---- the parser ---- */

/* One key of one kind: where it goes, whether it is a time, its default. */
struct key {
    const char *name;
    enum lt_sla_kind kind;
    size_t off;        /* offset of the double in struct lt_sla */
    unsigned time_bit; /* LT_SLA_T_* for a time (units and Nx allowed), 0 for a plain number */
    bool required;     /* no default in the source or the spec */
    double def;
};

#define F(field) offsetof(struct lt_sla, field)

static const struct key keys[] = {
    {"rmax", LT_SLA_BY_DEADLINE, F(r_max), 0, false, LT_SLA_DEF_RMAX},
    {"pen", LT_SLA_BY_DEADLINE, F(r_pen), 0, false, LT_SLA_DEF_PEN},
    {"d1", LT_SLA_BY_DEADLINE, F(d1_s), LT_SLA_T_D1, false, LT_SLA_DEF_D1_S},
    {"d2", LT_SLA_BY_DEADLINE, F(d2_s), LT_SLA_T_D2, false, LT_SLA_DEF_D2_S},
    {"rmax", LT_SLA_CHEAP_AND_SIMPLE, F(r_max), 0, false, LT_SLA_DEF_RMAX},
    {"rmin", LT_SLA_CHEAP_AND_SIMPLE, F(r_min), 0, false, LT_SLA_DEF_RMIN},
    {"d0", LT_SLA_CHEAP_AND_SIMPLE, F(d0_s), LT_SLA_T_D0, false, LT_SLA_DEF_D0_S},
    {"k", LT_SLA_CHEAP_AND_SIMPLE, F(k_per_s), 0, false, LT_SLA_DEF_K},
    {"target", LT_SLA_EXAMPLE1, F(target_s), LT_SLA_T_TARGET, true, 0},
    {"peak", LT_SLA_EXAMPLE1, F(price_peak), 0, true, 0},
    {"offpeak", LT_SLA_EXAMPLE1, F(price_offpeak), 0, true, 0},
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static double *field(struct lt_sla *s, const struct key *k)
{
    return (double *)(void *)((char *)s + k->off);
}

/* The kind's keys, "rmax, pen, d1, d2", into buf. */
static void known_keys(enum lt_sla_kind kind, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t k = 0; k < N_KEYS && n < len; k++)
        if (keys[k].kind == kind)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", keys[k].name);
}

/* Reads v[0..len-1] as a finite number, with a unit s, m, h, d or (time_ok) x. *rel is true for
 * x. false if it is not one. */
static bool value(const char *v, size_t len, bool time_ok, double *out, bool *rel)
{
    char buf[MAX_VALUE + 1], *end;
    double x, mult = 1;

    if (len == 0 || len > MAX_VALUE || v[0] == ' ' || v[0] == '\t')
        return false;
    memcpy(buf, v, len);
    buf[len] = '\0';
    x = strtod(buf, &end);
    if (end == buf || !isfinite(x))
        return false;
    *rel = false;
    if (*end != '\0') {
        if (!time_ok || end[1] != '\0')
            return false;
        switch (*end) {
        case 's':
            break;
        case 'm':
            mult = 60;
            break;
        case 'h':
            mult = 3600;
            break;
        case 'd':
            mult = DAY_S;
            break;
        case 'x':
            *rel = true;
            break;
        default:
            return false;
        }
    }
    *out = x * mult;
    return isfinite(*out);
}

/* One item of kind: key k[0..klen-1], value v[0..vlen-1], into *s; seen marks the keys
 * given. text names the SLA in messages. */
static int item(const char *text, enum lt_sla_kind kind, const char *k, size_t klen, const char *v,
                size_t vlen, struct lt_sla_spec *s, bool *seen, struct lt_err *err)
{
    char known[96];
    double x;
    bool rel;

    for (size_t j = 0; j < N_KEYS; j++) {
        const struct key *ky = &keys[j];

        if (ky->kind != kind || strlen(ky->name) != klen || strncmp(ky->name, k, klen) != 0)
            continue;
        if (seen[j])
            return lt_err_set(err, LT_EINVAL, 0, 0, "SLA '%s': key '%s' given twice", text,
                              ky->name);
        if (!value(v, vlen, ky->time_bit != 0, &x, &rel))
            return lt_err_set(err, LT_EINVAL, 0, 0, "SLA '%s': key '%s' needs %s, not '%.*s'", text,
                              ky->name,
                              ky->time_bit ? "a finite time (seconds, 90s, 5m, 1h, 2d, or 2x "
                                             "the job's estimated run time)"
                                           : "a finite number",
                              (int)vlen, v);
        seen[j] = true;
        *field(&s->sla, ky) = x;
        if (rel)
            s->relative |= ky->time_bit;
        return 0;
    }
    known_keys(kind, known, sizeof(known));
    return lt_err_set(err, LT_EINVAL, 0, 0, "SLA '%s': unknown key '%.*s' for %s (known: %s)", text,
                      (int)klen, k, lt_sla_kind_name(kind), known);
}

/* The kind named by text[0..len-1]; whole names the SLA in the message. */
static int kind_of(const char *text, size_t len, const char *whole, enum lt_sla_kind *kind,
                   struct lt_err *err)
{
    for (int k = 0; k < 3; k++) {
        const char *name = lt_sla_kind_name((enum lt_sla_kind)k);
        if (strlen(name) == len && strncmp(name, text, len) == 0) {
            *kind = (enum lt_sla_kind)k;
            return 0;
        }
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                      "unknown SLA kind '%.*s' in '%s' (known: by-deadline, cheap-and-simple, "
                      "example1)",
                      (int)len, text, whole);
}

/* The defaults of the keys not seen, the required ones' absence, and the ranges (the one place
 * every SLA, text or file, is checked). *bad_key: the key a range check names. */
static int finish(struct lt_sla_spec *s, const bool *seen, const char **bad_key, struct lt_err *err)
{
    char text[LT_SLA_TEXT + 8];
    struct who what = {text, NULL};
    int rc;

    for (size_t k = 0; k < N_KEYS; k++) {
        if (keys[k].kind != s->sla.kind || seen[k])
            continue;
        if (keys[k].required)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "SLA '%s': key '%s' is required (%s has no default for it)", s->text,
                              keys[k].name, lt_sla_kind_name(s->sla.kind));
        *field(&s->sla, &keys[k]) = keys[k].def;
    }
    snprintf(text, sizeof(text), "SLA '%s'", s->text);
    rc = check(&s->sla, s->relative, &what, err);
    *bad_key = what.key;
    return rc;
}

int lt_sla_parse(const char *text, struct lt_sla_spec *out, struct lt_err *err)
{
    struct lt_sla_spec s;
    bool seen[N_KEYS] = {false};
    const char *colon, *p, *bad_key;
    int rc;

    if (text == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no SLA text given");
    memset(&s, 0, sizeof(s));
    snprintf(s.text, sizeof(s.text), "%s", text);
    colon = strchr(text, ':');
    if ((rc = kind_of(text, colon ? (size_t)(colon - text) : strlen(text), text, &s.sla.kind,
                      err)) < 0)
        return rc;
    for (p = colon; p != NULL;) {
        const char *it = p + 1, *comma = strchr(it, ','), *eq;
        size_t len = comma ? (size_t)(comma - it) : strlen(it), klen;

        if (len == 0)
            return lt_err_set(err, LT_EINVAL, 0, 0, "SLA '%s': an empty item", text);
        if ((eq = memchr(it, '=', len)) == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "SLA '%s': item '%.*s' is not KEY=VALUE", text,
                              (int)len, it);
        klen = (size_t)(eq - it);
        if ((rc = item(text, s.sla.kind, it, klen, eq + 1, len - klen - 1, &s, seen, err)) < 0)
            return rc;
        p = comma;
    }
    if ((rc = finish(&s, seen, &bad_key, err)) < 0)
        return rc;
    *out = s;
    return 0;
}

int lt_sla_parse_kv(const char *label, const char *kind, const char *const *k, const char *const *v,
                    size_t n, struct lt_sla_spec *out, size_t *bad, struct lt_err *err)
{
    struct lt_sla_spec s;
    bool seen[N_KEYS] = {false};
    const char *bad_key = NULL;
    int rc;

    *bad = SIZE_MAX;
    if (label == NULL || kind == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no SLA label or kind given");
    memset(&s, 0, sizeof(s));
    snprintf(s.text, sizeof(s.text), "%s", label);
    if ((rc = kind_of(kind, strlen(kind), label, &s.sla.kind, err)) < 0) {
        *bad = n;
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = item(label, s.sla.kind, k[i], strlen(k[i]), v[i], strlen(v[i]), &s, seen, err)) <
            0) {
            *bad = i;
            return rc;
        }
    }
    if ((rc = finish(&s, seen, &bad_key, err)) < 0) {
        for (size_t i = 0; bad_key != NULL && i < n; i++)
            if (strcmp(k[i], bad_key) == 0)
                *bad = i;
        return rc;
    }
    *out = s;
    return 0;
}

int lt_sla_resolve(const struct lt_sla_spec *spec, double estimate_s, struct lt_sla *out,
                   struct lt_err *err)
{
    struct lt_sla s = spec->sla;
    char text[LT_SLA_TEXT + 64];
    struct who what = {text, NULL};
    int rc;

    if (!isfinite(estimate_s) || !(estimate_s > 0))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "SLA '%s': a job's estimated run time must be > 0 s, not %g", spec->text,
                          estimate_s);
    for (size_t k = 0; k < N_KEYS; k++)
        if (keys[k].kind == s.kind && (spec->relative & keys[k].time_bit))
            *field(&s, &keys[k]) *= estimate_s;
    snprintf(text, sizeof(text), "SLA '%s' for a job of estimated run time %g s", spec->text,
             estimate_s);
    if ((rc = check(&s, 0, &what, err)) < 0)
        return rc;
    *out = s;
    return 0;
}
