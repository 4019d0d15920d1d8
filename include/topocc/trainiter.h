/*
 * topocc/trainiter.h - one training iteration of a 3D-parallel job
 * (data, tensor and pipeline parallelism, ZeRO / FSDP), built as a
 * timeline (topocc/timeline.h) and run with compute/communication
 * contention (docs/MODEL.md, "Training: one iteration").
 *
 * The job: dp x tp x pp ranks (ep expert-parallel ranks inside DP), mapped
 * to groups by an order (tc_ti_group_members; default tp-dp-pp, as
 * Megatron-LM). Ranks in the same TP and DP position behave alike, so the timeline holds
 * one rank per pipeline stage (pp ranks); every collective's time comes
 * from the caller (tc_ti_comm_fn), which evaluates it on the real network
 * with every group running at once.
 */
#ifndef TOPOCC_TRAINITER_H
#define TOPOCC_TRAINITER_H

#include "topocc/coll.h"
#include "topocc/memory.h"
#include "topocc/timeline.h"
#include "topocc/compress.h"
#include "topocc/zoo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The groups a collective runs over. */
typedef enum {
    TC_TI_TP = 0,   /* tp consecutive ranks (block=tp) */
    TC_TI_DP,       /* the ranks that differ in the dp coordinate: one per DP replica */
    TC_TI_PP,       /* a point-to-point send between neighbouring stages */
    TC_TI_EP,       /* expert parallelism: ep ranks of one DP group (its innermost ep positions) */
    TC_TI_EDP,      /* expert data parallelism: the dp / ep ranks holding the same experts */
    TC_TI_EMB,      /* Megatron-LM's embedding group: the first and the last pipeline stage
                       of equal tp and dp coordinates (a tied embedding's two copies) */
    TC_TI_OUTER     /* across model replicas: the ranks of equal coordinates in every replica (local
                       SGD's and DiLoCo's outer all-reduce; not a group of one iteration) */
} tc_ti_group;

const char *tc_ti_group_name(tc_ti_group g);   /* "tp", "dp", "pp", "ep", "edp", "emb", "outer" */

/* Parses an order of the parallel dimensions into dim[0..2], innermost
 * first: "tp", "dp" and "pp" each once, joined by '-' ("tp-dp-pp", the
 * default of Megatron-LM's initialize_model_parallel, order
 * "tp-cp-ep-dp-pp" without context parallelism). Rank
 * = sum over k of coordinate(dim[k]) x product of the degrees of dim[0..k).
 * Expert parallelism lies inside DP: a DP coordinate is e + ep f, e the
 * rank in its expert group. False when malformed. */
bool tc_par_order_parse(const char *s, tc_ti_group dim[3]);

/* The groups of kind g of a dp x tp x pp job (expert parallelism ep inside
 * DP, 0 or 1: none) whose ranks follow `order`: TP groups vary the tp
 * coordinate, DP groups the dp coordinate, EP groups e and EDP groups f
 * of dp = e + ep f; each group's ranks in increasing coordinate, groups in
 * the order of the other coordinates (pp outermost, then tp, then the other
 * part of dp). For TC_TI_PP: the two ranks of the first send, stage 0 to
 * stage 1 of the pipeline with all other coordinates 0; TC_TI_EMB: for each
 * tp, then dp, the ranks of stage 0 and stage pp - 1. members has room for
 * dp tp pp ranks (2 for TC_TI_PP); *size is the group size. */
tc_status tc_ti_group_members(const tc_ti_group order[3], uint32_t dp, uint32_t tp, uint32_t pp, uint32_t ep,
                              tc_ti_group g, uint32_t *members, uint32_t *size, tc_err *err);
/* The rank at coordinates (dp d, tp t, pp p) under order. */
uint32_t tc_ti_rank(const tc_ti_group order[3], uint32_t dp, uint32_t tp, uint32_t pp, uint32_t d, uint32_t t,
                    uint32_t p);

/* Time of one collective `op` of `bytes` (nccl-tests convention: the whole
 * buffer for all-reduce, the gathered output for all-gather, the input for
 * reduce-scatter; for TC_TI_PP the message) run by every group of kind g at
 * once. For g = TC_TI_PP op is TC_OP_BROADCAST by convention: it means one
 * point-to-point send of `bytes` from a stage to the next (an activation
 * forward, its gradient backward), not a collective. The builder asks once
 * per distinct (op, g, bytes). */
