#!/bin/bash
# alloc_fail.sh - out of memory, tested as SQLite tests it: each command of a
# set is run once normally, counting its allocations (N) and tracing their
# call stacks, then once for each allocation k chosen below with the k-th
# allocation failed (a TOPOCC_ALLOC_FAIL build: src/core/alloc_fail.c,
# sanitized, so a leak on the error path is a LeakSanitizer report). Every
# failed run must either
#   - exit 1 with exactly one line on stderr saying "out of memory", its
#     standard output a prefix of the normal run's (nothing wrong printed), or
#   - exit 0 with standard output and error equal to the normal run's (the
#     allocation had a fallback; VARY below: lines that may differ),
# with no signal, no hang, no sanitizer report (a leak, a bad access) and
# no file half-written: every file the run leaves in its directory (--out,
# --out-dir, a sweep's results) is the normal run's, or for a sweep's
# results file (.jsonl) whole lines, each the normal run's or a point's
# failure "out of memory" (a sweep records a point that fails and goes on;
# docs/SWEEP.md), no point twice, and what it held before the run (SETUP
# below) still at its head; no temporary left.
#
# Which k: by default, the first two allocations made from each call stack
# (the calls of a loop share one: the first fails with nothing yet to free,
# the second with one to free); OOM_ALL=1: every k from 1 to N.
# OOM_PERSIST=1: every allocation from the k-th on fails (SQLite's
# persistent mode), so the error paths get no memory either.
# OOM_JOBS runs in parallel (the number of CPUs by default). Prints, per
# command, N, the call stacks, the runs and the seconds; fails when a run
# fails a check, showing for each of the first OOM_SHOW (5) the place of the
# allocation (addr2line) and the run's stderr. docs/VALIDATION.md, "Out of
# memory".
#
# usage: tests/alloc_fail.sh BUILD_DIR [COMMAND_NAME...]
#   (make test-oom: configures build-oom with -DTOPOCC_ALLOC_FAIL=ON and runs it)
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [COMMAND_NAME...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
T=$build/topocc
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$T" ] || { echo "alloc_fail: no $T" >&2; exit 2; }
jobs=${OOM_JOBS:-$(nproc 2>/dev/null || echo 2)}
all=${OOM_ALL:-0}
persist=${OOM_PERSIST:-0}
show=${OOM_SHOW:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topocc-oom.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=1:exitcode=86 UBSAN_OPTIONS=print_stacktrace=1:exitcode=87
unset TOPOCC_FAIL_ALLOC TOPOCC_FAIL_ALLOC_PERSIST TOPOCC_ALLOC_COUNT TOPOCC_ALLOC_TRACE
if ! grep -q TOPOCC_FAIL_ALLOC "$T"; then
    echo "alloc_fail: $T is not a TOPOCC_ALLOC_FAIL build" >&2
    exit 2
fi

# ---- inputs ----------------------------------------------------------------
in=$tmp/in
mkdir -p "$in"
cat >"$in/jobs.json" <<'EOF'
{"jobs": [
  {"name": "A", "op": "allreduce", "algo": "ring", "size": "1MiB", "endpoints": "0,4"},
  {"name": "B", "op": "allreduce", "algo": "ring", "size": "1MiB", "endpoints": [1, 5], "start": "0us"}
]}
EOF
cat >"$in/sweep.json" <<'EOF'
{"scenario": {"command": "collective", "network": {"topo": ["clos:down=4x4,up=1x4"]},
              "collective": {"op": ["allreduce"], "algo": ["ring"], "sizes": [65536]}, "eval": {"mode": "steps"}},
 "sweep": {"axes": {"network.topo[0]": ["clos:down=4x4,up=1x4", "torus:dims=4x4"],
                    "collective.sizes": [["64KiB"], ["1MiB"]]}}}
EOF
"$T" collective --topo clos:down=4x4,up=1x2 --op allreduce --algo ring --size 1MiB --mode steps \
    --out "$in/result.json" >/dev/null 2>&1 || { echo "alloc_fail: cannot write the saved result" >&2; exit 1; }
# A results file that holds the header and two of the four points.
"$T" sweep "$in/sweep.json" -o "$in/full.jsonl" --quiet >/dev/null 2>&1 &&
    head -n 3 "$in/full.jsonl" >"$in/half.jsonl" || { echo "alloc_fail: cannot write a results file" >&2; exit 1; }

# ---- the commands: NAME ARGS... (run in an empty directory of their own) --
CMDS=(
    "topo-clos|topo clos:down=4x4,up=1x4,bw=100Gbps,lat=1us --links"
    "topo-torus|topo torus:dims=4x4x2 --format json"
    "formula|collective --topo clos:down=4x4,up=1x4 --op allreduce --algo auto --sizes 64KiB:16MiB:16 --out-dir d"
    "steps|collective --topo torus:dims=4x4 --op alltoall --size 1MiB --mode steps --out r.json"
    "flow|collective --topo clos:down=4x4,up=1x2 --op allreduce --algo ring --size 1MiB --mode flow"
    "compare|compare --topo clos:down=4x4,up=1x4 --topo torus:dims=4x4 --op allreduce --sizes 64KiB:16MiB:16 --format csv --out c.csv"
    "failures|failures --topo clos:down=4x4,up=1x4 --op allreduce --size 1MiB --algo ring --mode steps --fail-random links=2,seed=5 --trials 2"
    "concurrent|concurrent --topo clos:down=4x2,up=1x1 --jobs $in/jobs.json"
    "sweep|sweep $in/sweep.json -o r.jsonl"
    "sweep-resume|sweep $in/sweep.json -o r.jsonl"
    "replay|replay $in/result.json --format json"
    "nccl-tests|nccl-tests --preset dgx-h100 -b 1M -e 1M"
    "train|train --topo clos:hosts=16,radix=8,tiers=2,node=8 --model $src/tests/data/models/tiny.json --dp 4 --tp 2 --pp 2 --micro-batches 2"
    "train-flow|train --topo clos:hosts=16,radix=8,tiers=2,node=8 --model $src/tests/data/models/tiny.json --dp 4 --tp 2 --pp 2 --micro-batches 2 --mode flow --dp-algo ring"
)

# Lines that say how a command ran, not what it found, and may differ where
# an allocation failed and a fallback took over: flow's symmetry folding and
# skipping of repeated steps are optimisations that, without their memory,
# simulate more ranks or steps to the same times.
declare -A VARY=(
    [flow]='^(symmetry|events|repetition) '
)

# A file put in the command's directory before it runs: FROM (in the inputs)
# and TO; the run must leave it whole as it was (appending to it only).
declare -A SETUP=(
    [sweep-resume]='half.jsonl r.jsonl'
)

# setup NAME DIR
setup() {
    [ -n "${SETUP[$1]:-}" ] || return 0
    set -- $1 "$2" ${SETUP[$1]}
    cp "$in/$3" "$2/$4"
}

# What varies from run to run (a sweep's timings) and the command's VARY
# lines: norm FILE [NAME].
norm() {
    sed -e 's/"elapsed_s":[^,}]*/"elapsed_s":T/g' -e 's/ in [0-9.e+-]* s/ in T s/g' "$1" |
        grep -Ev "${VARY[${2:--}]:-^\b\B}"
}

# check NAME K: one run with the K-th allocation failed; on failure writes
# the reason to $tmp/NAME/fail.K.
check() {
    local name=$1 k=$2 base=$tmp/$1
    local d=$base/k$k why=""
    mkdir -p "$d"
    setup "$name" "$d"
    (cd "$d" && TOPOCC_FAIL_ALLOC=$k TOPOCC_FAIL_ALLOC_PERSIST=$persist timeout 120 "$T" $(cat "$base/args") \
        >"$d.out" 2>"$d.err")
    local rc=$?
    if grep -q -E 'Sanitizer|runtime error' "$d.err"; then
        why="sanitizer report (exit $rc)"
    elif [ "$rc" -eq 0 ]; then
        norm "$d.out" "$name" | cmp -s - "$base/ref.out" || why="exit 0 with other output"
        norm "$d.err" "$name" | cmp -s - "$base/ref.err" || why="exit 0 with other messages"
    elif [ "$rc" -eq 1 ]; then
        if [ "$(wc -l <"$d.err")" -ne 1 ] || ! grep -q '^topocc: .*out of memory' "$d.err"; then
            why="exit 1 without the one line 'out of memory'"
        else
            local n
            n=$(norm "$d.out" "$name" | wc -c)
            norm "$d.out" "$name" | cmp -s - <(head -c "$n" "$base/ref.out") || why="exit 1 after printing other output"
        fi
    else
        why="exit $rc"
    fi
    # Files: each one the normal run's (results files: whole lines of it).
    if [ -z "$why" ]; then
        local f
        while IFS= read -r f; do
            if [ ! -f "$base/ref/$f" ]; then
                why="left $f, which the normal run does not write"
            elif [ "${f%.jsonl}" != "$f" ]; then
                local was=${SETUP[$name]:-}
                if [ -n "$(tail -c 1 "$d/$f")" ]; then
                    why="left $f with a torn last line"
                elif [ -n "$was" ] && [ "${was#* }" = "$f" ] &&
                    ! cmp -s -n "$(wc -c <"$in/${was% *}")" "$in/${was% *}" "$d/$f"; then
                    why="left $f without the lines it held before"
                elif [ -n "$(grep -o '^{"point":[0-9]*,' "$d/$f" | sort | uniq -d)" ]; then
                    why="left $f with a point twice"
                elif [ -n "$(norm "$d/$f" | sort | comm -23 - <(norm "$base/ref/$f" | sort) |
                    grep -Ev '^\{"point":[0-9]+,.*"error":"([^"\\]|\\.)*out of memory([^"\\]|\\.)*"\}$')" ]; then
                    why="left $f with lines the normal run does not write"
                fi
            elif ! cmp -s "$d/$f" "$base/ref/$f"; then
                why="left $f different from the normal run's"
            fi
            [ -n "$why" ] && break
        done < <(cd "$d" && find . -type f | sed 's|^\./||')
    fi
    if [ -n "$why" ]; then
        { echo "$why"; head -c 4000 "$d.err"
          [ "$rc" -eq 0 ] && diff <(norm "$d.out" "$name") "$base/ref.out" | head -10; } >"$base/fail.$k" 2>&1
    else
        rm -rf "$d" "$d.out" "$d.err"
    fi
}

# where TRACE K: the allocation's place, as its first frames (addr2line).
where() {
    local a
    a=$(awk -v k="$2" '$1 == k { print $3 }' "$1")
    if [ -n "$a" ] && command -v addr2line >/dev/null; then
        echo "    allocated at: $(echo "$a" | tr , '\n' | sed 's/^/0x/' | addr2line -f -i -p -e "$T" |
            sed -e "s|$src/||" -e 's/ (discriminator [0-9]*)//' | paste -sd '<' | sed 's/</ < /g')"
    fi
}

fails=0
total=0
t0=$(date +%s)
printf '%-11s %6s %7s %6s %6s %5s\n' command N stacks runs failed s
for c in "${CMDS[@]}"; do
    name=${c%%|*}
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
        continue
    fi
    base=$tmp/$name
    mkdir -p "$base/ref"
    setup "$name" "$base/ref"
    echo "${c#*|}" >"$base/args"
    t1=$(date +%s)
    (cd "$base/ref" && TOPOCC_ALLOC_COUNT=$base/count TOPOCC_ALLOC_TRACE=$base/trace "$T" $(cat "$base/args") \
        >"$base/ref.raw" 2>"$base/ref.err.raw")
    rc=$?
    if [ "$rc" -ne 0 ] || grep -q -E 'Sanitizer|runtime error' "$base/ref.err.raw"; then
        echo "FAIL: $name: the normal run exits $rc"
        cat "$base/ref.err.raw"
        fails=$((fails + 1))
        continue
    fi
    norm "$base/ref.raw" "$name" >"$base/ref.out"
    norm "$base/ref.err.raw" "$name" >"$base/ref.err"
    n=$(cat "$base/count")
    stacks=$(awk '{print $2}' "$base/trace" | sort -u | wc -l)
    if [ "$all" = 1 ]; then
        seq 1 "$n" >"$base/ks"
    else
        awk '++seen[$2] <= 2 { print $1 }' "$base/trace" >"$base/ks"
    fi
    runs=0
    while read -r k; do
        while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do
            wait -n
        done
        check "$name" "$k" &
        runs=$((runs + 1))
    done <"$base/ks"
    wait
    nf=$(find "$base" -maxdepth 1 -name 'fail.*' | wc -l)
    printf '%-11s %6s %7s %6s %6s %5s\n' "$name" "$n" "$stacks" "$runs" "$nf" "$(($(date +%s) - t1))"
    total=$((total + runs))
    if [ "$nf" -gt 0 ]; then
        for f in $(cd "$base" && ls | grep '^fail\.' | sort -t. -k2 -n | head -"$show"); do
            echo "FAIL: $name: allocation ${f#fail.} failed: $(head -1 "$base/$f")"
            where "$base/trace" "${f#fail.}"
            sed -n '2,40p' "$base/$f" | sed 's/^/    /'
        done
        [ "$nf" -gt "$show" ] && echo "    ... and $((nf - show)) more"
        fails=$((fails + nf))
    fi
done
echo "alloc_fail: $total runs in $(($(date +%s) - t0)) s, $fails failed$([ "$persist" = 1 ] && echo ' (persistent)')"
[ "$fails" -eq 0 ]
