/* cache.c -- the extender's view of the cluster: the feed state and its immutable snapshots.
 *
 * Design. Two kinds of state, two locks:
 *
 *   feed state   (c->lock) what the watchers (or the cluster file) said: nodes by name, pods by
 *                uid (pending ones too, since a bind needs their requests), assumed pods by
 *                uid. Terminated pods (phase Succeeded/Failed, deletionTimestamp set) are not
 *                kept: they count nowhere. A relist builds new node or pod tables beside the
 *                live ones (relist_begin .. LISTED ..) and swaps them in at relist_done, so the
 *                live tables are never empty in between.
 *   current      (c->cur_lock) the published snapshot. ext_snapshot_acquire holds cur_lock only
 *                to read the pointer and increment its atomic reference count: it never waits
 *                for a rebuild.
 *
 * A rebuild (build_publish) has three steps. (1) Under c->lock it copies what a snapshot needs
 * out of the feed tables into the new snapshot's own memory (node names and capacities, and
 * for every counted pod its strings, requests, priority, start time and the node's collection
 * index) and takes the next version number: O(nodes + pods) copying, a few ms at 150,000 pods.
 * (2) With no lock held it sorts the nodes by name, groups the pods by node (ordered by
 * namespace, name), builds the lt_cluster with LT_PLACE_FORCE placements, attaches the
 * configured policies and indexes the pods by uid. (3) Under cur_lock it makes the snapshot
 * current. Builds are serialised by build_lock; readers never take it.
 *
 * Who rebuilds: a rebuild thread, woken by the watcher callbacks when they change the feed,
 * builds at most every rebuild_ms (the first snapshot after sync at once), and also wakes when
 * the oldest assumed pod's TTL runs out. ext_cache_assume and ext_cache_load_file build on the
 * caller's thread and publish before returning. Concurrent assumes share builds: each takes a
 * sequence number, every snapshot records the last number it covers, and an assume that
 * finds the current snapshot covering its number once it holds build_lock returns at once
 * (group commit: at most one build runs, and one more covers everyone who waited for it).
 *
 * Measured (test_cache_rebuild_timing with LOTUS_CACHE_BENCH=1; RelWithDebInfo with asserts,
 * a 2-core VM under load average 2): 5,000 nodes and 150,000 bound pods rebuild in 60-65 ms,
 * of which step (1), under the feed lock, takes about 21 ms and step (2) about 41 ms. Loading
 * that cluster as a file (JSON parse, decode, first build) takes about 2.5 s.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "ext_codec.h"
#include "lt_mem.h"

/* ---- clocks ----------------------------------------------------------------------------- */

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

static int64_t wall_ms(void)
{
    return clock_ms(CLOCK_REALTIME);
}

/* ---- string-keyed intrusive hash table -------------------------------------------------- */

/* Chained and intrusive, not an lt_map (lt_map.h): records of several kinds are linked in
 * place (a record is its own entry, freed when replaced or deleted), keys are strings
 * compared in full, and two maps are swapped whole on a relist.
 *
 * The first member of every record. key points into the record itself. */
struct hent {
    struct hent *next;
    uint64_t hash;
    const char *key;
};

struct hmap {
    struct hent **b; /* nb buckets (a power of two), or NULL while empty */
    size_t nb, n;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    h ^= h >> 32; /* FNV's low bits mix poorly, and the tables index by them */
    h *= 0xd6e8feb86659fd93u;
    return h ^ (h >> 32);
}

/* The entry with key, whose hash_str is h. */
static struct hent *hmap_find_h(const struct hmap *m, const char *key, uint64_t h)
{
    if (m->n == 0)
        return NULL;
    for (struct hent *e = m->b[h & (m->nb - 1)]; e; e = e->next)
        if (e->hash == h && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static struct hent *hmap_find(const struct hmap *m, const char *key)
{
    return m->n == 0 ? NULL : hmap_find_h(m, key, hash_str(key));
}

/* Unlinks and returns the entry with key, or NULL. */
static struct hent *hmap_del(struct hmap *m, const char *key)
{
    uint64_t h;
    struct hent **pp;

    if (m->n == 0)
        return NULL;
    h = hash_str(key);
    for (pp = &m->b[h & (m->nb - 1)]; *pp; pp = &(*pp)->next) {
        struct hent *e = *pp;

        if (e->hash == h && strcmp(e->key, key) == 0) {
            *pp = e->next;
            m->n--;
            return e;
        }
    }
    return NULL;
}

/* Links e (e->key set, not present in m). LT_ENOMEM leaves m unchanged. */
static int hmap_put(struct hmap *m, struct hent *e)
{
    if (m->n + 1 > m->nb) {
        size_t nb = m->nb ? m->nb * 2 : 64;
        struct hent **b = lt_calloc(nb, sizeof(*b));

        if (b == NULL)
            return LT_ENOMEM;
        for (size_t i = 0; i < m->nb; i++) {
            struct hent *x = m->b[i], *next;

            for (; x; x = next) {
                next = x->next;
                x->next = b[x->hash & (nb - 1)];
                b[x->hash & (nb - 1)] = x;
            }
        }
        lt_free(m->b);
        m->b = b;
        m->nb = nb;
    }
    e->hash = hash_str(e->key);
    e->next = m->b[e->hash & (m->nb - 1)];
    m->b[e->hash & (m->nb - 1)] = e;
    m->n++;
    return 0;
}

/* Replaces the entry with e's key by e (freeing the old one). */
static int hmap_replace(struct hmap *m, struct hent *e)
{
    lt_free(hmap_del(m, e->key));
    return hmap_put(m, e);
}

/* Frees every entry (each one lt_malloc block) and the buckets; m is empty afterwards. */
static void hmap_clear(struct hmap *m)
{
    for (size_t i = 0; i < m->nb; i++) {
        struct hent *e = m->b[i], *next;

        for (; e; e = next) {
            next = e->next;
            lt_free(e);
        }
    }
    lt_free(m->b);
    m->b = NULL;
    m->nb = m->n = 0;
}

#define HMAP_FOREACH(m, e)                                                                         \
    for (size_t hm_i_ = 0; hm_i_ < (m)->nb; hm_i_++)                                               \
        for (struct hent *e = (m)->b[hm_i_]; e; e = e->next)

/* ---- feed records ----------------------------------------------------------------------- */

struct node_rec {
    struct hent h;     /* key: name */
    struct lt_res cap; /* allocatable, 1 for a missing or zero resource */
    int64_t max_pods;  /* allocatable pods, 0 if not reported */
    size_t idx;        /* scratch: position in the snapshot being collected */
    char name[];
};

struct pod_rec {
    struct hent h;         /* key: uid */
    const char *ns, *name; /* into buf */
    const char *node;      /* spec.nodeName, "" while pending */
    uint64_t node_hash;    /* hash_str(node), computed outside the lock */
    int32_t priority;
    int64_t start_ms;
    bool sticky;
    struct lt_res req;
    size_t slen; /* bytes of uid, ns, name incl. their NULs: what a snapshot copies */
    char buf[];  /* uid \0 ns \0 name \0 node \0 */
};

/* A pending pod as the last filter or prioritize request carried it (ext_cache_note_pod): what
 * a bind counts when the watch has not shown the pod yet (it was created while the watch was
 * down, or its event is still on the way). */
#define SEEN_MAX 4096 /* pods remembered; past it the table starts over */
struct seen_rec {
    struct hent h; /* key: uid (buf) */
    int32_t priority;
    bool sticky;
    struct lt_res req;
    char buf[];
};

struct assumed_rec {
    struct hent h; /* key: uid */
    const char *ns, *name, *node;
    uint64_t node_hash;
    int64_t at_ms; /* CLOCK_MONOTONIC time of ext_cache_assume */
    bool sticky;   /* labelled lotus.io/sticky by the extender at this bind (HYBRID) */
    bool has_req;  /* req and priority from a request (the feed did not know the pod) */
    int32_t priority;
    struct lt_res req;
    size_t slen;
    char buf[]; /* uid \0 ns \0 name \0 node \0 */
};

/* Copies the n strings s[] one after another into buf and points out[] at the copies. */
static void pack(char *buf, const char *const *s, const char **out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(s[i]) + 1;

        memcpy(buf, s[i], len);
        out[i] = buf;
        buf += len;
    }
}

static size_t packed_len(const char *const *s, size_t n)
{
    size_t len = 0;

    for (size_t i = 0; i < n; i++)
        len += strlen(s[i]) + 1;
    return len;
}

static double cap_of(int64_t v)
{
    return v > 0 ? (double)v : 1.0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* RFC 3339 ("2024-05-01T10:05:00.25Z", "...+02:00") to Unix ms; 0 if s is not one. */
static int64_t rfc3339_ms(const char *s)
{
    int y, mo, d, h, mi, sec, oh, om, ms = 0, scale = 100;
    int64_t t;

    if (s == NULL || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return 0;
    s += 19;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++) {
            ms += (*s - '0') * scale;
            scale /= 10;
        }
    }
    t = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + sec;
    if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
        return t * 1000 + ms;
    if ((*s == '+' || *s == '-') && digits(s + 1, 2, &oh) && s[3] == ':' && digits(s + 4, 2, &om) &&
        s[6] == '\0') {
        int64_t off = (int64_t)(oh * 60 + om) * 60;

        return (t + (*s == '+' ? -off : off)) * 1000 + ms;
    }
    return 0;
}

/* status.startTime, else metadata.creationTimestamp, as Unix ms; 0 if neither parses. */
static int64_t pod_start_ms(json_t *obj)
{
    const char *st =
        json_string_value(json_object_get(json_object_get(obj, "status"), "startTime"));
    const char *ct =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "creationTimestamp"));
    int64_t t = rfc3339_ms(st);

    return t != 0 ? t : rfc3339_ms(ct);
}

