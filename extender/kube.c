/* kube.c -- the extender's Kubernetes API client: configuration, list+watch, pods/binding.
 *
 * Design. A watcher is one thread with its own curl multi handle. Every request of the
 * watcher (LIST pages and the WATCH stream) runs through run_transfer(), which alternates
 * curl_multi_perform() and curl_multi_poll(); kube_watch_stop() sets an atomic flag and calls
 * curl_multi_wakeup(), so an idle watch stream is abandoned within milliseconds instead of at
 * the next progress callback (about once a second when idle). Backoff sleeps wait on a
 * condition variable (CLOCK_MONOTONIC) that stop also signals.
 *
 * The WATCH body is a stream of JSON objects, one per line, that chunk boundaries may cut
 * anywhere: watch_write() collects bytes up to each '\n' in a line buffer bounded by
 * max_line_bytes and hands each complete line to watch_line(). Events are delivered from
 * inside the curl write callback, on the watcher thread, with no lock held.
 *
 * Retry rules (spec section 3.3, client-go's reflector): LIST pages with limit/continue; an
 * HTTP 410 on a continue page restarts the LIST at once (with backoff if it happens twice in
 * a row). WATCH from the list RV; BOOKMARK and every object's metadata.resourceVersion
 * advance the RV (an opaque string). A clean end of the stream (the server's timeoutSeconds)
 * re-watches at once; a dropped connection, an HTTP error or a non-410 ERROR event re-watches
 * from the last RV after a backoff (doubling from backoff_initial_ms to backoff_max_ms, each
 * delay drawn uniformly in [d/2, d]; d starts over once a WATCH delivers an object or a
 * bookmark or ends cleanly). An ERROR event with code 410, an HTTP 410 or a line we cannot
 * parse (we may have lost an event) relists: at once the first time, after a backoff when the
 * previous WATCH also ended that way without progress. A 401 re-reads the token file.
 *
 * Shared state: struct kube_client is read-only after kube_client_new() except its token,
 * which its mutex guards; a watcher's counters are C11 atomics; everything else of a watcher
 * belongs to its thread. The only process-wide state is libcurl's (kube_global_init).
 *
 * SPDX-License-Identifier: MIT
 */
#include "kube.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "lt_mem.h"
#include "lt_rng.h"

#define KUBE_ERROR_BODY_MAX 65536      /* bytes of a non-200 body kept for the error message */
#define KUBE_BIND_BODY_MAX  (1u << 20) /* a Status is < 1 KiB; 1 MiB bounds a broken server */
#define KUBE_WATCH_SLACK_S  30         /* client-side timeout beyond the server's timeoutSeconds */
#define KUBE_POLL_MS        1000       /* curl_multi_poll wait; stop wakes it earlier */
#define KUBE_USER_AGENT     "lotus-extender"

/* ---- small helpers ---------------------------------------------------------------------- */

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A heap string from a printf format; NULL on allocation failure. */

/* A growable byte buffer with a hard limit (R14). */
struct buf {
    char *p;    /* NUL-terminated when non-NULL */
    size_t len; /* bytes used, NUL excluded */
    size_t cap; /* bytes allocated */
    size_t max; /* longest content accepted */
};

