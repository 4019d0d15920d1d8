/*
 * topocc/scenario.h - everything one evaluation needs, in one value.
 *
 * A scenario names a command (what to compute) and every input of it: the
 * topologies and their edits (equalized injection, degraded links), the job
 * (how many ranks, on which endpoints in which order), the operations,
 * algorithms and sizes, the evaluator and its options, the jobs of a
 * concurrent run, the codecs, model and accuracy data of a compression
 * study. It is read from command-line flags and from a JSON file through one
 * key table (docs/SCENARIO.md gives every key by its path, e.g.
 * network.topo[0]), written back as canonical JSON (input files embedded by
 * content), and recorded in every result, so a result can be reproduced from
 * its own record (topocc replay).
 *
 * The generic entry point, tc_scenario_run, takes a resolved scenario and
 * returns a typed outcome; the report layer renders an outcome as a table,
 * CSV or JSON.
 */
#ifndef TOPOCC_SCENARIO_H
#define TOPOCC_SCENARIO_H

#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/flow.h"
#include "topocc/place.h"
#include "topocc/topo.h"
#include "topocc/train.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_SCENARIO_VERSION 1

typedef enum {
    TC_CMD_TOPO = 0,
    TC_CMD_COLLECTIVE,
    TC_CMD_COMPARE,
    TC_CMD_CONCURRENT,
    TC_CMD_CODEC_BENCH,
    TC_CMD_TRAIN_ACCURACY,
    TC_CMD_COMPRESS,
    TC_CMD_FAILURES,
    TC_CMD_CLUSTER,
    TC_CMD_TRAIN,
    TC_CMD_COUNT
} tc_command;

const char *tc_command_name(tc_command c);   /* "codec-bench", ... */
tc_status tc_command_parse(const char *s, tc_command *out, tc_err *err);

#define TC_SCN_MAX_TOPOS 16
#define TC_SCN_MAX_DEGRADE 64
#define TC_SCN_MAX_FAIL 256
#define TC_SCN_MAX_ALGOS 16
#define TC_SCN_MAX_CODECS 32
#define TC_SCN_MAX_SIZES 10000
#define TC_SCN_MAX_JOBS 1024
#define TC_SCN_MAX_ALPHAS 15

typedef struct tc_scn_degrade {
    uint32_t link;           /* directed link ID (topocc topo SPEC --links) */
    double factor;           /* bandwidth multiplier, > 0 */
} tc_scn_degrade;

/* A value per codec: a steps ratio (< 0: never reaches the target) or an
 * encode+decode throughput in bytes/s. codec is a canonical codec spec or
 * a codec kind ("topk" for every topk codec). */
typedef struct tc_scn_codec_value {
    char codec[96];
    double value;
} tc_scn_codec_value;

/* One job of a concurrent run. */
typedef struct tc_scn_job {
    char name[64];
    tc_op op;
    char algo[96];           /* "auto" or an algorithm spec (chunks=, root= inside) */
    double bytes;            /* nccl-tests convention */
    double start_s;          /* >= 0 */
    tc_job_place place;      /* its endpoints, in rank order (policy TC_PLACE_LIST) */
    tc_group_spec group;     /* "group": the collective in every group of the job's ranks at once (as job.group;
                              * TC_GROUP_NONE: the whole job) */
} tc_scn_job;

/* A set of scenario keys by their index in the key table (at most
 * TC_KEYSET_MAX keys; keys.c checks the table fits). */
#define TC_KEYSET_MAX 128
typedef struct tc_keyset {
    uint64_t w[TC_KEYSET_MAX / 64];
} tc_keyset;
static inline bool tc_keyset_has(const tc_keyset *k, int i)
{
    return i >= 0 && i < TC_KEYSET_MAX && (k->w[i / 64] >> (i % 64) & 1u);
}
static inline void tc_keyset_add(tc_keyset *k, int i)
{
    if (i >= 0 && i < TC_KEYSET_MAX)
        k->w[i / 64] |= 1ull << (i % 64);
}
static inline void tc_keyset_del(tc_keyset *k, int i)
{
    if (i >= 0 && i < TC_KEYSET_MAX)
        k->w[i / 64] &= ~(1ull << (i % 64));
}

