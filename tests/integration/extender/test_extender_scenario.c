/* test_extender_scenario.c -- the Kubernetes extender integration scenario, replayed against
 * three lotus-extender processes by a client that behaves as kube-scheduler's HTTPExtender.
 *
 * usage: test_extender_scenario LOTUS_EXTENDER
 *
 * The scenario (spec ../shared/spec/extender-protocol.md section 5.2, from
 * kubernetes/kubernetes test/integration/scheduler/extender/extender_test.go): five nodes
 * machine1..5 (pods capacity 32); three extenders
 *   ext1: filter keeps {1,2,3}; prioritize machine2=10 else 1;       weight 3, full Nodes;
 *   ext2: filter keeps {2,3,5}; prioritize machine3=10 else 1;       weight 4, full Nodes,
 *         the binder, managedResources foo.com/bar (ignoredByScheduler);
 *   ext3: filter keeps {1,2,3}; prioritize machine2=50 else 5;       weight 10, nodeCacheCapable;
 * a pod with limits foo.com/bar: 1, expected on machine2: 5340 against 930 for machine3.
 *
 * What is reproduced, exactly:
 *  - the scheduler side, as spec section 2 describes it: IsInterested (managedResources looks at
 *    requests and limits of every container), sequential filter calls where each extender sees
 *    the nodes the previous one kept, full Node objects for ext1/ext2 and NodeNames for ext3,
 *    the checks HTTPExtender makes on an answer (status 200, empty Error, NodeNames a subset of
 *    the input, Nodes.items used when NodeNames is null), prioritize only with >= 2 feasible
 *    nodes, total += score x weight x 10 with no clamp, the maximum wins, then bind through the
 *    single binder (ext2) -- all over keep-alive connections (one reused curl handle each) with
 *    kube-scheduler's 5 s default httpTimeout;
 *  - the filter outcome {1,2,3} -> {2,3} -> {2,3}, and the placement on machine2, with lotus'
 *    own answers. lotus filters by resource fit against its cluster view, so each process gets
 *    its own view (an offline cluster file for ext1 and ext3, the fake API server for ext2,
 *    online so that its bind reaches an API server): the nodes an upstream extender drops are,
 *    in that process' view, too full (FailedNodes) or too small (FailedAndUnresolvableNodes)
 *    for the pod's 1 cpu / 1Gi request. The pod therefore also requests cpu and memory; the
 *    upstream pod requests nothing and only limits foo.com/bar, which lotus ignores;
 *  - the priorities: lotus ranks with bestfit1, so in ext1's and ext3's views machine2 is the
 *    tighter fit and in ext2's view machine3 is;
 *  - the arithmetic itself against the upstream fake extenders' fixed scores: 5340 and 930.
 *
 * What cannot be reproduced: the upstream scores. Those extenders answer fixed tables (1 for
 * the loser, 50 and 5 from ext3's inner prioritizer weight of 5, outside 0..10); lotus maps
 * its policy's ranks onto 0..10 with the best node at 10 and the worst feasible at 0, so over
 * the two feasible nodes it answers 10 and 0, never 1, 50 or 5. With lotus' answers the totals
 * are machine2 = 10x3x10 + 0x4x10 + 10x10x10 = 1300 and machine3 = 0x3x10 + 10x4x10 + 0x10x10
 * = 400: the same winner, other numbers. Random tie-breaking is not exercised (no tie).
 *
 * Output: "ok - <name>" per check; the first failure prints what differed, the server logs,
 * and exits 1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "ext_proc.h"
#include "fake_apiserver.h"

#define N_MACHINES 5
#define N_EXT      3
#define POD_NAME   "extender-test-pod"
#define POD_UID    "uid-extender-test-pod"

/* One extender as the KubeSchedulerConfiguration would register it, plus its process. */
struct ext {
    const char *name;
    int64_t weight;
    bool node_cache_capable;
    bool binder;
    const char *managed; /* managedResources (one name) or NULL */
    /* Its cluster view: per machine, allocatable cpu in millicores and cpu used by a bound
     * pod (0 = none). 1 cpu / 1Gi must fit on the nodes the upstream extender keeps. */
    int alloc_m[N_MACHINES];
    int used_m[N_MACHINES];
    struct ep_srv srv; /* its process */
    CURL *curl;        /* reused: one keep-alive connection, as Go's transport */
};

