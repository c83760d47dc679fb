/* ext_proc.c -- test support for the lotus-extender integration tests and benchmark (see
 * ext_proc.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* usleep, kill */
#include "ext_proc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *ep_jstr(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}

static void (*die_cleanup)(void);

void ep_at_die(void (*cleanup)(void))
{
    die_cleanup = cleanup;
}

void ep_die(const char *fmt, ...)
{
    va_list ap;

    fputs("not ok - ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (die_cleanup)
        die_cleanup();
    exit(1);
}

void ep_ok(const char *fmt, ...)
{
    va_list ap;

    fputs("ok - ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

void ep_dump_log(const char *path, const char *title)
{
    char line[4096];
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return;
    fprintf(stderr, "--- %s ---\n", title);
    while (fgets(line, sizeof(line), f))
        fputs(line, stderr);
    fclose(f);
}

int ep_spawn(const char *const *argv, const char *log, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    int rc;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    rc = posix_spawn(pid, argv[0], &fa, NULL, (char *const *)(uintptr_t)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

int ep_find_port(const char *log)
{
    char line[8192];
    int port = 0;
    FILE *f = fopen(log, "r");

    while (f && port == 0 && fgets(line, sizeof(line), f)) {
        json_t *o = json_loads(line, 0, NULL);

        if (o && strcmp(ep_jstr(json_object_get(o, "msg")), "serving") == 0)
            port = (int)json_integer_value(json_object_get(o, "port"));
        json_decref(o);
    }
    if (f)
        fclose(f);
    return port;
}

int ep_wait_port(pid_t pid, const char *log, int tries, int *status)
{
    int port = 0;

    for (int i = 0; i < tries && (port = ep_find_port(log)) == 0; i++) {
        if (waitpid(pid, status, WNOHANG) == pid)
            return -1;
        usleep(10000);
    }
    return port;
}

int ep_wait_exit(pid_t pid, int ms)
{
    int st;

    for (int i = 0; i < ms / 10; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        usleep(10000);
    }
    return -1;
}

size_t ep_on_data(char *p, size_t size, size_t n, void *arg)
{
    struct ep_body *b = arg;
    char *nb = realloc(b->p, b->len + size * n + 1);

    if (nb == NULL)
        return 0;
    memcpy(nb + b->len, p, size * n);
    b->p = nb;
    b->len += size * n;
    b->p[b->len] = '\0';
    return size * n;
}

void ep_curl_setup(CURL *c, const char *url, struct ep_body *b, long timeout_ms)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ep_on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
}

long ep_http(int port, const char *path, const char *post, struct ep_body *b, long timeout_ms)
{
    CURL *h = curl_easy_init();
    char url[4096];
    long status = 0;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    ep_curl_setup(h, url, b, timeout_ms);
    if (post)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    return status;
}

int64_t ep_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ep_dial(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), e;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

bool ep_send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* The servers ep_srv_start registered and no ep_srv_stop or ep_srv_forget has forgotten yet.
 * A test runs a handful at a time (three in test_extender_scenario). */
#define EP_MAX_SRV 8
static struct ep_srv *live[EP_MAX_SRV];

void ep_srv_forget(struct ep_srv *s)
{
    for (int i = 0; i < EP_MAX_SRV; i++)
        if (live[i] == s)
            live[i] = NULL;
}

static void remember(struct ep_srv *s)
{
    ep_srv_forget(s);
    for (int i = 0; i < EP_MAX_SRV; i++) {
        if (live[i] == NULL) {
            live[i] = s;
            return;
        }
    }
    ep_die("%s: more than %d servers at once", s->name, EP_MAX_SRV);
}

void ep_srv_cleanup(void)
{
    for (int i = 0; i < EP_MAX_SRV; i++) {
        struct ep_srv *s = live[i];
        char title[300];

        if (s == NULL)
            continue;
        live[i] = NULL;
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            ep_wait_exit(s->pid, 5000);
        }
        snprintf(title, sizeof(title), "%s log %s", s->name, s->log);
        ep_dump_log(s->log, title);
    }
}

void ep_srv_adopt(struct ep_srv *s, const char *name, const char *log, pid_t pid, int tries)
{
    int st = 0;

    s->name = name;
    s->pid = pid;
    s->port = 0;
    snprintf(s->log, sizeof(s->log), "%s", log);
    remember(s);
    s->port = ep_wait_port(s->pid, s->log, tries, &st);
    if (s->port < 0) {
        s->pid = 0; /* reaped */
        ep_die("%s: the server exited at start (status %d)", name, st);
    }
    if (s->port == 0)
        ep_die("%s: no 'serving' log line within %d s", name, tries / 100);
}

void ep_srv_start(struct ep_srv *s, const char *name, const char *log, const char *const *argv,
                  const char *const *extra, int tries)
{
    const char *all[64];
    size_t n = 0;
    pid_t pid;
    int rc;

    for (; argv[n]; n++)
        if (n < 63)
            all[n] = argv[n];
    for (; extra && *extra; extra++, n++)
        if (n < 63)
            all[n] = *extra;
    if (n > 63)
        ep_die("%s: %zu arguments, at most 63", name, n);
    all[n] = NULL;
    rc = ep_spawn(all, log, &pid);
    if (rc != 0)
        ep_die("cannot start %s: %s", all[0], strerror(rc));
    ep_srv_adopt(s, name, log, pid, tries);
}

void ep_srv_stop(struct ep_srv *s, int ms)
{
    int st;

    kill(s->pid, SIGTERM);
    st = ep_wait_exit(s->pid, ms);
    if (st == -1)
        ep_die("%s: no exit within %d s of SIGTERM", s->name, ms / 1000);
    s->pid = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        ep_die("%s: exit status %d after SIGTERM, expected 0 (an ASan report in the log?)", s->name,
               st);
    ep_srv_forget(s);
    unlink(s->log);
}

void ep_wait_ready(int port, int tries, const char *what)
{
    for (int i = 0; i < tries; i++) {
        struct ep_body b = {NULL, 0};
        long status = ep_http(port, "/readyz", NULL, &b, 10000);

        free(b.p);
        if (status == 200)
            return;
        usleep(10000);
    }
    ep_die("%s: /readyz not 200 within %d s", what, tries / 100);
}

long ep_sample(const char *text, const char *prefix)
{
    const char *p = text;

    while ((p = strstr(p, prefix)) != NULL) {
        if (p == text || p[-1] == '\n')
            return strtol(p + strlen(prefix), NULL, 10);
        p++;
    }
    return -1;
}
