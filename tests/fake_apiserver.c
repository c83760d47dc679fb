/* fake_apiserver.c -- an in-process fake Kubernetes API server for tests (libmicrohttpd).
 *
 * Design. One mutex guards all state: the stored objects (a Jansson array per resource), the
 * RV counter, the per-resource stream queues, the scripted failures and the request log; one
 * condition variable (CLOCK_MONOTONIC) wakes stream readers and request waiters. MHD runs a
 * thread per connection, so a WATCH stream's content reader may block: it waits on the
 * condition variable for the next queue item in 20 ms slices and, between slices, peeks at the
 * socket to notice a client that closed its side (so a dead stream never eats an item meant
 * for the client's next stream). Each DATA item becomes one HTTP chunk; a PAUSE item between
 * two chunks makes the client receive them in separate reads.
 *
 * HTTP parsing is MHD's; this file only routes by method and path and builds JSON bodies.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* MSG_DONTWAIT, usleep */
#include "fake_apiserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#define FAKE_UPLOAD_MAX (1 << 20) /* binding bodies are < 1 KiB */
#define FAKE_WAIT_MS    20        /* reader wait slice between client-gone checks */
#define FAKE_PAUSE_MS   60        /* gap between the two halves of a split line */

enum item_kind { ITEM_DATA, ITEM_PAUSE, ITEM_DROP, ITEM_END };

struct item {
    enum item_kind kind;
    char *data; /* ITEM_DATA: owned bytes */
    size_t len;
    struct item *next;
};

struct request {
    char *text;    /* "GET /api/v1/pods?watch=1&..." */
    int64_t at_ms; /* CLOCK_MONOTONIC */
};

struct fake_api {
    struct MHD_Daemon *d;
    char url[64];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;
    char *token;                   /* required bearer token or NULL */
    int64_t rv;                    /* last resource version handed out */
    json_t *store[FAKE_RES_N];     /* arrays of objects */
    struct item *head[FAKE_RES_N]; /* stream queues */
    struct item *tail[FAKE_RES_N];
    int streams[FAKE_RES_N];     /* connected WATCH streams */
    int fail_status[FAKE_RES_N]; /* scripted WATCH answers */
    int fail_count[FAKE_RES_N];
    int expire_count[FAKE_RES_N]; /* scripted continue expiries */
    char *conflict;               /* next binding's 409 message or NULL */
    int bind_delay_ms;            /* the next bindings' answer delay */
    int bind_delay_count;         /* how many bindings it still applies to */
    size_t bindings;
    int patch_fail;   /* next pod PATCH's scripted status (0: none) */
    size_t patches;   /* pod PATCHes answered 200 */
    char *last_patch; /* body of the last pod PATCH received, or NULL */
    struct request *reqs;
    size_t n_reqs, cap_reqs;
};

/* The state of one WATCH response (MHD content reader). */
struct stream {
    struct fake_api *f;
    enum fake_res r;
    int fd;           /* the connection's socket, for the client-gone check */
    struct item *cur; /* item being sent */
    size_t off;       /* bytes of cur already sent */
};

/* The state of one request across MHD's calls of the access handler. */
struct call {
    bool recorded;
    char *body;
    size_t len;
    bool too_big;
};

static const char *const res_name[FAKE_RES_N] = {"nodes", "pods"};
static const char *const list_kind[FAKE_RES_N] = {"NodeList", "PodList"};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void deadline(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p) {
        fprintf(stderr, "fake_apiserver: out of memory\n");
        abort();
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;

    return memcpy(xmalloc(n), s, n);
}

/* ---- store and queue (caller holds f->lock) --------------------------------------------- */

