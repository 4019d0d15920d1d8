#!/bin/sh
# library_install.sh - topocc as a library for other programs (docs/LIBRARY.md):
# `cmake --install` of the build into a fresh prefix gives the headers, the
# static and the shared library and a pkg-config file; the example program
# examples/library/collective.c compiles against them with pkg-config, links
# dynamically and statically, and gives, byte for byte, the JSON document the
# CLI gives for the same scenario; the shared library exports tc_ names
# alone; a program using the library's JSON (jansson's) links with
# pkg-config's flags; topocc/outcome.h names each command's outcome type;
# a codec without OpenBLAS is a status, not an exit; the pkg-config file
# still works once the prefix is moved; every public header compiles alone,
# in C and in C++.
# usage: tests/library_install.sh BUILD_DIR
set -u
B="$1"
S="$(cd "$(dirname "$0")/.." && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
CC=${CC:-cc}
CXX=${CXX:-c++}

if ! cmake --install "$B" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "FAIL: cmake --install"
    exit 1
fi
P="$tmp/prefix"
pc=$(find "$P" -name topocc.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no topocc.pc installed"; exit 1; }
for f in include/topocc/scenario.h include/topocc/outcome.h bin/topocc share/topocc/profiles/dgx-h100.json; do
    [ -e "$P/$f" ] || fail "not installed: $f"
done
lib=$(dirname "$(dirname "$pc")")
ls "$lib"/libtopocc.a > /dev/null 2>&1 || fail "no libtopocc.a beside the pkg-config file"
ls "$lib"/libtopocc.so.* > /dev/null 2>&1 || fail "no libtopocc.so beside the pkg-config file"

# The shared library exports the API alone (tc_...): no helper of its own
# files whose name could clash with one of the program's.
if command -v nm > /dev/null 2>&1; then
    for so in "$lib"/libtopocc.so.*.*.*; do
        [ -f "$so" ] || continue
        other=$(nm -D --defined-only "$so" | awk '{print $NF}' | grep -v '^tc_' | head -n 5 | tr '\n' ' ')
        [ -z "$other" ] || fail "libtopocc.so exports names outside tc_: $other"
        # and only what the public headers declare (cmake/version_script.cmake)
        nm -D --defined-only "$so" | awk '{print $NF}' | sort -u > "$tmp/exported"
        cat "$P"/include/topocc/*.h | grep -o 'tc_[A-Za-z0-9_]*' | sort -u > "$tmp/declared"
        inner=$(comm -23 "$tmp/exported" "$tmp/declared" | head -n 3 | tr '\n' ' ')
        [ -z "$inner" ] || fail "libtopocc.so exports names no public header declares: $inner"
    done
    # and the static library defines none either (a program's own fl_route
    # linked with libtopocc.a would be a second definition)
    other=$(nm -g --defined-only "$lib/libtopocc.a" | awk 'NF == 3 {print $3}' | grep -v '^tc_' | head -n 5 |
        tr '\n' ' ')
    [ -z "$other" ] || fail "libtopocc.a defines global names outside tc_: $other"
fi

PKG_CONFIG_PATH="$(dirname "$pc")"
export PKG_CONFIG_PATH
[ "$(pkg-config --modversion topocc)" = "$("$B/topocc" --version | sed -n 's/^topocc \([0-9.]*\).*/\1/p')" ] ||
    fail "pkg-config's version is not the program's"
ex="$S/examples/library/collective.c"
# shellcheck disable=SC2046
$CC -std=c17 -Wall -Wextra -Werror "$ex" $(pkg-config --cflags --libs topocc) -o "$tmp/dyn" ||
    fail "the example does not build against the shared library"
# shellcheck disable=SC2046
$CC -std=c17 -Wall -Wextra -Werror "$ex" $(pkg-config --cflags topocc) "$lib/libtopocc.a" \
    $(pkg-config --static --libs topocc | sed 's/-ltopocc//') -o "$tmp/static" ||
    fail "the example does not build against the static library"
if [ -x "$tmp/dyn" ]; then
    readelf -d "$tmp/dyn" | grep -q 'NEEDED.*libtopocc\.so' || fail "the dynamic example does not load libtopocc.so"
fi

# The JSON the library hands out is jansson's (json_t, freed with
# json_decref): a program that uses it builds with pkg-config's flags alone.
cat > "$tmp/json.c" <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <topocc/render.h>
int main(void)
{
    tc_err err;
    const char *flags[3][2] = {{"--topo", "torus:dims=4x4"}, {"--op", "allreduce"}, {"--size", "1MiB"}};
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    tc_status st = s ? TC_OK : TC_EINTERNAL;
    for (int i = 0; i < 3 && st == TC_OK; i++)
        st = tc_scenario_set_flag(s, flags[i][0], &flags[i][1], 1, &err);
    if (st == TC_OK)
        st = tc_scenario_resolve(s, &err);
    json_t *j = st == TC_OK ? tc_scenario_to_json(s) : NULL;
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    int ok = t && json_is_object(j);
    if (t)
        puts(t);
    free(t);
    json_decref(j);
    tc_scenario_free(s);
    return ok ? 0 : 1;
}
EOF2
# shellcheck disable=SC2046
$CC -std=c17 -Wall -Wextra -Werror "$tmp/json.c" $(pkg-config --cflags --libs topocc) -o "$tmp/json" ||
    fail "a program that frees the library's JSON (json_decref) does not link with pkg-config --libs topocc"
if [ -x "$tmp/json" ]; then
    LD_LIBRARY_PATH="$lib" "$tmp/json" | grep -q '"command":"collective"' || fail "tc_scenario_to_json through the library"
fi

# topocc/outcome.h's table of each command's outcome type is the one
# tc_scenario_run fills: every command listed, with the type its runner takes.
n=0
for c in TOPO COLLECTIVE COMPARE CONCURRENT FAILURES CLUSTER CODEC_BENCH TRAIN_ACCURACY COMPRESS TRAIN; do
    ty=$(sed -n "s/^ \*   TC_CMD_$c  *\(tc_[a-z_]*_out\) .*/\1/p" "$S/include/topocc/outcome.h")
    run=$(sed -n "/case TC_CMD_$c:/{n;s/.*(\(tc_[a-z_]*_out\) \*\*).*/\1/p;}" "$S/src/scenario/run.c")
    if [ -z "$ty" ] || [ "$ty" != "$run" ]; then
        fail "topocc/outcome.h gives TC_CMD_$c's outcome as '$ty'; tc_scenario_run fills a $run"
    fi
    n=$((n + 1))
done
[ "$(grep -c '^ \*   TC_CMD_' "$S/include/topocc/outcome.h")" = "$n" ] || fail "topocc/outcome.h lists other commands"

# Nothing exits the caller's process: a PowerSGD codec (OpenBLAS's
# products) where OpenBLAS cannot be opened (dlopen refused by a shim
# preloaded) is a status and its line, the program carries on.
cat > "$tmp/noblas.c" <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
void *dlopen(const char *file, int flags)
{
    void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    return file && strstr(file, "openblas") ? NULL : real(file, flags);
}
EOF2
cat > "$tmp/bench.c" <<'EOF2'
#include <stdio.h>
#include <topocc/scenario.h>
int main(void)
{
    tc_err err = {{0}};
    const char *flags[3][2] = {{"--codec", "powersgd:rank=4"}, {"--size", "64KiB"}, {"--seconds", "0.01"}};
    tc_scenario *s = tc_scenario_new(TC_CMD_CODEC_BENCH);
    tc_status st = s ? TC_OK : TC_EINTERNAL;
    for (int i = 0; i < 3 && st == TC_OK; i++)
        st = tc_scenario_set_flag(s, flags[i][0], &flags[i][1], 1, &err);
    if (st == TC_OK)
        st = tc_scenario_resolve(s, &err);
    tc_outcome o = {0};
    if (st == TC_OK)
        st = tc_scenario_run(s, NULL, &o, &err);
    printf("status %d: %s\n", (int)st, st == TC_OK ? "ran" : err.msg);
    tc_outcome_free(&o);
    tc_scenario_free(s);
    return 0;
}
EOF2
# shellcheck disable=SC2046
if $CC -shared -fPIC "$tmp/noblas.c" -o "$tmp/noblas.so" -ldl &&
    $CC -std=c17 -Wall -Wextra -Werror "$tmp/bench.c" $(pkg-config --cflags --libs topocc) -o "$tmp/bench"; then
    LD_PRELOAD="$tmp/noblas.so" LD_LIBRARY_PATH="$lib" "$tmp/bench" > "$tmp/bench.out" 2> "$tmp/bench.err"
    rc=$?
    { [ "$rc" = 0 ] && [ ! -s "$tmp/bench.err" ] && grep -q '^status 1: cannot load OpenBLAS' "$tmp/bench.out"; } ||
        fail "PowerSGD without OpenBLAS through the library: rc $rc, '$(cat "$tmp/bench.out" "$tmp/bench.err")'"
else
    fail "the OpenBLAS check's programs do not build"
fi

# The same scenario through the library and through the CLI: one document.
topo="clos:hosts=32,radix=8,tiers=2,bw=200Gbps,lat=400ns"
"$B/topocc" collective --topo "$topo" --op allreduce --size 4MiB --algo ring,rhd,dbtree --mode flow \
    --format json --quiet > "$tmp/cli.json" || fail "the CLI's run"
for v in dyn static; do
    [ -x "$tmp/$v" ] || continue
    if ! COLLECTIVE_JSON=1 LD_LIBRARY_PATH="$lib" "$tmp/$v" "$topo" 4MiB flow > "$tmp/$v.out"; then
        fail "the $v example's run"
        continue
    fi
    grep -q '^ring  *[0-9.e-]* s  busbw ' "$tmp/$v.out" || fail "the $v example prints no ring time"
    sed -n '/^{/,$p' "$tmp/$v.out" > "$tmp/$v.json"
    cmp -s "$tmp/$v.json" "$tmp/cli.json" || fail "the $v example's JSON is not the CLI's"
done
# docs/LIBRARY.md's example: the output it shows is what the example prints.
doc="$S/docs/LIBRARY.md"
sed -n '/^\$ \.\/collective$/,/^```$/p' "$doc" | sed '1d;$d' > "$tmp/doc.out"
LD_LIBRARY_PATH="$lib" "$tmp/dyn" > "$tmp/ex.out" 2>&1 || fail "the example's default run"
[ -s "$tmp/doc.out" ] || fail "no '\$ ./collective' output block in docs/LIBRARY.md"
cmp -s "$tmp/doc.out" "$tmp/ex.out" || { fail "docs/LIBRARY.md's output is not what the example prints:"; diff "$tmp/doc.out" "$tmp/ex.out"; }
sed -n '/^\$ \.\/collective clos:hosts=64,radix=16,tirs=2$/{n;p;}' "$doc" > "$tmp/doc.err"
LD_LIBRARY_PATH="$lib" "$tmp/dyn" clos:hosts=64,radix=16,tirs=2 > /dev/null 2> "$tmp/ex.err"
cmp -s "$tmp/doc.err" "$tmp/ex.err" || { fail "docs/LIBRARY.md's error line is not the example's:"; diff "$tmp/doc.err" "$tmp/ex.err"; }
# Its bad input as the CLI's: one line, exit 2.
LD_LIBRARY_PATH="$lib" "$tmp/dyn" "clos:hosts=32,radix=8,tirs=2" > /dev/null 2> "$tmp/err"
rc=$?
{ [ "$rc" = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q 'tirs' "$tmp/err"; } ||
    fail "a bad topology through the library: rc $rc, '$(cat "$tmp/err")'"

# The prefix moved: pkg-config's paths follow it.
mv "$P" "$tmp/moved"
PKG_CONFIG_PATH="$(dirname "$pc" | sed "s|^$P|$tmp/moved|")"
# shellcheck disable=SC2046
$CC -std=c17 "$ex" $(pkg-config --cflags --libs topocc) -o "$tmp/moved-ex" ||
    fail "the example does not build once the prefix is moved"

# Every installed header alone, in C17 (pedantic) and in C++.
for h in "$tmp"/moved/include/topocc/*.h; do
    n=$(basename "$h")
    printf '#include <topocc/%s>\n' "$n" > "$tmp/one.c"
    # shellcheck disable=SC2046
    $CC -std=c17 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags topocc) -fsyntax-only "$tmp/one.c" ||
        fail "topocc/$n does not compile alone in C"
    cp "$tmp/one.c" "$tmp/one.cc"
    # shellcheck disable=SC2046
    $CXX -std=c++17 -Wall -Wextra -Werror $(pkg-config --cflags topocc) -fsyntax-only "$tmp/one.cc" ||
        fail "topocc/$n does not compile alone in C++"
done
# C++: the declarations have C linkage (a C++ program links the C library).
printf '#include <topocc/scenario.h>\nint main() { tc_scenario *s = tc_scenario_new(TC_CMD_TOPO); tc_scenario_free(s); return 0; }\n' \
    > "$tmp/link.cc"
# shellcheck disable=SC2046
$CXX -std=c++17 "$tmp/link.cc" $(pkg-config --cflags --libs topocc) -o "$tmp/link" ||
    fail "a C++ program does not link against libtopocc"

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "library_install: all checks passed"
