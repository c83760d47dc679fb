/* cache.h -- the extender's view of the cluster: nodes and pods, as immutable snapshots.
 *
 * The cache is fed by the list+watch of extender/kube.h (nodes and pods), or once from a file
 * (offline mode, --cluster-file: nodes and pods as the API server lists them). Decisions never
 * read the feed's state: they acquire the current snapshot, an immutable, reference-counted
 * object (STYLE.md R10), use it without locks, and release it. A new snapshot is built from the
 * feed's state off the request path (at most every rebuild_ms while events arrive), and at
 * once after ext_cache_assume, so a pod the extender just bound counts against its node for
 * the next request even before the watch reports it.
 *
 * A snapshot holds a liblotus cluster (lt_cluster.h): one machine per node, in node-name
 * order, with the node's allocatable cpu (millicores), memory and ephemeral-storage (bytes)
 * as capacity (a resource the node does not report gets capacity 1, so only a zero request
 * fits it) and its allocatable pod count in max_pods, and one placement per pod that is bound to a
 * node and not terminated (phase Succeeded/Failed, or deleted), placed with LT_PLACE_FORCE since a
 * node may be overcommitted; plus the assumed pods. The placement's task id is the pod's position
 * in snap->pods. snap->pods is grouped by machine index, each group ordered by namespace, name. The
 * cluster is shared by every thread holding the snapshot: use it only through const functions
 * (lt_cluster_* queries, lt_policy_rank, lt_policy_choose); a what-if placement needs its own
 * arithmetic, never a mutation of the snapshot.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_CACHE_H
#define EXT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube.h"
#include "lt_cluster.h"
#include "lt_err.h"
#include "lt_score.h"

/* One pod of a snapshot. Strings are owned by the snapshot. */
struct ext_snap_pod {
    const char *ns, *name, *uid;
    int32_t priority;  /* spec.priority */
    int64_t start_ms;  /* status.startTime (else metadata.creationTimestamp), Unix ms; 0 if none */
    bool sticky;       /* lotus.io/sticky: "true" (label or annotation) */
    bool assumed;      /* bound by this extender, not yet seen bound by the watch */
    struct lt_res req; /* effective requests (cpu millicores, memory bytes, ephemeral bytes) */
    size_t node;       /* machine index in snap->cluster */
    size_t pid;        /* its placement id in snap->cluster */
};

struct ext_snapshot {
    uint64_t version;                 /* increases with every snapshot of one cache */
    int64_t built_ms;                 /* when it was built (Unix ms) */
    int64_t feed_ms;                  /* time of the last feed event it includes (Unix ms) */
    const struct lt_cluster *cluster; /* owned; the configured policies are attached */
    const struct ext_snap_pod *pods;  /* n_pods pods, the placements of cluster */
    size_t n_pods;
    const int64_t *max_pods; /* per machine index: allocatable "pods" (NodeResourcesFit's pod
                              * limit); 0 when the node does not report it (no limit). NULL:
                              * no node has a limit */
    /* private: reference count (atomic), owned strings */
};

/* What the feed tells its owner, for its log (main.c). Called on a feed thread with no lock of
 * the cache held; err and resource are borrowed for the call. */
enum ext_feed_kind {
    EXT_FEED_WATCH_ERROR,  /* a LIST or WATCH of resource failed; retried after a backoff */
    EXT_FEED_UNDECODABLE,  /* a watched or listed object of resource was dropped: err says why */
    EXT_FEED_PROBE_FAILED, /* the API server probe failed: the first failure, then every 30 s */
    EXT_FEED_PROBE_OK      /* the probe succeeded again after failures (down_ms, failures) */
};

struct ext_feed_note {
    enum ext_feed_kind kind;
    const char *resource;     /* "nodes" or "pods"; NULL for the probe */
    const struct lt_err *err; /* NULL for EXT_FEED_PROBE_OK */
    int64_t failures;         /* probe failures in a row (PROBE_*) */
    int64_t down_ms;          /* since the first of them (PROBE_*) */
};

/* ext_cache_new checks rebuild_ms >= 0 (0: rebuild at every change) and assume_ttl_ms > 0. */
struct ext_cache_config {
    int64_t rebuild_ms;    /* minimum time between two snapshots while events arrive */
    int64_t assume_ttl_ms; /* drop an assumed pod the watch never confirms after this (online
                            * only: offline, nothing would ever confirm it) */
    const struct lt_policy *policies[4]; /* attached to every snapshot's cluster (may be NULL) */
    uint64_t seed;                       /* cluster seed (randfirstfit order) */
    /* Online only: every probe_interval_ms (0: never) the cache GETs one node from the API
     * server, bounded by the same time. A success while both watches stream counts as contact
     * (the feed is current: a quiet cluster sends no events); a failure is reported, and after
     * two in a row both watches are abandoned and retried (a hung server's stream would
     * otherwise stay open until the low-speed window ends it). */
    int64_t probe_interval_ms;
    void (*notify)(void *arg, const struct ext_feed_note *n); /* may be NULL */
    void *notify_arg;
};

