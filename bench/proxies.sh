#!/bin/sh
# proxies.sh - the three accuracy proxies at their test configurations,
# docs/PERFORMANCE.md records against its target (all three, 5 seeds each,
# in at most 3 minutes on two cores): topocc train-accuracy with bf16 and
# fp32 (10 runs per proxy), 300 steps of 8 workers x 16 samples, a test
# point every 50 steps, a fixed target (the timing does not depend on it;
# the default late target can fall beyond a seed of a run this short):
#   mlp, cnn   first 10,000 training and 2,000 test images of Fashion-MNIST
#   chartf     width 32, 1 block, 2 heads, context 32, first 4,000 training
#              and 500 test windows of the fortunes corpus
# Whole process, the runs spread over every CPU. Prints each proxy's wall
# time per run, their medians and the median of the three proxies' sum.
# Usage: bench/proxies.sh [BUILD_DIR] [RUNS]
set -eu
B=${1:-build}
N=${2:-3}
[ -d /usr/share/datasets/fashion-mnist ] || {
    echo "proxies.sh: no Fashion-MNIST (Debian package dataset-fashion-mnist)" >&2
    exit 2
}
[ -d /usr/share/games/fortunes ] || {
    echo "proxies.sh: no fortunes corpus (Debian package fortunes)" >&2
    exit 2
}
common="--codec bf16 --codec fp32 --seeds 5 --steps 300 --batch 16 --eval-every 50 --quiet"
run() { # proxy extra options...
    p=$1
    shift
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$B/topocc" train-accuracy --model "$p" $common "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
all="" m="" c="" t=""
i=0
while [ "$i" -lt "$N" ]; do
    a=$(run mlp --train-subset 10000 --test-subset 2000 --target-acc 0.7)
    b=$(run cnn --train-subset 10000 --test-subset 2000 --target-acc 0.7)
    d=$(run chartf --width 32 --layers 1 --heads 2 --context 32 --train-subset 4000 --test-subset 500 --target-acc 0.2)
    s=$(echo "$a $b $d" | awk '{ printf "%.2f", $1 + $2 + $3 }')
    echo "run $((i + 1)): mlp $a s, cnn $b s, chartf $d s, all three $s s"
    m="$m $a" c="$c $b" t="$t $d" all="$all $s"
    i=$((i + 1))
done
echo "median of $N: mlp $(echo "$m" | median) s, cnn $(echo "$c" | median) s, chartf $(echo "$t" | median) s," \
    "all three $(echo "$all" | median) s"
