/*
 * topocc/compress.h - gradient compression: real codecs on float32 arrays,
 * their cost model (bytes on the wire, the collective that carries them,
 * compute), and the aggregation of n data-parallel workers exactly as
 * PyTorch DDP applies a communication hook to one bucket.
 *
 * References: shared compression reference (Han et al., HotNets 2024;
 * Agarwal et al., MLSys 2022); docs/MODEL.md, "Compression".
 */
#ifndef TOPOCC_COMPRESS_H
#define TOPOCC_COMPRESS_H

#include "topocc/core.h"
#include "topocc/coll.h"
#include "topocc/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_CODEC_FP32 = 0,
    TC_CODEC_FP16,
    TC_CODEC_BF16,
    TC_CODEC_INT8,        /* stochastic quantization, one scale shared by all workers */
    TC_CODEC_INT4,
    TC_CODEC_THC,         /* randomized Hadamard transform (shared seed) + table quantization, integer sums */
    TC_CODEC_TOPK,        /* values + indices, carried by all-gather */
    TC_CODEC_TOPK_SHARED, /* one index set for all workers, values all-reduced */
    TC_CODEC_RANDK,       /* k coordinates chosen by a shared seed */
    TC_CODEC_POWERSGD,    /* PyTorch's powerSGD_hook: a rank-r approximation per tensor, three all-reduces */
    TC_CODEC_POWERSGD_BATCHED, /* PyTorch's batched_powerSGD_hook: the bucket as one matrix, two all-reduces */
    TC_CODEC_SIGNSGD,     /* signs + scale, carried by all-gather, error feedback */
    TC_CODEC_COUNT
} tc_codec_kind;

/* How the workers' contributions are aggregated (docs/MODEL.md,
 * "Aggregation paths"). A codec's default path is TC_PATH_ALLREDUCE, which
 * its canonical name omits. */
typedef enum {
    TC_PATH_ALLREDUCE = 0, /* the codec's own collective(s), sums exact (integers, fp32 of the 16-bit values) or
                              gathered: all-reduce, or all-gather for topk and signsgd */
    TC_PATH_REQUANT_RING,  /* a ring all-reduce that dequantizes, adds and re-quantizes at every hop (fixed width) */
    TC_PATH_REQUANT_TREE,  /* the same on dbtree's double binary tree (coll/dbtree.c), at every interior node */
    TC_PATH_PS,            /* push to S parameter servers colocated on workers, aggregate there, pull */
    TC_PATH_SWITCH,        /* integer sums in switches that reduce and multicast (NVLS, SHARP) */
    TC_PATH_COUNT
} tc_codec_path;

/* A codec and its parameters, as parsed from "topk:ratio=0.01". */
typedef struct tc_codec_spec {
    tc_codec_kind kind;
    double ratio;          /* topk, topk-shared, randk: fraction of coordinates kept (default 0.01) */
    uint32_t rank;         /* powersgd, powersgd-batched: rank r (default 4) */
    uint32_t start;        /* powersgd, powersgd-batched: steps 0 .. start-1 run the plain fp32 all-reduce
                              (default 1000, the hook's start_powerSGD_iter) */
    double min_rate;       /* powersgd: a tensor is compressed only if (rows + cols) r min_rate < rows cols
                              (default 2, the hook's min_compression_rate) */
    uint32_t bits;         /* thc: bits per table index (default 4, 1..8); int8 = 8, int4 = 4 */
    bool error_feedback;   /* default: on for the biased codecs (topk, topk-shared, randk, powersgd,
                              powersgd-batched, signsgd) */
    uint64_t seed;         /* shared seed (default 1) */
    tc_codec_path path;    /* how contributions are aggregated (default TC_PATH_ALLREDUCE) */
    uint32_t servers;      /* path ps: servers S (0: one per worker, the default) */
    char name[96];         /* canonical form, e.g. "topk:ratio=0.01", "int8:path=requant-ring" */
} tc_codec_spec;

