/*
 * proxy.h - the accuracy proxies: small real models that train.c trains with
 * n simulated data-parallel workers, each bucket of gradients aggregated
 * through a codec.
 *
 * A proxy is a table of operations (tc_proxy_ops): it loads its data set
 * once (read-only, shared by every run and thread), creates model instances
 * (parameters as one flat float vector of whole tensors in registration
 * order, plus the instance's own scratch), computes the gradient of the mean
 * loss over a mini-batch of training samples, and counts correct predictions
 * on test samples. The training loop (sharding, buckets, codecs, optimizer,
 * evaluation schedule) is the same for every proxy.
 *
 *   mlp     Fashion-MNIST, 784 -> hidden (ReLU) -> 10              (mlp.c)
 *   cnn     Fashion-MNIST, two 5x5 convolutions with pooling       (cnn.c)
 *   chartf  a character-level transformer on the fortunes corpus   (chartf.c)
 */
#ifndef TOPOCC_PROXY_H
#define TOPOCC_PROXY_H

#include "workload/train_int.h"

#define TC_PROXY_MAX_TENSORS 64

/* A data set as loaded by a proxy: n_train training samples and n_test test
 * samples, addressed by index; impl is the proxy's own representation. */
typedef struct tc_proxy_data {
    uint32_t n_train, n_test;
    double chance;     /* test accuracy of always predicting the test set's most frequent class */
    void *impl;
} tc_proxy_data;

/* One model instance. Tensor t occupies p[off[t] .. off[t+1]); shape[t] is
 * how PyTorch's powerSGD_hook views it, (shape[0], product of the rest)
 * (a bias or a norm's scale: (n, 1)); decay[t] says whether AdamW's weight
 * decay applies (weight matrices and embeddings; not biases or norm
 * parameters, as nanoGPT's configure_optimizers groups them). */
typedef struct tc_proxy {
    size_t nparams;
    float *p;
    size_t ntensors;
    size_t off[TC_PROXY_MAX_TENSORS + 1];
    tc_codec_tensor shape[TC_PROXY_MAX_TENSORS];
    bool decay[TC_PROXY_MAX_TENSORS];
    void *impl;        /* the instance's scratch (and anything else it keeps) */
} tc_proxy;

typedef enum { TC_OPT_SGD, TC_OPT_ADAMW } tc_optimizer;

typedef struct tc_proxy_ops {
    const char *name;        /* "mlp", "cnn", "chartf" */
    const char *family;      /* "vision" or "language": the models it stands for */
    const char *dataset;     /* "fashion-mnist", "fortunes" */
    const char *package;     /* the Debian package that provides the data set */
    const char *dir;         /* where that package installs it (o->data_dir NULL) */
    tc_optimizer optimizer;  /* the proxy's optimizer */
    double lr;               /* its default learning rate */
    uint32_t width, layers, heads, context; /* defaults of the sizes it reads (0: it reads none) */
    /* Loads the data set (o->data_dir or the proxy's default directory,
     * o->train_subset / o->test_subset, o->shuffled_labels). A missing data
     * set is TC_EINVAL naming the package that provides it. */
    tc_status (*load)(const tc_train_opts *o, tc_proxy_data *d, tc_err *err);
    void (*unload)(tc_proxy_data *d);
    /* A model initialized from the seed, with scratch for mini-batches of up
     * to max_batch samples (training and evaluation). */
    tc_status (*create)(const tc_train_opts *o, const tc_proxy_data *d, uint64_t seed, uint32_t max_batch,
                        tc_proxy *m, tc_err *err);
    void (*destroy)(tc_proxy *m);
    /* The gradient of the mean loss over training samples idx[0..B) into
     * grad[0..nparams) (overwritten); returns that mean loss (per sample;
     * for a language model, per predicted token). */
    double (*grad)(tc_proxy *m, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, float *grad);
    /* Correct predictions and predictions made on test samples idx[0..B). */
    void (*eval)(tc_proxy *m, const tc_proxy_data *d, const uint32_t *idx, uint32_t B, uint64_t *correct,
                 uint64_t *total);
} tc_proxy_ops;

/* Fashion-MNIST as the image proxies (mlp, cnn) share it: d->impl points
 * to a tc_image_data. Labels are permuted over the training set with a
 * fixed seed when o->shuffled_labels is set. */
typedef struct tc_image_data {
    tc_dataset train, test;
} tc_image_data;
tc_status tc_fmnist_load(const tc_train_opts *o, tc_proxy_data *d, tc_err *err);
void tc_fmnist_unload(tc_proxy_data *d);

/* A parameter's initial value: uniform in [-a, a) from a counter-based
 * stream, value i of the stream `stream` of the seed (PyTorch's default
 * initialization of nn.Linear and nn.Conv2d draws weights and biases
 * uniformly in +-1/sqrt(fan_in)). */
float tc_proxy_uniform(uint64_t seed, uint64_t stream, uint64_t i, float a);
/* Allocates m->p for the tensors sizes[0..nt) (m->off, m->nparams, m->ntensors
 * filled; shape and decay left to the caller). */
tc_status tc_proxy_alloc(tc_proxy *m, const size_t *sizes, size_t nt, tc_err *err);

extern const tc_proxy_ops tc_proxy_mlp, tc_proxy_cnn, tc_proxy_chartf;

/* The proxy named `name`; NULL if none. */
const tc_proxy_ops *tc_proxy_find(const char *name);


#endif
