/* test_extender_replicas.c -- two lotus-extender replicas behind one Service answer alike.
 *
 * usage: test_extender_replicas LOTUS_EXTENDER
 *
 * kube-scheduler reaches the replicas through a Service, so consecutive requests of one
 * scheduling cycle, and the retries of a pod, land on either replica. docs/extender.md
 * ("Several replicas") states what holds then; this test checks it offline, where both
 * replicas load the same cluster file (written here: four nodes r1..r4 with four pods each of
 * priority 0, one of them labelled lotus.io/sticky, and two pending pods). For each
 * configuration it starts replicas X and Y, sends X alone some other traffic first (as the
 * Service would), then sends both the same filter (NodeNames and full Nodes), prioritize
 * (eight pods) and preempt (four pods, MetaVictims for every node) requests and requires
 * byte-identical answers. Configurations: the defaults (bestfit1, mrs); random and rnd, whose
 * draws must depend on the request, not on how many requests the replica served before; and
 * --sticky-slots 2 with slots, where binds decide stickiness.
 *
 * Binds: a pod bound through X is assumed on X alone, so X and Y then differ (a filter on
 * X sees less free room); once Y learns the binding (online from its watch; here the same bind
 * is sent to Y), they agree again. With --sticky-slots, the same binds in the same order give
 * the same sticky pods on both.
 *
 * Output: one "ok - <name>" line per check; the first failure prints both answers and the
 * servers' logs, and exits 1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ext_proc.h"

static const char *bin;
static char dir[128], cluster[256];

/* ------------------------------------------------------------------------------------------
 * The cluster file
 */

/* Node rK: 4 cores, 8Gi, 110 pods; pods rK-0..rK-3 of 100m..1600m and 256Mi each, priority 0,
 * two of them started at the same second (ties for mrs and lrs, choices for rnd); r2-1 is
 * sticky. pend-1 and pend-2 are pending (500m, 512Mi, priority 5). */
static void write_cluster(void)
{
    json_t *nodes = json_array(), *pods = json_array(), *root;
    char name[32], uid[32], cpu[16], start[32], node[8];
    FILE *f;

    for (int k = 1; k <= 4; k++) {
        snprintf(node, sizeof(node), "r%d", k);
        json_array_append_new(nodes, json_pack("{s:{s:s}, s:{s:{s:s, s:s, s:s}}}", "metadata",
                                               "name", node, "status", "allocatable", "cpu", "4",
                                               "memory", "8Gi", "pods", "110"));
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof(name), "r%d-%d", k, i);
            snprintf(uid, sizeof(uid), "uid-r%d-%d", k, i);
            snprintf(cpu, sizeof(cpu), "%dm", 100 * (k + i * i));
            snprintf(start, sizeof(start), "2024-05-01T10:0%d:00Z", i < 2 ? 0 : i);
            json_array_append_new(
                pods, json_pack("{s:{s:s, s:s, s:s, s:{s:s}}, s:{s:s, s:i, s:[{s:s, s:{s:{s:s, "
                                "s:s}}}]}, s:{s:s, s:s}}",
                                "metadata", "name", name, "namespace", "default", "uid", uid,
                                "labels", "lotus.io/sticky", k == 2 && i == 1 ? "true" : "false",
                                "spec", "nodeName", node, "priority", 0, "containers", "name", "c",
                                "resources", "requests", "cpu", cpu, "memory", "256Mi", "status",
                                "phase", "Running", "startTime", start));
        }
    }
    for (int i = 1; i <= 2; i++) {
        snprintf(name, sizeof(name), "pend-%d", i);
        snprintf(uid, sizeof(uid), "uid-pend-%d", i);
        json_array_append_new(
            pods, json_pack("{s:{s:s, s:s, s:s}, s:{s:i, s:[{s:s, s:{s:{s:s, s:s}}}]}, "
                            "s:{s:s}}",
                            "metadata", "name", name, "namespace", "default", "uid", uid, "spec",
                            "priority", 5, "containers", "name", "c", "resources", "requests",
                            "cpu", "500m", "memory", "512Mi", "status", "phase", "Pending"));
    }
    root = json_pack("{s:{s:o}, s:{s:o}}", "nodes", "items", nodes, "pods", "items", pods);
    snprintf(cluster, sizeof(cluster), "%s/cluster.json", dir);
    f = fopen(cluster, "w");
    if (root == NULL || f == NULL || json_dumpf(root, f, JSON_INDENT(1)) != 0 || fclose(f) != 0)
        ep_die("cannot write %s", cluster);
    json_decref(root);
}

