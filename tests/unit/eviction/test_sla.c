/* test_sla.c -- Betser's SLA reward functions (eviction/sla.c) and the SLA-aware queue orders
 * (eviction/qorder.c, eviction/qsim.c), spec sections 2.3, 2.4 and targets B1-B4, B6, B7:
 *   - the shapes by hand: by-deadline (knees, continuity, step, zero crossing), cheap-and-simple
 *     (never negative, decreasing to r_min), slopes and the look-ahead loss;
 *   - Example 1: the delay test, prices, the peak/off-peak split across weekday boundaries and
 *     a weekend;
 *   - the SLA text: defaults, units, relative times, every refusal's message;
 *   - the orders: B1 (greatest reward), B2 (soonest deadline), B3 (steepest slope), jobs
 *     without an SLA last, the tie rule; B4 run through the queue simulator.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lt_qsim.h"
#include "lt_queue.h"
#include "lt_sla.h"
#include "lt_qtest.h"

/* Exact arithmetic on these hand values differs from the formulas by rounding only. */
#define EPS 1e-12

static struct lt_sla parse_ok(const char *text)
{
    struct lt_sla_spec sp;
    struct lt_sla s;
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (lt_sla_parse(text, &sp, &err) != 0)
        fail_msg("'%s': %s", text, err.text);
    assert_int_equal(sp.relative, 0);
    assert_int_equal(lt_sla_resolve(&sp, 1, &s, &err), 0);
    return s;
}

static struct lt_sla by_deadline(double rmax, double pen, double d1, double d2)
{
    struct lt_sla s;

    memset(&s, 0, sizeof(s));
    s.kind = LT_SLA_BY_DEADLINE;
    s.r_max = rmax;
    s.r_pen = pen;
    s.d1_s = d1;
    s.d2_s = d2;
    assert_int_equal(lt_sla_check(&s, NULL), 0);
    return s;
}

static struct lt_sla cheap(double rmax, double rmin, double d0, double k)
{
    struct lt_sla s;

    memset(&s, 0, sizeof(s));
    s.kind = LT_SLA_CHEAP_AND_SIMPLE;
    s.r_max = rmax;
    s.r_min = rmin;
    s.d0_s = d0;
    s.k_per_s = k;
    assert_int_equal(lt_sla_check(&s, NULL), 0);
    return s;
}

/* ---- shapes (B7) ---- */

/* rmax 1, pen -1, knees 1 h and 2 h: flat, linear through 0 at 1.5 h, flat at -1. */
static void test_by_deadline_by_hand(void **state)
{
    struct lt_sla s = parse_ok("by-deadline:rmax=1,pen=-1,d1=3600,d2=7200");

    (void)state;
    lt_assert_near(lt_sla_reward(&s, 0, NULL), 1, 0);
    lt_assert_near(lt_sla_reward(&s, -5, NULL), 1, 0);
    lt_assert_near(lt_sla_reward(&s, 3600, NULL), 1, 0);
    lt_assert_near(lt_sla_reward(&s, 4500, NULL), 0.5, EPS);
    lt_assert_near(lt_sla_reward(&s, 5400, NULL), 0, EPS);
    lt_assert_near(lt_sla_reward(&s, 6300, NULL), -0.5, EPS);
    lt_assert_near(lt_sla_reward(&s, 7200, NULL), -1, EPS);
    lt_assert_near(lt_sla_reward(&s, 1e9, NULL), -1, 0);
    lt_assert_near(lt_sla_zero_crossing(&s), 5400, EPS);
    /* continuous at both knees */
    lt_assert_near(lt_sla_reward(&s, 3600 + 1e-6, NULL), 1, 1e-9);
    lt_assert_near(lt_sla_reward(&s, 7200 - 1e-6, NULL), -1, 1e-9);
    lt_assert_near(lt_sla_reward(&s, 7200 + 1e-6, NULL), -1, 0);
    /* non-increasing on a grid */
    for (double d = 0; d < 9000; d += 7.5)
        assert_true(lt_sla_reward(&s, d + 7.5, NULL) <= lt_sla_reward(&s, d, NULL));
    /* slopes: 0 before d1, -2/3600 from d1 (right derivative), 0 from d2 */
    lt_assert_near(lt_sla_slope(&s, 3599, NULL), 0, 0);
    lt_assert_near(lt_sla_slope(&s, 3600, NULL), -2.0 / 3600, EPS);
    lt_assert_near(lt_sla_slope(&s, 7199, NULL), -2.0 / 3600, EPS);
    lt_assert_near(lt_sla_slope(&s, 7200, NULL), 0, 0);
    /* look-ahead 300 s from 100 s before the knee: (1 - (1 - 2 * 200 / 3600)) / 300 */
    lt_assert_near(lt_sla_loss(&s, 3500, 300, NULL), 400.0 / 3600 / 300, EPS);
    lt_assert_near(lt_sla_loss(&s, 3500, 0, NULL), 0, 0);
    lt_assert_near(lt_sla_loss(&s, 3600, 0, NULL), 2.0 / 3600, EPS);
    /* the soonest-deadline distance: d1 - d, 0 on the slope while positive, then none */
    lt_assert_near(lt_sla_deadline_distance(&s, 1000), 2600, 0);
    lt_assert_near(lt_sla_deadline_distance(&s, 5000), 0, 0);
    assert_true(isinf(lt_sla_deadline_distance(&s, 5400)));
}

