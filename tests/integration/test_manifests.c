/* test_manifests.c -- manifests/ agree with each other, with lotus-extender, lotus-sim and
 * their images.
 *
 * usage: test_manifests LOTUS_EXTENDER LOTUS_SIM SOURCE_DIR
 *
 * Reads every .json file of manifests/ and manifests/sweep/ (JSON, one object or a v1 List; a
 * .yaml or .yml file there must be JSON text too), manifests/Dockerfile and
 * manifests/Dockerfile.sim, asks the extender for its defaults and for the
 * configuration the Deployment's args produce (--print-config), and checks, by following the
 * references between the objects rather than by fixed names:
 *
 *   - every file parses; every object has apiVersion, kind, metadata.name, the part-of label,
 *     the one namespace (cluster-scoped kinds none; the kube-system RoleBinding to
 *     extension-apiserver-authentication-reader excepted); (kind, namespace, name) is unique;
 *   - the extender's Deployment: image lotus-extender:<version of the binary>, args that the
 *     binary accepts, in-cluster mode, listen port and URL prefix equal to the binary's
 *     defaults, the containerPort, probes on /healthz and /readyz at that port, the Prometheus
 *     annotations, non-root with a read-only root fs, a grace period above the drain, not
 *     scheduled by lotus-scheduler itself;
 *   - its Service selects the pods; the Service's targetPort is the containerPort;
 *   - its ServiceAccount is bound to exactly list+watch on nodes and pods and create on
 *     pods/binding (nothing more, nothing less);
 *   - the KubeSchedulerConfiguration (JSON text in the ConfigMap the second kube-scheduler
 *     mounts at its --config path): v1, a lotus-scheduler profile, its own lease (with RBAC
 *     for it), one extender whose urlPrefix names the Service, its namespace and port and the
 *     extender's URL prefix, the four verbs, weight > 0, nodeCacheCapable true, ignorable
 *     false, a valid httpTimeout; the scheduler's ServiceAccount bound to system:kube-scheduler,
 *     system:volume-scheduler and extension-apiserver-authentication-reader;
 *   - both Deployments: priorityClassName system-cluster-critical (or a PriorityClass of the
 *     manifests) and exactly one policy/v1 PodDisruptionBudget that lets a drain evict one pod
 *     and never all; the extender's NetworkPolicy (networking.k8s.io/v1) admits ingress only
 *     to its port and only from the scheduler's pods of the namespace;
 *   - the binary, started offline with the Deployment's args (listen moved to loopback),
 *     answers 200 on urlPrefix's path + each verb, on both probe paths and on /metrics, and 404
 *     on a verb it does not have;
 *   - the Dockerfile: debian:12 stages, the build stage installs only .ci/deps.sh packages and
 *     builds the lotus-extender CMake target, the final stage copies the binary to the
 *     Deployment's command path, ENTRYPOINT, EXPOSE and USER (uid:gid) match the Deployment,
 *     and it installs exactly the Debian packages holding the binary's DT_NEEDED libraries
 *     (dpkg -S; libc6 comes with the base image; ca-certificates allowed), when dpkg and
 *     objdump are present;
 *   - the sweep Jobs (manifests/sweep/): every container with the lotus-sim image runs
 *     [registry/]lotus-sim:<lotus-sim --version>, one binary path (or /bin/sh), one non-root
 *     uid:gid, a read-only root fs, no privilege escalation; Dockerfile.sim agrees as the
 *     extender's Dockerfile does (target lotus-sim, EXPOSE none, the Jobs' command path and
 *     runAsUser:runAsGroup, the packages of lotus-sim's DT_NEEDED libraries plus gnuplot-nox,
 *     required because tx and merge plot report.html with the gnuplot on PATH).
 *
 * Then it changes one side of each agreement at a time (in memory: a port, a label, a verb,
 * a path, a rule, a default of the binary, a Dockerfile line, ...) and requires the checks to
 * fail for every change, so the checks cannot silently stop checking.
 *
 * Output: "ok - ..." per check group and per detected change; failures as "not ok - ...";
 * exit 1 if anything failed.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* mkdtemp, usleep, kill, strdup */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "ext_proc.h"

extern char **environ;

#define MAXDOCS 64
#define MAXOBJ  256
#define MAXTOK  64

static const char *bin, *sim_bin, *srcdir;
static char tmpdir[256];

/* Everything the checks read: the manifests, the Dockerfile, the binary's answers. */
struct inputs {
    size_t ndocs;
    char *file[MAXDOCS];
    json_t *doc[MAXDOCS];
    char *dockerfile;
    json_t *defaults;      /* lotus-extender --print-config */
    char *version;         /* lotus-extender --version, the version word */
    char need[MAXTOK][64]; /* Debian packages of the binary's DT_NEEDED libraries */
    int nneed;             /* -1: objdump, ldd or dpkg unavailable */
    char *dockerfile_sim;  /* manifests/Dockerfile.sim, the image of the sweep Jobs */
    char *sim_version;     /* lotus-sim --version, the version word */
    char sim_need[MAXTOK][64];
    int nsim_need;
    char conf[MAXTOK][64];      /* Debian packages CMake's configure step requires */
    char conf_via[MAXTOK][512]; /* the .ci/deps.sh packages that bring each */
    int nconf;                  /* -1: pkg-config, dpkg or apt-cache unavailable */
};

/* The state of one run of the checks. */
struct run {
    bool quiet;
    int failures;
    char first[512];
    size_t nobj;
    json_t *obj[MAXOBJ]; /* borrowed from inputs.doc */
    const char *ns;
};

static void fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *slurp(const char *path);

static void fail(struct run *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r->failures++ == 0)
        snprintf(r->first, sizeof(r->first), "%s", msg);
    if (!r->quiet)
        printf("not ok - %s\n", msg);
}

#define CHECK(r, cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail((r), __VA_ARGS__);                                                                \
    } while (0)

