/* quantity.c -- Kubernetes resource.Quantity strings to exact integers.
 *
 * Source: k8s.io/apimachinery pkg/api/resource/quantity.go (parseQuantityString, ParseQuantity,
 *   ScaledValue) and suffix.go (the suffix table), read at kubernetes/apimachinery 357557a and
 *   kubernetes/kubernetes 7125a5f.
 * Grammar: [+-] then digits [. digits] (either side may be empty: "1.", ".5", even "+" and "."
 *   parse as 0, as in Go), then letters from "eEinumkKMGTP", an optional sign and digits; the
 *   suffix is a table entry (n u m "" k M G T P E, Ki Mi Gi Ti Pi Ei) or e/E plus a signed
 *   integer. "1E" is 10^18, "1E3" is 1000, "1e" and "1K" are errors.
 * Rounding: Go keeps the exact decimal value, rounded away from zero to a multiple of 10^-9,
 *   and MilliValue/Value round up (ceil). We do the same with a decimal digit string: shift the
 *   point for powers of ten, double the string k times for 2^k, then cut it into whole units
 *   and nanos, adding one nano when any digit below 10^-9 is non-zero.
 * Differences from Go, all on input Kubernetes' API validation rejects or never produces:
 *   negative values are errors; values above 2^63-1 units are errors (Go keeps large decimal
 *   values and silently caps binary ones at 2^63-1); exponents beyond +-2^31 are taken at face
 *   value (Go truncates them to int32); strings over EXT_QTY_MAX_LEN bytes are errors.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ext_codec.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NANO 1000000000

/* Digits of a working value: the input's at most EXT_QTY_MAX_LEN digits, plus the at most 19
 * that doubling 60 times (Ei = 2^60) can add, plus margin. */
#define DIGITS_MAX (EXT_QTY_MAX_LEN + 32)

/* Exponents are clamped to this magnitude: with at most DIGITS_MAX digits, 10^100 already
 * overflows int64 for any non-zero value and 10^-100 already rounds to one nano. */
#define EXP_CLAMP 100

