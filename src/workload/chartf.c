/*
 * chartf.c - the chartf proxy: a character-level GPT-2-style decoder on the
 * fortunes corpus (corpus.c), forward and backward passes written by hand.
 *
 * The architecture is that of nanoGPT's model.py (github.com/karpathy/nanoGPT,
 * model.py at commit 3adf61e154c3fe3fca428ad6bc3818b27a3b8291, the file last
 * changed in f08abb45bd2285627d17da16daea14dda7e7253e), with dropout 0 and
 * bias=True:
 *   x = wte[token] + wpe[position]
 *   per block: x += c_proj(attn(c_attn(ln_1(x))));
 *              x += mlp.c_proj(gelu(c_fc(ln_2(x))))
 *   logits = lm_head(ln_f(x)); loss = mean cross-entropy over every position.
 * LayerNorm with eps 1e-5 (its weight and bias), c_attn d -> 3d (q, k, v,
 * heads side by side), causal softmax attention scaled by 1/sqrt(head_dim),
 * MLP d -> 4d -> d with nn.GELU() - the exact, erf form: that commit's MLP
 * uses nn.GELU() (the tanh new_gelu was replaced by it in 594068e7). The
 * head d -> vocab has no bias, as nanoGPT's lm_head, but is not tied to wte
 * (nanoGPT ties them): every tensor then has one role, one gradient term
 * and its own codec view. Initialization as GPT._init_weights: Linear and
 * Embedding weights normal(0, 0.02), the two c_proj weights of every block
 * normal(0, 0.02 / sqrt(2 layers)), biases 0, LayerNorm weight 1 bias 0.
 *
 * Activations are row-major (N = samples x context) x features arrays, so
 * every linear layer is one cblas_sgemm over all positions of a chunk of
 * CHUNK samples; attention is cblas_sgemm per (sample, head) over the full
 * context x context square. Measured (one core, width 64, 2 layers, 4
 * heads, context 64, 8 x 16 samples a step): 150 ms of CPU a step that
 * way, 220 ms with plain loops over the causal triangle (products of
 * head_dim 16 that the compiler does not vectorize).
 * A mini-batch is processed CHUNK samples at a time, the weight gradients
 * accumulated, so that the scratch stays small for any batch.
 */
#include "core/blas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "workload/chartf.h"

#define CHUNK 16u          /* samples per forward/backward pass */
#define LN_EPS 1e-5f       /* nanoGPT's LayerNorm: F.layer_norm(..., 1e-5) */
#define INIT_STD 0.02
#define PI 3.14159265358979323846
#define SQRT1_2 0.70710678118654752440     /* 1 / sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143267794 /* 1 / sqrt(2 pi) */

/* The tensors of block l: index 2 + l * BLOCK_TENSORS + k, after wte and wpe;
 * ln_f weight and bias and the head follow the last block. */
enum { LN1_W, LN1_B, QKV_W, QKV_B, AO_W, AO_B, LN2_W, LN2_B, FC_W, FC_B, PR_W, PR_B, BLOCK_TENSORS };
enum { WTE, WPE, BLOCK0 };

/* What the forward pass of one block keeps for the backward (n = chunk rows). */
typedef struct cache {
    float *x;              /* block input, n x d */
    float *h1, *mu1, *rs1; /* ln_1 output, row means and 1/std */
    float *qkv;            /* n x 3d */
    float *att;            /* softmax probabilities, (sample, head, T, T) */
    float *y;              /* attention output before c_proj, n x d */
    float *x1;             /* x after the attention residual */
    float *h2, *mu2, *rs2; /* ln_2 */
    float *u, *g;          /* c_fc output and its GELU, n x 4d */
} cache;

typedef struct chartf {
    uint32_t V, d, L, H, T, hd, max_batch;
    cache *c;                  /* L blocks */
    float *xf, *hf, *muf, *rsf; /* last block's output and ln_f */
    float *logits;             /* n x V, then their gradient */
    float *dx, *dh, *dqkv, *dy, *du, *ds; /* backward scratch (ds: T x T) */
    uint8_t *bx, *by;          /* a gathered mini-batch, max_batch x T each */
    float *mem;
} chartf;

