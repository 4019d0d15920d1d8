/*
 * sparse.c - TopK, TopK with shared indices, RandK: k = ceil(ratio d)
 * coordinates per worker.
 *
 * Models:
 *   - topk: each worker keeps its own k largest |x_i| and sends the values
 *     and 32-bit indices; the index sets differ, so the contributions are
 *     all-gathered and every worker sums all n sparse sets [Aji & Heafield,
 *     EMNLP 2017; Lin et al., "Deep Gradient Compression", ICLR 2018].
 *   - topk-shared: one index set per step, the top-k of a leader that rotates
 *     over the workers (leader = step mod n), broadcast to all; every worker
 *     sends its values at those indices and they are all-reduced: the cyclic
 *     local top-k of ScaleCom [Chen et al., NeurIPS 2020]. A leader that
 *     rotates (rather than the top-k of the previous aggregate, which would
 *     never pick up a coordinate it once dropped) lets every worker's error
 *     feedback surface. The index broadcast is costed as an all-reduce in
 *     which only the leader contributes (tc_codec_wire_cost).
 *   - randk: k indices drawn without replacement from (seed, step), the same
 *     on every worker, so only values travel and they are all-reduced
 *     [Stich et al., "Sparsified SGD with memory", NeurIPS 2018]. With error
 *     feedback (default) the values are not rescaled (a contraction, as the
 *     memory analysis needs); with ef=0 they are scaled by d/k, which makes
 *     the estimate unbiased [Wangni et al., NeurIPS 2018] at d/k times the
 *     variance.
 * Every worker's error feedback is its input with the sent coordinates zeroed.
 *
 * Selection is O(d) expected (tc_cx_topk): the |x| bit patterns are compared as
 * unsigned integers (monotone in |x| for finite floats); a threshold from a
 * sample of up to 16,384 keys (runs of 32 at random places, d/8 at most)
 * admits about k + (3 sqrt(k s/d) + 8) d/s candidates in one vectorised
 * filtering pass (the sampling idea of Floyd & Rivest, CACM 1975), and a
 * radix selection among the candidates finds the exact k-th largest.
 */
#include <stdlib.h>
#include <math.h>
#include "compress/codec_int.h"

#define PURPOSE_SAMPLE 4
#define PURPOSE_RANDK 5
#define SAMPLE_RUNS 512
#define SAMPLE_RUN 32 /* contiguous keys per run: few cache misses */

static inline uint32_t key_of(const float *x, uint64_t i)
{
    return cx_fbits(x[i]) & 0x7fffffffu;
}

/* The k-th largest (1 <= k <= m) of the keys a[0..m) (each < 2^31), by
 * radix selection from the most significant digit: a histogram of the digit,
 * the bin that holds the k-th largest, the keys of that bin compacted in
 * place, the next digit. Three passes of at most m keys; a is overwritten. */
static uint32_t kth_largest(uint32_t *a, uint64_t m, uint64_t k)
{
    static const int shift[3] = {20, 9, 0}, width[3] = {11, 11, 9};
    uint32_t hist[2048], result = 0;
    for (int p = 0; p < 3; p++) {
        uint32_t nb = 1u << width[p], mask = nb - 1;
        int sh = shift[p];
        memset(hist, 0, nb * sizeof *hist);
        for (uint64_t j = 0; j < m; j++)
            hist[(a[j] >> sh) & mask]++;
        uint32_t bin = nb - 1;
        while (k > hist[bin]) {
            k -= hist[bin];
            bin--;
        }
        result |= bin << sh;
        if (p == 2)
            break;
        uint64_t o = 0;
        for (uint64_t j = 0; j < m; j++) {
            uint32_t v = a[j];
            a[o] = v;
            o += ((v >> sh) & mask) == bin;
        }
        m = o;
    }
    return result;
}