/* ------------------------------------------------------------------------------------------
 * Replicas
 */

/* Starts replica name ("X" or "Y") offline on the cluster file with the flags in extra. */
static void start(struct ep_srv *r, const char *name, const char *const *extra)
{
    const char *argv[] = {bin, "--listen",       "127.0.0.1:0", "--threads",
                          "2", "--cluster-file", cluster,       NULL};
    char log[300];

    snprintf(log, sizeof(log), "%s/%s.log", dir, name);
    ep_srv_start(r, name, log, argv, extra, 1000);
}

/* POSTs body to path on r; returns the answer (free it), dies without one. */
static char *post(const struct ep_srv *r, const char *path, const char *body, long *status)
{
    struct ep_body b = {NULL, 0};

    *status = ep_http(r->port, path, body, &b, 20000);
    if (*status == 0)
        ep_die("POST %s: no answer", path);
    return b.p;
}

/* Sends body to both replicas; true if the statuses and bodies are byte-identical. */
static bool same(const struct ep_srv *x, const struct ep_srv *y, const char *path, const char *body,
                 char **ax, char **ay)
{
    long sx, sy;

    *ax = post(x, path, body, &sx);
    *ay = post(y, path, body, &sy);
    return sx == sy && sx == 200 && strcmp(*ax ? *ax : "", *ay ? *ay : "") == 0;
}

static void expect_same(const struct ep_srv *x, const struct ep_srv *y, const char *what,
                        const char *path, const char *body)
{
    char *ax, *ay;

    if (!same(x, y, path, body, &ax, &ay))
        ep_die("%s: the replicas differ\n  X: %s\n  Y: %s", what, ax ? ax : "(none)",
               ay ? ay : "(none)");
    free(ax);
    free(ay);
}

/* ------------------------------------------------------------------------------------------
 * Requests
 */

#define NAMES "[\"r1\",\"r2\",\"r3\",\"r4\",\"ghost\"]"

/* A pod of priority prio requesting cpu and memory, with its own uid. */
static void pod(char *out, size_t n, const char *uid, int prio, const char *cpu, const char *mem)
{
    snprintf(out, n,
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
             "\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\",\"resources\":{"
             "\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"}}}]}}",
             uid, uid, prio, cpu, mem);
}

static void filter_body(char *out, size_t n, const char *p, bool full)
{
    if (full)
        snprintf(out, n,
                 "{\"Pod\":%s,\"NodeNames\":null,\"Nodes\":{\"items\":["
                 "{\"metadata\":{\"name\":\"r1\"}},{\"metadata\":{\"name\":\"r3\"}},"
                 "{\"metadata\":{\"name\":\"ghost\"}}]}}",
                 p);
    else
        snprintf(out, n, "{\"Pod\":%s,\"Nodes\":null,\"NodeNames\":" NAMES "}", p);
}

static void preempt_body(char *out, size_t n, const char *p)
{
    snprintf(out, n,
             "{\"Pod\":%s,\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
             "\"r1\":{\"Pods\":[{\"UID\":\"uid-r1-0\"}],\"NumPDBViolations\":0},"
             "\"r2\":{\"Pods\":[{\"UID\":\"uid-r2-0\"}],\"NumPDBViolations\":0},"
             "\"r3\":{\"Pods\":[{\"UID\":\"uid-r3-0\"}],\"NumPDBViolations\":0},"
             "\"r4\":{\"Pods\":[{\"UID\":\"uid-r4-0\"}],\"NumPDBViolations\":0}}}",
             p);
}

/* Traffic only X sees: the Service sent these requests of other pods there. */
static void warm_up(const struct ep_srv *x)
{
    char p[512], body[2048], *a;
    long st;

    for (int i = 0; i < 3; i++) {
        char uid[32];

        snprintf(uid, sizeof(uid), "other-%d", i);
        pod(p, sizeof(p), uid, 10, "300m", "128Mi");
        snprintf(body, sizeof(body), "{\"Pod\":%s,\"NodeNames\":" NAMES "}", p);
        free(post(x, "/lotus/prioritize", body, &st));
        preempt_body(body, sizeof(body), p);
        a = post(x, "/lotus/preempt", body, &st);
        free(a);
    }
}