/* Decodes a pod. *out is a new record, or NULL for a terminated pod (which counts nowhere and
 * is not kept); p receives the summary either way (its uid names the pod to forget). */
static int pod_decode(json_t *obj, const char *path, struct ext_pod *p, struct pod_rec **out,
                      struct lt_err *err)
{
    const char *s[4];
    struct pod_rec *r;
    size_t len;
    int rc = ext_pod_from_json(obj, path, p, err);

    *out = NULL;
    if (rc < 0)
        return rc;
    if (p->uid[0] == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s%smetadata.uid: missing", path,
                          path[0] ? "." : "");
    if (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0 || p->terminating)
        return 0;
    s[0] = p->uid;
    s[1] = p->ns;
    s[2] = p->name;
    s[3] = p->node_name;
    len = packed_len(s, 4);
    r = lt_malloc(sizeof(*r) + len);
    if (r == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for pod '%s'", p->uid);
    {
        const char *o[4];

        pack(r->buf, s, o, 4);
        r->h.key = o[0];
        r->ns = o[1];
        r->name = o[2];
        r->node = o[3];
    }
    r->priority = p->priority;
    r->start_ms = pod_start_ms(obj);
    r->sticky = p->sticky;
    r->req.cpu = (double)p->req.cpu_milli;
    r->req.mem = (double)p->req.mem_bytes;
    r->req.disk = (double)p->req.ephemeral_bytes;
    r->slen = len - (strlen(p->node_name) + 1);
    r->node_hash = hash_str(r->node);
    *out = r;
    return 0;
}

static int node_decode(json_t *obj, const char *path, struct node_rec **out, struct lt_err *err)
{
    struct ext_node n;
    struct node_rec *r;
    size_t len;
    int rc = ext_node_from_json(obj, path, &n, err);

    *out = NULL;
    if (rc < 0)
        return rc;
    if (n.name[0] == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s%smetadata.name: missing", path,
                          path[0] ? "." : "");
    len = strlen(n.name) + 1;
    r = lt_malloc(sizeof(*r) + len);
    if (r == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for node '%s'", n.name);
    memcpy(r->name, n.name, len);
    r->h.key = r->name;
    r->cap.cpu = cap_of(n.alloc.cpu_milli);
    r->cap.mem = cap_of(n.alloc.mem_bytes);
    r->cap.disk = cap_of(n.alloc.ephemeral_bytes);
    r->max_pods = n.max_pods > 0 ? n.max_pods : 0;
    r->idx = 0;
    *out = r;
    return 0;
}

/* ---- snapshots ---------------------------------------------------------------------------- */

struct snap {
    struct ext_snapshot pub; /* first member: ext_snapshot_release casts back */
    atomic_size_t refs;
    struct lt_cluster *cl;     /* pub.cluster, writable while building */
    struct ext_snap_pod *pods; /* pub.pods */
    int64_t *max_pods;         /* pub.max_pods */
    char *strings;             /* every pod string */
    size_t *uid_ix;            /* open addressing, uid_mask + 1 slots: pod index + 1, 0 empty */
    size_t uid_mask;
    uint64_t *uid_hash; /* hash_str(pods[i].uid), from the feed records */
    size_t n_assumed;
    uint64_t covers; /* the assume sequence number when it was collected */
};

static void snap_free(struct snap *s)
{
    if (s == NULL)
        return;
    lt_cluster_free(s->cl);
    lt_free(s->pods);
    lt_free(s->max_pods);
    lt_free(s->strings);
    lt_free(s->uid_ix);
    lt_free(s->uid_hash);
    lt_free(s);
}

void ext_snapshot_release(struct ext_snapshot *pub)
{
    struct snap *s = (struct snap *)pub;

    if (s != NULL && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        snap_free(s);
}

const struct ext_snap_pod *ext_snapshot_find_pod(const struct ext_snapshot *pub, const char *uid)
{
    const struct snap *s = (const struct snap *)pub;
    size_t i;

    if (s == NULL || uid == NULL || s->uid_ix == NULL)
        return NULL;
    for (i = hash_str(uid) & s->uid_mask; s->uid_ix[i] != 0; i = (i + 1) & s->uid_mask) {
        const struct ext_snap_pod *p = &s->pods[s->uid_ix[i] - 1];

        if (strcmp(p->uid, uid) == 0)
            return p;
    }
    return NULL;
}

/* ---- the cache ---------------------------------------------------------------------------- */

struct ext_cache {
    struct ext_cache_config cfg;

    pthread_mutex_t lock; /* guards the feed state, from here to cur_lock */
    pthread_cond_t wake;  /* CLOCK_MONOTONIC; the rebuild thread waits on it */
    struct hmap nodes, pods, assumed, seen;
    struct hmap nodes_next, pods_next; /* being listed (relist_begin .. relist_done) */
    bool nodes_synced, pods_synced, synced;
    bool offline;               /* loaded from a file: no watch will confirm an assumed pod */
    bool started;               /* ext_cache_start ran */
    bool dirty;                 /* the feed changed since the last collection */
    bool stop;                  /* the rebuild thread must end */
    int64_t last_build_mono;    /* CLOCK_MONOTONIC ms of the last collection */
    int64_t feed_ms;            /* Unix ms of the last feed event or current probe */
    int64_t started_ms;         /* Unix ms of ext_cache_start */
    int64_t probe_failures;     /* failed probes in a row */
    int64_t probe_down_ms;      /* Unix ms of the first of them */
    int64_t probe_logged_ms;    /* Unix ms of the last PROBE_FAILED note */
    struct kube_client *client; /* borrowed (online) */
    pthread_t probe_thread;
    bool probe_started;
    pthread_cond_t probe_wake; /* CLOCK_MONOTONIC; the probe thread waits on it */
    uint64_t next_version;
    uint64_t assume_seq;  /* ext_cache_assume calls so far; a snapshot's covers */
    uint64_t feed_errors; /* objects that failed to decode, failed rebuilds */
    struct kube_watch *wn, *wp;
    pthread_t thread;
    bool thread_started;

    pthread_mutex_t build_lock; /* one build at a time, so concurrent assumes share builds */
    pthread_mutex_t cur_lock;   /* guards cur only; held for a pointer copy and an increment */
    struct snap *cur;
};

static void set_dirty_locked(struct ext_cache *c)
{
    c->dirty = true;
    pthread_cond_signal(&c->wake);
}

/* ---- building ----------------------------------------------------------------------------- */

/* What step (1) copies out of the feed, owned by the build until it becomes the snapshot. */
struct draft {
    struct snap *s;
    struct lt_machine_spec *nodes; /* names into s->strings; idx order of collection */
    int64_t *max_pods;             /* likewise */
    size_t n_nodes;
    size_t n_pods;
};

static void draft_release(struct draft *d)
{
    snap_free(d->s);
    lt_free(d->nodes);
    lt_free(d->max_pods);
    memset(d, 0, sizeof(*d));
}

/* Under c->lock: drops the assumed pods older than the assume TTL (never offline). */
static void expire_assumed_locked(struct ext_cache *c, int64_t now)
{
    if (c->offline)
        return;
    for (size_t i = 0; i < c->assumed.nb; i++) {
        struct hent **pp = &c->assumed.b[i];

        while (*pp) {
            struct assumed_rec *a = (struct assumed_rec *)*pp;

            if (now - a->at_ms >= c->cfg.assume_ttl_ms) {
                *pp = a->h.next;
                c->assumed.n--;
                lt_free(a);
            } else {
                pp = &(*pp)->next;
            }
        }
    }
}

/* Under c->lock: copies the feed's nodes into d (names into *at) and numbers them (idx). */
static void copy_nodes_locked(struct ext_cache *c, struct draft *d, char **at)
{
    size_t k = 0;

    HMAP_FOREACH(&c->nodes, e)
    {
        struct node_rec *n = (struct node_rec *)e;
        size_t len = strlen(n->name) + 1;

        memcpy(*at, n->name, len);
        d->nodes[k].name = *at;
        d->nodes[k].cap = n->cap;
        d->max_pods[k] = n->max_pods;
        n->idx = k++;
        *at += len;
    }
    d->n_nodes = k;
}

/* Under c->lock, after copy_nodes_locked: copies the bound pods of the feed, then the assumed
 * pods, into s (strings into at). Returns the number of pods copied. */
static size_t copy_pods_locked(struct ext_cache *c, struct snap *s, char *at)
{
    size_t k = 0;

    HMAP_FOREACH(&c->pods, e)
    {
        const struct pod_rec *p = (const struct pod_rec *)e;
        const struct node_rec *n;
        struct ext_snap_pod *q = &s->pods[k];

        if (p->node[0] == '\0' ||
            (n = (const struct node_rec *)hmap_find_h(&c->nodes, p->node, p->node_hash)) == NULL)
            continue;
        memcpy(at, p->buf, p->slen); /* uid \0 ns \0 name \0 */
        q->uid = at;
        q->ns = at + (p->ns - p->buf);
        q->name = at + (p->name - p->buf);
        at += p->slen;
        q->priority = p->priority;
        q->start_ms = p->start_ms;
        q->sticky = p->sticky;
        q->req = p->req;
        q->node = n->idx;
        s->uid_hash[k] = p->h.hash;
        k++;
    }
    HMAP_FOREACH(&c->assumed, e)
    {
        const struct assumed_rec *a = (const struct assumed_rec *)e;
        const struct pod_rec *p =
            (const struct pod_rec *)hmap_find_h(&c->pods, a->h.key, a->h.hash);
        const struct node_rec *n =
            (const struct node_rec *)hmap_find_h(&c->nodes, a->node, a->node_hash);
        struct ext_snap_pod *q = &s->pods[k];

        if (n == NULL)
            continue;
        memcpy(at, a->buf, a->slen);
        q->uid = at;
        q->ns = at + (a->ns - a->buf);
        q->name = at + (a->name - a->buf);
        at += a->slen;
        q->sticky = a->sticky;
        if (p != NULL) { /* pending in the feed: its requests, priority, stickiness */
            q->priority = p->priority;
            q->start_ms = p->start_ms;
            q->sticky = p->sticky || a->sticky;
            q->req = p->req;
        } else if (a->has_req) { /* not in the feed yet: as the scheduler's request said */
            q->priority = a->priority;
            q->req = a->req;
        }
        q->assumed = true;
        q->node = n->idx;
        s->uid_hash[k] = a->h.hash;
        s->n_assumed++;
        k++;
    }
    return k;
}

/* Step (1), under c->lock: drops expired assumed pods, copies the feed into d. */
static int collect_locked(struct ext_cache *c, struct draft *d, struct lt_err *err)
{
    size_t bytes = 0, np = 0;
    int64_t now = mono_ms();
    char *at;
    struct snap *s;

    memset(d, 0, sizeof(*d));
    expire_assumed_locked(c, now);
    HMAP_FOREACH(&c->nodes, e)
    bytes += strlen(e->key) + 1;
    HMAP_FOREACH(&c->pods, e)
    {
        const struct pod_rec *p = (const struct pod_rec *)e;

        if (p->node[0]) {
            bytes += p->slen;
            np++;
        }
    }
    HMAP_FOREACH(&c->assumed, e)
    {
        bytes += ((const struct assumed_rec *)e)->slen;
        np++;
    }
    s = lt_calloc(1, sizeof(*s));
    d->s = s;
    d->nodes = lt_calloc(c->nodes.n, sizeof(*d->nodes));
    d->max_pods = lt_calloc(c->nodes.n ? c->nodes.n : 1, sizeof(*d->max_pods));
    if (s == NULL || d->nodes == NULL || d->max_pods == NULL)
        goto nomem;
    atomic_init(&s->refs, 1);
    s->strings = lt_malloc(bytes);
    s->pods = lt_calloc(np, sizeof(*s->pods));
    s->uid_hash = lt_calloc(np, sizeof(*s->uid_hash));
    if (s->strings == NULL || s->pods == NULL || s->uid_hash == NULL)
        goto nomem;
    at = s->strings;
    copy_nodes_locked(c, d, &at);
    d->n_pods = copy_pods_locked(c, s, at);
    s->pub.version = ++c->next_version;
    s->pub.feed_ms = c->feed_ms;
    s->covers = c->assume_seq;
    c->dirty = false;
    c->last_build_mono = now;
    return 0;
nomem:
    draft_release(d);
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for a snapshot of %zu nodes, %zu pods",
                      c->nodes.n, np);
}

static int cmp_node_name(const void *a, const void *b)
{
    return strcmp(((const struct lt_machine_spec *)a)->name,
                  ((const struct lt_machine_spec *)b)->name);
}

static int cmp_pod(const void *a, const void *b)
{
    const struct ext_snap_pod *x = a, *y = b;
    int r = strcmp(x->ns, y->ns);

    if (r == 0)
        r = strcmp(x->name, y->name);
    return r != 0 ? r : strcmp(x->uid, y->uid);
}

/* Sorts the n pods of one machine by namespace, name, uid, moving their hashes along. Groups
 * are small (kubelet runs at most maxPods, 110 by default), so insertion sort. */
struct pod_hash {
    struct ext_snap_pod p;
    uint64_t h;
};

static int cmp_pod_hash(const void *a, const void *b)
{
    return cmp_pod(&((const struct pod_hash *)a)->p, &((const struct pod_hash *)b)->p);
}

static int sort_group(struct ext_snap_pod *p, uint64_t *h, size_t n)
{
    if (n > 32) { /* a node with many pods (virtual kubelets have thousands) */
        struct pod_hash *t = lt_calloc(n, sizeof(*t));

        if (t == NULL)
            return LT_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            t[i].p = p[i];
            t[i].h = h[i];
        }
        qsort(t, n, sizeof(*t), cmp_pod_hash);
        for (size_t i = 0; i < n; i++) {
            p[i] = t[i].p;
            h[i] = t[i].h;
        }
        lt_free(t);
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        struct ext_snap_pod x = p[i];
        uint64_t hx = h[i];
        size_t j = i;

        for (; j > 0 && cmp_pod(&p[j - 1], &x) > 0; j--) {
            p[j] = p[j - 1];
            h[j] = h[j - 1];
        }
        p[j] = x;
        h[j] = hx;
    }
    return 0;
}

/* Groups s's np pods by machine (a counting sort over perm, the machine of each collection
 * index), each group by namespace, name, uid, into sorted and hashes, which s then owns.
 * end (n + 1 entries, zeroed) is scratch. 0 or LT_ENOMEM (sorted and hashes still the
 * caller's). */
static int group_pods(struct snap *s, const size_t *perm, size_t *end, size_t n, size_t np,
                      struct ext_snap_pod *sorted, uint64_t *hashes)
{
    for (size_t i = 0; i < np; i++)
        end[perm[s->pods[i].node] + 1]++;
    for (size_t m = 0; m < n; m++)
        end[m + 1] += end[m];
    for (size_t i = 0; i < np; i++) {
        size_t m = perm[s->pods[i].node];

        sorted[end[m]] = s->pods[i];
        sorted[end[m]].node = m;
        hashes[end[m]] = s->uid_hash[i];
        end[m]++;
    }
    for (size_t m = 0, lo = 0; m < n; m++) { /* end[m] is now the end of group m */
        if (end[m] - lo > 1 && sort_group(sorted + lo, hashes + lo, end[m] - lo) < 0)
            return LT_ENOMEM;
        lo = end[m];
    }
    lt_free(s->uid_hash);
    s->uid_hash = hashes;
    lt_free(s->pods);
    s->pods = sorted;
    s->pub.pods = s->pods;
    s->pub.n_pods = np;
    return 0;
}

/* Places s's pods on its cluster and attaches the configured policies. */
static int place_and_attach(const struct ext_cache *c, struct snap *s, struct lt_err *err)
{
    int rc;

    for (size_t i = 0; i < s->pub.n_pods; i++) {
        struct ext_snap_pod *p = &s->pods[i];
        struct lt_task t = {0};

        t.id = (int64_t)i;
        t.priority = p->priority;
        t.req = p->req;
        t.arrival_us = p->start_ms * 1000;
        t.start_us = p->start_ms * 1000;
        t.sticky = p->sticky;
        rc = lt_cluster_place(s->cl, p->node, &t, LT_PLACE_FORCE, &p->pid, err);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < sizeof(c->cfg.policies) / sizeof(c->cfg.policies[0]); i++) {
        if (c->cfg.policies[i] == NULL)
            continue;
        rc = lt_policy_attach(c->cfg.policies[i], s->cl, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The uid index of s's pods, at most half full. 0 or LT_ENOMEM. */
static int uid_index_build(struct snap *s)
{
    size_t np = s->pub.n_pods;

    s->uid_mask = 15;
    while (s->uid_mask + 1 < 2 * np)
        s->uid_mask = s->uid_mask * 2 + 1;
    s->uid_ix = lt_calloc(s->uid_mask + 1, sizeof(*s->uid_ix));
    if (s->uid_ix == NULL)
        return LT_ENOMEM;
    for (size_t i = 0; i < np; i++) {
        size_t j = s->uid_hash[i] & s->uid_mask;

        while (s->uid_ix[j] != 0)
            j = (j + 1) & s->uid_mask;
        s->uid_ix[j] = i + 1;
    }
    return 0;
}

/* Step (2), no lock: turns d into a finished snapshot (d->s), consuming d->nodes. */
static int build_draft(const struct ext_cache *c, struct draft *d, struct lt_err *err)
{
    struct snap *s = d->s;
    struct lt_cluster_spec spec = {0};
    struct lt_machine_spec *byname = NULL;
    size_t *perm = NULL, *end = NULL, n = d->n_nodes, np = d->n_pods;
    struct ext_snap_pod *sorted = NULL;
    uint64_t *hashes = NULL;
    int rc;

    byname = lt_calloc(n ? n : 1, sizeof(*byname));
    perm = lt_calloc(n ? n : 1, sizeof(*perm));
    end = lt_calloc(n + 1, sizeof(*end));
    sorted = lt_calloc(np ? np : 1, sizeof(*sorted));
    hashes = lt_calloc(np ? np : 1, sizeof(*hashes));
    s->max_pods = lt_calloc(n ? n : 1, sizeof(*s->max_pods));
    if (byname == NULL || perm == NULL || end == NULL || sorted == NULL || hashes == NULL ||
        s->max_pods == NULL)
        goto fail_nomem;
    /* Machines in node-name order; perm maps a collection index to the machine index. */
    memcpy(byname, d->nodes, n * sizeof(*byname));
    qsort(byname, n, sizeof(*byname), cmp_node_name);
    spec.machines = byname;
    spec.n_machines = n;
    if (n == 0)
        spec.ref = (struct lt_res){1, 1, 1}; /* lt_cluster_new needs a reference then */
    spec.seed = c->cfg.seed;
    s->cl = lt_cluster_new(&spec, err);
    if (s->cl == NULL) {
        rc = err && err->code ? err->code : LT_ENOMEM;
        goto fail;
    }
    s->pub.cluster = s->cl;
    for (size_t i = 0; i < n; i++) {
        perm[i] = lt_cluster_find(s->cl, d->nodes[i].name);
        s->max_pods[perm[i]] = d->max_pods[i];
    }
    s->pub.max_pods = s->max_pods;
    /* Pods grouped by machine, each group by namespace, name, uid. */
    if (group_pods(s, perm, end, n, np, sorted, hashes) < 0)
        goto fail_nomem;
    sorted = NULL;
    hashes = NULL;
    if ((rc = place_and_attach(c, s, err)) < 0)
        goto fail;
    if (uid_index_build(s) < 0)
        goto fail_nomem;
    s->pub.built_ms = wall_ms();
    lt_free(byname);
    lt_free(perm);
    lt_free(end);
    lt_free(d->nodes);
    lt_free(d->max_pods);
    d->nodes = NULL;
    d->max_pods = NULL;
    return 0;
fail_nomem:
    rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory building a snapshot");
fail:
    lt_free(byname);
    lt_free(perm);
    lt_free(end);
    lt_free(sorted);
    lt_free(hashes);
    return rc;
}

/* Step (3): makes s current unless a newer snapshot is; takes over the caller's reference. */
static void publish(struct ext_cache *c, struct snap *s)
{
    struct snap *old;

    pthread_mutex_lock(&c->cur_lock);
    if (c->cur == NULL || c->cur->pub.version < s->pub.version) {
        old = c->cur;
        c->cur = s;
    } else {
        old = s;
    }
    pthread_mutex_unlock(&c->cur_lock);
    ext_snapshot_release(old ? &old->pub : NULL);
}

/* Builds a snapshot of the feed as it is now and publishes it, unless the current snapshot
 * already covers assume number `covered` (0: always build). Takes build_lock for the whole
 * build and c->lock for step (1). */
static int build_publish(struct ext_cache *c, uint64_t covered, struct lt_err *err)
{
    struct draft d;
    int rc;

    pthread_mutex_lock(&c->build_lock);
    if (covered > 0) {
        bool done;

        pthread_mutex_lock(&c->cur_lock);
        done = c->cur != NULL && c->cur->covers >= covered;
        pthread_mutex_unlock(&c->cur_lock);
        if (done) { /* a build that started after the assume published it meanwhile */
            pthread_mutex_unlock(&c->build_lock);
            return 0;
        }
    }

    pthread_mutex_lock(&c->lock);
    rc = collect_locked(c, &d, err);
    pthread_mutex_unlock(&c->lock);
    if (rc == 0)
        rc = build_draft(c, &d, err);
    if (rc < 0) {
        draft_release(&d);
        pthread_mutex_lock(&c->lock);
        c->feed_errors++;
        c->dirty = true; /* try again at the next rebuild */
        pthread_mutex_unlock(&c->lock);
        pthread_mutex_unlock(&c->build_lock);
        return rc;
    }
    publish(c, d.s);
    pthread_mutex_unlock(&c->build_lock);
    return 0;
}

/* ---- the rebuild thread ------------------------------------------------------------------- */

static void wait_until(struct ext_cache *c, int64_t deadline_mono)
{
    struct timespec ts;

    if (deadline_mono == INT64_MAX) {
        pthread_cond_wait(&c->wake, &c->lock);
        return;
    }
    ts.tv_sec = deadline_mono / 1000;
    ts.tv_nsec = (long)(deadline_mono % 1000) * 1000000;
    pthread_cond_timedwait(&c->wake, &c->lock, &ts);
}

static void *rebuild_main(void *arg)
{
    struct ext_cache *c = arg;

    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        int64_t now = mono_ms(), deadline = INT64_MAX;

        if (!c->synced) {
            wait_until(c, deadline);
            continue;
        }
        if (c->dirty) {
            int64_t due = c->last_build_mono + c->cfg.rebuild_ms;

            if (now >= due) { /* the first build: last_build_mono is far in the past */
                pthread_mutex_unlock(&c->lock);
                (void)build_publish(c, 0, NULL); /* a failure is counted in feed_errors */
                pthread_mutex_lock(&c->lock);
                continue;
            }
            deadline = due;
        } else if (!c->offline) {
            /* The next TTL expiry makes the feed dirty. */
            HMAP_FOREACH(&c->assumed, e)
            {
                int64_t exp = ((const struct assumed_rec *)e)->at_ms + c->cfg.assume_ttl_ms;

                if (exp < deadline)
                    deadline = exp;
            }
            if (deadline <= now) {
                c->dirty = true;
                continue;
            }
        }
        wait_until(c, deadline);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* ---- public: lifetime ------------------------------------------------------------------- */

struct ext_cache *ext_cache_new(const struct ext_cache_config *cfg, struct lt_err *err)
{
    struct ext_cache *c;
    pthread_condattr_t ca;

    if (cfg == NULL || cfg->rebuild_ms < 0 || cfg->assume_ttl_ms <= 0 ||
        cfg->probe_interval_ms < 0) {
        lt_err_set(err, LT_EINVAL, 0, 0,
                   "cache: rebuild_ms must be >= 0 and assume_ttl_ms > 0 (got %lld, %lld)",
                   cfg ? (long long)cfg->rebuild_ms : 0LL,
                   cfg ? (long long)cfg->assume_ttl_ms : 0LL);
        return NULL;
    }
    c = lt_calloc(1, sizeof(*c));
    if (c == NULL) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the cache");
        return NULL;
    }
    c->cfg = *cfg;
    c->last_build_mono = INT64_MIN / 2;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->cur_lock, NULL);
    pthread_mutex_init(&c->build_lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &ca);
    pthread_cond_init(&c->probe_wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&c->thread, NULL, rebuild_main, c) != 0) {
        lt_err_set(err, LT_EIO, 0, 0, "cache: cannot start the rebuild thread: %s",
                   strerror(errno));
        ext_cache_free(c);
        return NULL;
    }
    c->thread_started = true;
    return c;
}

void ext_cache_free(struct ext_cache *c)
{
    struct kube_watch *wn, *wp;

    if (c == NULL)
        return;
    if (c->probe_started) { /* it reads c->wn and c->wp */
        pthread_mutex_lock(&c->lock);
        c->stop = true;
        pthread_cond_broadcast(&c->probe_wake);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->probe_thread, NULL);
    }
    pthread_mutex_lock(&c->lock);
    wn = c->wn;
    wp = c->wp;
    c->wn = c->wp = NULL;
    pthread_mutex_unlock(&c->lock);
    kube_watch_stop(wn); /* no callback runs after these return */
    kube_watch_stop(wp);
    if (c->thread_started) {
        pthread_mutex_lock(&c->lock);
        c->stop = true;
        pthread_cond_broadcast(&c->wake);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
    }
    hmap_clear(&c->nodes);
    hmap_clear(&c->pods);
    hmap_clear(&c->assumed);
    hmap_clear(&c->seen);
    hmap_clear(&c->nodes_next);
    hmap_clear(&c->pods_next);
    ext_snapshot_release(c->cur ? &c->cur->pub : NULL);
    pthread_cond_destroy(&c->wake);
    pthread_cond_destroy(&c->probe_wake);
    pthread_mutex_destroy(&c->cur_lock);
    pthread_mutex_destroy(&c->build_lock);
    pthread_mutex_destroy(&c->lock);
    lt_free(c);
}

struct ext_snapshot *ext_snapshot_acquire(struct ext_cache *c)
{
    struct snap *s;

