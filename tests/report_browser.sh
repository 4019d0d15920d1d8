#!/bin/sh
# report_browser.sh - reports open in a real browser: headless Chromium
# loads index.html from a file:// URL (offline: no server, no network) and
# the page's own script records on its body how many images rendered and
# how many errors there were; every image must render, with no error and no
# console error. A screenshot of the first report is kept as an artifact.
# Exit 77 (skipped) when Chromium is missing and cannot be installed.
# usage: tests/report_browser.sh path/to/topocc SCREENSHOT.png
set -u
T="$1"
shot="${2:-}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo -n"
    echo "report_browser: chromium is missing: installing it (apt-get install -y chromium)"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; } \
        >"$tmp/apt.log" 2>&1
    browser=$(command -v chromium || true)
fi
if [ -z "$browser" ]; then
    echo "SKIP: headless Chromium is needed (Debian package chromium) and could not be installed:"
    tail -3 "$tmp/apt.log" 2>/dev/null
    exit 77
fi

# load NAME DIR [EXTRA ARGS]: Chromium's DOM of DIR/index.html after load.
load() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
        --user-data-dir="$tmp/profile" --virtual-time-budget=5000 "$@"
}

# check WHAT DIR: every image rendered, no error on the page or the console.
check() {
    what="$1"
    dir=$(cd "$2" && pwd)
    n=$(grep -c '<img ' "$dir/index.html")
    load --dump-dom "file://$dir/index.html" >"$tmp/dom" 2>"$tmp/log"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL ($what): chromium exited with $rc"
        tail -5 "$tmp/log"
        fails=$((fails + 1))
        return
    fi
    if [ "$n" -lt 1 ] || ! grep -q "data-images-ok=\"$n/$n\"" "$tmp/dom"; then
        echo "FAIL ($what): not every one of the $n images rendered: $(grep -o '<body[^>]*>' "$tmp/dom")"
        fails=$((fails + 1))
    fi
    grep -q 'data-errors="0"' "$tmp/dom" || {
        echo "FAIL ($what): the page saw errors: $(grep -o '<body[^>]*>' "$tmp/dom")"
        fails=$((fails + 1))
    }
    # Chromium's own warnings (dbus, GPU) are not the page's: only console lines count.
    if grep 'CONSOLE' "$tmp/log" | grep -q -e ':ERROR:' -e 'Uncaught' -e 'Failed to load' ||
        grep -q 'Uncaught' "$tmp/log"; then
        echo "FAIL ($what): console errors:"
        grep -e 'CONSOLE' -e 'Uncaught' "$tmp/log" | head -5
        fails=$((fails + 1))
    fi
}

# A collective over sizes and algorithms, and a sweep's results.
"$T" collective --topo clos:down=8x8,up=1x8,bw=400Gbps,lat=1us --op allreduce --sizes 1KiB:64MiB --algo all \
    --out "$tmp/coll.json" --quiet >/dev/null || { echo "FAIL: collective"; exit 1; }
"$T" report "$tmp/coll.json" -o "$tmp/r-coll" --quiet || { echo "FAIL: report of a collective"; exit 1; }
"$T" report "$here/data/sweep-example.jsonl" -o "$tmp/r-sweep" --quiet || { echo "FAIL: report of a sweep"; exit 1; }
check "collective size sweep" "$tmp/r-coll"
check "sweep" "$tmp/r-sweep"

if [ -n "$shot" ]; then
    mkdir -p "$(dirname "$shot")"
    load --window-size=1280,2000 --screenshot="$shot" "file://$tmp/r-coll/index.html" >/dev/null 2>"$tmp/log"
    [ -s "$shot" ] || {
        echo "FAIL: no screenshot at $shot"
        fails=$((fails + 1))
    }
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails browser check(s) failed"
    exit 1
fi
echo "report in a browser: every image rendered, no error${shot:+ (screenshot: $shot)}"