static size_t tensor(uint32_t l, int k)
{
    return BLOCK0 + (size_t)l * BLOCK_TENSORS + (size_t)k;
}

static size_t tensors(uint32_t L)
{
    return BLOCK0 + (size_t)L * BLOCK_TENSORS + 3;
}

/* ---- layers ------------------------------------------------------------- */

/* out (n x mo) = in (n x k) W^T + b (W: mo x k, as nn.Linear.weight). */
static void linear_fwd(const float *in, const float *W, const float *b, uint32_t n, uint32_t k, uint32_t mo,
                       float *out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)mo, (int)k, 1.0f, in, (int)k, W, (int)k, 0.0f,
                out, (int)mo);
    for (uint32_t r = 0; b && r < n; r++)
        for (uint32_t j = 0; j < mo; j++)
            out[(size_t)r * mo + j] += b[j];
}

/* dW += dout^T in, db += column sums of dout, din = dout W (overwritten). */
static void linear_bwd(const float *dout, const float *in, const float *W, uint32_t n, uint32_t k, uint32_t mo,
                       float *din, float *dW, float *db)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)mo, (int)k, (int)n, 1.0f, dout, (int)mo, in, (int)k,
                1.0f, dW, (int)k);
    for (uint32_t r = 0; db && r < n; r++)
        for (uint32_t j = 0; j < mo; j++)
            db[j] += dout[(size_t)r * mo + j];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, (int)mo, 1.0f, dout, (int)mo, W, (int)k,
                0.0f, din, (int)k);
}

/* LayerNorm of the n rows of x (d wide): out = (x - mean) / sqrt(var + eps)
 * w + b, the biased variance as PyTorch's. */
static void ln_fwd(const float *x, const float *w, const float *b, uint32_t n, uint32_t d, float *out, float *mu,
                   float *rs)
{
    for (uint32_t r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * d;
        float *o = out + (size_t)r * d;
        float m = 0.0f, v = 0.0f;
        for (uint32_t j = 0; j < d; j++)
            m += xr[j];
        m /= (float)d;
        for (uint32_t j = 0; j < d; j++)
            v += (xr[j] - m) * (xr[j] - m);
        float s = 1.0f / sqrtf(v / (float)d + LN_EPS);
        for (uint32_t j = 0; j < d; j++)
            o[j] = (xr[j] - m) * s * w[j] + b[j];
        mu[r] = m;
        rs[r] = s;
    }
}

/* With xh = (x - mean) s and g = dout w: dw += dout xh, db += dout,
 * dx += s (g - mean(g) - xh mean(g xh)). */
static void ln_bwd(const float *dout, const float *x, const float *w, const float *mu, const float *rs, uint32_t n,
                   uint32_t d, float *dx, float *dw, float *db)
{
    for (uint32_t r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * d, *dr = dout + (size_t)r * d;
        float *o = dx + (size_t)r * d;
        float m1 = 0.0f, m2 = 0.0f;
        for (uint32_t j = 0; j < d; j++) {
            float xh = (xr[j] - mu[r]) * rs[r], g = dr[j] * w[j];
            dw[j] += dr[j] * xh;
            db[j] += dr[j];
            m1 += g;
            m2 += g * xh;
        }
        m1 /= (float)d;
        m2 /= (float)d;
        for (uint32_t j = 0; j < d; j++) {
            float xh = (xr[j] - mu[r]) * rs[r];
            o[j] += rs[r] * (dr[j] * w[j] - m1 - xh * m2);
        }
    }
}

/* nn.GELU(): x Phi(x) = x (1 + erf(x / sqrt 2)) / 2; its derivative
 * Phi(x) + x phi(x). */
static void gelu_fwd(const float *u, size_t n, float *g)
{
    for (size_t i = 0; i < n; i++)
        g[i] = 0.5f * u[i] * (1.0f + erff(u[i] * (float)SQRT1_2));
}

