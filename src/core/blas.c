/*
 * blas.c - OpenBLAS and LAPACKE through dlopen on first use (core/blas.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include "core/blas.h"

static tc_blas fns;
static int loaded; /* 0: not tried, 1: loaded, -1: failed */
static char why[256];

/* dlsym returns an object pointer; a function pointer is copied from it, as
 * POSIX requires of dlsym's users. */
static bool sym(void *lib, const char *name, void *fp, size_t size)
{
    void *p = lib ? dlsym(lib, name) : NULL;
    if (!p) {
        const char *de = lib ? dlerror() : NULL;
        snprintf(why, sizeof why, "cannot find %s: %s", name, de ? de : lib ? "not found" : "library not opened");
        return false;
    }
    memcpy(fp, &p, size);
    return true;
}

#define SYM(lib, field, name) sym(lib, name, &fns.field, sizeof fns.field)

static void load_once(void)
{
    loaded = -1;
#if defined(__x86_64__)
    /* The same kernels on every x86-64 CPU that can run them. Debian's
     * OpenBLAS picks its kernels by CPU at load time unless
     * OPENBLAS_CORETYPE names a core (gotoblas_dynamic_init and
     * force_coretype in OpenMathLib/OpenBLAS driver/others/dynamic.c,
     * commit 007d9f97d7d53bfb569708ba51f8d9fdd3fba211), and its SkylakeX
     * (AVX-512) sgemm sums in another order than the Haswell (AVX2, FMA)
     * one, which AMD's Zen cores run: the same training run (train-accuracy,
     * compress) gave other accuracies on an Intel Xeon than on an AMD EPYC.
     * Haswell's wherever the CPU has AVX2 and FMA, unless the user chose. */
    __builtin_cpu_init();
    if (!getenv("OPENBLAS_CORETYPE") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        setenv("OPENBLAS_CORETYPE", "Haswell", 0);
#endif
    void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!blas) {
        const char *de = dlerror();
        snprintf(why, sizeof why, "cannot load OpenBLAS (libopenblas.so.0, Debian package libopenblas0): %s",
                 de ? de : "not found");
        return;
    }
    void *lapacke = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_GLOBAL);
    if (!lapacke) {
        const char *de = dlerror();
        snprintf(why, sizeof why, "cannot load LAPACKE (liblapacke.so.3, Debian package liblapacke): %s",
                 de ? de : "not found");
        return;
    }
    if (SYM(blas, sgemm, "cblas_sgemm") && SYM(blas, sgemv, "cblas_sgemv") && SYM(blas, sger, "cblas_sger") &&
        SYM(blas, sscal, "cblas_sscal") && SYM(blas, saxpy, "cblas_saxpy") &&
        SYM(blas, set_num_threads, "openblas_set_num_threads") &&
        SYM(blas, get_num_threads, "openblas_get_num_threads") &&
        SYM(lapacke, sgeqrf_work, "LAPACKE_sgeqrf_work") && SYM(lapacke, sorgqr_work, "LAPACKE_sorgqr_work"))
        loaded = 1;
}

/* Once per process, whichever thread comes first; the others wait for it. */
static void load(void)
{
    static once_flag once = ONCE_FLAG_INIT;
    call_once(&once, load_once);
}

tc_status tc_blas_load(tc_err *err)
{
    load();
    return loaded == 1 ? TC_OK : tc_fail(err, TC_EINTERNAL, "%s", why);
}

const tc_blas *tc_blas_fns(void)
{
    load();
    if (loaded != 1) {
        fprintf(stderr, "topocc: %s\n", why);
        exit(1);
    }
    return &fns;
}
