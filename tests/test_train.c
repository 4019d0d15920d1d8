/*
 * test_train.c - the accuracy workload: the IDX reader on the real
 * Fashion-MNIST files and on corrupt ones, training that learns (far above
 * chance) with and without compression, determinism, bucketing, the
 * accuracy file and its validation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include <jansson.h>
#include "topocc/stats.h"
#include "topocc/train.h"
#include "workload/train_int.h"

/* The training runs the checks share: a few hundred steps on a subset.
 * PowerSGD compresses from the first step (start=0): its default 1,000
 * plain all-reduce steps would outlast these runs. */
#define NCODECS 5
static const char *const codec_names[NCODECS] = {"fp32", "bf16", "int8", "topk:ratio=0.01",
                                                 "powersgd:rank=4,start=0"};

typedef struct fixture {
    tc_train_opts o;
    tc_codec_spec codecs[NCODECS];
    tc_acc_curve curves[NCODECS];
    char tmpdir[64];
} fixture;

static bool have_data(void)
{
    return access(TC_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz", R_OK) == 0 &&
           access(TC_FASHION_MNIST_DIR "/t10k-labels-idx1-ubyte.gz", R_OK) == 0;
}

static void small_run_opts(tc_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->workers = 8;
    o->batch = 16;
    o->steps = 300;
    o->eval_every = 50;
    o->train_subset = 10000;
    o->test_subset = 2000;
    tc_train_defaults(o);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->tmpdir, sizeof f->tmpdir, "/tmp/topocc-train-XXXXXX");
    if (!mkdtemp(f->tmpdir))
        return -1;
    small_run_opts(&f->o);
    tc_err err;
    for (int i = 0; i < NCODECS; i++)
        if (tc_codec_parse(codec_names[i], &f->codecs[i], &err))
            return -1;
    if (have_data() && tc_train_run(&f->o, f->codecs, NCODECS, f->curves, &err)) {
        fprintf(stderr, "training failed: %s\n", err.msg);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tc_acc_curves_free(f->curves, NCODECS);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->tmpdir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void tmp_path(const fixture *f, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", f->tmpdir, name);
}

/* ---- IDX reader ---- */

static void idx_reader_reads_all_of_fashion_mnist_with_balanced_labels(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    const char *split[2] = {"train", "t10k"};
    const uint32_t count[2] = {60000, 10000};
    for (int s = 0; s < 2; s++) {
        tc_dataset d;
        tc_err err;
        assert_int_equal(tc_idx_load(TC_FASHION_MNIST_DIR, split[s], 0, &d, &err), TC_OK);
        assert_int_equal(d.n, count[s]);
        assert_int_equal(d.rows, 28);
        assert_int_equal(d.cols, 28);
        uint32_t per_class[10] = {0};
        for (uint32_t i = 0; i < d.n; i++) {
            assert_true(d.y[i] <= 9);
            per_class[d.y[i]]++;
        }
        for (int c = 0; c < 10; c++)
            assert_int_equal(per_class[c], count[s] / 10);
        tc_dataset_free(&d);
    }
}

static void idx_reader_keeps_only_the_first_images_of_a_subset(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    tc_dataset all, sub;
    tc_err err;
    assert_int_equal(tc_idx_load(TC_FASHION_MNIST_DIR, "t10k", 0, &all, &err), TC_OK);
    assert_int_equal(tc_idx_load(TC_FASHION_MNIST_DIR, "t10k", 123, &sub, &err), TC_OK);
    assert_int_equal(sub.n, 123);
    assert_memory_equal(sub.x, all.x, 123 * 784);
    assert_memory_equal(sub.y, all.y, 123);
    tc_dataset_free(&all);
    tc_dataset_free(&sub);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A gzipped IDX file: the header words, then `data` bytes of value 1. */
static void write_idx(const char *path, const uint32_t *words, int nwords, size_t data)
{
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    unsigned char h[16];
    for (int i = 0; i < nwords; i++)
        put_be32(h + 4 * i, words[i]);
    assert_int_equal(gzwrite(g, h, (unsigned)(4 * nwords)), 4 * nwords);
    unsigned char one = 1;
    for (size_t i = 0; i < data; i++)
        assert_int_equal(gzwrite(g, &one, 1), 1);
    assert_int_equal(gzclose(g), Z_OK);
}

static void expect_idx_error(const char *img, const char *lab, const char *path_in_msg, const char *what)
{
    tc_dataset d;
    tc_err err = {{0}};
    assert_int_equal(tc_idx_read(img, lab, 0, &d, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, path_in_msg));
    if (!strstr(err.msg, what))
        fail_msg("expected '%s' in: %s", what, err.msg);
    assert_null(d.x);
    assert_null(d.y);
}

static void idx_reader_rejects_corrupt_headers_naming_file_and_fault(void **state)
{
    fixture *f = *state;
    char img[128], lab[128];
    tmp_path(f, "img.gz", img, sizeof img);
    tmp_path(f, "lab.gz", lab, sizeof lab);
    const uint32_t good_img[4] = {0x803, 3, 28, 28}, good_lab[2] = {0x801, 3};
    write_idx(lab, good_lab, 2, 3);

    write_idx(img, good_img, 4, 3 * 784);
    tc_dataset d;
    tc_err err;
    assert_int_equal(tc_idx_read(img, lab, 0, &d, &err), TC_OK);
    assert_int_equal(d.n, 3);
    tc_dataset_free(&d);

    const uint32_t bad_magic[4] = {0x802, 3, 28, 28};
    write_idx(img, bad_magic, 4, 3 * 784);
    expect_idx_error(img, lab, img, "magic 0x00000802");

    const uint32_t bad_dims[4] = {0x803, 3, 32, 32};
    write_idx(img, bad_dims, 4, 3 * 1024);
    expect_idx_error(img, lab, img, "32x32");

    write_idx(img, good_img, 4, 2 * 784 + 100); /* pixels end early */
    expect_idx_error(img, lab, img, "truncated");

    write_idx(img, good_img, 2, 0); /* header ends early */
    expect_idx_error(img, lab, img, "truncated");

    write_idx(img, good_img, 4, 3 * 784);
    const uint32_t lab_count[2] = {0x801, 4};
    write_idx(lab, lab_count, 2, 4);
    expect_idx_error(img, lab, lab, "4 labels for 3 images");

    const uint32_t lab_magic[2] = {0x803, 3};
    write_idx(lab, lab_magic, 2, 3);
    expect_idx_error(img, lab, lab, "magic");

    /* a label outside 0..9 */
    gzFile g = gzopen(lab, "wb");
    unsigned char h[11] = {0, 0, 8, 1, 0, 0, 0, 3, 1, 10, 2};
    assert_int_equal(gzwrite(g, h, sizeof h), (int)sizeof h);
    gzclose(g);
    expect_idx_error(img, lab, lab, "label 10");
}

static void missing_data_set_names_the_debian_package(void **state)
{
    fixture *f = *state;
    tc_dataset d;
    tc_err err;
    assert_int_equal(tc_idx_load(f->tmpdir, "train", 0, &d, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "dataset-fashion-mnist"));
    tc_train_opts o;
    small_run_opts(&o);
    o.data_dir = f->tmpdir;
    tc_acc_curve c;
    assert_int_equal(tc_train_run(&o, f->codecs, 1, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "dataset-fashion-mnist"));
}

/* ---- training ---- */

static void training_learns_far_above_chance_with_and_without_compression(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    for (int i = 0; i < NCODECS; i++) {
        const tc_acc_curve *c = &f->curves[i];
        assert_string_equal(c->codec.name, f->codecs[i].name);
        assert_int_equal(c->n, 300 / 50 + 1);
        assert_int_equal(c->pts[0].step, 0);
        assert_int_equal(c->pts[c->n - 1].step, 300);
        /* the initial model guesses (10 classes); the trained one does not */
        assert_true(c->pts[0].test_acc < 0.25);
        assert_true(c->pts[0].train_loss > 2.0);
        double final = c->pts[c->n - 1].test_acc;
        if (!(final > 0.65))
            fail_msg("%s: final test accuracy %.4f, expected > 0.65", c->codec.name, final);
        assert_true(c->pts[c->n - 1].train_loss < 1.0);
    }
    /* bf16 rounds each contribution to 8 bits of mantissa: nearly fp32 */
    assert_true(fabs(f->curves[1].pts[6].test_acc - f->curves[0].pts[6].test_acc) < 0.03);
}

static void same_seed_gives_the_identical_curve_and_another_seed_does_not(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    tc_acc_curve again[2], other;
    tc_codec_spec two[2] = {f->codecs[0], f->codecs[3]};
    tc_err err;
    assert_int_equal(tc_train_run(&f->o, two, 2, again, &err), TC_OK);
    assert_int_equal(again[0].n, f->curves[0].n);
    assert_memory_equal(again[0].pts, f->curves[0].pts, again[0].n * sizeof *again[0].pts);
    assert_int_equal(again[1].n, f->curves[3].n);
    assert_memory_equal(again[1].pts, f->curves[3].pts, again[1].n * sizeof *again[1].pts);
    tc_train_opts o = f->o;
    o.seed = 2;
    assert_int_equal(tc_train_run(&o, two, 1, &other, &err), TC_OK);
    assert_true(memcmp(other.pts, f->curves[0].pts, other.n * sizeof *other.pts) != 0);
    tc_acc_curves_free(again, 2);
    tc_acc_curves_free(&other, 1);
}

static void fp32_curve_does_not_depend_on_bucketing(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    /* 4 KB buckets: one per tensor (b2, W2, b1, W1). fp32 averages each
     * coordinate on its own, so the split cannot change a bit. */
    tc_train_opts o = f->o;
    o.bucket_bytes = 4096;
    tc_acc_curve c;
    tc_err err;
    assert_int_equal(tc_train_run(&o, f->codecs, 1, &c, &err), TC_OK);
    assert_memory_equal(c.pts, f->curves[0].pts, c.n * sizeof *c.pts);
    tc_acc_curves_free(&c, 1);
}

static void compressed_training_works_in_several_buckets(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    tc_train_opts o = f->o;
    o.bucket_bytes = 4096;
    o.steps = 200;
    tc_acc_curve c[2];
    tc_codec_spec two[2] = {f->codecs[3], f->codecs[4]};
    tc_err err;
    assert_int_equal(tc_train_run(&o, two, 2, c, &err), TC_OK);
    for (int i = 0; i < 2; i++)
        if (!(c[i].pts[c[i].n - 1].test_acc > 0.6))
            fail_msg("%s in 4 buckets: %.4f", c[i].codec.name, c[i].pts[c[i].n - 1].test_acc);
    tc_acc_curves_free(c, 2);
}

/* PowerSGD's first `start` steps are plain all-reduces (the hook's
 * start_powerSGD_iter): the curve is fp32's, bit for bit, up to step
 * `start`, and its own after. */
static void powersgd_trains_as_fp32_until_start(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    tc_codec_spec ps;
    tc_err err;
    assert_int_equal(tc_codec_parse("powersgd:rank=4,start=100", &ps, &err), TC_OK);
    tc_acc_curve c;
    assert_int_equal(tc_train_run(&f->o, &ps, 1, &c, &err), TC_OK);
    const tc_acc_curve *ref = &f->curves[0];
    assert_int_equal(c.n, ref->n);
    for (size_t i = 0; i < c.n; i++) {
        bool same = c.pts[i].test_acc == ref->pts[i].test_acc && c.pts[i].train_loss == ref->pts[i].train_loss;
        if (same != (c.pts[i].step <= 100))
            fail_msg("step %u: %s fp32's point", c.pts[i].step, same ? "equals" : "differs from");
    }
    tc_acc_curves_free(&c, 1);
}

static void invalid_training_options_are_refused(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    tc_acc_curve c;
    tc_err err;
    tc_train_opts o = f->o;
    o.train_subset = 100; /* 8 workers x 16 > 100 */
    assert_int_equal(tc_train_run(&o, f->codecs, 1, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "exceed"));
    o = f->o;
    o.model = "resnet";
    assert_int_equal(tc_train_run(&o, f->codecs, 1, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown proxy model 'resnet': accepted are mlp"));
    o = f->o;
    o.train_subset = 70000;
    assert_int_equal(tc_train_run(&o, f->codecs, 1, &c, &err), TC_EINVAL);
    assert_int_equal(tc_train_run(&f->o, f->codecs, 0, &c, &err), TC_EINVAL);
}

/* ---- steps to accuracy ---- */

static void steps_to_interpolates_the_first_crossing(void **state)
{
    (void)state;
    tc_acc_point p[5] = {{0, 0.1, 2.3}, {100, 0.5, 1}, {200, 0.7, 1}, {300, 0.6, 1}, {400, 0.9, 1}};
    tc_acc_curve c = {.n = 5, .pts = p};
    assert_true(fabs(tc_acc_steps_to(&c, 0.6) - 150.0) < 1e-9);
    assert_true(fabs(tc_acc_steps_to(&c, 0.3) - 50.0) < 1e-9);
    assert_true(fabs(tc_acc_steps_to(&c, 0.8) - (300.0 + 100.0 * 0.2 / 0.3)) < 1e-9);
    assert_true(tc_acc_steps_to(&c, 0.05) == 0.0);
    assert_true(tc_acc_steps_to(&c, 0.95) < 0);
}

/* ---- the accuracy file ---- */

static void accuracy_file_round_trips(void **state)
{
    fixture *f = *state;
    tc_acc_point p[3] = {{0, 0.1, 2.3}, {50, 0.71, 0.9}, {100, 0.8, NAN}};
    tc_acc_curve in[2] = {{.codec = f->codecs[0], .n = 3, .pts = p}, {.codec = f->codecs[3], .n = 2, .pts = p}};
    tc_train_opts o = f->o;
    o.steps = 100;
    o.lr = 0.037;
    o.seed = 123456789012345ULL;
    char path[128];
    tmp_path(f, "acc.json", path, sizeof path);
    tc_err err;
    assert_int_equal(tc_acc_write(path, &o, in, 2, &err), TC_OK);
    tc_train_opts r;
    tc_acc_curve *out;
    size_t n;
    assert_int_equal(tc_acc_read(path, &r, &out, &n, &err), TC_OK);
    assert_int_equal(n, 2);
    assert_string_equal(r.model, "mlp");
    assert_int_equal(r.workers, o.workers);
    assert_int_equal(r.batch, o.batch);
    assert_int_equal(r.steps, o.steps);
    assert_int_equal(r.eval_every, o.eval_every);
    assert_int_equal(r.hidden, o.hidden);
    assert_true(r.lr == o.lr);
    assert_true(r.seed == o.seed);
    assert_int_equal(r.train_subset, o.train_subset);
    assert_int_equal(r.test_subset, o.test_subset);
    assert_true(r.bucket_bytes == o.bucket_bytes);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(out[i].codec.name, in[i].codec.name);
        assert_int_equal(out[i].codec.kind, in[i].codec.kind);
        assert_int_equal(out[i].n, in[i].n);
        for (size_t k = 0; k < out[i].n; k++) {
            assert_int_equal(out[i].pts[k].step, p[k].step);
            assert_true(fabs(out[i].pts[k].test_acc - p[k].test_acc) < 1e-12);
            if (isnan(p[k].train_loss))
                assert_true(isnan(out[i].pts[k].train_loss));
            else
                assert_true(fabs(out[i].pts[k].train_loss - p[k].train_loss) < 1e-12);
        }
    }
    tc_acc_curves_free(out, n);
    free(out);
}

/* Writes text to path and expects tc_acc_read to refuse it with `what`. */
static void expect_rejected(const char *path, const char *text, const char *what)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    tc_train_opts o;
    tc_acc_curve *c = (tc_acc_curve *)1;
    size_t n = 7;
    tc_err err = {{0}};
    assert_int_equal(tc_acc_read(path, &o, &c, &n, &err), TC_EINVAL);
    assert_null(c);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, what))
        fail_msg("expected '%s' in: %s", what, err.msg);
}

#define HDR                                                                                                        \
    "{\"schema_version\": 1, \"dataset\": \"fashion-mnist\", \"model\": \"mlp\", \"workers\": 8, \"batch\": 16, " \
    "\"steps\": 100, \"lr\": 0.05, \"seed\": 1, \"train_subset\": 0, \"test_subset\": 0, \"bucket_bytes\": 25000000, "
#define PT "{\"step\": 0, \"test_acc\": 0.1, \"train_loss\": 2.3}"

static void accuracy_file_that_does_not_match_says_what_and_where(void **state)
{
    fixture *f = *state;
    char path[128];
    tmp_path(f, "bad.json", path, sizeof path);
    const char *good = HDR "\"curves\": [{\"codec\": \"fp32\", \"points\": [" PT "]}]}";
    FILE *fp = fopen(path, "w");
    fputs(good, fp);
    fclose(fp);
    tc_train_opts o;
    tc_acc_curve *c;
    size_t n;
    tc_err err;
    assert_int_equal(tc_acc_read(path, &o, &c, &n, &err), TC_OK);
    tc_acc_curves_free(c, n);
    free(c);

    expect_rejected(path, "{\"schema_version\": 1,", "line 1");
    expect_rejected(path, "[1, 2]", "top level");
    expect_rejected(path,
                    HDR "\"curves\": [{\"codec\": \"fp32\", \"points\": [" PT "]}, {\"codec\": \"bf16\", \"points\": "
                        "[" PT ", {\"step\": 50, \"test_acc\": 1.5, \"train_loss\": 1}]}]}",
                    "curves[1].points[1].test_acc: expected a number in [0,1]");
    expect_rejected(path,
                    HDR "\"curves\": [{\"codec\": \"fp32\", \"points\": [{\"step\": 50, \"test_acc\": 0.5, "
                        "\"train_loss\": 1}, " PT "]}]}",
                    "curves[0].points[1].step: expected steps in increasing order");
    expect_rejected(path,
                    HDR "\"curves\": [{\"codec\": \"fp32\", \"points\": [{\"step\": 500, \"test_acc\": 0.5, "
                        "\"train_loss\": 1}]}]}",
                    "curves[0].points[0].step");
    expect_rejected(path,
                    HDR "\"curves\": [{\"codec\": \"fp32\", \"points\": [{\"step\": 0, \"test_acc\": 0.5, "
                        "\"train_loss\": -1}]}]}",
                    "curves[0].points[0].train_loss");
    expect_rejected(path, HDR "\"curves\": [{\"codec\": \"zip9\", \"points\": [" PT "]}]}", "curves[0].codec");
    expect_rejected(path, HDR "\"curves\": [{\"codec\": \"fp32\", \"points\": []}]}", "curves[0].points");
    expect_rejected(path, HDR "\"curves\": []}", "curves: expected a non-empty array");
    expect_rejected(path,
                    "{\"schema_version\": 4, \"dataset\": \"fashion-mnist\", \"curves\": []}",
                    "schema_version: expected an integer in [1, 3]");
    expect_rejected(path,
                    "{\"schema_version\": 1, \"dataset\": \"mnist\", \"model\": \"mlp\", \"curves\": []}",
                    "dataset: expected \"fashion-mnist\" (the data set of mlp)");
    expect_rejected(path, "{\"schema_version\": 3, \"dataset\": \"fashion-mnist\", \"model\": \"vgg\"}",
                    "model: expected one of mlp");
    expect_rejected(path,
                    "{\"schema_version\": 1, \"dataset\": \"fashion-mnist\", \"model\": \"mlp\", \"workers\": 8.5}",
                    "workers: expected an integer");
    expect_rejected(path,
                    "{\"schema_version\": 1, \"dataset\": \"fashion-mnist\", \"model\": \"mlp\", \"batch\": 4}",
                    "workers: missing");
    char missing[160];
    tmp_path(f, "none.json", missing, sizeof missing);
    assert_int_equal(tc_acc_read(missing, &o, &c, &n, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, missing));
}

static void accuracy_file_of_a_real_run_reads_back(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    char path[128];
    tmp_path(f, "run.json", path, sizeof path);
    tc_err err;
    assert_int_equal(tc_acc_write(path, &f->o, f->curves, NCODECS, &err), TC_OK);
    tc_train_opts o;
    tc_acc_curve *c;
    size_t n;
    assert_int_equal(tc_acc_read(path, &o, &c, &n, &err), TC_OK);
    assert_int_equal(n, NCODECS);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(c[i].n, f->curves[i].n);
        double t = 0.6;
        assert_true(fabs(tc_acc_steps_to(&c[i], t) - tc_acc_steps_to(&f->curves[i], t)) < 1e-6);
    }
    tc_acc_curves_free(c, n);
    free(c);
}

