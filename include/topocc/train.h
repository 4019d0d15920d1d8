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

#ifdef __cplusplus
extern "C" {
#endif

#define TC_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

typedef struct tc_train_opts {
    const char *data_dir;     /* NULL: the proxy's data set where its package installs it */
    const char *model;        /* the proxy: "mlp" (default), "cnn" or "chartf" (docs/MODEL.md) */
    uint32_t workers;         /* simulated data-parallel workers (default 8) */
    uint32_t batch;           /* samples per worker per step (default 32) */
    uint32_t steps;           /* default 2000 */
    uint32_t eval_every;      /* test accuracy every this many steps (default 100) */
    double lr;                /* learning rate (0: the proxy's default; mlp: SGD 0.05, momentum 0.9) */
    uint64_t seed;            /* the first seed (default 1) */
    uint32_t seeds;           /* tc_train_seeds: runs per codec, on seeds seed, seed + 1, ... (default
                                 TC_TRAIN_DEFAULT_SEEDS) */
    double target;            /* target accuracy of the statistics (0: the default rule, tc_acc_stats) */
    uint32_t train_subset;    /* use the first N training images (0: all 60,000) */
    uint32_t test_subset;     /* evaluate on the first N test images (0: all 10,000) */
    uint64_t bucket_bytes;    /* DDP bucket size (default 25 MB) */
    uint32_t hidden;          /* mlp: hidden units (default TC_TRAIN_DEFAULT_HIDDEN) */
    uint32_t width;           /* cnn: channels of the first convolution (the second has twice as many);
                                 chartf: model dimension (0: the proxy's default) */
    uint32_t layers;          /* chartf: transformer blocks (0: default) */
    uint32_t heads;           /* chartf: attention heads (0: default; must divide width) */
    uint32_t context;         /* chartf: characters of context per sample (0: default) */
    double weight_decay;      /* AdamW's decoupled weight decay (0: the default 0.01; SGD: unused) */
    bool shuffled_labels;     /* train on randomly permuted labels (targets): a check that a proxy
                                 learns from the data and not from anything else */
    tc_progress_fn progress;  /* NULL: none; else called as training advances */
    void *progress_ud;
} tc_train_opts;

#define TC_TRAIN_DEFAULT_HIDDEN 128
#define TC_TRAIN_DEFAULT_SEEDS 5
#define TC_TRAIN_MAX_SEEDS 1000

/* The accuracy proxies (docs/MODEL.md, "Accuracy proxies"): mlp and cnn on
 * Fashion-MNIST (vision), chartf, a character-level transformer on the
 * fortunes corpus (language). */
typedef struct tc_proxy_info {
    const char *name;
    const char *family;      /* "vision" or "language" */
    const char *dataset;     /* "fashion-mnist", "fortunes" */
    const char *package;     /* the Debian package that installs it */
    const char *dir;         /* where that package installs it */
    const char *optimizer;   /* "sgd" (momentum 0.9) or "adamw" */
    double lr;               /* the default learning rate */
} tc_proxy_info;
/* The proxy named `name` into *out; false if there is none. */
bool tc_train_proxy(const char *name, tc_proxy_info *out);
/* The proxies' names, comma-separated. */
void tc_train_proxy_names(char *buf, size_t len);
/* One line on the proxy of o as trained (defaults filled): its data set,
 * architecture and optimizer, e.g. "fashion-mnist, mlp 784-128-10, SGD lr
 * 0.05 momentum 0.9". */
void tc_train_proxy_describe(const tc_train_opts *o, char *buf, size_t len);
/* The proxy that stands for a model family ("vision", "language"); NULL if none. */
const char *tc_train_proxy_of_family(const char *family);

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
    uint64_t seed;            /* of the run (initialization and data order) */
    size_t n;
    tc_acc_point *pts;
} tc_acc_curve;

/* Trains once per codec on o->seed (same initialization, same data order)
 * and records test accuracy against steps: a point at step 0 (the initial
 * model), every eval_every steps and at the last step. curves[i] (caller's
 * array of ncodecs) receives codec i's curve. o->seeds is not used. Errors:
 * a missing data set ("install the Debian package dataset-fashion-mnist"),
 * a corrupt IDX header, invalid options (then no curve is left allocated). */
tc_status tc_train_run(const tc_train_opts *o, const tc_codec_spec *codecs, size_t ncodecs, tc_acc_curve *curves,
                       tc_err *err);

/* tc_train_run on each of the seeds o->seed, o->seed + 1, ...,
 * o->seed + o->seeds - 1: *curves (allocated, *n = ncodecs * seeds; free
 * with tc_acc_curves_free then free) holds codec i's run on seed j at
 * [i * seeds + j], so that run j of every codec shares its initialization
 * and data order with run j of every other (paired runs). The runs are
 * spread over `threads` threads (0: one per online CPU); the curves do not
 * depend on it. */
tc_status tc_train_seeds(const tc_train_opts *o, const tc_codec_spec *codecs, size_t ncodecs, uint32_t threads,
                         tc_acc_curve **curves, size_t *n, tc_err *err);
