/* test_extender_lotes.c -- lotus-extender's LoTES mode end to end, offline, on loopback.
 *
 * usage: test_extender_lotes LOTUS_EXTENDER
 *
 * Builds LoTES tables in the test (lt_lotes_build on a two-class, two-configuration problem in
 * Kubernetes units: x (1000m, 256Mi) to the cpu-rich (4 cores, 1Gi) configuration, y (250m,
 * 1Gi) to the mem-rich (1 core, 4Gi) one), writes them with lt_lotes_tables_dump and a cluster
 * file (a1, a2 cpu-rich, b1, b2 mem-rich, c1 of another shape) to a scratch directory, and
 * starts the binary with --cluster-file and --lotes-tables on 127.0.0.1 port 0. Checks: the
 * LoTES start-up log line, prioritize puts the nodes of the pod's class first (10) for an
 * x-like and a y-like pod, filter still answers by resources alone, and a bad tables file makes
 * the binary exit 2 naming the flag, the file and the JSON path.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* mkdtemp, kill */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ext_proc.h"
#include "lt_lotes.h"
#include "lt_mem.h"

#define GI (1024.0 * 1024.0 * 1024.0)

static char dir[128], log_path[256];
static pid_t server = -1;

static void cleanup(void)
{
    if (server > 0) {
        kill(server, SIGKILL);
        ep_wait_exit(server, 5000);
    }
    ep_dump_log(log_path, "lotus-extender log");
}

static void write_file(const char *name, const char *text, char *path, size_t n)
{
    FILE *f;

    snprintf(path, n, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        ep_die("cannot write %s", path);
}

static char *tables_json(void)
{
    struct lt_lotes_class k[2];
    struct lt_lotes_config c[2];
    struct lt_lotes_problem p = {k, 2, c, 2};
    struct lt_lotes_tables *t;
    struct lt_err err;
    char *text;

    memset(k, 0, sizeof(k));
    memset(c, 0, sizeof(c));
    snprintf(k[0].name, sizeof(k[0].name), "x");
    snprintf(k[1].name, sizeof(k[1].name), "y");
    k[0].alpha = k[1].alpha = 0.5;
    k[0].mu = k[1].mu = 1;
    k[0].req = (struct lt_res){1000, 0.25 * GI, 0};
    k[1].req = (struct lt_res){250, GI, 0};
    snprintf(c[0].name, sizeof(c[0].name), "cpu-rich");
    snprintf(c[1].name, sizeof(c[1].name), "mem-rich");
    c[0].cap = (struct lt_res){4000, GI, 0};
    c[1].cap = (struct lt_res){1000, 4 * GI, 0};
    c[0].n = c[1].n = 3;
    lt_err_init(&err, NULL);
    t = lt_lotes_build(&p, &err);
    if (t == NULL)
        ep_die("lt_lotes_build: %s", err.text);
    text = lt_lotes_tables_dump(t, &err);
    lt_lotes_tables_free(t);
    if (text == NULL)
        ep_die("lt_lotes_tables_dump: %s", err.text);
    return text;
}

static void node(json_t *items, const char *name, const char *cpu, const char *mem)
{
    json_t *n = json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s, s:s, s:s, s:s}}}", "apiVersion", "v1",
                          "kind", "Node", "metadata", "name", name, "status", "allocatable", "cpu",
                          cpu, "memory", mem, "pods", "110", "ephemeral-storage", "10Gi");

    if (n == NULL || json_array_append_new(items, n) != 0)
        ep_die("cannot build node %s", name);
}

static char *cluster_json(void)
{
    json_t *items = json_array(), *doc;
    char *text;

    node(items, "a1", "4", "1Gi");
    node(items, "a2", "4", "1Gi");
    node(items, "b1", "1", "4Gi");
    node(items, "b2", "1", "4Gi");
    node(items, "c1", "2", "2Gi");
    doc = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);
    text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text == NULL)
        ep_die("cannot build the cluster file");
    return text;
}

/* POSTs a prioritize (or filter) for a pod of cpu and memory requests to the five nodes and
 * returns the decoded answer (json_decref). */
static json_t *ask(int port, const char *verb, const char *cpu, const char *mem)
{
    char body[1024], path[64];
    struct ep_body b = {NULL, 0};
    json_t *doc;
    long st;

    snprintf(body, sizeof(body),
             "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\"},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
             "{\"cpu\":\"%s\",\"memory\":\"%s\"}}}]}},"
             "\"NodeNames\":[\"a1\",\"a2\",\"b1\",\"b2\",\"c1\"]}",
             cpu, mem);
    snprintf(path, sizeof(path), "/lotus/%s", verb);
    st = ep_http(port, path, body, &b, 5000);
    if (st != 200)
        ep_die("%s: HTTP %ld: %s", verb, st, b.p ? b.p : "");
    doc = json_loads(b.p, 0, NULL);
    if (doc == NULL)
        ep_die("%s: answer is not JSON: %s", verb, b.p);
    free(b.p);
    return doc;
}

static long score(const json_t *list, size_t i)
{
    return (long)json_integer_value(json_object_get(json_array_get(list, i), "Score"));
}

