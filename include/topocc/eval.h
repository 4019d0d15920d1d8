/*
 * topocc/eval.h - evaluators: the time a schedule takes on a topology.
 *
 * formula: closed forms, phase by phase, from the phase's traffic pattern and
 *          the topology's structure (alpha-beta with the bottleneck share).
 * steps:   bulk-synchronous; every transfer of a phase is routed on the graph,
 *          flows are counted per directed link, a transfer takes
 *          alpha + path latency + bytes / (min over its links of bw / flows),
 *          a phase ends with its slowest transfer; identical steps once.
 * flow:    event-driven, flow-level, max-min fair sharing, dependencies per
 *          rank (topocc/flow.h).
 * All evaluators return the same result shape. lower_bound_s is the largest
 * of the injection, bisection and latency bounds (docs/MODEL.md).
 */
#ifndef TOPOCC_EVAL_H
#define TOPOCC_EVAL_H

#include "topocc/coll.h"
#include "topocc/flow.h"
#include "topocc/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TC_MODE_FORMULA = 0, TC_MODE_STEPS = 1, TC_MODE_FLOW = 2 } tc_mode;

const char *tc_mode_name(tc_mode m);

/* The routing an evaluator models when asked for `requested`: the
 * default is D-mod-k on a Clos for formula (its closed forms are exact for
 * it) and ECMP for steps and flow; dimension order on a torus. An explicit
 * routing is kept (tc_evaluate refuses ECMP with formula). */
tc_routing tc_eval_routing(tc_mode m, const tc_topo *t, tc_routing requested);
tc_status tc_mode_parse(const char *s, tc_mode *out, tc_err *err);

typedef struct tc_eval_opts {
    tc_mode mode;
    tc_routing routing;
    const uint32_t *rank_map;  /* rank -> endpoint; NULL = identity */
    const tc_flow_opts *flow;  /* TC_MODE_FLOW settings; NULL = defaults (its routing is replaced by routing) */
    /* Formula and steps sweeps: the per-message overhead at each size of the
     * sweep in place of the topology's alpha (NULL: the topology's); one
     * routing then serves every (size, alpha) point. */
    const double *alphas;
    /* Flow mode, one size and one algorithm (not auto): the simulation's
     * whole result (events, rank finishes, hottest links; the trace the flow
     * options name is written), so that a caller wanting them does not run
     * it twice. NULL: the time only. Freed by the caller (tc_flow_result_free). */
    tc_flow_result *flow_detail;
    /* The routing a pair the failures cut off is reported under
     * (TC_ROUTE_DEFAULT: the one evaluated): a caller that evaluates under
     * D-mod-k for a run under ECMP names the run's, whose surviving paths
     * on a Clos are the same (both search every up-down path left,
     * topo/clos.c). */
    tc_routing cut_routing;
} tc_eval_opts;

typedef struct tc_result {
    tc_op op;
    tc_algo algo;              /* the algorithm used */
    tc_algo algo_requested;
    uint32_t chunks;
    tc_variant variant;        /* the variant run (TC_VARIANT_DEFAULT for auto); tc_algo_variant_name */
    uint32_t throttle;         /* scattered as requested (tc_coll_req.throttle; 0: MPICH's default) */
    tc_proto proto;            /* nccl-*: the protocol run (nccl: its choice); TC_PROTO_NONE otherwise */
    uint32_t channels;         /* nccl-*: the channels run */
    tc_algo nccl_impl;         /* nccl-*: nccl-ring or nccl-tree (nccl: its choice); mpich: the algorithm it chose */
    uint32_t ranks;
    double bytes;
    tc_mode mode;
    tc_routing routing;        /* the routing modelled (tc_eval_routing) */
    double time_s;
    double algbw_Bps, busbw_Bps;
    double lower_bound_s;
    uint32_t phases, steps;
    uint64_t transfers;        /* the schedule's point-to-point transfers, exact (0: not counted, as over sub-groups) */
    uint32_t elt;              /* bytes per element (0: fluid sizes) */
    uint8_t dtype, redop;      /* the element type's code and the reduction operator (tc_coll_req's) */
    /* Sub-groups (tc_evaluate_groups_sweep): groups > 0 groups of
     * group_size ranks each ran the collective at once (ranks: the job's;
     * bytes, algbw and busbw: one group's); time_s is the slowest group's.
     * Flow mode simulates each group as a job of its own: group_fastest_s is
     * the fastest group's time, group_slowest and group_fastest their
     * indices. Formula and steps run the groups in lock step (a step ends
     * with the slowest transfer of any group) and give the slowest only:
     * group_fastest_s is then NAN. */
    uint32_t groups, group_size;
    uint32_t group_slowest, group_fastest;
    double group_fastest_s;
    /* Flow bounds (tc_flow_opts.bounds): the interval's upper end, time_s
     * its lower end; 0 where the time was not bounded. */
    double bounds_upper_s;
} tc_result;