/* Appends n bytes; -1 if the result would exceed b->max or memory runs out. */
static int buf_add(struct buf *b, const char *d, size_t n)
{
    size_t need;
    char *p;

    if (n > b->max - b->len)
        return -1;
    need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        p = lt_reallocarray(b->p, cap, 1);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static void buf_release(struct buf *b)
{
    lt_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Reads at most max bytes of path into a NUL-terminated heap string (*out, free with
 * lt_free). LT_EIO on any failure or if the file is longer than max. */
static int read_small_file(const char *path, size_t max, char **out, struct lt_err *err)
{
    FILE *f = fopen(path, "rb");
    char *s;
    size_t n;

    if (!f)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", path, strerror(errno));
    s = lt_malloc(max + 1);
    if (!s) {
        fclose(f);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory reading '%s'", path);
    }
    n = fread(s, 1, max + 1, f);
    if (ferror(f) || n > max) {
        int e = ferror(f) ? errno : EFBIG;
        fclose(f);
        lt_free(s);
        return lt_err_set(err, LT_EIO, 0, 0, "cannot read '%s': %s", path,
                          e == EFBIG ? "file too large" : strerror(e));
    }
    fclose(f);
    s[n] = '\0';
    *out = s;
    return 0;
}

/* Takes a token file's content, trims surrounding whitespace and checks that what is left is
 * one non-empty run of printable characters (it goes into an HTTP header). */
static int token_parse(const char *path, char *s, char *out, size_t cap, struct lt_err *err)
{
    size_t a = 0, b = strlen(s);

    while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' || s[a] == '\r'))
        a++;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\n' || s[b - 1] == '\r'))
        b--;
    if (a == b)
        return lt_err_set(err, LT_EIO, 0, 0, "token file '%s' is empty", path);
    for (size_t i = a; i < b; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return lt_err_set(err, LT_EIO, 0, 0,
                              "token file '%s' has a non-printable character at byte %zu", path,
                              i + 1);
    if (b - a >= cap)
        return lt_err_set(err, LT_EIO, 0, 0, "token in '%s' is longer than %zu bytes", path,
                          cap - 1);
    memcpy(out, s + a, b - a);
    out[b - a] = '\0';
    return 0;
}

/* ---- configuration ---------------------------------------------------------------------- */

void kube_config_init(struct kube_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->token_reread_ms = 60 * 1000;
    cfg->connect_timeout_ms = 10 * 1000;
    cfg->request_timeout_ms = 30 * 1000;
    cfg->backoff_initial_ms = 500;
    cfg->backoff_max_ms = 30 * 1000;
    cfg->watch_timeout_min_s = 300;
    cfg->watch_timeout_max_s = 600;
    cfg->watch_silence_s = 90;
    cfg->write_timeout_ms = 30000;
    cfg->list_page_limit = 500;
    cfg->max_line_bytes = (size_t)16 << 20;
    cfg->max_body_bytes = (size_t)256 << 20;
    /* Jitter exists to de-synchronise replicas, so the default differs per process. */
    cfg->seed = (uint64_t)clock_ms(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
}

int kube_config_set_server(struct kube_config *cfg, const char *url, struct lt_err *err)
{
    size_t n;

    if (!url || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "server URL '%s' does not start with http:// or https://",
                          url ? url : "(null)");
    n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    if (n >= sizeof(cfg->server))
        return lt_err_set(err, LT_EINVAL, 0, 0, "server URL '%.64s...' is longer than %zu bytes",
                          url, sizeof(cfg->server) - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f)
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "server URL '%s' has a space or control character", url);
    memcpy(cfg->server, url, n);
    cfg->server[n] = '\0';
    return 0;
}

int kube_config_in_cluster(struct kube_config *cfg, const char *sa_dir, struct lt_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    struct kube_config tmp = *cfg;
    char url[KUBE_SERVER_MAX + 8];
    char *probe = NULL;
    int rc;

    if (!host || !*host || !port || !*port)
        return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                          "not in a cluster: KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT "
                          "is unset");
    if (!sa_dir)
        sa_dir = KUBE_SA_DIR;
    /* JoinHostPort: an IPv6 literal (it contains ':') goes in brackets. */
    if ((size_t)snprintf(url, sizeof(url), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s",
                         host, port) >= sizeof(url))
        return lt_err_set(err, LT_EINVAL, 0, 0, "KUBERNETES_SERVICE_HOST '%.64s...' is too long",
                          host);
    rc = kube_config_set_server(&tmp, url, err);
    if (rc < 0)
        return rc;
    if ((size_t)snprintf(tmp.token_file, sizeof(tmp.token_file), "%s/token", sa_dir) >=
            sizeof(tmp.token_file) ||
        (size_t)snprintf(tmp.ca_file, sizeof(tmp.ca_file), "%s/ca.crt", sa_dir) >=
            sizeof(tmp.ca_file))
        return lt_err_set(err, LT_EINVAL, 0, 0, "service-account directory '%.64s...' is too long",
                          sa_dir);
    /* Fail now, with the path, rather than at the first request. */
    rc = read_small_file(tmp.ca_file, (size_t)16 << 20, &probe, err);
    lt_free(probe);
    probe = NULL;
    if (rc == 0)
        rc = read_small_file(tmp.token_file, KUBE_TOKEN_MAX, &probe, err);
    lt_free(probe);
    if (rc < 0)
        return rc;
    *cfg = tmp;
    return 0;
}

int kube_global_init(struct lt_err *err)
{
    const curl_version_info_data *v;

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return lt_err_set(err, LT_EIO, 0, 0, "libcurl: curl_global_init failed");
    v = curl_version_info(CURLVERSION_NOW);
    if (v->version_num < 0x074400) {
        curl_global_cleanup();
        return lt_err_set(err, LT_EIO, 0, 0,
                          "libcurl %s is too old: curl_multi_wakeup needs 7.68.0 or newer",
                          v->version);
    }
    return 0;
}

void kube_global_cleanup(void)
{
    curl_global_cleanup();
}

/* ---- client ----------------------------------------------------------------------------- */

struct kube_client {
    struct kube_config cfg;     /* immutable copy */
    pthread_mutex_t lock;       /* guards token and token_read_ms */
    char token[KUBE_TOKEN_MAX]; /* current bearer token; "" when cfg.token_file is "" */
    int64_t token_read_ms;      /* CLOCK_MONOTONIC time of the last successful read */
};

/* Reads the token file into c->token. The caller holds c->lock. */
static int token_load_locked(struct kube_client *c, struct lt_err *err)
{
    char *s = NULL;
    int rc;

    rc = read_small_file(c->cfg.token_file, KUBE_TOKEN_MAX, &s, err);
    if (rc < 0)
        return rc;
    rc = token_parse(c->cfg.token_file, s, c->token, sizeof(c->token), err);
    lt_free(s);
    if (rc == 0)
        c->token_read_ms = clock_ms(CLOCK_MONOTONIC);
    return rc;
}

struct kube_client *kube_client_new(const struct kube_config *cfg, struct lt_err *err)
{
    struct kube_client *c;

    if (!cfg || !cfg->server[0]) {
        lt_err_set(err, LT_EINVAL, 0, 0, "no API server: give --server or run in a cluster");
        return NULL;
    }
    if (cfg->watch_timeout_min_s <= 0 || cfg->watch_timeout_max_s <= cfg->watch_timeout_min_s ||
        cfg->watch_silence_s <= 0 || cfg->backoff_initial_ms <= 0 ||
        cfg->backoff_max_ms < cfg->backoff_initial_ms) {
        lt_err_set(err, LT_EINVAL, 0, 0, "watch timeout or backoff range is empty or negative");
        return NULL;
    }
    c = lt_malloc(sizeof(*c));
    if (!c) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory creating the API client");
        return NULL;
    }
    c->cfg = *cfg;
    c->token[0] = '\0';
    c->token_read_ms = 0;
    if (cfg->token_file[0] && token_load_locked(c, err) < 0) {
        lt_free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    lt_free(c);
}

int kube_client_reload_token(struct kube_client *c, struct lt_err *err)
{
    int rc = 0;

    if (!c)
        return lt_err_set(err, LT_EINVAL, 0, 0, "no client");
    if (!c->cfg.token_file[0])
        return 0;
    pthread_mutex_lock(&c->lock);
    rc = token_load_locked(c, err);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* The request headers: Accept, optionally Content-Type, and the bearer token (re-read first
 * when older than token_reread_ms; a failed periodic re-read keeps the old token). NULL on
 * allocation failure. Free with curl_slist_free_all. */
static struct curl_slist *request_headers(struct kube_client *c, const char *ctype)
{
    struct curl_slist *h = NULL, *t;
    char *auth = NULL;

    if (c->cfg.token_file[0]) {
        pthread_mutex_lock(&c->lock);
        if (clock_ms(CLOCK_MONOTONIC) - c->token_read_ms >= c->cfg.token_reread_ms)
            (void)token_load_locked(c, NULL);
        auth = lt_strfmt("Authorization: Bearer %s", c->token);
        pthread_mutex_unlock(&c->lock);
        if (!auth)
            return NULL;
    }
    t = curl_slist_append(h, "Accept: application/json");
    if (t && ctype) {
        char line[96];

        snprintf(line, sizeof(line), "Content-Type: %s", ctype);
        t = curl_slist_append(t, line);
    }
    if (t && auth)
        t = curl_slist_append(t, auth);
    lt_free(auth);
    if (!t) {
        curl_slist_free_all(h);
        return NULL;
    }
    return t;
}

/* Options every request shares. errbuf has CURL_ERROR_SIZE bytes. */
static void easy_setup(CURL *e, const struct kube_config *cfg, const char *url,
                       struct curl_slist *hdrs, char *errbuf)
{
    errbuf[0] = '\0';
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, KUBE_USER_AGENT);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (cfg->ca_file[0])
        curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
    if (cfg->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

/* Collects a response body up to b->max bytes; a longer body aborts the transfer. */
static size_t body_write(char *data, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;

    if (buf_add(b, data, size * n) < 0)
        return 0;
    return size * n;
}

/* The "message" of a metav1.Status body, or a short excerpt of a body that is not one. */
static void status_message(const struct buf *b, char *out, size_t cap)
{
    json_t *j = b->p ? json_loadb(b->p, b->len, 0, NULL) : NULL;
    const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;

    if (m)
        snprintf(out, cap, "%s", m);
    else
        snprintf(out, cap, "%.80s", b->p ? b->p : "(empty body)");
    json_decref(j);
}

static const char *curl_reason(CURLcode rc, const char *errbuf)
{
    return errbuf[0] ? errbuf : curl_easy_strerror(rc);
}

/* ---- binding ---------------------------------------------------------------------------- */

/* The Binding of spec section 3.5 as a JSON string; NULL on allocation failure. */
static char *binding_body(const char *ns, const char *name, const char *uid, const char *node)
{
    json_t *j = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
                          "kind", "Binding", "metadata", "name", name, "namespace", ns, "uid", uid,
                          "target", "apiVersion", "v1", "kind", "Node", "name", node);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

    json_decref(j);
    return s;
}

/* One request: POST with body, or method (e.g. "PATCH") if not NULL, with Content-Type ctype;
 * a GET when body is NULL. Bounded by timeout_ms (0: the configured request timeout). Fills
 * *status (0 if none) and resp. Returns the curl result. */
static CURLcode send_once(struct kube_client *c, const char *method, const char *ctype,
                          const char *url, const char *body, int64_t timeout_ms, int *status,
                          struct buf *resp, char *errbuf)
{
    struct curl_slist *h = request_headers(c, ctype);
    CURL *e;
    CURLcode rc;
    long code = 0;

    *status = 0;
    if (!h)
        return CURLE_OUT_OF_MEMORY;
    e = curl_easy_init();
    if (!e) {
        curl_slist_free_all(h);
        return CURLE_FAILED_INIT;
    }
    easy_setup(e, &c->cfg, url, h, errbuf);
    if (body)
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    if (method)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     (long)(timeout_ms > 0 ? timeout_ms : c->cfg.request_timeout_ms));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
    rc = curl_easy_perform(e);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    *status = (int)code;
    if (rc != CURLE_OK && code == 0) {
        long sent = 0;

        curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &sent);
        if (sent > 0) /* the server may have acted on it */
            *status = KUBE_STATUS_UNKNOWN;
    }
    curl_easy_cleanup(e);
    curl_slist_free_all(h);
    return rc;
}

/* send_once, and once more after re-reading the token file when the answer is 401 (a rotated
 * service-account token). */
static CURLcode send_body(struct kube_client *c, const char *method, const char *ctype,
                          const char *url, const char *body, int64_t timeout_ms, int *status,
                          struct buf *resp, char *errbuf)
{
    CURLcode cc = send_once(c, method, ctype, url, body, timeout_ms, status, resp, errbuf);

    if (cc == CURLE_OK && *status == 401 && c->cfg.token_file[0] &&
        kube_client_reload_token(c, NULL) == 0) {
        buf_release(resp);
        cc = send_once(c, method, ctype, url, body, timeout_ms, status, resp, errbuf);
    }
    return cc;
}

/* The URL of pod ns/name (percent-encoded) followed by suffix ("" or "/binding"); NULL on
 * allocation failure. */
static char *pod_url(const struct kube_client *c, const char *ns, const char *name,
                     const char *suffix)
{
    char *ens = curl_easy_escape(NULL, ns, 0);
    char *ename = curl_easy_escape(NULL, name, 0);
    char *url = NULL;

    if (ens && ename)
        url = lt_strfmt("%s/api/v1/namespaces/%s/pods/%s%s", c->cfg.server, ens, ename, suffix);
    curl_free(ens);
    curl_free(ename);
    return url;
}

int kube_bind(struct kube_client *c, const char *ns, const char *name, const char *uid,
              const char *node, int *http_status, struct lt_err *err)
{
    char errbuf[CURL_ERROR_SIZE], msg[LT_ERR_TEXT];
    struct buf resp = {.max = KUBE_BIND_BODY_MAX};
    char *url, *body;
    int status = 0, rc = 0;
    CURLcode cc;

    if (http_status)
        *http_status = 0;
    if (!c || !ns || !*ns || !name || !*name || !uid || !*uid || !node || !*node)
        return lt_err_set(err, LT_EINVAL, 0, 0, "binding needs a namespace, name, uid and node");
    url = pod_url(c, ns, name, "/binding");
    body = binding_body(ns, name, uid, node);
    if (!url || !body) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory binding pod '%s/%s'", ns, name);
        goto out_free;
    }
    cc = send_body(c, NULL, "application/json", url, body, c->cfg.write_timeout_ms, &status, &resp,
                   errbuf);
    if (http_status)
        *http_status = status;
    if (cc != CURLE_OK) {
        rc = lt_err_set(err, LT_EIO, 0, 0, "binding pod '%s/%s' to node '%s': POST '%s' failed: %s",
                        ns, name, node, url, curl_reason(cc, errbuf));
    } else if (status < 200 || status > 299) {
        status_message(&resp, msg, sizeof(msg));
        rc = lt_err_set(err, LT_EIO, 0, 0, "binding pod '%s/%s' to node '%s': HTTP %d%s: %s", ns,
                        name, node, status, status == 409 ? " Conflict" : "", msg);
    }
out_free:
    buf_release(&resp);
    lt_free(url);
    free(body); /* json_dumps allocates with Jansson's allocator: malloc */
    return rc;
}

