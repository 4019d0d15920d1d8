/* test_powersgd.c - per-tensor PowerSGD as PyTorch's powerSGD_hook
 * (torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py, v1.13.1)
 * and the batched variant: the compression test on edge shapes, the data
 * path on real buffers (uncompressed tensors exactly averaged, full-rank
 * tensors recovered, every decoded tensor a projection of the mean), the
 * error-feedback bookkeeping, the plain all-reduce steps before `start`, and
 * the wire bytes of ResNet-18 and ResNet-50 against a hand computation from
 * their layer shapes. */
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
#include "topocc/workload.h"

static tc_codec *make_shaped(const char *s, const tc_codec_tensor *t, size_t nt, uint32_t n)
{
    tc_codec_spec c = spec_of(s);
    tc_codec *k = NULL;
    tc_err err = {{0}};
    if (tc_codec_create_shaped(&c, t, nt, n, &k, &err) != TC_OK)
        fail_msg("create %s: %s", s, err.msg);
    return k;
}

static uint64_t numel(const tc_codec_tensor *t, size_t nt)
{
    uint64_t d = 0;
    for (size_t i = 0; i < nt; i++)
        d += t[i].rows * t[i].cols;
    return d;
}

/* n workers' gradients of d floats (freed with free_grads) */
static float **grads_of(uint64_t d, uint32_t n, uint64_t seed)
{
    float **g = calloc(n, sizeof *g);
    assert_non_null(g);
    for (uint32_t w = 0; w < n; w++) {
        g[w] = malloc(d * sizeof **g);
        assert_non_null(g[w]);
        tc_cx_fill_gradient(g[w], d, seed + w);
    }
    return g;
}

static void free_grads(float **g, uint32_t n)
{
    for (uint32_t w = 0; w < n; w++)
        free(g[w]);
    free(g);
}

static void aggregate(tc_codec *c, float **g, float *out, uint64_t step)
{
    tc_err err = {{0}};
    assert_int_equal(tc_codec_aggregate(c, (const float *const *)g, out, step, &err), TC_OK);
}

/* The hook's uncompressed path: all-reduce (sum in worker order), then
 * div_(world_size). */
static float exact_mean(float **g, uint32_t n, uint64_t i)
{
    float s = g[0][i];
    for (uint32_t w = 1; w < n; w++)
        s += g[w][i];
    return s / (float)n;
}

/* ---- the compression test ---- */

static void compression_test_is_the_hooks_should_compress_on_edge_shapes(void **state)
{
    (void)state;
    tc_codec_spec r2 = spec_of("powersgd:rank=2"), r4 = spec_of("powersgd:rank=4");
    tc_codec_spec r32 = spec_of("powersgd:rank=32"), m0 = spec_of("powersgd:rank=4,min_rate=0");
    /* a 1-D tensor of length L is L x 1: r' = 1, (L + 1) 2 < L never holds */
    const uint64_t lengths[5] = {1, 2, 3, 1000, 1000000000};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tc_codec_powersgd_rank(&r2, lengths[i], 1), 0);
        assert_int_equal(tc_codec_powersgd_rank(&r32, 1, lengths[i]), 0);
    }
    /* the boundary is strict: 8 x 8 at rank 2 is (8 + 8) 2 2 = 64 = 8 8 */
    assert_int_equal(tc_codec_powersgd_rank(&r2, 8, 8), 0);
    assert_int_equal(tc_codec_powersgd_rank(&r2, 8, 9), 2); /* 68 < 72 */
    assert_int_equal(tc_codec_powersgd_rank(&r2, 9, 9), 2); /* 72 < 81 */
    assert_int_equal(tc_codec_powersgd_rank(&r4, 16, 16), 0); /* 256 = 256 */
    assert_int_equal(tc_codec_powersgd_rank(&r4, 16, 17), 4);
    /* the rank is clamped to the smaller side before the test */
    assert_int_equal(tc_codec_powersgd_rank(&r4, 3, 1000), 0);   /* r' = 3: 6018 > 3000 */
    assert_int_equal(tc_codec_powersgd_rank(&r32, 16, 1000), 0); /* r' = 16: 32512 > 16000 */
    assert_int_equal(tc_codec_powersgd_rank(&r32, 100, 1000), 32); /* 70400 < 100000 */
    /* min_rate = 0 compresses every tensor, at full rank if it must */
    assert_int_equal(tc_codec_powersgd_rank(&m0, 7, 1), 1);
    assert_int_equal(tc_codec_powersgd_rank(&m0, 3, 5), 3);
    /* ResNet's 7 x 7 stem (64 x 147) and the classifier (1000 x 512) compress;
     * the classifier's bias does not */
    assert_int_equal(tc_codec_powersgd_rank(&r2, 64, 147), 2);
    assert_int_equal(tc_codec_powersgd_rank(&r2, 1000, 512), 2);
    assert_int_equal(tc_codec_powersgd_rank(&r2, 1000, 1), 0);
    /* rows and cols play the same part */
    for (uint64_t a = 1; a < 40; a++)
        for (uint64_t b = 1; b < 40; b++)
            assert_int_equal(tc_codec_powersgd_rank(&r4, a, b), tc_codec_powersgd_rank(&r4, b, a));
}

