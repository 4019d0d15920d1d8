/* test_compress.c - the codecs do what docs/MODEL.md says: round-trip error
 * bounds, unbiasedness, integer sums that decode exactly, exact top-k, the
 * wire-cost rules, PowerSGD on low-rank buckets, error feedback that recovers
 * the signal, and bad input refused with a message. */
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

static float *vec(uint64_t d, uint64_t seed)
{
    float *x = malloc(d * sizeof *x);
    assert_non_null(x);
    tc_cx_fill_gradient(x, d, seed);
    return x;
}

/* One worker: out = the codec's round trip of x at step. */
static void round_trip(tc_codec *c, const float *x, float *out, uint64_t step)
{
    const float *g[1] = {x};
    tc_err err = {{0}};
    assert_int_equal(tc_codec_aggregate(c, g, out, step, &err), TC_OK);
}

static double norm2(const float *x, uint64_t d)
{
    double s = 0;
    for (uint64_t i = 0; i < d; i++)
        s += (double)x[i] * x[i];
    return sqrt(s);
}

static void casts_round_to_nearest_within_half_a_unit_in_the_last_place(void **state)
{
    (void)state;
    uint64_t d = 100000;
    float *x = vec(d, 1), *out = malloc(d * sizeof *out);
    for (uint64_t i = 0; i < d; i++)
        x[i] *= 100; /* normal range of fp16 */
    const char *names[2] = {"fp16", "bf16"};
    const double bound[2] = {0x1p-11, 0x1p-8};
    for (int k = 0; k < 2; k++) {
        tc_codec *c = make(names[k], d, 1);
        round_trip(c, x, out, 0);
        for (uint64_t i = 0; i < d; i++)
            if (fabs((double)out[i] - x[i]) > bound[k] * fabs((double)x[i]))
                fail_msg("%s: x=%.9g decoded %.9g", names[k], x[i], out[i]);
        tc_codec_free(c);
    }
    /* known values: ties to even, the largest half, overflow, subnormals */
    float in[6] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65520.0f, 0x1p-24f, -0x1p-20f};
    float want16[6] = {1.0f, 1.0f + 0x1p-9f, 65504.0f, INFINITY, 0x1p-24f, -0x1p-20f};
    uint16_t h[6];
    float back[6];
    tc_cx_to_f16(in, 1.0f, h, 6);
    tc_cx_from_f16(h, back, 6);
    for (int i = 0; i < 6; i++)
        assert_true(back[i] == want16[i]);
    float inb[3] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -2.0f};
    float wantb[3] = {1.0f, 1.0f + 0x1p-6f, -2.0f};
    tc_cx_to_bf16(inb, 1.0f, h, 3);
    tc_cx_from_bf16(h, back, 3);
    for (int i = 0; i < 3; i++)
        assert_true(back[i] == wantb[i]);
    free(x);
    free(out);
}

static void int_quantization_errs_below_one_level_and_is_unbiased(void **state)
{
    (void)state;
    uint64_t d = 257;
    float *x = vec(d, 2), *out = malloc(d * sizeof *out);
    double *mean = calloc(d, sizeof *mean);
    const char *names[2] = {"int8", "int4"};
    const double qmax[2] = {127, 7};
    int T = 4000;
    for (int k = 0; k < 2; k++) {
        tc_codec *c = make(names[k], d, 1);
        double s = tc_cx_max_abs(x, d), level = s / qmax[k];
        memset(mean, 0, d * sizeof *mean);
        for (int t = 0; t < T; t++) {
            round_trip(c, x, out, (uint64_t)t);
            for (uint64_t i = 0; i < d; i++) {
                assert_true(fabs((double)out[i] - x[i]) <= level * (1 + 1e-6));
                mean[i] += out[i];
            }
        }
        /* the rounding of one coordinate has sd <= level / 2: the mean of T
         * draws lies within 5 sd / sqrt(T) of x */
        for (uint64_t i = 0; i < d; i++)
            if (fabs(mean[i] / T - x[i]) > 5 * level / 2 / sqrt(T))
                fail_msg("%s: biased at %llu: mean %g, x %g", names[k], (unsigned long long)i, mean[i] / T, x[i]);
        tc_codec_free(c);
    }
    free(x);
    free(out);
    free(mean);
}

/* For the integer codecs: encode every worker, sum the integer vectors here,
 * decode the sum, and compare bit for bit with tc_codec_aggregate. */
