/* main.c - topocc: dispatch to subcommands and the general help. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"

static const char *usage =
    "topocc - how long the collectives of ML training take on a network, and why\n"
    "\n"
    "usage: topocc COMMAND [OPTIONS]   (topocc COMMAND --help for details)\n"
    "\n"
    "commands:\n"
    "  topo SPEC [--links]        describe a topology: endpoints, switches, bisection, injection\n"
    "  collective                 time one collective on one topology\n"
    "  compare                    topologies side by side over message sizes\n"
    "  concurrent                 several collectives sharing the network (flow simulation)\n"
    "  codec-bench                gradient codecs' encode+decode throughput on this machine\n"
    "  train-accuracy             train on Fashion-MNIST with each codec, record accuracy\n"
    "  compress                   does gradient compression pay, end to end (time to accuracy)\n"
    "\n"
    "example:\n"
    "  topocc collective --topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us \\\n"
    "      --op allreduce --algo auto --size 64MiB\n"
    "  topocc compare --default   (the scenario of 'make run')\n"
    "\n"
    "topology specs:\n"
    "  clos:down=16x16x16,up=1x16x16[,links=..][,hosts=N]   generalised fat tree (XGFT)\n"
    "  clos:hosts=4096,radix=32,tiers=3,oversub=1             fat tree from switch radix\n"
    "  torus:dims=16x16x16[,wrap=1x1x0]                       torus / mesh\n"
    "  keys for all: bw=, bw1=.., lat=, lat1=.., alpha=, seed=, node=G,node_bw=,node_lat=\n"
    "  units: B KiB MiB GiB KB MB GB | Gbps GB/s | ns us ms s\n"
    "\n"
    "exit codes: 0 success, 2 bad input (one line on stderr), 1 internal failure\n";

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "topo") == 0)
        return cmd_topo(argc, argv);
    if (strcmp(argv[1], "collective") == 0)
        return cmd_collective(argc, argv);
    if (strcmp(argv[1], "compare") == 0)
        return cmd_compare(argc, argv);
    if (strcmp(argv[1], "concurrent") == 0)
        return cmd_concurrent(argc, argv);
    if (strcmp(argv[1], "codec-bench") == 0)
        return cmd_codec_bench(argc, argv);
    if (strcmp(argv[1], "train-accuracy") == 0)
        return cmd_train_accuracy(argc, argv);
    if (strcmp(argv[1], "compress") == 0)
        return cmd_compress(argc, argv);
    fprintf(stderr, "topocc: unknown command '%s': accepted are topo, collective, compare, concurrent, codec-bench, train-accuracy, compress (see topocc --help)\n",
            argv[1]);
    return 2;
}
