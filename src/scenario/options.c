/*
 * options.c - the one option table of every subcommand. A flag either sets
 * a scenario key (through the key table's reader, so a flag and a JSON key
 * mean the same thing) or is an output or general option the CLI handles.
 * The same flag means the same thing in every command that accepts it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "scenario/keys.h"

typedef enum {
    F_VALUE = 0,  /* the value as a JSON string */
    F_SWITCH,     /* no value: true */
    F_SWITCH_OFF, /* no value: false (--no-X) */
    F_LIST,       /* repeatable: the occurrences form a list */
    F_FAILS,      /* --fail: repeatable, each a comma-separated list of KIND:ID, a bare ID of the kind before it;
                   * all of them form one list */
    F_COMMA,      /* a comma-separated list */
    F_ALGOS,      /* a comma-separated list of algorithm specs (whose parameters hold commas too) */
    F_ONE_SIZE,   /* one size: a list of one */
    F_EQUALIZE,   /* injection=RATE */
    F_PLACE,      /* POLICY[:seed=S] */
    F_JOBS_FILE,  /* a jobs file, embedded by content */
    F_ACC_FILE,   /* an accuracy file, embedded by content */
    F_OUTPUT      /* not a scenario key */
} flag_kind;

typedef struct opt_def {
    tc_option o;
    flag_kind kind;
} opt_def;

#define B(c) TC_CMD_BIT(TC_CMD_##c)
#define ALL TC_CMDS_ALL
#define NETC (B(COLLECTIVE) | B(COMPARE) | B(CONCURRENT) | B(COMPRESS) | B(FAILURES))
#define EVALC (B(COLLECTIVE) | B(COMPARE) | B(COMPRESS) | B(FAILURES))

