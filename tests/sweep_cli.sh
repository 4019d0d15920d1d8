#!/bin/sh
# sweep_cli.sh - topocc sweep: points, results files that survive a kill,
# resume, status, merge, shards, bad input, and MPI ranks on localhost
# whose results equal the single-process run's as sets.
# Usage: sweep_cli.sh path/to/topocc
T="$1"
BIN=$(dirname "$T")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"

# Two results files hold the same points with the same results (the time
# each point took aside).
same_sets() { # what, file A, file B
    python3 - "$2" "$3" <<'EOF' || { echo "FAIL ($1): results differ"; fails=$((fails + 1)); }
import json, sys
def load(p):
    lines = open(p).read().split('\n')
    head = json.loads(lines[0])
    pts = {}
    for l in lines[1:]:
        if not l:
            continue
        d = json.loads(l)
        d.pop('elapsed_s', None)
        if d['point'] in pts:
            sys.exit('%s: point %d twice' % (p, d['point']))
        pts[d['point']] = d
    return head['hash'], pts
ha, a = load(sys.argv[1])
hb, b = load(sys.argv[2])
if ha != hb or a != b:
    sys.exit('hash %s/%s, points %d/%d, differing %s' % (ha, hb, len(a), len(b),
             sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))[:10]))
EOF
}

points_in() { # file -> the number of point lines
    echo $(($(wc -l <"$1") - 1))
}

