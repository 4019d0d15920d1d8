/*
 * test_run_train.c - the compression commands' scenarios: compress equals
 * its parts (tc_workload_iteration + tc_tta_compute), the bandwidth sweep
 * leaves the main result alone and agrees with it at the network's own
 * rate, the accuracy file round-trips exactly (also inside a
 * train-accuracy document), codec-bench measures, CSV numbers parse, and
 * the errors name the option. Training only on a few steps, and only where
 * the Fashion-MNIST data set is installed.
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
#include <jansson.h>
#include "topocc/render.h"

#define CLOS "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us"

static bool have_data(void)
{
    return access(TC_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz", R_OK) == 0 &&
           access(TC_FASHION_MNIST_DIR "/t10k-labels-idx1-ubyte.gz", R_OK) == 0;
}

static void set_value(tc_scn_codec_value *v, const char *codec, double value)
{
    snprintf(v->codec, sizeof v->codec, "%s", codec);
    v->value = value;
}

/* compress on CLOS, 64 workers, resnet50, two codecs with given ratios. */
static tc_scenario *compress_scenario(bool sweep)
{
    tc_scenario *s = tc_scenario_new(TC_CMD_COMPRESS);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", CLOS);
    s->ntopo = 1;
    snprintf(s->model, sizeof s->model, "resnet50");
    snprintf(s->codecs[0], sizeof s->codecs[0], "topk:ratio=0.01");
    snprintf(s->codecs[1], sizeof s->codecs[1], "powersgd:rank=4");
    s->ncodecs = 2;
    set_value(&s->steps_ratio[0], "topk:ratio=0.01", 1.3);
    set_value(&s->steps_ratio[1], "powersgd", 1.1);
    s->nsteps_ratio = 2;
    s->job.ranks = 64;
    s->sweep_bw = sweep;
    tc_err err = {{0}};
    if (tc_scenario_resolve(s, &err))
        fail_msg("resolve: %s", err.msg);
    return s;
}

static tc_compress_out *run_compress(const tc_scenario *s)
{
    tc_compress_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_compress(s, NULL, &o, &err))
        fail_msg("compress: %s", err.msg);
    return o;
}

static void compress_equals_its_parts(void **state)
{
    (void)state;
    tc_scenario *s = compress_scenario(false);
    tc_compress_out *o = run_compress(s);
    assert_int_equal(o->n, 4);
    const char *names[4] = {"fp32", "bf16", "topk:ratio=0.01", "powersgd:rank=4"};
    double ratio[4] = {1, 1, 1.3, 1.1};
    tc_topo *t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build(CLOS, &t, &err), TC_OK);
    tc_workload w;
    memset(&w, 0, sizeof w);
    assert_int_equal(tc_model_parse("resnet50", &w.model, &err), TC_OK);
    w.accel = tc_accel_find("h100");
    w.workers = 64;
    tc_tl_opts_default(&w.contention); /* the scenario's default s_c, s_m */
    assert_true(w.contention.s_c == s->s_c && w.contention.s_m == s->s_m);
    assert_string_equal(s->it_algo[0], "library"); /* the DP policy: train's default */
    snprintf(w.dp_algo, sizeof w.dp_algo, "library");
    double iter[4];
    tc_codec_iter its[4];
    for (int k = 0; k < 4; k++) {
        tc_codec_spec c;
        tc_codec_iter *it = &its[k];
        assert_int_equal(tc_codec_parse(names[k], &c, &err), TC_OK);
        assert_int_equal(tc_workload_iteration(t, &w, &c, 0, it, &err), TC_OK);
        assert_string_equal(o->rows[k].codec.name, names[k]);
        assert_true(o->rows[k].steps_ratio == ratio[k]);
        assert_true(o->rows[k].it.t.iter_s == it->t.iter_s);
        assert_true(o->rows[k].it.sent_bytes == it->sent_bytes);
        iter[k] = it->t.iter_s;
    }
    tc_tta tta[4];
    double B = tc_model_baseline_steps(&w.model, 64);
    tc_tta_compute(iter, ratio, 4, B, 1, 0, tta);
    /* PowerSGD's first 1,000 steps are fp32 iterations (start=) */
    assert_true(its[3].plain_steps == 1000 && its[3].plain_iter_s == its[0].t.iter_s);
    tta[3].tta_s = tc_tta_phased_s(B * ratio[3], iter[3], 1000, its[0].t.iter_s);
    tta[3].speedup_bf16 = tta[1].tta_s / tta[3].tta_s;
    for (int k = 0; k < 4; k++) {
        double tol = k == 3 ? 1e-12 : 0;
        assert_true(fabs(o->rows[k].tta.tta_s - tta[k].tta_s) <= tol * tta[k].tta_s);
        assert_true(fabs(o->rows[k].tta.speedup_bf16 - tta[k].speedup_bf16) <= tol * tta[k].speedup_bf16 ||
                    (isnan(tta[k].speedup_bf16) && isnan(o->rows[k].tta.speedup_bf16)));
    }
    assert_true(o->rows[3].tta.steps == B * ratio[3]);
    assert_string_equal(o->acc_source, "given");
    assert_string_equal(o->rows[0].ratio_source, "assumed");
    assert_string_equal(o->rows[3].ratio_source, "given");
    tc_topo_free(t);
    tc_compress_out_free(o);
    tc_scenario_free(s);
}