static const opt_def opts[] = {
    /* network */
    {{"--topo", "network.topo", "network", "SPEC", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), true, "topology spec (repeat for compare)"}, F_LIST},
    {{"--preset", "network.preset", "network", "NAME[:nodes=N]", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), true,
      "a topology from a hardware profile (e.g. dgx-h100:nodes=4; profiles/ lists them)"},
     F_LIST},
    {{"--profiles", "network.profiles_dir", "network", "DIR", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), false,
      "look for hardware profiles in DIR first"},
     F_VALUE},
    {{"--names", "network.names", "network", "A,B,..", B(COMPARE) | B(FAILURES) | B(CLUSTER), false,
      "a short name per topology"},
     F_COMMA},
    {{"--alphas", "network.alphas_s", "network", "T,T,..", B(COMPARE), false,
      "also compare with every topology at each of these per-message overheads (e.g. 0,1us,5us); a conclusion "
      "is stated as holding only where it holds at every one"},
     F_COMMA},
    {{"--equalize", "network.equalize_injection_Bps", "network", "injection=RATE", (NETC & ~B(COMPARE)) | B(TRAIN), false,
      "give every endpoint this total fabric injection bandwidth"},
     F_EQUALIZE},
    {{"--equalize", "network.equalize_injection_Bps", "network", "injection=RATE|cost=C", B(TOPO) | B(COMPARE), false,
      "give every endpoint this total fabric injection bandwidth; or, with --cost, cost=C (dollars, e.g. 5M): every "
      "topology's fabric links at the one speed at which its bill of materials costs C"},
     F_EQUALIZE},
    {{"--cost", "network.cost_profile", "network", "FILE|NAME", B(TOPO) | B(COMPARE), false,
      "a cost profile (profiles/cost-*.json, e.g. cost-2026; docs/PROFILES.md): print each topology's bill of "
      "materials and its total"},
     F_VALUE},
    {{"--degrade", "network.degrade", "network", "link:ID=FACTOR", NETC | B(TOPO), true,
      "scale one directed link's bandwidth (IDs from topocc topo SPEC --links)"},
     F_LIST},
    {{"--fail", "network.fail", "network", "KIND:ID", NETC | B(TOPO), true,
      "fail link:ID (a cable), dlink:ID (one direction), switch:ID, host:ID or node:ID (IDs from topocc topo SPEC "
      "--links; a comma-separated list, a bare ID of the kind before it: link:1,2,switch:3 is link:1,link:2,"
      "switch:3; or repeat it); routes go around, a job cut off is refused"},
     F_FAILS},
    {{"--fail-random", "network.fail_random", "network", "links=K|F%,switches=K,seed=S", NETC | B(TOPO), false,
      "fail K (or F% of the) fabric cables and K switches drawn from the seed (hostlinks=1, nvlinks=1: those too)"},
     F_VALUE},
    {{"--routing", "network.routing", "network", "R", NETC | B(TRAIN), false,
      "Clos: ecmp (the default in steps and flow) or dmodk (formula's, which refuses ecmp); torus: dor (default; "
      "detour with failures), dor-positive, detour or line; full: direct (default; detour with failures) or "
      "detour"},
     F_VALUE},
    {{"--links", "network.links", "network", NULL, B(TOPO), false, "list every directed link with its ID"}, F_SWITCH},
    /* job */
    {{"--ranks", "job.ranks", "job", "N", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), false,
      "ranks of the job (default: every endpoint)"},
     F_VALUE},
    {{"--workers", "job.ranks", "job", "N", B(COMPRESS), false, "data-parallel workers (default: every endpoint)"},
     F_VALUE},
    {{"--place", "job.place", "job", "POLICY", EVALC, false,
      "first (default: ranks on endpoints 0..N-1), random[:seed=S], list (with --endpoints), packed (Clos: fewest "
      "pods, then leaves), slice[:shape=AxBxC][,ocs=4] (torus: a cuboid); seed=S also seeds --occupancy"},
     F_PLACE},
    {{"--endpoints", "job.endpoints", "job", "RANGES", EVALC, false,
      "the job's endpoints in rank order, e.g. 0-31,64-95 (placement list)"},
     F_VALUE},
    {{"--occupancy", "job.occupancy", "job", "F", EVALC, false,
      "place the job on a cluster a seeded history of other jobs holds a fraction F of (0 <= F < 1) [0]"},
     F_VALUE},
    {{"--group", "job.group", "job", "SPEC", B(COLLECTIVE) | B(COMPARE), false,
      "run the collective in every group of the job at once (compare: in every cell; concurrent: a job's "
      "\"group\" key): node (each scale-up node's ranks), stride=S "
      "(ranks i, i+S, ...), block=K (K consecutive ranks), axes=x|y|z|xy.. (torus: ranks differing only along "
      "those dimensions)"},
     F_VALUE},
    /* algorithm */
    {{"--op", "collective.op", "algorithm", "OP[,OP]", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), false,
      "allreduce, reducescatter, allgather, alltoall, broadcast, reduce, sendrecv"},
     F_COMMA},
    {{"--algo", "collective.algo", "algorithm", "ALGO[,ALGO]", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), false,
      "an algorithm (auto: the fastest valid; collective: all, or a list, ranks them)"},
     F_ALGOS},
    {{"--size", "collective.sizes", "algorithm", "BYTES", B(COLLECTIVE) | B(FAILURES), false,
      "message size, nccl-tests convention (e.g. 64MiB)"},
     F_ONE_SIZE},
    {{"--sizes", "collective.sizes", "algorithm", "MIN:MAX[:F]", B(COLLECTIVE) | B(COMPARE), false,
      "sizes MIN, MIN*F, ... up to MAX (F = 4 by default)"},
     F_VALUE},
    {{"--dtype", "collective.dtype", "algorithm", "TYPE", B(COLLECTIVE) | B(COMPARE) | B(CONCURRENT) | B(FAILURES),
      false,
      "element type: float32 (default), fp16, bf16, fp8 (e4m3), fp8e5m2, int8, uint8, int32, uint32, int64, uint64, fp64; sizes are whole elements, rounded as "
      "nccl-tests does"},
     F_VALUE},
    {{"--redop", "collective.redop", "algorithm", "OP", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), false,
      "reduction operator: sum (default), prod, min, max, avg; timed alike, NCCL's choice leaves NVLS out where "
      "NCCL has no NVLS kernel for it on the type"},
     F_VALUE},
    {{"--trials", "failures.trials", "failures", "T", B(FAILURES), false,
      "draws of --fail-random, each from the seed and its number [100]"},
     F_VALUE},
    /* train: one iteration */
    {{"--model", "iteration.model", "train", "MODEL", B(TRAIN), false,
      "a zoo model (llama3-8b, llama3-70b, llama3-405b, gpt3-175b, mixtral-8x7b, bert-large, gpt2-xl, llama-7b, "
      "resnet18, resnet50, vgg16) or a model JSON file"},
     F_VALUE},
    {{"--accel", "iteration.accel", "train", "NAME", B(TRAIN), false,
      "the accelerator profile (h100 by default, a preset's chip on --preset; h200, b200, tpu-v5p, ...)"},
     F_VALUE},
    {{"--dp", "parallel.dp", "train", "D", B(TRAIN), false, "data-parallel degree [1]"}, F_VALUE},
    {{"--tp", "parallel.tp", "train", "T", B(TRAIN), false, "tensor-parallel degree (innermost ranks) [1]"}, F_VALUE},
    {{"--pp", "parallel.pp", "train", "P", B(TRAIN), false, "pipeline stages [1]"}, F_VALUE},
    {{"--ep", "parallel.ep", "train", "E", B(TRAIN), false,
      "expert parallelism for a mixture of experts: experts split over E ranks of each DP group [1]"}, F_VALUE},
    {{"--capacity-factor", "iteration.capacity_factor", "train", "C", B(TRAIN), false,
      "MoE: each expert takes at most C x its even share of tokens, padded to it (0: dropless) [0]"},
     F_VALUE},
    {{"--zipf", "iteration.zipf", "train", "S", B(TRAIN), false,
      "MoE routing skew: expert i gets a share ~ 1/i^S (0: uniform) [0]"},
     F_VALUE},
    {{"--order", "parallel.order", "train", "ORDER", B(TRAIN), false,
      "how ranks map to the parallel dimensions, innermost first [tp-dp-pp, as Megatron-LM]"}, F_VALUE},
    {{"--micro-batches", "iteration.micro_batches", "train", "M", B(TRAIN), false,
      "micro-batches per iteration per pipeline [1]"},
     F_VALUE},
    {{"--micro-batch", "iteration.micro_batch", "train", "B", B(TRAIN), false, "sequences per micro-batch [1]"},
     F_VALUE},
    {{"--seq", "iteration.seq", "train", "S", B(TRAIN), false, "sequence length (default: the model's)"}, F_VALUE},
    {{"--virtual-stages", "iteration.virtual_stages", "train", "V", B(TRAIN), false,
      "interleaved 1F1B: model chunks per stage [1]"},
     F_VALUE},
    {{"--zero", "iteration.zero", "train", "Z", B(TRAIN), false, "ZeRO stage: 0 (DDP), 1, 2, 3 (FSDP) [0]"},
     F_VALUE},
    {{"--seq-parallel", "iteration.seq_parallel", "train", NULL, B(TRAIN), false,
      "sequence parallelism: TP's all-reduces become reduce-scatter + all-gather"},
     F_SWITCH},
    {{"--recompute", "iteration.recompute", "train", "R", B(TRAIN), false,
      "activation recomputation: none, selective, full [none]"},
     F_VALUE},
    {{"--attention", "iteration.attention", "train", "K", B(TRAIN), false,
      "the attention kernel: flash (fused, as FlashAttention and Transformer Engine: the s x s scores are never "
      "stored) or eager (softmax, its dropout mask and the scores stored for the backward pass) [flash]"},
     F_VALUE},
    {{"--grad-dtype", "iteration.grad_dtype", "train", "T", B(TRAIN), false,
      "gradient type in memory and on the wire (DP all-reduce, reduce-scatter): bf16, fp16 (2 bytes) or fp32 "
      "(4; Megatron-LM's default for bf16 training) [bf16]"},
     F_VALUE},
    {{"--no-overlap", "iteration.overlap", "train", NULL, B(TRAIN), false,
      "run communication and compute one at a time on each rank"},
     F_SWITCH_OFF},
    {{"--achievable", "iteration.achievable", "train", "F", B(TRAIN), false,
      "fraction of peak FLOP/s a layer's compute reaches, or 'profile': the profile's measured matmul ceiling [0.7, assumed]"},
     F_VALUE},
    {{"--s-c", "iteration.s_c", "train", "S", B(TRAIN) | B(COMPRESS), false,
      "compute slowdown while communication is in flight: 1/(1+S) [0.19]"},
     F_VALUE},
    {{"--s-m", "iteration.s_m", "train", "S", B(TRAIN) | B(COMPRESS), false,
      "communication slowdown while compute runs: 1/(1+S) [0]"},
     F_VALUE},
    {{"--no-cosim", "iteration.cosim", "train", NULL, B(TRAIN), false,
      "flow mode: time each collective alone (every group of its kind at once), not the iteration's network as one "
      "simulation"},
     F_SWITCH_OFF},
    {{"--timeline", "iteration.timeline", "train", "FILE", B(TRAIN), false,
      "write the iteration as a Chrome trace (Perfetto): compute and communication tracks per pipeline stage"},
     F_VALUE},
    {{"--comm-order", "iteration.comm_order", "train", "ORDER", B(TRAIN), false,
      "gradient buckets: backward (first ready, first sent; PyTorch DDP) or forward (the next forward's first, "
      "preempting; P3, ByteScheduler) [backward]"},
     F_VALUE},
    {{"--dp-algo", "iteration.dp_algo", "train", "ALGO", B(TRAIN), false,
      "the algorithm of the DP collectives (gradient reduce-scatter, all-gather or all-reduce; expert DP's too): "
      "library (what NCCL runs: rings, for all-reduce the faster of ring and dbtree, NCCL's multi-rail ring "
      "(nccl-ring) where faster), auto (the fastest of all, "
      "each collective timed alone) or a name as collective's --algo takes it (ring, rhd, dbtree:chunks=64, nccl, "
      "...) [library]"},
     F_VALUE},
    {{"--dp-algo", "iteration.dp_algo", "train", "ALGO", B(COMPRESS), false,
      "the algorithm of the allreduce path's collectives (the fp32 and bf16 baselines' all-reduce included), as "
      "train's --dp-algo: library (what NCCL runs: ring or dbtree, NCCL's multi-rail ring (nccl-ring) where "
      "faster), auto (the fastest of all) or a name as collective's --algo takes it [library]"},
     F_VALUE},
    {{"--tp-algo", "iteration.tp_algo", "train", "ALGO", B(TRAIN), false,
      "the algorithm of the TP collectives (all-reduce, or reduce-scatter and all-gather with --seq-parallel): "
      "library, auto or a name, as --dp-algo [library]"},
     F_VALUE},
    {{"--ep-algo", "iteration.ep_algo", "train", "ALGO", B(TRAIN), false,
      "the algorithm of the expert all-to-alls: library (NCCL's grouped sends to every peer: nccl-a2a on a topology "
      "of scale-up nodes, direct elsewhere), auto or a name (direct, pairwise, bruck, nccl-a2a, ...) [library]"},
     F_VALUE},
    {{"--compress-dp", "iteration.compress_dp", "train", "CODEC", B(TRAIN), false,
      "compress DP gradient buckets (ZeRO 0) with CODEC where that shortens the iteration (e.g. powersgd:rank=4)"},
     F_VALUE},
    {{"--compress-pp", "iteration.compress_pp", "train", "CODEC", B(TRAIN), false,
      "compress pipeline activation sends (fp16, bf16, int8, int4) where that shortens the iteration"},
     F_VALUE},
    {{"--compress-ep", "iteration.compress_ep", "train", "CODEC", B(TRAIN), false,
      "compress expert all-to-all tokens (fp16, bf16, int8, int4) where that shortens the iteration"},
     F_VALUE},
    {{"--sync", "sync.strategy", "train", "S", B(TRAIN), false,
      "how replicas synchronise: ddp (every step), local-sgd, diloco, diloco-eager, diloco-delayed, "
      "streaming-diloco [ddp]"},
     F_VALUE},
    {{"--replicas", "sync.replicas", "train", "M", B(TRAIN), false,
      "model replicas, each a block of the ranks (its DP share, all of TP and PP) [the topology's pods, else 1]"},
     F_VALUE},
    {{"--inner-steps", "sync.inner_steps", "train", "H", B(TRAIN), false,
      "local SGD and DiLoCo: inner steps between outer synchronisations [100]"},
     F_VALUE},
    {{"--outer-steps", "sync.outer_steps", "train", "K", B(TRAIN), false,
      "also report a run of K outer steps (K x H steps) [0: per step only]"},
     F_VALUE},
    {{"--fragments", "sync.fragments", "train", "F", B(TRAIN), false,
      "streaming DiLoCo: fragments synchronised in turn [layers / 3]"},
     F_VALUE},
    {{"--overlap-steps", "sync.overlap_steps", "train", "T", B(TRAIN), false,
      "streaming DiLoCo: inner steps a fragment's outer all-reduce may overlap [1]"},
     F_VALUE},
    {{"--outer-dtype", "sync.outer_dtype", "train", "T", B(TRAIN), false,
      "outer pseudo-gradient on the wire: fp32, bf16, int8, fp4 [fp32]"},
     F_VALUE},
    {{"--dma", "iteration.dma", "train", NULL, B(TRAIN), false,
      "collectives on copy engines (DMA): compute slows by 1/(1+0.054) while they run, not 1/(1+S)"},
     F_SWITCH},
    {{"--search", "iteration.search", "train", NULL, B(TRAIN), false,
      "rank every split (dp, tp, pp, micro-batches) of the endpoints for the global batch that fits in memory"},
     F_SWITCH},
    {{"--global-batch", "iteration.global_batch", "train", "G", B(TRAIN), false,
      "sequences per iteration (--search; default: dp x micro-batches x micro-batch as given)"},
     F_VALUE},
    {{"--allow-oom", "iteration.allow_oom", "train", NULL, B(TRAIN), false,
      "time a job that does not fit in the accelerator's memory (else an error saying by how much)"},
     F_SWITCH},
    {{"--tp-in-node", "iteration.tp_in_node", "train", NULL, B(TRAIN), false,
      "a TP group larger than a scale-up node is an error (else flagged)"},
     F_SWITCH},
    /* cluster */
    {{"--trace", "cluster.trace", "cluster", "FILE", B(CLUSTER), false,
      "a job trace: Philly cluster_job_log (JSON), Helios cluster_log.csv, PAI pai_task_table.csv, or CSV "
      "submit,size,duration"},
     F_VALUE},
    {{"--trace-format", "cluster.trace_format", "cluster", "FMT", B(CLUSTER), false,
      "auto (default: by content), csv, philly, helios, pai"},
     F_VALUE},
    {{"--synthetic", "cluster.synthetic", "cluster", "N,seed=S[,load=L]", B(CLUSTER), false,
      "N jobs drawn from published trace statistics, arriving to offer load L of the cluster [0.9]"},
     F_VALUE},
    {{"--scheduler", "cluster.scheduler", "cluster", "S", B(CLUSTER), false,
      "fifo (strict first come, first served; default) or backfill (EASY)"},
     F_VALUE},
    {{"--ocs", "cluster.ocs", "cluster", "K", B(CLUSTER), false,
      "torus: cubes of K per dimension joined by optical switches (TPU v4: 4); 0: none [0]"},
     F_VALUE},
    {{"--strict", "cluster.strict", "cluster", NULL, B(CLUSTER), false,
      "a job larger than a cluster is an error (default: reported and counted)"},
     F_SWITCH},
    /* evaluator */
    {{"--mode", "eval.mode", "eval", "MODE", EVALC | B(TRAIN), false,
      "formula (default), steps (phase by phase on the graph) or flow (event-driven)"},
     F_VALUE},
    {{"--phases", "eval.phases", "eval", NULL, B(COLLECTIVE), false,
      "formula: each phase's time, closed form or routed graph, and what binds"},
     F_SWITCH},
    {{"--rate-cap", "flow.rate_cap_Bps", "flow", "RATE", NETC, false, "cap every flow's rate (NIC efficiency)"},
     F_VALUE},
    {{"--multipath", "flow.multipath", "flow", "route|spray", NETC, false,
      "one routed path per transfer, or split over every equal-cost path"},
     F_VALUE},
    {{"--deps", "flow.deps", "flow", "DEPS", NETC, false,
      "when a transfer of step s from a to b starts: auto (default): as fifo if at most --eager-limit bytes, "
      "else as rendezvous; rendezvous: a and b have reached s; fifo: a has reached s; recv: a's receives of "
      "earlier steps are delivered"},
     F_VALUE},
    {{"--eager-limit", "flow.eager_limit_bytes", "flow", "SIZE", NETC, false,
      "deps auto: the largest message sent without waiting for its receiver (default 64KiB)"},
     F_VALUE},
    {{"--event-budget", "flow.event_budget", "flow", "N", NETC, false,
      "bound the simulated events (default 200000000): ranks folded by symmetry are not simulated, so the "
      "events printed for all ranks may be more"},
     F_VALUE},
    {{"--no-skip", "flow.skip", "flow", NULL, NETC | B(TRAIN), false,
      "simulate every step of every rank: no skipping of repeated steps, no folding of symmetric ranks (flow mode); "
      "train: no collective timed alone"},
     F_SWITCH_OFF},
    {{"--flow-bounds", "flow.bounds", "flow", NULL, B(COLLECTIVE) | B(COMPARE) | B(FAILURES), false,
      "a one-step schedule (direct all-to-all) bounded instead of simulated: time is the lower end (the most "
      "loaded link drains), the simulation's time lies below the upper end printed beside; memory per link, "
      "not per flow"},
     F_SWITCH},
    {{"--trace", "flow.trace", "flow", "FILE", B(COLLECTIVE) | B(CONCURRENT), false,
      "write a Chrome trace (Perfetto) of the simulation"},
     F_VALUE},
    /* concurrent */
    {{"--jobs", "concurrent.jobs", "concurrent", "FILE", B(CONCURRENT), false,
      "the jobs (JSON, embedded in the scenario by content)"},
     F_JOBS_FILE},
    /* codecs */
    {{"--codec", "codecs", "codec", "C", B(CODEC_BENCH) | B(TRAIN_ACCURACY) | B(COMPRESS), true,
      "a codec spec, repeatable (fp32, bf16, int8, topk:ratio=0.01, powersgd:rank=4, ...)"},
     F_LIST},
    /* compress */
    {{"--model", "compress.model", "compress", "MODEL", B(COMPRESS), false,
      "resnet50, vgg16, bert-large, gpt2-xl, llama-7b[:batch=B,mfu=F] or params=N,layers=L,flops=F"},
     F_VALUE},
    {{"--accel", "compress.accel", "compress", "NAME", B(COMPRESS), false,
      "the accelerator: an accelerator profile (h100 by default, a preset's chip on --preset; a100, b200, tpu-v5p, ...; searched in --profiles DIR "
      "first; docs/PROFILES.md)"},
     F_VALUE},
    {{"--mfu", "compress.mfu", "compress", "F", B(COMPRESS), false, "model FLOPs utilisation (default: the model's)"},
     F_VALUE},
    {{"--bucket", "compress.bucket_bytes", "compress", "BYTES", B(COMPRESS), false,
      "DDP bucket size (default 25MiB)"},
     F_VALUE},
    {{"--offload", "compress.offload", "compress", NULL, B(COMPRESS), false,
      "codec work on a separate engine, not the accelerator"},
     F_SWITCH},
    {{"--sweep-bw", "compress.sweep_bw", "compress", NULL, B(COMPRESS), false,
      "the regime map over fabric bandwidth per endpoint"},
     F_SWITCH},
    {{"--target-acc", "compress.target_acc", "compress", "A", B(COMPRESS), false,
      "target accuracy, a fraction or a percentage (default: 99% of bf16's seed-mean final)"},
     F_VALUE},
    {{"--steps-ratio", "compress.steps_ratio", "compress", "C=R", B(COMPRESS), true,
      "steps(C) / steps(bf16) to the target (R may be never)"},
     F_LIST},
    {{"--codec-throughput", "compress.codec_throughput", "compress", "C=GB/s", B(COMPRESS), true,
      "encode+decode speed of codec C (or of a kind)"},
     F_LIST},
    {{"--accuracy", "compress.accuracy", "compress", "FILE", B(COMPRESS), false,
      "accuracy curves from topocc train-accuracy --out FILE (embedded by content)"},
     F_ACC_FILE},
    /* training */
    {{"--model", "train.model", "train", "PROXY", B(TRAIN_ACCURACY), false,
      "the proxy model: mlp, cnn (Fashion-MNIST) or chartf (fortunes) [mlp]"},
     F_VALUE},
    {{"--proxy", "train.model", "train", "PROXY", B(COMPRESS), false,
      "the accuracy proxy trained now: mlp, cnn or chartf (default: that of the model's family)"},
     F_VALUE},
    {{"--hidden", "train.hidden", "train", "N", B(TRAIN_ACCURACY), false, "mlp: hidden units [128]"}, F_VALUE},
    {{"--width", "train.width", "train", "N", B(TRAIN_ACCURACY), false,
      "cnn: channels of the first convolution [8]; chartf: model dimension [32]"},
     F_VALUE},
    {{"--layers", "train.layers", "train", "N", B(TRAIN_ACCURACY), false, "chartf: transformer blocks [2]"}, F_VALUE},
    {{"--heads", "train.heads", "train", "N", B(TRAIN_ACCURACY), false, "chartf: attention heads [2]"}, F_VALUE},
    {{"--context", "train.context", "train", "N", B(TRAIN_ACCURACY), false, "chartf: characters of context [32]"},
     F_VALUE},
    {{"--weight-decay", "train.weight_decay", "train", "X", B(TRAIN_ACCURACY), false,
      "AdamW's decoupled weight decay (chartf) [0.01]"},
     F_VALUE},
    {{"--shuffled-labels", "train.shuffled_labels", "train", NULL, B(TRAIN_ACCURACY), false,
      "train on randomly permuted labels (a check: accuracy must fall to chance)"},
     F_SWITCH},
    {{"--workers", "train.workers", "train", "N", B(TRAIN_ACCURACY), false, "simulated data-parallel workers [8]"},
     F_VALUE},
    {{"--batch", "train.batch", "train", "N", B(TRAIN_ACCURACY), false, "samples per worker per step [32]"},
     F_VALUE},
    {{"--steps", "train.steps", "train", "N", B(TRAIN_ACCURACY), false, "training steps [2000]"}, F_VALUE},
    {{"--eval-every", "train.eval_every", "train", "N", B(TRAIN_ACCURACY), false, "steps between test points [100]"},
     F_VALUE},
    {{"--lr", "train.lr", "train", "X", B(TRAIN_ACCURACY), false, "learning rate [mlp 0.05, SGD momentum 0.9; others: the proxy's]"},
     F_VALUE},
    {{"--seed", "train.seed", "train", "N", B(TRAIN_ACCURACY), false,
      "the first seed (initialization and data order) [1]"},
     F_VALUE},
    {{"--seeds", "train.seeds", "train", "N", B(TRAIN_ACCURACY) | B(COMPRESS), false,
      "runs per codec, on seeds S, S+1, ... (the intervals need 2 or more) [5]"},
     F_VALUE},
    {{"--target-acc", "train.target_acc", "train", "A", B(TRAIN_ACCURACY), false,
      "target of the steps ratios, a fraction or a percentage (default: 99% of bf16's seed-mean final)"},
     F_VALUE},
    {{"--train-subset", "train.train_subset", "train", "N", B(TRAIN_ACCURACY), false,
      "first N training images, 0 = all [0]"},
     F_VALUE},
    {{"--test-subset", "train.test_subset", "train", "N", B(TRAIN_ACCURACY), false, "first N test images, 0 = all [0]"},
     F_VALUE},
    {{"--bucket", "train.bucket_bytes", "train", "BYTES", B(TRAIN_ACCURACY), false, "DDP bucket size [25MB]"},
     F_VALUE},
    {{"--data", "train.data_dir", "train", "DIR", B(TRAIN_ACCURACY), false,
      "the proxy's data directory (Fashion-MNIST: package dataset-fashion-mnist; fortunes: package fortunes)"},
     F_VALUE},
    /* codec-bench */
    {{"--size", "codec_bench.size_bytes", "codec-bench", "BYTES", B(CODEC_BENCH), false, "bucket size [25MiB]"},
     F_VALUE},
    {{"--seconds", "codec_bench.seconds", "codec-bench", "S", B(CODEC_BENCH), false, "measuring time per codec [0.5]"},
     F_VALUE},
    {{"--workers", "codec_bench.workers", "codec-bench", "N", B(CODEC_BENCH), false, "workers of the roofline [8]"},
     F_VALUE},
    /* output and general: not scenario keys */
    {{"--format", NULL, "output", "table|csv|json", ALL, false, "what stdout gets (default table)"}, F_OUTPUT},
    {{"--out", NULL, "output", "FILE", ALL, false,
      "also write the result to FILE: *.csv the primary table (+ *.scenario.json), *.txt the text, else JSON"},
     F_OUTPUT},
    {{"--out-dir", NULL, "output", "DIR", ALL, false, "write every table as DIR/<table>.csv and DIR/scenario.json"},
     F_OUTPUT},
    {{"--quiet", NULL, "output", NULL, ALL, false, "no progress reports on stderr"}, F_OUTPUT},
    {{"--scenario", NULL, "general", "FILE", ALL, false,
      "read the scenario from FILE (a scenario or a saved result; - for stdin); flags replace its values"},
     F_OUTPUT},
    {{"--print-scenario", NULL, "general", NULL, ALL, false, "print the resolved scenario as JSON; do not run it"},
     F_OUTPUT},
    {{"--mem-limit", NULL, "general", "BYTES", B(COLLECTIVE) | B(COMPARE) | B(CONCURRENT), false,
      "refuse flow simulations estimated above this memory (default 75% of physical memory)"},
     F_OUTPUT},
    {{"--default", NULL, "general", NULL, B(COMPARE), false, "the built-in scenario of make run"}, F_OUTPUT},
    {{"--help", NULL, "general", NULL, ALL, false, "this help"}, F_OUTPUT},
};

