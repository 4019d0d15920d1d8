/*
 * topocc/outcome_net.h - the outcomes of the network commands: topo,
 * collective, compare and concurrent (conventions in topocc/outcome.h).
 *
 * Each outcome keeps the built networks (tc_net) it was computed on, so it
 * can be rendered after the scenario's inputs are gone: link names, specs
 * and injection bandwidths come from the topologies themselves.
 */
#ifndef TOPOCC_OUTCOME_NET_H
#define TOPOCC_OUTCOME_NET_H

#include <stdio.h>
#include "topocc/cluster.h"
#include "topocc/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The flow simulator's settings of a run, for the record of its result. */
typedef struct tc_flow_setup {
    tc_multipath multipath;
    tc_flow_deps deps;
    double eager_limit_bytes;  /* deps auto: the largest message sent eagerly (0: the default) */
    double rate_cap_Bps;       /* 0: none */
    char trace[4096];          /* "": no trace written */
} tc_flow_setup;

/* ---- topo ----------------------------------------------------------------- */

typedef struct tc_topo_out {
    tc_net net;                /* net.topo[0] is the topology described */
    tc_topo_info info;
    bool links;                /* list every directed link */
} tc_topo_out;

tc_status tc_run_topo(const tc_scenario *s, const tc_run_opts *ro, tc_topo_out **out, tc_err *err);
void tc_topo_out_free(tc_topo_out *o);

/* ---- collective ------------------------------------------------------------
 * One operation on one topology over sizes x algorithms. The algorithm
 * rows are the scenario's algorithms in order, "all" expanded into every
 * algorithm valid for (op, ranks, topology) in enum order. */

typedef struct tc_coll_row {
    char requested[96];        /* "auto", "ring:chunks=8", or an algorithm "all" gave */
    tc_algo algo;              /* as requested (TC_ALGO_AUTO for auto) */
    uint32_t chunks, root;     /* as requested (0: the default) */
    tc_variant variant;        /* as requested ("rhd:order=far"; TC_VARIANT_DEFAULT: the default) */
    tc_coll_req spec;          /* the request as parsed: runs take its nccl-* options from it (channels,
                                * proto, proto and algorithm masks, channel bounds, buffsize) */
} tc_coll_row;

typedef struct tc_collective_out {
    tc_net net;                /* net.topo[0] */
    tc_topo_info info;
    tc_routing routing;
    bool routing_by_mode;      /* the routing is the mode's default on a Clos (formula: dmodk; steps, flow: ecmp) */
    tc_mode mode;
    tc_op op;
    uint32_t ranks;
    char dtype[12];            /* the element type (collective.dtype) */
    size_t nalgos, nsizes;
    tc_coll_row *rows;         /* nalgos */
    tc_result *res;            /* nalgos x nsizes: tc_collective_at */
    /* One size, one algorithm, mode flow: the details of the run. */
    /* One size, one algorithm, --phases: each phase as formula costed it. */
    size_t nphases;
    tc_phase_eval *phases;     /* nphases */
    char (*phase_labels)[32];  /* nphases */
    /* The phases are lock step's, the time a pipeline's (tc_sched.pipe_hops:
     * NCCL's broadcast and reduce chains): their sum is not the time. */
    bool phases_pipelined;
    bool has_flow;
    tc_flow_result flow;       /* with groups: one job per group (flow.jobs[g]) */
    tc_flow_setup flow_setup;
    /* Sub-groups (job.group): every group ran the collective at once;
     * ranks is the job's, each result's group fields say the rest. */
    tc_group_spec group;       /* TC_GROUP_NONE: the whole job */
    uint32_t ngroups, group_size;
    /* Reported as a sweep over sizes even with one size and one algorithm
     * (nccl-tests -b = -e: its JSON, CSV and --out-dir tables keep their
     * shape whatever the sizes). */
    bool sizes_doc;
} tc_collective_out;

static inline const tc_result *tc_collective_at(const tc_collective_out *o, size_t algo, size_t size)
{
    return &o->res[algo * o->nsizes + size];
}

tc_status tc_run_collective(const tc_scenario *s, const tc_run_opts *ro, tc_collective_out **out, tc_err *err);
void tc_collective_out_free(tc_collective_out *o);

/* The places of the algorithm rows at one size, fastest first (ties keep
 * the row order): order[0..nalgos) receives row indices. */
void tc_collective_ranking(const tc_collective_out *o, size_t size, size_t *order);


