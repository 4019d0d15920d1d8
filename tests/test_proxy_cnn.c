/*
 * test_proxy_cnn.c - the cnn proxy (src/workload/cnn.c): its tensors and
 * initialization, its gradient against central finite differences of a
 * plain double-precision reference written here (every coordinate of every
 * tensor) and against that reference's own backward pass (max-pool ties
 * included, batches of several chunks), bitwise determinism across
 * instances and threads, and that it learns Fashion-MNIST but not the same
 * images with permuted labels.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/blas.h"
#include "workload/proxy.h"

#define MAXC 8      /* the widest network the reference handles */
#define NCLS 10
#define NTENS 6

/* ---- data ------------------------------------------------------------------ */

/* n synthetic 28x28 images: a blank 4-pixel border, as Fashion-MNIST's
 * images have (so the first layer sees runs of equal inputs), random pixels
 * inside; random labels. */
static void synth_set(tc_dataset *s, uint32_t n, uint64_t seed)
{
    s->n = n;
    s->rows = s->cols = 28;
    s->dim = 784;
    s->x = calloc((size_t)n * 784, 1);
    s->y = malloc(n);
    assert_non_null(s->x);
    assert_non_null(s->y);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t r = 4; r < 24; r++)
            for (uint32_t c = 4; c < 24; c++)
                s->x[(size_t)i * 784 + r * 28 + c] = (uint8_t)(tc_mix64(seed ^ ((uint64_t)i << 20 | (r * 28 + c))) >> 56);
        s->y[i] = (uint8_t)(tc_mix64(seed + 77 * i + 5) % NCLS);
    }
}

typedef struct synth {
    tc_image_data im;
    tc_proxy_data d;
} synth;

static void synth_make(synth *s, uint32_t n)
{
    synth_set(&s->im.train, n, 11);
    synth_set(&s->im.test, n, 12);
    s->d = (tc_proxy_data){.n_train = n, .n_test = n, .chance = 0.1, .impl = &s->im};
}

static void synth_free(synth *s)
{
    tc_dataset_free(&s->im.train);
    tc_dataset_free(&s->im.test);
}

static tc_proxy make(const tc_proxy_data *d, uint32_t width, uint64_t seed, uint32_t max_batch)
{
    tc_train_opts o;
    memset(&o, 0, sizeof o);
    o.width = width;
    tc_proxy m;
    tc_err err = {{0}};
    if (tc_proxy_cnn.create(&o, d, seed, max_batch, &m, &err) != TC_OK)
        fail_msg("create: %s", err.msg);
    return m;
}

/* ---- the reference: the network written out plainly, in double ----------- */

typedef struct ref {
    int C;
    double *w1, *b1, *w2, *b2, *wf, *bf;
} ref;

/* The tensors of p (or of a gradient laid out as p). */
static ref ref_of(double *p, int C)
{
    ref r = {.C = C, .w1 = p};
    r.b1 = r.w1 + 25 * C;
    r.w2 = r.b1 + C;
    r.b2 = r.w2 + 50 * C * C;
    r.wf = r.b2 + 2 * C;
    r.bf = r.wf + 320 * C;
    return r;
}

/* One sample's activations and their gradients. */
typedef struct acts {
    double x[784];
    double a1[MAXC * 576], p1[MAXC * 144], a2[2 * MAXC * 64], p2[2 * MAXC * 16], z[NCLS];
    int m1[MAXC * 144], m2[2 * MAXC * 16];
    double da1[MAXC * 576], dp1[MAXC * 144], da2[2 * MAXC * 64], dp2[2 * MAXC * 16];
} acts;

/* relu(valid 5x5 convolution + b): cin planes of side `side` -> cout planes. */
static void ref_conv(const double *in, int cin, int side, const double *w, const double *b, int cout, double *out)
{
    const int o = side - 4;
    for (int co = 0; co < cout; co++)
        for (int y = 0; y < o; y++)
            for (int x = 0; x < o; x++) {
                double v = b[co];
                for (int ci = 0; ci < cin; ci++)
                    for (int k = 0; k < 25; k++)
                        v += w[(co * cin + ci) * 25 + k] * in[(ci * side + y + k / 5) * side + x + k % 5];
                out[(co * o + y) * o + x] = v > 0 ? v : 0;
            }
}

/* Its backward from dout (at the outputs, ReLU already applied): gw, gb and
 * din (when not NULL) accumulate. */
