/*
 * models.c - the model zoo: parameters, training FLOPs per sample, default
 * per-worker batch, model FLOPs utilisation and the length of a reference
 * training run, each with its source; and custom models.
 *
 * FLOPs count a multiply and an add as two. Papers and torchvision quote
 * CNN "FLOPs" as multiply-adds, so they are doubled here. Training costs
 * three forward passes (the backward pass computes gradients with respect to
 * both activations and weights, twice the forward: Kaplan et al., "Scaling
 * Laws for Neural Language Models", 2020, section 2.1). Transformers: 6 N per
 * token for N non-embedding parameters plus 6 n_layer n_ctx d_model for
 * attention (Kaplan et al., table 1), plus the output projection.
 *
 * A zoo model's tensor shapes, which per-tensor PowerSGD needs, come from
 * the structured zoo of the same name (zoo.c): tc_model_tensors.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/workload.h"
#include "topocc/zoo.h"

#define IMAGENET_TRAIN 1281167.0 /* ILSVRC-2012 training images */

static const tc_model zoo[] = {
    {
        .name = "resnet50",
        .params = 25557032, /* torchvision resnet50 */
        .layers = 54,       /* 49 convolutions + 4 projection shortcuts + 1 fully connected */
        .flops_sample = 3 * 2 * 4.09e9, /* 4.09 G multiply-adds forward at 224x224 (torchvision) */
        .batch = 256,       /* NVIDIA DeepLearningExamples ResNet-50 v1.5, mixed precision */
        .mfu = 0.20,
        .train_samples = 90 * IMAGENET_TRAIN, /* 90 epochs (Goyal et al. 2017, 76.3% top-1) */
        .source = "He et al. 2016; torchvision (25.6M parameters, 4.09 GMAC/image); 90 ImageNet epochs "
                  "(Goyal et al. 2017); MFU 20%: about 2,400 images/s per A100 at batch 256 (NVIDIA "
                  "DeepLearningExamples) is 19% of its dense 16-bit peak",
    },
    {
        .name = "vgg16",
        .params = 138357544, /* torchvision vgg16 */
        .layers = 16,        /* 13 convolutions + 3 fully connected */
        .flops_sample = 3 * 2 * 15.47e9, /* 15.47 G multiply-adds forward at 224x224 (torchvision) */
        .batch = 64,
        .mfu = 0.20,
        .train_samples = 74 * IMAGENET_TRAIN, /* 74 epochs (Simonyan and Zisserman 2015) */
        .source = "Simonyan and Zisserman 2015 (74 epochs); torchvision (138.4M parameters, 15.5 GMAC/image); "
                  "MFU 20% as for resnet50",
    },
    {
        .name = "bert-large",
        .params = 340e6, /* Devlin et al. 2019 */
        .layers = 24,
        /* sequence of 128 tokens (pre-training phase 1): 6 * 302M non-embedding
         * parameters (24 * 12 * 1024^2) + 6 * 24 * 128 * 1024, per token */
        .flops_sample = 128 * (6 * 302e6 + 6 * 24 * 128 * 1024.0),
        .batch = 32,
        .mfu = 0.40,
        .train_samples = 256 * 1e6, /* 1M steps of 256 sequences (Devlin et al. 2019) */
        .source = "Devlin et al. 2019 (340M parameters, 1M steps x 256 sequences); sequences of 128 tokens; "
                  "FLOPs per token 6N + 6 n_layer n_ctx d_model (Kaplan et al. 2020)",
    },
    {
        .name = "gpt2-xl",
        .params = 1.558e9, /* Radford et al. 2019 */
        .layers = 48,
        /* sequence of 1024 tokens: 6 * (1.475G non-embedding + 80M output
         * projection) + 6 * 48 * 1024 * 1600, per token */
        .flops_sample = 1024 * (6 * (1.475e9 + 50257 * 1600.0) + 6 * 48 * 1024 * 1600.0),
        .batch = 8,
        .mfu = 0.40,
        .train_samples = 20 * 1.558e9 / 1024, /* 20 tokens per parameter (Hoffmann et al. 2022) */
        .source = "Radford et al. 2019 (1.56B parameters, 48 layers, d_model 1600, 1024 tokens); training "
                  "length 20 tokens per parameter (Hoffmann et al. 2022); FLOPs per Kaplan et al. 2020",
    },
    {
        .name = "llama-7b",
        .params = 6.738e9, /* Touvron et al. 2023 */
        .layers = 32,
        /* sequence of 2048 tokens: 6 * (6.477G non-embedding + 131M output
         * projection) + 6 * 32 * 2048 * 4096, per token */
        .flops_sample = 2048 * (6 * (6.477e9 + 32000 * 4096.0) + 6 * 32 * 2048 * 4096.0),
        .batch = 4,
        .mfu = 0.40,
        .train_samples = 1e12 / 2048, /* 1T tokens (Touvron et al. 2023) */
        .source = "Touvron et al. 2023 (6.7B parameters, 32 layers, d_model 4096, 2048 tokens, 1T tokens); "
                  "plain data parallelism (each worker holds the whole model)",
    },
};