CLOS=clos:down=8x8,up=1x8,bw=400Gbps
cat >"$tmp/s.json" <<EOF
{"scenario": {"command": "collective", "network": {"topo": ["$CLOS"]},
              "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [1048576]}},
 "sweep": {"mode": "product",
           "axes": {"network.topo[0]": ["$CLOS", "torus:dims=4x4x4"],
                    "collective.algo": [["ring"], ["rhd"], ["auto"]],
                    "collective.sizes": [[1024], [1048576], ["64MiB"]]}}}
EOF

# ---- a run, and what it wrote ----
good "sweep runs" "18 points: 0 held already, 18 run now" sweep "$tmp/s.json" -o "$tmp/r.jsonl" --quiet
[ "$(points_in "$tmp/r.jsonl")" = 18 ] || { echo "FAIL (18 point lines)"; fails=$((fails + 1)); }
python3 - "$tmp/r.jsonl" <<'EOF' || fails=$((fails + 1))
import json, sys
lines = open(sys.argv[1]).read().split('\n')
head = json.loads(lines[0])
assert head['topocc_sweep'] == 1 and head['points'] == 18 and len(head['hash']) == 16, head
assert list(head['axes']) == ['network.topo[0]', 'collective.algo', 'collective.sizes'], head['axes']
pts = {d['point']: d for d in map(json.loads, filter(None, lines[1:]))}
# Row-major over the axes in file order: the last axis fastest.
topos = ['clos', 'torus']; algos = ['ring', 'rhd', 'auto']; sizes = [1024, 1048576, 67108864]
for i, d in pts.items():
    t, a, s = i // 9, i // 3 % 3, i % 3
    sc = d['scenario']
    assert sc['network']['topo'][0].startswith(topos[t]), (i, sc['network'])
    assert sc['collective']['algo'] == [algos[a]], (i, sc['collective'])
    assert sc['collective']['sizes'] == [sizes[s]], (i, sc['collective'])
    assert d['result']['bytes'] == sizes[s] and d['result']['time_s'] > 0, (i, d['result'])
    assert 'scenario' not in d['result']
# per-point seeds: distinct, and a function of the point only
assert len({d['seed'] for d in pts.values()}) == 18
EOF
good "status" "done 18 of 18 (100.0%), 0 of them failed; missing 0" sweep --status "$tmp/r.jsonl"
good "status as JSON" '"missing": 0' sweep --status "$tmp/r.jsonl" --format json
cp "$tmp/r.jsonl" "$tmp/full.jsonl"

# ---- resume: nothing redone, a torn line redone, no duplicates ----
good "resume: all held" "18 held already, 0 run now" sweep "$tmp/s.json" -o "$tmp/r.jsonl" --quiet
# the hash is of the sweep, not of its spacing
python3 -c "import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], 'w'), indent=4)" "$tmp/s.json" "$tmp/s4.json"
good "resume: the same sweep spaced otherwise" "18 held already, 0 run now" sweep "$tmp/s4.json" -o "$tmp/r.jsonl" --quiet
head -n 12 "$tmp/full.jsonl" >"$tmp/t.jsonl"
sed -n 13p "$tmp/full.jsonl" | head -c 200 >>"$tmp/t.jsonl"
good "status of a torn file" "the last line is torn" sweep --status "$tmp/t.jsonl"
"$T" sweep "$tmp/s.json" -o "$tmp/t.jsonl" --quiet >"$tmp/out" 2>"$tmp/err" || { echo "FAIL (resume a torn file)"; cat "$tmp/err"; fails=$((fails + 1)); }
grep -q "11 held already, 7 run now" "$tmp/out" || { echo "FAIL (resume counts)"; cat "$tmp/out"; fails=$((fails + 1)); }
grep -q "torn line" "$tmp/err" || { echo "FAIL (torn line noted)"; fails=$((fails + 1)); }
same_sets "resumed after a torn line" "$tmp/full.jsonl" "$tmp/t.jsonl"
# merging a torn file leaves its torn line out, and says so (a note)
head -n 12 "$tmp/full.jsonl" >"$tmp/tt.jsonl"
sed -n 13p "$tmp/full.jsonl" | head -c 200 >>"$tmp/tt.jsonl"
"$T" sweep --merge "$tmp/tt.jsonl" -o "$tmp/ttm.jsonl" >/dev/null 2>"$tmp/err"
grep -q "^topocc: note: .*tt.jsonl ends in a torn line; it is left out$" "$tmp/err" ||
    { echo "FAIL (merge: no note of a torn line)"; cat "$tmp/err"; fails=$((fails + 1)); }
# only a torn header: started again
head -c 50 "$tmp/full.jsonl" >"$tmp/h.jsonl"
"$T" sweep "$tmp/s.json" -o "$tmp/h.jsonl" --quiet >/dev/null 2>&1
same_sets "a torn header" "$tmp/full.jsonl" "$tmp/h.jsonl"
# a file of one line without a newline that does not start as a header is
# not a torn header: refused, untouched; so is the torn header of another
# sweep (its hash whole), and -o naming the sweep file itself (here a sweep
# file written on one line, which a torn header's check would take)
printf 'my notes' >"$tmp/notes.txt"
bad_says "-o a one-line note" "'$tmp/notes.txt' is not a results file" sweep "$tmp/s.json" -o "$tmp/notes.txt"
[ "$(cat "$tmp/notes.txt")" = "my notes" ] || { echo "FAIL (a one-line note was overwritten)"; fails=$((fails + 1)); }
head -c 60 "$tmp/full.jsonl" | sed 's/"hash":"[0-9a-f]/"hash":"x/' >"$tmp/h2.jsonl"
cp "$tmp/h2.jsonl" "$tmp/h2.keep"
bad_says "-o the torn header of another sweep" "holds the torn header of another sweep" sweep "$tmp/s.json" -o "$tmp/h2.jsonl"
cmp -s "$tmp/h2.jsonl" "$tmp/h2.keep" || { echo "FAIL (another sweep's torn header was changed)"; fails=$((fails + 1)); }
python3 -c "import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], 'w'))" "$tmp/s.json" "$tmp/s1.json"
cp "$tmp/s1.json" "$tmp/s1.keep"
bad_says "-o the sweep file itself" "is the sweep file itself" sweep "$tmp/s1.json" -o "$tmp/s1.json"
ln -s s1.json "$tmp/s1link.json"
bad_says "-o a link to the sweep file" "is the sweep file itself" sweep "$tmp/s1.json" -o "$tmp/s1link.json"
bad_says "-o the sweep file itself, written over lines" "is the sweep file itself" sweep "$tmp/s.json" -o "$tmp/s.json"
cmp -s "$tmp/s1.json" "$tmp/s1.keep" || { echo "FAIL (the sweep file was overwritten)"; fails=$((fails + 1)); }

# ---- progress without a terminal (TOPOCC_PROGRESS_INTERVAL=0: a line per
# report): the validation's points, then the run's; neither with --quiet ----
TOPOCC_PROGRESS_INTERVAL=0 "$T" sweep "$tmp/s.json" -o "$tmp/p.jsonl" >"$tmp/out" 2>"$tmp/err" ||
    { echo "FAIL (progress run)"; cat "$tmp/err"; fails=$((fails + 1)); }
grep -q "^topocc: validating the sweep's points (--no-validate skips this): 100% (18/18 points)" "$tmp/err" ||
    { echo "FAIL (validation progress)"; cat "$tmp/err"; fails=$((fails + 1)); }
grep -q "^topocc: sweep: 100% (18/18 points)" "$tmp/err" || { echo "FAIL (sweep progress)"; cat "$tmp/err"; fails=$((fails + 1)); }
grep -v -q "^topocc: " "$tmp/err" && { echo "FAIL (progress: a line not 'topocc: ...')"; cat "$tmp/err"; fails=$((fails + 1)); }
rm -f "$tmp/p.jsonl"
TOPOCC_PROGRESS_INTERVAL=0 "$T" sweep "$tmp/s.json" -o "$tmp/p.jsonl" --no-validate >"$tmp/out" 2>"$tmp/err"
grep -q "validating" "$tmp/err" && { echo "FAIL (validation progress with --no-validate)"; fails=$((fails + 1)); }
grep -q "^topocc: sweep: 100% (18/18 points)" "$tmp/err" || { echo "FAIL (sweep progress, no validation)"; cat "$tmp/err"; fails=$((fails + 1)); }
rm -f "$tmp/p.jsonl"
TOPOCC_PROGRESS_INTERVAL=0 "$T" sweep "$tmp/s.json" -o "$tmp/p.jsonl" --quiet >"$tmp/out" 2>"$tmp/err"
[ -s "$tmp/err" ] && { echo "FAIL (progress with --quiet)"; cat "$tmp/err"; fails=$((fails + 1)); }
TOPOCC_PROGRESS_INTERVAL=soon bad_says "a bad progress interval" "invalid TOPOCC_PROGRESS_INTERVAL 'soon'" sweep "$tmp/s.json" -o "$tmp/p2.jsonl"
[ ! -e "$tmp/p2.jsonl" ] || { echo "FAIL (a bad progress interval wrote the results file)"; fails=$((fails + 1)); }

# ---- shards and merge ----
good "shard 0/3" "run now (shard 0/3)" sweep "$tmp/s.json" -o "$tmp/a.jsonl" --shard 0/3 --quiet
good "shard 1/3" "(shard 1/3)" sweep "$tmp/s.json" -o "$tmp/b.jsonl" --shard 1/3 --quiet
good "shard 2/3" "(shard 2/3)" sweep "$tmp/s.json" -o "$tmp/c.jsonl" --shard 2/3 --quiet
[ "$(points_in "$tmp/a.jsonl")" = 6 ] || { echo "FAIL (a shard of 6)"; fails=$((fails + 1)); }
good "merge" "merged 4 files: 18 of 18 points" sweep --merge "$tmp/a.jsonl" "$tmp/b.jsonl" "$tmp/c.jsonl" "$tmp/a.jsonl" -o "$tmp/mem.jsonl"
same_sets "merged shards" "$tmp/full.jsonl" "$tmp/mem.jsonl"
good "status of a shard" "missing 12: 1-2, 4-5" sweep --status "$tmp/a.jsonl"

# ---- zip, seeds ----
cat >"$tmp/z.json" <<EOF
{"scenario": {"command": "failures", "network": {"topo": ["$CLOS"], "fail_random": "links=2,seed=7"},
              "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [1048576]}, "failures": {"trials": 3}},
 "sweep": {"mode": "zip", "seed": 5, "axes": {"network.topo[0]": ["$CLOS", "clos:down=8x8,up=1x4"],
                                             "collective.sizes": [[1024], [2048]]}}}
EOF
good "zip" "2 points" sweep "$tmp/z.json" -o "$tmp/z.jsonl" --quiet
sed 's/"seed": 5,/"seed": 5, "seeds": "shared",/' "$tmp/z.json" >"$tmp/zs.json"
good "zip, shared seeds" "2 points" sweep "$tmp/zs.json" -o "$tmp/zs.jsonl" --quiet
python3 - "$tmp/z.jsonl" "$tmp/zs.jsonl" <<'EOF' || fails=$((fails + 1))
import json, sys
def pts(p):
    return {d['point']: d for d in map(json.loads, open(p).read().split('\n')[1:-1])}
z, zs = pts(sys.argv[1]), pts(sys.argv[2])
fr = [z[i]['scenario']['network']['fail_random'] for i in (0, 1)]
assert fr[0] != fr[1] and 'seed=7' not in fr[0], fr          # drawn per point
assert all(zs[i]['scenario']['network']['fail_random'] == 'links=2,seed=7' for i in (0, 1))
assert zs[0]['seed'] is None and z[0]['seed'] > 0
assert z[1]['scenario']['collective']['sizes'] == [2048]
EOF

# ---- a point that fails is recorded; the run says so (exit 2) ----
cat >"$tmp/f.json" <<EOF
{"scenario": {"command": "collective", "network": {"topo": ["$CLOS"]},
              "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [1048576]}},
 "sweep": {"axes": {"collective.algo": [["ring"], ["bruck"]]}}}
EOF
# bruck does not fit an all-reduce: the validation refuses point 1 before
# anything runs; without it (--no-validate) the point runs and fails
bad_says "a point the run would refuse, validated" "point 1 (collective.algo=\[\"bruck\"\]): algorithm 'bruck' does not fit allreduce" sweep "$tmp/f.json" -o "$tmp/f.jsonl" --quiet
[ -e "$tmp/f.jsonl" ] && { echo "FAIL (a sweep refused up front created its results file)"; fails=$((fails + 1)); }
"$T" sweep "$tmp/f.json" -o "$tmp/f.jsonl" --quiet --no-validate >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "points failed" "$tmp/err"; then
    echo "FAIL (failed points: rc=$rc)"; cat "$tmp/err"; fails=$((fails + 1))
fi
good "status lists failures" "failed: point 1: algorithm 'bruck' does not fit allreduce" sweep --status "$tmp/f.jsonl"
# a rerun holds the failed points, and still says they failed (exit 2)
"$T" sweep "$tmp/f.json" -o "$tmp/f.jsonl" --quiet --no-validate >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "2 held already, 0 run now" "$tmp/out" ||
    ! grep -q "1 of 2 points failed, 1 of them held already (.*); the first: point 1: algorithm 'bruck'" "$tmp/err"; then
    echo "FAIL (failed points held by a rerun: rc=$rc)"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
fi
# --retry-failed runs them again: still counted against the sweep's points
# (2), with how many were run again
cp "$tmp/f.jsonl" "$tmp/fr.jsonl"
"$T" sweep "$tmp/f.json" -o "$tmp/fr.jsonl" --quiet --no-validate --retry-failed >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "1 held already, 1 run now" "$tmp/out" ||
    ! grep -q "1 of 2 points failed (--retry-failed ran again the 1 that had failed before; .*); the first: algorithm 'bruck'" "$tmp/err"; then
    echo "FAIL (failed points run again and failing again: rc=$rc)"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
fi
cat >"$tmp/mm.json" <<EOF
{"scenario": {"command": "collective", "network": {"topo": ["$CLOS"]},
              "collective": {"op": ["alltoall"], "algo": ["direct"], "sizes": [1048576]}, "eval": {"mode": "flow"}},
 "sweep": {"axes": {"collective.sizes": [[1024], [1048576]]}}}
EOF
"$T" sweep "$tmp/mm.json" -o "$tmp/mm.jsonl" --quiet --mem-limit 1KiB >/dev/null 2>&1
good "status lists a failure for lack of memory" "failed: point 1: .*memory limit" sweep --status "$tmp/mm.jsonl"
"$T" sweep "$tmp/mm.json" -o "$tmp/mm.jsonl" --quiet >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q "2 held already, 0 run now" "$tmp/out" || ! grep -q "2 of 2 points failed, 2 of them held already" "$tmp/err"; then
    echo "FAIL (failed points held without --retry-failed: rc=$rc)"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
fi
good "--retry-failed" "0 held already, 2 run now" sweep "$tmp/mm.json" -o "$tmp/mm.jsonl" --quiet --retry-failed
good "a result replaces a failure" "done 2 of 2 (100.0%), 0 of them failed" sweep --status "$tmp/mm.jsonl"
good "status: the replaced failures are duplicates, the results count" "2 duplicate lines (a point's first result counts, else its first failure)" sweep --status "$tmp/mm.jsonl"
good "merge: a result replaces a failure" "merged 1 files: 2 of 2" sweep --merge "$tmp/mm.jsonl" -o "$tmp/mm2.jsonl"
grep -q '"error"' "$tmp/mm2.jsonl" && { echo "FAIL (merge kept a replaced failure)"; fails=$((fails + 1)); }
# across files too, in either order: a failure in one file does not
# replace a result in another
"$T" sweep "$tmp/mm.json" -o "$tmp/mf.jsonl" --quiet --mem-limit 1KiB >/dev/null 2>&1
good "merge: failures first, results after" "merged 2 files: 2 of 2 points (0 failed)" sweep --merge "$tmp/mf.jsonl" "$tmp/mm.jsonl" -o "$tmp/m3.jsonl"
grep -q '"error"' "$tmp/m3.jsonl" && { echo "FAIL (merge kept a failure over another file's result)"; fails=$((fails + 1)); }
good "merge: results first, failures after" "merged 2 files: 2 of 2 points (0 failed)" sweep --merge "$tmp/mm.jsonl" "$tmp/mf.jsonl" -o "$tmp/m4.jsonl"
grep -q '"error"' "$tmp/m4.jsonl" && { echo "FAIL (a later file's failure replaced a result)"; fails=$((fails + 1)); }

# one line of the results replays its point
grep '"result"' "$tmp/mm.jsonl" | tail -1 >"$tmp/pt_line.json"
"$T" replay - --format json <"$tmp/pt_line.json" >"$tmp/pt.json" 2>"$tmp/err" ||
    { echo "FAIL (replay of a results line): $(cat "$tmp/err")"; fails=$((fails + 1)); }
python3 - "$tmp/pt_line.json" "$tmp/pt.json" <<'PY' || { echo "FAIL (a results line replays another answer)"; fails=$((fails + 1)); }
import json, sys
line = json.loads(open(sys.argv[1]).read())
got = json.load(open(sys.argv[2]))
want = line["result"]
w = want["results"][0] if "results" in want else want
g = got["results"][0] if "results" in got else got
assert w["time_s"] == g["time_s"], (w["time_s"], g["time_s"])
PY
# a failed point's line and the header hold no scenario to replay: said so
grep '"error"' "$tmp/f.jsonl" >"$tmp/fail_line.json"
bad_says "replay of a failed point's line" "records point 1 of a sweep, which failed: it holds no scenario to replay (its error: \"algorithm 'bruck'" replay "$tmp/fail_line.json"
head -n 1 "$tmp/f.jsonl" >"$tmp/head_line.json"
bad_says "replay of a results file's header" "a sweep's header (a results file's first line): it holds no scenario to replay" replay "$tmp/head_line.json"
# results of another build are said so: status counts them, merge and a
# resume note them on stderr
sed '2,$s/"commit":"[^"]*"/"commit":"deadbee"/' "$tmp/mm.jsonl" >"$tmp/ob.jsonl"
good "status: lines of another build" "point lines written by another topocc build than the header's, the first by .* (deadbee)" sweep --status "$tmp/ob.jsonl"
"$T" sweep --merge "$tmp/mm.jsonl" "$tmp/ob.jsonl" -o "$tmp/obm.jsonl" >/dev/null 2>"$tmp/err"
grep -q "ob.jsonl holds results of another topocc build, .* (deadbee), than .*mm.jsonl's" "$tmp/err" || { echo "FAIL (merge: no note of another build)"; fails=$((fails + 1)); }
sed '1s/"commit":"[^"]*"/"commit":"cafe123"/' "$tmp/mm.jsonl" | head -2 >"$tmp/ob2.jsonl"
"$T" sweep "$tmp/mm.json" -o "$tmp/ob2.jsonl" --quiet >/dev/null 2>"$tmp/err"
grep -q "was started by topocc .* (cafe123)" "$tmp/err" || { echo "FAIL (resume: no note of another build)"; fails=$((fails + 1)); }

# ---- bad input: one line, exit 2, nothing written or lost ----
mkdir "$tmp/sweepdir"
bad_says "a directory as the sweep file" "sweep .*sweepdir: a directory: give a sweep file" sweep "$tmp/sweepdir" -o "$tmp/never.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {}}}' >"$tmp/b1.json"
bad_says "zero points (no axes)" "zero points" sweep "$tmp/b1.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"collective.sizes": []}}}' >"$tmp/b2.json"
bad_says "zero points (empty axis)" "zero points" sweep "$tmp/b2.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"collective.size": [[1]]}}}' >"$tmp/b3.json"
bad_says "unknown key path" "did you mean 'collective.sizes'" sweep "$tmp/b3.json" -o "$tmp/x.jsonl"
# the command and the format's version are the base scenario's: not axes,
# and not "did you mean" themselves
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"command": ["collective", "compare"]}}}' >"$tmp/b3c.json"
bad_says "the command as an axis" "key path 'command': the command comes from the base scenario and cannot be an axis" sweep "$tmp/b3c.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"scenario_version": [1]}}}' >"$tmp/b3v.json"
bad_says "the version as an axis" "key path 'scenario_version': the scenario format's version comes from the base scenario and cannot be an axis" sweep "$tmp/b3v.json" -o "$tmp/x.jsonl"
grep -q "did you mean" "$tmp/err" && { echo "FAIL (an axis over scenario_version: did you mean)"; fails=$((fails + 1)); }
printf '{"scenario": {"command": "collective"}, "sweep": {"axis": {}}}' >"$tmp/b4.json"
bad_says "unknown sweep key" "did you mean 'axes'" sweep "$tmp/b4.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweeps": {}}' >"$tmp/b5.json"
bad_says "unknown top-level key" "did you mean 'sweep'" sweep "$tmp/b5.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"collective.sizes": 5}}}' >"$tmp/b6.json"
bad_says "axis not a list" "expected a list of values" sweep "$tmp/b6.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"mode": "grid", "axes": {"collective.sizes": [[1]]}}}' >"$tmp/b7.json"
bad_says "bad mode" 'expected "product" or "zip"' sweep "$tmp/b7.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"mode": "zip", "axes": {"collective.sizes": [[1]], "eval.mode": ["formula", "steps"]}}}' >"$tmp/b8.json"
bad_says "zip of unequal axes" "zip needs axes of one length" sweep "$tmp/b8.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"]}}, "sweep": {"axes": {"collective.sizes": [[1024], "big"]}}}' "$CLOS" >"$tmp/b9.json"
bad_says "a wrong type in one point" "point 1 (collective.sizes=\"big\")" sweep "$tmp/b9.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "failures", "network": {"topo": ["clos:down=4x4,up=1x4"]}, "collective": {"op": ["allreduce"], "sizes": [65536]}, "failures": {"trials": 2}}, "sweep": {"axes": {"network.fail_random": ["links=1,seed=2", "links=0,seed=0"]}}}' >"$tmp/b9f.json"
bad_says "a bad fail_random in one point" "point 1 (network.fail_random=\"links=0,seed=0\"): network.fail_random: 'links=0,seed=0': draws nothing" sweep "$tmp/b9f.json" -o "$tmp/x.jsonl"
# a range of sizes is the whole value, not an element of a list
printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"]}}, "sweep": {"axes": {"collective.sizes": ["1KiB:4KiB:2", ["1KiB:4KiB:2"]]}}}' "$CLOS" >"$tmp/b9s.json"
bad_says "a range inside a list of sizes" "point 1 (collective.sizes=\[\"1KiB:4KiB:2\"\]): collective.sizes\[0\]: '1KiB:4KiB:2' is a range of sizes, which is the whole value" sweep "$tmp/b9s.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}}, "sweep": {"axes": {"network.topo[3]": ["%s"]}}}' "$CLOS" "$CLOS" >"$tmp/b10.json"
bad_says "a list element beyond the list" "has 1 entries" sweep "$tmp/b10.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"train.lr": [0.1]}}}' >"$tmp/b11.json"
bad_says "a key of another command" "does not apply to 'topocc collective'" sweep "$tmp/b11.json" -o "$tmp/x.jsonl"
printf '{"scenario": {"command": "collective"}, "sweep": {"axes": {"collective.sizes": [[1]], "collective.sizes[0]": [1]}}}' >"$tmp/b12.json"
bad_says "two axes on one value" "set the same value" sweep "$tmp/b12.json" -o "$tmp/x.jsonl"
printf '{"scenario": ' >"$tmp/b13.json"
bad_says "not JSON" "line 1, column" sweep "$tmp/b13.json" -o "$tmp/x.jsonl"
[ ! -e "$tmp/x.jsonl" ] || { echo "FAIL (a refused sweep wrote its results file)"; fails=$((fails + 1)); }
bad_says "no -o" "needs the results file" sweep "$tmp/s.json"
bad_says "missing sweep file" "cannot open\|No such file" sweep "$tmp/none.json" -o "$tmp/x.jsonl"
bad_says "unwritable output directory" "cannot write the results file" sweep "$tmp/s.json" -o "$tmp/no/such/dir/r.jsonl"
bad_says "a directory as output" "cannot write the results file" sweep "$tmp/s.json" -o "$tmp"
bad_says "bad shard" "invalid --shard" sweep "$tmp/s.json" -o "$tmp/x.jsonl" --shard 3/3
bad_says "unknown option" "unknown option '--bogus'" sweep "$tmp/s.json" -o "$tmp/x.jsonl" --bogus
cp "$tmp/z.jsonl" "$tmp/other.jsonl"
bad_says "another sweep's results file" "holds the results of another sweep" sweep "$tmp/s.json" -o "$tmp/other.jsonl"
cmp -s "$tmp/z.jsonl" "$tmp/other.jsonl" || { echo "FAIL (another sweep's file was changed)"; fails=$((fails + 1)); }
bad_says "merge of two sweeps" "only results of one sweep merge" sweep --merge "$tmp/full.jsonl" "$tmp/z.jsonl" -o "$tmp/x.jsonl"
# the later file of more points than the first (2, then 18)
bad_says "merge of two sweeps, the larger second" "only results of one sweep merge" sweep --merge "$tmp/z.jsonl" "$tmp/full.jsonl" -o "$tmp/x.jsonl"
bad_says "status of a sweep file" "line 1 is not a sweep's header" sweep --status "$tmp/s.json"
cp "$tmp/full.jsonl" "$tmp/u$(printf '\377').jsonl"
bad_says "status as JSON of a file name not UTF-8" "--status: the file name is not valid UTF-8 text (byte [0-9]* is 0xff)" sweep --status "$tmp/u$(printf '\377').jsonl" --format json
good "status of a file name not UTF-8" "done 18 of 18" sweep --status "$tmp/u$(printf '\377').jsonl"
sed '1s/"topocc_sweep":1/"topocc_sweep":2/' "$tmp/full.jsonl" >"$tmp/v2.jsonl"
bad_says "status of a newer format" "results format 2 is newer than this topocc reads (1)" sweep --status "$tmp/v2.jsonl"
bad_says "a results file as the sweep" "this is a results file" sweep "$tmp/full.jsonl" -o "$tmp/x.jsonl"
printf '%s\nnot json\n%s\n' "$(head -1 "$tmp/full.jsonl")" "$(sed -n 2p "$tmp/full.jsonl")" >"$tmp/d.jsonl"
bad_says "a damaged line in the middle" "line 2 is not JSON" sweep "$tmp/s.json" -o "$tmp/d.jsonl"
# a point line with neither result nor error, or with another point's values: damaged, named by its line
printf '%s\n%s\n{"point": 1, "values": {}}\n' "$(head -1 "$tmp/full.jsonl")" "$(sed -n 2p "$tmp/full.jsonl")" >"$tmp/d2.jsonl"
bad_says "resume: a point line of neither result nor error" "line 3 (point 1): it has neither \"result\" (an object) nor \"error\" (a string): the file is damaged" sweep "$tmp/s.json" -o "$tmp/d2.jsonl"
bad_says "status: a point line of neither result nor error" "line 3 (point 1): it has neither" sweep --status "$tmp/d2.jsonl"
bad_says "merge: a point line of neither result nor error" "line 3 (point 1): it has neither" sweep --merge "$tmp/d2.jsonl" -o "$tmp/x.jsonl"
printf '%s\n%s\n' "$(head -1 "$tmp/full.jsonl")" "$(sed -n 2p "$tmp/full.jsonl" | sed 's/"point":[0-9]*/"point":5/')" >"$tmp/d3.jsonl"
bad_says "resume: a point line of another point's values" "line 2 (point 5): its \"values\" are not those of its point by the header's axes: the file is damaged" sweep "$tmp/s.json" -o "$tmp/d3.jsonl"
bad_says "status: a point line of another point's values" "line 2 (point 5): its \"values\" are not" sweep --status "$tmp/d3.jsonl"
bad_says "merge: a point line of another point's values" "line 2 (point 5): its \"values\" are not" sweep --merge "$tmp/full.jsonl" "$tmp/d3.jsonl" -o "$tmp/x.jsonl"

