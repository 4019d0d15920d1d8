/*
 * topocc/timeline.h - a training iteration as a DAG of compute and
 * communication tasks on one or several ranks, run by an exact event-driven
 * simulation with compute/communication contention (docs/MODEL.md,
 * "Training: the iteration timeline").
 *
 * Each rank has one compute stream and any number of communication streams
 * (channels: DP buckets on one, TP on another, PP sends on a third...).
 * A stream runs its tasks one at a time; a task starts when its stream is
 * free for it and all its dependencies (on any rank) have finished.
 *
 * Contention is per rank (the simple model of ../reference/overlap.md:
 * Lee et al., arXiv 2507.03114; ConCCL, Agrawal et al., arXiv 2412.14335):
 * while the rank has communication in flight, its compute progresses at
 * 1/(1+s_c); while it computes, its communication progresses at 1/(1+s_m).
 * Communication offloaded to copy engines (dma) has its own s_c_dma, s_m_dma.
 * Rates change only when the set of running tasks changes, so progress is
 * piecewise linear and every completion time is computed exactly.
 *
 * tc_iter_timeline (workload.h) is the older, DDP-only timeline that
 * `topocc compress` uses; this one is general.
 */
#ifndef TOPOCC_TIMELINE_H
#define TOPOCC_TIMELINE_H

#include "topocc/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compute slowdown while communication is in flight: 18.9% on average over
 * GPT and LLaMA on 4-GPU H100/A100/MI250/MI210 nodes (Lee et al., arXiv
 * 2507.03114). */
#define TC_TL_S_C_DEFAULT 0.19
/* Communication slowdown while compute runs: none by default (assumed; the
 * sources measure the end-to-end effect, which s_c carries). */
#define TC_TL_S_M_DEFAULT 0.0
/* Copy-engine (DMA) collectives (assumed, derived from ConCCL): ConCCL
 * realizes 72% of the ideal overlap gain with DMA collectives against 21%
 * with compute-unit collectives, i.e. DMA loses (1-0.72)/(1-0.21) = 0.354
 * of what the default loses. With s_m = 0 and equal compute and
 * communication, this model realizes 1/(1+2 s_c) of the ideal gain: 0.725
 * at s_c = 0.19 (it loses 0.275); a loss of 0.354 * 0.275 = 0.0975 gives
 * 1/(1+2 s) = 0.9025, s = 0.054. */
#define TC_TL_S_C_DMA_DEFAULT 0.054
#define TC_TL_S_M_DMA_DEFAULT 0.0

typedef enum { TC_TL_COMPUTE = 0, TC_TL_COMM = 1 } tc_tl_kind;

/* Which task a free stream runs next. */
typedef enum {
    /* Its queue in order ((prio, index) ascending), head first: a head that
     * is not ready blocks the stream (a CUDA/NCCL stream). The default. */
    TC_TL_IN_ORDER = 0,
    /* The first ready task of its queue in (prio, index) order. */
    TC_TL_READY_FIRST = 1,
    /* Of the ready tasks of lowest prio, the one ready first (then the
     * lowest index): a priority queue served first come, first served. */
    TC_TL_PRIORITY = 2
} tc_tl_policy;

typedef struct tc_tl_task {
    tc_tl_kind kind;
    uint32_t rank;
    uint32_t stream;    /* communication stream on its rank (compute: 0, its one stream) */
    bool dma;           /* communication on copy engines (s_c_dma, s_m_dma) */
    int32_t prio;       /* order within its stream: lower first, then task index */
    uint8_t stream_policy; /* 0: the run's policy (tc_tl_opts); 1 + a tc_tl_policy: the
                              policy of this task's stream (its tasks must agree) */
    bool ext;           /* communication whose end an external model decides (tc_tl_ext):
                           dur_s is ignored, s_m does not apply */
    bool probe;         /* simulated, but left out of every figure of the result (a
                           look-ahead: e.g. the next iteration's first forward) */
    bool preempt;       /* may be paused, in the overlapped run, when a task of lower
                           prio becomes ready on its stream; it resumes where it
                           stopped (TC_TL_READY_FIRST and TC_TL_PRIORITY only) */
    double dur_s;       /* nominal duration, alone on the rank */
    uint32_t *deps;     /* tasks that must finish first (owned by the DAG) */
    uint32_t ndeps, dcap;
    char name[24];      /* optional label */
    /* written by tc_tl_run */
    double start_s, end_s;               /* with overlap and contention */
    double serial_start_s, serial_end_s; /* the serial run */
} tc_tl_task;

