#!/bin/sh
# scale.sh - the flow simulator at cluster scale (docs/PERFORMANCE.md, "Flow
# simulator at scale"): whole-process wall time and peak memory of one run of
# each case, with the report's repetition and symmetry lines. Not part of the
# test suite. Usage: bench/scale.sh [CASE...]; cases: small, 1024, 4096,
# 131072, ecmp, torus, degraded, a2a, table; none: all but ecmp, a2a and
# table.
set -u
B=${B:-build}
T="$B/topocc"
[ -x "$T" ] || { echo "scale.sh: build first (make build)" >&2; exit 2; }

# One run: the label, then the topocc arguments (flow mode, 1 GiB all-reduce
# unless the arguments say otherwise).
one() {
    label=$1
    shift
    out=$(mktemp)
    start=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%M" -o "$out.mem" "$T" collective --quiet --mode flow "$@" >"$out" 2>&1
    else
        "$T" collective --quiet --mode flow "$@" >"$out" 2>&1
    fi
    rc=$?
    end=$(date +%s.%N)
    mem=$(cat "$out.mem" 2>/dev/null || echo "?")
    wall=$(echo "$end - $start" | bc)
    printf '%-44s rc %d  %8.3f s  %8s KiB  ' "$label" "$rc" "$wall" "$mem"
    sed -n 's/^time  *\(.*\)/time \1;/p; s/^bounds *not simulated[^:]*: \(.*\); time.*/\1;/p; s/^repetition *\(.*\)/\1;/p; s/^symmetry *\(.*\)/symmetry \1/p; s/^topocc: \(.*\)/\1/p' \
        "$out" | tr '\n' ' '
    echo
    rm -f "$out" "$out.mem"
}


small() {
    one "64 ranks ring 16MiB" --topo clos:down=8x8,up=1x8,bw=12.5GB/s,lat=1us --op allreduce --algo ring --size 16MiB
    one "256 ranks ring 16MiB" --topo clos:down=4x8x8,up=1x4x8,bw=12.5GB/s,lat=1us --op allreduce --algo ring --size 16MiB
    one "256 ranks rhd 16MiB" --topo clos:down=4x8x8,up=1x4x8,bw=12.5GB/s,lat=1us --op allreduce --algo rhd --size 16MiB
}

case_1024() { one "1024 ring" --topo clos:hosts=1024,radix=64,tiers=2 --op allreduce --algo ring --size 1GiB; }

case_4096() {
    one "4096 ring radix 128, 2 tiers" --topo clos:hosts=4096,radix=128,tiers=2 --op allreduce --algo ring --size 1GiB
    one "4096 ring radix 64, 3 tiers" --topo clos:hosts=4096,radix=64,tiers=3 --op allreduce --algo ring --size 1GiB
}

C3=clos:down=32x64x64,up=1x32x64
case_131072() {
    for a in ring rhd; do
        one "131072 $a dmodk" --topo $C3 --routing dmodk --op allreduce --algo $a --size 1GiB
    done
}

case_ecmp() { one "131072 ring ecmp" --topo $C3 --op allreduce --algo ring --size 1GiB --event-budget 400000000; }

case_torus() {
    for a in ring rhd torus-mp dbtree:chunks=64; do
        one "torus 32x64x64 $a" --topo torus:dims=32x64x64 --op allreduce --algo $a --size 1GiB
    done
}

case_degraded() {
    one "16384 ring, link 0 halved" --topo clos:hosts=16384,radix=64,tiers=3 --routing dmodk --degrade link:0=0.5 \
        --op allreduce --algo ring --size 1GiB --event-budget 4000000000
}

# Direct all-to-all under ECMP, bounded (--flow-bounds): 4,096 and 16,384
# ranks (16.8 and 268 million messages); and 4,096 under D-mod-k, bounded
# and simulated (folded), 64 KiB a message.
case_a2a() {
    one "4096 direct a2a ecmp, bounds" --topo clos:hosts=4096,radix=128,tiers=2 --op alltoall --algo direct \
        --size 1GiB --flow-bounds
    one "16384 direct a2a ecmp, bounds" --topo clos:hosts=16384,radix=64,tiers=3 --op alltoall --algo direct \
        --size 4GiB --flow-bounds
    one "4096 direct a2a dmodk, bounds" --topo clos:hosts=4096,radix=128,tiers=2 --routing dmodk --op alltoall \
        --algo direct --size 256MiB --flow-bounds
    one "4096 direct a2a dmodk, simulated" --topo clos:hosts=4096,radix=128,tiers=2 --routing dmodk --op alltoall \
        --algo direct --size 256MiB
}

# Ring all-reduce, 1 GiB, D-mod-k, symmetric and with host 0's up-link
# halved, from 256 to 131,072 endpoints.
table() {
    for n in 256 512 1024 2048 4096 8192 16384 32768 65536 131072; do
        if [ $n -le 2048 ]; then spec=clos:hosts=$n,radix=64,tiers=2
        elif [ $n -le 65536 ]; then spec=clos:hosts=$n,radix=64,tiers=3
        else spec=$C3; fi
        one "$n symmetric" --topo $spec --routing dmodk --op allreduce --algo ring --size 1GiB
        [ $n -le 8192 ] && one "$n degraded" --topo $spec --routing dmodk --degrade link:0=0.5 --op allreduce \
            --algo ring --size 1GiB --event-budget 4000000000
    done
}

[ $# -eq 0 ] && set -- small 1024 4096 131072 torus degraded
for c in "$@"; do
    case $c in
    small) small ;;
    1024) case_1024 ;;
    4096) case_4096 ;;
    131072) case_131072 ;;
    ecmp) case_ecmp ;;
    torus) case_torus ;;
    degraded) case_degraded ;;
    a2a) case_a2a ;;
    table) table ;;
    *) echo "scale.sh: unknown case '$c' (small, 1024, 4096, 131072, ecmp, torus, degraded, a2a, table)" >&2; exit 2 ;;
    esac
done
