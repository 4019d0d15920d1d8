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
if ! diff "$tmp/doc.md" "$tmp/now.md" >"$tmp/diff"; then
    echo "FAIL: docs/VALIDATION.md's nccl-tests table is not bench/nccl_validate.sh's output (rerun it and update the table):"
    cat "$tmp/diff"
    exit 1
fi
echo "VALIDATION.md's nccl-tests table is current ($(wc -l <"$tmp/now.md") lines)"
