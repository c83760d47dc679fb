/* trace_line.c -- one line of a Google 2011 trace table -> one row, or an error naming the field.
 *
 * Design: a line is split on commas into exactly the schema's number of fields (6, 8 or 13;
 * ../shared/spec/google-trace-2011.md section 1.5), then each field is parsed by the rule of
 * its kind (docs/formats.md, "Google 2011 trace"):
 *   integer  decimal digits only (no sign, no blanks), range-checked per field: IDs up to
 *            2^63-1, times up to 2^64-1 (2^63-1 and above read as TR_TIME_AFTER), task index
 *            up to 2^32-1, event type / priority / class / missing info / boolean to their
 *            schema ranges. Mandatory fields (schema.csv "YES") may not be empty.
 *   float    a non-negative number as C's "%g" prints it: digits, an optional fraction, an
 *            optional exponent ("0.0004244", "2.861e-06", "1"). No sign, NaN, inf or hex.
 *   hash     empty, or a base64 token ([A-Za-z0-9+/]+ with at most two '=' at the end, at
 *            most TR_HASH_MAX bytes): every hash in the samples is 44 bytes ending in '=', the
 *            reader checks the alphabet rather than the length so that it is no stricter
 *            than the data needs.
 * The functions are pure: no allocation, no I/O, no global state, and they never read past
 * line[len - 1] (the fuzz target, tests/fuzz/fuzz_trace_line.c, checks this under ASan).
 *
 * Floats: a task_events part has ~1.3 M of them, so strtod (locale lookup, arbitrary
 * precision) is kept off the common path. parse_f64 collects up to 19 significant digits into
 * a uint64_t m and a decimal exponent e; when no digit was dropped, m < 2^53 and |e| <= 22,
 * both m and 10^|e| are exact doubles and one IEEE multiplication or division gives the
 * correctly rounded m * 10^e (Clinger, "How to read floating point numbers accurately", PLDI
 * 1990, the "fast path"). Every trace value takes it ("%g" prints at most 6 significant
 * digits). Anything else goes to strtod on a NUL-terminated copy of at most F64_MAX_LEN bytes,
 * after the syntax check, so strtod never sees anything but a plain decimal number.
 *
 * SPDX-License-Identifier: MIT
 */
#include "trace/trace.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest hash accepted: SHA-256 in base64 is 44 bytes; twice that leaves room for a longer
 * hash in a future trace without letting a junk field through unchecked. */
#define TR_HASH_MAX 88

/* Longest float accepted: "%g" prints at most ~13 bytes ("1.23457e-308"); 64 leaves room for
 * numbers printed with more digits by other tools. */
#define F64_MAX_LEN 64

/* Bytes of a bad value quoted in a message; longer values end in "...". */
#define QUOTE_MAX 32

#define MACHINE_FIELDS 6
#define JOB_FIELDS     8
#define TASK_FIELDS    13

static const char *const machine_names[MACHINE_FIELDS] = {"time",        "machine ID", "event type",
                                                          "platform ID", "CPUs",       "Memory"};
static const char *const job_names[JOB_FIELDS] = {
    "time", "missing info",     "job ID",   "event type",
    "user", "scheduling class", "job name", "logical job name"};
static const char *const task_names[TASK_FIELDS] = {"time",
                                                    "missing info",
                                                    "job ID",
                                                    "task index",
                                                    "machine ID",
                                                    "event type",
                                                    "user",
                                                    "scheduling class",
                                                    "priority",
                                                    "CPU request",
                                                    "memory request",
                                                    "disk space request",
                                                    "different machines restriction"};

/* One field of a line: borrowed bytes, not NUL-terminated. */
struct field {
    const char *s; /* first byte */
    size_t n;      /* length; 0 for an empty field */
};

/* The field being parsed, for messages. */
struct where {
    int col;          /* 1-based field number */
    const char *name; /* schema name ("job ID") */
};

/* Copies at most QUOTE_MAX bytes of f into q (QUOTE_MAX + 4 bytes), replacing bytes that are
 * not printable ASCII by '?' so that a message stays one clean line. */
static void quote(char *q, struct field f)
{
    size_t n = f.n < QUOTE_MAX ? f.n : QUOTE_MAX;
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)f.s[i];
        q[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (f.n > QUOTE_MAX) {
        memcpy(q + n, "...", 3);
        n += 3;
    }
    q[n] = '\0';
}

