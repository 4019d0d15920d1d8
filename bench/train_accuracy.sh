#!/bin/sh
# train_accuracy.sh - topocc train-accuracy at the reduced configuration
# docs/PERFORMANCE.md records against its target (5 seeds in at most 60 s
# on two cores): the five default codecs (fp32, bf16, int8,
# topk:ratio=0.01, powersgd:rank=4), 5 seeds each, 300 steps of 8 workers x
# 16 samples on the first 10,000 training images, test accuracy on the
# first 2,000 test images every 25 steps (whole process; the runs spread
# over every CPU). Prints each run's wall time and their median.
# Usage: bench/train_accuracy.sh [BUILD_DIR] [RUNS]
set -eu
B=${1:-build}
N=${2:-5}
[ -d /usr/share/datasets/fashion-mnist ] || {
    echo "train_accuracy.sh: no Fashion-MNIST (Debian package dataset-fashion-mnist)" >&2
    exit 2
}
times=""
i=0
while [ "$i" -lt "$N" ]; do
    t0=$(date +%s.%N)
    "$B/topocc" train-accuracy --steps 300 --batch 16 --train-subset 10000 --test-subset 2000 --eval-every 25 \
        --seeds 5 --quiet >/dev/null
    t1=$(date +%s.%N)
    t=$(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }')
    echo "run $((i + 1)): $t s"
    times="$times $t"
    i=$((i + 1))
done
echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print "median of " NR ": " a[int((NR + 1) / 2)] " s" }'
