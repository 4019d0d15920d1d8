/*
 * codec_int.h - what the codecs share inside the compress layer: the codec
 * instance, the per-kind operations table, the 16-bit casts, the per-lane
 * random numbers of stochastic rounding, the fast Walsh-Hadamard transform
 * and the O(d) top-k selection. The integer codecs' encode and decode steps
 * are exposed here so that the tests can sum the integer vectors themselves
 * and check that the sum decodes to exactly what tc_codec_aggregate returns.
 */
#ifndef TOPOCC_CODEC_INT_H
#define TOPOCC_CODEC_INT_H

#include <string.h>
#include "topocc/compress.h"

/* GCC's -O2 cost model ("very-cheap") vectorises a loop only when no scalar
 * epilogue and no run-time alias check are needed. So the hot loops run as
 * blocks of CX_VEC iterations with a constant trip count, then a scalar tail,
 * and the kernels take restrict pointers. */
#define CX_VEC 64
#define CX_LOOP(i, n, ...)                                                   \
    do {                                                                     \
        uint64_t i##_b = 0, i##_n = (n);                                     \
        for (; i##_b + CX_VEC <= i##_n; i##_b += CX_VEC)                     \
            for (uint64_t i = i##_b; i < i##_b + CX_VEC; i++) {              \
                __VA_ARGS__;                                                 \
            }                                                                \
        for (uint64_t i = i##_b; i < i##_n; i++) {                           \
            __VA_ARGS__;                                                     \
        }                                                                    \
    } while (0)

/* The hot kernels are compiled for x86-64-v4 (AVX-512), v3 (AVX2) and the
 * baseline, and the loader picks one for the CPU (GCC's target_clones): the
 * same plain loops, wider vectors where the machine has them. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define CX_WIDE __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CX_WIDE
#endif

/* Whether the CPU has F16C and the OS saves AVX state: GCC's
 * __builtin_cpu_supports knows "f16c", clang 14's does not, so under clang
 * CPUID leaf 1 says (ECX bit 29). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
static inline bool cx_cpu_f16c(void)
{
#if defined(__clang__)
    unsigned a, b, c, d;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#else
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#endif
}
#endif

/* All-ones when c, else zero: selects without branches (if-conversion is
 * not done for the -O2 vectoriser). */
static inline uint32_t cx_mask(int c)
{
    return 0u - (uint32_t)(c != 0);
}
static inline uint32_t cx_sel(uint32_t m, uint32_t a, uint32_t b)
{
    return (a & m) | (b & ~m);
}

/* Stochastic rounding draws its uniforms from CX_LANES independent xorshift32
 * generators [Marsaglia, "Xorshift RNGs", J. Stat. Software 2003], one per
 * lane of a block, so the loop vectorises; 16 lanes fill four SSE or two AVX
 * registers. */
#define CX_LANES 64
typedef struct cx_lanes {
    uint32_t s[CX_LANES];
} cx_lanes;

/* Seeds the lanes from a key (seed, step, worker, purpose mixed together). */
void tc_cx_lanes_seed(cx_lanes *r, uint64_t key);
/* A key that differs for every (seed, step, worker, purpose). */
static inline uint64_t cx_key(uint64_t seed, uint64_t step, uint64_t worker, uint64_t purpose)
{
    return tc_mix64(tc_mix64(tc_mix64(seed ^ (purpose << 56)) ^ step) ^ worker);
}

/* Bits of a float and back, without aliasing violations. */
static inline uint32_t cx_fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float cx_bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* IEEE 754 binary16 and bfloat16, round to nearest even (cast.c). */
void tc_cx_to_f16(const float *restrict x, float mul, uint16_t *restrict h, uint64_t d);
void tc_cx_from_f16(const uint16_t *restrict h, float *restrict x, uint64_t d);
void tc_cx_to_bf16(const float *restrict x, float mul, uint16_t *restrict h, uint64_t d);
void tc_cx_from_bf16(const uint16_t *restrict h, float *restrict x, uint64_t d);

/* max |x_i| and sum |x_i| with lane-wise partial results (vectorisable). */
float tc_cx_max_abs(const float *x, uint64_t d);
double tc_cx_sum_abs(const float *x, uint64_t d);

/* Fast Walsh-Hadamard transform of x (length a power of two), unnormalised:
 * n log2 n additions [Fino & Algazi, IEEE Trans. Computers 1976]. */
void tc_cx_fwht(float *x, uint64_t n);

/* The indices of the k largest |x_i| (ties: lowest index first), ascending,
 * in O(d) expected time: a threshold from a random sample, one filtering pass,
 * an exact quickselect among the candidates (sparse.c). keys, cand and ckey
 * are scratch of d entries each. */
void tc_cx_topk(const float *x, uint64_t d, uint64_t k, uint64_t seed, uint32_t *keys, uint32_t *cand, uint32_t *ckey,
             uint32_t *idx);

/* Shapes shared by the kernels and the cost model (codec.c, thc.c,
 * powersgd.c): k = ceil(ratio d) (0 if ratio is not in (0, inf)); THC's
 * padded length and full-chunk length; PowerSGD's a x b matrix of a bucket
 * known only by its size. */
bool tc_cx_is_sparse(tc_codec_kind k);
uint64_t tc_cx_k(double ratio, uint64_t d);
uint64_t tc_cx_thc_dpad(uint64_t d, uint64_t *chunk);
void tc_cx_psgd_shape(uint64_t d, uint64_t *a, uint64_t *b);
/* The bucket of d coordinates as the a x b matrix of tc_cx_psgd_shape, and the
 * rank c uses on it: at most min(a, b); per tensor, 0 where the matrix is
 * not compressed (tc_codec_powersgd_rank). */
uint32_t tc_cx_psgd_rank_on(const tc_codec_spec *c, uint64_t d, uint64_t *a, uint64_t *b);

typedef struct cx_ops cx_ops;

/* One tensor of a PowerSGD bucket: the row-major rows x cols matrix M at
 * off in the bucket, i.e. the column-major cols x rows matrix X = M^T;
 * numel = rows cols, except for a bucket known only by its size, whose
 * last row is partial (full complete rows, then tail elements). rank 0:
 * all-reduced uncompressed; else its P (rows x rank) and Q (cols x rank),
 * column-major, at poff and qoff of the bucket's P and Q. */
typedef struct cx_ptensor {
    uint64_t rows, cols, numel, off, full, tail, poff, qoff;
    uint32_t rank;
} cx_ptensor;

/* The three products of one worker's PowerSGD step on tensor t of bucket x,
 * as powersgd.c runs them: P = X^T Q, Qout = X P, out = Qout P^T (out at
 * t->off; the cost model's product kernel, measure.c). */
void tc_cx_psgd_products(const cx_ptensor *t, const float *x, const float *Q, float *P, float *Qout, float *out);

/* The collectives of a PowerSGD step (op, collectives, sizes; not
 * bits_per_coord) for the nt tensors t of a bucket of d coordinates
 * (powersgd.c); t NULL: the bucket as one a x b tensor. */
void tc_cx_psgd_wire(const tc_codec_spec *c, const tc_codec_tensor *t, size_t nt, uint64_t d, tc_codec_wire *out);

struct tc_codec {
    tc_codec_spec spec;
    const cx_ops *ops;
    uint64_t d;
    uint32_t n;
    bool ef;
    float **mem;        /* n error-feedback memories of d floats (NULL when off) */
    const float **xin;  /* n pointers: this step's inputs (gradient + memory) */
    float **emem;       /* n pointers to write memories through (NULL when off) */

    /* integer codecs (int8, int4, thc) */
    uint32_t qmax;      /* int8/int4: levels -qmax..qmax; thc: indices 0..qmax */
    int8_t *q8;         /* one worker's integers (block or whole bucket) */
    int32_t *acc;       /* integer sums */
    float *rot;         /* thc: one worker's rotated, padded bucket */
    uint64_t dpad;      /* thc: padded length */
    uint64_t chunk;     /* thc: transform length of the full chunks */

    /* 16-bit casts */
    uint16_t *h16;
    float *facc;        /* fp32 sums (casts), dense scratch */

    /* sparse codecs (topk, topk-shared, randk) */
    uint64_t k;
    uint32_t *keys, *cand, *ckey, *idx;
    float *vals, *vsum;
    uint64_t *bitmap;   /* randk: Floyd's sampling */

    /* signsgd */
    uint32_t *bits;

    /* aggregation paths other than allreduce (requant.c): a chunk's partial
     * sum, a contribution converted, and the tree's messages per depth */
    float *racc, *rtmp;
    float **rdepth;
    uint32_t ndepth;
    int32_t *rkid;      /* requant-tree: 2 trees x n ranks x 2 children (-1: none), left first */
    uint32_t rroot[2];  /* requant-tree: each tree's root rank */

    /* powersgd, powersgd-batched: the bucket's tensors (powerSGD_hook's view
     * of each; batched: the whole bucket as one) */
    tc_codec_tensor *shapes; /* as given to tc_codec_create_shaped (NULL: d only) */
    size_t nshapes;
    cx_ptensor *pt;
    size_t npt;
    uint64_t plen, qlen; /* floats of all P, all Q */
    float *P, *Q, *tau, *work;
    int lwork;
};

/* The per-kind operations: aggregate applies DDP semantics to x (inputs
 * already include the error feedback) and, when e is non-NULL, turns each
 * e[w] (the same buffer as x[w]) into the new memory in place, once it has
 * been encoded;
 * one is the measured path: one worker's encode, the local sum of its single
 * contribution, and the decode; out may be x (decoding into the bucket). */
struct cx_ops {
    tc_status (*init)(tc_codec *c, tc_err *err);
    void (*aggregate)(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step);
    void (*one)(tc_codec *c, const float *x, float *out, uint64_t step);
};

extern const cx_ops tc_cx_cast_ops, tc_cx_quant_ops, tc_cx_thc_ops, tc_cx_topk_ops, tc_cx_topk_shared_ops, tc_cx_randk_ops,
    tc_cx_powersgd_ops, tc_cx_signsgd_ops;

/* q = stochastic rounding of x * mul + add, clamped to [lo, hi]; the lanes
 * carry across calls so a bucket encoded in blocks (multiples of
 * 2 CX_LANES) draws the same numbers as one encoded whole (quant.c). */
void tc_cx_sround_block(const float *restrict x, uint64_t m, float mul, float add, float lo, float hi,
                     cx_lanes *restrict r, int8_t *restrict q);
/* acc = q (first) or acc += q; out = sum * mul + add. */
void tc_cx_widen(const int8_t *restrict q, int32_t *restrict acc, uint64_t m, bool first);
void tc_cx_dequant(const int32_t *restrict sum, float mul, float add, float *restrict out, uint64_t m);

/* Integer all-reduce codecs (int8, int4, thc), step by step:
 * scale = the shared scale (max over workers, the tiny all-reduce(max));
 * encode writes worker w's integers (len = tc_cx_int_len: d, or the padded
 * length for thc) and, when e is non-NULL (then e == x), turns e into its new
 * error-feedback memory;
 * decode turns the integer sum of `count` contributions into their mean.
 * tc_codec_aggregate is exactly scale, encode per worker, integer sum, decode. */
uint64_t tc_cx_int_len(const tc_codec *c);
float tc_cx_int_scale(tc_codec *c, const float *const *x, uint64_t step);
void tc_cx_int_encode(tc_codec *c, const float *x, float *e, float scale, uint64_t step, uint32_t w, int8_t *q);
void tc_cx_int_decode(tc_codec *c, const int32_t *sum, uint32_t count, float scale, uint64_t step, float *out);

/* A deterministic, roughly N(0, 1) test vector (measure.c). */
void tc_cx_fill_gradient(float *x, uint64_t d, uint64_t seed);

void tc_cx_int_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step);

