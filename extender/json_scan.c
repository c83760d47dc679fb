/* json_scan.c -- a strict JSON cursor: check and skip values, report types and byte ranges.
 *
 * Design: one pass over the text with no allocation and no recursion. ext_jscan_value keeps
 * the kinds of the containers it is inside as a bit stack (EXT_JSON_MAX_DEPTH bits, 256 bytes
 * on the C stack), so an adversarial nesting costs neither stack frames nor heap. The bytes
 * are classified 16 (SSE2) or 8 (SWAR) at a time: inside a string, the loop stops only at a
 * quote, a backslash, a control character or a non-ASCII byte; escapes and UTF-8 sequences are
 * then checked one by one. Strings are most of a Kubernetes object (keys, labels, names), so
 * this loop is most of the time: about 0.6 ms for the 1.9 MB of a 500-node request. Numbers are
 * checked against the grammar and against Jansson's range checks without converting them: an
 * integer by its digits (at most 19, and not above 2^63-1 / 2^63 for a negative one), a real by its
 * decimal magnitude, and only for a real within a factor of ten of DBL_MAX by comparing its digits
 * with those of the smallest overflowing value, 2^1024 - 2^970 (the midpoint between DBL_MAX and
 * 2^1024, which round-to-nearest-even sends to infinity). json_scan.h states what is accepted;
 * tests/unit/extender/test_json_scan.c has the edge cases and the fuzz target fuzz_extender_json.c
 * compares every input with Jansson.
 *
 * SPDX-License-Identifier: MIT
 */
#include "json_scan.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Byte classes inside a string: what stops the fast loop. PL plain, QU the closing quote, BS a
 * backslash (an escape), CT a control character (refused), HI the first byte of a UTF-8
 * sequence (checked). */
enum { PL = 0, QU, BS, CT, HI };

static const unsigned char str_class[256] = {
    CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, /* 0x00 */
    CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, CT, /* 0x10 */
    PL, PL, QU, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, /* 0x20 */
    PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, /* 0x30 */
    PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, /* 0x40 */
    PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, BS, PL, PL, PL, /* 0x50 */
    PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, /* 0x60 */
    PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, PL, /* 0x70 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0x80 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0x90 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0xa0 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0xb0 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0xc0 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0xd0 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0xe0 */
    HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, HI, /* 0xf0 */
};

/* The digits of 2^1024 - 2^970, the smallest positive decimal that strtod (round to nearest,
 * ties to even) turns into infinity: a real at or above it in magnitude overflows. */
static const char overflow_digits[] =
    "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977"
    "587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845"
    "817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559"
    "699508093042880177904174497792";

/* Saturation bound for exponents: far beyond any magnitude that matters, far below overflow of
 * the int64_t sums made with it. */
#define EXP_CAP 1000000000000LL

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Compact JSON, what kube-scheduler sends, has no whitespace: that case is one test. */
static inline const unsigned char *skip_ws(const unsigned char *p, const unsigned char *end)
{
    if (p<end && * p> ' ')
        return p;
    while (p < end && is_ws(*p))
        p++;
    return p;
}

/* Records the first failure: what, at p. Returns NULL so scanners can `return fail(...)`. */
static const unsigned char *fail(struct ext_jscan *sc, const unsigned char *p, const char *what)
{
    if (sc->err_what == NULL) {
        sc->err_what = what;
        sc->err_off = (size_t)(p - sc->s);
    }
    return NULL;
}

/* Records a failure at p: `what`, unless p is the end of the text or a NUL byte (a cut or a
 * binary body), which are named as such. Returns LT_EPARSE. */
static int fail_at(struct ext_jscan *sc, const unsigned char *p, const char *what)
{
    if (p == sc->s + sc->len)
        what = "unexpected end of input";
    else if (*p == '\0')
        what = "NUL byte outside a string";
    fail(sc, p, what);
    return LT_EPARSE;
}

void ext_jscan_init(struct ext_jscan *sc, const char *s, size_t len)
{
    sc->s = (const unsigned char *)s;
    sc->len = len;
    sc->pos = 0;
    sc->err_off = 0;
    sc->err_what = NULL;
}

int ext_jscan_peek(struct ext_jscan *sc)
{
    const unsigned char *p = skip_ws(sc->s + sc->pos, sc->s + sc->len);

    sc->pos = (size_t)(p - sc->s);
    return sc->pos < sc->len ? *p : -1;
}

/* ------------------------------------------------------------------------------------------
 * Strings
 */

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The code unit of the four hex digits at p (end - p >= 4 checked by the caller), -1 if one is
 * not a hex digit. */
