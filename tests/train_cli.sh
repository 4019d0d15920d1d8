#!/bin/sh
# train_cli.sh - topocc train from the command line: the breakdown of one
# iteration (text and JSON, the figures consistent with each other), and bad
# input (one line on stderr, exit 2, nothing on stdout).
# usage: tests/train_cli.sh path/to/topocc
set -u
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"
CLOS=clos:hosts=64,radix=16,tiers=2,node=8

good "llama3-8b, dp 8 x tp 8" "^iteration " train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 4
good "memory line" "memory per device: weights" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --zero 3
good "pipeline" "pipeline bubble" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 8
mkdir -p "$tmp/model.json"
bad_says "a model file that is a directory" "a directory, not a model JSON file" train --topo "$CLOS" --model "$tmp/model.json" --dp 64
# a preset computes on its chip: aws-p4d's 40 GB A100 (40e9 B = 37.25 GiB),
# not the 80 GB part's 74.51 GiB
good "aws-p4d's 40 GB A100" "of 37.25 GiB, fits" train --preset aws-p4d:nodes=2 --model llama3-8b --dp 2 --tp 8
good "a CNN, data parallel" "^iteration " train --topo "$CLOS" --model resnet50 --dp 64 --micro-batch 32
good "steps mode" "^iteration " train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --mode steps
good "copy-engine collectives" "copy-engine (--dma) collectives" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --dma
# the accelerator profile's achievable fraction and memory capacity
good "achievable from the profile" "the profile's achievable_fraction" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --achievable profile
bad_says "a profile without one" "achievable_fraction" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --accel v100 --achievable profile --allow-oom
good "TPU v5p memory is checked" "of 88.48 GiB, fits" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --accel tpu-v5p
# the attention kernel: flash (default) stores no scores, eager does
good "flash attention by default" "activations 36.07 GiB" train --topo clos:hosts=8,radix=8,tiers=2 --model llama3-8b --dp 8 --allow-oom
good "eager attention stores the scores" "activations 356.07 GiB" train --topo clos:hosts=8,radix=8,tiers=2 --model llama3-8b --dp 8 --allow-oom --attention eager
good "in the scenario" "attention=eager" train --topo clos:hosts=8,radix=8,tiers=2 --model llama3-8b --dp 8 --allow-oom --attention eager
bad_says "an unknown attention kernel" "flash" train --topo clos:hosts=8,radix=8,tiers=2 --model llama3-8b --dp 8 --attention sdpa
bad_says "TP beyond the key/value heads" "divide its 8 key/value heads" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 16
# a preset's chip is the accelerator unless --accel names one (and the
# scenario records it, so a replay times the same chip)
good "a DGX A100 preset computes on A100s" "on 16 x a100," train --preset dgx-a100:nodes=2 --model llama3-8b --dp 16 --zero 3 --recompute full
good "GB200 NVL72: B200's 180 GB" "of 167.64 GiB, fits" train --preset gb200-nvl72:nodes=1 --model llama3-70b --dp 9 --tp 8 --micro-batches 8 --recompute selective --seq-parallel
good "--accel still chooses" "on 16 x h100," train --preset dgx-a100:nodes=2 --model llama3-8b --dp 16 --zero 3 --recompute full --accel h100
good "compress too" "a100 at 20% MFU" compress --preset dgx-a100:nodes=2 --model resnet50 --workers 16 --codec int8 --steps-ratio int8=1
"$T" train --preset dgx-a100:nodes=2 --model llama3-8b --dp 16 --zero 3 --recompute full --print-scenario >"$tmp/a100.json" 2>/dev/null
good "replayed on the preset's chip" "on 16 x a100," replay "$tmp/a100.json"
# communication order: forward (P3) is never slower here, and faster when
# buckets are exposed (100 Gb/s, ResNet-50 on 64 workers)
bad_says "unknown communication order" "backward" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --comm-order random
# ZeRO 3 keeps FSDP's order: --comm-order changed nothing there, and was accepted
bad_says "communication order with ZeRO 3" "applies only with --zero 0, 1 or 2" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --zero 3 --comm-order forward
# with DP 1 there are no DP collectives, with TP 1 no TP collectives: the
# flags that choose them changed nothing, and were accepted
bad_says "communication order at DP 1" "applies only with --zero 0, 1 or 2 .* and --dp above 1" train --topo "$CLOS" --model llama3-8b --dp 1 --tp 8 --comm-order forward --allow-oom
bad_says "DP algorithm at DP 1" "--dp-algo applies only with --dp above 1" train --topo "$CLOS" --model llama3-8b --dp 1 --tp 8 --dp-algo rhd --allow-oom
bad_says "TP algorithm at TP 1" "--tp-algo applies only with --tp above 1" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 1 --tp-algo ring --allow-oom
good "DP algorithm with --search" "" train --topo "$CLOS" --model llama3-8b --search --dp-algo ring --tp-algo ring --global-batch 64 --quiet
SLOW="clos:down=8x8,up=1x8,bw=100Gbps,lat=1us"
itc() { "$T" train --topo "$SLOW" --model resnet50 --dp 64 --micro-batch 64 --format json "$@" |
    sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' | head -1; }
a=$(itc); b=$(itc --comm-order forward)
if ! awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b + 0 < a + 0) }'; then
    echo "FAIL (--comm-order): backward $a, forward $b: expected forward faster"
    fails=$((fails + 1))
fi
# --timeline: a Chrome trace whose last event ends at the iteration (one stage)
good "timeline" "^iteration " train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --timeline "$tmp/tl.json"
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --format json >"$tmp/tl_run.json" 2>/dev/null
if ! python3 - "$tmp/tl.json" "$tmp/tl_run.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
it = json.load(open(sys.argv[2]))["iter_s"] * 1e6
x = [e for e in ev if e["ph"] == "X"]
tracks = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
end = max(e["ts"] + e["dur"] for e in x)
ok = {"compute", "tp", "dp"} <= tracks and abs(end - it) <= 1e-6 * it and all(e["dur"] > 0 for e in x)
sys.exit(0 if ok else 1)
PY
then
    echo "FAIL (--timeline): the trace lacks tracks or does not end at the iteration"
    fails=$((fails + 1))
fi
# the DDP communication hook's encode runs as its bucket's gradients are
# ready, between the later layers' backward tasks (PyTorch launches the
# hook's kernels then, in the backward's stream): the first encode starts
# right after the first bucket's backward, long before the backward ends,
# and the compressed iteration overlaps its collectives
"$T" train --topo clos:down=8x8,up=1x8,bw=10Gbps,lat=1us --model resnet50 --dp 64 --micro-batch 256 \
    --compress-dp powersgd:rank=2,start=0 --timeline "$tmp/hook.json" --format json >"$tmp/hook_run.json" 2>/dev/null
if ! python3 - "$tmp/hook.json" "$tmp/hook_run.json" <<'PY'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X" and e.get("pid", 0) == 0]
r = json.load(open(sys.argv[2]))
bwd = [e for e in ev if e["name"] == "bwd"]
enc = sorted(e["ts"] for e in ev if e["name"] == "dp.encode")
end = max(e["ts"] + e["dur"] for e in bwd)
ok = enc and enc[0] < 0.5 * end and r["iter_s"] < 0.9 * r["serial_s"]
if not ok:
    print("first encode", enc[:1], "backward end", end, "iteration", r["iter_s"], "serial", r["serial_s"])
sys.exit(0 if ok else 1)
PY
then
    echo "FAIL (--compress-dp): the hook's encode waits for the whole backward"
    fails=$((fails + 1))
