/* bench_common.h - timing and memory helpers shared by the benchmarks. */
#ifndef TOPOCC_BENCH_COMMON_H
#define TOPOCC_BENCH_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak resident memory of this process so far, in MiB. */
static inline double bench_peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

#define BENCH_CHECK(st, err)                                              \
    do {                                                                  \
        if ((st) != TC_OK) {                                              \
            fprintf(stderr, "bench: %s\n", (err).msg);                    \
            exit(1);                                                      \
        }                                                                 \
    } while (0)
#endif