static void gelu_bwd(const float *u, size_t n, float *du)
{
    for (size_t i = 0; i < n; i++) {
        float x = u[i];
        float d = 0.5f * (1.0f + erff(x * (float)SQRT1_2)) + x * (float)INV_SQRT_2PI * expf(-0.5f * x * x);
        du[i] *= d;
    }
}

static void axpy(float a, const float *x, float *y, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* Causal self-attention of one chunk of B samples, per sample and head h:
 * S = Q K^T / sqrt(hd), att = the softmax of each row i of S over the
 * columns j <= i (0 for j > i), Y = att V; q, k, v are columns [0, d),
 * [d, 2d), [2d, 3d) of qkv, head h at h hd within each. Each product is one
 * cblas_sgemm over the full T x T square, the masked entries computed and
 * then given probability 0. */
static void attn_fwd(const chartf *c, const cache *k, uint32_t B)
{
    const int T = (int)c->T, d = (int)c->d, hd = (int)c->hd, ld = 3 * d;
    const float scale = 1.0f / sqrtf((float)hd);
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t h = 0; h < c->H; h++) {
            const float *q = k->qkv + (size_t)b * T * ld + (size_t)h * hd;
            float *p = k->att + ((size_t)b * c->H + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, scale, q, ld, q + d, ld, 0.0f, p, T);
            for (int i = 0; i < T; i++) {
                float *r = p + (size_t)i * T, mx = -INFINITY, sum = 0.0f;
                for (int j = 0; j <= i; j++)
                    mx = r[j] > mx ? r[j] : mx;
                for (int j = 0; j <= i; j++)
                    sum += r[j] = expf(r[j] - mx);
                for (int j = 0; j < T; j++)
                    r[j] = j <= i ? r[j] / sum : 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, p, T, q + 2 * d, ld, 0.0f,
                        k->y + (size_t)b * T * d + (size_t)h * hd, d);
        }
}

/* Backward of attn_fwd from c->dy into c->dqkv: dV = att^T dY,
 * dAtt = dY V^T, the softmax's dS_ij = att_ij (dAtt_ij - sum_j' att_ij'
 * dAtt_ij') / sqrt(hd), 0 where masked; dQ = dS K, dK = dS^T Q. */
static void attn_bwd(const chartf *c, const cache *k, uint32_t B)
{
    const int T = (int)c->T, d = (int)c->d, hd = (int)c->hd, ld = 3 * d;
    const float scale = 1.0f / sqrtf((float)hd);
    float *ds = c->ds;
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t h = 0; h < c->H; h++) {
            const size_t o = (size_t)b * T * ld + (size_t)h * hd;
            const float *q = k->qkv + o, *p = k->att + ((size_t)b * c->H + h) * T * T;
            const float *dy = c->dy + (size_t)b * T * d + (size_t)h * hd;
            float *dq = c->dqkv + o;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, p, T, dy, d, 0.0f, dq + 2 * d, ld);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, 1.0f, dy, d, q + 2 * d, ld, 0.0f, ds, T);
            for (int i = 0; i < T; i++) {
                const float *pr = p + (size_t)i * T;
                float *r = ds + (size_t)i * T, s = 0.0f;
                for (int j = 0; j <= i; j++)
                    s += pr[j] * r[j];
                for (int j = 0; j < T; j++)
                    r[j] = j <= i ? pr[j] * (r[j] - s) * scale : 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, ds, T, q + d, ld, 0.0f, dq, ld);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, ds, T, q, ld, 0.0f, dq + d, ld);
        }
}

/* ---- the model ---------------------------------------------------------- */

static const float *prm(const tc_proxy *m, uint32_t l, int k)
{
    return m->p + m->off[tensor(l, k)];
}

static float *grd(const tc_proxy *m, float *grad, uint32_t l, int k)
{
    return grad + m->off[tensor(l, k)];
}

