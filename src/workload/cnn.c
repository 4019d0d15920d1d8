/*
 * cnn.c - the cnn proxy: a small LeNet-like convolutional network on
 * Fashion-MNIST, its gradient by backpropagation.
 *
 *   input  1 x 28 x 28, normalized as mlp.c does
 *   conv1  5x5, C channels, valid  -> C x 24 x 24, ReLU, 2x2 max-pool -> C x 12 x 12
 *   conv2  5x5, 2C channels, valid -> 2C x 8 x 8,  ReLU, 2x2 max-pool -> 2C x 4 x 4
 *   fc     32C -> 10 (the pooled maps flattened as (channel, y, x)),
 *          softmax cross-entropy, mean over the batch
 *
 * A batch is processed in chunks of up to CNN_CHUNK samples, so the scratch
 * does not grow with the batch. Within a chunk of S samples the activations
 * of a layer are stored channel-major, [channel][sample][y][x], so that each
 * convolution is one cblas_sgemm over the chunk: out (Cout x S*P) = W (Cout x
 * K) col (K x S*P), where col is the im2col matrix (row (cin, ky, kx), column
 * (sample, oy, ox)) and P the output positions. Backward: dW += dout col^T,
 * db += the row sums of dout, dcol = W^T dout, and col2im adds dcol back
 * onto the input positions it was copied from. The gradient is zeroed once
 * and every chunk adds to it.
 *
 * Max-pool keeps, for each 2x2 window, the index of its maximum: of equal
 * values the first in row-major window order, which alone receives the
 * window's gradient. ReLU's derivative is taken as 0 at 0.
 */
#include "core/blas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "workload/proxy.h"

/* Samples per sgemm. Measured (width 8, 8 x 32 samples forward and backward,
 * one thread): the same time within noise for chunks of 2 to 64 samples,
 * up to a quarter more with one sample per sgemm; 8 keeps the scratch near
 * 1.2 MB an instance. */
#define CNN_CHUNK 8u
#define CNN_DEFAULT_WIDTH 8u /* channels of conv1 when o->width is 0 */
#define CNN_CLASSES 10u
#define KS 5u                /* kernel side */
#define KK (KS * KS)
#define SIDE0 28u            /* input side */
#define SIDE1 24u            /* conv1 output side; pooled: 12 */
#define SIDE2 8u             /* conv2 output side; pooled: 4 */

enum { T_W1, T_B1, T_W2, T_B2, T_WF, T_BF, CNN_TENSORS };

/* An instance's scratch for a chunk of up to S samples (C: conv1's channels). */
typedef struct cnn {
    uint32_t C, S;
    float *x;    /* inputs, S x 784 */
    float *col1; /* im2col of the inputs, 25 x S*576 */
    float *a1;   /* conv1 after ReLU, C x S*576; then its gradient */
    float *p1;   /* pooled, C x S*144 */
    float *dp1;  /* gradient at p1 */
    float *col2; /* im2col of p1, 25C x S*64; then its gradient */
    float *a2;   /* conv2 after ReLU, 2C x S*64; then its gradient */
    float *p2;   /* pooled, 2C x S*16; then its gradient */
    float *f;    /* p2 per sample, S x 32C */
    float *df;   /* gradient at f */
    float *z;    /* logits, then their gradient, S x 10 */
    uint32_t *m1, *m2; /* index in a1 / a2 of each pooled maximum */
    uint8_t *y;  /* labels */
} cnn;

/* ---- layers --------------------------------------------------------------- */

/* A row of o floats: o is SIDE1 or SIDE2, sizes the compiler copies inline
 * (a call to memcpy costs more than these short rows). */
static inline void copy_row(float *dst, const float *src, uint32_t o)
{
    if (o == SIDE1)
        memcpy(dst, src, SIDE1 * sizeof *dst);
    else if (o == SIDE2)
        memcpy(dst, src, SIDE2 * sizeof *dst);
    else
        memcpy(dst, src, o * sizeof *dst);
}

/* im2col of a valid KS x KS convolution of cin planes of side `side` per
 * sample, stored [c][s][y][x]: col row (c, ky, kx), column (s, oy, ox). */
static void im2col(const float *in, uint32_t cin, uint32_t S, uint32_t side, float *col)
{
    const uint32_t o = side - KS + 1, P = o * o;
    const size_t N = (size_t)S * P, plane = (size_t)side * side;
    for (uint32_t c = 0; c < cin; c++)
        for (uint32_t k = 0; k < KK; k++) {
            float *row = col + ((size_t)c * KK + k) * N;
            for (uint32_t s = 0; s < S; s++) {
                const float *src = in + ((size_t)c * S + s) * plane + (k / KS) * side + k % KS;
                for (uint32_t oy = 0; oy < o; oy++)
                    copy_row(row + (size_t)s * P + oy * o, src + (size_t)oy * side, o);
            }
        }
}