const char *tc_codec_kind_name(tc_codec_kind k);  /* "fp32", "topk-shared", ... */
/* The defaults of a kind (the values listed above), name filled in. */
void tc_codec_defaults(tc_codec_kind k, tc_codec_spec *out);
/* Rewrites c->name from the fields (the canonical form tc_codec_parse gives):
 * the kind's main parameter always, seed and ef only where not default. */
void tc_codec_spec_name(tc_codec_spec *c);
/* "allreduce", "requant-ring", "requant-tree", "ps", "switch". */
const char *tc_codec_path_name(tc_codec_path p);
/* Whether kind k aggregates through path p: every kind through allreduce;
 * fp32 also through ps; fp16 and bf16 through requant-ring, requant-tree
 * and ps; int8 and int4 through all five; thc through ps and switch. */
bool tc_codec_path_valid(tc_codec_kind k, tc_codec_path p);
/* The paths kind k accepts, comma-separated, into buf. */
void tc_codec_paths_of(tc_codec_kind k, char *buf, size_t len);
/* path ps: the servers for n workers (c->servers, or n where it is 0), and
 * the worker whose endpoint server s of S holds: floor(s n / S), which
 * spreads the servers evenly over the workers (on endpoints 0..n-1 in
 * tc_workload_iteration). */
uint32_t tc_codec_servers(const tc_codec_spec *c, uint32_t n);
uint32_t tc_codec_server_worker(uint32_t s, uint32_t S, uint32_t n);
/* Whether c can aggregate over n workers: its path one its kind accepts,
 * path ps with servers <= n (colocated on the workers' endpoints), path
 * switch with sums of at most 32 bits. TC_EINVAL with one line otherwise. */
tc_status tc_codec_check_workers(const tc_codec_spec *c, uint32_t n, tc_err *err);
/* Parses "fp32", "bf16", "topk:ratio=0.01", "powersgd:rank=4", "thc:bits=4",
 * "randk:ratio=0.05,seed=7", "topk:ratio=0.01,ef=0",
 * "powersgd:rank=2,start=0,min_rate=2", "powersgd-batched:rank=1",
 * "int8:path=requant-ring", "thc:path=ps,servers=8". Errors name the codec
 * or key and list what is accepted (path: the paths that codec accepts;
 * servers only with path=ps; ef=1 not with the requant paths, whose hop
 * errors belong to no single worker). */
tc_status tc_codec_parse(const char *s, tc_codec_spec *out, tc_err *err);

/* How one phase of a path is carried. */
typedef enum {
    TC_WIRE_AUTO = 0,      /* a collective of op, the fastest algorithm (auto) */
    TC_WIRE_RING,          /* an all-reduce by the ring (coll/ring.c), re-quantizing at every hop */
    TC_WIRE_TREE,          /* an all-reduce by the double binary tree (coll/dbtree.c), re-quantizing at nodes */
    TC_WIRE_PS,            /* push to the servers, then pull (coll/ps.c) */
    TC_WIRE_SWITCH         /* an all-reduce reduced in the switches (nccl-nvls*, nccl-collnet-*) */
} tc_wire_how;

/* One phase of a path on the wire: its collectives one after the other. */
typedef struct tc_wire_phase {
    tc_wire_how how;
    tc_op op;              /* the collective (ps: TC_OP_ALLREDUCE, its effect) */
    double size;           /* nccl-tests size; ps: the bytes one worker pushes, all shards */
    double pull;           /* ps: the bytes one worker pulls, all shards; 0 otherwise */
} tc_wire_phase;