typedef struct tc_scenario {
    tc_command command;
    char version[32];        /* of the topocc that wrote it; "" when unknown */
    char commit[48];

    /* network.* */
    char topo[TC_SCN_MAX_TOPOS][512];   /* canonical specs, before the edits below */
    int ntopo;
    char names[TC_SCN_MAX_TOPOS][32];   /* compare: one short name per topology */
    double alphas[TC_SCN_MAX_ALPHAS];   /* compare: per-message overheads to check conclusions at (s) */
    int nalphas;
    int nnames;
    double equalize_Bps;                /* > 0: every endpoint's fabric injection set to this */
    double equalize_cost_usd;           /* > 0: every topology's fabric links at the one speed at which its bill of
                                         * materials costs this (network.equalize_cost_usd; topo/cost.h) */
    char cost_profile[4096];            /* network.cost_profile: a cost profile's name (a file's path before
                                         * resolving); its content is kept in profiles. "": none */
    tc_scn_degrade degrade[TC_SCN_MAX_DEGRADE];
    int ndegrade;
    tc_fail_item fail[TC_SCN_MAX_FAIL]; /* network.fail: failed links, switches, hosts, nodes */
    int nfail;
    char fail_random[256];              /* network.fail_random: "" none, else links=K|F%,switches=K,seed=S,.. */
    char routing[16];                   /* "default", "ecmp", "dmodk", "dor", "dor-positive", "detour", "line" */
    bool links;                         /* topo: list every directed link */
    /* Presets (NAME[:nodes=N]), expanded by tc_scenario_resolve into
     * topologies after those of network.topo (or where preset_at puts
     * them), then cleared (topo_preset records them); the profiles
     * they read, and compress's accelerator profile, are kept by content
     * in profiles (a JSON object, name -> profile; owned; NULL: none). */
    char preset[TC_SCN_MAX_TOPOS][128];
    int npreset;
    /* Where the presets go among network.topo's topologies: preset i
     * before topology preset_at[i] (ntopo: after all), nondecreasing; used
     * only when npreset_at == npreset (the CLI sets it to keep the command
     * line's order of --topo and --preset), else every preset comes after
     * network.topo's. Setting network.preset clears it. */
    int preset_at[TC_SCN_MAX_TOPOS];
    int npreset_at;
    /* network.topo_preset: for each topology of topo, the preset it was
     * expanded from ("": given as a spec); ntopo_preset is 0 (no topology
     * came from a preset) or ntopo. A --profiles flag expands those
     * presets again from the files; a --topo or --preset flag replaces
     * the topologies and clears it. */
    char topo_preset[TC_SCN_MAX_TOPOS][128];
    int ntopo_preset;
    char profiles_dir[4096];            /* searched first ("": the default path) */
    char *profiles;

    /* job.* : the ranks of the job and where they run */
    tc_job_place job;
    tc_group_spec group;                /* job.group: collectives over sub-groups (TC_GROUP_NONE: the whole job);
                                         * collective and compare (concurrent: each job's own, tc_scn_job.group) */

    /* collective.* (collective, compare) */
    tc_op ops[TC_OP_COUNT];
    int nops;
    char algos[TC_SCN_MAX_ALGOS][96];   /* "auto", "all" or algorithm specs */
    bool phases;                        /* collective, formula: cost each phase, say how */
    int nalgos;
    double *sizes;                      /* bytes, owned; at most TC_SCN_MAX_SIZES */
    char dtype[12];                     /* element type (tc_dtype_size): sizes are whole elements */
    char redop[8];                      /* collective.redop: sum, prod, min, max, avg (reductions) */
    size_t nsizes;

    /* eval.* and flow.* */
    tc_mode mode;
    double rate_cap_Bps;                /* 0: none */
    tc_multipath multipath;
    tc_flow_deps deps;                  /* default TC_DEPS_AUTO */
    double eager_limit_bytes;           /* deps auto: the largest message sent eagerly */
    uint64_t event_budget;              /* 0: TC_FLOW_DEFAULT_EVENT_BUDGET */
    bool skip;                          /* flow.skip: advance over repeated steps (default true) */
    bool flow_bounds;                   /* flow.bounds: a one-step schedule bounded, not simulated (default false) */
    char trace[4096];                   /* "": no trace file */

    /* failures.* */
    uint32_t trials;                    /* failures.trials: draws of network.fail_random (default 100) */

    /* cluster.* (topocc cluster: a job trace replayed, docs/MODEL.md "Cluster replay") */
    char cluster_trace[4096];           /* cluster.trace: the trace file ("": synthetic) */
    char cluster_format[16];            /* cluster.trace_format: auto, csv, philly, helios, pai */
    char cluster_digest[48];            /* cluster.trace_digest: "crc32=XXXXXXXX,bytes=N" of the trace read ("": not
                                           yet read; resolving fills it, and refuses a trace that differs from it) */
    uint64_t synth_jobs;                /* cluster.synthetic.jobs (0: no synthetic trace) */
    uint64_t synth_seed;                /* cluster.synthetic.seed */
    double synth_load;                  /* cluster.synthetic.load: offered load (default 0.9) */
    char scheduler[16];                 /* cluster.scheduler: fifo (default) or backfill */
    uint32_t cluster_ocs;               /* cluster.ocs: the torus's optical-switch cube edge (0: none) */
    bool cluster_strict;                /* cluster.strict: a job larger than a cluster is an error */

    /* iteration.* and parallel.* (topocc train: one training iteration,
     * docs/MODEL.md "Training: one iteration"); the accelerator is accel */
    char it_model[256];                 /* iteration.model: a zoo name or a model JSON file */
    char *model_json;                   /* iteration.model_json: a model file's content by its path
                                         * (a JSON object path -> the file's object, compact; owned;
                                         * NULL: none), written by resolving: a replay reads it, not the file */
    uint32_t dp, tp, pp;                /* parallel.dp, .tp, .pp */
    uint32_t ep;                        /* parallel.ep: expert parallelism inside DP (1: none) */
    double capacity_factor, zipf;       /* iteration.capacity_factor (0: dropless), .zipf (0: uniform) */
    char par_order[16];                 /* parallel.order: e.g. tp-dp-pp, innermost first */
    uint32_t micro_batches, micro_batch; /* iteration.micro_batches (m), .micro_batch (b) */
    uint32_t it_seq;                    /* iteration.seq (0: the model's) */
    uint32_t vstages;                   /* iteration.virtual_stages (interleaved 1F1B; 1: plain) */
    uint32_t zero;                      /* iteration.zero: 0 (DDP) .. 3 (FSDP) */
    bool seq_parallel;                  /* iteration.seq_parallel */
    char recompute[12];                 /* iteration.recompute: none, selective, full */
    char grad_dtype[8];                 /* iteration.grad_dtype: bf16 (default), fp16, fp32 */
    char attention[8];                  /* iteration.attention: flash (default: fused, scores not stored), eager */
    bool it_overlap;                    /* iteration.overlap (default true) */
    bool it_dma;                        /* iteration.dma: collectives on copy engines */
    bool it_cosim;                      /* iteration.cosim: flow mode co-simulates the network (default true) */
    char comm_order[12];                /* iteration.comm_order: backward (DDP) or forward (P3) */
    char it_algo[3][64];                /* iteration.dp_algo, .tp_algo, .ep_algo: library, auto or a --algo name */
    char it_timeline[4096];             /* iteration.timeline: Chrome trace file ("": none) */
    double achievable;                  /* iteration.achievable: fraction of peak a matmul reaches */
    double s_c, s_m;                    /* iteration.s_c, .s_m: contention (timeline.h) */
    bool it_search;                     /* iteration.search: rank the splits of the endpoints */
    uint32_t global_batch;              /* iteration.global_batch: sequences per iteration (search; 0: dp m b) */
    bool tp_in_node;                    /* iteration.tp_in_node: a TP group across nodes is an error */
    bool allow_oom;                     /* iteration.allow_oom: time a job that does not fit in memory */
    /* sync.* (topocc train across replicas, docs/MODEL.md "Training across
     * datacenters"): how the replicas synchronise */
    char sync[20];                      /* sync.strategy: ddp, local-sgd, diloco, diloco-eager, diloco-delayed,
                                           streaming-diloco */
    uint32_t replicas;                  /* sync.replicas (0: the topology's pods, else 1) */
    uint32_t inner_steps;               /* sync.inner_steps: H */
    uint32_t outer_steps;               /* sync.outer_steps: a run of K outer steps (0: per step only) */
    uint32_t fragments;                 /* sync.fragments: streaming DiLoCo (0: layers / 3) */
    uint32_t overlap_steps;             /* sync.overlap_steps: streaming DiLoCo's tau */
    char outer_dtype[8];                /* sync.outer_dtype: fp32, bf16, int8, fp4 */
    char it_codec[3][64];               /* iteration.compress_dp, _pp, _ep: a codec per traffic class ("": none) */

    /* concurrent.jobs (the jobs file, by content) */
    tc_scn_job *jobs;                   /* owned */
    size_t njobs;

    /* codecs (codec-bench, train-accuracy, compress), canonical specs */
    char codecs[TC_SCN_MAX_CODECS][96];
    int ncodecs;

    /* compress.* */
    char model[256];                    /* zoo name with overrides, or a custom model spec */
    char accel[64];                     /* an accelerator profile's name: "h100", "tpu" (tpu-v5p), ... */
    double mfu;                         /* 0: the model's */
    double bucket_bytes;                /* 0: TC_DDP_BUCKET_BYTES */
    bool offload, sweep_bw;
    double target_acc;                  /* 0: the accuracy file's given target, else 0.99 x bf16's seed-mean final */
    tc_scn_codec_value steps_ratio[TC_SCN_MAX_CODECS];
    int nsteps_ratio;
    tc_scn_codec_value throughput[TC_SCN_MAX_CODECS];
    int nthroughput;
    /* An accuracy file, embedded by content (owned; tc_acc_curves_free). */
    tc_acc_curve *accuracy;
    size_t naccuracy;
    tc_train_opts accuracy_opts;        /* the training that produced it */

    /* train.* (train-accuracy; compress when it measures accuracy now).
     * train.model and train.data_dir point into the fields below. */
    tc_train_opts train;
    char train_model[16];
    char data_dir[4096];

    /* codec_bench.* */
    double bench_bytes;                 /* bucket size */
    double bench_seconds;               /* measuring time per codec */
    uint32_t bench_workers;             /* workers of the roofline estimate */

    /* Bookkeeping: key k of the table is in given when it was given (from
     * a file or a flag) and in flags when a flag gave it (tc_keyset_*). */
    tc_keyset given_mask, flag_mask;
    /* Keys that tc_scenario_read_json leaves out, rather than refuses,
     * where they do not apply (a sweep point's keys from its base, which an
     * axis may have made moot); empty: every key refused. */
    tc_keyset moot_ok;
    /* A directory the caller makes before the run (the CLI's --out-dir):
     * resolving refuses a file the run writes (flow.trace,
     * iteration.timeline) whose directory does not exist, but for this
     * one; "": none. Not a key: neither read nor written. */
    char made_dir[4096];
} tc_scenario;