/* The adjoint of im2col: in (cin planes per sample, zeroed first) receives
 * the sum of the col entries copied from each position. */
static void col2im(const float *col, uint32_t cin, uint32_t S, uint32_t side, float *in)
{
    const uint32_t o = side - KS + 1, P = o * o;
    const size_t N = (size_t)S * P, plane = (size_t)side * side;
    memset(in, 0, (size_t)cin * S * plane * sizeof *in);
    for (uint32_t c = 0; c < cin; c++)
        for (uint32_t k = 0; k < KK; k++) {
            const float *row = col + ((size_t)c * KK + k) * N;
            for (uint32_t s = 0; s < S; s++) {
                float *dst = in + ((size_t)c * S + s) * plane + (k / KS) * side + k % KS;
                for (uint32_t oy = 0; oy < o; oy++)
                    for (uint32_t ox = 0; ox < o; ox++)
                        dst[(size_t)oy * side + ox] += row[(size_t)s * P + oy * o + ox];
            }
        }
}

/* max(v, 0) without a branch (ReLU's sign is a coin flip to the branch
 * predictor): the bits of a negative v are cleared. */
static inline float relu(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= (u >> 31) - 1u;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* out = relu(W col + b): W cout x K, col K x N, out cout x N. */
static void conv_forward(const float *W, const float *b, const float *col, uint32_t cout, uint32_t K, size_t N,
                         float *out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)cout, (int)N, (int)K, 1.0f, W, (int)K, col, (int)N,
                0.0f, out, (int)N);
    for (uint32_t c = 0; c < cout; c++) {
        float *o = out + (size_t)c * N;
        for (size_t i = 0; i < N; i++)
            o[i] = relu(o[i] + b[c]);
    }
}

/* gW += dout col^T, gb += the row sums of dout (cout x N). */
static void conv_grad(const float *dout, const float *col, uint32_t cout, uint32_t K, size_t N, float *gW, float *gb)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)cout, (int)K, (int)N, 1.0f, dout, (int)N, col, (int)N,
                1.0f, gW, (int)K);
    for (uint32_t c = 0; c < cout; c++) {
        double s = 0.0;
        for (size_t i = 0; i < N; i++)
            s += dout[(size_t)c * N + i];
        gb[c] += (float)s;
    }
}

/* 2x2 max-pool of `planes` planes of side `side` into out; arg[j]: the index
 * in a of output j's maximum, the first in row-major window order on ties. */
static void maxpool(const float *a, size_t planes, uint32_t side, float *out, uint32_t *arg)
{
    const uint32_t h = side / 2;
    size_t j = 0;
    for (size_t pl = 0; pl < planes; pl++)
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < h; x++, j++) {
                size_t at = pl * side * side + (size_t)2 * y * side + 2 * x;
                const size_t cand[3] = {at + 1, at + side, at + side + 1};
                size_t best = at;
                for (int k = 0; k < 3; k++)
                    if (a[cand[k]] > a[best])
                        best = cand[k];
                out[j] = a[best];
                arg[j] = (uint32_t)best;
            }
}

/* Backward of ReLU then max-pool: a (na ReLU outputs) becomes the gradient
 * at them, dp[j] at the maximum arg[j] where that output is positive, 0
 * elsewhere. dp (n pooled gradients) is overwritten. */
static void unpool_relu(float *a, size_t na, float *dp, const uint32_t *arg, size_t n)
{
    for (size_t j = 0; j < n; j++)
        dp[j] = a[arg[j]] > 0.0f ? dp[j] : 0.0f;
    memset(a, 0, na * sizeof *a);
    for (size_t j = 0; j < n; j++)
        a[arg[j]] = dp[j];
}

/* p2 [c][s][16] <-> f [s][c * 16 + k] (PyTorch's flatten order per sample). */
static void gather(const float *p2, uint32_t c2, uint32_t S, float *f)
{
    const uint32_t q = (SIDE2 / 2) * (SIDE2 / 2);
    for (uint32_t c = 0; c < c2; c++)
        for (uint32_t s = 0; s < S; s++)
            memcpy(f + ((size_t)s * c2 + c) * q, p2 + ((size_t)c * S + s) * q, q * sizeof *f);
}

