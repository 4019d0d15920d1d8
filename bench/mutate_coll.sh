#!/bin/sh
# mutate_coll.sh - does the test suite notice a collective that is wrong for
# one rank count only, or a phase that declares a wrong fan-in?
# (docs/VALIDATION.md). Not part of the test suite: it builds a copy of the
# source tree, a few minutes. The solver's tolerances have their own script,
# bench/mutate_maxmin.sh.
#
# The working tree (tracked and untracked files that git does not ignore) is
# copied to a temporary directory and built there once unchanged (the tests
# must pass); then, one at a time, a sed plants one bug in one file of
# src/coll/, test_coll_check and test_coll_faults are rebuilt and run, and
# the mutation is "caught" when either fails.
#
# usage: bench/mutate_coll.sh [SOURCE_DIR]
# Prints one line per mutation; exits 1 if any is not caught, 2 on a setup
# failure (the copy does not build or its tests fail unmutated).
set -u
SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mutate_coll.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
TREE="$WORK/src"
BUILD="$WORK/build"
LOG="$WORK/log"

mkdir -p "$TREE"
(cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
    tar cf - --null -T - --no-recursion --ignore-failed-read 2>/dev/null) | tar xf - -C "$TREE"

build_and_test() {
    cmake --build "$BUILD" -j2 --target test_coll_check test_coll_faults >"$LOG" 2>&1 || return 3
    "$BUILD/test_coll_check" >>"$LOG" 2>&1 && "$BUILD/test_coll_faults" >>"$LOG" 2>&1
}

if ! cmake -S "$TREE" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >"$LOG" 2>&1 || ! build_and_test; then
    echo "mutate_coll: the unmutated copy does not build or pass its tests:" >&2
    tail -20 "$LOG" >&2
    exit 2
fi

missed=0
# name|file|sed expression
while IFS='|' read -r name file expr; do
    cp "$TREE/$file" "$WORK/orig"
    sed "$expr" "$WORK/orig" >"$TREE/$file"
    if cmp -s "$WORK/orig" "$TREE/$file"; then
        echo "mutate_coll: the sed for '$name' changed nothing (source moved on?)" >&2
        exit 2
    fi
    build_and_test </dev/null
    rc=$?
    cp "$WORK/orig" "$TREE/$file"
    if [ $rc -eq 3 ]; then
        echo "mutate_coll: '$name' does not build:" >&2
        tail -20 "$LOG" >&2
        exit 2
    elif [ $rc -ne 0 ]; then
        echo "$name: caught ($(grep -m1 -E 'ERROR|FAILED' "$LOG" | cut -c1-150))"
    else
        echo "$name: NOT caught"
        missed=1
    fi
done <<'MUTATIONS'
rd: wrong partner at the mask-4 step, p = 256 only|src/coll/rd.c|s/tc_xfers_add(x, r, r ^ m, m \* s->blk_bytes, false);/tc_xfers_add(x, r, (s->req.p == 256 \&\& m == 4) ? (r ^ m ^ 1) : (r ^ m), m * s->blk_bytes, false);/
swing: wrong partner of rank 3, p >= 512 only|src/coll/swing.c|s/tc_xfers_add(x, r, q, bytes, rs);/tc_xfers_add(x, r, (s->req.p >= 512 \&\& r == 3) ? (q ^ 1) : q, bytes, rs);/
direct: fan-in declared one too many, p = 37 only|src/coll/direct.c|s/ph->fanin = fanin;/ph->fanin = fanin + (p == 37);/
MUTATIONS
exit $missed
