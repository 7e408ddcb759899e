#!/usr/bin/env bash
# Load-client limits against the simulator on this machine (loopback only):
#  1. open loop: raise the rate (and with it the in-flight streams and the
#     chunk rate) and report send-lag p99; the client's limit is the last
#     level whose p99 stays under 1 ms;
#  2. closed loop: raise the concurrency and report the chunk rate reached;
#  and in both, the client's CPU (user+sys, from getrusage via /usr/bin/time)
#  per 1,000 content chunks. The simulator runs as a separate process, so its
#  CPU is not counted, but it shares the machine's cores.
# Knobs: CAPTURE_BENCH_SECONDS (per level, default 4), CAPTURE_BENCH_RATES,
# CAPTURE_BENCH_CONCURRENCY, CAPTURE_BENCH_TOKENS (output tokens, default 64).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
SECS=${CAPTURE_BENCH_SECONDS:-4}
RATES=${CAPTURE_BENCH_RATES:-"50 100 200 400 800 1600"}
CONCS=${CAPTURE_BENCH_CONCURRENCY:-"16 64 256 1024"}
TOKENS=${CAPTURE_BENCH_TOKENS:-64}
work=$(mktemp -d)
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

. "$(dirname "$0")/../lib/cheapsim.sh"
start_cheap_sim

stats() { # run dir, client cpu seconds -> one line of numbers
  python3 - "$1" "$2" <<'EOF'
import json, sys
d, cpu = sys.argv[1], float(sys.argv[2])
recs = [json.loads(l) for l in open(d + "/records.jsonl")]
m = [r for r in recs if r["phase"] == "measure"]
lags = sorted(r["sent_ns"] - r["scheduled_ns"] for r in m if r.get("scheduled_ns") is not None)
chunks = sum(len(r["chunks_ns"]) for r in m)
ok = sum(r["status"] == "ok" for r in m)
t0 = min(r["sent_ns"] for r in m); t1 = max(r["end_ns"] for r in m)
ev = sorted([(r["sent_ns"], 1) for r in m] + [(r["end_ns"], -1) for r in m])
cur = peak = 0
for _, e in ev:
    cur += e; peak = max(peak, cur)
p = lambda q: lags[max(1, -(-q * len(lags) // 100)) - 1] / 1e3 if lags else float("nan")
print(f"{len(m):6d} {ok:6d} {peak:6d} {chunks / ((t1 - t0) / 1e9):10.0f} {p(50):9.1f} {p(99):9.1f} "
      f"{(lags[-1] / 1e3 if lags else float('nan')):9.1f} {cpu * 1e6 / max(chunks, 1) * 1000 / 1e3:9.1f}")
EOF
}

echo "capture bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), ${TOKENS} tokens/request at 1 ms/token, ${SECS}s per level"
echo "open loop (poisson)"
printf '%8s %6s %6s %6s %10s %9s %9s %9s %9s\n' rate/s sent ok peak chunks/s lag50µs lag99µs lagmaxµs cpums/1kc
for r in $RATES; do
  n=$(awk -v r="$r" -v s="$SECS" 'BEGIN{printf "%d", r*s}')
  /usr/bin/time -f '%U %S' -o "$work/t" "$BIN" capture --endpoint "$url" --model benchseal-sim --out "$work/rate-$r" \
    --rate "$r" --requests "$n" --input-tokens 16 --output-tokens "$TOKENS" --no-probe --progress never >/dev/null
  cpu=$(awk '{print $1+$2}' "$work/t")
  printf '%8s %s\n' "$r" "$(stats "$work/rate-$r" "$cpu")"
done
echo "closed loop"
printf '%8s %6s %6s %6s %10s %9s %9s %9s %9s\n' conc sent ok peak chunks/s - - - cpums/1kc
for c in $CONCS; do
  /usr/bin/time -f '%U %S' -o "$work/t" "$BIN" capture --endpoint "$url" --model benchseal-sim --out "$work/conc-$c" \
    --concurrency "$c" --duration "${SECS}s" --input-tokens 16 --output-tokens "$TOKENS" --no-probe --progress never >/dev/null
  cpu=$(awk '{print $1+$2}' "$work/t")
  printf '%8s %s\n' "$c" "$(stats "$work/conc-$c" "$cpu")"
done
