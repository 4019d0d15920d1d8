/* simgrid_coll.c - one MPI collective, timed, for bench/simgrid_compare.sh.
 *
 * Usage: simgrid_coll OP BYTES
 *   OP     allreduce | allgather | alltoall | bcast | reducescatter
 *   BYTES  topocc's convention (topocc collective --help): all-reduce and
 *          broadcast the whole buffer, all-gather its output, reduce-scatter
 *          its input, all-to-all what one rank sends; a multiple of
 *          8 x ranks except for all-reduce and broadcast (a multiple of 8)
 *
 * The ranks leave a barrier at different times (its last messages arrive
 * one after another), so they then agree on a start: the latest clock after
 * the barrier (an MPI_Allreduce with MPI_MAX) plus 1 ms, and each sleeps
 * (nanosleep) until then. Under SMPI (smpicc turns nanosleep into a sleep of
 * the simulated clock) they all start the collective at that instant, to the
 * ns, as topocc's ranks start at 0. Each reads MPI_Wtime when it returns, and
 * rank 0 prints the latest return minus the start in seconds (%.9e). The
 * buffers hold doubles (MPI_DOUBLE, MPI_SUM). Only MPI and POSIX calls. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: simgrid_coll OP BYTES\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *op = argv[1];
    long bytes = atol(argv[2]);
    long n = bytes / 8; /* doubles in topocc's BYTES */
    int per = 0;        /* the op takes a block of n / p per rank */
    if (strcmp(op, "allgather") == 0 || strcmp(op, "alltoall") == 0 ||
        strcmp(op, "reducescatter") == 0)
        per = 1;
    if (n < 1 || (per && n % p != 0)) {
        if (rank == 0)
            fprintf(stderr, "simgrid_coll: BYTES must be a multiple of 8%s\n",
                    per ? " x ranks" : "");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *a = calloc((size_t)n, sizeof *a);
    double *b = calloc((size_t)n, sizeof *b);
    int *counts = calloc((size_t)p, sizeof *counts);
    if (!a || !b || !counts)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < n; i++)
        a[i] = (double)(rank + 1);
    int blk = (int)(n / p);
    for (int r = 0; r < p; r++)
        counts[r] = blk;

    MPI_Barrier(MPI_COMM_WORLD);
    double now = MPI_Wtime(), start = 0;
    MPI_Allreduce(&now, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    start += 1e-3;
    double wait = start - MPI_Wtime();
    if (wait > 0) {
        struct timespec ts;
        ts.tv_sec = (time_t)wait;
        ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9 + 0.5);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        nanosleep(&ts, NULL);
    }
    if (strcmp(op, "allreduce") == 0)
        MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (strcmp(op, "bcast") == 0)
        MPI_Bcast(a, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else if (strcmp(op, "allgather") == 0)
        MPI_Allgather(a, blk, MPI_DOUBLE, b, blk, MPI_DOUBLE, MPI_COMM_WORLD);
    else if (strcmp(op, "alltoall") == 0)
        MPI_Alltoall(a, blk, MPI_DOUBLE, b, blk, MPI_DOUBLE, MPI_COMM_WORLD);
    else if (strcmp(op, "reducescatter") == 0)
        MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else {
        if (rank == 0)
            fprintf(stderr, "simgrid_coll: unknown OP %s\n", op);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double t1 = MPI_Wtime();
    double d = t1 - start, dmax = 0;
    MPI_Reduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.9e\n", dmax);
    free(a);
    free(b);
    free(counts);
    MPI_Finalize();
    return 0;
}
