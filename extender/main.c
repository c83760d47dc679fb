/* main.c -- lotus-extender: configuration, cluster cache, HTTP server, signals.
 *
 * Order matters for threads: libcurl's global init and the signal mask come before any thread
 * starts (cache watchers, MHD workers), so every thread inherits SIGTERM/SIGINT blocked and the
 * main thread alone takes them with sigtimedwait(), waking once a second to write the summary of
 * rate-limited log lines (ext_log_flush). SIGHUP (blocked likewise) reloads the TLS certificate
 * and key, or is logged and ignored without TLS. On SIGTERM or SIGINT it drains the server
 * (ext_server_drain: no new connections, in-flight requests finish within --shutdown-timeout),
 * then stops the server, the cache and the API client, and exits 0.
 *
 * Exit status: 0 after a signal-initiated shutdown (or --help, --version, --print-config);
 * 1 when starting failed (the cluster file missing, a directory or malformed; API server
 * config; address); 2 for a bad flag or config file. Every failure is one JSON log line naming the
 * flag, key or file.
 *
 * SPDX-License-Identifier: MIT
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#if defined(__GLIBC__) /* defined by the headers above */
#include <malloc.h>
#endif

#include "cache.h"
#include "config.h"
#include "kube.h"
#include "log.h"
#include "server.h"

#ifndef LOTUS_VERSION
#define LOTUS_VERSION "0.0.0"
#endif

/* Keeps the megabyte buffers of full-Nodes requests in the heap between requests. A 500-node
 * filter reads a 1.9 MB body and writes a 1.3 MB answer. glibc serves blocks that large with
 * mmap, or trims them off a thread's arena when they are freed, so every request page-faulted
 * its buffers in again: about 770 faults (3 MB of zeroed pages) per filter+prioritize pair,
 * 20 % of the server's time (docs/benchmarks.md). Setting the thresholds also stops glibc from
 * moving them. Blocks above 32 MiB (the largest threshold glibc allows) are still mapped and
 * unmapped each time, and an arena keeps at most 64 MiB free before trimming, so the heap stays
 * bounded by about that much per worker thread. */
static void malloc_tune(void)
{
#if defined(__GLIBC__)
    if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 64 << 20) != 1)
        ext_log(EXT_LOG_WARN, "mallopt failed: large request buffers will page-fault", NULL);
#endif
}

/* Descriptors besides the connections: listening sockets, epoll sets and inter-thread pipes of
 * the workers, the API client's connections, files, stdio. */
#define EXTRA_FDS 256

/* Raises the soft open-file limit to what --max-connections needs. When accept(2) fails for
 * want of descriptors, libmicrohttpd stops accepting, and new clients wait unanswered in the
 * kernel's backlog; a shell's usual soft limit of 1024 is below the default 1,024 connections
 * plus the rest. The hard limit caps it: then a warning says so. */
static void raise_fd_limit(const struct ext_config *cfg)
{
    rlim_t want = (rlim_t)cfg->max_connections + EXTRA_FDS;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < want)
        ext_log(EXT_LOG_WARN, "open-file limit below what --max-connections needs", "{s:I, s:I}",
                "limit", (json_int_t)rl.rlim_cur, "needed", (json_int_t)want);
}

static int fail(int status, const char *msg, const struct lt_err *e)
{
    ext_log(EXT_LOG_ERROR, msg, "{s:s, s:s}", "error", e->text, "code", lt_err_name(e->code));
    return status;
}

/* The API client of online mode: --server (with --token-file, --ca-file) or in-cluster. */
static struct kube_client *kube_open(const struct ext_config *cfg, struct lt_err *err)
{
    struct kube_config kc;
    int rc;

    kube_config_init(&kc);
    kc.seed = cfg->seed;
    if (cfg->server[0] != '\0') {
        rc = kube_config_set_server(&kc, cfg->server, err);
        snprintf(kc.token_file, sizeof(kc.token_file), "%s", cfg->token_file);
        snprintf(kc.ca_file, sizeof(kc.ca_file), "%s", cfg->ca_file);

    } else {
        rc = kube_config_in_cluster(&kc, NULL, err);
        if (rc == LT_ENOTFOUND)
            lt_err_set(err, rc, 0, 0,
                       "not running in a cluster: give --server (API server URL) or "
                       "--cluster-file (offline mode)");
    }
    kc.write_timeout_ms = cfg->bind_timeout_ms;
    return rc < 0 ? NULL : kube_client_new(&kc, err);
}