fi
# the experts' buckets (after a stage's dense ones, reduced over expert DP)
# get their encode in the backward too
good "DDP hook on expert buckets" "powersgd:rank=4 applied" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 2 --compress-dp powersgd:rank=4 --allow-oom
bad "timeline in a missing directory" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --timeline /nonexistent/x.json
bad_says "timeline that is a directory, printed" "^topocc: --timeline .*: a directory: give a file name" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --timeline "$tmp" --print-scenario
# --timeline and --out naming one file: the result overwrote the trace (exit 0)
bad_says "timeline and --out the same file" "is the --out file too" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --out "$tmp/same.json" --timeline "$tmp/same.json"
bad_says "timeline and --out the same file by other names" "is the --out file too" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --out "$tmp/same.json" --timeline "$tmp/./same.json"
ln -sf "$tmp/tl.json" "$tmp/tl_link.json"
bad_says "timeline and --out one file through a link" "is the --out file too" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --out "$tmp/tl_link.json" --timeline "$tmp/tl.json"
bad_says "timeline as --out's scenario beside a CSV" "is the scenario file written beside --out" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --out "$tmp/r.csv" --timeline "$tmp/r.scenario.json"
bad_says "timeline as --out-dir's scenario" "is in --out-dir" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --out-dir "$tmp/od" --timeline "$tmp/od/scenario.json"
good "timeline and --out both /dev/null" "^iteration " train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --out /dev/null --timeline /dev/null
bad_says "timeline with search" "not with --search" train --topo "$CLOS" --model llama3-8b --search --global-batch 64 --timeline "$tmp/s.json"
bad_says "skew without ep" "give --ep" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --seq 4096 --zipf 1 --allow-oom
bad "tiny capacity factor" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --seq 4096 --capacity-factor 0.001 --allow-oom
bad "too large a timeline" train --topo "$CLOS" --model resnet50 --dp 64 --micro-batches 1000000
# a CNN has no sequence and no attention: --seq and --attention eager changed
# nothing, and were accepted
bad_says "--seq for a CNN" "apply to transformers only" train --topo "$CLOS" --model resnet50 --dp 64 --seq 128
bad_says "eager attention for a CNN" "apply to transformers only" train --topo "$CLOS" --model resnet50 --dp 64 --attention eager
bad "an aggregation path in train" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --compress-dp int8:path=ps
# the serial run's trace with --no-overlap ends at its iteration
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --no-overlap --timeline "$tmp/tls.json" --format json >"$tmp/tls_run.json" 2>/dev/null
if ! python3 - "$tmp/tls.json" "$tmp/tls_run.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
it = json.load(open(sys.argv[2]))["iter_s"] * 1e6
end = max(e["ts"] + e["dur"] for e in ev if e["ph"] == "X")
sys.exit(0 if abs(end - it) <= 1e-6 * it else 1)
PY
then
    echo "FAIL (--no-overlap --timeline): the trace is not the serial run"
    fails=$((fails + 1))
fi
# flow mode co-simulates the iteration's network: where nothing contends
# (TP inside one node) it is the collectives timed alone; where DP and PP
# traffic share the fabric here it is slower
itf() { "$T" train --model llama3-8b --mode flow --format json "$@" |
    sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' | head -1; }
a=$(itf --preset dgx-h100:nodes=1 --dp 1 --tp 8 --micro-batches 2)
b=$(itf --preset dgx-h100:nodes=1 --dp 1 --tp 8 --micro-batches 2 --no-cosim)
if ! awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-9 * b) }'; then
    echo "FAIL (co-simulation, no contention): $a against $b alone"; fails=$((fails + 1))
fi
a=$(itf --topo "clos:hosts=64,radix=16,tiers=2,node=8" --dp 4 --tp 8 --pp 2 --micro-batches 4)
b=$(itf --topo "clos:hosts=64,radix=16,tiers=2,node=8" --dp 4 --tp 8 --pp 2 --micro-batches 4 --no-cosim)
if ! awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && a + 0 > b * 1.01) }'; then
    echo "FAIL (co-simulation, DP and PP sharing links): $a, expected above $b alone"; fails=$((fails + 1))
fi
good "co-simulated" "network: co-simulated" train --preset dgx-h100:nodes=1 --model llama3-8b --dp 1 --tp 8 --mode flow

# expert parallelism and the rank order
good "mixtral, ep 8" "EP all-to-alls" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --seq 4096 --allow-oom
good "order in the header" "order tp-pp-dp" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --order tp-pp-dp
good "mixtral, capacity 1.25 and skew" "EP all-to-alls" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --seq 4096 --allow-oom --capacity-factor 1.25 --zipf 1
# top-2 routing takes two distinct experts a token: the hottest expert gets
# at most half of the routed tokens, so the busiest of 8 EP ranks (one
# expert each) at most 4x the even share, however steep the skew (the
# same at zipf 2 and 10; 2.94x at zipf 1, under the cap: 8 p_1 with p_1 =
# 1 / (1 + 1/2 + ... + 1/8)): the all-to-alls' bytes follow
epa() { "$T" train --preset dgx-h100:nodes=8 --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 4 --zero 1 --seq 4096 --seq-parallel --zipf "$1" --format json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['comm']['ep']['bytes'])"; }
e0=$(epa 0); e1=$(epa 1); e2=$(epa 2); e10=$(epa 10)
if ! python3 -c "
e0, e1, e2, e10 = $e0, $e1, $e2, $e10
h8 = sum(1 / i for i in range(1, 9))
assert abs(e2 / e0 - 4) < 1e-9 and abs(e10 / e0 - 4) < 1e-9, (e2 / e0, e10 / e0)
assert abs(e1 / e0 - 8 / h8) < 1e-9, (e1 / e0, 8 / h8)
" 2>"$tmp/err"; then
    echo "FAIL (top-k routing caps the skew): $(tail -1 "$tmp/err")"; fails=$((fails + 1))
