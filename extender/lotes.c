/* lotes.c -- lotus-extender's LoTES tables: reading the file, decoding it with the library.
 *
 * Design. The library decodes and checks the tables in memory (lt_lotes_tables_parse, STYLE.md
 * R1); this front end reads the file whole under a size limit and puts the file name in front
 * of the library's JSON path, so every start-up error reads "FILE: $.path: what".
 *
 * SPDX-License-Identifier: MIT
 */
#include "lotes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lt_mem.h"

void ext_lotes_init(struct ext_lotes *l)
{
    l->t = NULL;
}

void ext_lotes_release(struct ext_lotes *l)
{
    lt_lotes_tables_free(l->t);
    ext_lotes_init(l);
}

int ext_lotes_load_text(struct ext_lotes *l, const char *text, size_t len, const char *source,
                        struct lt_err *err)
{
    struct lt_lotes_tables *t;
    struct lt_err e;

    ext_lotes_release(l);
    lt_err_init(&e, source);
    t = lt_lotes_tables_parse(text, len, source, &e);
    if (t == NULL) {
        int code = e.code ? e.code : LT_ENOMEM;

        if (e.line > 0)
            return lt_err_set(err, code, e.line, e.column, "%s:%ld:%d: %s", source, e.line,
                              e.column, e.text);
        return lt_err_set(err, code, 0, 0, "%s: %s", source, e.text);
    }
    l->t = t;
    return 0;
}

/* Reads the file at path whole into *out (owned, lt_free; NUL-terminated) and *len. */
static int read_all(const char *path, char **out, size_t *len, struct lt_err *err)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    char *buf = NULL;
    int rc = 0;

    if (f == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "%s: cannot read: %s", path, strerror(errno));
    for (;;) {
        if (buf == NULL || n == cap) {
            char *nb;

            if (buf != NULL && cap >= EXT_LOTES_MAX_FILE) {
                rc = lt_err_set(err, LT_EIO, 0, 0, "%s: larger than %zu bytes", path,
                                EXT_LOTES_MAX_FILE);
                break;
            }
            cap = buf == NULL ? cap : cap * 2;
            nb = lt_reallocarray(buf, cap + 1, 1);
            if (nb == NULL) {
                rc = lt_err_set(err, LT_ENOMEM, 0, 0, "%s: out of memory reading the tables", path);
                break;
            }
            buf = nb;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f)) {
            rc = lt_err_set(err, LT_EIO, 0, 0, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (feof(f))
            break;
    }
    fclose(f);
    if (rc < 0) {
        lt_free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int ext_lotes_load_file(struct ext_lotes *l, const char *path, struct lt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    ext_lotes_release(l);
    rc = read_all(path, &text, &len, err);
    if (rc == 0)
        rc = ext_lotes_load_text(l, text, len, path, err);
    lt_free(text);
    return rc;
}