/* The feed's notes, as log lines (rate-limited per message by log.c). */
static void feed_note(void *arg, const struct ext_feed_note *n)
{
    (void)arg;
    switch (n->kind) {
    case EXT_FEED_WATCH_ERROR:
        ext_log(EXT_LOG_WARN, "API server feed error: retrying", "{s:s, s:s}", "resource",
                n->resource, "error", n->err->text);
        break;
    case EXT_FEED_UNDECODABLE:
        ext_log(EXT_LOG_WARN, "API server object dropped: cannot decode", "{s:s, s:s}", "resource",
                n->resource, "error", n->err->text);
        break;
    case EXT_FEED_PROBE_FAILED:
        ext_log(EXT_LOG_ERROR, "API server probe failed", "{s:s, s:I, s:f}", "error", n->err->text,
                "failures_in_a_row", (json_int_t)n->failures, "down_s", (double)n->down_ms / 1e3);
        break;
    case EXT_FEED_PROBE_OK:
        ext_log(EXT_LOG_INFO, "API server probe succeeds again", "{s:I, s:f}", "failures",
                (json_int_t)n->failures, "down_s", (double)n->down_ms / 1e3);
        break;
    }
}

static struct ext_cache *cache_open(const struct ext_config *cfg, struct kube_client *kube,
                                    struct lt_err *err)
{
    struct ext_cache_config cc;
    struct ext_cache *c;
    int rc;

    memset(&cc, 0, sizeof(cc));
    cc.rebuild_ms = cfg->rebuild_ms;
    cc.assume_ttl_ms = cfg->assume_ttl_ms;
    cc.seed = cfg->seed;
    cc.probe_interval_ms = cfg->probe_interval_ms;
    cc.notify = feed_note;
    c = ext_cache_new(&cc, err);
    if (c == NULL)
        return NULL;
    if (kube == NULL)
        rc = ext_cache_load_file(c, cfg->cluster_file, err);
    else
        rc = ext_cache_start(c, kube, err);
    if (rc < 0) {
        ext_cache_free(c);
        return NULL;
    }
    return c;
}

static int print_config(const struct ext_config *cfg)
{
    json_t *o = ext_config_to_json(cfg);
    char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

    json_decref(o);
    if (s == NULL)
        return 1;
    puts(s);
    free(s);
    return 0;
}

/* SIGHUP: with TLS, --tls-cert and --tls-key are read again (a certificate manager renews
 * them in place); the rest of the configuration is read at start only. A certificate that
 * does not load is logged, and the one in use kept. */
static void on_sighup(const struct ext_config *cfg, struct ext_server *s)
{
    struct lt_err e;

    lt_err_init(&e, NULL);
    if (cfg->tls_cert[0] == '\0')
        ext_log(EXT_LOG_INFO, "SIGHUP", "{s:s}", "action",
                "ignored: no TLS certificate to reload, and the configuration is read at start "
                "only");
    else if (ext_server_reload_tls(s, &e) == 0)
        ext_log(EXT_LOG_INFO, "SIGHUP: TLS certificate reloaded", "{s:s, s:s}", "tls_cert",
                cfg->tls_cert, "tls_key", cfg->tls_key);
    else
        ext_log(EXT_LOG_ERROR, "SIGHUP: cannot reload the TLS certificate, keeping the one in use",
                "{s:s, s:s}", "error", e.text, "code", lt_err_name(e.code));
}