static struct ext exts[N_EXT] = {
    {"ext1",
     3,
     false,
     false,
     NULL,
     {4000, 4000, 4000, 4000, 500},
     {0, 2000, 0, 3500, 0},
     {NULL, 0, 0, ""},
     NULL},
    {"ext2",
     4,
     false,
     true,
     "foo.com/bar",
     {4000, 4000, 4000, 500, 4000},
     {3500, 0, 2000, 0, 0},
     {NULL, 0, 0, ""},
     NULL},
    {"ext3",
     10,
     true,
     false,
     NULL,
     {4000, 4000, 4000, 4000, 500},
     {0, 2000, 0, 3500, 0},
     {NULL, 0, 0, ""},
     NULL},
};

static const char *bin;
static char dir[64] = "/tmp/test_extender_scenario.XXXXXX";

/* ------------------------------------------------------------------------------------------
 * The cluster views
 */

static const char *machine(int i)
{
    static const char *const m[N_MACHINES] = {"machine1", "machine2", "machine3", "machine4",
                                              "machine5"};
    return m[i];
}

/* A Node as kube-scheduler's informer holds it (pods capacity 32, as upstream). */
static json_t *node_obj(int i, int alloc_m)
{
    char cpu[32];

    snprintf(cpu, sizeof(cpu), "%dm", alloc_m);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{}, s:{s:{s:s, s:s, s:s}, s:{s:s, s:s, "
                     "s:s}, s:[{s:s, s:s}]}}",
                     "apiVersion", "v1", "kind", "Node", "metadata", "name", machine(i), "uid",
                     machine(i), "labels", "kubernetes.io/hostname", machine(i), "spec", "status",
                     "capacity", "cpu", cpu, "memory", "8Gi", "pods", "32", "allocatable", "cpu",
                     cpu, "memory", "8Gi", "pods", "32", "conditions", "type", "Ready", "status",
                     "True");
}

static json_t *bound_pod(int i, int used_m)
{
    char name[64], uid[64], cpu[32];

    snprintf(name, sizeof(name), "used-%s", machine(i));
    snprintf(uid, sizeof(uid), "uid-used-%s", machine(i));
    snprintf(cpu, sizeof(cpu), "%dm", used_m);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:{s:{s:s, s:s}}}]}, "
                     "s:{s:s}}",
                     "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                     "default", "uid", uid, "spec", "nodeName", machine(i), "containers", "name",
                     "c", "resources", "requests", "cpu", cpu, "memory", "1Gi", "status", "phase",
                     "Running");
}

/* The pod being scheduled: upstream's limits foo.com/bar: 1, plus a request lotus checks. */
static json_t *the_pod(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s, s:{s:{s:s, s:s}, "
                     "s:{s:s}}}]}, s:{s:s}}",
                     "apiVersion", "v1", "kind", "Pod", "metadata", "name", POD_NAME, "namespace",
                     "default", "uid", POD_UID, "spec", "containers", "name", "container", "image",
                     "registry.k8s.io/pause:3.9", "resources", "requests", "cpu", "1", "memory",
                     "1Gi", "limits", "foo.com/bar", "1", "status", "phase", "Pending");
}

/* Writes ext's view as `kubectl get nodes,pods -o json` would print it. */
static void write_view(const struct ext *e, const char *path)
{
    json_t *items = json_array(), *root;

    for (int i = 0; i < N_MACHINES; i++)
        json_array_append_new(items, node_obj(i, e->alloc_m[i]));
    for (int i = 0; i < N_MACHINES; i++)
        if (e->used_m[i] > 0)
            json_array_append_new(items, bound_pod(i, e->used_m[i]));
    root = json_pack("{s:s, s:s, s:{}, s:o}", "apiVersion", "v1", "kind", "List", "metadata",
                     "items", items);
    if (json_dump_file(root, path, JSON_COMPACT) != 0)
        ep_die("cannot write %s", path);
    json_decref(root);
}

/* ------------------------------------------------------------------------------------------
 * The processes
 */

static void start(struct ext *e, const char *source_flag, const char *source)
{
    const char *argv[] = {bin,    "--listen",           "127.0.0.1:0", "--threads",
                          "2",    "--policy",           "bestfit1",    source_flag,
                          source, "--shutdown-timeout", "5s",          NULL};
    char log[256];

    snprintf(log, sizeof(log), "%s/%s.log", dir, e->name);
    ep_srv_start(&e->srv, e->name, log, argv, NULL, 1000);
    e->curl = curl_easy_init();
}

static void stop(struct ext *e)
{
    curl_easy_cleanup(e->curl);
    ep_srv_stop(&e->srv, 15000);
}

/* ------------------------------------------------------------------------------------------
 * HTTPExtender.send(): POST PREFIX/verb, any status but 200 is an error, JSON decode.
 */

