/* sos_walk.c -- sos.c's walk: the machines in index order, for the lowest one that stays.
 *
 * A small request (sos.c: under one bucket width in cpu and mem) leaves a machine in its
 * sum-of-squares bucket exactly when the machine's offset inside its bucket is at least the
 * request's fractional width phi, in cpu and in mem at once. Staying changes the score by 0,
 * so the lowest-index machine that stays is a candidate answer that every bucket sos.c then
 * scores must beat. The walk finds it without looking at most machines:
 *   entry    a machine's offsets inside its bucket, in cpu and mem, quantised to 2^-QBITS of
 *            a bucket (qc, qm); sos.c decides which machines are walked (online and not odd)
 *            and computes the offsets; the walk knows nothing of buckets;
 *   block    WALK_BLOCK consecutive machines: a presence mask, the entries, and a summary
 *            mx[l] = 1 + the largest qc among entries with qm >= l << WALK_LSHIFT (0 if
 *            none), non-increasing in l: a block with mx[lq] < tc holds no stayer;
 *   super    WALK_SUPER consecutive blocks: smx[l] bounds the blocks' mx[l] from above
 *            (exactly their maximum while sdirty is 0), one contiguous row per level, so one
 *            load passes over WALK_SUPER blocks;
 *   query    the request's thresholds: an entry below lo (either dimension) surely drops a
 *            bucket, one at hi or above (both dimensions) surely stays; between, the caller's
 *            exact test (the stays callback, which computes what sos.c's bucket map computes)
 *            decides;
 *   hint     lt_choose_hint: the walk's last answer for a request, with the walk's count of
 *            machine changes then; the machines of the last HINT_RING changes are kept, so a
 *            later walk for the same request starts at the lowest of that answer and the
 *            machines changed since (a machine that did not change stays or not as before).
 * A summary only rises on a change, except when the member holding a maximum leaves: then
 * the block's summary is recomputed (O(WALK_BLOCK)) and its super-block's bound, now possibly
 * loose, is recomputed after WALK_DIRTY such falls. lt__sos_walk_check recomputes everything.
 * Cost: a walk reads one super-block bound per WALK_SUPER blocks it passes over, a summary
 * per block it cannot pass, and a vectorised compare of the entries of a block it enters.
 * Tests: tests/unit/scoring/test_sos_walk.c (checker, stayer against a plain scan);
 *   test_sos.c and test_property.c through sos10/sos20.
 *
 * SPDX-License-Identifier: MIT
 */
#include "score_int.h"

#include <math.h>
#include <string.h>

#include "lt_mem.h"

#define QBITS LT__WALK_QBITS
#define QMAX  LT__WALK_QMAX
_Static_assert(QBITS <= 15, "walk_stayer compares offsets as int16_t");
#define WALK_BLOCK  LT__WALK_BLOCK
#define WALK_LSHIFT LT__WALK_LSHIFT
#define WALK_LEVELS LT__WALK_LEVELS
#define WALK_SUPER  8 /* blocks per super-block */
#define WALK_DIRTY  8 /* summary decreases before a super-block's bound is recomputed */
#define HINT_RING   LT__WALK_HINT_RING

int lt__sos_walk_init(struct lt__sos_walk *w, size_t n)
{
    memset(w, 0, sizeof(*w));
    w->n = n;
    w->blk = lt_calloc(n / WALK_BLOCK + 1, sizeof(*w->blk));
    w->n_super = (uint32_t)((n / WALK_BLOCK + 1 + WALK_SUPER - 1) / WALK_SUPER);
    w->smx = lt_calloc((size_t)WALK_LEVELS * w->n_super, sizeof(*w->smx));
    w->sdirty = lt_calloc(w->n_super, sizeof(*w->sdirty));
    if (w->blk == NULL || w->smx == NULL || w->sdirty == NULL) {
        lt__sos_walk_release(w);
        return LT_ENOMEM;
    }
    return 0;
}

void lt__sos_walk_release(struct lt__sos_walk *w)
{
    lt_free(w->blk);
    lt_free(w->smx);
    lt_free(w->sdirty);
    w->blk = NULL;
    w->smx = NULL;
    w->sdirty = NULL;
}

