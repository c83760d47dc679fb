/* test_kube.c -- the extender's Kubernetes API client (extender/kube.c) against the fake API
 * server (tests/fake_apiserver.c), both on loopback, both started here.
 *
 * Each test starts a fake server and, usually, one watcher whose callbacks append lines to a
 * log ("begin", "LISTED n0", "ADDED p1", "BOOKMARK 106", "ERROR 410", "done 105"); the test
 * waits for lines with a 5 s limit and checks their order, the counters and the requests the
 * fake server recorded. Backoffs are shortened through the config so the suite takes about a
 * second.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_apiserver.h"
#include "kube.h"

#define WAIT_MS  5000 /* upper bound of every wait; the suite normally never reaches it */
#define LOG_MAX  256
#define LINE_MAX 128

/* What the watcher's callbacks saw; the watcher thread writes, the test thread reads. */
struct fx {
    struct fake_api *f;
    struct kube_config cfg;
    struct kube_client *c;
    struct kube_watch *w;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char log[LOG_MAX][LINE_MAX];
    size_t n;
    size_t errors;
    char last_error[LT_ERR_TEXT];
    char dir[64]; /* temporary directory for token files, "" if none */
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static void log_add(struct fx *x, const char *line)
{
    pthread_mutex_lock(&x->lock);
    if (x->n < LOG_MAX)
        snprintf(x->log[x->n++], LINE_MAX, "%s", line);
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&x->lock);
}

static void on_begin(void *arg)
{
    log_add(arg, "begin");
}

static void on_event(void *arg, enum kube_event type, json_t *obj)
{
    char line[LINE_MAX];
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));

    if (type == KUBE_EVENT_BOOKMARK)
        snprintf(line, sizeof(line), "BOOKMARK %s",
                 json_string_value(json_object_get(meta, "resourceVersion")));
    else if (type == KUBE_EVENT_ERROR)
        snprintf(line, sizeof(line), "ERROR %d",
                 (int)json_integer_value(json_object_get(obj, "code")));
    else
        snprintf(line, sizeof(line), "%s %s", kube_event_name(type), name ? name : "?");
    log_add(arg, line);
}

static void on_done(void *arg, const char *rv)
{
    char line[LINE_MAX];

    snprintf(line, sizeof(line), "done %s", rv);
    log_add(arg, line);
}

static void on_error(void *arg, const struct lt_err *err)
{
    struct fx *x = arg;

    pthread_mutex_lock(&x->lock);
    x->errors++;
    snprintf(x->last_error, sizeof(x->last_error), "%s", err->text);
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&x->lock);
}

static const struct kube_watch_ops ops = {on_begin, on_event, on_done, on_error};

/* Number of log lines equal to line. Caller holds x->lock. */
static size_t count_locked(struct fx *x, const char *line)
{
    size_t k = 0;

    for (size_t i = 0; i < x->n; i++)
        k += strcmp(x->log[i], line) == 0;
    return k;
}

/* Waits until line has been logged at least k times; fails the test after WAIT_MS. */
static void wait_log(struct fx *x, const char *line, size_t k)
{
    struct timespec ts;
    size_t have;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&x->lock);
    while ((have = count_locked(x, line)) < k)
        if (pthread_cond_timedwait(&x->cond, &x->lock, &ts) != 0)
            break;
    pthread_mutex_unlock(&x->lock);
    if (have < k)
        fail_msg("'%s' logged %zu times, expected %zu", line, have, k);
}

/* Asserts that the log is exactly the NULL-terminated list. */
static void assert_log(struct fx *x, const char *const *want)
{
    size_t i;

    pthread_mutex_lock(&x->lock);
    for (i = 0; want[i]; i++) {
        if (i >= x->n || strcmp(x->log[i], want[i]) != 0) {
            pthread_mutex_unlock(&x->lock);
            fail_msg("log line %zu is '%s', expected '%s'", i, i < x->n ? x->log[i] : "(none)",
                     want[i]);
        }
    }
    if (x->n != i) {
        pthread_mutex_unlock(&x->lock);
        fail_msg("log has %zu lines, expected %zu", x->n, i);
    }
    pthread_mutex_unlock(&x->lock);
}

