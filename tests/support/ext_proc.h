/* ext_proc.h -- test support for the lotus-extender integration tests and benchmark: starting
 * the binary on loopback, waiting for its port, talking HTTP to it with libcurl, stopping it.
 *
 * The server writes its JSON log to a file; its port is read from the "serving" line (the
 * binary listens on 127.0.0.1:0). Only ep_die exits; the other functions return what happened and
 * leave the verdict to the caller.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LOTUS_TESTS_EXT_PROC_H
#define LOTUS_TESTS_EXT_PROC_H

#include <stddef.h>
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

/* The integer value of the Prometheus sample line that starts with prefix, -1 if absent. */
long ep_sample(const char *text, const char *prefix);

#endif
