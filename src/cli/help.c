/* help.c - every command's help: what it does and an example (written
 * here), then its options, generated from the option table so the two
 * cannot drift apart. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

typedef struct cmd_help {
    const char *usage, *text, *example;
} cmd_help;

static const cmd_help helps[TC_CMD_COUNT] = {
    [TC_CMD_TOPO] = {"topocc topo SPEC [--links] [--equalize injection=RATE] [--cost PROFILE] [--degrade link:ID=FACTOR]...",
                     "Prints endpoints, switches, links, diameter, bisection bandwidth, injection\n"
                     "bandwidth per endpoint and, for a Clos, the oversubscription of each level.\n"
                     "--links lists every directed link with its stable ID (the IDs other\n"
                     "commands use to name a link).\n",
                     "  topocc topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us\n"
                     "  topocc topo torus:dims=4x4,wrap=1x0 --links\n"},
    [TC_CMD_COLLECTIVE] =
        {"topocc collective --topo SPEC --op OP (--size BYTES | --sizes MIN:MAX[:F]) [--algo ALGO|all|A,B]",
         "Times one collective on one topology: time, algbw, busbw (nccl-tests factors),\n"
         "the lower bound, phases. --sizes gives a table over sizes (nccl-tests columns);\n"
         "--algo all (or a list) ranks the valid algorithms by time.\n"
         "OP:    allreduce, reducescatter, allgather, alltoall, broadcast, reduce, sendrecv\n"
         "ALGO:  ring, biring, rd, rhd, binomial, dbtree, bruck, pairwise, direct, torus,\n"
         "       torus-bi, torus-mp, swing, hier, shift, scatter-ring, rsg, neighbor,\n"
         "       segring, hier-dc (hier over a multidc's pods), scatter-rd (MPICH's\n"
         "       scatter + recursive-doubling broadcast), scattered (MPICH's\n"
         "       throttled all-to-all; throttle=K messages at a time, default 32, 0: all;\n"
         "       MPIR_CVAR_ALLTOALL_THROTTLE applies to it), auto (default: the fastest\n"
         "       valid one); fault-aware variants,\n"
         "       never auto's: ring-fa (a ring re-formed around failed links), torus-fa,\n"
         "       torus-bi-fa, torus-mp-fa (a torus ring broken by one failed cable run as a\n"
         "       line), dbtree-fa (double binary trees re-parented around failures);\n"
         "       NCCL's: nccl-ring (its ring; proto=LL|LL128|Simple, channels=C),\n"
         "       nccl-tree (its double binary tree), nccl-nvls (NVLS: the node switch\n"
         "       reduces; node_reduce=1, Hopper or later; across nodes with sharp=1),\n"
         "       nccl-nvls-tree (NVLS inside nodes, a double binary tree of nodes),\n"
         "       nccl-pat (PAT all-gather and reduce-scatter, one GPU per node),\n"
         "       nccl-a2a (its grouped point-to-point all-to-all, and sendrecv;\n"
         "       pxn=0 turns PXN off), nccl-collnet-chain, nccl-collnet-direct\n"
         "       (CollNet: SHARP trees in a Clos with sharp=1), nccl (the algorithm and protocol\n"
         "       NCCL's tuning model picks; NCCL_* variables apply); mpich (the\n"
         "       algorithm MPICH v5.0.1 picks by itself at each size, one rank per node);\n"
         "       parameters: chunks=N (pipelining), root=R (broadcast/reduce),\n"
         "       order=near|far (rhd), tree=lowbit|highbit (binomial)\n"
         "BYTES: nccl-tests convention (whole buffer; all-gather output; reduce-scatter\n"
         "       input; all-to-all: what one rank sends; sendrecv: what one rank sends to\n"
         "       the next), e.g. 64MiB\n"
         "mode:  formula (closed forms, default), steps (phase by phase on the graph) or\n"
         "       flow (event-driven, max-min fair sharing, dependencies per rank)\n"
         "deps:  (flow) rank a has reached step s when its receives of earlier steps are\n"
         "       delivered and its sends of earlier steps have left; --deps says what\n"
         "       else a transfer of step s from a to b waits for (auto: b too, if the\n"
         "       message is above --eager-limit, 64KiB by default)\n",
         "  topocc collective --topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us \\\n"
         "      --op allreduce --algo ring --size 1GiB --mode steps --format json\n"
         "  topocc collective --topo clos:down=8x8,up=1x4 --op alltoall --size 16MiB \\\n"
         "      --mode flow --trace a2a.json\n"},
    [TC_CMD_COMPARE] =
        {"topocc compare --topo A --topo B [...] --op OP[,OP...] --sizes MIN:MAX[:FACTOR]   |   topocc compare --default",
         "Times each operation on each topology for sizes MIN, MIN*FACTOR, ... up to MAX\n"
         "(factor 4 by default) with the requested algorithm (auto: the fastest valid one,\n"
         "reported per cell), prints the ratios against the first topology and says where\n"
         "each topology wins. Topologies must have equal endpoint counts unless --ranks\n"
         "runs the same job size on each. --equalize gives every endpoint of every\n"
         "topology the same total fabric injection bandwidth. --group SPEC runs every\n"
         "cell in every group of the job at once (as collective --group on that topology):\n"
         "times are the slowest group's, sizes and busbw one group's.\n"
         "--default runs the built-in scenario ('make run'): 4,096 endpoints at 400 Gb/s\n"
         "injection each, default latencies: a non-blocking 3-tier Clos, the same Clos 2:1\n"
         "oversubscribed at the leaf, and a 16x16x16 torus at equal injection bandwidth;\n"
         "allreduce, reducescatter, allgather, alltoall from 64 KiB to 4 GiB, at the\n"
         "topologies' alpha and at alpha 0, 0.5, 1, 2, 5 us (--alphas).\n",
         "  topocc compare --topo clos:down=8x8,up=1x8 --topo torus:dims=8x8 \\\n"
         "      --equalize injection=400Gbps --op allreduce,alltoall --sizes 1KiB:1GiB:16\n"},
    [TC_CMD_FAILURES] =
        {"topocc failures --topo A [--topo B ...] --op OP --size BYTES --fail-random links=K|F%,switches=K,seed=S "
         "[--trials T]",
         "Monte Carlo over random failures: on each topology the job runs once on the\n"
         "network as given (--fail applied), then once per draw of --fail-random (T draws,\n"
         "100 by default; draw t from the seed and t, so a run reproduces), with the same\n"
         "schedule on the rerouted paths (libraries do not notice a failed link). Prints\n"
         "per topology what a draw fails (a count and a fraction of the cables it draws\n"
         "from: that topology's own fabric cables, 'of fabric'; with hostlinks=1 or\n"
         "nvlinks=1 those cables too, 'of eligible'), the share of draws in which the job\n"
         "cannot run (cut off, or a rank's endpoint down: the first such draw's reason),\n"
         "and the slowdown (time / healthy time) of the others: min, p50, p90, p99, max,\n"
         "mean and a histogram.\n"
         "Routing: Clos ecmp or dmodk around the failures; torus detour (default) or line.\n",
         "  topocc failures --topo clos:hosts=1024,radix=64,tiers=2 --topo torus:dims=8x8x16 \\\n"
         "      --equalize injection=400Gbps --op allreduce --size 1GiB --mode steps \\\n"
         "      --fail-random links=1%,seed=1 --trials 1000\n"},
    [TC_CMD_TRAIN] =
        {"topocc train --topo SPEC --model MODEL [--accel NAME] --dp D --tp T --pp P [--ep E] [--order ORDER] "
         "[--micro-batches M] [--zero Z] [--mode formula|steps|flow]",
         "One training iteration of a data x tensor x pipeline parallel job (rank r on\n"
         "endpoint r, grouped in --order, default tp-dp-pp as Megatron-LM, innermost\n"
         "first): compute per layer by roofline on the accelerator, TP all-reduces\n"
         "(reduce-scatter + all-gather with --seq-parallel), 1F1B pipeline sends,\n"
         "expert all-to-alls (--ep, a mixture of experts), DP gradient buckets (ZeRO 1-2:\n"
         "reduce-scatter and all-gather; 3: FSDP per layer), each collective timed on\n"
         "the network with every group running at once. Compute runs at 1/(1+s_c)\n"
         "while communication is in flight (--s-c, 0.19). Prints the iteration,\n"
         "compute, exposed communication, bubble, overlap efficiency, MFU and memory\n"
         "per device (docs/MODEL.md, \"Training: one iteration\").\n",
         "  topocc train --topo clos:hosts=64,radix=16,tiers=2,node=8 --model llama3-8b \\\n"
         "      --dp 8 --tp 8 --micro-batches 4 --zero 1\n"},
    [TC_CMD_CLUSTER] =
        {"topocc cluster --topo A [--topo B ...] (--trace FILE | --synthetic N,seed=S[,load=L]) "
         "[--scheduler fifo|backfill] [--ocs K]",
         "Replays a job trace (arrival, endpoints, run time) on each topology through its\n"
         "allocation rule, with the same scheduler: a Clos gives any free endpoints\n"
         "(packed: fewest pods, then leaves); a torus a free cuboid slice of the smallest\n"
         "volume >= the job that has one, or with --ocs K whole K^d cubes joined by\n"
         "optical switches. fifo: strict first come, first served; backfill: EASY (a\n"
         "later job starts early when it does not delay the head's reservation).\n"
         "Traces: Philly cluster_job_log (JSON), Helios cluster_log.csv, PAI\n"
         "pai_task_table.csv, or CSV submit,size,duration (--trace-format, auto by\n"
         "content); --synthetic draws N jobs from published statistics of those traces.\n"
         "Prints utilisation, queueing delay (mean, p50, p99), jobs that never fit, and\n"
         "fragmentation: the cluster's free share while the queue's head waits with\n"
         "enough endpoints free for it (docs/MODEL.md). A job larger than a cluster is\n"
         "counted and skipped (--strict: an error).\n",
         "  topocc cluster --topo clos:hosts=4096,radix=128,tiers=2 --topo torus:dims=16x16x16 \\\n"
         "      --synthetic 10000,seed=1 --scheduler backfill\n"},
    [TC_CMD_CONCURRENT] =
        {"topocc concurrent --topo SPEC --jobs FILE",
         "Runs every job of FILE at once in the flow simulator (max-min fair sharing of\n"
         "every link) and prints each job's time, its time alone and the slowdown.\n"
         "FILE is JSON:\n"
         "  {\"jobs\": [\n"
         "    {\"name\": \"A\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": \"256MiB\",\n"
         "     \"endpoints\": \"0-31\", \"start\": \"0us\"},\n"
         "    {\"name\": \"B\", \"op\": \"alltoall\", \"size\": \"64MiB\", \"endpoints\": [32, 40, 48, 56]}]}\n"
         "op, size and endpoints are required; endpoints is a list or ranges \"a-b,c\" (rank i\n"
         "runs on the i-th endpoint listed). Instead of endpoints a job may give \"ranks\": N\n"
         "and \"place\": first (default), random[:seed=S], packed (Clos: fewest pods, then\n"
         "leaves) or slice[:shape=AxBxC][,ocs=K] (torus: a box), as --place: jobs are\n"
         "placed in file order, each on the endpoints the jobs before it left free (a\n"
         "job that does not fit is refused); each job's placement shape is printed.\n"
         "algo defaults to auto (chosen by the formula evaluator for the job alone);\n"
         "start defaults to 0; chunks and root are optional.\n"
         "\"group\": \"stride=8\" (node, stride=S, block=K, axes=LIST, as collective --group)\n"
         "runs the job's collective in every group of its ranks at once, each group a flow\n"
         "job of its own; the job's figures are its slowest group's, size one group's.\n"
         "The jobs are embedded in the scenario by content. --deps and --eager-limit\n"
         "apply to every job.\n",
         "  topocc concurrent --topo clos:down=8x8,up=1x2 --jobs examples/jobs.json --trace run.json\n"
         "  topocc concurrent --topo clos:down=8x8,up=1x2 --jobs examples/jobs-placed.json\n"},
    [TC_CMD_CODEC_BENCH] =
        {"topocc codec-bench [--codec C]... [--size BYTES] [--seconds S] [--workers N]",
         "Measures, on one core of this machine, the encode + decode throughput of\n"
         "each codec (GB/s of float32 input: encode, the local sum of the single\n"
         "contribution, decode into the bucket), memcpy bandwidth, floating-point\n"
         "and integer arithmetic rates, a random-access rate, an in-place pass's\n"
         "bandwidth and (PowerSGD) OpenBLAS's product rate, alternately in the\n"
         "same run (median, min and max of the repetitions),\n"
         "and prints the cost model's prediction from them beside the measurement,\n"
         "with the codec's multi-pass roofline on an H100 and a TPU v5p\n"
         "(docs/MODEL.md, \"Compute\").\n"
         "Without --codec, every codec with its defaults. The figures are measured:\n"
         "a replay measures them again.\n",
         "  topocc codec-bench --codec bf16 --codec topk:ratio=0.01 --size 4MiB --seconds 0.2\n"},
    [TC_CMD_TRAIN_ACCURACY] =
        {"topocc train-accuracy [--codec C]... [--steps N] [--seeds N] [--target-acc A] [--out FILE]\n"
         "                       [training options]",
         "Trains an MLP (784 -> hidden -> 10, ReLU, softmax cross-entropy; SGD with\n"
         "momentum 0.9) on the Fashion-MNIST data set with N simulated data-parallel\n"
         "workers. Each worker computes the gradient of its own mini-batch; the gradient\n"
         "is cut into DDP buckets and every bucket is aggregated through the codec\n"
         "(error feedback, compress, the collective's sums, decompress), as a DDP\n"
         "communication hook would. Every codec is trained on each of --seeds seeds\n"
         "(default 5: --seed, --seed + 1, ...), run j of every codec with the same\n"
         "initialization and data order; the runs are deterministic and use every CPU.\n"
         "Test accuracy is recorded at step 0, every --eval-every steps and at the end.\n"
         "Against bf16 (added when not asked for), seed by seed: the steps to the target\n"
         "(default 99% of bf16's seed-mean final accuracy) as a ratio with its 95% t\n"
         "interval over the seeds, and the final accuracy's difference with its own.\n"
         "Default codecs: fp32, bf16, int8, topk:ratio=0.01, powersgd:rank=4. --out\n"
         "FILE.json writes the accuracy file read by compress.\n",
         "  topocc train-accuracy --codec bf16 --codec topk:ratio=0.01 --steps 300 --seeds 5 \\\n"
         "      --batch 16 --train-subset 10000 --test-subset 2000 --eval-every 25\n"},
    [TC_CMD_COMPRESS] =
        {"topocc compress --topo SPEC --model MODEL --codec C [--codec C ...] [--workers N]\n"
         "                       [--accuracy FILE | --steps-ratio C=R ...] [--sweep-bw]",
         "Does gradient compression pay, end to end? For each codec, one DDP training\n"
         "iteration on the network and the steps it needs to a target accuracy give the\n"
         "time to accuracy, against the BF16 and FP32 all-reduce baselines (always\n"
         "included). MODEL: a zoo name (resnet50, vgg16, bert-large, gpt2-xl, llama-7b,\n"
         "optionally :batch=B,mfu=F) or params=N,layers=L,flops=F[,steps=S][,mfu=F] where\n"
         "F is the training FLOPs of one iteration of one worker and S the baseline's\n"
         "steps to the target (default 10000). Steps to the target: --steps-ratio C=R\n"
         "gives steps(C) / steps(bf16) directly (R may be 'never'; no interval);\n"
         "--accuracy FILE reads curves from 'topocc train-accuracy --out FILE'; with\n"
         "neither, short Fashion-MNIST training runs measure them now on --seeds seeds\n"
         "(default 5). Measured ratios carry their 95% interval into the time to\n"
         "accuracy; a codec is called faster or slower than bf16 only where the\n"
         "interval of its speedup excludes 1, else indistinguishable. Codec work runs\n"
         "on the accelerator and pauses its compute unless --offload; its speed is the\n"
         "accelerator's multi-pass roofline of the codec's kernels (docs/MODEL.md,\n"
         "\"Compute\") unless --codec-throughput gives it. --sweep-bw: the regime map\n"
         "from 10 Gb/s to 1.6 Tb/s per endpoint and each codec's verdict.\n",
         "  topocc compress --topo clos:down=8x8,up=1x8,bw=10Gbps --model resnet50 --workers 64 \\\n"
         "      --codec powersgd:rank=4 --codec topk:ratio=0.01 --steps-ratio powersgd:rank=4=1.1 \\\n"
         "      --steps-ratio topk:ratio=0.01=1.3 --sweep-bw\n"},
};

void cli_help(tc_command c, FILE *f)
{
    const cmd_help *h = &helps[c];
    fprintf(f, "usage: %s [OPTIONS]\n\n%s\noptions:\n", h->usage, h->text);
    const char *group = "";
    for (size_t i = 0; i < tc_option_count(); i++) {
        const tc_option *o = tc_option_get(i);
        if (!(o->commands & (1u << c)))
            continue;
        if (strcmp(o->group, group) != 0) {
            group = o->group;
            fprintf(f, "  %s:\n", group);
        }
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s", o->flag, o->metavar ? " " : "", o->metavar ? o->metavar : "",
                 o->list ? " ..." : "");
        fprintf(f, "    %-30s %s\n", left, o->help);
    }
    fprintf(f, "\nexample:\n%s", h->example);
}