static int setup(void **state)
{
    struct fx *x = calloc(1, sizeof(*x));

    if (!x)
        return -1;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->cond, NULL);
    x->f = fake_api_start();
    if (!x->f)
        return -1;
    kube_config_init(&x->cfg);
    if (kube_config_set_server(&x->cfg, fake_api_url(x->f), NULL) < 0)
        return -1;
    x->cfg.seed = 42;
    x->cfg.backoff_initial_ms = 20;
    x->cfg.backoff_max_ms = 100;
    x->cfg.request_timeout_ms = 5000;
    *state = x;
    return 0;
}

static int teardown(void **state)
{
    struct fx *x = *state;
    char path[128];

    kube_watch_stop(x->w);
    kube_client_free(x->c);
    fake_api_stop(x->f);
    if (x->dir[0]) {
        snprintf(path, sizeof(path), "%s/token", x->dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/ca.crt", x->dir);
        unlink(path);
        rmdir(x->dir);
    }
    pthread_cond_destroy(&x->cond);
    pthread_mutex_destroy(&x->lock);
    free(x);
    return 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[128], tmp[140];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0); /* a token swap is atomic, as kubelet's is */
}

static void make_dir(struct fx *x)
{
    snprintf(x->dir, sizeof(x->dir), "/tmp/test_kube.XXXXXX");
    assert_non_null(mkdtemp(x->dir));
}

static json_t *node(const char *name)
{
    return json_pack("{s:s, s:{s:s}}", "kind", "Node", "metadata", "name", name);
}

static json_t *pod(const char *name, const char *uid)
{
    return json_pack("{s:s, s:{s:s, s:s, s:s}, s:{}}", "kind", "Pod", "metadata", "name", name,
                     "namespace", "default", "uid", uid, "spec");
}

static void client_new(struct fx *x)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    x->c = kube_client_new(&x->cfg, &err);
    if (!x->c)
        fail_msg("kube_client_new: %s", err.text);
}

/* Creates the client, starts a watcher on path and waits for its first sync. */
static void start_synced(struct fx *x, const char *path)
{
    struct lt_err err;

    client_new(x);
    lt_err_init(&err, NULL);
    x->w = kube_watch_start(x->c, path, NULL, &ops, x, &err);
    if (!x->w)
        fail_msg("kube_watch_start: %s", err.text);
    wait_log(x, "begin", 1);
}

static void wait_synced(struct fx *x, const char *rv, size_t k)
{
    char line[LINE_MAX];

    snprintf(line, sizeof(line), "done %s", rv);
    wait_log(x, line, k);
}

static void wait_stream(struct fx *x, enum fake_res r)
{
    int64_t end = now_ms() + WAIT_MS;

    while (fake_api_streams(x->f, r) < 1 && now_ms() < end)
        sleep_ms(2);
    assert_int_equal(fake_api_streams(x->f, r), 1);
}

/* Index of the first request at or after from containing needle; fails after WAIT_MS. */
static size_t wait_request(struct fx *x, const char *needle, size_t from)
{
    size_t i = 0;

    if (!fake_api_wait_request(x->f, needle, from, WAIT_MS, &i))
        fail_msg("no request containing '%s' from index %zu", needle, from);
    return i;
}

/* A LIST of 5 nodes with limit=2 takes three pages; the items arrive once, in order, between
 * relist_begin and relist_done; the first WATCH starts from the list RV with bookmarks and a
 * timeoutSeconds in [300, 600). */
