/* ext_args_ref.c -- the Jansson reference for ext_args_decode and ext_json_check (see the
 * header). The walk below is the earlier tree-walking decoder of ExtenderArgs reduced to what
 * the request keeps of a node (metadata.name), written out plainly: it is the specification
 * the one-pass decoder must meet, so it shares no code with it beyond ext_pod_from_json (the
 * Pod is decoded from a tree on both sides) and ext_json_describe (the "got ..." wording).
 *
 * SPDX-License-Identifier: MIT
 */
#include "ext_args_ref.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ext_codec.h"
#include "json_scan.h"
#include "lt_mem.h"

/* What the reference expects of a decode. */
struct expect {
    int code;     /* 0: success, else the LT_E* code */
    int64_t line; /* and the error's place and message */
    int column;
    char text[LT_ERR_TEXT];
};

/* What the reference read from a body it accepts. */
struct ref {
    json_t *pod;            /* the Pod value; borrowed from the tree */
    struct ext_pod summary; /* ext_pod_from_json of it */
    bool names_mode;
    json_t **nodes; /* Nodes.items; owned array of borrowed values */
    const char **node_name;
    size_t n_nodes;
    const char **names; /* NodeNames */
    size_t n_names;
};

LT_PRINTF(3, 4)
static int why_set(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Records the expected error; returns -1. */
LT_PRINTF(3, 4)
static int expect_error(struct expect *x, int code, const char *fmt, ...)
{
    va_list ap;

    x->code = code;
    x->line = 0;
    x->column = 0;
    va_start(ap, fmt);
    vsnprintf(x->text, sizeof(x->text), fmt, ap);
    va_end(ap);
    return -1;
}

/* Expects "AT: expected WHAT, got <v>" as the decoder words it; returns -1. */
static int expect_type(struct expect *x, const char *at, const char *what, const json_t *v)
{
    char got[72]; /* the decoder's buffer size, so that long strings are cut alike */

    ext_json_describe(v, got, sizeof(got));
    return expect_error(x, LT_EINVAL, "%s: expected %s, got %s", at, what, got);
}

/* encoding/json's key folding: ASCII case, and the Kelvin sign and long s as k and s. */
static bool go_key_matches(const char *key, const char *field)
{
    const unsigned char *k = (const unsigned char *)key;

    for (const char *f = field; *f; f++) {
        char lf = (char)(*f | 0x20);

        if (*k < 0x80 && (char)(*k | 0x20) == lf)
            k++;
        else if (lf == 'k' && k[0] == 0xE2 && k[1] == 0x84 && k[2] == 0xAA)
            k += 3;
        else if (lf == 's' && k[0] == 0xC5 && k[1] == 0xBF)
            k += 2;
        else
            return false;
    }
    return *k == '\0';
}

/* The last key of obj, in Jansson's iteration order, that names field. */
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

static bool absent(const json_t *v)
{
    return v == NULL || json_is_null(v);
}

/* Nodes: null, or an object whose items are null or an array of node objects. */
static int ref_nodes(json_t *list, struct ref *r, struct expect *x)
{
    json_t *items;
    char at[64];

    if (absent(list))
        return 0;
    if (!json_is_object(list))
        return expect_type(x, "Nodes", "an object", list);
    items = json_object_get(list, "items");
    if (absent(items))
        return 0;
    if (!json_is_array(items))
        return expect_type(x, "Nodes.items", "an array", items);
    if (json_array_size(items) > EXT_MAX_NODES)
        return expect_error(x, LT_ERANGE, "Nodes.items: %zu nodes exceed the limit of %d",
                            json_array_size(items), EXT_MAX_NODES);
    r->nodes = lt_calloc(json_array_size(items), sizeof(r->nodes[0]));
    r->node_name = lt_calloc(json_array_size(items), sizeof(r->node_name[0]));
    if (r->nodes == NULL || r->node_name == NULL)
        return expect_error(x, LT_ENOMEM, "reference: out of memory");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i), *meta, *name;

        r->nodes[i] = it;
        r->node_name[i] = "";
        r->n_nodes++;
        snprintf(at, sizeof(at), "Nodes.items[%zu]", i);
        if (!json_is_object(it))
            return expect_type(x, at, "a node object", it);
        meta = json_object_get(it, "metadata");
        if (absent(meta))
            continue;
        snprintf(at, sizeof(at), "Nodes.items[%zu].metadata", i);
        if (!json_is_object(meta))
            return expect_type(x, at, "an object", meta);
        name = json_object_get(meta, "name");
        if (absent(name))
            continue;
        snprintf(at, sizeof(at), "Nodes.items[%zu].metadata.name", i);
        if (!json_is_string(name))
            return expect_type(x, at, "a string", name);
        if (json_string_length(name) > EXT_MAX_NAME)
            return expect_error(x, LT_ERANGE,
                                "%s: string of %zu bytes is longer than the limit of %d", at,
                                json_string_length(name), EXT_MAX_NAME);
        r->node_name[i] = json_string_value(name);
    }
    return 0;
}

