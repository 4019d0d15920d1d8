#!/bin/sh
# report_cli.sh - the contract of `topocc report`: a scenario (run), a
# result of each command and a sweep's results file (rendered) each give
# DIR/index.html whose every image is an SVG in DIR beside its data as
# CSV, linked relatively (no absolute path, no remote URL); a torn last
# line of a sweep is left out with a note; bad input gets one line on
# stderr, exit code 2 and nothing on stdout.
# usage: tests/report_cli.sh path/to/topocc
set -u
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
sweep="$here/data/sweep-example.jsonl"
acc="$here/../examples/accuracy-cnn.json"
CLOS="clos:down=8x8,up=1x8,bw=400Gbps,lat=1us"

fail() {
    echo "FAIL ($1): $2"
    fails=$((fails + 1))
}

# check DIR WHAT PLOTS...: DIR/index.html exists; each <img src> is a
# relative name of an SVG in DIR with its CSV beside it (header and data),
# linked from the page; the page names no absolute path or remote URL; the
# plots named are among the images; nothing temporary is left.
check() {
    dir="$1"
    what="$2"
    shift 2
    page="$dir/index.html"
    if [ ! -s "$page" ]; then
        fail "$what" "no $page"
        return
    fi
    srcs=$(grep -o '<img src="[^"]*"' "$page" | sed 's/^<img src="//; s/"$//')
    for s in $srcs; do
        case "$s" in
        /* | *:* | *..* | */*) fail "$what" "image '$s' is not a name in the report's directory" ;;
        *.svg) ;;
        *) fail "$what" "image '$s' is not an SVG" ;;
        esac
        if ! head -c 300 "$dir/$s" 2>/dev/null | grep -q '<svg' || ! tail -c 20 "$dir/$s" | grep -q '</svg>'; then
            fail "$what" "$s is missing or not a whole SVG"
        fi
        csv="${s%.svg}.csv"
        if [ "$(wc -l <"$dir/$csv" 2>/dev/null || echo 0)" -lt 2 ] || ! head -1 "$dir/$csv" | grep -q ','; then
            fail "$what" "$csv is missing or holds no data"
        fi
        grep -q "href=\"$csv\"" "$page" || fail "$what" "the page does not link $csv"
    done
    for p in "$@"; do
        echo "$srcs" | grep -qx "$p.svg" || fail "$what" "no plot $p.svg (images: $(echo $srcs))"
    done
    grep -q 'http' "$page" && fail "$what" "the page names a remote URL"
    grep -Eq '(src|href)="(/|[A-Za-z][A-Za-z0-9+.-]*:)' "$page" && fail "$what" "a link is absolute"
    grep -qF "$tmp" "$page" && fail "$what" "the page names the absolute path $tmp"
    grep -q '<script src\|<link ' "$page" && fail "$what" "the page loads an external script or style"
    ls "$dir" | grep -q '\.tmp\.' && fail "$what" "a temporary file is left in $dir"
    return 0
}

# report WHAT FILE DIR [ARGS...]: exit 0, stdout "report: DIR/index.html", stderr empty.
report() {
    what="$1"
    file="$2"
    dir="$3"
    shift 3
    "$T" report "$file" -o "$dir" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 0 ] || [ "$(cat "$tmp/out")" != "report: $dir/index.html" ] || [ -s "$tmp/err" ]; then
        fail "$what" "rc=$rc"
        head -3 "$tmp/out" "$tmp/err"
    fi
}

# --- a scenario: run, then rendered ---
"$T" collective --topo "$CLOS" --op allreduce --sizes 1KiB:1MiB:8 --algo ring,rhd --print-scenario >"$tmp/scn.json"
report "scenario" "$tmp/scn.json" "$tmp/r-scn"
check "$tmp/r-scn" "scenario" time-allreduce busbw-allreduce
[ -s "$tmp/r-scn/result.json" ] && grep -q '"schema_version"' "$tmp/r-scn/result.json" ||
    fail "scenario" "no result.json beside the page"
head -1 "$tmp/r-scn/time-allreduce.csv" | grep -qx 'series,bytes,time_s' ||
    fail "scenario" "time-allreduce.csv's header is not series,bytes,time_s"
