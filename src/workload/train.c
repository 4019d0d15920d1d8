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
 *   - each bucket goes through its own codec instance, which knows the
 *     bucket's tensor shapes for per-tensor PowerSGD (tc_codec_aggregate:
 *     error feedback, compress, the collective's aggregation, decompress),
 *     which returns the mean that every worker applies; since all workers
 *     apply the same update, one copy of the model stands for all of them;
 *   - SGD with momentum 0.9 as torch.optim.SGD: v = 0.9 v + g, p -= lr v.
 *
 * Every random choice (initialization, permutations) derives from the seed,
 * and OpenBLAS runs on one thread, so a run is reproducible bit for bit and
 * every codec sees the same data order. Several seeds (tc_train_seeds) are
 * independent runs, spread over threads that share only the read-only data
 * sets; the statistics over them (tc_acc_stats_compute) pair run j of a
 * codec with run j of bf16.
 */
#include "core/blas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "topocc/core.h"
#include "topocc/stats.h"
#include "workload/proxy.h"

#define TRAIN_MOMENTUM 0.9 /* torch.optim.SGD momentum; no dampening, no Nesterov */
#define TRAIN_BETA1 0.9    /* torch.optim.AdamW's default betas and eps */
#define TRAIN_BETA2 0.999
#define TRAIN_EPS 1e-8
#define TRAIN_WEIGHT_DECAY 0.01 /* torch.optim.AdamW's default weight_decay */
#define TRAIN_EVAL_CHUNK 500u
#define TRAIN_PROGRESS_S 0.25 /* wall time between progress reports */

void tc_train_defaults(tc_train_opts *o)
{
    if (!o->model)
        o->model = "mlp";
    const tc_proxy_ops *ops = tc_proxy_find(o->model);
    if (!o->workers)
        o->workers = 8;
    if (!o->batch)
        o->batch = 32;
    if (!o->steps)
        o->steps = 2000;
    if (!o->eval_every)
        o->eval_every = 100;
    if (!(o->lr > 0.0))
        o->lr = ops ? ops->lr : 0.05;
    if (ops && !o->width)
        o->width = ops->width;
    if (ops && !o->layers)
        o->layers = ops->layers;
    if (ops && !o->heads)
        o->heads = ops->heads;
    if (ops && !o->context)
        o->context = ops->context;
    if (!(o->weight_decay > 0.0))
        o->weight_decay = TRAIN_WEIGHT_DECAY;
    if (!o->seed)
        o->seed = 1;
    if (!o->seeds)
        o->seeds = TC_TRAIN_DEFAULT_SEEDS;
    if (!o->bucket_bytes)
        o->bucket_bytes = 25000000;
    if (!o->hidden)
        o->hidden = TC_TRAIN_DEFAULT_HIDDEN;
}

static tc_status check_opts(const tc_train_opts *o, tc_err *err)
{
    if (!tc_proxy_find(o->model)) {
        char names[128];
        tc_train_proxy_names(names, sizeof names);
        return tc_fail(err, TC_EINVAL, "unknown proxy model '%s': accepted are %s", o->model, names);
    }
    if (o->workers > 4096)
        return tc_fail(err, TC_EINVAL, "workers %u: expected 1..4096", o->workers);
    if (o->batch > 65536)
        return tc_fail(err, TC_EINVAL, "batch %u: expected 1..65536 samples per worker", o->batch);
    if (o->hidden > 65536)
        return tc_fail(err, TC_EINVAL, "hidden %u: expected 1..65536 units", o->hidden);
    if (o->width > 1024 || o->layers > 64 || o->heads > 256 || o->context > 4096)
        return tc_fail(err, TC_EINVAL, "proxy size width %u, layers %u, heads %u, context %u: expected at most 1024, "
                       "64, 256 and 4096", o->width, o->layers, o->heads, o->context);
    if (!isfinite(o->lr) || o->lr > 100.0)
        return tc_fail(err, TC_EINVAL, "learning rate %g: expected a number in (0, 100]", o->lr);
    if (!isfinite(o->weight_decay) || o->weight_decay > 1.0)
        return tc_fail(err, TC_EINVAL, "weight decay %g: expected a number in [0, 1]", o->weight_decay);
    if (o->seed > (uint64_t)INT64_MAX)
        return tc_fail(err, TC_EINVAL, "seed %llu: expected at most 2^63-1", (unsigned long long)o->seed);
    if (o->seeds > TC_TRAIN_MAX_SEEDS)
        return tc_fail(err, TC_EINVAL, "seeds %u: expected 1..%d runs per codec", o->seeds, TC_TRAIN_MAX_SEEDS);
    if (o->seed + o->seeds - 1 > (uint64_t)INT64_MAX)
        return tc_fail(err, TC_EINVAL, "seeds %llu to %llu: the last seed must be at most 2^63-1",
                       (unsigned long long)o->seed, (unsigned long long)o->seed + o->seeds - 1);
    if (!(o->target >= 0 && o->target <= 1))
        return tc_fail(err, TC_EINVAL, "target accuracy %g: expected a fraction in (0, 1]", o->target);
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
    size_t t0, t1; /* its tensors t0 .. t1 - 1 */
    tc_codec *codec;
} bucket;

/* DDP's assignment: tensors from last to first, a bucket closed once it
 * holds bucket_bytes or more. Buckets are contiguous ranges of the flat
 * vector because consecutive tensors are adjacent in it. */
static size_t make_buckets(const tc_proxy *m, uint64_t bucket_bytes, bucket *b)
{
    size_t nb = 0, end = m->off[m->ntensors], tend = m->ntensors;
    for (size_t t = m->ntensors; t-- > 0;) {
        size_t start = m->off[t];
        if ((uint64_t)(end - start) * sizeof(float) >= bucket_bytes || t == 0) {
            b[nb] = (bucket){start, end - start, t, tend, NULL};
            nb++;
            end = start;
            tend = t;
        }
    }
    return nb;
}

