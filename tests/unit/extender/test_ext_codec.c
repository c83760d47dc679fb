/* test_ext_codec.c -- the extender's wire codec (extender/ext_codec.c, extender/quantity.c).
 *
 * Golden strings: kube-scheduler's extender/v1 TestCompatibility (tests/fixtures/extender/
 * golden, and golden-1.18 for the older spelling with "creationTimestamp":null), decoded, also
 * lowercased, and re-encoded byte for byte where the shape is ours. Quantities against
 * hand-computed values of resource.Quantity; pod requests against hand-computed PodRequests;
 * malformed requests as fixture directories (invalid/<case>/{decoder,input,error}); limits
 * with generated huge arrays.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"
#include "lt_test_slurp.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_codec.h"
#include "lt_mem.h"

#ifndef EXT_FIXTURES
#error "EXT_FIXTURES must name tests/fixtures/extender"
#endif

/* dst = a + "/" + b; fails the test if it does not fit. */
static void join(char *dst, size_t size, const char *a, const char *b)
{
    int w = snprintf(dst, size, "%s/%s", a, b);

    if (w < 0 || (size_t)w >= size)
        fail_msg("path too long: %s/%s", a, b);
}

static char *golden(const char *dir, const char *name, size_t *len)
{
    char path[512];
    char *s;

    snprintf(path, sizeof(path), "%s/%s/%s", EXT_FIXTURES, dir, name);
    s = slurp(path, len);
    if (s == NULL)
        fail_msg("cannot read %s", path);
    return s;
}

static void lowercase(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* ---------------------------------------------------------------------------------------
 * Quantities
 */

struct qcase {
    const char *in;
    int64_t milli; /* expected MilliValue, or -1 if it overflows */
    int64_t value; /* expected Value */
};

/* Values worked out by hand from quantity.go: exact decimal, rounded up to the nano at parse,
 * then ceil for MilliValue and Value. */
static const struct qcase qcases[] = {
    {"100m", 100, 1},
    {"0.5", 500, 1},
    {"2", 2000, 2},
    {"1.5k", 1500000, 1500},
    {"1e3", 1000000, 1000},
    {"1E3", 1000000, 1000},
    {"1e+3", 1000000, 1000},
    {"1e-3", 1, 1},
    {"1Ki", 1024000, 1024},
    {"64Mi", 67108864000, 67108864},
    {"1.5Gi", 1610612736000, 1610612736},
    {"0.1Ki", 102400, 103},   /* 102.4 bytes: Value rounds up */
    {"0.0000000001Ki", 1, 1}, /* 1.024e-7 -> 103n, not 1n x 1024 */
    {"1n", 1, 1},             /* 1e-6 millicores rounds up to 1 */
    {"0.9n", 1, 1},           /* parse rounds up to 1n */
    {"1500u", 2, 1},          /* 1.5m -> 2m */
    {"1e-10", 1, 1},          /* below a nano: 1n */
    {"1e-1000", 1, 1},        /* far below: still 1n */
    {"0", 0, 0},
    {"+1", 1000, 1},
    {"-0", 0, 0},
    {".5", 500, 1},
    {"1.", 1000, 1},
    {"1.G", 1000000000000, 1000000000}, /* Go allows "1." before a suffix */
    {".", 0, 0},                        /* Go parses these as zero */
    {"+", 0, 0},
    {"000", 0, 0},
    {"  2  ", 2000, 2},              /* UnmarshalJSON trims blanks */
    {"1E", -1, 1000000000000000000}, /* E is exa, 10^18: too many millicores */
    {"7Ei", -1, 8070450532247928832},
    {"9223372036854775807", -1, INT64_MAX},
    {"9223372036854775", 9223372036854775000, 9223372036854775},
};

static void test_quantity_values_match_kubernetes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(qcases) / sizeof(qcases[0]); i++) {
        struct ext_qty q;
        struct lt_err err;
        int64_t milli = -1, value = -1;

        lt_err_init(&err, NULL);
        if (ext_qty_parse(qcases[i].in, strlen(qcases[i].in), &q, NULL, &err) != 0)
            fail_msg("'%s': %s", qcases[i].in, err.text);
        if (ext_qty_milli(&q, &milli) != 0)
            milli = -1;
        assert_int_equal(ext_qty_value(&q, &value), 0);
        if (milli != qcases[i].milli || value != qcases[i].value)
            fail_msg("'%s': milli %" PRId64 " value %" PRId64 ", expected %" PRId64 " and %" PRId64,
                     qcases[i].in, milli, value, qcases[i].milli, qcases[i].value);
    }
}

struct qbad {
    const char *in;
    int code;
};