grep -q 'lower bound' "$tmp/r-scn/time-allreduce.csv" || fail "scenario" "no lower bound in time-allreduce.csv"

# --- results of each command: rendered, not run ---
"$T" collective --topo "$CLOS" --op allreduce --sizes 1KiB:16MiB --algo all --out "$tmp/coll.json" --quiet >/dev/null
report "collective --algo all" "$tmp/coll.json" "$tmp/r-coll"
check "$tmp/r-coll" "collective --algo all" time-allreduce busbw-allreduce
grep -q '^rhd,' "$tmp/r-coll/time-allreduce.csv" || fail "collective --algo all" "no line of rhd in the CSV"

"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --algo all --format json >"$tmp/coll1.json"
report "collective, one size, --algo all" "$tmp/coll1.json" "$tmp/r-coll1"
check "$tmp/r-coll1" "collective, one size" time-allreduce

"$T" compare --topo "$CLOS" --topo torus:dims=8x8 --names clos,torus --op allreduce,alltoall --sizes 64KiB:16MiB \
    --out "$tmp/cmp.json" --quiet >/dev/null
report "compare" "$tmp/cmp.json" "$tmp/r-cmp"
check "$tmp/r-cmp" "compare" time-allreduce busbw-allreduce time-alltoall busbw-alltoall
grep -q '^lower bound torus,' "$tmp/r-cmp/time-alltoall.csv" || fail "compare" "no lower bound per topology"

"$T" failures --topo "$CLOS" --topo torus:dims=8x8 --names clos,torus --fail-random links=2%,seed=1 --op allreduce \
    --size 1MiB --trials 20 --format json --quiet >"$tmp/fail.json"
report "failures" "$tmp/fail.json" "$tmp/r-fail"
check "$tmp/r-fail" "failures" slowdown-histogram slowdown-cdf

"$T" train --topo clos:hosts=64,radix=16,tiers=2,node=8 --model llama3-8b --dp 8 --tp 8 --micro-batches 4 --zero 1 \
    --format json --quiet >"$tmp/train.json"
report "train" "$tmp/train.json" "$tmp/r-train"
check "$tmp/r-train" "train" breakdown communication memory

"$T" compress --topo clos:down=8x8,up=1x8,bw=10Gbps,lat=1us --model resnet50 --workers 64 --codec powersgd:rank=2 \
    --codec int8 --steps-ratio powersgd:rank=2=1.1 --steps-ratio int8=1 --sweep-bw --format json --quiet >"$tmp/cmpr.json"
report "compress --steps-ratio --sweep-bw" "$tmp/cmpr.json" "$tmp/r-cmpr"
check "$tmp/r-cmpr" "compress --steps-ratio" time-to-accuracy tta-vs-bandwidth speedup-vs-bandwidth

"$T" compress --topo clos:down=8x8,up=1x8,bw=10Gbps,lat=1us --model resnet50 --workers 64 --codec int8 \
    --codec topk:ratio=0.01 --accuracy "$acc" --format json --quiet >"$tmp/cacc.json"
report "compress --accuracy" "$tmp/cacc.json" "$tmp/r-cacc"
check "$tmp/r-cacc" "compress --accuracy" time-to-accuracy accuracy
head -1 "$tmp/r-cacc/time-to-accuracy.csv" | grep -qx 'codec,series,time_to_accuracy_s,time_to_accuracy_lo_s,time_to_accuracy_hi_s' ||
    fail "compress --accuracy" "time-to-accuracy.csv lacks the interval's columns"

report "train-accuracy" "$acc" "$tmp/r-tacc"
check "$tmp/r-tacc" "train-accuracy" accuracy steps-ratio

"$T" codec-bench --codec int8 --codec topk:ratio=0.01 --seconds 0.02 --format json --quiet >"$tmp/cb.json"
report "codec-bench" "$tmp/cb.json" "$tmp/r-cb"
check "$tmp/r-cb" "codec-bench" throughput