/* Records "field COL (NAME): 'VALUE' WHAT" (what: "is not an integer", ...). */
static int bad_value(struct lt_err *err, struct where w, struct field f, const char *what)
{
    char q[QUOTE_MAX + 4];

    quote(q, f);
    return lt_err_set(err, LT_EPARSE, 0, w.col, "field %d (%s): '%s' %s", w.col, w.name, q, what);
}

static int missing_value(struct lt_err *err, struct where w)
{
    return lt_err_set(err, LT_EPARSE, 0, w.col, "field %d (%s): mandatory value is empty", w.col,
                      w.name);
}

/* Records field k as line[start..stop); false when it would be field nf + 1. */
static bool add_field(struct field *f, int nf, int *k, const char *line, size_t *start, size_t stop)
{
    if (*k == nf - 1)
        return false;
    f[*k].s = line + *start;
    f[*k].n = stop - *start;
    (*k)++;
    *start = stop + 1;
    return true;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_SPLIT 1
/* Bit 7 of each byte of w that equals ','; exact (no borrow between bytes): the usual
 * "has zero byte" test, ~((x & 7f) + 7f | x | 7f), on x = w ^ ",,,,,,,,". */
static uint64_t comma_bits(uint64_t w)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fu;
    uint64_t x = w ^ 0x2c2c2c2c2c2c2c2cu;

    return ~(((x & lo7) + lo7) | x | lo7);
}
#endif

/* Splits line[0..len) on commas into exactly nf fields. Commas are found 8 bytes at a time
 * where the byte order allows (a task_events line is ~107 bytes with 12 commas). */
static int split(const char *line, size_t len, struct field *f, int nf, struct lt_err *err)
{
    size_t start = 0, i = 0;
    int k = 0, got;

    if (len > 0 && line[len - 1] == '\r')
        return lt_err_set(err, LT_EPARSE, 0, 0,
                          "line ends in a carriage return (the trace uses LF line ends)");
#ifdef SWAR_SPLIT
    for (; i + 8 <= len; i += 8) {
        uint64_t w, m;
        memcpy(&w, line + i, 8);
        for (m = comma_bits(w); m != 0; m &= m - 1)
            if (!add_field(f, nf, &k, line, &start, i + (size_t)(__builtin_ctzll(m) >> 3)))
                goto too_many;
    }
#endif
    for (; i < len; i++)
        if (line[i] == ',' && !add_field(f, nf, &k, line, &start, i))
            goto too_many;
    f[k].s = line + start;
    f[k].n = len - start;
    k++;
    if (k != nf)
        return lt_err_set(err, LT_EPARSE, 0, k + 1, "expected %d fields, got %d", nf, k);
    return 0;

too_many:
    got = 1;
    for (i = 0; i < len; i++)
        got += line[i] == ',';
    return lt_err_set(err, LT_EPARSE, 0, nf + 1, "expected %d fields, got %d", nf, got);
}

enum num_status { NUM_OK = 0, NUM_SYNTAX = -1, NUM_RANGE = -2 };

/* Parses the decimal digits of a non-empty f into *out. NUM_SYNTAX for anything but digits,
 * NUM_RANGE above UINT64_MAX. */
static enum num_status parse_u64(struct field f, uint64_t *out)
{
    uint64_t v = 0;
    size_t i, fast = f.n < 19 ? f.n : 19; /* 19 digits never overflow a uint64_t */

    for (i = 0; i < fast; i++) {
        unsigned d = (unsigned)((unsigned char)f.s[i] - '0');
        if (d > 9)
            return NUM_SYNTAX;
        v = v * 10 + d;
    }
    for (; i < f.n; i++) {
        unsigned d = (unsigned)((unsigned char)f.s[i] - '0');
        if (d > 9)
            return NUM_SYNTAX;
        if (v > (UINT64_MAX - d) / 10) {
            while (++i < f.n) /* junk after an overflow is still a syntax error */
                if ((unsigned)((unsigned char)f.s[i] - '0') > 9)
                    return NUM_SYNTAX;
            return NUM_RANGE;
        }
        v = v * 10 + d;
    }
    *out = v;
    return NUM_OK;
}

/* An integer field in 0..max. Empty: *present = false (an error if !present was not allowed,
 * i.e. present == NULL). */
