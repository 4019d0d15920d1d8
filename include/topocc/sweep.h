/*
 * topocc/sweep.h - parameter sweeps over scenarios: a sweep file, its
 * points, a results file that survives a crash, and the runs that fill it
 * (one process, a shard of the points, or many processes under MPI).
 *
 * A sweep file is {"scenario": {...}, "sweep": {"mode": "product"|"zip",
 * "axes": {"<key path>": [values...], ...}, "seed": S, "seeds":
 * "per-point"|"shared"}} (docs/SWEEP.md). Points are numbered row-major
 * over the axes in the file's order (the last axis fastest); zip pairs the
 * axes' i-th values. Point i's scenario is the base scenario with each
 * axis's value set at its key path, read, resolved and checked exactly as
 * a scenario file is, with its seeds drawn from S and i ("per-point", the
 * default) or left as the scenario gives them ("shared").
 *
 * The results file is JSON Lines: the first line is the sweep's header
 * (its hash, its points, its axes); every other line one finished point,
 * {"point", "values", "seed", "elapsed_s", "scenario", "result"} or
 * {"point", "values", "seed", "error"}. Lines are appended with one
 * write() each, synced at most once a second and at the end; a run over
 * an existing file skips the points it holds and redoes a torn last line
 * (and, asked to, the points that failed: a later result replaces a
 * failure).
 */
#ifndef TOPOCC_SWEEP_H
#define TOPOCC_SWEEP_H

#include <stdint.h>
#include "topocc/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_SWEEP_FORMAT 1
#define TC_SWEEP_MAX_AXES 32
#define TC_SWEEP_MAX_POINTS 100000000ull

typedef struct tc_sweep {
    struct json_t *root;                 /* the whole file (owned) */
    const struct json_t *scenario;       /* its "scenario" (in root) */
    tc_command command;
    bool zip;
    bool shared_seeds;
    uint64_t seed;
    size_t naxes;
    char path[TC_SWEEP_MAX_AXES][256];   /* each axis's key path */
    const struct json_t *values[TC_SWEEP_MAX_AXES]; /* its values (arrays in root) */
    uint64_t len[TC_SWEEP_MAX_AXES];
    uint64_t npoints;
    tc_keyset keep;                      /* keys the axes set (their seeds are not derived) */
    char hash[17];                       /* 16 hex digits */
    char what[300];                      /* the file's name, for messages */
    bool has_file;                       /* read from a file (not standard input, not JSON given) */
    uint64_t file_dev, file_ino;         /* that file's device and inode: a results file that is
                                          * the sweep file itself is refused */
} tc_sweep;

/* Reads a sweep file ("-": standard input) or a sweep's JSON (root: a new
 * reference is taken). Every key is checked: an unknown one is named with
 * the nearest valid one, as is an unknown key path. */
tc_status tc_sweep_load(const char *path, tc_sweep **out, tc_err *err);
tc_status tc_sweep_from_json(struct json_t *root, const char *what, tc_sweep **out, tc_err *err);
void tc_sweep_free(tc_sweep *sw);
/* Refuses (TC_EINVAL, naming the point) a file a point would write
 * (flow.trace, iteration.timeline) that is the results file or the sweep
 * file itself, compared as files (tc_same_file). */
tc_status tc_sweep_check_files(const tc_sweep *sw, const char *results, tc_err *err);

/* Point i's values, {"<key path>": value} (new reference). */
struct json_t *tc_sweep_values(const tc_sweep *sw, uint64_t i);
/* Whether line is a failed point's line of a sweep's results ({"point",
 * "values", "seed", "error"}: no result, docs/SWEEP.md): its point into
 * *point and its error, fit for a one-line message (control characters as
 * '?', cut with "..." where it does not fit), into quote. */
bool tc_sweep_failed_point(const struct json_t *line, long long *point, char *quote, size_t len);
/* Point i's seed: drawn from the sweep's seed and i (0 when shared). */
uint64_t tc_sweep_point_seed(const tc_sweep *sw, uint64_t i);
/* Point i's scenario, resolved and checked (*out owned by the caller). */
tc_status tc_sweep_point(const tc_sweep *sw, uint64_t i, tc_scenario **out, tc_err *err);
/* Builds the scenario of every point i with i % stride == first: the
 * first that fails is named (*bad its index; UINT64_MAX when all build).
 * A run over MPI splits the points so (stride: the ranks). progress (NULL:
 * none) is called at the start, about every 0.25 s and at the end, in
 * points of these (what: "validating the sweep's points (--no-validate
 * skips this)"): a sweep of millions of points takes minutes here. */
tc_status tc_sweep_validate(const tc_sweep *sw, uint64_t first, uint64_t stride, tc_progress_fn progress,
                            void *progress_ud, uint64_t *bad, tc_err *err);
/* The results file's first line (new reference). */
struct json_t *tc_sweep_header(const tc_sweep *sw);

/* Runs point i: its line of the results file (malloc'ed, ending in a
 * newline; *len its length). A point that fails gives an error line and
 * its status in *point_st (TC_OK otherwise). NULL only when out of memory. */
char *tc_sweep_eval(const tc_sweep *sw, uint64_t i, const tc_run_opts *ro, size_t *len, tc_status *point_st,
                    char *point_err, size_t errlen);

/* ---- results files ---- */

