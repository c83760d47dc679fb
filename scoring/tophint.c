/* tophint.c -- top lists and the hints built from them (bestfit4, bestfit5, epvm2, brfs-dot).
 *
 * A job submits many equal tasks back to back, and each lands on the machine the previous
 * choose returned, so that machine changes and the next choose for the same request searches
 * again. A search that keeps its k best machines (a top list: struct lt__top, pruning against
 * the k-th instead of the best) leaves them in the hint with the k-th as a threshold T. The
 * claim: for these policies a machine's score depends only on its capacity, its free vector,
 * its online flag, the request and the cluster's reference capacity, so a machine that has not
 * changed since the hint still scores what it scored then; every such machine outside the list
 * is after T (lower score, then lower index, is better) or does not fit. The next choose for
 * the bitwise same request therefore scores only the list and the machines changed since
 * (the index notes them in a ring, struct lt__changes), with the function rank() uses, and:
 *   - if the best of those is not after T, it is the answer: no machine outside beats it;
 *     the hint keeps those not after T (at most k: the k-th becomes T if there are more);
 *   - if none fits and T is LT_SCORE_INFEASIBLE (the search found fewer than k machines that
 *     fit), nothing fits;
 *   - otherwise (every listed machine changed for the worse), the index searches again.
 * A hint is ignored when it was left by another index (or a rebuilt one: serial), another
 * request, or more than LT__TOP_RING machine changes ago. No draws are made: these policies
 * draw nothing. Machines with equal free vectors (a cell whose box is a point) are offered
 * one by one, in index order, when a top list is wanted.
 * Tests: tests/unit/scoring/test_property.c (hinted choose == choose == rank over long runs
 *   of repeated requests, placements, removals and machine events).
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <string.h>

/* Inserts (s, i) into the n sorted entries of (ss, is), of room cap; returns the new count.
 * An entry for machine i already there is kept as is. */
static uint32_t top_put(double *ss, size_t *is, uint32_t n, uint32_t cap, double s, size_t i)
{
    uint32_t j;

    for (j = 0; j < n; j++) {
        if (is[j] == i)
            return n;
    }
    j = n < cap ? n : cap - 1;
    if (n == cap && !lt__better(s, i, ss[j], is[j]))
        return n;
    for (; j > 0 && lt__better(s, i, ss[j - 1], is[j - 1]); j--) {
        ss[j] = ss[j - 1];
        is[j] = is[j - 1];
    }
    ss[j] = s;
    is[j] = i;
    return n < cap ? n + 1 : n;
}

void lt__top_insert(struct lt__best *b, double s, size_t i)
{
    struct lt__top *t = b->top;

    t->n = top_put(t->s, t->i, t->n, t->k, s, i);
    if (t->n == t->k) {
        b->s = t->s[t->k - 1];
        b->i = t->i[t->k - 1];
    }
}

static bool hint_valid(const struct lt_choose_hint *hint, const struct lt_index *ix,
                       const struct lt__changes *ch, const struct lt_res *r)
{
    return hint != NULL && hint->ix == (const void *)ix && hint->serial == ix->serial &&
           ch->version - hint->version <= LT__TOP_RING &&
           memcmp(&hint->req, r, sizeof(*r)) == 0; /* bitwise: the same request exactly */
}

bool lt__top_hint_use(struct lt_choose_hint *hint, const struct lt_index *ix,
                      const struct lt__changes *ch, const struct lt_cluster *c,
                      const struct lt_res *r, lt__fit_score_fn *score, size_t *out)
{
    enum { CAP = LT__TOP_MAX + LT__TOP_RING };
    double ss[CAP];
    size_t is[CAP], cand[CAP];
    uint32_t n = 0, nc = 0, keep = 0;

    if (!hint_valid(hint, ix, ch, r))
        return false;
    for (uint32_t k = 0; k < hint->n_top; k++)
        cand[nc++] = hint->top[k];
    for (uint64_t v = hint->version; v < ch->version; v++)
        cand[nc++] = ch->ring[v % LT__TOP_RING];
    for (uint32_t k = 0; k < nc; k++) {
        const struct lt__machine *m;
        struct lt_res f;

        if (cand[k] >= c->n || !lt__fits(m = &c->m[cand[k]], r))
            continue;
        f = lt__free(m);
        n = top_put(ss, is, n, CAP, score(&m->cap, &f, r, &c->ref), cand[k]);
    }
    while (keep < n && !lt__better(hint->ts, hint->ti, ss[keep], is[keep]))
        keep++;
    if (keep == 0 && hint->ts < LT_SCORE_INFEASIBLE)
        return false; /* every listed machine fell behind the threshold: search */
    *out = keep > 0 ? is[0] : LT_NO_MACHINE;
    if (keep > LT__TOP_MAX) {
        keep = LT__TOP_MAX;
        hint->ts = ss[keep - 1];
        hint->ti = is[keep - 1];
    }
    for (uint32_t k = 0; k < keep; k++)
        hint->top[k] = (uint32_t)is[k];
    hint->n_top = keep;
    hint->version = ch->version;
    return true;
}

void lt__top_hint_keep(struct lt_choose_hint *hint, const struct lt_index *ix,
                       const struct lt__changes *ch, const struct lt_res *r,
                       const struct lt__best *b)
{
    const struct lt__top *t = b->top;

    if (hint == NULL || t == NULL)
        return;
    hint->ix = ix;
    hint->serial = ix->serial;
    hint->version = ch->version;
    hint->req = *r;
    for (uint32_t k = 0; k < t->n; k++)
        hint->top[k] = (uint32_t)t->i[k];
    hint->n_top = t->n;
    hint->ts = b->s; /* the k-th entry, or LT_SCORE_INFEASIBLE if fewer than k fit */
    hint->ti = b->i;
}
