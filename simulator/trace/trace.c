/* trace.c -- struct tr_reader: the parts of one Google 2011 trace table, streamed row by row.
 *
 * Design: tr_open lists DIR/<table>/ once (opendir/readdir), keeps the names of the form
 * part-NNNNN-of-MMMMM.csv.gz or part-NNNNN-of-MMMMM.csv (anything else in the directory is
 * ignored: Google's bucket and the samples hold only parts, and a stray README must not stop
 * a run), sorts them by number and checks that they agree on MMMMM and run consecutively from
 * first_part. Parts are then opened one at a time and read GZ_INBUF bytes a read(2); a part
 * is gzip when it starts with gzip's magic bytes, and its name must agree (.csv.gz or .csv).
 *
 * Reading: ISA-L's isal_inflate (igzip) with gzip framing (ISAL_GZIP) decompresses straight
 * into one BUF_CHUNK block of our buffer, and lines are cut with memchr, so each byte is touched
 * by inflate (which computes the CRC-32 as it writes), memchr and the field parser and by
 * nothing else. ISA-L parses each member's header and checks its trailer, CRC-32 and length,
 * itself; at a member's end (ISAL_BLOCK_FINISH) the state is reset and the next member, if the
 * bytes after it start one, read the same way, as gzread would. A line cut by the block end is
 * moved to the front of the buffer before the next read; a line longer than TR_MAX_LINE is an
 * error (the longest line in the samples is 160 bytes).
 *
 * Errors: a truncated gzip (the input ends inside a member), corrupt deflate data, or a
 * member whose CRC or length does not match its trailer is named LT_EIO with the part; the
 * complete lines before a truncation (or before the failing member's output, in the block at
 * hand) are still returned, so the error names the line where the data stops. After the last
 * member, bytes that do not start another one are ignored, as gzread ignores them. Timestamps must
 * never decrease, within a part and from one part to the next (the PDF: "rows are sorted by the
 * event timestamp"; parts are "numbered in order by time"). The first error is kept in the reader
 * and returned again by every later tr_next.
 *
 * SPDX-License-Identifier: MIT
 */
#include "trace/trace.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>

#include "lt_mem.h"

/* Longest line accepted. Real lines are at most 160 bytes (three 44-byte hashes in
 * job_events); 64 KiB bounds the carry-over copy and catches a file that is not a trace. */
#define TR_MAX_LINE (64 * 1024)

/* Text bytes made per fill: large enough that the per-call overhead of inflate and the
 * carry-over of the cut line vanish, small enough to stay in L2. */
#define BUF_CHUNK (1024 * 1024)

/* Bytes of a part read per read(2). */
#define GZ_INBUF (256 * 1024)

/* "PART:LINE:COLUMN: message" for tr_bad_messages. */
#define BAD_LEN (LT_ERR_SOURCE + LT_ERR_TEXT + 48)

struct part {
    uint32_t num;   /* NNNNN */
    uint32_t of;    /* MMMMM */
    bool gz;        /* .csv.gz (true) or .csv */
    uint64_t bytes; /* file size, for tr_bytes_total */
    char *path;     /* owned: DIR/<table>/part-NNNNN-of-MMMMM.csv[.gz] */
};

