/*
 * bench_codec.c - single-threaded encode + decode throughput of every codec
 * (default parameters) against single-threaded copy bandwidth, and the cost
 * model's prediction from the calibration kernels of the same run.
 * usage: bench_codec [seconds per run] [bucket bytes] [codec ...]
 * Each codec is measured 3 times with tc_codec_measure_full (each run times
 * memcpy, the codec and the calibration kernels alternately); the
 * medians of the 3 runs are printed: the codec's GB/s with the min and max
 * of its repetitions (of the median run), the copy GB/s, their ratio, the
 * calibration kernels' rates (floating-point and integer lane operations
 * per second, the product kernel's for PowerSGD, the in-place pass's GB/s),
 * the model's GB/s and
 * measured / predicted (and, for comparison, measured / the prediction with
 * memory and arithmetic overlapped, max instead of sum), with the targets of docs/PERFORMANCE.md where there
 * is one: casts and int8/int4 at >= 50% of copy bandwidth, top-k at >= 25%;
 * the model within 30% of the measurement.
 */
#include <string.h>
#include "bench_common.h"
#include "topocc/compress.h"

static double med3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

static double target_of(tc_codec_kind k)
{
    switch (k) {
    case TC_CODEC_FP16:
    case TC_CODEC_BF16:
    case TC_CODEC_INT8:
    case TC_CODEC_INT4: return 0.5;
    case TC_CODEC_TOPK: return 0.25;
    default: return 0;
    }
}

static void run(const tc_codec_spec *s, uint64_t d, double secs)
{
    tc_codec_measurement m[3];
    tc_err err = {{0}};
    for (int r = 0; r < 3; r++)
        BENCH_CHECK(tc_codec_measure_full(s, d, secs, &m[r], &err), err);
    double e[3], c[3], o[3], io[3], ip[3], p[3];
    for (int r = 0; r < 3; r++) {
        e[r] = m[r].enc_dec_Bps.median;
        c[r] = m[r].copy_Bps.median;
        o[r] = m[r].lane_ops.median;
        io[r] = m[r].int_ops.median;
        ip[r] = m[r].inplace_Bps.median;
        p[r] = m[r].predicted_Bps;
    }
    double em = med3(e[0], e[1], e[2]), cm = med3(c[0], c[1], c[2]), om = med3(o[0], o[1], o[2]);
    double im = med3(io[0], io[1], io[2]), ipm = med3(ip[0], ip[1], ip[2]);
    double pm = med3(p[0], p[1], p[2]), t = target_of(s->kind);
    const tc_codec_measurement *mid = &m[e[0] == em ? 0 : e[1] == em ? 1 : 2];
    char tgt[32] = "-";
    if (t > 0)
        snprintf(tgt, sizeof tgt, ">= %.0f%% %s", 100 * t, em / cm >= t ? "met" : "MISSED");
    double q = em / pm;
    /* the alternative the model rejects: memory and arithmetic overlapped
     * (the median run's terms) */
    double tmem, tops;
    tc_codec_predict_parts(&mid->work, d, &mid->rates, &tmem, &tops);
    double qmax = em / (4 * (double)d / (tmem > tops ? tmem : tops));
    char gemm[16] = "-";
    if (mid->gemm_ops.median > 0)
        snprintf(gemm, sizeof gemm, "%.0f", mid->gemm_ops.median / 1e9);
    printf("%-22s %7.2f %7.2f-%-7.2f %8.2f %7.1f%% %6.0f %6.0f %6s %7.2f %8.2f %6.2f %-7s %6.2f  %s\n", s->name,
           em / 1e9, mid->enc_dec_Bps.min / 1e9, mid->enc_dec_Bps.max / 1e9, cm / 1e9, 100 * em / cm, om / 1e9,
           im / 1e9, gemm, ipm / 1e9, pm / 1e9, q, q >= 1 / 1.3 && q <= 1.3 ? "(<=30%)" : "(>30%)", qmax, tgt);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    double bytes = argc > 2 ? atof(argv[2]) : 25.0 * 1048576;
    uint64_t d = (uint64_t)(bytes / 4);
    printf("bucket %.0f bytes (%llu float32), %.2f s per run, median of 3 runs, %.0f-lane kernels\n", bytes,
           (unsigned long long)d, secs, tc_codec_cpu_lanes());
    printf("%-22s %7s %15s %8s %8s %6s %6s %6s %7s %8s %6s %-7s %6s  %s\n", "codec", "GB/s", "(min-max)", "copy",
           "ratio", "fp G/s", "int G/s", "gemm", "inpl GB/s", "model", "meas/model", "", "if max", "target");
    tc_err err = {{0}};
    if (argc > 3) {
        for (int i = 3; i < argc; i++) {
            tc_codec_spec s;
            BENCH_CHECK(tc_codec_parse(argv[i], &s, &err), err);
            run(&s, d, secs);
        }
        return 0;
    }
    for (int k = 0; k < TC_CODEC_COUNT; k++) {
        tc_codec_spec s;
        tc_codec_defaults((tc_codec_kind)k, &s);
        run(&s, d, secs);
    }
    return 0;
}