"$T" cluster --topo clos:down=8x8,up=1x8 --topo torus:dims=8x8 --names clos,torus --synthetic 200,seed=1,load=1 \
    --format json --quiet >"$tmp/cluster.json"
report "cluster" "$tmp/cluster.json" "$tmp/r-cluster"
check "$tmp/r-cluster" "cluster" utilisation wait

"$T" concurrent --topo clos:down=4x2,up=1x1 --jobs "$here/../examples/jobs.json" --format json --quiet >"$tmp/conc.json"
report "concurrent" "$tmp/conc.json" "$tmp/r-conc"
check "$tmp/r-conc" "concurrent" jobs hot-links

"$T" topo "$CLOS" --format json >"$tmp/topo.json"
report "topo (tables only)" "$tmp/topo.json" "$tmp/r-topo"
check "$tmp/r-topo" "topo"
grep -q 'bisection_Bps' "$tmp/r-topo/index.html" || fail "topo" "the page lacks the topology's figures"

# Every string from the file is escaped.
sed 's/"name": "clos"/"name": "<b>clos \&amp; \\"co\\"<\/b>"/' "$tmp/fail.json" >"$tmp/fail-esc.json"
report "escaping" "$tmp/fail-esc.json" "$tmp/r-esc"
grep -q '&lt;b&gt;clos &amp;amp; &quot;co&quot;&lt;/b&gt;' "$tmp/r-esc/index.html" ||
    fail "escaping" "a name with <, &, \" is not escaped"
grep -q '<b>clos' "$tmp/r-esc/index.html" && fail "escaping" "markup from the file reaches the page"

# An existing directory is written into; --quiet prints nothing.
"$T" report "$tmp/coll.json" -o "$tmp/r-coll" --quiet >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/out" ] &&
    [ ! -s "$tmp/err" ] || fail "--quiet" "rc=$? or output"

# --- a sweep's results file ---
report "sweep" "$sweep" "$tmp/r-sweep"
check "$tmp/r-sweep" "sweep" sweep-results-time-s-vs-collective-sizes sweep-results-busbw-bps-vs-collective-sizes
report "sweep --x --y" "$sweep" "$tmp/r-sweep-xy" --x 'network.topo[0]' --y 'results[].busbw_Bps'
check "$tmp/r-sweep-xy" "sweep --x --y" sweep-results-busbw-bps-vs-network-topo-0
[ "$(grep -c '<img ' "$tmp/r-sweep-xy/index.html")" -eq 1 ] || fail "sweep --x --y" "not exactly one plot"
grep -c ', rhd",' "$tmp/r-sweep-xy/sweep-results-busbw-bps-vs-network-topo-0.csv" | grep -qx 8 ||
    fail "sweep --x --y" "not 8 bars of rhd (4 sizes x 2 topologies)"

# A torn last line (a sweep still running) is left out with a note.
{ cat "$sweep"; sed -n 4p "$sweep" | head -c 200; } >"$tmp/torn.jsonl"
"$T" report "$tmp/torn.jsonl" -o "$tmp/r-torn" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q 'line 10 is incomplete' "$tmp/err"; then
    fail "torn sweep" "rc=$rc, expected one note naming line 10"
    cat "$tmp/err"
fi
check "$tmp/r-torn" "torn sweep" sweep-results-time-s-vs-collective-sizes

