/* test_extender.c -- lotus-extender end to end: the binary, offline, on loopback.
 *
 * usage: test_extender LOTUS_EXTENDER FIXTURES_DIR   (FIXTURES_DIR = tests/fixtures/extender)
 *
 * Starts the binary with --cluster-file cluster/small.json on 127.0.0.1 port 0 (the port is
 * read from its "serving" log line), then talks to it with libcurl (curl(1) is not among
 * .ci/deps.sh's packages) and, for what a well-behaved client never does (truncated bodies,
 * garbage, a request spread around SIGTERM), with raw sockets. Checks: every verb in both
 * nodeCacheCapable modes, bind offline (the pod assumed in the cache: the next filter and
 * prioritize see it), the pod limit, the probes, /metrics, /version, bad input answered for
 * that request alone while the server keeps serving, config errors, TLS with client
 * certificates, and a SIGTERM that lets an in-flight request finish and exits 0 (under ASan
 * also leak-free, since LeakSanitizer would change the exit status). Online mode runs against
 * the in-process fake API server (tests/fake_apiserver.h) serving the same cluster: readiness
 * after the sync, bind (200 and 409) and the bound pod counted by the next filter.
 *
 * Output: one "ok - <name>" line per check; the first failure prints what differed, the
 * server log, and exits 1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* usleep, kill */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "ext_proc.h"
#include "fake_apiserver.h"

static const char *bin, *fix;
static char cluster[1024], logpath[200];

/* The server the requests of http() go to. */
static struct ep_srv *current;

static void dump_log(const char *path)
{
    char title[320];

    snprintf(title, sizeof(title), "server log %s", path);
    ep_dump_log(path, title);
}

static void ok(const char *name)
{
    ep_ok("%s", name);
}

/* ------------------------------------------------------------------------------------------
 * Starting and stopping the binary
 */

static pid_t spawn(const char *const *args, const char *log)
{
    const char *argv[64];
    pid_t pid;
    size_t n = 0;
    int rc;

    argv[n++] = bin;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    rc = ep_spawn(argv, log, &pid);
    if (rc != 0)
        ep_die("cannot start %s: %s", bin, strerror(rc));
    return pid;
}

/* Starts the extender with the flags in extra (NULL-terminated), offline on the test cluster
 * unless extra starts with --server; the requests of http() then go to it. */
static void srv_start(struct ep_srv *s, const char *name, const char *const *extra)
{
    const char *argv[16] = {bin,   "--listen",       "127.0.0.1:0", "--threads",
                            "2",   "--max-body",     "4Mi",         "--shutdown-timeout",
                            "10s", "--conn-timeout", "5s"};
    size_t n = 11;
    char log[256];

    if (extra == NULL || strcmp(extra[0] ? extra[0] : "", "--server") != 0) {
        argv[n++] = "--cluster-file";
        argv[n++] = cluster;
    }
    argv[n] = NULL;
    snprintf(log, sizeof(log), "%s.%s", logpath, name);
    ep_srv_start(s, name, log, argv, extra, 1000);
    current = s;
}

static void srv_stop(struct ep_srv *s)
{
    ep_srv_stop(s, 15000);
    current = NULL;
}

/* ------------------------------------------------------------------------------------------
 * HTTP with libcurl
 */

struct resp {
    long status;
    char *body;
    size_t len;
    char allow[64];
};

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct resp *r = arg;

    if (size * n > 7 && strncasecmp(p, "Allow: ", 7) == 0)
        snprintf(r->allow, sizeof(r->allow), "%.*s", (int)strcspn(p + 7, "\r\n"), p + 7);
    return size * n;
}

struct tls {
    const char *ca, *cert, *key;
};

/* One request; returns false if no HTTP answer arrived (connection closed, refused). */
static bool http_try(const char *method, int port, const char *path, const char *body, size_t len,
                     const struct tls *tls, const char *header, struct resp *r)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char url[4096], ca[1024], cert[1024], key[1024];
    struct ep_body b = {NULL, 0};
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "%s://127.0.0.1:%d%s", tls ? "https" : "http", port, path);
    ep_curl_setup(c, url, &b, 20000);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    h = curl_slist_append(h, "Content-Type: application/json");
    if (header)
        h = curl_slist_append(h, header);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    if (tls) {
        snprintf(ca, sizeof(ca), "%s/tls/%s", fix, tls->ca);
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
        if (tls->cert) {
            snprintf(cert, sizeof(cert), "%s/tls/%s", fix, tls->cert);
            snprintf(key, sizeof(key), "%s/tls/%s", fix, tls->key);
            curl_easy_setopt(c, CURLOPT_SSLCERT, cert);
            curl_easy_setopt(c, CURLOPT_SSLKEY, key);
        }
    }
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->body = b.p;
    r->len = b.len;
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return rc == CURLE_OK;
}

static void http(const char *method, const char *path, const char *body, struct resp *r)
{
    if (!http_try(method, current->port, path, body, body ? strlen(body) : 0, NULL, NULL, r))
        ep_die("%s %s: no answer", method, path);
}

static void expect(const char *what, const struct resp *r, long status, const char *body)
{
    if (r->status != status)
        ep_die("%s: status %ld, expected %ld; body %s", what, r->status, status,
               r->body ? r->body : "(none)");
    if (body && (r->body == NULL || strcmp(r->body, body) != 0))
        ep_die("%s: body\n  %s\nexpected\n  %s", what, r->body ? r->body : "(none)", body);
    ok(what);
}

static void expect_contains(const char *what, const struct resp *r, long status, const char *needle)
{
    if (r->status != status || r->body == NULL || strstr(r->body, needle) == NULL)
        ep_die("%s: status %ld body %s; expected %ld containing '%s'", what, r->status,
               r->body ? r->body : "(none)", status, needle);
    ok(what);
}

static void healthy(const char *after)
{
    struct resp r;
    char what[256];

    http("GET", "/healthz", NULL, &r);
    snprintf(what, sizeof(what), "still serving after %s", after);
    expect(what, &r, 200, "ok\n");
    free(r.body);
}

/* ------------------------------------------------------------------------------------------
 * Raw sockets
 */

static void send_all(int fd, const char *p, size_t n)
{
    if (!ep_send_all(fd, p, n))
        ep_die("send: %s", strerror(errno));
}

