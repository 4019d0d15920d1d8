/*
 * cost.c - what a codec costs: bytes on the wire and the collective that
 * carries them, and the multi-pass roofline of its encode + decode on an
 * accelerator (the passes are counted in work.c). docs/MODEL.md,
 * "Compression codecs", has the tables this file implements.
 *
 * Integer sums: an all-reduce of b-bit integers over n workers must carry
 * b + ceil(log2 n) bits per coordinate so that no partial sum overflows,
 * rounded up to whole bytes (an integer data type). int8's levels -127..127
 * need 9 bits from n = 2 on: int8 costs as much as bf16 on any real job.
 * (NCCL has 8-, 32- and 64-bit integer types only; the byte-rounded width is
 * the ideal an implementation can reach, e.g. with a custom reduction.)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include "topocc/profile.h"
#include "compress/codec_int.h"

static uint32_t ceil_log2(uint32_t n)
{
    uint32_t b = 0;
    while (b < 32 && (1ull << b) < n)
        b++;
    return b;
}

/* Bytes per coordinate of an n-way sum of b-bit integers. */
static double int_bytes(uint32_t b, uint32_t n)
{
    return (double)((b + ceil_log2(n) + 7) / 8);
}

static uint64_t k_of(const tc_codec_spec *c, uint64_t d)
{
    uint64_t k = tc_cx_k(c->ratio, d);
    return k < 1 ? 1 : k > d ? d : k;
}

static uint32_t int_bits(const tc_codec_spec *c)
{
    return c->kind == TC_CODEC_INT8 ? 8 : c->kind == TC_CODEC_INT4 ? 4 : c->bits;
}

/* ---- aggregation paths (docs/MODEL.md, "Aggregation paths") ----------------
 * The allreduce path's phases are its collectives. requant: one all-reduce
 * of the fixed-width buffer, chunk by chunk as it travels (the ring's n
 * chunks, the tree's two halves), by the ring or the tree. ps: each worker
 * pushes its S shards and pulls S; THC pushes its b-bit indices packed and
 * pulls the integer sums at the all-reduce's width, int8 and int4 push and
 * pull the block format (the server re-quantizes), fp32 and the casts their
 * own width; THC keeps its all-reduce(max) of the scale. switch: the
 * all-reduce's integer sum reduced in the switches, the scale as before. */
static void add_phase(tc_codec_wire *w, tc_wire_how how, tc_op op, double size, double pull)
{
    if (w->nphases < sizeof w->phase / sizeof w->phase[0])
        w->phase[w->nphases++] = (tc_wire_phase){how, op, size, pull};
}

/* Bytes of len coordinates in `parts` chunks of the block format. */
static double chunked(const tc_codec_spec *c, uint64_t len, uint32_t parts)
{
    double b = 0;
    for (uint32_t k = 0; k < parts; k++)
        b += tc_cx_block_bytes(c, tc_cx_chunk_len(len, parts, k));
    return b;
}

static void ps_phases(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_wire *out)
{
    uint32_t S = tc_codec_servers(c, n);
    double push = 0, pull = 0;
    if (c->kind == TC_CODEC_THC) {
        uint64_t dp = tc_cx_thc_dpad(d, NULL);
        for (uint32_t s = 0; s < S; s++) {
            uint64_t m = tc_cx_chunk_len(dp, S, s);
            push += (double)((m * c->bits + 7) / 8);
            pull += int_bytes(c->bits, n) * (double)m;
        }
        out->integer_sums = "thc on ps: b-bit table indices pushed packed, summed as integers by the server (THC's "
                            "homomorphic aggregation), pulled in ceil((b + ceil(log2 n)) / 8) bytes per padded "
                            "coordinate, plus a 4-byte all-reduce(max) of the scale";
    } else {
        push = pull = chunked(c, d, S);
        out->integer_sums = NULL;
    }
    out->servers = S;
    add_phase(out, TC_WIRE_PS, TC_OP_ALLREDUCE, push, pull);
    out->collectives = 1;
    out->size[0] = (push + pull) / 2; /* an all-reduce of this moves what push and pull move */
    out->size[1] = out->size[2] = 0;
    if (c->kind == TC_CODEC_THC) {
        add_phase(out, TC_WIRE_AUTO, TC_OP_ALLREDUCE, 4, 0);
        out->collectives = 2;
        out->size[1] = 4;
    }
    out->bits_per_coord = 8 * (push + out->size[1]) / (double)d;
}