# A failed point and a point twice (merged files): the error shown, the first line used.
{
    head -8 "$sweep"
    printf '{"point": 7, "values": {"network.topo[0]": "torus:dims=8x8,bw=400Gbps,lat=1us", "collective.sizes": "256MiB"}, "error": "<it> failed"}\n'
    sed -n 2p "$sweep"
} >"$tmp/failed.jsonl"
report "sweep with a failed point" "$tmp/failed.jsonl" "$tmp/r-failed"
check "$tmp/r-failed" "sweep with a failed point" sweep-results-time-s-vs-collective-sizes
grep -q '&lt;it&gt; failed' "$tmp/r-failed/index.html" || fail "failed point" "its error is not on the page"
grep -q '7 of 8 points finished, 1 failed' "$tmp/r-failed/index.html" || fail "failed point" "the count is wrong"
# The failed point run again: its result replaces the error.
{ cat "$tmp/failed.jsonl"; sed -n 9p "$sweep"; } >"$tmp/retried.jsonl"
report "sweep with a point run again" "$tmp/retried.jsonl" "$tmp/r-retried"
grep -q '8 of 8 points finished;' "$tmp/r-retried/index.html" || fail "point run again" "its result does not count"
grep -q '&lt;it&gt; failed' "$tmp/r-retried/index.html" && fail "point run again" "its error is still shown"
# One point's line (as replay takes it): its result, reported as a result
# file's; a failed point's line holds none.
sed -n 2p "$sweep" >"$tmp/point.json"
report "one point of a sweep" "$tmp/point.json" "$tmp/r-point"
check "$tmp/r-point" "one point of a sweep"
grep -q 'collective' "$tmp/r-point/index.html" || fail "one point of a sweep" "not the point's result"
printf '{"point": 7, "values": {"collective.sizes": "256MiB"}, "scenario": {"command": "collective"}, "error": "it failed"}\n' >"$tmp/pfail.json"
bad_says "a failed point's line" "records point 7 of a sweep, which failed" report "$tmp/pfail.json" -o "$tmp/r-pfail"
# as a sweep writes it: no scenario (docs/SWEEP.md)
printf '{"point": 1, "values": {"collective.sizes": "1MiB"}, "seed": 5, "error": "out of memory: --mem-limit"}\n' >"$tmp/ptf.json"
bad_says "a failed point's line, no scenario" "records point 1 of a sweep, which failed: it holds no result" report "$tmp/ptf.json" -o "$tmp/r-ptf"

# --- bad input ---
bad "no file" report -o "$tmp/x"
bad "no -o" report "$tmp/coll.json"
bad "-o without a directory" report "$tmp/coll.json" -o
bad "unknown option" report "$tmp/coll.json" -o "$tmp/x" --colour
bad "two files" report "$tmp/coll.json" "$tmp/cmp.json" -o "$tmp/x"
bad_says "missing file" "none.json" report "$tmp/none.json" -o "$tmp/x"
printf '{"command": "collective",\n  "network": }\n' >"$tmp/broken.json"
bad_says "not JSON (says where)" "line 2, column" report "$tmp/broken.json" -o "$tmp/x"
printf '{"schema_version": 3, "curves": []}\n' >"$tmp/neither.json"
bad_says "neither scenario, result nor sweep" "not a scenario" report "$tmp/neither.json" -o "$tmp/x"
grep -q "or one point's line of them" "$tmp/err" || fail "neither" "the message does not name a point's line as accepted"
# a result without what its command writes (docs/SCHEMA.md): refused, not an empty page
printf '{"schema_version": 2, "scenario": {"command": "collective"}}\n' >"$tmp/nores.json"
bad_says "a result without its results" 'a result of collective without its results: expected "results" (an array of result objects) or one result' report "$tmp/nores.json" -o "$tmp/x"
sed 's/"results": *\[/"results": "x", "was": [/' "$tmp/coll.json" >"$tmp/strres.json"
grep -q '"results": "x"' "$tmp/strres.json" || fail "strres.json" "results was not replaced"
bad_says "a result whose results is a string" 'a result of collective whose "results" is not what collective writes: expected' report "$tmp/strres.json" -o "$tmp/x"
sed 's/"topologies": *\[/"topologies": [1, /' "$tmp/fail.json" >"$tmp/numtopo.json"
bad_says "a result whose topologies holds a number" '"topologies" is not what failures writes' report "$tmp/numtopo.json" -o "$tmp/x"
printf '{"schema_version": 2, "command": "nosuch", "scenario": {"command": "nosuch"}}\n' >"$tmp/nocmd.json"
bad_says "a result of an unknown command" "unknown command 'nosuch': accepted are topo, collective" report "$tmp/nocmd.json" -o "$tmp/x"
: >"$tmp/empty.json"
bad "empty file" report "$tmp/empty.json" -o "$tmp/x"
echo file >"$tmp/plain"
bad "unwritable directory" report "$tmp/coll.json" -o "$tmp/plain/sub"
bad "directory that is a file" report "$tmp/coll.json" -o "$tmp/plain"
bad_says "--x on a result" "sweep" report "$tmp/coll.json" -o "$tmp/x" --x collective.sizes
bad_says "unknown --x (lists the axes)" "collective.sizes" report "$sweep" -o "$tmp/x" --x network.topo
bad_says "unknown --y (nearest first)" "nearest: results\[\].busbw_Bps" report "$sweep" -o "$tmp/x" --y 'results[].busbw_bps'
{ head -3 "$sweep"; echo '{"point": 3, garbage'; tail -n +5 "$sweep"; } >"$tmp/badline.jsonl"
bad_says "bad line in a sweep (names it)" "line 4" report "$tmp/badline.jsonl" -o "$tmp/x"
sed '1s/"topocc_sweep":1/"topocc_sweep":2/' "$sweep" >"$tmp/newer.jsonl"
bad_says "sweep of a newer format" "newer" report "$tmp/newer.jsonl" -o "$tmp/x"
sed '2s/"point":0/"point":99/' "$sweep" >"$tmp/range.jsonl"
bad_says "point outside the sweep" "line 2" report "$tmp/range.jsonl" -o "$tmp/x"
# a line whose values are not its point's (--status, --merge and a resume refuse it too)
sed '3s/"collective.sizes":"1MiB"/"collective.sizes":"64KiB"/' "$sweep" >"$tmp/values.jsonl"
bad_says "point whose values are another point's" "line 3 (point 1): its \"values\" are not those of its point" report "$tmp/values.jsonl" -o "$tmp/x"
printf '{"command": "collective", "collective": {"op": ["allreduce"]}}\n' >"$tmp/notopo.json"
bad_says "a scenario refused (no topology)" "needs a topology" report "$tmp/notopo.json" -o "$tmp/x"
# a scenario whose trace is a file the report writes: refused before the run
# (the report's directory, not made yet, is made before the run)
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/index.html" --print-scenario |
    sed "s|$tmp/index.html|$tmp/x/index.html|" >"$tmp/trace_in.json"
