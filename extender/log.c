/* log.c -- JSON-lines logs on stderr, thread-safe (log.h).
 *
 * A line is assembled as a Jansson object (ts, level, msg first, then the fields; Jansson
 * escapes everything), dumped compactly, and written under one mutex so that concurrent
 * request threads and the cache's watcher threads never interleave partial lines.
 *
 * Rate limit. Warn and error lines are what a client can cause (one per malformed request, per
 * refused connection), so a flood of bad requests would write megabytes of logs a second. Each
 * message (the fixed msg string) may write EXT_LOG_BURST lines per second of the monotonic
 * clock; further lines of it in that second are counted and dropped, and the first line of it
 * in a later second, or ext_log_flush, writes one summary line first:
 *   {"level":"warn","msg":"suppressed similar lines","suppressed":990,"like":"filter ..."}
 * The counters live in a small open-addressing table keyed by the message text (the messages
 * are a few dozen literals); messages past its size share one last entry.
 *
 * SPDX-License-Identifier: MIT
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Front-end process state (STYLE.md R10 concerns the library): the level and the lock. */
static atomic_int log_level = EXT_LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* Warn and error lines per message and second: enough to see what goes wrong and with which
 * input; a malformed-request flood (3.6 MB/s of logs before the limit) writes 10 lines and a
 * summary a second per message. */
#define EXT_LOG_BURST 10
#define EXT_LOG_KINDS 64 /* messages tracked apart; the last entry is shared by any more */
#define EXT_LOG_KEY   64 /* bytes of a message kept as its key (messages are short literals) */

/* One message's window: the second it is in, lines written and dropped in it. */
struct kind {
    char msg[EXT_LOG_KEY]; /* "" while the entry is free */
    int64_t second;        /* monotonic second of the window */
    unsigned lines;        /* lines written in the window */
    uint64_t suppressed;   /* lines dropped in the window */
};

static pthread_mutex_t limit_lock = PTHREAD_MUTEX_INITIALIZER; /* guards kinds[] */
static struct kind kinds[EXT_LOG_KINDS];

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t (*_Atomic log_clock)(void) = mono_ms;

void ext_log_set_clock(int64_t (*now_ms)(void))
{
    atomic_store(&log_clock, now_ms ? now_ms : mono_ms);
}

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void ext_log_set_level(enum ext_log_level lvl)
{
    atomic_store(&log_level, (int)lvl);
}

bool ext_log_level_parse(const char *s, enum ext_log_level *out)
{
    for (int i = 0; i <= EXT_LOG_ERROR; i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum ext_log_level)i;
            return true;
        }
    }
    return false;
}

const char *ext_log_level_name(enum ext_log_level lvl)
{
    return (int)lvl >= 0 && lvl <= EXT_LOG_ERROR ? level_names[lvl] : "?";
}

bool ext_log_enabled(enum ext_log_level lvl)
{
    return (int)lvl >= atomic_load(&log_level);
}

/* "2024-05-01T12:00:00.123Z" into buf (at least 32 bytes). */
static void timestamp(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    char sec[24];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03ldZ", sec, ts.tv_nsec / 1000000L);
}

static void write_line(enum ext_log_level lvl, const char *msg, json_t *fields,
                       const char *log_error)
{
    char ts[40];
    json_t *line = json_object();
    const char *key;
    json_t *val;
    char *s;

    if (line == NULL)
        return;
    timestamp(ts, sizeof(ts));
    json_object_set_new(line, "ts", json_string(ts));
    json_object_set_new(line, "level", json_string(ext_log_level_name(lvl)));
    json_object_set_new(line, "msg", json_string(msg ? msg : ""));
    json_object_foreach(fields, key, val)
    {
        if (strcmp(key, "ts") != 0 && strcmp(key, "level") != 0 && strcmp(key, "msg") != 0)
            json_object_set(line, key, val);
    }
    if (log_error)
        json_object_set_new(line, "log_error", json_string(log_error));
    s = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(line);
    if (s == NULL)
        return;
    pthread_mutex_lock(&log_lock);
    fputs(s, stderr);
    fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(&log_lock);
    free(s);
}