static void ok(const struct run *r, const char *what)
{
    if (!r->quiet)
        printf("ok - %s\n", what);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fputs("not ok - ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    exit(1);
}

/* ------------------------------------------------------------------------------------------
 * JSON helpers
 */

/* The value at path ("a|b|0|c": object keys and array indices, '|'-separated), or NULL. */
static json_t *jget(const json_t *v, const char *path)
{
    char seg[256];

    while (v != NULL && *path != '\0') {
        size_t n = strcspn(path, "|");

        snprintf(seg, sizeof(seg), "%.*s", (int)n, path);
        path += n + (path[n] == '|');
        if (json_is_array(v)) {
            char *end;
            long i = strtol(seg, &end, 10);

            v = *end == '\0' && i >= 0 ? json_array_get(v, (size_t)i) : NULL;
        } else {
            v = json_object_get(v, seg);
        }
    }
    return (json_t *)(uintptr_t)v;
}

static const char *jgets(const json_t *v, const char *path)
{
    return ep_jstr(jget(v, path));
}

/* Sets the value at path to nv (stolen). A string met before the path ends is parsed as
 * JSON, changed and written back, so paths reach into the ConfigMap's embedded config. */
static bool jset(json_t *v, const char *path, json_t *nv)
{
    char seg[256];
    size_t n = strcspn(path, "|");
    const char *rest = path + n + (path[n] == '|');
    json_t *child;

    snprintf(seg, sizeof(seg), "%.*s", (int)n, path);
    if (json_is_string(v)) {
        json_t *inner = json_loads(json_string_value(v), 0, NULL);
        char *text;
        bool done;

        if (inner == NULL)
            return false;
        done = jset(inner, path, nv);
        text = json_dumps(inner, JSON_PRESERVE_ORDER);
        json_string_set(v, text);
        free(text);
        json_decref(inner);
        return done;
    }
    if (*rest == '\0') {
        if (json_is_array(v))
            return json_array_set_new(v, (size_t)atol(seg), nv) == 0;
        return json_object_set_new(v, seg, nv) == 0;
    }
    child = json_is_array(v) ? json_array_get(v, (size_t)atol(seg)) : json_object_get(v, seg);
    if (child == NULL) {
        json_decref(nv);
        return false;
    }
    return jset(child, rest, nv);
}

/* True if every key of sel (matchLabels) has the same value in labels; false if sel is empty
 * or uses matchExpressions. */
static bool selects(const json_t *sel, const json_t *labels)
{
    const char *k;
    json_t *v;

    if (!json_is_object(sel) || json_object_size(sel) == 0)
        return false;
    json_object_foreach((json_t *)(uintptr_t)sel, k, v)
    {
        if (!json_is_string(v) || strcmp(ep_jstr(v), ep_jstr(json_object_get(labels, k))) != 0)
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------------------------------
 * Processes
 */

/* Runs argv (argv[0] a path) and returns its exit status (-1 if it did not exit normally);
 * *out gets its stdout (malloc'd) if out is not NULL. stderr goes to /dev/null. */
static int run_capture(const char *const argv[], char **out)
{
    posix_spawn_file_actions_t fa;
    int fd[2], st;
    pid_t pid;
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t n;

    if (buf == NULL || pipe(fd) != 0)
        die("pipe: %s", strerror(errno));
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)(uintptr_t)argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(fd[0]);
        close(fd[1]);
        free(buf);
        return -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    while ((n = read(fd[0], buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 2 && (buf = realloc(buf, cap *= 2)) == NULL)
            die("out of memory");
    }
    close(fd[0]);
    buf[len] = '\0';
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* lotus-extender ARGS... --print-config as JSON, or NULL if it refuses the args. */
static json_t *print_config(const json_t *args)
{
    const char *argv[MAXTOK + 3];
    char *out = NULL;
    size_t n = 0, i;
    json_t *v, *cfg = NULL;

    argv[n++] = bin;
    json_array_foreach(args, i, v)
    {
        if (n < MAXTOK && json_is_string(v))
            argv[n++] = json_string_value(v);
    }
    argv[n++] = "--print-config";
    argv[n] = NULL;
    if (run_capture(argv, &out) == 0)
        cfg = json_loads(out, 0, NULL);
    free(out);
    return cfg;
}

/* ------------------------------------------------------------------------------------------
 * Finding objects
 */

static bool cluster_scoped(const char *kind)
{
    static const char *const kinds[] = {"Namespace", "ClusterRole", "ClusterRoleBinding",
                                        "PriorityClass"};

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kind, kinds[i]) == 0)
            return true;
    return false;
}

static json_t *find(const struct run *r, const char *kind, const char *ns, const char *name)
{
    for (size_t i = 0; i < r->nobj; i++) {
        const json_t *o = r->obj[i];

        if (strcmp(jgets(o, "kind"), kind) == 0 && strcmp(jgets(o, "metadata|name"), name) == 0 &&
            (ns == NULL || strcmp(jgets(o, "metadata|namespace"), ns) == 0))
            return r->obj[i];
    }
    return NULL;
}

/* The Deployment whose first container's image (or command[0]) contains what. */
static json_t *find_deployment(const struct run *r, const char *what)
{
    for (size_t i = 0; i < r->nobj; i++) {
        const json_t *c = jget(r->obj[i], "spec|template|spec|containers|0");

        if (strcmp(jgets(r->obj[i], "kind"), "Deployment") == 0 &&
            (strstr(jgets(c, "image"), what) || strstr(jgets(c, "command|0"), what)))
            return r->obj[i];
    }
    return NULL;
}

/* The containerPort that port (a number or a port name) means in container c; -1 if none. */
static int resolve_port(const json_t *c, const json_t *port)
{
    size_t i;
    json_t *p;

    json_array_foreach(json_object_get(c, "ports"), i, p)
    {
        int cp = (int)json_integer_value(json_object_get(p, "containerPort"));

        if (json_is_integer(port) && json_integer_value(port) == cp)
            return cp;
        if (json_is_string(port) && strcmp(ep_jstr(port), jgets(p, "name")) == 0)
            return cp;
    }
    return -1;
}

/* A (group, resource, verb) triple granted to a subject, with the resource name if any. */
struct grant {
    char g[64], res[64], verb[32], name[64], ns[64];
};

/* Adds the grants of every (Cluster)Role bound to ServiceAccount ns/sa; returns the count or
 * -1 (with a failure recorded) for wildcards, nonResourceURLs or a missing role. */
static int grants_of(struct run *r, const char *ns, const char *sa, struct grant *out, int max,
                     char roles[][128], int *nroles)
{
    int n = 0;

    *nroles = 0;
    for (size_t i = 0; i < r->nobj; i++) {
        const json_t *b = r->obj[i];
        const char *kind = jgets(b, "kind"), *rk = jgets(b, "roleRef|kind");
        const char *rn = jgets(b, "roleRef|name"), *bns = jgets(b, "metadata|namespace");
        bool bound = false;
        const json_t *role, *rule, *s;
        size_t j, k, l, m;

        if (strcmp(kind, "ClusterRoleBinding") != 0 && strcmp(kind, "RoleBinding") != 0)
            continue;
        json_array_foreach(json_object_get(b, "subjects"), j, s)
        {
            bound |= strcmp(jgets(s, "kind"), "ServiceAccount") == 0 &&
                     strcmp(jgets(s, "name"), sa) == 0 && strcmp(jgets(s, "namespace"), ns) == 0;
        }
        if (!bound)
            continue;
        if (*nroles < 16)
            snprintf(roles[(*nroles)++], 128, "%s%s%s/%s", bns, *bns ? ":" : "", rk, rn);
        CHECK(r, strcmp(jgets(b, "roleRef|apiGroup"), "rbac.authorization.k8s.io") == 0,
              "%s %s: roleRef.apiGroup must be rbac.authorization.k8s.io", kind,
              jgets(b, "metadata|name"));
        role = find(r, rk, strcmp(rk, "Role") == 0 ? bns : NULL, rn);
        if (role == NULL)
            continue; /* a built-in role (system:...) or a missing one: the caller decides */
        json_array_foreach(json_object_get(role, "rules"), j, rule)
        {
            const json_t *gs = json_object_get(rule, "apiGroups"), *g, *rs, *res, *vs, *v;
            const json_t *names = json_object_get(rule, "resourceNames");

            if (json_object_get(rule, "nonResourceURLs")) {
                fail(r, "%s %s: nonResourceURLs granted", rk, rn);
                return -1;
            }
            rs = json_object_get(rule, "resources");
            vs = json_object_get(rule, "verbs");
            json_array_foreach(gs, k, g) json_array_foreach(rs, l, res) json_array_foreach(vs, m, v)
            {
                size_t nn = json_array_size(names) ? json_array_size(names) : 1;

                if (strcmp(ep_jstr(g), "*") == 0 || strcmp(ep_jstr(res), "*") == 0 ||
                    strcmp(ep_jstr(v), "*") == 0) {
                    fail(r, "%s %s: wildcard granted", rk, rn);
                    return -1;
                }
                for (size_t q = 0; q < nn && n < max; q++, n++) {
                    snprintf(out[n].g, sizeof(out[n].g), "%s", ep_jstr(g));
                    snprintf(out[n].res, sizeof(out[n].res), "%s", ep_jstr(res));
                    snprintf(out[n].verb, sizeof(out[n].verb), "%s", ep_jstr(v));
                    snprintf(out[n].name, sizeof(out[n].name), "%s",
                             ep_jstr(json_array_get(names, q)));
                    snprintf(out[n].ns, sizeof(out[n].ns), "%s",
                             strcmp(rk, "Role") == 0 ? bns : "");
                }
            }
        }
    }
    return n;
}

static bool has_role(char roles[][128], int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (strcmp(roles[i], want) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------------------------------
 * Small parsers
 */

/* "--name=value" of args, or NULL. */
static const char *arg_value(const json_t *args, const char *name)
{
    size_t i, n = strlen(name);
    json_t *v;

    json_array_foreach(args, i, v)
    {
        const char *s = ep_jstr(v);

        if (strncmp(s, name, n) == 0 && s[n] == '=')
            return s + n + 1;
    }
    return NULL;
}

/* The port of a "[host]:port" listen value and whether the host is every address. */
static int listen_port(const char *listen, bool *any)
{
    const char *colon = strrchr(listen, ':');
    size_t hl = colon ? (size_t)(colon - listen) : 0;

    *any = hl == 0 || (hl == 7 && strncmp(listen, "0.0.0.0", 7) == 0) ||
           (hl == 4 && strncmp(listen, "[::]", 4) == 0);
    return colon ? atoi(colon + 1) : -1;
}

/* Go's time.ParseDuration for what a config holds ("5s", "1m30s", "500ms"): milliseconds,
 * -1 if malformed. */
static double go_duration_ms(const char *s)
{
    static const struct {
        const char *u;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 6e4}, {"h", 3.6e6}};
    double total = 0;

    if (*s == '\0')
        return -1;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        size_t best = 0, bi = 0;

        if (end == s || !isdigit((unsigned char)*s))
            return -1;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t l = strlen(units[i].u);

            if (strncmp(end, units[i].u, l) == 0 && l > best)
                best = l, bi = i;
        }
        if (best == 0)
            return -1;
        total += v * units[bi].ms;
        s = end + best;
    }
    return total;
}

/* A URL "scheme://host:port/path" split; false if it does not have that shape. */
struct url {
    char scheme[16], host[256], path[512];
    int port;
};

static bool parse_url(const char *u, struct url *o)
{
    const char *p = strstr(u, "://"), *h, *colon, *slash;

    memset(o, 0, sizeof(*o));
    if (p == NULL || (size_t)(p - u) >= sizeof(o->scheme))
        return false;
    snprintf(o->scheme, sizeof(o->scheme), "%.*s", (int)(p - u), u);
    h = p + 3;
    slash = strchr(h, '/');
    if (slash == NULL)
        slash = h + strlen(h);
    colon = memchr(h, ':', (size_t)(slash - h));
    if (colon == NULL)
        return false; /* the port is required: it is what the test compares */
    snprintf(o->host, sizeof(o->host), "%.*s", (int)(colon - h), h);
    o->port = atoi(colon + 1);
    snprintf(o->path, sizeof(o->path), "%s", slash);
    return true;
}

/* Removes trailing slashes, as kube-scheduler does to urlPrefix and lotus to --url-prefix. */
static void trim_slashes(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && s[n - 1] == '/')
        s[--n] = '\0';
}

/* ------------------------------------------------------------------------------------------
 * The Dockerfile
 */

struct stage {
    char from[128], name[64];
    char user[64];
    char copy_from[64], copy_src[256], copy_dst[256];
    char entry[256];
    int expose;
    char pkgs[MAXTOK][64]; /* apt-get install arguments */
    int npkgs;
    char target[64]; /* the CMake --target it builds */
};

/* Joins continuation lines and splits the Dockerfile into stages; returns the stage count. */
static int parse_dockerfile(const char *text, struct stage *st, int max)
{
    char *buf = strdup(text), *line, *save = NULL, joined[8192];
    int n = 0;
    size_t jl = 0;

    if (buf == NULL)
        die("out of memory");
    joined[0] = '\0';
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t l = strlen(line);
        bool cont;
        char *s = joined, *tok, *ts = NULL;
        struct stage *cur = n > 0 ? &st[n - 1] : NULL;

        while (*line == ' ' || *line == '\t')
            line++, l--;
        if (*line == '#' && jl == 0)
            continue;
        cont = l > 0 && line[l - 1] == '\\';
        jl += (size_t)snprintf(joined + jl, sizeof(joined) - jl, "%.*s ", (int)(l - cont), line);
        if (jl >= sizeof(joined))
            jl = sizeof(joined) - 1;
        if (cont)
            continue;
        jl = 0;
        if (strncmp(s, "FROM ", 5) == 0 && n < max) {
            cur = &st[n++];
            memset(cur, 0, sizeof(*cur));
            sscanf(s + 5, "%127s AS %63s", cur->from, cur->name);
            if (cur->name[0] == '\0')
                sscanf(s + 5, "%127s as %63s", cur->from, cur->name);
        } else if (cur && strncmp(s, "USER ", 5) == 0) {
            sscanf(s + 5, "%63s", cur->user);
        } else if (cur && strncmp(s, "EXPOSE ", 7) == 0) {
            cur->expose = atoi(s + 7);
        } else if (cur && strncmp(s, "COPY --from=", 12) == 0) {
            sscanf(s + 12, "%63s %255s %255s", cur->copy_from, cur->copy_src, cur->copy_dst);
        } else if (cur && strncmp(s, "ENTRYPOINT ", 11) == 0) {
            json_t *e = json_loads(s + 11, JSON_DECODE_ANY, NULL);

            snprintf(cur->entry, sizeof(cur->entry), "%s", ep_jstr(json_array_get(e, 0)));
            json_decref(e);
        } else if (cur && strncmp(s, "RUN ", 4) == 0) {
            bool in_install = false, after_target = false;

            for (tok = strtok_r(s + 4, " \t", &ts); tok; tok = strtok_r(NULL, " \t", &ts)) {
                if (strcmp(tok, "&&") == 0 || strcmp(tok, ";") == 0) {
                    in_install = false;
                } else if (strcmp(tok, "install") == 0) {
                    in_install = true;
                } else if (in_install && tok[0] != '-' && cur->npkgs < MAXTOK) {
                    snprintf(cur->pkgs[cur->npkgs++], 64, "%s", tok);
                }
                if (after_target)
                    snprintf(cur->target, sizeof(cur->target), "%s", tok);
                after_target = strcmp(tok, "--target") == 0;
            }
        }
    }
    free(buf);
    return n;
}

