#!/bin/sh
# train.sh - topocc train at the sizes docs/PERFORMANCE.md records: one
# iteration of a 4,096-endpoint 3D-parallel Llama-3 70B job in steps mode,
# and --search over every split of the 4,096 endpoints in formula mode
# (whole-process time).
# Usage: bench/train.sh [BUILD_DIR]
set -eu
B=${1:-build}
T=clos:hosts=4096,radix=64,tiers=3,node=8
"$B/topocc" train --topo $T --model llama3-70b --dp 64 --tp 8 --pp 8 --micro-batches 16 --seq-parallel \
    --recompute selective --zero 1 --mode steps --quiet >/dev/null
"$B/topocc" train --topo $T --model llama3-70b --search --global-batch 1024 --seq-parallel --recompute selective \
    --zero 1 --quiet >/dev/null