/* ---- the data path ---- */

static void uncompressed_tensors_get_the_exact_mean_and_the_others_do_not(void **state)
{
    (void)state;
    /* a bias, the stem, a small matrix (13 x 2 x 2 = 52 > 30), a 5 x 5 */
    const tc_codec_tensor t[4] = {{64, 1}, {64, 147}, {10, 3}, {5, 5}};
    const uint64_t d = numel(t, 4);
    const uint32_t n = 3;
    float **g = grads_of(d, n, 11), *out = malloc(d * sizeof *out);
    tc_codec *c = make_shaped("powersgd:rank=2,start=0,ef=0", t, 4, n);
    aggregate(c, g, out, 0);
    uint64_t off = 0, differ = 0;
    for (int k = 0; k < 4; k++) {
        bool compressed = k == 1;
        for (uint64_t i = off; i < off + t[k].rows * t[k].cols; i++) {
            if (!compressed && out[i] != exact_mean(g, n, i))
                fail_msg("tensor %d, coordinate %llu: %.9g, the mean is %.9g", k, (unsigned long long)i, out[i],
                         exact_mean(g, n, i));
            differ += compressed && out[i] != exact_mean(g, n, i);
        }
        off += t[k].rows * t[k].cols;
    }
    assert_true(differ > 64 * 147 / 2); /* a rank-2 approximation of a random matrix */
    tc_codec_free(c);
    free_grads(g, n);
    free(out);
}

/* With min_rate = 0 a tensor whose smaller side is at most the rank is
 * compressed at full rank: P spans the mean's columns, so P P^T M = M. */
static void full_rank_tensors_are_recovered_exactly(void **state)
{
    (void)state;
    /* r' = 6 (QR), 2 (Gram-Schmidt), 1 (a 1-D tensor as 7 x 1), 6 (wide) */
    const tc_codec_tensor t[4] = {{30, 6}, {20, 2}, {7, 1}, {6, 50}};
    const uint64_t d = numel(t, 4);
    const uint32_t n = 4;
    float **g = grads_of(d, n, 21), *out = malloc(d * sizeof *out);
    tc_codec *c = make_shaped("powersgd:rank=8,start=0,min_rate=0,ef=0", t, 4, n);
    for (uint64_t step = 0; step < 2; step++) {
        aggregate(c, g, out, step);
        double e = 0, s = 0;
        for (uint64_t i = 0; i < d; i++) {
            double m = exact_mean(g, n, i);
            e += (out[i] - m) * (out[i] - m);
            s += m * m;
        }
        if (!(sqrt(e / s) < 1e-5))
            fail_msg("step %llu: relative error %g", (unsigned long long)step, sqrt(e / s));
    }
    tc_codec_free(c);
    free_grads(g, n);
    free(out);
}