#define NZOO (sizeof zoo / sizeof *zoo)

size_t tc_model_zoo_count(void)
{
    return NZOO;
}

const tc_model *tc_model_zoo_get(size_t i)
{
    return i < NZOO ? &zoo[i] : NULL;
}

/* "25.6M", "1.5e9", "6.3T": a positive number with an optional SI suffix
 * (K, M, G or B, T, P). */
static bool parse_si(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        return false;
    double mul = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1e3; break;
        case 'M': mul = 1e6; break;
        case 'G': case 'B': mul = 1e9; break;
        case 'T': mul = 1e12; break;
        case 'P': mul = 1e15; break;
        default: return false;
        }
        if (end[1])
            return false;
    }
    v *= mul;
    if (!isfinite(v) || !(v > 0))
        return false;
    *out = v;
    return true;
}

static tc_status parse_u32_key(const char *what, const char *key, const char *v, uint32_t *out, tc_err *err)
{
    double x;
    if (!parse_si(v, &x) || x != floor(x) || x > 4294967295.0)
        return tc_fail(err, TC_EINVAL, "invalid %s '%s=%s': expected a positive integer", what, key, v);
    *out = (uint32_t)x;
    return TC_OK;
}

static tc_status parse_mfu(const char *what, const char *v, double *out, tc_err *err)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x > 0) || x > 1)
        return tc_fail(err, TC_EINVAL, "invalid %s 'mfu=%s': expected a fraction in (0, 1], e.g. mfu=0.4", what, v);
    *out = x;
    return TC_OK;
}

static tc_status parse_custom(const char *s, tc_model *m, tc_err *err)
{
    static const char *accepted = "params, layers, flops (required), steps, mfu";
    char buf[512];
    if (snprintf(buf, sizeof buf, "custom:%s", s) >= (int)sizeof buf)
        return tc_fail(err, TC_EINVAL, "custom model spec too long");
    tc_spec sp;
    tc_status st = tc_spec_parse(buf, &sp, err);
    if (st)
        return tc_fail(err, TC_EINVAL,
                       "malformed custom model '%s': expected params=N,layers=L,flops=F (F: training FLOPs per "
                       "iteration per worker), e.g. params=25.6M,layers=54,flops=6.3T",
                       s);
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "custom");
    m->mfu = TC_DEFAULT_MFU;
    m->steps = 10000;
    m->source = "custom: parameters, layers and FLOPs per iteration as given";
    const char *p = tc_spec_get(&sp, "params"), *l = tc_spec_get(&sp, "layers"), *f = tc_spec_get(&sp, "flops");
    const char *stp = tc_spec_get(&sp, "steps"), *mfu = tc_spec_get(&sp, "mfu");
    if ((st = tc_spec_check_unused(&sp, "custom model", accepted, err)))
        return st;
    if (!p || !l || !f)
        return tc_fail(err, TC_EINVAL, "malformed custom model '%s': params=, layers= and flops= are all required, "
                                       "e.g. params=25.6M,layers=54,flops=6.3T", s);
    if (!parse_si(p, &m->params))
        return tc_fail(err, TC_EINVAL, "invalid custom model 'params=%s': expected a positive number, e.g. 25.6M", p);
    if (m->params > 1e15)
        return tc_fail(err, TC_EINVAL, "invalid custom model 'params=%s': at most 1P parameters", p);
    if ((st = parse_u32_key("custom model", "layers", l, &m->layers, err)))
        return st;
    if (m->layers > 1000000)
        return tc_fail(err, TC_EINVAL, "invalid custom model 'layers=%s': at most 1000000", l);
    if (!parse_si(f, &m->flops_iter))
        return tc_fail(err, TC_EINVAL, "invalid custom model 'flops=%s': expected training FLOPs per iteration per "
                                       "worker, e.g. 6.3T", f);
    if (stp) {
        uint32_t v;
        if ((st = parse_u32_key("custom model", "steps", stp, &v, err)))
            return st;
        m->steps = v;
    }
    if (mfu && (st = parse_mfu("custom model", mfu, &m->mfu, err)))
        return st;
    return TC_OK;
}

