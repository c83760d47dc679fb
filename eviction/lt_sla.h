/* lt_sla.h -- Betser's start-time SLA reward functions (../shared/spec/queue-sla-network.md
 * section 2.3; docs/queue.md "SLA reward functions and SLA-aware orders").
 *
 * An SLA gives the provider a reward (SWE-hours, "funny money": only relative values matter
 * [B L231]) as a function of the job's start delay d = start - submit, in seconds. Three shapes:
 *
 *   by-deadline [B L285] (fully determined by the source's text):
 *       r(d) = r_max                                       d <= d1
 *              r_max - (r_max - r_pen) (d - d1) / (d2 - d1)  d1 < d <= d2
 *              r_pen                                       d > d2
 *     continuous; d1 = d2 is a step from r_max to r_pen just after d1. r_pen <= 0 is the
 *     "maximum refund" of the UI [B L394] (a negative plateau, default -1).
 *   cheap-and-simple [B L278-L283]: a READING of a lost figure (Figure 2-2), the spec's [REC]:
 *       r(d) = r_max                                       d <= d0
 *              r_min + (r_max - r_min) exp(-k (d - d0))    d > d0
 *     never negative, decreasing to r_min.
 *   example1 [B L253-L272], the existing batch scheduler's SLA: 0 unless the delay quality
 *     q = target / max(d, eps) is >= 1 (d <= target), else the price of the resource-hours run
 *     in peak time plus that of those run off-peak. Peak = Mon-Fri 6am-6pm Pacific [B L261] =
 *     9am-9pm US Eastern, the 2011 trace's clock (trace second 0 = Sunday 2011-05-01 19:00 EDT;
 *     May lies inside daylight time on both coasts). The prices are not in the source: both are
 *     required parameters.
 *
 * Slopes: the right derivative in d (spec 2.3 (d)); the look-ahead loss (r(d) - r(d+h)) / h
 * that sla-slope orders by (h = 0: the right derivative's negative).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_SLA_H
#define LT_SLA_H

#include <stdbool.h>
#include <stddef.h>

#include "lt_err.h"

enum lt_sla_kind { LT_SLA_BY_DEADLINE, LT_SLA_CHEAP_AND_SIMPLE, LT_SLA_EXAMPLE1 };

/* The smallest delay the delay quality divides by (one microsecond, the trace's unit). */
#define LT_SLA_EPS_S 1e-6

/* Defaults of the spec's tables (2.3): by-deadline rmax 1, pen -1 [B L394], d1 one hour, d2 two;
 * cheap-and-simple rmax 1, rmin 0.1, d0 0, k = ln 2 / 3600 (half the excess lost per hour). */
#define LT_SLA_DEF_RMAX 1.0
#define LT_SLA_DEF_PEN  (-1.0)
#define LT_SLA_DEF_D1_S 3600.0
#define LT_SLA_DEF_D2_S 7200.0
#define LT_SLA_DEF_RMIN 0.1
#define LT_SLA_DEF_D0_S 0.0
#define LT_SLA_DEF_K    (0.69314718055994530942 / 3600.0)

/* One SLA with absolute times (a value type). Only the kind's fields are read. */
struct lt_sla {
    enum lt_sla_kind kind;
    double r_max;         /* by-deadline, cheap-and-simple: maximum reward (SWE-h), > 0 */
    double r_pen;         /* by-deadline: the penalty plateau (SWE-h), <= 0 */
    double d1_s;          /* by-deadline: first knee, the reward starts to drop, >= 0 */
    double d2_s;          /* by-deadline: second knee, the reward levels off, >= d1 */
    double r_min;         /* cheap-and-simple: asymptotic minimum, 0 <= r_min <= r_max */
    double d0_s;          /* cheap-and-simple: length of the constant part, >= 0 */
    double k_per_s;       /* cheap-and-simple: rate of decline (1/s), > 0 */
    double target_s;      /* example1: desired start delay, >= LT_SLA_EPS_S */
    double price_peak;    /* example1: reward per resource-hour run in peak time, >= 0 */
    double price_offpeak; /* example1: reward per resource-hour run off-peak, >= 0 */
};

/* The times of an SLA text that may be relative to the job's own estimated run time ("2x"). */
enum lt_sla_time {
    LT_SLA_T_D1 = 1 << 0,
    LT_SLA_T_D2 = 1 << 1,
    LT_SLA_T_D0 = 1 << 2,
    LT_SLA_T_TARGET = 1 << 3
};

#define LT_SLA_TEXT 128

/* A parsed SLA text: the SLA with each relative time holding its multiple of the estimate. */
struct lt_sla_spec {
    struct lt_sla sla;
    unsigned relative;      /* LT_SLA_T_* bits of the times given as "Nx" */
    char text[LT_SLA_TEXT]; /* the text (truncated), for messages */
};

/* Where and how long a job runs, for example1's peak/off-peak prices (other kinds ignore it). */
struct lt_sla_run {
    double start_s; /* start, in trace seconds (second 0 = Sunday 2011-05-01 19:00 EDT) */
    double run_s;   /* run time, >= 0 */
    double cores;   /* resources held while it runs (cores, or a normalised request) */
};