/* Bucket b's codec, given its tensors' shapes as powerSGD_hook views them
 * (per-tensor PowerSGD compresses the matrices and all-reduces the rest). */
static tc_status bucket_codec(const tc_proxy *m, const tc_codec_spec *spec, uint32_t workers, bucket *b, tc_err *err)
{
    return tc_codec_create_shaped(spec, m->shape + b->t0, b->t1 - b->t0, workers, &b->codec, err);
}

/* State of one run: the model, its optimizer, the workers' gradients. */
typedef struct run {
    const tc_train_opts *o;
    const tc_proxy_ops *ops;
    const tc_proxy_data *data;
    tc_proxy m;
    float **grads;   /* workers x nparams */
    float *avg, *vel, *sq; /* vel: SGD's momentum or AdamW's first moment; sq: AdamW's second moment */
    uint32_t *perm, *idx;
    bucket b[TC_PROXY_MAX_TENSORS];
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
    free(r->sq);
    free(r->perm);
    free(r->idx);
    if (r->m.impl)
        r->ops->destroy(&r->m);
}

static double test_accuracy(run *r)
{
    uint64_t ok = 0, all = 0;
    for (uint32_t i = 0; i < r->data->n_test; i += TRAIN_EVAL_CHUNK) {
        uint32_t B = r->data->n_test - i < TRAIN_EVAL_CHUNK ? r->data->n_test - i : TRAIN_EVAL_CHUNK;
        for (uint32_t b = 0; b < B; b++)
            r->idx[b] = i + b;
        uint64_t c = 0, t = 0;
        r->ops->eval(&r->m, r->data, r->idx, B, &c, &t);
        ok += c;
        all += t;
    }
    return all ? (double)ok / (double)all : 0.0;
}

static tc_status run_init(run *r, const tc_codec_spec *spec, tc_err *err)
{
    const tc_train_opts *o = r->o;
    uint32_t maxb = o->batch > TRAIN_EVAL_CHUNK ? o->batch : TRAIN_EVAL_CHUNK;
    tc_status st = r->ops->create(o, r->data, o->seed, maxb, &r->m, err);
    if (st)
        return st;
    size_t np = r->m.nparams;
    r->grads = tc_calloc(o->workers, sizeof *r->grads);
    r->avg = tc_calloc(np, sizeof *r->avg);
    r->vel = tc_calloc(np, sizeof *r->vel);
    r->sq = r->ops->optimizer == TC_OPT_ADAMW ? tc_calloc(np, sizeof *r->sq) : NULL;
    r->perm = tc_calloc(r->data->n_train, sizeof *r->perm);
    r->idx = tc_calloc(maxb, sizeof *r->idx);
    if (!r->grads || !r->avg || !r->vel || !r->perm || !r->idx || (r->ops->optimizer == TC_OPT_ADAMW && !r->sq))
        return tc_fail(err, TC_EINTERNAL, "out of memory for %u workers' gradients", o->workers);
    for (uint32_t w = 0; w < o->workers; w++)
        if (!(r->grads[w] = malloc(np * sizeof **r->grads)))
            return tc_fail(err, TC_EINTERNAL, "out of memory for %u workers' gradients", o->workers);
    r->nb = make_buckets(&r->m, o->bucket_bytes, r->b);
    for (size_t i = 0; i < r->nb; i++)
        if ((st = bucket_codec(&r->m, spec, o->workers, &r->b[i], err)))
            return st;
    return TC_OK;
}

/* Every worker's gradient for its k-th mini-batch of the epoch; returns the
 * mean loss over the workers. */
static double worker_grads(run *r, uint32_t k)
{
    const uint32_t n = r->o->workers, B = r->o->batch;
    double loss = 0.0;
    for (uint32_t w = 0; w < n; w++) {
        for (uint32_t b = 0; b < B; b++)
            r->idx[b] = r->perm[w + (size_t)n * ((size_t)k * B + b)];
        loss += r->ops->grad(&r->m, r->data, r->idx, B, r->grads[w]);
    }
    return loss / n;
}

/* torch.optim.SGD with momentum 0.9 (no dampening, no Nesterov):
 * v = 0.9 v + g, p -= lr v. */
static void sgd_step(run *r)
{
    const float lr = (float)r->o->lr;
    for (size_t i = 0; i < r->m.nparams; i++) {
        r->vel[i] = (float)TRAIN_MOMENTUM * r->vel[i] + r->avg[i];
        r->m.p[i] -= lr * r->vel[i];
    }
}

/* torch.optim.AdamW as its documentation writes the algorithm
 * (docs.pytorch.org/docs/stable/_modules/torch/optim/adamw.html, AdamW.__doc__):
 * p -= lr wd p (decoupled decay, here only on the tensors the proxy marks);
 * m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 * p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps);
 * defaults betas (0.9, 0.999), eps 1e-8, weight_decay 1e-2. */
static void adamw_step(run *r, uint64_t t)
{
    const double lr = r->o->lr, wd = r->o->weight_decay;
    const double c1 = 1.0 - pow(TRAIN_BETA1, (double)t), c2 = 1.0 - pow(TRAIN_BETA2, (double)t);
    for (size_t k = 0; k < r->m.ntensors; k++) {
        const float decay = r->m.decay[k] ? (float)(1.0 - lr * wd) : 1.0f;
        for (size_t i = r->m.off[k]; i < r->m.off[k + 1]; i++) {
            float g = r->avg[i];
            r->m.p[i] *= decay;
            r->vel[i] = (float)TRAIN_BETA1 * r->vel[i] + (float)(1.0 - TRAIN_BETA1) * g;
            r->sq[i] = (float)TRAIN_BETA2 * r->sq[i] + (float)(1.0 - TRAIN_BETA2) * g * g;
            double mh = r->vel[i] / c1, vh = r->sq[i] / c2;
            r->m.p[i] -= (float)(lr * mh / (sqrt(vh) + TRAIN_EPS));
        }
    }
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
    if (r->ops->optimizer == TC_OPT_ADAMW)
        adamw_step(r, step + 1);
    else
        sgd_step(r);
    return TC_OK;
}