static void integer_sums_decode_exactly_to_the_aggregate(void **state)
{
    (void)state;
    const char *names[4] = {"int8", "int4", "thc:bits=4", "thc:bits=8"};
    uint64_t d = 70001;
    uint32_t n = 5;
    float *x[5], *out = malloc(d * sizeof *out), *dec = malloc(d * sizeof *dec);
    for (uint32_t w = 0; w < n; w++)
        x[w] = vec(d, 10 + w);
    for (int k = 0; k < 4; k++) {
        tc_codec *c = make(names[k], d, n);
        uint64_t len = tc_cx_int_len(c), step = 7;
        int8_t *q = malloc(len);
        int32_t *sum = calloc(len, sizeof *sum);
        float s = tc_cx_int_scale(c, (const float *const *)x, step);
        for (uint32_t w = 0; w < n; w++) {
            tc_cx_int_encode(c, x[w], NULL, s, step, w, q);
            for (uint64_t i = 0; i < len; i++)
                sum[i] += q[i];
        }
        tc_cx_int_decode(c, sum, n, s, step, dec);
        tc_err err = {{0}};
        assert_int_equal(tc_codec_aggregate(c, (const float *const *)x, out, step, &err), TC_OK);
        assert_memory_equal(out, dec, d * sizeof *out);
        free(q);
        free(sum);
        tc_codec_free(c);
    }
    for (uint32_t w = 0; w < n; w++)
        free(x[w]);
    free(out);
    free(dec);
}

static void thc_error_after_the_inverse_transform_is_bounded_and_unbiased(void **state)
{
    (void)state;
    /* d = 100,000: one full chunk of 65,536 and a tail padded to 65,536 */
    uint64_t d = 100000;
    float *x = vec(d, 3), *out = malloc(d * sizeof *out);
    x[17] = 400; /* an outlier the rotation spreads out */
    for (uint32_t bits = 1; bits <= 8; bits++) {
        char s[32];
        snprintf(s, sizeof s, "thc:bits=%u", bits);
        tc_codec *c = make(s, d, 1);
        assert_int_equal(tc_cx_int_len(c), 131072);
        const float *g[1] = {x};
        float M = tc_cx_int_scale(c, g, 0);
        round_trip(c, x, out, 0);
        double e2 = 0;
        for (uint64_t i = 0; i < d; i++)
            e2 += ((double)out[i] - x[i]) * ((double)out[i] - x[i]);
        /* per rotated coordinate the error is below one level, 2M/(L-1), and
         * its variance at most a quarter level^2; R is orthonormal */
        double level = 2.0 * M / ((1 << bits) - 1);
        assert_true(sqrt(e2) <= sqrt(131072.0) * level);
        assert_true(e2 <= 131072.0 * level * level / 4 * 1.1);
        tc_codec_free(c);
    }
    /* unbiased: the mean over steps (fresh rotation and rounding) converges */
    uint64_t ds = 300;
    tc_codec *c = make("thc:bits=2", ds, 1);
    double *mean = calloc(ds, sizeof *mean);
    int T = 4000;
    for (int t = 0; t < T; t++) {
        round_trip(c, x, out, (uint64_t)t);
        for (uint64_t i = 0; i < ds; i++)
            mean[i] += out[i];
    }
    double err = 0, ref = 0;
    for (uint64_t i = 0; i < ds; i++) {
        err += (mean[i] / T - x[i]) * (mean[i] / T - x[i]);
        ref += (double)x[i] * x[i];
    }
    assert_true(sqrt(err / ref) < 0.05);
    tc_codec_free(c);
    free(mean);
    free(x);
    free(out);
}

static int cmp_desc_abs(const void *a, const void *b)
{
    float x = fabsf(*(const float *)a), y = fabsf(*(const float *)b);
    return (x < y) - (x > y);
}

