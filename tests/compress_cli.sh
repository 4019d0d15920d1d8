#!/bin/sh
# compress_cli.sh - the contract of `topocc compress`: bad input gets one
# line on stderr, exit code 2 and nothing on stdout; the help text's example
# works; the table, CSV and JSON carry the documented fields; the accuracy
# file path works end to end (short training runs on several seeds write
# it); every verdict the text states is what the numbers beside it say.
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
# a ratio gives steps = ratio x the baseline's steps: at least one step, at most 1e6 times
bad_says "steps ratio below one step to the target" "from 0.000143 (one step to the target, of the baseline's 7038) to 1e6" compress --topo "$CLOS" --model resnet50 --codec topk --steps-ratio topk=1e-300
bad_says "steps ratio just below one step" "one step to the target" compress --topo "$CLOS" --model resnet50 --codec topk --steps-ratio topk=0.000142
good "steps ratio of one step" "^topk" compress --topo "$CLOS" --model resnet50 --codec topk --steps-ratio topk=0.000143
bad_says "batched rank beyond the bucket" "rank=100000 does not fit the 2574 x 2575 matrix" compress --topo "$CLOS" --model resnet50 \
    --codec powersgd-batched:rank=100000 --steps-ratio powersgd-batched=1
bad_says "top-k's indices beyond the bucket" "its 4-byte indices address 1 to 2^32 - 1" compress --topo "$CLOS" --model llama-7b \
    --codec topk --steps-ratio topk=1 --bucket 32GiB
# PowerSGD at a rank that compresses no tensor costs the plain all-reduce's
# passes (docs/MODEL.md: ResNet-50's 213.6 us on an H100), not products
good "powersgd at a rank beyond every tensor" "^powersgd:rank=100000  allreduce   171MiB     213.6us" compress \
    --topo "clos:down=8,up=1,bw=100Gbps" --model resnet50 --codec powersgd:rank=100000 --steps-ratio powersgd=1
bad_says "steps ratio above 1e6" "at most 1e6" compress --topo "$CLOS" --model resnet50 --codec topk --steps-ratio topk=1e300
bad_says "a negative steps ratio, named" "the ratio must be a number above 0 and at most 1e6 .*, or 'never'; got '-1'" compress --topo "$CLOS" --model resnet50 --codec topk --steps-ratio topk=-1
# a saved result's compress.steps_ratio entry, an object: what is wrong in it is named
"$T" compress --topo "$CLOS" --model resnet50 --codec powersgd:rank=4 --steps-ratio powersgd:rank=4=1.1 --format json --quiet >"$tmp/sr.json"
[ "$(grep -c '"ratio": 1.1$' "$tmp/sr.json")" -eq 1 ] || { echo "FAIL (sr.json: not one steps_ratio entry)"; fails=$((fails + 1)); }
sed 's/"ratio": 1.1$/"ratio": -1/' "$tmp/sr.json" >"$tmp/sr_neg.json"
bad_says "replay: a negative ratio in an object, named" "compress.steps_ratio\[0\]: the ratio must be a number above 0 and at most 1e6 .*, or 'never'; got -1$" replay "$tmp/sr_neg.json"
sed 's/"ratio": 1.1$/"ratio": -1, "steps": 3/' "$tmp/sr.json" >"$tmp/sr_key.json"
bad_says "replay: an unknown key in a ratio's object" "compress.steps_ratio\[0\]: unknown key 'steps': accepted are codec and ratio" replay "$tmp/sr_key.json"
sed 's/"ratio": 1.1$/"rato": 1.1/' "$tmp/sr.json" >"$tmp/sr_typo.json"
bad_says "replay: a misspelt ratio key" "compress.steps_ratio\[0\]: unknown key 'rato'" replay "$tmp/sr_typo.json"
sed 's/"ratio": 1.1$/"ratio": null/' "$tmp/sr.json" >"$tmp/sr_never.json"
"$T" replay "$tmp/sr_never.json" --quiet >/dev/null 2>&1 || { echo "FAIL (replay: a ratio of null, never, refused)"; fails=$((fails + 1)); }
# bf16 is the reference: its own ratio is 1 (2 was accepted and halved every speedup's reference)
bad_says "bf16's own ratio other than 1" "bf16's own is 1" compress --topo "$CLOS" --model resnet50 --codec bf16 --steps-ratio bf16=2
bad_says "bf16 never reaching the target" "bf16's own is 1" compress --topo "$CLOS" --model resnet50 --codec topk $R --steps-ratio bf16=never
good "bf16's own ratio of 1" "^bf16 " compress --topo "$CLOS" --model resnet50 --codec bf16 --steps-ratio bf16=1
good "a bf16 codec on another path takes its own ratio" "^bf16:path=ps" compress --topo "$CLOS" --model resnet50 --codec bf16:path=ps --steps-ratio bf16:path=ps=2
bad "steps ratio missing for a codec" compress --topo "$CLOS" --model resnet50 --codec topk --codec powersgd $R
bad "unknown accelerator" compress --topo "$CLOS" --model resnet50 --codec topk $R --accel a1000
bad "missing accuracy file" compress --topo "$CLOS" --model resnet50 --codec topk --accuracy "$tmp/none.json"
bad "accuracy file that is not one" compress --topo "$CLOS" --model resnet50 --codec topk --accuracy /etc/hostname
bad_says "accuracy file that is a directory" "a directory: give a file" compress --topo "$CLOS" --model resnet50 --codec topk --accuracy "$tmp"
bad "accuracy and steps ratio together" compress --topo "$CLOS" --model resnet50 --codec topk $R --accuracy x.json
bad "target with steps ratio" compress --topo "$CLOS" --model resnet50 --codec topk $R --target-acc 0.8
bad "target above 1" compress --topo "$CLOS" --model resnet50 --codec topk --target-acc 1.5 --accuracy x.json
bad "throughput for a codec not asked for" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput thc=5
bad "throughput of 0" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput topk=0
bad_says "throughput above 1e18B/s" "from 1bps to 1e18B/s" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput topk=1e300
bad_says "throughput above 1e18B/s, with a unit" "from 1bps to 1e18B/s" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput topk=1e300GB/s
# fp32 on its all-reduce does no codec work: a throughput for it was ignored
bad_says "throughput for fp32, which does no codec work" "does no codec work" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput fp32=5
good "throughput for fp32 on ps, whose servers add" "^fp32:path=ps" compress --topo "$CLOS" --model resnet50 --codec fp32:path=ps --steps-ratio fp32:path=ps=1 --codec-throughput fp32=5
# the same codec twice: refused, as a repeated steps ratio is (the last won)
bad_says "throughput given twice" "given twice" compress --topo "$CLOS" --model resnet50 --codec topk $R --codec-throughput topk=5 --codec-throughput topk=6
good "a codec's own throughput beside its kind's" "^topk" compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 $R --codec-throughput topk=5 --codec-throughput topk:ratio=0.01=6
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
good "help example runs" "faster than bf16" $ex

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
    # (the build's commit id, e.g. "696604d", is no formatted number)
    if ! [ -s "$tmp/o.csv" ] || grep -Eq "(^|,)$U(,|\$)" "$tmp/o.csv" ||
        grep -v '"commit": "' "$tmp/o.json" | grep -Eq "\": \"$U\""; then
        echo "FAIL: formatted number (or no output) in CSV or JSON of: $args"; fails=$((fails + 1))
    fi