static void sweep_leaves_the_main_result_alone(void **state)
{
    (void)state;
    tc_scenario *s0 = compress_scenario(false), *s1 = compress_scenario(true);
    char before[sizeof s1->topo[0]];
    memcpy(before, s1->topo[0], sizeof before);
    tc_compress_out *a = run_compress(s0), *b = run_compress(s1);
    assert_memory_equal(before, s1->topo[0], sizeof before);   /* the scenario is not edited */
    assert_int_equal(a->n, b->n);
    assert_string_equal(a->topology, b->topology);
    assert_int_equal(b->nrates, 8);
    size_t own = b->nrates;
    for (size_t i = 0; i < b->nrates; i++)
        if (b->rates[i] == b->injection_Bps)
            own = i;
    assert_true(own < b->nrates); /* 400 Gb/s is a swept rate */
    for (size_t k = 0; k < a->n; k++) {
        assert_true(a->rows[k].it.t.iter_s == b->rows[k].it.t.iter_s);
        assert_true(a->rows[k].tta.tta_s == b->rows[k].tta.tta_s);
        assert_true(b->sweep_iter_s[own][k] == b->rows[k].it.t.iter_s);
        assert_true(b->sweep_tta_s[own][k] == b->rows[k].tta.tta_s);
        double x = b->sweep_speedup[own][k], y = b->rows[k].tta.speedup_bf16;
        assert_true(x == y || (isnan(x) && isnan(y)));
    }
    /* Lower bandwidth, longer iterations: the sweep did change the network. */
    assert_true(b->sweep_iter_s[0][1] > b->rows[1].it.t.iter_s);
    tc_compress_out_free(a);
    tc_compress_out_free(b);
    tc_scenario_free(s0);
    tc_scenario_free(s1);
}

static void expect_compress_error(tc_scenario *s, const char *what)
{
    tc_compress_out *o = (tc_compress_out *)1;
    tc_err err = {{0}};
    assert_int_equal(tc_run_compress(s, NULL, &o, &err), TC_EINVAL);
    assert_null(o);
    if (!strstr(err.msg, what))
        fail_msg("expected '%s' in: %s", what, err.msg);
    assert_null(strchr(err.msg, '\n'));
    tc_scenario_free(s);
}

static void compress_errors_name_the_option(void **state)
{
    (void)state;
    tc_scenario *s = compress_scenario(false);
    set_value(&s->steps_ratio[2], "int8", 1.2);
    s->nsteps_ratio = 3;
    expect_compress_error(s, "--steps-ratio for codec 'int8', which is not among the codecs (fp32, bf16, "
                             "topk:ratio=0.01, powersgd:rank=4)");
    s = compress_scenario(false);
    s->nsteps_ratio = 1;
    expect_compress_error(s, "no --steps-ratio for codec 'powersgd:rank=4'");
    s = compress_scenario(false);
    set_value(&s->steps_ratio[2], "topk:ratio=0.01", 2);
    s->nsteps_ratio = 3;
    expect_compress_error(s, "given twice");
    s = compress_scenario(false);
    s->steps_ratio[0].value = 0;
    expect_compress_error(s, "--steps-ratio");
    s = compress_scenario(false);
    set_value(&s->throughput[0], "thc", 5e9);
    s->nthroughput = 1;
    expect_compress_error(s, "--codec-throughput for codec 'thc'");
    s = compress_scenario(false);
    s->job.ranks = 1;
    expect_compress_error(s, "at least 2 workers");
    s = compress_scenario(false);
    s->mfu = 2;
    expect_compress_error(s, "--mfu");
}

/* A kind's value applies to every codec of the kind, a spec's to its own. */
static void codec_values_by_kind_and_spec(void **state)
{
    (void)state;
    tc_scenario *s = compress_scenario(false);
    set_value(&s->throughput[0], "topk:ratio=0.01", 7e9);
    set_value(&s->throughput[1], "topk", 3e9);
    set_value(&s->throughput[2], "powersgd", 2e9);
    s->nthroughput = 3;
    tc_compress_out *o = run_compress(s);
    assert_true(o->rows[2].thr_given == 7e9);
    assert_true(o->rows[2].it.codec_Bps == 7e9);
    assert_true(o->rows[3].thr_given == 2e9);
    assert_true(o->rows[0].thr_given == 0);
    tc_compress_out_free(o);
    s->steps_ratio[1].value = -1; /* never */
    o = run_compress(s);
    assert_true(o->rows[3].steps_ratio < 0);
    assert_true(isnan(o->rows[3].tta.tta_s));
    tc_compress_out_free(o);
    tc_scenario_free(s);
}

