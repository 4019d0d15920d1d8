#!/bin/sh
# cluster_cli.sh - topocc cluster from the command line: the five-job trace
# of tests/test_cluster.c through the CLI (text and JSON), the trace
# formats read from files, and bad input (one line on stderr, exit 2,
# nothing on stdout).
# usage: tests/cluster_cli.sh path/to/topocc
set -u
T="$1"
D=$(dirname "$0")/data/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"

printf 'submit,size,duration\n0,3,10\n0,2,2\n0,2,10\n1,3,4\n3,1,2\n' >"$tmp/five.csv"
RING=torus:dims=8
CLOS=clos:down=4x2,up=1x2

# the five jobs by hand (tests/test_cluster.c): torus backfill waits 1.8 s
# on average, the Clos 0.8 s; fragmentation: 3 of 8 idle from 2 to 3 s
good "five jobs, backfill, torus" "^torus .* 1.8s .* 12.5% .* 33.3% .* 14s" \
    cluster --topo "$RING" --topo "$CLOS" --names torus,clos --trace "$tmp/five.csv" --scheduler backfill
good "five jobs, backfill, Clos" "^clos .* 800ms .* 0% .* 0% .* 10s" \
    cluster --topo "$RING" --topo "$CLOS" --names torus,clos --trace "$tmp/five.csv" --scheduler backfill
good "five jobs, fifo, torus" "^A .* 3.2s" cluster --topo "$RING" --trace "$tmp/five.csv"
good "five jobs as JSON" '"utilisation_arrivals"' \
    cluster --topo "$RING" --trace "$tmp/five.csv" --format json
"$T" cluster --topo "$RING" --topo "$CLOS" --trace "$tmp/five.csv" --format json >"$tmp/j" 2>&1
python3 - "$tmp/j" <<'EOF' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
a, b = j["topologies"]
assert j["command"] == "cluster" and j["trace"]["jobs"] == 5, j["trace"]
assert abs(a["utilisation"] - 68 / 112) < 1e-12 and abs(b["utilisation"] - 68 / 80) < 1e-12
assert abs(a["fragmentation"]["mean_idle_share"] - 3 / 14) < 1e-12
assert abs(a["fragmentation"]["mean_idle_share_arrivals"] - 1 / 8) < 1e-12
assert len(a["utilisation_series"]) == 100
assert j["scenario"]["cluster"]["scheduler"] == "fifo" and j["scenario"]["cluster"]["trace"].endswith("five.csv")
EOF
good "trace formats: Philly" "(philly" cluster --topo torus:dims=4x4x4 --trace "$D/philly.json"
good "trace formats: Helios" "(helios" cluster --topo torus:dims=4x4x4 --trace "$D/helios.csv"
good "trace formats: PAI" "(pai" cluster --topo torus:dims=4x4x4 --trace "$D/pai_task.csv"
good "synthetic" "synthetic 200,seed=3" cluster --topo torus:dims=4x4x4 --synthetic 200,seed=3
good "a preset: a DGX H100 cluster" "^A  *200 " cluster --preset dgx-h100:nodes=32 --synthetic 200,seed=3
good "optical cubes" "cubes of 4 per dimension" cluster --topo torus:dims=8x8x8 --synthetic 200,seed=3 --ocs 4
good "a job larger than the cluster is counted" "1 jobs larger than it never run" \
    cluster --topo "$RING" --trace "$D/../traces/own.csv" --topo torus:dims=2x2

