#!/bin/sh
# failures.sh - topocc failures at the size docs/PERFORMANCE.md records:
# 1,000 random-failure draws of a 1,024-endpoint all-reduce in steps mode,
# on a 2-tier Clos and a 8x8x16 torus at equal injection bandwidth, for
# ring, rhd and dbtree (whole-process time, as the target states).
# Usage: bench/failures.sh [BUILD_DIR]
set -eu
B=${1:-build}
for a in ring rhd dbtree; do
    "$B/topocc" failures --topo clos:hosts=1024,radix=64,tiers=2 --topo torus:dims=8x8x16 \
        --equalize injection=400Gbps --op allreduce --size 1GiB --algo "$a" --mode steps \
        --fail-random links=1%,seed=1 --trials 1000 --quiet >/dev/null
done
