/* test_sys.c - the memory check's one line, physical memory, and what the
 * build says about itself (version, commit, build type, optional deps). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "topocc/core.h"

static void physical_memory_is_known_on_linux(void **state)
{
    (void)state;
    double m = tc_mem_physical();
    assert_true(m >= 64e6);
    assert_true(m < 1e15);
}

static void check_passes_without_limit_or_below_it(void **state)
{
    (void)state;
    tc_err err = {{0}};
    assert_int_equal(tc_mem_check(5e12, 0, "the flow simulation", &err), TC_OK);
    assert_int_equal(tc_mem_check(1e9, 1e9, "the flow simulation", &err), TC_OK);
    assert_int_equal(tc_mem_check(0.5e9, 1e9, "the flow simulation", &err), TC_OK);
    assert_string_equal(err.msg, "");
}

static void check_refuses_above_limit_with_the_flag_to_raise_it(void **state)
{
    (void)state;
    tc_err err = {{0}};
    assert_int_equal(tc_mem_check(2.1e9, 1.4e9, "the flow simulation", &err), TC_EINVAL);
    assert_string_equal(err.msg, "the flow simulation needs about 2.1 GB, above the memory limit of 1.4 GB: "
                                 "raise it with --mem-limit 3GB (or simplify the run)");
    assert_null(strchr(err.msg, '\n'));
}

static void check_uses_megabytes_and_enough_decimals_to_differ(void **state)
{
    (void)state;
    tc_err err = {{0}};
    assert_int_equal(tc_mem_check(312.4e6, 256e6, "training", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "training needs about 312 MB"));
    assert_non_null(strstr(err.msg, "limit of 256 MB"));
    assert_non_null(strstr(err.msg, "--mem-limit 313MB"));
    /* 2.04 GB against 2.0 GB would both read "2.0 GB" at one decimal. */
    assert_int_equal(tc_mem_check(2.04e9, 2.0e9, "the run", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "about 2.04 GB, above the memory limit of 2.00 GB"));
}

/* The suggested limit, read back the way the CLI reads --mem-limit, is
 * enough for the run. */
static void suggested_limit_is_enough(void **state)
{
    (void)state;
    const double needs[] = {1.0001e9, 2.1e9, 999.9e6, 45.2e6, 12e3, 7.77e12};
    for (size_t i = 0; i < sizeof needs / sizeof *needs; i++) {
        tc_err err = {{0}};
        assert_int_equal(tc_mem_check(needs[i], needs[i] / 2, "x", &err), TC_EINVAL);
        const char *flag = strstr(err.msg, "--mem-limit ");
        assert_non_null(flag);
        char val[32];
        assert_int_equal(sscanf(flag + strlen("--mem-limit "), "%31s", val), 1);
        double limit;
        assert_int_equal(tc_parse_size(val, &limit, NULL), TC_OK);
        assert_true(limit >= needs[i]);
        assert_int_equal(tc_mem_check(needs[i], limit, "x", &err), TC_OK);
    }
}

static void build_describes_itself(void **state)
{
    (void)state;
    assert_string_equal(tc_version(), "0.3.0");
    assert_true(strlen(tc_commit()) > 0);
    assert_null(strchr(tc_commit(), '\n'));
    const char *bt = tc_build_type();
    assert_true(strlen(bt) > 0);
    assert_non_null(strstr(tc_optional_deps(), "jansson "));
    assert_non_null(strstr(tc_optional_deps(), "zlib "));
    assert_null(strchr(tc_optional_deps(), '\n'));
}

/* gnuplot is found on PATH at run time, not at build time. */
static void gnuplot_is_looked_up_on_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/topocc_sys_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char exe[64];
    snprintf(exe, sizeof exe, "%s/gnuplot", dir);
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(setenv("PATH", dir, 1), 0);
    assert_non_null(strstr(tc_optional_deps(), "gnuplot: not found"));
    FILE *f = fopen(exe, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n", f);
    fclose(f);
    assert_int_equal(chmod(exe, 0755), 0);
    char path[128];
    snprintf(path, sizeof path, "/nonexistent:%s", dir);
    assert_int_equal(setenv("PATH", path, 1), 0);
    assert_non_null(strstr(tc_optional_deps(), "gnuplot: found"));
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    remove(exe);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(physical_memory_is_known_on_linux),
        cmocka_unit_test(check_passes_without_limit_or_below_it),
        cmocka_unit_test(check_refuses_above_limit_with_the_flag_to_raise_it),
        cmocka_unit_test(check_uses_megabytes_and_enough_decimals_to_differ),
        cmocka_unit_test(suggested_limit_is_enough),
        cmocka_unit_test(build_describes_itself),
        cmocka_unit_test(gnuplot_is_looked_up_on_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