tc_status tc_model_parse(const char *s, tc_model *out, tc_err *err)
{
    if (!s || !*s)
        return tc_fail(err, TC_EINVAL, "empty model: expected a zoo name (resnet50, vgg16, bert-large, gpt2-xl, "
                                       "llama-7b) or params=N,layers=L,flops=F");
    const char *colon = strchr(s, ':'), *eq = strchr(s, '=');
    if (eq && (!colon || eq < colon))
        return parse_custom(s, out, err);
    tc_spec sp;
    tc_status st = tc_spec_parse(s, &sp, err);
    if (st)
        return st;
    const tc_model *z = NULL;
    for (size_t i = 0; i < NZOO; i++)
        if (strcmp(zoo[i].name, sp.kind) == 0)
            z = &zoo[i];
    if (!z)
        return tc_fail(err, TC_EINVAL, "unknown model '%s': accepted are resnet50, vgg16, bert-large, gpt2-xl, "
                                       "llama-7b, or params=N,layers=L,flops=F", sp.kind);
    *out = *z;
    const char *b = tc_spec_get(&sp, "batch"), *mfu = tc_spec_get(&sp, "mfu");
    if ((st = tc_spec_check_unused(&sp, "model", "batch, mfu", err)))
        return st;
    if (b && (st = parse_u32_key("model", "batch", b, &out->batch, err)))
        return st;
    if (mfu && (st = parse_mfu("model", mfu, &out->mfu, err)))
        return st;
    out->flops_iter = out->flops_sample * out->batch;
    return TC_OK;
}

double tc_model_baseline_steps(const tc_model *m, uint32_t workers)
{
    if (m->train_samples > 0 && m->batch > 0 && workers > 0)
        return ceil(m->train_samples / ((double)m->batch * workers));
    return m->steps;
}

static double tensor_elems(const tc_tensor *t)
{
    double e = 1;
    for (uint32_t i = 0; i < t->ndim; i++)
        e *= (double)t->shape[i];
    return e;
}

static tc_codec_tensor matrix_of(const tc_tensor *t)
{
    tc_codec_tensor m = {t->shape[0], 1};
    for (uint32_t i = 1; i < t->ndim; i++)
        m.cols *= t->shape[i];
    return m;
}

/* The zoo model's tensors in registration order (tc_model_tensors), and
 * with work (may be NULL) each one's share of the backward pass's matrix
 * products: its elements where it multiplies per token (tc_tensor.matmul),
 * else 0 (norms, biases, the embedding's lookup); *head the tied LM head's
 * (vocab x hidden: the embedding multiplies there, first in the backward
 * pass), 0 untied. */
static tc_status model_tensors(const tc_model *m, tc_codec_tensor **out, double **work, double *head, size_t *n,
                               tc_err *err)
{
    *out = NULL;
    *n = 0;
    if (work)
        *work = NULL;
    if (head)
        *head = 0;
    const tc_zoo_model *z = tc_zoo_find(m->name);
    if (!z)
        return TC_OK;
    tc_zoo_derived *d = tc_calloc(1, sizeof *d);
    if (!d)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = tc_zoo_derive(z, d, err);
    size_t total = 0;
    for (size_t i = 0; st == TC_OK && i < d->ntensors; i++)
        total += d->tensors[i].count;
    tc_codec_tensor *t = st == TC_OK ? tc_calloc(total ? total : 1, sizeof *t) : NULL;
    double *w = st == TC_OK && work ? tc_calloc(total ? total : 1, sizeof *w) : NULL;
    if (st == TC_OK && (!t || (work && !w)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory (%zu tensors)", total);
    if (st == TC_OK && head && z->arch == TC_MODEL_TRANSFORMER && z->tied_embeddings)
        *head = (double)z->vocab * (double)z->hidden;
    size_t k = 0;
    for (size_t i = 0; st == TC_OK && i < d->ntensors;) {
        const tc_tensor *x = &d->tensors[i];
        if (!x->in_layer || z->layers == 0) {
            for (uint32_t c = 0; c < x->count; c++) {
                if (w)
                    w[k] = x->matmul ? tensor_elems(x) : 0;
                t[k++] = matrix_of(x);
            }
            i++;
            continue;
        }
        /* a block: the run of in-layer tensors, each count / layers times per layer */
        size_t j = i;
        while (j < d->ntensors && d->tensors[j].in_layer)
            j++;
        for (uint32_t l = 0; l < z->layers; l++)
            for (size_t q = i; q < j; q++)
                for (uint32_t c = 0; c < d->tensors[q].count / z->layers; c++) {
                    if (w)
                        w[k] = d->tensors[q].matmul ? tensor_elems(&d->tensors[q]) : 0;
                    t[k++] = matrix_of(&d->tensors[q]);
                }
        i = j;
    }
    free(d);
    if (st) {
        free(t);
        free(w);
        return st;
    }
    if (work)
        *work = w;
    *out = t;
    *n = k;
    return TC_OK;
}

tc_status tc_model_tensors(const tc_model *m, tc_codec_tensor **out, size_t *n, tc_err *err)
{
    return model_tensors(m, out, NULL, NULL, n, err);
}

tc_status tc_model_tensor_work(const tc_model *m, tc_codec_tensor **out, double **work, double *head, size_t *n,
                               tc_err *err)
{
    return model_tensors(m, out, work, head, n, err);
}
