/* server.c -- lotus-extender's HTTP server over libmicrohttpd (server.h).
 *
 * Design. MHD runs a pool of --threads worker threads (MHD_USE_AUTO_INTERNAL_THREAD: epoll on
 * Linux), each accepting and serving its own connections; a request is decided on the worker
 * that read it, so the pool size bounds the decisions running at once. The access handler is
 * called once when the headers are in (route, method, Content-Length, client certificate are
 * checked there and answered at once when wrong), then once per body chunk (copied into the
 * request's buffer up to --max-body), then once more with no data: the request is complete and
 * the verb runs. Decisions take a snapshot reference (cache.h) and release it before the
 * answer is queued; nothing here holds a lock while deciding.
 *
 * Status codes. kube-scheduler treats every non-200 as an error of that verb (spec section
 * 2.1), so a verb answers 200 whenever the answer can say what went wrong in-band: filter and
 * bind carry an Error field. prioritize (a bare HostPriorityList) and preempt
 * (ExtenderPreemptionResult) have no such field, so a malformed request gets 400 and a
 * not-yet-synced cache 503, each with {"Error":"..."} as body for people and scripts;
 * kube-scheduler ignores prioritize errors in any case and honours `ignorable` for preempt.
 * Transport-level failures: 404 unknown path, 405 wrong method (with Allow), 413 body over the
 * limit, 503 body budget exhausted (with Retry-After), 403 missing or untrusted client
 * certificate (verbs only, so kubelet probes and Prometheus need none).
 *
 * Limits. Bodies are held in memory against one process-wide budget (--body-budget): a
 * Content-Length body reserves its length before it is read, a chunked one as its buffer
 * grows; past the budget the answer is 503. Each connection has a record (struct conn, MHD's
 * socket context) with the deadline of its current request (--request-timeout from the
 * request's start, and of its headers, --header-timeout); a sweeper thread shuts down
 * connections past theirs. libmicrohttpd's own --conn-timeout only closes idle connections,
 * which a client sending a byte now and then never is. Past --max-connections, the accept
 * policy closes new connections at once (libmicrohttpd's own limit, set higher, would leave
 * them in the listen backlog); --max-connections-per-ip is libmicrohttpd's.
 *
 * Draining. in_flight counts requests from their first handler call to MHD's completion
 * callback; ext_server_drain quiesces the daemon (no new connections), then waits for it to
 * reach zero. A request whose headers have not fully arrived when SIGTERM comes is not yet
 * counted and is cut by the final MHD_stop_daemon; kube-scheduler retries it.
 *
 * Metrics are relaxed atomic counters, rendered on /metrics (Prometheus text format 0.0.4).
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* NI_MAXHOST, getaddrinfo flags */
#include "server.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "decide.h"
#include "ext_codec.h"
#include "log.h"
#include "lt_mem.h"
#include "lt_rng.h"

#ifndef LOTUS_VERSION
#define LOTUS_VERSION "0.0.0"
#endif

/* ------------------------------------------------------------------------------------------
 * Metrics
 */

enum verb { V_FILTER, V_PRIORITIZE, V_PREEMPT, V_BIND, V_N };
static const char *const verb_names[V_N] = {"filter", "prioritize", "preempt", "bind"};

/* ok: answered normally; bad_request: malformed or incomplete input; not_ready: no snapshot
 * yet; error: the decision or the binding failed (in-band Error or 5xx). */
/* O_PENDING is no outcome of its own: a binding handed to a bind thread (bind_enqueue); the
 * request is counted when its answer is sent. */
enum outcome { O_OK, O_BAD_REQUEST, O_NOT_READY, O_ERROR, O_N, O_PENDING = O_N };
static const char *const outcome_names[O_N] = {"ok", "bad_request", "not_ready", "error"};

/* Upper bounds of the latency histogram, seconds: 100 us (a names-mode filter at 500 nodes)
 * to 10 s (past kube-scheduler's 5 s default httpTimeout). */
static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                 0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
#define N_BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

enum reject { R_NOT_FOUND, R_METHOD, R_TOO_LARGE, R_FORBIDDEN, R_BUSY, R_N };
static const char *const reject_codes[R_N] = {"404", "405", "413", "403", "503"};

/* Why the sweeper cut a connection: its request's headers, or the whole request, were not
 * complete by their deadline. */
enum cut { CUT_HEADER, CUT_REQUEST, CUT_N };
static const char *const cut_names[CUT_N] = {"header_timeout", "request_timeout"};

/* HYBRID's sticky label at bind: labelled; the PATCH failed (bound without it); the pool was
 * full (bound without it); the bind failed after the label and the label was removed (or the
 * removal failed too: reverted_failed). */
enum sticky { ST_LABELLED, ST_FAILED, ST_POOL_FULL, ST_REVERTED, ST_REVERT_FAILED, ST_N };
static const char *const sticky_names[ST_N] = {"labelled", "failed", "pool_full", "reverted",
                                               "revert_failed"};

struct metrics {
    atomic_uint_fast64_t sticky[ST_N];
    atomic_uint_fast64_t requests[V_N][O_N];
    atomic_uint_fast64_t bucket[V_N][N_BUCKETS]; /* not cumulative; summed when rendered */
    atomic_uint_fast64_t sum_ns[V_N];
    atomic_uint_fast64_t count[V_N];
    atomic_uint_fast64_t rejected[R_N];
    atomic_uint_fast64_t cut[CUT_N];
    atomic_uint_fast64_t refused; /* connections refused at --max-connections */
};

/* ------------------------------------------------------------------------------------------
 * Server and request state
 */

/* One open connection (MHD's socket context), from MHD_CONNECTION_NOTIFY_STARTED to _CLOSED.
 * A request's start is when its connection was accepted or when the previous request on it
 * ended (the idle time between keep-alive requests counts: bytes before the headers are
 * complete cannot be seen). Its deadlines: the headers by start + --header-timeout, the whole
 * request, headers and body, by start + --request-timeout; none while the request is decided
 * and answered. */
struct conn {
    struct conn *prev, *next;        /* in ext_server.conns; guarded by conns_lock */
    MHD_socket fd;                   /* borrowed: MHD closes it after _CLOSED */
    int64_t start_ms;                /* CLOCK_MONOTONIC; worker thread only */
    atomic_int_fast64_t deadline_ms; /* CLOCK_MONOTONIC; 0: none */
    atomic_int why;                  /* enum cut: what the deadline is */
    bool cut;                        /* shut down by the sweeper; guarded by conns_lock */
    char client[INET6_ADDRSTRLEN];   /* the peer's address, for logs */
};

struct ext_server {
    const struct ext_config *cfg; /* borrowed */
    struct ext_cache *cache;      /* borrowed */
    struct kube_client *kube;     /* borrowed; NULL offline */
    struct ext_decide_config dc;
    pthread_mutex_t sticky_lock; /* serialises count, label, bind, assume under --sticky-slots,
                                  * and every offline bind */
    struct MHD_Daemon *d;
    uint16_t port;
    struct tls_creds *tls; /* owned: the newest --tls-cert and --tls-key; NULL without TLS */
    char *tls_ca;          /* owned PEM text of --tls-client-ca, or NULL */
    atomic_long in_flight; /* requests between first call and completion */
    atomic_bool draining;
    MHD_socket quiesced_fd; /* listen socket handed back by MHD_quiesce_daemon, or invalid */
    int64_t started_ms;     /* CLOCK_REALTIME, for /metrics */
    atomic_int_fast64_t body_bytes; /* bytes of request bodies reserved against --body-budget */
    pthread_mutex_t conns_lock;     /* guards conns, each conn's links and cut, sweep_stop */
    pthread_cond_t sweep_cond;      /* wakes the sweeper to stop */
    struct conn *conns;             /* open connections */
    atomic_long n_conns;            /* their number */
    bool sweep_stop;
    bool sweeper_started;
    pthread_t sweeper; /* cuts connections past their deadline (sweeper_main) */
    /* Bindings run off the request workers (bind_main): a queue and --bind-workers threads. */
    pthread_mutex_t bind_lock;
    pthread_cond_t bind_cond;
    struct bind_job *bind_head, *bind_tail;
    size_t bind_queued; /* in the queue or running */
    bool bind_stop;
    pthread_t *bind_threads;
    int n_bind_threads;
    struct metrics m;
};

enum route { ROUTE_VERB, ROUTE_HEALTHZ, ROUTE_READYZ, ROUTE_METRICS, ROUTE_VERSION };

struct bind_job;

struct req {
    enum verb verb;
    struct bind_job *job; /* a binding handed to a bind thread; owned */
    char *body;           /* owned; NUL-terminated */
    size_t len, cap;
    size_t reserved;    /* bytes of --body-budget held: Content-Length + 1, or cap (chunked) */
    uint64_t discarded; /* bytes of the body received, once refused (too_large or busy) */
    bool too_large;     /* over --max-body: answer 413 */
    bool busy;          /* --body-budget exhausted while reading a chunked body: answer 503 */
    bool chunked;       /* no Content-Length: the budget is reserved as the buffer grows */
    int64_t start_ns;   /* CLOCK_MONOTONIC */
};

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_ms(void)
{
    return mono_ns() / 1000000;
}

