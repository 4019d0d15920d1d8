/*
 * test_proxy_chartf.c - the chartf proxy: the fortunes corpus (files,
 * split, alphabet, samples, subsets, shuffled targets, errors), the
 * transformer's gradient against finite differences on every tensor, its
 * causality, initialization, determinism, and short AdamW trainings that
 * learn above the unigram chance (and do not with shuffled targets).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/blas.h"
#include "workload/chartf.h"

static bool have_corpus(void)
{
    return access("/usr/share/games/fortunes/fortunes", R_OK) == 0;
}

/* ---- the corpus ---------------------------------------------------------- */

static void alphabet_maps_printable_ascii_newline_and_the_rest(void **state)
{
    (void)state;
    assert_int_equal(tc_corpus_symbol(' '), 0);
    assert_int_equal(tc_corpus_symbol('A'), 'A' - 32);
    assert_int_equal(tc_corpus_symbol('~'), 94);
    assert_int_equal(tc_corpus_symbol('\n'), TC_CORPUS_NEWLINE);
    const uint8_t others[] = {0, '\t', '\b', '\r', 127, 0xc3, 0xa9, 0xff};
    for (size_t i = 0; i < sizeof others; i++)
        assert_int_equal(tc_corpus_symbol(others[i]), TC_CORPUS_OTHER);
    for (int b = 0; b < 256; b++) {
        uint8_t s = tc_corpus_symbol((uint8_t)b);
        assert_true(s < TC_CORPUS_VOCAB);
        if (s != TC_CORPUS_OTHER)
            assert_int_equal((uint8_t)tc_corpus_char(s), b);
    }
    assert_int_equal(TC_CORPUS_VOCAB, 97);
}

/* A directory of fortune files and things that are not: "b" and "a" hold
 * fortunes f00..f19 (a: f00..f09, the last without its final "%"), and
 * a.dat, a.u8 (a link), .hidden and off/c must be ignored. */
static void make_tree(char *dir)
{
    strcpy(dir, "/tmp/topocc-fortunes-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[256];
    const char *names[] = {"b", "a", "a.dat", ".hidden", "off/c"};
    snprintf(path, sizeof path, "%s/off", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    for (int f = 0; f < 5; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        for (int k = 0; k < 10; k++)
            fprintf(fp, "f%02d\n%s", f == 0 ? 10 + k : f == 1 ? k : 90 + k, f == 1 && k == 9 ? "" : "%\n");
        fclose(fp);
    }
    char to[256];
    snprintf(path, sizeof path, "%s/a.u8", dir);
    snprintf(to, sizeof to, "%s/b", dir);
    assert_int_equal(symlink(to, path), 0);
}

static void remove_tree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void text_of(const tc_corpus_split *s, uint32_t context, char *out)
{
    for (size_t i = 0; i < (size_t)s->n * context; i++)
        out[i] = tc_corpus_char(s->x[i]);
    out[(size_t)s->n * context] = tc_corpus_char(s->y[(size_t)s->n * context - 1]);
    out[(size_t)s->n * context + 1] = '\0';
}

static void corpus_reads_the_fortune_files_in_name_order_and_splits_every_tenth(void **state)
{
    (void)state;
    char dir[64], got[256];
    make_tree(dir);
    tc_corpus c;
    tc_err err;
    assert_int_equal(tc_corpus_load(dir, 2, 0, 0, false, &c, &err), TC_OK);
    assert_int_equal(c.files, 2);
    assert_int_equal(c.fortunes, 20);
    assert_int_equal(c.bytes, 2 * 10 * 6 - 2);
    /* Fortunes 9 and 19 (f09, f19) are the test text, 12 symbols: 5 samples. */
    assert_int_equal(c.test.len, 12);
    assert_int_equal(c.test.n, 5);
    text_of(&c.test, 2, got);
    assert_string_equal(got, "f09\n%\nf19\n%");
    assert_int_equal(c.train.len, 18 * 6);
    assert_int_equal(c.train.n, (18 * 6 - 1) / 2);
    text_of(&c.train, 2, got);
    assert_memory_equal(got, "f00\n%\nf01\n%\n", 12);
    assert_memory_equal(got + 9 * 6, "f10\n%\n", 6);
    tc_corpus_free(&c);
    remove_tree(dir);
}

static void corpus_samples_are_consecutive_windows_with_next_symbol_targets(void **state)
{
    (void)state;
    if (!have_corpus())
        skip();
    tc_corpus c;
    tc_err err;
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 64, 0, 0, false, &c, &err), TC_OK);
    assert_true(c.files >= 40);
    assert_true(c.bytes > 2000000 && c.bytes < 3000000);
    assert_true(c.fortunes > 14000);
    /* About a tenth of the text is the test text. */
    double frac = (double)c.test.len / (double)(c.test.len + c.train.len);
    assert_true(frac > 0.08 && frac < 0.12);
    assert_int_equal(c.train.n, (c.train.len - 1) / 64);
    assert_int_equal(c.test.n, (c.test.len - 1) / 64);
    const tc_corpus_split *sp[2] = {&c.train, &c.test};
    for (int s = 0; s < 2; s++) {
        size_t k = (size_t)sp[s]->n * 64;
        assert_memory_equal(sp[s]->x + 1, sp[s]->y, k - 1);
        for (size_t i = 0; i < k; i++)
            assert_true(sp[s]->x[i] < TC_CORPUS_VOCAB && sp[s]->y[i] < TC_CORPUS_VOCAB);
    }
    /* The most common test target is the space, about 16% of them. */
    double chance = tc_corpus_majority(&c.test, 64);
    assert_true(chance > 0.14 && chance < 0.18);
    tc_corpus_free(&c);
}