static bool in_list(const char list[][64], int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

/* The packages of .ci/deps.sh's pkgs="..." list. */
static int deps_packages(char out[][64], int max)
{
    char path[1024], text[4096];
    size_t len;
    int n = 0;
    FILE *f;
    char *p, *q, *tok, *save = NULL;

    snprintf(path, sizeof(path), "%s/.ci/deps.sh", srcdir);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    p = strstr(text, "pkgs=\"");
    q = p ? strchr(p + 6, '"') : NULL;
    if (q == NULL)
        return -1;
    *q = '\0';
    for (tok = strtok_r(p + 6, " \t\n", &save); tok && n < max;
         tok = strtok_r(NULL, " \t\n", &save))
        snprintf(out[n++], 64, "%s", tok);
    return n;
}

/* The Debian package holding the file at path (dpkg -S; with merged /usr, the other spelling
 * of the path too) into pkg[64]; false if dpkg is missing or knows no such file. */
static bool dpkg_owner(const char *path, char pkg[64])
{
    char p[520], *res = NULL, *colon;
    const char *argv[4] = {"dpkg", "-S", p, NULL};
    bool found;

    snprintf(p, sizeof(p), "%s", path);
    found = run_capture(argv, &res) == 0;
    if (!found) {
        free(res);
        res = NULL;
        if (strncmp(path, "/usr/", 5) == 0)
            snprintf(p, sizeof(p), "%s", path + 4);
        else
            snprintf(p, sizeof(p), "/usr%s", path);
        found = run_capture(argv, &res) == 0;
    }
    colon = found ? strchr(res, ':') : NULL;
    if (colon != NULL)
        snprintf(pkg, 64, "%.*s", (int)(colon - res), res);
    free(res);
    return colon != NULL;
}

/* The Debian packages CMake's configure step requires: for each pkg_check_modules(... REQUIRED
 * ... MODULE) and find_path(VAR HEADER REQUIRED) of CMakeLists.txt, the package of MODULE.pc
 * (pkg-config's pcfiledir) or of /usr/include/HEADER (dpkg -S), into out; via[i] gets the
 * .ci/deps.sh packages that bring out[i] (itself, or one whose Depends name it; apt-cache
 * depends), space-separated. -1 if pkg-config, dpkg or apt-cache answers nothing usable. */
static int configure_packages(char out[][64], char via[][512], int max)
{
    char path[1400], deps[MAXTOK][64], *text, *at, *dep = NULL, *line, *save = NULL, cur[64] = "";
    const char *argv[MAXTOK + 6] = {"apt-cache", "depends", "--no-recommends", "--no-suggests"};
    int n = 0, ndeps = deps_packages(deps, MAXTOK), na = 4;

    snprintf(path, sizeof(path), "%s/CMakeLists.txt", srcdir);
    text = slurp(path);
    if (text == NULL || ndeps <= 0)
        die("cannot read %s or .ci/deps.sh", path);
    for (at = text; (at = strstr(at, "\n")) != NULL && n >= 0 && n < max; at++) {
        char a[64] = "", b[128] = "", c[64] = "", d[128] = "", *pc = NULL;
        const char *pargv[4] = {"pkg-config", "--variable=pcfiledir", b, NULL};

        if (sscanf(at + 1, "pkg_check_modules(%63s REQUIRED IMPORTED_TARGET %127[^) \n]", a, b) ==
            2) {
            if (run_capture(pargv, &pc) != 0 || pc[0] != '/') {
                free(pc);
                n = -1;
                break;
            }
            pc[strcspn(pc, "\n")] = '\0';
            snprintf(path, sizeof(path), "%s/%s.pc", pc, b);
            free(pc);
        } else if (sscanf(at + 1, "find_path(%63s %127s %63[^) \n]", a, d, c) == 3 &&
                   strcmp(c, "REQUIRED") == 0) {
            snprintf(path, sizeof(path), "/usr/include/%s", d);
        } else {
            continue;
        }
        if (!dpkg_owner(path, out[n])) {
            n = -1;
            break;
        }
        snprintf(via[n], 512, "%s", in_list(deps, ndeps, out[n]) ? out[n] : "");
        n++;
    }
    free(text);
    for (int i = 0; i < ndeps && n > 0; i++)
        argv[na++] = deps[i];
    argv[na] = NULL;
    if (n <= 0 || run_capture(argv, &dep) != 0) {
        free(dep);
        return -1;
    }
    for (line = strtok_r(dep, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64];

        if (line[0] != ' ' && line[0] != '|')
            snprintf(cur, sizeof(cur), "%.63s", line);
        else if (sscanf(line, " %*[|]Depends: %63s", name) == 1 ||
                 sscanf(line, " Depends: %63s", name) == 1)
            for (int i = 0; i < n; i++)
                if (strcmp(out[i], name) == 0 && strlen(via[i]) + strlen(cur) + 2 < 512)
                    strcat(strcat(via[i], " "), cur);
    }
    free(dep);
    return n;
}

/* The Debian packages holding binary's DT_NEEDED libraries (sanitizer runtimes left out); -1
 * if objdump, ldd or dpkg is missing or answers something unexpected. */
static int needed_packages(const char *binary, char out[][64], int max)
{
    const char *argv[4];
    char *od = NULL, *ld = NULL, *line, *save = NULL;
    int n = 0;

    argv[0] = "objdump", argv[1] = "-p", argv[2] = binary, argv[3] = NULL;
    if (run_capture(argv, &od) != 0) {
        free(od);
        return -1;
    }
    argv[0] = "ldd", argv[1] = binary, argv[2] = NULL;
    if (run_capture(argv, &ld) != 0) {
        free(od);
        free(ld);
        return -1;
    }
    for (line = strtok_r(od, "\n", &save); line && n >= 0; line = strtok_r(NULL, "\n", &save)) {
        char soname[128], pattern[160], path[512], pkg[64];
        const char *at;

        if (sscanf(line, " NEEDED %127s", soname) != 1 || strstr(soname, "libasan") ||
            strstr(soname, "libubsan") || strstr(soname, "libtsan"))
            continue;
        snprintf(pattern, sizeof(pattern), "\t%s => ", soname);
        at = strstr(ld, pattern);
        if (at == NULL || sscanf(at + strlen(pattern), "%511s", path) != 1) {
            n = -1;
            break;
        }
        if (!dpkg_owner(path, pkg) || n >= max) {
            n = -1;
            break;
        }
        if (!in_list(out, n, pkg))
            snprintf(out[n++], 64, "%s", pkg);
    }
    free(od);
    free(ld);
    return n;
}

/* ------------------------------------------------------------------------------------------
 * The running binary
 */

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

/* Status of METHOD base+path (with body for POST), 0 on a transport failure. */
static long http(const char *base, const char *path, const char *body)
{
    CURL *c = curl_easy_init();
    char url[1024];
    long code = 0;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

    snprintf(url, sizeof(url), "http://%s%s", base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    }
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return code;
}

/* Starts the binary with args plus offline mode on loopback; 0 and *pid, *port on success. */
static int start(const json_t *args, pid_t *pid, int *port)
{
    const char *argv[MAXTOK + 4];
    char cluster[1024], log[300];
    size_t n = 0, i;
    json_t *v;
    int st;

    snprintf(cluster, sizeof(cluster),
             "--cluster-file=%s/tests/fixtures/extender/cluster/small.json", srcdir);
    snprintf(log, sizeof(log), "%s/extender.log", tmpdir);
    argv[n++] = bin;
    json_array_foreach(args, i, v)
    {
        if (n < MAXTOK && json_is_string(v))
            argv[n++] = json_string_value(v);
    }
    argv[n++] = cluster;
    argv[n++] = "--listen=127.0.0.1:0"; /* the last --listen wins */
    argv[n] = NULL;
    if (ep_spawn(argv, log, pid) != 0)
        return -1;
    *port = ep_wait_port(*pid, log, 1000, &st);
    if (*port < 0)
        return -1;
    if (*port != 0)
        return 0;
    kill(*pid, SIGKILL);
    waitpid(*pid, &st, 0);
    return -1;
}

static void stop(pid_t pid)
{
    int st;

    kill(pid, SIGTERM);
    if (ep_wait_exit(pid, 15000) != -1)
        return;
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
}

/* ------------------------------------------------------------------------------------------
 * The checks
 */

static const char *const verb_keys[] = {"filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"};

/* Requests each verb accepts with a 200 offline. */
static const char *verb_body(const char *key)
{
    static const char pod[] = "\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\","
                              "\"uid\":\"u\"},\"spec\":{\"containers\":[]}}";
    static char b[512];

    if (strcmp(key, "bindVerb") == 0)
        return "{\"PodName\":\"p\",\"PodNamespace\":\"default\",\"PodUID\":\"u\",\"Node\":\"n\"}";
    if (strcmp(key, "preemptVerb") == 0)
        snprintf(b, sizeof(b), "{%s,\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{}}", pod);
    else
        snprintf(b, sizeof(b), "{%s,\"Nodes\":null,\"NodeNames\":[]}", pod);
    return b;
}

/* Loads the objects of the documents; checks each file and object's shape. */
static void check_objects(struct run *r, const struct inputs *in)
{
    const json_t *nsobj = NULL;

    r->nobj = 0;
    for (size_t d = 0; d < in->ndocs; d++) {
        const json_t *doc = in->doc[d], *items = json_object_get(doc, "items"), *o;
        size_t i;

        if (strcmp(jgets(doc, "kind"), "List") == 0) {
            CHECK(r, strcmp(jgets(doc, "apiVersion"), "v1") == 0 && json_array_size(items) > 0,
                  "%s: a List must be apiVersion v1 with items", in->file[d]);
            json_array_foreach(items, i, o) if (r->nobj < MAXOBJ) r->obj[r->nobj++] =
                (json_t *)(uintptr_t)o;
        } else if (r->nobj < MAXOBJ) {
            r->obj[r->nobj++] = (json_t *)(uintptr_t)doc;
        }
    }
    for (size_t i = 0; i < r->nobj; i++)
        if (strcmp(jgets(r->obj[i], "kind"), "Namespace") == 0)
            nsobj = r->obj[i];
    CHECK(r, nsobj != NULL, "no Namespace object");
    r->ns = nsobj ? jgets(nsobj, "metadata|name") : "";
    for (size_t i = 0; i < r->nobj; i++) {
        const json_t *o = r->obj[i];
        const char *kind = jgets(o, "kind"), *name = jgets(o, "metadata|name");
        const char *ns = jgets(o, "metadata|namespace");
        bool auth_reader =
            strcmp(kind, "RoleBinding") == 0 &&
            strcmp(jgets(o, "roleRef|name"), "extension-apiserver-authentication-reader") == 0;

        CHECK(r, *jgets(o, "apiVersion") && *kind && *name, "object %zu: apiVersion, kind, name",
              i);
        CHECK(r, strcmp(jgets(o, "metadata|labels|app.kubernetes.io/part-of"), "lotus") == 0,
              "%s %s: label app.kubernetes.io/part-of=lotus missing", kind, name);
        if (cluster_scoped(kind))
            CHECK(r, *ns == '\0', "%s %s: cluster-scoped, but has namespace '%s'", kind, name, ns);
        else if (auth_reader)
            CHECK(r, strcmp(ns, "kube-system") == 0,
                  "RoleBinding %s: extension-apiserver-authentication-reader lives in kube-system",
                  name);
        else
            CHECK(r, strcmp(ns, r->ns) == 0, "%s %s: namespace '%s', expected '%s'", kind, name, ns,
                  r->ns);
        for (size_t j = 0; j < i; j++)
            CHECK(r,
                  strcmp(kind, jgets(r->obj[j], "kind")) != 0 ||
                      strcmp(name, jgets(r->obj[j], "metadata|name")) != 0 ||
                      strcmp(ns, jgets(r->obj[j], "metadata|namespace")) != 0,
                  "%s %s/%s defined twice", kind, ns, name);
    }
    ok(r, "manifests: every object has apiVersion, kind, name, the part-of label, one namespace");
}

/* What the extender's side fixes for the scheduler's side. */
struct ext_facts {
    int port;          /* containerPort = listen port */
    int svc_port;      /* the Service's port to it */
    char svc[256];     /* the Service's name */
    char prefix[512];  /* effective --url-prefix, no trailing slash */
    json_t *args;      /* borrowed */
    json_t *effective; /* owned */
    const char *cmd;   /* command[0] */
    long uid, gid;     /* runAsUser, runAsGroup (-1: unset) */
};

/* True if image is want or REGISTRY/want. */
static bool image_is(const char *img, const char *want)
{
    size_t a = strlen(img), b = strlen(want);

    return strcmp(img, want) == 0 ||
           (a > b && strcmp(img + a - b, want) == 0 && img[a - b - 1] == '/');
}

static long sc_int(const json_t *pod, const json_t *c, const char *key)
{
    const json_t *v = jget(c, "securityContext");

    v = json_object_get(v, key);
    if (v == NULL)
        v = json_object_get(json_object_get(pod, "securityContext"), key);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static bool sc_true(const json_t *pod, const json_t *c, const char *key)
{
    const json_t *v = json_object_get(json_object_get(c, "securityContext"), key);

    if (v == NULL)
        v = json_object_get(json_object_get(pod, "securityContext"), key);
    return json_is_true(v);
}

static void check_extender(struct run *r, const struct inputs *in, struct ext_facts *f)
{
    const json_t *d = find_deployment(r, "lotus-extender"), *pod, *c, *tl, *sa, *v;
    char want[128], roles[16][128], dp[64], ep[64];
    const char *img, *def_listen, *eff_listen;
    struct grant g[64];
    size_t i;
    bool any;
    int ng, nroles, found[5] = {0};
    double grace, drain;

    memset(f, 0, sizeof(*f));
    f->port = f->svc_port = -1;
    if (d == NULL) {
        fail(r, "no Deployment running lotus-extender");
        return;
    }
    pod = jget(d, "spec|template|spec");
    c = jget(pod, "containers|0");
    tl = jget(d, "spec|template|metadata|labels");
    CHECK(r, json_array_size(json_object_get(pod, "containers")) == 1,
          "extender Deployment: one container expected");
    CHECK(r, selects(jget(d, "spec|selector|matchLabels"), tl),
          "extender Deployment: spec.selector.matchLabels does not select its template's labels");
    img = jgets(c, "image");
    snprintf(want, sizeof(want), "lotus-extender:%s", in->version);
    CHECK(r, image_is(img, want),
          "extender image '%s': expected [registry/]%s (the binary's version)", img, want);
    CHECK(r,
          strcmp(jgets(pod, "schedulerName"), "") == 0 ||
              strcmp(jgets(pod, "schedulerName"), "default-scheduler") == 0,
          "extender pods must be placed by the default scheduler, not '%s'",
          jgets(pod, "schedulerName"));

    /* Args: accepted by the binary, in-cluster, defaults for what the manifests depend on. */
    f->args = json_object_get(c, "args");
    json_array_foreach(f->args, i, v)
        CHECK(r, strncmp(ep_jstr(v), "--", 2) == 0 && strchr(ep_jstr(v), '='),
              "extender args[%zu] '%s': write flags as --name=value", i, ep_jstr(v));
    f->effective = print_config(f->args);
    if (f->effective == NULL) {
        fail(r, "lotus-extender refuses the Deployment's args (--print-config failed)");
        return;
    }
    CHECK(r, *jgets(f->effective, "cluster_file") == '\0' && *jgets(f->effective, "server") == '\0',
          "extender args: in-cluster mode expected (no --cluster-file, no --server)");
    def_listen = jgets(in->defaults, "listen");
    eff_listen = jgets(f->effective, "listen");
    snprintf(dp, sizeof(dp), "%d", listen_port(def_listen, &any));
    snprintf(ep, sizeof(ep), "%d", f->port = listen_port(eff_listen, &any));
    CHECK(r, strcmp(dp, ep) == 0, "extender listen port %s differs from the binary's default %s",
          ep, dp);
    CHECK(r, any, "extender --listen '%s' must be every address (a Service forwards to it)",
          eff_listen);
    snprintf(f->prefix, sizeof(f->prefix), "%s", jgets(f->effective, "url_prefix"));
    snprintf(want, sizeof(want), "%s", jgets(in->defaults, "url_prefix"));
    trim_slashes(f->prefix);
    trim_slashes(want);
    CHECK(r, strcmp(f->prefix, want) == 0,
          "extender --url-prefix '%s' differs from the binary's default '%s'", f->prefix, want);
    CHECK(r, *jgets(f->effective, "tls_cert") == '\0',
          "extender serves TLS: the scheduler config and probes here assume HTTP");

    /* Ports and probes. */
    CHECK(r,
          json_array_size(json_object_get(c, "ports")) == 1 &&
              json_integer_value(jget(c, "ports|0|containerPort")) == f->port,
          "extender containerPort %lld differs from the listen port %d",
          (long long)json_integer_value(jget(c, "ports|0|containerPort")), f->port);
    CHECK(r, strcmp(jgets(c, "livenessProbe|httpGet|path"), "/healthz") == 0,
          "extender livenessProbe path '%s', expected /healthz",
          jgets(c, "livenessProbe|httpGet|path"));
    CHECK(r, strcmp(jgets(c, "readinessProbe|httpGet|path"), "/readyz") == 0,
          "extender readinessProbe path '%s', expected /readyz",
          jgets(c, "readinessProbe|httpGet|path"));
    CHECK(r, resolve_port(c, jget(c, "livenessProbe|httpGet|port")) == f->port,
          "extender livenessProbe port is not the listen port %d", f->port);
    CHECK(r, resolve_port(c, jget(c, "readinessProbe|httpGet|port")) == f->port,
          "extender readinessProbe port is not the listen port %d", f->port);
    CHECK(r,
          strcmp(jgets(c, "livenessProbe|httpGet|scheme"), "HTTPS") != 0 &&
              strcmp(jgets(c, "readinessProbe|httpGet|scheme"), "HTTPS") != 0,
          "extender probes: HTTP expected");
    v = jget(d, "spec|template|metadata|annotations");
    if (json_object_get(v, "prometheus.io/scrape")) {
        CHECK(r, atoi(jgets(v, "prometheus.io/port")) == f->port,
              "prometheus.io/port '%s' is not the listen port %d", jgets(v, "prometheus.io/port"),
              f->port);
        CHECK(r, strcmp(jgets(v, "prometheus.io/path"), "/metrics") == 0,
              "prometheus.io/path '%s', expected /metrics", jgets(v, "prometheus.io/path"));
    }

    /* Security and lifecycle. */
    f->cmd = jgets(c, "command|0");
    f->uid = sc_int(pod, c, "runAsUser");
    f->gid = sc_int(pod, c, "runAsGroup");
    CHECK(r, sc_true(pod, c, "runAsNonRoot") && f->uid > 0,
          "extender: runAsNonRoot true and a non-zero runAsUser expected");
    CHECK(r, sc_true(pod, c, "readOnlyRootFilesystem"),
          "extender: readOnlyRootFilesystem expected");
    CHECK(r, json_is_false(jget(c, "securityContext|allowPrivilegeEscalation")),
          "extender: allowPrivilegeEscalation false expected");
    CHECK(r,
          json_object_get(c, "resources") && jget(c, "resources|requests|cpu") &&
              jget(c, "resources|requests|memory") && jget(c, "resources|limits|memory"),
          "extender: cpu and memory requests and a memory limit expected");
    grace = json_is_integer(json_object_get(pod, "terminationGracePeriodSeconds"))
                ? (double)json_integer_value(json_object_get(pod, "terminationGracePeriodSeconds"))
                : 30;
    drain = go_duration_ms(jgets(f->effective, "shutdown_timeout")) / 1000;
    if (strcmp(jgets(c, "lifecycle|preStop|exec|command|0"), "/bin/sleep") == 0)
        drain += atof(jgets(c, "lifecycle|preStop|exec|command|1"));
    CHECK(r, grace > drain,
          "extender terminationGracePeriodSeconds %.0f must exceed preStop + --shutdown-timeout "
          "(%.0f s)",
          grace, drain);

    /* Service and PDB. */
    for (i = 0; i < r->nobj; i++) {
        const json_t *o = r->obj[i], *sp;
        size_t k;

        if (strcmp(jgets(o, "kind"), "Service") == 0 && selects(jget(o, "spec|selector"), tl)) {
            json_array_foreach(jget(o, "spec|ports"), k, sp)
            {
                const json_t *tp = json_object_get(sp, "targetPort");

                if (resolve_port(c, tp ? tp : json_object_get(sp, "port")) == f->port) {
                    f->svc_port = (int)json_integer_value(json_object_get(sp, "port"));
                    snprintf(f->svc, sizeof(f->svc), "%s", jgets(o, "metadata|name"));
                }
            }
        }
    }
    CHECK(r, f->svc_port > 0,
          "no Service selects the extender pods with a targetPort reaching containerPort %d",
          f->port);

    /* ServiceAccount and RBAC: exactly list/watch nodes and pods, create pods/binding. */
    sa = find(r, "ServiceAccount", r->ns, jgets(pod, "serviceAccountName"));
    CHECK(r, sa != NULL, "extender serviceAccountName '%s': no such ServiceAccount in %s",
          jgets(pod, "serviceAccountName"), r->ns);
    CHECK(r, !json_is_false(json_object_get(pod, "automountServiceAccountToken")),
          "extender: in-cluster mode needs the service account token mounted");
    ng = grants_of(r, r->ns, jgets(pod, "serviceAccountName"), g, 64, roles, &nroles);
    for (int k = 0; k < ng; k++) {
        static const char *const allowed[5][2] = {{"nodes", "list"},
                                                  {"nodes", "watch"},
                                                  {"pods", "list"},
                                                  {"pods", "watch"},
                                                  {"pods/binding", "create"}};
        bool hit = false;

        for (int a = 0; a < 5; a++) {
            if (g[k].g[0] == '\0' && g[k].name[0] == '\0' && g[k].ns[0] == '\0' &&
                strcmp(g[k].res, allowed[a][0]) == 0 && strcmp(g[k].verb, allowed[a][1]) == 0) {
                hit = true;
                found[a] = 1;
            }
        }
        CHECK(r, hit, "extender RBAC grants %s '%s' on '%s'%s%s, which it does not need", g[k].verb,
              g[k].g, g[k].res, g[k].name[0] ? " named " : "", g[k].name);
    }
    for (int a = 0; a < 5; a++)
        CHECK(r, found[a],
              "extender RBAC must grant cluster-wide list+watch on nodes and pods and create on "
              "pods/binding (grant %d of 5 missing)",
              a + 1);
    for (int k = 0; k < nroles; k++)
        CHECK(r, strstr(roles[k], "system:") == NULL, "extender bound to built-in role %s",
              roles[k]);
    ok(r, "extender: Deployment, args (--print-config), ports, probes, Service, RBAC");
}

static void check_scheduler(struct run *r, const struct ext_facts *f, json_t **ksc_out)
{
    const json_t *d = find_deployment(r, "kube-scheduler"), *pod, *c, *cm, *vol = NULL, *m, *v;
    const json_t *ext, *le;
    const char *cfgpath = NULL, *sched;
    char mount[512] = "", key[256] = "", roles[16][128], host1[300], host2[320], host3[300];
    struct grant g[64];
    struct url u;
    size_t i, k;
    int ng, nroles;
    bool prof = false, lease_get = false, lease_update = false, lease_create = false;
    json_t *ksc;

    *ksc_out = NULL;
    if (d == NULL) {
        fail(r, "no Deployment running kube-scheduler");
        return;
    }
    pod = jget(d, "spec|template|spec");
    c = jget(pod, "containers|0");
    CHECK(r,
          selects(jget(d, "spec|selector|matchLabels"), jget(d, "spec|template|metadata|labels")),
          "scheduler Deployment: selector does not select its template's labels");
    v = json_object_get(c, "command");
    cfgpath = arg_value(v, "--config");
    if (cfgpath == NULL)
        cfgpath = arg_value(json_object_get(c, "args"), "--config");
    if (cfgpath == NULL) {
        fail(r, "scheduler Deployment: no --config=PATH");
        return;
    }
    /* The ConfigMap mounted at the directory of --config, and the key that file is. */
    json_array_foreach(json_object_get(c, "volumeMounts"), i, m)
    {
        size_t ml = strlen(jgets(m, "mountPath"));

        if (ml > 0 && strncmp(cfgpath, jgets(m, "mountPath"), ml) == 0 && cfgpath[ml] == '/') {
            snprintf(mount, sizeof(mount), "%s", jgets(m, "name"));
            snprintf(key, sizeof(key), "%s", cfgpath + ml + 1);
        }
    }
    json_array_foreach(json_object_get(pod, "volumes"), i,
                       m) if (mount[0] && strcmp(jgets(m, "name"), mount) == 0) vol = m;
    cm = vol ? find(r, "ConfigMap", r->ns, jgets(vol, "configMap|name")) : NULL;
    if (cm == NULL || !json_is_string(json_object_get(json_object_get(cm, "data"), key))) {
        fail(r, "scheduler --config=%s: not a key of a ConfigMap mounted there", cfgpath);
        return;
    }
    ksc = json_loads(ep_jstr(json_object_get(json_object_get(cm, "data"), key)),
                     JSON_REJECT_DUPLICATES, NULL);
    if (ksc == NULL) {
        fail(r, "ConfigMap %s key %s: the KubeSchedulerConfiguration is not JSON",
             jgets(cm, "metadata|name"), key);
        return;
    }
    *ksc_out = ksc;
    CHECK(r,
          strcmp(jgets(ksc, "apiVersion"), "kubescheduler.config.k8s.io/v1") == 0 &&
              strcmp(jgets(ksc, "kind"), "KubeSchedulerConfiguration") == 0,
          "scheduler config: apiVersion kubescheduler.config.k8s.io/v1, kind "
          "KubeSchedulerConfiguration expected");
    json_array_foreach(json_object_get(ksc, "profiles"), i, v)
    {
        sched = jgets(v, "schedulerName");
        prof |= strcmp(sched, "lotus-scheduler") == 0;
        CHECK(r, strcmp(sched, "default-scheduler") != 0 && *sched,
              "scheduler config: profile '%s' would compete with the cluster's scheduler", sched);
    }
    CHECK(r, prof, "scheduler config: no profile with schedulerName lotus-scheduler");
    CHECK(r, strcmp(jgets(pod, "schedulerName"), "lotus-scheduler") != 0,
          "the scheduler's own pods cannot wait for lotus-scheduler");

    /* Leader election: its own lease, and the RBAC for it. */
    le = json_object_get(ksc, "leaderElection");
    CHECK(r, json_is_true(json_object_get(le, "leaderElect")),
          "scheduler config: leaderElect true");
    CHECK(r, *jgets(le, "resourceName") && strcmp(jgets(le, "resourceName"), "kube-scheduler") != 0,
          "scheduler config: leaderElection.resourceName must be set and not kube-scheduler");
    CHECK(r, strcmp(jgets(le, "resourceNamespace"), r->ns) == 0,
          "scheduler config: leaderElection.resourceNamespace '%s', expected '%s'",
          jgets(le, "resourceNamespace"), r->ns);
    CHECK(r,
          !json_object_get(le, "resourceLock") || strcmp(jgets(le, "resourceLock"), "leases") == 0,
          "scheduler config: resourceLock leases expected");
    CHECK(r, find(r, "ServiceAccount", r->ns, jgets(pod, "serviceAccountName")) != NULL,
          "scheduler serviceAccountName '%s': no such ServiceAccount",
          jgets(pod, "serviceAccountName"));
    ng = grants_of(r, r->ns, jgets(pod, "serviceAccountName"), g, 64, roles, &nroles);
    for (int q = 0; q < ng; q++) {
        bool lease = strcmp(g[q].g, "coordination.k8s.io") == 0 &&
                     strcmp(g[q].res, "leases") == 0 &&
                     (g[q].ns[0] == '\0' || strcmp(g[q].ns, jgets(le, "resourceNamespace")) == 0);

        lease_create |= lease && strcmp(g[q].verb, "create") == 0;
        lease_get |= lease && strcmp(g[q].verb, "get") == 0 &&
                     strcmp(g[q].name, jgets(le, "resourceName")) == 0;
        lease_update |= lease && strcmp(g[q].verb, "update") == 0 &&
                        strcmp(g[q].name, jgets(le, "resourceName")) == 0;
    }
    CHECK(r, lease_create && lease_get && lease_update,
          "scheduler RBAC: create leases, get+update lease '%s' in %s expected",
          jgets(le, "resourceName"), jgets(le, "resourceNamespace"));
    CHECK(r, has_role(roles, nroles, "ClusterRole/system:kube-scheduler"),
          "scheduler ServiceAccount not bound to ClusterRole system:kube-scheduler");
    CHECK(r, has_role(roles, nroles, "ClusterRole/system:volume-scheduler"),
          "scheduler ServiceAccount not bound to ClusterRole system:volume-scheduler");
    CHECK(r, has_role(roles, nroles, "kube-system:Role/extension-apiserver-authentication-reader"),
          "scheduler ServiceAccount not bound to Role extension-apiserver-authentication-reader");
    CHECK(r,
          resolve_port(c, jget(c, "livenessProbe|httpGet|port")) > 0 &&
              resolve_port(c, jget(c, "readinessProbe|httpGet|port")) > 0,
          "scheduler probes: ports must be container ports");

    /* The extender registration. */
    CHECK(r, json_array_size(json_object_get(ksc, "extenders")) == 1,
          "scheduler config: exactly one extender expected");
    ext = jget(ksc, "extenders|0");
    if (!parse_url(jgets(ext, "urlPrefix"), &u)) {
        fail(r, "scheduler config: urlPrefix '%s' is not scheme://host:port/path",
             jgets(ext, "urlPrefix"));
        return;
    }
    snprintf(host1, sizeof(host1), "%s.%s.svc", f->svc, r->ns);
    snprintf(host2, sizeof(host2), "%s.%s.svc.cluster.local", f->svc, r->ns);
    snprintf(host3, sizeof(host3), "%s.%s", f->svc, r->ns);
    CHECK(r, strcmp(u.host, host1) == 0 || strcmp(u.host, host2) == 0 || strcmp(u.host, host3) == 0,
          "urlPrefix host '%s' is not the extender Service %s", u.host, host1);
    CHECK(r, u.port == f->svc_port, "urlPrefix port %d is not the extender Service port %d", u.port,
          f->svc_port);
    trim_slashes(u.path);
    CHECK(r, strcmp(u.path, f->prefix) == 0, "urlPrefix path '%s' is not --url-prefix '%s'", u.path,
          f->prefix);
    CHECK(r, strcmp(u.scheme, "http") == 0 && !json_is_true(json_object_get(ext, "enableHTTPS")),
          "urlPrefix: http and enableHTTPS false expected (the extender serves HTTP)");
    for (k = 0; k < 4; k++)
        CHECK(r, *jgets(ext, verb_keys[k]), "scheduler config: %s is not set", verb_keys[k]);
    CHECK(r, json_integer_value(json_object_get(ext, "weight")) > 0, "extender weight must be > 0");
    CHECK(r, json_is_true(json_object_get(ext, "nodeCacheCapable")),
          "nodeCacheCapable true expected");
    CHECK(r, json_is_false(json_object_get(ext, "ignorable")), "ignorable false expected");
    CHECK(r, go_duration_ms(jgets(ext, "httpTimeout")) > 0,
          "httpTimeout '%s' is not a positive Go duration", jgets(ext, "httpTimeout"));
    ok(r,
       "scheduler: ConfigMap at --config, profile, lease and RBAC, extender urlPrefix and verbs");
}

/* Deployment d (what: "extender", "scheduler") keeps running through drains and pressure: a
 * priorityClassName that is system-cluster-critical or a PriorityClass of the manifests, and
 * exactly one policy/v1 PodDisruptionBudget selecting its pods that sets one of maxUnavailable
 * (>= 1) and minAvailable (< replicas), so a drain can always evict one pod and never all. */
static void check_disruption(struct run *r, const json_t *d, const char *what)
{
    const json_t *pod = jget(d, "spec|template|spec"),
                 *tl = jget(d, "spec|template|metadata|labels");
    const char *pc = jgets(pod, "priorityClassName");
    json_int_t replicas = json_integer_value(jget(d, "spec|replicas"));
    const json_t *pdb = NULL;
    int n = 0;

    CHECK(r, strcmp(pc, "system-cluster-critical") == 0 || find(r, "PriorityClass", NULL, pc),
          "%s: priorityClassName '%s', expected system-cluster-critical or a PriorityClass of "
          "the manifests",
          what, pc);
    for (size_t i = 0; i < r->nobj; i++) {
        if (strcmp(jgets(r->obj[i], "kind"), "PodDisruptionBudget") == 0 &&
            selects(jget(r->obj[i], "spec|selector|matchLabels"), tl)) {
            pdb = r->obj[i];
            n++;
        }
    }
    CHECK(r, n == 1, "%s: %d PodDisruptionBudgets select its pods, expected 1", what, n);
    if (pdb != NULL) {
        const json_t *mu = jget(pdb, "spec|maxUnavailable"), *ma = jget(pdb, "spec|minAvailable");

        CHECK(r, strcmp(jgets(pdb, "apiVersion"), "policy/v1") == 0,
              "%s PodDisruptionBudget: apiVersion policy/v1 expected", what);
        CHECK(r, (mu == NULL) != (ma == NULL),
              "%s PodDisruptionBudget: set exactly one of maxUnavailable and minAvailable", what);
        CHECK(r, mu == NULL || (json_is_integer(mu) && json_integer_value(mu) >= 1),
              "%s PodDisruptionBudget: maxUnavailable must be an integer >= 1", what);
        CHECK(r,
              ma == NULL || (json_is_integer(ma) && json_integer_value(ma) >= 1 &&
                             json_integer_value(ma) < replicas),
              "%s PodDisruptionBudget: minAvailable must be an integer in 1..replicas-1", what);
    }
}

/* Priority classes and PDBs of both Deployments; the extender's NetworkPolicy admits ingress
 * only to its port and only from the scheduler's pods (same namespace: no namespaceSelector,
 * no ipBlock). kubelet probes come from the node, which NetworkPolicy implementations let
 * through (docs/extender.md "Deploying"), so the policy has no rule for them. */
static void check_availability(struct run *r)
{
    const json_t *ext = find_deployment(r, "lotus-extender");
    const json_t *sch = find_deployment(r, "kube-scheduler");
    const json_t *c = jget(ext, "spec|template|spec|containers|0");
    const json_t *etl = jget(ext, "spec|template|metadata|labels");
    const json_t *stl = jget(sch, "spec|template|metadata|labels");
    const json_t *np = NULL, *rule, *v;
    size_t i;
    int n = 0;

    if (ext == NULL || sch == NULL)
        return; /* already failed */
    check_disruption(r, ext, "extender");
    check_disruption(r, sch, "scheduler");
    for (i = 0; i < r->nobj; i++) {
        if (strcmp(jgets(r->obj[i], "kind"), "NetworkPolicy") == 0 &&
            selects(jget(r->obj[i], "spec|podSelector|matchLabels"), etl)) {
            np = r->obj[i];
            n++;
        }
    }
    CHECK(r, n == 1, "%d NetworkPolicies select the extender pods, expected 1", n);
    if (np == NULL)
        return;
    CHECK(r, strcmp(jgets(np, "apiVersion"), "networking.k8s.io/v1") == 0,
          "NetworkPolicy %s: apiVersion networking.k8s.io/v1 expected", jgets(np, "metadata|name"));
    n = 0;
    json_array_foreach(jget(np, "spec|policyTypes"), i, v) n += strcmp(ep_jstr(v), "Ingress") == 0;
    CHECK(r, n == 1, "NetworkPolicy: policyTypes must list Ingress");
    CHECK(r, json_array_size(jget(np, "spec|ingress")) == 1,
          "NetworkPolicy: exactly one ingress rule expected");
    rule = jget(np, "spec|ingress|0");
    CHECK(r, json_array_size(json_object_get(rule, "ports")) >= 1,
          "NetworkPolicy: the ingress rule must name the extender's port");
    json_array_foreach(json_object_get(rule, "ports"), i, v)
    {
        CHECK(r, resolve_port(c, json_object_get(v, "port")) > 0,
              "NetworkPolicy: ingress port %zu is not the extender's containerPort", i);
        CHECK(r, *jgets(v, "protocol") == '\0' || strcmp(jgets(v, "protocol"), "TCP") == 0,
              "NetworkPolicy: ingress port %zu must be TCP", i);
    }
    CHECK(r, json_array_size(json_object_get(rule, "from")) >= 1,
          "NetworkPolicy: the ingress rule must name its peers (no 'from' admits everyone)");
    json_array_foreach(json_object_get(rule, "from"), i, v)
    {
        CHECK(r, selects(jget(v, "podSelector|matchLabels"), stl),
              "NetworkPolicy: peer %zu does not select the scheduler pods", i);
        CHECK(r, !selects(jget(v, "podSelector|matchLabels"), etl),
              "NetworkPolicy: peer %zu also selects the extender pods", i);
        CHECK(r, !json_object_get(v, "namespaceSelector") && !json_object_get(v, "ipBlock"),
              "NetworkPolicy: peer %zu reaches beyond the namespace's scheduler pods", i);
    }
    ok(r, "availability: priority classes, PDBs, the extender's NetworkPolicy");
}

/* The binary with the Deployment's args serves the paths the manifests name. */
static void check_live(struct run *r, const struct ext_facts *f, const json_t *ksc)
{
    const json_t *ext = jget(ksc, "extenders|0"), *d = find_deployment(r, "lotus-extender");
    const json_t *c = jget(d, "spec|template|spec|containers|0");
    const char *paths[3] = {jgets(c, "livenessProbe|httpGet|path"),
                            jgets(c, "readinessProbe|httpGet|path"),
                            jgets(d, "spec|template|metadata|annotations|prometheus.io/path")};
    struct url u;
    char base[64], path[1024];
    pid_t pid;
    int port;
    long code;

    if (f->effective == NULL || ext == NULL || !parse_url(jgets(ext, "urlPrefix"), &u))
        return; /* already failed */
    if (start(f->args, &pid, &port) < 0) {
        fail(r, "lotus-extender did not start offline with the Deployment's args");
        return;
    }
    snprintf(base, sizeof(base), "127.0.0.1:%d", port);
    trim_slashes(u.path);
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof(path), "%s/%s", u.path, jgets(ext, verb_keys[k]));
        code = http(base, path, verb_body(verb_keys[k]));
        CHECK(r, code == 200, "POST %s (%s) answered %ld, expected 200", path, verb_keys[k], code);
    }
    snprintf(path, sizeof(path), "%s/no-such-verb", u.path);
    code = http(base, path, "{}");
    CHECK(r, code == 404, "POST %s answered %ld, expected 404", path, code);
    for (int k = 0; k < 3; k++) {
        if (*paths[k] == '\0')
            continue;
        code = http(base, paths[k], NULL);
        for (int t = 0; t < 100 && code == 503; t++) {
            usleep(20000);
            code = http(base, paths[k], NULL);
        }
        CHECK(r, code == 200, "GET %s answered %ld, expected 200", paths[k], code);
    }
    stop(pid);
    ok(r, "live: the binary with the Deployment's args serves the four verbs, probes, metrics");
}