/* d1 = d2: a step from r_max at d1 to r_pen just after; its right derivative is infinite. */
static void test_by_deadline_step(void **state)
{
    struct lt_sla s = by_deadline(2, -3, 600, 600);

    (void)state;
    lt_assert_near(lt_sla_reward(&s, 600, NULL), 2, 0);
    lt_assert_near(lt_sla_reward(&s, 600.000001, NULL), -3, 0);
    assert_true(isinf(lt_sla_slope(&s, 600, NULL)) && lt_sla_slope(&s, 600, NULL) < 0);
    lt_assert_near(lt_sla_slope(&s, 599, NULL), 0, 0);
    lt_assert_near(lt_sla_slope(&s, 601, NULL), 0, 0);
    lt_assert_near(lt_sla_zero_crossing(&s), 600, 0);
    /* pen = 0: the reward reaches 0 at d2 */
    s = by_deadline(1, 0, 100, 200);
    lt_assert_near(lt_sla_zero_crossing(&s), 200, EPS);
}

/* rmax 1, rmin 0.1, d0 600, k = ln 2 / 3600: half of the 0.9 excess lost each hour after d0. */
static void test_cheap_and_simple_by_hand(void **state)
{
    struct lt_sla s = cheap(1, 0.1, 600, log(2) / 3600);
    double prev = INFINITY;

    (void)state;
    lt_assert_near(lt_sla_reward(&s, 0, NULL), 1, 0);
    lt_assert_near(lt_sla_reward(&s, 600, NULL), 1, 0);
    lt_assert_near(lt_sla_reward(&s, 600 + 3600, NULL), 0.55, EPS);
    lt_assert_near(lt_sla_reward(&s, 600 + 7200, NULL), 0.325, EPS);
    lt_assert_near(lt_sla_reward(&s, 1e9, NULL), 0.1, EPS);
    lt_assert_near(lt_sla_reward(&s, 600 + 1e-6, NULL), 1, 1e-9); /* continuous at d0 */
    for (double d = 0; d < 1e6; d += 97) {
        double r = lt_sla_reward(&s, d, NULL);
        assert_true(r >= 0.1 && r <= prev);
        prev = r;
    }
    lt_assert_near(lt_sla_slope(&s, 599, NULL), 0, 0);
    lt_assert_near(lt_sla_slope(&s, 600, NULL), -log(2) / 3600 * 0.9, EPS);
    lt_assert_near(lt_sla_slope(&s, 4200, NULL), -log(2) / 3600 * 0.45, EPS);
    /* rmin 0: still never negative */
    s = cheap(3, 0, 0, 0.01);
    for (double d = 0; d < 1e5; d += 13)
        assert_true(lt_sla_reward(&s, d, NULL) >= 0);
}

/* ---- Example 1 (B6) ---- */