static void topk_keeps_exactly_the_k_largest_magnitudes(void **state)
{
    (void)state;
    uint64_t sizes[3] = {1000, 65536 + 3, 2000000};
    double ratios[3] = {0.01, 0.1, 0.5};
    for (int si = 0; si < 3; si++)
        for (int ri = 0; ri < 3; ri++) {
            uint64_t d = sizes[si];
            float *x = vec(d, 4 + (uint64_t)si), *out = malloc(d * sizeof *out), *sorted = malloc(d * sizeof *sorted);
            char s[64];
            snprintf(s, sizeof s, "topk:ratio=%g,ef=0", ratios[ri]);
            tc_codec *c = make(s, d, 1);
            uint64_t k = (uint64_t)ceil(ratios[ri] * (double)d - 1e-9);
            round_trip(c, x, out, 3);
            memcpy(sorted, x, d * sizeof *x);
            qsort(sorted, d, sizeof *sorted, cmp_desc_abs);
            float kth = fabsf(sorted[k - 1]);
            uint64_t kept = 0;
            for (uint64_t i = 0; i < d; i++) {
                if (out[i] != 0) {
                    kept++;
                    assert_true(out[i] == x[i]);
                    assert_true(fabsf(x[i]) >= kth);
                } else {
                    assert_true(fabsf(x[i]) <= kth);
                }
            }
            assert_int_equal(kept, k);
            tc_codec_free(c);
            free(x);
            free(out);
            free(sorted);
        }
    /* ties: all equal, the lowest indices win */
    uint64_t d = 100;
    float x[100], out[100];
    for (int i = 0; i < 100; i++)
        x[i] = 1.0f;
    tc_codec *c = make("topk:ratio=0.05,ef=0", d, 1);
    round_trip(c, x, out, 0);
    for (int i = 0; i < 100; i++)
        assert_true(out[i] == (i < 5 ? 1.0f : 0.0f));
    tc_codec_free(c);
}

static void topk_aggregate_is_the_mean_of_every_workers_sparse_set(void **state)
{
    (void)state;
    uint64_t d = 12;
    float a[12] = {9, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2}, b[12] = {0, 0, 0, 0, 0, -8, 0, 0, 0, 0, 0, 3};
    const float *g[2] = {a, b};
    float out[12];
    tc_codec *c = make("topk:ratio=0.1,ef=0", d, 2); /* k = 2 */
    tc_err err = {{0}};
    assert_int_equal(tc_codec_aggregate(c, g, out, 0, &err), TC_OK);
    float want[12] = {4.5f, 0, 0, 0, 0, -4, 0, 0, 0, 0, 0, 2.5f};
    assert_memory_equal(out, want, sizeof want);
    tc_codec_free(c);
}

