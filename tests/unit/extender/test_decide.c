/* test_decide.c -- lotus-extender's filter, prioritize and preempt (extender/decide.c).
 *
 * The snapshot is built here by hand, as cache.h describes it (one machine per node, one
 * placement per pod, task id = position in pods[]), so these tests do not depend on the
 * cache; requests are real extender/v1 JSON decoded by the codec.
 *
 * Cluster (cpu millicores / memory MiB; ephemeral 100 GiB everywhere):
 *   n1 4000/8192: u0 1000m prio 0 start 1 s, u1 1000m prio 0 start 2 s,
 *                 u2 1500m prio 0 start 3 s sticky            -> free 500m
 *   n2 2000/4096: u3 1800m prio 20                            -> free 200m
 *   n3 8000/16384: u5 100m prio 0                             -> free 7900m
 *   n4 1000/2048: u4 900m prio 0 sticky                       -> free 100m
 *
 * The overcommitted cluster (setup_over) is what the API server can report and kube-scheduler
 * still schedules on (NodeResourcesFit checks only the resources a pod requests):
 *   o1 1000/1024: hog 2000m 0Mi prio 0 start 3 s, m512 0m 512Mi prio 0 start 1 s
 *                                                      -> free -1000m, 512Mi
 *   o2 4000/8192: small 100m 256Mi prio 0 start 1 s    -> free 3900m, 7936Mi
 *
 * The LoTES-mode tests build their own five-node cluster and tables (lt_lotes_build) and write
 * tables files under a scratch directory.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "lt_mem.h"
#include "lt_test_dir.h"

#define MI (1024.0 * 1024.0)

struct fixture {
    struct lt_cluster *c;
    struct ext_snap_pod pods[6];
    struct ext_snapshot snap;
};

static void add_pod_req(struct fixture *f, size_t i, const char *uid, size_t node, int prio,
                        int64_t start_ms, struct lt_res req, bool sticky)
{
    struct lt_task t;
    struct ext_snap_pod *p = &f->pods[i];

    memset(&t, 0, sizeof(t));
    t.id = (int64_t)i;
    t.priority = prio;
    t.req = req;
    t.sticky = sticky;
    p->ns = "default";
    p->name = uid;
    p->uid = uid;
    p->priority = prio;
    p->start_ms = start_ms;
    p->sticky = sticky;
    p->req = t.req;
    p->node = node;
    assert_int_equal(lt_cluster_place(f->c, node, &t, LT_PLACE_FORCE, &p->pid, NULL), 0);
}

static void add_pod(struct fixture *f, size_t i, const char *uid, size_t node, int prio,
                    int64_t start_ms, double cpu, bool sticky)
{
    add_pod_req(f, i, uid, node, prio, start_ms, (struct lt_res){cpu, 256 * MI, 0}, sticky);
}

static int setup(void **state)
{
    static const struct lt_machine_spec m[] = {
        {"n1", {4000, 8192 * MI, 100 * 1024 * MI}},
        {"n2", {2000, 4096 * MI, 100 * 1024 * MI}},
        {"n3", {8000, 16384 * MI, 100 * 1024 * MI}},
        {"n4", {1000, 2048 * MI, 100 * 1024 * MI}},
    };
    struct lt_cluster_spec spec = {m, 4, {0, 0, 0}, 1};
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->c = lt_cluster_new(&spec, NULL);
    assert_non_null(f->c);
    add_pod(f, 0, "u0", 0, 0, 1000, 1000, false);
    add_pod(f, 1, "u1", 0, 0, 2000, 1000, false);
    add_pod(f, 2, "u2", 0, 0, 3000, 1500, true);
    add_pod(f, 3, "u3", 1, 20, 1000, 1800, false);
    add_pod(f, 4, "u4", 3, 0, 1000, 900, true);
    add_pod(f, 5, "u5", 2, 0, 1000, 100, false);
    f->snap.version = 1;
    f->snap.cluster = f->c;
    f->snap.pods = f->pods;
    f->snap.n_pods = 6;
    *state = f;
    return 0;
}

static int setup_over(void **state)
{
    static const struct lt_machine_spec m[] = {
        {"o1", {1000, 1024 * MI, 100 * 1024 * MI}},
        {"o2", {4000, 8192 * MI, 100 * 1024 * MI}},
    };
    struct lt_cluster_spec spec = {m, 2, {0, 0, 0}, 1};
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->c = lt_cluster_new(&spec, NULL);
    assert_non_null(f->c);
    add_pod_req(f, 0, "hog", 0, 0, 3000, (struct lt_res){2000, 0, 0}, false);
    add_pod_req(f, 1, "m512", 0, 0, 1000, (struct lt_res){0, 512 * MI, 0}, false);
    add_pod_req(f, 2, "small", 1, 0, 1000, (struct lt_res){100, 256 * MI, 0}, false);
    f->snap.version = 1;
    f->snap.cluster = f->c;
    f->snap.pods = f->pods;
    f->snap.n_pods = 3;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    lt_cluster_free(f->c);
    free(f);
    return 0;
}

/* An ExtenderArgs body in names mode for a pod of cpu and memory requests. */
static void decode_args(struct ext_args *a, const char *cpu, const char *mem, const char *names)
{
    char body[2048];
    struct lt_err e;

    snprintf(body, sizeof(body),
             "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"pre\"},"
             "\"spec\":{\"priority\":10,\"containers\":[{\"name\":\"c\",\"resources\":"
             "{\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"}}}]}},"
             "\"Nodes\":null,\"NodeNames\":%s}",
             cpu, mem, names);
    lt_err_init(&e, NULL);
    ext_args_init(a);
    if (ext_args_decode(a, body, strlen(body), &e) < 0)
        fail_msg("decode: %s", e.text);
}

static void test_filter_passes_fitting_nodes_and_names_short_resources(void **state)
{
    struct fixture *f = *state;
    struct ext_args a;
    struct ext_filter_decision d;

    decode_args(&a, "1500m", "1Gi", "[\"n1\",\"n2\",\"n3\",\"ghost\"]");
    ext_filter_decision_init(&d);
    assert_int_equal(ext_decide_filter(NULL, &f->snap, &a, &d, NULL), 0);
    assert_int_equal(d.n, 4);
    assert_int_equal(d.n_pass, 1);
    assert_int_equal(d.v[0].verdict, EXT_FAIL);
    assert_string_equal(d.v[0].reason, "Insufficient cpu: requested 1500m, free 500m");
    assert_int_equal(d.v[1].verdict, EXT_FAIL);
    assert_string_equal(d.v[1].reason, "Insufficient cpu: requested 1500m, free 200m");
    assert_int_equal(d.v[2].verdict, EXT_PASS);
    assert_null(d.v[2].reason);
    assert_int_equal(d.v[3].verdict, EXT_FAIL);
    assert_string_equal(d.v[3].reason, "unknown node");
    ext_filter_decision_release(&d);
    ext_args_release(&a);
}

