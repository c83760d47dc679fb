/* test_extender_concurrency.c -- lotus-extender online under many parallel clients while the
 * API server streams node and pod events into its cache.
 *
 * usage: test_extender_concurrency LOTUS_EXTENDER [THREADS [REQUESTS]]   (default 16 x 500)
 *
 * Starts the in-process fake API server (tests/fake_apiserver.h) with 100 nodes and 1,000
 * bound pods, starts the binary online against it (--server) on 127.0.0.1, waits for /readyz,
 * then runs THREADS client threads of REQUESTS requests each, every thread on its own
 * keep-alive connection (one reused curl handle), cycling through filter and prioritize in the
 * NodeNames mode and in the full-Nodes mode, and preempt (MetaVictims). Meanwhile the main
 * thread streams events: nodes added, modified and deleted, pods added (bound), finished and
 * deleted, bookmarks, and every so often an ERROR 410 (the cache relists) or a dropped stream
 * (the watch reconnects).
 *
 * Asserts, for every answer: HTTP 200; valid JSON of the verb's shape; filter: Error "", the
 * answer in the mode of the request, every input node exactly once among the kept nodes,
 * FailedNodes and FailedAndUnresolvableNodes and no other node; prioritize: one HostPriority
 * per input node, in input order, an integer Score in 0..10; preempt: only input nodes, each
 * with at least one victim UID. After the run: the process is up (/healthz), its counters
 * show every request ok and the relists and watch restarts the events caused, a node added
 * after the storm reaches the cache (the event stream was still being applied), and SIGTERM
 * gives exit 0 (under ASan also: no leak, no error report).
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* usleep, kill */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "ext_proc.h"
#include "fake_apiserver.h"

#define N_NODES      100
#define PODS_PER     10
#define N_NAMES      120 /* names asked about: the 100 nodes, the dynamic ones, unknown ones */
#define N_FULL       20  /* Node objects per full-Nodes request */
#define N_CANDIDATES 8   /* preempt candidates */

static const char *bin;
static char logpath[128];
static struct ep_srv srv;
static atomic_int clients_done;

/* ------------------------------------------------------------------------------------------
 * Objects
 */

static json_t *node_obj(const char *name, int cpu_m)
{
    char cpu[32];

    snprintf(cpu, sizeof(cpu), "%dm", cpu_m);
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{}, s:{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}}",
                     "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid", name,
                     "spec", "status", "capacity", "cpu", cpu, "memory", "16Gi", "pods", "110",
                     "allocatable", "cpu", cpu, "memory", "16Gi", "pods", "110");
}

static json_t *pod_obj(const char *name, const char *node, int cpu_m, int priority,
                       const char *phase)
{
    char cpu[32], uid[96];

    snprintf(cpu, sizeof(cpu), "%dm", cpu_m);
    snprintf(uid, sizeof(uid), "uid-%s", name);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:[{s:s, s:{s:{s:s, s:s}}}]}, "
                     "s:{s:s, s:s}}",
                     "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                     "default", "uid", uid, "spec", "nodeName", node, "priority", priority,
                     "containers", "name", "c", "resources", "requests", "cpu", cpu, "memory",
                     "512Mi", "status", "phase", phase, "startTime", "2024-03-01T10:00:00Z");
}

static void node_name(int i, char *out, size_t cap)
{
    if (i < N_NODES)
        snprintf(out, cap, "node-%03d", i);
    else if (i < N_NODES + 10)
        snprintf(out, cap, "dyn-%d", i - N_NODES);
    else
        snprintf(out, cap, "ghost-%d", i);
}

/* ------------------------------------------------------------------------------------------
 * The requests (built once, shared read-only by the clients)
 */

#define POD_WEB                                                                                    \
    "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"uid-web\"},\"spec\":{"    \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1500m\","              \
    "\"memory\":\"1Gi\"}}}]}}"
#define POD_CRITICAL                                                                               \
    "{\"metadata\":{\"name\":\"crit\",\"namespace\":\"default\",\"uid\":\"uid-crit\"},\"spec\":{"  \
    "\"priority\":1000000,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"   \
    "\"3500m\"}}}]}}"

enum verb { V_FILTER, V_PRIORITIZE, V_PREEMPT };