static void topk_shared_sends_every_workers_values_at_the_leaders_indices(void **state)
{
    (void)state;
    uint64_t d = 10;
    float a[10] = {5, 0, 0, 0, 1, 0, 0, 0, 0, 0}, b[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 7};
    const float *g[2] = {a, b};
    float out[10];
    tc_codec *c = make("topk-shared:ratio=0.1,ef=0", d, 2); /* k = 1 */
    tc_err err = {{0}};
    assert_int_equal(tc_codec_aggregate(c, g, out, 0, &err), TC_OK); /* leader 0 picks index 0 */
    float want0[10] = {3, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(out, want0, sizeof want0);
    assert_int_equal(tc_codec_aggregate(c, g, out, 1, &err), TC_OK); /* leader 1 picks index 9 */
    float want1[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 3.5f};
    assert_memory_equal(out, want1, sizeof want1);
    tc_codec_free(c);
}

static void randk_sends_k_coordinates_chosen_by_the_shared_seed(void **state)
{
    (void)state;
    uint64_t d = 10000;
    float *x = malloc(d * sizeof *x), *o1 = malloc(d * sizeof *o1), *o2 = malloc(d * sizeof *o2);
    for (uint64_t i = 0; i < d; i++)
        x[i] = 1.0f + (float)i;
    tc_codec *ef = make("randk:ratio=0.03", d, 1);   /* unscaled, memory on */
    tc_codec *ub = make("randk:ratio=0.03,ef=0", d, 1); /* scaled by d/k */
    round_trip(ef, x, o1, 5);
    round_trip(ub, x, o2, 5);
    uint64_t kept = 0;
    for (uint64_t i = 0; i < d; i++) {
        if (o1[i] != 0) {
            kept++;
            assert_true(o1[i] == x[i]);
            assert_true(fabsf(o2[i] - x[i] * (10000.0f / 300.0f)) <= 1e-5f * fabsf(o2[i]));
        } else {
            assert_true(o2[i] == 0);
        }
    }
    assert_int_equal(kept, 300);
    /* another step, another set */
    round_trip(ub, x, o2, 6);
    uint64_t same = 0;
    for (uint64_t i = 0; i < d; i++)
        same += o1[i] != 0 && o2[i] != 0;
    assert_true(same < 60);
    tc_codec_free(ef);
    tc_codec_free(ub);
    free(x);
    free(o1);
    free(o2);
}

static void signsgd_decodes_each_sign_times_the_mean_magnitude(void **state)
{
    (void)state;
    uint64_t d = 1003;
    float *x = vec(d, 5), *out = malloc(d * sizeof *out);
    tc_codec *c = make("signsgd:ef=0", d, 1);
    round_trip(c, x, out, 0);
    double l1 = 0;
    for (uint64_t i = 0; i < d; i++)
        l1 += fabs((double)x[i]);
    float s = (float)(l1 / (double)d);
    for (uint64_t i = 0; i < d; i++) {
        assert_true((out[i] < 0) == (x[i] < 0));
        assert_true(fabsf(fabsf(out[i]) - s) <= 1e-6f * s);
    }
    tc_codec_free(c);
    free(x);
    free(out);
}

/* M = U V^T of rank 3 as the a x b matrix of the bucket (row i = coordinates
 * i b .. i b + b - 1). */
static void low_rank(float *x, uint64_t a, uint64_t b, int rank, uint64_t seed)
{
    float *u = vec(a * (uint64_t)rank, seed), *v = vec(b * (uint64_t)rank, seed + 1);
    for (uint64_t i = 0; i < a; i++)
        for (uint64_t j = 0; j < b; j++) {
            double s = 0;
            for (int r = 0; r < rank; r++)
                s += (double)u[i * (uint64_t)rank + (uint64_t)r] * v[j * (uint64_t)rank + (uint64_t)r];
            x[i * b + j] = (float)s;
        }
    free(u);
    free(v);
}

/* A bucket known only by its size is one a x b matrix for both PowerSGD
 * kinds (per-tensor powersgd: a matrix worth compressing). start=0: no
 * plain all-reduce steps first. Ranks 1 and 2 orthogonalise by
 * Gram-Schmidt, higher ranks by Householder QR. */
static void powersgd_recovers_a_low_rank_bucket_after_warm_started_steps(void **state)
{
    (void)state;
    struct { uint64_t a, b; int rank; const char *spec; } cases[7] = {
        {64, 64, 3, "powersgd-batched:rank=3,start=0,ef=0"}, {63, 64, 3, "powersgd-batched:rank=4,start=0,ef=0"},
        {120, 121, 3, "powersgd-batched:rank=3,start=0"},    {64, 64, 3, "powersgd:rank=3,start=0,ef=0"},
        {120, 121, 3, "powersgd:rank=3,start=0"},            {64, 64, 2, "powersgd:rank=2,start=0,ef=0"},
        {63, 64, 1, "powersgd-batched:rank=1,start=0"}};
    for (int k = 0; k < 7; k++) {
        uint64_t d = cases[k].a * cases[k].b, a, b;
        tc_cx_psgd_shape(d, &a, &b);
        assert_int_equal(a, cases[k].a);
        assert_int_equal(b, cases[k].b);
        float *x = malloc(d * sizeof *x), *out = malloc(d * sizeof *out);
        low_rank(x, a, b, cases[k].rank, 40 + (uint64_t)k);
        tc_codec *c = make(cases[k].spec, d, 1);
        double rel = 1;
        for (int t = 0; t < 2; t++) {
            round_trip(c, x, out, (uint64_t)t);
            double e = 0;
            for (uint64_t i = 0; i < d; i++)
                e += ((double)out[i] - x[i]) * ((double)out[i] - x[i]);
            rel = sqrt(e) / norm2(x, d);
        }
        if (rel > 1e-4)
            fail_msg("%s: relative error %g after 2 steps", cases[k].spec, rel);
        tc_codec_free(c);
        free(x);
        free(out);
    }
}

/* The same gradient g (per worker) for T steps: with error feedback the sum of
 * the applied updates is T mean(g) minus the mean memory, which stays bounded,
 * so the relative error falls like 1/T. */
static double ef_gap(const char *spec, uint64_t d, uint32_t n, int T)
{
    float *g[3], *out = malloc(d * sizeof *out);
    double *sum = calloc(d, sizeof *sum), *want = calloc(d, sizeof *want);
    for (uint32_t w = 0; w < n; w++) {
        g[w] = vec(d, 60 + w);
        for (uint64_t i = 0; i < d; i++)
            want[i] += (double)g[w][i] / n;
    }
    tc_codec *c = make(spec, d, n);
    tc_err err = {{0}};
    for (int t = 0; t < T; t++) {
        assert_int_equal(tc_codec_aggregate(c, (const float *const *)g, out, (uint64_t)t, &err), TC_OK);
        for (uint64_t i = 0; i < d; i++)
            sum[i] += out[i];
    }
    double e = 0, r = 0;
    for (uint64_t i = 0; i < d; i++) {
        e += (sum[i] - T * want[i]) * (sum[i] - T * want[i]);
        r += T * want[i] * T * want[i];
    }
    tc_codec_free(c);
    for (uint32_t w = 0; w < n; w++)
        free(g[w]);
    free(out);
    free(sum);
    free(want);
    return sqrt(e / r);
}

static void error_feedback_recovers_the_full_signal_over_steps(void **state)
{
    (void)state;
    const char *specs[6] = {"topk:ratio=0.05", "topk-shared:ratio=0.05", "randk:ratio=0.05", "signsgd",
                            "powersgd:rank=1,start=0", "powersgd-batched:rank=1,start=0"};
    for (int k = 0; k < 6; k++) {
        double early = ef_gap(specs[k], 900, 3, 50), late = ef_gap(specs[k], 900, 3, 800);
        if (!(late < 0.05 && late < early / 3))
            fail_msg("%s: relative gap %g after 50 steps, %g after 800", specs[k], early, late);
    }
    /* without the memory, top-k never sends the small coordinates */
    assert_true(ef_gap("topk:ratio=0.05,ef=0", 900, 3, 800) > 0.5);
}

static void aggregate_is_deterministic_and_leaves_the_gradients_alone(void **state)
{
    (void)state;
    uint64_t d = 5000;
    float *g[2] = {vec(d, 70), vec(d, 71)}, *copy = malloc(d * sizeof *copy);
    float *o1 = malloc(d * sizeof *o1), *o2 = malloc(d * sizeof *o2);
    memcpy(copy, g[0], d * sizeof *copy);
    for (int k = 0; k < TC_CODEC_COUNT; k++) {
        tc_codec_spec s;
        tc_codec_defaults((tc_codec_kind)k, &s);
        tc_codec *a = NULL, *b = NULL;
        tc_err err = {{0}};
        assert_int_equal(tc_codec_create(&s, d, 2, &a, &err), TC_OK);
        assert_int_equal(tc_codec_create(&s, d, 2, &b, &err), TC_OK);
        assert_int_equal(tc_codec_aggregate(a, (const float *const *)g, o1, 3, &err), TC_OK);
        assert_int_equal(tc_codec_aggregate(b, (const float *const *)g, o2, 3, &err), TC_OK);
        assert_memory_equal(o1, o2, d * sizeof *o1);
        assert_memory_equal(copy, g[0], d * sizeof *copy);
        assert_int_equal(tc_codec_dim(a), d);
        assert_true((tc_codec_memory(a, 0) != NULL) == s.error_feedback);
        tc_codec_free(a);
        tc_codec_free(b);
    }
    free(g[0]);
    free(g[1]);
    free(copy);
    free(o1);
    free(o2);
}

/* Sent once (an all-to-all's tokens, a pipeline send), nothing is summed:
 * b bits a coordinate packed and the sender's 4-byte scale. */
static void send_bytes_pack_integers_without_room_for_a_sum(void **state)
{
    (void)state;
    tc_codec_spec s = spec_of("int8");
    assert_true(tc_codec_send_bytes(&s, 1000) == 1004);
    s = spec_of("int4");
    assert_true(tc_codec_send_bytes(&s, 1000) == 504);
    assert_true(tc_codec_send_bytes(&s, 1001) == 505); /* the odd coordinate's half byte rounds up */
    s = spec_of("bf16");
    assert_true(tc_codec_send_bytes(&s, 1000) == 2000);
    s = spec_of("fp16");
    assert_true(tc_codec_send_bytes(&s, 1000) == 2000);
}

static void wire_cost_widens_integer_sums_and_grows_all_gathers_with_n(void **state)
{
    (void)state;
    tc_codec_wire w, bf;
    tc_codec_spec s = spec_of("bf16");
    tc_codec_wire_cost(&s, 1000, 64, &bf);
    s = spec_of("int8");
    tc_codec_wire_cost(&s, 1000, 64, &w);
    /* 8 + 6 bits -> 2 bytes per coordinate: as much as bf16 */
    assert_int_equal(w.op, TC_OP_ALLREDUCE);
    assert_true(w.size[0] == 2000 && bf.size[0] == 2000);
    assert_int_equal(w.collectives, 2);
    assert_true(w.size[1] == 4);
    assert_non_null(w.integer_sums);
    tc_codec_wire_cost(&s, 1000, 1, &w);
    assert_true(w.size[0] == 1000);
    tc_codec_wire_cost(&s, 1000, 2, &w); /* -127..127 twice needs 9 bits */
    assert_true(w.size[0] == 2000);
    s = spec_of("int4");
    tc_codec_wire_cost(&s, 1000, 16, &w);
    assert_true(w.size[0] == 1000);
    tc_codec_wire_cost(&s, 1000, 17, &w);
    assert_true(w.size[0] == 2000);
    s = spec_of("thc:bits=4");
    tc_codec_wire_cost(&s, 1000, 8, &w); /* padded to 1024, 7 bits -> 1 byte */
    assert_true(w.size[0] == 1024);
    tc_codec_wire_cost(&s, 1000, 32, &w); /* 9 bits -> 2 bytes */
    assert_true(w.size[0] == 2048);
    /* topk: n sets of k (value, index) pairs gathered */
    s = spec_of("topk:ratio=0.01");
    tc_codec_wire_cost(&s, 100000, 8, &w);
    assert_int_equal(w.op, TC_OP_ALLGATHER);
    assert_true(w.size[0] == 8 * 1000 * 8.0);
    tc_codec_wire_cost(&s, 100000, 64, &w);
    assert_true(w.size[0] == 64 * 1000 * 8.0);
    assert_true(fabs(w.bits_per_coord - 0.64) < 1e-12);
    s = spec_of("randk:ratio=0.01");
    tc_codec_wire_cost(&s, 100000, 64, &w);
    assert_true(w.op == TC_OP_ALLREDUCE && w.size[0] == 4000);
    /* powersgd-batched on a 64 x 64 bucket: 32 r (a + b) / (a b) bits per
     * coordinate; per-tensor powersgd, given only d, the same matrix behind
     * an empty all-reduce of uncompressed tensors */
    s = spec_of("powersgd-batched:rank=4");
    tc_codec_wire_cost(&s, 4096, 8, &w);
    assert_int_equal(w.collectives, 2);
    assert_true(w.size[0] == 4 * 64 * 4 && w.size[1] == 4 * 64 * 4 && w.size[2] == 0);
    assert_true(fabs(w.bits_per_coord - 32.0 * 4 * 128 / 4096) < 1e-12);
    s = spec_of("powersgd:rank=4");
    tc_codec_wire_cost(&s, 4096, 8, &w);
    assert_int_equal(w.collectives, 3);
    assert_true(w.size[0] == 0 && w.size[1] == 4 * 64 * 4 && w.size[2] == 4 * 64 * 4);
    assert_true(fabs(w.bits_per_coord - 32.0 * 4 * 128 / 4096) < 1e-12);
    tc_codec_wire_cost(&s, 100, 8, &w); /* 10 x 10 at rank 4: (10 + 10) 4 2 > 100, sent as it is */
    assert_true(w.size[0] == 400 && w.size[1] == 0 && w.size[2] == 0 && w.bits_per_coord == 32);
    s = spec_of("signsgd");
    tc_codec_wire_cost(&s, 1000, 4, &w);
    assert_true(w.op == TC_OP_ALLGATHER && w.size[0] == 4 * (125 + 4));
    s = spec_of("fp32");
    tc_codec_wire_cost(&s, 1000, 4, &w);
    assert_true(w.size[0] == 4000 && w.bits_per_coord == 32 && w.integer_sums == NULL);
}

static void roofline_is_memory_bound_except_where_compute_caps_it(void **state)
{
    (void)state;
    const tc_accel *h = tc_accel_find("h100"), *t = tc_accel_find("tpu");
    assert_non_null(h);
    assert_non_null(t);
    assert_null(tc_accel_find("a1000"));
    assert_true(h->mem_Bps == 3.35e12 && h->flops == 989e12);
    /* the accelerator profiles (in profiles/, their sources in them) */
    const tc_accel *a = tc_accel_find("a100"), *v = tc_accel_find("v100");
    assert_non_null(a);
    assert_non_null(v);
    assert_true(fabs(a->mem_Bps - 2.039e12) < 1 && fabs(a->flops - 312e12) < 1);
    assert_true(fabs(v->mem_Bps - 0.9e12) < 1 && fabs(v->flops - 125e12) < 1);
    assert_true(fabs(t->mem_Bps - 2.765e12) < 1 && fabs(t->flops - 459e12) < 1 && strcmp(t->name, "tpu-v5p") == 0);
    tc_codec_spec s = spec_of("bf16");
    assert_true(tc_codec_bytes_touched(&s, 1 << 20, 8) == 12);
    assert_true(fabs(tc_codec_accel_throughput(&s, h, 1 << 20, 8) - 4 * 3.35e12 / 12) < 1);
    s = spec_of("int8"); /* 2-byte sums at n = 8 */
    assert_true(tc_codec_bytes_touched(&s, 1 << 20, 8) == 16);
    /* powersgd rank 64 on a 1024 x 1024 bucket: 6 r flops per coordinate
     * and the orthogonalisation's 4 a r^2 / d; P and Q's traffic 32 a r / d */
    s = spec_of("powersgd:rank=64,ef=0");
    double mem = 4 * 3.35e12 / (12 + 32.0 * 1024 * 64 / (1 << 20)),
           cap = 4 * 989e12 / (6.0 * 64 + 4.0 * 1024 * 64 * 64 / (1 << 20));
    assert_true(fabs(tc_codec_accel_throughput(&s, h, 1 << 20, 8) - (mem < cap ? mem : cap)) < 1);
    /* topk's decode grows with n */
    s = spec_of("topk");
    assert_true(tc_codec_bytes_touched(&s, 1 << 20, 64) > tc_codec_bytes_touched(&s, 1 << 20, 8));
}

static void parse_gives_canonical_names_and_defaults(void **state)
{
    (void)state;
    tc_codec_spec s = spec_of("topk");
    assert_string_equal(s.name, "topk:ratio=0.01");
    assert_true(s.error_feedback && s.ratio == 0.01);
    s = spec_of("topk:ratio=0.01,ef=0");
    assert_string_equal(s.name, "topk:ratio=0.01,ef=0");
    assert_false(s.error_feedback);
    s = spec_of("randk:ratio=0.05,seed=7");
    assert_string_equal(s.name, "randk:ratio=0.05,seed=7");
    s = spec_of("powersgd:rank=4");
    assert_true(s.rank == 4 && s.kind == TC_CODEC_POWERSGD && s.start == 1000 && s.min_rate == 2);
    assert_string_equal(s.name, "powersgd:rank=4");
    s = spec_of("powersgd:rank=2,start=0,min_rate=1.5");
    assert_true(s.start == 0 && s.min_rate == 1.5);
    assert_string_equal(s.name, "powersgd:rank=2,start=0,min_rate=1.5");
    s = spec_of("powersgd-batched:rank=1,start=10");
    assert_true(s.kind == TC_CODEC_POWERSGD_BATCHED && s.rank == 1 && s.start == 10);
    assert_string_equal(s.name, "powersgd-batched:rank=1,start=10");
    s = spec_of("thc:bits=4");
    assert_true(s.bits == 4 && !s.error_feedback);
    s = spec_of("bf16");
    assert_string_equal(s.name, "bf16");
    s = spec_of("int8:ef=1");
    assert_string_equal(s.name, "int8:ef=1");
    for (int k = 0; k < TC_CODEC_COUNT; k++) {
        tc_codec_spec d;
        tc_codec_defaults((tc_codec_kind)k, &d);
        s = spec_of(d.name);
        assert_string_equal(s.name, d.name);
        assert_string_equal(tc_codec_kind_name((tc_codec_kind)k), strtok(d.name, ":"));
    }
}

static void bad_input_is_refused_with_a_message(void **state)
{
    (void)state;
    struct { const char *s, *needle; } bad[] = {
        {"nope", "accepted are fp32"},        {"topk:foo=1", "ratio"},      {"fp32:ratio=0.1", "ef"},
        {"topk:ratio=0", "0 < ratio"},        {"topk:ratio=1.5", "ratio"},  {"topk:ratio=x", "ratio"},
        {"powersgd:rank=0", "rank"},          {"thc:bits=0", "1 to 8"},     {"thc:bits=9", "1 to 8"},
        {"topk:ef=2", "ef"},                  {"randk:seed=-1", "seed"},    {"", "empty"},
        {"powersgd:start=-1", "start"},       {"powersgd:min_rate=-1", "min_rate"},
        {"powersgd-batched:min_rate=2", "rank, start, path, seed, ef"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tc_codec_spec s;
        tc_err err = {{0}};
        assert_int_equal(tc_codec_parse(bad[i].s, &s, &err), TC_EINVAL);
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].s, err.msg, bad[i].needle);
    }
    /* at create time: k > d, k = 0, rank 0, rank beyond the matrix, bits 0 or 9 */
    tc_codec_spec s;
    tc_codec *c = NULL;
    tc_err err = {{0}};
    tc_codec_defaults(TC_CODEC_TOPK, &s);
    s.ratio = 2;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "k = 200"));
    s.ratio = 0;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "k = 0"));
    tc_codec_defaults(TC_CODEC_POWERSGD_BATCHED, &s);
    s.rank = 0;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    s.rank = 11; /* 100 coordinates: a 10 x 10 matrix */
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "10 x 10"));
    s.rank = 10;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_OK);
    tc_codec_free(c);
    /* per-tensor: the rank is each tensor's min(rows, cols, rank) */
    tc_codec_defaults(TC_CODEC_POWERSGD, &s);
    s.rank = 0;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    s.rank = 11;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_OK);
    tc_codec_free(c);
    tc_codec_defaults(TC_CODEC_THC, &s);
    s.bits = 0;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    s.bits = 9;
    assert_int_equal(tc_codec_create(&s, 100, 2, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "bits"));
    tc_codec_defaults(TC_CODEC_FP32, &s);
    assert_int_equal(tc_codec_create(&s, 0, 2, &c, &err), TC_EINVAL);
    assert_null(c);
    double a, b;
    assert_int_equal(tc_codec_measure(&s, 100, 0, &a, &b, &err), TC_EINVAL);
}

