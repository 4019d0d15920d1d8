#!/bin/sh
# cli.sh - the command-line contract: bad input gets one line on stderr,
# exit code 2 and nothing on stdout; help texts carry a working example;
# the main paths produce the documented fields.
# usage: tests/cli.sh path/to/topocc
set -u
T="$1"
tmp=$(mktemp -d)
DATA_NT="$(dirname "$0")/data/nccl-tests"
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"
CLOS="clos:down=8x8,up=1x8,bw=400Gbps,lat=1us"

# --- bad input: one test each ---
bad "malformed spec" collective --topo "clos:down8x8" --op allreduce --size 1MiB
bad "spec without kind keys" collective --topo "clos:" --op allreduce --size 1MiB
# reduce_bw=: a ring all-reduce of 8 MiB on 8 ranks of one switch, 14 x 1 MiB / 50 GB/s + 14 x 200 ns,
# plus 7 reductions of 1 MiB at 25 GB/s: 296.4 + 293.6 us
good "reduce_bw charges the reductions" "^time  *590us" collective --topo clos:down=8,up=1,alpha=0,reduce_bw=25GB/s --op allreduce --algo ring --size 8MiB --mode steps
good "reduce_bw in flow" "^time  *590us" collective --topo clos:down=8,up=1,alpha=0,reduce_bw=25GB/s --op allreduce --algo ring --size 8MiB --mode flow
# --flow-bounds: the links' figures see no reduction (a direct reduce-scatter of 16 MiB on 16 ranks
# at 1 GB/s simulates to 16.06 ms, where the bounds read [329.8us, 329.8us])
bad_says "flow bounds with a reduction cost" "flow bounds take no reduction cost" collective --topo clos:down=16,up=1,alpha=1us,reduce_bw=1GB/s --op reducescatter --algo direct --size 16MiB --mode flow --flow-bounds
bad_says "no flow bounds hint with a reduction cost" "the flow simulation needs about" collective --topo clos:down=16,up=1,reduce_bw=1GB/s --op reducescatter --algo direct --sizes 1MiB:4MiB --mode flow --mem-limit 1KiB
bad_says "the flow bounds hint without one" "flow-bounds bounds this one-step schedule instead" collective --topo clos:down=16,up=1 --op reducescatter --algo direct --sizes 1MiB:4MiB --mode flow --mem-limit 1KiB
good "flow bounds with reduce_bw and nothing reduced" "^bounds " collective --topo clos:down=16,up=1,alpha=1us,reduce_bw=1GB/s --op alltoall --algo direct --size 16MiB --mode flow --flow-bounds
bad_says "reduce_bw that is no rate" "clos key 'reduce_bw': invalid rate 'fast'" collective --topo clos:down=8,up=1,reduce_bw=fast --op allreduce --size 1MiB
bad_says "spec with a leading empty item" "empty key=value between commas" topo "clos:,down=4x4,up=1x4"
bad_says "preset with a leading empty item" "empty key=value between commas" nccl-tests --preset dgx-h100:,nodes=2 -b 1M -e 1M
bad_says "preset with a trailing empty item" "empty key=value between commas" nccl-tests --preset dgx-h100:nodes=2, -b 1M -e 1M
bad_says "placement with a leading empty item" "--place 'slice:,shape=2x2x2': empty item between commas" collective --topo torus:dims=4x4x4 --op allreduce --size 1MiB --ranks 8 --place "slice:,shape=2x2x2"
bad_says "placement with a trailing empty item" "empty item between commas" collective --topo torus:dims=4x4x4 --op allreduce --size 1MiB --ranks 8 --place "random:seed=1,"
bad "unknown topology kind" collective --topo "ring:n=8" --op allreduce --size 1MiB
bad "unknown key" collective --topo "$CLOS,foo=1" --op allreduce --size 1MiB
bad "radix too small for hosts" topo "clos:hosts=100000,radix=8,tiers=2"
bad "oversubscription that does not divide" topo "clos:hosts=512,radix=32,tiers=2,oversub=2"
bad "NICs that do not fit the node" topo "clos:down=4x2,up=1x2,node=8,nics=3"
bad "GPUs per NIC that do not fit the node" topo "clos:down=4x2,up=1x2,node=8,gpus_per_nic=3"
bad "rails that do not divide the NICs" topo "clos:down=8x4,up=1x4,node=8,nics=4,rail=8"
bad "torus dimension of 0" topo "torus:dims=4x0"
bad "torus dimension of 1" topo "torus:dims=4x1"
bad "wraparound list of the wrong length" topo "torus:dims=4x4,wrap=1"
bad "size of 0" collective --topo "$CLOS" --op allreduce --size 0
bad "size above 2^60" collective --topo "$CLOS" --op allreduce --size 2000000TiB
bad "negative size" collective --topo "$CLOS" --op allreduce --size -5KiB
bad "unknown size unit" collective --topo "$CLOS" --op allreduce --size 5KBytes
bad_says "a range given to --size" "'1KiB:4KiB:2' is a range of sizes: give it as --sizes 1KiB:4KiB:2" collective --topo "$CLOS" --op allreduce --size 1KiB:4KiB:2
bad "unknown rate unit" collective --topo "clos:down=8x8,up=1x8,bw=400Gbit" --op allreduce --size 1MiB
bad "unknown time unit" collective --topo "clos:down=8x8,up=1x8,lat=1min" --op allreduce --size 1MiB
bad "hop latency without a unit" collective --topo "clos:down=8x8,up=1x8,hop_lat=100" --op allreduce --size 1MiB
bad "negative hop latency" topo "torus:dims=4x4,hop_lat=-5ns"
bad "node switch latency without nodes" topo "clos:down=8x8,up=1x8,node_hop_lat=10ns"
bad "unknown operation" collective --topo "$CLOS" --op allsum --size 1MiB
bad "unknown algorithm" collective --topo "$CLOS" --op allreduce --algo fancy --size 1MiB
# NCCL's algorithms by their NCCL names: the error points at topocc's nccl- name
for a in nvls nvls-tree pat collnet-direct collnet-chain; do
    bad_says "NCCL's name $a" "did you mean 'nccl-$a'" collective --topo "$CLOS" --op allreduce --algo $a --size 1MiB
done
bad_says "a placement with nothing after its colon" "nothing after the colon" collective --topo "$CLOS" --op allreduce --size 1MiB \
    --ranks 8 --place 'random:'
mkdir -p "$tmp/ajobsdir"
bad_says "a directory as the jobs file" "jobs file '$tmp/ajobsdir': a directory" concurrent --topo "$CLOS" --jobs "$tmp/ajobsdir"
bad "unknown algorithm parameter" collective --topo "$CLOS" --op allreduce --algo ring:depth=3 --size 1MiB
bad "algorithm that does not fit the topology" collective --topo "$CLOS" --op allreduce --algo torus --size 1MiB
bad "algorithm that does not fit the rank count" collective --topo "$CLOS" --op allreduce --algo swing --ranks 6 --size 1MiB
bad "neighbor exchange on an odd rank count" collective --topo "$CLOS" --op allgather --algo neighbor --ranks 7 --size 1MiB
bad "algorithm that does not fit the operation" collective --topo "$CLOS" --op alltoall --algo ring --size 1MiB
bad "more ranks than endpoints" collective --topo "$CLOS" --op allreduce --ranks 65 --size 1MiB
bad "zero ranks" collective --topo "$CLOS" --op allreduce --ranks 0 --size 1MiB
bad "unknown mode" collective --topo "$CLOS" --op allreduce --size 1MiB --mode guess
bad "routing that does not fit" collective --topo "$CLOS" --op allreduce --size 1MiB --routing dor
bad "unknown format" collective --topo "$CLOS" --op allreduce --size 1MiB --format xml
bad "missing --op" collective --topo "$CLOS" --size 1MiB
bad "unknown option" collective --topo "$CLOS" --op allreduce --size 1MiB --colour
bad "unknown command" simulate
bad "bad equalize" compare --topo "$CLOS" --op allreduce --sizes 1KiB:1MiB --equalize bandwidth=1
bad "bad size range" compare --topo "$CLOS" --op allreduce --sizes 1MiB:1KiB
bad "bad size factor" compare --topo "$CLOS" --op allreduce --sizes 1KiB:1MiB:1
bad "topo without spec" topo
bad "node not dividing endpoints" topo "torus:dims=3x3,node=2,node_bw=450GB/s"
# full mesh (fully connected): spec errors, what it refuses, what it runs
bad_says "full mesh of one endpoint" "at least 2 endpoints" topo "full:hosts=1"
bad_says "full mesh beyond its bound" "at most 1024 endpoints" topo "full:hosts=4096"
bad_says "full mesh without hosts" "needs hosts=N" topo "full:bw=100GB/s"
bad_says "full mesh with a torus key" "unknown key 'dims' in full spec" topo "full:hosts=8,dims=2x4"
bad_says "a per-level key past a 2-level Clos names its levels" "unknown key 'lat5' in clos spec: this Clos has 2 switch levels; accepted keys are .*bw, bw1..bw2, lat, lat1..lat2, rail" topo clos:down=4x4,up=1x2,lat5=1us
bad_says "bw3 on a 2-level Clos" "unknown key 'bw3' in clos spec: this Clos has 2 switch levels; .* bw1..bw2, lat, lat1..lat2," topo clos:down=4x4,up=1x2,bw3=1Gbps
bad_says "lat2 on a 1-level Clos" "this Clos has 1 switch level; .* bw, bw1, lat, lat1, rail" topo clos:down=4,up=1,lat2=1us
good "lat3 on a 3-level Clos" "lat3=1us" topo clos:down=4x4x4,up=1x2x2,lat3=1us
bad_says "a torus routing on a full mesh" "use direct or detour" collective --topo "full:hosts=8" --op allreduce --size 1MiB --routing dor
bad_says "a switch of a full mesh" "a full mesh has no switches" collective --topo "full:hosts=8" --op allreduce --size 1MiB --fail switch:1
bad_says "a full mesh cut off under direct" "routing detour goes through another endpoint" collective --topo "full:hosts=8" --op alltoall --algo direct --size 1MiB --fail link:0 --routing direct
bad_says "packed on a full mesh" "use first, random or list" collective --topo "full:hosts=8" --op allreduce --size 1MiB --ranks 4 --place packed
bad_says "a full mesh's bill of materials" "full mesh's direct links" topo "full:hosts=8" --cost cost-2026
bad_says "ocs with only a full mesh" "none of the topologies is a torus" cluster --topo "full:hosts=64" --synthetic 200,seed=3 --ocs 4
bad_says "NCCL on a full mesh" "a full mesh has no NICs" collective --topo "full:hosts=8" --op allreduce --algo nccl --size 1MiB
good "full mesh topo" "full (fully connected: every pair of the 8 endpoints joined directly)" topo "full:hosts=8"
good "full mesh links" "ep 0 -> ep 1" topo "full:hosts=4" --links
good "full mesh ring all-reduce, hand value (14 x (1us + 8MiB / 100GB/s))" ",0.00118840512," collective --topo "full:hosts=8,bw=100GB/s,lat=1us,alpha=0" --op allreduce --algo ring --size 64MiB --format csv
good "full mesh detour around a failed cable" ",detour," collective --topo "full:hosts=8" --op alltoall --algo direct --size 1MiB --fail link:0 --format csv
good "full mesh in compare" "where each topology wins" compare --topo "full:hosts=8" --topo "torus:dims=2x4" --equalize injection=400Gbps --op allreduce,alltoall --sizes 1KiB:1MiB:32 --mode flow
good "full mesh in failures" "slowdown" failures --topo "full:hosts=8" --op allreduce --algo ring --size 1MiB --fail-random links=2,seed=1 --trials 4
good "full mesh in cluster" "^A  *200 " cluster --topo "full:hosts=64" --synthetic 200,seed=3
printf '{"jobs": [{"name": "A", "op": "allreduce", "algo": "ring", "size": "1MiB", "endpoints": "0-3"}, {"name": "B", "op": "alltoall", "algo": "direct", "size": "1MiB", "ranks": 4}]}' >"$tmp/full_jobs.json"
good "full mesh in concurrent" "ep 0 -> ep 1" concurrent --topo "full:hosts=8" --jobs "$tmp/full_jobs.json"
printf '{"scenario": {"command": "collective", "network": {"topo": ["full:hosts=8"]}, "collective": {"op": "allreduce", "sizes": ["1MiB"]}}, "sweep": {"axes": {"network.topo[0]": ["full:hosts=8", "full:hosts=8,bw=800Gbps"]}}}' >"$tmp/full_mesh_sweep.json"
good "full mesh in sweep" "" sweep "$tmp/full_mesh_sweep.json" -o "$tmp/full_mesh_sweep.jsonl" --quiet
good "full mesh sweep results" "done 2 of 2" sweep --status "$tmp/full_mesh_sweep.jsonl"
bad "unwritable output" compare --topo "$CLOS" --op allreduce --sizes 1KiB:1MiB --out /nonexistent/dir/x.json

# --- flow simulator and concurrent jobs: bad input ---
printf '{"jobs": [{"op": "allreduce", "size": "1MiB", "endpoints": "0-7"}' >"$tmp/trunc.json"
printf '{"jobs": [{"op": "allreduce", "size": "1MiB", "endpoints": "0-7", "colour": 1}]}' >"$tmp/key.json"
printf '{"jobs": [{"op": "allreduce", "size": "1MiB", "endpoints": "0-99"}]}' >"$tmp/range.json"
printf '{"jobs": [{"op": "allreduce", "size": "1MiB", "endpoints": [0, 1, 1]}]}' >"$tmp/twice.json"
printf '{"jobs": [{"op": "allreduce", "size": "0", "endpoints": "0-7"}]}' >"$tmp/size.json"
printf '{"jobs": [{"op": "allreduce", "size": "1MiB"}]}' >"$tmp/noeps.json"
printf '{"jobs": []}' >"$tmp/empty.json"
printf '{"jobs": [{"op": "alltoall", "algo": "ring", "size": "1MiB", "endpoints": "0-7"}]}' >"$tmp/algo.json"
bad "jobs file that is not valid JSON (says where)" concurrent --topo "$CLOS" --jobs "$tmp/trunc.json"
grep -q "line 1" "$tmp/err" || { echo "FAIL: JSON error does not say where"; fails=$((fails + 1)); }
bad "jobs file with an unknown key" concurrent --topo "$CLOS" --jobs "$tmp/key.json"
grep -q "jobs\[0\]" "$tmp/err" || { echo "FAIL: job error does not say which job"; fails=$((fails + 1)); }
bad "jobs file with endpoints beyond the topology" concurrent --topo "$CLOS" --jobs "$tmp/range.json"
bad "jobs file with an endpoint twice" concurrent --topo "$CLOS" --jobs "$tmp/twice.json"
bad "jobs file with a size of 0" concurrent --topo "$CLOS" --jobs "$tmp/size.json"
bad "jobs file without endpoints" concurrent --topo "$CLOS" --jobs "$tmp/noeps.json"
bad "jobs file without jobs" concurrent --topo "$CLOS" --jobs "$tmp/empty.json"
bad "jobs file with an algorithm that does not fit" concurrent --topo "$CLOS" --jobs "$tmp/algo.json"
bad "missing jobs file" concurrent --topo "$CLOS" --jobs "$tmp/none.json"
printf '{"jobs": [{"name": "A", "op": "allreduce", "size": "1MiB", "endpoints": "0-3"}, {"name": "A", "op": "allreduce", "size": "1MiB", "endpoints": "4-7"}]}' >"$tmp/dupname.json"
printf '{"jobs": [{"name": "job1", "op": "allreduce", "size": "1MiB", "endpoints": "0-3"}, {"op": "allreduce", "size": "1MiB", "endpoints": "4-7"}]}' >"$tmp/dupname2.json"
bad_says "jobs file with two jobs of one name" "jobs\[1\] (A): the name is also jobs\[0\]'s" concurrent --topo "$CLOS" --jobs "$tmp/dupname.json"
# a job the failures cut off: named, under the routing its flow run takes (auto chooses by formula, D-mod-k)
printf '{"jobs":[{"name":"A","op":"allreduce","size":"1MiB","endpoints":"0-7"}]}' >"$tmp/cut.json"
printf '{"jobs":[{"name":"A","op":"allreduce","size":"1MiB","endpoints":"0-7","algo":"ring"}]}' >"$tmp/cut_ring.json"
printf '{"jobs":[{"name":"A","op":"allreduce","size":"1MiB","endpoints":"0-7","group":"block=8"}]}' >"$tmp/cut_grp.json"
for f in cut cut_ring cut_grp; do
    for r in "" "--routing ecmp"; do
        # shellcheck disable=SC2086
        bad_says "concurrent: a job cut off ($f $r)" "^topocc: jobs\[0\] (A): \(group block=8: \)\{0,1\}the failures cut .* no surviving path under routing ecmp;" concurrent --topo clos:down=4x2,up=1x2 --jobs "$tmp/$f.json" --fail switch:10,11 $r
    done
    bad_says "concurrent: a job cut off under dmodk ($f)" "^topocc: jobs\[0\] (A): \(group block=8: \)\{0,1\}the failures cut .* no surviving path under routing dmodk;" concurrent --topo clos:down=4x2,up=1x2 --jobs "$tmp/$f.json" --fail switch:10,11 --routing dmodk
done
bad_says "jobs file with a name another job has by default" "jobs\[1\] (job1): the name is also jobs\[0\]'s" concurrent --topo "$CLOS" --jobs "$tmp/dupname2.json"
bad "flow option without flow mode" collective --topo "$CLOS" --op allreduce --size 1MiB --rate-cap 100Gbps
bad "unknown multipath" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --multipath random
bad "unknown deps" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --deps eager
bad "negative eager limit" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --eager-limit -4KiB
bad "garbage eager limit" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --eager-limit lots
bad "eager limit of 0" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --eager-limit 0
bad "eager limit outside flow mode" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --eager-limit 8KiB
grep -q -- "--eager-limit applies only with --mode flow and --deps auto" "$tmp/err" || { echo "FAIL: eager limit refusal does not say where it applies"; fails=$((fails + 1)); }
bad "eager limit with deps rendezvous" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --deps rendezvous --eager-limit 8KiB
bad "--no-skip with a value" collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --no-skip=3
bad "--no-skip given twice" collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --no-skip --no-skip
bad "--no-skip outside flow mode" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --no-skip
grep -q -- "--no-skip applies only with --mode flow" "$tmp/err" || { echo "FAIL: --no-skip refusal does not say where it applies"; fails=$((fails + 1)); }
bad "event budget exceeded" collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --event-budget 10
bad "bad event budget" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --event-budget -3
bad "degrade a link that does not exist" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:100000=0.5
bad "malformed degrade" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade port:3=0.5
bad "degrade factor of 0 is a failure, not a degradation" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:3=0
bad "unwritable trace" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace /nonexistent/dir/t.json
# refused as the scenario resolves (--print-scenario, a sweep's validation),
# not when the simulation ends
bad_says "a trace that is a directory, printed" "^topocc: --trace .*: a directory: give a file name" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp" --print-scenario

bad "codec-bench with an unknown codec" codec-bench --codec bogus
bad "codec-bench with a size of 0" codec-bench --size 0
bad "train-accuracy with a data set that is not there" train-accuracy --data "$tmp/nowhere" --steps 10
grep -q "dataset-fashion-mnist" "$tmp/err" || { echo "FAIL: missing data set does not name its Debian package"; fails=$((fails + 1)); }

# --- help texts explain themselves with an example ---
good "no arguments" "example" 
good "--help" "example" --help
good "topo --help" "example" topo --help
good "collective --help" "example" collective --help
good "compare --help" "example" compare --help
good "concurrent --help" "example" concurrent --help
good "codec-bench --help" "example" codec-bench --help
good "train-accuracy --help" "example" train-accuracy --help
good "compress --help" "example" compress --help
# every algorithm the parser accepts is in collective's ALGO list (its own
# "unknown algorithm" message lists them all); one that does not fit an
# all-reduce on this Clos is refused as the run refuses it, not as unknown
"$T" collective --help >"$tmp/help" 2>&1
for a in ring biring rd rhd binomial dbtree bruck pairwise direct torus torus-bi torus-mp swing hier shift \
    scatter-ring rsg neighbor segring hier-dc scattered scatter-rd auto nccl-ring nccl nccl-tree nccl-nvls \
    nccl-nvls-tree nccl-pat nccl-a2a nccl-collnet-chain nccl-collnet-direct ring-fa torus-fa torus-bi-fa \
    torus-mp-fa dbtree-fa mpich; do
    "$T" collective --topo "$CLOS" --op allreduce --size 1MiB --algo "$a" --print-scenario >/dev/null 2>"$tmp/perr" ||
        grep -q "^topocc: algorithm '$a' does not fit allreduce on 64 ranks" "$tmp/perr" ||
        { echo "FAIL: the parser refuses algorithm $a: $(cat "$tmp/perr")"; fails=$((fails + 1)); }
    grep -Eq "(^|[ ,(])$a([ ,);:]|$)" "$tmp/help" ||
        { echo "FAIL: collective --help does not list algorithm $a"; fails=$((fails + 1)); }
done
good "nccl-tests --help names --routing" "^  --routing R " nccl-tests --help

# --- main paths ---
good "topo summary" "bisection" topo "$CLOS"
good "topo links" "host 0" topo "$CLOS" --links
good "topo json" '"injection_Bps"' topo "torus:dims=4x4" --format json
good "collective table" "busbw" collective --topo "$CLOS" --op allreduce --size 64MiB
for key in schema_version topology op algo algo_requested ranks bytes mode time_s algbw_Bps busbw_Bps lower_bound_s phases; do
    good "collective json has $key" "\"$key\"" collective --topo "$CLOS" --op allreduce --algo auto --size 64MiB --format json
done
good "collective steps mode" "steps" collective --topo "$CLOS" --op allgather --algo ring --size 1MiB --mode steps
good "collective csv" "busbw" collective --topo "$CLOS" --op alltoall --size 1MiB --format csv
good "compare table" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=8x8" --equalize injection=400Gbps --op allreduce,alltoall --sizes 1KiB:1GiB:16
good "compare csv" "ratio_to_first" compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB --format csv
good "compare json" '"results"' compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB --format json
good "compare writes --out" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB --out "$tmp/r.json"
[ -s "$tmp/r.json" ] && grep -q '"results"' "$tmp/r.json" || { echo "FAIL: --out file missing"; fails=$((fails + 1)); }
ls "$tmp" | grep -q '\.tmp\.' && { echo "FAIL: temporary file left behind"; fails=$((fails + 1)); }

good "collective flow mode" "hottest links" collective --topo "$CLOS" --op alltoall --size 1MiB --mode flow
good "collective flow json" '"hot_links"' collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --format json
good "collective flow with rate cap and spray" "rate cap 25GB/s" collective --topo "$CLOS" --op allreduce --algo rhd --size 1MiB --mode flow --rate-cap 200Gbps --multipath spray
good "flow states the eager limit" "deps auto (eager up to 8KiB)" collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --eager-limit 8KiB
good "flow json records the eager limit" '"eager_limit_bytes": 65536' collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --format json
good "flow json has no eager limit under fifo" '"eager_limit_bytes": null' collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --deps fifo --format json
good "flow accepts --no-skip" "events" collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --no-skip
good "flow says --no-skip turned skipping off" "repetition     off (--no-skip)" collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --no-skip
good "flow json records repetition skipping" '"steps_skipped"' collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --format json
good "flow folds a ring by pod on a three-level Clos" "symmetry       ranks translated by 16: 16 of 64 ranks simulated" collective --topo "clos:down=4x4x4,up=1x4x4" --routing dmodk --op allreduce --algo ring --size 2MiB --mode flow
good "flow says why it does not fold a degraded ring" "symmetry       none (no translation" collective --topo "clos:down=4x4x4,up=1x4x4" --routing dmodk --degrade link:0=0.5 --op allreduce --algo ring --size 2MiB --mode flow
good "flow says --no-skip turned folding off" "symmetry       none (--no-skip)" collective --topo "clos:down=4x4x4,up=1x4x4" --op allreduce --algo ring --size 2MiB --mode flow --no-skip
good "flow json records rank symmetry" '"symmetry_ranks": 16' collective --topo "clos:down=4x4x4,up=1x4x4" --routing dmodk --op allreduce --algo ring --size 2MiB --mode flow --format json
good "--no-skip is in the scenario" '"skip": false' collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --no-skip --print-scenario
good "skipping is on by default" '"skip": true' collective --topo "$CLOS" --op reducescatter --algo ring --size 1MiB --mode flow --print-scenario
# scattered: the throttle named, MPICH's variable recorded, bad values refused.
good "scattered names its throttle" '"algo": "scattered:throttle=8"' collective --topo "$CLOS" --op alltoall --algo scattered:throttle=8 --size 1MiB --format json
MPIR_CVAR_ALLTOALL_THROTTLE=4 good "MPIR_CVAR_ALLTOALL_THROTTLE is recorded" '"scattered:throttle=4"' collective --topo "$CLOS" --op alltoall --algo scattered --size 1MiB --print-scenario
bad "throttle on another algorithm" collective --topo "$CLOS" --op alltoall --algo pairwise:throttle=4 --size 1MiB
bad "negative throttle" collective --topo "$CLOS" --op alltoall --algo scattered:throttle=-2 --size 1MiB
MPIR_CVAR_ALLTOALL_THROTTLE=lots bad "MPIR_CVAR_ALLTOALL_THROTTLE not a number" collective --topo "$CLOS" --op alltoall --algo scattered --size 1MiB
bad "scattered for all-reduce" collective --topo "$CLOS" --op allreduce --algo scattered --size 1MiB
unset MPIR_CVAR_ALLTOALL_THROTTLE # a shell may keep an assignment made before a function call
# mpich: MPICH's own choice, named size by size; what it cannot run refused.
good "mpich names its choice" 'mpich:rhd' collective --topo "$CLOS" --op allreduce --algo mpich --size 1MiB
good "mpich's choice in JSON" '"mpich_algo": "binomial"' collective --topo "$CLOS" --op broadcast --algo mpich --size 1KiB --format json
bad "mpich on nodes of several ranks" collective --topo "clos:down=2x8,up=1x2,node=8" --op allreduce --algo mpich --size 1MiB
bad "mpich over groups inside a node" collective --topo "clos:down=4x4,up=1x2,node=4" --op allreduce --algo mpich --group node --size 1MiB
good "mpich over one rank per node" 'mpich:rhd' collective --topo "clos:down=4x4,up=1x2,node=4" --op allreduce --algo mpich --group stride=4 --size 1MiB
printf '{"jobs": [{"name": "A", "op": "alltoall", "algo": "mpich", "size": "1MiB", "endpoints": "0-7"}]}' >"$tmp/mj.json"
good "a concurrent job names mpich's choice" '"algo": "mpich:pairwise"' concurrent --topo "$CLOS" --jobs "$tmp/mj.json" --format json
printf '{"jobs": [{"name": "A", "op": "alltoall", "algo": "scattered:throttle=1", "size": "1MiB", "endpoints": "0-7"}]}' >"$tmp/scat.json"
good "a concurrent job names its throttle" '"algo": "scattered:throttle=1"' concurrent --topo "$CLOS" --jobs "$tmp/scat.json" --format json
good "help lists --no-skip" "no skipping of repeated steps" collective --help
good "collective flow writes a trace" "slices" collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --trace "$tmp/trace.json"
grep -q '"traceEvents"' "$tmp/trace.json" || { echo "FAIL: trace file missing"; fails=$((fails + 1)); }
good "degraded link in steps mode" "time" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --degrade link:0=0.5 --degrade link:1=0.25
good "compare in flow mode" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB:32 --mode flow
printf '{"jobs": [{"name": "A", "op": "allreduce", "algo": "ring", "size": "1MiB", "endpoints": "0,8"}, {"name": "B", "op": "alltoall", "size": "1MiB", "endpoints": [1, 9, 17], "start": "5us"}]}' >"$tmp/jobs.json"
good "concurrent jobs" "slowdown" concurrent --topo "clos:down=8x8,up=1x1" --jobs "$tmp/jobs.json"
good "concurrent jobs json" '"slowdown"' concurrent --topo "clos:down=8x8,up=1x1" --jobs "$tmp/jobs.json" --format json
good "concurrent accepts --no-skip" "slowdown" concurrent --topo "clos:down=8x8,up=1x1" --jobs "$tmp/jobs.json" --no-skip

good "codec-bench measures a codec beside the copy bandwidth" "copy" codec-bench --codec bf16 --size 1MiB --seconds 0.05

