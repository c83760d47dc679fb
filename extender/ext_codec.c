/* ext_codec.c -- extender/v1 requests in, Go-exact responses out; core/v1 Pod and Node summaries.
 *
 * Design: a body is parsed with Jansson (duplicate keys allowed: Go keeps the last, and so
 * does Jansson) and walked by one small decoder per type, each given the JSON path of its value
 * for messages ("Pod.spec.containers[0].resources.requests.cpu: ..."). The decoded structs
 * borrow strings from the document, which the args struct owns. Requests are untrusted: every
 * type is checked, every array is bounded (EXT_MAX_*), and null is accepted where Go's
 * encoding/json accepts it and the value has a natural zero (pointers to lists, maps, strings,
 * numbers). Null elements of Nodes.items and of Pods lists, which Go would decode as nil
 * pointers no sender produces, are errors instead.
 *
 * ExtenderArgs (filter, prioritize) is the exception: a full-Nodes body is mostly node objects
 * of which only metadata.name is used, and as a Jansson tree it cost ~100,000 allocations per
 * 500-node request. Its body is walked once with the strict cursor of json_scan.h, which checks
 * all of it and records byte ranges; only the Pod value is parsed with Jansson (from its range),
 * and a node becomes its name and its bytes. Every choice the tree walk made (which of several
 * matching keys counts, what is an error, the messages) is kept; the section "ExtenderArgs in
 * one pass" says how, and tests/support/ext_args_ref.c is the tree walk the tests compare with.
 * A body the cursor refuses is parsed with Jansson once more, so its message is Jansson's.
 *
 * Responses are written by hand into an ext_buf rather than built as json_t trees: the shapes
 * are fixed, Go's output rules (field order, sorted map keys, null for nil, HTML-safe string
 * escapes) are easier to state directly, and it keeps the filter answer for 500 names to one
 * pass. Node objects echoed in Nodes mode are copied from the request's bytes, so a node
 * kube-scheduler sent comes back exactly as sent.
 *
 * Pod requests follow component-helpers resource.PodRequests (read at kubernetes/kubernetes
 * 0085214), including the sidecar rule of KEP-753; ext_codec.h states the formula and what is
 * left out.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ext_codec.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"
#include "lt_mem.h"
#include "lt_vec.h"

/* Longest JSON path built here, e.g.
 * NodeNameToVictims["<40 bytes>"].Pods[9999].spec.initContainers[1023].resources.limits.cpu
 * is about 120 bytes; a longer one (a long resource name) is cut, which only shortens a message. */
#define PATH_LEN 192

/* Longest excerpt of a string (a value or a map key) quoted in a message. */
#define QUOTE_MAX 40

/* Resources read from a ResourceList; every other entry is only checked. */
enum { R_CPU, R_MEM, R_EPH, R_PODS, R_N };

static const char *const res_names[R_N] = {"cpu", "memory", "ephemeral-storage", "pods"};

/* The label and annotation that protect a pod from preemption (issue 6). */
#define STICKY_KEY EXT_STICKY_LABEL

/* A decoded ResourceList: which of our resources it names and their values. */
struct rlist {
    struct ext_qty q[R_N];
    bool has[R_N];
};

/* ------------------------------------------------------------------------------------------
 * Paths and messages
 */

/* Paths are built with plain copies rather than snprintf: they are built for every member and
 * element on the way down, error or not. path_cat appends n bytes to the path of logical
 * length *w in dst, keeping at most PATH_LEN - 1 of them, as snprintf would; path_end ends it
 * and marks a path that did not fit PATH_LEN bytes (it only shortens a message). */
static void path_cat(char *dst, size_t *w, const char *s, size_t n)
{
    if (*w < PATH_LEN - 1) {
        size_t room = PATH_LEN - 1 - *w;

        memcpy(dst + *w, s, n < room ? n : room);
    }
    *w += n;
}

static void path_end(char *dst, size_t w)
{
    if (w >= PATH_LEN)
        memcpy(dst + PATH_LEN - 4, "...", 4);
    else
        dst[w] = '\0';
}

static void path_key(char *dst, const char *at, const char *key)
{
    size_t w = 0;

    path_cat(dst, &w, at, strlen(at));
    if (at[0] != '\0')
        path_cat(dst, &w, ".", 1);
    path_cat(dst, &w, key, strlen(key));
    path_end(dst, w);
}

static void path_index(char *dst, const char *at, size_t i)
{
    char num[24];
    size_t k = sizeof(num), w = 0;

    num[--k] = ']';
    do {
        num[--k] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    num[--k] = '[';
    path_cat(dst, &w, at, strlen(at));
    path_cat(dst, &w, num + k, sizeof(num) - k);
    path_end(dst, w);
}

static void path_map(char *dst, const char *at, const char *key)
{
    size_t n = strlen(key), w = 0;

    path_cat(dst, &w, at, strlen(at));
    path_cat(dst, &w, "[\"", 2);
    path_cat(dst, &w, key, n > QUOTE_MAX ? QUOTE_MAX : n);
    if (n > QUOTE_MAX)
        path_cat(dst, &w, "...", 3);
    path_cat(dst, &w, "\"]", 2);
    path_end(dst, w);
}

/* A map member: at.key for a plain key, at["key"] when the key has dots, slashes or other
 * characters that would make the path ambiguous ("requests[\"nvidia.com/gpu\"]"). */
static void path_member(char *dst, const char *at, const char *key)
{
    size_t plain = strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

    if (key[0] != '\0' && key[plain] == '\0' && plain <= QUOTE_MAX)
        path_key(dst, at, key);
    else
        path_map(dst, at, key);
}

/* Records "AT: message" with code. */
LT_PRINTF(4, 5)
static int bad(struct lt_err *err, int code, const char *at, const char *fmt, ...)
{
    char msg[LT_ERR_TEXT];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return lt_err_set(err, code, 0, 0, "%s: %s", at[0] ? at : "request body", msg);
}

void ext_json_describe(const json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, size, "an object");
        break;
    case JSON_ARRAY:
        snprintf(buf, size, "an array");
        break;
    case JSON_STRING:
        snprintf(buf, size, "the string \"%.*s\"%s", QUOTE_MAX, json_string_value(v),
                 json_string_length(v) > QUOTE_MAX ? "..." : "");
        break;
    case JSON_INTEGER:
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(buf, size, "%.17g", json_real_value(v));
        break;
    case JSON_TRUE:
        snprintf(buf, size, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, size, "false");
        break;
    case JSON_NULL:
    default:
        snprintf(buf, size, "null");
        break;
    }
}

static int bad_value(struct lt_err *err, const char *at, const char *expected, const json_t *v)
{
    char got[QUOTE_MAX + 32];

    ext_json_describe(v, got, sizeof(got));
    return bad(err, LT_EINVAL, at, "expected %s, got %s", expected, got);
}

/* ------------------------------------------------------------------------------------------
 * Go's case-insensitive field matching (extender/v1 has no json tags)
 */

/* True if JSON key `key` names Go field `field` under encoding/json's folding: ASCII letters
 * in either case, and the Kelvin sign (U+212A) and long s (U+017F), which fold to k and s. */
static bool go_key_matches(const char *key, const char *field)
{
    const unsigned char *k = (const unsigned char *)key;

    for (const char *f = field; *f; f++) {
        char lf = (char)(*f | 0x20); /* fields are ASCII letters */

        if (*k < 0x80 && (char)(*k | 0x20) == lf) {
            k++;
        } else if (lf == 'k' && k[0] == 0xE2 && k[1] == 0x84 && k[2] == 0xAA) {
            k += 3;
        } else if (lf == 's' && k[0] == 0xC5 && k[1] == 0xBF) {
            k += 2;
        } else {
            return false;
        }
    }
    return *k == '\0';
}

/* The value of Go field `field` in obj (borrowed), NULL if absent: the last matching key wins,
 * as in encoding/json, which assigns each matching key in document order. */
static json_t *go_field(json_t *obj, const char *field)
{
    const char *key;
    json_t *v, *found = NULL;

    json_object_foreach(obj, key, v)
    {
        if (go_key_matches(key, field))
            found = v;
    }
    return found;
}