static int64_t real_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void observe(struct ext_server *s, enum verb v, enum outcome o, int64_t start_ns)
{
    int64_t ns = mono_ns() - start_ns;
    double sec = (double)ns / 1e9;
    size_t b = 0;

    while (b < N_BUCKETS && sec > buckets[b])
        b++;
    atomic_fetch_add_explicit(&s->m.requests[v][o], 1, memory_order_relaxed);
    if (b < N_BUCKETS)
        atomic_fetch_add_explicit(&s->m.bucket[v][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->m.sum_ns[v], (uint_fast64_t)ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->m.count[v], 1, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------------
 * Responses
 */

/* Queues status with body (owned, freed by MHD through lt_free; NULL for none). */
static enum MHD_Result reply(struct ext_server *s, struct MHD_Connection *conn, unsigned int status,
                             char *body, size_t len, const char *type)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (body == NULL) {
        body = lt_strdup("");
        len = 0;
    }
    r = body ? MHD_create_response_from_buffer_with_free_callback(len, body, lt_free) : NULL;
    if (r == NULL) {
        lt_free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (atomic_load(&s->draining))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reply_text(struct ext_server *s, struct MHD_Connection *conn,
                                  unsigned int status, const char *text)
{
    char *b = lt_strdup(text);

    return reply(s, conn, status, b, b ? strlen(b) : 0, "text/plain; charset=utf-8");
}

/* The body of an ext_buf, handed to MHD (b is left empty); NULL after an allocation failure. */
static char *buf_take(struct ext_buf *b, size_t *len)
{
    char *d = b->failed ? NULL : b->data;

    *len = b->len;
    if (d == NULL)
        ext_buf_release(b);
    else
        ext_buf_init(b);
    return d;
}

static enum MHD_Result reply_buf(struct ext_server *s, struct MHD_Connection *conn,
                                 unsigned int status, struct ext_buf *b)
{
    size_t len;
    char *d = buf_take(b, &len);

    if (d == NULL)
        return reply_text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return reply(s, conn, status, d, len, "application/json");
}

/* True if p starts a UUID, 8-4-4-4-12 hex digits, that is not part of a longer word. */
static bool uuid_at(const char *start, const char *p)
{
    static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    size_t i;

    if (p > start && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
        return false;
    for (i = 0; shape[i] != '\0'; i++) {
        if (shape[i] == '-' ? p[i] != '-' : !isxdigit((unsigned char)p[i]))
            return false;
    }
    return !isalnum((unsigned char)p[i]) && p[i] != '-';
}

/* The error text msg as the client may see it, into out (cap bytes): without pod UIDs. An API
 * server's 409 names the pod's real UID ("Precondition failed: UID in precondition: X, UID in
 * object meta: Y"), and a caller who learned it could bind that pod anywhere with a second
 * call. So the word after each "UID in ...: " and every UUID-shaped word (Kubernetes UIDs are
 * UUIDs) become "<uid>". The logs keep the full text. */
static void redact_uids(const char *msg, char *out, size_t cap)
{
    static const char *const markers[] = {"UID in precondition: ", "UID in object meta: "};
    const char *p = msg;
    size_t n = 0;

    while (*p != '\0' && n + 1 < cap) {
        bool word = false;

        for (size_t k = 0; k < sizeof(markers) / sizeof(markers[0]) && !word; k++) {
            size_t ml = strlen(markers[k]);

            if (strncmp(p, markers[k], ml) == 0) {
                n += (size_t)snprintf(out + n, cap - n, "%s<uid>", markers[k]);
                for (p += ml; *p != '\0' && strchr(" ,;\"'()\t\r\n", *p) == NULL; p++)
                    ;
                word = true;
            }
        }
        if (!word && uuid_at(msg, p)) {
            n += (size_t)snprintf(out + n, cap - n, "<uid>");
            p += 36;
        } else if (!word) {
            out[n++] = *p++;
        }
        n = n < cap ? n : cap - 1;
    }
    out[n] = '\0';
}

/* {"Error":"msg"} (Go-escaped, UIDs redacted) with status. */
static enum MHD_Result reply_error(struct ext_server *s, struct MHD_Connection *conn,
                                   unsigned int status, const char *msg)
{
    char text[LT_ERR_TEXT + 128];
    struct ext_buf b;

    redact_uids(msg, text, sizeof(text));
    ext_buf_init(&b);
    if (ext_bind_result_encode(text, &b, NULL) < 0)
        b.failed = true;
    return reply_buf(s, conn, status, &b);
}

static const unsigned int reject_status[R_N] = {MHD_HTTP_NOT_FOUND, MHD_HTTP_METHOD_NOT_ALLOWED,
                                                MHD_HTTP_CONTENT_TOO_LARGE, MHD_HTTP_FORBIDDEN,
                                                MHD_HTTP_SERVICE_UNAVAILABLE};

/* Queues r (its headers but Connection set) for a refused request; r is destroyed. */
static enum MHD_Result reject_queue(struct ext_server *s, struct MHD_Connection *conn,
                                    enum reject why, struct MHD_Response *r)
{
    enum MHD_Result ret;

    atomic_fetch_add_explicit(&s->m.rejected[why], 1, memory_order_relaxed);
    if (r == NULL)
        return MHD_NO;
    /* The rest of an unread body would be parsed as the next request: close instead. */
    if (why != R_NOT_FOUND || atomic_load(&s->draining))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(conn, reject_status[why], r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reject(struct ext_server *s, struct MHD_Connection *conn, enum reject why,
                              const char *allow, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
                                                             MHD_RESPMEM_PERSISTENT);

    if (r != NULL) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
        if (allow)
            MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    }
    return reject_queue(s, conn, why, r);
}

/* A refusal with {"Error":"msg"} as body, as the verbs' own errors read, and a Retry-After
 * header of retry_after seconds (NULL: none). */
static enum MHD_Result reject_error(struct ext_server *s, struct MHD_Connection *conn,
                                    enum reject why, const char *msg, const char *retry_after)
{
    struct MHD_Response *r = NULL;
    struct ext_buf b;
    size_t len;
    char *d;

    ext_buf_init(&b);
    if (ext_bind_result_encode(msg, &b, NULL) < 0)
        b.failed = true;
    d = buf_take(&b, &len);
    if (d != NULL)
        r = MHD_create_response_from_buffer_with_free_callback(len, d, lt_free);
    if (r == NULL) {
        lt_free(d);
    } else {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        if (retry_after)
            MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
    }
    return reject_queue(s, conn, why, r);
}

/* 413, the same answer whether Content-Length or the chunks read so far were over the limit. */
static enum MHD_Result reject_too_large(struct ext_server *s, struct MHD_Connection *conn)
{
    char msg[96];

    snprintf(msg, sizeof(msg), "request body over --max-body (%" PRId64 " bytes)",
             s->cfg->max_body);
    return reject_error(s, conn, R_TOO_LARGE, msg, NULL);
}

/* 503: the body would take the bodies in memory past --body-budget. Retry-After: 1, since
 * bodies are held for milliseconds by kube-scheduler and at most --request-timeout by anyone. */
static enum MHD_Result reject_busy(struct ext_server *s, struct MHD_Connection *conn)
{
    char msg[128];

    snprintf(msg, sizeof(msg),
             "request bodies in memory would exceed --body-budget (%" PRId64 " bytes): retry later",
             s->cfg->body_budget);
    ext_log(EXT_LOG_WARN, "request refused: --body-budget exhausted", "{s:I, s:I}", "budget",
            (json_int_t)s->cfg->body_budget, "in_use", (json_int_t)atomic_load(&s->body_bytes));
    return reject_error(s, conn, R_BUSY, msg, "1");
}

/* An lt_err as one line for Error fields and logs: "line 1, column 9: ..." for syntax. */
static void err_line(const struct lt_err *e, const char *what, char *out, size_t len)
{
    int w;

    if (e->line > 0)
        w = snprintf(out, len, "%s: line %" PRId64 ", column %d: %s", what, e->line, e->column,
                     e->text);
    else
        w = snprintf(out, len, "%s: %s", what, e->text[0] ? e->text : lt_strerror(e->code));
    if (w >= (int)len && len > 4) /* a long message keeps its head and shows the cut */
        memcpy(out + len - 4, "...", 4);
}

/* ------------------------------------------------------------------------------------------
 * Verbs
 */

/* Seeds *rng for a request about pod p and returns rng: seeded by the pod, not by how many
 * requests this replica served, so replicas behind one Service answer alike (ext_pod_seed). */
static struct lt_rng *pod_rng(const struct ext_server *s, struct lt_rng *rng, uint64_t stream,
                              const struct ext_pod *p)
{
    lt_rng_init(rng, ext_pod_seed(s->cfg->seed, p), stream);
    return rng;
}

static enum outcome do_filter(struct ext_server *s, struct MHD_Connection *conn, struct req *r,
                              enum MHD_Result *ret)
{
    struct ext_args a;
    struct ext_filter_decision d;
    struct ext_snapshot *snap = NULL;
    struct ext_buf b;
    struct lt_err e;
    char msg[LT_ERR_TEXT + 64];
    enum outcome o = O_OK;
    bool decoded;

    lt_err_init(&e, "<request>");
    ext_args_init(&a);
    ext_filter_decision_init(&d);
    ext_buf_init(&b);
    decoded = ext_args_decode(&a, r->body, r->len, &e) == 0;
    if (decoded) /* for a bind of a pod the watch has not shown yet */
        ext_cache_note_pod(s->cache, &a.pod);
    if (!decoded) {
        err_line(&e, "malformed ExtenderArgs", msg, sizeof(msg));
        o = O_BAD_REQUEST;
    } else if ((snap = ext_snapshot_acquire(s->cache)) == NULL) {
        snprintf(msg, sizeof(msg), "lotus-extender: cluster cache not synced yet");
        o = O_NOT_READY;
    } else if (ext_decide_filter(&s->dc, snap, &a, &d, &e) < 0 ||
               ext_filter_answer(&a, d.v, NULL, &b, &e) < 0) {
        err_line(&e, "filter failed", msg, sizeof(msg));
        o = O_ERROR;
    }
    ext_snapshot_release(snap);
    if (o != O_OK) {
        char text[LT_ERR_TEXT + 128];
        struct ext_filter_result fr = {.error = text};

        redact_uids(msg, text, sizeof(text));
        ext_buf_reset(&b);
        if (ext_filter_result_encode(&fr, &b, NULL) < 0)
            b.failed = true;
        ext_log(o == O_ERROR ? EXT_LOG_ERROR : EXT_LOG_WARN, "filter request failed", "{s:s, s:s}",
                "outcome", outcome_names[o], "error", msg);
    } else {
        ext_log(EXT_LOG_DEBUG, "filter", "{s:s, s:s, s:I, s:I}", "pod", a.pod.name, "ns", a.pod.ns,
                "nodes", (json_int_t)d.n, "passed", (json_int_t)d.n_pass);
    }
    *ret = reply_buf(s, conn, MHD_HTTP_OK, &b);
    ext_buf_release(&b);
    ext_filter_decision_release(&d);
    ext_args_release(&a);
    return o;
}

static enum outcome do_prioritize(struct ext_server *s, struct MHD_Connection *conn, struct req *r,
                                  enum MHD_Result *ret)
{
    struct ext_args a;
    struct ext_snapshot *snap = NULL;
    struct ext_host_priority *hp = NULL;
    struct ext_buf b;
    struct lt_rng rng;
    struct lt_err e;
    char msg[LT_ERR_TEXT + 64];
    enum outcome o = O_OK;
    unsigned int status = MHD_HTTP_OK;

    lt_err_init(&e, "<request>");
    ext_args_init(&a);
    ext_buf_init(&b);
    if (ext_args_decode(&a, r->body, r->len, &e) < 0) {
        err_line(&e, "malformed ExtenderArgs", msg, sizeof(msg));
        o = O_BAD_REQUEST, status = MHD_HTTP_BAD_REQUEST;
    } else if ((snap = ext_snapshot_acquire(s->cache)) == NULL) {
        snprintf(msg, sizeof(msg), "lotus-extender: cluster cache not synced yet");
        o = O_NOT_READY, status = MHD_HTTP_SERVICE_UNAVAILABLE;
    } else if ((hp = lt_calloc(ext_args_candidates(&a) + 1, sizeof(*hp))) == NULL ||
               ext_decide_prioritize(&s->dc, snap, &a, pod_rng(s, &rng, LT_RNG_POLICY, &a.pod), hp,
                                     &e) < 0 ||
               ext_priority_list_encode(hp, ext_args_candidates(&a), &b, &e) < 0) {
        if (hp == NULL)
            lt_err_set(&e, LT_ENOMEM, 0, 0, "out of memory");
        err_line(&e, "prioritize failed", msg, sizeof(msg));
        o = O_ERROR, status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
    ext_snapshot_release(snap);
    if (o != O_OK) {
        ext_log(o == O_ERROR ? EXT_LOG_ERROR : EXT_LOG_WARN, "prioritize request failed",
                "{s:s, s:s}", "outcome", outcome_names[o], "error", msg);
        *ret = reply_error(s, conn, status, msg);
    } else {
        ext_log(EXT_LOG_DEBUG, "prioritize", "{s:s, s:s, s:I}", "pod", a.pod.name, "ns", a.pod.ns,
                "nodes", (json_int_t)ext_args_candidates(&a));
        *ret = reply_buf(s, conn, status, &b);
    }
    lt_free(hp);
    ext_buf_release(&b);
    ext_args_release(&a);
    return o;
}

static enum outcome do_preempt(struct ext_server *s, struct MHD_Connection *conn, struct req *r,
                               enum MHD_Result *ret)
{
    struct ext_preempt_args a;
    struct ext_preempt_decision d;
    struct ext_snapshot *snap = NULL;
    struct ext_buf b;
    struct lt_rng rng;
    struct lt_err e;
    char msg[LT_ERR_TEXT + 64];
    enum outcome o = O_OK;
    unsigned int status = MHD_HTTP_OK;

    lt_err_init(&e, "<request>");
    ext_preempt_args_init(&a);
    ext_preempt_decision_init(&d);
    ext_buf_init(&b);
    if (ext_preempt_args_decode(&a, r->body, r->len, &e) < 0) {
        err_line(&e, "malformed ExtenderPreemptionArgs", msg, sizeof(msg));
        o = O_BAD_REQUEST, status = MHD_HTTP_BAD_REQUEST;
    } else if ((snap = ext_snapshot_acquire(s->cache)) == NULL) {
        snprintf(msg, sizeof(msg), "lotus-extender: cluster cache not synced yet");
        o = O_NOT_READY, status = MHD_HTTP_SERVICE_UNAVAILABLE;
    } else if (ext_decide_preempt(&s->dc, snap, &a, pod_rng(s, &rng, LT_RNG_EVICTION, &a.pod), &d,
                                  &e) < 0 ||
               ext_preempt_result_encode(d.nodes, d.n, &b, &e) < 0) {
        err_line(&e, "preempt failed", msg, sizeof(msg));
        o = O_ERROR, status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
    ext_snapshot_release(snap);
    if (o != O_OK) {
        ext_log(o == O_ERROR ? EXT_LOG_ERROR : EXT_LOG_WARN, "preempt request failed", "{s:s, s:s}",
                "outcome", outcome_names[o], "error", msg);
        *ret = reply_error(s, conn, status, msg);
    } else {
        ext_log(EXT_LOG_INFO, "preempt", "{s:s, s:s, s:I, s:I}", "pod", a.pod.name, "ns", a.pod.ns,
                "nodes", (json_int_t)(a.n_meta > 0 ? a.n_meta : a.n_victims), "kept",
                (json_int_t)d.n);
        *ret = reply_buf(s, conn, status, &b);
    }
    ext_buf_release(&b);
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
    return o;
}

/* The first missing field of a binding, or NULL. */
static const char *bind_missing(const struct ext_bind_args *a)
{
    if (a->pod_name[0] == '\0')
        return "PodName";
    if (a->pod_namespace[0] == '\0')
        return "PodNamespace";
    if (a->pod_uid[0] == '\0')
        return "PodUID";
    if (a->node[0] == '\0')
        return "Node";
    return NULL;
}

/* Pods of the current snapshot that count against the sticky pool (lotus.io/sticky), except
 * the one of uid; SIZE_MAX if the cache has no snapshot. */
static size_t sticky_count(struct ext_server *s, const char *uid)
{
    struct ext_snapshot *snap = ext_snapshot_acquire(s->cache);
    size_t n = 0;

    if (snap == NULL)
        return SIZE_MAX;
    for (size_t i = 0; i < snap->n_pods; i++)
        n += snap->pods[i].sticky && strcmp(snap->pods[i].uid, uid) != 0;
    ext_snapshot_release(snap);
    return n;
}

static void sticky_note(struct ext_server *s, enum sticky what, const struct ext_bind_args *a,
                        const char *error)
{
    atomic_fetch_add_explicit(&s->m.sticky[what], 1, memory_order_relaxed);
    if (what == ST_LABELLED)
        return;
    ext_log(what == ST_POOL_FULL || what == ST_REVERTED ? EXT_LOG_INFO : EXT_LOG_WARN,
            "sticky label", "{s:s, s:s, s:s, s:s, s:I, s:s}", "pod", a->pod_name, "ns",
            a->pod_namespace, "outcome", sticky_names[what], "node", a->node, "pool",
            (json_int_t)s->cfg->slots.sticky, "error", error ? error : "");
}

/* HYBRID (--sticky-slots N): labels the pod lotus.io/sticky=true when fewer than N counted pods
 * carry the label, then binds; a failed label is logged and counted, and the pod is bound
 * without it; a failed bind removes the label again. The pod is assumed sticky when labelled.
 * Called with sticky_lock held, so concurrent binds see each other's labels. */
static int bind_sticky(struct ext_server *s, const struct ext_bind_args *a, int *status,
                       bool *known, struct lt_err *e)
{
    struct lt_err le;
    bool labelled = false;
    size_t n = sticky_count(s, a->pod_uid);
    int rc;

    lt_err_init(&le, NULL);
    if (n < (uint64_t)s->cfg->slots.sticky) {
        labelled = kube_label_pod(s->kube, a->pod_namespace, a->pod_name, a->pod_uid,
                                  EXT_STICKY_LABEL, "true", NULL, &le) == 0;
        sticky_note(s, labelled ? ST_LABELLED : ST_FAILED, a, labelled ? NULL : le.text);
    } else {
        sticky_note(s, ST_POOL_FULL, a, NULL);
    }
    rc = kube_bind(s->kube, a->pod_namespace, a->pod_name, a->pod_uid, a->node, status, e);
    if (rc < 0 && *status != KUBE_STATUS_UNKNOWN) {
        if (labelled) {
            lt_err_init(&le, NULL);
            bool ok = kube_label_pod(s->kube, a->pod_namespace, a->pod_name, a->pod_uid,
                                     EXT_STICKY_LABEL, NULL, NULL, &le) == 0;
            sticky_note(s, ok ? ST_REVERTED : ST_REVERT_FAILED, a, ok ? NULL : le.text);
        }
        return rc;
    }
    /* Bound, or maybe bound (sent, unanswered: the label stays, as the binding may have taken
     * effect): counted on the node either way. */
    lt_err_init(&le, NULL);
    if (ext_cache_assume_sticky(s->cache, a->pod_namespace, a->pod_name, a->pod_uid, a->node,
                                labelled, known, &le) < 0)
        ext_log(EXT_LOG_WARN, "bound pod not counted in the cache", "{s:s, s:s, s:s, s:s}", "pod",
                a->pod_name, "ns", a->pod_namespace, "node", a->node, "error", le.text);
    return rc;
}

/* Offline (--cluster-file): there is no API server, so the binding is the cache's alone. The
 * pod is assumed on the node (ext_cache_assume_sticky), as online mode does after the API
 * server accepted the binding, and every later request sees it. Like the API server, it
 * refuses a pod the snapshot already counts (bound in the file or by an earlier bind); unlike
 * it, it refuses a node the cache does not know (nothing else could ever place the pod there).
 * Under --sticky-slots the pod counts as sticky while the pool has room; no label is written.
 * Called with sticky_lock held, so the check and the assume are one step among binds. */
static int bind_offline(struct ext_server *s, const struct ext_bind_args *a, bool *known,
                        struct lt_err *e)
{
    struct ext_snapshot *snap = ext_snapshot_acquire(s->cache);
    const struct ext_snap_pod *p;
    bool sticky = false;
    int rc = 0;

    if (snap == NULL)
        return lt_err_set(e, LT_EINVAL, 0, 0, "lotus-extender: cluster cache not synced yet");
    p = ext_snapshot_find_pod(snap, a->pod_uid);
    if (p != NULL)
        rc = lt_err_set(e, LT_EINVAL, 0, 0, "pod %s/%s is already assigned to node '%s'",
                        a->pod_namespace, a->pod_name, lt_cluster_name(snap->cluster, p->node));
    else if (lt_cluster_find(snap->cluster, a->node) == LT_NO_MACHINE)
        rc =
            lt_err_set(e, LT_ENOTFOUND, 0, 0,
                       "node '%s' not found (offline: the cluster file has no such node)", a->node);
    ext_snapshot_release(snap);
    if (rc < 0)
        return rc;
    if (s->cfg->slots.sticky > 0) {
        sticky = sticky_count(s, a->pod_uid) < (uint64_t)s->cfg->slots.sticky;
        sticky_note(s, sticky ? ST_LABELLED : ST_POOL_FULL, a, NULL);
    }
    return ext_cache_assume_sticky(s->cache, a->pod_namespace, a->pod_name, a->pod_uid, a->node,
                                   sticky, known, e);
}

/* ------------------------------------------------------------------------------------------
 * Bindings, off the request workers
 *
 * A binding waits for the API server, up to --bind-timeout. On a request worker a few hung
 * bindings would stop every verb and the probes (there are --threads workers), so do_bind
 * suspends the connection (MHD_suspend_connection) and hands the binding to one of
 * --bind-workers threads; the thread binds, leaves the answer in the job and resumes the
 * connection, whose handler runs do_bind again and sends it (bind_finish). At most
 * 4 x --bind-workers bindings wait or run; past that the answer is an Error at once, and
 * kube-scheduler retries the pod. A binding sent whose answer never came (a timeout, a reset:
 * KUBE_STATUS_UNKNOWN) may have taken effect: the pod is counted on the node anyway, until
 * the watch shows where it is, so the node is never under-counted.
 */
struct bind_job {
    struct bind_job *next;
    struct MHD_Connection *conn;
    struct ext_bind_args a; /* owned */
    enum outcome o;
    int status;
    bool known;
    bool unknown;     /* sent, unanswered: counted on the node all the same */
    atomic_bool done; /* the answer is in; set before the connection is resumed */
    char msg[LT_ERR_TEXT + 160];
};

static void bind_job_free(struct bind_job *j)
{
    if (j != NULL) {
        ext_bind_args_release(&j->a);
        lt_free(j);
    }
}

/* The online binding of j (sticky or plain), its answer left in j. */
static void bind_run(struct ext_server *s, struct bind_job *j)
{
    const struct ext_bind_args *a = &j->a;
    struct lt_err e, le;
    int rc;

    lt_err_init(&e, "<request>");
    j->known = true;
    if (s->cfg->slots.sticky > 0) {
        pthread_mutex_lock(&s->sticky_lock);
        rc = bind_sticky(s, a, &j->status, &j->known, &e);
        pthread_mutex_unlock(&s->sticky_lock);
    } else {
        rc = kube_bind(s->kube, a->pod_namespace, a->pod_name, a->pod_uid, a->node, &j->status, &e);
        lt_err_init(&le, NULL);
        if ((rc == 0 || j->status == KUBE_STATUS_UNKNOWN) &&
            ext_cache_assume(s->cache, a->pod_namespace, a->pod_name, a->pod_uid, a->node,
                             &j->known, &le) < 0)
            ext_log(EXT_LOG_WARN, "bound pod not counted in the cache", "{s:s, s:s, s:s, s:s}",
                    "pod", a->pod_name, "ns", a->pod_namespace, "node", a->node, "error", le.text);
    }
    j->o = rc < 0 ? O_ERROR : O_OK;
    j->unknown = rc < 0 && j->status == KUBE_STATUS_UNKNOWN;
    if (rc < 0)
        snprintf(j->msg, sizeof(j->msg), "%s%s", e.text,
                 j->unknown ? " (the binding may have taken effect: lotus counts the pod on the "
                              "node until the watch shows where it is)"
                            : "");
}

static void *bind_main(void *arg)
{
    struct ext_server *s = arg;

    pthread_mutex_lock(&s->bind_lock);
    for (;;) {
        struct bind_job *j;

        while (s->bind_head == NULL && !s->bind_stop)
            pthread_cond_wait(&s->bind_cond, &s->bind_lock);
        if (s->bind_head == NULL)
            break;
        j = s->bind_head;
        s->bind_head = j->next;
        if (s->bind_head == NULL)
            s->bind_tail = NULL;
        pthread_mutex_unlock(&s->bind_lock);
        if (s->bind_stop) {
            j->o = O_ERROR;
            snprintf(j->msg, sizeof(j->msg), "lotus-extender is shutting down: binding not tried");
        } else {
            bind_run(s, j);
        }
        atomic_store_explicit(&j->done, true, memory_order_release);
        MHD_resume_connection(j->conn);
        pthread_mutex_lock(&s->bind_lock);
        s->bind_queued--;
    }
    pthread_mutex_unlock(&s->bind_lock);
    return NULL;
}

/* Queues j; false if the queue is full or stopping (j stays the caller's). */
static bool bind_enqueue(struct ext_server *s, struct bind_job *j)
{
    bool ok;

    pthread_mutex_lock(&s->bind_lock);
    ok = !s->bind_stop && s->bind_queued < 4 * (size_t)s->n_bind_threads;
    if (ok) {
        j->next = NULL;
        if (s->bind_tail)
            s->bind_tail->next = j;
        else
            s->bind_head = j;
        s->bind_tail = j;
        s->bind_queued++;
        pthread_cond_signal(&s->bind_cond);
    }
    pthread_mutex_unlock(&s->bind_lock);
    return ok;
}

static int start_binders(struct ext_server *s, struct lt_err *err)
{
    int n = s->kube != NULL ? s->cfg->bind_workers : 0;

    if (n <= 0)
        return 0;
    s->bind_threads = lt_calloc((size_t)n, sizeof(*s->bind_threads));
    if (s->bind_threads == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %d bind threads", n);
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&s->bind_threads[i], NULL, bind_main, s);

        if (rc != 0)
            return lt_err_set(err, LT_ENOMEM, 0, 0, "cannot start bind thread %d: %s", i,
                              strerror(rc));
        s->n_bind_threads++;
    }
    return 0;
}

/* Ends the bind threads: a running binding finishes (within --bind-timeout), a queued one is
 * answered with an Error; every connection is resumed. */
static void stop_binders(struct ext_server *s)
{
    pthread_mutex_lock(&s->bind_lock);
    s->bind_stop = true;
    pthread_cond_broadcast(&s->bind_cond);
    pthread_mutex_unlock(&s->bind_lock);
    for (int i = 0; i < s->n_bind_threads; i++)
        pthread_join(s->bind_threads[i], NULL);
    s->n_bind_threads = 0;
    lt_free(s->bind_threads);
    s->bind_threads = NULL;
}

static void log_bind(enum outcome o, const struct ext_bind_args *a, bool known, int status,
                     bool unknown, const char *msg)
{
    if (o == O_OK)
        ext_log(EXT_LOG_INFO, "bound", "{s:s, s:s, s:s, s:s, s:b}", "pod", a->pod_name, "ns",
                a->pod_namespace, "uid", a->pod_uid, "node", a->node, "pod_known", known);
    else
        ext_log(o == O_ERROR ? EXT_LOG_ERROR : EXT_LOG_WARN, "bind failed",
                "{s:s, s:s, s:s, s:i, s:b, s:s}", "pod", a->root ? a->pod_name : "", "node",
                a->root ? a->node : "", "outcome", outcome_names[o], "http_status", status,
                "counted_on_node", unknown, "error", msg);
}

/* The second call, after the bind thread resumed the connection: the answer. */
static enum outcome bind_finish(struct ext_server *s, struct MHD_Connection *conn, struct req *r,
                                enum MHD_Result *ret)
{
    struct bind_job *j = r->job;
    enum outcome o;

    (void)atomic_load_explicit(&j->done, memory_order_acquire);
    log_bind(j->o, &j->a, j->known, j->status, j->unknown, j->msg);
    *ret = reply_error(s, conn, MHD_HTTP_OK, j->o == O_OK ? "" : j->msg);
    o = j->o;
    bind_job_free(j);
    r->job = NULL;
    return o;
}

static enum outcome do_bind(struct ext_server *s, struct MHD_Connection *conn, struct req *r,
                            enum MHD_Result *ret)
{
    struct ext_bind_args a;
    struct bind_job *j;
    struct lt_err e;
    char msg[LT_ERR_TEXT + 64] = "";
    const char *missing;
    enum outcome o = O_OK;
    bool known = true;

    lt_err_init(&e, "<request>");
    ext_bind_args_init(&a);
    if (ext_bind_args_decode(&a, r->body, r->len, &e) < 0) {
        err_line(&e, "malformed ExtenderBindingArgs", msg, sizeof(msg));
        o = O_BAD_REQUEST;
    } else if ((missing = bind_missing(&a)) != NULL) {
        snprintf(msg, sizeof(msg), "malformed ExtenderBindingArgs: missing field '%s'", missing);
        o = O_BAD_REQUEST;
    } else if (s->kube == NULL) {
        int rc;

        pthread_mutex_lock(&s->sticky_lock);
        rc = bind_offline(s, &a, &known, &e);
        pthread_mutex_unlock(&s->sticky_lock);
        if (rc < 0) {
            snprintf(msg, sizeof(msg), "%s", e.text);
            o = O_ERROR;
        }
    } else if ((j = lt_calloc(1, sizeof(*j))) == NULL) {
        snprintf(msg, sizeof(msg), "lotus-extender: out of memory for a binding");
        o = O_ERROR;
    } else {
        j->conn = conn;
        j->a = a; /* moved: the job owns the decoded arguments */
        ext_bind_args_init(&a);
        /* Suspended before it is queued: the thread may resume it at once. */
        MHD_suspend_connection(conn);
        if (bind_enqueue(s, j)) {
            r->job = j;
            *ret = MHD_YES;
            return O_PENDING;
        }
        MHD_resume_connection(conn);
        snprintf(msg, sizeof(msg),
                 "lotus-extender: too many bindings in flight (%d bind threads, queue full): "
                 "retry",
                 s->cfg->bind_workers);
        o = O_ERROR;
        a = j->a;
        lt_free(j);
    }
    log_bind(o, &a, known, 0, false, msg);
    *ret = reply_error(s, conn, MHD_HTTP_OK, msg);
    ext_bind_args_release(&a);
    return o;
}

/* ------------------------------------------------------------------------------------------
 * Probes, version, metrics
 */

/* A growable text buffer with printf. */
struct text {
    char *p;
    size_t len, cap;
    bool failed;
};

static void tprintf(struct text *t, const char *fmt, ...) LT_PRINTF(2, 3);

static void tprintf(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->failed)
        return;
    for (;;) {
        size_t room = t->cap - t->len;
        char *np;

        va_start(ap, fmt);
        n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->p && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        np = lt_reallocarray(t->p, t->cap + (size_t)n + 4096, 1);
        if (np == NULL) {
            t->failed = true;
            return;
        }
        t->p = np;
        t->cap += (size_t)n + 4096;
    }
}

static void metrics_requests(struct ext_server *s, struct text *t)
{
    tprintf(t, "# HELP lotus_extender_requests_total Extender verb requests by outcome.\n"
               "# TYPE lotus_extender_requests_total counter\n");
    for (int v = 0; v < V_N; v++)
        for (int o = 0; o < O_N; o++)
            tprintf(t,
                    "lotus_extender_requests_total{verb=\"%s\",outcome=\"%s\"} %" PRIuFAST64 "\n",
                    verb_names[v], outcome_names[o], atomic_load(&s->m.requests[v][o]));
    tprintf(t, "# HELP lotus_extender_request_duration_seconds Server time per verb request, "
               "from headers received to answer queued.\n"
               "# TYPE lotus_extender_request_duration_seconds histogram\n");
    for (int v = 0; v < V_N; v++) {
        uint_fast64_t cum = 0;

        for (size_t b = 0; b < N_BUCKETS; b++) {
            cum += atomic_load(&s->m.bucket[v][b]);
            tprintf(t,
                    "lotus_extender_request_duration_seconds_bucket{verb=\"%s\",le=\"%g\"} "
                    "%" PRIuFAST64 "\n",
                    verb_names[v], buckets[b], cum);
        }
        tprintf(t,
                "lotus_extender_request_duration_seconds_bucket{verb=\"%s\",le=\"+Inf\"} "
                "%" PRIuFAST64 "\n"
                "lotus_extender_request_duration_seconds_sum{verb=\"%s\"} %.9f\n"
                "lotus_extender_request_duration_seconds_count{verb=\"%s\"} %" PRIuFAST64 "\n",
                verb_names[v], atomic_load(&s->m.count[v]), verb_names[v],
                (double)atomic_load(&s->m.sum_ns[v]) / 1e9, verb_names[v],
                atomic_load(&s->m.count[v]));
    }
    tprintf(t, "# HELP lotus_extender_http_rejected_total Requests refused before any verb ran, "
               "by HTTP status.\n# TYPE lotus_extender_http_rejected_total counter\n");
    for (int r = 0; r < R_N; r++)
        tprintf(t, "lotus_extender_http_rejected_total{code=\"%s\"} %" PRIuFAST64 "\n",
                reject_codes[r], atomic_load(&s->m.rejected[r]));
    tprintf(t,
            "# HELP lotus_extender_in_flight_requests Requests being served.\n"
            "# TYPE lotus_extender_in_flight_requests gauge\n"
            "lotus_extender_in_flight_requests %ld\n",
            atomic_load(&s->in_flight));
}

static void metrics_connections(struct ext_server *s, struct text *t)
{
    tprintf(t,
            "# HELP lotus_extender_connections Open connections.\n"
            "# TYPE lotus_extender_connections gauge\n"
            "lotus_extender_connections %ld\n"
            "# HELP lotus_extender_body_bytes Bytes of request bodies held against "
            "--body-budget.\n"
            "# TYPE lotus_extender_body_bytes gauge\n"
            "lotus_extender_body_bytes %" PRIdFAST64 "\n"
            "# HELP lotus_extender_connections_refused_total Connections closed at once at "
            "--max-connections.\n"
            "# TYPE lotus_extender_connections_refused_total counter\n"
            "lotus_extender_connections_refused_total %" PRIuFAST64 "\n"
            "# HELP lotus_extender_connections_cut_total Connections cut because a request was "
            "not complete by its deadline.\n"
            "# TYPE lotus_extender_connections_cut_total counter\n",
            atomic_load(&s->n_conns), atomic_load(&s->body_bytes), atomic_load(&s->m.refused));
    for (int k = 0; k < CUT_N; k++)
        tprintf(t, "lotus_extender_connections_cut_total{reason=\"%s\"} %" PRIuFAST64 "\n",
                cut_names[k], atomic_load(&s->m.cut[k]));
}

/* One gauge or counter line with its HELP and TYPE. */
static void metric(struct text *t, const char *name, const char *type, const char *help, double v)
{
    tprintf(t, "# HELP %s %s\n# TYPE %s %s\n%s %.15g\n", name, help, name, type, name, v);
}

static void metrics_sticky(struct ext_server *s, struct text *t)
{
    metric(t, "lotus_extender_sticky_pool", "gauge",
           "HYBRID sticky pool size (--sticky-slots; 0: off).", (double)s->cfg->slots.sticky);
    tprintf(t, "# HELP lotus_extender_sticky_labels_total Sticky labels at bind by outcome "
               "(labelled, failed, pool_full, reverted, revert_failed).\n"
               "# TYPE lotus_extender_sticky_labels_total counter\n");
    for (int k = 0; k < ST_N; k++)
        tprintf(t, "lotus_extender_sticky_labels_total{outcome=\"%s\"} %" PRIuFAST64 "\n",
                sticky_names[k], atomic_load(&s->m.sticky[k]));
}

static void metrics_cache(struct ext_server *s, struct text *t)
{
    struct ext_cache_stats st;

    memset(&st, 0, sizeof(st));
    ext_cache_stats(s->cache, &st);
    metric(t, "lotus_extender_cache_synced", "gauge",
           "1 once the cache has a complete view of the cluster.", st.synced ? 1 : 0);
    metric(t, "lotus_extender_snapshot_version", "gauge", "Version of the current snapshot.",
           (double)st.snapshot_version);
    metric(t, "lotus_extender_snapshot_age_seconds", "gauge",
           "Time since the current snapshot was built.", (double)st.snapshot_age_ms / 1e3);
    metric(t, "lotus_extender_feed_age_seconds", "gauge",
           "Time since the feed was last known current: an event, a list, or a probe of the "
           "API server while both watches stream (since start before any).",
           (double)st.feed_age_ms / 1e3);
    metric(t, "lotus_extender_feed_probe_failures", "gauge",
           "API server probes failed in a row (0: the last one succeeded).",
           (double)st.probe_failures);
    metric(t, "lotus_extender_nodes", "gauge", "Nodes in the current snapshot.", (double)st.nodes);
    metric(t, "lotus_extender_pods", "gauge", "Pods counted in the current snapshot.",
           (double)st.pods);
    metric(t, "lotus_extender_assumed_pods", "gauge",
           "Pods bound by this extender and not yet confirmed by the watch.", (double)st.assumed);
    metric(t, "lotus_extender_watch_restarts_total", "counter",
           "WATCH requests after the first of each sync (nodes and pods).",
           (double)st.watch_restarts);
    metric(t, "lotus_extender_relists_total", "counter",
           "LISTs started, the first ones included (nodes and pods).", (double)st.relists);
    metric(t, "lotus_extender_feed_errors_total", "counter",
           "List or watch failures the cache retried.", (double)st.feed_errors);
}

static enum MHD_Result serve_metrics(struct ext_server *s, struct MHD_Connection *conn)
{
    struct text t = {0};

    metrics_requests(s, &t);
    metrics_connections(s, &t);
    metrics_cache(s, &t);
    metrics_sticky(s, &t);
    tprintf(&t,
            "# HELP lotus_extender_build_info Version and configured policies.\n"
            "# TYPE lotus_extender_build_info gauge\n"
            "lotus_extender_build_info{version=\"%s\",policy=\"%s\",eviction=\"%s\"} 1\n"
            "# HELP lotus_extender_start_time_seconds Start time, Unix seconds.\n"
            "# TYPE lotus_extender_start_time_seconds gauge\n"
            "lotus_extender_start_time_seconds %.3f\n",
            LOTUS_VERSION, lt_policy_name(s->dc.policy), lt_evict_name(s->dc.evict),
            (double)s->started_ms / 1e3);
    if (t.failed) {
        lt_free(t.p);
        return reply_text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    return reply(s, conn, MHD_HTTP_OK, t.p, t.len, "text/plain; version=0.0.4; charset=utf-8");
}

static enum MHD_Result serve_version(struct ext_server *s, struct MHD_Connection *conn)
{
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s}", "name", "lotus-extender", "version", LOTUS_VERSION,
                  "policy", lt_policy_name(s->dc.policy), "eviction", lt_evict_name(s->dc.evict));
    char *d = o ? json_dumps(o, JSON_COMPACT) : NULL;
    char *copy = d ? lt_strdup(d) : NULL;

    json_decref(o);
    free(d);
    if (copy == NULL)
        return reply_text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return reply(s, conn, MHD_HTTP_OK, copy, strlen(copy), "application/json");
}

static enum MHD_Result serve_get(struct ext_server *s, struct MHD_Connection *conn, enum route rt)
{
    struct ext_cache_stats st;

    switch (rt) {
    case ROUTE_HEALTHZ:
        return reply_text(s, conn, MHD_HTTP_OK, "ok\n");
    case ROUTE_READYZ:
        memset(&st, 0, sizeof(st));
        ext_cache_stats(s->cache, &st);
        if (atomic_load(&s->draining))
            return reply_text(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "shutting down\n");
        if (!st.synced)
            return reply_text(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "cache not synced\n");
        if (s->cfg->max_feed_age_ms > 0 && st.feed_age_ms > s->cfg->max_feed_age_ms) {
            char msg[160];

            snprintf(msg, sizeof(msg),
                     "feed stale: no current contact with the API server for %.1f s (max %.1f s)\n",
                     (double)st.feed_age_ms / 1e3, (double)s->cfg->max_feed_age_ms / 1e3);
            return reply_text(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
        }
        return reply_text(s, conn, MHD_HTTP_OK, "ok\n");
    case ROUTE_METRICS:
        return serve_metrics(s, conn);
    case ROUTE_VERSION:
        return serve_version(s, conn);
    case ROUTE_VERB:
        break;
    }
    return MHD_NO;
}

/* ------------------------------------------------------------------------------------------
 * Routing and the access handler
 */

/* Routes url; returns false for an unknown path. */
static bool route(const struct ext_server *s, const char *url, enum route *rt, enum verb *v)
{
    static const struct {
        const char *path;
        enum route rt;
    } fixed[] = {{"/healthz", ROUTE_HEALTHZ},
                 {"/readyz", ROUTE_READYZ},
                 {"/metrics", ROUTE_METRICS},
                 {"/version", ROUTE_VERSION}};
    const char *p = s->cfg->prefix;
    size_t pl = strlen(p);

    if (strncmp(url, p, pl) == 0 && url[pl] == '/') {
        for (int i = 0; i < V_N; i++) {
            if (strcmp(url + pl + 1, verb_names[i]) == 0) {
                *rt = ROUTE_VERB;
                *v = (enum verb)i;
                return true;
            }
        }
    }
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (strcmp(url, fixed[i].path) == 0) {
            *rt = fixed[i].rt;
            return true;
        }
    }
    return false;
}

/* True if the DER certificate der lists the clientAuth extended key usage. RFC 5280 reads a
 * certificate without the extension as good for any purpose, and GnuTLS's chain check does
 * too; lotus does not: a certificate the CA issued for something else (a server, a kubelet
 * serving certificate) must not pass for kube-scheduler. */
static bool has_client_auth(const gnutls_datum_t *der)
{
    gnutls_x509_crt_t crt;
    bool found = false;

    if (gnutls_x509_crt_init(&crt) < 0)
        return false;
    if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) >= 0) {
        for (unsigned int i = 0; !found; i++) {
            char oid[128];
            size_t len = sizeof(oid);

            if (gnutls_x509_crt_get_key_purpose_oid(crt, i, oid, &len, NULL) < 0)
                break;
            found = strcmp(oid, GNUTLS_KP_TLS_WWW_CLIENT) == 0;
        }
    }
    gnutls_x509_crt_deinit(crt);
    return found;
}

/* True if the connection presented a client certificate that verifies against the CA, for
 * TLS client authentication: the chain's key purposes allow it, and the certificate itself
 * lists clientAuth. */
static bool client_cert_ok(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)(uintptr_t)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    const gnutls_datum_t *chain;
    unsigned int status = 0, n = 0;
    gnutls_session_t session;

    if (ci == NULL || ci->tls_session == NULL)
        return false;
    session = (gnutls_session_t)ci->tls_session;
    if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0 || status != 0)
        return false;
    chain = gnutls_certificate_get_peers(session, &n);
    return chain != NULL && n > 0 && has_client_auth(&chain[0]);
}

