#!/bin/sh
# simai_compare.sh - topocc's flow evaluator against SimAI's ns-3 simulation (docs/VALIDATION.md,
# "Against another simulator: SimAI"). Every tests/data/simai/*.case holds one collective that
# SimAI-Simulation ran (its configuration in tests/data/simai/README.md) and the time it printed:
#   op, size, gpus   the collective (sizes in topocc's convention, which is SimAI's workload
#                    field here), on gpus GPUs, 8 a server, SimAI's Spectrum-X rail-optimized fabric
#   simai_ns         what SimAI printed ("all passes finished at time", ns)
#   runs_ns          every run's figure where the case was run more than once (multi-server
#                    cases vary from run to run)
#   tol              how far topocc, under SimAI's rules, may be from simai_ns (a fraction; its
#                    why: lines say what it covers)
# topocc runs the messages SimAI sends: for all-reduce, all-gather and reduce-scatter SimAI's 8
# ring channels, each a ring over its own order of the GPUs carrying 1/8 of the buffer, as 8
# concurrent `ring` jobs; for all-to-all every pair at once (`direct`). Two sets of rules:
#   own:   topocc's defaults for the flow evaluator's dependencies (--deps fifo: a rank goes on
#          to its next step once its receives have arrived and its sends have left), a message
#          delivered one path latency after its last byte, and ECMP by source and destination;
#   simai: SimAI's (read in its source; docs/VALIDATION.md): a flow starts once the flow it forwards has
#          completed, whatever this rank's earlier sends (--deps recv), and a flow completes
#          when its sender has the last acknowledgement, a round trip (every link latency
#          doubled); SimAI draws a spine for every flow, whose mean is the flow spread over
#          every spine (--multipath spray).
# Both charge SimAI's per-flow start latency (AS_SEND_LAT=3: alpha=3us; the direct all-to-all
# sends its flows at once, so 3 us once, added).
# Only the simai rules are checked against tol; --table prints both.
# Usage: tests/simai_compare.sh TOPOCC_BINARY [--table]
set -u
here=$(dirname "$0")
T=$1
table=0
[ "${2:-}" = --table ] && table=1
dir="$here/data/simai"
field() { sed -n "s/^$1: //p" "$2"; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

# SimAI's topology (gen_Topo_Template.py -topo Spectrum-X -bw 400Gbps -nvbw 2880Gbps, its
# default latencies): NIC to rail switch (ASW) 400 Gb/s, 500 ns; ASW to each of 64 spines
# (PSW) 400 Gb/s, 500 ns; GPU to its server's NVSwitch 2880 Gb/s, 25 ns; no switch latency.
spec() { # NODES LAT NODE_LAT ALPHA
    echo "clos:down=$1x8,up=1x64,bw=400Gbps,lat=$2,hop_lat=0,node=8,node_bw=360GB/s,node_lat=$3,node_hop_lat=0,rail=8,alpha=$4"
}
# SimAI's ring channel c (c = 0..7) visits on every server the GPUs c, c+1, ..., c+7 (mod 8),
# servers in order, and comes back to the first.
jobs() { # OP SIZE GPUS
    awk -v op="$1" -v size="$2" -v g="$3" 'BEGIN {
        printf "{\"jobs\": ["
        for (c = 0; c < 8; c++) {
            printf "%s{\"name\": \"ring%d\", \"op\": \"%s\", \"algo\": \"ring\", \"size\": \"%dB\", \"endpoints\": [", (c ? ", " : ""), c, op, size / 8
            for (k = 0; k < g; k++) printf "%s%d", (k ? ", " : ""), int(k / 8) * 8 + (c + k % 8) % 8
            printf "]}"
        }
        print "]}" }' >"$work/jobs.json"
}
run() { # OP SIZE GPUS DEPS LAT NODE_LAT MULTIPATH -> ns
    n=$(($3 / 8))
    if [ "$1" = alltoall ]; then
        "$T" collective --topo "$(spec $n "$5" "$6" 0)" --op alltoall --algo direct --size "$2B" \
            --mode flow --deps "$4" --multipath "$7" --format csv --quiet |
            awk -F, 'NR == 2 { printf "%.1f\n", $5 * 1e9 + 3000 }'
    else
        jobs "$1" "$2" "$3"
        "$T" concurrent --topo "$(spec $n "$5" "$6" 3us)" --jobs "$work/jobs.json" --deps "$4" \
            --multipath "$7" --format csv --quiet |
            awk -F, '$1 ~ /^ring/ { if ($7 + 0 > m) m = $7 + 0 } END { printf "%.1f\n", m * 1e9 }'
    fi
}

fail=0 n=0
[ $table = 1 ] && echo "| case | SimAI (ns) | runs | topocc, own rules | / SimAI | topocc, SimAI's rules | / SimAI | tolerance |" &&
    echo "|---|---:|---|---:|---:|---:|---:|---:|"
for f in "$dir"/*.case; do
    id=$(basename "$f" .case)
    op=$(field op "$f") size=$(field size "$f") g=$(field gpus "$f")
    sim=$(field simai_ns "$f") tol=$(field tol "$f") runs=$(field runs_ns "$f")
    if [ -z "$op" ] || [ -z "$size" ] || [ -z "$g" ] || [ -z "$sim" ] || [ -z "$tol" ]; then
        echo "FAIL: $id: a field is missing"; fail=1; continue
    fi
    own=$(run "$op" "$size" "$g" fifo 500ns 25ns route) &&
        simr=$(run "$op" "$size" "$g" recv 1000ns 50ns spray) ||
        { echo "FAIL: $id: topocc failed"; fail=1; continue; }
    if [ -z "$own" ] || [ -z "$simr" ]; then echo "FAIL: $id: no time from topocc"; fail=1; continue; fi
    n=$((n + 1))
    verdict=$(awk -v t="$simr" -v s="$sim" -v tol="$tol" 'BEGIN { r = t / s; print ((r - 1 <= tol && 1 - r <= tol) ? "ok" : "off") }')
    if [ "$verdict" != ok ]; then
        echo "FAIL: $id: topocc under SimAI's rules $simr ns, SimAI $sim ns (tolerance $tol)"; fail=1
    fi
    [ $table = 1 ] && awk -v id="$id" -v s="$sim" -v runs="${runs:--}" -v o="$own" -v t="$simr" -v tol="$tol" 'BEGIN {
        printf "| `%s` | %d | %s | %.1f | %.3f | %.1f | %.3f | %s |\n", id, s, runs, o, o / s, t, t / s, tol }'
done
[ $n -gt 0 ] || { echo "FAIL: no case in $dir"; exit 1; }
[ $fail = 0 ] && [ $table = 0 ] && echo "topocc agrees with SimAI: $n cases within their tolerances"
exit $fail
