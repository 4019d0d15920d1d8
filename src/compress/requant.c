/*
 * requant.c - the aggregation paths whose values differ from the codec's
 * exact-sum all-reduce (docs/MODEL.md, "Aggregation paths"), emulated hop by
 * hop in the order of the schedule that carries them:
 *   - requant-ring: MPICH's ring all-reduce (coll/ring.c: at step i rank r
 *     sends block r - 1 - i to r + 1), so chunk k (MPICH's split of d into
 *     n chunks) starts at rank k + 1, is added to by k + 2, ..., and ends,
 *     summed, at rank k: its partial sum is quantized by the first sender and
 *     re-quantized by each of the n - 1 ranks that add to it (the last one
 *     quantizes the whole sum), then all-gathered unchanged;
 *   - requant-tree: dbtree's double binary tree (coll/dbtree.c): the first
 *     half of the buffer (ceil(d/2) coordinates) is reduced up tree 1, the
 *     second up tree 2; a node adds its own contribution and its children's
 *     dequantized messages (own, then the left child, then the right) and
 *     re-quantizes what it sends up; the root quantizes the sum, which is
 *     broadcast unchanged;
 *   - ps of int8 and int4: every worker quantizes each of the S shards it
 *     pushes (MPICH's split of d into S), server s dequantizes and sums them
 *     in fp32 in worker order and re-quantizes the sum once for the pull.
 * A re-quantization of a partial sum v: fp16, bf16: v rounded to nearest
 * even in 16 bits (each worker's contribution being cast(x / n), as DDP's
 * hook sends it); int8, int4: per block of TC_REQUANT_BLOCK coordinates
 * (from the chunk's start), s = max |v|, q = the stochastic rounding of
 * v qmax / s into -qmax..qmax (quant.c), v = q s / qmax; the decoded sum is
 * divided by n at the end. Every rounding draws its uniforms from
 * (seed, step, hop, chunk): the hop is the position along the ring, the
 * tree node's rank, or the pushing worker.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compress/codec_int.h"

#define PURPOSE_RING 4
#define PURPOSE_TREE 5
#define PURPOSE_PUSH 6
#define PURPOSE_PULL 7

static bool is_cast(const tc_codec *c)
{
    return c->spec.kind == TC_CODEC_FP16 || c->spec.kind == TC_CODEC_BF16;
}

uint64_t tc_cx_chunk_lo(uint64_t d, uint32_t parts, uint32_t k)
{
    uint64_t q = d / parts, r = d % parts;
    return k * q + (k < r ? k : r);
}

uint64_t tc_cx_chunk_len(uint64_t d, uint32_t parts, uint32_t k)
{
    return d / parts + (k < d % parts ? 1 : 0);
}

double tc_cx_block_bytes(const tc_codec_spec *c, uint64_t m)
{
    if (c->kind == TC_CODEC_FP16 || c->kind == TC_CODEC_BF16)
        return 2.0 * (double)m;
    if (c->kind != TC_CODEC_INT8 && c->kind != TC_CODEC_INT4)
        return 4.0 * (double)m;
    uint64_t b = c->kind == TC_CODEC_INT8 ? 8 : 4, B = TC_REQUANT_BLOCK;
    uint64_t full = m / B, tail = m % B;
    return (double)(full * (4 + B * b / 8) + (tail ? 4 + (tail * b + 7) / 8 : 0));
}

/* ---- the trees ---- */

/* dbtree's positions: tree 0 holds rank q - 1 at position q (1..n), tree 1
 * rank q - 2 (cyclically). */
static uint64_t pos_of(uint32_t n, uint32_t which, uint32_t r)
{
    return which ? (uint64_t)(r + 1) % n + 1 : (uint64_t)r + 1;
}

static uint32_t rank_at(uint32_t n, uint32_t which, uint64_t q)
{
    return which ? (uint32_t)((q + n - 2) % n) : (uint32_t)(q - 1);
}

/* NCCL's in-order tree over 1..n (ncclGetBtree; coll/dbtree.h): the lowest
 * set bit b of q gives the parent (q ^ b) | 2b, or q ^ b beyond n; 0 at the
 * root. */
static uint64_t parent_pos(uint32_t n, uint64_t q)
{
    uint64_t bit = q & (~q + 1), up = (q ^ bit) | (bit << 1);
    return up > n ? q ^ bit : up;
}