typedef tc_status (*tc_ti_comm_fn)(void *ud, tc_op op, tc_ti_group g, double bytes, double *time_s, tc_err *err);

typedef struct tc_ti_accel {
    double flops;            /* peak dense 16-bit FLOP/s */
    double mem_Bps;          /* memory bandwidth */
    double mem_bytes;        /* capacity (0: not checked) */
    double achievable;       /* fraction of peak FLOP/s a matmul reaches (e.g. 0.6; assumed unless sourced) */
} tc_ti_accel;

/* Flow co-simulation (tc_ti_cfg.flow): every communication task's end is
 * the caller's network model's (timeline.h, tc_tl_ext). begin: a run (the
 * overlapped one, then the serial one) starts; start: communication task
 * `task` of pipeline stage `stage` starts at t: op over the groups g of
 * that stage (for TC_TI_PP a send to stage + 1 when up, else stage - 1;
 * for TC_TI_EMB the stage's pairs), bytes in nccl-tests size; run: as
 * tc_tl_ext's. */
typedef struct tc_ti_flow {
    void *ud;
    tc_status (*begin)(void *ud, bool serial, tc_err *err);
    tc_status (*start)(void *ud, uint32_t task, tc_op op, tc_ti_group g, double bytes, uint32_t stage, bool up,
                       double t, tc_err *err);
    tc_status (*run)(void *ud, double until, uint32_t *done, size_t cap, size_t *n, double *now, tc_err *err);
    bool (*retry)(void *ud); /* tc_tl_ext's; NULL: never */
} tc_ti_flow;

typedef struct tc_ti_cfg {
    uint32_t dp, tp, pp;
    uint32_t ep;              /* expert parallelism inside DP (0 or 1: none): a mixture of
                                 experts' experts split over ep ranks, ep dividing dp and
                                 the experts, as Megatron-LM's expert groups */
    double capacity_factor;   /* MoE with ep > 1: > 0, each expert takes at most C x its even
                                 share of the tokens, padded to it (Switch Transformer); 0:
                                 dropless, volumes as routed */
    double zipf;              /* routing skew: expert i (from 1) gets a share ~ 1 / i^zipf
                                 (0: uniform); experts placed on ranks in contiguous blocks */
    uint32_t micro_batches;   /* m, per iteration per pipeline */
    uint32_t micro_batch;     /* b, sequences (samples for a CNN) per micro-batch */
    uint32_t seq;             /* 0: the model's */
    int zero;                 /* 0 (DDP), 1, 2, 3 (FSDP FULL_SHARD) */
    bool seq_parallel;        /* TP's all-reduces become reduce-scatter + all-gather */
    tc_recompute recompute;
    bool eager_attention;  /* attention scores stored (no fused kernel): Korthikanti's 5as/h term */
    uint32_t virtual_stages;  /* interleaved 1F1B: v chunks per stage (0 or 1: plain 1F1B) */
    double bucket_bytes;      /* DDP gradient bucket cap (0: 25 MiB, as PyTorch's bucket_cap_mb) */
    double first_bucket_bytes; /* the rank's first bucket's limit (0: 1 MiB, PyTorch's
                                  dist._DEFAULT_FIRST_BUCKET_BYTES, whatever the cap) */
    double grad_bytes;        /* bytes per gradient element, on the wire and in memory (0: 2,
                                 bf16; 4: fp32, Megatron-LM's default for bf16 training) */
    bool overlap;             /* false: every rank runs one task at a time (the serial run) */
    int comm_order;           /* DDP/ZeRO-1/2 gradient buckets: TC_TI_BACKWARD_ORDER (0, PyTorch
                                 DDP: first ready, first sent; one optimizer step after all) or
                                 TC_TI_FORWARD_ORDER (1, P3 / ByteScheduler: the bucket the next
                                 forward needs first goes first, preempting, each bucket
                                 updated as soon as it is reduced) */
    bool dma;                 /* every communication task on copy engines (contention.s_c_dma, s_m_dma) */
    tc_tl_opts contention;    /* s_c, s_m, ... (tc_tl_opts_default) */
    const tc_ti_flow *flow;   /* not NULL: communication timed by the caller's network model
                                 while the timeline runs (the durations asked of comm_fn stay
                                 the nominal ones) */
    const tc_codec_spec *codec[3]; /* compression per traffic class, NULL: none (TC_TI_CODEC_*):
                                 DP gradient buckets (ZeRO 0: the DDP hook's place; any codec),
                                 PP activation sends and EP token all-to-alls (elementwise:
                                 fp16, bf16, int8, int4); encode and decode are compute
                                 tasks on the timeline (PP: inside the send, below) */
    tc_tl_dag *keep;          /* not NULL: receives the run DAG (the caller frees it, tc_tl_free);
                                 one rank per pipeline stage, streams as tc_ti_stream_name names */
} tc_ti_cfg;