/* A DAG under construction. Builder errors (allocation, a bad index) are
 * kept and returned by tc_tl_run, so calls need not be checked one by one. */
typedef struct tc_tl_dag {
    tc_tl_task *task;
    size_t n, cap;
    tc_status status;
    char msg[TC_ERR_LEN];
} tc_tl_dag;

void tc_tl_init(tc_tl_dag *d);
void tc_tl_free(tc_tl_dag *d);
/* Appends a task (prio 0, not dma, no dependency); returns its index, or
 * UINT32_MAX after an allocation failure (kept in d). */
uint32_t tc_tl_add(tc_tl_dag *d, tc_tl_kind kind, uint32_t rank, uint32_t stream, double dur_s, const char *name);
/* Task `task` waits for task `on` (any rank, any index). */
void tc_tl_dep(tc_tl_dag *d, uint32_t task, uint32_t on);

/* An external model of the communication tasks marked ext (the flow
 * simulator, driven by the timeline): each run (the overlapped one, then
 * the serial one) calls begin once; a task marked ext calls start when it
 * starts; the timeline then asks run to advance the model to at most
 * `until` (its own next event, INFINITY when it has none), stopping early
 * when tasks complete: *now the time reached, done[0 .. *n) the tasks that
 * ended then (at most cap). Such a task counts as communication in flight
 * for its rank's compute (s_c, s_c_dma). */
typedef struct tc_tl_ext {
    void *ud;
    tc_status (*begin)(void *ud, bool serial, tc_err *err);
    tc_status (*start)(void *ud, uint32_t task, double t, tc_err *err);
    tc_status (*run)(void *ud, double until, uint32_t *done, size_t cap, size_t *n, double *now, tc_err *err);
    /* After a failed run: true when the model can make it again another
     * way (a flow context that timed jobs alone, tc_flow_opts.solo): the
     * run starts over with begin. NULL: never. */
    bool (*retry)(void *ud);
} tc_tl_ext;

typedef struct tc_tl_opts {
    double s_c, s_m;         /* compute / communication slowdown while the other runs */
    double s_c_dma, s_m_dma; /* the same for copy-engine communication */
    tc_tl_policy policy;
    const tc_tl_ext *ext;    /* NULL: no task may be marked ext */
} tc_tl_opts;

/* The defaults above, TC_TL_IN_ORDER. */
void tc_tl_opts_default(tc_tl_opts *o);

/* Per rank; nominal = durations as given, busy = measured on the timeline.
 * Every figure lies within [0, iter_s] of the whole DAG, and
 * iter_s = compute_busy_s + exposed_s + idle_s. */
typedef struct tc_tl_rank {
    double compute_s;      /* nominal compute */
    double comm_s;         /* nominal communication, all streams */
    double compute_busy_s; /* time a compute task runs (compute_s plus its slowdown) */
    double comm_busy_s;    /* time at least one communication task runs */
    double overlap_s;      /* both at once */
    double exposed_s;      /* communication runs, compute does not (comm_busy_s - overlap_s) */
    double idle_s;         /* neither runs (waiting on another rank, or done early) */
    double slowdown_s;     /* compute_busy_s - compute_s: what contention cost the compute */
    double end_s;          /* the rank's last task end */
    double serial_end_s;   /* the same in the serial run */
} tc_tl_rank;

typedef struct tc_tl_result {
    double iter_s;         /* the last task end (the iteration starts at 0) */
    double serial_s;       /* the same DAG with overlap disabled */
    /* Over ranks, the largest (one rank: its own figures). */
    double compute_s, comm_s, compute_busy_s, exposed_s, slowdown_s;
    double slowdown;       /* compute_busy_s / compute_s - 1 (0 without compute) */
    /* (serial_s - iter_s) / (serial_s - max(compute_s, comm_s)); 1 when
     * there is nothing to hide (no communication, or the denominator is
     * <= 1e-12 of serial_s); negative when the overlapped run is slower
     * than the serial one. */
    double efficiency;
    uint32_t nranks;       /* highest task rank + 1 */
    tc_tl_rank *rank;      /* nranks entries (tc_tl_result_free) */
} tc_tl_result;

