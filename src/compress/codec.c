/*
 * codec.c - the codec instance: validation of a spec against a bucket,
 * the error-feedback memories, and DDP's per-bucket aggregation dispatched to
 * the kind's kernels.
 *
 * The aggregation path (docs/MODEL.md, "Aggregation paths") picks the
 * emulation: the kind's own for allreduce, switch (the same integer sums)
 * and ps where the server's sum is the collective's (fp32, the casts' fp32
 * sum rounded once, THC's integers); requant.c for the re-quantizing paths
 * and the int8/int4 server's re-quantization.
 *
 * Error feedback [Seide et al., "1-bit SGD", Interspeech 2014; Karimireddy et
 * al., ICML 2019]: worker w compresses p_w = g_w + e_w and keeps
 * e_w <- p_w - (what its own contribution decodes to). The memory buffer holds
 * p_w during the step (g_w is added into it in place), and the kind's
 * kernels overwrite it with the new memory once they have read it.
 */
#include <math.h>
#include <stdlib.h>
#include "compress/codec_int.h"

static const cx_ops *ops_of(tc_codec_kind k)
{
    switch (k) {
    case TC_CODEC_FP32:
    case TC_CODEC_FP16:
    case TC_CODEC_BF16: return &tc_cx_cast_ops;
    case TC_CODEC_INT8:
    case TC_CODEC_INT4: return &tc_cx_quant_ops;
    case TC_CODEC_THC: return &tc_cx_thc_ops;
    case TC_CODEC_TOPK: return &tc_cx_topk_ops;
    case TC_CODEC_TOPK_SHARED: return &tc_cx_topk_shared_ops;
    case TC_CODEC_RANDK: return &tc_cx_randk_ops;
    case TC_CODEC_POWERSGD:
    case TC_CODEC_POWERSGD_BATCHED: return &tc_cx_powersgd_ops;
    case TC_CODEC_SIGNSGD: return &tc_cx_signsgd_ops;
    default: return NULL;
    }
}

bool tc_cx_is_sparse(tc_codec_kind k)
{
    return k == TC_CODEC_TOPK || k == TC_CODEC_TOPK_SHARED || k == TC_CODEC_RANDK;
}

uint64_t tc_cx_k(double ratio, uint64_t d)
{
    if (!(ratio > 0) || !isfinite(ratio))
        return 0;
    /* the tolerance keeps ratio = 0.1 of d = 10 at k = 1 despite rounding */
    double k = ceil(ratio * (double)d * (1 - 1e-12));
    return k > 1.8e19 ? UINT64_MAX : (uint64_t)k;
}

tc_status tc_codec_fits(const tc_codec_spec *c, uint64_t d, tc_err *err)
{
    if (d < 1)
        d = 1;
    /* top-k's wire carries 4-byte indices (tc_codec_wire_cost) */
    if ((c->kind == TC_CODEC_TOPK || c->kind == TC_CODEC_TOPK_SHARED) && d > UINT32_MAX)
        return tc_fail(err, TC_EINVAL,
                       "%s: a bucket of %llu coordinates: its 4-byte indices address 1 to 2^32 - 1 (give a smaller "
                       "bucket)",
                       tc_codec_kind_name(c->kind), (unsigned long long)d);
    if (c->kind != TC_CODEC_POWERSGD_BATCHED)
        return TC_OK;
    uint64_t a, b;
    tc_cx_psgd_shape(d, &a, &b);
    uint64_t lim = a < b ? a : b;
    if (c->rank > lim)
        return tc_fail(err, TC_EINVAL,
                       "%s: rank=%u does not fit the %llu x %llu matrix of a %llu-coordinate bucket: accepted are 1 to %llu",
                       tc_codec_kind_name(c->kind), c->rank, (unsigned long long)a, (unsigned long long)b,
                       (unsigned long long)d, (unsigned long long)lim);
    return TC_OK;
}

static tc_status create(const tc_codec_spec *spec, uint64_t d, const tc_codec_tensor *shapes, size_t nshapes,
                        uint32_t n, tc_codec **out, tc_err *err)
{
    *out = NULL;
    const cx_ops *ops = spec ? ops_of(spec->kind) : NULL;
    if (!ops)
        return tc_fail(err, TC_EINVAL, "unknown codec kind: parse one with tc_codec_parse");
    const char *name = tc_codec_kind_name(spec->kind);
    if (d < 1 || d > UINT32_MAX)
        return tc_fail(err, TC_EINVAL, "%s: a bucket of %llu coordinates: accepted are 1 to 2^32 - 1 (32-bit indices)",
                       name, (unsigned long long)d);
    if (n < 1 || n > (1u << 24))
        return tc_fail(err, TC_EINVAL, "%s: %u workers: accepted are 1 to 2^24", name, n);
    tc_status st = tc_codec_check_workers(spec, n, err);
    if (st)
        return st;
    uint64_t k = 0;
    if (tc_cx_is_sparse(spec->kind)) {
        k = tc_cx_k(spec->ratio, d);
        if (k < 1 || k > d)
            return tc_fail(err, TC_EINVAL,
                           "%s: ratio=%g keeps k = %llu of %llu coordinates: k must be 1 to d (accepted are 0 < ratio <= 1)",
                           name, spec->ratio, (unsigned long long)k, (unsigned long long)d);
    }
    tc_codec *c = tc_calloc(1, sizeof *c);
    if (!c)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    c->spec = *spec;
    c->ops = ops;
    c->d = d;
    c->n = n;
    c->k = k;
    c->ef = spec->error_feedback;
    c->xin = tc_calloc(n, sizeof *c->xin);
    st = c->xin ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK && shapes && tc_codec_per_tensor(spec->kind)) {
        c->shapes = tc_calloc(nshapes, sizeof *c->shapes);
        c->nshapes = nshapes;
        if (c->shapes)
            memcpy(c->shapes, shapes, nshapes * sizeof *shapes);
        else
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (st == TC_OK && c->ef) {
        c->mem = tc_calloc(n, sizeof *c->mem);
        c->emem = tc_calloc(n, sizeof *c->emem);
        st = c->mem && c->emem ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t w = 0; st == TC_OK && w < n; w++) {
            c->mem[w] = c->emem[w] = tc_calloc(d, sizeof **c->mem);
            if (!c->mem[w])
                st = tc_fail(err, TC_EINTERNAL, "out of memory for %u error-feedback memories of %llu floats", n,
                             (unsigned long long)d);
        }
    }
    if (st == TC_OK)
        st = ops->init(c, err);
    if (st == TC_OK)
        st = tc_cx_path_init(c, err);
    if (st) {
        tc_codec_free(c);
        return st;
    }
    *out = c;
    return TC_OK;
}

