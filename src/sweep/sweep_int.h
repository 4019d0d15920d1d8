/* sweep_int.h - what the sweep layer's files share. */
#ifndef TOPOCC_SWEEP_INT_H
#define TOPOCC_SWEEP_INT_H

#include "topocc/sweep.h"

/* The MPI transport module's entry point (src/sweep/mpi/), found by
 * tc_sweep_mpi_open with dlsym under this name. Returns 0, or non-zero
 * with why in msg. */
#define TC_SWEEP_MPI_SYMBOL "tc_sweep_mpi_module_open"
/* Point i built (tc_sweep_point) and checked as its run would check it
 * (tc_scenario_check_run), the message naming the point: the validation
 * of every point before a sweep runs. */
tc_status tc_sweep_point_validate(const tc_sweep *sw, uint64_t i, tc_err *err);

typedef int (*tc_sweep_mpi_module_fn)(int *argc, char ***argv, tc_sweep_transport *out, char *msg, size_t len);

#endif