/* ------------------------------------------------------------------------------------------
 * Connections: deadlines and the sweeper
 */

/* The connection's record (NULL if it could not be made: the connection is being cut). */
static struct conn *conn_of(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/* A request starts on c at now_ms: its headers are due --header-timeout from now (or the whole
 * request --request-timeout from now, if that is earlier). */
static void conn_request_start(struct ext_server *s, struct conn *c, int64_t now_ms)
{
    const struct ext_config *cfg = s->cfg;
    bool header = cfg->header_timeout_ms < cfg->request_timeout_ms;

    if (c == NULL)
        return;
    c->start_ms = now_ms;
    atomic_store(&c->why, header ? CUT_HEADER : CUT_REQUEST);
    atomic_store(&c->deadline_ms,
                 now_ms + (header ? cfg->header_timeout_ms : cfg->request_timeout_ms));
}

/* The headers of c's request are in and its body is to be read: the whole request is due
 * --request-timeout from its start. */
static void conn_headers_complete(struct ext_server *s, struct conn *c)
{
    if (c == NULL)
        return;
    atomic_store(&c->why, CUT_REQUEST);
    atomic_store(&c->deadline_ms, c->start_ms + s->cfg->request_timeout_ms);
}

/* The request on c is complete: it is decided and answered with no deadline of ours (a slow
 * reader of the answer meets --conn-timeout). */
static void conn_request_complete(struct conn *c)
{
    if (c != NULL)
        atomic_store(&c->deadline_ms, 0);
}

static void conn_notify(void *cls, struct MHD_Connection *mc, void **ctx,
                        enum MHD_ConnectionNotificationCode code)
{
    struct ext_server *s = cls;
    const union MHD_ConnectionInfo *fi, *ai;
    struct conn *c = *ctx;

    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (c == NULL)
            return;
        pthread_mutex_lock(&s->conns_lock);
        if (c->prev)
            c->prev->next = c->next;
        else
            s->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        pthread_mutex_unlock(&s->conns_lock);
        atomic_fetch_sub(&s->n_conns, 1);
        lt_free(c);
        *ctx = NULL;
        return;
    }
    fi = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    c = lt_calloc(1, sizeof(*c));
    if (c == NULL || fi == NULL) { /* a connection without deadline is not kept */
        if (fi != NULL)
            shutdown(fi->connect_fd, SHUT_RDWR);
        lt_free(c);
        return;
    }
    c->fd = fi->connect_fd;
    ai = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ai == NULL || ai->client_addr == NULL ||
        getnameinfo(ai->client_addr,
                    ai->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                           : sizeof(struct sockaddr_in),
                    c->client, sizeof(c->client), NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(c->client, sizeof(c->client), "?");
    conn_request_start(s, c, mono_ms());
    pthread_mutex_lock(&s->conns_lock);
    c->next = s->conns;
    if (c->next)
        c->next->prev = c;
    s->conns = c;
    pthread_mutex_unlock(&s->conns_lock);
    atomic_fetch_add(&s->n_conns, 1);
    *ctx = c;
}

/* Shuts down every connection past its deadline. shutdown(2) from this thread is safe: the
 * socket stays open (MHD closes it, after unlinking the record under conns_lock), and the
 * worker that owns the connection sees the end of the stream and closes it. Called with
 * conns_lock held. */
static void sweep(struct ext_server *s, int64_t now_ms)
{
    for (struct conn *c = s->conns; c != NULL; c = c->next) {
        int64_t d = atomic_load(&c->deadline_ms);
        int why = atomic_load(&c->why);

        if (c->cut || d == 0 || now_ms < d)
            continue;
        c->cut = true;
        shutdown(c->fd, SHUT_RDWR);
        atomic_fetch_add_explicit(&s->m.cut[why], 1, memory_order_relaxed);
        ext_log(EXT_LOG_WARN, "connection cut: request not complete by its deadline",
                "{s:s, s:s, s:I}", "reason", cut_names[why], "client", c->client, "limit_ms",
                (json_int_t)(why == CUT_HEADER ? s->cfg->header_timeout_ms
                                               : s->cfg->request_timeout_ms));
    }
}

/* MHD's accept policy: a connection past --max-connections is refused, i.e. closed at once.
 * libmicrohttpd's own limit would instead stop accepting (its workers take the listening
 * socket out of their epoll sets), leaving new clients unanswered in the kernel's backlog, so
 * its limit is set above ours (start). Counted by conn_notify; with several worker threads
 * accepting at once a few more may pass for an instant. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    struct ext_server *s = cls;
    char client[INET6_ADDRSTRLEN];

    if (atomic_load(&s->n_conns) < s->cfg->max_connections)
        return MHD_YES;
    atomic_fetch_add_explicit(&s->m.refused, 1, memory_order_relaxed);
    if (getnameinfo(addr, len, client, sizeof(client), NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(client, sizeof(client), "?");
    ext_log(EXT_LOG_WARN, "connection refused: --max-connections reached", "{s:s, s:I}", "client",
            client, "max_connections", (json_int_t)s->cfg->max_connections);
    return MHD_NO;
}

/* How often the sweeper looks: deadlines are kept to within this. */
#define SWEEP_MS 100

static void *sweeper_main(void *arg)
{
    struct ext_server *s = arg;

    pthread_mutex_lock(&s->conns_lock);
    while (!s->sweep_stop) {
        struct timespec until;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += SWEEP_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->sweep_cond, &s->conns_lock, &until);
        if (!s->sweep_stop)
            sweep(s, mono_ms());
    }
    pthread_mutex_unlock(&s->conns_lock);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Request bodies and the budget
 */

/* Reserves n bytes of --body-budget; false if the bodies in memory would then exceed it. */
static bool budget_take(struct ext_server *s, size_t n)
{
    int_fast64_t used = atomic_load(&s->body_bytes);

    do {
        if (n > (uint64_t)(s->cfg->body_budget - used))
            return false;
    } while (!atomic_compare_exchange_weak(&s->body_bytes, &used, used + (int_fast64_t)n));
    return true;
}

/* Frees r's body and gives its reservation back. */
static void body_drop(struct ext_server *s, struct req *r)
{
    lt_free(r->body);
    r->body = NULL;
    r->len = r->cap = 0;
    atomic_fetch_sub(&s->body_bytes, (int_fast64_t)r->reserved);
    r->reserved = 0;
}

/* The body is refused (too_large or busy set by the caller): what was read is freed at once,
 * and the rest is counted and dropped, so that the request is answered (413, 503) once it is
 * complete: MHD cannot queue an answer while a body is arriving. */
static void body_refuse(struct ext_server *s, struct req *r)
{
    r->discarded = r->len;
    body_drop(s, r);
}

/* Grows r's buffer to hold need bytes: doubling from 16 KiB up to --max-body + 1, within
 * the bytes reserved for a Content-Length body or, for a chunked one, reserving each growth
 * (bounded by the doubling, so at most twice what arrived). Sets busy when the budget is out;
 * false when memory is. */
static bool body_grow(struct ext_server *s, struct req *r, size_t need)
{
    size_t max = (size_t)s->cfg->max_body, nc = r->cap ? r->cap * 2 : 16384;
    char *nb;

    while (nc < need)
        nc *= 2;
    nc = nc > max + 1 ? max + 1 : nc;
    if (r->chunked && nc > r->reserved) {
        if (!budget_take(s, nc - r->reserved)) {
            r->busy = true;
            body_refuse(s, r);
            return true;
        }
        r->reserved = nc;
    } else if (!r->chunked) {
        nc = nc > r->reserved ? r->reserved : nc; /* Content-Length + 1 */
        if (nc < need)
            return false; /* more than Content-Length: MHD never passes that on */
    }
    nb = lt_reallocarray(r->body, nc, 1);
    if (nb == NULL)
        return false;
    r->body = nb;
    r->cap = nc;
    return true;
}

/* Appends a body chunk. Past --max-body (a chunked body: Content-Length was checked before)
 * or past --body-budget, the body is refused (body_refuse). False, to disconnect, once more
 * than twice the limit has arrived for a refused body, or when memory runs out. */
static bool body_append(struct ext_server *s, struct req *r, const char *data, size_t n)
{
    size_t max = (size_t)s->cfg->max_body;

    if (!r->too_large && !r->busy && n > max - r->len) {
        r->too_large = true;
        body_refuse(s, r);
    }
    if (!r->too_large && !r->busy && r->len + n + 1 > r->cap && !body_grow(s, r, r->len + n + 1))
        return false;
    if (r->too_large || r->busy) {
        r->discarded += n;
        return r->discarded <= 2 * (uint64_t)max; /* a client streaming on and on is cut */
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return true;
}

/* ------------------------------------------------------------------------------------------
 * The access handler
 */

/* The first call of a request: route, method, client certificate, Content-Length and the
 * budget; answers everything but a verb request, for which it sets *con_cls and returns
 * MHD_YES to read the body. */
static enum MHD_Result first_call_route(struct ext_server *s, struct MHD_Connection *conn,
                                        const char *url, const char *method, void **con_cls)
{
    enum route rt = ROUTE_HEALTHZ;
    enum verb v = V_FILTER;
    unsigned long long len = 0;
    const char *cl;
    struct req *r;

    if (!route(s, url, &rt, &v))
        return reject(s, conn, R_NOT_FOUND, NULL, "404 page not found\n");
    if (rt != ROUTE_VERB) {
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
            return reject(s, conn, R_METHOD, "GET, HEAD", "405 method not allowed\n");
        return serve_get(s, conn, rt);
    }
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return reject(s, conn, R_METHOD, "POST", "405 method not allowed\n");
    if (s->tls_ca != NULL && !client_cert_ok(conn))
        return reject(s, conn, R_FORBIDDEN, NULL,
                      "403 client certificate required (signed by --tls-client-ca, "
                      "extendedKeyUsage clientAuth)\n");
    cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl != NULL && (len = strtoull(cl, NULL, 10)) > (unsigned long long)s->cfg->max_body)
        return reject_too_large(s, conn);
    if (cl != NULL && !budget_take(s, (size_t)len + 1))
        return reject_busy(s, conn);
    r = lt_calloc(1, sizeof(*r));
    if (r == NULL) {
        if (cl != NULL)
            atomic_fetch_sub(&s->body_bytes, (int_fast64_t)len + 1);
        return MHD_NO;
    }
    r->verb = v;
    r->chunked = cl == NULL;
    r->reserved = cl != NULL ? (size_t)len + 1 : 0;
    r->start_ns = mono_ns();
    *con_cls = r;
    atomic_fetch_add(&s->in_flight, 1);
    return MHD_YES;
}

/* first_call_route, then the connection's deadline: none once the request is answered; for a
 * body to read, the request's deadline (its headers are in). */
static enum MHD_Result first_call(struct ext_server *s, struct MHD_Connection *conn,
                                  const char *url, const char *method, void **con_cls)
{
    enum MHD_Result ret = first_call_route(s, conn, url, method, con_cls);

    if (*con_cls == NULL)
        conn_request_complete(conn_of(conn));
    else
        conn_headers_complete(s, conn_of(conn));
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
    static enum outcome (*const verbs[V_N])(struct ext_server *, struct MHD_Connection *,
                                            struct req *, enum MHD_Result *) = {
        do_filter, do_prioritize, do_preempt, do_bind};
    struct ext_server *s = cls;
    struct req *r = *con_cls;
    enum MHD_Result ret = MHD_NO;
    enum outcome o;

    (void)version;
    if (r == NULL)
        return first_call(s, conn, url, method, con_cls);
    if (r->job != NULL) { /* resumed by the bind thread: the binding's answer */
        o = bind_finish(s, conn, r, &ret);
        observe(s, r->verb, o, r->start_ns);
        return ret;
    }
    if (*upload_data_size > 0) {
        bool ok = body_append(s, r, upload_data, *upload_data_size);

        *upload_data_size = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    conn_request_complete(conn_of(conn));
    if (r->too_large)
        return reject_too_large(s, conn);
    if (r->busy)
        return reject_busy(s, conn);
    if (r->body == NULL && body_append(s, r, "", 0) == false)
        return MHD_NO;
    if (r->busy) /* not even the empty body's byte fitted */
        return reject_busy(s, conn);
    o = verbs[r->verb](s, conn, r, &ret);
    body_drop(s, r); /* the answer is queued and owns its own bytes */
    if (o != O_PENDING)
        observe(s, r->verb, o, r->start_ns);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct ext_server *s = cls;
    struct req *r = *con_cls;

    conn_request_start(s, conn_of(conn), mono_ms()); /* the next request's clock starts */
    if (r == NULL)
        return;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        ext_log(EXT_LOG_DEBUG, "request ended early", "{s:s, s:i}", "verb", verb_names[r->verb],
                "code", (int)toe);
    body_drop(s, r);
    bind_job_free(r->job); /* a connection closed while its binding ran: done by now */
    lt_free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&s->in_flight, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) LT_PRINTF(2, 0);

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char text[512];
    size_t n;

    (void)cls;
    vsnprintf(text, sizeof(text), fmt, ap);
    n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        text[--n] = '\0';
    ext_log(EXT_LOG_WARN, "libmicrohttpd", "{s:s}", "detail", text);
}

/* ------------------------------------------------------------------------------------------
 * Start and stop
 */

/* Reads a whole (small) PEM file into an owned string. */
static char *read_pem(const char *path, const char *flag, struct lt_err *err)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    size_t len = 0, cap = 0, n;

    if (f == NULL) {
        lt_err_set(err, LT_EIO, 0, 0, "%s: cannot read '%s': %s", flag, path, strerror(errno));
        return NULL;
    }
    do {
        if (cap - len < 4097) {
            char *np = cap < (1u << 24) ? lt_reallocarray(p, cap + 65536, 1) : NULL;

            if (np == NULL) {
                lt_err_set(err, LT_EIO, 0, 0, "%s: '%s' is not a PEM file of sane size", flag,
                           path);
                lt_free(p);
                fclose(f);
                return NULL;
            }
            p = np;
            cap += 65536;
        }
        n = fread(p + len, 1, 4096, f);
        len += n;
    } while (n > 0);
    fclose(f);
    p[len] = '\0';
    return p;
}