/* A scenario of command c with every default filled in (not yet resolved:
 * no topology). Returns NULL when out of memory or c is not a command
 * (TC_CMD_COUNT and beyond). */
tc_scenario *tc_scenario_new(tc_command c);
void tc_scenario_free(tc_scenario *s);
/* A deep copy (NULL when out of memory). */
tc_scenario *tc_scenario_clone(const tc_scenario *s);
/* train's model: a zoo model, else the model file's content embedded in
 * iteration.model_json under its path, else the file (tc_zoo_load_json). */
struct tc_zoo_model;
tc_status tc_scenario_model(const tc_scenario *s, struct tc_zoo_model *m, char *src, size_t len, tc_err *err);

/* Validates every value against the others and puts each in canonical
 * form: topology specs as the generator writes them, algorithm and codec
 * specs canonical, defaults explicit; every key of the command that does
 * not apply takes its default, so the run depends on nothing that
 * tc_scenario_to_json leaves out. Idempotent. */
tc_status tc_scenario_resolve(tc_scenario *s, tc_err *err);

/* ---- the key table: JSON and flags ---------------------------------------
 * Reading merges into s: a key present replaces the value (a list replaces
 * the whole list). An unknown key is named with the nearest valid one; a
 * value of the wrong type names its key and the type expected; a syntax
 * error gives line and column. `what` names the source in messages. */