/* ------------------------------------------------------------------------------------------
 * Scalars
 */

/* A string value at `at` (null: ""), at most max_len bytes (0: no limit). *out is borrowed. */
static int str_value(json_t *v, const char *at, size_t max_len, const char **out,
                     struct lt_err *err)
{
    if (v == NULL || json_is_null(v)) {
        *out = "";
        return 0;
    }
    if (!json_is_string(v))
        return bad_value(err, at, "a string", v);
    if (max_len > 0 && json_string_length(v) > max_len)
        return bad(err, LT_ERANGE, at, "string of %zu bytes is longer than the limit of %zu",
                   json_string_length(v), max_len);
    *out = json_string_value(v);
    return 0;
}

/* The exact-key (core/v1) string member of obj. */
static int str_member(json_t *obj, const char *at, const char *key, size_t max_len,
                      const char **out, struct lt_err *err)
{
    char sub[PATH_LEN];

    path_key(sub, at, key);
    return str_value(json_object_get(obj, key), sub, max_len, out, err);
}

/* An object or null/absent (*out = NULL) at `at`. */
static int opt_object(json_t *v, const char *at, json_t **out, struct lt_err *err)
{
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return bad_value(err, at, "an object", v);
    *out = v;
    return 0;
}

/* An array or null/absent (*n = 0) of at most max entries. */
static int opt_array(json_t *v, const char *at, size_t max, const char *what, size_t *n,
                     struct lt_err *err)
{
    *n = 0;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return bad_value(err, at, "an array", v);
    if (json_array_size(v) > max)
        return bad(err, LT_ERANGE, at, "%zu %s exceed the limit of %zu", json_array_size(v), what,
                   max);
    *n = json_array_size(v);
    return 0;
}

/* An integer in [lo, hi], null meaning 0. */
static int int_value(json_t *v, const char *at, int64_t lo, int64_t hi, int64_t *out,
                     struct lt_err *err)
{
    char expected[80];