/* ---- labels ----------------------------------------------------------------------------- */

/* The merge patch {"metadata":{"uid":uid,"labels":{key:value}}} (value NULL: null, which
 * removes the label); NULL on allocation failure. */
static char *label_patch(const char *uid, const char *key, const char *value)
{
    json_t *labels = json_object(), *j;
    char *s = NULL;

    if (!labels || json_object_set_new(labels, key, value ? json_string(value) : json_null()) < 0) {
        json_decref(labels);
        return NULL;
    }
    j = json_pack("{s:{s:s, s:o}}", "metadata", "uid", uid, "labels", labels);
    if (j)
        s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

int kube_label_pod(struct kube_client *c, const char *ns, const char *name, const char *uid,
                   const char *key, const char *value, int *http_status, struct lt_err *err)
{
    char errbuf[CURL_ERROR_SIZE], msg[LT_ERR_TEXT];
    struct buf resp = {.max = KUBE_BIND_BODY_MAX};
    char *url, *body;
    int status = 0, rc = 0;
    CURLcode cc;

    if (http_status)
        *http_status = 0;
    if (!c || !ns || !*ns || !name || !*name || !uid || !*uid || !key || !*key)
        return lt_err_set(err, LT_EINVAL, 0, 0, "labelling needs a namespace, name, uid and key");
    url = pod_url(c, ns, name, "");
    body = label_patch(uid, key, value);
    if (!url || !body) {
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory labelling pod '%s/%s'", ns, name);
        goto out_free;
    }
    cc = send_body(c, "PATCH", KUBE_MERGE_PATCH, url, body, c->cfg.write_timeout_ms, &status, &resp,
                   errbuf);
    if (http_status)
        *http_status = status;
    if (cc != CURLE_OK) {
        rc = lt_err_set(err, LT_EIO, 0, 0, "labelling pod '%s/%s' %s: PATCH '%s' failed: %s", ns,
                        name, key, url, curl_reason(cc, errbuf));
    } else if (status < 200 || status > 299) {
        status_message(&resp, msg, sizeof(msg));
        rc = lt_err_set(err, LT_EIO, 0, 0, "labelling pod '%s/%s' %s: HTTP %d: %s", ns, name, key,
                        status, msg);
    }
out_free:
    buf_release(&resp);
    lt_free(url);
    free(body); /* json_dumps allocates with Jansson's allocator: malloc */
    return rc;
}

/* ---- probe ------------------------------------------------------------------------------ */

int kube_probe(struct kube_client *c, const char *path, int64_t timeout_ms, struct lt_err *err)
{
    char errbuf[CURL_ERROR_SIZE], msg[LT_ERR_TEXT];
    struct buf resp = {.max = KUBE_ERROR_BODY_MAX};
    int status = 0, rc = 0;
    char *url;
    CURLcode cc;

    if (!c || !path || path[0] != '/')
        return lt_err_set(err, LT_EINVAL, 0, 0, "probe needs a client and an absolute path");
    url = lt_strfmt("%s%s", c->cfg.server, path);
    if (!url)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory probing '%s'", path);
    cc = send_body(c, "GET", NULL, url, NULL, timeout_ms, &status, &resp, errbuf);
    if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && status == 200)) {
        rc = lt_err_set(err, LT_EIO, 0, 0, "GET '%s' failed: %s", url, curl_reason(cc, errbuf));
    } else if (status != 200) {
        status_message(&resp, msg, sizeof(msg));
        rc = lt_err_set(err, LT_EIO, 0, 0, "GET '%s': HTTP %d: %s", url, status, msg);
    }
    buf_release(&resp);
    lt_free(url);
    return rc;
}