static const char *meta_str(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

static bool same_object(json_t *a, json_t *b)
{
    const char *na = meta_str(a, "name"), *nb = meta_str(b, "name");
    const char *sa = meta_str(a, "namespace"), *sb = meta_str(b, "namespace");

    return na && nb && strcmp(na, nb) == 0 && strcmp(sa ? sa : "", sb ? sb : "") == 0;
}

/* Sets metadata.resourceVersion of obj to the next RV and returns it. */
static int64_t stamp(struct fake_api *f, json_t *obj)
{
    char s[32];
    json_t *meta = json_object_get(obj, "metadata");

    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    snprintf(s, sizeof(s), "%" PRId64, ++f->rv);
    json_object_set_new(meta, "resourceVersion", json_string(s));
    return f->rv;
}

/* Applies an ADDED/MODIFIED/DELETED of obj (borrowed) to the store. */
static void store_apply(struct fake_api *f, enum fake_res r, const char *type, json_t *obj)
{
    size_t i;
    json_t *o;

    json_array_foreach(f->store[r], i, o)
    {
        if (same_object(o, obj)) {
            if (strcmp(type, "DELETED") == 0)
                json_array_remove(f->store[r], i);
            else
                json_array_set(f->store[r], i, obj);
            return;
        }
    }
    if (strcmp(type, "DELETED") != 0)
        json_array_append(f->store[r], obj);
}

static void enqueue(struct fake_api *f, enum fake_res r, enum item_kind kind, const char *data,
                    size_t len)
{
    struct item *it = xmalloc(sizeof(*it));

    it->kind = kind;
    it->data = NULL;
    it->len = len;
    it->next = NULL;
    if (kind == ITEM_DATA)
        it->data = memcpy(xmalloc(len), data, len);
    if (f->tail[r])
        f->tail[r]->next = it;
    else
        f->head[r] = it;
    f->tail[r] = it;
    pthread_cond_broadcast(&f->cond);
}

static void item_free(struct item *it)
{
    if (it) {
        free(it->data);
        free(it);
    }
}

/* The event line for type/obj, '\n' included (malloc'd). */
static char *event_line(const char *type, json_t *obj, size_t *len)
{
    json_t *ev = json_pack("{s:s, s:O}", "type", type, "object", obj);
    char *s = json_dumps(ev, JSON_COMPACT);
    size_t n = strlen(s);
    char *line = xmalloc(n + 2);

    memcpy(line, s, n);
    line[n] = '\n';
    line[n + 1] = '\0';
    *len = n + 1;
    free(s);
    json_decref(ev);
    return line;
}

static json_t *status_json(int code, const char *reason, const char *msg)
{
    return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                     "metadata", "status", code < 300 ? "Success" : "Failure", "message", msg,
                     "reason", reason, "code", code);
}

/* ---- the test's API --------------------------------------------------------------------- */

int64_t fake_api_add(struct fake_api *f, enum fake_res r, json_t *obj)
{
    int64_t rv;

    pthread_mutex_lock(&f->lock);
    rv = stamp(f, obj);
    store_apply(f, r, "ADDED", obj);
    pthread_mutex_unlock(&f->lock);
    json_decref(obj);
    return rv;
}

static int64_t push(struct fake_api *f, enum fake_res r, const char *type, json_t *obj,
                    size_t split_at)
{
    bool change =
        strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0 || strcmp(type, "DELETED") == 0;
    int64_t rv = 0;
    size_t len;
    char *line;

    pthread_mutex_lock(&f->lock);
    if (change) {
        rv = stamp(f, obj);
        store_apply(f, r, type, obj);
    }
    line = event_line(type, obj, &len);
    if (split_at > 0 && split_at < len) {
        enqueue(f, r, ITEM_DATA, line, split_at);
        enqueue(f, r, ITEM_PAUSE, NULL, 0);
        enqueue(f, r, ITEM_DATA, line + split_at, len - split_at);
    } else {
        enqueue(f, r, ITEM_DATA, line, len);
    }
    pthread_mutex_unlock(&f->lock);
    free(line);
    json_decref(obj);
    return rv;
}

int64_t fake_push_event(struct fake_api *f, enum fake_res r, const char *type, json_t *obj)
{
    return push(f, r, type, obj, 0);
}

int64_t fake_push_event_split(struct fake_api *f, enum fake_res r, const char *type, json_t *obj,
                              size_t at)
{
    return push(f, r, type, obj, at);
}

int64_t fake_push_bookmark(struct fake_api *f, enum fake_res r)
{
    json_t *obj = json_pack("{s:s, s:s, s:{}}", "kind", r == FAKE_PODS ? "Pod" : "Node",
                            "apiVersion", "v1", "metadata");
    int64_t rv;
    size_t len;
    char *line;

    pthread_mutex_lock(&f->lock);
    rv = stamp(f, obj);
    line = event_line("BOOKMARK", obj, &len);
    enqueue(f, r, ITEM_DATA, line, len);
    pthread_mutex_unlock(&f->lock);
    free(line);
    json_decref(obj);
    return rv;
}