static const struct qbad qbad[] = {
    {"", LT_EPARSE},
    {"   ", LT_EPARSE},
    {"abc", LT_EPARSE},
    {"1K", LT_EPARSE},  /* kilo is lower-case k */
    {"1ki", LT_EPARSE}, /* Ki is the binary suffix */
    {"1e", LT_EPARSE},
    {"1Ki5", LT_EPARSE},
    {"1.2.3", LT_EPARSE},
    {"1 m", LT_EPARSE},
    {"--1", LT_EPARSE},
    {"0x10", LT_EPARSE},
    {"1e3.5", LT_EPARSE},
    {"1e99999999999999999999", LT_EPARSE}, /* ParseInt overflows: ErrSuffix in Go */
    {"1mi", LT_EPARSE},
    {"-1", LT_ERANGE},
    {"-100m", LT_ERANGE},
    {"8Ei", LT_ERANGE}, /* 2^63: Go caps it silently, we refuse */
    {"9223372036854775808", LT_ERANGE},
    {"1e1000", LT_ERANGE},
    {"10E", LT_ERANGE},
    {"11111111111111111111111111111111111111111111111111111111111111111", LT_ERANGE}, /* 65 */
};

static void test_quantity_rejects_malformed_and_out_of_range(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(qbad) / sizeof(qbad[0]); i++) {
        struct ext_qty q;
        struct lt_err err;
        int rc;

        lt_err_init(&err, NULL);
        rc = ext_qty_parse(qbad[i].in, strlen(qbad[i].in), &q, "x", &err);
        if (rc != qbad[i].code || err.code != rc || strncmp(err.text, "x: ", 3) != 0)
            fail_msg("'%s': rc %d (%s), expected %d", qbad[i].in, rc, err.text, qbad[i].code);
    }
}

static void test_quantity_messages_name_path_and_value(void **state)
{
    struct ext_qty q;
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    assert_int_equal(
        ext_qty_parse("1.5K", 4, &q, "Pod.spec.containers[0].resources.requests.cpu", &err),
        LT_EPARSE);
    assert_string_equal(err.text, "Pod.spec.containers[0].resources.requests.cpu: unknown suffix "
                                  "'K' in quantity '1.5K' (known: n, u, m, k, M, G, T, P, E, "
                                  "Ki, Mi, Gi, Ti, Pi, Ei, e<exponent>)");
    lt_err_init(&err, NULL);
    assert_int_equal(ext_qty_parse("1.5x", 4, &q, "cpu", &err), LT_EPARSE);
    assert_string_equal(err.text, "cpu: malformed quantity '1.5x' (expected a number and a "
                                  "suffix such as 100m, 1.5, 64Mi, 2G or 1e3)");
    lt_err_init(&err, NULL);
    assert_int_equal(ext_qty_parse("-2", 2, &q, "m", &err), LT_ERANGE);
    assert_string_equal(err.text, "m: negative quantity '-2'");
}

static void test_quantity_sums_are_exact_and_overflow_is_reported(void **state)
{
    struct ext_qty a, b, max = {INT64_MAX, 999999999};
    int64_t v;

    (void)state;
    assert_int_equal(ext_qty_parse("0.5m", 4, &a, NULL, NULL), 0);
    assert_int_equal(ext_qty_parse("0.5m", 4, &b, NULL, NULL), 0);
    assert_int_equal(ext_qty_add(&a, &b), 0);
    assert_int_equal(ext_qty_milli(&a, &v), 0);
    assert_int_equal(v, 1); /* ceil of the sum, not the sum of ceils (2) */
    assert_int_equal(ext_qty_add(&max, &b), LT_ERANGE);
    assert_int_equal(ext_qty_value(&max, &v), LT_ERANGE);
    assert_int_equal(ext_qty_cmp(&a, &b), 1);
}

/* ---------------------------------------------------------------------------------------
 * Pods and nodes
 */

/* Decodes pod JSON text; the document is returned in *doc (json_decref it). */
static void pod_from(const char *text, struct ext_pod *pod, json_t **doc)
{
    json_error_t je;
    struct lt_err err;

    *doc = json_loads(text, 0, &je);
    if (*doc == NULL)
        fail_msg("test pod is not JSON: %s", je.text);
    lt_err_init(&err, NULL);
    if (ext_pod_from_json(*doc, "Pod", pod, &err) != 0)
        fail_msg("%s", err.text);
}

static void assert_requests(const char *text, int64_t cpu, int64_t mem, int64_t eph)
{
    struct ext_pod pod;
    json_t *doc;

    pod_from(text, &pod, &doc);
    if (pod.req.cpu_milli != cpu || pod.req.mem_bytes != mem || pod.req.ephemeral_bytes != eph)
        fail_msg("requests %" PRId64 "m %" PRId64 " %" PRId64 ", expected %" PRId64 "m %" PRId64
                 " %" PRId64 " for %s",
                 pod.req.cpu_milli, pod.req.mem_bytes, pod.req.ephemeral_bytes, cpu, mem, eph,
                 text);
    json_decref(doc);
}

#define MI (1024 * 1024LL)

static void test_pod_requests_sum_containers(void **state)
{
    (void)state;
    assert_requests("{\"spec\":{\"containers\":["
                    "{\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}},"
                    "{\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"128Mi\","
                    "\"ephemeral-storage\":\"1Gi\"}}}]}}",
                    350, 192 * MI, 1024 * MI);
    assert_requests("{\"spec\":{\"containers\":null}}", 0, 0, 0);
    assert_requests("{}", 0, 0, 0);
}