static void ref_conv_back(const double *in, int cin, int side, const double *w, int cout, const double *dout,
                          double *gw, double *gb, double *din)
{
    const int o = side - 4;
    for (int co = 0; co < cout; co++)
        for (int y = 0; y < o; y++)
            for (int x = 0; x < o; x++) {
                double d = dout[(co * o + y) * o + x];
                gb[co] += d;
                for (int ci = 0; ci < cin; ci++)
                    for (int k = 0; k < 25; k++) {
                        int at = (ci * side + y + k / 5) * side + x + k % 5;
                        gw[(co * cin + ci) * 25 + k] += d * in[at];
                        if (din)
                            din[at] += d * w[(co * cin + ci) * 25 + k];
                    }
            }
}

/* 2x2 max-pool of `planes` planes; arg: the index of each maximum, the
 * first of equal values in row-major window order (the last with `last`). */
static void ref_pool(const double *a, int planes, int side, bool last, double *out, int *arg)
{
    const int h = side / 2;
    for (int pl = 0; pl < planes; pl++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < h; x++) {
                int best = -1;
                for (int k = 0; k < 4; k++) {
                    int at = (pl * side + 2 * y + k / 2) * side + 2 * x + k % 2;
                    if (best < 0 || a[at] > a[best] || (last && a[at] == a[best]))
                        best = at;
                }
                out[(pl * h + y) * h + x] = a[best];
                arg[(pl * h + y) * h + x] = best;
            }
}

/* dp routed to the maxima where the ReLU output is positive; da zeroed first. */
static void ref_unpool(const double *a, int na, const int *arg, const double *dp, int n, double *da)
{
    memset(da, 0, (size_t)na * sizeof *da);
    for (int j = 0; j < n; j++)
        if (a[arg[j]] > 0)
            da[arg[j]] = dp[j];
}

/* Forward of the sample in t->x with label y; returns its loss. */
static double ref_forward(const ref *r, acts *t, int y, bool last)
{
    const int C = r->C, F = 32 * C;
    ref_conv(t->x, 1, 28, r->w1, r->b1, C, t->a1);
    ref_pool(t->a1, C, 24, last, t->p1, t->m1);
    ref_conv(t->p1, C, 12, r->w2, r->b2, 2 * C, t->a2);
    ref_pool(t->a2, 2 * C, 8, last, t->p2, t->m2);
    double mx = -INFINITY, sum = 0;
    for (int k = 0; k < NCLS; k++) {
        t->z[k] = r->bf[k];
        for (int j = 0; j < F; j++)
            t->z[k] += r->wf[k * F + j] * t->p2[j];
        mx = t->z[k] > mx ? t->z[k] : mx;
    }
    for (int k = 0; k < NCLS; k++)
        sum += exp(t->z[k] - mx);
    return mx + log(sum) - t->z[y];
}

/* Adds scale times the sample's gradient (after ref_forward) to g, laid out
 * as the parameters. */
static void ref_backward(const ref *r, acts *t, int y, double scale, double *g)
{
    const int C = r->C, F = 32 * C;
    ref gr = ref_of(g, C);
    double mx = -INFINITY, sum = 0, dz[NCLS];
    for (int k = 0; k < NCLS; k++)
        mx = t->z[k] > mx ? t->z[k] : mx;
    for (int k = 0; k < NCLS; k++)
        sum += exp(t->z[k] - mx);
    for (int k = 0; k < NCLS; k++)
        dz[k] = (exp(t->z[k] - mx) / sum - (k == y)) * scale;
    memset(t->dp2, 0, sizeof t->dp2);
    for (int k = 0; k < NCLS; k++) {
        gr.bf[k] += dz[k];
        for (int j = 0; j < F; j++) {
            gr.wf[k * F + j] += dz[k] * t->p2[j];
            t->dp2[j] += dz[k] * r->wf[k * F + j];
        }
    }
    ref_unpool(t->a2, 2 * C * 64, t->m2, t->dp2, F, t->da2);
    memset(t->dp1, 0, sizeof t->dp1);
    ref_conv_back(t->p1, C, 12, r->w2, 2 * C, t->da2, gr.w2, gr.b2, t->dp1);
    ref_unpool(t->a1, C * 576, t->m1, t->dp1, C * 144, t->da1);
    ref_conv_back(t->x, 1, 28, r->w1, C, t->da1, gr.w1, gr.b1, NULL);
}

