/* kube.h -- the extender's Kubernetes API client: configuration, list+watch, pods/binding.
 *
 * Three pieces, all over libcurl:
 *
 *   struct kube_config  caller storage: the API server URL, token file, CA file and the retry
 *                       knobs; filled by kube_config_init() (defaults) and then by flags or by
 *                       kube_config_in_cluster() (service-account environment and files).
 *   struct kube_client  owns a copy of the configuration and the bearer token, which it
 *                       re-reads from the token file every token_reread_ms and after a 401.
 *                       Thread-safe: any number of watchers and binding threads share one.
 *   struct kube_watch   one thread per resource (nodes, pods): LIST with paging, then WATCH
 *                       from the list's resourceVersion; relists on 410, re-watches with
 *                       backoff on errors. Events reach the caller through callbacks, called
 *                       on the watcher's own thread, one at a time, with no lock held.
 *
 * docs/extender-kube.md states the retry and relist rules and the counters; the protocol
 * comes from ../shared/spec/extender-protocol.md sections 3.3-3.5.
 *
 * Global state: libcurl's curl_global_init() is the only process-wide state. Call
 * kube_global_init() once in main() before any thread starts and kube_global_cleanup() after
 * every client is freed. Nothing else in this module is global.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef KUBE_H
#define KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "lt_err.h"

#define KUBE_SERVER_MAX 512   /* bytes of "https://host:port" incl. NUL; DNS names are <= 253 */
#define KUBE_PATH_MAX   4096  /* bytes of a file path incl. NUL (Linux PATH_MAX) */
#define KUBE_TOKEN_MAX  16384 /* a service-account JWT is ~1 KiB; projected ones stay < 4 KiB */

/* The default service-account directory of a pod (spec section 3.4). */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Connection settings and retry knobs. Caller storage; plain value type. */
struct kube_config {
    char server[KUBE_SERVER_MAX];   /* "https://10.0.0.1:443"; no trailing slash */
    char token_file[KUBE_PATH_MAX]; /* bearer token file; "" sends no Authorization */
    char ca_file[KUBE_PATH_MAX];    /* PEM CA bundle for the server; "" uses the system's */
    bool insecure;                  /* skip TLS peer and host checks (tests only) */
    int64_t token_reread_ms;        /* re-read the token file this often (default 60 s) */
    int64_t connect_timeout_ms;     /* TCP+TLS connect timeout (default 10 s) */
    int64_t request_timeout_ms;     /* whole LIST page (default 30 s) */
    int64_t write_timeout_ms;       /* whole binding or label request (default 30 s; the
                                     * extender sets --bind-timeout) */
    int64_t backoff_initial_ms;     /* first retry delay after a failure (default 500 ms) */
    int64_t backoff_max_ms;         /* cap of the doubling delay (default 30 s) */
    int watch_timeout_min_s;        /* timeoutSeconds drawn in [min, max) (default 300) */
    int watch_timeout_max_s;        /* (default 600, as client-go) */
    int watch_silence_s;            /* a WATCH silent this long has stalled (default 90: the
                                     * server bookmarks at least once a minute) */
    size_t list_page_limit;         /* LIST ?limit= per page (default 500); 0 = no paging */
    size_t max_line_bytes;          /* longest WATCH line accepted (default 16 MiB) */
    size_t max_body_bytes;          /* longest LIST page or response body (default 256 MiB) */
    uint64_t seed;                  /* seed of the backoff jitter and the watch timeouts */
};

/* Sets every field to its default: empty server, no token, no CA, the defaults above. */
void kube_config_init(struct kube_config *cfg);

/* Sets cfg->server from url after checking it starts with http:// or https:// and fits;
 * drops trailing slashes. LT_EINVAL on a bad URL (cfg->server unchanged). */
int kube_config_set_server(struct kube_config *cfg, const char *url,
                           struct lt_err *err) LT_MUST_CHECK;