static uint16_t quantise(double o)
{
    double v = o * (double)(1u << QBITS);

    if (!(v > 0.0))
        return 0;
    if (v >= (double)QMAX)
        return QMAX;
    return (uint16_t)v;
}

/* Block bi's summary, computed from its entries. */
static void block_summary(const struct lt__sos_walk *w, uint32_t bi, uint16_t mx[WALK_LEVELS])
{
    const struct lt__sos_block *bl = &w->blk[bi];

    memset(mx, 0, WALK_LEVELS * sizeof(*mx));
    for (uint64_t m = bl->present; m != 0; m &= m - 1) {
        uint32_t e = (uint32_t)__builtin_ctzll(m), l = bl->qm[e] >> WALK_LSHIFT;
        uint16_t v = (uint16_t)(bl->qc[e] + 1);

        mx[l] = v > mx[l] ? v : mx[l];
    }
    for (int l = WALK_LEVELS - 2; l >= 0; l--)
        mx[l] = mx[l + 1] > mx[l] ? mx[l + 1] : mx[l];
}

/* The largest level-l summary among super-block si's blocks: its bound when exact. */
static uint16_t super_max(const struct lt__sos_walk *w, uint32_t si, uint32_t l)
{
    uint32_t b0 = si * WALK_SUPER, nb = (uint32_t)(w->n / WALK_BLOCK + 1);
    uint32_t b1 = b0 + WALK_SUPER < nb ? b0 + WALK_SUPER : nb;
    uint16_t m = 0;

    for (uint32_t b = b0; b < b1; b++)
        m = w->blk[b].mx[l] > m ? w->blk[b].mx[l] : m;
    return m;
}

/* Super-block si's bound, recomputed. */
static void super_summary(struct lt__sos_walk *w, uint32_t si)
{
    for (uint32_t l = 0; l < WALK_LEVELS; l++)
        w->smx[l * w->n_super + si] = super_max(w, si, l);
    w->sdirty[si] = 0;
}

/* Raises the levels 0..top of a non-increasing summary (stride apart) to at least v: from top
 * down, until a level already holds v or more (so do the ones below it). */
static void summary_raise(uint16_t *mx, size_t stride, uint32_t top, uint16_t v)
{
    for (uint32_t l = top + 1; l-- > 0 && v > mx[l * stride];)
        mx[l * stride] = v;
}

/* The entries e of block bl with qc[e] >= lc and qm[e] >= lm, as a mask (present or not):
 * a flag a byte (vectorised; offsets are below 2^QBITS <= 2^15, compared as int16_t, eight
 * lanes to an SSE2 compare), then eight flags at a time gathered into a byte by a
 * multiplication (byte j of a little-endian word lands on bit 56 + j; no two partial products
 * meet, so nothing carries). */
static inline uint64_t block_at_least(const struct lt__sos_block *bl, int16_t lc, int16_t lm)
{
    uint8_t may[WALK_BLOCK];
    uint64_t m = 0;

    for (uint32_t e = 0; e < WALK_BLOCK; e++)
        may[e] = (uint8_t)(((int16_t)bl->qc[e] >= lc) & ((int16_t)bl->qm[e] >= lm));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (uint32_t g = 0; g < WALK_BLOCK / 8; g++) {
        uint64_t x;

        memcpy(&x, may + 8 * g, sizeof(x));
        m |= ((x * UINT64_C(0x0102040810204080)) >> 56) << (8 * g);
    }
#else
    for (uint32_t e = 0; e < WALK_BLOCK; e++)
        m |= (uint64_t)may[e] << e;
#endif
    return m;
}