static void test_filter_lists_every_short_resource(void **state)
{
    struct fixture *f = *state;
    struct ext_args a;
    struct ext_filter_decision d;

    /* n4 has 1000m/2048Mi capacity, 900m/256Mi used. */
    decode_args(&a, "500m", "1900Mi", "[\"n4\"]");
    ext_filter_decision_init(&d);
    assert_int_equal(ext_decide_filter(NULL, &f->snap, &a, &d, NULL), 0);
    assert_int_equal(d.v[0].verdict, EXT_FAIL);
    assert_string_equal(d.v[0].reason, "Insufficient cpu: requested 500m, free 100m; "
                                       "Insufficient memory: requested 1992294400, free "
                                       "1879048192");
    ext_filter_decision_release(&d);
    ext_args_release(&a);
}

static void test_filter_request_above_capacity_is_unresolvable(void **state)
{
    struct fixture *f = *state;
    struct ext_args a;
    struct ext_filter_decision d;

    decode_args(&a, "3", "1Gi", "[\"n2\",\"n3\"]");
    ext_filter_decision_init(&d);
    assert_int_equal(ext_decide_filter(NULL, &f->snap, &a, &d, NULL), 0);
    assert_int_equal(d.v[0].verdict, EXT_FAIL_UNRESOLVABLE);
    assert_string_equal(d.v[0].reason, "Insufficient cpu: requested 3000m, capacity 2000m");
    assert_int_equal(d.v[1].verdict, EXT_PASS);
    ext_filter_decision_release(&d);
    ext_args_release(&a);
}

static void test_filter_of_no_nodes_is_empty(void **state)
{
    struct fixture *f = *state;
    struct ext_args a;
    struct ext_filter_decision d;

    decode_args(&a, "1", "1Gi", "[]");
    ext_filter_decision_init(&d);
    assert_int_equal(ext_decide_filter(NULL, &f->snap, &a, &d, NULL), 0);
    assert_int_equal(d.n, 0);
    ext_filter_decision_release(&d);
    ext_args_release(&a);
}

/* NodeResourcesFit checks only what the pod requests: o1, 1000m short in cpu, takes a pod that
 * requests only memory or nothing, and a reason names only requested resources. */
static void test_filter_checks_only_the_resources_the_pod_requests(void **state)
{
    static const struct {
        const char *cpu, *mem;
        enum ext_verdict want;
        const char *reason;
    } cases[] = {
        {"0", "256Mi", EXT_PASS, NULL},
        {"0", "0", EXT_PASS, NULL},
        {"0", "600Mi", EXT_FAIL, "Insufficient memory: requested 629145600, free 536870912"},
        {"100m", "0", EXT_FAIL, "Insufficient cpu: requested 100m, free -1000m"},
        {"100m", "600Mi", EXT_FAIL,
         "Insufficient cpu: requested 100m, free -1000m; Insufficient memory: requested "
         "629145600, free 536870912"},
    };
    struct fixture *f = *state;

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct ext_args a;
        struct ext_filter_decision d;

        decode_args(&a, cases[k].cpu, cases[k].mem, "[\"o1\",\"o2\"]");
        ext_filter_decision_init(&d);
        assert_int_equal(ext_decide_filter(NULL, &f->snap, &a, &d, NULL), 0);
        assert_int_equal(d.v[0].verdict, cases[k].want);
        if (cases[k].reason == NULL)
            assert_null(d.v[0].reason);
        else
            assert_string_equal(d.v[0].reason, cases[k].reason);
        assert_int_equal(d.v[1].verdict, EXT_PASS);
        ext_filter_decision_release(&d);
        ext_args_release(&a);
    }
}

/* Every policy ranks o1 for a memory-only pod (its cpu counts as full, not as infeasible): the
 * only feasible candidate gets 10. A pod that requests cpu still finds o1 infeasible. */
static void test_prioritize_ranks_a_node_short_only_in_unrequested_resources(void **state)
{
    struct fixture *f = *state;

    for (size_t p = 0; p < lt_policy_count(); p++) {
        struct ext_decide_config cfg = {lt_policy_at(p), NULL, NULL, NULL};
        struct ext_host_priority hp[2];
        struct ext_args a;
        struct lt_rng rng;

        lt_rng_init(&rng, 3, LT_RNG_POLICY);
        decode_args(&a, "0", "256Mi", "[\"o1\",\"ghost\"]");
        assert_int_equal(ext_decide_prioritize(&cfg, &f->snap, &a, &rng, hp, NULL), 0);
        if (hp[0].score != EXT_MAX_PRIORITY)
            fail_msg("%s: o1 scored %d for a memory-only pod", lt_policy_name(cfg.policy),
                     (int)hp[0].score);
        assert_int_equal(hp[1].score, 0);
        ext_args_release(&a);
        decode_args(&a, "100m", "256Mi", "[\"o1\",\"o2\"]");
        assert_int_equal(ext_decide_prioritize(&cfg, &f->snap, &a, &rng, hp, NULL), 0);
        assert_int_equal(hp[0].score, 0);
        assert_int_equal(hp[1].score, EXT_MAX_PRIORITY);
        ext_args_release(&a);
    }
}

/* A preemptor short in memory on o1 evicts for memory only: mrs takes hog first (the most
 * recently started), then m512; hog is given back, since the pod requests no cpu and o1's
 * cpu overcommitment is none of its business. */
static void test_preempt_frees_only_the_resources_the_pod_requests(void **state)
{
    static const char body[] =
        "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"pre\"},"
        "\"spec\":{\"priority\":10,\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"requests\":{\"memory\":\"900Mi\"}}}]}},\"NodeNameToVictims\":null,"
        "\"NodeNameToMetaVictims\":{\"o1\":{\"Pods\":[{\"UID\":\"hog\"}],\"NumPDBViolations\":0}}}";
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), lt_evict_find("mrs", NULL),
                                    NULL, NULL};
    struct fixture *f = *state;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;
    struct lt_err e;

    lt_err_init(&e, NULL);
    ext_preempt_args_init(&a);
    if (ext_preempt_args_decode(&a, body, strlen(body), &e) < 0)
        fail_msg("decode: %s", e.text);
    ext_preempt_decision_init(&d);
    assert_int_equal(ext_decide_preempt(&cfg, &f->snap, &a, NULL, &d, NULL), 0);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.nodes[0].node, "o1");
    assert_int_equal(d.nodes[0].n_uids, 1);
    assert_string_equal(d.nodes[0].uids[0], "m512");
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
}

/* The RNG seed of a request is a function of the pod (its uid, else namespace/name) and --seed,
 * not of how many requests came before: replicas behind one Service draw alike. */