fi
bad "negative skew" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --seq 4096 --zipf -1
bad_says "ep with a dense model" "no experts" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --ep 2
bad_says "ep not dividing dp" "divide" train --topo "$CLOS" --model mixtral-8x7b --dp 4 --tp 8 --pp 2 --ep 8 --seq 4096
bad_says "malformed order" "order" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --order tp-dp
bad "repeated dimension in the order" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --order tp-tp-pp
good "search tries ep" " ep " train --topo "$CLOS" --model mixtral-8x7b --search --global-batch 64 --seq 4096 --tp-in-node
# DP innermost on 8-GPU nodes: each TP group strides across both nodes
good "TP group across nodes flagged" "spans more than one scale-up node" train --preset dgx-h100:nodes=2 --model llama3-8b --dp 2 --tp 8 --order dp-tp-pp
bad_says "and refused with --tp-in-node" "tp innermost" train --preset dgx-h100:nodes=2 --model llama3-8b --dp 2 --tp 8 --order dp-tp-pp --tp-in-node
# copy engines contend less (s_c 0.054 against 0.19): the iteration is no longer
it() { "$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 4 --format json "$@" |
    sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' | head -1; }
a=$(it); b=$(it --dma); c=$(it --s-c 0)
if ! awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { exit !(a != "" && b + 0 < a + 0 && c + 0 <= b + 0) }'; then
    echo "FAIL (--dma): iteration default $a, --dma $b, --s-c 0 $c: expected default > dma >= no contention"
    fails=$((fails + 1))
fi
# the contention factors change nothing where nothing contends (--no-overlap)
# or where the copy engines' own apply (--dma): refused, as they were accepted
# and ignored
bad_says "--s-c with --dma" "applies only with overlap on the compute units" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --dma --s-c 0.5
bad_says "--s-m with --no-overlap" "applies only with overlap on the compute units" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --no-overlap --s-m 1
bad_says "--dma with --no-overlap" "applies only with overlap" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --no-overlap --dma
# a result saved before those were refused holds them: it is read, and
# replays as it ran
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --zero 3 --no-overlap --format json >"$tmp/mo.json" 2>/dev/null
python3 - "$tmp/mo.json" "$tmp/mo2.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["scenario"]["iteration"].update({"s_c": 0.19, "s_m": 0, "dma": False, "comm_order": "forward"})
json.dump(j, open(sys.argv[2], "w"))
PY
a=$(sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' "$tmp/mo.json" | head -1)
b=$("$T" replay "$tmp/mo2.json" --format json 2>/dev/null | sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' | head -1)
if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "FAIL (a saved result with moot contention keys): $a, replayed $b"; fails=$((fails + 1))
fi
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 4 --format json >"$tmp/j" 2>&1
python3 - "$tmp/j" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert j["command"] == "train" and j["ranks"] == 64 and j["tp"] == 8, j
assert 0 < j["compute_s"] <= j["iter_s"] <= j["serial_s"] * (1 + 1e-12), j
assert j["comm"]["tp"]["count"] > 0 and j["comm"]["dp"]["count"] > 0
assert 0 < j["mfu"] < 1
assert j["scenario"]["parallel"]["dp"] == 8
PY
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --no-overlap --format json >"$tmp/k" 2>&1
python3 - "$tmp/k" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert abs(j["iter_s"] - j["serial_s"]) <= 1e-12 * j["serial_s"], j
PY

# the breakdown adds up: nominal compute + its slowdown under contention +
# exposed communication + bubble = the iteration (the busiest rank over its
# period), in both communication orders, ZeRO 1 and 3, with one stage (no
# bubble) and with a pipeline; forward order's shorter period is exposed
# communication that the next forward hides (it was counted over the whole
# run: parts summing to 103.5% of the iteration)
for X in "--dp 8 --tp 8 --micro-batches 4 --zero 1 --seq-parallel --recompute selective" \
    "--dp 8 --tp 8 --micro-batches 4 --zero 3" "--dp 4 --tp 8 --pp 2 --micro-batches 8 --zero 1" \
    "--dp 2 --tp 8 --pp 4 --micro-batches 8 --virtual-stages 2 --zero 1 --seq-parallel"; do
    for O in backward forward; do
        C="--comm-order $O"
        case "$X" in *"--zero 3"*) C= ;; esac # ZeRO 3 keeps FSDP's one order
        # shellcheck disable=SC2086
        "$T" train --preset dgx-h100:nodes=8 --model llama3-8b $X $C --format json >"$tmp/bd_$O.json" 2>&1
    done
    python3 - "$tmp/bd_backward.json" "$tmp/bd_forward.json" "$X" <<'PY' || fails=$((fails + 1))
import json, sys
b, f = (json.load(open(x)) for x in sys.argv[1:3])
for j, o in ((b, "backward"), (f, "forward")):
    parts = j["compute_s"] + j["compute_slowdown_s"] + j["exposed_comm_s"] + j["bubble_s"]
    ok = abs(parts - j["iter_s"]) <= 1e-9 * j["iter_s"] and min(j["compute_slowdown_s"], j["exposed_comm_s"], j["bubble_s"]) >= 0
    if j["pp"] == 1:
        ok = ok and j["bubble_s"] == 0
    if not ok:
        print("FAIL (breakdown, %s, %s): compute %g + slowdown %g + exposed %g + bubble %g, iteration %g"
              % (sys.argv[3], o, j["compute_s"], j["compute_slowdown_s"], j["exposed_comm_s"], j["bubble_s"], j["iter_s"]))
        sys.exit(1)
# the same compute: what forward order saves is exposed communication (and
# contention), not compute
saved = b["iter_s"] - f["iter_s"]
rest = (b["exposed_comm_s"] + b["compute_slowdown_s"] + b["bubble_s"]) - (f["exposed_comm_s"] + f["compute_slowdown_s"] + f["bubble_s"])
if abs(b["compute_s"] - f["compute_s"]) > 1e-12 * b["iter_s"] or abs(saved - rest) > 1e-9 * b["iter_s"]:
    print("FAIL (breakdown, %s): forward order saves %g, its parts %g" % (sys.argv[3], saved, rest))
    sys.exit(1)
PY
done
# the gradient type: fp32 doubles DDP's all-reduced bytes and the gradient
# memory; bf16 is the default and fp16 the same size; the scenario says it
for G in bf16 fp16 fp32; do
    "$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --grad-dtype $G --format json \
        >"$tmp/gd_$G.json" 2>&1
done
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --format json >"$tmp/gd_default.json" 2>&1
python3 - "$tmp" <<'PY' || fails=$((fails + 1))
import json, sys
j = {g: json.load(open("%s/gd_%s.json" % (sys.argv[1], g))) for g in ("bf16", "fp16", "fp32", "default")}
assert j["default"]["scenario"]["iteration"]["grad_dtype"] == "bf16", j["default"]["scenario"]["iteration"]
assert j["fp32"]["scenario"]["iteration"]["grad_dtype"] == "fp32"
assert j["default"]["iter_s"] == j["bf16"]["iter_s"] == j["fp16"]["iter_s"]
d2, d4 = j["bf16"]["comm"]["dp"], j["fp32"]["comm"]["dp"]
assert abs(d4["bytes"] - 2 * d2["bytes"]) <= 1e-12 * d4["bytes"], (d2, d4)
assert d4["time_s"] > d2["time_s"] and j["fp32"]["iter_s"] > j["bf16"]["iter_s"]
assert j["fp32"]["memory"]["grads_bytes"] == 2 * j["bf16"]["memory"]["grads_bytes"]
assert j["fp32"]["memory"]["weights_bytes"] == j["bf16"]["memory"]["weights_bytes"]
PY
good "the gradient type in the scenario" "grad_dtype=fp32" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --grad-dtype fp32
bad_says "an unknown gradient type" "bf16, fp16" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --grad-dtype fp8
# one stage has no bubble (with experts it printed 30.45us, with ZeRO 3
# 1.104ms), and rounding noise is no slowdown (it printed 2.22e-14%)
good "no bubble on one stage, experts" "^pipeline bubble  *0ns  *0%" \
    train --preset dgx-h100:nodes=8 --model mixtral-8x7b --dp 8 --tp 8 --ep 2 --zero 1 --allow-oom
good "no bubble on one stage, ZeRO 3" "^pipeline bubble  *0ns  *0%" \
    train --preset dgx-h100:nodes=8 --model llama3-8b --dp 8 --tp 8 --zero 3
good "no slowdown without overlap" "compute slowdown 0%, " train --preset dgx-h100:nodes=1 --model llama3-8b --tp 8
# a pipeline of one micro-batch hides nothing: its two sends are on the
# critical path either way. The serial run held the last stage's gradient
# send behind its optimizer step (it printed 3.057ms and efficiency 0.417).
cat >"$tmp/mm.json" <<EOF
{"name":"x","arch":"transformer","layers":4,"hidden":1024,"ffn":4096,"heads":16,"kv_heads":16,"vocab":32000,"seq":2048}
EOF
good "a serial pipeline sends before its optimizer step" "^iteration without overlap  *2.504ms " \
    train --topo full:hosts=2 --model "$tmp/mm.json" --pp 2 --micro-batches 1 --quiet
good "nothing to hide in it" "^overlap efficiency 0 " \
    train --topo full:hosts=2 --model "$tmp/mm.json" --pp 2 --micro-batches 1 --quiet
# time linear in the layers: the look-ahead forward scanned every bucket of
# its stage for each unit (150,000 layers took about two minutes; now a few
# seconds, the limit leaves room for a slow or sanitized build)
cat >"$tmp/deep.json" <<EOF
{"name":"deep","arch":"transformer","layers":150000,"hidden":1024,"ffn":4096,"heads":16,"kv_heads":16,"vocab":32000,"seq":2048}
EOF
timeout 60 "$T" train --topo full:hosts=2 --model "$tmp/deep.json" --dp 2 --allow-oom --quiet >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "^iteration  *108.7s " "$tmp/out"; then
    echo "FAIL (150,000 layers within 60 s): rc=$rc"
    head -3 "$tmp/err"
    fails=$((fails + 1))
fi
good "the contention's cost is a row" "^compute slowdown (contention) " train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8

good "search" "splits, .* fit in memory" train --topo "$CLOS" --model llama3-8b --search --global-batch 64
"$T" train --topo "$CLOS" --model llama3-8b --search --global-batch 64 --format json >"$tmp/s" 2>&1
python3 - "$tmp/s" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
sp = j["splits"]
assert len(sp) > 3 and "iter_s" not in j
fit = [x for x in sp if x["fits"]]
assert fit == sp[:len(fit)], "fitting splits first"
assert all(a["iter_s"] <= b["iter_s"] for a, b in zip(fit, fit[1:])), "by iteration time"
assert all(x["dp"] * x["tp"] * x["pp"] == 64 and x["dp"] * x["micro_batches"] == 64 for x in sp)
assert all(x["tp"] <= 8 for x in sp), "tp within a node of 8"
PY
# interleaved pipelines in forward order: no compute slowdown without contention (the
# updates of the later virtual stages, after the look-ahead, used to be folded onto
# other compute: -7.57%)
good "forward order, interleaved, s_c 0: no slowdown" "^compute slowdown (contention) *0ns *0%" train --topo clos:down=2x4,up=1x4,node=4 --model "$(dirname "$0")/data/models/megatron-gpt-1.7b.json" --dp 4 --pp 2 --micro-batches 2 --virtual-stages 2 --comm-order forward --s-c 0
bad "search without a global batch" train --topo "$CLOS" --model llama3-8b --search
# --search chooses the split: degrees beside a global batch were ignored (exit 0)
bad_says "search with degrees and a global batch" "search chooses the split" train --topo "$CLOS" --model llama3-8b --search --global-batch 16 --dp 3 --tp 5 --pp 7
bad_says "search with --dp and a global batch" "with --global-batch give no --dp" train --topo "$CLOS" --model llama3-8b --search --global-batch 16 --dp 2
bad_says "search with --micro-batches and a global batch" "micro-batches 2" train --topo "$CLOS" --model llama3-8b --search --global-batch 16 --micro-batches 2
bad_says "search with --ep" "every ep" train --topo "$CLOS" --model mixtral-8x7b --search --dp 64 --ep 2
# a degree given is refused whatever its value: --ep 1 and --dp 1 beside a
# global batch were taken for no flag (exit 0)
bad_says "search with --ep 1 and a global batch" "ep 1" train --topo "$CLOS" --model mixtral-8x7b --search --global-batch 64 --ep 1
bad_says "search with --ep 1" "every ep" train --topo "$CLOS" --model mixtral-8x7b --search --dp 64 --ep 1
for f in --dp --tp --pp --micro-batches; do
    bad_says "search with $f 1 and a global batch" "with --global-batch give no --dp" \
        train --topo "$CLOS" --model llama3-8b --search --global-batch 64 $f 1
done
# a saved scenario holds 1 for each: it runs again
"$T" train --topo "$CLOS" --model llama3-8b --search --global-batch 64 --print-scenario >"$tmp/search.json" 2>"$tmp/err"
good "a saved search scenario" "splits, .* fit in memory" train --scenario "$tmp/search.json"
good "search: degrees that give the global batch" "global batch 128 sequences" train --topo "$CLOS" --model llama3-8b --search --dp 32 --tp 2 --micro-batches 4
bad "TP across nodes with --tp-in-node" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 16 --tp-in-node

good "an accelerator whose profile gives no memory capacity" "not checked" \
    train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --profiles "$(dirname "$0")/data/profiles" --accel test-accel
bad_says "search: why no split runs" "exceeds its 32 layers" \
    train --topo torus:dims=4x4 --model llama3-8b --search --global-batch 16 --virtual-stages 64
printf '{"name": "g12", "layers": 4, "hidden": 768, "heads": 12, "ffn": 3072, "vocab": 1000, "seq": 128, "bias": true}' >"$tmp/g12.json"
"$T" train --topo clos:hosts=48,radix=16,tiers=2,node=8 --model "$tmp/g12.json" --search --global-batch 48 --format json >"$tmp/t" 2>&1
python3 - "$tmp/t" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
tps = sorted(set(x["tp"] for x in j["splits"]))
assert tps == [1, 2, 4], tps  # 12 heads: 3 and 6 would split a node of 8, 8 does not divide the heads
PY

# --- bad input ---
bad "degrees that do not multiply to the endpoints" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8
bad "unknown model" train --topo "$CLOS" --model gpt5 --dp 64
bad "no model" train --topo "$CLOS" --dp 64
bad_says "negative micro-batches" "'-1' is negative" train --topo "$CLOS" --model llama3-8b --dp 64 --micro-batches -1
bad_says "a negative degree" "'-8' is negative" train --topo "$CLOS" --model llama3-8b --dp 8 --tp -8
bad_says "micro-batches that are no number" "'abc' is not an integer" train --topo "$CLOS" --model llama3-8b --dp 64 --micro-batches abc
bad "ZeRO stage 4" train --topo "$CLOS" --model llama3-8b --dp 64 --zero 4
bad "unknown recomputation" train --topo "$CLOS" --model llama3-8b --dp 64 --recompute some
bad "unknown accelerator" train --topo "$CLOS" --model llama3-8b --dp 64 --accel h900
bad "TP not dividing the heads" train --topo "$CLOS" --model llama3-8b --dp 1 --tp 64
bad "a CNN with tensor parallelism" train --topo "$CLOS" --model resnet50 --dp 8 --tp 8
printf '{"name": "x", "layers": 2' >"$tmp/broken.json"
bad "malformed model JSON" train --topo "$CLOS" --model "$tmp/broken.json" --dp 64
# a model file is embedded by content: a replay reads the model the run
# read, whatever became of the file (edited, then deleted)
cp "$(dirname "$0")/data/models/tiny.json" "$tmp/mine.json"
"$T" train --topo "$CLOS" --model "$tmp/mine.json" --dp 64 --out "$tmp/mine_run.json" --format json >"$tmp/mine_a.json" 2>&1
sed 's/"layers": *[0-9]*/"layers": 3/' "$(dirname "$0")/data/models/tiny.json" >"$tmp/mine.json"
"$T" replay "$tmp/mine_run.json" --format json >"$tmp/mine_b.json" 2>&1
rm -f "$tmp/mine.json"
"$T" replay "$tmp/mine_run.json" --format json >"$tmp/mine_c.json" 2>&1
python3 - "$tmp/mine_a.json" "$tmp/mine_b.json" "$tmp/mine_c.json" <<'PY' || { echo "FAIL (a replay does not read the embedded model)"; fails=$((fails + 1)); }
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:4])
assert a["iter_s"] == b["iter_s"] == c["iter_s"], (a["iter_s"], b["iter_s"], c["iter_s"])
assert sys.argv[1] and list(a["scenario"]["iteration"]["model_json"]), a["scenario"]["iteration"].keys()
PY
# a flag over a scenario that makes one of its keys moot (--pp 1 over
# virtual stages, --sync ddp over DiLoCo's steps): the key is left out of
# the result's scenario and out of the run, so a replay gives the same
# numbers
"$T" train --topo clos:down=8x8,up=1x8 --model mixtral-8x7b --dp 16 --tp 2 --pp 2 --ep 4 --micro-batches 4 \
    --virtual-stages 2 --allow-oom --sync streaming-diloco --inner-steps 50 --outer-steps 3 --overlap-steps 2 \
    --outer-dtype bf16 --replicas 4 --print-scenario >"$tmp/moot.json" 2>&1
