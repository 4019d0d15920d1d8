#!/bin/sh
# cli_valgrind.sh - the CLI's main paths leak nothing and touch no invalid
# memory under valgrind (memcheck).
# usage: tests/cli_valgrind.sh path/to/topocc
set -u
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
run() {
    valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
        --error-exitcode=99 -q "$T" "$@" >/dev/null 2>"$tmp/vg"
    rc=$?
    if [ "$rc" -eq 99 ] || grep -q "==[0-9]*==" "$tmp/vg"; then
        echo "FAIL under valgrind: topocc $*"
        cat "$tmp/vg"
        fails=$((fails + 1))
    fi
}
run topo "clos:down=8x8,up=1x4" --links
run topo "torus:dims=4x4,node=2" --format json
run collective --topo "clos:down=8x8,up=1x4" --op allreduce --size 1MiB --mode steps --format json
run collective --topo "torus:dims=4x4x4" --op alltoall --size 1MiB --mode steps
run compare --topo "clos:down=4x4,up=1x4" --topo "torus:dims=4x4" --op allreduce,alltoall --sizes 1KiB:1MiB:32
run compare --topo "clos:down=8x8,up=1x8" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB --out "$tmp/out.json" --format csv
run collective --topo "torus:dims=4x4" --op allreduce --algo "ring:chunks=x" --size 1MiB
run collective --topo "clos:down=8x8,up=1x8" --op allreduce --algo torus --size 1MiB
run topo "torus:dims=4x1"
run collective --topo "clos:down=8x8,up=1x4" --op allreduce --sizes 1KiB:1MiB --algo all --format csv
run collective --topo "clos:down=4x4,up=1x2" --op allreduce --size 1MiB --mode flow --degrade link:0=0.5 --out "$tmp/r.json"
run replay "$tmp/r.json" --format json
run collective --topo "clos:down=4x4,up=1x2" --op allreduce --size 1MiB --print-scenario
run collective --scenario "$tmp/r.json" --mode steps --out-dir "$tmp/d"
run compress --topo "clos:down=8x8,up=1x8" --model resnet50 --codec topk:ratio=0.01 --steps-ratio topk:ratio=0.01=1.3 --sweep-bw --format json
run collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --sizes 8:1GiB:64 --mode flow
run collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl-ring --size 1MiB --mode flow
run collective --topo "clos:down=4x4,up=1x2" --op alltoall --algo direct --sizes 64KiB:1MiB --mode flow --flow-bounds --format csv
run nccl-tests --preset dgx-a100:nodes=2 -b 8 -e 64M -f 8 --compare "$(dirname "$0")/data/nccl-tests/nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt"
run nccl-tests --preset nope -b 8 -e 8
# --fit: hundreds of predictions on one file (a prediction of 4 sizes)
"$T" nccl-tests --preset dgx-h100:nodes=2 -b 1M -e 64M -f 4 >"$tmp/fit_in.txt" 2>/dev/null
run nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/fit_in.txt" --fit
# report of one point's line of a sweep's results
sed -n 2p "$(dirname "$0")/data/sweep-example.jsonl" >"$tmp/point.json"
run report "$tmp/point.json" -o "$tmp/rpoint"
run compress --topo "clos:down=8x8,up=1x8" --model resnet50 --codec int8 --steps-ratio int8=1 --accel a100
run collective --topo "clos:down=8x8,up=1x4" --op allreduce --size 1MiB --colour
run failures --topo "clos:down=4x4,up=1x4" --topo "torus:dims=4x4" --op allreduce --size 1MiB --mode steps --fail-random links=2,switches=1,seed=3 --trials 4 --format json
run collective --topo "torus:dims=4x4" --op allreduce --size 1MiB --mode flow --fail link:0,host:15 --ranks 8
run collective --preset dgx-h100:nodes=2,sharp=1 --op allreduce --algo nccl-collnet-chain --size 4MiB --mode flow
run cluster --topo "clos:down=4x4,up=1x4" --topo "torus:dims=4x4" --synthetic 300,seed=2 --scheduler backfill --format json
run cluster --topo "torus:dims=4x4x4" --trace "$(dirname "$0")/data/traces/philly.json" --ocs 2
run cluster --topo "torus:dims=4x4" --trace "$(dirname "$0")/data/traces/pai_task.csv" --scheduler sjf
run collective --topo "torus:dims=4x4x4" --place slice:shape=2x2x2,ocs=2 --algo torus-bi --op allreduce --size 1MiB --mode flow
run compare --topo "torus:dims=4x4x4" --topo "torus:dims=4x4" --ranks 8 --place slice:ocs=2 --op allreduce --sizes 1KiB:1MiB:32 --mode flow --alphas 1us
run failures --topo "torus:dims=4x4x4" --ranks 8 --place slice:ocs=2 --op allreduce --size 1MiB --mode steps --fail-random links=3,switches=1,seed=3 --trials 6 --format json
printf '{"jobs": [{"name": "line", "op": "allreduce", "size": "1MiB", "place": "slice:shape=2x2x2"}, {"name": "ocs", "op": "allreduce", "size": "1MiB", "place": "slice:shape=2x2x2,ocs=2", "group": "axes=x"}, {"name": "x", "op": "allreduce", "algo": "ring", "size": "1MiB", "endpoints": "0-3"}]}' >"$tmp/j.json"
run concurrent --topo "torus:dims=4x4x4" --jobs "$tmp/j.json" --format json
run compare --topo "clos:hosts=64,radix=16,tiers=2" --topo "torus:dims=4x4x4" --op allreduce --sizes 1MiB:1MiB --cost cost-2026 --equalize cost=700k
run topo "torus:dims=4x4x4" --cost cost-2026 --format json
run train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --zero 3 --format json
run train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --search --global-batch 64 --seq-parallel
run train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 4 --tp 8
printf '{"scenario": {"command": "failures", "network": {"topo": ["clos:down=4x4,up=1x4"], "fail_random": "links=1,seed=2"}, "collective": {"op": ["allreduce"], "sizes": [65536]}, "failures": {"trials": 2}}, "sweep": {"axes": {"network.topo[0]": ["clos:down=4x4,up=1x4", "torus:dims=4x4"], "collective.algo": [["ring"], ["bruck"]]}}}' >"$tmp/sw.json"
run sweep "$tmp/sw.json" -o "$tmp/sw.jsonl" --quiet
head -c 3000 "$tmp/sw.jsonl" >"$tmp/torn.jsonl"
run sweep "$tmp/sw.json" -o "$tmp/torn.jsonl" --quiet
run sweep --status "$tmp/sw.jsonl" --format json
run sweep --merge "$tmp/sw.jsonl" "$tmp/torn.jsonl" -o "$tmp/m.jsonl"
# report: a point held three times, and a bad line after two good ones.
(cat "$tmp/sw.jsonl"; sed -n 2p "$tmp/sw.jsonl"; sed -n 2p "$tmp/sw.jsonl") >"$tmp/dup.jsonl"
run report "$tmp/dup.jsonl" -o "$tmp/rep"
(head -n 3 "$tmp/sw.jsonl"; echo '{"point": 1}') >"$tmp/badpt.jsonl"
run report "$tmp/badpt.jsonl" -o "$tmp/rep2"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"collective.size": [[1]]}}}' >"$tmp/swbad.json"
run sweep "$tmp/swbad.json" -o "$tmp/x.jsonl"
printf '{"network": {"topos": []}}' >"$tmp/bad.json"
run collective --scenario "$tmp/bad.json"
[ "$fails" -eq 0 ] && echo "no leaks or memory errors on the CLI's main paths"
exit "$fails"
