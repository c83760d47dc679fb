/* test_extender_limits.c -- lotus-extender's protection against clients that hold resources:
 * the body budget, the request and header deadlines and the connection limits (in all, per
 * client address), end to end on loopback.
 *
 * usage: test_extender_limits LOTUS_EXTENDER FIXTURES_DIR   (FIXTURES_DIR =
 * tests/fixtures/extender)
 *
 * Each check starts the binary offline (--cluster-file cluster/small.json, 127.0.0.1 port 0)
 * with small limits, plays the misbehaving clients with raw sockets (connections that send
 * part of a request and wait, or drip it a byte at a time) and a well-behaved one with libcurl,
 * and reads /metrics to know when the server has seen what the test sent, so that no check
 * depends on a sleep being long enough. Every wait is bounded (a few seconds at most).
 *
 * Output: one "ok - <name>" line per check; the first failure prints what differed, the
 * server log, and exits 1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* usleep, kill */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "ext_proc.h"

static const char *bin, *fix;
static char cluster[1024], logpath[200];

/* Starts the extender offline on the test cluster with the flags in extra (NULL-terminated). */
static void srv_start(struct ep_srv *s, const char *name, const char *const *extra)
{
    const char *argv[] = {bin,     "--listen",           "127.0.0.1:0", "--cluster-file",
                          cluster, "--shutdown-timeout", "5s",          NULL};
    char log[256];

    snprintf(log, sizeof(log), "%s.%s", logpath, name);
    ep_srv_start(s, name, log, argv, extra, 1000);
}

/* ------------------------------------------------------------------------------------------
 * Raw sockets
 */

static int dial(int port)
{
    int fd = ep_dial(port);

    if (fd < 0)
        ep_die("connect to 127.0.0.1:%d: %s", port, strerror(errno));
    return fd;
}

static bool send_str(int fd, const char *s)
{
    return ep_send_all(fd, s, strlen(s));
}

/* Reads what arrives within ms into buf (NUL-terminated) until the server closes the
 * connection or a complete answer with a Content-Length body is in. Returns the number of
 * bytes, or -1 if nothing arrived and the connection is still open after ms. */
static long read_answer(int fd, char *buf, size_t cap, int ms)
{
    int64_t end = ep_now_ms() + ms;
    size_t len = 0;

    buf[0] = '\0';
    while (len + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(end - ep_now_ms());
        const char *hend, *cl;
        ssize_t n;

        if (left <= 0 || poll(&p, 1, left) <= 0)
            return len > 0 ? (long)len : -1;
        n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n <= 0)
            return (long)len; /* closed (0) or reset */
        len += (size_t)n;
        buf[len] = '\0';
        hend = strstr(buf, "\r\n\r\n");
        cl = strstr(buf, "Content-Length: ");
        if (hend && cl && cl < hend && len >= (size_t)(hend + 4 - buf) + strtoul(cl + 16, NULL, 10))
            return (long)len;
    }
    return (long)len;
}

/* ------------------------------------------------------------------------------------------
 * HTTP with libcurl and /metrics
 */

static long http_post(int port, const char *path, const char *body, struct ep_body *b)
{
    memset(b, 0, sizeof(*b));
    return ep_http(port, path, body, b, 10000);
}

/* The sample of /metrics that starts with prefix; -1 if absent or no answer. */
static long metric(int port, const char *prefix)
{
    struct ep_body b = {NULL, 0};
    long v = -1;

    if (ep_http(port, "/metrics", NULL, &b, 5000) == 200)
        v = ep_sample(b.p, prefix);
    free(b.p);
    return v;
}

/* Polls /metrics every 20 ms, up to ms, until the sample prefix has the value want (at least
 * want with at_least). */
static void wait_metric_cmp(int port, const char *prefix, long want, bool at_least, int ms,
                            const char *what)
{
    int64_t end = ep_now_ms() + ms;
    long v;

    while ((v = metric(port, prefix)), (at_least ? v < want : v != want) && ep_now_ms() < end)
        usleep(20000);
    if (at_least ? v < want : v != want)
        ep_die("%s: %s is %ld after %d ms, expected %s%ld", what, prefix, v, ms,
               at_least ? "at least " : "", want);
}

static void wait_metric(int port, const char *prefix, long want, int ms, const char *what)
{
    wait_metric_cmp(port, prefix, want, false, ms, what);
}