/* What an image definition must agree with: the binary it holds and the workload running it. */
struct image_spec {
    const char *file;              /* the Dockerfile's name under manifests/ */
    const char *text;              /* its text */
    const char *binary;            /* the CMake target, the binary's name */
    const char *workload;          /* whose command and user, for messages: "the Deployment's" */
    const char *cmd;               /* the workload's command[0] */
    long uid, gid;                 /* the workload's runAsUser, runAsGroup (-1: unset) */
    int port;                      /* EXPOSE wanted (0: none) */
    const char (*need)[64];        /* Debian packages of the binary's DT_NEEDED libraries */
    int nneed;                     /* -1: unknown (the library checks are skipped) */
    const char *const *extra_ok;   /* other runtime packages allowed, NULL-terminated */
    const char *const *extra_need; /* other runtime packages required, NULL-terminated */
};

static bool in_strv(const char *const *v, const char *s)
{
    for (; v && *v; v++)
        if (strcmp(*v, s) == 0)
            return true;
    return false;
}

/* The build stage: only .ci/deps.sh packages, and for each package CMake's configure step
 * requires, that package or one that depends on it; the binary's CMake target. */
static void check_build_stage(struct run *r, const struct inputs *in, const struct image_spec *w,
                              const struct stage *build)
{
    char deps[MAXTOK][64];
    int ndeps = deps_packages(deps, MAXTOK);

    CHECK(r, strcmp(build->target, w->binary) == 0,
          "%s: the build stage builds --target '%s', expected %s", w->file, build->target,
          w->binary);
    CHECK(r, ndeps > 0, "cannot read .ci/deps.sh's package list");
    for (int i = 0; i < build->npkgs && ndeps > 0; i++)
        CHECK(r, in_list(deps, ndeps, build->pkgs[i]),
              "%s build stage installs %s, which .ci/deps.sh does not", w->file, build->pkgs[i]);
    if (in->nconf < 0 && !r->quiet)
        printf("ok - %s configure packages # SKIP pkg-config, dpkg or apt-cache unavailable\n",
               w->file);
    for (int i = 0; i < in->nconf; i++) {
        char via[512], *tok, *save = NULL;
        bool brought = false;

        snprintf(via, sizeof(via), "%s", in->conf_via[i]);
        for (tok = strtok_r(via, " ", &save); tok && !brought; tok = strtok_r(NULL, " ", &save))
            brought = in_list(build->pkgs, build->npkgs, tok);
        CHECK(r, brought,
              "%s build stage lacks %s, which CMakeLists.txt requires (install one of: %s)",
              w->file, in->conf[i], in->conf_via[i]);
    }
}