done
bad "compress with a flow option without flow mode" compress --topo "$CLOS" --model resnet50 --codec topk $R --rate-cap 100Gbps
bad "compress with a target and steps ratios (conflicting flags)" compress --topo "$CLOS" --model resnet50 --codec topk $R --target-acc 0.5

# --- the text never contradicts itself: each verdict (the table's column,
# every clause of the summary under the regime map) is what the speedup and
# interval printed beside it say: above 1 faster, below 1 slower, holding 1
# indistinguishable ---
agrees() { # description, text file
    if ! python3 - "$2" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
def cols(hdr, labels):
    out, at = [], 0
    for l in labels:
        at = hdr.index(l, at)
        out.append(at)
        at += 1
    return out
def cell(row, starts, i):
    end = starts[i + 1] if i + 1 < len(starts) else len(row)
    return row[starts[i]:end].strip()
NUM = r"(-?[0-9.]+|inf)"
def verdict(c):
    if c == "-":
        return "never"
    m = re.fullmatch(NUM + r"x(?: \[" + NUM + ", " + NUM + r"\])?", c)
    assert m, "unreadable cell " + repr(c)
    v = float(m.group(1)); lo = float(m.group(2) or v); hi = float(m.group(3) or v)
    assert lo <= v <= hi, c
    return "faster" if lo > 1 else "slower" if hi < 1 else "indistinguishable"
i = next(k for k, l in enumerate(lines) if l.startswith("codec ") and "verdict vs bf16" in l)
hdr = lines[i]
st = cols(hdr, ["vs bf16", "vs fp32", "verdict vs bf16", "note"])
names = []
for row in lines[i + 2:]:
    if not row.strip():
        break
    name = row.split()[0]
    names.append(name)
    v, said = cell(row, st, 0), cell(row, st, 2)
    want = "baseline" if name == "bf16" else verdict(v)
    if want == "never":
        want = "-"
    assert said == want, "%s: table says %r beside %r" % (name, said, v)
if not any(l.startswith("regime map") for l in lines):
    sys.exit(0)
m = next(k for k, l in enumerate(lines) if l.startswith("regime map"))
hdr = lines[m + 1]
st = cols(hdr, ["bandwidth"] + names)
rows, bw = [], []
for row in lines[m + 3:]:
    if not row.strip():
        break
    bw.append(cell(row, st, 0))
    rows.append({n: verdict(cell(row, st, k + 1)) for k, n in enumerate(names)})
seen = 0
for l in lines[m + 3 + len(rows):]:
    name = l.split(" ")[0] if l.strip() else ""
    if name not in names:
        continue
    seen += 1
    text = l[len(name):].strip()
    if text.startswith("does not reach the target"):
        assert all(r[name] == "never" for r in rows), l
        continue
    nxt = 0
    for clause in text.split("; "):
        clause = re.sub(r" \(below about [^)]*\)$", "", clause)
        m2 = re.fullmatch(r"(faster than bf16|slower than bf16|indistinguishable from bf16) "
                          r"(?:at every bandwidth from (\S+) to (\S+)|from (\S+) to (\S+)|at (\S+))", clause)
        assert m2, "summary clause " + repr(clause)
        said = m2.group(1).split()[0]
        a, b = (m2.group(2), m2.group(3)) if m2.group(2) else (m2.group(4), m2.group(5)) if m2.group(4) else (m2.group(6), m2.group(6))
        a, b = bw.index(a), bw.index(b)
        assert a == nxt, "summary skips a bandwidth: " + l
        for r in range(a, b + 1):
            assert rows[r][name] == said, "%s at %s: summary says %s, the map's interval %s" % (name, bw[r], said, rows[r][name])
        nxt = b + 1
    assert nxt == len(rows), "summary does not cover every bandwidth: " + l
assert seen == len(names) - 1, "summary lines %d, codecs %d" % (seen, len(names))
PY
    then
        echo "FAIL (text contradicts itself: $1)"; cat "$2"; fails=$((fails + 1))
    fi
}
"$T" compress --topo "clos:down=8x8,up=1x8,bw=10Gbps,lat=1us" --model resnet50 --workers 64 --codec powersgd:rank=2 \
    --codec topk:ratio=0.01 --codec int8 --steps-ratio powersgd:rank=2=1 --steps-ratio topk:ratio=0.01=1 \
    --steps-ratio int8=1 --sweep-bw --quiet >"$tmp/given.txt" 2>&1