/* ---- the accuracy file ---- */

static void check_same_curves(const tc_acc_curve *a, const tc_acc_curve *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(a[i].codec.name, b[i].codec.name);
        assert_int_equal(a[i].n, b[i].n);
        for (size_t k = 0; k < a[i].n; k++) {
            assert_int_equal(a[i].pts[k].step, b[i].pts[k].step);
            assert_true(a[i].pts[k].test_acc == b[i].pts[k].test_acc);
            double x = a[i].pts[k].train_loss, y = b[i].pts[k].train_loss;
            assert_true(x == y || (isnan(x) && isnan(y)));
        }
    }
}

static void check_csv(const tc_rtable *t);

/* The value through its text (tc_json_dumpf) and back. */
static json_t *through_text(const json_t *j)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_true(tc_json_dumpf(j, f));
    rewind(f);
    json_error_t je;
    json_t *r = json_loadf(f, 0, &je);
    fclose(f);
    if (!r)
        fail_msg("reading back: %s", je.text);
    return r;
}

static void accuracy_json_round_trips_exactly(void **state)
{
    (void)state;
    tc_acc_point p[4] = {{0, 0.1, 2.302585092994046}, {50, 1.0 / 3.0, 0.7}, {99, 0.8123456789012345, NAN},
                         {100, 1.0, 1e-300}};
    tc_acc_curve in[2];
    tc_err err = {{0}};
    assert_int_equal(tc_codec_parse("fp32", &in[0].codec, &err), TC_OK);
    assert_int_equal(tc_codec_parse("randk:ratio=0.05,seed=7", &in[1].codec, &err), TC_OK);
    in[0].n = 4, in[0].pts = p;
    in[1].n = 3, in[1].pts = p + 1;
    tc_train_opts o;
    memset(&o, 0, sizeof o);
    o.steps = 100;
    o.lr = 0.037;
    o.seed = 9007199254740993ULL; /* above 2^53: must not pass through a double */
    o.train_subset = 1234;
    tc_train_defaults(&o);
    json_t *j = tc_acc_to_json(&o, in, 2);
    assert_non_null(j);
    json_t *r = through_text(j);
    tc_train_opts back;
    tc_acc_curve *c = NULL;
    size_t n = 0;
    if (tc_acc_from_json(r, "the test's curves", &back, &c, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    check_same_curves(in, c, 2);
    assert_true(back.lr == o.lr);
    assert_true(back.seed == o.seed);
    assert_int_equal(back.train_subset, o.train_subset);
    assert_int_equal(back.steps, o.steps);
    assert_true(back.bucket_bytes == o.bucket_bytes);
    tc_acc_curves_free(c, n);
    free(c);
    /* A bad field names the source given. */
    json_object_set_new(r, "lr", json_string("fast"));
    assert_int_equal(tc_acc_from_json(r, "the test's curves", &back, &c, &n, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "the test's curves: lr"));
    assert_null(c);
    json_decref(r);
    json_decref(j);
}

/* The train-accuracy document (schema_version, command, scenario around
 * the file's fields) reads back as an accuracy file, statistics included. */
static void train_accuracy_document_is_an_accuracy_file(void **state)
{
    (void)state;
    tc_scenario *s = tc_scenario_new(TC_CMD_TRAIN_ACCURACY);
    tc_err err = {{0}};
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    tc_train_accuracy_out *out = calloc(1, sizeof *out);
    out->opts = s->train;
    out->opts.seeds = 1;
    out->n = 2;
    out->curves = calloc(2, sizeof *out->curves);
    const char *names[2] = {"bf16", "int8"};
    for (int i = 0; i < 2; i++) {
        tc_acc_curve *c = &out->curves[i];
        c->pts = calloc(3, sizeof *c->pts);
        c->n = 3;
        c->seed = out->opts.seed;
        c->pts[0] = (tc_acc_point){0, 0.1, 2.3};
        c->pts[1] = (tc_acc_point){out->opts.steps / 2, 0.8 + 0.01 * i, 0.6};
        c->pts[2] = (tc_acc_point){out->opts.steps, 0.85, 0.4};
        assert_int_equal(tc_codec_parse(names[i], &c->codec, &err), TC_OK);
    }
    assert_int_equal(tc_acc_stats_compute(out->curves, 2, 0, &out->stats, &err), TC_OK);
    json_t *doc = tc_train_accuracy_json(out, s);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "command")), "train-accuracy");
    assert_int_equal(json_integer_value(json_object_get(doc, "schema_version")), TC_SCHEMA_VERSION);
    assert_true(json_is_object(json_object_get(doc, "scenario")));
    assert_true(json_is_object(json_object_get(doc, "statistics")));
    json_t *r = through_text(doc);
    tc_train_opts back;
    tc_acc_curve *c = NULL;
    size_t n = 0;
    if (tc_acc_from_json(r, "the document", &back, &c, &n, &err))
        fail_msg("%s", err.msg);
    check_same_curves(out->curves, c, 2);
    assert_int_equal(back.seeds, 1);
    tc_acc_curves_free(c, n);
    free(c);
    /* typed tables: statistics (the primary), curves (long), final (per run) */
    tc_rtable tabs[4];
    assert_int_equal(tc_train_accuracy_tables(out, s, tabs, 4), 3);
    assert_string_equal(tabs[0].name, "statistics");
    assert_int_equal(tabs[0].nrows, 2);
    assert_string_equal(tabs[1].name, "curves");
    assert_int_equal(tabs[1].nrows, 6);
    assert_string_equal(tabs[2].name, "final");
    for (int i = 0; i < 3; i++) {
        check_csv(&tabs[i]);
        tc_rtable_free(&tabs[i]);
    }
    FILE *f = tmpfile();
    tc_train_accuracy_print(out, s, f);
    assert_true(ftell(f) > 0);
    fclose(f);
    json_decref(r);
    json_decref(doc);
    tc_train_accuracy_out_free(out);
    tc_scenario_free(s);
}