/* In-cluster configuration (client-go rest.InClusterConfig): server = https://
 * JoinHostPort($KUBERNETES_SERVICE_HOST, $KUBERNETES_SERVICE_PORT) (IPv6 hosts bracketed),
 * token_file = sa_dir/token, ca_file = sa_dir/ca.crt; sa_dir NULL means KUBE_SA_DIR.
 * Returns LT_ENOTFOUND if either variable is unset or empty ("not in a cluster"), LT_EIO if
 * the token or CA file cannot be read, LT_EINVAL if the URL does not fit. On failure cfg's
 * server, token_file and ca_file are unchanged. */
int kube_config_in_cluster(struct kube_config *cfg, const char *sa_dir,
                           struct lt_err *err) LT_MUST_CHECK;

/* curl_global_init(CURL_GLOBAL_DEFAULT): call once, before any thread starts. LT_EIO if
 * libcurl cannot initialise, or if it lacks curl_multi_wakeup (libcurl < 7.68). */
int kube_global_init(struct lt_err *err) LT_MUST_CHECK;

/* curl_global_cleanup(): after every client is freed. */
void kube_global_cleanup(void);

struct kube_client;

/* A client for cfg (copied; cfg may be reused). Reads the token file now: LT_EIO if it is set
 * and unreadable, LT_EINVAL if cfg->server is empty. Returns NULL and fills err on failure;
 * owned, free with kube_client_free() after stopping every watcher that uses it. */
struct kube_client *kube_client_new(const struct kube_config *cfg, struct lt_err *err);

/* Frees c. NULL is a no-op. No watcher of c may still run. */
void kube_client_free(struct kube_client *c);

/* Re-reads the token file now (also done every token_reread_ms and after a 401). Keeps the old
 * token and returns LT_EIO if the file cannot be read or is empty. Thread-safe. */
int kube_client_reload_token(struct kube_client *c, struct lt_err *err) LT_MUST_CHECK;

/* POST /api/v1/namespaces/{ns}/pods/{name}/binding with the Binding of spec section 3.5:
 * metadata {name, namespace, uid} (uid is a storage precondition) and target Node {node}.
 * Any 2xx is success (0). A 409 Conflict (uid mismatch, pod already assigned, pod being
 * deleted) returns LT_EIO with the API server's Status message in err->text; every other
 * HTTP status, transport error or timeout (write_timeout_ms) also returns LT_EIO with the
 * URL and the cause. After a 401 the token file is re-read and the request retried once.
 * *http_status (may be NULL) receives the final HTTP status; 0 if no response arrived and the
 * request was never sent (no connection); KUBE_STATUS_UNKNOWN if it was sent and no answer
 * came (a timeout, a reset): the binding may have taken effect.
 * LT_EINVAL for empty arguments. Thread-safe; blocking. */
int kube_bind(struct kube_client *c, const char *ns, const char *name, const char *uid,
              const char *node, int *http_status, struct lt_err *err) LT_MUST_CHECK;

/* *http_status of a request that was sent but got no answer: its effect is unknown. */
#define KUBE_STATUS_UNKNOWN (-1)

/* The content type of a JSON merge patch (RFC 7386), which the API server accepts on pods. */
#define KUBE_MERGE_PATCH "application/merge-patch+json"

/* PATCH /api/v1/namespaces/{ns}/pods/{name} with the JSON merge patch
 * {"metadata":{"uid":uid,"labels":{key:value}}}; value NULL patches null, which removes the
 * label. The uid makes the patch fail (the API server refuses to change a uid) if the name now
 * belongs to another pod. Success,
 * errors, the 401 retry and *http_status as kube_bind. Thread-safe; blocking. */
int kube_label_pod(struct kube_client *c, const char *ns, const char *name, const char *uid,
                   const char *key, const char *value, int *http_status,
                   struct lt_err *err) LT_MUST_CHECK;

/* Watch event types; KUBE_EVENT_LISTED marks the items of a LIST (between relist_begin and
 * relist_done), the others are the "type" of a WATCH line. */
enum kube_event {
    KUBE_EVENT_LISTED,
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED,
    KUBE_EVENT_BOOKMARK,
    KUBE_EVENT_ERROR,
    KUBE_EVENT_N
};

/* "ADDED", ..., "LISTED"; "?" for anything else. */
const char *kube_event_name(enum kube_event type);