/* What one bucket of d float32 coordinates costs on the wire for n workers. */
typedef struct tc_codec_wire {
    /* The path's phases, in order: what tc_workload_iteration times. Phases
     * of size 0 are not launched. */
    tc_codec_path path;
    uint32_t servers;      /* ps: S; 0 otherwise */
    uint32_t nphases;
    tc_wire_phase phase[4];
    /* The path as collectives of one op (what the allreduce path is; for
     * the other paths an all-reduce of the same bytes per worker: requant
     * the fixed-width buffer, ps (push + pull) / 2 per shard, switch the
     * summed width), for callers that time one op only. */
    tc_op op;              /* TC_OP_ALLREDUCE or TC_OP_ALLGATHER */
    uint32_t collectives;  /* how many collectives of that op, in order (powersgd: 3, the uncompressed
                              tensors, all P, all Q; powersgd-batched: 2, P and Q) */
    double size[3];        /* each collective's size, nccl-tests convention (all-gather: the gathered output);
                              a size of 0 is a collective with nothing to carry, which is not launched */
    double bits_per_coord; /* total wire bits of one worker's contribution per coordinate (reporting) */
    const char *integer_sums; /* how the codec handles integer sum growth, one line; NULL if not integer */
} tc_codec_wire;

/* Bytes on the wire for d coordinates and n workers. An all-reduce of b-bit
 * integers over n workers needs ceil((b + ceil(log2 n)) / 8) bytes per
 * coordinate (the sum must not overflow): int8 over 64 workers costs as much
 * as BF16. PowerSGD's figures are those of a compressed step (its first
 * `start` steps cost fp32's); per-tensor powersgd, given only d, takes the
 * bucket as one tensor (tc_codec_wire_cost_shaped). The other paths
 * (docs/MODEL.md, "Aggregation paths"): requant carries a fixed width
 * whatever n (int8: 1 byte a coordinate and a 4-byte scale per block of
 * TC_REQUANT_BLOCK, chunk by chunk; fp16, bf16: 2 bytes); ps pushes and
 * pulls each of S shards (the MPICH split of d, or THC's dpad); switch sums
 * integers of the all-reduce's width in the switches. */
#define TC_REQUANT_BLOCK 256u
void tc_codec_wire_cost(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_wire *out);

/* Bytes of d coordinates sent once, point to point or in an all-to-all,
 * where nothing is summed (train's EP tokens and PP activations): fp32 4d,
 * fp16 and bf16 2d; int8 and int4 b bits a coordinate packed,
 * ceil(b d / 8), plus the sender's 4-byte scale (its own max: no
 * all-reduce(max), no room for a sum). Other kinds: tc_codec_wire_cost's
 * bytes for one worker. */
double tc_codec_send_bytes(const tc_codec_spec *c, uint64_t d);

/* Memory traffic of encode + decode, bytes per coordinate (reads and writes
 * of one worker), for the roofline estimate of an accelerator. */
double tc_codec_bytes_touched(const tc_codec_spec *c, uint64_t d, uint32_t n);

/* An accelerator for the roofline: codec throughput (GB/s of float32 input)
 * = 4 * mem_bw / bytes_touched_per_coordinate, capped by compute where the
 * codec has O(d log d) or O(d r) work. */
typedef struct tc_accel {
    const char *name;      /* "h100", "tpu-v5p", ... */
    double mem_Bps;        /* memory bandwidth */
    double flops;          /* dense 16-bit FLOP/s */
} tc_accel;
/* Looks up an accelerator profile by name ("h100", "a100", "tpu-v5p"; "tpu"
 * is tpu-v5p): docs/PROFILES.md. NULL if unknown. */
const tc_accel *tc_accel_find(const char *name);
/* The known accelerators' names, comma-separated, into buf. */
void tc_accel_names(char *buf, size_t len);
/* tc_accel_find and tc_accel_names read the default path only; these take
 * the directory a scenario gives (network.profiles_dir, --profiles DIR),
 * searched first, as presets do (topocc/profile.h). */
/* The profile an accelerator name reads: "tpu" is tpu-v5p, others
 * themselves. */
const char *tc_accel_profile_name(const char *name);
/* The accelerator profile p describes: kind "accelerator" with positive
 * dense16_TFLOPS and mem_TBps (a failure names the field and the profile).
 * out->name points to namebuf (len bytes), which receives the name. */