/* Ordinary init containers run one at a time before the containers: the pod needs the larger
 * of the biggest init container and the sum of the containers, per resource. */
static void test_pod_requests_take_max_of_init_containers(void **state)
{
    (void)state;
    assert_requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":"
                    "{\"cpu\":\"100m\",\"memory\":\"1Gi\"}}}],"
                    "\"initContainers\":["
                    "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"}}},"
                    "{\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}]}}",
                    500, 1024 * MI, 0);
}

/* KEP-753 sidecars: containers 100m/100Mi; init [sidecar 200m/50Mi, init 250m/500Mi,
 * sidecar 50m/0]. Steady state 100+200+50 = 350m, 150Mi. Init peaks: 200m/50Mi,
 * 250+200 = 450m / 500+50 = 550Mi, 250m/50Mi. Result max: 450m, 550Mi. */
static void test_pod_requests_apply_the_sidecar_rule(void **state)
{
    (void)state;
    assert_requests(
        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":"
        "{\"cpu\":\"100m\",\"memory\":\"100Mi\"}}}],"
        "\"initContainers\":["
        "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"200m\","
        "\"memory\":\"50Mi\"}}},"
        "{\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"500Mi\"}}},"
        "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"50m\"}}}]}}",
        450, 550 * MI, 0);
}

static void test_pod_requests_add_overhead_and_pod_level_requests(void **state)
{
    (void)state;
    /* RuntimeClass overhead is added on top. */
    assert_requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
                    "\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"}}}",
                    350, 120 * MI, 0);
    /* Pod-level requests replace the container sum for cpu (memory is not set there). */
    assert_requests("{\"spec\":{\"resources\":{\"requests\":{\"cpu\":\"2\"}},"
                    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\","
                    "\"memory\":\"64Mi\"}}}],\"overhead\":{\"cpu\":\"10m\"}}}",
                    2010, 64 * MI, 0);
}

/* API defaulting: a resource with a limit and no request requests the limit. */
static void test_pod_requests_default_to_limits(void **state)
{
    (void)state;
    assert_requests("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
                    "{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
                    1000, 1024 * MI, 0);
    assert_requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"200m\"},"
                    "\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}}]}}",
                    200, 2048 * MI, 0);
}

/* Kubernetes sums quantities exactly and rounds the total once. */
static void test_pod_requests_round_the_total_once(void **state)
{
    (void)state;
    assert_requests("{\"spec\":{\"containers\":["
                    "{\"resources\":{\"requests\":{\"cpu\":\"0.5m\",\"memory\":\"0.5\"}}},"
                    "{\"resources\":{\"requests\":{\"cpu\":\"0.5m\",\"memory\":\"0.5\"}}}]}}",
                    1, 1, 0);
    /* Bare JSON numbers are quantities too (Quantity.UnmarshalJSON parses their text). */
    assert_requests("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":"
                    "{\"cpu\":0.1,\"memory\":1048576}}}]}}",
                    100, MI, 0);
}

static void test_pod_fields_priority_sticky_and_deletion(void **state)
{
    struct ext_pod pod;
    json_t *doc;

    (void)state;
    pod_from("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u-1\","
             "\"labels\":{\"app\":\"x\"},\"annotations\":{\"lotus.io/sticky\":\"true\"},"
             "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},"
             "\"spec\":{\"nodeName\":\"n1\",\"priority\":-5},\"status\":{\"phase\":\"Running\"}}",
             &pod, &doc);
    assert_string_equal(pod.ns, "ns");
    assert_string_equal(pod.name, "p");
    assert_string_equal(pod.uid, "u-1");
    assert_string_equal(pod.node_name, "n1");
    assert_string_equal(pod.phase, "Running");
    assert_int_equal(pod.priority, -5);
    assert_true(pod.sticky);
    assert_true(pod.terminating);
    json_decref(doc);

    pod_from("{\"metadata\":{\"labels\":{\"lotus.io/sticky\":\"True\"},"
             "\"deletionTimestamp\":null},\"spec\":{\"priority\":null}}",
             &pod, &doc);
    assert_false(pod.sticky); /* exactly "true" */
    assert_false(pod.terminating);
    assert_int_equal(pod.priority, 0);
    assert_string_equal(pod.node_name, "");
    json_decref(doc);

    pod_from("{\"metadata\":{\"labels\":{\"lotus.io/sticky\":\"true\"}}}", &pod, &doc);
    assert_true(pod.sticky);
    json_decref(doc);
}

