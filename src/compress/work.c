/*
 * work.c - what encode + decode costs a processor, counted from the codecs'
 * own kernels: per coordinate, the bytes each pass moves over memory and the
 * arithmetic. Two views of the same kernels:
 *   - the measured path (tc_codec_work_measured): one worker's encode, the
 *     sum of its single contribution and the decode, as tc_codec_measure runs
 *     it on this CPU (in place, the message in cache-sized blocks); its time
 *     is predicted from the rates of the calibration kernels measured in the
 *     same run (tc_codec_predict_s): copy and in-place bandwidth, random
 *     loads, floating-point, integer and (PowerSGD) product operations;
 *   - a worker's kernels on an accelerator for n workers (tc_codec_work_accel):
 *     each kernel one pass over memory, the message written and read at its
 *     wire width, THC's transform at the published kernel's cost.
 * docs/MODEL.md, "Compute", has the tables these functions encode; the tests
 * hold them to those hand counts.
 *
 * Units. Bytes: `read` and `written` are bytes per coordinate that a pass
 * reads from or writes to a bucket-sized array (first touch in the pass; a
 * cache-resident block is not memory traffic); `alloc` are the bytes of lines
 * a CPU must read in before writing them (write-allocate), a line written
 * without being read first in the same pass; `inplace` the bytes (of read +
 * written) of passes that write back in place what they read. Arithmetic:
 * lane operations as the C source writes them, one per element for each
 * operation: `vops` floating-point ones (multiply, add, float compare and
 * max, int <-> float conversion), `iops` integer and logic ones (shift, and,
 * or, xor, integer add and compare, select, widen, narrow, and each load or
 * store of a cache-resident block); `narrow` counts those done by 8-lane
 * instructions (x86's F16C conversions), which cost lanes / 8 of a
 * full-width one; `gemm` those of OpenBLAS's products, priced by a kernel of
 * the same calls; `sops` counts scalar operations (per block, per
 * candidate, per sampled index), each of which takes a whole vector slot.
 */
#include <math.h>
#include <string.h>
#include "compress/codec_int.h"

/* Lane operations of the kernels, per element (counted in the C source), as
 * floating-point (_F: multiply, add, subtract, float compare, max,
 * conversions between integer and float) and integer or logic (_I: shift,
 * and, or, xor, integer add and compare, select, widen, narrow, and the loads
 * and stores of cache-resident blocks) operations. */
#define OPS_MAXABS_F 1  /* max */
#define OPS_MAXABS_I 1  /* abs (an and) */
#define OPS_SUMABS_F 1  /* add */
#define OPS_SUMABS_I 1  /* abs */
#define OPS_SROUND_F 7  /* x mul + off (2); the 16-bit uniform's int -> float, multiply, add (3);
                           v + u; float -> int */
#define OPS_SROUND_I 11 /* half a xorshift32 (3 shifts, 3 xors: 3); the uniform's mask or shift;
                           two clamps (compare, select each: 4); + lo; narrow; store to the block */
#define OPS_WIDEN_I 3   /* load, sign-extend, store */
#define OPS_DEQUANT_F 3 /* int -> float, multiply, add (the store is the pass's) */
#define OPS_DEQUANT_I 1 /* load */
#define OPS_LEVELS_F 3  /* THC's levels into the chunk: int -> float, multiply, add */
#define OPS_LEVELS_I 2  /* load, store */
#define OPS_TO_BF16_F 1 /* multiply */
#define OPS_TO_BF16_I 11 /* round to nearest even (shift, and, add, add, shift); NaN (or, and,
                            compare, select); narrow; store */
#define OPS_FROM_BF16_I 3 /* load, widen, shift */
#define OPS_TO_F16_F 2  /* portable: multiply; the subnormal's float add */
#define OPS_TO_F16_I 18 /* sign (shift, and), magnitude (and), the subnormal's subtract, normal
                           (shift, and, add, add, shift), three compare-selects (6), or, narrow,
                           store */
#define OPS_FROM_F16_F 2 /* portable: the subnormal's convert and multiply */
#define OPS_FROM_F16_I 16 /* load, widen, exponent, mantissa, sign (and, shift), normal (add,
                             shift, shift, or), special (or), two compare-selects (4), or */