void lt__sos_walk_set(struct lt__sos_walk *w, uint32_t i, const double *off)
{
    struct lt__sos_block *bl = &w->blk[i / WALK_BLOCK];
    uint32_t e = i % WALK_BLOCK, si = i / WALK_BLOCK / WALK_SUPER;
    uint64_t bit = UINT64_C(1) << e;
    bool redo = false;

    assert(i < w->n);
    if ((bl->present & bit) && bl->mx[bl->qm[e] >> WALK_LSHIFT] == bl->qc[e] + 1) {
        /* It may hold a summary maximum, which must then be recomputed: unless another
         * member at its level or above has as large an offset in cpu (then every level it
         * counts in keeps its maximum; 4 redos in 10 in the replay of the sample). */
        uint16_t tm = (uint16_t)((bl->qm[e] >> WALK_LSHIFT) << WALK_LSHIFT);
        redo = (block_at_least(bl, (int16_t)bl->qc[e], (int16_t)tm) & bl->present & ~bit) == 0;
    }
    bl->present &= ~bit;
    if (off != NULL) {
        bl->qc[e] = quantise(off[0]);
        bl->qm[e] = quantise(off[1]);
        bl->present |= bit;
    }
    if (redo) {
        /* The block's summary may fall (the super-block's bound is then loose) and rise
         * only by machine i's own new entry. */
        block_summary(w, i / WALK_BLOCK, bl->mx);
        if (++w->sdirty[si] >= WALK_DIRTY)
            super_summary(w, si);
    } else if (bl->present & bit) {
        summary_raise(bl->mx, 1, bl->qm[e] >> WALK_LSHIFT, (uint16_t)(bl->qc[e] + 1));
    }
    if (bl->present & bit)
        summary_raise(&w->smx[si], w->n_super, bl->qm[e] >> WALK_LSHIFT, (uint16_t)(bl->qc[e] + 1));
}

void lt__sos_walk_note(struct lt__sos_walk *w, uint32_t i)
{
    w->ring[w->version % HINT_RING] = i;
    w->version++;
}

void lt__sos_walk_query_init(struct lt__sos_walk_query *q, const double phi[2], double eps)
{
    const double one = (double)(1u << QBITS);

    for (int d = 0; d < 2; d++) {
        double lo = floor((phi[d] - eps) * one);

        q->lo[d] = lo > 0.0 ? (uint32_t)lo : 0;
        q->hi[d] = (uint32_t)ceil((phi[d] + eps) * one);
    }
    q->lq = q->lo[1] >> WALK_LSHIFT;
    q->tc = q->lo[0] + 1;
}

uint32_t lt__sos_walk_stayer(const struct lt__sos_walk *w, const struct lt__sos_walk_query *q,
                             uint32_t b0, lt__sos_stays_fn *stays, const void *ctx)
{
    uint32_t nb = (uint32_t)((w->n + WALK_BLOCK - 1) / WALK_BLOCK);
    /* int16_t thresholds for block_at_least (unsigned ones widened the compare to 32 bits) */
    const int16_t lc = (int16_t)q->lo[0], lm = (int16_t)q->lo[1];
    const uint16_t *srow = &w->smx[q->lq * w->n_super];

    for (uint32_t bi = b0; bi < nb; bi++) {
        const struct lt__sos_block *bl = &w->blk[bi];
        uint64_t m;

        if (bi % WALK_SUPER == 0 && srow[bi / WALK_SUPER] < q->tc) {
            bi += WALK_SUPER - 1;
            continue; /* nor in any block of this super-block */
        }
        if (bl->mx[q->lq] < q->tc)
            continue; /* no member can stay in cpu and mem at once */
        m = block_at_least(bl, lc, lm);
        for (m &= bl->present; m != 0; m &= m - 1) {
            uint32_t e = (uint32_t)__builtin_ctzll(m), i = bi * WALK_BLOCK + e;

            if (bl->qc[e] >= q->hi[0] && bl->qm[e] >= q->hi[1])
                return i;
            if (stays(ctx, i)) /* near the line: the caller's exact test */
                return i;
        }
    }
    return UINT32_MAX;
}

uint32_t lt__sos_walk_hint_start(const struct lt__sos_walk *w, uint64_t serial,
                                 const struct lt_choose_hint *hint, const struct lt_res *r)
{
    uint64_t lo;

    if (hint == NULL || hint->ix != (const void *)w || hint->serial != serial ||
        w->version - hint->version > HINT_RING ||
        memcmp(&hint->req, r, sizeof(*r)) != 0) /* bitwise: the same request exactly */
        return 0;
    lo = hint->from;
    for (uint64_t v = hint->version; v < w->version; v++)
        lo = w->ring[v % HINT_RING] < lo ? w->ring[v % HINT_RING] : lo;
    return lo >= w->n ? (uint32_t)((w->n + WALK_BLOCK - 1) / WALK_BLOCK)
                      : (uint32_t)(lo / WALK_BLOCK);
}

