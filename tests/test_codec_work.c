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

/* One row of the measured-path table: bytes (read, written, allocated, of
 * them in place), floating-point, integer, 8-lane and product lane
 * operations, scalar operations, random accesses. */
typedef struct row {
    double rd, wr, alloc, inplace, fops, iops, narrow, gemm, sops, random;
} row;

static void measured_is(const char *codec, row want)
{
    tc_codec_spec c = spec_of(codec);
    tc_codec_work w;
    tc_codec_work_measured(&c, D, &w);
    near(w.read, want.rd, "read", codec);
    near(w.written, want.wr, "written", codec);
    near(w.alloc, want.alloc, "alloc", codec);
    near(w.inplace, want.inplace, "inplace", codec);
    near(w.vops, want.fops, "vops", codec);
    near(w.iops, want.iops, "iops", codec);
    near(w.narrow, want.narrow, "narrow", codec);
    near(w.gemm, want.gemm, "gemm", codec);
    near(w.sops, want.sops, "sops", codec);
    near(w.random, want.random, "random", codec);
}

static void measured_path_counts_are_the_tables_hand_counts(void **state)
{
    (void)state;
    measured_is("fp32", (row){.rd = 4, .wr = 4, .inplace = 8, .fops = 1});
    /* multiply; round (5), NaN (4), narrow, store; back: load, widen, shift */
    measured_is("bf16", (row){.rd = 4, .wr = 4, .inplace = 8, .fops = 1, .iops = 11 + 3});
#if defined(__x86_64__) && defined(__GNUC__)
    bool f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#else
    bool f16c = false;
#endif
    if (f16c) /* F16C: 8-lane conversions */
        measured_is("fp16", (row){.rd = 4, .wr = 4, .inplace = 8, .narrow = 3 + 2});
    else
        measured_is("fp16", (row){.rd = 4, .wr = 4, .inplace = 8, .fops = 2 + 2, .iops = 18 + 16});
    /* max pass (max; abs); in place: quantize (7; 11), widen (0; 3),
     * dequantize (3; 1) */
    row q = {.rd = 8, .wr = 4, .inplace = 8, .fops = 1 + 7 + 3, .iops = 1 + 11 + 3 + 1};
    measured_is("int8", q);
    measured_is("int4", q);
    /* chunks of 65,536: each transform two radix-4 passes inside blocks of
     * 16 (2 additions, load and store each) and radix-8 passes on halves of
     * 16 (scalar, 5), 128, 1024, 8192 (3 additions; load, store): 13
     * floating-point, 10 integer; signs (1; 5) + 17/32 scalar, max (1; 1),
     * in place: quantize (7; 11), widen (0; 3), levels (3; 2), transform;
     * signs back (1; 6) */
    measured_is("thc", (row){.rd = 12, .wr = 12, .alloc = 8, .inplace = 8, .fops = 1 + 13 + 1 + 7 + 3 + 13 + 1,
                             .iops = 5 + 10 + 1 + 11 + 3 + 2 + 10 + 6, .sops = 17 / 32.0 + 5 + 5 + 17 / 32.0});
    /* rank 4: two products (r + 3 each), P Q^T (r + 2), OpenBLAS's; the
     * second pass over the output in place */
    measured_is("powersgd:rank=4", (row){.rd = 12, .wr = 8, .alloc = 4, .inplace = 8, .gemm = 7 + 7 + 6});
    /* L1 norm (add; abs), sign bits (5 + the OR of 32: 5), unpack 5 */
    measured_is("signsgd", (row){.rd = 8, .wr = 4, .alloc = 4, .fops = 1, .iops = 1 + 10 + 5, .sops = 5 / 32.0});
    /* randk: k draws (a random bitmap word each), the bitmap, a random
     * access per gathered and per scattered value, the zeroing pass */
    double rho = ceil(0.01 * D) / D;
    measured_is("randk:ratio=0.01", (row){.wr = 4, .alloc = 4, .sops = 33 * rho + 1 / 16.0, .random = 3 * rho});
    /* topk: a sample of 512 runs of 32 keys; the threshold admits
     * ceil(e + 3 sqrt(e) + 8) d / s candidates, e = k s / d */
    double s = 512 * 32, e = ceil(0.01 * D) * s / D, cand = ceil(e + 3 * sqrt(e) + 8) * D / s;
    double sops = 2 / 32.0 + (31 * cand + 15 * s) / D + 7 * rho;
    row t = {.rd = 4, .wr = 4, .alloc = 4, .iops = 4 + 5, .sops = sops, .random = 2 * rho};
    measured_is("topk:ratio=0.01", t);
    measured_is("topk-shared:ratio=0.01", t);
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
    /* the 1024 x 1024 bucket at rank 4: M three times, and P and Q (4 a r
     * bytes each) read and written by the products and the
     * orthogonalisation: 5 P + 3 Q = 32 a r / d */
    near(accel("powersgd:rank=4", 8), 12 + 32.0 * 1024 * 4 / D + 12 + 12, "bytes", "powersgd");
    near(accel("powersgd:rank=4,ef=0", 8), 12 + 32.0 * 1024 * 4 / D, "bytes", "powersgd:ef=0");
    near(accel("powersgd-batched:rank=4,ef=0", 8), 12 + 32.0 * 1024 * 4 / D, "bytes", "powersgd-batched");
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
    /* PowerSGD rank 64 on a 1024 x 1024 bucket: 6 r flops per coordinate
     * for the products and 4 a r^2 / d for the orthogonalisation cap it */
    s = spec_of("powersgd:rank=64,ef=0");
    double mem = 4 * h->mem_Bps / (12 + 32.0 * 1024 * 64 / D), cap = 4 * h->flops / (6.0 * 64 + 4.0 * 1024 * 64 * 64 / D);
    near(tc_codec_accel_throughput(&s, h, D, 8), mem < cap ? mem : cap, "throughput", "powersgd");
    s = spec_of("thc");
    assert_non_null(strstr(tc_codec_cost_source(&s), "fast-hadamard-transform"));
    s = spec_of("topk");
    assert_non_null(strstr(tc_codec_cost_source(&s), "multi-pass"));
}

