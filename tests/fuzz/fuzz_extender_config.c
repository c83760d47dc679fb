/* fuzz_extender_config.c -- libFuzzer target for lotus-extender's configuration loader
 * (extender/config.c): the JSON config file, the flags, and their validation.
 *
 * Input: CONFIG [\0 ARG]...  The bytes up to the first NUL are written to a config file; the
 * NUL-separated rest are command-line arguments. If the first byte of the input is odd,
 * "--config FILE" is put in front of the arguments (ext_config_parse_args then loads the file
 * between its two flag passes); if even, the file is loaded with ext_config_load_file and then
 * validated, and the arguments are not used. Whatever value an argument gives --config is
 * replaced by this target's file, so no other file is ever read (the path settings are only
 * opened by validation, never read).
 *
 * Properties, each a trap when broken:
 *   - any input gives 0 or a clean error: the return code in err.code and a message in
 *     err.text; no crash, leak or undefined behaviour (ASan + UBSan);
 *   - a configuration that validates is resolved: policy and eviction found, the URL prefix
 *     normalised ("" or "/..." without a trailing '/'), the host no longer than the address;
 *   - ext_config_to_json of a validated configuration (every key but "config", which names
 *     the file itself), written back as a config file, loads and validates into the same JSON:
 *     in particular no value is left out (config.c refuses a string that is not UTF-8) and
 *     the seed round-trips (config.c refuses a seed above 2^63-1). These three were found by
 *     this target and fixed in config.c.
 *
 * Built with -DLOTUS_FUZZ=ON (clang); seeds: the config examples written by `make fuzz-smoke`.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* mkstemp */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char cfg_path[64], rt_path[64];

static void remove_files(void)
{
    unlink(cfg_path);
    unlink(rt_path);
}

static void make_files(void)
{
    int fd;

    if (cfg_path[0])
        return;
    snprintf(cfg_path, sizeof(cfg_path), "/tmp/fuzz_extender_config.%d.XXXXXX", (int)getpid());
    fd = mkstemp(cfg_path);
    if (fd < 0)
        abort();
    close(fd);
    snprintf(rt_path, sizeof(rt_path), "/tmp/fuzz_extender_config_rt.%d.XXXXXX", (int)getpid());
    fd = mkstemp(rt_path);
    if (fd < 0)
        abort();
    close(fd);
    atexit(remove_files);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        abort();
}

static void check_failure(int rc, const struct lt_err *err)
{
    if (rc < 0 && (err->code != rc || err->text[0] == '\0'))
        __builtin_trap();
}

/* Keys of ext_config_to_json for the defaults: one per setting. */
static size_t n_keys(void)
{
    static size_t n;

    if (n == 0) {
        struct ext_config *d = malloc(sizeof(*d));
        json_t *o;

        if (d == NULL)
            abort();
        ext_config_init(d);
        o = ext_config_to_json(d);
        n = json_object_size(o);
        json_decref(o);
        free(d);
    }
    return n;
}

/* A validated configuration is resolved and survives to_json -> file -> load. */
static void check_valid(struct ext_config *cfg)
{
    size_t n = strlen(cfg->prefix);
    struct ext_config *back;
    struct lt_err err;
    json_t *a, *b;
    int rc;

    if (cfg->pol == NULL || cfg->ev == NULL ||
        (n > 0 && (cfg->prefix[0] != '/' || cfg->prefix[n - 1] == '/')) ||
        strlen(cfg->host) > strlen(cfg->listen))
        __builtin_trap();
    if (cfg->seed > (uint64_t)INT64_MAX)
        __builtin_trap(); /* validation refuses it */
    a = ext_config_to_json(cfg);
    if (a == NULL)
        return; /* out of memory */
    if (json_object_size(a) < n_keys())
        __builtin_trap(); /* a value was left out of the JSON */
    json_object_del(a, "config");
    if (json_dump_file(a, rt_path, JSON_COMPACT) != 0)
        abort();
    back = malloc(sizeof(*back));
    if (back == NULL)
        abort();
    ext_config_init(back);
    lt_err_init(&err, NULL);
    rc = ext_config_load_file(back, rt_path, &err);
    if (rc == 0)
        rc = ext_config_validate(back, &err);
    if (rc != 0)
        __builtin_trap(); /* a printed configuration must load */
    b = ext_config_to_json(back);
    if (b != NULL) {
        json_object_del(b, "config");
        if (!json_equal(a, b))
            __builtin_trap(); /* and mean the same */
    }
    json_decref(a);
    json_decref(b);
    ext_config_release(back);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *nul = memchr(data, '\0', size);
    size_t file_len = nul ? (size_t)(nul - (const char *)data) : size;
    char *args = NULL, *argv[MAX_ARGS + 4];
    int argc = 0, rc;
    struct ext_config *cfg;
    struct lt_err err;

    make_files();
    write_file(cfg_path, data, file_len);
    cfg = malloc(sizeof(*cfg));
    if (cfg == NULL)
        return 0;
    ext_config_init(cfg);
    lt_err_init(&err, NULL);
    if (size == 0 || (data[0] & 1) == 0) {
        rc = ext_config_load_file(cfg, cfg_path, &err);
        if (rc == 0)
            rc = ext_config_validate(cfg, &err);
        check_failure(rc, &err);
        if (rc == 0)
            check_valid(cfg);
        ext_config_release(cfg);
        free(cfg);
        return 0;
    }

    /* The arguments: NUL-separated after the file, NUL-terminated copies. */
    argv[argc++] = (char *)(uintptr_t) "lotus-extender";
    argv[argc++] = (char *)(uintptr_t) "--config";
    argv[argc++] = cfg_path;
    if (nul != NULL) {
        size_t rest = size - file_len - 1;

        args = malloc(rest + 1);
        if (args == NULL) {
            free(cfg);
            return 0;
        }
        memcpy(args, nul + 1, rest);
        args[rest] = '\0';
        for (char *p = args; p <= args + rest && argc < MAX_ARGS + 3; p += strlen(p) + 1) {
            bool cfg_next = argc > 0 && strcmp(argv[argc - 1], "--config") == 0;

            if (cfg_next)
                argv[argc++] = cfg_path; /* the value of a --config: always our file */
            else if (strncmp(p, "--config=", 9) == 0)
                argv[argc++] = (char *)(uintptr_t) "--config";
            else
                argv[argc++] = p;
            if (strncmp(p, "--config=", 9) == 0 && argc < MAX_ARGS + 3)
                argv[argc++] = cfg_path;
        }
    }
    argv[argc] = NULL;
    {
        enum ext_config_action action;

        rc = ext_config_parse_args(cfg, argc, argv, &action, &err);
        check_failure(rc, &err);
        if (rc == 0 && (action == EXT_CONFIG_RUN || action == EXT_CONFIG_PRINT))
            check_valid(cfg);
    }
    free(args);
    ext_config_release(cfg);
    free(cfg);
    return 0;
}