/* The runtime stage installs exactly the packages of the binary's libraries (libc6 comes with
 * the base image) and w->extra_need, plus at most w->extra_ok. */
static void check_runtime_packages(struct run *r, const struct image_spec *w,
                                   const struct stage *fin)
{
    if (w->nneed < 0) {
        if (!r->quiet)
            printf("ok - %s runtime packages # SKIP objdump, ldd or dpkg unavailable\n", w->file);
        return;
    }
    for (int i = 0; i < w->nneed; i++)
        CHECK(r, strcmp(w->need[i], "libc6") == 0 || in_list(fin->pkgs, fin->npkgs, w->need[i]),
              "%s runtime stage lacks %s (a library %s links)", w->file, w->need[i], w->binary);
    for (const char *const *p = w->extra_need; p && *p; p++)
        CHECK(r, in_list(fin->pkgs, fin->npkgs, *p), "%s runtime stage lacks %s", w->file, *p);
    for (int i = 0; i < fin->npkgs; i++)
        CHECK(r,
              in_strv(w->extra_ok, fin->pkgs[i]) || in_strv(w->extra_need, fin->pkgs[i]) ||
                  in_list(w->need, w->nneed, fin->pkgs[i]),
              "%s runtime stage installs %s, which %s does not link", w->file, fin->pkgs[i],
              w->binary);
}