/* Lower bound on any algorithm's time for op on p ranks (docs/MODEL.md);
 * NAN when memory ran out while computing it. */
double tc_lower_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes,
                      const uint32_t *rank_map);
/* The same with a per-message overhead alpha in place of the topology's. */
double tc_lower_bound_alpha(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *rank_map,
                            double alpha);
/* The same; node_reduces false: the scale-up switches (node_reduce) do
 * not reduce this collective's type and operator. */
double tc_lower_bound_ex(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *rank_map,
                         double alpha, bool node_reduces);
/* Whether scale-up switches that reduce can reduce req's type and
 * operator (those NCCL's NVLS has kernels for). */
bool tc_req_node_reduces(const tc_coll_req *req);

/* Time of one schedule. */
tc_status tc_eval_formula(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                          double *time_s, tc_err *err);
tc_status tc_eval_steps(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                        double *time_s, tc_err *err);

/* One phase as the formula evaluator costed it (topocc collective --phases). */
typedef struct tc_phase_eval {
    double time_s;         /* one step of the phase */
    uint32_t repeat;       /* steps in the phase */
    bool closed_form;      /* a closed form (exact); false: evaluated on the routed graph */
    uint32_t bottleneck;   /* graph: the link that limits the slowest transfer (UINT32_MAX: none) */
    char binds[96];        /* what binds: "latency", "bandwidth", or the bottleneck link's name */
} tc_phase_eval;

/* The formula evaluator phase by phase: pe[0..s->nphases) and the total. */
tc_status tc_eval_formula_phases(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, tc_phase_eval *pe,
                                 double *time_s, tc_err *err);

/* The same at n sizes (sizes[k]; the schedule as built is at
 * s->req.bytes): a phase is routed once for all sizes. times[k]. */
tc_status tc_eval_formula_sweep(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, const double *sizes,
                                size_t n, double *times, tc_err *err);
tc_status tc_eval_steps_sweep(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, const double *sizes,
                              size_t n, double *times, tc_err *err);

/* A failed endpoint aborts the job (NCCL and MPI do not survive a lost
 * rank): TC_EINVAL, one line naming the first of the p ranks (placed by
 * map, NULL: rank r on endpoint r) whose endpoint has failed; TC_OK where
 * none has. tc_evaluate and the sub-group evaluations check it. */
tc_status tc_eval_failed_ranks(const tc_topo *t, uint32_t p, const uint32_t *map, tc_err *err);

/* Whether req->algo can run on the placement map (NULL: rank r on endpoint
 * r): NCCL's algorithms take rank r as GPU r mod G of a node, node by node,
 * hier ranks r .. r + G - 1 as one node's, hier-dc as one pod's. TC_EINVAL
 * with one line saying what to place where it cannot; tc_evaluate and
 * concurrent's jobs check it. */
tc_status tc_eval_map_check(const tc_topo *t, const tc_coll_req *req, const uint32_t *map, tc_err *err);

/* The whole job: validates, resolves auto (fastest valid algorithm under the
 * mode, ties in enum order), builds, evaluates and fills res. */
/* The time of a built schedule s by o's evaluator (o->mode; flow mode
 * with o->flow's options, o->routing, no trace), as tc_evaluate times the
 * schedules it builds. */
tc_status tc_eval_sched(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err);
/* The algorithm r ran (requested: the one asked for) with its variant and
 * throttle, as tc_algo_format writes them ("rhd:order=far",
 * "scattered:throttle=8"). Returns buf. */
char *tc_result_algo_name(const tc_result *r, bool requested, char *buf, size_t len);
tc_status tc_evaluate(const tc_topo *t, const tc_coll_req *req, const tc_eval_opts *o,
                      tc_result *res, tc_err *err);

/* The same job over n sizes (req->bytes is ignored): every candidate
 * algorithm's schedule is built once and rescaled for each size, which is
 * what makes sweeps fast. res receives n results. */
tc_status tc_evaluate_sweep(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n,
                            const tc_eval_opts *o, tc_result *res, tc_err *err);