static void corpus_is_deterministic_and_subsets_keep_the_first_samples(void **state)
{
    (void)state;
    if (!have_corpus())
        skip();
    tc_corpus a, b, s;
    tc_err err;
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 32, 0, 0, false, &a, &err), TC_OK);
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 32, 0, 0, false, &b, &err), TC_OK);
    assert_int_equal(a.train.n, b.train.n);
    assert_memory_equal(a.train.y, b.train.y, (size_t)a.train.n * 32);
    assert_memory_equal(a.test.x, b.test.x, (size_t)a.test.n * 32);
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 32, 1000, 70, false, &s, &err), TC_OK);
    assert_int_equal(s.train.n, 1000);
    assert_int_equal(s.test.n, 70);
    assert_memory_equal(s.train.x, a.train.x, 1000 * 32);
    assert_memory_equal(s.test.y, a.test.y, 70 * 32);
    tc_corpus_free(&s);
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 32, a.train.n + 1, 0, false, &s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "training samples asked"));
    tc_corpus_free(&a);
    tc_corpus_free(&b);
}

static void shuffled_targets_keep_their_frequencies_and_lose_their_order(void **state)
{
    (void)state;
    if (!have_corpus())
        skip();
    tc_corpus a, s;
    tc_err err;
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 16, 5000, 0, false, &a, &err), TC_OK);
    assert_int_equal(tc_corpus_load(tc_fortunes_dir, 16, 5000, 0, true, &s, &err), TC_OK);
    const size_t k = 5000 * 16;
    assert_memory_equal(a.train.x, s.train.x, k);
    assert_memory_equal(a.test.y, s.test.y, (size_t)a.test.n * 16);
    uint64_t ha[256] = {0}, hs[256] = {0}, same = 0;
    for (size_t i = 0; i < k; i++) {
        ha[a.train.y[i]]++;
        hs[s.train.y[i]]++;
        same += a.train.y[i] == s.train.y[i];
    }
    assert_memory_equal(ha, hs, sizeof ha);
    assert_true(same < k / 5); /* about sum p^2 ~ 6% agree by chance */
    tc_corpus_free(&a);
    tc_corpus_free(&s);
}

static void missing_corpus_names_the_debian_package(void **state)
{
    (void)state;
    tc_train_opts o = {.data_dir = "/nonexistent/fortunes"};
    tc_proxy_data d = {0};
    tc_err err;
    assert_int_equal(tc_proxy_chartf.load(&o, &d, &err), TC_EINVAL);
    assert_string_equal(err.msg, "the fortunes corpus is not installed in /nonexistent/fortunes: install the "
                                 "Debian package fortunes");
    assert_null(d.impl);
    char dir[64] = "/tmp/topocc-empty-XXXXXX";
    assert_non_null(mkdtemp(dir));
    o.data_dir = dir;
    assert_int_equal(tc_proxy_chartf.load(&o, &d, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "install the Debian package fortunes"));
    remove_tree(dir);
}

