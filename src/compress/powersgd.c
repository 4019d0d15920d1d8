/*
 * powersgd.c - PowerSGD [Vogels, Karimireddy, Jaggi, "PowerSGD: Practical
 * Low-Rank Gradient Compression for Distributed Optimization", NeurIPS 2019,
 * Algorithm 1] as PyTorch DDP's two communication hooks apply it to one
 * bucket, read from torch/distributed/algorithms/ddp_comm_hooks/
 * powerSGD_hook.py of PyTorch v1.13.1 (PowerSGDState, powerSGD_hook,
 * batched_powerSGD_hook, _should_compress, _orthogonalize).
 *
 * powersgd (powerSGD_hook): each tensor of the bucket is the matrix
 * M = tensor.view(shape[0], -1), rows x cols, with rank
 * r' = min(rows, cols, r), compressed only if
 * (rows + cols) r' min_compression_rate < rows cols; the others (every 1-D
 * tensor: biases, norm weights) are all-reduced as they are. One step is
 * three all-reduces, in this order:
 *   1. the uncompressed tensors, concatenated; mean = sum / n;
 *   2. all P concatenated: P_w = M_w Q for every compressed tensor, summed
 *      (not divided: P is orthogonalised next); then each P orthogonalised;
 *   3. all Q concatenated: Q_w = M_w^T P, summed, divided by n;
 * and every compressed tensor decodes to P Q^T. Q is warm-started: drawn
 * from N(0, 1) once (the hook draws it at the first compressed step) and
 * orthogonalised at the start of every step.
 *
 * powersgd-batched (batched_powerSGD_hook): the whole bucket is one matrix,
 * no compression test, P and Q as above, two all-reduces. The hook pads the
 * bucket to a square of side ceil(sqrt d); here the matrix is a x b,
 * b = ceil(sqrt d), a = ceil(d / b) (a is b or b - 1), the last row
 * partial: at most one row of P (r floats) less on the wire, and no padding
 * in the error-feedback memory. (In v1.13.1 this hook hands its 2-D P and
 * Q to the batched _orthogonalize, whose assertion wants 3-D batches; the
 * evident intent, each orthogonalised as one matrix, is what is modelled.)
 * A per-tensor bucket known only by its size is that same single matrix,
 * with the compression test.
 *
 * Orthogonalisation as _orthogonalize: Gram-Schmidt for rank <= 2 (the
 * hook's default orthogonalization_epsilon = 0; a zero column is set to
 * zero, what the hook's ZeroDivisionError branch intends), Householder QR
 * above (torch.linalg.qr; here LAPACK sgeqrf + sorgqr, which also handles a
 * rank-deficient P). The decoded P Q^T = P P^T M does not depend on the
 * signs QR gives the columns.
 *
 * Error feedback as both hooks: memory_w = (g_w + memory_w) - the decoded
 * mean, on every coordinate of the bucket, the uncompressed tensors
 * included (their memories sum to zero). The paper's Algorithm 2 subtracts
 * the local decompression P Q_w^T instead; the memories' sum is the same.
 * The first `start` steps (start_powerSGD_iter) are plain all-reduces that
 * leave the memory alone: codec.c.
 *
 * Flops per step and compressed tensor: 2 rows cols r' for each of P, Q and
 * the decode.
 *
 * Storage: a row-major rows x cols tensor is, as it lies in memory, the
 * column-major cols x rows matrix X = M^T, so M_w Q = X^T Q, M_w^T P = X P
 * and P Q^T = (Q P^T)^T need no copy; the partial last row of a bucket
 * known only by its size goes through gemv / ger.
 */
#include <math.h>
#include <limits.h>
#include "core/blas.h"
#include "compress/codec_int.h"

#define PURPOSE_Q0 6

bool tc_codec_per_tensor(tc_codec_kind k)
{
    return k == TC_CODEC_POWERSGD;
}

uint32_t tc_codec_powersgd_rank(const tc_codec_spec *c, uint64_t rows, uint64_t cols)
{
    uint64_t r = c->rank;
    if (rows < r)
        r = rows;
    if (cols < r)
        r = cols;
    if (r == 0)
        return 0;
    /* _should_compress: compressed_size * min_compression_rate < uncompressed_size */
    double compressed = ((double)rows + (double)cols) * (double)r, whole = (double)rows * (double)cols;
    return compressed * c->min_rate < whole ? (uint32_t)r : 0;
}