# --- standard output that cannot be written: exit 1, one line on stderr ---
full() { # description, args...
    what="$1"; shift
    "$T" "$@" >/dev/full 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "standard output\|cannot write" "$tmp/err"; then
        echo "FAIL (stdout on a full disk: $what): rc=$rc"
        cat "$tmp/err"
        fails=$((fails + 1))
    fi
}
if [ -w /dev/full ]; then
    full "collective table" collective --topo "$CLOS" --op allreduce --sizes 1KiB:1GiB
    full "collective one line" collective --topo "$CLOS" --op allreduce --size 1MiB
    full "collective csv" collective --topo "$CLOS" --op allreduce --sizes 1KiB:1GiB --format csv
    full "collective json" collective --topo "$CLOS" --op allreduce --sizes 1KiB:1GiB --format json
    full "nccl-tests" nccl-tests --preset dgx-h100 -b 8 -e 1M -f 4
    printf '{"scenario": {"command": "topo", "network": {"topo": ["%s"]}}, "sweep": {"axes": {"network.topo[0]": ["%s", "torus:dims=4x4"]}}}' "$CLOS" "$CLOS" >"$tmp/full_sweep.json"
    "$T" sweep "$tmp/full_sweep.json" -o "$tmp/full_sweep.jsonl" --quiet >/dev/null
    full "sweep --status" sweep --status "$tmp/full_sweep.jsonl"
    full "help" --help
fi

# --- one option table: the same contract everywhere ---
bad "repeated single-valued flag" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --mode flow
bad "repeated flag in compress" compress --topo "$CLOS" --model resnet50 --model vgg16 --codec topk --steps-ratio topk=1
bad "unknown flag names the nearest" collective --topo "$CLOS" --op allreduce --size 1MiB --sise 2MiB
grep -q -- "--size" "$tmp/err" || { echo "FAIL: unknown flag does not name the nearest"; fails=$((fails + 1)); }
bad "flag of another command" collective --topo "$CLOS" --op allreduce --size 1MiB --codec bf16
grep -q "compress" "$tmp/err" || { echo "FAIL: foreign flag does not say where it belongs"; fails=$((fails + 1)); }
bad "trace with steps mode" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --trace "$tmp/t.json"
bad "size and sizes together" collective --topo "$CLOS" --op allreduce --size 1MiB --sizes 1KiB:1MiB
bad "seed of a placement that is not random" collective --topo "$CLOS" --op allreduce --size 1MiB --place first:seed=3
bad "ranks with endpoints" collective --topo "$CLOS" --op allreduce --size 1MiB --ranks 4 --endpoints 0-3
bad "compare of different endpoint counts" compare --topo "$CLOS" --topo "torus:dims=4x4" --op allreduce --sizes 1KiB
grep -q -- "--ranks" "$tmp/err" || { echo "FAIL: compare refusal does not say how to fix it"; fails=$((fails + 1)); }
good "compare of different endpoint counts with --ranks" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=4x4" --op allreduce --sizes 1KiB:1MiB --ranks 16
# one rank: a collective moves nothing and takes no time, so there is no
# ratio: "-" in the table (CSV empty, JSON null), no "takes ...x" line, no
# multiple of the bound
good "compare of one rank: no ratio" "^1MiB  0ns  ring  0ns  ring    -$" compare --topo "$CLOS" --topo "torus:dims=8x8" --ranks 1 --op allreduce --sizes 1MiB:1MiB
if grep -qE "nan|inf|takes" "$tmp/out"; then
    echo "FAIL (compare of one rank): a ratio of 0 / 0 is printed"
    cat "$tmp/out"
    fails=$((fails + 1))
fi
good "compare of one rank: JSON null ratio" '"ratio_to_first": null' compare --topo "$CLOS" --topo "torus:dims=8x8" --ranks 1 --op allreduce --sizes 1MiB:1MiB --format json
good "collective of one rank: no multiple of the bound" "^lower bound  0ns$" collective --topo "$CLOS" --ranks 1 --op allreduce --sizes 1MiB:1MiB
# nor a bandwidth: "-" (CSV empty, JSON null), not 0KB/s
good "collective of one rank: no algbw" "^algbw        -$" collective --topo "$CLOS" --ranks 1 --op allreduce --size 1MiB
good "collective of one rank: no busbw" "^busbw        -$" collective --topo "$CLOS" --ranks 1 --op allreduce --size 1MiB
good "collective of one rank: no bandwidth in the sizes table" "^1KiB  *256  float  sum  *-1   0ns      -      -  ring" collective --topo "$CLOS" --ranks 1 --op allreduce --sizes 1KiB:4KiB
good "collective of one rank: JSON null bandwidth" '"algbw_Bps": null' collective --topo "$CLOS" --ranks 1 --op allreduce --size 1MiB --format json
good "collective of one rank: CSV empty bandwidth" '^allreduce,ring,1,1048576,0,,,0,' collective --topo "$CLOS" --ranks 1 --op allreduce --algo ring --size 1MiB --format csv
good "compress accepts the network and flow flags" "time to acc" compress --topo "$CLOS" --model resnet50 --workers 16 --codec topk --steps-ratio topk=1 --degrade link:0=0.5 --mode flow --rate-cap 300Gbps --quiet

# --- scenario files ---
printf '{"network": {"topos": ["%s"]}}' "$CLOS" >"$tmp/s_unknown.json"
bad "scenario with an unknown key" collective --scenario "$tmp/s_unknown.json" --op allreduce --size 1MiB
grep -q "network.topo'" "$tmp/err" || { echo "FAIL: unknown key does not name the nearest valid key"; fails=$((fails + 1)); }
printf '{"eval": {"mode": 3}}' >"$tmp/s_type.json"
bad "scenario with a wrong type" collective --scenario "$tmp/s_type.json" --topo "$CLOS" --op allreduce --size 1MiB
grep -q "eval.mode" "$tmp/err" || { echo "FAIL: wrong type does not name the key"; fails=$((fails + 1)); }
printf '{"network": {"topo": ["%s"],\n  }' "$CLOS" >"$tmp/s_syntax.json"
bad "scenario with a syntax error" collective --scenario "$tmp/s_syntax.json"
grep -q "line 2" "$tmp/err" || { echo "FAIL: syntax error does not give the line"; fails=$((fails + 1)); }
printf '{"command": "compare"}' >"$tmp/s_cmd.json"
bad "scenario of another command" collective --scenario "$tmp/s_cmd.json"
bad "replay of a file that is not a scenario" replay /etc/hostname
bad "replay without a file" replay
bad "replay with a scenario flag" replay "$tmp/s_cmd.json" --topo "$CLOS"

# A result reproduces itself: the degraded time is in the record.
"$T" collective --topo "$CLOS" --op allreduce --algo ring --size 64MiB --mode steps --degrade link:0=0.1 \
    --format json >"$tmp/deg.json" 2>"$tmp/err" || { echo "FAIL: degraded run"; fails=$((fails + 1)); }
"$T" replay "$tmp/deg.json" --format json >"$tmp/deg2.json" 2>"$tmp/err"
cmp -s "$tmp/deg.json" "$tmp/deg2.json" || { echo "FAIL: replay of a degraded result differs"; diff "$tmp/deg.json" "$tmp/deg2.json" | head; fails=$((fails + 1)); }
[ -s "$tmp/err" ] && { echo "FAIL: replay on the same binary warns"; cat "$tmp/err"; fails=$((fails + 1)); }
"$T" collective --topo "$CLOS" --op allreduce --algo ring --size 64MiB --mode steps --format json >"$tmp/healthy.json"
cmp -s "$tmp/deg.json" "$tmp/healthy.json" && { echo "FAIL: degraded and healthy results are the same"; fails=$((fails + 1)); }
"$T" replay - --format json <"$tmp/deg.json" >"$tmp/deg3.json" && cmp -s "$tmp/deg.json" "$tmp/deg3.json" || { echo "FAIL: replay from stdin"; fails=$((fails + 1)); }
# print-scenario: the scenario alone, and it runs to the same result.
"$T" collective --topo "$CLOS" --op allreduce --algo ring --size 64MiB --mode steps --degrade link:0=0.1 --print-scenario >"$tmp/scn.json"
"$T" collective --scenario "$tmp/scn.json" --format json >"$tmp/deg4.json" && cmp -s "$tmp/deg.json" "$tmp/deg4.json" || { echo "FAIL: --scenario of --print-scenario differs"; fails=$((fails + 1)); }
# --out F.csv writes the scenario beside it; --out-dir writes every table.
good "csv to a file" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB --out "$tmp/r.csv"
[ -s "$tmp/r.scenario.json" ] && grep -q '"scenario_version"' "$tmp/r.scenario.json" || { echo "FAIL: F.scenario.json missing"; fails=$((fails + 1)); }
# a CSV result and its scenario are written together or not at all
mkdir -p "$tmp/half/x.scenario.json"
bad "csv whose scenario file cannot be written" compare --topo "$CLOS" --op allreduce --sizes 1KiB:1MiB --out "$tmp/half/x.csv"
[ -e "$tmp/half/x.csv" ] && { echo "FAIL: a CSV result was left without its scenario"; fails=$((fails + 1)); }
good "out-dir" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB --out-dir "$tmp/dir"
[ -s "$tmp/dir/results.csv" ] && [ -s "$tmp/dir/scenario.json" ] || { echo "FAIL: out-dir tables missing"; ls "$tmp/dir"; fails=$((fails + 1)); }
# CSV and JSON hold numbers, never "45.93ms" or "1.994x".
for args in "compare --topo $CLOS --topo torus:dims=8x8 --op allreduce,alltoall --sizes 1KiB:1MiB" \
    "collective --topo $CLOS --op allreduce --sizes 1KiB:1MiB" "collective --topo $CLOS --op allreduce --size 1MiB --algo all" \
    "concurrent --topo clos:down=8x8,up=1x1 --jobs $tmp/jobs.json" "topo $CLOS"; do
    # shellcheck disable=SC2086
    "$T" $args --format csv >"$tmp/o.csv" 2>/dev/null
    # shellcheck disable=SC2086
    "$T" $args --format json >"$tmp/o.json" 2>/dev/null
    U='[0-9.]+(ns|us|ms|min|h|d|B|KiB|MiB|GiB|TiB|KB/s|MB/s|GB/s|TB/s|Gb/s|Tb/s|x|%)'
    # (the build's commit id, e.g. "696604d", is no formatted number)
    if grep -Eq "(^|,)$U(,|\$)" "$tmp/o.csv" || grep -v '"commit": "' "$tmp/o.json" | grep -Eq "\": \"$U\""; then
        echo "FAIL: formatted number in CSV or JSON of: $args"; grep -Eh "(^|,)$U(,|\$)|\": \"$U\"" "$tmp/o.csv" "$tmp/o.json" | head -3
        fails=$((fails + 1))
    fi
done
# Round trip for every command (the README's examples among them): the
# scenario printed, read back and printed again is the same; the result
# replayed from its own JSON is the same, bit for bit.
printf '{"jobs": [{"name": "A", "op": "allreduce", "algo": "ring", "size": "64MiB", "endpoints": "0,4"}, {"name": "B", "op": "allreduce", "algo": "ring", "size": "64MiB", "endpoints": [1, 5], "start": "0us"}]}' >"$tmp/jobs2.json"
while IFS= read -r line; do
    [ -z "$line" ] && continue
    cmd=${line%% *}
    # shellcheck disable=SC2086
    "$T" $line --print-scenario >"$tmp/rt1.json" 2>"$tmp/err" || { echo "FAIL (print-scenario): $line"; cat "$tmp/err"; fails=$((fails + 1)); continue; }
    "$T" "$cmd" --scenario "$tmp/rt1.json" --print-scenario >"$tmp/rt2.json" 2>"$tmp/err"
    cmp -s "$tmp/rt1.json" "$tmp/rt2.json" || { echo "FAIL (scenario round trip): $line"; diff "$tmp/rt1.json" "$tmp/rt2.json" | head -5; fails=$((fails + 1)); }
    # shellcheck disable=SC2086
    "$T" $line --format json --quiet >"$tmp/rr1.json" 2>"$tmp/err" || { echo "FAIL (run): $line"; cat "$tmp/err"; fails=$((fails + 1)); continue; }
    "$T" replay "$tmp/rr1.json" --format json --quiet >"$tmp/rr2.json" 2>"$tmp/err"
    cmp -s "$tmp/rr1.json" "$tmp/rr2.json" || { echo "FAIL (replay differs): $line"; diff "$tmp/rr1.json" "$tmp/rr2.json" | head -5; fails=$((fails + 1)); }
done <<EOF_CMDS
topo clos:down=8x8,up=1x4,bw=400Gbps,lat=1us
topo torus:dims=4x4,wrap=1x0 --links --degrade link:3=0.5
collective --topo clos:down=8x8,up=1x4,bw=400Gbps,lat=1us --op alltoall --algo direct --size 16MiB --mode steps
collective --topo clos:down=8x8,up=1x4,bw=400Gbps,lat=1us --op alltoall --algo direct --size 16MiB --mode steps --routing dmodk
collective --topo clos:down=8x8,up=1x8 --op allreduce --sizes 1KiB:64MiB:8 --algo all --ranks 48 --place random:seed=9
collective --topo clos:down=8x8,up=1x8 --op allreduce --sizes 1KiB:4KiB:1.3 --mode steps
collective --topo torus:dims=4x4x4 --op allgather --size 4MiB --mode flow --multipath spray --rate-cap 300Gbps
collective --topo clos:down=8x8,up=1x8 --op reducescatter --algo ring --size 1MiB --mode flow --eager-limit 8KiB
collective --topo clos:down=8x8,up=1x8 --op allreduce --algo ring --size 1MiB --mode flow --no-skip
collective --topo clos:down=8x8,up=1x2,bw=12.5GB/s,lat=1us --op allreduce --algo rhd:order=far,binomial:tree=highbit,rhd --size 16MiB --mode flow --routing dmodk
compare --topo clos:down=16x16x16,up=1x16x16,lat=1us,alpha=2us --topo torus:dims=16x16x16,lat=1us,alpha=2us --equalize injection=400Gbps --names clos,torus --op allreduce --sizes 1KiB:1GiB:16
compare --topo clos:down=8x8,up=1x8 --topo torus:dims=8x8 --op allreduce --sizes 1KiB:1MiB:32 --mode flow
concurrent --topo clos:down=4x2,up=1x1 --jobs $tmp/jobs2.json
concurrent --topo clos:down=4x2,up=1x1 --jobs $tmp/jobs2.json --deps auto --eager-limit 16KiB
concurrent --topo clos:down=4x2,up=1x1 --jobs $tmp/jobs2.json --no-skip
compress --topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us --model resnet50 --workers 64 --codec powersgd:rank=2 --codec topk:ratio=0.01 --codec int8 --steps-ratio powersgd:rank=2=1 --steps-ratio topk:ratio=0.01=1 --steps-ratio int8=1 --sweep-bw
$([ -d /usr/share/datasets/fashion-mnist ] && echo "train-accuracy --codec bf16 --codec topk:ratio=0.01 --steps 20 --eval-every 10 --train-subset 1000 --test-subset 200 --seeds 2 --target-acc 0.5")
EOF_CMDS
# codec-bench measures: its scenario round-trips, its replay measures again.
"$T" codec-bench --codec bf16 --size 64KiB --seconds 0.01 --print-scenario >"$tmp/cb1.json"
"$T" codec-bench --scenario "$tmp/cb1.json" --print-scenario >"$tmp/cb2.json"
cmp -s "$tmp/cb1.json" "$tmp/cb2.json" || { echo "FAIL: codec-bench scenario round trip"; fails=$((fails + 1)); }
"$T" codec-bench --codec bf16 --size 64KiB --seconds 0.01 --format json --quiet >"$tmp/cb3.json"
good "codec-bench replay measures again" '"measured"' replay "$tmp/cb3.json" --format json --quiet

bad "a run above the memory limit is refused before it starts" collective --topo "clos:down=16x16,up=1x16" --op alltoall --algo direct --size 1MiB --mode flow --mem-limit 10MB
grep -q -- "--mem-limit" "$tmp/err" || { echo "FAIL: memory refusal does not name the flag"; fails=$((fails + 1)); }
bad_says "a limit below a kilobyte is shown as it is" "above the memory limit of 1 B: raise it with --mem-limit" collective \
    --topo "clos:down=4x4,up=1x2" --op allreduce --size 1MiB --mode flow --mem-limit 1
# --algo all: the advice covers every algorithm's largest run (it was the
# first algorithm's, which the next one then exceeded)
bad_says "the memory advice of --algo all covers them all" "raise it with --mem-limit 863KB" collective \
    --topo "clos:down=4x4,up=1x2" --op allreduce --size 1MiB --mode flow --mem-limit 600KB --algo all
good "following the memory advice of --algo all runs" "dbtree" collective --topo "clos:down=4x4,up=1x2" --op allreduce \
    --size 1MiB --mode flow --mem-limit 863KB --algo all
bad "bad memory limit" collective --topo "$CLOS" --op allreduce --size 1MiB --mem-limit lots
# mpich's choice follows the size: the smaller size's all-to-all (scattered,
# 32 messages a rank in flight) needs about 90 MB, the larger's (pairwise) 11.
bad "a sweep sized by the choice of each size" collective --topo "clos:hosts=2048,radix=64,tiers=2" --op alltoall --algo mpich --sizes 32MiB:128MiB:4 --mode flow --mem-limit 50MB
# Flags replace what a saved scenario says, even where that changes what applies.
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --rate-cap 300Gbps --place random:seed=4 --ranks 8 --out "$tmp/rf.json" >/dev/null
good "a flag overrides a saved flow scenario" "formula" collective --scenario "$tmp/rf.json" --mode formula --routing dmodk --place first
# a saved scenario keeps a routing not given as "default": another mode routes as that mode does
good "a saved flow scenario in formula mode routes by D-mod-k" "formula (routing dmodk: formula's default" collective --scenario "$tmp/rf.json" --mode formula --place first
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --routing ecmp --out "$tmp/re.json" >/dev/null
bad "a saved scenario that asked for ECMP, in formula mode" collective --scenario "$tmp/re.json" --mode formula
bad "place and endpoints that disagree" collective --topo "$CLOS" --op allreduce --size 1MiB --place random --endpoints 0-3
bad "endpoint ranges beyond any topology" collective --topo "$CLOS" --op allreduce --size 1MiB --endpoints 0-100000000,0-100000000
bad "--out to a directory, refused before the run" collective --topo "$CLOS" --op allreduce --size 1MiB --out "$tmp"
good "--out to a device writes through it" "busbw" collective --topo "$CLOS" --op allreduce --size 1MiB --out /dev/null
[ -c /dev/null ] || { echo "FAIL: /dev/null is no longer a device"; fails=$((fails + 1)); }
good "--print-scenario with --out" '"scenario_version"' collective --topo "$CLOS" --op allreduce --size 1MiB --print-scenario --out "$tmp/ps.json"
grep -q '"scenario_version"' "$tmp/ps.json" || { echo "FAIL: --print-scenario --out wrote nothing"; fails=$((fails + 1)); }
bad "--print-scenario with csv" collective --topo "$CLOS" --op allreduce --size 1MiB --print-scenario --format csv
printf '{"scenario": {"command": "collective"}, "network": {"topo": ["%s"]}}' "$CLOS" >"$tmp/stray.json"
bad "a scenario file with a stray scenario key" collective --scenario "$tmp/stray.json" --op allreduce --size 1MiB
printf '{"collective": {"algo": []}}' >"$tmp/empty.json"
bad "an empty algorithm list" collective --scenario "$tmp/empty.json" --topo "$CLOS" --op allreduce --size 1MiB
good "topo writes its tables to a directory" "bisection" topo "$CLOS" --links --out-dir "$tmp/topodir"
[ -s "$tmp/topodir/links.csv" ] || { echo "FAIL: topo --out-dir has no links.csv"; ls "$tmp/topodir"; fails=$((fails + 1)); }

good "formula phases say how each was costed" "closed form" collective --topo "clos:down=8x8,up=1x2" --op allreduce --algo rhd --size 64MiB --phases
good "formula phases on the graph" "routed graph" collective --topo "clos:down=8x8,up=1x2" --op reduce --algo direct --size 64MiB --phases
bad "phases outside formula mode" collective --topo "$CLOS" --op allreduce --size 1MiB --phases --mode steps
bad "ecmp with formula" collective --topo "$CLOS" --op allreduce --size 1MiB --routing ecmp
grep -q -- "--mode steps" "$tmp/err" || { echo "FAIL: ecmp with formula does not name --mode steps"; fails=$((fails + 1)); }
good "specs state every latency" "lat=50ns,hop_lat=100ns,alpha=1.1us" topo "clos:down=8x8,up=1x8"
good "topo reports the path latency with switches" "200ns min, 500ns max" topo "clos:down=8x8,up=1x8"
good "result header states lat, hop_lat and alpha" "topo=torus:dims=4x4,bw=400Gbps,lat=20ns,hop_lat=0ns,alpha=0ns" collective --topo "torus:dims=4x4,lat=20ns,hop_lat=0,alpha=0" --op allreduce --size 1MiB
good "json result records hop_lat" '"hop_lat_s": 1e-07' collective --topo "$CLOS,hop_lat=100ns" --op allreduce --size 1MiB --format json
good "formula honours a degraded link" "26.68ms" collective --topo "$CLOS,hop_lat=0,alpha=0" --op allreduce --algo ring --size 64MiB --degrade link:0=0.1
good "size sweep" "busbw" collective --topo "$CLOS" --op allreduce --sizes 1KiB:16MiB
good "algorithm ranking" "rhd" collective --topo "$CLOS" --op allreduce --size 16MiB --algo all
good "a variant is named in the result" "algorithm  *rhd:order=far" collective --topo "$CLOS" --op allreduce --size 16MiB --algo rhd:order=far
good "a variant is named in the JSON result" '"algo": "binomial:tree=highbit"' collective --topo "$CLOS" --op broadcast --size 1MiB --algo binomial:tree=highbit --format json
bad "an order that does not exist" collective --topo "$CLOS" --op allreduce --size 1MiB --algo rhd:order=sideways
bad "an order for an algorithm without one" collective --topo "$CLOS" --op allreduce --size 1MiB --algo ring:order=far
good "version" "commit" --version
good "random placement" "busbw" collective --topo "$CLOS" --op allreduce --size 1MiB --ranks 16 --place random:seed=3 --mode steps
good "packed: two whole leaves of one pod" "placement: packed, 8 ranks: 2 leaves, 1 pod" collective --topo clos:down=4x4x2,up=1x4x2 --ranks 8 --place packed --op allreduce --size 1MiB
good "slice: the compact cuboid" "slice 2x2x4 at (0,0,0), wraparound x no y no z no" collective --topo torus:dims=8x8x8 --ranks 16 --place slice --op allreduce --size 1MiB
# a slice without wraparound of its own spanning half a ring or more is
# routed round the ring outside it: the placement says so (docs/MODEL.md)
S8="torus:dims=8x8x8,lat=1us,hop_lat=0,alpha=0,bw=400Gbps"
good "slice: routed round outside it, said" "slice 6x1x1 at (0,0,0), wraparound x outside y no z no (routed the shorter way, round the torus through routers outside the slice on links other jobs may use: its endpoints 4 or more apart along x)" collective --topo "$S8" --place slice:shape=6x1x1 --op allreduce --algo torus-bi --size 64MiB
good "slice: routed round outside it, its time" "^time  *1.148ms" collective --topo "$S8" --place slice:shape=6x1x1 --op allreduce --algo torus-bi --size 64MiB
good "slice: half way round (a tie) also goes outside" "wraparound x outside y no z no" collective --topo "$S8" --place slice:shape=5x1x1 --op allreduce --algo torus-bi --size 64MiB
good "slice: less than half way round stays inside" "wraparound x no y no z no$" collective --topo "$S8" --place slice:shape=4x1x1 --op allreduce --algo torus-bi --size 64MiB
good "slice: routed outside in the JSON" '"wraparound_outside": \[false, true\]' collective --topo torus:dims=8x7 --place slice:shape=1x5 --op allreduce --size 1MiB --format json
good "slice: a shape given, its ranks" "slice 2x2x2 at" collective --topo torus:dims=4x4x4 --place slice:shape=2x2x2 --op allreduce --size 1MiB
good "slice: ocs wraparound in the JSON" '"ocs_wraparound": true' collective --topo torus:dims=8x8x8 --ranks 64 --place slice:ocs=4 --op allreduce --size 1MiB --format json
good "occupancy: the history in the result" "occupancy 0.7: 11 endpoints held" collective --topo clos:down=4x4,up=1x1 --ranks 4 --place packed:seed=1 --occupancy 0.7 --op allreduce --algo direct --size 64MiB --mode steps --routing dmodk
good "occupancy 0 takes a seed (a sweep from 0 keeps one)" "place=slice seed=1 occupancy=0" collective --topo torus:dims=8x8x8 --ranks 16 --place slice:seed=1 --occupancy 0 --op allreduce --size 1MiB
bad_says "a seed without random placement or an occupancy" "job.seed applies only with --place random or an --occupancy (0 included)" collective --topo torus:dims=8x8x8 --ranks 16 --place slice:seed=1 --op allreduce --size 1MiB
# Over sub-groups flow may exceed steps (docs/MODEL.md "Against steps", docs/VALIDATION.md): 1.135x here
GRP="--topo clos:down=4x3,up=1x4,alpha=3us --op alltoall --algo pairwise --size 7340032 --group block=4 --place random:seed=80"
good "grouped pairwise all-to-all in steps, as documented" "^time          230.7us (the slowest group)" collective $GRP --mode steps
good "grouped pairwise all-to-all in flow, as documented" "^time           262us (the slowest group)" collective $GRP --mode flow
grep -q "^group finish   slowest 262us (group 2), fastest 221.5us (group 0)" "$tmp/out" ||
    { echo "FAIL: grouped flow: the groups' finishes are not the documented ones"; fails=$((fails + 1)); }
grep -q "^hottest links  L2 3 -> leaf 1 (link 39): 8.75MiB" "$tmp/out" ||
    { echo "FAIL: grouped flow: the hottest link is not the documented one"; fails=$((fails + 1)); }
# A list names each algorithm, operation and alpha once
bad_says "an operation listed twice" "^topocc: --op\[1\]: operation 'allreduce' listed twice$" compare --topo "$CLOS" --op allreduce,allreduce --sizes 1MiB
bad_says "an algorithm listed twice" "^topocc: --algo\[1\]: algorithm 'ring' listed twice$" collective --topo "$CLOS" --op allreduce --size 1MiB --algo ring,ring
bad_says "one algorithm in two spellings" "'nccl:proto=LL|Simple' and 'nccl:proto=Simple|LL' are one algorithm, 'nccl:proto=LL|Simple', listed twice" collective --topo "$CLOS" --op allreduce --size 1MiB --algo 'nccl:proto=LL|Simple,nccl:proto=Simple|LL'
good "ring and ring:chunks=1 are two entries" "^1MiB     2  ring:chunks=1 " collective --topo "$CLOS" --op allreduce --size 1MiB --algo ring,ring:chunks=1
bad_says "an alpha listed twice" "^topocc: --alphas\[1\]: alpha 0ns listed twice$" compare --topo "$CLOS" --op allreduce --sizes 1MiB --alphas 0,0
bad_says "an alpha listed twice in two units" "alpha 1us listed twice" compare --topo "$CLOS" --op allreduce --sizes 1MiB --alphas 1us,1000ns
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --algo ring,rd --print-scenario 2>/dev/null | sed 's/"algo": \["ring", "rd"\]/"algo": ["ring", "rd", "ring"]/' >"$tmp/dup_algo.json"
bad_says "an algorithm listed twice in a scenario file" "collective.algo\[2\]: algorithm 'ring' listed twice" collective --scenario "$tmp/dup_algo.json"
bad_says "torus rings on a random placement name the shape they need" "algorithm 'torus' does not fit allreduce on 32 ranks (needs all 64 endpoints of the torus, or the job's ranks on a box of it in coordinate order, first dimension fastest, as --place slice puts them)" collective --topo torus:dims=4x4x4 --ranks 32 --op allreduce --algo torus --size 1MiB --place random:seed=4
good "torus rings on the same ranks placed first (a 4x4x2 box)" "^time " collective --topo torus:dims=4x4x4 --ranks 32 --op allreduce --algo torus --size 1MiB --place first
good "occupancy: the scenario key" "occupancy=0.5" collective --topo "$CLOS" --ranks 8 --place first:seed=2 --occupancy 0.5 --op allreduce --size 1MiB
bad "packed on a torus" collective --topo torus:dims=4x4 --place packed --ranks 4 --op allreduce --size 1MiB
bad "slice on a Clos" collective --topo "$CLOS" --place slice --ranks 4 --op allreduce --size 1MiB
bad "a slice shape that does not fit" collective --topo torus:dims=4x4x4 --place slice:shape=2x2x8 --op allreduce --size 1MiB
bad "a slice shape that is not the ranks" collective --topo torus:dims=4x4x4 --place slice:shape=2x2x2 --ranks 16 --op allreduce --size 1MiB
bad "a shape for a placement that is not slice" collective --topo "$CLOS" --place packed:shape=2x2 --ranks 4 --op allreduce --size 1MiB
bad "an unknown placement parameter" collective --topo "$CLOS" --place packed:depth=2 --ranks 4 --op allreduce --size 1MiB
bad "occupancy of 1" collective --topo "$CLOS" --place packed --occupancy 1 --ranks 4 --op allreduce --size 1MiB
bad "negative occupancy" collective --topo "$CLOS" --place packed --occupancy -0.2 --ranks 4 --op allreduce --size 1MiB
bad "occupancy with a list" collective --topo "$CLOS" --endpoints 0-3 --occupancy 0.5 --op allreduce --size 1MiB
bad "more ranks than free endpoints" collective --topo "$CLOS" --place packed:seed=1 --occupancy 0.9 --ranks 32 --op allreduce --size 1MiB
good "every result header states the injection per endpoint" "injection" collective --topo "torus:dims=4x4" --op allreduce --size 1MiB

