/*
 * test_trace.c - job traces (topocc/cluster.h, src/place/trace.c; docs/
 * MODEL.md, "Cluster replay: traces"): excerpts in each public format
 * (tests/data/traces: Philly cluster_job_log JSON, Helios cluster_log.csv,
 * PAI pai_task_table.csv without header, topocc's CSV) read field by field
 * against values computed by hand; malformed input refused with one line
 * naming file, line (or record) and field; the synthetic trace
 * deterministic per seed, its sizes and durations matching the
 * distribution's exact statistics, its offered load the one asked for.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "topocc/cluster.h"

#define DATA TOPOCC_SOURCE_DIR "/tests/data/traces/"

static tc_trace read_ok(const char *path, tc_trace_format f)
{
    tc_trace t;
    tc_err err = {{0}};
    if (tc_trace_read(path, f, &t, &err) != TC_OK)
        fail_msg("%s: %s", path, err.msg);
    return t;
}

static void job_is(const tc_trace *t, size_t i, double submit, uint32_t size, double dur, uint64_t line)
{
    assert_true(i < t->n);
    const tc_cjob *j = &t->jobs[i];
    if (fabs(j->submit_s - submit) > 1e-9 || j->size != size || fabs(j->duration_s - dur) > 1e-9 || j->line != line)
        fail_msg("job %zu: got submit %.17g size %u duration %.17g line %llu, expected %.17g %u %.17g %llu", i,
                 j->submit_s, j->size, j->duration_s, (unsigned long long)j->line, submit, size, dur,
                 (unsigned long long)line);
}

/* ---- the public formats, by hand ---------------------------------------- */

/* philly.json, relative to the earliest kept submit 2017-10-07 01:00:00:
 * record 2: 16 GPUs on two machines, 01:05-02:05 = 3600 s, submit 0;
 * record 1 (the README's example): 8 GPUs, attempts of 74 s and 2 d 5 h 39 m
 * 42 s = 193182 s, sum 193256 s, submit 01:11:39 = 699 s; record 6: the
 * same submit (kept after record 1), the FIRST attempt's 2 GPUs, only the
 * second attempt has both times: 30 s; record 7: 23:59:59 on Dec 31 = 85
 * days + 22:59:59 after the base = 7426799 s, 10 s across the new year.
 * Records 3 (no attempt), 4 (last end_time null), 5 (no GPU) skipped. */
static void philly_excerpt_by_hand(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tc_trace t = read_ok(DATA "philly.json", pass ? TC_TRACE_PHILLY : TC_TRACE_AUTO);
        assert_int_equal(t.format, TC_TRACE_PHILLY);
        assert_int_equal(t.n, 4);
        job_is(&t, 0, 0, 16, 3600, 2);
        job_is(&t, 1, 699, 8, 193256, 1);
        job_is(&t, 2, 699, 2, 30, 6);
        job_is(&t, 3, 7426799, 1, 10, 7);
        assert_int_equal(t.skipped, 3);
        assert_string_equal(t.skipped_why, "record 3: no attempt (never scheduled)");
        tc_trace_free(&t);
        assert_null(t.jobs);
    }
}

/* helios.csv, relative to 18:40:00 (line 6's submit): line 6 8 GPUs 7200 s;
 * the README's three rows at 61, 87, 88 s with their duration column;
 * line 5 gpu_num 0, line 7 no duration, line 8 duration 0: skipped. */
static void helios_excerpt_by_hand(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tc_trace t = read_ok(DATA "helios.csv", pass ? TC_TRACE_HELIOS : TC_TRACE_AUTO);
        assert_int_equal(t.format, TC_TRACE_HELIOS);
        assert_int_equal(t.n, 4);
        job_is(&t, 0, 0, 8, 7200, 6);
        job_is(&t, 1, 61, 1, 36848, 2);
        job_is(&t, 2, 87, 4, 249, 3);
        job_is(&t, 3, 88, 1, 675233, 4);
        assert_int_equal(t.skipped, 3);
        assert_string_equal(t.skipped_why, "line 5: gpu_num 0 (a CPU job)");
        tc_trace_free(&t);
    }
}