/* ---- CSV ---- */

/* Splits one CSV line (quotes as RFC 4180) into cells in place. */
static int csv_cells(char *line, char **cells, int max)
{
    int n = 0;
    char *w = line, *p = line;
    while (n < max) {
        cells[n++] = w;
        bool q = *p == '"';
        p += q;
        for (; *p; p++) {
            if (q && *p == '"' && p[1] == '"')
                *w++ = *p++;
            else if (q && *p == '"')
                q = false;
            else if (!q && (*p == ',' || *p == '\n'))
                break;
            else
                *w++ = *p;
        }
        char end = *p;
        *w++ = '\0';
        if (end != ',')
            break;
        p++;
    }
    return n;
}

/* Every cell of a numeric column is empty or a number strtod reads whole
 * (no "1.99x", no "3.83min"); every row has every column. */
static void check_csv(const tc_rtable *t)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    tc_rtable_print_csv(t, f);
    rewind(f);
    char line[8192], *cells[TC_RTABLE_MAX_COLS];
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(csv_cells(line, cells, TC_RTABLE_MAX_COLS), t->ncols);
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(csv_cells(line, cells, TC_RTABLE_MAX_COLS), t->ncols);
        for (int c = 0; c < t->ncols; c++) {
            if (t->cols[c].kind == TC_COL_TEXT || !cells[c][0])
                continue;
            char *end;
            strtod(cells[c], &end);
            if (*end)
                fail_msg("%s: column %s: '%s' is not a number", t->name, t->cols[c].csv, cells[c]);
        }
        rows++;
    }
    assert_int_equal(rows, t->nrows);
    fclose(f);
}

static void compress_tables_are_si_csv(void **state)
{
    (void)state;
    tc_scenario *s = compress_scenario(true);
    tc_compress_out *o = run_compress(s);
    tc_rtable tabs[4];
    size_t n = tc_compress_tables(o, s, tabs, 4);
    assert_int_equal(n, 3);
    assert_string_equal(tabs[0].name, "codecs");
    assert_string_equal(tabs[1].name, "sweep");
    assert_string_equal(tabs[2].name, "crossover");
    assert_int_equal(tabs[0].nrows, o->n);
    assert_int_equal(tabs[1].nrows, o->n * o->nrates);
    for (size_t i = 0; i < n; i++) {
        check_csv(&tabs[i]);
        tc_rtable_free(&tabs[i]);
    }
    /* Fewer slots than tables: the primary first, nothing leaks. */
    assert_int_equal(tc_compress_tables(o, s, tabs, 1), 1);
    assert_string_equal(tabs[0].name, "codecs");
    tc_rtable_free(&tabs[0]);
    /* The text and the document render. */
    FILE *f = tmpfile();
    tc_compress_print(o, s, f);
    assert_true(ftell(f) > 0);
    fclose(f);
    json_t *j = tc_compress_json(o, s);
    assert_non_null(json_object_get(j, "sweep"));
    assert_non_null(json_object_get(j, "scenario"));
    json_decref(j);
    tc_compress_out_free(o);
    tc_scenario_free(s);
}

/* ---- the text: verdicts, the map and its summary agree ---- */

/* The verdict a cell of printed numbers supports: "-" never, else from
 * "1.23x" or "1.23x [0.98, 1.50]" (strtod reads "inf"): above 1 faster,
 * below slower, holding it indistinguishable. */