#define OPS_TO_F16C 3   /* F16C: multiply, vcvtps2ph, store (8 lanes) */
#define OPS_FROM_F16C 2 /* F16C: load, vcvtph2ps (8 lanes) */
#define OPS_SIGNS_F 1   /* THC's random signs: multiply */
#define OPS_SIGNS_I 5   /* bit table load, and, compare, and, xor */
#define OPS_PACK_I 5    /* signSGD's sign bits: shift, select, bit table load, and, or */
#define OPS_REDUCE32_I 5 /* an OR of 32 lanes into one word: its log2 32 steps */
#define OPS_UNPACK_I 5  /* bit table load, and, compare, and, xor */
#define OPS_FILTER_I 4  /* top-k's filter on integer keys: and, compare, select the bit, or */
#define SOPS_MIX_PER32 17 /* a 64-bit mix for 32 coordinates' signs, its shift and the loop */
#define SOPS_CANDIDATE 31 /* a top-k candidate: filter 8, copy 2, radix selection 12,
                             count above 3, ties 6 */
#define SOPS_SAMPLE 15  /* a sampled key: load, and, store 3, its radix selection 12 */
#define SOPS_FLOYD 21   /* a RandK draw: 64-bit mix 9, scale 2, bitmap test 5, set 3, loop 2 */
#define SOPS_BITMAP_WORD 4 /* read a bitmap word back: load, clear, test, loop */
#define SOPS_INDEX 5    /* an index from a set bit: ctz, index, store, clear, loop */
#define SOPS_GATHER 3   /* load index, load value, store */
#define SOPS_SCATTER 4  /* load value, scale, load index, store */
#define LINE 64.0       /* bytes of a cache line: what one random access moves (random_ps unknown) */

/* THC's transform on the accelerator [Dao-AILab fast-hadamard-transform,
 * README "Speed": fp32 rows on an A100 take 1.0x the time of a memcpy up to
 * dimension 8192, 1.1x at 16384, 1.2x at 32768, the largest it supports]:
 * a chunk of C coordinates costs factor(C) times a read and a write of it
 * per pass, one pass per 2^15. */
#define PUBLISHED_FWHT_MAX 32768u

static double fwht_published_factor(uint64_t C)
{
    double f = C <= 8192 ? 1.0 : C <= 16384 ? 1.1 : 1.2;
    double passes = 1;
    for (uint64_t m = PUBLISHED_FWHT_MAX; m < C; m *= PUBLISHED_FWHT_MAX)
        passes++;
    return f * passes;
}

static void add(tc_codec_work *w, double rd, double wr, double alloc, double fops, double iops, double sops)
{
    w->read += rd;
    w->written += wr;
    w->alloc += alloc;
    w->vops += fops;
    w->iops += iops;
    w->sops += sops;
    if (rd + wr > 0)
        w->passes++;
}

static uint64_t k_of(const tc_codec_spec *c, uint64_t d)
{
    uint64_t k = tc_cx_k(c->ratio, d);
    return k < 1 ? 1 : k > d ? d : k;
}

/* Operations of tc_cx_fwht on n (a power of two) coordinates, per coordinate:
 * the four stages inside blocks of 16 as two radix-4 passes (load, 2
 * additions, store: 4 lane operations each, 2 of them floating-point), then
 * radix-8 passes (load, 3 additions, store: 5), radix-4 (4), radix-2 (3). A
 * pass whose halves are shorter than CX_VEC runs in CX_LOOP's scalar tail:
 * its operations are scalar (with THC's chunks of 65,536, the radix-8 pass
 * on halves of 16). */
static void fwht_pass(uint32_t h, double adds, double *fops, double *iops, double *sops)
{
    if ((1u << h) < CX_VEC) {
        *sops += adds + 2;
    } else {
        *fops += adds;
        *iops += 2;
    }
}

static void fwht_ops(uint64_t n, double *fops, double *iops, double *sops)
{
    uint32_t L = 0;
    while ((1ull << L) < n)
        L++;
    *fops = *iops = *sops = 0;
    uint32_t h = 0;
    if (L >= 4) {
        *fops += 2 * 2;
        *iops += 2 * 2;
        h = 4;
    }
    for (; L >= 3 && h <= L - 3; h += 3)
        fwht_pass(h, 3, fops, iops, sops);
    for (; L >= 2 && h <= L - 2; h += 2)
        fwht_pass(h, 2, fops, iops, sops);
    for (; h < L; h++)
        fwht_pass(h, 1, fops, iops, sops);
}