bad "alphas: a time without a unit" compare --topo clos:down=4x4,up=1x4 --topo torus:dims=4x4 --op allreduce --sizes 1KiB:1MiB --alphas 1x
bad "alphas: above 1 s" compare --topo clos:down=4x4,up=1x4 --topo torus:dims=4x4 --op allreduce --sizes 1KiB:1MiB --alphas 2s
bad "alphas: only compare" collective --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --alphas 1us
bad "dtype: unknown" collective --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --dtype float16
bad "dtype: a size of zero whole elements per rank" collective --topo clos:down=4x4,up=1x4 --op allgather --size 8 --dtype fp64
good "dtype: the rounded size is reported" "^allreduce,ring,16,1000," collective --topo clos:down=4x4,up=1x4 --op allreduce --algo ring --size 1001 --dtype bf16 --format csv

# Presets from hardware profiles (docs/PROFILES.md)
good "preset: a DGX H100 pair is a rail-optimized Clos" "rail=8" topo --preset dgx-h100:nodes=2
good "preset: a TPU slice is a torus" "torus:dims=8x8x8" topo --preset tpu-v5p-slice:dims=8x8x8
bad_says "preset: unknown, listing the known presets alone" "known are aws-p4d, aws-p5, dgx-a100, dgx-b200, dgx-h100, dgx-h200, gb200-nvl72, gcp-a3-mega, gcp-a3-ultra, gcp-a4, tpu-v4-slice, tpu-v5p-slice" collective --preset dgx-h999 --op allreduce --size 1MiB
bad_says "replay of a directory" "a directory: give a saved result or scenario" replay "$tmp"
bad_says "--scenario of a directory" "a directory: give a scenario file" collective --scenario "$tmp"
bad_says "train: a codec ratio that leaves too few bytes names the codec" "with --compress-dp topk:ratio=1e-08: dp allgather" train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 8 --tp 8 --compress-dp topk:ratio=1e-8
bad "--achievable far below any GPU's" train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 8 --tp 8 --achievable 1e-310
bad "--degrade by a factor that leaves no bandwidth" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:0=1e-320
bad "--synthetic at a load the arrivals cannot make" cluster --topo "$CLOS" --synthetic 10,seed=1,load=1e-12
# a cluster trace is kept by path and digest: a replay refuses a trace that changed since; --out cannot be the
# trace; a pipe cannot be read twice
printf 'submit,size,duration\n0,4,100\n10,8,50\n' >"$tmp/own.csv"
good "cluster: the trace's digest recorded" '"trace_digest": "crc32=[0-9a-f]\{8\},bytes=37"' cluster --topo torus:dims=4x4 --trace "$tmp/own.csv" --format json --out "$tmp/own.json"
echo 0,16,1000 >>"$tmp/own.csv"
bad_says "cluster: a replay with a changed trace" "the trace is not the one the scenario recorded" replay "$tmp/own.json"
bad_says "cluster: --out the trace itself" "is the trace this run reads" cluster --topo torus:dims=4x4 --trace "$tmp/own.csv" --out "$tmp/own.csv"
bad_says "cluster: a trace from a pipe" "not a regular file" cluster --topo torus:dims=4x4 --trace /dev/stdin
bad "preset: a node count that needs a third tier" collective --preset dgx-h100:nodes=48 --op allreduce --size 1MiB
bad "preset: an unknown key" topo --preset dgx-h100:gpus=4
good "preset: EFA's transport" "transport=efa" topo --preset dgx-h100:nodes=2,transport=efa
bad "preset: an unknown transport" topo --preset dgx-h100:nodes=2,transport=roce
bad "topology: SHARP over EFA" topo --topo clos:down=2x8,up=1x2,node=8,sharp=1,transport=efa
good "preset: a GPU-NIC path" "nic_path=phb" topo --preset dgx-h100:nodes=2,nic_path=phb
# The cloud instances' presets (docs/PROFILES.md): each builds on one node, two and sixteen, carries its
# platform's calibration (tests/validation_table.sh holds it to docs/VALIDATION.md's fitted constants), and
# refuses a key it does not take with one line
for p in aws-p5 aws-p4d gcp-a3-mega gcp-a3-ultra gcp-a4; do
    for n in 1 2 16; do
        good "preset $p:nodes=$n builds, calibrated" "topo=clos:.*,node=8,.*,net_lat=[0-9.]*[mun]s/[0-9.]*[mun]s/[0-9.]*[mun]s,\(net_eff=0\\.[0-9]*,\)\{0,1\}alpha=" topo --preset $p:nodes=$n
    done
    bad_says "preset $p: an unknown key" "preset $p: unknown key 'gpus': a gpu-node preset takes nodes=N" topo --preset $p:nodes=2,gpus=4
done
good "preset aws-p5: EFA's transport and 8 NICs of 400 Gb/s" "topo=clos:down=2x8,up=1x2,bw=400Gbps,.*,rail=8,arch=hopper,transport=efa," topo --preset aws-p5:nodes=2
good "preset aws-p4d: 4 NICs of 100 Gb/s, Simple-only EFA" "topo=clos:down=2x4,up=1x2,bw=100Gbps,.*,nics=4,rail=4,arch=ampere,transport=efa-sendrecv," topo --preset aws-p4d:nodes=2
good "preset gcp-a3-mega: 8 NICs of 200 Gb/s" "topo=clos:down=2x8,up=1x2,bw=200Gbps,.*,rail=8,arch=hopper,net_lat=55.1us/66.4us/217us,alpha=" topo --preset gcp-a3-mega:nodes=2
good "preset aws-p5 at 64 nodes: rails over two leaves each" "topo=clos:down=32x16,up=1x32," topo --preset aws-p5:nodes=64
# a user's net_lat= and net_eff= replace the profile's calibration, each alone; transport= and nic_path= its transport and path
good "preset aws-p5: net_lat= replaces the profile's, net_eff kept" "^# topocc prediction: .*,transport=efa,net_lat=1us/2us/3us,net_eff=0.767," nccl-tests --preset aws-p5:nodes=2,net_lat=1us/2us/3us -b 8 -e 8
good "preset aws-p5: net_eff= replaces the profile's, net_lat kept" "^# topocc prediction: .*,transport=efa,net_lat=29.1us/49.4us/88.2us,net_eff=0.5," nccl-tests --preset aws-p5:nodes=2,net_eff=0.5 -b 8 -e 8
good "preset gcp-a4: transport=, nic_path= and seed= keys" "\"clos:.*,arch=blackwell,transport=efa,nic_path=phb,net_lat=8.25us/4us/33.8us,net_eff=0.704,alpha=1.1us,seed=7\"" nccl-tests --preset gcp-a4:nodes=2,transport=efa,nic_path=phb,seed=7 -b 8 -e 8 --print-scenario
# NCCL's ring graph beside the prediction, as NCCL_DEBUG_SUBSYS=GRAPH prints it (the communicator of all ranks only)
good "nccl-tests: NCCL's ring graph across DGX H100 nodes" '^# NCCL.s ring graph: 8 channels of 48 GB/s (its search; NCCL_DEBUG_SUBSYS=GRAPH prints "nChannels 8, bw 48.000000/48.000000"), 16 channels run' nccl-tests --preset dgx-h100:nodes=2 -b 8 -e 8
good "nccl-tests: NCCL's ring graph on one DGX A100 node" '^# NCCL.s ring graph: 12 channels of 20 GB/s (.*"nChannels 12, bw 20.000000/20.000000"), 24 channels run' nccl-tests --preset dgx-a100 -b 8 -e 8
for a in "--algo ring" "-g 1" "--group node"; do
    "$T" nccl-tests --preset dgx-h100:nodes=2 $a -b 8 -e 8 >"$tmp/out" 2>&1
    ! grep -q "ring graph" "$tmp/out" || { echo "FAIL: nccl-tests $a prints NCCL's ring graph of all ranks"; fails=$((fails + 1)); }
done
# refusals of the scenario alone come with --print-scenario and replay's
# too, with the run's message, not only when the collective runs
C1="--topo $CLOS --size 1MiB --print-scenario"
bad_says "an algorithm that does not fit the operation, printed" "^topocc: algorithm 'bruck' does not fit allreduce on 64 ranks" collective $C1 --op allreduce --algo bruck
bad_says "one of several, named, printed" "^topocc: bruck: algorithm 'bruck' does not fit allreduce" collective $C1 --op allreduce --algo ring,bruck
bad_says "an algorithm that does not fit the ranks, printed" "swing needs a power-of-two rank count" collective $C1 --op allreduce --algo swing --ranks 6
bad_says "a root beyond the ranks, printed" "^topocc: invalid root 70: expected a rank from 0 to 63$" collective $C1 --op broadcast --algo binomial:root=70
bad_says "a group that does not partition the job, printed" "^topocc: group stride=3: the stride 3 does not divide the job's 64 ranks" collective $C1 --op allreduce --group stride=3
bad_says "--flow-bounds with --algo all, printed" "--algo all takes every algorithm" collective $C1 --op alltoall --algo all --mode flow --flow-bounds
bad_says "--flow-bounds with auto, printed" "auto would try every algorithm" collective $C1 --op alltoall --mode flow --flow-bounds
bad_says "a rank on a failed host, printed" "rank 5's endpoint 5 has failed" collective $C1 --op allreduce --fail host:5
bad_says "compare: an algorithm that does not fit, printed" "^topocc: allreduce on A: algorithm 'bruck' does not fit" compare --topo torus:dims=4x4x4 --topo "$CLOS" --op alltoall,allreduce --sizes 1MiB --algo bruck --print-scenario
bad_says "compare: unequal endpoint counts, printed" "equal endpoint counts" compare --topo torus:dims=4x4 --topo "$CLOS" --op allreduce --sizes 1MiB --print-scenario
bad_says "compare: a group that does not partition the job, printed" "^topocc: topology A (torus:dims=3x3,.*): group stride=3: the stride 3 does not divide the job.s 8 ranks" compare --topo torus:dims=3x3 --topo clos:down=3x3,up=1x3 --op allreduce --sizes 1MiB --group stride=3 --ranks 8 --print-scenario
"$T" collective --topo "$CLOS" --size 1MiB --op broadcast --print-scenario >"$tmp/rootless.json" 2>/dev/null
sed 's/"algo": \[[^]]*\]/"algo": ["binomial:root=70"]/' "$tmp/rootless.json" >"$tmp/root70.json"
bad_says "replay --print-scenario of a scenario the run refuses" "invalid root 70" replay "$tmp/root70.json" --print-scenario
bad_says "failures without draws, printed" "needs the failures to draw" failures --topo "$CLOS" --op allreduce --size 1MiB --print-scenario
bad_says "failures with two algorithms, printed" "failures takes one algorithm" failures --topo "$CLOS" --op allreduce --size 1MiB --fail-random links=2,seed=1 --algo ring,rd --print-scenario
bad_says "failures: an algorithm that does not fit, printed" "^topocc: A: algorithm 'bruck' does not fit allreduce" failures --topo "$CLOS" --op allreduce --size 1MiB --fail-random links=2,seed=1 --algo bruck --print-scenario
printf '{"jobs": [{"name": "A", "op": "allreduce", "algo": "swing", "size": "64MiB", "endpoints": "0,4,5"}]}' >"$tmp/swing3.json"
bad_says "concurrent: a job's algorithm that does not fit, printed" "^topocc: jobs\[0\] (A): algorithm 'swing' does not fit allreduce on 3 ranks" concurrent --topo clos:down=4x2,up=1x2 --jobs "$tmp/swing3.json" --print-scenario
# a trace or timeline that is one of the result's files: refused before the run, nothing written
mkdir "$tmp/rf"
bad_says "--trace the --out file" "--trace .*rf/x.json is the --out file too" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/x.json" --out "$tmp/rf/./x.json"
bad_says "--timeline the --out file" "--timeline .*rf/tl.json is the --out file too" train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 8 --tp 8 --timeline "$tmp/rf/tl.json" --out "$tmp/rf/tl.json"
bad_says "--trace the scenario beside a CSV --out" "is the scenario file written beside --out" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/r.scenario.json" --out "$tmp/rf/r.csv"
bad_says "--trace a table of --out-dir" "is in --out-dir .*, whose scenario.json and TABLE.csv files are the result's" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/od/result.csv" --out-dir "$tmp/rf/od/"
bad_says "--trace the scenario of --out-dir" "is in --out-dir" concurrent --topo clos:down=4x2,up=1x1 --jobs "$tmp/jobs2.json" --trace "$tmp/rf/scenario.json" --out-dir "$tmp/rf"
# --out naming a file --out-dir writes: one would hold the other's content
bad_says "--out a table of --out-dir" "--out .*rf/hot_links.csv is in --out-dir .*, whose scenario.json and TABLE.csv" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --out "$tmp/rf/hot_links.csv" --out-dir "$tmp/rf"
# --out in an --out-dir not made yet: the directory is made first
good "--out in a new --out-dir" "time" collective --topo "$CLOS" --op allreduce --size 1MiB --out "$tmp/newod/r.json" --out-dir "$tmp/newod"
[ -s "$tmp/newod/r.json" ] && [ -s "$tmp/newod/scenario.json" ] || { echo "FAIL: --out in a new --out-dir: files missing"; fails=$((fails + 1)); }
bad_says "--out the scenario of a new --out-dir" "is in --out-dir" collective --topo "$CLOS" --op allreduce --size 1MiB --out "$tmp/newod2/./scenario.json" --out-dir "$tmp/newod2//"
[ ! -e "$tmp/newod2" ] || { echo "FAIL: a refused run made its --out-dir"; fails=$((fails + 1)); }
good "nccl-tests --out in a new --out-dir" "Avg bus bandwidth" nccl-tests --preset dgx-h100 -b 8 -e 8 --out "$tmp/newod3/nt.txt" --out-dir "$tmp/newod3"
bad_says "--out the scenario of a new --out-dir, through .." "is in --out-dir" collective --topo "$CLOS" --op allreduce --size 1MiB --out "$tmp/newod7/../newod7/scenario.json" --out-dir "$tmp/newod7"
bad_says "nccl-tests -J: the scenario of a new --out-dir, through .." "is in --out-dir" nccl-tests --preset dgx-h100 -b 1M -e 1M -J "$tmp/newod8/x/../scenario.json" --out-dir "$tmp/newod8"
[ ! -e "$tmp/newod7" ] && [ ! -e "$tmp/newod8" ] || { echo "FAIL: a refused run made its --out-dir"; fails=$((fails + 1)); }
bad_says "--out the scenario of --out-dir" "is in --out-dir" collective --topo "$CLOS" --op allreduce --size 1MiB --out "$tmp/rf/./scenario.json" --out-dir "$tmp/rf"
bad_says "nccl-tests: --out the sizes table of --out-dir" "is in --out-dir" nccl-tests --preset dgx-h100 -b 1M -e 2M --out "$tmp/rf/sizes.csv" --out-dir "$tmp/rf"
[ -z "$(ls "$tmp/rf")" ] || { echo "FAIL (a refused trace wrote a file)"; ls "$tmp/rf"; fails=$((fails + 1)); }
good "--trace beside --out-dir's files" "allreduce" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/od/t.json" --out-dir "$tmp/rf/od" --quiet
[ -s "$tmp/rf/od/t.json" ] && [ -s "$tmp/rf/od/scenario.json" ] || { echo "FAIL (a trace beside --out-dir's files)"; fails=$((fails + 1)); }
# --out-dir makes the directories above it that are missing (as mkdir -p), also when spelt with "."
good "--out-dir with missing parents" "allreduce" collective --topo "$CLOS" --op allreduce --size 1MiB --out-dir "$tmp/mk/a//b/." --quiet
[ -s "$tmp/mk/a/b/scenario.json" ] || { echo "FAIL: --out-dir did not make its parents"; fails=$((fails + 1)); }
good "--trace in an --out-dir with missing parents" "allreduce" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/mk2/c/t.json" --out-dir "$tmp/mk2/c" --quiet
[ -s "$tmp/mk2/c/t.json" ] || { echo "FAIL: --trace in a new nested --out-dir"; fails=$((fails + 1)); }
: >"$tmp/notadir"
bad_says "--out-dir under a file" "cannot create the directory .*notadir/x.*notadir' is not a directory" collective --topo "$CLOS" --op allreduce --size 1MiB --out-dir "$tmp/notadir/x"
# a --trace in an existing directory that cannot be written: refused before the run (not testable
# as root, whom the permission bits do not stop)
if [ "$(id -u)" != 0 ]; then
    mkdir -p "$tmp/rodir" && chmod 555 "$tmp/rodir"
    bad_says "--trace in a read-only directory" "--trace .*rodir/t.json: the directory .*rodir is not writable" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rodir/t.json" --print-scenario
    chmod 755 "$tmp/rodir"
fi
good "report -o with missing parents" "index.html" report "$tmp/mk/a/b/scenario.json" -o "$tmp/mk3/r/s"
# a trace or timeline whose directory does not exist: refused when the
# scenario resolves (--print-scenario, replay, the run), not when the run
# ends and writes it; nothing written, no directory made
bad_says "--trace in a missing directory" "^topocc: --trace .*rf/nodir/t.json: the directory .*rf/nodir does not exist: make it first$" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/nodir/t.json"
bad_says "--trace in a missing directory, printed" "^topocc: --trace .*rf/nodir/t.json: the directory .*rf/nodir does not exist: make it first$" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/nodir/t.json" --print-scenario
bad_says "--trace in a missing directory, concurrent" "^topocc: --trace .*rf/nodir/t.json: the directory .*rf/nodir does not exist" concurrent --topo clos:down=4x2,up=1x1 --jobs "$tmp/jobs2.json" --trace "$tmp/rf/nodir/t.json"
bad_says "--timeline in a missing directory" "^topocc: --timeline .*rf/nodir/tl.json: the directory .*rf/nodir does not exist: make it first$" train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 8 --tp 8 --timeline "$tmp/rf/nodir/tl.json"
bad_says "--timeline in a missing directory, printed" "^topocc: --timeline .*rf/nodir/tl.json: the directory .*rf/nodir does not exist" train --topo "clos:hosts=64,radix=16,tiers=2,node=8" --model llama3-8b --dp 8 --tp 8 --timeline "$tmp/rf/nodir/tl.json" --print-scenario
bad_says "--trace in a file, not a directory" "^topocc: --trace .*rf/od/t.json/x.json: .*rf/od/t.json is not a directory$" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/od/t.json/x.json"
bad_says "--trace ending in /" "^topocc: --trace .*rf/t/: a directory: give a file name$" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/t/"
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rf/t0.json" --print-scenario >"$tmp/rf/nodir.scn" 2>/dev/null
sed "s|$tmp/rf/t0.json|$tmp/rf/nodir/t.json|" "$tmp/rf/nodir.scn" >"$tmp/rf/nodir2.scn"
bad_says "replay of a trace in a missing directory" "^topocc: --trace .*rf/nodir/t.json: the directory .*rf/nodir does not exist" replay "$tmp/rf/nodir2.scn" --print-scenario
bad_says "replay of a trace in a missing directory, run" "^topocc: --trace .*rf/nodir/t.json: the directory .*rf/nodir does not exist" replay "$tmp/rf/nodir2.scn"
[ ! -e "$tmp/rf/nodir" ] && [ ! -e "$tmp/rf/t0.json" ] || { echo "FAIL (a refused trace made its directory)"; fails=$((fails + 1)); }
rm "$tmp/rf/nodir.scn" "$tmp/rf/nodir2.scn"
# in a new --out-dir (made before the run): accepted, written atomically
good "--trace in a new --out-dir" "allreduce" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/newod4/t.json" --out-dir "$tmp/newod4/" --quiet
[ -s "$tmp/newod4/t.json" ] && [ -s "$tmp/newod4/scenario.json" ] || { echo "FAIL (a trace in a new --out-dir)"; fails=$((fails + 1)); }
good "--trace in a new --out-dir, spelt with ./" "allreduce" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/newod6/./t.json" --out-dir "$tmp/newod6" --quiet
[ -s "$tmp/newod6/t.json" ] || { echo "FAIL (a trace in a new --out-dir, spelt with ./)"; fails=$((fails + 1)); }
bad_says "--trace below a new --out-dir" "^topocc: --trace .*newod5/sub/t.json: the directory .*newod5/sub does not exist" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/newod5/sub/t.json" --out-dir "$tmp/newod5"
[ ! -e "$tmp/newod5" ] || { echo "FAIL: a refused run made its --out-dir"; fails=$((fails + 1)); }
# text that is not UTF-8 (the scenario records it as JSON text): refused naming the option
X=$(printf '\377')
bad_says "a trace name not UTF-8" "--trace: the value is not valid UTF-8 text (byte [0-9]* is 0xff)" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/t${X}.json"
[ -e "$tmp/t${X}.json" ] && { echo "FAIL (a trace name not UTF-8 was written)"; fails=$((fails + 1)); }
bad_says "an algorithm not UTF-8" "--algo: the value is not valid UTF-8 text (byte 5 is 0xff)" collective --topo "$CLOS" --op allreduce --size 1MiB --algo "ring${X}"
bad_says "a topology not UTF-8" "--topo: the value is not valid UTF-8 text" collective --topo "${CLOS}${X}" --op allreduce --size 1MiB
bad_says "a topology not UTF-8 (an overlong form)" "--topo: the value is not valid UTF-8 text (byte 15 is 0xc0)" topo "torus:dims=4x4$(printf '\300\200')"
bad_says "names not UTF-8" "--names: the value is not valid UTF-8 text" compare --topo "$CLOS" --topo torus:dims=8x8 --names "a${X},b" --op allreduce --sizes 1KiB:4KiB
bad_says "preset: an unknown GPU-NIC path" "nic_path='pcie': accepted are pix, pxb, pxn, phb and sys" topo --preset dgx-h100:nodes=2,nic_path=pcie
bad_says "nccl-tests: one rank" "nccl-tests on one rank: NCCL then copies the buffer within the GPU" nccl-tests --preset dgx-h100 -g 1 -b 16 -e 1M -f 256
bad_says "topology: an unknown GPU-NIC path" "nic_path='pcie': accepted are pix, pxb, pxn, phb, sys" topo --topo clos:down=2x8,up=1x2,node=8,nic_path=pcie
# a GPU-NIC path through the CPU turns LL128 off between nodes, over sub-groups (their view topology) and a
# multidc's pods too (LL128 with the default path)
good "GPU-NIC path reaches NCCL over groups" "^algorithm     nccl:Ring,LL,4ch" collective --preset dgx-h100:nodes=4,nic_path=phb --group stride=8 --algo nccl --op allreduce --size 2MiB
good "GPU-NIC path reaches a multidc's pods" "^algorithm    nccl:Ring,LL,8ch" collective --topo "multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=100Gbps,wan_lat=1us,node=2,arch=hopper,nic_path=phb" --op allreduce --algo nccl --size 1MiB
# EFA's step latency reaches NCCL over sub-groups (their view topology) and a multidc's pods: slower than on
# InfiniBand (123.9us and 426.7us)
good "EFA reaches NCCL over groups" "^time          177.9us" collective --preset dgx-h100:nodes=4,transport=efa --group stride=8 --algo nccl-ring --op allreduce --size 1MiB
good "EFA reaches a multidc's pods" "^time         561.7us" collective --topo "multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=100Gbps,wan_lat=1us,node=2,transport=efa" --op allreduce --algo nccl-ring --size 1MiB
bad "preset: an NVL72 fabric past two tiers of its switches" topo --preset gb200-nvl72:nodes=17
bad "preset: a profile with a missing field" topo --preset bad-missing --profiles "$(dirname "$0")/data/profiles"
bad_says "preset: a profile's GPU architecture not one of the spec's" "accepted are volta, ampere, hopper, blackwell" topo --preset bad-arch --profiles "$(dirname "$0")/data/profiles"
bad "preset: --profiles without a preset" topo --topo "$CLOS" --profiles /tmp
"$T" collective --preset dgx-h100:nodes=2 --op allreduce --algo ring --size 1GiB --format json >"$tmp/pre.json" 2>"$tmp/err"
"$T" replay "$tmp/pre.json" --format json >"$tmp/pre2.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/pre.json" "$tmp/pre2.json" || ! grep -q '"dgx-h100"' "$tmp/pre.json" || [ -s "$tmp/err" ]; then
    echo "FAIL: a preset's result does not replay to itself with its profile embedded"
    fails=$((fails + 1))
fi
"$T" collective --preset dgx-h100:nodes=2 --op allreduce --size 1GiB --preset dgx-a100 >"$tmp/out" 2>"$tmp/err"
grep -q "takes one topology" "$tmp/err" || { echo "FAIL: two presets for collective not refused"; fails=$((fails + 1)); }
# --topo and --preset keep the command line's order, which --names follows
good "preset before --topo: --names in the command line's order" "^  dgx        clos:down=2x8,up=1x2,.*rail=8" compare --preset dgx-h100:nodes=2 --topo clos:down=4x4,up=1x4 --names dgx,clos --op alltoall --sizes 64MiB:64MiB
grep -q "^  clos       clos:down=4x4,up=1x4," "$tmp/out" && grep -q "alltoall: dgx fastest" "$tmp/out" ||
    { echo "FAIL: compare --preset then --topo: the names or the conclusion on the wrong topology"; fails=$((fails + 1)); }
good "--topo, --preset, --topo, --preset interleaved keep their order" '"topo": \["clos:down=4x4,up=1x4,[^"]*", "clos:down=2x8,up=1x2,[^"]*", "torus:dims=4x4,[^"]*", "clos:down=4x8,up=1x4,' compare --topo clos:down=4x4,up=1x4 --preset dgx-h100:nodes=2 --topo torus:dims=4x4 --preset dgx-h100:nodes=4 --op alltoall --sizes 64MiB --ranks 16 --print-scenario
# A saved preset's topology records its preset (network.topo_preset): --profiles reads a changed profile
# again, --preset replaces the file's topologies, and the result replays to itself without flags
mkdir -p "$tmp/pd2"
sed 's/"name": "dgx-h100"/"name": "myh"/; s/"value": 400,/"value": 200,/' "$(dirname "$0")/../profiles/dgx-h100.json" >"$tmp/pd2/myh.json"
"$T" collective --preset myh:nodes=4 --profiles "$tmp/pd2" --op allreduce --size 64MiB --format json --out "$tmp/r_myh.json" >/dev/null 2>"$tmp/err" ||
    { echo "FAIL: a preset from --profiles"; cat "$tmp/err"; fails=$((fails + 1)); }