# ---- killed at random points, resumed: the same set as one clean run ----
cat >"$tmp/k.json" <<EOF
{"scenario": {"command": "collective", "network": {"topo": ["clos:down=32x32,up=1x32,bw=400Gbps"]},
              "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [1048576]},
              "eval": {"mode": "flow"}, "flow": {"skip": false}},
 "sweep": {"axes": {"collective.sizes": [[1024], [4096], [16384], [65536], [262144], [1048576], [4194304],
                                         [16777216], [67108864], [268435456]]}}}
EOF
"$T" sweep "$tmp/k.json" -o "$tmp/kfull.jsonl" --quiet >/dev/null || { echo "FAIL (kill sweep reference)"; fails=$((fails + 1)); }
partial=0
for delay in 0.4 0.8 1.2; do
    "$T" sweep "$tmp/k.json" -o "$tmp/k.jsonl" --quiet >/dev/null 2>&1 &
    pid=$!
    sleep $delay
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    n=$(points_in "$tmp/k.jsonl")
    [ "$n" -lt 10 ] && partial=$((partial + 1))
done
# the kills must have hit runs in flight, or the check below checks nothing
[ "$partial" -gt 0 ] || { echo "FAIL (no kill left a partial results file: the sweep is too fast for the check)"; fails=$((fails + 1)); }
"$T" sweep "$tmp/k.json" -o "$tmp/k.jsonl" --quiet >/dev/null 2>"$tmp/err" || { echo "FAIL (resume after kills)"; cat "$tmp/err"; fails=$((fails + 1)); }
same_sets "killed three times, then resumed" "$tmp/kfull.jsonl" "$tmp/k.jsonl"