tc_status tc_scenario_read_json(tc_scenario *s, const struct json_t *root, const char *what, tc_err *err);
/* Lets tc_scenario_read_json leave out every key that does not apply,
 * but those of the n paths in strict, instead of refusing it (moot_ok). */
void tc_scenario_allow_moot(tc_scenario *s, const char *const *strict, size_t n);
tc_status tc_scenario_load(tc_scenario *s, const char *path, tc_err *err);   /* "-": standard input */
/* A scenario of the command its document names, for a caller that does not
 * know it: the document is a scenario, a saved result (its "scenario") or a
 * line of a sweep's results (a point and its scenario). *out is new
 * (tc_scenario_free; not yet resolved), NULL on failure. tc_scenario_open
 * reads path ("-": standard input); tc_scenario_from_json a document already
 * parsed, what naming it in messages. tc_scenario_of_document: the scenario
 * object inside such a document (root itself for a scenario). */
tc_status tc_scenario_open(const char *path, tc_scenario **out, tc_err *err);
tc_status tc_scenario_from_json(const struct json_t *root, const char *what, tc_scenario **out, tc_err *err);
const struct json_t *tc_scenario_of_document(const struct json_t *root);
/* Canonical JSON of a resolved scenario (new reference; NULL when out of
 * memory): only the keys that apply to its command (and mode), every number
 * shortest round-trip. */