/* pai_task.csv (no header), relative to 500 (jobC's first start): jobC
 * 4 x 100% + 1 x 25% = ceil(4.25) = 5 GPUs, 500..1500 = 1000 s; jobA
 * (rows 1 and 3, apart) ps without GPU + 2 x 50% = 1 GPU, 1010..2010;
 * jobF only its chief ran (the worker has no end_time): 1 GPU 2100..2400;
 * the README's task 1 x 50% = 1 GPU, 38 s at 1739162. jobD (start 0) and
 * jobE (plan_gpu 0) skipped. */
static void pai_excerpt_by_hand(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tc_trace t = read_ok(DATA "pai_task.csv", pass ? TC_TRACE_PAI : TC_TRACE_AUTO);
        assert_int_equal(t.format, TC_TRACE_PAI);
        assert_int_equal(t.n, 4);
        job_is(&t, 0, 0, 5, 1000, 4);
        job_is(&t, 1, 510, 1, 1000, 1);
        job_is(&t, 2, 1600, 1, 300, 8);
        job_is(&t, 3, 1738662, 1, 38, 2);
        assert_int_equal(t.skipped, 2);
        assert_string_equal(t.skipped_why, "line 5: job 'jobD': no GPU task ran (start_time/end_time empty or 0)");
        tc_trace_free(&t);
    }
}

static void own_csv_by_hand(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tc_trace t = read_ok(DATA "own.csv", pass ? TC_TRACE_CSV : TC_TRACE_AUTO);
        assert_int_equal(t.format, TC_TRACE_CSV);
        assert_int_equal(t.n, 3);
        job_is(&t, 0, 0, 4, 100, 4);
        job_is(&t, 1, 5, 8, 60, 7);
        job_is(&t, 2, 10.5, 1, 2.5, 5);
        assert_int_equal(t.skipped, 0);
        assert_string_equal(t.skipped_why, "");
        tc_trace_free(&t);
    }
}

/* ---- written on the fly ------------------------------------------------- */

static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/topocc_trace_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static char paths[16][128];
static int npaths;

static int teardown_dir(void **state)
{
    (void)state;
    for (int i = 0; i < npaths; i++)
        unlink(paths[i]);
    npaths = 0;
    return rmdir(tmpdir);
}

/* Writes len bytes of s to tmpdir/name; returns the path. */
static const char *write_bytes(const char *name, const char *s, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    int i;
    for (i = 0; i < npaths && strcmp(paths[i], path); i++)
        ;
    if (i == npaths) {
        assert_true(npaths < 16);
        snprintf(paths[npaths++], sizeof paths[0], "%s", path);
    }
    FILE *f = fopen(paths[i], "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, len, f), len);
    fclose(f);
    return paths[i];
}

static const char *write_file(const char *name, const char *s)
{
    return write_bytes(name, s, strlen(s));
}

/* Reading fails with TC_EINVAL and a message of one line holding each
 * needle. */
static void refused(const char *path, tc_trace_format f, const char *n1, const char *n2)
{
    tc_trace t;
    tc_err err = {{0}};
    assert_int_equal(tc_trace_read(path, f, &t, &err), TC_EINVAL);
    assert_null(t.jobs);
    assert_int_equal(t.n, 0);
    if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
        fail_msg("expected '%s' and '%s' in: %s", n1, n2 ? n2 : "", err.msg);
    assert_null(strchr(err.msg, '\n'));
}

static void own_csv_malformed(void **state)
{
    (void)state;
    const char *p = write_file("t.csv", "submit,size,duration\n0,1,10\n5,x,10\n");
    refused(p, TC_TRACE_AUTO, "t.csv:3: field 'size': expected a positive integer, got 'x'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n0,1,10\n1,2\n"), TC_TRACE_CSV, "t.csv:3: expected 3 fields",
            NULL);
    refused(write_file("t.csv", "submit,size,duration\n0,1,-5\n"), TC_TRACE_CSV, "t.csv:2: field 'duration'",
            "got '-5'");
    refused(write_file("t.csv", "submit,size,duration\n0,1,0\n"), TC_TRACE_CSV, "t.csv:2: field 'duration'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n#\n0,16777217,5\n"), TC_TRACE_CSV, "t.csv:3: field 'size'",
            "more than the 16777216 (2^24)");
    refused(write_file("t.csv", "submit,size,duration\n0,1,nan\n"), TC_TRACE_CSV, "t.csv:2: field 'duration'", "nan");
    refused(write_file("t.csv", "submit,size,duration\ninf,1,2\n"), TC_TRACE_CSV, "t.csv:2: field 'submit'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n1e999,1,2\n"), TC_TRACE_CSV, "t.csv:2: field 'submit'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n0x10,1,2\n"), TC_TRACE_CSV, "t.csv:2: field 'submit'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n-1,1,2\n"), TC_TRACE_CSV, "t.csv:2: field 'submit'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n1,2.5,2\n"), TC_TRACE_CSV, "t.csv:2: field 'size'", NULL);
    refused(write_file("t.csv", "submit,size,duration\n1,\"2,2\n"), TC_TRACE_CSV, "t.csv:2:", "quotes");
    refused(write_file("t.csv", "size,submit,duration\n1,2,2\n"), TC_TRACE_CSV, "t.csv:1: expected the header", NULL);
    refused(write_file("t.csv", "submit,size,duration\n"), TC_TRACE_AUTO, "t.csv: no jobs", NULL);
    refused(write_file("t.csv", ""), TC_TRACE_AUTO, "t.csv: empty file", NULL);
    refused(write_file("t.csv", ""), TC_TRACE_CSV, "t.csv: no header", NULL);
    refused(write_file("t.csv", "\n  \n"), TC_TRACE_AUTO, "t.csv: empty file", NULL);
    refused(write_file("t.csv", "a,b\n1,2\n"), TC_TRACE_AUTO, "cannot tell the trace format", "name the format");
    /* quoted fields and CRLF are fine */
    tc_trace t = read_ok(write_file("t.csv", "submit,size,duration\r\n\"0\", 2 ,\"7\"\r\n"), TC_TRACE_AUTO);
    assert_int_equal(t.n, 1);
    job_is(&t, 0, 0, 2, 7, 2);
    tc_trace_free(&t);
}

