#!/bin/sh
# kill_outputs.sh - runs killed at random points leave no file that looks
# whole unless it is: a flow simulation writing --trace and --out, a sweep
# (its results file, append-only JSON Lines: every line but a torn last one
# whole), train-accuracy with --out, and a report. Each is killed (SIGKILL)
# at delays drawn from a fixed seed over its own run time, then every file
# at its destination name must be absent or complete (JSON that parses, the
# same as an uninterrupted run's where the run is deterministic).
# Usage: kill_outputs.sh path/to/topocc
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# Delays (seconds) spread over [0, total): a fixed pseudo-random draw.
delays() { # total count seed
    awk -v t="$1" -v n="$2" -v s="$3" 'BEGIN { srand(s); for (i = 0; i < n; i++) printf "%.3f ", rand() * t }'
}

# Seconds a command takes (one uninterrupted run).
runtime() {
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}

killed_at() { # delay command...
    d=$1
    shift
    "$@" >/dev/null 2>&1 &
    pid=$!
    sleep "$d"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

whole_json() { # what file [reference]: absent, or JSON (equal to the reference when given)
    [ -e "$2" ] || return 0
    python3 - "$2" "${3:-}" <<'PYEOF' || { echo "FAIL ($1): $2 is at its name but not whole"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[2]:
    ref = json.load(open(sys.argv[2]))
    assert d == ref, 'differs from an uninterrupted run'
PYEOF
}

# ---- a flow simulation with --trace and --out ----
FLOW="collective --topo clos:down=32x16,up=1x16,bw=400Gbps --op allreduce --algo ring --size 1MiB --mode flow --no-skip"
# shellcheck disable=SC2086
"$T" $FLOW --trace "$tmp/ref-trace.json" --out "$tmp/ref.json" >/dev/null || { echo "FAIL (flow reference)"; fails=$((fails + 1)); }
# shellcheck disable=SC2086
total=$(runtime "$T" $FLOW --trace "$tmp/t.json" --out "$tmp/o.json")
i=0
for d in $(delays "$total" 6 11); do
    rm -f "$tmp/t.json" "$tmp/o.json"
    # shellcheck disable=SC2086
    killed_at "$d" "$T" $FLOW --trace "$tmp/t.json" --out "$tmp/o.json"
    whole_json "flow --trace, killed at ${d}s" "$tmp/t.json" "$tmp/ref-trace.json"
    whole_json "flow --out, killed at ${d}s" "$tmp/o.json"
    i=$((i + 1))
done

# ---- train-accuracy --out ----
TA="train-accuracy --codec bf16 --codec int8 --seeds 2 --steps 150 --quiet"
# shellcheck disable=SC2086
total=$(runtime "$T" $TA --out "$tmp/acc.json")
cp "$tmp/acc.json" "$tmp/ref-acc.json"
for d in $(delays "$total" 4 12); do
    rm -f "$tmp/acc.json"
    # shellcheck disable=SC2086
    killed_at "$d" "$T" $TA --out "$tmp/acc.json"
    whole_json "train-accuracy --out, killed at ${d}s" "$tmp/acc.json"
done

# ---- a sweep: the results file is append-only; every line whole but a torn last one ----
cat >"$tmp/s.json" <<JSON
{"scenario": {"command": "collective", "network": {"topo": ["clos:down=32x16,up=1x16,bw=400Gbps"]},
              "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [1048576]},
              "eval": {"mode": "flow"}, "flow": {"skip": false}},
 "sweep": {"axes": {"collective.sizes": [[1024], [65536], [1048576], [16777216], [268435456]]}}}
JSON
total=$(runtime "$T" sweep "$tmp/s.json" -o "$tmp/ref.jsonl" --quiet)
for d in $(delays "$total" 4 13); do
    rm -f "$tmp/r.jsonl"
    killed_at "$d" "$T" sweep "$tmp/s.json" -o "$tmp/r.jsonl" --quiet
    [ -e "$tmp/r.jsonl" ] || continue
    python3 - "$tmp/r.jsonl" <<'PYEOF' || { echo "FAIL (sweep killed at ${d}s: a line in the middle is not whole)"; fails=$((fails + 1)); }
import json, sys
data = open(sys.argv[1]).read()
lines = data.split('\n')
whole = lines[:-1]          # every line ended by a newline
for l in whole:
    json.loads(l)
PYEOF
done

# ---- a report: index.html absent or whole ----
"$T" collective --topo clos:down=8x8,up=1x8 --op allreduce --sizes 1KiB:64MiB:2 --algo all --out "$tmp/c.json" >/dev/null
total=$(runtime "$T" report "$tmp/c.json" -o "$tmp/rep")
for d in $(delays "$total" 4 14); do
    rm -rf "$tmp/rep"
    killed_at "$d" "$T" report "$tmp/c.json" -o "$tmp/rep"
    if [ -e "$tmp/rep/index.html" ] && ! grep -q "</html>" "$tmp/rep/index.html"; then
        echo "FAIL (report killed at ${d}s: index.html not whole)"; fails=$((fails + 1))
    fi
    for f in "$tmp"/rep/*.svg; do
        [ -e "$f" ] || continue
        grep -q "</svg>" "$f" || { echo "FAIL (report killed at ${d}s: $(basename "$f") not whole)"; fails=$((fails + 1)); }
    done
done

# ---- SIGTERM and SIGHUP: no temporary file left beside the outputs ----
# (a background job of a script ignores SIGINT, so it is not sent here;
# gnuplot slowed down so the signal lands while a plot is being written)
mkdir -p "$tmp/slowbin"
gp=$(command -v gnuplot)
printf '#!/bin/sh\nsleep 0.3\nexec "%s" "$@"\n' "$gp" >"$tmp/slowbin/gnuplot"
chmod +x "$tmp/slowbin/gnuplot"
for sig in TERM HUP; do
    for d in 0.5 1.1 1.7; do
        rm -rf "$tmp/rep"
        PATH="$tmp/slowbin:$PATH" "$T" report "$tmp/c.json" -o "$tmp/rep" >/dev/null 2>&1 &
        pid=$!
        sleep "$d"
        kill -s "$sig" "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        left=$(find "$tmp/rep" -name '*.tmp.*' 2>/dev/null | head -1)
        [ -z "$left" ] || { echo "FAIL (report ended by SIG$sig at ${d}s left $(basename "$left"))"; fails=$((fails + 1)); }
    done
done

if [ "$fails" -ne 0 ]; then
    echo "$fails kill checks failed"
    exit 1
fi
echo "kill checks passed: no interrupted output looks whole"