static json_t *send_verb(struct ext *e, const char *verb, json_t *args)
{
    char url[128], *text = json_dumps(args, JSON_COMPACT);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    struct ep_body b = {NULL, 0};
    long status = 0;
    CURLcode rc;
    json_t *out;
    json_error_t je;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/lotus/%s", e->srv.port, verb);
    curl_easy_reset(e->curl);
    ep_curl_setup(e->curl, url, &b, 5000); /* DefaultExtenderTimeout */
    curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, text);
    rc = curl_easy_perform(e->curl);
    curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    free(text);
    if (rc != CURLE_OK)
        ep_die("%s %s: %s", e->name, verb, curl_easy_strerror(rc));
    if (status != 200)
        ep_die("failed %s with extender at URL %s, code %ld", verb, url, status);
    out = json_loads(b.p ? b.p : "", 0, &je);
    if (out == NULL)
        ep_die("%s %s: undecodable answer (%s): %s", e->name, verb, je.text, b.p ? b.p : "");
    free(b.p);
    return out;
}

/* ------------------------------------------------------------------------------------------
 * The scheduler's side
 */

/* IsInterested: no managedResources, or one of them in any container's requests or limits. */
static bool interested(const struct ext *e, const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    static const char *const lists[] = {"containers", "initContainers"};

    if (e->managed == NULL)
        return true;
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;

        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            json_t *r = json_object_get(c, "resources");

            if (json_object_get(json_object_get(r, "requests"), e->managed) ||
                json_object_get(json_object_get(r, "limits"), e->managed))
                return true;
        }
    }
    return false;
}

/* ExtenderArgs in e's mode over the nodes (full objects, in order). */
static json_t *extender_args(const struct ext *e, const json_t *pod, json_t *nodes)
{
    if (e->node_cache_capable) {
        json_t *names = json_array();
        size_t i;
        json_t *n;

        json_array_foreach(nodes, i, n) json_array_append_new(
            names, json_string(ep_jstr(json_object_get(json_object_get(n, "metadata"), "name"))));
        return json_pack("{s:O, s:n, s:o}", "Pod", pod, "Nodes", "NodeNames", names);
    }
    return json_pack("{s:O, s:{s:{}, s:O}, s:n}", "Pod", pod, "Nodes", "metadata", "items", nodes,
                     "NodeNames");
}

static const char *node_name(const json_t *n)
{
    return ep_jstr(json_object_get(json_object_get(n, "metadata"), "name"));
}

static json_t *find_node(json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(nodes, i, n) if (strcmp(node_name(n), name) == 0) return n;
    return NULL;
}

/* HTTPExtender.Filter: returns the feasible nodes (new reference); checks the failed maps. */
static json_t *filter(struct ext *e, const json_t *pod, json_t *nodes, const char *expect_failed,
                      const char *expect_unresolvable)
{
    json_t *args = extender_args(e, pod, nodes), *r = send_verb(e, "filter", args), *out;
    json_t *names = json_object_get(r, "NodeNames"), *items;
    const char *k;
    json_t *v;
    char failed[256] = "", unres[256] = "";

    json_decref(args);
    if (strcmp(ep_jstr(json_object_get(r, "Error")), "") != 0)
        ep_die("%s filter: Error %s", e->name, ep_jstr(json_object_get(r, "Error")));
    if (e->node_cache_capable && !json_is_null(names)) {
        size_t i;
        json_t *nm;

        if (!json_is_null(json_object_get(r, "Nodes")))
            ep_die("%s filter: NodeNames request answered with Nodes too", e->name);
        out = json_array();
        json_array_foreach(names, i, nm)
        {
            json_t *n = find_node(nodes, ep_jstr(nm));

            if (n == NULL)
                ep_die("extender %s claims a filtered node %s which is not found in the input node "
                       "list",
                       e->name, ep_jstr(nm));
            json_array_append(out, n);
        }
    } else if (json_is_object(items = json_object_get(r, "Nodes"))) {
        if (!json_is_null(names))
            ep_die("%s filter: full Nodes request answered with NodeNames", e->name);
        out = json_deep_copy(json_object_get(items, "items"));
        if (!json_is_array(out))
            ep_die("%s filter: Nodes.items is not an array", e->name);
    } else {
        ep_die("%s filter: both Nodes and NodeNames null (zero feasible nodes)", e->name);
    }
    json_object_foreach(json_object_get(r, "FailedNodes"), k, v) snprintf(
        failed + strlen(failed), sizeof(failed) - strlen(failed), "%s%s", failed[0] ? "," : "", k);
    json_object_foreach(json_object_get(r, "FailedAndUnresolvableNodes"), k, v) snprintf(
        unres + strlen(unres), sizeof(unres) - strlen(unres), "%s%s", unres[0] ? "," : "", k);
    if (strcmp(failed, expect_failed) != 0 || strcmp(unres, expect_unresolvable) != 0)
        ep_die("%s filter: FailedNodes {%s} FailedAndUnresolvableNodes {%s}, expected {%s} {%s}; "
               "answer %s",
               e->name, failed, unres, expect_failed, expect_unresolvable,
               json_dumps(r, JSON_COMPACT));
    json_decref(r);
    return out;
}