static void hostile_bytes_refused(void **state)
{
    (void)state;
    size_t len = 70000 + 32;
    char *s = malloc(len);
    assert_non_null(s);
    memcpy(s, "submit,size,duration\n0,1,", 25);
    memset(s + 25, '1', len - 26);
    s[len - 1] = '\n';
    refused(write_bytes("t.csv", s, len), TC_TRACE_AUTO, "t.csv:2: line longer than 65536 bytes", NULL);
    free(s);
    refused(write_bytes("t.csv", "submit,size,duration\n0,1\0,2\n", 28), TC_TRACE_AUTO, "t.csv:2: a NUL byte", NULL);
    char many[400] = "submit,size,duration\n";
    for (int i = 0; i < 70; i++)
        strcat(many, "1,");
    strcat(many, "1\n");
    refused(write_file("t.csv", many), TC_TRACE_CSV, "t.csv:2: more than 64 fields", NULL);
    refused(TOPOCC_SOURCE_DIR "/tests/data/traces/no-such-file.csv", TC_TRACE_AUTO, "cannot open", NULL);
    refused(DATA "own.csv", TC_TRACE_SYNTHETIC, "drawn, not read", NULL);
}

#define HELIOS_HEAD "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
#define HELIOS_ROW "1,u,vc,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n"

