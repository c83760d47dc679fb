/* test_cache.c -- the extender's cluster cache (extender/cache.c against extender/cache.h).
 *
 * Offline: the cluster files of tests/fixtures/extender/cluster (small.json, a v1 List, and
 * small-split.json, the same cluster as {"nodes", "pods"}) and the broken ones under invalid/.
 * Online: the fake API server (tests/fake_apiserver.c) serves LIST and WATCH to kube.c, which
 * feeds the cache; tests poll the snapshots with a 5 s limit. The concurrency test runs reader
 * threads against a stream of events and assumes; it is meant for ASan and TSan builds too.
 *
 * Timing: with LOTUS_CACHE_BENCH=1 in the environment, test_cache_rebuild_timing measures a
 * rebuild of 5,000 nodes and 150,000 pods (otherwise 500 and 15,000) and prints "rebuild: ...".
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "ext_codec.h"
#include "fake_apiserver.h"
#include "kube.h"

#define WAIT_MS 5000
#define GI      (1024.0 * 1024.0 * 1024.0)
#define MI      (1024.0 * 1024.0)

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static struct ext_cache *cache_new(int64_t rebuild_ms, int64_t ttl_ms)
{
    struct ext_cache_config cfg = {0};
    struct lt_err err;
    struct ext_cache *c;

    cfg.rebuild_ms = rebuild_ms;
    cfg.assume_ttl_ms = ttl_ms;
    cfg.seed = 7;
    cfg.policies[0] = lt_policy_find("bestfit3", NULL);
    cfg.policies[1] = lt_policy_find("firstfit", NULL);
    lt_err_init(&err, NULL);
    c = ext_cache_new(&cfg, &err);
    if (c == NULL)
        fail_msg("ext_cache_new: %s", err.text);
    return c;
}

static void load(struct ext_cache *c, const char *file)
{
    char path[512];
    struct lt_err err;

    snprintf(path, sizeof(path), "%s/%s", EXT_CLUSTER_FIXTURES, file);
    lt_err_init(&err, NULL);
    if (ext_cache_load_file(c, path, &err) < 0)
        fail_msg("load %s: %s", path, err.text);
}

static const struct ext_snap_pod *pod_named(const struct ext_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->n_pods; i++)
        if (strcmp(s->pods[i].name, name) == 0)
            return &s->pods[i];
    return NULL;
}

/* Every invariant a reader may rely on: placements = pods, task id = position, grouping. */
static void check_snapshot(const struct ext_snapshot *s)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (lt_cluster_check(s->cluster, &err) < 0)
        fail_msg("lt_cluster_check: %s", err.text);
    assert_int_equal(lt_cluster_n_placements(s->cluster), s->n_pods);
    for (size_t i = 0; i < s->n_pods; i++) {
        const struct ext_snap_pod *p = &s->pods[i];

        assert_true(lt_cluster_placement_live(s->cluster, p->pid));
        assert_int_equal(lt_cluster_placement_machine(s->cluster, p->pid), p->node);
        assert_int_equal(lt_cluster_placement_task(s->cluster, p->pid)->id, (int64_t)i);
        assert_ptr_equal(ext_snapshot_find_pod(s, p->uid), p);
        if (i > 0)
            assert_true(s->pods[i - 1].node <= p->node);
    }
    for (size_t m = 1; m < lt_cluster_size(s->cluster); m++)
        assert_true(strcmp(lt_cluster_name(s->cluster, m - 1), lt_cluster_name(s->cluster, m)) < 0);
}

/* ---- offline ------------------------------------------------------------------------------ */

/* The expected view of tests/fixtures/extender/cluster/small*.json (see its README). */
static void check_small(const struct ext_snapshot *s)
{
    const struct lt_cluster *cl = s->cluster;
    const struct ext_snap_pod *p;
    size_t a, c, d;

    check_snapshot(s);
    assert_int_equal(lt_cluster_size(cl), 4);
    a = lt_cluster_find(cl, "node-a");
    c = lt_cluster_find(cl, "node-c");
    d = lt_cluster_find(cl, "node-d");
    assert_int_equal(a, 0);
    assert_int_equal(lt_cluster_find(cl, "node-b"), 1);
    assert_int_equal(c, 2);
    assert_int_equal(d, 3);
    lt_assert_near(lt_cluster_cap(cl, a).cpu, 3800, 0);
    lt_assert_near(lt_cluster_cap(cl, a).mem, 7 * GI, 0);
    lt_assert_near(lt_cluster_cap(cl, a).disk, 100 * GI, 0);
    lt_assert_near(lt_cluster_cap(cl, d).disk, 1, 0); /* no ephemeral-storage reported */
    assert_non_null(s->max_pods);                     /* allocatable "pods", by machine index */
    for (size_t m = 0; m < 4; m++)
        assert_int_equal(s->max_pods[m], 110);
    /* Counted: web-1 (a), web-2 (b), db-0 (c), logger (d). Not: batch-1 (Succeeded), cache-0
     * (being deleted), pending-1 and pending-2 (unbound). */
    assert_int_equal(s->n_pods, 4);
    assert_null(pod_named(s, "batch-1"));
    assert_null(pod_named(s, "cache-0"));
    assert_null(pod_named(s, "pending-1"));
    assert_null(ext_snapshot_find_pod(s, "uid-pending-2"));
    lt_assert_near(lt_cluster_alloc(cl, a).cpu, 500, 0);
    lt_assert_near(lt_cluster_alloc(cl, a).mem, 1 * GI, 0);
    lt_assert_near(lt_cluster_alloc(cl, 1).cpu, 500, 0);
    lt_assert_near(lt_cluster_alloc(cl, c).cpu, 2000, 0);
    lt_assert_near(lt_cluster_alloc(cl, c).mem, 4 * GI, 0);
    lt_assert_near(lt_cluster_alloc(cl, c).disk, 10 * GI, 0);
    lt_assert_near(lt_cluster_alloc(cl, d).mem, 64 * MI, 0);
    p = ext_snapshot_find_pod(s, "uid-db-0");
    assert_non_null(p);
    assert_string_equal(p->ns, "data");
    assert_string_equal(p->name, "db-0");
    assert_int_equal(p->priority, 1000);
    assert_true(p->sticky);
    assert_false(p->assumed);
    assert_int_equal(p->node, c);
    assert_true(lt_cluster_placement_task(cl, p->pid)->sticky);
    assert_int_equal(lt_cluster_placement_task(cl, p->pid)->priority, 1000);
    p = pod_named(s, "web-2");
    assert_int_equal(p->start_ms, INT64_C(1714557900250)); /* 2024-05-01T10:05:00.250Z */
    assert_false(p->sticky);
    assert_int_equal(pod_named(s, "logger")->priority, -5);
    /* A pod without a startTime falls back to creationTimestamp (none here is unbound). */
    assert_int_equal(pod_named(s, "web-1")->start_ms, INT64_C(1714557600000));
}