void fake_push_error_410(struct fake_api *f, enum fake_res r)
{
    char msg[96];

    pthread_mutex_lock(&f->lock);
    snprintf(msg, sizeof(msg), "too old resource version: 1 (%" PRId64 ")", f->rv);
    pthread_mutex_unlock(&f->lock);
    fake_push_event(f, r, "ERROR", status_json(410, "Expired", msg));
}

void fake_push_raw(struct fake_api *f, enum fake_res r, const char *line)
{
    size_t n = strlen(line);
    char *s = xmalloc(n + 1);

    memcpy(s, line, n);
    s[n] = '\n';
    pthread_mutex_lock(&f->lock);
    enqueue(f, r, ITEM_DATA, s, n + 1);
    pthread_mutex_unlock(&f->lock);
    free(s);
}

void fake_push_drop(struct fake_api *f, enum fake_res r)
{
    pthread_mutex_lock(&f->lock);
    enqueue(f, r, ITEM_DROP, NULL, 0);
    pthread_mutex_unlock(&f->lock);
}

void fake_push_end(struct fake_api *f, enum fake_res r)
{
    pthread_mutex_lock(&f->lock);
    enqueue(f, r, ITEM_END, NULL, 0);
    pthread_mutex_unlock(&f->lock);
}

void fake_api_fail_watch(struct fake_api *f, enum fake_res r, int status, int count)
{
    pthread_mutex_lock(&f->lock);
    f->fail_status[r] = status;
    f->fail_count[r] = count;
    pthread_mutex_unlock(&f->lock);
}

void fake_api_expire_continue(struct fake_api *f, enum fake_res r, int count)
{
    pthread_mutex_lock(&f->lock);
    f->expire_count[r] = count;
    pthread_mutex_unlock(&f->lock);
}

void fake_api_bind_conflict_next(struct fake_api *f, const char *message)
{
    pthread_mutex_lock(&f->lock);
    free(f->conflict);
    f->conflict = xstrdup(message);
    pthread_mutex_unlock(&f->lock);
}

void fake_api_bind_delay_next(struct fake_api *f, int ms)
{
    fake_api_bind_delay(f, ms, 1);
}

void fake_api_bind_delay(struct fake_api *f, int ms, int count)
{
    pthread_mutex_lock(&f->lock);
    f->bind_delay_ms = ms;
    f->bind_delay_count = count;
    pthread_mutex_unlock(&f->lock);
}

void fake_api_set_token(struct fake_api *f, const char *token)
{
    pthread_mutex_lock(&f->lock);
    free(f->token);
    f->token = token ? xstrdup(token) : NULL;
    pthread_mutex_unlock(&f->lock);
}

/* The stored pod ns/name (borrowed) or NULL. Caller holds f->lock. */
static json_t *find_pod(struct fake_api *f, const char *ns, const char *name)
{
    size_t i;
    json_t *o;

    json_array_foreach(f->store[FAKE_PODS], i, o)
    {
        const char *n = meta_str(o, "name"), *s = meta_str(o, "namespace");
        if (n && s && strcmp(n, name) == 0 && strcmp(s, ns) == 0)
            return o;
    }
    return NULL;
}

bool fake_api_pod_node(struct fake_api *f, const char *ns, const char *name, char *out, size_t cap)
{
    const char *node;
    bool ok = false;

    pthread_mutex_lock(&f->lock);
    node = json_string_value(
        json_object_get(json_object_get(find_pod(f, ns, name), "spec"), "nodeName"));
    if (node && *node) {
        snprintf(out, cap, "%s", node);
        ok = true;
    }
    pthread_mutex_unlock(&f->lock);
    return ok;
}

void fake_api_patch_fail_next(struct fake_api *f, int status)
{
    pthread_mutex_lock(&f->lock);
    f->patch_fail = status;
    pthread_mutex_unlock(&f->lock);
}

size_t fake_api_patches(struct fake_api *f)
{
    size_t n;

    pthread_mutex_lock(&f->lock);
    n = f->patches;
    pthread_mutex_unlock(&f->lock);
    return n;
}