/* Top-k's candidates after the sampled threshold (sparse.c, tc_cx_topk). */
static void topk_selection(uint64_t d, uint64_t k, double *cand, double *sample)
{
    uint64_t runs = d / (8 * 32) < 512 ? d / (8 * 32) : 512;
    *sample = 0;
    *cand = (double)d;
    if (runs < 16 || k >= d)
        return;
    double s = 32.0 * (double)runs, expect = (double)k * s / (double)d;
    double want = ceil(expect + 3 * sqrt(expect) + 8);
    *sample = s;
    if (want < s)
        *cand = fmin((double)d, want * (double)d / s);
}

static bool have_f16c(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return cx_cpu_f16c();
#else
    return false;
#endif
}

/* ---- the measured path ------------------------------------------------ */

/* A pass that reads a bucket-sized array and writes it back in place: its
 * bytes are priced by the in-place kernel where it is measured. */
static void add_inplace(tc_codec_work *w, double fops, double iops, double sops)
{
    add(w, 4, 4, 0, fops, iops, sops);
    w->inplace += 8;
}

static void measured_cast(const tc_codec_spec *c, tc_codec_work *w)
{
    if (c->kind == TC_CODEC_FP32) {
        add_inplace(w, 1, 0, 0); /* x *= 1/n in place */
        return;
    }
    /* blocks of 2048: cast into the L1 block, cast back into the bucket */
    if (c->kind == TC_CODEC_BF16) {
        add_inplace(w, OPS_TO_BF16_F, OPS_TO_BF16_I + OPS_FROM_BF16_I, 0);
    } else if (have_f16c()) {
        add_inplace(w, 0, 0, 0);
        w->narrow += OPS_TO_F16C + OPS_FROM_F16C;
    } else {
        add_inplace(w, OPS_TO_F16_F + OPS_FROM_F16_F, OPS_TO_F16_I + OPS_FROM_F16_I, 0);
    }
}

static void measured_thc(uint64_t d, tc_codec_work *w)
{
    uint64_t C;
    double pad = (double)tc_cx_thc_dpad(d, &C) / (double)d, Ff, Fi, Fs;
    fwht_ops(C, &Ff, &Fi, &Fs);
    tc_codec_work t = {0};
    /* R [x; 0] into rot */
    add(&t, 4, 4, 4, OPS_SIGNS_F + Ff, OPS_SIGNS_I + Fi, SOPS_MIX_PER32 / 32.0 + Fs);
    add(&t, 4, 0, 0, OPS_MAXABS_F, OPS_MAXABS_I, 0); /* M = max |rot| */
    /* per chunk, in place in rot: quantize, sum of one, levels back into the
     * chunk (in cache), inverse transform; then the signs into the bucket */
    add_inplace(&t, OPS_SROUND_F + OPS_LEVELS_F + Ff, OPS_SROUND_I + OPS_WIDEN_I + OPS_LEVELS_I + Fi, Fs);
    add(&t, 0, 4, 4, OPS_SIGNS_F, OPS_SIGNS_I + 1, SOPS_MIX_PER32 / 32.0);
    w->read += pad * t.read;
    w->written += pad * t.written;
    w->alloc += pad * t.alloc;
    w->inplace += pad * t.inplace;
    w->vops += pad * t.vops;
    w->iops += pad * t.iops;
    w->sops += pad * t.sops;
    w->passes += t.passes;
}

static void measured_sparse(const tc_codec_spec *c, uint64_t d, tc_codec_work *w)
{
    double k = (double)k_of(c, d), rho = k / (double)d;
    if (c->kind == TC_CODEC_RANDK) {
        /* Floyd's k draws into a bitmap of d bits (a random word each:
         * beyond the L2 cache for a bucket of 4 Mi coordinates and more),
         * the bitmap read back */
        add(w, 0, 0, 0, 0, 0, SOPS_FLOYD * rho + SOPS_BITMAP_WORD / 64.0 + SOPS_INDEX * rho);
        w->random += rho;
    } else {
        double cand, sample;
        topk_selection(d, (uint64_t)k, &cand, &sample);
        add(w, 4, 0, 0, 0, OPS_FILTER_I + OPS_REDUCE32_I, 2 / 32.0); /* the filtering pass */
        add(w, 0, 0, 0, 0, 0, (SOPS_CANDIDATE * cand + SOPS_SAMPLE * sample) / (double)d);
    }
    /* gather k values (a random access each), zero the bucket, scatter k
     * values (a random access each: the zeroed bucket is beyond the cache) */
    add(w, 0, 0, 0, 0, 0, SOPS_GATHER * rho);
    w->random += rho;
    add(w, 0, 4, 4, 0, 0, SOPS_SCATTER * rho);
    w->random += rho;
}