static void test_cache_offline_list(void **state)
{
    struct ext_cache *c = cache_new(0, 30000);
    struct ext_cache_stats st;
    struct ext_snapshot *s;

    (void)state;
    assert_null(ext_snapshot_acquire(c));
    ext_cache_stats(c, &st);
    assert_false(st.synced);
    load(c, "small.json");
    s = ext_snapshot_acquire(c);
    assert_non_null(s);
    check_small(s);
    assert_true(s->built_ms > 0);
    assert_true(s->version >= 1);
    ext_cache_stats(c, &st);
    assert_true(st.synced);
    assert_int_equal(st.nodes, 4);
    assert_int_equal(st.pods, 4);
    assert_int_equal(st.assumed, 0);
    assert_int_equal(st.snapshot_version, s->version);
    assert_true(st.snapshot_age_ms >= 0 && st.snapshot_age_ms < 5000);
    ext_snapshot_release(s);
    ext_cache_free(c);
}

static void test_cache_offline_split_form(void **state)
{
    struct ext_cache *c = cache_new(0, 30000);
    struct ext_snapshot *s;

    (void)state;
    load(c, "small-split.json");
    s = ext_snapshot_acquire(c);
    assert_non_null(s);
    check_small(s);
    ext_snapshot_release(s);
    /* Loading again replaces the state (and publishes a newer snapshot). */
    load(c, "small.json");
    s = ext_snapshot_acquire(c);
    check_small(s);
    assert_true(s->version >= 2);
    ext_snapshot_release(s);
    ext_cache_free(c);
}

static void test_cache_offline_errors_name_file_and_path(void **state)
{
    static const struct {
        const char *file;
        int code;
        const char *want; /* after "<path>: " */
    } cases[] = {
        {"invalid/bad-quantity.json", LT_EPARSE,
         "items[5].spec.containers[0].resources.requests.cpu"},
        {"invalid/bad-kind.json", LT_EPARSE,
         "items[2].kind: expected \"Node\" or \"Pod\", got \"ConfigMap\""},
        {"invalid/dup-node.json", LT_EINVAL, "items[12].metadata.name: duplicate node 'node-b'"},
        {"invalid/no-uid.json", LT_EINVAL, "pods.items[1].metadata.uid: missing"},
        {"invalid/items-not-array.json", LT_EPARSE, "nodes.items: expected an array"},
        {"invalid/not-object.json", LT_EPARSE, "top level: expected an object"},
        {"invalid/syntax.json", LT_EPARSE, ":3:"},
        {"invalid/no-such-file.json", LT_EIO, "cannot read: No such file or directory"},
        {"invalid", LT_EIO, "cannot read: Is a directory"},
    };
    char path[512];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ext_cache *c = cache_new(0, 30000);
        struct lt_err err;
        int rc;

        snprintf(path, sizeof(path), "%s/%s", EXT_CLUSTER_FIXTURES, cases[i].file);
        lt_err_init(&err, NULL);
        rc = ext_cache_load_file(c, path, &err);
        if (rc != cases[i].code || strncmp(err.text, path, strlen(path)) != 0 ||
            strstr(err.text, cases[i].want) == NULL)
            fail_msg("%s: rc %d (want %d), message '%s' (want '%s')", cases[i].file, rc,
                     cases[i].code, err.text, cases[i].want);
        assert_string_equal(err.source, path);
        assert_null(ext_snapshot_acquire(c)); /* a failed load publishes nothing */
        ext_cache_free(c);
    }
}

/* A bad file after a good one leaves the good state in place. */
static void test_cache_offline_bad_reload_keeps_state(void **state)
{
    struct ext_cache *c = cache_new(0, 30000);
    struct ext_snapshot *s;
    char path[512];
    uint64_t v;

    (void)state;
    load(c, "small.json");
    s = ext_snapshot_acquire(c);
    v = s->version;
    ext_snapshot_release(s);
    snprintf(path, sizeof(path), "%s/invalid/dup-node.json", EXT_CLUSTER_FIXTURES);
    assert_int_equal(ext_cache_load_file(c, path, NULL), LT_EINVAL);
    s = ext_snapshot_acquire(c);
    assert_int_equal(s->version, v);
    check_small(s);
    ext_snapshot_release(s);
    ext_cache_free(c);
}