/* Trace second 0 = Sunday 19:00 Eastern; the week origin (Sunday 00:00) is second -68400. */
#define SUN0       (-68400.0)
#define DAY        86400.0
#define HOUR       3600.0
#define AT(day, h) (SUN0 + (day)*DAY + (h)*HOUR)

static void split(double t0, double t1, double peak, double off)
{
    double p, o;

    lt_sla_peak_split(t0, t1, &p, &o);
    lt_assert_near(p, peak, 1e-6);
    lt_assert_near(o, off, 1e-6);
}

static void test_peak_split_by_hand(void **state)
{
    (void)state;
    /* Sunday 19:00 to Monday 19:00: Monday 09:00-19:00 */
    split(0, DAY, 10 * HOUR, 14 * HOUR);
    /* Monday 20:00 to Tuesday 10:00: an hour each side of the night */
    split(AT(1, 20), AT(2, 10), 2 * HOUR, 12 * HOUR);
    /* Friday 20:00 to Saturday 10:00: Friday's last hour only */
    split(AT(5, 20), AT(6, 10), HOUR, 13 * HOUR);
    /* the weekend, Saturday 00:00 to Monday 09:00: none */
    split(AT(6, 0), AT(8, 9), 0, 57 * HOUR);
    /* Monday 08:30 to 09:30 */
    split(AT(1, 8.5), AT(1, 9.5), 0.5 * HOUR, 0.5 * HOUR);
    /* any whole week: 5 x 12 h; two weeks and a day later, the same */
    split(12345, 12345 + 7 * DAY, 60 * HOUR, 108 * HOUR);
    split(AT(15, 0), AT(16, 0), 12 * HOUR, 12 * HOUR);
    /* before trace second 0 the cycle goes on: Friday a week earlier, 08:00-22:00 */
    split(AT(-2, 8), AT(-2, 22), 12 * HOUR, 2 * HOUR);
    /* an empty or reversed run */
    split(50, 50, 0, 0);
    split(60, 50, 0, 0);
}

static void test_example1_by_hand(void **state)
{
    struct lt_sla s = parse_ok("example1:peak=2,offpeak=0.5,target=1h");
    /* 4 cores from Monday 20:00 for 2 h: 1 h peak, 1 h off-peak */
    struct lt_sla_run run = {AT(1, 20), 2 * HOUR, 4};

    (void)state;
    lt_assert_near(s.target_s, 3600, 0);
    lt_assert_near(lt_sla_delay_quality(3600, 1800), 2, 0);
    lt_assert_near(lt_sla_delay_quality(3600, 0), 3600 / LT_SLA_EPS_S, 1e-3);
    assert_true(lt_sla_delay_quality(3600, 3600.5) < 1);
    lt_assert_near(lt_sla_reward(&s, 0, &run), 4 * (2 * 1 + 0.5 * 1), EPS);
    lt_assert_near(lt_sla_reward(&s, 3600, &run), 10, EPS); /* q = 1: met */
    lt_assert_near(lt_sla_reward(&s, 3600.001, &run), 0, 0);
    lt_assert_near(lt_sla_example1(&s, 100, 3, 5), 2 * 3 + 0.5 * 5, EPS);
    lt_assert_near(lt_sla_example1(&s, 3601, 3, 5), 0, 0);
    /* the slope: the run's end is off-peak and its start peak: moving later loses peak time */
    lt_assert_near(lt_sla_slope(&s, 0, &run), 4 * (2 - 0.5) * (0.0 - 1.0) / 3600, EPS);
    assert_true(isinf(lt_sla_slope(&s, 3600, &run)));
    lt_assert_near(lt_sla_slope(&s, 4000, &run), 0, 0);
    /* a 300 s look-ahead: 300 s more off-peak instead of peak */
    lt_assert_near(lt_sla_loss(&s, 0, 300, &run), 4 * (2 - 0.5) * 300.0 / 3600 / 300, EPS);
}

/* ---- the SLA text ---- */