/* ------------------------------------------------------------------------------------------
 * The TLS certificate and key: read at start and again on SIGHUP
 */

#define TLS_MAX_CHAIN 16 /* certificates in --tls-cert: the server's and its intermediates */

/* The TLS versions and suites served (GnuTLS priority string): TLS 1.3 and 1.2 only, ECDHE
 * key exchange only (no static RSA: no forward secrecy; no finite-field DHE), AEAD ciphers
 * only (no CBC with SHA-1), elliptic-curve groups, the server's order. Go's crypto/tls, which
 * kube-scheduler uses, offers all of these. */
#define TLS_PRIORITIES                                                                             \
    "SECURE256:+SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:"               \
    "+ECDHE-RSA:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM:-MAC-ALL:+AEAD:"          \
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:%SERVER_PRECEDENCE"

/* One reading of --tls-cert and --tls-key. Handshakes take the newest through cert_retrieve;
 * older ones stay until the server is freed, since a handshake under way may still use them
 * (a few KB per reload). */
struct tls_creds {
    struct tls_creds *older;
    gnutls_pcert_st pcerts[TLS_MAX_CHAIN];
    unsigned int n; /* pcerts in use */
    gnutls_privkey_t key;
};

/* The credentials handshakes use. GnuTLS's retrieve callback has no argument of its own, so
 * this is process state: one TLS server per process (main starts one). */