struct tr_reader {
    enum tr_table table;
    bool skip_bad;                /* opts->skip_bad_lines */
    struct part *parts;           /* owned; the parts to read, in order */
    size_t n_parts;               /* >= 1 */
    size_t cur;                   /* index of the open part (or of the last one when done) */
    int fd;                       /* the open part; -1 before the first and after the last */
    bool gzip;                    /* the open part is gzip (inflated), not plain text (copied) */
    bool member_end;              /* the last gzip member read has ended; another may follow */
    struct inflate_state *st;     /* owned (the first gzip part allocates it); ISA-L's inflate */
    unsigned char *in;            /* owned; GZ_INBUF bytes of the part as read */
    const unsigned char *next_in; /* the unread input: next_in[0..avail_in-1], within in */
    size_t avail_in;
    bool in_eof;          /* read(2) has returned 0 for the open part */
    uint64_t in_read;     /* bytes of the open part read so far */
    bool done;            /* every part has been read */
    char *buf;            /* owned; BUF_CHUNK + TR_MAX_LINE bytes */
    size_t pos;           /* first unread byte in buf */
    size_t end;           /* end of the data in buf */
    bool eof;             /* the open part has no more data to read into buf */
    const char *bad_end;  /* ... because of this error (truncated, or a member's check failed),
                           * reported once the complete lines before it are out; or NULL */
    int64_t line;         /* lines taken from the open part so far (1-based after a take) */
    bool have_prev;       /* a row has been returned (prev_* are valid) */
    int64_t prev_time;    /* time of the last row returned */
    size_t prev_part;     /* its part index */
    int64_t prev_line;    /* its line */
    uint64_t bytes_done;  /* compressed bytes of the parts already closed */
    uint64_t bytes_total; /* compressed bytes of all parts */
    struct tr_counts counts;
    struct tr_task_memo memo; /* task_events: the last line's tail (trace_line.c) */
    int fail;                 /* 0, or the code of the first error (sticky) */
    struct lt_err fail_err;   /* that error, as reported */
    size_t n_bad;             /* messages kept in bad_text, <= TR_KEEP_BAD */
    const char *bad[TR_KEEP_BAD];
    char bad_text[TR_KEEP_BAD][BAD_LEN];
};

static const char *const table_names[TR_N_TABLES] = {"machine_events", "job_events", "task_events"};
static const char *const machine_type_names[TR_M_N_TYPES] = {"ADD", "REMOVE", "UPDATE"};
static const char *const type_names[TR_N_TYPES] = {"SUBMIT", "SCHEDULE",       "EVICT",
                                                   "FAIL",   "FINISH",         "KILL",
                                                   "LOST",   "UPDATE_PENDING", "UPDATE_RUNNING"};

const char *tr_table_name(enum tr_table t)
{
    return (unsigned)t < TR_N_TABLES ? table_names[t] : "?";
}

const char *tr_type_name(enum tr_table t, unsigned type)
{
    if (t == TR_MACHINE_EVENTS)
        return type < TR_M_N_TYPES ? machine_type_names[type] : "?";
    return type < TR_N_TYPES ? type_names[type] : "?";
}

/* Copies src into dst unless dst is NULL or already holds an error (first error wins). */
static void err_copy(struct lt_err *dst, const struct lt_err *src)
{
    if (dst != NULL && dst->code == 0)
        *dst = *src;
}

/* Records an error of tr_open with source as its source. Returns code. */
static int open_fail(struct lt_err *err, const char *source, int code, const char *fmt, ...)
    LT_PRINTF(4, 5);
static int open_fail(struct lt_err *err, const char *source, int code, const char *fmt, ...)
{
    struct lt_err e;
    char text[LT_ERR_TEXT];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    lt_err_init(&e, source);
    lt_err_set(&e, code, 0, 0, "%s", text);
    err_copy(err, &e);
    return code;
}

/* Records r's first error (at the open part, line, column) and copies it to err. */
static int reader_fail(struct tr_reader *r, struct lt_err *err, int code, int64_t line, int col,
                       const char *fmt, ...) LT_PRINTF(6, 7);
static int reader_fail(struct tr_reader *r, struct lt_err *err, int code, int64_t line, int col,
                       const char *fmt, ...)
{
    char text[LT_ERR_TEXT];
    va_list ap;

    if (r->fail == 0) {
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        lt_err_init(&r->fail_err, r->parts[r->cur].path);
        lt_err_set(&r->fail_err, code, line, col, "%s", text);
        r->fail = code;
    }
    err_copy(err, &r->fail_err);
    return r->fail;
}

/* Matches "part-NNNNN-of-MMMMM.csv" or "...csv.gz" (exactly five digits each). */
static bool parse_part_name(const char *name, uint32_t *num, uint32_t *of, bool *gz)
{
    uint32_t v[2] = {0, 0};
    const char *p = name;
    int k, i;

    for (k = 0; k < 2; k++) {
        const char *lead = k == 0 ? "part-" : "-of-";
        size_t n = strlen(lead);
        if (strncmp(p, lead, n) != 0)
            return false;
        p += n;
        for (i = 0; i < 5; i++, p++) {
            if (*p < '0' || *p > '9')
                return false;
            v[k] = v[k] * 10 + (uint32_t)(*p - '0');
        }
    }
    if (strcmp(p, ".csv") == 0)
        *gz = false;
    else if (strcmp(p, ".csv.gz") == 0)
        *gz = true;
    else
        return false;
    *num = v[0];
    *of = v[1];
    return true;
}