agrees "given ratios" "$tmp/given.txt"
# ratios chosen so that int8's speedup over bf16 lies within 1e-4 of 1 at
# the network's rate: two decimals would print 1.00x on the wrong side
"$T" compress --topo "$CLOS" --model resnet50 --workers 64 --codec int8 --steps-ratio int8=1 --format json \
    --quiet >"$tmp/it.json" 2>/dev/null
r=$(python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
it = {x["codec"]: x["iteration_s"] for x in j["results"]}
print(repr(it["bf16"] / it["int8"] / 1.00004))' "$tmp/it.json")
"$T" compress --topo "$CLOS" --model resnet50 --workers 64 --codec int8 --steps-ratio "int8=$r" --sweep-bw \
    --quiet >"$tmp/near.txt" 2>&1
agrees "a speedup of 1.00004" "$tmp/near.txt"
grep -q "1.0000[0-9]*x" "$tmp/near.txt" || { echo "FAIL: 1.00004x not printed with its digits"; fails=$((fails + 1)); }

# --- seeds and accuracy files: bad input ---
bad_says "seeds 0" "--seeds: 0 is out of range: expected 1 to 1000" train-accuracy --seeds 0
bad "negative seeds" train-accuracy --seeds -1
bad_says "seeds 0 for compress" "--seeds: 0 is out of range" compress --topo "$CLOS" --model resnet50 --codec topk --seeds 0
bad_says "seeds with given ratios" "training now" compress --topo "$CLOS" --model resnet50 --codec topk $R --seeds 3
printf '{"schema_version": 2, "dataset": "fashion-mnist",\n "model": "mlp",\n "workers": 8 8}\n' >"$tmp/syntax.json"
bad_says "accuracy file with a syntax error names the line" "line 3" compress --topo "$CLOS" --model resnet50 \
    --codec topk --accuracy "$tmp/syntax.json"
printf '{"schema_version": 2, "dataset": "fashion-mnist", "model": "mlp", "workers": 8, "batch": 8, "steps": 10,
 "lr": 0.05, "seed": 1, "seeds": 1, "train_subset": 0, "test_subset": 0, "bucket_bytes": 100,
 "curves": [{"codec": "bf16", "seed": 1, "points": [{"step": 0, "test_acc": 0.1, "train_loss": 2},
            {"step": 10, "test_acc": 1.2, "train_loss": 1}]}]}\n' >"$tmp/field.json"
bad_says "accuracy file with a bad field names it" "curves\[0\].points\[1\].test_acc" compress --topo "$CLOS" \
    --model resnet50 --codec topk --accuracy "$tmp/field.json"
sed 's/"test_acc": 1.2/"test_acc": 0.8/; s/"bf16"/"fp32"/' "$tmp/field.json" >"$tmp/nobf16.json"
bad_says "accuracy file without bf16" "no bf16" compress --topo "$CLOS" --model resnet50 --codec fp32 \
    --accuracy "$tmp/nobf16.json"

