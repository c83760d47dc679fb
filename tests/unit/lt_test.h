/* lt_test.h -- included first by every unit test: cmocka's prerequisites, lt_assert_near.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_TEST_H
#define LT_TEST_H
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* Fails the test unless |a - b| <= eps; a NaN never passes. Prints both values in full. */
#define lt_assert_near(a, b, eps)                                                                  \
    lt_test_near((double)(a), (double)(b), (double)(eps), #a, #b, __FILE__, __LINE__)

static inline void lt_test_near(double a, double b, double eps, const char *sa, const char *sb,
                                const char *file, int line)
{
    if (!(fabs(a - b) <= eps)) {
        print_error("%s = %.17g and %s = %.17g differ by more than %g\n", sa, a, sb, b, eps);
        _fail(file, line);
    }
}
#endif
