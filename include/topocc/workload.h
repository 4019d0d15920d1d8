/*
 * topocc/workload.h - one data-parallel training iteration on a network:
 * a model zoo, gradient buckets that become ready during the backward pass,
 * their encode / collective(s) / decode through a codec, and the time to a
 * target accuracy that follows from it.
 *
 * The model (docs/MODEL.md, "Gradient compression, end to end"): PyTorch
 * DDP's bucketed all-reduce overlapped with the backward pass (Li et al.,
 * "PyTorch Distributed", VLDB 2020), the codec hooks applied per bucket, and
 * the utility measure of Han et al. (HotNets 2024) and Agarwal et al. (MLSys
 * 2022): time to accuracy against a 16-bit all-reduce baseline.
 */
#ifndef TOPOCC_WORKLOAD_H
#define TOPOCC_WORKLOAD_H

#include "topocc/compress.h"
#include "topocc/eval.h"
#include "topocc/timeline.h"
#include "topocc/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PyTorch DDP's default bucket_cap_mb = 25, in MiB (25 * 1024 * 1024 bytes). */
#define TC_DDP_BUCKET_BYTES (25.0 * 1048576.0)
/* Default model FLOPs utilisation where a model does not state its own. */
#define TC_DEFAULT_MFU 0.40

/* ---- model zoo ---------------------------------------------------------- */

typedef struct tc_model {
    char name[64];          /* "resnet50", or "custom" */
    double params;          /* parameters; gradients are float32, 4 bytes each */
    uint32_t layers;        /* layers with parameters, assumed equal in size */
    double flops_sample;    /* training FLOPs (forward + backward) per sample; 0 for a custom model */
    uint32_t batch;         /* samples per worker per iteration; 0 for a custom model */
    double flops_iter;      /* training FLOPs per iteration per worker (flops_sample * batch) */
    double mfu;             /* model FLOPs utilisation assumed for this model */
    double train_samples;   /* samples of the reference training run (0: use steps) */
    double steps;           /* custom: baseline steps to the target (default 10000); zoo: 0 */
    const char *source;     /* where the figures come from */
} tc_model;

/* The zoo as stored (flops_iter is filled in by tc_model_parse). */
size_t tc_model_zoo_count(void);
const tc_model *tc_model_zoo_get(size_t i);

/* Parses a zoo name with optional overrides ("resnet50", "bert-large:batch=16")
 * or a custom model "params=25.6M,layers=54,flops=6.3T[,steps=N]" (flops per
 * iteration per worker, forward + backward; K M G T P suffixes or 1e9 forms). */
tc_status tc_model_parse(const char *s, tc_model *out, tc_err *err);

/* Baseline steps to the target for w workers: train_samples / (batch * w),
 * or the custom model's steps. */
double tc_model_baseline_steps(const tc_model *m, uint32_t workers);

/* The parameter tensors of the zoo model of m's name (topocc/zoo.h), as
 * PyTorch's powerSGD_hook views them (rows = shape[0], cols = the rest), in
 * registration order, a transformer's blocks expanded layer by layer (each
 * block's tensors, then the next block's). A custom model has no shapes:
 * *n = 0 and *out NULL. *out is malloc'ed (free()). */
tc_status tc_model_tensors(const tc_model *m, tc_codec_tensor **out, size_t *n, tc_err *err);
/* The same tensors and *work (malloc'ed, n entries): each one's elements
 * where it multiplies per token (its share of the backward pass's matrix
 * products), 0 for norms, biases and the embedding's lookup; *head: the
 * tied LM head's vocab x hidden (multiplied first in the backward pass by
 * the embedding's matrix), 0 untied. */
tc_status tc_model_tensor_work(const tc_model *m, tc_codec_tensor **out, double **work, double *head, size_t *n,
                               tc_err *err);

/* ---- the iteration timeline -------------------------------------------- */

/* One gradient bucket on the timeline. Inputs first, then what
 * tc_iter_timeline writes. */