#define NOPTS (sizeof opts / sizeof *opts)

size_t tc_option_count(void)
{
    return NOPTS;
}

const tc_option *tc_option_get(size_t i)
{
    return i < NOPTS ? &opts[i].o : NULL;
}

static const opt_def *find_def(const char *flag, tc_command c)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strcmp(opts[i].o.flag, flag) == 0 && (opts[i].o.commands & TC_CMD_BIT(c)))
            return &opts[i];
    return NULL;
}

const tc_option *tc_option_find(const char *flag, tc_command c)
{
    const opt_def *d = find_def(flag, c);
    return d ? &d->o : NULL;
}

const char *tc_option_nearest(const char *flag, tc_command c)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (size_t i = 0; i < NOPTS; i++) {
        if (!(opts[i].o.commands & TC_CMD_BIT(c)))
            continue;
        size_t d = tc_edit_distance(flag, opts[i].o.flag);
        if (d < bd)
            bd = d, best = opts[i].o.flag;
    }
    return best;
}

/* Splits "a,b,c" into a JSON list. For algorithm specs a piece with '='
 * and no ':' continues the previous one ("ring:chunks=8,root=2,dbtree"). */
static json_t *split(const char *v, bool algos)
{
    json_t *a = json_array();
    const char *p = v;
    char buf[512];
    while (true) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), p);
        size_t k = json_array_size(a);
        if (algos && k && strchr(buf, '=') && !strchr(buf, ':')) {
            char joined[1100];
            snprintf(joined, sizeof joined, "%.500s,%.500s", json_string_value(json_array_get(a, k - 1)), buf);
            json_array_set_new(a, k - 1, json_string(joined));
        } else {
            json_array_append_new(a, json_string(buf));
        }
        if (!c)
            break;
        p = c + 1;
    }
    return a;
}