/* ---- several seeds ---- */

static void tiny_opts(tc_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->workers = 8;
    o->batch = 8;
    o->steps = 20;
    o->eval_every = 10;
    o->train_subset = 1000;
    o->test_subset = 200;
    o->seed = 41;
    o->seeds = 3;
    tc_train_defaults(o);
}

static void seeds_run_every_codec_on_each_seed_whatever_the_threads(void **state)
{
    fixture *f = *state;
    if (!have_data())
        skip();
    tc_train_opts o;
    tiny_opts(&o);
    tc_codec_spec two[2] = {f->codecs[1], f->codecs[3]};
    tc_acc_curve *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    tc_err err;
    assert_int_equal(tc_train_seeds(&o, two, 2, 1, &a, &na, &err), TC_OK);
    assert_int_equal(tc_train_seeds(&o, two, 2, 4, &b, &nb, &err), TC_OK);
    assert_int_equal(na, 6);
    assert_int_equal(nb, 6);
    for (size_t k = 0; k < na; k++) {
        assert_string_equal(a[k].codec.name, two[k / 3].name);
        assert_true(a[k].seed == 41 + k % 3);
        assert_int_equal(a[k].n, b[k].n);
        assert_memory_equal(a[k].pts, b[k].pts, a[k].n * sizeof *a[k].pts);
    }
    /* run j of a codec is tc_train_run on seed + j: the same initialization
     * and data order for every codec (step 0 is the same model) */
    tc_acc_curve one;
    o.seed = 42;
    assert_int_equal(tc_train_run(&o, &two[1], 1, &one, &err), TC_OK);
    assert_memory_equal(one.pts, a[4].pts, one.n * sizeof *one.pts);
    assert_true(one.seed == 42);
    assert_true(a[1].pts[0].test_acc == a[4].pts[0].test_acc);
    tc_acc_curves_free(&one, 1);
    tc_acc_curves_free(a, na);
    tc_acc_curves_free(b, nb);
    free(a);
    free(b);
    /* seeds out of range: refused before any training */
    tiny_opts(&o);
    o.seeds = TC_TRAIN_MAX_SEEDS + 1;
    assert_int_equal(tc_train_seeds(&o, two, 2, 0, &a, &na, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "seeds"));
    assert_null(a);
    o.seeds = 2;
    o.seed = (uint64_t)INT64_MAX;
    assert_int_equal(tc_train_seeds(&o, two, 2, 0, &a, &na, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "2^63-1"));
}