static void proxy_entry_names_its_data_optimizer_and_sizes(void **state)
{
    (void)state;
    const tc_proxy_ops *p = &tc_proxy_chartf;
    assert_string_equal(p->name, "chartf");
    assert_string_equal(p->family, "language");
    assert_string_equal(p->dataset, "fortunes");
    assert_string_equal(p->package, "fortunes");
    assert_string_equal(p->dir, "/usr/share/games/fortunes");
    assert_int_equal(p->optimizer, TC_OPT_ADAMW);
    assert_true(p->lr == 3e-3);
    assert_true(p->width == 32 && p->layers == 2 && p->heads == 2 && p->context == 32);
}

/* ---- the model: helpers --------------------------------------------------- */

/* A model of the given sizes on a corpus stub of that context. */
static void make_model(tc_corpus *stub, tc_proxy *m, uint32_t d, uint32_t L, uint32_t H, uint32_t T, uint64_t seed,
                       uint32_t max_batch)
{
    memset(stub, 0, sizeof *stub);
    stub->context = T;
    tc_train_opts o = {.width = d, .layers = L, .heads = H, .context = T};
    tc_proxy_data data = {.impl = stub};
    tc_err err;
    assert_int_equal(tc_blas_load(&err), TC_OK);
    openblas_set_num_threads(1);
    assert_int_equal(tc_proxy_chartf.create(&o, &data, seed, max_batch, m, &err), TC_OK);
}