static int get_uint(struct field f, struct where w, uint64_t max, const char *range, uint64_t *out,
                    bool *present, struct lt_err *err)
{
    enum num_status st;

    if (f.n == 0) {
        if (present == NULL)
            return missing_value(err, w);
        *present = false;
        *out = 0;
        return 0;
    }
    st = parse_u64(f, out);
    if (st == NUM_SYNTAX)
        return bad_value(err, w, f, "is not an integer");
    if (st == NUM_RANGE || *out > max) {
        char what[64];
        snprintf(what, sizeof(what), "is out of range (%s)", range);
        return bad_value(err, w, f, what);
    }
    if (present != NULL)
        *present = true;
    return 0;
}

/* A small code in 0..max (event type, priority, class, missing info, boolean); empty gives -1
 * when optional. The common one-digit case is decided without parse_u64. */
static int get_code(struct field f, struct where w, unsigned max, bool mandatory, int *out,
                    struct lt_err *err)
{
    uint64_t v;
    char what[48];

    if (f.n == 1) {
        unsigned d = (unsigned)((unsigned char)f.s[0] - '0');
        if (d <= max) {
            *out = (int)d;
            return 0;
        }
    } else if (f.n == 0) {
        if (mandatory)
            return missing_value(err, w);
        *out = -1;
        return 0;
    }
    if (parse_u64(f, &v) == NUM_SYNTAX)
        return bad_value(err, w, f, "is not an integer");
    if (v > max) {
        snprintf(what, sizeof(what), "is not one of 0..%u", max);
        return bad_value(err, w, f, what);
    }
    *out = (int)v; /* e.g. "09" */
    return 0;
}

static int get_time(struct field f, struct where w, int64_t *out, struct lt_err *err)
{
    uint64_t v;
    int rc = get_uint(f, w, UINT64_MAX, "0..18446744073709551615", &v, NULL, err);

    if (rc < 0)
        return rc;
    *out = v >= (uint64_t)TR_TIME_AFTER ? TR_TIME_AFTER : (int64_t)v;
    return 0;
}

static int get_id(struct field f, struct where w, uint64_t *out, bool *present, struct lt_err *err)
{
    return get_uint(f, w, (uint64_t)INT64_MAX, "0..9223372036854775807", out, present, err);
}