static void test_cache_offline_assume(void **state)
{
    struct ext_cache *c = cache_new(0, 30000);
    struct ext_snapshot *s;
    struct ext_cache_stats st;
    const struct ext_snap_pod *p;
    struct lt_err err;
    size_t d;
    bool known = false;

    (void)state;
    load(c, "small.json");
    lt_err_init(&err, NULL);
    assert_int_equal(
        ext_cache_assume(c, "default", "pending-1", "uid-pending-1", "node-d", &known, &err), 0);
    assert_true(known);
    s = ext_snapshot_acquire(c); /* counted at once */
    check_snapshot(s);
    assert_int_equal(s->n_pods, 5);
    p = ext_snapshot_find_pod(s, "uid-pending-1");
    assert_non_null(p);
    assert_true(p->assumed);
    assert_int_equal(p->priority, 100);
    d = lt_cluster_find(s->cluster, "node-d");
    assert_int_equal(p->node, d);
    lt_assert_near(lt_cluster_alloc(s->cluster, d).cpu, 1100, 0);
    lt_assert_near(lt_cluster_alloc(s->cluster, d).mem, 1 * GI + 64 * MI, 0);
    ext_snapshot_release(s);
    /* A pod the cache never saw counts with zero requests. */
    assert_int_equal(ext_cache_assume(c, "x", "ghost", "uid-ghost", "node-a", &known, NULL), 0);
    assert_false(known);
    /* A pod the feed shows bound already is not counted twice. */
    assert_int_equal(ext_cache_assume(c, "default", "web-1", "uid-web-1", "node-a", &known, NULL),
                     0);
    assert_true(known);
    /* Unknown node: nothing recorded. */
    lt_err_init(&err, NULL);
    assert_int_equal(
        ext_cache_assume(c, "default", "pending-2", "uid-pending-2", "node-z", &known, &err),
        LT_ENOTFOUND);
    assert_non_null(strstr(err.text, "node-z"));
    assert_int_equal(ext_cache_assume(c, "default", "p", "", "node-a", &known, NULL), LT_EINVAL);
    s = ext_snapshot_acquire(c);
    check_snapshot(s);
    assert_int_equal(s->n_pods, 6);
    p = ext_snapshot_find_pod(s, "uid-ghost");
    assert_true(p->assumed);
    assert_string_equal(p->name, "ghost");
    lt_assert_near(p->req.cpu + p->req.mem + p->req.disk, 0, 0);
    lt_assert_near(lt_cluster_alloc(s->cluster, 0).cpu, 500, 0); /* web-1 once */
    assert_null(ext_snapshot_find_pod(s, "uid-pending-2"));
    ext_snapshot_release(s);
    ext_cache_stats(c, &st);
    assert_int_equal(st.pods, 6);
    assert_int_equal(st.assumed, 2);
    ext_cache_free(c);
}

/* A reader's snapshot outlives the cache. */
static void test_cache_snapshot_outlives_cache(void **state)
{
    struct ext_cache *c = cache_new(0, 30000);
    struct ext_snapshot *s;

    (void)state;
    load(c, "small.json");
    s = ext_snapshot_acquire(c);
    ext_cache_free(c);
    check_small(s);
    ext_snapshot_release(s);
    ext_snapshot_release(NULL);
    ext_cache_free(NULL);
}

static void test_cache_bad_config(void **state)
{
    struct ext_cache_config cfg = {0};
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_null(ext_cache_new(&cfg, &err)); /* assume_ttl_ms 0 */
    assert_int_equal(err.code, LT_EINVAL);
    cfg.assume_ttl_ms = 1000;
    cfg.rebuild_ms = -1;
    assert_null(ext_cache_new(&cfg, NULL));
}

/* ---- online ------------------------------------------------------------------------------- */

struct fx {
    struct fake_api *f;
    struct kube_config cfg;
    struct kube_client *kc;
    struct ext_cache *c;
};

static json_t *node_obj(const char *name, const char *cpu, const char *mem)
{
    return json_pack("{s:s, s:{s:s}, s:{s:{s:s, s:s}}}", "kind", "Node", "metadata", "name", name,
                     "status", "allocatable", "cpu", cpu, "memory", mem);
}

static json_t *pod_obj(const char *name, const char *node, const char *cpu, const char *phase)
{
    char uid[96];

    snprintf(uid, sizeof(uid), "uid-%s", name);
    return json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s, s:s}}}]}, s:{s:s}}",
                     "kind", "Pod", "metadata", "name", name, "namespace", "default", "uid", uid,
                     "spec", "nodeName", node, "containers", "name", "c", "resources", "requests",
                     "cpu", cpu, "memory", "1Mi", "status", "phase", phase);
}

static int setup(void **state)
{
    struct fx *x = calloc(1, sizeof(*x));

    if (x == NULL)
        return -1;
    x->f = fake_api_start();
    if (x->f == NULL)
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

    ext_cache_free(x->c); /* stops the watchers before the client goes */
    kube_client_free(x->kc);
    fake_api_stop(x->f);
    free(x);
    return 0;
}

static void start(struct fx *x, int64_t rebuild_ms, int64_t ttl_ms)
{
    struct lt_err err;

    lt_err_init(&err, NULL);
    x->kc = kube_client_new(&x->cfg, &err);
    if (x->kc == NULL)
        fail_msg("kube_client_new: %s", err.text);
    x->c = cache_new(rebuild_ms, ttl_ms);
    if (ext_cache_start(x->c, x->kc, &err) < 0)
        fail_msg("ext_cache_start: %s", err.text);
}

typedef bool snap_pred(const struct ext_snapshot *s, const void *arg);