struct ext_cache;
struct ext_pod; /* ext_codec.h */

/* A new, empty, unsynced cache. NULL with err set on LT_ENOMEM or a bad config. */
struct ext_cache *ext_cache_new(const struct ext_cache_config *cfg, struct lt_err *err);

/* Stops the feed (if any) and frees the cache; snapshots still acquired stay valid until
 * released. NULL is a no-op. */
void ext_cache_free(struct ext_cache *c);

/* Offline mode: loads nodes and pods from path once and marks the cache synced. The file is
 * one JSON object: a v1 List (as `kubectl get nodes,pods -o json` prints it) whose items are
 * Nodes and Pods, or {"nodes": NodeList, "pods": PodList}. Errors name the file and the JSON
 * path. */
LT_MUST_CHECK int ext_cache_load_file(struct ext_cache *c, const char *path, struct lt_err *err);

/* Online mode: starts the list+watch of /api/v1/nodes and /api/v1/pods on client (borrowed;
 * must outlive the cache). The cache is synced once both lists are complete. */
LT_MUST_CHECK int ext_cache_start(struct ext_cache *c, struct kube_client *client,
                                  struct lt_err *err);

/* The current snapshot, with a reference the caller must release; NULL until synced. Never
 * blocks on a rebuild. */
struct ext_snapshot *ext_snapshot_acquire(struct ext_cache *c);
/* Drops a reference; the last one frees the snapshot. NULL is a no-op. Any thread. */
void ext_snapshot_release(struct ext_snapshot *s);

/* The pod of s with this uid (borrowed from s), or NULL: maps the UIDs of a preemption
 * request's NodeNameToMetaVictims to pods. O(1) expected. */
const struct ext_snap_pod *ext_snapshot_find_pod(const struct ext_snapshot *s, const char *uid);

/* Remembers pod p (its uid, requests, priority, stickiness) as a filter or prioritize request
 * carried it, for a later ext_cache_assume of a pod the watch has not shown yet. The last
 * 4,096 such pods at most. Thread-safe. */
void ext_cache_note_pod(struct ext_cache *c, const struct ext_pod *p);

/* Records that the extender bound pod (ns, name, uid) to node and publishes a snapshot that
 * counts it before returning. The pod's requests, priority and stickiness come from the
 * cache's own copy of the (pending) pod, else from the last request that carried it
 * (ext_cache_note_pod); a pod known from neither is counted with zero requests and *known is
 * set false (the caller logs it). A pod the watch already shows bound
 * is not assumed again (it counts once). LT_ENOTFOUND if node is not in the cache (nothing is
 * recorded), LT_EINVAL for an empty uid or node, LT_ENOMEM. Thread-safe. */
LT_MUST_CHECK int ext_cache_assume(struct ext_cache *c, const char *ns, const char *name,
                                   const char *uid, const char *node, bool *known,
                                   struct lt_err *err);

/* ext_cache_assume, and if sticky, the assumed pod counts as sticky (lotus.io/sticky) even
 * before the watch reports the label the extender set (HYBRID's pool, docs/extender.md). */
LT_MUST_CHECK int ext_cache_assume_sticky(struct ext_cache *c, const char *ns, const char *name,
                                          const char *uid, const char *node, bool sticky,
                                          bool *known, struct lt_err *err);

/* For /readyz and /metrics. nodes, pods and assumed describe the current snapshot (pods = the
 * counted pods, assumed ones included); the watcher counters are summed over both watchers;
 * feed_errors adds the objects the cache could not decode (they are skipped). Thread-safe. */
struct ext_cache_stats {
    bool synced; /* both lists complete and their first snapshot published (/readyz) */
    uint64_t snapshot_version;
    int64_t snapshot_age_ms; /* now - built_ms of the current snapshot */
    int64_t feed_age_ms;     /* now - the last contact with the API server that showed the
                              * feed current: an event, a completed LIST, or a probe while both
                              * watches stream; before any, since ext_cache_start; 0 offline */
    int64_t probe_failures;  /* failed API server probes in a row (0: the last one succeeded) */
    size_t nodes, pods, assumed;
    uint64_t watch_restarts, relists, feed_errors;
};
void ext_cache_stats(struct ext_cache *c, struct ext_cache_stats *out);

#endif