static tc_status read_file(const char *path, const char *kind, json_t **out, tc_err *err)
{
    json_error_t je;
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) /* jansson reads one as nothing */
        return tc_fail(err, TC_EINVAL, "%s '%s': a directory: give a file", kind, path);
    *out = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (*out)
        return TC_OK;
    if (je.line <= 0)
        return tc_fail(err, TC_EINVAL, "%s '%s': %s", kind, path, je.text);
    return tc_fail(err, TC_EINVAL, "%s '%s' line %d, column %d: %s", kind, path, je.line, je.column, je.text);
}

static tc_status jobs_file(tc_scenario *s, const char *path, tc_err *err)
{
    json_t *root;
    tc_status st = read_file(path, "jobs file", &root, err);
    if (st)
        return st;
    char what[300];
    snprintf(what, sizeof what, "jobs file '%.256s'", path);
    const char *k;
    json_t *v;
    if (!json_is_object(root))
        st = tc_fail(err, TC_EINVAL, "%s: expected {\"jobs\": [ ... ]}", what);
    else
        json_object_foreach(root, k, v) if (strcmp(k, "jobs") != 0 && st == TC_OK) st =
            tc_fail(err, TC_EINVAL, "%s: unknown top-level key '%s': accepted is jobs", what, k);
    if (st == TC_OK) {
        char where[320];
        snprintf(where, sizeof where, "%s: jobs", what);
        json_t *jobs = json_object_get(root, "jobs");
        st = tc_scn_set_key(s, "concurrent.jobs", jobs ? jobs : json_null(), where, err);
    }
    json_decref(root);
    return st;
}