# ---- a merge takes the lock a running sweep holds: into the file it
# writes (in place or from another file), or from it, it is refused, and
# the sweep loses nothing ----
rm -f "$tmp/k.jsonl"
"$T" sweep "$tmp/k.json" -o "$tmp/k.jsonl" --quiet >/dev/null 2>"$tmp/kerr" &
pid=$!
n=0
while [ "$(cat "$tmp/k.jsonl" 2>/dev/null | wc -l)" -lt 2 ] && [ $n -lt 200 ]; do
    sleep 0.05
    n=$((n + 1))
done
"$T" sweep --merge "$tmp/k.jsonl" -o "$tmp/k.jsonl" >"$tmp/m1.out" 2>"$tmp/m1.err"
rc1=$?
"$T" sweep --merge "$tmp/full.jsonl" -o "$tmp/k.jsonl" >"$tmp/m2.out" 2>"$tmp/m2.err"
rc2=$?
"$T" sweep --merge "$tmp/k.jsonl" -o "$tmp/kcopy.jsonl" >"$tmp/m3.out" 2>"$tmp/m3.err"
rc3=$?
if kill -0 $pid 2>/dev/null; then
    for m in 1 2 3; do
        eval rc=\$rc$m
        if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/m$m.err")" -ne 1 ] || ! grep -q "is being written by a topocc sweep" "$tmp/m$m.err"; then
            echo "FAIL (merge $m during a sweep: rc=$rc)"; cat "$tmp/m$m.err"; fails=$((fails + 1))
        fi
    done
    [ ! -e "$tmp/kcopy.jsonl" ] || { echo "FAIL (a refused merge wrote its output)"; fails=$((fails + 1)); }
