#!/usr/bin/env bash
# Renders benchseal's HTML pages — the replay report of a synthetic run,
# and the compare and decide pages of two synthetic runs — in headless
# Chromium and writes PNGs, to look at them as a person would.
# Installs Debian's chromium when it is missing. Offline: the page loads
# nothing, and Chromium's background networking is switched off.
# Usage: scripts/screenshot.sh [OUT.png]   (compare and decide go next to
# it as OUT-compare.png and OUT-decide.png)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD/bin/report.png}
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing chromium (Debian package)"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
make build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
./bin/benchseal synth --out "$work/run" --mode rate >/dev/null
./bin/benchseal replay "$work/run" --sweep-slo ttft=50ms..1s:8 --output html >"$work/report.html"
./bin/benchseal synth --out "$work/b" --mode rate --seed 2 --repeats 4 >/dev/null
./bin/benchseal synth --out "$work/c" --mode rate --seed 3 --repeats 4 >/dev/null
./bin/benchseal compare "$work/b" "$work/c" --allow-different-workload --output html >"$work/compare.html"
./bin/benchseal decide "$work/b" "$work/c" --allow-different-workload --objective max-goodput --output html >"$work/decide.html"
mkdir -p "$(dirname "$out")"
shot() { # page, png, height
  rm -f "$2"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --window-size=1280,"$3" --screenshot="$2" \
    "file://$work/$1" 2>/dev/null
  [ -s "$2" ] || { echo "no screenshot written for $1"; exit 1; }
  echo "wrote $2"
}
shot report.html "$out" 2400
shot compare.html "${out%.png}-compare.png" 4000
shot decide.html "${out%.png}-decide.png" 2600
