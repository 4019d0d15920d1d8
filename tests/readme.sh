#!/bin/sh
# readme.sh - README.md's examples are real: every output block is what its
# command prints now.
#
# In README.md, inside ``` fences, a line beginning with "$ " is a command
# (continued by lines ending in "\"); the lines after it, up to the next
# "$ " line or the closing fence, are its output. A blank line before the
# next command is a separator, not output. Commands run from the repository
# root, as written, with build/topocc replaced by BUILD_DIR/topocc. Only two
# kinds are run: build/topocc ... and cat examples/FILE (an example input
# file); anything else is refused, as are shell operators (; | & < > ` $).
# A command's output is its standard output; its standard error is added
# only when it fails (an example of an error message).
#
# usage: tests/readme.sh --check BUILD_DIR   exit 1 and print a diff when a block differs
#        tests/readme.sh --write BUILD_DIR   rewrite README.md with fresh outputs (atomically)
#        README=path overrides the file (tests of this script).
set -u
usage() {
    echo "usage: tests/readme.sh --check|--write BUILD_DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
mode=$1
case "$mode" in --check | --write) ;; *) usage ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$2" 2>/dev/null && pwd) || {
    echo "readme.sh: no build directory '$2'" >&2
    exit 2
}
[ -x "$build/topocc" ] || {
    echo "readme.sh: no $build/topocc: build first" >&2
    exit 2
}
readme=${README:-$root/README.md}
[ -f "$readme" ] || {
    echo "readme.sh: no $readme" >&2
    exit 2
}
new="$readme.tmp.$$"
err=$(mktemp)
trap 'rm -f "$new" "$err"' EXIT
cd "$root" || exit 2

LC_ALL=C awk -v build="$build" -v errf="$err" -v file="$readme" '
function fail(msg) {
    printf "%s:%d: %s\n", file, cmd_line, msg > "/dev/stderr"
    failed = 1
    exit 2
}
# The command as sh will run it: one line, build/topocc replaced.
function check(cmd,    words, n) {
    if (cmd ~ /[;|&<>`$]/)
        fail("refusing to run \"" cmd "\": no shell operators or variables in README commands")
    n = split(cmd, words, " ")
    if (words[1] == "build/topocc")
        return build "/topocc" substr(cmd, length("build/topocc") + 1)
    if (words[1] == "cat" && n == 2 && words[2] ~ /^examples\// && words[2] !~ /\.\./)
        return cmd
    fail("refusing to run \"" cmd "\": only build/topocc ... and cat examples/FILE are run")
}
# Runs the pending command and prints its output.
function run(    sh, line, rc, k, nout, out) {
    sh = check(cmd) " 2>\"" errf "\"; rc=$?; [ $rc -eq 0 ] || cat \"" errf "\"; echo \"@@readme-rc=$rc\""
    nout = 0
    while ((sh | getline line) > 0) {
        k = match(line, /@@readme-rc=[0-9]+$/)
        if (k) {
            rc = substr(line, k + length("@@readme-rc="))
            line = substr(line, 1, k - 1)
            if (line == "")
                break
        }
        out[++nout] = line
        if (k)
            break
    }
    close(sh)
    if (rc == "")
        fail("could not run \"" cmd "\"")
    if (rc + 0 != 0 && rc + 0 != 2)
        printf "%s:%d: note: \"%s\" exits with %s\n", file, cmd_line, cmd, rc > "/dev/stderr"
    while (nout > 0 && out[nout] == "")
        nout--
    for (k = 1; k <= nout; k++)
        print out[k]
    cmd = ""
}
BEGIN { infence = 0; cmd = ""; cont = 0 }
{
    if (cont) {                          # a continuation line of the command
        print
        line = $0
        cont = sub(/\\$/, "", line)
        cmd = cmd " " line
        if (!cont)
            pending = 1
        next
    }
    if ($0 ~ /^```/) {
        if (infence && pending) {
            run()
            pending = 0
        }
        infence = !infence
        print
        next
    }
    if (infence && $0 ~ /^\$ /) {
        if (pending) {
            run()
            print ""                     # the separator between two commands
        }
        print
        cmd_line = NR
        line = substr($0, 3)
        cont = sub(/\\$/, "", line)
        cmd = line
        pending = !cont
        next
    }
    if (!pending)                        # outside commands: kept as it is
        print
}
END {
    if (failed)
        exit 2
    if (infence || cont)
        fail("a fence or a command is not closed at the end of the file")
}
' "$readme" >"$new" || exit 2

if [ "$mode" = --write ]; then
    if cmp -s "$readme" "$new"; then
        echo "readme.sh: $readme is up to date"
    else
        mv "$new" "$readme" && echo "readme.sh: rewrote the output blocks of $readme"
    fi
    exit 0
fi
if ! cmp -s "$readme" "$new"; then
    echo "readme.sh: output blocks of $readme differ from what their commands print now (tests/readme.sh --write $2, or make readme):"
    diff -u "$readme" "$new" | sed "s|$new|$readme (fresh)|"
    exit 1
fi
echo "readme.sh: every output block of $readme is current"