/* The same filter, prioritize and preempt requests to both: byte-identical answers. */
static void compare_all(const struct ep_srv *x, const struct ep_srv *y, const char *cfg)
{
    char p[512], body[2048], what[128];

    for (int i = 0; i < 3; i++) {
        static const char *const cpu[] = {"500m", "3", "0"};

        pod(p, sizeof(p), "f-pod", 10, cpu[i], "1Gi");
        filter_body(body, sizeof(body), p, false);
        expect_same(x, y, "filter", "/lotus/filter", body);
        filter_body(body, sizeof(body), p, true);
        expect_same(x, y, "filter (full Nodes)", "/lotus/filter", body);
    }
    for (int i = 0; i < 8; i++) {
        char uid[32], cpu[16];

        snprintf(uid, sizeof(uid), "prio-%d", i);
        snprintf(cpu, sizeof(cpu), "%dm", 100 * (i + 1));
        pod(p, sizeof(p), uid, 10, cpu, "256Mi");
        snprintf(body, sizeof(body), "{\"Pod\":%s,\"NodeNames\":" NAMES "}", p);
        expect_same(x, y, "prioritize", "/lotus/prioritize", body);
    }
    for (int i = 0; i < 4; i++) {
        char uid[32];

        snprintf(uid, sizeof(uid), "pre-%d", i);
        pod(p, sizeof(p), uid, 10, i % 2 ? "3500m" : "3", "512Mi");
        preempt_body(body, sizeof(body), p);
        expect_same(x, y, "preempt", "/lotus/preempt", body);
    }
    snprintf(what, sizeof(what), "%s: filter, prioritize, preempt byte-identical on X and Y", cfg);
    ep_ok("%s", what);
}

#define BIND(pod, node)                                                                            \
    "{\"PodName\":\"" pod "\",\"PodNamespace\":\"default\",\"PodUID\":\"uid-" pod "\","            \
    "\"Node\":\"" node "\"}"

static void bind_on(const struct ep_srv *r, const char *body)
{
    long st;
    char *a = post(r, "/lotus/bind", body, &st);

    if (st != 200 || a == NULL || strcmp(a, "{\"Error\":\"\"}") != 0)
        ep_die("bind %s: %s", body, a ? a : "(none)");
    free(a);
}

/* A bind through X alone is counted on X alone; when Y learns it, they agree again. */
static void check_binds(const struct ep_srv *x, const struct ep_srv *y, const char *cfg)
{
    char p[512], body[2048], *ax, *ay;

    /* r1 has 2200m free; pend-1 takes 500m of it on X. */
    pod(p, sizeof(p), "f-pod", 10, "2", "1Gi");
    filter_body(body, sizeof(body), p, false);
    bind_on(x, BIND("pend-1", "r1"));
    if (same(x, y, "/lotus/filter", body, &ax, &ay) ||
        strstr(ax, "\"r1\":\"Insufficient cpu: requested 2000m, free 1700m\"") == NULL ||
        strstr(ay, "\"NodeNames\":[\"r1\"]") == NULL)
        ep_die("%s: after a bind through X only X should count it\n  X: %s\n  Y: %s", cfg, ax, ay);
    free(ax);
    free(ay);
    ep_ok("%s: a pod bound through X is assumed on X alone", cfg);
    bind_on(y, BIND("pend-1", "r1"));
    bind_on(x, BIND("pend-2", "r2"));
    bind_on(y, BIND("pend-2", "r2"));
    compare_all(x, y, cfg);
}

static void run(const char *cfg, const char *const *extra, bool binds)
{
    struct ep_srv x, y;

    start(&x, "X", extra);
    start(&y, "Y", extra);
    warm_up(&x);
    compare_all(&x, &y, cfg);
    if (binds)
        check_binds(&x, &y, cfg);
    ep_srv_stop(&x, 15000);
    ep_srv_stop(&y, 15000);
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {NULL};
    static const char *const drawn[] = {"--policy", "random", "--eviction", "rnd", NULL};
    static const char *const sticky[] = {
        "--sticky-slots", "2", "--slots", "capacity", "--slots-cpu-unit", "4",
        "--slots-level",  "1", NULL};
    char path[300];

    if (argc != 2) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    snprintf(dir, sizeof(dir), "/tmp/test_extender_replicas.XXXXXX");
    if (mkdtemp(dir) == NULL)
        ep_die("mkdtemp failed");
    ep_at_die(ep_srv_cleanup);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    write_cluster();
    run("bestfit1, mrs", defaults, true);
    run("random, rnd", drawn, false);
    run("--sticky-slots 2", sticky, true);
    curl_global_cleanup();
    for (int i = 0; i < 3; i++) {
        static const char *const names[] = {"cluster.json", "X.log", "Y.log"};

        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    printf("test_extender_replicas: all checks passed\n");
    return 0;
}