for flags in "--pp 1 --dp 32" "--sync ddp" "--sync diloco"; do
    # shellcheck disable=SC2086
    "$T" train --scenario "$tmp/moot.json" $flags --out "$tmp/moot_run.json" --quiet >/dev/null 2>&1
    "$T" replay "$tmp/moot_run.json" --format json --quiet >"$tmp/moot_re.json" 2>&1
    python3 - "$tmp/moot_run.json" "$tmp/moot_re.json" "$flags" <<'PY' || { echo "FAIL (a moot key ran unrecorded: $flags)"; fails=$((fails + 1)); }
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a == b, [k for k in a if a[k] != b.get(k)]
it, sy = a["scenario"]["iteration"], a["scenario"]["sync"]
if "--pp 1" in sys.argv[3]:
    assert "virtual_stages" not in it and a["pp"] == 1, it
if "ddp" in sys.argv[3]:
    assert sy == {"strategy": "ddp", "replicas": 4} and a["sync"]["inner_steps"] == 100, (sy, a["sync"])
if "--sync diloco" in sys.argv[3]:
    assert "overlap_steps" not in sy and a["sync"]["overlap_steps"] == 1 and a["sync"]["inner_steps"] == 50, a["sync"]
PY
done
bad_says "a model that does not fit" "short by" train --topo "$CLOS" --model llama3-8b --dp 64
good "--allow-oom times it anyway" "does NOT fit" train --topo "$CLOS" --model llama3-8b --dp 64 --allow-oom
bad "micro-batches that do not divide the batch" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 3 --global-batch 32
bad "achievable above 1" train --topo "$CLOS" --model llama3-8b --dp 64 --achievable 1.5
# co-simulation, by hand: two DP groups ({0, 2} and {1, 3}, TP on the
# node links) share the one up-link of each leaf, so max-min gives each of
# their flows half of it: every DP bucket of S takes 2 S / B plus one or
# two steps' latency (4 cables of 1 us), against S / B alone, while
# compute runs; half of the DP flows' time is lost, all of it to the
# links through the L2 switch; TP loses nothing
SHARE=clos:down=2x2,up=1x1,lat=1us,hop_lat=0,alpha=0,node=2
"$T" train --topo "$SHARE" --model llama-7b --dp 2 --tp 2 --micro-batches 2 --mode flow --allow-oom \
    --timeline "$tmp/share_tl.json" --format json >"$tmp/share.json" 2>"$tmp/share.err" || {
    echo "FAIL (two DP groups on one up-link): $(cat "$tmp/share.err")"; fails=$((fails + 1)); }
