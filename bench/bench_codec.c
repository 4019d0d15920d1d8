/*
 * bench_codec.c - single-threaded encode + decode throughput of every codec
 * (default parameters) against single-threaded copy bandwidth.
 * usage: bench_codec [seconds per run] [bucket bytes] [codec ...]
 * Each codec is measured 3 times with tc_codec_measure (each run times
 * memcpy and the codec alternately); the medians of the 3 runs are printed
 * with the ratio and the target of docs/PERFORMANCE.md where there is one:
 * casts and int8/int4 at >= 50% of copy bandwidth, top-k at >= 25%.
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
    double e[3], c[3];
    tc_err err = {{0}};
    for (int r = 0; r < 3; r++)
        BENCH_CHECK(tc_codec_measure(s, d, secs, &e[r], &c[r], &err), err);
    double em = med3(e[0], e[1], e[2]), cm = med3(c[0], c[1], c[2]), t = target_of(s->kind);
    char tgt[32] = "-";
    if (t > 0)
        snprintf(tgt, sizeof tgt, ">= %.0f%% %s", 100 * t, em / cm >= t ? "met" : "MISSED");
    printf("%-22s %10.2f %10.2f %7.1f%%  %s\n", s->name, em / 1e9, cm / 1e9, 100 * em / cm, tgt);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    double bytes = argc > 2 ? atof(argv[2]) : 25.0 * 1048576;
    uint64_t d = (uint64_t)(bytes / 4);
    printf("bucket %.0f bytes (%llu float32), %.2f s per run, median of 3 runs\n", bytes, (unsigned long long)d,
           secs);
    printf("%-22s %10s %10s %8s  %s\n", "codec", "GB/s", "copy GB/s", "ratio", "target");
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