/* An image definition: debian:12 stages, the build stage, the binary's path, ENTRYPOINT, EXPOSE,
 * USER and the runtime packages agree with the binary and with w's workload. */
static void check_image(struct run *r, const struct inputs *in, const struct image_spec *w)
{
    struct stage st[8];
    int n = parse_dockerfile(w->text, st, 8);
    const struct stage *fin = n > 0 ? &st[n - 1] : NULL, *build = NULL;
    long uid = -1, gid = -1;
    char what[160];

    if (n < 2) {
        fail(r, "%s: a multi-stage build expected", w->file);
        return;
    }
    for (int i = 0; i < n; i++) {
        CHECK(r, strncmp(st[i].from, "debian:12", 9) == 0,
              "%s: stage %d FROM %s, expected debian:12", w->file, i, st[i].from);
        if (strcmp(st[i].name, fin->copy_from) == 0)
            build = &st[i];
    }
    CHECK(r, build != NULL && build != fin, "%s: COPY --from=%s names no earlier stage", w->file,
          fin->copy_from);
    if (build)
        check_build_stage(r, in, w, build);
    CHECK(r, strcmp(fin->entry, w->cmd ? w->cmd : "") == 0,
          "%s ENTRYPOINT '%s' differs from %s command '%s'", w->file, fin->entry, w->workload,
          w->cmd ? w->cmd : "");
    CHECK(r, strcmp(fin->copy_dst, fin->entry) == 0,
          "%s copies the binary to '%s' but ENTRYPOINT runs '%s'", w->file, fin->copy_dst,
          fin->entry);
    CHECK(r, fin->expose == w->port, "%s EXPOSE %d, expected %d", w->file, fin->expose, w->port);
    if (sscanf(fin->user, "%ld:%ld", &uid, &gid) < 1 || uid <= 0)
        fail(r, "%s: USER must be a numeric non-root uid[:gid], got '%s'", w->file, fin->user);
    CHECK(r, uid == w->uid, "%s USER uid %ld differs from %s runAsUser %ld", w->file, uid,
          w->workload, w->uid);
    CHECK(r, gid == -1 || gid == w->gid, "%s USER gid %ld differs from %s runAsGroup %ld", w->file,
          gid, w->workload, w->gid);
    check_runtime_packages(r, w, fin);
    snprintf(what, sizeof(what),
             "%s: stages, build target %s, binary path, ENTRYPOINT, EXPOSE, USER, libraries",
             w->file, w->binary);
    ok(r, what);
}

static void check_dockerfile(struct run *r, const struct inputs *in, const struct ext_facts *f)
{
    static const char *const extra_ok[] = {"ca-certificates", NULL};
    const struct image_spec w = {.file = "Dockerfile",
                                 .text = in->dockerfile,
                                 .binary = "lotus-extender",
                                 .workload = "the Deployment's",
                                 .cmd = f->cmd,
                                 .uid = f->uid,
                                 .gid = f->gid,
                                 .port = f->port,
                                 .need = in->need,
                                 .nneed = in->nneed,
                                 .extra_ok = extra_ok};

    check_image(r, in, &w);
}

/* The sweep Jobs (manifests/sweep/) and manifests/Dockerfile.sim: every container of a Job
 * whose image is lotus-sim's runs [registry/]lotus-sim:<lotus-sim --version>, the one binary
 * path (or /bin/sh, which the Debian base image has), as one non-root uid:gid, with a read-only
 * root fs and no privilege escalation; and the image agrees with that path and uid. gnuplot-nox
 * is required in the image: tx and merge plot report.html with the gnuplot on PATH. */
static void check_sweep(struct run *r, const struct inputs *in)
{
    static const char *const extra_need[] = {"gnuplot-nox", NULL};
    static const char *const lists[] = {"initContainers", "containers"};
    struct image_spec w = {.file = "Dockerfile.sim",
                           .text = in->dockerfile_sim,
                           .binary = "lotus-sim",
                           .workload = "the sweep Jobs'",
                           .uid = -1,
                           .gid = -1,
                           .need = in->sim_need,
                           .nneed = in->nsim_need,
                           .extra_need = extra_need};
    char want[128];
    int runs = 0, seen = 0;

    snprintf(want, sizeof(want), "lotus-sim:%s", in->sim_version);
    for (size_t i = 0; i < r->nobj; i++) {
        const json_t *job = r->obj[i], *pod = jget(job, "spec|template|spec"), *c;
        const char *name = jgets(job, "metadata|name");
        size_t k;

        if (strcmp(jgets(job, "kind"), "Job") != 0)
            continue;
        for (int l = 0; l < 2; l++) {
            json_array_foreach(json_object_get(pod, lists[l]), k, c)
            {
                const char *img = jgets(c, "image"), *cmd = jgets(c, "command|0");
                const char *cn = jgets(c, "name");
                long uid = sc_int(pod, c, "runAsUser"), gid = sc_int(pod, c, "runAsGroup");

                if (strstr(img, "lotus-sim") == NULL)
                    continue;
                CHECK(r, image_is(img, want),
                      "Job %s container %s: image '%s', expected [registry/]%s (lotus-sim's "
                      "version)",
                      name, cn, img, want);
                CHECK(r, sc_true(pod, c, "runAsNonRoot") && uid > 0,
                      "Job %s container %s: runAsNonRoot true and a non-zero runAsUser expected",
                      name, cn);
                CHECK(r, sc_true(pod, c, "readOnlyRootFilesystem"),
                      "Job %s container %s: readOnlyRootFilesystem expected", name, cn);
                CHECK(r, json_is_false(jget(c, "securityContext|allowPrivilegeEscalation")),
                      "Job %s container %s: allowPrivilegeEscalation false expected", name, cn);
                if (seen++ == 0)
                    w.uid = uid, w.gid = gid;
                CHECK(r, uid == w.uid && gid == w.gid,
                      "Job %s container %s: runs as %ld:%ld, another lotus-sim container as "
                      "%ld:%ld",
                      name, cn, uid, gid, w.uid, w.gid);
                if (strcmp(cmd, "/bin/sh") == 0)
                    continue;
                if (runs++ == 0)
                    w.cmd = cmd;
                CHECK(r, strcmp(cmd, w.cmd) == 0,
                      "Job %s container %s: command '%s', another lotus-sim container runs '%s'",
                      name, cn, cmd, w.cmd);
            }
        }
    }
    if (runs == 0) {
        fail(r, "no Job runs lotus-sim (manifests/sweep/)");
        return;
    }
    ok(r, "sweep Jobs: lotus-sim image and version, command, uid:gid, restricted security");
    check_image(r, in, &w);
}

