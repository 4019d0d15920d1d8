/* main.c - topocc: dispatch to subcommands, the general help, --version. */
#include <errno.h>
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
    "  collective                 time one collective on one topology (or a size sweep, or rank algorithms)\n"
    "  compare                    topologies side by side over message sizes\n"
    "  concurrent                 several collectives sharing the network (flow simulation)\n"
    "  failures                   Monte Carlo over random link and switch failures: slowdown, cut-off share\n"
    "  cluster                    replay a job trace through each topology's allocation: queueing, fragmentation\n"
    "  train                      one iteration of a 3D-parallel training job: compute, exposed communication, memory\n"
    "  codec-bench                gradient codecs' encode+decode throughput on this machine\n"
    "  train-accuracy             train on Fashion-MNIST with each codec, record accuracy\n"
    "  compress                   does gradient compression pay, end to end (time to accuracy)\n"
    "  nccl-tests                 what nccl-tests would print on a cluster (--compare: against a run)\n"
    "  replay FILE                run a saved scenario or result again (- for stdin)\n"
    "  sweep FILE -o R.jsonl      every point of a parameter sweep, resumable, spread over MPI ranks\n"
    "  report FILE -o DIR         an HTML report with plots: a scenario run, a result, or a sweep's results\n"
    "\n"
    "every command but sweep and report (their --help lists theirs): --scenario FILE\n"
    "  (read the scenario; flags replace its values; not replay, which reads FILE,\n"
    "  nor nccl-tests, whose --print-scenario prints a collective scenario: topocc\n"
    "  collective --scenario FILE runs it), --print-scenario (print it resolved, do\n"
    "  not run), --format table|csv|json, --out FILE, --out-dir DIR, --quiet;\n"
    "  collective, compare, concurrent, replay and sweep also --mem-limit BYTES (docs/SCENARIO.md)\n"
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
    "  full:hosts=8                                           fully connected (every pair linked)\n"
    "  multidc:pods=4,pod=clos,hosts=64,radix=16,wan_bw=400Gbps,wan_lat=20ms[,wan_links=L]\n"
    "                                                         pods joined by long-haul links\n"
    "  keys for all: bw=, bw1=.., lat= (per cable), lat1=.., hop_lat= (per switch or router;\n"
    "                full: per endpoint entered, default 0),\n"
    "                alpha= (per message), reduce_bw= (bytes reduced per second), seed=,\n"
    "                node=G,node_bw=,node_lat=,node_hop_lat=\n"
    "  units: B KiB MiB GiB KB MB GB | Gbps GB/s | ns us ms s\n"
    "\n"
    "progress: on stderr unless --quiet; without a terminal a line every 10 s, or\n"
    "  every TOPOCC_PROGRESS_INTERVAL seconds (0: every report)\n"
    "\n"
    "exit codes: 0 success, 2 bad input (one line on stderr), 1 internal failure\n";

static int dispatch(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("topocc %s\ncommit %s\nbuild %s\noptional %s\n", tc_version(), tc_commit(), tc_build_type(),
               tc_optional_deps());
        return 0;
    }
    if (strcmp(argv[1], "replay") == 0)
        return cli_replay(argc, argv, 2);
    if (strcmp(argv[1], "sweep") == 0)
        return cli_sweep(argc, argv, 2);
    if (strcmp(argv[1], "nccl-tests") == 0)
        return cli_nccl_tests(argc, argv, 2);
    if (strcmp(argv[1], "report") == 0)
        return cli_report(argc, argv, 2);
    tc_command c;
    tc_err err;
    if (tc_command_parse(argv[1], &c, &err)) {
        fprintf(stderr, "topocc: unknown command '%s': accepted are topo, collective, compare, concurrent, failures, "
                        "cluster, train, codec-bench, train-accuracy, compress, nccl-tests, replay, report, sweep "
                        "(see topocc --help)\n",
                argv[1]);
        return 2;
    }
    return cli_command(c, argc, argv, 2);
}

int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    /* What a command printed reached standard output whole, or the run
     * failed (a full disk, a closed file). A command that failed has said
     * why already. */
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "topocc: writing standard output: %s\n", errno ? strerror(errno) : "write error");
        return 1;
    }
    return rc;
}