/* x = wte[token] + wpe[position] for the n = B T inputs tok. */
static void embed_fwd(const tc_proxy *m, const chartf *c, const uint8_t *tok, uint32_t n, float *x)
{
    const float *wte = m->p + m->off[WTE], *wpe = m->p + m->off[WPE];
    for (uint32_t r = 0; r < n; r++) {
        const float *e = wte + (size_t)tok[r] * c->d, *q = wpe + (size_t)(r % c->T) * c->d;
        for (uint32_t j = 0; j < c->d; j++)
            x[(size_t)r * c->d + j] = e[j] + q[j];
    }
}

static void embed_bwd(const tc_proxy *m, const chartf *c, const uint8_t *tok, uint32_t n, const float *dx,
                      float *grad)
{
    float *gte = grad + m->off[WTE], *gpe = grad + m->off[WPE];
    for (uint32_t r = 0; r < n; r++) {
        axpy(1.0f, dx + (size_t)r * c->d, gte + (size_t)tok[r] * c->d, c->d);
        axpy(1.0f, dx + (size_t)r * c->d, gpe + (size_t)(r % c->T) * c->d, c->d);
    }
}

static void add(float *x, const float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] += a[i];
}

/* Block l on the n rows of k->x; its output into out. */
static void block_fwd(const tc_proxy *m, const chartf *c, uint32_t l, uint32_t B, float *out)
{
    const cache *k = &c->c[l];
    const uint32_t n = B * c->T, d = c->d;
    ln_fwd(k->x, prm(m, l, LN1_W), prm(m, l, LN1_B), n, d, k->h1, k->mu1, k->rs1);
    linear_fwd(k->h1, prm(m, l, QKV_W), prm(m, l, QKV_B), n, d, 3 * d, k->qkv);
    attn_fwd(c, k, B);
    linear_fwd(k->y, prm(m, l, AO_W), prm(m, l, AO_B), n, d, d, k->x1);
    add(k->x1, k->x, (size_t)n * d);
    ln_fwd(k->x1, prm(m, l, LN2_W), prm(m, l, LN2_B), n, d, k->h2, k->mu2, k->rs2);
    linear_fwd(k->h2, prm(m, l, FC_W), prm(m, l, FC_B), n, d, 4 * d, k->u);
    gelu_fwd(k->u, (size_t)n * 4 * d, k->g);
    linear_fwd(k->g, prm(m, l, PR_W), prm(m, l, PR_B), n, 4 * d, d, out);
    add(out, k->x1, (size_t)n * d);
}

/* c->dx holds the gradient at block l's output; leaves the one at its input. */
static void block_bwd(const tc_proxy *m, const chartf *c, uint32_t l, uint32_t B, float *grad)
{
    const cache *k = &c->c[l];
    const uint32_t n = B * c->T, d = c->d;
    linear_bwd(c->dx, k->g, prm(m, l, PR_W), n, 4 * d, d, c->du, grd(m, grad, l, PR_W), grd(m, grad, l, PR_B));
    gelu_bwd(k->u, (size_t)n * 4 * d, c->du);
    linear_bwd(c->du, k->h2, prm(m, l, FC_W), n, d, 4 * d, c->dh, grd(m, grad, l, FC_W), grd(m, grad, l, FC_B));
    ln_bwd(c->dh, k->x1, prm(m, l, LN2_W), k->mu2, k->rs2, n, d, c->dx, grd(m, grad, l, LN2_W),
           grd(m, grad, l, LN2_B));
    linear_bwd(c->dx, k->y, prm(m, l, AO_W), n, d, d, c->dy, grd(m, grad, l, AO_W), grd(m, grad, l, AO_B));
    attn_bwd(c, k, B);
    linear_bwd(c->dqkv, k->h1, prm(m, l, QKV_W), n, d, 3 * d, c->dh, grd(m, grad, l, QKV_W),
               grd(m, grad, l, QKV_B));
    ln_bwd(c->dh, k->x, prm(m, l, LN1_W), k->mu1, k->rs1, n, d, c->dx, grd(m, grad, l, LN1_W),
           grd(m, grad, l, LN1_B));
}

