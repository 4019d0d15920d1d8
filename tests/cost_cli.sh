#!/bin/sh
# cost_cli.sh - the command line of --cost and --equalize cost=C (docs/MODEL.md
# "Equal cost", docs/PROFILES.md "Cost profiles"): bills of materials on topo
# and compare, the fabric speed each topology gets at equal cost, the record
# (JSON, tables, replay), and bad input: one line on stderr, exit code 2,
# nothing on stdout.
# usage: tests/cost_cli.sh path/to/topocc
set -u
T="$1"
D="$(cd "$(dirname "$0")" && pwd)/data/cost"
if [ ! -x "$T" ]; then
    echo "FAIL: no program at '$T'"
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"
CLOS="clos:down=8x8,up=1x8"
TORUS="torus:dims=4x4x4"

# --- bills of materials (hand counts: tests/test_cost.c) ---
good "topo: a 2-tier Clos's total" '^total .*\$501,600' topo "$CLOS" --cost cost-2026
good "topo: the leaves, 8 of 16 ports" 'level 1 (leaf), 16 ports .* 8 .*\$25,000' topo "$CLOS" --cost cost-2026
good "topo: a source per price" 'transceiver_400G.*https://' topo "$CLOS" --cost cost-2026
good "topo: an assumed price says so" 'nic .*\[.*\] assumed' topo "$CLOS" --cost cost-2026
good "topo: a 4x4x4 torus's total" '^total .*\$669,600' topo "$TORUS" --cost cost-2026
good "topo: a torus has 384 router ports" 'router ports in the endpoints.* 384 ' topo "$TORUS" --cost cost-2026
good "topo: a cost profile by its file" '^total .*\$1,440' topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$D/cost-test.json"
good "topo: a cost profile by name in --profiles" '^total .*\$2,260' topo clos:down=2x2,up=1x2,bw=200Gbps --cost cost-test --profiles "$D"
good "topo: between two speeds, interpolated" '^total .*\$1,928' topo clos:down=2x2,up=1x2,bw=150Gbps --cost cost-test --profiles "$D"
good "topo: equal cost sets the fabric links" 'every fabric link at 573.3 Gb/s' topo "$CLOS" --cost cost-2026 --equalize cost=700k
good "topo: JSON carries the bill of materials" '"total_usd": 501600' topo "$CLOS" --cost cost-2026 --format json
good "topo: no --cost, no bill of materials" 'oversubscription' topo "$CLOS"
if "$T" topo "$CLOS" | grep -q "bill of materials"; then
    echo "FAIL: topo without --cost prints a bill of materials"
    fails=$((fails + 1))
fi

# --- compare at equal cost ---
good "compare: the speed each topology gets" '^  B .*421.9 Gb/s per fabric link' \
    compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB:16MiB --cost cost-2026 --equalize cost=700k
good "compare: and the Clos's" '^  A .*573.3 Gb/s per fabric link' \
    compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --equalize cost=700000
good "compare: each bill of materials comes to the cost" 'bill of materials of B' \
    compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --equalize 'cost=$0.7M'
"$T" compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --equalize cost=700k \
    >"$tmp/eq.txt" 2>"$tmp/err"
if [ "$(grep -c '^total .*\$700,000' "$tmp/eq.txt")" -ne 2 ]; then
    echo "FAIL: compare at equal cost: not every total is \$700,000"
    fails=$((fails + 1))
fi
"$T" compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --equalize cost=700k \
    --format json >"$tmp/eq.json" 2>"$tmp/err"
for f in '"equalize_cost_usd": 700000' '"fabric_link_gbps": 573.26' '"fabric_link_gbps": 421.93' \
    '"cost_profile": "cost-2026"' '"cost-2026": {' '"equalized_to_usd": 700000' '"sources": \['; do
    if ! grep -q -- "$f" "$tmp/eq.json"; then
        echo "FAIL: compare --format json at equal cost lacks $f"
        fails=$((fails + 1))
    fi
done
"$T" replay "$tmp/eq.json" --format json >"$tmp/eq2.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/eq.json" "$tmp/eq2.json" || [ -s "$tmp/err" ]; then
    echo "FAIL: an equal-cost result does not replay to itself (its cost profile embedded)"
    fails=$((fails + 1))
fi
# a cost profile given by file replays from the scenario, the file gone
cp "$D/cost-test.json" "$tmp/cost-test.json"
"$T" topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$tmp/cost-test.json" --format json >"$tmp/f.json" 2>"$tmp/err"
rm "$tmp/cost-test.json"
"$T" replay "$tmp/f.json" --format json >"$tmp/f2.json" 2>>"$tmp/err"
if ! cmp -s "$tmp/f.json" "$tmp/f2.json" || [ -s "$tmp/err" ] || ! grep -q '"cost_profile": "cost-test"' "$tmp/f.json"; then
    echo "FAIL: a cost profile given by its file is not recorded by name and content"
    cat "$tmp/err"
    fails=$((fails + 1))
