/* ext_proc.h -- test support for the lotus-extender integration tests and benchmark: starting
 * the binary on loopback, waiting for its port, talking HTTP to it with libcurl, stopping it.
 *
 * The server writes its JSON log to a file; its port is read from the "serving" line (the
 * binary listens on 127.0.0.1:0). The low-level functions (ep_spawn, ep_wait_port, ep_http, ...)
 * return what happened and leave the verdict to the caller; the harness on top of them
 * (ep_srv_start, ep_srv_stop, ep_wait_ready) dies through ep_die, which is what every test
 * would do. Servers started by ep_srv_start are registered until stopped, so that one cleanup,
 * ep_srv_cleanup, can kill them and dump their logs when a check fails.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LOTUS_TESTS_EXT_PROC_H
#define LOTUS_TESTS_EXT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <curl/curl.h>
#include <jansson.h>

/* The string value of v, "" if v is not a string. */
const char *ep_jstr(const json_t *v);

/* Registers what ep_die runs before it exits (dump the server logs, kill the servers). */
void ep_at_die(void (*cleanup)(void));

/* Prints "not ok - " and the message, with a newline, to stderr, runs the ep_at_die cleanup
 * and exits 1. */
void ep_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Prints "ok - " and the message, with a newline, to stdout and flushes it. */
void ep_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copies the file at path to stderr under a "--- title ---" line; nothing if unreadable. */
void ep_dump_log(const char *path, const char *title);

/* Starts argv[0] with argv (NULL-terminated), stdout to /dev/null and stderr to the file log
 * (truncated). Returns 0 or posix_spawn's error number. */
int ep_spawn(const char *const *argv, const char *log, pid_t *pid);

/* The port of the "serving" line of the log, 0 if not there yet. */
int ep_find_port(const char *log);

/* Polls log every 10 ms, up to tries times, for the "serving" line. Returns the port; 0 if it
 * did not come; -1 if pid exited meanwhile (its wait status in *status). */
int ep_wait_port(pid_t pid, const char *log, int tries, int *status);

/* Waits up to ms for pid to exit; returns its wait status, -1 on timeout. */
int ep_wait_exit(pid_t pid, int ms);

/* A response body grown by ep_on_data (NUL-terminated; free p). */
struct ep_body {
    char *p;
    size_t len;
};

/* CURLOPT_WRITEFUNCTION for a struct ep_body. */
size_t ep_on_data(char *p, size_t size, size_t n, void *arg);

/* Sets on c the URL, the body sink b, a timeout of timeout_ms and NOSIGNAL. */
void ep_curl_setup(CURL *c, const char *url, struct ep_body *b, long timeout_ms);

/* GET (post NULL) or POST post to http://127.0.0.1:port/path on a new handle, the body into b.
 * Returns the HTTP status, 0 if no answer arrived. */
long ep_http(int port, const char *path, const char *post, struct ep_body *b, long timeout_ms);

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t ep_now_ms(void);

/* A TCP connection to 127.0.0.1:port; -1 (errno set) if it cannot be made. */
int ep_dial(int port);

/* Sends all n bytes of p (no SIGPIPE); false if the peer has closed the connection. */
bool ep_send_all(int fd, const char *p, size_t n);

/* A lotus-extender started by ep_srv_start. */
struct ep_srv {
    const char *name; /* in messages and the log dump's title; borrowed */
    pid_t pid;        /* 0 once it is known to have exited */
    int port;         /* from its "serving" log line */
    char log[256];    /* its stderr: the JSON log */
};

/* Starts argv[0] with the flags of argv and then those of extra (both NULL-terminated; extra
 * may be NULL; 63 in all at most), stderr to log (truncated), and waits up to tries x 10 ms for
 * its port. Registers s (which must stay valid) for ep_srv_cleanup until ep_srv_stop or
 * ep_srv_forget. Dies if the process cannot be started, exits, or prints no "serving" line. */
void ep_srv_start(struct ep_srv *s, const char *name, const char *log, const char *const *argv,
                  const char *const *extra, int tries);

/* Registers pid, a server the caller started with stderr to log (for what ep_spawn cannot set
 * up), and waits for its port as ep_srv_start does; dies as it does. */
void ep_srv_adopt(struct ep_srv *s, const char *name, const char *log, pid_t pid, int tries);

/* Sends SIGTERM and waits up to ms for the exit. Dies unless it is exit(0), s still registered
 * so that the cleanup dumps the log (an ASan report); otherwise forgets s and removes its log. */
void ep_srv_stop(struct ep_srv *s, int ms);

/* Forgets s: ep_srv_cleanup no longer kills it nor dumps its log. For a server whose exit the
 * test waited for itself. */
void ep_srv_forget(struct ep_srv *s);

/* For ep_at_die: kills every registered server still running, waits for it, dumps its log. */
void ep_srv_cleanup(void);

/* Polls GET /readyz on port every 10 ms, up to tries times, until it answers 200; dies with
 * "<what>: /readyz not 200 within N s" otherwise. */
void ep_wait_ready(int port, int tries, const char *what);

/* The integer value of the Prometheus sample line that starts with prefix, -1 if absent. */
long ep_sample(const char *text, const char *prefix);

#endif