static tc_status acc_file(tc_scenario *s, const char *path, tc_err *err)
{
    json_t *root;
    tc_status st = read_file(path, "accuracy file", &root, err);
    if (st)
        return st;
    char what[300];
    snprintf(what, sizeof what, "accuracy file '%.256s'", path);
    st = tc_scn_set_key(s, "compress.accuracy", root, what, err);
    json_decref(root);
    return st;
}

/* POLICY[:seed=S][,shape=AxBxC][,ocs=K] */
static tc_status place_flag(tc_scenario *s, const char *v, tc_err *err)
{
    char pol[32];
    const char *colon = strchr(v, ':');
    if (colon && !colon[1]) /* as an empty item between commas is */
        return tc_fail(err, TC_EINVAL,
                       "--place '%s': nothing after the colon (expected first, packed, random[:seed=S] or "
                       "slice[:shape=AxBxC][,ocs=K])",
                       v);
    snprintf(pol, sizeof pol, "%.*s", (int)(colon ? (size_t)(colon - v) : strlen(v)), v);
    json_t *j = json_string(pol);
    tc_status st = tc_scn_set_key(s, "job.place", j, "--place", err);
    json_decref(j);
    if (st || !colon)
        return st;
    /* seed=S sets job.seed; shape= and ocs= form job.slice */
    char items[256], slice[256] = "";
    if (strlen(colon + 1) >= sizeof items)
        return tc_fail(err, TC_EINVAL, "--place '%.40s...': too long", v);
    snprintf(items, sizeof items, "%s", colon + 1);
    /* an empty item (strtok_r would skip it), as a topology spec refuses */
    if (tc_list_has_empty(items))
        return tc_fail(err, TC_EINVAL,
                       "--place '%s': empty item between commas (expected POLICY, POLICY:seed=S or "
                       "slice:shape=AxBxC[,ocs=K][,seed=S])",
                       v);
    bool seed = false;
    for (char *save = NULL, *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (strncmp(it, "seed=", 5) == 0 && it[5] && !seed) {
            seed = true;
            j = json_string(it + 5);
            st = tc_scn_set_key(s, "job.seed", j, "--place seed", err);
            json_decref(j);
            if (st)
                return st;
            tc_keyset_add(&s->flag_mask, tc_scn_key_index("job.seed"));
        } else if (strncmp(it, "shape=", 6) == 0 || strncmp(it, "ocs=", 4) == 0) {
            size_t n = strlen(slice);
            snprintf(slice + n, sizeof slice - n, "%s%s", n ? "," : "", it);
        } else {
            return tc_fail(err, TC_EINVAL,
                           "--place '%s': expected POLICY, POLICY:seed=S or slice:shape=AxBxC[,ocs=K][,seed=S]", v);
        }
    }
    if (slice[0]) {
        j = json_string(slice);
        st = tc_scn_set_key(s, "job.slice", j, "--place slice", err);
        json_decref(j);
        if (st == TC_OK)
            tc_keyset_add(&s->flag_mask, tc_scn_key_index("job.slice"));
    }
    return st;
}

