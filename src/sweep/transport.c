/*
 * transport.c - the MPI transport of a sweep, loaded on demand.
 *
 * Open MPI is linked into a module of its own (libtopocc_mpi.so, from
 * src/sweep/mpi/), opened with dlopen only when this process was started
 * by an MPI launcher with more than one rank: every other run of topocc
 * neither loads nor needs MPI (and starts as fast), and a topocc built
 * where MPI is missing still runs sweeps in one process.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sweep/sweep_int.h"

#ifndef TOPOCC_MPI_MODULE_DIR
#define TOPOCC_MPI_MODULE_DIR ""
#endif
#define MODULE_NAME "libtopocc_mpi.so"

/* The rank count the launcher announced (0: not launched by MPI; -1:
 * launched, count unknown). Open MPI's mpirun, then PMI (Slurm's srun,
 * MPICH's Hydra), then PMIx. */
static long launched_size(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strtol(v, NULL, 10);
    }
    if (getenv("PMIX_RANK") || getenv("PMI_RANK"))
        return -1;
    return 0;
}

/* The module beside the executable (a build directory), else installed. */
static void *open_module(char *why, size_t len)
{
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    void *h = NULL;
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/%s", exe, MODULE_NAME);
            h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            if (!h && access(path, F_OK) == 0)
                snprintf(why, len, "%s", dlerror());
        }
    }
    static const char dir[] = TOPOCC_MPI_MODULE_DIR; /* empty: no installed module */
    if (!h && dir[0] != '\0') {
        snprintf(path, sizeof path, "%s/%s", dir, MODULE_NAME);
        h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (!h && access(path, F_OK) == 0)
            snprintf(why, len, "%s", dlerror());
    }
    return h;
}

tc_status tc_sweep_mpi_open(int *argc, char ***argv, tc_sweep_transport *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    out->size = 1;
    long size = launched_size();
    if (size == 0 || size == 1)
        return TC_OK;
    char why[512] = "";
    void *h = open_module(why, sizeof why);
    if (!h)
        return tc_fail(err, TC_EINVAL, "started by an MPI launcher with several ranks, but this topocc has no MPI "
                                       "support%s%s (build it with Open MPI: Debian libopenmpi-dev), or run one process",
                       why[0] ? ": " : "", why);
    tc_sweep_mpi_module_fn open_fn;
    void *sym = dlsym(h, TC_SWEEP_MPI_SYMBOL);
    if (!sym)
        return tc_fail(err, TC_EINTERNAL, "%s: no %s", MODULE_NAME, TC_SWEEP_MPI_SYMBOL);
    memcpy(&open_fn, &sym, sizeof open_fn);
    char msg[512] = "";
    if (open_fn(argc, argv, out, msg, sizeof msg))
        return tc_fail(err, TC_EINTERNAL, "MPI: %s", msg[0] ? msg : "cannot start");
    /* The module stays loaded: MPI cannot be finalized and unloaded. */
    return TC_OK;
}