    pthread_mutex_lock(&c->cur_lock);
    s = c->cur;
    if (s != NULL)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&c->cur_lock);
    return s ? &s->pub : NULL;
}

/* ---- feed: the watchers ------------------------------------------------------------------- */

/* Forgets an assumed pod once the watch shows it bound or gone. Caller holds c->lock. */
static void confirm_locked(struct ext_cache *c, const char *uid)
{
    lt_free(hmap_del(&c->assumed, uid));
}

static void feed_error_locked(struct ext_cache *c)
{
    c->feed_errors++;
}

static void notify(struct ext_cache *c, enum ext_feed_kind kind, const char *resource,
                   const struct lt_err *err, int64_t failures, int64_t down_ms)
{
    struct ext_feed_note n = {kind, resource, err, failures, down_ms};

    if (c->cfg.notify != NULL)
        c->cfg.notify(c->cfg.notify_arg, &n);
}

static void nodes_error(void *arg, const struct lt_err *err)
{
    notify(arg, EXT_FEED_WATCH_ERROR, "nodes", err, 0, 0);
}

static void pods_error(void *arg, const struct lt_err *err)
{
    notify(arg, EXT_FEED_WATCH_ERROR, "pods", err, 0, 0);
}

static void nodes_begin(void *arg)
{
    struct ext_cache *c = arg;

    pthread_mutex_lock(&c->lock);
    hmap_clear(&c->nodes_next); /* an abandoned LIST's partial state */
    pthread_mutex_unlock(&c->lock);
}

