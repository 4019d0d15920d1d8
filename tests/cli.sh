#!/bin/sh
# cli.sh - the command-line contract: bad input gets one line on stderr,
# exit code 2 and nothing on stdout; help texts carry a working example;
# the main paths produce the documented fields.
# usage: tests/cli.sh path/to/topocc
set -u
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
CLOS="clos:down=8x8,up=1x8,bw=400Gbps,lat=1us"

bad() { # description, args...
    what="$1"; shift
    "$T" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$lines" -ne 1 ]; then
        echo "FAIL (bad input: $what): rc=$rc stderr lines=$lines stdout bytes=$(wc -c <"$tmp/out")"
        cat "$tmp/err"
        fails=$((fails + 1))
    fi
}

good() { # description, pattern, args...
    what="$1"; pat="$2"; shift 2
    "$T" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q -- "$pat" "$tmp/out" || [ -s "$tmp/err" ]; then
        echo "FAIL ($what): rc=$rc, expected '$pat' on stdout"
        head -5 "$tmp/out" "$tmp/err"
        fails=$((fails + 1))
    fi
}

# --- bad input: one test each ---
bad "malformed spec" collective --topo "clos:down8x8" --op allreduce --size 1MiB
bad "spec without kind keys" collective --topo "clos:" --op allreduce --size 1MiB
bad "unknown topology kind" collective --topo "ring:n=8" --op allreduce --size 1MiB
bad "unknown key" collective --topo "$CLOS,foo=1" --op allreduce --size 1MiB
bad "radix too small for hosts" topo "clos:hosts=100000,radix=8,tiers=2"
bad "oversubscription that does not divide" topo "clos:hosts=512,radix=32,tiers=2,oversub=2"
bad "torus dimension of 0" topo "torus:dims=4x0"
bad "torus dimension of 1" topo "torus:dims=4x1"
bad "wraparound list of the wrong length" topo "torus:dims=4x4,wrap=1"
bad "size of 0" collective --topo "$CLOS" --op allreduce --size 0
bad "size above 2^60" collective --topo "$CLOS" --op allreduce --size 2000000TiB
bad "negative size" collective --topo "$CLOS" --op allreduce --size -5KiB
bad "unknown size unit" collective --topo "$CLOS" --op allreduce --size 5KBytes
bad "unknown rate unit" collective --topo "clos:down=8x8,up=1x8,bw=400Gbit" --op allreduce --size 1MiB
bad "unknown time unit" collective --topo "clos:down=8x8,up=1x8,lat=1min" --op allreduce --size 1MiB
bad "unknown operation" collective --topo "$CLOS" --op allsum --size 1MiB
bad "unknown algorithm" collective --topo "$CLOS" --op allreduce --algo fancy --size 1MiB
bad "unknown algorithm parameter" collective --topo "$CLOS" --op allreduce --algo ring:depth=3 --size 1MiB
bad "algorithm that does not fit the topology" collective --topo "$CLOS" --op allreduce --algo torus --size 1MiB
bad "algorithm that does not fit the rank count" collective --topo "$CLOS" --op allreduce --algo swing --ranks 6 --size 1MiB
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
bad "flow option without flow mode" collective --topo "$CLOS" --op allreduce --size 1MiB --rate-cap 100Gbps
bad "unknown multipath" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --multipath random
bad "unknown deps" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --deps eager
bad "event budget exceeded" collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --event-budget 10
bad "bad event budget" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --event-budget -3
bad "degrade a link that does not exist" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:100000=0.5
bad "malformed degrade" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade port:3=0.5
bad "degrade factor of 0 is a failure, not a degradation" collective --topo "$CLOS" --op allreduce --size 1MiB --degrade link:3=0
bad "unwritable trace" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace /nonexistent/dir/t.json

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
good "collective flow writes a trace" "slices" collective --topo "$CLOS" --op allreduce --algo ring --size 1MiB --mode flow --trace "$tmp/trace.json"
grep -q '"traceEvents"' "$tmp/trace.json" || { echo "FAIL: trace file missing"; fails=$((fails + 1)); }
good "degraded link in steps mode" "time" collective --topo "$CLOS" --op allreduce --size 1MiB --mode steps --degrade link:0=0.5 --degrade link:1=0.25
good "compare in flow mode" "where each topology wins" compare --topo "$CLOS" --topo "torus:dims=8x8" --op allreduce --sizes 1KiB:1MiB:32 --mode flow
printf '{"jobs": [{"name": "A", "op": "allreduce", "algo": "ring", "size": "1MiB", "endpoints": "0,8"}, {"name": "B", "op": "alltoall", "size": "1MiB", "endpoints": [1, 9, 17], "start": "5us"}]}' >"$tmp/jobs.json"
good "concurrent jobs" "slowdown" concurrent --topo "clos:down=8x8,up=1x1" --jobs "$tmp/jobs.json"
good "concurrent jobs json" '"slowdown"' concurrent --topo "clos:down=8x8,up=1x1" --jobs "$tmp/jobs.json" --format json

good "codec-bench measures a codec beside the copy bandwidth" "copy" codec-bench --codec bf16 --size 1MiB --seconds 0.05

if [ "$fails" -ne 0 ]; then
    echo "$fails CLI checks failed"
    exit 1
fi
echo "all CLI checks passed"