/* Reads until EOF into buf (NUL-terminated). */
static size_t read_all(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    ssize_t n;

    while (len + 1 < cap && (n = recv(fd, buf + len, cap - 1 - len, 0)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    return len;
}

/* ------------------------------------------------------------------------------------------
 * Requests
 */

#define POD_3500                                                                                   \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"pre\"},\"spec\":{"          \
    "\"priority\":100,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"       \
    "\"3500m\",\"memory\":\"1Gi\"}}}]}}"
#define POD_100                                                                                    \
    "{\"metadata\":{\"name\":\"q\",\"namespace\":\"default\",\"uid\":\"q\"},\"spec\":{"            \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}"
#define NAMES "[\"node-a\",\"node-b\",\"node-c\",\"node-d\",\"ghost\"]"
#define NODE_C                                                                                     \
    "{\"metadata\":{\"name\":\"node-c\"},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":"   \
    "\"16Gi\"}}}"
#define NODE_D       "{\"metadata\":{\"name\":\"node-d\"},\"status\":{\"allocatable\":{\"cpu\":\"2\"}}}"
#define NODE_X       "{\"metadata\":{\"name\":\"ghost\"},\"status\":{}}"
#define FILTER_NAMES "{\"Pod\":" POD_3500 ",\"Nodes\":null,\"NodeNames\":" NAMES "}"
#define FILTER_NAMES_ANSWER                                                                        \
    "{\"Nodes\":null,\"NodeNames\":[\"node-b\",\"node-c\"],\"FailedNodes\":{\"ghost\":\"unknown "  \
    "node\",\"node-a\":\"Insufficient cpu: requested 3500m, free 3300m\"},"                        \
    "\"FailedAndUnresolvableNodes\":{\"node-d\":\"Insufficient cpu: requested 3500m, capacity "    \
    "2000m\"},\"Error\":\"\"}"
#define TOO_LARGE_ANSWER "{\"Error\":\"request body over --max-body (4194304 bytes)\"}"
#define PREEMPT_ANSWER                                                                             \
    "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[{\"UID\":\"uid-web-1\"}],"                  \
    "\"NumPDBViolations\":0}}}"

static void check_probes(void)
{
    struct resp r;
    json_t *v;

    http("GET", "/healthz", NULL, &r);
    expect("GET /healthz", &r, 200, "ok\n");
    free(r.body);
    http("GET", "/readyz", NULL, &r);
    expect("GET /readyz (offline: synced at start)", &r, 200, "ok\n");
    free(r.body);
    http("GET", "/version", NULL, &r);
    v = json_loads(r.body ? r.body : "", 0, NULL);
    if (strcmp(ep_jstr(json_object_get(v, "name")), "lotus-extender") != 0 ||
        strcmp(ep_jstr(json_object_get(v, "policy")), "bestfit1") != 0)
        ep_die("GET /version: %s", r.body ? r.body : "(none)");
    json_decref(v);
    expect("GET /version", &r, 200, NULL);
    free(r.body);
}

static void check_filter(void)
{
    struct resp r;

    http("POST", "/lotus/filter", FILTER_NAMES, &r);
    expect("filter, NodeNames mode", &r, 200, FILTER_NAMES_ANSWER);
    free(r.body);
    http("POST", "/lotus/filter",
         "{\"Pod\":" POD_3500 ",\"NodeNames\":null,\"Nodes\":{\"metadata\":{},\"items\":[" NODE_C
         "," NODE_D "," NODE_X "]}}",
         &r);
    expect("filter, full Nodes mode (nodes echoed as sent)", &r, 200,
           "{\"Nodes\":{\"metadata\":{},\"items\":[" NODE_C "]},\"NodeNames\":null,"
           "\"FailedNodes\":{\"ghost\":\"unknown node\"},\"FailedAndUnresolvableNodes\":{"
           "\"node-d\":\"Insufficient cpu: requested 3500m, capacity 2000m\"},\"Error\":\"\"}");
    free(r.body);
}

/* A HostPriorityList over hosts[0..n-1] in order, integers in 0..10, the best at 10. */
static void check_priorities(const char *what, const struct resp *r, const char *const *hosts,
                             size_t n)
{
    json_t *a = json_loads(r->body ? r->body : "", 0, NULL);
    json_int_t best = -1;

    if (r->status != 200 || !json_is_array(a) || json_array_size(a) != n)
        ep_die("%s: status %ld body %s", what, r->status, r->body ? r->body : "(none)");
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(a, i), *s = json_object_get(e, "Score");

        if (strcmp(ep_jstr(json_object_get(e, "Host")), hosts[i]) != 0 || !json_is_integer(s) ||
            json_integer_value(s) < 0 || json_integer_value(s) > 10)
            ep_die("%s: entry %zu is wrong in %s", what, i, r->body);
        best = json_integer_value(s) > best ? json_integer_value(s) : best;
    }
    if (best != 10)
        ep_die("%s: no node got 10 in %s", what, r->body);
    json_decref(a);
    ok(what);
}

static void check_prioritize(void)
{
    static const char *const names[] = {"node-a", "node-b", "node-c", "node-d", "ghost"};
    static const char *const nodes[] = {"node-c", "node-d", "ghost"};
    struct resp r;

    http("POST", "/lotus/prioritize",
         "{\"Pod\":" POD_100 ",\"Nodes\":null,\"NodeNames\":" NAMES "}", &r);
    check_priorities("prioritize, NodeNames mode", &r, names, 5);
    if (strstr(r.body, "{\"Host\":\"ghost\",\"Score\":0}") == NULL)
        ep_die("prioritize: unknown node not 0: %s", r.body);
    free(r.body);
    http("POST", "/lotus/prioritize",
         "{\"Pod\":" POD_100 ",\"Nodes\":{\"items\":[" NODE_C "," NODE_D "," NODE_X "]}}", &r);
    check_priorities("prioritize, full Nodes mode", &r, nodes, 3);
    free(r.body);
}