struct json_t *tc_scenario_to_json(const tc_scenario *s);

/* ---- key paths (what a sweep varies; docs/SCENARIO.md) --------------------
 * A key path is a key of the table ("network.topo") or one element of a
 * list key ("network.topo[0]"). tc_scenario_path_parse checks path against
 * the table and command c (an unknown key is named with the nearest valid
 * one) and splits it into the key and the element (*index -1: the whole
 * value). tc_scenario_json_set sets path to v (a new reference is taken) in
 * root, a scenario's JSON: an element replaces that entry of the list the
 * scenario gives (a single value counts as a list of one). */
tc_status tc_scenario_path_parse(const char *path, tc_command c, char *key, size_t keylen, long *index,
                                 tc_err *err);
tc_status tc_scenario_json_set(struct json_t *root, const char *path, tc_command c, struct json_t *v, tc_err *err);
/* The index of key (a key path without its element) in the key table, or
 * -1: the keyset's numbering. */
int tc_scenario_key_index(const char *key);
/* Replaces the seeds of a resolved scenario by ones drawn from seed: those
 * that apply of job.seed, train.seed, network.fail_random's seed and
 * cluster.synthetic's seed, except the keys in keep (set by hand). The
 * caller resolves the scenario again. */
void tc_scenario_derive_seeds(tc_scenario *s, uint64_t seed, const tc_keyset *keep);

/* The command-line options, grouped (network, job, algorithm, eval, flow,
 * codec, compress, train, codec-bench, output, general). */
typedef struct tc_option {
    const char *flag;        /* "--topo" */
    const char *key;         /* the scenario key it sets ("network.topo"), or NULL (output and general options) */
    const char *group;
    const char *metavar;     /* "SPEC"; NULL for a switch */
    unsigned commands;       /* bit c: accepted by command c */
    bool list;               /* may be repeated; occurrences form the list */
    const char *help;        /* one line */
} tc_option;
size_t tc_option_count(void);
const tc_option *tc_option_get(size_t i);
/* The option spelled flag that command c accepts, or NULL. */
const tc_option *tc_option_find(const char *flag, tc_command c);
/* The commands that accept flag, for "it belongs to ..." messages
 * ("failures, train"); "" when none does. */
void tc_option_owners(const char *flag, char *buf, size_t len);
/* The valid flag nearest to flag (edit distance), for "did you mean". */
const char *tc_option_nearest(const char *flag, tc_command c);

