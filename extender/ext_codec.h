/* ext_codec.h -- the extender's wire codec: Kubernetes quantities, core/v1 Pod and Node
 * summaries, and the k8s.io/kube-scheduler/extender/v1 messages (docs/extender.md "Wire format").
 *
 * Everything here is a pure function over memory: no sockets, no clock, no printing. Decoders
 * take a request body (or an already parsed Jansson value), check it, and fill small C structs
 * whose strings are borrowed from the parsed document (and, for ExtenderArgs, from the body
 * itself); encoders append Go-exact JSON to an ext_buf. Every fallible call returns 0 or a
 * negative LT_E* code and fills struct lt_err with "PATH: what" (e.g. "NodeNames[3]: expected a
 * string, got 7"); JSON syntax errors keep Jansson's line and column. Paths use the canonical Go
 * field names of extender/v1 and the camelCase keys of core/v1, without a leading "$.".
 *
 * Key matching follows what each side of the wire does. extender/v1 structs have no json tags,
 * so their keys are matched like Go's encoding/json: case-insensitively (ASCII, plus the Kelvin
 * sign and long s that Go folds to k and s), unknown keys ignored, the last of several matching
 * keys wins. Embedded core/v1 objects are matched exactly (camelCase), as the API server's
 * decoder does; kube-scheduler always sends them that way.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_EXT_CODEC_H
#define LT_EXT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lt_err.h"

/* ------------------------------------------------------------------------------------------
 * Limits. A request over a limit is an LT_ERANGE error naming the limit.
 */

/* Nodes per request (Nodes.items, NodeNames, the preemption maps). GKE's documented maximum
 * is 65,000 nodes per cluster, upstream Kubernetes tests 5,000; this leaves headroom. */
#define EXT_MAX_NODES 100000

/* Containers plus init containers per pod. Kubernetes sets no limit; real pods have a
 * handful, and a pod with more than this many is far more likely garbage than a workload. */
#define EXT_MAX_CONTAINERS 1024

/* Victim pods per node in a preemption request. kubelet's maxPods defaults to 110 and is
 * rarely raised above a few hundred. */
#define EXT_MAX_VICTIMS 10000

/* Bytes in a node, pod, namespace or UID string: a DNS-1123 subdomain is at most 253. */
#define EXT_MAX_NAME 253

/* Bytes in a quantity string after trimming blanks. Canonical quantities are under 24 bytes;
 * Kubernetes sets no limit, a longer one is rejected rather than parsed digit by digit. */
#define EXT_QTY_MAX_LEN 64

/* MaxExtenderPriority in extender/v1: the score of the best node. */
#define EXT_MAX_PRIORITY 10

/* The label (or annotation) that marks a pod sticky: never a preemption victim (HYBRID). */
#define EXT_STICKY_LABEL "lotus.io/sticky"

/* ------------------------------------------------------------------------------------------
 * Quantities (extender/quantity.c): k8s.io/apimachinery resource.Quantity, exactly.
 */

/* A non-negative quantity as Kubernetes holds it after parsing: exact down to 10^-9, finer
 * non-zero digits rounded up to the next nano (as ParseQuantity does). Sums of quantities are
 * exact, so a pod's total rounds once, like Kubernetes' PodRequests followed by MilliValue. */
struct ext_qty {
    int64_t units; /* whole units (cores, bytes); 0 <= units <= INT64_MAX */
    int32_t nano;  /* billionths of a unit; 0 <= nano < 1,000,000,000 */
};

/* Parses s[0..len) with the grammar of resource.ParseQuantity: [+-] digits [. digits] then one
 * suffix: "" n u m k M G T P E (powers of 10), Ki Mi Gi Ti Pi Ei (powers of 2) or e/E followed by
 * a signed integer (10^x). Leading and trailing blanks are ignored (Quantity.UnmarshalJSON trims
 * them). Errors, each "PATH: ..." with path naming the value (NULL means "quantity"):
 * LT_EPARSE for syntax, LT_ERANGE for a negative value (API validation rejects those), a value
 * above 2^63-1 units, or a string longer than EXT_QTY_MAX_LEN. */