/* A scanned quantity: the pieces of parseQuantityString. */
struct scan {
    bool negative;
    const char *num; /* integer digits without leading zeros */
    size_t num_len;
    const char *frac; /* fraction digits */
    size_t frac_len;
    const char *suffix;
    size_t suffix_len;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static size_t digits_end(const char *s, size_t i, size_t end)
{
    while (i < end && is_digit(s[i]))
        i++;
    return i;
}

/* Splits s[0..end) like parseQuantityString; false if it does not match the grammar. */
static bool scan_quantity(const char *s, size_t end, struct scan *sc)
{
    size_t i = 0, j;

    memset(sc, 0, sizeof(*sc));
    if (i < end && (s[i] == '-' || s[i] == '+'))
        sc->negative = s[i++] == '-';
    while (i < end && s[i] == '0')
        i++;
    j = digits_end(s, i, end);
    sc->num = s + i;
    sc->num_len = j - i;
    i = j;
    if (i < end && s[i] == '.') {
        j = digits_end(s, ++i, end);
        sc->frac = s + i;
        sc->frac_len = j - i;
        i = j;
    }
    sc->suffix = s + i;
    while (i < end && strchr("eEinumkKMGTP", s[i]) != NULL)
        i++;
    if (i < end && (s[i] == '-' || s[i] == '+'))
        i++;
    i = digits_end(s, i, end);
    sc->suffix_len = (size_t)(s + i - sc->suffix);
    return i == end;
}

/* A suffix of the table: base 10 or 2 and the exponent. */
struct suffix {
    const char *text;
    int base;
    int exp;
};

static const struct suffix suffixes[] = {
    {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},  {"M", 10, 6},
    {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
    {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
};

/* Interprets a suffix as suffixHandler.interpret does; false if it is not one. */
static bool interpret_suffix(const char *s, size_t len, int *base, int *exp)
{
    int64_t x = 0;
    size_t i = 1;
    bool neg = false;

    for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
        if (strlen(suffixes[k].text) == len && memcmp(suffixes[k].text, s, len) == 0) {
            *base = suffixes[k].base;
            *exp = suffixes[k].exp;
            return true;
        }
    }
    if (len < 2 || (s[0] != 'e' && s[0] != 'E'))
        return false;
    /* strconv.ParseInt(s[1:], 10, 64): an optional sign, then at least one digit. */
    if (s[i] == '+' || s[i] == '-')
        neg = s[i++] == '-';
    if (i == len)
        return false;
    for (; i < len; i++) {
        if (!is_digit(s[i]))
            return false;
        if (x > (INT64_MAX - (s[i] - '0')) / 10)
            return false; /* ParseInt fails with ErrRange */
        x = x * 10 + (s[i] - '0');
    }
    if (x > EXP_CLAMP)
        x = EXP_CLAMP;
    *base = 10;
    *exp = neg ? -(int)x : (int)x;
    return true;
}

/* d[0..*n) *= 2, most significant digit first; the caller guarantees room for one more. */
static void digits_double(uint8_t *d, size_t *n, int *point)
{
    int carry = 0;

    for (size_t i = *n; i-- > 0;) {
        int v = d[i] * 2 + carry;

        d[i] = (uint8_t)(v % 10);
        carry = v / 10;
    }
    if (carry) {
        memmove(d + 1, d, *n);
        d[0] = (uint8_t)carry;
        (*n)++;
        (*point)++;
    }
}

/* Cuts digits d[0..n) with the decimal point after `point` digits into *out, rounding up to
 * the nano. False if the whole part exceeds INT64_MAX. */
static bool digits_to_qty(const uint8_t *d, size_t n, int point, struct ext_qty *out)
{
    int64_t units = 0;
    int32_t nano = 0;
    bool rest = false;

    for (int i = 0; i < point; i++) {
        int v = (size_t)i < n ? d[i] : 0;

        if (units > (INT64_MAX - v) / 10)
            return false;
        units = units * 10 + v;
    }
    for (int i = point; i < (int)n; i++) {
        int k = i - point; /* fraction digit index: 0 is tenths */

        if (i < 0)
            continue; /* a leading zero below the point, contributes nothing */
        if (k < 9) {
            int32_t scale = 1;

            for (int z = k; z < 8; z++)
                scale *= 10;
            nano += d[i] * scale;
        } else if (d[i] != 0) {
            rest = true;
        }
    }
    if (rest && ++nano == NANO) {
        nano = 0;
        if (units == INT64_MAX)
            return false;
        units++;
    }
    out->units = units;
    out->nano = nano;
    return true;
}

int ext_qty_parse(const char *s, size_t len, struct ext_qty *out, const char *path,
                  struct lt_err *err)
{
    uint8_t d[DIGITS_MAX + 1];
    size_t n = 0;
    int point, base, exp;
    struct scan sc;

    if (path == NULL)
        path = "quantity";
    while (len > 0 && is_blank(s[0]))
        s++, len--;
    while (len > 0 && is_blank(s[len - 1]))
        len--;
    if (len == 0)
        return lt_err_set(err, LT_EPARSE, 0, 0, "%s: empty quantity", path);
    if (len > EXT_QTY_MAX_LEN)
        return lt_err_set(err, LT_ERANGE, 0, 0, "%s: quantity longer than %d bytes", path,
                          EXT_QTY_MAX_LEN);
    if (!scan_quantity(s, len, &sc))
        return lt_err_set(err, LT_EPARSE, 0, 0,
                          "%s: malformed quantity '%.*s' (expected a number and a suffix "
                          "such as 100m, 1.5, 64Mi, 2G or 1e3)",
                          path, (int)len, s);
    if (!interpret_suffix(sc.suffix, sc.suffix_len, &base, &exp))
        return lt_err_set(err, LT_EPARSE, 0, 0,
                          "%s: unknown suffix '%.*s' in quantity '%.*s' (known: n, u, m, k, M, "
                          "G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, e<exponent>)",
                          path, (int)sc.suffix_len, sc.suffix, (int)len, s);
    for (size_t i = 0; i < sc.num_len; i++)
        d[n++] = (uint8_t)(sc.num[i] - '0');
    for (size_t i = 0; i < sc.frac_len; i++)
        d[n++] = (uint8_t)(sc.frac[i] - '0');
    point = (int)sc.num_len;
    if (base == 2) {
        for (int k = 0; k < exp; k++)
            digits_double(d, &n, &point);
    } else {
        point += exp;
    }
    if (!digits_to_qty(d, n, point, out))
        return lt_err_set(err, LT_ERANGE, 0, 0,
                          "%s: quantity '%.*s' exceeds 9223372036854775807 units", path, (int)len,
                          s);
    if (sc.negative && (out->units != 0 || out->nano != 0))
        return lt_err_set(err, LT_ERANGE, 0, 0, "%s: negative quantity '%.*s'", path, (int)len, s);
    return 0;
}

int ext_qty_add(struct ext_qty *acc, const struct ext_qty *q)
{
    int64_t units;
    int32_t nano = acc->nano + q->nano;

    if (acc->units > INT64_MAX - q->units)
        return LT_ERANGE;
    units = acc->units + q->units;
    if (nano >= NANO) {
        if (units == INT64_MAX)
            return LT_ERANGE;
        units++;
        nano -= NANO;
    }
    acc->units = units;
    acc->nano = nano;
    return 0;
}

int ext_qty_cmp(const struct ext_qty *a, const struct ext_qty *b)
{
    if (a->units != b->units)
        return a->units < b->units ? -1 : 1;
    if (a->nano != b->nano)
        return a->nano < b->nano ? -1 : 1;
    return 0;
}

int ext_qty_milli(const struct ext_qty *q, int64_t *out)
{
    int64_t milli = (q->nano + 999999) / 1000000; /* ceil of the nanos in millis, <= 1000 */

    if (q->units > (INT64_MAX - milli) / 1000)
        return LT_ERANGE;
    *out = q->units * 1000 + milli;
    return 0;
}

int ext_qty_value(const struct ext_qty *q, int64_t *out)
{
    if (q->nano > 0 && q->units == INT64_MAX)
        return LT_ERANGE;
    *out = q->units + (q->nano > 0);
    return 0;
}