if ! python3 - "$tmp/share.json" "$tmp/share_tl.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
dur = sum(e["dur"] for e in ev if e.get("ph") == "X" and names.get((e["pid"], e["tid"])) == "dp") * 1e-6
B = 400e9 / 8
S, n = r["comm"]["dp"]["bytes"], r["comm"]["dp"]["count"]
assert 2 * S / B + n * 4e-6 - 1e-9 <= dur <= 2 * S / B + n * 8e-6 + 1e-9, (dur, 2 * S / B, n)
b = r["link_blame"]
dp = b["dp"]
assert abs(dp["lost_flow_s"] - dp["sent_flow_s"] / 2) <= 1e-9 * dp["sent_flow_s"], dp
assert abs(dp["sent_flow_s"] - 8 * S / B) <= 1e-9 * dp["sent_flow_s"], (dp, 8 * S / B)
# each group's flows fill the up-link and the down-link of the switch at
# once: the blame goes to the lower link ID of the two (maxmin.c)
assert sorted(l["name"] for l in dp["links"]) == ["L2 0 -> leaf 0", "leaf 0 -> L2 0"], dp["links"]
assert b["tp"]["lost_flow_s"] == 0 and b["tp"]["sent_flow_s"] > 0
PY
then
    echo "FAIL (two DP groups on one up-link): not the times and blame max-min gives by hand"
    fails=$((fails + 1))
fi
good "blame in the text" "^  dp    50% of" train --topo "$SHARE" --model llama-7b --dp 2 --tp 2 --micro-batches 2 --mode flow --allow-oom
# compression per traffic class: applied only where the iteration is
# shorter with it; the wire bytes are the codec's
"$T" train --topo "$SLOW" --model resnet50 --dp 64 --micro-batch 64 --compress-dp powersgd:rank=4 --format json >"$tmp/c_dp.json" 2>&1
"$T" train --topo clos:down=4x2,up=1x2,bw=100Gbps,lat=1us --model "$(dirname "$0")/data/models/tiny.json" --dp 4 --tp 2 --compress-dp powersgd:rank=2 --dp-algo auto --format json >"$tmp/c_tp.json" 2>&1
"$T" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom --format json >"$tmp/c_ep0.json" 2>&1
"$T" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom --compress-ep int8 --format json >"$tmp/c_ep.json" 2>&1
"$T" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 8 --mode steps --compress-pp int8 --compress-dp int8 --format json >"$tmp/c_pp.json" 2>&1
"$T" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom --compress-ep int4 --format json >"$tmp/c_ep4.json" 2>&1
for q in int8 int4; do
    "$T" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 8 --mode steps --compress-pp $q --format json >"$tmp/c_pp_$q.json" 2>&1
done
if ! python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/c_dp.json"))
c = j["compression"]["dp"]
# 100 Gb/s, ResNet-50 on 64 workers: PowerSGD's bytes save more than its compute costs
assert c["applied"] and c["with_s"] < c["without_s"] and abs(j["iter_s"] - c["with_s"]) <= 1e-12 * c["with_s"], c
# per-tensor PowerSGD (powerSGD_hook): ResNet-50's 161 tensors at rank 4,
# 54,120 elements sent as they are, P and Q of 27,560 and 54,931 rows and
# columns: 4 (54,120 + 4 (27,560 + 54,931)) bytes, compress's figure
assert j["comm"]["dp"]["bytes"] == 4 * (54120 + 4 * (27560 + 54931)), j["comm"]["dp"]
g = json.load(open(f"{d}/c_tp.json"))
# tiny-gqa (h 64, ffn 256, 4 heads, 2 KV heads of 16, vocab 1000, 2
# layers, untied) on one TP rank of 2, rank 2: per layer the two norms
# 32 x 1 each (sent as they are), Q 64 x 32 (column-parallel), K and V
# 64 x 16, O 32 x 64 (row-parallel), gate and up 64 x 128, down 128 x 64
# (auto's DP algorithm: with the library's rings its three small
# all-reduces cost more than the bucket's one, and it is not applied):
# U 64, P 2 (64 + 64 + 64 + 32 + 64 + 64 + 128) = 960, Q 2 (32 + 16 + 16 +
# 64 + 128 + 128 + 64) = 896; the embedding 500 x 64 (P 1,000, Q 128), the
# final norm 32 (U), the head 64 x 500 (P 128, Q 1,000); one bucket, three
# all-reduces
U, P, Q = 2 * 64 + 32, 2 * 960 + 1000 + 128, 2 * 896 + 128 + 1000
assert g["comm"]["dp"]["bytes"] == 4 * (U + P + Q) and g["comm"]["dp"]["count"] == 3, g["comm"]["dp"]
e0, e = json.load(open(f"{d}/c_ep0.json")), json.load(open(f"{d}/c_ep.json"))
q = e["compression"]["ep"]
assert abs(q["without_s"] - e0["iter_s"]) <= 1e-9 * e0["iter_s"], (q, e0["iter_s"])
if q["applied"]:
    # int8 tokens: one byte per element against bf16's two
    r = e["comm"]["ep"]["bytes"] / e0["comm"]["ep"]["bytes"]
    assert 0.49 < r <= 0.51, r
    assert q["with_s"] <= q["without_s"]
# int4 tokens and activations: sent once, nothing summed, so 4 bits a
# coordinate packed (no headroom for a sum) plus the sender's 4-byte scale,
# half of int8's bytes less the scales; int8 carries d + 4 a send
for a, b, k in ((e, json.load(open(f"{d}/c_ep4.json")), "ep"),
                (json.load(open(f"{d}/c_pp_int8.json")), json.load(open(f"{d}/c_pp_int4.json")), "pp")):
    assert a["compression"][k]["applied"] and b["compression"][k]["applied"], (a["compression"], b["compression"])
    n8, n4 = a["comm"][k], b["comm"][k]
    assert n8["count"] == n4["count"] and n4["bytes"] == (n8["bytes"] - 4 * n8["count"]) / 2 + 4 * n8["count"], (k, n8, n4)
p = json.load(open(f"{d}/c_pp.json"))["compression"]
for k in ("dp", "pp"):
    x = p[k]
    # whichever way it went, the choice is the faster one
    assert (x["with_s"] <= x["without_s"]) == x["applied"] or x["with_s"] == x["without_s"], (k, x)
PY
then
    echo "FAIL (compression per class): the choices or bytes are not as the codecs and times say"
    fails=$((fails + 1))
fi
good "compression line" "^compression of dp gradients: powersgd:rank=4 applied" train --topo "$SLOW" --model resnet50 --dp 64 --micro-batch 64 --compress-dp powersgd:rank=4
# a class without its parallelism: dp 1 has no gradient all-reduce to compress (it was accepted, "not applied")
bad_says "DP codec with dp 1" "needs dp above 1" train --topo "$CLOS" --model llama3-8b --dp 1 --tp 8 --pp 8 --micro-batches 8 --compress-dp int8
bad_says "DP codec with one data-parallel rank a replica" "needs dp above 1" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --replicas 8 --sync diloco --compress-dp int8
bad_says "DP codec with ZeRO 1" "needs ZeRO 0" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --zero 1 --compress-dp int8
bad_says "a sparse codec on activations" "elementwise only" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 2 --compress-pp topk:ratio=0.01
bad_says "PP codec without a pipeline" "needs pp above 1" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --compress-pp int8
bad_says "EP codec without experts" "needs ep above 1" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --compress-ep int8
bad_says "batched rank beyond a bucket" "rank=100000 does not fit the 1431 x 1432 matrix" train --topo "$CLOS" --model resnet50 --dp 64 \
    --tp 1 --compress-dp powersgd-batched:rank=100000
