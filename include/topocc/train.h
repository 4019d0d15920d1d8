/*
 * topocc/train.h - measured accuracy: a real model trained on the real
 * Fashion-MNIST data set with n simulated data-parallel workers, each bucket
 * of gradients aggregated through a codec exactly as DDP's communication
 * hook would (topocc/compress.h). Deterministic for a seed; the matrix
 * products use OpenBLAS with one thread.
 */
#ifndef TOPOCC_TRAIN_H
#define TOPOCC_TRAIN_H

#include "topocc/compress.h"

#define TC_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

typedef struct tc_train_opts {
    const char *data_dir;     /* NULL: TC_FASHION_MNIST_DIR */
    const char *model;        /* "mlp" (default) or "cnn" */
    uint32_t workers;         /* simulated data-parallel workers (default 8) */
    uint32_t batch;           /* samples per worker per step (default 32) */
    uint32_t steps;           /* default 2000 */
    uint32_t eval_every;      /* test accuracy every this many steps (default 100) */
    double lr;                /* SGD learning rate (default 0.05), momentum 0.9 */
    uint64_t seed;            /* default 1 */
    uint32_t train_subset;    /* use the first N training images (0: all 60,000) */
    uint32_t test_subset;     /* evaluate on the first N test images (0: all 10,000) */
    uint64_t bucket_bytes;    /* DDP bucket size (default 25 MB) */
    uint32_t hidden;          /* mlp: hidden units (default TC_TRAIN_DEFAULT_HIDDEN) */
    tc_progress_fn progress;  /* NULL: none; else called as training advances */
    void *progress_ud;
} tc_train_opts;

#define TC_TRAIN_DEFAULT_HIDDEN 128

/* Fills the defaults above into o (fields left 0/NULL). */
void tc_train_defaults(tc_train_opts *o);

typedef struct tc_acc_point {
    uint32_t step;
    double test_acc;          /* fraction in [0, 1] */
    double train_loss;        /* mean cross-entropy over the steps since the last point
                                 (step 0: of the first batch); NAN once training diverged */
} tc_acc_point;

typedef struct tc_acc_curve {
    tc_codec_spec codec;
    size_t n;
    tc_acc_point *pts;
} tc_acc_curve;

/* Trains once per codec (same seed, same data order) and records test
 * accuracy against steps: a point at step 0 (the initial model), every
 * eval_every steps and at the last step. curves[i] (caller's array of
 * ncodecs) receives codec i's curve. Errors: a missing data set ("install
 * the Debian package dataset-fashion-mnist"), a corrupt IDX header, invalid
 * options (then no curve is left allocated). */
tc_status tc_train_run(const tc_train_opts *o, const tc_codec_spec *codecs, size_t ncodecs, tc_acc_curve *curves,
                       tc_err *err);
/* Frees the points of curves[0..n) (not the array itself). */
void tc_acc_curves_free(tc_acc_curve *curves, size_t n);

/* The accuracy file (JSON, docs/SCHEMA.md): written atomically, read back
 * with validation (a file that does not match says what and where, e.g.
 * "curves[2].points[5].test_acc: expected a number in [0,1]"). tc_acc_read
 * fills o (data_dir NULL) and allocates *curves: release it with
 * tc_acc_curves_free(*curves, *n) then free(*curves). */
tc_status tc_acc_write(const char *path, const tc_train_opts *o, const tc_acc_curve *curves, size_t n, tc_err *err);
tc_status tc_acc_read(const char *path, tc_train_opts *o, tc_acc_curve **curves, size_t *n, tc_err *err);

/* The accuracy file as a JSON value (new reference) and back: the same
 * fields and checks as tc_acc_write / tc_acc_read; `what` names the source
 * in messages ("the accuracy file 'x.json'", "scenario compress.accuracy"). */
struct json_t;
struct json_t *tc_acc_to_json(const tc_train_opts *o, const tc_acc_curve *curves, size_t n);
tc_status tc_acc_from_json(const struct json_t *root, const char *what, tc_train_opts *o, tc_acc_curve **curves,
                           size_t *n, tc_err *err);

/* Steps to reach target accuracy: the first crossing, linearly interpolated
 * between the two recorded points around it (the first point's step if it
 * already reaches it); a negative value if the curve never reaches it. */
double tc_acc_steps_to(const tc_acc_curve *c, double target);

#endif
