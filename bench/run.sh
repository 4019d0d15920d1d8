#!/bin/sh
# run.sh - the benchmarks of docs/PERFORMANCE.md (not part of the test suite).
set -e
B=build
"$B/bench_formula"
"$B/bench_steps"
"$B/bench_schedgen"
"$B/bench_codec"
"$B/bench_flow"
"$B/bench_skip"
"$B/bench_check"
./bench/failures.sh "$B"
./bench/cluster.sh "$B"
./bench/train.sh "$B"
./bench/diloco.sh "$B"
./bench/train_accuracy.sh "$B"
./bench/proxies.sh "$B"
./bench/sweep.sh "$B"
./bench/simgrid_compare.sh "$B"
