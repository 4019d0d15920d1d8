/* test_progress.c - the CLI's progress renderer (src/cli/progress.c, built
 * in here): silent at first, a bar redrawn in place on a terminal, a line
 * every 10 s in a log (TOPOCC_PROGRESS_INTERVAL), the part under way after
 * the figures, nothing when quiet. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cli/progress.c"

/* The renderer's clock, driven by the test. */
static double fake_t;
static double fake_clock(void)
{
    return fake_t;
}

static void setup(cli_progress *p, bool tty, bool quiet)
{
    fake_t = 100;
    tc_err err;
    unsetenv("TOPOCC_PROGRESS_INTERVAL");
    assert_int_equal(cli_progress_init(p, quiet, &err), TC_OK);
    p->out = tmpfile();
    assert_non_null(p->out);
    p->tty = tty;
    p->cols = 100;
    p->clock = fake_clock;
    p->start = fake_t;
}

/* What was written so far (the stream stays open). */
static const char *written(cli_progress *p, char *buf, size_t len)
{
    fflush(p->out);
    long n = ftell(p->out);
    rewind(p->out);
    size_t got = fread(buf, 1, len - 1, p->out);
    buf[got] = '\0';
    fseek(p->out, n, SEEK_SET);
    return buf;
}

static tc_progress report(double done, double total)
{
    return (tc_progress){.what = "flow simulation", .fraction = total > 0 ? done / total : -1, .done = done,
                         .total = total, .unit = "transfers", .rate = 1e6, .mem_bytes = 2.5e9};
}

static void terminal_bar_after_one_second_then_cleared(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, true, false);
    tc_progress r = report(1e6, 3e6);
    fake_t = 100.5;
    cli_progress_cb(&p, &r);
    assert_string_equal(written(&p, buf, sizeof buf), "");
    fake_t = 101.2;
    r = report(1.2e6, 3e6);
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_true(buf[0] == '\r');
    assert_null(strchr(buf, '\n'));
    assert_non_null(strstr(buf, "flow simulation"));
    assert_non_null(strstr(buf, " 40% [########............] "));
    assert_non_null(strstr(buf, "1.2M/3M transfers"));
    assert_non_null(strstr(buf, "1M/s"));
    assert_non_null(strstr(buf, "ETA 2s"));
    assert_non_null(strstr(buf, "mem 2.5 GB"));
    size_t first = strlen(buf);
    cli_progress_done(&p);
    written(&p, buf, sizeof buf);
    /* Cleared: blanks over the bar, the cursor back at the start. */
    assert_true(strlen(buf) == 2 * first + 1);
    assert_true(buf[strlen(buf) - 1] == '\r');
    assert_null(strchr(buf, '\n'));
    fclose(p.out);
}

static void terminal_bar_fits_the_width(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, true, false);
    p.cols = 30;
    tc_progress r = report(5, 10);
    fake_t = 102;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_int_equal(strlen(buf), 1 + 29);
    fclose(p.out);
}

/* On a narrow terminal the bar goes first, the figures stay. */
static void narrow_terminal_drops_the_bar(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, true, false);
    p.cols = 72;
    tc_progress r = report(1.2e6, 3e6);
    fake_t = 102;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_null(strchr(buf, '['));
    assert_true(strlen(buf) <= 72);
    assert_non_null(strstr(buf, "ETA 2s mem 2.5 GB"));
    fclose(p.out);
}

static void log_line_every_ten_seconds(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, false, false);
    tc_progress r = report(1e6, 4e6);
    for (fake_t = 100; fake_t < 109.9; fake_t += 0.25)
        cli_progress_cb(&p, &r);
    assert_string_equal(written(&p, buf, sizeof buf), "");
    fake_t = 110;
    cli_progress_cb(&p, &r);
    assert_string_equal(written(&p, buf, sizeof buf),
                        "topocc: flow simulation: 25% (1M/4M transfers), 1M transfers/s, ETA 3s\n");
    fake_t = 115;
    cli_progress_cb(&p, &r);
    fake_t = 120.1;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_int_equal(strchr(buf, '\n') - buf + 1, (long)strlen(buf) / 2);
    cli_progress_done(&p);
    assert_null(strchr(written(&p, buf, sizeof buf), '\r'));
    fclose(p.out);
}

/* TOPOCC_PROGRESS_INTERVAL: seconds, plain or with a unit; 0 a line at
 * every report; anything else refused, naming the variable. */