static void test_kube_list_pages_with_limit_and_continue(void **state)
{
    struct fx *x = *state;
    static const char *const want[] = {"begin",     "LISTED n0", "LISTED n1", "LISTED n2",
                                       "LISTED n3", "LISTED n4", "done 105",  NULL};
    char req[512], name[8];
    struct kube_watch_stats st;
    size_t i;
    int t;

    for (int k = 0; k < 5; k++) {
        snprintf(name, sizeof(name), "n%d", k);
        fake_api_add(x->f, FAKE_NODES, node(name));
    }
    x->cfg.list_page_limit = 2;
    start_synced(x, "/api/v1/nodes");
    wait_synced(x, "105", 1);
    assert_log(x, want);
    assert_true(fake_api_request(x->f, 0, req, sizeof(req), NULL));
    assert_string_equal(req, "GET /api/v1/nodes?limit=2");
    assert_true(fake_api_request(x->f, 1, req, sizeof(req), NULL));
    assert_string_equal(req, "GET /api/v1/nodes?limit=2&continue=105:2");
    assert_true(fake_api_request(x->f, 2, req, sizeof(req), NULL));
    assert_string_equal(req, "GET /api/v1/nodes?limit=2&continue=105:4");
    i = wait_request(x, "watch=1", 0);
    assert_int_equal(i, 3);
    assert_true(fake_api_request(x->f, i, req, sizeof(req), NULL));
    assert_non_null(strstr(req, "resourceVersion=105&allowWatchBookmarks=true&timeoutSeconds="));
    t = (int)strtol(strstr(req, "timeoutSeconds=") + 15, NULL, 10);
    assert_true(t >= 300 && t < 600);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 1);
    assert_int_equal(st.events[KUBE_EVENT_LISTED], 5);
    assert_true(st.synced);
    assert_true(st.last_event_unix_ms > 0);
}

/* An expired continue token (410 on page 2) abandons the partial list and lists again. */
static void test_kube_expired_continue_restarts_list(void **state)
{
    struct fx *x = *state;
    static const char *const want[] = {"begin",     "LISTED n0", "LISTED n1", "begin", "LISTED n0",
                                       "LISTED n1", "LISTED n2", "done 103",  NULL};
    struct kube_watch_stats st;

    fake_api_add(x->f, FAKE_NODES, node("n0"));
    fake_api_add(x->f, FAKE_NODES, node("n1"));
    fake_api_add(x->f, FAKE_NODES, node("n2"));
    fake_api_expire_continue(x->f, FAKE_NODES, 1);
    x->cfg.list_page_limit = 2;
    start_synced(x, "/api/v1/nodes");
    wait_synced(x, "103", 1);
    assert_log(x, want);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 2);
    assert_int_equal(st.errors, 1);
}

/* Events pushed on the stream reach the callback in order, with their types. */
static void test_kube_watch_delivers_events_in_order(void **state)
{
    struct fx *x = *state;
    static const char *const want[] = {"begin",      "done 100", "ADDED p1", "MODIFIED p1",
                                       "DELETED p1", "ADDED p2", NULL};
    struct kube_watch_stats st;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod("p1", "u1"));
    fake_push_event(x->f, FAKE_PODS, "MODIFIED", pod("p1", "u1"));
    fake_push_event(x->f, FAKE_PODS, "DELETED", pod("p1", "u1"));
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod("p2", "u2"));
    wait_log(x, "ADDED p2", 1);
    assert_log(x, want);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.events[KUBE_EVENT_ADDED], 2);
    assert_int_equal(st.events[KUBE_EVENT_MODIFIED], 1);
    assert_int_equal(st.events[KUBE_EVENT_DELETED], 1);
    assert_int_equal(st.watch_restarts, 0);
    assert_int_equal(st.errors, 0);
}

/* A JSON line cut in two chunks (inside the type, and before the final brace) is parsed
 * whole, with no error and no relist. */
static void test_kube_watch_line_split_across_chunks(void **state)
{
    struct fx *x = *state;
    static const char *const want[] = {"begin", "done 100", "ADDED p1", "ADDED p2", NULL};
    struct kube_watch_stats st;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    fake_push_event_split(x->f, FAKE_PODS, "ADDED", pod("p1", "u1"), 7);
    fake_push_event_split(x->f, FAKE_PODS, "ADDED", pod("p2", "u2"), 100);
    wait_log(x, "ADDED p2", 1);
    assert_log(x, want);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.relists, 1);
}

/* A BOOKMARK advances the RV: after the stream ends cleanly, the next WATCH carries the
 * bookmark's RV, without a relist. */
