#!/usr/bin/env bash
# Lays out every kind of HTML page benchseal writes (replay reports, compare
# and decide pages of signed bundles, each decide objective) in headless
# Chromium at 1280 px, 1920 px and A4 print width, fails naming each element
# past the page's edge, out of its box, cut off, overlapping a card, or a table
# column scrolled out of view, and writes a full-page PNG of each page at each
# width (internal/pagecheck: TestCheckerFindsEachDefect proves the checker
# finds each defect, TestBenchsealPagesFitEveryWidth checks the pages).
# Installs Debian's chromium when it is missing. Offline: the pages load
# nothing, and Chromium's background networking is switched off.
# Usage: scripts/screenshot.sh [OUTDIR]   (default bin/screenshots)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD/bin/screenshots}
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing chromium (Debian package)"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
mkdir -p "$out"
rm -f "$out"/*.png
BENCHSEAL_PAGECHECK=1 BENCHSEAL_CHROMIUM="$(command -v chromium)" BENCHSEAL_SCREENSHOTS="$(cd "$out" && pwd)" \
  ${GO:-go} test -count=1 -timeout 20m -v -run '^(TestCheckerFindsEachDefect|TestBenchsealPagesFitEveryWidth)$' ./internal/pagecheck
echo "screenshots: $out ($(ls "$out" | wc -l) PNGs)"