good "a preset's topology records its preset" '"topo_preset": \["myh:nodes=4"\]' collective --scenario "$tmp/r_myh.json" --print-scenario
sed -i 's/"value": 200,/"value": 100,/' "$tmp/pd2/myh.json"
good "--profiles with --scenario reads a changed profile again" "^time         1.339ms" collective --scenario "$tmp/r_myh.json" --profiles "$tmp/pd2"
good "--scenario alone keeps the embedded profile" "^time         835.6us" collective --scenario "$tmp/r_myh.json"
good "--preset with --scenario replaces the file's topology" "^time         1.339ms" collective --scenario "$tmp/r_myh.json" --preset myh:nodes=4
good "--preset with --scenario: another preset" "topo=clos:down=2x8,up=1x2,bw=400Gbps,.*topo_preset=dgx-h200:nodes=2 " collective --scenario "$tmp/r_myh.json" --preset dgx-h200:nodes=2
good "--preset with --scenario: the new preset's profile embedded" '^      "dgx-h200": {' collective --scenario "$tmp/r_myh.json" --preset dgx-h200:nodes=2 --print-scenario
grep -q '"myh"' "$tmp/out" && { echo "FAIL: --preset with --scenario kept the replaced preset's profile"; fails=$((fails + 1)); }
"$T" replay "$tmp/r_myh.json" --format json >"$tmp/r_myh2.json" 2>"$tmp/err"
cmp -s "$tmp/r_myh.json" "$tmp/r_myh2.json" ||
    { echo "FAIL: a preset's result with a changed profile file does not replay to itself"; fails=$((fails + 1)); }
rm -rf "$tmp/pd2"
good "--profiles: a profile found in no directory stays the scenario's" "^time         835.6us" collective --scenario "$tmp/r_myh.json" --profiles "$tmp"
"$T" compare --topo clos:down=4x4,up=1x4 --preset dgx-h100:nodes=2 --topo torus:dims=4x4 --op allreduce --sizes 1MiB --ranks 16 --format json --out "$tmp/cp.json" >/dev/null 2>&1
good "compare: --preset with --scenario replaces the file's topologies and their names" "^  A          clos:down=2x8,up=1x2,bw=400Gbps,.*rail=8,arch=hopper," compare --scenario "$tmp/cp.json" --preset dgx-h200:nodes=2
good "compare: --topo with --scenario replaces the file's topologies" '"names": \["A", "B"\]' compare --scenario "$tmp/cp.json" --topo clos:down=4x4,up=1x4 --topo torus:dims=4x4 --print-scenario
grep -q '"topo_preset"' "$tmp/out" && { echo "FAIL: --topo with --scenario kept the file's presets"; fails=$((fails + 1)); }
grep -q '"profiles"' "$tmp/out" && { echo "FAIL: --topo with --scenario kept the replaced presets' profiles"; fails=$((fails + 1)); }
good "compare: --names with --scenario and --preset" "^  h200       clos:down=2x8" compare --scenario "$tmp/cp.json" --names h200,torus --preset dgx-h200:nodes=2 --topo torus:dims=4x4
"$T" replay "$tmp/cp.json" --format json >"$tmp/cp2.json" 2>"$tmp/err"
cmp -s "$tmp/cp.json" "$tmp/cp2.json" ||
    { echo "FAIL: compare with a preset among topologies does not replay to itself"; fails=$((fails + 1)); }
sed 's/"topo_preset": \[null, "dgx-h100:nodes=2", null\]/"topo_preset": ["dgx-h100:nodes=2"]/' "$tmp/cp.json" >"$tmp/cp3.json"
bad_says "network.topo_preset not one per topology" "network.topo_preset: 1 entries for the 3 topologies of network.topo" compare --scenario "$tmp/cp3.json"

# nccl-tests in and out (docs/NCCL_TESTS.md)
good "nccl-tests: its columns" "#       size         count      type   redop    root     time   algbw   busbw #wrong" nccl-tests --preset dgx-h100:nodes=2 -b 8 -e 1M -f 4
good "nccl-tests: the average line" "^# Avg bus bandwidth    : " nccl-tests --preset dgx-h100 -b 1M -e 1G -f 8 -d bfloat16
good "nccl-tests: a row as nccl-tests prints it" "^     1048576        262144     float     sum      -1 " nccl-tests --preset dgx-h100 -b 1M -e 1M -n 20 -w 5 -c 1
good "nccl-tests: all-gather counts per rank" "^     1048576         32768     float    none      -1 " nccl-tests --preset dgx-h100 --op allgather -b 1M -e 1M
good "nccl-tests: all-to-all runs NCCL's grouped send/recv" "^     1048576         16384     float    none      -1 " nccl-tests --preset dgx-h100:nodes=2 --op alltoall -b 1M -e 1M
good "collective: nccl on all-to-all is nccl-a2a" "nccl:AllToAll,Simple" collective --topo "$CLOS" --op alltoall --algo nccl --size 64MiB
good "collective: nccl-pat with one GPU per node" "nccl-pat:Simple" collective --topo "$CLOS" --op allgather --algo nccl-pat --size 1MiB
bad "nccl-pat on nodes of 8 GPUs" collective --topo "clos:down=8x8,up=1x8,node=8" --op allgather --algo nccl-pat --size 1MiB
good "nccl-tests: compare keeps -g in the header" "# nThread 1 nGpus 4 " nccl-tests --preset dgx-h100:nodes=2 -g 4 --compare "$(dirname "$0")/data/nccl-tests/nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt"
good "nccl-tests: compare, by size band" "^# median |error| >= 256 MiB" nccl-tests --preset dgx-h100:nodes=2 --algo nccl-ring:channels=24 --compare "$(dirname "$0")/data/nccl-tests/nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt"
good "nccl-tests: -g 4 of 8 GPUs with MPI's ring" "16 ranks" nccl-tests --preset dgx-h100:nodes=4 -g 4 -b 1M -e 1M --algo ring
good "nccl: the choice is reported" "nccl:Ring,LL,1ch" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
good "nccl-tests: -t threads of -g GPUs, ranks = threads x GPUs a node" "^# nThread 2 nGpus 4 " nccl-tests --preset dgx-h100:nodes=2 -t 2 -g 4 -b 1M -e 1M
good "nccl-tests: -t 2 -g 4 is all 8 GPUs of each node" "16 ranks" nccl-tests --preset dgx-h100:nodes=2 -t 2 -g 4 -b 1M -e 1M
bad_says "nccl-tests: -t x -g beyond the node" "12 GPUs a node (--np / nodes x -t x -g): the nodes have 8" nccl-tests --preset dgx-h100:nodes=2 -t 3 -g 4 -b 1M -e 1M
good "nccl-tests: --np 16 -g 1 on two 8-GPU nodes, as mpirun -np 16" "16 ranks" nccl-tests --preset dgx-h100:nodes=2 --np 16 -g 1 -b 1M -e 1M
good "nccl-tests: -np 12 -g 1 on two nodes: 6 GPUs a node" "NCCL's communicator of the 6 GPUs used on each node" nccl-tests --preset dgx-h100:nodes=2 -np 12 -g 1 -b 1M -e 1M
bad_says "nccl-tests: --np that does not spread evenly" "do not spread evenly over the 2 nodes" nccl-tests --preset dgx-h100:nodes=2 --np 3 -b 1M -e 1M
good "nccl-tests: -r is ignored where nccl-tests ignores it (all-reduce)" "^     1048576        262144     float     sum      -1 " nccl-tests --preset dgx-h100 -r 0 -b 1M -e 1M
# -r and -g are refused in their own terms, not in the algorithm's or the group's they become
bad_says "nccl-tests: a negative -r" "^topocc: invalid -r '-1': expected the root rank of broadcast, a whole number from 0$" nccl-tests --preset dgx-h100:nodes=2 -r -1 --op broadcast -b 1M -e 1M
bad_says "nccl-tests: -r beyond the ranks" "^topocc: invalid -r 16: the root of reduce is a rank of the communicator, 0 to 15 (16 ranks)$" nccl-tests --preset dgx-h100:nodes=2 -r 16 --op reduce -b 1M -e 1M
bad_says "nccl-tests: -r beyond a group's ranks" "invalid -r 9: the root of broadcast is a rank of the communicator, 0 to 7 (8 ranks, one group's)" nccl-tests --preset dgx-h100:nodes=2 -r 9 --op broadcast -b 1M -e 1M --group node
good "nccl-tests: -r the last rank" "^     1048576        262144     float    none      15 " nccl-tests --preset dgx-h100:nodes=2 -r 15 --op broadcast -b 1M -e 1M
bad_says "nccl-tests: -g below the node on a multidc of two pods" "^topocc: -g 1: NCCL's communicator of 1 GPU of each 8-GPU node spans the 2 pods of the multidc topology" nccl-tests --topo multidc:pods=2,pod=clos,down=2x8,up=1x2,node=8,wan_bw=100Gbps,wan_lat=1ms -g 1 -b 1M -e 1M
good "nccl-tests: -g below the node on a multidc with an MPI algorithm" "^# Avg bus bandwidth" nccl-tests --topo multidc:pods=2,pod=clos,down=2x8,up=1x2,node=8,wan_bw=100Gbps,wan_lat=1ms -g 1 --algo ring -b 1M -e 1M
good "nccl-tests: --op sum is nccl-tests' long -o" "^     1048576        262144     float     max      -1 " nccl-tests --preset dgx-h100 --op allreduce --op max -b 1M -e 1M
good "nccl-tests: v2.13.10's measuring options are accepted" "^# Avg bus bandwidth" nccl-tests --preset dgx-h100 -b 1M -e 1M -N 1 -y 0 -T 10 -C 0 -R 1 --iters 5 --warmup_iters 2 --check 0 --cudagraph 0 --average 1
bad_says "nccl-tree on part of a node names itself" "(nccl-tree needs whole nodes: p a multiple of the node size 8)" collective --preset dgx-h100:nodes=2 --op allreduce --size 1MiB --algo nccl-tree --ranks 12
bad_says "nccl on part of a node names itself" "(nccl needs whole nodes: p a multiple of the node size 8)" collective --preset dgx-h100:nodes=2 --op allreduce --size 1MiB --algo nccl --ranks 12
bad_says "nccl-tests: --algo all" "nccl-tests times one algorithm" nccl-tests --preset dgx-h100 -b 1M -e 1M --algo all
bad_says "nccl-tests: an algorithm list" "nccl-tests times one algorithm" nccl-tests --preset dgx-h100 -b 1M -e 1M --algo ring,nccl
NTH='#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong'
printf '%s\n 99999999999999999999 262144 float sum -1 71.93 14.58 27.33 0 71.47 14.67 27.51 0\n' "$NTH" >"$tmp/nt_big.txt"
printf '%s\n 1048576 262144 float sum -1 71.93 14.58 1e308 0 71.47 14.67 27.51 0\n' "$NTH" >"$tmp/nt_inf.txt"
printf '%s\n 1000003 250000 float sum -1 71.93 14.58 27.33 0 71.47 14.67 27.51 0\n 1048576 262144 float sum -1 71.93 14.58 27.33 0 71.47 14.67 27.51 0\n' "$NTH" >"$tmp/nt_odd.txt"
bad_says "nccl-tests --compare: a size beyond 2^60" "line 2: size 99999999999999999999 is not one nccl-tests prints" nccl-tests --preset dgx-h100 --compare "$tmp/nt_big.txt"
bad_says "nccl-tests --compare: a bus bandwidth beyond 10^6 GB/s" "line 2: bandwidth 1e308 is not one" nccl-tests --preset dgx-h100 --compare "$tmp/nt_inf.txt"
good "nccl-tests --compare: a size no prediction equals is named" "^# not compared: line 2, size 1000003 B" nccl-tests --preset dgx-h100 --compare "$tmp/nt_odd.txt"
good "nccl-tests --compare: rows the -b/-e/-f sweep steps over are counted as such" "^# not compared: 14 rows of the file between the sizes predicted, which the sweep" nccl-tests --topo clos:down=2,up=1,bw=400Gbps,arch=hopper --op allgather -b 1K -e 2G -f 8 --compare "$(dirname "$0")/data/nccl-tests/gcp_a3ultra_2node_1gpu_H200_roce_allgather.txt"

# --fit recovers the constants a run was made with: a prediction with
# net_lat=30us/40us/50us and net_eff=0.7 fitted from the transport's own
# values (InfiniBand's table, the whole line rate)
"$T" nccl-tests --preset dgx-h100:nodes=2,net_lat=30us/40us/50us,net_eff=0.7 -b 8 -e 1G -f 2 >"$tmp/nt_syn.txt" 2>&1
"$T" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_syn.txt" --fit >"$tmp/nt_fit.txt" 2>&1 ||
    { echo "FAIL: nccl-tests --fit on a prediction"; cat "$tmp/nt_fit.txt"; fails=$((fails + 1)); }
fitl=$(sed -n 's/^# fit to [^:]*: net_lat=\([0-9.]*\)us\/\([0-9.]*\)us\/\([0-9.]*\)us,net_eff=\([0-9.]*\) .* \([0-9.]*\) fitted)$/\1 \2 \3 \4 \5/p' "$tmp/nt_fit.txt")
echo "$fitl" | awk '{ ok = NF == 5 && $1 > 28.5 && $1 < 31.5 && $2 > 38 && $2 < 42 && $3 > 47.5 && $3 < 52.5 &&
                           $4 > 0.68 && $4 < 0.72 && $5 < 0.01; exit !ok }' ||
    { echo "FAIL: nccl-tests --fit found '$fitl' (LL LL128 Simple eff objective), made with 30 40 50 0.7"; sed -n '1,3p' "$tmp/nt_fit.txt"; fails=$((fails + 1)); }
grep -q "^# topocc prediction: .*,net_lat=[0-9.]*us/[0-9.]*us/[0-9.]*us,net_eff=" "$tmp/nt_fit.txt" ||
    { echo "FAIL: nccl-tests --fit does not predict with what it fitted"; fails=$((fails + 1)); }
# a file's name of 1,800 bytes: the lines whole, each ended (nccl-tests'
# text after them, not on the last)
d200=$(printf '%0200d' 0)
longd="$tmp/$d200/$d200/$d200/$d200/$d200/$d200/$d200/$d200/$d200"
mkdir -p "$longd" && cp "$tmp/nt_syn.txt" "$longd/nt_syn.txt"
good "nccl-tests --fit: a long file name keeps the lines whole" "^# fit: the constants are the file's; .*\"Calibrating a transport\")$" nccl-tests --preset dgx-h100:nodes=2 --compare "$longd/nt_syn.txt" --fit
# every parameter determined: the first line and the last, no line between
sed -n '2p' "$tmp/nt_fit.txt" | grep -q "^# fit: the constants are the file's; another run" ||
    { echo "FAIL: nccl-tests --fit without a flat parameter lacks its last '# fit:' line"; sed -n '1,3p' "$tmp/nt_fit.txt"; fails=$((fails + 1)); }
# a broadcast's too: NCCL's choice for its chain does not see net_lat=,
# so the objective has no jump where the fit crosses a protocol's switch
"$T" nccl-tests --preset dgx-h100:nodes=2,net_lat=30us,net_eff=0.5 --op broadcast -b 8 -e 1G -f 8 >"$tmp/nt_bc.txt" 2>&1
fitb=$("$T" nccl-tests --preset dgx-h100:nodes=2 --op broadcast --compare "$tmp/nt_bc.txt" --fit 2>&1 |
    sed -n 's/^# fit to [^:]*: net_lat=\([0-9.]*\)us\/[0-9.]*us\/[0-9.]*us,net_eff=\([0-9.]*\) .* \([0-9.]*\) fitted)$/\1 \2 \3/p')
echo "$fitb" | awk '{ ok = NF == 3 && $1 > 28.5 && $1 < 31.5 && $2 > 0.48 && $2 < 0.52 && $3 < 0.01; exit !ok }' ||
    { echo "FAIL: nccl-tests --fit on a broadcast found '$fitb' (LL eff objective), made with 30 us and 0.5"; fails=$((fails + 1)); }
# a run on Simple alone says nothing of LL's and LL128's steps
"$T" nccl-tests --preset dgx-h100:nodes=2,net_lat=60us --algo nccl:proto=Simple -b 1M -e 64M -f 8 >"$tmp/nt_syn2.txt" 2>&1
good "nccl-tests --fit: protocols the runs do not use are named" "^# fit: not determined by the file .*: LL, LL128$" nccl-tests --preset dgx-h100:nodes=2 --algo nccl:proto=Simple --compare "$tmp/nt_syn2.txt" --fit
# it starts from the transport's own values, as its lines say, whatever
# net_lat= and net_eff= the spec already has: InfiniBand's LL and LL128 kept
good "nccl-tests --fit: from the transport's own values, not the spec's keys" "^# fit to [^:]*: net_lat=2.7us/4us/[0-9.]*us,net_eff=" nccl-tests --preset dgx-h100:nodes=2,net_lat=500us,net_eff=0.2 --algo nccl:proto=Simple --compare "$tmp/nt_syn2.txt" --fit
bad_says "nccl-tests --fit: -b/-e outside the file's sizes" "no row of .* has a bus bandwidth at a size the run predicts" nccl-tests --preset dgx-h100:nodes=2 -b 2G -e 2G --compare "$tmp/nt_syn.txt" --fit
bad_says "nccl-tests --fit without --compare" "--fit needs --compare FILE" nccl-tests --preset dgx-h100:nodes=2 -b 8 -e 8 --fit
bad_says "nccl-tests --fit in steps mode" "--fit runs in formula mode" nccl-tests --preset dgx-h100:nodes=2 --mode steps --compare "$tmp/nt_syn.txt" --fit
bad_says "nccl-tests --fit twice" "option --fit given twice" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_syn.txt" --fit --fit
bad_says "nccl-tests --fit on a torus" "--fit calibrates a Clos's NICs" nccl-tests --topo torus:dims=4x4 --algo ring -b 8 -e 8 --compare "$tmp/nt_odd.txt" --fit
bad_says "net_lat= with an empty time names the whole value" "^topocc: clos key 'net_lat': '1us//2us': invalid time ''" topo clos:down=4,up=2,net_lat=1us//2us
bad_says "net_lat= with a trailing slash names the whole value" "^topocc: clos key 'net_lat': '1us/2us/': invalid time ''" topo clos:down=4,up=2,net_lat=1us/2us/
bad_says "a preset's net_eff out of range" "expected a fraction above 0 and at most 1" nccl-tests --preset dgx-h100:nodes=2,net_eff=2 -b 8 -e 8
# net_eff= is a decimal number as bw='s figures are: no leading space, no hex
bad_says "net_eff with a space" "'net_eff': ' 0.5'" topo --topo "clos:down=4,up=1,net_eff= 0.5"
bad_says "net_eff in hex" "'net_eff': '0x1p-1'" topo --topo "clos:down=4,up=1,net_eff=0x1p-1"
# four values from four rows: said to be undetermined
"$T" nccl-tests --preset dgx-h100:nodes=2 -b 1M -e 4M >"$tmp/nt_few.txt" 2>&1
good "nccl-tests --fit on few rows says so" "^# fit: only 4 rows for 4 values: .*the constants are not determined" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_few.txt" --fit
# on a sendrecv run --fit finds the rate of one point-to-point channel:
# p2p_bw= on one node, p2p_net_bw= across nodes, as the runs were made
"$T" nccl-tests --preset dgx-h100:p2p_bw=17GB/s --op sendrecv -b 1M -e 1G -f 2 >"$tmp/nt_sr1.txt" 2>&1
good "nccl-tests --fit on a one-node sendrecv finds p2p_bw" "^# fit to [^:]*: p2p_bw=17GB/s (the rate of one point-to-point channel inside a node; .* 0.000 fitted)$" nccl-tests --preset dgx-h100 --op sendrecv --compare "$tmp/nt_sr1.txt" --fit
good "nccl-tests --fit predicts with the p2p_bw it found" "^# topocc prediction: .*,p2p_bw=17GB/s," nccl-tests --preset dgx-h100:p2p_bw=90GB/s --op sendrecv --compare "$tmp/nt_sr1.txt" --fit
"$T" nccl-tests --preset dgx-h100:nodes=2,p2p_net_bw=12GB/s --op sendrecv -b 1M -e 1G -f 2 >"$tmp/nt_sr2.txt" 2>&1
good "nccl-tests --fit on a two-node sendrecv finds p2p_net_bw" "^# fit to [^:]*: p2p_net_bw=12GB/s (the rate of one point-to-point channel across nodes; .* 0.000 fitted)$" nccl-tests --preset dgx-h100:nodes=2 --op sendrecv --compare "$tmp/nt_sr2.txt" --fit
"$T" nccl-tests --preset dgx-h100 --op sendrecv -b 1M -e 1G -f 2 >"$tmp/nt_sr0.txt" 2>&1
good "nccl-tests --fit: no channel rate where none fits better" "^# fit to [^:]*: no p2p_bw= (no rate of one point-to-point channel inside a node fits" nccl-tests --preset dgx-h100 --op sendrecv --compare "$tmp/nt_sr0.txt" --fit
"$T" nccl-tests --preset dgx-h100:p2p_bw=17GB/s --op sendrecv -b 32M -e 64M -f 2 >"$tmp/nt_sr3.txt" 2>&1
good "nccl-tests --fit on two sendrecv rows says so" "^# fit: only 2 rows for 1 value: the constant is not determined" nccl-tests --preset dgx-h100 --op sendrecv --compare "$tmp/nt_sr3.txt" --fit
bad_says "p2p_bw= without node=" "p2p_bw= (a point-to-point channel's rate inside a scale-up node) needs node=G" topo "clos:down=4,up=1,p2p_bw=20GB/s"
bad_says "p2p_net_bw= not a rate" "clos key 'p2p_net_bw': invalid rate 'fast'" topo "clos:down=4,up=1,p2p_net_bw=fast"
# the file's largest size, cut below itself, is a size the file asked for, not one outside the prediction
printf '%s\n 1048576 262144 float sum -1 71.93 14.58 27.33 0 71.47 14.67 27.51 0\n 2097155 524288 float sum -1 76.24 27.51 51.58 0 76.62 27.37 51.32 0\n' "$NTH" >"$tmp/nt_oddtop.txt"
good "nccl-tests --compare: the largest size cut below itself is named" "^# not compared: line 3, size 2097155 B" nccl-tests --preset dgx-h100 --compare "$tmp/nt_oddtop.txt"
# two cycles (nccl-tests -N 2): each row is compared with its own measurement
printf '%s\n 1048576 262144 float sum -1 10.49 99.96 100.00 0 10.49 99.96 100.00 0\n 2097152 524288 float sum -1 20.97 100.01 110.00 0 20.97 100.01 110.00 0\n 1048576 262144 float sum -1 10.49 99.96 50.00 0 10.49 99.96 50.00 0\n 2097152 524288 float sum -1 20.97 100.01 55.00 0 20.97 100.01 55.00 0\n' "$NTH" >"$tmp/nt_cycles.txt"
for a in "" "-b 1M -e 2M"; do
    # shellcheck disable=SC2086
    good "nccl-tests --compare: two cycles, each measured row compared ($a)" "over 4 rows (2 sizes)" nccl-tests --preset dgx-h100 $a --compare "$tmp/nt_cycles.txt"
    grep '^ *1048576 ' "$tmp/out" | tail -2 | awk '{print $3}' | tr '\n' ' ' | grep -q '^100.00 50.00 $' ||
        { echo "FAIL: nccl-tests --compare ($a): the second cycle's row is not compared with its own measurement"; fails=$((fails + 1)); }
    [ "$(awk '$1 == 2097152 && NF == 4' "$tmp/out" | wc -l)" -eq 2 ] ||
        { echo "FAIL: nccl-tests --compare ($a): not one compare row per measured row"; fails=$((fails + 1)); }
done
bad "nccl-tests: an unknown option" nccl-tests --preset dgx-h100 -q 3
good "nccl-tests: v2.19's output options accepted and ignored" "^# Avg bus bandwidth" nccl-tests --preset dgx-h100 -b 1M -e 1M -S 1 -I 1 -K 2 -M 1 -u 0 -x 1 --unalign 0
bad_says "nccl-tests: -D needs NCCL 2.28" "^topocc: -D: nccl-tests takes it from NCCL 2.28 on (NCCL's device API) and refuses it below; topocc models NCCL 2.21.5$" nccl-tests --preset dgx-h100 -b 1M -e 1M -D 1
good "nccl-tests -J: the text as without it" "^# Avg bus bandwidth" nccl-tests --preset dgx-h100:nodes=2 --op allgather -b 1M -e 1G -f 32 -J "$tmp/pred.json"
grep -q '"version": 3' "$tmp/pred.json" && grep -q '"all_gather_perf"' "$tmp/pred.json" && grep -q '"nccl_version": 22105' "$tmp/pred.json" ||
    { echo "FAIL: nccl-tests -J: the report lacks its version, test program or NCCL version"; fails=$((fails + 1)); }
good "nccl-tests -J: its own report compares at 0%" "^# median |error| 1 MiB .. 256 MiB : 0.0% over 2 sizes$" nccl-tests --preset dgx-h100:nodes=2 --op allgather --compare "$tmp/pred.json"
good "nccl-tests -J: the report read back names its test" "^# the file: all_gather_perf, nccl-tests' JSON report (format version 3), NCCL 2.21.5 (the version topocc models)$" nccl-tests --preset dgx-h100:nodes=2 --op allgather --compare "$tmp/pred.json"
bad_says "nccl-tests -J: read back for another operation" "holds the output of all_gather_perf (its args), the prediction is of all_reduce_perf: give --op allgather$" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/pred.json"
bad_says "nccl-tests -J: read back on other ranks" "lists 16 ranks (its devices x threads x GPUs)" nccl-tests --preset dgx-h100:nodes=4 --op allgather --compare "$tmp/pred.json"
good "nccl-tests -J with -g 4" "^# Avg bus bandwidth" nccl-tests --preset dgx-h100:nodes=2 -g 4 -b 1G -e 1G -J "$tmp/pred_g4.json"
good "nccl-tests -J with -g 4 read back: processes x GPUs are the ranks" "^# median |error| >= 256 MiB       : 0.0% over 1 size$" nccl-tests --preset dgx-h100:nodes=2 -g 4 --compare "$tmp/pred_g4.json"
bad_says "nccl-tests -J: another suffix" "^topocc: -J .*pred.txt: nccl-tests writes its JSON report only to a FILE.json" nccl-tests --preset dgx-h100 -b 1M -e 1M -J "$tmp/pred.txt"
bad_says "nccl-tests -J: the --out file" "is the --out file too" nccl-tests --preset dgx-h100 -b 1M -e 1M -J "$tmp/same.json" --out "$tmp/same.json"
bad_says "nccl-tests -J: the --compare file" "is the --compare file, which the prediction reads" nccl-tests --preset dgx-h100:nodes=2 --op allgather -J "$tmp/pred.json" --compare "$tmp/pred.json"
bad_says "nccl-tests -J: a file of --out-dir" "is in --out-dir" nccl-tests --preset dgx-h100 -b 1M -e 1M -J "$tmp/od/scenario.json" --out-dir "$tmp/od"
bad_says "nccl-tests -J: an unwritable place" "^topocc: " nccl-tests --preset dgx-h100 -b 1M -e 1M -J /nonexistent/dir/pred.json
bad_says "nccl-tests -J with --print-scenario" "^topocc: -J writes the prediction's report; --print-scenario runs no prediction: drop one$" nccl-tests --preset dgx-h100 -b 1M -e 1M -J "$tmp/ps.json" --print-scenario
bad_says "nccl-tests -J: another suffix with --print-scenario" "writes its JSON report only to a FILE.json" nccl-tests --preset dgx-h100 -b 1M -e 1M -J "$tmp/ps.txt" --print-scenario
bad_says "nccl-tests -J: unwritable, with --out-dir, refused before the run" "^topocc: " nccl-tests --preset dgx-h100 -b 1M -e 1M --out-dir "$tmp/odj" --out "$tmp/odj.txt" -J /nonexistent/dir/pred.json
[ ! -e "$tmp/odj.txt" ] && [ ! -e "$tmp/odj/scenario.json" ] || { echo "FAIL: nccl-tests -J unwritable with --out-dir: files written before the refusal"; fails=$((fails + 1)); }
good "nccl-tests -J: an argument not ASCII is cut as nccl-tests cuts it" "^# Avg bus bandwidth" nccl-tests --preset dgx-h100 -b 1M -e 1M -n "$(printf 'a\377b')" -J "$tmp/nonascii.json"
grep -q '"-n", "a"' "$tmp/nonascii.json" && grep -q '"parallel_init": "false"' "$tmp/nonascii.json" ||
    { echo "FAIL: nccl-tests -J: a non-ASCII argument not cut, or booleans not written as nccl-tests writes them"; fails=$((fails + 1)); }
