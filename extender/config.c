/* config.c -- lotus-extender's settings: one table, defaults, JSON config file, flags.
 *
 * Design. The table `settings` is the only list of settings: flag name, type, where the value
 * lives in struct ext_config, the default (as text, parsed by the same code as user input, so
 * a default can never bypass validation) and the help line. The config-file key is the flag
 * name with '_' for '-'. Values are parsed as they are applied (type errors name the flag or
 * key at once); cross-setting rules and name lookups run in ext_config_validate, which names
 * the flag or the file key each value came from (origin[]).
 *
 * Value syntax: durations are Go-style "500ms", "30s", "5m", "1h" (an integer alone is
 * refused: its unit would be a guess); byte sizes are Kubernetes quantities ("64Mi", "1G",
 * "1048576"), parsed by ext_qty_parse; integers are decimal.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_codec.h"

enum stype { S_STR, S_U64, S_INT, S_BYTES, S_DURATION };

struct setting {
    const char *name; /* flag without "--"; key with '_' for '-' */
    enum stype type;
    size_t off;  /* offset of the field in struct ext_config */
    int64_t min; /* S_INT, S_BYTES, S_DURATION (ms): inclusive range */
    int64_t max;
    const char *def; /* default, as text */
    const char *help;
};

#define OFF(f) offsetof(struct ext_config, f)
#define DAY_MS (INT64_C(86400000))