static int part_cmp(const void *a, const void *b)
{
    const struct part *x = a, *y = b;

    return (x->num > y->num) - (x->num < y->num);
}

static void free_parts(struct part *parts, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        lt_free(parts[i].path);
    lt_free(parts);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');

    return s != NULL ? s + 1 : path;
}

/* Adds DIR/name to *parts (growing it), with its size. */
static int add_part(const char *dir, const char *name, uint32_t num, uint32_t of, bool gz,
                    struct part **parts, size_t *n, size_t *cap, struct lt_err *err)
{
    size_t len = strlen(dir) + 1 + strlen(name) + 1;
    struct part *p;
    struct stat st;

    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        struct part *grown = lt_reallocarray(*parts, c, sizeof(*grown));
        if (grown == NULL)
            return open_fail(err, dir, LT_ENOMEM, "out of memory listing the trace parts");
        *parts = grown;
        *cap = c;
    }
    p = &(*parts)[*n];
    p->path = lt_malloc(len);
    if (p->path == NULL)
        return open_fail(err, dir, LT_ENOMEM, "out of memory listing the trace parts");
    snprintf(p->path, len, "%s/%s", dir, name);
    if (stat(p->path, &st) != 0) {
        int e = errno;
        lt_free(p->path);
        return open_fail(err, dir, LT_EIO, "cannot stat '%s': %s", name, strerror(e));
    }
    p->num = num;
    p->of = of;
    p->gz = gz;
    p->bytes = (uint64_t)st.st_size;
    (*n)++;
    return 0;
}

/* Lists the part files of dir into an owned, unsorted array. */
static int list_parts(const char *dir, struct part **out, size_t *n_out, struct lt_err *err)
{
    struct part *parts = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    DIR *d;
    int rc = 0;

    d = opendir(dir);
    if (d == NULL)
        return open_fail(err, dir, LT_EIO, "cannot open trace directory: %s", strerror(errno));
    while ((de = readdir(d)) != NULL) {
        uint32_t num, of;
        bool gz;
        if (!parse_part_name(de->d_name, &num, &of, &gz))
            continue;
        rc = add_part(dir, de->d_name, num, of, gz, &parts, &n, &cap, err);
        if (rc < 0)
            break;
    }
    closedir(d);
    if (rc < 0) {
        free_parts(parts, n);
        return rc;
    }
    *out = parts;
    *n_out = n;
    return 0;
}

/* Sorts parts and keeps the ones to read: consecutive from first_part, at most max_parts. */
static int select_parts(const char *dir, struct part *parts, size_t *n, const struct tr_opts *o,
                        struct lt_err *err)
{
    size_t i, first = 0, keep;

    if (*n == 0)
        return open_fail(err, dir, LT_EIO,
                         "no trace parts (part-NNNNN-of-MMMMM.csv.gz or .csv) in the directory");
    qsort(parts, *n, sizeof(*parts), part_cmp);
    for (i = 0; i < *n; i++) {
        const char *name = base_name(parts[i].path);
        if (parts[i].of != parts[0].of)
            return open_fail(err, dir, LT_EIO, "part '%s' disagrees with '%s' on the part count",
                             name, base_name(parts[0].path));
        if (parts[i].num >= parts[i].of)
            return open_fail(err, dir, LT_EIO, "part '%s' has a number beyond its part count",
                             name);
        if (i > 0 && parts[i].num == parts[i - 1].num)
            return open_fail(err, dir, LT_EIO, "part %05" PRIu32 " is there twice: '%s' and '%s'",
                             parts[i].num, base_name(parts[i - 1].path), name);
    }
    while (first < *n && parts[first].num < o->first_part)
        first++;
    if (first == *n || parts[first].num != o->first_part)
        return open_fail(err, dir, LT_EIO,
                         "no part %05" PRIu32 " (first part to read) in the directory",
                         o->first_part);
    keep = *n - first;
    if (o->max_parts != 0 && keep > o->max_parts)
        keep = o->max_parts;
    for (i = 1; i < keep; i++)
        if (parts[first + i].num != parts[first + i - 1].num + 1)
            return open_fail(err, dir, LT_EIO,
                             "part %05" PRIu32 " is missing between '%s' and '%s'",
                             parts[first + i - 1].num + 1, base_name(parts[first + i - 1].path),
                             base_name(parts[first + i].path));
    /* Drop the parts not read; move the kept ones to the front. */
    for (i = 0; i < first; i++)
        lt_free(parts[i].path);
    for (i = first + keep; i < *n; i++)
        lt_free(parts[i].path);
    memmove(parts, parts + first, keep * sizeof(*parts));
    *n = keep;
    return 0;
}

