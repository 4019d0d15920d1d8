/*
 * topocc/outcome_train.h - the outcomes of the compression commands
 * (codec-bench, train-accuracy, compress): typed values, no text. The
 * runners are in src/scenario/run_{codec_bench,train,compress}.c, the
 * renderings (JSON document, typed tables, text) in src/report/rep_train.c.
 * Conventions: topocc/outcome.h.
 */
#ifndef TOPOCC_OUTCOME_TRAIN_H
#define TOPOCC_OUTCOME_TRAIN_H

#include <stdio.h>
#include "topocc/scenario.h"
#include "topocc/trainiter.h"
#include "topocc/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- codec-bench ----------------------------------------------------------
 * Encode + decode throughput measured on one core of this machine next to
 * the calibration kernels measured in the same run (memcpy and in-place
 * bandwidth, floating-point, integer and product arithmetic, random loads),
 * the cost model's prediction from them, and the
 * accelerators' multi-pass rooflines. */
typedef struct tc_codec_bench_row {
    tc_codec_spec codec;
    double enc_dec_Bps;      /* measured: bytes of float32 input per second (median) */
    double copy_Bps;         /* measured: memcpy bytes per second (median) */
    tc_codec_measurement m;  /* spreads, rates, the counted work, predicted_Bps */
    double h100_Bps, tpu_Bps; /* multi-pass rooflines (tc_codec_accel_throughput) */
} tc_codec_bench_row;

typedef struct tc_codec_bench_out {
    double bytes;            /* the bucket measured: 4 x coordinates */
    uint64_t coordinates;
    double seconds;          /* measuring time per codec */
    uint32_t workers;        /* of the roofline estimate */
    size_t n;
    tc_codec_bench_row rows[TC_SCN_MAX_CODECS]; /* the scenario's codecs, or every kind (TC_CODEC_COUNT) */
} tc_codec_bench_out;

tc_status tc_run_codec_bench(const tc_scenario *s, const tc_run_opts *ro, tc_codec_bench_out **out, tc_err *err);
void tc_codec_bench_out_free(tc_codec_bench_out *out);

/* ---- train-accuracy -------------------------------------------------------
 * Test accuracy against steps, one curve per codec and seed, and the
 * statistics over the seeds against bf16 (topocc/train.h). */
typedef struct tc_train_accuracy_out {
    tc_train_opts opts;      /* as run, defaults filled; model and data_dir point into the fields below */
    char model[16];
    char data_dir[4096];
    bool bf16_added;         /* bf16 was not among the codecs: trained as the reference */
    size_t n;
    tc_acc_curve *curves;    /* n curves, owned: codec i's run on seed j at [i * opts.seeds + j] */
    tc_acc_stats stats;      /* owned */
} tc_train_accuracy_out;

tc_status tc_run_train_accuracy(const tc_scenario *s, const tc_run_opts *ro, tc_train_accuracy_out **out,
                                tc_err *err);
void tc_train_accuracy_out_free(tc_train_accuracy_out *out);

/* ---- compress -------------------------------------------------------------
 * Per codec one DDP iteration on the network and the steps to the target
 * give the time to accuracy against the BF16 and FP32 baselines. */
#define TC_COMPRESS_MAX_CODECS (TC_SCN_MAX_CODECS + 2)
#define TC_COMPRESS_MAX_RATES 8

typedef struct tc_compress_row {
    tc_codec_spec codec;
    bool requested;          /* among the scenario's codecs (not only an added baseline) */
    double thr_given;        /* encode + decode throughput given, bytes/s (0: the roofline) */
    double steps_ratio;      /* steps to the target over bf16's; < 0: does not reach it (on every run) */
    double ratio_lo, ratio_hi; /* its TC_ACC_LEVEL interval (measured); the ratio itself where given or assumed */
    const char *ratio_source; /* "measured", "given", "assumed" (static) */
    uint32_t runs, reached;  /* measured: runs (seeds) and those that reach the target; 0 otherwise */
    double final_acc;        /* measured: mean final test accuracy over the runs; NAN otherwise */
    tc_codec_iter it;
    tc_tta tta;
    tc_verdict verdict;      /* from tta's speedup interval over bf16 (tc_verdict_of) */
} tc_compress_row;

