#!/bin/sh
# astra_compare.sh - topocc against figures ASTRA-sim printed (docs/VALIDATION.md, "Against another
# simulator: ASTRA-sim"). Every tests/data/astra-sim/*.case holds one figure with its source and
# configuration, the topocc command that models it, and what separates the two models:
#   astra_ns   the figure ASTRA-sim printed (its analytical backend's cycles are ns)
#   topocc     the arguments of `topocc collective` (lines joined), run in formula, steps and flow
#   times      topocc's time is multiplied by this (chunks ASTRA-sim runs one after another where
#              the topocc algorithm takes no chunks=)
#   extra_ns   what ASTRA-sim charges and topocc does not (an awk expression, ns)
#   tol_ns     how far topocc x times + extra_ns may be from astra_ns (an awk expression, ns):
#              the truncations to whole ns in ASTRA-sim, or a bound given in the case's why: lines
# Usage: tests/astra_compare.sh TOPOCC_BINARY [--table]
#   --table: a row a case: ASTRA-sim, topocc formula, steps, flow, flow / ASTRA-sim, own, residual, tolerance
set -u
here=$(dirname "$0")
T=$1
table=0
[ "${2:-}" = --table ] && table=1
dir="$here/data/astra-sim"
field() { sed -n "s/^$1: //p" "$2"; }
fail=0 n=0
for f in "$dir"/*.case; do
    id=$(basename "$f" .case)
    astra=$(field astra_ns "$f")
    args=$(field topocc "$f" | tr '\n' ' ')
    times=$(field times "$f")
    extra=$(awk "BEGIN { printf \"%.10g\", $(field extra_ns "$f") }")
    tol=$(awk "BEGIN { printf \"%.10g\", $(field tol_ns "$f") }")
    if [ -z "$astra" ] || [ -z "$args" ] || [ -z "$times" ] || [ -z "$extra" ] || [ -z "$tol" ]; then
        echo "FAIL: $id: a field is missing"; fail=1; continue
    fi
    row="| $id | $astra"
    for m in formula steps flow; do
        # shellcheck disable=SC2086
        out=$("$T" collective $args --mode $m --format csv --quiet 2>&1) ||
            { echo "FAIL: $id ($m): topocc collective $args failed: $out"; fail=1; continue; }
        t=$(echo "$out" | awk -F, 'NR == 2 { print $5 }')
        verdict=$(awk -v t="$t" -v k="$times" -v e="$extra" -v a="$astra" -v tol="$tol" 'BEGIN {
            ns = t * 1e9 * k; d = ns + e - a
            printf "%.1f %.1f %s\n", ns, d, (d <= tol && -d <= tol) ? "ok" : "off" }')
        ns=$(echo "$verdict" | cut -d' ' -f1) d=$(echo "$verdict" | cut -d' ' -f2)
        n=$((n + 1))
        if [ "${verdict##* }" != ok ]; then
            echo "FAIL: $id ($m): topocc $ns ns + ASTRA-sim's own $extra ns is $d ns from ASTRA-sim's $astra ns" \
                "(tolerance $tol ns)"
            fail=1
        fi
        row="$row | $ns"
        [ $m = flow ] && row="$row | $(awk -v t="$ns" -v a="$astra" 'BEGIN { printf "%.3f", t / a }')"
        [ $m = flow ] && row="$row | $extra | $d | $tol |"
    done
    [ $table = 1 ] && echo "$row"
done
[ $n -gt 0 ] || { echo "FAIL: no case in $dir"; exit 1; }
[ $fail = 0 ] && [ $table = 0 ] && echo "topocc agrees with ASTRA-sim: $n (case, mode) pairs within their tolerances"
exit $fail