bad_says "nccl-tests: a repeated option" "option -d given twice" nccl-tests --preset dgx-h100 -b 1M -e 1M -d float -d half
bad_says "nccl-tests: an option repeated by its long name" "option --datatype given twice" nccl-tests --preset dgx-h100 -b 1M -e 1M -d float --datatype half
good "nccl-tests: an ignored option may repeat" "^# Avg bus bandwidth" nccl-tests --preset dgx-h100 -b 1M -e 1M -n 20 -n 5
bad "nccl-tests: no cluster" nccl-tests -b 8 -e 1M
bad "nccl-tests: an unknown type" nccl-tests --preset dgx-h100 -d float17
bad "nccl-tests: MAX below MIN" nccl-tests --preset dgx-h100 -b 1M -e 8
bad "nccl-tests: MAX below the default MIN" nccl-tests --preset dgx-h100 -e 8
# nccl-tests' broadcast and reduce run NCCL's ring chains: on 4 DGX H100 the
# NICs' 400 GB/s bound them (one ring in rank order left a node by one NIC:
# 72 GB/s)
good "nccl-tests: broadcast by NCCL's ring" "^  8589934592    2147483648     float    none       0    22192  387.07  387.07" nccl-tests --preset dgx-h100:nodes=4 --op broadcast -b 8G -e 8G
good "nccl-tests: reduce by NCCL's ring" "^  8589934592    2147483648     float     sum       0 " nccl-tests --preset dgx-h100:nodes=4 --op reduce -b 8G -e 8G
good "nccl: broadcast is NCCL's ring, LL at 8 B" "nccl:Ring,LL,1ch" collective --preset dgx-h100:nodes=2 --op broadcast --algo nccl --size 8
good "nccl-tests: nccl-tests' integer types" "^     1048576        262144     int32     sum" nccl-tests --preset dgx-h100 -d int32 -b 1M -e 1M
good "nccl-tests: uint8" "^     1048576       1048576     uint8     sum" nccl-tests --preset dgx-h100 -d uint8 -b 1M -e 1M
bad "nccl-tests: a type nccl-tests lacks" nccl-tests --preset dgx-h100 -d int16 -b 1M -e 1M
good "nccl-tests: -o max is printed" "^  1073741824     268435456     float     max" nccl-tests --preset dgx-h100 -o max -b 1G -e 1G
good "nccl-tests: -o max on float has no NVLS kernel (the ring)" "nccl:Ring,Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB --redop max
good "nccl-tests: -o max on int32 takes NVLS" "nccl:NVLS,Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB --redop max --dtype int32
good "nccl-tests: -o avg on bf16 has no NVLS kernel (PreMulSum)" "nccl:Ring,Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB --redop avg --dtype bf16
good "nccl-tests: -o with all-gather prints none" "^  1073741824      33554432     float    none" nccl-tests --preset dgx-h100 --op allgather -o max -b 1G -e 1G
bad "collective: nccl-nvls with prod" collective --preset dgx-h100 --op allreduce --algo nccl-nvls --size 1GiB --redop prod
bad "collective: --redop with all-gather" collective --preset dgx-h100 --op allgather --size 1GiB --redop max
bad "collective: an unknown --redop" collective --preset dgx-h100 --op allreduce --size 1GiB --redop mean
bad "collective: root=0 on an operation without a root" collective --topo clos:down=8x8,up=1x8 --op allreduce --algo ring:root=0 --size 1MiB
# auto is chosen once, on the network as given (docs/MODEL.md "Monte Carlo"), not on each draw
bad_says "failures: one algorithm, auto said as it runs" "'auto' (the fastest on the network as given, kept in every draw)" failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --fail-random links=1,seed=1 --trials 2 --algo all --quiet
bad "failures: chunks= on an algorithm that does not pipeline" failures --topo clos:down=4x4,up=1x4 --op alltoall --size 1MiB --fail-random links=1,seed=1 --trials 2 --algo direct:chunks=4 --quiet
bad "train: --dp-algo with chunks= on an algorithm that does not pipeline" train --topo clos:hosts=64,radix=16,tiers=2,node=8 --model llama3-8b --dp 8 --tp 8 --dp-algo direct:chunks=4
bad "collective: root= on an operation without a root" collective --topo clos:down=8x8,up=1x8 --op allreduce --algo ring:root=3 --size 1MiB
bad "collective: chunks= on an algorithm that does not pipeline" collective --topo clos:down=8x8,up=1x8 --op alltoall --algo direct:chunks=8 --size 1MiB
good "collective: root= and chunks= where they apply" "^time" collective --topo clos:down=8x8,up=1x8 --op broadcast --algo ring:root=3,chunks=8 --size 1MiB
bad "collective: a size that is not whole bytes" collective --topo clos:down=8x8,up=1x8 --op allreduce --size 1000.5
printf '{"jobs":[{"name":"A","op":"allreduce","algo":"ring","size":"1MiB","endpoints":"0-3","root":2}]}' >"$tmp/rootj.json"
bad "concurrent: a root on an all-reduce job" concurrent --topo clos:down=8x8,up=1x8 --jobs "$tmp/rootj.json"
# NCCL's model of broadcast and reduce takes the network step's hardware
# latency alone (tuning.cc:231-235, no latencyInter): the EFA plugin's
# reported 75 us does not push it to LL128 at 8 MiB
good "nccl: broadcast on EFA, Simple at 8 MiB" "^algorithm *nccl:Ring,Simple" collective --preset dgx-h100:nodes=2,transport=efa --op broadcast --algo nccl --size 8MiB
# the header names the routing modelled: on a Clos the mode's default
# (formula D-mod-k, steps and flow one ECMP hash); a preset takes seed=
good "nccl-tests: the header names formula's routing" "mode formula, routing dmodk (formula's default" nccl-tests --preset dgx-h100:nodes=2 --op alltoall -b 1M -e 1M
good "nccl-tests: the header names steps' routing" "mode steps, routing ecmp (steps' default: one hash of the flows, seed= in the spec or preset draws another" nccl-tests --preset dgx-h100:nodes=2 --op alltoall -b 1M -e 1M --mode steps
good "nccl-tests: the header names the routing given" "mode steps, routing dmodk$" nccl-tests --preset dgx-h100:nodes=2 --op alltoall -b 1M -e 1M --mode steps --routing dmodk
good "nccl-tests: a preset's seed= draws another hash" "alpha=1.1us,seed=7, 16 ranks, nccl, mode steps, routing ecmp" nccl-tests --preset dgx-h100:nodes=2,seed=7 --op alltoall -b 1M -e 1M --mode steps
good "collective: the advice on seed= names presets" "seed= in the spec or preset draws another" collective --preset dgx-h100:nodes=2,seed=7 --op alltoall --size 1MiB --mode steps
bad_says "a preset's seed= is a whole number" "preset dgx-h100: seed='x'" collective --preset dgx-h100:nodes=2,seed=x --op alltoall --size 1MiB
good "nccl-tests: a broadcast root" "      -1 \|       1 " nccl-tests --preset dgx-h100:nodes=2 --op broadcast -r 1 -b 64 -e 64
bad "nccl: a placement that splits nodes" collective --preset dgx-h100:nodes=4 --place list --endpoints 0-3,8-11,16-19,24-27 --op allreduce --algo nccl-ring --size 1MiB
# -g below the node size on several nodes: NCCL's communicator of the GPUs
# used (one group of every rank, tc_groups_nccl_view), the same as --group
# block=P gives; nccl-tests' header prints -g as nGpus
for g in 1 2 4; do
    good "nccl-tests: -g $g of 8 GPUs on 2 nodes with NCCL's choice" "NCCL's communicator of the $g GPU" nccl-tests --preset dgx-h100:nodes=2 -g $g -b 1M -e 64M -f 64
    grep -q "^# nThread 1 nGpus $g minBytes" "$tmp/out" || { echo "FAIL: nccl-tests -g $g: nGpus is not $g"; fails=$((fails + 1)); }
    grep "^ " "$tmp/out" >"$tmp/g_rows"
    "$T" nccl-tests --preset dgx-h100:nodes=2 -g $g --group block=$((2 * g)) -b 1M -e 64M -f 64 | grep "^ " >"$tmp/g_group"
    cmp -s "$tmp/g_rows" "$tmp/g_group" || { echo "FAIL: nccl-tests -g $g differs from --group block=$((2 * g))"; fails=$((fails + 1)); }
done
good "nccl-tests: -g 4 on 4 nodes with NCCL's ring" "^     1048576 " nccl-tests --preset dgx-h100:nodes=4 -g 4 -b 1M -e 1M --algo nccl-ring
# -b -e -f -i as nccl-tests v2.13.10 steps them (src/common.cu:64-67, 604):
# -f above 1 multiplies and wins over -i; without it (or -f 1) the sizes
# step by -i bytes, 1M by default; the header prints -e as given and the
# step as F(factor) or B(bytes) (src/common.cu:917-919)
good "nccl-tests: -i steps linearly" "^     3145728 " nccl-tests --preset dgx-h100 -b 1M -e 4M -i 1M
good "nccl-tests: without -f the sizes step by 1M" "^     3145728 " nccl-tests --preset dgx-h100 -b 1M -e 4M
good "nccl-tests: -f 1 steps by -i" "^     1572864 " nccl-tests --preset dgx-h100 -b 1M -e 2M -f 1 -i 512K
good "nccl-tests: --stepbytes is -i" "^     1572864 " nccl-tests --preset dgx-h100 -b 1M -e 2M --stepbytes 524288
good "nccl-tests: the header's step in bytes" "^# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 1048576(bytes) warmup" nccl-tests --preset dgx-h100 -b 1M -e 4M -i 1M
good "nccl-tests: the header's maxBytes is -e, not the last size" "^# nThread 1 nGpus 1 minBytes 1048576 maxBytes 5000000 step: 2(factor) warmup" nccl-tests --preset dgx-h100 -b 1M -e 5000000 -f 2 -i 1M
"$T" nccl-tests --preset dgx-h100 -b 1M -e 4M -f 2 -i 1M >"$tmp/out" 2>&1
if grep -q "^     3145728 " "$tmp/out" || ! grep -q "^     4194304 " "$tmp/out"; then
    echo "FAIL: nccl-tests: -f 2 does not win over -i"
    fails=$((fails + 1))
fi
# sizes cut to whole elements by the evaluator, as nccl-tests' setupArgs
good "nccl-tests: a size stepped by -i, cut to whole floats" "^     2000000        500000 " nccl-tests --preset dgx-h100 -b 1000001 -e 3000001 -i 1000000
bad "nccl-tests: a step factor of 0" nccl-tests --preset dgx-h100 -b 8 -e 1M -f 0
bad "nccl-tests: a step of 0 bytes" nccl-tests --preset dgx-h100 -b 8 -e 1M -i 0
bad_says "nccl-tests: steps of 1M from 1 B to 16G" "more than 10000 sizes" nccl-tests --preset dgx-h100 -b 1 -e 16G
# sizes of zero whole elements per rank print as nccl-tests' rows of size 0
# and the sweep goes on (docs/NCCL_TESTS.md): time 0 for a collective (NCCL
# enqueues nothing), the smallest all-to-all's for all-to-all (empty sends
# and receives are syncs)
"$T" nccl-tests --preset dgx-h100:nodes=4 --op alltoall -b 1 -e 64M -f 2 >"$tmp/nt_a2a0" 2>"$tmp/err"
rc=$?
zero=$(grep -c '^           0             0     float    none      -1 ' "$tmp/nt_a2a0")
t0=$(awk '$1 == 0 { print $6; exit }' "$tmp/nt_a2a0")
t512=$(awk '$1 == 512 { print $6; exit }' "$tmp/nt_a2a0")
if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ] || [ "$(grep -c '^ ' "$tmp/nt_a2a0")" -ne 27 ] || [ "$zero" -ne 9 ] ||
    [ -z "$t0" ] || [ "$t0" != "$t512" ] || ! grep -q '^# rows of size 0: .*sync' "$tmp/nt_a2a0"; then
    echo "FAIL: nccl-tests all-to-all -b 1 -e 64M on 32 ranks: rc=$rc, rows of size 0 $zero (9 expected), time $t0 (512 bytes': $t512)"
    fails=$((fails + 1))
fi
good "nccl-tests: the common -b 8 -e 8G sweep of all-to-all" "^  8589934592 " nccl-tests --preset dgx-h100:nodes=4 --op alltoall -b 8 -e 8G -f 2
good "nccl-tests: an empty all-gather takes no time" "^           0             0     float    none      -1     0.00    0.00    0.00    N/A     0.00" nccl-tests --preset dgx-h100 --op allgather -b 8 -e 1K -f 2
# nccl-tests' average counts the empty rows' busbw 0 (src/common.cu:564-565)
"$T" nccl-tests --preset dgx-h100 --op allgather -b 8 -e 1K -f 2 | awk '/^ / { s += $8 + $12; n += 2 } /^# Avg bus bandwidth/ { a = $6 }
    END { exit !(n == 16 && a > 0 && (s / n - a) ^ 2 < 0.005 ^ 2) }' || { echo "FAIL: nccl-tests' average leaves out the rows of size 0"; fails=$((fails + 1)); }
good "nccl-tests: below one element of all-reduce" "^           0             0     float     sum      -1     0.00 " nccl-tests --preset dgx-h100 -b 1 -e 16 -i 4
good "nccl-tests: the empty sizes are left out of the scenario" '"sizes": \[512, 1024\]' nccl-tests --preset dgx-h100:nodes=4 --op alltoall -b 8 -e 1K -f 2 --print-scenario
bad_says "nccl-tests: a sweep of empty sizes only" "every size of the sweep is zero whole elements per rank .*give -e at least 128 bytes" nccl-tests --preset dgx-h100 --op allgather -b 8 -e 64 -f 2
bad "nccl-tests: more GPUs per node than the node has" nccl-tests --preset dgx-h100 -g 9 -b 8 -e 8
printf '# header\n     1048576        262144     float     sum      -1    12.5  83.9  146.8  0\n     2097152  524288  float\n' >"$tmp/bad_nt.txt"
bad "nccl-tests: an unreadable row, by line" nccl-tests --preset dgx-h100 --compare "$tmp/bad_nt.txt"
"$T" nccl-tests --preset dgx-h100 --compare "$tmp/bad_nt.txt" 2>"$tmp/err" >/dev/null
grep -q "line 3" "$tmp/err" || { echo "FAIL: an unreadable nccl-tests row is not named by its line"; fails=$((fails + 1)); }
# --compare: the file's type, redop and ranks are the prediction's
nt_row() { printf '     1048576        %s  %8s  %6s      -1    12.50   83.89  146.80      0    12.50   83.89  146.80      0\n' "$@"; }
nt_ranks() { # ranks: the header's '#  Rank' lines
    i=0
    while [ "$i" -lt "$1" ]; do
        printf '#  Rank %2d Group  0 Pid  4242 on     node%d device %2d [0000:1b:00] NVIDIA H100 80GB HBM3\n' "$i" $((i / 8)) $((i % 8))
        i=$((i + 1))
    done
}
nt_row 524288 half sum >"$tmp/nt_half.txt"
nt_row 262144 float max >"$tmp/nt_max.txt"
nt_row 32768 float none >"$tmp/nt_none.txt"
{ nt_ranks 16; nt_row 262144 float sum; } >"$tmp/nt_16.txt"
bad_says "nccl-tests --compare: a file of another type" "holds rows of type half (line 1), the prediction is for float: give -d half" nccl-tests --preset dgx-h100 --compare "$tmp/nt_half.txt"
good "nccl-tests --compare: the type matched" "^# median |error|" nccl-tests --preset dgx-h100 -d half --compare "$tmp/nt_half.txt"
bad_says "nccl-tests --compare: a file of another redop" "holds rows of redop max (line 1), the prediction's redop is sum (allreduce): give -o max" nccl-tests --preset dgx-h100 --compare "$tmp/nt_max.txt"
good "nccl-tests --compare: the redop matched" "^# median |error|" nccl-tests --preset dgx-h100 -o max --compare "$tmp/nt_max.txt"
bad_says "nccl-tests --compare: a reduction's file for all-gather" "give its --op (allreduce, reducescatter, reduce) and -o max" nccl-tests --preset dgx-h100 --op allgather --compare "$tmp/nt_max.txt"
bad_says "nccl-tests --compare: all-gather's file for all-reduce" "redop none (line 1), the prediction's redop is sum (allreduce): the file is of an operation without a reduction" nccl-tests --preset dgx-h100 --compare "$tmp/nt_none.txt"
bad_says "nccl-tests --compare: another rank count" "lists 16 ranks in its header ('#  Rank' lines), the prediction is for 8 ranks" nccl-tests --preset dgx-h100 --compare "$tmp/nt_16.txt"
# --compare on raw logs: a launcher's prefixes, NCCL's and the launcher's
# lines, several tests in one log, nccl-tests' JSON report
ntrow='     1048576        262144     float     sum      -1    12.50   83.89  146.80      0    12.50   83.89  146.80      0'
printf 'this is not a row\n%s\n' "$ntrow" >"$tmp/nt_noise.txt"
good "nccl-tests --compare: a line that is not a row is named, not read" "^# not read: 1 line of .* neither rows nor comments (a launcher's or NCCL's messages): line 1$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_noise.txt"
printf 'srun: job 12 queued\n[1,0]<stdout>:# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22503\n[1,0]<stdout>:# Collective test starting: all_reduce_perf\n[1,3]<stderr>:node1:77:77 [3] NCCL INFO NCCL version 2.25.1+cuda12.8\n[1,0]<stdout>:%s\n[1,0]<stdout>:# Avg bus bandwidth    : 146.8\n' "$ntrow" >"$tmp/nt_ompi.txt"
good "nccl-tests --compare: Open MPI's --tag-output prefixes" "^     1048576  *[0-9.]*  *146.80 " nccl-tests --preset dgx-h100 --compare "$tmp/nt_ompi.txt"
good "nccl-tests --compare: the file's test and versions" "^# the file: all_reduce_perf, nccl-tests 2.17.8, NCCL 2.25.3 (topocc models NCCL 2.21.5)$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_ompi.txt"
good "nccl-tests --compare: the launcher's line counted" "^# not read: 1 line of .*: line 1$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_ompi.txt"
printf ' 0: # Collective test starting: all_reduce_perf_mpi\n 0: %s\n12: node1:77:77 [3] NCCL INFO NCCL version 2.21.5+cuda12.4\n' "$ntrow" >"$tmp/nt_srun.txt"
good "nccl-tests --compare: srun --label prefixes, the _mpi build's name" "^# the file: all_reduce_perf, NCCL 2.21.5 (the version topocc models)$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_srun.txt"
{ printf '# Collective test starting: all_gather_perf\n'; nt_row 262144 float none; printf '# Collective test starting: all_reduce_perf\n%s\n' "$ntrow"; } >"$tmp/nt_two.txt"
good "nccl-tests --compare: the rows of the prediction's test" "^# not compared: 1 row of other tests in the file (all_gather_perf)$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_two.txt"
good "nccl-tests --compare: the other test's rows" "^# not compared: 1 row of other tests in the file (all_reduce_perf)$" nccl-tests --preset dgx-h100 --op allgather --compare "$tmp/nt_two.txt"
bad_says "nccl-tests --compare: a log of other tests" "holds the output of all_gather_perf, all_reduce_perf (line 2), the prediction is of alltoall_perf: give --op allgather or --op allreduce$" nccl-tests --preset dgx-h100 --op alltoall --compare "$tmp/nt_two.txt"
printf '# Collective test starting: all_reduce_perf.exe\n%s\n' "$ntrow" >"$tmp/nt_exe.txt"
good "nccl-tests --compare: a Windows build's program name" "^# the file: all_reduce_perf$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_exe.txt"
printf '{"version": 3, "args": ["C:\\\\nccl-tests\\\\build\\\\all_gather_perf.exe"], "results": [{"size": 1048576, "type": "float", "redop": "none", "out_of_place": {"time": 12.5, "bus_bw": 73.4}}]}\n' >"$tmp/nt_win.json"
good "nccl-tests --compare: a Windows path in a JSON report's args" "^# the file: all_gather_perf, nccl-tests' JSON report" nccl-tests --preset dgx-h100 --op allgather --compare "$tmp/nt_win.json"
{ printf '# Collective test starting: hypercube_perf\n'; nt_row 262144 float none; } >"$tmp/nt_hyper.txt"
bad_says "nccl-tests --compare: a test topocc does not predict" "holds the output of hypercube_perf (line 2), which topocc does not predict" nccl-tests --preset dgx-h100 --compare "$tmp/nt_hyper.txt"
printf 'srun: error: node1: task 0: Exited with exit code 1\n' >"$tmp/nt_none_rows.txt"
bad_says "nccl-tests --compare: a log without rows names its first line" "no result rows .*; line 1, the first of 1 others, is not one" nccl-tests --preset dgx-h100 --compare "$tmp/nt_none_rows.txt"
printf '%s\n     2097152        524288     float     sum      -1    20.00  104.86  183.50      3    20.00  104.86  183.50      0\n' "$ntrow" >"$tmp/nt_wrong.txt"
good "nccl-tests --compare: rows nccl-tests found wrong are named" "^# the file: 1 row with #wrong above 0 (the first: line 2): nccl-tests found the run's result wrong there$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_wrong.txt"
{ nt_row 262144 float sum; nt_row 262144 float max; nt_row 524288 half sum; nt_row 524288 half max; } >"$tmp/nt_all.txt"
good "nccl-tests --compare: a -d all -o all log, the run's rows" "^# not compared: 3 rows of other types, operators or roots in the file (float max, half sum, half max)$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_all.txt"
good "nccl-tests --compare: a -d all -o all log, -d half -o max" "^# not compared: 3 rows of other types, operators or roots in the file (float sum, float max, half sum)$" nccl-tests --preset dgx-h100 -d half -o max --compare "$tmp/nt_all.txt"
nt_brow() { printf '     1048576        262144     float    none  %6s    12.50   83.89   83.89      0    12.50   83.89   83.89      0\n' "$1"; }
{ nt_brow 0; nt_brow 1; nt_brow 2; } >"$tmp/nt_roots.txt"
good "nccl-tests --compare: a -r -1 log of broadcast, the root asked" "^# not compared: 2 rows of other types, operators or roots in the file (root 0, root 2)$" nccl-tests --preset dgx-h100 --op broadcast -r 1 --compare "$tmp/nt_roots.txt"
# v2.19's -I (per-iteration columns) and -S (a timestamp) add columns after the ones read
printf '#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%%\n     1048576        262144     float     sum      -1    12.50   83.89  146.80       0    12.00    13.00    13.00     1.20    12.50   83.89  146.80       0    12.00    13.00    13.00     1.20\n' >"$tmp/nt_periter.txt"
good "nccl-tests --compare: -I's per-iteration columns" "^     1048576  *[0-9.]*  *146.80 " nccl-tests --preset dgx-h100 --compare "$tmp/nt_periter.txt"
printf '#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong           timestamp\n%s  2025-11-03 10:11:12\n' "$ntrow" >"$tmp/nt_stamp.txt"
good "nccl-tests --compare: -S's timestamp column" "^     1048576  *[0-9.]*  *146.80 " nccl-tests --preset dgx-h100 --compare "$tmp/nt_stamp.txt"
J="$DATA_NT/constructed_nccltests2.19.6_json_16rank_allreduce.json"
good "nccl-tests --compare: a JSON report" "^# median |error| >= 256 MiB       : [0-9.]*% over 1 size$" nccl-tests --preset dgx-h100:nodes=2 --compare "$J"
good "nccl-tests --compare: a JSON report's test and versions" "^# the file: all_reduce_perf, nccl-tests' JSON report (format version 3), NCCL 2.21.5 (the version topocc models)$" nccl-tests --preset dgx-h100:nodes=2 --compare "$J"
NCCL_ALGO=Ring good "nccl-tests --compare: a JSON report's NCCL settings beside topocc's" "^# the run's NCCL settings topocc honours: NCCL_ALGO=Ring (here Ring, alike) NCCL_BUFFSIZE=8388608 (unset here)$" nccl-tests --preset dgx-h100:nodes=2 --compare "$J"
bad_says "nccl-tests --compare: a JSON report of other ranks" "lists 16 ranks (its devices x threads x GPUs), the prediction is for 8 ranks" nccl-tests --preset dgx-h100 --compare "$J"
bad_says "nccl-tests --compare: a JSON report of another test" "holds the output of all_reduce_perf (its args), the prediction is of alltoall_perf: give --op allreduce$" nccl-tests --preset dgx-h100:nodes=2 --op alltoall --compare "$J"
# a JSON report's NCCL values with a space, a newline: no crash, one line, shown as read
printf '{"version": 3, "env": ["NCCL_ALGO= Ring", "NCCL_PROTO=Simple\\nX"], "results": [{"size": 1048576, "type": "float", "redop": "sum", "root": "    -1", "out_of_place": {"time": 12.5, "bus_bw": 146.8}}]}\n' >"$tmp/nt_env.json"
good "nccl-tests --compare: a JSON report's values with blanks and newlines" "^# the run's NCCL settings topocc honours: NCCL_ALGO= Ring (unset here) NCCL_PROTO=Simple?X (unset here)$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_env.json"
# through a pipe: nothing read twice
cat "$tmp/nt_two.txt" | "$T" nccl-tests --preset dgx-h100 --compare /dev/stdin >"$tmp/out" 2>&1
grep -q "^     1048576 .* 146.80 " "$tmp/out" && grep -q "^# not compared: 1 row of other tests in the file (all_gather_perf)$" "$tmp/out" ||
    { echo "FAIL: nccl-tests --compare /dev/stdin: a log through a pipe is not read as the file"; cat "$tmp/out"; fails=$((fails + 1)); }
cat "$J" | "$T" nccl-tests --preset dgx-h100:nodes=2 --compare /dev/stdin >"$tmp/out" 2>&1
grep -q "^# the file: all_reduce_perf, nccl-tests' JSON report" "$tmp/out" ||
    { echo "FAIL: nccl-tests --compare /dev/stdin: a JSON report through a pipe is not read"; cat "$tmp/out"; fails=$((fails + 1)); }
printf '\357\273\277' | cat - "$J" >"$tmp/nt_bom.json"
good "nccl-tests --compare: a JSON report after a byte-order mark" "^# the file: all_reduce_perf, nccl-tests' JSON report" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_bom.json"
printf '[1, 2]\n' >"$tmp/nt_list.json"
bad_says "nccl-tests --compare: a JSON list is no report" "no result rows .*; line 1, the first of 1 others, is not one" nccl-tests --preset dgx-h100 --compare "$tmp/nt_list.json"
printf '[1,0]<stdout>:%s\n' "$ntrow" >"$tmp/nt_ompi1.txt"
good "nccl-tests --compare: a log whose first line Open MPI tagged" "^     1048576  *[0-9.]*  *146.80 " nccl-tests --preset dgx-h100 --compare "$tmp/nt_ompi1.txt"
# rank lines count per run: another test's, another run's
{ printf '# Collective test starting: all_gather_perf\n# nThread 1 nGpus 1\n'; nt_ranks 16; nt_row 262144 float none
  printf '# Collective test concluded: all_gather_perf\n# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1\n'; nt_ranks 8; nt_row 262144 float sum; } >"$tmp/nt_mixranks.txt"