static void test_sla_parse_defaults_and_units(void **state)
{
    struct lt_sla s = parse_ok("by-deadline");
    struct lt_sla_spec sp;

    (void)state;
    lt_assert_near(s.r_max, 1, 0);
    lt_assert_near(s.r_pen, -1, 0);
    lt_assert_near(s.d1_s, 3600, 0);
    lt_assert_near(s.d2_s, 7200, 0);
    s = parse_ok("cheap-and-simple");
    lt_assert_near(s.r_max, 1, 0);
    lt_assert_near(s.r_min, 0.1, 0);
    lt_assert_near(s.d0_s, 0, 0);
    lt_assert_near(s.k_per_s, log(2) / 3600, 1e-18);
    s = parse_ok("by-deadline:d2=2d,pen=-3,d1=5m");
    lt_assert_near(s.d1_s, 300, 0);
    lt_assert_near(s.d2_s, 172800, 0);
    lt_assert_near(s.r_pen, -3, 0);
    s = parse_ok("cheap-and-simple:k=0.000192,d0=90s,rmin=0,rmax=2");
    lt_assert_near(s.d0_s, 90, 0);
    lt_assert_near(s.k_per_s, 0.000192, 0);
    s = parse_ok("by-deadline:d1=1h,d2=1h");
    lt_assert_near(s.d2_s, 3600, 0);
    assert_int_equal(lt_sla_parse("by-deadline:d1=1.5h", &sp, NULL), 0);
    lt_assert_near(sp.sla.d1_s, 5400, 0);
    assert_string_equal(sp.text, "by-deadline:d1=1.5h");
}

/* "2x": twice the job's estimated run time, resolved per job. */
static void test_sla_relative_times(void **state)
{
    struct lt_sla_spec sp;
    struct lt_sla s;
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(lt_sla_parse("by-deadline:d1=2x,d2=4x", &sp, &err), 0);
    assert_int_equal(sp.relative, LT_SLA_T_D1 | LT_SLA_T_D2);
    assert_int_equal(lt_sla_resolve(&sp, 100, &s, &err), 0);
    lt_assert_near(s.d1_s, 200, 0);
    lt_assert_near(s.d2_s, 400, 0);
    assert_int_equal(lt_sla_resolve(&sp, 1800, &s, &err), 0);
    lt_assert_near(s.d1_s, 3600, 0);
    lt_assert_near(s.d2_s, 7200, 0);
    assert_int_equal(lt_sla_parse("example1:target=0.5x,peak=1,offpeak=1", &sp, &err), 0);
    assert_int_equal(lt_sla_resolve(&sp, 60, &s, &err), 0);
    lt_assert_near(s.target_s, 30, 0);
    /* mixed: d1 = 2x, d2 = 1 h holds for short jobs only */
    assert_int_equal(lt_sla_parse("by-deadline:d1=2x,d2=1h", &sp, &err), 0);
    assert_int_equal(lt_sla_resolve(&sp, 1000, &s, &err), 0);
    assert_int_equal(lt_sla_resolve(&sp, 2000, &s, &err), LT_EINVAL);
    assert_string_equal(err.text, "SLA 'by-deadline:d1=2x,d2=1h' for a job of estimated run time "
                                  "2000 s: d1 (4000 s) must be <= d2 (3600 s): the reward drops "
                                  "from d1 to d2");
    lt_err_init(&err, NULL);
    assert_int_equal(lt_sla_resolve(&sp, 0, &s, &err), LT_EINVAL);
}