static void test_kube_bookmark_advances_rv(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;
    size_t i;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    i = wait_request(x, "watch=1&resourceVersion=100&", 0);
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod("p1", "u1")); /* RV 101 */
    assert_int_equal(fake_push_bookmark(x->f, FAKE_PODS), 102);
    fake_push_end(x->f, FAKE_PODS);
    wait_request(x, "watch=1&resourceVersion=102&", i + 1);
    wait_log(x, "BOOKMARK 102", 1);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 1);
    assert_int_equal(st.watch_restarts, 1);
    assert_int_equal(st.events[KUBE_EVENT_BOOKMARK], 1);
    assert_int_equal(st.errors, 0);
}

/* An ERROR event with code 410 (reason Expired) makes the watcher relist and report synced
 * again; the new WATCH starts from the new list's RV. */
static void test_kube_error_410_event_relists(void **state)
{
    struct fx *x = *state;
    static const char *const want[] = {"begin", "done 100",  "ADDED p1", "ERROR 410",
                                       "begin", "LISTED p1", "done 101", NULL};
    struct kube_watch_stats st;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod("p1", "u1"));
    fake_push_error_410(x->f, FAKE_PODS);
    wait_synced(x, "101", 1);
    assert_log(x, want);
    wait_request(x, "watch=1&resourceVersion=101&", 0);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 2);
    assert_true(st.synced);
    assert_int_equal(st.events[KUBE_EVENT_ERROR], 1);
}

/* A plain HTTP 410 answer to a WATCH also relists. */
static void test_kube_http_410_relists(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    wait_stream(x, FAKE_PODS);
    fake_api_fail_watch(x->f, FAKE_PODS, 410, 1);
    fake_push_end(x->f, FAKE_PODS); /* the re-watch meets the 410 */
    wait_synced(x, "100", 2);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 2);
    assert_int_equal(st.watch_restarts, 1);
    pthread_mutex_lock(&x->lock);
    assert_non_null(strstr(x->last_error, "HTTP 410"));
    pthread_mutex_unlock(&x->lock);
}

/* A connection dropped mid-stream re-watches from the last event's RV after a backoff of at
 * least backoff_initial_ms / 2, without a relist. */
static void test_kube_disconnect_rewatches_from_last_rv_with_backoff(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;
    int64_t t0, t1;
    size_t i, j;

    x->cfg.backoff_initial_ms = 200;
    x->cfg.backoff_max_ms = 400;
    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    i = wait_request(x, "watch=1", 0);
    assert_int_equal(fake_push_event(x->f, FAKE_PODS, "ADDED", pod("p1", "u1")), 101);
    wait_log(x, "ADDED p1", 1);
    t0 = now_ms();
    fake_push_drop(x->f, FAKE_PODS);
    j = wait_request(x, "watch=1&resourceVersion=101&", i + 1);
    assert_true(fake_api_request(x->f, j, (char[8]){0}, 8, &t1));
    assert_true(t1 - t0 >= 100);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 1);
    assert_int_equal(st.watch_restarts, 1);
    assert_int_equal(st.errors, 1);
    pthread_mutex_lock(&x->lock);
    assert_non_null(strstr(x->last_error, "WATCH"));
    pthread_mutex_unlock(&x->lock);
}

/* A drop followed by a 410 on the re-watch relists. */
static void test_kube_disconnect_then_410_relists(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    wait_stream(x, FAKE_PODS);
    fake_api_fail_watch(x->f, FAKE_PODS, 410, 1);
    fake_push_drop(x->f, FAKE_PODS);
    wait_synced(x, "100", 2);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 2);
    assert_int_equal(st.errors, 2); /* the drop, then the 410 */
}

/* A malformed line may hide a lost event: the watcher reports it and relists. */
static void test_kube_malformed_line_relists(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    fake_push_raw(x->f, FAKE_PODS, "{\"type\":\"ADDED\",\"object\":{\"metadata\":");
    wait_synced(x, "100", 2);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 2);
    pthread_mutex_lock(&x->lock);
    assert_non_null(strstr(x->last_error, "malformed event"));
    pthread_mutex_unlock(&x->lock);
}

/* A WATCH answered 410 again and again: the first relist is immediate, the next ones wait
 * a growing backoff (here at least 50 + 100 ms), so the watcher never spins. */
