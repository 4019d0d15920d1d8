/*
 * core/blas.h - OpenBLAS and LAPACKE, loaded on first use.
 *
 * Only PowerSGD and the training proxy need BLAS and LAPACK, and loading
 * OpenBLAS (its thread pool included) is most of a short command's start-up
 * time. So the library does not link them: the first call through one of the
 * names below opens libopenblas.so.0 and liblapacke.so.3 (Debian's
 * libopenblas0 and liblapacke) with dlopen and resolves every function once.
 * The headers are only read for their types. tc_blas_load reports a missing
 * library as an error; a call made without it prints one line and exits 1.
 */
#ifndef TOPOCC_CORE_BLAS_H
#define TOPOCC_CORE_BLAS_H

#include <cblas.h>
#include <lapacke.h>
#include "topocc/core.h"

typedef struct tc_blas {
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(cblas_sgemv) *sgemv;
    __typeof__(cblas_sger) *sger;
    __typeof__(cblas_sscal) *sscal;
    __typeof__(cblas_saxpy) *saxpy;
    __typeof__(openblas_set_num_threads) *set_num_threads;
    __typeof__(openblas_get_num_threads) *get_num_threads;
    __typeof__(LAPACKE_sgeqrf_work) *sgeqrf_work;
    __typeof__(LAPACKE_sorgqr_work) *sorgqr_work;
} tc_blas;

/* Opens the libraries (once); TC_EINTERNAL with one line if one is missing. */
tc_status tc_blas_load(tc_err *err);
/* The functions, loading them if needed (exits 1 with one line if that fails). */
const tc_blas *tc_blas_fns(void);

#define cblas_sgemm (tc_blas_fns()->sgemm)
#define cblas_sgemv (tc_blas_fns()->sgemv)
#define cblas_sger (tc_blas_fns()->sger)
#define cblas_sscal (tc_blas_fns()->sscal)
#define cblas_saxpy (tc_blas_fns()->saxpy)
#define openblas_set_num_threads (tc_blas_fns()->set_num_threads)
#define openblas_get_num_threads (tc_blas_fns()->get_num_threads)
#define LAPACKE_sgeqrf_work (tc_blas_fns()->sgeqrf_work)
#define LAPACKE_sorgqr_work (tc_blas_fns()->sorgqr_work)

#endif