tc_status tc_codec_create(const tc_codec_spec *spec, uint64_t d, uint32_t n, tc_codec **out, tc_err *err)
{
    return create(spec, d, NULL, 0, n, out, err);
}

tc_status tc_codec_create_shaped(const tc_codec_spec *spec, const tc_codec_tensor *t, size_t nt, uint32_t n,
                                 tc_codec **out, tc_err *err)
{
    *out = NULL;
    if (!t || nt == 0)
        return tc_fail(err, TC_EINVAL, "tc_codec_create_shaped: no tensors (give at least one rows x cols)");
    uint64_t d = 0;
    for (size_t i = 0; i < nt; i++) {
        if (t[i].rows < 1 || t[i].cols < 1 || t[i].rows > UINT32_MAX || t[i].cols > UINT32_MAX / t[i].rows ||
            d + t[i].rows * t[i].cols > UINT32_MAX)
            return tc_fail(err, TC_EINVAL,
                           "tensor %zu: %llu x %llu: accepted are rows, cols >= 1 and a bucket of at most 2^32 - 1 "
                           "coordinates", i, (unsigned long long)t[i].rows, (unsigned long long)t[i].cols);
        d += t[i].rows * t[i].cols;
    }
    return create(spec, d, t, nt, n, out, err);
}

bool tc_codec_plain_step(const tc_codec_spec *c, uint64_t step)
{
    return (c->kind == TC_CODEC_POWERSGD || c->kind == TC_CODEC_POWERSGD_BATCHED) && step < c->start;
}

void tc_codec_free(tc_codec *c)
{
    if (!c)
        return;
    for (uint32_t w = 0; c->mem && w < c->n; w++)
        free(c->mem[w]);
    free(c->mem);
    free(c->emem);
    free(c->xin);
    free(c->q8);
    free(c->acc);
    free(c->rot);
    free(c->h16);
    free(c->facc);
    free(c->keys);
    free(c->cand);
    free(c->ckey);
    free(c->idx);
    free(c->vals);
    free(c->vsum);
    free(c->bitmap);
    free(c->bits);
    free(c->racc);
    free(c->rtmp);
    for (uint32_t i = 0; c->rdepth && i < c->ndepth; i++)
        free(c->rdepth[i]);
    free(c->rdepth);
    free(c->rkid);
    free(c->shapes);
    free(c->pt);
    free(c->P);
    free(c->Q);
    free(c->tau);
    free(c->work);
    free(c);
}

CX_WIDE static void add_into(float *restrict m, const float *restrict g, uint64_t d)
{
    CX_LOOP(i, d, m[i] += g[i]);
}

/* The hooks' plain steps (default._allreduce_fut: divide by n, all-reduce),
 * computed as the fp32 codec does, x * (1 / n) summed in worker order, so
 * that they match its run bit for bit; the memories are left alone. */
CX_WIDE static void plain_mean(const tc_codec *c, const float *const *g, float *restrict out)
{
    float inv = 1.0f / (float)c->n;
    const float *g0 = g[0];
    CX_LOOP(i, c->d, out[i] = g0[i] * inv);
    for (uint32_t w = 1; w < c->n; w++) {
        const float *gw = g[w];
        CX_LOOP(i, c->d, out[i] += gw[i] * inv);
    }
}

tc_status tc_codec_aggregate(tc_codec *c, const float *const *grads, float *out, uint64_t step, tc_err *err)
{
    if (!c || !grads || !out)
        return tc_fail(err, TC_EINVAL, "tc_codec_aggregate: NULL codec, gradients or output");
    for (uint32_t w = 0; w < c->n; w++)
        if (!grads[w])
            return tc_fail(err, TC_EINVAL, "tc_codec_aggregate: worker %u has no gradient", w);
    if (tc_codec_plain_step(&c->spec, step)) {
        plain_mean(c, grads, out);
        return TC_OK;
    }
    for (uint32_t w = 0; w < c->n; w++) {
        if (!c->ef) {
            c->xin[w] = grads[w];
            continue;
        }
        add_into(c->mem[w], grads[w], c->d);
        c->xin[w] = c->mem[w];
    }
    if (tc_cx_path_own(c))
        tc_cx_path_aggregate(c, c->xin, c->ef ? c->emem : NULL, out, step);
    else
        c->ops->aggregate(c, c->xin, c->ef ? c->emem : NULL, out, step);
    return TC_OK;
}

uint64_t tc_codec_dim(const tc_codec *c)
{
    return c->d;
}

const float *tc_codec_memory(const tc_codec *c, uint32_t worker)
{
    return c->ef && worker < c->n ? c->mem[worker] : NULL;
}