static void pods_begin(void *arg)
{
    struct ext_cache *c = arg;

    pthread_mutex_lock(&c->lock);
    hmap_clear(&c->pods_next);
    pthread_mutex_unlock(&c->lock);
}

static void nodes_event(void *arg, enum kube_event type, json_t *obj)
{
    struct ext_cache *c = arg;
    struct node_rec *r = NULL;
    const char *name;
    struct lt_err e;
    int rc = 0;

    if (type == KUBE_EVENT_ERROR)
        return;
    lt_err_init(&e, NULL);
    if (type == KUBE_EVENT_DELETED) {
        name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        pthread_mutex_lock(&c->lock);
        c->feed_ms = wall_ms();
        if (name != NULL) {
            lt_free(hmap_del(&c->nodes, name));
            set_dirty_locked(c);
        } else {
            feed_error_locked(c);
        }
        pthread_mutex_unlock(&c->lock);
        return;
    }
    if (type != KUBE_EVENT_BOOKMARK)
        rc = node_decode(obj, "Node", &r, &e);
    if (rc < 0)
        notify(c, EXT_FEED_UNDECODABLE, "nodes", &e, 0, 0);
    pthread_mutex_lock(&c->lock);
    c->feed_ms = wall_ms();
    if (rc < 0) {
        feed_error_locked(c);
    } else if (r != NULL) {
        rc = hmap_replace(type == KUBE_EVENT_LISTED ? &c->nodes_next : &c->nodes, &r->h);
        if (rc < 0) {
            lt_free(r);
            feed_error_locked(c);
        } else if (type != KUBE_EVENT_LISTED) {
            set_dirty_locked(c);
        }
    }
    pthread_mutex_unlock(&c->lock);
}