/* PowerSGD through OpenBLAS's sgemm on the a x b bucket (powersgd.c): P = M Q
 * and Q = M^T P each read M once and pack it (a load and a store per
 * element) around r fused multiply-adds; P Q^T is written twice, the beta = 0
 * pass that zeroes C and the kernel that adds to it (loaded and stored in
 * place, r fused multiply-adds). Orthogonalising P (a r^2) is negligible.
 * The products' lane operations are priced by the product kernel, which
 * runs the same three calls on an L2-resident matrix. */
static void measured_powersgd(const tc_codec_spec *c, tc_codec_work *w)
{
    double r = c->rank;
    add(w, 4, 0, 0, 0, 0, 0);
    add(w, 4, 0, 0, 0, 0, 0);
    add(w, 0, 4, 4, 0, 0, 0);
    add_inplace(w, 0, 0, 0);
    w->gemm += (r + 3) + (r + 3) + (r + 2);
}

static void measured_signsgd(tc_codec_work *w)
{
    add(w, 4, 0, 0, OPS_SUMABS_F, OPS_SUMABS_I, 0);          /* s = ||x||_1 / d */
    add(w, 4, 0, 0, 0, OPS_PACK_I + OPS_REDUCE32_I, 3 / 32.0); /* sign bits */
    add(w, 0, 4, 4, 0, OPS_UNPACK_I, 2 / 32.0);              /* s sign into the bucket */
}

void tc_codec_work_measured(const tc_codec_spec *c, uint64_t d, tc_codec_work *out)
{
    memset(out, 0, sizeof *out);
    if (d < 1)
        d = 1;
    switch (c->kind) {
    case TC_CODEC_FP32:
    case TC_CODEC_FP16:
    case TC_CODEC_BF16: measured_cast(c, out); break;
    case TC_CODEC_INT8:
    case TC_CODEC_INT4:
        add(out, 4, 0, 0, OPS_MAXABS_F, OPS_MAXABS_I, 0); /* the scale */
        /* blocks of 2048, in place: quantize, sum of one, dequantize into the bucket */
        add_inplace(out, OPS_SROUND_F + OPS_DEQUANT_F, OPS_SROUND_I + OPS_WIDEN_I + OPS_DEQUANT_I, 0);
        break;
    case TC_CODEC_THC: measured_thc(d, out); break;
    case TC_CODEC_TOPK:
    case TC_CODEC_TOPK_SHARED:
    case TC_CODEC_RANDK: measured_sparse(c, d, out); break;
    case TC_CODEC_POWERSGD:
    case TC_CODEC_POWERSGD_BATCHED: measured_powersgd(c, out); break;
    case TC_CODEC_SIGNSGD: measured_signsgd(out); break;
    default: break;
    }
}

double tc_codec_cpu_lanes(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
    if (__builtin_cpu_supports("x86-64-v4"))
        return 16;
    if (__builtin_cpu_supports("x86-64-v3"))
        return 8;
#endif
    return 4;
}

/* Memory and arithmetic add up rather than overlap: each kernel streams its
 * block in and then works on it, and a single core's outstanding misses are
 * few (docs/MODEL.md, "Compute": sum against max on the measurements). The
 * copy moves 12 bytes per 4 copied: the read, the write-allocate and the
 * write-back; the in-place kernel 8 per 4: the read and the write-back. Each
 * kind of operation at the rate of its own calibration kernel. */