static void test_node_allocatable_falls_back_to_capacity(void **state)
{
    json_t *doc =
        json_loads("[{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"unschedulable\":true},"
                   "\"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"16Gi\"},"
                   "\"allocatable\":{\"cpu\":\"3920m\",\"memory\":\"15Gi\",\"ephemeral-storage\":"
                   "\"95551679124\",\"pods\":\"110\",\"hugepages-2Mi\":\"0\"}}},"
                   "{\"metadata\":{\"name\":\"n2\"},\"status\":{\"capacity\":{\"cpu\":\"2\","
                   "\"memory\":\"8Gi\",\"pods\":\"32\"}}}]",
                   0, NULL);
    struct ext_node n;
    struct lt_err err;

    (void)state;
    assert_non_null(doc);
    lt_err_init(&err, NULL);
    assert_int_equal(ext_node_from_json(json_array_get(doc, 0), "n", &n, &err), 0);
    assert_string_equal(n.name, "n1");
    assert_true(n.unschedulable);
    assert_int_equal(n.alloc.cpu_milli, 3920);
    assert_int_equal(n.alloc.mem_bytes, 15 * 1024 * MI);
    assert_int_equal(n.alloc.ephemeral_bytes, 95551679124LL);
    assert_int_equal(n.max_pods, 110);
    assert_int_equal(ext_node_from_json(json_array_get(doc, 1), "n", &n, &err), 0);
    assert_false(n.unschedulable);
    assert_int_equal(n.alloc.cpu_milli, 2000);
    assert_int_equal(n.alloc.mem_bytes, 8 * 1024 * MI);
    assert_int_equal(n.max_pods, 32);
    json_decref(doc);
}

/* ---------------------------------------------------------------------------------------
 * Golden wire strings (TestCompatibility)
 */

static void check_args_golden(const char *dir, bool lower)
{
    size_t len;
    char *body = golden(dir, "ExtenderArgs.json", &len);
    struct ext_args a;
    struct lt_err err;

    if (lower)
        lowercase(body);
    lt_err_init(&err, NULL);
    if (ext_args_decode(&a, body, len, &err) != 0)
        fail_msg("%s: %s", dir, err.text);
    assert_string_equal(a.pod.name, "podname");
    assert_true(a.names_mode);
    assert_int_equal(a.n_node_names, 1);
    assert_string_equal(a.node_names[0], "node1");
    assert_int_equal(a.n_nodes, 1);
    assert_string_equal(a.nodes[0].name, "nodename");
    assert_int_equal(ext_args_candidates(&a), 1);
    assert_string_equal(ext_args_candidate(&a, 0), "node1");
    ext_args_release(&a);
    ext_args_release(&a); /* release is idempotent */
    lt_free(body);
}

static void test_golden_extender_args_decode_in_any_case(void **state)
{
    (void)state;
    check_args_golden("golden", false);
    check_args_golden("golden", true);
    check_args_golden("golden-1.18", false);
    check_args_golden("golden-1.18", true);
}

/* The filter result golden holds the node of the args golden: decode that, echo it. */
static void test_golden_filter_result_encodes_byte_for_byte(void **state)
{
    size_t len, glen;
    char *body = golden("golden", "ExtenderArgs.json", &len);
    char *want = golden("golden", "ExtenderFilterResult.json", &glen);
    const char *names[] = {"node1"};
    const struct ext_failed failed[] = {{"foo", "bar"}}, unres[] = {{"baz", "qux"}};
    struct ext_args a;
    struct ext_buf out;
    struct ext_raw nodes[1];
    struct ext_filter_result r = {nodes, 1, names, 1, failed, 1, unres, 1, "myerror"};

    (void)state;
    ext_buf_init(&out);
    assert_int_equal(ext_args_decode(&a, body, len, NULL), 0);
    nodes[0] = a.nodes[0].raw;
    assert_int_equal(ext_filter_result_encode(&r, &out, NULL), 0);
    assert_string_equal(out.data, want);
    assert_int_equal(out.len, glen);
    ext_buf_release(&out);
    ext_args_release(&a);
    lt_free(body);
    lt_free(want);
}

static void check_preempt_golden(const char *dir, bool lower)
{
    size_t len;
    char *body = golden(dir, "ExtenderPreemptionArgs.json", &len);
    struct ext_preempt_args a;
    struct lt_err err;

    if (lower)
        lowercase(body);
    lt_err_init(&err, NULL);
    if (ext_preempt_args_decode(&a, body, len, &err) != 0)
        fail_msg("%s: %s", dir, err.text);
    assert_string_equal(a.pod.name, "podname");
    assert_int_equal(a.n_victims, 1);
    assert_string_equal(a.victims[0].node, "foo");
    assert_int_equal(a.victims[0].n_pods, 1);
    assert_string_equal(a.victims[0].pods[0].name, "podname");
    assert_int_equal(a.victims[0].num_pdb_violations, 1);
    assert_int_equal(a.n_meta, 1);
    assert_string_equal(a.meta[0].node, "foo");
    assert_int_equal(a.meta[0].n_pods, 1);
    assert_string_equal(a.meta[0].pods[0].uid, "myuid");
    assert_int_equal(a.meta[0].num_pdb_violations, 1);
    ext_preempt_args_release(&a);
    lt_free(body);
}

static void test_golden_preemption_args_decode_in_any_case(void **state)
{
    (void)state;
    check_preempt_golden("golden", false);
    check_preempt_golden("golden", true);
    check_preempt_golden("golden-1.18", false);
    check_preempt_golden("golden-1.18", true);
}