static void check_preempt(void)
{
    struct resp r;

    http("POST", "/lotus/preempt",
         "{\"Pod\":" POD_3500 ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
         "\"node-a\":{\"Pods\":[{\"UID\":\"uid-web-1\"}],\"NumPDBViolations\":0},"
         "\"node-c\":{\"Pods\":[{\"UID\":\"uid-db-0\"}],\"NumPDBViolations\":0},"
         "\"node-d\":{\"Pods\":[{\"UID\":\"uid-logger\"}],\"NumPDBViolations\":0}}}",
         &r);
    expect("preempt, MetaVictims mode (sticky db-0 spared, node-d hopeless)", &r, 200,
           PREEMPT_ANSWER);
    free(r.body);
    http("POST", "/lotus/preempt",
         "{\"Pod\":" POD_3500 ",\"NodeNameToMetaVictims\":null,\"NodeNameToVictims\":{"
         "\"node-a\":{\"Pods\":[{\"metadata\":{\"name\":\"web-1\",\"uid\":\"uid-web-1\"}}],"
         "\"NumPDBViolations\":0}}}",
         &r);
    expect("preempt, full Pods mode", &r, 200, PREEMPT_ANSWER);
    free(r.body);
}

#define BIND_PENDING_1(node)                                                                       \
    "{\"PodName\":\"pending-1\",\"PodNamespace\":\"default\",\"PodUID\":\"uid-pending-1\","        \
    "\"Node\":\"" node "\"}"
#define FILTER_A "{\"Pod\":" POD_3500 ",\"NodeNames\":[\"node-a\"]}"
#define FILTER_A_FREE(free)                                                                        \
    "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{\"node-a\":\"Insufficient cpu: requested "  \
    "3500m, free " free "\"},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}"

static void check_bind(void)
{
    struct resp r;

    http("POST", "/lotus/bind", BIND_PENDING_1("ghost"), &r);
    expect("bind offline to a node the cache does not know: Error", &r, 200,
           "{\"Error\":\"node 'ghost' not found (offline: the cluster file has no such "
           "node)\"}");
    free(r.body);
    http("POST", "/lotus/bind", "{\"PodName\":\"p\",\"PodNamespace\":\"default\",\"Node\":\"n\"}",
         &r);
    expect("bind without PodUID", &r, 200,
           "{\"Error\":\"malformed ExtenderBindingArgs: missing field 'PodUID'\"}");
    free(r.body);
}

/* Offline, bind assumes the pod on its node in the cache, as online mode does after the API
 * server accepted the binding: pending-1 (1000m, 1Gi) bound to node-a takes 1000m of node-a's
 * 3300m free for every later filter and prioritize; binding it again is refused, as the API
 * server refuses a pod that is already assigned. On its own server: the main one's answers
 * stay those of the file. */
static void check_offline_bind(void)
{
    static const char *const names[] = {"node-a", "node-b", "node-c", "node-d", "ghost"};
    static const char prio[] = "{\"Pod\":" POD_100 ",\"NodeNames\":" NAMES "}";
    struct ep_srv s, *main_srv = current;
    struct resp r;
    char *before;

    srv_start(&s, "bind", NULL);
    http("POST", "/lotus/filter", FILTER_A, &r);
    expect("offline bind: node-a has 3300m free before", &r, 200, FILTER_A_FREE("3300m"));
    free(r.body);
    http("POST", "/lotus/prioritize", prio, &r);
    check_priorities("offline bind: prioritize before", &r, names, 5);
    before = r.body;
    http("POST", "/lotus/bind", BIND_PENDING_1("node-a"), &r);
    expect("offline bind: pending-1 to node-a succeeds", &r, 200, "{\"Error\":\"\"}");
    free(r.body);
    http("POST", "/lotus/filter", FILTER_A, &r);
    expect("offline bind: the next filter sees 1000m less free on node-a", &r, 200,
           FILTER_A_FREE("2300m"));
    free(r.body);
    http("POST", "/lotus/prioritize", prio, &r);
    check_priorities("offline bind: prioritize after", &r, names, 5);
    if (strcmp(before, r.body) == 0)
        ep_die("offline bind: prioritize did not change: %s", r.body);
    ok("offline bind: prioritize sees the bound pod");
    free(before);
    free(r.body);
    http("POST", "/lotus/bind", BIND_PENDING_1("node-b"), &r);
    expect("offline bind: a second bind of the pod is refused", &r, 200,
           "{\"Error\":\"pod default/pending-1 is already assigned to node 'node-a'\"}");
    free(r.body);
    http("POST", "/lotus/bind",
         "{\"PodName\":\"web-1\",\"PodNamespace\":\"default\",\"PodUID\":\"uid-web-1\","
         "\"Node\":\"node-b\"}",
         &r);
    expect("offline bind: a pod bound in the file is refused", &r, 200,
           "{\"Error\":\"pod default/web-1 is already assigned to node 'node-a'\"}");
    free(r.body);
    http("GET", "/metrics", NULL, &r);
    expect_contains("offline bind: /metrics counts the assumed pod", &r, 200,
                    "lotus_extender_assumed_pods 1\n");
    free(r.body);
    srv_stop(&s);
    current = main_srv;
}

/* Writes text to path; dies on failure. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        ep_die("cannot write %s: %s", path, strerror(errno));
}

/* A pod of the pod-limit cluster: bound to node, 100m cpu, started at HH:MM. */
#define LIMIT_POD(uid, node, hhmm)                                                                 \
    "{\"metadata\":{\"name\":\"" uid "\",\"namespace\":\"default\",\"uid\":\"" uid "\"},"          \
    "\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"resources\":{"          \
    "\"requests\":{\"cpu\":\"100m\"}}}]},\"status\":{\"phase\":\"Running\",\"startTime\":"         \
    "\"2024-05-01T" hhmm ":00Z\"}}"
#define LIMIT_NODE(name, pods)                                                                     \
    "{\"metadata\":{\"name\":\"" name "\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","            \
    "\"memory\":\"8Gi\",\"pods\":\"" pods "\"}}}"
/* A pod of priority 10 that requests nothing: only the pod count can stop it. */
#define POD_NOTHING                                                                                \
    "{\"metadata\":{\"name\":\"z\",\"namespace\":\"default\",\"uid\":\"z\"},\"spec\":{"            \
    "\"priority\":10,\"containers\":[{\"name\":\"c\"}]}}"

/* NodeResourcesFit's pod count (allocatable "pods"): lim-1 allows 2 pods and holds 2, lim-2
 * allows 3 and holds 1. A pod that requests nothing fails on lim-1 ("Too many pods", which
 * preemption can resolve) and passes on lim-2; prioritize gives lim-1 0; preempt evicts one
 * pod from lim-1 (mrs: l1-b, started last) instead of keeping kube-scheduler's proposal. */