bool fake_api_last_patch(struct fake_api *f, char *out, size_t cap)
{
    bool ok;

    pthread_mutex_lock(&f->lock);
    ok = f->last_patch != NULL;
    if (ok)
        snprintf(out, cap, "%s", f->last_patch);
    pthread_mutex_unlock(&f->lock);
    return ok;
}

bool fake_api_pod_label(struct fake_api *f, const char *ns, const char *name, const char *key,
                        char *out, size_t cap)
{
    const char *v;

    pthread_mutex_lock(&f->lock);
    v = json_string_value(json_object_get(
        json_object_get(json_object_get(find_pod(f, ns, name), "metadata"), "labels"), key));
    if (v)
        snprintf(out, cap, "%s", v);
    pthread_mutex_unlock(&f->lock);
    return v != NULL;
}

size_t fake_api_bindings(struct fake_api *f)
{
    size_t n;

    pthread_mutex_lock(&f->lock);
    n = f->bindings;
    pthread_mutex_unlock(&f->lock);
    return n;
}

size_t fake_api_request_count(struct fake_api *f)
{
    size_t n;

    pthread_mutex_lock(&f->lock);
    n = f->n_reqs;
    pthread_mutex_unlock(&f->lock);
    return n;
}

bool fake_api_request(struct fake_api *f, size_t i, char *out, size_t cap, int64_t *at_ms)
{
    bool ok = false;

    pthread_mutex_lock(&f->lock);
    if (i < f->n_reqs) {
        snprintf(out, cap, "%s", f->reqs[i].text);
        if (at_ms)
            *at_ms = f->reqs[i].at_ms;
        ok = true;
    }
    pthread_mutex_unlock(&f->lock);
    return ok;
}

bool fake_api_wait_request(struct fake_api *f, const char *needle, size_t from, int timeout_ms,
                           size_t *index)
{
    struct timespec ts;
    bool found = false;

    deadline(&ts, timeout_ms);
    pthread_mutex_lock(&f->lock);
    for (;;) {
        for (size_t i = from; i < f->n_reqs && !found; i++)
            if (strstr(f->reqs[i].text, needle)) {
                found = true;
                if (index)
                    *index = i;
            }
        if (found || pthread_cond_timedwait(&f->cond, &f->lock, &ts) == ETIMEDOUT)
            break;
    }
    for (size_t i = from; !found && i < f->n_reqs; i++)
        if (strstr(f->reqs[i].text, needle)) {
            found = true;
            if (index)
                *index = i;
        }
    pthread_mutex_unlock(&f->lock);
    return found;
}

int fake_api_streams(struct fake_api *f, enum fake_res r)
{
    int n;

    pthread_mutex_lock(&f->lock);
    n = f->streams[r];
    pthread_mutex_unlock(&f->lock);
    return n;
}

const char *fake_api_url(const struct fake_api *f)
{
    return f->url;
}

/* ---- request recording ------------------------------------------------------------------ */

struct text {
    char buf[2048];
    size_t len;
    bool first;
};

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    struct text *t = cls;
    int n;

    (void)kind;
    n = snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "%s%s%s%s", t->first ? "?" : "&", key,
                 value ? "=" : "", value ? value : "");
    if (n > 0 && (size_t)n < sizeof(t->buf) - t->len)
        t->len += (size_t)n;
    t->first = false;
    return MHD_YES;
}

static void record(struct fake_api *f, struct MHD_Connection *conn, const char *method,
                   const char *url)
{
    struct text t = {.first = true};
    int n = snprintf(t.buf, sizeof(t.buf), "%s %s", method, url);

    t.len = n > 0 && (size_t)n < sizeof(t.buf) ? (size_t)n : 0;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_arg, &t);
    pthread_mutex_lock(&f->lock);
    if (f->n_reqs == f->cap_reqs) {
        f->cap_reqs = f->cap_reqs ? f->cap_reqs * 2 : 64;
        f->reqs = realloc(f->reqs, f->cap_reqs * sizeof(*f->reqs));
        if (!f->reqs)
            abort();
    }
    f->reqs[f->n_reqs].text = xstrdup(t.buf);
    f->reqs[f->n_reqs].at_ms = now_ms();
    f->n_reqs++;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

/* ---- responses -------------------------------------------------------------------------- */

/* Queues a JSON body (obj stolen) with the given status. */
static enum MHD_Result reply_json(struct MHD_Connection *conn, unsigned int status, json_t *obj)
{
    char *s = json_dumps(obj, JSON_COMPACT);
    struct MHD_Response *resp;
    enum MHD_Result ret;

