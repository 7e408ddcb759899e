#!/usr/bin/env bash
# Ratios of verify, pack and replay to the floor of standard tools doing the
# unavoidable work over the same bytes, measured back to back in this run
# (wall time and CPU = user + sys), REPEATS times:
#   verify  vs sha256sum over every blob + zstd -t over the zstd blobs
#   pack    vs zstd -dc RECORDS | zstd -3 | sha256sum
#   replay  vs zstd -dc RECORDS | wc -l
# Goals: each ratio <= 1.5 (pack and replay within half again the cost of
# the bare zstd pipeline over the same bytes). The figures are printed, not enforced:
# on a shared machine they move with the load, which is printed beside them.
# Env: RATIO_BENCH_REQUESTS (default 200004; a multiple of points x repeats
# = 6), REPEATS (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${RATIO_BENCH_REQUESTS:-200004}
REPEATS=${REPEATS:-3}
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
if ! command -v zstd >/dev/null || [ ! -x /usr/bin/time ]; then
  apt-get install -y time zstd >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time zstd >/dev/null; }
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BENCHSEAL_PASSWORD=bench SOURCE_DATE_EPOCH=1767225600

# timed NAME CMD...: runs CMD (stdout discarded) under /usr/bin/time and
# appends "wall cpu" to $work/NAME.
timed() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$work/t" "$@" >/dev/null 2>"$work/err" || {
    cat "$work/err"
    echo "ratio bench: $name failed"
    exit 1
  }
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/t" >>"$work/$name"
}

"$BIN" synth --requests "$N" --zstd --out "$work/run" >/dev/null
# Claims as a publisher writes them, so verify also recomputes them.
"$BIN" replay "$work/run" --write-claims "$work/run/claims.json" >/dev/null
mapfile -t records < <(find "$work/run" -name '*.jsonl.zst' | sort)
[ "${#records[@]}" -gt 0 ] || { echo "ratio bench: synth wrote no records.jsonl.zst"; exit 1; }
"$BIN" keygen --out "$work/key" >/dev/null
"$BIN" pack "$work/run" --out "$work/b" --key "$work/key.key" >/dev/null
blobs=("$work"/b/blobs/sha256/*)
zst=()
for f in "${blobs[@]}"; do
  [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' \n')" = "28b52ffd" ] && zst+=("$f")
done
export ZST="${zst[*]}"

for _ in $(seq "$REPEATS"); do
  timed verify "$BIN" verify "$work/b" --key "$work/key.pub"
  timed verify_floor sh -c 'sha256sum "$@" && zstd -t -q $ZST' sh "${blobs[@]}"
  rm -rf "$work/p"
  timed pack "$BIN" pack "$work/run" --out "$work/p"
  timed pack_floor sh -c 'zstd -dc "$@" | zstd -3 -q | sha256sum' sh "${records[@]}"
  timed replay "$BIN" replay "$work/run"
  timed replay_floor sh -c 'zstd -dc "$@" | wc -l' sh "${records[@]}"
done 2>/dev/null

echo "ratios: $N requests, $(du -cb "${records[@]}" | tail -1 | cut -f1) bytes of zstd records, $REPEATS back-to-back repeats, load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for c in verify pack replay; do
  paste "$work/$c" "$work/${c}_floor" | awk -v c="$c" '
    { printf "ratios: %-6s wall %6.2fs / floor %6.2fs = %4.2fx   cpu %6.2fs / floor %6.2fs = %4.2fx\n", c, $1, $3, ($3 > 0 ? $1 / $3 : 0), $2, $4, ($4 > 0 ? $2 / $4 : 0) }'
done