static const struct setting settings[] = {
    {"config", S_STR, OFF(config_file), 0, 0, "", "JSON config file; flags override its keys"},
    {"listen", S_STR, OFF(listen), 0, 0, ":8888", "address to serve on, [host]:port"},
    {"url-prefix", S_STR, OFF(url_prefix), 0, 0, "/lotus",
     "verbs at PREFIX/filter, /prioritize, /preempt, /bind"},
    {"policy", S_STR, OFF(policy), 0, 0, "bestfit1", "placement policy for prioritize"},
    {"eviction", S_STR, OFF(eviction), 0, 0, "mrs", "eviction policy for preempt: mrs|lrs|rnd"},
    {"seed", S_U64, OFF(seed), 0, 0, "1", "seed of random, rnd and the watch backoff"},
    {"threads", S_INT, OFF(threads), 1, 1024, "4", "request worker threads"},
    {"max-connections", S_INT, OFF(max_connections), 1, 1000000, "1024",
     "concurrent connections; more are closed at once"},
    {"max-connections-per-ip", S_INT, OFF(max_connections_per_ip), 0, 1000000, "128",
     "concurrent connections from one client address; more are closed at once (0: no limit)"},
    {"listen-backlog", S_INT, OFF(listen_backlog), 1, 65535, "1024", "listen(2) backlog"},
    {"max-body", S_BYTES, OFF(max_body), 1024, INT64_C(1) << 32, "32Mi",
     "request body limit (413 above it)"},
    {"body-budget", S_BYTES, OFF(body_budget), 1024, INT64_C(1) << 40, "128Mi",
     "bytes of request bodies in memory at once, all connections (503 above it)"},
    {"header-timeout", S_DURATION, OFF(header_timeout_ms), 100, DAY_MS, "10s",
     "a request's headers must arrive within this of its start"},
    {"request-timeout", S_DURATION, OFF(request_timeout_ms), 100, DAY_MS, "15s",
     "a request, headers and body, must arrive within this of its start"},
    {"conn-timeout", S_DURATION, OFF(conn_timeout_ms), 1000, DAY_MS, "30s",
     "close a connection idle this long"},
    {"shutdown-timeout", S_DURATION, OFF(shutdown_timeout_ms), 0, DAY_MS, "30s",
     "on SIGTERM, wait this long for in-flight requests"},
    {"rebuild-interval", S_DURATION, OFF(rebuild_ms), 0, DAY_MS, "50ms",
     "cache: minimum time between two snapshots"},
    {"assume-ttl", S_DURATION, OFF(assume_ttl_ms), 1000, DAY_MS, "5m",
     "cache: forget a bound pod the watch never confirms"},
    {"bind-timeout", S_DURATION, OFF(bind_timeout_ms), 100, 60000, "4s",
     "online: give up a binding (and its sticky label) after this; keep it below the "
     "scheduler's httpTimeout"},
    {"bind-workers", S_INT, OFF(bind_workers), 1, 1024, "16",
     "online: threads that run bindings, off the request workers"},
    {"feed-probe-interval", S_DURATION, OFF(probe_interval_ms), 0, DAY_MS, "5s",
     "online: GET one node this often to check the API server (0: never)"},
    {"max-feed-age", S_DURATION, OFF(max_feed_age_ms), 0, DAY_MS, "30s",
     "online: /readyz fails when the feed is older (0: never)"},
    {"cluster-file", S_STR, OFF(cluster_file), 0, 0, "",
     "offline mode: nodes and pods from this file"},
    {"server", S_STR, OFF(server), 0, 0, "", "API server URL (default: in-cluster)"},
    {"token-file", S_STR, OFF(token_file), 0, 0, "", "bearer token file (with --server)"},
    {"ca-file", S_STR, OFF(ca_file), 0, 0, "", "API server CA bundle (with --server)"},
    {"tls-cert", S_STR, OFF(tls_cert), 0, 0, "", "serve HTTPS with this PEM certificate"},
    {"tls-key", S_STR, OFF(tls_key), 0, 0, "", "PEM private key of --tls-cert"},
    {"tls-client-ca", S_STR, OFF(tls_client_ca), 0, 0, "",
     "require client certificates signed by this PEM CA, with clientAuth"},
    {"log-level", S_STR, OFF(log_level), 0, 0, "info", "debug|info|warn|error"},
    {"slots", S_STR, OFF(slots_mode), 0, 0, "off",
     "slot mode: off|capacity|file (slot limits per node, WASP, docs/extender.md)"},
    {"slots-level", S_INT, OFF(slots_level), 1, 4, "3",
     "capacity mode: SC level, 16*level slots per --slots-cpu-unit of CPU"},
    {"slots-cpu-unit", S_STR, OFF(slots_cpu_unit), 0, 0, "1",
     "capacity mode: CPU (cores, a quantity) counted as one unit"},
    {"slots-file", S_STR, OFF(slots_file), 0, 0, "", "file mode: slots per node (JSON)"},
    {"priority-classes", S_STR, OFF(priority_classes), 0, 0, "1,2,3,4,5,6,7,8,9,10,11",
     "11 ascending spec.priority thresholds of classes 1..11 (production: class 9+)"},
    {"sticky-slots", S_INT, OFF(sticky_slots), 0, 1000000000, "0",
     "HYBRID: pods labelled lotus.io/sticky at bind while fewer are bound (0: none)"},
    {"lotes-tables", S_STR, OFF(lotes_tables), 0, 0, "",
     "LoTES mode: tables file (lotus-sim lotes tables); prioritize follows its dispatcher"},
};

#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))
_Static_assert(N_SETTINGS <= sizeof(((struct ext_config *)0)->origin),
               "origin[] needs one entry per setting");

enum origin { FROM_DEFAULT = 0, FROM_FILE, FROM_FLAG };

static const struct setting *find_setting(const char *name, bool key)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const char *a = settings[i].name, *b = name;

        while (*a && *b && (*a == *b || (key && *a == '-' && *b == '_')))
            a++, b++;
        if (*a == '\0' && *b == '\0')
            return &settings[i];
    }
    return NULL;
}

/* "url_prefix" for the setting's config-file key. */
static void key_name(const struct setting *s, char *out, size_t len)
{
    snprintf(out, len, "%s", s->name);
    for (char *p = out; *p; p++)
        *p = *p == '-' ? '_' : *p;
}

