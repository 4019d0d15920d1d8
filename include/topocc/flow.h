/*
 * topocc/flow.h - the flow evaluator: an event-driven, flow-level simulation
 * of one or more schedules sharing one network (docs/MODEL.md, "flow").
 *
 * Every transfer of a schedule is a flow. Issued at time t0, it waits the
 * per-message overhead alpha, serialized at the sender (LogGP's o): it
 * starts at max(t0, the sender's overhead clock) + alpha and the clock moves
 * to that start, so k messages issued together start at alpha, 2 alpha, ...,
 * k alpha. It then sends its bytes at its max-min fair rate (progressive
 * filling; the rate changes whenever a flow that shares a link with it
 * starts or ends), and completes when its last byte has crossed the path: +
 * the path's latency (sum of its links' latencies). Alone on its path, the
 * only message of its sender, it takes alpha + latency + bytes / bottleneck
 * bandwidth, the steps evaluator's expression.
 *
 * Dependencies are per rank, not lock-step (tc_flow_deps): a transfer of
 * step s starts once its sender has what it forwards (its receives of
 * earlier steps are delivered), its sender's earlier sends have left (one
 * NIC queue, in step order; without it a pipelined chain or tree would send
 * all its chunks at once) and, by default, if it is larger than the eager
 * limit, its receiver has reached step s too (rendezvous: a receiver still
 * busy with an earlier step is not flooded by large messages from senders
 * that ran ahead; a small message is sent eagerly, without waiting). A slow
 * link delays only what depends on it.
 * Steps are generated lazily, so memory grows with the transfers in flight,
 * not with the schedule.
 *
 * Links with bandwidth <= 0 are down: a transfer routed over one fails with
 * "no path". Degraded links (tc_topo_degrade_link) are simply slower.
 */
#ifndef TOPOCC_FLOW_H
#define TOPOCC_FLOW_H

#include "topocc/coll.h"
#include "topocc/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    /* One path per transfer, from the routing (ecmp hash, dmodk, dor,
     * dor-positive): tc_topo_route. */
    TC_MULTIPATH_ROUTE = 0,
    /* A fluid split over every equal-cost path with equal fractions: on a
     * Clos every choice of parent on the way up to the lowest common
     * ancestor; on a torus dimension order with both directions of a tie
     * (half way round an even ring). Paths over a down link are dropped and
     * the fractions renormalised. */
    TC_MULTIPATH_SPRAY
} tc_multipath;

/* When a transfer of step s from rank a to rank b may start. "Rank x has
 * reached step s": every transfer x receives in a step before s has been
 * delivered and every transfer x sends in a step before s has been sent
 * (its last byte has left x; the delivery may still be under way). */
typedef enum {
    TC_DEPS_AUTO = 0,       /* default: a transfer of at most eager_limit_bytes as FIFO (eager),
                             * a larger one as RENDEZVOUS */
    TC_DEPS_RENDEZVOUS,     /* a and b have both reached s (b has posted its receive) */
    TC_DEPS_FIFO,           /* a has reached s; b may still be busy with earlier steps */
    TC_DEPS_RECV            /* a's receives of steps before s are delivered; nothing else */
} tc_flow_deps;

/* Default eager limit of TC_DEPS_AUTO, bytes (64 KiB): an assumption, in
 * the range of MPI stacks' eager thresholds (docs/MODEL.md, "flow"). */
#define TC_FLOW_DEFAULT_EAGER_LIMIT 65536.0

/* Default event budget: every flow start, end of sending and delivery is
 * one event (three per transfer over the network, one per local transfer). */
#define TC_FLOW_DEFAULT_EVENT_BUDGET 200000000ULL
/* Default cap on the slices of the trace file. */
#define TC_FLOW_DEFAULT_TRACE_SLICES 1000000ULL
/* Events within this relative distance of the earliest pending one (and at
 * least 1e-15 s) are handled as one batch, with one rate recomputation;
 * in a simulation of one job, on its time grid, within 64 grid units
 * (about this much of the job's estimated time; docs/MODEL.md, "Time on a
 * grid"). */
#define TC_FLOW_BATCH_REL 1e-12