    if (v == NULL || json_is_null(v)) {
        *out = 0;
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) {
        *out = json_integer_value(v);
        return 0;
    }
    if (lo == INT64_MIN && hi == INT64_MAX)
        snprintf(expected, sizeof(expected), "an integer");
    else
        snprintf(expected, sizeof(expected), "an integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
    return bad_value(err, at, expected, v);
}

/* A boolean, null meaning false. */
static int bool_value(json_t *v, const char *at, bool *out, struct lt_err *err)
{
    if (v == NULL || json_is_null(v)) {
        *out = false;
        return 0;
    }
    if (!json_is_boolean(v))
        return bad_value(err, at, "true or false", v);
    *out = json_is_true(v);
    return 0;
}

/* A Quantity value: a string as Kubernetes writes it, or a bare JSON number (Quantity's
 * UnmarshalJSON parses the number's text; for a real we use its shortest round-trip text,
 * which is the text Go saw for every number a Go client writes), or null (zero). */
static int qty_value(json_t *v, const char *at, struct ext_qty *out, struct lt_err *err)
{
    char text[40];
    int w = 0;

    out->units = 0;
    out->nano = 0;
    if (json_is_null(v))
        return 0;
    if (json_is_string(v))
        return ext_qty_parse(json_string_value(v), json_string_length(v), out, at, err);
    if (json_is_integer(v)) {
        w = snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        for (int prec = 1; prec <= 17; prec++) {
            w = snprintf(text, sizeof(text), "%.*g", prec, json_real_value(v));
            double back = strtod(text, NULL);

            if (!(back < json_real_value(v)) && !(back > json_real_value(v)))
                break; /* the shortest text that reads back as the same double */
        }
    } else {
        return bad_value(err, at, "a quantity string", v);
    }
    return ext_qty_parse(text, (size_t)(w > 0 ? w : 0), out, at, err);
}

/* A ResourceList (map of resource name to Quantity) or null/absent. Every value is parsed, so
 * a malformed extended resource fails the object as it would in Go; ours are kept. */
static int rlist_value(json_t *v, const char *at, struct rlist *out, struct lt_err *err)
{
    const char *key;
    json_t *q, *obj = NULL;
    char sub[PATH_LEN];
    int rc;

    memset(out, 0, sizeof(*out));
    rc = opt_object(v, at, &obj, err);
    if (rc < 0 || obj == NULL)
        return rc;
    json_object_foreach(obj, key, q)
    {
        struct ext_qty x;
        int r;

        path_member(sub, at, key);
        rc = qty_value(q, sub, &x, err);
        if (rc < 0)
            return rc;
        for (r = 0; r < R_N && strcmp(key, res_names[r]) != 0; r++)
            ;
        if (r < R_N) {
            out->q[r] = x;
            out->has[r] = true;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Pods
 */

/* The effective requests of one container (requests, else limits, per resource) and whether it
 * is a restartable init container (restartPolicy: Always). A null container is empty. */
static int container_value(json_t *c, const char *at, struct ext_qty q[3], bool *restartable,
                           struct lt_err *err)
{
    struct rlist req, lim;
    json_t *res = NULL;
    const char *policy = "";
    char sub[PATH_LEN], sub2[PATH_LEN];
    int rc;

    memset(q, 0, 3 * sizeof(q[0]));
    *restartable = false;
    if (json_is_null(c))
        return 0;
    if (!json_is_object(c))
        return bad_value(err, at, "a container object", c);
    path_key(sub, at, "resources");
    rc = opt_object(json_object_get(c, "resources"), sub, &res, err);
    if (rc == 0 && res != NULL) {
        path_key(sub2, sub, "requests");
        rc = rlist_value(json_object_get(res, "requests"), sub2, &req, err);
        path_key(sub2, sub, "limits");
        if (rc == 0)
            rc = rlist_value(json_object_get(res, "limits"), sub2, &lim, err);
        for (int r = 0; rc == 0 && r < 3; r++)
            q[r] = req.has[r] ? req.q[r] : lim.has[r] ? lim.q[r] : q[r];
    }
    if (rc == 0)
        rc = str_member(c, at, "restartPolicy", 0, &policy, err);
    if (rc == 0)
        *restartable = strcmp(policy, "Always") == 0;
    return rc;
}

/* a[r] += b[r] for the three resources; the path names the pod for the overflow message. */
static int qty3_add(struct ext_qty a[3], const struct ext_qty b[3], const char *at,
                    struct lt_err *err)
{
    for (int r = 0; r < 3; r++) {
        if (ext_qty_add(&a[r], &b[r]) < 0)
            return bad(err, LT_ERANGE, at, "sum of '%s' requests exceeds 2^63-1", res_names[r]);
    }
    return 0;
}

static void qty3_max(struct ext_qty a[3], const struct ext_qty b[3])
{
    for (int r = 0; r < 3; r++) {
        if (ext_qty_cmp(&b[r], &a[r]) > 0)
            a[r] = b[r];
    }
}

/* The aggregate of spec.containers and spec.initContainers (PodRequests before the pod-level
 * and overhead steps) into total[3]. */
static int containers_total(json_t *spec, const char *at, struct ext_qty total[3],
                            struct lt_err *err)
{
    struct ext_qty one[3], sidecars[3] = {{0, 0}}, init_max[3] = {{0, 0}}, cand[3];
    json_t *cs = json_object_get(spec, "containers");
    json_t *ics = json_object_get(spec, "initContainers");
    char sub[PATH_LEN], el[PATH_LEN];
    size_t n, n_init;
    bool restartable;
    int rc;

    memset(total, 0, 3 * sizeof(total[0]));
    path_key(sub, at, "containers");
    rc = opt_array(cs, sub, EXT_MAX_CONTAINERS, "containers", &n, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        path_index(el, sub, i);
        rc = container_value(json_array_get(cs, i), el, one, &restartable, err);
        if (rc == 0)
            rc = qty3_add(total, one, at, err);
    }
    path_key(sub, at, "initContainers");
    if (rc == 0)
        rc = opt_array(ics, sub, EXT_MAX_CONTAINERS, "init containers", &n_init, err);
    if (rc == 0 && n + n_init > EXT_MAX_CONTAINERS)
        rc = bad(err, LT_ERANGE, at, "%zu containers and init containers exceed the limit of %d",
                 n + n_init, EXT_MAX_CONTAINERS);
    for (size_t i = 0; rc == 0 && i < n_init; i++) {
        path_index(el, sub, i);
        rc = container_value(json_array_get(ics, i), el, one, &restartable, err);
        if (rc == 0 && restartable) {
            /* A sidecar runs beside everything after it: it adds to the steady state and to
             * every later init container's peak. */
            rc = qty3_add(total, one, at, err);
            if (rc == 0)
                rc = qty3_add(sidecars, one, at, err);
            memcpy(cand, sidecars, sizeof(cand));
        } else if (rc == 0) {
            memcpy(cand, one, sizeof(cand));
            rc = qty3_add(cand, sidecars, at, err);
        }
        if (rc == 0)
            qty3_max(init_max, cand);
    }
    if (rc == 0)
        qty3_max(total, init_max);
    return rc;
}

/* Pod-level requests (cpu, memory only) replace the aggregate; then the overhead is added;
 * then each total is rounded once into out. */
static int pod_requests(json_t *spec, const char *at, struct ext_resources *out, struct lt_err *err)
{
    struct ext_qty total[3];
    struct rlist pod_level, overhead;
    json_t *res = NULL;
    char sub[PATH_LEN], sub2[PATH_LEN];
    int rc = containers_total(spec, at, total, err);

    path_key(sub, at, "resources");
    if (rc == 0)
        rc = opt_object(json_object_get(spec, "resources"), sub, &res, err);
    if (rc == 0 && res != NULL) {
        path_key(sub2, sub, "requests");
        rc = rlist_value(json_object_get(res, "requests"), sub2, &pod_level, err);
        for (int r = R_CPU; rc == 0 && r <= R_MEM; r++)
            total[r] = pod_level.has[r] ? pod_level.q[r] : total[r];
    }
    path_key(sub, at, "overhead");
    if (rc == 0)
        rc = rlist_value(json_object_get(spec, "overhead"), sub, &overhead, err);
    if (rc < 0)
        return rc;
    rc = qty3_add(total, overhead.q, at, err);
    if (rc < 0)
        return rc;
    if (ext_qty_milli(&total[R_CPU], &out->cpu_milli) < 0)
        return bad(err, LT_ERANGE, at, "cpu request exceeds 2^63-1 millicores");
    if (ext_qty_value(&total[R_MEM], &out->mem_bytes) < 0 ||
        ext_qty_value(&total[R_EPH], &out->ephemeral_bytes) < 0)
        return bad(err, LT_ERANGE, at, "memory or ephemeral-storage request exceeds 2^63-1");
    return 0;
}

/* Checks map v (labels or annotations) holds strings; sets *sticky if it has
 * lotus.io/sticky: "true" (and leaves it alone otherwise). */
static int string_map(json_t *v, const char *at, bool *sticky, struct lt_err *err)
{
    const char *key;
    json_t *obj = NULL, *s;
    char sub[PATH_LEN];
    int rc = opt_object(v, at, &obj, err);

    if (rc < 0 || obj == NULL)
        return rc;
    json_object_foreach(obj, key, s)
    {
        if (!json_is_string(s) && !json_is_null(s)) {
            path_map(sub, at, key);
            return bad_value(err, sub, "a string", s);
        }
        if (strcmp(key, STICKY_KEY) == 0 && json_is_string(s) &&
            strcmp(json_string_value(s), "true") == 0)
            *sticky = true;
    }
    return 0;
}

static int pod_metadata(json_t *pod, const char *at, struct ext_pod *out, struct lt_err *err)
{
    json_t *meta = NULL, *del;
    char sub[PATH_LEN], sub2[PATH_LEN];
    int rc;

    path_key(sub, at, "metadata");
    rc = opt_object(json_object_get(pod, "metadata"), sub, &meta, err);
    if (rc < 0 || meta == NULL)
        return rc;
    rc = str_member(meta, sub, "namespace", EXT_MAX_NAME, &out->ns, err);
    if (rc == 0)
        rc = str_member(meta, sub, "name", EXT_MAX_NAME, &out->name, err);
    if (rc == 0)
        rc = str_member(meta, sub, "uid", EXT_MAX_NAME, &out->uid, err);
    path_key(sub2, sub, "labels");
    if (rc == 0)
        rc = string_map(json_object_get(meta, "labels"), sub2, &out->sticky, err);
    path_key(sub2, sub, "annotations");
    if (rc == 0)
        rc = string_map(json_object_get(meta, "annotations"), sub2, &out->sticky, err);
    del = json_object_get(meta, "deletionTimestamp");
    path_key(sub2, sub, "deletionTimestamp");
    if (rc == 0 && del != NULL && !json_is_null(del) && !json_is_string(del))
        rc = bad_value(err, sub2, "a timestamp string", del);
    out->terminating = del != NULL && json_is_string(del);
    return rc;
}

int ext_pod_from_json(json_t *obj, const char *path, struct ext_pod *out, struct lt_err *err)
{
    json_t *spec = NULL, *status = NULL;
    int64_t prio = 0;
    char sub[PATH_LEN], sub2[PATH_LEN];
    int rc;

    if (path == NULL)
        path = "";
    memset(out, 0, sizeof(*out));
    out->ns = out->name = out->uid = out->node_name = out->phase = "";
    if (obj == NULL || !json_is_object(obj))
        return obj == NULL ? bad(err, LT_EINVAL, path, "missing pod")
                           : bad_value(err, path, "a pod object", obj);
    out->obj = obj;
    rc = pod_metadata(obj, path, out, err);
    path_key(sub, path, "spec");
    if (rc == 0)
        rc = opt_object(json_object_get(obj, "spec"), sub, &spec, err);
    if (rc == 0 && spec != NULL) {
        rc = str_member(spec, sub, "nodeName", EXT_MAX_NAME, &out->node_name, err);
        path_key(sub2, sub, "priority");
        if (rc == 0)
            rc = int_value(json_object_get(spec, "priority"), sub2, INT32_MIN, INT32_MAX, &prio,
                           err);
        out->priority = (int32_t)prio;
        if (rc == 0)
            rc = pod_requests(spec, sub, &out->req, err);
    }
    path_key(sub, path, "status");
    if (rc == 0)
        rc = opt_object(json_object_get(obj, "status"), sub, &status, err);
    if (rc == 0 && status != NULL)
        rc = str_member(status, sub, "phase", 0, &out->phase, err);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Nodes
 */

int ext_node_from_json(json_t *obj, const char *path, struct ext_node *out, struct lt_err *err)
{
    json_t *meta = NULL, *spec = NULL, *status = NULL, *alloc = NULL;
    struct rlist res;
    const char *which = "allocatable";
    char sub[PATH_LEN], sub2[PATH_LEN];
    int rc;

    if (path == NULL)
        path = "";
    memset(out, 0, sizeof(*out));
    out->name = "";
    if (obj == NULL || !json_is_object(obj))
        return obj == NULL ? bad(err, LT_EINVAL, path, "missing node")
                           : bad_value(err, path, "a node object", obj);
    out->obj = obj;
    path_key(sub, path, "metadata");
    rc = opt_object(json_object_get(obj, "metadata"), sub, &meta, err);
    if (rc == 0 && meta != NULL)
        rc = str_member(meta, sub, "name", EXT_MAX_NAME, &out->name, err);
    path_key(sub, path, "spec");
    if (rc == 0)
        rc = opt_object(json_object_get(obj, "spec"), sub, &spec, err);
    path_key(sub2, sub, "unschedulable");
    if (rc == 0 && spec != NULL)
        rc = bool_value(json_object_get(spec, "unschedulable"), sub2, &out->unschedulable, err);
    path_key(sub, path, "status");
    if (rc == 0)
        rc = opt_object(json_object_get(obj, "status"), sub, &status, err);
    if (rc < 0 || status == NULL)
        return rc;
    alloc = json_object_get(status, "allocatable");
    if (alloc == NULL || json_is_null(alloc)) {
        which = "capacity";
        alloc = json_object_get(status, "capacity");
    }
    path_key(sub2, sub, which);
    rc = rlist_value(alloc, sub2, &res, err);
    if (rc < 0)
        return rc;
    if (ext_qty_milli(&res.q[R_CPU], &out->alloc.cpu_milli) < 0)
        return bad(err, LT_ERANGE, sub2, "cpu exceeds 2^63-1 millicores");
    /* Values are at most INT64_MAX units with a nano part; Value() can overflow by one. */
    if (ext_qty_value(&res.q[R_MEM], &out->alloc.mem_bytes) < 0 ||
        ext_qty_value(&res.q[R_EPH], &out->alloc.ephemeral_bytes) < 0 ||
        ext_qty_value(&res.q[R_PODS], &out->max_pods) < 0)
        return bad(err, LT_ERANGE, sub2, "a quantity exceeds 2^63-1");
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Requests
 */

/* Records Jansson's failure je: LT_ENOMEM, or LT_EPARSE with its line, column and text. */
static int jansson_error(const json_error_t *je, struct lt_err *err)
{
    if (json_error_code(je) == json_error_out_of_memory)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory parsing JSON");
    return lt_err_set(err, LT_EPARSE, je->line > 0 ? je->line : 0,
                      je->line > 0 && je->column < 1 ? 1 : je->column, "%s", je->text);
}

/* Parses body into *root: LT_EPARSE with Jansson's line and column, or LT_ENOMEM. */
static int parse_body(const char *body, size_t len, json_t **root, struct lt_err *err)
{
    json_error_t je;

    if (body == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "request body: missing");
    *root = json_loadb(body, len, 0, &je);
    if (*root == NULL)
        return jansson_error(&je, err);
    if (!json_is_object(*root))
        return bad_value(err, "", "an object", *root);
    return 0;
}

/* The required Pod field of an args object. */
static int args_pod(json_t *root, struct ext_pod *pod, struct lt_err *err)
{
    json_t *v = go_field(root, "Pod");

    if (v == NULL || json_is_null(v))
        return bad(err, LT_EINVAL, "Pod", "missing pod (the field is absent or null)");
    return ext_pod_from_json(v, "Pod", pod, err);
}

void ext_args_init(struct ext_args *a)
{
    memset(a, 0, sizeof(*a));
}

void ext_args_release(struct ext_args *a)
{
    lt_free(a->nodes);
    lt_free(a->node_names);
    lt_free(a->text);
    json_decref(a->pod_doc);
    ext_args_init(a);
}

/* ------------------------------------------------------------------------------------------
 * ExtenderArgs in one pass (json_scan.h)
 *
 * A full-Nodes body is mostly node objects, of which only metadata.name is read. The walk
 * below steps through the top-level object, Nodes, Nodes.items[*] and their metadata with the
 * cursor and skips every other value after checking it; Pod alone is parsed with Jansson,
 * from its own byte range. What the walk records is exactly what the tree walk of the earlier
 * decoder read from Jansson's tree, including how duplicate keys resolve (see field_match);
 * tests/support/ext_args_ref.c keeps that tree walk as the reference the tests and the fuzz
 * target compare with.
 */

enum { F_POD, F_NODES, F_NAMES, F_N };

static const char *const field_names[F_N] = {"Pod", "Nodes", "NodeNames"};

/* Longest key, in bytes, that can match a field: "NodeName" plus a long s (2 bytes) is 10. */
#define FIELD_KEY_MAX 12

/* A spelling of a field's key met in the top-level object. */
struct seen_key {
    unsigned char field; /* F_* */
    unsigned char len;   /* bytes of text */
    char text[FIELD_KEY_MAX];
};

/* An element of Nodes.items as walked. */
struct walk_item {
    struct ext_jval v;    /* the element */
    struct ext_jval meta; /* its last "metadata" member, if v is an object */
    struct ext_jval name; /* that object's last "name" member */
};

struct args_walk {
    struct ext_jscan sc;
    struct ext_jval root;         /* the top-level value */
    struct ext_jval field[F_N];   /* the value each field resolves to; ABSENT if none */
    size_t winner[F_N];           /* its spelling's index in seen; SIZE_MAX if none */
    struct seen_key seen_init[4]; /* seen's first entries: one spelling per field is usual */
    struct seen_key *seen;        /* the distinct spellings met, in order of appearance */
    size_t n_seen, cap_seen;
    struct ext_jval items;     /* Nodes.items of the resolved Nodes object */
    struct walk_item *item;    /* its first min(n_items, EXT_MAX_NODES) elements; owned */
    size_t n_items, cap_items; /* elements counted (all), entries allocated */
    struct ext_jval *name;     /* NodeNames' first min(n_names, EXT_MAX_NODES) elements; owned */
    size_t n_names, cap_names; /* elements counted (all), entries allocated */
};

static void walk_init(struct args_walk *w, const char *body, size_t len)
{
    memset(w, 0, sizeof(*w));
    ext_jscan_init(&w->sc, body, len);
    for (int f = 0; f < F_N; f++)
        w->winner[f] = SIZE_MAX;
    w->seen = w->seen_init;
    w->cap_seen = sizeof(w->seen_init) / sizeof(w->seen_init[0]);
}

static void walk_release(struct args_walk *w)
{
    if (w->seen != w->seen_init)
        lt_free(w->seen);
    lt_free(w->item);
    lt_free(w->name);
}

/* Which field top-level key `key` names (F_N: none), and whether this occurrence's value is
 * the one the field resolves to (*win).
 *
 * The earlier decoder parsed the body with Jansson and took, for each field, go_field(): the
 * last key in Jansson's iteration order that matches it case-insensitively. Jansson keeps one
 * entry per distinct key, where that key first appeared, holding the value of its last
 * occurrence. So a field resolves to the spelling whose first appearance is the latest, with
 * the value of that spelling's last occurrence: {"Pod":A,"pod":B,"Pod":C} gives B. (Go's
 * encoding/json would give C; no sender repeats these keys.) An occurrence therefore wins if
 * its spelling is new, or is the current winner's; a repeat of an older spelling does not. */
static int field_match(struct args_walk *w, const struct ext_jval *key, int *field, bool *win)
{
    char text[6 * FIELD_KEY_MAX + 1];
    size_t n;
    int f;

    *field = F_N;
    *win = false;
    if (key->len - 2 > 6 * FIELD_KEY_MAX)
        return 0; /* unescapes to more than FIELD_KEY_MAX bytes */
    n = ext_jscan_unescape(&w->sc, key, text);
    if (n >= FIELD_KEY_MAX)
        return 0;
    text[n] = '\0';
    for (f = 0; f < F_N && !go_key_matches(text, field_names[f]); f++)
        ;
    if (f == F_N)
        return 0;
    *field = f;
    for (size_t i = 0; i < w->n_seen; i++) {
        if (w->seen[i].field == f && w->seen[i].len == n && memcmp(w->seen[i].text, text, n) == 0) {
            *win = i == w->winner[f];
            return 0;
        }
    }
    if (w->n_seen == w->cap_seen) {
        struct seen_key *p = lt_calloc(w->cap_seen * 2, sizeof(*p));

        if (p == NULL)
            return LT_ENOMEM;
        memcpy(p, w->seen, w->n_seen * sizeof(*p));
        if (w->seen != w->seen_init)
            lt_free(w->seen);
        w->seen = p;
        w->cap_seen *= 2;
    }
    w->seen[w->n_seen].field = (unsigned char)f;
    w->seen[w->n_seen].len = (unsigned char)n;
    memcpy(w->seen[w->n_seen].text, text, n);
    w->winner[f] = w->n_seen++;
    *win = true;
    return 0;
}

/* The metadata value of a node (depth 5): its last "name" member. */
static int walk_meta(struct args_walk *w, struct walk_item *it)
{
    struct ext_jval key, skip;
    bool first = true;
    int rc;

    it->name.type = EXT_J_ABSENT;
    if (ext_jscan_peek(&w->sc) != '{')
        return ext_jscan_value(&w->sc, 5, &it->meta);
    rc = ext_jscan_open(&w->sc, 5, &it->meta);
    while (rc == 0 && (rc = ext_jscan_member(&w->sc, &first, &it->meta, &key)) == 1) {
        if (ext_jscan_str_is(&w->sc, &key, "name"))
            rc = ext_jscan_value(&w->sc, 6, &it->name);
        else
            rc = ext_jscan_value(&w->sc, 6, &skip);
    }
    return rc;
}

/* One element of Nodes.items (depth 4): its last "metadata" member. */
static int walk_item(struct args_walk *w, struct walk_item *it)
{
    struct ext_jval key, skip;
    bool first = true;
    int rc;

    it->meta.type = it->name.type = EXT_J_ABSENT;
    if (ext_jscan_peek(&w->sc) != '{')
        return ext_jscan_value(&w->sc, 4, &it->v);
    rc = ext_jscan_open(&w->sc, 4, &it->v);
    while (rc == 0 && (rc = ext_jscan_member(&w->sc, &first, &it->v, &key)) == 1) {
        if (ext_jscan_str_is(&w->sc, &key, "metadata"))
            rc = walk_meta(w, it);
        else
            rc = ext_jscan_value(&w->sc, 5, &skip);
    }
    return rc;
}

/* Nodes.items (depth 3): every element counted, the first EXT_MAX_NODES recorded. */
static int walk_items(struct args_walk *w)
{
    struct ext_jval skip;
    bool first = true;
    int rc;

    w->n_items = 0;
    if (ext_jscan_peek(&w->sc) != '[')
        return ext_jscan_value(&w->sc, 3, &w->items);
    rc = ext_jscan_open(&w->sc, 3, &w->items);
    while (rc == 0 && (rc = ext_jscan_element(&w->sc, &first, &w->items)) == 1) {
        rc = 0;
        if (w->n_items < EXT_MAX_NODES) {
            rc = LT_VEC_RESERVE(w->item, w->cap_items, w->n_items + 1);
            if (rc == 0)
                rc = walk_item(w, &w->item[w->n_items]);
        } else {
            rc = ext_jscan_value(&w->sc, 4, &skip);
        }
        w->n_items++;
    }
    return rc;
}

/* The Nodes value (depth 2): for an object, its last "items" member. */
static int walk_nodes(struct args_walk *w, struct ext_jval *v)
{
    struct ext_jval key, skip;
    bool first = true;
    int rc;

    w->items.type = EXT_J_ABSENT;
    w->n_items = 0;
    if (ext_jscan_peek(&w->sc) != '{')
        return ext_jscan_value(&w->sc, 2, v);
    rc = ext_jscan_open(&w->sc, 2, v);
    while (rc == 0 && (rc = ext_jscan_member(&w->sc, &first, v, &key)) == 1) {
        if (ext_jscan_str_is(&w->sc, &key, "items"))
            rc = walk_items(w);
        else
            rc = ext_jscan_value(&w->sc, 3, &skip);
    }
    return rc;
}

/* The NodeNames value (depth 2): every element counted, the first EXT_MAX_NODES recorded. */
static int walk_names(struct args_walk *w, struct ext_jval *v)
{
    struct ext_jval skip;
    bool first = true;
    int rc;

    w->n_names = 0;
    if (ext_jscan_peek(&w->sc) != '[')
        return ext_jscan_value(&w->sc, 2, v);
    rc = ext_jscan_open(&w->sc, 2, v);
    while (rc == 0 && (rc = ext_jscan_element(&w->sc, &first, v)) == 1) {
        rc = 0;
        if (w->n_names < EXT_MAX_NODES) {
            rc = LT_VEC_RESERVE(w->name, w->cap_names, w->n_names + 1);
            if (rc == 0)
                rc = ext_jscan_value(&w->sc, 3, &w->name[w->n_names]);
        } else {
            rc = ext_jscan_value(&w->sc, 3, &skip);
        }
        w->n_names++;
    }
    return rc;
}

/* The whole body: LT_EPARSE (position in w->sc) or LT_ENOMEM. */
static int walk_args(struct args_walk *w)
{
    struct ext_jval key, skip;
    bool first = true, win;
    int c = ext_jscan_peek(&w->sc), rc, f;

    if (c == '[') {
        rc = ext_jscan_value(&w->sc, 1, &w->root);
        return rc < 0 ? rc : ext_jscan_end(&w->sc);
    }
    if (c != '{')
        return ext_jscan_fail(&w->sc, "expected '{' or '['");
    rc = ext_jscan_open(&w->sc, 1, &w->root);
    while (rc == 0 && (rc = ext_jscan_member(&w->sc, &first, &w->root, &key)) == 1) {
        rc = field_match(w, &key, &f, &win);
        if (rc < 0)
            break;
        if (f == F_N || !win)
            rc = ext_jscan_value(&w->sc, 2, &skip);
        else if (f == F_POD)
            rc = ext_jscan_value(&w->sc, 2, &w->field[F_POD]);
        else if (f == F_NODES)
            rc = walk_nodes(w, &w->field[F_NODES]);
        else
            rc = walk_names(w, &w->field[F_NAMES]);
    }
    return rc < 0 ? rc : ext_jscan_end(&w->sc);
}

/* Records the error of a body the cursor refused: Jansson's own (parsing the body as the
 * earlier decoder did, so messages, lines and columns are unchanged), or, for the one kind of
 * body Jansson accepts and the cursor does not (a NUL byte after a number or literal,
 * json_scan.h), the cursor's. */
static int syntax_error(const struct args_walk *w, const char *body, size_t len, struct lt_err *err)
{
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);

    if (root == NULL)
        return jansson_error(&je, err);
    json_decref(root);
    return ext_jscan_error(&w->sc, err);
}

/* "AT: expected EXPECTED, got ..." for value v of body. Containers are described by type
 * alone; a scalar is parsed on its own to describe it as ext_json_describe does. */
static int bad_raw(struct lt_err *err, const char *at, const char *expected, const char *body,
                   const struct ext_jval *v)
{
    json_error_t je;
    json_t *j;
    int rc;

    if (v->type == EXT_J_OBJECT || v->type == EXT_J_ARRAY)
        return bad(err, LT_EINVAL, at, "expected %s, got %s", expected,
                   v->type == EXT_J_OBJECT ? "an object" : "an array");
    j = json_loadb(body + v->off, v->len, JSON_DECODE_ANY, &je);
    if (j == NULL)
        return jansson_error(&je, err);
    rc = bad_value(err, at, expected, j);
    json_decref(j);
    return rc;
}

/* Pod: required, parsed from its byte range. */
static int args_pod_raw(struct ext_args *a, const char *body, const struct ext_jval *v,
                        struct lt_err *err)
{
    json_error_t je;

    if (v->type == EXT_J_ABSENT || v->type == EXT_J_NULL)
        return bad(err, LT_EINVAL, "Pod", "missing pod (the field is absent or null)");
    a->pod_doc = json_loadb(body + v->off, v->len, JSON_DECODE_ANY, &je);
    if (a->pod_doc == NULL)
        return jansson_error(&je, err);
    return ext_pod_from_json(a->pod_doc, "Pod", &a->pod, err);
}

/* Copies string value v, unescaped and NUL-terminated, to *text and advances *text past it;
 * *out points at the copy. Returns its length, which the caller checks against EXT_MAX_NAME. */
static size_t name_copy(const struct args_walk *w, const struct ext_jval *v, char **text,
                        const char **out)
{
    size_t n = ext_jscan_unescape(&w->sc, v, *text);

    (*text)[n] = '\0';
    *out = *text;
    *text += n + 1;
    return n;
}

/* Bytes of a->text the names of w need at most: each string's raw bytes (no more once
 * unescaped) plus a NUL. */
static size_t text_size(const struct args_walk *w)
{
    size_t n = 1;
    size_t items = w->n_items < EXT_MAX_NODES ? w->n_items : EXT_MAX_NODES;
    size_t names = w->n_names < EXT_MAX_NODES ? w->n_names : EXT_MAX_NODES;

    for (size_t i = 0; w->field[F_NODES].type == EXT_J_OBJECT && i < items; i++) {
        if (w->item[i].name.type == EXT_J_STRING)
            n += w->item[i].name.len - 1;
    }
    for (size_t i = 0; w->field[F_NAMES].type == EXT_J_ARRAY && i < names; i++) {
        if (w->name[i].type == EXT_J_STRING)
            n += w->name[i].len - 1;
    }
    return n;
}

/* Element i of Nodes.items: an object, whose metadata is an object or absent/null, whose name
 * is a string of at most EXT_MAX_NAME bytes or absent/null (""). Paths are built only for a
 * message. */
static int node_raw(const struct args_walk *w, const struct walk_item *it, const char *body,
                    size_t i, char **text, struct ext_item *out, struct lt_err *err)
{
    char at[PATH_LEN], sub[PATH_LEN];

    out->name = "";
    out->raw.json = body + it->v.off;
    out->raw.len = it->v.len;
    if (it->v.type == EXT_J_OBJECT && it->meta.type == EXT_J_OBJECT &&
        it->name.type == EXT_J_STRING && name_copy(w, &it->name, text, &out->name) <= EXT_MAX_NAME)
        return 0; /* the common case */
    if (it->v.type == EXT_J_OBJECT &&
        (it->meta.type == EXT_J_ABSENT || it->meta.type == EXT_J_NULL ||
         (it->meta.type == EXT_J_OBJECT &&
          (it->name.type == EXT_J_ABSENT || it->name.type == EXT_J_NULL))))
        return 0;
    path_index(at, "Nodes.items", i);
    if (it->v.type != EXT_J_OBJECT)
        return bad_raw(err, at, "a node object", body, &it->v);
    path_key(sub, at, "metadata");
    if (it->meta.type != EXT_J_OBJECT)
        return bad_raw(err, sub, "an object", body, &it->meta);
    path_key(at, sub, "name");
    if (it->name.type != EXT_J_STRING)
        return bad_raw(err, at, "a string", body, &it->name);
    return bad(err, LT_ERANGE, at, "string of %zu bytes is longer than the limit of %d",
               strlen(out->name), EXT_MAX_NAME);
}

/* Nodes: *NodeList, null or {"metadata":..., "items":[Node...]}. */
static int args_nodes_raw(struct ext_args *a, const struct args_walk *w, const char *body,
                          char **text, struct lt_err *err)
{
    const struct ext_jval *v = &w->field[F_NODES];
    size_t n = w->n_items;
    int rc;

    if (v->type == EXT_J_ABSENT || v->type == EXT_J_NULL)
        return 0;
    if (v->type != EXT_J_OBJECT)
        return bad_raw(err, "Nodes", "an object", body, v);
    if (w->items.type == EXT_J_ABSENT || w->items.type == EXT_J_NULL)
        return 0;
    if (w->items.type != EXT_J_ARRAY)
        return bad_raw(err, "Nodes.items", "an array", body, &w->items);
    if (n > EXT_MAX_NODES)
        return bad(err, LT_ERANGE, "Nodes.items", "%zu nodes exceed the limit of %d", n,
                   EXT_MAX_NODES);
    if (n == 0)
        return 0;
    a->nodes = lt_calloc(n, sizeof(a->nodes[0]));
    if (a->nodes == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu nodes", n);
    for (size_t i = 0; i < n; i++) {
        rc = node_raw(w, &w->item[i], body, i, text, &a->nodes[i], err);
        if (rc < 0)
            return rc;
        a->n_nodes++;
    }
    return 0;
}

/* NodeNames: *[]string, null or an array of strings (a null element is "", as in Go). */
static int args_names_raw(struct ext_args *a, const struct args_walk *w, const char *body,
                          char **text, struct lt_err *err)
{
    const struct ext_jval *v = &w->field[F_NAMES];
    size_t n = w->n_names, n_bytes;
    char at[PATH_LEN];

    if (v->type == EXT_J_ABSENT || v->type == EXT_J_NULL)
        return 0;
    if (v->type != EXT_J_ARRAY)
        return bad_raw(err, "NodeNames", "an array", body, v);
    if (n > EXT_MAX_NODES)
        return bad(err, LT_ERANGE, "NodeNames", "%zu node names exceed the limit of %d", n,
                   EXT_MAX_NODES);
    a->names_mode = true;
    a->node_names = lt_calloc(n, sizeof(a->node_names[0]));
    if (a->node_names == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu node names", n);
    for (size_t i = 0; i < n; i++) {
        const struct ext_jval *e = &w->name[i];

        if (e->type == EXT_J_NULL) {
            a->node_names[i] = "";
        } else {
            if (e->type != EXT_J_STRING) {
                path_index(at, "NodeNames", i);
                return bad_raw(err, at, "a string", body, e);
            }
            n_bytes = name_copy(w, e, text, &a->node_names[i]);
            if (n_bytes > EXT_MAX_NAME) {
                path_index(at, "NodeNames", i);
                return bad(err, LT_ERANGE, at, "string of %zu bytes is longer than the limit of %d",
                           n_bytes, EXT_MAX_NAME);
            }
        }
        a->n_node_names++;
    }
    return 0;
}

int ext_args_decode(struct ext_args *a, const char *body, size_t len, struct lt_err *err)
{
    struct args_walk w;
    char *text;
    int rc;

    ext_args_init(a);
    if (body == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "request body: missing");
    walk_init(&w, body, len);
    rc = walk_args(&w);
    if (rc == LT_EPARSE)
        rc = syntax_error(&w, body, len, err);
    else if (rc < 0)
        rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory walking a %zu-byte request", len);
    else if (w.root.type != EXT_J_OBJECT)
        rc = bad(err, LT_EINVAL, "", "expected an object, got an array");
    if (rc == 0)
        rc = args_pod_raw(a, body, &w.field[F_POD], err);
    if (rc == 0) {
        a->text = lt_malloc(text_size(&w));
        if (a->text == NULL)
            rc = lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for the node names");
    }
    text = a->text;
    if (rc == 0)
        rc = args_nodes_raw(a, &w, body, &text, err);
    if (rc == 0)
        rc = args_names_raw(a, &w, body, &text, err);
    walk_release(&w);
    if (rc < 0)
        ext_args_release(a);
    return rc;
}

size_t ext_args_candidates(const struct ext_args *a)
{
    return a->names_mode ? a->n_node_names : a->n_nodes;
}

const char *ext_args_candidate(const struct ext_args *a, size_t i)
{
    return a->names_mode ? a->node_names[i] : a->nodes[i].name;
}

void ext_preempt_args_init(struct ext_preempt_args *a)
{
    memset(a, 0, sizeof(*a));
}

static void victims_free(struct ext_victims *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lt_free(v[i].pods);
    lt_free(v);
}

void ext_preempt_args_release(struct ext_preempt_args *a)
{
    victims_free(a->victims, a->n_victims);
    victims_free(a->meta, a->n_meta);
    json_decref(a->root);
    ext_preempt_args_init(a);
}

/* One Pods element: a full pod (Victims) or a MetaPod {UID} (MetaVictims). */
static int victim_pod(json_t *p, const char *at, bool meta, struct ext_pod *out, struct lt_err *err)
{
    char sub[PATH_LEN];

    if (!meta)
        return ext_pod_from_json(p, at, out, err);
    memset(out, 0, sizeof(*out));
    out->ns = out->name = out->uid = out->node_name = out->phase = "";
    if (!json_is_object(p))
        return bad_value(err, at, "a MetaPod object", p);
    out->obj = p;
    path_key(sub, at, "UID");
    return str_value(go_field(p, "UID"), sub, EXT_MAX_NAME, &out->uid, err);
}

/* One map value: *Victims or *MetaVictims, null meaning no victims. */
static int victims_value(json_t *v, const char *at, bool meta, struct ext_victims *out,
                         struct lt_err *err)
{
    json_t *pods;
    size_t n = 0;
    char sub[PATH_LEN], el[PATH_LEN];
    int rc = opt_object(v, at, &v, err);

    if (rc < 0 || v == NULL)
        return rc;
    path_key(sub, at, "NumPDBViolations");
    rc = int_value(go_field(v, "NumPDBViolations"), sub, INT64_MIN, INT64_MAX,
                   &out->num_pdb_violations, err);
    pods = go_field(v, "Pods");
    path_key(sub, at, "Pods");
    if (rc == 0)
        rc = opt_array(pods, sub, EXT_MAX_VICTIMS, "victims", &n, err);
    if (rc < 0 || n == 0)
        return rc;
    out->pods = lt_calloc(n, sizeof(out->pods[0]));
    if (out->pods == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu victims", n);
    for (size_t i = 0; i < n; i++) {
        path_index(el, sub, i);
        rc = victim_pod(json_array_get(pods, i), el, meta, &out->pods[i], err);
        if (rc < 0)
            return rc;
        out->n_pods++;
    }
    return 0;
}

/* NodeNameToVictims or NodeNameToMetaVictims: null or a map of node name to victims. */
static int victims_map(json_t *m, const char *field, bool meta, struct ext_victims **out,
                       size_t *n_out, struct lt_err *err)
{
    const char *key;
    json_t *v;
    char sub[PATH_LEN];
    size_t n;
    int rc = opt_object(m, field, &m, err);

    if (rc < 0 || m == NULL)
        return rc;
    n = json_object_size(m);
    if (n > EXT_MAX_NODES)
        return bad(err, LT_ERANGE, field, "%zu nodes exceed the limit of %d", n, EXT_MAX_NODES);
    if (n == 0)
        return 0;
    *out = lt_calloc(n, sizeof((*out)[0]));
    if (*out == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu nodes", n);
    json_object_foreach(m, key, v)
    {
        struct ext_victims *e = &(*out)[*n_out];

        (*n_out)++; /* counted first, so release frees a partly filled entry */
        e->node = key;
        if (strlen(key) > EXT_MAX_NAME) {
            path_map(sub, field, key);
            return bad(err, LT_ERANGE, sub, "node name longer than %d bytes", EXT_MAX_NAME);
        }
        path_map(sub, field, key);
        rc = victims_value(v, sub, meta, e, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ext_preempt_args_decode(struct ext_preempt_args *a, const char *body, size_t len,
                            struct lt_err *err)
{
    int rc;

    ext_preempt_args_init(a);
    rc = parse_body(body, len, &a->root, err);
    if (rc == 0)
        rc = args_pod(a->root, &a->pod, err);
    if (rc == 0)
        rc = victims_map(go_field(a->root, "NodeNameToVictims"), "NodeNameToVictims", false,
                         &a->victims, &a->n_victims, err);
    if (rc == 0)
        rc = victims_map(go_field(a->root, "NodeNameToMetaVictims"), "NodeNameToMetaVictims", true,
                         &a->meta, &a->n_meta, err);
    if (rc < 0)
        ext_preempt_args_release(a);
    return rc;
}

void ext_bind_args_init(struct ext_bind_args *a)
{
    memset(a, 0, sizeof(*a));
    a->pod_name = a->pod_namespace = a->pod_uid = a->node = "";
}

void ext_bind_args_release(struct ext_bind_args *a)
{
    json_decref(a->root);
    ext_bind_args_init(a);
}

int ext_bind_args_decode(struct ext_bind_args *a, const char *body, size_t len, struct lt_err *err)
{
    static const char *const fields[] = {"PodName", "PodNamespace", "PodUID", "Node"};
    const char **outs[] = {&a->pod_name, &a->pod_namespace, &a->pod_uid, &a->node};
    int rc;

    ext_bind_args_init(a);
    rc = parse_body(body, len, &a->root, err);
    for (size_t i = 0; rc == 0 && i < 4; i++)
        rc = str_value(go_field(a->root, fields[i]), fields[i], EXT_MAX_NAME, outs[i], err);
    if (rc < 0)
        ext_bind_args_release(a);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * Output buffer and Go's JSON spelling
 */

void ext_buf_init(struct ext_buf *b)
{
    memset(b, 0, sizeof(*b));
}

void ext_buf_release(struct ext_buf *b)
{
    lt_free(b->data);
    ext_buf_init(b);
}

void ext_buf_reset(struct ext_buf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->data != NULL)
        b->data[0] = '\0';
}

static void buf_put(struct ext_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (n + 1 > b->cap - b->len || b->data == NULL) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;

        while (cap - b->len < n + 1) {
            if (cap > SIZE_MAX / 2) {
                b->failed = true;
                return;
            }
            cap *= 2;
        }
        p = lt_reallocarray(b->data, cap, 1);
        if (p == NULL) {
            b->failed = true;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Makes room for n more bytes at once (a long answer would otherwise grow by doubling); a
 * failure is left to the next append to report. */
static void buf_reserve(struct ext_buf *b, size_t n)
{
    char *p;

    if (b->failed || n == SIZE_MAX || n + 1 <= b->cap - b->len || b->len > SIZE_MAX - n - 1)
        return;
    p = lt_reallocarray(b->data, b->len + n + 1, 1);
    if (p == NULL)
        return;
    b->data = p;
    b->cap = b->len + n + 1;
}

static void buf_puts(struct ext_buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

static void buf_i64(struct ext_buf *b, int64_t x)
{
    char t[24];
    size_t k = sizeof(t);
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;

    do {
        t[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (x < 0)
        t[--k] = '-';
    buf_put(b, t + k, sizeof(t) - k);
}

/* Length of the valid UTF-8 sequence at s (Go's utf8.DecodeRuneInString rules: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if invalid; *cp receives the code point. */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp)
{
    size_t n;
    uint32_t c, min;

    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2, c = s[0] & 0x1F, min = 0x80;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, c = s[0] & 0x0F, min = 0x800;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, c = s[0] & 0x07, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}

/* Appends s as a JSON string the way Go's json.Marshal does (HTML-safe: <, >, & escaped;
 * \b \f \n \r \t short forms as Go 1.22+ prints them; other controls as \u00xx; U+2028 and
 * U+2029 escaped; invalid UTF-8 replaced by \ufffd). */
static void buf_str(struct ext_buf *b, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t start = 0, i = 0;

    buf_put(b, "\"", 1);
    while (s[i] != '\0') {
        unsigned char c = s[i];
        char esc[8];
        size_t skip = 1, n;
        uint32_t cp;

        if (c >= 0x80) {
            n = utf8_seq(s + i, &cp);
            if (n > 0 && cp != 0x2028 && cp != 0x2029) {
                i += n;
                continue;
            }
            if (n == 0)
                memcpy(esc, "\\ufffd", 7);
            else
                snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
            skip = n > 0 ? n : 1;
        } else if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
            i++;
            continue;
        } else if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, esc[2] = '\0';
        } else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            esc[2] = '\0';
        } else {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4], esc[5] = hex[c & 15], esc[6] = '\0';
        }
        buf_put(b, str + start, i - start);
        buf_puts(b, esc);
        i += skip;
        start = i;
    }
    buf_put(b, str + start, i - start);
    buf_put(b, "\"", 1);
}

/* A map entry to emit: key and its index in the caller's array. */
struct map_key {
    const char *key;
    size_t idx;
};

static int map_key_cmp(const void *pa, const void *pb)
{
    const struct map_key *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);

    if (c != 0)
        return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sorts n keys (key(i) for i < n) as Go prints a map: by bytes, and of equal keys only the last
 * (as a Go map would hold it). *out (owned; lt_free) receives the order, *n_out its length. */
static int map_order(const void *base, size_t size, size_t n, const char *(*key)(const void *),
                     struct map_key **out, size_t *n_out, struct lt_err *err)
{
    struct map_key *k = lt_calloc(n, sizeof(*k));
    size_t m = 0;

    if (k == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory sorting %zu map keys", n);
    for (size_t i = 0; i < n; i++) {
        k[i].key = key((const char *)base + i * size);
        k[i].idx = i;
        if (k[i].key == NULL) {
            lt_free(k);
            return lt_err_set(err, LT_EINVAL, 0, 0, "map key %zu is NULL", i);
        }
    }
    qsort(k, n, sizeof(*k), map_key_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && strcmp(k[i].key, k[i + 1].key) == 0)
            continue;
        k[m++] = k[i];
    }
    *out = k;
    *n_out = m;
    return 0;
}

static const char *failed_key(const void *p)
{
    return ((const struct ext_failed *)p)->node;
}

static const char *meta_key(const void *p)
{
    return ((const struct ext_meta_victims *)p)->node;
}

/* Appends a FailedNodesMap: null if f is NULL, else {"node":"reason",...} sorted. */
static int put_failed(struct ext_buf *b, const struct ext_failed *f, size_t n, struct lt_err *err)
{
    struct map_key *order = NULL;
    size_t m = 0;
    int rc;

    if (f == NULL) {
        buf_puts(b, "null");
        return 0;
    }
    rc = map_order(f, sizeof(*f), n, failed_key, &order, &m, err);
    if (rc < 0)
        return rc;
    buf_puts(b, "{");
    for (size_t i = 0; i < m; i++) {
        const struct ext_failed *e = &f[order[i].idx];

        buf_puts(b, i ? "," : "");
        buf_str(b, e->node);
        buf_puts(b, ":");
        buf_str(b, e->reason ? e->reason : "");
    }
    buf_puts(b, "}");
    lt_free(order);
    return 0;
}

static int buf_done(struct ext_buf *b, size_t start, struct lt_err *err)
{
    if (!b->failed)
        return 0;
    b->failed = false;
    b->len = start; /* drop the partial answer */
    if (b->data != NULL)
        b->data[start] = '\0';
    return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the response");
}

/* ------------------------------------------------------------------------------------------
 * Responses
 */

int ext_filter_result_encode(const struct ext_filter_result *r, struct ext_buf *out,
                             struct lt_err *err)
{
    size_t start = out->len;
    int rc = 0;

    for (size_t i = 0; r->node_names != NULL && i < r->n_node_names; i++) {
        if (r->node_names[i] == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "NodeNames[%zu] is NULL", i);
    }
    buf_puts(out, "{\"Nodes\":");
    if (r->nodes == NULL) {
        buf_puts(out, "null");
    } else {
        size_t echo = 0;

        for (size_t i = 0; i < r->n_nodes; i++)
            echo += r->nodes[i].len + 1;
        buf_reserve(out, echo + 256);
        buf_puts(out, "{\"metadata\":{},\"items\":[");
        for (size_t i = 0; i < r->n_nodes; i++) {
            buf_puts(out, i ? "," : "");
            buf_put(out, r->nodes[i].json, r->nodes[i].len);
        }
        buf_puts(out, "]}");
    }
    buf_puts(out, ",\"NodeNames\":");
    if (r->node_names == NULL) {
        buf_puts(out, "null");
    } else {
        buf_puts(out, "[");
        for (size_t i = 0; i < r->n_node_names; i++) {
            buf_puts(out, i ? "," : "");
            buf_str(out, r->node_names[i]);
        }
        buf_puts(out, "]");
    }
    buf_puts(out, ",\"FailedNodes\":");
    rc = put_failed(out, r->failed, r->n_failed, err);
    buf_puts(out, ",\"FailedAndUnresolvableNodes\":");
    if (rc == 0)
        rc = put_failed(out, r->unresolvable, r->n_unresolvable, err);
    buf_puts(out, ",\"Error\":");
    buf_str(out, r->error ? r->error : "");
    buf_puts(out, "}");
    if (rc < 0) {
        out->failed = false;
        out->len = start; /* drop the partial answer */
        if (out->data != NULL)
            out->data[start] = '\0';
        return rc;
    }
    return buf_done(out, start, err);
}

int ext_filter_answer(const struct ext_args *a, const struct ext_filter_verdict *v,
                      const char *error, struct ext_buf *out, struct lt_err *err)
{
    size_t n = ext_args_candidates(a);
    struct ext_filter_result r = {.error = error};
    struct ext_failed *fails = lt_calloc(n, sizeof(*fails));
    const char **names = NULL;
    struct ext_raw *nodes = NULL;
    size_t n_fail = 0, n_unres = 0, n_pass = 0;
    int rc;

    if (a->names_mode)
        names = lt_calloc(n, sizeof(*names));
    else
        nodes = lt_calloc(n, sizeof(*nodes));
    rc = fails == NULL || (names == NULL && nodes == NULL)
             ? lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for a %zu-node answer", n)
             : 0;
    /* Unresolvable failures fill fails[] from the end, ordinary ones from the start. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct ext_failed f = {ext_args_candidate(a, i), v[i].reason ? v[i].reason : ""};

        if (v[i].verdict == EXT_PASS && a->names_mode)
            names[n_pass++] = f.node;
        else if (v[i].verdict == EXT_PASS)
            nodes[n_pass++] = a->nodes[i].raw;
        else if (v[i].verdict == EXT_FAIL)
            fails[n_fail++] = f;
        else if (v[i].verdict == EXT_FAIL_UNRESOLVABLE)
            fails[n - 1 - n_unres++] = f;
        else
            rc = lt_err_set(err, LT_EINVAL, 0, 0, "verdict %zu: unknown value %d", i,
                            (int)v[i].verdict);
    }
    if (rc == 0) {
        r.node_names = names;
        r.n_node_names = names ? n_pass : 0;
        r.nodes = nodes;
        r.n_nodes = nodes ? n_pass : 0;
        r.failed = fails;
        r.n_failed = n_fail;
        r.unresolvable = fails + (n - n_unres); /* reversed order: sorted on output anyway */
        r.n_unresolvable = n_unres;
        rc = ext_filter_result_encode(&r, out, err);
    }
    lt_free(fails);
    lt_free(names);
    lt_free(nodes);
    return rc;
}

int ext_priority_list_encode(const struct ext_host_priority *list, size_t n, struct ext_buf *out,
                             struct lt_err *err)
{
    size_t start = out->len;

    if (list == NULL) {
        buf_puts(out, "null");
        return buf_done(out, start, err);
    }
    for (size_t i = 0; i < n; i++) {
        if (list[i].host == NULL)
            return lt_err_set(err, LT_EINVAL, 0, 0, "HostPriorityList[%zu]: Host is NULL", i);
    }
    buf_puts(out, "[");
    for (size_t i = 0; i < n; i++) {
        buf_puts(out, i ? ",{\"Host\":" : "{\"Host\":");
        buf_str(out, list[i].host);
        buf_puts(out, ",\"Score\":");
        buf_i64(out, list[i].score);
        buf_puts(out, "}");
    }
    buf_puts(out, "]");
    return buf_done(out, start, err);
}

int ext_preempt_result_encode(const struct ext_meta_victims *victims, size_t n, struct ext_buf *out,
                              struct lt_err *err)
{
    size_t start = out->len, m = 0;
    struct map_key *order = NULL;
    int rc;

    if (victims == NULL) {
        buf_puts(out, "{\"NodeNameToMetaVictims\":null}");
        return buf_done(out, start, err);
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; victims[i].uids != NULL && j < victims[i].n_uids; j++) {
            if (victims[i].uids[j] == NULL)
                return lt_err_set(err, LT_EINVAL, 0, 0, "victims %zu: UID %zu is NULL", i, j);
        }
    }
    rc = map_order(victims, sizeof(*victims), n, meta_key, &order, &m, err);
    if (rc < 0)
        return rc;
    buf_puts(out, "{\"NodeNameToMetaVictims\":{");
    for (size_t i = 0; i < m; i++) {
        const struct ext_meta_victims *e = &victims[order[i].idx];

        buf_puts(out, i ? "," : "");
        buf_str(out, e->node);
        buf_puts(out, ":{\"Pods\":");
        if (e->uids == NULL)
            buf_puts(out, "null");
        for (size_t j = 0; e->uids != NULL && j < e->n_uids; j++) {
            buf_puts(out, j ? ",{\"UID\":" : "[{\"UID\":");
            buf_str(out, e->uids[j]);
            buf_puts(out, "}");
        }
        if (e->uids != NULL)
            buf_puts(out, e->n_uids ? "]" : "[]");
        buf_puts(out, ",\"NumPDBViolations\":");
        buf_i64(out, e->num_pdb_violations);
        buf_puts(out, "}");
    }
    buf_puts(out, "}}");
    lt_free(order);
    return buf_done(out, start, err);
}

int ext_bind_result_encode(const char *error, struct ext_buf *out, struct lt_err *err)
{
    size_t start = out->len;

    buf_puts(out, "{\"Error\":");
    buf_str(out, error ? error : "");
    buf_puts(out, "}");
    return buf_done(out, start, err);
}
