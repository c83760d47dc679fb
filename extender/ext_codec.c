/* ext_codec.c -- extender/v1 requests in, Go-exact responses out; core/v1 Pod and Node summaries.
 *
 * Design: a body is parsed whole with Jansson (duplicate keys allowed: Go keeps the last, and so
 * does Jansson) and walked by one small decoder per type, each given the JSON path of its value
 * for messages ("Nodes.items[3].status.allocatable.cpu: ..."). The decoded structs borrow
 * strings from the document, which the args struct owns, so decoding a 500-node request
 * allocates two arrays besides Jansson's tree. Requests are untrusted: every type is checked,
 * every array is bounded (EXT_MAX_*), and null is accepted where Go's encoding/json accepts it
 * and the value has a natural zero (pointers to lists, maps, strings, numbers). Null elements of
 * Nodes.items and of Pods lists, which Go would decode as nil pointers no sender produces, are
 * errors instead.
 *
 * Responses are written by hand into an ext_buf rather than built as json_t trees: the shapes
 * are fixed, Go's output rules (field order, sorted map keys, null for nil, HTML-safe string
 * escapes) are easier to state directly, and it keeps the filter answer for 500 names to one
 * pass. Node objects echoed in Nodes mode go through json_dump_callback unchanged (Jansson
 * keeps key order), so a node kube-scheduler sent comes back with the same keys in the same
 * order.
 *
 * Pod requests follow component-helpers resource.PodRequests (read at kubernetes/kubernetes
 * 0085214), including the sidecar rule of KEP-753; ext_codec.h states the formula and what is
 * left out.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ext_codec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_mem.h"

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
#define STICKY_KEY "lotus.io/sticky"

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

/* A short description of v for "got ..." in messages. */
static void describe(const json_t *v, char *buf, size_t size)
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

    describe(v, got, sizeof(got));
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

/* Parses body into *root: LT_EPARSE with Jansson's line and column, or LT_ENOMEM. */
static int parse_body(const char *body, size_t len, json_t **root, struct lt_err *err)
{
    json_error_t je;

    if (body == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "request body: missing");
    *root = json_loadb(body, len, 0, &je);
    if (*root == NULL && json_error_code(&je) == json_error_out_of_memory)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory parsing JSON");
    if (*root == NULL)
        return lt_err_set(err, LT_EPARSE, je.line > 0 ? je.line : 0,
                          je.line > 0 && je.column < 1 ? 1 : je.column, "%s", je.text);
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
    json_decref(a->root);
    ext_args_init(a);
}

/* Nodes: *NodeList, null or {"metadata":..., "items":[Node...]}. */
static int args_nodes(struct ext_args *a, json_t *list, struct lt_err *err)
{
    json_t *items;
    size_t n;
    char sub[PATH_LEN];
    int rc = opt_object(list, "Nodes", &list, err);

    if (rc < 0 || list == NULL)
        return rc;
    items = json_object_get(list, "items");
    rc = opt_array(items, "Nodes.items", EXT_MAX_NODES, "nodes", &n, err);
    if (rc < 0 || n == 0)
        return rc;
    a->nodes = lt_calloc(n, sizeof(a->nodes[0]));
    if (a->nodes == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu nodes", n);
    for (size_t i = 0; i < n; i++) {
        path_index(sub, "Nodes.items", i);
        rc = ext_node_from_json(json_array_get(items, i), sub, &a->nodes[i], err);
        if (rc < 0)
            return rc;
        a->n_nodes++;
    }
    return 0;
}

/* NodeNames: *[]string, null or an array of strings (a null element is "", as in Go). */
static int args_node_names(struct ext_args *a, json_t *names, struct lt_err *err)
{
    size_t n;
    char sub[PATH_LEN];
    int rc = opt_array(names, "NodeNames", EXT_MAX_NODES, "node names", &n, err);

    if (rc < 0 || names == NULL || json_is_null(names))
        return rc;
    a->names_mode = true;
    a->node_names = lt_calloc(n, sizeof(a->node_names[0]));
    if (a->node_names == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory for %zu node names", n);
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(names, i);

        /* The common case, a string within the limit, needs no path; any other element goes
         * through str_value, which accepts null and words the error. */
        if (json_is_string(v) && json_string_length(v) <= EXT_MAX_NAME) {
            a->node_names[i] = json_string_value(v);
        } else {
            path_index(sub, "NodeNames", i);
            rc = str_value(v, sub, EXT_MAX_NAME, &a->node_names[i], err);
            if (rc < 0)
                return rc;
        }
        a->n_node_names++;
    }
    return 0;
}

int ext_args_decode(struct ext_args *a, const char *body, size_t len, struct lt_err *err)
{
    int rc;

    ext_args_init(a);
    rc = parse_body(body, len, &a->root, err);
    if (rc == 0)
        rc = args_pod(a->root, &a->pod, err);
    if (rc == 0)
        rc = args_nodes(a, go_field(a->root, "Nodes"), err);
    if (rc == 0)
        rc = args_node_names(a, go_field(a->root, "NodeNames"), err);
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

static int dump_cb(const char *buffer, size_t size, void *data)
{
    struct ext_buf *b = data;

    buf_put(b, buffer, size);
    return b->failed ? -1 : 0;
}

/* Appends a pass-through JSON value compactly. */
static void buf_json(struct ext_buf *b, const json_t *v)
{
    if (json_dump_callback(v, dump_cb, b, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
        b->failed = true;
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
        buf_puts(out, "{\"metadata\":{},\"items\":[");
        for (size_t i = 0; i < r->n_nodes; i++) {
            buf_puts(out, i ? "," : "");
            buf_json(out, r->nodes[i]);
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
    json_t **nodes = NULL;
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
            nodes[n_pass++] = a->nodes[i].obj;
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