else
    echo "FAIL (the sweep ended before the merges: too fast for the check)"; fails=$((fails + 1))
fi
wait $pid || { echo "FAIL (the sweep under merges)"; cat "$tmp/kerr"; fails=$((fails + 1)); }
same_sets "a sweep that merges tried to replace" "$tmp/kfull.jsonl" "$tmp/k.jsonl"

# ---- MPI on localhost: 2 and 4 ranks, the same set as one process ----
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=""
if ! command -v mpirun >/dev/null 2>&1 || [ ! -e "$BIN/libtopocc_mpi.so" ]; then
    mpi="mpirun or libtopocc_mpi.so missing (Debian openmpi-bin, libopenmpi-dev)"
elif ! mpirun -np 2 --oversubscribe true >"$tmp/probe" 2>&1; then
    # MPI itself cannot start two processes on this machine (a container
    # without shared memory, ...): not topocc's to test here.
    mpi="mpirun cannot start 2 processes here: $(head -n 3 "$tmp/probe" | tr '\n' ' ')"
fi
if [ -z "$mpi" ]; then
    for np in 2 4; do
        rm -f "$tmp/mpi.jsonl"
        mpirun -np $np --oversubscribe "$T" sweep "$tmp/k.json" -o "$tmp/mpi.jsonl" --quiet >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -ne 0 ] || ! grep -q "on $np MPI ranks" "$tmp/out"; then
            echo "FAIL (mpirun -np $np: rc=$rc)"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
        fi
        same_sets "mpirun -np $np" "$tmp/kfull.jsonl" "$tmp/mpi.jsonl"
    done
    # resumed under MPI after a partial file
    head -n 7 "$tmp/kfull.jsonl" >"$tmp/mpi.jsonl"
    mpirun -np 2 --oversubscribe "$T" sweep "$tmp/k.json" -o "$tmp/mpi.jsonl" --quiet >"$tmp/out" 2>&1
    grep -q "6 held already, 4 run now" "$tmp/out" || { echo "FAIL (MPI resume)"; cat "$tmp/out"; fails=$((fails + 1)); }
    same_sets "MPI resume" "$tmp/kfull.jsonl" "$tmp/mpi.jsonl"
    # more ranks than points: the idle ones exit 0 with a note
    mpirun -np 4 --oversubscribe "$T" sweep "$tmp/z.json" -o "$tmp/mz.jsonl" --quiet >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q "had no point to run" "$tmp/err"; then
        echo "FAIL (idle ranks: rc=$rc)"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
    fi
    same_sets "more ranks than points" "$tmp/z.jsonl" "$tmp/mz.jsonl"
    # bad input under MPI: every rank exits 2, one line from rank 0
    mpirun -np 2 --oversubscribe "$T" sweep "$tmp/s.json" -o "$tmp/other.jsonl" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 2 ] || [ "$(grep -c "another sweep" "$tmp/err")" -ne 1 ]; then
        echo "FAIL (bad input under MPI: rc=$rc)"; cat "$tmp/err"; fails=$((fails + 1))
    fi
    # points validated by the ranks in turn: the first bad point is named,
    # whichever rank built it (point 1 on rank 1; points 1 and 2 bad, rank 0
    # finding 2 first), once, and no results file is made
    printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"]}}, "sweep": {"axes": {"collective.sizes": [[1024], "big", "huge", [2048]]}}}' "$CLOS" >"$tmp/b9m.json"
    # and point 2 alone bad: rank 0's own (its message as it built it)
    printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"]}}, "sweep": {"axes": {"collective.sizes": [[1024], [2048], "big", [4096]]}}}' "$CLOS" >"$tmp/b9r.json"
    for f in b9 b9m b9r; do
        rm -f "$tmp/m$f.jsonl"
        mpirun -np 2 --oversubscribe "$T" sweep "$tmp/$f.json" -o "$tmp/m$f.jsonl" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        want='point 1 (collective.sizes="big")'
        [ $f = b9r ] && want='point 2 (collective.sizes="big")'
        if [ $rc -ne 2 ] || [ "$(grep -c -F "$want" "$tmp/err")" -ne 1 ] || [ -e "$tmp/m$f.jsonl" ]; then
            echo "FAIL (a bad point under MPI, $f: rc=$rc)"; cat "$tmp/err"; fails=$((fails + 1))
        fi
    done