static void test_pod_seed_depends_on_the_pod_only(void **state)
{
    struct ext_pod a = {0}, b = {0};

    (void)state;
    a.ns = b.ns = "default";
    a.name = b.name = "p";
    a.uid = "u-1";
    b.uid = "u-1";
    assert_true(ext_pod_seed(1, &a) == ext_pod_seed(1, &b));
    assert_true(ext_pod_seed(1, &a) != ext_pod_seed(2, &a));
    b.uid = "u-2";
    assert_true(ext_pod_seed(1, &a) != ext_pod_seed(1, &b));
    a.uid = b.uid = "";
    assert_true(ext_pod_seed(1, &a) == ext_pod_seed(1, &b));
    b.name = "q";
    assert_true(ext_pod_seed(1, &a) != ext_pod_seed(1, &b));
}

/* docs/extender.md "prioritize": raw 1, 2, 3 -> 10, 5, 0; infeasible -> 0. */
static void test_scores_map_is_linear_between_best_and_worst(void **state)
{
    const double raw[] = {1, 2, 3, LT_SCORE_INFEASIBLE, 1.6};
    int64_t out[5];

    (void)state;
    ext_scores_map(raw, 5, out);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 5);
    assert_int_equal(out[2], 0);
    assert_int_equal(out[3], 0);
    assert_int_equal(out[4], 7); /* 10 * (3 - 1.6) / 2 = 7.0 */
}

static void test_scores_map_rounds_half_away_from_zero(void **state)
{
    const double raw[] = {0, 0.25, 0.35, 1};
    int64_t out[4];

    (void)state;
    ext_scores_map(raw, 4, out);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 8); /* 7.5 */
    assert_int_equal(out[2], 7); /* 6.5 */
    assert_int_equal(out[3], 0);
}

static void test_scores_map_equal_scores_all_get_ten(void **state)
{
    const double raw[] = {0.5, 0.5, LT_SCORE_INFEASIBLE};
    const double none[] = {LT_SCORE_INFEASIBLE, NAN};
    int64_t out[3];

    (void)state;
    ext_scores_map(raw, 3, out);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 10);
    assert_int_equal(out[2], 0);
    ext_scores_map(none, 2, out);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0);
}

/* The policy's choice alone keeps 10; other 10s become 9; lower scores are kept. */
static void test_scores_single_top_leaves_one_ten(void **state)
{
    int64_t out[5] = {10, 10, 7, 0, 10};
    int64_t none[2] = {10, 10};

    (void)state;
    ext_scores_single_top(out, 5, 1);
    assert_int_equal(out[0], 9);
    assert_int_equal(out[1], 10);
    assert_int_equal(out[2], 7);
    assert_int_equal(out[3], 0);
    assert_int_equal(out[4], 9);
    ext_scores_single_top(none, 2, 2); /* no choice: nobody keeps 10 */
    assert_int_equal(none[0], 9);
    assert_int_equal(none[1], 9);
}

/* prioritize == the policy's own rank mapped, in input order; unknown nodes get 0. */
static void test_prioritize_maps_the_policy_rank_in_input_order(void **state)
{
    struct fixture *f = *state;
    const char *names[] = {"bestfit1", "firstfit", "sos10"};

    for (size_t p = 0; p < sizeof(names) / sizeof(names[0]); p++) {
        struct ext_decide_config cfg = {lt_policy_find(names[p], NULL), NULL, NULL, NULL};
        struct ext_args a;
        struct ext_host_priority hp[4];
        const size_t cand[] = {2, 0, 1};
        double raw[4];
        int64_t want[4];
        struct lt_task t;

        assert_non_null(cfg.policy);
        decode_args(&a, "100m", "128Mi", "[\"n3\",\"n1\",\"n2\",\"ghost\"]");
        assert_int_equal(ext_decide_prioritize(&cfg, &f->snap, &a, NULL, hp, NULL), 0);
        t = ext_pod_task(&a.pod);
        assert_int_equal(lt_policy_rank(cfg.policy, f->c, &t, cand, 3, NULL, raw, NULL), 0);
        raw[3] = LT_SCORE_INFEASIBLE;
        ext_scores_map(raw, 4, want);
        ext_scores_single_top(want, 4, lt_scores_best(cand, raw, 3));
        assert_string_equal(hp[0].host, "n3");
        assert_string_equal(hp[1].host, "n1");
        assert_string_equal(hp[2].host, "n2");
        assert_string_equal(hp[3].host, "ghost");
        for (size_t i = 0; i < 4; i++)
            assert_int_equal(hp[i].score, want[i]);
        assert_int_equal(hp[lt_scores_best(cand, raw, 3)].score, EXT_MAX_PRIORITY);
        for (size_t i = 0, tens = 0; i < 4; i++) {
            tens += hp[i].score == EXT_MAX_PRIORITY;
            assert_true(tens <= 1);
        }
        assert_int_equal(hp[3].score, 0);
        ext_args_release(&a);
    }
}

static void decode_preempt(struct ext_preempt_args *a, bool meta)
{
    static const char *pod =
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"pre\"},"
        "\"spec\":{\"priority\":10,\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"requests\":{\"cpu\":\"1500m\",\"memory\":\"128Mi\"}}}]}}";
#define VPOD "{\"metadata\":{\"name\":\"v\",\"uid\":\"%s\"},\"spec\":{}}"
    char body[4096], v0[256], v9[256];
    struct lt_err e;

    if (meta) {
        snprintf(body, sizeof(body),
                 "{\"Pod\":%s,\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                 "\"n1\":{\"Pods\":[{\"UID\":\"u0\"}],\"NumPDBViolations\":0},"
                 "\"n2\":{\"Pods\":[{\"UID\":\"u3\"}],\"NumPDBViolations\":0},"
                 "\"n3\":{\"Pods\":[{\"UID\":\"u9\"},{\"UID\":\"u5\"}],"
                 "\"NumPDBViolations\":0},"
                 "\"n4\":{\"Pods\":[{\"UID\":\"u4\"}],\"NumPDBViolations\":0},"
                 "\"ghost\":{\"Pods\":[{\"UID\":\"u5\"}],\"NumPDBViolations\":0}}}",
                 pod);
    } else {
        snprintf(v0, sizeof(v0), VPOD, "u0");
        snprintf(v9, sizeof(v9), VPOD, "u5");
        snprintf(body, sizeof(body),
                 "{\"Pod\":%s,\"NodeNameToMetaVictims\":null,\"NodeNameToVictims\":{"
                 "\"n1\":{\"Pods\":[%s],\"NumPDBViolations\":0},"
                 "\"n3\":{\"Pods\":[%s],\"NumPDBViolations\":1}}}",
                 pod, v0, v9);
    }
    lt_err_init(&e, NULL);
    ext_preempt_args_init(a);
    if (ext_preempt_args_decode(a, body, strlen(body), &e) < 0)
        fail_msg("decode: %s", e.text);
}