static void test_golden_results_encode_byte_for_byte(void **state)
{
    size_t len;
    char *want;
    const char *uids[] = {"myuid"};
    const struct ext_meta_victims mv[] = {{"foo", uids, 1, 1}};
    const struct ext_host_priority hp[] = {{"myhost", 1}};
    struct ext_buf out;
    char list[64];

    (void)state;
    ext_buf_init(&out);
    want = golden("golden", "ExtenderPreemptionResult.json", &len);
    assert_int_equal(ext_preempt_result_encode(mv, 1, &out, NULL), 0);
    assert_string_equal(out.data, want);
    lt_free(want);

    ext_buf_reset(&out);
    want = golden("golden", "ExtenderBindingResult.json", &len);
    assert_int_equal(ext_bind_result_encode("myerror", &out, NULL), 0);
    assert_string_equal(out.data, want);
    lt_free(want);

    ext_buf_reset(&out);
    want = golden("golden", "HostPriority.json", &len);
    snprintf(list, sizeof(list), "[%s]", want); /* prioritize answers a HostPriorityList */
    assert_int_equal(ext_priority_list_encode(hp, 1, &out, NULL), 0);
    assert_string_equal(out.data, list);
    lt_free(want);
    ext_buf_release(&out);
}

static void test_golden_binding_args_decode_in_any_case(void **state)
{
    size_t len;
    char *body = golden("golden", "ExtenderBindingArgs.json", &len);
    struct ext_bind_args a;

    (void)state;
    for (int lower = 0; lower < 2; lower++) {
        if (lower)
            lowercase(body);
        assert_int_equal(ext_bind_args_decode(&a, body, len, NULL), 0);
        assert_string_equal(a.pod_name, "mypodname");
        assert_string_equal(a.pod_namespace, "mypodnamespace");
        assert_string_equal(a.pod_uid, "mypoduid");
        assert_string_equal(a.node, "mynode");
        ext_bind_args_release(&a);
    }
    lt_free(body);
}

/* ---------------------------------------------------------------------------------------
 * Wire rules beyond the goldens
 */

/* Go folds keys case-insensitively, including the long s (U+017F) as 's'; the last of several
 * matching keys wins; unknown keys are ignored. */
static void test_keys_match_like_go(void **state)
{
    const char *body = "{\"pOD\":{\"metadata\":{\"name\":\"a\"}},\"NODENAMES\":[\"x\"],"
                       "\"nodeNames\":[\"y\",\"z\"],\"Extra\":1,"
                       "\"Pod\":{\"metadata\":{\"name\":\"b\"}}}";
    const char *bind = "{\"PodName\xc5\xbfpace\":\"ns\",\"pODuid\":\"u\",\"NODE\":\"n\"}";
    const char *bind2 = "{\"PodNamesp\xe2\x84\xaa"
                        "ace\":1}"; /* the Kelvin sign is no 'a' */
    struct ext_args a;
    struct ext_bind_args b;

    (void)state;
    assert_int_equal(ext_args_decode(&a, body, strlen(body), NULL), 0);
    assert_string_equal(a.pod.name, "b");
    assert_int_equal(a.n_node_names, 2);
    assert_string_equal(a.node_names[1], "z");
    ext_args_release(&a);
    assert_int_equal(ext_bind_args_decode(&b, bind, strlen(bind), NULL), 0);
    assert_string_equal(b.pod_namespace, "ns");
    assert_string_equal(b.pod_uid, "u");
    assert_string_equal(b.node, "n");
    assert_string_equal(b.pod_name, "");
    ext_bind_args_release(&b);
    assert_int_equal(ext_bind_args_decode(&b, bind2, strlen(bind2), NULL), 0);
    assert_string_equal(b.pod_namespace, "");
    ext_bind_args_release(&b);
}

/* Names mode: NodeNames with the passing names, Nodes null, both maps objects. This is the
 * exchange of the protocol notes (section 1.3, typical messages). */
static void test_filter_answer_in_names_mode(void **state)
{
    const char *body = "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[\"n1\",\"n2\",\"n3\"]}";
    const struct ext_filter_verdict v[] = {
        {EXT_PASS, NULL}, {EXT_FAIL, "why"}, {EXT_FAIL_UNRESOLVABLE, "never"}};
    struct ext_args a;
    struct ext_buf out;

    (void)state;
    ext_buf_init(&out);
    assert_int_equal(ext_args_decode(&a, body, strlen(body), NULL), 0);
    assert_int_equal(ext_filter_answer(&a, v, NULL, &out, NULL), 0);
    assert_string_equal(out.data, "{\"Nodes\":null,\"NodeNames\":[\"n1\"],\"FailedNodes\":"
                                  "{\"n2\":\"why\"},\"FailedAndUnresolvableNodes\":"
                                  "{\"n3\":\"never\"},\"Error\":\"\"}");
    ext_buf_reset(&out);
    assert_int_equal(ext_filter_answer(&a,
                                       (const struct ext_filter_verdict[]){
                                           {EXT_PASS, NULL}, {EXT_PASS, NULL}, {EXT_PASS, NULL}},
                                       NULL, &out, NULL),
                     0);
    assert_string_equal(out.data, "{\"Nodes\":null,\"NodeNames\":[\"n1\",\"n2\",\"n3\"],"
                                  "\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},"
                                  "\"Error\":\"\"}");
    ext_buf_release(&out);
    ext_args_release(&a);
}