static void scatter(const float *df, uint32_t c2, uint32_t S, float *p2)
{
    const uint32_t q = (SIDE2 / 2) * (SIDE2 / 2);
    for (uint32_t c = 0; c < c2; c++)
        for (uint32_t s = 0; s < S; s++)
            memcpy(p2 + ((size_t)c * S + s) * q, df + ((size_t)s * c2 + c) * q, q * sizeof *p2);
}

/* Softmax cross-entropy of the S rows of logits z against y: returns the
 * summed loss; z becomes (softmax - onehot) * scale. */
static double softmax_xent(float *z, const uint8_t *y, uint32_t S, float scale)
{
    double loss = 0.0;
    for (uint32_t s = 0; s < S; s++) {
        float *r = z + (size_t)s * CNN_CLASSES, mx = r[0];
        for (uint32_t c = 1; c < CNN_CLASSES; c++)
            mx = r[c] > mx ? r[c] : mx;
        double sum = 0.0;
        for (uint32_t c = 0; c < CNN_CLASSES; c++) {
            r[c] = expf(r[c] - mx);
            sum += r[c];
        }
        loss -= log((double)r[y[s]] / sum);
        for (uint32_t c = 0; c < CNN_CLASSES; c++)
            r[c] = ((float)((double)r[c] / sum) - (c == y[s] ? 1.0f : 0.0f)) * scale;
    }
    return loss;
}

/* ---- the network ---------------------------------------------------------- */

/* Samples idx[0..S) of set into n->x (normalized) and n->y. */
static void load_chunk(cnn *n, const tc_dataset *set, const uint32_t *idx, uint32_t S)
{
    const float scale = 1.0f / (255.0f * TC_FMNIST_STD), shift = TC_FMNIST_MEAN / TC_FMNIST_STD;
    const uint32_t dim = SIDE0 * SIDE0;
    for (uint32_t s = 0; s < S; s++) {
        const uint8_t *px = set->x + (size_t)idx[s] * set->dim;
        for (uint32_t j = 0; j < dim; j++)
            n->x[(size_t)s * dim + j] = (float)px[j] * scale - shift;
        n->y[s] = set->y[idx[s]];
    }
}

/* Logits of the S samples in n->x into n->z, keeping what backward needs. */
static void forward(cnn *n, const tc_proxy *m, uint32_t S)
{
    const float *p = m->p;
    const uint32_t C = n->C, F = 2 * C * (SIDE2 / 2) * (SIDE2 / 2);
    const size_t N1 = (size_t)S * SIDE1 * SIDE1, N2 = (size_t)S * SIDE2 * SIDE2;
    im2col(n->x, 1, S, SIDE0, n->col1);
    conv_forward(p + m->off[T_W1], p + m->off[T_B1], n->col1, C, KK, N1, n->a1);
    maxpool(n->a1, (size_t)C * S, SIDE1, n->p1, n->m1);
    im2col(n->p1, C, S, SIDE1 / 2, n->col2);
    conv_forward(p + m->off[T_W2], p + m->off[T_B2], n->col2, 2 * C, C * KK, N2, n->a2);
    maxpool(n->a2, (size_t)2 * C * S, SIDE2, n->p2, n->m2);
    gather(n->p2, 2 * C, S, n->f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)S, CNN_CLASSES, (int)F, 1.0f, n->f, (int)F,
                p + m->off[T_WF], (int)F, 0.0f, n->z, CNN_CLASSES);
    const float *bf = p + m->off[T_BF];
    for (uint32_t s = 0; s < S; s++)
        for (uint32_t c = 0; c < CNN_CLASSES; c++)
            n->z[(size_t)s * CNN_CLASSES + c] += bf[c];
}

/* The fully connected layer's part: gWf += dz^T f, gbf += the column sums
 * of dz, df = dz Wf, with dz in n->z. */
static void fc_backward(cnn *n, const tc_proxy *m, float *g, uint32_t S)
{
    const uint32_t F = 2 * n->C * (SIDE2 / 2) * (SIDE2 / 2);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, CNN_CLASSES, (int)F, (int)S, 1.0f, n->z, CNN_CLASSES, n->f,
                (int)F, 1.0f, g + m->off[T_WF], (int)F);
    float *gbf = g + m->off[T_BF];
    for (uint32_t s = 0; s < S; s++)
        for (uint32_t c = 0; c < CNN_CLASSES; c++)
            gbf[c] += n->z[(size_t)s * CNN_CLASSES + c];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)S, (int)F, CNN_CLASSES, 1.0f, n->z, CNN_CLASSES,
                m->p + m->off[T_WF], (int)F, 0.0f, n->df, (int)F);
}

