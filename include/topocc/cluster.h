/*
 * topocc/cluster.h - a shared cluster over time: job arrival traces (read
 * from the public GPU-cluster traces or drawn synthetically) replayed
 * through a topology's allocation rule and a scheduler (docs/MODEL.md,
 * "Cluster replay").
 *
 * A trace is a list of jobs: when each arrives, how many endpoints it
 * asks for, how long it runs once started. Times are seconds from the
 * trace's first arrival.
 */
#ifndef TOPOCC_CLUSTER_H
#define TOPOCC_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include "topocc/core.h"
#include "topocc/place.h"
#include "topocc/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_cjob {
    double submit_s;         /* arrival, seconds after the trace's first */
    double duration_s;       /* run time once started (> 0) */
    uint32_t size;           /* endpoints asked for (>= 1) */
    uint64_t line;           /* where it came from: line (CSV) or record index (JSON), from 1 */
} tc_cjob;

typedef enum {
    TC_TRACE_AUTO = 0,       /* by content: JSON -> philly; CSV by its header */
    TC_TRACE_CSV,            /* topocc's own: header "submit,size,duration" (seconds, endpoints, seconds) */
    TC_TRACE_PHILLY,         /* Microsoft Philly cluster_job_log (JSON) */
    TC_TRACE_HELIOS,         /* SenseTime Helios cluster_log.csv */
    TC_TRACE_PAI,            /* Alibaba PAI pai_task_table.csv (plan_gpu in percent of a GPU) */
    TC_TRACE_SYNTHETIC       /* drawn by tc_trace_synthetic */
} tc_trace_format;

typedef struct tc_trace {
    tc_cjob *jobs;           /* sorted by submit_s (stable: ties keep file order) */
    size_t n;
    tc_trace_format format;
    /* Records read but not jobs: no endpoint asked for, never started, no
     * positive duration (the reader's documented rules say which). */
    size_t skipped;
    char skipped_why[160];   /* the first skipped record's reason, "" when none */
} tc_trace;

/* "auto", "csv", "philly", "helios", "pai", "synthetic" */
const char *tc_trace_format_name(tc_trace_format f);
tc_status tc_trace_format_parse(const char *s, tc_trace_format *out, tc_err *err);

/* Reads a trace file. A malformed record fails (TC_EINVAL) with one line
 * naming the file, its line (or record) and the field. */
tc_status tc_trace_read(const char *path, tc_trace_format f, tc_trace *out, tc_err *err);

/* n jobs drawn from the seed: sizes and durations from published
 * statistics of the public traces (docs/MODEL.md cites them), arrivals
 * Poisson at the rate that offers `load` (0 < load, e.g. 0.9) of an
 * `endpoints`-endpoint cluster's capacity; sizes above `endpoints` are
 * drawn again. */
tc_status tc_trace_synthetic(size_t n, uint64_t seed, uint32_t endpoints, double load, tc_trace *out, tc_err *err);
/* The refusals of tc_trace_synthetic with the same arguments, with its
 * messages, without keeping the jobs (the sizes drawn and summed: a load
 * the jobs cannot offer is refused). */
tc_status tc_trace_synthetic_check(size_t n, uint64_t seed, uint32_t endpoints, double load, tc_err *err);

void tc_trace_free(tc_trace *t);

/* ---- replay ---- */

typedef enum {
    TC_SCHED_FIFO = 0,       /* strict first come, first served: the queue's head blocks everyone behind it */
    TC_SCHED_BACKFILL        /* EASY backfilling: later jobs start early if they do not delay the head's reservation */
} tc_cluster_sched;

const char *tc_cluster_sched_name(tc_cluster_sched s);
tc_status tc_cluster_sched_parse(const char *s, tc_cluster_sched *out, tc_err *err);

typedef struct tc_cluster_opts {
    tc_cluster_sched sched;
    /* The allocation rule (docs/MODEL.md, "Cluster replay"): a Clos gets
     * TC_PLACE_PACKED over the free endpoints (with scale-up nodes: a job
     * smaller than a node a share of the fullest node with room, a larger
     * one whole nodes); a torus a free cuboid
     * (TC_PLACE_SLICE) of the smallest volume >= the job's size that has
     * a shape fitting the torus; with ocs = K, the torus is cubes of K^d
     * endpoints joined by optical switches: a job of a cube or more takes
     * that many whole cubes, any free ones; a smaller job a cuboid inside
     * one cube. */
    uint32_t ocs;            /* torus: the cube edge K (0: no optical switches) */
    uint32_t samples;        /* points of the utilisation series (0: 100) */
    /* Torus slices are found on bit masks of free cells where the first
     * extent is at most 64 (the same maps as tc_place_map_free's slice
     * policy, faster); true: through tc_place_map_free every time. */
    bool place_lib;
    /* progress: called now and then with jobs finished and total */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *progress_ctx;
} tc_cluster_opts;

typedef struct tc_cluster_job_out {
    double start_s;          /* NAN: never started */
    double wait_s;           /* start - submit */
    uint32_t alloc;          /* endpoints it was given (>= its size on a torus: a cuboid, whole cubes) */
    uint32_t first;          /* its rank 0's endpoint (a slice's origin) */
    uint8_t never_fits;      /* larger than the cluster: never started */
} tc_cluster_job_out;

typedef struct tc_cluster_out {
    size_t jobs, started, never_fit;
    double makespan_s;           /* last finish - first submit */
    double util_mean;            /* allocated endpoint-seconds / (endpoints x makespan) */
    double util_arrivals;        /* the same over the arrivals' span, first to last (the makespan if one) */
    double waste_share;          /* of the allocated endpoint-seconds, those no job asked for (cuboid rounding) */
    double wait_mean_s, wait_p50_s, wait_p99_s, wait_max_s;
    /* Fragmentation (docs/MODEL.md states it): the free fraction of the
     * cluster while the queue's head waits although at least as many
     * endpoints as it needs are free, averaged over the makespan (0 at
     * other times); and the share of the makespan such a head waits. */
    double frag_mean, frag_time_share;
    double frag_arrivals, frag_time_arrivals; /* the same over the arrivals' span (as util_arrivals) */
    uint32_t samples;
    /* samples: equal bins of the arrivals' span (first to last arrival;
     * the makespan when they all come at once), each bin's start and its
     * mean allocated share */
    double *t_s, *util;
    tc_cluster_job_out *job;     /* per trace job, in trace order */
} tc_cluster_out;

tc_status tc_cluster_replay(const tc_topo *t, const tc_trace *tr, const tc_cluster_opts *o, tc_cluster_out *out,
                            tc_err *err);
/* Whether t can be cubes of edge ocs joined by optical switches (the
 * refusals tc_cluster_replay makes of tc_cluster_opts.ocs; 0: none). */
tc_status tc_cluster_ocs_check(const tc_topo *t, uint32_t ocs, tc_err *err);
void tc_cluster_out_free(tc_cluster_out *o);

#ifdef __cplusplus
}
#endif

#endif