static tc_verdict cell_verdict(const char *cell)
{
    if (strcmp(cell, "-") == 0)
        return TC_VERDICT_NEVER;
    char *end;
    double v = strtod(cell, &end), lo = v, hi = v;
    assert_true(end != cell && *end == 'x');
    const char *b = strchr(cell, '[');
    if (b) {
        lo = strtod(b + 1, &end);
        assert_true(end[0] == ',' && end[1] == ' ');
        hi = strtod(end + 2, &end);
        assert_true(*end == ']');
    }
    assert_true(lo <= v && v <= hi);
    return lo > 1 ? TC_VERDICT_FASTER : hi < 1 ? TC_VERDICT_SLOWER : TC_VERDICT_SAME;
}

/* Lines of a printed text (in place). */
static size_t split_lines(char *text, char **lines, size_t max)
{
    size_t n = 0;
    for (char *p = text; *p && n < max; n++) {
        lines[n] = p;
        char *e = strchr(p, '\n');
        if (!e)
            break;
        *e = '\0';
        p = e + 1;
    }
    return n;
}

/* Cell c of a row whose header puts column c at start[c]. */
static void cell_at(const char *row, const size_t *start, int c, int ncols, char *out, size_t len)
{
    size_t l = strlen(row), a = start[c] < l ? start[c] : l, b = c + 1 < ncols && start[c + 1] < l ? start[c + 1] : l;
    while (a < b && row[a] == ' ')
        a++;
    while (b > a && row[b - 1] == ' ')
        b--;
    snprintf(out, len, "%.*s", (int)(b - a), row + a);
}

static tc_verdict phrase_verdict(const char *p, size_t *len)
{
    static const struct {
        const char *text;
        tc_verdict v;
    } ph[] = {{"faster than bf16", TC_VERDICT_FASTER},
              {"slower than bf16", TC_VERDICT_SLOWER},
              {"indistinguishable from bf16", TC_VERDICT_SAME}};
    for (size_t i = 0; i < 3; i++)
        if (strncmp(p, ph[i].text, strlen(ph[i].text)) == 0) {
            *len = strlen(ph[i].text);
            return ph[i].v;
        }
    fail_msg("summary clause '%s' states no verdict", p);
    return TC_VERDICT_NEVER;
}

static size_t rate_index(char bw[][32], size_t nr, const char *p, size_t *len)
{
    for (size_t i = 0; i < nr; i++)
        if (strncmp(p, bw[i], strlen(bw[i])) == 0 && (p[strlen(bw[i])] == '\0' || strchr(" ;(", p[strlen(bw[i])]))) {
            *len = strlen(bw[i]);
            return i;
        }
    fail_msg("summary names no swept bandwidth at '%s'", p);
    return 0;
}

/* Prints o and checks that every verdict the text states is what the
 * numbers printed beside it say: the table's verdict column against its
 * "vs bf16" cell, and every clause of the summary against the map's cells
 * at the bandwidths it names (covering each once, in order). */