# --- accuracy proxies: bad input, and a proxy of another family than the model ---
# the help's defaults of the proxies' shapes are the ones a run takes (it
# said width 64, 4 heads, context 64 for chartf, whose defaults are 32, 2, 32)
"$T" train-accuracy --help >"$tmp/tahelp"
for m in cnn chartf; do
    "$T" train-accuracy --model $m --print-scenario >"$tmp/tasc"
    for k in width heads context layers hidden; do
        v=$(sed -n "s/^ *\"$k\": \([0-9]*\),*$/\1/p" "$tmp/tasc")
        h=$(grep -- "^ *--$k " "$tmp/tahelp" | sed -n "s/.*$m: [^[]*\[\([0-9]*\)\].*/\1/p")
        if [ -n "$h" ] && [ "$h" != "$v" ]; then
            echo "FAIL (train-accuracy --help): --$k of $m says $h, a run takes $v"; fails=$((fails + 1))
        fi
    done
done
# a shape of another proxy is refused (it was accepted and changed nothing);
# a saved scenario that holds them where moot (earlier versions wrote every
# shape key) is read, the keys dropped
bad_says "--width with mlp" "--width applies only with training the cnn or chartf proxy" train-accuracy --model mlp --width 16
bad_says "--hidden with chartf" "--hidden applies only with training the mlp proxy" train-accuracy --model chartf --hidden 16
bad_says "--heads with cnn" "--heads applies only with training the chartf proxy" train-accuracy --model cnn --heads 2
# the weight decay is AdamW's (chartf): the SGD proxies refuse it, and a
# saved scenario of one that holds it (earlier versions wrote it) drops it
bad_says "--weight-decay with mlp" "--weight-decay applies only with training the chartf proxy" train-accuracy --model mlp --weight-decay 0.1 --print-scenario
bad_says "--weight-decay with cnn" "--weight-decay applies only with training the chartf proxy" train-accuracy --model cnn --weight-decay 0.1 --print-scenario
good "--weight-decay with chartf" '"weight_decay": 0.1' train-accuracy --model chartf --weight-decay 0.1 --print-scenario
"$T" train-accuracy --model mlp --steps 3 --print-scenario >"$tmp/mlp_sc.json"
python3 - "$tmp/mlp_sc.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert "width" not in j["train"] and "heads" not in j["train"] and j["train"]["hidden"] == 128, j["train"]
assert "weight_decay" not in j["train"], j["train"]
j["train"].update({"width": 0, "layers": 0, "heads": 0, "context": 0, "weight_decay": 0.01})
json.dump(j, open(sys.argv[1], "w"))
PY
good "a saved mlp scenario with every shape key" '"hidden": 128' train-accuracy --scenario "$tmp/mlp_sc.json" --print-scenario
! grep -q '"width"\|"weight_decay"' "$tmp/out" || { echo "FAIL: a moot shape key of a saved scenario was kept"; fails=$((fails + 1)); }
bad_says "unknown proxy" "--model: expected one of mlp, cnn, chartf" train-accuracy --model resnet
bad_says "unknown proxy in compress" "expected one of mlp, cnn, chartf" compress --topo "$CLOS" --model resnet50 \
    --codec topk --proxy vgg
bad_says "a corpus that is not installed names its package" "install the Debian package fortunes" \
    train-accuracy --model chartf --data "$tmp/nothing-here"
bad_says "fashion-mnist not installed names its package" "dataset-fashion-mnist" \
    train-accuracy --model cnn --data "$tmp/nothing-here"
bad_says "more servers than workers" "servers" compress --topo "$CLOS" --model resnet50 \
    --codec thc:path=ps,servers=65 --steps-ratio thc:path=ps,servers=65=1
printf '{"schema_version": 3, "dataset": "fortunes", "model": "chartf", "workers": 8, "batch": 8, "steps": 10,
 "lr": 0.003, "seed": 1, "seeds": 2, "train_subset": 0, "test_subset": 0, "bucket_bytes": 100,
 "curves": [{"codec": "bf16", "seed": 1, "points": [{"step": 0, "test_acc": 0.01, "train_loss": 4},
                                                   {"step": 10, "test_acc": 0.30, "train_loss": 2}]},
            {"codec": "bf16", "seed": 2, "points": [{"step": 0, "test_acc": 0.01, "train_loss": 4},
                                                   {"step": 10, "test_acc": 0.31, "train_loss": 2}]},
            {"codec": "int8", "seed": 1, "points": [{"step": 0, "test_acc": 0.01, "train_loss": 4},
                                                   {"step": 10, "test_acc": 0.30, "train_loss": 2}]},
            {"codec": "int8", "seed": 2, "points": [{"step": 0, "test_acc": 0.01, "train_loss": 4},
                                                   {"step": 10, "test_acc": 0.31, "train_loss": 2}]}]}\n' \
    >"$tmp/chartf.json"
good "a language proxy for a vision model warns" "^warning .*chartf proxy, which stands for language models; resnet50 is a vision model (the cnn proxy" \
    compress --topo "$CLOS" --model resnet50 --codec int8 --accuracy "$tmp/chartf.json" --target-acc 0.2
good "the proxy is named" "proxy chartf on fortunes" compress --topo "$CLOS" --model resnet50 --codec int8 \
    --accuracy "$tmp/chartf.json" --target-acc 0.2
good "the proxy of the family does not warn" "proxy chartf on fortunes" compress --topo "$CLOS" --model llama-7b \
    --codec int8 --accuracy "$tmp/chartf.json" --target-acc 0.2
