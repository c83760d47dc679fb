/* ext_proc.c -- test support for the lotus-extender integration tests and benchmark (see
 * ext_proc.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* usleep */
#include "ext_proc.h"

#include <fcntl.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