/* Adds the chunk's gradient to g, from dz in n->z (after forward). */
static void backward(cnn *n, const tc_proxy *m, float *g, uint32_t S)
{
    const uint32_t C = n->C;
    const size_t N1 = (size_t)S * SIDE1 * SIDE1, N2 = (size_t)S * SIDE2 * SIDE2;
    const size_t np1 = (size_t)C * S * (SIDE1 / 2) * (SIDE1 / 2), np2 = (size_t)2 * C * S * (SIDE2 / 2) * (SIDE2 / 2);
    fc_backward(n, m, g, S);
    scatter(n->df, 2 * C, S, n->p2);
    unpool_relu(n->a2, 2 * C * N2, n->p2, n->m2, np2);
    conv_grad(n->a2, n->col2, 2 * C, C * KK, N2, g + m->off[T_W2], g + m->off[T_B2]);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(C * KK), (int)N2, (int)(2 * C), 1.0f,
                m->p + m->off[T_W2], (int)(C * KK), n->a2, (int)N2, 0.0f, n->col2, (int)N2);
    col2im(n->col2, C, S, SIDE1 / 2, n->dp1);
    unpool_relu(n->a1, C * N1, n->dp1, n->m1, np1);
    conv_grad(n->a1, n->col1, C, KK, N1, g + m->off[T_W1], g + m->off[T_B1]);
}

/* ---- the proxy ------------------------------------------------------------ */

static void scratch_free(cnn *n)
{
    float *bufs[] = {n->x, n->col1, n->a1, n->p1, n->dp1, n->col2, n->a2, n->p2, n->f, n->df, n->z};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        free(bufs[i]);
    free(n->m1);
    free(n->m2);
    free(n->y);
    free(n);
}

static cnn *scratch_alloc(uint32_t C, uint32_t S)
{
    cnn *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->C = C;
    n->S = S;
    const size_t n1 = (size_t)S * SIDE1 * SIDE1, q1 = n1 / 4, n2 = (size_t)S * SIDE2 * SIDE2, q2 = n2 / 4;
    n->x = malloc((size_t)S * SIDE0 * SIDE0 * sizeof *n->x);
    n->col1 = malloc(KK * n1 * sizeof *n->col1);
    n->a1 = malloc(C * n1 * sizeof *n->a1);
    n->p1 = malloc(C * q1 * sizeof *n->p1);
    n->dp1 = malloc(C * q1 * sizeof *n->dp1);
    n->m1 = malloc(C * q1 * sizeof *n->m1);
    n->col2 = malloc((size_t)C * KK * n2 * sizeof *n->col2);
    n->a2 = malloc(2 * C * n2 * sizeof *n->a2);
    n->p2 = malloc(2 * C * q2 * sizeof *n->p2);
    n->m2 = malloc(2 * C * q2 * sizeof *n->m2);
    n->f = malloc(2 * C * q2 * sizeof *n->f);
    n->df = malloc(2 * C * q2 * sizeof *n->df);
    n->z = malloc((size_t)S * CNN_CLASSES * sizeof *n->z);
    n->y = malloc(S);
    if (!n->x || !n->col1 || !n->a1 || !n->p1 || !n->dp1 || !n->m1 || !n->col2 || !n->a2 || !n->p2 || !n->m2 ||
        !n->f || !n->df || !n->z || !n->y) {
        scratch_free(n);
        return NULL;
    }
    return n;
}

static void cnn_destroy(tc_proxy *m)
{
    if (m->impl)
        scratch_free(m->impl);
    free(m->p);
    memset(m, 0, sizeof *m);
}

/* PyTorch's default initialization of nn.Conv2d and nn.Linear: weights and
 * biases uniform in +-1/sqrt(fan_in), fan_in = in_channels * kernel area
 * (in_features for Linear). As read in pytorch/pytorch:
 * torch/nn/modules/conv.py (commit ddbcf1cd299571603b1412003ceee2d4d6a1986d),
 * _ConvNd.reset_parameters: kaiming_uniform_(weight, a=math.sqrt(5)), then
 * bias uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), its comment stating that
 * a=sqrt(5) is uniform(-1/sqrt(k), 1/sqrt(k)), k = weight.size(1) *
 * prod(kernel_size); torch/nn/modules/linear.py (commit
 * 0157947c9f375ae3f22940f3b21db418b9b32598), Linear.reset_parameters: the
 * same two calls; torch/nn/init.py (commit
 * 0014856d63dfb7d5bfc6531ca21bee76c8098e6c), kaiming_uniform_: bound =
 * sqrt(3) * gain / sqrt(fan_in) with calculate_gain('leaky_relu', a) =
 * sqrt(2 / (1 + a^2)) = sqrt(1/3) at a = sqrt(5), so bound = 1/sqrt(fan_in).
 * Each tensor draws from its own stream (its index) of the seed. */