void tc_cx_wire_phases(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_wire *out)
{
    out->path = c->path;
    out->nphases = 0;
    switch (c->path) {
    case TC_PATH_REQUANT_RING:
    case TC_PATH_REQUANT_TREE: {
        bool ring = c->path == TC_PATH_REQUANT_RING;
        double b = chunked(c, d, ring ? n : 2);
        add_phase(out, ring ? TC_WIRE_RING : TC_WIRE_TREE, TC_OP_ALLREDUCE, b, 0);
        out->op = TC_OP_ALLREDUCE;
        out->collectives = 1;
        out->size[0] = b;
        out->size[1] = out->size[2] = 0;
        out->integer_sums = NULL;
        out->bits_per_coord = 8 * b / (double)d;
        break;
    }
    case TC_PATH_PS: ps_phases(c, d, n, out); break;
    case TC_PATH_SWITCH:
        add_phase(out, TC_WIRE_SWITCH, TC_OP_ALLREDUCE, out->size[0], 0);
        add_phase(out, TC_WIRE_AUTO, TC_OP_ALLREDUCE, out->size[1], 0);
        break;
    default:
        for (uint32_t k = 0; k < out->collectives && k < 3; k++)
            add_phase(out, TC_WIRE_AUTO, out->op, out->size[k], 0);
        break;
    }
}

void tc_codec_wire_cost(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_wire *out)
{
    memset(out, 0, sizeof *out);
    if (d < 1)
        d = 1;
    if (n < 1)
        n = 1;
    double D = (double)d, N = (double)n;
    out->op = TC_OP_ALLREDUCE;
    out->collectives = 1;
    switch (c->kind) {
    case TC_CODEC_FP32:
        out->size[0] = 4 * D;
        break;
    case TC_CODEC_FP16:
    case TC_CODEC_BF16:
        out->size[0] = 2 * D;
        break;
    case TC_CODEC_INT8:
    case TC_CODEC_INT4:
    case TC_CODEC_THC: {
        double len = c->kind == TC_CODEC_THC ? (double)tc_cx_thc_dpad(d, NULL) : D;
        out->collectives = 2;
        out->size[0] = int_bytes(int_bits(c), n) * len;
        out->size[1] = 4; /* all-reduce(max) of the shared scale */
        out->integer_sums =
            c->kind == TC_CODEC_THC
                ? "thc: b-bit table indices summed in ceil((b + ceil(log2 n)) / 8) bytes per padded coordinate, plus a 4-byte all-reduce(max) of the scale"
                : c->kind == TC_CODEC_INT8
                      ? "int8: levels -127..127 summed in ceil((8 + ceil(log2 n)) / 8) bytes: 2 bytes (as bf16) for 2 to 256 workers, plus a 4-byte all-reduce(max) of the scale"
                      : "int4: levels -7..7 summed in ceil((4 + ceil(log2 n)) / 8) bytes: 1 byte up to 16 workers, 2 up to 4096, plus a 4-byte all-reduce(max) of the scale";
        break;
    }
    case TC_CODEC_TOPK:
        out->op = TC_OP_ALLGATHER;
        out->size[0] = N * 8 * (double)k_of(c, d); /* the gathered output: n sets of k (value, index) */
        break;
    case TC_CODEC_TOPK_SHARED:
        out->collectives = 2;
        out->size[0] = 4 * (double)k_of(c, d); /* values */
        out->size[1] = 4 * (double)k_of(c, d); /* the leader's indices, as an all-reduce others add zeros to */
        break;
    case TC_CODEC_RANDK:
        out->size[0] = 4 * (double)k_of(c, d);
        break;
    case TC_CODEC_POWERSGD:
    case TC_CODEC_POWERSGD_BATCHED: /* powersgd.c: the bucket as one a x b matrix */
        tc_cx_psgd_wire(c, NULL, 0, d, out);
        break;
    case TC_CODEC_SIGNSGD:
        out->op = TC_OP_ALLGATHER;
        out->size[0] = N * (double)((d + 7) / 8 + 4); /* sign bits + the worker's scale */
        break;
    default:
        break;
    }
    double per_worker = out->op == TC_OP_ALLGATHER ? out->size[0] / N : out->size[0] + out->size[1] + out->size[2];
    out->bits_per_coord = 8 * per_worker / D;
    tc_cx_wire_phases(c, d, n, out);
}