/* Nodes mode: the passing node objects come back as received (the very bytes of the request),
 * NodeNames null. */
static void test_filter_answer_in_nodes_mode_echoes_nodes(void **state)
{
    const char *n1 = "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"a\":\"<b>\"}},"
                     "\"status\":{\"allocatable\":{\"cpu\":\"2\"}}}";
    const char *n2 = "{\"metadata\":{\"name\":\"n2\"}}";
    char body[512], want[512];
    const struct ext_filter_verdict v[] = {{EXT_PASS, NULL}, {EXT_FAIL, "Insufficient cpu"}};
    struct ext_args a;
    struct ext_buf out;

    (void)state;
    snprintf(body, sizeof(body),
             "{\"Pod\":{},\"Nodes\":{\"metadata\":{},\"items\":[%s,%s]},"
             "\"NodeNames\":null}",
             n1, n2);
    snprintf(want, sizeof(want),
             "{\"Nodes\":{\"metadata\":{},\"items\":[%s]},\"NodeNames\":null,"
             "\"FailedNodes\":{\"n2\":\"Insufficient cpu\"},\"FailedAndUnresolvableNodes\":{},"
             "\"Error\":\"\"}",
             n1);
    ext_buf_init(&out);
    assert_int_equal(ext_args_decode(&a, body, strlen(body), NULL), 0);
    assert_false(a.names_mode);
    assert_int_equal(ext_args_candidates(&a), 2);
    assert_string_equal(ext_args_candidate(&a, 1), "n2");
    assert_int_equal(a.nodes[0].raw.len, strlen(n1));
    assert_true(a.nodes[0].raw.json ==
                body + strlen("{\"Pod\":{},\"Nodes\":{\"metadata\":{},\"items\":["));
    assert_int_equal(ext_filter_answer(&a, v, NULL, &out, NULL), 0);
    assert_string_equal(out.data, want);
    ext_buf_release(&out);
    ext_args_release(&a);
}

/* In Nodes mode a node is only looked up by name and echoed: its other fields are checked as
 * JSON, not decoded (the cache decides with its own view of the node), so values the cache's
 * decoder refuses (invalid/node-*) pass here. Its name is unescaped; metadata or a name that
 * is absent or null gives "". */
static void test_nodes_mode_reads_only_the_name(void **state)
{
    const char *body =
        "{\"Pod\":{},\"Nodes\":{\"items\":["
        "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":"
        "{\"cpu\":\"4\",\"memory\":\"16 Gi\"}}},"
        "{\"metadata\":{\"name\":\"n\\u0032\"},\"spec\":{\"unschedulable\":\"yes\"}},"
        "{\"metadata\":null},{\"metadata\":{\"name\":null}},{},"
        "{\"metadata\":{\"name\":\"x\"},\"metadata\":{\"uid\":\"u\"}},"
        "{\"metadata\":{\"name\":\"a\",\"name\":\"\\ud83d\\ude00\"}}]}}";
    static const char *const want[] = {"n1", "n2", "", "", "", "", "\xf0\x9f\x98\x80"};
    struct ext_args a;
    struct lt_err err;

    (void)state;
    lt_err_init(&err, NULL);
    if (ext_args_decode(&a, body, strlen(body), &err) != 0)
        fail_msg("%s", err.text);
    assert_false(a.names_mode);
    assert_int_equal(ext_args_candidates(&a), 7);
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(ext_args_candidate(&a, i), want[i]);
    assert_int_equal(
        a.nodes[1].raw.len,
        strlen("{\"metadata\":{\"name\":\"n\\u0032\"},\"spec\":{\"unschedulable\":\"yes\"}}"));
    ext_args_release(&a);
}

/* Go sorts map keys bytewise and keeps the last value of a repeated key; nil is null. */
static void test_results_sort_maps_and_print_nil_as_null(void **state)
{
    const struct ext_failed f[] = {{"b", "1"}, {"a", "2"}, {"b", "3"}, {"B", "4"}};
    const struct ext_filter_result r = {NULL, 0, NULL, 0, f, 4, NULL, 0, NULL};
    const struct ext_meta_victims mv[] = {{"n2", NULL, 0, 0}, {"n1", (const char *[]){"u"}, 0, 2}};
    const struct ext_host_priority none[1] = {{"unused", 0}};
    struct ext_buf out;

    (void)state;
    ext_buf_init(&out);
    assert_int_equal(ext_filter_result_encode(&r, &out, NULL), 0);
    assert_string_equal(out.data, "{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":"
                                  "{\"B\":\"4\",\"a\":\"2\",\"b\":\"3\"},"
                                  "\"FailedAndUnresolvableNodes\":null,\"Error\":\"\"}");
    ext_buf_reset(&out);
    assert_int_equal(ext_preempt_result_encode(mv, 2, &out, NULL), 0);
    assert_string_equal(out.data, "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[],"
                                  "\"NumPDBViolations\":2},\"n2\":{\"Pods\":null,"
                                  "\"NumPDBViolations\":0}}}");
    ext_buf_reset(&out);
    assert_int_equal(ext_preempt_result_encode(NULL, 0, &out, NULL), 0);
    assert_string_equal(out.data, "{\"NodeNameToMetaVictims\":null}");
    ext_buf_reset(&out);
    assert_int_equal(ext_priority_list_encode(NULL, 0, &out, NULL), 0);
    assert_string_equal(out.data, "null");
    ext_buf_reset(&out);
    assert_int_equal(ext_priority_list_encode(none, 0, &out, NULL), 0);
    assert_string_equal(out.data, "[]");
    ext_buf_release(&out);
}