# --- bad input ---
bad "unknown scheduler" cluster --topo "$RING" --trace "$tmp/five.csv" --scheduler sjf
bad "no trace" cluster --topo "$RING"
bad "two traces" cluster --topo "$RING" --trace "$tmp/five.csv" --synthetic 10,seed=1
bad "missing file" cluster --topo "$RING" --trace "$tmp/none.csv"
printf 'submit,size,duration\n0,3,10\n1,x,4\n' >"$tmp/badline.csv"
bad "malformed line" cluster --topo "$RING" --trace "$tmp/badline.csv"
grep -q "badline.csv:3" "$tmp/err" || { echo "FAIL: the malformed line's number is not named"; cat "$tmp/err"; fails=$((fails + 1)); }
printf 'submit,size,duration\n0,3,10\n1,9,4\n' >"$tmp/large.csv"
bad "a job larger than the cluster with --strict" cluster --topo "$RING" --trace "$tmp/large.csv" --strict
# a trace's content is refused with the run's message before anything
# runs: by --print-scenario, replay and a sweep's validation as by the run
BADLINE="^topocc: .*badline.csv:3: field 'size': expected a positive integer, got 'x'$"
LARGE="^topocc: .*large.csv: the job of line 3 asks for 9 endpoints but B has 8 (--strict; without it such jobs are counted and skipped)$"
bad_says "malformed line, run" "$BADLINE" cluster --topo "$RING" --trace "$tmp/badline.csv"
bad_says "malformed line, printed" "$BADLINE" cluster --topo "$RING" --trace "$tmp/badline.csv" --print-scenario
bad_says "--strict, run" "$LARGE" cluster --topo torus:dims=16 --topo "$RING" --trace "$tmp/large.csv" --strict
bad_says "--strict, printed" "$LARGE" cluster --topo torus:dims=16 --topo "$RING" --trace "$tmp/large.csv" --strict --print-scenario
SYN="^topocc: synthetic 200,seed=3,load=0.9: the job of line 11 asks for 8 endpoints but B has 4 (--strict; without it such jobs are counted and skipped)$"
bad_says "--strict, synthetic, run" "$SYN" cluster --topo torus:dims=4x4x4 --topo torus:dims=2x2 --synthetic 200,seed=3 --strict
bad_says "--strict, synthetic, printed" "$SYN" cluster --topo torus:dims=4x4x4 --topo torus:dims=2x2 --synthetic 200,seed=3 --strict --print-scenario
good "--strict, printed, every job fits" '"strict": true' cluster --topo torus:dims=16 --trace "$tmp/large.csv" --strict --print-scenario
printf '{"command": "cluster", "network": {"topo": ["%s"]}, "cluster": {"trace": "%s"}}' "$RING" "$tmp/badline.csv" >"$tmp/badline.scn"
bad_says "malformed line, replayed and printed" "$BADLINE" replay "$tmp/badline.scn" --print-scenario
bad_says "malformed line, replayed" "$BADLINE" replay "$tmp/badline.scn"
printf '{"command": "cluster", "network": {"topo": ["%s"]}, "cluster": {"trace": "%s", "strict": true}}' "$RING" "$tmp/large.csv" >"$tmp/large.scn"
bad_says "--strict, replayed and printed" "^topocc: .*large.csv: the job of line 3 asks for 9 endpoints but A has 8" replay "$tmp/large.scn" --print-scenario
# a sweep's validation refuses the point, naming its value, before any point runs
printf '{"scenario": {"command": "cluster", "network": {"topo": ["%s"]}}, "sweep": {"axes": {"cluster.trace": ["%s", "%s"]}}}' "$RING" "$tmp/five.csv" "$tmp/badline.csv" >"$tmp/sw1.json"
bad_says "malformed line, a sweep's point" "^topocc: sweep .*sw1.json: point 1 (cluster.trace=\".*badline.csv\"): .*badline.csv:3: field 'size': expected a positive integer, got 'x'$" sweep "$tmp/sw1.json" -o "$tmp/sw1.jsonl"
printf '{"scenario": {"command": "cluster", "network": {"topo": ["torus:dims=16"]}, "cluster": {"trace": "%s", "strict": true}}, "sweep": {"axes": {"network.topo[0]": ["torus:dims=16", "%s"]}}}' "$tmp/large.csv" "$RING" >"$tmp/sw2.json"
bad_says "--strict, a sweep's point" "^topocc: sweep .*sw2.json: point 1 (network.topo\[0\]=\"torus:dims=8\"): .*large.csv: the job of line 3 asks for 9 endpoints but A has 8 (--strict" sweep "$tmp/sw2.json" -o "$tmp/sw2.jsonl"
[ ! -e "$tmp/sw1.jsonl" ] && [ ! -e "$tmp/sw2.jsonl" ] || { echo "FAIL (a sweep refused at validation wrote its results)"; fails=$((fails + 1)); }
# the trace the check read is the run's: a sweep of two points over one trace
sed 's/"torus:dims=8"/"torus:dims=4x4"/' "$tmp/sw2.json" >"$tmp/sw3.json"
good "a sweep over one trace" "2 points: 0 held already, 2 run now" sweep "$tmp/sw3.json" -o "$tmp/sw3.jsonl" --quiet
bad "ocs not dividing the torus" cluster --topo torus:dims=6x4 --trace "$tmp/five.csv" --ocs 4
bad "synthetic without jobs" cluster --topo "$RING" --synthetic seed=1
bad "synthetic load out of range" cluster --topo "$RING" --synthetic 10,seed=1,load=0
# a load that is not a finite number, a count or a seed that is not whole:
# refused, not replaced by the default load or truncated
bad_says "synthetic load nan" "load=nan is not a finite number" cluster --topo "$RING" --synthetic 10,seed=1,load=nan
bad_says "synthetic load inf" "load=inf is not a finite number" cluster --topo "$RING" --synthetic 10,seed=1,load=inf
bad_says "synthetic jobs not whole" "jobs=10.9 is not a whole number" cluster --topo "$RING" --synthetic 10.9,seed=1
bad_says "synthetic seed not whole" "seed=1.5 is not a whole number" cluster --topo "$RING" --synthetic 10,seed=1.5
bad_says "synthetic seed nan" "seed=nan is not a whole number" cluster --topo "$RING" --synthetic 10,seed=nan
good "synthetic jobs in exponent form" "synthetic 100,seed=1" cluster --topo "$RING" --synthetic 1e2,seed=1
bad_says "ocs on no torus" "none of the topologies is a torus" cluster --topo "$CLOS" --trace "$tmp/five.csv" --ocs 4
bad_says "ocs of 1" "edge of at least 2" cluster --topo torus:dims=8x8 --trace "$tmp/five.csv" --ocs 1
# refused with --print-scenario too, as when the replay runs
bad_says "ocs on no torus, printed" "none of the topologies is a torus" cluster --topo "$CLOS" --trace "$tmp/five.csv" --ocs 4 --print-scenario
bad_says "ocs of 1, printed" "edge of at least 2" cluster --topo torus:dims=8x8 --trace "$tmp/five.csv" --ocs 1 --print-scenario
bad_says "a synthetic trace that cannot be drawn, printed" "a synthetic trace at load 0.9 cannot be: its 10 jobs all at once ask for" cluster --topo torus:dims=4x4x4 --synthetic 10,seed=1 --print-scenario
bad_says "ocs not dividing a torus, printed, named" "^topocc: B: ocs=4: the torus's extent 6" cluster --topo torus:dims=8x8 --topo torus:dims=6x4 --trace "$tmp/five.csv" --ocs 4 --print-scenario
bad_says "a slice's ocs of 1, as cluster's" "ocs=K takes the edge K of the cubes the optical switches join, 2 to 1024" collective --topo torus:dims=4x4x4 --op allreduce --size 1MiB --ranks 8 --place slice:ocs=1
good "a slice's ocs of 2" "wraparound x yes y yes z yes (by the optical switches" collective --topo torus:dims=4x4x4 --op allreduce --size 1MiB --ranks 8 --place slice:ocs=2
bad_says "unknown trace format: only what --trace-format accepts" "accepted are auto, csv, philly, helios, pai$" cluster --topo "$RING" --trace "$tmp/five.csv" --trace-format slurm
bad_says "trace format synthetic" "'synthetic' is not a file format: use --synthetic N,seed=S" cluster --topo "$RING" --trace "$tmp/five.csv" --trace-format synthetic