/* The input as cnn.c normalizes it (the same float arithmetic). */
static void ref_input(const tc_dataset *s, uint32_t i, double *x)
{
    const float scale = 1.0f / (255.0f * TC_FMNIST_STD), shift = TC_FMNIST_MEAN / TC_FMNIST_STD;
    for (int j = 0; j < 784; j++)
        x[j] = (double)((float)s->x[(size_t)i * 784 + j] * scale - shift);
}

/* Mean loss over samples idx[0..B) of s; with g (np doubles, overwritten),
 * its gradient. */
static double ref_batch(double *p, int C, const tc_dataset *s, const uint32_t *idx, uint32_t B, bool last,
                        double *g, size_t np)
{
    acts *t = malloc(sizeof *t);
    assert_non_null(t);
    ref r = ref_of(p, C);
    if (g)
        memset(g, 0, np * sizeof *g);
    double loss = 0;
    for (uint32_t b = 0; b < B; b++) {
        ref_input(s, idx[b], t->x);
        loss += ref_forward(&r, t, s->y[idx[b]], last);
        if (g)
            ref_backward(&r, t, s->y[idx[b]], 1.0 / B, g);
    }
    free(t);
    return loss / B;
}

static double *to_double(const float *p, size_t n)
{
    double *d = malloc(n * sizeof *d);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = p[i];
    return d;
}

/* Every coordinate i of every tensor t: |got - want| <= tol (|want| +
 * max |want| over t). Returns the largest ratio of error to that scale. */