/* Progress over every run's steps: reported at most every TRAIN_PROGRESS_S
 * of wall time, so a fast run is not slowed by its reports, and once at
 * the end. The runs' threads share it under mu; the callback is called
 * under mu, so never from two threads at once. */
typedef struct progress {
    tc_progress_fn fn;
    void *ud;
    double done, total;
    double t0, last;
    mtx_t mu;
} progress;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_step(progress *p, bool final)
{
    if (!p->fn)
        return;
    mtx_lock(&p->mu);
    p->done += !final;
    double t = now_s();
    if (final || t - p->last >= TRAIN_PROGRESS_S) {
        p->last = t;
        tc_progress r = {.what = "training",
                         .fraction = p->total > 0 ? p->done / p->total : -1.0,
                         .done = p->done,
                         .total = p->total,
                         .unit = "steps",
                         .rate = t > p->t0 ? p->done / (t - p->t0) : 0.0};
        p->fn(p->ud, &r);
    }
    mtx_unlock(&p->mu);
}

static tc_status train_one(const tc_train_opts *o, const tc_proxy_data *data, const tc_codec_spec *spec,
                           progress *pg, tc_acc_curve *c, tc_err *err)
{
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.ops = tc_proxy_find(o->model);
    r.data = data;
    c->codec = *spec;
    c->seed = o->seed;
    c->n = 0;
    size_t cap = o->steps / o->eval_every + 2;
    c->pts = tc_calloc(cap, sizeof *c->pts);
    tc_status st = c->pts ? run_init(&r, spec, err) : tc_fail(err, TC_EINTERNAL, "out of memory for a curve");
    const uint32_t per_epoch = data->n_train / o->workers / o->batch;
    double loss = 0.0;
    uint32_t since = 0;
    for (uint32_t step = 1; !st && step <= o->steps; step++) {
        uint32_t k = (step - 1) % per_epoch;
        if (k == 0)
            epoch_perm(r.perm, data->n_train, o->seed, (step - 1) / per_epoch);
        double l = worker_grads(&r, k);
        if (step == 1) /* the initial model: test accuracy, loss of the first batch */
            c->pts[c->n++] = (tc_acc_point){0, test_accuracy(&r), l};
        loss += l;
        since++;
        if ((st = aggregate_and_step(&r, step - 1, err)))
            break;
        progress_step(pg, false);
        if (step % o->eval_every == 0 || step == o->steps) {
            double mean = loss / since;
            c->pts[c->n++] = (tc_acc_point){step, test_accuracy(&r), isfinite(mean) ? mean : NAN};
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

/* The data set and the checks every training shares. */
static tc_status load_data(const tc_train_opts *o, size_t ncodecs, tc_proxy_data *d, tc_err *err)
{
    tc_status st = check_opts(o, err);
    if (st)
        return st;
    if (ncodecs == 0)
        return tc_fail(err, TC_EINVAL, "no codec to train with: give at least one");
    if ((st = tc_blas_load(err)))
        return st;
    openblas_set_num_threads(1);
    const tc_proxy_ops *ops = tc_proxy_find(o->model);
    memset(d, 0, sizeof *d);
    if ((st = ops->load(o, d, err)))
        return st;
    if ((uint64_t)o->workers * o->batch > d->n_train) {
        st = tc_fail(err, TC_EINVAL, "%u workers x batch %u = %llu samples per step exceed the %u training samples",
                     o->workers, o->batch, (unsigned long long)o->workers * o->batch, d->n_train);
        ops->unload(d);
    }
    return st;
}

static tc_status progress_init(progress *pg, const tc_train_opts *o, double runs, tc_err *err)
{
    memset(pg, 0, sizeof *pg);
    pg->fn = o->progress;
    pg->ud = o->progress_ud;
    pg->total = (double)o->steps * runs;
    pg->t0 = pg->last = now_s();
    if (mtx_init(&pg->mu, mtx_plain) != thrd_success)
        return tc_fail(err, TC_EINTERNAL, "cannot create a mutex");
    return TC_OK;
}

tc_status tc_train_run(const tc_train_opts *opts, const tc_codec_spec *codecs, size_t ncodecs, tc_acc_curve *curves,
                       tc_err *err)
{
    tc_train_opts o = *opts;
    tc_train_defaults(&o);
    tc_proxy_data data;
    tc_status st = load_data(&o, ncodecs, &data, err);
    if (st)
        return st;
    const tc_proxy_ops *ops = tc_proxy_find(o.model);
    progress pg;
    if ((st = progress_init(&pg, &o, (double)ncodecs, err))) {
        ops->unload(&data);
        return st;
    }
    size_t done = 0;
    for (; !st && done < ncodecs; done++)
        st = train_one(&o, &data, &codecs[done], &pg, &curves[done], err);
    if (st)
        tc_acc_curves_free(curves, done);
    else
        progress_step(&pg, true);
    mtx_destroy(&pg.mu);
    ops->unload(&data);
    return st;
}

/* The runs of tc_train_seeds, taken from a shared counter by `threads`
 * threads. Run k is codec k / seeds on seed o.seed + k % seeds. Where runs
 * fail, the error of the lowest-numbered one is kept (the same message
 * whatever the timing), and no run starts after a failure. */
typedef struct pool {
    tc_train_opts o;
    const tc_proxy_data *data;
    const tc_codec_spec *codecs;
    size_t total;
    tc_acc_curve *curves;
    progress pg;
    mtx_t mu;
    size_t next;
    size_t failed;     /* lowest failed run (total: none) */
    tc_status st;
    tc_err err;
} pool;

static int pool_worker(void *arg)
{
    pool *P = arg;
    for (;;) {
        mtx_lock(&P->mu);
        size_t k = P->failed == P->total ? P->next++ : P->total;
        mtx_unlock(&P->mu);
        if (k >= P->total)
            return 0;
        tc_train_opts o = P->o;
        o.seed = P->o.seed + k % o.seeds;
        tc_err e = {{0}};
        tc_status st = train_one(&o, P->data, &P->codecs[k / o.seeds], &P->pg, &P->curves[k], &e);
        if (st) {
            mtx_lock(&P->mu);
            if (k < P->failed) {
                P->failed = k;
                P->st = st;
                P->err = e;
            }
            mtx_unlock(&P->mu);
        }
    }
}

static uint32_t online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (uint32_t)n;
}

tc_status tc_train_seeds(const tc_train_opts *opts, const tc_codec_spec *codecs, size_t ncodecs, uint32_t threads,
                         tc_acc_curve **curves, size_t *n, tc_err *err)
{
    *curves = NULL;
    *n = 0;
    pool *P = tc_calloc(1, sizeof *P);
    if (!P)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    P->o = *opts;
    tc_train_defaults(&P->o);
    tc_proxy_data data;
    tc_status st = load_data(&P->o, ncodecs, &data, err);
    if (st) {
        free(P);
        return st;
    }
    P->data = &data;
    P->codecs = codecs;
    P->total = ncodecs * P->o.seeds;
    P->failed = P->total;
    P->curves = tc_calloc(P->total, sizeof *P->curves);
    if (!P->curves)
        st = tc_fail(err, TC_EINTERNAL, "out of memory for %zu curves", P->total);
    else if ((st = progress_init(&P->pg, &P->o, (double)P->total, err)) == TC_OK) {
        if (mtx_init(&P->mu, mtx_plain) != thrd_success)
            st = tc_fail(err, TC_EINTERNAL, "cannot create a mutex");
        else {
            if (threads == 0)
                threads = online_cpus();
            if (threads > P->total)
                threads = (uint32_t)P->total;
            thrd_t th[256];
            uint32_t started = 0;
            /* The calling thread is one of the workers. */
            while (started + 1 < threads && started < 255 &&
                   thrd_create(&th[started], pool_worker, P) == thrd_success)
                started++;
            pool_worker(P);
            for (uint32_t i = 0; i < started; i++)
                thrd_join(th[i], NULL);
            mtx_destroy(&P->mu);
            if (P->failed < P->total) {
                st = P->st;
                *err = P->err;
            } else {
                progress_step(&P->pg, true);
            }
        }
        mtx_destroy(&P->pg.mu);
    }
    if (st == TC_OK) {
        *curves = P->curves;
        *n = P->total;
    } else if (P->curves) {
        tc_acc_curves_free(P->curves, P->total);
        free(P->curves);
    }
    tc_proxy_find(P->o.model)->unload(&data);
    free(P);
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

double tc_acc_best(const tc_acc_curve *c)
{
    double best = 0.0;
    for (size_t k = 0; k < c->n; k++)
        best = c->pts[k].test_acc > best ? c->pts[k].test_acc : best;
    return best;
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

/* ---- statistics over seeds ---- */

void tc_acc_stats_free(tc_acc_stats *s)
{
    if (!s)
        return;
    free(s->codecs);
    s->codecs = NULL;
    s->n = 0;
}

const tc_acc_codec_stats *tc_acc_stats_find(const tc_acc_stats *s, const char *codec)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->codecs[i].codec.name, codec) == 0)
            return &s->codecs[i];
    return NULL;
}

static double final_acc(const tc_acc_curve *c)
{
    return c->n ? c->pts[c->n - 1].test_acc : NAN;
}

/* Curves grouped by codec name, in order of first appearance: group k's
 * run j is curve idx[off[k] + j]. */
typedef struct groups {
    size_t n;
    size_t *first;   /* a curve of the group (its codec) */
    uint32_t *runs;
    size_t *off, *idx;
} groups;

static void groups_free(groups *g)
{
    free(g->first);
    free(g->runs);
    free(g->off);
    free(g->idx);
}

static const tc_acc_curve *run_of(const tc_acc_curve *c, const groups *g, size_t k, size_t j)
{
    return &c[g->idx[g->off[k] + j]];
}

static tc_status group_curves(const tc_acc_curve *c, size_t n, groups *g, tc_err *err)
{
    memset(g, 0, sizeof *g);
    size_t m = n ? n : 1;
    size_t *gid = tc_calloc(m, sizeof *gid);
    g->first = tc_calloc(m, sizeof *g->first);
    g->runs = tc_calloc(m, sizeof *g->runs);
    g->off = tc_calloc(m, sizeof *g->off);
    g->idx = tc_calloc(m, sizeof *g->idx);
    if (!gid || !g->first || !g->runs || !g->off || !g->idx) {
        free(gid);
        groups_free(g);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < g->n && strcmp(c[g->first[k]].codec.name, c[i].codec.name) != 0)
            k++;
        if (k == g->n)
            g->first[g->n++] = i;
        gid[i] = k;
        g->runs[k]++;
    }
    for (size_t k = 1; k < g->n; k++)
        g->off[k] = g->off[k - 1] + g->runs[k - 1];
    uint32_t *fill = (uint32_t *)tc_calloc(m, sizeof *fill);
    if (!fill) {
        free(gid);
        groups_free(g);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        g->idx[g->off[gid[i]] + fill[gid[i]]++] = i;
    free(fill);
    free(gid);
    return TC_OK;
}

/* The reference's runs: of one length (their mean final accuracy sets the
 * default target), each reaching the target after step 0. */
static tc_status check_reference(const tc_acc_curve *c, const groups *g, size_t ref, double target,
                                 const char *longer, tc_err *err)
{
    const tc_acc_curve *r0 = run_of(c, g, ref, 0);
    for (uint32_t j = 0; j < g->runs[ref]; j++) {
        const tc_acc_curve *r = run_of(c, g, ref, j);
        if (r->n == 0 || r->pts[r->n - 1].step != r0->pts[r0->n - 1].step)
            return tc_fail(err, TC_EINVAL, "the bf16 runs end at different steps (seed %llu and seed %llu): the runs "
                                           "of one training share their options",
                           (unsigned long long)r0->seed, (unsigned long long)r->seed);
        double s = tc_acc_steps_to(r, target);
        if (s < 0)
            return tc_fail(err, TC_EINVAL, "the baseline (bf16) does not reach the target accuracy %.4f on seed %llu "
                                           "(it ends at %.4f, best %.4f): give a lower --target-acc, or %s",
                           target, (unsigned long long)r->seed, final_acc(r), tc_acc_best(r), longer);
        if (!(s > 0))
            return tc_fail(err, TC_EINVAL, "the baseline (bf16) reaches the target accuracy %.4f at step 0 on seed "
                                           "%llu: give a higher --target-acc", target, (unsigned long long)r->seed);
    }
    return TC_OK;
}

/* One codec against the reference, run j with run j. */
static void codec_stats(const tc_acc_curve *c, const groups *g, size_t k, size_t ref, double target,
                        double joint_level, double *buf, tc_acc_codec_stats *x)
{
    const size_t R = g->runs[k];
    memset(x, 0, sizeof *x);
    x->codec = c[g->first[k]].codec;
    x->runs = (uint32_t)R;
    x->same_seeds = true;
    double *fin = buf, *d = buf + R;
    double steps = 0;
    for (size_t j = 0; j < R; j++) {
        const tc_acc_curve *ck = run_of(c, g, k, j), *cr = run_of(c, g, ref, j);
        fin[j] = final_acc(ck);
        double s = tc_acc_steps_to(ck, target), sr = tc_acc_steps_to(cr, target);
        if (s >= 0) {
            x->reached++;
            steps += s;
        }
        /* A run at the target from step 0 (possible only on a seed other
         * than the reference's) has no log: it counts as reaching it at its
         * first recorded step after 0, which overstates its steps. */
        d[j] = log((s > 0 ? s : ck->n > 1 ? ck->pts[1].step : 1) / sr);
        x->same_seeds &= ck->seed == cr->seed;
    }
    tc_stat_ci ci;
    tc_stat_mean_ci(fin, R, TC_ACC_LEVEL, &ci);
    x->final_mean = ci.mean;
    x->final_sd = ci.sd;
    for (size_t j = 0; j < R; j++)
        fin[j] -= final_acc(run_of(c, g, ref, j));
    tc_stat_mean_ci(fin, R, TC_ACC_LEVEL, &ci);
    x->dfinal = ci.mean;
    x->dfinal_lo = ci.lo;
    x->dfinal_hi = ci.hi;
    x->steps_mean = x->reached == R ? steps / (double)R : NAN;
    x->log_mean = x->log_sd = x->ratio = x->ratio_lo = x->ratio_hi = x->joint_lo = x->joint_hi = NAN;
    if (x->reached < R)
        return;
    if (k == ref) { /* against itself, seed by seed: exactly 1, whatever the number of runs */
        x->log_mean = x->log_sd = 0;
        x->ratio = x->ratio_lo = x->ratio_hi = x->joint_lo = x->joint_hi = 1;
        x->dfinal_lo = x->dfinal_hi = 0;
        return;
    }
    tc_stat_mean_ci(d, R, TC_ACC_LEVEL, &ci);
    x->log_mean = ci.mean;
    x->log_sd = ci.sd;
    x->ratio = exp(ci.mean);
    x->ratio_lo = exp(ci.lo);
    x->ratio_hi = exp(ci.hi);
    tc_stat_mean_ci(d, R, joint_level, &ci);
    x->joint_lo = exp(ci.lo);
    x->joint_hi = exp(ci.hi);
}

tc_status tc_acc_stats_compute(const tc_acc_curve *c, size_t n, double target, tc_acc_stats *out, tc_err *err)
{
    return tc_acc_stats_compute_hint(c, n, target, "more --steps", out, err);
}

tc_status tc_acc_stats_compute_hint(const tc_acc_curve *c, size_t n, double target, const char *longer,
                                    tc_acc_stats *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    groups g;
    tc_status st = group_curves(c, n, &g, err);
    if (st)
        return st;
    size_t ref = 0;
    while (ref < g.n && strcmp(c[g.first[ref]].codec.name, "bf16") != 0)
        ref++;
    if (ref == g.n)
        st = tc_fail(err, TC_EINVAL, "the accuracy curves have no bf16 run: bf16 is the reference of every steps "
                                     "ratio; train it too (--codec bf16)");
    for (size_t k = 0; !st && k < g.n; k++)
        if (g.runs[k] != g.runs[ref])
            st = tc_fail(err, TC_EINVAL, "codec '%s' has %u runs and bf16 %u: every codec needs one run per seed",
                         c[g.first[k]].codec.name, g.runs[k], g.runs[ref]);
    double ref_final = 0;
    for (uint32_t j = 0; !st && j < g.runs[ref]; j++)
        ref_final += final_acc(run_of(c, &g, ref, j)) / g.runs[ref];
    out->target_given = target > 0;
    if (!st && !(target > 0))
        target = TC_TARGET_FRACTION * ref_final;
    if (!st && !(target > 0 && target <= 1))
        st = tc_fail(err, TC_EINVAL, "target accuracy %g: expected a fraction in (0, 1]", target);
    if (!st)
        st = check_reference(c, &g, ref, target, longer ? longer : "more --steps", err);
    double *buf = st ? NULL : tc_calloc(2 * (size_t)g.runs[ref], sizeof *buf);
    out->codecs = st ? NULL : tc_calloc(g.n, sizeof *out->codecs);
    if (!st && (!buf || !out->codecs))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    /* Bonferroni: m intervals each at 1 - a/m hold together with
     * probability 1 - a at least, whatever their dependence (they share
     * bf16's runs) */
    uint32_t m = g.n > 1 ? (uint32_t)g.n - 1 : 0;
    double joint = m > 1 ? 1 - (1 - TC_ACC_LEVEL) / m : TC_ACC_LEVEL;
    for (size_t k = 0; !st && k < g.n; k++)
        codec_stats(c, &g, k, ref, target, joint, buf, &out->codecs[k]);
    free(buf);
    groups_free(&g);
    if (st) {
        tc_acc_stats_free(out);
        return st;
    }
    out->n = g.n;
    out->target = target;
    out->ref_final = ref_final;
    out->ref = ref;
    out->runs = out->codecs[ref].runs;
    out->level = TC_ACC_LEVEL;
    out->compared = m;
    out->joint_level = joint;
    return TC_OK;
}

/* ---- the accuracy file ---- */

/* 3: the proxy (model, family, optimizer, its sizes, shuffled_labels);
 * 2: several runs per codec ("seeds", curves[].seed) and "statistics";
 * version 1 files (one run per codec) are read as one seed, versions 1 and
 * 2 as the mlp. */
#define ACC_SCHEMA_VERSION 3
/* The highest schema_version of a train-accuracy JSON document (the file's
 * fields plus "command" and "scenario") that the reader accepts. */
#define ACC_DOC_SCHEMA_MAX 3
#define ACC_TARGET_RULE "0.99 x bf16 seed-mean final"
#define ACC_INTERVAL "t interval on the mean of the per-seed paired log steps ratios"
#define ACC_JOINT "Bonferroni over the codecs compared with bf16"

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

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
    json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
    json_object_set_new(o, "points", pts);
    return o;
}

