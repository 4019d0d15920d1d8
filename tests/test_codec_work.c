/* test_codec_work.c - the codecs' compute costs are the hand counts of
 * docs/MODEL.md, "Compute": the measured path's bytes and operations per
 * coordinate, the accelerator's multi-pass bytes with THC's transform at the
 * published kernel's cost, the prediction as memory plus arithmetic, and the
 * prediction within a factor 3 of a measurement on this machine. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "compress/codec_int.h"
#include "codec_helpers.h"

#define D (1u << 20) /* a multiple of THC's chunk: no padding */

static void near(double got, double want, const char *what, const char *codec)
{
    if (!(fabs(got - want) <= 1e-9 * (1 + fabs(want))))
        fail_msg("%s %s: %.12g, the hand count is %.12g", codec, what, got, want);
}

/* One row of the measured-path table. */
static void measured_is_r(const char *codec, double rd, double wr, double alloc, double vops, double narrow,
                          double sops, double random)
{
    tc_codec_spec c = spec_of(codec);
    tc_codec_work w;
    tc_codec_work_measured(&c, D, &w);
    near(w.read, rd, "read", codec);
    near(w.written, wr, "written", codec);
    near(w.alloc, alloc, "alloc", codec);
    near(w.vops, vops, "vops", codec);
    near(w.narrow, narrow, "narrow", codec);
    near(w.sops, sops, "sops", codec);
    near(w.random, random, "random", codec);
}

static void measured_is(const char *codec, double rd, double wr, double alloc, double vops, double narrow,
                        double sops)
{
    measured_is_r(codec, rd, wr, alloc, vops, narrow, sops, 0);
}

static void measured_path_counts_are_the_tables_hand_counts(void **state)
{
    (void)state;
    measured_is("fp32", 4, 4, 0, 1, 0, 0);
    measured_is("bf16", 4, 4, 0, 12 + 3, 0, 0);
#if defined(__x86_64__) && defined(__GNUC__)
    bool f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#else
    bool f16c = false;
#endif
    if (f16c)
        measured_is("fp16", 4, 4, 0, 0, 3 + 2, 0); /* F16C: 8-lane conversions */
    else
        measured_is("fp16", 4, 4, 0, 20 + 18, 0, 0);
    /* max pass; quantize 18, widen 3, dequantize 4 */
    measured_is("int8", 8, 4, 0, 2 + 18 + 3 + 4, 0, 0);
    measured_is("int4", 8, 4, 0, 2 + 18 + 3 + 4, 0, 0);
    /* chunks of 65,536: each transform two radix-4 passes inside blocks of
     * 16 (8) and radix-8 passes
     * on halves of 16 (scalar, 5), 128, 1024, 8192 (15); signs 6 + 17/32
     * scalar, max 2, quantize 18, widen 3, levels 5, signs back 7 */
    measured_is("thc", 12, 12, 8, 6 + 23 + 2 + 18 + 3 + 5 + 23 + 7, 0, 17 / 32.0 + 5 + 5 + 17 / 32.0);
    /* rank 4: two products (r + 3 each), P Q^T (r + 2), in OpenBLAS's 8-lane kernels */
    measured_is("powersgd:rank=4", 12, 8, 4, 0, 7 + 7 + 6, 0);
    measured_is("signsgd", 8, 4, 4, 2 + 10 + 5, 0, 5 / 32.0);
    /* randk: k draws (a random bitmap word each), the bitmap, a random
     * access per gathered and per scattered value, the zeroing pass */
    double rho = ceil(0.01 * D) / D;
    measured_is_r("randk:ratio=0.01", 0, 4, 4, 0, 0, 33 * rho + 1 / 16.0, 3 * rho);
    /* topk: a sample of 512 runs of 32 keys; the threshold admits
     * ceil(e + 3 sqrt(e) + 8) d / s candidates, e = k s / d */
    double s = 512 * 32, e = ceil(0.01 * D) * s / D, cand = ceil(e + 3 * sqrt(e) + 8) * D / s;
    double sops = 2 / 32.0 + (31 * cand + 15 * s) / D + 7 * rho;
    measured_is_r("topk:ratio=0.01", 4, 4, 4, 4 + 5, 0, sops, 2 * rho);
    measured_is_r("topk-shared:ratio=0.01", 4, 4, 4, 4 + 5, 0, sops, 2 * rho);
}

