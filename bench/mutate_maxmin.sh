#!/bin/sh
# mutate_maxmin.sh - do the max-min solver's tests notice when the tolerance
# of its re-solve by level, or a check of its local re-solve, is removed?
# (docs/VALIDATION.md). Not part of the
# test suite: it builds a copy of the source tree, a few minutes.
#
# The working tree (tracked and untracked files that git does not ignore) is
# copied to a temporary directory and built there once unchanged (the tests
# must pass); then, one at a time, a sed on src/eval/maxmin.c plants one
# mutation, test_maxmin and test_flow are rebuilt and run, and the mutation
# is "caught" when either fails. The mutations: the departure tolerance
# removed, a control that drops the arrival bound altogether (it shows
# that the tests exercise arrivals at all), and each of the local
# re-solve's three checks and its first set (the flows frozen on a changed
# link) removed in turn.
#
# usage: bench/mutate_maxmin.sh [SOURCE_DIR]
# Prints one line per mutation; exits 1 if any is not caught, 2 on a setup
# failure (the copy does not build or its tests fail unmutated).
set -u
SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mutate_maxmin.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
TREE="$WORK/src"
BUILD="$WORK/build"
TARGET=src/eval/maxmin.c
LOG="$WORK/log"

copy_tree() {
    mkdir -p "$TREE"
    if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
            tar cf - --null -T - --no-recursion --ignore-failed-read 2>/dev/null) | tar xf - -C "$TREE"
    else
        (cd "$SRC" && tar cf - --exclude='./build*' .) | tar xf - -C "$TREE"
    fi
}

# Rebuilds the two tests and runs them; 0 when both pass.
build_and_test() {
    cmake --build "$BUILD" -j2 --target test_maxmin test_flow >"$LOG" 2>&1 || return 3
    "$BUILD/test_maxmin" >>"$LOG" 2>&1 && "$BUILD/test_flow" >>"$LOG" 2>&1
}

copy_tree
cp "$TREE/$TARGET" "$WORK/maxmin.orig"
if ! cmake -S "$TREE" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >"$LOG" 2>&1 || ! build_and_test; then
    echo "mutate_maxmin: the unmutated copy does not build or pass its tests:" >&2
    tail -20 "$LOG" >&2
    exit 2
fi

missed=0
# name|sed expression on src/eval/maxmin.c
while IFS='|' read -r name expr; do
    sed "$expr" "$WORK/maxmin.orig" >"$TREE/$TARGET"
    if cmp -s "$WORK/maxmin.orig" "$TREE/$TARGET"; then
        echo "mutate_maxmin: the sed for '$name' changed nothing (source moved on?)" >&2
        exit 2
    fi
    build_and_test </dev/null
    rc=$?
    if [ $rc -eq 3 ]; then
        echo "mutate_maxmin: '$name' does not build:" >&2
        tail -20 "$LOG" >&2
        exit 2
    elif [ $rc -ne 0 ]; then
        echo "$name: caught ($(grep -m1 -E 'ERROR|FAILED' "$LOG" | cut -c1-150))"
    else
        echo "$name: NOT caught"
        missed=1
    fi
done <<'EOF'
departure tolerance removed (MM_DEPART_TOL 0)|s/^#define MM_DEPART_TOL .*/#define MM_DEPART_TOL 0.0/
control: arrival bound dropped|s/^\( *\)if (b < x0)$/\1if (0 \&\& b < x0)/
local: a kept bottleneck no longer full not seen|s/(slack > 0 \&\& slack > MM_LOCAL_TOL/(0 \&\& slack > MM_LOCAL_TOL/
local: a flow of S above a kept bottleneck flow not seen|s/T->smax > F->rate \* (1 + MM_LOCAL_TOL)/0/
local: a kept flow above the level where S froze not seen|s/^\( *\)if (T->lev == -INFINITY)$/\1if (1 || T->lev == -INFINITY)/
local: a kept bottleneck full within 1e-12 of the link's capacity, not of the flow's rate|s/slack > MM_LOCAL_TOL \* F->rate \* weight_on(m, F, g, l)/slack > MM_LOCAL_TOL * L->bw + 0 * weight_on(m, F, g, l)/
local: the flows frozen on a changed link not in the first set|s/^\( *\)const tc_mm_group \*G = \&m->groups\[m->dirty\[i\]\];$/&\n\1continue;/
EOF
exit $missed
