/*
 * mlp.c - a two-layer perceptron with ReLU and softmax cross-entropy, its
 * gradient by backpropagation. Activations are row-major B x width arrays so
 * that each layer is one cblas_sgemm: forward H = relu(X W1^T + b1),
 * Z = H W2^T + b2; backward dZ = (softmax(Z) - onehot(y)) / B,
 * dW2 = dZ^T H, dH = (dZ W2) * [H > 0], dW1 = dH^T X; bias gradients are the
 * column sums.
 */
#include "core/blas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "workload/train_int.h"

/* Uniform in [-a, a) from a counter-based stream: value i of stream s. */
static float uniform_pm(uint64_t seed, uint64_t i, float a)
{
    uint64_t r = tc_mix64(seed ^ tc_mix64(i));
    return a * (float)((double)(r >> 40) / (double)(1u << 23) - 1.0);
}

tc_status tc_mlp_init(tc_mlp *m, uint32_t in, uint32_t hid, uint32_t classes, uint64_t seed, tc_err *err)
{
    memset(m, 0, sizeof *m);
    m->in = in;
    m->hid = hid;
    m->classes = classes;
    size_t sz[TC_MLP_TENSORS] = {(size_t)hid * in, hid, (size_t)classes * hid, classes};
    for (int t = 0; t < TC_MLP_TENSORS; t++)
        m->off[t + 1] = m->off[t] + sz[t];
    m->nparams = m->off[TC_MLP_TENSORS];
    m->p = malloc(m->nparams * sizeof *m->p);
    if (!m->p)
        return tc_fail(err, TC_EINTERNAL, "out of memory for %zu parameters", m->nparams);
    float a1 = 1.0f / sqrtf((float)in), a2 = 1.0f / sqrtf((float)hid);
    uint64_t s = tc_mix64(seed ^ 0x6d6c70ULL);
    for (size_t i = 0; i < m->nparams; i++)
        m->p[i] = uniform_pm(s, i, i < m->off[2] ? a1 : a2);
    return TC_OK;
}

void tc_mlp_free(tc_mlp *m)
{
    free(m->p);
    memset(m, 0, sizeof *m);
}

tc_status tc_mlp_work_init(tc_mlp_work *w, const tc_mlp *m, uint32_t max_batch, tc_err *err)
{
    memset(w, 0, sizeof *w);
    w->max_batch = max_batch;
    w->x = malloc((size_t)max_batch * m->in * sizeof *w->x);
    w->h = malloc((size_t)max_batch * m->hid * sizeof *w->h);
    w->dh = malloc((size_t)max_batch * m->hid * sizeof *w->dh);
    w->z = malloc((size_t)max_batch * m->classes * sizeof *w->z);
    if (!w->x || !w->h || !w->dh || !w->z) {
        tc_mlp_work_free(w);
        return tc_fail(err, TC_EINTERNAL, "out of memory for a batch of %u samples", max_batch);
    }
    return TC_OK;
}

void tc_mlp_work_free(tc_mlp_work *w)
{
    free(w->x);
    free(w->h);
    free(w->dh);
    free(w->z);
    memset(w, 0, sizeof *w);
}

void tc_mlp_load(tc_mlp_work *w, const tc_dataset *d, const uint32_t *idx, uint32_t B)
{
    const float scale = 1.0f / (255.0f * TC_FMNIST_STD), shift = TC_FMNIST_MEAN / TC_FMNIST_STD;
    for (uint32_t b = 0; b < B; b++) {
        const uint8_t *px = d->x + (size_t)idx[b] * d->dim;
        float *x = w->x + (size_t)b * d->dim;
        for (uint32_t j = 0; j < d->dim; j++)
            x[j] = (float)px[j] * scale - shift;
    }
}

/* Logits of the B samples in w->x into w->z; hidden activations in w->h. */
static void forward(const tc_mlp *m, tc_mlp_work *w, uint32_t B)
{
    const float *W1 = m->p + m->off[0], *b1 = m->p + m->off[1];
    const float *W2 = m->p + m->off[2], *b2 = m->p + m->off[3];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)m->hid, (int)m->in, 1.0f, w->x, (int)m->in, W1,
                (int)m->in, 0.0f, w->h, (int)m->hid);
    for (uint32_t b = 0; b < B; b++) {
        float *h = w->h + (size_t)b * m->hid;
        for (uint32_t j = 0; j < m->hid; j++) {
            float v = h[j] + b1[j];
            h[j] = v > 0.0f ? v : 0.0f;
        }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)m->classes, (int)m->hid, 1.0f, w->h,
                (int)m->hid, W2, (int)m->hid, 0.0f, w->z, (int)m->classes);
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t c = 0; c < m->classes; c++)
            w->z[(size_t)b * m->classes + c] += b2[c];
}

static void column_sums(const float *a, uint32_t rows, uint32_t cols, float *out)
{
    memset(out, 0, cols * sizeof *out);
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            out[c] += a[(size_t)r * cols + c];
}

double tc_mlp_grad(const tc_mlp *m, tc_mlp_work *w, const uint8_t *y, uint32_t B, float *grad)
{
    forward(m, w, B);
    /* Softmax in place (shifted by the row maximum), loss, then dZ. */
    double loss = 0.0;
    const float invB = 1.0f / (float)B;
    for (uint32_t b = 0; b < B; b++) {
        float *z = w->z + (size_t)b * m->classes;
        float mx = z[0];
        for (uint32_t c = 1; c < m->classes; c++)
            mx = z[c] > mx ? z[c] : mx;
        double sum = 0.0;
        for (uint32_t c = 0; c < m->classes; c++) {
            z[c] = expf(z[c] - mx);
            sum += z[c];
        }
        loss -= log((double)z[y[b]] / sum);
        for (uint32_t c = 0; c < m->classes; c++)
            z[c] = ((float)((double)z[c] / sum) - (c == y[b] ? 1.0f : 0.0f)) * invB;
    }
    const float *W2 = m->p + m->off[2];
    float *gW1 = grad + m->off[0], *gb1 = grad + m->off[1], *gW2 = grad + m->off[2], *gb2 = grad + m->off[3];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m->classes, (int)m->hid, (int)B, 1.0f, w->z,
                (int)m->classes, w->h, (int)m->hid, 0.0f, gW2, (int)m->hid);
    column_sums(w->z, B, m->classes, gb2);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)m->hid, (int)m->classes, 1.0f, w->z,
                (int)m->classes, W2, (int)m->hid, 0.0f, w->dh, (int)m->hid);
    for (size_t i = 0; i < (size_t)B * m->hid; i++)
        if (w->h[i] <= 0.0f)
            w->dh[i] = 0.0f;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m->hid, (int)m->in, (int)B, 1.0f, w->dh, (int)m->hid,
                w->x, (int)m->in, 0.0f, gW1, (int)m->in);
    column_sums(w->dh, B, m->hid, gb1);
    return loss;
}

uint32_t tc_mlp_correct(const tc_mlp *m, tc_mlp_work *w, const uint8_t *y, uint32_t B)
{
    forward(m, w, B);
    uint32_t ok = 0;
    for (uint32_t b = 0; b < B; b++) {
        const float *z = w->z + (size_t)b * m->classes;
        uint32_t best = 0;
        for (uint32_t c = 1; c < m->classes; c++)
            if (z[c] > z[best])
                best = c;
        ok += best == y[b];
    }
    return ok;
}