static void check_text_agrees(const tc_compress_out *o, const tc_scenario *s)
{
    FILE *f = tmpfile();
    tc_compress_print(o, s, f);
    long size = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)size + 1);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    char *lines[256];
    size_t nl = split_lines(text, lines, 256), i = 0;
    /* the codecs table */
    while (i < nl && !(strncmp(lines[i], "codec ", 6) == 0 && strstr(lines[i], "verdict vs bf16")))
        i++;
    assert_true(i + 2 + o->n <= nl);
    const char *labels[3] = {"vs bf16", "vs fp32", "verdict vs bf16"};
    size_t start[3];
    for (int c = 0; c < 3; c++)
        start[c] = (size_t)(strstr(lines[i], labels[c]) - lines[i]);
    for (size_t k = 0; k < o->n; k++) {
        char vs[128], vd[64];
        cell_at(lines[i + 2 + k], start, 0, 3, vs, sizeof vs);
        cell_at(lines[i + 2 + k], start, 2, 3, vd, sizeof vd);
        vd[strcspn(vd, " ")] = '\0';
        tc_verdict v = (long)k == o->i_bf16 ? TC_VERDICT_BASELINE : cell_verdict(vs);
        const char *want = v == TC_VERDICT_NEVER ? "-" : v == TC_VERDICT_BASELINE ? "baseline" : tc_verdict_name(v);
        if (strcmp(vd, want) != 0)
            fail_msg("%s: table says '%s' beside '%s'", o->rows[k].codec.name, vd, vs);
    }
    /* the map */
    while (i < nl && strncmp(lines[i], "regime map", 10) != 0)
        i++;
    assert_true(i + 2 + o->nrates < nl);
    const char *hdr = lines[i + 1];
    size_t cs[TC_COMPRESS_MAX_CODECS + 1], from = 0;
    cs[0] = 0;
    for (size_t k = 0; k < o->n; k++) {
        const char *p = strstr(hdr + from + 1, o->rows[k].codec.name);
        assert_non_null(p);
        cs[k + 1] = (size_t)(p - hdr);
        from = cs[k + 1];
    }
    char bw[TC_COMPRESS_MAX_RATES][32];
    tc_verdict mv[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    for (size_t r = 0; r < o->nrates; r++) {
        const char *row = lines[i + 3 + r];
        cell_at(row, cs, 0, (int)o->n + 1, bw[r], sizeof bw[r]);
        for (size_t k = 0; k < o->n; k++) {
            char cell[128];
            cell_at(row, cs, (int)k + 1, (int)o->n + 1, cell, sizeof cell);
            mv[r][k] = cell_verdict(cell);
        }
    }
    /* the summary: one line per codec but bf16 */
    i += 3 + o->nrates;
    int checked = 0;
    for (; i < nl; i++) {
        size_t k = 0;
        while (k < o->n && !(strncmp(lines[i], o->rows[k].codec.name, strlen(o->rows[k].codec.name)) == 0 &&
                             lines[i][strlen(o->rows[k].codec.name)] == ' '))
            k++;
        if (k == o->n)
            continue;
        const char *p = lines[i] + strlen(o->rows[k].codec.name);
        while (*p == ' ')
            p++;
        if (strncmp(p, "does not reach the target", 25) == 0) {
            for (size_t r = 0; r < o->nrates; r++)
                assert_int_equal(mv[r][k], TC_VERDICT_NEVER);
            checked++;
            continue;
        }
        size_t next = 0, len;
        while (*p) {
            tc_verdict v = phrase_verdict(p, &len);
            p += len;
            size_t a, b;
            if (strncmp(p, " at every bandwidth from ", 25) == 0) {
                p += 25;
                a = rate_index(bw, o->nrates, p, &len);
                p += len + 4; /* " to " */
                b = rate_index(bw, o->nrates, p, &len);
                assert_true(a == 0 && b == o->nrates - 1);
            } else if (strncmp(p, " from ", 6) == 0) {
                p += 6;
                a = rate_index(bw, o->nrates, p, &len);
                p += len + 4;
                b = rate_index(bw, o->nrates, p, &len);
            } else {
                assert_true(strncmp(p, " at ", 4) == 0);
                p += 4;
                a = b = rate_index(bw, o->nrates, p, &len);
            }
            p += len;
            assert_int_equal(a, next);
            for (size_t r = a; r <= b; r++)
                if (mv[r][k] != v)
                    fail_msg("%s: the summary says %s at %s, the map's interval says %s", o->rows[k].codec.name,
                             tc_verdict_name(v), bw[r], tc_verdict_name(mv[r][k]));
            next = b + 1;
            if (*p == ' ' && p[1] == '(') /* "(below about X per endpoint)" */
                p = strchr(p, ')') + 1;
            if (*p == ';')
                p += 2;
        }
        assert_int_equal(next, o->nrates);
        checked++;
    }
    assert_int_equal(checked, (int)o->n - 1);
    free(text);
}

/* Sets codec k's speedups at every rate (value, lo, hi; lo == hi: given)
 * and what the runner derives from them. */
static void craft(tc_compress_out *o, size_t k, const double (*v)[3])
{
    double lo[TC_COMPRESS_MAX_RATES];
    for (size_t r = 0; r < o->nrates; r++) {
        o->sweep_speedup[r][k] = v[r][0];
        o->sweep_speedup_lo[r][k] = lo[r] = v[r][1];
        o->sweep_speedup_hi[r][k] = v[r][2];
        o->sweep_verdict[r][k] = tc_verdict_of(v[r][1], v[r][2]);
    }
    o->crossover_Bps[k] = tc_crossover_bw(o->rates, lo, o->nrates, 1.0);
    o->rows[k].tta.speedup_bf16 = v[0][0];
    o->rows[k].tta.speedup_bf16_lo = v[0][1];
    o->rows[k].tta.speedup_bf16_hi = v[0][2];
    o->rows[k].verdict = tc_verdict_of(v[0][1], v[0][2]);
}

static void summary_never_contradicts_the_map_or_the_table(void **state)
{
    (void)state;
    tc_scenario *s = compress_scenario(true);
    tc_compress_out *o = run_compress(s);
    check_text_agrees(o, s); /* as computed (given ratios) */
    /* values whose two-decimal form would sit on the other side of 1 */
    const double near1[8][3] = {{1.00001, 1.000001, 1.3}, {1.0004, 0.9996, 1.0012}, {0.99996, 0.9999, 0.99999},
                                {1, 1, 1},                {1.5, 1.0000000001, 2},   {1.004, 1.004, 1.004},
                                {0.9949, 0.9949, 0.9949}, {2.5, 0, INFINITY}};
    const double fall[8][3] = {{3, 2.9, 3.1},     {1.5, 1.4, 1.6},     {1.08, 1.004, 1.2}, {1.02, 0.997, 1.05},
                               {0.999, 0.98, 1.01}, {0.98, 0.96, 0.994}, {0.97, 0.95, 0.99}, {0.96, 0.9, 1.0}};
    const double given[8][3] = {{1.00004, 1.00004, 1.00004}, {0.99996, 0.99996, 0.99996}, {1, 1, 1},
                                {1.00004, 1.00004, 1.00004}, {1.00004, 1.00004, 1.00004}, {1, 1, 1},
                                {0.5, 0.5, 0.5},             {0.99996, 0.99996, 0.99996}};
    craft(o, 2, near1);
    craft(o, 3, fall);
    craft(o, 0, given);
    check_text_agrees(o, s);
    /* a codec that does not reach the target */
    const double none[8][3] = {{NAN, NAN, NAN}, {NAN, NAN, NAN}, {NAN, NAN, NAN}, {NAN, NAN, NAN},
                               {NAN, NAN, NAN}, {NAN, NAN, NAN}, {NAN, NAN, NAN}, {NAN, NAN, NAN}};
    craft(o, 3, none);
    o->rows[3].steps_ratio = -1;
    check_text_agrees(o, s);
    tc_compress_out_free(o);
    tc_scenario_free(s);
}

