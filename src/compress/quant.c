/*
 * quant.c - int8 and int4: stochastic quantization on one scale shared by all
 * workers, summed as integers (all-reduce compatible).
 *
 * Model (QSGD-style unbiased rounding [Alistarh et al., NeurIPS 2017] with
 * the shared max scale of TernGrad [Wen et al., NeurIPS 2017]):
 *   1. s = max over workers of max_i |x_w[i]|: an all-reduce(max) of one
 *      float before the payload (one more collective, 4 bytes);
 *   2. each worker sends q_i = floor(v_i + u_i), v_i = x_i qmax / s,
 *      u_i ~ U[0,1) from its own stream, qmax = 2^(b-1) - 1, so
 *      q_i is in [-qmax, qmax] and E[q_i] = v_i (unbiased);
 *      |q_i s / qmax - x_i| < s / qmax;
 *   3. the all-reduce sums integers: sum_w q_w fits b + ceil(log2 n) bits
 *      (the wire cost widens accordingly, tc_codec_wire_cost);
 *   4. every worker decodes mean = (sum_w q_w) s / (qmax n).
 * The uniforms have 16 bits (two per xorshift32 draw, taken at the middle of
 * their cell): the rounding probability is exact to 2^-17 of a level.
 */
#include <math.h>
#include <string.h>
#include "compress/codec_int.h"

#define PURPOSE_QUANT 1

void tc_cx_lanes_seed(cx_lanes *r, uint64_t key)
{
    for (int l = 0; l < CX_LANES; l++) {
        uint32_t s = (uint32_t)(tc_mix64(key + (uint64_t)l) >> 32);
        r->s[l] = s ? s : 0x9e3779b9u; /* xorshift32 must not start at 0 */
    }
}

CX_WIDE float tc_cx_max_abs(const float *x, uint64_t d)
{
    float m[CX_LANES] = {0};
    uint64_t i = 0;
    for (; i + CX_LANES <= d; i += CX_LANES)
        for (int l = 0; l < CX_LANES; l++) {
            float a = fabsf(x[i + l]);
            m[l] = a > m[l] ? a : m[l];
        }
    for (; i < d; i++) {
        float a = fabsf(x[i]);
        m[0] = a > m[0] ? a : m[0];
    }
    float r = 0;
    for (int l = 0; l < CX_LANES; l++)
        r = m[l] > r ? m[l] : r;
    return r;
}

CX_WIDE double tc_cx_sum_abs(const float *x, uint64_t d)
{
    float s[CX_LANES] = {0};
    double total = 0;
    uint64_t i = 0;
    /* float partial sums over blocks of 4096, accumulated in double */
    while (i + CX_LANES <= d) {
        uint64_t end = i + 4096 < d ? i + 4096 : d;
        for (; i + CX_LANES <= end; i += CX_LANES)
            for (int l = 0; l < CX_LANES; l++)
                s[l] += fabsf(x[i + l]);
        for (int l = 0; l < CX_LANES; l++) {
            total += s[l];
            s[l] = 0;
        }
    }
    for (; i < d; i++)
        total += fabsf(x[i]);
    return total;
}

static inline uint32_t xorshift32(uint32_t *state)
{
    uint32_t s = *state;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return *state = s;
}

/* One stochastic rounding of v in [0, span] to floor(v) or floor(v) + 1
 * with probability frac(v), from a 16-bit uniform (r16 in 0..65535, taken at
 * its cell's midpoint: the probability is exact to 2^-17), plus lo. The
 * result is clamped to [0, span] as integers, which also catches v a rounding
 * error outside the range (truncation is the floor for v >= 0). */
static inline int32_t sround(float v, uint32_t r16, int32_t span, int32_t lo)
{
    /* floor(v + u) is floor(v) + 1 exactly when u >= 1 - frac(v): with
     * probability frac(v). v < 2^8 and u on a 2^-17 grid, so v + u is exact
     * in float (24 bits). */
    float u = (float)(int32_t)r16 * 0x1p-16f + 0x1p-17f;
    int32_t q = (int32_t)(v + u);
    q = (int32_t)cx_sel(cx_mask(q > span), (uint32_t)span, (uint32_t)q);
    q = (int32_t)cx_sel(cx_mask(q < 0), 0u, (uint32_t)q);
    return q + lo;
}

/* Blocks of 2 CX_LANES coordinates: each xorshift32 draw gives two 16-bit
 * uniforms, one for coordinate i + l, one for i + CX_LANES + l. */
CX_WIDE void tc_cx_sround_block(const float *restrict x, uint64_t m, float mul, float add, float lo, float hi,
                             cx_lanes *restrict r, int8_t *restrict q)
{
    uint32_t st[CX_LANES];
    memcpy(st, r->s, sizeof st);
    float off = add - lo;
    int32_t ilo = (int32_t)lo, span = (int32_t)(hi - lo);
    uint64_t i = 0;
    for (; i + 2 * CX_LANES <= m; i += 2 * CX_LANES)
        for (int l = 0; l < CX_LANES; l++) {
            uint32_t s = xorshift32(&st[l]);
            q[i + l] = (int8_t)sround(x[i + l] * mul + off, s & 0xffffu, span, ilo);
            q[i + CX_LANES + l] = (int8_t)sround(x[i + CX_LANES + l] * mul + off, s >> 16, span, ilo);
        }
    for (int l = 0; i < m; i++, l = (l + 1) % CX_LANES)
        q[i] = (int8_t)sround(x[i] * mul + off, xorshift32(&st[l]) & 0xffffu, span, ilo);
    memcpy(r->s, st, sizeof st);
}