static _Atomic(struct tls_creds *) tls_current;

/* libmicrohttpd's MHD_OPTION_HTTPS_CERT_CALLBACK: the certificate chain and key of every
 * handshake, whatever the client asks for; borrowed by GnuTLS. */
static int cert_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *privkey)
{
    struct tls_creds *c = atomic_load(&tls_current);

    (void)session, (void)req_ca_rdn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
    if (c == NULL)
        return -1;
    *pcert = c->pcerts;
    *pcert_length = c->n;
    *privkey = c->key;
    return 0;
}

/* Frees c and every older generation. */
static void creds_free(struct tls_creds *c)
{
    while (c != NULL) {
        struct tls_creds *older = c->older;

        for (unsigned int i = 0; i < c->n; i++)
            gnutls_pcert_deinit(&c->pcerts[i]);
        if (c->key != NULL)
            gnutls_privkey_deinit(c->key);
        lt_free(c);
        c = older;
    }
}

/* The certificate chain and key of the PEM texts cert and key (the key checked against the
 * certificate by loading both into a scratch credentials set first). */
static int creds_import(struct tls_creds *c, const struct ext_config *cfg, const char *cert,
                        const char *key, struct lt_err *err)
{
    gnutls_datum_t cd = {(unsigned char *)(uintptr_t)cert, (unsigned int)strlen(cert)};
    gnutls_datum_t kd = {(unsigned char *)(uintptr_t)key, (unsigned int)strlen(key)};
    gnutls_certificate_credentials_t check;
    gnutls_privkey_t k;
    int rc;

    c->n = TLS_MAX_CHAIN;
    rc = gnutls_pcert_list_import_x509_raw(c->pcerts, &c->n, &cd, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0) {
        c->n = 0;
        return lt_err_set(err, LT_EPARSE, 0, 0,
                          "--tls-cert: '%s' is not a PEM certificate chain: %s", cfg->tls_cert,
                          gnutls_strerror(rc));
    }
    if ((rc = gnutls_privkey_init(&k)) < 0)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "--tls-key: %s", gnutls_strerror(rc));
    c->key = k;
    rc = gnutls_privkey_import_x509_raw(k, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (rc < 0)
        return lt_err_set(err, LT_EPARSE, 0, 0, "--tls-key: '%s' is not a PEM private key: %s",
                          cfg->tls_key, gnutls_strerror(rc));
    if ((rc = gnutls_certificate_allocate_credentials(&check)) < 0)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "--tls-key: %s", gnutls_strerror(rc));
    rc = gnutls_certificate_set_x509_key_mem2(check, &cd, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(check);
    if (rc < 0)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "--tls-key: '%s' does not go with --tls-cert '%s': %s", cfg->tls_key,
                          cfg->tls_cert, gnutls_strerror(rc));
    return 0;
}