else
    echo "note: MPI checks not run: $mpi"
fi

# files a run writes (flow.trace, iteration.timeline): one file a point, or
# refused before anything is written
TB='"command": "collective", "network": {"topo": ["'$CLOS'"]}, "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [1048576]}, "eval": {"mode": "flow"}'
printf '{"scenario": {%s, "flow": {"trace": "%s"}}, "sweep": {"axes": {"collective.sizes": [[1024], [2048]]}}}' "$TB" "$tmp/tr.json" >"$tmp/tr1.json"
bad_says "a trace file in the base of 2 points" "scenario.flow.trace: each of the sweep's 2 points would write" sweep "$tmp/tr1.json" -o "$tmp/tr1.jsonl"
[ ! -e "$tmp/tr.json" ] && [ ! -e "$tmp/tr1.jsonl" ] || { echo "FAIL (a refused trace sweep wrote a file)"; fails=$((fails + 1)); }
printf '{"scenario": {%s, "flow": {"trace": "%s"}}, "sweep": {"axes": {"collective.sizes": [[1024]]}}}' "$TB" "$tmp/tr.json" >"$tmp/tr2.json"
good "a trace file in a sweep of 1 point" "1 points: 0 held already, 1 run now" sweep "$tmp/tr2.json" -o "$tmp/tr2.jsonl" --quiet
[ -s "$tmp/tr.json" ] || { echo "FAIL (a sweep of one point wrote no trace)"; fails=$((fails + 1)); }
printf '{"scenario": {%s}, "sweep": {"axes": {"collective.sizes": [[1024], [2048]], "flow.trace": ["%s", "%s"]}}}' "$TB" "$tmp/ta.json" "$tmp/tb.json" >"$tmp/tr3.json"
bad_says "a trace axis under another axis" "sweep.axes.flow.trace: 2 points would write" sweep "$tmp/tr3.json" -o "$tmp/tr3.jsonl"
sed 's/"sweep": {/"sweep": {"mode": "zip", /' "$tmp/tr3.json" >"$tmp/tr4.json"
good "a trace axis, a file a point" "2 points: 0 held already, 2 run now" sweep "$tmp/tr4.json" -o "$tmp/tr4.jsonl" --quiet
[ -s "$tmp/ta.json" ] && [ -s "$tmp/tb.json" ] || { echo "FAIL (a trace a point)"; fails=$((fails + 1)); }
# one file under two names, the results file, the sweep file: refused, untouched
printf '{"scenario": {%s}, "sweep": {"mode": "zip", "axes": {"collective.sizes": [[1024], [2048]], "flow.trace": ["%s", "%s"]}}}' "$TB" "$tmp/tc.json" "$tmp/./tc.json" >"$tmp/tr5.json"
bad_says "two trace names of one file" "point 0 (.*) and point 1 (.*): flow.trace '.*tc.json' and '.*/./tc.json' are one file" sweep "$tmp/tr5.json" -o "$tmp/tr5.jsonl"
printf '{"scenario": {%s}, "sweep": {"mode": "zip", "axes": {"collective.sizes": [[1024], [2048]], "flow.trace": ["%s", "%s"]}}}' "$TB" "$tmp/td.json" "$tmp/tr6.jsonl" >"$tmp/tr6.json"
cp "$tmp/tr4.jsonl" "$tmp/tr6.jsonl"
cp "$tmp/tr6.jsonl" "$tmp/tr6.keep"
bad_says "a trace that is the results file" "point 1 (collective.sizes=\[2048\], flow.trace=.*): flow.trace '.*tr6.jsonl' is the results file" sweep "$tmp/tr6.json" -o "$tmp/./tr6.jsonl"
cmp -s "$tmp/tr6.jsonl" "$tmp/tr6.keep" || { echo "FAIL (a trace axis overwrote the results file)"; fails=$((fails + 1)); }
rm "$tmp/tr6.jsonl"
bad_says "a trace that is the results file, not there yet" "flow.trace '.*tr6.jsonl' is the results file" sweep "$tmp/tr6.json" -o "$tmp/tr6.jsonl"
printf '{"scenario": {%s}, "sweep": {"mode": "zip", "axes": {"collective.sizes": [[1024], [2048]], "flow.trace": ["%s", "%s"]}}}' "$TB" "$tmp/te.json" "$tmp/tr7.json" >"$tmp/tr7.json"
cp "$tmp/tr7.json" "$tmp/tr7.keep"
bad_says "a trace that is the sweep file" "point 1 (.*): flow.trace '.*tr7.json' is the sweep file itself" sweep "$tmp/tr7.json" -o "$tmp/tr7.jsonl"
cmp -s "$tmp/tr7.json" "$tmp/tr7.keep" || { echo "FAIL (a trace axis overwrote the sweep file)"; fails=$((fails + 1)); }
[ ! -e "$tmp/tc.json" ] && [ ! -e "$tmp/td.json" ] && [ ! -e "$tmp/te.json" ] && [ ! -e "$tmp/tr6.jsonl" ] && [ ! -e "$tmp/tr7.jsonl" ] ||
    { echo "FAIL (a refused trace sweep wrote a file)"; fails=$((fails + 1)); }