typedef struct tc_iter_bucket {
    double bytes;       /* float32 gradient bytes */
    double ready_frac;  /* share of the backward pass done when the bucket's gradients are complete, (0, 1] */
    double enc_s;       /* encode time on the codec engine */
    double comm_s;      /* network time: all its collectives, one after the other */
    double dec_s;       /* decode time on the codec engine */
    /* outputs */
    double ready_at, enc_end, comm_start, comm_end, done_at;
} tc_iter_bucket;

typedef struct tc_iter_time {
    double fwd_s, bwd_s;   /* pure compute */
    double compute_s;      /* fwd_s + bwd_s */
    double bwd_end_s;      /* when the backward pass finished (delayed by codec work unless offloaded) */
    double iter_s;         /* the backward pass and every bucket done */
    double exposed_s;      /* iter_s - compute_s: communication and codec work not hidden */
    double codec_s;        /* encode + decode, all buckets */
    double comm_s;         /* network time, all buckets */
    double serial_s;       /* the same iteration with nothing overlapped (timeline.h) */
    double slowdown_s;     /* what contention added to the compute and codec work */
} tc_iter_time;

/*
 * Runs one iteration: forward [0, fwd]; the backward pass does bwd seconds
 * of work, and bucket i is ready when ready_frac[i] of it is done (buckets in
 * order, ready_frac non-decreasing). A ready bucket is encoded, sent (the
 * network carries one bucket at a time, in order) and decoded. Encode and
 * decode tasks run one at a time, first come first served (a decode first
 * on a tie), on the codec engine: the accelerator itself, where a task
 * pauses the backward pass for its duration (offload false), or a separate
 * copy engine (offload true). The iteration ends when the backward pass and
 * every bucket are done. It runs on the general timeline (timeline.h) with
 * the contention factors c (NULL or all 0: none): while a collective is in
 * flight, compute and codec work on the accelerator progress at
 * 1/(1+s_c), and so on.
 */
tc_status tc_iter_timeline(double fwd_s, double bwd_s, tc_iter_bucket *b, size_t n, bool offload,
                           const tc_tl_opts *c, tc_iter_time *out, tc_err *err);

/* DDP's bucket assignment: the model's equal layers, last layer first, go
 * into a bucket until it holds at least bucket_bytes; a bucket is ready when
 * its last (earliest) layer's backward is done. *out is malloc'ed (free()). */
tc_status tc_buckets_make(const tc_model *m, double bucket_bytes, tc_iter_bucket **out, size_t *n, tc_err *err);

/* DDP's buckets as compress times them: for a transformer of the zoo, by
 * parameter tensor as PyTorch DDP assigns them (tensors last registered
 * first, a bucket closed once it holds at least its limit, the tensor that
 * crosses it included, never split; the first bucket's limit first_bytes,
 * the others' bucket_bytes), each bucket's bytes its tensors' share of the
 * model's 4 x params and ready when that share of the backward pass is done
 * (a block's backward FLOPs follow its parameters); other models (CNNs,
 * whose layers' backward time does not follow their parameters, and custom
 * ones) by equal layers (tc_buckets_make). *by_tensor says which. */
tc_status tc_buckets_ddp(const tc_model *m, double bucket_bytes, double first_bytes, tc_iter_bucket **out, size_t *n,
                         bool *by_tensor, tc_err *err);
/* DDP's first bucket limit, dist._DEFAULT_FIRST_BUCKET_BYTES, whatever the
 * cap: DistributedDataParallel._ddp_init_helper buckets by
 * [dist._DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap]
 * (pytorch/pytorch torch/nn/parallel/distributed.py at commit 0028a164;
 * docs/MODEL.md, "Buckets"). */
#define TC_DDP_FIRST_BUCKET_BYTES 1048576.0

/* ---- one codec on one network ------------------------------------------ */