/* Moves the unread input to the front of in and reads more of the part after it; sets in_eof
 * when the part has no more. */
static int in_fill(struct tr_reader *r, struct lt_err *err)
{
    size_t rest = r->avail_in;
    ssize_t got;

    memmove(r->in, r->next_in, rest);
    r->next_in = r->in;
    do
        got = read(r->fd, r->in + rest, GZ_INBUF - rest);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return reader_fail(r, err, LT_EIO, r->line + 1, 0, "cannot read trace part: %s",
                           strerror(errno));
    if (got == 0)
        r->in_eof = true;
    r->avail_in = rest + (size_t)got;
    r->in_read += (uint64_t)got;
    return 0;
}

/* Starts a gzip member at next_in: ISA-L parses its header, inflates, and checks its trailer
 * (ISAL_GZIP survives the reset; it is set again to say so). */
static void member_start(struct tr_reader *r)
{
    isal_inflate_reset(r->st);
    r->st->crc_flag = ISAL_GZIP;
    r->member_end = false;
}

/* The little-endian 32-bit number at p (gzip's trailer fields). */
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* What is wrong when isal_inflate says ISAL_INCORRECT_CHECKSUM. ISA-L compares the member's
 * trailer (CRC-32 and length as one 64-bit word) with its CRC and length of the output, and
 * has consumed the input through the trailer: the 8 bytes of the part before the bytes
 * consumed. They are read again (this is the error path) to say which of the two differs. A
 * header CRC (FHCRC) that does not match is reported before the member's data. */
static const char *checksum_fault(const struct tr_reader *r)
{
    uint64_t off = r->in_read - r->avail_in;
    unsigned char t[8];

    if (r->st->block_state != ISAL_BLOCK_FINISH)
        return "cannot read trace part: incorrect header check";
    if (off < sizeof(t) || pread(r->fd, t, sizeof(t), (off_t)(off - sizeof(t))) != sizeof(t))
        return "cannot read trace part: incorrect data or length check";
    if (le32(t) != r->st->crc)
        return "cannot read trace part: incorrect data check";
    return "cannot read trace part: incorrect length check";
}

/* isal_inflate's other errors, in words. */
static const char *inflate_fault(int irc)
{
    switch (irc) {
    case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    default:
        return "corrupt gzip data";
    }
}