static void init_params(tc_proxy *m, uint32_t C, uint64_t seed)
{
    const double fan[CNN_TENSORS] = {KK, KK, (double)C * KK, (double)C * KK, 32.0 * C, 32.0 * C};
    for (size_t t = 0; t < CNN_TENSORS; t++) {
        const float a = (float)(1.0 / sqrt(fan[t]));
        for (size_t i = m->off[t]; i < m->off[t + 1]; i++)
            m->p[i] = tc_proxy_uniform(seed, t, i - m->off[t], a);
    }
}

static tc_status cnn_create(const tc_train_opts *o, const tc_proxy_data *d, uint64_t seed, uint32_t max_batch,
                            tc_proxy *m, tc_err *err)
{
    memset(m, 0, sizeof *m);
    const tc_image_data *im = d->impl;
    if (im->train.rows != SIDE0 || im->train.cols != SIDE0)
        return tc_fail(err, TC_EINVAL, "cnn: images of %ux%u pixels, expected %ux%u", im->train.rows,
                       im->train.cols, SIDE0, SIDE0);
    tc_status st = tc_blas_load(err);
    if (st)
        return st;
    const uint32_t C = o->width ? o->width : CNN_DEFAULT_WIDTH, F = 32 * C;
    const size_t sizes[CNN_TENSORS] = {(size_t)C * KK, C, (size_t)2 * C * C * KK, (size_t)2 * C,
                                       (size_t)CNN_CLASSES * F, CNN_CLASSES};
    if ((st = tc_proxy_alloc(m, sizes, CNN_TENSORS, err)))
        return st;
    const uint32_t S = max_batch < CNN_CHUNK ? (max_batch ? max_batch : 1) : CNN_CHUNK;
    if (!(m->impl = scratch_alloc(C, S))) {
        cnn_destroy(m);
        return tc_fail(err, TC_EINTERNAL, "out of memory for a cnn of width %u", C);
    }
    /* powerSGD_hook's views: (out channels, the rest), biases (n, 1). */
    const tc_codec_tensor shape[CNN_TENSORS] = {{C, KK}, {C, 1}, {2 * C, (uint64_t)C * KK}, {2 * C, 1},
                                                {CNN_CLASSES, F}, {CNN_CLASSES, 1}};
    for (size_t t = 0; t < CNN_TENSORS; t++) {
        m->shape[t] = shape[t];
        m->decay[t] = t % 2 == 0;
    }
    init_params(m, C, seed);
    return TC_OK;
}

static double cnn_grad(tc_proxy *m, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, float *grad)
{
    cnn *n = m->impl;
    const tc_dataset *set = &((const tc_image_data *)d->impl)->train;
    memset(grad, 0, m->nparams * sizeof *grad);
    double loss = 0.0;
    for (uint32_t i = 0; i < B; i += n->S) {
        const uint32_t S = B - i < n->S ? B - i : n->S;
        load_chunk(n, set, idx + i, S);
        forward(n, m, S);
        loss += softmax_xent(n->z, n->y, S, 1.0f / (float)B);
        backward(n, m, grad, S);
    }
    return B ? loss / B : 0.0;
}

static void cnn_eval(tc_proxy *m, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, uint64_t *correct,
                     uint64_t *total)
{
    cnn *n = m->impl;
    const tc_dataset *set = &((const tc_image_data *)d->impl)->test;
    uint64_t ok = 0;
    for (uint32_t i = 0; i < B; i += n->S) {
        const uint32_t S = B - i < n->S ? B - i : n->S;
        load_chunk(n, set, idx + i, S);
        forward(n, m, S);
        for (uint32_t s = 0; s < S; s++) {
            const float *z = n->z + (size_t)s * CNN_CLASSES;
            uint32_t best = 0;
            for (uint32_t c = 1; c < CNN_CLASSES; c++)
                if (z[c] > z[best])
                    best = c;
            ok += best == n->y[s];
        }
    }
    *correct = ok;
    *total = B;
}

const tc_proxy_ops tc_proxy_cnn = {
    .name = "cnn",
    .family = "vision",
    .dataset = "fashion-mnist",
    .package = "dataset-fashion-mnist",
    .dir = TC_FASHION_MNIST_DIR,
    .optimizer = TC_OPT_SGD,
    .lr = 0.02,
    .width = 8,
    .load = tc_fmnist_load,
    .unload = tc_fmnist_unload,
    .create = cnn_create,
    .destroy = cnn_destroy,
    .grad = cnn_grad,
    .eval = cnn_eval,
};