/* Both hooks: memory_w = (g_w + memory_w) - the decoded mean, on every
 * coordinate, the uncompressed tensors included. */
static void error_feedback_keeps_each_workers_input_minus_the_mean(void **state)
{
    (void)state;
    const tc_codec_tensor t[3] = {{32, 1}, {32, 48}, {4, 4}};
    const uint64_t d = numel(t, 3);
    const uint32_t n = 3;
    float **g = grads_of(d, n, 31), *out = malloc(d * sizeof *out);
    float *prev = calloc((size_t)n * d, sizeof *prev);
    tc_codec *c = make_shaped("powersgd:rank=2,start=0", t, 3, n);
    for (uint64_t step = 0; step < 3; step++) {
        aggregate(c, g, out, step);
        for (uint32_t w = 0; w < n; w++) {
            const float *m = tc_codec_memory(c, w);
            assert_non_null(m);
            for (uint64_t i = 0; i < d; i++) {
                float want = (prev[w * d + i] + g[w][i]) - out[i];
                if (m[i] != want)
                    fail_msg("step %llu, worker %u, coordinate %llu: memory %.9g, expected %.9g",
                             (unsigned long long)step, w, (unsigned long long)i, m[i], want);
                prev[w * d + i] = m[i];
            }
        }
        /* the memories of an exactly averaged coordinate sum to (about) 0 */
        for (uint64_t i = 0; i < 32; i++) {
            double s = 0;
            for (uint32_t w = 0; w < n; w++)
                s += prev[w * d + i];
            assert_true(fabs(s) < 1e-5);
        }
    }
    tc_codec_free(c);
    free_grads(g, n);
    free(out);
    free(prev);
}

/* The first `start` steps are the hook's vanilla all-reduce: fp32's mean
 * bit for bit, the memory untouched; compression starts at step `start`. */
static void steps_before_start_are_plain_all_reduces(void **state)
{
    (void)state;
    const tc_codec_tensor t[2] = {{40, 1}, {40, 60}};
    const uint64_t d = numel(t, 2);
    const uint32_t n = 4;
    float **g = grads_of(d, n, 41), *out = malloc(d * sizeof *out), *ref = malloc(d * sizeof *ref);
    tc_codec_spec f32 = spec_of("fp32");
    tc_codec *fp = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_codec_create(&f32, d, n, &fp, &err), TC_OK);
    const char *specs[2] = {"powersgd:rank=2,start=3", "powersgd-batched:rank=2,start=3"};
    for (int k = 0; k < 2; k++) {
        tc_codec_spec s = spec_of(specs[k]);
        tc_codec *c = make_shaped(specs[k], t, 2, n);
        for (uint64_t step = 0; step < 5; step++) {
            assert_int_equal(tc_codec_plain_step(&s, step), step < 3);
            aggregate(c, g, out, step);
            aggregate(fp, g, ref, step);
            bool same = memcmp(out, ref, d * sizeof *out) == 0;
            if (same != (step < 3))
                fail_msg("%s step %llu: %s fp32's mean", specs[k], (unsigned long long)step,
                         same ? "equals" : "differs from");
            double mem = 0;
            for (uint64_t i = 0; i < d; i++)
                mem += fabs(tc_codec_memory(c, 0)[i]);
            assert_true((mem == 0) == (step < 3));
        }
        tc_codec_free(c);
    }
    tc_codec_spec f = spec_of("fp32");
    assert_false(tc_codec_plain_step(&f, 0));
    tc_codec_free(fp);
    free_grads(g, n);
    free(out);
    free(ref);
}

/* Random buckets of random shapes, ranks and rates: the rank is the
 * formula's, the wire cost the sum over the tensors, the uncompressed
 * coordinates the exact mean, and every compressed tensor decodes to
 * P P^T M, an orthogonal projection of the mean M: no longer than M, and
 * off it by no more than M's length. */