/* The checks tc_evaluate_sweep makes of its arguments before it builds or
 * times anything (ranks, sizes, the algorithm against the operation, the
 * ranks and the topology, a named algorithm's root, the routing, the rank
 * map), with its messages: what a scenario's resolution asks of a run
 * without running it. */
tc_status tc_evaluate_check(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n,
                            const tc_eval_opts *o, tc_err *err);

/* One collective run by every group of g at once (topocc/coll.h,
 * tc_groups), over n sizes (req->p: the group's size; req->bytes ignored;
 * sizes are per group, rounded to whole elements for the group's size).
 * o->rank_map places the job's g->p ranks. Auto picks, per size, the
 * fastest algorithm valid for one group (its size; along torus axes, the
 * group's torus), evaluated with every group running. formula and steps
 * evaluate the wrapper schedule (tc_sched_group: every phase on the routed
 * graph); flow runs each group as a job of its own (tc_flow_run with
 * g->ngroups jobs) for each group's completion. NCCL's algorithms are
 * refused. The lower bound is the largest over the groups of one group's
 * bound on its own endpoints. With o->flow_detail (flow, one size) the
 * winner's whole simulation is kept (its jobs are the groups). */
tc_status tc_evaluate_groups_sweep(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                                   size_t n, const tc_eval_opts *o, tc_result *res, tc_err *err);
/* The checks tc_evaluate_groups_sweep makes before it builds or times
 * anything, with its messages (as tc_evaluate_check). */
tc_status tc_evaluate_groups_check(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                                   size_t n, const tc_eval_opts *o, tc_err *err);

/* The flow jobs of a grouped run: job i is group i's inner schedule s on
 * its ranks' endpoints (map: the job's rank map, NULL: identity);
 * maps receives g->p endpoints (group by group) the jobs point into, and
 * names the jobs' names ("group N", 24 characters each). */
void tc_groups_flow_jobs(const tc_sched *s, const tc_groups *g, const uint32_t *map, uint32_t *maps,
                         char (*names)[24], tc_flow_job *jobs);

/* "library" (src/eval/library.c; docs/MODEL.md, "Each class's algorithm"):
 * what NCCL runs for an operation. tc_library_among: its MPI-style forms,
 * as tc_coll_req.among bits for auto (all-reduce: ring and dbtree;
 * all-to-all: direct, where NCCL's own is not run; the others: ring). tc_library_multirail: 1 where
 * group 0 of g (job ranks, placed by map, NULL: rank r on endpoint r) has
 * several GPUs on each of several nodes of t, 0 where not, -1 out of
 * memory. tc_library_nccl_ring: there, for all-reduce, reduce-scatter and
 * all-gather, r[i] (the forms' times at sizes[i], the groups run at once)
 * replaced by NCCL's ring (nccl-ring, Simple) where that is faster; where
 * it does not fit the groups (TC_EINVAL) r is left as it is. */
uint64_t tc_library_among(tc_op op);
/* NCCL's tree chunk: its Simple FIFO step, NCCL_BUFFSIZE 4 MiB over
 * NCCL_STEPS 8 (NVIDIA/nccl v2.21.5-1, src/init.cc:544,
 * src/include/device.h:22; src/enqueue.cc:1723-1726: one step a chunk for
 * the tree). */
#define TC_LIBRARY_TREE_CHUNK 524288.0
/* Sets req up as "library" for op: among (tc_library_among) and the tree's
 * chunk (tc_coll_req.chunk_bytes: each tree's half cut into NCCL's Simple
 * tree chunks, one for a small message, where a fixed count would pay a
 * message's overhead per chunk; NCCL's channels and LL protocols are
 * nccl-tree's, not modelled here). */
void tc_library_req(tc_coll_req *req, tc_op op);
int tc_library_multirail(const tc_topo *t, const tc_groups *g, const uint32_t *map);
tc_status tc_library_nccl_ring(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                               size_t n, const tc_eval_opts *o, tc_result *r, tc_err *err);
/* The all-to-all (req->op) of "library" on a topology of scale-up (GPU)
 * nodes: NCCL's grouped send/recv, nccl-a2a, in every group of g at once
 * (its times at sizes[i] into r[i], *done set). Where t has no scale-up
 * nodes, or nccl-a2a does not fit (a multidc; groups NCCL cannot form),
 * *done stays false and r untouched: the caller times direct. */
tc_status tc_library_nccl_a2a(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                              size_t n, const tc_eval_opts *o, tc_result *r, bool *done, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