double tc_codec_send_bytes(const tc_codec_spec *c, uint64_t d)
{
    if (d < 1)
        d = 1;
    switch (c->kind) {
    case TC_CODEC_FP32: return 4.0 * (double)d;
    case TC_CODEC_FP16:
    case TC_CODEC_BF16: return 2.0 * (double)d;
    case TC_CODEC_INT8:
    case TC_CODEC_INT4: return (double)((d * int_bits(c) + 7) / 8) + 4;
    default: {
        tc_codec_wire w;
        tc_codec_wire_cost(c, d, 1, &w);
        return (double)d * w.bits_per_coord / 8;
    }
    }
}

/* Memory traffic of one worker's kernels on an accelerator, bytes per
 * coordinate: the passes work.c counts (tc_codec_work_accel; docs/MODEL.md,
 * "Compute", has the table). */
double tc_codec_bytes_touched(const tc_codec_spec *c, uint64_t d, uint32_t n)
{
    tc_codec_work w;
    tc_codec_work_accel(c, d, n, &w);
    return w.read + w.written;
}

/* Arithmetic per coordinate that can bound an accelerator's throughput:
 * PowerSGD's three products, 6 a b r per step, and the orthogonalisation of
 * the a x r matrix P, 4 a r^2: Householder QR's 2 m n^2 - (2/3) n^3
 * (https://org-jutil.sourceforge.net/doc/coal/0.3/org/jutil/math/matrix/HouseholderQRDecomposer.html),
 * taken as 2 a r^2, and forming Q as much again (assumed). The bucket is
 * one a x b matrix at the rank the codec uses on it (tc_cx_psgd_rank_on: at
 * most min(a, b); per tensor, none where the matrix is not compressed).
 * THC's transform is in its bytes, at the published kernel's cost; the
 * other codecs are memory bound. */
static double flops_per_coord(const tc_codec_spec *c, uint64_t d)
{
    if (c->kind == TC_CODEC_POWERSGD || c->kind == TC_CODEC_POWERSGD_BATCHED) {
        uint64_t a, b;
        double r = tc_cx_psgd_rank_on(c, d < 1 ? 1 : d, &a, &b);
        return (6.0 * (double)a * (double)b * r + 4.0 * (double)a * r * r) / (double)(d < 1 ? 1 : d);
    }
    return 0;
}

/* Peak figures from the vendors' data sheets:
 * NVIDIA H100 Tensor Core GPU datasheet (SXM5): 3.35 TB/s HBM3, 989 TFLOP/s
 *   dense BF16 (1,979 with sparsity);
 * Google Cloud TPU v5p documentation: 2,765 GB/s HBM2e, 459 TFLOP/s BF16.
 * The compute cap (PowerSGD's products) uses the dense 16-bit peak:
 * optimistic for products of float32 matrices, which the tensor cores run
 * only as TF32. */
/* The accelerators are the "accelerator" profiles on the profile search
 * path (docs/PROFILES.md; dense16_TFLOPS, mem_TBps with their sources).
 * tc_accel_find's table holds the default path's, read once; a directory
 * given (--profiles) is searched by tc_accel_lookup, which reads the files
 * each time. "tpu" names tpu-v5p. */
#define MAX_ACCELS 64
static tc_accel accel_tab[MAX_ACCELS];
static char accel_name[MAX_ACCELS][64];
static size_t n_accels;
static once_flag accel_once = ONCE_FLAG_INIT;

static void accel_load(void)
{
    char names[4096];
    tc_profile_list_kind(NULL, "accelerator", names, sizeof names);
    for (char *save = NULL, *nm = strtok_r(names, ", ", &save); nm && n_accels < MAX_ACCELS;
         nm = strtok_r(NULL, ", ", &save)) {
        tc_profile *p = NULL;
        tc_err err;
        double fl = 0, mem = 0;
        if (tc_profile_load(nm, NULL, &p, &err) != TC_OK)
            continue;
        if (tc_profile_num(p, "dense16_TFLOPS", &fl, &err) == TC_OK && tc_profile_num(p, "mem_TBps", &mem, &err) == TC_OK &&
            fl > 0 && mem > 0) {
            snprintf(accel_name[n_accels], sizeof accel_name[0], "%s", nm);
            accel_tab[n_accels] = (tc_accel){accel_name[n_accels], mem * 1e12, fl * 1e12};
            n_accels++;
        }
        tc_profile_free(p);
    }
}

