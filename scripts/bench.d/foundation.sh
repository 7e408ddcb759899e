#!/usr/bin/env bash
# Foundation large-run measurement: synthesize 1,000,000 requests, then
# validate them, printing wall time and peak RSS of each step. Peak RSS of
# validate must stay under 200 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -x /usr/bin/time ]; then
  apt-get update -qq >/dev/null && apt-get install -y -qq time >/dev/null
fi
REQUESTS=${REQUESTS:-1000002}
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -v "$@" 2>"$work/time.txt" >"$work/out.txt" || { cat "$work/out.txt" "$work/time.txt"; return 1; }
  cat "$work/out.txt"
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  printf '%-9s wall %s  peak RSS %d MB\n' "$label" "$wall" $((rss / 1024))
  echo "$rss" >"$work/rss.$label"
}

measure synth "$BIN" synth --out "$work/run" --requests "$REQUESTS"
printf '%-9s %s bytes records.jsonl.zst\n' size "$(stat -c %s "$work/run/records.jsonl.zst")"
measure validate "$BIN" validate "$work/run"
rss=$(cat "$work/rss.validate")
if [ "$rss" -ge $((200 * 1024)) ]; then
  echo "FAIL: validate peak RSS $((rss / 1024)) MB ≥ 200 MB" >&2
  exit 1
fi