static void helios_malformed(void **state)
{
    (void)state;
    refused(write_file("h.csv", HELIOS_HEAD HELIOS_ROW "2,u,vc,x,1,1,COMPLETED,2020-06-09 18:41:01,,,,\n"),
            TC_TRACE_AUTO, "h.csv:3: field 'gpu_num': expected an integer of 0 or more, got 'x'", NULL);
    refused(write_file("h.csv", HELIOS_HEAD HELIOS_ROW "2,u,vc,1,1,1,COMPLETED,2020-06-09 18:41:01,,,\n"),
            TC_TRACE_HELIOS, "h.csv:3: expected 12 fields as the header has, got 11", NULL);
    refused(write_file("h.csv", "job_id,user,vc,cpu_num,submit_time,duration\n1,u,v,1,2020-06-09 18:41:01,5\n"),
            TC_TRACE_HELIOS, "h.csv:1: no column 'gpu_num'", NULL);
    refused(write_file("h.csv", HELIOS_HEAD "2,u,vc,1,1,1,COMPLETED,2020-13-09 18:41:01,,,5,0\n"), TC_TRACE_AUTO,
            "h.csv:2: field 'submit_time': expected a time", "2020-13-09");
    refused(write_file("h.csv", HELIOS_HEAD "2,u,vc,1,1,1,COMPLETED,2021-02-29 00:00:00,,,5,0\n"), TC_TRACE_AUTO,
            "h.csv:2: field 'submit_time'", NULL);
    refused(write_file("h.csv", HELIOS_HEAD HELIOS_ROW "2,u,vc,1,1,1,FAILED,2020-06-09 18:41:01,,,-3,0\n"),
            TC_TRACE_AUTO, "h.csv:3: field 'duration'", "got '-3'");
    refused(write_file("h.csv", HELIOS_HEAD "2,u,vc,99999999,1,1,FAILED,2020-06-09 18:41:01,,,3,0\n"), TC_TRACE_AUTO,
            "h.csv:2: field 'gpu_num': 99999999 is more than the 16777216 (2^24)", NULL);
    refused(write_file("h.csv", HELIOS_HEAD "2,u,vc,0,1,1,COMPLETED,2020-06-09 18:41:01,,,3,0\n"), TC_TRACE_AUTO,
            "h.csv: no jobs in the trace (1 records skipped, the first: line 2: gpu_num 0 (a CPU job))", NULL);
    /* without the duration column: end_time - start_time, and an end before
     * its start is a negative duration */
    const char *nodur = "job_id,gpu_num,submit_time,start_time,end_time\n"
                        "1,2,2020-02-28 23:00:00,2020-02-28 23:30:00,2020-03-01 00:30:00\n";
    tc_trace t = read_ok(write_file("h.csv", nodur), TC_TRACE_AUTO);
    assert_int_equal(t.format, TC_TRACE_HELIOS);
    job_is(&t, 0, 0, 2, 86400 + 3600, 2); /* 2020 is a leap year */
    tc_trace_free(&t);
    refused(write_file("h.csv", "job_id,gpu_num,submit_time,start_time,end_time\n"
                                "1,2,2020-02-28 23:00:00,2020-02-28 23:30:00,2020-02-28 23:29:59\n"),
            TC_TRACE_AUTO, "h.csv:2: field 'end_time'", "negative duration");
}

static void pai_malformed(void **state)
{
    (void)state;
    refused(write_file("p.csv", "j1,w,1.0,Terminated,10.0,20.0,600.0,20.0,100.0,V100\n"
                                "j1,w,1.0,Terminated,10.0,abc,600.0,20.0,100.0,V100\n"),
            TC_TRACE_AUTO, "p.csv:2: field 'end_time': expected seconds", "got 'abc'");
    refused(write_file("p.csv", "j1,w,1.0,Terminated,10.0,20.0,600.0,20.0,100.0,V100\n"
                                "j1,w,1.0,Terminated,10.0,20.0,600.0,20.0,100.0\n"),
            TC_TRACE_PAI, "p.csv:2: expected 10 fields", "got 9");
    refused(write_file("p.csv", "j1,w,1.0,Terminated,30.0,20.0,600.0,20.0,100.0,V100\n"), TC_TRACE_AUTO,
            "p.csv:1: field 'end_time'", "negative duration");
    refused(write_file("p.csv", "j1,w,1.0,Terminated,10.0,20.0,600.0,20.0,-50,V100\n"), TC_TRACE_AUTO,
            "p.csv:1: field 'plan_gpu'", NULL);
    refused(write_file("p.csv", "j1,w,1.5,Terminated,10.0,20.0,600.0,20.0,50,V100\n"), TC_TRACE_AUTO,
            "p.csv:1: field 'inst_num'", NULL);
    refused(write_file("p.csv", ",w,1,Terminated,10.0,20.0,600.0,20.0,50,V100\n"), TC_TRACE_AUTO,
            "p.csv:1: field 'job_name'", NULL);
    refused(write_file("p.csv", "j1,w,16777216,Terminated,10,20,600,20,100,V100\n"
                                "j1,x,1,Terminated,10,20,600,20,100,V100\n"),
            TC_TRACE_AUTO, "p.csv:2: field 'plan_gpu': job 'j1' asks for more than the 16777216 (2^24)", NULL);
    /* a header as data/pai_task_table.header, NaN as a missing value */
    tc_trace t = read_ok(write_file("p.csv", "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
                                             "plan_mem,plan_gpu,gpu_type\n"
                                             "j1,ps,1.0,Terminated,10.0,20.0,600.0,20.0,NaN,\n"
                                             "j1,w,3.0,Terminated,10.0,25.0,600.0,20.0,100.0,V100\n"),
                         TC_TRACE_AUTO);
    assert_int_equal(t.format, TC_TRACE_PAI);
    assert_int_equal(t.n, 1);
    job_is(&t, 0, 0, 3, 15, 2);
    tc_trace_free(&t);
}