/* Applies a flag to s: values are its n occurrences on the command line (n
 * is 1 but for list options, whose occurrences replace the whole list read
 * from a scenario file). Output and general options are not scenario keys:
 * they are refused here. */
tc_status tc_scenario_set_flag(tc_scenario *s, const char *flag, const char *const *values, size_t n, tc_err *err);

/* Checks that every key given (from a file or a flag) applies to the
 * resolved scenario: --rate-cap with --mode steps, --seed of a placement
 * that is not random, --target-acc with --steps-ratio are refused, naming
 * the flag (or the key, when a file gave it) and what would make it apply. */
tc_status tc_scenario_check_given(const tc_scenario *s, tc_err *err);

/* The checks the command's run makes of the scenario alone, made without
 * running it, with the run's messages (train's degrees against the
 * endpoints, compress's steps ratios, cluster's --ocs, an algorithm that
 * does not fit the operation or the ranks, ...): what --print-scenario and
 * a sweep's validation refuse, after tc_scenario_resolve and
 * tc_scenario_check_given (docs/SCENARIO.md, "Canonical form"). A cluster
 * trace file is read (its content refused as the run refuses it) and kept
 * for the run of the same file that follows, which then does not parse
 * it again. */
tc_status tc_scenario_check_run(const tc_scenario *s, tc_err *err);

/* ---- building what a scenario describes ------------------------------- */

/* The networks of a scenario: each topology built, equalized, degraded,
 * with its routing and display name. */
typedef struct tc_net {
    int n;
    tc_topo *topo[TC_SCN_MAX_TOPOS];
    char name[TC_SCN_MAX_TOPOS][32];
    tc_routing routing[TC_SCN_MAX_TOPOS];
    tc_fail_drawn drawn[TC_SCN_MAX_TOPOS]; /* network.fail_random's draw on each (owned) */
    uint32_t fabric_cables[TC_SCN_MAX_TOPOS]; /* its fabric cables (the base of a fraction) */
    uint32_t failed_cables[TC_SCN_MAX_TOPOS]; /* fabric cables down after every failure */
} tc_net;
tc_status tc_net_build(const tc_scenario *s, tc_net *net, tc_err *err);
void tc_net_free(tc_net *net);

/* The accelerator of compress.accel (topocc/compress.h): the profile
 * embedded in network.profiles under its name, else the one found in
 * network.profiles_dir, else on the default path. out->name points to
 * namebuf (len bytes). An unknown name fails listing the known ones. */
struct tc_accel;
tc_status tc_scenario_accel(const tc_scenario *s, struct tc_accel *out, char *namebuf, size_t len, tc_err *err);

/* The cost profile of network.cost_profile (topocc/cost.h): the one
 * embedded in network.profiles under its name, else the file or the name
 * on the search path (network.profiles_dir first). *out NULL when the
 * scenario has none. */
struct tc_cost;
tc_status tc_scenario_cost(const tc_scenario *s, struct tc_cost **out, tc_err *err);

/* The evaluator options of network i (mode, routing, flow options);
 * fo receives the flow options o->flow points to. */
void tc_scenario_eval_opts(const tc_scenario *s, const tc_net *net, int i, tc_eval_opts *o, tc_flow_opts *fo);

/* ---- running ----------------------------------------------------------- */

typedef struct tc_run_opts {
    tc_progress_fn progress;   /* NULL: no progress reports */
    void *progress_ud;
    double mem_limit_bytes;    /* > 0: refuse a flow simulation (of collective, compare or concurrent) whose
                                * estimated memory exceeds it; 0: no limit (the CLI's default is 75% of
                                * physical memory, tc_mem_physical); the other runs are not estimated */
} tc_run_opts;

/* What a scenario produced: the command's own outcome type (topocc/outcome.h). */
typedef struct tc_outcome {
    tc_command command;
    void *value;               /* tc_<command>_out */
} tc_outcome;

/* The one entry point: runs a resolved scenario. */
tc_status tc_scenario_run(const tc_scenario *s, const tc_run_opts *ro, tc_outcome *out, tc_err *err);
void tc_outcome_free(tc_outcome *o);

#ifdef __cplusplus
}
#endif

#endif