/* Parses "KIND[:KEY=VALUE,...]" into *out:
 *   by-deadline:rmax=R,pen=P,d1=T,d2=T        (defaults 1, -1, 1h, 2h)
 *   cheap-and-simple:rmax=R,rmin=R,d0=T,k=K   (defaults 1, 0.1, 0, ln 2 / 3600)
 *   example1:target=T,peak=P,offpeak=Q        (no defaults: all three required)
 * Keys in any order. A time T is seconds, or a number with a unit s, m, h or d (90s, 5m, 1h,
 * 2d), or Nx: N times the job's estimated run time (resolved by lt_sla_resolve). Errors (the
 * message names the key and quotes the text): LT_ENOTFOUND for an unknown kind (listing the
 * known); LT_EINVAL for an unknown key (listing the kind's), a key given twice, a value that is
 * not a finite number (or time), a missing required key, a value out of its range (rmax > 0,
 * pen <= 0, d1 <= d2, 0 <= rmin <= rmax, d0 >= 0, k > 0, times >= 0, target > 0, prices >= 0).
 * *out is untouched on failure. */
LT_MUST_CHECK int lt_sla_parse(const char *text, struct lt_sla_spec *out, struct lt_err *err);

/* As lt_sla_parse, from a kind name and n (key, value) texts (an SLA file's object, simulator/
 * cli/slafile.c): the same keys, values, defaults and checks, label naming the SLA in messages
 * ("SLA 'LABEL': ...") and kept as out->text. *bad says what an error is about: the index of
 * the offending item (a bad key or value, a key given twice, the key a range check names:
 * d2 for d1 > d2), n for an unknown kind, SIZE_MAX for the SLA as a whole (a required key
 * missing). *out untouched on failure. */
LT_MUST_CHECK int lt_sla_parse_kv(const char *label, const char *kind, const char *const *k,
                                  const char *const *v, size_t n, struct lt_sla_spec *out,
                                  size_t *bad, struct lt_err *err);

/* The SLA of a job whose estimated run time is estimate_s (> 0): each relative time times the
 * estimate, then lt_sla_check (a mixed d1 = 2x, d2 = 1h can fail for a long job). LT_EINVAL
 * quoting the spec's text and the estimate; *out untouched then. */
LT_MUST_CHECK int lt_sla_resolve(const struct lt_sla_spec *spec, double estimate_s,
                                 struct lt_sla *out, struct lt_err *err);

/* Checks every parameter of the kind against its range (as lt_sla_parse). LT_EINVAL naming the
 * parameter. */
LT_MUST_CHECK int lt_sla_check(const struct lt_sla *s, struct lt_err *err);

/* The knee P(start <= knee) is read at: by-deadline d1, cheap-and-simple d0, example1 target
 * (the last delay of the SLA's full reward). */
double lt_sla_knee(const struct lt_sla *s);

/* The kind's name: "by-deadline", "cheap-and-simple" or "example1". */
const char *lt_sla_kind_name(enum lt_sla_kind kind);

/* The reward for a start delay d_s (negative delays count as 0). run is read by example1 only
 * (NULL there: no run time, so 0 beyond the delay test). Pure; s must pass lt_sla_check. */
double lt_sla_reward(const struct lt_sla *s, double d_s, const struct lt_sla_run *run);

/* Example 1 with the resource-hours already split: 0 if d_s > target, else
 * price_peak * peak_res_h + price_offpeak * offpeak_res_h [B L263-L268]. */
double lt_sla_example1(const struct lt_sla *s, double d_s, double peak_res_h, double offpeak_res_h);

/* Example 1's delay quality: target / max(d, LT_SLA_EPS_S); >= 1 iff the SLO is met. */
double lt_sla_delay_quality(double target_s, double d_s);

/* The peak and off-peak seconds of a run over [t0_s, t1_s) in trace seconds (t1 >= t0; 0 and
 * 0 otherwise). Peak = Mon-Fri 09:00-21:00 US Eastern, a weekly cycle from trace second 0 =
 * Sunday 19:00 (daylight time and holidays ignored: the 2011 trace lies in May). */
void lt_sla_peak_split(double t0_s, double t1_s, double *peak_s, double *offpeak_s);

/* The right derivative of the reward in d (reward per second; <= 0 for by-deadline and
 * cheap-and-simple). A step (by-deadline with d1 = d2 at d = d1; example1 at d = target with
 * a positive reward) is -INFINITY. For example1 the run moves with the start. */
double lt_sla_slope(const struct lt_sla *s, double d_s, const struct lt_sla_run *run);

/* The look-ahead loss (r(d) - r(d + h)) / h for h_s > 0 (the run starting h later), and
 * -lt_sla_slope for h_s = 0. Higher = losing reward faster. */
double lt_sla_loss(const struct lt_sla *s, double d_s, double h_s, const struct lt_sla_run *run);

/* sla-deadline's distance: max(0, d1 - d) for a by-deadline SLA still in its positive part
 * (r(d) > 0), else INFINITY (not covered by the soonest-deadline rule). */
double lt_sla_deadline_distance(const struct lt_sla *s, double d_s);

/* by-deadline's zero crossing d1 + r_max (d2 - d1) / (r_max - r_pen) (d2 when r_pen = 0 and
 * d2 > d1: the reward reaches 0 there). */
double lt_sla_zero_crossing(const struct lt_sla *s);

#endif