/* Polls the current snapshot until pred holds; fails after WAIT_MS. */
static void wait_snap(struct ext_cache *c, snap_pred *pred, const void *arg, const char *what)
{
    int64_t end = now_ms() + WAIT_MS;

    for (;;) {
        struct ext_snapshot *s = ext_snapshot_acquire(c);
        bool ok = s != NULL && pred(s, arg);

        if (ok)
            check_snapshot(s);
        ext_snapshot_release(s);
        if (ok)
            return;
        if (now_ms() > end) {
            struct ext_cache_stats st;

            ext_cache_stats(c, &st);
            fail_msg("no snapshot with %s after %d ms (now %zu nodes, %zu pods, %zu assumed, "
                     "%llu relists)",
                     what, WAIT_MS, st.nodes, st.pods, st.assumed, (unsigned long long)st.relists);
        }
        sleep_ms(2);
    }
}

struct counts {
    size_t nodes, pods;
};

static bool has_counts(const struct ext_snapshot *s, const void *arg)
{
    const struct counts *k = arg;

    return lt_cluster_size(s->cluster) == k->nodes && s->n_pods == k->pods;
}

static bool has_pod(const struct ext_snapshot *s, const void *arg)
{
    return ext_snapshot_find_pod(s, arg) != NULL;
}

static bool lacks_pod(const struct ext_snapshot *s, const void *arg)
{
    return ext_snapshot_find_pod(s, arg) == NULL;
}

static void wait_counts(struct ext_cache *c, size_t nodes, size_t pods)
{
    struct counts k = {nodes, pods};
    char what[64];

    snprintf(what, sizeof(what), "%zu nodes and %zu pods", nodes, pods);
    wait_snap(c, has_counts, &k, what);
}

static void test_cache_online_sync_and_events(void **state)
{
    struct fx *x = *state;
    struct ext_cache_stats st;
    struct ext_snapshot *s;
    size_t n1;

    fake_api_add(x->f, FAKE_NODES, node_obj("n1", "4", "8Gi"));
    fake_api_add(x->f, FAKE_NODES, node_obj("n0", "2", "4Gi"));
    fake_api_add(x->f, FAKE_PODS, pod_obj("a", "n0", "500m", "Running"));
    fake_api_add(x->f, FAKE_PODS, pod_obj("b", "n1", "1", "Running"));
    fake_api_add(x->f, FAKE_PODS, pod_obj("done", "n1", "1", "Succeeded"));
    fake_api_add(x->f, FAKE_PODS, pod_obj("wait", "", "2", "Pending"));
    start(x, 20, 30000);
    wait_counts(x->c, 2, 2);
    ext_cache_stats(x->c, &st);
    assert_true(st.synced);
    assert_int_equal(st.relists, 2);
    s = ext_snapshot_acquire(x->c);
    assert_string_equal(lt_cluster_name(s->cluster, 0), "n0");
    n1 = lt_cluster_find(s->cluster, "n1");
    lt_assert_near(lt_cluster_cap(s->cluster, n1).cpu, 4000, 0);
    lt_assert_near(lt_cluster_cap(s->cluster, n1).disk, 1, 0);
    lt_assert_near(lt_cluster_alloc(s->cluster, n1).cpu, 1000, 0);
    ext_snapshot_release(s);

    /* A bound pod appears; the pending one binds; a node joins; a pod finishes; one goes. */
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj("c", "n0", "250m", "Running"));
    wait_snap(x->c, has_pod, "uid-c", "pod c");
    fake_push_event(x->f, FAKE_PODS, "MODIFIED", pod_obj("wait", "n1", "2", "Running"));
    wait_snap(x->c, has_pod, "uid-wait", "pod wait");
    fake_push_event(x->f, FAKE_NODES, "ADDED", node_obj("n2", "8", "16Gi"));
    wait_counts(x->c, 3, 4);
    fake_push_event(x->f, FAKE_PODS, "MODIFIED", pod_obj("b", "n1", "1", "Failed"));
    wait_snap(x->c, lacks_pod, "uid-b", "pod b gone");
    fake_push_event(x->f, FAKE_PODS, "DELETED", pod_obj("a", "n0", "500m", "Running"));
    wait_counts(x->c, 3, 2);
    fake_push_event(x->f, FAKE_NODES, "DELETED", node_obj("n0", "2", "4Gi"));
    wait_counts(x->c, 2, 1); /* c's node is gone: it counts nowhere */
    s = ext_snapshot_acquire(x->c);
    n1 = lt_cluster_find(s->cluster, "n1");
    lt_assert_near(lt_cluster_alloc(s->cluster, n1).cpu, 2000, 0);
    assert_true(s->feed_ms > 0);
    ext_snapshot_release(s);
    /* An undecodable pod is skipped and counted. */
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj("bad", "n1", "lots", "Running"));
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj("after", "n1", "1", "Running"));
    wait_snap(x->c, has_pod, "uid-after", "pod after");
    ext_cache_stats(x->c, &st);
    assert_int_equal(st.feed_errors, 1);
    assert_int_equal(st.pods, 2);
    assert_true(st.feed_age_ms >= 0 && st.feed_age_ms < 5000);
}

/* A reader that acquires during relists never sees an empty or partial cluster. */
struct reader {
    struct ext_cache *c;
    atomic_bool stop;
    size_t min_nodes, min_pods, acquired, nulls;
    uint64_t last_version;
    bool version_went_back;
};

static void *reader_main(void *arg)
{
    struct reader *r = arg;

    r->min_nodes = r->min_pods = SIZE_MAX;
    while (!atomic_load(&r->stop)) {
        struct ext_snapshot *s = ext_snapshot_acquire(r->c);

        if (s == NULL) {
            r->nulls++;
            continue;
        }
        r->acquired++;
        if (lt_cluster_size(s->cluster) < r->min_nodes)
            r->min_nodes = lt_cluster_size(s->cluster);
        if (s->n_pods < r->min_pods)
            r->min_pods = s->n_pods;
        if (lt_cluster_n_placements(s->cluster) != s->n_pods)
            r->min_pods = 0; /* inconsistent: fail below */
        if (s->version < r->last_version)
            r->version_went_back = true;
        r->last_version = s->version;
        ext_snapshot_release(s);
    }
    return NULL;
}