const tc_accel *tc_accel_find(const char *name)
{
    if (!name)
        return NULL;
    call_once(&accel_once, accel_load);
    if (strcmp(name, "tpu") == 0)
        name = "tpu-v5p";
    for (size_t i = 0; i < n_accels; i++)
        if (strcmp(name, accel_tab[i].name) == 0)
            return &accel_tab[i];
    return NULL;
}

const char *tc_accel_profile_name(const char *name)
{
    return name && strcmp(name, "tpu") == 0 ? "tpu-v5p" : name;
}

tc_status tc_accel_from_profile(const tc_profile *p, tc_accel *out, char *namebuf, size_t len, tc_err *err)
{
    if (strcmp(tc_profile_kind(p), "accelerator") != 0)
        return tc_fail(err, TC_EINVAL, "profile %s: kind '%s': --accel needs an accelerator profile (a chip)",
                       tc_profile_path(p), tc_profile_kind(p));
    double fl = 0, mem = 0;
    tc_status st = tc_profile_num(p, "dense16_TFLOPS", &fl, err);
    if (st == TC_OK)
        st = tc_profile_num(p, "mem_TBps", &mem, err);
    if (st)
        return st;
    if (!(fl > 0 && fl < 1e12) || !(mem > 0 && mem < 1e12))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be positive, not %g",
                       tc_profile_path(p), fl > 0 && fl < 1e12 ? "mem_TBps" : "dense16_TFLOPS",
                       fl > 0 && fl < 1e12 ? mem : fl);
    const char *name = tc_profile_name(p);
    if (strlen(name) >= len)
        return tc_fail(err, TC_EINTERNAL, "internal: accelerator name '%s' longer than its buffer", name);
    snprintf(namebuf, len, "%s", name);
    *out = (tc_accel){namebuf, mem * 1e12, fl * 1e12};
    return TC_OK;
}

void tc_accel_names_in(const char *dir, char *buf, size_t len)
{
    tc_profile_list_kind(dir, "accelerator", buf, len);
}

tc_status tc_accel_profile_load(const char *name, const char *dir, tc_profile **out, tc_err *err)
{
    *out = NULL;
    const char *pn = tc_accel_profile_name(name);
    if (!pn || !tc_profile_exists(pn, dir)) {
        char known[2048];
        tc_accel_names_in(dir, known, sizeof known);
        return tc_fail(err, TC_EINVAL, "unknown accelerator '%s': accepted are %s (tpu: tpu-v5p)", name ? name : "",
                       known);
    }
    return tc_profile_load(pn, dir, out, err);
}

tc_status tc_accel_lookup(const char *name, const char *dir, tc_accel *out, char *namebuf, size_t len, tc_err *err)
{
    tc_profile *p = NULL;
    tc_status st = tc_accel_profile_load(name, dir, &p, err);
    if (st == TC_OK)
        st = tc_accel_from_profile(p, out, namebuf, len, err);
    tc_profile_free(p);
    return st;
}

void tc_accel_names(char *buf, size_t len)
{
    call_once(&accel_once, accel_load);
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n_accels && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", accel_tab[i].name);
        at += w > 0 ? (size_t)w : 0;
    }
    if (!n_accels && len)
        snprintf(buf, len, "none (no accelerator profile found)");
}

/* The multi-pass roofline: the passes' bytes at the memory bandwidth, capped
 * by the products' flops at the dense peak. THC's transform passes are in
 * units of a memcpy, so the published kernel's cost scales with the
 * profile's memory bandwidth. */
double tc_codec_accel_throughput(const tc_codec_spec *c, const tc_accel *a, uint64_t d, uint32_t n)
{
    double mem = 4 * a->mem_Bps / tc_codec_bytes_touched(c, d, n);
    double f = flops_per_coord(c, d);
    double cap = f > 0 ? 4 * a->flops / f : INFINITY;
    return mem < cap ? mem : cap;
}