static int32_t hex4(const unsigned char *p)
{
    int32_t v = 0;

    for (int i = 0; i < 4; i++) {
        int h = hex_value(p[i]);

        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Checks the escape at p (a backslash); returns the byte after it. */
static const unsigned char *scan_escape(struct ext_jscan *sc, const unsigned char *p,
                                        const unsigned char *end)
{
    int32_t u, lo;

    if (end - p < 2)
        return fail(sc, end, "unterminated string");
    switch (p[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
        return p + 2;
    case 'u':
        break;
    default:
        return fail(sc, p, "invalid escape");
    }
    if (end - p < 6 || (u = hex4(p + 2)) < 0)
        return fail(sc, p, "invalid \\u escape");
    if (u == 0)
        return fail(sc, p, "\\u0000 in a string");
    if (u >= 0xDC00 && u <= 0xDFFF)
        return fail(sc, p, "unpaired surrogate escape");
    if (u < 0xD800 || u > 0xDBFF)
        return p + 6;
    /* A high surrogate: a low one must follow as the next escape. */
    if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || (lo = hex4(p + 8)) < 0xDC00 || lo > 0xDFFF)
        return fail(sc, p, "unpaired surrogate escape");
    return p + 12;
}

/* Checks the UTF-8 sequence at p (a byte >= 0x80) as Jansson's utf8_check_full does: no
 * overlong forms, no surrogates, nothing above U+10FFFF. Returns the byte after it. */
static const unsigned char *scan_utf8(struct ext_jscan *sc, const unsigned char *p,
                                      const unsigned char *end)
{
    unsigned char c = p[0];
    ptrdiff_t n;

    if (c < 0xC2 || c > 0xF4)
        return fail(sc, p, "invalid UTF-8");
    n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (end - p < n)
        return fail(sc, p, "invalid UTF-8");
    for (ptrdiff_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return fail(sc, p, "invalid UTF-8");
    }
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] > 0x8F))
        return fail(sc, p, "invalid UTF-8");
    return p + n;
}

/* Nonzero if one of the 8 bytes at p is a quote, a backslash, a control character or
 * non-ASCII: the SWAR tests "has a zero byte" ((v - 1s) & ~v & 80s) for v = x ^ '"' and
 * x ^ '\\', "has a byte below 0x20" ((x - 20s) & ~x & 80s) and "has a high bit", each flagging
 * the high bit of a byte. A borrow can flag a byte above (after, in memory) a real hit but
 * never one before it, so the lowest flag of a little-endian load is the first such byte. */
static uint64_t special8(const unsigned char *p)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t x, q, b;

    memcpy(&x, p, sizeof(x));
    q = x ^ (ones * '"');
    b = x ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x) | x) & highs;
}

/* The first byte at or after p that is not plain string content, or end: 16 bytes at a time
 * with SSE2 (as signed bytes, the controls and every byte >= 0x80 are exactly those below
 * 0x20), then 8 at a time, then one by one. */
static inline const unsigned char *string_run(const unsigned char *p, const unsigned char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  low = _mm_set1_epi8(0x20);

    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmplt_epi8(x, low));
        int bits = _mm_movemask_epi8(m);

        if (bits != 0)
            return p + __builtin_ctz((unsigned)bits);
        p += 16;
    }
#endif
    while (end - p >= 8) {
        uint64_t m = special8(p);

        if (m != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + __builtin_ctzll(m) / 8;
#else
            break;
#endif
        }
        p += 8;
    }
    while (p < end && str_class[*p] == PL)
        p++;
    return p;
}

/* Checks the string whose opening quote is at p; returns the byte after the closing quote.
 * *esc is set if it has an escape. */
static inline const unsigned char *scan_string(struct ext_jscan *sc, const unsigned char *p,
                                               const unsigned char *end, bool *esc)
{
    p++;
    for (;;) {
        p = string_run(p, end);
        if (p == end)
            return fail(sc, p, "unterminated string");
        switch (str_class[*p]) {
        case QU:
            return p + 1;
        case BS:
            *esc = true;
            p = scan_escape(sc, p, end);
            break;
        case CT:
            return fail(sc, p, "control character in a string");
        default:
            p = scan_utf8(sc, p, end);
            break;
        }
        if (p == NULL)
            return NULL;
    }
}

/* ------------------------------------------------------------------------------------------
 * Numbers
 */

/* True if the integer text p[0..n) (digits, no sign, no leading zero) exceeds 2^63-1, or 2^63
 * when neg: what makes Jansson's strtoll report ERANGE. */