static int run_checks(const struct inputs *in, bool quiet, char *first, size_t firstlen)
{
    struct run r;
    struct ext_facts f;
    json_t *ksc = NULL;

    memset(&r, 0, sizeof(r));
    r.quiet = quiet;
    check_objects(&r, in);
    check_extender(&r, in, &f);
    check_scheduler(&r, &f, &ksc);
    check_availability(&r);
    if (ksc)
        check_live(&r, &f, ksc);
    check_dockerfile(&r, in, &f);
    check_sweep(&r, in);
    json_decref(ksc);
    json_decref(f.effective);
    if (first)
        snprintf(first, firstlen, "%s", r.first);
    return r.failures;
}

/* ------------------------------------------------------------------------------------------
 * Changes on one side, each of which the checks must notice
 */

struct mutation {
    const char *what;
    const char *file;  /* a manifests file, "Dockerfile", "Dockerfile.sim", "defaults", "version"
                        * or "sim version" */
    const char *path;  /* jset path, or for the Dockerfile the text to replace */
    const char *value; /* JSON text, or for the Dockerfile the replacement */
};

#define SHARDS "sweep/10-sweep-shards-job.json"
#define MERGE  "sweep/20-sweep-merge-job.json"

static const struct mutation mutations[] = {
    {"containerPort", "20-extender-deployment.json",
     "spec|template|spec|containers|0|ports|0|containerPort", "8889"},
    {"--listen in args", "20-extender-deployment.json", "spec|template|spec|containers|0|args|0",
     "\"--listen=:8889\""},
    {"--listen on loopback", "20-extender-deployment.json",
     "spec|template|spec|containers|0|args|0", "\"--listen=127.0.0.1:8888\""},
    {"--url-prefix in args", "20-extender-deployment.json",
     "spec|template|spec|containers|0|args|1", "\"--url-prefix=/lotos\""},
    {"an unknown flag in args", "20-extender-deployment.json",
     "spec|template|spec|containers|0|args|2", "\"--polcy=bestfit1\""},
    {"--server in args", "20-extender-deployment.json", "spec|template|spec|containers|0|args|2",
     "\"--server=https://10.0.0.1:6443\""},
    {"default listen port of the binary", "defaults", "listen", "\":9999\""},
    {"default URL prefix of the binary", "defaults", "url_prefix", "\"/lotus2\""},
    {"binary version", "version", "", "\"0.2.0\""},
    {"image tag", "20-extender-deployment.json", "spec|template|spec|containers|0|image",
     "\"lotus-extender:latest\""},
    {"liveness path", "20-extender-deployment.json",
     "spec|template|spec|containers|0|livenessProbe|httpGet|path", "\"/health\""},
    {"readiness path", "20-extender-deployment.json",
     "spec|template|spec|containers|0|readinessProbe|httpGet|path", "\"/ready\""},
    {"liveness port", "20-extender-deployment.json",
     "spec|template|spec|containers|0|livenessProbe|httpGet|port", "9999"},
    {"readiness port name", "20-extender-deployment.json",
     "spec|template|spec|containers|0|readinessProbe|httpGet|port", "\"metrics\""},
    {"container port name", "20-extender-deployment.json",
     "spec|template|spec|containers|0|ports|0|name", "\"web\""},
    {"prometheus port", "20-extender-deployment.json",
     "spec|template|metadata|annotations|prometheus.io/port", "\"9090\""},
    {"template label", "20-extender-deployment.json",
     "spec|template|metadata|labels|app.kubernetes.io/name", "\"lotus\""},
    {"serviceAccountName", "20-extender-deployment.json", "spec|template|spec|serviceAccountName",
     "\"default\""},
    {"runAsUser", "20-extender-deployment.json",
     "spec|template|spec|containers|0|securityContext|runAsUser", "1000"},
    {"runAsGroup", "20-extender-deployment.json",
     "spec|template|spec|containers|0|securityContext|runAsGroup", "1000"},
    {"readOnlyRootFilesystem", "20-extender-deployment.json",
     "spec|template|spec|containers|0|securityContext|readOnlyRootFilesystem", "false"},
    {"command", "20-extender-deployment.json", "spec|template|spec|containers|0|command|0",
     "\"/lotus-extender\""},
    {"grace period", "20-extender-deployment.json",
     "spec|template|spec|terminationGracePeriodSeconds", "30"},
    {"Deployment namespace", "20-extender-deployment.json", "metadata|namespace", "\"default\""},
    {"Service port", "21-extender-service.json", "spec|ports|0|port", "80"},
    {"Service targetPort", "21-extender-service.json", "spec|ports|0|targetPort", "\"metrics\""},
    {"Service selector", "21-extender-service.json", "spec|selector|app.kubernetes.io/name",
     "\"lotus\""},
    {"Service name", "21-extender-service.json", "metadata|name", "\"lotus\""},
    {"extender priorityClassName", "20-extender-deployment.json",
     "spec|template|spec|priorityClassName", "\"\""},
    {"scheduler priorityClassName", "32-scheduler-deployment.json",
     "spec|template|spec|priorityClassName", "\"lotus-critical\""},
    {"extender PDB selector", "22-extender-pdb.json",
     "spec|selector|matchLabels|app.kubernetes.io/name", "\"lotus\""},
    {"extender PDB that blocks every eviction", "22-extender-pdb.json", "spec|maxUnavailable", "0"},
    {"extender PDB apiVersion", "22-extender-pdb.json", "apiVersion", "\"policy/v1beta1\""},
    {"scheduler PDB selector", "33-scheduler-pdb.json",
     "spec|selector|matchLabels|app.kubernetes.io/name", "\"lotus-extender\""},
    {"scheduler PDB with minAvailable too", "33-scheduler-pdb.json", "spec|minAvailable", "1"},
    {"NetworkPolicy pods", "23-extender-networkpolicy.json",
     "spec|podSelector|matchLabels|app.kubernetes.io/name", "\"lotus-scheduler\""},
    {"NetworkPolicy policyTypes", "23-extender-networkpolicy.json", "spec|policyTypes",
     "[\"Egress\"]"},
    {"NetworkPolicy port", "23-extender-networkpolicy.json", "spec|ingress|0|ports|0|port", "9999"},
    {"NetworkPolicy peer", "23-extender-networkpolicy.json",
     "spec|ingress|0|from|0|podSelector|matchLabels|app.kubernetes.io/name", "\"lotus-extender\""},
    {"NetworkPolicy peer from every namespace", "23-extender-networkpolicy.json",
     "spec|ingress|0|from|0|namespaceSelector", "{}"},
    {"NetworkPolicy without peers", "23-extender-networkpolicy.json", "spec|ingress|0|from", "[]"},
    {"ClusterRole: get on nodes", "10-extender-rbac.json", "items|1|rules|0|verbs",
     "[\"get\", \"list\", \"watch\"]"},
    {"ClusterRole: no watch", "10-extender-rbac.json", "items|1|rules|0|verbs", "[\"list\"]"},
    {"ClusterRole: pods only", "10-extender-rbac.json", "items|1|rules|0|resources", "[\"pods\"]"},
    {"ClusterRole: update pods/binding", "10-extender-rbac.json", "items|1|rules|1|verbs",
     "[\"update\"]"},
    {"ClusterRole: secrets", "10-extender-rbac.json", "items|1|rules|1|resources",
     "[\"pods/binding\", \"secrets\"]"},
    {"ClusterRole: apps group", "10-extender-rbac.json", "items|1|rules|0|apiGroups", "[\"apps\"]"},
    {"ClusterRole: wildcard", "10-extender-rbac.json", "items|1|rules|1|verbs", "[\"*\"]"},
    {"ClusterRoleBinding subject", "10-extender-rbac.json", "items|2|subjects|0|name",
     "\"default\""},
    {"ClusterRoleBinding roleRef", "10-extender-rbac.json", "items|2|roleRef|name", "\"view\""},
    {"ServiceAccount name", "10-extender-rbac.json", "items|0|metadata|name", "\"lotus\""},
    {"urlPrefix port", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|urlPrefix",
     "\"http://lotus-extender.lotus-system.svc:80/lotus\""},
    {"urlPrefix path", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|urlPrefix",
     "\"http://lotus-extender.lotus-system.svc:8888/lotos\""},
    {"urlPrefix host", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|urlPrefix",
     "\"http://lotus.lotus-system.svc:8888/lotus\""},
    {"urlPrefix namespace", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|urlPrefix",
     "\"http://lotus-extender.kube-system.svc:8888/lotus\""},
    {"urlPrefix scheme", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|urlPrefix",
     "\"https://lotus-extender.lotus-system.svc:8888/lotus\""},
    {"filterVerb", "31-scheduler-config.json", "data|scheduler-config.json|extenders|0|filterVerb",
     "\"filters\""},
    {"prioritizeVerb", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|prioritizeVerb", "\"priorities\""},
    {"preemptVerb", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|preemptVerb", "\"preemption\""},
    {"bindVerb", "31-scheduler-config.json", "data|scheduler-config.json|extenders|0|bindVerb",
     "\"\""},
    {"nodeCacheCapable", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|nodeCacheCapable", "false"},
    {"ignorable", "31-scheduler-config.json", "data|scheduler-config.json|extenders|0|ignorable",
     "true"},
    {"weight", "31-scheduler-config.json", "data|scheduler-config.json|extenders|0|weight", "0"},
    {"httpTimeout", "31-scheduler-config.json",
     "data|scheduler-config.json|extenders|0|httpTimeout", "\"5\""},
    {"profile name", "31-scheduler-config.json",
     "data|scheduler-config.json|profiles|0|schedulerName", "\"lotus\""},
    {"config apiVersion", "31-scheduler-config.json", "data|scheduler-config.json|apiVersion",
     "\"kubescheduler.config.k8s.io/v1beta3\""},
    {"lease name", "31-scheduler-config.json",
     "data|scheduler-config.json|leaderElection|resourceName", "\"kube-scheduler\""},
    {"lease namespace", "31-scheduler-config.json",
     "data|scheduler-config.json|leaderElection|resourceNamespace", "\"kube-system\""},
    {"ConfigMap name", "31-scheduler-config.json", "metadata|name", "\"lotus-config\""},
    {"lease Role resourceNames", "30-scheduler-rbac.json", "items|4|rules|1|resourceNames",
     "[\"kube-scheduler\"]"},
    {"system:kube-scheduler binding", "30-scheduler-rbac.json", "items|1|roleRef|name",
     "\"system:scheduler\""},
    {"system:volume-scheduler binding subject", "30-scheduler-rbac.json",
     "items|2|subjects|0|namespace", "\"kube-system\""},
    {"auth reader binding", "30-scheduler-rbac.json", "items|3|roleRef|name", "\"view\""},
    {"--config path", "32-scheduler-deployment.json", "spec|template|spec|containers|0|command|1",
     "\"--config=/etc/lotus-scheduler/config.yaml\""},
    {"config mountPath", "32-scheduler-deployment.json",
     "spec|template|spec|containers|0|volumeMounts|0|mountPath", "\"/etc/kubernetes\""},
    {"config volume", "32-scheduler-deployment.json", "spec|template|spec|volumes|0|configMap|name",
     "\"lotus-scheduler\""},
    {"scheduler serviceAccountName", "32-scheduler-deployment.json",
     "spec|template|spec|serviceAccountName", "\"default\""},
    {"Dockerfile USER", "Dockerfile", "USER 65532:65532", "USER 65533:65532"},
    {"Dockerfile USER group", "Dockerfile", "USER 65532:65532", "USER 65532:0"},
    {"Dockerfile USER root", "Dockerfile", "USER 65532:65532", "USER root"},
    {"Dockerfile ENTRYPOINT", "Dockerfile", "ENTRYPOINT [\"/usr/local/bin/lotus-extender\"]",
     "ENTRYPOINT [\"/usr/bin/lotus-extender\"]"},
    {"Dockerfile COPY destination", "Dockerfile", "/lotus-extender /usr/local/bin/lotus-extender",
     "/lotus-extender /usr/bin/lotus-extender"},
    {"Dockerfile EXPOSE", "Dockerfile", "EXPOSE 8888", "EXPOSE 8080"},
    {"Dockerfile base image", "Dockerfile", "FROM debian:12-slim", "FROM debian:11-slim"},
    {"Dockerfile runtime lacks libjansson4", "Dockerfile", "libjansson4 ", ""},
    {"Dockerfile runtime adds libglpk40", "Dockerfile", "libjansson4 ", "libjansson4 libglpk40 "},
    {"Dockerfile build target", "Dockerfile", "--target lotus-extender", "--target lotus-sim"},
    {"Dockerfile build package not in deps.sh", "Dockerfile", "libcmocka-dev",
     "libcmocka-dev libyaml-dev"},
    {"lotus-sim version", "sim version", "", "\"0.2.0\""},
    {"shard image tag", SHARDS, "spec|template|spec|containers|0|image", "\"lotus-sim:latest\""},
    {"merge wait image", MERGE, "spec|template|spec|initContainers|0|image", "\"lotus-sim:0.0.9\""},
    {"shard command", SHARDS, "spec|template|spec|containers|0|command|0",
     "\"/usr/bin/lotus-sim\""},
    {"merge command", MERGE, "spec|template|spec|containers|0|command|0", "\"/lotus-sim\""},
    {"shard runAsUser", SHARDS, "spec|template|spec|containers|0|securityContext|runAsUser",
     "1000"},
    {"merge runAsGroup", MERGE, "spec|template|spec|containers|0|securityContext|runAsGroup", "0"},
    {"merge wait runAsUser", MERGE, "spec|template|spec|initContainers|0|securityContext|runAsUser",
     "65533"},
    {"shard readOnlyRootFilesystem", SHARDS,
     "spec|template|spec|containers|0|securityContext|readOnlyRootFilesystem", "false"},
    {"Dockerfile.sim USER", "Dockerfile.sim", "USER 65532:65532", "USER 1000:1000"},
    {"Dockerfile.sim USER group", "Dockerfile.sim", "USER 65532:65532", "USER 65532:65533"},
    {"Dockerfile.sim USER root", "Dockerfile.sim", "USER 65532:65532", "USER 0"},
    {"Dockerfile.sim ENTRYPOINT", "Dockerfile.sim", "ENTRYPOINT [\"/usr/local/bin/lotus-sim\"]",
     "ENTRYPOINT [\"/bin/sh\"]"},
    {"Dockerfile.sim COPY destination", "Dockerfile.sim", "/lotus-sim /usr/local/bin/lotus-sim",
     "/lotus-sim /usr/bin/lotus-sim"},
    {"Dockerfile.sim EXPOSE", "Dockerfile.sim", "USER 65532:65532", "USER 65532:65532\nEXPOSE 80"},
    {"Dockerfile.sim build base image", "Dockerfile.sim", "FROM debian:12 AS",
     "FROM ubuntu:24.04 AS"},
    {"Dockerfile.sim runtime base image", "Dockerfile.sim", "FROM debian:12-slim",
     "FROM debian:13-slim"},
    {"Dockerfile.sim COPY --from", "Dockerfile.sim", "COPY --from=build", "COPY --from=builder"},
    {"Dockerfile.sim build target", "Dockerfile.sim", "--target lotus-sim",
     "--target lotus-extender"},
    {"Dockerfile.sim build package not in deps.sh", "Dockerfile.sim", "libcmocka-dev",
     "libcmocka-dev liblz4-dev"},
    {"Dockerfile.sim build stage lacks libisal-dev", "Dockerfile.sim", "zlib1g-dev libisal-dev",
     "zlib1g-dev"},
    {"Dockerfile build stage lacks libmicrohttpd-dev", "Dockerfile", "libmicrohttpd-dev zlib1g-dev",
     "zlib1g-dev"},
    {"Dockerfile build stage lacks libglpk-dev", "Dockerfile", "libglpk-dev ", ""},
    {"Dockerfile build stage lacks libisal-dev", "Dockerfile", "zlib1g-dev libisal-dev",
     "zlib1g-dev"},
    {"Dockerfile.sim runtime lacks libisal2", "Dockerfile.sim", "libisal2 ", ""},
    {"Dockerfile.sim runtime lacks libglpk40", "Dockerfile.sim", "libglpk40 ", ""},
    {"Dockerfile.sim runtime lacks gnuplot-nox", "Dockerfile.sim", "libjansson4 gnuplot-nox",
     "libjansson4"},
    {"Dockerfile.sim runtime adds libcurl4", "Dockerfile.sim", "libjansson4 ",
     "libjansson4 libcurl4 "},
    {"Dockerfile.sim runtime adds gnuplot-qt", "Dockerfile.sim", "libjansson4 gnuplot-nox",
     "libjansson4 gnuplot-nox gnuplot-qt"},
};

static char *replace(const char *text, const char *old, const char *new)
{
    const char *at = strstr(text, old);
    size_t n = strlen(text) - strlen(old) + strlen(new) + 1;
    char *out;

    if (at == NULL)
        return NULL;
    out = malloc(n);
    if (out == NULL)
        die("out of memory");
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, new, at + strlen(old));
    return out;
}