void lt__sos_walk_hint_keep(const struct lt__sos_walk *w, uint64_t serial,
                            struct lt_choose_hint *hint, const struct lt_res *r, uint32_t st)
{
    if (hint == NULL)
        return;
    hint->ix = w;
    hint->serial = serial;
    hint->version = w->version;
    hint->req = *r;
    hint->from = st == UINT32_MAX ? w->n : st;
}

/* ---- the checker ---- */

/* Every machine's entry against what entry() computes from the cluster. */
static int check_entries(const struct lt__sos_walk *w, lt__sos_entry_fn *entry, const void *ctx,
                         const char *name, struct lt_err *err)
{
    uint64_t tail;

    for (size_t i = 0; i < w->n; i++) {
        const struct lt__sos_block *bl = &w->blk[i / WALK_BLOCK];
        bool present = (bl->present >> (i % WALK_BLOCK)) & 1;
        double off[2];
        bool want = entry(ctx, i, off);

        if (present != want)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: machine %zu %s walked", name, i,
                              want ? "not" : "wrongly");
        if (present && (quantise(off[0]) != bl->qc[i % WALK_BLOCK] ||
                        quantise(off[1]) != bl->qm[i % WALK_BLOCK]))
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s index: machine %zu's walk offsets (%u, %u), recomputed (%u, %u)",
                              name, i, (unsigned)bl->qc[i % WALK_BLOCK],
                              (unsigned)bl->qm[i % WALK_BLOCK], (unsigned)quantise(off[0]),
                              (unsigned)quantise(off[1]));
    }
    tail = w->blk[w->n / WALK_BLOCK].present >> (w->n % WALK_BLOCK);
    if (tail != 0)
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: walk entry %zu beyond %zu machines",
                          name, w->n + (size_t)__builtin_ctzll(tail), w->n);
    return 0;
}

/* Every block's summary, recomputed; every super-block's bound against its blocks. */
static int check_summaries(const struct lt__sos_walk *w, const char *name, struct lt_err *err)
{
    for (uint32_t bi = 0; bi <= (uint32_t)(w->n / WALK_BLOCK); bi++) {
        uint16_t mx[WALK_LEVELS];

        block_summary(w, bi, mx);
        for (uint32_t l = 0; l < WALK_LEVELS; l++) {
            if (mx[l] != w->blk[bi].mx[l])
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: walk block %u's summary at level %u is %u, "
                                  "recomputed %u",
                                  name, (unsigned)bi, (unsigned)l, (unsigned)w->blk[bi].mx[l],
                                  (unsigned)mx[l]);
        }
    }
    for (uint32_t si = 0; si < w->n_super; si++) {
        if (w->sdirty[si] >= WALK_DIRTY)
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s index: walk super-block %u left dirty",
                              name, (unsigned)si);
        for (uint32_t l = 0; l < WALK_LEVELS; l++) {
            uint16_t m = super_max(w, si, l), v = w->smx[l * w->n_super + si];

            if (v < m || (w->sdirty[si] == 0 && v != m) ||
                (l > 0 && v > w->smx[(l - 1) * w->n_super + si]))
                return lt_err_set(err, LT_EINVAL, 0, 0,
                                  "%s index: walk super-block %u's bound at level %u is %u, "
                                  "its blocks' largest %u",
                                  name, (unsigned)si, (unsigned)l, (unsigned)v, (unsigned)m);
        }
    }
    return 0;
}

int lt__sos_walk_check(const struct lt__sos_walk *w, lt__sos_entry_fn *entry, const void *ctx,
                       const char *name, struct lt_err *err)
{
    int rc = check_entries(w, entry, ctx, name, err);

    if (rc < 0)
        return rc;
    rc = check_summaries(w, name, err);
    if (rc < 0)
        return rc;
    for (uint64_t v = w->version > HINT_RING ? w->version - HINT_RING : 0; v < w->version; v++) {
        if (w->ring[v % HINT_RING] >= w->n)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "%s index: walk change %llu names machine %u of %zu", name,
                              (unsigned long long)v, (unsigned)w->ring[v % HINT_RING], w->n);
    }
    return 0;
}