bad_says "unknown codec" "compress-dp: unknown codec" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --compress-dp zstd
bad_says "PP codec co-simulated" "not co-simulated" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 2 --mode flow --compress-pp int8
bad_says "search with codecs" "without --search" train --topo "$CLOS" --model llama3-8b --search --global-batch 64 --compress-dp int8
# synchronisation across replicas (--sync): the step is the inner step
# plus the outer synchronisation over H (blocking) or the larger of the
# two (overlapped), as the JSON's own figures say
for sy in diloco diloco-eager streaming-diloco; do
    fr=""
    [ "$sy" = streaming-diloco ] && fr="--fragments 4"
    # shellcheck disable=SC2086
    "$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --zero 1 --sync $sy --replicas 2 \
        --inner-steps 20 $fr --outer-steps 3 --format json >"$tmp/sync_$sy.json" 2>"$tmp/sync.err" || {
        echo "FAIL (--sync $sy): $(cat "$tmp/sync.err")"; fails=$((fails + 1)); }
done
if ! python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
for sy in ("diloco", "diloco-eager", "streaming-diloco"):
    j = json.load(open(f"{d}/sync_{sy}.json"))
    y, it = j["sync"], j["iter_s"]
    assert y["strategy"] == sy and y["replicas"] == 2 and j["dp"] == 4, (sy, y)
    H, o = y["inner_steps"], y["outer_s"]
    assert abs(o - y["outer_allreduce_s"] - y["outer_allgather_s"]) <= 1e-12 * o
    want = {"diloco": it + o / H, "diloco-eager": max(it, o / H),
            "streaming-diloco": max(it + 4 * max(0, o - it) / H, 4 * o / H)}[sy]
    assert abs(y["step_s"] - want) <= 1e-9 * want, (sy, y["step_s"], want)
    assert abs(y["run_s"] - 3 * H * y["step_s"]) <= 1e-9 * y["run_s"]
    # the outer all-reduce: the device's parameters / dp per replica, 4 bytes each (fp32), per fragment
    frag = 4 if sy == "streaming-diloco" else 1
    assert y["outer_bytes"] > 0 and abs(y["cross_replica_bytes_per_step"] - y["outer_bytes"] * frag / H) <= 1e-9 * y["outer_bytes"]
    assert isinstance(y["loss_vs_ddp"], float) and "derived" in y["loss_rule"]
PY
then
    echo "FAIL (--sync): the JSON's step times do not follow the strategies' formulas"
    fails=$((fails + 1))
fi
# streaming DiLoCo: a fragment's outer all-reduce must be applied before
# its next synchronisation, H steps later; the trade-off over H lists only
# the H at or above the overlap
bad_says "overlap above H" "--overlap-steps 30: above --inner-steps 20" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 \
    --micro-batches 2 --sync streaming-diloco --replicas 2 --inner-steps 20 --overlap-steps 30
if "$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --sync streaming-diloco --replicas 2 \
    --inner-steps 40 --overlap-steps 40 --format json >"$tmp/sync_tau.json" 2>"$tmp/sync.err"; then
    python3 - "$tmp/sync_tau.json" <<'PY' || { echo "FAIL (--overlap-steps 40): H below the overlap listed"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
hs = [h["inner_steps"] for h in j["sync"]["h_tradeoff"]]
assert hs == [40, 100, 300, 1000, 2000], hs
PY
else
    echo "FAIL (--overlap-steps 40 = H): $(cat "$tmp/sync.err")"; fails=$((fails + 1))
fi
# two datacenters by hand: pods of 2 hosts joined by one 10 Gb/s, 20 ms
# long-haul cable, ResNet-50 on 4 ranks, a replica per pod (the default).
# DiLoCo's outer all-reduce: each rank reduces its half of the parameters
# in fp32 (S_o bytes) with its peer in the other pod, the two pairs sharing
# the cable: 2 S_o / B plus one or two crossings of 20 ms; a step is the
# in-pod step plus that over H = 100. DDP all-reduces every step's
# gradients (S bytes, in buckets) across the cable as NCCL would, a ring of
# 4 (library): 2 (p - 1) = 6 steps of a quarter of the bucket, each step
# crossing the cable once each way (1 -> 2 and 3 -> 0, no sharing): 1.5 S /
# B plus 6 crossings per bucket
WAN="multidc:pods=2,pod=clos,wan_bw=10Gbps,wan_lat=20ms,down=2,up=1,lat=1us,hop_lat=0,alpha=0"
for sy in ddp diloco; do
    h=""
    [ "$sy" = diloco ] && h="--inner-steps 100"
    # shellcheck disable=SC2086
    "$T" train --topo "$WAN" --model resnet50 --dp 4 --micro-batch 64 --sync $sy $h --format json \
        >"$tmp/wan_$sy.json" 2>"$tmp/wan.err" || { echo "FAIL (two datacenters, $sy): $(cat "$tmp/wan.err")"; fails=$((fails + 1)); }
done
if ! python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
B, lat = 10e9 / 8, 20e-3
ddp, dl = json.load(open(f"{d}/wan_ddp.json")), json.load(open(f"{d}/wan_diloco.json"))
y = dl["sync"]
assert y["replicas"] == 2 and ddp["sync"]["replicas"] == 2
params = 25.557032e6  # ResNet-50, the zoo's count
So = y["outer_bytes"]
assert abs(So - params / 2 * 4) < 0.01 * So, So
assert 2 * So / B + lat <= y["outer_allreduce_s"] <= 2 * So / B + 2 * lat + 1e-4, (y["outer_allreduce_s"], 2 * So / B)
assert abs(y["step_s"] - (dl["iter_s"] + y["outer_s"] / 100)) <= 1e-9 * y["step_s"]
c = ddp["comm"]["dp"]
S, n = c["bytes"], c["count"]
assert [a["algo"] for a in ddp["algorithms"]] == ["ring"], ddp["algorithms"]
assert 1.5 * S / B + 6 * n * lat <= c["time_s"] <= 1.5 * S / B + 6 * n * lat + 1e-3, (c, S / B)
assert ddp["sync"]["step_s"] == ddp["iter_s"] and ddp["iter_s"] > 10 * y["step_s"], (ddp["iter_s"], y["step_s"])
PY
then
    echo "FAIL (two datacenters): DiLoCo or DDP across the long-haul link is not as computed by hand"
    fails=$((fails + 1))
fi
good "DDP over replicas" "^sync: ddp over 2 replicas" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --replicas 2
good "local SGD: no cited loss rule" "not estimated" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --micro-batches 2 --sync local-sgd --replicas 2
bad_says "H = 0" "inner-steps" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync diloco --replicas 2 --inner-steps 0
bad_says "H < 0" "inner-steps" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync diloco --replicas 2 --inner-steps -5
bad_says "DiLoCo with one replica" "at least 2" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync diloco
bad_says "replicas not dividing dp" "not a multiple of --replicas" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync diloco --replicas 3
bad_says "unknown strategy" "streaming-diloco" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync fedavg --replicas 2
bad_says "unknown outer type" "fp32, bf16" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync diloco --replicas 2 --outer-dtype fp8
# options that shape nothing here are refused, not ignored
bad_says "no-cosim outside flow mode" "applies only with --mode flow" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --no-cosim
bad_says "fragments without streaming DiLoCo" "applies only with --sync streaming-diloco" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync diloco --replicas 2 --fragments 4
bad_says "inner steps with DDP" "applies only with --sync other than ddp" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --inner-steps 10
bad_says "an EP algorithm without experts" "applies only with --ep above 1" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --ep-algo pairwise
bad_says "virtual stages without a pipeline" "applies only with --pp above 1" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --virtual-stages 2
bad_says "more fragments than layers" "at most one fragment per layer" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --sync streaming-diloco --replicas 2 --fragments 33
bad_says "search with replicas" "not with --replicas" train --topo "$CLOS" --model llama3-8b --search --global-batch 64 --replicas 2
# each class's algorithm: named, it is the one run (and listed); naming
# auto's own choice changes nothing; its options reach the co-simulation
good "algorithms listed" "^algorithms: tp allreduce ring (library); dp allreduce ring (library)$" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --mode flow
good "auto's choice listed" "^algorithms: tp allreduce rhd (auto); dp allreduce direct (auto)$" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --mode flow --dp-algo auto --tp-algo auto
# library: rings for reduce-scatter and all-gather (TP with sequence
# parallelism, DP with ZeRO 1), the faster of ring and dbtree for
# all-reduce (dbtree for the test model's small gradients over 64 ranks),
# NCCL's grouped send/recv (nccl-a2a) for the experts' all-to-all on a
# topology of scale-up nodes, all pairs (direct) on one without
good "library: rings" "^algorithms: tp reducescatter ring (library); tp allgather ring (library); dp reducescatter ring (library); dp allgather ring (library)$\|^algorithms: tp allgather ring (library); tp reducescatter ring (library); dp reducescatter ring (library); dp allgather ring (library)$" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --seq-parallel --zero 1 --micro-batches 2
good "library: a tree for all-reduce" "^algorithms: dp allreduce dbtree (library)$" train --topo "$SLOW" --model "$(dirname "$0")/data/models/tiny.json" --dp 64
# co-simulated, the library's tree is cut in its chunks as when timed alone
# (it ran dbtree's fixed 64 chunks: one all-reduce, nothing contending,
# took 598 us against 502.4 us alone)
itt() { "$T" train --topo "$SLOW" --model "$(dirname "$0")/data/models/tiny.json" --dp 64 --mode flow --format json "$@" |
    sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' | head -1; }
a=$(itt)
b=$(itt --no-cosim)
if ! awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-9 * b) }'; then
    echo "FAIL (co-simulation, the library's tree): $a against $b alone"; fails=$((fails + 1))