static double check_close(const tc_proxy *m, const float *got, const double *want, double tol, const char *what)
{
    static const char *const names[NTENS] = {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                             "fc.weight", "fc.bias"};
    double worst = 0;
    for (size_t t = 0; t < m->ntensors; t++) {
        double big = 0;
        for (size_t i = m->off[t]; i < m->off[t + 1]; i++)
            big = fmax(big, fabs(want[i]));
        assert_true(big > 0);
        for (size_t i = m->off[t]; i < m->off[t + 1]; i++) {
            double e = fabs(got[i] - want[i]) / (fabs(want[i]) + big);
            worst = fmax(worst, e);
            if (e > tol)
                fail_msg("%s: %s[%zu] = %.9g, expected %.9g (error %.3g of the scale, tolerance %.3g)", what, names[t],
                         i - m->off[t], (double)got[i], want[i], e, tol);
        }
    }
    return worst;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_shapes(void **state)
{
    (void)state;
    synth s;
    synth_make(&s, 4);
    for (uint32_t C = 1; C <= 8; C *= 2) {
        tc_proxy m = make(&s.d, C, 3, 4);
        const size_t size[NTENS] = {25 * C, C, 50 * C * C, 2 * C, 320 * C, 10};
        const tc_codec_tensor view[NTENS] = {{C, 25}, {C, 1}, {2 * C, 25 * C}, {2 * C, 1}, {10, 32 * C}, {10, 1}};
        const double fan[NTENS] = {25, 25, 25.0 * C, 25.0 * C, 32.0 * C, 32.0 * C};
        assert_int_equal(m.nparams, 25 * C + C + 50 * C * C + 2 * C + 320 * C + 10);
        assert_int_equal(m.ntensors, NTENS);
        assert_int_equal(m.off[0], 0);
        for (int t = 0; t < NTENS; t++) {
            assert_int_equal(m.off[t + 1] - m.off[t], size[t]);
            assert_int_equal(m.shape[t].rows, view[t].rows);
            assert_int_equal(m.shape[t].cols, view[t].cols);
            assert_int_equal(m.shape[t].rows * m.shape[t].cols, size[t]);
            assert_true(m.decay[t] == (t % 2 == 0));
            /* uniform in +-1/sqrt(fan_in): inside the bound, and filling it */
            double a = 1.0 / sqrt(fan[t]), lo = 0, hi = 0;
            for (size_t i = m.off[t]; i < m.off[t + 1]; i++) {
                assert_true(fabs(m.p[i]) <= a * (1 + 1e-6));
                lo = fmin(lo, m.p[i]);
                hi = fmax(hi, m.p[i]);
            }
            if (size[t] >= 200)
                assert_true(hi > 0.9 * a && lo < -0.9 * a);
        }
        /* each tensor its own stream: no tensor starts as another does */
        for (int t = 1; t < NTENS; t++)
            assert_true(m.p[m.off[t]] != m.p[m.off[t - 1]]);
        tc_proxy_cnn.destroy(&m);
        assert_null(m.p);
    }
    tc_proxy a = make(&s.d, 2, 1, 4), b = make(&s.d, 2, 2, 4);
    assert_true(memcmp(a.p, b.p, a.nparams * sizeof *a.p) != 0);
    tc_proxy_cnn.destroy(&a);
    tc_proxy_cnn.destroy(&b);
    tc_proxy d = make(&s.d, 0, 1, 4); /* width 0: the default, 8 */
    assert_int_equal(d.nparams, 25 * 8 + 8 + 50 * 64 + 16 + 320 * 8 + 10);
    tc_proxy_cnn.destroy(&d);
    synth_free(&s);
}

/* grad() against central differences of the double reference's mean loss,
 * on every coordinate, and against the reference's own backward pass. The
 * differences use h = 1e-5 in double: truncation (h^2 |f'''|) and rounding
 * (1e-16 |f| / h) are below 1e-9, so the error left is grad()'s float
 * arithmetic, sums of at most a few thousand products (relative 1e-5 at
 * most), plus the odd ReLU or pooling kink inside [p - h, p + h] (none
 * here). The tolerance, 1e-4 of |fd| plus the largest |fd| of the tensor,
 * is some 300 times the worst error seen (3.4e-7) and far below what a wrong
 * or missing backward term gives, an error of the order of the gradient
 * itself (breaking the pooling's routing or ReLU mask, col2im, the
 * flattening, the bias sums or the loss scale each fails this test or the
 * next two). */
static void test_grad_fd(void **state)
{
    (void)state;
    synth s;
    synth_make(&s, 8);
    const int C = 2;
    const uint32_t idx[3] = {5, 0, 3};
    tc_proxy m = make(&s.d, C, 7, 3);
    float *g = malloc(m.nparams * sizeof *g);
    double *fd = malloc(m.nparams * sizeof *fd), *rg = malloc(m.nparams * sizeof *rg);
    assert_true(g && fd && rg);
    double loss = tc_proxy_cnn.grad(&m, &s.d, idx, 3, g);
    double *p = to_double(m.p, m.nparams);
    double want = ref_batch(p, C, &s.im.train, idx, 3, false, rg, m.nparams);
    assert_true(fabs(loss - want) <= 1e-5 * want);
    const double h = 1e-5;
    for (size_t i = 0; i < m.nparams; i++) {
        double v = p[i];
        p[i] = v + h;
        double lp = ref_batch(p, C, &s.im.train, idx, 3, false, NULL, 0);
        p[i] = v - h;
        double lm = ref_batch(p, C, &s.im.train, idx, 3, false, NULL, 0);
        p[i] = v;
        fd[i] = (lp - lm) / (2 * h);
    }
    double e1 = check_close(&m, g, fd, 1e-4, "grad vs finite differences");
    double e2 = check_close(&m, g, rg, 1e-4, "grad vs the reference backward");
    print_message("worst error: %.2g of the scale against finite differences, %.2g against the reference\n", e1, e2);
    free(p);
    free(g);
    free(fd);
    free(rg);
    tc_proxy_cnn.destroy(&m);
    synth_free(&s);
}

/* Max-pool ties: conv1.weight = 0 makes every conv1 output its channel's
 * bias, so every 2x2 window of both pools holds four equal values (conv2's
 * inputs and weights are dyadic and small, so its sums are exact in any
 * order, and its bias makes them positive). The gradient must go to the
 * first maximum of each window alone: the reference with that rule agrees
 * with grad(), the one with the last maximum does not. */
static void test_pool_ties(void **state)
{
    (void)state;
    synth s;
    synth_make(&s, 8);
    const int C = 2;
    const uint32_t idx[4] = {1, 2, 6, 7};
    tc_proxy m = make(&s.d, C, 9, 4);
    float *w1 = m.p + m.off[0], *b1 = m.p + m.off[1], *w2 = m.p + m.off[2], *b2 = m.p + m.off[3];
    memset(w1, 0, 25 * C * sizeof *w1);
    b1[0] = 0.5f;
    b1[1] = 0.25f;
    for (int i = 0; i < 50 * C * C; i++)
        w2[i] = (float)((int)(tc_mix64(0x7469 + i) % 17) - 8) / 64.0f;
    for (int i = 0; i < 2 * C; i++)
        b2[i] = 4.0f;
    float *g = malloc(m.nparams * sizeof *g);
    double *first = malloc(m.nparams * sizeof *first), *last = malloc(m.nparams * sizeof *last);
    assert_true(g && first && last);
    tc_proxy_cnn.grad(&m, &s.d, idx, 4, g);
    double *p = to_double(m.p, m.nparams);
    ref_batch(p, C, &s.im.train, idx, 4, false, first, m.nparams);
    ref_batch(p, C, &s.im.train, idx, 4, true, last, m.nparams);
    check_close(&m, g, first, 1e-4, "ties: grad vs the reference (first maximum)");
    /* the rules differ where it shows: conv1.weight's gradient */
    double diff = 0, big = 0;
    for (size_t i = 0; i < m.off[1]; i++) {
        diff = fmax(diff, fabs(first[i] - last[i]));
        big = fmax(big, fabs(first[i]));
    }
    assert_true(diff > 0.1 * big);
    /* one routed gradient per window: the bias gradient is the sum of the
     * pooled gradients, not four times it */
    for (int c = 0; c < C; c++)
        assert_true(fabs(g[m.off[1] + c] - first[m.off[1] + c]) <= 1e-4 * fabs(first[m.off[1] + c]) + 1e-7);
    free(p);
    free(g);
    free(first);
    free(last);
    tc_proxy_cnn.destroy(&m);
    synth_free(&s);
}

/* Samples of idx[0..B) whose largest reference logit is their label's. */
static uint64_t ref_correct(double *p, int C, const tc_dataset *s, const uint32_t *idx, uint32_t B)
{
    acts *t = malloc(sizeof *t);
    assert_non_null(t);
    ref r = ref_of(p, C);
    uint64_t ok = 0;
    for (uint32_t b = 0; b < B; b++) {
        ref_input(s, idx[b], t->x);
        ref_forward(&r, t, 0, false);
        int best = 0;
        for (int k = 1; k < NCLS; k++)
            best = t->z[k] > t->z[best] ? k : best;
        ok += best == s->y[idx[b]];
    }
    free(t);
    return ok;
}

/* A batch of several chunks, the last one partial (grad() accumulates chunk
 * by chunk), at the default width; eval on the same samples. */
static void test_grad_chunks(void **state)
{
    (void)state;
    synth s;
    synth_make(&s, 64);
    const int C = 8;
    uint32_t idx[37];
    for (uint32_t b = 0; b < 37; b++)
        idx[b] = (b * 13 + 5) % 64;
    tc_proxy m = make(&s.d, C, 4, 37);
    float *g = malloc(m.nparams * sizeof *g);
    double *rg = malloc(m.nparams * sizeof *rg);
    assert_true(g && rg);
    double loss = tc_proxy_cnn.grad(&m, &s.d, idx, 37, g);
    double *p = to_double(m.p, m.nparams);
    double want = ref_batch(p, C, &s.im.train, idx, 37, false, rg, m.nparams);
    assert_true(fabs(loss - want) <= 1e-5 * want);
    check_close(&m, g, rg, 1e-4, "37 samples: grad vs the reference");
    /* eval: the argmax of the reference's logits */
    uint64_t ok = 0, total = 0;
    tc_proxy_cnn.eval(&m, &s.d, idx, 37, &ok, &total);
    assert_int_equal(total, 37);
    assert_int_equal(ok, ref_correct(p, C, &s.im.test, idx, 37));
    free(p);
    free(g);
    free(rg);
    tc_proxy_cnn.destroy(&m);
    synth_free(&s);
}

/* ---- determinism ----------------------------------------------------------- */

typedef struct job {
    const tc_proxy_data *d;
    tc_proxy m;
    const uint32_t *idx;
    uint32_t B;
    float *g;
    double loss;
} job;

static int run_job(void *arg)
{
    job *j = arg;
    for (int rep = 0; rep < 3; rep++)
        j->loss = tc_proxy_cnn.grad(&j->m, j->d, j->idx, j->B, j->g);
    return 0;
}

static void test_determinism(void **state)
{
    (void)state;
    synth s;
    synth_make(&s, 64);
    uint32_t idx[40];
    for (uint32_t b = 0; b < 40; b++)
        idx[b] = (b * 7 + 1) % 64;
    job j[3];
    for (int k = 0; k < 3; k++) {
        j[k] = (job){.d = &s.d, .m = make(&s.d, 8, 21, 40), .idx = idx, .B = 40};
        j[k].g = malloc(j[k].m.nparams * sizeof *j[k].g);
        assert_non_null(j[k].g);
    }
    run_job(&j[0]);
    thrd_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(thrd_create(&th[k], run_job, &j[k + 1]), thrd_success);
    for (int k = 0; k < 2; k++)
        assert_int_equal(thrd_join(th[k], NULL), thrd_success);
    for (int k = 1; k < 3; k++) {
        assert_memory_equal(j[k].m.p, j[0].m.p, j[0].m.nparams * sizeof *j[0].m.p);
        assert_memory_equal(j[k].g, j[0].g, j[0].m.nparams * sizeof *j[0].g);
        assert_true(j[k].loss == j[0].loss);
    }
    for (int k = 0; k < 3; k++) {
        free(j[k].g);
        tc_proxy_cnn.destroy(&j[k].m);
    }
    synth_free(&s);
}

/* ---- learning -------------------------------------------------------------- */

static bool have_data(void)
{
    return access(TC_FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz", R_OK) == 0 &&
           access(TC_FASHION_MNIST_DIR "/t10k-labels-idx1-ubyte.gz", R_OK) == 0;
}

#define LEARN_TRAIN 8000u
#define LEARN_TEST 1000u
#define LEARN_BATCH 32u
#define LEARN_STEPS 400u

/* Test accuracy after LEARN_STEPS steps of SGD with momentum 0.9 (as
 * train.c: v = 0.9 v + g, p -= lr v) at the proxy's learning rate, batches
 * of LEARN_BATCH from a reshuffled order each epoch. */
static double train_accuracy(bool shuffled_labels)
{
    tc_train_opts o;
    memset(&o, 0, sizeof o);
    o.data_dir = TC_FASHION_MNIST_DIR;
    o.train_subset = LEARN_TRAIN;
    o.test_subset = LEARN_TEST;
    o.shuffled_labels = shuffled_labels;
    tc_proxy_data d;
    tc_err err = {{0}};
    if (tc_proxy_cnn.load(&o, &d, &err) != TC_OK)
        fail_msg("load: %s", err.msg);
    tc_proxy m = make(&d, 0, 1, 100);
    float *g = malloc(m.nparams * sizeof *g), *v = calloc(m.nparams, sizeof *v);
    uint32_t *perm = malloc(LEARN_TRAIN * sizeof *perm), idx[100];
    assert_true(g && v && perm);
    const float lr = (float)tc_proxy_cnn.lr;
    for (uint32_t step = 0; step < LEARN_STEPS; step++) {
        uint32_t at = step * LEARN_BATCH % LEARN_TRAIN;
        if (at == 0)
            for (uint32_t i = 0; i < LEARN_TRAIN; i++) {
                uint32_t j = (uint32_t)(tc_mix64(step * 0x9e37ULL + i) % (i + 1));
                perm[i] = i;
                perm[i] = perm[j];
                perm[j] = i;
            }
        double loss = tc_proxy_cnn.grad(&m, &d, perm + at, LEARN_BATCH, g);
        assert_true(isfinite(loss));
        for (size_t i = 0; i < m.nparams; i++) {
            v[i] = 0.9f * v[i] + g[i];
            m.p[i] -= lr * v[i];
        }
    }
    uint64_t ok = 0, all = 0;
    for (uint32_t i = 0; i < LEARN_TEST; i += 100) {
        for (uint32_t b = 0; b < 100; b++)
            idx[b] = i + b;
        uint64_t c = 0, t = 0;
        tc_proxy_cnn.eval(&m, &d, idx, 100, &c, &t);
        ok += c;
        all += t;
    }
    free(g);
    free(v);
    free(perm);
    tc_proxy_cnn.destroy(&m);
    tc_proxy_cnn.unload(&d);
    return (double)ok / (double)all;
}

static void test_learns(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    double acc = train_accuracy(false);
    print_message("cnn: test accuracy %.3f after %u steps of %u\n", acc, LEARN_STEPS, LEARN_BATCH);
    assert_true(acc > 0.75);
}

static void test_shuffled_labels(void **state)
{
    (void)state;
    if (!have_data())
        skip();
    double acc = train_accuracy(true);
    print_message("cnn, permuted labels: test accuracy %.3f\n", acc);
    assert_true(acc < 0.20);
}

static int setup(void **state)
{
    (void)state;
    tc_err err = {{0}};
    if (tc_blas_load(&err) != TC_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    openblas_set_num_threads(1);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),          cmocka_unit_test(test_grad_fd),     cmocka_unit_test(test_pool_ties),
        cmocka_unit_test(test_grad_chunks),     cmocka_unit_test(test_determinism), cmocka_unit_test(test_learns),
        cmocka_unit_test(test_shuffled_labels),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
