/*
 * measure.c - single-threaded encode + decode throughput of a codec on this
 * machine, with the calibration kernels of the cost model measured in the
 * same run: memcpy bandwidth, floating-point and integer arithmetic, random
 * loads, an in-place pass and (PowerSGD) OpenBLAS's products.
 *
 * Method: one codec instance for one worker (n = 1) is created once; then,
 * alternately, a memcpy of the 4 d-byte gradient into the bucket buffer, one
 * encode + local sum of the single contribution + decode (cx_ops.one) of
 * that bucket, the floating-point calibration kernel, the random-access
 * kernel, the integer kernel, a second copy (not timed) and the in-place
 * kernel, and the product kernel (PowerSGD) are timed in the
 * thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID): what other
 * processes take of a shared machine is not counted) until `seconds` of
 * wall time have passed (at least 5 of each). The decode writes the mean back into the bucket, in place, as DDP's
 * hooks write the result into the bucket buffer; the copy gives every
 * repetition a fresh gradient. Alternating keeps them all under the same
 * conditions (frequency, cache state, other load); min, median and max of
 * each are reported, and the model's prediction (tc_codec_predict_s) uses
 * the medians. The gradient is a deterministic, roughly normal vector (sum
 * of four uniforms). OpenBLAS (PowerSGD) is held to one thread during the run.
 *
 * The calibration kernel: CAL_STEPS dependent multiply-adds v = v a + b on
 * each element of an L1-resident array of CAL_N floats, CAL_ROUNDS times; the
 * elements are independent, so the vectorised loop keeps the floating-point
 * pipes busy. It is compiled like the codec kernels (CX_WIDE, CX_LOOP, ISO
 * C17: a multiply and an add, not contracted), so it runs on the same vector
 * width: lane operations per second, two per step.
 *
 * The integer calibration kernel: the same array as 32-bit integers, INT_STEPS
 * integer and logic operations per element and round (shifts, xors and adds,
 * as the codecs' random numbers, roundings and bit packing are made of),
 * vectorised the same way: integer lane operations per second.
 *
 * The random-access kernel: RND_N independent loads at uniformly random
 * places of the bucket, each stored into an L2-resident array (a gather,
 * as the sparse codecs' v[j] = x[idx[j]]): loads per second, with as many
 * misses in flight as the core keeps. The places are drawn once
 * (tc_mix64), the same for every repetition.
 *
 * The in-place kernel: a fresh copy of the gradient into the bucket (not
 * timed), then one pass that reads every coordinate and writes it back
 * negated (one xor, included in its time): as the codecs' in-place passes
 * find the bucket right after the copy that filled it. Bytes of the bucket
 * per second.
 *
 * The product kernel (PowerSGD only): the three OpenBLAS calls of
 * powersgd.c at the codec's rank (P = M^T Q, Q' = M P, M' = Q' P^T) on an
 * L2-resident GEMM_N x GEMM_N matrix (brought back into the cache by one
 * untimed call, then GEMM_ROUNDS timed): the products' lane operations per
 * second, counted as work.c counts them per coordinate of the matrix.
 */
#include "core/blas.h"
#include <stdlib.h>
#include <time.h>
#include "compress/codec_int.h"

/* The calling thread's CPU time: on a shared machine, time spent descheduled
 * while other processes run is not the codec's. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* The spread of work / t over n timings t (sorted in place). */
static tc_codec_spread spread_of(double work, double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    double lo = t[0] > 1e-9 ? t[0] : 1e-9, hi = t[n - 1] > 1e-9 ? t[n - 1] : 1e-9;
    return (tc_codec_spread){work / hi, work / (med > 1e-9 ? med : 1e-9), work / lo};
}

void tc_cx_fill_gradient(float *x, uint64_t d, uint64_t seed)
{
    for (uint64_t i = 0; i < d; i++) {
        uint64_t h = tc_mix64(seed + i);
        double s = (double)(h & 0xffff) + (double)(h >> 16 & 0xffff) + (double)(h >> 32 & 0xffff) +
                   (double)(h >> 48);
        /* sum of 4 U[0, 65536): mean 131070, sd 37837 -> about N(0, 1) */
        x[i] = (float)((s - 131070.0) / 37837.0);
    }
}

#define CAL_N 2048 /* 8 KiB: in L1 */
#define CAL_STEPS 8
#define CAL_ROUNDS 256

CX_WIDE static void cal_kernel(float *restrict y, float a, float b)
{
    for (int r = 0; r < CAL_ROUNDS; r++)
        CX_LOOP(i, CAL_N, float v = y[i]; v = v * a + b; v = v * a + b; v = v * a + b; v = v * a + b;
                v = v * a + b; v = v * a + b; v = v * a + b; v = v * a + b; y[i] = v);
}