/* The logits of B <= CHUNK samples (inputs tok) into c->logits. */
static void forward(const tc_proxy *m, const chartf *c, const uint8_t *tok, uint32_t B)
{
    const uint32_t n = B * c->T, L = c->L;
    embed_fwd(m, c, tok, n, c->c[0].x);
    for (uint32_t l = 0; l < L; l++)
        block_fwd(m, c, l, B, l + 1 < L ? c->c[l + 1].x : c->xf);
    const size_t f = tensor(L, 0);
    ln_fwd(c->xf, m->p + m->off[f], m->p + m->off[f + 1], n, c->d, c->hf, c->muf, c->rsf);
    linear_fwd(c->hf, m->p + m->off[f + 2], NULL, n, c->d, c->V, c->logits);
}

/* The summed cross-entropy of the n rows of c->logits against targets y;
 * leaves its gradient times `scale` in c->logits. */
static double cross_entropy(const chartf *c, const uint8_t *y, uint32_t n, float scale)
{
    double loss = 0.0;
    for (uint32_t r = 0; r < n; r++) {
        float *z = c->logits + (size_t)r * c->V, mx = z[0];
        for (uint32_t v = 1; v < c->V; v++)
            mx = z[v] > mx ? z[v] : mx;
        double sum = 0.0;
        float zy = z[y[r]];
        for (uint32_t v = 0; v < c->V; v++)
            sum += z[v] = expf(z[v] - mx);
        loss += log(sum) - (double)(zy - mx);
        const float inv = (float)(1.0 / sum);
        for (uint32_t v = 0; v < c->V; v++)
            z[v] = (z[v] * inv - (v == y[r] ? 1.0f : 0.0f)) * scale;
    }
    return loss;
}

/* Backward from the logits' gradient in c->logits, accumulated into grad. */
static void backward(const tc_proxy *m, const chartf *c, const uint8_t *tok, uint32_t B, float *grad)
{
    const uint32_t n = B * c->T, L = c->L;
    const size_t f = tensor(L, 0);
    linear_bwd(c->logits, c->hf, m->p + m->off[f + 2], n, c->d, c->V, c->dh, grad + m->off[f + 2], NULL);
    memset(c->dx, 0, (size_t)n * c->d * sizeof *c->dx);
    ln_bwd(c->dh, c->xf, m->p + m->off[f], c->muf, c->rsf, n, c->d, c->dx, grad + m->off[f], grad + m->off[f + 1]);
    for (uint32_t l = L; l-- > 0;)
        block_bwd(m, c, l, B, grad);
    embed_bwd(m, c, tok, n, c->dx, grad);
}

double tc_chartf_grad(tc_proxy *m, const uint8_t *x, const uint8_t *y, uint32_t B, float *grad)
{
    const chartf *c = m->impl;
    memset(grad, 0, m->nparams * sizeof *grad);
    const float scale = 1.0f / ((float)B * (float)c->T);
    double loss = 0.0;
    for (uint32_t b = 0; b < B; b += CHUNK) {
        uint32_t nb = B - b < CHUNK ? B - b : CHUNK;
        const size_t at = (size_t)b * c->T;
        forward(m, c, x + at, nb);
        loss += cross_entropy(c, y + at, nb * c->T, scale);
        backward(m, c, x + at, nb, grad);
    }
    return B ? loss / ((double)B * c->T) : 0.0;
}

void tc_chartf_logits(tc_proxy *m, const uint8_t *x, uint32_t B, float *logits)
{
    const chartf *c = m->impl;
    for (uint32_t b = 0; b < B; b += CHUNK) {
        uint32_t nb = B - b < CHUNK ? B - b : CHUNK;
        forward(m, c, x + (size_t)b * c->T, nb);
        memcpy(logits + (size_t)b * c->T * c->V, c->logits, (size_t)nb * c->T * c->V * sizeof *logits);
    }
}

/* ---- the proxy ---------------------------------------------------------- */

/* Carves the scratch of chunks of CHUNK samples out of one allocation (or
 * only counts it, base NULL); returns the floats needed. */
