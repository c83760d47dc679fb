/* test_extender_tls.c -- lotus-extender's signals and TLS end to end on loopback: SIGHUP
 * (logged and ignored without TLS; with TLS, the certificate and key files read again), the
 * TLS protocols and suites served (1.2 and 1.3, ECDHE, AEAD) and the clientAuth extended key
 * usage required of client certificates.
 *
 * usage: test_extender_tls LOTUS_EXTENDER FIXTURES_DIR   (FIXTURES_DIR = tests/fixtures/extender)
 *
 * The binary runs offline on cluster/small.json, on 127.0.0.1 port 0. The TLS fixtures are
 * tls/ (CA "lotus test CA", an EC server certificate, a client certificate) and tls/extra/
 * (made by tls/extra/make-certs.sh: a second CA, an RSA server certificate, client
 * certificates with and without the clientAuth extended key usage). The reload check copies
 * a certificate and key into a scratch directory, replaces them there and sends SIGHUP; a
 * client that trusts only the new CA then gets through. libcurl is the client.
 *
 * Output: one "ok - <name>" line per check; the first failure prints what differed, the
 * server log, and exits 1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* usleep, kill, mkdtemp */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "ext_proc.h"

static const char *bin, *fix;
static char cluster[1024], logpath[200], dir[200];

/* Starts the extender offline on the test cluster with the flags in extra (NULL-terminated). */
static void srv_start(struct ep_srv *s, const char *name, const char *const *extra)
{
    const char *argv[] = {bin, "--listen", "127.0.0.1:0", "--cluster-file", cluster, NULL};
    char log[256];

    snprintf(log, sizeof(log), "%s.%s", logpath, name);
    ep_srv_start(s, name, log, argv, extra, 1000);
}

/* The number of log lines of s that contain needle. */
static int log_count(const struct ep_srv *s, const char *needle)
{
    char line[8192];
    int n = 0;
    FILE *f = fopen(s->log, "r");

    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* Waits up to 5 s for the n-th log line of s that contains needle; dies at once if the server
 * exits meanwhile. */
static void wait_log(const struct ep_srv *s, const char *needle, int n, const char *what)
{
    for (int i = 0; i < 500 && log_count(s, needle) < n; i++) {
        int st = ep_wait_exit(s->pid, 10);

        if (st != -1)
            ep_die("%s: the server exited (wait status %d%s)", what, st,
                   WIFSIGNALED(st) ? ", killed by a signal" : "");
    }
    if (log_count(s, needle) < n)
        ep_die("%s: no log line '%s' within 5 s", what, needle);
}

/* How a test request reaches the server. ca, cert and key are paths under FIXTURES_DIR/tls or
 * absolute; cert NULL: no client certificate. version: CURLOPT_SSLVERSION (0: libcurl's
 * default); ciphers: the OpenSSL cipher list for TLS 1.2 and older (NULL: the default), with
 * "@SECLEVEL=0" where the client must offer what OpenSSL 3 no longer offers by default. */
struct tls {
    const char *ca, *cert, *key;
    long version;
    const char *ciphers;
};

static void fixture(char *out, size_t cap, const char *name)
{
    if (name[0] == '/')
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "%s/tls/%s", fix, name);
}

/* One request over HTTPS (POST when body is not NULL); the HTTP status, 0 if the handshake or
 * the connection failed. */
static long https(const struct ep_srv *s, const char *path, const char *body, const struct tls *t)
{
    char url[256], ca[1024], cert[1024], key[1024];
    struct ep_body b = {NULL, 0};
    CURL *c = curl_easy_init();
    long status = 0;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", s->port, path);
    ep_curl_setup(c, url, &b, 10000);
    fixture(ca, sizeof(ca), t->ca);
    curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
    if (t->cert) {
        fixture(cert, sizeof(cert), t->cert);
        fixture(key, sizeof(key), t->key);
        curl_easy_setopt(c, CURLOPT_SSLCERT, cert);
        curl_easy_setopt(c, CURLOPT_SSLKEY, key);
    }
    if (t->version)
        curl_easy_setopt(c, CURLOPT_SSLVERSION, t->version);
    if (t->ciphers)
        curl_easy_setopt(c, CURLOPT_SSL_CIPHER_LIST, t->ciphers);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    free(b.p);
    return status;
}

/* Copies the fixture from to the path to (written beside it, then renamed over it, as a
 * certificate manager replaces its files). */
static void copy_file(const char *from, const char *to)
{
    char src[1024], tmp[1100], buf[8192];
    FILE *in, *out;
    size_t n;

    fixture(src, sizeof(src), from);
    snprintf(tmp, sizeof(tmp), "%s.new", to);
    in = fopen(src, "rb");
    out = fopen(tmp, "wb");
    if (in == NULL || out == NULL)
        ep_die("cannot copy %s to %s: %s", src, tmp, strerror(errno));
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        fwrite(buf, 1, n, out);
    fclose(in);
    if (fclose(out) != 0 || rename(tmp, to) != 0)
        ep_die("cannot write %s: %s", to, strerror(errno));
}