/* A run that reaches 0.5 at step s and ends at fin: points (0, 0.1),
 * (s, 0.5), (400, fin). */
static tc_acc_point pts_store[64][3];
static tc_acc_curve curve_at(int slot, const char *codec, uint64_t seed, double s, double fin)
{
    tc_acc_curve c;
    memset(&c, 0, sizeof c);
    tc_err err;
    assert_int_equal(tc_codec_parse(codec, &c.codec, &err), TC_OK);
    c.seed = seed;
    c.n = 3;
    c.pts = pts_store[slot];
    c.pts[0] = (tc_acc_point){0, 0.1, 2.3};
    c.pts[1] = (tc_acc_point){(uint32_t)s, 0.5, 1.0};
    c.pts[2] = (tc_acc_point){400, fin, 0.5};
    return c;
}

static void statistics_pair_run_j_with_bf16s_run_j(void **state)
{
    (void)state;
    const double sb[3] = {100, 120, 90}, sk[3] = {150, 130, 120}, fb[3] = {0.80, 0.82, 0.81};
    tc_acc_curve c[9];
    for (int j = 0; j < 3; j++) {
        c[j] = curve_at(j, "bf16", 7 + j, sb[j], fb[j]);
        c[3 + j] = curve_at(3 + j, "topk:ratio=0.01", 7 + j, sk[j], 0.78);
        c[6 + j] = curve_at(6 + j, "signsgd", 7 + j, 200, 0.45);
        c[6 + j].pts[1].test_acc = 0.3; /* never 0.5 */
    }
    tc_acc_stats st;
    tc_err err;
    assert_int_equal(tc_acc_stats_compute(c, 9, 0.5, &st, &err), TC_OK);
    assert_int_equal(st.n, 3);
    assert_int_equal(st.ref, 0);
    assert_int_equal(st.runs, 3);
    assert_true(st.target == 0.5 && st.target_given);
    assert_true(fabs(st.ref_final - 0.81) < 1e-12);
    const tc_acc_codec_stats *b = &st.codecs[0], *k = &st.codecs[1], *n = &st.codecs[2];
    assert_true(b->ratio == 1 && b->ratio_lo == 1 && b->ratio_hi == 1);
    double d[3];
    for (int j = 0; j < 3; j++)
        d[j] = log(sk[j] / sb[j]);
    tc_stat_ci ci;
    tc_stat_mean_ci(d, 3, 0.95, &ci);
    assert_true(fabs(k->ratio - exp(ci.mean)) < 1e-12);
    assert_true(fabs(k->ratio_lo - exp(ci.lo)) < 1e-12);
    assert_true(fabs(k->ratio_hi - exp(ci.hi)) < 1e-12);
    assert_true(fabs(k->steps_mean - 400.0 / 3) < 1e-9);
    assert_true(k->same_seeds && k->reached == 3);
    assert_true(fabs(k->dfinal - (0.78 - 0.81)) < 1e-12);
    assert_int_equal(n->reached, 0);
    assert_true(isnan(n->ratio) && isnan(n->steps_mean));
    assert_true(fabs(n->final_mean - 0.45) < 1e-12);
    assert_ptr_equal(tc_acc_stats_find(&st, "signsgd"), n);
    /* two codecs against bf16: each joint interval at 1 - 0.05 / 2
     * (Bonferroni), wider than its own 95% one and containing it */
    assert_int_equal(st.compared, 2);
    assert_true(fabs(st.joint_level - 0.975) < 1e-15);
    tc_stat_ci cj;
    tc_stat_mean_ci(d, 3, 0.975, &cj);
    assert_true(fabs(k->joint_lo - exp(cj.lo)) < 1e-12 && fabs(k->joint_hi - exp(cj.hi)) < 1e-12);
    assert_true(k->joint_lo < k->ratio_lo && k->joint_hi > k->ratio_hi);
    assert_true(b->joint_lo == 1 && b->joint_hi == 1 && isnan(n->joint_lo));
    tc_acc_stats_free(&st);
    /* one codec against bf16: the joint interval is its own */
    assert_int_equal(tc_acc_stats_compute(c, 6, 0.5, &st, &err), TC_OK);
    assert_int_equal(st.compared, 1);
    assert_true(st.joint_level == 0.95);
    assert_true(st.codecs[1].joint_lo == st.codecs[1].ratio_lo && st.codecs[1].joint_hi == st.codecs[1].ratio_hi);
    tc_acc_stats_free(&st);
    /* the default target: 99% of bf16's seed-mean final accuracy */
    c[0].pts[2].test_acc = c[1].pts[2].test_acc = c[2].pts[2].test_acc = 0.5;
    c[0].pts[1].test_acc = c[1].pts[1].test_acc = c[2].pts[1].test_acc = 0.49;
    assert_int_equal(tc_acc_stats_compute(c, 9, 0, &st, &err), TC_OK);
    assert_true(fabs(st.target - TC_TARGET_FRACTION * 0.5) < 1e-12 && !st.target_given);
    tc_acc_stats_free(&st);
}