void tc_cx_psgd_shape(uint64_t d, uint64_t *a, uint64_t *b)
{
    uint64_t s = (uint64_t)ceil(sqrt((double)d));
    while (s * s < d)
        s++;
    while (s > 1 && (s - 1) * (s - 1) >= d)
        s--;
    *b = s;
    *a = (d + s - 1) / s;
}

uint32_t tc_cx_psgd_rank_on(const tc_codec_spec *c, uint64_t d, uint64_t *a, uint64_t *b)
{
    tc_cx_psgd_shape(d, a, b);
    if (c->kind != TC_CODEC_POWERSGD_BATCHED)
        return tc_codec_powersgd_rank(c, *a, *b);
    uint64_t r = c->rank;
    r = r < *a ? r : *a;
    r = r < *b ? r : *b;
    return (uint32_t)r;
}

void tc_cx_psgd_wire(const tc_codec_spec *c, const tc_codec_tensor *t, size_t nt, uint64_t d, tc_codec_wire *out)
{
    bool batched = c->kind == TC_CODEC_POWERSGD_BATCHED;
    double u = 0, p = 0, q = 0;
    if (batched || !t) {
        uint64_t a, b;
        tc_cx_psgd_shape(d, &a, &b);
        uint32_t r = batched ? c->rank : tc_codec_powersgd_rank(c, a, b);
        if (r) {
            p = (double)a * r;
            q = (double)b * r;
        } else {
            u = (double)d;
        }
    } else {
        for (size_t i = 0; i < nt; i++) {
            uint32_t r = tc_codec_powersgd_rank(c, t[i].rows, t[i].cols);
            if (r) {
                p += (double)t[i].rows * r;
                q += (double)t[i].cols * r;
            } else {
                u += (double)t[i].rows * (double)t[i].cols;
            }
        }
    }
    out->op = TC_OP_ALLREDUCE;
    if (batched) {
        out->collectives = 2;
        out->size[0] = 4 * p;
        out->size[1] = 4 * q;
    } else {
        out->collectives = 3;
        out->size[0] = 4 * u;
        out->size[1] = 4 * p;
        out->size[2] = 4 * q;
    }
}

void tc_codec_wire_cost_shaped(const tc_codec_spec *c, const tc_codec_tensor *t, size_t nt, uint32_t n,
                               tc_codec_wire *out)
{
    double D = 0;
    for (size_t i = 0; i < nt; i++)
        D += (double)t[i].rows * (double)t[i].cols;
    uint64_t d = D >= 1.8e19 ? UINT64_MAX : D < 1 ? 1 : (uint64_t)D;
    if (!tc_codec_per_tensor(c->kind) || nt == 0) {
        tc_codec_wire_cost(c, d, n, out);
        return;
    }
    memset(out, 0, sizeof *out);
    tc_cx_psgd_wire(c, t, nt, d, out);
    out->bits_per_coord = 8 * (out->size[0] + out->size[1] + out->size[2]) / (double)d;
    tc_cx_wire_phases(c, d, n, out);
}

/* ---- kernels of one tensor ---- */

/* P = X^T Q + beta P (the full rows by gemm, the partial one by gemv) */
static void mul_p(const cx_ptensor *t, const float *x, const float *Q, float *P, float beta)
{
    int m = (int)t->cols, n = (int)t->rows, f = (int)t->full, r = (int)t->rank;
    x += t->off;
    if (f)
        cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, f, r, m, 1.0f, x, m, Q, m, beta, P, n);
    if (t->tail)
        cblas_sgemv(CblasColMajor, CblasTrans, (int)t->tail, r, 1.0f, Q, m, x + t->full * t->cols, 1, beta, P + f, n);
}

/* Q = X P + beta Q */
static void mul_q(const cx_ptensor *t, const float *x, const float *P, float *Q, float beta)
{
    int m = (int)t->cols, n = (int)t->rows, f = (int)t->full, r = (int)t->rank;
    x += t->off;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, r, f, 1.0f, x, m, P, n, beta, Q, m);
    if (t->tail)
        cblas_sger(CblasColMajor, (int)t->tail, r, 1.0f, x + t->full * t->cols, 1, P + f, n, Q, m);
}

/* out = (P Q^T)^T = Q P^T on the tensor's numel coordinates */
static void decode(const cx_ptensor *t, const float *P, const float *Q, float *out)
{
    int m = (int)t->cols, n = (int)t->rows, f = (int)t->full, r = (int)t->rank;
    out += t->off;
    if (f)
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, f, r, 1.0f, Q, m, P, n, 0.0f, out, m);
    if (t->tail)
        cblas_sgemv(CblasColMajor, CblasNoTrans, (int)t->tail, r, 1.0f, Q, m, P + f, n, 0.0f,
                    out + t->full * t->cols, 1);
}

