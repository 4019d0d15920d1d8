/*
 * test_scenario.c - the scenario layer: JSON written and read back is the
 * same scenario (canonical), flags and keys mean the same thing, bad input
 * is named precisely, placements and partitions are what they say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "topocc/compress.h"
#include "topocc/outcome.h"
#include "topocc/place.h"
#include "topocc/report.h"
#include "topocc/scenario.h"
#include "scenario/keys.h"

static char *dump(const tc_scenario *s)
{
    json_t *j = tc_scenario_to_json(s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(tc_json_dumpf(j, f));
    fclose(f);
    json_decref(j);
    return buf;
}

/* Flags -> resolve -> JSON -> read -> resolve -> JSON: identical. */
static void round_trip(tc_command c, const char *const *flags, size_t n)
{
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(c);
    for (size_t i = 0; i + 1 < n; i += 2) {
        const char *v[1] = {flags[i + 1]};
        tc_status st = tc_scenario_set_flag(s, flags[i], v, 1, &err);
        if (st)
            fail_msg("%s %s: %s", flags[i], flags[i + 1], err.msg);
    }
    if (tc_scenario_resolve(s, &err) || tc_scenario_check_given(s, &err))
        fail_msg("resolve: %s", err.msg);
    char *a = dump(s);
    json_error_t je;
    json_t *j = json_loads(a, 0, &je);
    assert_non_null(j);
    tc_scenario *t = tc_scenario_new(c);
    if (tc_scenario_read_json(t, j, "test", &err) || tc_scenario_resolve(t, &err) || tc_scenario_check_given(t, &err))
        fail_msg("read back: %s\n%s", err.msg, a);
    char *b = dump(t);
    assert_string_equal(a, b);
    /* A copy is the same scenario too. */
    tc_scenario *u = tc_scenario_clone(t);
    char *d = dump(u);
    assert_string_equal(a, d);
    free(a), free(b), free(d);
    json_decref(j);
    tc_scenario_free(s), tc_scenario_free(t), tc_scenario_free(u);
}

static void scenario_json_round_trip_is_identical_for_every_command(void **state)
{
    (void)state;
    const char *topo[] = {"--topo", "clos:down=8x8,up=1x4", "--degrade", "link:3=0.5", "--equalize",
                          "injection=100Gbps"};
    round_trip(TC_CMD_TOPO, topo, 6);
    const char *coll[] = {"--topo", "torus:dims=4x4", "--op", "allreduce", "--algo", "ring:chunks=4", "--sizes",
                          "1KiB:1MiB:8", "--mode", "flow", "--rate-cap", "100Gbps", "--ranks", "12", "--place",
                          "random:seed=7", "--no-skip", ""};
    round_trip(TC_CMD_COLLECTIVE, coll, 18);
    const char *cmp[] = {"--topo", "clos:down=8x8,up=1x8", "--names", "a", "--op", "allreduce,alltoall", "--sizes",
                         "1KiB:1GiB:16", "--routing", "dmodk"};
    round_trip(TC_CMD_COMPARE, cmp, 10);
    const char *cb[] = {"--codec", "bf16", "--size", "4MiB", "--seconds", "0.2"};
    round_trip(TC_CMD_CODEC_BENCH, cb, 6);
    const char *ta[] = {"--codec", "fp32", "--steps", "300", "--lr", "0.1", "--seed", "3"};
    round_trip(TC_CMD_TRAIN_ACCURACY, ta, 8);
    const char *cp[] = {"--topo", "clos:down=8x8,up=1x8,bw=10Gbps", "--model", "resnet50", "--codec",
                        "topk:ratio=0.01", "--steps-ratio", "topk:ratio=0.01=1.3", "--sweep-bw", "", "--workers", "16"};
    round_trip(TC_CMD_COMPRESS, cp, 12);
}

/* The group of compare (job.group) and of a concurrent job (its "group"
 * key) is written canonically and read back as the same scenario. */
static void groups_of_compare_and_concurrent_round_trip(void **state)
{
    (void)state;
    const char *cmp[] = {"--topo", "torus:dims=4x4x4", "--op", "allreduce", "--sizes", "1MiB:4MiB",
                         "--group", "axes=zx"};
    round_trip(TC_CMD_COMPARE, cmp, 8);
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COMPARE);
    for (size_t i = 0; i < 8; i += 2) {
        const char *v[1] = {cmp[i + 1]};
        assert_int_equal(tc_scenario_set_flag(s, cmp[i], v, 1, &err), TC_OK);
    }
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    char *a = dump(s);
    assert_non_null(strstr(a, "\"group\": \"axes=xz\""));
    free(a);
    tc_scenario_free(s);

    char path[] = "/tmp/topocc_jobs_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("{\"jobs\": [{\"name\": \"dp\", \"op\": \"allreduce\", \"size\": \"16MiB\", \"endpoints\": \"0-63\", "
          "\"group\": \"stride=8\"}, {\"name\": \"b\", \"op\": \"allgather\", \"size\": 4096, "
          "\"endpoints\": [64, 65]}]}",
          f);
    fclose(f);
    const char *conc[] = {"--topo", "clos:down=8x16,up=1x8", "--jobs", path};
    round_trip(TC_CMD_CONCURRENT, conc, 4);
    s = tc_scenario_new(TC_CMD_CONCURRENT);
    for (size_t i = 0; i < 4; i += 2) {
        const char *v[1] = {conc[i + 1]};
        assert_int_equal(tc_scenario_set_flag(s, conc[i], v, 1, &err), TC_OK);
    }
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    assert_int_equal(s->jobs[0].group.kind, TC_GROUP_STRIDE);
    assert_int_equal(s->jobs[0].group.k, 8);
    assert_int_equal(s->jobs[1].group.kind, TC_GROUP_NONE);
    a = dump(s);
    assert_non_null(strstr(a, "\"group\": \"stride=8\""));
    assert_null(strstr(strstr(a, "\"name\": \"b\""), "\"group\""));
    free(a);
    tc_scenario_free(s);

    /* A bad group in the jobs file names the job's key. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"jobs\": [{\"op\": \"allreduce\", \"size\": 4096, \"endpoints\": \"0-7\", \"group\": \"rows\"}]}", f);
    fclose(f);
    s = tc_scenario_new(TC_CMD_CONCURRENT);
    const char *v[1] = {path};
    assert_int_equal(tc_scenario_set_flag(s, "--jobs", v, 1, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "jobs[0].group: invalid group 'rows'"));
    tc_scenario_free(s);
    remove(path);
}

/* tc_scenario_open: the command comes from the document, a scenario, a
 * saved result or a sweep's point line alike; a document without one, or
 * another JSON, is bad input with one line. */