/* Go's json.Marshal escapes <, >, & and U+2028/9, uses \b \f \n \r \t, \u00xx for other
 * controls, and replaces invalid UTF-8 with U+FFFD. */
static void test_strings_are_escaped_as_go_does(void **state)
{
    struct ext_buf out;

    (void)state;
    ext_buf_init(&out);
    assert_int_equal(ext_bind_result_encode("a<b>&\"\\\n\t\b\f\r\x01\x7f \xc3\xa9 \xe2\x80\xa8"
                                            " \xff \xed\xa0\x80 \xf0\x9f\x98\x80",
                                            &out, NULL),
                     0);
    assert_string_equal(out.data, "{\"Error\":\"a\\u003cb\\u003e\\u0026\\\"\\\\\\n\\t\\b\\f\\r"
                                  "\\u0001\x7f \xc3\xa9 \\u2028 \\ufffd \\ufffd\\ufffd\\ufffd "
                                  "\xf0\x9f\x98\x80\"}");
    ext_buf_release(&out);
}

/* ---------------------------------------------------------------------------------------
 * Bad input
 */

/* Builds {"Pod":{},"NodeNames":["n0",...]} with n names. */
static char *names_body(size_t n, size_t *len)
{
    size_t cap = 64 + n * 12, used;
    char *s = lt_malloc(cap);

    assert_non_null(s);
    used = (size_t)snprintf(s, cap, "{\"Pod\":{},\"NodeNames\":[");
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(s + used, cap - used, "%s\"n%zu\"", i ? "," : "", i);
    used += (size_t)snprintf(s + used, cap - used, "]}");
    *len = used;
    return s;
}

static void test_limits_reject_huge_arrays_by_name(void **state)
{
    size_t len, cap;
    char *body = names_body(EXT_MAX_NODES, &len);
    struct ext_args a;
    struct lt_err err;
    char want[128];

    (void)state;
    assert_int_equal(ext_args_decode(&a, body, len, NULL), 0); /* the limit itself is fine */
    assert_int_equal(ext_args_candidates(&a), EXT_MAX_NODES);
    ext_args_release(&a);
    lt_free(body);

    body = names_body(EXT_MAX_NODES + 1, &len);
    lt_err_init(&err, NULL);
    assert_int_equal(ext_args_decode(&a, body, len, &err), LT_ERANGE);
    snprintf(want, sizeof(want), "NodeNames: %d node names exceed the limit of %d",
             EXT_MAX_NODES + 1, EXT_MAX_NODES);
    assert_string_equal(err.text, want);
    ext_args_release(&a); /* safe after a failed decode */
    lt_free(body);

    /* EXT_MAX_CONTAINERS + 1 empty containers. */
    cap = 64 + 3 * (EXT_MAX_CONTAINERS + 1);
    body = lt_malloc(cap);
    assert_non_null(body);
    len = (size_t)snprintf(body, cap, "{\"Pod\":{\"spec\":{\"containers\":[{}");
    for (int i = 0; i < EXT_MAX_CONTAINERS; i++)
        len += (size_t)snprintf(body + len, cap - len, ",{}");
    len += (size_t)snprintf(body + len, cap - len, "]}}}");
    lt_err_init(&err, NULL);
    assert_int_equal(ext_args_decode(&a, body, len, &err), LT_ERANGE);
    snprintf(want, sizeof(want), "Pod.spec.containers: %d containers exceed the limit of %d",
             EXT_MAX_CONTAINERS + 1, EXT_MAX_CONTAINERS);
    assert_string_equal(err.text, want);
    lt_free(body);
}

/* Every prefix of a valid request is malformed JSON: an LT_EPARSE error, never a crash. */
static void test_truncated_requests_fail_cleanly(void **state)
{
    size_t len;
    char *body = golden("golden", "ExtenderPreemptionArgs.json", &len);

    (void)state;
    for (size_t cut = 0; cut < len; cut++) {
        struct ext_preempt_args a;
        struct ext_args b;
        struct lt_err err;

        lt_err_init(&err, NULL);
        assert_int_equal(ext_preempt_args_decode(&a, body, cut, &err), LT_EPARSE);
        assert_true(err.line >= 1);
        lt_err_init(&err, NULL);
        assert_true(ext_args_decode(&b, body, cut, &err) < 0);
    }
    lt_free(body);
}