/* compress on curves with seeds: the steps ratio's interval is the
 * statistics', and the time to accuracy and the speedup carry it. */
static void measured_interval_carries_into_time_to_accuracy(void **state)
{
    (void)state;
    tc_scenario *s = compress_scenario(false);
    s->nsteps_ratio = 0;
    s->ncodecs = 1; /* topk */
    const double sb[3] = {100, 120, 90}, sk[3] = {150, 130, 120};
    tc_acc_curve *c = calloc(9, sizeof *c);
    const char *names[3] = {"bf16", "topk:ratio=0.01", "fp32"};
    tc_err err = {{0}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            tc_acc_curve *x = &c[3 * i + j];
            assert_int_equal(tc_codec_parse(names[i], &x->codec, &err), TC_OK);
            x->seed = 1 + j;
            x->n = 3;
            x->pts = calloc(3, sizeof *x->pts);
            x->pts[0] = (tc_acc_point){0, 0.1, 2};
            x->pts[1] = (tc_acc_point){(uint32_t)(i == 1 ? sk[j] : sb[j]), 0.5, 1};
            x->pts[2] = (tc_acc_point){400, 0.8, 0.5};
        }
    s->accuracy = c;
    s->naccuracy = 9;
    s->accuracy_opts.steps = 400;
    s->target_acc = 0.5;
    tc_compress_out *o = run_compress(s);
    tc_acc_stats st;
    assert_int_equal(tc_acc_stats_compute(c, 9, 0.5, &st, &err), TC_OK);
    const tc_acc_codec_stats *k = tc_acc_stats_find(&st, "topk:ratio=0.01");
    const tc_compress_row *x = &o->rows[2], *b = &o->rows[1];
    assert_string_equal(x->codec.name, "topk:ratio=0.01");
    assert_true(x->steps_ratio == k->ratio && x->ratio_lo == k->ratio_lo && x->ratio_hi == k->ratio_hi);
    assert_true(fabs(x->tta.tta_hi_s - x->it.t.iter_s * o->baseline_steps * k->ratio_hi) < 1e-9 * x->tta.tta_hi_s);
    assert_true(fabs(x->tta.speedup_bf16_lo - b->tta.tta_s / x->tta.tta_hi_s) < 1e-12);
    assert_true(fabs(x->tta.speedup_bf16_hi - b->tta.tta_s / x->tta.tta_lo_s) < 1e-12);
    assert_int_equal(x->verdict, tc_verdict_of(x->tta.speedup_bf16_lo, x->tta.speedup_bf16_hi));
    assert_true(o->rows[0].ratio_lo == 1 && o->rows[0].ratio_hi == 1); /* fp32 = bf16 here, seed by seed */
    assert_int_equal(o->seeds, 3);
    tc_acc_stats_free(&st);
    tc_compress_out_free(o);
    tc_scenario_free(s);
}

/* ---- progress ---- */

typedef struct seen {
    int calls;
    double done, total;
    const char *what, *unit;   /* expected */
} seen;

static void on_progress(void *ud, const tc_progress *p)
{
    seen *x = ud;
    x->calls++;
    x->done = p->done;
    x->total = p->total;
    assert_string_equal(p->what, x->what);
    assert_string_equal(p->unit, x->unit);
    assert_true(p->done <= p->total);
}

/* ---- codec-bench ---- */