int64_t tc_cx_dbtree_parent(uint32_t n, uint32_t which, uint32_t r)
{
    uint64_t up = parent_pos(n, pos_of(n, which, r));
    return up ? (int64_t)rank_at(n, which, up) : -1;
}

/* Children lists by ascending position (left first) and each tree's depth. */
static tc_status trees_init(tc_codec *c, tc_err *err)
{
    uint32_t n = c->n, depth = 1;
    c->rkid = malloc((size_t)4 * n * sizeof *c->rkid);
    if (!c->rkid)
        return tc_fail(err, TC_EINTERNAL, "out of memory for the trees of %u workers", n);
    for (size_t i = 0; i < (size_t)4 * n; i++)
        c->rkid[i] = -1;
    for (uint32_t t = 0; t < 2; t++)
        for (uint64_t q = 1; q <= n; q++) {
            uint32_t r = rank_at(n, t, q), dd = 1;
            uint64_t up = parent_pos(n, q);
            if (!up) {
                c->rroot[t] = r;
                continue;
            }
            int32_t *k = &c->rkid[((size_t)t * n + rank_at(n, t, up)) * 2];
            k[k[0] >= 0] = (int32_t)r;
            for (uint64_t a = up; a; a = parent_pos(n, a))
                dd++;
            depth = dd > depth ? dd : depth;
        }
    c->ndepth = depth;
    return TC_OK;
}

/* ---- rounding ---- */

CX_WIDE static void levels_back(const int8_t *restrict q, float back, float *restrict v, uint64_t m)
{
    CX_LOOP(i, m, v[i] = (float)q[i] * back);
}

CX_WIDE static void add_to(float *restrict acc, const float *restrict t, uint64_t m)
{
    CX_LOOP(i, m, acc[i] += t[i]);
}

CX_WIDE static void sub_from(float *restrict e, const float *restrict t, uint64_t m)
{
    CX_LOOP(i, m, e[i] -= t[i]);
}

CX_WIDE static void scaled(const float *restrict acc, float mul, float *restrict out, uint64_t m)
{
    CX_LOOP(i, m, out[i] = acc[i] * mul);
}

/* v (m coordinates) quantized and dequantized in place: what the next hop
 * reads. */
static void requant(tc_codec *c, float *v, uint64_t m, uint64_t key)
{
    if (is_cast(c)) {
        bool bf = c->spec.kind == TC_CODEC_BF16;
        (bf ? tc_cx_to_bf16 : tc_cx_to_f16)(v, 1.0f, c->h16, m);
        (bf ? tc_cx_from_bf16 : tc_cx_from_f16)(c->h16, v, m);
        return;
    }
    cx_lanes r;
    tc_cx_lanes_seed(&r, key);
    float qm = (float)c->qmax;
    for (uint64_t i0 = 0; i0 < m; i0 += TC_REQUANT_BLOCK) {
        uint64_t len = m - i0 < TC_REQUANT_BLOCK ? m - i0 : TC_REQUANT_BLOCK;
        float s = tc_cx_max_abs(v + i0, len);
        tc_cx_sround_block(v + i0, len, s > 0 ? qm / s : 0, 0, -qm, qm, &r, c->q8);
        levels_back(c->q8, s / qm, v + i0, len);
    }
}

/* acc = (first) or += a worker's contribution x: cast(x / n) for the casts,
 * x itself for int8 and int4. */
static void contribute(tc_codec *c, const float *x, float *acc, uint64_t m, bool first)
{
    if (is_cast(c)) {
        bool bf = c->spec.kind == TC_CODEC_BF16;
        float *dst = first ? acc : c->rtmp;
        (bf ? tc_cx_to_bf16 : tc_cx_to_f16)(x, 1.0f / (float)c->n, c->h16, m);
        (bf ? tc_cx_from_bf16 : tc_cx_from_f16)(c->h16, dst, m);
        if (!first)
            add_to(acc, dst, m);
    } else if (first) {
        memcpy(acc, x, m * sizeof *acc);
    } else {
        add_to(acc, x, m);
    }
}

/* out = the decoded mean: int8 and int4 divide the sum by n; the casts'
 * contributions were divided before. */
static void finish(const tc_codec *c, const float *acc, float *out, uint64_t m)
{
    scaled(acc, is_cast(c) ? 1.0f : 1.0f / (float)c->n, out, m);
}

static uint64_t key_of(const tc_codec *c, uint64_t step, uint64_t hop, uint64_t chunk, uint64_t purpose)
{
    return cx_key(c->spec.seed, step, hop << 32 | chunk, purpose);
}