/* The numbers of one codec's statistics, by their names in the file: the
 * writer and the reader's check share this table. An optional field may be
 * absent (files written before it was added); present, it is checked. */
typedef struct stat_field {
    const char *key;
    size_t off;
    bool optional;
} stat_field;
#define SF(k, f) {k, offsetof(tc_acc_codec_stats, f), false}
#define SF_OPT(k, f) {k, offsetof(tc_acc_codec_stats, f), true}
static const stat_field stat_fields[] = {
    SF("final_acc_mean", final_mean), SF("final_acc_sd", final_sd),      SF("final_acc_diff", dfinal),
    SF("final_acc_diff_lo", dfinal_lo), SF("final_acc_diff_hi", dfinal_hi), SF("steps_mean", steps_mean),
    SF("log_ratio_mean", log_mean),   SF("log_ratio_sd", log_sd),        SF("steps_ratio", ratio),
    SF("steps_ratio_lo", ratio_lo),   SF("steps_ratio_hi", ratio_hi),
    SF_OPT("steps_ratio_joint_lo", joint_lo), SF_OPT("steps_ratio_joint_hi", joint_hi),
};
#define NSTAT_FIELDS (sizeof stat_fields / sizeof stat_fields[0])

static double stat_value(const tc_acc_codec_stats *x, size_t f)
{
    return *(const double *)((const char *)x + stat_fields[f].off);
}

