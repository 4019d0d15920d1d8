/* test_core.c - units and spec strings parse exactly as documented; a
 * part's progress reports relayed as its run's; paths compared as files;
 * UTF-8 checked. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <threads.h>
#include "core/blas.h"
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

/* Sizes print with three significant digits, never in exponent notation:
 * whole numbers from 1000 up, and a value that rounds to 1024 of a unit
 * as 1 of the next. */
static void sizes_print_without_exponents_below_unit_boundaries(void **state)
{
    (void)state;
    static const struct {
        double bytes;
        const char *text;
    } cases[] = {
        {0, "0B"},
        {1, "1B"},
        {999, "999B"},
        {1023, "1023B"},
        {1024, "1KiB"},
        {1536, "1.5KiB"},
        {65536, "64KiB"},
        {99.4 * 1024, "99.4KiB"},
        {999.4 * 1024, "999KiB"},
        {999.6 * 1024, "1000KiB"},
        {1000.5 * 1024, "1000KiB"},
        {1023.4 * 1024, "1023KiB"},
        {1048320, "1MiB"},             /* 1023.75KiB: an all-to-all's 1MiB on 72 ranks */
        {1048575, "1MiB"},             /* 1MiB - 1 */
        {1048576, "1MiB"},
        {33554304, "32MiB"},           /* 31.9999MiB */
        {1073741184, "1GiB"},          /* 1023.9999MiB */
        {1073741823, "1GiB"},          /* 1GiB - 1 */
        {1073741824.0 * 1023.6, "1TiB"}, /* 1023.6GiB */
        {1099511627776.0, "1TiB"},
        {1152921504606846976.0, "1EiB"}, /* 2^60, the largest size */
        {1152921504606846975.0, "1EiB"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc_fmt_size(cases[i].bytes, buf, sizeof buf);
        if (strcmp(buf, cases[i].text) != 0)
            fail_msg("tc_fmt_size(%.17g) = '%s', expected '%s'", cases[i].bytes, buf, cases[i].text);
    }
}

/* A time prints in its magnitude's unit, a negative one too (train's
 * slowdown of a rank that runs faster than nominal: -1.636us, not
 * -1.64e+03ns). */
static void times_print_in_their_magnitudes_unit(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(tc_fmt_time(500e-9, buf, sizeof buf), "500ns");
    assert_string_equal(tc_fmt_time(-500e-9, buf, sizeof buf), "-500ns");
    assert_string_equal(tc_fmt_time(1.636e-6, buf, sizeof buf), "1.636us");
    assert_string_equal(tc_fmt_time(-1.636e-6, buf, sizeof buf), "-1.636us");
    assert_string_equal(tc_fmt_time(-2.5e-3, buf, sizeof buf), "-2.5ms");
    assert_string_equal(tc_fmt_time(-3.0, buf, sizeof buf), "-3s");
    assert_string_equal(tc_fmt_time(0, buf, sizeof buf), "0ns");
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
    assert_int_equal(tc_spec_parse("torus:dims=4,wrap=1,", &sp, NULL), TC_EINVAL);
    assert_int_equal(tc_spec_parse("torus:,dims=4", &sp, NULL), TC_EINVAL); /* a leading empty item too */
    assert_int_equal(tc_spec_parse("", &sp, NULL), TC_EINVAL);
}

/* ---- progress relayed from a part to its run ---- */

typedef struct got {
    int n;
    tc_progress last;
    char what[256], unit[32], detail[512];
} got;

static void keep(void *ud, const tc_progress *p)
{
    got *g = ud;
    g->n++;
    g->last = *p;
    snprintf(g->what, sizeof g->what, "%s", p->what ? p->what : "(null)");
    snprintf(g->unit, sizeof g->unit, "%s", p->unit ? p->unit : "(null)");
    snprintf(g->detail, sizeof g->detail, "%s", p->detail ? p->detail : "(null)");
}

static void a_part_reports_as_its_run_with_its_own_figure_in_the_detail(void **state)
{
    (void)state;
    got g = {0};
    tc_progress_relay r;
    tc_progress_relay_start(&r, keep, &g, "compare", "cells", 8);
    tc_progress_relay_report(&r, 0);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.what, "compare");
    assert_string_equal(g.detail, "(null)");
    assert_true(g.last.fraction == 0 && g.last.total == 8);
    tc_progress_relay_part(&r, 2, "%s on %s", "allreduce", "B");
    tc_progress inner = {.what = "flow simulation", .fraction = 0.42, .done = 42, .total = 100, .unit = "transfers",
                         .mem_bytes = 1e9};
    tc_progress_relay_cb(&r, &inner);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.what, "compare");
    assert_string_equal(g.unit, "cells");
    assert_string_equal(g.detail, "allreduce on B: 42% of flow simulation");
    assert_true(g.last.done == 2 && g.last.total == 8 && g.last.fraction == 0.25);
    assert_true(g.last.mem_bytes == 1e9);
    /* a part's report of unknown extent: its count */
    tc_progress open = {.what = "replay", .fraction = -1, .done = 7, .unit = "jobs"};
    tc_progress_relay_cb(&r, &open);
    assert_string_equal(g.detail, "allreduce on B: replay, 7 jobs");
    tc_progress_relay_report(&r, 3);
    assert_string_equal(g.detail, "(null)");
    assert_true(g.last.done == 3);
}