#define PJOB(sub, t0, t1) "{\"jobid\":\"j\",\"submitted_time\":\"" sub "\",\"attempts\":[{\"start_time\":\"" t0 \
    "\",\"end_time\":\"" t1 "\",\"detail\":[{\"ip\":\"m1\",\"gpus\":[\"gpu0\",\"gpu1\"]}]}]}"

static void philly_malformed(void **state)
{
    (void)state;
    /* truncated: the error is where the parser met the end */
    refused(write_file("p.json", "[\n" PJOB("2017-10-07 01:00:00", "2017-10-07 01:00:00", "2017-10-07 01:00:10")
                                 ",\n{\"jobid\": \"x\",\n \"attempts\": ["),
            TC_TRACE_AUTO, "p.json:4: invalid JSON", "end of file");
    refused(write_file("p.json", "[" PJOB("2017-10-07 01:00:00", "2017-10-07 01:00:00", "2017-10-07 01:00:10") ","
                                 PJOB("2017-10-07 01:00:00", "2017-10-07 01:00:20", "2017-10-07 01:00:10") "]"),
            TC_TRACE_AUTO, "p.json: record 2: field 'attempts[0].end_time'", "negative duration");
    refused(write_file("p.json", "[" PJOB("2017-10-07 25:00:00", "2017-10-07 01:00:00", "2017-10-07 01:00:10") "]"),
            TC_TRACE_AUTO, "p.json: record 1: field 'submitted_time': expected a time", "25:00:00");
    refused(write_file("p.json", "[{\"jobid\":\"j\",\"attempts\":[]}]"), TC_TRACE_PHILLY,
            "p.json: record 1: field 'submitted_time'", "no such key");
    refused(write_file("p.json", "[{\"submitted_time\":\"2017-10-07 01:00:00\",\"attempts\":5}]"), TC_TRACE_PHILLY,
            "p.json: record 1: field 'attempts': expected a list of attempts, got a number", NULL);
    refused(write_file("p.json", "[{\"submitted_time\":\"2017-10-07 01:00:00\",\"attempts\":[{\"detail\":[{\"gpus\":"
                                 "\"gpu0\"}]}]}]"),
            TC_TRACE_PHILLY, "record 1: field 'attempts[0].detail[0].gpus': expected a list of GPUs", NULL);
    refused(write_file("p.json", "[3]"), TC_TRACE_PHILLY, "p.json: record 1: expected a job object", NULL);
    refused(write_file("p.json", "{\"a\": 1}"), TC_TRACE_PHILLY, "p.json: record 1: field 'submitted_time'", NULL);
    refused(write_file("p.json", "\"x\""), TC_TRACE_PHILLY, "p.json:1: invalid JSON", NULL);
    refused(write_file("p.json", "  "), TC_TRACE_PHILLY, "p.json: empty file", NULL);
    refused(write_file("p.json", "[]"), TC_TRACE_AUTO, "p.json: no jobs in the trace", NULL);
    /* deep nesting is refused by the parser, not a crash */
    char deep[20010];
    memset(deep, '[', 20000);
    deep[20000] = 0;
    refused(write_file("p.json", deep), TC_TRACE_AUTO, "invalid JSON", NULL);

    /* JSON lines: one job object after another; an error names its line */
    const char *jl = PJOB("2017-10-07 01:00:00", "2017-10-07 01:00:00", "2017-10-07 01:00:10") "\n"
                     PJOB("2017-10-07 01:00:05", "2017-10-07 01:00:05", "2017-10-07 02:00:05") "\n";
    tc_trace t = read_ok(write_file("p.json", jl), TC_TRACE_AUTO);
    assert_int_equal(t.n, 2);
    job_is(&t, 0, 0, 2, 10, 1);
    job_is(&t, 1, 5, 2, 3600, 2);
    tc_trace_free(&t);
    refused(write_file("p.json", PJOB("2017-10-07 01:00:00", "2017-10-07 01:00:00", "2017-10-07 01:00:10") "\n\n{\n"
                                 "\"x\": }\n"),
            TC_TRACE_AUTO, "p.json:4: invalid JSON", NULL);
}

