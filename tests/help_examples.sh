#!/bin/sh
# help_examples.sh - every example of every help text runs: the lines
# under "example:" of 'topocc --help' and of 'topocc COMMAND --help' for
# each command 'topocc --help' lists, continuation lines joined and a
# trailing "   (...)" note dropped, in order (a later line may read what an
# earlier one wrote), each command's in a fresh directory that holds the
# repository's examples/. Every line must exit 0. Lines that do not start
# with "topocc" (mpirun) are not run. Three examples take 7 to 20 seconds
# each, so only their scenario is resolved (--print-scenario: every flag
# read and checked, the topologies built), not run: compare --default (the
# README's 4,096-endpoint comparison), failures (1,000 trials) and
# train-accuracy (trains on Fashion-MNIST, which it needs installed).
# usage: tests/help_examples.sh path/to/topocc
set -u -f
T="$1"
case "$T" in /*) ;; *) T="$(pwd)/$T" ;; esac
EX="$(cd "$(dirname "$0")/../examples" && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
runs=0

examples() { # the help text on stdin -> one example command a line
    sed -n '/^example:/,$p' | sed 1d | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' |
        sed -e 's/   (.*)$//' -e 's/^ *//' | grep '^topocc ' || true
}

cmds=$("$T" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$cmds" ] || { echo "FAIL: 'topocc --help' lists no commands"; exit 1; }
for c in - $cmds; do
    if [ "$c" = - ]; then
        "$T" --help >"$tmp/help" 2>&1
    else
        "$T" "$c" --help >"$tmp/help" 2>&1
    fi
    examples <"$tmp/help" >"$tmp/lines"
    if ! [ -s "$tmp/lines" ]; then
        echo "FAIL ($c --help): no example"
        fails=$((fails + 1))
        continue
    fi
    dir="$tmp/run.$c"
    mkdir "$dir" && ln -s "$EX" "$dir/examples"
    while IFS= read -r line; do
        case "$line" in
        "topocc compare --default"* | "topocc failures "* | "topocc train-accuracy "*) more=--print-scenario ;;
        *) more= ;;
        esac
        # shellcheck disable=SC2086
        set -- ${line#topocc } $more
        (cd "$dir" && "$T" "$@" >"$tmp/out" 2>"$tmp/err")
        rc=$?
        runs=$((runs + 1))
        if [ "$rc" -ne 0 ]; then
            echo "FAIL ($c --help): '$line'${more:+ ($more)} exits $rc"
            head -3 "$tmp/err"
            fails=$((fails + 1))
        fi
    done <"$tmp/lines"
done

if [ "$fails" -ne 0 ]; then
    echo "$fails help example(s) failed"
    exit 1
fi
echo "help examples passed ($runs run)"
