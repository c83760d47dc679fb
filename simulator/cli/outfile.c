/* outfile.c -- output files written whole or not at all (outfile.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "cli/outfile.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

FILE *sim_tmp_open(const char *final, char **tmp_out, struct lt_err *err)
{
    size_t n = strlen(final) + 5;
    char *tmp = malloc(n);
    FILE *f;

    if (tmp == NULL) {
        lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory naming '%s'", final);
        return NULL;
    }
    snprintf(tmp, n, "%s.tmp", final);
    if ((f = fopen(tmp, "w")) == NULL) {
        lt_err_set(err, LT_EIO, 0, 0, "cannot create '%s': %s", tmp, strerror(errno));
        free(tmp);
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
        rc = lt_err_set(err, LT_EIO, 0, 0, "cannot rename '%s': %s", tmp, strerror(errno));
    if (rc < 0)
        remove(tmp);
    free(tmp);
    return rc;
}

int sim_make_dirs(const char *path, struct lt_err *err)
{
    char buf[4096];
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
