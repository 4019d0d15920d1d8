#!/bin/sh
# fuzz_smoke.sh - runs every fuzz target of a TOPOCC_FUZZ build (fuzz/,
# docs/VALIDATION.md "Fuzzing"): first each seed input (fuzz/corpus/NAME/)
# and each regression input (tests/data/fuzz-regressions/NAME/) once, then
# SECONDS of fuzzing from the seeds, one target after the other. New inputs
# go to WORK/NAME (kept between runs when WORK is given, so a later run goes
# on from them; a temporary directory otherwise), never to the repository's
# seeds; an input that fails is saved in WORK/artifacts/NAME/ (BUILD_DIR/
# artifacts/NAME/ without WORK). Prints the executions of each target; fails
# when any target fails.
#
# usage: tests/fuzz_smoke.sh BUILD_DIR [SECONDS [WORK]]
#   make test-fuzz: tests/fuzz_smoke.sh build-fuzz 5
#   make fuzz:      tests/fuzz_smoke.sh build-fuzz $(FUZZ_SECONDS) build-fuzz/work
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [SECONDS [WORK]]" >&2; exit 2; }
build=$1
secs=${2:-5}
work=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
arts=${work:-$build}/artifacts
if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/topocc-fuzz-smoke.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work" || exit 1
set -- "$build"/fuzz/fuzz_*
[ -x "$1" ] || { echo "fuzz_smoke: no fuzz targets in $build/fuzz (configure with -DTOPOCC_FUZZ=ON)" >&2; exit 1; }

# libFuzzer's limits (-timeout=10 -rss_limit_mb=2048 below): an input that
# runs 10 s is a hang, one that takes 2 GiB a failure.
failed=0
printf '%-15s %8s %12s %8s %8s\n' target inputs executions exec/s corpus
for bin in "$@"; do
    name=${bin##*/fuzz_}
    log=$work/$name.log
    mkdir -p "$work/$name" "$arts/$name"
    # Every seed and regression input once (-runs=0: read, run, no fuzzing).
    seeds=$src/fuzz/corpus/$name
    regr=$src/tests/data/fuzz-regressions/$name
    [ -d "$regr" ] || regr=$seeds
    n=$(find "$seeds" "$regr" -type f | sort -u | wc -l)
    if ! "$bin" -timeout=10 -rss_limit_mb=2048 -runs=0 -artifact_prefix="$arts/$name/" "$seeds" "$regr" \
            >"$log" 2>&1; then
        echo "fuzz_smoke: $name fails on a seed or regression input:" >&2
        tail -n 30 "$log" >&2
        failed=1
        continue
    fi
    # Then fuzzing: new inputs into WORK/NAME, the seeds read only.
    if ! "$bin" -timeout=10 -rss_limit_mb=2048 -max_total_time="$secs" -print_final_stats=1 \
            -artifact_prefix="$arts/$name/" "$work/$name" "$seeds" >"$log" 2>&1; then
        echo "fuzz_smoke: $name failed (input saved in $arts/$name/):" >&2
        tail -n 40 "$log" >&2
        failed=1
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    corpus=$(find "$work/$name" "$seeds" -type f | wc -l)
    printf '%-15s %8s %12s %8s %8s\n' "$name" "$n" "${execs:-?}" "${rate:-?}" "$corpus"
done
exit $failed