static void random_shapes_keep_every_property(void **state)
{
    (void)state;
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    const double rates[4] = {0, 1, 2, 3.5};
    for (int trial = 0; trial < 60; trial++) {
        tc_codec_tensor t[6];
        size_t nt = 1 + (h = tc_mix64(h)) % 6;
        for (size_t i = 0; i < nt; i++) {
            t[i].rows = 1 + (h = tc_mix64(h)) % 40;
            t[i].cols = 1 + (h = tc_mix64(h)) % 40;
        }
        char spec[96];
        uint32_t rank = 1 + (uint32_t)((h = tc_mix64(h)) % 6);
        double rate = rates[(h = tc_mix64(h)) % 4];
        snprintf(spec, sizeof spec, "powersgd:rank=%u,start=0,min_rate=%g", rank, rate);
        tc_codec_spec s = spec_of(spec);
        double U = 0, P = 0, Q = 0;
        for (size_t i = 0; i < nt; i++) {
            uint64_t a = t[i].rows, b = t[i].cols, r = rank < a ? rank : a;
            r = r < b ? r : b;
            bool comp = (double)((a + b) * r) * rate < (double)(a * b);
            assert_int_equal(tc_codec_powersgd_rank(&s, a, b), comp ? r : 0);
            U += comp ? 0 : (double)(a * b);
            P += comp ? (double)(a * r) : 0;
            Q += comp ? (double)(b * r) : 0;
        }
        tc_codec_wire w;
        tc_codec_wire_cost_shaped(&s, t, nt, 8, &w);
        assert_int_equal(w.collectives, 3);
        assert_true(w.size[0] == 4 * U && w.size[1] == 4 * P && w.size[2] == 4 * Q);
        const uint64_t d = numel(t, nt);
        const uint32_t n = 2;
        float **g = grads_of(d, n, 100 + (uint64_t)trial), *out = malloc(d * sizeof *out);
        tc_codec *c = make_shaped(spec, t, nt, n);
        aggregate(c, g, out, 0);
        uint64_t off = 0;
        for (size_t i = 0; i < nt; i++) {
            uint64_t len = t[i].rows * t[i].cols;
            double m2 = 0, o2 = 0, e2 = 0;
            for (uint64_t j = off; j < off + len; j++) {
                double m = exact_mean(g, n, j);
                assert_true(isfinite(out[j]));
                if (!tc_codec_powersgd_rank(&s, t[i].rows, t[i].cols))
                    assert_true(out[j] == exact_mean(g, n, j));
                m2 += m * m;
                o2 += (double)out[j] * out[j];
                e2 += (out[j] - m) * (out[j] - m);
            }
            if (!(o2 <= m2 * (1 + 1e-4) + 1e-12 && e2 <= m2 * (1 + 1e-4) + 1e-12))
                fail_msg("%s, tensor %zu (%llu x %llu): |out|^2 %g, |mean|^2 %g, |error|^2 %g", spec, i,
                         (unsigned long long)t[i].rows, (unsigned long long)t[i].cols, o2, m2, e2);
            off += len;
        }
        tc_codec_free(c);
        free_grads(g, n);
        free(out);
    }
}

static void bad_shapes_are_refused(void **state)
{
    (void)state;
    tc_codec_spec s = spec_of("powersgd");
    tc_codec *c = NULL;
    tc_err err = {{0}};
    const tc_codec_tensor zero[2] = {{4, 4}, {0, 3}}, huge[1] = {{1u << 20, 1u << 13}};
    assert_int_equal(tc_codec_create_shaped(&s, zero, 2, 2, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "tensor 1"));
    assert_int_equal(tc_codec_create_shaped(&s, huge, 1, 2, &c, &err), TC_EINVAL);
    assert_int_equal(tc_codec_create_shaped(&s, NULL, 0, 2, &c, &err), TC_EINVAL);
    assert_null(c);
    /* other kinds see the coordinates only */
    s = spec_of("topk:ratio=0.1");
    const tc_codec_tensor ok[2] = {{10, 1}, {10, 9}};
    assert_int_equal(tc_codec_create_shaped(&s, ok, 2, 2, &c, &err), TC_OK);
    assert_int_equal(tc_codec_dim(c), 100);
    tc_codec_free(c);
}

