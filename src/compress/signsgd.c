/*
 * signsgd.c - scaled signs with error feedback, EF-signSGD [Karimireddy,
 * Rebjock, Stich, Jaggi, "Error Feedback Fixes SignSGD and other Gradient
 * Compression Schemes", ICML 2019, Algorithm 1].
 *
 * Model: worker w (input p = gradient + memory) sends one sign bit per
 * coordinate and the scale s_w = ||p||_1 / d (a float); its decoded
 * contribution is s_w sign(p) and its new memory p - s_w sign(p). The scales
 * differ per worker, so the bits are not summable: the contributions are
 * all-gathered and every worker averages the n decoded vectors (the mean,
 * not a majority vote). sign(0) = +1; -0 counts as negative.
 * Bits are packed 32 to a word, coordinate i in bit i mod 32 of word i / 32.
 */
#include "compress/codec_int.h"

static const uint32_t bit_of[32] = {
    1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,  1u << 8,  1u << 9,  1u << 10,
    1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21,
    1u << 22, 1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

static uint32_t pack32(const float *restrict x)
{
    uint32_t w = 0;
    for (int t = 0; t < 32; t++)
        w |= cx_mask(cx_fbits(x[t]) >> 31) & bit_of[t];
    return w;
}

CX_WIDE static void pack_signs(const float *restrict x, uint64_t d, uint32_t *restrict bits)
{
    uint64_t i = 0, wi = 0;
    for (; i + 32 <= d; i += 32, wi++)
        bits[wi] = pack32(x + i);
    if (i < d) {
        uint32_t w = 0;
        for (int t = 0; i + (uint64_t)t < d; t++)
            w |= cx_mask(cx_fbits(x[i + (uint64_t)t]) >> 31) & bit_of[t];
        bits[wi] = w;
    }
}

/* out (+)= s sign, sign from the bits */
CX_WIDE static void unpack(const uint32_t *restrict bits, uint64_t d, float s, float *restrict out, bool first)
{
    uint32_t sb = cx_fbits(s);
    uint64_t i = 0, wi = 0;
    for (; i + 32 <= d; i += 32, wi++) {
        uint32_t w = bits[wi];
        if (first)
            for (int t = 0; t < 32; t++)
                out[i + t] = cx_bitsf(sb ^ (cx_mask(w & bit_of[t]) & 0x80000000u));
        else
            for (int t = 0; t < 32; t++)
                out[i + t] += cx_bitsf(sb ^ (cx_mask(w & bit_of[t]) & 0x80000000u));
    }
    for (int t = 0; i < d; i++, t++) {
        float v = cx_bitsf(sb ^ (cx_mask(bits[wi] & bit_of[t]) & 0x80000000u));
        out[i] = first ? v : out[i] + v;
    }
}

/* e (holding the input) -= s sign(e) */
CX_WIDE static void residual(float *restrict e, float s, uint64_t d)
{
    uint32_t sb = cx_fbits(s);
    CX_LOOP(i, d, e[i] -= cx_bitsf(sb | (cx_fbits(e[i]) & 0x80000000u)));
}

static tc_status sign_init(tc_codec *c, tc_err *err)
{
    c->bits = tc_calloc(c->d / 32 + 1, sizeof *c->bits);
    if (!c->bits)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    return TC_OK;
}

static void sign_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    (void)step;
    for (uint32_t w = 0; w < c->n; w++) {
        float s = (float)(tc_cx_sum_abs(x[w], c->d) / (double)c->d);
        pack_signs(x[w], c->d, c->bits);
        unpack(c->bits, c->d, s / (float)c->n, out, w == 0);
        if (e)
            residual(e[w], s, c->d);
    }
}

static void sign_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    (void)step;
    float s = (float)(tc_cx_sum_abs(x, c->d) / (double)c->d);
    pack_signs(x, c->d, c->bits);
    unpack(c->bits, c->d, s / (float)c->n, out, true);
}

const cx_ops tc_cx_signsgd_ops = {sign_init, sign_aggregate, sign_one};
