/* map.c -- lt_map.h: insertion, growth, deletion by backward shift, iteration.
 *
 * SPDX-License-Identifier: MIT
 */
#include "lt_map.h"

#include <string.h>

#include "lt_mem.h"

void lt_map_init(struct lt_map *m, size_t vsize)
{
    memset(m, 0, sizeof(*m));
    m->vsize = vsize;
}

void lt_map_release(struct lt_map *m)
{
    if (m == NULL)
        return;
    lt_free(m->keys);
    lt_free(m->vals);
    lt_map_init(m, m->vsize);
}

/* Allocates a table of cap slots and moves every entry into it; LT_ENOMEM leaves m as is. */
static int rehash(struct lt_map *m, size_t cap)
{
    uint64_t *keys = lt_calloc(cap, sizeof(*keys));
    unsigned char *vals = lt_calloc(cap + 1, m->vsize ? m->vsize : 1);
    size_t mask = cap - 1;

    if (keys == NULL || vals == NULL) {
        lt_free(keys);
        lt_free(vals);
        return LT_ENOMEM;
    }
    memset(keys, 0xff, cap * sizeof(*keys)); /* LT_MAP_EMPTY */
    for (size_t i = 0; i < m->cap; i++) {
        size_t k;
        if (m->keys[i] == LT_MAP_EMPTY)
            continue;
        for (k = (size_t)lt_map_hash(m->keys[i]) & mask; keys[k] != LT_MAP_EMPTY;
             k = (k + 1) & mask)
            ;
        keys[k] = m->keys[i];
        memcpy(vals + k * m->vsize, m->vals + i * m->vsize, m->vsize);
    }
    if (m->has_empty_key)
        memcpy(vals + cap * m->vsize, m->vals + m->cap * m->vsize, m->vsize);
    lt_free(m->keys);
    lt_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int lt_map_put(struct lt_map *m, uint64_t key, void **val, bool *is_new)
{
    size_t mask, k;

    if (m->cap == 0 || (m->n + 1) * 2 > m->cap) {
        if (m->cap > SIZE_MAX / 4)
            return LT_ENOMEM;
        if (rehash(m, m->cap ? 2 * m->cap : LT_MAP_MIN_CAP) != 0)
            return LT_ENOMEM;
    }
    *is_new = false;
    if (key == LT_MAP_EMPTY) {
        *val = m->vals + m->cap * m->vsize;
        if (!m->has_empty_key) {
            m->has_empty_key = true;
            m->n++;
            *is_new = true;
        }
        return 0;
    }
    mask = m->cap - 1;
    for (k = (size_t)lt_map_hash(key) & mask; m->keys[k] != LT_MAP_EMPTY; k = (k + 1) & mask) {
        if (m->keys[k] == key) {
            *val = m->vals + k * m->vsize;
            return 0;
        }
    }
    m->keys[k] = key;
    m->n++;
    *is_new = true;
    *val = m->vals + k * m->vsize;
    return 0;
}

bool lt_map_del(struct lt_map *m, uint64_t key)
{
    size_t mask, k, j;

    if (key == LT_MAP_EMPTY) {
        if (!m->has_empty_key)
            return false;
        m->has_empty_key = false;
        m->n--;
        return true;
    }
    if (m->cap == 0)
        return false;
    mask = m->cap - 1;
    for (k = (size_t)lt_map_hash(key) & mask; m->keys[k] != key; k = (k + 1) & mask)
        if (m->keys[k] == LT_MAP_EMPTY)
            return false;
    /* Backward shift: move each later entry of the run into the hole when its home slot is
     * not in (hole, entry], i.e. when the hole lies on its probe path. */
    for (j = (k + 1) & mask; m->keys[j] != LT_MAP_EMPTY; j = (j + 1) & mask) {
        size_t home = (size_t)lt_map_hash(m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - k) & mask)) {
            m->keys[k] = m->keys[j];
            memcpy(m->vals + k * m->vsize, m->vals + j * m->vsize, m->vsize);
            k = j;
        }
    }
    m->keys[k] = LT_MAP_EMPTY;
    m->n--;
    return true;
}

bool lt_map_next(const struct lt_map *m, size_t *it, uint64_t *key, void **val)
{
    for (; *it < m->cap; (*it)++) {
        if (m->keys[*it] != LT_MAP_EMPTY) {
            if (key != NULL)
                *key = m->keys[*it];
            if (val != NULL)
                *val = m->vals + *it * m->vsize;
            (*it)++;
            return true;
        }
    }
    if (*it == m->cap && m->has_empty_key) {
        (*it)++;
        if (key != NULL)
            *key = LT_MAP_EMPTY;
        if (val != NULL)
            *val = m->vals + m->cap * m->vsize;
        return true;
    }
    return false;
}