typedef struct tc_flow_opts {
    tc_routing routing;        /* TC_MULTIPATH_ROUTE: the path of each transfer */
    tc_multipath multipath;
    tc_flow_deps deps;
    double eager_limit_bytes;  /* TC_DEPS_AUTO: the largest transfer sent eagerly (inclusive);
                                * 0: TC_FLOW_DEFAULT_EAGER_LIMIT */
    double rate_cap_Bps;       /* per-flow rate cap, bytes/s; 0: none */
    uint64_t event_budget;     /* 0: TC_FLOW_DEFAULT_EVENT_BUDGET */
    const char *trace_path;    /* NULL: no trace; else a Chrome trace-event JSON file */
    uint64_t trace_max_slices; /* 0: TC_FLOW_DEFAULT_TRACE_SLICES */
    tc_progress_fn progress;   /* NULL: none; else called at most every 0.25 s (the clock read every
                                * 4,096 events and every 4,096 flows the batches' solves rated) and at the end */
    void *progress_ud;
    bool no_skip;              /* true: simulate every step (no repetition skipping) */
    /* Flow contexts: a job alone on its links when it starts, whose links
     * no other job's flow touches before it ends, is timed by a simulation
     * of it alone (cached per schedule, rank map and tag) instead of event
     * by event (docs/MODEL.md, "Jobs alone on their links"). A flow that
     * comes onto such a job's links fails the run (tc_flow_ctx_solo_broken
     * says so): the caller runs it again with this off. */
    bool solo;
    /* Bounds instead of a simulation (docs/MODEL.md, "Bounds instead of a
     * simulation"): a schedule of one step (a direct all-to-all's p (p - 1)
     * messages at once), MPI-style (no NCCL protocol), one job, is not
     * simulated; its flows are routed as the simulation routes them and
     * added up per link, and the run reports an interval that holds the
     * simulation's time: the job's time_s is its lower end (the most loaded
     * link drains at its bandwidth from the senders' overhead slots on),
     * tc_flow_result.upper_s its upper end (every flow gets at least its
     * share of the most shared link on its path). Memory: per link, not
     * per flow. Anything else fails with TC_EINVAL. */
    bool bounds;
} tc_flow_opts;

typedef struct tc_flow_job {
    const tc_sched *sched;
    const uint32_t *rank_map;  /* rank -> endpoint; NULL: rank r on endpoint r */
    double start_s;            /* >= 0: when the job's ranks issue their first sends */
    const char *name;          /* the job's name in the trace (NULL: "job N") */
    uint32_t tag;              /* a class the caller gives it, for tc_flow_ctx_blame (0 by default) */
} tc_flow_job;

typedef struct tc_flow_job_result {
    double start_s, finish_s;  /* finish: the last transfer's completion (start if none) */
    double time_s;             /* finish - start */
    /* Over the ranks, the time (from the job's start) of each rank's last
     * completed transfer, sent or received (0 for a rank without any). */
    double rank_finish_min_s, rank_finish_median_s, rank_finish_max_s;
    uint64_t transfers;        /* transfers completed, local copies included */
} tc_flow_job_result;

typedef struct tc_link_load {
    uint32_t link;
    double bytes;              /* carried over the run */
    double utilisation;        /* bytes / (bw * makespan) */
} tc_link_load;

#define TC_FLOW_HOT_LINKS 10

typedef struct tc_flow_result {
    size_t njobs;
    tc_flow_job_result *jobs;  /* njobs, in the order given */
    uint64_t events;           /* for all ranks: where ranks were folded by symmetry, the simulated times the
                                * copies they stand for (fold_copies) */
    uint64_t events_simulated; /* the events simulated, what event_budget bounds: events without the fold */
    uint64_t batches;          /* rate recomputations */
    double makespan_s;         /* last finish - first start */
    tc_link_load hot[TC_FLOW_HOT_LINKS]; /* busiest first: most bytes for the link's bandwidth */
    size_t nhot;
    double mean_utilisation;   /* over the links that carried traffic */
    uint64_t trace_slices;     /* slices written */
    bool trace_truncated;      /* more transfers than trace_max_slices */
    /* Repetition skipping (flow.h, "Repeating state"): steps of the job
     * simulated event by event and steps advanced over as repeats, the
     * first step at which a repetition was found (UINT32_MAX: none), and
     * when skipping was off, why ("--no-skip", "tracing", "several jobs";
     * NULL: it was on). */
    uint64_t steps_simulated, steps_skipped;
    uint32_t repeat_from_step;
    /* Of the steps skipped, those at the end that were not simulated at
     * all: a repeat whose flows shared no link carried on to the last step
     * (docs/MODEL.md, "To the end"); 0: none. */
    uint64_t steps_to_end;
    const char *skip_off;
    /* Rank symmetry (docs/MODEL.md, "Rank symmetry"): a translation of the
     * ranks by fold_ranks mapped the run onto itself, so ranks
     * 0..fold_ranks-1 were simulated, each standing for fold_copies ranks
     * (0, 0: not folded; fold_off says why: "--no-skip", "tracing",
     * "several jobs", or that no translation was a symmetry). */
    uint32_t fold_ranks, fold_copies;
    const char *fold_off;
    /* tc_flow_opts.bounds: nothing was simulated (no events, no rank
     * finish times); the simulation's time lies in [jobs[0].time_s,
     * upper_s]. */
    bool bounded;
    double upper_s;
} tc_flow_result;