static void check_pod_limit(void)
{
    char path[300], saved[sizeof(cluster)], text[4096];
    struct ep_srv s;
    struct resp r;

    snprintf(path, sizeof(path), "%s.limit.json", logpath);
    snprintf(text, sizeof(text), "{\"nodes\":{\"items\":[%s,%s]},\"pods\":{\"items\":[%s,%s,%s]}}",
             LIMIT_NODE("lim-1", "2"), LIMIT_NODE("lim-2", "3"),
             LIMIT_POD("l1-a", "lim-1", "10:00"), LIMIT_POD("l1-b", "lim-1", "10:05"),
             LIMIT_POD("l2-a", "lim-2", "10:00"));
    write_file(path, text);
    memcpy(saved, cluster, sizeof(saved));
    snprintf(cluster, sizeof(cluster), "%s", path);
    srv_start(&s, "limit", NULL);
    memcpy(cluster, saved, sizeof(saved));
    http("POST", "/lotus/filter", "{\"Pod\":" POD_NOTHING ",\"NodeNames\":[\"lim-1\",\"lim-2\"]}",
         &r);
    expect("pod limit: filter fails a full node, also for a pod that requests nothing", &r, 200,
           "{\"Nodes\":null,\"NodeNames\":[\"lim-2\"],\"FailedNodes\":{\"lim-1\":\"Too many "
           "pods (2/2 used)\"},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
    free(r.body);
    http("POST", "/lotus/prioritize",
         "{\"Pod\":" POD_NOTHING ",\"NodeNames\":[\"lim-1\",\"lim-2\"]}", &r);
    expect("pod limit: prioritize gives a full node 0", &r, 200,
           "[{\"Host\":\"lim-1\",\"Score\":0},{\"Host\":\"lim-2\",\"Score\":10}]");
    free(r.body);
    http("POST", "/lotus/preempt",
         "{\"Pod\":" POD_NOTHING ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
         "\"lim-1\":{\"Pods\":[{\"UID\":\"l1-a\"}],\"NumPDBViolations\":0}}}",
         &r);
    expect("pod limit: preempt frees a pod on a full node (mrs)", &r, 200,
           "{\"NodeNameToMetaVictims\":{\"lim-1\":{\"Pods\":[{\"UID\":\"l1-b\"}],"
           "\"NumPDBViolations\":0}}}");
    free(r.body);
    srv_stop(&s);
    unlink(path);
}

/* "NodeNames":["n000000",...] with n names. */
static char *names_body(size_t n)
{
    size_t cap = 64 + n * 12 + sizeof(POD_100);
    char *b = malloc(cap);
    size_t len;

    if (b == NULL)
        ep_die("out of memory");
    len = (size_t)snprintf(b, cap, "{\"Pod\":%s,\"NodeNames\":[", POD_100);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s\"n%07zu\"", i ? "," : "", i);
    snprintf(b + len, cap - len, "]}");
    return b;
}

static void check_bad_json(void)
{
    struct resp r;

    http("POST", "/lotus/filter", "{\"Pod\":", &r);
    expect_contains("filter, malformed JSON: 200 with Error", &r, 200,
                    "\"Error\":\"malformed ExtenderArgs: line 1, column 7");
    free(r.body);
    http("POST", "/lotus/filter", "{\"NodeNames\":[\"node-a\"]}", &r);
    expect_contains("filter, missing Pod: 200 with Error", &r, 200, "\"Error\":\"malformed");
    free(r.body);
    http("POST", "/lotus/filter", "{\"Pod\":" POD_100 ",\"NodeNames\":[\"node-a\",", &r);
    expect_contains("filter, truncated JSON: 200 with Error", &r, 200, "\"Error\":\"malformed");
    free(r.body);
    http("POST", "/lotus/prioritize", "{\"Pod\":[]}", &r);
    expect_contains("prioritize, malformed: 400 with Error", &r, 400, "\"Error\":\"malformed");
    free(r.body);
    http("POST", "/lotus/preempt", "nonsense", &r);
    expect_contains("preempt, malformed: 400 with Error", &r, 400, "\"Error\":\"malformed");
    free(r.body);
    http("POST", "/lotus/bind", "[1,2", &r);
    expect_contains("bind, malformed: 200 with Error", &r, 200, "\"Error\":\"malformed");
    free(r.body);
    healthy("malformed bodies");
}

static void check_http_errors(void)
{
    struct resp r;
    char *big;

    http("GET", "/lotus/filter", NULL, &r);
    if (strcmp(r.allow, "POST") != 0)
        ep_die("405 without 'Allow: POST' (got '%s')", r.allow);
    expect("GET on a verb: 405", &r, 405, NULL);
    free(r.body);
    http("POST", "/healthz", "x", &r);
    expect("POST /healthz: 405", &r, 405, NULL);
    free(r.body);
    http("GET", "/nope", NULL, &r);
    expect("unknown path: 404", &r, 404, NULL);
    free(r.body);
    http("POST", "/lotus/nope", "{}", &r);
    expect("unknown verb: 404", &r, 404, NULL);
    free(r.body);
    big = malloc(8 << 20);
    if (big == NULL)
        ep_die("out of memory");
    memset(big, ' ', 8 << 20);
    if (!http_try("POST", current->port, "/lotus/filter", big, 5 << 20, NULL,
                  "Expect: 100-continue", &r))
        ep_die("oversized body: no answer");
    expect("body over --max-body (Content-Length): 413", &r, 413, TOO_LARGE_ANSWER);
    free(r.body);
    /* Chunked: no Content-Length, so the limit trips while reading; the rest is read and
     * dropped, then answered as above. */
    if (!http_try("POST", current->port, "/lotus/filter", big, 8 << 20, NULL,
                  "Transfer-Encoding: chunked", &r))
        ep_die("chunked body of twice --max-body: no answer");
    expect("body of twice --max-body (chunked): 413", &r, 413, TOO_LARGE_ANSWER);
    free(r.body);
    free(big);
    healthy("oversized bodies");
}

/* A limit smaller than one read of the body (libcurl sends a small body as one chunk): a
 * chunked body one byte over it gets the same 413 as a Content-Length body. */