static void check_prioritize(int port)
{
    json_t *x = ask(port, "prioritize", "500m", "200Mi");
    json_t *y = ask(port, "prioritize", "300m", "900Mi");
    json_t *f = ask(port, "filter", "3", "100Mi");

    /* x-like: a1 and a2 (cpu-rich, rho 1) score 10 and 9 (the policy's choice among equals
     * alone keeps 10), above every other node. */
    if (score(x, 0) != 10 || score(x, 1) != 9 || score(x, 2) >= 9 || score(x, 3) >= 9 ||
        score(x, 4) >= 9)
        ep_die("x-like pod: expected a1 at 10, a2 at 9 and the rest below, got %s",
               json_dumps(x, JSON_COMPACT));
    ep_ok("prioritize: an x-like pod ranks the cpu-rich nodes (its class's bins) first");
    /* y-like: a1, a2 have room too (1Gi free), but b1, b2 (its class's bins) come first. */
    if (score(y, 2) != 10 || score(y, 3) != 9 || score(y, 0) >= 9 || score(y, 1) >= 9 ||
        score(y, 4) >= 9)
        ep_die("y-like pod: expected b1 at 10, b2 at 9 and the rest below, got %s",
               json_dumps(y, JSON_COMPACT));
    ep_ok("prioritize: a y-like pod ranks the mem-rich nodes first");
    /* Filter is unchanged: 3 cores fit a1, a2 only (b1, b2, c1 are too small). */
    if (json_array_size(json_object_get(f, "NodeNames")) != 2 ||
        json_object_size(json_object_get(f, "FailedAndUnresolvableNodes")) != 3)
        ep_die("filter: expected a1, a2 kept, got %s", json_dumps(f, JSON_COMPACT));
    ep_ok("filter: resource fit only, as without LoTES");
    json_decref(x);
    json_decref(y);
    json_decref(f);
}

static void check_bad_tables(const char *bin, const char *cluster, const char *bad)
{
    const char *argv[] = {bin,     "--listen",       "127.0.0.1:0", "--cluster-file",
                          cluster, "--lotes-tables", bad,           NULL};
    char line[8192], want[512];
    bool found = false;
    pid_t pid;
    FILE *f;
    int st;

    if (ep_spawn(argv, log_path, &pid) != 0)
        ep_die("cannot start %s", bin);
    st = ep_wait_exit(pid, 10000);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 2)
        ep_die("bad tables: exit status %d, expected exit(2)", st);
    snprintf(want, sizeof(want), "--lotes-tables: %s: $.version: expected 1", bad);
    f = fopen(log_path, "r");
    while (f && fgets(line, sizeof(line), f))
        found = found || strstr(line, want) != NULL;
    if (f)
        fclose(f);
    if (!found)
        ep_die("bad tables: no '%s' in the log", want);
    ep_ok("a bad tables file: exit 2 naming the flag, the file and the JSON path");
}

int main(int argc, char **argv)
{
    char tables[256], cluster[256], bad[256];
    char *tj, *cj, *bj, *at;
    int port, st;

    if (argc != 2) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof(dir), "%s/test_extender_lotes_XXXXXX",
             getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 40 ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(dir) == NULL)
        ep_die("mkdtemp failed");
    snprintf(log_path, sizeof(log_path), "%s/extender.log", dir);
    ep_at_die(cleanup);
    tj = tables_json();
    cj = cluster_json();
    write_file("tables.json", tj, tables, sizeof(tables));
    write_file("cluster.json", cj, cluster, sizeof(cluster));
    bj = lt_strdup(tj);
    at = bj ? strstr(bj, "\"version\": 1") : NULL;
    if (at == NULL)
        ep_die("the tables dump has no \"version\": 1");
    at[strlen("\"version\": ")] = '7';
    write_file("bad.json", bj, bad, sizeof(bad));

    {
        const char *args[] = {argv[1],          "--listen", "127.0.0.1:0",    "--threads", "2",
                              "--cluster-file", cluster,    "--lotes-tables", tables,      NULL};
        char line[8192];
        bool logged = false;
        FILE *f;

        if (ep_spawn(args, log_path, &server) != 0)
            ep_die("cannot start %s", argv[1]);
        port = ep_wait_port(server, log_path, 1000, &st);
        if (port <= 0)
            ep_die("the server did not start (status %d)", st);
        f = fopen(log_path, "r");
        while (f && fgets(line, sizeof(line), f))
            logged = logged || (strstr(line, "LoTES mode") && strstr(line, "\"classes\":2"));
        if (f)
            fclose(f);
        if (!logged)
            ep_die("no LoTES start-up line with 2 classes in the log");
        ep_ok("starts with --cluster-file and --lotes-tables, logging the tables");
        check_prioritize(port);
        kill(server, SIGTERM);
        st = ep_wait_exit(server, 15000);
        server = -1;
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            ep_die("exit status %d after SIGTERM", st);
        ep_ok("SIGTERM: exit 0");
    }
    check_bad_tables(argv[1], cluster, bad);
    lt_free(tj);
    free(cj);
    lt_free(bj);
    unlink(tables);
    unlink(cluster);
    unlink(bad);
    unlink(log_path);
    rmdir(dir);
    return 0;
}
