#!/bin/sh
# train.sh - topocc train at the sizes docs/PERFORMANCE.md records, one
# iteration of a 4,096-endpoint 3D-parallel Llama-3 70B job:
#   steps      in steps mode;
#   search     --search over every split of the 4,096 endpoints (formula);
#   flow       co-simulated in flow mode, D-mod-k routing;
#   flow-ecmp  the same under ECMP (the default routing);
#   flow-ecmp-ring  under ECMP with --dp-algo ring (the library's choice
#              for the DP reduce-scatter and all-gather: the same run);
#   flow-ecmp-auto  under ECMP with auto's algorithms (--dp-algo auto
#              --tp-algo auto; slow: auto takes direct for the DP
#              reduce-scatter and all-gather there, docs/PERFORMANCE.md).
# Whole-process time is what is recorded.
# Usage: bench/train.sh [BUILD_DIR] [CASE...]; no case: steps search flow.
set -eu
B=${1:-build}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- steps search flow
T=clos:hosts=4096,radix=64,tiers=3,node=8
JOB="--model llama3-70b --dp 64 --tp 8 --pp 8 --micro-batches 16 --seq-parallel --recompute selective --zero 1"
# shellcheck disable=SC2086
for c in "$@"; do
    case $c in
    steps) "$B/topocc" train --topo $T $JOB --mode steps --quiet >/dev/null ;;
    search)
        "$B/topocc" train --topo $T --model llama3-70b --search --global-batch 1024 --seq-parallel \
            --recompute selective --zero 1 --quiet >/dev/null
        ;;
    flow) "$B/topocc" train --topo $T $JOB --mode flow --routing dmodk --quiet >/dev/null ;;
    flow-ecmp) "$B/topocc" train --topo $T $JOB --mode flow --quiet >/dev/null ;;
    flow-ecmp-ring) "$B/topocc" train --topo $T $JOB --mode flow --dp-algo ring --quiet >/dev/null ;;
    flow-ecmp-auto) "$B/topocc" train --topo $T $JOB --mode flow --dp-algo auto --tp-algo auto --quiet >/dev/null ;;
    *) echo "train.sh: unknown case '$c' (steps, search, flow, flow-ecmp, flow-ecmp-ring, flow-ecmp-auto)" >&2; exit 2 ;;
    esac
done