static const uint32_t bit_of[32] = {
    1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,  1u << 8,  1u << 9,  1u << 10,
    1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21,
    1u << 22, 1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

/* cand[0..m) = indices with key >= t, ascending, ckey their keys. A block of
 * 32 keys becomes a bit mask (vectorised); only its set bits are visited. */
CX_WIDE static uint64_t filter(const float *restrict x, uint64_t d, uint32_t t, uint32_t *restrict cand,
                               uint32_t *restrict ckey)
{
    uint64_t m = 0, i = 0;
    for (; i + 32 <= d; i += 32) {
        uint32_t bits = 0;
        for (int l = 0; l < 32; l++)
            bits |= cx_mask(key_of(x, i + (uint64_t)l) >= t) & bit_of[l];
        while (bits) {
            uint64_t j = i + (uint64_t)__builtin_ctz(bits);
            cand[m] = (uint32_t)j;
            ckey[m++] = key_of(x, j);
            bits &= bits - 1;
        }
    }
    for (; i < d; i++)
        if (key_of(x, i) >= t) {
            cand[m] = (uint32_t)i;
            ckey[m++] = key_of(x, i);
        }
    return m;
}

void tc_cx_topk(const float *x, uint64_t d, uint64_t k, uint64_t seed, uint32_t *keys, uint32_t *cand, uint32_t *ckey,
             uint32_t *idx)
{
    if (k >= d) {
        for (uint64_t i = 0; i < d; i++)
            idx[i] = (uint32_t)i;
        return;
    }
    uint32_t t = 0;
    uint64_t runs = d / (8 * SAMPLE_RUN) < SAMPLE_RUNS ? d / (8 * SAMPLE_RUN) : SAMPLE_RUNS;
    if (runs >= 16) {
        uint64_t s = 0;
        for (uint64_t j = 0; j < runs; j++) {
            uint64_t start = (uint64_t)((tc_mix64(seed + j) >> 32) * (d - SAMPLE_RUN + 1) >> 32);
            for (uint64_t l = 0; l < SAMPLE_RUN; l++)
                keys[s++] = key_of(x, start + l);
        }
        double expect = (double)k * (double)s / (double)d;
        double want = ceil(expect + 3 * sqrt(expect) + 8);
        if (want < (double)s)
            t = kth_largest(keys, s, (uint64_t)want);
    }
    uint64_t m = filter(x, d, t, cand, ckey);
    if (m < k) /* the sample overshot: every coordinate is a candidate */
        m = filter(x, d, 0, cand, ckey);
    memcpy(keys, ckey, m * sizeof *keys);
    uint32_t T = kth_largest(keys, m, k);
    uint64_t above = 0;
    for (uint64_t j = 0; j < m; j++)
        above += ckey[j] > T;
    uint64_t ties = k - above, o = 0;
    for (uint64_t j = 0; j < m; j++) {
        uint32_t v = ckey[j];
        if (v > T || (v == T && ties > 0)) {
            ties -= v == T;
            idx[o++] = cand[j];
        }
    }
}

static void gather(const float *x, const uint32_t *idx, uint64_t k, float *v)
{
    for (uint64_t j = 0; j < k; j++)
        v[j] = x[idx[j]];
}

static void forget_sent(float *e, const uint32_t *idx, uint64_t k)
{
    for (uint64_t j = 0; j < k; j++)
        e[idx[j]] = 0;
}

/* out = 0, then out[idx] = v * mul */
static void scatter(const float *v, const uint32_t *idx, uint64_t k, float mul, float *out, uint64_t d)
{
    memset(out, 0, d * sizeof *out);
    for (uint64_t j = 0; j < k; j++)
        out[idx[j]] = v[j] * mul;
}

static tc_status sparse_init(tc_codec *c, tc_err *err)
{
    c->idx = tc_calloc(c->k, sizeof *c->idx);
    c->vals = tc_calloc(c->k, sizeof *c->vals);
    c->vsum = tc_calloc(c->k, sizeof *c->vsum);
    bool ok = c->idx && c->vals && c->vsum;
    if (c->spec.kind == TC_CODEC_RANDK) {
        c->bitmap = tc_calloc(c->d / 64 + 1, sizeof *c->bitmap);
        ok = ok && c->bitmap;
    } else {
        c->keys = tc_calloc(c->d, sizeof *c->keys);
        c->cand = tc_calloc(c->d, sizeof *c->cand);
        c->ckey = tc_calloc(c->d, sizeof *c->ckey);
        ok = ok && c->keys && c->cand && c->ckey;
    }
    if (!ok)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    return TC_OK;
}

static uint64_t sample_seed(const tc_codec *c, uint64_t step, uint32_t w)
{
    return cx_key(c->spec.seed, step, w, PURPOSE_SAMPLE);
}

static void topk_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    memset(out, 0, c->d * sizeof *out);
    for (uint32_t w = 0; w < c->n; w++) {
        tc_cx_topk(x[w], c->d, c->k, sample_seed(c, step, w), c->keys, c->cand, c->ckey, c->idx);
        gather(x[w], c->idx, c->k, c->vals);
        /* the gathered sets, summed in worker order */
        for (uint64_t j = 0; j < c->k; j++)
            out[c->idx[j]] += c->vals[j];
        if (e)
            forget_sent(e[w], c->idx, c->k);
    }
    float inv = 1.0f / (float)c->n;
    for (uint64_t i = 0; i < c->d; i++)
        out[i] *= inv;
}

