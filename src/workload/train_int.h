/*
 * train_int.h - internals of the accuracy workload: the IDX reader (idx.c),
 * the models (mlp.c) and the data-parallel training loop (train.c).
 */
#ifndef TOPOCC_TRAIN_INT_H
#define TOPOCC_TRAIN_INT_H

#include "topocc/train.h"

/* A labelled image set as stored: n images of dim = rows * cols bytes
 * (row-major, 0 = background), and n labels in 0..9. */
typedef struct tc_dataset {
    uint32_t n, rows, cols, dim;
    uint8_t *x;   /* n * dim */
    uint8_t *y;   /* n */
} tc_dataset;

/* Reads the gzipped IDX pair (images: magic 0x00000803, n x 28 x 28 bytes;
 * labels: magic 0x00000801, n bytes in 0..9), keeping the first max images
 * (0: all). The two files must declare the same count. A missing file, a
 * wrong magic, other dimensions, a count mismatch or a file that ends early
 * is TC_EINVAL naming the file and what is wrong. */
tc_status tc_idx_read(const char *images_path, const char *labels_path, uint32_t max, tc_dataset *out, tc_err *err);
/* The split "train" or "t10k" of Fashion-MNIST under dir. */
tc_status tc_idx_load(const char *dir, const char *split, uint32_t max, tc_dataset *out, tc_err *err);
void tc_dataset_free(tc_dataset *d);

/* Input normalization of Fashion-MNIST: (x / 255 - mean) / std over the
 * training set. */
#define TC_FMNIST_MEAN 0.2860f
#define TC_FMNIST_STD 0.3530f

/*
 * The MLP: in -> hid (ReLU) -> classes, softmax cross-entropy. Its
 * parameters are one flat float vector laid out as the tensors W1 (hid x in,
 * row-major), b1 (hid), W2 (classes x hid), b2 (classes): a gradient has the
 * same layout, and DDP buckets are ranges of whole tensors.
 */
#define TC_MLP_TENSORS 4
typedef struct tc_mlp {
    uint32_t in, hid, classes;
    size_t nparams;
    size_t off[TC_MLP_TENSORS + 1]; /* tensor t spans [off[t], off[t+1]) */
    float *p;
} tc_mlp;

/* Scratch of one forward/backward pass of up to max_batch samples. */
typedef struct tc_mlp_work {
    uint32_t max_batch;
    float *x;  /* inputs, B x in */
    float *h;  /* hidden activations after ReLU, B x hid */
    float *dh; /* gradient of the loss at the hidden layer, B x hid */
    float *z;  /* logits, then softmax probabilities, then their gradient, B x classes */
} tc_mlp_work;

/* PyTorch's default initialization of nn.Linear: weights and biases uniform
 * in +-1/sqrt(fan_in), from the seed. */
tc_status tc_mlp_init(tc_mlp *m, uint32_t in, uint32_t hid, uint32_t classes, uint64_t seed, tc_err *err);
void tc_mlp_free(tc_mlp *m);
tc_status tc_mlp_work_init(tc_mlp_work *w, const tc_mlp *m, uint32_t max_batch, tc_err *err);
void tc_mlp_work_free(tc_mlp_work *w);

/* Loads samples idx[0..B) of d into w->x, normalized. */
void tc_mlp_load(tc_mlp_work *w, const tc_dataset *d, const uint32_t *idx, uint32_t B);
/* Gradient of the mean cross-entropy over the B samples in w->x with labels
 * y into grad (nparams floats, overwritten); returns the summed loss. */
double tc_mlp_grad(const tc_mlp *m, tc_mlp_work *w, const uint8_t *y, uint32_t B, float *grad);
/* Number of correct predictions (argmax of the logits) for the B samples in
 * w->x against labels y. */
uint32_t tc_mlp_correct(const tc_mlp *m, tc_mlp_work *w, const uint8_t *y, uint32_t B);

#endif