static void check_chunked_just_over(void)
{
    const char *args[] = {"--max-body", "1Ki", NULL};
    const char *answer = "{\"Error\":\"request body over --max-body (1024 bytes)\"}";
    char body[2048];
    struct ep_srv s;
    struct resp r;

    memset(body, ' ', sizeof(body));
    srv_start(&s, "small", args);
    if (!http_try("POST", s.port, "/lotus/filter", body, 1025, NULL, NULL, &r))
        ep_die("1,025-byte body (Content-Length) over 1Ki: no answer");
    expect("body one byte over --max-body 1Ki (Content-Length): 413", &r, 413, answer);
    free(r.body);
    if (!http_try("POST", s.port, "/lotus/filter", body, 1025, NULL, "Transfer-Encoding: chunked",
                  &r))
        ep_die("1,025-byte chunked body over --max-body 1Ki: no answer (empty reply)");
    expect("body one byte over --max-body 1Ki (chunked): the same 413", &r, 413, answer);
    free(r.body);
    if (!http_try("POST", s.port, "/lotus/filter", body, 2048, NULL, "Transfer-Encoding: chunked",
                  &r))
        ep_die("2,048-byte chunked body over --max-body 1Ki: no answer (empty reply)");
    expect("body of twice --max-body 1Ki (chunked): the same 413", &r, 413, answer);
    free(r.body);
    srv_stop(&s);
}

static void check_huge_lists(void)
{
    struct resp r;
    char *b = names_body(100001);
    json_t *o;

    http("POST", "/lotus/filter", b, &r);
    expect_contains("100,001 node names (over EXT_MAX_NODES): 200 with Error", &r, 200,
                    "\"Error\":\"malformed");
    free(r.body);
    free(b);
    b = names_body(20000);
    http("POST", "/lotus/filter", b, &r);
    o = json_loads(r.body ? r.body : "", 0, NULL);
    if (r.status != 200 || json_object_size(json_object_get(o, "FailedNodes")) != 20000)
        ep_die("20,000 unknown names: status %ld", r.status);
    json_decref(o);
    ok("20,000 node names answered");
    free(r.body);
    free(b);
    healthy("huge node lists");
}

static void check_raw_garbage(void)
{
    char buf[4096];
    int fd;

    fd = ep_dial(current->port);
    send_all(fd, "POST /lotus/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"Po", 66);
    close(fd);
    healthy("a body cut short by the client");
    fd = ep_dial(current->port);
    send_all(fd, "GARBAGE\r\n\r\n", 11);
    shutdown(fd, SHUT_WR);
    read_all(fd, buf, sizeof(buf));
    close(fd);
    healthy("a garbage request line");
    fd = ep_dial(current->port);
    send_all(fd, "POST /lotus/filter HTTP/1.1\r\nHost: x\r\n", 38);
    usleep(100000);
    close(fd);
    healthy("headers cut short");
}

static void check_metrics(void)
{
    struct resp r;

    http("GET", "/metrics", NULL, &r);
    if (r.status != 200 || r.body == NULL)
        ep_die("GET /metrics: %ld", r.status);
    if (ep_sample(r.body, "lotus_extender_requests_total{verb=\"filter\",outcome=\"ok\"} ") < 3 ||
        ep_sample(r.body,
                  "lotus_extender_requests_total{verb=\"filter\",outcome=\"bad_request\"} ") < 3 ||
        ep_sample(r.body, "lotus_extender_requests_total{verb=\"bind\",outcome=\"error\"} ") != 1 ||
        ep_sample(r.body, "lotus_extender_http_rejected_total{code=\"404\"} ") != 2 ||
        ep_sample(r.body, "lotus_extender_http_rejected_total{code=\"413\"} ") < 1 ||
        ep_sample(r.body, "lotus_extender_request_duration_seconds_count{verb=\"preempt\"} ") !=
            3 ||
        ep_sample(r.body, "lotus_extender_cache_synced ") != 1 ||
        ep_sample(r.body, "lotus_extender_nodes ") != 4)
        ep_die("GET /metrics: unexpected samples:\n%s", r.body);
    ok("GET /metrics counts requests, outcomes, rejections and the cache");
    free(r.body);
}

/* A filter request whose body straddles SIGTERM is answered; then the process exits 0. */
static void check_drain(void)
{
    static const char body[] = FILTER_NAMES;
    char head[256], buf[8192];
    size_t half = sizeof(body) / 2;
    int fd, st;

    snprintf(head, sizeof(head),
             "POST /lotus/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Connection: close\r\nContent-Length: %zu\r\n\r\n",
             sizeof(body) - 1);
    fd = ep_dial(current->port);
    if (fd < 0)
        ep_die("drain: cannot connect");
    send_all(fd, head, strlen(head));
    send_all(fd, body, half);
    usleep(300000);
    kill(current->pid, SIGTERM);
    usleep(300000);
    if (ep_wait_exit(current->pid, 10) != -1)
        ep_die("drain: the server exited with a request in flight");
    st = ep_dial(current->port);
    if (st >= 0)
        ep_die("drain: a new connection was accepted after SIGTERM");
    ok("SIGTERM: new connections are refused");
    send_all(fd, body + half, sizeof(body) - 1 - half);
    read_all(fd, buf, sizeof(buf));
    close(fd);
    if (strncmp(buf, "HTTP/1.1 200", 12) != 0 || strstr(buf, FILTER_NAMES_ANSWER) == NULL)
        ep_die("drain: in-flight request answered\n%s", buf);
    ok("SIGTERM: the in-flight request is answered");
    st = ep_wait_exit(current->pid, 15000);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        ep_die("drain: exit status %d, expected 0", st);
    ep_srv_forget(current);
    current = NULL;
    ok("SIGTERM: exit 0 after draining");
}

/* ------------------------------------------------------------------------------------------
 * Config errors and TLS
 */

static void check_config_error(const char *what, const char *const *args, int status,
                               const char *needle)
{
    char log[300], line[8192];
    pid_t pid;
    int st;
    bool found = false;
    FILE *f;

    snprintf(log, sizeof(log), "%s.config", logpath);
    pid = spawn(args, log);
    st = ep_wait_exit(pid, 10000);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != status)
        ep_die("%s: exit status %d, expected exit(%d)", what, st, status);
    f = fopen(log, "r");
    while (f && fgets(line, sizeof(line), f))
        found = found || strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    if (!found) {
        dump_log(log);
        ep_die("%s: no '%s' in the log", what, needle);
    }
    ok(what);
}