/* NodeNames: null, or an array of strings and nulls. */
static int ref_names(json_t *names, struct ref *r, struct expect *x)
{
    char at[64];

    if (absent(names))
        return 0;
    if (!json_is_array(names))
        return expect_type(x, "NodeNames", "an array", names);
    if (json_array_size(names) > EXT_MAX_NODES)
        return expect_error(x, LT_ERANGE, "NodeNames: %zu node names exceed the limit of %d",
                            json_array_size(names), EXT_MAX_NODES);
    r->names_mode = true;
    r->names = lt_calloc(json_array_size(names), sizeof(r->names[0]));
    if (r->names == NULL)
        return expect_error(x, LT_ENOMEM, "reference: out of memory");
    for (size_t i = 0; i < json_array_size(names); i++) {
        json_t *v = json_array_get(names, i);

        r->names[i] = "";
        r->n_names++;
        if (json_is_null(v))
            continue;
        snprintf(at, sizeof(at), "NodeNames[%zu]", i);
        if (!json_is_string(v))
            return expect_type(x, at, "a string", v);
        if (json_string_length(v) > EXT_MAX_NAME)
            return expect_error(x, LT_ERANGE,
                                "%s: string of %zu bytes is longer than the limit of %d", at,
                                json_string_length(v), EXT_MAX_NAME);
        r->names[i] = json_string_value(v);
    }
    return 0;
}

/* What root holds, checked in the decoder's order; 0, or -1 with the error expected in x. */
static int ref_args(json_t *root, struct ref *r, struct expect *x)
{
    struct lt_err e;

    x->code = 0;
    if (!json_is_object(root))
        return expect_type(x, "request body", "an object", root);
    r->pod = go_field(root, "Pod");
    if (absent(r->pod))
        return expect_error(x, LT_EINVAL, "Pod: missing pod (the field is absent or null)");
    lt_err_init(&e, NULL);
    if (ext_pod_from_json(r->pod, "Pod", &r->summary, &e) < 0)
        return expect_error(x, e.code, "%s", e.text);
    if (ref_nodes(go_field(root, "Nodes"), r, x) < 0)
        return -1;
    return ref_names(go_field(root, "NodeNames"), r, x);
}

static void ref_release(struct ref *r)
{
    lt_free(r->nodes);
    lt_free(r->node_name);
    lt_free(r->names);
}

/* If the cursor refused body at a NUL byte that Jansson skipped (json_scan.h), the offset of
 * that byte, else SIZE_MAX. tree is Jansson's tree of body. */
static size_t skipped_nul(const char *body, size_t len, const char *msg, const json_t *tree)
{
    size_t k;
    char c, *cut;
    json_t *again;
    bool same;

    if (sscanf(msg, "NUL byte outside a string at byte %zu", &k) != 1 || k == 0 || k >= len ||
        body[k] != '\0')
        return SIZE_MAX;
    c = body[k - 1];
    if (!((c >= '0' && c <= '9') || c == 'e' || c == 'l')) /* a number, true, false or null */
        return SIZE_MAX;
    cut = lt_malloc(len);
    if (cut == NULL)
        return SIZE_MAX;
    memcpy(cut, body, k);
    memcpy(cut + k, body + k + 1, len - k - 1);
    again = json_loadb(cut, len - 1, 0, NULL);
    same = again != NULL && json_equal(again, tree);
    json_decref(again);
    lt_free(cut);
    return same ? k : SIZE_MAX;
}

/* Runs check on body without byte k. */
static int without_byte(const char *body, size_t len, size_t k,
                        int (*check)(const char *, size_t, char *, size_t), char *why,
                        size_t why_len)
{
    char *cut = lt_malloc(len);
    int rc;

    if (cut == NULL)
        return why_set(why, why_len, "out of memory");
    memcpy(cut, body, k);
    memcpy(cut + k, body + k + 1, len - k - 1);
    rc = check(cut, len - 1, why, why_len);
    lt_free(cut);
    return rc;
}

int ext_ref_check_json(const char *body, size_t len, char *why, size_t why_len)
{
    json_error_t je;
    json_t *tree = json_loadb(body, len, 0, &je);
    struct ext_jval top;
    struct lt_err e;
    size_t k, start = 0;
    int rc;

    lt_err_init(&e, NULL);
    rc = ext_json_check(body, len, &top, &e);
    if (tree == NULL) {
        if (rc == 0)
            return why_set(why, why_len, "accepted what Jansson refuses (%d:%d %s)", je.line,
                           je.column, je.text);
        return rc == LT_EPARSE && e.code == rc ? 0 : why_set(why, why_len, "odd failure %d", rc);
    }
    if (rc < 0) {
        k = skipped_nul(body, len, e.text, tree);
        json_decref(tree);
        if (k == SIZE_MAX)
            return why_set(why, why_len, "refused what Jansson accepts: %s", e.text);
        return without_byte(body, len, k, ext_ref_check_json, why, why_len);
    }
    while (start < len && strchr(" \t\r\n", body[start]) != NULL)
        start++;
    rc = (top.type == EXT_J_OBJECT) == json_is_object(tree) && top.off == start && top.len > 0 &&
                 top.off + top.len <= len
             ? 0
             : why_set(why, why_len, "top-level value: type %d at %zu, %zu bytes", (int)top.type,
                       top.off, top.len);
    json_decref(tree);
    return rc;
}

