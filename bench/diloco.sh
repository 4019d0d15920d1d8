#!/bin/sh
# diloco.sh - topocc train across two datacenters at the size
# docs/PERFORMANCE.md records: a 2-pod DiLoCo run of 1,000 outer steps
# (H = 100) of Llama-3 70B on 2 x 2,048 endpoints in formula mode (whole
# process).
# Usage: bench/diloco.sh [BUILD_DIR]
set -eu
B=${1:-build}
T="multidc:pods=2,pod=clos,hosts=2048,radix=64,tiers=3,node=8,wan_bw=100Gbps,wan_lat=20ms"
"$B/topocc" train --topo "$T" --model llama3-70b --dp 64 --tp 8 --pp 8 --micro-batches 16 --seq-parallel \
    --recompute selective --zero 1 --sync diloco --inner-steps 100 --outer-steps 1000 --mode formula --quiet >/dev/null