#define POD                                                                                        \
    "{\"metadata\":{\"name\":\"q\",\"namespace\":\"default\",\"uid\":\"q\"},\"spec\":{"            \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}"
#define FILTER     "{\"Pod\":" POD ",\"NodeNames\":[\"node-a\"]}"
#define BODY_BYTES "lotus_extender_body_bytes "

static void head(char *out, size_t cap, size_t content_length)
{
    snprintf(out, cap,
             "POST /lotus/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             content_length);
}

/* Dies unless a filter is answered 200: the server still serves after what happened. */
static void expect_served(int port, const char *check, const char *after)
{
    struct ep_body b;

    if (http_post(port, "/lotus/filter", FILTER, &b) != 200)
        ep_die("%s: a filter after %s was not answered 200", check, after);
    free(b.p);
}

/* ------------------------------------------------------------------------------------------
 * Checks
 */

/* Two connections that announce 60,000-byte bodies and send 100 bytes of them hold 120,002
 * bytes of a 128Ki budget: a third is refused at once (503, Retry-After) before its body is
 * read, a chunked one after it; the budget comes back when a body is complete or its
 * connection goes. */
static void check_body_budget(void)
{
    const char *args[] = {"--max-body", "64Ki", "--body-budget", "128Ki", NULL};
    static char body[60000], buf[8192];
    char h[256];
    struct ep_body b;
    struct ep_srv s;
    int a, c, d, e;

    memset(body, ' ', sizeof(body));
    srv_start(&s, "budget", args);
    head(h, sizeof(h), sizeof(body));
    a = dial(s.port);
    c = dial(s.port);
    if (!send_str(a, h) || !ep_send_all(a, body, 100) || !send_str(c, h) ||
        !ep_send_all(c, body, 100))
        ep_die("budget: the server closed a connection holding part of a body");
    wait_metric(s.port, BODY_BYTES, 2 * 60001, 5000, "budget: two bodies reserved");
    ep_ok("budget: two 60,000-byte bodies in progress hold 120,002 bytes of the budget");

    d = dial(s.port);
    send_str(d, h);
    if (read_answer(d, buf, sizeof(buf), 3000) <= 0 || strncmp(buf, "HTTP/1.1 503", 12) != 0 ||
        strstr(buf, "\r\nRetry-After: 1\r\n") == NULL ||
        strstr(buf, "{\"Error\":\"request bodies in memory would exceed --body-budget (131072 "
                    "bytes): retry later\"}") == NULL)
        ep_die("budget: a third 60,000-byte body was not refused at once with 503:\n%s", buf);
    close(d);
    ep_ok("budget: a third body is refused with 503, Retry-After and a JSON Error, unread");

    e = dial(s.port);
    send_str(e, "POST /lotus/filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "4e20\r\n");
    ep_send_all(e, body, 20000);
    send_str(e, "\r\n0\r\n\r\n");
    if (read_answer(e, buf, sizeof(buf), 3000) <= 0 || strncmp(buf, "HTTP/1.1 503", 12) != 0)
        ep_die("budget: a chunked body past the budget was not answered 503:\n%s", buf);
    close(e);
    ep_ok("budget: a chunked body past the budget is answered 503");

    if (!ep_send_all(a, body + 100, sizeof(body) - 100) ||
        read_answer(a, buf, sizeof(buf), 5000) <= 0 || strncmp(buf, "HTTP/1.1 200", 12) != 0)
        ep_die("budget: the first body, completed, was not answered 200:\n%s", buf);
    close(a);
    if (http_post(s.port, "/lotus/filter", FILTER, &b) != 200 || strstr(b.p, "node-a") == NULL)
        ep_die("budget: a filter after the first body was answered did not pass");
    free(b.p);
    ep_ok("budget: a body completed gives its share back: the next filter is served");
    close(c);
    wait_metric(s.port, BODY_BYTES, 0, 5000, "budget: all given back");
    ep_ok("budget: a connection closed mid-body gives its share back");
    ep_srv_stop(&s, 15000);
}

/* Drips text and then fill on fd, connected at t0, a byte every 100 ms until the server cuts
 * the connection or limit_ms have passed; closes fd. Dies unless the cut came after 900 ms at
 * least, for a deadline of 1 s set by flag. */
static void expect_cut(int fd, int64_t t0, const char *text, char fill, int limit_ms,
                       const char *what, const char *flag)
{
    size_t len = strlen(text);
    int64_t cut = -1;
    char buf[512];

    for (size_t i = 0; ep_now_ms() - t0 < limit_ms; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};

        if (!ep_send_all(fd, i < len ? text + i : &fill, 1) ||
            (poll(&p, 1, 100) > 0 && recv(fd, buf, sizeof(buf), 0) <= 0)) {
            cut = ep_now_ms() - t0;
            break;
        }
    }
    close(fd);
    if (cut < 0)
        ep_die("%s: not cut within %d s (%s 1s)", what, limit_ms / 1000, flag);
    if (cut < 900)
        ep_die("%s: cut after %" PRId64 " ms, before %s 1s", what, cut, flag);
}

/* A body dripped a byte every 100 ms is never idle for --conn-timeout, yet the whole request
 * must arrive within --request-timeout of its start: the connection is cut at 1 s. */
static void check_request_deadline(void)
{
    const char *args[] = {"--request-timeout", "1s", "--conn-timeout", "10s", NULL};
    char h[256];
    struct ep_srv s;
    int64_t t0;
    int fd;

    srv_start(&s, "deadline", args);
    head(h, sizeof(h), 1000);
    t0 = ep_now_ms();
    fd = dial(s.port);
    send_str(fd, h);
    expect_cut(fd, t0, "", ' ', 4000, "deadline: a dripped body", "--request-timeout");
    ep_ok("deadline: a body dripped a byte every 100 ms is cut after --request-timeout");
    wait_metric(s.port, "lotus_extender_connections_cut_total{reason=\"request_timeout\"} ", 1,
                3000, "deadline: cut counted");
    expect_served(s.port, "deadline", "the cut");
    ep_ok("deadline: the cut is counted and the server keeps serving");
    ep_srv_stop(&s, 15000);
}

/* Opens n connections that send half a request line and wait (slowloris clients), then one
 * more that asks for /healthz; returns that one. */
static int crowd(int port, int *fds, int n, const char *what)
{
    int extra;

    for (int i = 0; i < n; i++) {
        fds[i] = dial(port);
        if (!send_str(fds[i], "POST /lotus/fil"))
            ep_die("%s: connection %d closed at once", what, i);
    }
    extra = dial(port);
    send_str(extra, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    return extra;
}

/* Whether the server closes fd (or answers on it) within ms, rather than leaving it waiting. */
static bool settled(int fd, int ms, char *buf, size_t cap)
{
    return read_answer(fd, buf, cap, ms) >= 0;
}

/* --max-connections 4 held by idle clients: a fifth connection is closed at once instead of
 * waiting unanswered in the kernel's backlog (one worker thread, so that connections are
 * accepted and counted in the order they came), and counted. */
static void check_connection_limit(void)
{
    const char *args[] = {"--max-connections", "4",   "--threads", "1", "--header-timeout", "2s",
                          "--request-timeout", "10s", NULL};
    char buf[512];
    struct ep_srv s;
    int fds[4], extra;

    srv_start(&s, "conns", args);
    extra = crowd(s.port, fds, 4, "limit: four idle connections");
    if (!settled(extra, 1000, buf, sizeof(buf)))
        ep_die("limit: a fifth connection got no answer and was not closed within 1 s (left "
               "in the backlog)");
    if (buf[0] != '\0')
        ep_die("limit: a fifth connection was served past --max-connections 4:\n%s", buf);
    close(extra);
    ep_ok("limit: past --max-connections a connection is closed at once, not left waiting");
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    /* At least: a /metrics request that comes before the server saw the idle ones go is
     * refused and counted too. Up to the header deadline: libmicrohttpd 0.9.75 misses the end
     * of a connection whose client closed before its first read (its edge-triggered epoll
     * loop takes a short read for "drained"), and only the deadline ends it. */
    wait_metric_cmp(s.port, "lotus_extender_connections_refused_total ", 1, true, 6000,
                    "limit: the refusal counted");
    expect_served(s.port, "limit", "the idle connections went");
    ep_ok("limit: the refusal is counted; once the idle connections go, clients are served");
    ep_srv_stop(&s, 15000);
}

/* Headers dripped a byte every 100 ms: cut at --header-timeout, well before the request's
 * deadline and although the connection is never idle. */
static void check_header_deadline(void)
{
    const char *args[] = {
        "--header-timeout", "1s", "--request-timeout", "10s", "--conn-timeout", "10s", NULL};
    static const char line[] = "POST /lotus/filter HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    struct ep_srv s;
    int64_t t0;
    int fd;

    srv_start(&s, "headers", args);
    t0 = ep_now_ms();
    fd = dial(s.port);
    expect_cut(fd, t0, line, 'a', 5000, "headers: dripped headers", "--header-timeout");
    ep_ok("headers: headers dripped a byte every 100 ms are cut after --header-timeout");
    wait_metric(s.port, "lotus_extender_connections_cut_total{reason=\"header_timeout\"} ", 1, 3000,
                "headers: cut counted");
    ep_srv_stop(&s, 15000);
}

/* --max-connections-per-ip 3: a fourth connection from 127.0.0.1 is closed at once while the
 * server has room for others. */
static void check_per_ip_limit(void)
{
    /* One worker thread, as in check_connection_limit: connections are accepted and counted in
     * the order they came (with several, the fourth was once accepted before the third and
     * served: ASan build, loaded host). */
    const char *args[] = {"--max-connections-per-ip",
                          "3",
                          "--max-connections",
                          "64",
                          "--threads",
                          "1",
                          "--header-timeout",
                          "2s",
                          NULL};
    char buf[512];
    struct ep_srv s;
    int fds[3], extra;

    srv_start(&s, "perip", args);
    extra = crowd(s.port, fds, 3, "per ip: three idle connections");
    if (read_answer(extra, buf, sizeof(buf), 1000) != 0)
        ep_die("per ip: a fourth connection from 127.0.0.1 was not closed at once:\n%s", buf);
    close(extra);
    ep_ok("per ip: past --max-connections-per-ip a connection is closed at once");
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    wait_metric(s.port, "lotus_extender_connections ", 1, 6000, "per ip: idle ones closed");
    expect_served(s.port, "per ip", "the idle connections closed");
    ep_ok("per ip: once they close, the address is served again");
    ep_srv_stop(&s, 15000);
}

/* Starts argv (NULL-terminated) like srv_start, with an open-file limit of soft / hard
 * descriptors. */
static void srv_start_nofile(struct ep_srv *s, const char *name, const char *const *argv,
                             rlim_t soft, rlim_t hard)
{
    char log[256];
    pid_t pid;
    int fd;

    snprintf(log, sizeof(log), "%s.%s", logpath, name);
    pid = fork();
    if (pid < 0)
        ep_die("fork: %s", strerror(errno));
    if (pid == 0) {
        struct rlimit rl = {soft, hard};

        fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0 || setrlimit(RLIMIT_NOFILE, &rl) != 0)
            _exit(127);
        execv(bin, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    ep_srv_adopt(s, name, log, pid, 1000);
}

/* Started with an open-file limit of 64 (a shell's 1024 against --max-connections 1024, made
 * small), the server raises its own limit to what --max-connections needs: with 100 idle
 * connections open, a new client is still answered, instead of waiting in the backlog while
 * accept fails for want of descriptors. */
static void check_open_file_limit(void)
{
    const char *argv[] = {bin,           "--listen",
                          "127.0.0.1:0", "--cluster-file",
                          cluster,       "--max-connections",
                          "200",         "--threads",
                          "1",           NULL};
    static int fds[100];
    char buf[512];
    struct ep_srv s;
    int extra;

    srv_start_nofile(&s, "nofile", argv, 64, 4096);
    extra = crowd(s.port, fds, 100, "nofile: 100 idle connections");
    if (read_answer(extra, buf, sizeof(buf), 2000) <= 0 || strncmp(buf, "HTTP/1.1 200", 12) != 0)
        ep_die("nofile: a client after 100 idle connections was not answered within 2 s "
               "(open-file limit 64 not raised?):\n%s",
               buf);
    close(extra);
    for (int i = 0; i < 100; i++)
        close(fds[i]);
    ep_ok("nofile: the open-file limit is raised to fit --max-connections");
    ep_srv_stop(&s, 15000);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    fix = argv[2];
    ep_at_die(ep_srv_cleanup);
    snprintf(cluster, sizeof(cluster), "%s/cluster/small.json", fix);
    snprintf(logpath, sizeof(logpath), "/tmp/test_extender_limits.%d.log", (int)getpid());
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    check_body_budget();
    check_request_deadline();
    check_connection_limit();
    check_header_deadline();
    check_per_ip_limit();
    check_open_file_limit();
    curl_global_cleanup();
    printf("test_extender_limits: all checks passed\n");
    return 0;
}