struct req {
    enum verb verb;
    bool names_mode;
    const char *path;
    char *body;
    size_t n; /* input nodes */
    char names[N_NAMES][32];
};

static struct req reqs[5];

static void build_requests(void)
{
    char *names = calloc(1, N_NAMES * 40), *items = calloc(1, N_FULL * 400),
         *meta = calloc(1, N_CANDIDATES * 200);
    size_t nl = 0, il = 0, ml = 0;

    for (int i = 0; i < N_NAMES; i++) {
        char nm[32];

        node_name(i, nm, sizeof(nm));
        nl += (size_t)sprintf(names + nl, "%s\"%s\"", i ? "," : "", nm);
        for (int r = 0; r < 2; r++)
            snprintf(reqs[r].names[i], 32, "%s", nm);
    }
    /* Full Nodes: every 6th name, known, dynamic and unknown alike. */
    for (int i = 0, k = 0; k < N_FULL; i += 6, k++) {
        char nm[32], *t;
        json_t *n;

        node_name(i, nm, sizeof(nm));
        n = node_obj(nm, 4000);
        t = json_dumps(n, JSON_COMPACT);
        il += (size_t)sprintf(items + il, "%s%s", k ? "," : "", t);
        free(t);
        json_decref(n);
        for (int r = 2; r < 4; r++)
            snprintf(reqs[r].names[k], 32, "%s", nm);
    }
    for (int i = 0; i < N_CANDIDATES; i++) {
        ml += (size_t)sprintf(meta + ml,
                              "%s\"node-%03d\":{\"Pods\":[{\"UID\":\"uid-p-%03d-0\"}],"
                              "\"NumPDBViolations\":0}",
                              i ? "," : "", i * 7, i * 7);
        snprintf(reqs[4].names[i], 32, "node-%03d", i * 7);
    }
    for (int r = 0; r < 5; r++) {
        size_t cap = 256 + nl + il + ml + sizeof(POD_WEB) + sizeof(POD_CRITICAL);

        reqs[r].body = malloc(cap);
        reqs[r].verb = r == 4 ? V_PREEMPT : (r % 2 ? V_PRIORITIZE : V_FILTER);
        reqs[r].path = r == 4 ? "/lotus/preempt" : r % 2 ? "/lotus/prioritize" : "/lotus/filter";
        reqs[r].names_mode = r < 2 || r == 4;
        reqs[r].n = r < 2 ? N_NAMES : r < 4 ? N_FULL : N_CANDIDATES;
        if (r < 2)
            snprintf(reqs[r].body, cap, "{\"Pod\":" POD_WEB ",\"Nodes\":null,\"NodeNames\":[%s]}",
                     names);
        else if (r < 4)
            snprintf(reqs[r].body, cap,
                     "{\"Pod\":" POD_WEB ",\"Nodes\":{\"metadata\":{},\"items\":[%s]},"
                     "\"NodeNames\":null}",
                     items);
        else
            snprintf(reqs[r].body, cap,
                     "{\"Pod\":" POD_CRITICAL ",\"NodeNameToVictims\":null,"
                     "\"NodeNameToMetaVictims\":{%s}}",
                     meta);
    }
    free(names);
    free(items);
    free(meta);
}

/* ------------------------------------------------------------------------------------------
 * Checking an answer; returns NULL or what is wrong (static text or into why).
 */

static int input_index(const struct req *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return (int)i;
    return -1;
}