/* The rank PowerSGD uses on the bucket's 1024 x 1024 matrix: the cost
 * grows with it up to min(a, b) (batched) and, per tensor, falls to the
 * plain all-reduce's where _should_compress declines ((a + b) r 2 >= a b:
 * from r = 256). A rank beyond the matrix costs what the largest rank does. */
static void powersgd_cost_follows_the_rank_it_uses(void **state)
{
    (void)state;
    const tc_accel *h = tc_accel_find("h100");
    assert_non_null(h);
    char name[64];
    double prev = INFINITY;
    for (uint32_t r = 1; r <= 1024; r *= 2) {
        snprintf(name, sizeof name, "powersgd-batched:rank=%u,ef=0", r);
        tc_codec_spec s = spec_of(name);
        double t = tc_codec_accel_throughput(&s, h, D, 8);
        assert_true(t < prev);
        prev = t;
    }
    tc_codec_spec big = spec_of("powersgd-batched:rank=100000,ef=0"), top = spec_of("powersgd-batched:rank=1024,ef=0");
    near(tc_codec_accel_throughput(&big, h, D, 8), tc_codec_accel_throughput(&top, h, D, 8), "throughput",
         "rank beyond the matrix");
    tc_codec_spec fp = spec_of("fp32"), last = spec_of("powersgd:rank=255,ef=0");
    double plain = tc_codec_accel_throughput(&fp, h, D, 8);
    for (uint32_t r = 256; r <= 100000; r = r * 3 + 1) {
        snprintf(name, sizeof name, "powersgd:rank=%u,ef=0", r);
        tc_codec_spec s = spec_of(name);
        near(tc_codec_bytes_touched(&s, D, 8), 8, "bytes", name);
        near(tc_codec_accel_throughput(&s, h, D, 8), plain, "throughput", name);
    }
    assert_true(tc_codec_accel_throughput(&last, h, D, 8) < plain / 2);
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
    /* integer operations, in-place bytes and OpenBLAS's products: at the
     * floating-point rate and as streamed bytes until their own kernels are
     * measured (products as 8-lane operations), then at their rates */
    w = (tc_codec_work){.read = 8, .written = 4, .alloc = 4, .inplace = 8, .vops = 10, .iops = 6, .gemm = 3};
    r = (tc_codec_rates){.copy_Bps = 1e10, .lane_ops = 1e11, .lanes = 16};
    near(tc_codec_predict_s(&w, 1000, &r), 16 * 1000 / 3e10 + (10 + 6 + 2 * 3) * 1000 / 1e11, "seconds",
         "no int, in-place or product rate");
    r.int_ops = 2e11;
    r.inplace_Bps = 2e10;
    r.gemm_ops = 5e10;
    double mem, ops;
    tc_codec_predict_parts(&w, 1000, &r, &mem, &ops);
    /* streamed: 8 of the 16 bytes at 3 x copy; in place: 8 bytes at 2 x the
     * in-place kernel's bytes (it reads and writes back 4 per 4) */
    near(mem, 8 * 1000 / 3e10 + 8 * 1000 / 4e10, "memory seconds", "rates");
    near(ops, 10 * 1000 / 1e11 + 6 * 1000 / 2e11 + 3 * 1000 / 5e10, "arithmetic seconds", "rates");
    near(tc_codec_predict_s(&w, 1000, &r), mem + ops, "seconds", "rates");
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
        assert_true(m.int_ops.min > 0 && m.int_ops.median <= m.int_ops.max);
        assert_true(m.inplace_Bps.min > 0 && m.inplace_Bps.median <= m.inplace_Bps.max);
        bool blas = s.kind == TC_CODEC_POWERSGD || s.kind == TC_CODEC_POWERSGD_BATCHED;
        assert_true(blas ? m.gemm_ops.min > 0 && m.gemm_ops.median <= m.gemm_ops.max : m.gemm_ops.median == 0);
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
        cmocka_unit_test(powersgd_cost_follows_the_rank_it_uses),
        cmocka_unit_test(prediction_is_memory_plus_arithmetic),
        cmocka_unit_test(prediction_is_within_a_factor_3_of_the_measurement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