void tc_codec_predict_parts(const tc_codec_work *w, uint64_t d, const tc_codec_rates *r, double *mem_s,
                            double *ops_s)
{
    double D = (double)d;
    double streamed = w->read + w->written + w->alloc, inplace = 0;
    if (r->inplace_Bps > 0) {
        streamed -= w->inplace;
        inplace = w->inplace * D / (2 * r->inplace_Bps);
    }
    double mem = (r->copy_Bps > 0 ? streamed * D / (3 * r->copy_Bps) : 0) + inplace;
    if (r->random_ps > 0)
        mem += w->random * D / r->random_ps;
    else if (r->copy_Bps > 0)
        mem += w->random * LINE * D / (3 * r->copy_Bps);
    double lanes = r->lanes > 0 ? r->lanes : 1, wide = lanes > 8 ? lanes / 8 : 1;
    double ops = 0;
    if (r->lane_ops > 0) {
        double fl = w->vops + wide * w->narrow + lanes * w->sops;
        if (!(r->int_ops > 0))
            fl += w->iops;
        if (!(r->gemm_ops > 0))
            fl += wide * w->gemm;
        ops = fl * D / r->lane_ops;
    }
    if (r->int_ops > 0)
        ops += w->iops * D / r->int_ops;
    if (r->gemm_ops > 0)
        ops += w->gemm * D / r->gemm_ops;
    *mem_s = mem;
    *ops_s = ops;
}

double tc_codec_predict_s(const tc_codec_work *w, uint64_t d, const tc_codec_rates *r)
{
    double mem, ops;
    tc_codec_predict_parts(w, d, r, &mem, &ops);
    return mem + ops;
}

/* ---- an accelerator: one worker's kernels -------------------------------
 * Each kernel is one pass over memory (its reads and writes), the message
 * written by the encode and read by the decode at its wire width w, n
 * workers' contributions read by the decode where they are gathered. */

static double int_bytes(uint32_t b, uint32_t n)
{
    uint32_t l = 0;
    while (l < 32 && (1ull << l) < n)
        l++;
    return (double)((b + l + 7) / 8);
}

/* THC: the allreduce and switch paths write and read the integer sum's
 * width iw; ps pushes b-bit indices packed (b / 8 bytes) and pulls the sum
 * at iw, and the colocated server adds the n pushed shards of d / S
 * coordinates as integers (THC's homomorphic aggregation: no decoding). */
static void accel_thc(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_work *w)
{
    uint64_t C;
    double pad = (double)tc_cx_thc_dpad(d, &C) / (double)d, iw = int_bytes(c->bits, n);
    bool ps = c->path == TC_PATH_PS;
    double wp = ps ? c->bits / 8.0 : iw, S = tc_codec_servers(c, n);
    double T = fwht_published_factor(C); /* a transform: T reads and T writes of 4 bytes */
    tc_codec_work t = {0};
    add(&t, 4 * T, 4 * T, 0, 0, 0, 0); /* R x */
    add(&t, 4, 0, 0, 0, 0, 0);         /* max |R x| */
    add(&t, 4, wp, 0, 0, 0, 0);        /* quantize */
    if (ps)
        add(&t, n * wp / S, iw / S, 0, 0, 0, 0); /* the server's integer sum of n shards */
    add(&t, iw, 4, 0, 0, 0, 0);        /* levels of the sum */
    add(&t, 4 * T, 4 * T, 0, 0, 0, 0); /* R^T */
    if (c->error_feedback) {
        add(&t, wp, 4, 0, 0, 0, 0);        /* own levels */
        add(&t, 4 * T, 4 * T, 0, 0, 0, 0); /* R^T */
        add(&t, 8, 4, 0, 0, 0, 0);         /* e -= */
    }
    w->read = pad * t.read;
    w->written = pad * t.written;
    w->passes = t.passes;
}

/* The re-quantizing all-reduce (requant.c), the busiest worker, m the
 * fixed-width message's bytes per coordinate (int8: 1 + 4 / 256). Ring: its
 * first chunk (d / n) quantized, then n - 1 hops on chunks of d / n, each
 * reading the message and its own contribution and writing the new
 * message; tree: interior in one tree (half the data: its own, two
 * children's messages read, one written) and a leaf in the other (its own
 * half quantized); then the result decoded. The casts first cast the
 * bucket (x / n), as the hook does; their own contribution is then read at
 * 2 bytes. */