/* Waits until both resources watch again after a relist (requests from index from) and the
 * streams the relist abandoned are gone: the fake server notices a closed stream within 20 ms,
 * and until then it could take an item queued for the new stream. */
static void wait_rewatched(struct fx *x, size_t from)
{
    static const char *const needle[FAKE_RES_N] = {"nodes?watch=1", "pods?watch=1"};
    int64_t end = now_ms() + WAIT_MS;

    for (int r = 0; r < FAKE_RES_N; r++)
        if (!fake_api_wait_request(x->f, needle[r], from, WAIT_MS, NULL))
            fail_msg("no %s request after a relist", needle[r]);
    sleep_ms(60);
    while (fake_api_streams(x->f, FAKE_NODES) != 1 || fake_api_streams(x->f, FAKE_PODS) != 1) {
        if (now_ms() > end)
            fail_msg("the streams of a relist did not settle");
        sleep_ms(2);
    }
}

static void test_cache_online_relist_has_no_empty_window(void **state)
{
    struct fx *x = *state;
    struct reader r = {0};
    struct ext_cache_stats st;
    pthread_t t;
    char name[32];

    x->cfg.list_page_limit = 7; /* several pages per LIST: a long relist */
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "n%02d", i);
        fake_api_add(x->f, FAKE_NODES, node_obj(name, "4", "8Gi"));
    }
    for (int i = 0; i < 100; i++) {
        char node[32];

        snprintf(name, sizeof(name), "p%03d", i);
        snprintf(node, sizeof(node), "n%02d", i % 20);
        fake_api_add(x->f, FAKE_PODS, pod_obj(name, node, "100m", "Running"));
    }
    start(x, 0, 30000);
    wait_counts(x->c, 20, 100);
    r.c = x->c;
    assert_int_equal(pthread_create(&t, NULL, reader_main, &r), 0);
    sleep_ms(20); /* the reader is running before the first relist */
    for (int round = 0; round < 3; round++) {
        size_t from = fake_api_request_count(x->f);

        /* Objects the watch never reported: only a relist shows them. */
        snprintf(name, sizeof(name), "extra%d", round);
        fake_api_add(x->f, FAKE_PODS, pod_obj(name, "n00", "100m", "Running"));
        fake_api_add(x->f, FAKE_NODES, node_obj(name, "4", "8Gi"));
        if (round == 1) {
            fake_push_error_410(x->f, FAKE_PODS);
            fake_api_fail_watch(x->f, FAKE_NODES, 410, 1);
            fake_push_end(x->f, FAKE_NODES);
        } else {
            fake_push_error_410(x->f, FAKE_PODS);
            fake_push_error_410(x->f, FAKE_NODES);
        }
        wait_counts(x->c, 21 + (size_t)round, 101 + (size_t)round);
        wait_rewatched(x, from);
    }
    atomic_store(&r.stop, true);
    pthread_join(t, NULL);
    assert_true(r.acquired > 0);
    assert_int_equal(r.nulls, 0);
    assert_true(r.min_nodes >= 20); /* never an empty or partial table */
    assert_true(r.min_pods >= 100);
    assert_false(r.version_went_back);
    ext_cache_stats(x->c, &st);
    assert_true(st.relists >= 8);
}

/* A pod bound before the watch showed it (created while the watch was down) counts with the
 * requests the last filter request carried (ext_cache_note_pod), not with zero: the node is
 * not under-counted. Then the watch confirms it and it counts once. */
static void test_cache_online_assume_unseen_pod_uses_noted_requests(void **state)
{
    struct fx *x = *state;
    struct ext_snapshot *s;
    struct ext_pod pod;
    bool known = false;

    fake_api_add(x->f, FAKE_NODES, node_obj("n0", "4", "8Gi"));
    start(x, 50, 30000);
    wait_counts(x->c, 1, 0);
    memset(&pod, 0, sizeof(pod));
    pod.uid = "uid-ghost";
    pod.priority = 7;
    pod.req.cpu_milli = 1500;
    pod.req.mem_bytes = 1 << 20;
    ext_cache_note_pod(x->c, &pod);
    assert_int_equal(ext_cache_assume(x->c, "default", "ghost", "uid-ghost", "n0", &known, NULL),
                     0);
    assert_true(known);
    s = ext_snapshot_acquire(x->c);
    lt_assert_near(lt_cluster_alloc(s->cluster, 0).cpu, 1500, 0);
    assert_int_equal(ext_snapshot_find_pod(s, "uid-ghost")->priority, 7);
    ext_snapshot_release(s);
    /* Never noted: zero requests, and the caller is told. */
    assert_int_equal(ext_cache_assume(x->c, "default", "other", "uid-other", "n0", &known, NULL),
                     0);
    assert_false(known);
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj("ghost", "n0", "1500m", "Running"));
    wait_snap(x->c, has_pod, "uid-ghost", "ghost");
    for (int64_t end = now_ms() + WAIT_MS;; sleep_ms(2)) {
        bool done;

        s = ext_snapshot_acquire(x->c);
        lt_assert_near(lt_cluster_alloc(s->cluster, 0).cpu, 1500, 0);
        done = !ext_snapshot_find_pod(s, "uid-ghost")->assumed;
        ext_snapshot_release(s);
        if (done)
            break;
        if (now_ms() > end)
            fail_msg("the watch never confirmed the pod");
    }
}