/* The list of flags or keys, for "unknown" messages. */
static void known_list(char *out, size_t len, bool key)
{
    size_t used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < N_SETTINGS && used < len; i++) {
        char k[64];

        if (key && strcmp(settings[i].name, "config") == 0)
            continue; /* a config file cannot name another */
        key_name(&settings[i], k, sizeof(k));
        used += (size_t)snprintf(out + used, len - used, "%s%s%s", used ? ", " : "",
                                 key ? "" : "--", key ? k : settings[i].name);
    }
    if (!key)
        snprintf(out + used, len > used ? len - used : 0, ", --print-config, --help, --version");
}

/* Levenshtein distance of a and b, capped at 9 (names are short). */
static int distance(const char *a, const char *b)
{
    int row[64], la = (int)strlen(a), lb = (int)strlen(b);

    if (la > 62 || lb > 62)
        return 9;
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];

        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);

            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb] < 9 ? row[lb] : 9;
}

/* " (did you mean 'policy'?)" for the closest setting within distance 2, else "". */
static void suggest(const char *name, bool key, char *out, size_t len)
{
    int best = 3;

    out[0] = '\0';
    for (size_t i = 0; i < N_SETTINGS; i++) {
        char k[64];
        int d;

        key_name(&settings[i], k, sizeof(k));
        d = distance(name, key ? k : settings[i].name);
        if (d < best) {
            best = d;
            snprintf(out, len, " (did you mean '%s%s'?)", key ? "" : "--",
                     key ? k : settings[i].name);
        }
    }
}

/* Where the setting's current value came from, for messages: "--policy" or
 * "config.json: key 'policy'". */
static void subject(const struct ext_config *cfg, const struct setting *s, char *out, size_t len)
{
    char k[64];

    key_name(s, k, sizeof(k));
    if (cfg->origin[s - settings] == FROM_FILE)
        snprintf(out, len, "%.3900s: key '%.63s'", cfg->config_file, k);
    else
        snprintf(out, len, "--%s", s->name);
}

static int parse_duration_ms(const char *v, int64_t *out)
{
    static const struct {
        const char *unit;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    char *end;
    long long n;

    errno = 0;
    n = strtoll(v, &end, 10);
    if (end == v || errno != 0 || n < 0 || v[0] == '-' || v[0] == '+' || v[0] == ' ')
        return LT_EPARSE;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            if (n > INT64_MAX / units[i].ms)
                return LT_ERANGE;
            *out = (int64_t)n * units[i].ms;
            return 0;
        }
    }
    return LT_EPARSE;
}

static int parse_int(const char *v, int64_t *out)
{
    char *end;
    long long n;

    errno = 0;
    n = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || v[0] == ' ')
        return LT_EPARSE;
    *out = n;
    return 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long n;

    errno = 0;
    n = strtoull(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || v[0] == '-' || v[0] == ' ')
        return LT_EPARSE;
    *out = n;
    return 0;
}

/* Parses text v into s's field of cfg; what names the flag or key for messages. */
static int apply(struct ext_config *cfg, const struct setting *s, const char *v, const char *what,
                 struct lt_err *err)
{
    char *field = (char *)cfg + s->off;
    struct ext_qty q;
    int64_t n = 0;
    int rc = 0;