static void test_sla_parse_refusals(void **state)
{
    static const struct {
        const char *text;
        int code;
        const char *msg;
    } bad[] = {
        {"deadline:d1=1", LT_ENOTFOUND,
         "unknown SLA kind 'deadline' in 'deadline:d1=1' (known: by-deadline, cheap-and-simple, "
         "example1)"},
        {"by-deadline:d3=1", LT_EINVAL,
         "SLA 'by-deadline:d3=1': unknown key 'd3' for by-deadline (known: rmax, pen, d1, d2)"},
        {"cheap-and-simple:pen=-1", LT_EINVAL,
         "SLA 'cheap-and-simple:pen=-1': unknown key 'pen' for cheap-and-simple (known: rmax, "
         "rmin, d0, k)"},
        {"by-deadline:d1=60,d1=90", LT_EINVAL,
         "SLA 'by-deadline:d1=60,d1=90': key 'd1' given twice"},
        {"by-deadline:rmax=inf", LT_EINVAL,
         "SLA 'by-deadline:rmax=inf': key 'rmax' needs a finite number, not 'inf'"},
        {"by-deadline:pen=nan", LT_EINVAL,
         "SLA 'by-deadline:pen=nan': key 'pen' needs a finite number, not 'nan'"},
        {"by-deadline:rmax=2x", LT_EINVAL,
         "SLA 'by-deadline:rmax=2x': key 'rmax' needs a finite number, not '2x'"},
        {"by-deadline:d1=5y", LT_EINVAL,
         "SLA 'by-deadline:d1=5y': key 'd1' needs a finite time (seconds, 90s, 5m, 1h, 2d, or 2x "
         "the job's estimated run time), not '5y'"},
        {"by-deadline:d1=", LT_EINVAL,
         "SLA 'by-deadline:d1=': key 'd1' needs a finite time (seconds, 90s, 5m, 1h, 2d, or 2x "
         "the job's estimated run time), not ''"},
        {"by-deadline:d1=2h,d2=1h", LT_EINVAL,
         "SLA 'by-deadline:d1=2h,d2=1h': d1 (7200 s) must be <= d2 (3600 s): the reward drops "
         "from d1 to d2"},
        {"by-deadline:d1=3x,d2=2x", LT_EINVAL,
         "SLA 'by-deadline:d1=3x,d2=2x': d1 (3x) must be <= d2 (2x): the reward drops from d1 to "
         "d2"},
        {"by-deadline:pen=1", LT_EINVAL,
         "SLA 'by-deadline:pen=1': pen must be <= 0 (the penalty plateau, a negative reward), not "
         "1"},
        {"by-deadline:rmax=0", LT_EINVAL, "SLA 'by-deadline:rmax=0': rmax must be > 0, not 0"},
        {"by-deadline:d1=-5", LT_EINVAL, "SLA 'by-deadline:d1=-5': d1 must be >= 0, not -5"},
        {"cheap-and-simple:rmin=2", LT_EINVAL,
         "SLA 'cheap-and-simple:rmin=2': rmin must be in 0..rmax (1): the reward is never "
         "negative, not 2"},
        {"cheap-and-simple:rmin=-0.1", LT_EINVAL,
         "SLA 'cheap-and-simple:rmin=-0.1': rmin must be in 0..rmax (1): the reward is never "
         "negative, not -0.1"},
        {"cheap-and-simple:k=0", LT_EINVAL,
         "SLA 'cheap-and-simple:k=0': k must be > 0 (1/s), not 0"},
        {"cheap-and-simple:d0=-1m", LT_EINVAL,
         "SLA 'cheap-and-simple:d0=-1m': d0 must be >= 0, not -60"},
        {"example1:target=1h,peak=1", LT_EINVAL,
         "SLA 'example1:target=1h,peak=1': key 'offpeak' is required (example1 has no default for "
         "it)"},
        {"example1:peak=1,offpeak=1", LT_EINVAL,
         "SLA 'example1:peak=1,offpeak=1': key 'target' is required (example1 has no default for "
         "it)"},
        {"example1:target=0,peak=1,offpeak=1", LT_EINVAL,
         "SLA 'example1:target=0,peak=1,offpeak=1': target must be > 0 (at least 1 us), not 0"},
        {"example1:target=1h,peak=-1,offpeak=1", LT_EINVAL,
         "SLA 'example1:target=1h,peak=-1,offpeak=1': peak must be >= 0, not -1"},
        {"by-deadline:d1=1,,d2=2", LT_EINVAL, "SLA 'by-deadline:d1=1,,d2=2': an empty item"},
        {"by-deadline:", LT_EINVAL, "SLA 'by-deadline:': an empty item"},
        {"by-deadline:d1", LT_EINVAL, "SLA 'by-deadline:d1': item 'd1' is not KEY=VALUE"},
    };
    struct lt_sla_spec sp;

    (void)state;
    memset(&sp, 0x5a, sizeof(sp));
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct lt_err err;

        lt_err_init(&err, NULL);
        if (lt_sla_parse(bad[k].text, &sp, &err) != bad[k].code)
            fail_msg("'%s' gave %d: %s", bad[k].text, err.code, err.text);
        assert_string_equal(err.text, bad[k].msg);
        assert_int_equal(sp.relative, 0x5a5a5a5a); /* untouched */
    }
}