/* 1 for the base64 alphabet [A-Za-z0-9+/], 0 otherwise ('=' included). */
static const unsigned char b64[256] = {
    ['+'] = 1, ['/'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1,
    ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
    ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1,
    ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
    ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1};

#if defined(__GNUC__)
#define B64_VECTOR 1
/* 16 bytes as one value: GCC and Clang vector extensions, SSE2 or NEON code where the target
 * has it, plain code elsewhere. */
typedef unsigned char b64_v16 __attribute__((vector_size(16)));

/* True if the 16 bytes at p are all in the base64 alphabet: a comparison a byte, no branch. */
static bool b64_block(const char *p)
{
    b64_v16 x;
    uint64_t h[2];

    memcpy(&x, p, sizeof(x));
    b64_v16 ok = (b64_v16)((b64_v16)(x - 'A') < 26) | (b64_v16)((b64_v16)(x - 'a') < 26) |
                 (b64_v16)((b64_v16)(x - '0') < 10) | (b64_v16)(x == '+') | (b64_v16)(x == '/');
    memcpy(h, &ok, sizeof(h));
    return (h[0] & h[1]) == UINT64_MAX;
}
#endif

/* A hash: empty, or base64 characters followed by at most two '='. The alphabet check has
 * no branch per byte (hashes are 44 of a task line's ~107 bytes): 16 bytes at a time where the
 * compiler has vector types. */
static int get_hash(struct field f, struct where w, struct lt_err *err)
{
    size_t i = 0, end = f.n;
    unsigned ok = 1;

    if (f.n == 0)
        return 0;
    if (f.n > TR_HASH_MAX)
        return bad_value(err, w, f, "is too long for a base64 hash");
    while (end > 0 && f.n - end < 2 && f.s[end - 1] == '=')
        end--;
#ifdef B64_VECTOR
    for (; i + 16 <= end; i += 16)
        ok &= b64_block(f.s + i);
#endif
    for (; i < end; i++)
        ok &= b64[(unsigned char)f.s[i]];
    if (end == 0 || !ok)
        return bad_value(err, w, f, "is not a base64 hash");
    return 0;
}

/* 10^0 .. 10^22: the powers of ten that are exact doubles. */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

enum f64_status { F64_OK = 0, F64_SYNTAX = -1, F64_NEGATIVE = -2, F64_RANGE = -3, F64_LONG = -4 };

static bool is_digit(char c)
{
    return (unsigned)((unsigned char)c - '0') <= 9;
}

/* strtod on a bounded copy of f, which parse_f64 has checked to be a plain decimal number. */
static enum f64_status slow_f64(struct field f, double *out)
{
    char buf[F64_MAX_LEN + 1];
    char *end;
    double v;

    if (f.n > F64_MAX_LEN)
        return F64_LONG;
    memcpy(buf, f.s, f.n);
    buf[f.n] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (end != buf + f.n)
        return F64_SYNTAX; /* only under a locale whose decimal point is not '.' */
    if (isinf(v))
        return F64_RANGE;
    *out = v; /* an underflow to a subnormal or 0 is the correctly rounded value */
    return F64_OK;
}

static enum f64_status parse_f64_general(struct field f, double *out);

/* The common form of a decimal at s, before end: [0-9]+ ( '.' [0-9]+ )?, at most 19 digits in
 * all, so m cannot overflow and every digit is kept (parse_f64_general finds the same m and e
 * for these), and Clinger's fast path applies. Returns the byte after it, with its value in
 * *out, or NULL when the form does not apply; the caller decides what may follow. */
static inline const char *f64_common(const char *s, const char *end, double *out)
{
#if FLT_EVAL_METHOD == 0
    const char *q = s;
    uint64_t m = 0;
    size_t frac = 0;

    while (q < end && is_digit(*q))
        m = m * 10 + (unsigned)(*q++ - '0');
    if (q == s)
        return NULL;
    if (q < end && *q == '.') {
        const char *d = ++q;
        while (q < end && is_digit(*q))
            m = m * 10 + (unsigned)(*q++ - '0');
        frac = (size_t)(q - d);
        if (frac == 0)
            return NULL; /* "1." */
    }
    if ((size_t)(q - s) - (frac > 0) > 19 || frac > 22 || m >= ((uint64_t)1 << 53))
        return NULL;
    *out = (double)m / pow10_exact[frac];
    return q;
#else
    (void)s;
    (void)end;
    (void)out;
    return NULL;
#endif
}

/* Parses a non-empty f: [0-9]+ ( '.' [0-9]+ )? ( [eE] [+-]? [0-9]+ )?, correctly rounded.
 * The common form (f64_common) first; everything else goes to parse_f64_general. */
static enum f64_status parse_f64(struct field f, double *out)
{
    double v = 0.0;

    if (f64_common(f.s, f.s + f.n, &v) == f.s + f.n) {
        *out = v;
        return F64_OK;
    }
    return parse_f64_general(f, out);
}

static enum f64_status parse_f64_general(struct field f, double *out)
{
    const char *s = f.s;
    size_t i = 0, n = f.n;
    uint64_t m = 0;
    int sig = 0, e = 0, ex = 0, exp_sign = 1;
    bool inexact = false;

    if (s[0] == '-') {
        struct field g = {s + 1, n - 1};
        double v;
        return n > 1 && parse_f64(g, &v) == F64_OK ? F64_NEGATIVE : F64_SYNTAX;
    }
    if (!is_digit(s[0]))
        return F64_SYNTAX;
    for (; i < n && is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (sig < 19) {
            m = m * 10 + d;
            sig += m != 0; /* leading zeros are not significant */
        } else {
            e++;
            inexact |= d != 0;
        }
    }
    if (i < n && s[i] == '.') {
        if (++i == n || !is_digit(s[i]))
            return F64_SYNTAX;
        for (; i < n && is_digit(s[i]); i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (sig < 19) {
                m = m * 10 + d;
                sig += m != 0;
                e--;
            } else {
                inexact |= d != 0;
            }
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < n && (s[i] == '+' || s[i] == '-'))
            exp_sign = s[i++] == '-' ? -1 : 1;
        if (i == n || !is_digit(s[i]))
            return F64_SYNTAX;
        for (; i < n && is_digit(s[i]); i++)
            if (ex < 100000) /* far beyond any double; keeps ex from overflowing */
                ex = ex * 10 + (s[i] - '0');
    }
    if (i != n)
        return F64_SYNTAX;
    e += exp_sign * ex;
#if FLT_EVAL_METHOD == 0
    if (!inexact && m < ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
        *out = e < 0 ? (double)m / pow10_exact[-e] : (double)m * pow10_exact[e];
        return F64_OK;
    }
#endif
    if (m == 0 && !inexact) {
        *out = 0.0;
        return F64_OK;
    }
    return slow_f64(f, out);
}

/* A float field; empty gives *present = false and 0. */
static int get_f64(struct field f, struct where w, double *out, bool *present, struct lt_err *err)
{
    if (f.n == 0) {
        *present = false;
        *out = 0.0;
        return 0;
    }
    *present = true;
    switch (parse_f64(f, out)) {
    case F64_OK:
        return 0;
    case F64_NEGATIVE:
        return bad_value(err, w, f, "is negative");
    case F64_RANGE:
        return bad_value(err, w, f, "is out of range");
    case F64_LONG:
        return bad_value(err, w, f, "is too long for a number");
    case F64_SYNTAX:
    default:
        return bad_value(err, w, f, "is not a number");
    }
}

#define AT(names, c) ((struct where){(c), (names)[(c)-1]})

int tr_parse_machine_line(const char *line, size_t len, struct tr_machine_row *out,
                          struct lt_err *err)
{
    struct field f[MACHINE_FIELDS];
    struct tr_machine_row r;
    bool has_cpu, has_mem;
    int type, rc;

    if ((rc = split(line, len, f, MACHINE_FIELDS, err)) < 0)
        return rc;
    if ((rc = get_time(f[0], AT(machine_names, 1), &r.time, err)) < 0 ||
        (rc = get_id(f[1], AT(machine_names, 2), &r.machine_id, NULL, err)) < 0 ||
        (rc = get_code(f[2], AT(machine_names, 3), TR_M_N_TYPES - 1, true, &type, err)) < 0 ||
        (rc = get_hash(f[3], AT(machine_names, 4), err)) < 0 ||
        (rc = get_f64(f[4], AT(machine_names, 5), &r.cpu, &has_cpu, err)) < 0 ||
        (rc = get_f64(f[5], AT(machine_names, 6), &r.mem, &has_mem, err)) < 0)
        return rc;
    r.type = (uint8_t)type;
    r.has_cap = has_cpu || has_mem;
    *out = r;
    return 0;
}

int tr_parse_job_line(const char *line, size_t len, struct tr_job_row *out, struct lt_err *err)
{
    struct field f[JOB_FIELDS];
    struct tr_job_row r;
    int missing, type, cls, rc;

    if ((rc = split(line, len, f, JOB_FIELDS, err)) < 0)
        return rc;
    if ((rc = get_time(f[0], AT(job_names, 1), &r.time, err)) < 0 ||
        (rc = get_code(f[1], AT(job_names, 2), 2, false, &missing, err)) < 0 ||
        (rc = get_id(f[2], AT(job_names, 3), &r.job_id, NULL, err)) < 0 ||
        (rc = get_code(f[3], AT(job_names, 4), TR_N_TYPES - 1, true, &type, err)) < 0 ||
        (rc = get_hash(f[4], AT(job_names, 5), err)) < 0 ||
        (rc = get_code(f[5], AT(job_names, 6), 3, false, &cls, err)) < 0 ||
        (rc = get_hash(f[6], AT(job_names, 7), err)) < 0 ||
        (rc = get_hash(f[7], AT(job_names, 8), err)) < 0)
        return rc;
    r.missing = (int8_t)missing;
    r.type = (uint8_t)type;
    r.sched_class = (int8_t)cls;
    *out = r;
    return 0;
}

/* ---- the fast path of task_events lines ----
 *
 * A task_events line of the usual shape is parsed in one left-to-right walk, without the
 * field array: short digit runs, one-digit codes, the hash checked by get_hash and the
 * floats by parse_f64. Anything else (a long number, a code of two digits other than priority
 * 10 or 11, a stray byte, a wrong field count, a '\r') makes it give up, and the general
 * parser below decides the line, so every message is the general parser's. What the walk
 * accepts the general parser accepts with the same row: its limits are stricter (at most 19
 * digits for the time, 18 for IDs, so no range check can fail; 9 for the task index) and the
 * rest are the same functions. tests/unit/simulator/trace/test_trace.c compares the two on every
 * line of the bundled demo parts. */

/* Reads the digit run at p (up to end or a non-digit) into *v: at most max_digits digits,
 * at least one. Returns the byte after the run, or NULL. */
static const char *fast_digits(const char *p, const char *end, long max_digits, uint64_t *v)
{
    const char *q = p;
    uint64_t x = 0;

    while (q < end && is_digit(*q)) {
        x = x * 10 + (unsigned)(*q - '0');
        q++;
    }
    if (q == p || q - p > max_digits)
        return NULL;
    *v = x;
    return q;
}

/* A code of one digit in 0..max, or empty (-1) when optional, then the separator (',', or the
 * end of the line for the last field). Returns the byte after the separator, or NULL. */
static const char *fast_code(const char *p, const char *end, unsigned max, bool optional, bool last,
                             int *v)
{
    if (p < end && *p == ',' && optional && !last) {
        *v = -1;
        return p + 1;
    }
    if (p == end) {
        if (!optional || !last)
            return NULL;
        *v = -1;
        return p;
    }
    if (!is_digit(*p) || (unsigned)(*p - '0') > max)
        return NULL;
    *v = *p - '0';
    p++;
    if (last)
        return p == end ? p : NULL;
    return p < end && *p == ',' ? p + 1 : NULL;
}

/* The field at p up to the next comma (or the end of the line when last). */
static bool fast_field(const char *p, const char *end, bool last, struct field *f)
{
    const char *q = last ? end : memchr(p, ',', (size_t)(end - p));
    if (!q)
        return false;
    f->s = p;
    f->n = (size_t)(q - p);
    return true;
}

/* A float field, empty or as parse_f64 reads it; *p moves past its separator. The common
 * form (f64_common) is read in one pass that also finds the separator; anything else takes
 * fast_field and parse_f64. */
static bool fast_f64(const char **p, const char *end, bool last, double *v, bool *present)
{
    const char *q;
    struct field f;
    double x = 0.0;

    q = f64_common(*p, end, &x);
    if (q != NULL && (last ? q == end : q < end && *q == ',')) {
        *present = true;
        *v = x;
        *p = q + !last;
        return true;
    }
    if (!fast_field(*p, end, last, &f))
        return false;
    *present = f.n != 0;
    *v = 0.0;
    if (f.n != 0 && parse_f64(f, v) != F64_OK)
        return false;
    *p = f.s + f.n + !last;
    return true;
}

/* The usual shape of a task_events line, or false (tr_parse_task_line_general then decides).
 * The fields are parsed into locals and stored into *out one by one at the end: *out is left
 * untouched on failure, and a whole-struct copy of a row just written in pieces would reread
 * it in other widths than it was written (store forwarding fails). */
static bool task_line_fast(const char *line, size_t len, struct tr_task_memo *memo,
                           struct tr_task_row *out)
{
    const char *p = line, *end = line + len, *tail;
    struct field f;
    uint64_t v, job_id, machine_id = 0;
    int64_t time;
    uint32_t task_index;
    int missing, type, cls, prio, diff;
    bool has_machine, has_cpu, has_mem, has_disk, has_req;
    double cpu, mem, disk;
    size_t tn;

    if (!(p = fast_digits(p, end, 19, &v)) || p == end || *p++ != ',')
        return false;
    time = v >= (uint64_t)TR_TIME_AFTER ? TR_TIME_AFTER : (int64_t)v;
    if (!(p = fast_code(p, end, 2, true, false, &missing)))
        return false;
    if (!(p = fast_digits(p, end, 18, &job_id)) || p == end || *p++ != ',')
        return false;
    if (!(p = fast_digits(p, end, 9, &v)) || p == end || *p++ != ',')
        return false;
    task_index = (uint32_t)v;
    has_machine = p < end && *p != ',';
    if (has_machine && !(p = fast_digits(p, end, 18, &machine_id)))
        return false;
    if (p == end || *p++ != ',')
        return false;
    if (!(p = fast_code(p, end, TR_N_TYPES - 1, false, false, &type)))
        return false;
    tail = p;
    tn = (size_t)(end - p);
    if (memo != NULL && memo->n != 0 && memo->n == tn && memcmp(memo->tail, tail, tn) == 0) {
        cpu = memo->cpu;
        mem = memo->mem;
        disk = memo->disk;
        cls = memo->sched_class;
        prio = memo->priority;
        diff = memo->diff_machines;
        has_req = memo->has_req;
        goto store;
    }
    if (!fast_field(p, end, false, &f) || get_hash(f, AT(task_names, 7), NULL) != 0)
        return false;
    p = f.s + f.n + 1;
    if (!(p = fast_code(p, end, 3, true, false, &cls)))
        return false;
    if (end - p >= 3 && p[0] == '1' && (p[1] == '0' || p[1] == '1') && p[2] == ',') {
        prio = 10 + (p[1] - '0'); /* priorities 10 and 11 */
        p += 3;
    } else if (!(p = fast_code(p, end, 9, false, false, &prio))) {
        return false;
    }
    if (!fast_f64(&p, end, false, &cpu, &has_cpu) || !fast_f64(&p, end, false, &mem, &has_mem) ||
        !fast_f64(&p, end, false, &disk, &has_disk) || !fast_code(p, end, 1, true, true, &diff))
        return false;
    has_req = has_cpu || has_mem || has_disk;
    if (memo != NULL) {
        memo->n = tn <= sizeof(memo->tail) ? tn : 0;
        if (memo->n != 0)
            memcpy(memo->tail, tail, tn);
        memo->cpu = cpu;
        memo->mem = mem;
        memo->disk = disk;
        memo->sched_class = (int8_t)cls;
        memo->priority = (uint8_t)prio;
        memo->diff_machines = (int8_t)diff;
        memo->has_req = has_req;
    }
store:
    out->time = time;
    out->job_id = job_id;
    out->machine_id = machine_id;
    out->cpu = cpu;
    out->mem = mem;
    out->disk = disk;
    out->task_index = task_index;
    out->missing = (int8_t)missing;
    out->has_machine = has_machine;
    out->type = (uint8_t)type;
    out->sched_class = (int8_t)cls;
    out->priority = (uint8_t)prio;
    out->has_req = has_req;
    out->diff_machines = (int8_t)diff;
    return true;
}

int tr_parse_task_line(const char *line, size_t len, struct tr_task_row *out, struct lt_err *err)
{
    return tr_parse_task_line_memo(line, len, NULL, out, err);
}

int tr_parse_task_line_memo(const char *line, size_t len, struct tr_task_memo *memo,
                            struct tr_task_row *out, struct lt_err *err)
{
    if (task_line_fast(line, len, memo, out))
        return 0;
    return tr_parse_task_line_general(line, len, out, err);
}

int tr_parse_task_line_general(const char *line, size_t len, struct tr_task_row *out,
                               struct lt_err *err)
{
    struct field f[TASK_FIELDS];
    struct tr_task_row r;
    uint64_t index;
    bool has_cpu, has_mem, has_disk;
    int missing, type, cls, prio, diff, rc;

    if ((rc = split(line, len, f, TASK_FIELDS, err)) < 0)
        return rc;
    if ((rc = get_time(f[0], AT(task_names, 1), &r.time, err)) < 0 ||
        (rc = get_code(f[1], AT(task_names, 2), 2, false, &missing, err)) < 0 ||
        (rc = get_id(f[2], AT(task_names, 3), &r.job_id, NULL, err)) < 0 ||
        (rc = get_uint(f[3], AT(task_names, 4), UINT32_MAX, "0..4294967295", &index, NULL, err)) <
            0 ||
        (rc = get_id(f[4], AT(task_names, 5), &r.machine_id, &r.has_machine, err)) < 0 ||
        (rc = get_code(f[5], AT(task_names, 6), TR_N_TYPES - 1, true, &type, err)) < 0 ||
        (rc = get_hash(f[6], AT(task_names, 7), err)) < 0 ||
        (rc = get_code(f[7], AT(task_names, 8), 3, false, &cls, err)) < 0 ||
        (rc = get_code(f[8], AT(task_names, 9), 11, true, &prio, err)) < 0 ||
        (rc = get_f64(f[9], AT(task_names, 10), &r.cpu, &has_cpu, err)) < 0 ||
        (rc = get_f64(f[10], AT(task_names, 11), &r.mem, &has_mem, err)) < 0 ||
        (rc = get_f64(f[11], AT(task_names, 12), &r.disk, &has_disk, err)) < 0 ||
        (rc = get_code(f[12], AT(task_names, 13), 1, false, &diff, err)) < 0)
        return rc;
    r.missing = (int8_t)missing;
    r.task_index = (uint32_t)index;
    r.type = (uint8_t)type;
    r.sched_class = (int8_t)cls;
    r.priority = (uint8_t)prio;
    r.has_req = has_cpu || has_mem || has_disk;
    r.diff_machines = (int8_t)diff;
    *out = r;
    return 0;
}