/* ---- ResNet-18 and ResNet-50: the wire against a hand computation ---- */

/* The hand computation from the layer shapes (He et al. 2016, Table 1, as
 * torchvision builds them). Every convolution [out, in, k, k] and the
 * classifier [1000, c] are matrices out x (in k k) large enough to be
 * compressed at ranks 1 to 4 (the smallest is 64 x 64: (64 + 64) 4 2 <
 * 4096), so
 *   P = r sum(out),  Q = r sum(in k k),
 * and what is all-reduced as it is: each batch norm's weight and bias
 * (2 x its channels) and the classifier's bias (1000). One stage of a
 * ResNet adds these sums. */
typedef struct hand {
    double bn, rows, cols, params;
} hand;

static void hand_conv(hand *h, double in, double out, double k)
{
    h->bn += out;
    h->rows += out;
    h->cols += in * k * k;
    h->params += out * in * k * k + 2 * out;
}

static hand hand_resnet(bool bottleneck, const int blocks[4])
{
    hand h = {0, 0, 0, 0};
    hand_conv(&h, 3, 64, 7);
    double in = 64;
    for (int s = 0; s < 4; s++) {
        double w = 64 << s, out = bottleneck ? 4 * w : w;
        for (int i = 0; i < blocks[s]; i++) {
            if (bottleneck) {
                hand_conv(&h, in, w, 1);
                hand_conv(&h, w, w, 3);
                hand_conv(&h, w, out, 1);
            } else {
                hand_conv(&h, in, w, 3);
                hand_conv(&h, w, w, 3);
            }
            if (i == 0 && in != out)
                hand_conv(&h, in, out, 1); /* the projection shortcut */
            in = out;
        }
    }
    h.rows += 1000; /* fc [1000, c] */
    h.cols += in;
    h.params += 1000 * in + 1000;
    return h;
}

/* DDP's buckets of the tensors in reverse order, each closed once it holds
 * 25 MiB (compute_bucket_assignment_by_size); returns the count, bounds in
 * first[] (index of each bucket's first tensor in reverse order). */
static size_t ddp_buckets(const tc_codec_tensor *t, size_t nt, size_t *first, uint64_t *len)
{
    size_t nb = 0;
    uint64_t cur = 0;
    first[0] = 0;
    for (size_t k = 0; k < nt; k++) {
        cur += t[nt - 1 - k].rows * t[nt - 1 - k].cols;
        if (4 * cur >= 25u << 20 || k + 1 == nt) {
            len[nb++] = cur;
            first[nb] = k + 1;
            cur = 0;
        }
    }
    return nb;
}

