#!/bin/sh
# sweep.sh - topocc sweep against the targets of docs/PERFORMANCE.md:
#   1. a 10,000-point formula sweep on one core (taskset -c 0) in at most
#      10 s: 4 topologies (64 to 512 endpoints) x allreduce, allgather x
#      1,250 sizes, ring; and, for what a heavier sweep costs, 10,000
#      points with algo auto (the tuner costs every candidate algorithm at
#      every point) on 10 topologies of 64 to 512 endpoints x 4 operations
#      (all-to-all included) x 250 sizes, one run;
#   2. 200 steps-mode points (4 topologies of 32,768 endpoints x 5
#      algorithms x 10 sizes, 1 MiB to 512 MiB; a point costs 5 to 270 ms)
#      in one process and under mpirun -np 2: the ratio (target at least
#      1.8; both cores must be free).
# Whole process, every point validated first, results written; medians of
# RUNS runs (default 5 and 3). Usage: bench/sweep.sh [BUILD_DIR] [RUNS]
set -eu
B=${1:-build}
N=${2:-5}
T="$B/topocc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

python3 - "$tmp" <<'EOF'
import json, sys
d = sys.argv[1]
topos = ["clos:down=8x8,up=1x8,bw=400Gbps", "clos:down=16x16,up=1x8,bw=400Gbps", "torus:dims=4x4x4",
         "torus:dims=8x8x8"]
sizes = [[int(2 ** (13 + i * 0.02))] for i in range(1250)]
base = {"command": "collective", "network": {"topo": [topos[0]]},
        "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [8192]}, "eval": {"mode": "formula"}}
json.dump({"scenario": base, "sweep": {"axes": {"network.topo[0]": topos,
                                                 "collective.op": [["allreduce"], ["allgather"]],
                                                 "collective.sizes": sizes}}}, open(d + "/formula.json", "w"))
topos10 = ["clos:down=%dx%d,up=1x%d,bw=400Gbps" % (a, a, b) for a, b in [(8, 8), (8, 4), (16, 16), (16, 8), (16, 4)]]
topos10 += ["torus:dims=" + x for x in ["4x4x4", "8x8", "8x8x8", "16x16", "4x4x4x4"]]
auto = dict(base, collective={"op": ["allreduce"], "algo": ["auto"], "sizes": [65536]})
json.dump({"scenario": auto, "sweep": {"axes": {
    "network.topo[0]": topos10,
    "collective.op": [["allreduce"], ["reducescatter"], ["allgather"], ["alltoall"]],
    "collective.sizes": [[int(2 ** (16 + i * 0.05))] for i in range(250)]}}}, open(d + "/auto.json", "w"))
big = ["clos:hosts=32768,radix=64,tiers=3,bw=400Gbps", "clos:hosts=32768,radix=64,tiers=3,oversub=3,bw=400Gbps",
       "torus:dims=32x32x32", "torus:dims=256x128"]
steps = {"command": "collective", "network": {"topo": [big[0]]},
         "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [65536]}, "eval": {"mode": "steps"}}
json.dump({"scenario": steps, "sweep": {"axes": {
    "network.topo[0]": big,
    "collective.algo": [["ring"], ["rhd"], ["dbtree"], ["swing"], ["biring"]],
    "collective.sizes": [[2 ** k * 1048576] for k in range(10)]}}}, open(d + "/steps.json", "w"))
EOF

median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
timed() { # command... -> seconds
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}
series() { # runs name command... -> "name: t1 t2 ... median M s"
    runs=$1 name=$2
    shift 2
    all=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        rm -f "$tmp/r.jsonl"
        all="$all $(timed "$@")"
        i=$((i + 1))
    done
    m=$(echo "$all" | median)
    echo "$name:$all s, median $m s" >&2
    echo "$m"
}

f=$(series "$N" "10,000 formula points, ring, one core" taskset -c 0 "$T" sweep "$tmp/formula.json" -o "$tmp/r.jsonl" --quiet)
echo "formula sweep, 10,000 points (ring), one core: median $f s (target <= 10 s)"
a=$(series 1 "10,000 formula points, auto, one core" taskset -c 0 "$T" sweep "$tmp/auto.json" -o "$tmp/r.jsonl" --quiet)
echo "formula sweep, 10,000 points (auto, 64 to 512 endpoints), one core: $a s"
if command -v mpirun >/dev/null 2>&1 && [ -e "$B/libtopocc_mpi.so" ]; then
    one=$(series 3 "200 steps points, one process" "$T" sweep "$tmp/steps.json" -o "$tmp/r.jsonl" --quiet)
    two=$(series 3 "200 steps points, mpirun -np 2" mpirun -np 2 "$T" sweep "$tmp/steps.json" -o "$tmp/r.jsonl" --quiet)
    echo "$one $two" | awk '{ printf "steps sweep, 200 points: one process %s s, mpirun -np 2 %s s: %.2fx (target >= 1.8x)\n", $1, $2, $1 / $2 }'
else
    echo "steps sweep under MPI: not run (mpirun or $B/libtopocc_mpi.so missing)"
fi