/* One results file read: its header and which points it holds. */
typedef struct tc_sweep_results {
    struct json_t *header;               /* the first line (owned) */
    char hash[17];
    uint64_t npoints;
    uint8_t *state;                      /* per point: 0 missing, 1 done, 2 failed */
    uint64_t ndone, nfailed, nlines, nduplicates;
    double elapsed_s;                    /* the points' elapsed_s summed */
    uint64_t good_bytes;                 /* the file up to its last whole line */
    bool torn;                           /* a torn last line follows good_bytes */
    uint64_t nother_build;               /* point lines written by another topocc build (version or
                                          * commit) than the header's */
    char other_build[96];                /* the first such build, "VERSION (COMMIT)" */
} tc_sweep_results;

/* Point i's values by a results file's header's axes and mode, as a run
 * writes them in its line (NULL where the header's axes are not an object
 * of lists, or out of memory). */
struct json_t *tc_sweep_header_values(const struct json_t *h, uint64_t i);

/* Reads a results file. A torn last line (no newline, or not JSON) is
 * reported in torn; any other bad line fails naming its number. Each whole
 * point line is passed to fn when given (i: its point; line without its
 * newline); fn returning non-zero stops the read with TC_EINTERNAL. A
 * point's first line counts, except that a result replaces a failure
 * (then fn is called again for the point). */
typedef int (*tc_sweep_line_fn)(void *ud, uint64_t i, const char *line, size_t len);
tc_status tc_sweep_results_read(const char *path, tc_sweep_results *r, tc_sweep_line_fn fn, void *ud, tc_err *err);
void tc_sweep_results_free(tc_sweep_results *r);

/* Writes the union of several results files of one sweep to out (every
 * point once, in point order; atomically). Holds the lock a running sweep
 * takes on its file (flock): exclusive on out, shared on each input, so a
 * file a sweep is writing is refused as out or as an input. */
tc_status tc_sweep_merge(const char *const *in, size_t n, const char *out, tc_sweep_results *sum, tc_err *err);

/* ---- running ---- */

/* How points are spread over processes: a transport (MPI, loaded on
 * demand by tc_sweep_mpi_open) or none (one process). Rank 0 writes. */
typedef struct tc_sweep_transport {
    int rank, size;
    void *ctx;
    /* The next value of a counter shared by every rank (0, 1, 2, ...: an
     * index into the pending list), or -1 on failure. */
    int64_t (*next)(void *ctx);
    /* A worker's finished line to rank 0 (queued; the buffer is taken). */
    int (*send)(void *ctx, char *line, size_t len);
    /* Rank 0: one line received (*line malloc'ed, NULL when none is
     * waiting, or when a worker said it is done: then *done is set).
     * wait: block until a message comes. */
    int (*recv)(void *ctx, bool wait, char **line, size_t *len, bool *done);
    /* A worker: no more lines will come from it. */
    int (*done)(void *ctx);
    /* Broadcast from rank 0. */
    int (*bcast)(void *ctx, void *buf, size_t len);
    /* *v becomes the least of every rank's *v (all ranks call it). */
    int (*min_u64)(void *ctx, uint64_t *v);
    /* Ends the run: pending sends completed, every rank leaves together. */
    void (*finish)(void *ctx);
    void (*abort)(void *ctx, int code);
} tc_sweep_transport;

/* The MPI transport when this process was launched by mpirun or srun with
 * more than one rank (*out->size > 1), else out->size 1 and nothing is
 * loaded. Fails when launched by MPI but topocc was built without it. */
tc_status tc_sweep_mpi_open(int *argc, char ***argv, tc_sweep_transport *out, tc_err *err);

typedef struct tc_sweep_opts {
    uint64_t shard, nshards;             /* this run's points: i % nshards == shard (nshards 0: all) */
    tc_sweep_transport *transport;       /* NULL: this process alone */
    tc_progress_fn progress;             /* rank 0's progress (points) */
    void *progress_ud;
    double mem_limit_bytes;              /* each point's limit (tc_run_opts) */
    bool validate;                       /* every point's scenario built before the first runs */
    bool retry_failed;                   /* the points the file holds as failed are run again */
} tc_sweep_opts;

typedef struct tc_sweep_summary {
    uint64_t points;                     /* in the sweep */
    uint64_t held;                       /* already in the results file */
    uint64_t run, failed;                /* run now; failed of them */
    uint64_t held_failed;                /* of held, the points the file holds as failed (not run
                                          * again: no --retry-failed) */
    uint64_t retried;                    /* of run, the points the file held as failed, run
                                          * again (--retry-failed) */
    uint64_t first_held_failed;          /* the lowest of them (when held_failed > 0) */
    char first_held_error[512];          /* its error */
    uint64_t first_failed;               /* the first failed point (when failed > 0) */
    tc_status first_status;
    char first_error[512];
    bool torn;                           /* a torn last line was redone */
    bool idle;                           /* this rank had no point to run */
} tc_sweep_summary;

/* Runs the sweep's pending points into the results file at out. Every
 * rank calls it; rank 0 alone opens and writes the file. Under MPI (a
 * transport of several ranks) an error found before any point runs (the
 * plan, the validation) is printed on stderr by rank 0 before the ranks
 * part, and err is left empty; an error while running is printed by the
 * rank that meets it, which then aborts the job. */
tc_status tc_sweep_run(const tc_sweep *sw, const char *out, const tc_sweep_opts *o, tc_sweep_summary *sum,
                       tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