good "nccl-tests --compare: the ranks of the test compared, not another's" "^# not compared: 1 row of other tests in the file (all_gather_perf)$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_mixranks.txt"
bad_says "nccl-tests --compare: another test's ranks are not the run's" "lists 8 ranks in its header" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_mixranks.txt"
{ printf '# nThread 1 nGpus 1\n'; nt_ranks 4; nt_row 262144 float sum; printf '# nThread 1 nGpus 1\n'; nt_ranks 8; nt_row 262144 float sum; } >"$tmp/nt_tworuns.txt"
bad_says "nccl-tests --compare: two runs on different ranks" "holds runs of the rows compared on 4 ranks (its '#  Rank' lines, line 5) and on 8 (line 15)" nccl-tests --preset dgx-h100 --compare "$tmp/nt_tworuns.txt"
{ printf '# nThread 1 nGpus 1\n'; nt_ranks 8; nt_row 524288 half sum; printf '# nThread 1 nGpus 1\n'; nt_ranks 16; nt_row 262144 float sum; } >"$tmp/nt_twotypes.txt"
good "nccl-tests --compare: the ranks of the rows compared, not of the rows left out" "^# not compared: 1 row of other types, operators or roots in the file (half sum)$" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_twotypes.txt"
# nccl-tests cuts a process's rank lines at 2,048 bytes ('...'): the ranks are its whole processes
{ printf '# nThread 1 nGpus 8\n'; nt_ranks 6; printf '...\n'; nt_ranks 14 | tail -n 6; printf '...\n'; nt_row 262144 float sum; } >"$tmp/nt_cut.txt"
good "nccl-tests --compare: rank lines cut at 2 KiB a process" "^# median |error|" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_cut.txt"
bad_says "nccl-tests --compare: rank lines cut, another rank count" "lists 16 ranks in its header" nccl-tests --preset dgx-h100 --compare "$tmp/nt_cut.txt"
# a row with a field missing is refused, not read one column to the left
sed -E 's/^( +[0-9]+ +[0-9]+ +double +sum) +-1 /\1 /' "$DATA_NT/ncclcluster_h100_1node_8gpu_nvswitch_allreduce.txt" >"$tmp/nt_noroot.txt"
bad_says "nccl-tests --compare: a row without its root" "line 14: root 182.87 is not one nccl-tests prints (a whole number, -1 for no root): a field missing" nccl-tests --preset dgx-h100 -d double --compare "$tmp/nt_noroot.txt"
printf '     1048576        262144     float     sum      -1    12.50   83.89  146.80    12.50   83.89  146.80      0\n' >"$tmp/nt_nowrong.txt"
bad_says "nccl-tests --compare: a row without its #wrong" "line 1: #wrong 12.50 is not one nccl-tests prints (a whole count or N/A)" nccl-tests --preset dgx-h100 --compare "$tmp/nt_nowrong.txt"
printf '     1048576        262144     float     sum      -1    12.50   50.00  146.80      0    12.50   83.89  146.80      0\n' >"$tmp/nt_noalg.txt"
bad_says "nccl-tests --compare: an algbw that is not size / time" "line 1: algbw 50.00 is not one nccl-tests prints (size / time)" nccl-tests --preset dgx-h100 --compare "$tmp/nt_noalg.txt"
# before v2.13.0 (an error column, no #wrong) all-gather's algbw was (n-1)/n of size / time: read as printed
printf '#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n     1048576        32768   float    20.00   45.88   40.14  0e+00    20.00   45.88   40.14  0e+00\n' >"$tmp/nt_v20ag.txt"
good "nccl-tests --compare: an old all-gather's algbw of (n-1)/n x size / time" "  40.14 " nccl-tests --preset dgx-h100 --op allgather --compare "$tmp/nt_v20ag.txt"
mkdir -p "$tmp/nt_dir"
bad_says "nccl-tests --compare: a directory" "nccl-tests file .*nt_dir: a directory: give the file of a run's output$" nccl-tests --preset dgx-h100 --compare "$tmp/nt_dir"
nt_brow 3 >"$tmp/nt_root3.txt"
bad_says "nccl-tests --compare: a broadcast of another root" "holds rows of root 3 (line 1), the prediction's root is 0: give -r 3$" nccl-tests --preset dgx-h100 --op broadcast --compare "$tmp/nt_root3.txt"
bad_says "nccl-tests --compare: broadcast's rows for all-gather" "holds rows of root 3 (line 1), as broadcast and reduce print them: give its --op (broadcast, reduce)$" nccl-tests --preset dgx-h100 --op allgather --compare "$tmp/nt_root3.txt"
{ nt_row 262144 float none; nt_brow 0; } >"$tmp/nt_agbc.txt"
good "nccl-tests --compare: all-gather's row (root -1) left out of broadcast's" "^# not compared: 1 row of other types, operators or roots in the file (root -1)$" nccl-tests --preset dgx-h100 --op broadcast --compare "$tmp/nt_agbc.txt"
printf '{"version":3,"results":[{"size":1048576,"type":"fl\\noat","redop":"sum","out_of_place":{"time":12.5,"bus_bw":146.8}}]}\n' >"$tmp/nt_ctl.json"
bad_says "nccl-tests --compare: a JSON type with a newline, one line" "holds rows of type fl?oat (result 1)" nccl-tests --preset dgx-h100 --compare "$tmp/nt_ctl.json"
printf '{"version": 3, "results": [\n' >"$tmp/nt_cut.json"
bad_says "nccl-tests --compare: a JSON report cut short" "nt_cut.json line 2: not a JSON report nccl-tests writes (-J)" nccl-tests --preset dgx-h100 --compare "$tmp/nt_cut.json"
printf '{"version": 4, "results": []}\n' >"$tmp/nt_v4.json"
bad_says "nccl-tests --compare: a JSON format version not read" "read are its versions 1 to 3 (nccl-tests v2.17.3 to v2.19.6)" nccl-tests --preset dgx-h100 --compare "$tmp/nt_v4.json"
printf '{"version": 1, "results": [{"size": 1048576, "type": "float", "redop": "sum", "out_of_place": {"time": 12.5, "bus_bw": 146.8}}, {"size": 2097152, "type": "float", "redop": "sum", "out_of_place": {"time": 20}}]}\n' >"$tmp/nt_nobw.json"
bad_says "nccl-tests --compare: a JSON result without its busbw" "result 2 is not one nccl-tests writes" nccl-tests --preset dgx-h100 --compare "$tmp/nt_nobw.json"
printf '{"version": 1, "results": [{"size": 1048576, "type": "half", "redop": "sum", "out_of_place": {"cpu_time": 12.5, "bus_bw": "nan"}}]}\n' >"$tmp/nt_half.json"
bad_says "nccl-tests --compare: a JSON result's type, by its place" "holds rows of type half (result 1), the prediction is for float: give -d half" nccl-tests --preset dgx-h100 --compare "$tmp/nt_half.json"
good "nccl-tests --compare: the header's ranks matched" "^# median |error|" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_16.txt"
good "nccl-tests --compare: the header's ranks, 4 GPUs of 4 nodes" "^# median |error|" nccl-tests --preset dgx-h100:nodes=4 -g 4 --algo ring --compare "$tmp/nt_16.txt"
good "nccl-tests --compare: the header's ranks are all the groups' ranks" "^# median |error|" nccl-tests --preset dgx-h100:nodes=2 --group stride=8 --compare "$tmp/nt_16.txt"
{ nt_ranks 2; nt_row 262144 float sum; } | sed 's/^#  Rank \( [01]\) Group  0/#   Rank \1/' >"$tmp/nt_old.txt"
bad_says "nccl-tests --compare: an older header's rank lines (no Group)" "lists 2 ranks" nccl-tests --preset dgx-h100 --compare "$tmp/nt_old.txt"
bad_says "nccl-tests --compare: --print-scenario checks the ranks too" "lists 16 ranks" nccl-tests --preset dgx-h100 --compare "$tmp/nt_16.txt" --print-scenario
mkdir -p "$tmp/od_bad/sizes.csv" && echo old >"$tmp/keep.txt"
bad "nccl-tests: --out-dir that fails" nccl-tests --preset dgx-h100 -b 1M -e 2M --out "$tmp/keep.txt" --out-dir "$tmp/od_bad"
grep -qx old "$tmp/keep.txt" || { echo "FAIL: a failed --out-dir overwrote --out"; fails=$((fails + 1)); }
# nccl-tests' output options: collective's, --out what stdout gets, no --scenario
NT="nccl-tests --preset dgx-h100:nodes=2 -b 1M -e 64M -f 8 -d bfloat16 -o max"
# shellcheck disable=SC2086
good "nccl-tests --out" "^# Avg bus bandwidth" $NT --out "$tmp/nt_out.txt"
cmp -s "$tmp/out" "$tmp/nt_out.txt" || { echo "FAIL: nccl-tests --out is not what stdout gets"; fails=$((fails + 1)); }
# shellcheck disable=SC2086
good "nccl-tests --format json --out" '"busbw_Bps"' $NT --format json --out "$tmp/nt_out.json"
cmp -s "$tmp/out" "$tmp/nt_out.json" || { echo "FAIL: nccl-tests --format json --out is not what stdout gets"; fails=$((fails + 1)); }
cp "$tmp/out" "$tmp/nt_run.json"
# shellcheck disable=SC2086
good "nccl-tests --format csv: collective's sizes table" "^bytes,count,type,redop,root,time_s,algbw_Bps,busbw_Bps" $NT --format csv
good "nccl-tests --format csv: the sizes table for one size too" "^1048576,262144,float,sum,-1," nccl-tests --preset dgx-h100 -b 1M -e 1M --format csv
head -1 "$tmp/out" | grep -q "^bytes,count,type,redop,root,time_s," || { echo "FAIL: nccl-tests --format csv of one size is not the sizes table"; fails=$((fails + 1)); }
good "nccl-tests --format json: the sizes document for one size too" '"results": \[' nccl-tests --preset dgx-h100 -b 1M -e 1M --format json
good "nccl-tests --out-dir: the sizes table for one size too" "" nccl-tests --preset dgx-h100 -b 1M -e 1M --out-dir "$tmp/nt1dir"
[ -f "$tmp/nt1dir/sizes.csv" ] && [ ! -f "$tmp/nt1dir/result.csv" ] || { echo "FAIL: nccl-tests --out-dir of one size is not the sizes table"; fails=$((fails + 1)); }
good "nccl-tests --format csv --out: the sizes table for one size" "^bytes,count,type" nccl-tests --preset dgx-h100 -b 1M -e 1M --format csv --out "$tmp/nt1.csv"
cmp -s "$tmp/out" "$tmp/nt1.csv" || { echo "FAIL: nccl-tests --format csv --out is not what stdout gets"; fails=$((fails + 1)); }
good "nccl-tests --compare --out" "^# median |error|" nccl-tests --preset dgx-h100:nodes=2 --compare "$tmp/nt_16.txt" --out "$tmp/nt_cmp.txt"
cmp -s "$tmp/out" "$tmp/nt_cmp.txt" || { echo "FAIL: nccl-tests --compare --out is not what stdout gets"; fails=$((fails + 1)); }
# shellcheck disable=SC2086
good "nccl-tests --print-scenario: a collective scenario" '"command": "collective"' $NT --print-scenario --out "$tmp/nt_scn.json"
cmp -s "$tmp/out" "$tmp/nt_scn.json" || { echo "FAIL: nccl-tests --print-scenario --out is not what stdout gets"; fails=$((fails + 1)); }
good "nccl-tests --print-scenario runs as collective --scenario: the same result" '"busbw_Bps"' collective --scenario "$tmp/nt_scn.json" --format json
cmp -s "$tmp/out" "$tmp/nt_run.json" || { echo "FAIL: collective --scenario of nccl-tests' scenario differs from nccl-tests --format json"; diff "$tmp/out" "$tmp/nt_run.json" | head -5; fails=$((fails + 1)); }
good "nccl-tests --format json replays" '"busbw_Bps"' replay "$tmp/nt_run.json" --format json
cmp -s "$tmp/out" "$tmp/nt_run.json" || { echo "FAIL: nccl-tests' JSON does not replay to itself"; fails=$((fails + 1)); }
for a in "--preset dgx-h100:nodes=4 -g 4 --algo ring --op broadcast -r 2 -b 1M -e 16M -f 4" \
    "--preset dgx-h100:nodes=4 --group stride=8 --op reducescatter -o avg -b 1M -e 16M -f 4" \
    "--preset dgx-h100:nodes=2 --op alltoall -b 1M -e 16M -f 4 --mode flow"; do
    # shellcheck disable=SC2086
    if ! "$T" nccl-tests $a --print-scenario >"$tmp/nt_scn.json" 2>"$tmp/err" ||
        ! "$T" nccl-tests $a --format json >"$tmp/nt_run.json" 2>>"$tmp/err" ||
        ! "$T" collective --scenario "$tmp/nt_scn.json" --format json >"$tmp/out" 2>>"$tmp/err" ||
        ! cmp -s "$tmp/out" "$tmp/nt_run.json" || [ -s "$tmp/err" ]; then
        echo "FAIL: nccl-tests $a: its scenario run by collective differs"
        cat "$tmp/err"
        fails=$((fails + 1))
    fi
done
# shellcheck disable=SC2086
good "nccl-tests --out-dir" "^# Avg bus bandwidth" $NT --out-dir "$tmp/nt_dir"
{ [ -s "$tmp/nt_dir/sizes.csv" ] && [ -s "$tmp/nt_dir/scenario.json" ]; } || { echo "FAIL: nccl-tests --out-dir wrote no sizes.csv and scenario.json"; fails=$((fails + 1)); }
# shellcheck disable=SC2086
good "nccl-tests --quiet" "^# Avg bus bandwidth" $NT --quiet
# shellcheck disable=SC2086
bad_says "nccl-tests --scenario points to collective" "run it with topocc collective --scenario $tmp/nt_scn.json" $NT --scenario "$tmp/nt_scn.json"
# shellcheck disable=SC2086
bad "nccl-tests --out where the directory is not" $NT --out /nonexistent/dir/nt.txt
# shellcheck disable=SC2086
: >"$tmp/ntfile"
# shellcheck disable=SC2086
bad "nccl-tests --out-dir that cannot be made" $NT --out-dir "$tmp/ntfile/sub"
# shellcheck disable=SC2086
bad "nccl-tests --print-scenario as CSV" $NT --print-scenario --format csv
bad "nccl-tests --compare as JSON" nccl-tests --preset dgx-h100 --compare "$tmp/nt_half.txt" -d half --format json
# shellcheck disable=SC2086
bad "nccl-tests --format xml" $NT --format xml
# shellcheck disable=SC2086
bad "nccl-tests --quiet twice" $NT --quiet --quiet
echo old >"$tmp/nt_keep.txt"
bad "nccl-tests: a failed run with --out" nccl-tests --preset dgx-h100 --op allgather -b 8 -e 8 --out "$tmp/nt_keep.txt"
[ "$(cat "$tmp/nt_keep.txt")" = old ] || { echo "FAIL: a failed nccl-tests run touched --out"; fails=$((fails + 1)); }
good "topocc --help names the commands without --scenario" "nor nccl-tests, whose --print-scenario prints a collective scenario" --help
# topocc's own output, saved, is the prediction's: type, redop and ranks (-b 1M -e 4M:
# 1M, 2M, 3M, 4M, stepping by nccl-tests' default -i 1M)
for a in "--op allreduce -d bfloat16 -o min" "--op reducescatter -o avg" "--op allgather -o max -d int32" \
    "--op broadcast -r 1 -d double" "--op reduce -o prod" "--op alltoall"; do
    # shellcheck disable=SC2086
    "$T" nccl-tests --preset dgx-h100 $a -b 1M -e 4M >"$tmp/nt_own.txt" 2>"$tmp/err"
    { nt_ranks 8; cat "$tmp/nt_own.txt"; } >"$tmp/nt_own8.txt"
    # shellcheck disable=SC2086
    good "nccl-tests --compare: its own output ($a)" "^# median |error| 1 MiB .. 256 MiB : 0.0% over 4 sizes" nccl-tests --preset dgx-h100 $a --compare "$tmp/nt_own8.txt"
done
export NCCL_ALGO="^Ring|Tree|NVLS|NVLSTree|PAT|CollNet"
bad "nccl: NCCL_ALGO that allows no algorithm" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
"$T" collective --preset dgx-h100 --op allreduce --algo nccl --size 8 2>"$tmp/err" >/dev/null
grep -q "allows none of Ring, Tree, NVLS, NVLSTree" "$tmp/err" || { echo "FAIL: an NCCL_ALGO that allows nothing is not refused"; fails=$((fails + 1)); }
export NCCL_ALGO=CollNetDirect
good "nccl: NCCL_ALGO=CollNetDirect without SHARP falls back to the ring, as NCCL" "nccl:Ring" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 64MiB
good "nccl: NCCL_ALGO=CollNetChain with SHARP" "nccl:CollNetChain,Simple" collective --preset dgx-h100:nodes=2,sharp=1 --op allreduce --algo nccl:algo=CollNetChain --size 64MiB
good "nccl-collnet-direct on a SHARP fabric" "nccl-collnet-direct:Simple" collective --preset dgx-h100:nodes=4,sharp=1 --op allreduce --algo nccl-collnet-direct --size 64MiB --mode flow
bad "nccl-collnet-chain where the fabric does not reduce" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl-collnet-chain --size 64MiB
good "nccl-a2a: PXN by default, every byte on its rail: ECMP as fast as D-mod-k" "busbw          90.72GB/s" collective --preset dgx-h100:nodes=2 --op alltoall --algo nccl-a2a --size 64MiB --mode flow
good "nccl-a2a:pxn=0 crosses rails: ECMP's hash collisions" "busbw          35.46GB/s" collective --preset dgx-h100:nodes=2 --op alltoall --algo nccl-a2a:pxn=0 --size 64MiB --mode flow
export NCCL_PXN_DISABLE=1
good "NCCL_PXN_DISABLE=1 as pxn=0" "busbw          35.46GB/s" collective --preset dgx-h100:nodes=2 --op alltoall --algo nccl --size 64MiB --mode flow
export NCCL_PXN_DISABLE=2
bad "NCCL_PXN_DISABLE=2" collective --preset dgx-h100:nodes=2 --op alltoall --algo nccl --size 64MiB
unset NCCL_PXN_DISABLE
bad "pxn= on an algorithm without it" collective --preset dgx-h100:nodes=2 --op alltoall --algo direct:pxn=1 --size 64MiB
bad "pxn=2" collective --preset dgx-h100:nodes=2 --op alltoall --algo nccl-a2a:pxn=2 --size 64MiB
DATA="$(dirname "$0")/data/nccl-tests"
good "nccl-tests --compare reads the older layout without a root column" "8589934592 *199.27 *115.6[34]" nccl-tests --preset dgx-a100:nodes=4,sharp=1 --algo nccl:algo=Ring --compare "$DATA/coreweave_a100_32rank_ib_sharp_allreduce.txt"
good "nccl-tests: SHARP, CollNetChain forced" "median |error| >= 256 MiB" nccl-tests --preset dgx-h100:nodes=12,sharp=1 --algo nccl:algo=CollNetChain --compare "$DATA/coreweave_h100_96rank_ib_sharp_allreduce.txt"
# older layouts (docs/NCCL_TESTS.md, "--compare FILE"): the leading columns
# the column header names, a blank redop field for the operations without
# a reduction (v2.9.0 to v2.13.3), fewer columns (v1.0.0 to v2.11.0)
good "nccl-tests --compare: v2.11.0's all-to-all (blank redop, no root)" "^# median |error| >= 256 MiB" nccl-tests --preset dgx-h100 --op alltoall --compare "$DATA/constructed_nccltests2.11.0_layout_8rank_alltoall.txt"
good "nccl-tests --compare: v2.13.0's all-gather (blank redop, root)" "^# median |error| >= 256 MiB" nccl-tests --preset dgx-h100 --op allgather --compare "$DATA/constructed_nccltests2.13.0_layout_8rank_allgather.txt"
bad_says "nccl-tests --compare: a blank redop is no reduction's" "holds rows without a redop (line 9)" nccl-tests --preset dgx-h100 --compare "$DATA/constructed_nccltests2.13.0_layout_8rank_allgather.txt"
bad_says "nccl-tests --compare: v2.11.0's all-to-all for all-reduce" "the file is of an operation without a reduction" nccl-tests --preset dgx-h100 --compare "$DATA/constructed_nccltests2.11.0_layout_8rank_alltoall.txt"
nt_hdr() { printf '# %10s  %12s  %8s' size count type; for c in "$@"; do printf '  %6s' "$c"; done; printf '  %7s  %6s  %6s  %5s\n' time algbw busbw error; }
{ nt_hdr; printf '     1048576         32768     float    25.31   41.43   36.25  0e+00    24.87   42.16   36.89  0e+00\n'; } >"$tmp/nt_ag211.txt"
good "nccl-tests --compare: v2.11.0's all-gather (no redop, no root)" "     1048576         53.00         36.25" nccl-tests --preset dgx-h100 --op allgather --compare "$tmp/nt_ag211.txt"
{ nt_hdr root; printf '     1048576        262144     float       0    20.00   52.43   52.43  0e+00    20.00   52.43   52.43  0e+00\n'; } >"$tmp/nt_bc211.txt"
good "nccl-tests --compare: v2.11.0's broadcast (root, no redop)" "  52.43 " nccl-tests --preset dgx-h100 --op broadcast --compare "$tmp/nt_bc211.txt"
printf '#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n     1048576        262144   float     sum    0.020  52.43  91.75    1e-07    0.020  52.43  91.75    1e-07\n' >"$tmp/nt_v1.txt"
good "nccl-tests --compare: v1.0.0's all-reduce (bytes N type op)" "  91.75 " nccl-tests --preset dgx-h100 --compare "$tmp/nt_v1.txt"
bad "fail: an unknown link" collective --topo "$CLOS" --op allreduce --size 1MiB --fail link:99999
bad "fail: not KIND:ID" collective --topo "$CLOS" --op allreduce --size 1MiB --fail cable:3
bad "fail: a job cut off" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --fail dlink:0
bad "fail: an endpoint down" collective --topo "$CLOS" --op allreduce --size 1MiB --fail host:5
# an endpoint down inside a slice: the endpoint named as the user gave it,
# no group named (a plain slice runs as its implicit group; a slice of the
# optical switches on its own torus, whose endpoints are numbered anew)
bad_says "fail: an endpoint down inside a slice" "^topocc: rank 3's endpoint 9 has failed: the job aborts" collective --topo torus:dims=8x8x8 --ranks 16 --place slice --fail host:9 --op allreduce --size 1MiB
bad_says "fail: an endpoint down inside a slice of the optical switches" "^topocc: rank 5's endpoint 9 has failed: the job aborts" collective --topo torus:dims=8x8x8 --ranks 64 --place slice:ocs=4 --fail host:9 --op allreduce --size 1MiB
bad_says "fail: an endpoint down inside a slice, with groups" "^topocc: rank 3's endpoint 9 has failed: the job aborts" collective --topo torus:dims=8x8x8 --ranks 16 --place slice --fail host:9 --op allreduce --size 1MiB --group axes=x
good "failures: a torus's drawn switches are routers" "0%, and 1 router)" failures --topo torus:dims=4x4 --fail-random switches=1,seed=1 --trials 2 --op allreduce --size 1MiB
good "failures: a torus's column of routers" "^topology  cables  of fabric  routers  healthy" failures --topo torus:dims=4x4 --fail-random switches=2,seed=1 --trials 2 --op allreduce --size 1MiB
bad_says "compare: a size is --sizes" "one size: --sizes 1MiB" compare --topo clos:down=8x8,up=1x8 --topo torus:dims=8x8,wrap=0x0 --op allreduce
good "compare: a mesh's corner and interior injection" "injection 25GB/s at a corner, 50GB/s inside" compare --topo clos:down=8x8,up=1x8 --topo torus:dims=8x8,wrap=0x0 --equalize injection=400Gbps --op allreduce --sizes 1MiB
good "transfers counted for a job filling a box of a torus" '"transfers": 32512' collective --topo torus:dims=8x8x4 --ranks 128 --place first --op allreduce --algo ring --size 1MiB --format json
# a routing not given is named as the mode's default (the mode alone changes it)
good "steps: ecmp named as the mode's default" "steps (routing ecmp: steps' and flow's default" collective --preset dgx-h100:nodes=2 --op allreduce --algo ring --size 256MiB --mode steps
good "formula: dmodk named as the mode's default" "formula (routing dmodk: formula's default" collective --preset dgx-h100:nodes=2 --op allreduce --algo ring --size 256MiB
# the figures docs/MODEL.md gives for it: one ECMP hash puts the two flows
# between the nodes on one spine, seed=3 draws them apart
good "formula: 10.13 ms under D-mod-k" "^time  *10.13ms$" collective --preset dgx-h100:nodes=2 --op allreduce --algo ring --size 256MiB
good "steps: 20.2 ms under one ECMP hash" "^time  *20.2ms$" collective --preset dgx-h100:nodes=2 --op allreduce --algo ring --size 256MiB --mode steps
good "steps: another hash, 10.13 ms" "^time  *10.13ms$" collective --topo "clos:down=2x8,up=1x2,bw=400Gbps,lat=50ns,hop_lat=300ns,node=8,node_bw=370.8GB/s,node_lat=250ns,node_hop_lat=0ns,node_reduce=1,rail=8,arch=hopper,alpha=1.1us,seed=3" --op allreduce --algo ring --size 256MiB --mode steps
good "a routing given is not" "^mode  *steps (routing ecmp)$" collective --topo clos:down=4x4,up=1x4 --routing ecmp --mode steps --op allreduce --size 1MiB
# draws faster than healthy are named as a routing change, and counted
# a one-rank job takes no time, healthy or not: slowdown 1 in every draw (it was 0/0: every statistic empty, the histogram short of the draws that ran)
good "failures: a one-rank job is not slowed down" "^A,2,0.125,0,0,5,0,1,1,1,1,1,1$" failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --ranks 1 --fail-random links=2,seed=1 --trials 5 --quiet --format csv
# a slowdown within 1e-9 below 1 is rounding: binned at 1, as faster_draws counts it (the histogram had 18 below 1 against 7 faster draws)
good "failures: the histogram's draws below 1 are the faster draws" '"histogram": \[7, 21, 2, 0,' failures --topo clos:down=8x8,up=1x4 --op broadcast --size 4MiB --mode flow --fail-random links=2,seed=5 --trials 30 --quiet --format json
good "failures: faster draws said to be a routing change" "draws ran faster than healthy .down to 0.7799x.: not a failure helping" failures --topo clos:down=8x8,up=1x4 --op broadcast --size 16MiB --fail-random links=2,seed=1 --trials 20
good "failures: and counted in the JSON" '"faster_draws": [1-9]' failures --topo clos:down=8x8,up=1x4 --op broadcast --size 16MiB --fail-random links=2,seed=1 --trials 20 --format json
# the draws take cables and switches that are up: with two of four uplink cables failed by --fail, every draw
# of the other two cuts the job off
good "failures: draws take only live cables" "^A              2        50%         0  169.2us    0     100%" failures --topo clos:down=4x2,up=1x2 --op allreduce --size 4MiB --trials 50 --fail link:16,20 --fail-random links=2,seed=1
bad_says "failures: more draws than live cables" "only 2 of the 4 eligible cables are up" failures --topo clos:down=4x2,up=1x2 --op allreduce --size 4MiB --trials 5 --fail link:16,20 --fail-random links=3,seed=1
bad_says "failures: more draws than live switches" "only 3 of the 4 fabric switches are up" failures --topo clos:down=4x2,up=1x2 --op allreduce --size 4MiB --trials 5 --fail switch:10 --fail-random switches=4,seed=1
# a misspelt key is named as such, not read as a spec that draws nothing
bad_says "failures: an unknown --fail-random key alone" "unknown key 'lnks' in --fail-random spec: accepted keys are links, switches, seed" failures --topo torus:dims=4x4 --op allreduce --size 64MiB --fail-random lnks=1,seed=1 --trials 5
"$T" failures --topo torus:dims=4x4 --op allreduce --size 64MiB --fail-random links=1,seed=3 --trials 5 --print-scenario |
    sed 's/"links=1,seed=3"/"lnks=1,seed=3"/' >"$tmp/fr_lnks.json"