grep -q "^warning" "$tmp/out" && { echo "FAIL: a language proxy for llama-7b warned"; fails=$((fails + 1)); }
# compress has no --steps: where bf16 falls short of the target it names
# what compress takes (it said "or more --steps")
bad_says "a target bf16 does not reach, from a file" \
    "does not reach the target accuracy 0.5000 .*: give a lower --target-acc, or rerun train-accuracy with more --steps and pass its file with --accuracy$" \
    compress --topo "$CLOS" --model llama-7b --codec int8 --accuracy "$tmp/chartf.json" --target-acc 0.5
if [ -d /usr/share/datasets/fashion-mnist ]; then
    "$T" compress --topo "$CLOS" --model resnet50 --codec int8 --seeds 2 --target-acc 0.99 --print-scenario \
        >"$tmp/short.json" 2>"$tmp/err"
    python3 - "$tmp/short.json" <<'PY' || { echo "FAIL: a short training scenario"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
j["train"].update(steps=20, eval_every=10, train_subset=1000, test_subset=200)
json.dump(j, open(sys.argv[1], "w"))
PY
    bad_says "a target bf16 does not reach, trained now" \
        "does not reach the target accuracy 0.9900 .*: give a lower --target-acc, or more steps (train.steps in a --scenario file)$" \
        compress --scenario "$tmp/short.json" --quiet
fi

# --- accuracy file, end to end (short training runs on several seeds) ---
if [ -d /usr/share/datasets/fashion-mnist ]; then
    if "$T" train-accuracy --codec bf16 --codec topk:ratio=0.01 --steps 200 --eval-every 20 --seeds 3 \
        --train-subset 10000 --test-subset 1000 --target-acc 0.7 --out "$tmp/acc.json" >/dev/null 2>"$tmp/err"; then
        good "accuracy file" "time to acc" compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 \
            --accuracy "$tmp/acc.json"
        grep -q "target 0.7000 (given)" "$tmp/out" ||
            { echo "FAIL: compress does not use the file's given target"; fails=$((fails + 1)); }
        bad_says "codec missing from the accuracy file" "no curve for codec 'powersgd:rank=4'" compress --topo "$CLOS" \
            --model resnet50 --codec powersgd --accuracy "$tmp/acc.json"
        bad_says "a target bf16 does not reach" "the baseline (bf16) does not reach the target accuracy 0.9900" \
            compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 --accuracy "$tmp/acc.json" \
            --target-acc 0.99
        "$T" compress --topo "clos:down=8x8,up=1x8,bw=10Gbps,lat=1us" --model resnet50 --workers 64 \
            --codec topk:ratio=0.01 --accuracy "$tmp/acc.json" --sweep-bw --quiet >"$tmp/measured.txt" 2>&1
        agrees "measured ratios with intervals" "$tmp/measured.txt"
        grep -q "over 3 seeds (paired: the same seeds), 95% t intervals" "$tmp/measured.txt" ||
            { echo "FAIL: the header does not state the seeds and the interval"; fails=$((fails + 1)); }
        python3 - "$tmp/acc.json" <<'PY' || { echo "FAIL: the accuracy file's seeds and statistics"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["seeds"] == 3 and j["seed"] == 1
assert [c["seed"] for c in j["curves"]] == [1, 2, 3, 1, 2, 3]
st = j["statistics"]
assert st["reference"] == "bf16" and st["target"] == 0.7 and st["target_rule"] == "given" and st["level"] == 0.95
assert "t interval" in st["interval"]
assert st["joint_level"] == 0.95 and "Bonferroni" in st["joint"]  # one codec against bf16
b = st["codecs"][0]
assert b["codec"] == "bf16" and b["steps_ratio"] == 1 and b["runs"] == 3
assert b["steps_ratio_joint_lo"] == 1 and b["steps_ratio_joint_hi"] == 1
PY
        # a joint level the curves do not give is refused, naming the field
        python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["statistics"]["joint_level"] = 0.5; json.dump(j, open(sys.argv[2], "w"))' \
            "$tmp/acc.json" "$tmp/acc-joint.json"
        bad_says "an edited joint level" "statistics.joint_level" compress --topo "$CLOS" --model resnet50 \
            --codec topk:ratio=0.01 --accuracy "$tmp/acc-joint.json"
        # so is a codec's edited joint interval; a file written before the
        # joint intervals (without them) still reads
        python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["statistics"]["codecs"][1]["steps_ratio_joint_hi"] = 123.0; json.dump(j, open(sys.argv[2], "w"))' \
            "$tmp/acc.json" "$tmp/acc-jhi.json"
        bad_says "an edited joint interval" "statistics.codecs\\[1\\].steps_ratio_joint_hi: 123 does not follow" compress --topo "$CLOS" \
            --model resnet50 --codec topk:ratio=0.01 --accuracy "$tmp/acc-jhi.json"
        python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); [c.pop(k) for c in j["statistics"]["codecs"] for k in ("steps_ratio_joint_lo", "steps_ratio_joint_hi")]; json.dump(j, open(sys.argv[2], "w"))' \
            "$tmp/acc.json" "$tmp/acc-old.json"
        "$T" compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 --accuracy "$tmp/acc-old.json" \
            --quiet >/dev/null 2>"$tmp/err" ||
            { echo "FAIL: a file without the joint intervals is refused: $(cat "$tmp/err")"; fails=$((fails + 1)); }
        bad_says "train-accuracy: a target bf16 does not reach" "does not reach the target accuracy 0.9900 on seed" \
            train-accuracy --codec bf16 --steps 20 --eval-every 10 --seeds 2 --train-subset 1000 --test-subset 200 \
            --target-acc 0.99
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

# --- aggregation paths (docs/MODEL.md, "Aggregation paths") ---
PI="--steps-ratio int8=1"
PT="--steps-ratio thc=1"
bad_says "a path the codec does not take" "accepted paths for topk are allreduce" \
    compress --topo "$CLOS" --model resnet50 --codec topk:path=switch $R
bad_says "requant on a sparse codec" "accepted paths for topk are allreduce" \
    compress --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01,path=requant-ring $R
bad_says "an unknown path" "accepted paths for int8 are allreduce, requant-ring, requant-tree, ps, switch" \
    compress --topo "$CLOS" --model resnet50 --codec int8:path=tree $PI
bad_says "more servers than workers" "servers=16 but only 8 workers" \
    compress --topo "$CLOS" --model resnet50 --workers 8 --codec thc:path=ps,servers=16 $PT
bad_says "switch without reducing switches" "path=switch needs switches that reduce and multicast" \
    compress --topo "$CLOS" --model resnet50 --codec thc:path=switch $PT
good "switch on SHARP switches" "^thc:bits=4,path=switch  *switch x2" \
    compress --topo "$CLOS,sharp=1" --model resnet50 --codec thc:path=switch $PT
good "requant ring in the table" "^int8:path=requant-ring  *requant-ring " \
    compress --topo "$CLOS" --model resnet50 --codec int8:path=requant-ring $PI
good "ps servers stated" "^servers     thc:bits=4,path=ps,servers=4: 4 parameter servers colocated with workers, on endpoints 0, 16, 32, 48$" \
    compress --topo "$CLOS" --model resnet50 --codec thc:path=ps,servers=4 $PT
"$T" compress --topo "$CLOS" --model resnet50 --codec thc:path=ps,servers=4 --codec int8:path=requant-tree $PI $PT \
    --format json --quiet >"$tmp/paths.json" 2>"$tmp/err" || { echo "FAIL (paths json): $(cat "$tmp/err")"; fails=$((fails + 1)); }
python3 -c 'import json, sys
r = {x["codec"]: x for x in json.load(open(sys.argv[1]))["results"]}
ps, tree, bf = r["thc:bits=4,path=ps,servers=4"], r["int8:path=requant-tree"], r["bf16"]
assert ps["path"] == "ps" and ps["algo"] == "ps", ps
assert ps["servers"]["count"] == 4 and ps["servers"]["placement"] == "colocated", ps["servers"]
assert ps["servers"]["endpoints"] == [0, 16, 32, 48], ps["servers"]
assert tree["path"] == "requant-tree" and tree["algo"] == "dbtree" and tree["servers"] is None, tree
assert bf["path"] == "allreduce" and bf["servers"] is None, bf
assert abs(tree["bits_per_coord"] - 8.125) < 1e-4, tree["bits_per_coord"]  # 4 bytes a block of 256' "$tmp/paths.json" ||
    { echo "FAIL (paths json): path, servers or bits wrong"; fails=$((fails + 1)); }
"$T" compress --topo "$CLOS" --model resnet50 --codec int8:path=ps $PI --format csv --quiet >"$tmp/paths.csv" 2>"$tmp/err"
grep -q '^codec,collective,path,servers,' "$tmp/paths.csv" && grep -q '^int8:path=ps,allreduce,ps,64,' "$tmp/paths.csv" ||
    { echo "FAIL (paths csv): no path and servers columns"; head -3 "$tmp/paths.csv"; fails=$((fails + 1)); }

# --- multi-GPU nodes: the requant ring runs as NCCL runs its rings there,
# one per channel, each node left by all its NICs (nccl-ring), as the
# baseline's all-reduce can; at 10 Gb/s bytes decide: int8's 8.125 bits a
# coordinate against bf16's 16 take about half the time, and no longer than
# the bf16 baseline (a single ring in rank order crossed every node by one
# NIC: 10.8 s against the baseline's 2.4 s) ---
"$T" compress --preset dgx-h100:nodes=8 --equalize injection=10Gbps --model llama-7b \
    --codec int8:path=requant-ring --codec bf16:path=requant-ring --steps-ratio int8:path=requant-ring=1 \
    --steps-ratio bf16:path=requant-ring=1 --format json --quiet >"$tmp/dgx.json" 2>"$tmp/err" ||
    { echo "FAIL (requant on DGX nodes): $(cat "$tmp/err")"; fails=$((fails + 1)); }
"$T" compress --topo "$CLOS" --model llama-7b --codec int8:path=requant-ring --steps-ratio int8:path=requant-ring=1 \
    --format json --quiet >"$tmp/flat.json" 2>"$tmp/err" ||
    { echo "FAIL (requant on a flat Clos): $(cat "$tmp/err")"; fails=$((fails + 1)); }
python3 - "$tmp/dgx.json" "$tmp/flat.json" <<'PY' || { echo "FAIL (requant ring on multi-GPU nodes)"; fails=$((fails + 1)); }
import json, sys
r = {x["codec"]: x for x in json.load(open(sys.argv[1]))["results"]}
i8, b16, base = r["int8:path=requant-ring"], r["bf16:path=requant-ring"], r["bf16"]
assert i8["algo"] == "nccl-ring" and b16["algo"] == "nccl-ring", (i8["algo"], b16["algo"])
half = i8["collective_bytes_per_iteration"] / b16["collective_bytes_per_iteration"]
assert abs(half - 8.125 / 16) < 1e-3, half
speed = b16["network_s"] / i8["network_s"]
assert 1.8 < speed < 2.05, speed  # the bytes' 16 / 8.125, less the 226 buckets' latencies
assert i8["network_s"] <= base["network_s"], (i8["network_s"], base["network_s"])
assert i8["verdict"] == "faster", i8["verdict"]
flat = {x["codec"]: x for x in json.load(open(sys.argv[2]))["results"]}["int8:path=requant-ring"]
assert flat["algo"] == "ring", flat["algo"]  # one GPU a host: MPICH's ring, as before
PY

# --- the DP all-reduce: compress's policy is train's (--dp-algo, library by
# default). The tiny model's gradients are one bucket of 502,400 bf16 bytes
# in train (its first bucket closes at 1 MiB) and so are those of a custom
# model of 251,200 parameters in one layer in compress: on 8 DGX nodes the
# two commands time that one all-reduce alike, under every policy (to 1e-4:
# train counts bf16 elements, compress 4-byte ones, which moves the
# pipelined algorithms' chunk edges) ---
for a in library auto ring dbtree nccl-ring; do
    "$T" train --preset dgx-h100:nodes=8 --model "$(dirname "$0")/data/models/tiny.json" --dp 64 --dp-algo "$a" \
        --format json --quiet >"$tmp/tr.json" 2>"$tmp/err" &&
        "$T" compress --preset dgx-h100:nodes=8 --model params=251200,layers=1,flops=1T --codec bf16 \
            --steps-ratio bf16=1 --dp-algo "$a" --format json --quiet >"$tmp/co.json" 2>>"$tmp/err" ||
        { echo "FAIL (train and compress, --dp-algo $a): $(cat "$tmp/err")"; fails=$((fails + 1)); continue; }
    python3 - "$tmp/tr.json" "$tmp/co.json" "$a" <<'PY' || { echo "FAIL (train and compress time the DP all-reduce apart, --dp-algo $a)"; fails=$((fails + 1)); }
import json, sys
t, c, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
b = {x["codec"]: x for x in c["results"]}["bf16"]
assert c["inputs"]["dp_algo"] == a, c["inputs"]["dp_algo"]
assert t["comm"]["dp"]["count"] == 1 and t["comm"]["dp"]["bytes"] == 502400, t["comm"]["dp"]
assert b["collective_bytes_per_iteration"] == 502400 and c["inputs"]["buckets"] == 1, b
alg = t["algorithms"][0]["algo"]
assert b["algo"] == alg.split(":")[0], (b["algo"], alg)
x, y = t["comm"]["dp"]["time_s"], b["network_s"]
assert abs(x - y) <= 1e-4 * x, (a, x, y)
PY
done
# on gradients of 421 MB the library's choice on these nodes is NCCL's ring,
# in compress as in train
"$T" compress --preset dgx-h100:nodes=8 --model llama-7b --codec int8 --steps-ratio int8=1 --format json --quiet \
    >"$tmp/lib.json" 2>"$tmp/err" || { echo "FAIL (library on DGX): $(cat "$tmp/err")"; fails=$((fails + 1)); }
python3 -c 'import json, sys
r = {x["codec"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert r["bf16"]["algo"] == "nccl-ring" and r["fp32"]["algo"] == "nccl-ring", r["bf16"]["algo"]' "$tmp/lib.json" ||
    { echo "FAIL: the library policy does not take NCCL's ring for bf16 on DGX nodes"; fails=$((fails + 1)); }
good "the policy is stated" "^algorithms  .*--dp-algo library, what NCCL runs" compress --topo "$CLOS" --model resnet50 \
    --codec int8 $PI
good "a named algorithm is stated" "^algorithms  rhd: fp32, bf16, int8 (allreduce path: --dp-algo rhd)$" compress \
    --topo "$CLOS" --model resnet50 --codec int8 $PI --dp-algo rhd
bad_says "an unknown --dp-algo" "unknown algorithm .fastest." compress --topo "$CLOS" --model resnet50 --codec int8 $PI \
    --dp-algo fastest
bad_says "a --dp-algo that cannot carry a codec's collective" "--dp-algo dbtree for codec topk:ratio=0.01's allgather" compress \
    --topo "$CLOS" --model resnet50 --codec topk:ratio=0.01 $R --dp-algo dbtree

# --- the buckets as they are: a transformer's by parameter tensor as DDP
# fills them (llama-7b: 226 buckets, as train's DP all-reduces; the LM head,
# 32000 x 4096 float32 = 500 MiB, is the first, the embedding with the first
# block's last tensors the last and largest); a
# CNN's by whole equal layers ---
good "tensor buckets" "; 226 buckets of whole parameter tensors, as DDP fills them: the first 500MiB, the largest 500MiB, the last 500MiB (cap 25MiB, the first's 1MiB: " compress \
    --topo "$CLOS" --model llama-7b --codec int8 $PI
# as many as train's DP all-reduces of the same float32 gradients
n_train=$("$T" train --topo clos:hosts=64,radix=16,tiers=2 --model llama-7b --dp 64 --zero 0 --allow-oom --grad-dtype fp32 \
    --format json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["comm"]["dp"]["count"])')
[ "$n_train" = 226 ] || { echo "FAIL (train's DP all-reduces of llama-7b: $n_train, compress's buckets 226)"; fails=$((fails + 1)); }
good "the 1 MiB first bucket" "; 38 buckets of whole parameter tensors, as DDP fills them: the first 4.06MiB," compress \
    --topo "$CLOS" --model bert-large --codec int8 $PI
good "the 1 MiB first bucket whatever the cap" "the first 4.06MiB, .*cap 64MiB, the first's 1MiB" compress \
    --topo "$CLOS" --model bert-large --codec int8 $PI --bucket 64MiB
good "several layers a bucket" "; 4 buckets of 14 layers, 25.3MiB of float32 gradients each (the last: 12 layers, 21.7MiB; cap 25MiB: " \
    compress --topo "$CLOS" --model resnet50 --codec int8 $PI
"$T" compress --topo "$CLOS" --model llama-7b --codec int8 $PI --format json --quiet >"$tmp/bk.json" 2>"$tmp/err"
python3 -c 'import json, sys
i = json.load(open(sys.argv[1]))["inputs"]
assert i["buckets"] == 226 and i["bucket_unit"] == "tensor" and i["bucket_layers"] == 0, i
assert i["bucket_bytes"] == 25 * 2**20, i
head = 32000 * 4096 * 4 * i["model"]["params"] / 6738415616  # a tensor'"'"'s share of 4 x params
assert abs(i["bucket_first_bytes"] - head) < 1, i  # the LM head alone
assert i["bucket_max_bytes"] == max(i["bucket_first_bytes"], i["bucket_last_bytes"]), i' "$tmp/bk.json" ||
    { echo "FAIL: the JSON does not say what the buckets are"; fails=$((fails + 1)); }

# Refusals that depend on the scenario alone come with --print-scenario
# too (and at a sweep's validation), with the run's message, not only when
# the scenario runs.
P="--preset dgx-h100:nodes=2 --model resnet50 --codec int8 --print-scenario"
bad_says "bf16's own ratio other than 1, printed" "bf16's own is 1" compress $P --steps-ratio bf16=2
bad_says "a ratio given twice, printed" "--steps-ratio for codec 'int8' given twice" compress $P --steps-ratio int8=1 --steps-ratio int8=2
bad_says "a ratio for a codec not asked for, printed" "which is not among the codecs" compress $P --steps-ratio int8=1 --steps-ratio topk=2
bad_says "a ratio below one step, printed" "one step to the target" compress $P --steps-ratio int8=1e-9
bad_says "no ratio for a codec, printed" "no --steps-ratio for codec 'topk" compress $P --codec topk --steps-ratio int8=1
bad_says "a throughput given twice, printed" "--codec-throughput for codec 'int8' given twice" compress $P --steps-ratio int8=1 --codec-throughput int8=10 --codec-throughput int8=20
bad_says "a throughput for fp32, printed" "does no codec work" compress $P --steps-ratio int8=1 --codec-throughput fp32=10
bad_says "one worker, printed" "at least 2 workers" compress $P --steps-ratio int8=1 --workers 1
good "a valid one is printed" '"command": "compress"' compress $P --steps-ratio int8=1
cat >"$tmp/sw.json" <<EOF
{"scenario": {"command": "compress", "network": {"preset": ["dgx-h100:nodes=2"]},
 "compress": {"model": "resnet50", "steps_ratio": [{"codec": "int8", "ratio": 1}]}, "codecs": ["int8"]},
 "sweep": {"axes": {"compress.steps_ratio": [[{"codec": "int8", "ratio": 1}], [{"codec": "bf16", "ratio": 2}]]}}}
EOF
bad_says "a sweep's point with bf16's ratio other than 1" "point 1 .*bf16's own is 1" sweep "$tmp/sw.json" --out "$tmp/sw.jsonl" --quiet
if [ -s "$tmp/sw.jsonl" ]; then
    echo "FAIL (a sweep refused up front): it ran a point"
    fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails compress CLI check(s) failed"
    exit 1
fi
echo "compress CLI: all checks passed"