static void codec_bench_measures(void **state)
{
    (void)state;
    tc_scenario *s = tc_scenario_new(TC_CMD_CODEC_BENCH);
    snprintf(s->codecs[0], sizeof s->codecs[0], "bf16");
    snprintf(s->codecs[1], sizeof s->codecs[1], "topk:ratio=0.01");
    s->ncodecs = 2;
    s->bench_bytes = 65536;
    s->bench_seconds = 0.01;
    tc_err err = {{0}};
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    seen x = {0, 0, 0, "codec-bench", "codecs"};
    tc_run_opts ro = {on_progress, &x, 0};
    tc_codec_bench_out *o = NULL;
    if (tc_run_codec_bench(s, &ro, &o, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(x.calls, 2);
    assert_true(x.done == 2 && x.total == 2);
    assert_int_equal(o->n, 2);
    for (size_t i = 0; i < o->n; i++) {
        assert_true(o->rows[i].enc_dec_Bps > 0 && isfinite(o->rows[i].enc_dec_Bps));
        assert_true(o->rows[i].copy_Bps > 0 && isfinite(o->rows[i].copy_Bps));
        assert_true(o->rows[i].h100_Bps > 0 && o->rows[i].tpu_Bps > 0);
    }
    json_t *j = tc_codec_bench_json(o, s);
    assert_true(json_is_true(json_object_get(j, "measured")));
    json_t *c0 = json_array_get(json_object_get(j, "codecs"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "source")), "measured");
    json_decref(j);
    tc_rtable t;
    assert_int_equal(tc_codec_bench_tables(o, s, &t, 1), 1);
    check_csv(&t);
    tc_rtable_free(&t);
    tc_codec_bench_out_free(o);
    /* A codec that does not fit the bucket fails before any measuring
     * (per-tensor powersgd would send a 1-coordinate bucket uncompressed). */
    s->bench_bytes = 4;
    snprintf(s->codecs[1], sizeof s->codecs[1], "powersgd-batched:rank=4");
    assert_int_equal(tc_run_codec_bench(s, NULL, &o, &err), TC_EINVAL);
    assert_null(o);
    tc_scenario_free(s);
}

/* ---- training (only with the data set) ---- */

static void train_accuracy_reports_progress(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    tc_scenario *s = tc_scenario_new(TC_CMD_TRAIN_ACCURACY);
    snprintf(s->codecs[0], sizeof s->codecs[0], "fp32");
    snprintf(s->codecs[1], sizeof s->codecs[1], "topk:ratio=0.01");
    s->ncodecs = 2;
    s->train.steps = 20;
    s->train.eval_every = 10;
    s->train.batch = 8;
    s->train.train_subset = 1000;
    s->train.test_subset = 200;
    s->train.seeds = 2;
    s->train.target = 0.3;
    tc_err err = {{0}};
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    seen x = {0, 0, 0, "training", "steps"};
    tc_run_opts ro = {on_progress, &x, 0};
    tc_train_accuracy_out *o = NULL;
    if (tc_run_train_accuracy(s, &ro, &o, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(o->n, 6); /* bf16 added as the reference, then fp32 and topk, 2 seeds each */
    assert_true(o->bf16_added);
    assert_string_equal(o->curves[0].codec.name, "bf16");
    assert_true(o->curves[1].seed == o->curves[0].seed + 1);
    assert_int_equal(o->curves[0].n, 3); /* steps 0, 10, 20 */
    assert_int_equal(o->stats.n, 3);
    assert_true(x.calls >= 1);
    assert_true(x.done == 120 && x.total == 120);
    assert_null(o->opts.progress);
    tc_train_accuracy_out_free(o);
    tc_scenario_free(s);
}

/* compress measuring its ratios now: a short run, the baselines trained too. */
static void compress_trains_when_no_ratios_are_given(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    tc_scenario *s = compress_scenario(false);
    s->nsteps_ratio = 0;
    s->ncodecs = 1;
    s->train.steps = 30;
    s->train.eval_every = 10;
    s->train.batch = 8;
    s->train.train_subset = 1000;
    s->train.test_subset = 200;
    s->train.seeds = 2;
    s->target_acc = 0.3;
    tc_compress_out *o = run_compress(s);
    assert_string_equal(o->acc_source, "trained");
    assert_true(o->have_training);
    assert_int_equal(o->training.steps, 30);
    assert_true(o->target == 0.3);
    assert_string_equal(o->reference, "bf16");
    assert_int_equal(o->seeds, 2);
    assert_true(o->same_seeds);
    for (size_t k = 0; k < o->n; k++) {
        assert_string_equal(o->rows[k].ratio_source, "measured");
        assert_int_equal(o->rows[k].runs, 2);
    }
    assert_int_equal(o->rows[o->i_bf16].verdict, TC_VERDICT_BASELINE);
    tc_compress_out_free(o);
    tc_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compress_equals_its_parts),
        cmocka_unit_test(sweep_leaves_the_main_result_alone),
        cmocka_unit_test(compress_errors_name_the_option),
        cmocka_unit_test(codec_values_by_kind_and_spec),
        cmocka_unit_test(accuracy_json_round_trips_exactly),
        cmocka_unit_test(train_accuracy_document_is_an_accuracy_file),
        cmocka_unit_test(compress_tables_are_si_csv),
        cmocka_unit_test(summary_never_contradicts_the_map_or_the_table),
        cmocka_unit_test(measured_interval_carries_into_time_to_accuracy),
        cmocka_unit_test(codec_bench_measures),
        cmocka_unit_test(train_accuracy_reports_progress),
        cmocka_unit_test(compress_trains_when_no_ratios_are_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