static void resnet_wire_bytes_match_the_hand_computation(void **state)
{
    (void)state;
    static const int r18[4] = {2, 2, 2, 2}, r50[4] = {3, 4, 6, 3};
    /* Written out: ResNet-18 has 4,800 batch-norm channels (9,600 + 1,000
     * = 10,600 floats sent as they are), sum(out) = 5,800 and
     * sum(in k k) = 31,635 over its 21 matrices; ResNet-50 26,560 channels
     * (54,120 floats), 27,560 and 54,931 over 54 matrices. Compression
     * ratios d / (U + r (rows + cols)) against powersgd-batched's
     * d / sum over DDP's 25 MiB buckets of r (a + b): */
    struct {
        const char *model;
        double d, U, rows, cols, ratio[3], batched[3];
        uint64_t buckets[4];
    } m[2] = {{"resnet18", 11689512, 10600, 5800, 31635, {243.35, 136.77, 72.90}, {1225.1, 612.5, 306.3},
               {7726056, 3963456, 0, 0}},
              {"resnet50", 25557032, 54120, 27560, 54931, {187.08, 116.64, 66.54}, {1270.4, 635.2, 317.6},
               {7564264, 6563840, 7091712, 4337216}}};
    for (int k = 0; k < 2; k++) {
        hand h = hand_resnet(k == 1, k == 0 ? r18 : r50);
        assert_true(h.params == m[k].d && 2 * h.bn + 1000 == m[k].U && h.rows == m[k].rows && h.cols == m[k].cols);
        tc_model md;
        memset(&md, 0, sizeof md);
        snprintf(md.name, sizeof md.name, "%s", m[k].model);
        tc_codec_tensor *t = NULL;
        size_t nt = 0;
        tc_err err = {{0}};
        assert_int_equal(tc_model_tensors(&md, &t, &nt, &err), TC_OK);
        assert_true((double)numel(t, nt) == m[k].d);
        size_t first[64];
        uint64_t len[64];
        size_t nb = ddp_buckets(t, nt, first, len);
        for (size_t b = 0; b < nb; b++)
            assert_true(len[b] == m[k].buckets[b]);
        for (uint32_t r = 1, i = 0; r <= 4; r *= 2, i++) {
            char spec[64];
            snprintf(spec, sizeof spec, "powersgd:rank=%u", r);
            tc_codec_spec ps = spec_of(spec);
            snprintf(spec, sizeof spec, "powersgd-batched:rank=%u", r);
            tc_codec_spec pb = spec_of(spec);
            /* per tensor: the whole model at once and bucket by bucket */
            tc_codec_wire w;
            tc_codec_wire_cost_shaped(&ps, t, nt, 64, &w);
            assert_true(w.size[0] == 4 * m[k].U && w.size[1] == 4 * r * m[k].rows && w.size[2] == 4 * r * m[k].cols);
            double per = 0, bat = 0, hand_bat = 0;
            tc_codec_tensor rev[256];
            for (size_t b = 0; b < nb; b++) {
                size_t cnt = first[b + 1] - first[b];
                for (size_t q = 0; q < cnt; q++) /* the bucket's tensors, in memory order */
                    rev[q] = t[nt - first[b + 1] + q];
                tc_codec_wire_cost_shaped(&ps, rev, cnt, 64, &w);
                per += w.size[0] + w.size[1] + w.size[2];
                tc_codec_wire_cost_shaped(&pb, rev, cnt, 64, &w);
                assert_int_equal(w.collectives, 2);
                bat += w.size[0] + w.size[1];
                uint64_t a, bb;
                tc_cx_psgd_shape(len[b], &a, &bb);
                hand_bat += 4.0 * r * (double)(a + bb);
            }
            double hand_per = 4 * (m[k].U + r * (m[k].rows + m[k].cols));
            assert_true(per == hand_per && bat == hand_bat);
            double cr = 4 * m[k].d / per, cb = 4 * m[k].d / bat;
            if (fabs(cr - m[k].ratio[i]) > 0.01 || fabs(cb - m[k].batched[i]) > 0.1)
                fail_msg("%s rank %u: %.2fx per tensor (hand %.2fx), %.1fx batched (hand %.1fx)", m[k].model, r, cr,
                         m[k].ratio[i], cb, m[k].batched[i]);
            /* the batched hook understates the bytes several-fold */
            assert_true(cb / cr > 4);
        }
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compression_test_is_the_hooks_should_compress_on_edge_shapes),
        cmocka_unit_test(uncompressed_tensors_get_the_exact_mean_and_the_others_do_not),
        cmocka_unit_test(full_rank_tensors_are_recovered_exactly),
        cmocka_unit_test(error_feedback_keeps_each_workers_input_minus_the_mean),
        cmocka_unit_test(steps_before_start_are_plain_all_reduces),
        cmocka_unit_test(random_shapes_keep_every_property),
        cmocka_unit_test(bad_shapes_are_refused),
        cmocka_unit_test(resnet_wire_bytes_match_the_hand_computation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