static double accel(const char *codec, uint32_t n)
{
    tc_codec_spec c = spec_of(codec);
    return tc_codec_bytes_touched(&c, D, n);
}

static void accelerator_bytes_are_the_tables_hand_counts(void **state)
{
    (void)state;
    double rho = ceil(0.01 * D) / D, n = 8;
    near(accel("fp32", 8), 8, "bytes", "fp32");
    near(accel("fp32:ef=1", 8), 8 + 8 + 12, "bytes", "fp32:ef=1");
    near(accel("bf16", 8), 12, "bytes", "bf16");
    near(accel("fp16", 8), 12, "bytes", "fp16");
    near(accel("int8", 8), 12 + 2 * 2, "bytes", "int8"); /* 2-byte sums at n = 8 */
    near(accel("int4", 8), 12 + 2 * 1, "bytes", "int4");
    near(accel("int4", 64), 12 + 2 * 2, "bytes", "int4 n=64");
    /* THC, chunks of 65,536: two transforms of two published-kernel passes at
     * 1.2x a memcpy (8 bytes), max 4, quantize 4 + 1, levels 1 + 4 */
    near(accel("thc", 8), 2 * 2 * 1.2 * 8 + 4 + 5 + 5, "bytes", "thc");
    near(accel("topk", 8), 4 + 12 * rho + 4 + 16 * n * rho + 8 * rho + 12, "bytes", "topk");
    near(accel("topk:ratio=0.01,ef=0", 8), 8 + 12 * rho + 16 * n * rho, "bytes", "topk:ef=0");
    near(accel("topk-shared", 8), 8 + 28 * rho + 8 * rho + 12, "bytes", "topk-shared");
    near(accel("randk", 8), 4 + 28 * rho + 8 * rho + 12, "bytes", "randk");
    near(accel("powersgd:rank=4", 8), 12 + 12 + 12, "bytes", "powersgd");
    near(accel("powersgd:rank=4,ef=0", 8), 12, "bytes", "powersgd:ef=0");
    near(accel("signsgd", 8), 12 + (n + 1) / 8 + 8 + 12, "bytes", "signsgd");
}

/* The published transform's cost by chunk: 1.0x a memcpy up to 8,192, 1.1x
 * at 16,384, 1.2x at 32,768, two passes beyond. */