/* The communication stream s of a rank of tc_ti_run's DAG: "dp" (gradient
 * buckets, FSDP reduce-scatters, the embedding all-reduce), "tp", "pp"
 * (sends), "fsdp all-gather", "ep all-to-all"; UINT32_MAX: "compute". */
const char *tc_ti_stream_name(uint32_t s);

enum { TC_TI_BACKWARD_ORDER = 0, TC_TI_FORWARD_ORDER = 1 };
enum { TC_TI_CODEC_DP = 0, TC_TI_CODEC_PP = 1, TC_TI_CODEC_EP = 2 };

/* Whether codec c may compress activations or tokens (an elementwise cast
 * or quantizer: fp16, bf16, int8, int4). */
bool tc_ti_codec_elementwise(const tc_codec_spec *c);

/* Fills c with the defaults above (1 x 1 x 1, m = 1, b = 1, ZeRO 0,
 * overlap on, default contention). */
void tc_ti_cfg_default(tc_ti_cfg *c);

/* One class of communication per iteration, on the slowest stage's rank. */
typedef struct tc_ti_comm {
    double nominal_s;        /* sum of its collectives' times, as evaluated */
    double bytes;            /* sum of their sizes (nccl-tests convention) */
    uint32_t count;          /* collectives per iteration */
} tc_ti_comm;

typedef struct tc_ti_result {
    double iter_s;           /* the iteration with overlap (cfg.overlap) */
    double serial_s;         /* the same with overlap disabled */
    /* The busiest rank over its period (docs/MODEL.md, "The breakdown over
     * the period"): compute_s + slowdown_s + exposed_s + bubble_s = iter_s. */
    double compute_s;        /* nominal compute of the busiest rank */
    double exposed_s;        /* communication not hidden behind compute (busiest rank) */
    double bubble_s;         /* idle time of the busiest rank (waiting on other stages; 0 with pp = 1) */
    double slowdown_s;       /* what contention cost the busiest rank's compute */
    double optimizer_s;      /* the optimizer step (memory-bound), part of compute_s */
    double efficiency;       /* overlap efficiency (timeline.h) */
    double slowdown;         /* compute slowdown from contention: slowdown_s / compute_s */
    double mfu;              /* model FLOPs / (iter_s x ranks x peak) */
    double tokens_per_s;     /* global batch tokens (samples for a CNN) / iter_s */
    tc_ti_comm tp, dp, pp, ep;   /* dp includes the expert gradients' (EDP) collectives */
    tc_mem mem;              /* memory per device (tc_mem_estimate) */
    bool fits;               /* mem.total within the capacity (true when a->mem_bytes is 0) */
} tc_ti_result;

/*
 * Builds and runs one iteration of m under c on accelerators a, asking fn
 * for every collective's time. Fails (TC_EINVAL, one line) on degrees of 0,
 * micro-batches that the pipeline cannot use (interleaving needs m a
 * multiple of pp), a TP degree that does not divide the heads, a PP degree
 * above the layers (pp x virtual stages above the layers), ZeRO outside 0-3,
 * a CNN with tp or pp above 1, an accelerator without positive peak FLOP/s
 * and memory bandwidth or with achievable outside (0, 1], ep above 1 on a
 * model without experts or not dividing its experts and dp, a negative
 * capacity factor or skew, a timeline above about 3e6 tasks. fn may be NULL
 * when the job needs no communication (1 x 1 x 1).
 */
tc_status tc_ti_run(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *c, tc_ti_comm_fn fn, void *ud,
                    tc_ti_result *out, tc_err *err);
/* The refusals tc_ti_run makes of its arguments before it builds the
 * iteration, with its messages, and nothing run. */
tc_status tc_ti_check(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *c, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
