#!/bin/sh
# validation_table.sh - docs/VALIDATION.md's table of published nccl-tests
# results is bench/nccl_validate.sh's output on this tree, line for line.
# Usage: tests/validation_table.sh TOPOCC_BINARY
set -u
here=$(dirname "$0")
T=$1
doc="$here/../docs/VALIDATION.md"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
sh "$here/../bench/nccl_validate.sh" "$(dirname "$T")" >"$tmp/now.md" || { echo "FAIL: nccl_validate.sh failed"; exit 1; }
sed -n '/^<!-- nccl_validate.sh output: begin -->$/,/^<!-- nccl_validate.sh output: end -->$/p' "$doc" |
    sed '1d;$d' >"$tmp/doc.md"
[ -s "$tmp/doc.md" ] || { echo "FAIL: no nccl_validate.sh block in docs/VALIDATION.md"; exit 1; }

# The cloud instances' presets carry the constants fitted on their
# platform's fit file (docs/PROFILES.md): the net_lat and net_eff each
# preset expands to are the table's row for its platform, and its profile
# names that fit file.
fail=0
norm() { # a spec or a row's keys -> "LL LL128 SIMPLE EFF", times in us
    echo "$1" | tr ',' '\n' | awk -F= '
        function us(t) { return t ~ /ns$/ ? t / 1000 : t ~ /ms$/ ? t * 1000 : t ~ /us$/ ? t + 0 : "?" }
        $1 == "net_lat" { n = split($2, a, "/"); if (n == 1) a[2] = a[3] = a[1]
                          lat = sprintf("%.6g %.6g %.6g", us(a[1]), us(a[2]), us(a[3])) }
        $1 == "net_eff" { eff = sprintf("%.6g", $2) }
        END { print (lat == "" ? "none" : lat), (eff == "" ? 1 : eff) }'
}
for pair in efa-p5:aws-p5 efa-p4d:aws-p4d gib-a3ultra:gcp-a3-ultra gib-a4:gcp-a4 tcpxo-a3mega:gcp-a3-mega; do
    pf=${pair%%:*} preset=${pair#*:}
    row=$(awk -F' [|] ' -v p="$pf" '$1 == "| " p { print; exit }' "$tmp/doc.md")
    [ -n "$row" ] || { echo "FAIL: docs/VALIDATION.md's table of fitted constants has no row $pf (preset $preset)"; fail=1; continue; }
    ff=$(echo "$row" | awk -F' [|] ' '{ print $2 }')
    keys=$(echo "$row" | awk -F' [|] ' '{ sub(/ [|]$/, "", $3); print $3 }')
    spec=$("$T" nccl-tests --preset "$preset:nodes=2" -b 8 -e 8 2>&1 | sed -n 's/^# topocc prediction: \([^ ]*\) .*/\1/p')
    if [ "$(norm "$spec")" != "$(norm "$keys")" ]; then
        echo "FAIL: preset $preset's calibration ($(norm "$spec")) is not docs/VALIDATION.md's $pf row, $keys ($(norm "$keys"))"
        fail=1
    fi
    grep -q "tests/data/nccl-tests/$ff.txt" "$here/../profiles/$preset.json" ||
        { echo "FAIL: profiles/$preset.json does not name the fit file of $pf, tests/data/nccl-tests/$ff.txt"; fail=1; }
done
[ $fail = 0 ] && echo "the cloud presets carry docs/VALIDATION.md's fitted constants"
if ! diff "$tmp/doc.md" "$tmp/now.md" >"$tmp/diff"; then
    echo "FAIL: docs/VALIDATION.md's nccl-tests table is not bench/nccl_validate.sh's output (rerun it and update the table):"
    cat "$tmp/diff"
    exit 1
fi
echo "VALIDATION.md's nccl-tests table is current ($(wc -l <"$tmp/now.md") lines)"
exit $fail