static void accel_requant(const tc_codec_spec *c, uint32_t n, tc_codec_work *w)
{
    bool cast = c->kind == TC_CODEC_FP16 || c->kind == TC_CODEC_BF16;
    double N = n, m = tc_cx_block_bytes(c, TC_REQUANT_BLOCK) / TC_REQUANT_BLOCK, own = cast ? 2 : 4;
    if (cast)
        add(w, 4, 2, 0, 0, 0, 0); /* cast(x / n) */
    if (c->path == TC_PATH_REQUANT_RING) {
        if (!cast)
            add(w, 4 / N, m / N, 0, 0, 0, 0);             /* the first chunk quantized */
        add(w, (m + own) * (N - 1) / N, m * (N - 1) / N, 0, 0, 0, 0); /* n - 1 hops */
    } else {
        double kids = n > 2 ? 2 : N - 1;
        add(w, (own + kids * m) / 2, m / 2, 0, 0, 0, 0); /* interior: own + children, re-quantized */
        if (!cast)
            add(w, 2, m / 2, 0, 0, 0, 0);                 /* a leaf: its half quantized */
    }
    add(w, m, 4, 0, 0, 0, 0); /* decode the result */
}

/* ps of fp32, the casts, int8 and int4 (block format m bytes per
 * coordinate): the worker's encode, the colocated server (n shards of
 * d / S read, summed in fp32, written once re-quantized or rounded) and the
 * decode of the pull; error feedback as the kind's. The server's work is
 * charged to the accelerator of the worker it is colocated with
 * (assumed: a device-resident server). */
static void accel_ps(const tc_codec_spec *c, uint32_t n, tc_codec_work *w)
{
    bool fp = c->kind == TC_CODEC_FP32;
    double m = tc_cx_block_bytes(c, TC_REQUANT_BLOCK) / TC_REQUANT_BLOCK, S = tc_codec_servers(c, n);
    add(w, 4, fp ? 4 : m, 0, 0, 0, 0);         /* x / n; cast; quantize */
    add(w, n * m / S, m / S, 0, 0, 0, 0);      /* the server's sum of n shards */
    if (!fp)
        add(w, m, 4, 0, 0, 0, 0);              /* decode the pull */
    if (c->error_feedback)
        add(w, fp ? 4 : 4 + m, 4, 0, 0, 0, 0); /* e -= own decoded */
}

