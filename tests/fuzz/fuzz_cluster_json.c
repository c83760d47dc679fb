/* fuzz_cluster_json.c -- libFuzzer target for the cluster snapshot loader (docs/formats.md):
 * any bytes must give a cluster or a clean error, never a crash, a leak or undefined
 * behaviour. Built with -DLOTUS_FUZZ=ON (clang); seeds: tests/fixtures/score.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stddef.h>
#include <stdint.h>

#include "lt_cluster.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct lt_cluster *c = NULL;
    struct lt_err err;

    lt_err_init(&err, NULL);
    if (sim_cluster_load_buffer("<fuzz>", (const char *)data, size, &c, NULL, &err) == 0) {
        if (lt_cluster_check(c, &err) != 0)
            __builtin_trap(); /* a loaded cluster must be consistent */
        lt_cluster_free(c);
    } else if (err.code == 0) {
        __builtin_trap(); /* every failure must say why */
    }
    return 0;
}
