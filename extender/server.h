/* server.h -- lotus-extender's HTTP server: the four verbs, probes, metrics, draining.
 *
 * libmicrohttpd with an internal thread pool (--threads) polling with epoll, a connection
 * limit, a listen backlog, an idle timeout, a request deadline, a request-body limit and a
 * budget of all bodies in memory; HTTPS when a certificate is configured, optionally requiring
 * client certificates. Routes:
 *   POST {prefix}/filter, /prioritize, /preempt, /bind   extender/v1 (decide.h, kube.h)
 *   GET  /healthz  200 "ok" while serving       GET /readyz   200 once the cache synced, else 503
 *   GET  /metrics  Prometheus text              GET /version  JSON
 * Anything else is 404; a known path with the wrong method is 405; a body over --max-body is
 * 413, one past --body-budget 503. docs/extender.md ("HTTP API", "Limits and timeouts") states
 * the status of every failure.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_SERVER_H
#define EXT_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "config.h"
#include "kube.h"
#include "lt_err.h"

struct ext_server;

/* Starts serving on cfg's address. cfg, cache and kube (NULL in offline mode: bind then
 * answers an Error) are borrowed and must outlive the server. Returns NULL and fills err
 * (LT_EIO: address in use, unreadable TLS files, libmicrohttpd refused the options;
 * LT_ENOMEM). Owned; stop with ext_server_free. */
struct ext_server *ext_server_new(const struct ext_config *cfg, struct ext_cache *cache,
                                  struct kube_client *kube, struct lt_err *err);

/* Reads --tls-cert and --tls-key again (SIGHUP); the next handshakes use them, those under way
 * finish with the old ones. On an error (LT_EIO, LT_EPARSE: a file unreadable or not PEM;
 * LT_EINVAL: the key is not the certificate's, or no TLS), err says which and the certificate
 * in use is kept. Not thread-safe: one caller (main's signal loop). --tls-client-ca is read at
 * start only. */
LT_MUST_CHECK int ext_server_reload_tls(struct ext_server *s, struct lt_err *err);

/* The port actually bound (cfg's, or the kernel's choice for port 0). */
uint16_t ext_server_port(const struct ext_server *s);

/* Stops accepting connections (the listening socket is closed), answers every later request
 * on open connections with "Connection: close", and waits up to timeout_ms for requests in
 * flight to finish. Returns the number still in flight when it gave up (0: drained). */
size_t ext_server_drain(struct ext_server *s, int64_t timeout_ms);

/* Stops the daemon (closing every connection) and frees s. NULL is a no-op. */
void ext_server_free(struct ext_server *s);

#endif
