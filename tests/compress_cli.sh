#!/bin/sh
# compress_cli.sh - the contract of `topocc compress`: bad input gets one
# line on stderr, exit code 2 and nothing on stdout; the help text's example
# works; the table, CSV and JSON carry the documented fields; the accuracy
# file path works end to end (a short training run writes it).
# usage: tests/compress_cli.sh path/to/topocc
set -u
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"
CLOS="clos:down=8x8,up=1x8,bw=400Gbps,lat=1us"
R="--steps-ratio topk:ratio=0.01=1.3"

# --- bad input ---
bad "unknown model" compress --topo "$CLOS" --model resnet51 --codec topk $R
bad "custom model without flops" compress --topo "$CLOS" --model params=1M,layers=2 --codec topk $R
bad "custom model with a bad number" compress --topo "$CLOS" --model params=x,layers=2,flops=1T --codec topk $R
bad "custom model with an unknown key" compress --topo "$CLOS" --model params=1M,layers=2,flops=1T,foo=1 --codec topk $R
bad "zoo model with an unknown key" compress --topo "$CLOS" --model resnet50:depth=3 --codec topk $R
bad "workers beyond the endpoints" compress --topo "$CLOS" --model resnet50 --workers 65 --codec topk $R
bad "one worker" compress --topo "$CLOS" --model resnet50 --workers 1 --codec topk $R
bad "unknown codec" compress --topo "$CLOS" --model resnet50 --codec zip $R
bad "steps ratio for a codec not asked for" compress --topo "$CLOS" --model resnet50 --codec topk $R --steps-ratio powersgd=1.1
bad "steps ratio for an unknown codec" compress --topo "$CLOS" --model resnet50 --codec topk $R --steps-ratio zip=1.1
bad "steps ratio of 0" compress --topo "$CLOS" --model resnet50 --codec topk --steps-ratio topk=0
bad "steps ratio missing for a codec" compress --topo "$CLOS" --model resnet50 --codec topk --codec powersgd $R
bad "unknown accelerator" compress --topo "$CLOS" --model resnet50 --codec topk $R --accel a1000
bad "missing accuracy file" compress --topo "$CLOS" --model resnet50 --codec topk --accuracy "$tmp/none.json"
bad "accuracy file that is not one" compress --topo "$CLOS" --model resnet50 --codec topk --accuracy /etc/hostname
bad "accuracy and steps ratio together" compress --topo "$CLOS" --model resnet50 --codec topk $R --accuracy x.json
bad "target with steps ratio" compress --topo "$CLOS" --model resnet50 --codec topk $R --target-acc 0.8
bad "target above 1" compress --topo "$CLOS" --model resnet50 --codec topk --target-acc 1.5 --accuracy x.json
bad "throughput for a codec not asked for" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput thc=5
bad "throughput of 0" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput topk=0
bad "bucket of 0" compress --topo "$CLOS" --model resnet50 --codec topk $R --bucket 0
bad "mfu above 1" compress --topo "$CLOS" --model resnet50 --codec topk $R --mfu 2
bad "unknown option" compress --topo "$CLOS" --model resnet50 --codec topk $R --fast
bad "no codec" compress --topo "$CLOS" --model resnet50
bad "unknown mode" compress --topo "$CLOS" --model resnet50 --codec topk $R --mode exact
bad "unknown format" compress --topo "$CLOS" --model resnet50 --codec topk $R --format xml

# --- accelerator profiles from --profiles DIR (docs/PROFILES.md) ---
P="$(dirname "$0")/data/profiles"
good "accelerator from --profiles" "^compute     test-accel at" compress --topo "$CLOS" --model resnet50 --codec topk $R \
    --profiles "$P" --accel test-accel
bad "accelerator of a directory not given" compress --topo "$CLOS" --model resnet50 --codec topk $R --accel test-accel
bad "unknown accelerator with --profiles" compress --topo "$CLOS" --model resnet50 --codec topk $R --profiles "$P" \
    --accel no-such-chip
{ grep -q "accepted are .*test-accel" "$tmp/err" && grep -q "h100" "$tmp/err"; } ||
    { echo "FAIL: the unknown accelerator's list lacks the directory's or the default path's: $(cat "$tmp/err")"; fails=$((fails + 1)); }
bad "a profile that is no accelerator" compress --topo "$CLOS" --model resnet50 --codec topk $R --profiles "$P" \
    --accel test-node
# the result embeds the profile: it replays with the directory gone
mkdir "$tmp/prof" && cp "$P/test-accel.json" "$tmp/prof/"
"$T" compress --topo "$CLOS" --model resnet50 --codec topk $R --profiles "$tmp/prof" --accel test-accel \
    --out "$tmp/accel.json" --quiet >/dev/null 2>&1 || { echo "FAIL: --out with --profiles"; fails=$((fails + 1)); }
rm -r "$tmp/prof"
good "replay with the accelerator embedded" "^compute     test-accel at" replay "$tmp/accel.json"

# --- help and its example ---
good "help" "example:" compress --help
ex=$("$T" compress --help | sed -n '/^example:/,$p' | tail -n +2 | tr -d '\\\n' | sed 's/^ *topocc //')
# shellcheck disable=SC2086
good "help example runs" "beats bf16" $ex