static void statistics_refuse_what_they_cannot_pair(void **state)
{
    (void)state;
    tc_acc_curve c[5];
    c[0] = curve_at(10, "bf16", 1, 100, 0.8);
    c[1] = curve_at(11, "bf16", 2, 110, 0.8);
    c[2] = curve_at(12, "int8", 1, 100, 0.8);
    c[3] = curve_at(13, "int8", 2, 100, 0.8);
    c[4] = curve_at(14, "int8", 3, 100, 0.8);
    tc_acc_stats st;
    tc_err err = {{0}};
    assert_int_equal(tc_acc_stats_compute(c, 5, 0.5, &st, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "codec 'int8' has 3 runs and bf16 2"));
    assert_int_equal(tc_acc_stats_compute(c + 2, 3, 0.5, &st, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "no bf16"));
    /* a target bf16 does not reach, on one of its seeds */
    c[1].pts[2].test_acc = 0.6;
    assert_int_equal(tc_acc_stats_compute(c, 4, 0.7, &st, &err), TC_EINVAL);
    if (!strstr(err.msg, "the baseline (bf16) does not reach the target accuracy 0.7000 on seed 2 (it ends at "
                         "0.6000"))
        fail_msg("%s", err.msg);
    assert_null(strchr(err.msg, '\n'));
    /* a target the initial model already has */
    assert_int_equal(tc_acc_stats_compute(c, 4, 0.05, &st, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "at step 0"));
    assert_null(st.codecs);
}