typedef struct tc_compress_out {
    /* the workload */
    tc_model model;
    const tc_accel *accel;   /* &accel_used */
    tc_accel accel_used;     /* the scenario's (tc_scenario_accel); name points to accel_name */
    char accel_name[64];
    double mfu;              /* used: the scenario's, else the model's */
    uint32_t workers;        /* the job's ranks */
    double bucket_bytes;     /* the cap used (TC_DDP_BUCKET_BYTES by default) */
    size_t nbuckets;         /* the buckets it gives (tc_buckets_ddp): whole tensors or whole layers each */
    bool bucket_by_tensor;   /* by parameter tensor, as DDP (a transformer of the zoo); false: by equal layers */
    uint32_t bucket_layers;  /* by layers: layers in every bucket but possibly the last (0 by tensor) */
    double bucket_max_bytes; /* the largest bucket's bytes */
    double bucket_first_bytes, bucket_last_bytes; /* their float32 gradient bytes: the first, the last */
    char dp_algo[64];        /* the allreduce path's collectives (--dp-algo): library, auto or a name */
    bool offload;
    double s_c, s_m;         /* contention factors of the timeline (timeline.h) */
    tc_mode mode;
    char topology[512];      /* the network's spec (after the scenario's edits) */
    char routing[32];
    double injection_Bps;    /* of the network's endpoints (the sweep point that equals it) */
    double fwd_s, bwd_s, baseline_steps;
    /* the codecs: fp32, bf16, then the scenario's in order */
    size_t n;
    tc_compress_row rows[TC_COMPRESS_MAX_CODECS];
    long i_fp32, i_bf16;
    /* accuracy */
    const char *acc_source;  /* "file" (compress.accuracy), "trained", "given" (static) */
    double target;           /* measured sources: the target used */
    bool target_given;       /* --target-acc, or the target the accuracy file was computed at */
    char reference[16];      /* "bf16" */
    double reference_final;  /* final accuracy of bf16's seed-mean curve */
    uint32_t seeds;          /* measured: runs per codec */
    bool same_seeds;         /* measured: every codec's run j on bf16's run j's seed (paired) */
    bool have_training;
    tc_train_opts training;  /* the training of the curves; model points to training_model, data_dir NULL */
    char training_model[16];
    /* The proxy of the curves against the modelled model: their families
     * ("vision", "language"; "" where unknown, e.g. a custom model), the
     * proxy's data set, and whether they differ (then the report warns). */
    char proxy_family[16], model_family[16], proxy_dataset[32];
    bool proxy_mismatch;
    /* the regime map (compress.sweep_bw) */
    size_t nrates;           /* 0: no sweep */
    double rates[TC_COMPRESS_MAX_RATES];   /* injection per endpoint, bytes/s, ascending */
    double sweep_iter_s[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    double sweep_tta_s[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    double sweep_speedup[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    double sweep_speedup_lo[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    double sweep_speedup_hi[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    tc_verdict sweep_verdict[TC_COMPRESS_MAX_RATES][TC_COMPRESS_MAX_CODECS];
    double crossover_Bps[TC_COMPRESS_MAX_CODECS]; /* faster below: tc_crossover_bw on the interval's lower end, 1 */
} tc_compress_out;

tc_status tc_run_compress(const tc_scenario *s, const tc_run_opts *ro, tc_compress_out **out, tc_err *err);
void tc_compress_out_free(tc_compress_out *out);

/* ---- train: one iteration of a 3D-parallel job ------------------------------
 * (docs/MODEL.md, "Training: one iteration"): the breakdown of tc_ti_run
 * with every collective timed on the network, every group running. */
/* One split of the search: its degrees and what it gives. */
typedef struct tc_ti_split {
    uint32_t dp, tp, pp, ep, m;
    double iter_s, mfu, mem_bytes, exposed_s, bubble_s;
    bool fits;
} tc_ti_split;

/* Flow co-simulation: which links held back one class of communication
 * (tc_flow_ctx_blame): flow-seconds of its flows sending and lost to
 * sharing, and the links that cost it most, each with the other classes
 * that put bytes on it (a bit per tc_ti_group). */
#define TC_TI_BLAME_TOP 3
#define TC_TI_NCLASSES 7 /* tc_ti_group: tp .. outer */
typedef struct tc_ti_blame {
    double sent_s, lost_s;
    uint32_t nlinks;                          /* links below, most lost first */
    uint32_t link[TC_TI_BLAME_TOP];
    double link_lost_s[TC_TI_BLAME_TOP];
    uint32_t shared_with[TC_TI_BLAME_TOP];
} tc_ti_blame;

/* Compression of one traffic class (iteration.compress_dp, _pp, _ep):
 * applied only where the iteration is shorter with it (every combination
 * of the requested classes is timed; the fastest is kept). */
typedef struct tc_ti_codec_out {
    bool requested, applied;
    char codec[96];
    double with_s, without_s; /* the iteration with this class compressed and without, the others as chosen */
} tc_ti_codec_out;

/* How the replicas synchronise (sync.*, topocc/sync.h). */
typedef struct tc_sync_out {
    char strategy[20];       /* tc_sync_name */
    char dtype[8];           /* the outer pseudo-gradient's type */
    uint32_t replicas, inner_steps, fragments, overlap_steps, outer_steps;
    double outer_bytes;      /* one outer all-reduce per rank (a fragment's for streaming), nccl-tests size */
    double outer_ar_s;       /* that all-reduce across the replicas */
    double outer_ag_s;       /* the all-gather of the updated parameters inside a replica (ZeRO below 3) */
    double outer_s;          /* one outer synchronisation: the two */
    double step_s;           /* time per step (tc_sync_step) */
    double cross_bytes_step; /* per rank per step, across replicas (all-reduce size: DDP's gradients, or the
                                outer all-reduce's / H) */
    double run_s;            /* outer_steps x H steps */
    double penalty;          /* loss against DDP, derived rule (tc_sync_loss_penalty) */
    bool penalty_known, penalty_outside;
    /* the trade-off over H (the same inner and outer times): H, time per
     * step, bytes across replicas per step, loss against DDP */
    uint32_t nh;
    struct {
        uint32_t H;
        double step_s, cross_bytes_step, penalty;
        bool outside;
    } h[8];
} tc_sync_out;

/* An algorithm the iteration's collectives ran: kind g's op at `sizes`
 * distinct sizes (auto's choice where `chosen`, else the one named by
 * --dp-algo, --tp-algo or --ep-algo). */
typedef struct tc_ti_algo_use {
    tc_ti_group g;
    tc_op op;
    tc_algo algo;
    bool chosen;             /* by topocc: auto, or library (auto among the library's algorithms) */
    bool library;
    uint32_t sizes;
    char name[64];           /* as --algo takes it: "ring", "dbtree:chunks=64" */
} tc_ti_algo_use;
#define TC_TI_MAX_ALGO_USES 32

typedef struct tc_trainiter_out {
    char order[16];          /* the parallel order, innermost first */
    bool cosim;              /* flow mode: the iteration's network co-simulated */
    tc_net net;
    char model[64];
    char accel[64];
    tc_ti_accel acc;
    tc_ti_cfg cfg;
    tc_ti_result res;
    uint32_t ranks;
    bool tp_in_node;             /* every TP group within one scale-up node (or no nodes: true) */
    uint32_t evaluations;        /* collectives evaluated on the network */
    /* --search: every split evaluated, those that fit first, by iteration time */
    bool search;
    uint64_t global_batch;
    bool mem_unknown;            /* the accelerator's profile gives no memory capacity: not checked */
    double achievable;           /* used */
    double profile_achievable;   /* the profile's achievable_fraction (0: none) */
    uint32_t copy_engines;       /* the profile's (0: not given) */
    bool cnn;                    /* the model is a CNN: samples, not tokens or sequences */
    size_t nsplits, nfit;
    tc_ti_split *splits;
    tc_sync_out sync;
    tc_ti_codec_out codec[3];                   /* TC_TI_CODEC_DP, _PP, _EP */
    tc_codec_spec codec_spec[3];                /* the codecs cfg.codec points to */
    bool have_blame;                            /* co-simulated: blame below (the overlapped run's) */
    /* Co-simulated, the overlapped run: flow jobs (one per group and
     * collective), those timed alone (docs/MODEL.md, "Jobs alone on their
     * links"), the simulations of one job that timed them; retried: a flow
     * came onto the links of a job timed alone in the overlapped run, which
     * was made again (and the serial run after it) event by event. */
    uint64_t cosim_jobs, cosim_alone, cosim_alone_sims;
    bool cosim_retried;
    tc_ti_blame blame[TC_TI_NCLASSES];
    uint32_t nalgos;                            /* not kept with --search */
    tc_ti_algo_use algos[TC_TI_MAX_ALGO_USES];
} tc_trainiter_out;

tc_status tc_run_trainiter(const tc_scenario *s, const tc_run_opts *ro, tc_trainiter_out **out, tc_err *err);
void tc_trainiter_out_free(tc_trainiter_out *out);




#ifdef __cplusplus
}
#endif

#endif
