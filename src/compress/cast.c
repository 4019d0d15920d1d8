/*
 * cast.c - fp32, fp16 and bf16: the identity and the two 16-bit casts, the
 * baselines every compressed scheme must beat (Han et al., HotNets 2024).
 *
 * Model, after PyTorch DDP's allreduce_hook and fp16_compress_hook /
 * bf16_compress_hook (torch/distributed/algorithms/ddp_comm_hooks/
 * default_hooks.py): each worker divides its bucket by n, casts it to 16 bits
 * (round to nearest even), the all-reduce sums the contributions, and the
 * result is cast back to fp32. We sum the decoded 16-bit values exactly in
 * fp32 and round the sum once to 16 bits (the all-gather half of a ring
 * all-reduce carries the reduced values in 16 bits); NCCL rounds every
 * partial sum to 16 bits along the ring, (n - 1) more roundings of relative
 * size 2^-11 (fp16) or 2^-8 (bf16) that we do not model. fp32 divides by n and
 * sums in fp32.
 *
 * The conversions are branch-free integer code so that they vectorise
 * without F16C [after F. Giesen, "float->half variants", 2012].
 */
#include <math.h>
#include "compress/codec_int.h"

/* binary32 -> binary16, round to nearest even; overflow -> inf, NaN -> qNaN. */
static inline uint16_t f32_to_f16(float f)
{
    uint32_t u = cx_fbits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    int32_t a = (int32_t)(u & 0x7fffffffu);
    /* subnormal halves (|f| < 2^-14): let the FPU round, adding 0.5 shifts
     * the value into a float whose low mantissa bits are the half */
    float sub = cx_bitsf((uint32_t)a) + 0.5f;
    uint32_t hs = cx_fbits(sub) - 0x3f000000u;
    /* normal: rebias the exponent and round the 13 dropped bits to even */
    uint32_t odd = ((uint32_t)a >> 13) & 1u;
    uint32_t hn = ((uint32_t)a + 0xc8000fffu + odd) >> 13; /* (15 - 127) << 23 + 0xfff */
    uint32_t h = cx_sel(cx_mask(a < 0x38800000), hs, hn);
    h = cx_sel(cx_mask(a >= 0x477ff000), 0x7c00u, h); /* rounds to >= 65520: infinity */
    h = cx_sel(cx_mask(a > 0x7f800000), 0x7e00u, h);  /* NaN */
    return (uint16_t)(h | sign);
}

/* binary16 -> binary32 (exact). */
static inline float f16_to_f32(uint16_t h16)
{
    uint32_t h = h16;
    uint32_t e = h & 0x7c00u, m = h & 0x03ffu;
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t normal = ((e + 0x1c000u) << 13) | (m << 13); /* rebias 15 -> 127 */
    uint32_t special = 0x7f800000u | (m << 13);            /* inf, NaN */
    /* subnormal: m * 2^-24, exact in float */
    uint32_t sub = cx_fbits((float)(int32_t)m * 0x1p-24f);
    uint32_t o = cx_sel(cx_mask(e == 0x7c00u), special, normal);
    o = cx_sel(cx_mask(e == 0), sub, o);
    return cx_bitsf(o | sign);
}

/* binary32 -> bfloat16, round to nearest even; NaN stays a quiet NaN. */
static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = cx_fbits(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x40u;
    return (uint16_t)cx_sel(cx_mask((u & 0x7fffffffu) > 0x7f800000u), nan, r);
}

static inline float bf16_to_f32(uint16_t h)
{
    return cx_bitsf((uint32_t)h << 16);
}

#if defined(__x86_64__)
#include <immintrin.h>
/* x86's F16C conversions (vcvtps2ph, vcvtph2ps) round to nearest even like
 * the portable code above and handle subnormals and infinities the same way;
 * GCC 12 does not vectorise _Float16 conversions by itself. */
__attribute__((target("avx,f16c"))) static void to_f16_f16c(const float *restrict x, float mul,
                                                             uint16_t *restrict h, uint64_t d)
{
    __m256 m = _mm256_set1_ps(mul);
    uint64_t i = 0;
    for (; i + 8 <= d; i += 8)
        _mm_storeu_si128((__m128i *)(h + i),
                         _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(x + i), m), _MM_FROUND_TO_NEAREST_INT));
    for (; i < d; i++)
        h[i] = f32_to_f16(x[i] * mul);
}

__attribute__((target("avx,f16c"))) static void from_f16_f16c(const uint16_t *restrict h, float *restrict x,
                                                               uint64_t d)
{
    uint64_t i = 0;
    for (; i + 8 <= d; i += 8)
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    for (; i < d; i++)
        x[i] = f16_to_f32(h[i]);
}

static bool have_f16c(void)
{
    static int have = -1; /* the answer never changes; a benign race */
    if (have < 0)
        have = cx_cpu_f16c();
    return have;
}
#endif

CX_WIDE static void to_f16_portable(const float *restrict x, float mul, uint16_t *restrict h, uint64_t d)
{
    CX_LOOP(i, d, h[i] = f32_to_f16(x[i] * mul));
}

CX_WIDE static void from_f16_portable(const uint16_t *restrict h, float *restrict x, uint64_t d)
{
    CX_LOOP(i, d, x[i] = f16_to_f32(h[i]));
}

void tc_cx_to_f16(const float *restrict x, float mul, uint16_t *restrict h, uint64_t d)
{
#if defined(__x86_64__)
    if (have_f16c()) {
        to_f16_f16c(x, mul, h, d);
        return;
    }
#endif
    to_f16_portable(x, mul, h, d);
}