/* Applies m to a copy of in; false if the mutation does not apply (the test is stale). */
static bool mutate(const struct inputs *in, struct inputs *out, const struct mutation *m)
{
    json_t *nv = json_loads(m->value, JSON_DECODE_ANY, NULL);
    bool done = false;

    *out = *in;
    out->defaults = json_deep_copy(in->defaults);
    out->dockerfile = strdup(in->dockerfile);
    out->dockerfile_sim = strdup(in->dockerfile_sim);
    if (out->dockerfile == NULL || out->dockerfile_sim == NULL)
        die("out of memory");
    for (size_t i = 0; i < in->ndocs; i++)
        out->doc[i] = json_deep_copy(in->doc[i]);
    if (strcmp(m->file, "Dockerfile") == 0 || strcmp(m->file, "Dockerfile.sim") == 0) {
        char **text = strcmp(m->file, "Dockerfile") == 0 ? &out->dockerfile : &out->dockerfile_sim;
        char *t = replace(*text, m->path, m->value);

        done = t != NULL;
        if (t) {
            free(*text);
            *text = t;
        }
        json_decref(nv);
    } else if (strcmp(m->file, "defaults") == 0) {
        done = nv != NULL && jset(out->defaults, m->path, nv);
    } else if (strcmp(m->file, "version") == 0 || strcmp(m->file, "sim version") == 0) {
        char key[32];

        *(strcmp(m->file, "version") == 0 ? &out->version : &out->sim_version) =
            (char *)(uintptr_t)ep_jstr(nv);
        snprintf(key, sizeof(key), "__%s", m->file); /* keep nv alive through the run */
        done = json_object_set_new(out->defaults, key, nv) == 0;
    } else {
        for (size_t i = 0; i < in->ndocs; i++)
            if (strcmp(in->file[i], m->file) == 0 && nv != NULL) {
                done = jset(out->doc[i], m->path, nv);
                nv = NULL;
            }
        json_decref(nv);
    }
    return done;
}

static void free_copy(struct inputs *c)
{
    json_decref(c->defaults);
    free(c->dockerfile);
    free(c->dockerfile_sim);
    for (size_t i = 0; i < c->ndocs; i++)
        json_decref(c->doc[i]);
}

/* ------------------------------------------------------------------------------------------
 * Loading
 */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    long n;
    char *buf;

    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
        die("cannot read %s", path);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);

    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the manifest files of manifests/SUB (SUB "" or "sweep/") to in->file, as SUB<name>. */
static void list_manifests(struct inputs *in, const char *sub)
{
    char dir[1024], name[512];
    struct dirent *e;
    DIR *dp;

    snprintf(dir, sizeof(dir), "%s/manifests/%s", srcdir, sub);
    dp = opendir(dir);
    if (dp == NULL)
        die("cannot open %s: %s", dir, strerror(errno));
    while ((e = readdir(dp)) != NULL) {
        if ((ends_with(e->d_name, ".json") || ends_with(e->d_name, ".yaml") ||
             ends_with(e->d_name, ".yml")) &&
            in->ndocs < MAXDOCS) {
            snprintf(name, sizeof(name), "%s%s", sub, e->d_name);
            in->file[in->ndocs] = strdup(name);
            if (in->file[in->ndocs++] == NULL)
                die("out of memory");
        }
    }
    closedir(dp);
}

/* The version word of BINARY --version ("lotus-sim 0.1.0"), malloc'd. */
static char *binary_version(const char *binary)
{
    const char *argv[3] = {binary, "--version", NULL};
    char *out = NULL, *v;

    if (run_capture(argv, &out) != 0 || strchr(out, ' ') == NULL)
        die("%s --version failed", binary);
    v = strdup(strchr(out, ' ') + 1);
    if (v == NULL)
        die("out of memory");
    v[strcspn(v, " \n")] = '\0';
    free(out);
    return v;
}

static void load(struct inputs *in)
{
    char dir[1024], path[1400];
    json_t *empty = json_array();

    memset(in, 0, sizeof(*in));
    snprintf(dir, sizeof(dir), "%s/manifests", srcdir);
    list_manifests(in, "");
    list_manifests(in, "sweep/");
    qsort(in->file, in->ndocs, sizeof(in->file[0]), by_name);
    for (size_t i = 0; i < in->ndocs; i++) {
        json_error_t je;

        snprintf(path, sizeof(path), "%s/%s", dir, in->file[i]);
        in->doc[i] = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(in->doc[i]))
            die("%s:%d:%d: not a JSON object (manifests are JSON text): %s", path, je.line,
                je.column, je.text);
    }
    if (in->ndocs == 0)
        die("no manifests in %s", dir);
    printf("ok - %zu manifest files parse as JSON objects\n", in->ndocs);
    snprintf(path, sizeof(path), "%s/Dockerfile", dir);
    in->dockerfile = slurp(path);
    if (in->dockerfile == NULL)
        die("cannot read %s", path);
    snprintf(path, sizeof(path), "%s/Dockerfile.sim", dir);
    in->dockerfile_sim = slurp(path);
    if (in->dockerfile_sim == NULL)
        die("cannot read %s", path);
    in->defaults = print_config(empty);
    json_decref(empty);
    if (in->defaults == NULL)
        die("%s --print-config failed", bin);
    in->version = binary_version(bin);
    in->sim_version = binary_version(sim_bin);
    in->nneed = needed_packages(bin, in->need, MAXTOK);
    in->nsim_need = needed_packages(sim_bin, in->sim_need, MAXTOK);
    in->nconf = configure_packages(in->conf, in->conf_via, MAXTOK);
}

int main(int argc, char **argv)
{
    struct inputs in;
    int failures, missed = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER LOTUS_SIM SOURCE_DIR\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    sim_bin = argv[2];
    srcdir = argv[3];
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_manifests.XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        die("mkdtemp: %s", strerror(errno));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    load(&in);
    failures = run_checks(&in, false, NULL, 0);
    if (failures == 0) {
        for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
            struct inputs c;
            char first[512];
            int n;

            if (!mutate(&in, &c, &mutations[i])) {
                printf("not ok - change '%s' does not apply to %s (update the test)\n",
                       mutations[i].what, mutations[i].file);
                missed++;
                free_copy(&c);
                continue;
            }
            n = run_checks(&c, true, first, sizeof(first));
            if (n == 0) {
                printf("not ok - changing %s alone went unnoticed\n", mutations[i].what);
                missed++;
            } else {
                printf("ok - changing %s alone is caught: %s\n", mutations[i].what, first);
            }
            free_copy(&c);
        }
    }
    snprintf(tmpdir + strlen(tmpdir), sizeof(tmpdir) - strlen(tmpdir), "/extender.log");
    unlink(tmpdir);
    *strrchr(tmpdir, '/') = '\0';
    rmdir(tmpdir);
    curl_global_cleanup();
    for (size_t i = 0; i < in.ndocs; i++) {
        json_decref(in.doc[i]);
        free(in.file[i]);
    }
    json_decref(in.defaults);
    free(in.dockerfile);
    free(in.dockerfile_sim);
    free(in.version);
    free(in.sim_version);
    return failures == 0 && missed == 0 ? 0 : 1;
}
