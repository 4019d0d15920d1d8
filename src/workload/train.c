/*
 * train.c - data-parallel training of a real model on Fashion-MNIST, one run
 * per codec, as PyTorch DDP with a communication hook would do it:
 *
 *   - the shuffled training set is sharded like DistributedSampler (worker w
 *     takes positions w, w + n, w + 2n, ... of the epoch's permutation) and
 *     each worker computes the mean gradient of its own mini-batch;
 *   - the gradient vector is cut into buckets as DDP's
 *     compute_bucket_assignment_by_size does: whole tensors in reverse order
 *     of registration (the order backward produces them), a bucket closed as
 *     soon as it holds at least bucket_bytes;
 *   - each bucket goes through its own codec instance (tc_codec_aggregate:
 *     error feedback, compress, the collective's aggregation, decompress),
 *     which returns the mean that every worker applies; since all workers
 *     apply the same update, one copy of the model stands for all of them;
 *   - SGD with momentum 0.9 as torch.optim.SGD: v = 0.9 v + g, p -= lr v.
 *
 * Every random choice (initialization, permutations) derives from the seed,
 * and OpenBLAS runs on one thread, so a run is reproducible bit for bit and
 * every codec sees the same data order.
 */
#include "core/blas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "topocc/core.h"
#include "workload/train_int.h"

#define TRAIN_CLASSES 10u
#define TRAIN_MOMENTUM 0.9 /* torch.optim.SGD momentum; no dampening, no Nesterov */
#define TRAIN_EVAL_CHUNK 500u
#define TRAIN_MAX_BUCKETS TC_MLP_TENSORS
#define TRAIN_PROGRESS_S 0.25 /* wall time between progress reports */

void tc_train_defaults(tc_train_opts *o)
{
    if (!o->data_dir)
        o->data_dir = TC_FASHION_MNIST_DIR;
    if (!o->model)
        o->model = "mlp";
    if (!o->workers)
        o->workers = 8;
    if (!o->batch)
        o->batch = 32;
    if (!o->steps)
        o->steps = 2000;
    if (!o->eval_every)
        o->eval_every = 100;
    if (!(o->lr > 0.0))
        o->lr = 0.05;
    if (!o->seed)
        o->seed = 1;
    if (!o->bucket_bytes)
        o->bucket_bytes = 25000000;
    if (!o->hidden)
        o->hidden = TC_TRAIN_DEFAULT_HIDDEN;
}

static tc_status check_opts(const tc_train_opts *o, tc_err *err)
{
    if (strcmp(o->model, "mlp") != 0)
        return tc_fail(err, TC_EINVAL, "unknown model '%s': accepted is mlp", o->model);
    if (o->workers > 4096)
        return tc_fail(err, TC_EINVAL, "workers %u: expected 1..4096", o->workers);
    if (o->batch > 65536)
        return tc_fail(err, TC_EINVAL, "batch %u: expected 1..65536 samples per worker", o->batch);
    if (o->hidden > 65536)
        return tc_fail(err, TC_EINVAL, "hidden %u: expected 1..65536 units", o->hidden);
    if (!isfinite(o->lr) || o->lr > 100.0)
        return tc_fail(err, TC_EINVAL, "learning rate %g: expected a number in (0, 100]", o->lr);
    if (o->seed > (uint64_t)INT64_MAX)
        return tc_fail(err, TC_EINVAL, "seed %llu: expected at most 2^63-1", (unsigned long long)o->seed);
    return TC_OK;
}