/* ---- watcher ---------------------------------------------------------------------------- */

/* Outcome of one LIST or WATCH attempt. */
enum attempt {
    ATTEMPT_OK,   /* LIST complete / WATCH ended cleanly: go on at once */
    ATTEMPT_FAIL, /* transport or HTTP error: retry the same step after a backoff */
    ATTEMPT_GONE, /* 410 or lost events: relist */
    ATTEMPT_STOP  /* kube_watch_stop was called */
};

struct kube_watch {
    struct kube_client *c;            /* borrowed; outlives the watcher */
    const struct kube_watch_ops *ops; /* borrowed */
    void *arg;                        /* passed to every callback */
    char *path;                       /* "/api/v1/pods" */
    char *selector;                   /* "&fieldSelector=..." (encoded) or "" */
    CURLM *multi;                     /* the watcher's multi handle; stop wakes it */
    pthread_t thread;
    pthread_mutex_t lock; /* guards nothing but the backoff wait on cond */
    pthread_cond_t cond;  /* signalled by stop */
    atomic_bool stop;     /* set once by kube_watch_stop */
    /* Owned by the watcher thread. */
    struct lt_rng rng;  /* backoff jitter and timeoutSeconds */
    char *rv;           /* last resource version seen; NULL before the first LIST */
    int64_t backoff_ms; /* next backoff ceiling */
    /* Counters (kube_watch_stats). */
    atomic_uint_least64_t relists;
    atomic_uint_least64_t watch_restarts;
    atomic_uint_least64_t errors;
    atomic_uint_least64_t events[KUBE_EVENT_N];
    atomic_int_least64_t last_event_ms;
    atomic_bool synced;
    atomic_bool watching; /* a WATCH answered 200 and is open */
    atomic_bool kick;     /* kube_watch_kick: abandon the current stream */
    atomic_bool hurry;    /* kube_watch_retry_now: end the backoff wait */
    bool kicked;          /* the last transfer was abandoned by a kick (watcher thread) */
};