static bool int_overflows(const unsigned char *p, size_t n, bool neg)
{
    if (n != 19)
        return n > 19;
    return memcmp(p, neg ? "9223372036854775808" : "9223372036854775807", 19) > 0;
}

/* True if the real text p[0..end) (grammar already checked, sign included) rounds to an
 * infinity: |value| >= 2^1024 - 2^970. With value = 0.d1d2... x 10^mag (d1 the first non-zero
 * digit), mag <= 308 is below DBL_MAX and mag >= 310 above 2^1024; only mag == 309 needs the
 * digits compared. */
static bool real_overflows(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *first = NULL, *q;
    int64_t mag = 0, x = 0;
    bool int_part = true, neg_exp = false;
    size_t k = 0;

    if (*p == '-')
        p++;
    for (q = p; q < end && (is_digit(*q) || *q == '.'); q++) {
        if (*q == '.') {
            int_part = false;
        } else if (first == NULL && *q != '0') {
            first = q;
        } else if (first == NULL && !int_part) {
            mag--; /* a zero between the point and the first significant digit */
        }
        if (first != NULL && int_part && *q != '.')
            mag++;
    }
    if (first == NULL)
        return false; /* zero */
    if (q < end) {    /* the exponent */
        q++;
        if (*q == '+' || *q == '-')
            neg_exp = *q++ == '-';
        for (; q < end; q++)
            x = x < EXP_CAP ? x * 10 + (*q - '0') : EXP_CAP;
    }
    mag += neg_exp ? -x : x;
    if (mag != 309)
        return mag > 309;
    for (q = first; q < end && (is_digit(*q) || *q == '.'); q++) {
        if (*q == '.')
            continue;
        if (k == sizeof(overflow_digits) - 1)
            return true; /* equal so far and longer: nothing but zeros would make it equal */
        if (*q != overflow_digits[k])
            return *q > overflow_digits[k];
        k++;
    }
    /* Every digit equal: equal to the bound (a tie, rounded to infinity) if the bound has no
     * digits left, else below it (the bound's last digit is not zero). */
    return k == sizeof(overflow_digits) - 1;
}

/* Checks the number at p; returns the byte after it. */
static const unsigned char *scan_number(struct ext_jscan *sc, const unsigned char *p,
                                        const unsigned char *end)
{
    const unsigned char *start = p, *digits;
    bool real = false, neg = *p == '-';

    if (neg)
        p++;
    digits = p;
    if (p < end && *p == '0') {
        p++;
    } else if (p < end && *p >= '1' && *p <= '9') {
        while (p < end && is_digit(*p))
            p++;
    } else {
        return fail(sc, start, "malformed number");
    }
    if (p < end && *p == '.') {
        p++;
        if (p == end || !is_digit(*p))
            return fail(sc, start, "malformed number");
        while (p < end && is_digit(*p))
            p++;
        real = true;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p == end || !is_digit(*p))
            return fail(sc, start, "malformed number");
        while (p < end && is_digit(*p))
            p++;
        real = true;
    }
    if (!real && int_overflows(digits, (size_t)(p - digits), neg))
        return fail(sc, start, "integer out of range");
    if (real && real_overflows(start, p))
        return fail(sc, start, "real number out of range");
    return p;
}

/* ------------------------------------------------------------------------------------------
 * Values
 */

/* Checks the scalar at p (not a container); returns the byte after it, *type its type. */
static const unsigned char *scan_scalar(struct ext_jscan *sc, const unsigned char *p,
                                        const unsigned char *end, enum ext_jtype *type, bool *esc)
{
    switch (p < end ? *p : -1) {
    case '"':
        *type = EXT_J_STRING;
        return scan_string(sc, p, end, esc);
    case 't':
        *type = EXT_J_TRUE;
        return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : fail(sc, p, "invalid literal");
    case 'f':
        *type = EXT_J_FALSE;
        return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : fail(sc, p, "invalid literal");
    case 'n':
        *type = EXT_J_NULL;
        return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : fail(sc, p, "invalid literal");
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        *type = EXT_J_NUMBER;
        return scan_number(sc, p, end);
    default:
        fail_at(sc, p, "unexpected byte");
        return NULL;
    }
}