/* Fisher-Yates permutation of 0..n-1 for epoch e of the seed. */
static void epoch_perm(uint32_t *perm, uint32_t n, uint64_t seed, uint64_t epoch)
{
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t s = tc_mix64(seed ^ 0x7065726dULL) + epoch * 0x9e3779b97f4a7c15ULL;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint64_t r = tc_mix64(s + i);
        uint32_t j = (uint32_t)(((r >> 32) * (uint64_t)(i + 1)) >> 32);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

typedef struct bucket {
    size_t off, len;
    tc_codec *codec;
} bucket;

/* DDP's assignment: tensors from last to first, a bucket closed once it
 * holds bucket_bytes or more. Buckets are contiguous ranges of the flat
 * vector because consecutive tensors are adjacent in it. */
static size_t make_buckets(const tc_mlp *m, uint64_t bucket_bytes, bucket *b)
{
    size_t nb = 0, end = m->off[TC_MLP_TENSORS];
    for (int t = TC_MLP_TENSORS - 1; t >= 0; t--) {
        size_t start = m->off[t];
        if ((uint64_t)(end - start) * sizeof(float) >= bucket_bytes || t == 0) {
            b[nb].off = start;
            b[nb].len = end - start;
            b[nb].codec = NULL;
            nb++;
            end = start;
        }
    }
    return nb;
}

static double test_accuracy(const tc_mlp *m, tc_mlp_work *w, const tc_dataset *test, uint32_t *idx)
{
    uint32_t ok = 0;
    for (uint32_t i = 0; i < test->n; i += w->max_batch) {
        uint32_t B = test->n - i < w->max_batch ? test->n - i : w->max_batch;
        for (uint32_t b = 0; b < B; b++)
            idx[b] = i + b;
        tc_mlp_load(w, test, idx, B);
        ok += tc_mlp_correct(m, w, test->y + i, B);
    }
    return (double)ok / (double)test->n;
}

/* State of one run: the model, its optimizer, the workers' gradients. */
typedef struct run {
    const tc_train_opts *o;
    const tc_dataset *train, *test;
    tc_mlp m;
    tc_mlp_work work, evalw;
    float **grads;   /* workers x nparams */
    float *avg, *vel;
    uint32_t *perm, *idx, *eidx;
    uint8_t *labels;
    bucket b[TRAIN_MAX_BUCKETS];
    size_t nb;
} run;

static void run_free(run *r)
{
    for (size_t i = 0; i < r->nb; i++)
        tc_codec_free(r->b[i].codec);
    if (r->grads)
        for (uint32_t w = 0; w < r->o->workers; w++)
            free(r->grads[w]);
    free(r->grads);
    free(r->avg);
    free(r->vel);
    free(r->perm);
    free(r->idx);
    free(r->eidx);
    free(r->labels);
    tc_mlp_work_free(&r->work);
    tc_mlp_work_free(&r->evalw);
    tc_mlp_free(&r->m);
}

static tc_status run_init(run *r, const tc_codec_spec *spec, tc_err *err)
{
    const tc_train_opts *o = r->o;
    tc_status st = tc_mlp_init(&r->m, r->train->dim, o->hidden, TRAIN_CLASSES, o->seed, err);
    if (st)
        return st;
    if ((st = tc_mlp_work_init(&r->work, &r->m, o->batch, err)) ||
        (st = tc_mlp_work_init(&r->evalw, &r->m, TRAIN_EVAL_CHUNK, err)))
        return st;
    size_t np = r->m.nparams;
    r->grads = tc_calloc(o->workers, sizeof *r->grads);
    r->avg = tc_calloc(np, sizeof *r->avg);
    r->vel = tc_calloc(np, sizeof *r->vel);
    r->perm = tc_calloc(r->train->n, sizeof *r->perm);
    r->idx = tc_calloc(o->batch, sizeof *r->idx);
    r->eidx = tc_calloc(TRAIN_EVAL_CHUNK, sizeof *r->eidx);
    r->labels = tc_calloc(o->batch, 1);
    if (!r->grads || !r->avg || !r->vel || !r->perm || !r->idx || !r->eidx || !r->labels)
        return tc_fail(err, TC_EINTERNAL, "out of memory for %u workers' gradients", o->workers);
    for (uint32_t w = 0; w < o->workers; w++)
        if (!(r->grads[w] = malloc(np * sizeof **r->grads)))
            return tc_fail(err, TC_EINTERNAL, "out of memory for %u workers' gradients", o->workers);
    r->nb = make_buckets(&r->m, o->bucket_bytes, r->b);
    for (size_t i = 0; i < r->nb; i++)
        if ((st = tc_codec_create(spec, r->b[i].len, o->workers, &r->b[i].codec, err)))
            return st;
    return TC_OK;
}

/* Every worker's gradient for its k-th mini-batch of the epoch; returns the
 * summed loss over all workers' samples. */
static double worker_grads(run *r, uint32_t k)
{
    const uint32_t n = r->o->workers, B = r->o->batch;
    double loss = 0.0;
    for (uint32_t w = 0; w < n; w++) {
        for (uint32_t b = 0; b < B; b++) {
            r->idx[b] = r->perm[w + (size_t)n * ((size_t)k * B + b)];
            r->labels[b] = r->train->y[r->idx[b]];
        }
        tc_mlp_load(&r->work, r->train, r->idx, B);
        loss += tc_mlp_grad(&r->m, &r->work, r->labels, B, r->grads[w]);
    }
    return loss;
}

static tc_status aggregate_and_step(run *r, uint64_t step, tc_err *err)
{
    const float *gp[4096];
    for (size_t i = 0; i < r->nb; i++) {
        for (uint32_t w = 0; w < r->o->workers; w++)
            gp[w] = r->grads[w] + r->b[i].off;
        tc_status st = tc_codec_aggregate(r->b[i].codec, gp, r->avg + r->b[i].off, step, err);
        if (st)
            return st;
    }
    const float lr = (float)r->o->lr;
    for (size_t i = 0; i < r->m.nparams; i++) {
        r->vel[i] = (float)TRAIN_MOMENTUM * r->vel[i] + r->avg[i];
        r->m.p[i] -= lr * r->vel[i];
    }
    return TC_OK;
}

/* Progress over every codec's steps: reported at most every
 * TRAIN_PROGRESS_S of wall time, so a fast run is not slowed by its
 * reports, and once at the end. */
typedef struct progress {
    tc_progress_fn fn;
    void *ud;
    double done, total;
    double t0, last;
} progress;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_report(progress *p, bool final)
{
    if (!p->fn)
        return;
    double t = now_s();
    if (!final && t - p->last < TRAIN_PROGRESS_S)
        return;
    p->last = t;
    tc_progress r = {.what = "training",
                     .fraction = p->total > 0 ? p->done / p->total : -1.0,
                     .done = p->done,
                     .total = p->total,
                     .unit = "steps",
                     .rate = t > p->t0 ? p->done / (t - p->t0) : 0.0};
    p->fn(p->ud, &r);
}

static tc_status train_one(const tc_train_opts *o, const tc_dataset *train, const tc_dataset *test,
                           const tc_codec_spec *spec, progress *pg, tc_acc_curve *c, tc_err *err)
{
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.train = train;
    r.test = test;
    c->codec = *spec;
    c->n = 0;
    size_t cap = o->steps / o->eval_every + 2;
    c->pts = tc_calloc(cap, sizeof *c->pts);
    tc_status st = c->pts ? run_init(&r, spec, err) : tc_fail(err, TC_EINTERNAL, "out of memory for a curve");
    const uint32_t per_epoch = train->n / o->workers / o->batch;
    const double samples = (double)o->workers * o->batch;
    double loss = 0.0;
    uint32_t since = 0;
    for (uint32_t step = 1; !st && step <= o->steps; step++) {
        uint32_t k = (step - 1) % per_epoch;
        if (k == 0)
            epoch_perm(r.perm, train->n, o->seed, (step - 1) / per_epoch);
        double l = worker_grads(&r, k);
        if (step == 1) /* the initial model: test accuracy, loss of the first batch */
            c->pts[c->n++] = (tc_acc_point){0, test_accuracy(&r.m, &r.evalw, test, r.eidx), l / samples};
        loss += l;
        since++;
        if ((st = aggregate_and_step(&r, step - 1, err)))
            break;
        pg->done++;
        progress_report(pg, false);
        if (step % o->eval_every == 0 || step == o->steps) {
            double mean = loss / (samples * since);
            c->pts[c->n++] = (tc_acc_point){step, test_accuracy(&r.m, &r.evalw, test, r.eidx),
                                            isfinite(mean) ? mean : NAN};
            loss = 0.0;
            since = 0;
        }
    }
    run_free(&r);
    if (st) {
        free(c->pts);
        c->pts = NULL;
        c->n = 0;
    }
    return st;
}

tc_status tc_train_run(const tc_train_opts *opts, const tc_codec_spec *codecs, size_t ncodecs, tc_acc_curve *curves,
                       tc_err *err)
{
    tc_train_opts o = *opts;
    tc_train_defaults(&o);
    tc_status st = check_opts(&o, err);
    if (st)
        return st;
    if (ncodecs == 0)
        return tc_fail(err, TC_EINVAL, "no codec to train with: give at least one");
    openblas_set_num_threads(1);
    tc_dataset train, test;
    if ((st = tc_idx_load(o.data_dir, "train", o.train_subset, &train, err)))
        return st;
    if ((st = tc_idx_load(o.data_dir, "t10k", o.test_subset, &test, err))) {
        tc_dataset_free(&train);
        return st;
    }
    if (o.train_subset > train.n || o.test_subset > test.n)
        st = tc_fail(err, TC_EINVAL, "subset of %u %s images asked, the data set has %u",
                     o.train_subset > train.n ? o.train_subset : o.test_subset,
                     o.train_subset > train.n ? "training" : "test", o.train_subset > train.n ? train.n : test.n);
    else if ((uint64_t)o.workers * o.batch > train.n)
        st = tc_fail(err, TC_EINVAL, "%u workers x batch %u = %llu samples per step exceed the %u training images",
                     o.workers, o.batch, (unsigned long long)o.workers * o.batch, train.n);
    progress pg = {o.progress, o.progress_ud, 0.0, (double)o.steps * (double)ncodecs, now_s(), 0.0};
    pg.last = pg.t0;
    size_t done = 0;
    for (; !st && done < ncodecs; done++)
        st = train_one(&o, &train, &test, &codecs[done], &pg, &curves[done], err);
    if (st)
        tc_acc_curves_free(curves, done);
    else
        progress_report(&pg, true);
    tc_dataset_free(&train);
    tc_dataset_free(&test);
    return st;
}

void tc_acc_curves_free(tc_acc_curve *curves, size_t n)
{
    for (size_t i = 0; curves && i < n; i++) {
        free(curves[i].pts);
        curves[i].pts = NULL;
        curves[i].n = 0;
    }
}

double tc_acc_steps_to(const tc_acc_curve *c, double target)
{
    for (size_t i = 0; i < c->n; i++) {
        const tc_acc_point *p = &c->pts[i];
        if (!(p->test_acc >= target))
            continue;
        if (i == 0)
            return p->step;
        const tc_acc_point *q = &c->pts[i - 1];
        return q->step + (target - q->test_acc) / (p->test_acc - q->test_acc) * (double)(p->step - q->step);
    }
    return -1.0;
}

/* ---- the accuracy file ---- */

#define ACC_SCHEMA_VERSION 1
/* The highest schema_version of a train-accuracy JSON document (the file's
 * fields plus "command" and "scenario") that the reader accepts. */
#define ACC_DOC_SCHEMA_MAX 2
#define ACC_DATASET "fashion-mnist"

static json_t *curve_json(const tc_acc_curve *c)
{
    json_t *pts = json_array();
    for (size_t i = 0; i < c->n; i++) {
        const tc_acc_point *p = &c->pts[i];
        json_t *e = json_object();
        json_object_set_new(e, "step", json_integer(p->step));
        json_object_set_new(e, "test_acc", json_real(p->test_acc));
        json_object_set_new(e, "train_loss", isfinite(p->train_loss) ? json_real(p->train_loss) : json_null());
        json_array_append_new(pts, e);
    }
    json_t *o = json_object();
    json_object_set_new(o, "codec", json_string(c->codec.name));
    json_object_set_new(o, "points", pts);
    return o;
}

/* The accuracy file as a value; NULL for a seed JSON cannot hold or when
 * out of memory (tc_acc_write says which). */
json_t *tc_acc_to_json(const tc_train_opts *opts, const tc_acc_curve *curves, size_t n)
{
    tc_train_opts o = *opts;
    tc_train_defaults(&o);
    if (o.seed > (uint64_t)INT64_MAX)
        return NULL;
    json_t *j = json_object();
    if (!j)
        return NULL;
    json_object_set_new(j, "schema_version", json_integer(ACC_SCHEMA_VERSION));
    json_object_set_new(j, "dataset", json_string(ACC_DATASET));
    json_object_set_new(j, "model", json_string(o.model));
    json_object_set_new(j, "hidden", json_integer(o.hidden));
    json_object_set_new(j, "workers", json_integer(o.workers));
    json_object_set_new(j, "batch", json_integer(o.batch));
    json_object_set_new(j, "steps", json_integer(o.steps));
    json_object_set_new(j, "eval_every", json_integer(o.eval_every));
    json_object_set_new(j, "lr", json_real(o.lr));
    json_object_set_new(j, "momentum", json_real(TRAIN_MOMENTUM));
    json_object_set_new(j, "seed", json_integer((json_int_t)o.seed));
    json_object_set_new(j, "train_subset", json_integer(o.train_subset));
    json_object_set_new(j, "test_subset", json_integer(o.test_subset));
    json_object_set_new(j, "bucket_bytes", json_integer((json_int_t)o.bucket_bytes));
    json_t *cs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(cs, curve_json(&curves[i]));
    json_object_set_new(j, "curves", cs);
    return j;
}

tc_status tc_acc_write(const char *path, const tc_train_opts *opts, const tc_acc_curve *curves, size_t n,
                       tc_err *err)
{
    if (opts->seed > (uint64_t)INT64_MAX)
        return tc_fail(err, TC_EINVAL, "seed %llu: expected at most 2^63-1", (unsigned long long)opts->seed);
    json_t *j = tc_acc_to_json(opts, curves, n);
    if (!j)
        return tc_fail(err, TC_EINTERNAL, "out of memory writing the accuracy file");
    tc_status st = tc_json_write(j, path, err);
    json_decref(j);
    return st;
}

/* Validation: every check names the source (`what`) and the field. */
typedef struct acc_reader {
    const char *what;
    tc_err *err;
} acc_reader;

static tc_status bad(const acc_reader *rd, const char *where, const char *what)
{
    return tc_fail(rd->err, TC_EINVAL, "%s: %s: %s", rd->what, where, what);
}

static tc_status get_uint(const acc_reader *rd, json_t *obj, const char *key, json_int_t lo, json_int_t hi,
                          bool optional, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);
    char what[96];
    snprintf(what, sizeof what, "expected an integer in [%lld, %lld]", (long long)lo, (long long)hi);
    if (!v && optional)
        return TC_OK;
    if (!v)
        return bad(rd, key, "missing");
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return bad(rd, key, what);
    *out = (uint64_t)json_integer_value(v);
    return TC_OK;
}