static void check_config(void)
{
    const char *bad_policy[] = {"--cluster-file", cluster, "--policy", "bestfit9", NULL};
    const char *bad_flag[] = {"--polcy=bestfit1", NULL};
    const char *bad_tls[] = {"--cluster-file", cluster, "--tls-key", "x.pem", NULL};
    const char *no_file[] = {"--cluster-file", "/nonexistent/cluster.json", NULL};
    const char *dir[] = {"--cluster-file", fix, NULL};
    const char *both[] = {"--cluster-file", cluster, "--server", "https://x:6443", NULL};
    char in_file[1100], want[1200];
    const char *not_dir[] = {"--cluster-file", in_file, NULL};

    check_config_error("--policy bestfit9: exit 2 listing the policies", bad_policy, 2,
                       "--policy: unknown policy 'bestfit9' (known: firstfit,");
    check_config_error("unknown flag: exit 2 with a suggestion", bad_flag, 2,
                       "unknown flag '--polcy' (did you mean '--policy'?)");
    check_config_error("--tls-key alone: exit 2", bad_tls, 2, "--tls-key needs --tls-cert");
    /* An unreadable cluster file is a failed start (1), not a bad flag (2): tests run as root,
     * so "unreadable" is a missing file, a directory, or a path through a regular file. */
    check_config_error("missing --cluster-file: exit 1", no_file, 1,
                       "/nonexistent/cluster.json: cannot read: No such file or directory");
    snprintf(want, sizeof(want), "%s: cannot read: Is a directory", fix);
    check_config_error("--cluster-file names a directory: exit 1", dir, 1, want);
    snprintf(in_file, sizeof(in_file), "%s/x.json", cluster);
    snprintf(want, sizeof(want), "%s: cannot read: Not a directory", in_file);
    check_config_error("--cluster-file under a regular file: exit 1", not_dir, 1, want);
    check_config_error("--cluster-file with --server: exit 2", both, 2,
                       "--cluster-file cannot be combined with --server");
}