/* Runs one invalid/<case>: returns "line column CODE\nmessage". */
static void run_invalid(const char *dir, char *got, size_t size)
{
    char path[512];
    size_t len = 0, dlen = 0;
    char *input, *decoder;
    struct lt_err err;
    int rc = 0;

    join(path, sizeof(path), dir, "input");
    input = slurp(path, &len);
    join(path, sizeof(path), dir, "decoder");
    decoder = slurp(path, &dlen);
    if (input == NULL || decoder == NULL)
        fail_msg("%s: needs input and decoder files", dir);
    lt_err_init(&err, NULL);
    if (strncmp(decoder, "args", 4) == 0) {
        struct ext_args a;

        rc = ext_args_decode(&a, input, len, &err);
        ext_args_release(&a);
    } else if (strncmp(decoder, "preempt", 7) == 0) {
        struct ext_preempt_args a;

        rc = ext_preempt_args_decode(&a, input, len, &err);
        ext_preempt_args_release(&a);
    } else if (strncmp(decoder, "bind", 4) == 0) {
        struct ext_bind_args a;

        rc = ext_bind_args_decode(&a, input, len, &err);
        ext_bind_args_release(&a);
    } else if (strncmp(decoder, "node", 4) == 0) {
        json_t *node = json_loadb(input, len, 0, NULL);
        struct ext_node n;

        assert_non_null(node);
        rc = ext_node_from_json(node, "Node", &n, &err);
        json_decref(node);
    } else {
        fail_msg("%s: unknown decoder '%s'", dir, decoder);
    }
    if (rc == 0 || err.code != rc)
        fail_msg("%s: rc %d, err.code %d: accepted or unexplained", dir, rc, err.code);
    snprintf(got, size, "%" PRId64 " %d %s\n%s\n", err.line, err.column, lt_err_name(rc), err.text);
    lt_free(input);
    lt_free(decoder);
}

/* invalid/<case>/error holds "line column CODE" and the exact message. Set
 * EXT_FIXTURES_WRITE=1 to create a missing error file from the current output (then read it). */
static void test_invalid_requests_report_path_and_reason(void **state)
{
    char dir[512], path[1024], file[1536], got[1024];
    DIR *d;
    struct dirent *e;
    size_t n = 0;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/invalid", EXT_FIXTURES);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len;
        char *want;

        if (e->d_name[0] == '.')
            continue;
        join(path, sizeof(path), dir, e->d_name);
        run_invalid(path, got, sizeof(got));
        join(file, sizeof(file), path, "error");
        want = slurp(file, &len);
        if (want == NULL && getenv("EXT_FIXTURES_WRITE") != NULL) {
            FILE *f = fopen(file, "w");

            assert_non_null(f);
            fputs(got, f);
            fclose(f);
            continue;
        }
        if (want == NULL || strcmp(want, got) != 0)
            fail_msg("invalid/%s:\nexpected: %s\ngot:      %s", e->d_name,
                     want ? want : "(no error file)", got);
        lt_free(want);
        n++;
    }
    closedir(d);
    assert_true(n >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity_values_match_kubernetes),
        cmocka_unit_test(test_quantity_rejects_malformed_and_out_of_range),
        cmocka_unit_test(test_quantity_messages_name_path_and_value),
        cmocka_unit_test(test_quantity_sums_are_exact_and_overflow_is_reported),
        cmocka_unit_test(test_pod_requests_sum_containers),
        cmocka_unit_test(test_pod_requests_take_max_of_init_containers),
        cmocka_unit_test(test_pod_requests_apply_the_sidecar_rule),
        cmocka_unit_test(test_pod_requests_add_overhead_and_pod_level_requests),
        cmocka_unit_test(test_pod_requests_default_to_limits),
        cmocka_unit_test(test_pod_requests_round_the_total_once),
        cmocka_unit_test(test_pod_fields_priority_sticky_and_deletion),
        cmocka_unit_test(test_node_allocatable_falls_back_to_capacity),
        cmocka_unit_test(test_golden_extender_args_decode_in_any_case),
        cmocka_unit_test(test_golden_filter_result_encodes_byte_for_byte),
        cmocka_unit_test(test_golden_preemption_args_decode_in_any_case),
        cmocka_unit_test(test_golden_results_encode_byte_for_byte),
        cmocka_unit_test(test_golden_binding_args_decode_in_any_case),
        cmocka_unit_test(test_keys_match_like_go),
        cmocka_unit_test(test_filter_answer_in_names_mode),
        cmocka_unit_test(test_filter_answer_in_nodes_mode_echoes_nodes),
        cmocka_unit_test(test_nodes_mode_reads_only_the_name),
        cmocka_unit_test(test_results_sort_maps_and_print_nil_as_null),
        cmocka_unit_test(test_strings_are_escaped_as_go_does),
        cmocka_unit_test(test_limits_reject_huge_arrays_by_name),
        cmocka_unit_test(test_truncated_requests_fail_cleanly),
        cmocka_unit_test(test_invalid_requests_report_path_and_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