    switch (s->type) {
    case S_STR: {
        json_t *probe = json_string(v); /* NULL unless valid UTF-8 without NUL */
        if (strlen(v) >= EXT_CONFIG_STR)
            return lt_err_set(err, LT_ERANGE, 0, 0, "%s: value longer than %d bytes", what,
                              EXT_CONFIG_STR - 1);
        if (probe == NULL)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: value is not valid UTF-8", what);
        json_decref(probe);
        memcpy(field, v, strlen(v) + 1);
        return 0;
    }
    case S_U64: {
        uint64_t u;
        /* Printed and read back as a JSON integer (--print-config), so at most 2^63-1. */
        if (parse_u64(v, &u) < 0 || u > (uint64_t)INT64_MAX)
            return lt_err_set(err, LT_EPARSE, 0, 0,
                              "%s: expected an unsigned integer up to 2^63-1, got '%s'", what, v);
        memcpy(field, &u, sizeof(u));
        return 0;
    }
    case S_INT:
        if (parse_int(v, &n) < 0)
            return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected an integer, got '%s'", what, v);
        break;
    case S_BYTES:
        rc = ext_qty_parse(v, strlen(v), &q, what, NULL);
        if (rc == 0)
            rc = ext_qty_value(&q, &n);
        if (rc < 0)
            return lt_err_set(err, LT_EPARSE, 0, 0,
                              "%s: expected a byte size like '64Mi' or '1048576', got '%s'", what,
                              v);
        break;
    case S_DURATION:
        if (parse_duration_ms(v, &n) < 0)
            return lt_err_set(err, LT_EPARSE, 0, 0,
                              "%s: expected a duration like '30s', '500ms' or '5m', got '%s'", what,
                              v);
        break;
    }
    if (n < s->min || n > s->max)
        return lt_err_set(err, LT_ERANGE, 0, 0,
                          "%s: %" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]%s", what, n,
                          s->min, s->max, s->type == S_DURATION ? " ms" : "");
    memcpy(field, &n, sizeof(n));
    return 0;
}

void ext_config_init(struct ext_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    ext_slots_init(&cfg->slots);
    ext_lotes_init(&cfg->lotes);
    for (size_t i = 0; i < N_SETTINGS; i++) {
        int rc = apply(cfg, &settings[i], settings[i].def, settings[i].name, NULL);

        assert(rc == 0); /* the table's defaults parse */
        (void)rc;
    }
}

/* One JSON value as the text apply() parses; numbers only for integer-like settings. */
static int json_text(const json_t *v, const struct setting *s, char *buf, size_t len,
                     const char *what, struct lt_err *err)
{
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
        if (strlen(json_string_value(v)) >= len)
            return lt_err_set(err, LT_ERANGE, 0, 0, "%s: value longer than %zu bytes", what,
                              len - 1);
        return 0;
    }
    if (json_is_integer(v) && (s->type == S_INT || s->type == S_U64 || s->type == S_BYTES)) {
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    }
    return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected %s", what,
                      s->type == S_STR        ? "a string"
                      : s->type == S_DURATION ? "a duration string like '30s'"
                                              : "an integer or a string");
}

int ext_config_load_file(struct ext_config *cfg, const char *path, struct lt_err *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    char buf[EXT_CONFIG_STR];
    const char *key;
    json_t *v;
    int rc = 0;

    if (root == NULL)
        return lt_err_set(err, LT_EPARSE, jerr.line, jerr.column, "%s:%d:%d: %s", path, jerr.line,
                          jerr.column, jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: expected a JSON object of settings", path);
    }
    json_object_foreach(root, key, v)
    {
        const struct setting *s = find_setting(key, true);
        char what[EXT_CONFIG_STR + 128];

        snprintf(what, sizeof(what), "%s: key '%s'", path, key);
        if (s == NULL || strcmp(s->name, "config") == 0) {
            char hint[96];

            known_list(cfg->known, sizeof(cfg->known), true);
            suggest(key, true, hint, sizeof(hint));
            rc = lt_err_set(err, LT_ENOTFOUND, 0, 0, "%s: unknown key '%.64s'%s", path, key, hint);
            break;
        }
        rc = json_text(v, s, buf, sizeof(buf), what, err);
        if (rc == 0)
            rc = apply(cfg, s, buf, what, err);
        if (rc < 0)
            break;
        cfg->origin[s - settings] = FROM_FILE;
    }
    json_decref(root);
    return rc;
}

static void set_action(enum ext_config_action *action, enum ext_config_action a)
{
    if (*action == EXT_CONFIG_RUN)
        *action = a;
}

/* Splits argv[*i] ("--name=value" or "--name value") and applies it (or just --config's). */
static int parse_flag(struct ext_config *cfg, int argc, char **argv, int *i, bool config_only,
                      struct lt_err *err)
{
    char name[128];
    const char *arg = argv[*i] + 2, *eq = strchr(arg, '='), *v;
    const struct setting *s;
    char hint[96];