static json_t *flag_value(const opt_def *d, const char *const *values, size_t n)
{
    switch (d->kind) {
    case F_SWITCH:
        return json_true();
    case F_SWITCH_OFF:
        return json_false();
    case F_LIST: {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(a, json_string(values[i]));
        return a;
    }
    case F_FAILS: {
        /* link:128,130,132 reads as link:128,link:130,link:132: a bare ID
         * (digits only, no kind can be one) takes the kind of the item
         * before it in the same value; a bare ID first is left for
         * network.fail to refuse. The scenario gets every item whole. */
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *b = split(values[i], false);
            char kind[16] = "";
            for (size_t k = 0; k < json_array_size(b); k++) {
                const char *it = json_string_value(json_array_get(b, k));
                const char *colon = strchr(it, ':');
                if (colon && (size_t)(colon - it) < sizeof kind)
                    snprintf(kind, sizeof kind, "%.*s", (int)(colon - it), it);
                else if (colon)
                    kind[0] = '\0';
                else if (kind[0] && *it && strspn(it, "0123456789") == strlen(it)) {
                    char whole[64];
                    snprintf(whole, sizeof whole, "%s:%.40s", kind, it);
                    json_array_set_new(b, k, json_string(whole));
                }
            }
            json_array_extend(a, b);
            json_decref(b);
        }
        return a;
    }
    case F_COMMA:
        return split(values[0], false);
    case F_ALGOS:
        return split(values[0], true);
    case F_ONE_SIZE:
        return json_pack("[s]", values[0]);
    default:
        return json_string(values[0]);
    }
}