/* ---- aggregation paths (requant.c; docs/MODEL.md, "Aggregation paths") ----
 * Chunk k of a buffer of d coordinates cut into `parts` (MPICH's split: the
 * first d mod parts chunks one coordinate more): its first coordinate and
 * length. */
uint64_t tc_cx_chunk_lo(uint64_t d, uint32_t parts, uint32_t k);
uint64_t tc_cx_chunk_len(uint64_t d, uint32_t parts, uint32_t k);
/* Bytes of m coordinates in the block format of the requant and ps paths:
 * fp16, bf16 2 m; fp32 4 m; int8, int4 per block of TC_REQUANT_BLOCK a
 * 4-byte scale and ceil(bits len / 8) bytes. */
double tc_cx_block_bytes(const tc_codec_spec *c, uint64_t m);
/* The parent of rank r in tree `which` (0, 1) of dbtree's double binary
 * tree over n ranks (coll/dbtree.c: NCCL's in-order tree over positions
 * 1..n, the second shifted by one position); -1 at the root. */
int64_t tc_cx_dbtree_parent(uint32_t n, uint32_t which, uint32_t r);
/* The phases of c's path (tc_codec_wire's path, servers, nphases, phase)
 * from the allreduce path's collectives in out, which the other paths
 * replace by their all-reduce equivalents (cost.c). */
void tc_cx_wire_phases(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_wire *out);
/* Allocates what a path other than allreduce needs (after the kind's init). */
tc_status tc_cx_path_init(tc_codec *c, tc_err *err);
/* Whether c's path runs its own emulation (requant paths; ps of int8 and
 * int4) rather than the kind's aggregate, and that emulation. */
bool tc_cx_path_own(const tc_codec *c);
void tc_cx_path_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step);
/* thc.c's halves of the above */
float tc_cx_thc_scale(tc_codec *c, const float *const *x, uint64_t step);
void tc_cx_thc_encode(tc_codec *c, const float *x, float *e, float scale, uint64_t step, uint32_t w, int8_t *q);
void tc_cx_thc_decode(tc_codec *c, const int32_t *sum, uint32_t count, float scale, uint64_t step, float *out);

#endif