    if ((size_t)(eq ? eq - arg : (ptrdiff_t)strlen(arg)) >= sizeof(name))
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown flag '%.60s...'", argv[*i]);
    snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - arg : (ptrdiff_t)strlen(arg)), arg);
    s = find_setting(name, false);
    if (s == NULL) {
        known_list(cfg->known, sizeof(cfg->known), false);
        suggest(name, false, hint, sizeof(hint));
        return lt_err_set(err, LT_EINVAL, 0, 0, "unknown flag '--%.64s'%s (see --help)", name,
                          hint);
    }
    if (eq)
        v = eq + 1;
    else if (*i + 1 < argc)
        v = argv[++*i];
    else
        return lt_err_set(err, LT_EINVAL, 0, 0, "--%s: missing value", name);
    if (config_only != (strcmp(s->name, "config") == 0))
        return 0;
    cfg->origin[s - settings] = FROM_FLAG;
    snprintf(name, sizeof(name), "--%s", s->name);
    return apply(cfg, s, v, name, err);
}

/* One pass over argv: config_only applies --config alone (pass 1), else every other flag. */
static int parse_pass(struct ext_config *cfg, int argc, char **argv, bool config_only,
                      enum ext_config_action *action, struct lt_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            set_action(action, EXT_CONFIG_HELP);
        else if (strcmp(a, "--version") == 0)
            set_action(action, EXT_CONFIG_VERSION);
        else if (strcmp(a, "--print-config") == 0)
            set_action(action, EXT_CONFIG_PRINT);
        else if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
            return lt_err_set(err, LT_EINVAL, 0, 0,
                              "unexpected argument '%s' (settings are --name=value flags)", a);
        else if ((rc = parse_flag(cfg, argc, argv, &i, config_only, err)) < 0)
            return rc;
    }
    return 0;
}

int ext_config_parse_args(struct ext_config *cfg, int argc, char **argv,
                          enum ext_config_action *action, struct lt_err *err)
{
    int rc;

    bool effective; /* the server would run with these settings: file, flags, validation */

    *action = EXT_CONFIG_RUN;
    rc = parse_pass(cfg, argc, argv, true, action, err);
    /* --print-config prints what the server would run with, so it reads the file too. */
    effective = *action == EXT_CONFIG_RUN || *action == EXT_CONFIG_PRINT;
    if (rc == 0 && effective && cfg->config_file[0] != '\0')
        rc = ext_config_load_file(cfg, cfg->config_file, err);
    if (rc == 0)
        rc = parse_pass(cfg, argc, argv, false, action, err);
    if (rc == 0 && effective)
        rc = ext_config_validate(cfg, err);
    return rc;
}

/* Splits cfg->listen into host and port. */
static int parse_listen(struct ext_config *cfg, const char *what, struct lt_err *err)
{
    const char *l = cfg->listen, *colon = strrchr(l, ':'), *h = l, *he;
    int64_t port;

    if (colon == NULL || parse_int(colon + 1, &port) < 0 || port < 0 || port > 65535)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: expected [host]:port (e.g. ':8888', '127.0.0.1:8888', "
                          "'[::1]:8888'), got '%s'",
                          what, l);
    he = colon;
    if (*h == '[') {
        if (colon == h || colon[-1] != ']')
            return lt_err_set(err, LT_EINVAL, 0, 0, "%s: unclosed '[' in '%s'", what, l);
        h++;
        he = colon - 1;
    } else if (memchr(h, ':', (size_t)(colon - h)) != NULL) {
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: IPv6 hosts go in brackets, '[%.*s]:%s'", what,
                          (int)(colon - h), h, colon + 1);
    }
    snprintf(cfg->host, sizeof(cfg->host), "%.*s", (int)(he - h), h);
    cfg->port = (uint16_t)port;
    return 0;
}

