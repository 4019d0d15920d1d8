/* test_gpu_codecs.c - the accelerator cost model (the multi-pass roofline,
 * docs/MODEL.md, "Compute") against what PyTorch's codec kernels and DDP
 * hooks measured on one NVIDIA H200 (tests/data/gpu-codecs, made by
 * bench/gpu_codecs.py; docs/VALIDATION.md, "Codec costs on a GPU"): the
 * roofline is a lower bound of every measurement, and the measured over
 * modelled ratios lie in the ranges docs/VALIDATION.md and the codecs'
 * cost lines quote. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "compress/codec_int.h"
#include "codec_helpers.h"

#define DATA TOPOCC_SOURCE_DIR "/tests/data/gpu-codecs/"

static json_t *load(const char *name)
{
    json_error_t je;
    json_t *r = json_load_file(name, 0, &je);
    if (!r)
        fail_msg("%s: line %d: %s", name, je.line, je.text);
    return r;
}

static const tc_accel *h200(void)
{
    const tc_accel *a = tc_accel_find("h200");
    if (!a)
        fail_msg("no h200 accelerator profile");
    return a;
}

/* Seconds the roofline charges one worker (n = 1, as measured: one
 * process) for a bucket of d coordinates. */
static double roofline_s(const char *codec, uint64_t d)
{
    tc_codec_spec c = spec_of(codec);
    double thr = tc_codec_accel_throughput(&c, h200(), d, 1);
    assert_true(thr > 0);
    return 4.0 * (double)d / thr;
}

static void in_range(double meas_s, double model_s, double lo, double hi, const char *what)
{
    double ratio = meas_s / model_s;
    print_message("  %-40s %9.1f us measured, roofline %8.1f us: %6.2f (stated %g-%g)\n", what, meas_s * 1e6,
                  model_s * 1e6, ratio, lo, hi);
    if (!(ratio >= lo && ratio <= hi))
        fail_msg("%s: measured / roofline %.3f, docs/VALIDATION.md states %g-%g", what, ratio, lo, hi);
}

/* Kernels alone on the 25 MiB bucket: CUDA-event medians. */
static void kernels_alone(const char *file, double lo[4], double hi[4])
{
    json_t *r = load(file);
    json_t *k = json_object_get(r, "kernels");
    assert_non_null(k);
    uint64_t d = (uint64_t)json_integer_value(json_object_get(k, "d"));
    assert_int_equal(d, 6553600);
    static const char *key[4] = {"copy", "bf16_cast_and_back", "int8_quantize_dequantize", "topk_1pct_encode_decode"};
    static const char *codec[4] = {"fp32", "bf16", "int8", "topk:ratio=0.01,ef=0"};
    for (int i = 0; i < 4; i++) {
        double ms = json_real_value(json_object_get(json_object_get(k, key[i]), "median_ms"));
        assert_true(ms > 0);
        char what[96];
        snprintf(what, sizeof what, "%s (%s)", key[i], codec[i]);
        in_range(ms * 1e-3, roofline_s(codec[i], d), lo[i], hi[i], what);
    }
    json_decref(r);
}

static void kernels_take_longer_than_the_roofline(void **state)
{
    (void)state;
    /* copy, bf16, int8, top-k */
    double lo[4] = {1.5, 1.9, 6, 18}, hi[4] = {2.5, 2.8, 7.5, 22};
    kernels_alone(DATA "h200-pytorch2.11-run1.json", lo, hi);
    kernels_alone(DATA "h200-pytorch2.11-run2.json", lo, hi);
}

/* Device time of a hook's kernels per iteration, less the fp32
 * allreduce_hook's (what one process's all-reduce and division cost). */
static double hook_us(json_t *rows, const char *hook, int rank, json_t **buckets)
{
    size_t i;
    json_t *h;
    json_array_foreach(rows, i, h)
    {
        if (strcmp(json_string_value(json_object_get(h, "hook")), hook) ||
            json_integer_value(json_object_get(h, "rank")) != rank)
            continue;
        json_t *p = json_object_get(json_object_get(h, "profiler"), "codec_hook@DeviceType.CPU");
        if (!p)
            return -1;
        if (buckets)
            *buckets = json_object_get(h, "bucket_numel");
        return json_real_value(json_object_get(p, "device_us_per_iter"));
    }
    return -1;
}

static void hooks_of(const char *file, const char *model)
{
    json_t *r = load(file);
    json_t *rows = json_object_get(r, model);
    assert_non_null(rows);
    json_t *buckets = NULL;
    double base = hook_us(rows, "allreduce", 0, &buckets);
    assert_true(base > 0);
    assert_true(json_array_size(buckets) > 0);
    struct {
        const char *hook, *codec;
        int rank;
        double lo, hi;
    } cases[] = {
        {"bf16", "bf16", 0, 1.2, 1.35},
        {"fp16", "fp16", 0, 1.2, 1.35},
        {"powersgd", "powersgd:rank=1", 1, 5, 6.5},
        {"powersgd", "powersgd:rank=2", 2, 12.5, 15.5},
        {"powersgd", "powersgd:rank=4", 4, 24, 29},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double us = hook_us(rows, cases[c].hook, cases[c].rank, NULL) - base;
        double model_s = 0;
        size_t i;
        json_t *b;
        json_array_foreach(buckets, i, b) model_s += roofline_s(cases[c].codec, (uint64_t)json_integer_value(b));
        char what[96];
        snprintf(what, sizeof what, "%s %s hook", model, cases[c].codec);
        in_range(us * 1e-6, model_s, cases[c].lo, cases[c].hi, what);
    }
    json_decref(r);
}

static void hooks_take_longer_than_the_roofline(void **state)
{
    (void)state;
    hooks_of(DATA "h200-pytorch2.11-run1.json", "resnet18");
    hooks_of(DATA "h200-pytorch2.11-run1.json", "resnet50");
    hooks_of(DATA "h200-pytorch2.11-run2.json", "resnet50");
}

/* What compress and codec-bench print as the figure's source quotes the
 * measured factors above. */
static void the_cost_source_quotes_the_measurement(void **state)
{
    (void)state;
    tc_codec_spec p = spec_of("powersgd:rank=4"), t = spec_of("topk:ratio=0.01"), b = spec_of("bf16");
    assert_non_null(strstr(tc_codec_cost_source(&p), "5-29x"));
    assert_non_null(strstr(tc_codec_cost_source(&t), "about 20x"));
    assert_non_null(strstr(tc_codec_cost_source(&b), "1.2-1.3x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_take_longer_than_the_roofline),
        cmocka_unit_test(hooks_take_longer_than_the_roofline),
        cmocka_unit_test(the_cost_source_quotes_the_measurement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
