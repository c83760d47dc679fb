/* lt_test_dir.h -- scratch directories for the unit tests that write files (test_replay.c,
 * test_trace.c): made under $TMPDIR (or /tmp), removed with everything under them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_TEST_DIR_H
#define LT_TEST_DIR_H
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Makes a fresh directory BASE/NAME_XXXXXX into dir (cap bytes), BASE being $TMPDIR when it
 * is set and shorter than 40 bytes, else /tmp. 0, or -1 (errno set by mkdtemp). */
static inline int lt_test_mkdtemp(char *dir, size_t cap, const char *name)
{
    const char *base = getenv("TMPDIR");

    snprintf(dir, cap, "%s/%s_XXXXXX", base != NULL && strlen(base) < 40 ? base : "/tmp", name);
    return mkdtemp(dir) != NULL ? 0 : -1;
}

/* Removes path and, if it is a directory, everything under it. */
static inline void lt_test_rm_tree(const char *path)
{
    struct stat st;
    struct dirent *de;
    DIR *d;
    char sub[512];

    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode) && (d = opendir(path)) != NULL) {
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) < (int)sizeof(sub))
                lt_test_rm_tree(sub); /* a longer path is left, never cut to another one */
        }
        closedir(d);
        rmdir(path);
        return;
    }
    unlink(path);
}
#endif