static int parse_prefix(struct ext_config *cfg, const char *what, struct lt_err *err)
{
    const char *p = cfg->url_prefix;
    size_t n = strlen(p);

    if (n > 0 && p[0] != '/')
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s: must start with '/', got '%s'", what, p);
    if (strpbrk(p, "?# \t\r\n") != NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: must be a plain path (no '?', '#' or blanks), got '%s'", what, p);
    while (n > 0 && p[n - 1] == '/')
        n--;
    snprintf(cfg->prefix, sizeof(cfg->prefix), "%.*s", (int)n, p);
    return 0;
}

static int check_readable(const struct ext_config *cfg, const struct setting *s, struct lt_err *err)
{
    const char *path = (const char *)cfg + s->off;
    char what[EXT_CONFIG_STR + 128];
    FILE *f;

    if (path[0] == '\0')
        return 0;
    f = fopen(path, "r");
    if (f != NULL) {
        fclose(f);
        return 0;
    }
    subject(cfg, s, what, sizeof(what));
    return lt_err_set(err, LT_EIO, 0, 0, "%s: cannot read '%s': %s", what, path, strerror(errno));
}

/* The setting named name (it exists: the names below are literals of the table). */
static const struct setting *S(const char *name)
{
    return find_setting(name, false);
}

static bool set(const struct ext_config *cfg, const char *name)
{
    return ((const char *)cfg + S(name)->off)[0] != '\0';
}

static int check_lookups(struct ext_config *cfg, struct lt_err *err)
{
    char what[EXT_CONFIG_STR + 128];
    struct lt_err e;

    lt_err_init(&e, NULL);
    cfg->pol = lt_policy_find(cfg->policy, &e);
    if (cfg->pol == NULL) {
        subject(cfg, S("policy"), what, sizeof(what));
        return lt_err_set(err, LT_ENOTFOUND, 0, 0, "%s: %s", what, e.text);
    }
    cfg->ev = lt_evict_find(cfg->eviction, &e);
    if (cfg->ev == NULL) {
        subject(cfg, S("eviction"), what, sizeof(what));
        return lt_err_set(err, LT_ENOTFOUND, 0, 0, "%s: %s", what, e.text);
    }
    if (!ext_log_level_parse(cfg->log_level, &cfg->level)) {
        subject(cfg, S("log-level"), what, sizeof(what));
        return lt_err_set(err, LT_ENOTFOUND, 0, 0,
                          "%s: unknown level '%s' (known: debug, info, warn, error)", what,
                          cfg->log_level);
    }
    return 0;
}

/* Settings that need or exclude each other. */
static int check_combinations(const struct ext_config *cfg, struct lt_err *err)
{
    static const struct {
        const char *a, *b; /* a needs b (or, with exclusive, a excludes b) */
        bool exclusive;
    } rules[] = {
        {"cluster-file", "server", true},  {"cluster-file", "token-file", true},
        {"cluster-file", "ca-file", true}, {"token-file", "server", false},
        {"ca-file", "server", false},      {"tls-cert", "tls-key", false},
        {"tls-key", "tls-cert", false},    {"tls-client-ca", "tls-cert", false},
    };
    char wa[EXT_CONFIG_STR + 128], wb[EXT_CONFIG_STR + 128];

    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        bool sa = set(cfg, rules[i].a), sb = set(cfg, rules[i].b);

        if (!sa || sb != rules[i].exclusive)
            continue;
        subject(cfg, S(rules[i].a), wa, sizeof(wa));
        subject(cfg, S(rules[i].b), wb, sizeof(wb));
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s %s %s", wa,
                          rules[i].exclusive ? "cannot be combined with" : "needs", wb);
    }
    return 0;
}

/* The largest body must fit in the budget of all bodies. */
static int check_sizes(const struct ext_config *cfg, struct lt_err *err)
{
    char wa[EXT_CONFIG_STR + 128], wb[EXT_CONFIG_STR + 128];

    if (cfg->body_budget >= cfg->max_body)
        return 0;
    subject(cfg, S("body-budget"), wa, sizeof(wa));
    subject(cfg, S("max-body"), wb, sizeof(wb));
    return lt_err_set(err, LT_EINVAL, 0, 0,
                      "%s (%" PRId64 " bytes) is smaller than %s (%" PRId64
                      " bytes): a body of the largest size could never be read",
                      wa, cfg->body_budget, wb, cfg->max_body);
}