static void preempt(struct fixture *f, const char *evict, bool meta, struct ext_preempt_decision *d,
                    struct ext_preempt_args *a)
{
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), lt_evict_find(evict, NULL),
                                    NULL, NULL};
    struct lt_rng rng;

    lt_rng_init(&rng, 7, LT_RNG_EVICTION);
    decode_preempt(a, meta);
    ext_preempt_decision_init(d);
    assert_int_equal(ext_decide_preempt(&cfg, &f->snap, a, &rng, d, NULL), 0);
}

/* n1: u2 is sticky, so mrs takes u1 (started last among the rest) and that is enough; n2's
 * only pod outranks the preemptor; n3 already fits, so kube-scheduler's proposal is kept
 * without u9, which is not on n3; n4's only pod is sticky; ghost is unknown. */
static void test_preempt_mrs_skips_sticky_and_drops_hopeless_nodes(void **state)
{
    struct fixture *f = *state;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;

    preempt(f, "mrs", true, &d, &a);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.nodes[0].node, "n1");
    assert_int_equal(d.nodes[0].n_uids, 1);
    assert_string_equal(d.nodes[0].uids[0], "u1");
    assert_int_equal(d.nodes[0].num_pdb_violations, 0);
    assert_string_equal(d.nodes[1].node, "n3");
    assert_int_equal(d.nodes[1].n_uids, 1);
    assert_string_equal(d.nodes[1].uids[0], "u5");
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
}

static void test_preempt_lrs_takes_the_oldest(void **state)
{
    struct fixture *f = *state;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;

    preempt(f, "lrs", true, &d, &a);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.nodes[0].uids[0], "u0");
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
}

static void test_preempt_rnd_takes_one_non_sticky_victim(void **state)
{
    struct fixture *f = *state;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;

    preempt(f, "rnd", true, &d, &a);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.nodes[0].n_uids, 1);
    assert_true(strcmp(d.nodes[0].uids[0], "u0") == 0 || strcmp(d.nodes[0].uids[0], "u1") == 0);
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
}

/* Full Pods mode reads NodeNameToVictims and answers the same way (MetaVictims, PDB 0). */
static void test_preempt_full_pods_mode(void **state)
{
    struct fixture *f = *state;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;
    struct ext_buf b;

    preempt(f, "mrs", false, &d, &a);
    assert_int_equal(d.n, 2);
    ext_buf_init(&b);
    assert_int_equal(ext_preempt_result_encode(d.nodes, d.n, &b, NULL), 0);
    assert_string_equal(b.data, "{\"NodeNameToMetaVictims\":{"
                                "\"n1\":{\"Pods\":[{\"UID\":\"u1\"}],\"NumPDBViolations\":0},"
                                "\"n3\":{\"Pods\":[{\"UID\":\"u5\"}],\"NumPDBViolations\":0}}}");
    ext_buf_release(&b);
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
}

/* ------------------------------------------------------------------------------------------
 * Slot mode (docs/extender.md "Slot mode").
 */

/* A slots file given as JSON text, into sl (file mode). */
static void slots_file(struct ext_slots *sl, const char *json)
{
    json_error_t je;
    json_t *root = json_loads(json, 0, &je);
    struct lt_err e;

    assert_non_null(root);
    lt_err_init(&e, NULL);
    ext_slots_init(sl);
    sl->mode = EXT_SLOTS_FILE;
    if (ext_slots_load_json(sl, root, "slots.json", &e) < 0)
        fail_msg("slots file: %s", e.text);
    json_decref(root);
}

static void filter_slots(struct fixture *f, const struct ext_slots *sl, const char *cpu,
                         const char *names, struct ext_filter_decision *d)
{
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), NULL, sl, NULL};
    struct ext_args a;

    decode_args(&a, cpu, "128Mi", names);
    ext_filter_decision_init(d);
    assert_int_equal(ext_decide_filter(&cfg, &f->snap, &a, d, NULL), 0);
    ext_args_release(&a);
}

/* Capacity mode, SC1 with 16 cores as one unit: 16 slots per 16 cores, so n1 (4 cores) 4,
 * n2 2, n3 8, n4 (1 core) 1; a node with no CPU has none. n4 holds one pod: full. */
static void test_slots_capacity_limits_and_the_filter_reason(void **state)
{
    struct fixture *f = *state;
    struct ext_slots sl;
    struct ext_filter_decision d;

    ext_slots_init(&sl);
    sl.mode = EXT_SLOTS_CAPACITY;
    sl.level = 1;
    sl.cpu_unit_milli = 16000;
    assert_int_equal(ext_slots_limit(&sl, "n1", 4000), 4);
    assert_int_equal(ext_slots_limit(&sl, "n2", 2000), 2);
    assert_int_equal(ext_slots_limit(&sl, "n3", 8000), 8);
    assert_int_equal(ext_slots_limit(&sl, "n4", 1000), 1);
    assert_int_equal(ext_slots_limit(&sl, "x", 0), 0);
    sl.level = 3; /* SC3 with 1 core a unit: 48 slots per core (lt_slot_config_sc's rule) */
    sl.cpu_unit_milli = 1000;
    assert_int_equal(ext_slots_limit(&sl, "n4", 1000), 48);
    assert_int_equal(ext_slots_limit(&sl, "n1", 500), 24);
    sl.level = 1;
    sl.cpu_unit_milli = 16000;

    filter_slots(f, &sl, "100m", "[\"n1\",\"n2\",\"n3\",\"n4\"]", &d);
    assert_int_equal(d.n_pass, 3);
    assert_int_equal(d.v[0].verdict, EXT_PASS);
    assert_int_equal(d.v[3].verdict, EXT_FAIL);
    assert_string_equal(d.v[3].reason, "no free slot (1/1 used)");
    ext_filter_decision_release(&d);
    /* short resources and a full node: both named */
    filter_slots(f, &sl, "500m", "[\"n4\"]", &d);
    assert_int_equal(d.v[0].verdict, EXT_FAIL);
    assert_string_equal(d.v[0].reason,
                        "Insufficient cpu: requested 500m, free 100m; no free slot (1/1 used)");
    ext_filter_decision_release(&d);
    /* mode off: the same node passes on its resources alone */
    sl.mode = EXT_SLOTS_OFF;
    filter_slots(f, &sl, "100m", "[\"n4\"]", &d);
    assert_int_equal(d.v[0].verdict, EXT_PASS);
    ext_filter_decision_release(&d);
    ext_slots_release(&sl);
}

/* File mode: named nodes get their count, others the default; without a default an unnamed
 * node has no slots, which evicting cannot change. n1 holds 3 pods. */