const char *kube_event_name(enum kube_event type)
{
    static const char *const names[KUBE_EVENT_N] = {"LISTED",  "ADDED",    "MODIFIED",
                                                    "DELETED", "BOOKMARK", "ERROR"};

    return (unsigned)type < KUBE_EVENT_N ? names[type] : "?";
}

static void deliver(struct kube_watch *w, enum kube_event type, json_t *obj)
{
    atomic_fetch_add(&w->events[type], 1);
    atomic_store(&w->last_event_ms, clock_ms(CLOCK_REALTIME));
    if (w->ops->event)
        w->ops->event(w->arg, type, obj);
}

static void report(struct kube_watch *w, const struct lt_err *e)
{
    atomic_fetch_add(&w->errors, 1);
    if (w->ops->error)
        w->ops->error(w->arg, e);
}

/* Replaces w->rv with a copy of rv; keeps the old one if memory runs out. */
static void set_rv(struct kube_watch *w, const char *rv)
{
    char *d = lt_strdup(rv);

    if (d) {
        lt_free(w->rv);
        w->rv = d;
    }
}

struct timespec kube_mono_after(int64_t ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

/* Waits ms or until stop; true if stopping. */
static bool sleep_or_stop(struct kube_watch *w, int64_t ms)
{
    struct timespec ts;
    bool stop;

    ts = kube_mono_after(ms);
    pthread_mutex_lock(&w->lock);
    while (!(stop = atomic_load(&w->stop)) && !atomic_load(&w->hurry))
        if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&w->lock);
    return stop || atomic_load(&w->stop);
}

/* Sleeps a jittered backoff in [d/2, d] and doubles d up to the cap; true if stopping. */
static bool backoff(struct kube_watch *w)
{
    int64_t d = w->backoff_ms;
    int64_t ms = d / 2 + (int64_t)lt_rng_below(&w->rng, (uint64_t)(d - d / 2) + 1);

    w->backoff_ms = d > w->c->cfg.backoff_max_ms / 2 ? w->c->cfg.backoff_max_ms : d * 2;
    if (sleep_or_stop(w, ms))
        return true;
    if (atomic_exchange(&w->hurry, false)) /* the server answers again: start over */
        w->backoff_ms = w->c->cfg.backoff_initial_ms;
    return false;
}

/* Runs e on the watcher's multi handle until it finishes or stop is set. Returns the curl
 * result; *stopped tells an abort by stop apart. */
static CURLcode run_transfer(struct kube_watch *w, CURL *e, bool *stopped)
{
    CURLcode res = CURLE_OK;
    CURLMsg *m;
    int running = 1, left;

    *stopped = false;
    w->kicked = false;
    if (curl_multi_add_handle(w->multi, e) != CURLM_OK)
        return CURLE_FAILED_INIT;
    while (running) {
        if (atomic_load(&w->stop)) {
            *stopped = true;
            break;
        }
        if (atomic_exchange(&w->kick, false)) {
            res = CURLE_ABORTED_BY_CALLBACK;
            w->kicked = true;
            break;
        }
        if (curl_multi_perform(w->multi, &running) != CURLM_OK) {
            res = CURLE_FAILED_INIT;
            break;
        }
        if (running && curl_multi_poll(w->multi, NULL, 0, KUBE_POLL_MS, NULL) != CURLM_OK) {
            res = CURLE_FAILED_INIT;
            break;
        }
    }
    while ((m = curl_multi_info_read(w->multi, &left)))
        if (m->msg == CURLMSG_DONE && m->easy_handle == e)
            res = m->data.result;
    curl_multi_remove_handle(w->multi, e);
    return res;
}

/* A GET of url on the watcher's multi handle; *e is set up and the caller adds options. */
static CURL *get_setup(struct kube_watch *w, const char *url, struct curl_slist **hdrs,
                       char *errbuf)
{
    CURL *e;

    *hdrs = request_headers(w->c, NULL);
    if (!*hdrs)
        return NULL;
    e = curl_easy_init();
    if (!e) {
        curl_slist_free_all(*hdrs);
        *hdrs = NULL;
        return NULL;
    }
    easy_setup(e, &w->c->cfg, url, *hdrs, errbuf);
    return e;
}

/* Classifies a finished request that did not give 200; fills err. 410 -> GONE, else FAIL
 * (a 401 re-reads the token first). */
static enum attempt http_failure(struct kube_watch *w, const char *what, const char *url,
                                 int status, const struct buf *body, struct lt_err *err)
{
    char msg[LT_ERR_TEXT];
    struct lt_err tok;

    status_message(body, msg, sizeof(msg));
    lt_err_set(err, LT_EIO, 0, 0, "%s '%s': HTTP %d: %s", what, url, status, msg);
    if (status == 401 && w->c->cfg.token_file[0]) {
        lt_err_init(&tok, NULL);
        if (kube_client_reload_token(w->c, &tok) < 0)
            report(w, &tok);
    }
    return status == 410 ? ATTEMPT_GONE : ATTEMPT_FAIL;
}

/* ---- LIST ---- */

/* Fetches one LIST page into *page (owned by the caller on success). */
static enum attempt list_page(struct kube_watch *w, const char *cont, json_t **page,
                              struct lt_err *err)
{
    char errbuf[CURL_ERROR_SIZE];
    struct buf body = {.max = w->c->cfg.max_body_bytes};
    struct curl_slist *h = NULL;
    enum attempt a = ATTEMPT_FAIL;
    char *econt = cont ? curl_easy_escape(NULL, cont, 0) : NULL;
    char *url;
    CURL *e = NULL;
    CURLcode cc;
    bool stopped;
    long status = 0;
    json_error_t je;