/* The subject of a setting plus the library's message, as validation errors read. */
static int sub_err(const struct ext_config *cfg, const char *name, int code, const struct lt_err *e,
                   struct lt_err *err)
{
    char what[EXT_CONFIG_STR + 128];

    subject(cfg, S(name), what, sizeof(what));
    return lt_err_set(err, code, 0, 0, "%s: %s", what, e->text);
}

/* The slot mode settings into cfg->slots (the slots file is loaded here). */
static int check_slots(struct ext_config *cfg, struct lt_err *err)
{
    struct ext_slots *sl = &cfg->slots;
    char what[EXT_CONFIG_STR + 128], wf[EXT_CONFIG_STR + 128];
    struct ext_qty q;
    struct lt_err e;
    int rc;

    lt_err_init(&e, NULL);
    ext_slots_release(sl);
    if ((rc = ext_slots_parse_mode(cfg->slots_mode, &sl->mode, &e)) < 0)
        return sub_err(cfg, "slots", rc, &e, err);
    sl->level = (int)cfg->slots_level;
    if ((rc = ext_qty_parse(cfg->slots_cpu_unit, strlen(cfg->slots_cpu_unit), &q, "cpu", &e)) < 0 ||
        (rc = ext_qty_milli(&q, &sl->cpu_unit_milli)) < 0 || sl->cpu_unit_milli <= 0) {
        subject(cfg, S("slots-cpu-unit"), what, sizeof(what));
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "%s: expected a positive CPU quantity (e.g. '1', '8', '500m'), got '%s'",
                          what, cfg->slots_cpu_unit);
    }
    if ((rc = ext_slots_parse_classes(cfg->priority_classes, sl->thresholds, &e)) < 0)
        return sub_err(cfg, "priority-classes", rc, &e, err);
    sl->sticky = cfg->sticky_slots;
    subject(cfg, S("slots"), what, sizeof(what));
    subject(cfg, S("slots-file"), wf, sizeof(wf));
    if (sl->mode == EXT_SLOTS_FILE && !set(cfg, "slots-file"))
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s file needs %s", what, wf);
    if (sl->mode != EXT_SLOTS_FILE && set(cfg, "slots-file"))
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s needs %s file (got '%s')", wf, what,
                          cfg->slots_mode);
    if (sl->mode == EXT_SLOTS_FILE && (rc = ext_slots_load_file(sl, cfg->slots_file, &e)) < 0)
        return sub_err(cfg, "slots-file", rc, &e, err);
    return 0;
}

/* LoTES mode: the tables file is loaded here; it excludes slot mode (both reorder prioritize). */
static int check_lotes(struct ext_config *cfg, struct lt_err *err)
{
    char what[EXT_CONFIG_STR + 128], ws[EXT_CONFIG_STR + 128];
    struct lt_err e;
    int rc;

    lt_err_init(&e, NULL);
    ext_lotes_release(&cfg->lotes);
    if (!set(cfg, "lotes-tables"))
        return 0;
    if (cfg->slots.mode != EXT_SLOTS_OFF) {
        subject(cfg, S("lotes-tables"), what, sizeof(what));
        subject(cfg, S("slots"), ws, sizeof(ws));
        return lt_err_set(err, LT_EINVAL, 0, 0, "%s cannot be combined with %s %s", what, ws,
                          cfg->slots_mode);
    }
    if ((rc = ext_lotes_load_file(&cfg->lotes, cfg->lotes_tables, &e)) < 0)
        return sub_err(cfg, "lotes-tables", rc, &e, err);
    return 0;
}

void ext_config_release(struct ext_config *cfg)
{
    ext_slots_release(&cfg->slots);
    ext_lotes_release(&cfg->lotes);
}