static void test_cache_online_assume_confirmed_once(void **state)
{
    struct fx *x = *state;
    struct ext_snapshot *s;
    const struct ext_snap_pod *p;
    bool known = false;
    int64_t end;

    fake_api_add(x->f, FAKE_NODES, node_obj("n0", "4", "8Gi"));
    fake_api_add(x->f, FAKE_PODS, pod_obj("run", "n0", "1", "Running"));
    fake_api_add(x->f, FAKE_PODS, pod_obj("new", "", "2", "Pending"));
    start(x, 50, 30000);
    wait_counts(x->c, 1, 1);
    assert_int_equal(ext_cache_assume(x->c, "default", "new", "uid-new", "n0", &known, NULL), 0);
    assert_true(known);
    s = ext_snapshot_acquire(x->c); /* no waiting: the assume published it */
    assert_int_equal(s->n_pods, 2);
    p = ext_snapshot_find_pod(s, "uid-new");
    assert_true(p->assumed);
    lt_assert_near(p->req.cpu, 2000, 0);
    lt_assert_near(lt_cluster_alloc(s->cluster, 0).cpu, 3000, 0);
    ext_snapshot_release(s);
    /* The watch confirms: the pod counts once, as a bound pod. Every snapshot on the way
     * counts it exactly once. */
    fake_push_event(x->f, FAKE_PODS, "MODIFIED", pod_obj("new", "n0", "2", "Running"));
    end = now_ms() + WAIT_MS;
    for (;;) {
        bool done;

        s = ext_snapshot_acquire(x->c);
        assert_int_equal(s->n_pods, 2);
        lt_assert_near(lt_cluster_alloc(s->cluster, 0).cpu, 3000, 0);
        done = !ext_snapshot_find_pod(s, "uid-new")->assumed;
        ext_snapshot_release(s);
        if (done)
            break;
        if (now_ms() > end)
            fail_msg("the watch never confirmed the assumed pod");
        sleep_ms(2);
    }
    /* Assuming it again now changes nothing. */
    assert_int_equal(ext_cache_assume(x->c, "default", "new", "uid-new", "n0", &known, NULL), 0);
    s = ext_snapshot_acquire(x->c);
    assert_int_equal(s->n_pods, 2);
    assert_false(ext_snapshot_find_pod(s, "uid-new")->assumed);
    ext_snapshot_release(s);
}

static void test_cache_online_assume_expires(void **state)
{
    struct fx *x = *state;
    struct ext_cache_stats st;
    bool known = true;
    int64_t t0;

    fake_api_add(x->f, FAKE_NODES, node_obj("n0", "4", "8Gi"));
    start(x, 10, 300);
    wait_counts(x->c, 1, 0);
    t0 = now_ms();
    assert_int_equal(ext_cache_assume(x->c, "default", "lost", "uid-lost", "n0", &known, NULL), 0);
    assert_false(known);
    ext_cache_stats(x->c, &st);
    assert_int_equal(st.assumed, 1);
    wait_snap(x->c, lacks_pod, "uid-lost", "the assumed pod expired");
    assert_true(now_ms() - t0 >= 300);
    ext_cache_stats(x->c, &st);
    assert_int_equal(st.assumed, 0);
    /* A pod deleted before the watch showed it bound is dropped at once too. */
    fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj("gone", "", "1", "Pending"));
    wait_snap(x->c, lacks_pod, "uid-gone", "(sync)");
    sleep_ms(50);
    assert_int_equal(ext_cache_assume(x->c, "default", "gone", "uid-gone", "n0", &known, NULL), 0);
    assert_true(known);
    fake_push_event(x->f, FAKE_PODS, "DELETED", pod_obj("gone", "", "1", "Pending"));
    wait_snap(x->c, lacks_pod, "uid-gone", "the deleted assumed pod dropped");
    assert_true(now_ms() - t0 < 5000);
}

/* Readers acquire and release in a loop while events stream and a binder assumes. */
struct binder {
    struct ext_cache *c;
    int n;
    int failures;
};

static void *binder_main(void *arg)
{
    struct binder *b = arg;
    char name[32], uid[40];
    bool known;

    for (int i = 0; i < b->n; i++) {
        snprintf(name, sizeof(name), "bound%d", i);
        snprintf(uid, sizeof(uid), "uid-%s", name);
        if (ext_cache_assume(b->c, "default", name, uid, "n1", &known, NULL) < 0)
            b->failures++;
        sleep_ms(1);
    }
    return NULL;
}

static bool settled(const struct ext_snapshot *s, const void *arg)
{
    (void)arg;
    for (size_t i = 0; i < s->n_pods; i++)
        if (s->pods[i].assumed)
            return false;
    return lt_cluster_size(s->cluster) == 2 && s->n_pods == 200 + 50;
}