grep -q '"lnks=1,seed=3"' "$tmp/fr_lnks.json" || { echo "FAIL (fr_lnks.json: fail_random not replaced)"; fails=$((fails + 1)); }
bad_says "replay: an unknown network.fail_random key" "network.fail_random: unknown key 'lnks'" replay "$tmp/fr_lnks.json"
bad_says "failures: a spec that draws nothing still says so" "draws nothing: give links=K" failures --topo torus:dims=4x4 --op allreduce --size 64MiB --fail-random seed=1 --trials 5
bad_says "--degrade: one link twice" "link 16 is degraded twice" collective --topo clos:down=4x2,up=1x2 --op allreduce --size 64MiB --algo ring --degrade link:16=0.5 --degrade link:16=0.5
# the healthy run's errors: "the network without the drawn failures" only for those the failures cause
bad_says "failures: --fail cuts the job off, said of the network" "^topocc: A: the network without the drawn failures: the failures cut " failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --fail-random links=1,seed=1 --trials 2 --fail switch:20,21,22,23
bad_says "failures: an algorithm that does not fit, with --fail, said of the request" "^topocc: A: algorithm 'torus' does not fit allreduce" failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --fail-random links=1,seed=1 --trials 2 --algo torus --fail link:40
bad_says "failures: a root beyond the ranks, with --fail, said of the request" "^topocc: A: invalid root 99: expected a rank from 0 to 15$" failures --topo clos:down=4x4,up=1x4 --op broadcast --algo ring:root=99 --size 1MiB --fail-random links=1,seed=1 --trials 2 --fail link:40
# hostlinks=1, nvlinks=1: the fraction is of every cable drawn from, so not "of fabric"
good "failures: hostlinks=1, the fraction of the cables drawn from" "a draw fails 4 of 32 fabric and host cables, 12.5%)" failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --fail-random links=4,seed=1,hostlinks=1 --trials 2
grep -q "^topology  cables  of eligible  switches" "$tmp/out" || { echo "FAIL: failures hostlinks=1: the fraction's column still reads of fabric"; fails=$((fails + 1)); }
good "failures: nvlinks=1 too" "a draw fails 4 of 48 fabric, host and node cables, 8.33%)" failures --preset dgx-h100:nodes=2 --op allreduce --size 1MiB --fail-random links=4,seed=1,nvlinks=1,hostlinks=1 --trials 2
good "failures: the fabric's cables alone" "^topology  cables  of fabric  switches" failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --fail-random links=4,seed=1 --trials 2
good "failures: a Clos's drawn switch" "0%, and 1 switch)" failures --topo clos:down=4x4,up=1x4 --fail-random switches=1,seed=1 --trials 2 --op allreduce --size 1MiB
good "failures: a drawn router inside a slice of the optical switches named as placed" "rank 7's endpoint 21 has failed" failures --topo torus:dims=4x4x4 --ranks 8 --place slice:ocs=2 --fail-random switches=4,seed=1 --trials 20 --op allreduce --size 1MiB
bad "fail-random: more than 100%" collective --topo "$CLOS" --op allreduce --size 1MiB --fail-random links=120%
# a share that rounds to no cable: the least that gives one, to 3 digits
# (131,072 cables: 50/131072 = 0.000381%; it said 0.001%, 1.3 cables, and
# 10 cables at a million), and a topology with no cable to draw
bad_says "fail-random: a share of no cable" "give at least 0.000382% (one cable)" failures --topo clos:hosts=65536,radix=64,tiers=3 --fail-random links=0.0001% --trials 2 --op allreduce --size 1MiB
bad_says "fail-random: a share of no cables at all" "the topology has no eligible cables" collective --topo clos:down=4,up=1 --op allreduce --size 1MiB --fail-random links=1%
printf '{"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"], "sizes": [1024, 2048, "1KiB"]}}' "$CLOS" >"$tmp/dupsizes.json"
bad_says "a size listed twice in a scenario" "collective.sizes\[2\]: size 1KiB listed twice (also \[0\]): give each size once" collective --scenario "$tmp/dupsizes.json"
printf '{"command": "failures", "network": {"topo": ["%s"], "fail_random": "links=0"}, "collective": {"op": ["allreduce"], "sizes": [65536]}}' "$CLOS" >"$tmp/frs.json"
bad_says "fail-random in a scenario file: named as its key" "scenario .*frs.json: network.fail_random: 'links=0': draws nothing" failures --scenario "$tmp/frs.json"
bad_says "fail-random as a flag: named as the flag" "^topocc: --fail-random 'links=0': draws nothing" failures --topo "$CLOS" --op allreduce --size 64KiB --fail-random links=0
bad "fail-random: more cables than the fabric has" collective --topo "$CLOS" --op allreduce --size 1MiB --fail-random links=65
bad "degrade: a factor of 0 points to --fail" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:3=0
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:3=0 2>&1 | grep -q -- "--fail link:ID" || { echo "FAIL: degrade 0 does not point to --fail"; fails=$((fails + 1)); }
good "fail: routes around, the line says what is down" "failures .*2 of 64 fabric cables down (3.12%)" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --fail link:128,link:130
# a bare ID in --fail's list takes the kind before it
good "fail: link:128,130 is link:128,link:130" "failures .*2 of 64 fabric cables down (3.12%)" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --fail link:128,130
good "fail: link:128,130,132 in the scenario" '"fail": \["link:128", "link:130", "link:132", "switch:64", "switch:65", "host:5"\]' collective --topo "$CLOS" --op allreduce --size 1MiB --fail link:128,130,132,switch:64,65,host:5 --endpoints 8-15 --print-scenario
bad_says "fail: a bare ID first" "a bare ID takes the kind before it" collective --topo "$CLOS" --op allreduce --size 1MiB --fail 128,link:130
bad "fail: a bare ID does not carry to the next --fail" collective --topo "$CLOS" --op allreduce --size 1MiB --fail link:128 --fail 130
good "fail-random: the draw is printed" "drawn: cables" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --fail-random links=5%,seed=4
good "fail-random: in the JSON" '"drawn_cables"' collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --fail-random links=5%,seed=4 --format json
bad_says "fail: a ring with a cable down under detour points to line" "routing detour; the job cannot run as placed (--routing line goes the other way round the ring)$" collective --topo torus:dims=8 --op allreduce --algo ring --size 1MiB --fail link:0
bad_says "fail: the same in flow mode" "(--routing line goes the other way round the ring)$" collective --topo torus:dims=8 --op allreduce --algo ring --size 1MiB --fail link:0 --mode flow
good "fail: torus detour named" "routing detour" collective --topo torus:dims=4x4 --op allreduce --size 1MiB --mode steps --fail link:0
# the event budget bounds the simulated events; a 64-rank ring folds to
# one rank, and the events printed for all ranks pass the budget
good "flow: the events for all ranks and the simulated ones" "^events  *576 for all ranks, 9 simulated (what --event-budget bounds" collective --topo torus:dims=64 --op allreduce --algo ring --size 1MiB --mode flow --event-budget 1000 --quiet
good "flow: events_simulated in the JSON" '"events_simulated": 9,' collective --topo torus:dims=64 --op allreduce --algo ring --size 1MiB --mode flow --event-budget 1000 --quiet --format json
bad_says "flow: a budget below the simulated events" "exceeded the event budget of 8 events" collective --topo torus:dims=64 --op allreduce --algo ring --size 1MiB --mode flow --event-budget 8 --quiet
# flow bounds: a one-step schedule bounded, not simulated; what cannot be
# bounded is refused with why
good "flow bounds: the interval" "^bounds  *not simulated (--flow-bounds): the simulation's time lies in \[" collective --topo "$CLOS" --op alltoall --algo direct --size 16MiB --mode flow --flow-bounds
good "flow bounds: the upper end in the CSV" 'bounds_upper_s' collective --topo "$CLOS" --op alltoall --algo direct --size 16MiB --mode flow --flow-bounds --format csv
good "flow bounds: both ends in the JSON" '"upper_s"' collective --topo "$CLOS" --op alltoall --algo direct --size 16MiB --mode flow --flow-bounds --format json
good "flow bounds: recorded in the scenario" '"bounds": true' collective --topo "$CLOS" --op alltoall --algo direct --size 16MiB --mode flow --flow-bounds --print-scenario
good "flow bounds: failures say the times are lower ends" "mode flow, bounded" failures --topo "$CLOS" --op alltoall --algo direct --size 16MiB --mode flow --flow-bounds --fail-random links=1,seed=2 --trials 3
bad_says "flow bounds: a schedule of many steps" "one step" collective --topo "$CLOS" --op allreduce --algo ring --size 16MiB --mode flow --flow-bounds
bad_says "flow bounds: --algo all" "one step" collective --topo "$CLOS" --op alltoall --algo all --size 16MiB --mode flow --flow-bounds
good "flow bounds: the sizes table's upper end" "upper end" collective --topo "$CLOS" --op alltoall --algo direct --sizes 1MiB:4MiB --mode flow --flow-bounds
good "flow bounds: compare's CSV has the upper end" 'bounds_upper_s' compare --topo "$CLOS" --topo torus:dims=8x8 --op alltoall --algo direct --sizes 1MiB:1MiB --mode flow --flow-bounds --format csv
good "flow bounds: compare says when the order is not settled" "order there is not settled" compare --topo "$CLOS" --topo clos:down=8x8,up=1x4,bw=400Gbps,lat=1us --op alltoall --algo direct --sizes 1MiB:1MiB --mode flow --flow-bounds
good "flow bounds: the ranking's upper end" 'upper end' collective --topo "$CLOS" --op alltoall --algo direct,scattered:throttle=0 --size 1MiB --mode flow --flow-bounds
good "flow bounds: false is recorded in flow mode" '"bounds": false' collective --topo "$CLOS" --op alltoall --algo direct --size 1MiB --mode flow --print-scenario
good "flow bounds: each JSON result's upper end" '"bounds_upper_s"' collective --topo "$CLOS" --op alltoall --algo direct --sizes 1MiB:4MiB --mode flow --flow-bounds --format json
bad_says "flow bounds: auto" "one named algorithm" collective --topo "$CLOS" --op alltoall --size 16MiB --mode flow --flow-bounds
bad_says "flow bounds: outside flow mode" "applies only with --mode flow" collective --topo "$CLOS" --op alltoall --algo direct --size 16MiB --flow-bounds
bad_says "flow bounds: NCCL's protocols" "NCCL's protocols" collective --preset dgx-h100:nodes=2 --op alltoall --algo nccl --size 16MiB --mode flow --flow-bounds
bad "flow bounds: concurrent runs several jobs" concurrent --topo "$CLOS" --jobs /dev/null --flow-bounds
good "failures: Monte Carlo per topology" "slowdown histogram" failures --topo "$CLOS" --topo torus:dims=8x8 --op allreduce --size 16MiB --algo ring --mode steps --fail-random links=2,seed=5 --trials 20
good "failures: JSON quantiles and histogram" '"p99"' failures --topo "$CLOS" --op allreduce --size 16MiB --algo ring --mode steps --fail-random links=2,seed=5 --trials 5 --format json
bad "fail-random: a percentage that rounds to no cable" failures --topo "$CLOS" --op allreduce --size 16MiB --fail-random links=0.7%,seed=1 --trials 3
good "fail-random: the smallest percentage it names draws one" "a draw fails 1 of 64" failures --topo "$CLOS" --op allreduce --size 16MiB --fail-random links=0.782%,seed=1 --trials 3
bad "fail-random: a seed above 2^64 - 1" failures --topo "$CLOS" --op allreduce --size 16MiB --fail-random links=1,seed=18446744073709551616 --trials 3
bad "fail-random: nvlinks=1 without nodes" failures --topo "$CLOS" --op allreduce --size 16MiB --fail-random links=1,nvlinks=1 --trials 3
bad "failures: no draw" failures --topo "$CLOS" --op allreduce --size 16MiB
bad "failures: trials 0" failures --topo "$CLOS" --op allreduce --size 16MiB --fail-random links=2 --trials 0
bad "failures: two sizes" failures --topo "$CLOS" --op allreduce --sizes 1MiB:16MiB --fail-random links=2
"$T" failures --topo "$CLOS" --op allreduce --size 16MiB --algo ring --mode steps --fail-random links=3,seed=9 --trials 10 --format json >"$tmp/f1.json"
"$T" failures --topo "$CLOS" --op allreduce --size 16MiB --algo ring --mode steps --fail-random links=3,seed=9 --trials 10 --format json >"$tmp/f2.json"
cmp -s "$tmp/f1.json" "$tmp/f2.json" || { echo "FAIL: failures does not reproduce from its seed"; fails=$((fails + 1)); }
"$T" replay "$tmp/f1.json" --format json >"$tmp/f3.json" 2>/dev/null
cmp -s "$tmp/f1.json" "$tmp/f3.json" || { echo "FAIL: failures does not replay"; fails=$((fails + 1)); }
bad "hier on a placement that splits its nodes" collective --topo clos:down=8x8,up=1x8,node=8 --ranks 16 --place random:seed=3 --algo hier --op allreduce --size 64MiB --mode steps
good "auto leaves hier out where the placement splits nodes" "direct (chosen by auto)" collective --topo clos:down=8x8,up=1x8,node=8 --ranks 16 --place random:seed=3 --op allreduce --size 64MiB --mode steps
good "hier on whole nodes the job got" "hier" collective --topo clos:down=8x8,up=1x8,node=8 --ranks 16 --place packed --algo hier --op allreduce --size 64MiB --mode steps
good "a torus algorithm on the job's slice" "^time         2.69ms" collective --topo torus:dims=8x8x8 --ranks 64 --place slice --algo torus-bi --op allreduce --size 64MiB --mode steps
good "auto on a slice considers the torus algorithms" "torus-mp (chosen by auto)" collective --topo torus:dims=8x8x8 --ranks 64 --place slice --op allreduce --size 64MiB --mode steps
good "the same as the explicit one-group form" "^time          2.69ms" collective --topo torus:dims=8x8x8 --ranks 64 --place slice --algo torus-bi --op allreduce --size 64MiB --mode steps --group axes=xyz
# a slice the optical switches close (slice:ocs=K, extents multiples of K) is a torus of its own in every
# command: torus-bi on a 4x4x4 slice of 8x8x8 takes the 4x4x4 torus's 1.364ms (64MiB, steps); without
# ocs the slice runs on the topology, its rings' way back along the line (2.69ms), in compare, failures
# and concurrent as in collective
good "an OCS slice is its own torus" "^time         1.364ms" collective --topo torus:dims=8x8x8 --ranks 64 --place slice:ocs=4 --algo torus-bi --op allreduce --size 64MiB --mode steps
good "an OCS slice says where it runs" "the job runs on the slice's own torus, torus:dims=4x4x4" collective --topo torus:dims=8x8x8 --ranks 64 --place slice:ocs=4 --op allreduce --size 1MiB
good "compare: an OCS slice ties the standalone torus" "64MiB  1.364ms  torus-bi  1.364ms  torus-bi    1" compare --topo torus:dims=8x8x8 --topo torus:dims=4x4x4 --ranks 64 --place slice:ocs=4 --algo torus-bi --op allreduce --sizes 64MiB:64MiB --mode steps
good "compare: a slice runs on its torus" "^64MiB  2.69ms  torus-bi" compare --topo torus:dims=8x8x8 --ranks 64 --place slice --algo torus-bi --op allreduce --sizes 64MiB:64MiB --mode steps
good "failures: an OCS slice, healthy as collective" "^A .*  1.364ms  " failures --topo torus:dims=8x8x8 --ranks 64 --place slice:ocs=4 --algo torus-bi --op allreduce --size 64MiB --mode steps --fail-random links=2,seed=1 --trials 5
good "failures: a slice, healthy as collective" "^A .*  2.69ms  " failures --topo torus:dims=8x8x8 --ranks 64 --place slice --algo torus-bi --op allreduce --size 64MiB --mode steps --fail-random links=2,seed=1 --trials 5
printf '{"jobs": [{"name": "line", "op": "allreduce", "algo": "torus-bi", "size": "64MiB", "place": "slice:shape=4x4x4"}, {"name": "ocs", "op": "allreduce", "algo": "torus-bi", "size": "64MiB", "place": "slice:shape=4x4x4,ocs=4"}, {"name": "x", "op": "allreduce", "algo": "ring", "size": "64MiB", "endpoints": "0-3"}]}' >"$tmp/ocs.json"
good "concurrent: an OCS job alone, slowdown 1" "^ocs   allreduce  torus-bi     64  64MiB    0ns  1.364ms  1.364ms    1.000x" concurrent --topo torus:dims=8x8x8 --jobs "$tmp/ocs.json"
good "concurrent: an OCS job shares no link" "sharing no link with other jobs" concurrent --topo torus:dims=8x8x8 --jobs "$tmp/ocs.json"
good "concurrent: a slice alone on its torus (2.669ms), slowed by a job on its links" "^line  allreduce  torus-bi     64  64MiB    0ns  3.678ms  2.669ms    1.378x" concurrent --topo torus:dims=8x8x8 --jobs "$tmp/ocs.json"
good "ocs with extents not its multiples is reported, not refused" "ocs=4: not every extent is a multiple of 4, so the optical switches add no wraparound" collective --topo torus:dims=8x8x8 --ranks 16 --place slice:ocs=4 --op allreduce --size 1MiB
bad "an OCS slice that cuts the scale-up nodes" collective --topo torus:dims=8x8x8,node=8 --ranks 64 --place slice:ocs=4 --op allreduce --size 1MiB
bad "compare: a slice shape that does not fit" compare --topo torus:dims=4x4x4 --place slice:shape=2x2x8,ocs=2 --op allreduce --sizes 1MiB:1MiB
bad "failures: a slice shape that does not fit" failures --topo torus:dims=4x4x4 --place slice:shape=2x2x8,ocs=2 --op allreduce --size 1MiB --fail-random links=1,seed=1
printf '{"jobs": [{"name": "big", "op": "allreduce", "size": "1MiB", "place": "slice:shape=2x2x8,ocs=2"}]}' >"$tmp/ocsbad.json"
bad "concurrent: a slice shape that does not fit" concurrent --topo torus:dims=4x4x4 --jobs "$tmp/ocsbad.json"
# concurrent jobs run NCCL's algorithms as collective does: over groups on the
# groups' communicator view, NVLS where the node switches reduce; the
# makespan covers the protocol's base latency, as the jobs' times do
printf '{"jobs":[{"name":"A","op":"allreduce","algo":"nccl","size":"256MiB","endpoints":"0-31","group":"block=8"}]}' >"$tmp/ncj1.json"
good "concurrent: NCCL over groups" "^A    allreduce  nccl     32  256MiB    0ns  1.081ms" concurrent --preset dgx-h100:nodes=4 --jobs "$tmp/ncj1.json"
printf '{"jobs":[{"name":"A","op":"allreduce","algo":"nccl-nvls","size":"256MiB","endpoints":"0-7"},{"name":"B","op":"allreduce","algo":"nccl-nvls-tree","size":"256MiB","endpoints":"8-31"}]}' >"$tmp/ncj2.json"
good "concurrent: nccl-nvls and nccl-nvls-tree jobs" "^makespan 1.[0-9]*ms" concurrent --preset dgx-h100:nodes=4 --jobs "$tmp/ncj2.json"
good "concurrent: the makespan covers NVLS's base latency" "^makespan 1.081ms" concurrent --preset dgx-h100:nodes=4 --jobs "$tmp/ncj1.json"
bad "concurrent: nccl-nvls where the node switches do not reduce" concurrent --topo clos:down=8x8,up=1x8,node=8 --jobs "$tmp/ncj2.json"
# and place them as collective does: rank r on GPU r mod 8 of a node, whole nodes
printf '{"jobs":[{"name":"spread","op":"allreduce","algo":"nccl","size":"64MiB","endpoints":"0,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120"}]}' >"$tmp/ncj3.json"
bad_says "concurrent: an NCCL job on one GPU per node" "jobs\[0\] (spread): nccl takes rank r as GPU r mod 8 of a node.*place whole nodes" concurrent --preset dgx-h100:nodes=16 --jobs "$tmp/ncj3.json"
printf '{"jobs":[{"name":"half","op":"allreduce","algo":"hier","size":"64MiB","endpoints":"0-3,8-11,16-19,24-27"}]}' >"$tmp/ncj4.json"
bad_says "concurrent: a hier job on half nodes" "jobs\[0\] (half): hier takes ranks r .. r+7 as one node's" concurrent --preset dgx-h100:nodes=4 --jobs "$tmp/ncj4.json"
# flow's hottest links are the busiest for their bandwidth: an all-to-all across
# DGX nodes is bound by the NICs (98% busy), not the NVLinks that carry more bytes
good "flow: the hottest link is the busiest NIC" "^hottest links  host 0 -> leaf 0 (link 0): 48MiB, 97.8% busy" collective --preset dgx-h100:nodes=4 --op alltoall --size 64MiB --algo nccl --mode flow
bad "NCCL over groups: the flow memory estimate applies" collective --preset dgx-h100:nodes=4 --group stride=8 --algo nccl --op allreduce --size 64MiB --mode flow --mem-limit 1KiB
bad "preset: sharp=2" collective --preset dgx-h100:nodes=2,sharp=2 --op allreduce --algo nccl --size 64MiB
# channel counts from the environment (docs/MODEL.md, "NCCL's choice"): the
# smaller maximum truncates, then the larger minimum duplicates
ch_env() { # ENV... -- PATTERN: the channels NCCL's ring takes at 1 GiB on 2 DGX H100
    want=$1; shift
    env "$@" "$T" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl:algo=Ring --size 1GiB >"$tmp/chenv.txt" 2>&1
    grep -q "^algorithm *nccl:Ring,Simple,${want}ch" "$tmp/chenv.txt" ||
        { echo "FAIL: channels with $*: expected ${want}ch, got $(grep '^algorithm\|topocc:' "$tmp/chenv.txt")"; fails=$((fails + 1)); }
}
ch_env 16
ch_env 24 NCCL_MIN_CTAS=24
ch_env 4 NCCL_MAX_CTAS=4
ch_env 8 NCCL_MIN_CTAS=24 NCCL_MAX_CTAS=8
ch_env 6 NCCL_MAX_NCHANNELS=12 NCCL_MAX_CTAS=6
ch_env 20 NCCL_MIN_NCHANNELS=20 NCCL_MIN_CTAS=18
ch_env 20 NCCL_MIN_NRINGS=20
ch_env 16 NCCL_MIN_NCHANNELS=0 NCCL_MIN_NRINGS=20
ch_env 10 NCCL_MAX_NRINGS=10
ch_env 4 NCCL_MAX_NRINGS=10 NCCL_MAX_NCHANNELS=4
ch_env 12 NCCL_MAX_NCHANNELS=4 NCCL_MIN_NCHANNELS=12
ch_env 8 NCCL_MAX_CTAS=4 NCCL_MIN_NCHANNELS=8
export NCCL_MIN_CTAS=24
good "NCCL_MIN_CTAS is recorded in the spec" "nccl:algo=Ring,mincta=24" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl:algo=Ring --size 1GiB --print-scenario
unset NCCL_MIN_CTAS
algo_saved=${NCCL_ALGO-}
unset NCCL_ALGO
export NCCL_MAX_CTAS=2
good "NCCL_MAX_CTAS bounds NVLS's channels (nvls.cc:259)" "^algorithm *nccl:NVLS,Simple,2ch" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB
unset NCCL_MAX_CTAS
export NCCL_MIN_CTAS=24
good "NCCL_MIN_CTAS raises NVLS's channels (nvls.cc:259)" "^algorithm *nccl:NVLS,Simple,24ch" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB
unset NCCL_MIN_CTAS
good "CollNet's channels: the graph's plus a half, then maxch (connect.cc:447-452, 465-469)" "^algorithm *nccl-collnet-direct:Simple,8ch" collective --preset dgx-a100:nodes=4,sharp=1 --op allreduce --size 1GiB --algo nccl-collnet-direct:maxch=8
good "maxch changes the channels run, not NCCL's choice (the graph's channels)" "^algorithm *nccl:CollNetDirect,Simple,8ch" collective --preset dgx-a100:nodes=4,sharp=1 --op allreduce --size 1GiB --algo nccl:maxch=8
good "LL128's ring cap is per channel: maxch=2 runs 2 of the node's 24 (12 x 36.7 x 2/24 GB/s)" "^busbw *36.67GB/s" collective --preset dgx-h100 --op allreduce --size 1GiB --algo nccl-ring:proto=LL128,maxch=2
good "--phases of a chain: lock step's phases, a pipeline's time, said" "it is not their sum" collective --preset dgx-h100:nodes=2 --op broadcast --algo nccl-ring --size 64MiB --phases
good "broadcast chains over sub-groups are pipelines too (as 2 nodes alone)" "^time *731.5us (the slowest group)" collective --preset dgx-a100:nodes=4 --op broadcast --algo nccl-ring --size 64MiB --group block=16
good "LL128's ring on one H100 node: 12 search channels x 36.7 GB/s do not bind, NVLink at 120/128 does" "^busbw *345GB/s" collective --preset dgx-h100 --op allreduce --size 1GiB --algo nccl-ring:proto=LL128
export NCCL_ALGO=NVLS NCCL_PROTO=LL NCCL_NVLS_ENABLE=0
good "NCCL_NVLS_ENABLE=0 with NCCL_ALGO=NVLS across nodes: Ring and Tree on again, NCCL_PROTO kept" "^algorithm *nccl:Ring,LL,16ch" collective --preset dgx-h100:nodes=2 --op allreduce --size 1GiB --algo nccl
unset NCCL_ALGO NCCL_PROTO NCCL_NVLS_ENABLE
good "--group keeps the algorithm's NCCL options (algo=); a node's 24 channels" "^algorithm *nccl:Ring,Simple,24ch" collective --preset dgx-h100:nodes=2 --op allreduce --size 1GiB --algo nccl:algo=Ring --group node
bad "nccl-tests: an empty option value" nccl-tests --preset dgx-h100 --group ""
bad "--profiles: no such directory" collective --profiles /nonexistent --preset dgx-h100 --op allreduce --size 1MiB
bad "--profiles: a file, not a directory" collective --profiles /etc/passwd --preset dgx-h100 --op allreduce --size 1MiB
bad "a rate below 1 bit/s" collective --topo "clos:down=4x4,up=1x4,bw=1e-302Gbps" --op allreduce --size 1MiB
bad "nccl-tests: -e above 2^60 bytes" nccl-tests --preset dgx-h100 -b 1G -e 1e22 -f 1000
# a size beyond the 2^31 chunks of NCCL's schedules: the size and the largest accepted, in NCCL's terms
bad_says "nccl-tests: a broadcast beyond NCCL's ring's chunks" "^topocc: broadcast of 1125899906842624 B (1PiB) is more than topocc models with NCCL's Ring algorithm and Simple protocol: at most 1125899898454016 B (1023.99TiB) for broadcast" nccl-tests --preset dgx-h100:nodes=2 --op broadcast -b 1048576G -e 1048576G
good "nccl-tests: the largest broadcast NCCL's ring takes" "^1125899898454016 " nccl-tests --preset dgx-h100:nodes=2 --op broadcast -b 1125899898454016 -e 1125899898454016
bad_says "nccl-tests: an all-reduce beyond NVLSTree's chunks" "allreduce of 1125899906842624 B (1PiB) is more than topocc models with NCCL's NVLSTree algorithm and Simple protocol: at most 281474959933440 B" nccl-tests --preset dgx-h100:nodes=2 -b 1048576G -e 1048576G
bad_says "collective: PAT beyond its steps" "allgather of 109951162777600 B (100TiB) is more than topocc models with NCCL's PAT algorithm and Simple protocol: at most 36319317196800 B (33.03TiB) for allgather with it (2^24 steps)" collective --topo clos:down=8x4,up=1x4 --op allgather --algo nccl-pat --size 100TiB
bad_says "collective: CollNetChain beyond its chunks" "NCCL's CollNetChain algorithm and Simple protocol: at most 562949949227008 B (511.99TiB)" collective --preset dgx-h100:nodes=2,sharp=1 --op allreduce --algo nccl-collnet-chain --size 1000TiB
bad "nccl-tests --compare: a NUL byte (/dev/zero never ends)" nccl-tests --preset dgx-h100 --compare /dev/zero
bad "report: a NUL byte (/dev/zero never ends)" report /dev/zero -o "$tmp/rep_zero"
good "--group node --phases with NCCL's choice: built on the communicator's view" "it is not their sum" collective --preset dgx-a100:nodes=2 --op broadcast --size 4MiB --algo nccl --group node --phases
good "--group node --phases of NCCL's all-reduce" "^phase  label" collective --preset dgx-a100:nodes=2 --op allreduce --size 4MiB --algo nccl --group node --phases
good "--group keeps the algorithm's NCCL options (nvls=0); a node's 24 channels" "^algorithm *nccl:Ring,Simple,24ch" collective --preset dgx-h100:nodes=2 --op allreduce --size 1GiB --algo nccl:nvls=0 --group node
export NCCL_NVLS_ENABLE=0
good "NCCL_NVLS_ENABLE=0 holds over groups (as nccl-tests -g below the node runs)" "^algorithm *nccl:Ring,Simple" collective --preset dgx-h100:nodes=2 --op allreduce --size 1GiB --algo nccl --group block=8
unset NCCL_NVLS_ENABLE
export NCCL_MAX_NCHANNELS=2
good "NCCL_MAX_NCHANNELS leaves NVLS's channels" "^algorithm *nccl:NVLS,Simple,16ch" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB
unset NCCL_MAX_NCHANNELS
[ -n "$algo_saved" ] && export NCCL_ALGO="$algo_saved"
export NCCL_MAX_CTAS=40
bad "NCCL_MAX_CTAS above NCCL's 32 channels" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB
unset NCCL_MAX_CTAS
export NCCL_MIN_NCHANNELS=x
bad "NCCL_MIN_NCHANNELS not a number" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB
unset NCCL_MIN_NCHANNELS
export NCCL_ALGO=NVLS
good "nccl: NCCL_ALGO=NVLS across nodes without SHARP turns Ring and Tree on, as NCCL" "^algorithm *nccl:Tree,LL,1ch" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 8
good "nccl: NCCL_ALGO=NVLS on a node that cannot reduce: the ring" "^algorithm *nccl:Ring,LL,1ch" collective --preset dgx-a100 --op allreduce --algo nccl --size 8
export NCCL_PROTO=LL
good "nccl: NCCL_ALGO=NVLS with Simple excluded: the ring" "^algorithm *nccl:Ring,LL,1ch" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
good "nccl: nothing available: the ring with every protocol, NCCL_PROTO notwithstanding (1 GiB: Simple)" "^algorithm *nccl:Ring,Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB
good "nccl: NVLS on a node that cannot reduce, NCCL_PROTO=LL: the ring with every protocol" "^algorithm *nccl:Ring,Simple" collective --preset dgx-a100 --op allreduce --algo nccl --size 1GiB
export NCCL_NVLS_ENABLE=0
good "nccl: NCCL_ALGO=NVLS with NCCL_NVLS_ENABLE=0 and NCCL_PROTO=LL: the ring with every protocol" "^algorithm *nccl:Ring,Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 1GiB
unset NCCL_NVLS_ENABLE
unset NCCL_PROTO
export NCCL_ALGO=NVLS
good "nccl: NCCL_ALGO=NVLS is honoured" "nccl:NVLS,Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
export NCCL_NVLS_ENABLE=0
good "nccl: NCCL_NVLS_ENABLE=0 with NCCL_ALGO=NVLS leaves the ring" "nccl:Ring" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
unset NCCL_ALGO
good "nccl: NCCL_NVLS_ENABLE=0 turns NVLSTree off (the ring at 1 GiB)" "nccl:Ring,Simple" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB
good "nccl: NCCL_NVLS_ENABLE=0 is recorded in the spec" "nccl:nvls=0" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB --print-scenario
export NCCL_NVLS_ENABLE=2
good "nccl: NCCL_NVLS_ENABLE=2 (NCCL's default) keeps NVLSTree" "nccl:NVLSTree,Simple" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB
export NCCL_NVLS_ENABLE=yes
bad "nccl: NCCL_NVLS_ENABLE not an integer" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB
unset NCCL_NVLS_ENABLE
export NCCL_ALGO=NVLS
bad "nccl-nvls: all-gather across nodes (NCCL 2.21.5 runs it on one node only)" collective --preset dgx-h100:nodes=2,sharp=1 --op allgather --algo nccl-nvls --size 1MiB
for op in allgather reducescatter; do
    if ! "$T" collective --preset dgx-h100:nodes=8,sharp=1 --op $op --algo nccl --sizes 16KiB:8GiB:4 >"$tmp/nvlsag.txt" 2>&1 ||
        grep -q "nccl:NVLS," "$tmp/nvlsag.txt"; then
        echo "FAIL: NCCL's choice takes NVLS for $op across nodes (or fails)"; fails=$((fails + 1))
    fi
