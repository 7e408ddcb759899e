#!/usr/bin/env bash
# Replay of a 1,000,000-request synthetic run: wall time and peak RSS, next
# to the floor any reader pays (zstd -dc records.jsonl.zst | wc -l).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${REPLAY_BENCH_REQUESTS:-1000002}
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
if ! command -v zstd >/dev/null || [ ! -x /usr/bin/time ]; then
  apt-get install -y time zstd >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time zstd >/dev/null; }
fi
if ! "$BIN" synth --help >/dev/null 2>&1; then
  echo "replay bench: 'benchseal synth' is not available yet; skipped"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN" synth --requests "$N" --out "$work/run" >/dev/null
rec="$work/run/records.jsonl.zst"
[ -f "$rec" ] || rec="$work/run/records.jsonl"
floor() { if [[ "$rec" == *.zst ]]; then zstd -dc "$rec" | wc -l; else wc -l <"$rec"; fi; }
/usr/bin/time -f '%e %M' -o "$work/floor.t" bash -c "$(declare -f floor); rec='$rec'; floor" >/dev/null
/usr/bin/time -f '%e %M' -o "$work/replay.t" "$BIN" replay "$work/run" --output json >"$work/out.json"
read -r fs fk <"$work/floor.t"
read -r rs rk <"$work/replay.t"
echo "replay: $N requests: floor (zstd -dc | wc -l) ${fs}s; replay ${rs}s ($(awk -v a="$rs" -v b="$fs" 'BEGIN{printf "%.1f", a/b}')x floor), peak RSS $((rk / 1024)) MB"