/* ---- the orders ---- */

static struct lt_qjob sla_job(int64_t id, double a, const struct lt_sla *s)
{
    struct lt_qjob j = job(id, a, 1, 100);

    j.sla = s;
    return j;
}

static void test_sla_order_names(void **state)
{
    struct lt_qorder o;
    struct lt_err err;
    char name[64];

    (void)state;
    assert_int_equal(lt_qorder_find("sla-reward", &o, NULL), 0);
    assert_int_equal(o.kind, LT_QORDER_SLA_REWARD);
    assert_true(lt_qorder_uses_sla(&o) && lt_qorder_time_varying(&o));
    lt_assert_near(lt_qorder_key(&o, 3, 10, 10), 0, 0);
    assert_int_equal(lt_qorder_find("sla-slope", &o, NULL), 0);
    lt_assert_near(o.h_s, 300, 0);
    lt_qorder_name(&o, name, sizeof(name));
    assert_string_equal(name, "sla-slope");
    assert_int_equal(lt_qorder_find("sla-slope:0", &o, NULL), 0);
    lt_assert_near(o.h_s, 0, 0);
    lt_qorder_name(&o, name, sizeof(name));
    assert_string_equal(name, "sla-slope:0");
    assert_int_equal(lt_qorder_find("sla-slope:60", &o, NULL), 0);
    lt_qorder_name(&o, name, sizeof(name));
    assert_string_equal(name, "sla-slope:60");
    assert_int_equal(lt_qorder_find("sla-deadline", &o, NULL), 0);
    lt_qorder_name(&o, name, sizeof(name));
    assert_string_equal(name, "sla-deadline");
    lt_err_init(&err, NULL);
    assert_int_equal(lt_qorder_find("sla-slope:-1", &o, &err), LT_EINVAL);
    assert_string_equal(err.text, "queue order 'sla-slope:-1' needs a look-ahead H of finite "
                                  "seconds >= 0 'sla-slope:H' (0: the right derivative)");
    assert_int_equal(lt_qorder_find("sla-slopes", &o, NULL), LT_ENOTFOUND);
    assert_int_equal(lt_qorder_find("fcfs", &o, NULL), 0);
    assert_false(lt_qorder_uses_sla(&o));
}

/* B1 [B L474]: P pending 100 s at reward 1.2 (by-deadline), Q pending 50 s at 1.5
 * (cheap-and-simple): Q first, though P arrived first. */
static void test_b1_greatest_reward_first(void **state)
{
    struct lt_sla p = by_deadline(1.2, -1, 3600, 7200), q = cheap(1.5, 0.1, 3600, 1e-3);
    struct lt_qjob jp = sla_job(0, 0, &p), jq = sla_job(1, 50, &q);
    struct lt_qorder o;
    struct lt_qkey kp, kq;

    (void)state;
    assert_int_equal(lt_qorder_find("sla-reward", &o, NULL), 0);
    kp = lt_qorder_key_job(&o, &jp, 100);
    kq = lt_qorder_key_job(&o, &jq, 100);
    lt_assert_near(kp.key, 1.2, 0);
    lt_assert_near(kq.key, 1.5, 0);
    assert_true(lt_qorder_before(&o, &jq, 1, &jp, 0, 100));
    assert_false(lt_qorder_before(&o, &jp, 0, &jq, 1, 100));
    assert_int_equal(lt_qorder_find("fcfs", &o, NULL), 0);
    assert_true(lt_qorder_before(&o, &jp, 0, &jq, 1, 100));
}

/* B2 [B L482]: of two by-deadline jobs in their positive part, the one nearer its knee first;
 * a job on its slope but still positive is nearest (distance 0); past the zero crossing, and
 * cheap-and-simple jobs, come after in reward order. */