static void topk_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    tc_cx_topk(x, c->d, c->k, sample_seed(c, step, 0), c->keys, c->cand, c->ckey, c->idx);
    gather(x, c->idx, c->k, c->vals);
    scatter(c->vals, c->idx, c->k, 1.0f / (float)c->n, out, c->d);
}

/* The all-reduce of the shared-index codecs: vsum = sum over workers of
 * their values at c->idx; each worker's error feedback forgets what it sent. */
static void sum_at_indices(tc_codec *c, const float *const *x, float *const *e)
{
    for (uint32_t w = 0; w < c->n; w++) {
        gather(x[w], c->idx, c->k, w == 0 ? c->vsum : c->vals);
        if (w > 0)
            for (uint64_t j = 0; j < c->k; j++)
                c->vsum[j] += c->vals[j];
        if (e)
            forget_sent(e[w], c->idx, c->k);
    }
}

static void shared_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    uint32_t leader = (uint32_t)(step % c->n);
    tc_cx_topk(x[leader], c->d, c->k, sample_seed(c, step, leader), c->keys, c->cand, c->ckey, c->idx);
    sum_at_indices(c, x, e);
    scatter(c->vsum, c->idx, c->k, 1.0f / (float)c->n, out, c->d);
}

/* Floyd's algorithm [Bentley & Floyd, "Programming pearls: a sample of
 * brilliance", CACM 1987]: k distinct indices of [0, d) in O(k), marked in a
 * bitmap that is then read back in ascending order (and cleared). */
static void randk_indices(tc_codec *c, uint64_t step)
{
    uint64_t key = cx_key(c->spec.seed, step, 0, PURPOSE_RANDK);
    uint64_t *bm = c->bitmap;
    for (uint64_t j = c->d - c->k; j < c->d; j++) {
        uint64_t t = (uint64_t)((tc_mix64(key + j) >> 32) * (j + 1) >> 32);
        if (bm[t >> 6] >> (t & 63) & 1)
            t = j;
        bm[t >> 6] |= 1ull << (t & 63);
    }
    uint64_t o = 0;
    for (uint64_t wi = 0; wi <= c->d / 64; wi++) {
        uint64_t bits = bm[wi];
        bm[wi] = 0;
        while (bits) {
            c->idx[o++] = (uint32_t)(wi * 64 + (uint64_t)__builtin_ctzll(bits));
            bits &= bits - 1;
        }
    }
}

static float randk_mul(const tc_codec *c)
{
    float inv = 1.0f / (float)c->n;
    return c->ef ? inv : (float)((double)c->d / (double)c->k) * inv;
}

static void randk_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    randk_indices(c, step);
    sum_at_indices(c, x, e);
    scatter(c->vsum, c->idx, c->k, randk_mul(c), out, c->d);
}

static void randk_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    randk_indices(c, step);
    gather(x, c->idx, c->k, c->vsum);
    scatter(c->vsum, c->idx, c->k, randk_mul(c), out, c->d);
}

const cx_ops tc_cx_topk_ops = {sparse_init, topk_aggregate, topk_one};
const cx_ops tc_cx_topk_shared_ops = {sparse_init, shared_aggregate, topk_one};
const cx_ops tc_cx_randk_ops = {sparse_init, randk_aggregate, randk_one};