    json_decref(obj);
    resp = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result reply_status(struct MHD_Connection *conn, int code, const char *reason,
                                    const char *msg)
{
    return reply_json(conn, (unsigned int)code, status_json(code, reason, msg));
}

/* Parses the decimal prefix of s up to sep; -1 if there is none. */
static long long parse_num(const char *s, char sep, const char **end)
{
    long long v = 0;
    const char *p = s;

    while (*p >= '0' && *p <= '9' && v < 1000000000000LL)
        v = v * 10 + (*p++ - '0');
    if (p == s || *p != sep)
        return -1;
    *end = p;
    return v;
}

static enum MHD_Result serve_list(struct fake_api *f, struct MHD_Connection *conn, enum fake_res r)
{
    const char *lim = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit");
    const char *cont = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "continue");
    long long rv, off = 0, limit = lim ? parse_num(lim, '\0', &lim) : 0;
    const char *p;
    json_t *items = json_array(), *meta;
    char s[48];
    size_t n;

    pthread_mutex_lock(&f->lock);
    rv = f->rv;
    if (cont && *cont) {
        if (f->expire_count[r] > 0) {
            f->expire_count[r]--;
            pthread_mutex_unlock(&f->lock);
            json_decref(items);
            return reply_status(conn, 410, "Expired",
                                "The provided continue parameter is too old to display a "
                                "consistent list result.");
        }
        if ((rv = parse_num(cont, ':', &p)) < 0 || (off = parse_num(p + 1, '\0', &p)) < 0) {
            pthread_mutex_unlock(&f->lock);
            json_decref(items);
            return reply_status(conn, 400, "BadRequest", "malformed continue token");
        }
    }
    n = json_array_size(f->store[r]);
    for (size_t i = (size_t)off; i < n && (limit <= 0 || (long long)(i - (size_t)off) < limit); i++)
        json_array_append_new(items, json_deep_copy(json_array_get(f->store[r], i)));
    pthread_mutex_unlock(&f->lock);
    snprintf(s, sizeof(s), "%lld", rv);
    meta = json_pack("{s:s}", "resourceVersion", s);
    if (limit > 0 && (size_t)(off + limit) < n) {
        snprintf(s, sizeof(s), "%lld:%lld", rv, off + limit);
        json_object_set_new(meta, "continue", json_string(s));
    }
    return reply_json(conn, 200,
                      json_pack("{s:s, s:s, s:o, s:o}", "kind", list_kind[r], "apiVersion", "v1",
                                "metadata", meta, "items", items));
}