/* Simulates njobs (>= 1) schedules at once on t. Fails with TC_EINVAL (and
 * one line in err) for: an eager limit below 0 or not a number; a rank_map
 * entry beyond the endpoints; a schedule with more ranks than endpoints
 * (without a map); a transfer to or from a rank beyond the schedule's; two
 * endpoints with no path (a link with bw <= 0 on it); a run past the event
 * budget; a schedule whose dependencies can never be met; a trace file that
 * cannot be written. On success res owns res->jobs (tc_flow_result_free).
 * Never blocks: the budget bounds the work. */
tc_status tc_flow_run(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                      tc_flow_result *res, tc_err *err);
void tc_flow_result_free(tc_flow_result *res);

/* Estimated peak memory of tc_flow_run on these jobs, bytes: what a run
 * is refused on before it starts when it exceeds the memory limit. */
double tc_flow_mem_estimate(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o);

/* The time of each job run alone (start 0, no trace), into alone_s[njobs]:
 * with tc_flow_run on all of them, slowdown_i = res.jobs[i].time_s /
 * alone_s[i]. */
tc_status tc_flow_alone(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                        double *alone_s, tc_err *err);

/* ---- a simulation that jobs join while it runs ---------------------------
 * For a caller with its own events (a training timeline's compute): it adds
 * a job when its data is ready, runs the network until its next own event
 * or until a job completes, and reacts. Same model as tc_flow_run (a run
 * with the same jobs at the same start times gives the same times), without
 * repetition skipping, rank folding or a trace. Jobs whose NCCL protocol
 * caps the rate are refused unless the cap equals the options' rate cap. */
typedef struct tc_flow_ctx tc_flow_ctx;

tc_status tc_flow_ctx_new(const tc_topo *t, const tc_flow_opts *o, tc_flow_ctx **out, tc_err *err);
/* Adds a job starting at max(job->start_s, the time reached); its schedule
 * and rank map must live as long as the context. *id numbers jobs from 0. */
tc_status tc_flow_ctx_add(tc_flow_ctx *c, const tc_flow_job *job, uint32_t *id, tc_err *err);
/* Runs until the time `until` (INFINITY: as long as anything is pending),
 * stopping early at the first batch of events in which jobs complete:
 * *now is the time reached, done[0 .. *ndone) the jobs that completed then
 * (at most cap; the others are reported by the next call, at the same
 * time). Fails as tc_flow_run does (event budget, no path, deadlock: a job
 * that nothing is left to advance when the run ends). */
tc_status tc_flow_ctx_run(tc_flow_ctx *c, double until, uint32_t *done, size_t cap, size_t *ndone, double *now,
                          tc_err *err);
/* A job's finish (its last delivery) and start; NAN for an unknown id. */
double tc_flow_ctx_finish(const tc_flow_ctx *c, uint32_t id);
/* Whether the context failed because a flow came onto the links of a job
 * timed alone (tc_flow_opts.solo): the run is to be made again without. */
bool tc_flow_ctx_solo_broken(const tc_flow_ctx *c);
/* The jobs added, those timed alone, and the simulations of one job that
 * timed them (the rest came from the cache). */
void tc_flow_ctx_solo_count(const tc_flow_ctx *c, uint64_t *added, uint64_t *alone, uint64_t *sims);
double tc_flow_ctx_start(const tc_flow_ctx *c, uint32_t id);
void tc_flow_ctx_free(tc_flow_ctx *c);

/* Blame: which links held back which jobs. Switched on before the first
 * job is added, for tags 0 .. ntags - 1 (tc_flow_job.tag). Every flow's
 * time sending is split into intervals of constant rate r; an interval of
 * dt costs dt (1 - r / r_alone), r_alone the rate it would get alone (the
 * smallest bandwidth over weight on its path, within the rate cap), to
 * the link that set r (its bottleneck under max-min). So a flow that
 * never shares a link loses nothing, and lost time sums flow-seconds.
 * tc_flow_ctx_lost: the lost flow-seconds of tag's flows held back by
 * link (UINT32_MAX: all links); tc_flow_ctx_sent: the flow-seconds its
 * flows spent sending; tc_flow_ctx_tag_bytes: the bytes tag's flows put on
 * link. 0 for a tag out of range or blame off. */
tc_status tc_flow_ctx_blame(tc_flow_ctx *c, uint32_t ntags, tc_err *err);
double tc_flow_ctx_lost(const tc_flow_ctx *c, uint32_t tag, uint32_t link);
double tc_flow_ctx_sent(const tc_flow_ctx *c, uint32_t tag);
double tc_flow_ctx_tag_bytes(const tc_flow_ctx *c, uint32_t tag, uint32_t link);

/* Convenience: the time of one schedule alone (tc_flow_run with one job at
 * time 0 and no trace), the shape of tc_eval_steps. */
tc_status tc_flow_time(const tc_topo *t, const tc_sched *s, const uint32_t *rank_map, const tc_flow_opts *o,
                       double *time_s, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
