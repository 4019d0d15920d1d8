/* test_fwht.c - THC's fast Walsh-Hadamard transform (tc_cx_fwht: two radix-4
 * passes inside blocks of 16, then radix-8, radix-4 and radix-2 passes) is,
 * bit for bit, the textbook radix-2 transform (stage h = 1, 2, 4, ...: each
 * pair (a, b) at distance h becomes (a + b, a - b)), for every power of two
 * up to 2^17, on random values over a wide range and on unaligned
 * buffers: each output is the same sums in the same order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "compress/codec_int.h"

static void radix2(float *x, uint64_t n)
{
    for (uint64_t h = 1; h < n; h *= 2)
        for (uint64_t i = 0; i < n; i += 2 * h)
            for (uint64_t j = i; j < i + h; j++) {
                float a = x[j], b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
}

static void fill(float *x, uint64_t n, uint64_t seed, int kind)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = tc_mix64(seed * 1000003u + i);
        double u = (double)(h >> 11) * 0x1.0p-53 * 2 - 1;
        if (kind == 0)
            x[i] = (float)u;
        else /* magnitudes from 2^-40 to 2^40: rounding in every sum */
            x[i] = (float)(u * ldexp(1.0, (int)(h % 81) - 40));
    }
}

static void equals_the_radix2_transform_bit_for_bit(void **state)
{
    (void)state;
    const uint64_t maxn = (uint64_t)1 << 17;
    float *buf = malloc((maxn + 1) * sizeof *buf), *ref = malloc(maxn * sizeof *ref);
    assert_non_null(buf);
    assert_non_null(ref);
    int checked = 0;
    for (uint64_t n = 1; n <= maxn; n *= 2)
        for (int kind = 0; kind < 2; kind++)
            for (int off = 0; off < 2; off++) {
                float *x = buf + off; /* off 1: not 8-byte aligned */
                fill(x, n, n + (uint64_t)kind, kind);
                memcpy(ref, x, n * sizeof *x);
                tc_cx_fwht(x, n);
                radix2(ref, n);
                if (memcmp(x, ref, n * sizeof *x) != 0) {
                    uint64_t i = 0;
                    while (memcmp(&x[i], &ref[i], sizeof *x) == 0)
                        i++;
                    fail_msg("n=%llu kind %d offset %d: coordinate %llu is %.9g, radix-2 gives %.9g",
                             (unsigned long long)n, kind, off, (unsigned long long)i, (double)x[i], (double)ref[i]);
                }
                checked++;
            }
    assert_int_equal(checked, 18 * 4);
    free(buf);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equals_the_radix2_transform_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