static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void scenario_open_takes_the_documents_command(void **state)
{
    (void)state;
    char path[] = "/tmp/topocc_open_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *docs[][2] = {
        {"{\"command\": \"train\", \"network\": {\"topo\": [\"clos:down=4x4,up=1x4\"]}}", "train"},
        {"{\"schema_version\": 1, \"scenario\": {\"command\": \"failures\"}, \"results\": []}", "failures"},
        {"{\"point\": 3, \"scenario\": {\"command\": \"compare\"}, \"result\": {}}", "compare"},
    };
    tc_err err;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        put_file(path, docs[i][0]);
        tc_scenario *s = (tc_scenario *)1;
        assert_int_equal(tc_scenario_open(path, &s, &err), TC_OK);
        assert_non_null(s);
        assert_string_equal(tc_command_name(s->command), docs[i][1]);
        tc_scenario_free(s);
    }
    const char *bad[][2] = {
        {"{\"network\": {}}", "no \"command\": expected a scenario or a result written by topocc"},
        {"[1, 2]", "no \"command\""},
        {"{\"command\": \"collectve\"}", "collectve"},
        {"{\"command\": \"collective\", \"network\": {\"topoo\": 1}}", "topoo"},
        {"{\"command\": ", "line 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_file(path, bad[i][0]);
        tc_scenario *s = (tc_scenario *)1;
        assert_int_equal(tc_scenario_open(path, &s, &err), TC_EINVAL);
        assert_null(s);
        assert_non_null(strstr(err.msg, bad[i][1]));
        assert_null(strchr(err.msg, '\n'));
    }
    remove(path);
    tc_scenario *s = (tc_scenario *)1;
    assert_int_equal(tc_scenario_open(path, &s, &err), TC_EINVAL);   /* gone */
    assert_null(s);
}

/* A caller of the library sets flags that the command line would have
 * refused before setting them: each is bad input (TC_EINVAL) with the
 * command line's one line, and the scenario is left as it was. */
static void set_flag_refuses_what_the_command_line_refuses(void **state)
{
    (void)state;
    tc_err err;
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    assert_non_null(s);
    const char *x[1] = {"x"}, *two[2] = {"1MiB", "2MiB"}, *yes[1] = {"yes"}, *none[1] = {NULL};
    assert_int_equal(tc_scenario_set_flag(s, "--nope", x, 1, &err), TC_EINVAL);
    assert_string_equal(err.msg, "unknown option '--nope' for 'topocc collective' (did you mean --topo?)");
    assert_int_equal(tc_scenario_set_flag(s, "--trials", x, 1, &err), TC_EINVAL);
    assert_string_equal(err.msg, "option --trials does not apply to 'topocc collective' (it belongs to failures)");
    assert_int_equal(tc_scenario_set_flag(s, "--format", x, 1, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "option --format is not a scenario key"));
    assert_int_equal(tc_scenario_set_flag(s, NULL, x, 1, &err), TC_EINVAL);
    /* a value missing, twice, or given to a switch */
    assert_int_equal(tc_scenario_set_flag(s, "--size", NULL, 0, &err), TC_EINVAL);
    assert_string_equal(err.msg, "option --size needs a value: --size BYTES");
    assert_int_equal(tc_scenario_set_flag(s, "--size", none, 1, &err), TC_EINVAL);
    assert_string_equal(err.msg, "option --size needs a value: --size BYTES");
    assert_int_equal(tc_scenario_set_flag(s, "--size", two, 2, &err), TC_EINVAL);
    assert_string_equal(err.msg, "option --size given 2 times (it takes one value)");
    assert_int_equal(tc_scenario_set_flag(s, "--phases", yes, 1, &err), TC_EINVAL);
    assert_string_equal(err.msg, "option --phases takes no value");
    /* none of them set anything: each can still be given once */
    assert_int_equal(tc_scenario_set_flag(s, "--size", two, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--phases", NULL, 0, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--phases", NULL, 0, &err), TC_EINVAL);
    assert_string_equal(err.msg, "option --phases given twice");
    /* a list flag takes its occurrences */
    const char *topos[2] = {"clos:down=4x4,up=1x4", "torus:dims=4x4"};
    assert_int_equal(tc_scenario_set_flag(s, "--topo", topos, 2, &err), TC_OK);
    assert_int_equal(s->ntopo, 2);
    tc_scenario_free(s);
    /* no scenario of a command that is none */
    assert_null(tc_scenario_new(TC_CMD_COUNT));
    assert_null(tc_scenario_new((tc_command)-1));
}

static void random_flag_combinations_round_trip(void **state)
{
    (void)state;
    static const char *topos[] = {"clos:down=8x8,up=1x8", "clos:down=4x4,up=1x2,bw=100Gbps,lat=500ns",
                                  "torus:dims=4x4x2", "torus:dims=8x8,wrap=1x0", "clos:hosts=64,radix=16,tiers=2"};
    static const char *ops[] = {"allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "reduce"};
    static const char *modes[] = {"formula", "steps", "flow"};
    static const char *algos[] = {"auto", "ring", "all", "rhd,ring", "direct", "dbtree:chunks=2"};
    uint64_t x = 42;
    for (int it = 0; it < 60; it++) {
        const char *f[24];
        size_t n = 0;
        char ranks[16], size[32];
        x = tc_mix64(x);
        f[n++] = "--topo", f[n++] = topos[x % 5];
        f[n++] = "--op", f[n++] = ops[(x >> 8) % 6];
        f[n++] = "--mode", f[n++] = modes[(x >> 16) % 3];
        snprintf(size, sizeof size, "%lluKiB", (unsigned long long)(1 + (x >> 24) % 5000));
        f[n++] = "--size", f[n++] = size;
        if ((x >> 40) & 1) {
            snprintf(ranks, sizeof ranks, "%u", (unsigned)(2 + (x >> 41) % 14));
            f[n++] = "--ranks", f[n++] = ranks;
        }
        if ((x >> 50) & 1)
            f[n++] = "--place", f[n++] = "random:seed=5";
        if ((x >> 52) & 1)
            f[n++] = "--algo", f[n++] = algos[(x >> 53) % 6];
        if ((x >> 56) % 3 == 0 && (x >> 16) % 3 == 2)
            f[n++] = "--multipath", f[n++] = "spray";
        if ((x >> 58) & 1 && (x >> 16) % 3 == 2)
            f[n++] = "--no-skip", f[n++] = "";
        round_trip(TC_CMD_COLLECTIVE, f, n);
    }
}

static tc_status read_text(tc_scenario *s, const char *text, tc_err *err)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    tc_status st = tc_scenario_read_json(s, j, "f.json", err);
    json_decref(j);
    return st;
}