tc_status tc_accel_from_profile(const tc_profile *p, tc_accel *out, char *namebuf, size_t len, tc_err *err);
/* Loads the profile of accelerator name, dir first (NULL: none), then the
 * default path. An unknown name fails with one line that lists the
 * accelerator profiles found in dir and on the default path. */
tc_status tc_accel_profile_load(const char *name, const char *dir, tc_profile **out, tc_err *err);
/* tc_accel_profile_load then tc_accel_from_profile: the accelerator, by value. */
tc_status tc_accel_lookup(const char *name, const char *dir, tc_accel *out, char *namebuf, size_t len, tc_err *err);
/* The accelerator profiles found in dir (NULL: none) and on the default
 * path, sorted, comma-separated, into buf. */
void tc_accel_names_in(const char *dir, char *buf, size_t len);
/* Encode+decode throughput of c on a, bytes of float32 input per second. */
double tc_codec_accel_throughput(const tc_codec_spec *c, const tc_accel *a, uint64_t d, uint32_t n);

/* Runtime: one codec instance for buckets of d coordinates and n workers,
 * holding each worker's error-feedback memory and PowerSGD's warm-started Q. */
typedef struct tc_codec tc_codec;
tc_status tc_codec_create(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec **out, tc_err *err);
void tc_codec_free(tc_codec *c);
/* DDP semantics for one bucket: each worker w adds its error feedback to
 * grads[w], compresses, the contributions are aggregated by the declared
 * collective's semantics (integer sums, gathered sparse sets, ...), and the
 * decoded mean (sum / n) is written to out (d floats), which every worker
 * applies; each worker's error feedback becomes (its input + memory) minus
 * what its own contribution decodes to (PowerSGD: minus the decoded mean,
 * as the hooks do). step feeds the shared seeds and is the iteration
 * (0, 1, ...): PowerSGD's first `start` steps are plain all-reduces
 * (tc_codec_plain_step). grads are not modified. */
tc_status tc_codec_aggregate(tc_codec *c, const float *const *grads, float *out, uint64_t step, tc_err *err);
/* Coordinates per bucket (d of tc_codec_create). */
uint64_t tc_codec_dim(const tc_codec *c);
/* Worker w's error-feedback memory (d floats), NULL when the codec has none. */
const float *tc_codec_memory(const tc_codec *c, uint32_t worker);

/* ---- per-tensor codecs: PowerSGD as PyTorch's powerSGD_hook -----------
 *
 * `powersgd` follows powerSGD_hook and `powersgd-batched` batched_powerSGD_hook
 * (torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py, PyTorch
 * v1.13.1; docs/MODEL.md, "Compression codecs"). powerSGD_hook needs the
 * bucket's tensors: each is viewed as tensor.view(shape[0], -1) and
 * compressed on its own or all-reduced as it is. A bucket known only by its
 * size d (tc_codec_create, tc_codec_wire_cost) is taken as one tensor, the
 * a x b matrix of powersgd-batched (b = ceil(sqrt d), a = ceil(d / b), the
 * last row partial). */

/* One gradient tensor as powerSGD_hook views it: a row-major rows x cols
 * matrix, rows = shape[0] and cols the product of the other dimensions (a
 * 1-D tensor of length L is L x 1; a convolution weight [out, in, kh, kw]
 * is out x (in kh kw)). */
typedef struct tc_codec_tensor {
    uint64_t rows, cols;
} tc_codec_tensor;

/* True for the kinds that use the bucket's tensor shapes (powersgd). */
bool tc_codec_per_tensor(tc_codec_kind k);

/* The rank per-tensor PowerSGD gives a rows x cols tensor:
 * r' = min(rows, cols, rank) if (rows + cols) r' min_rate < rows cols
 * (powerSGD_hook's _should_compress), else 0: the tensor is all-reduced
 * uncompressed (every 1-D tensor, and small ones). */
uint32_t tc_codec_powersgd_rank(const tc_codec_spec *c, uint64_t rows, uint64_t cols);