int ext_jscan_value(struct ext_jscan *sc, unsigned depth, struct ext_jval *v)
{
    const unsigned char *p = sc->s + sc->pos, *end = sc->s + sc->len;
    uint64_t is_obj[EXT_JSON_MAX_DEPTH / 64 + 1]; /* bit i: container i (0-based) is an object */
    unsigned level = 0;                           /* containers open inside this value */
    bool esc = false, key_esc = false;

    assert(depth >= 1);
    p = skip_ws(p, end);
    v->off = (size_t)(p - sc->s);
    v->type = EXT_J_ABSENT;
    v->esc = false;
value:
    p = skip_ws(p, end);
    if (depth + level > EXT_JSON_MAX_DEPTH)
        return fail_at(sc, p, "nesting deeper than 2048");
    if (p < end && (*p == '{' || *p == '[')) {
        bool obj = *p == '{';

        if (level == 0)
            v->type = obj ? EXT_J_OBJECT : EXT_J_ARRAY;
        p = skip_ws(p + 1, end);
        if (p < end && *p == (obj ? '}' : ']')) {
            p++;
            goto after;
        }
        if (level % 64 == 0)
            is_obj[level / 64] = 0; /* a word is cleared before its first bit is set */
        if (obj)
            is_obj[level / 64] |= (uint64_t)1 << (level % 64);
        else
            is_obj[level / 64] &= ~((uint64_t)1 << (level % 64));
        level++;
        if (obj)
            goto key;
        goto value;
    } else {
        enum ext_jtype t = EXT_J_ABSENT;

        p = scan_scalar(sc, p, end, &t, &esc);
        if (p == NULL)
            return LT_EPARSE;
        if (level == 0) {
            v->type = t;
            v->esc = esc;
        }
        goto after;
    }
key:
    p = skip_ws(p, end);
    if (p == end || *p != '"')
        return fail_at(sc, p, "expected a string key");
    p = scan_string(sc, p, end, &key_esc);
    if (p == NULL)
        return LT_EPARSE;
    p = skip_ws(p, end);
    if (p == end || *p != ':')
        return fail_at(sc, p, "expected ':'");
    p++;
    goto value;
after:
    if (level == 0) {
        sc->pos = (size_t)(p - sc->s);
        v->len = sc->pos - v->off;
        return 0;
    }
    p = skip_ws(p, end);
    {
        bool obj = (is_obj[(level - 1) / 64] >> ((level - 1) % 64)) & 1;

        if (p < end && *p == ',') {
            p++;
            if (obj)
                goto key;
            goto value;
        }
        if (p < end && *p == (obj ? '}' : ']')) {
            p++;
            level--;
            goto after;
        }
        return fail_at(sc, p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

/* ------------------------------------------------------------------------------------------
 * Walking containers
 */

int ext_jscan_open(struct ext_jscan *sc, unsigned depth, struct ext_jval *v)
{
    const unsigned char *p = skip_ws(sc->s + sc->pos, sc->s + sc->len);

    assert(p < sc->s + sc->len && (*p == '{' || *p == '['));
    if (depth > EXT_JSON_MAX_DEPTH)
        return fail_at(sc, p, "nesting deeper than 2048");
    v->type = *p == '{' ? EXT_J_OBJECT : EXT_J_ARRAY;
    v->off = (size_t)(p - sc->s);
    v->len = 0;
    v->esc = false;
    sc->pos = v->off + 1;
    return 0;
}

/* Closes container v at p (its closing byte). */
static int close_at(struct ext_jscan *sc, const unsigned char *p, struct ext_jval *v)
{
    sc->pos = (size_t)(p + 1 - sc->s);
    v->len = sc->pos - v->off;
    return 0;
}

int ext_jscan_member(struct ext_jscan *sc, bool *first, struct ext_jval *obj, struct ext_jval *key)
{
    const unsigned char *p = skip_ws(sc->s + sc->pos, sc->s + sc->len), *end = sc->s + sc->len;
    bool esc = false;

    if (p < end && *p == '}')
        return close_at(sc, p, obj);
    if (!*first) {
        if (p == end || *p != ',')
            return fail_at(sc, p, "expected ',' or '}'");
        p = skip_ws(p + 1, end);
    }
    *first = false;
    if (p == end || *p != '"')
        return fail_at(sc, p, "expected a string key");
    key->type = EXT_J_STRING;
    key->off = (size_t)(p - sc->s);
    p = scan_string(sc, p, end, &esc);
    if (p == NULL)
        return LT_EPARSE;
    key->len = (size_t)(p - sc->s) - key->off;
    key->esc = esc;
    p = skip_ws(p, end);
    if (p == end || *p != ':')
        return fail_at(sc, p, "expected ':'");
    sc->pos = (size_t)(p + 1 - sc->s);
    return 1;
}

int ext_jscan_element(struct ext_jscan *sc, bool *first, struct ext_jval *arr)
{
    const unsigned char *p = skip_ws(sc->s + sc->pos, sc->s + sc->len), *end = sc->s + sc->len;

    if (*first) {
        *first = false;
        if (p < end && *p == ']')
            return close_at(sc, p, arr);
        sc->pos = (size_t)(p - sc->s);
        return 1;
    }
    if (p < end && *p == ']')
        return close_at(sc, p, arr);
    if (p == end || *p != ',')
        return fail_at(sc, p, "expected ',' or ']'");
    sc->pos = (size_t)(p + 1 - sc->s);
    return 1;
}

int ext_jscan_end(struct ext_jscan *sc)
{
    const unsigned char *p = skip_ws(sc->s + sc->pos, sc->s + sc->len), *end = sc->s + sc->len;

    sc->pos = (size_t)(p - sc->s);
    if (p == end)
        return 0;
    return fail_at(sc, p, "trailing bytes after the value");
}

int ext_jscan_fail(struct ext_jscan *sc, const char *what)
{
    return fail_at(sc, skip_ws(sc->s + sc->pos, sc->s + sc->len), what);
}

int ext_jscan_error(const struct ext_jscan *sc, struct lt_err *err)
{
    int64_t line = 1;
    int column = 1;

    for (size_t i = 0; i < sc->err_off && i < sc->len; i++) {
        if (sc->s[i] == '\n') {
            line++;
            column = 1;
        } else if ((sc->s[i] & 0xC0) != 0x80 && column < INT32_MAX) {
            column++;
        }
    }
    return lt_err_set(err, LT_EPARSE, line, column, "%s at byte %zu",
                      sc->err_what ? sc->err_what : "malformed JSON", sc->err_off);
}

/* ------------------------------------------------------------------------------------------
 * String contents
 */

/* Appends code point cp as UTF-8 at out; returns the bytes written. */
static size_t put_utf8(char *out, int32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t ext_jscan_unescape(const struct ext_jscan *sc, const struct ext_jval *v, char *out)
{
    const unsigned char *p = sc->s + v->off + 1, *end = sc->s + v->off + v->len - 1;
    size_t w = 0;

    assert(v->type == EXT_J_STRING && v->len >= 2 && v->off + v->len <= sc->len);
    if (!v->esc) {
        memcpy(out, p, (size_t)(end - p));
        return (size_t)(end - p);
    }
    while (p < end) {
        const unsigned char *run = p;
        int32_t cp;

        while (p < end && *p != '\\')
            p++;
        memcpy(out + w, run, (size_t)(p - run));
        w += (size_t)(p - run);
        if (p == end)
            break;
        switch (p[1]) {
        case 'b':
            out[w++] = '\b';
            break;
        case 'f':
            out[w++] = '\f';
            break;
        case 'n':
            out[w++] = '\n';
            break;
        case 'r':
            out[w++] = '\r';
            break;
        case 't':
            out[w++] = '\t';
            break;
        case 'u':
            cp = hex4(p + 2);
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* checked: a low surrogate follows */
                cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(p + 8) - 0xDC00);
                p += 6;
            }
            w += put_utf8(out + w, cp);
            p += 4;
            break;
        default: /* " \ / */
            out[w++] = (char)p[1];
            break;
        }
        p += 2;
    }
    return w;
}

bool ext_jscan_str_is(const struct ext_jscan *sc, const struct ext_jval *v, const char *lit)
{
    size_t n = strlen(lit), raw = v->len - 2;
    char buf[128];

    assert(n <= 21); /* so that an escaped match (at most 6 raw bytes a byte) fits buf */
    if (!v->esc)
        return raw == n && memcmp(sc->s + v->off + 1, lit, n) == 0;
    if (raw > sizeof(buf))
        return false; /* unescapes to more than 21 bytes */
    return ext_jscan_unescape(sc, v, buf) == n && memcmp(buf, lit, n) == 0;
}

int ext_json_check(const char *s, size_t len, struct ext_jval *top, struct lt_err *err)
{
    struct ext_jscan sc;
    struct ext_jval v = {EXT_J_ABSENT, 0, 0, false};
    int c, rc;

    ext_jscan_init(&sc, s, len);
    c = ext_jscan_peek(&sc);
    if (c != '{' && c != '[') {
        ext_jscan_fail(&sc, "expected '{' or '['");
        return ext_jscan_error(&sc, err);
    }
    rc = ext_jscan_value(&sc, 1, &v);
    if (rc == 0)
        rc = ext_jscan_end(&sc);
    if (rc < 0)
        return ext_jscan_error(&sc, err);
    if (top != NULL)
        *top = v;
    return 0;
}
