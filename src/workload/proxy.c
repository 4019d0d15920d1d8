/*
 * proxy.c - the table of accuracy proxies, what they share (Fashion-MNIST,
 * initialization streams, parameter storage) and the MLP as a proxy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload/proxy.h"

#define IMAGE_CLASSES 10u

static const tc_proxy_ops *const proxies[] = {&tc_proxy_mlp, &tc_proxy_cnn, &tc_proxy_chartf};

const tc_proxy_ops *tc_proxy_find(const char *name)
{
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++)
        if (name && strcmp(proxies[i]->name, name) == 0)
            return proxies[i];
    return NULL;
}

bool tc_train_proxy(const char *name, tc_proxy_info *out)
{
    const tc_proxy_ops *p = tc_proxy_find(name);
    if (!p)
        return false;
    *out = (tc_proxy_info){p->name, p->family, p->dataset, p->package, p->dir,
                           p->optimizer == TC_OPT_ADAMW ? "adamw" : "sgd", p->lr};
    return true;
}

/* The table lists each family's proxies from the simplest up; a family
 * is stood for by its last (the cnn, not the mlp, for vision). */
const char *tc_train_proxy_of_family(const char *family)
{
    for (size_t i = sizeof proxies / sizeof *proxies; i-- > 0;)
        if (family && strcmp(proxies[i]->family, family) == 0)
            return proxies[i]->name;
    return NULL;
}

void tc_train_proxy_describe(const tc_train_opts *o, char *buf, size_t len)
{
    const tc_proxy_ops *p = tc_proxy_find(o->model);
    if (!p) {
        snprintf(buf, len, "unknown proxy '%s'", o->model ? o->model : "");
        return;
    }
    char arch[96], opt[64];
    if (strcmp(p->name, "mlp") == 0)
        snprintf(arch, sizeof arch, "mlp 784-%u-10", o->hidden);
    else if (strcmp(p->name, "cnn") == 0)
        snprintf(arch, sizeof arch, "cnn conv5x5:%u-pool-conv5x5:%u-pool-fc", o->width, 2 * o->width);
    else
        snprintf(arch, sizeof arch, "%s d%u, %u blocks, %u heads, context %u", p->name, o->width, o->layers,
                 o->heads, o->context);
    if (p->optimizer == TC_OPT_ADAMW)
        snprintf(opt, sizeof opt, "AdamW lr %g weight decay %g", o->lr, o->weight_decay);
    else
        snprintf(opt, sizeof opt, "SGD lr %g momentum 0.9", o->lr);
    snprintf(buf, len, "%s%s, %s, %s", p->dataset, o->shuffled_labels ? " with shuffled labels" : "", arch, opt);
}

void tc_train_proxy_names(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", proxies[i]->name);
}

float tc_proxy_uniform(uint64_t seed, uint64_t stream, uint64_t i, float a)
{
    uint64_t r = tc_mix64(tc_mix64(seed ^ tc_mix64(stream + 0x70726f78ULL)) ^ tc_mix64(i));
    return a * (float)((double)(r >> 40) / (double)(1u << 23) - 1.0);
}

tc_status tc_proxy_alloc(tc_proxy *m, const size_t *sizes, size_t nt, tc_err *err)
{
    if (nt > TC_PROXY_MAX_TENSORS)
        return tc_fail(err, TC_EINTERNAL, "%zu tensors: at most %d", nt, TC_PROXY_MAX_TENSORS);
    m->ntensors = nt;
    m->off[0] = 0;
    for (size_t t = 0; t < nt; t++)
        m->off[t + 1] = m->off[t] + sizes[t];
    m->nparams = m->off[nt];
    m->p = calloc(m->nparams ? m->nparams : 1, sizeof *m->p);
    if (!m->p)
        return tc_fail(err, TC_EINTERNAL, "out of memory for %zu parameters", m->nparams);
    return TC_OK;
}

/* ---- Fashion-MNIST ------------------------------------------------------ */

/* A fixed permutation of the training labels (Fisher-Yates on a counter
 * stream): the labels keep their frequencies and lose their images. */
static void shuffle_labels(tc_dataset *d)
{
    for (uint32_t i = d->n - 1; d->n > 1 && i > 0; i--) {
        uint64_t r = tc_mix64(0x6c61626c6573ULL + i);
        uint32_t j = (uint32_t)(((r >> 32) * (uint64_t)(i + 1)) >> 32);
        uint8_t t = d->y[i];
        d->y[i] = d->y[j];
        d->y[j] = t;
    }
}

static double majority(const tc_dataset *d)
{
    uint32_t count[256] = {0}, best = 0;
    for (uint32_t i = 0; i < d->n; i++)
        count[d->y[i]]++;
    for (int c = 0; c < 256; c++)
        best = count[c] > best ? count[c] : best;
    return d->n ? (double)best / d->n : 0.0;
}