printf '{"scenario": {"command": "train", "network": {"topo": ["%s"]}, "iteration": {"model": "resnet18", "timeline": "%s"}, "parallel": {"dp": 8}}, "sweep": {"axes": {"parallel.dp": [4, 8]}}}' "$CLOS" "$tmp/tl.json" >"$tmp/tl.json.sweep"
bad_says "a timeline in the base of 2 points" "scenario.iteration.timeline: each of the sweep's 2 points would write" sweep "$tmp/tl.json.sweep" -o "$tmp/tl.jsonl"

# a point's file that is a directory: refused with the other points'
# validation, naming the value, before any point runs (not
# when the point's run ends)
mkdir "$tmp/trdir"
printf '{"scenario": {%s}, "sweep": {"mode": "zip", "axes": {"collective.sizes": [[1024], [2048]], "flow.trace": ["%s", "%s"]}}}' "$TB" "$tmp/tf.json" "$tmp/trdir" >"$tmp/tr8.json"
bad_says "a trace that is a directory" "point 1 (collective.sizes=\[2048\], flow.trace=\".*trdir\"): --trace .*trdir: a directory" sweep "$tmp/tr8.json" -o "$tmp/tr8.jsonl"
printf '{"scenario": {"command": "train", "network": {"topo": ["%s"]}, "iteration": {"model": "resnet18", "allow_oom": true}, "parallel": {"dp": 64}}, "sweep": {"axes": {"iteration.timeline": ["%s", "%s"]}}}' "$CLOS" "$tmp/tl1.json" "$tmp/trdir" >"$tmp/tl2.json.sweep"
bad_says "a timeline that is a directory" "point 1 (iteration.timeline=\".*trdir\"): --timeline .*trdir: a directory" sweep "$tmp/tl2.json.sweep" -o "$tmp/tl2.jsonl"
# a point's file in a directory that does not exist: refused the same way
printf '{"scenario": {%s}, "sweep": {"mode": "zip", "axes": {"collective.sizes": [[1024], [2048]], "flow.trace": ["%s", "%s"]}}}' "$TB" "$tmp/tg.json" "$tmp/nodir/t.json" >"$tmp/tr9.json"
bad_says "a trace in a missing directory" "point 1 (collective.sizes=\[2048\], flow.trace=\".*nodir/t.json\"): --trace .*nodir/t.json: the directory .*nodir does not exist" sweep "$tmp/tr9.json" -o "$tmp/tr9.jsonl"
printf '{"scenario": {"command": "train", "network": {"topo": ["%s"]}, "iteration": {"model": "resnet18", "allow_oom": true}, "parallel": {"dp": 64}}, "sweep": {"axes": {"iteration.timeline": ["%s", "%s"]}}}' "$CLOS" "$tmp/tl3.json" "$tmp/nodir/tl.json" >"$tmp/tl3.json.sweep"
bad_says "a timeline in a missing directory" "point 1 (iteration.timeline=\".*nodir/tl.json\"): --timeline .*nodir/tl.json: the directory .*nodir does not exist" sweep "$tmp/tl3.json.sweep" -o "$tmp/tl3.jsonl"
[ ! -e "$tmp/tf.json" ] && [ ! -e "$tmp/tl1.json" ] && [ ! -e "$tmp/tr8.jsonl" ] && [ ! -e "$tmp/tl2.jsonl" ] &&
    [ ! -e "$tmp/tg.json" ] && [ ! -e "$tmp/tl3.json" ] && [ ! -e "$tmp/tr9.jsonl" ] && [ ! -e "$tmp/tl3.jsonl" ] &&
    [ ! -e "$tmp/nodir" ] || { echo "FAIL (a sweep refused for a point's file wrote a file)"; fails=$((fails + 1)); }

