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

# --- help texts explain themselves with an example ---
good "no arguments" "example" 
good "--help" "example" --help
good "topo --help" "example" topo --help
good "collective --help" "example" collective --help
good "compare --help" "example" compare --help

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

if [ "$fails" -ne 0 ]; then
    echo "$fails CLI checks failed"
    exit 1
fi
echo "all CLI checks passed"
