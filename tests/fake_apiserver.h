/* fake_apiserver.h -- an in-process fake Kubernetes API server for tests (libmicrohttpd).
 *
 * Listens on 127.0.0.1 on an ephemeral port. Serves, for the resources "nodes" and "pods":
 *   GET /api/v1/{res}?limit=N&continue=T      LIST of the stored objects, paged; the list's
 *                                             metadata.resourceVersion is the current RV
 *   GET /api/v1/{res}?watch=1&...             a chunked WATCH stream fed by the fake_push_*
 *                                             calls below, one JSON object per line
 *   POST /api/v1/namespaces/{ns}/pods/{name}/binding
 *                                             sets the stored pod's spec.nodeName; 201 with a
 *                                             Status, 409 on a uid mismatch, an already bound
 *                                             pod or when the test asks for it
 *   PATCH /api/v1/namespaces/{ns}/pods/{name}  a JSON merge patch (Content-Type
 *                                             application/merge-patch+json, else 415) of
 *                                             metadata.labels, metadata.uid a precondition
 *                                             (409); 200 with the pod; recorded
 * Every request is recorded ("GET /api/v1/pods?watch=1&resourceVersion=7&..."), so a test can
 * assert what the client sent; with a token set, requests without "Authorization: Bearer
 * <token>" get 401.
 *
 * Resource versions are one counter for the whole server, starting at 100 and advanced by
 * every stored change and bookmark; tests predict them from the push calls' results.
 *
 * Stream items go to a per-resource queue that the connected WATCH stream of that resource
 * consumes in order (items pushed while no stream is connected wait for the next one). A
 * stream also ends when the client closes its side.
 *
 * Threads: every function may be called from the test's thread while the server runs; a
 * mutex guards the state. MHD runs a thread per connection.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FAKE_APISERVER_H
#define FAKE_APISERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum fake_res { FAKE_NODES, FAKE_PODS, FAKE_RES_N };

struct fake_api;

/* Starts the server; NULL if it cannot (message on stderr). Free with fake_api_stop(). */
struct fake_api *fake_api_start(void);

/* Ends every stream, stops the server and frees everything. NULL is a no-op. */
void fake_api_stop(struct fake_api *f);

/* "http://127.0.0.1:PORT" (borrowed, valid until fake_api_stop). */
const char *fake_api_url(const struct fake_api *f);

/* Requires "Authorization: Bearer <token>" from now on; NULL turns the check off. */
void fake_api_set_token(struct fake_api *f, const char *token);

/* Stores obj (stolen) as if created: metadata.resourceVersion set to the next RV, which is
 * returned. No stream event is queued. */
int64_t fake_api_add(struct fake_api *f, enum fake_res r, json_t *obj);

/* Applies type ("ADDED", "MODIFIED", "DELETED") to the store and queues the event line with
 * obj (stolen), whose metadata.resourceVersion is set to the next RV, which is returned. Any
 * other type ("BOOKMARK", "ERROR") is queued as given, without touching the store or the RV
 * (returns 0). */
int64_t fake_push_event(struct fake_api *f, enum fake_res r, const char *type, json_t *obj);

/* Like fake_push_event for ADDED/MODIFIED/DELETED, but the line is sent as two chunks, cut
 * after `at` bytes, with a pause between them so the client sees them separately. */
int64_t fake_push_event_split(struct fake_api *f, enum fake_res r, const char *type, json_t *obj,
                              size_t at);

/* Queues a BOOKMARK at a new RV (returned). */
int64_t fake_push_bookmark(struct fake_api *f, enum fake_res r);

/* Queues an ERROR event carrying a Status with code 410, reason Expired. */
void fake_push_error_410(struct fake_api *f, enum fake_res r);

/* Queues a raw line (a '\n' is appended), for malformed input. */
void fake_push_raw(struct fake_api *f, enum fake_res r, const char *line);

/* Queues a drop: the stream's connection is closed without the final chunk. */
void fake_push_drop(struct fake_api *f, enum fake_res r);

/* Queues a clean end of the stream (the final zero chunk), like a server timeout. */
void fake_push_end(struct fake_api *f, enum fake_res r);

/* The next `count` WATCH requests of r answer HTTP `status` with a Status body (410 gives
 * reason Expired) instead of a stream. */
void fake_api_fail_watch(struct fake_api *f, enum fake_res r, int status, int count);

/* The next `count` LIST requests of r that carry a continue token answer 410 Expired. */
void fake_api_expire_continue(struct fake_api *f, enum fake_res r, int count);

/* The next binding request answers 409 with this message (copied). */
void fake_api_bind_conflict_next(struct fake_api *f, const char *message);

/* The next binding request is answered only after ms milliseconds (a slow API server); the
 * binding takes effect then, whether the client still waits or not. */
void fake_api_bind_delay_next(struct fake_api *f, int ms);

/* The same for the next count binding requests. */
void fake_api_bind_delay(struct fake_api *f, int ms, int count);

/* The node the stored pod ns/name is bound to, copied into out (cap bytes); false if the pod
 * is unknown or unbound. */
bool fake_api_pod_node(struct fake_api *f, const char *ns, const char *name, char *out, size_t cap);

/* The next pod PATCH answers this HTTP status (e.g. 500) without changing the pod. */
void fake_api_patch_fail_next(struct fake_api *f, int status);

/* Number of pod PATCHes answered 200 so far. */
size_t fake_api_patches(struct fake_api *f);

/* Copies the body of the last pod PATCH received (answered or not) into out; false if none. */
bool fake_api_last_patch(struct fake_api *f, char *out, size_t cap);

/* Copies label key of the stored pod ns/name into out; false if the pod or label is absent. */
bool fake_api_pod_label(struct fake_api *f, const char *ns, const char *name, const char *key,
                        char *out, size_t cap);

/* Number of binding requests answered 201 so far. */
size_t fake_api_bindings(struct fake_api *f);

/* Number of requests recorded so far. */
size_t fake_api_request_count(struct fake_api *f);

/* Copies request i ("METHOD /path?query") into out; its arrival time (CLOCK_MONOTONIC ms)
 * into *at_ms when non-NULL. False if i is out of range. */
bool fake_api_request(struct fake_api *f, size_t i, char *out, size_t cap, int64_t *at_ms);

/* Waits up to timeout_ms for a request with index >= from whose text contains needle; true
 * and its index in *index (may be NULL) if one arrives. */
bool fake_api_wait_request(struct fake_api *f, const char *needle, size_t from, int timeout_ms,
                           size_t *index);

/* Number of WATCH streams currently connected for r. */
int fake_api_streams(struct fake_api *f, enum fake_res r);

#endif