int ext_qty_parse(const char *s, size_t len, struct ext_qty *out, const char *path,
                  struct lt_err *err) LT_MUST_CHECK;

/* *acc += q exactly; LT_ERANGE (acc unchanged) if the sum exceeds 2^63-1 units. */
int ext_qty_add(struct ext_qty *acc, const struct ext_qty *q) LT_MUST_CHECK;

/* Returns -1, 0, 1 as a <, ==, > b. */
int ext_qty_cmp(const struct ext_qty *a, const struct ext_qty *b);

/* ceil(q * 1000), Quantity.MilliValue(): CPU in millicores. LT_ERANGE if it exceeds int64. */
int ext_qty_milli(const struct ext_qty *q, int64_t *out) LT_MUST_CHECK;

/* ceil(q), Quantity.Value(): memory and storage in bytes. LT_ERANGE if it exceeds int64. */
int ext_qty_value(const struct ext_qty *q, int64_t *out) LT_MUST_CHECK;

/* ------------------------------------------------------------------------------------------
 * core/v1 Pod and Node summaries.
 *
 * Strings are borrowed from the Jansson document they were decoded from and stay valid while
 * it lives (for the ext_*_args below: until ext_*_args_release). A string that is absent or
 * null in the JSON is "", never NULL.
 */

/* The three resources the filter checks, in Kubernetes' own units. */
struct ext_resources {
    int64_t cpu_milli;       /* "cpu", millicores: MilliValue() */
    int64_t mem_bytes;       /* "memory", bytes: Value() */
    int64_t ephemeral_bytes; /* "ephemeral-storage", bytes: Value() */
};

struct ext_pod {
    const char *ns;           /* metadata.namespace */
    const char *name;         /* metadata.name */
    const char *uid;          /* metadata.uid */
    const char *node_name;    /* spec.nodeName; "" while unscheduled */
    const char *phase;        /* status.phase ("Pending", "Running", ...) */
    int32_t priority;         /* spec.priority; 0 when absent or null */
    bool terminating;         /* metadata.deletionTimestamp is set */
    bool sticky;              /* label or annotation lotus.io/sticky is exactly "true" */
    struct ext_resources req; /* effective requests, see ext_pod_from_json */
    json_t *obj;              /* the pod object itself; borrowed */
};

struct ext_node {
    const char *name;           /* metadata.name */
    bool unschedulable;         /* spec.unschedulable */
    struct ext_resources alloc; /* status.allocatable, or status.capacity if that is absent */
    int64_t max_pods;           /* the same map's "pods"; 0 when absent */
    json_t *obj;                /* the node object itself; borrowed */
};

/* Decodes pod object obj (path names it in messages, e.g. "Pod"). The requests are what
 * kube-scheduler's noderesources filter uses (component-helpers resource.PodRequests):
 *   per resource, max(sum over containers plus restartable init containers (sidecars),
 *                     max over init containers i of (request of i + sidecars declared before i))
 *   then pod-level spec.resources.requests replace cpu and memory where set, then
 *   spec.overhead is added; each total is rounded once (MilliValue for cpu, Value otherwise).
 * A container resource with a limit and no request uses the limit, as API defaulting does.
 * In-place resize status (status.containerStatuses[].allocatedResources) is not consulted.
 * Every quantity in requests, limits and overhead is checked, extended resources included. */
int ext_pod_from_json(json_t *obj, const char *path, struct ext_pod *out,
                      struct lt_err *err) LT_MUST_CHECK;

/* Decodes node object obj. Missing resources are 0 (Kubernetes treats them as none). */
int ext_node_from_json(json_t *obj, const char *path, struct ext_node *out,
                       struct lt_err *err) LT_MUST_CHECK;

/* A short description of v for "got ..." in messages: "an object", "an array", the string
 * "<its first 40 bytes>", the number, true, false or null. */
void ext_json_describe(const json_t *v, char *buf, size_t size);

/* ------------------------------------------------------------------------------------------
 * Requests: ExtenderArgs (filter, prioritize), ExtenderPreemptionArgs, ExtenderBindingArgs.
 * Each args struct is caller storage; decode fills it (and on failure leaves it released, so
 * release is always safe after init or decode).
 */

