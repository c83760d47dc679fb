/* qorder.c -- the queue-order registry: fcfs, sjf, ljf, largest, smallest, composite and the
 * SLA-aware sla-reward, sla-deadline, sla-slope (lt_queue.h).
 *
 * Source: Simon & McGalliard, the composite priority P = (n/avg n)^alpha (wait)^beta
 *   (r/avg r)^gamma [S L213], sorted descending [S L252]; the fixed orders as its special cases
 *   [S L144-L146, L343-L349] (../shared/spec/queue-sla-network.md 1.3, 1.4).
 * Readings (spec [REC]): log space; the averages dropped (they scale every priority of one
 *   instant alike); the clamps w_eff = max(w, 1 s), r_eff = max(r, 1 s), n_eff = max(n, 1);
 *   ties to the earlier arrival, then the id. Each term with a zero exponent is left out, so a
 *   zero exponent times an infinite log (never reached with the clamps) cannot make a NaN.
 * SLA orders: Betser [B L474, L482, L490] as the spec reads them (2.4): the greedy keys of
 *   lt_sla.h at d = now - arrival, ties by the deadline distance, then arrival and id [REC];
 *   jobs without an SLA after those with one (the spec's within-pool scope [REC]).
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_queue.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_sla.h"

struct entry {
    const char *name;
    enum lt_qorder_kind kind;
    double alpha, beta, gamma;
};

/* The spec's table (1.3), the composite family (parsed by composite()) and the SLA orders (2.4),
 * each at the index of its kind. */
static const struct entry orders[] = {
    {"fcfs", LT_QORDER_FCFS, 0, 1, 0},
    {"sjf", LT_QORDER_SJF, 0, 0, -1},
    {"ljf", LT_QORDER_LJF, 0, 0, 1},
    {"largest", LT_QORDER_LARGEST, 1, 0, 0},
    {"smallest", LT_QORDER_SMALLEST, -1, 0, 0},
    {"composite:A,B,G", LT_QORDER_COMPOSITE, 0, 0, 0},
    {"sla-reward", LT_QORDER_SLA_REWARD, 0, 0, 0},
    {"sla-deadline", LT_QORDER_SLA_DEADLINE, 0, 0, 0},
    {"sla-slope[:H]", LT_QORDER_SLA_SLOPE, 0, 0, 0},
};

#define N_ORDERS (sizeof(orders) / sizeof(orders[0]))

/* The longest composite text read: three numbers of up to 32 characters and separators. */
#define MAX_NUMBER 32

size_t lt_qorder_count(void)
{
    return N_ORDERS;
}

const char *lt_qorder_name_at(size_t i)
{
    return i < N_ORDERS ? orders[i].name : NULL;
}

static void fill(struct lt_qorder *o, enum lt_qorder_kind kind, double a, double b, double g)
{
    o->kind = kind;
    o->alpha = a;
    o->beta = b;
    o->gamma = g;
    o->w_min_s = LT_QORDER_W_MIN_S;
    o->r_min_s = LT_QORDER_R_MIN_S;
    o->n_min = LT_QORDER_N_MIN;
    o->h_s = LT_QORDER_SLA_H_S;
}

int lt_qorder_composite(struct lt_qorder *out, double alpha, double beta, double gamma,
                        struct lt_err *err)
{
    if (!isfinite(alpha) || !isfinite(beta) || !isfinite(gamma))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "composite order needs finite exponents, not (%g, %g, %g)", alpha, beta,
                          gamma);
    fill(out, LT_QORDER_COMPOSITE, alpha, beta, gamma);
    return 0;
}

/* Reads one number of text (the whole of s[0..len-1]) into *v; false if it is not one. */
static bool number(const char *s, size_t len, double *v)
{
    char buf[MAX_NUMBER + 1];
    char *end;

    if (len == 0 || len > MAX_NUMBER)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    *v = strtod(buf, &end);
    return *end == '\0' && isfinite(*v) && !isspace((unsigned char)buf[0]);
}

/* Parses "A,B,G" (the text after "composite:") into *out. */
static int composite(const char *name, const char *text, struct lt_qorder *out, struct lt_err *err)
{
    double v[3];
    const char *p = text;

    for (int k = 0; k < 3; k++) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);

        if ((k < 2) != (comma != NULL) || !number(p, len, &v[k]))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "composite order '%s' needs three finite numbers "
                              "'composite:ALPHA,BETA,GAMMA'",
                              name);
        p += len + 1;
    }
    return lt_qorder_composite(out, v[0], v[1], v[2], err);
}

/* "sla-slope:H" (text = "H"; NULL: "sla-slope", the default) into *out. */
static int sla_slope(const char *name, const char *text, struct lt_qorder *out, struct lt_err *err)
{
    double h = LT_QORDER_SLA_H_S;

    if (text != NULL && (!number(text, strlen(text), &h) || h < 0))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "queue order '%s' needs a look-ahead H of finite seconds >= 0 "
                          "'sla-slope:H' (0: the right derivative)",
                          name);
    fill(out, LT_QORDER_SLA_SLOPE, 0, 0, 0);
    out->h_s = h;
    return 0;
}