static const char *check_filter(const struct req *r, json_t *o, char *why, size_t cap)
{
    unsigned char seen[N_NAMES] = {0};
    json_t *names = json_object_get(o, "NodeNames"), *nodes = json_object_get(o, "Nodes"), *v;
    static const char *const maps[] = {"FailedNodes", "FailedAndUnresolvableNodes"};
    const char *k;
    size_t i;

    if (!json_is_object(o) || !json_is_string(json_object_get(o, "Error")) ||
        strcmp(ep_jstr(json_object_get(o, "Error")), "") != 0)
        return "not an ExtenderFilterResult with an empty Error";
    if (r->names_mode ? !(json_is_array(names) && json_is_null(nodes))
                      : !(json_is_null(names) && json_is_array(json_object_get(nodes, "items"))))
        return "not answered in the mode of the request";
    json_array_foreach(r->names_mode ? names : json_object_get(nodes, "items"), i, v)
    {
        const char *nm = r->names_mode
                             ? ep_jstr(v)
                             : ep_jstr(json_object_get(json_object_get(v, "metadata"), "name"));
        int x = input_index(r, nm);

        if (x < 0 || seen[x]++) {
            snprintf(why, cap, "kept node '%s' not in the input or twice", nm);
            return why;
        }
    }
    for (int m = 0; m < 2; m++) {
        json_t *map = json_object_get(o, maps[m]);

        if (!json_is_object(map))
            return "a failed-nodes map is not an object";
        json_object_foreach(map, k, v)
        {
            int x = input_index(r, k);

            if (x < 0 || seen[x]++ || !json_is_string(v) || ep_jstr(v)[0] == '\0') {
                snprintf(why, cap, "failed node '%s' not in the input, twice, or without reason",
                         k);
                return why;
            }
        }
    }
    for (i = 0; i < r->n; i++)
        if (!seen[i]) {
            snprintf(why, cap, "input node '%s' neither kept nor failed", r->names[i]);
            return why;
        }
    return NULL;
}

static const char *check_prioritize(const struct req *r, json_t *o)
{
    size_t i;
    json_t *hp;

    if (!json_is_array(o) || json_array_size(o) != r->n)
        return "not one HostPriority per input node";
    json_array_foreach(o, i, hp)
    {
        json_t *s = json_object_get(hp, "Score");

        if (strcmp(ep_jstr(json_object_get(hp, "Host")), r->names[i]) != 0 || !json_is_integer(s) ||
            json_integer_value(s) < 0 || json_integer_value(s) > 10 || json_object_size(hp) != 2)
            return "a HostPriority out of order or with a Score outside 0..10";
    }
    return NULL;
}