bad_says "a trace the report would replace" "flow.trace .*x/index.html is in the report's directory" report "$tmp/trace_in.json" -o "$tmp/x"
mkdir "$tmp/rt" && echo old >"$tmp/rt/p.svg"
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --mode flow --trace "$tmp/rt/./p.svg" --print-scenario >"$tmp/trace_svg.json"
bad_says "a trace named as a plot of the report" "is in the report's directory" report "$tmp/trace_svg.json" -o "$tmp/rt"
grep -qx old "$tmp/rt/p.svg" || fail "trace refused" "the file was written"
[ -e "$tmp/x" ] && fail "bad input" "the directory was created for bad input"
# a scenario refused after the directory and its missing parents were made:
# every directory made is removed again, one already there is kept
"$T" collective --topo "$CLOS" --op allreduce --size 1MiB --print-scenario |
    sed 's/"algo": *\[[^]]*\]/"algo": ["nosuch"]/' >"$tmp/sbad.json"
grep -q '"nosuch"' "$tmp/sbad.json" || fail "sbad.json" "the algorithm was not replaced"
bad_says "a scenario refused (unknown algorithm)" "unknown algorithm 'nosuch'" report "$tmp/sbad.json" -o "$tmp/sb/deep/x"
[ -e "$tmp/sb" ] && fail "failed report" "the parent directories it made are left behind"
mkdir "$tmp/keep"
bad "a scenario refused, under an existing directory" report "$tmp/sbad.json" -o "$tmp/keep/a//b/"
[ -d "$tmp/keep" ] || fail "failed report" "a directory already there was removed"
[ -e "$tmp/keep/a" ] && fail "failed report" "a directory it made under one already there is left behind"

good "help" "usage: topocc report" report --help
"$T" --help | grep -q '^  report FILE -o DIR' || fail "topocc --help" "no report line"

if [ "$fails" -ne 0 ]; then
    echo "$fails report CLI check(s) failed"
    exit 1
fi
echo "report CLI: all checks passed"
