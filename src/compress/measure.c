/*
 * measure.c - single-threaded encode + decode throughput of a codec on this
 * machine, next to memcpy bandwidth measured in the same run.
 *
 * Method: one codec instance for one worker (n = 1) is created once; then,
 * alternately, a memcpy of the 4 d-byte gradient into the bucket buffer and
 * one encode + local sum of the single contribution + decode (cx_ops.one) of
 * that bucket are timed with clock_gettime(CLOCK_MONOTONIC) until `seconds`
 * have passed (at least 3 of each). The decode writes the mean back into the
 * bucket, in place, as DDP's hooks write the result into the bucket buffer;
 * the copy gives every repetition a fresh gradient. The medians give bytes
 * of float32 input per second and bytes copied per second; alternating keeps
 * both under the same conditions (frequency, cache state, other load). The
 * gradient is a deterministic, roughly normal vector (sum of four uniforms).
 * OpenBLAS (PowerSGD) is held to one thread during the run.
 */
#include "core/blas.h"
#include <stdlib.h>
#include <time.h>
#include "compress/codec_int.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void cx_fill_gradient(float *x, uint64_t d, uint64_t seed)
{
    for (uint64_t i = 0; i < d; i++) {
        uint64_t h = tc_mix64(seed + i);
        double s = (double)(h & 0xffff) + (double)(h >> 16 & 0xffff) + (double)(h >> 32 & 0xffff) +
                   (double)(h >> 48);
        /* sum of 4 U[0, 65536): mean 131070, sd 37837 -> about N(0, 1) */
        x[i] = (float)((s - 131070.0) / 37837.0);
    }
}

#define MAX_REPS 100000

tc_status tc_codec_measure(const tc_codec_spec *spec, uint64_t d, double seconds, double *enc_dec_Bps,
                           double *copy_Bps, tc_err *err)
{
    if (!(seconds > 0) || seconds > 3600)
        return tc_fail(err, TC_EINVAL, "measure: %g seconds: accepted are above 0 and at most 3600", seconds);
    tc_codec *c = NULL;
    tc_status st = tc_codec_create(spec, d, 1, &c, err);
    if (st)
        return st;
    float *x = malloc(d * sizeof *x), *bucket = malloc(d * sizeof *bucket);
    double *tc = malloc(MAX_REPS * sizeof *tc), *tm = malloc(MAX_REPS * sizeof *tm);
    if (!x || !bucket || !tc || !tm) {
        st = tc_fail(err, TC_EINTERNAL, "measure: out of memory for a %llu-coordinate bucket", (unsigned long long)d);
        goto done;
    }
    cx_fill_gradient(x, d, 12345);
    int threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    memcpy(bucket, x, d * sizeof *x);
    c->ops->one(c, bucket, bucket, 0); /* warm-up: page faults, first touch */
    size_t reps = 0;
    double start = now();
    while (reps < MAX_REPS && (reps < 3 || now() - start < seconds)) {
        double t0 = now();
        memcpy(bucket, x, d * sizeof *x);
        double t1 = now();
        c->ops->one(c, bucket, bucket, reps + 1);
        double t2 = now();
        tm[reps] = t1 - t0;
        tc[reps] = t2 - t1;
        reps++;
    }
    openblas_set_num_threads(threads);
    volatile float sink = bucket[d / 2]; /* the results are used */
    (void)sink;
    double bytes = 4.0 * (double)d;
    double mc = median(tc, reps), mm = median(tm, reps);
    *enc_dec_Bps = bytes / (mc > 1e-9 ? mc : 1e-9);
    *copy_Bps = bytes / (mm > 1e-9 ? mm : 1e-9);
done:
    free(x);
    free(bucket);
    free(tc);
    free(tm);
    tc_codec_free(c);
    return st;
}
