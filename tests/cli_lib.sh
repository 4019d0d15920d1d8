# cli_lib.sh - the checks the command-line test scripts share, sourced by
# them after they set T (the program), tmp (a scratch directory) and
# fails=0.
#   bad WHAT ARGS...          bad input: exit code 2, one line on stderr,
#                             nothing on stdout
#   bad_says WHAT PAT ARGS... the same, and stderr matches PAT
#   good WHAT PAT ARGS...     exit code 0, stdout matches PAT, stderr empty

bad() { # description, args...
    what="$1"; shift
    "$T" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$lines" -ne 1 ]; then
        echo "FAIL (bad input: $what): rc=$rc stderr lines=$lines stdout bytes=$(wc -c <"$tmp/out")"
        cat "$tmp/err"
        fails=$((fails + 1))
    fi
}

bad_says() { # description, pattern on stderr, args...
    what="$1"; pat="$2"; shift 2
    bad "$what" "$@"
    if ! grep -q -- "$pat" "$tmp/err"; then
        echo "FAIL (bad input: $what): stderr lacks '$pat'"
        cat "$tmp/err"
        fails=$((fails + 1))
    fi
}

good() { # description, pattern, args...
    what="$1"; pat="$2"; shift 2
    "$T" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q -- "$pat" "$tmp/out" || [ -s "$tmp/err" ]; then
        echo "FAIL ($what): rc=$rc, expected '$pat' on stdout"
        head -5 "$tmp/out" "$tmp/err"
        fails=$((fails + 1))
    fi
}