/* ---- compare ----------------------------------------------------------------
 * Operations x sizes x topologies, one algorithm request for every cell.
 * With job.group every cell runs the collective in every group of the job
 * at once (as collective --group on that topology): the cell's result is
 * the slowest group's, its size, algbw and busbw one group's. */

typedef struct tc_compare_out {
    tc_net net;                /* names in net.name */
    tc_topo_info info[TC_SCN_MAX_TOPOS];
    uint32_t ranks[TC_SCN_MAX_TOPOS];
    tc_mode mode;
    char algo[96];             /* as requested */
    tc_op ops[TC_OP_COUNT];
    int nops;
    double *sizes;
    size_t nsizes;
    /* Setting 0: the topologies as specified; setting k >= 1: every
     * topology at the per-message overhead alpha[k] (network.alphas_s). */
    int nset;
    double alpha[TC_SCN_MAX_ALPHAS + 1];
    tc_result *res;            /* [setting][op][size][topology]: tc_compare_at_set */
    /* Sub-groups (job.group): the spec, and on each topology the groups it
     * made (node and axes depend on the topology). */
    tc_group_spec group;       /* TC_GROUP_NONE: the whole job */
    uint32_t ngroups[TC_SCN_MAX_TOPOS], group_size[TC_SCN_MAX_TOPOS];
    /* The job's placement on each topology (leaves and pods, or the slice). */
    tc_place_shape shape[TC_SCN_MAX_TOPOS];
} tc_compare_out;

static inline size_t tc_compare_index(const tc_compare_out *o, int set, int op, size_t size, int topo)
{
    return (((size_t)set * (size_t)o->nops + (size_t)op) * o->nsizes + size) * (size_t)o->net.n + (size_t)topo;
}

static inline const tc_result *tc_compare_at_set(const tc_compare_out *o, int set, int op, size_t size, int topo)
{
    return &o->res[tc_compare_index(o, set, op, size, topo)];
}

/* As specified (setting 0). */
static inline const tc_result *tc_compare_at(const tc_compare_out *o, int op, size_t size, int topo)
{
    return tc_compare_at_set(o, 0, op, size, topo);
}

tc_status tc_run_compare(const tc_scenario *s, const tc_run_opts *ro, tc_compare_out **out, tc_err *err);
void tc_compare_out_free(tc_compare_out *o);

/* The topologies within 0.1% of the fastest in one cell, as a bit mask;
 * *best is the fastest time, *second the fastest outside the mask
 * (INFINITY when every topology ties). */
unsigned tc_compare_winners(const tc_compare_out *o, int op, size_t size, double *best, double *second);
unsigned tc_compare_winners_set(const tc_compare_out *o, int set, int op, size_t size, double *best,
                                double *second);

/* A conclusion: over sizes [from, to] of one operation the winners (bit
 * masks of topologies within 0.1% of the fastest) are the same at each
 * size, setting by setting; holds: and the same at every setting. gain:
 * the most the winners are faster than the next, over the run and the
 * settings where it holds. */
typedef struct tc_compare_run {
    size_t from, to;
    bool holds;
    double gain;
    unsigned mask[TC_SCN_MAX_ALPHAS + 1];
} tc_compare_run;

/* The conclusions for operation op, in size order, into runs (at most
 * o->nsizes); returns how many. */
size_t tc_compare_conclusions(const tc_compare_out *o, int op, tc_compare_run *runs);

/* ---- concurrent --------------------------------------------------------------
 * Jobs sharing one network in the flow simulator. A job with a group (its
 * "group" key, the grammar of job.group) runs its collective in every group
 * of its ranks at once, each group a flow job of its own, as collective
 * --group --mode flow does: the job's figures are its slowest group's. */

typedef struct tc_concurrent_job {
    char name[64];
    tc_op op;
    tc_algo algo;              /* the algorithm run (auto resolved) */
    bool auto_chosen;          /* algo was chosen by auto */
    uint32_t chunks, root;
    tc_variant variant;        /* the variant run (tc_algo_variant_name) */
    uint32_t throttle;         /* scattered's and mpich's throttle as requested (tc_coll_req.throttle) */
    tc_algo chosen;            /* mpich: the algorithm it chose (TC_ALGO_COUNT: not built yet) */
    uint32_t ranks;
    double bytes;
    double alone_s;            /* its time alone on the network (a grouped job: all its groups, no other job) */
    double slowdown;           /* time together / alone */
    /* The job's flow figures: flow.jobs[flow_first]; a grouped job's are its
     * slowest group's (flow.jobs[flow_first + group_slowest]). */
    tc_flow_job_result res;
    size_t flow_first, nflow;  /* its flow jobs: flow.jobs[flow_first ..+ nflow) (1, or one per group) */
    /* Sub-groups: ranks is the job's, bytes one group's; the fastest group
     * beside the slowest. */
    tc_group_spec group;       /* TC_GROUP_NONE: the whole job */
    uint32_t ngroups, group_size;
    uint32_t group_slowest, group_fastest;
    double group_fastest_s;    /* the fastest group's time (NAN without groups) */
    /* Its placement (policy list: the endpoints given; a policy: on the
     * endpoints the jobs before it left free) and the shape it has. */
    tc_place_shape shape;
} tc_concurrent_job;