/* Compares a successful decode with the reference. */
static int same_args(const struct ext_args *a, const struct ref *r, const char *body, size_t len,
                     char *why, size_t why_len)
{
    const struct ext_pod *p = &a->pod, *q = &r->summary;

    if (!json_equal(a->pod_doc, r->pod) || strcmp(p->name, q->name) != 0 ||
        strcmp(p->ns, q->ns) != 0 || strcmp(p->uid, q->uid) != 0 ||
        strcmp(p->node_name, q->node_name) != 0 || strcmp(p->phase, q->phase) != 0 ||
        p->priority != q->priority || p->terminating != q->terminating || p->sticky != q->sticky ||
        memcmp(&p->req, &q->req, sizeof(p->req)) != 0)
        return why_set(why, why_len, "Pod differs");
    if (a->names_mode != r->names_mode || a->n_nodes != r->n_nodes || a->n_node_names != r->n_names)
        return why_set(why, why_len, "mode %d/%d, %zu/%zu nodes, %zu/%zu names", a->names_mode,
                       r->names_mode, a->n_nodes, r->n_nodes, a->n_node_names, r->n_names);
    for (size_t i = 0; i < a->n_nodes; i++) {
        const struct ext_raw *raw = &a->nodes[i].raw;
        json_t *node;
        bool same;

        if (strcmp(a->nodes[i].name, r->node_name[i]) != 0)
            return why_set(why, why_len, "Nodes.items[%zu]: name '%s', expected '%s'", i,
                           a->nodes[i].name, r->node_name[i]);
        if (raw->json < body || raw->len == 0 || raw->len > len ||
            (size_t)(raw->json - body) > len - raw->len)
            return why_set(why, why_len, "Nodes.items[%zu]: bytes outside the body", i);
        node = json_loadb(raw->json, raw->len, 0, NULL);
        same = node != NULL && json_equal(node, r->nodes[i]);
        json_decref(node);
        if (!same)
            return why_set(why, why_len, "Nodes.items[%zu]: bytes %zu+%zu are not the node", i,
                           (size_t)(raw->json - body), raw->len);
    }
    for (size_t i = 0; i < a->n_node_names; i++) {
        if (strcmp(a->node_names[i], r->names[i]) != 0)
            return why_set(why, why_len, "NodeNames[%zu]: '%s', expected '%s'", i, a->node_names[i],
                           r->names[i]);
    }
    return 0;
}

int ext_ref_check_args(const char *body, size_t len, char *why, size_t why_len)
{
    json_error_t je;
    json_t *tree = json_loadb(body, len, 0, &je);
    struct expect x = {0, 0, 0, ""};
    struct ref r;
    struct ext_args a;
    struct lt_err e;
    size_t k;
    int rc, out;

    memset(&r, 0, sizeof(r));
    lt_err_init(&e, NULL);
    rc = ext_args_decode(&a, body, len, &e);
    if (tree == NULL) {
        ext_args_release(&a);
        if (json_error_code(&je) == json_error_out_of_memory)
            return 0; /* not a verdict on the body */
        x.code = LT_EPARSE;
        x.line = je.line > 0 ? je.line : 0;
        x.column = je.line > 0 && je.column < 1 ? 1 : je.column;
        snprintf(x.text, sizeof(x.text), "%s", je.text);
    } else if (rc == LT_EPARSE && (k = skipped_nul(body, len, e.text, tree)) != SIZE_MAX) {
        ext_args_release(&a);
        json_decref(tree);
        return without_byte(body, len, k, ext_ref_check_args, why, why_len);
    } else if (ref_args(tree, &r, &x) < 0 && x.code == 0) {
        x.code = LT_EINVAL; /* cannot happen: every failure sets x */
    }
    if (rc == LT_ENOMEM || x.code == LT_ENOMEM)
        out = 0; /* not a verdict either */
    else if (x.code != 0 && (rc != x.code || e.code != rc || e.line != x.line ||
                             e.column != x.column || strcmp(e.text, x.text) != 0))
        out = why_set(why, why_len, "error %d %" PRId64 ":%d '%s', expected %d %" PRId64 ":%d '%s'",
                      rc, e.line, e.column, e.text, x.code, x.line, x.column, x.text);
    else if (x.code == 0 && rc != 0)
        out = why_set(why, why_len, "error %d '%s', expected success", rc, e.text);
    else if (x.code == 0)
        out = same_args(&a, &r, body, len, why, why_len);
    else
        out = 0;
    ext_args_release(&a);
    ref_release(&r);
    json_decref(tree);
    return out;
}