/* ------------------------------------------------------------------------------------------
 * Checks
 */

#define POD                                                                                        \
    "{\"metadata\":{\"name\":\"q\",\"namespace\":\"default\",\"uid\":\"q\"},\"spec\":{"            \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}"
#define FILTER "{\"Pod\":" POD ",\"NodeNames\":[\"node-a\"]}"

/* Without TLS, SIGHUP is logged and changes nothing: the server keeps serving. */
static void check_sighup_plain(void)
{
    struct ep_body b = {NULL, 0};
    struct ep_srv s;

    srv_start(&s, "hup", NULL);
    kill(s.pid, SIGHUP);
    wait_log(&s, "\"msg\":\"SIGHUP\"", 1, "sighup");
    if (ep_wait_exit(s.pid, 100) != -1)
        ep_die("sighup: the server exited on SIGHUP");
    if (ep_http(s.port, "/healthz", NULL, &b, 5000) != 200)
        ep_die("sighup: /healthz not 200 after SIGHUP");
    free(b.p);
    ep_ok("SIGHUP without TLS: logged, and the server keeps serving");
    ep_srv_stop(&s, 15000);
}

/* With TLS, SIGHUP reads --tls-cert and --tls-key again: after the files are replaced by a
 * certificate of another CA, a client that trusts only that CA gets through and one that
 * trusts only the old CA does not. A file that does not load is logged and the certificate in
 * use is kept. */
