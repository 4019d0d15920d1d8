/*
 * topocc/nccl_tests.h - nccl-tests' output, written and read
 * (docs/NCCL_TESTS.md). The columns, formats and bus-bandwidth factors are
 * those of NVIDIA/nccl-tests v2.13.10 (commit d2d40cc8): src/common.cu
 * (header, rows, "# Avg bus bandwidth"), src/all_reduce.cu and the other
 * GetBw functions (busbw = algbw x 2(n-1)/n for all-reduce, (n-1)/n for
 * all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce).
 */
#ifndef TOPOCC_NCCL_TESTS_H
#define TOPOCC_NCCL_TESTS_H

#include <stdio.h>
#include "topocc/outcome_net.h"

/* The command line's part of nccl-tests' first header line
 * (src/common.cu:917-919 at v2.13.10): "nGpus %d minBytes %ld maxBytes %ld
 * step: %ld(%s)", maxBytes as given (not the last size run), the step the
 * factor where it is above 1, else the increment in bytes. */
typedef struct tc_nccl_tests_header {
    uint32_t ngpus;      /* -g (1 without it, nccl-tests' default) */
    uint32_t nthreads;   /* -t (1 without it) */
    double min_bytes;    /* -b, -e as given, whole bytes */
    double max_bytes;
    double step;         /* -f where above 1, else -i */
    bool step_factor;    /* step is -f ("factor"), else -i ("bytes") */
    bool from_sizes;     /* sizes, step: those of the sizes run (a --compare file's), ngpus kept */
    /* Sizes asked that hold no element per rank once cut to whole elements
     * (tc_coll_rounded_bytes 0): nccl-tests prints each as a row of size 0
     * and count 0, algbw and busbw 0, and carries on. nrows: every row in
     * order, empty[i] set where row i is such a size, the others o's sizes
     * in order (NULL: every row is one of o's). */
    const uint8_t *empty;
    size_t nrows;
    double empty_time_s; /* the time those rows print */
    const char *note;    /* a comment line after the prediction's (NULL: none) */
    const char *graph;   /* a comment line on NCCL's graph, after note (NULL: none) */
} tc_nccl_tests_header;

/* Writes the collective's sizes (row 0 of o) as nccl-tests prints them:
 * the header, one row per size with the out-of-place and in-place columns
 * (the same prediction in both; #wrong "N/A": nothing is validated), the
 * footer with the mean bus bandwidth of every printed value. what: a
 * comment line naming the topology and algorithm. h: the header's
 * command-line values; NULL where the sizes came from elsewhere (a saved
 * output's rows): then the first and last size, and the step between the
 * first two (their ratio where it is a whole number of at least 2, else
 * their difference; nccl-tests' default 1048576 bytes for one size). */
void tc_nccl_tests_write(FILE *f, const tc_collective_out *o, const char *what, const tc_nccl_tests_header *h);

/* One measured size of a saved nccl-tests output. */
typedef struct tc_nccl_row {
    double bytes;
    double time_s;      /* out-of-place; 0 when the file gives none */
    double busbw_Bps;   /* out-of-place */
    char type[16];      /* the type column as printed ("float", "half", ...); "" in a table-only file */
    char redop[16];     /* the redop column ("sum", "max", "none", ...); "" in a table-only file and
                         * where the row prints none */
    bool no_redop;      /* the row prints no redop, as older versions print the operations without a
                         * reduction: a blank field, or a layout without the column */
    long line;          /* its line in the file, from 1 */
} tc_nccl_row;

/* Reads a saved nccl-tests output (the text all_reduce_perf and the
 * others print: rows of size, count, type, redop, root, then time, algbw,
 * busbw and #wrong out of place and in place, or the fewer leading columns
 * older versions print, v1.0.0 to v2.13.3, as the column header names
 * them, with the redop field of the operations without a reduction left
 * blank; comment lines start with '#'; NCCL's own log lines, "NCCL INFO",
 * "NCCL WARN" and "NCCL version", are skipped), or a table of "size_bytes busbw_GBps" lines after a
 * "# topocc: table-only" line. A line that is neither is refused with its
 * number. *ranks: the ranks the header lists, one "#  Rank N ... device ..." line
 * each (the highest N plus one); 0 when it lists none. *rows is owned by
 * the caller (free). */
tc_status tc_nccl_tests_read(const char *path, tc_nccl_row **rows, size_t *n, uint32_t *ranks, tc_err *err);

/* The nccl-tests bus bandwidth of op over p ranks: bytes / time / 1e9 x
 * the factor above, in bytes per second. */
double tc_nccl_tests_busbw(tc_op op, uint32_t p, double bytes, double time_s);

/* The ranks of the communicator a result's collective ran on: the job's,
 * or with sub-groups (topocc nccl-tests --group) one group's: nccl-tests'
 * count and busbw over a sub-communicator use its own rank count. */
uint32_t tc_nccl_tests_ranks(const tc_result *r);

#endif
