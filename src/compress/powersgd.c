/*
 * powersgd.c - PowerSGD of rank r [Vogels, Karimireddy, Jaggi, "PowerSGD:
 * Practical Low-Rank Gradient Compression for Distributed Optimization",
 * NeurIPS 2019, Algorithm 1], as PyTorch DDP's powerSGD_hook applies it to
 * one bucket.
 *
 * Model: the bucket of d coordinates is the a x b matrix M (row i is
 * coordinates i b .. i b + b - 1; b = ceil(sqrt d), a = ceil(d / b), the last
 * row zero-padded). Per step, with Q (b x r) shared and warm-started from the
 * previous step (random normal at step 0, from the seed):
 *   P_w = M_w Q; all-reduce(mean) P; P <- orthonormal basis of P (Householder
 *   QR: LAPACK sgeqrf + sorgqr); Q_w = M_w^T P; all-reduce(mean) Q;
 *   decoded = P Q^T (the same on every worker).
 * Two all-reduces of a r and b r floats; 32 r (a + b) / d bits per
 * coordinate. Flops per step: 2 a b r (P) + 2 a b r (Q) + 2 a b r (decode).
 * Error feedback as the DDP hook: memory_w = M_w - P Q^T, the input minus the
 * applied update (the paper's Algorithm 2 subtracts the local decompression
 * P Q_w^T instead; the memories' sum is the same).
 *
 * Storage: the bucket as it lies in memory is the column-major b x a matrix
 * X = M^T, so M_w Q = X^T Q, M_w^T P = X P and P Q^T = (Q P^T)^T need no copy;
 * the last, partial column of X (length `tail`) goes through gemv / ger.
 */
#include <math.h>
#include "core/blas.h"
#include "compress/codec_int.h"

#define PURPOSE_Q0 6

/* P = X^T Q + beta P */
static void mul_p(const tc_codec *c, const float *x, float beta)
{
    int a = (int)c->pa, b = (int)c->pb, full = (int)c->pfull, r = (int)c->r;
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, full, r, b, 1.0f, x, b, c->Q, b, beta, c->P, a);
    if (c->ptail)
        cblas_sgemv(CblasColMajor, CblasTrans, (int)c->ptail, r, 1.0f, c->Q, b, x + c->pfull * c->pb, 1, beta,
                    c->P + full, a);
}

/* Qw = X P + beta Qw */
static void mul_q(const tc_codec *c, const float *x, float *Qw, float beta)
{
    int a = (int)c->pa, b = (int)c->pb, full = (int)c->pfull, r = (int)c->r;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, b, r, full, 1.0f, x, b, c->P, a, beta, Qw, b);
    if (c->ptail)
        cblas_sger(CblasColMajor, (int)c->ptail, r, 1.0f, x + c->pfull * c->pb, 1, c->P + full, a, Qw, b);
}

/* out = (P Q^T)^T restricted to the d coordinates */
static void decode(const tc_codec *c, float *out)
{
    int a = (int)c->pa, b = (int)c->pb, full = (int)c->pfull, r = (int)c->r;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, full, r, 1.0f, c->Q, b, c->P, a, 0.0f, out, b);
    if (c->ptail)
        cblas_sgemv(CblasColMajor, CblasNoTrans, (int)c->ptail, r, 1.0f, c->Q, b, c->P + full, a, 0.0f,
                    out + c->pfull * c->pb, 1);
}

static void orthogonalize(tc_codec *c)
{
    lapack_int a = (lapack_int)c->pa, r = (lapack_int)c->r;
    LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, a, r, c->P, a, c->tau, c->work, c->lwork);
    LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, a, r, r, c->P, a, c->tau, c->work, c->lwork);
}

void cx_psgd_shape(uint64_t d, uint64_t *a, uint64_t *b)
{
    uint64_t s = (uint64_t)ceil(sqrt((double)d));
    while (s * s < d)
        s++;
    while (s > 1 && (s - 1) * (s - 1) >= d)
        s--;
    *b = s;
    *a = (d + s - 1) / s;
}

static tc_status psgd_init(tc_codec *c, tc_err *err)
{
    cx_psgd_shape(c->d, &c->pa, &c->pb);
    uint64_t b = c->pb;
    c->pfull = c->d / b;
    c->ptail = c->d - c->pfull * b;
    c->r = c->spec.rank;
    uint64_t lim = c->pa < c->pb ? c->pa : c->pb;
    if (c->r < 1 || c->r > lim)
        return tc_fail(err, TC_EINVAL,
                       "powersgd: rank=%u does not fit the %llu x %llu matrix of a %llu-coordinate bucket: accepted are 1 to %llu",
                       c->r, (unsigned long long)c->pa, (unsigned long long)c->pb, (unsigned long long)c->d,
                       (unsigned long long)lim);
    if (c->pb > 0x7fffffffULL)
        return tc_fail(err, TC_EINVAL, "powersgd: bucket too large for 32-bit BLAS dimensions");
    c->P = tc_calloc(c->pa * c->r, sizeof *c->P);
    c->Q = tc_calloc(c->pb * c->r, sizeof *c->Q);
    c->tau = tc_calloc(c->r, sizeof *c->tau);
    if (!c->P || !c->Q || !c->tau)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    float q1 = 0, q2 = 0;
    lapack_int a = (lapack_int)c->pa, r = (lapack_int)c->r;
    LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, a, r, c->P, a, c->tau, &q1, -1);
    LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, a, r, r, c->P, a, c->tau, &q2, -1);
    c->lwork = (int)(q1 > q2 ? q1 : q2);
    if (c->lwork < (int)c->r)
        c->lwork = (int)c->r;
    c->work = tc_calloc((size_t)c->lwork, sizeof *c->work);
    if (!c->work)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    /* Q0 ~ N(0, 1) entries (Box-Muller) */
    uint64_t key = cx_key(c->spec.seed, 0, 0, PURPOSE_Q0);
    for (uint64_t i = 0; i < c->pb * c->r; i++) {
        uint64_t h = tc_mix64(key + i);
        double u1 = ((double)(h >> 11) + 1.0) * 0x1p-53, u2 = (double)(tc_mix64(h) >> 11) * 0x1p-53;
        c->Q[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
    }
    return TC_OK;
}

static void psgd_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    (void)step;
    float inv = 1.0f / (float)c->n;
    for (uint32_t w = 0; w < c->n; w++)
        mul_p(c, x[w], w ? 1.0f : 0.0f);
    cblas_sscal((int)(c->pa * c->r), inv, c->P, 1);
    orthogonalize(c);
    for (uint32_t w = 0; w < c->n; w++)
        mul_q(c, x[w], c->Q, w ? 1.0f : 0.0f);
    cblas_sscal((int)(c->pb * c->r), inv, c->Q, 1);
    decode(c, out);
    for (uint32_t w = 0; e && w < c->n; w++)
        cblas_saxpy((int)c->d, -1.0f, out, 1, e[w], 1);
}

static void psgd_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    const float *xs[1] = {x};
    psgd_aggregate(c, xs, NULL, out, step);
}

const cx_ops cx_powersgd_ops = {psgd_init, psgd_aggregate, psgd_one};