    *page = NULL;
    if (w->c->cfg.list_page_limit)
        url =
            lt_strfmt("%s%s?limit=%zu%s%s%s", w->c->cfg.server, w->path, w->c->cfg.list_page_limit,
                      econt ? "&continue=" : "", econt ? econt : "", w->selector);
    else
        url =
            lt_strfmt("%s%s?%s", w->c->cfg.server, w->path, w->selector[0] ? w->selector + 1 : "");
    if (url)
        e = get_setup(w, url, &h, errbuf);
    if (!e) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory listing '%s'", w->path);
        goto out_free;
    }
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)w->c->cfg.request_timeout_ms);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
    cc = run_transfer(w, e, &stopped);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    if (stopped) {
        a = ATTEMPT_STOP;
    } else if (cc != CURLE_OK) {
        lt_err_set(err, LT_EIO, 0, 0, "LIST '%s' failed: %s", url,
                   cc == CURLE_WRITE_ERROR ? "response larger than max_body_bytes"
                                           : curl_reason(cc, errbuf));
    } else if (status != 200) {
        a = http_failure(w, "LIST", url, (int)status, &body, err);
    } else if (!(*page = json_loadb(body.p ? body.p : "", body.len, 0, &je)) ||
               !json_is_array(json_object_get(*page, "items"))) {
        lt_err_set(err, LT_EPARSE, 0, 0, "LIST '%s': %s", url,
                   *page ? "no 'items' array in the response" : je.text);
        json_decref(*page);
        *page = NULL;
    } else {
        a = ATTEMPT_OK;
    }
out_free:
    if (e)
        curl_easy_cleanup(e);
    curl_slist_free_all(h);
    curl_free(econt);
    lt_free(url);
    buf_release(&body);
    return a;
}

/* A full LIST, page by page: relist_begin, each item as LISTED, relist_done. A 410 on a
 * continue page means the token expired: GONE (the caller restarts the LIST). */
static enum attempt do_list(struct kube_watch *w, struct lt_err *err)
{
    char *cont = NULL;
    json_t *page, *meta, *item;
    const char *rv, *next;
    size_t i;
    enum attempt a;

    atomic_store(&w->synced, false);
    atomic_fetch_add(&w->relists, 1);
    if (w->ops->relist_begin)
        w->ops->relist_begin(w->arg);
    for (;;) {
        a = list_page(w, cont, &page, err);
        if (a != ATTEMPT_OK)
            break;
        json_array_foreach(json_object_get(page, "items"), i, item)
        {
            if (atomic_load(&w->stop))
                break;
            deliver(w, KUBE_EVENT_LISTED, item);
        }
        meta = json_object_get(page, "metadata");
        rv = json_string_value(json_object_get(meta, "resourceVersion"));
        next = json_string_value(json_object_get(meta, "continue"));
        if (rv && *rv)
            set_rv(w, rv);
        lt_free(cont);
        cont = next && *next ? lt_strdup(next) : NULL;
        json_decref(page);
        if (atomic_load(&w->stop)) {
            a = ATTEMPT_STOP;
            break;
        }
        if (!cont && next && *next) {
            a = ATTEMPT_FAIL;
            lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory listing '%s'", w->path);
            break;
        }
        if (!cont)
            break;
    }
    lt_free(cont);
    if (a == ATTEMPT_OK && !w->rv) {
        a = ATTEMPT_FAIL;
        lt_err_set(err, LT_EPARSE, 0, 0, "LIST '%s': no metadata.resourceVersion", w->path);
    }
    if (a == ATTEMPT_OK) {
        atomic_store(&w->synced, true);
        if (w->ops->relist_done)
            w->ops->relist_done(w->arg, w->rv);
    }
    return a;
}

/* ---- WATCH ---- */

/* State of one WATCH request, shared with its write callback. */
struct watch_ctx {
    struct kube_watch *w;
    CURL *e;
    const char *url;
    long status;          /* HTTP status, read at the first body byte */
    struct buf line;      /* the current, incomplete line (200) or the error body */
    enum attempt verdict; /* set when the callback aborts the transfer */
    bool aborted;         /* the callback returned an error to curl */
    size_t delivered;     /* objects and bookmarks handed to the owner (ERROR excluded) */
    struct lt_err *err;
};

static int event_type(const char *s, enum kube_event *out)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum kube_event)(KUBE_EVENT_ADDED + i);
            return 0;
        }
    return -1;
}

/* An ERROR event: 410 (reason Expired or Gone) -> GONE, anything else -> FAIL. */
static enum attempt watch_error(struct watch_ctx *x, json_t *obj)
{
    json_int_t code = json_integer_value(json_object_get(obj, "code"));
    const char *reason = json_string_value(json_object_get(obj, "reason"));
    const char *msg = json_string_value(json_object_get(obj, "message"));

    lt_err_set(x->err, LT_EIO, 0, 0, "WATCH '%s': ERROR event %" JSON_INTEGER_FORMAT " %s: %s",
               x->url, code, reason ? reason : "", msg ? msg : "");
    return code == 410 ? ATTEMPT_GONE : ATTEMPT_FAIL;
}

/* One complete line of the stream. Returns ATTEMPT_OK to go on, else the verdict that ends
 * the request (a malformed line means an event may be lost: GONE, so the owner relists). */