static void unknown_key_names_the_nearest_valid_key(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    assert_int_equal(read_text(s, "{\"network\": {\"topos\": [\"torus:dims=4x4\"]}}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "network.topos"));
    assert_non_null(strstr(err.msg, "network.topo'"));
    assert_int_equal(read_text(s, "{\"colective\": {}}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "colective"));
    tc_scenario_free(s);
}

static void wrong_type_names_the_key_and_the_type(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    assert_int_equal(read_text(s, "{\"eval\": {\"mode\": 3}}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "eval.mode"));
    assert_non_null(strstr(err.msg, "expected a string"));
    assert_int_equal(read_text(s, "{\"job\": {\"ranks\": \"many\"}}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "job.ranks"));
    assert_int_equal(read_text(s, "{\"codecs\": [\"bf16\"]}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "does not apply"));
    assert_int_equal(read_text(s, "{\"command\": \"compare\"}", &err), TC_EINVAL);
    tc_scenario_free(s);
}

/* compress.steps_ratio's object form: what is wrong in it is named, as the
 * flag's CODEC=RATIO names a bad ratio */
static void steps_ratio_object_names_what_is_wrong(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COMPRESS);
    assert_int_equal(read_text(s, "{\"compress\": {\"steps_ratio\": [{\"codec\": \"powersgd:rank=4\", \"ratio\": -1}]}}", &err),
                     TC_EINVAL);
    assert_non_null(strstr(err.msg, "compress.steps_ratio[0]: the ratio must be a number above 0 and at most 1e6"));
    assert_non_null(strstr(err.msg, "; got -1"));
    assert_null(strstr(err.msg, "got an object"));
    assert_int_equal(read_text(s, "{\"compress\": {\"steps_ratio\": [{\"codec\": \"int8\"}]}}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "no \"ratio\" for int8"));
    assert_int_equal(read_text(s, "{\"compress\": {\"steps_ratio\": [{\"codec\": \"int8\", \"ratio\": 1, \"x\": 2}]}}", &err),
                     TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'x'"));
    assert_int_equal(read_text(s, "{\"compress\": {\"steps_ratio\": [{\"codec\": 8, \"ratio\": 1}]}}", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "\"codec\" to be a codec's spec"));
    assert_int_equal(read_text(s, "{\"compress\": {\"steps_ratio\": [{\"codec\": \"int8\", \"ratio\": null}]}}", &err),
                     TC_OK);
    assert_true(s->nsteps_ratio == 1 && s->steps_ratio[0].value < 0);
    assert_int_equal(read_text(s, "{\"compress\": {\"steps_ratio\": [{\"codec\": \"int8\", \"ratio\": 1.5}]}}", &err),
                     TC_OK);
    assert_true(s->nsteps_ratio == 1 && s->steps_ratio[0].value == 1.5);
    tc_scenario_free(s);
}

static void command_line_list_replaces_the_file_list(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COMPARE);
    assert_int_equal(read_text(s, "{\"network\": {\"topo\": [\"torus:dims=4x4\", \"torus:dims=2x8\"]}, "
                                  "\"collective\": {\"op\": [\"allreduce\"], \"sizes\": [\"1MiB\", 2048]}}",
                               &err),
                     TC_OK);
    assert_int_equal(s->ntopo, 2);
    assert_true(s->nsizes == 2 && s->sizes[0] == 1048576 && s->sizes[1] == 2048);
    const char *v[1] = {"clos:down=4x4,up=1x4"};
    assert_int_equal(tc_scenario_set_flag(s, "--topo", v, 1, &err), TC_OK);
    assert_int_equal(s->ntopo, 1);
    assert_string_equal(s->topo[0], "clos:down=4x4,up=1x4");
    tc_scenario_free(s);
}

/* Presets come after network.topo's topologies, or where preset_at puts
 * them (the command line's order); setting network.preset clears that. */
static void presets_go_after_the_topologies_or_where_placed(void **state)
{
    (void)state;
    for (int placed = 0; placed < 3; placed++) {
        tc_err err = {{0}};
        tc_scenario *s = tc_scenario_new(TC_CMD_COMPARE);
        const char *topo[2] = {"torus:dims=4x4", "torus:dims=2x8"}, *preset[2] = {"dgx-h100:nodes=2", "dgx-h100"};
        assert_int_equal(tc_scenario_set_flag(s, "--topo", topo, 2, &err), TC_OK);
        assert_int_equal(tc_scenario_set_flag(s, "--preset", preset, 2, &err), TC_OK);
        const char *ops[1] = {"allreduce"}, *sizes[1] = {"1MiB"};
        assert_int_equal(tc_scenario_set_flag(s, "--op", ops, 1, &err), TC_OK);
        assert_int_equal(tc_scenario_set_flag(s, "--sizes", sizes, 1, &err), TC_OK);
        if (placed) { /* 1: P0 T0 P1 T1; 2: as 1, then network.preset set again */
            s->preset_at[0] = 0;
            s->preset_at[1] = 1;
            s->npreset_at = 2;
        }
        if (placed == 2) {
            json_t *v = json_pack("[ss]", preset[0], preset[1]);
            assert_int_equal(tc_scn_set_key(s, "network.preset", v, "network.preset", &err), TC_OK);
            json_decref(v);
        }
        if (tc_scenario_resolve(s, &err) != TC_OK)
            fail_msg("resolve: %s", err.msg);
        assert_int_equal(s->ntopo, 4);
        int t0 = placed == 1 ? 1 : 0, t1 = placed == 1 ? 3 : 1, p0 = placed == 1 ? 0 : 2, p1 = placed == 1 ? 2 : 3;
        assert_string_equal(s->topo[t0], "torus:dims=4x4,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
        assert_string_equal(s->topo[t1], "torus:dims=2x8,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
        assert_non_null(strstr(s->topo[p0], "clos:down=2x8,"));
        assert_non_null(strstr(s->topo[p1], "node=8,"));
        assert_null(strstr(s->topo[p1], "clos:down=2x8,"));
        tc_scenario_free(s);
    }
}

/* A --preset flag replaces the file's topologies (and its names for them);
 * the resolved scenario records each topology's preset, and reads back to
 * the same topologies and record. */
static void a_preset_flag_replaces_the_files_topologies(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COMPARE);
    assert_int_equal(read_text(s, "{\"network\": {\"topo\": [\"torus:dims=4x4\", \"torus:dims=2x8\"], \"names\": "
                                  "[\"a\", \"b\"]}, \"collective\": {\"op\": [\"allreduce\"], \"sizes\": [\"1MiB\"]}}",
                               &err),
                     TC_OK);
    const char *preset[1] = {"dgx-h100:nodes=2"};
    assert_int_equal(tc_scenario_set_flag(s, "--preset", preset, 1, &err), TC_OK);
    if (tc_scenario_resolve(s, &err) != TC_OK)
        fail_msg("resolve: %s", err.msg);
    assert_int_equal(s->ntopo, 1);
    assert_non_null(strstr(s->topo[0], "clos:down=2x8,"));
    assert_int_equal(s->ntopo_preset, 1);
    assert_string_equal(s->topo_preset[0], "dgx-h100:nodes=2");
    assert_int_equal(s->nnames, 1);
    assert_string_equal(s->names[0], "A");
    json_t *j = tc_scenario_to_json(s);
    tc_scenario *r = tc_scenario_new(TC_CMD_COMPARE);
    assert_int_equal(tc_scenario_read_json(r, j, "saved", &err), TC_OK);
    if (tc_scenario_resolve(r, &err) != TC_OK)
        fail_msg("resolve again: %s", err.msg);
    assert_int_equal(r->ntopo, 1);
    assert_string_equal(r->topo[0], s->topo[0]);
    assert_int_equal(r->ntopo_preset, 1);
    assert_string_equal(r->topo_preset[0], "dgx-h100:nodes=2");
    json_t *k = tc_scenario_to_json(r);
    assert_true(json_equal(j, k));
    json_decref(j);
    json_decref(k);
    tc_scenario_free(r);
    tc_scenario_free(s);
}

static void flags_that_do_not_apply_to_the_mode_are_refused(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    const char *t[1] = {"clos:down=4x4,up=1x4"}, *op[1] = {"allreduce"}, *sz[1] = {"1MiB"}, *rc[1] = {"1Gbps"},
               *seed[1] = {"first"};
    assert_int_equal(tc_scenario_set_flag(s, "--topo", t, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--op", op, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--size", sz, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--rate-cap", rc, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--rate-cap"));
    assert_non_null(strstr(err.msg, "--mode flow"));
    /* --size and --sizes set one key: giving both is a conflict. */
    const char *szs[1] = {"1KiB:1MiB"};
    assert_int_equal(tc_scenario_set_flag(s, "--sizes", szs, 1, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--size"));
    (void)seed;
    tc_scenario_free(s);
}

static void degraded_link_is_recorded_and_rebuilt(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    assert_int_equal(read_text(s, "{\"network\": {\"topo\": [\"clos:down=4x4,up=1x4\"], \"degrade\": "
                                  "[\"link:3=0.25\", {\"link\": 5, \"factor\": 0.5}]}, \"collective\": "
                                  "{\"op\": [\"allreduce\"], \"sizes\": [1e6]}}",
                               &err),
                     TC_OK);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    tc_net net;
    assert_int_equal(tc_net_build(s, &net, &err), TC_OK);
    tc_topo *plain = NULL;
    assert_int_equal(tc_topo_build(s->topo[0], &plain, &err), TC_OK);
    assert_true(net.topo[0]->links[3].bw == 0.25 * plain->links[3].bw);
    assert_true(net.topo[0]->links[5].bw == 0.5 * plain->links[5].bw);
    assert_true(net.topo[0]->links[4].bw == plain->links[4].bw);
    tc_topo_free(plain);
    tc_net_free(&net);
    tc_scenario_free(s);
}

static void random_placement_is_a_seeded_permutation(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_topo *t = NULL;
    assert_int_equal(tc_topo_build("torus:dims=8x8", &t, &err), TC_OK);
    for (uint64_t seed = 0; seed < 20; seed++) {
        tc_job_place jp = {.policy = TC_PLACE_RANDOM, .ranks = (uint32_t)(1 + seed * 3), .seed = seed};
        uint32_t *a, *b, pa, pb;
        assert_int_equal(tc_place_map(t, &jp, &a, &pa, &err), TC_OK);
        assert_int_equal(tc_place_map(t, &jp, &b, &pb, &err), TC_OK);
        assert_int_equal(pa, jp.ranks);
        assert_memory_equal(a, b, pa * sizeof *a);
        uint8_t seen[64] = {0};
        for (uint32_t i = 0; i < pa; i++) {
            assert_true(a[i] < 64);
            assert_int_equal(seen[a[i]]++, 0);
        }
        free(a), free(b);
    }
    tc_job_place all = {.policy = TC_PLACE_RANDOM, .seed = 1};
    uint32_t *m, p;
    assert_int_equal(tc_place_map(t, &all, &m, &p, &err), TC_OK);
    assert_int_equal(p, 64);
    uint32_t moved = 0;
    for (uint32_t i = 0; i < p; i++)
        moved += m[i] != i;
    assert_true(moved > 32);
    free(m);
    uint32_t twice[] = {1, 2, 1};
    tc_job_place bad = {.policy = TC_PLACE_LIST, .endpoints = twice, .nendpoints = 3};
    assert_int_equal(tc_place_map(t, &bad, &m, &p, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "twice"));
    tc_topo_free(t);
}

static void partitions_cover_every_rank_once(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_topo *t = NULL;
    assert_int_equal(tc_topo_build("clos:down=8x4,up=1x4,node=4", &t, &err), TC_OK);
    uint32_t map[32];
    for (uint32_t r = 0; r < 32; r++)
        map[r] = (r * 5) % 32; /* a scrambled but whole placement */
    tc_partition pt;
    assert_int_equal(tc_partition_make(TC_PART_BLOCK, 8, 32, NULL, NULL, &pt, &err), TC_OK);
    assert_int_equal(pt.ngroups, 4);
    assert_int_equal(pt.group_of[9], 1);
    tc_partition_free(&pt);
    assert_int_equal(tc_partition_make(TC_PART_STRIDE, 8, 32, NULL, NULL, &pt, &err), TC_OK);
    assert_int_equal(pt.ngroups, 8);
    assert_int_equal(pt.members[pt.first[1]], 1);
    assert_int_equal(pt.members[pt.first[1] + 1], 9);
    tc_partition_free(&pt);
    assert_int_equal(tc_partition_make(TC_PART_NODE, 0, 32, map, t, &pt, &err), TC_OK);
    assert_int_equal(pt.ngroups, 8);
    for (uint32_t g = 0; g < pt.ngroups; g++) {
        assert_int_equal(pt.first[g + 1] - pt.first[g], 4);
        for (uint32_t k = pt.first[g]; k < pt.first[g + 1]; k++)
            assert_int_equal(map[pt.members[k]] / 4, map[pt.members[pt.first[g]]] / 4);
    }
    tc_partition_free(&pt);
    assert_int_equal(tc_partition_make(TC_PART_BLOCK, 5, 32, NULL, NULL, &pt, &err), TC_EINVAL);
    tc_topo_free(t);
}

static void shortest_numbers_read_back_exactly(void **state)
{
    (void)state;
    uint64_t x = 7;
    char b[40];
    for (int i = 0; i < 100000; i++) {
        x = tc_mix64(x);
        double v;
        memcpy(&v, &x, sizeof v);
        if (!(v == v) || v - v != 0)
            continue;
        tc_fmt_shortest(v, b, sizeof b);
        assert_true(strtod(b, NULL) == v);
    }
    assert_string_equal(tc_fmt_shortest(0.1, b, sizeof b), "0.1");
    assert_string_equal(tc_fmt_shortest(67108864, b, sizeof b), "67108864");
    assert_string_equal(tc_fmt_shortest(1000, b, sizeof b), "1000");
    assert_string_equal(tc_fmt_shortest(-0.0, b, sizeof b), "-0");
    assert_string_equal(tc_fmt_shortest(1e-6, b, sizeof b), "1e-06");
}

static void csv_cells_are_numbers_in_si_units(void **state)
{
    (void)state;
    tc_rtable t;
    tc_rtable_init(&t, "x");
    int a = tc_rtable_col(&t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    int b = tc_rtable_col(&t, "name", "name", TC_COL_TEXT, NULL, 0);
    size_t r = tc_rtable_row(&t);
    tc_rtable_num(&t, r, a, 4.593e-2);
    tc_rtable_text(&t, r, b, "a,b");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tc_rtable_print_csv(&t, f);
    fclose(f);
    assert_string_equal(buf, "time_s,name\n0.04593,\"a,b\"\n");
    free(buf);
    f = open_memstream(&buf, &len);
    tc_rtable_print(&t, f);
    fclose(f);
    assert_non_null(strstr(buf, "45.93ms"));
    free(buf);
    tc_rtable_free(&t);
}

/* compress's accelerator: looked up in --profiles DIR first, embedded by
 * content in network.profiles, and used from there when the scenario is
 * read back without the directory (tests/data/profiles/test-accel.json:
 * made-up figures, on no default path). */
#define PROFILES TOPOCC_SOURCE_DIR "/tests/data/profiles"
static tc_scenario *compress_with(const char *dir, const char *accel, tc_err *err)
{
    const char *f[] = {"--topo", "clos:down=8x8,up=1x8,bw=10Gbps", "--model", "resnet50", "--codec", "topk:ratio=0.01",
                       "--steps-ratio", "topk:ratio=0.01=1.3", "--accel", accel, "--profiles", dir};
    tc_scenario *s = tc_scenario_new(TC_CMD_COMPRESS);
    for (size_t i = 0; i + 1 < sizeof f / sizeof *f; i += 2) {
        const char *v[1] = {f[i + 1]};
        if (tc_scenario_set_flag(s, f[i], v, 1, err))
            fail_msg("%s %s: %s", f[i], f[i + 1], err->msg);
    }
    return s;
}

static void accelerator_profile_is_found_embedded_and_read_back(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_accel a;
    char name[64];
    /* with the directory: found, and kept with the scenario */
    tc_scenario *s = compress_with(PROFILES, "test-accel", &err);
    if (tc_scenario_resolve(s, &err) || tc_scenario_check_given(s, &err))
        fail_msg("resolve: %s", err.msg);
    assert_int_equal(tc_scenario_accel(s, &a, name, sizeof name, &err), TC_OK);
    assert_string_equal(a.name, "test-accel");
    assert_true(a.flops == 100e12 && a.mem_Bps == 2e12);
    char *text = dump(s);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    json_t *emb = json_object_get(json_object_get(json_object_get(j, "network"), "profiles"), "test-accel");
    assert_string_equal(json_string_value(json_object_get(emb, "kind")), "accelerator");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "compress"), "accel")), "test-accel");

    /* read back with the directory gone: the embedded profile is used */
    json_object_set_new(json_object_get(j, "network"), "profiles_dir", json_string("/nonexistent/topocc-profiles"));
    tc_scenario *t = tc_scenario_new(TC_CMD_COMPRESS);
    if (tc_scenario_read_json(t, j, "test", &err) || tc_scenario_resolve(t, &err) || tc_scenario_check_given(t, &err))
        fail_msg("read back: %s", err.msg);
    assert_int_equal(tc_scenario_accel(t, &a, name, sizeof name, &err), TC_OK);
    assert_true(a.flops == 100e12 && a.mem_Bps == 2e12);
    tc_compress_out *o = NULL;
    if (tc_run_compress(t, NULL, &o, &err))
        fail_msg("run: %s", err.msg);
    assert_string_equal(o->accel->name, "test-accel");
    assert_true(o->accel->flops == 100e12);
    tc_compress_out_free(o);
    tc_scenario_free(t);
    /* ... and without the embedded profile too, it is unknown */
    json_object_set_new(json_object_get(j, "network"), "profiles", json_object());
    t = tc_scenario_new(TC_CMD_COMPRESS);
    assert_int_equal(tc_scenario_read_json(t, j, "test", &err), TC_OK);
    assert_int_equal(tc_scenario_resolve(t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown accelerator 'test-accel'"));
    tc_scenario_free(t);
    json_decref(j);
    free(text);
    tc_scenario_free(s);

    /* without the directory: unknown, one line listing the default path's */
    s = compress_with(PROFILES, "test-accel", &err);
    s->profiles_dir[0] = '\0';
    assert_int_equal(tc_scenario_resolve(s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown accelerator 'test-accel': accepted are "));
    assert_non_null(strstr(err.msg, "h100"));
    assert_null(strchr(err.msg, '\n'));
    tc_scenario_free(s);
    /* an unknown name with the directory lists both */
    s = compress_with(PROFILES, "no-such-chip", &err);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "test-accel"));
    assert_non_null(strstr(err.msg, "h100"));
    tc_scenario_free(s);

    /* the scenario round-trips byte for byte, its profile embedded */
    const char *cp[] = {"--topo", "clos:down=8x8,up=1x8,bw=10Gbps", "--model", "resnet50", "--codec",
                        "topk:ratio=0.01", "--steps-ratio", "topk:ratio=0.01=1.3", "--accel", "test-accel",
                        "--profiles", PROFILES};
    round_trip(TC_CMD_COMPRESS, cp, 12);
}

/* docs/SCENARIO.md defines every key of the table and every flag. */
static void every_key_and_flag_is_documented(void **state)
{
    (void)state;
    FILE *f = fopen(TOPOCC_SOURCE_DIR "/docs/SCENARIO.md", "r");
    assert_non_null(f);
    static char doc[1 << 17];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        char q[128];
        snprintf(q, sizeof q, "`%s`", tc_scn_key_get(i)->path);
        if (!strstr(doc, q))
            fail_msg("docs/SCENARIO.md does not define %s", q);
    }
    for (size_t i = 0; i < tc_option_count(); i++)
        if (!strstr(doc, tc_option_get(i)->flag))
            fail_msg("docs/SCENARIO.md does not mention %s", tc_option_get(i)->flag);
}

/* flow.skip: on by default and written out in flow mode; --no-skip turns
 * it off, in the scenario's JSON and in the simulator's options; a file's
 * key is read back, must be a boolean, and applies only in flow mode. */
static void no_skip_reaches_the_scenario_and_the_simulator(void **state)
{
    (void)state;
    tc_err err = {{0}};
    const char *flags[] = {"--topo", "clos:down=4x4,up=1x2", "--op", "allreduce", "--size", "1MiB", "--mode", "flow"};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    for (size_t i = 0; i < 8; i += 2)
        assert_int_equal(tc_scenario_set_flag(s, flags[i], &flags[i + 1], 1, &err), TC_OK);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    char *a = dump(s);
    assert_non_null(strstr(a, "\"skip\": true"));
    free(a);
    tc_eval_opts eo;
    tc_flow_opts fo;
    tc_scenario_eval_opts(s, NULL, 0, &eo, &fo);
    assert_false(fo.no_skip);
    const char *none[1] = {""};
    assert_int_equal(tc_scenario_set_flag(s, "--no-skip", none, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(s, &err), TC_OK);
    a = dump(s);
    assert_non_null(strstr(a, "\"skip\": false"));
    free(a);
    tc_scenario_eval_opts(s, NULL, 0, &eo, &fo);
    assert_true(fo.no_skip);
    assert_int_equal(tc_scenario_set_flag(s, "--no-skip", none, 1, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--no-skip"));
    tc_scenario_free(s);
    /* Concurrent and compress run the flow simulator too. */
    const tc_scn_key *k = tc_scn_key_get((size_t)tc_scn_key_index("flow.skip"));
    assert_non_null(k);
    tc_scenario *c = tc_scenario_new(TC_CMD_CONCURRENT);
    assert_true(tc_scn_key_applies(k, c));
    assert_non_null(tc_option_find("--no-skip", TC_CMD_CONCURRENT));
    assert_non_null(tc_option_find("--no-skip", TC_CMD_COMPARE));
    assert_non_null(tc_option_find("--no-skip", TC_CMD_COMPRESS));
    assert_null(tc_option_find("--no-skip", TC_CMD_TOPO));
    tc_scenario_free(c);
    /* From a file: false is read, a string is refused, steps mode refuses it. */
    json_error_t je;
    static const char *const texts[] = {
        "{\"eval\": {\"mode\": \"flow\"}, \"flow\": {\"skip\": false}}",
        "{\"eval\": {\"mode\": \"flow\"}, \"flow\": {\"skip\": \"no\"}}",
        "{\"eval\": {\"mode\": \"steps\"}, \"flow\": {\"skip\": false}}",
    };
    for (int i = 0; i < 3; i++) {
        s = tc_scenario_new(TC_CMD_COLLECTIVE);
        json_t *j = json_loads(texts[i], 0, &je);
        assert_non_null(j);
        tc_status st = tc_scenario_read_json(s, j, "f.json", &err);
        if (st == TC_OK)
            st = tc_scenario_check_given(s, &err);
        if (i == 0) {
            assert_int_equal(st, TC_OK);
            assert_false(s->skip);
        } else {
            assert_int_equal(st, TC_EINVAL);
            assert_non_null(strstr(err.msg, "flow.skip"));
            assert_null(strchr(err.msg, '\n'));
        }
        json_decref(j);
        tc_scenario_free(s);
    }
}

/* What a resolved scenario runs is what it records: every key of its
 * command, whether it applies or not, holds the value that its JSON, read
 * back and resolved (a replay), holds. */
static void runs_what_it_records(const tc_scenario *s)
{
    tc_err err = {{0}};
    json_t *j = tc_scenario_to_json(s);
    assert_non_null(j);
    tc_scenario *t = tc_scenario_new(s->command);
    if (tc_scenario_read_json(t, j, "recorded", &err) || tc_scenario_resolve(t, &err) ||
        tc_scenario_check_given(t, &err))
        fail_msg("read back: %s", err.msg);
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        const tc_scn_key *k = tc_scn_key_get(i);
        if (!(k->cmds & TC_CMD_BIT(s->command)))
            continue;
        json_t *a = k->get(s), *b = k->get(t);
        if (!json_equal(a, b)) {
            char *ta = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
            char *tb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
            fail_msg("%s: the run holds %s, its recorded scenario %s", k->path, ta, tb);
        }
        json_decref(a);
        json_decref(b);
    }
    json_decref(j);
    tc_scenario_free(t);
}

/* A scenario file's keys, then flags over it: resolved and checked. */
static tc_scenario *file_then_flags(tc_command c, const char *text, const char *const *flags, size_t n)
{
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(c);
    if (read_text(s, text, &err))
        fail_msg("file: %s", err.msg);
    for (size_t i = 0; i + 1 < n; i += 2) {
        const char *v[1] = {flags[i + 1]};
        if (tc_scenario_set_flag(s, flags[i], v, 1, &err))
            fail_msg("%s %s: %s", flags[i], flags[i + 1], err.msg);
    }
    if (tc_scenario_resolve(s, &err) || tc_scenario_check_given(s, &err))
        fail_msg("resolve: %s", err.msg);
    return s;
}

/* A key that a flag over a scenario file makes moot is left out of the
 * scenario written, and takes its default for the run too (not the file's
 * value, which no replay would know). */
static void keys_made_moot_take_their_defaults(void **state)
{
    (void)state;
    /* train: --pp 1 makes iteration.virtual_stages moot, --sync ddp the
     * sync keys, --ep 1 iteration.ep_algo, --mode formula iteration.cosim */
    static const char train[] =
        "{\"network\": {\"topo\": [\"clos:down=8x8,up=1x8\"]}, \"eval\": {\"mode\": \"flow\"},"
        " \"iteration\": {\"model\": \"mixtral-8x7b\", \"virtual_stages\": 2, \"micro_batches\": 4,"
        " \"allow_oom\": true, \"ep_algo\": \"ring\", \"cosim\": false},"
        " \"parallel\": {\"dp\": 16, \"tp\": 2, \"pp\": 2, \"ep\": 4},"
        " \"sync\": {\"strategy\": \"streaming-diloco\", \"replicas\": 4, \"inner_steps\": 50, \"outer_steps\": 3,"
        " \"fragments\": 2, \"overlap_steps\": 2, \"outer_dtype\": \"bf16\"}}";
    const char *tf[] = {"--pp", "1", "--dp", "32", "--sync", "ddp", "--ep", "1", "--mode", "formula"};
    tc_scenario *s = file_then_flags(TC_CMD_TRAIN, train, tf, 10);
    assert_int_equal(s->vstages, 1);
    assert_int_equal(s->inner_steps, 100);
    assert_int_equal(s->outer_steps, 0);
    assert_int_equal(s->overlap_steps, 1);
    assert_string_equal(s->outer_dtype, "fp32");
    assert_string_equal(s->it_algo[2], "library");
    assert_true(s->it_cosim);
    runs_what_it_records(s);
    tc_scenario_free(s);
    /* streaming-diloco to diloco: only the streaming keys are moot */
    const char *tf2[] = {"--sync", "diloco"};
    s = file_then_flags(TC_CMD_TRAIN, train, tf2, 2);
    assert_int_equal(s->vstages, 2);
    assert_int_equal(s->inner_steps, 50);
    assert_int_equal(s->overlap_steps, 1);
    assert_string_equal(s->outer_dtype, "bf16");
    runs_what_it_records(s);
    tc_scenario_free(s);

    /* collective: another placement makes the seed and the endpoints
     * moot, --mode formula the flow keys */
    static const char rnd[] =
        "{\"network\": {\"topo\": [\"torus:dims=4x4x4\"]}, \"collective\": {\"op\": [\"allreduce\"],"
        " \"sizes\": [1048576]}, \"job\": {\"ranks\": 8, \"place\": \"random\", \"seed\": 7},"
        " \"eval\": {\"mode\": \"flow\"}, \"flow\": {\"rate_cap_Bps\": 1e10, \"multipath\": \"spray\","
        " \"eager_limit_bytes\": 4096, \"skip\": false}}";
    const char *cf[] = {"--place", "first", "--mode", "formula"};
    s = file_then_flags(TC_CMD_COLLECTIVE, rnd, cf, 4);
    assert_int_equal(s->job.seed, 0);
    assert_true(s->rate_cap_Bps == 0 && s->skip);
    runs_what_it_records(s);
    tc_scenario_free(s);
    static const char list[] =
        "{\"network\": {\"topo\": [\"torus:dims=4x4x4\"]}, \"collective\": {\"op\": [\"allreduce\"],"
        " \"sizes\": [1048576]}, \"job\": {\"place\": \"list\", \"endpoints\": [0, 5, 9, 12]}}";
    const char *lf[] = {"--place", "random:seed=3", "--ranks", "4"};
    s = file_then_flags(TC_CMD_COLLECTIVE, list, lf, 4);
    assert_int_equal(s->job.nendpoints, 0);
    runs_what_it_records(s);
    tc_scenario_free(s);

    /* compress: --steps-ratio makes its own training's keys moot */
    static const char comp[] =
        "{\"network\": {\"topo\": [\"clos:down=8x8,up=1x8,bw=10Gbps\"]}, \"compress\": {\"model\": \"resnet50\"},"
        " \"codecs\": [\"topk:ratio=0.01\"], \"train\": {\"model\": \"mlp\", \"steps\": 300, \"lr\": 0.2}}";
    const char *pf[] = {"--steps-ratio", "topk:ratio=0.01=1.3"};
    s = file_then_flags(TC_CMD_COMPRESS, comp, pf, 2);
    assert_int_equal(s->train.steps, 1000);
    assert_true(s->train.lr != 0.2);
    runs_what_it_records(s);
    tc_scenario_free(s);

    /* a moot key given as a flag is still refused */
    tc_err err = {{0}};
    s = tc_scenario_new(TC_CMD_TRAIN);
    assert_int_equal(read_text(s, train, &err), TC_OK);
    const char *one[] = {"1"}, *two[] = {"2"}, *dp[] = {"32"};
    assert_int_equal(tc_scenario_set_flag(s, "--pp", one, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--dp", dp, 1, &err), TC_OK); /* dp x tp: the 64 endpoints */
    assert_int_equal(tc_scenario_set_flag(s, "--virtual-stages", two, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--virtual-stages applies only with --pp above 1"));
    tc_scenario_free(s);
}

/* A cluster scenario of the trace at path, resolved (its digest recorded). */
static tc_scenario *cluster_of(const char *path, bool strict)
{
    tc_err err = {{0}};
    tc_scenario *s = tc_scenario_new(TC_CMD_CLUSTER);
    const char *topo[] = {"torus:dims=8"}, *trace[] = {path};
    assert_int_equal(tc_scenario_set_flag(s, "--topo", topo, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_set_flag(s, "--trace", trace, 1, &err), TC_OK);
    s->cluster_strict = strict;
    if (tc_scenario_resolve(s, &err))
        fail_msg("resolve: %s", err.msg);
    return s;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* A trace file's content is checked before the run, with the run's
 * message; the trace the check read is the one the run replays, and only
 * for the file it was read from (by its digest: a file rewritten since is
 * read again). */
static void cluster_trace_checked_before_the_run(void **state)
{
    (void)state;
    char path[] = "/tmp/topocc_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tc_err e1 = {{0}}, e2 = {{0}};
    /* a malformed line, a job larger than the topology under --strict */
    write_text(path, "submit,size,duration\n0,3,10\n1,x,4\n");
    tc_scenario *s = cluster_of(path, false);
    tc_cluster_run_out *o = NULL;
    assert_int_equal(tc_scenario_check_run(s, &e1), TC_EINVAL);
    assert_int_equal(tc_run_cluster(s, NULL, &o, &e2), TC_EINVAL);
    assert_null(o);
    assert_non_null(strstr(e1.msg, ":3: field 'size'"));
    assert_string_equal(e1.msg, e2.msg);
    tc_scenario_free(s);
    write_text(path, "submit,size,duration\n0,3,10\n1,9,4\n");
    s = cluster_of(path, true);
    assert_int_equal(tc_scenario_check_run(s, &e1), TC_EINVAL);
    assert_int_equal(tc_run_cluster(s, NULL, &o, &e2), TC_EINVAL);
    assert_non_null(strstr(e1.msg, "the job of line 3 asks for 9 endpoints but A has 8 (--strict"));
    assert_string_equal(e1.msg, e2.msg);
    tc_scenario_free(s);
    /* checked, then run: the jobs read once, the same as a run unchecked */
    write_text(path, "submit,size,duration\n0,3,10\n0,2,2\n0,2,10\n1,3,4\n3,1,2\n");
    s = cluster_of(path, false);
    tc_cluster_run_out *a = NULL, *b = NULL;
    assert_int_equal(tc_run_cluster(s, NULL, &a, &e1), TC_OK);
    assert_int_equal(tc_scenario_check_run(s, &e1), TC_OK);
    assert_int_equal(tc_scenario_check_run(s, &e1), TC_OK); /* a sweep's next point */
    assert_int_equal(tc_run_cluster(s, NULL, &b, &e1), TC_OK);
    assert_int_equal(a->trace.n, 5);
    assert_int_equal(b->trace.n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_true(a->trace.jobs[i].submit_s == b->trace.jobs[i].submit_s &&
                    a->trace.jobs[i].duration_s == b->trace.jobs[i].duration_s &&
                    a->trace.jobs[i].size == b->trace.jobs[i].size && a->trace.jobs[i].line == b->trace.jobs[i].line);
    assert_true(a->run[0].makespan_s == b->run[0].makespan_s && a->run[0].wait_mean_s == b->run[0].wait_mean_s);
    tc_cluster_run_out_free(a);
    tc_cluster_run_out_free(b);
    /* checked, then the file rewritten: the run replays the trace the
     * check read, the content its scenario's digest names (not read
     * again); a scenario of the new file reads it */
    assert_int_equal(tc_scenario_check_run(s, &e1), TC_OK);
    write_text(path, "submit,size,duration\n0,4,10\n");
    assert_int_equal(tc_run_cluster(s, NULL, &a, &e1), TC_OK);
    assert_int_equal(a->trace.n, 5);
    tc_cluster_run_out_free(a);
    tc_scenario *t = cluster_of(path, false);
    assert_int_equal(tc_run_cluster(t, NULL, &a, &e1), TC_OK);
    assert_int_equal(a->trace.n, 1);
    assert_int_equal(a->trace.jobs[0].size, 4);
    tc_cluster_run_out_free(a);
    tc_scenario_free(t);
    tc_scenario_free(s);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_json_round_trip_is_identical_for_every_command),
        cmocka_unit_test(random_flag_combinations_round_trip),
        cmocka_unit_test(groups_of_compare_and_concurrent_round_trip),
        cmocka_unit_test(unknown_key_names_the_nearest_valid_key),
        cmocka_unit_test(wrong_type_names_the_key_and_the_type),
        cmocka_unit_test(steps_ratio_object_names_what_is_wrong),
        cmocka_unit_test(command_line_list_replaces_the_file_list),
        cmocka_unit_test(presets_go_after_the_topologies_or_where_placed),
        cmocka_unit_test(a_preset_flag_replaces_the_files_topologies),
        cmocka_unit_test(flags_that_do_not_apply_to_the_mode_are_refused),
        cmocka_unit_test(degraded_link_is_recorded_and_rebuilt),
        cmocka_unit_test(random_placement_is_a_seeded_permutation),
        cmocka_unit_test(partitions_cover_every_rank_once),
        cmocka_unit_test(shortest_numbers_read_back_exactly),
        cmocka_unit_test(csv_cells_are_numbers_in_si_units),
        cmocka_unit_test(accelerator_profile_is_found_embedded_and_read_back),
        cmocka_unit_test(every_key_and_flag_is_documented),
        cmocka_unit_test(no_skip_reaches_the_scenario_and_the_simulator),
        cmocka_unit_test(keys_made_moot_take_their_defaults),
        cmocka_unit_test(cluster_trace_checked_before_the_run),
        cmocka_unit_test(set_flag_refuses_what_the_command_line_refuses),
        cmocka_unit_test(scenario_open_takes_the_documents_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
