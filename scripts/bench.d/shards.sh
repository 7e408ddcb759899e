#!/usr/bin/env bash
# Sharded capture: the same seeded open-loop plan offered by 1, 2
# and 4 client processes (capture --shard I/N, started together with
# --start-at) against one simulator process on loopback, then merged. For
# each process count it reports the aggregate offered rate (the merged
# run's measured requests over the span of their scheduled times), each
# shard's send-lag p99, and the client CPU (user+sys, all shards). On a
# 2-core machine the shards and the simulator share the cores, so more
# shards mainly show how the work splits; on separate machines each shard
# brings its own cores.
# Knobs: SHARDS_BENCH_RATE (total req/s, default 1600), SHARDS_BENCH_SECONDS
# (default 4), SHARDS_BENCH_COUNTS (default "1 2 4"), SHARDS_BENCH_TOKENS (16).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
RATE=${SHARDS_BENCH_RATE:-1600}
SECS=${SHARDS_BENCH_SECONDS:-4}
COUNTS=${SHARDS_BENCH_COUNTS:-"1 2 4"}
TOKENS=${SHARDS_BENCH_TOKENS:-16}
work=$(mktemp -d)
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

. "$(dirname "$0")/../lib/cheapsim.sh"
start_cheap_sim
n=$(awk -v r="$RATE" -v s="$SECS" 'BEGIN{printf "%d", r*s}')

echo "shards bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), poisson ${RATE} req/s total, ${n} requests, ${TOKENS} tokens/request at 1 ms/token"
printf '%7s %9s %12s %10s %s\n' shards records 'offered/s' 'cpu s' 'send-lag p99 per shard (µs)'
for N in $COUNTS; do
  start=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%NZ)
  pids=()
  dirs=()
  for ((i = 0; i < N; i++)); do
    d="$work/n$N-s$i"
    dirs+=("$d")
    /usr/bin/time -f '%U %S' -o "$d.time" "$BIN" capture --endpoint "$url" --model benchseal-sim --out "$d" \
      --rate "$RATE" --requests "$n" --seed 7 --input-tokens 16 --output-tokens "$TOKENS" --no-probe --no-preflight \
      --progress never --shard "$i/$N" --start-at "$start" >/dev/null &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$BIN" merge "${dirs[@]}" --out "$work/n$N-merged" >/dev/null
  "$BIN" validate "$work/n$N-merged" >/dev/null
  cpu=$(cat "$work"/n$N-s*.time | awk '{s += $1 + $2} END {printf "%.2f", s}')
  python3 - "$work/n$N-merged" "$N" "$cpu" <<'PY'
import json, sys
d, n, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3]
recs = [json.loads(l) for l in open(d + "/records.jsonl")]
m = [r for r in recs if r["phase"] == "measure"]
s = sorted(r["scheduled_ns"] for r in m)
# Offered: requests over the span of their scheduled sends on the merged
# timeline (which carries the shards' clock uncertainty, here one machine).
offered = (len(s) - 1) / ((s[-1] - s[0]) / 1e9)
p99 = []
for i in range(n):
    lags = sorted(r["sent_ns"] - r["scheduled_ns"] for r in m if r["shard"] == i)
    p99.append(lags[max(1, -(-99 * len(lags) // 100)) - 1] / 1e3)
print(f"{n:7d} {len(m):9d} {offered:12.1f} {cpu:>10} " + " ".join(f"{x:.1f}" for x in p99))
PY
done