typedef struct tc_concurrent_out {
    tc_net net;                /* net.topo[0] */
    tc_topo_info info;
    tc_routing routing;
    size_t njobs;
    tc_concurrent_job *jobs;
    tc_flow_result flow;       /* the simulated jobs together: a job's are jobs[i].flow_first ..+ nflow
                                * (without groups flow.jobs[i] is job i) */
    tc_flow_setup flow_setup;
} tc_concurrent_out;

tc_status tc_run_concurrent(const tc_scenario *s, const tc_run_opts *ro, tc_concurrent_out **out, tc_err *err);
void tc_concurrent_out_free(tc_concurrent_out *o);



/* ---- failures --------------------------------------------------------------
 * Monte Carlo over random failures (network.fail_random drawn trials
 * times, trial t from the seed and t): one operation at one size on each
 * topology, against the same network healthy (network.fail only). */

/* Slowdown histogram bins: [0, 1), [1, 1.001), [1.001, 1.01), [1.01,
 * 1.05), [1.05, 1.1), [1.1, 1.25), [1.25, 1.5), [1.5, 2), [2, 4), [4, inf). */
#define TC_FAIL_BINS 10
extern const double tc_fail_bin_edges[TC_FAIL_BINS + 1];

typedef struct tc_failures_topo {
    tc_result healthy;         /* the network with network.fail only */
    uint32_t ran, cut;         /* draws where the job ran; where it could not (cut off, a rank's endpoint down) */
    uint32_t cables, eligible_cables, switches; /* what each draw fails, of how many */
    double *slowdown;          /* ran values, ascending: time / healthy time */
    double min, p50, p90, p99, max, mean;
    uint32_t hist[TC_FAIL_BINS];
    int32_t first_cut;         /* the first draw that cut the job off (-1: none) */
    char cut_reason[TC_ERR_LEN]; /* its reason */
} tc_failures_topo;

typedef struct tc_failures_out {
    tc_net net;                /* names in net.name; the topologies as built (network.fail applied) */
    tc_topo_info info[TC_SCN_MAX_TOPOS];
    uint32_t ranks[TC_SCN_MAX_TOPOS];
    tc_op op;
    double bytes;
    char algo[96];             /* as requested */
    tc_mode mode;
    tc_routing routing[TC_SCN_MAX_TOPOS]; /* as modelled */
    char fail_random[256];
    bool hostlinks, nvlinks;   /* fail_random's: the draws take those cables too (eligible_cables counts them) */
    uint32_t trials;
    tc_failures_topo topo[TC_SCN_MAX_TOPOS];
} tc_failures_out;

tc_status tc_run_failures(const tc_scenario *s, const tc_run_opts *ro, tc_failures_out **out, tc_err *err);
void tc_failures_out_free(tc_failures_out *o);

/* ---- cluster ---------------------------------------------------------------
 * One job trace replayed on each topology with the same scheduler
 * (docs/MODEL.md, "Cluster replay"). */

typedef struct tc_cluster_run_out {
    tc_net net;
    tc_trace trace;            /* as read or drawn */
    char source[4096];         /* the file, or "synthetic N,seed=S,load=L" */
    tc_cluster_sched sched;
    uint32_t ocs;
    /* per topology: the replay, and the jobs larger than it (skipped) */
    tc_cluster_out run[TC_SCN_MAX_TOPOS];
    size_t too_large[TC_SCN_MAX_TOPOS];
} tc_cluster_run_out;

tc_status tc_run_cluster(const tc_scenario *s, const tc_run_opts *ro, tc_cluster_run_out **out, tc_err *err);
void tc_cluster_run_out_free(tc_cluster_run_out *o);

#ifdef __cplusplus
}
#endif

#endif