typedef struct tc_workload {
    tc_model model;
    const tc_accel *accel;   /* compute speed and the codec roofline */
    double mfu;              /* 0: the model's */
    uint32_t workers;        /* data-parallel ranks, on endpoints 0..workers-1 */
    double bucket_bytes;     /* 0: TC_DDP_BUCKET_BYTES */
    bool offload;            /* codec work on a separate engine */
    tc_tl_opts contention;   /* s_c, s_m, s_c_dma, s_m_dma (all 0: none) */
    tc_eval_opts eval;       /* evaluator of the collectives */
    /* The algorithm of the allreduce path's collectives (compress's
     * --dp-algo, the policy of train's): "library" (what NCCL runs:
     * tc_library_among, and NCCL's ring where faster on several GPUs of
     * each of several nodes), "auto" or "" (the fastest of all), or a name
     * as tc_algo_parse takes it. The requant ring is the library's ring
     * whatever this says. */
    char dp_algo[64];
} tc_workload;

/* Servers whose endpoints tc_codec_iter lists (path ps). */
#define TC_ITER_SERVERS_LISTED 256

typedef struct tc_codec_iter {
    tc_codec_spec codec;
    tc_codec_path path;      /* the aggregation path (codec.path) */
    uint32_t servers;        /* path ps: S servers, server s colocated with worker tc_codec_server_worker(s, S,
                                workers); 0 otherwise */
    uint32_t server_ep[TC_ITER_SERVERS_LISTED]; /* path ps: the endpoints of the first min(S, 256) servers (the
                                                   workers' through the job's rank map) */
    tc_op op;                /* the collective that carries it */
    uint32_t collectives;    /* per bucket: the most phases that carry something (powersgd: up to 3; ps: its
                                push and pull count as one) */
    double bits_per_coord;
    tc_algo algo;            /* the algorithm of the largest bucket's first phase: dp_algo's choice, ring (nccl-ring
                                on several GPUs of each of several nodes, where faster) and dbtree for the requant
                                paths, the in-network algorithm for switch, direct for ps */
    double codec_Bps;        /* encode + decode throughput used for the largest bucket (0: no codec work) */
    size_t nbuckets;
    double coll_bytes;       /* collective sizes per iteration, nccl-tests convention */
    double sent_bytes;       /* bytes each worker sends per iteration (size * busbw factor) */
    tc_iter_time t;          /* a compressed step (PowerSGD: one after its first `start`) */
    uint32_t plain_steps;    /* PowerSGD: its first `start` steps run the plain all-reduce ... */
    double plain_iter_s;     /* ... and take this, fp32's iteration (0: no such steps) */
} tc_codec_iter;

/* Compute times of the workload: fwd = flops_iter / 3 / (accel flops * mfu),
 * bwd = 2 fwd. */
void tc_workload_compute(const tc_workload *w, double *fwd_s, double *bwd_s);

/* One iteration of w with codec c on t. codec_Bps > 0 overrides the
 * accelerator roofline (tc_codec_accel_throughput). Each bucket's phases
 * (tc_codec_wire) are timed one after the other by w's evaluator: the
 * allreduce path's collectives by w->dp_algo, the requant ring by the
 * library's ring (ring, or nccl-ring where faster on several GPUs of each
 * of several nodes), the requant tree by dbtree, the fastest of
 * nccl-nvls, nccl-nvls-tree, nccl-collnet-direct and nccl-collnet-chain
 * valid on t (switch: a topology with none is refused), or the push and
 * pull schedule of coll/ps.c (ps). Per-tensor powersgd
 * takes the tensors of the zoo model of the same name (tc_model_tensors),
 * each bucket carrying its share of them; a custom model's buckets are each
 * one tensor (tc_codec_wire_cost). */
tc_status tc_workload_iteration(const tc_topo *t, const tc_workload *w, const tc_codec_spec *c, double codec_Bps,
                                tc_codec_iter *out, tc_err *err);

