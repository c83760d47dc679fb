/* outfile.c -- lotus-sim's output layer: whole files, staged directories, signals (outfile.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _XOPEN_SOURCE 700 /* nftw, sigaction */
#include "cli/outfile.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_mem.h"

#define MAX_TRACKED 32
#define MAX_KEPT    64
#define PATH_CAP    4096

/* The registry the signal handler reads: fixed storage, written outside the handler only. */
static char tracked[MAX_TRACKED][PATH_CAP];
static char kept[MAX_KEPT][PATH_CAP];
static volatile sig_atomic_t n_kept_total;
static volatile sig_atomic_t got_signal;
static enum sim_sig_mode sig_mode;

void sim_out_track(const char *path)
{
    for (size_t k = 0; k < MAX_TRACKED; k++) {
        if (tracked[k][0] == '\0' && strlen(path) < PATH_CAP) {
            memcpy(tracked[k], path, strlen(path) + 1);
            return;
        }
    }
}

void sim_out_forget(const char *path)
{
    for (size_t k = 0; k < MAX_TRACKED; k++)
        if (strcmp(tracked[k], path) == 0)
            tracked[k][0] = '\0';
}

void sim_out_kept(const char *path)
{
    sig_atomic_t n = n_kept_total;

    if (n < MAX_KEPT && strlen(path) < PATH_CAP)
        memcpy(kept[n], path, strlen(path) + 1);
    n_kept_total = n + 1;
}

/* ---- the signal handler (async-signal-safe calls only) ---------------------------------- */

static void say(const char *s)
{
    ssize_t w = write(STDERR_FILENO, s, strlen(s));
    (void)w;
}

static void say_count(long v)
{
    char buf[24];
    size_t n = sizeof(buf);

    buf[--n] = '\0';
    do
        buf[--n] = (char)('0' + v % 10);
    while ((v /= 10) > 0 && n > 0);
    say(buf + n);
}

static void on_signal(int sig)
{
    int n_removed = 0;

    if (sig_mode == SIM_SIG_FLAG) {
        got_signal = sig;
        return;
    }
    for (size_t k = 0; k < MAX_TRACKED; k++) {
        if (tracked[k][0] != '\0' && (unlink(tracked[k]) == 0 || rmdir(tracked[k]) == 0))
            n_removed++;
    }
    if (sig_mode == SIM_SIG_CLEANUP) {
        say(sig == SIGINT ? "\nlotus-sim: interrupted (SIGINT)"
                          : "\nlotus-sim: terminated (SIGTERM)");
        say(": removed ");
        say_count(n_removed);
        say(" unfinished output file(s); kept ");
        say_count(n_kept_total);
        say(" complete one(s)");
        for (sig_atomic_t k = 0; k < n_kept_total && k < MAX_KEPT; k++) {
            say(k ? ", " : ": ");
            say(kept[k]);
        }
        say("\n");
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void sim_out_signals(enum sim_sig_mode mode)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sig_mode = mode;
    got_signal = 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int sim_out_interrupted(void)
{
    return got_signal;
}

/* ---- files ------------------------------------------------------------------------------ */

FILE *sim_tmp_open(const char *final, char **tmp_out, struct lt_err *err)
{
    size_t n = strlen(final) + 5;
    char *tmp = lt_malloc(n);
    FILE *f;

    if (tmp == NULL) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory naming '%s'", final);
        return NULL;
    }
    snprintf(tmp, n, "%s.tmp", final);
    sim_out_track(tmp);
    if ((f = fopen(tmp, "w")) == NULL) {
        lt_err_set(err, LT_EIO, 0, 0, "cannot create '%s': %s", tmp, strerror(errno));
        sim_out_forget(tmp);
        lt_free(tmp);
        return NULL;
    }
    *tmp_out = tmp;
    return f;
}

int sim_tmp_commit(FILE *f, char *tmp, const char *final, int rc, struct lt_err *err)
{
    if ((fflush(f) != 0 || ferror(f)) && rc == 0)
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s': %s", tmp, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s': %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, final) != 0)
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot rename '%s' to '%s': %s", tmp, final,
                        strerror(errno));
    if (rc < 0)
        remove(tmp);
    else
        sim_out_kept(final);
    sim_out_forget(tmp);
    lt_free(tmp);
    return rc;
}

int sim_make_dirs(const char *path, struct lt_err *err)
{
    char buf[PATH_CAP];
    size_t n = strlen(path);
    struct stat st;

    if (n == 0 || n >= sizeof(buf))
        return lt_err_set(err, LT_EINVAL, 0, 0, "bad output directory '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t k = 1; k <= n; k++) {
        char c = buf[k];
        if (c != '/' && c != '\0')
            continue;
        buf[k] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return lt_err_set(err, LT_EIO, 0, 0, "cannot create directory '%s': %s", buf,
                              strerror(errno));
        buf[k] = c;
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return lt_err_set(err, LT_EIO, 0, 0, "'%s' is not a directory", path);
    return 0;
}

/* ---- directories ------------------------------------------------------------------------ */

bool sim_path_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

int sim_remove_tree(const char *path, struct lt_err *err)
{
    if (!sim_path_exists(path))
        return 0;
    if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot remove '%s': %s", path, strerror(errno));
    return 0;
}

int sim_stage_open(const char *dir, char *stage, size_t cap, struct lt_err *err)
{
    int rc;

    if ((size_t)snprintf(stage, cap, "%s.tmp", dir) >= cap)
        return lt_err_set(err, LT_EINVAL, 0, 0, "output directory '%s' is too long", dir);
    if ((rc = sim_remove_tree(stage, err)) < 0)
        return rc;
    return sim_make_dirs(stage, err);
}

int sim_stage_commit(const char *stage, const char *dir, struct lt_err *err)
{
    char old[PATH_CAP];
    bool had = sim_path_exists(dir);
    int rc;

    if ((size_t)snprintf(old, sizeof(old), "%s.old", dir) >= sizeof(old))
        return lt_err_set(err, LT_EINVAL, 0, 0, "output directory '%s' is too long", dir);
    if (had && ((rc = sim_remove_tree(old, err)) < 0 || rename(dir, old) != 0))
        return lt_err_set(err, LT_EIO, 0, 0, "cannot move '%s' aside: %s", dir, strerror(errno));
    if (rename(stage, dir) != 0) {
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot rename '%s' to '%s': %s", stage, dir,
                        strerror(errno));
        if (had && rename(old, dir) != 0)
            lt_err_set(err, LT_EIO, 0, 0, "cannot put '%s' back from '%s'", dir, old);
        return rc;
    }
    sim_out_kept(dir);
    return had ? sim_remove_tree(old, err) : 0;
}

int sim_out_refuse_existing(const char *const *paths, size_t n, bool force, struct lt_err *err)
{
    size_t first = n, count = 0;

    if (force)
        return 0;
    for (size_t k = 0; k < n; k++) {
        if (sim_path_exists(paths[k])) {
            if (first == n)
                first = k;
            count++;
        }
    }
    if (count == 0)
        return 0;
    if (count == 1)
        return lt_err_set(err, LT_EINVAL, 0, 0,
                          "'%s' holds an earlier result; give --force to replace it (it is "
                          "replaced only when the new run completes)",
                          paths[first]);
    return lt_err_set(err, LT_EINVAL, 0, 0,
                      "'%s' and %zu more hold earlier results; give --force to replace them "
                      "(each is replaced only when its new run completes)",
                      paths[first], count - 1);
}