json_t *tc_acc_stats_json(const tc_acc_stats *st)
{
    json_t *j = json_object(), *cs = json_array();
    json_object_set_new(j, "reference", json_string("bf16"));
    json_object_set_new(j, "target", json_real(st->target));
    json_object_set_new(j, "target_rule", json_string(st->target_given ? "given" : ACC_TARGET_RULE));
    json_object_set_new(j, "reference_final", json_real(st->ref_final));
    json_object_set_new(j, "runs", json_integer(st->runs));
    json_object_set_new(j, "level", json_real(st->level));
    json_object_set_new(j, "interval", json_string(ACC_INTERVAL));
    json_object_set_new(j, "joint_level", json_real(st->joint_level));
    json_object_set_new(j, "joint", json_string(ACC_JOINT));
    for (size_t i = 0; i < st->n; i++) {
        const tc_acc_codec_stats *x = &st->codecs[i];
        json_t *e = json_object();
        json_object_set_new(e, "codec", json_string(x->codec.name));
        json_object_set_new(e, "runs", json_integer(x->runs));
        json_object_set_new(e, "reached", json_integer(x->reached));
        json_object_set_new(e, "same_seeds", json_boolean(x->same_seeds));
        for (size_t f = 0; f < NSTAT_FIELDS; f++)
            json_object_set_new(e, stat_fields[f].key, num_or_null(stat_value(x, f)));
        json_array_append_new(cs, e);
    }
    json_object_set_new(j, "codecs", cs);
    return j;
}