/* Opens part r->cur: reads its first bytes, and says whether it is gzip. */
static int open_part(struct tr_reader *r, struct lt_err *err)
{
    const struct part *p = &r->parts[r->cur];
    int rc;

    r->pos = r->end = 0;
    r->eof = false;
    r->bad_end = NULL;
    r->line = 0;
    r->in_eof = false;
    r->in_read = 0;
    r->next_in = r->in;
    r->avail_in = 0;
    r->fd = open(p->path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return reader_fail(r, err, LT_EIO, 0, 0, "cannot open trace part: %s", strerror(errno));
    r->counts.parts++;
    do
        rc = in_fill(r, err);
    while (rc == 0 && r->avail_in < 2 && !r->in_eof);
    if (rc < 0)
        return rc;
    r->gzip = r->avail_in >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b;
    if (r->avail_in > 0 && r->gzip != p->gz)
        return reader_fail(r, err, LT_EIO, 0, 0,
                           p->gz ? "file named .csv.gz is not gzip-compressed"
                                 : "file named .csv is gzip-compressed");
    if (!r->gzip)
        return 0;
    if (r->st == NULL) {
        r->st = lt_malloc(sizeof(*r->st));
        if (r->st == NULL)
            return reader_fail(r, err, LT_ENOMEM, 0, 0, "out of memory opening a trace part");
        isal_inflate_init(r->st);
    }
    member_start(r);
    return 0;
}

/* Closes the open part. */
static int close_part(struct tr_reader *r, struct lt_err *err)
{
    int rc = close(r->fd);

    r->fd = -1;
    r->bytes_done += r->parts[r->cur].bytes;
    if (rc != 0)
        return reader_fail(r, err, LT_EIO, 0, 0, "cannot close trace part: %s", strerror(errno));
    return 0;
}

/* Up to want bytes of the open part's text at dst: *got of them; sets eof (and bad_end) at
 * its end. The output of a member whose check fails is dropped from this block (what earlier
 * blocks held of it is out already: the check comes at the member's end). */
static int fill_from(struct tr_reader *r, unsigned char *dst, size_t want, size_t *got,
                     struct lt_err *err)
{
    size_t mstart = 0; /* where the current member's output starts in this block */
    int rc;

    *got = 0;
    while (*got < want) {
        size_t room = want - *got;
        int irc;

        if (r->avail_in < 2 && !r->in_eof && (rc = in_fill(r, err)) < 0)
            return rc;
        if (!r->gzip) {
            size_t k = r->avail_in < room ? r->avail_in : room;
            memcpy(dst + *got, r->next_in, k);
            r->next_in += k;
            r->avail_in -= k;
            *got += k;
            if (r->avail_in == 0 && r->in_eof) {
                r->eof = true;
                break;
            }
            continue;
        }
        if (r->member_end) {
            /* Another member, as gzread reads them; anything else after the last one is
             * ignored, as gzread ignores it. */
            if (r->avail_in >= 2 && r->next_in[0] == 0x1f && r->next_in[1] == 0x8b) {
                member_start(r);
                mstart = *got;
                continue;
            }
            r->eof = true;
            break;
        }
        /* GZ_INBUF and BUF_CHUNK + TR_MAX_LINE fit ISA-L's 32-bit counts. */
        r->st->next_in = (uint8_t *)(uintptr_t)r->next_in;
        r->st->avail_in = (uint32_t)r->avail_in;
        r->st->next_out = dst + *got;
        r->st->avail_out = (uint32_t)room;
        irc = isal_inflate(r->st);
        r->next_in = r->st->next_in;
        r->avail_in = r->st->avail_in;
        *got += room - r->st->avail_out;
        if (irc == ISAL_INCORRECT_CHECKSUM) {
            r->bad_end = checksum_fault(r);
            *got = mstart;
            r->eof = true;
            break;
        }
        if (irc < 0)
            return reader_fail(r, err, LT_EIO, r->line + 1, 0, "cannot read trace part: %s",
                               inflate_fault(irc));
        if (r->st->block_state == ISAL_BLOCK_FINISH) {
            r->member_end = true; /* its CRC-32 and length matched */
            continue;
        }
        if (r->avail_in == 0 && r->in_eof && r->st->avail_out > 0) {
            /* Room for more, no input left, and the member has not ended: the data ends
             * inside it. Hand out the complete lines first, next_line reports it. */
            r->bad_end = "truncated gzip file (unexpected end of file)";
            r->eof = true;
            break;
        }
    }
    return 0;
}

/* Reads more of the open part after the unread bytes, which are moved to the front. */
static int fill(struct tr_reader *r, struct lt_err *err)
{
    size_t rest = r->end - r->pos, got;
    int rc;

    if (rest > TR_MAX_LINE)
        return reader_fail(r, err, LT_EPARSE, r->line + 1, 0, "line is longer than %d bytes",
                           TR_MAX_LINE);
    memmove(r->buf, r->buf + r->pos, rest);
    r->pos = 0;
    r->end = rest;
    rc = fill_from(r, (unsigned char *)r->buf + rest, BUF_CHUNK + TR_MAX_LINE - rest, &got, err);
    if (rc < 0)
        return rc;
    r->end += got;
    return 0;
}

/* Takes the next line of the open part: 1 and *s, *n (without the newline), or 0 at the end
 * of the part. A last line without a newline counts as a line. */
static int next_line(struct tr_reader *r, const char **s, size_t *n, struct lt_err *err)
{
    int rc;

    for (;;) {
        const char *start = r->buf + r->pos;
        const char *nl = r->pos < r->end ? memchr(start, '\n', r->end - r->pos) : NULL;
        if (nl != NULL || (r->eof && r->bad_end == NULL && r->pos < r->end)) {
            *s = start;
            *n = nl != NULL ? (size_t)(nl - start) : r->end - r->pos;
            r->pos += *n + (nl != NULL);
            r->line++;
            if (*n > TR_MAX_LINE)
                return reader_fail(r, err, LT_EPARSE, r->line, 0, "line is longer than %d bytes",
                                   TR_MAX_LINE);
            return 1;
        }
        if (r->bad_end != NULL)
            return reader_fail(r, err, LT_EIO, r->line + 1, 0, "%s", r->bad_end);
        if (r->eof)
            return 0;
        rc = fill(r, err);
        if (rc < 0)
            return rc;
    }
}

struct tr_reader *tr_open(const char *dir, enum tr_table t, const struct tr_opts *opts,
                          struct lt_err *err)
{
    static const struct tr_opts defaults = {false, 0, 0};
    struct tr_reader *r;
    char *tdir;
    size_t len, i;
    int rc;

    if (dir == NULL || (unsigned)t >= TR_N_TABLES) {
        lt_err_set(err, LT_EINVAL, 0, 0, "tr_open: no directory or unknown table");
        return NULL;
    }
    if (opts == NULL)
        opts = &defaults;
    r = lt_calloc(1, sizeof(*r));
    len = strlen(dir) + 1 + strlen(table_names[t]) + 1;
    tdir = lt_malloc(len);
    if (r != NULL)
        r->fd = -1;
    if (r == NULL || tdir == NULL)
        goto out_nomem;
    snprintf(tdir, len, "%s/%s", dir, table_names[t]);
    r->table = t;
    r->skip_bad = opts->skip_bad_lines;
    rc = list_parts(tdir, &r->parts, &r->n_parts, err);
    if (rc < 0)
        goto out_free;
    rc = select_parts(tdir, r->parts, &r->n_parts, opts, err);
    if (rc < 0)
        goto out_free;
    for (i = 0; i < r->n_parts; i++)
        r->bytes_total += r->parts[i].bytes;
    r->buf = lt_malloc(BUF_CHUNK + TR_MAX_LINE);
    r->in = lt_malloc(GZ_INBUF);
    if (r->buf == NULL || r->in == NULL)
        goto out_nomem;
    if (open_part(r, err) < 0)
        goto out_free;
    lt_free(tdir);
    return r;

out_nomem:
    open_fail(err, tdir, LT_ENOMEM, "out of memory opening the trace reader");
out_free:
    lt_free(tdir);
    tr_close(r);
    return NULL;
}

void tr_close(struct tr_reader *r)
{
    if (r == NULL)
        return;
    if (r->fd >= 0)
        (void)close(r->fd);
    lt_free(r->st);
    free_parts(r->parts, r->n_parts);
    lt_free(r->buf);
    lt_free(r->in);
    lt_free(r);
}

/* Counts a bad line (skip_bad_lines) and keeps its message if there is room. */
static void keep_bad(struct tr_reader *r, int col, const char *text)
{
    r->counts.bad_lines++;
    if (r->n_bad == TR_KEEP_BAD)
        return;
    snprintf(r->bad_text[r->n_bad], BAD_LEN, "%s:%" PRId64 ":%d: %s", r->parts[r->cur].path,
             r->line, col, text);
    r->bad[r->n_bad] = r->bad_text[r->n_bad];
    r->n_bad++;
}

/* Parses line into out as r's table says; on success *time and *type get the row's time and
 * type. */
static int parse_row(struct tr_reader *r, const char *s, size_t n, void *out, int64_t *time,
                     unsigned *type, struct lt_err *le)
{
    int rc;

    switch (r->table) {
    case TR_MACHINE_EVENTS: {
        struct tr_machine_row *m = out;
        rc = tr_parse_machine_line(s, n, m, le);
        if (rc < 0)
            return rc;
        *time = m->time;
        *type = m->type;
        return 0;
    }
    case TR_JOB_EVENTS: {
        struct tr_job_row *j = out;
        rc = tr_parse_job_line(s, n, j, le);
        if (rc < 0)
            return rc;
        *time = j->time;
        *type = j->type;
        return 0;
    }
    case TR_TASK_EVENTS:
    default: {
        struct tr_task_row *k = out;
        rc = tr_parse_task_line_memo(s, n, &r->memo, k, le);
        if (rc < 0)
            return rc;
        *time = k->time;
        *type = k->type;
        return 0;
    }
    }
}

/* Checks that time does not go back; returns 0, or LT_ERANGE with the message in le. */
static int check_order(const struct tr_reader *r, int64_t time, struct lt_err *le)
{
    if (!r->have_prev || time >= r->prev_time)
        return 0;
    if (r->prev_part == r->cur)
        return lt_err_set(le, LT_ERANGE, 0, 1,
                          "time %" PRId64 " is earlier than %" PRId64 " on line %" PRId64, time,
                          r->prev_time, r->prev_line);
    return lt_err_set(le, LT_ERANGE, 0, 1,
                      "time %" PRId64 " is earlier than %" PRId64 " at '%s' line %" PRId64, time,
                      r->prev_time, base_name(r->parts[r->prev_part].path), r->prev_line);
}

/* Moves on to the next part; 1 if there is one, 0 at the end of the last. */
static int advance_part(struct tr_reader *r, struct lt_err *err)
{
    int rc = close_part(r, err);

    if (rc < 0)
        return rc;
    if (r->cur + 1 == r->n_parts) {
        r->done = true;
        return 0;
    }
    r->cur++;
    rc = open_part(r, err);
    return rc < 0 ? rc : 1;
}

int tr_next(struct tr_reader *r, void *out, struct lt_err *err)
{
    struct lt_err le;
    const char *s = NULL;
    size_t n = 0;
    int64_t time;
    unsigned type;
    int rc;

    if (r == NULL || out == NULL)
        return lt_err_set(err, LT_EINVAL, 0, 0, "tr_next: no reader or no row");
    if (r->fail != 0) {
        err_copy(err, &r->fail_err);
        return r->fail;
    }
    while (!r->done) {
        rc = next_line(r, &s, &n, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            rc = advance_part(r, err);
            if (rc < 0)
                return rc;
            continue;
        }
        lt_err_init(&le, NULL);
        if (parse_row(r, s, n, out, &time, &type, &le) < 0 || check_order(r, time, &le) < 0) {
            if (!r->skip_bad)
                return reader_fail(r, err, le.code, r->line, le.column, "%s", le.text);
            keep_bad(r, le.column, le.text);
            continue;
        }
        r->have_prev = true;
        r->prev_time = time;
        r->prev_part = r->cur;
        r->prev_line = r->line;
        r->counts.rows++;
        r->counts.by_type[type]++;
        return 1;
    }
    return 0;
}

const struct tr_counts *tr_counts(const struct tr_reader *r)
{
    return &r->counts;
}

const char *tr_part_path(const struct tr_reader *r)
{
    return r->parts[r->cur].path;
}

int64_t tr_line(const struct tr_reader *r)
{
    return r->line;
}

size_t tr_bad_messages(const struct tr_reader *r, const char *const **out)
{
    *out = r->bad;
    return r->n_bad;
}

uint64_t tr_bytes_read(const struct tr_reader *r)
{
    uint64_t now = r->bytes_done;

    if (r->fd >= 0)
        now += r->in_read - r->avail_in;
    return now;
}

uint64_t tr_bytes_total(const struct tr_reader *r)
{
    return r->bytes_total;
}