static double unif(uint64_t *s)
{
    *s = tc_mix64(*s);
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Parameters far from the initialization (weights +-0.5, LayerNorm scales
 * 1 +- 0.3, biases +-0.2), so that every term of the gradient is large and
 * the attention far from uniform. */
static void scramble(tc_proxy *m, uint64_t seed)
{
    for (size_t t = 0; t < m->ntensors; t++)
        for (size_t i = m->off[t]; i < m->off[t + 1]; i++) {
            double u = 2.0 * unif(&seed) - 1.0;
            bool ln_w = !m->decay[t] && m->p[i] == 1.0f;
            m->p[i] = (float)(m->decay[t] ? 0.5 * u : ln_w ? 1.0 + 0.3 * u : 0.2 * u);
        }
}

static void random_symbols(uint8_t *s, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (uint8_t)(unif(&seed) * TC_CORPUS_VOCAB);
}

/* The mean cross-entropy of B samples, accumulated in double from the
 * model's float logits. */
static double loss_of(tc_proxy *m, const uint8_t *x, const uint8_t *y, uint32_t B, uint32_t T, float *logits)
{
    tc_chartf_logits(m, x, B, logits);
    double loss = 0.0;
    for (size_t r = 0; r < (size_t)B * T; r++) {
        const float *z = logits + r * TC_CORPUS_VOCAB;
        double mx = z[0], sum = 0.0;
        for (uint32_t v = 1; v < TC_CORPUS_VOCAB; v++)
            mx = z[v] > mx ? z[v] : mx;
        for (uint32_t v = 0; v < TC_CORPUS_VOCAB; v++)
            sum += exp(z[v] - mx);
        loss += log(sum) + mx - z[y[r]];
    }
    return loss / ((double)B * T);
}

/* ---- the model ------------------------------------------------------------ */

static void tensors_are_registered_with_their_views_decay_and_initialization(void **state)
{
    (void)state;
    tc_corpus stub;
    tc_proxy m;
    make_model(&stub, &m, 64, 2, 4, 64, 7, 4);
    const uint64_t d = 64, V = TC_CORPUS_VOCAB;
    /* wte, wpe, 12 per block, ln_f weight and bias, the head. */
    assert_int_equal(m.ntensors, 2 + 2 * 12 + 3);
    const tc_codec_tensor block[12] = {{d, 1},     {d, 1}, {3 * d, d}, {3 * d, 1}, {d, d},     {d, 1},
                                       {d, 1},     {d, 1}, {4 * d, d}, {4 * d, 1}, {d, 4 * d}, {d, 1}};
    assert_true(m.shape[0].rows == V && m.shape[0].cols == d && m.decay[0]);
    assert_true(m.shape[1].rows == 64 && m.shape[1].cols == d && m.decay[1]);
    for (int t = 2; t < 26; t++) {
        assert_true(m.shape[t].rows == block[(t - 2) % 12].rows && m.shape[t].cols == block[(t - 2) % 12].cols);
        assert_int_equal(m.decay[t], m.shape[t].cols > 1);
    }
    assert_true(m.shape[28].rows == V && m.shape[28].cols == d && m.decay[28]);
    assert_false(m.decay[26] || m.decay[27]);
    for (size_t t = 0; t < m.ntensors; t++)
        assert_int_equal(m.off[t + 1] - m.off[t], m.shape[t].rows * m.shape[t].cols);
    assert_int_equal(m.nparams, m.off[m.ntensors]);
    /* normal(0, 0.02); the c_proj weights (tensors 6, 12 of each block)
     * 0.02 / sqrt(2 layers); LayerNorm weights 1, biases 0. */
    for (size_t t = 0; t < m.ntensors; t++) {
        double s1 = 0.0, s2 = 0.0, n = (double)(m.off[t + 1] - m.off[t]);
        for (size_t i = m.off[t]; i < m.off[t + 1]; i++) {
            s1 += m.p[i];
            s2 += (double)m.p[i] * m.p[i];
        }
        size_t k = t >= 2 && t < 26 ? (t - 2) % 12 : 99;
        if (m.decay[t]) {
            double sd = sqrt(s2 / n), want = k == 4 || k == 10 ? 0.01 : 0.02;
            assert_true(fabs(sd - want) < 0.1 * want);
            assert_true(fabs(s1 / n) < 5 * want / sqrt(n));
        } else {
            bool ln_w = k == 0 || k == 6 || t == 26;
            assert_true(s1 == (ln_w ? n : 0.0) && s2 == (ln_w ? n : 0.0));
        }
    }
    tc_proxy_chartf.destroy(&m);
}

static void bad_sizes_are_refused_with_a_clear_message(void **state)
{
    (void)state;
    tc_corpus stub = {.context = 16};
    tc_proxy_data data = {.impl = &stub};
    tc_proxy m;
    tc_err err;
    assert_int_equal(tc_blas_load(&err), TC_OK);
    tc_train_opts o = {.width = 30, .heads = 4, .context = 16};
    assert_int_equal(tc_proxy_chartf.create(&o, &data, 1, 4, &m, &err), TC_EINVAL);
    assert_string_equal(err.msg, "chartf: 4 heads do not divide the width 30");
    o = (tc_train_opts){.layers = 5, .context = 16};
    assert_int_equal(tc_proxy_chartf.create(&o, &data, 1, 4, &m, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "5 layers make 65 tensors"));
    o = (tc_train_opts){.context = 32};
    assert_int_equal(tc_proxy_chartf.create(&o, &data, 1, 4, &m, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "loaded at context 16"));
}

/* The loss with coordinate i of m at keep + h (the float step actually
 * taken into *step). */
static double loss_at(tc_proxy *m, size_t i, float keep, double h, double *step, const uint8_t *x, const uint8_t *y,
                      uint32_t B, uint32_t T, float *logits)
{
    m->p[i] = keep + (float)h;
    *step = (double)m->p[i] - keep;
    double l = loss_of(m, x, y, B, T, logits);
    m->p[i] = keep;
    return l;
}

/* The derivative of the double loss at coordinate i of m: the five-point
 * central difference (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h, whose
 * truncation error is O(h^4). */
static double finite_difference(tc_proxy *m, size_t i, double h, const uint8_t *x, const uint8_t *y, uint32_t B,
                                uint32_t T, float *logits)
{
    const float keep = m->p[i];
    double s1, s2, s3, s4;
    double f1 = loss_at(m, i, keep, h, &s1, x, y, B, T, logits), f2 = loss_at(m, i, keep, -h, &s2, x, y, B, T, logits);
    double f3 = loss_at(m, i, keep, 2 * h, &s3, x, y, B, T, logits);
    double f4 = loss_at(m, i, keep, -2 * h, &s4, x, y, B, T, logits);
    return (8.0 * (f1 - f2) - (f3 - f4)) / (3.0 * (s1 - s2 + (s3 - s4) / 2.0));
}

/* The coordinates of tensor t to check: its two largest gradients and
 * four at random. */
static void pick(const tc_proxy *m, const float *g, size_t t, uint64_t *seed, size_t out[6])
{
    size_t a = m->off[t], n = m->off[t + 1] - a;
    out[0] = out[1] = a;
    for (size_t i = a; i < a + n; i++)
        if (fabsf(g[i]) > fabsf(g[out[0]])) {
            out[1] = out[0];
            out[0] = i;
        } else if (fabsf(g[i]) > fabsf(g[out[1]]) || out[1] == out[0]) {
            out[1] = i;
        }
    for (int k = 2; k < 6; k++)
        out[k] = a + (size_t)(unif(seed) * (double)n);
}

/* FD_H: the step; FD_ATOL, FD_RTOL: |analytic - fd| <= atol + rtol |fd|.
 * The logits are float: the loss (~5) carries a rounding error of some
 * 1e-7 relative, which the difference quotient (divided by 12h = 0.12)
 * turns into an absolute noise of ~1e-5; the five-point truncation error,
 * ~h^4 f^(5) / 30, is below that for these O(1) parameters (the three-point
 * quotient's, h^2 f'''(x) / 6, was 5e-4 on the largest gradients, 0.7).
 * Seen: at most 1.2e-5 absolute, 2e-4 relative on gradients above 1e-2.
 * The tolerance leaves a margin of 4 or more; a wrong backward term (a
 * LayerNorm term, the mask, the softmax, the attention scale, GELU's
 * derivative, a residual, an embedding, a bias) errs by 5% to 10x on the
 * largest gradients of some tensor, which are 1e-2 .. 1. */
#define FD_H 1e-2
#define FD_ATOL 5e-5
#define FD_RTOL 1e-3

static void check_gradient(uint32_t L, uint64_t seed)
{
    const uint32_t d = 8, H = 2, T = 5, B = 2;
    tc_corpus stub;
    tc_proxy m;
    make_model(&stub, &m, d, L, H, T, seed, B);
    scramble(&m, seed + 100);
    uint8_t x[B * T], y[B * T];
    random_symbols(x, B * T, seed + 200);
    random_symbols(y, B * T, seed + 300);
    float *g = malloc(m.nparams * sizeof *g), *logits = malloc((size_t)B * T * TC_CORPUS_VOCAB * sizeof *logits);
    assert_true(g && logits);
    double loss = tc_chartf_grad(&m, x, y, B, g);
    assert_true(fabs(loss - loss_of(&m, x, y, B, T, logits)) < 1e-5);
    double worst = 0.0;
    for (size_t t = 0; t < m.ntensors; t++) {
        size_t at[6];
        pick(&m, g, t, &seed, at);
        for (int k = 0; k < 6; k++) {
            double fd = finite_difference(&m, at[k], FD_H, x, y, B, T, logits);
            double e = fabs(g[at[k]] - fd) / (FD_ATOL + FD_RTOL * fabs(fd));
            worst = e > worst ? e : worst;
            if (e > 1.0)
                print_error("tensor %zu coordinate %zu: backward %.6g, finite difference %.6g\n", t,
                            at[k] - m.off[t], (double)g[at[k]], fd);
            assert_true(e <= 1.0);
        }
    }
    print_message("layers %u: worst error %.3f of the tolerance\n", L, worst);
    free(g);
    free(logits);
    tc_proxy_chartf.destroy(&m);
}

static void gradient_matches_finite_differences_on_every_tensor(void **state)
{
    (void)state;
    check_gradient(1, 11);
    check_gradient(2, 12);
}

/* Changing input t of a sample changes none of its logits before t (and
 * nothing of the other samples). */
static void attention_is_causal(void **state)
{
    (void)state;
    const uint32_t T = 12, B = 3, V = TC_CORPUS_VOCAB;
    tc_corpus stub;
    tc_proxy m;
    make_model(&stub, &m, 16, 2, 4, T, 3, B);
    scramble(&m, 4);
    uint8_t x[B * T];
    random_symbols(x, B * T, 5);
    float *a = malloc((size_t)B * T * V * sizeof *a), *b = malloc((size_t)B * T * V * sizeof *b);
    assert_true(a && b);
    tc_chartf_logits(&m, x, B, a);
    for (uint32_t t = 0; t < T; t++) {
        uint8_t x2[B * T];
        memcpy(x2, x, sizeof x2);
        x2[T + t] = (uint8_t)((x2[T + t] + 1 + t) % V); /* sample 1, position t */
        tc_chartf_logits(&m, x2, B, b);
        assert_memory_equal(a, b, (size_t)(T + t) * V * sizeof *a);
        assert_memory_not_equal(a + (size_t)(T + t) * V, b + (size_t)(T + t) * V, V * sizeof *a);
        assert_memory_equal(a + (size_t)2 * T * V, b + (size_t)2 * T * V, (size_t)T * V * sizeof *a);
    }
    free(a);
    free(b);
    tc_proxy_chartf.destroy(&m);
}

static void same_seed_gives_bitwise_equal_gradients(void **state)
{
    (void)state;
    const uint32_t T = 16, B = 20; /* two chunks */
    tc_corpus stub;
    tc_proxy m1, m2, m3;
    make_model(&stub, &m1, 32, 2, 2, T, 9, B);
    make_model(&stub, &m2, 32, 2, 2, T, 9, B);
    make_model(&stub, &m3, 32, 2, 2, T, 10, B);
    assert_memory_equal(m1.p, m2.p, m1.nparams * sizeof *m1.p);
    assert_memory_not_equal(m1.p, m3.p, m1.nparams * sizeof *m1.p);
    uint8_t x[B * T], y[B * T];
    random_symbols(x, B * T, 1);
    random_symbols(y, B * T, 2);
    float *g1 = malloc(m1.nparams * sizeof *g1), *g2 = malloc(m1.nparams * sizeof *g2);
    assert_true(g1 && g2);
    double l1 = tc_chartf_grad(&m1, x, y, B, g1);
    memset(g2, 0x55, m1.nparams * sizeof *g2); /* overwritten, not accumulated */
    double l2 = tc_chartf_grad(&m2, x, y, B, g2);
    assert_true(l1 == l2);
    assert_memory_equal(g1, g2, m1.nparams * sizeof *g1);
    /* At initialization the loss is about log(vocab). */
    assert_true(fabs(l1 - log(TC_CORPUS_VOCAB)) < 0.1);
    free(g1);
    free(g2);
    tc_proxy_chartf.destroy(&m1);
    tc_proxy_chartf.destroy(&m2);
    tc_proxy_chartf.destroy(&m3);
}

/* A batch is processed 16 samples at a time: the gradient and loss of 20
 * samples are the weighted means of those of samples 0..15 and 16..19. */
static void a_batch_of_several_chunks_gives_the_mean_over_all_samples(void **state)
{
    (void)state;
    const uint32_t T = 8, B = 20;
    tc_corpus stub;
    tc_proxy m;
    make_model(&stub, &m, 16, 1, 2, T, 5, B);
    scramble(&m, 6);
    uint8_t x[B * T], y[B * T];
    random_symbols(x, B * T, 7);
    random_symbols(y, B * T, 8);
    float *g = malloc(3 * m.nparams * sizeof *g), *g1 = g + m.nparams, *g2 = g1 + m.nparams;
    assert_non_null(g);
    double l = tc_chartf_grad(&m, x, y, B, g);
    double l1 = tc_chartf_grad(&m, x, y, 16, g1), l2 = tc_chartf_grad(&m, x + 16 * T, y + 16 * T, 4, g2);
    assert_true(fabs(l - (16 * l1 + 4 * l2) / 20) < 1e-6);
    for (size_t i = 0; i < m.nparams; i++)
        assert_true(fabsf(g[i] - (16 * g1[i] + 4 * g2[i]) / 20) <= 1e-5f + 1e-4f * fabsf(g[i]));
    free(g);
    tc_proxy_chartf.destroy(&m);
}

/* ---- learning --------------------------------------------------------------- */

/* torch.optim.AdamW (betas 0.9, 0.999, eps 1e-8, weight decay 0.01 on the
 * tensors marked decay), as train.c applies it. */
static void adamw(tc_proxy *m, const float *g, float *mo, float *v, uint64_t t, double lr)
{
    const double c1 = 1.0 - pow(0.9, (double)t), c2 = 1.0 - pow(0.999, (double)t);
    for (size_t k = 0; k < m->ntensors; k++)
        for (size_t i = m->off[k]; i < m->off[k + 1]; i++) {
            m->p[i] *= m->decay[k] ? (float)(1.0 - lr * 0.01) : 1.0f;
            mo[i] = 0.9f * mo[i] + 0.1f * g[i];
            v[i] = 0.999f * v[i] + 0.001f * g[i] * g[i];
            m->p[i] -= (float)(lr * (mo[i] / c1) / (sqrt(v[i] / c2) + 1e-8));
        }
}

/* Test accuracy after `steps` steps of batch B on the corpus at a small
 * size (width 32, one layer, 2 heads, context 32) at lr 3e-3 (the best of
 * chartf.c's sweep at that size); *chance receives the unigram chance. */
static double train_small(bool shuffled, uint32_t steps, double *chance)
{
    const uint32_t B = 32, T = 32, NTEST = 200;
    tc_train_opts o = {.width = 32, .layers = 1, .heads = 2, .context = T, .test_subset = NTEST,
                       .shuffled_labels = shuffled};
    tc_proxy_data d;
    tc_proxy m;
    tc_err err;
    assert_int_equal(tc_blas_load(&err), TC_OK);
    openblas_set_num_threads(1);
    assert_int_equal(tc_proxy_chartf.load(&o, &d, &err), TC_OK);
    assert_int_equal(tc_proxy_chartf.create(&o, &d, 1, NTEST, &m, &err), TC_OK);
    float *g = malloc(m.nparams * sizeof *g), *mo = calloc(m.nparams, sizeof *mo), *v = calloc(m.nparams, sizeof *v);
    uint32_t idx[NTEST];
    assert_true(g && mo && v);
    uint64_t s = 77;
    for (uint32_t step = 1; step <= steps; step++) {
        for (uint32_t b = 0; b < B; b++)
            idx[b] = (uint32_t)(unif(&s) * d.n_train);
        tc_proxy_chartf.grad(&m, &d, idx, B, g);
        adamw(&m, g, mo, v, step, 3e-3);
    }
    for (uint32_t b = 0; b < NTEST; b++)
        idx[b] = b;
    uint64_t ok = 0, all = 0;
    tc_proxy_chartf.eval(&m, &d, idx, NTEST, &ok, &all);
    assert_int_equal(all, NTEST * T);
    *chance = d.chance;
    free(g);
    free(mo);
    free(v);
    tc_proxy_chartf.destroy(&m);
    tc_proxy_chartf.unload(&d);
    return (double)ok / (double)all;
}

static void adamw_learns_above_the_unigram_chance_and_not_from_shuffled_targets(void **state)
{
    (void)state;
    if (!have_corpus())
        skip();
    double chance, acc = train_small(false, 300, &chance);
    print_message("300 steps: test accuracy %.3f, chance %.3f\n", acc, chance);
    assert_true(acc > chance + 0.1);
    double sacc = train_small(true, 300, &chance);
    print_message("300 steps on shuffled targets: test accuracy %.3f\n", sacc);
    assert_true(fabs(sacc - chance) < 0.03);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alphabet_maps_printable_ascii_newline_and_the_rest),
        cmocka_unit_test(corpus_reads_the_fortune_files_in_name_order_and_splits_every_tenth),
        cmocka_unit_test(corpus_samples_are_consecutive_windows_with_next_symbol_targets),
        cmocka_unit_test(corpus_is_deterministic_and_subsets_keep_the_first_samples),
        cmocka_unit_test(shuffled_targets_keep_their_frequencies_and_lose_their_order),
        cmocka_unit_test(missing_corpus_names_the_debian_package),
        cmocka_unit_test(proxy_entry_names_its_data_optimizer_and_sizes),
        cmocka_unit_test(tensors_are_registered_with_their_views_decay_and_initialization),
        cmocka_unit_test(bad_sizes_are_refused_with_a_clear_message),
        cmocka_unit_test(gradient_matches_finite_differences_on_every_tensor),
        cmocka_unit_test(attention_is_causal),
        cmocka_unit_test(same_seed_gives_bitwise_equal_gradients),
        cmocka_unit_test(a_batch_of_several_chunks_gives_the_mean_over_all_samples),
        cmocka_unit_test(adamw_learns_above_the_unigram_chance_and_not_from_shuffled_targets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