static tc_status get_u32(const acc_reader *rd, json_t *obj, const char *key, json_int_t lo, bool optional,
                         uint32_t *out)
{
    uint64_t v = *out;
    tc_status st = get_uint(rd, obj, key, lo, UINT32_MAX, optional, &v);
    *out = (uint32_t)v;
    return st;
}

static tc_status read_header(const acc_reader *rd, json_t *j, tc_train_opts *o)
{
    tc_status st;
    uint64_t version = 0;
    /* A train-accuracy document holds the file's fields under topocc's
     * document schema_version (docs/SCHEMA.md); a plain file, its own. */
    json_int_t vmax = json_is_string(json_object_get(j, "command")) ? ACC_DOC_SCHEMA_MAX : ACC_SCHEMA_VERSION;
    if ((st = get_uint(rd, j, "schema_version", ACC_SCHEMA_VERSION, vmax, false, &version)))
        return st;
    json_t *v = json_object_get(j, "dataset");
    if (!json_is_string(v) || strcmp(json_string_value(v), ACC_DATASET) != 0)
        return bad(rd, "dataset", "expected \"" ACC_DATASET "\"");
    v = json_object_get(j, "model");
    if (!json_is_string(v) || strcmp(json_string_value(v), "mlp") != 0)
        return bad(rd, "model", "expected \"mlp\"");
    o->model = "mlp";
    o->hidden = TC_TRAIN_DEFAULT_HIDDEN;
    o->eval_every = 0;
    if ((st = get_u32(rd, j, "hidden", 1, true, &o->hidden)) || (st = get_u32(rd, j, "workers", 1, false, &o->workers)) ||
        (st = get_u32(rd, j, "batch", 1, false, &o->batch)) || (st = get_u32(rd, j, "steps", 1, false, &o->steps)) ||
        (st = get_u32(rd, j, "eval_every", 1, true, &o->eval_every)) ||
        (st = get_uint(rd, j, "seed", 0, INT64_MAX, false, &o->seed)) ||
        (st = get_u32(rd, j, "train_subset", 0, false, &o->train_subset)) ||
        (st = get_u32(rd, j, "test_subset", 0, false, &o->test_subset)) ||
        (st = get_uint(rd, j, "bucket_bytes", 1, INT64_MAX, false, &o->bucket_bytes)))
        return st;
    v = json_object_get(j, "lr");
    if (!json_is_number(v) || !(json_number_value(v) > 0.0) || !isfinite(json_number_value(v)))
        return bad(rd, "lr", "expected a positive number");
    o->lr = json_number_value(v);
    return TC_OK;
}