static void measure_reports_codec_and_copy_rates(void **state)
{
    (void)state;
    for (int k = 0; k < TC_CODEC_COUNT; k++) {
        tc_codec_spec s;
        tc_codec_defaults((tc_codec_kind)k, &s);
        double enc = 0, copy = 0;
        tc_err err = {{0}};
        assert_int_equal(tc_codec_measure(&s, 1 << 14, 0.01, &enc, &copy, &err), TC_OK);
        assert_true(enc > 0 && copy > 0 && isfinite(enc) && isfinite(copy));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(casts_round_to_nearest_within_half_a_unit_in_the_last_place),
        cmocka_unit_test(int_quantization_errs_below_one_level_and_is_unbiased),
        cmocka_unit_test(integer_sums_decode_exactly_to_the_aggregate),
        cmocka_unit_test(thc_error_after_the_inverse_transform_is_bounded_and_unbiased),
        cmocka_unit_test(topk_keeps_exactly_the_k_largest_magnitudes),
        cmocka_unit_test(topk_aggregate_is_the_mean_of_every_workers_sparse_set),
        cmocka_unit_test(topk_shared_sends_every_workers_values_at_the_leaders_indices),
        cmocka_unit_test(randk_sends_k_coordinates_chosen_by_the_shared_seed),
        cmocka_unit_test(signsgd_decodes_each_sign_times_the_mean_magnitude),
        cmocka_unit_test(powersgd_recovers_a_low_rank_bucket_after_warm_started_steps),
        cmocka_unit_test(error_feedback_recovers_the_full_signal_over_steps),
        cmocka_unit_test(aggregate_is_deterministic_and_leaves_the_gradients_alone),
        cmocka_unit_test(wire_cost_widens_integer_sums_and_grows_all_gathers_with_n),
        cmocka_unit_test(send_bytes_pack_integers_without_room_for_a_sum),
        cmocka_unit_test(roofline_is_memory_bound_except_where_compute_caps_it),
        cmocka_unit_test(parse_gives_canonical_names_and_defaults),
        cmocka_unit_test(bad_input_is_refused_with_a_message),
        cmocka_unit_test(measure_reports_codec_and_copy_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