# --- main paths ---
good "table" "time to acc" compress --topo "$CLOS" --model resnet50 --workers 64 --codec topk:ratio=0.01 $R
good "baselines added" "^bf16 " compress --topo "$CLOS" --model resnet50 --workers 64 --codec topk:ratio=0.01 $R
good "never reaches" "does not reach the target" compress --topo "$CLOS" --model resnet50 --codec signsgd --steps-ratio signsgd=never
good "custom model" "custom" compress --topo "$CLOS" --model params=100M,layers=20,flops=2T --codec powersgd --steps-ratio powersgd=1.1
good "csv" "^codec,collective," compress --topo "$CLOS" --model bert-large --codec topk:ratio=0.01 $R --format csv
good "offload" "offloaded" compress --topo "$CLOS" --model vgg16 --codec topk:ratio=0.01 $R --offload
good "given throughput" "^topk" compress --topo "$CLOS" --model gpt2-xl --codec topk:ratio=0.01 $R --codec-throughput topk=2
good "steps mode" "steps mode" compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 $R --mode steps
good "json" '"schema_version"' compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 $R --format json --sweep-bw
for f in '"inputs"' '"codec_throughputs"' '"results"' '"speedup_vs_bf16"' '"time_to_accuracy_s"' '"crossover"' \
    '"wire_bytes_per_iteration"' '"exposed_s"' '"steps_ratio_source"'; do
    grep -q -- "$f" "$tmp/out" || { echo "FAIL (json): no $f"; fails=$((fails + 1)); }
done

# --- CSV and JSON hold numbers in SI units, never "3.83min" or "1.99x" ---
U='[0-9.]+(ns|us|ms|min|h|d|B|KiB|MiB|GiB|TiB|KB/s|MB/s|GB/s|TB/s|Gb/s|Tb/s|x|%)'
for args in "compress --topo $CLOS --model resnet50 --codec topk:ratio=0.01 $R --sweep-bw" \
    "codec-bench --codec bf16 --codec topk:ratio=0.01 --size 64KiB --seconds 0.01"; do
    # shellcheck disable=SC2086
    "$T" $args --format csv --quiet >"$tmp/o.csv" 2>/dev/null
    # shellcheck disable=SC2086
    "$T" $args --format json --quiet >"$tmp/o.json" 2>/dev/null
    if ! [ -s "$tmp/o.csv" ] || grep -Eq "(^|,)$U(,|\$)" "$tmp/o.csv" || grep -Eq "\": \"$U\"" "$tmp/o.json"; then
        echo "FAIL: formatted number (or no output) in CSV or JSON of: $args"; fails=$((fails + 1))
    fi
done
bad "compress with a flow option without flow mode" compress --topo "$CLOS" --model resnet50 --codec topk $R --rate-cap 100Gbps
bad "compress with a target and steps ratios (conflicting flags)" compress --topo "$CLOS" --model resnet50 --codec topk $R --target-acc 0.5

# --- accuracy file, end to end (a short training run) ---
if [ -d /usr/share/datasets/fashion-mnist ]; then
    if "$T" train-accuracy --codec bf16 --codec topk:ratio=0.01 --steps 200 --eval-every 50 \
        --out "$tmp/acc.json" >/dev/null 2>"$tmp/err"; then
        good "accuracy file" "time to acc" compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 \
            --accuracy "$tmp/acc.json"
        bad "codec missing from the accuracy file" compress --topo "$CLOS" --model resnet50 --codec powersgd \
            --accuracy "$tmp/acc.json"
    else
        echo "note: train-accuracy did not run ($(head -1 "$tmp/err")); accuracy-file checks skipped"
    fi
fi

bad "negative contention" compress --topo "$CLOS" --model resnet50 --codec topk $R --s-c -1
# contention: the default s_c slows the backward pass under the buckets'
# collectives (400 Gbps: compute-bound, so the iteration shows it); --s-c 0
# takes it away, so no iteration is longer with it
slow="$CLOS"
"$T" compress --topo "$slow" --model resnet50 --codec topk:ratio=0.01 $R --format csv >"$tmp/c19" 2>"$tmp/err" &&
    "$T" compress --topo "$slow" --model resnet50 --codec topk:ratio=0.01 $R --format csv --s-c 0 >"$tmp/c0" 2>>"$tmp/err"
if [ -s "$tmp/err" ]; then
    echo "FAIL (contention runs): $(cat "$tmp/err")"; fails=$((fails + 1))
fi
col=$(head -1 "$tmp/c0" | tr ',' '\n' | grep -n '^iteration_s$' | cut -d: -f1)
if [ -z "$col" ] || ! paste -d, "$tmp/c19" "$tmp/c0" | awk -F, -v c="$col" -v n="$(head -1 "$tmp/c0" | tr ',' '\n' | wc -l)" \
    'NR > 1 { a = $c; b = $(c + n); if (a + 0 < b + 0) bad = 1; if (a + 0 > b + 0) longer++ } END { exit bad || !longer }'; then
    echo "FAIL (contention): iterations with s_c 0.19 must be at least those with s_c 0, some longer"
    head -3 "$tmp/c19" "$tmp/c0"; fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails compress CLI check(s) failed"
    exit 1
fi
echo "compress CLI: all checks passed"
