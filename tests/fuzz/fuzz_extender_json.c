/* fuzz_extender_json.c -- libFuzzer target for the extender's wire codec (extender/ext_codec.c):
 * any bytes, decoded as ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs, must give
 * a request or a clean error, never a crash, a leak or undefined behaviour; a decoded request
 * is answered (filter in the mode of the request, priorities, preemption, binding) to exercise
 * the encoders on whatever strings came in. The first byte also feeds the quantity parser the
 * rest of the input. Built with -DLOTUS_FUZZ=ON (clang); seeds: tests/fixtures/extender.
 *
 * Differential: ExtenderArgs bodies are decoded in one pass without a tree (extender/json_scan.h).
 * Every input is also checked against the Jansson reference of tests/support/ext_args_ref.c:
 * ext_json_check must accept exactly what json_loadb accepts, and ext_args_decode must find
 * the same Pod, node names, node byte ranges and NodeNames as the tree walk, or fail with the
 * same code and message. A disagreement is printed and aborts.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_args_ref.h"
#include "ext_codec.h"
#include "lt_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure must say why. */
static void check_failure(int rc, const struct lt_err *err)
{
    if (rc < 0 && (err->code != rc || err->text[0] == '\0'))
        __builtin_trap();
}

static void answer_filter(const struct ext_args *a, struct ext_buf *out)
{
    size_t n = ext_args_candidates(a);
    struct ext_filter_verdict *v = lt_calloc(n, sizeof(*v));
    struct ext_host_priority *hp = lt_calloc(n, sizeof(*hp));
    struct lt_err err;
    size_t start;
    int rc;

    if (v == NULL || hp == NULL)
        goto out_free;
    for (size_t i = 0; i < n; i++) {
        v[i].verdict = (enum ext_verdict)(i % 3);
        v[i].reason = a->pod.name; /* any decoded string */
        hp[i].host = ext_args_candidate(a, i);
        hp[i].score = (int64_t)i % (EXT_MAX_PRIORITY + 1);
    }
    lt_err_init(&err, NULL);
    start = out->len;
    rc = ext_filter_answer(a, v, a->pod.uid, out, &err);
    check_failure(rc, &err);
    if (rc == 0) { /* the echoed node bytes must leave the answer valid JSON */
        json_t *ans = json_loadb(out->data + start, out->len - start, 0, NULL);

        if (ans == NULL) {
            fprintf(stderr, "the filter answer is not JSON: %.300s\n", out->data + start);
            abort();
        }
        json_decref(ans);
    }
    check_failure(ext_priority_list_encode(hp, n, out, &err), &err);
out_free:
    lt_free(v);
    lt_free(hp);
}

static void answer_preempt(const struct ext_preempt_args *a, struct ext_buf *out)
{
    struct ext_meta_victims *mv = lt_calloc(a->n_meta, sizeof(*mv));
    struct lt_err err;

    if (mv == NULL)
        return;
    for (size_t i = 0; i < a->n_meta; i++) {
        mv[i].node = a->meta[i].node;
        mv[i].uids = NULL; /* null Pods: the encoder's nil path */
        mv[i].num_pdb_violations = a->meta[i].num_pdb_violations;
    }
    lt_err_init(&err, NULL);
    check_failure(ext_preempt_result_encode(mv, a->n_meta, out, &err), &err);
    lt_free(mv);
}

/* Aborts, saying why, if the one-pass decoding and the Jansson reference disagree on body. */
static void check_against_jansson(const char *body, size_t size)
{
    char why[512];

    if (ext_ref_check_json(body, size, why, sizeof(why)) != 0) {
        fprintf(stderr, "ext_json_check disagrees with Jansson: %s\n", why);
        abort();
    }
    if (ext_ref_check_args(body, size, why, sizeof(why)) != 0) {
        fprintf(stderr, "ext_args_decode disagrees with the reference: %s\n", why);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    struct ext_args a;
    struct ext_preempt_args p;
    struct ext_bind_args b;
    struct ext_buf out;
    struct ext_qty q;
    struct lt_err err;
    int rc;

    check_against_jansson(body, size);
    ext_buf_init(&out);
    lt_err_init(&err, NULL);
    rc = ext_args_decode(&a, body, size, &err);
    check_failure(rc, &err);
    if (rc == 0)
        answer_filter(&a, &out);
    ext_args_release(&a);

    lt_err_init(&err, NULL);
    rc = ext_preempt_args_decode(&p, body, size, &err);
    check_failure(rc, &err);
    if (rc == 0)
        answer_preempt(&p, &out);
    ext_preempt_args_release(&p);

    lt_err_init(&err, NULL);
    rc = ext_bind_args_decode(&b, body, size, &err);
    check_failure(rc, &err);
    if (rc == 0) {
        lt_err_init(&err, NULL);
        check_failure(ext_bind_result_encode(b.pod_name, &out, &err), &err);
    }
    ext_bind_args_release(&b);

    lt_err_init(&err, NULL);
    check_failure(ext_qty_parse(body, size, &q, NULL, &err), &err);
    ext_buf_release(&out);
    return 0;
}