static void check_sighup_reload(void)
{
    char cert[256], key[256];
    const char *args[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    const struct tls old_ca = {"ca.pem", NULL, NULL, 0, NULL},
                     new_ca = {"extra/ca.pem", NULL, NULL, 0, NULL};
    struct ep_srv s;

    snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
    snprintf(key, sizeof(key), "%s/key.pem", dir);
    copy_file("server.pem", cert);
    copy_file("server-key.pem", key);
    srv_start(&s, "reload", args);
    if (https(&s, "/healthz", NULL, &old_ca) != 200)
        ep_die("reload: /healthz over TLS with the first certificate failed");
    copy_file("extra/server.pem", cert);
    copy_file("extra/server-key.pem", key);
    kill(s.pid, SIGHUP);
    wait_log(&s, "\"msg\":\"SIGHUP: TLS certificate reloaded\"", 1, "reload");
    if (https(&s, "/healthz", NULL, &new_ca) != 200)
        ep_die("reload: a client trusting the new CA did not get through after SIGHUP");
    if (https(&s, "/healthz", NULL, &old_ca) != 0)
        ep_die("reload: the old certificate is still served after SIGHUP");
    if (https(&s, "/lotus/filter", FILTER, &new_ca) != 200)
        ep_die("reload: filter over TLS after the reload failed");
    ep_ok("SIGHUP with TLS: the new certificate and key are served");

    copy_file("extra/client-key.pem", key); /* not the certificate's key */
    kill(s.pid, SIGHUP);
    wait_log(&s, "\"msg\":\"SIGHUP: cannot reload the TLS certificate, keeping the one in use\"", 1,
             "reload");
    if (https(&s, "/healthz", NULL, &new_ca) != 200)
        ep_die("reload: a failed reload did not keep the certificate in use");
    ep_ok("SIGHUP with a key that does not match: logged, the certificate in use is kept");
    ep_srv_stop(&s, 15000);
}

/* A request of a TLS check and the status it must get (0: the handshake must fail). */
struct tls_case {
    const char *what;
    struct tls t;
    long status;
};

/* Sends each case's request to path on s (a POST of body unless NULL) and requires its
 * status. */
static void run_cases(const struct ep_srv *s, const char *path, const char *body,
                      const struct tls_case *cases, size_t n, const char *title)
{
    for (size_t i = 0; i < n; i++) {
        long st = https(s, path, body, &cases[i].t);

        if (st != cases[i].status)
            ep_die("%s: %s: status %ld, expected %ld (0: no handshake)", title, cases[i].what, st,
                   cases[i].status);
        ep_ok("%s: %s", title, cases[i].what);
    }
}

/* A client that trusts tls/extra's CA and offers TLS version v (CURL_SSLVERSION_TLSv1_x) alone,
 * with the OpenSSL cipher list c. */
#define ONLY(v, c)                                                                                 \
    {                                                                                              \
        "extra/ca.pem", NULL, NULL, CURL_SSLVERSION_##v | CURL_SSLVERSION_MAX_##v, c               \
    }

/* TLS 1.2 and 1.3 with ECDHE key exchange and AEAD ciphers only. The server has an RSA
 * certificate (tls/extra), so that a client could otherwise agree on static-RSA key exchange;
 * the client (OpenSSL 3) offers the old protocols and suites at security level 0. */
static void check_tls_protocols(void)
{
    char cert[1024], key[1024];
    const char *args[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    static const struct tls_case cases[] = {
        {"TLS 1.3", {"extra/ca.pem", NULL, NULL, CURL_SSLVERSION_TLSv1_3, NULL}, 200},
        {"TLS 1.2 with ECDHE-RSA-AES128-GCM-SHA256", ONLY(TLSv1_2, "ECDHE-RSA-AES128-GCM-SHA256"),
         200},
        {"TLS 1.2 with ECDHE-RSA-CHACHA20-POLY1305", ONLY(TLSv1_2, "ECDHE-RSA-CHACHA20-POLY1305"),
         200},
        {"TLS 1.1 refused", ONLY(TLSv1_1, "DEFAULT:@SECLEVEL=0"), 0},
        {"TLS 1.0 refused", ONLY(TLSv1_0, "DEFAULT:@SECLEVEL=0"), 0},
        {"static RSA key exchange (AES128-GCM-SHA256) refused",
         ONLY(TLSv1_2, "AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA256:AES128-SHA:@SECLEVEL=0"),
         0},
        {"finite-field DHE (DHE-RSA-AES128-GCM-SHA256) refused",
         ONLY(TLSv1_2, "DHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0"), 0},
        {"CBC with SHA-1 (ECDHE-RSA-AES128-SHA) refused",
         ONLY(TLSv1_2, "ECDHE-RSA-AES128-SHA:@SECLEVEL=0"), 0},
    };
    struct ep_srv s;

    fixture(cert, sizeof(cert), "extra/server.pem");
    fixture(key, sizeof(key), "extra/server-key.pem");
    srv_start(&s, "protocols", args);
    run_cases(&s, "/healthz", NULL, cases, sizeof(cases) / sizeof(cases[0]), "TLS");
    ep_srv_stop(&s, 15000);
}

/* With --tls-client-ca, the verbs need a client certificate that carries the clientAuth
 * extended key usage: one for servers only, or one without the extension, is refused (403)
 * although the CA signed it. */
static void check_client_eku(void)
{
    char cert[1024], key[1024], ca[1024];
    const char *args[] = {"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca, NULL};
    static const struct tls_case cases[] = {
        {"a client certificate with clientAuth",
         {"extra/ca.pem", "extra/client.pem", "extra/client-key.pem", 0, NULL},
         200},
        {"a client certificate for serverAuth only: 403",
         {"extra/ca.pem", "extra/client-serverauth.pem", "extra/client-serverauth-key.pem", 0,
          NULL},
         403},
        {"a client certificate without extendedKeyUsage: 403",
         {"extra/ca.pem", "extra/client-noeku.pem", "extra/client-noeku-key.pem", 0, NULL},
         403},
        {"no client certificate: 403", {"extra/ca.pem", NULL, NULL, 0, NULL}, 403},
    };
    struct ep_srv s;

    fixture(cert, sizeof(cert), "extra/server.pem");
    fixture(key, sizeof(key), "extra/server-key.pem");
    fixture(ca, sizeof(ca), "extra/ca.pem");
    srv_start(&s, "eku", args);
    run_cases(&s, "/lotus/filter", FILTER, cases, sizeof(cases) / sizeof(cases[0]), "client EKU");
    ep_srv_stop(&s, 15000);
}

int main(int argc, char **argv)
{
    const char *base = getenv("TMPDIR");

    if (argc != 3) {
        fprintf(stderr, "usage: %s LOTUS_EXTENDER FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    bin = argv[1];
    fix = argv[2];
    ep_at_die(ep_srv_cleanup);
    snprintf(cluster, sizeof(cluster), "%s/cluster/small.json", fix);
    snprintf(logpath, sizeof(logpath), "/tmp/test_extender_tls.%d.log", (int)getpid());
    snprintf(dir, sizeof(dir), "%s/test_extender_tls_XXXXXX",
             base != NULL && strlen(base) < 100 ? base : "/tmp");
    if (mkdtemp(dir) == NULL)
        ep_die("mkdtemp %s: %s", dir, strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    check_sighup_plain();
    check_sighup_reload();
    check_tls_protocols();
    check_client_eku();
    curl_global_cleanup();
    for (const char *const *f = (const char *const[]){"cert.pem", "key.pem", NULL}; *f; f++) {
        char p[300];

        snprintf(p, sizeof(p), "%s/%s", dir, *f);
        unlink(p);
    }
    rmdir(dir);
    printf("test_extender_tls: all checks passed\n");
    return 0;
}
