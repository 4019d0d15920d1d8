/*
 * thc.c - THC, tensor homomorphic compression [Li, Ben Basat, Vargaftik et
 * al., "THC: Accelerating Distributed Deep Learning Using Tensor
 * Homomorphic Compression", NSDI 2024]: every worker applies the same
 * randomized Hadamard transform, quantizes stochastically to b-bit table
 * indices on a shared scale, and the all-reduce sums table values as
 * integers; the mean is decoded from the sum and transformed back.
 *
 * Model:
 *   - the bucket is cut into chunks of THC_CHUNK (a power of two) coordinates;
 *     the last chunk is zero-padded to the next power of two, so the wire
 *     carries dpad >= d coordinates;
 *   - R = H D / sqrt(C) per chunk: D random signs from (seed, step), shared
 *     by all workers; H the C x C Walsh-Hadamard matrix, applied by the fast
 *     transform in C log2 C additions. R is orthonormal, so the error the
 *     quantization makes in the rotated domain has the same L2 norm after the
 *     inverse, and the rotation spreads a few large coordinates over all;
 *   - M = max over workers of max |R x_w| (an all-reduce(max) of one float);
 *   - indices j in 0..L-1 (L = 2^b) stand for levels -M + 2 M j / (L - 1);
 *     y is rounded stochastically to one of its two neighbouring levels
 *     (unbiased), error per rotated coordinate < 2 M / (L - 1);
 *   - the table is THC's uniform one (table value = index), whose sums are
 *     the narrowest: b + ceil(log2 n) bits. THC's optimised non-uniform tables
 *     lower the error for the same b but widen the summed values; not modelled.
 *     Indices are carried centred (j - 2^(b-1)) so that they fit int8 at b = 8.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compress/codec_int.h"

#define THC_CHUNK 65536u /* 256 KiB of floats: one chunk's transform stays in L2 */
#define PURPOSE_SIGNS 2
#define PURPOSE_ROUND 3