static void format_names(void **state)
{
    (void)state;
    static const char *const names[] = {"auto", "csv", "philly", "helios", "pai", "synthetic"};
    for (int i = 0; i < 6; i++) {
        tc_trace_format f;
        tc_err err = {{0}};
        assert_string_equal(tc_trace_format_name((tc_trace_format)i), names[i]);
        assert_int_equal(tc_trace_format_parse(names[i], &f, &err), TC_OK);
        assert_int_equal(f, i);
    }
    tc_trace_format f;
    tc_err err = {{0}};
    assert_int_equal(tc_trace_format_parse("alibaba", &f, &err), TC_EINVAL);
    /* only the formats a file is read in: synthetic, which --trace-format
     * refuses, is not offered */
    assert_non_null(strstr(err.msg, "unknown trace format 'alibaba': accepted are auto, csv, philly, helios, pai"));
    assert_null(strstr(err.msg, "synthetic"));
}

/* ---- synthetic ---------------------------------------------------------- */

static tc_trace synth(size_t n, uint64_t seed, uint32_t endpoints, double load)
{
    tc_trace t;
    tc_err err = {{0}};
    if (tc_trace_synthetic(n, seed, endpoints, load, &t, &err) != TC_OK)
        fail_msg("%s", err.msg);
    return t;
}

static void synthetic_is_deterministic_per_seed(void **state)
{
    (void)state;
    tc_trace a = synth(5000, 42, 1024, 0.9), b = synth(5000, 42, 1024, 0.9), c = synth(5000, 43, 1024, 0.9);
    assert_int_equal(a.format, TC_TRACE_SYNTHETIC);
    assert_int_equal(a.n, 5000);
    assert_memory_equal(a.jobs, b.jobs, a.n * sizeof *a.jobs);
    size_t same = 0;
    for (size_t i = 0; i < a.n; i++)
        same += a.jobs[i].size == c.jobs[i].size && a.jobs[i].duration_s == c.jobs[i].duration_s;
    assert_true(same < a.n / 2);
    assert_true(a.jobs[0].submit_s == 0);
    for (size_t i = 0; i < a.n; i++) {
        assert_int_equal(a.jobs[i].line, i + 1);
        assert_true(i == 0 || a.jobs[i].submit_s >= a.jobs[i - 1].submit_s);
        assert_true(a.jobs[i].duration_s >= 1 && a.jobs[i].duration_s <= 2097152);
        assert_true(a.jobs[i].size >= 1 && a.jobs[i].size <= 128);
    }
    tc_trace_free(&a);
    tc_trace_free(&b);
    tc_trace_free(&c);
}