/* Serves until SIGTERM or SIGINT, then drains; SIGHUP reloads the TLS certificate. */
static int serve(const struct ext_config *cfg, struct ext_cache *cache, struct kube_client *kube,
                 const sigset_t *sigs)
{
    const struct timespec tick = {1, 0};
    struct lt_err e;
    struct ext_server *s;
    size_t left;
    int sig;

    lt_err_init(&e, NULL);
    s = ext_server_new(cfg, cache, kube, &e);
    if (s == NULL)
        return fail(1, "cannot start the HTTP server", &e);
    if (cfg->lotes.t != NULL)
        ext_log(EXT_LOG_INFO, "LoTES mode: prioritize follows the tables' dispatcher",
                "{s:s, s:I, s:I, s:I}", "tables", cfg->lotes_tables, "classes",
                (json_int_t)cfg->lotes.t->n_classes, "configurations",
                (json_int_t)cfg->lotes.t->n_configs, "bins", (json_int_t)cfg->lotes.t->n_bins);
    ext_log(EXT_LOG_INFO, "serving", "{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:b, s:I}", "listen",
            cfg->listen, "port", (int)ext_server_port(s), "url_prefix", cfg->prefix, "policy",
            cfg->policy, "eviction", cfg->eviction, "mode", kube ? "online" : "offline", "version",
            LOTUS_VERSION, "tls", cfg->tls_cert[0] != '\0', "threads", (json_int_t)cfg->threads);
    for (;;) {
        sig = sigtimedwait(sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        if (sig == SIGHUP)
            on_sighup(cfg, s);
        else
            ext_log_flush(false); /* the count of a warn flood that stopped, within a second */
    }
    ext_log(EXT_LOG_INFO, "shutting down: draining in-flight requests", "{s:s, s:I}", "signal",
            sig == SIGTERM ? "SIGTERM" : "SIGINT", "timeout_ms",
            (json_int_t)cfg->shutdown_timeout_ms);
    left = ext_server_drain(s, cfg->shutdown_timeout_ms);
    ext_server_free(s);
    if (left > 0)
        ext_log(EXT_LOG_WARN, "shutdown timeout: requests cut", "{s:I}", "in_flight",
                (json_int_t)left);
    ext_log_flush(true);
    ext_log(EXT_LOG_INFO, "stopped", NULL);
    return 0;
}

/* Everything after ext_config_init; cfg is released by main. */
static int run(struct ext_config *cfg, int argc, char **argv)
{
    enum ext_config_action action;
    struct kube_client *kube = NULL;
    struct ext_cache *cache;
    struct lt_err e;
    sigset_t sigs;
    int rc;

    lt_err_init(&e, NULL);
    if (ext_config_parse_args(cfg, argc, argv, &action, &e) < 0) {
        if (cfg->known[0] != '\0')
            ext_log(EXT_LOG_ERROR, "invalid configuration", "{s:s, s:s, s:s}", "error", e.text,
                    "code", lt_err_name(e.code), "known", cfg->known);
        else
            fail(2, "invalid configuration", &e);
        return 2;
    }
    if (action == EXT_CONFIG_HELP) {
        ext_config_usage(stdout, argv[0]);
        return 0;
    }
    if (action == EXT_CONFIG_VERSION) {
        printf("lotus-extender %s\n", LOTUS_VERSION);
        return 0;
    }
    if (action == EXT_CONFIG_PRINT)
        return print_config(cfg);
    ext_log_set_level(cfg->level);
    malloc_tune();
    raise_fd_limit(cfg);

    /* Before any thread starts: libcurl's global state and the signal mask. */
    if (kube_global_init(&e) < 0)
        return fail(1, "cannot initialise libcurl", &e);
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    if (cfg->cluster_file[0] == '\0' && (kube = kube_open(cfg, &e)) == NULL) {
        rc = fail(1, "cannot configure the API server client", &e);
        goto out_global;
    }
    cache = cache_open(cfg, kube, &e);
    if (cache == NULL) {
        rc = fail(1, kube ? "cannot start the cluster cache" : "cannot load --cluster-file", &e);
        goto out_kube;
    }
    rc = serve(cfg, cache, kube, &sigs);
    ext_cache_free(cache);
out_kube:
    kube_client_free(kube);
out_global:
    kube_global_cleanup();
    return rc;
}

int main(int argc, char **argv)
{
    struct ext_config cfg;
    int rc;

    ext_config_init(&cfg);
    rc = run(&cfg, argc, argv);
    ext_config_release(&cfg);
    return rc;
}