static void test_kube_repeated_410_backs_off(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;
    int64_t t0, t1;
    size_t i, l2, l3, l4;

    x->cfg.backoff_initial_ms = 100;
    x->cfg.backoff_max_ms = 400;
    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    wait_stream(x, FAKE_PODS);
    fake_api_fail_watch(x->f, FAKE_PODS, 410, 3);
    i = fake_api_request_count(x->f);
    fake_push_end(x->f, FAKE_PODS);
    wait_synced(x, "100", 4);
    l2 = wait_request(x, "?limit=500", i);      /* at once, after the first 410 */
    l3 = wait_request(x, "?limit=500", l2 + 1); /* after a backoff in [50, 100] ms */
    l4 = wait_request(x, "?limit=500", l3 + 1); /* after a backoff in [100, 200] ms */
    assert_true(fake_api_request(x->f, l2, (char[8]){0}, 8, &t0));
    assert_true(fake_api_request(x->f, l4, (char[8]){0}, 8, &t1));
    assert_true(t1 - t0 >= 150);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 4);
    assert_int_equal(st.errors, 3);
}

/* A field selector goes, percent-encoded, on every LIST and WATCH request. */
static void test_kube_field_selector_on_list_and_watch(void **state)
{
    struct fx *x = *state;
    struct lt_err err;

    client_new(x);
    lt_err_init(&err, NULL);
    x->w = kube_watch_start(x->c, "/api/v1/pods", "spec.nodeName!=,status.phase!=Failed", &ops, x,
                            &err);
    assert_non_null(x->w);
    wait_synced(x, "100", 1);
    wait_request(x, "GET /api/v1/pods?limit=500&fieldSelector=spec.nodeName!=,status.phase!=Failed",
                 0);
    wait_request(x, "timeoutSeconds=", 0);
    wait_request(x, "&fieldSelector=spec.nodeName!=,status.phase!=Failed", 1);
    lt_err_init(&err, NULL);
    assert_null(kube_watch_start(x->c, "api/v1/pods", NULL, &ops, x, &err));
    assert_int_equal(err.code, LT_EINVAL);
}

/* With a periodic re-read an hour away, a 401 alone makes the client re-read its token file:
 * once the file holds the right token, the watcher syncs. kube_bind re-reads and retries too. */
static void test_kube_token_reread_after_401(void **state)
{
    struct fx *x = *state;
    struct lt_err err;
    int status;

    make_dir(x);
    write_file(x->dir, "token", "old-token\n");
    snprintf(x->cfg.token_file, sizeof(x->cfg.token_file), "%s/token", x->dir);
    x->cfg.token_reread_ms = 3600 * 1000;
    fake_api_set_token(x->f, "new-token");
    fake_api_add(x->f, FAKE_PODS, pod("p1", "u1"));
    start_synced(x, "/api/v1/pods");
    wait_request(x, "GET /api/v1/pods?limit=500", 1); /* a retry after the first 401 */
    pthread_mutex_lock(&x->lock);
    assert_true(x->errors >= 1);
    assert_non_null(strstr(x->last_error, "HTTP 401"));
    assert_int_equal(count_locked(x, "done 101"), 0);
    pthread_mutex_unlock(&x->lock);
    write_file(x->dir, "token", "new-token\n");
    wait_synced(x, "101", 1);

    /* The binding path: the server rotates again; bind gets 401, re-reads, retries. */
    fake_api_set_token(x->f, "newer-token");
    write_file(x->dir, "token", "newer-token");
    lt_err_init(&err, NULL);
    assert_int_equal(kube_bind(x->c, "default", "p1", "u1", "node-1", &status, &err), 0);
    assert_int_equal(status, 201);
}

/* A binding answered 201 succeeds; the server saw the Binding with the pod's uid. */
static void test_kube_bind_created(void **state)
{
    struct fx *x = *state;
    struct lt_err err;
    char got[64];
    int status = -1;

    fake_api_add(x->f, FAKE_PODS, pod("web-1", "uid-1"));
    client_new(x);
    lt_err_init(&err, NULL);
    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-7", &status, &err), 0);
    assert_int_equal(status, 201);
    assert_int_equal(err.code, 0);
    assert_true(fake_api_pod_node(x->f, "default", "web-1", got, sizeof(got)));
    assert_string_equal(got, "node-7");
    assert_int_equal(fake_api_bindings(x->f), 1);
    wait_request(x, "POST /api/v1/namespaces/default/pods/web-1/binding", 0);
}