CX_WIDE void tc_cx_widen(const int8_t *restrict q, int32_t *restrict acc, uint64_t m, bool first)
{
    if (first)
        CX_LOOP(i, m, acc[i] = q[i]);
    else
        CX_LOOP(i, m, acc[i] += q[i]);
}

CX_WIDE void tc_cx_dequant(const int32_t *restrict sum, float mul, float add, float *restrict out, uint64_t m)
{
    CX_LOOP(i, m, out[i] = (float)sum[i] * mul + add);
}

/* e (holding the input) -= q * back */
CX_WIDE static void q_residual(float *restrict e, const int8_t *restrict q, float back, uint64_t d)
{
    CX_LOOP(i, d, e[i] -= (float)q[i] * back);
}

static float q_scale(const tc_codec *c, const float *const *x)
{
    float s = 0;
    for (uint32_t w = 0; w < c->n; w++) {
        float m = tc_cx_max_abs(x[w], c->d);
        s = m > s ? m : s;
    }
    return s;
}

static void q_encode(tc_codec *c, const float *x, float *e, float s, uint64_t step, uint32_t w, int8_t *q)
{
    cx_lanes r;
    tc_cx_lanes_seed(&r, cx_key(c->spec.seed, step, w, PURPOSE_QUANT));
    float qm = (float)c->qmax;
    float mul = s > 0 ? qm / s : 0;
    tc_cx_sround_block(x, c->d, mul, 0, -qm, qm, &r, q);
    if (e)
        q_residual(e, q, s / qm, c->d);
}

uint64_t tc_cx_int_len(const tc_codec *c)
{
    return c->spec.kind == TC_CODEC_THC ? c->dpad : c->d;
}

float tc_cx_int_scale(tc_codec *c, const float *const *x, uint64_t step)
{
    return c->spec.kind == TC_CODEC_THC ? tc_cx_thc_scale(c, x, step) : q_scale(c, x);
}

void tc_cx_int_encode(tc_codec *c, const float *x, float *e, float scale, uint64_t step, uint32_t w, int8_t *q)
{
    if (c->spec.kind == TC_CODEC_THC)
        tc_cx_thc_encode(c, x, e, scale, step, w, q);
    else
        q_encode(c, x, e, scale, step, w, q);
}

void tc_cx_int_decode(tc_codec *c, const int32_t *sum, uint32_t count, float scale, uint64_t step, float *out)
{
    if (c->spec.kind == TC_CODEC_THC)
        tc_cx_thc_decode(c, sum, count, scale, step, out);
    else
        tc_cx_dequant(sum, scale / ((float)c->qmax * (float)count), 0, out, c->d);
}

/* The integer codecs share the aggregate: scale, encode, integer sum, decode. */
void tc_cx_int_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    uint64_t len = tc_cx_int_len(c);
    float s = tc_cx_int_scale(c, x, step);
    for (uint32_t w = 0; w < c->n; w++) {
        tc_cx_int_encode(c, x[w], e ? e[w] : NULL, s, step, w, c->q8);
        tc_cx_widen(c->q8, c->acc, len, w == 0);
    }
    tc_cx_int_decode(c, c->acc, c->n, s, step, out);
}

static tc_status q_init(tc_codec *c, tc_err *err)
{
    c->qmax = c->spec.kind == TC_CODEC_INT8 ? 127 : 7;
    c->q8 = tc_calloc(c->d, 1);
    c->acc = tc_calloc(c->d, sizeof *c->acc);
    if (!c->q8 || !c->acc)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    return TC_OK;
}

/* Measured path: the max, then blocks of QBLOCK coordinates through encode,
 * the integer sum of one contribution and decode, in L1 like a fused kernel. */
#define QBLOCK 2048

static void q_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    float s = tc_cx_max_abs(x, c->d);
    cx_lanes r;
    tc_cx_lanes_seed(&r, cx_key(c->spec.seed, step, 0, PURPOSE_QUANT));
    float qm = (float)c->qmax;
    float mul = s > 0 ? qm / s : 0, back = s / (qm * (float)c->n);
    for (uint64_t i0 = 0; i0 < c->d; i0 += QBLOCK) {
        uint64_t m = c->d - i0 < QBLOCK ? c->d - i0 : QBLOCK;
        tc_cx_sround_block(x + i0, m, mul, 0, -qm, qm, &r, c->q8);
        tc_cx_widen(c->q8, c->acc, m, true);
        tc_cx_dequant(c->acc, back, 0, out + i0, m);
    }
}

const cx_ops tc_cx_quant_ops = {q_init, tc_cx_int_aggregate, q_one};
