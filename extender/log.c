/* log.c -- JSON-lines logs on stderr, thread-safe (log.h).
 *
 * A line is assembled as a Jansson object (ts, level, msg first, then the fields; Jansson
 * escapes everything), dumped compactly, and written under one mutex so that concurrent
 * request threads and the cache's watcher threads never interleave partial lines.
 *
 * SPDX-License-Identifier: MIT
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Front-end process state (STYLE.md R10 concerns the library): the level and the lock. */
static atomic_int log_level = EXT_LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

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

void ext_log_obj(enum ext_log_level lvl, const char *msg, json_t *fields)
{
    if (!ext_log_enabled(lvl))
        return;
    write_line(lvl, msg, fields, NULL);
}

void ext_log(enum ext_log_level lvl, const char *msg, const char *fields, ...)
{
    json_error_t jerr;
    json_t *obj = NULL;
    va_list ap;

    if (!ext_log_enabled(lvl))
        return;
    if (fields != NULL) {
        va_start(ap, fields);
        obj = json_vpack_ex(&jerr, 0, fields, ap);
        va_end(ap);
    }
    write_line(lvl, msg, obj, fields != NULL && obj == NULL ? jerr.text : NULL);
    json_decref(obj);
}