static tc_status read_point(const acc_reader *rd, json_t *e, const char *where, uint32_t steps, int64_t prev,
                            tc_acc_point *p)
{
    char at[160];
    if (!json_is_object(e))
        return bad(rd, where, "expected an object {step, test_acc, train_loss}");
    json_t *v = json_object_get(e, "step");
    snprintf(at, sizeof at, "%s.step", where);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > steps)
        return bad(rd, at, "expected an integer in [0, steps]");
    if (json_integer_value(v) <= prev)
        return bad(rd, at, "expected steps in increasing order");
    p->step = (uint32_t)json_integer_value(v);
    v = json_object_get(e, "test_acc");
    snprintf(at, sizeof at, "%s.test_acc", where);
    if (!json_is_number(v) || !(json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0))
        return bad(rd, at, "expected a number in [0,1]");
    p->test_acc = json_number_value(v);
    v = json_object_get(e, "train_loss");
    snprintf(at, sizeof at, "%s.train_loss", where);
    if (json_is_null(v))
        p->train_loss = NAN;
    else if (json_is_number(v) && json_number_value(v) >= 0.0 && isfinite(json_number_value(v)))
        p->train_loss = json_number_value(v);
    else
        return bad(rd, at, "expected a number >= 0 (or null after divergence)");
    return TC_OK;
}