/* What the watcher tells its owner. Every callback runs on the watcher's thread, serially,
 * with no lock of this module held; it may call kube_watch_stats() but must not call
 * kube_watch_stop() on its own watcher. Any member may be NULL.
 *
 *   relist_begin  a LIST starts (first sync, or after a 410): the owner starts a new state.
 *                 Another relist_begin before relist_done means the previous LIST was
 *                 abandoned (expired continue token, error): discard the partial state.
 *   event         one object: KUBE_EVENT_LISTED for each LIST item, then ADDED / MODIFIED /
 *                 DELETED / BOOKMARK from the WATCH, and ERROR (obj is the metav1.Status)
 *                 for information only: the watcher acts on it itself. obj is borrowed for
 *                 the call; json_incref() it to keep it.
 *   relist_done   the LIST is complete and consistent at resource version rv (borrowed):
 *                 the owner's new state replaces the old one ("synced").
 *   error         a failure the watcher is about to retry (after its backoff); err is
 *                 borrowed, for logging. */
struct kube_watch_ops {
    void (*relist_begin)(void *arg);
    void (*event)(void *arg, enum kube_event type, json_t *obj);
    void (*relist_done)(void *arg, const char *rv);
    void (*error)(void *arg, const struct lt_err *err);
};

/* Counters for /metrics; a consistent-enough copy (each field read atomically). */
struct kube_watch_stats {
    uint64_t relists;              /* LISTs started, the first one included */
    uint64_t watch_restarts;       /* WATCH requests after the first of each sync */
    uint64_t errors;               /* failures reported through ops->error */
    uint64_t events[KUBE_EVENT_N]; /* objects delivered, per type */
    int64_t last_event_unix_ms;    /* wall-clock time of the last delivery; 0 if none */
    bool synced;                   /* a LIST completed and no relist is under way */
    bool watching;                 /* a WATCH answered 200 and its stream is open */
};

struct kube_watch;

/* The CLOCK_MONOTONIC time ms milliseconds from now, for pthread_cond_timedwait on a condition
 * variable created with that clock (the watchers' backoff, the cache's probe). */
struct timespec kube_mono_after(int64_t ms);

/* GETs path (e.g. "/api/v1/nodes?limit=1&resourceVersion=0") within timeout_ms (0: the
 * configured request timeout): 0 on HTTP 200; LT_EIO naming the failure otherwise (connection,
 * TLS, or the HTTP status with the Status message). A 401 re-reads the token file and tries
 * once more. The body is read up to 64 KiB and dropped. Thread-safe. */
LT_MUST_CHECK int kube_probe(struct kube_client *c, const char *path, int64_t timeout_ms,
                             struct lt_err *err);

/* Starts a watcher thread for the collection at path ("/api/v1/nodes", "/api/v1/pods"),
 * optionally filtered by field_selector (NULL or "" for none; e.g. "status.phase!=Failed").
 * c, ops and arg must outlive the watcher. Returns NULL and fills err (LT_EINVAL, LT_ENOMEM,
 * LT_EIO if the thread cannot start); owned, end with kube_watch_stop(). */
struct kube_watch *kube_watch_start(struct kube_client *c, const char *path,
                                    const char *field_selector, const struct kube_watch_ops *ops,
                                    void *arg, struct lt_err *err);

/* Copies w's counters into out. Thread-safe. */
void kube_watch_stats(const struct kube_watch *w, struct kube_watch_stats *out);

/* Abandons w's open WATCH stream, if it has one (within milliseconds), which then counts as
 * a failed attempt: retried after the backoff, from the last resource version. For a feed
 * whose API server stopped answering: a hung server's open stream would otherwise only end at
 * the low-speed window. Thread-safe; NULL is a no-op. */
void kube_watch_kick(struct kube_watch *w);

/* Ends w's current backoff wait, if any, and restarts the backoff from its initial delay: the
 * API server answers again, so the next attempt should not wait up to backoff_max_ms.
 * Thread-safe; NULL is a no-op. */
void kube_watch_retry_now(struct kube_watch *w);

/* Aborts the current request (within milliseconds: curl_multi_wakeup), joins the thread and
 * frees w. No callback runs after it returns. NULL is a no-op. */
void kube_watch_stop(struct kube_watch *w);

#endif