done
export NCCL_ALGO=Tree
good "nccl: NCCL_ALGO=Tree is honoured" "nccl:Tree,LL" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 8
unset NCCL_ALGO
good "nccl: algo=Ring in the spec is honoured" "nccl:Ring,LL" collective --preset dgx-h100:nodes=4 --op allreduce --algo nccl:algo=Ring --size 8
good "nccl: NCCL's model takes the tree for 8 B over 4 nodes" "nccl:Tree,LL" collective --preset dgx-h100:nodes=4 --op allreduce --algo nccl --size 8
export NCCL_PROTO=Fast
bad "nccl: a bad NCCL_PROTO" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
unset NCCL_PROTO
export NCCL_PROTO=^LL
good "nccl: NCCL_PROTO=^LL is honoured and recorded" "proto=LL128|Simple" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
# '^' alone excludes nothing, for NCCL_PROTO as for NCCL_ALGO (NCCL's parseList)
export NCCL_PROTO=^
good "nccl: NCCL_PROTO=^ allows every protocol" "algo=nccl:proto=LL|LL128|Simple " collective --preset dgx-h100 --op allreduce --algo nccl --size 8
unset NCCL_PROTO
export NCCL_ALGO=^
good "nccl: NCCL_ALGO=^ allows every algorithm (NCCL's default)" "algo=nccl sizes=" collective --preset dgx-h100 --op allreduce --algo nccl --size 8
unset NCCL_ALGO
bad "nccl-ring: two protocols" collective --preset dgx-h100 --op allreduce --algo "nccl-ring:proto=LL|Simple" --size 8
bad "nccl-nvls: node switches that do not reduce" collective --preset dgx-a100 --op allreduce --algo nccl-nvls --size 1GiB
bad "nccl-nvls across nodes" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl-nvls --size 1GiB
good "nccl-nvls on one DGX H100" "nccl-nvls:Simple,16ch" collective --preset dgx-h100 --op allreduce --algo nccl-nvls --size 1GiB
good "nccl picks NVLSTree on two DGX H100" "nccl:NVLSTree,Simple" collective --preset dgx-h100:nodes=2 --op allreduce --algo nccl --size 1GiB

# --- collectives over sub-groups (--group) ---
NODES="clos:down=8x8,up=1x8,node=8"
bad "group: stride not dividing the ranks" collective --topo "$NODES" --op allreduce --size 1MiB --group stride=5
bad "group: node without scale-up nodes" collective --topo "$CLOS" --op allreduce --size 1MiB --group node
bad "group: axes on a Clos" collective --topo "$NODES" --op allreduce --size 1MiB --group axes=x
bad "group: groups of 1 rank" collective --topo "$NODES" --op allreduce --size 1MiB --group stride=64
bad "group: nodes holding unequal ranks" collective --topo "$NODES" --op allreduce --size 1MiB --group node --ranks 12
bad "group: axes off a slice" collective --topo torus:dims=4x4 --op allreduce --size 1MiB --group axes=x --ranks 6
bad "group: a dimension the torus lacks" collective --topo torus:dims=4x4 --op allreduce --size 1MiB --group axes=z
bad "group: unknown spec" collective --topo "$NODES" --op allreduce --size 1MiB --group rows
good "group: NCCL's ring in every node" "nccl-ring:Simple" collective --topo "$NODES" --op allreduce --size 1MiB --group node --algo nccl-ring
bad "group: NCCL over groups holding unequal shares of nodes" collective --topo "$NODES" --op allreduce --size 1MiB --ranks 12 --group stride=6 --algo nccl-ring
bad "group: root beyond the group" collective --topo "$NODES" --op broadcast --algo binomial:root=9 --size 1MiB --group node
bad "group: not a concurrent flag (a job's group key)" concurrent --topo "$NODES" --jobs /dev/null --group node
good "group: the groups in the text" "8 groups of 8 ranks" collective --topo "$NODES" --op allreduce --size 1MiB --group stride=8 --quiet
good "group: lock step in formula" "the slowest group only" collective --topo "$NODES" --op allreduce --size 1MiB --group node --quiet
good "group: each group's finish in flow" "spread" collective --topo torus:dims=4x4x4 --op allgather --size 1MiB --group axes=x --mode flow --quiet
good "group: groups in the JSON" '"fastest_s"' collective --topo "$NODES" --op allreduce --size 1MiB --group stride=8 --mode flow --format json --quiet
good "group: the canonical spec in the scenario" '"group": "axes=xz"' collective --topo torus:dims=4x4x4 --op allreduce --size 1MiB --group axes=zx --print-scenario
good "group: CSV columns" "group_fastest_s" collective --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group node --format csv --quiet
"$T" collective --topo "$NODES" --op allreduce --size 1MiB --group stride=8 --mode flow --out "$tmp/g.json" --quiet >/dev/null 2>&1
good "group: replay gives the same groups" '"count": 8' replay "$tmp/g.json" --format json --quiet
# rail-optimized: every stride group on its own rail, one group's time alone
gt=$("$T" collective --topo "$NODES,rail=8" --op allreduce --algo ring --size 64MiB --group stride=8 --format json --quiet | grep '"time_s"')
at=$("$T" collective --topo "$NODES,rail=8" --op allreduce --algo ring --size 64MiB --endpoints 0,8,16,24,32,40,48,56 --format json --quiet | grep '"time_s"')
if [ -z "$gt" ] || [ "$gt" != "$at" ]; then
    echo "FAIL (group: rail groups equal one group alone): '$gt' against '$at'"
    fails=$((fails + 1))
fi

# --group in compare: each cell is collective --group on that topology
TOR="torus:dims=4x4x4"
bad "group: compare, node on a topology without nodes" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group node
"$T" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group node 2>"$tmp/err" >/dev/null
grep -q "topology A (torus:dims=4x4x4" "$tmp/err" || { echo "FAIL: compare --group node does not name the torus: $(cat "$tmp/err")"; fails=$((fails + 1)); }
bad "group: compare, axes on the Clos" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group axes=x
bad "group: compare, a stride not dividing the ranks" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group stride=6
good "group: compare, NCCL's ring in every node" "8 groups of 8 ranks" compare --topo "$TOR,node=8" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group node --algo nccl-ring
good "group: compare says per group" "8 groups of 8 ranks" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group stride=8 --quiet
good "group: compare CSV columns" "group_size" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group stride=8 --format csv --quiet
for m in formula steps flow; do
    # results by size, then topology: the Clos (B) is every second one
    ct=$("$T" compare --topo "$TOR" --topo "$CLOS" --op allreduce --algo ring --sizes 1MiB:4MiB --group stride=8 --mode $m --format json --quiet | grep '"time_s"' | awk 'NR % 2 == 0' | tr -d ' ,')
    lt=$("$T" collective --topo "$CLOS" --op allreduce --algo ring --sizes 1MiB:4MiB --group stride=8 --mode $m --format json --quiet | grep '"time_s"' | tr -d ' ,')
    if [ -z "$ct" ] || [ "$ct" != "$lt" ]; then
        echo "FAIL (group: compare $m cell equals collective --group on the Clos): '$ct' against '$lt'"
        fails=$((fails + 1))
    fi
done
"$T" compare --topo "$TOR" --topo "$NODES" --op allreduce --sizes 1MiB:4MiB --group stride=8 --format json --quiet >"$tmp/cg.json" 2>"$tmp/err"
"$T" replay "$tmp/cg.json" --format json --quiet >"$tmp/cg2.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/cg.json" "$tmp/cg2.json" || ! grep -q '"group": "stride=8"' "$tmp/cg.json" || [ -s "$tmp/err" ]; then
    echo "FAIL: compare --group does not replay to itself with its group recorded"
    fails=$((fails + 1))
fi
# a job's group in concurrent
printf '{"jobs": [{"name": "dp", "op": "allreduce", "algo": "ring", "size": "16MiB", "endpoints": "0-63", "group": "stride=8"}]}' >"$tmp/gj.json"
good "group: concurrent, a job's groups" "8 groups of 8 ranks" concurrent --topo "$NODES" --jobs "$tmp/gj.json" --quiet
jt=$("$T" concurrent --topo "$NODES" --jobs "$tmp/gj.json" --format json --quiet | grep -m1 '"time_s"' | tr -d ' ,')
ft=$("$T" collective --topo "$NODES" --op allreduce --algo ring --size 16MiB --group stride=8 --mode flow --format json --quiet | grep -m1 '"time_s"' | tr -d ' ,')
if [ -z "$jt" ] || [ "$jt" != "$ft" ]; then
    echo "FAIL (group: a grouped concurrent job alone equals collective --group in flow): '$jt' against '$ft'"
    fails=$((fails + 1))
fi
"$T" concurrent --topo "$NODES" --jobs "$tmp/gj.json" --format json --quiet >"$tmp/cj.json" 2>"$tmp/err"
"$T" replay "$tmp/cj.json" --format json --quiet >"$tmp/cj2.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/cj.json" "$tmp/cj2.json" || ! grep -q '"group": "stride=8"' "$tmp/cj.json" || [ -s "$tmp/err" ]; then
    echo "FAIL: a concurrent job's group does not replay to itself"
    fails=$((fails + 1))
fi
printf '{"jobs": [{"op": "allreduce", "size": "16MiB", "endpoints": "0-63", "group": "axes=x"}]}' >"$tmp/gj2.json"
bad "group: concurrent, axes on a Clos" concurrent --topo "$NODES" --jobs "$tmp/gj2.json"
printf '{"jobs": [{"op": "allreduce", "size": "16MiB", "endpoints": "0-63", "group": "rows"}]}' >"$tmp/gj3.json"
bad "group: concurrent, an unknown spec" concurrent --topo "$NODES" --jobs "$tmp/gj3.json"
# nccl-tests over the data-parallel groups: busbw with the group's 4 ranks
good "nccl-tests --group: the groups in the header" "groups stride=8: 8 groups of 4 ranks" nccl-tests --preset dgx-h100:nodes=4 --group stride=8 -b 1M -e 1M
"$T" nccl-tests --preset dgx-h100:nodes=4 --group stride=8 -b 1M -e 64M -f 8 >"$tmp/ntg" 2>"$tmp/err"
rows=$(awk '!/^#/ && NF >= 8 { n++; if ($8 < 1.5 * $7 - 0.011 || $8 > 1.5 * $7 + 0.011 || $2 != $1 / 4) bad++ } END { print n + 0, bad + 0 }' "$tmp/ntg")
if [ "$rows" != "3 0" ] || [ -s "$tmp/err" ]; then
    echo "FAIL (nccl-tests --group: busbw = algbw x 2(4-1)/4, count per buffer): rows, bad = $rows"
    cat "$tmp/ntg" "$tmp/err"
    fails=$((fails + 1))
fi
good "nccl-tests --group: all-gather counts per group rank" "^     1048576         65536     float    none      -1 " nccl-tests --preset dgx-h100:nodes=4 --group stride=8 --op allgather -b 1M -e 1M
good "nccl-tests --group with --compare" "^# median |error|" nccl-tests --preset dgx-h100:nodes=2 --group stride=8 --compare "$(dirname "$0")/data/nccl-tests/nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt"
good "nccl-tests --group: NCCL on each data-parallel group (one GPU per node)" "nccl, mode formula, routing dmodk (.*), groups stride=8" nccl-tests --preset dgx-h100:nodes=4 --group stride=8 -b 1M -e 1M
bad "nccl-tests --group: a stride not dividing the ranks" nccl-tests --preset dgx-h100:nodes=4 --group stride=5 -b 1M -e 1M
bad "nccl-tests --group: an unknown spec" nccl-tests --preset dgx-h100:nodes=4 --group rows -b 1M -e 1M
bad "nccl-tests --group: node on one node's ranks" nccl-tests --preset dgx-h100 --group stride=8 -b 1M -e 1M

# concurrent jobs placed by a policy ("ranks" and "place"): in file order,
# each on the endpoints the jobs before it left free
printf '{"jobs": [{"name": "A", "op": "allreduce", "algo": "ring", "size": "16MiB", "ranks": 16, "place": "packed"}, {"name": "B", "op": "allreduce", "algo": "ring", "size": "16MiB", "ranks": 16, "place": "packed"}, {"name": "C", "op": "alltoall", "size": "1MiB", "ranks": 8, "place": "random:seed=4"}]}' >"$tmp/pj.json"
good "jobs: packed jobs print their shape" "  B  packed, 16 ranks: 2 leaves, 1 pod" concurrent --topo "clos:down=8x8,up=1x2" --jobs "$tmp/pj.json" --quiet
good "jobs: the shape in JSON" '"text": "random, 8 ranks: ' concurrent --topo "clos:down=8x8,up=1x2" --jobs "$tmp/pj.json" --quiet --format json
"$T" concurrent --topo "clos:down=8x8,up=1x2" --jobs "$tmp/pj.json" --format json --quiet >"$tmp/pj1.json" 2>"$tmp/err"
"$T" replay "$tmp/pj1.json" --format json --quiet >"$tmp/pj2.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/pj1.json" "$tmp/pj2.json" || ! grep -q '"place": "random:seed=4"' "$tmp/pj1.json" || [ -s "$tmp/err" ]; then
    echo "FAIL: jobs placed by a policy do not replay to themselves with the policy recorded"
    fails=$((fails + 1))
fi
"$T" concurrent --topo "clos:down=8x8,up=1x2" --jobs "$tmp/pj.json" --print-scenario >"$tmp/pj3.json" 2>"$tmp/err"
"$T" concurrent --scenario "$tmp/pj3.json" --print-scenario >"$tmp/pj4.json" 2>>"$tmp/err"
cmp -s "$tmp/pj3.json" "$tmp/pj4.json" || { echo "FAIL: jobs placed by a policy: scenario round trip"; fails=$((fails + 1)); }
# a slice job equals the same job with its endpoints written out (x 0-1, y 0-1 on a 4x4 torus, first dimension fastest)
printf '{"jobs": [{"name": "s", "op": "allreduce", "algo": "ring", "size": "16MiB", "place": "slice:shape=2x2"}, {"name": "f", "op": "allreduce", "algo": "ring", "size": "16MiB", "ranks": 4}]}' >"$tmp/sj.json"
printf '{"jobs": [{"name": "s", "op": "allreduce", "algo": "ring", "size": "16MiB", "endpoints": "0,1,4,5"}, {"name": "f", "op": "allreduce", "algo": "ring", "size": "16MiB", "endpoints": "2,3,6,7"}]}' >"$tmp/ej.json"
st=$("$T" concurrent --topo "torus:dims=4x4" --jobs "$tmp/sj.json" --format csv --quiet | cut -d, -f1-10)
et=$("$T" concurrent --topo "torus:dims=4x4" --jobs "$tmp/ej.json" --format csv --quiet | cut -d, -f1-10)
if [ -z "$st" ] || [ "$st" != "$et" ]; then
    echo "FAIL (jobs: slice and first equal their endpoints written out)"; echo "$st"; echo "$et"
    fails=$((fails + 1))
fi
printf '{"jobs": [{"name": "A", "op": "allreduce", "size": "1MiB", "ranks": 4, "place": "packed", "endpoints": "0-3"}]}' >"$tmp/bj1.json"
bad "jobs: endpoints and a policy both" concurrent --topo "$CLOS" --jobs "$tmp/bj1.json"
grep -q "(A)" "$tmp/err" || { echo "FAIL: jobs: endpoints and a policy: the job is not named"; fails=$((fails + 1)); }
printf '{"jobs": [{"name": "A", "op": "allreduce", "size": "1MiB", "ranks": 48, "place": "packed"}, {"name": "late", "op": "allreduce", "size": "1MiB", "ranks": 24, "place": "first"}]}' >"$tmp/bj2.json"
bad "jobs: a job that does not fit the free endpoints" concurrent --topo "$CLOS" --jobs "$tmp/bj2.json"
grep -q "jobs\[1\] (late)" "$tmp/err" || { echo "FAIL: jobs: a job that does not fit is not named"; cat "$tmp/err"; fails=$((fails + 1)); }
printf '{"jobs": [{"name": "A", "op": "allreduce", "size": "1MiB", "ranks": 4, "place": "slice"}]}' >"$tmp/bj3.json"
bad "jobs: slice on a Clos" concurrent --topo "$CLOS" --jobs "$tmp/bj3.json"
printf '{"jobs": [{"name": "A", "op": "allreduce", "size": "1MiB", "ranks": 4, "place": "packed:seed=1"}]}' >"$tmp/bj4.json"
bad "jobs: a seed on packed" concurrent --topo "$CLOS" --jobs "$tmp/bj4.json"
good "compare prints each topology's placement" "placement: first, 16 ranks: slice 4x4x1 at (0,0,0)" compare --topo "$CLOS" --topo "torus:dims=4x4x4" --op allreduce --sizes 1MiB:1MiB --ranks 16 --quiet
good "compare: the placement in JSON" '"placement": {' compare --topo "$CLOS" --topo "torus:dims=4x4x4" --op allreduce --sizes 1MiB:1MiB --ranks 16 --quiet --format json

# --- multi-datacenter topologies: pods joined by long-haul links ---
MDC="multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms"
bad_says "long-haul link without latency" "multidc: wan_lat= is required" collective --topo "multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps" --op allreduce --size 1MiB
bad_says "long-haul link without bandwidth" "wan_bw= is required" topo "multidc:pods=2,pod=clos,hosts=8,radix=4,wan_lat=20ms"
bad_says "multidc of one pod" "pods=1" topo "multidc:pods=1,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms"
bad_says "multidc of an unknown pod kind" "pod=clos or pod=torus" topo "multidc:pods=2,pod=ring,n=8,wan_bw=10Gbps,wan_lat=20ms"
bad_says "multidc with a bad long-haul rate" "wan_bw" topo "multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbit,wan_lat=20ms"
bad_says "multidc pod with another kind's key" "multidc pod: unknown key 'dims'" topo "$MDC,dims=4x4"
bad_says "a torus routing on clos pods" "clos pod" collective --topo "$MDC" --op allreduce --size 1MiB --routing dor
bad_says "spray on a multidc" "spray" collective --topo "$MDC" --op allreduce --size 1MiB --mode flow --multipath spray
bad_says "packed placement on a multidc" "multidc" collective --topo "$MDC" --op allreduce --size 1MiB --place packed
bad_says "nccl-a2a on a multidc" "multidc" collective --topo "$MDC" --op alltoall --size 1MiB --algo nccl-a2a
bad_says "hier-dc on a Clos" "multidc" collective --topo "$CLOS" --op allreduce --size 1MiB --algo hier-dc
bad_says "NCCL over groups across pods" "span pods" collective --topo "$MDC" --op allreduce --size 1MiB --group stride=8 --algo nccl-ring
good "NCCL over groups inside pods" "busbw" collective --topo "$MDC" --op allreduce --size 1MiB --group block=8 --algo nccl-ring
good "multidc kind and long-haul fields in JSON" '"wan_lat_s": 0.02' topo "$MDC" --format json
good "multidc long-haul links listed" "pod 0 gw 0 -> pod 1 gw 0 (wan)" topo "$MDC" --links
good "multidc figures" "long-haul" topo "$MDC"
for mode in formula steps flow; do
    good "hier-dc across pods ($mode)" "hier-dc" collective --topo "$MDC" --op allreduce --size 64MiB --algo hier-dc --mode $mode
done
good "multidc against a Clos" "B/A" compare --topo "$MDC" --topo clos:hosts=16,radix=8 --op allreduce --sizes 1MiB:64MiB:8 --quiet
good "failures on a multidc" "slowdown" failures --topo "multidc:pods=2,pod=torus,dims=4x4,wan_bw=100Gbps,wan_lat=5ms,wan_links=2" --op allreduce --size 1MiB --fail-random links=1,seed=2 --trials 3 --quiet

# --- progress on stderr without a terminal: a line every
# TOPOCC_PROGRESS_INTERVAL seconds (0: every report), saying what runs ---
progress_says() { # what, pattern on stderr, args...
    what="$1"; pat="$2"; shift 2
    TOPOCC_PROGRESS_INTERVAL=0 "$T" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q -- "$pat" "$tmp/err" || grep -v -q '^topocc: ' "$tmp/err"; then
        echo "FAIL (progress: $what): rc=$rc, expected '$pat' on stderr, every line 'topocc: ...'"
        head -5 "$tmp/err"
        fails=$((fails + 1))
    fi
}
progress_says "a flow simulation, named" "^topocc: flow simulation of ring at 1MiB: 100% (.* transfers)" \
    collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow
progress_says "auto's candidates, then its pick again" "of rhd at 1MiB (the pick, again for its details): 100%" \
    collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow
progress_says "compare: cells, the simulation under way" \
    "^topocc: compare: 0% (0/2 cells); allreduce on A: 100% of flow simulation of ring at 1MiB" \
    compare --topo "$CLOS" --topo torus:dims=4x4x4 --op allreduce --algo ring --sizes 1MiB:1MiB --mode flow
progress_says "compare: every cell" "^topocc: compare: 100% (2/2 cells)" \
    compare --topo "$CLOS" --topo torus:dims=4x4x4 --op allreduce --algo ring --sizes 1MiB:1MiB --mode flow
progress_says "failures: draws, the draw under way" "^topocc: failures: 50% (1/2 draws).*; A, draw 1: 100% of flow simulation" \
    failures --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --fail-random links=1,seed=1 --trials 2
progress_says "concurrent: each job alone, then together" "flow simulation of job A alone: 100%" \
    concurrent --topo "$CLOS" --jobs "$(dirname "$0")/../examples/jobs.json"
progress_says "concurrent: the jobs together" "flow simulation of the jobs sharing the network: 100%" \
    concurrent --topo "$CLOS" --jobs "$(dirname "$0")/../examples/jobs.json"
TOPOCC_PROGRESS_INTERVAL=0 "$T" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --quiet >/dev/null 2>"$tmp/err"
[ -s "$tmp/err" ] && { echo "FAIL (progress: --quiet prints it)"; fails=$((fails + 1)); }
TOPOCC_PROGRESS_INTERVAL= good "progress: an empty interval is the default" "busbw" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow
for v in abc -1 1min 10x; do
    TOPOCC_PROGRESS_INTERVAL=$v bad_says "progress: interval $v" "invalid TOPOCC_PROGRESS_INTERVAL '$v'" collective --topo "$CLOS" --op allreduce --size 1MiB
done

# OpenBLAS and LAPACKE are opened on first use (src/core/blas.c): the
# executable does not load them to start (PowerSGD and training, which use
# them, run in test_compress, test_train and compress_cli.sh).
if command -v ldd >/dev/null 2>&1 && ldd "$T" | grep -q -e libopenblas -e liblapacke; then
    echo "FAIL: topocc links OpenBLAS or LAPACKE at start-up"
    fails=$((fails + 1))
fi

# sendrecv, nccl-tests' sendrecv_perf: its row (count the whole buffer,
# the -o operator printed, root -1), every algorithm that cannot run it
# refused naming those that can, the empty rows NCCL keeps as syncs, and
# --compare on a file topocc wrote
good "nccl-tests: sendrecv's row as sendrecv_perf prints it" "^     1048576        262144     float     sum      -1 " nccl-tests --preset dgx-h100:nodes=2 --op sendrecv -b 1M -e 1M
good "nccl-tests: sendrecv prints -o" "^     1048576        262144     float    prod      -1 " nccl-tests --preset dgx-h100:nodes=2 --op sendrecv -b 1M -e 1M -o prod
good "nccl-tests: sendrecv's busbw is its algbw" "^  1073741824     268435456     float     sum      -1    21859   49.12   49.12 " nccl-tests --preset dgx-h100:nodes=2 --op sendrecv -b 8 -e 8G -f 2
good "nccl-tests: sendrecv's empty rows are syncs" "^# rows of size 0: .*sync with the peer" nccl-tests --preset dgx-h100:nodes=2 --op sendrecv -b 1 -e 8 -f 2
good "collective: nccl on sendrecv is NCCL's point-to-point" "nccl:SendRecv,Simple" collective --preset dgx-h100:nodes=2 --op sendrecv --algo nccl --size 1GiB
good "collective: auto on sendrecv is direct" "direct (chosen by auto)" collective --topo "$CLOS" --op sendrecv --size 1MiB
for m in formula steps flow; do
    good "collective: sendrecv in $m mode" "^busbw" collective --preset dgx-h100:nodes=2 --op sendrecv --algo nccl --size 1MiB --mode $m
done
bad_says "an algorithm that cannot run sendrecv" "the algorithms that can are direct, nccl-a2a and nccl" collective --topo "$CLOS" --op sendrecv --algo ring --size 1MiB
bad_says "mpich on sendrecv" "the algorithms that can are direct, nccl-a2a and nccl" collective --topo "$CLOS" --op sendrecv --algo mpich --size 1MiB
bad_says "nccl-tests: an algorithm that cannot run sendrecv" "does not run sendrecv" nccl-tests --preset dgx-h100:nodes=2 --op sendrecv --algo nccl-ring -b 1M -e 1M
bad_says "the operations' list names sendrecv" "broadcast, reduce, sendrecv" collective --topo "$CLOS" --op sendrcv --size 1MiB
"$T" nccl-tests --preset dgx-h100:nodes=2 --op sendrecv -b 8 -e 1G -f 4 >"$tmp/nt_sr.txt" 2>"$tmp/err" ||
    { echo "FAIL: nccl-tests --op sendrecv"; fails=$((fails + 1)); }
good "nccl-tests: --compare on a sendrecv_perf file" "^# median |error| >= 256 MiB       : 0.0% over 1 size$" nccl-tests --preset dgx-h100:nodes=2 --op sendrecv --compare "$tmp/nt_sr.txt"
bad_says "nccl-tests: --compare of sendrecv rows against another operator" "give -o sum" nccl-tests --preset dgx-h100:nodes=2 --op sendrecv -o prod --compare "$tmp/nt_sr.txt"
good "compare: sendrecv among the operations" "sendrecv: " compare --topo "$CLOS" --topo "torus:dims=8x8" --op sendrecv,alltoall --sizes 1KiB:1MiB

if [ "$fails" -ne 0 ]; then
    echo "$fails CLI checks failed"
    exit 1
fi
echo "all CLI checks passed"