/* A file with seeds and statistics reads back; statistics that do not
 * follow from the curves, runs that do not match the seeds, are refused
 * naming the field. */
static void accuracy_file_records_seeds_and_checks_its_statistics(void **state)
{
    fixture *f = *state;
    tc_acc_curve c[4];
    c[0] = curve_at(20, "bf16", 5, 100, 0.8);
    c[1] = curve_at(21, "bf16", 6, 140, 0.82);
    c[2] = curve_at(22, "int8", 5, 110, 0.79);
    c[3] = curve_at(23, "int8", 6, 120, 0.81);
    tc_train_opts o = f->o;
    o.steps = 400;
    o.seed = 5;
    o.target = 0.5;
    char path[128];
    tmp_path(f, "seeds.json", path, sizeof path);
    tc_err err;
    assert_int_equal(tc_acc_write(path, &o, c, 4, &err), TC_OK);
    tc_train_opts r;
    tc_acc_curve *out;
    size_t n;
    if (tc_acc_read(path, &r, &out, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 4);
    assert_int_equal(r.seeds, 2);
    assert_true(r.target == 0.5);
    assert_true(out[1].seed == 6 && out[3].seed == 6);
    tc_acc_curves_free(out, n);
    free(out);
    /* the recorded statistics are those of tc_acc_stats_compute */
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    assert_non_null(j);
    json_t *sc = json_array_get(json_object_get(json_object_get(j, "statistics"), "codecs"), 1);
    tc_acc_stats st;
    assert_int_equal(tc_acc_stats_compute(c, 4, 0.5, &st, &err), TC_OK);
    assert_true(json_real_value(json_object_get(sc, "steps_ratio")) == st.codecs[1].ratio);
    assert_true(json_real_value(json_object_get(sc, "steps_ratio_hi")) == st.codecs[1].ratio_hi);
    tc_acc_stats_free(&st);
    /* an edited ratio */
    json_object_set_new(sc, "steps_ratio", json_real(0.5));
    char *text = json_dumps(j, 0);
    expect_rejected(path, text, "statistics.codecs[1].steps_ratio: 0.5 does not follow from the curves");
    free(text);
    json_decref(j);
    /* runs that do not match "seeds"; a run without its seed; a seed twice */
    j = json_load_file(path, 0, &je);
    assert_non_null(j);
    json_object_set_new(j, "seeds", json_integer(3));
    text = json_dumps(j, 0);
    expect_rejected(path, text, "curves: codec 'bf16' has 2 runs, the file declares 3 seeds");
    free(text);
    json_object_set_new(j, "seeds", json_integer(2));
    json_object_del(json_array_get(json_object_get(j, "curves"), 2), "seed");
    text = json_dumps(j, 0);
    expect_rejected(path, text, "curves[2].seed: missing");
    free(text);
    json_object_set_new(json_array_get(json_object_get(j, "curves"), 2), "seed", json_integer(6));
    text = json_dumps(j, 0);
    expect_rejected(path, text, "curves[3].seed: codec 'int8' has seed 6 twice");
    free(text);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idx_reader_reads_all_of_fashion_mnist_with_balanced_labels),
        cmocka_unit_test(idx_reader_keeps_only_the_first_images_of_a_subset),
        cmocka_unit_test(idx_reader_rejects_corrupt_headers_naming_file_and_fault),
        cmocka_unit_test(missing_data_set_names_the_debian_package),
        cmocka_unit_test(training_learns_far_above_chance_with_and_without_compression),
        cmocka_unit_test(same_seed_gives_the_identical_curve_and_another_seed_does_not),
        cmocka_unit_test(fp32_curve_does_not_depend_on_bucketing),
        cmocka_unit_test(compressed_training_works_in_several_buckets),
        cmocka_unit_test(powersgd_trains_as_fp32_until_start),
        cmocka_unit_test(invalid_training_options_are_refused),
        cmocka_unit_test(steps_to_interpolates_the_first_crossing),
        cmocka_unit_test(accuracy_file_round_trips),
        cmocka_unit_test(accuracy_file_that_does_not_match_says_what_and_where),
        cmocka_unit_test(accuracy_file_of_a_real_run_reads_back),
        cmocka_unit_test(seeds_run_every_codec_on_each_seed_whatever_the_threads),
        cmocka_unit_test(statistics_pair_run_j_with_bf16s_run_j),
        cmocka_unit_test(statistics_refuse_what_they_cannot_pair),
        cmocka_unit_test(accuracy_file_records_seeds_and_checks_its_statistics),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