static size_t carve(chartf *c, float *base)
{
    const size_t n = (size_t)CHUNK * c->T, d = c->d, att = (size_t)CHUNK * c->H * c->T * c->T;
    size_t at = 0;
#define TAKE(ptr, count) ((ptr) = base ? base + at : NULL, at += (count))
    for (uint32_t l = 0; l < c->L; l++) {
        cache *k = &c->c[l];
        TAKE(k->x, n * d), TAKE(k->h1, n * d), TAKE(k->mu1, n), TAKE(k->rs1, n), TAKE(k->qkv, 3 * n * d);
        TAKE(k->att, att), TAKE(k->y, n * d), TAKE(k->x1, n * d), TAKE(k->h2, n * d), TAKE(k->mu2, n);
        TAKE(k->rs2, n), TAKE(k->u, 4 * n * d), TAKE(k->g, 4 * n * d);
    }
    TAKE(c->xf, n * d), TAKE(c->hf, n * d), TAKE(c->muf, n), TAKE(c->rsf, n), TAKE(c->logits, n * c->V);
    TAKE(c->dx, n * d), TAKE(c->dh, n * d), TAKE(c->dqkv, 3 * n * d), TAKE(c->dy, n * d);
    TAKE(c->du, 4 * n * d), TAKE(c->ds, (size_t)c->T * c->T);
#undef TAKE
    return at;
}

static void chartf_destroy(tc_proxy *m)
{
    chartf *c = m->impl;
    if (c) {
        free(c->c);
        free(c->mem);
        free(c->bx);
        free(c->by);
        free(c);
    }
    free(m->p);
    memset(m, 0, sizeof *m);
}

/* The sizes from o (0: the defaults), checked against the corpus. */
static tc_status sizes(const tc_train_opts *o, const tc_corpus *cp, chartf *c, tc_err *err)
{
    c->V = TC_CORPUS_VOCAB;
    c->d = o->width ? o->width : TC_CHARTF_WIDTH;
    c->L = o->layers ? o->layers : TC_CHARTF_LAYERS;
    c->H = o->heads ? o->heads : TC_CHARTF_HEADS;
    c->T = o->context ? o->context : TC_CHARTF_CONTEXT;
    if (c->d % c->H != 0)
        return tc_fail(err, TC_EINVAL, "chartf: %u heads do not divide the width %u", c->H, c->d);
    if (tensors(c->L) > TC_PROXY_MAX_TENSORS)
        return tc_fail(err, TC_EINVAL, "chartf: %u layers make %zu tensors, at most %d (layers 1..%d)", c->L,
                       tensors(c->L), TC_PROXY_MAX_TENSORS, (TC_PROXY_MAX_TENSORS - BLOCK0 - 3) / BLOCK_TENSORS);
    if (c->T != cp->context)
        return tc_fail(err, TC_EINVAL, "chartf: context %u, but the corpus was loaded at context %u", c->T,
                       cp->context);
    c->hd = c->d / c->H;
    return TC_OK;
}

/* normal(0, std) from the counter stream `stream` of the seed: Box-Muller
 * on two uniforms of tc_proxy_uniform (u1 in (0, 1], u2 in [-1, 1)). */
static float normal(uint64_t seed, uint64_t stream, uint64_t i, double std)
{
    double u1 = 0.5 * (1.0 - (double)tc_proxy_uniform(seed, stream, 2 * i, 1.0f));
    double u2 = tc_proxy_uniform(seed, stream, 2 * i + 1, 1.0f);
    return (float)(std * sqrt(-2.0 * log(u1)) * cos(PI * u2));
}

/* How a tensor starts: 0, 1, normal(0, INIT_STD), or normal(0, INIT_STD /
 * sqrt(2 layers)) for the residual projections (the c_proj weights). */
typedef enum { INIT_ZERO, INIT_ONE, INIT_NORMAL, INIT_PROJ } init_kind;

/* Tensor t: its shape as powerSGD views it (a weight (out, in) as
 * nn.Linear.weight, an embedding (rows, d), a bias or LayerNorm parameter
 * (n, 1)) and how it starts. */
