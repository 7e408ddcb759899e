#!/usr/bin/env bash
# Renders benchseal's HTML replay report of a synthetic run in headless
# Chromium and writes a PNG, to look at the page as a person would.
# Installs Debian's chromium when it is missing. Offline: the page loads
# nothing, and Chromium's background networking is switched off.
# Usage: scripts/screenshot.sh [OUT.png]
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
mkdir -p "$(dirname "$out")"
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --window-size=1280,2400 --screenshot="$out" \
  "file://$work/report.html" 2>/dev/null
[ -s "$out" ] || { echo "no screenshot written"; exit 1; }
echo "wrote $out"