/* A 409 is an error whose message carries the API server's message; so is binding a pod
 * that is already bound. */
static void test_kube_bind_conflict_reports_message(void **state)
{
    struct fx *x = *state;
    struct lt_err err;
    int status;

    fake_api_add(x->f, FAKE_PODS, pod("web-1", "uid-1"));
    client_new(x);
    fake_api_bind_conflict_next(x->f, "pod web-1 is being deleted");
    lt_err_init(&err, NULL);
    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-7", &status, &err), LT_EIO);
    assert_int_equal(status, 409);
    assert_non_null(strstr(err.text, "409 Conflict: pod web-1 is being deleted"));
    assert_non_null(strstr(err.text, "'default/web-1'"));

    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-7", &status, NULL), 0);
    lt_err_init(&err, NULL);
    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-8", &status, &err), LT_EIO);
    assert_int_equal(status, 409);
    assert_non_null(strstr(err.text, "already assigned to node \"node-7\""));
}

/* A uid that does not match the stored pod's (the pod was recreated) gives 409. */
static void test_kube_bind_wrong_uid_conflicts(void **state)
{
    struct fx *x = *state;
    struct lt_err err;
    char got[64];
    int status;

    fake_api_add(x->f, FAKE_PODS, pod("web-1", "uid-2"));
    client_new(x);
    lt_err_init(&err, NULL);
    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-7", &status, &err), LT_EIO);
    assert_int_equal(status, 409);
    assert_non_null(strstr(err.text, "Precondition failed: UID in precondition: uid-1"));
    assert_false(fake_api_pod_node(x->f, "default", "web-1", got, sizeof(got)));
}

/* No server: the error names the URL and the status is 0; empty arguments are LT_EINVAL. */
static void test_kube_bind_unreachable_names_url(void **state)
{
    struct fx *x = *state;
    struct lt_err err;
    int status = -1;

    client_new(x);
    fake_api_stop(x->f);
    x->f = NULL;
    lt_err_init(&err, NULL);
    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-7", &status, &err), LT_EIO);
    assert_int_equal(status, 0);
    assert_non_null(strstr(err.text, "POST 'http://127.0.0.1:"));
    assert_non_null(strstr(err.text, "/api/v1/namespaces/default/pods/web-1/binding' failed"));
    assert_int_equal(kube_bind(x->c, "default", "", "uid-1", "node-7", NULL, NULL), LT_EINVAL);
}

/* A binding the API server does not answer within write_timeout_ms fails with the URL, and
 * its status says it was sent: it may have taken effect (the fake applies it later). */
static void test_kube_bind_times_out(void **state)
{
    struct fx *x = *state;
    struct lt_err err;
    int64_t t0, dt;
    int status = 0;

    fake_api_add(x->f, FAKE_PODS, pod("web-1", "uid-1"));
    x->cfg.write_timeout_ms = 200;
    client_new(x);
    fake_api_bind_delay_next(x->f, 700);
    lt_err_init(&err, NULL);
    t0 = now_ms();
    assert_int_equal(kube_bind(x->c, "default", "web-1", "uid-1", "node-7", &status, &err), LT_EIO);
    dt = now_ms() - t0;
    assert_true(dt >= 150 && dt < 650);
    assert_int_equal(status, KUBE_STATUS_UNKNOWN);
    assert_non_null(strstr(err.text, "/pods/web-1/binding' failed: "));
    assert_non_null(strstr(err.text, "timed out"));
}

/* A WATCH line longer than max_line_bytes is refused (bounded memory) and the watcher
 * relists, since it lost that event. */