static void a_part_renamed_keeps_its_own_figures(void **state)
{
    (void)state;
    got g = {0};
    tc_progress_relay r;
    tc_progress_relay_start(&r, keep, &g, "flow simulation of ring at 1MiB", NULL, 0);
    tc_progress inner = {.what = "flow simulation", .fraction = 0.5, .done = 5, .total = 10, .unit = "transfers"};
    tc_progress_relay_cb(&r, &inner);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.what, "flow simulation of ring at 1MiB");
    assert_string_equal(g.unit, "transfers");
    assert_true(g.last.fraction == 0.5 && g.last.done == 5 && g.last.total == 10);
    /* no callback: nothing, and no crash */
    tc_progress_relay_start(&r, NULL, NULL, "compare", "cells", 1);
    tc_progress_relay_cb(&r, &inner);
    tc_progress_relay_report(&r, 1);
    assert_int_equal(g.n, 1);
}

/* Paths that name one file are one file however they are spelled, whether
 * the file exists yet or not. */
static void same_file_compares_files_not_text(void **state)
{
    (void)state;
    char dir[] = "/tmp/topocc_same_file_XXXXXX", cwd[4096], p[4200], q[4200];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    /* not there yet */
    assert_true(tc_same_file("a.json", "./a.json"));
    snprintf(p, sizeof p, "%s/a.json", dir);
    assert_true(tc_same_file("a.json", p));
    assert_false(tc_same_file("a.json", "b.json"));
    assert_true(tc_same_file("no/such/x", "no/such/./y/../x"));
    assert_true(tc_same_file("d", "d/"));
    assert_true(tc_same_file("no/d", "no//d//"));
    /* a dangling link names the file writing through it creates */
    assert_int_equal(symlink("a.json", "l.json"), 0);
    assert_true(tc_same_file("l.json", "a.json"));
    /* there: a link, a hard link, a path through a directory */
    FILE *f = fopen("a.json", "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(link("a.json", "h.json"), 0);
    assert_int_equal(mkdir("sub", 0777), 0);
    assert_true(tc_same_file("l.json", "a.json"));
    assert_true(tc_same_file("h.json", "./a.json"));
    assert_true(tc_same_file("sub/../a.json", "a.json"));
    assert_false(tc_same_file("sub/a.json", "a.json"));
    /* where a path will lead once its missing directories are made: ".."
     * after a name not there yet by name, through a link as the system
     * resolves it (ld/.. is sub, not the directory the link is in) */
    char a[4200], b[4200], rdir[PATH_MAX];
    assert_non_null(realpath(dir, rdir)); /* /tmp may be a link */
    assert_true(tc_future_path("new/../new/x", a, sizeof a));
    snprintf(b, sizeof b, "%s/new/x", rdir);
    assert_string_equal(a, b);
    assert_int_equal(mkdir("sub/deep", 0777), 0);
    assert_int_equal(symlink("sub/deep", "ld"), 0);
    assert_true(tc_future_path("ld/../x", a, sizeof a));
    snprintf(b, sizeof b, "%s/sub/x", rdir);
    assert_string_equal(a, b);
    assert_true(tc_future_path("ld/nd/./../y/", a, sizeof a));
    snprintf(b, sizeof b, "%s/sub/deep/y", rdir);
    assert_string_equal(a, b);
    assert_true(tc_future_path("/", a, sizeof a));
    assert_string_equal(a, "/");
    assert_false(tc_future_path("", a, sizeof a));
    assert_int_equal(chdir(cwd), 0);
    const char *names[] = {"a.json", "h.json", "l.json", "ld", "sub/deep"};
    for (int i = 0; i < 4; i++) {
        snprintf(q, sizeof q, "%s/%s", dir, names[i]);
        unlink(q);
    }
    snprintf(q, sizeof q, "%s/sub/deep", dir);
    rmdir(q);
    snprintf(q, sizeof q, "%s/sub", dir);
    rmdir(q);
    rmdir(dir);
}

/* UTF-8 as JSON takes it: overlong forms, surrogates, code points above
 * U+10FFFF and cut sequences are not, and the first bad byte is named. */
static void utf8_is_checked_as_json_reads_it(void **state)
{
    (void)state;
    size_t bad = 99;
    assert_true(tc_utf8_valid("", &bad));
    assert_true(tc_utf8_valid("ring", &bad));
    assert_true(tc_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", &bad));
    assert_false(tc_utf8_valid("t\xff.json", &bad));
    assert_int_equal(bad, 1);
    assert_false(tc_utf8_valid("ab\xc0\x80", &bad)); /* overlong NUL */
    assert_int_equal(bad, 2);
    assert_false(tc_utf8_valid("\xe0\x80\xaf", &bad)); /* overlong '/' */
    assert_false(tc_utf8_valid("\xed\xa0\x80", &bad)); /* a surrogate */
    assert_false(tc_utf8_valid("\xf4\x90\x80\x80", &bad)); /* above U+10FFFF */
    assert_false(tc_utf8_valid("x\xe2\x82", &bad)); /* cut short */
    assert_int_equal(bad, 1);
    assert_false(tc_utf8_valid("\x80", NULL)); /* a continuation alone */
}

/* An error is one line whatever the input it quotes: a name or a value
 * with a newline or another control character in it is quoted with '?'
 * in its place. */
/* OpenBLAS opened by several threads at once, the first use of it in this
 * process: every one of them finds it loaded (one opens it, the others wait;
 * a thread that came while another was opening it used to fail). */
static atomic_int blas_go;
static int blas_loader(void *arg)
{
    tc_err err;
    while (!atomic_load(&blas_go))
        thrd_yield();
    *(tc_status *)arg = tc_blas_load(&err);
    return 0;
}
static void blas_loads_once_from_any_thread(void **state)
{
    (void)state;
    enum { N = 8 };
    thrd_t th[N];
    tc_status st[N];
    for (int i = 0; i < N; i++) {
        st[i] = TC_EINTERNAL;
        assert_int_equal(thrd_create(&th[i], blas_loader, &st[i]), thrd_success);
    }
    atomic_store(&blas_go, 1);
    for (int i = 0; i < N; i++) {
        assert_int_equal(thrd_join(th[i], NULL), thrd_success);
        assert_int_equal(st[i], TC_OK);
    }
}

/* Notes go to the handler the caller set, one line each; NULL drops
 * them; tc_note_stderr is the default. */
static void note_capture(void *ud, const char *text)
{
    char *buf = ud;
    snprintf(buf + strlen(buf), 256 - strlen(buf), "[%s]", text);
}
static void notes_go_to_the_handler(void **state)
{
    (void)state;
    char buf[256] = "";
    tc_set_note_handler(note_capture, buf);
    tc_note("%s ends in a torn line", "r.jsonl");
    tc_note("a\nb");
    assert_string_equal(buf, "[r.jsonl ends in a torn line][a?b]");
    tc_set_note_handler(NULL, NULL);
    tc_note("dropped");
    assert_string_equal(buf, "[r.jsonl ends in a torn line][a?b]");
    tc_set_note_handler(tc_note_stderr, NULL);
}

static void errors_stay_one_line_whatever_they_quote(void **state)
{
    (void)state;
    tc_err err;
    assert_int_equal(tc_fail(&err, TC_EINVAL, "cannot open '%s': %s", "a\nb\r.json", "gone\t"), TC_EINVAL);
    assert_string_equal(err.msg, "cannot open 'a?b?.json': gone?");
    assert_int_equal(tc_fail(&err, TC_EINVAL, "bad size '%s'", "64\x1b[2J\x7f"), TC_EINVAL);
    assert_string_equal(err.msg, "bad size '64?[2J?'");
    /* UTF-8 text is left as it is */
    assert_int_equal(tc_fail(&err, TC_EINVAL, "%s", "caf\xc3\xa9"), TC_EINVAL);
    assert_string_equal(err.msg, "caf\xc3\xa9");
    double v;
    assert_int_equal(tc_parse_size("1\nMiB", &v, &err), TC_EINVAL);
    assert_null(strchr(err.msg, '\n'));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_use_powers_of_two_for_iec_and_ten_for_si),
        cmocka_unit_test(sizes_reject_zero_overflow_and_unknown_units),
        cmocka_unit_test(sizes_print_without_exponents_below_unit_boundaries),
        cmocka_unit_test(times_print_in_their_magnitudes_unit),
        cmocka_unit_test(rates_accept_bits_and_bytes),
        cmocka_unit_test(times_accept_ns_us_ms_s),
        cmocka_unit_test(dims_lists_parse_and_reject_gaps),
        cmocka_unit_test(specs_split_kind_and_keys_and_report_unknown_keys),
        cmocka_unit_test(a_part_reports_as_its_run_with_its_own_figure_in_the_detail),
        cmocka_unit_test(a_part_renamed_keeps_its_own_figures),
        cmocka_unit_test(same_file_compares_files_not_text),
        cmocka_unit_test(utf8_is_checked_as_json_reads_it),
        cmocka_unit_test(errors_stay_one_line_whatever_they_quote),
        cmocka_unit_test(notes_go_to_the_handler),
        cmocka_unit_test(blas_loads_once_from_any_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