static void pods_event(void *arg, enum kube_event type, json_t *obj)
{
    struct ext_cache *c = arg;
    struct pod_rec *r = NULL;
    struct ext_pod p;
    struct hmap *m;
    struct lt_err e;
    int rc = 0;

    if (type == KUBE_EVENT_ERROR || type == KUBE_EVENT_BOOKMARK) {
        pthread_mutex_lock(&c->lock);
        c->feed_ms = wall_ms();
        pthread_mutex_unlock(&c->lock);
        return;
    }
    if (type == KUBE_EVENT_DELETED) {
        const char *uid =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));

        pthread_mutex_lock(&c->lock);
        c->feed_ms = wall_ms();
        if (uid != NULL) {
            lt_free(hmap_del(&c->pods, uid));
            confirm_locked(c, uid);
            set_dirty_locked(c);
        } else {
            feed_error_locked(c);
        }
        pthread_mutex_unlock(&c->lock);
        return;
    }
    lt_err_init(&e, NULL);
    rc = pod_decode(obj, "Pod", &p, &r, &e);
    if (rc < 0)
        notify(c, EXT_FEED_UNDECODABLE, "pods", &e, 0, 0);
    m = type == KUBE_EVENT_LISTED ? &c->pods_next : &c->pods;
    pthread_mutex_lock(&c->lock);
    c->feed_ms = wall_ms();
    if (rc < 0) {
        feed_error_locked(c);
    } else if (r == NULL) { /* terminated: counts nowhere, no longer assumed */
        lt_free(hmap_del(m, p.uid));
        confirm_locked(c, p.uid);
    } else {
        if (r->node[0] && type != KUBE_EVENT_LISTED) /* a listed one: at relist_done */
            confirm_locked(c, r->h.key);
        rc = hmap_replace(m, &r->h);
        if (rc < 0) {
            lt_free(r);
            feed_error_locked(c);
        }
    }
    if (type != KUBE_EVENT_LISTED)
        set_dirty_locked(c);
    pthread_mutex_unlock(&c->lock);
}

