#!/bin/sh
# cluster.sh - topocc cluster at the size docs/PERFORMANCE.md records: a
# 10,000-job synthetic trace replayed on a 4,096-endpoint cluster (a 2-tier
# Clos, a 16x16x16 torus, the torus with optical cubes of 4), under FIFO and
# EASY backfilling, at the default load and at load 1 (whole-process time,
# as the target states: one topology per process).
# Usage: bench/cluster.sh [BUILD_DIR]
set -eu
B=${1:-build}
for load in 0.9 1; do
    for s in fifo backfill; do
        "$B/topocc" cluster --topo clos:hosts=4096,radix=128,tiers=2 --synthetic 10000,seed=1,load=$load \
            --scheduler $s --quiet >/dev/null
        "$B/topocc" cluster --topo torus:dims=16x16x16 --synthetic 10000,seed=1,load=$load --scheduler $s \
            --quiet >/dev/null
        "$B/topocc" cluster --topo torus:dims=16x16x16 --ocs 4 --synthetic 10000,seed=1,load=$load --scheduler $s \
            --quiet >/dev/null
    done
done
