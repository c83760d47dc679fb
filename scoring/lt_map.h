/* lt_map.h -- an open-addressing hash map from uint64 keys to caller-sized values.
 *
 * Linear probing over a power-of-two table of at most half load, keys and values in two
 * arrays (a probe reads keys only). The hash is a fixed 64-bit mixer of the key, so integer
 * keys (job IDs, machine IDs) need no hash of their own; a string map stores the string's
 * 64-bit hash as the key and keeps its own collision check in the value. Deletion shifts the
 * following run back (no tombstones). The key UINT64_MAX is the empty mark and lives in a
 * side slot, so every key is allowed. Memory comes from lt_mem (fault injection reaches it).
 *
 *     struct lt_map m;
 *     lt_map_init(&m, sizeof(struct job_count));
 *     struct job_count *j;
 *     bool fresh;
 *     if (lt_map_put(&m, job_id, (void **)&j, &fresh) != 0) ...   // LT_ENOMEM
 *     if (fresh) *j = (struct job_count){0};
 *     j = lt_map_get(&m, job_id);                                   // NULL if absent
 *     lt_map_release(&m);
 *
 * A value pointer is valid until the next put or del. Iteration: for (size_t it = 0;
 * lt_map_next(&m, &it, &key, &val);) visits every entry once, in table order.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_MAP_H
#define LT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"

#define LT_MAP_EMPTY   UINT64_MAX
#define LT_MAP_MIN_CAP 16

struct lt_map {
    uint64_t *keys;      /* cap slots, LT_MAP_EMPTY when free */
    unsigned char *vals; /* cap + 1 values of vsize bytes; vals[cap] belongs to LT_MAP_EMPTY */
    size_t n;            /* entries, the side slot included */
    size_t cap;          /* 0 (no table yet) or a power of two */
    size_t vsize;
    bool has_empty_key; /* the key LT_MAP_EMPTY is present (in the side slot) */
};

/* The fixed mixer (the murmur3 finalizer): every bit of the key moves every bit of the hash. */
static inline uint64_t lt_map_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return k;
}

/* An empty map of values of vsize bytes (0 for a set); allocates nothing. */
void lt_map_init(struct lt_map *m, size_t vsize);

/* Frees the tables; the map is empty and usable again. NULL-safe. */
void lt_map_release(struct lt_map *m);

/* The value of key, or NULL. */
static inline void *lt_map_get(const struct lt_map *m, uint64_t key)
{
    size_t mask, k;

    if (key == LT_MAP_EMPTY)
        return m->has_empty_key ? m->vals + m->cap * m->vsize : NULL;
    if (m->cap == 0)
        return NULL;
    mask = m->cap - 1;
    for (k = (size_t)lt_map_hash(key) & mask; m->keys[k] != LT_MAP_EMPTY; k = (k + 1) & mask)
        if (m->keys[k] == key)
            return m->vals + k * m->vsize;
    return NULL;
}

/* Finds key or inserts it: *val points at its value (uninitialised when new, *is_new set).
 * 0, or LT_ENOMEM with the map unchanged. */
LT_MUST_CHECK int lt_map_put(struct lt_map *m, uint64_t key, void **val, bool *is_new);

/* Removes key; true if it was there. */
bool lt_map_del(struct lt_map *m, uint64_t key);

/* Iteration: from *it = 0, each call sets *key and *val (either may be NULL) to the next
 * entry and returns true, false after the last. No put or del in between. */
bool lt_map_next(const struct lt_map *m, size_t *it, uint64_t *key, void **val);

#endif
