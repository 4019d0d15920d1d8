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
    TC_CODEC_POWERSGD,    /* rank-r low-rank approximation, two all-reduces, warm start */
    TC_CODEC_SIGNSGD,     /* signs + scale, carried by all-gather, error feedback */
    TC_CODEC_COUNT
} tc_codec_kind;

/* A codec and its parameters, as parsed from "topk:ratio=0.01". */
typedef struct tc_codec_spec {
    tc_codec_kind kind;
    double ratio;          /* topk, topk-shared, randk: fraction of coordinates kept (default 0.01) */
    uint32_t rank;         /* powersgd: rank r (default 4) */
    uint32_t bits;         /* thc: bits per table index (default 4, 1..8); int8 = 8, int4 = 4 */
    bool error_feedback;   /* default: on for the biased codecs (topk, topk-shared, randk, powersgd, signsgd) */
    uint64_t seed;         /* shared seed (default 1) */
    char name[64];         /* canonical form, e.g. "topk:ratio=0.01" */
} tc_codec_spec;

const char *tc_codec_kind_name(tc_codec_kind k);  /* "fp32", "topk-shared", ... */
/* The defaults of a kind (the values listed above), name filled in. */
void tc_codec_defaults(tc_codec_kind k, tc_codec_spec *out);
/* Rewrites c->name from the fields (the canonical form tc_codec_parse gives):
 * the kind's main parameter always, seed and ef only where not default. */
void tc_codec_spec_name(tc_codec_spec *c);
/* Parses "fp32", "bf16", "topk:ratio=0.01", "powersgd:rank=4", "thc:bits=4",
 * "randk:ratio=0.05,seed=7", "topk:ratio=0.01,ef=0". Errors name the codec
 * or key and list what is accepted. */
tc_status tc_codec_parse(const char *s, tc_codec_spec *out, tc_err *err);

/* What one bucket of d float32 coordinates costs on the wire for n workers. */
typedef struct tc_codec_wire {
    tc_op op;              /* TC_OP_ALLREDUCE or TC_OP_ALLGATHER */
    uint32_t collectives;  /* how many collectives of that op (PowerSGD: 2) */
    double size[2];        /* each collective's size, nccl-tests convention (all-gather: the gathered output) */
    double bits_per_coord; /* total wire bits of one worker's contribution per coordinate (reporting) */
    const char *integer_sums; /* how the codec handles integer sum growth, one line; NULL if not integer */
} tc_codec_wire;

/* Bytes on the wire for d coordinates and n workers. An all-reduce of b-bit
 * integers over n workers needs ceil((b + ceil(log2 n)) / 8) bytes per
 * coordinate (the sum must not overflow): int8 over 64 workers costs as much
 * as BF16. */
void tc_codec_wire_cost(const tc_codec_spec *c, uint64_t d, uint32_t n, tc_codec_wire *out);

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
 * what its own contribution decodes to. step feeds the shared seeds.
 * grads are not modified. */
tc_status tc_codec_aggregate(tc_codec *c, const float *const *grads, float *out, uint64_t step, tc_err *err);
/* Coordinates per bucket (d of tc_codec_create). */
uint64_t tc_codec_dim(const tc_codec *c);
/* Worker w's error-feedback memory (d floats), NULL when the codec has none. */
const float *tc_codec_memory(const tc_codec *c, uint32_t worker);

/* Single-threaded encode+decode throughput of c on this machine: bytes of
 * float32 input per second, measured over about `seconds`, with d
 * coordinates per call. Also measures memcpy bandwidth in the same run
 * (copy_Bps: bytes copied per second) for comparison. */
tc_status tc_codec_measure(const tc_codec_spec *c, uint64_t d, double seconds, double *enc_dec_Bps, double *copy_Bps,
                           tc_err *err);

#endif
