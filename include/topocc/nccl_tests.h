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

#ifdef __cplusplus
extern "C" {
#endif

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

/* The same as nccl-tests' JSON report (-J FILE.json; format version 3 of
 * NVIDIA/nccl-tests v2.19.6, src/util.cu): version, args (the test program
 * and its arguments, as given), env (the NCCL variables topocc honours, as
 * its environment has them; nccl-tests writes its whole environment),
 * nccl_version (22105: the NCCL topocc models), config (devices: one per
 * process, as nccl-tests gathers them), results (one per row printed,
 * in-place as out-of-place, nwrong null: nothing is validated), the
 * footer's out_of_bounds and average_bus_bandwidth, errors, and
 * topocc_prediction (what). No start_time and end_time: the prediction
 * takes none. NULL when out of memory. */
struct json_t;
struct json_t *tc_nccl_tests_report(const tc_collective_out *o, const tc_nccl_tests_header *h, const char *const *args,
                                    size_t nargs, const char *what);

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
    bool json;          /* from a JSON report: line is the result's place in its list, from 1 */
    bool wrong;         /* its out-of-place #wrong is above 0 */
    long root;          /* its root column; -1 where it prints -1 or none */
    bool has_root;      /* the file has a root column */
    uint32_t ranks;     /* the ranks its run lists (0: none) */
    long ranks_line;    /* the line of its run's last '#  Rank' line */
    long line;          /* its line in the file, from 1 */
} tc_nccl_row;

/* A saved nccl-tests output, read (tc_nccl_tests_load). */
typedef struct tc_nccl_file {
    tc_nccl_row *rows;      /* the rows of the test asked for, in the file's order */
    size_t n;
    uint32_t ranks;         /* the ranks the file lists; 0 where it lists none */
    char test[48];          /* the test program the rows are of ("all_reduce_perf"), "" where the file
                             * does not name one */
    char others[160];       /* other tests whose rows were left out, ", "-separated ("" none) */
    size_t other_rows;      /* how many rows they held */
    char other_kinds[160];  /* types and operators whose rows tc_nccl_file_keep left out ("" none) */
    size_t other_kind_rows; /* how many rows they held */
    int nccl_code;          /* NCCL_VERSION_CODE of the library the run used; 0 where not printed */
    char tests_version[24]; /* nccl-tests' version ("2.17.8"), "" where not printed */
    int json;               /* the JSON report's version (nccl-tests -J); 0 for text */
    size_t wrong;           /* rows whose out-of-place #wrong (nwrong) is above 0: nccl-tests found
                             * the result wrong */
    long wrong_line;        /* the first of them (its line, or its result's place) */
    size_t unread;          /* text lines neither rows nor comments (a launcher's or NCCL's lines) */
    long unread_line[3];    /* the first three of them */
    char env[512];          /* JSON: the run's values of the NCCL variables topocc honours, a "K=V\n"
                             * each, control characters as '?' ("" none) */
} tc_nccl_file;

/* Reads a saved nccl-tests output into *f, the rows of test (the program
 * name, e.g. "all_reduce_perf"; NULL: every row) where the file names its
 * tests:
 *  - text, as the nccl-tests binaries print it: rows of size, count,
 *    type, redop, root, then time, algbw, busbw and #wrong out of place
 *    and in place (trailing columns, as -I and -S add, ignored), or the
 *    fewer leading columns older versions print, v1.0.0 to v2.13.3, as the
 *    column header names them, with the redop field of the operations
 *    without a reduction left blank; comment lines start with '#' ("#
 *    Collective test starting: NAME" opens NAME's rows, "# nccl-tests
 *    version" names the versions); a launcher's prefix on each line
 *    (Open MPI's --tag-output, Slurm's srun --label) is dropped; lines
 *    whose first field is not a number (NCCL's log, a launcher's
 *    messages) are counted in f->unread, not read; a line that starts
 *    with a number and is not a row is refused with its number;
 *  - a table of "size_bytes busbw_GBps" lines after a "# topocc:
 *    table-only" line (every other line refused);
 *  - nccl-tests' JSON report (-J FILE.json, v2.17.3 to v2.19.6: versions
 *    1 to 3 of its format).
 * A file that names its tests and holds none of test's rows is refused,
 * naming what it holds. f->ranks: the ranks the file lists (text: one
 * "#  Rank N ... device ..." line each, the highest N plus one; JSON: its
 * processes x threads x GPUs). Free with tc_nccl_file_free; on failure
 * *f holds nothing. */
tc_status tc_nccl_tests_load(const char *path, const char *test, tc_nccl_file *f, tc_err *err);

void tc_nccl_file_free(tc_nccl_file *f);

/* f->ranks from the ranks the runs of f's rows list (0: none lists any);
 * rows of runs on different rank counts are refused, naming both. */
tc_status tc_nccl_file_ranks(tc_nccl_file *f, const char *path, tc_err *err);

/* A log of nccl-tests run over several types, operators or roots (-d all,
 * -o all; -r -1 for broadcast and reduce, every root): keeps the rows of
 * type (nccl-tests' name), redop (the column as printed; rows that print
 * none count as "none") and root (root >= 0: broadcast's and reduce's,
 * that root; root < 0: an operation without a root, whose rows print -1),
 * where the file holds any, noting the others in f->other_kinds; a file
 * holding none is left whole (for the caller to refuse, naming what it
 * holds). */
void tc_nccl_file_keep(tc_nccl_file *f, const char *type, const char *redop, long root);

/* The nccl-tests program that times op ("all_reduce_perf", ...). */
const char *tc_nccl_tests_program(tc_op op);

/* NCCL's version code (nccl.h's NCCL_VERSION: X x 1000 + Y x 100 + Z up
 * to 2.8, X x 10000 + Y x 100 + Z after) as "X.Y.Z" into buf. */
void tc_nccl_version_str(int code, char *buf, size_t len);

/* The nccl-tests bus bandwidth of op over p ranks: bytes / time / 1e9 x
 * the factor above, in bytes per second. */
double tc_nccl_tests_busbw(tc_op op, uint32_t p, double bytes, double time_s);

/* The ranks of the communicator a result's collective ran on: the job's,
 * or with sub-groups (topocc nccl-tests --group) one group's: nccl-tests'
 * count and busbw over a sub-communicator use its own rank count. */
uint32_t tc_nccl_tests_ranks(const tc_result *r);

#ifdef __cplusplus
}
#endif

#endif