/* HTTPExtender.Prioritize: adds score x weight x (MaxNodeScore / MaxExtenderPriority) per
 * node, unclamped; also returns e's raw scores per node in scores[]. */
static void prioritize(struct ext *e, const json_t *pod, json_t *nodes, int64_t *total,
                       int64_t *scores)
{
    json_t *args = extender_args(e, pod, nodes), *r = send_verb(e, "prioritize", args);
    size_t i;
    json_t *hp;

    json_decref(args);
    if (!json_is_array(r) || json_array_size(r) != json_array_size(nodes))
        ep_die("%s prioritize: not one HostPriority per node: %s", e->name,
               json_dumps(r, JSON_COMPACT));
    json_array_foreach(r, i, hp)
    {
        json_t *s = json_object_get(hp, "Score");

        if (strcmp(ep_jstr(json_object_get(hp, "Host")), node_name(json_array_get(nodes, i))) !=
                0 ||
            !json_is_integer(s))
            ep_die("%s prioritize: entry %zu: %s", e->name, i, json_dumps(hp, JSON_COMPACT));
        scores[i] = json_integer_value(s);
        total[i] += scores[i] * e->weight * (100 / 10);
    }
    json_decref(r);
}

/* The host with the largest total (no tie here: a tie would be broken at random). */
static size_t best(const int64_t *total, size_t n)
{
    size_t b = 0;

    for (size_t i = 1; i < n; i++)
        if (total[i] > total[b])
            b = i;
    for (size_t i = 0; i < n; i++)
        if (i != b && total[i] == total[b])
            ep_die("tie between nodes %zu and %zu at %lld", b, i, (long long)total[b]);
    return b;
}

/* The arithmetic with upstream's fake extenders' fixed answers over {machine2, machine3}. */
static void check_upstream_arithmetic(void)
{
    /* ext1: machine2Prioritizer (10, else 1); ext2: machine3Prioritizer; ext3: machine2
     * prioritizer with inner weight 5 (50, else 5). Columns: machine2, machine3. */
    static const int64_t score[N_EXT][2] = {{10, 1}, {1, 10}, {50, 5}};
    int64_t total[2] = {0, 0};

    for (int x = 0; x < N_EXT; x++)
        for (int i = 0; i < 2; i++)
            total[i] += score[x][i] * exts[x].weight * 10;
    if (total[0] != 5340 || total[1] != 930 || best(total, 2) != 0)
        ep_die("upstream arithmetic: machine2 %lld machine3 %lld", (long long)total[0],
               (long long)total[1]);
    ep_ok("the scheduler's arithmetic on upstream's fixed scores: machine2 5340, machine3 930");
}