void tc_cx_psgd_products(const cx_ptensor *t, const float *x, const float *Q, float *P, float *Qout, float *out)
{
    mul_p(t, x, Q, P, 0.0f);
    mul_q(t, x, P, Qout, 0.0f);
    decode(t, P, Qout, out);
}

/* _orthogonalize_gram_schmidt with epsilon 0: normalise column i, remove
 * it from the columns after it (the modified Gram-Schmidt order). */
static void gram_schmidt(float *A, uint64_t rows, uint32_t r)
{
    for (uint32_t i = 0; i < r; i++) {
        float *col = A + (uint64_t)i * rows;
        double s = 0;
        for (uint64_t k = 0; k < rows; k++)
            s += (double)col[k] * col[k];
        float nrm = (float)sqrt(s);
        for (uint64_t k = 0; k < rows; k++)
            col[k] = nrm > 0 ? col[k] / nrm : 0.0f;
        for (uint32_t j = i + 1; j < r; j++) {
            float *rest = A + (uint64_t)j * rows;
            double dot = 0;
            for (uint64_t k = 0; k < rows; k++)
                dot += (double)col[k] * rest[k];
            float fd = (float)dot;
            for (uint64_t k = 0; k < rows; k++)
                rest[k] -= fd * col[k];
        }
    }
}

/* The columns of the column-major rows x r matrix A made orthonormal, as
 * _orthogonalize: Gram-Schmidt for r <= 2, QR otherwise. */
static void orthogonalize(tc_codec *c, float *A, uint64_t rows, uint32_t r)
{
    if (r <= 2) {
        gram_schmidt(A, rows, r);
        return;
    }
    lapack_int m = (lapack_int)rows, k = (lapack_int)r;
    LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, k, A, m, c->tau, c->work, c->lwork);
    LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, k, k, A, m, c->tau, c->work, c->lwork);
}

/* ---- the codec ---- */

static tc_status layout(tc_codec *c, tc_err *err)
{
    uint64_t off = 0, plen = 0, qlen = 0, maxrows = 0;
    uint32_t maxr = 1;
    for (size_t i = 0; i < c->npt; i++) {
        cx_ptensor *t = &c->pt[i];
        if (t->rows > INT_MAX || t->cols > INT_MAX)
            return tc_fail(err, TC_EINVAL, "%s: a %llu x %llu tensor is too large for 32-bit BLAS dimensions",
                           tc_codec_kind_name(c->spec.kind), (unsigned long long)t->rows,
                           (unsigned long long)t->cols);
        t->off = off;
        t->full = t->numel / t->cols;
        t->tail = t->numel - t->full * t->cols;
        t->poff = plen;
        t->qoff = qlen;
        off += t->numel;
        plen += t->rows * t->rank;
        qlen += t->cols * t->rank;
        if (t->rank > 2) {
            maxr = t->rank > maxr ? t->rank : maxr;
            maxrows = t->rows > maxrows ? t->rows : maxrows;
            maxrows = t->cols > maxrows ? t->cols : maxrows;
        }
    }
    if (off != c->d)
        return tc_fail(err, TC_EINTERNAL, "internal: the tensors hold %llu of the bucket's %llu coordinates",
                       (unsigned long long)off, (unsigned long long)c->d);
    c->plen = plen;
    c->qlen = qlen;
    c->P = tc_calloc(plen ? plen : 1, sizeof *c->P);
    c->Q = tc_calloc(qlen ? qlen : 1, sizeof *c->Q);
    c->tau = tc_calloc(maxr, sizeof *c->tau);
    if (!c->P || !c->Q || !c->tau)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a %llu-coordinate bucket", (unsigned long long)c->d);
    c->lwork = (int)maxr;
    if (maxrows) {
        float q1 = 0, q2 = 0;
        lapack_int m = (lapack_int)maxrows, k = (lapack_int)maxr;
        LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, k, c->P, m, c->tau, &q1, -1);
        LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, k, k, c->P, m, c->tau, &q2, -1);
        int need = (int)(q1 > q2 ? q1 : q2);
        c->lwork = need > c->lwork ? need : c->lwork;
    }
    c->work = tc_calloc((size_t)c->lwork, sizeof *c->work);
    if (!c->work)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    /* Q0 ~ N(0, 1) entries (Box-Muller), the same on every worker */
    uint64_t key = cx_key(c->spec.seed, 0, 0, PURPOSE_Q0);
    for (uint64_t i = 0; i < qlen; i++) {
        uint64_t h = tc_mix64(key + i);
        double u1 = ((double)(h >> 11) + 1.0) * 0x1p-53, u2 = (double)(tc_mix64(h) >> 11) * 0x1p-53;
        c->Q[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
    }
    return TC_OK;
}

