#!/bin/sh
# mem_estimate.sh - tc_flow_mem_estimate against the measured peak resident
# memory of the flow run, one process per case (docs/PERFORMANCE.md,
# "Memory estimate of the flow simulator"). Not part of the test suite: the
# all-to-all cases take a minute and 2.5 GB.
# usage: bench/mem_estimate.sh [BUILD_DIR] [quick]
set -e
B=${1:-build}
C2="clos:hosts=2048,radix=64,tiers=2"
cases="$C2 allreduce ring 1024
$C2 alltoall direct 1024
$C2 alltoall direct 2048
clos:down=16x16x16,up=1x16x16 allreduce ring 4096
$C2 allreduce dbtree 2048
$C2 broadcast ring 2048
$C2 alltoall direct 1024 spray
torus:dims=16x16x8 allreduce torus 2048
torus:dims=16x16x8 alltoall direct 2048
torus:dims=8x8x8 alltoall direct 512 spray
torus:dims=16x16x8 allreduce ring 2048 size=1KiB
clos:down=16x16x16,up=1x16x16 allreduce ring 4096 size=1KiB"
[ "${2:-}" = quick ] && cases=$(echo "$cases" | grep -v "direct 2048")
printf '%-72s %10s %10s %10s %6s\n' case estimate peak run ratio
echo "$cases" | while read -r spec op algo ranks extra; do
    line=$("$B/bench_flow" "$spec" "$op" "$algo" "$ranks" $extra)
    # "... peak P MiB (B MiB before the run; estimate E MiB)"
    echo "$line" | awk -v c="$op $algo $ranks $extra $spec" '{
        for (i = 1; i <= NF; i++) {
            if ($i == "peak") peak = $(i + 1)
            if ($i == "before") before = $(i - 2)
            if ($i == "estimate") est = $(i + 1)
        }
        sub(/^\(/, "", before)
        run = peak - before
        printf "%-72s %8.1f M %8.1f M %8.1f M %6.2f\n", c, est, peak, run, est / run
    }'
done