/* True if the client closed its side of fd. */
static bool client_gone(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c;

    if (fd < 0 || poll(&p, 1, 0) <= 0)
        return false;
    if (p.revents & (POLLHUP | POLLERR))
        return true;
    return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *s = cls;
    struct fake_api *f = s->f;
    struct timespec ts;
    struct item *it;
    size_t n;

    (void)pos;
    for (;;) {
        if (s->cur) {
            n = s->cur->len - s->off < max ? s->cur->len - s->off : max;
            memcpy(buf, s->cur->data + s->off, n);
            s->off += n;
            if (s->off == s->cur->len) {
                item_free(s->cur);
                s->cur = NULL;
            }
            return (ssize_t)n;
        }
        pthread_mutex_lock(&f->lock);
        while (!f->stopping && !f->head[s->r]) {
            deadline(&ts, FAKE_WAIT_MS);
            if (pthread_cond_timedwait(&f->cond, &f->lock, &ts) == ETIMEDOUT)
                break;
        }
        if (f->stopping) {
            pthread_mutex_unlock(&f->lock);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        it = f->head[s->r];
        if (!it) {
            pthread_mutex_unlock(&f->lock);
            if (client_gone(s->fd))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            continue;
        }
        f->head[s->r] = it->next;
        if (!f->head[s->r])
            f->tail[s->r] = NULL;
        pthread_mutex_unlock(&f->lock);
        switch (it->kind) {
        case ITEM_DATA:
            s->cur = it;
            s->off = 0;
            continue;
        case ITEM_PAUSE:
            item_free(it);
            usleep(FAKE_PAUSE_MS * 1000);
            continue;
        case ITEM_DROP:
            item_free(it);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        case ITEM_END:
            item_free(it);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
    }
}

static void stream_free(void *cls)
{
    struct stream *s = cls;

    pthread_mutex_lock(&s->f->lock);
    s->f->streams[s->r]--;
    pthread_mutex_unlock(&s->f->lock);
    item_free(s->cur);
    free(s);
}

static enum MHD_Result serve_watch(struct fake_api *f, struct MHD_Connection *conn, enum fake_res r)
{
    const union MHD_ConnectionInfo *ci;
    struct MHD_Response *resp;
    struct stream *s;
    enum MHD_Result ret;
    int status = 0;

    pthread_mutex_lock(&f->lock);
    if (f->fail_count[r] > 0) {
        f->fail_count[r]--;
        status = f->fail_status[r];
    }
    pthread_mutex_unlock(&f->lock);
    if (status == 410)
        return reply_status(conn, 410, "Expired", "too old resource version");
    if (status)
        return reply_status(conn, status, "InternalError", "scripted watch failure");
    s = xmalloc(sizeof(*s));
    s->f = f;
    s->r = r;
    s->cur = NULL;
    s->off = 0;
    ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    s->fd = ci ? ci->connect_fd : -1;
    pthread_mutex_lock(&f->lock);
    f->streams[r]++;
    pthread_mutex_unlock(&f->lock);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* POST /api/v1/namespaces/{ns}/pods/{name}/binding with the body in c. */
static enum MHD_Result serve_bind(struct fake_api *f, struct MHD_Connection *conn, const char *ns,
                                  const char *name, const struct call *c)
{
    json_t *b = c->body ? json_loadb(c->body, c->len, 0, NULL) : NULL;
    const char *bname = meta_str(b, "name"), *uid = meta_str(b, "uid");
    const char *node = json_string_value(json_object_get(json_object_get(b, "target"), "name"));
    const char *puid, *bound;
    char msg[1024];
    json_t *pod;
    int code = 201, delay;

    pthread_mutex_lock(&f->lock);
    delay = f->bind_delay_count > 0 ? f->bind_delay_ms : 0;
    if (f->bind_delay_count > 0)
        f->bind_delay_count--;
    pthread_mutex_unlock(&f->lock);
    if (delay > 0)
        usleep((useconds_t)delay * 1000);
    if (!b || !bname || !node) {
        json_decref(b);
        return reply_status(conn, 400, "BadRequest", "malformed Binding");
    }
    pthread_mutex_lock(&f->lock);
    pod = find_pod(f, ns, name);
    puid = meta_str(pod, "uid");
    bound = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (strcmp(bname, name) != 0) {
        code = 400;
        snprintf(msg, sizeof(msg), "name in URL does not match name in Binding object");
    } else if (f->conflict) {
        code = 409;
        snprintf(msg, sizeof(msg), "%s", f->conflict);
        free(f->conflict);
        f->conflict = NULL;
    } else if (!pod) {
        code = 404;
        snprintf(msg, sizeof(msg), "pods \"%s\" not found", name);
    } else if (uid && puid && strcmp(uid, puid) != 0) {
        code = 409;
        snprintf(msg, sizeof(msg),
                 "Operation cannot be fulfilled on pods/binding \"%s\": Precondition failed: UID "
                 "in precondition: %s, UID in object meta: %s",
                 name, uid, puid);
    } else if (bound && *bound) {
        code = 409;
        snprintf(msg, sizeof(msg),
                 "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                 "assigned to node \"%s\"",
                 name, name, bound);
    } else {
        json_t *spec = json_object_get(pod, "spec");
        if (!json_is_object(spec))
            json_object_set_new(pod, "spec", spec = json_object());
        json_object_set_new(spec, "nodeName", json_string(node));
        stamp(f, pod);
        f->bindings++;
        snprintf(msg, sizeof(msg), "bound");
    }
    pthread_mutex_unlock(&f->lock);
    json_decref(b);
    return reply_status(conn, code,
                        code == 201   ? ""
                        : code == 409 ? "Conflict"
                        : code == 404 ? "NotFound"
                                      : "BadRequest",
                        msg);
}

/* Applies the merge patch's metadata.labels (RFC 7386: null removes a label) to pod. */
static void merge_labels(json_t *pod, json_t *patch_labels)
{
    json_t *meta = json_object_get(pod, "metadata"), *labels, *v;
    const char *k;

    if (!json_is_object(meta))
        json_object_set_new(pod, "metadata", meta = json_object());
    labels = json_object_get(meta, "labels");
    if (!json_is_object(labels))
        json_object_set_new(meta, "labels", labels = json_object());
    json_object_foreach(patch_labels, k, v)
    {
        if (json_is_null(v))
            json_object_del(labels, k);
        else
            json_object_set(labels, k, v);
    }
}

/* PATCH /api/v1/namespaces/{ns}/pods/{name}: a JSON merge patch of metadata.labels (only that;
 * with metadata.uid as a precondition). 200 with the pod, 404, 409 on a uid mismatch, 415 for
 * another content type, or the status scripted by fake_api_patch_fail_next. */
static enum MHD_Result serve_patch(struct fake_api *f, struct MHD_Connection *conn, const char *ns,
                                   const char *name, const struct call *c)
{
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    json_t *b = c->body ? json_loadb(c->body, c->len, 0, NULL) : NULL;
    json_t *labels = json_object_get(json_object_get(b, "metadata"), "labels"), *pod, *copy;
    const char *uid = meta_str(b, "uid"), *puid;
    int fail;

    pthread_mutex_lock(&f->lock);
    free(f->last_patch);
    f->last_patch = NULL;
    if (c->body) {
        f->last_patch = xmalloc(c->len + 1);
        memcpy(f->last_patch, c->body, c->len);
        f->last_patch[c->len] = '\0';
    }
    fail = f->patch_fail;
    f->patch_fail = 0;
    pthread_mutex_unlock(&f->lock);
    if (!ct || strcmp(ct, "application/merge-patch+json") != 0) {
        json_decref(b);
        return reply_status(conn, 415, "UnsupportedMediaType", "expected a JSON merge patch");
    }
    if (fail) {
        json_decref(b);
        return reply_status(conn, fail, "InternalError", "scripted PATCH failure");
    }
    if (!json_is_object(labels)) {
        json_decref(b);
        return reply_status(conn, 400, "BadRequest", "patch without metadata.labels");
    }
    pthread_mutex_lock(&f->lock);
    pod = find_pod(f, ns, name);
    puid = meta_str(pod, "uid");
    if (!pod) {
        pthread_mutex_unlock(&f->lock);
        json_decref(b);
        return reply_status(conn, 404, "NotFound", "pod not found");
    }
    if (uid && puid && strcmp(uid, puid) != 0) {
        pthread_mutex_unlock(&f->lock);
        json_decref(b);
        return reply_status(conn, 409, "Conflict", "Precondition failed: UID mismatch");
    }
    merge_labels(pod, labels);
    stamp(f, pod);
    f->patches++;
    copy = json_deep_copy(pod);
    pthread_mutex_unlock(&f->lock);
    json_decref(b);
    return reply_json(conn, MHD_HTTP_OK, copy);
}

/* Splits "/api/v1/namespaces/{ns}/pods/{name}" into ns and name. */
static bool pod_path(const char *url, char *ns, char *name, size_t cap)
{
    static const char pre[] = "/api/v1/namespaces/";
    const char *a = url + sizeof(pre) - 1, *b, *c;

    if (strncmp(url, pre, sizeof(pre) - 1) != 0 || !(b = strstr(a, "/pods/")))
        return false;
    c = b + 6;
    if (!(b > a && (size_t)(b - a) < cap) || strchr(c, '/') || strlen(c) >= cap || !*c)
        return false;
    memcpy(ns, a, (size_t)(b - a));
    ns[b - a] = '\0';
    memcpy(name, c, strlen(c) + 1);
    return true;
}

/* Splits "/api/v1/namespaces/{ns}/pods/{name}/binding" into ns and name. */
static bool binding_path(const char *url, char *ns, char *name, size_t cap)
{
    static const char pre[] = "/api/v1/namespaces/";
    const char *a = url + sizeof(pre) - 1, *b, *c;

    if (strncmp(url, pre, sizeof(pre) - 1) != 0 || !(b = strstr(a, "/pods/")))
        return false;
    c = b + 6;
    if (!(b > a && (size_t)(b - a) < cap) || !strchr(c, '/') ||
        strcmp(strchr(c, '/'), "/binding") != 0 || (size_t)(strchr(c, '/') - c) >= cap)
        return false;
    memcpy(ns, a, (size_t)(b - a));
    ns[b - a] = '\0';
    memcpy(name, c, (size_t)(strchr(c, '/') - c));
    name[strchr(c, '/') - c] = '\0';
    return *name != '\0';
}

static bool authorized(struct fake_api *f, struct MHD_Connection *conn)
{
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    bool ok;

    pthread_mutex_lock(&f->lock);
    ok = !f->token || (h && strncmp(h, "Bearer ", 7) == 0 && strcmp(h + 7, f->token) == 0);
    pthread_mutex_unlock(&f->lock);
    return ok;
}

static enum MHD_Result route(struct fake_api *f, struct MHD_Connection *conn, const char *url,
                             const char *method, const struct call *c)
{
    char ns[256], name[256];
    const char *w;

    if (!authorized(f, conn))
        return reply_status(conn, 401, "Unauthorized", "Unauthorized");
    if (strcmp(method, "GET") == 0) {
        for (int r = 0; r < FAKE_RES_N; r++) {
            char p[32];
            snprintf(p, sizeof(p), "/api/v1/%s", res_name[r]);
            if (strcmp(url, p) != 0)
                continue;
            w = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch");
            if (w && (strcmp(w, "1") == 0 || strcmp(w, "true") == 0))
                return serve_watch(f, conn, (enum fake_res)r);
            return serve_list(f, conn, (enum fake_res)r);
        }
    } else if (strcmp(method, "POST") == 0 && binding_path(url, ns, name, sizeof(ns))) {
        if (c->too_big)
            return reply_status(conn, 413, "RequestEntityTooLarge", "body too large");
        return serve_bind(f, conn, ns, name, c);
    } else if (strcmp(method, "PATCH") == 0 && pod_path(url, ns, name, sizeof(ns))) {
        if (c->too_big)
            return reply_status(conn, 413, "RequestEntityTooLarge", "body too large");
        return serve_patch(f, conn, ns, name, c);
    }
    return reply_status(conn, 404, "NotFound", "the server could not find the requested resource");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    struct fake_api *f = cls;
    struct call *c = *con_cls;

    (void)version;
    if (!c) {
        c = xmalloc(sizeof(*c));
        memset(c, 0, sizeof(*c));
        *con_cls = c;
        record(f, conn, method, url);
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (c->len + *upload_size > FAKE_UPLOAD_MAX) {
            c->too_big = true;
        } else {
            c->body = realloc(c->body, c->len + *upload_size + 1);
            if (!c->body)
                abort();
            memcpy(c->body + c->len, upload, *upload_size);
            c->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return route(f, conn, url, method, c);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct call *c = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (c) {
        free(c->body);
        free(c);
        *con_cls = NULL;
    }
}

/* ---- lifecycle -------------------------------------------------------------------------- */

struct fake_api *fake_api_start(void)
{
    struct fake_api *f = xmalloc(sizeof(*f));
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *di;
    pthread_condattr_t ca;

    memset(f, 0, sizeof(*f));
    f->rv = 100;
    for (int r = 0; r < FAKE_RES_N; r++)
        f->store[r] = json_array();
    pthread_mutex_init(&f->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cond, &ca);
    pthread_condattr_destroy(&ca);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                MHD_USE_ITC,
                            0, NULL, NULL, handler, f, MHD_OPTION_SOCK_ADDR, &sa,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, f, MHD_OPTION_END);
    di = f->d ? MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!di || di->port == 0) {
        fprintf(stderr, "fake_apiserver: cannot start libmicrohttpd on 127.0.0.1\n");
        fake_api_stop(f);
        return NULL;
    }
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", (unsigned)di->port);
    return f;
}

void fake_api_stop(struct fake_api *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->lock);
    f->stopping = true;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    if (f->d)
        MHD_stop_daemon(f->d);
    for (int r = 0; r < FAKE_RES_N; r++) {
        json_decref(f->store[r]);
        while (f->head[r]) {
            struct item *it = f->head[r];
            f->head[r] = it->next;
            item_free(it);
        }
    }
    for (size_t i = 0; i < f->n_reqs; i++)
        free(f->reqs[i].text);
    free(f->reqs);
    free(f->token);
    free(f->conflict);
    free(f->last_patch);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f);
}