# a relative trace path is recorded against the working directory of the
# run: a replay from another directory reads the file the run read, not a
# file of that name there, nor nothing
mkdir "$tmp/run" "$tmp/elsewhere" "$tmp/empty"
TA=$(cd "$(dirname "$T")" && pwd)/$(basename "$T") # T from any directory
cp "$tmp/five.csv" "$tmp/run/t.csv"
printf 'submit,size,duration\n0,1,1\n' >"$tmp/elsewhere/t.csv"
(cd "$tmp/run" && "$TA" cluster --topo "$RING" --trace ./t.csv --out r.json --quiet >/dev/null 2>"$tmp/rel.err") ||
    { echo "FAIL (a relative trace): $(cat "$tmp/rel.err")"; fails=$((fails + 1)); }
for d in elsewhere empty; do
    if ! (cd "$tmp/$d" && "$TA" replay ../run/r.json --format json >"$tmp/rel.json" 2>"$tmp/rel.err") ||
        ! python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); t = j["scenario"]["cluster"]["trace"]
assert j["trace"]["jobs"] == 5 and t.startswith("/") and t.endswith("/run/t.csv") and "/./" not in t, t' "$tmp/rel.json"; then
        echo "FAIL (a relative trace replayed from $d): $(cat "$tmp/rel.err")"
        fails=$((fails + 1))
    fi