/* Runs per codec: those of the first curve's codec. */
static uint32_t runs_per_codec(const tc_acc_curve *c, size_t n)
{
    uint32_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += strcmp(c[i].codec.name, c[0].codec.name) == 0;
    return r;
}

/* The accuracy file as a value; NULL for a seed JSON cannot hold or when
 * out of memory (tc_acc_write says which). The statistics are those of
 * tc_acc_stats_compute at o->target, null where it finds none (no bf16
 * curve, a bf16 run short of the target). */
json_t *tc_acc_to_json(const tc_train_opts *opts, const tc_acc_curve *curves, size_t n)
{
    tc_train_opts o = *opts;
    tc_train_defaults(&o);
    if (o.seed > (uint64_t)INT64_MAX)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (curves[i].seed > (uint64_t)INT64_MAX)
            return NULL;
    json_t *j = json_object();
    if (!j)
        return NULL;
    json_object_set_new(j, "schema_version", json_integer(ACC_SCHEMA_VERSION));
    const tc_proxy_ops *ops = tc_proxy_find(o.model);
    json_object_set_new(j, "dataset", json_string(ops ? ops->dataset : "?"));
    json_object_set_new(j, "model", json_string(o.model));
    json_object_set_new(j, "family", json_string(ops ? ops->family : "?"));
    json_object_set_new(j, "optimizer", json_string(ops && ops->optimizer == TC_OPT_ADAMW ? "adamw" : "sgd"));
    json_object_set_new(j, "hidden", json_integer(o.hidden));
    json_object_set_new(j, "width", json_integer(o.width));
    json_object_set_new(j, "layers", json_integer(o.layers));
    json_object_set_new(j, "heads", json_integer(o.heads));
    json_object_set_new(j, "context", json_integer(o.context));
    json_object_set_new(j, "weight_decay", json_real(o.weight_decay));
    json_object_set_new(j, "shuffled_labels", json_boolean(o.shuffled_labels));
    json_object_set_new(j, "workers", json_integer(o.workers));
    json_object_set_new(j, "batch", json_integer(o.batch));
    json_object_set_new(j, "steps", json_integer(o.steps));
    json_object_set_new(j, "eval_every", json_integer(o.eval_every));
    json_object_set_new(j, "lr", json_real(o.lr));
    json_object_set_new(j, "momentum", json_real(TRAIN_MOMENTUM));
    json_object_set_new(j, "seed", json_integer((json_int_t)o.seed));
    json_object_set_new(j, "seeds", json_integer(runs_per_codec(curves, n)));
    json_object_set_new(j, "train_subset", json_integer(o.train_subset));
    json_object_set_new(j, "test_subset", json_integer(o.test_subset));
    json_object_set_new(j, "bucket_bytes", json_integer((json_int_t)o.bucket_bytes));
    json_t *cs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(cs, curve_json(&curves[i]));
    json_object_set_new(j, "curves", cs);
    tc_acc_stats st;
    tc_err e;
    if (n && tc_acc_stats_compute(curves, n, o.target, &st, &e) == TC_OK) {
        json_object_set_new(j, "statistics", tc_acc_stats_json(&st));
        tc_acc_stats_free(&st);
    } else {
        json_object_set_new(j, "statistics", json_null());
    }
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
    if ((st = get_uint(rd, j, "schema_version", 1, vmax, false, &version)))
        return st;
    json_t *v = json_object_get(j, "model");
    const tc_proxy_ops *ops = json_is_string(v) ? tc_proxy_find(json_string_value(v)) : NULL;
    if (!ops) {
        char names[128], what[160];
        tc_train_proxy_names(names, sizeof names);
        snprintf(what, sizeof what, "expected one of %s", names);
        return bad(rd, "model", what);
    }
    o->model = ops->name;
    v = json_object_get(j, "dataset");
    if (!json_is_string(v) || strcmp(json_string_value(v), ops->dataset) != 0) {
        char what[96];
        snprintf(what, sizeof what, "expected \"%s\" (the data set of %s)", ops->dataset, ops->name);
        return bad(rd, "dataset", what);
    }
    o->hidden = TC_TRAIN_DEFAULT_HIDDEN;
    o->eval_every = 0;
    v = json_object_get(j, "shuffled_labels");
    if (v && !json_is_boolean(v))
        return bad(rd, "shuffled_labels", "expected true or false");
    o->shuffled_labels = json_is_true(v);
    v = json_object_get(j, "weight_decay");
    if (v && !(json_is_number(v) && json_number_value(v) >= 0.0 && json_number_value(v) <= 1.0))
        return bad(rd, "weight_decay", "expected a number in [0, 1]");
    o->weight_decay = v ? json_number_value(v) : 0.0;
    if ((st = get_u32(rd, j, "width", 0, true, &o->width)) || (st = get_u32(rd, j, "layers", 0, true, &o->layers)) ||
        (st = get_u32(rd, j, "heads", 0, true, &o->heads)) || (st = get_u32(rd, j, "context", 0, true, &o->context)))
        return st;
    if ((st = get_u32(rd, j, "hidden", 1, true, &o->hidden)) || (st = get_u32(rd, j, "workers", 1, false, &o->workers)) ||
        (st = get_u32(rd, j, "batch", 1, false, &o->batch)) || (st = get_u32(rd, j, "steps", 1, false, &o->steps)) ||
        (st = get_u32(rd, j, "eval_every", 1, true, &o->eval_every)) ||
        (st = get_uint(rd, j, "seed", 0, INT64_MAX, false, &o->seed)) ||
        (st = get_u32(rd, j, "train_subset", 0, false, &o->train_subset)) ||
        (st = get_u32(rd, j, "test_subset", 0, false, &o->test_subset)) ||
        (st = get_uint(rd, j, "bucket_bytes", 1, INT64_MAX, false, &o->bucket_bytes)))
        return st;
    /* Before "seeds" (version 1), one run per codec on "seed". */
    o->seeds = 1;
    if ((st = get_uint(rd, j, "seeds", 1, TC_TRAIN_MAX_SEEDS, true, &version)))
        return st;
    if (json_object_get(j, "seeds"))
        o->seeds = (uint32_t)version;
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

static tc_status read_curve(const acc_reader *rd, json_t *e, size_t i, const tc_train_opts *o, bool with_seeds,
                            tc_acc_curve *c)
{
    const uint32_t steps = o->steps;
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
    /* A file with "seeds" names each run's seed; before, every run had the
     * file's. */
    c->seed = o->seed;
    snprintf(where, sizeof where, "curves[%zu].seed", i);
    v = json_object_get(e, "seed");
    if (with_seeds && !v)
        return bad(rd, where, "missing (a file with \"seeds\" names each run's seed)");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
        return bad(rd, where, "expected an integer in [0, 2^63-1]");
    if (v)
        c->seed = (uint64_t)json_integer_value(v);
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

/* Every codec has one run per seed, and no seed twice. */
static tc_status check_runs(const acc_reader *rd, const tc_acc_curve *c, size_t n, uint32_t seeds)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t runs = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(c[k].codec.name, c[i].codec.name) != 0)
                continue;
            runs++;
            if (k > i && c[k].seed == c[i].seed) {
                char where[96], what[160];
                snprintf(where, sizeof where, "curves[%zu].seed", k);
                snprintf(what, sizeof what, "codec '%s' has seed %llu twice (curves[%zu] too)", c[i].codec.name,
                         (unsigned long long)c[i].seed, i);
                return bad(rd, where, what);
            }
        }
        if (runs != seeds) {
            char what[200];
            snprintf(what, sizeof what, "codec '%s' has %u run%s, the file declares %u seed%s (one run per seed)",
                     c[i].codec.name, runs, runs == 1 ? "" : "s", seeds, seeds == 1 ? "" : "s");
            return bad(rd, "curves", what);
        }
    }
    return TC_OK;
}