/*
 * The distribution's exact statistics, by hand from the tables of
 * src/place/trace.c (docs/MODEL.md):
 *  sizes (pmf in %, sum 100.001): E = sum s p / sum p = 365.947 / 100.001
 *  = 3.65943; sd 8.65, so 100k draws have a standard error of 0.75 %:
 *  tolerance 3 % (4 SE). P(size = 1) = 72.189 / 100.001 = 0.721883, SE
 *  0.14 %: tolerance 0.006. With at most 8 endpoints the sizes 1, 2, 4,
 *  8 remain: E = (72.189 + 2 x 2.557 + 4 x 5.725 + 8 x 14.219) / 94.690
 *  = 2.25953.
 *  durations: 3.997 % at 1 s, then log-uniform on (2^(i-1), 2^i] with
 *  mass F_i - F_(i-1), whose mean is 2^(i-1) / ln 2: E = 6980.0 s; sd
 *  48150 s, SE of 100k draws 2.2 %: tolerance 9 % (4 SE). Median: in
 *  (128, 256], 128 x 2^((50 - 37.811) / (56.574 - 37.811)) = 200.83 s,
 *  tolerance 3 %.
 *  load: the arrival rate is the one whose demand at the end of the
 *  arrivals, sum(size x min(duration, T)) / T with T the last submit, is
 *  the load asked for, up to the Poisson noise of the span, 1/sqrt(n) =
 *  0.3 %: tolerance 2 %.
 */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void synthetic_matches_its_distribution(void **state)
{
    (void)state;
    size_t n = 100000;
    tc_trace t = synth(n, 7, 1u << 15, 0.7);
    double ssum = 0, dsum = 0, ones = 0, work = 0;
    double *d = malloc(n * sizeof *d);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++) {
        ssum += t.jobs[i].size;
        dsum += t.jobs[i].duration_s;
        ones += t.jobs[i].size == 1;
        work += t.jobs[i].size * t.jobs[i].duration_s;
        d[i] = t.jobs[i].duration_s;
    }
    qsort(d, n, sizeof *d, cmp_double);
    double es = ssum / n, ed = dsum / n, p1 = ones / n, med = d[n / 2];
    print_message("synthetic: mean size %.4f (3.6594), P(1) %.4f (0.7219), mean duration %.1f (6980.0), median %.1f "
                  "(200.8)\n", es, p1, ed, med);
    assert_true(fabs(es / 3.65943 - 1) < 0.03);
    assert_true(fabs(p1 - 0.721883) < 0.006);
    assert_true(fabs(ed / 6980.0 - 1) < 0.09);
    assert_true(fabs(med / 200.83 - 1) < 0.03);
    double T = t.jobs[n - 1].submit_s, dem = 0;
    for (size_t i = 0; i < n; i++)
        dem += t.jobs[i].size * (t.jobs[i].duration_s < T ? t.jobs[i].duration_s : T);
    double offered = dem / T / (double)(1u << 15);
    print_message("synthetic: demand at the last arrival %.4f of the cluster (0.7)\n", offered);
    assert_true(fabs(offered / 0.7 - 1) < 0.02);
    free(d);
    tc_trace_free(&t);

    /* sizes above the cluster are drawn again */
    t = synth(n, 9, 8, 0.9);
    ssum = work = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(t.jobs[i].size <= 8);
        ssum += t.jobs[i].size;
        work += t.jobs[i].size * t.jobs[i].duration_s;
    }
    assert_true(fabs(ssum / n / 2.25953 - 1) < 0.02);
    assert_true(fabs(work / (8.0 * t.jobs[n - 1].submit_s) / 0.9 - 1) < 0.02);
    tc_trace_free(&t);

    /* one endpoint: every job has size 1 */
    t = synth(1000, 1, 1, 0.5);
    for (size_t i = 0; i < t.n; i++)
        assert_int_equal(t.jobs[i].size, 1);
    tc_trace_free(&t);
}

static void synthetic_refuses_bad_arguments(void **state)
{
    (void)state;
    tc_trace t;
    tc_err err = {{0}};
    assert_int_equal(tc_trace_synthetic(0, 1, 64, 0.9, &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "0 jobs"));
    assert_null(t.jobs);
    assert_int_equal(tc_trace_synthetic(10, 1, 0, 0.9, &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "0 endpoints"));
    assert_int_equal(tc_trace_synthetic(10, 1, (1u << 24) + 1, 0.9, &t, &err), TC_EINVAL);
    double bad[] = {0, -1, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tc_trace_synthetic(10, 1, 64, bad[i], &t, &err), TC_EINVAL);
        assert_non_null(strstr(err.msg, "load"));
        assert_null(strchr(err.msg, '\n'));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(philly_excerpt_by_hand),
        cmocka_unit_test(helios_excerpt_by_hand),
        cmocka_unit_test(pai_excerpt_by_hand),
        cmocka_unit_test(own_csv_by_hand),
        cmocka_unit_test(own_csv_malformed),
        cmocka_unit_test(hostile_bytes_refused),
        cmocka_unit_test(helios_malformed),
        cmocka_unit_test(pai_malformed),
        cmocka_unit_test(philly_malformed),
        cmocka_unit_test(format_names),
        cmocka_unit_test(synthetic_is_deterministic_per_seed),
        cmocka_unit_test(synthetic_matches_its_distribution),
        cmocka_unit_test(synthetic_refuses_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