/* ---- the paths ---- */

static void ring(tc_codec *c, const float *const *x, float *out, uint64_t step)
{
    uint32_t p = c->n;
    for (uint32_t k = 0; k < p; k++) {
        uint64_t lo = tc_cx_chunk_lo(c->d, p, k), m = tc_cx_chunk_len(c->d, p, k);
        float *acc = c->racc;
        for (uint32_t h = 0; h < p && m; h++) {
            contribute(c, x[(k + 1 + h) % p] + lo, acc, m, h == 0);
            requant(c, acc, m, key_of(c, step, h, k, PURPOSE_RING));
        }
        finish(c, acc, out + lo, m);
    }
}

/* Node r of tree t reduces its subtree's [lo, lo + m) into rdepth[depth]. */
static void tree_node(tc_codec *c, const float *const *x, uint32_t t, uint32_t r, uint64_t lo, uint64_t m,
                      uint32_t depth, uint64_t step)
{
    float *acc = c->rdepth[depth];
    contribute(c, x[r] + lo, acc, m, true);
    const int32_t *kid = &c->rkid[((size_t)t * c->n + r) * 2];
    for (int j = 0; j < 2; j++)
        if (kid[j] >= 0) {
            tree_node(c, x, t, (uint32_t)kid[j], lo, m, depth + 1, step);
            add_to(acc, c->rdepth[depth + 1], m);
        }
    requant(c, acc, m, key_of(c, step, r, t, PURPOSE_TREE));
}

static void tree(tc_codec *c, const float *const *x, float *out, uint64_t step)
{
    for (uint32_t t = 0; t < 2; t++) {
        uint64_t lo = tc_cx_chunk_lo(c->d, 2, t), m = tc_cx_chunk_len(c->d, 2, t);
        if (!m)
            continue;
        tree_node(c, x, t, c->rroot[t], lo, m, 0, step);
        finish(c, c->rdepth[0], out + lo, m);
    }
}

static void ps(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    uint32_t S = tc_codec_servers(&c->spec, c->n);
    for (uint32_t s = 0; s < S; s++) {
        uint64_t lo = tc_cx_chunk_lo(c->d, S, s), m = tc_cx_chunk_len(c->d, S, s);
        for (uint32_t w = 0; w < c->n && m; w++) {
            float *t = w ? c->rtmp : c->racc;
            memcpy(t, x[w] + lo, m * sizeof *t);
            requant(c, t, m, key_of(c, step, w, s, PURPOSE_PUSH));
            if (e)
                sub_from(e[w] + lo, t, m);
            if (w)
                add_to(c->racc, t, m);
        }
        requant(c, c->racc, m, key_of(c, step, 0, s, PURPOSE_PULL));
        finish(c, c->racc, out + lo, m);
    }
}

bool tc_cx_path_own(const tc_codec *c)
{
    tc_codec_path p = c->spec.path;
    bool ints = c->spec.kind == TC_CODEC_INT8 || c->spec.kind == TC_CODEC_INT4;
    return p == TC_PATH_REQUANT_RING || p == TC_PATH_REQUANT_TREE || (p == TC_PATH_PS && ints);
}

void tc_cx_path_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    switch (c->spec.path) {
    case TC_PATH_REQUANT_RING: ring(c, x, out, step); break;
    case TC_PATH_REQUANT_TREE: tree(c, x, out, step); break;
    default: ps(c, x, e, out, step); break;
    }
}

tc_status tc_cx_path_init(tc_codec *c, tc_err *err)
{
    if (!tc_cx_path_own(c))
        return TC_OK;
    tc_status st = c->spec.path == TC_PATH_REQUANT_TREE ? trees_init(c, err) : TC_OK;
    if (st)
        return st;
    c->racc = tc_calloc(c->d, sizeof *c->racc);
    c->rtmp = tc_calloc(c->d, sizeof *c->rtmp);
    if (c->spec.path == TC_PATH_REQUANT_TREE) {
        c->rdepth = tc_calloc(c->ndepth, sizeof *c->rdepth);
        for (uint32_t i = 0; c->rdepth && i < c->ndepth; i++)
            if (!(c->rdepth[i] = tc_calloc((c->d + 1) / 2, sizeof **c->rdepth)))
                return tc_fail(err, TC_EINTERNAL, "out of memory for the tree's messages");
    }
    if (!c->racc || !c->rtmp || (c->spec.path == TC_PATH_REQUANT_TREE && !c->rdepth))
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    return TC_OK;
}