static const uint32_t bit_of[32] = {
    1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,  1u << 8,  1u << 9,  1u << 10,
    1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21,
    1u << 22, 1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

static uint64_t pow2_ceil(uint64_t v)
{
    uint64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

uint64_t tc_cx_thc_dpad(uint64_t d, uint64_t *chunk)
{
    uint64_t C = d >= THC_CHUNK ? THC_CHUNK : pow2_ceil(d);
    uint64_t full = d / C, tail = d - full * C;
    if (chunk)
        *chunk = C;
    return full * C + (tail ? pow2_ceil(tail) : 0);
}

/* one radix-2 stage on two halves, h a multiple of CX_VEC */
CX_WIDE static void stage2(float *restrict x0, float *restrict x1, uint64_t h)
{
    CX_LOOP(j, h, float a = x0[j]; float b = x1[j]; x0[j] = a + b; x1[j] = a - b);
}

/* two stages at once on four quarters */
CX_WIDE static void stage4(float *restrict x0, float *restrict x1, float *restrict x2, float *restrict x3, uint64_t h)
{
    CX_LOOP(j, h, float a = x0[j]; float b = x1[j]; float c = x2[j]; float e = x3[j];
            float s0 = a + b; float d0 = a - b; float s1 = c + e; float d1 = c - e;
            x0[j] = s0 + s1; x1[j] = d0 + d1; x2[j] = s0 - s1; x3[j] = d0 - d1);
}

/* three stages at once on eight parts */
CX_WIDE static void stage8(float *restrict x0, float *restrict x1, float *restrict x2, float *restrict x3,
                           float *restrict x4, float *restrict x5, float *restrict x6, float *restrict x7, uint64_t h)
{
    CX_LOOP(j, h, float a0 = x0[j] + x1[j]; float a1 = x0[j] - x1[j]; float a2 = x2[j] + x3[j];
            float a3 = x2[j] - x3[j]; float a4 = x4[j] + x5[j]; float a5 = x4[j] - x5[j]; float a6 = x6[j] + x7[j];
            float a7 = x6[j] - x7[j]; float b0 = a0 + a2; float b1 = a1 + a3; float b2 = a0 - a2; float b3 = a1 - a3;
            float b4 = a4 + a6; float b5 = a5 + a7; float b6 = a4 - a6; float b7 = a5 - a7; x0[j] = b0 + b4;
            x1[j] = b1 + b5; x2[j] = b2 + b6; x3[j] = b3 + b7; x4[j] = b0 - b4; x5[j] = b1 - b5; x6[j] = b2 - b6;
            x7[j] = b3 - b7);
}

/* The first four stages (h = 1, 2, 4, 8) stay inside blocks of 16: two
 * radix-4 passes, h = 1 and 2 on each group of 4, then h = 4 and 8 on the
 * four groups of each block. Each output is the same two sums in the same
 * order as the radix-2 stages', so the result is theirs bit for bit. GCC
 * vectorizes the first at the machine's full width and the second 4 lanes
 * at a time on every x86 level; a block of 16 as one register's permutes,
 * as these stages were written before, ran as one 16-lane register on
 * AVX-512 but as scalar code on 8-lane units. */
CX_WIDE static void small_stages_12(float *restrict x, uint64_t n)
{
    CX_LOOP(j, n / 4, float a = x[4 * j]; float b = x[4 * j + 1]; float c = x[4 * j + 2]; float e = x[4 * j + 3];
            float s0 = a + b; float d0 = a - b; float s1 = c + e; float d1 = c - e; x[4 * j] = s0 + s1;
            x[4 * j + 1] = d0 + d1; x[4 * j + 2] = s0 - s1; x[4 * j + 3] = d0 - d1);
}

CX_WIDE static void small_stages_48(float *restrict x, uint64_t n)
{
    for (uint64_t b = 0; b < n; b += 16)
        for (int l = 0; l < 4; l++) {
            float a = x[b + l], c = x[b + 4 + l], e = x[b + 8 + l], f = x[b + 12 + l];
            float s0 = a + c, d0 = a - c, s1 = e + f, d1 = e - f;
            x[b + l] = s0 + s1;
            x[b + 4 + l] = d0 + d1;
            x[b + 8 + l] = s0 - s1;
            x[b + 12 + l] = d0 - d1;
        }
}

void tc_cx_fwht(float *x, uint64_t n)
{
    uint64_t h = 1;
    if (n >= 16) {
        small_stages_12(x, n);
        small_stages_48(x, n);
        h = 16;
    }
    /* radix 8, then 4, where they fit: fewer passes over memory */
    for (; 8 * h <= n; h *= 8)
        for (uint64_t i = 0; i < n; i += 8 * h)
            stage8(x + i, x + i + h, x + i + 2 * h, x + i + 3 * h, x + i + 4 * h, x + i + 5 * h, x + i + 6 * h,
                   x + i + 7 * h, h);
    for (; 4 * h <= n; h *= 4)
        for (uint64_t i = 0; i < n; i += 4 * h)
            stage4(x + i, x + i + h, x + i + 2 * h, x + i + 3 * h, h);
    for (; h < n; h *= 2)
        for (uint64_t i = 0; i < n; i += 2 * h)
            stage2(x + i, x + i + h, h);
}

/* Length of the chunk that starts at i0. */
static uint64_t chunk_len(const tc_codec *c, uint64_t i0)
{
    return c->dpad - i0 < c->chunk ? c->dpad - i0 : c->chunk;
}

/* dst[t] = src[t] mul with its sign flipped where bit t of bits is set */
static inline void flip32(const float *restrict src, float *restrict dst, uint32_t bits, float mul)
{
    for (int t = 0; t < 32; t++)
        dst[t] = cx_bitsf(cx_fbits(src[t] * mul) ^ (cx_mask(bits & bit_of[t]) & 0x80000000u));
}


/* dst[i] = D_i src[i] mul for global coordinates i0 .. i0+m-1 (src and dst
 * distinct). D's signs are the bits of one 64-bit mix per 32 coordinates. */
CX_WIDE static void apply_signs(uint64_t key, const float *restrict src, float *restrict dst, uint64_t i0, uint64_t m, float mul)
{
    uint64_t i = 0;
    while (i < m) {
        uint64_t g = i0 + i, word = g >> 5;
        uint32_t bits = (uint32_t)(tc_mix64(key + word) >> 16);
        uint64_t t0 = g & 31, len = 32 - t0 < m - i ? 32 - t0 : m - i;
        if (t0 == 0 && len == 32) {
            flip32(src + i, dst + i, bits, mul);
        } else {
            for (uint64_t t = 0; t < len; t++) {
                uint32_t flip = (bits & bit_of[t0 + t]) ? 0x80000000u : 0u;
                dst[i + t] = cx_bitsf(cx_fbits(src[i + t] * mul) ^ flip);
            }
        }
        i += len;
    }
}

/* y (dpad) = R [x; 0] */
static void rht(const tc_codec *c, const float *x, float *y, uint64_t step)
{
    uint64_t key = cx_key(c->spec.seed, step, 0, PURPOSE_SIGNS);
    for (uint64_t i0 = 0; i0 < c->dpad; i0 += c->chunk) {
        uint64_t len = chunk_len(c, i0);
        uint64_t live = i0 >= c->d ? 0 : (c->d - i0 < len ? c->d - i0 : len);
        apply_signs(key, x + i0, y + i0, i0, live, 1.0f / sqrtf((float)len));
        for (uint64_t i = live; i < len; i++)
            y[i0 + i] = 0;
        tc_cx_fwht(y + i0, len);
    }
}

/* x (d) = the first d coordinates of R^T y; y (dpad) is overwritten. */
static void irht(const tc_codec *c, float *y, float *x, uint64_t step)
{
    uint64_t key = cx_key(c->spec.seed, step, 0, PURPOSE_SIGNS);
    for (uint64_t i0 = 0; i0 < c->dpad; i0 += c->chunk) {
        uint64_t len = chunk_len(c, i0);
        uint64_t live = i0 >= c->d ? 0 : (c->d - i0 < len ? c->d - i0 : len);
        tc_cx_fwht(y + i0, len);
        apply_signs(key, y + i0, x + i0, i0, live, 1.0f / sqrtf((float)len));
    }
}

float tc_cx_thc_scale(tc_codec *c, const float *const *x, uint64_t step)
{
    float s = 0;
    for (uint32_t w = 0; w < c->n; w++) {
        rht(c, x[w], c->rot, step);
        float m = tc_cx_max_abs(c->rot, c->dpad);
        s = m > s ? m : s;
    }
    return s;
}

/* y -> centred indices: v = y (L-1)/(2M) - 1/2 in [-2^(b-1), 2^(b-1) - 1] */
static void thc_quant(const tc_codec *c, const float *y, float s, uint64_t step, uint32_t w, int8_t *q, uint64_t m,
                      cx_lanes *r)
{
    (void)step, (void)w;
    float L1 = (float)c->qmax, h = (float)(1u << (c->spec.bits - 1));
    float mul = s > 0 ? L1 / (2 * s) : 0;
    tc_cx_sround_block(y, m, mul, -0.5f, -h, h - 1, r, q);
}

/* levels: y = q 2M/((L-1) count) + M/(L-1) for the sum q of count centred indices */
static void thc_levels(const tc_codec *c, const int32_t *sum, uint32_t count, float s, float *y, uint64_t m)
{
    float L1 = (float)c->qmax;
    tc_cx_dequant(sum, 2 * s / (L1 * (float)count), s / L1, y, m);
}

CX_WIDE static void subtract(float *restrict e, const float *restrict v, uint64_t d)
{
    CX_LOOP(i, d, e[i] -= v[i]);
}

CX_WIDE static void levels8(const int8_t *restrict q, float mul, float add, float *restrict y, uint64_t m)
{
    CX_LOOP(i, m, y[i] = (float)q[i] * mul + add);
}

void tc_cx_thc_encode(tc_codec *c, const float *x, float *e, float s, uint64_t step, uint32_t w, int8_t *q)
{
    cx_lanes r;
    tc_cx_lanes_seed(&r, cx_key(c->spec.seed, step, w, PURPOSE_ROUND));
    rht(c, x, c->rot, step);
    thc_quant(c, c->rot, s, step, w, q, c->dpad, &r);
    if (!e)
        return;
    /* own contribution decoded: levels of q, back through R^T */
    float L1 = (float)c->qmax;
    levels8(q, 2 * s / L1, s / L1, c->rot, c->dpad);
    float *xh = c->facc;
    irht(c, c->rot, xh, step);
    subtract(e, xh, c->d);
}

void tc_cx_thc_decode(tc_codec *c, const int32_t *sum, uint32_t count, float s, uint64_t step, float *out)
{
    thc_levels(c, sum, count, s, c->rot, c->dpad);
    irht(c, c->rot, out, step);
}

static tc_status thc_init(tc_codec *c, tc_err *err)
{
    if (c->spec.bits < 1 || c->spec.bits > 8)
        return tc_fail(err, TC_EINVAL, "thc: bits=%u is out of range: accepted are 1 to 8", c->spec.bits);
    c->qmax = (1u << c->spec.bits) - 1;
    c->dpad = tc_cx_thc_dpad(c->d, &c->chunk);
    c->rot = tc_calloc(c->dpad, sizeof *c->rot);
    c->q8 = tc_calloc(c->dpad, 1);
    c->acc = tc_calloc(c->dpad, sizeof *c->acc);
    c->facc = c->ef ? tc_calloc(c->d, sizeof *c->facc) : NULL;
    if (!c->rot || !c->q8 || !c->acc || (c->ef && !c->facc))
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    return TC_OK;
}

/* Measured path: transform, max, then per chunk: quantize, integer sum of one
 * contribution, levels, inverse transform. */
static void thc_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    rht(c, x, c->rot, step);
    float s = tc_cx_max_abs(c->rot, c->dpad);
    cx_lanes r;
    tc_cx_lanes_seed(&r, cx_key(c->spec.seed, step, 0, PURPOSE_ROUND));
    uint64_t key = cx_key(c->spec.seed, step, 0, PURPOSE_SIGNS);
    for (uint64_t i0 = 0; i0 < c->dpad; i0 += c->chunk) {
        uint64_t len = chunk_len(c, i0);
        uint64_t live = i0 >= c->d ? 0 : (c->d - i0 < len ? c->d - i0 : len);
        thc_quant(c, c->rot + i0, s, step, 0, c->q8, len, &r);
        tc_cx_widen(c->q8, c->acc, len, true);
        thc_levels(c, c->acc, c->n, s, c->rot + i0, len);
        tc_cx_fwht(c->rot + i0, len);
        apply_signs(key, c->rot + i0, out + i0, i0, live, 1.0f / sqrtf((float)len));
    }
}

const cx_ops tc_cx_thc_ops = {thc_init, tc_cx_int_aggregate, thc_one};