static enum attempt watch_line(struct watch_ctx *x, const char *s, size_t n)
{
    enum kube_event type;
    json_error_t je;
    json_t *j, *obj;
    const char *rv;
    enum attempt a = ATTEMPT_OK;

    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0)
        return ATTEMPT_OK;
    j = json_loadb(s, n, 0, &je);
    obj = json_object_get(j, "object");
    if (!j || event_type(json_string_value(json_object_get(j, "type")), &type) < 0 ||
        !json_is_object(obj)) {
        lt_err_set(x->err, LT_EPARSE, 0, 0, "WATCH '%s': malformed event near '%.40s': %s", x->url,
                   s, j ? "no known 'type' or no 'object'" : je.text);
        json_decref(j);
        return ATTEMPT_GONE;
    }
    rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (type == KUBE_EVENT_BOOKMARK && !(rv && *rv)) {
        lt_err_set(x->err, LT_EPARSE, 0, 0, "WATCH '%s': BOOKMARK without resourceVersion", x->url);
        a = ATTEMPT_GONE;
    } else {
        deliver(x->w, type, obj);
        x->delivered += type != KUBE_EVENT_ERROR;
        if (type == KUBE_EVENT_ERROR)
            a = watch_error(x, obj);
        else if (rv && *rv)
            set_rv(x->w, rv);
    }
    json_decref(j);
    return a;
}

/* curl write callback of a WATCH: splits the stream into lines (bounded by max_line_bytes).
 * A non-200 body is kept (bounded) for the error message. */
static size_t watch_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct watch_ctx *x = ud;
    size_t n = size * nmemb, i = 0;
    const char *nl;
    enum attempt a;

    if (x->status == 0)
        curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status != 200) {
        if (x->line.len < KUBE_ERROR_BODY_MAX)
            (void)buf_add(&x->line, data, n < KUBE_ERROR_BODY_MAX ? n : KUBE_ERROR_BODY_MAX);
        return n;
    }
    while (i < n) {
        nl = memchr(data + i, '\n', n - i);
        size_t take = nl ? (size_t)(nl - (data + i)) : n - i;
        if (buf_add(&x->line, data + i, take) < 0) {
            lt_err_set(x->err, LT_ERANGE, 0, 0, "WATCH '%s': a line exceeds %zu bytes", x->url,
                       x->line.max);
            x->verdict = ATTEMPT_GONE;
            goto abort;
        }
        i += take;
        if (!nl)
            break;
        i++; /* the '\n' */
        a = watch_line(x, x->line.p ? x->line.p : "", x->line.len);
        x->line.len = 0;
        if (a != ATTEMPT_OK || atomic_load(&x->w->stop)) {
            x->verdict = atomic_load(&x->w->stop) ? ATTEMPT_STOP : a;
            goto abort;
        }
    }
    return n;
abort:
    x->aborted = true;
    return n == 0 ? CURL_WRITEFUNC_ERROR : 0;
}

/* curl header callback of a WATCH: at the blank line ending the headers, a 200 means the
 * stream is open (the watcher is "watching" until the request ends). */
static size_t watch_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct watch_ctx *x = ud;
    size_t n = size * nmemb;
    long status = 0;

    if (n <= 2 && (n == 0 || data[0] == '\r' || data[0] == '\n')) {
        curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &status);
        if (status == 200)
            atomic_store(&x->w->watching, true);
    }
    return n;
}

static char *watch_url(struct kube_watch *w, int timeout_s)
{
    char *erv = curl_easy_escape(NULL, w->rv, 0);
    char *url = NULL;

    if (erv)
        url = lt_strfmt(
            "%s%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%d%s",
            w->c->cfg.server, w->path, erv, timeout_s, w->selector);
    curl_free(erv);
    return url;
}

/* How a WATCH request ended, once curl is done with it. */
static enum attempt watch_verdict(struct watch_ctx *x, CURLcode cc, bool stopped,
                                  const char *errbuf)
{
    if (stopped)
        return ATTEMPT_STOP;
    if (x->aborted)
        return x->verdict;
    if (x->status == 0)
        curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status != 0 && x->status != 200)
        return http_failure(x->w, "WATCH", x->url, (int)x->status, &x->line, x->err);
    if (cc != CURLE_OK) {
        lt_err_set(x->err, LT_EIO, 0, 0, "WATCH '%s' ended: %s", x->url,
                   x->w->kicked ? "abandoned after a failed probe of the API server"
                   : cc == CURLE_OPERATION_TIMEDOUT && x->status == 200
                       ? "no byte for the low-speed window (no event, no bookmark)"
                       : curl_reason(cc, errbuf));
        return ATTEMPT_FAIL;
    }
    if (x->line.len > 0) {
        lt_err_set(x->err, LT_EPARSE, 0, 0, "WATCH '%s' ended inside a line", x->url);
        return ATTEMPT_FAIL;
    }
    return ATTEMPT_OK;
}

/* One WATCH request from w->rv. OK when the server ended the stream cleanly; *delivered
 * counts the objects and bookmarks handed over (ERROR events excluded). */
static enum attempt do_watch(struct kube_watch *w, size_t *delivered, struct lt_err *err)
{
    const struct kube_config *cfg = &w->c->cfg;
    int timeout_s =
        cfg->watch_timeout_min_s +
        (int)lt_rng_below(&w->rng, (uint64_t)(cfg->watch_timeout_max_s - cfg->watch_timeout_min_s));
    struct watch_ctx x = {.w = w, .line = {.max = cfg->max_line_bytes}, .err = err};
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *h = NULL;
    char *url = watch_url(w, timeout_s);
    enum attempt a = ATTEMPT_FAIL;
    CURLcode cc;
    bool stopped;