static void check_tls(void)
{
    char cert[1024], key[1024], ca[1024];
    const char *args[] = {"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca, NULL};
    const struct tls anon = {"ca.pem", NULL, NULL},
                     client = {"ca.pem", "client.pem", "client-key.pem"};
    struct ep_srv s;
    struct resp r;

    snprintf(cert, sizeof(cert), "%s/tls/server.pem", fix);
    snprintf(key, sizeof(key), "%s/tls/server-key.pem", fix);
    snprintf(ca, sizeof(ca), "%s/tls/ca.pem", fix);
    srv_start(&s, "tls", args);
    if (!http_try("GET", s.port, "/healthz", NULL, 0, &anon, NULL, &r))
        ep_die("https /healthz: no answer");
    expect("TLS: /healthz needs no client certificate", &r, 200, "ok\n");
    free(r.body);
    if (!http_try("POST", s.port, "/lotus/filter", FILTER_NAMES, strlen(FILTER_NAMES), &anon, NULL,
                  &r))
        ep_die("https filter: no answer");
    expect("TLS: a verb without a client certificate: 403", &r, 403, NULL);
    free(r.body);
    if (!http_try("POST", s.port, "/lotus/filter", FILTER_NAMES, strlen(FILTER_NAMES), &client,
                  NULL, &r))
        ep_die("https filter with a client certificate: no answer");
    expect("TLS: a verb with a trusted client certificate", &r, 200, FILTER_NAMES_ANSWER);
    free(r.body);
    srv_stop(&s);
    ok("TLS server stopped with exit 0");
}

/* ------------------------------------------------------------------------------------------
 * Online: the fake API server
 */

static struct fake_api *fake_with_cluster(void)
{
    struct fake_api *f = fake_api_start();
    json_t *root = json_load_file(cluster, 0, NULL), *it;
    size_t i;

    if (f == NULL || root == NULL)
        ep_die("online: cannot start the fake API server or read %s", cluster);
    json_array_foreach(json_object_get(root, "items"), i, it)
    {
        bool node = strcmp(ep_jstr(json_object_get(it, "kind")), "Node") == 0;

        fake_api_add(f, node ? FAKE_NODES : FAKE_PODS, json_deep_copy(it));
    }
    json_decref(root);
    return f;
}

/* A bind with a wrong PodUID gets the API server's 409, whose text names the pod's real UID
 * ("UID in precondition: X, UID in object meta: Y"); answering it would let the caller bind
 * the pod with a second call. Neither UID, nor a UUID in any other error text, reaches the
 * client; the log keeps them. */
static void check_no_uid_echo(struct fake_api *f)
{
    static const char uuid[] = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
    char msg[256];
    struct resp r;

    http("POST", "/lotus/bind",
         "{\"PodName\":\"pending-1\",\"PodNamespace\":\"default\",\"PodUID\":"
         "\"guessed-uid\",\"Node\":\"node-a\"}",
         &r);
    expect_contains("online: a bind with a wrong PodUID gets the 409 in Error", &r, 200,
                    "Precondition failed");
    if (strstr(r.body, "uid-pending-1") != NULL || strstr(r.body, "guessed-uid") != NULL)
        ep_die("online: the 409 answer echoes a pod UID: %s", r.body);
    ok("online: the 409 answer names no UID");
    free(r.body);
    snprintf(msg, sizeof(msg), "pods \"pending-1\" with UID %s is being deleted", uuid);
    fake_api_bind_conflict_next(f, msg);
    http("POST", "/lotus/bind",
         "{\"PodName\":\"pending-1\",\"PodNamespace\":\"default\",\"PodUID\":"
         "\"uid-pending-1\",\"Node\":\"node-a\"}",
         &r);
    expect_contains("online: another 409 is answered in Error", &r, 200, "is being deleted");
    if (strstr(r.body, uuid) != NULL || strstr(r.body, "uid-pending-1") != NULL)
        ep_die("online: an error answer echoes a UUID: %s", r.body);
    ok("online: no UUID in an error answer");
    free(r.body);
}

static void check_online(void)
{
    struct fake_api *f = fake_with_cluster();
    const char *args[] = {"--server", fake_api_url(f), NULL};
    struct ep_srv s;
    struct resp r;
    char node[64];

    srv_start(&s, "online", args);
    ep_wait_ready(s.port, 1000, "online");
    ok("online: /readyz 200 after the list");
    http("POST", "/lotus/filter", FILTER_NAMES, &r);
    expect("online: filter as offline", &r, 200, FILTER_NAMES_ANSWER);
    free(r.body);
    http("POST", "/lotus/bind",
         "{\"PodName\":\"pending-2\",\"PodNamespace\":\"default\",\"PodUID\":"
         "\"uid-pending-2\",\"Node\":\"node-c\"}",
         &r);
    expect("online: bind", &r, 200, "{\"Error\":\"\"}");
    free(r.body);
    if (!fake_api_pod_node(f, "default", "pending-2", node, sizeof(node)) ||
        strcmp(node, "node-c") != 0)
        ep_die("online: the API server did not see the binding");
    ok("online: the binding reached the API server");
    http("POST", "/lotus/filter", "{\"Pod\":" POD_3500 ",\"NodeNames\":[\"node-c\"]}", &r);
    expect("online: the bound pod (3 cpu) counts on node-c at once", &r, 200,
           "{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{\"node-c\":\"Insufficient "
           "cpu: requested 3500m, free 3000m\"},\"FailedAndUnresolvableNodes\":{},"
           "\"Error\":\"\"}");
    free(r.body);
    fake_api_bind_conflict_next(f, "pods \"pending-1\" is already assigned to node \"node-b\"");
    http("POST", "/lotus/bind",
         "{\"PodName\":\"pending-1\",\"PodNamespace\":\"default\",\"PodUID\":"
         "\"uid-pending-1\",\"Node\":\"node-a\"}",
         &r);
    expect_contains("online: a 409 is answered in Error", &r, 200, "already assigned");
    free(r.body);
    check_no_uid_echo(f);
    srv_stop(&s);
    ok("online: exit 0 after SIGTERM with the watches running");
    fake_api_stop(f);
}

/* A pending copy of pending-1 named name (uid "uid-" name). */
static json_t *pending_pod(struct fake_api *f, const char *name)
{
    json_t *root = json_load_file(cluster, 0, NULL), *it, *copy = NULL;
    size_t i;
    char uid[64];

    json_array_foreach(json_object_get(root, "items"), i, it)
    {
        if (strcmp(ep_jstr(json_object_get(json_object_get(it, "metadata"), "name")),
                   "pending-1") == 0)
            copy = json_deep_copy(it);
    }
    json_decref(root);
    if (copy == NULL)
        ep_die("sticky: no pending-1 in %s", cluster);
    snprintf(uid, sizeof(uid), "uid-%s", name);
    json_object_set_new(json_object_get(copy, "metadata"), "name", json_string(name));
    json_object_set_new(json_object_get(copy, "metadata"), "uid", json_string(uid));
    fake_api_add(f, FAKE_PODS, copy);
    return copy;
}

static void bind_pod(const char *what, const char *name, const char *node)
{
    char body[256];
    struct resp r;

    snprintf(body, sizeof(body),
             "{\"PodName\":\"%s\",\"PodNamespace\":\"default\",\"PodUID\":\"uid-%s\","
             "\"Node\":\"%s\"}",
             name, name, node);
    http("POST", "/lotus/bind", body, &r);
    expect(what, &r, 200, "{\"Error\":\"\"}");
    free(r.body);
}

struct bind_thread {
    pthread_t t;
    char body[256];
    struct resp r;
    int64_t ms; /* how long the answer took */
    bool answered;
};

static void *bind_async(void *arg)
{
    struct bind_thread *b = arg;
    int64_t t0 = ep_now_ms();

    b->answered =
        http_try("POST", current->port, "/lotus/bind", b->body, strlen(b->body), NULL, NULL, &b->r);
    b->ms = ep_now_ms() - t0;
    return NULL;
}

/* Bindings run off the request workers and within --bind-timeout: four bindings the API
 * server holds for 3 s (more than the 2 request workers) leave /healthz and filter answering
 * at once; each binding is answered after about --bind-timeout (1 s) with an Error saying it
 * may have taken effect; and the pods count on the node, so a binding that timed out but took
 * effect does not leave it under-counted. */
static void check_bind_off_workers(void)
{
    struct fake_api *f = fake_with_cluster();
    const char *args[] = {"--server", fake_api_url(f), "--bind-timeout", "1s", NULL};
    struct bind_thread b[4];
    struct ep_srv s;
    struct resp r;
    int64_t t0;
    int i;

    for (i = 0; i < 4; i++) {
        char name[32];

        snprintf(name, sizeof(name), "slow-%d", i);
        pending_pod(f, name);
    }
    srv_start(&s, "slowbind", args);
    ep_wait_ready(s.port, 1000, "bind");
    fake_api_bind_delay(f, 3000, 4);
    for (i = 0; i < 4; i++) {
        memset(&b[i], 0, sizeof(b[i]));
        snprintf(b[i].body, sizeof(b[i].body),
                 "{\"PodName\":\"slow-%d\",\"PodNamespace\":\"default\",\"PodUID\":"
                 "\"uid-slow-%d\",\"Node\":\"node-c\"}",
                 i, i);
        if (pthread_create(&b[i].t, NULL, bind_async, &b[i]) != 0)
            ep_die("bind: cannot start a client thread");
    }
    usleep(200000); /* the four bindings are waiting on the API server */
    t0 = ep_now_ms();
    http("GET", "/healthz", NULL, &r);
    free(r.body);
    http("POST", "/lotus/filter", FILTER_NAMES, &r);
    free(r.body);
    if (ep_now_ms() - t0 > 500)
        ep_die("bind: /healthz and filter took %lld ms while four bindings hung",
               (long long)(ep_now_ms() - t0));
    ok("bind: hung bindings block neither the probes nor filter");
    for (i = 0; i < 4; i++) {
        pthread_join(b[i].t, NULL);
        if (!b[i].answered || b[i].r.status != 200 || b[i].r.body == NULL ||
            strstr(b[i].r.body, "may have taken effect") == NULL)
            ep_die("bind: slow-%d: status %ld, body %s", i, b[i].r.status,
                   b[i].r.body ? b[i].r.body : "(none)");
        if (b[i].ms < 800 || b[i].ms > 2500)
            ep_die("bind: slow-%d answered after %lld ms, --bind-timeout is 1 s", i,
                   (long long)b[i].ms);
        free(b[i].r.body);
    }
    ok("bind: each hung binding is answered after --bind-timeout, saying it may have happened");
    http("POST", "/lotus/filter", "{\"Pod\":" POD_3500 ",\"NodeNames\":[\"node-c\"]}", &r);
    expect_contains("bind: the four maybe-bound pods (1 cpu each) count on node-c", &r, 200,
                    "Insufficient cpu: requested 3500m, free 2000m");
    free(r.body);
    srv_stop(&s);
    fake_api_stop(f);
}

/* The request index of the first recorded request containing needle; dies if none. */
static size_t request_at(struct fake_api *f, const char *needle)
{
    char t[512];

    for (size_t i = 0; i < fake_api_request_count(f); i++) {
        if (fake_api_request(f, i, t, sizeof(t), NULL) && strstr(t, needle) != NULL)
            return i;
    }
    ep_die("sticky: no request '%s' reached the API server", needle);
}

/* HYBRID: --sticky-slots 3 with db-0 already sticky (small.json). pending-2 is labelled by a
 * merge PATCH before its binding; pending-3's PATCH fails (500) and it is bound unlabelled;
 * pending-1 takes the last sticky slot; pending-4 finds the pool full. /metrics counts each. */
static void check_sticky(void)
{
    struct fake_api *f = fake_with_cluster();
    const char *args[] = {"--server", fake_api_url(f), "--sticky-slots", "3",
                          "--slots",  "capacity",      "--slots-level",  "1",
                          NULL};
    struct ep_srv s;
    struct resp r;
    char v[4096];

    pending_pod(f, "pending-3");
    pending_pod(f, "pending-4");
    srv_start(&s, "sticky", args);
    ep_wait_ready(s.port, 1000, "sticky");
    bind_pod("sticky: bind pending-2", "pending-2", "node-c");
    if (!fake_api_pod_label(f, "default", "pending-2", "lotus.io/sticky", v, sizeof(v)) ||
        strcmp(v, "true") != 0)
        ep_die("sticky: pending-2 is not labelled lotus.io/sticky=true");
    if (!fake_api_last_patch(f, v, sizeof(v)) ||
        strcmp(v, "{\"metadata\":{\"uid\":\"uid-pending-2\",\"labels\":{\"lotus.io/sticky\":"
                  "\"true\"}}}") != 0)
        ep_die("sticky: PATCH body %s", v);
    if (!(request_at(f, "PATCH /api/v1/namespaces/default/pods/pending-2") <
          request_at(f, "POST /api/v1/namespaces/default/pods/pending-2/binding")))
        ep_die("sticky: the label PATCH did not precede the binding");
    if (!fake_api_pod_node(f, "default", "pending-2", v, sizeof(v)) || strcmp(v, "node-c") != 0)
        ep_die("sticky: pending-2 not bound to node-c");
    ok("sticky: pending-2 labelled by a merge PATCH (uid precondition), then bound");

    fake_api_patch_fail_next(f, 500);
    bind_pod("sticky: a failed label does not fail the bind", "pending-3", "node-a");
    if (fake_api_pod_label(f, "default", "pending-3", "lotus.io/sticky", v, sizeof(v)) ||
        !fake_api_pod_node(f, "default", "pending-3", v, sizeof(v)))
        ep_die("sticky: pending-3 should be bound and unlabelled");
    ok("sticky: pending-3 bound without the label");

    bind_pod("sticky: bind pending-1", "pending-1", "node-a");
    if (!fake_api_pod_label(f, "default", "pending-1", "lotus.io/sticky", v, sizeof(v)))
        ep_die("sticky: pending-1 is not labelled (the pool had room)");
    bind_pod("sticky: bind pending-4", "pending-4", "node-b");
    if (fake_api_pod_label(f, "default", "pending-4", "lotus.io/sticky", v, sizeof(v)))
        ep_die("sticky: pending-4 labelled although the pool (3) was full");
    if (fake_api_patches(f) != 2)
        ep_die("sticky: %zu PATCHes applied, expected 2", fake_api_patches(f));
    ok("sticky: the pool of 3 is full after db-0, pending-2, pending-1");

    http("GET", "/metrics", NULL, &r);
    expect_contains("sticky: /metrics labelled 2", &r, 200,
                    "lotus_extender_sticky_labels_total{outcome=\"labelled\"} 2\n");
    expect_contains("sticky: /metrics failed 1", &r, 200,
                    "lotus_extender_sticky_labels_total{outcome=\"failed\"} 1\n");
    expect_contains("sticky: /metrics pool_full 1", &r, 200,
                    "lotus_extender_sticky_labels_total{outcome=\"pool_full\"} 1\n");
    expect_contains("sticky: /metrics pool size", &r, 200, "lotus_extender_sticky_pool 3\n");
    free(r.body);
    srv_stop(&s);
    ok("sticky: exit 0 after SIGTERM");
    fake_api_stop(f);
}

int main(int argc, char **argv)
{
    struct ep_srv s;

    if (argc != 3) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    ep_at_die(ep_srv_cleanup);
    fix = argv[2];
    snprintf(cluster, sizeof(cluster), "%s/cluster/small.json", fix);
    snprintf(logpath, sizeof(logpath), "/tmp/test_extender.%d.log", (int)getpid());
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    srv_start(&s, "main", NULL);
    check_probes();
    check_filter();
    check_prioritize();
    check_preempt();
    check_bind();
    check_offline_bind();
    check_bad_json();
    check_http_errors();
    check_huge_lists();
    check_raw_garbage();
    check_metrics();
    check_drain();
    check_chunked_just_over();
    check_config();
    check_pod_limit();
    check_tls();
    check_online();
    check_sticky();
    check_bind_off_workers();
    curl_global_cleanup();
    for (size_t i = 0; i < 8; i++) {
        static const char *const sfx[] = {"main",   "small",  "tls",   "config",
                                          "online", "sticky", "limit", "bind"};
        char p[300];

        snprintf(p, sizeof(p), "%s.%s", logpath, sfx[i]);
        unlink(p);
    }
    printf("test_extender: all checks passed\n");
    return 0;
}