/* The topologies a flag gives (--topo, --preset) replace those of the
 * scenario file as a whole: the file's network.topo (a saved result's
 * presets are expanded there) and network.preset, unless a flag gives that
 * one too; the file's record of which came from presets; and the file's
 * names for them (--names given as a flag stays). */
static tc_status flag_topologies(tc_scenario *s, bool preset, tc_err *err)
{
    if (!tc_keyset_has(&s->flag_mask, tc_scn_key_index(preset ? "network.topo" : "network.preset"))) {
        if (preset)
            s->ntopo = 0;
        else
            s->npreset = s->npreset_at = 0;
    }
    /* The profiles of the presets replaced leave network.profiles with
     * them, but one that also names the accelerator or the cost profile. */
    json_t *all = s->ntopo_preset && s->profiles ? json_loads(s->profiles, 0, NULL) : NULL;
    bool changed = false;
    for (int i = 0; all && i < s->ntopo_preset; i++) {
        char name[sizeof s->topo_preset[0]];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(s->topo_preset[i], ":"), s->topo_preset[i]);
        if (name[0] && strcmp(name, s->accel) != 0 && strcmp(name, s->cost_profile) != 0 &&
            json_object_get(all, name)) {
            json_object_del(all, name);
            changed = true;
        }
    }
    if (changed) {
        char *txt = json_object_size(all) ? tc_json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (json_object_size(all) && !txt) {
            json_decref(all);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
        free(s->profiles);
        s->profiles = txt;
    }
    json_decref(all);
    s->ntopo_preset = 0;
    if (!tc_keyset_has(&s->flag_mask, tc_scn_key_index("network.names")))
        s->nnames = 0;
    return TC_OK;
}

void tc_option_owners(const char *flag, char *buf, size_t len)
{
    buf[0] = '\0';
    unsigned seen = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        if (strcmp(opts[i].o.flag, flag) != 0)
            continue;
        for (int c = 0; c < TC_CMD_COUNT; c++)
            if ((opts[i].o.commands & TC_CMD_BIT(c)) && !(seen & TC_CMD_BIT(c))) {
                size_t l = strlen(buf);
                snprintf(buf + l, len - l, "%s%s", seen ? ", " : "", tc_command_name((tc_command)c));
                seen |= TC_CMD_BIT(c);
            }
    }
}

/* What the command line refuses before it sets a flag, refused here for
 * a caller of the library: a flag of no command or of another command,
 * an output option, a missing value, a second value of a flag that takes
 * one, a value given to a switch. */