#define INT_ROUNDS 256
#define INT_STEPS 24

CX_WIDE static void int_kernel(uint32_t *restrict y, uint32_t k)
{
    /* shift, xor, add: an add after each xor keeps a compiler from fusing
     * two logic operations into one (AVX-512's three-input vpternlogd) */
    for (int r = 0; r < INT_ROUNDS; r++)
        CX_LOOP(i, CAL_N, uint32_t v = y[i]; v = (v ^ (v << 13)) + k; v = (v ^ (v >> 17)) + k;
                v = (v ^ (v << 5)) + k; v = (v ^ (v >> 9)) + k; v = (v ^ (v << 7)) + k; v = (v ^ (v >> 3)) + k;
                v = (v ^ (v << 11)) + k; v = (v ^ (v >> 2)) + k; y[i] = v);
}

CX_WIDE static void inplace_kernel(float *restrict x, uint64_t d)
{
    CX_LOOP(i, d, x[i] = -x[i]);
}

#define GEMM_N 256 /* 256 KiB of float32: in L2 */
#define GEMM_ROUNDS 4

/* powersgd.c's three products at rank r on the GEMM_N x GEMM_N matrix M:
 * Q (GEMM_N x r) kept, P, Q2 (GEMM_N x r) and O written. */
static void gemm_kernel(const float *M, const float *Q, float *P, float *Q2, float *O, int r)
{
    cx_ptensor t = {.rows = GEMM_N, .cols = GEMM_N, .numel = (uint64_t)GEMM_N * GEMM_N, .full = GEMM_N,
                    .rank = (uint32_t)r};
    tc_cx_psgd_products(&t, M, Q, P, Q2, O);
}

#define RND_N 65536 /* 256 KiB of values gathered */

static void rnd_kernel(const float *restrict x, const uint32_t *restrict idx, float *restrict v)
{
    for (uint32_t j = 0; j < RND_N; j++)
        v[j] = x[idx[j]];
}

#define MAX_REPS 100000
#define MIN_REPS 5