int ext_config_validate(struct ext_config *cfg, struct lt_err *err)
{
    /* Not --cluster-file: loading it is part of starting (main.c, exit status 1), and its
     * errors (missing, a directory, bad JSON) are reported together by ext_cache_load_file. */
    static const char *const files[] = {"token-file", "ca-file", "tls-cert", "tls-key",
                                        "tls-client-ca"};
    char what[EXT_CONFIG_STR + 128];
    int rc;

    subject(cfg, S("listen"), what, sizeof(what));
    rc = parse_listen(cfg, what, err);
    if (rc == 0) {
        subject(cfg, S("url-prefix"), what, sizeof(what));
        rc = parse_prefix(cfg, what, err);
    }
    if (rc == 0)
        rc = check_lookups(cfg, err);
    if (rc == 0)
        rc = check_combinations(cfg, err);
    if (rc == 0)
        rc = check_sizes(cfg, err);
    if (rc == 0 && set(cfg, "server")) {
        struct kube_config kc;
        struct lt_err e;

        lt_err_init(&e, NULL);
        kube_config_init(&kc);
        if (kube_config_set_server(&kc, cfg->server, &e) < 0) {
            subject(cfg, S("server"), what, sizeof(what));
            rc = lt_err_set(err, LT_EINVAL, 0, 0, "%s: %s", what, e.text);
        }
    }
    for (size_t i = 0; rc == 0 && i < sizeof(files) / sizeof(files[0]); i++)
        rc = check_readable(cfg, S(files[i]), err);
    if (rc == 0)
        rc = check_slots(cfg, err);
    if (rc == 0)
        rc = check_lotes(cfg, err);
    return rc;
}

json_t *ext_config_to_json(const struct ext_config *cfg)
{
    json_t *o = json_object();

    for (size_t i = 0; o != NULL && i < N_SETTINGS; i++) {
        const struct setting *s = &settings[i];
        const char *field = (const char *)cfg + s->off;
        char k[64];
        int64_t n;
        uint64_t u;

        if (strcmp(s->name, "config") == 0)
            continue; /* names the file itself: not a key a config file may hold */
        key_name(s, k, sizeof(k));
        if (s->type == S_STR) {
            json_object_set_new(o, k, json_string(field));
        } else if (s->type == S_U64) {
            memcpy(&u, field, sizeof(u));
            json_object_set_new(o, k, json_integer((json_int_t)u));
        } else if (s->type == S_DURATION) {
            char d[40];

            memcpy(&n, field, sizeof(n));
            if (n % 3600000 == 0 && n > 0)
                snprintf(d, sizeof(d), "%" PRId64 "h", n / 3600000);
            else if (n % 60000 == 0 && n > 0)
                snprintf(d, sizeof(d), "%" PRId64 "m", n / 60000);
            else if (n % 1000 == 0)
                snprintf(d, sizeof(d), "%" PRId64 "s", n / 1000);
            else
                snprintf(d, sizeof(d), "%" PRId64 "ms", n);
            json_object_set_new(o, k, json_string(d));
        } else {
            memcpy(&n, field, sizeof(n));
            json_object_set_new(o, k, json_integer(n));
        }
    }
    return o;
}

void ext_config_usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [--config FILE] [--name=value ...]\n"
            "lotus-extender: a kube-scheduler extender (filter, prioritize, preempt, bind).\n"
            "Every flag is also a config-file key ('-' written '_'); flags win.\n\n",
            argv0);
    for (size_t i = 0; i < N_SETTINGS; i++) {
        char flag[64];

        snprintf(flag, sizeof(flag), "--%s", settings[i].name);
        fprintf(f, "  %-20s %s", flag, settings[i].help);
        if (settings[i].def[0] != '\0')
            fprintf(f, " (default %s)", settings[i].def);
        fputc('\n', f);
    }
    fprintf(f, "  %-20s %s\n  %-20s %s\n  %-20s %s\n", "--print-config",
            "print the effective configuration as JSON and exit", "--version",
            "print the version and exit", "--help", "this text");
}