/* ---- time to accuracy -------------------------------------------------- */

/* Time to accuracy. Every steps ratio is steps(codec) / steps(bf16) to the
 * target, with its interval [ratio_lo, ratio_hi] (measured over seeds:
 * tc_acc_stats_compute; given or assumed: the ratio itself). bf16's own
 * ratio is exact (1 when measured), so an interval on a codec's ratio
 * carries over to its time to accuracy and its speedup over bf16 alone:
 *   TTA = t_iter * baseline_steps * ratio,  speedup = TTA(bf16) / TTA,
 * the interval of each from the ratio's ends. */
typedef struct tc_tta {
    double steps_ratio;   /* < 0: does not reach the target */
    double ratio_lo, ratio_hi;
    double steps;         /* baseline steps * ratio (NAN if it does not reach) */
    double tta_s;         /* iteration time * steps (NAN if it does not reach) */
    double tta_lo_s, tta_hi_s;
    double speedup_bf16;  /* tta(bf16) / tta(this); NAN where either does not reach or bf16 is absent */
    double speedup_bf16_lo, speedup_bf16_hi;
    double speedup_fp32;  /* point value only */
} tc_tta;

/* Time to accuracy of n codecs without intervals (lo = hi = ratio); i_bf16
 * / i_fp32 index the baselines (-1: absent). */
void tc_tta_compute(const double *iter_s, const double *ratio, size_t n, double baseline_steps, long i_bf16,
                    long i_fp32, tc_tta *out);
/* The same with the ratios' intervals (lo, hi: NULL for none). */
void tc_tta_compute_ci(const double *iter_s, const double *ratio, const double *lo, const double *hi, size_t n,
                       double baseline_steps, long i_bf16, long i_fp32, tc_tta *out);

/* Time of `steps` steps of a codec whose first plain_steps steps take
 * plain_iter_s each and the others iter_s (PowerSGD's start=: the hooks'
 * first start_powerSGD_iter iterations are plain all-reduces):
 * min(steps, plain) plain_iter_s + max(0, steps - plain) iter_s. compress
 * charges a PowerSGD codec's time to accuracy so. */
double tc_tta_phased_s(double steps, double iter_s, double plain_steps, double plain_iter_s);

/* What the interval of a speedup over bf16 says: faster where it lies
 * above 1, slower where below, indistinguishable where it holds 1. No
 * margin is added: the interval is the uncertainty. */
typedef enum {
    TC_VERDICT_BASELINE,  /* bf16 itself */
    TC_VERDICT_FASTER,
    TC_VERDICT_SLOWER,
    TC_VERDICT_SAME,      /* indistinguishable from bf16 */
    TC_VERDICT_NEVER      /* does not reach the target */
} tc_verdict;

/* lo > 1: faster; hi < 1: slower; otherwise indistinguishable; NAN ends:
 * never (the codec does not reach the target). */
tc_verdict tc_verdict_of(double lo, double hi);
/* "baseline", "faster", "slower", "indistinguishable", "never" */
const char *tc_verdict_name(tc_verdict v);

/* The regime boundary on a bandwidth sweep: bw ascending, speedup[i] the
 * codec's speedup over BF16 at bw[i] (compress passes the lower end of its
 * interval, with threshold 1: "faster"; NAN: does not reach the target); a
 * point is a win where speedup > threshold. Returns the bandwidth up to
 * which the codec wins at every swept point, interpolated (log-log) between
 * the last point where it wins and the first where it does not; INFINITY if
 * it wins everywhere, 0 if it does not win at the lowest bandwidth. */
double tc_crossover_bw(const double *bw, const double *speedup, size_t n, double threshold);

/* The default sweep: 10, 25, 50, 100, 200, 400, 800, 1600 Gb/s per endpoint
 * (bytes/s into rates[], at most 8); returns the count. */
size_t tc_sweep_default_rates(double *rates);

#ifdef __cplusplus
}
#endif

#endif
