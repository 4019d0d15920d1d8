#!/bin/sh
# limits_cli.sh - counts and sizes at their limits: 2^60 bytes evaluated,
# sizes and rank counts beyond the limits refused with one clear line, and
# a schedule of more than 2^32 transfers (ring all-reduce on 65,536 ranks)
# counted exactly in formula and steps.
# Usage: limits_cli.sh path/to/topocc
T="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
. "$(dirname "$0")/cli_lib.sh"

CLOS=clos:down=8x8,up=1x8,bw=400Gbps
# 2^60 bytes: the largest size, evaluated (a finite time, the size kept exactly)
good "2^60 bytes" '"bytes": 1.152921504606847e+18' collective --topo "$CLOS" --op allreduce --size 1152921504606846976 --format json
python3 - "$T" "$CLOS" <<'PYEOF' || fails=$((fails + 1))
import json, subprocess, sys, math
out = subprocess.run([sys.argv[1], 'collective', '--topo', sys.argv[2], '--op', 'allreduce', '--algo', 'ring',
                      '--size', '1152921504606846976', '--mode', 'steps', '--format', 'json'],
                     capture_output=True, text=True, check=True).stdout
d = json.loads(out)
assert d['bytes'] == 2 ** 60, d['bytes']
assert math.isfinite(d['time_s']) and d['time_s'] > 0, d['time_s']
# ring all-reduce moves 2 (p-1)/p of the bytes through every rank: the time is
# at least that over the injection bandwidth
assert d['time_s'] >= 2 * 63 / 64 * 2 ** 60 / 50e9 * (1 - 1e-12), d  # 400 Gb/s per endpoint
PYEOF
bad_says "above 2^60 bytes" "at most 2^60 bytes" collective --topo "$CLOS" --op allreduce --size 1152921504606846977
bad_says "2^64 bytes" "at most 2^60 bytes" collective --topo "$CLOS" --op allreduce --size 18446744073709551616
bad_says "1e30 bytes" "at most 2^60 bytes" collective --topo "$CLOS" --op allreduce --size 1e30
bad_says "2^31 ranks" "2147483648 ranks but the topology has only 64 endpoints" collective --topo "$CLOS" --op allreduce --size 1MiB --ranks 2147483648
bad_says "2^32 ranks" "out of range: expected 1 to 4294967295" collective --topo "$CLOS" --op allreduce --size 1MiB --ranks 4294967296
bad_says "a torus of 2^32 endpoints" "torus too large" topo "torus:dims=65536x65536"
bad_says "a Clos of 2^32 hosts" "clos too large" topo "clos:down=65536x65536,up=1x65536"

# more than 2^32 transfers: 2 x 65,535 steps of 65,536 transfers, exactly
for mode in formula steps; do
    good "ring on 65,536 ranks, $mode: exact transfers" '"transfers": 8589803520' \
        collective --topo "torus:dims=256x256" --op allreduce --algo ring --size 1GiB --mode $mode --format json
    grep -q '"steps": 131070' "$tmp/out" || { echo "FAIL ($mode: steps)"; fails=$((fails + 1)); }
done

if [ "$fails" -ne 0 ]; then
    echo "$fails limit checks failed"
    exit 1
fi
echo "limit checks passed"
