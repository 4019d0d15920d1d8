/*
 * blas.c - OpenBLAS and LAPACKE through dlopen on first use (core/blas.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        snprintf(why, sizeof why, "cannot find %s: %s", name, lib ? dlerror() : "library not opened");
        return false;
    }
    memcpy(fp, &p, size);
    return true;
}

#define SYM(lib, field, name) sym(lib, name, &fns.field, sizeof fns.field)

static void load(void)
{
    if (loaded)
        return;
    loaded = -1;
    void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!blas) {
        snprintf(why, sizeof why, "cannot load OpenBLAS (libopenblas.so.0, Debian package libopenblas0): %s",
                 dlerror());
        return;
    }
    void *lapacke = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_GLOBAL);
    if (!lapacke) {
        snprintf(why, sizeof why, "cannot load LAPACKE (liblapacke.so.3, Debian package liblapacke): %s", dlerror());
        return;
    }
    if (SYM(blas, sgemm, "cblas_sgemm") && SYM(blas, sgemv, "cblas_sgemv") && SYM(blas, sger, "cblas_sger") &&
        SYM(blas, sscal, "cblas_sscal") && SYM(blas, saxpy, "cblas_saxpy") &&
        SYM(blas, set_num_threads, "openblas_set_num_threads") &&
        SYM(blas, get_num_threads, "openblas_get_num_threads") &&
        SYM(lapacke, sgeqrf_work, "LAPACKE_sgeqrf_work") && SYM(lapacke, sorgqr_work, "LAPACKE_sorgqr_work"))
        loaded = 1;
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