/* Frees the points of curves[0..n) (not the array itself). */
void tc_acc_curves_free(tc_acc_curve *curves, size_t n);

/* The accuracy file (JSON, docs/SCHEMA.md): the options, every run's curve
 * (codec, seed, points) and the statistics over the seeds (those of
 * tc_acc_stats_compute at o->target, or null where there are none).
 * Written atomically, read back with validation (a file that does not match
 * says what and where, e.g. "curves[2].points[5].test_acc: expected a
 * number in [0,1]"; recorded statistics must be those the curves give).
 * tc_acc_read fills o (data_dir NULL; seeds: runs per codec; target: the
 * recorded target where it was given, else 0) and allocates *curves:
 * release it with tc_acc_curves_free(*curves, *n) then free(*curves). A
 * version 1 file (one run per codec, no seeds) reads as one seed. */
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
/* The highest test accuracy along the curve. */
double tc_acc_best(const tc_acc_curve *c);

/* ---- statistics over seeds (docs/MODEL.md, "Seeds and intervals") ---- */

/* The reference of every steps ratio is the bf16 codec; the default target
 * is this fraction of the final accuracy of its seed-mean curve (late in
 * training, where a codec that stalls shows). */
#define TC_TARGET_FRACTION 0.99
/* The confidence level of every interval. */
#define TC_ACC_LEVEL 0.95

/* One codec's runs against the reference's, run j paired with run j. */
typedef struct tc_acc_codec_stats {
    tc_codec_spec codec;
    uint32_t runs;            /* seeds */
    uint32_t reached;         /* runs that reach the target */
    bool same_seeds;          /* run j has the reference's run j's seed, for every j */
    double final_mean, final_sd;   /* final test accuracy over the runs (sd NAN for one run) */
    double steps_mean;        /* mean steps to the target over the runs (NAN unless every run reaches it) */
    /* The steps ratio: the per-run log(steps / reference steps), its mean
     * and t-interval (tc_stat_mean_ci at TC_ACC_LEVEL), and their exp.
     * NAN unless every run reaches the target; lo 0 and hi INFINITY for one
     * run (no interval); exactly 1 for the reference itself. */
    double log_mean, log_sd;
    double ratio, ratio_lo, ratio_hi;
    /* The same interval at the joint level (tc_acc_stats.joint_level:
     * Bonferroni over the codecs compared with the reference), so that all
     * of them hold together with probability TC_ACC_LEVEL at least; equal
     * to [ratio_lo, ratio_hi] when one codec is compared. */
    double joint_lo, joint_hi;
    /* Final accuracy minus the reference's, paired: mean and t-interval. */
    double dfinal, dfinal_lo, dfinal_hi;
} tc_acc_codec_stats;

typedef struct tc_acc_stats {
    double target;            /* the target used */
    bool target_given;        /* else TC_TARGET_FRACTION x ref_final */
    double ref_final;         /* final accuracy of the reference's seed-mean curve */
    size_t ref;               /* index of the reference (bf16) in codecs[] */
    uint32_t runs;            /* runs per codec */
    double level;             /* TC_ACC_LEVEL */
    uint32_t compared;        /* codecs compared with the reference (n - 1) */
    double joint_level;       /* 1 - (1 - TC_ACC_LEVEL) / compared (TC_ACC_LEVEL for one or none) */
    size_t n;
    tc_acc_codec_stats *codecs; /* one per codec, in order of first appearance (owned) */
} tc_acc_stats;

/* The statistics of curves[0..n): grouped by codec name in order of first
 * appearance, each codec's runs in order. The reference is the codec named
 * "bf16" (bf16 with its defaults). target <= 0: TC_TARGET_FRACTION of the
 * reference's seed-mean final accuracy. Errors (TC_EINVAL, one line): no
 * bf16 curve; codecs with different numbers of runs; bf16 runs that end at
 * different steps; a reference run that does not reach the target, or
 * reaches it at step 0 (naming the seed and the accuracy it ends at). */
tc_status tc_acc_stats_compute(const tc_acc_curve *curves, size_t n, double target, tc_acc_stats *out, tc_err *err);
/* The same; longer says how to train longer in the error for a reference
 * run that does not reach the target, after "give a lower --target-acc, or "
 * (tc_acc_stats_compute: "more --steps", train-accuracy's flag; NULL: the
 * same). */
tc_status tc_acc_stats_compute_hint(const tc_acc_curve *curves, size_t n, double target, const char *longer,
                                    tc_acc_stats *out, tc_err *err);
void tc_acc_stats_free(tc_acc_stats *s);
/* The statistics as the accuracy file records them (docs/SCHEMA.md,
 * "statistics"; new reference). */
struct json_t *tc_acc_stats_json(const tc_acc_stats *s);
/* The codec's statistics by name; NULL if absent. */
const tc_acc_codec_stats *tc_acc_stats_find(const tc_acc_stats *s, const char *codec);

#ifdef __cplusplus
}
#endif

#endif