tc_status tc_fmnist_load(const tc_train_opts *o, tc_proxy_data *d, tc_err *err)
{
    tc_image_data *im = calloc(1, sizeof *im);
    if (!im)
        return tc_fail(err, TC_EINTERNAL, "out of memory for the data set");
    const char *dir = o->data_dir && o->data_dir[0] ? o->data_dir : TC_FASHION_MNIST_DIR;
    tc_status st = tc_idx_load(dir, "train", o->train_subset, &im->train, err);
    if (st == TC_OK && (st = tc_idx_load(dir, "t10k", o->test_subset, &im->test, err)))
        tc_dataset_free(&im->train);
    if (st) {
        free(im);
        return st;
    }
    if (o->train_subset > im->train.n || o->test_subset > im->test.n) {
        bool tr = o->train_subset > im->train.n;
        st = tc_fail(err, TC_EINVAL, "subset of %u %s images asked, the data set has %u",
                     tr ? o->train_subset : o->test_subset, tr ? "training" : "test", tr ? im->train.n : im->test.n);
        d->impl = im;
        tc_fmnist_unload(d);
        return st;
    }
    if (o->shuffled_labels)
        shuffle_labels(&im->train);
    d->n_train = im->train.n;
    d->n_test = im->test.n;
    d->chance = majority(&im->test);
    d->impl = im;
    return TC_OK;
}

void tc_fmnist_unload(tc_proxy_data *d)
{
    tc_image_data *im = d->impl;
    if (im) {
        tc_dataset_free(&im->train);
        tc_dataset_free(&im->test);
        free(im);
    }
    d->impl = NULL;
}

/* ---- the MLP (mlp.c) as a proxy ----------------------------------------- */

typedef struct mlp_inst {
    tc_mlp m;
    tc_mlp_work w;
    uint8_t *labels;
} mlp_inst;

static void mlp_destroy(tc_proxy *p)
{
    mlp_inst *x = p->impl;
    if (x) {
        tc_mlp_work_free(&x->w);
        tc_mlp_free(&x->m);
        free(x->labels);
        free(x);
    }
    memset(p, 0, sizeof *p);
}

static tc_status mlp_create(const tc_train_opts *o, const tc_proxy_data *d, uint64_t seed, uint32_t max_batch,
                            tc_proxy *p, tc_err *err)
{
    const tc_image_data *im = d->impl;
    memset(p, 0, sizeof *p);
    mlp_inst *x = calloc(1, sizeof *x);
    if (!x)
        return tc_fail(err, TC_EINTERNAL, "out of memory for a model");
    p->impl = x;
    uint32_t hid = o->hidden ? o->hidden : TC_TRAIN_DEFAULT_HIDDEN;
    tc_status st = tc_mlp_init(&x->m, im->train.dim, hid, IMAGE_CLASSES, seed, err);
    if (st == TC_OK)
        st = tc_mlp_work_init(&x->w, &x->m, max_batch, err);
    if (st == TC_OK && !(x->labels = malloc(max_batch)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory for a batch of %u samples", max_batch);
    if (st) {
        mlp_destroy(p);
        return st;
    }
    /* powerSGD_hook's views: W1 hid x in, b1 hid x 1, W2 classes x hid, b2 classes x 1. */
    const tc_codec_tensor shape[TC_MLP_TENSORS] = {{hid, x->m.in}, {hid, 1}, {IMAGE_CLASSES, hid}, {IMAGE_CLASSES, 1}};
    p->nparams = x->m.nparams;
    p->p = x->m.p;
    p->ntensors = TC_MLP_TENSORS;
    for (int t = 0; t < TC_MLP_TENSORS; t++) {
        p->off[t] = x->m.off[t];
        p->shape[t] = shape[t];
        p->decay[t] = shape[t].cols > 1;
    }
    p->off[TC_MLP_TENSORS] = x->m.off[TC_MLP_TENSORS];
    return TC_OK;
}

static const tc_dataset *load_batch(mlp_inst *x, const tc_dataset *set, const uint32_t *idx, uint32_t B)
{
    tc_mlp_load(&x->w, set, idx, B);
    for (uint32_t b = 0; b < B; b++)
        x->labels[b] = set->y[idx[b]];
    return set;
}

static double mlp_grad(tc_proxy *p, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, float *grad)
{
    mlp_inst *x = p->impl;
    load_batch(x, &((const tc_image_data *)d->impl)->train, idx, B);
    return tc_mlp_grad(&x->m, &x->w, x->labels, B, grad) / B;
}

static void mlp_eval(tc_proxy *p, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, uint64_t *correct,
                     uint64_t *total)
{
    mlp_inst *x = p->impl;
    load_batch(x, &((const tc_image_data *)d->impl)->test, idx, B);
    *correct = tc_mlp_correct(&x->m, &x->w, x->labels, B);
    *total = B;
}

const tc_proxy_ops tc_proxy_mlp = {
    .name = "mlp",
    .family = "vision",
    .dataset = "fashion-mnist",
    .package = "dataset-fashion-mnist",
    .dir = TC_FASHION_MNIST_DIR,
    .optimizer = TC_OPT_SGD,
    .lr = 0.05,
    .load = tc_fmnist_load,
    .unload = tc_fmnist_unload,
    .create = mlp_create,
    .destroy = mlp_destroy,
    .grad = mlp_grad,
    .eval = mlp_eval,
};
