/* config.h -- lotus-extender's configuration: defaults, a JSON config file, flags.
 *
 * One table (config.c) lists every setting once: its flag (--url-prefix), its config-file key
 * (the flag's name with '_' for '-': "url_prefix"), its type and its default. Precedence:
 * defaults < the file named by --config < flags. Everything is validated before the server
 * starts, and every error names the flag or key (and the file) it is about, e.g.
 *   config.json: unknown key 'polcy' (known: listen, url_prefix, policy, ...)
 *   --policy: unknown policy 'bestfit9' (known: firstfit, ...)
 * docs/extender.md ("Flags and config keys") lists every setting.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EXT_CONFIG_H
#define EXT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kube.h"
#include "log.h"
#include "lt_err.h"
#include "lt_evict.h"
#include "lt_score.h"
#include "lotes.h"
#include "slots.h"

#define EXT_CONFIG_STR 4096 /* bytes of a string setting incl. NUL (paths: Linux PATH_MAX) */

struct ext_config {
    char config_file[EXT_CONFIG_STR]; /* --config; "" for none */
    char listen[EXT_CONFIG_STR];      /* "[host]:port"; host "" = every address */
    char url_prefix[EXT_CONFIG_STR];  /* "/lotus": verbs at {prefix}/filter ...; "" or "/" = root */
    char policy[EXT_CONFIG_STR];      /* placement policy name (prioritize) */
    char eviction[EXT_CONFIG_STR];    /* eviction policy name (preempt) */
    uint64_t seed;                    /* seeds "random", "rnd", the cluster and the backoff */
    int64_t threads;                  /* MHD worker threads (thread pool size) */
    int64_t max_connections;          /* concurrent connections; more are closed at once */
    int64_t max_connections_per_ip;   /* the same from one client address; 0: no limit */
    int64_t listen_backlog;           /* listen(2) backlog */
    int64_t max_body;                 /* request body limit, bytes (413 above it) */
    int64_t body_budget;              /* request bodies in memory at once, bytes (503 above) */
    int64_t header_timeout_ms;        /* a request's headers from its start */
    int64_t request_timeout_ms;       /* whole request (headers, body) from its start */
    int64_t conn_timeout_ms;          /* idle connection timeout */
    int64_t shutdown_timeout_ms;      /* longest SIGTERM drain of in-flight requests */
    int64_t rebuild_ms;               /* cache: minimum time between two snapshots */
    int64_t assume_ttl_ms;            /* cache: forget an unconfirmed bound pod after this */
    int64_t probe_interval_ms;        /* cache: API server probe period (0: none) */
    int64_t bind_timeout_ms;          /* a binding's API calls, in all */
    int bind_workers;                 /* binding threads (online) */
    int64_t max_feed_age_ms;          /* /readyz: the oldest feed still ready (0: any) */
    char cluster_file[EXT_CONFIG_STR];     /* offline mode: nodes and pods from this file */
    char server[EXT_CONFIG_STR];           /* API server URL; "" = in-cluster */
    char token_file[EXT_CONFIG_STR];       /* bearer token file (with --server) */
    char ca_file[EXT_CONFIG_STR];          /* API server CA bundle (with --server) */
    char tls_cert[EXT_CONFIG_STR];         /* serve HTTPS with this PEM certificate (chain) ... */
    char tls_key[EXT_CONFIG_STR];          /* ... and this PEM key */
    char tls_client_ca[EXT_CONFIG_STR];    /* require client certificates signed by this CA */
    char log_level[EXT_CONFIG_STR];        /* debug, info, warn, error */
    char slots_mode[EXT_CONFIG_STR];       /* --slots: off, capacity, file */
    int64_t slots_level;                   /* --slots-level: SC1..SC4 (capacity mode) */
    char slots_cpu_unit[EXT_CONFIG_STR];   /* --slots-cpu-unit: a CPU quantity ("1", "8") */
    char slots_file[EXT_CONFIG_STR];       /* --slots-file (file mode) */
    char priority_classes[EXT_CONFIG_STR]; /* --priority-classes: 11 ascending thresholds */
    int64_t sticky_slots;                  /* --sticky-slots: HYBRID's sticky pool (0: none) */
    char lotes_tables[EXT_CONFIG_STR];     /* --lotes-tables: LoTES tables file; "" = off */
    char known[1024];   /* after an unknown flag or key: the known ones, comma-separated */
    uint8_t origin[48]; /* per setting (config.c's table order): 0 default, 1 file, 2 flag */

    /* Resolved by ext_config_validate: */
    const struct lt_policy *pol;      /* borrowed, static */
    const struct lt_evict_policy *ev; /* borrowed, static */
    enum ext_log_level level;
    char host[EXT_CONFIG_STR];   /* listen host, "" = any */
    uint16_t port;               /* listen port */
    char prefix[EXT_CONFIG_STR]; /* url_prefix normalised: "" or "/x/y" (no trailing '/') */
    struct ext_slots slots;      /* slot mode settings (slots.h); owns the slots file's table */
    struct ext_lotes lotes;      /* LoTES mode (lotes.h); owns the tables, NULL when off */
};

/* What ext_config_parse_args found besides settings. */
enum ext_config_action {
    EXT_CONFIG_RUN = 0, /* start the server */
    EXT_CONFIG_HELP,    /* --help: print ext_config_usage and exit 0 */
    EXT_CONFIG_VERSION, /* --version: print the version and exit 0 */
    EXT_CONFIG_PRINT,   /* --print-config: print the effective config as JSON and exit 0 */
};

/* Sets every field to its default. */
void ext_config_init(struct ext_config *cfg);

/* Frees what validation loaded (the slots file's table, the LoTES tables); cfg is then as
 * after init. */
void ext_config_release(struct ext_config *cfg);

/* Applies the file named by --config (if any), then every flag of argv[1..argc-1], then
 * validates (ext_config_validate); with --print-config too, so that it prints what a start
 * would run with (--help and --version read no file). Flags are --name=value or --name value;
 * booleans are
 * --help, --version, --print-config. Errors: LT_EINVAL / LT_EPARSE / LT_EIO / LT_ENOTFOUND,
 * err naming the flag or key. */
LT_MUST_CHECK int ext_config_parse_args(struct ext_config *cfg, int argc, char **argv,
                                        enum ext_config_action *action, struct lt_err *err);

/* Applies the JSON object in the file at path (keys as in the table). */
LT_MUST_CHECK int ext_config_load_file(struct ext_config *cfg, const char *path,
                                       struct lt_err *err);

/* Checks every setting and fills the resolved fields. The files named by --token-file,
 * --ca-file and the TLS flags must be readable; --cluster-file is not opened here: loading it
 * is part of starting (ext_cache_load_file; main.c exits 1 when it fails). */
LT_MUST_CHECK int ext_config_validate(struct ext_config *cfg, struct lt_err *err);

/* The effective configuration as a JSON object (config-file keys); owned, json_decref. */
json_t *ext_config_to_json(const struct ext_config *cfg);

/* Writes the --help text to f. */
void ext_config_usage(FILE *f, const char *argv0);

#endif