/* One JSON value as bytes of a request body: valid JSON, echoed verbatim. */
struct ext_raw {
    const char *json; /* borrowed */
    size_t len;       /* bytes */
};

/* An element of Nodes.items as the filter needs it. In full-Nodes mode each node is only
 * looked up by name (the cache decides with its own view of the node) and echoed, so the rest
 * of the object is checked as JSON and not decoded. */
struct ext_item {
    const char *name;   /* metadata.name, unescaped; "" when metadata or name is absent/null */
    struct ext_raw raw; /* the whole node object, a slice of the request body */
};

struct ext_args {
    json_t *pod_doc;         /* the Pod value, parsed on its own (pod's strings); owned */
    struct ext_pod pod;      /* Pod (required) */
    bool names_mode;         /* NodeNames was non-null: nodeCacheCapable, answer by name */
    struct ext_item *nodes;  /* Nodes.items; owned array */
    size_t n_nodes;          /* 0 when Nodes is absent or null */
    const char **node_names; /* NodeNames; owned array of strings in text (or "") */
    size_t n_node_names;     /* 0 when NodeNames is absent or null */
    char *text;              /* owned: the node names of both lists, unescaped, NUL-terminated */
};

/* One map entry of NodeNameToVictims or NodeNameToMetaVictims. For MetaVictims only pods[i].uid
 * is set; for Victims each pod is fully decoded. A null entry decodes as no pods. */
struct ext_victims {
    const char *node;     /* the map key */
    struct ext_pod *pods; /* Pods; owned array */
    size_t n_pods;
    int64_t num_pdb_violations; /* NumPDBViolations */
};

struct ext_preempt_args {
    json_t *root;                /* the parsed body; owned */
    struct ext_pod pod;          /* Pod (required) */
    struct ext_victims *victims; /* NodeNameToVictims in document order; owned */
    size_t n_victims;
    struct ext_victims *meta; /* NodeNameToMetaVictims in document order; owned */
    size_t n_meta;
};

struct ext_bind_args {
    json_t *root;              /* the parsed body; owned */
    const char *pod_name;      /* PodName */
    const char *pod_namespace; /* PodNamespace */
    const char *pod_uid;       /* PodUID */
    const char *node;          /* Node */
};

void ext_args_init(struct ext_args *a);
void ext_args_release(struct ext_args *a);
/* Decodes an ExtenderArgs body of len bytes. Pod must be a pod object; Nodes and NodeNames
 * may each be absent or null (both are decoded when both are given). The body is walked once
 * without a tree (json_scan.h): only the Pod value is parsed with Jansson, and a node of
 * Nodes.items is reduced to its metadata.name and its byte range. a borrows body (the
 * nodes' raw bytes point into it): body must outlive a, until ext_args_release.
 * Errors: a body Jansson's json_loadb(body, len, 0) refuses is LT_EPARSE with Jansson's
 * message, line and column, as if it had been parsed whole; anything else is "PATH: what"
 * (LT_EINVAL, LT_ERANGE) or LT_ENOMEM. */
int ext_args_decode(struct ext_args *a, const char *body, size_t len,
                    struct lt_err *err) LT_MUST_CHECK;

/* The candidate nodes in the mode of the request: NodeNames in names mode, else Nodes.items. */
size_t ext_args_candidates(const struct ext_args *a);
/* Name of candidate i (< ext_args_candidates(a)); borrowed, valid until release. */
const char *ext_args_candidate(const struct ext_args *a, size_t i);

void ext_preempt_args_init(struct ext_preempt_args *a);
void ext_preempt_args_release(struct ext_preempt_args *a);
int ext_preempt_args_decode(struct ext_preempt_args *a, const char *body, size_t len,
                            struct lt_err *err) LT_MUST_CHECK;

void ext_bind_args_init(struct ext_bind_args *a);
void ext_bind_args_release(struct ext_bind_args *a);
/* All four strings may be absent ("") as far as the wire goes; the caller decides. */
int ext_bind_args_decode(struct ext_bind_args *a, const char *body, size_t len,
                         struct lt_err *err) LT_MUST_CHECK;