/* Reads --tls-cert and --tls-key; NULL and err (naming the flag and the file) if a file is
 * unreadable or not PEM, or if the key is not the certificate's. Owned: creds_free. */
static struct tls_creds *creds_load(const struct ext_config *cfg, struct lt_err *err)
{
    char *cert = read_pem(cfg->tls_cert, "--tls-cert", err);
    char *key = cert ? read_pem(cfg->tls_key, "--tls-key", err) : NULL;
    struct tls_creds *c = key ? lt_calloc(1, sizeof(*c)) : NULL;

    if (key != NULL && c == NULL)
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the TLS certificate");
    if (c != NULL && creds_import(c, cfg, cert, key, err) < 0) {
        creds_free(c);
        c = NULL;
    }
    if (key != NULL)
        memset(key, 0, strlen(key)); /* no copy of the private key left in the heap */
    lt_free(key);
    lt_free(cert);
    return c;
}

static int load_tls(struct ext_server *s, struct lt_err *err)
{
    const struct ext_config *c = s->cfg;

    if (c->tls_cert[0] == '\0')
        return 0;
    s->tls = creds_load(c, err);
    if (s->tls == NULL)
        return err ? err->code : LT_EIO;
    atomic_store(&tls_current, s->tls);
    if (c->tls_client_ca[0] != '\0' &&
        (s->tls_ca = read_pem(c->tls_client_ca, "--tls-client-ca", err)) == NULL)
        return LT_EIO;
    return 0;
}