/* Whether the wire cost of codec c holds for a bucket of d coordinates:
 * powersgd-batched's rank must fit the bucket's a x b matrix (1..min(a,
 * b)), as the codec itself requires, and top-k's 4-byte indices must
 * address the bucket (d < 2^32); TC_EINVAL naming the bucket otherwise.
 * Every other codec's cost holds for any bucket. */
tc_status tc_codec_fits(const tc_codec_spec *c, uint64_t d, tc_err *err);

/* tc_codec_wire_cost of a bucket made of the nt tensors t (d = the sum of
 * rows cols). powersgd: three all-reduces, size[0] = 4 x the elements of
 * the uncompressed tensors, size[1] = 4 sum rows r', size[2] = 4 sum cols r'
 * over the compressed ones. Other kinds: tc_codec_wire_cost(c, d, n). */
void tc_codec_wire_cost_shaped(const tc_codec_spec *c, const tc_codec_tensor *t, size_t nt, uint32_t n,
                               tc_codec_wire *out);

/* tc_codec_create for a bucket made of the nt tensors t, laid out one after
 * the other in its flat buffer (d = the sum of rows cols). Only powersgd
 * uses the shapes; every other kind sees d coordinates. */
tc_status tc_codec_create_shaped(const tc_codec_spec *c, const tc_codec_tensor *t, size_t nt, uint32_t n,
                                 tc_codec **out, tc_err *err);

/* Whether tc_codec_aggregate runs the plain all-reduce at this step: the
 * PowerSGD kinds' steps 0 .. start-1, as the hooks' first start_powerSGD_iter
 * iterations (the mean of the gradients, computed as fp32 does, the error
 * feedback untouched). */
bool tc_codec_plain_step(const tc_codec_spec *c, uint64_t step);

/* ---- compute: what encode + decode costs a processor ---------------------
 * Counted from the codecs' own kernels (docs/MODEL.md, "Compute"), per
 * coordinate of the bucket: the bytes each pass moves over memory and the
 * arithmetic. */
typedef struct tc_codec_work {
    double read, written;  /* bytes per coordinate a pass reads from / writes to a bucket-sized array */
    double alloc;          /* bytes of lines written without being read first (a CPU reads them in) */
    double inplace;        /* of read + written, the bytes of passes that read an array and write it
                              back in place (priced by the in-place kernel where it is measured) */
    double vops;           /* floating-point vector lane operations per coordinate, as the C source
                              writes them (multiplies, adds, fused multiply-adds, float compares,
                              min and max, conversions between integer and float) */
    double iops;           /* integer and logic lane operations per coordinate (shifts, and, or, xor,
                              integer adds and compares, selects, widening and narrowing, and the
                              loads and stores of cache-resident blocks) */
    double narrow;         /* lane operations done by 8-lane instructions (x86's F16C conversions) */
    double gemm;           /* lane operations of OpenBLAS's products (PowerSGD), per coordinate of
                              the matrix (priced by the product kernel where it is measured, else
                              as 8-lane operations) */
    double sops;           /* scalar operations per coordinate (per block, candidate, sampled index) */
    double random;         /* accesses at random places of an array beyond the L2 cache, per
                              coordinate (a gather's load, a scatter's store, a bitmap's bit) */
    uint32_t passes;       /* kernels that stream a bucket-sized array */
} tc_codec_work;

/* The path tc_codec_measure times: one worker (n = 1), decoded in place, the
 * message kept in cache-sized blocks as a fused kernel keeps it. */
void tc_codec_work_measured(const tc_codec_spec *c, uint64_t d, tc_codec_work *out);
/* One worker's kernels on an accelerator for n workers: each kernel a pass
 * over memory, the message written and read at its wire width, error
 * feedback as c says, THC's transform at the published kernel's cost;
 * read + written is tc_codec_bytes_touched. */
void tc_codec_work_accel(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_work *out);
/* Where an accelerator's codec cost comes from, one line for reports. */
const char *tc_codec_cost_source(const tc_codec_spec *c);