static tc_status read_curve(const acc_reader *rd, json_t *e, size_t i, uint32_t steps, tc_acc_curve *c)
{
    char where[96];
    snprintf(where, sizeof where, "curves[%zu]", i);
    if (!json_is_object(e))
        return bad(rd, where, "expected an object {codec, points}");
    json_t *v = json_object_get(e, "codec");
    snprintf(where, sizeof where, "curves[%zu].codec", i);
    if (!json_is_string(v))
        return bad(rd, where, "expected a codec spec such as \"topk:ratio=0.01\"");
    tc_err cerr = {{0}};
    if (tc_codec_parse(json_string_value(v), &c->codec, &cerr))
        return bad(rd, where, cerr.msg);
    json_t *pts = json_object_get(e, "points");
    snprintf(where, sizeof where, "curves[%zu].points", i);
    if (!json_is_array(pts) || json_array_size(pts) == 0)
        return bad(rd, where, "expected a non-empty array of points");
    c->pts = tc_calloc(json_array_size(pts), sizeof *c->pts);
    if (!c->pts)
        return tc_fail(rd->err, TC_EINTERNAL, "out of memory reading %s", rd->what);
    int64_t prev = -1;
    for (size_t k = 0; k < json_array_size(pts); k++) {
        snprintf(where, sizeof where, "curves[%zu].points[%zu]", i, k);
        tc_status st = read_point(rd, json_array_get(pts, k), where, steps, prev, &c->pts[k]);
        if (st)
            return st;
        prev = c->pts[k].step;
        c->n++;
    }
    return TC_OK;
}