int ext_server_reload_tls(struct ext_server *s, struct lt_err *err)
{
    struct tls_creds *c;

    if (s->tls == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no TLS to reload: --tls-cert is not set");
    c = creds_load(s->cfg, err);
    if (c == NULL)
        return err ? err->code : LT_EIO;
    c->older = s->tls;
    s->tls = c;
    atomic_store(&tls_current, c); /* the next handshake takes it */
    return 0;
}

/* Starts MHD on addr (NULL: every address, dual stack if ipv6). */
static struct MHD_Daemon *start(struct ext_server *s, const struct sockaddr *addr, bool ipv6)
{
    const struct ext_config *c = s->cfg;
    unsigned int flags =
        MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
    unsigned int timeout_s = (unsigned int)((c->conn_timeout_ms + 999) / 1000);
    /* MHD splits its limit evenly over the workers; above ours (accept_policy) even when one
     * worker holds every connection, so that it never stops accepting. At most (10^6 + 1024)
     * x 1024 with the table's bounds: fits in an unsigned int. */
    unsigned int mhd_limit = (unsigned int)((c->max_connections + c->threads) * c->threads);
    struct MHD_OptionItem tls[5], *t = tls;

    if (ipv6)
        flags |= addr ? MHD_USE_IPv6 : MHD_USE_DUAL_STACK;
    if (s->tls) {
        flags |= MHD_USE_TLS;
        *t++ = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)cert_retrieve};
        *t++ = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                       (void *)(uintptr_t)TLS_PRIORITIES};
        if (s->tls_ca)
            *t++ = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, s->tls_ca};
    }
    *t = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    /* The logger goes first so that MHD's complaints about later options reach it. */
    return MHD_start_daemon(
        flags, s->port, accept_policy, s, handler, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)c->threads, MHD_OPTION_CONNECTION_LIMIT,
        mhd_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)c->max_connections_per_ip,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)c->listen_backlog,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_ARRAY, tls,
        MHD_OPTION_END);
}