static init_kind describe(const chartf *c, size_t t, tc_codec_tensor *shape)
{
    /* Block tensors: rows and cols in multiples of d (cols 0: 1). */
    static const struct {
        uint8_t rows, cols;
        init_kind init;
    } block[BLOCK_TENSORS] = {{1, 0, INIT_ONE}, {1, 0, INIT_ZERO}, {3, 1, INIT_NORMAL}, {3, 0, INIT_ZERO},
                              {1, 1, INIT_PROJ}, {1, 0, INIT_ZERO}, {1, 0, INIT_ONE},   {1, 0, INIT_ZERO},
                              {4, 1, INIT_NORMAL}, {4, 0, INIT_ZERO}, {1, 4, INIT_PROJ}, {1, 0, INIT_ZERO}};
    const uint64_t d = c->d;
    const size_t f = tensor(c->L, 0);
    if (t == WTE || t == WPE || t == f + 2) {
        *shape = (tc_codec_tensor){t == WPE ? c->T : c->V, d};
        return INIT_NORMAL;
    }
    if (t >= f) {
        *shape = (tc_codec_tensor){d, 1};
        return t == f ? INIT_ONE : INIT_ZERO;
    }
    size_t k = (t - BLOCK0) % BLOCK_TENSORS;
    *shape = (tc_codec_tensor){block[k].rows * d, block[k].cols ? block[k].cols * d : 1};
    return block[k].init;
}

/* Shapes, decay (the weights and embeddings, as nanoGPT's
 * configure_optimizers decays every parameter of 2 or more dimensions) and
 * initial values of every tensor. */
static void init_tensors(tc_proxy *m, const chartf *c, uint64_t seed)
{
    const uint64_t s = tc_mix64(seed ^ 0x636861727466ULL);
    for (size_t t = 0; t < m->ntensors; t++) {
        init_kind k = describe(c, t, &m->shape[t]);
        double std = k == INIT_PROJ ? INIT_STD / sqrt(2.0 * c->L) : INIT_STD;
        m->decay[t] = k == INIT_NORMAL || k == INIT_PROJ;
        for (size_t i = m->off[t]; i < m->off[t + 1]; i++)
            m->p[i] = m->decay[t] ? normal(s, t, i - m->off[t], std) : k == INIT_ONE ? 1.0f : 0.0f;
    }
}

/* The scratch of the forward and backward passes and of a gathered batch. */
static tc_status alloc_scratch(chartf *c, uint32_t max_batch, tc_err *err)
{
    c->max_batch = max_batch;
    c->c = calloc(c->L, sizeof *c->c);
    size_t floats = c->c ? carve(c, NULL) : 0;
    c->mem = floats ? malloc(floats * sizeof *c->mem) : NULL;
    c->bx = malloc((size_t)(max_batch ? max_batch : 1) * c->T);
    c->by = malloc((size_t)(max_batch ? max_batch : 1) * c->T);
    if (!c->mem || !c->bx || !c->by)
        return tc_fail(err, TC_EINTERNAL, "out of memory for the scratch of a transformer of width %u", c->d);
    carve(c, c->mem);
    return TC_OK;
}

static tc_status alloc_params(tc_proxy *m, const chartf *c, tc_err *err)
{
    size_t sz[TC_PROXY_MAX_TENSORS];
    for (size_t t = 0; t < tensors(c->L); t++) {
        tc_codec_tensor shape;
        describe(c, t, &shape);
        sz[t] = (size_t)(shape.rows * shape.cols);
    }
    return tc_proxy_alloc(m, sz, tensors(c->L), err);
}

static tc_status chartf_create(const tc_train_opts *o, const tc_proxy_data *d, uint64_t seed, uint32_t max_batch,
                               tc_proxy *m, tc_err *err)
{
    memset(m, 0, sizeof *m);
    tc_status st = tc_blas_load(err);
    if (st)
        return st;
    chartf *c = calloc(1, sizeof *c);
    if (!c)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a model");
    m->impl = c;
    if ((st = sizes(o, d->impl, c, err)) == TC_OK && (st = alloc_scratch(c, max_batch, err)) == TC_OK)
        st = alloc_params(m, c, err);
    if (st) {
        chartf_destroy(m);
        return st;
    }
    init_tensors(m, c, seed);
    return TC_OK;
}