/* A CPU core as the model sees it, measured by calibration kernels. */
typedef struct tc_codec_rates {
    double copy_Bps;       /* memcpy: bytes copied per second (12 bytes of traffic per 4 copied) */
    double lane_ops;       /* floating-point lane operations per second: multiplies and adds on an
                              L1-resident array */
    double lanes;          /* float lanes of the kernels' vectors (tc_codec_cpu_lanes) */
    double random_ps;      /* independent loads at random places of the bucket per second (0:
                              unknown; each then costs a cache line at the copy's traffic rate) */
    double int_ops;        /* integer and logic lane operations per second on an L1-resident array
                              (0: unknown; priced as lane_ops) */
    double inplace_Bps;    /* bytes of a bucket read and written back in place per second, right
                              after it was copied (0: unknown; priced as copy traffic) */
    double gemm_ops;       /* lane operations per second of OpenBLAS's three rank-r products of
                              PowerSGD on an L2-resident matrix (0: unknown; priced as narrow) */
} tc_codec_rates;
/* Float lanes of the codec kernels this CPU runs: 16 (x86-64-v4), 8 (v3), 4. */
double tc_codec_cpu_lanes(void);
/* Predicted seconds of w for d coordinates on r: memory (read + written +
 * alloc - inplace) d / (3 copy_Bps) + inplace d / (2 inplace_Bps), plus
 * random accesses random d / random_ps, plus arithmetic (vops + narrow
 * lanes / 8 + sops lanes) d / lane_ops + iops d / int_ops + gemm d / gemm_ops
 * (each rate that is 0 falls back as its field says). */
double tc_codec_predict_s(const tc_codec_work *w, uint64_t d, const tc_codec_rates *r);
/* Its two terms: seconds of memory traffic and of arithmetic. */
void tc_codec_predict_parts(const tc_codec_work *w, uint64_t d, const tc_codec_rates *r, double *mem_s,
                            double *ops_s);

/* Repeated measurements of one quantity. */
typedef struct tc_codec_spread {
    double min, median, max;
} tc_codec_spread;

typedef struct tc_codec_measurement {
    tc_codec_spread enc_dec_Bps; /* bytes of float32 input per second */
    tc_codec_spread copy_Bps;    /* memcpy of the bucket, bytes copied per second */
    tc_codec_spread lane_ops;    /* the calibration kernel, lane operations per second */
    tc_codec_spread random_ps;   /* the random-access kernel, loads per second */
    tc_codec_spread int_ops;     /* the integer calibration kernel, lane operations per second */
    tc_codec_spread inplace_Bps; /* the in-place kernel, bytes of the bucket per second */
    tc_codec_spread gemm_ops;    /* the product kernel (PowerSGD only; else 0), lane operations per second */
    size_t reps;                 /* repetitions of each */
    tc_codec_rates rates;        /* the medians, and tc_codec_cpu_lanes */
    tc_codec_work work;          /* tc_codec_work_measured */
    double predicted_Bps;        /* 4 d / tc_codec_predict_s(work, d, rates) */
} tc_codec_measurement;

/* Single-threaded encode+decode throughput of c on this machine over about
 * `seconds`, d coordinates per call, with, in the same run and alternating
 * with it, memcpy of the bucket, the floating-point and the integer
 * calibration kernels, the random-access kernel, the in-place kernel (after
 * a copy of its own) and, for PowerSGD, the product kernel, each timed in
 * the thread's CPU time; the model's prediction from their medians. */
tc_status tc_codec_measure_full(const tc_codec_spec *c, uint64_t d, double seconds, tc_codec_measurement *out,
                                tc_err *err);
/* tc_codec_measure_full's medians: enc_dec_Bps and copy_Bps. */
tc_status tc_codec_measure(const tc_codec_spec *c, uint64_t d, double seconds, double *enc_dec_Bps, double *copy_Bps,
                           tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