static void test_kube_overlong_line_relists(void **state)
{
    struct fx *x = *state;
    struct kube_watch_stats st;
    char big[600];

    x->cfg.max_line_bytes = 256;
    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    fake_push_event(x->f, FAKE_PODS, "ADDED",
                    json_pack("{s:{s:s, s:s}, s:s}", "metadata", "name", "p1", "namespace",
                              "default", "data", big));
    wait_synced(x, "101", 1);
    kube_watch_stats(x->w, &st);
    assert_int_equal(st.relists, 2);
    assert_int_equal(st.events[KUBE_EVENT_ADDED], 0);
    wait_log(x, "LISTED p1", 1); /* the relist brings it: LIST pages have their own limit */
    pthread_mutex_lock(&x->lock);
    assert_non_null(strstr(x->last_error, "a line exceeds 256 bytes"));
    pthread_mutex_unlock(&x->lock);
}

/* Stopping a watcher whose WATCH stream is idle returns well within a second. */
static void test_kube_stop_while_idle_is_prompt(void **state)
{
    struct fx *x = *state;
    int64_t t0, dt;

    start_synced(x, "/api/v1/pods");
    wait_synced(x, "100", 1);
    wait_stream(x, FAKE_PODS);
    sleep_ms(100); /* let curl settle into curl_multi_poll */
    t0 = now_ms();
    kube_watch_stop(x->w);
    dt = now_ms() - t0;
    x->w = NULL;
    print_message("kube_watch_stop took %lld ms\n", (long long)dt);
    assert_true(dt < 1000);
}

/* In-cluster config: JoinHostPort brackets IPv6 hosts; the token and CA come from the
 * service-account directory; without the variables the process is not in a cluster. */
static void test_kube_in_cluster_config(void **state)
{
    struct fx *x = *state;
    struct kube_config cfg;
    struct lt_err err;
    char want[128];

    make_dir(x);
    write_file(x->dir, "token", "tok");
    write_file(x->dir, "ca.crt", "-----BEGIN CERTIFICATE-----\n");
    kube_config_init(&cfg);
    setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kube_config_in_cluster(&cfg, x->dir, NULL), 0);
    assert_string_equal(cfg.server, "https://[fd00:10:96::1]:443");
    snprintf(want, sizeof(want), "%s/token", x->dir);
    assert_string_equal(cfg.token_file, want);
    snprintf(want, sizeof(want), "%s/ca.crt", x->dir);
    assert_string_equal(cfg.ca_file, want);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    assert_int_equal(kube_config_in_cluster(&cfg, x->dir, NULL), 0);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    unsetenv("KUBERNETES_SERVICE_HOST");
    lt_err_init(&err, NULL);
    assert_int_equal(kube_config_in_cluster(&cfg, x->dir, &err), LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "not in a cluster"));
    unsetenv("KUBERNETES_SERVICE_PORT");
    lt_err_init(&err, NULL);
    assert_int_equal(kube_config_set_server(&cfg, "ftp://x", &err), LT_EINVAL);
    assert_int_equal(kube_config_set_server(&cfg, "https://api.example:6443//", NULL), 0);
    assert_string_equal(cfg.server, "https://api.example:6443");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_kube_list_pages_with_limit_and_continue),
        T(test_kube_expired_continue_restarts_list),
        T(test_kube_watch_delivers_events_in_order),
        T(test_kube_watch_line_split_across_chunks),
        T(test_kube_bookmark_advances_rv),
        T(test_kube_error_410_event_relists),
        T(test_kube_http_410_relists),
        T(test_kube_disconnect_rewatches_from_last_rv_with_backoff),
        T(test_kube_disconnect_then_410_relists),
        T(test_kube_malformed_line_relists),
        T(test_kube_repeated_410_backs_off),
        T(test_kube_field_selector_on_list_and_watch),
        T(test_kube_token_reread_after_401),
        T(test_kube_bind_created),
        T(test_kube_bind_conflict_reports_message),
        T(test_kube_bind_wrong_uid_conflicts),
        T(test_kube_bind_unreachable_names_url),
        T(test_kube_bind_times_out),
        T(test_kube_overlong_line_relists),
        T(test_kube_stop_while_idle_is_prompt),
        T(test_kube_in_cluster_config),
    };
    struct lt_err err;
    int rc;

    lt_err_init(&err, NULL);
    if (kube_global_init(&err) < 0) {
        fprintf(stderr, "%s\n", err.text);
        return 1;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    kube_global_cleanup();
    return rc;
#undef T
}