# a range of sizes as an axis's value: the point's sizes
printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"]}}, "sweep": {"axes": {"collective.sizes": ["1KiB:4KiB:2", [8192]]}}}' "$CLOS" >"$tmp/rs.json"
good "a range of sizes as an axis value" "2 points: 0 held already, 2 run now" sweep "$tmp/rs.json" -o "$tmp/rs.jsonl" --quiet
python3 - "$tmp/rs.jsonl" <<'EOF2' || { echo "FAIL (a range of sizes as an axis value)"; fails=$((fails + 1)); }
import json, sys
pts = {d['point']: d for d in map(json.loads, open(sys.argv[1]).read().split('\n')[1:-1])}
assert pts[0]['scenario']['collective']['sizes'] == [1024, 2048, 4096], pts[0]['scenario']['collective']
assert pts[1]['scenario']['collective']['sizes'] == [8192]
EOF2
# a factor that is not whole: whole bytes recorded, and a point's line replays
printf '{"scenario": {"command": "collective", "network": {"topo": ["%s"]}, "collective": {"op": ["allreduce"]}}, "sweep": {"axes": {"collective.sizes": ["1KiB:4KiB:1.3"]}}}' "$CLOS" >"$tmp/rs2.json"
good "a range with a factor of 1.3 as an axis value" "1 points: 0 held already, 1 run now" sweep "$tmp/rs2.json" -o "$tmp/rs2.jsonl" --quiet
grep -q '"sizes":\[1024,1331,1730,2249,2924,3802\]' "$tmp/rs2.jsonl" || { echo "FAIL (sizes of a range with factor 1.3)"; fails=$((fails + 1)); }
sed -n 2p "$tmp/rs2.jsonl" >"$tmp/rs2line.json"
good "a point of a range with factor 1.3 replays" "3.71KiB" replay "$tmp/rs2line.json"

# a key of the base that an axis makes moot is left out of those points (a
# DDP point of a sweep over sync.strategy whose base sets inner steps); an
# axis's own key must apply
cat >"$tmp/moot.json" <<EOF
{"scenario": {"command": "train", "network": {"topo": ["multidc:pods=2,pod=clos,down=4,up=1,wan_bw=10Gbps,wan_lat=1ms"]},
              "iteration": {"model": "resnet18"}, "parallel": {"dp": 8}, "sync": {"inner_steps": 50}},
 "sweep": {"mode": "product", "axes": {"sync.strategy": ["ddp", "diloco"]}}}
EOF
good "sweep: a base key an axis makes moot" "2 points: 0 held already, 2 run now" sweep "$tmp/moot.json" -o "$tmp/moot.jsonl" --quiet
# ... and out of the point's run: each point replayed from its own line
# gives its result (a pipeline axis over virtual stages too)
cat >"$tmp/moot3.json" <<EOF
{"scenario": {"command": "train", "network": {"topo": ["clos:down=8x8,up=1x8"]},
              "iteration": {"model": "mixtral-8x7b", "micro_batches": 4, "virtual_stages": 2, "allow_oom": true},
              "parallel": {"dp": 16, "tp": 2, "pp": 2, "ep": 8}},
 "sweep": {"mode": "zip", "axes": {"parallel.pp": [2, 1], "parallel.dp": [16, 32]}}}
EOF
good "sweep: a pipeline axis over virtual stages" "2 points: 0 held already, 2 run now" sweep "$tmp/moot3.json" -o "$tmp/moot3.jsonl" --quiet
for f in moot moot3; do
    for p in 2 3; do
        sed -n "${p}p" "$tmp/$f.jsonl" >"$tmp/point.json"
        "$T" replay "$tmp/point.json" --format json --quiet >"$tmp/point_re.json" 2>&1
        python3 - "$tmp/point.json" "$tmp/point_re.json" <<'PY' || { echo "FAIL ($f line $p: a point ran a key its scenario lacks)"; fails=$((fails + 1)); }
import json, sys
line, re = (json.load(open(f)) for f in sys.argv[1:3])
re.pop("scenario")
assert line["result"] == re, [k for k in re if re[k] != line["result"].get(k)]
PY
    done
done
cat >"$tmp/moot2.json" <<EOF
{"scenario": {"command": "train", "network": {"topo": ["multidc:pods=2,pod=clos,down=4,up=1,wan_bw=10Gbps,wan_lat=1ms"]},
              "iteration": {"model": "resnet18"}, "parallel": {"dp": 8}},
 "sweep": {"mode": "product", "axes": {"sync.inner_steps": [10, 50]}}}
EOF
bad "sweep: an axis whose key does not apply" sweep "$tmp/moot2.json" -o "$tmp/moot2.jsonl" --quiet

# a sweep over occupancies from 0 and placement seeds: the seed applies
# wherever an occupancy is given, 0 included
cat >"$tmp/occ.json" <<EOF
{"scenario": {"command": "collective", "network": {"topo": ["torus:dims=8x8x8"]},
              "job": {"ranks": 16, "place": "slice"},
              "collective": {"op": ["allreduce"], "sizes": [1048576]}},
 "sweep": {"mode": "product", "axes": {"job.occupancy": [0, 0.5], "job.seed": [1, 2]}}}
EOF
good "sweep: occupancy from 0 with seeds" "4 points: 0 held already, 4 run now" sweep "$tmp/occ.json" -o "$tmp/occ.jsonl" --quiet

if [ "$fails" -ne 0 ]; then
    echo "$fails sweep CLI checks failed"
    exit 1
fi
echo "sweep CLI checks passed"