/* Two recorded numbers agree: both not finite (null), or within rounding. */
static bool same_number(double a, double b)
{
    if (!isfinite(a) || !isfinite(b))
        return !isfinite(a) && !isfinite(b);
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static tc_status check_codec_stats(const acc_reader *rd, json_t *e, size_t i, const tc_acc_codec_stats *x)
{
    char where[128], what[256];
    snprintf(where, sizeof where, "statistics.codecs[%zu]", i);
    if (!json_is_object(e))
        return bad(rd, where, "expected an object {codec, runs, reached, ...}");
    json_t *v = json_object_get(e, "codec");
    snprintf(where, sizeof where, "statistics.codecs[%zu].codec", i);
    if (!json_is_string(v) || strcmp(json_string_value(v), x->codec.name) != 0) {
        snprintf(what, sizeof what, "expected \"%s\" (the curves' codecs in order)", x->codec.name);
        return bad(rd, where, what);
    }
    const char *ints[2] = {"runs", "reached"};
    const uint32_t iv[2] = {x->runs, x->reached};
    for (int k = 0; k < 2; k++) {
        v = json_object_get(e, ints[k]);
        snprintf(where, sizeof where, "statistics.codecs[%zu].%s", i, ints[k]);
        if (!json_is_integer(v) || json_integer_value(v) != iv[k]) {
            snprintf(what, sizeof what, "expected %u, what the curves give", iv[k]);
            return bad(rd, where, what);
        }
    }
    for (size_t f = 0; f < NSTAT_FIELDS; f++) {
        v = json_object_get(e, stat_fields[f].key);
        if (!v && stat_fields[f].optional)
            continue;
        snprintf(where, sizeof where, "statistics.codecs[%zu].%s", i, stat_fields[f].key);
        double want = stat_value(x, f);
        if (!(json_is_number(v) || json_is_null(v)))
            return bad(rd, where, "expected a number or null");
        double got = json_is_null(v) ? NAN : json_number_value(v);
        if (!same_number(got, want)) {
            snprintf(what, sizeof what, "%.10g does not follow from the curves (they give %.10g)", got, want);
            return bad(rd, where, what);
        }
    }
    return TC_OK;
}

/* Recorded statistics (optional; null where there were none) must be what
 * the curves give at the recorded target: a file edited by hand, or
 * written by a different rule, is refused rather than half believed. */
static tc_status check_statistics(const acc_reader *rd, json_t *js, const tc_acc_curve *c, size_t n,
                                  tc_train_opts *o)
{
    o->target = 0;
    if (!js || json_is_null(js))
        return TC_OK;
    if (!json_is_object(js))
        return bad(rd, "statistics", "expected an object or null");
    json_t *rule = json_object_get(js, "target_rule"), *t = json_object_get(js, "target");
    if (!json_is_string(rule))
        return bad(rd, "statistics.target_rule", "expected \"given\" or \"" ACC_TARGET_RULE "\"");
    bool given = strcmp(json_string_value(rule), "given") == 0;
    if (!given && strcmp(json_string_value(rule), ACC_TARGET_RULE) != 0)
        return bad(rd, "statistics.target_rule", "expected \"given\" or \"" ACC_TARGET_RULE "\"");
    if (!json_is_number(t) || !(json_number_value(t) > 0 && json_number_value(t) <= 1))
        return bad(rd, "statistics.target", "expected a number in (0, 1]");
    tc_acc_stats st;
    tc_err e = {{0}};
    if (tc_acc_stats_compute(c, n, given ? json_number_value(t) : 0, &st, &e))
        return bad(rd, "statistics", e.msg);
    tc_status r = TC_OK;
    char what[160];
    json_t *cs = json_object_get(js, "codecs");
    if (!same_number(json_number_value(t), st.target)) {
        snprintf(what, sizeof what, "%.10g does not follow from the curves (the rule gives %.10g)",
                 json_number_value(t), st.target);
        r = bad(rd, "statistics.target", what);
    } else if (!json_is_array(cs) || json_array_size(cs) != st.n) {
        snprintf(what, sizeof what, "expected an array of %zu entries, one per codec of the curves", st.n);
        r = bad(rd, "statistics.codecs", what);
    }
    json_t *jl = json_object_get(js, "joint_level"); /* optional: files written before it */
    if (!r && jl && !(json_is_number(jl) && same_number(json_number_value(jl), st.joint_level))) {
        snprintf(what, sizeof what, "expected %.10g, 1 - 0.05 / (the codecs compared with bf16)", st.joint_level);
        r = bad(rd, "statistics.joint_level", what);
    }
    for (size_t i = 0; !r && i < st.n; i++)
        r = check_codec_stats(rd, json_array_get(cs, i), i, &st.codecs[i]);
    if (!r && given)
        o->target = st.target;
    tc_acc_stats_free(&st);
    return r;
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
        st = read_curve(&rd, json_array_get(cs, i), i, o, json_object_get(j, "seeds") != NULL, &(*curves)[i]);
        *n = i + 1;
    }
    if (!st)
        st = check_runs(&rd, *curves, *n, o->seeds);
    if (!st)
        st = check_statistics(&rd, json_object_get(j, "statistics"), *curves, *n, o);
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