int main(int argc, char **argv)
{
    struct fake_api *api;
    json_t *pod, *nodes, *feasible;
    char path[128];
    int64_t total[N_MACHINES] = {0}, scores[N_EXT][N_MACHINES];
    size_t winner;

    if (argc != 2) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    ep_at_die(ep_srv_cleanup);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (mkdtemp(dir) == NULL)
        ep_die("mkdtemp: %s", strerror(errno));
    check_upstream_arithmetic();

    /* ext1, ext3: offline views; ext2: online against the fake API server, the pending pod in
     * it, so that the binding has a pod to bind. */
    for (int x = 0; x < N_EXT; x += 2) {
        snprintf(path, sizeof(path), "%s/%s.json", dir, exts[x].name);
        write_view(&exts[x], path);
        start(&exts[x], "--cluster-file", path);
    }
    api = fake_api_start();
    if (api == NULL)
        ep_die("cannot start the fake API server");
    for (int i = 0; i < N_MACHINES; i++) {
        fake_api_add(api, FAKE_NODES, node_obj(i, exts[1].alloc_m[i]));
        if (exts[1].used_m[i] > 0)
            fake_api_add(api, FAKE_PODS, bound_pod(i, exts[1].used_m[i]));
    }
    fake_api_add(api, FAKE_PODS, the_pod());
    start(&exts[1], "--server", fake_api_url(api));
    ep_wait_ready(exts[1].srv.port, 1000, "ext2");
    ep_ok("three lotus-extender processes serving (ext2 online, synced)");

    /* The scheduler's view: five nodes; the in-tree filters keep them all. */
    pod = the_pod();
    nodes = json_array();
    for (int i = 0; i < N_MACHINES; i++)
        json_array_append_new(nodes, node_obj(i, 4000));
    for (int x = 0; x < N_EXT; x++)
        if (!interested(&exts[x], pod))
            ep_die("%s is not interested in the pod (managedResources %s)", exts[x].name,
                   exts[x].managed);
    ep_ok("IsInterested: every extender (ext2's managed foo.com/bar is in the pod's limits)");

    /* findNodesThatPassExtenders: sequential, each on the previous one's output. */
    feasible = filter(&exts[0], pod, nodes, "machine4", "machine5");
    ep_ok("ext1 filter (full Nodes): machine4 too full, machine5 too small");
    json_decref(nodes);
    nodes = feasible;
    feasible = filter(&exts[1], pod, nodes, "machine1", "");
    ep_ok("ext2 filter (full Nodes, online): machine1 too full");
    json_decref(nodes);
    nodes = feasible;
    feasible = filter(&exts[2], pod, nodes, "", "");
    json_decref(nodes);
    nodes = feasible;
    if (json_array_size(nodes) != 2 || strcmp(node_name(json_array_get(nodes, 0)), "machine2") ||
        strcmp(node_name(json_array_get(nodes, 1)), "machine3"))
        ep_die("feasible nodes after the three filters: %s", json_dumps(nodes, JSON_COMPACT));
    ep_ok("ext3 filter (NodeNames): feasible {machine2, machine3}, as upstream");

    /* prioritizeNodes: >= 2 feasible nodes, every interested extender (concurrently upstream;
     * the order does not change a sum). */
    for (int x = 0; x < N_EXT; x++)
        prioritize(&exts[x], pod, nodes, total, scores[x]);
    if (scores[0][0] != 10 || scores[0][1] != 0 || scores[1][0] != 0 || scores[1][1] != 10 ||
        scores[2][0] != 10 || scores[2][1] != 0)
        ep_die("lotus scores (machine2, machine3): ext1 %lld %lld, ext2 %lld %lld, ext3 %lld %lld",
               (long long)scores[0][0], (long long)scores[0][1], (long long)scores[1][0],
               (long long)scores[1][1], (long long)scores[2][0], (long long)scores[2][1]);
    ep_ok("prioritize: ext1 and ext3 (bestfit1) favour machine2 (10 vs 0), ext2 machine3");
    winner = best(total, json_array_size(nodes));
    if (strcmp(node_name(json_array_get(nodes, winner)), "machine2") != 0 || total[0] != 1300 ||
        total[1] != 400)
        ep_die("selected %s with totals machine2 %lld machine3 %lld (expected machine2, 1300 vs "
               "400)",
               node_name(json_array_get(nodes, winner)), (long long)total[0], (long long)total[1]);
    ep_ok("selected host machine2: 1300 against 400 for machine3 (upstream: 5340 against 930)");

    /* extendersBinding: the first interested binder, ext2. */
    {
        json_t *args = json_pack("{s:s, s:s, s:s, s:s}", "PodName", POD_NAME, "PodNamespace",
                                 "default", "PodUID", POD_UID, "Node", "machine2"),
               *r = send_verb(&exts[1], "bind", args);
        char node[64];

        if (strcmp(ep_jstr(json_object_get(r, "Error")), "") != 0)
            ep_die("ext2 bind: %s", ep_jstr(json_object_get(r, "Error")));
        if (!fake_api_pod_node(api, "default", POD_NAME, node, sizeof(node)) ||
            strcmp(node, "machine2") != 0)
            ep_die("the API server does not show the pod on machine2");
        json_decref(args);
        json_decref(r);
    }
    ep_ok("ext2 binds the pod: the API server has it on machine2");

    json_decref(nodes);
    json_decref(pod);
    for (int x = 0; x < N_EXT; x++)
        stop(&exts[x]);
    ep_ok("the three processes exit 0 after SIGTERM");
    fake_api_stop(api);
    curl_global_cleanup();
    for (int x = 0; x < N_EXT; x++) {
        snprintf(path, sizeof(path), "%s/%s.json", dir, exts[x].name);
        unlink(path);
    }
    rmdir(dir);
    printf("test_extender_scenario: all checks passed\n");
    return 0;
}