static void test_slots_file_limits_and_default(void **state)
{
    struct fixture *f = *state;
    struct ext_slots sl;
    struct ext_filter_decision d;

    slots_file(&sl, "{\"nodes\":{\"n1\":{\"slots\":3,\"production\":true},\"n3\":2},"
                    "\"default\":{\"slots\":5}}");
    assert_int_equal(sl.n_nodes, 2);
    assert_true(sl.nodes[0].production);
    assert_int_equal(ext_slots_limit(&sl, "n1", 4000), 3);
    assert_int_equal(ext_slots_limit(&sl, "n3", 8000), 2);
    assert_int_equal(ext_slots_limit(&sl, "n2", 2000), 5);
    filter_slots(f, &sl, "100m", "[\"n1\",\"n2\",\"n3\"]", &d);
    assert_int_equal(d.v[0].verdict, EXT_FAIL);
    assert_string_equal(d.v[0].reason, "no free slot (3/3 used)");
    assert_int_equal(d.v[1].verdict, EXT_PASS);
    assert_int_equal(d.v[2].verdict, EXT_PASS);
    ext_filter_decision_release(&d);
    ext_slots_release(&sl);

    slots_file(&sl, "{\"nodes\":{\"n1\":4}}");
    filter_slots(f, &sl, "100m", "[\"n1\",\"n2\"]", &d);
    assert_int_equal(d.v[0].verdict, EXT_PASS);
    assert_int_equal(d.v[1].verdict, EXT_FAIL_UNRESOLVABLE);
    assert_string_equal(d.v[1].reason, "node has no slots");
    ext_filter_decision_release(&d);
    ext_slots_release(&sl);
}

/* Every bad slots file is refused with its JSON path. */
static void test_slots_file_rejects_bad_values_with_their_json_path(void **state)
{
    static const struct {
        const char *json, *msg;
    } cases[] = {
        {"{\"nodes\":{\"n1\":{\"slots\":\"x\"}}}",
         "slots.json: nodes[\"n1\"].slots: expected an integer 1..1000000, got the string \"x\""},
        {"{\"nodes\":{\"n1\":0}}",
         "slots.json: nodes[\"n1\"]: expected an integer 1..1000000, got 0"},
        {"{\"nodes\":{\"n1\":{\"slots\":2,\"production\":1}}}",
         "slots.json: nodes[\"n1\"].production: expected a boolean, got 1"},
        {"{\"nodes\":{\"n1\":{\"slot\":2}}}",
         "slots.json: nodes[\"n1\"]: unknown key 'slot' (known: slots, production)"},
        {"{\"nodes\":{\"n1\":{\"production\":true}}}", "slots.json: nodes[\"n1\"].slots: missing"},
        {"{\"nodes\":[]}", "slots.json: nodes: expected an object, got an array"},
        {"{\"nodez\":{}}", "slots.json: unknown key 'nodez' (known: nodes, default)"},
        {"{\"default\":1e3}", "slots.json: default: expected an integer 1..1000000, got 1000"},
        {"{}", "slots.json: no node and no default: every node would have no slot"},
        {"[]", "slots.json: expected an object, got an array"},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        json_t *root = json_loads(cases[k].json, JSON_DECODE_ANY, NULL);
        struct ext_slots sl;
        struct lt_err e;

        assert_non_null(root);
        lt_err_init(&e, NULL);
        ext_slots_init(&sl);
        assert_int_equal(ext_slots_load_json(&sl, root, "slots.json", &e), LT_EINVAL);
        assert_string_equal(e.text, cases[k].msg);
        assert_int_equal(sl.n_nodes, 0);
        ext_slots_release(&sl);
        json_decref(root);
    }
}

/* spec.priority to class through the 11 thresholds; production is class 9..11. */
static void test_priority_classes_from_thresholds(void **state)
{
    struct ext_slots sl;
    struct lt_err e;
    int32_t t[11];

    (void)state;
    ext_slots_init(&sl);
    assert_int_equal(ext_slots_class(&sl, -5), 0);
    assert_int_equal(ext_slots_class(&sl, 0), 0);
    assert_int_equal(ext_slots_class(&sl, 9), 9);
    assert_int_equal(ext_slots_class(&sl, 1000000), 11);
    assert_int_equal(
        ext_slots_parse_classes("0,10,20,30,40,50,60,70,1000,2000,3000", sl.thresholds, NULL), 0);
    assert_int_equal(ext_slots_class(&sl, 999), 8);
    assert_int_equal(ext_slots_class(&sl, 1000), 9);
    lt_err_init(&e, NULL);
    assert_int_equal(ext_slots_parse_classes("1,2,3", t, &e), LT_EPARSE);
    assert_int_equal(ext_slots_parse_classes("1,2,3,4,5,6,7,8,9,10,10", t, &e), LT_EINVAL);
    assert_int_equal(ext_slots_parse_classes("1,2,3,4,5,6,7,8,9,10,11,12", t, NULL), LT_EPARSE);
}

static void prioritize_slots(struct fixture *f, const struct ext_slots *sl, const char *cpu,
                             const char *names, struct ext_host_priority hp[4])
{
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), NULL, sl, NULL};
    struct ext_args a;

    decode_args(&a, cpu, "128Mi", names);
    assert_int_equal(ext_decide_prioritize(&cfg, &f->snap, &a, NULL, hp, NULL), 0);
    ext_args_release(&a);
}

/* WASP for a production pod (priority 10 -> class 10): slot power = CPU / slots, n1 4000m/4 =
 * 1000m (1 free), n2 2000/4 and n3 8000/16 = 500m, n4 full. n1, the only most powerful free
 * slot, gets 10 although bestfit1 alone prefers another node; n4 gets 0. A non-production pod
 * (class 0 after raising the thresholds) keeps bestfit1's scores, n4 excepted (no slot). */
static void test_prioritize_production_prefers_the_most_powerful_free_slot(void **state)
{
    struct fixture *f = *state;
    struct ext_slots sl;
    struct ext_host_priority hp[4], off[4], off3[4];
    const char *all = "[\"n1\",\"n2\",\"n3\",\"n4\"]";

    slots_file(&sl, "{\"nodes\":{\"n1\":4,\"n2\":4,\"n3\":16,\"n4\":1}}");
    prioritize_slots(f, NULL, "100m", all, off);
    assert_true(off[0].score < EXT_MAX_PRIORITY); /* bestfit1 alone: not n1 */
    assert_true(off[3].score > 0);
    prioritize_slots(f, &sl, "100m", all, hp);
    assert_int_equal(hp[0].score, EXT_MAX_PRIORITY);
    assert_true(hp[1].score < hp[0].score);
    assert_true(hp[2].score < hp[0].score);
    assert_int_equal(hp[3].score, 0);
    /* inside the tier of n2 and n3 the policy orders: bestfit1 prefers n2 (less free CPU) */
    assert_true(off[1].score > off[2].score);
    assert_true(hp[1].score > hp[2].score);

    assert_int_equal(ext_slots_parse_classes("100,200,300,400,500,600,700,800,900,1000,1100",
                                             sl.thresholds, NULL),
                     0);
    prioritize_slots(f, &sl, "100m", all, hp);
    assert_int_equal(hp[3].score, 0);
    prioritize_slots(f, NULL, "100m", "[\"n1\",\"n2\",\"n3\"]", off3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hp[i].score, off3[i].score);
    ext_slots_release(&sl);
}