static void log_interval_from_the_environment(void **state)
{
    (void)state;
    tc_err err;
    double v;
    assert_int_equal(cli_progress_interval(NULL, &v, &err), TC_OK);
    assert_true(v == 10);
    assert_int_equal(cli_progress_interval("", &v, &err), TC_OK);
    assert_true(v == 10);
    assert_int_equal(cli_progress_interval("0", &v, &err), TC_OK);
    assert_true(v == 0);
    assert_int_equal(cli_progress_interval("30", &v, &err), TC_OK);
    assert_true(v == 30);
    assert_int_equal(cli_progress_interval("2.5", &v, &err), TC_OK);
    assert_true(v == 2.5);
    assert_int_equal(cli_progress_interval("500ms", &v, &err), TC_OK);
    assert_true(v == 0.5);
    assert_int_equal(cli_progress_interval("60s", &v, &err), TC_OK);
    assert_true(v == 60);
    const char *bad[] = {"abc", "-1", "-0", "+5", "1min", "10x", "nan", "inf", "1e9", " 5", "5 ", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cli_progress_interval(bad[i], &v, &err), TC_EINVAL);
        assert_non_null(strstr(err.msg, "invalid TOPOCC_PROGRESS_INTERVAL"));
        assert_null(strchr(err.msg, '\n'));
    }
    cli_progress p;
    setenv("TOPOCC_PROGRESS_INTERVAL", "3", 1);
    assert_int_equal(cli_progress_init(&p, false, &err), TC_OK);
    assert_true(p.log_period == 3);
    setenv("TOPOCC_PROGRESS_INTERVAL", "soon", 1);
    assert_int_equal(cli_progress_init(&p, false, &err), TC_EINVAL);
    unsetenv("TOPOCC_PROGRESS_INTERVAL");
}

static void log_line_at_every_report_with_an_interval_of_0(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, false, false);
    p.log_period = 0;
    tc_progress r = report(1e6, 4e6);
    cli_progress_cb(&p, &r);
    fake_t = 100.01;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_int_equal(strchr(buf, '\n') - buf + 1, (long)strlen(buf) / 2);
    assert_true(strncmp(buf, "topocc: flow simulation: 25% (1M/4M transfers)", 46) == 0);
    fclose(p.out);
}

/* The part under way (a compare cell's simulation) after the figures: in
 * the log line, and on a terminal in place of the bar where both do not
 * fit. */
static void the_part_under_way_follows_the_figures(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, false, false);
    p.log_period = 0;
    tc_progress r = {.what = "compare", .fraction = 0.25, .done = 6, .total = 24, .unit = "cells", .rate = 0.5,
                     .detail = "allreduce on B: 42% of flow simulation of ring at 1GiB"};
    cli_progress_cb(&p, &r);
    assert_string_equal(written(&p, buf, sizeof buf),
                        "topocc: compare: 25% (6/24 cells), 0.5 cells/s, ETA 36s; allreduce on B: 42% of flow "
                        "simulation of ring at 1GiB\n");
    fclose(p.out);
    setup(&p, true, false);
    p.cols = 160;
    fake_t = 102;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_non_null(strstr(buf, "compare 25% [#####...............] 6/24 cells"));
    assert_non_null(strstr(buf, "; allreduce on B: 42% of flow simulation of ring at 1GiB"));
    fclose(p.out);
    setup(&p, true, false);
    p.cols = 100;
    fake_t = 102;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_null(strchr(buf, '['));
    assert_non_null(strstr(buf, "compare 25% 6/24 cells"));
    assert_non_null(strstr(buf, "; allreduce on B: 42% of"));
    assert_true(strlen(buf) <= 100);
    fclose(p.out);
}

static void unknown_total_has_no_percentage_or_eta(void **state)
{
    (void)state;
    cli_progress p;
    char buf[2048];
    setup(&p, true, false);
    tc_progress r = report(12345, 0);
    fake_t = 103;
    cli_progress_cb(&p, &r);
    written(&p, buf, sizeof buf);
    assert_non_null(strstr(buf, "12.3k transfers"));
    r = report(999700, 0);
    fake_t = 104;
    cli_progress_cb(&p, &r);
    assert_non_null(strstr(written(&p, buf, sizeof buf), " 1M transfers"));
    assert_null(strchr(buf, '%'));
    assert_null(strstr(buf, "ETA"));
    fclose(p.out);
}

static void quiet_prints_nothing(void **state)
{
    (void)state;
    for (int tty = 0; tty < 2; tty++) {
        cli_progress p;
        char buf[256];
        setup(&p, tty, true);
        tc_progress r = report(1, 2);
        for (fake_t = 100; fake_t < 200; fake_t += 1)
            cli_progress_cb(&p, &r);
        cli_progress_done(&p);
        assert_string_equal(written(&p, buf, sizeof buf), "");
        fclose(p.out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(terminal_bar_after_one_second_then_cleared),
        cmocka_unit_test(terminal_bar_fits_the_width),
        cmocka_unit_test(narrow_terminal_drops_the_bar),
        cmocka_unit_test(log_line_every_ten_seconds),
        cmocka_unit_test(log_interval_from_the_environment),
        cmocka_unit_test(log_line_at_every_report_with_an_interval_of_0),
        cmocka_unit_test(the_part_under_way_follows_the_figures),
        cmocka_unit_test(unknown_total_has_no_percentage_or_eta),
        cmocka_unit_test(quiet_prints_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