done

# the makespan is the last end: a job that never fits arriving after it
# (at 20 s) does not stretch it, nor dilute the utilisation (4 of 16
# endpoints for 10 s: 0.25); with nothing run it is 0
printf 'submit,size,duration\n0,4,10\n20,50,5\n' >"$tmp/late_nofit.csv"
printf 'submit,size,duration\n0,40,10\n1,50,5\n' >"$tmp/none_fit.csv"
"$T" cluster --topo "clos:down=4x4,up=1x4" --trace "$tmp/late_nofit.csv" --format json >"$tmp/late.json" 2>"$tmp/late.err" &&
    "$T" cluster --topo "clos:down=4x4,up=1x4" --trace "$tmp/none_fit.csv" --format json >"$tmp/none.json" 2>>"$tmp/late.err" ||
    { echo "FAIL (makespan): $(cat "$tmp/late.err")"; fails=$((fails + 1)); }
python3 - "$tmp/late.json" "$tmp/none.json" <<'PY' || { echo "FAIL: the makespan is not the last end"; fails=$((fails + 1)); }
import json, sys
a, b = (json.load(open(f))["topologies"][0] for f in sys.argv[1:3])
assert a["never_fit"] == 1 and a["makespan_s"] == 10 and abs(a["utilisation"] - 0.25) < 1e-12, a
assert b["never_fit"] == 2 and b["makespan_s"] == 0 and b["utilisation"] == 0, b
PY

# the CSV tables as docs/SCHEMA.md lists them
"$T" cluster --topo "$CLOS" --trace "$tmp/five.csv" --out-dir "$tmp/csvd" --quiet >/dev/null 2>&1
[ "$(head -1 "$tmp/csvd/cluster.csv")" = "name,started,never_fit,utilisation_arrivals,utilisation,unasked_share,wait_mean_s,wait_p50_s,wait_p99_s,frag_idle_share_arrivals,frag_time_share_arrivals,makespan_s" ] &&
    [ "$(head -1 "$tmp/csvd/utilisation.csv")" = "name,from_s,utilisation" ] ||
    { echo "FAIL: cluster's CSV columns are not SCHEMA.md's"; head -1 "$tmp/csvd/cluster.csv" "$tmp/csvd/utilisation.csv"; fails=$((fails + 1)); }
if [ "$fails" -ne 0 ]; then
    echo "$fails cluster CLI check(s) failed"
    exit 1
fi
echo "cluster CLI checks passed"