/* preempt a 100m priority-10 pod: by resources it fits everywhere, so with the slot mode off
 * nothing is proposed (kube-scheduler proposed no victims). With every node full of slots: n1
 * needs a victim, mrs takes u1 (u2 started later but is sticky); n2's pod outranks it; n3
 * gives u5; n4's only pod is sticky. */
static void preempt_slots(struct fixture *f, const struct ext_slots *sl, const char *evict,
                          struct ext_preempt_decision *d, struct ext_preempt_args *a)
{
    static const char body[] =
        "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"pre\"},"
        "\"spec\":{\"priority\":10,\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}},"
        "\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
        "\"n1\":{\"Pods\":[],\"NumPDBViolations\":0},\"n2\":{\"Pods\":[],\"NumPDBViolations\":0},"
        "\"n3\":{\"Pods\":[],\"NumPDBViolations\":0},\"n4\":{\"Pods\":[],\"NumPDBViolations\":0}}}";
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), lt_evict_find(evict, NULL),
                                    sl, NULL};
    struct lt_err e;

    lt_err_init(&e, NULL);
    ext_preempt_args_init(a);
    if (ext_preempt_args_decode(a, body, strlen(body), &e) < 0)
        fail_msg("decode: %s", e.text);
    ext_preempt_decision_init(d);
    assert_int_equal(ext_decide_preempt(&cfg, &f->snap, a, NULL, d, NULL), 0);
}

static void test_preempt_frees_a_slot_on_a_full_node(void **state)
{
    struct fixture *f = *state;
    struct ext_slots sl;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;

    preempt_slots(f, NULL, "mrs", &d, &a);
    assert_int_equal(d.n, 0);
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);

    slots_file(&sl, "{\"nodes\":{\"n1\":3,\"n2\":1,\"n3\":1,\"n4\":1}}");
    preempt_slots(f, &sl, "mrs", &d, &a);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.nodes[0].node, "n1");
    assert_int_equal(d.nodes[0].n_uids, 1);
    assert_string_equal(d.nodes[0].uids[0], "u1");
    assert_string_equal(d.nodes[1].node, "n3");
    assert_int_equal(d.nodes[1].n_uids, 1);
    assert_string_equal(d.nodes[1].uids[0], "u5");
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
    ext_slots_release(&sl);
}

/* n1 holds u0, u1 and the sticky u2. With 2 slots two pods must go, and they are u0 and u1,
 * never u2, under every policy; with 1 slot all three would have to go, so n1 is dropped. */
static void test_preempt_never_chooses_a_sticky_pod(void **state)
{
    struct fixture *f = *state;
    const char *pol[] = {"mrs", "lrs"};
    struct ext_slots sl;
    struct ext_preempt_args a;
    struct ext_preempt_decision d;

    for (size_t k = 0; k < 2; k++) {
        slots_file(&sl, "{\"nodes\":{\"n1\":2}}");
        preempt_slots(f, &sl, pol[k], &d, &a);
        assert_int_equal(d.n, 1);
        assert_string_equal(d.nodes[0].node, "n1");
        assert_int_equal(d.nodes[0].n_uids, 2);
        for (size_t i = 0; i < 2; i++)
            assert_true(strcmp(d.nodes[0].uids[i], "u0") == 0 ||
                        strcmp(d.nodes[0].uids[i], "u1") == 0);
        assert_string_not_equal(d.nodes[0].uids[0], d.nodes[0].uids[1]);
        ext_preempt_decision_release(&d);
        ext_preempt_args_release(&a);
        ext_slots_release(&sl);
    }
    slots_file(&sl, "{\"nodes\":{\"n1\":1}}");
    preempt_slots(f, &sl, "mrs", &d, &a);
    assert_int_equal(d.n, 0);
    ext_preempt_decision_release(&d);
    ext_preempt_args_release(&a);
    ext_slots_release(&sl);
}

/* ext_fmt_f0 writes exactly what printf's "%.0f" writes: ties to even, -0, large values,
 * and a million random doubles of the sizes quantities take (milli-CPU, bytes). */
static void test_fmt_f0_equals_printf(void **state)
{
    static const double fixed[] = {0.0,
                                   -0.0,
                                   0.4,
                                   0.5,
                                   1.5,
                                   2.5,
                                   -0.4,
                                   -0.5,
                                   -1.5,
                                   3.49,
                                   1e15,
                                   4.5e15,
                                   9007199254740991.0,
                                   9007199254740993.0,
                                   1e300,
                                   -1e300,
                                   123456789.5};
    char want[EXT_FMT_F0_MAX + 8], got[EXT_FMT_F0_MAX];
    uint64_t x = 88172645463325252u;

    (void)state;
    for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
        snprintf(want, sizeof(want), "%.0f", fixed[k]);
        assert_int_equal(ext_fmt_f0(got, fixed[k]), strlen(want));
        assert_string_equal(got, want);
    }
    for (int k = 0; k < 1000000; k++) {
        double v;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* magnitudes 1e-3 .. 1e13, a quarter negative, some exact halves */
        v = (double)(x % 100000000) * pow(10.0, (double)((x >> 40) % 10) - 4.0);
        if ((x >> 50) % 8 == 0)
            v = floor(v) + 0.5;
        if ((x >> 53) % 4 == 0)
            v = -v;
        snprintf(want, sizeof(want), "%.0f", v);
        ext_fmt_f0(got, v);
        if (strcmp(got, want) != 0) {
            print_error("%.17g: got %s, printf %s\n", v, got, want);
            fail();
        }
    }
}

/* ---- LoTES mode (--lotes-tables) ---------------------------------------------------------- */

#define GI (1024.0 * MI)

/* Tables in the extender's units: x requests (1000m, 256Mi), y (250m, 1Gi); "cpu-rich" is
 * (4000m, 1Gi), "mem-rich" (1000m, 4Gi), 3 machines each. The allocation LP sends x to cpu-rich
 * and y to mem-rich only (rho 1 each; test_lotes's two-configuration instance, scaled). */
static struct lt_lotes_tables *lotes_tables(void)
{
    struct lt_lotes_class k[2];
    struct lt_lotes_config c[2];
    struct lt_lotes_problem p = {k, 2, c, 2};
    struct lt_lotes_tables *t;

    memset(k, 0, sizeof(k));
    memset(c, 0, sizeof(c));
    snprintf(k[0].name, sizeof(k[0].name), "x");
    snprintf(k[1].name, sizeof(k[1].name), "y");
    k[0].alpha = k[1].alpha = 0.5;
    k[0].mu = k[1].mu = 1;
    k[0].req = (struct lt_res){1000, 0.25 * GI, 0};
    k[1].req = (struct lt_res){250, GI, 0};
    snprintf(c[0].name, sizeof(c[0].name), "cpu-rich");
    snprintf(c[1].name, sizeof(c[1].name), "mem-rich");
    c[0].cap = (struct lt_res){4000, GI, 0};
    c[1].cap = (struct lt_res){1000, 4 * GI, 0};
    c[0].n = c[1].n = 3;
    t = lt_lotes_build(&p, NULL);
    assert_non_null(t);
    lt_assert_near(t->rho[0 * 2 + 0], 1, 0);
    lt_assert_near(t->rho[1 * 2 + 1], 1, 0);
    return t;
}