int lt_qorder_find(const char *name, struct lt_qorder *out, struct lt_err *err)
{
    static const char prefix[] = "composite:";
    static const char slope[] = "sla-slope";
    char known[256];
    size_t len = 0;

    if (name != NULL && strncmp(name, prefix, sizeof(prefix) - 1) == 0)
        return composite(name, name + sizeof(prefix) - 1, out, err);
    if (name != NULL && strncmp(name, slope, sizeof(slope) - 1) == 0 &&
        (name[sizeof(slope) - 1] == '\0' || name[sizeof(slope) - 1] == ':'))
        return sla_slope(name, name[sizeof(slope) - 1] ? name + sizeof(slope) : NULL, out, err);
    for (size_t k = 0; k < N_ORDERS; k++) {
        const struct entry *e = &orders[k];

        if (name != NULL && e->kind != LT_QORDER_COMPOSITE && e->kind != LT_QORDER_SLA_SLOPE &&
            strcmp(name, e->name) == 0) {
            fill(out, e->kind, e->alpha, e->beta, e->gamma);
            return 0;
        }
        len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", k ? ", " : "", e->name);
    }
    return lt_err_set(err, LT_ENOTFOUND, 0, 0, "unknown queue order '%s' (known: %s)",
                      name ? name : "(null)", known);
}

/* Prints v with %g when that reads back exactly, else with %.17g. */
static int print_number(char *buf, size_t len, double v)
{
    char tmp[40];

    snprintf(tmp, sizeof(tmp), "%g", v);
    if (!(strtod(tmp, NULL) < v) && !(strtod(tmp, NULL) > v))
        return snprintf(buf, len, "%s", tmp);
    return snprintf(buf, len, "%.17g", v);
}

void lt_qorder_name(const struct lt_qorder *o, char *buf, size_t len)
{
    char a[40], b[40], g[40];

    if (len == 0)
        return;
    if (o->kind == LT_QORDER_SLA_SLOPE) {
        print_number(a, sizeof(a), o->h_s);
        if (o->h_s < LT_QORDER_SLA_H_S || o->h_s > LT_QORDER_SLA_H_S)
            snprintf(buf, len, "sla-slope:%s", a);
        else
            snprintf(buf, len, "sla-slope");
        return;
    }
    if (o->kind != LT_QORDER_COMPOSITE) {
        snprintf(buf, len, "%s", orders[o->kind].name);
        return;
    }
    print_number(a, sizeof(a), o->alpha);
    print_number(b, sizeof(b), o->beta);
    print_number(g, sizeof(g), o->gamma);
    snprintf(buf, len, "composite:%s,%s,%s", a, b, g);
}

bool lt_qorder_uses_sla(const struct lt_qorder *o)
{
    return o->kind == LT_QORDER_SLA_REWARD || o->kind == LT_QORDER_SLA_DEADLINE ||
           o->kind == LT_QORDER_SLA_SLOPE;
}

bool lt_qorder_time_varying(const struct lt_qorder *o)
{
    return (o->kind == LT_QORDER_COMPOSITE && (o->beta < 0 || o->beta > 0)) ||
           lt_qorder_uses_sla(o);
}

double lt_qorder_key(const struct lt_qorder *o, double n, double wait_s, double r_s)
{
    double key = 0;

    if (lt_qorder_uses_sla(o))
        return 0;
    if (o->alpha < 0 || o->alpha > 0)
        key += o->alpha * log(fmax(n, o->n_min));
    if (o->beta < 0 || o->beta > 0)
        key += o->beta * log(fmax(wait_s, o->w_min_s));
    if (o->gamma < 0 || o->gamma > 0)
        key += o->gamma * log(fmax(r_s, o->r_min_s));
    return key;
}

/* The tie rule: earlier arrival, lower id, lower index. */
static bool tie_before(const struct lt_qjob *x, size_t ix, const struct lt_qjob *y, size_t iy)
{
    if (x->arrival_s < y->arrival_s)
        return true;
    if (y->arrival_s < x->arrival_s)
        return false;
    if (x->id != y->id)
        return x->id < y->id;
    return ix < iy;
}

/* The SLA orders' key of job x (with an SLA) at now_s. */
static struct lt_qkey sla_key(const struct lt_qorder *o, const struct lt_qjob *x, double now_s)
{
    const struct lt_sla *s = x->sla;
    struct lt_sla_run run = {now_s, x->estimate_s, (double)x->tasks};
    double d = fmax(now_s - x->arrival_s, 0);
    double dist = lt_sla_deadline_distance(s, d);
    struct lt_qkey k = {1, 0, -dist};

    switch (o->kind) {
    case LT_QORDER_SLA_DEADLINE:
        if (isfinite(dist)) {
            k.cls = 2;
            k.key = -dist;
            break;
        }
        k.key = lt_sla_reward(s, d, &run);
        break;
    case LT_QORDER_SLA_SLOPE:
        k.key = lt_sla_loss(s, d, o->h_s, &run);
        break;
    default:
        k.key = lt_sla_reward(s, d, &run);
    }
    return k;
}

struct lt_qkey lt_qorder_key_job(const struct lt_qorder *o, const struct lt_qjob *x, double now_s)
{
    struct lt_qkey k = {0, 0, 0};

    if (lt_qorder_uses_sla(o))
        return x->sla != NULL ? sla_key(o, x, now_s) : k;
    if (o->kind != LT_QORDER_FCFS)
        k.key = lt_qorder_key(o, x->tasks, now_s - x->arrival_s, x->estimate_s);
    return k;
}

bool lt_qorder_before(const struct lt_qorder *o, const struct lt_qjob *x, size_t ix,
                      const struct lt_qjob *y, size_t iy, double now_s)
{
    struct lt_qkey kx = lt_qorder_key_job(o, x, now_s), ky = lt_qorder_key_job(o, y, now_s);
    int c = lt_qkey_cmp(&kx, &ky);

    if (c != 0)
        return c < 0;
    return tie_before(x, ix, y, iy);
}