static tc_status psgd_init(tc_codec *c, tc_err *err)
{
    const char *name = tc_codec_kind_name(c->spec.kind);
    bool batched = c->spec.kind == TC_CODEC_POWERSGD_BATCHED, whole = batched || !c->shapes;
    if (c->spec.rank < 1)
        return tc_fail(err, TC_EINVAL, "%s: rank=0: accepted are integers >= 1", name);
    if (!batched && !(c->spec.min_rate >= 0))
        return tc_fail(err, TC_EINVAL, "%s: min_rate=%g: accepted are numbers >= 0", name, c->spec.min_rate);
    tc_status fit = tc_codec_fits(&c->spec, c->d, err);
    if (fit != TC_OK)
        return fit;
    /* Its products are OpenBLAS's, opened on first use: a codec that
     * could not run fails here, as a status, not at its first product. */
    if ((fit = tc_blas_load(err)) != TC_OK)
        return fit;
    c->npt = whole ? 1 : c->nshapes;
    c->pt = tc_calloc(c->npt, sizeof *c->pt);
    if (!c->pt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (whole) {
        uint64_t a, b;
        tc_cx_psgd_shape(c->d, &a, &b);
        uint32_t r = batched ? c->spec.rank : tc_codec_powersgd_rank(&c->spec, a, b);
        c->pt[0] = (cx_ptensor){.rows = a, .cols = b, .numel = c->d, .rank = r};
    } else {
        for (size_t i = 0; i < c->npt; i++) {
            const tc_codec_tensor *s = &c->shapes[i];
            c->pt[i] = (cx_ptensor){.rows = s->rows, .cols = s->cols, .numel = s->rows * s->cols,
                                    .rank = tc_codec_powersgd_rank(&c->spec, s->rows, s->cols)};
        }
    }
    return layout(c, err);
}

/* Coordinates [off, off + len) of out = the sum over workers of x, / n:
 * the all-reduce of the uncompressed tensors, then div_(world_size). */
static void mean_range(const float *const *x, uint32_t n, uint64_t off, uint64_t len, float *out)
{
    for (uint64_t i = off; i < off + len; i++)
        out[i] = x[0][i];
    for (uint32_t w = 1; w < n; w++)
        for (uint64_t i = off; i < off + len; i++)
            out[i] += x[w][i];
    float fn = (float)n;
    for (uint64_t i = off; i < off + len; i++)
        out[i] /= fn;
}

static void psgd_aggregate(tc_codec *c, const float *const *x, float *const *e, float *out, uint64_t step)
{
    (void)step;
    float fn = (float)c->n;
    for (size_t i = 0; i < c->npt; i++) {
        const cx_ptensor *t = &c->pt[i];
        if (!t->rank) {
            mean_range(x, c->n, t->off, t->numel, out);
            continue;
        }
        float *P = c->P + t->poff, *Q = c->Q + t->qoff;
        orthogonalize(c, Q, t->cols, t->rank);
        for (uint32_t w = 0; w < c->n; w++)
            mul_p(t, x[w], Q, P, w ? 1.0f : 0.0f);
        orthogonalize(c, P, t->rows, t->rank);
        for (uint32_t w = 0; w < c->n; w++)
            mul_q(t, x[w], P, Q, w ? 1.0f : 0.0f);
        for (uint64_t k = 0; k < t->cols * t->rank; k++)
            Q[k] /= fn;
        decode(t, P, Q, out);
    }
    for (uint32_t w = 0; e && w < c->n; w++)
        cblas_saxpy((int)c->d, -1.0f, out, 1, e[w], 1);
}

static void psgd_one(tc_codec *c, const float *x, float *out, uint64_t step)
{
    const float *xs[1] = {x};
    psgd_aggregate(c, xs, NULL, out, step);
}

const cx_ops tc_cx_powersgd_ops = {psgd_init, psgd_aggregate, psgd_one};