/* A cluster of five nodes in name order: a1, a2 cpu-rich (a1 has 3500m requested), b1, b2
 * mem-rich, c1 of a shape the tables do not know. Ephemeral storage everywhere (the tables
 * have none, so it is not compared). */
static struct lt_cluster *lotes_cluster(void)
{
    static const struct lt_machine_spec m[] = {
        {"a1", {4000, GI, 10 * GI}},     {"a2", {4000, GI, 10 * GI}},
        {"b1", {1000, 4 * GI, 10 * GI}}, {"b2", {1000, 4 * GI, 10 * GI}},
        {"c1", {2000, 2 * GI, 10 * GI}},
    };
    struct lt_cluster_spec spec = {m, 5, {0, 0, 0}, 1};
    struct lt_cluster *c = lt_cluster_new(&spec, NULL);
    struct lt_task t;
    size_t pid;

    assert_non_null(c);
    memset(&t, 0, sizeof(t));
    t.req = (struct lt_res){3500, 0.25 * GI, 0};
    assert_int_equal(lt_cluster_place(c, 0, &t, LT_PLACE_FORCE, &pid, NULL), 0);
    return c;
}

static void prioritize_lotes(const struct ext_snapshot *s, const struct ext_lotes *l,
                             const char *cpu, const char *mem, struct ext_host_priority hp[6])
{
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), NULL, NULL, l};
    struct ext_args a;

    decode_args(&a, cpu, mem, "[\"a1\",\"a2\",\"b1\",\"b2\",\"c1\",\"ghost\"]");
    assert_int_equal(ext_decide_prioritize(&cfg, s, &a, NULL, hp, NULL), 0);
    ext_args_release(&a);
}

/* The pod's class decides the order: an x-like pod (400m, 200Mi) is nearest x, so the
 * cpu-rich nodes (rho 1, bins of x) come first and the one bestfit1 prefers (a1, fuller) gets
 * 10 and a2 rises above b1 (bestfit1 alone has it the other way); a y-like pod (300m, 900Mi)
 * puts the mem-rich nodes first. The tables have 3 machines per configuration, the cluster 2:
 * each present node still gets a bin of its configuration. A pod that does not fit a1 now
 * leaves it at 0; an unknown node is 0; c1 (no configuration) only ever ranks with the "any
 * room" group. */
static void test_lotes_prioritize_follows_the_class_and_rho(void **state)
{
    struct ext_lotes l;
    struct ext_snapshot s;
    struct ext_host_priority hp[6], off[6];

    (void)state;
    memset(&s, 0, sizeof(s));
    s.cluster = lotes_cluster();
    l.t = lotes_tables();
    prioritize_lotes(&s, &l, "400m", "200Mi", hp);
    assert_int_equal(hp[0].score, EXT_MAX_PRIORITY);
    assert_true(hp[1].score > hp[2].score && hp[1].score > hp[3].score);
    assert_true(hp[1].score > hp[4].score);
    assert_int_equal(hp[5].score, 0);
    prioritize_lotes(&s, NULL, "400m", "200Mi", off);
    assert_true(off[1].score < off[2].score); /* bestfit1 alone puts b1 above a2 */

    prioritize_lotes(&s, &l, "300m", "900Mi", hp); /* a1 has 768Mi free: no room */
    assert_int_equal(hp[0].score, 0);
    /* a2 and b1 tie at the top of the map: the policy's choice (the lower index) alone
     * keeps 10 (ext_scores_single_top) */
    assert_int_equal(hp[2].score, EXT_MAX_PRIORITY);
    assert_int_equal(hp[3].score, EXT_MAX_PRIORITY - 1);
    assert_true(hp[1].score < EXT_MAX_PRIORITY && hp[4].score < EXT_MAX_PRIORITY);

    prioritize_lotes(&s, &l, "1000m", "256Mi", hp); /* a1 has 500m free */
    assert_int_equal(hp[0].score, 0);
    assert_int_equal(hp[1].score, EXT_MAX_PRIORITY);
    ext_lotes_release(&l);
    lt_cluster_free((struct lt_cluster *)(uintptr_t)s.cluster);
}

/* LoTES mode reads "fits" as the filter does: c1, overcommitted in memory (3 GiB of 2 placed),
 * still ranks (as the only candidate: 10) for a pod that requests no memory, and not for one
 * that does. */
static void test_lotes_prioritize_ranks_a_node_short_only_in_unrequested_resources(void **state)
{
    struct ext_decide_config cfg = {lt_policy_find("bestfit1", NULL), NULL, NULL, NULL};
    struct lt_cluster *c = lotes_cluster();
    struct ext_host_priority hp[2];
    struct ext_snapshot s;
    struct ext_lotes l;
    struct ext_args a;
    struct lt_task t;
    size_t pid;

    (void)state;
    memset(&t, 0, sizeof(t));
    t.req = (struct lt_res){100, 3 * GI, 0};
    assert_int_equal(lt_cluster_place(c, 4, &t, LT_PLACE_FORCE, &pid, NULL), 0);
    memset(&s, 0, sizeof(s));
    s.cluster = c;
    l.t = lotes_tables();
    cfg.lotes = &l;
    decode_args(&a, "400m", "0", "[\"c1\",\"ghost\"]");
    assert_int_equal(ext_decide_prioritize(&cfg, &s, &a, NULL, hp, NULL), 0);
    assert_int_equal(hp[0].score, EXT_MAX_PRIORITY);
    ext_args_release(&a);
    decode_args(&a, "400m", "1Mi", "[\"c1\",\"ghost\"]");
    assert_int_equal(ext_decide_prioritize(&cfg, &s, &a, NULL, hp, NULL), 0);
    assert_int_equal(hp[0].score, 0);
    ext_args_release(&a);
    ext_lotes_release(&l);
    lt_cluster_free(c);
}

/* decide's scores are exactly the library's: lt_lotes_classify, lt_lotes_map_machines over the
 * whole cluster in index (= name) order, lt_lotes_rank with bestfit1's raw scores as the
 * tie-break, ext_scores_map. */