/*
 * Runs d twice, writing each task's times: with overlap (streams run
 * concurrently, contention as above) and serial (overlap disabled: on each
 * rank one task at a time whatever its stream: first a ready communication
 * task that a task of another rank depends on (a send; lowest index), else a
 * compute task when one can start, else the communication task of lowest
 * index; no contention,
 * since nothing overlaps on a rank; ranks still run concurrently). Stream
 * queues and readiness are the same in both runs. o NULL: the defaults.
 * Fails (TC_EINVAL) on a bad task or option, or when tasks remain that can
 * never start (a dependency cycle, or an in-order queue whose head waits on
 * a task behind it). out->rank is malloc'ed.
 */
tc_status tc_tl_run(tc_tl_dag *d, const tc_tl_opts *o, tc_tl_result *out, tc_err *err);
void tc_tl_result_free(tc_tl_result *r);

/* Writes the tasks of a run DAG as a Chrome trace (the JSON array format
 * Perfetto and chrome://tracing read) to path, atomically: one process per
 * rank, named rank_name(ud, rank); one thread per stream (compute, then
 * each communication stream), named stream_name(ud, rank, stream) (stream
 * UINT32_MAX: the compute stream); a complete event per task of positive
 * duration from its start to its end (a preempted task spans its pause),
 * named by the task, in microseconds. Probe tasks are left out. serial: the
 * serial run's times (overlap disabled) instead of the overlapped run's. */
tc_status tc_tl_write_chrome(const tc_tl_dag *d, bool serial, const char *path,
                             const char *(*rank_name)(void *, uint32_t, char *, size_t),
                             const char *(*stream_name)(void *, uint32_t, uint32_t), void *ud, tc_err *err);

/* ---- pipeline parallelism: 1F1B ----------------------------------------- */

typedef struct tc_tl_pipe {
    uint32_t stages;    /* p: ranks rank0 .. rank0 + p - 1 */
    uint32_t micro;     /* m: micro-batches per iteration */
    uint32_t chunks;    /* v: model chunks per rank (interleaved 1F1B); 0 or 1: plain 1F1B */
    double fwd_s;       /* forward of one micro-batch on one stage (all its chunks) */
    double bwd_s;       /* backward of the same */
    double send_s;      /* one activation or gradient send between ranks (0: none) */
    uint32_t rank0;
    uint32_t stream;    /* communication stream of the sends */
} tc_tl_pipe;

/*
 * Appends the 1F1B schedule (PipeDream-Flush; Narayanan et al., SC'21,
 * section 2.2) in the order of Megatron-LM's schedules: on stage r,
 * min(p - r - 1, m) warm-up forwards, then one forward and one backward in
 * turn, then the remaining backwards. With v > 1 chunks, the interleaved
 * schedule: virtual stage k = c p + r holds chunk c of rank r, forwards
 * walk through chunks in groups of p micro-batches, warm-up is
 * (p - r - 1) * 2 + (v - 1) p (all m v when m = p), m must be a multiple
 * of p. Each chunk runs fwd_s / v and bwd_s / v. A forward waits for the
 * previous virtual stage's forward of its micro-batch, a backward for the
 * next one's backward (the last one's for its own forward); across ranks
 * through a send task of send_s on the sender's stream `stream`.
 * idx (optional, 2 m v p entries): idx[2 (k m + j) + b] is the index of
 * micro-batch j on virtual stage k, forward (b = 0) or backward (b = 1).
 * With equal stages and send_s = 0 each rank is idle (p-1)/(v m + p - 1)
 * of the iteration: (p-1)/(m+p-1) for plain 1F1B.
 */
tc_status tc_tl_pipeline_1f1b(tc_tl_dag *d, const tc_tl_pipe *pp, uint32_t *idx, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
