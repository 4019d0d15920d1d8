/* test_core.c - units and spec strings parse exactly as documented. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/core.h"

static void sizes_use_powers_of_two_for_iec_and_ten_for_si(void **state)
{
    (void)state;
    double v;
    assert_int_equal(tc_parse_size("64KiB", &v, NULL), TC_OK);
    assert_true(v == 65536.0);
    assert_int_equal(tc_parse_size("1GiB", &v, NULL), TC_OK);
    assert_true(v == 1073741824.0);
    assert_int_equal(tc_parse_size("4MB", &v, NULL), TC_OK);
    assert_true(v == 4e6);
    assert_int_equal(tc_parse_size("512", &v, NULL), TC_OK);
    assert_true(v == 512.0);
    assert_int_equal(tc_parse_size("1.5KiB", &v, NULL), TC_OK);
    assert_true(v == 1536.0);
}

static void sizes_reject_zero_overflow_and_unknown_units(void **state)
{
    (void)state;
    double v;
    tc_err err;
    assert_int_equal(tc_parse_size("0", &v, &err), TC_EINVAL);
    assert_int_equal(tc_parse_size("2000000TiB", &v, &err), TC_EINVAL);
    assert_int_equal(tc_parse_size("5Kb", &v, &err), TC_EINVAL);
    assert_int_equal(tc_parse_size("-1KiB", &v, &err), TC_EINVAL);
    assert_int_equal(tc_parse_size("", &v, &err), TC_EINVAL);
    assert_int_equal(tc_parse_size("nan", &v, &err), TC_EINVAL);
    assert_int_equal(tc_parse_size("inf", &v, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "KiB"));
}

static void rates_accept_bits_and_bytes(void **state)
{
    (void)state;
    double v;
    assert_int_equal(tc_parse_rate("400Gbps", &v, NULL), TC_OK);
    assert_true(v == 50e9);
    assert_int_equal(tc_parse_rate("50GB/s", &v, NULL), TC_OK);
    assert_true(v == 50e9);
    assert_int_equal(tc_parse_rate("0Gbps", &v, NULL), TC_EINVAL);
    assert_int_equal(tc_parse_rate("400Gb", &v, NULL), TC_EINVAL);
}

static void times_accept_ns_us_ms_s(void **state)
{
    (void)state;
    double v;
    assert_int_equal(tc_parse_time("500ns", &v, NULL), TC_OK);
    assert_true(v == 500e-9);
    assert_int_equal(tc_parse_time("1us", &v, NULL), TC_OK);
    assert_true(v == 1e-6);
    assert_int_equal(tc_parse_time("2ms", &v, NULL), TC_OK);
    assert_int_equal(tc_parse_time("0s", &v, NULL), TC_OK);
    assert_true(v == 0);
    assert_int_equal(tc_parse_time("1min", &v, NULL), TC_EINVAL);
}

static void dims_lists_parse_and_reject_gaps(void **state)
{
    (void)state;
    uint32_t d[8];
    int n;
    assert_int_equal(tc_parse_dims("16x8x4", d, 8, &n, NULL), TC_OK);
    assert_int_equal(n, 3);
    assert_int_equal(d[0], 16);
    assert_int_equal(d[2], 4);
    assert_int_equal(tc_parse_dims("16xx4", d, 8, &n, NULL), TC_EINVAL);
    assert_int_equal(tc_parse_dims("16x", d, 8, &n, NULL), TC_EINVAL);
    assert_int_equal(tc_parse_dims("4x0", d, 8, &n, NULL), TC_EINVAL);
    assert_int_equal(tc_parse_dims("1x2x3x4x5x6x7x8x9", d, 8, &n, NULL), TC_EINVAL);
}

static void specs_split_kind_and_keys_and_report_unknown_keys(void **state)
{
    (void)state;
    tc_spec sp;
    tc_err err;
    assert_int_equal(tc_spec_parse("torus:dims=4x4,wrap=1x0", &sp, NULL), TC_OK);
    assert_string_equal(sp.kind, "torus");
    assert_string_equal(tc_spec_get(&sp, "dims"), "4x4");
    assert_int_equal(tc_spec_check_unused(&sp, "torus", "dims, wrap", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "wrap"));
    assert_int_equal(tc_spec_parse("torus:dims", &sp, NULL), TC_EINVAL);
    assert_int_equal(tc_spec_parse("torus:dims=4,dims=5", &sp, NULL), TC_EINVAL);
    assert_int_equal(tc_spec_parse("torus:dims=4,,wrap=1", &sp, NULL), TC_EINVAL);
    assert_int_equal(tc_spec_parse("", &sp, NULL), TC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_use_powers_of_two_for_iec_and_ten_for_si),
        cmocka_unit_test(sizes_reject_zero_overflow_and_unknown_units),
        cmocka_unit_test(rates_accept_bits_and_bytes),
        cmocka_unit_test(times_accept_ns_us_ms_s),
        cmocka_unit_test(dims_lists_parse_and_reject_gaps),
        cmocka_unit_test(specs_split_kind_and_keys_and_report_unknown_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