static tc_status flag_args(const tc_scenario *s, const char *flag, const opt_def *d, const char *const *values,
                           size_t n, tc_err *err)
{
    const char *cmd = tc_command_name(s->command);
    if (!d) {
        char who[256];
        tc_option_owners(flag, who, sizeof who);
        if (who[0])
            return tc_fail(err, TC_EINVAL, "option %s does not apply to 'topocc %s' (it belongs to %s)", flag, cmd,
                           who);
        const char *near = tc_option_nearest(flag, s->command);
        return tc_fail(err, TC_EINVAL, "unknown option '%.64s' for 'topocc %s'%s%s%s", flag, cmd,
                       near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    }
    if (d->kind == F_OUTPUT)
        return tc_fail(err, TC_EINVAL, "option %s is not a scenario key: it is an output or general option of the "
                                       "program (a caller renders the outcome itself: tc_outcome_write)",
                       flag);
    if (!d->o.metavar) {
        for (size_t i = 0; i < n; i++)
            if (values && values[i] && values[i][0])
                return tc_fail(err, TC_EINVAL, "option %s takes no value", flag);
        return TC_OK;
    }
    if (n == 0 || !values)
        return tc_fail(err, TC_EINVAL, "option %s needs a value: %s %s", flag, flag, d->o.metavar);
    if (n > 1 && !d->o.list)
        return tc_fail(err, TC_EINVAL, "option %s given %zu times (it takes one value)", flag, n);
    for (size_t i = 0; i < n; i++)
        if (!values[i])
            return tc_fail(err, TC_EINVAL, "option %s needs a value: %s %s", flag, flag, d->o.metavar);
    return TC_OK;
}

tc_status tc_scenario_set_flag(tc_scenario *s, const char *flag, const char *const *values, size_t n, tc_err *err)
{
    if (!flag)
        return tc_fail(err, TC_EINVAL, "no option given (expected a flag such as --topo)");
    const opt_def *d = find_def(flag, s->command);
    tc_status ast = flag_args(s, flag, d, values, n, err);
    if (ast)
        return ast;
    int ki = tc_scn_key_index(d->o.key);
    if (ki < 0)
        return tc_fail(err, TC_EINTERNAL, "internal: no scenario key %s", d->o.key);
    if (tc_keyset_has(&s->flag_mask, ki)) {
        for (size_t i = 0; i < NOPTS; i++)
            if (&opts[i] != d && opts[i].o.key && strcmp(opts[i].o.key, d->o.key) == 0 &&
                (opts[i].o.commands & TC_CMD_BIT(s->command)))
                return tc_fail(err, TC_EINVAL, "%s and %s set the same thing: give one", opts[i].o.flag, flag);
        return tc_fail(err, TC_EINVAL, "option %s given twice", flag);
    }
    /* The scenario holds every value as JSON text, which is UTF-8. */
    for (size_t i = 0; values && i < n; i++) {
        size_t bad;
        if (values[i] && !tc_utf8_valid(values[i], &bad))
            return tc_fail(err, TC_EINVAL, "%s: the value is not valid UTF-8 text (byte %zu is 0x%02x): give it in "
                                           "UTF-8 (the scenario records it as JSON text)",
                           flag, bad + 1, (unsigned)(unsigned char)values[i][bad]);
    }
    /* a directory the user named must be one (the scenario keeps the
     * profiles' content, so a saved scenario replays without it) */
    if (strcmp(flag, "--profiles") == 0 && n > 0) {
        struct stat sb;
        const char *why = stat(values[0], &sb) != 0 ? strerror(errno) : !S_ISDIR(sb.st_mode) ? "not a directory" : NULL;
        if (why)
            return tc_fail(err, TC_EINVAL, "--profiles '%s': %s: give a directory of profile files (NAME.json)",
                           values[0], why);
    }
    /* A value built with an element left out for want of memory is none. */
    unsigned long mark = tc_oom_mark();
    tc_status st;
    if (d->kind == F_JOBS_FILE)
        st = jobs_file(s, values[0], err);
    else if (d->kind == F_ACC_FILE)
        st = acc_file(s, values[0], err);
    else if (d->kind == F_PLACE)
        st = place_flag(s, values[0], err);
    else if (d->kind == F_EQUALIZE) {
        /* injection=RATE or cost=C: the one given replaces the other */
        bool cost = strncmp(values[0], "cost=", 5) == 0 && values[0][5];
        if (!cost && (strncmp(values[0], "injection=", 10) != 0 || !values[0][10]))
            return tc_fail(err, TC_EINVAL, "invalid --equalize '%s': expected injection=RATE (e.g. injection=400Gbps) "
                                           "or, on topo and compare, cost=C (e.g. cost=5M)",
                           values[0]);
        if (cost && s->command != TC_CMD_TOPO && s->command != TC_CMD_COMPARE)
            return tc_fail(err, TC_EINVAL, "--equalize cost= applies to topo and compare (here: --equalize "
                                           "injection=RATE)");
        const char *key = cost ? "network.equalize_cost_usd" : d->o.key;
        const char *other = cost ? d->o.key : "network.equalize_cost_usd";
        json_t *j = json_string(values[0] + (cost ? 5 : 10));
        st = tc_scn_set_key(s, key, j, cost ? "--equalize cost" : "--equalize injection", err);
        json_decref(j);
        if (st == TC_OK) {
            tc_keyset_add(&s->flag_mask, tc_scn_key_index(key));
            if (tc_scn_set_key(s, other, json_null(), "--equalize", err) == TC_OK)
                tc_keyset_del(&s->given_mask, tc_scn_key_index(other));
        }
    } else {
        json_t *j = flag_value(d, values, n);
        st = tc_scn_set_key(s, d->o.key, j, flag, err);
        json_decref(j);
    }
    if (tc_oom_since(mark))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK && (strcmp(d->o.key, "network.topo") == 0 || strcmp(d->o.key, "network.preset") == 0))
        st = flag_topologies(s, strcmp(d->o.key, "network.preset") == 0, err);
    if (st == TC_OK)
        tc_keyset_add(&s->flag_mask, ki);
    return st;
}

/* The flag that sets path in command c, for messages. */
static const char *flag_of(const char *path, tc_command c)
{
    if (strcmp(path, "network.equalize_cost_usd") == 0 && (c == TC_CMD_TOPO || c == TC_CMD_COMPARE))
        return "--equalize cost=";
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].o.key && strcmp(opts[i].o.key, path) == 0 && (opts[i].o.commands & TC_CMD_BIT(c)))
            return opts[i].o.flag;
    return NULL;
}

tc_status tc_scenario_check_given(const tc_scenario *s, tc_err *err)
{
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        const tc_scn_key *k = tc_scn_key_get(i);
        if (!tc_keyset_has(&s->given_mask, (int)i) || tc_scn_key_applies(k, s))
            continue;
        const char *flag = flag_of(k->path, s->command);
        if (tc_keyset_has(&s->flag_mask, (int)i) && flag)
            return tc_fail(err, TC_EINVAL, "%s applies only with %s", flag, k->needs);
        return tc_fail(err, TC_EINVAL, "scenario key %s applies only with %s%s%s%s", k->path, k->needs,
                       flag ? " (" : "", flag ? flag : "", flag ? ")" : "");
    }
    return TC_OK;
}