tc_status tc_acc_from_json(const json_t *root, const char *what, tc_train_opts *o, tc_acc_curve **curves,
                           size_t *n, tc_err *err)
{
    *curves = NULL;
    *n = 0;
    memset(o, 0, sizeof *o);
    if (!what)
        what = "the accuracy data";
    acc_reader rd = {what, err};
    json_t *j = (json_t *)root; /* jansson's getters take non-const; nothing is modified */
    tc_status st = json_is_object(j) ? read_header(&rd, j, o) : bad(&rd, "top level", "expected an object");
    json_t *cs = json_object_get(j, "curves");
    if (!st && (!json_is_array(cs) || json_array_size(cs) == 0))
        st = bad(&rd, "curves", "expected a non-empty array of {codec, points}");
    if (!st && !(*curves = tc_calloc(json_array_size(cs), sizeof **curves)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory reading %s", what);
    for (size_t i = 0; !st && i < json_array_size(cs); i++) {
        st = read_curve(&rd, json_array_get(cs, i), i, o->steps, &(*curves)[i]);
        *n = i + 1;
    }
    if (st) {
        tc_acc_curves_free(*curves, *n);
        free(*curves);
        *curves = NULL;
        *n = 0;
    }
    return st;
}

tc_status tc_acc_read(const char *path, tc_train_opts *o, tc_acc_curve **curves, size_t *n, tc_err *err)
{
    *curves = NULL;
    *n = 0;
    memset(o, 0, sizeof *o);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j && je.line > 0)
        return tc_fail(err, TC_EINVAL, "accuracy file '%s': line %d: %s", path, je.line, je.text);
    if (!j)
        return tc_fail(err, TC_EINVAL, "accuracy file '%s': %s", path, je.text);
    char what[4200];
    snprintf(what, sizeof what, "accuracy file '%s'", path);
    tc_status st = tc_acc_from_json(j, what, o, curves, n, err);
    json_decref(j);
    return st;
}