static void thc_transform_costs_the_published_kernel(void **state)
{
    (void)state;
    tc_codec_spec c = spec_of("thc");
    const struct {
        uint64_t d;
        double factor;
    } cases[] = {{4096, 1.0}, {8192, 1.0}, {16384, 1.1}, {32768, 1.2}, {65536, 2.4}, {1u << 22, 2.4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double want = 2 * cases[i].factor * 8 + 4 + 5 + 5;
        near(tc_codec_bytes_touched(&c, cases[i].d, 8), want, "bytes", "thc");
    }
    /* about three times the ideal fused roofline (16 + 2w = 18) at 65,536 */
    assert_true(tc_codec_bytes_touched(&c, 1u << 22, 8) > 2.5 * 18);
}

static void accelerator_throughput_is_the_multipass_roofline(void **state)
{
    (void)state;
    const tc_accel *h = tc_accel_find("h100");
    assert_non_null(h);
    tc_codec_spec s = spec_of("bf16");
    near(tc_codec_accel_throughput(&s, h, D, 8), 4 * h->mem_Bps / 12, "throughput", "bf16");
    s = spec_of("thc");
    near(tc_codec_accel_throughput(&s, h, D, 8), 4 * h->mem_Bps / tc_codec_bytes_touched(&s, D, 8), "throughput",
         "thc");
    /* the published transform is in units of a memcpy: the throughput scales
     * with the profile's memory bandwidth */
    const tc_accel *a = tc_accel_find("a100");
    assert_non_null(a);
    near(tc_codec_accel_throughput(&s, h, D, 8) / tc_codec_accel_throughput(&s, a, D, 8), h->mem_Bps / a->mem_Bps,
         "scaling", "thc");
    /* PowerSGD rank 64 on a 1024 x 1024 bucket: 6 r flops per coordinate cap it */
    s = spec_of("powersgd:rank=64,ef=0");
    double mem = 4 * h->mem_Bps / 12, cap = 4 * h->flops / (6.0 * 64);
    near(tc_codec_accel_throughput(&s, h, D, 8), mem < cap ? mem : cap, "throughput", "powersgd");
    s = spec_of("thc");
    assert_non_null(strstr(tc_codec_cost_source(&s), "fast-hadamard-transform"));
    s = spec_of("topk");
    assert_non_null(strstr(tc_codec_cost_source(&s), "multi-pass"));
}

static void prediction_is_memory_plus_arithmetic(void **state)
{
    (void)state;
    tc_codec_work w = {.read = 8, .written = 2, .alloc = 2, .vops = 10, .narrow = 4, .sops = 0.5};
    tc_codec_rates r = {.copy_Bps = 1e10, .lane_ops = 1e11, .lanes = 16};
    /* memory: 12 bytes at 3 x copy (12 bytes per 4 copied); arithmetic:
     * 10 + 4 x 16 / 8 + 0.5 x 16 = 26 lane operations */
    near(tc_codec_predict_s(&w, 1000, &r), 12 * 1000 / 3e10 + 26 * 1000 / 1e11, "seconds", "synthetic");
    r.lanes = 8;
    near(tc_codec_predict_s(&w, 1000, &r), 12 * 1000 / 3e10 + (10 + 4 + 4) * 1000 / 1e11, "seconds", "8 lanes");
    /* random accesses: at the random-access kernel's rate, or without it a
     * 64-byte line each at the copy's traffic rate */
    w.random = 0.02;
    near(tc_codec_predict_s(&w, 1000, &r), (12 + 0.02 * 64) * 1000 / 3e10 + 18 * 1000 / 1e11, "seconds", "random");
    r.random_ps = 1e8;
    near(tc_codec_predict_s(&w, 1000, &r), 12 * 1000 / 3e10 + 20 / 1e8 + 18 * 1000 / 1e11, "seconds", "random_ps");
    assert_true(tc_codec_cpu_lanes() == 4 || tc_codec_cpu_lanes() == 8 || tc_codec_cpu_lanes() == 16);
}

/* The benchmark's claim with a generous margin: on a shared machine, under
 * a parallel test run, every codec's prediction is within a factor 3 of its
 * measurement (docs/PERFORMANCE.md has the figures and the 30% goal). */
static void prediction_is_within_a_factor_3_of_the_measurement(void **state)
{
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
    /* a sanitized or unoptimized build times its instrumentation, not the
     * codecs: the check is for the optimized build */
    (void)state;
    skip();
#endif
    (void)state;
    uint64_t d = 1u << 23;
    for (int k = 0; k < TC_CODEC_COUNT; k++) {
        tc_codec_spec s;
        tc_codec_defaults((tc_codec_kind)k, &s);
        tc_codec_measurement m;
        tc_err err = {{0}};
        if (tc_codec_measure_full(&s, d, 0.15, &m, &err) != TC_OK)
            fail_msg("measure %s: %s", s.name, err.msg);
        assert_true(m.reps >= 5);
        assert_true(m.enc_dec_Bps.min <= m.enc_dec_Bps.median && m.enc_dec_Bps.median <= m.enc_dec_Bps.max);
        assert_true(m.copy_Bps.min <= m.copy_Bps.median && m.copy_Bps.median <= m.copy_Bps.max);
        assert_true(m.lane_ops.min > 0 && m.lane_ops.median <= m.lane_ops.max);
        assert_true(m.random_ps.min > 0 && m.random_ps.median <= m.random_ps.max);
        double q = m.enc_dec_Bps.median / m.predicted_Bps;
        print_message("%-24s measured %6.2f GB/s, model %6.2f GB/s, measured / model %.2f\n", s.name,
                      m.enc_dec_Bps.median / 1e9, m.predicted_Bps / 1e9, q);
        if (!(q >= 1 / 3.0 && q <= 3))
            fail_msg("%s: measured %.3g B/s, the model predicts %.3g (ratio %.2f, outside [1/3, 3])", s.name,
                     m.enc_dec_Bps.median, m.predicted_Bps, q);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_path_counts_are_the_tables_hand_counts),
        cmocka_unit_test(accelerator_bytes_are_the_tables_hand_counts),
        cmocka_unit_test(thc_transform_costs_the_published_kernel),
        cmocka_unit_test(accelerator_throughput_is_the_multipass_roofline),
        cmocka_unit_test(prediction_is_memory_plus_arithmetic),
        cmocka_unit_test(prediction_is_within_a_factor_3_of_the_measurement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