/* ------------------------------------------------------------------------------------------
 * Responses. Output is what Go's json.Marshal prints for the same value: Go field names in
 * struct order, no spaces, maps with sorted keys (the last of equal keys kept), nil pointers,
 * slices and maps as null, strings escaped as Go escapes them (<, >, & as \u003c ...).
 * Pointer-to-array fields follow Go: a NULL array is null, a non-NULL one with n == 0 is [] or {}.
 */

/* A growable output buffer, caller storage. data is NUL-terminated once anything was
 * appended; after an allocation failure `failed` is set and further appends do nothing. */
struct ext_buf {
    char *data;  /* owned; free with ext_buf_release (or take it and lt_free it) */
    size_t len;  /* bytes used, excluding the NUL */
    size_t cap;  /* bytes allocated */
    bool failed; /* an append ran out of memory */
};

void ext_buf_init(struct ext_buf *b);
void ext_buf_release(struct ext_buf *b);
/* Empties b, keeping its memory. */
void ext_buf_reset(struct ext_buf *b);

/* A FailedNodesMap entry. */
struct ext_failed {
    const char *node;   /* key */
    const char *reason; /* value */
};

/* ExtenderFilterResult, field for field. */
struct ext_filter_result {
    const struct ext_raw *nodes; /* Nodes.items, each copied byte for byte (so each must be one
                                  * valid JSON value, as ext_args_decode's are); NULL: null */
    size_t n_nodes;
    const char *const *node_names; /* NodeNames; NULL: null */
    size_t n_node_names;
    const struct ext_failed *failed; /* FailedNodes; NULL: null */
    size_t n_failed;
    const struct ext_failed *unresolvable; /* FailedAndUnresolvableNodes; NULL: null */
    size_t n_unresolvable;
    const char *error; /* Error; NULL is "" */
};

/* Appends the JSON of r to out. LT_ENOMEM, LT_EINVAL for a NULL string inside r. */
int ext_filter_result_encode(const struct ext_filter_result *r, struct ext_buf *out,
                             struct lt_err *err) LT_MUST_CHECK;

/* What the filter decided for one candidate. */
enum ext_verdict {
    EXT_PASS = 0,         /* the node stays */
    EXT_FAIL,             /* FailedNodes: preemption may still help */
    EXT_FAIL_UNRESOLVABLE /* FailedAndUnresolvableNodes: preemption cannot help */
};

struct ext_filter_verdict {
    enum ext_verdict verdict;
    const char *reason; /* message for a failed node; NULL is "" */
};

/* Appends the filter answer to request a in the mode of the request: v[i] is the verdict for
 * candidate i (ext_args_candidates(a) entries). Names mode: NodeNames = passing names in input
 * order, Nodes null. Nodes mode: Nodes = {"metadata":{},"items":[passing node objects, the
 * bytes of the request]}, NodeNames null. Both failure maps are always objects ({} when
 * empty); error NULL or "" means no error. */
int ext_filter_answer(const struct ext_args *a, const struct ext_filter_verdict *v,
                      const char *error, struct ext_buf *out, struct lt_err *err) LT_MUST_CHECK;

/* HostPriority. */
struct ext_host_priority {
    const char *host; /* Host */
    int64_t score;    /* Score, emitted as a JSON integer */
};

/* Appends a HostPriorityList: a bare array; NULL list: null. */
int ext_priority_list_encode(const struct ext_host_priority *list, size_t n, struct ext_buf *out,
                             struct lt_err *err) LT_MUST_CHECK;

/* One NodeNameToMetaVictims entry: MetaVictims{Pods: [{UID}...], NumPDBViolations}. */
struct ext_meta_victims {
    const char *node;        /* map key */
    const char *const *uids; /* Pods[i].UID; NULL: "Pods":null */
    size_t n_uids;
    int64_t num_pdb_violations; /* NumPDBViolations */
};

/* Appends ExtenderPreemptionResult; victims NULL: "NodeNameToMetaVictims":null. */
int ext_preempt_result_encode(const struct ext_meta_victims *victims, size_t n, struct ext_buf *out,
                              struct lt_err *err) LT_MUST_CHECK;

/* Appends ExtenderBindingResult; error NULL is "". */
int ext_bind_result_encode(const char *error, struct ext_buf *out,
                           struct lt_err *err) LT_MUST_CHECK;

#endif