/* The entry of msg (FNV-1a over its first EXT_LOG_KEY - 1 bytes, linear probing); called with
 * limit_lock held. */
static struct kind *kind_of(const char *msg)
{
    uint32_t h = 2166136261u;
    size_t len = strnlen(msg, EXT_LOG_KEY - 1), i;

    if (len == 0)
        return &kinds[EXT_LOG_KINDS - 1];
    for (i = 0; i < len; i++)
        h = (h ^ (unsigned char)msg[i]) * 16777619u;
    for (i = 0; i < EXT_LOG_KINDS - 1; i++) {
        struct kind *k = &kinds[(h + i) % (EXT_LOG_KINDS - 1)];

        if (k->msg[0] == '\0')
            memcpy(k->msg, msg, len); /* the rest is zero: a free entry is all zero */
        if (strncmp(k->msg, msg, len) == 0 && k->msg[len] == '\0')
            return k;
    }
    return &kinds[EXT_LOG_KINDS - 1];
}

static void write_summary(const char *like, uint64_t n)
{
    json_t *f = json_pack("{s:I, s:s}", "suppressed", (json_int_t)n, "like", like);

    write_line(EXT_LOG_WARN, "suppressed similar lines", f, NULL);
    json_decref(f);
}

/* Whether a warn or error line of msg may be written now; writes the summary of the window
 * that just ended, if it dropped lines. */
static bool admit(const char *msg)
{
    int64_t sec = atomic_load(&log_clock)() / 1000;
    char like[EXT_LOG_KEY];
    uint64_t ended = 0;
    struct kind *k;
    bool ok;

    if (msg == NULL)
        msg = "";
    pthread_mutex_lock(&limit_lock);
    k = kind_of(msg);
    if (k->second != sec) {
        ended = k->suppressed;
        memcpy(like, k->msg, sizeof(like));
        k->second = sec;
        k->lines = 0;
        k->suppressed = 0;
    }
    ok = k->lines < EXT_LOG_BURST;
    if (ok)
        k->lines++;
    else
        k->suppressed++;
    pthread_mutex_unlock(&limit_lock);
    if (ended > 0)
        write_summary(like, ended);
    return ok;
}

void ext_log_flush(bool all)
{
    int64_t sec = atomic_load(&log_clock)() / 1000;

    for (size_t i = 0; i < EXT_LOG_KINDS; i++) {
        char like[EXT_LOG_KEY];
        uint64_t n = 0;

        pthread_mutex_lock(&limit_lock);
        if (kinds[i].suppressed > 0 && (all || kinds[i].second != sec)) {
            n = kinds[i].suppressed;
            kinds[i].suppressed = 0;
            memcpy(like, kinds[i].msg, sizeof(like));
        }
        pthread_mutex_unlock(&limit_lock);
        if (n > 0)
            write_summary(like, n);
    }
}

void ext_log_obj(enum ext_log_level lvl, const char *msg, json_t *fields)
{
    if (!ext_log_enabled(lvl) || (lvl >= EXT_LOG_WARN && !admit(msg)))
        return;
    write_line(lvl, msg, fields, NULL);
}

void ext_log(enum ext_log_level lvl, const char *msg, const char *fields, ...)
{
    json_error_t jerr;
    json_t *obj = NULL;
    va_list ap;

    if (!ext_log_enabled(lvl) || (lvl >= EXT_LOG_WARN && !admit(msg)))
        return;
    if (fields != NULL) {
        va_start(ap, fields);
        obj = json_vpack_ex(&jerr, 0, fields, ap);
        va_end(ap);
    }
    write_line(lvl, msg, obj, fields != NULL && obj == NULL ? jerr.text : NULL);
    json_decref(obj);
}