void tc_codec_work_accel(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_work *out)
{
    memset(out, 0, sizeof *out);
    if (d < 1)
        d = 1;
    if (n < 1)
        n = 1;
    if (c->path == TC_PATH_REQUANT_RING || c->path == TC_PATH_REQUANT_TREE ||
        (c->path == TC_PATH_PS && c->kind != TC_CODEC_THC)) {
        if (c->path == TC_PATH_PS)
            accel_ps(c, n, out);
        else
            accel_requant(c, n, out);
        if (c->error_feedback)
            add(out, 8, 4, 0, 0, 0, 0); /* g + e */
        return;
    }
    double rho = (double)k_of(c, d) / (double)d, N = (double)n;
    bool ef = c->error_feedback;
    tc_codec_work *w = out;
    switch (c->kind) {
    case TC_CODEC_FP32:
        add(w, 4, 4, 0, 0, 0, 0); /* x / n */
        if (ef)
            add(w, 4, 4, 0, 0, 0, 0); /* e -= n (x / n) */
        break;
    case TC_CODEC_FP16:
    case TC_CODEC_BF16:
        add(w, 4, 2, 0, 0, 0, 0); /* cast(x / n) */
        add(w, 2, 4, 0, 0, 0, 0); /* cast back */
        if (ef)
            add(w, 6, 4, 0, 0, 0, 0); /* e -= n cast back */
        break;
    case TC_CODEC_INT8:
    case TC_CODEC_INT4: {
        double iw = int_bytes(c->kind == TC_CODEC_INT8 ? 8 : 4, n);
        add(w, 4, 0, 0, 0, 0, 0);  /* max |x| */
        add(w, 4, iw, 0, 0, 0, 0); /* quantize */
        add(w, iw, 4, 0, 0, 0, 0); /* dequantize the sum */
        if (ef)
            add(w, 4 + iw, 4, 0, 0, 0, 0); /* e -= q s / qmax */
        break;
    }
    case TC_CODEC_THC: accel_thc(c, d, n, w); break;
    case TC_CODEC_TOPK:
        add(w, 4, 0, 0, 0, 0, 0);              /* filter |x| */
        add(w, 4 * rho, 8 * rho, 0, 0, 0, 0);  /* gather values, write values and indices */
        add(w, 8 * N * rho, 4, 0, 0, 0, 0);    /* zero the output, read the n gathered sets */
        add(w, 4 * N * rho, 4 * N * rho, 0, 0, 0, 0); /* scatter-add n k values */
        if (ef)
            add(w, 4 * rho, 4 * rho, 0, 0, 0, 0); /* forget what was sent */
        break;
    case TC_CODEC_TOPK_SHARED:
    case TC_CODEC_RANDK:
        if (c->kind == TC_CODEC_TOPK_SHARED)
            add(w, 4, 4 * rho, 0, 0, 0, 0); /* the leader's filter, its indices */
        else
            add(w, 0, 4 * rho, 0, 0, 0, 0); /* the seed's indices */
        add(w, 8 * rho, 4 * rho, 0, 0, 0, 0);  /* gather values at the indices */
        add(w, 8 * rho, 4, 0, 0, 0, 0);        /* zero the output, read values and indices */
        add(w, 0, 4 * rho, 0, 0, 0, 0);        /* scatter */
        if (ef)
            add(w, 4 * rho, 4 * rho, 0, 0, 0, 0);
        break;
    case TC_CODEC_POWERSGD:
    case TC_CODEC_POWERSGD_BATCHED: {
        /* the bucket as one a x b matrix at the rank the codec uses on it:
         * at most min(a, b); per tensor, none where _should_compress
         * declines, and then the bucket goes through the plain all-reduce */
        uint64_t a, b;
        uint32_t r = tc_cx_psgd_rank_on(c, d, &a, &b);
        if (!r) {
            add(w, 4, 4, 0, 0, 0, 0); /* x / n */
            if (ef)
                add(w, 4, 4, 0, 0, 0, 0);
            break;
        }
        double P = 4.0 * (double)a * r / (double)d, Q = 4.0 * (double)b * r / (double)d;
        add(w, 4 + Q, P, 0, 0, 0, 0);     /* P = M Q */
        add(w, P, P, 0, 0, 0, 0);         /* orthogonalise P */
        add(w, 4 + P, Q, 0, 0, 0, 0);     /* Q = M^T P */
        add(w, P + Q, 4, 0, 0, 0, 0);     /* P Q^T */
        if (ef)
            add(w, 8, 4, 0, 0, 0, 0); /* e = M - P Q^T */
        break;
    }
    case TC_CODEC_SIGNSGD:
        add(w, 4, 0, 0, 0, 0, 0);           /* ||x||_1 */
        add(w, 4, 1 / 8.0, 0, 0, 0, 0);     /* sign bits */
        add(w, N / 8, 4, 0, 0, 0, 0);       /* mean of the n decoded vectors */
        if (ef)
            add(w, 4, 4, 0, 0, 0, 0);       /* e -= s sign */
        break;
    default:
        add(w, 4, 4, 0, 0, 0, 0);
        break;
    }
    /* error feedback forms g + e before the encode: read both, write the sum */
    if (ef)
        add(w, 8, 4, 0, 0, 0, 0);
}

const char *tc_codec_cost_source(const tc_codec_spec *c)
{
    switch (c->kind) {
    case TC_CODEC_FP32: return "none (fp32 does no codec work)";
    case TC_CODEC_THC:
        return "multi-pass roofline, the transform at the published kernel's cost (Dao-AILab "
               "fast-hadamard-transform: fp32 at 1.0-1.2x memcpy, scaled by memory bandwidth)";
    case TC_CODEC_POWERSGD:
    case TC_CODEC_POWERSGD_BATCHED:
        return "multi-pass roofline of topocc's kernels (no published GPU throughput found; on one H200, PyTorch "
               "2.11's powerSGD_hook took 5-29x it on ResNet-18/50, more with the rank: small kernels, and a "
               "device synchronisation per bucket: docs/VALIDATION.md)";
    case TC_CODEC_TOPK:
    case TC_CODEC_TOPK_SHARED:
        return "multi-pass roofline of topocc's kernels (no published GPU throughput found; on one H200, torch.topk "
               "of 1% with its gather and scatter took about 20x it: docs/VALIDATION.md)";
    case TC_CODEC_FP16:
    case TC_CODEC_BF16:
        return "multi-pass roofline of topocc's kernels (on one H200, PyTorch 2.11's fp16 and bf16 compression "
               "hooks took 1.2-1.3x it: docs/VALIDATION.md)";
    default: return "multi-pass roofline of topocc's kernels (no published GPU throughput found)";
    }
}