static void test_cache_online_concurrent_readers(void **state)
{
    struct fx *x = *state;
    struct reader r[4];
    struct binder b = {0};
    pthread_t t[4], bt;
    char name[32];

    memset(r, 0, sizeof(r));
    fake_api_add(x->f, FAKE_NODES, node_obj("n0", "64", "64Gi"));
    fake_api_add(x->f, FAKE_NODES, node_obj("n1", "64", "64Gi"));
    start(x, 5, 30000);
    wait_counts(x->c, 2, 0);
    for (int i = 0; i < 4; i++) {
        r[i].c = x->c;
        assert_int_equal(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
    }
    b.c = x->c;
    b.n = 50;
    assert_int_equal(pthread_create(&bt, NULL, binder_main, &b), 0);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj(name, "n0", "10m", "Running"));
        if (i % 3 == 2) {
            snprintf(name, sizeof(name), "p%d", i - 1);
            fake_push_event(x->f, FAKE_PODS, "DELETED", pod_obj(name, "n0", "10m", "Running"));
        }
        if (i % 50 == 49)
            fake_push_error_410(x->f, FAKE_PODS);
    }
    for (int i = 0; i < 50; i++) { /* the binder's pods, as the watch reports them */
        snprintf(name, sizeof(name), "bound%d", i);
        fake_push_event(x->f, FAKE_PODS, "ADDED", pod_obj(name, "n1", "10m", "Running"));
    }
    pthread_join(bt, NULL);
    assert_int_equal(b.failures, 0);
    /* The fake server queues events instead of replaying them from a resourceVersion, so an
     * event pushed while a relist is under way may go to the abandoned stream. A last relist
     * once the streams settled lists the store, which has every change. */
    sleep_ms(60);
    while (fake_api_streams(x->f, FAKE_PODS) != 1)
        sleep_ms(2);
    fake_push_error_410(x->f, FAKE_PODS);
    wait_snap(x->c, settled, NULL, "250 pods, none assumed");
    for (int i = 0; i < 4; i++) {
        atomic_store(&r[i].stop, true);
        pthread_join(t[i], NULL);
        assert_true(r[i].acquired > 0);
        assert_false(r[i].version_went_back);
        assert_int_equal(r[i].nulls, 0);
    }
    {
        struct ext_snapshot *s = ext_snapshot_acquire(x->c);

        check_snapshot(s);
        for (size_t i = 0; i < s->n_pods; i++)
            assert_false(s->pods[i].assumed); /* every bind confirmed by the watch */
        /* The 50 bound pods count once each: 10m apiece. */
        lt_assert_near(lt_cluster_alloc(s->cluster, lt_cluster_find(s->cluster, "n1")).cpu, 500, 0);
        ext_snapshot_release(s);
    }
}

/* ---- timing ------------------------------------------------------------------------------- */

/* Writes a cluster file of n_nodes nodes and n_pods running pods spread round-robin over
 * them, plus one pending pod ("pod-pending"), to path. */
static void write_big(const char *path, int n_nodes, int n_pods)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "{\"nodes\":{\"items\":[");
    for (int i = 0; i < n_nodes; i++)
        fprintf(f,
                "%s{\"metadata\":{\"name\":\"node-%05d\"},\"status\":{\"allocatable\":{\"cpu\":"
                "\"%d\",\"memory\":\"%dGi\",\"ephemeral-storage\":\"100Gi\",\"pods\":\"110\"}}}",
                i ? "," : "", i, 16 + (i % 4) * 16, 64 + (i % 4) * 64);
    fprintf(f, "]},\"pods\":{\"items\":[");
    for (int i = 0; i < n_pods; i++)
        fprintf(f,
                "%s{\"metadata\":{\"name\":\"pod-%06d\",\"namespace\":\"ns%d\",\"uid\":"
                "\"0b6c1a2e-%08d-4d1f-9a57-c4d2b8e1f00d\",\"creationTimestamp\":"
                "\"2024-05-01T10:00:00Z\"},\"spec\":{\"nodeName\":\"node-%05d\",\"priority\":%d,"
                "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%dm\","
                "\"memory\":\"%dMi\"}}}]},\"status\":{\"phase\":\"Running\","
                "\"startTime\":\"2024-05-01T10:00:01Z\"}}",
                i ? "," : "", i, i % 50, i, i % n_nodes, i % 3 * 1000, 50 + i % 400, 64 + i % 1000);
    fprintf(f, ",{\"metadata\":{\"name\":\"pod-pending\",\"namespace\":\"ns0\",\"uid\":"
               "\"uid-pending\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{"
               "\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}");
    fprintf(f, "]}}\n");
    assert_int_equal(fclose(f), 0);
}

/* Load = parse + decode + the first rebuild; assume = record + a full rebuild + publish. */
static void test_cache_rebuild_timing(void **state)
{
    bool full = getenv("LOTUS_CACHE_BENCH") != NULL;
    int n_nodes = full ? 5000 : 500, n_pods = full ? 150000 : 15000, reps = full ? 10 : 3;
    char path[] = "/tmp/test_cache_big.XXXXXX";
    struct ext_cache *c = cache_new(0, 30000);
    struct ext_snapshot *s;
    struct lt_err err;
    double t0, t_load, sum = 0, worst = 0, best = 1e9;
    bool known;
    int fd;

    (void)state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_big(path, n_nodes, n_pods);
    lt_err_init(&err, NULL);
    t0 = now_s();
    if (ext_cache_load_file(c, path, &err) < 0)
        fail_msg("%s", err.text);
    t_load = now_s() - t0;
    unlink(path);
    for (int i = 0; i < reps; i++) {
        double t;

        t0 = now_s();
        assert_int_equal(
            ext_cache_assume(c, "ns0", "pod-pending", "uid-pending", "node-00000", &known, NULL),
            0);
        t = now_s() - t0;
        sum += t;
        worst = t > worst ? t : worst;
        best = t < best ? t : best;
    }
    s = ext_snapshot_acquire(c);
    assert_int_equal(lt_cluster_size(s->cluster), (size_t)n_nodes);
    assert_int_equal(s->n_pods, (size_t)n_pods + 1);
    if (!full)
        check_snapshot(s);
    ext_snapshot_release(s);
    printf("rebuild: %d nodes, %d pods: load %.0f ms (parse+decode+first build); "
           "rebuild (assume) mean %.1f ms, min %.1f ms, max %.1f ms over %d\n",
           n_nodes, n_pods, t_load * 1e3, sum / reps * 1e3, best * 1e3, worst * 1e3, reps);
    ext_cache_free(c);
}