static const char *check_preempt(const struct req *r, json_t *o)
{
    static const char no_uid[] = "a victim without a UID";
    json_t *m = json_object_get(o, "NodeNameToMetaVictims"), *v;
    const char *k;

    if (!json_is_object(o) || !json_is_object(m))
        return "no NodeNameToMetaVictims object";
    json_object_foreach(m, k, v)
    {
        json_t *pods = json_object_get(v, "Pods"), *p;
        size_t i;

        if (input_index(r, k) < 0 || !json_is_array(pods) || json_array_size(pods) == 0 ||
            !json_is_integer(json_object_get(v, "NumPDBViolations")))
            return "a node not among the candidates, or without victims";
        json_array_foreach(pods, i, p)
        {
            if (ep_jstr(json_object_get(p, "UID"))[0] == '\0')
                return no_uid;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Clients
 */

struct client {
    pthread_t th;
    int id, requests;
    char error[512];
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    char url[5][96];

    for (int r = 0; r < 5; r++)
        snprintf(url[r], sizeof(url[r]), "http://127.0.0.1:%d%s", srv.port, reqs[r].path);
    for (int i = 0; i < c->requests && c->error[0] == '\0'; i++) {
        /* preempt one time in ten; the rest cycle through the four filter/prioritize kinds */
        const struct req *r = &reqs[i % 10 == 9 ? 4 : (i + c->id) % 4];
        struct ep_body b = {NULL, 0};
        long status = 0;
        CURLcode rc;
        json_error_t je;
        json_t *o;
        const char *bad = NULL;
        char why[256];

        ep_curl_setup(h, url[r - reqs], &b, 20000);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
        rc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || status != 200) {
            snprintf(c->error, sizeof(c->error), "client %d request %d %s: %s, status %ld: %.200s",
                     c->id, i, r->path, curl_easy_strerror(rc), status, b.p ? b.p : "");
            free(b.p);
            break;
        }
        o = json_loadb(b.p ? b.p : "", b.len, 0, &je);
        if (o == NULL)
            bad = "invalid JSON";
        else if (r->verb == V_FILTER)
            bad = check_filter(r, o, why, sizeof(why));
        else if (r->verb == V_PRIORITIZE)
            bad = check_prioritize(r, o);
        else
            bad = check_preempt(r, o);
        if (bad)
            snprintf(c->error, sizeof(c->error), "client %d request %d %s (%s mode): %s: %.300s",
                     c->id, i, r->path, r->names_mode ? "NodeNames" : "full Nodes", bad,
                     b.p ? b.p : "");
        json_decref(o);
        free(b.p);
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    atomic_fetch_add(&clients_done, 1);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * The event storm
 */

struct storm {
    long node_events, pod_events, relists, drops;
};

static void storm_step(struct fake_api *f, long k, struct storm *s)
{
    char name[64], node[32];
    int dyn = (int)((k / 16) % 10); /* added at k % 16 == 0, deleted at k % 16 == 8 */

    switch (k % 8) {
    case 0: /* a dynamic node comes or goes */
        snprintf(name, sizeof(name), "dyn-%d", dyn);
        fake_push_event(f, FAKE_NODES, (k / 8) % 2 ? "DELETED" : "ADDED",
                        node_obj(name, 2000 + 500 * dyn));
        s->node_events++;
        break;
    case 1: /* a static node's allocatable changes */
        node_name((int)(k % N_NODES), node, sizeof(node));
        fake_push_event(f, FAKE_NODES, "MODIFIED", node_obj(node, 3000 + (int)(k % 3) * 1000));
        s->node_events++;
        break;
    case 2:
    case 3: /* a pod is bound */
        snprintf(name, sizeof(name), "storm-%ld", k);
        node_name((int)(k % N_NODES), node, sizeof(node));
        fake_push_event(f, FAKE_PODS, "ADDED", pod_obj(name, node, 200, 0, "Running"));
        s->pod_events++;
        break;
    case 4: /* it finishes */
        snprintf(name, sizeof(name), "storm-%ld", k - 2);
        node_name((int)((k - 2) % N_NODES), node, sizeof(node));
        fake_push_event(f, FAKE_PODS, "MODIFIED", pod_obj(name, node, 200, 0, "Succeeded"));
        s->pod_events++;
        break;
    case 5: /* and is deleted */
        snprintf(name, sizeof(name), "storm-%ld", k - 3);
        node_name((int)((k - 3) % N_NODES), node, sizeof(node));
        fake_push_event(f, FAKE_PODS, "DELETED", pod_obj(name, node, 200, 0, "Succeeded"));
        s->pod_events++;
        break;
    case 6:
        fake_push_bookmark(f, k % 16 == 6 ? FAKE_NODES : FAKE_PODS);
        break;
    default:
        if (k % 400 == 7) {
            fake_push_error_410(f, FAKE_PODS); /* the cache relists */
            s->relists++;
        } else if (k % 400 == 207) {
            fake_push_drop(f, FAKE_NODES); /* the watch reconnects */
            s->drops++;
        }
        break;
    }
}

/* ------------------------------------------------------------------------------------------
 * HTTP helpers for the probes
 */

static long get(const char *path, struct ep_body *b)
{
    return ep_http(srv.port, path, NULL, b, 10000);
}

static long post(const char *path, const char *body, struct ep_body *b)
{
    return ep_http(srv.port, path, body, b, 10000);
}

int main(int argc, char **argv)
{
    int n_threads = argc > 2 ? atoi(argv[2]) : 16, per = argc > 3 ? atoi(argv[3]) : 500, st;
    struct fake_api *f;
    struct client *cl;
    struct storm storm = {0};
    struct ep_body b = {NULL, 0};
    long k = 0, expect;

    if (argc < 2 || n_threads < 1 || per < 1) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER [THREADS [REQUESTS]]\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    ep_at_die(ep_srv_cleanup);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    snprintf(logpath, sizeof(logpath), "/tmp/test_extender_concurrency.%d.log", (int)getpid());

    f = fake_api_start();
    if (f == NULL)
        ep_die("cannot start the fake API server");
    for (int i = 0; i < N_NODES; i++) {
        char nm[32], pn[64];

        node_name(i, nm, sizeof(nm));
        fake_api_add(f, FAKE_NODES, node_obj(nm, 4000));
        for (int p = 0; p < PODS_PER; p++) {
            snprintf(pn, sizeof(pn), "p-%03d-%d", i, p);
            fake_api_add(f, FAKE_PODS, pod_obj(pn, nm, 100 + 50 * p, p % 3 ? 0 : 500, "Running"));
        }
    }
    {
        const char *args[] = {
            bin,         "--server", fake_api_url(f),      "--listen", "127.0.0.1:0",
            "--threads", "4",        "--rebuild-interval", "5ms",      "--shutdown-timeout",
            "10s",       NULL};

        ep_srv_start(&srv, "extender", logpath, args, NULL, 2000);
    }
    ep_wait_ready(srv.port, 2000, "extender");
    ep_ok("online extender synced with %d nodes and %d pods", N_NODES, N_NODES * PODS_PER);

    build_requests();
    cl = calloc((size_t)n_threads, sizeof(*cl));
    for (int i = 0; i < n_threads; i++) {
        cl[i].id = i;
        cl[i].requests = per;
        if (pthread_create(&cl[i].th, NULL, client_main, &cl[i]) != 0)
            ep_die("pthread_create");
    }
    /* The storm runs until every client is done (a failing client stops early). */
    while (atomic_load(&clients_done) < n_threads) {
        storm_step(f, k++, &storm);
        usleep(200);
        if (k % 1000 == 0 && waitpid(srv.pid, &st, WNOHANG) == srv.pid) {
            srv.pid = 0;
            ep_die("the extender died during the storm (status %d)", st);
        }
    }
    for (int i = 0; i < n_threads; i++)
        pthread_join(cl[i].th, NULL);
    for (int i = 0; i < n_threads; i++)
        if (cl[i].error[0])
            ep_die("%s", cl[i].error);
    ep_ok("%d clients x %d requests: every answer 200 and of the right shape, while %ld node "
          "events, %ld pod events, %ld forced relists and %ld dropped streams were applied",
          n_threads, per, storm.node_events, storm.pod_events, storm.relists, storm.drops);

    if (get("/healthz", &b) != 200)
        ep_die("/healthz after the storm");
    free(b.p);
    b = (struct ep_body){NULL, 0};
    ep_ok("the process is up and healthy");

    /* A node added after the storm is seen: the event stream still flows. */
    fake_push_event(f, FAKE_NODES, "ADDED", node_obj("after-storm", 64000));
    for (int i = 0;; i++, usleep(10000)) {
        long s = post("/lotus/filter", "{\"Pod\":" POD_WEB ",\"NodeNames\":[\"after-storm\"]}", &b);
        bool kept = s == 200 && b.p && strstr(b.p, "\"NodeNames\":[\"after-storm\"]") != NULL;

        free(b.p);
        b = (struct ep_body){NULL, 0};
        if (kept)
            break;
        if (i == 1000)
            ep_die("a node added after the storm never reached the cache");
    }
    ep_ok("a node added after the storm reaches the cache");

    if (get("/metrics", &b) != 200 || b.p == NULL)
        ep_die("/metrics");
    expect = 0;
    for (int i = 0; i < n_threads * per; i++)
        expect += (i % per) % 10 != 9 && ((i % per) + i / per) % 4 % 2 == 0;
    if (ep_sample(b.p, "lotus_extender_requests_total{verb=\"filter\",outcome=\"ok\"} ") < expect ||
        ep_sample(b.p, "lotus_extender_requests_total{verb=\"filter\",outcome=\"error\"} ") > 0 ||
        ep_sample(b.p, "lotus_extender_requests_total{verb=\"prioritize\",outcome=\"error\"} ") >
            0 ||
        ep_sample(b.p, "lotus_extender_requests_total{verb=\"filter\",outcome=\"bad_request\"} ") >
            0 ||
        ep_sample(b.p, "lotus_extender_relists_total ") < 1 + (storm.relists > 0) ||
        ep_sample(b.p, "lotus_extender_watch_restarts_total ") < (storm.drops > 0))
        ep_die("/metrics: expected %ld ok filters, no errors, %ld+ relists, watch restarts:\n%s",
               expect, 1 + storm.relists, b.p);
    free(b.p);
    ep_ok("metrics: every filter ok, no error outcome, the relists and watch restarts counted");

    ep_srv_stop(&srv, 30000);
    ep_ok("exit 0 after SIGTERM with the watches running");

    fake_api_stop(f);
    for (int r = 0; r < 5; r++)
        free(reqs[r].body);
    free(cl);
    curl_global_cleanup();
    unlink(logpath);
    printf("test_extender_concurrency: all checks passed\n");
    return 0;
}
