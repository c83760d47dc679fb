/* victims.c -- priority eviction on one machine: mrs, lrs, rnd (lt_evict.h).
 *
 * Source: Cavdar 2015, ch. 6 (DESIGN.md section 5): evict one task of the lowest running
 *   priority below the arriving task's, chosen by the policy, until the task fits.
 * Reading: "until the task fits" is checked on the machine's resources, in the components the
 *   task requests (lt_res_fits_requested, Kubernetes' reading: a machine overcommitted in cpu
 *   needs no cpu victim for a task that requests only memory; where nothing is overcommitted
 *   this is free >= request everywhere), and, when a slot limit is given
 *   (lt_victims_choose_slots: the extender's slot mode and pod limit), on its slots: fewer
 *   tasks than slots must stay, so a full machine needs at least one victim; sticky tasks
 *   (HYBRID) are never chosen; after the rule has made room, victims are given back in reverse
 *   order of choice (the highest priority first, as kube-scheduler's own preemption reprieves)
 *   whenever the task still fits without them, so the set is minimal. Free room is always
 *   recomputed from the capacity and the requests of the tasks that stay, summed in candidate
 *   order, so the answer does not depend on the order of floating-point updates.
 * Ties: mrs and lrs break equal start times by the lower id; rnd draws one lt_rng_below(k) over
 *   the k tasks of the lowest priority, in candidate order, per victim.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_evict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lt_mem.h"

enum order { ORDER_MRS, ORDER_LRS, ORDER_RND };

struct lt_evict_policy {
    const char *name;
    enum order order;
};

static const struct lt_evict_policy policies[] = {
    {"mrs", ORDER_MRS},
    {"lrs", ORDER_LRS},
    {"rnd", ORDER_RND},
};

#define N_POLICIES (sizeof(policies) / sizeof(policies[0]))

size_t lt_evict_count(void)
{
    return N_POLICIES;
}

const struct lt_evict_policy *lt_evict_at(size_t i)
{
    return i < N_POLICIES ? &policies[i] : NULL;
}

const char *lt_evict_name(const struct lt_evict_policy *p)
{
    return p->name;
}

const struct lt_evict_policy *lt_evict_find(const char *name, struct lt_err *err)
{
    char known[128];
    size_t len = 0;

    for (size_t k = 0; k < N_POLICIES; k++) {
        if (name != NULL && strcmp(name, policies[k].name) == 0)
            return &policies[k];
        len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", k ? ", " : "",
                                policies[k].name);
    }
    lt_err_set(err, LT_ENOTFOUND, 0, 0, "unknown eviction policy '%s' (known: %s)",
               name ? name : "(null)", known);
    return NULL;
}

/* Does req fit in cap minus the requests of the candidates not marked gone (in the components
 * it requests: lt_res_fits_requested), and, if slots is not 0, do fewer than slots candidates
 * stay (a slot is free for the task)? */
static bool fits_without(const struct lt_res *cap, const struct lt_res *req, uint32_t slots,
                         const struct lt_victim_cand *cand, size_t n, const bool *gone)
{
    struct lt_res used = {0, 0, 0};
    size_t stay = 0;

    for (size_t k = 0; k < n; k++) {
        if (gone[k])
            continue;
        stay++;
        used.cpu += cand[k].req.cpu;
        used.mem += cand[k].req.mem;
        used.disk += cand[k].req.disk;
    }
    struct lt_res free = {cap->cpu - used.cpu, cap->mem - used.mem, cap->disk - used.disk};

    return lt_res_fits_requested(&free, req) && (slots == 0 || stay < slots);
}

/* Is a before b in the policy's order (mrs or lrs), among tasks of one priority? */
static bool before(enum order o, const struct lt_victim_cand *a, const struct lt_victim_cand *b)
{
    if (a->start_us != b->start_us)
        return o == ORDER_MRS ? a->start_us > b->start_us : a->start_us < b->start_us;
    return a->id < b->id;
}

/* The next victim by the rule, or n if no eligible task is left. */
static size_t next_victim(enum order o, int prio, const struct lt_victim_cand *cand, size_t n,
                          const bool *gone, struct lt_rng *rng)
{
    int low = prio;
    size_t count = 0, best = n;

    for (size_t k = 0; k < n; k++) {
        if (gone[k] || cand[k].sticky || cand[k].priority >= prio)
            continue;
        if (cand[k].priority < low) {
            low = cand[k].priority;
            count = 0;
            best = n;
        }
        if (cand[k].priority == low) {
            count++;
            if (best == n || (o != ORDER_RND && before(o, &cand[k], &cand[best])))
                best = k;
        }
    }
    if (best == n || o != ORDER_RND)
        return best;
    uint64_t pick = lt_rng_below(rng, count);
    for (size_t k = 0; k < n; k++) {
        if (gone[k] || cand[k].sticky || cand[k].priority != low)
            continue;
        if (pick-- == 0)
            return k;
    }
    return n; /* not reached: count tasks have priority low */
}

int lt_victims_choose(const struct lt_evict_policy *p, const struct lt_res *cap,
                      const struct lt_res *req, int prio, const struct lt_victim_cand *cand,
                      size_t n, struct lt_rng *rng, size_t *out, size_t *n_out, bool *fits,
                      struct lt_err *err)
{
    return lt_victims_choose_slots(p, cap, 0, req, prio, cand, n, rng, out, n_out, fits, err);
}

int lt_victims_choose_slots(const struct lt_evict_policy *p, const struct lt_res *cap,
                            uint32_t slots, const struct lt_res *req, int prio,
                            const struct lt_victim_cand *cand, size_t n, struct lt_rng *rng,
                            size_t *out, size_t *n_out, bool *fits, struct lt_err *err)
{
    int rc;

    if (p == NULL || cap == NULL || req == NULL || (n > 0 && (cand == NULL || out == NULL)) ||
        n_out == NULL || fits == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "lt_victims_choose: NULL argument");
    if (p->order == ORDER_RND && rng == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "eviction policy 'rnd' needs an rng");
    if ((rc = lt_res_check_request(req, "request", err)) < 0 ||
        (rc = lt_res_check_request(cap, "capacity", err)) < 0)
        return rc;
    for (size_t k = 0; k < n; k++) {
        if (lt_res_check_request(&cand[k].req, "", NULL) == 0)
            continue; /* the message, naming the candidate, only for a bad one */
        char what[48];
        snprintf(what, sizeof(what), "candidate %zu request", k);
        return lt_res_check_request(&cand[k].req, what, err);
    }
    *n_out = 0;
    *fits = false;
    bool *gone = lt_calloc(n ? n : 1, sizeof(*gone));
    if (gone == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory choosing victims");
    size_t m = 0;
    while (!fits_without(cap, req, slots, cand, n, gone)) {
        size_t v = next_victim(p->order, prio, cand, n, gone, rng);
        if (v == n) { /* no eligible task left: this machine cannot be helped */
            lt_free(gone);
            return 0;
        }
        gone[v] = true;
        out[m++] = v;
    }
    /* Give back what is not needed, the last chosen (highest priority) first. */
    for (size_t j = m; j-- > 0;) {
        gone[out[j]] = false;
        if (!fits_without(cap, req, slots, cand, n, gone))
            gone[out[j]] = true;
    }
    size_t kept = 0;
    for (size_t j = 0; j < m; j++) {
        if (gone[out[j]])
            out[kept++] = out[j];
    }
    *n_out = kept;
    *fits = true;
    lt_free(gone);
    return 0;
}