/* ---- the feed's health: notes, probe, age ------------------------------------------------- */

/* What the cache reported through cfg.notify, collected under a lock. */
struct notes {
    pthread_mutex_t lock;
    int n[4]; /* per ext_feed_kind */
    char last[4][LT_ERR_TEXT];
};

static void collect(void *arg, const struct ext_feed_note *n)
{
    struct notes *k = arg;

    pthread_mutex_lock(&k->lock);
    k->n[n->kind]++;
    snprintf(k->last[n->kind], sizeof(k->last[0]), "%s", n->err ? n->err->text : "");
    pthread_mutex_unlock(&k->lock);
}

static int notes_of(struct notes *k, enum ext_feed_kind kind, char *last, size_t cap)
{
    int n;

    pthread_mutex_lock(&k->lock);
    n = k->n[kind];
    if (last != NULL)
        snprintf(last, cap, "%s", k->last[kind]);
    pthread_mutex_unlock(&k->lock);
    return n;
}

static void wait_note(struct notes *k, enum ext_feed_kind kind, const char *needle)
{
    int64_t end = now_ms() + WAIT_MS;
    char last[LT_ERR_TEXT];

    while (!(notes_of(k, kind, last, sizeof(last)) > 0 && strstr(last, needle) != NULL)) {
        if (now_ms() > end)
            fail_msg("no feed note %d containing '%s' after %d ms (last: '%s')", (int)kind, needle,
                     WAIT_MS, last);
        sleep_ms(5);
    }
}

static void start_probed(struct fx *x, struct notes *k, int64_t probe_ms)
{
    struct ext_cache_config cfg = {0};
    struct lt_err err;

    lt_err_init(&err, NULL);
    x->kc = kube_client_new(&x->cfg, &err);
    if (x->kc == NULL)
        fail_msg("kube_client_new: %s", err.text);
    cfg.rebuild_ms = 0;
    cfg.assume_ttl_ms = 60000;
    cfg.probe_interval_ms = probe_ms;
    cfg.notify = collect;
    cfg.notify_arg = k;
    x->c = ext_cache_new(&cfg, &err);
    if (x->c == NULL || ext_cache_start(x->c, x->kc, &err) < 0)
        fail_msg("cache: %s", err.text);
}

/* An API server that refuses the token: the watches' failures and the probe's are reported
 * (they were silent), the feed age grows from the start (it read 0 before any data), and once
 * the token is right again the probe says so and the age falls back. */
static void test_cache_online_feed_failures_are_reported(void **state)
{
    struct fx *x = *state;
    struct notes k = {.lock = PTHREAD_MUTEX_INITIALIZER};
    struct ext_cache_stats st;

    fake_api_add(x->f, FAKE_NODES, node_obj("n1", "4", "8Gi"));
    fake_api_set_token(x->f, "not-ours");
    start_probed(x, &k, 50);
    wait_note(&k, EXT_FEED_WATCH_ERROR, "HTTP 401");
    wait_note(&k, EXT_FEED_PROBE_FAILED, "HTTP 401");
    sleep_ms(300);
    ext_cache_stats(x->c, &st);
    assert_false(st.synced);
    assert_true(st.feed_age_ms >= 300);
    assert_true(st.probe_failures >= 2);
    fake_api_set_token(x->f, NULL);
    wait_counts(x->c, 1, 0);
    wait_note(&k, EXT_FEED_PROBE_OK, "");
    sleep_ms(200); /* a few probes while both watches stream */
    ext_cache_stats(x->c, &st);
    assert_true(st.synced);
    assert_int_equal(st.probe_failures, 0);
    assert_true(st.feed_age_ms < 200);
    ext_cache_free(x->c);
    x->c = NULL;
    pthread_mutex_destroy(&k.lock);
}

/* A watched object lotus cannot decode is reported with the reason, not dropped silently. */
static void test_cache_online_undecodable_object_is_reported(void **state)
{
    struct fx *x = *state;
    struct notes k = {.lock = PTHREAD_MUTEX_INITIALIZER};

    start_probed(x, &k, 0);
    wait_counts(x->c, 0, 0);
    fake_push_event(x->f, FAKE_NODES, "ADDED", node_obj("bad", "lots", "8Gi"));
    fake_push_event(x->f, FAKE_NODES, "ADDED", node_obj("good", "4", "8Gi"));
    wait_counts(x->c, 1, 0);
    wait_note(&k, EXT_FEED_UNDECODABLE, "cpu");
    assert_int_equal(notes_of(&k, EXT_FEED_UNDECODABLE, NULL, 0), 1);
    ext_cache_free(x->c);
    x->c = NULL;
    pthread_mutex_destroy(&k.lock);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_offline_list),
        cmocka_unit_test(test_cache_offline_split_form),
        cmocka_unit_test(test_cache_offline_errors_name_file_and_path),
        cmocka_unit_test(test_cache_offline_bad_reload_keeps_state),
        cmocka_unit_test(test_cache_offline_assume),
        cmocka_unit_test(test_cache_snapshot_outlives_cache),
        cmocka_unit_test(test_cache_bad_config),
        T(test_cache_online_sync_and_events),
        T(test_cache_online_relist_has_no_empty_window),
        T(test_cache_online_assume_confirmed_once),
        T(test_cache_online_assume_expires),
        T(test_cache_online_concurrent_readers),
        cmocka_unit_test(test_cache_rebuild_timing),
        T(test_cache_online_feed_failures_are_reported),
        T(test_cache_online_assume_unseen_pod_uses_noted_requests),
        T(test_cache_online_undecodable_object_is_reported),
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
