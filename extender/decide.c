/* decide.c -- lotus-extender's filter, prioritize and preempt over one immutable snapshot.
 *
 * Design. Every decision is a loop over the request's nodes that looks each name up in the
 * snapshot's cluster (lt_cluster_find, a hash lookup) and calls the library:
 * lt_cluster_fits_requested for filter, one lt_policy_rank_flags call over all known candidates
 * for prioritize, and one lt_victims_choose_slots per node for preempt. All three read "fits" as
 * kube-scheduler's NodeResourcesFit does (fitsRequest): a resource the pod does not request is
 * not checked, however overcommitted the node is in it, and the node's pod limit (allocatable
 * "pods") always is; for preempt the pod limit is a slot limit (fewer pods than it stay).
 * Nothing here locks, allocates per node beyond the result arrays, or touches the clock, so a
 * request costs O(candidates) plus the policy's own cost, and the server can run any number of
 * these in parallel on one snapshot.
 *
 * Units are the snapshot's: CPU millicores, memory and ephemeral-storage bytes, held as
 * doubles that are exact integers below 2^53 (9 PB), so fits and the reasons are exact.
 *
 * LoTES mode (--lotes-tables) changes prioritize only: lt_lotes_classify, lt_lotes_map_machines
 * over the whole cluster (node-name order) and lt_lotes_rank with the policy as tie-break.
 *
 * Tests: tests/unit/extender/test_decide.c (reasons, the score mapping, victims incl. sticky,
 * LoTES, overcommitted nodes); tests/integration/extender/test_extender.c (the pod limit from a
 * cluster file).
 *
 * SPDX-License-Identifier: MIT
 */
#include "decide.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lt_mem.h"
#include "lt_vec.h"
#include "lt_slots.h"

struct lt_task ext_pod_task(const struct ext_pod *p)
{
    struct lt_task t;