static void test_b2_soonest_deadline_first(void **state)
{
    struct lt_sla n = by_deadline(1, -1, 3600, 7200), m = by_deadline(1, -1, 1000, 2000);
    struct lt_sla late = by_deadline(5, -1, 10, 20), cs = cheap(0.5, 0.1, 0, 1e-3);
    struct lt_sla cs2 = cheap(0.9, 0.1, 5000, 1e-3);
    /* now 1000: N waited 1000 (2600 to go), M 900 (100 to go) */
    struct lt_qjob jn = sla_job(0, 0, &n), jm = sla_job(1, 100, &m);
    struct lt_qjob jl = sla_job(2, 0, &late), jc = sla_job(3, 0, &cs), jc2 = sla_job(4, 0, &cs2);
    struct lt_qorder o;

    (void)state;
    assert_int_equal(lt_qorder_find("sla-deadline", &o, NULL), 0);
    assert_true(lt_qorder_before(&o, &jm, 1, &jn, 0, 1000));
    assert_false(lt_qorder_before(&o, &jn, 0, &jm, 1, 1000));
    /* at 1500 M is on its slope, still positive: distance 0, still first */
    assert_true(lt_qorder_before(&o, &jm, 1, &jn, 0, 1500));
    /* at 1600 M has crossed 0: N (covered) first */
    assert_true(lt_qorder_before(&o, &jn, 0, &jm, 1, 1600));
    /* uncovered jobs after covered ones, then by current reward: cs2 (0.9) before cs (0.1 + 0.4 /
     * e), the late by-deadline job (-1) last */
    assert_true(lt_qorder_before(&o, &jn, 0, &jc2, 4, 1000));
    assert_true(lt_qorder_before(&o, &jc2, 4, &jc, 3, 1000));
    assert_true(lt_qorder_before(&o, &jc, 3, &jl, 2, 1000));
    /* sla-reward breaks the tie of N and M (reward 1 each) by the same distance */
    assert_int_equal(lt_qorder_find("sla-reward", &o, NULL), 0);
    assert_true(lt_qorder_before(&o, &jm, 1, &jn, 0, 1000));
}

/* B3 [B L490]: R and S both at their knee, S steeper after it: S first under sla-slope (look-
 * ahead or derivative), though R arrived first. */
static void test_b3_steepest_slope_first(void **state)
{
    struct lt_sla r = by_deadline(1, -1, 1000, 5000), s = by_deadline(1, -1, 500, 1500);
    struct lt_qjob jr = sla_job(0, 0, &r), js = sla_job(1, 500, &s);
    struct lt_qorder o;
    struct lt_qkey kr, ks;

    (void)state;
    assert_int_equal(lt_qorder_find("sla-slope:0", &o, NULL), 0);
    kr = lt_qorder_key_job(&o, &jr, 1000);
    ks = lt_qorder_key_job(&o, &js, 1000);
    lt_assert_near(kr.key, 2.0 / 4000, EPS);
    lt_assert_near(ks.key, 2.0 / 1000, EPS);
    assert_true(lt_qorder_before(&o, &js, 1, &jr, 0, 1000));
    assert_int_equal(lt_qorder_find("sla-slope", &o, NULL), 0);
    assert_true(lt_qorder_before(&o, &js, 1, &jr, 0, 1000));
    /* 200 s before both knees the derivative sees nothing (tie: distances 200 and 200, then
     * arrival), the 300 s look-ahead sees S's steeper drop */
    assert_int_equal(lt_qorder_find("sla-slope:0", &o, NULL), 0);
    assert_true(lt_qorder_before(&o, &jr, 0, &js, 1, 800));
    assert_int_equal(lt_qorder_find("sla-slope", &o, NULL), 0);
    assert_true(lt_qorder_before(&o, &js, 1, &jr, 0, 800));
}

/* A job without an SLA goes after every job with one, whatever the arrival; two jobs without
 * one keep the tie rule (arrival). */
static void test_sla_orders_put_jobs_without_sla_last(void **state)
{
    struct lt_sla bad = by_deadline(1, -5, 0, 1);
    struct lt_qjob none0 = job(0, 0, 1, 100), none1 = job(1, 5, 1, 100);
    struct lt_qjob late = sla_job(2, 10, &bad);
    static const char *const names[] = {"sla-reward", "sla-deadline", "sla-slope", "sla-slope:0"};
    struct lt_qorder o;

    (void)state;
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(lt_qorder_find(names[k], &o, NULL), 0);
        /* late's reward is -5 (negative), still before the jobs without an SLA */
        assert_true(lt_qorder_before(&o, &late, 2, &none0, 0, 1000));
        assert_true(lt_qorder_before(&o, &none0, 0, &none1, 1, 1000));
        assert_false(lt_qorder_before(&o, &none1, 1, &none0, 0, 1000));
    }
}