/* Swaps the listed table in for the live one. Caller holds c->lock. */
static void swap_in_locked(struct ext_cache *c, struct hmap *live, struct hmap *next, bool *synced)
{
    struct hmap old = *live;

    *live = *next;
    memset(next, 0, sizeof(*next));
    hmap_clear(&old);
    *synced = true;
    c->synced = c->nodes_synced && c->pods_synced;
    c->feed_ms = wall_ms();
    set_dirty_locked(c);
}

static void nodes_done(void *arg, const char *rv)
{
    struct ext_cache *c = arg;

    (void)rv;
    pthread_mutex_lock(&c->lock);
    swap_in_locked(c, &c->nodes, &c->nodes_next, &c->nodes_synced);
    pthread_mutex_unlock(&c->lock);
}

static void pods_done(void *arg, const char *rv)
{
    struct ext_cache *c = arg;

    (void)rv;
    pthread_mutex_lock(&c->lock);
    swap_in_locked(c, &c->pods, &c->pods_next, &c->pods_synced);
    /* Assumed pods the list shows bound now count as bound pods. (Confirming them while the
     * LIST ran would have left a window in which the live table did not show them bound.) */
    for (size_t i = 0; i < c->assumed.nb; i++) {
        struct hent **pp = &c->assumed.b[i];

        while (*pp) {
            const struct pod_rec *p =
                (const struct pod_rec *)hmap_find_h(&c->pods, (*pp)->key, (*pp)->hash);

            if (p != NULL && p->node[0]) {
                struct hent *e = *pp;

                *pp = e->next;
                c->assumed.n--;
                lt_free(e);
            } else {
                pp = &(*pp)->next;
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
}

static const struct kube_watch_ops node_ops = {nodes_begin, nodes_event, nodes_done, nodes_error};
static const struct kube_watch_ops pod_ops = {pods_begin, pods_event, pods_done, pods_error};

/* ---- feed: the probe ---------------------------------------------------------------------- */

/* Waits until mono ms or stop; true if stopping. Caller holds c->lock. */
static bool probe_wait_locked(struct ext_cache *c, int64_t ms)
{
    struct timespec ts;

    ts = kube_mono_after(ms);
    while (!c->stop)
        if (pthread_cond_timedwait(&c->probe_wake, &c->lock, &ts) == ETIMEDOUT)
            break;
    return c->stop;
}

static void *probe_main(void *arg)
{
    struct ext_cache *c = arg;
    int64_t every = c->cfg.probe_interval_ms;

    pthread_mutex_lock(&c->lock);
    while (!probe_wait_locked(c, every)) {
        struct kube_watch_stats sn, sp;
        struct kube_watch *wn = c->wn, *wp = c->wp;
        int64_t failures, down = 0, now;
        bool log_it = false, recovered = false;
        struct lt_err e;
        int rc;

        pthread_mutex_unlock(&c->lock);
        lt_err_init(&e, NULL);
        rc = kube_probe(c->client, "/api/v1/nodes?limit=1&resourceVersion=0", every, &e);
        kube_watch_stats(wn, &sn);
        kube_watch_stats(wp, &sp);
        pthread_mutex_lock(&c->lock);
        now = wall_ms();
        if (rc == 0) {
            recovered = c->probe_failures > 0;
            failures = c->probe_failures;
            down = now - c->probe_down_ms;
            c->probe_failures = 0;
            if (sn.watching && sp.watching && sn.synced && sp.synced)
                c->feed_ms = now;
        } else {
            if (c->probe_failures++ == 0)
                c->probe_down_ms = now;
            failures = c->probe_failures;
            down = now - c->probe_down_ms;
            log_it = failures == 1 || now - c->probe_logged_ms >= 30000;
            if (log_it)
                c->probe_logged_ms = now;
        }
        pthread_mutex_unlock(&c->lock);
        if (recovered) {
            kube_watch_retry_now(wn);
            kube_watch_retry_now(wp);
            notify(c, EXT_FEED_PROBE_OK, NULL, NULL, failures, down);
        }
        if (log_it)
            notify(c, EXT_FEED_PROBE_FAILED, NULL, &e, failures, down);
        if (rc < 0 && failures >= 2) {
            kube_watch_kick(wn);
            kube_watch_kick(wp);
        }
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int ext_cache_start(struct ext_cache *c, struct kube_client *client, struct lt_err *err)
{
    struct kube_watch *wn, *wp;

    pthread_mutex_lock(&c->lock);
    if (c->started || c->offline) {
        pthread_mutex_unlock(&c->lock);
        return lt_err_set(err, LT_EINVAL, 0, 0, "cache: already fed (%s)",
                          c->offline ? "from a cluster file" : "by the API server");
    }
    c->started = true;
    c->started_ms = wall_ms();
    c->client = client;
    pthread_mutex_unlock(&c->lock);
    wn = kube_watch_start(client, "/api/v1/nodes", NULL, &node_ops, c, err);
    if (wn == NULL)
        goto fail;
    wp = kube_watch_start(client, "/api/v1/pods", NULL, &pod_ops, c, err);
    if (wp == NULL) {
        kube_watch_stop(wn);
        goto fail;
    }
    pthread_mutex_lock(&c->lock);
    c->wn = wn;
    c->wp = wp;
    if (c->cfg.probe_interval_ms > 0) {
        if (pthread_create(&c->probe_thread, NULL, probe_main, c) != 0) {
            c->wn = c->wp = NULL;
            pthread_mutex_unlock(&c->lock);
            kube_watch_stop(wn);
            kube_watch_stop(wp);
            lt_err_set(err, LT_EIO, 0, 0, "cache: cannot start the probe thread: %s",
                       strerror(errno));
            goto fail;
        }
        c->probe_started = true;
    }
    pthread_mutex_unlock(&c->lock);
    return 0;
fail:
    pthread_mutex_lock(&c->lock);
    c->started = false;
    hmap_clear(&c->nodes_next);
    hmap_clear(&c->pods_next);
    pthread_mutex_unlock(&c->lock);
    return err && err->code ? err->code : LT_EIO;
}

/* ---- feed: the cluster file --------------------------------------------------------------- */

/* Adds item obj (at path) to the node or pod table; kind is "Node" or "Pod". */
static int load_item(struct hmap *nodes, struct hmap *pods, json_t *obj, const char *kind,
                     const char *path, struct lt_err *err)
{
    int rc;

    if (strcmp(kind, "Node") == 0) {
        struct node_rec *r;

        rc = node_decode(obj, path, &r, err);
        if (rc < 0)
            return rc;
        if (hmap_find(nodes, r->name) != NULL) {
            rc = lt_err_set(err, LT_EINVAL, 0, 0, "%s.metadata.name: duplicate node '%s'", path,
                            r->name);
            lt_free(r);
            return rc;
        }
        rc = hmap_put(nodes, &r->h);
        if (rc < 0)
            lt_free(r);
        return rc < 0 ? lt_err_set(err, rc, 0, 0, "out of memory") : 0;
    } else {
        struct pod_rec *r;
        struct ext_pod p;

        rc = pod_decode(obj, path, &p, &r, err);
        if (rc < 0 || r == NULL)
            return rc;
        if (hmap_find(pods, r->h.key) != NULL) {
            rc = lt_err_set(err, LT_EINVAL, 0, 0, "%s.metadata.uid: duplicate pod uid '%s'", path,
                            r->h.key);
            lt_free(r);
            return rc;
        }
        rc = hmap_put(pods, &r->h);
        if (rc < 0)
            lt_free(r);
        return rc < 0 ? lt_err_set(err, rc, 0, 0, "out of memory") : 0;
    }
}

/* items of a NodeList or PodList (list at path); kind NULL takes each item's own kind. */
static int load_items(struct hmap *nodes, struct hmap *pods, json_t *list, const char *path,
                      const char *kind, struct lt_err *err)
{
    char at[64], sub[96];
    json_t *items, *it;
    size_t i;

    snprintf(at, sizeof(at), "%s%sitems", path, path[0] ? "." : "");
    if (!json_is_object(list))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected a %s object",
                          path[0] ? path : "top level",
                          kind ? (strcmp(kind, "Node") == 0 ? "NodeList" : "PodList") : "List");
    items = json_object_get(list, "items");
    if (items == NULL || json_is_null(items))
        return 0; /* an empty list marshals items as null */
    if (!json_is_array(items))
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an array", at);
    json_array_foreach(items, i, it)
    {
        const char *k = kind;
        int rc;

        snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
        if (k == NULL) {
            k = json_string_value(json_object_get(it, "kind"));
            if (k == NULL || (strcmp(k, "Node") != 0 && strcmp(k, "Pod") != 0))
                return lt_err_set(err, LT_EPARSE, 0, 0,
                                  "%s.kind: expected \"Node\" or \"Pod\"%s%.64s%s", sub,
                                  k ? ", got \"" : "", k ? k : "", k ? "\"" : "");
        }
        rc = load_item(nodes, pods, it, k, sub, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ext_cache_load_file(struct ext_cache *c, const char *path, struct lt_err *err)
{
    struct hmap nodes = {0}, pods = {0}, old_nodes, old_pods;
    struct lt_err e;
    json_error_t je;
    json_t *root;
    struct stat st;
    FILE *f;
    int rc;

    if (c == NULL || path == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "cache: NULL argument");
    pthread_mutex_lock(&c->lock);
    if (c->started) {
        pthread_mutex_unlock(&c->lock);
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: the cache is already fed by the API server",
                          path);
    }
    pthread_mutex_unlock(&c->lock);
    lt_err_init(&e, path);
    /* Opened here, not by json_load_file: a directory opens for reading and would then be
     * reported as empty JSON, and a missing file as "-1:-1: unable to open". */
    f = fopen(path, "r");
    if (f == NULL || fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        int en = f == NULL ? errno : S_ISDIR(st.st_mode) ? EISDIR : errno;

        if (f != NULL)
            fclose(f);
        lt_err_set_source(err, path);
        return lt_err_set(err, LT_EIO, 0, 0, "%s: cannot read: %s", path, strerror(en));
    }
    root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (root == NULL) {
        lt_err_set_source(err, path);
        return lt_err_set(err, LT_EPARSE, je.line, je.column, "%s:%d:%d: %s", path, je.line,
                          je.column, je.text);
    }
    if (!json_is_object(root)) {
        rc = lt_err_set(&e, LT_EPARSE, 0, 0,
                        "top level: expected an object (a v1 List, or {\"nodes\": NodeList, "
                        "\"pods\": PodList})");
    } else if (json_object_get(root, "items") != NULL) {
        rc = load_items(&nodes, &pods, root, "", NULL, &e);
    } else if (json_object_get(root, "nodes") != NULL && json_object_get(root, "pods") != NULL) {
        rc = load_items(&nodes, &pods, json_object_get(root, "nodes"), "nodes", "Node", &e);
        if (rc == 0)
            rc = load_items(&nodes, &pods, json_object_get(root, "pods"), "pods", "Pod", &e);
    } else {
        rc = lt_err_set(&e, LT_EPARSE, 0, 0,
                        "top level: expected \"items\" (a v1 List) or both \"nodes\" and \"pods\"");
    }
    json_decref(root);
    if (rc < 0) {
        hmap_clear(&nodes);
        hmap_clear(&pods);
        lt_err_set_source(err, path);
        return lt_err_set(err, e.code, 0, 0, "%s: %s", path, e.text);
    }
    pthread_mutex_lock(&c->lock);
    old_nodes = c->nodes;
    old_pods = c->pods;
    c->nodes = nodes;
    c->pods = pods;
    c->offline = true;
    c->synced = c->nodes_synced = c->pods_synced = true;
    c->feed_ms = wall_ms();
    c->dirty = true;
    pthread_mutex_unlock(&c->lock);
    hmap_clear(&old_nodes);
    hmap_clear(&old_pods);
    rc = build_publish(c, 0, err);
    if (rc < 0)
        lt_err_set_source(err, path);
    return rc;
}

/* ---- assume ------------------------------------------------------------------------------- */

void ext_cache_note_pod(struct ext_cache *c, const struct ext_pod *p)
{
    struct seen_rec *r;
    size_t len;

    if (c == NULL || p == NULL || p->uid == NULL || p->uid[0] == '\0')
        return;
    len = strlen(p->uid) + 1;
    r = lt_malloc(sizeof(*r) + len);
    if (r == NULL)
        return; /* a bind then counts the pod with zero requests, as before */
    memcpy(r->buf, p->uid, len);
    r->h.key = r->buf;
    r->priority = p->priority;
    r->sticky = p->sticky;
    r->req.cpu = (double)p->req.cpu_milli;
    r->req.mem = (double)p->req.mem_bytes;
    r->req.disk = (double)p->req.ephemeral_bytes;
    pthread_mutex_lock(&c->lock);
    if (c->seen.n >= SEEN_MAX && hmap_find(&c->seen, r->buf) == NULL)
        hmap_clear(&c->seen);
    if (hmap_replace(&c->seen, &r->h) < 0)
        lt_free(r);
    pthread_mutex_unlock(&c->lock);
}

int ext_cache_assume(struct ext_cache *c, const char *ns, const char *name, const char *uid,
                     const char *node, bool *known, struct lt_err *err)
{
    return ext_cache_assume_sticky(c, ns, name, uid, node, false, known, err);
}

int ext_cache_assume_sticky(struct ext_cache *c, const char *ns, const char *name, const char *uid,
                            const char *node, bool sticky, bool *known, struct lt_err *err)
{
    const struct pod_rec *p;
    struct assumed_rec *a;
    const char *s[4];
    const char *o[4];
    uint64_t seq;
    size_t len;
    int rc;

    if (c == NULL || uid == NULL || uid[0] == '\0' || node == NULL || node[0] == '\0')
        return lt_err_set(err, LT_EINVAL, 0, 0, "assume: the pod uid and the node are required");
    s[0] = uid;
    s[1] = ns ? ns : "";
    s[2] = name ? name : "";
    s[3] = node;
    len = packed_len(s, 4);
    a = lt_malloc(sizeof(*a) + len);
    if (a == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory assuming pod '%s'", uid);
    pack(a->buf, s, o, 4);
    a->h.key = o[0];
    a->ns = o[1];
    a->name = o[2];
    a->node = o[3];
    a->slen = len - (strlen(node) + 1);
    a->node_hash = hash_str(node);
    a->at_ms = mono_ms();
    a->sticky = sticky;
    pthread_mutex_lock(&c->lock);
    if (hmap_find(&c->nodes, node) == NULL) {
        pthread_mutex_unlock(&c->lock);
        lt_free(a);
        return lt_err_set(err, LT_ENOTFOUND, 0, 0, "assume: unknown node '%s' (pod %s/%s)", node,
                          s[1], s[2]);
    }
    p = (const struct pod_rec *)hmap_find(&c->pods, uid);
    a->has_req = false;
    if (p == NULL) {
        const struct seen_rec *q = (const struct seen_rec *)hmap_find(&c->seen, uid);

        if (q != NULL) {
            a->has_req = true;
            a->priority = q->priority;
            a->req = q->req;
            a->sticky = a->sticky || q->sticky;
        }
    }
    if (known != NULL)
        *known = p != NULL || a->has_req;
    if (p != NULL && p->node[0] != '\0') {
        lt_free(a); /* the watch already shows it bound: it counts as a bound pod */
        rc = 0;
    } else {
        rc = hmap_replace(&c->assumed, &a->h);
        if (rc < 0)
            lt_free(a);
        pthread_cond_signal(&c->wake); /* the rebuild thread's next TTL deadline changed */
    }
    seq = ++c->assume_seq;
    pthread_mutex_unlock(&c->lock);
    if (rc < 0)
        return lt_err_set(err, rc, 0, 0, "out of memory assuming pod '%s'", uid);
    return build_publish(c, seq, err);
}

/* ---- stats -------------------------------------------------------------------------------- */

void ext_cache_stats(struct ext_cache *c, struct ext_cache_stats *out)
{
    struct ext_snapshot *s = ext_snapshot_acquire(c);
    bool published = s != NULL;
    struct kube_watch_stats ws;
    int64_t now = wall_ms();

    memset(out, 0, sizeof(*out));
    if (s != NULL) {
        out->snapshot_version = s->version;
        out->snapshot_age_ms = now - s->built_ms;
        out->nodes = lt_cluster_size(s->cluster);
        out->pods = s->n_pods;
        out->assumed = ((const struct snap *)s)->n_assumed;
        ext_snapshot_release(s);
    }
    pthread_mutex_lock(&c->lock);
    /* Ready means decisions can be made: the feed has synced and its first snapshot is out
     * (the rebuild thread publishes it a moment after the lists complete). */
    out->synced = c->synced && published;
    out->feed_age_ms = c->offline   ? 0
                       : c->feed_ms ? now - c->feed_ms
                       : c->started ? now - c->started_ms
                                    : 0;
    out->probe_failures = c->probe_failures;
    out->feed_errors = c->feed_errors;
    if (c->wn != NULL) {
        kube_watch_stats(c->wn, &ws);
        out->watch_restarts += ws.watch_restarts;
        out->relists += ws.relists;
        out->feed_errors += ws.errors;
    }
    if (c->wp != NULL) {
        kube_watch_stats(c->wp, &ws);
        out->watch_restarts += ws.watch_restarts;
        out->relists += ws.relists;
        out->feed_errors += ws.errors;
    }
    pthread_mutex_unlock(&c->lock);
}