    x.url = url;
    x.e = url ? get_setup(w, url, &h, errbuf) : NULL;
    if (!x.e) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory watching '%s'", w->path);
        goto out_free;
    }
    curl_easy_setopt(x.e, CURLOPT_TIMEOUT_MS, (long)(timeout_s + KUBE_WATCH_SLACK_S) * 1000L);
    /* The API server sends a bookmark at least once a minute (allowWatchBookmarks): a stream
     * silent for longer has stalled. */
    curl_easy_setopt(x.e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(x.e, CURLOPT_LOW_SPEED_TIME, (long)cfg->watch_silence_s);
    curl_easy_setopt(x.e, CURLOPT_WRITEFUNCTION, watch_write);
    curl_easy_setopt(x.e, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(x.e, CURLOPT_HEADERFUNCTION, watch_header);
    curl_easy_setopt(x.e, CURLOPT_HEADERDATA, &x);
    cc = run_transfer(w, x.e, &stopped);
    atomic_store(&w->watching, false);
    a = watch_verdict(&x, cc, stopped, errbuf);
    curl_easy_cleanup(x.e);
out_free:
    *delivered = x.delivered;
    curl_slist_free_all(h);
    buf_release(&x.line);
    lt_free(url);
    return a;
}

/* ---- the watcher thread ---- */

/* LIST until it succeeds (or stop). A first 410 (expired continue) relists at once; other
 * failures back off. */
static enum attempt sync_list(struct kube_watch *w)
{
    int gone = 0;

    for (;;) {
        struct lt_err e;
        enum attempt a;

        lt_err_init(&e, w->path);
        a = do_list(w, &e);
        if (a == ATTEMPT_OK || a == ATTEMPT_STOP)
            return a;
        report(w, &e);
        if (a == ATTEMPT_GONE && gone++ == 0)
            continue;
        if (backoff(w))
            return ATTEMPT_STOP;
    }
}

static void *watch_main(void *arg)
{
    struct kube_watch *w = arg;
    bool need_list = true, first = true;
    int gone_streak = 0;

    while (!atomic_load(&w->stop)) {
        struct lt_err e;
        enum attempt a;
        size_t delivered = 0;

        if (need_list) {
            if (sync_list(w) == ATTEMPT_STOP)
                break;
            need_list = false;
            first = true;
        }
        if (!first)
            atomic_fetch_add(&w->watch_restarts, 1);
        first = false;
        lt_err_init(&e, w->path);
        a = do_watch(w, &delivered, &e);
        /* Objects, bookmarks or a clean end prove the server healthy; a LIST alone does not,
         * so a server that answers every WATCH with 410 meets a growing backoff. */
        if (delivered > 0 || a == ATTEMPT_OK) {
            w->backoff_ms = w->c->cfg.backoff_initial_ms;
            gone_streak = 0;
        }
        if (a == ATTEMPT_STOP)
            break;
        if (a == ATTEMPT_OK)
            continue;
        report(w, &e);
        if (a == ATTEMPT_GONE) {
            need_list = true;
            atomic_store(&w->synced, false);
            /* A server that answers every fresh list with 410 must not make us spin. */
            if (gone_streak++ > 0 && backoff(w))
                break;
        } else if (backoff(w)) {
            break;
        }
    }
    return NULL;
}

/* Sets w->path and w->selector from the arguments; LT_EINVAL / LT_ENOMEM. */
static int watch_names(struct kube_watch *w, const char *path, const char *sel, struct lt_err *err)
{
    char *esel;

    if (!path || path[0] != '/' || strpbrk(path, "?# "))
        return lt_err_set(err, LT_EINVAL, 0, 0, "watch path '%s' is not an absolute path",
                          path ? path : "(null)");
    w->path = lt_strdup(path);
    if (sel && *sel) {
        esel = curl_easy_escape(NULL, sel, 0);
        w->selector = esel ? lt_strfmt("&fieldSelector=%s", esel) : NULL;
        curl_free(esel);
    } else {
        w->selector = lt_strdup("");
    }
    if (!w->path || !w->selector)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory watching '%s'", path);
    return 0;
}

static void watch_free(struct kube_watch *w)
{
    if (w->multi)
        curl_multi_cleanup(w->multi);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    lt_free(w->path);
    lt_free(w->selector);
    lt_free(w->rv);
    lt_free(w);
}

struct kube_watch *kube_watch_start(struct kube_client *c, const char *path,
                                    const char *field_selector, const struct kube_watch_ops *ops,
                                    void *arg, struct lt_err *err)
{
    struct kube_watch *w;
    pthread_condattr_t ca;
    uint64_t h = 1469598103934665603u; /* FNV-1a: one jitter stream per path */

    if (!c || !ops) {
        lt_err_set(err, LT_EINVAL, 0, 0, "watch needs a client and callbacks");
        return NULL;
    }
    w = lt_calloc(1, sizeof(*w));
    if (!w) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory watching '%s'", path ? path : "");
        return NULL;
    }
    w->c = c;
    w->ops = ops;
    w->arg = arg;
    w->backoff_ms = c->cfg.backoff_initial_ms;
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (watch_names(w, path, field_selector, err) < 0)
        goto out_free;
    for (const char *p = path; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211u;
    lt_rng_init(&w->rng, c->cfg.seed ^ h, 0);
    w->multi = curl_multi_init();
    if (!w->multi) {
        lt_err_set(err, LT_EIO, 0, 0, "watching '%s': curl_multi_init failed", path);
        goto out_free;
    }
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        lt_err_set(err, LT_EIO, 0, 0, "watching '%s': cannot start a thread", path);
        goto out_free;
    }
    return w;

out_free:
    watch_free(w);
    return NULL;
}

void kube_watch_stats(const struct kube_watch *w, struct kube_watch_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!w)
        return;
    out->relists = atomic_load(&w->relists);
    out->watch_restarts = atomic_load(&w->watch_restarts);
    out->errors = atomic_load(&w->errors);
    for (int i = 0; i < KUBE_EVENT_N; i++)
        out->events[i] = atomic_load(&w->events[i]);
    out->last_event_unix_ms = atomic_load(&w->last_event_ms);
    out->synced = atomic_load(&w->synced);
    out->watching = atomic_load(&w->watching);
}

void kube_watch_kick(struct kube_watch *w)
{
    if (!w || !atomic_load(&w->watching))
        return;
    atomic_store(&w->kick, true);
    curl_multi_wakeup(w->multi);
}

void kube_watch_retry_now(struct kube_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    atomic_store(&w->hurry, true);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

void kube_watch_stop(struct kube_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    atomic_store(&w->stop, true);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    curl_multi_wakeup(w->multi);
    pthread_join(w->thread, NULL);
    watch_free(w);
}