fi
good "library: a ring for large all-reduces" "^algorithms: dp allreduce ring (library)$" train --topo "$SLOW" --model resnet50 --dp 64 --micro-batch 64
# library: NCCL's ring where a DP group holds several GPUs of each of several
# nodes (dp 64, t = 1 on 8 DGX H100): its channels use every rail, 178.6 ms
# of DP collectives (as --dp-algo nccl-ring), where one ring in rank order
# leaves a node by one NIC (677.3 ms); with t = 8 a group holds one GPU a
# node and the ring stays
good "library: NCCL's ring across nodes" "^algorithms: dp reducescatter nccl-ring (library); dp allgather nccl-ring (library)$" train --preset dgx-h100:nodes=8 --model llama3-8b --dp 64 --tp 1 --pp 1 --micro-batches 1 --seq-parallel --recompute selective --zero 1
good "library: NCCL's ring, as named" "^DP collectives (nominal) *178.6ms" train --preset dgx-h100:nodes=8 --model llama3-8b --dp 64 --tp 1 --pp 1 --micro-batches 1 --seq-parallel --recompute selective --zero 1
good "library: NCCL's ring, named" "^DP collectives (nominal) *178.6ms" train --preset dgx-h100:nodes=8 --model llama3-8b --dp 64 --tp 1 --pp 1 --micro-batches 1 --seq-parallel --recompute selective --zero 1 --dp-algo nccl-ring
good "library: one ring where a group has a GPU a node" "dp reducescatter ring (library); dp allgather ring (library)$" train --preset dgx-h100:nodes=8 --model llama3-8b --dp 8 --tp 8 --pp 1 --micro-batches 4 --seq-parallel --recompute selective --zero 1
# an interleaved pipeline co-simulated: the last stage's chunk sends on to
# the first stage's next chunk (it used to fail as a send past the pipeline)
good "interleaved pipeline co-simulated" "^iteration " train --topo clos:hosts=16,radix=8,tiers=2,node=8 --model llama3-8b --dp 2 --tp 4 --pp 2 --micro-batches 4 --virtual-stages 2 --allow-oom --mode flow
good "library: NCCL's all-to-all on GPU nodes" "ep alltoall nccl-a2a (library)" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom
good "library: NCCL's all-to-all, as named" "^EP all-to-alls (nominal) *2.411s" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom
good "library: NCCL's all-to-all, named" "^EP all-to-alls (nominal) *2.411s" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom --ep-algo nccl-a2a
good "library: direct for all-to-all without scale-up nodes" "ep alltoall direct (library)" train --topo "$SLOW" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom
good "library: NCCL's all-to-all co-simulated" "ep alltoall nccl-a2a (library)" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --micro-batches 2 --zero 1 --allow-oom --mode flow
good "a named DP algorithm" "^algorithms: .*dp allreduce ring;*" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --mode flow --dp-algo ring
good "a named TP algorithm" "tp reducescatter ring; tp allgather ring\|tp allgather ring; tp reducescatter ring" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --seq-parallel --tp-algo ring
ita() { m=$1; shift; "$T" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --mode "$m" \
    --format json "$@" | sed -n 's/.*"iter_s": *\([0-9.e+-]*\).*/\1/p' | head -1; }
for m in flow steps; do
    a=$(ita $m --dp-algo auto); b=$(ita $m --dp-algo direct); c=$(ita $m --dp-algo ring)
    l=$(ita $m)
    d=$(ita $m --zero 0 --dp-algo dbtree:chunks=2); e=$(ita $m --zero 0 --dp-algo dbtree:chunks=16)
    if [ -z "$a" ] || [ "$a" != "$b" ] || [ "$a" = "$c" ] || [ "$l" != "$c" ] || [ -z "$d" ] || [ "$d" = "$e" ]; then
        echo "FAIL (--dp-algo, $m): auto $a, direct (auto's choice) $b, ring $c, library (ring) $l; dbtree chunks 2 $d, 16 $e"
        fails=$((fails + 1))
    fi
done
d=$(ita formula --zero 0 --dp-algo dbtree:chunks=2); e=$(ita formula --zero 0 --dp-algo dbtree:chunks=16)
if [ -z "$d" ] || [ "$d" = "$e" ]; then
    echo "FAIL (--dp-algo, formula): dbtree chunks 2 $d, 16 $e: expected different"; fails=$((fails + 1))
fi
good "expert DP follows --dp-algo" "edp reducescatter ring; .*edp allgather ring" train --topo "$CLOS" --model mixtral-8x7b --dp 16 --tp 4 --ep 8 --zero 1 --allow-oom --dp-algo ring
good "the outer all-gather follows --dp-algo, the outer all-reduce stays auto's" "outer allreduce [a-z]* (auto); dp allgather ring$" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --mode steps --replicas 2 --sync diloco --zero 0 --dp-algo ring
good "NCCL's algorithm in steps mode" "dp allreduce nccl" train --topo "$CLOS" --model resnet18 --dp 64 --mode steps --dp-algo nccl
bad_says "unknown algorithm" "dp-algo (library, the default, or an algorithm): unknown algorithm 'bogus'" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --dp-algo bogus
bad_says "algorithm without the operation" "tp reducescatter: .*bruck implements only allgather and alltoall" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --seq-parallel --tp-algo bruck
bad_says "algorithm for no all-to-all" "ep alltoall" train --topo "$CLOS" --model mixtral-8x7b --dp 8 --tp 8 --ep 8 --ep-algo ring --allow-oom
bad_says "search with an algorithm some split cannot run" "name an algorithm every split can run" train --topo "$CLOS" --model llama3-8b --search --global-batch 64 --mode steps --zero 1 --dp-algo rhd
bad_says "NCCL's capped protocols co-simulated" "add --no-cosim" train --topo "$CLOS" --model resnet18 --dp 64 --mode flow --dp-algo nccl
good "NCCL's algorithm alone in flow mode" "dp allreduce nccl" train --topo "$CLOS" --model resnet18 --dp 64 --mode flow --dp-algo nccl --no-cosim
# the list is the reported run's: not compress's trials, and the outer step's too
# (one ring: with the library's multi-rail ring the compression pays here)
"$T" train --topo "$CLOS" --model resnet50 --dp 64 --mode steps --compress-dp topk:ratio=0.01 --dp-algo ring >"$tmp/out" 2>&1
if ! grep -q "^algorithms: dp allreduce ring$" "$tmp/out" || ! grep -q "topk:ratio=0.01 not applied" "$tmp/out"; then
    echo "FAIL (algorithms of the reported run): expected only the uncompressed all-reduce"; grep -E '^(algorithms|compression)' "$tmp/out"
    fails=$((fails + 1))