static void test_lotes_prioritize_equals_the_library_composition(void **state)
{
    struct ext_lotes l;
    struct ext_snapshot s;
    struct ext_host_priority hp[6];
    const struct lt_policy *bf = lt_policy_find("bestfit1", NULL);
    struct lt_res cap[5];
    size_t cand[5] = {0, 1, 2, 3, 4}, conf[5], bin[5], k = 9;
    struct lt_lotes_machine view[5];
    double raw[6], tb[5];
    int64_t want[6];
    struct lt_task t;

    (void)state;
    memset(&s, 0, sizeof(s));
    s.cluster = lotes_cluster();
    l.t = lotes_tables();
    memset(&t, 0, sizeof(t));
    t.req = (struct lt_res){300, 900 * MI, 0};
    prioritize_lotes(&s, &l, "300m", "900Mi", hp);
    assert_int_equal(lt_lotes_classify(l.t, &t.req, &k, NULL), 0);
    assert_int_equal(k, 1);
    for (size_t m = 0; m < 5; m++)
        cap[m] = lt_cluster_cap(s.cluster, m);
    assert_int_equal(lt_lotes_map_machines(l.t, cap, 5, conf, bin, NULL), 0);
    assert_int_equal(conf[0], 0);
    assert_int_equal(conf[3], 1);
    assert_int_equal(conf[4], LT_LOTES_NONE);
    assert_int_equal(lt_policy_rank(bf, s.cluster, &t, cand, 5, NULL, tb, NULL), 0);
    for (size_t m = 0; m < 5; m++) {
        view[m].config = conf[m];
        view[m].bin = bin[m];
        view[m].free = lt_cluster_free_res(s.cluster, m);
        view[m].queue_len = 0;
    }
    assert_int_equal(lt_lotes_rank(l.t, view, 5, k, &t.req, tb, raw, NULL), 0);
    raw[5] = LT_SCORE_INFEASIBLE;
    ext_scores_map(raw, 6, want);
    ext_scores_single_top(want, 6, lt_scores_best(cand, raw, 5));
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(hp[i].score, want[i]);
    ext_lotes_release(&l);
    lt_cluster_free((struct lt_cluster *)(uintptr_t)s.cluster);
}

/* Writes text to dir/name and returns the path in out. */
static void write_tables(const char *dir, const char *name, const char *text, char *out, size_t n)
{
    FILE *f;

    snprintf(out, n, "%s/%s", dir, name);
    f = fopen(out, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* A good tables file loads; a bad one is refused with the file name and the JSON path (or the
 * line and column of malformed JSON), a missing one with LT_EIO, and the mode is then off. */
static void test_lotes_tables_file_errors_name_the_file_and_json_path(void **state)
{
    struct lt_lotes_tables *t = lotes_tables();
    char *good = lt_lotes_tables_dump(t, NULL), dir[128], path[256], want[400];
    json_t *doc;
    char *bad;
    struct ext_lotes l;
    struct lt_err e;

    (void)state;
    assert_non_null(good);
    assert_int_equal(lt_test_mkdtemp(dir, sizeof(dir), "test_decide_lotes"), 0);
    ext_lotes_init(&l);
    write_tables(dir, "good.json", good, path, sizeof(path));
    assert_int_equal(ext_lotes_load_file(&l, path, NULL), 0);
    assert_non_null(l.t);
    assert_int_equal(l.t->n_bins, t->n_bins);

    doc = json_loads(good, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(
        json_array_set_new(json_array_get(json_object_get(doc, "rho"), 0), 0, json_real(0.5)), 0);
    bad = json_dumps(doc, JSON_COMPACT);
    write_tables(dir, "bad-rho.json", bad, path, sizeof(path));
    lt_err_init(&e, NULL);
    assert_int_equal(ext_lotes_load_file(&l, path, &e), LT_EINVAL);
    assert_null(l.t);
    snprintf(want, sizeof(want), "%s: $.rho", path);
    assert_memory_equal(e.text, want, strlen(want));

    json_object_set_new(doc, "extra", json_true());
    free(bad);
    bad = json_dumps(doc, JSON_COMPACT);
    write_tables(dir, "extra.json", bad, path, sizeof(path));
    lt_err_init(&e, NULL);
    assert_int_equal(ext_lotes_load_file(&l, path, &e), LT_EPARSE);
    snprintf(want, sizeof(want), "%s: $: unknown member 'extra'", path);
    assert_string_equal(e.text, want);

    write_tables(dir, "broken.json", "{\n \"format\": ]", path, sizeof(path));
    lt_err_init(&e, NULL);
    assert_int_equal(ext_lotes_load_file(&l, path, &e), LT_EPARSE);
    snprintf(want, sizeof(want), "%s:2:", path);
    assert_memory_equal(e.text, want, strlen(want));
    assert_int_equal(e.line, 2);

    snprintf(path, sizeof(path), "%s/missing.json", dir);
    lt_err_init(&e, NULL);
    assert_int_equal(ext_lotes_load_file(&l, path, &e), LT_EIO);
    assert_non_null(strstr(e.text, "missing.json: cannot read"));
    ext_lotes_release(&l);
    free(bad);
    json_decref(doc);
    lt_free(good);
    lt_lotes_tables_free(t);
    lt_test_rm_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_f0_equals_printf),
        cmocka_unit_test(test_lotes_prioritize_follows_the_class_and_rho),
        cmocka_unit_test(test_lotes_prioritize_equals_the_library_composition),
        cmocka_unit_test(test_lotes_prioritize_ranks_a_node_short_only_in_unrequested_resources),
        cmocka_unit_test(test_lotes_tables_file_errors_name_the_file_and_json_path),
        cmocka_unit_test_setup_teardown(test_filter_passes_fitting_nodes_and_names_short_resources,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_lists_every_short_resource, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_request_above_capacity_is_unresolvable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_filter_of_no_nodes_is_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_checks_only_the_resources_the_pod_requests,
                                        setup_over, teardown),
        cmocka_unit_test_setup_teardown(
            test_prioritize_ranks_a_node_short_only_in_unrequested_resources, setup_over, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_frees_only_the_resources_the_pod_requests,
                                        setup_over, teardown),
        cmocka_unit_test(test_pod_seed_depends_on_the_pod_only),
        cmocka_unit_test(test_scores_map_is_linear_between_best_and_worst),
        cmocka_unit_test(test_scores_map_rounds_half_away_from_zero),
        cmocka_unit_test(test_scores_map_equal_scores_all_get_ten),
        cmocka_unit_test(test_scores_single_top_leaves_one_ten),
        cmocka_unit_test_setup_teardown(test_prioritize_maps_the_policy_rank_in_input_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_preempt_mrs_skips_sticky_and_drops_hopeless_nodes,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_lrs_takes_the_oldest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_rnd_takes_one_non_sticky_victim, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_preempt_full_pods_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slots_capacity_limits_and_the_filter_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_slots_file_limits_and_default, setup, teardown),
        cmocka_unit_test(test_slots_file_rejects_bad_values_with_their_json_path),
        cmocka_unit_test(test_priority_classes_from_thresholds),
        cmocka_unit_test_setup_teardown(
            test_prioritize_production_prefers_the_most_powerful_free_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_frees_a_slot_on_a_full_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preempt_never_chooses_a_sticky_pod, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