fi
"$T" compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --out-dir "$tmp/od" \
    >/dev/null 2>"$tmp/err"
if ! grep -q '^B,transceiver,' "$tmp/od/bill_of_materials.csv" 2>/dev/null || [ -s "$tmp/err" ]; then
    echo "FAIL: compare --out-dir lacks bill_of_materials.csv"
    fails=$((fails + 1))
fi

# --- bad input ---
bad_says "cost: unknown profile, listing the known" "cost-2026" topo "$CLOS" --cost cost-1999
bad_says "cost: a profile of another kind" "not a cost profile" topo "$CLOS" --cost dgx-h100
bad_says "cost: a file that is not there" "cannot read it" topo "$CLOS" --cost "$tmp/nope.json"
bad_says "cost: malformed entry, named with file and field" "cost-bad-item.json: field 'fields.nic_100G.item'" \
    topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$D/cost-bad-item.json"
bad_says "cost: an entry without its speed" "field 'fields.nic_100G.gbps'" \
    topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$D/cost-bad-gbps.json"
bad_says "cost: a speed without every price" "200 Gb/s has no dac price" \
    topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$D/cost-incomplete.json"
bad_says "cost: a price without a source" "has no source" \
    topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$D/cost-no-source.json"
mkdir "$tmp/negradix"
sed 's/"radix": 8,/"radix": -8,/' "$D/cost-test.json" >"$tmp/negradix/cost-test.json"
bad_says "cost: a negative switch radix, named with file and field" "cost-test.json: field 'fields.switch_100G_8p.radix' is -8: expected 2 to" \
    topo clos:down=2x2,up=1x2,bw=100Gbps --cost "$tmp/negradix/cost-test.json"
bad_says "cost: a link speed the profile does not price" "400 to 800 Gb/s" \
    topo clos:down=8x8,up=1x8,bw=100Gbps --cost cost-2026
bad_says "cost: a switch larger than the profile's" "128 or more ports" \
    topo clos:hosts=8192,radix=128,tiers=2,bw=800Gbps --cost cost-2026
bad_says "equal cost: below the cheapest, saying the range" '\$501,600 (at 400 Gb/s) to \$942,400 (at 800 Gb/s)' \
    compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --equalize cost=100k
bad_says "equal cost: within one range, not the other, naming the topology" "topology B" \
    compare --topo "$CLOS" --topo "$TORUS" --op allreduce --sizes 1MiB --cost cost-2026 --equalize cost=600k
bad_says "equal cost: above the dearest, saying the range" '\$942,400 (at 800 Gb/s)' \
    topo "$CLOS" --cost cost-2026 --equalize cost=2M
bad_says "equal cost: without a cost profile" "--cost" topo "$CLOS" --equalize cost=5M
bad_says "equal cost: not dollars" "expected dollars" topo "$CLOS" --cost cost-2026 --equalize cost=lots
bad "equal cost: zero" topo "$CLOS" --cost cost-2026 --equalize cost=0
# net_eff= is the share of the line rate the transport reaches: the ports
# are bought at the line rate (bw=), and equal cost gives that speed
good "topo: net_eff= prices the line rate" '^total .*\$501,600' topo "$CLOS,net_eff=0.5" --cost cost-2026
good "equal cost: net_eff= names the line rate" 'every fabric link at 484.7 Gb/s' topo "$CLOS,net_eff=0.5" --cost cost-2026 --equalize cost=600k
bad "equal cost: a unit that is not one" topo "$CLOS" --cost cost-2026 --equalize cost=5m
bad_says "equal cost: only topo and compare" "topo and compare" \
    collective --topo "$CLOS" --op allreduce --size 1MiB --equalize cost=5M
bad "cost: only topo and compare" collective --topo "$CLOS" --op allreduce --size 1MiB --cost cost-2026
bad_says "equalize: neither injection= nor cost=" "injection=RATE" topo "$CLOS" --equalize price=5M
bad_says "cost profile as a preset" "cost profile" topo --preset cost-2026
MDC="multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms"
bad_says "cost of a multidc" "multidc topology's long-haul links" topo "$MDC" --cost cost-2026
bad_says "equal cost with a multidc" "multidc" compare --topo "$MDC" --topo "$CLOS" --op allreduce --sizes 1MiB:1MiB --cost cost-2026 --equalize cost=1M

if [ "$fails" -ne 0 ]; then
    echo "$fails cost CLI check(s) failed"
    exit 1
fi
echo "cost CLI checks passed"