tc_status tc_codec_measure_full(const tc_codec_spec *spec, uint64_t d, double seconds, tc_codec_measurement *out,
                                tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (!(seconds > 0) || seconds > 3600)
        return tc_fail(err, TC_EINVAL, "measure: %g seconds: accepted are above 0 and at most 3600", seconds);
    tc_codec *c = NULL;
    tc_status st = tc_codec_create(spec, d, 1, &c, err);
    if (st)
        return st;
    bool blas = spec->kind == TC_CODEC_POWERSGD || spec->kind == TC_CODEC_POWERSGD_BATCHED;
    int gr = (int)(spec->rank < 1 ? 1 : spec->rank > GEMM_N ? GEMM_N : spec->rank);
    size_t gn = blas ? (size_t)GEMM_N * GEMM_N : 1, gq = blas ? (size_t)GEMM_N * (size_t)gr : 1;
    float *x = malloc(d * sizeof *x), *bucket = malloc(d * sizeof *bucket), *cal = malloc(CAL_N * sizeof *cal);
    uint32_t *ical = malloc(CAL_N * sizeof *ical);
    float *rv = malloc(RND_N * sizeof *rv);
    uint32_t *ridx = malloc(RND_N * sizeof *ridx);
    float *gm = malloc(gn * sizeof *gm), *go = malloc(gn * sizeof *go), *gq0 = malloc(gq * sizeof *gq0),
          *gp = malloc(gq * sizeof *gp), *gq2 = malloc(gq * sizeof *gq2);
    double *tc = malloc(MAX_REPS * sizeof *tc), *tm = malloc(MAX_REPS * sizeof *tm),
           *ta = malloc(MAX_REPS * sizeof *ta), *tr = malloc(MAX_REPS * sizeof *tr),
           *ti = malloc(MAX_REPS * sizeof *ti), *tp = malloc(MAX_REPS * sizeof *tp),
           *tg = malloc(MAX_REPS * sizeof *tg);
    if (!x || !bucket || !cal || !ical || !rv || !ridx || !gm || !go || !gq0 || !gp || !gq2 || !tc || !tm || !ta ||
        !tr || !ti || !tp || !tg) {
        st = tc_fail(err, TC_EINTERNAL, "measure: out of memory for a %llu-coordinate bucket", (unsigned long long)d);
        goto done;
    }
    tc_cx_fill_gradient(x, d, 12345);
    for (int i = 0; i < CAL_N; i++) {
        cal[i] = 1.0f / (float)(i + 1);
        ical[i] = (uint32_t)tc_mix64((uint64_t)i);
    }
    for (uint32_t j = 0; j < RND_N; j++)
        ridx[j] = (uint32_t)((tc_mix64(0x5eed + j) >> 32) * d >> 32);
    for (size_t i = 0; blas && i < gn; i++)
        gm[i] = (float)(int)(i % 97) * 0.01f - 0.48f;
    for (size_t i = 0; blas && i < gq; i++)
        gq0[i] = (float)(int)(i % 13) * 0.1f - 0.6f;
    int threads = blas ? openblas_get_num_threads() : 1;
    if (blas)
        openblas_set_num_threads(1);
    memcpy(bucket, x, d * sizeof *x);
    c->ops->one(c, bucket, bucket, 0); /* warm-up: page faults, first touch */
    cal_kernel(cal, 0.999f, 0.001f);
    int_kernel(ical, 0x9e3779b9u);
    rnd_kernel(bucket, ridx, rv);
    if (blas)
        gemm_kernel(gm, gq0, gp, gq2, go, gr);
    size_t reps = 0;
    double start = now();
    while (reps < MAX_REPS && (reps < MIN_REPS || now() - start < seconds)) {
        double t0 = cpu_now();
        memcpy(bucket, x, d * sizeof *x);
        double t1 = cpu_now();
        c->ops->one(c, bucket, bucket, reps + 1);
        double t2 = cpu_now();
        cal_kernel(cal, 0.999f, 0.001f);
        double t3 = cpu_now();
        rnd_kernel(bucket, ridx, rv);
        double t4 = cpu_now();
        int_kernel(ical, 0x9e3779b9u);
        double t5 = cpu_now();
        memcpy(bucket, x, d * sizeof *x);
        double t6 = cpu_now();
        inplace_kernel(bucket, d);
        double t7 = cpu_now();
        if (blas)
            gemm_kernel(gm, gq0, gp, gq2, go, gr); /* back into L2 after the passes over the bucket */
        double t8 = cpu_now();
        for (int g = 0; blas && g < GEMM_ROUNDS; g++)
            gemm_kernel(gm, gq0, gp, gq2, go, gr);
        double t9 = cpu_now();
        tm[reps] = t1 - t0;
        tc[reps] = t2 - t1;
        ta[reps] = t3 - t2;
        tr[reps] = t4 - t3;
        ti[reps] = t5 - t4;
        tp[reps] = t7 - t6;
        tg[reps] = t9 - t8;
        reps++;
    }
    if (blas)
        openblas_set_num_threads(threads);
    volatile float sink = bucket[d / 2] + cal[CAL_N / 2] + rv[RND_N / 2] + (float)ical[CAL_N / 2] +
                          (blas ? go[gn / 2] : 0.0f); /* the results are used */
    (void)sink;
    double bytes = 4.0 * (double)d;
    out->reps = reps;
    out->enc_dec_Bps = spread_of(bytes, tc, reps);
    out->copy_Bps = spread_of(bytes, tm, reps);
    out->lane_ops = spread_of(2.0 * CAL_N * CAL_STEPS * CAL_ROUNDS, ta, reps);
    out->random_ps = spread_of(RND_N, tr, reps);
    out->int_ops = spread_of((double)INT_STEPS * CAL_N * INT_ROUNDS, ti, reps);
    out->inplace_Bps = spread_of(bytes, tp, reps);
    if (blas) {
        tc_codec_work gw = {0};
        tc_codec_spec gs = *spec;
        gs.rank = (uint32_t)gr;
        tc_codec_work_measured(&gs, (uint64_t)gn, &gw);
        out->gemm_ops = spread_of(GEMM_ROUNDS * gw.gemm * (double)gn, tg, reps);
    }
    out->rates = (tc_codec_rates){out->copy_Bps.median, out->lane_ops.median, tc_codec_cpu_lanes(),
                                  out->random_ps.median, out->int_ops.median, out->inplace_Bps.median,
                                  out->gemm_ops.median};
    tc_codec_work_measured(spec, d, &out->work);
    double t = tc_codec_predict_s(&out->work, d, &out->rates);
    out->predicted_Bps = t > 0 ? bytes / t : 0;
done:
    free(x);
    free(bucket);
    free(cal);
    free(rv);
    free(ridx);
    free(ical);
    free(gm);
    free(go);
    free(gq0);
    free(gp);
    free(gq2);
    free(ti);
    free(tp);
    free(tg);
    free(tr);
    free(tc);
    free(tm);
    free(ta);
    tc_codec_free(c);
    return st;
}

tc_status tc_codec_measure(const tc_codec_spec *c, uint64_t d, double seconds, double *enc_dec_Bps, double *copy_Bps,
                           tc_err *err)
{
    tc_codec_measurement m;
    tc_status st = tc_codec_measure_full(c, d, seconds, &m, err);
    if (st == TC_OK) {
        *enc_dec_Bps = m.enc_dec_Bps.median;
        *copy_Bps = m.copy_Bps.median;
    }
    return st;
}