fi
good "the outer step's algorithms" "outer allreduce [a-z]* (auto); dp allgather" train --topo "$CLOS" --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --mode steps --replicas 2 --sync diloco --zero 0
# co-simulated, collectives alone on their scale-up links are timed alone
# (one simulation per schedule and group): the same iteration, blame and
# all, as every one event by event (--no-skip), to 1e-9; some are timed
# alone by default, none with --no-skip (the links lost time is charged
# to may differ where bottlenecks tie)
for X in "--topo $CLOS --model llama3-8b --dp 4 --tp 8 --pp 2 --micro-batches 4 --seq-parallel" \
    "--topo $CLOS --model mixtral-8x7b --dp 16 --tp 4 --ep 8 --zero 1 --allow-oom" \
    "--topo torus:dims=4x4x4,node=8 --model llama3-8b --dp 8 --tp 8 --micro-batches 4 --tp-algo ring --dp-algo ring"; do
    # shellcheck disable=SC2086
    "$T" train $X --mode flow --format json >"$tmp/solo.json" 2>&1
    # shellcheck disable=SC2086
    "$T" train $X --mode flow --format json --no-skip >"$tmp/event.json" 2>&1
    python3 - "$tmp/solo.json" "$tmp/event.json" "$X" <<'PY' || fails=$((fails + 1))
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
bad = []
def walk(x, y, p):
    # the links a class's lost time is charged to: among links that tie as
    # a flow's bottleneck, the solver's order picks one (flow ids differ)
    if p in ("scenario.flow.skip", "cosim") or (p.startswith("link_blame.") and p.endswith(".links")):
        return
    if isinstance(x, dict):
        if not isinstance(y, dict) or set(x) != set(y):
            bad.append(p)
            return
        for k in x:
            walk(x[k], y[k], p + "." + k if p else k)
    elif isinstance(x, list):
        if not isinstance(y, list) or len(x) != len(y):
            bad.append(p)
            return
        for i, (u, v) in enumerate(zip(x, y)):
            walk(u, v, "%s[%d]" % (p, i))
    elif isinstance(x, float) or isinstance(y, float):
        if abs(x - y) > 1e-9 * max(abs(x), abs(y)) + 1e-12:  # seconds: a difference (bubble) loses digits
            bad.append("%s: %r vs %r" % (p, x, y))
    elif x != y:
        bad.append("%s: %r vs %r" % (p, x, y))
walk(a, b, "")
ca, cb = a["cosim"], b["cosim"]
if not (ca["timed_alone"] > 0 and ca["alone_simulations"] <= ca["timed_alone"] and cb["timed_alone"] == 0
        and ca["flow_jobs"] == cb["flow_jobs"] and not ca["retried"]):
    bad.append("cosim counts %r, --no-skip %r" % (ca, cb))
if bad:
    print("FAIL (timed alone = event by event: %s): %s" % (sys.argv[3], "; ".join(bad[:5])))
    sys.exit(1)
PY
done

# the CSV table as docs/SCHEMA.md lists it
"$T" train --topo "$CLOS" --model llama3-8b --dp 8 --tp 8 --format csv --quiet >"$tmp/it.csv" 2>&1
[ "$(head -1 "$tmp/it.csv")" = "part,time_s,share" ] &&
    cut -d, -f1 "$tmp/it.csv" | grep -qx "iteration without overlap" && grep -q '^EP all-to-alls (nominal),' "$tmp/it.csv" ||
    { echo "FAIL: train's CSV is not SCHEMA.md's iteration table"; head -3 "$tmp/it.csv"; fails=$((fails + 1)); }

# Refusals that depend on the scenario alone come with --print-scenario
# too (and at a sweep's validation), with the run's message, not only when
# the scenario runs.
P="--preset dgx-h100:nodes=2 --model llama3-70b --print-scenario"
bad_says "--search with --ep, printed" "every ep" train $P --search --ep 2
bad_says "degrees not the endpoints, printed" "the degrees' product must equal them" train $P --dp 3
bad_says "--search without a global batch, printed" "needs the global batch" train $P --search --dp 2
bad_says "--tp-in-node, printed" "spans more than one scale-up node" train $P --tp 16 --tp-in-node
bad_says "--global-batch not the split's, printed" "is not --dp 16 x --micro-batches 1" train $P --dp 16 --global-batch 5
bad_says "--capacity-factor without --ep, printed" "give --ep above 1" train $P --dp 16 --capacity-factor 1
bad_says "--timeline with --search, printed" "not with --search" train $P --dp 16 --search --timeline "$tmp/tl.json"
bad_says "a codec's aggregation path, printed" "path=ps is evaluated by topocc compress" train $P --dp 16 --compress-dp int8:path=ps
bad_says "--search with --compress-*, printed" "without --search" train $P --dp 16 --search --compress-dp int8
bad_says "--compress-pp co-simulated, printed" "not co-simulated" train $P --dp 8 --pp 2 --compress-pp int8 --mode flow
bad_says "--sync without replicas, printed" "give --replicas M of at least 2" train $P --dp 16 --sync diloco
bad_says "--dp not a multiple of the replicas, printed" "not a multiple of --replicas 3" train $P --dp 16 --replicas 3
bad_says "--search with replicas, printed" "one replica's job" train $P --dp 16 --search --replicas 2
bad_says "more fragments than layers, printed" "at most one fragment per layer" train $P --dp 16 --sync streaming-diloco --replicas 2 --fragments 81
bad_says "--seq on a CNN, printed" "apply to transformers only" train --preset dgx-h100:nodes=2 --model resnet50 --dp 16 --seq 128 --print-scenario
bad_says "--achievable profile without one, printed" "achievable_fraction" train $P --dp 16 --accel v100 --achievable profile
bad_says "a job that does not fit in memory, printed" "^topocc: llama3-8b does not fit: 155.73 GiB per device .* (--allow-oom times it anyway)$" train --preset dgx-h100:nodes=2 --model llama3-8b --dp 16 --print-scenario
good "one that fits with --allow-oom, printed" '"allow_oom": true' train --preset dgx-h100:nodes=2 --model llama3-8b --dp 16 --allow-oom --print-scenario
bad_says "--compress-dp with ZeRO, printed" "^topocc: with --compress-dp int8: compressing DP gradients (int8) needs ZeRO 0" train --preset dgx-h100:nodes=2 --model llama3-8b --dp 16 --zero 3 --compress-dp int8 --print-scenario
bad_says "--ep on a model without experts, printed" "llama3-8b has no experts" train --preset dgx-h100:nodes=2 --model llama3-8b --dp 4 --tp 4 --ep 2 --print-scenario
bad_says "TP beyond the key/value heads, printed" "divide its 8 key/value heads" train --preset dgx-h100:nodes=2 --model llama3-8b --tp 16 --allow-oom --print-scenario
# and so does a sweep's up-front validation
cat >"$tmp/sw.json" <<EOF
{"scenario": {"command": "train", "network": {"preset": ["dgx-h100:nodes=2"]},
 "iteration": {"model": "llama3-8b", "allow_oom": true}, "parallel": {"dp": 16}},
 "sweep": {"axes": {"parallel.dp": [16, 3]}}}
EOF
bad_says "a sweep's point with degrees not the endpoints" "point 1 (parallel.dp=3).*the degrees' product" sweep "$tmp/sw.json" --out "$tmp/sw.jsonl" --quiet
if [ -s "$tmp/sw.jsonl" ]; then
    echo "FAIL (a sweep refused up front): it ran a point"
    fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails train CLI check(s) failed"
    exit 1
fi
echo "train CLI checks passed"