/* B4 [B L127-L131]: two 2-hour jobs, one at a time. A (arrives first: the priority/fcfs order
 * runs it first) may start up to 2 h late (done within 4 h); B is worth something only if done
 * within 2 h, so must start at once. fcfs: A 1, B -1; sla-deadline: both 1. */
static void test_b4_deadline_order_meets_both(void **state)
{
    struct lt_sla a = by_deadline(1, -1, 7200, 10800), b = by_deadline(1, -1, 0, 60);
    struct lt_qjob jobs[2] = {job(0, 0, 1, 7200), job(1, 0, 1, 7200)};
    static const char *const orders[] = {"fcfs", "sla-deadline", "sla-reward", "sla-slope"};
    /* expected rewards of A and B under each order */
    static const double want[4][2] = {{1, -1}, {1, 1}, {1, 1}, {1, 1}};
    struct lt_qsim_params p;
    struct lt_qjob_out out[2];
    struct lt_err err;

    (void)state;
    jobs[0].sla = &a;
    jobs[1].sla = &b;
    for (size_t k = 0; k < 4; k++) {
        params(&p, 1, orders[k], "rigid", k == 3 ? "easy" : "none");
        lt_err_init(&err, NULL);
        assert_int_equal(lt_qsim_run(&p, jobs, 2, out, NULL, &err), 0);
        for (size_t j = 0; j < 2; j++) {
            double d = out[j].start_s - jobs[j].arrival_s;
            lt_assert_near(lt_sla_reward(jobs[j].sla, d, NULL), want[k][j], 0);
        }
    }
    /* fractional dispatch agrees */
    params(&p, 1, "sla-deadline", "fractional", "none");
    assert_int_equal(lt_qsim_run(&p, jobs, 2, out, NULL, NULL), 0);
    lt_assert_near(out[1].start_s, 0, 0);
    lt_assert_near(out[0].start_s, 7200, 0);
}

/* The simulator refuses a job whose SLA breaks its ranges, naming the job. */
static void test_qsim_refuses_a_bad_sla(void **state)
{
    struct lt_sla s = by_deadline(1, -1, 10, 20);
    struct lt_qjob jobs[2] = {job(0, 0, 1, 5), job(7, 0, 1, 5)};
    struct lt_qsim_params p;
    struct lt_err err;

    (void)state;
    s.d1_s = 30; /* > d2 */
    jobs[1].sla = &s;
    params(&p, 1, "sla-reward", "rigid", "none");
    lt_err_init(&err, NULL);
    assert_null(lt_qsim_new(&p, jobs, 2, &err));
    assert_int_equal(err.code, LT_EINVAL);
    assert_string_equal(err.text, "job 1 (id 7): SLA 'by-deadline': d1 (30 s) must be <= d2 (20 "
                                  "s): the reward drops from d1 to d2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_deadline_by_hand),
        cmocka_unit_test(test_by_deadline_step),
        cmocka_unit_test(test_cheap_and_simple_by_hand),
        cmocka_unit_test(test_peak_split_by_hand),
        cmocka_unit_test(test_example1_by_hand),
        cmocka_unit_test(test_sla_parse_defaults_and_units),
        cmocka_unit_test(test_sla_relative_times),
        cmocka_unit_test(test_sla_parse_refusals),
        cmocka_unit_test(test_sla_order_names),
        cmocka_unit_test(test_b1_greatest_reward_first),
        cmocka_unit_test(test_b2_soonest_deadline_first),
        cmocka_unit_test(test_b3_steepest_slope_first),
        cmocka_unit_test(test_sla_orders_put_jobs_without_sla_last),
        cmocka_unit_test(test_b4_deadline_order_meets_both),
        cmocka_unit_test(test_qsim_refuses_a_bad_sla),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