/* Gathers samples idx[0..B) of the split into the instance's batch. */
static void gather(const chartf *c, const tc_corpus_split *s, const uint32_t *idx, uint32_t B)
{
    for (uint32_t b = 0; b < B; b++) {
        memcpy(c->bx + (size_t)b * c->T, s->x + (size_t)idx[b] * c->T, c->T);
        memcpy(c->by + (size_t)b * c->T, s->y + (size_t)idx[b] * c->T, c->T);
    }
}

static double chartf_grad(tc_proxy *m, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, float *grad)
{
    const chartf *c = m->impl;
    gather(c, &((const tc_corpus *)d->impl)->train, idx, B);
    return tc_chartf_grad(m, c->bx, c->by, B, grad);
}

/* Correct next-symbol predictions (argmax of the logits, the first on ties)
 * of the n rows of c->logits. */
static uint64_t correct(const chartf *c, const uint8_t *y, uint32_t n)
{
    uint64_t ok = 0;
    for (uint32_t r = 0; r < n; r++) {
        const float *z = c->logits + (size_t)r * c->V;
        uint32_t best = 0;
        for (uint32_t v = 1; v < c->V; v++)
            best = z[v] > z[best] ? v : best;
        ok += best == y[r];
    }
    return ok;
}

static void chartf_eval(tc_proxy *m, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, uint64_t *ok,
                        uint64_t *total)
{
    const chartf *c = m->impl;
    gather(c, &((const tc_corpus *)d->impl)->test, idx, B);
    *ok = 0;
    for (uint32_t b = 0; b < B; b += CHUNK) {
        uint32_t nb = B - b < CHUNK ? B - b : CHUNK;
        forward(m, c, c->bx + (size_t)b * c->T, nb);
        *ok += correct(c, c->by + (size_t)b * c->T, nb * c->T);
    }
    *total = (uint64_t)B * c->T;
}

/* The learning rate. nanoGPT's character-level config uses 1e-3
 * (config/train_shakespeare_char.py at the commit above: learning_rate
 * 1e-3, "with baby networks can afford to go a bit higher"). Sweeps here,
 * AdamW (betas 0.9, 0.999, weight decay 0.01), 8 workers x 16 samples a
 * step, no schedule, next-character test accuracy:
 *   width 64, 2 blocks, 4 heads, context 64, after 1,000 / 2,000 steps:
 *   1e-3 0.437 / 0.475, 3e-3 0.431 / 0.472 (1e-2: 0.309 after 500 steps);
 *   width 32, 1 block, 2 heads, context 32: 3e-3 0.396 / 0.412 against
 *   0.374 / 0.397 with 1e-3 (1e-2: 0.396 / 0.413);
 *   the defaults (width 32, 2 blocks, 2 heads, context 32), 1,000 steps,
 *   first 1,000 test samples: 3e-3 0.395, 1e-3 0.368.
 * The defaults are the smaller model (about 30 ms a step on one core, where
 * width 64 and context 64 take 150 ms), so 3e-3. */
const tc_proxy_ops tc_proxy_chartf = {
    .name = "chartf",
    .family = "language",
    .dataset = "fortunes",
    .package = "fortunes",
    .dir = tc_fortunes_dir,
    .optimizer = TC_OPT_ADAMW,
    .lr = 3e-3,
    .width = TC_CHARTF_WIDTH,
    .layers = TC_CHARTF_LAYERS,
    .heads = TC_CHARTF_HEADS,
    .context = TC_CHARTF_CONTEXT,
    .load = tc_fortunes_load,
    .unload = tc_fortunes_unload,
    .create = chartf_create,
    .destroy = chartf_destroy,
    .grad = chartf_grad,
    .eval = chartf_eval,
};