static int start_listening(struct ext_server *s, struct lt_err *err)
{
    const struct ext_config *c = s->cfg;
    struct addrinfo hints, *ai = NULL;
    char port[8];
    int rc;

    if (c->host[0] == '\0') {
        s->d = start(s, NULL, true);
        if (s->d == NULL) /* no IPv6 in this network namespace */
            s->d = start(s, NULL, false);
    } else {
        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE;
        snprintf(port, sizeof(port), "%u", (unsigned)c->port);
        rc = getaddrinfo(c->host, port, &hints, &ai);
        if (rc != 0)
            return lt_err_set(err, LT_EIO, 0, 0, "--listen: cannot resolve '%s': %s", c->host,
                              gai_strerror(rc));
        s->d = start(s, ai->ai_addr, ai->ai_family == AF_INET6);
        freeaddrinfo(ai);
    }
    if (s->d == NULL)
        return lt_err_set(err, LT_EIO, 0, 0,
                          "--listen: cannot serve on '%s' (address in use, no permission, or "
                          "bad TLS files; see the libmicrohttpd log line above)",
                          c->listen);
    return 0;
}

/* Starts the sweeper; its condition variable waits on CLOCK_MONOTONIC. */
static int start_sweeper(struct ext_server *s, struct lt_err *err)
{
    pthread_condattr_t ca;
    int rc;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&s->sweep_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc == 0) {
        rc = pthread_create(&s->sweeper, NULL, sweeper_main, s);
        if (rc != 0)
            pthread_cond_destroy(&s->sweep_cond);
    }
    if (rc != 0)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "cannot start the deadline thread: %s",
                          strerror(rc));
    s->sweeper_started = true;
    return 0;
}

struct ext_server *ext_server_new(const struct ext_config *cfg, struct ext_cache *cache,
                                  struct kube_client *kube, struct lt_err *err)
{
    struct ext_server *s = lt_calloc(1, sizeof(*s));
    const union MHD_DaemonInfo *di;

    if (s == NULL) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the server");
        return NULL;
    }
    s->quiesced_fd = MHD_INVALID_SOCKET;
    pthread_mutex_init(&s->sticky_lock, NULL);
    pthread_mutex_init(&s->conns_lock, NULL);
    pthread_mutex_init(&s->bind_lock, NULL);
    pthread_cond_init(&s->bind_cond, NULL);
    s->cfg = cfg;
    s->cache = cache;
    s->kube = kube;
    s->dc.policy = cfg->pol;
    s->dc.evict = cfg->ev;
    s->dc.slots = &cfg->slots;
    s->dc.lotes = &cfg->lotes;
    s->port = cfg->port;
    s->started_ms = real_ms();
    if (start_sweeper(s, err) < 0 || start_binders(s, err) < 0 || load_tls(s, err) < 0 ||
        start_listening(s, err) < 0) {
        ext_server_free(s);
        return NULL;
    }
    di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    if (di != NULL)
        s->port = di->port;
    return s;
}

uint16_t ext_server_port(const struct ext_server *s)
{
    return s->port;
}

size_t ext_server_drain(struct ext_server *s, int64_t timeout_ms)
{
    int64_t end = mono_ns() + timeout_ms * 1000000;
    MHD_socket fd;
    long n;

    atomic_store(&s->draining, true);
    fd = MHD_quiesce_daemon(s->d);
    /* Not closed here: with a thread pool each worker removes the listen socket from its own
     * epoll set after quiesce returns, and MHD panics ("Failed to remove listen FD from epoll
     * set") if the descriptor is already closed. So it is shut down now (no new connection is
     * accepted) and closed after MHD_stop_daemon. */
    if (fd != MHD_INVALID_SOCKET) {
        shutdown(fd, SHUT_RDWR); /* Linux: the socket stops listening; new connects are refused */
        s->quiesced_fd = fd;
    }
    while ((n = atomic_load(&s->in_flight)) > 0 && mono_ns() < end) {
        struct timespec ts = {0, 5 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    return n > 0 ? (size_t)n : 0;
}

void ext_server_free(struct ext_server *s)
{
    if (s == NULL)
        return;
    if (s->sweeper_started) {
        pthread_mutex_lock(&s->conns_lock);
        s->sweep_stop = true;
        pthread_cond_signal(&s->sweep_cond);
        pthread_mutex_unlock(&s->conns_lock);
        pthread_join(s->sweeper, NULL);
        pthread_cond_destroy(&s->sweep_cond);
    }
    stop_binders(s); /* resumes every suspended connection: MHD may not stop with one */
    if (s->d)
        MHD_stop_daemon(s->d); /* every connection's _CLOSED unlinks its record */
    if (s->quiesced_fd != MHD_INVALID_SOCKET)
        close(s->quiesced_fd);
    if (s->tls != NULL)
        atomic_store(&tls_current, NULL);
    creds_free(s->tls);
    lt_free(s->tls_ca);
    pthread_mutex_destroy(&s->sticky_lock);
    pthread_mutex_destroy(&s->conns_lock);
    pthread_mutex_destroy(&s->bind_lock);
    pthread_cond_destroy(&s->bind_cond);
    lt_free(s);
}