void tc_cx_from_f16(const uint16_t *restrict h, float *restrict x, uint64_t d)
{
#if defined(__x86_64__)
    if (have_f16c()) {
        from_f16_f16c(h, x, d);
        return;
    }
#endif
    from_f16_portable(h, x, d);
}

CX_WIDE void tc_cx_to_bf16(const float *restrict x, float mul, uint16_t *restrict h, uint64_t d)
{
    CX_LOOP(i, d, h[i] = f32_to_bf16(x[i] * mul));
}

CX_WIDE void tc_cx_from_bf16(const uint16_t *restrict h, float *restrict x, uint64_t d)
{
    CX_LOOP(i, d, x[i] = bf16_to_f32(h[i]));
}

/* acc (+)= decoded 16-bit values */
CX_WIDE static void add_16(bool bf, const uint16_t *restrict h, float *restrict acc, uint64_t d, bool first)
{
    if (first && bf)
        tc_cx_from_bf16(h, acc, d);
    else if (first)
        tc_cx_from_f16(h, acc, d);
    else if (bf)
        CX_LOOP(i, d, acc[i] += bf16_to_f32(h[i]));
    else
        CX_LOOP(i, d, acc[i] += f16_to_f32(h[i]));
}

/* out = the 16-bit rounding of the fp32 sum */
CX_WIDE static void round_16(bool bf, const float *restrict acc, float *restrict out, uint64_t d)
{
    if (bf)
        CX_LOOP(i, d, out[i] = bf16_to_f32(f32_to_bf16(acc[i])));
    else
        CX_LOOP(i, d, out[i] = f16_to_f32(f32_to_f16(acc[i])));
}

/* e (holding the input) -= n * decoded(cast(e / n)): what this worker's
 * contribution missed */
CX_WIDE static void residual_16(bool bf, float *restrict e, const uint16_t *restrict h, float n, uint64_t d)
{
    if (bf)
        CX_LOOP(i, d, e[i] -= n * bf16_to_f32(h[i]));
    else
        CX_LOOP(i, d, e[i] -= n * f16_to_f32(h[i]));
}

CX_WIDE static void scale_copy(const float *restrict x, float mul, float *restrict out, uint64_t d)
{
    CX_LOOP(i, d, out[i] = x[i] * mul);
}

CX_WIDE static void scale_inplace(float *restrict x, float mul, uint64_t d)
{
    CX_LOOP(i, d, x[i] *= mul);
}

CX_WIDE static void scale_add(const float *restrict x, float mul, float *restrict out, uint64_t d)
{
    CX_LOOP(i, d, out[i] += x[i] * mul);
}

static tc_status cast_init(tc_codec *c, tc_err *err)
{
    if (c->spec.kind == TC_CODEC_FP32)
        return TC_OK;
    c->h16 = tc_calloc(c->d, sizeof *c->h16);
    c->facc = tc_calloc(c->d, sizeof *c->facc);
    if (!c->h16 || !c->facc)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    return TC_OK;
}

static void cast_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    (void)step;
    uint64_t d = c->d;
    float inv = 1.0f / (float)c->n;
    if (c->spec.kind == TC_CODEC_FP32) {
        scale_copy(x[0], inv, out, d);
        for (uint32_t w = 1; w < c->n; w++)
            scale_add(x[w], inv, out, d);
        for (uint32_t w = 0; e && w < c->n; w++)
            for (uint64_t i = 0; i < d; i++)
                e[w][i] -= (float)c->n * (e[w][i] * inv);
        return;
    }
    bool bf = c->spec.kind == TC_CODEC_BF16;
    for (uint32_t w = 0; w < c->n; w++) {
        if (bf)
            tc_cx_to_bf16(x[w], inv, c->h16, d);
        else
            tc_cx_to_f16(x[w], inv, c->h16, d);
        add_16(bf, c->h16, c->facc, d, w == 0);
        if (e)
            residual_16(bf, e[w], c->h16, (float)c->n, d);
    }
    round_16(bf, c->facc, out, d);
}

/* Measured path. The worker's work is the cast and the cast back: the
 * reduction itself (and the rounding of the sum to 16 bits) runs inside the
 * collective, and the sum of a single contribution is that contribution.
 * Blocks of CAST_BLOCK coordinates keep the 16-bit buffer in L1, as a fused
 * kernel would. */
#define CAST_BLOCK 2048

static void cast_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    (void)step;
    uint64_t d = c->d;
    float inv = 1.0f / (float)c->n;
    if (c->spec.kind == TC_CODEC_FP32) {
        if (x == out)
            scale_inplace(out, inv, d);
        else
            scale_copy(x, inv, out, d);
        return;
    }
    bool bf = c->spec.kind == TC_CODEC_BF16;
    for (uint64_t i0 = 0; i0 < d; i0 += CAST_BLOCK) {
        uint64_t m = d - i0 < CAST_BLOCK ? d - i0 : CAST_BLOCK;
        if (bf) {
            tc_cx_to_bf16(x + i0, inv, c->h16, m);
            tc_cx_from_bf16(c->h16, out + i0, m);
        } else {
            tc_cx_to_f16(x + i0, inv, c->h16, m);
            tc_cx_from_f16(c->h16, out + i0, m);
        }
    }
}

const cx_ops tc_cx_cast_ops = {cast_init, cast_aggregate, cast_one};