    memset(&t, 0, sizeof(t));
    t.priority = p->priority;
    t.req.cpu = (double)p->req.cpu_milli;
    t.req.mem = (double)p->req.mem_bytes;
    t.req.disk = (double)p->req.ephemeral_bytes;
    t.sticky = p->sticky;
    return t;
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; s != NULL && *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

uint64_t ext_pod_seed(uint64_t seed, const struct ext_pod *p)
{
    uint64_t h = UINT64_C(14695981039346656037);

    if (p->uid != NULL && p->uid[0] != '\0')
        h = fnv1a(h, p->uid);
    else
        h = fnv1a(fnv1a(fnv1a(h, p->ns), "/"), p->name);
    return seed + h;
}

/* Is the slot mode on? */
static bool slot_mode(const struct ext_decide_config *cfg)
{
    return cfg != NULL && cfg->slots != NULL && cfg->slots->mode != EXT_SLOTS_OFF;
}

/* Machine m (named name) as WAA sees it: its slot limit, the pods counted on it, its slot
 * power (allocatable millicores per slot; 0 without slots). */
static struct lt_slot_node slot_node(const struct ext_decide_config *cfg,
                                     const struct lt_cluster *c, size_t m, const char *name)
{
    struct lt_slot_node n;
    size_t used = lt_cluster_n_tasks(c, m);
    double cpu = lt_cluster_cap(c, m).cpu;

    n.slots = ext_slots_limit(cfg->slots, name, cpu);
    n.used = used > UINT32_MAX ? UINT32_MAX : (uint32_t)used;
    n.power = n.slots > 0 ? cpu / n.slots : 0.0;
    return n;
}

/* NodeResourcesFit's pod count on machine m of s: the pods counted there (bound and assumed)
 * into *used and the node's allocatable pods into *max (0: not reported, no limit). True if
 * one more pod is allowed (used + 1 <= max). */
static bool pod_room(const struct ext_snapshot *s, size_t m, size_t *used, int64_t *max)
{
    *used = lt_cluster_n_tasks(s->cluster, m);
    *max = s->max_pods != NULL ? s->max_pods[m] : 0;
    return *max <= 0 || (uint64_t)*used < (uint64_t)*max;
}

/* ------------------------------------------------------------------------------------------
 * filter
 */

void ext_filter_decision_init(struct ext_filter_decision *d)
{
    memset(d, 0, sizeof(*d));
}

void ext_filter_decision_release(struct ext_filter_decision *d)
{
    lt_free(d->v);
    lt_free(d->text);
    ext_filter_decision_init(d);
}

/* Appends s to the reason buffer r (length *len, EXT_REASON_MAX bytes), truncating. */
static void reason_cat(char *r, size_t *len, const char *s)
{
    while (*s != '\0' && *len < EXT_REASON_MAX - 1)
        r[(*len)++] = *s++;
    r[*len] = '\0';
}

size_t ext_fmt_f0(char out[EXT_FMT_F0_MAX], double v)
{
    char t[EXT_FMT_F0_MAX];
    size_t k = sizeof(t);
    double x = nearbyint(v);
    uint64_t u;

    if (!(fabs(x) < 9007199254740992.0)) { /* beyond 2^53, or not finite: printf itself */
        int n = snprintf(out, EXT_FMT_F0_MAX, "%.0f", v);
        return n < 0 ? 0 : (size_t)n < EXT_FMT_F0_MAX ? (size_t)n : EXT_FMT_F0_MAX - 1;
    }
    u = (uint64_t)fabs(x);
    t[--k] = '\0';
    do {
        t[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (signbit(x))
        t[--k] = '-';
    memcpy(out, t + k, sizeof(t) - k);
    return sizeof(t) - k - 1;
}

static void reason_num(char *r, size_t *len, double v)
{
    char t[EXT_FMT_F0_MAX];

    ext_fmt_f0(t, v);
    reason_cat(r, len, t);
}

/* Appends "; " (unless first) and one clause to the reason buffer r of EXT_REASON_MAX bytes:
 * "Insufficient RES: requested REQ[m], WHAT HAVE[m]" (the numbers as "%.0f" writes them). */
static void reason_add(char *r, const char *res, double req, double have, bool cpu,
                       const char *what)
{
    size_t len = strlen(r);
    const char *unit = cpu ? "m" : "";

    if (len >= EXT_REASON_MAX - 1)
        return;
    if (len > 0)
        reason_cat(r, &len, "; ");
    reason_cat(r, &len, "Insufficient ");
    reason_cat(r, &len, res);
    reason_cat(r, &len, ": requested ");
    reason_num(r, &len, req);
    reason_cat(r, &len, unit);
    reason_cat(r, &len, ", ");
    reason_cat(r, &len, what);
    reason_cat(r, &len, " ");
    reason_num(r, &len, have);
    reason_cat(r, &len, unit);
}

/* Appends to r the reasons for the resources the pod requests (> 0) where req exceeds lim
 * ("capacity" or "free"); returns the number of short resources. A resource the pod does not
 * request is never short, however overcommitted (NodeResourcesFit's fitsRequest). */
static int short_resources(char *r, const struct lt_res *req, const struct lt_res *lim,
                           const char *what)
{
    int n = 0;

    if (req->cpu > 0 && req->cpu > lim->cpu) {
        reason_add(r, "cpu", req->cpu, lim->cpu, true, what);
        n++;
    }
    if (req->mem > 0 && req->mem > lim->mem) {
        reason_add(r, "memory", req->mem, lim->mem, false, what);
        n++;
    }
    if (req->disk > 0 && req->disk > lim->disk) {
        reason_add(r, "ephemeral-storage", req->disk, lim->disk, false, what);
        n++;
    }
    return n;
}

/* Appends "no free slot (used/slots used)" to reason (after "; " if it is not empty). */
static void reason_slots(char *reason, const struct lt_slot_node *n)
{
    size_t len = strlen(reason);
    char t[64];

    snprintf(t, sizeof(t), "%sno free slot (%u/%u used)", len > 0 ? "; " : "", (unsigned)n->used,
             (unsigned)n->slots);
    reason_cat(reason, &len, t);
}

static enum ext_verdict filter_one(const struct ext_decide_config *cfg,
                                   const struct ext_snapshot *s, const char *name,
                                   const struct lt_res *req, char *reason)
{
    const struct lt_cluster *c = s->cluster;
    size_t m = lt_cluster_find(c, name), used;
    struct lt_slot_node sn = {0, 0, 0.0};
    bool slots = slot_mode(cfg), slot_free = true, pods_free;
    struct lt_res cap, fr;
    int64_t max;
    size_t len;

    reason[0] = '\0';
    if (m == LT_NO_MACHINE) {
        snprintf(reason, EXT_REASON_MAX, "unknown node");
        return EXT_FAIL;
    }
    if (slots) {
        sn = slot_node(cfg, c, m, name);
        slot_free = lt_slot_node_free(&sn);
    }
    pods_free = pod_room(s, m, &used, &max);
    if (lt_cluster_fits_requested(c, m, req) && slot_free && pods_free)
        return EXT_PASS;
    if (!lt_cluster_online(c, m)) {
        snprintf(reason, EXT_REASON_MAX, "node is offline");
        return EXT_FAIL_UNRESOLVABLE;
    }
    cap = lt_cluster_cap(c, m);
    if (short_resources(reason, req, &cap, "capacity") > 0)
        return EXT_FAIL_UNRESOLVABLE;
    if (slots && sn.slots == 0) {
        snprintf(reason, EXT_REASON_MAX, "node has no slots");
        return EXT_FAIL_UNRESOLVABLE;
    }
    if (!pods_free) /* first, as fitsRequest lists it */
        snprintf(reason, EXT_REASON_MAX, "Too many pods (%zu/%lld used)", used, (long long)max);
    fr = lt_cluster_free_res(c, m);
    short_resources(reason, req, &fr, "free");
    if (!slot_free)
        reason_slots(reason, &sn);
    len = strlen(reason);
    if (len == 0)
        reason_cat(reason, &len, "pod does not fit");
    return EXT_FAIL;
}

int ext_decide_filter(const struct ext_decide_config *cfg, const struct ext_snapshot *s,
                      const struct ext_args *a, struct ext_filter_decision *d, struct lt_err *err)
{
    size_t n = ext_args_candidates(a);
    struct lt_task t = ext_pod_task(&a->pod);

    ext_filter_decision_release(d);
    d->v = lt_calloc(n ? n : 1, sizeof(*d->v));
    d->text = lt_calloc(n ? n : 1, EXT_REASON_MAX);
    if (d->v == NULL || d->text == NULL) {
        ext_filter_decision_release(d);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for a %zu-node filter", n);
    }
    d->n = n;
    for (size_t i = 0; i < n; i++) {
        char *reason = d->text + i * EXT_REASON_MAX;

        d->v[i].verdict = filter_one(cfg, s, ext_args_candidate(a, i), &t.req, reason);
        d->v[i].reason = d->v[i].verdict == EXT_PASS ? NULL : reason;
        d->n_pass += d->v[i].verdict == EXT_PASS;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * prioritize
 */

void ext_scores_map(const double *raw, size_t n, int64_t *out)
{
    double best = HUGE_VAL, worst = -HUGE_VAL;

    for (size_t i = 0; i < n; i++) {
        if (!isfinite(raw[i]))
            continue;
        best = raw[i] < best ? raw[i] : best;
        worst = raw[i] > worst ? raw[i] : worst;
    }
    for (size_t i = 0; i < n; i++) {
        double x;

        if (!isfinite(raw[i])) {
            out[i] = 0;
            continue;
        }
        if (!(worst > best)) {
            out[i] = EXT_MAX_PRIORITY;
            continue;
        }
        x = round(EXT_MAX_PRIORITY * (worst - raw[i]) / (worst - best));
        out[i] = x < 0 ? 0 : x > EXT_MAX_PRIORITY ? EXT_MAX_PRIORITY : (int64_t)x;
    }
}

void ext_scores_single_top(int64_t *out, size_t n, size_t top)
{
    for (size_t i = 0; i < n; i++) {
        if (i != top && out[i] >= EXT_MAX_PRIORITY)
            out[i] = EXT_MAX_PRIORITY - 1;
    }
}

/* Slot mode over the policy's raw scores[0..k-1] of machines cand[0..k-1]: no free slot ->
 * infeasible; for a production pod, raw = WAA tier + 0.5 * the policy's raw normalised to
 * [0, 1] over the nodes with a free slot (decide.h). */
static int slot_scores(const struct ext_decide_config *cfg, const struct ext_snapshot *s,
                       const struct ext_args *a, const size_t *cand, size_t k, double *scores,
                       struct lt_err *err)
{
    struct lt_slot_node *sn = lt_calloc(k, sizeof(*sn));
    uint32_t *tier = lt_calloc(k, sizeof(*tier));
    bool prod = lt_class_is_production(ext_slots_class(cfg->slots, a->pod.priority));
    double best = HUGE_VAL, worst = -HUGE_VAL;
    size_t n_tiers = 0;
    int rc = 0;

    if (sn == NULL || tier == NULL) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory ranking %zu nodes by slot", k);
        goto out_free;
    }
    for (size_t j = 0; j < k; j++)
        sn[j] = slot_node(cfg, s->cluster, cand[j], lt_cluster_name(s->cluster, cand[j]));
    if ((rc = lt_slot_waa_tiers(sn, k, tier, &n_tiers, err)) < 0)
        goto out_free;
    for (size_t j = 0; j < k; j++) {
        if (tier[j] == LT_SLOT_NO_TIER)
            scores[j] = LT_SCORE_INFEASIBLE;
        if (!isfinite(scores[j]))
            continue;
        best = scores[j] < best ? scores[j] : best;
        worst = scores[j] > worst ? scores[j] : worst;
    }
    for (size_t j = 0; prod && j < k; j++) {
        if (isfinite(scores[j]))
            scores[j] = tier[j] + (worst > best ? 0.5 * (scores[j] - best) / (worst - best) : 0.0);
    }
out_free:
    lt_free(sn);
    lt_free(tier);
    return rc;
}

/* Is the LoTES mode on? */
static bool lotes_mode(const struct ext_decide_config *cfg)
{
    return cfg != NULL && cfg->lotes != NULL && cfg->lotes->t != NULL;
}

/* LoTES mode over the policy's raw scores[0..k-1] of machines cand[0..k-1]: the pod's class,
 * every node's configuration and bin (node-name order is the cluster's index order), then
 * lt_lotes_rank with the policy's scores as the tie-break (decide.h). */
static int lotes_scores(const struct ext_decide_config *cfg, const struct ext_snapshot *s,
                        const struct lt_task *t, const size_t *cand, size_t k, double *scores,
                        struct lt_err *err)
{
    const struct lt_lotes_tables *tab = cfg->lotes->t;
    const struct lt_cluster *c = s->cluster;
    size_t n = lt_cluster_size(c), cls = 0;
    struct lt_res *cap = lt_calloc(n ? n : 1, sizeof(*cap));
    size_t *conf = lt_calloc(n ? n : 1, sizeof(*conf)), *bin = lt_calloc(n ? n : 1, sizeof(*bin));
    struct lt_lotes_machine *view = lt_calloc(k, sizeof(*view));
    double *tb = lt_calloc(k, sizeof(*tb));
    int rc = 0;

    if (cap == NULL || conf == NULL || bin == NULL || view == NULL || tb == NULL) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory ranking %zu nodes by LoTES", n);
        goto out_free;
    }
    for (size_t m = 0; m < n; m++)
        cap[m] = lt_cluster_cap(c, m);
    if ((rc = lt_lotes_classify(tab, &t->req, &cls, err)) < 0 ||
        (rc = lt_lotes_map_machines(tab, cap, n, conf, bin, err)) < 0)
        goto out_free;
    for (size_t j = 0; j < k; j++) {
        view[j].config = conf[cand[j]];
        view[j].bin = bin[cand[j]];
        view[j].free = lt_cluster_free_res(c, cand[j]);
        /* A resource the pod does not request counts as full where it is overcommitted, as
         * lt_policy_rank_flags' LT_RANK_REQUESTED sees it. */
        view[j].free.cpu = t->req.cpu > 0 || view[j].free.cpu >= 0 ? view[j].free.cpu : 0;
        view[j].free.mem = t->req.mem > 0 || view[j].free.mem >= 0 ? view[j].free.mem : 0;
        view[j].free.disk = t->req.disk > 0 || view[j].free.disk >= 0 ? view[j].free.disk : 0;
        view[j].queue_len = 0;
        tb[j] = scores[j];
    }
    rc = lt_lotes_rank(tab, view, k, cls, &t->req, tb, scores, err);
out_free:
    lt_free(cap);
    lt_free(conf);
    lt_free(bin);
    lt_free(view);
    lt_free(tb);
    return rc;
}

int ext_decide_prioritize(const struct ext_decide_config *cfg, const struct ext_snapshot *s,
                          const struct ext_args *a, struct lt_rng *rng,
                          struct ext_host_priority *out, struct lt_err *err)
{
    size_t n = ext_args_candidates(a), k = 0, best;
    struct lt_task t = ext_pod_task(&a->pod);
    size_t *cand = lt_calloc(n ? n : 1, sizeof(*cand));
    size_t *pos = lt_calloc(n ? n : 1, sizeof(*pos));
    double *scores = lt_calloc(n ? n : 1, sizeof(*scores));
    double *raw = lt_calloc(n ? n : 1, sizeof(*raw));
    int64_t *mapped = lt_calloc(n ? n : 1, sizeof(*mapped));
    int rc = 0;

    if (!cand || !pos || !scores || !raw || !mapped) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for a %zu-node prioritize", n);
        goto out_free;
    }
    for (size_t i = 0; i < n; i++) {
        size_t m = lt_cluster_find(s->cluster, ext_args_candidate(a, i));

        raw[i] = LT_SCORE_INFEASIBLE;
        if (m != LT_NO_MACHINE) {
            cand[k] = m;
            pos[k++] = i;
        }
    }
    if (k > 0) {
        rc = lt_policy_rank_flags(cfg->policy, s->cluster, &t, cand, k, LT_RANK_REQUESTED, rng,
                                  scores, err);
        if (rc < 0)
            goto out_free;
    }
    for (size_t j = 0; j < k; j++) { /* a node at its pod limit is as infeasible as a full one */
        size_t used;
        int64_t max;

        if (!pod_room(s, cand[j], &used, &max))
            scores[j] = LT_SCORE_INFEASIBLE;
    }
    if (k > 0 && slot_mode(cfg)) {
        rc = slot_scores(cfg, s, a, cand, k, scores, err);
        if (rc < 0)
            goto out_free;
    }
    if (k > 0 && lotes_mode(cfg)) {
        rc = lotes_scores(cfg, s, &t, cand, k, scores, err);
        if (rc < 0)
            goto out_free;
    }
    for (size_t j = 0; j < k; j++)
        raw[pos[j]] = scores[j];
    ext_scores_map(raw, n, mapped);
    best = lt_scores_best(cand, scores, k);
    ext_scores_single_top(mapped, n, best == LT_NO_MACHINE ? n : pos[best]);
    for (size_t i = 0; i < n; i++) {
        out[i].host = ext_args_candidate(a, i);
        out[i].score = mapped[i];
    }
out_free:
    lt_free(cand);
    lt_free(pos);
    lt_free(scores);
    lt_free(raw);
    lt_free(mapped);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * preempt
 */

void ext_preempt_decision_init(struct ext_preempt_decision *d)
{
    memset(d, 0, sizeof(*d));
}

void ext_preempt_decision_release(struct ext_preempt_decision *d)
{
    lt_free(d->nodes);
    lt_free(d->uids);
    ext_preempt_decision_init(d);
}

/* Scratch space for one node: the candidates and the chosen positions. */
struct node_scratch {
    struct lt_victim_cand *cand;
    size_t *pod;      /* cand[k] is snapshot pod pod[k] */
    const char **uid; /* and has this uid (borrowed from the snapshot) */
    size_t *out;
    size_t cap;
};

static void scratch_release(struct node_scratch *w)
{
    lt_free(w->cand);
    lt_free(w->pod);
    lt_free(w->uid);
    lt_free(w->out);
    memset(w, 0, sizeof(*w));
}

static int scratch_reserve(struct node_scratch *w, size_t n)
{
    if (n <= w->cap)
        return 0;
    scratch_release(w);
    w->cand = lt_calloc(n, sizeof(*w->cand));
    w->pod = lt_calloc(n, sizeof(*w->pod));
    w->uid = lt_calloc(n, sizeof(*w->uid));
    w->out = lt_calloc(n, sizeof(*w->out));
    w->cap = (w->cand && w->pod && w->uid && w->out) ? n : 0;
    return w->cap ? 0 : LT_ENOMEM;
}

static int64_t ms_to_us(int64_t ms)
{
    if (ms > INT64_MAX / 1000)
        return INT64_MAX;
    return ms < 0 ? 0 : ms * 1000;
}

/* Fills w with the snapshot's pods on machine m except the preemptor (uid self); returns the
 * count, or (size_t)-1 on LT_ENOMEM. */
static size_t gather(const struct ext_snapshot *s, size_t m, const char *self,
                     struct node_scratch *w)
{
    const struct lt_cluster *c = s->cluster;
    size_t n = 0;

    if (scratch_reserve(w, lt_cluster_n_tasks(c, m) + 1) < 0)
        return (size_t)-1;
    for (size_t p = lt_cluster_first_placement(c, m); p != LT_NO_MACHINE;
         p = lt_cluster_next_placement(c, p)) {
        int64_t id = lt_cluster_placement_task(c, p)->id;
        const struct ext_snap_pod *pod;

        if (id < 0 || (uint64_t)id >= s->n_pods)
            continue; /* not a pod of this snapshot: the cache broke its contract */
        pod = &s->pods[id];
        if (self[0] != '\0' && strcmp(pod->uid, self) == 0)
            continue;
        w->cand[n].id = id;
        w->cand[n].priority = pod->priority;
        w->cand[n].start_us = ms_to_us(pod->start_ms);
        w->cand[n].req = pod->req;
        w->cand[n].sticky = pod->sticky;
        w->uid[n] = pod->uid;
        w->pod[n++] = (size_t)id;
    }
    return n;
}

/* Appends uid to d->uids; the nodes' pointers are fixed up at the end. */
static int uid_push(struct ext_preempt_decision *d, size_t *len, size_t *cap, const char *uid)
{
    if (LT_VEC_RESERVE(d->uids, *cap, *len + 1) != 0)
        return LT_ENOMEM;
    d->uids[(*len)++] = uid;
    return 0;
}

/* True if uid is among the n gathered candidates and may be evicted by priority prio. */
static bool allowed(const struct node_scratch *w, size_t n, const char *uid, int prio)
{
    for (size_t k = 0; k < n; k++) {
        const struct lt_victim_cand *c = &w->cand[k];

        if (strcmp(w->uid[k], uid) == 0)
            return !c->sticky && c->priority < prio;
    }
    return false;
}

/* Decides one node; appends its victims to d (or nothing if dropped). */
static int preempt_one(const struct ext_decide_config *cfg, const struct ext_snapshot *s,
                       const struct ext_preempt_args *a, const struct ext_victims *e,
                       struct lt_rng *rng, struct node_scratch *w, struct ext_preempt_decision *d,
                       size_t *off, size_t *len, size_t *cap, struct lt_err *err)
{
    size_t m = lt_cluster_find(s->cluster, e->node), n, n_out = 0, first = *len;
    struct lt_task t = ext_pod_task(&a->pod);
    struct lt_res mcap;
    uint32_t limit = 0; /* most pods that may stay with the preemptor: 0: no limit */
    bool fits = false;
    size_t used;
    int64_t max;
    int rc;

    if (m == LT_NO_MACHINE || !lt_cluster_online(s->cluster, m))
        return 0;
    n = gather(s, m, a->pod.uid, w);
    if (n == (size_t)-1)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the pods of node '%s'", e->node);
    mcap = lt_cluster_cap(s->cluster, m);
    if (slot_mode(cfg)) {
        limit = ext_slots_limit(cfg->slots, e->node, mcap.cpu);
        if (limit == 0)
            return 0; /* no slots: no victim can help */
    }
    (void)pod_room(s, m, &used, &max); /* the pod limit is a slot limit: fewer than max stay */
    if (max > 0 && (limit == 0 || (uint64_t)max < limit))
        limit = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
    rc = lt_victims_choose_slots(cfg->evict, &mcap, limit, &t.req, t.priority, w->cand, n, rng,
                                 w->out, &n_out, &fits, err);
    if (rc < 0 || !fits)
        return rc;
    for (size_t k = 0; k < n_out && rc == 0; k++)
        rc = uid_push(d, len, cap, s->pods[w->pod[w->out[k]]].uid);
    /* Already fits in the snapshot: keep those of kube-scheduler's victims for the node that
     * the rule allows (on the node here, lower priority, not sticky). */
    for (size_t k = 0; n_out == 0 && k < e->n_pods && rc == 0; k++)
        if (allowed(w, n, e->pods[k].uid, t.priority))
            rc = uid_push(d, len, cap, e->pods[k].uid);
    if (rc < 0)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the victims of node '%s'",
                          e->node);
    if (*len == first)
        return 0;
    d->nodes[d->n].node = e->node;
    off[d->n] = first; /* d->uids may still move: pointers are set at the end */
    d->nodes[d->n].n_uids = *len - first;
    d->nodes[d->n].num_pdb_violations = 0;
    d->n++;
    return 0;
}

int ext_decide_preempt(const struct ext_decide_config *cfg, const struct ext_snapshot *s,
                       const struct ext_preempt_args *a, struct lt_rng *rng,
                       struct ext_preempt_decision *d, struct lt_err *err)
{
    const struct ext_victims *list = a->n_meta > 0 ? a->meta : a->victims;
    size_t n = a->n_meta > 0 ? a->n_meta : a->n_victims, len = 0, cap = 0;
    struct node_scratch w = {0};
    size_t *off = lt_calloc(n ? n : 1, sizeof(*off));
    int rc = 0;

    ext_preempt_decision_release(d);
    d->nodes = lt_calloc(n ? n : 1, sizeof(*d->nodes));
    if (d->nodes == NULL || off == NULL)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for a %zu-node preemption", n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = preempt_one(cfg, s, a, &list[i], rng, &w, d, off, &len, &cap, err);
    scratch_release(&w);
    if (rc < 0) {
        lt_free(off);
        ext_preempt_decision_release(d);
        return rc;
    }
    for (size_t i = 0; i < d->n; i++)
        d->nodes[i].uids = d->uids + off[i];
    lt_free(off);
    return 0;
}
